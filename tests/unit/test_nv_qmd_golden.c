/* Golden QMD tests written from NVIDIA's public class documentation, not
 * from hcq's field table: the bit ranges below are copied by hand from
 * open-gpu-doc classes/compute/clc6c0qmd.h (NVC6C0_QMDV03_00_*, the same
 * in clcbc0qmd.h's NVCBC0_QMDV03_00_*) and clcbc0qmd.h (NVCBC0_QMDV04_00_*),
 * as MW(hi:lo) there. Every field the encoders write is checked two ways:
 * setting it through the field table sets exactly the documented bits, and
 * the loader's QMD template holds the values it should at the documented
 * bits (read here bit by bit, not with nv_qmd_get). So a wrong row in
 * drivers/nv/nv_hw.c cannot pass through the encoder, the mock and the
 * decoder together. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/base.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

typedef struct doc_field {
    nv_qmd_id f;
    unsigned i;      /* index (constant buffers, releases) */
    unsigned hi, lo; /* MW(hi:lo) */
} doc_field;

/* NVC6C0_QMDV03_00 (clc6c0qmd.h) */
static const doc_field v03[] = {
    {NV_QMD_GROUP_ID, 0, 133, 128},
    {NV_QMD_SM_GLOBAL_CACHING_ENABLE, 0, 134, 134},
    {NV_QMD_INVALIDATE_TEXTURE_HEADER_CACHE, 0, 186, 186},
    {NV_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE, 0, 187, 187},
    {NV_QMD_INVALIDATE_TEXTURE_DATA_CACHE, 0, 188, 188},
    {NV_QMD_INVALIDATE_SHADER_DATA_CACHE, 0, 189, 189},
    {NV_QMD_INVALIDATE_INSTRUCTION_CACHE, 0, 190, 190},
    {NV_QMD_INVALIDATE_SHADER_CONSTANT_CACHE, 0, 191, 191},
    {NV_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, 0, 287, 256},
    {NV_QMD_CWD_MEMBAR_TYPE, 0, 369, 368},
    {NV_QMD_API_VISIBLE_CALL_LIMIT, 0, 378, 378},
    {NV_QMD_SAMPLER_INDEX, 0, 382, 382},
    {NV_QMD_GRID_WIDTH, 0, 415, 384}, /* CTA_RASTER_WIDTH */
    {NV_QMD_GRID_HEIGHT, 0, 431, 416},
    {NV_QMD_GRID_DEPTH, 0, 463, 448},
    {NV_QMD_SHARED_MEMORY_SIZE, 0, 561, 544},
    {NV_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE, 0, 567, 562},
    {NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE, 0, 574, 569},
    {NV_QMD_VERSION, 0, 579, 576},
    {NV_QMD_MAJOR_VERSION, 0, 583, 580},
    {NV_QMD_CTA_THREAD_DIMENSION0, 0, 607, 592},
    {NV_QMD_CTA_THREAD_DIMENSION1, 0, 623, 608},
    {NV_QMD_CTA_THREAD_DIMENSION2, 0, 639, 624},
    {NV_QMD_CONSTANT_BUFFER_VALID, 0, 640, 640},
    {NV_QMD_CONSTANT_BUFFER_VALID, 3, 643, 643},
    {NV_QMD_REGISTER_COUNT, 0, 656, 648}, /* REGISTER_COUNT_V */
    {NV_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE, 0, 662, 657},
    {NV_QMD_SHADER_LOCAL_MEMORY_LOW_SIZE, 0, 759, 736},
    {NV_QMD_BARRIER_COUNT, 0, 767, 763},
    {NV_QMD_RELEASE_ADDRESS_LOWER, 0, 799, 768},
    {NV_QMD_RELEASE_ADDRESS_UPPER, 0, 807, 800},
    {NV_QMD_RELEASE_MEMBAR_TYPE, 0, 819, 819},
    {NV_QMD_RELEASE_ENABLE, 0, 823, 823},
    {NV_QMD_RELEASE_PAYLOAD64B, 0, 829, 829},
    {NV_QMD_RELEASE_STRUCTURE_SIZE, 0, 831, 830},
    {NV_QMD_RELEASE_PAYLOAD_LOWER, 0, 863, 832},
    {NV_QMD_RELEASE_PAYLOAD_UPPER, 0, 895, 864},
    {NV_QMD_RELEASE_ADDRESS_LOWER, 1, 927, 896},
    {NV_QMD_RELEASE_ENABLE, 1, 951, 951},
    {NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 0, 1055, 1024},
    {NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, 1072, 1056},
    {NV_QMD_CONSTANT_BUFFER_INVALIDATE, 0, 1074, 1074},
    {NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, 1087, 1075},
    {NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 2, 1183, 1152},
    {NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 2, 1215, 1203},
    {NV_QMD_PROGRAM_ADDRESS_LOWER, 0, 1567, 1536},
    {NV_QMD_PROGRAM_ADDRESS_UPPER, 0, 1584, 1568},
    {NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0, 1623, 1600},
    {NV_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 0, 1640, 1632},
    {NV_QMD_PROGRAM_PREFETCH_SIZE, 0, 1649, 1641},
    {NV_QMD_SASS_VERSION, 0, 1663, 1656},
    {NV_QMD_RELEASE_ADDRESS_LOWER, 2, 1695, 1664},
    {NV_QMD_RELEASE_ENABLE, 2, 1719, 1719},
    {NV_QMD_RELEASE_STRUCTURE_SIZE, 2, 1727, 1726},
};

