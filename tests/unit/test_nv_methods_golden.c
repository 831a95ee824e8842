/* Golden tests of the NV method offsets and fields, written by hand from
 * NVIDIA's class headers, not from hcq's tables: offsets and bit ranges
 * (hi:lo) as open-gpu-kernel-modules 580.95.05 src/common/sdk/nvidia/inc/
 * class/clc86f.h (HOPPER_CHANNEL_GPFIFO_A) and open-gpu-doc classes/
 * compute/clcbc0.h (HOPPER_COMPUTE_A), classes/dma-copy/clc8b5.h
 * (HOPPER_DMA_COPY_A) write them. Checked: the methods the encoders send
 * (nv_hw.h), the field constants they build values from, and the decoders'
 * field table (nv_method_fields), so a wrong row cannot pass through the
 * encoder, the mock and the decoder together. */
#include <criterion/criterion.h>

#include "base/base.h"
#include "drivers/nv/nv.h"

/* ** method offsets */
Test(nv_methods_golden, offsets_as_the_class_headers_give_them)
{
    /* clc86f.h */
    cr_assert_eq(NV_HOST_SET_OBJECT, 0x0000);
    cr_assert_eq(NV_HOST_SEM_ADDR_LO, 0x005c);
    cr_assert_eq(NV_HOST_SEM_ADDR_HI, 0x0060);
    cr_assert_eq(NV_HOST_SEM_PAYLOAD_LO, 0x0064);
    cr_assert_eq(NV_HOST_SEM_PAYLOAD_HI, 0x0068);
    cr_assert_eq(NV_HOST_SEM_EXECUTE, 0x006c);
    cr_assert_eq(NV_HOST_WFI, 0x0078);
    /* clcbc0.h */
    cr_assert_eq(NV_COMPUTE_WAIT_FOR_IDLE, 0x0110);
    cr_assert_eq(NV_COMPUTE_LINE_LENGTH_IN, 0x0180);
    cr_assert_eq(NV_COMPUTE_LINE_COUNT, 0x0184);
    cr_assert_eq(NV_COMPUTE_OFFSET_OUT_UPPER, 0x0188);
    cr_assert_eq(NV_COMPUTE_OFFSET_OUT, 0x018c);
    cr_assert_eq(NV_COMPUTE_LAUNCH_DMA, 0x01b0);
    cr_assert_eq(NV_COMPUTE_LOAD_INLINE_DATA, 0x01b4);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A, 0x02a0);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B, 0x02a4);
    cr_assert_eq(NV_COMPUTE_SEND_PCAS_A, 0x02b4);
    cr_assert_eq(NV_COMPUTE_SEND_SIGNALING_PCAS2_B, 0x02c0);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, 0x02e4);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B, 0x02e8);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C, 0x02ec);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A, 0x0790);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B, 0x0794);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A, 0x07b0);
    cr_assert_eq(NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B, 0x07b4);
    cr_assert_eq(NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, 0x1698);
    /* clc8b5.h */
    cr_assert_eq(NV_COPY_SET_SEMAPHORE_A, 0x0240);
    cr_assert_eq(NV_COPY_SET_SEMAPHORE_B, 0x0244);
    cr_assert_eq(NV_COPY_SET_SEMAPHORE_PAYLOAD, 0x0248);
    cr_assert_eq(NV_COPY_SET_SEMAPHORE_PAYLOAD_UPPER, 0x024c);
    cr_assert_eq(NV_COPY_LAUNCH_DMA, 0x0300);
    cr_assert_eq(NV_COPY_OFFSET_IN_UPPER, 0x0400);
    cr_assert_eq(NV_COPY_OFFSET_IN_LOWER, 0x0404);
    cr_assert_eq(NV_COPY_OFFSET_OUT_UPPER, 0x0408);
    cr_assert_eq(NV_COPY_OFFSET_OUT_LOWER, 0x040c);
    cr_assert_eq(NV_COPY_PITCH_IN, 0x0410);
    cr_assert_eq(NV_COPY_PITCH_OUT, 0x0414);
    cr_assert_eq(NV_COPY_LINE_LENGTH_IN, 0x0418);
    cr_assert_eq(NV_COPY_LINE_COUNT, 0x041c);
}

/* a field's mask from its documented (hi:lo) */
#define DOC_MASK(hi, lo) ((uint32_t)((((uint64_t)1 << ((hi) - (lo) + 1)) - 1) << (lo)))

