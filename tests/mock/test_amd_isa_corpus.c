/* Foreign HIP kernels (tests/corpus/hip/corpus.hip: a tiled matmul with
 * LDS, a row sum with shuffles, DPP and ds_swizzle, a block scan, a
 * histogram with LDS and global atomics whose returned values are
 * counted, a softmax with wave reductions, f16 and packed f16 math, a
 * kernel with a stack) built by clang for gfx1100 (wave32 and wave64),
 * gfx942 and gfx90a, loaded with hcq_program_load_kernel and run by the
 * mock's ISA executor (HCQ_MOCK_SHADER=isa) against C references. Skips,
 * saying why, where clang cannot build for the processor. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/cc.h"
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "hiptest.h"

TestSuite(amd_isa_corpus, .timeout = 240);

typedef struct ctx {
    hcq_device *d;
    void *bin;
    size_t size;
    unsigned wave;
    const char *arch;
} ctx;

static ctx open_model(const char *arch, bool w64)
{
    ctx c = {.arch = arch, .wave = !strcmp(arch, "gfx1100") && !w64 ? 32 : 64};
    c.bin = t_build_hip("corpus.hip", arch, w64, &c.size);
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
    char cfg[32];
    snprintf(cfg, sizeof cfg, "amd=%s", arch);
    T_OK(mock_configure(cfg));
    c.d = T_NONNULL(hcq_device_open("AMD:0"));
    cr_assert_str_eq(hcq_device_get_props(c.d)->target, arch);
    cr_assert(strstr(hcq_device_get_props(c.d)->shader, "ISA executor"), "shader: %s",
              hcq_device_get_props(c.d)->shader);
    return c;
}

static void close_model(ctx *c)
{
    T_OK(hcq_device_close(c->d));
    free(c->bin);
}

static hcq_program *kernel(ctx *c, const char *name)
{
    hcq_program *p = hcq_program_load_kernel(c->d, c->bin, c->size, name);
    cr_assert_not_null(p, "%s on %s: %s", name, c->arch, hcq_error_message());
    return p;
}

static hcq_buffer *buf(ctx *c, const void *data, size_t size)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(c->d, size, HCQ_MEM_DEVICE));
    if (data) T_OK(hcq_buffer_copyin(b, 0, data, size));
    else {
        void *z = calloc(1, size);
        T_OK(hcq_buffer_copyin(b, 0, z, size));
        free(z);
    }
    return b;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}
static float rndf(void) { return (float)(rnd() % 2001) / 1000.0f - 1.0f; }

static void matmul(ctx *c)
{
    enum { N = 37 };
    float A[N * N], B[N * N], C[N * N], R[N * N];
    for (int i = 0; i < N * N; i++) A[i] = rndf(), B[i] = rndf();
    for (int r = 0; r < N; r++)
        for (int q = 0; q < N; q++) {
            float acc = 0;
            for (int k = 0; k < N; k++) acc = fmaf(A[r * N + k], B[k * N + q], acc);
            R[r * N + q] = acc;
        }
    hcq_program *p = kernel(c, "matmul_tiled");
    hcq_buffer *a = buf(c, A, sizeof A), *b = buf(c, B, sizeof B), *o = buf(c, NULL, sizeof C);
    hcq_arg args[] = {hcq_arg_buffer(a), hcq_arg_buffer(b), hcq_arg_buffer(o), hcq_arg_i32(N)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_3d(3, 3, 1, 16, 16, 1)));
    t_read(o, C, sizeof C);
    for (int i = 0; i < N * N; i++) cr_assert_eq(C[i], R[i], "%s matmul_tiled C[%d] = %a, want %a", c->arch, i, C[i], R[i]);
    hcq_buffer_free(a), hcq_buffer_free(b), hcq_buffer_free(o);
    T_OK(hcq_program_free(p));
}

static void row_sum(ctx *c)
{
    enum { ROWS = 5, COLS = 100 };
    float in[ROWS * COLS], out[ROWS];
    for (int i = 0; i < ROWS * COLS; i++) in[i] = rndf();
    hcq_program *p = kernel(c, "row_sum_shfl");
    hcq_buffer *bi = buf(c, in, sizeof in), *bo = buf(c, NULL, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo), hcq_arg_i32(COLS)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(ROWS, c->wave)));
    t_read(bo, out, sizeof out);
    unsigned W = c->wave;
    for (int r = 0; r < ROWS; r++) {
        float s[64] = {0}, t[64];
        for (unsigned l = 0; l < W; l++)
            for (unsigned k = l; k < COLS; k += W) s[l] += in[r * COLS + k];
        for (unsigned m = W / 2; m; m /= 2) {
            for (unsigned l = 0; l < W; l++) t[l] = s[l] + s[l ^ m];
            memcpy(s, t, sizeof s);
        }
        cr_assert_eq(out[r], s[0], "%s row_sum_shfl row %d = %a, want %a", c->arch, r, out[r], s[0]);
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
}

static void row_max(ctx *c)
{
    enum { ROWS = 4 };
    int in[ROWS * 64], out[ROWS];
    unsigned W = c->wave;
    for (unsigned i = 0; i < ROWS * W; i++) in[i] = (int)(rnd() % 100000) + 1;
    hcq_program *p = kernel(c, "row_max_dpp");
    hcq_buffer *bi = buf(c, in, sizeof in), *bo = buf(c, NULL, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(ROWS, W)));
    t_read(bo, out, sizeof out);
    for (int r = 0; r < ROWS; r++) {
        int m = 0;
        for (unsigned l = 0; l < W; l++) m = in[r * W + l] > m ? in[r * W + l] : m;
        cr_assert_eq(out[r], m, "%s row_max_dpp row %d = %d, want %d", c->arch, r, out[r], m);
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
}

static void scan(ctx *c)
{
    enum { G = 3 };
    int in[G * 256], out[G * 256];
    for (int i = 0; i < G * 256; i++) in[i] = (int)(rnd() % 1000) - 500;
    hcq_program *p = kernel(c, "scan_block");
    hcq_buffer *bi = buf(c, in, sizeof in), *bo = buf(c, NULL, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(G, 256)));
    t_read(bo, out, sizeof out);
    for (int g = 0; g < G; g++) {
        int s = 0;
        for (int l = 0; l < 256; l++) {
            s += in[g * 256 + l];
            cr_assert_eq(out[g * 256 + l], s, "%s scan_block [%d][%d] = %d, want %d", c->arch, g, l, out[g * 256 + l], s);
        }
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
}

static void histogram(ctx *c)
{
    enum { N = 1000, L = 128, G = (N + L - 1) / L };
    unsigned char data[N];
    unsigned bins[64], tickets[1024], want_bins[64] = {0}, want_t[1024] = {0};
    for (int i = 0; i < N; i++) data[i] = (unsigned char)rnd();
    for (int g = 0; g < G; g++) {
        unsigned cnt[64] = {0};
        for (int i = g * L; i < N && i < (g + 1) * L; i++) cnt[data[i] & 63]++;
        for (int b = 0; b < 64; b++) {
            want_bins[b] += cnt[b];
            for (unsigned k = 0; k < cnt[b]; k++) want_t[k]++; /* the LDS atomic returned 0..cnt-1 */
        }
    }
    hcq_program *p = kernel(c, "histogram");
    hcq_buffer *bd = buf(c, data, sizeof data), *bb = buf(c, NULL, sizeof bins), *bt = buf(c, NULL, sizeof tickets);
    hcq_arg args[] = {hcq_arg_buffer(bd), hcq_arg_u32(N), hcq_arg_buffer(bb), hcq_arg_buffer(bt)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(G, L)));
    t_read(bb, bins, sizeof bins);
    t_read(bt, tickets, sizeof tickets);
    for (int b = 0; b < 64; b++) cr_assert_eq(bins[b], want_bins[b], "%s histogram bin %d = %u, want %u", c->arch, b, bins[b], want_bins[b]);
    for (int k = 0; k < 1024; k++)
        cr_assert_eq(tickets[k], want_t[k], "%s histogram: the LDS atomic returned %d %u times, want %u", c->arch, k,
                     tickets[k], want_t[k]);
    hcq_buffer_free(bd), hcq_buffer_free(bb), hcq_buffer_free(bt);
    T_OK(hcq_program_free(p));
}