/* NVCBC0_QMDV04_00 (clcbc0qmd.h) */
static const doc_field v04[] = {
    {NV_QMD_GROUP_ID, 0, 21, 16},
    {NV_QMD_TYPE, 0, 25, 23},
    {NV_QMD_RELEASE_ENABLE, 0, 320, 320},
    {NV_QMD_RELEASE_STRUCTURE_SIZE, 0, 322, 321},
    {NV_QMD_RELEASE_MEMBAR_TYPE, 0, 323, 323},
    {NV_QMD_RELEASE_PAYLOAD64B, 0, 332, 332},
    {NV_QMD_RELEASE_ENABLE, 2, 352, 352},
    {NV_QMD_RELEASE_PAYLOAD64B, 1, 348, 348},
    {NV_QMD_CONSTANT_BUFFER_VALID, 0, 416, 416},
    {NV_QMD_CONSTANT_BUFFER_INVALIDATE, 0, 419, 419},
    {NV_QMD_CONSTANT_BUFFER_VALID, 5, 436, 436},
    {NV_QMD_SHADER_LOCAL_MEMORY_LOW_SIZE, 0, 535, 512},
    {NV_QMD_SASS_VERSION, 0, 543, 536},
    {NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0, 567, 544},
    {NV_QMD_API_VISIBLE_CALL_LIMIT, 0, 568, 568},
    {NV_QMD_SAMPLER_INDEX, 0, 569, 569},
    {NV_QMD_VERSION, 0, 579, 576}, /* QMD_MINOR_VERSION */
    {NV_QMD_MAJOR_VERSION, 0, 583, 580},
    {NV_QMD_SHARED_MEMORY_SIZE, 0, 601, 584},
    {NV_QMD_INVALIDATE_TEXTURE_HEADER_CACHE, 0, 602, 602},
    {NV_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE, 0, 603, 603},
    {NV_QMD_INVALIDATE_TEXTURE_DATA_CACHE, 0, 604, 604},
    {NV_QMD_INVALIDATE_SHADER_DATA_CACHE, 0, 605, 605},
    {NV_QMD_INVALIDATE_INSTRUCTION_CACHE, 0, 606, 606},
    {NV_QMD_INVALIDATE_SHADER_CONSTANT_CACHE, 0, 607, 607},
    {NV_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE, 0, 613, 608},
    {NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE, 0, 619, 614},
    {NV_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE, 0, 625, 620},
    {NV_QMD_RELEASE_ADDRESS_LOWER, 0, 671, 640}, /* RELEASE_SEMAPHORE0_ADDR_LOWER */
    {NV_QMD_RELEASE_ADDRESS_UPPER, 0, 696, 672},
    {NV_QMD_RELEASE_PAYLOAD_LOWER, 0, 735, 704},
    {NV_QMD_RELEASE_PAYLOAD_UPPER, 0, 767, 736},
    {NV_QMD_RELEASE_ADDRESS_LOWER, 1, 799, 768},
    {NV_QMD_RELEASE_ADDRESS_UPPER, 1, 824, 800},
    {NV_QMD_RELEASE_PAYLOAD_UPPER, 2, 1023, 992},
    {NV_QMD_GRID_WIDTH, 0, 1055, 1024},
    {NV_QMD_GRID_HEIGHT, 0, 1071, 1056},
    {NV_QMD_GRID_DEPTH, 0, 1103, 1088},
    {NV_QMD_CWD_MEMBAR_TYPE, 0, 1137, 1136},
    {NV_QMD_CTA_THREAD_DIMENSION0, 0, 1167, 1152},
    {NV_QMD_CTA_THREAD_DIMENSION1, 0, 1183, 1168},
    {NV_QMD_CTA_THREAD_DIMENSION2, 0, 1199, 1184},
    {NV_QMD_REGISTER_COUNT, 0, 1208, 1200},
    {NV_QMD_BARRIER_COUNT, 0, 1215, 1211},
    {NV_QMD_PROGRAM_ADDRESS_LOWER, 0, 1247, 1216},
    {NV_QMD_PROGRAM_ADDRESS_UPPER, 0, 1272, 1248},
    {NV_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, 0, 1375, 1344},
    {NV_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 0, 1392, 1376},
    {NV_QMD_PROGRAM_PREFETCH_SIZE, 0, 1401, 1393},
    {NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 0, 1567, 1536}, /* _SHIFTED6 */
    {NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, 1586, 1568},
    {NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, 1599, 1587},
    {NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 7, 1567 + 7 * 64, 1536 + 7 * 64},
};

