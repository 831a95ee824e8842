/* Golden tests of the NVIDIA command formats: exact dwords of every packet
 * builder (nv_hw.h), both QMD versions from the one field table, and the
 * backend's encoders (launch, signal folded into the QMD's release
 * semaphore, copies split at the engine's limit) with their patch slots.
 * The expected words are written out by hand from the bit positions in
 * the class headers (nv-facts §3, §4), not computed by the code under test. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/decode.h"
#include "drivers/nv/nv.h"
#include "hcqtest.h"

static drv_rec rec;
static void setup(void) { drv_rec_init(&rec, NULL, HCQ_QUEUE_COMPUTE); }
static void teardown(void) { drv_rec_fini(&rec); }
TestSuite(nv_packets, .init = setup, .fini = teardown);

static void expect(const drv_rec *r, const uint32_t *want, uint32_t n)
{
    cr_assert_eq(r->err, HCQ_OK);
    cr_assert_eq(r->ndw, n, "%u dwords, want %u", r->ndw, n);
    for (uint32_t i = 0; i < n; i++) cr_assert_eq(r->dw[i], want[i], "dword %u: 0x%08x, want 0x%08x", i, r->dw[i], want[i]);
}

Test(nv_packets, method_headers)
{
    /* SEM_* with 5 words on subchannel 0, SET_OBJECT on subchannel 1 (facts §3) */
    cr_assert_eq(nv_mthd_header(NV_SEC_OP_INC, 0, NV_HOST_SEM_ADDR_LO, 5), 0x20050017u);
    cr_assert_eq(nv_mthd_header(NV_SEC_OP_INC, 1, NV_HOST_SET_OBJECT, 1), 0x20012000u);
    cr_assert_eq(nv_mthd_header(NV_SEC_OP_NON_INC, 1, NV_COMPUTE_LOAD_INLINE_DATA, 7), 0x6007206Du);
    cr_assert_eq(nv_mthd_header(NV_SEC_OP_IMMD, 4, NV_COPY_LAUNCH_DMA, 0x182), 0x818280C0u);
    uint32_t h = 0x6007206Du;
    cr_assert_eq(nv_mthd_sec_op(h), NV_SEC_OP_NON_INC);
    cr_assert_eq(nv_mthd_count(h), 7);
    cr_assert_eq(nv_mthd_subch(h), 1);
    cr_assert_eq(nv_mthd_addr(h), NV_COMPUTE_LOAD_INLINE_DATA);
    cr_assert_eq(nv_mthd_packet_dw(h), 8);
    cr_assert_eq(nv_mthd_packet_dw(0x818280C0u), 1);
}

Test(nv_packets, gpfifo_entry)
{
    /* VA bits 39:2, SUBROUTINE at 41, length at 62:42 */
    uint64_t e = nv_gp_entry(0x1000ABC040ull, 13);
    cr_assert_eq(e, 0x1000ABC040ull | (1ull << 41) | (13ull << 42), "0x%llx", (unsigned long long)e);
    cr_assert_eq(nv_gp_entry_va(e), 0x1000ABC040ull);
    cr_assert_eq(nv_gp_entry_len(e), 13);
}

Test(nv_packets, host_semaphores)
{
    nv_sem_acquire(&rec, HCQ_IMM(0x1000002010ull), HCQ_IMM(0x123456789Aull), false);
    nv_sem_acquire(&rec, HCQ_IMM(0x1000002010ull), HCQ_IMM(0x123456789Aull), true);
    nv_sem_release(&rec, HCQ_IMM(0x1000002020ull), HCQ_IMM(7), true);
    nv_sem_release(&rec, HCQ_IMM(0x1000002030ull), HCQ_IMM(8), false);
    const uint32_t want[] = {0x20050017, 0x00002010, 0x10, 0x3456789A, 0x12, 0x01000002, /* STRICT_GEQ, 64-bit */
                             0x20050017, 0x00002010, 0x10, 0x3456789A, 0x12, 0x01000003, /* CIRC_GEQ, 64-bit */
                             0x20050017, 0x00002020, 0x10, 7, 0, 0x03100001,           /* RELEASE, WFI, 64, TS */
                             0x20050017, 0x00002030, 0x10, 8, 0, 0x01100001};
    expect(&rec, want, BASE_ARRAY_LEN(want));
}

