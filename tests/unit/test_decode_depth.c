/* The decoders in depth: NVIDIA methods with their class prefixes, the
 * class each subchannel was bound to with SET_OBJECT, fields split out
 * (SEM_EXECUTE, LAUNCH_DMA, PCAS actions), address pairs joined, SEND_PCAS
 * as the QMD address; AMD RELEASE_MEM events and cache actions, ACQUIRE_MEM
 * GCR_CNTL / CP_COHER_CNTL bits, COMPUTE_PGM_RSRC1/2/3 fields; kernel names
 * for launches (QMD, COMPUTE_PGM_LO/HI, the CPU's exec) from the symbols
 * programs register and "hcq-names" records; and names that carry control
 * bytes printed harmless. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/amd/amd.h"
#include "drivers/amd/amd_pm4.h"
#include "drivers/cpu/cpu.h"
#include "drivers/decode.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/nv/nv_hw.h"
#include "hcqtest.h"

static char *run(const char *format, uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t n, hcq_status want)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const drv_decoder *d = drv_decoder_find(format);
    cr_assert_not_null(d, "%s", format);
    hcq_status st = d->decode(arch, va, dw, n, f);
    fclose(f);
    cr_assert_eq(st, want, "%s -> %s:\n%s", format, hcq_status_name(st), text);
    return text;
}

#define HAS(text, s) cr_assert(strstr((text), (s)), "no \"%s\" in:\n%s", (s), (text))

Test(decode_depth, nv_subchannels_follow_set_object_and_methods_carry_their_class)
{
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
    nv_set_object(&r, 2, HOPPER_DMA_COPY_A); /* a copy class on subchannel 2 */
    drv_rec_reserve(&r, 2);
    drv_rec_dw(&r, nv_mthd_header(NV_SEC_OP_INC, 2, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(&r, NV_COPY_DMA_SEM_RELEASE_TS | NV_COPY_DMA_SEMAPHORE_PAYLOAD_64);
    nv_ce_copy(&r, HCQ_IMM(0x200000ull), HCQ_IMM(0x3000000010ull), HCQ_IMM(4096)); /* on subchannel 4: unbound */
    drv_rec_reserve(&r, 2);
    drv_rec_dw(&r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COMPUTE, 0x0CF0, 1)); /* a method no table names */
    drv_rec_dw(&r, 5);
    char *t = run("nv-gpfifo", HOPPER_COMPUTE_A, 0x1000, r.dw, r.ndw, HCQ_OK);
    HAS(t, "NVC86F_SET_OBJECT                            0x0000c8b5  (HOPPER_DMA_COPY_A)");
    HAS(t, "INC subch 2 (HOPPER_DMA_COPY_A), 1 words");
    HAS(t, "NVC8B5_LAUNCH_DMA                            0x08000014  (DATA_TRANSFER_TYPE=NONE FLUSH_ENABLE SEMAPHORE_TYPE="
           "RELEASE_FOUR_WORD_SEMAPHORE SEMAPHORE_PAYLOAD_SIZE=TWO_WORD)");
    HAS(t, "INC subch 4 (assumed HOPPER_DMA_COPY_A)");
    HAS(t, "NVC8B5_OFFSET_IN_LOWER                       0x00000010  (source 0x3000000010)");
    HAS(t, "(destination 0x200000)");
    HAS(t, "(DATA_TRANSFER_TYPE=NON_PIPELINED SRC_MEMORY_LAYOUT=PITCH DST_MEMORY_LAYOUT=PITCH)");
    HAS(t, "0x00000005  (method 0x0cf0)");
    free(t);
    drv_rec_fini(&r);
}

