/* The SASS executor's tensor cores: the kernels of tests/corpus/mma.cu
 * (inline-PTX mma.sync.m16n8k16 with f16 and bf16 inputs, f32 and f16
 * accumulators, ldmatrix .x1/.x2.trans/.x4), built by nvcc for each
 * model's SM and run on the H100 (sm_90) and A100 (sm_80) mocks, the RTX
 * 4090 (sm_89) and RTX 3090 (sm_86) in CI's long form (HCQ_TEST_LONG=1),
 * every element compared bit for bit with a scalar reference written
 * here from the PTX ISA's definition (D = A * B + C) and the model
 * docs/architecture.md states: products exact, summed into C in k order,
 * each step one f32 fma rounded to nearest even; NaN results the
 * canonical 0x7fffffff; an f16 accumulator rounded once at the end.
 * Also: a diverged warp at mma.sync is an illegal-instruction error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/sass.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "mma_ref.h"
#include "nvcc_build.h"

static void setup(void)
{
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
}
static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    unsetenv("HCQ_MOCK_CHECK");
    base_env_reload();
}
TestSuite(sass_mma, .init = setup, .fini = teardown, .timeout = 300);

enum { TILES = 4 }; /* 2 blocks of 2 warps, one 16x8 tile each */

/* ** the reference's own conversions (not the executor's): tests/support/mma_ref.h, and the canonical NaN */
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return f != f ? 0x7fffffffu : u;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
/* values of many magnitudes and both signs, so the sum's order and rounding show; tile 3 also gets the
 * special values (zeros, infinities, NaN, subnormals) */
static uint16_t rnd16(uint64_t *s, bool bf16, unsigned tile)
{
    uint64_t r = rnd(s);
    if (tile == 3 && r % 16 == 0) {
        static const uint16_t h[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff};
        static const uint16_t b[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x807f, 0x7f7f};
        return bf16 ? b[(r >> 8) % 8] : h[(r >> 8) % 8];
    }
    uint16_t sign = (uint16_t)((r >> 20 & 1) << 15);
    if (bf16) return (uint16_t)(sign | (((r >> 21) % 160 + 48) << 7) | (r >> 40 & 0x7f)); /* 2^-79 .. 2^80 */
    return (uint16_t)(sign | (((r >> 21) % 24 + 4) << 10) | (r >> 40 & 0x3ff));       /* 2^-11 .. 2^12 */
}

typedef struct {
    uint16_t a[TILES][256], b[TILES][128], c16[TILES][128];
    float c[TILES][128];
} inputs;

static void make_inputs(inputs *in, bool bf16, uint64_t seed)
{
    uint64_t s = seed;
    for (unsigned w = 0; w < TILES; w++) {
        for (int i = 0; i < 256; i++) in->a[w][i] = rnd16(&s, bf16, w);
        for (int i = 0; i < 128; i++) in->b[w][i] = rnd16(&s, bf16, w);
        for (int i = 0; i < 128; i++) {
            in->c16[w][i] = rnd16(&s, false, w);
            in->c[w][i] = ldexpf((float)(int32_t)(rnd(&s) >> 40) - (float)(1 << 23), (int)(rnd(&s) % 40) - 30);
        }
    }
}

/* D[m][n] = C[m][n]; for k = 0..15: D = fma(A[m][k], B[k][n], D) */
static float ref_elem(const inputs *in, bool bf16, unsigned w, int m, int n, float c)
{
    float d = c;
    for (int k = 0; k < 16; k++) {
        uint16_t x = in->a[w][m * 16 + k], y = in->b[w][k * 8 + n];
        d = fmaf(bf16 ? tref_bf16_val(x) : tref_f16_val(x), bf16 ? tref_bf16_val(y) : tref_f16_val(y), d);
    }
    return d;
}

static hcq_device *open_model(const char *cfg)
{
    T_OK(mock_configure(cfg));
    hcq_device *d = hcq_device_open("NV:0");
    cr_assert_not_null(d, "%s", hcq_error_message());
    return d;
}