Test(nv_packets, compute_methods)
{
    nv_set_object(&rec, NV_SUBCH_COMPUTE, HOPPER_COMPUTE_A);
    nv_compute_wfi(&rec);
    nv_invalidate_shader_caches(&rec);
    nv_send_pcas(&rec, 0x1000001200ull);
    nv_set_shared_window(&rec, NV_SHARED_WINDOW);
    nv_set_local_window(&rec, NV_LOCAL_WINDOW);
    nv_set_local_memory(&rec, 0x2000400000ull, 0x98000, NV_LOCAL_MEMORY_UPPER_BITS_HOPPER);
    const uint32_t want[] = {0x20012000, 0xCBC0,                         /* SET_OBJECT */
                             0x20012044, 0,                              /* WAIT_FOR_IDLE 0x110 */
                             0x200125A6, 0x1011,                         /* INVALIDATE_SHADER_CACHES_NO_WFI 0x1698 */
                             0x200120AD, 0x10000012, 0x200120B0, 9,      /* SEND_PCAS_A, SEND_SIGNALING_PCAS2_B */
                             0x200220A8, 0x7294, 0,                      /* SHARED_MEMORY_WINDOW_A/B 0x2a0 */
                             0x200221EC, 0x7293, 0,                      /* LOCAL_MEMORY_WINDOW_A/B 0x7b0 */
                             0x200221E4, 0x20, 0x00400000,               /* LOCAL_MEMORY_A/B 0x790 */
                             0x200320B9, 0, 0x98000, 0xFF};              /* NON_THROTTLED_A/B/C 0x2e4 */
    expect(&rec, want, BASE_ARRAY_LEN(want));
}

Test(nv_packets, copy_engine)
{
    nv_set_object(&rec, NV_SUBCH_COPY, HOPPER_DMA_COPY_A);
    nv_ce_copy(&rec, HCQ_IMM(0x2000100000ull), HCQ_IMM(0x1000200040ull), HCQ_IMM(4096));
    nv_ce_sem_release64(&rec, HCQ_IMM(0x1000002010ull), HCQ_IMM(0x500000003ull));
    const uint32_t want[] = {0x20018000, 0xC8B5,
                             0x20048100, 0x10, 0x00200040, 0x20, 0x00100000, /* OFFSET_IN/OUT upper, lower */
                             0x20018106, 4096,                               /* LINE_LENGTH_IN 0x418 */
                             0x200180C0, 0x182,                              /* LAUNCH_DMA: non-pipelined pitch copy */
                             0x20048090, 0x10, 0x00002010, 3, 5,             /* SET_SEMAPHORE_A/B, PAYLOAD, UPPER */
                             0x200180C0, 0x08000014};                        /* flush, 4-word + timestamp, 64-bit */
    expect(&rec, want, BASE_ARRAY_LEN(want));
}

/* the proven form of a 64-bit copy-engine release: the low word with the
 * timestamp, then the high word alone at +4 (clc8b5.h SET_SEMAPHORE_A 0x240,
 * B 0x244, PAYLOAD 0x248, LAUNCH_DMA 0x300: FLUSH_ENABLE bit 2, SEMAPHORE_TYPE
 * 4:3 = 2 four words with the timestamp / 1 one word) */
Test(nv_packets, copy_engine_release_in_two_words)
{
    nv_ce_sem_release32(&rec, HCQ_IMM(0x1000002010ull), HCQ_IMM(0x500000003ull));
    const uint32_t want[] = {0x20038090, 0x10, 0x00002010, 3, /* SET_SEMAPHORE_A, B, PAYLOAD (low word) */
                             0x200180C0, 0x14,                /* flush, four words with the timestamp */
                             0x20038090, 0x10, 0x00002014, 5, /* +4: the high word */
                             0x200180C0, 0x0C};               /* flush, one word */
    expect(&rec, want, BASE_ARRAY_LEN(want));
    /* patched: the +4 carries into the upper address */
    drv_rec_fini(&rec);
    drv_rec_init(&rec, NULL, HCQ_QUEUE_COPY);
    nv_ce_sem_release32(&rec, HCQ_VAR(0), HCQ_VAR(1));
    uint64_t vars[2] = {0x10FFFFFFFCull, 0x0000000700000009ull};
    drv_rec_apply(&rec, vars, NULL);
    const uint32_t patched[] = {0x20038090, 0x10, 0xFFFFFFFC, 9, 0x200180C0, 0x14,
                                0x20038090, 0x11, 0x00000000, 7, 0x200180C0, 0x0C};
    expect(&rec, patched, BASE_ARRAY_LEN(patched));
}