/* bits hi..lo of the QMD, read one bit at a time */
static uint64_t doc_bits(const uint32_t *q, unsigned hi, unsigned lo)
{
    uint64_t v = 0;
    for (unsigned b = hi + 1; b-- > lo;) v = v << 1 | (q[b / 32] >> (b % 32) & 1u);
    return v;
}

static void exactly_the_documented_bits(int ver, const doc_field *d, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t q[NV_QMD_MAX_DW] = {0};
        nv_qmd_set(q, ver, d[k].f, d[k].i, ~0ull);
        for (unsigned b = 0; b < nv_qmd_bytes(ver) * 8; b++) {
            bool set = q[b / 32] >> (b % 32) & 1u, want = b >= d[k].lo && b <= d[k].hi;
            cr_assert_eq(set, want, "V0%d %s(%u): bit %u is %s; the documentation says MW(%u:%u)",
                         ver == NV_QMD_V04 ? 4 : 3, nv_qmd_fields[d[k].f].name, d[k].i, b, set ? "set" : "clear",
                         d[k].hi, d[k].lo);
        }
    }
}

Test(nv_qmd_golden, v03_fields_lie_where_clc6c0qmd_h_puts_them)
{
    exactly_the_documented_bits(NV_QMD_V03, v03, BASE_ARRAY_LEN(v03));
}

Test(nv_qmd_golden, v04_fields_lie_where_clcbc0qmd_h_puts_them)
{
    exactly_the_documented_bits(NV_QMD_V04, v04, BASE_ARRAY_LEN(v04));
}

static const doc_field *doc(const doc_field *d, size_t n, nv_qmd_id f)
{
    for (size_t k = 0; k < n; k++)
        if (d[k].f == f && d[k].i == 0) return &d[k];
    cr_assert_fail("no documented position for %s", nv_qmd_fields[f].name);
    return NULL;
}