/* runs `kernel` (a, b, c, d) on the tiles; out: 128 dwords per tile */
static void run(hcq_device *dev, const void *bin, size_t size, const char *kernel, const inputs *in, bool c16,
                uint32_t *out, size_t out_bytes)
{
    hcq_program *p = hcq_program_load_kernel(dev, bin, size, kernel);
    cr_assert_not_null(p, "%s: %s", kernel, hcq_error_message());
    hcq_buffer *ba = t_buffer_from(dev, in->a, sizeof in->a), *bb = t_buffer_from(dev, in->b, sizeof in->b),
               *bc = c16 ? t_buffer_from(dev, in->c16, sizeof in->c16) : t_buffer_from(dev, in->c, sizeof in->c),
               *bd = T_NONNULL(hcq_buffer_alloc(dev, out_bytes, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bd)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(TILES / 2, 64)));
    hcq_status s = hcq_device_synchronize(dev);
    if (s) {
        char err[1024];
        mock_nv_last_error(0, err, sizeof err);
        cr_assert_fail("%s: %s (%s)", kernel, hcq_error_message(), err);
    }
    t_read(bd, out, out_bytes);
    T_OK(hcq_buffer_free(ba));
    T_OK(hcq_buffer_free(bb));
    T_OK(hcq_buffer_free(bc));
    T_OK(hcq_buffer_free(bd));
    T_OK(hcq_program_free(p));
}

static void check_f32(const char *cfg, const char *kernel, const inputs *in, bool bf16, const uint32_t *out)
{
    for (unsigned w = 0; w < TILES; w++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                uint32_t want = f32_bits(ref_elem(in, bf16, w, m, n, in->c[w][m * 8 + n])), got = out[w * 128 + m * 8 + n];
                cr_assert_eq(got, want, "%s on %s: tile %u, D[%d][%d] = 0x%08x, want 0x%08x", kernel, cfg, w, m, n,
                             got, want);
            }
}

static void all_forms(const char *cfg, unsigned sm)
{
    t_need_nvdisasm();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/mma.cu", sm, &size);
    hcq_device *dev = open_model(cfg);
    inputs *in = malloc(sizeof *in);
    uint32_t out[TILES * 128];
    for (int bf16 = 0; bf16 < 2; bf16++) {
        make_inputs(in, bf16, 0x9e3779b97f4a7c15ull + (uint64_t)bf16 * 77 + sm);
        const char *k = bf16 ? "mma_bf16_f32" : "mma_f16_f32";
        run(dev, bin, size, k, in, false, out, sizeof out);
        check_f32(cfg, k, in, bf16, out);
        if (!bf16) {
            run(dev, bin, size, "mma_ldmatrix_f16", in, false, out, sizeof out);
            check_f32(cfg, "mma_ldmatrix_f16", in, false, out);
            /* C = 0 (HMMA's accumulator RZ): the sum starts from +0 */
            memset(in->c, 0, sizeof in->c);
            run(dev, bin, size, "mma_f16_zero_c", in, false, out, sizeof out);
            check_f32(cfg, "mma_f16_zero_c", in, false, out);
        }
    }
    /* the f16 accumulator: C widened exactly, the sum as above, D rounded once to f16 */
    make_inputs(in, false, 4242 + sm);
    uint16_t d16[TILES * 128];
    run(dev, bin, size, "mma_f16_f16", in, true, (uint32_t *)d16, sizeof d16);
    for (unsigned w = 0; w < TILES; w++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                uint16_t want = tref_f16_bits(ref_elem(in, false, w, m, n, tref_f16_val(in->c16[w][m * 8 + n]))),
                         got = d16[w * 128 + m * 8 + n];
                cr_assert_eq(got, want, "mma_f16_f16 on %s: tile %u, D[%d][%d] = 0x%04x, want 0x%04x", cfg, w, m, n,
                             got, want);
            }
    free(in);
    T_OK(hcq_device_close(dev));
    free(bin);
}

Test(sass_mma, h100_sm90) { all_forms("nv=H100", 90); }
Test(sass_mma, a100_sm80) { all_forms("nv=A100", 80); }
static void long_only(void)
{
    if (!getenv("HCQ_TEST_LONG")) cr_skip_test("HCQ_TEST_LONG=1 (CI) runs the tensor-core kernels on sm_89 and sm_86 too");
}
Test(sass_mma, rtx4090_sm89)
{
    long_only();
    all_forms("nv=RTX4090", 89);
}
Test(sass_mma, rtx3090_sm86)
{
    long_only();
    all_forms("nv=RTX3090", 86);
}

/* ldmatrix .x1 alone, against the PTX ISA's layout: lane 4g + t gets row g, columns 2t and 2t + 1; under the
 * memory checker, which sees the shared-memory rows it reads */
