/* Golden tests of the AMD packet builders: exact dwords for every PM4 and
 * SDMA builder (expected values written out from the packet layouts, and
 * where tinygrad publishes the same packet, equal to its constants), patch
 * slots landing in the right fields, the encoders' framing on multi-XCC
 * queues, and the register table's one gfx9/gfx11 difference. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/amd/amd.h"
#include "drivers/amd/amd_sdma.h"
#include "drivers/decode.h"
#include "hcqtest.h"

static drv_rec r;

static void setup(void) { drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE); }
static void teardown(void) { drv_rec_fini(&r); }

TestSuite(amd_pm4, .init = setup, .fini = teardown);

#define EXPECT(...)                                                                                 \
    do {                                                                                            \
        const uint32_t want_[] = {__VA_ARGS__};                                                     \
        uint32_t n_ = sizeof want_ / sizeof want_[0];                                               \
        cr_assert_eq(r.ndw, n_, "%u dwords, expected %u", r.ndw, n_);                               \
        for (uint32_t i_ = 0; i_ < n_; i_++)                                                        \
            cr_assert_eq(r.dw[i_], want_[i_], "dword %u: 0x%08x, expected 0x%08x", i_, r.dw[i_], want_[i_]); \
        cr_assert_eq(r.err, HCQ_OK);                                                                \
    } while (0)

static const amd_arch *gfx1100(void) { return amd_arch_by_name("gfx1100"); }
static const amd_arch *gfx942(void) { return amd_arch_by_name("gfx942"); }

Test(amd_pm4, nop_and_set_sh_reg)
{
    uint32_t payload[2] = {0xaa, 0xbb}, vals[2] = {0x11, 0x22};
    pm4_nop(&r, payload, 2);
    pm4_set_sh_reg(&r, amd_reg_off(gfx1100(), AMD_REG_PGM_LO), vals, 2);
    EXPECT(0xC0011000, 0xaa, 0xbb, 0xC0027600, 0x20C, 0x11, 0x22);
}

Test(amd_pm4, set_sh_reg_vals_patches_each_value)
{
    hcq_val v[3] = {HCQ_IMM(7), HCQ_VAR(0), HCQ_VAR(1)};
    uint8_t sh[3] = {0, 0, 32};
    pm4_set_sh_reg_vals(&r, amd_reg_off(gfx1100(), AMD_REG_USER_DATA_0), v, sh, 3);
    uint64_t vars[2] = {0x1234, 0xabcdef0011223344ull};
    drv_rec_apply(&r, vars, NULL);
    EXPECT(0xC0037600, 0x240, 7, 0x1234, 0xabcdef00);
}

Test(amd_pm4, dispatch_direct)
{
    pm4_dispatch_direct(&r, HCQ_IMM(4), HCQ_VAR(0), HCQ_IMM(1), 0x8005);
    uint64_t v = 9;
    drv_rec_apply(&r, &v, NULL);
    EXPECT(0xC0031500, 4, 9, 1, 0x8005);
}

Test(amd_pm4, acquire_mem_gfx11_and_gfx9)
{
    /* tinygrad's full invalidate: GCR_CNTL 0xC3F1 (gfx11), CP_COHER_CNTL 0x28C40000 (gfx9) */
    pm4_acquire_mem(&r, gfx1100(), gfx1100()->acquire_full);
    pm4_acquire_mem(&r, gfx942(), gfx942()->acquire_full);
    EXPECT(0xC0065800, 0, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA, 0xC3F1,
           0xC0055800, 0x28C40000, 0xFFFFFFFF, 0x00FFFFFF, 0, 0, 0xA);
}

Test(amd_pm4, release_mem_signal_and_clock)
{
    /* tinygrad: 0x70F514 = end-of-pipe with the gfx11 write-back; 0x88514 on gfx9 */
    pm4_release_mem(&r, pm4_release_event(gfx1100()->release_flush), pm4_release_data(PM4_DATA_64, 0),
                    HCQ_IMM(0x7f0012345678ull), 0, HCQ_IMM(0x100000009ull), 0);
    pm4_release_mem(&r, pm4_release_event(gfx942()->release_flush), pm4_release_data(PM4_DATA_CLOCK, 0), HCQ_VAR(0),
                    8, HCQ_IMM(0), 0);
    uint64_t v = 0x7f0000001000ull;
    drv_rec_apply(&r, &v, NULL);
    EXPECT(0xC0064900, 0x70F514, 0x40000000, 0x12345678, 0x7f00, 9, 1, 0,
           0xC0064900, 0x88514, 0x60000000, 0x1008, 0x7f00, 0, 0, 0);
}

