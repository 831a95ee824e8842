/* The AMD ISA executor's matrix cores: the kernels of
 * tests/corpus/hip/mma.hip (clang's __builtin_amdgcn_wmma_*_w32 on
 * gfx1100, and _w64 from mma_w64.hip built for wave64;
 * __builtin_amdgcn_mfma_f32_16x16x16f16, _32x32x8f16 and
 * _16x16x16bf16_1k on gfx90a and gfx942, and an MFMA pair through inline
 * assembly with the accumulator in AGPRs), built by clang -x hip, loaded
 * with hcq_program_load_kernel and run on the matching mock models, every
 * element compared bit for bit with a scalar reference written here from
 * the ISA guides' definition (D = A * B + C) and the model
 * docs/architecture.md states: products exact, summed into C in k order,
 * each step one f32 fma rounded to nearest even; a NaN result the quiet
 * NaN 0x7fc00000. Also: WMMA or MFMA with part of EXEC is an
 * illegal-instruction error naming the instruction. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "mma_ref.h"
#include "hiptest.h"

static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}
TestSuite(amd_isa_mma, .fini = teardown, .timeout = 240);

enum { TILES = 2 }; /* one wave per block, one tile per wave */

/* ** the reference's own conversions (not the executor's): tests/support/mma_ref.h, and the canonical NaN */
static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return f != f ? 0x7fc00000u : u;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
/* many magnitudes and both signs; tile 1 also gets zeros, infinities, NaN and subnormals */
static uint16_t rnd16(uint64_t *s, bool bf16, unsigned tile)
{
    uint64_t r = rnd(s);
    if (tile == 1 && r % 16 == 0) {
        static const uint16_t h[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff};
        static const uint16_t b[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x807f, 0x7f7f};
        return bf16 ? b[(r >> 8) % 8] : h[(r >> 8) % 8];
    }
    uint16_t sign = (uint16_t)((r >> 20 & 1) << 15);
    if (bf16) return (uint16_t)(sign | (((r >> 21) % 160 + 48) << 7) | (r >> 40 & 0x7f));
    return (uint16_t)(sign | (((r >> 21) % 24 + 4) << 10) | (r >> 40 & 0x3ff));
}

typedef struct {
    unsigned M, N, K;
    uint16_t a[TILES][256], b[TILES][256];
    float c[TILES][1024];
} inputs;

static void make_inputs(inputs *in, unsigned M, unsigned N, unsigned K, bool bf16, uint64_t seed)
{
    uint64_t s = seed;
    in->M = M, in->N = N, in->K = K;
    for (unsigned w = 0; w < TILES; w++) {
        for (unsigned i = 0; i < M * K; i++) in->a[w][i] = rnd16(&s, bf16, w);
        for (unsigned i = 0; i < K * N; i++) in->b[w][i] = rnd16(&s, bf16, w);
        for (unsigned i = 0; i < M * N; i++)
            in->c[w][i] = ldexpf((float)(int32_t)(rnd(&s) >> 40) - (float)(1 << 23), (int)(rnd(&s) % 40) - 30);
    }
}

/* D[m][n] = C[m][n]; for k in order: D = fma(A[m][k], B[k][n], D); `times` such products in a row */
static uint32_t ref(const inputs *in, bool bf16, unsigned w, unsigned m, unsigned n, unsigned times)
{
    float d = in->c[w][m * in->N + n];
    for (unsigned t = 0; t < times; t++)
        for (unsigned k = 0; k < in->K; k++) {
            uint16_t x = in->a[w][m * in->K + k], y = in->b[w][k * in->N + n];
            d = fmaf(bf16 ? tref_bf16_val(x) : tref_f16_val(x), bf16 ? tref_bf16_val(y) : tref_f16_val(y), d);
        }
    return bits_of(d);
}

typedef struct {
    hcq_device *d;
    void *bin;
    size_t size;
    const char *arch;
} model;

static model open_model(const char *arch, const char *file, bool w64)
{
    model m = {.arch = arch};
    m.bin = t_build_hip(file, arch, w64, &m.size);
    m.d = t_open_amd_isa(arch);
    return m;
}
static void close_model(model *m)
{
    T_OK(hcq_device_close(m->d));
    free(m->bin);
}