Test(sass_mma, ldmatrix_x1_layout_under_memcheck)
{
    t_need_nvdisasm();
    setenv("HCQ_MOCK_CHECK", "memcheck", 1);
    base_env_reload();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/mma.cu", 90, &size);
    hcq_device *dev = open_model("nv=H100");
    hcq_program *p = hcq_program_load_kernel(dev, bin, size, "ldmatrix_x1");
    cr_assert_not_null(p, "%s", hcq_error_message());
    uint16_t a[64];
    for (int i = 0; i < 64; i++) a[i] = (uint16_t)(0x100 * (i / 8) + i % 8); /* row r, column c: 0xRR0C */
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bo = T_NONNULL(hcq_buffer_alloc(dev, 128, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(ba), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    T_OK(hcq_device_synchronize(dev));
    uint32_t out[32];
    t_read(bo, out, sizeof out);
    for (uint32_t lane = 0; lane < 32; lane++) {
        uint32_t g = lane / 4, t = lane % 4, want = (0x100 * g + 2 * t) | (0x100 * g + 2 * t + 1) << 16;
        cr_assert_eq(out[lane], want, "lane %u: 0x%08x, want 0x%08x", lane, out[lane], want);
    }
    T_OK(hcq_device_close(dev));
    free(bin);
}

/* mma.sync by part of a warp: the PTX ISA leaves it undefined; the executor stops the kernel naming HMMA, the
 * lanes and the kernel */
Test(sass_mma, a_diverged_warp_at_hmma_is_an_error)
{
    t_need_nvdisasm();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/mma.cu", 90, &size);
    hcq_device *dev = open_model("nv=H100");
    hcq_program *p = hcq_program_load_kernel(dev, bin, size, "mma_diverged");
    cr_assert_not_null(p, "%s", hcq_error_message());
    uint32_t a[32];
    for (int i = 0; i < 32; i++) a[i] = (uint32_t)i; /* odd lanes take the branch */
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bd = T_NONNULL(hcq_buffer_alloc(dev, 128, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(ba), hcq_arg_buffer(bd)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "illegal instruction") && strstr(err, "HMMA") && strstr(err, "0xaaaaaaaa") &&
              strstr(err, "mma_diverged"), "%s", err);
    hcq_device_close(dev);
    free(bin);
}

/* the decoder on nvdisasm's text: the forms the executor runs, and the tensor-core modifiers elsewhere (or an
 * HMMA shape it does not run) left unknown, so running them is an illegal instruction */
Test(sass_mma, the_decoder_reads_hmma_and_ldsm)
{
    const char *text = "        /*0000*/                   HMMA.16816.F32.BF16 R16, R4, R12.reuse, RZ ;\n"
                       "        /*0010*/                   LDSM.16.MT88.2 R12, [R12+0x200] ;\n"
                       "        /*0020*/                   LDSM.16.M88.4 R8, [R0+UR4] ;\n"
                       "        /*0030*/                   HMMA.1688.F32 R4, R4, R2, RZ ;\n"
                       "        /*0040*/                   IMAD.16816 R1, R2, R3, R4 ;\n"
                       "        /*0050*/                   LDSM.16.M88 R7, [R6] ;\n";
    sass_prog *p;
    T_OK(sass_parse(text, 90, 6, NULL, &p));
    const sass_insn *i = p->insns;
    cr_assert_eq(i[0].op, SASS_OP_HMMA);
    cr_assert(sass_has(&i[0], SASS_M_16816));
    cr_assert_eq(i[0].ntypes, 2);
    cr_assert_eq(i[0].types[0], SASS_M_F32);
    cr_assert_eq(i[0].types[1], SASS_M_BF16);
    cr_assert_eq(i[0].nops, 4);
    cr_assert_eq(i[0].o[2].reg, 12, ".reuse is a hint");
    cr_assert_eq(i[0].o[3].reg, 255, "RZ");
    cr_assert_eq(i[1].op, SASS_OP_LDSM);
    cr_assert(sass_has(&i[1], SASS_M_MT88) && sass_has(&i[1], SASS_M_MAT2) && sass_has(&i[1], SASS_M_U16));
    cr_assert_eq(i[1].o[1].kind, SASS_K_MEM);
    cr_assert_eq(i[1].o[1].imm, 0x200);
    cr_assert(sass_has(&i[2], SASS_M_M88) && sass_has(&i[2], SASS_M_MAT4));
    cr_assert_eq(i[2].o[1].flags & SASS_F_IDX_UR, SASS_F_IDX_UR);
    cr_assert_eq(i[3].op, SASS_OP_UNKNOWN, "HMMA.1688 is not a form the executor runs");
    cr_assert_eq(i[4].op, SASS_OP_UNKNOWN, "a tensor-core modifier on another op");
    cr_assert_eq(i[5].op, SASS_OP_LDSM);
    cr_assert(!sass_has(&i[5], SASS_M_MAT2) && !sass_has(&i[5], SASS_M_MAT4), ".x1");
    sass_prog_free(p);
}