Test(amd_pm4, waits)
{
    pm4_wait_reg_mem(&r, PM4_FUNC_GE, HCQ_IMM(0x2000), HCQ_IMM(5), 0xffffffff, 4);
    pm4_wait_reg_mem64(&r, PM4_FUNC_GE, HCQ_VAR(0), HCQ_VAR(1), ~0ull, 4);
    pm4_wait_reg_write(&r, PM4_FUNC_GE, 0xE26, 0xE27, 0xffffffff, 0xffffffff, 4);
    uint64_t v[2] = {0x7f00aabb0000ull, 0x200000003ull};
    drv_rec_apply(&r, v, NULL);
    /* tinygrad: 0x15 (>=, memory) and the HDP flush's 0x45 (write, then wait) */
    EXPECT(0xC0053C00, 0x15, 0x2000, 0, 5, 0xffffffff, 4,
           0xC0079300, 0x15, 0xaabb0000, 0x7f00, 3, 2, 0xffffffff, 0xffffffff, 4,
           0xC0053C00, 0x45, 0xE26, 0xE27, 0xffffffff, 0xffffffff, 4);
}

Test(amd_pm4, event_write_indirect_buffer_pred_exec)
{
    pm4_event_write(&r, PM4_EV_CS_PARTIAL_FLUSH, 4);
    pm4_indirect_buffer(&r, HCQ_IMM(0x7f0000400100ull), 37);
    pm4_pred_exec(&r, 1u << 3, 9);
    EXPECT(0xC0004600, 0x407, 0xC0023F00, 0x00400100, 0x7f00, 37 | 1u << 23, 0xC0002300, 0x08000009);
}

Test(amd_pm4, sdma_builders)
{
    drv_rec_reset(&r);
    r.type = HCQ_QUEUE_COPY;
    sdma_copy_linear(&r, 30, HCQ_IMM(0x7f0000002000ull), HCQ_IMM(0x7f0000001000ull), 16, HCQ_IMM(4096));
    sdma_fence(&r, true, HCQ_IMM(0x3000), 4, HCQ_IMM(0x500000007ull), 32);
    sdma_fence(&r, false, HCQ_IMM(0x3000), 0, HCQ_IMM(0x500000007ull), 0);
    sdma_trap(&r, 12);
    sdma_poll_regmem(&r, PM4_FUNC_GE, HCQ_IMM(0x4000), 0, HCQ_IMM(21), 0, 0xffffffff, 4, 0xfff);
    sdma_timestamp(&r, HCQ_IMM(0x5000), 8);
    sdma_gcr(&r, 0x1c3f0);
    /* tinygrad: FENCE with MTYPE 3 is 0x30005; the wait 0xD0000008 ... 0x0FFF0004 */
    EXPECT(0x00000001, 4095, 0, 0x1010, 0x7f00, 0x2010, 0x7f00,
           0x00030005, 0x3004, 0, 5,
           0x00000005, 0x3000, 0, 7,
           0x00000006, 12,
           0xD0000008, 0x4000, 0, 21, 0xffffffff, 0x0FFF0004,
           0x0000020D, 0x5008, 0,
           0x00000011, 0, 0xc3f00000, 1, 0);
}

Test(amd_pm4, sdma_variable_size_zero_is_empty)
{
    drv_rec_reset(&r);
    sdma_copy_linear(&r, 22, HCQ_IMM(0x2000), HCQ_IMM(0x1000), 0, HCQ_VAR(0));
    uint64_t v = 100;
    drv_rec_apply(&r, &v, NULL);
    cr_assert_eq(r.dw[1], 99);
    cr_assert_not(sdma_copy_is_empty(r.dw, 22));
    v = 0;
    drv_rec_apply(&r, &v, NULL);
    cr_assert_eq(r.dw[1], 0x3fffff, "size 0 patches the 22-bit count to all ones");
    cr_assert(sdma_copy_is_empty(r.dw, 22));
}

Test(amd_pm4, sdma_packet_lengths)
{
    uint32_t copy[7] = {1}, fence[4] = {0x30005}, nop3[3] = {3u << 16}, poll[6] = {0xD0000008}, ts[3] = {0x20D},
             bad[2] = {0x1234};
    cr_assert_eq(sdma_packet_ndw(copy, 7), 7);
    cr_assert_eq(sdma_packet_ndw(copy, 6), 0, "a packet that does not fit is not one");
    cr_assert_eq(sdma_packet_ndw(fence, 4), 4);
    cr_assert_eq(sdma_packet_ndw(nop3, 4), 4);
    cr_assert_eq(sdma_packet_ndw(poll, 6), 6);
    cr_assert_eq(sdma_packet_ndw(ts, 3), 3);
    cr_assert_eq(sdma_packet_ndw(bad, 2), 0);
}