Test(nv_packets, builders_record_patch_slots)
{
    nv_sem_acquire(&rec, HCQ_VAR(0), HCQ_VAR(1), false);
    nv_ce_copy(&rec, HCQ_VAR(2), HCQ_IMM(0x1000), HCQ_VAR(3));
    cr_assert_eq(rec.nvars, 4);
    uint64_t vars[4] = {0x1234567890ull, 0xAABBCCDD11223344ull, 0x20AABBCC00ull, 77};
    drv_rec_apply(&rec, vars, NULL);
    const uint32_t want[] = {0x20050017, 0x34567890, 0x12, 0x11223344, 0xAABBCCDD, 0x01000002,
                             0x20048100, 0, 0x1000, 0x20, 0xAABBCC00, 0x20018106, 77, 0x200180C0, 0x182};
    expect(&rec, want, BASE_ARRAY_LEN(want));
}

/* ** QMDs: the same launch in both versions */
static void fill(uint32_t *q, int v)
{
    memset(q, 0, NV_QMD_MAX_DW * 4);
    nv_qmd_set(q, v, NV_QMD_GRID_WIDTH, 0, 0x1000);
    nv_qmd_set(q, v, NV_QMD_GRID_HEIGHT, 0, 3);
    nv_qmd_set(q, v, NV_QMD_GRID_DEPTH, 0, 2);
    nv_qmd_set(q, v, NV_QMD_CTA_THREAD_DIMENSION0, 0, 256);
    nv_qmd_set(q, v, NV_QMD_CTA_THREAD_DIMENSION1, 0, 2);
    nv_qmd_set(q, v, NV_QMD_CTA_THREAD_DIMENSION2, 0, 1);
    nv_qmd_set(q, v, NV_QMD_MAJOR_VERSION, 0, v == NV_QMD_V04 ? 4 : 3);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_VALID, 0, 1);
    uint64_t cb = 0x123456789A00ull >> (v == NV_QMD_V04 ? 6 : 0);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 0, cb);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, cb >> 32);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, 0x23);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_ADDRESS_LOWER, 0, 0x1000);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_ADDRESS_UPPER, 0, 0x20);
    nv_qmd_set(q, v, NV_QMD_RELEASE_ENABLE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_RELEASE_PAYLOAD64B, 0, 1);
    nv_qmd_set(q, v, NV_QMD_RELEASE_ADDRESS_LOWER, 0, 0x40);
    nv_qmd_set(q, v, NV_QMD_RELEASE_ADDRESS_UPPER, 0, 0x10);
    nv_qmd_set(q, v, NV_QMD_RELEASE_PAYLOAD_LOWER, 0, 2);
    nv_qmd_set(q, v, NV_QMD_RELEASE_PAYLOAD_UPPER, 0, 1);
}

static void expect_qmd(const uint32_t *q, const uint32_t (*want)[2], size_t n)
{
    for (uint32_t d = 0; d < NV_QMD_MAX_DW; d++) {
        uint32_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (want[i][0] == d) w = want[i][1];
        cr_assert_eq(q[d], w, "QMD dword %u: 0x%08x, want 0x%08x", d, q[d], w);
    }
}

Test(nv_packets, qmd_v03)
{
    uint32_t q[NV_QMD_MAX_DW];
    fill(q, NV_QMD_V03);
    const uint32_t want[][2] = {
        {12, 0x1000},     {13, 3},          {14, 2},          /* grid at bits 384, 416, 448 */
        {18, 0x01000030},                                      /* major 3 at 580, block x at 592 */
        {19, 0x00010002},                                      /* block y, z */
        {20, 1},                                               /* CONSTANT_BUFFER_VALID(0) at 640 */
        {24, 0x40},       {25, 0x20800010}, {26, 2}, {27, 1},  /* RELEASE0: address, ENABLE 823, PAYLOAD64B 829 */
        {32, 0x56789A00}, {33, 0x01181234},                    /* cbuf 0 address, size 0x23 at 1075 */
        {48, 0x1000},     {49, 0x20},                          /* PROGRAM_ADDRESS at 1536 */
    };
    expect_qmd(q, want, BASE_ARRAY_LEN(want));
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V03, NV_QMD_CTA_THREAD_DIMENSION0, 0), 256);
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V03, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0), 0x23);
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V03, NV_QMD_RELEASE_ENABLE, 1), 0);
}