static void softmax(ctx *c)
{
    enum { ROWS = 3, COLS = 70 };
    float in[ROWS * COLS], out[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) in[i] = rndf() * 8;
    hcq_program *p = kernel(c, "softmax_rows");
    hcq_buffer *bi = buf(c, in, sizeof in), *bo = buf(c, NULL, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo), hcq_arg_i32(COLS)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(ROWS, c->wave)));
    t_read(bo, out, sizeof out);
    for (int r = 0; r < ROWS; r++) {
        double m = -INFINITY, s = 0;
        for (int k = 0; k < COLS; k++) m = fmax(m, in[r * COLS + k]);
        for (int k = 0; k < COLS; k++) s += exp(in[r * COLS + k] - m);
        for (int k = 0; k < COLS; k++) {
            double want = exp(in[r * COLS + k] - m) / s, got = out[r * COLS + k];
            /* expf and the division: a few ULP of f32 */
            cr_assert(fabs(got - want) <= 4e-6 * want + 1e-30, "%s softmax [%d][%d] = %.9g, want %.9g", c->arch, r,
                      k, got, want);
        }
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
}

static double h2d(uint16_t h)
{
    int e = h >> 10 & 31, m = h & 0x3ff;
    double v = e ? ldexp(m | 0x400, e - 25) : ldexp(m, -24);
    return h >> 15 ? -v : v;
}
static uint16_t d2h(double x) /* finite, |x| < 65504, round to nearest even */
{
    uint16_t s = x < 0 ? 0x8000 : 0;
    x = fabs(x);
    if (x < ldexp(1, -14)) return (uint16_t)(s | (uint16_t)nearbyint(ldexp(x, 24)));
    int e;
    double f = frexp(x, &e), m = nearbyint(ldexp(f, 11));
    if (m >= 2048) m /= 2, e++;
    return (uint16_t)(s | (uint16_t)((e + 14) << 10) | ((uint16_t)m & 0x3ff));
}