Test(amd_pm4, encoders_frame_commands_on_multi_xcc_queues)
{
    T_OK(amd_enc_signal(gfx942(), &r, HCQ_IMM(0x7f0000003000ull), HCQ_IMM(9)));
    /* one packet's PM4: boundary, the write on XCC 0 only */
    EXPECT(AMD_CMD_BOUNDARY, 10, 0xC0002300, 0x01000008, 0xC0064900, 0x88514, 0x40000000, 0x3000, 0x7f00, 9, 0, 0);
    drv_rec_reset(&r);
    T_OK(amd_enc_signal(gfx1100(), &r, HCQ_IMM(0x7f0000003000ull), HCQ_IMM(9)));
    EXPECT(0xC0064900, 0x70F514, 0x40000000, 0x3000, 0x7f00, 9, 0, 0);
}

Test(amd_pm4, copy_engine_signals_and_waits_in_halves)
{
    drv_rec_reset(&r);
    r.type = HCQ_QUEUE_COPY;
    T_OK(amd_enc_signal(gfx1100(), &r, HCQ_VAR(0), HCQ_VAR(1)));
    T_OK(amd_enc_wait(gfx1100(), &r, HCQ_VAR(0), HCQ_VAR(1)));
    uint64_t v[2] = {0x7f0000003000ull, 0x100000005ull};
    drv_rec_apply(&r, v, NULL);
    /* the low half first: a waiter never sees more than was written */
    EXPECT(0x30005, 0x3000, 0x7f00, 5, 0x30005, 0x3004, 0x7f00, 1,
           0xD0000008, 0x3004, 0x7f00, 1, 0xffffffff, 0x0FFF0004,
           0xD0000008, 0x3000, 0x7f00, 5, 0xffffffff, 0x0FFF0004);
}

Test(amd_pm4, copies_split_at_the_packet_limit)
{
    drv_rec_reset(&r);
    r.type = HCQ_QUEUE_COPY;
    /* SDMA 4 moves 4 MiB at most; chunks stop a page short so that an
     * all-ones count can only mean an empty (variable-size 0) copy */
    uint64_t chunk = (4u << 20) - 4096;
    T_OK(amd_enc_copy(gfx942(), &r, HCQ_IMM(0x10000000), HCQ_IMM(0x20000000), HCQ_IMM(2 * chunk + 10)));
    cr_assert_eq(r.ndw, 21, "three COPY_LINEARs and no GCR on SDMA 4");
    cr_assert_eq(r.dw[1], chunk - 1);
    cr_assert_not(sdma_copy_is_empty(r.dw, 22));
    cr_assert_eq(r.dw[7 + 3], 0x20000000 + (uint32_t)chunk, "the second chunk's source");
    cr_assert_eq(r.dw[14 + 1], 9);
    drv_rec_reset(&r);
    T_OK(amd_enc_copy(gfx1100(), &r, HCQ_IMM(0x1000), HCQ_IMM(0x2000), HCQ_IMM(64)));
    cr_assert_eq(r.ndw, 12, "a GCR_REQ then one copy on SDMA 6");
    cr_assert_eq(r.dw[0], 0x11);
}

Test(amd_pm4, rsrc3_is_the_register_that_differs)
{
    cr_assert_eq(amd_reg_off(gfx1100(), AMD_REG_PGM_RSRC3), 0x2E28);
    cr_assert_eq(amd_reg_off(gfx942(), AMD_REG_PGM_RSRC3), 0x2E2D);
    cr_assert_eq(amd_reg_off(gfx1100(), AMD_REG_TG_CHUNK_SIZE), 0, "gfx11 has no XCC split registers");
    cr_assert_str_eq(amd_reg_name(AMD_FAMILY_GFX9, 0x2E2D), "COMPUTE_PGM_RSRC3");
    cr_assert_null(amd_reg_name(AMD_FAMILY_GFX11, 0x2E2D), "on gfx11 0x2E2D is a CU mask the tables leave out");
    cr_assert_str_eq(amd_reg_name(AMD_FAMILY_GFX11, 0x2E45), "COMPUTE_USER_DATA_5");
}

Test(amd_pm4, arch_names_from_versions)
{
    char b[16];
    amd_arch_name_of(110000, b, sizeof b);
    cr_assert_str_eq(b, "gfx1100");
    amd_arch_name_of(90402, b, sizeof b);
    cr_assert_str_eq(b, "gfx942");
    amd_arch_name_of(90010, b, sizeof b);
    cr_assert_str_eq(b, "gfx90a");
    cr_assert_eq(amd_arch_by_version(90402), gfx942());
    cr_assert_null(amd_arch_by_version(100300));
}

static char *decode(const char *format, uint32_t arch, const uint32_t *dw, uint32_t n, hcq_status *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *st = drv_decoder_find(format)->decode(arch, 0x1000, dw, n, f);
    fclose(f);
    return text;
}