Test(nv_packets, qmd_v04)
{
    uint32_t q[NV_QMD_MAX_DW];
    fill(q, NV_QMD_V04);
    /* cbuf 0 at 0x123456789a00 >> 6 = 0x48d159e268 */
    const uint32_t want[][2] = {
        {10, 0x1001},                                          /* RELEASE_ENABLE(0) 320, PAYLOAD64B(0) 332 */
        {13, 1},                                               /* CONSTANT_BUFFER_VALID(0) at 416 */
        {18, 0x40},                                            /* major 4 at 580 */
        {20, 0x40},       {21, 0x10}, {22, 2}, {23, 1},        /* RELEASE_SEMAPHORE0 at 640.. */
        {32, 0x1000},     {33, 3},    {34, 2},                 /* grid at 1024, 1056, 1088 */
        {36, 0x00020100}, {37, 1},                             /* block at 1152.. */
        {38, 0x1000},     {39, 0x20},                          /* PROGRAM_ADDRESS at 1216 */
        {48, 0xD159E268}, {49, 0x01180048},                    /* cbuf 0 >> 6, size 0x23 at 1587 */
    };
    expect_qmd(q, want, BASE_ARRAY_LEN(want));
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V04, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0), 0x48);
    /* fields a version lacks read 0 and are not written */
    nv_qmd_set(q, NV_QMD_V04, NV_QMD_SM_GLOBAL_CACHING_ENABLE, 0, 1);
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V04, NV_QMD_SM_GLOBAL_CACHING_ENABLE, 0), 0);
    cr_assert_eq(q[4], 0);
}

/* ** the backend's encoders, on a device record that only carries the
 * generation (no driver behind it) */
typedef struct fake {
    hcq_device dev;
    nv_dev nv;
    nv_prog prog;
    hcq_program p;
    hcq_param_info params[2];
    uint8_t *aux;
    uint32_t aux_used;
} fake;

static hcq_status fake_aux(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    fake *f = r->aux_ctx;
    uint32_t off = (uint32_t)base_align_up(f->aux_used, align);
    cr_assert(off + size <= 65536);
    f->aux_used = off + size;
    *cpu = f->aux + off;
    *va = 0x1000000000ull + off; /* where the launch's memory would be on the GPU */
    return HCQ_OK;
}

static fake *fake_new(uint32_t sm_version, hcq_queue_type type)
{
    fake *f = calloc(1, sizeof *f);
    f->aux = aligned_alloc(256, 65536);
    memset(f->aux, 0, 65536);
    f->dev.priv = &f->nv;
    f->nv.gen = nv_gen_for_sm(sm_version, "test GPU");
    cr_assert_not_null(f->nv.gen);
    nv_paths_default(&f->nv);
    f->prog.param_base = f->nv.gen->param_base;
    f->prog.cbuf0_bytes = f->prog.param_base + 12;
    f->p.priv = &f->prog;
    f->p.params = f->params;
    f->p.info.nparams = 2;
    f->params[0] = (hcq_param_info){0, 8, 1, HCQ_U32, {0}};
    f->params[1] = (hcq_param_info){8, 4, 0, HCQ_U32, {0}};
    snprintf(f->p.info.name, sizeof f->p.info.name, "kern");
    drv_rec_fini(&rec);
    drv_rec_init(&rec, &f->dev, type);
    rec.aux_alloc = fake_aux;
    rec.aux_ctx = f;
    return f;
}

static void fake_free(fake *f)
{
    free(f->aux);
    free(f);
}