Test(decode_depth, nv_ampere_prefixes_and_compute_launch_dma_fields)
{
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
    nv_sem_acquire(&r, HCQ_IMM(0x4000ull), HCQ_IMM(9), false);
    drv_rec_reserve(&r, 2);
    drv_rec_dw(&r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COMPUTE, NV_COMPUTE_LAUNCH_DMA, 1));
    drv_rec_dw(&r, NV_COMPUTE_LAUNCH_DMA_PITCH_NO_SYSMEMBAR | 0x20); /* and COMPLETION_TYPE RELEASE_SEMAPHORE */
    nv_invalidate_shader_caches(&r);
    char *t = run("nv-gpfifo", AMPERE_COMPUTE_A, 0, r.dw, r.ndw, HCQ_OK);
    HAS(t, "NVC56F_SEM_EXECUTE");
    HAS(t, "(OPERATION=ACQ_STRICT_GEQ PAYLOAD_SIZE=64BIT)");
    HAS(t, "NVC6C0_LAUNCH_DMA");
    HAS(t, "(DST_MEMORY_LAYOUT=PITCH COMPLETION_TYPE=RELEASE_SEMAPHORE SYSMEMBAR_DISABLE)");
    HAS(t, "NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI");
    HAS(t, "(INSTRUCTION GLOBAL_DATA CONSTANT)");
    free(t);
    drv_rec_fini(&r);
}

Test(decode_depth, a_qmd_names_its_kernel)
{
    uint32_t q[NV_QMD_MAX_DW] = {0};
    nv_qmd_set(q, NV_QMD_V04, NV_QMD_PROGRAM_ADDRESS_LOWER, 0, 0x7f1234500ull & 0xffffffffu);
    nv_qmd_set(q, NV_QMD_V04, NV_QMD_PROGRAM_ADDRESS_UPPER, 0, 0x7f1234500ull >> 32);
    nv_qmd_set(q, NV_QMD_V04, NV_QMD_GRID_WIDTH, 0, 40);
    nv_qmd_set(q, NV_QMD_V04, NV_QMD_CTA_THREAD_DIMENSION0, 0, 128);
    char *t = run("nv-qmd", HOPPER_COMPUTE_A, 0x2000, q, NV_QMD_V04_BYTES / 4, HCQ_OK);
    HAS(t, "launch of an unknown program: grid 40x0x0, block 128x0x0");
    free(t);
    drv_symbol_add(0x7f1234500ull, 256, "softmax_kernel");
    t = run("nv-qmd", HOPPER_COMPUTE_A, 0x2000, q, NV_QMD_V04_BYTES / 4, HCQ_OK);
    HAS(t, "launch `softmax_kernel`: grid 40x0x0, block 128x0x0");
    HAS(t, "PROGRAM_ADDRESS_LOWER = 0xf1234500  (`softmax_kernel`)");
    free(t);
    drv_symbol_remove(0x7f1234500ull);
    /* a name record, as HCQ_DUMP writes one, names it again */
    uint32_t rec[4] = {0};
    memcpy(rec, "gemm\x1b[2J", 8); /* a name with a terminal escape in it */
    t = run("hcq-names", 256, 0x7f1234500ull, rec, 4, HCQ_OK);
    HAS(t, "program `gemm?[2J` at 0x7f1234500, 256 bytes");
    cr_assert_null(strchr(t, 0x1b), "no escape byte reaches the output");
    free(t);
    t = run("nv-qmd", HOPPER_COMPUTE_A, 0x2000, q, NV_QMD_V04_BYTES / 4, HCQ_OK);
    HAS(t, "launch `gemm?[2J`");
    free(t);
    drv_symbol_remove(0x7f1234500ull);
}