Test(amd_pm4, streams_decode_by_name)
{
    hcq_status st;
    amd_paths p64 = AMD_PATHS_PROVEN; /* the alternative: one WAIT_REG_MEM64 */
    p64.wait64 = true;
    T_OK(amd_enc_wait_with(gfx1100(), &p64, &r, HCQ_IMM(0x2000), HCQ_IMM(5)));
    pm4_set_sh_reg(&r, amd_reg_off(gfx942(), AMD_REG_PGM_RSRC3), (uint32_t[]){7}, 1);
    char *t = decode("amd-pm4", 90402, r.dw, r.ndw, &st);
    T_OK(st);
    cr_assert_str_eq(t, "0x0000001000: c0079300  WAIT_REG_MEM64   *0x2000 & 0xffffffffffffffff >= 5\n"
                        "0x0000001024: c0017600  SET_SH_REG       COMPUTE_PGM_RSRC3 = 0x7 (ACCUM_OFFSET=7)\n");
    free(t);
    drv_rec_reset(&r);
    r.type = HCQ_QUEUE_COPY;
    T_OK(amd_enc_copy(gfx1100(), &r, HCQ_IMM(0x3000), HCQ_IMM(0x4000), HCQ_IMM(64)));
    t = decode("amd-sdma", 110000, r.dw, r.ndw, &st);
    T_OK(st);
    cr_assert(strstr(t, "GCR_REQ") && strstr(t, "COPY_LINEAR  0x3000 <- 0x4000, 64 bytes"), "%s", t);
    free(t);
    uint32_t junk[3] = {0x12345678, 1, 2};
    t = decode("amd-pm4", 110000, junk, 3, &st);
    cr_assert_eq(st, HCQ_EFORMAT);
    cr_assert(strstr(t, "not a type-3 header") && strstr(t, "00000002  word"), "%s", t);
    free(t);
}

/* gfx9 has no WAIT_REG_MEM64 (soc15d.h; nvd.h defines it for gfx10+): a
 * wait there is an AQL barrier-value packet on the 64-bit value, its
 * signal handle 8 bytes before the value (amd_signal_t.value) */
Test(amd_pm4, waits_per_family)
{
    cr_assert(pm4_op_exists(AMD_FAMILY_GFX11, PM4_WAIT_REG_MEM64));
    cr_assert(!pm4_op_exists(AMD_FAMILY_GFX9, PM4_WAIT_REG_MEM64));
    cr_assert(pm4_op_exists(AMD_FAMILY_GFX9, PM4_WAIT_REG_MEM));
    const amd_arch *g90a = amd_arch_by_name("gfx90a");
    cr_assert(g90a->aql_compute && gfx942()->aql_compute && !gfx1100()->aql_compute);
    T_OK(amd_enc_wait(gfx942(), &r, HCQ_VAR(0), HCQ_IMM(0x100000002ull)));
    uint64_t v = 0x7f0000001010ull;
    drv_rec_apply(&r, &v, NULL);
    EXPECT(AMD_CMD_BARRIER_VALUE, AMD_CMD_BARRIER_VALUE_MAGIC, 0x1008, 0x7f00, 2, 1);
    for (uint32_t i = 0; i < r.ndw; i++)
        cr_assert_neq(PM4_HDR_OP(r.dw[i]) == PM4_WAIT_REG_MEM64 && PM4_HDR_TYPE(r.dw[i]) == 3, true);
}

/* the scratch resource's word 3: gfx9's own layout (ROCR FillBufRsrcWord3:
 * DST_SEL XYZW, NUM_FORMAT UINT, DATA_FORMAT 32, ELEMENT_SIZE 4, INDEX_STRIDE
 * 64, ADD_TID_ENABLE), not gfx11's FORMAT/OOB_SELECT one */
Test(amd_pm4, scratch_descriptor_word3_per_family)
{
    uint32_t w[4];
    amd_scratch_srd(AMD_FAMILY_GFX9, 0x7f1234560000ull, w);
    cr_assert_eq(w[0], 0x34560000u);
    cr_assert_eq(w[1], 0x80007f12u);
    cr_assert_eq(w[3], 0x00EA4FACu, "gfx9 word 3 0x%08x", w[3]);
    cr_assert_eq(amd_fget(AMD_BUF3_GFX9_INDEX_STRIDE, w[3]), 3);
    cr_assert_eq(amd_fget(AMD_BUF3_GFX9_DATA_FORMAT, w[3]), 4);
    amd_scratch_srd(AMD_FAMILY_GFX11, 0x7f1234560000ull, w);
    cr_assert_eq(w[3], 0x20c14000u);
}