Test(nv_packets, hopper_launch_with_patched_dims_args_and_release)
{
    fake *f = fake_new(0x900, HCQ_QUEUE_COMPUTE);
    hcq_val params[2] = {HCQ_VAR(0), HCQ_VAR(1)};
    hcq_dims d = {{HCQ_VAR(2), HCQ_IMM(1), HCQ_IMM(1)}, {HCQ_IMM(64), HCQ_IMM(1), HCQ_IMM(1)}};
    cr_assert_eq(nv_rec_exec(&rec, &f->p, params, &d), HCQ_OK);
    cr_assert_eq(nv_rec_signal(&rec, HCQ_IMM(0x1000003010ull), HCQ_VAR(3)), HCQ_OK);
    cr_assert_eq(nv_rec_exec(&rec, &f->p, params, &d), HCQ_OK); /* a second launch waits for the first */
    /* cbuf0 of 0x21c bytes rounds to 0x300; the QMD follows it */
    const uint32_t want[] = {0x200120AD, 0x10000003, 0x200120B0, 9,                  /* launch 1: QMD at +0x300 */
                             0x20012044, 0, 0x200120AD, 0x10000008, 0x200120B0, 9}; /* WFI, launch 2 at +0x800 */
    expect(&rec, want, BASE_ARRAY_LEN(want));
    uint64_t vars[4] = {0x2000001000ull, 0xCAFE, 77, 0x123456789ull};
    drv_rec_apply(&rec, vars, NULL);
    const uint8_t *cb = f->aux;
    uint32_t *qmd = (uint32_t *)(f->aux + 0x300);
    uint64_t a0;
    uint32_t a1, gx, bx;
    memcpy(&a0, cb + 0x210, 8);
    memcpy(&a1, cb + 0x218, 4);
    memcpy(&bx, cb + 0x00, 4); /* blockDim.x and gridDim.x as CUDA keeps them */
    memcpy(&gx, cb + 0x0c, 4);
    cr_assert_eq(a0, 0x2000001000ull);
    cr_assert_eq(a1, 0xCAFE);
    cr_assert_eq(bx, 64);
    cr_assert_eq(gx, 77);
    cr_assert_eq(qmd[32], 77, "GRID_WIDTH patched in the QMD");
    cr_assert_eq(qmd[36] & 0xffff, 64);
    cr_assert_eq(qmd[48], 0x1000000000ull >> 6, "cbuf 0 address >> 6");
    cr_assert_eq(qmd[10] & 1, 1, "release 0 enabled");
    cr_assert_eq(qmd[20], 0x3010);
    cr_assert_eq(qmd[21], 0x10);
    cr_assert_eq(qmd[22], 0x23456789);
    cr_assert_eq(qmd[23], 0x1);
    /* resubmission with other values rewrites exactly those fields */
    uint64_t last[4];
    memcpy(last, vars, sizeof vars);
    vars[2] = 5;
    drv_rec_apply(&rec, vars, last);
    cr_assert_eq(qmd[32], 5);
    fake_free(f);
}

Test(nv_packets, ampere_signals_and_copies)
{
    fake *f = fake_new(0x800, HCQ_QUEUE_COPY);
    /* a copy larger than one LINE_LENGTH_IN is split; GA100's copy engine
     * (AMPERE_DMA_COPY_A) has 32-bit semaphores, so the signal is a host
     * semaphore */
    cr_assert_eq(nv_rec_copy(&rec, HCQ_IMM(0x2000000000ull), HCQ_IMM(0x3000000000ull), HCQ_IMM((3ull << 30) + 5)), HCQ_OK);
    cr_assert_eq(nv_rec_signal(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(9)), HCQ_OK);
    const uint32_t want[] = {0x20048100, 0x30, 0, 0x20, 0,          0x20018106, 0x80000000, 0x200180C0, 0x182,
                             0x20048100, 0x30, 0x80000000, 0x20, 0x80000000, 0x20018106, 0x40000005, 0x200180C0,
                             0x182,      0x20050017, 0x40, 0x10, 9, 0, 0x03100001};
    expect(&rec, want, BASE_ARRAY_LEN(want));
    fake_free(f);
}

/* AMPERE_DMA_COPY_B (GA10x, Ada) and HOPPER_DMA_COPY_A release the value
 * in two one-word releases by default (the proven form), and as one 64-bit
 * release on the alternative path (clc7b5.h SEMAPHORE_PAYLOAD_SIZE) */