/* runs kernel(a, b, c, d) with one wave per tile; false (why filled) if the dispatch failed */
static bool run(model *m, const char *kernel, unsigned wave, const inputs *in, uint32_t *out, char *why, size_t wsize)
{
    hcq_program *p = hcq_program_load_kernel(m->d, m->bin, m->size, kernel);
    cr_assert_not_null(p, "%s on %s: %s", kernel, m->arch, hcq_error_message());
    hcq_buffer *ba = t_buffer_from(m->d, in->a, sizeof in->a), *bb = t_buffer_from(m->d, in->b, sizeof in->b),
               *bc = t_buffer_from(m->d, in->c, sizeof in->c),
               *bd = T_NONNULL(hcq_buffer_alloc(m->d, sizeof in->c, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bd)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(TILES, wave)));
    bool ok = hcq_device_synchronize(m->d) == HCQ_OK;
    if (ok) t_read(bd, out, sizeof in->c);
    else mock_amd_last_error(0, why, wsize);
    hcq_buffer_free(ba), hcq_buffer_free(bb), hcq_buffer_free(bc), hcq_buffer_free(bd);
    hcq_program_free(p);
    return ok;
}

static void check(model *m, const char *kernel, unsigned wave, unsigned M, unsigned N, unsigned K, bool bf16,
                  unsigned times)
{
    inputs *in = malloc(sizeof *in);
    static uint32_t out[TILES * 1024];
    char why[1024];
    make_inputs(in, M, N, K, bf16, 0x2545f4914f6cdd1dull ^ (uint64_t)(M * 131 + K * 7 + bf16 + times * 3));
    cr_assert(run(m, kernel, wave, in, out, why, sizeof why), "%s on %s: %s", kernel, m->arch, why);
    for (unsigned w = 0; w < TILES; w++)
        for (unsigned i = 0; i < M; i++)
            for (unsigned n = 0; n < N; n++) {
                uint32_t want = ref(in, bf16, w, i, n, times), got = out[w * 1024 + i * N + n];
                cr_assert_eq(got, want, "%s on %s: tile %u, D[%u][%u] = 0x%08x, want 0x%08x", kernel, m->arch, w, i,
                             n, got, want);
            }
    free(in);
}

Test(amd_isa_mma, gfx1100_wmma_wave32)
{
    model m = open_model("gfx1100", "mma.hip", false);
    check(&m, "wmma_f16_w32", 32, 16, 16, 16, false, 1);
    check(&m, "wmma_bf16_w32", 32, 16, 16, 16, true, 1);
    close_model(&m);
}

static void mfma(const char *arch)
{
    model m = open_model(arch, "mma.hip", false);
    check(&m, "mfma_16x16x16_f16", 64, 16, 16, 16, false, 1);
    check(&m, "mfma_16x16x16_bf16", 64, 16, 16, 16, true, 1);
    check(&m, "mfma_32x32x8_f16", 64, 32, 32, 8, false, 1);
    check(&m, "mfma_agpr_twice", 64, 16, 16, 16, false, 2); /* C and D in AGPRs, two MFMAs in a row */
    close_model(&m);
}
Test(amd_isa_mma, gfx90a_mfma) { mfma("gfx90a"); }
Test(amd_isa_mma, gfx942_mfma) { mfma("gfx942"); }

/* WMMA by part of the wave (EXEC not full): refused, naming the instruction */
Test(amd_isa_mma, wmma_with_part_of_exec_is_an_illegal_instruction)
{
    model m = open_model("gfx1100", "mma.hip", false);
    inputs *in = calloc(1, sizeof *in);
    for (int i = 0; i < 32; i++) in->a[0][i] = (uint16_t)i; /* odd lanes take the branch */
    static uint32_t out[TILES * 1024];
    char why[1024];
    cr_assert(!run(&m, "wmma_diverged", 32, in, out, why, sizeof why), "a WMMA with half of EXEC ran");
    cr_assert(strstr(why, "illegal instruction") && strstr(why, "v_wmma_f32_16x16x16_f16") && strstr(why, "EXEC") &&
              strstr(why, "wmma_diverged"), "%s", why);
    free(in);
    close_model(&m);
}

/* MFMA likewise (the mock models it only with a full EXEC) */
Test(amd_isa_mma, mfma_with_part_of_exec_is_an_illegal_instruction)
{
    model m = open_model("gfx942", "mma.hip", false);
    inputs *in = calloc(1, sizeof *in);
    for (int i = 0; i < 64; i++) in->a[0][i] = (uint16_t)i;
    static uint32_t out[TILES * 1024];
    char why[1024];
    cr_assert(!run(&m, "mfma_diverged", 64, in, out, why, sizeof why), "an MFMA with half of EXEC ran");
    cr_assert(strstr(why, "illegal instruction") && strstr(why, "v_mfma_f32_16x16x16_f16") && strstr(why, "EXEC") &&
              strstr(why, "mfma_diverged"), "%s", why);
    free(in);
    close_model(&m);
}

Test(amd_isa_mma, gfx1100_wmma_wave64)
{
    model m = open_model("gfx1100", "mma_w64.hip", true);
    check(&m, "wmma_f16_w64", 64, 16, 16, 16, false, 1);
    close_model(&m);
}