/* ** the constants the encoders build method data from */
Test(nv_methods_golden, field_constants_lie_where_the_headers_put_them)
{
    /* NVC86F_SEM_EXECUTE: OPERATION 2:0 (ACQ_STRICT_GEQ 2 is clc56f.h's,
     * ACQ_CIRC_GEQ 3), ACQUIRE_SWITCH_TSG 12:12, RELEASE_WFI 20:20,
     * PAYLOAD_SIZE 24:24 (64BIT 1), RELEASE_TIMESTAMP 25:25 */
    cr_assert_eq(NV_SEM_EXECUTE_OPERATION(0xffffffffu), DOC_MASK(2, 0));
    cr_assert_eq(NV_SEM_OP_RELEASE, 1);
    cr_assert_eq(NV_SEM_OP_ACQ_STRICT_GEQ, 2);
    cr_assert_eq(NV_SEM_OP_ACQ_CIRC_GEQ, 3);
    cr_assert_eq(NV_SEM_EXECUTE_ACQUIRE_SWITCH_TSG, DOC_MASK(12, 12));
    cr_assert_eq(NV_SEM_EXECUTE_RELEASE_WFI, DOC_MASK(20, 20));
    cr_assert_eq(NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT, DOC_MASK(24, 24));
    cr_assert_eq(NV_SEM_EXECUTE_RELEASE_TIMESTAMP, DOC_MASK(25, 25));
    /* NVC8B5_LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0 (NON_PIPELINED 2),
     * FLUSH_ENABLE 2:2, SEMAPHORE_TYPE 4:3 (RELEASE_ONE_WORD_SEMAPHORE 1,
     * RELEASE_FOUR_WORD_SEMAPHORE 2), SRC/DST_MEMORY_LAYOUT 7:7/8:8 (PITCH 1),
     * MULTI_LINE_ENABLE 9:9, SEMAPHORE_PAYLOAD_SIZE 27:27 (TWO_WORD 1) */
    cr_assert_eq(NV_COPY_DMA_TRANSFER_TYPE(0xffffffffu), DOC_MASK(1, 0));
    cr_assert_eq(NV_COPY_DMA_FLUSH_ENABLE, DOC_MASK(2, 2));
    cr_assert_eq(NV_COPY_DMA_SEMAPHORE_TYPE(DOC_MASK(4, 3)), 3);
    cr_assert_eq(NV_COPY_DMA_SRC_PITCH, DOC_MASK(7, 7));
    cr_assert_eq(NV_COPY_DMA_DST_PITCH, DOC_MASK(8, 8));
    cr_assert_eq(NV_COPY_DMA_MULTI_LINE, DOC_MASK(9, 9));
    cr_assert_eq(NV_COPY_DMA_SEMAPHORE_PAYLOAD_64, DOC_MASK(27, 27));
    cr_assert_eq(NV_COPY_DMA_COPY, 2u | DOC_MASK(7, 7) | DOC_MASK(8, 8));
    cr_assert_eq(NV_COPY_DMA_SEM_RELEASE_TS, DOC_MASK(2, 2) | 2u << 3);
    cr_assert_eq(NV_COPY_DMA_SEM_RELEASE_ONE_WORD, DOC_MASK(2, 2) | 1u << 3);
    /* NVCBC0_LAUNCH_DMA: DST_MEMORY_LAYOUT 0:0 (PITCH 1), SYSMEMBAR_DISABLE
     * 6:6; SEND_SIGNALING_PCAS2_B PCAS_ACTION 3:0 (PREFETCH_SCHEDULE 9);
     * INVALIDATE_SHADER_CACHES_NO_WFI INSTRUCTION 0:0, GLOBAL_DATA 4:4,
     * CONSTANT 12:12 */
    cr_assert_eq(NV_COMPUTE_LAUNCH_DMA_PITCH_NO_SYSMEMBAR, DOC_MASK(0, 0) | DOC_MASK(6, 6));
    cr_assert_eq(NV_PCAS_ACTION_PREFETCH_SCHEDULE, 9);
    cr_assert_eq(NV_INVALIDATE_SHADER_CACHES_ALL, DOC_MASK(0, 0) | DOC_MASK(4, 4) | DOC_MASK(12, 12));
    /* NVCBC0_SET_SHADER_LOCAL_MEMORY_A ADDRESS_UPPER 24:0; clc6c0.h's 16:0 */
    cr_assert_eq(NV_LOCAL_MEMORY_UPPER_BITS_HOPPER, 25);
    cr_assert_eq(NV_LOCAL_MEMORY_UPPER_BITS_AMPERE, 17);
    /* GP_ENTRY1 (clc86f.h): LEVEL 9:9, LENGTH 30:10, of the entry's upper word */
    uint64_t e = nv_gp_entry(0x1000, 5);
    cr_assert_eq((uint32_t)(e >> 32) & DOC_MASK(9, 9), DOC_MASK(9, 9), "LEVEL_SUBROUTINE");
    cr_assert_eq(((uint32_t)(e >> 32) & DOC_MASK(30, 10)) >> 10, 5);
}