Test(nv_packets, copy_engines_release_64_bit_values_on_either_path)
{
    const uint32_t sms[] = {0x806, 0x809, 0x900};
    for (size_t i = 0; i < BASE_ARRAY_LEN(sms); i++) {
        fake *f = fake_new(sms[i], HCQ_QUEUE_COPY);
        cr_assert_eq(f->nv.path.ce, NV_CE_REL32);
        cr_assert_eq(nv_rec_signal(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(0x900000009ull)), HCQ_OK);
        const uint32_t two[] = {0x20038090, 0x10, 0x40, 9, 0x200180C0, 0x14, 0x20038090, 0x10, 0x44, 9, 0x200180C0, 0x0C};
        expect(&rec, two, BASE_ARRAY_LEN(two));
        fake_free(f);
        f = fake_new(sms[i], HCQ_QUEUE_COPY);
        f->nv.path.ce = NV_CE_REL64;
        cr_assert_eq(nv_rec_signal(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(0x900000009ull)), HCQ_OK);
        const uint32_t one[] = {0x20048090, 0x10, 0x40, 9, 9, /* SET_SEMAPHORE_A/B, PAYLOAD, PAYLOAD_UPPER */
                                0x200180C0, 0x08000014};    /* LAUNCH_DMA: flush, four words, payload size 64 */
        expect(&rec, one, BASE_ARRAY_LEN(one));
        fake_free(f);
    }
}

/* waits: ACQ_CIRC_GEQ on Hopper by default (the proven stack's; the only
 * GEQ clc86f.h lists), ACQ_STRICT_GEQ on the alternative path and on the
 * Ampere channel class, which documents it (clc56f.h) */
Test(nv_packets, waits_by_path_and_family)
{
    fake *f = fake_new(0x900, HCQ_QUEUE_COMPUTE);
    cr_assert_eq(nv_rec_wait(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(5)), HCQ_OK);
    f->nv.path.acquire = NV_ACQ_STRICT_GEQ64;
    cr_assert_eq(nv_rec_wait(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(5)), HCQ_OK);
    const uint32_t want[] = {0x20050017, 0x40, 0x10, 5, 0, 0x01000003, 0x20050017, 0x40, 0x10, 5, 0, 0x01000002};
    expect(&rec, want, BASE_ARRAY_LEN(want));
    fake_free(f);
    f = fake_new(0x809, HCQ_QUEUE_COMPUTE);
    cr_assert_eq(nv_rec_wait(&rec, HCQ_IMM(0x1000000040ull), HCQ_IMM(5)), HCQ_OK);
    const uint32_t ada[] = {0x20050017, 0x40, 0x10, 5, 0, 0x01000002};
    expect(&rec, ada, BASE_ARRAY_LEN(ada));
    fake_free(f);
}

/* the decoder reads the same tables: names, fields, and a truncated stream */
Test(nv_packets, decoder_names_methods_and_qmd_fields)
{
    nv_set_object(&rec, NV_SUBCH_COMPUTE, HOPPER_COMPUTE_A);
    nv_sem_release(&rec, HCQ_IMM(0x1000002020ull), HCQ_IMM(7), true);
    nv_send_pcas(&rec, 0x1000001200ull);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const drv_decoder *d = drv_decoder_find("nv-gpfifo");
    cr_assert_not_null(d);
    T_OK(d->decode(HOPPER_COMPUTE_A, 0x1000, rec.dw, rec.ndw, f));
    fclose(f);
    cr_assert(strstr(text, "NVC86F_SET_OBJECT") && strstr(text, "(HOPPER_COMPUTE_A)") &&
                  strstr(text, "NVC86F_SEM_EXECUTE") &&
                  strstr(text, "(OPERATION=RELEASE RELEASE_WFI PAYLOAD_SIZE=64BIT RELEASE_TIMESTAMP)") &&
                  strstr(text, "(semaphore 0x1000002020)") && strstr(text, "NVCBC0_SEND_PCAS_A") &&
                  strstr(text, "(QMD at 0x1000001200)") &&
                  strstr(text, "NVCBC0_SEND_SIGNALING_PCAS2_B") && strstr(text, "PCAS_ACTION=PREFETCH_SCHEDULE"),
              "%s", text);
    free(text);
    f = open_memstream(&text, &len);
    T_FAILS(d->decode(HOPPER_COMPUTE_A, 0x1000, rec.dw, 4, f), HCQ_EFORMAT); /* cut inside the semaphore */
    fclose(f);
    free(text);
    uint32_t q[NV_QMD_MAX_DW];
    fill(q, NV_QMD_V04);
    f = open_memstream(&text, &len);
    T_OK(drv_decoder_find("nv-qmd")->decode(HOPPER_COMPUTE_A, 0x2000, q, NV_QMD_V04_BYTES / 4, f));
    fclose(f);
    cr_assert(strstr(text, "GRID_WIDTH = 0x1000") && strstr(text, "RELEASE_PAYLOAD_LOWER(0) = 0x2"), "%s", text);
    free(text);
}