/* the loader's template, read at the documented bits: what each field
 * should hold for a kernel it loaded (H100 with V04 and with V03) */
static void template_holds(const char *cfg, int ver, const doc_field *d, size_t n, uint32_t major, uint32_t sass)
{
    sys_set(mock_sys());
    T_OK(mock_configure(cfg));
    hcq_device *dev = T_NONNULL(hcq_device_open("NV:0"));
    cr_assert_eq(nv_of(dev)->qmd_ver, ver);
    hcq_program *p = t_load(dev, t_k_reverse(false)); /* uses shared memory and a barrier */
    const nv_prog *np = p->priv;
    const uint32_t *q = np->qmd;
#define DOC(f) doc_bits(q, doc(d, n, NV_QMD_##f)->hi, doc(d, n, NV_QMD_##f)->lo)
    cr_assert_eq(DOC(MAJOR_VERSION), major);
    cr_assert_eq(DOC(VERSION), 0);
    cr_assert_eq(DOC(SASS_VERSION), sass);
    cr_assert_eq(DOC(REGISTER_COUNT), p->info.registers);
    /* the system's KiB plus the kernel's, in 128-byte units */
    cr_assert_eq(DOC(SHARED_MEMORY_SIZE), base_align_up(1024 + p->info.local_bytes, 128));
    /* the smallest carve-out of 32/64/100 KiB holding it, as KiB / 4 + 1 */
    uint32_t kib = DOC(SHARED_MEMORY_SIZE) <= 32 * 1024 ? 32 : DOC(SHARED_MEMORY_SIZE) <= 64 * 1024 ? 64 : 100;
    cr_assert_eq(DOC(MIN_SM_CONFIG_SHARED_MEM_SIZE), kib / 4 + 1);
    cr_assert_eq(DOC(TARGET_SM_CONFIG_SHARED_MEM_SIZE), kib / 4 + 1);
    cr_assert_eq(DOC(MAX_SM_CONFIG_SHARED_MEM_SIZE), 100 / 4 + 1);
    /* no stack: the ABI's reserve above the stack pointer (the default path) */
    cr_assert_eq(DOC(SHADER_LOCAL_MEMORY_HIGH_SIZE), 0x240);
    cr_assert_eq(DOC(SHADER_LOCAL_MEMORY_LOW_SIZE), 0);
    cr_assert_eq(DOC(PROGRAM_ADDRESS_LOWER) | DOC(PROGRAM_ADDRESS_UPPER) << 32, np->code_va);
    cr_assert_eq(DOC(PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED), (uint32_t)(np->code_va >> 8));
    cr_assert_eq(DOC(GROUP_ID), 0x3f);
    cr_assert_eq(DOC(INVALIDATE_INSTRUCTION_CACHE), 1);
    cr_assert_eq(DOC(CONSTANT_BUFFER_VALID), 1);
    cr_assert_eq(DOC(CONSTANT_BUFFER_SIZE_SHIFTED4), base_align_up(np->cbuf0_bytes, 16) >> 4);
    /* the kernel synchronizes: the cubin's barrier count (1); IR kernels
     * in mock cubins declare theirs the same way */
    cr_assert_geq(DOC(BARRIER_COUNT), 1);
#undef DOC
    T_OK(hcq_program_free(p));
    T_OK(hcq_device_close(dev));
}

Test(nv_qmd_golden, the_loaders_v04_template_at_the_documented_bits)
{
    template_holds("", NV_QMD_V04, v04, BASE_ARRAY_LEN(v04), 4, 0x90);
}

Test(nv_qmd_golden, the_loaders_v03_template_at_the_documented_bits)
{
    template_holds("refuse=qmd-v4", NV_QMD_V03, v03, BASE_ARRAY_LEN(v03), 3, 0x90);
    template_holds("nv=A100", NV_QMD_V03, v03, BASE_ARRAY_LEN(v03), 3, 0x80);
}