static void f16(ctx *c)
{
    enum { N = 100 };
    uint16_t x[N], y[N], pk[2 * N];
    for (int i = 0; i < N; i++) x[i] = d2h(rndf() * 4);
    uint16_t a = d2h(1.5), b = d2h(-0.25);
    hcq_program *p = kernel(c, "f16_axpb");
    hcq_buffer *bx = buf(c, x, sizeof x), *by = buf(c, NULL, sizeof y), *bp = buf(c, NULL, sizeof pk);
    hcq_arg args[] = {hcq_arg_buffer(bx), hcq_arg_buffer(by), hcq_arg_buffer(bp), hcq_arg_scalar(2, HCQ_IMM(a)),
                      hcq_arg_scalar(2, HCQ_IMM(b)), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, args, 6, hcq_dims_1d(2, 64)));
    t_read(by, y, sizeof y);
    t_read(bp, pk, sizeof pk);
    for (int i = 0; i < N; i++) {
        double xv = h2d(x[i]);
        /* a*x+b: fused or rounded twice, as clang chose; both within one f16 ULP of the exact value */
        uint16_t fused = d2h(1.5 * xv - 0.25), twice = d2h(h2d(d2h(1.5 * xv)) - 0.25);
        cr_assert(y[i] == fused || y[i] == twice, "%s f16_axpb y[%d] = 0x%04x, want 0x%04x or 0x%04x", c->arch, i,
                  y[i], fused, twice);
        uint16_t half = d2h(xv * 0.5);
        cr_assert_eq(pk[2 * i], d2h(xv * xv), "%s f16_axpb p[%d].x = 0x%04x", c->arch, i, pk[2 * i]);
        cr_assert_eq(pk[2 * i + 1], d2h(h2d(half) * h2d(half)), "%s f16_axpb p[%d].y = 0x%04x", c->arch, i, pk[2 * i + 1]);
    }
    hcq_buffer_free(bx), hcq_buffer_free(by), hcq_buffer_free(bp);
    T_OK(hcq_program_free(p));
}

static void stack(ctx *c)
{
    enum { N = 50 };
    int in[N * 8], out[N * 8];
    for (int i = 0; i < N * 8; i++) in[i] = (int)(rnd() % 200) - 100;
    hcq_program *p = hcq_program_load_kernel(c->d, c->bin, c->size, "stack_sort8");
    if (!p && !strcmp(c->arch, "gfx90a")) {
        /* gfx90a's stack needs FLAT_SCRATCH_INIT, which hcq's dispatch does not set up */
        cr_assert(strstr(hcq_error_message(), "FLAT_SCRATCH_INIT"), "%s", hcq_error_message());
        return;
    }
    cr_assert_not_null(p, "%s", hcq_error_message());
    hcq_buffer *bi = buf(c, in, sizeof in), *bo = buf(c, NULL, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(2, 32)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < N; i++) {
        int v[8];
        memcpy(v, &in[i * 8], sizeof v);
        for (int a = 1; a < 8; a++)
            for (int b2 = a; b2 > 0 && v[b2 - 1] > v[b2]; b2--) {
                int t = v[b2];
                v[b2] = v[b2 - 1];
                v[b2 - 1] = t;
            }
        for (int k = 0; k < 8; k++) cr_assert_eq(out[i * 8 + k], v[k], "%s stack_sort8 [%d][%d]", c->arch, i, k);
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
}

static void corpus(const char *arch, bool w64)
{
    ctx c = open_model(arch, w64);
    matmul(&c);
    row_sum(&c);
    row_max(&c);
    scan(&c);
    histogram(&c);
    softmax(&c);
    f16(&c);
    stack(&c);
    close_model(&c);
}

/* (one model per test: the KFD process lives as long as the process) */
Test(amd_isa_corpus, gfx1100_wave32) { corpus("gfx1100", false); }
Test(amd_isa_corpus, gfx1100_wave64) { corpus("gfx1100", true); }
Test(amd_isa_corpus, gfx942) { corpus("gfx942", false); }
Test(amd_isa_corpus, gfx90a) { corpus("gfx90a", false); }