/* ** the decoders' field rows */
static void field_is(int kind, uint32_t mthd, const char *name, unsigned hi, unsigned lo)
{
    const nv_mfield *f = NULL;
    uint32_t n = nv_method_fields(kind, mthd, &f);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(f[i].name, name)) {
            cr_assert_eq(f[i].lo, lo, "%s: lo %u, the header says %u", name, f[i].lo, lo);
            cr_assert_eq(f[i].bits, hi - lo + 1, "%s: %u bits, the header says %u", name, f[i].bits, hi - lo + 1);
            return;
        }
    cr_assert_fail("no field %s of method 0x%x", name, mthd);
}

Test(nv_methods_golden, the_decoders_fields_lie_where_the_headers_put_them)
{
    field_is(0, NV_HOST_SEM_EXECUTE, "OPERATION", 2, 0);
    field_is(0, NV_HOST_SEM_EXECUTE, "ACQUIRE_SWITCH_TSG", 12, 12);
    field_is(0, NV_HOST_SEM_EXECUTE, "RELEASE_WFI", 20, 20);
    field_is(0, NV_HOST_SEM_EXECUTE, "PAYLOAD_SIZE", 24, 24);
    field_is(0, NV_HOST_SEM_EXECUTE, "RELEASE_TIMESTAMP", 25, 25);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "DST_MEMORY_LAYOUT", 0, 0);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_ENABLE", 1, 1);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_FORMAT", 3, 2);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "COMPLETION_TYPE", 5, 4);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "SYSMEMBAR_DISABLE", 6, 6);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "INTERRUPT_TYPE", 9, 8);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "SEMAPHORE_STRUCT_SIZE", 12, 12);
    field_is(1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_OP", 15, 13);
    field_is(1, NV_COMPUTE_SEND_SIGNALING_PCAS2_B, "PCAS_ACTION", 3, 0);
    field_is(1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "INSTRUCTION", 0, 0);
    field_is(1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "GLOBAL_DATA", 4, 4);
    field_is(1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "CONSTANT", 12, 12);
    field_is(2, NV_COPY_LAUNCH_DMA, "DATA_TRANSFER_TYPE", 1, 0);
    field_is(2, NV_COPY_LAUNCH_DMA, "FLUSH_ENABLE", 2, 2);
    field_is(2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_TYPE", 4, 3);
    field_is(2, NV_COPY_LAUNCH_DMA, "INTERRUPT_TYPE", 6, 5);
    field_is(2, NV_COPY_LAUNCH_DMA, "SRC_MEMORY_LAYOUT", 7, 7);
    field_is(2, NV_COPY_LAUNCH_DMA, "DST_MEMORY_LAYOUT", 8, 8);
    field_is(2, NV_COPY_LAUNCH_DMA, "MULTI_LINE_ENABLE", 9, 9);
    field_is(2, NV_COPY_LAUNCH_DMA, "REMAP_ENABLE", 10, 10);
    field_is(2, NV_COPY_LAUNCH_DMA, "FORCE_RMWDISABLE", 11, 11);
    field_is(2, NV_COPY_LAUNCH_DMA, "SRC_TYPE", 12, 12);
    field_is(2, NV_COPY_LAUNCH_DMA, "DST_TYPE", 13, 13);
    field_is(2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION", 17, 14);
    field_is(2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION_SIGN", 18, 18);
    field_is(2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION_ENABLE", 19, 19);
    field_is(2, NV_COPY_LAUNCH_DMA, "COPY_TYPE", 21, 20);
    field_is(2, NV_COPY_LAUNCH_DMA, "MEMORY_SCRUB_ENABLE", 23, 23);
    field_is(2, NV_COPY_LAUNCH_DMA, "FLUSH_TYPE", 25, 25);
    field_is(2, NV_COPY_LAUNCH_DMA, "DISABLE_PLC", 26, 26);
    field_is(2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_PAYLOAD_SIZE", 27, 27);
}