Test(decode_depth, amd_release_acquire_and_rsrc_fields_and_the_kernel)
{
    const amd_arch *g11 = amd_arch_by_name("gfx1100"), *g9 = amd_arch_by_name("gfx942");
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
    pm4_acquire_mem(&r, g11, g11->acquire_full);
    pm4_release_mem(&r, pm4_release_event(AMD_REL_GCR_GL2_WB | AMD_REL_GCR_SEQ), pm4_release_data(PM4_DATA_CLOCK, 0),
                    HCQ_IMM(0x9000), 0, HCQ_IMM(0), 0);
    uint32_t pgm[2] = {(uint32_t)(0x7f0000123400ull >> 8), (uint32_t)(0x7f0000123400ull >> 40)};
    pm4_set_sh_reg(&r, amd_reg_off(g11, AMD_REG_PGM_LO), pgm, 2);
    uint32_t rsrc[2] = {amd_fset(AMD_RSRC1_VGPRS, 3) | (1u << 21) /* DX10_CLAMP */ | amd_fset(AMD_RSRC1_WGP_MODE, 1),
                        amd_fset(AMD_RSRC2_USER_SGPR, 2) | amd_fset(AMD_RSRC2_TGID_X_EN, 1) |
                            amd_fset(AMD_RSRC2_LDS_SIZE, 4)};
    pm4_set_sh_reg(&r, amd_reg_off(g11, AMD_REG_PGM_RSRC1), rsrc, 2);
    drv_symbol_add(0x7f0000123400ull, 0, "reduce_sum");
    char *t = run("amd-pm4", 110000, 0, r.dw, r.ndw, HCQ_OK);
    HAS(t, "ACQUIRE_MEM      GCR_CNTL 0x");
    HAS(t, "GLI_INV=1 GLM_WB GLM_INV");
    HAS(t, "GL2_INV GL2_WB");
    HAS(t, "RELEASE_MEM      CACHE_FLUSH_AND_INV_TS_EVENT (EVENT_INDEX=5 GL2_WB SEQ), then write GPU clock to memory 0x9000");
    HAS(t, "(program 0x7f0000123400: `reduce_sum`)");
    HAS(t, "COMPUTE_PGM_RSRC1 = 0x20200003 (VGPRS=3 DX10_CLAMP WGP_MODE)");
    HAS(t, "COMPUTE_PGM_RSRC2 = 0x20084 (USER_SGPR=2 TGID_X_EN LDS_SIZE=4)");
    free(t);
    drv_symbol_remove(0x7f0000123400ull);
    /* gfx9: CP_COHER_CNTL in ACQUIRE_MEM, EOP action bits in RELEASE_MEM */
    drv_rec_reset(&r);
    pm4_acquire_mem(&r, g9, g9->acquire_full);
    pm4_release_mem(&r, pm4_release_event(AMD_REL_TC_WB_ACTION_EN | AMD_REL_TC_NC_ACTION_EN),
                    pm4_release_data(PM4_DATA_64, 2), HCQ_IMM(0x9000), 0, HCQ_IMM(7), 0);
    t = run("amd-pm4", 90402, 0, r.dw, r.ndw, HCQ_OK);
    HAS(t, "ACQUIRE_MEM      CP_COHER_CNTL 0x");
    HAS(t, "TC_WB_ACTION_ENA");
    HAS(t, "(EVENT_INDEX=5 TC_WB_ACTION_EN TC_NC_ACTION_EN), then write 64-bit to memory 0x9000 (value 0x7), "
           "interrupt: interrupt after the write");
    free(t);
    drv_rec_fini(&r);
}

Test(decode_depth, every_decoder_says_which_arches_it_takes)
{
    char why[200];
    const drv_decoder *nv = drv_decoder_find("nv-gpfifo"), *qmd = drv_decoder_find("nv-qmd"),
                      *pm4 = drv_decoder_find("amd-pm4");
    cr_assert(nv->arch_ok(HOPPER_COMPUTE_A, why, sizeof why) && nv->arch_ok(AMPERE_DMA_COPY_B, why, sizeof why));
    cr_assert(!nv->arch_ok(0x1234, why, sizeof why) && strstr(why, "0xcbc0"), "%s", why);
    cr_assert(!qmd->arch_ok(HOPPER_DMA_COPY_A, why, sizeof why), "a QMD is for a compute class");
    cr_assert(pm4->arch_ok(110000, why, sizeof why) && !pm4->arch_ok(100300, why, sizeof why));
    cr_assert(strstr(why, "gfx942"), "%s", why);
}
