/* What each corpus kernel must compute (corpus_ref.h), written from the
 * kernels' meaning, not from their code: the order of float sums follows
 * the algorithm each sample uses (a tile-by-tile dot product, a shuffle
 * tree), so a tolerance covers only the differences of contraction. */
#include "tests/corpus/corpus_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ** helpers */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static float frand(uint32_t *s) { return (float)(lcg(s) % 20001) / 10000.0f - 1.0f; } /* [-1, 1] */

uint16_t corpus_f16(double v)
{
    if (isnan(v)) return 0x7e00;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    v = fabs(v);
    if (v >= 65520.0) return sign | 0x7c00;
    if (v < ldexp(1, -25)) return sign; /* below half the smallest subnormal (ties to even: 0) */
    int e;
    frexp(v, &e); /* v in [2^(e-1), 2^e) */
    int exp = e - 1 < -14 ? -14 : e - 1;
    double q = nearbyint(ldexp(v, 10 - exp)); /* 10 fraction bits at this exponent, ties to even */
    if (q >= 2048) {
        q /= 2;
        exp++;
    }
    if (exp > 15) return sign | 0x7c00;
    if (q < 1024) return sign | (uint16_t)q; /* subnormal */
    return sign | (uint16_t)((exp + 15) << 10 | ((uint32_t)q - 1024));
}

double corpus_from_f16(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

size_t corpus_arg_bytes(const corpus_arg *a)
{
    static const size_t size[] = {[CORPUS_E_F32] = 4, [CORPUS_E_I32] = 4, [CORPUS_E_U32] = 4, [CORPUS_E_F16] = 2,
                                  [CORPUS_E_U8] = 1};
    return a->count * size[a->elem];
}

bool corpus_compare(const corpus_case *c, unsigned a, const void *got, const void *want, char *why, size_t why_size)
{
    const corpus_arg *x = &c->args[a];
    for (size_t i = 0; i < x->count; i++) {
        double g, w;
        switch (x->elem) {
        case CORPUS_E_F32: g = ((const float *)got)[i], w = ((const float *)want)[i]; break;
        case CORPUS_E_F16: g = corpus_from_f16(((const uint16_t *)got)[i]), w = corpus_from_f16(((const uint16_t *)want)[i]); break;
        case CORPUS_E_I32: g = ((const int32_t *)got)[i], w = ((const int32_t *)want)[i]; break;
        case CORPUS_E_U32: g = ((const uint32_t *)got)[i], w = ((const uint32_t *)want)[i]; break;
        default: g = ((const uint8_t *)got)[i], w = ((const uint8_t *)want)[i]; break;
        }
        bool fl = x->elem == CORPUS_E_F32 || x->elem == CORPUS_E_F16;
        bool ok = fl ? (g == w || (isnan(g) && isnan(w)) || fabs(g - w) <= c->tol * fmax(fabs(w), 1e-30))
                     : g == w;
        if (!ok) {
            snprintf(why, why_size, "%s: argument %u, element %zu: got %.9g, want %.9g", c->kernel, a, i, g, w);
            return false;
        }
    }
    return true;
}

/* ** matmul_tiled(A, B, C, M, N, K) */
enum { MM_M = 40, MM_N = 56, MM_K = 48 };
static void mm_init(void *const *b)
{
    uint32_t s = 1;
    for (int i = 0; i < MM_M * MM_K; i++) ((float *)b[0])[i] = frand(&s);
    for (int i = 0; i < MM_K * MM_N; i++) ((float *)b[1])[i] = frand(&s);
    memset(b[2], 0, MM_M * MM_N * 4);
}
static void mm_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const float *A = b[0], *B = b[1];
    float *C = b[2];
    for (int r = 0; r < MM_M; r++)
        for (int c = 0; c < MM_N; c++) {
            float acc = 0;
            for (int k = 0; k < MM_K; k++) acc = fmaf(A[r * MM_K + k], B[k * MM_N + c], acc);
            C[r * MM_N + c] = acc;
        }
}

/* ** row_sum_shfl(x, out, rows, cols): 32 lanes' strided sums, then a tree */
enum { RS_ROWS = 37, RS_COLS = 100 };
static void rs_init(void *const *b)
{
    uint32_t s = 2;
    for (int i = 0; i < RS_ROWS * RS_COLS; i++) ((float *)b[0])[i] = frand(&s);
    memset(b[1], 0, RS_ROWS * 4);
}
static void rs_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const float *x = b[0];
    float *out = b[1];
    for (int r = 0; r < RS_ROWS; r++) {
        float lane[32];
        for (int l = 0; l < 32; l++) {
            lane[l] = 0;
            for (int c = l; c < RS_COLS; c += 32) lane[l] += x[r * RS_COLS + c];
        }
        for (int o = 16; o > 0; o >>= 1)
            for (int l = 0; l < 32; l++)
                if (l + o < 32) lane[l] += lane[l + o];
        out[r] = lane[0];
    }
}

/* ** scan_block(in, out, n): inclusive scan of each 256-element block */
enum { SC_N = 1000 };
static void sc_init(void *const *b)
{
    uint32_t s = 3;
    for (int i = 0; i < SC_N; i++) ((int32_t *)b[0])[i] = (int32_t)(lcg(&s) % 201) - 100;
    memset(b[1], 0, SC_N * 4);
}
static void sc_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const int32_t *in = b[0];
    int32_t *out = b[1];
    for (int i = 0; i < SC_N; i++) out[i] = (i % 256 ? out[i - 1] : 0) + in[i];
}

/* ** histogram(data, n, bins) */
enum { HI_N = 5000 };
static void hi_init(void *const *b)
{
    uint32_t s = 4;
    for (int i = 0; i < HI_N; i++) ((uint8_t *)b[0])[i] = (uint8_t)(lcg(&s) % 7 == 0 ? 42 : lcg(&s));
    for (int i = 0; i < 256; i++) ((uint32_t *)b[2])[i] = (uint32_t)i; /* the kernel adds to what is there */
}
static void hi_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const uint8_t *d = b[0];
    uint32_t *bins = b[2];
    for (int i = 0; i < HI_N; i++) bins[d[i]]++;
}

/* ** softmax_rows(x, y, rows, cols) */
enum { SM_ROWS = 13, SM_COLS = 70 };
static void sm_init(void *const *b)
{
    uint32_t s = 5;
    for (int i = 0; i < SM_ROWS * SM_COLS; i++) ((float *)b[0])[i] = 4 * frand(&s);
    memset(b[1], 0, SM_ROWS * SM_COLS * 4);
}
static void sm_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const float *x = b[0];
    float *y = b[1];
    for (int r = 0; r < SM_ROWS; r++) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c < SM_COLS; c++) m = fmax(m, x[r * SM_COLS + c]);
        for (int c = 0; c < SM_COLS; c++) s += exp(x[r * SM_COLS + c] - m);
        for (int c = 0; c < SM_COLS; c++) y[r * SM_COLS + c] = (float)(exp(x[r * SM_COLS + c] - m) / s);
    }
}

/* ** half_axpy(x, y, pair_sum, a, n2): y = a * x + y per half, one rounding */
enum { HA_N2 = 300 };
static const float ha_a = 1.3f;
static void ha_init(void *const *b)
{
    uint32_t s = 6;
    for (int i = 0; i < 2 * HA_N2; i++) ((uint16_t *)b[0])[i] = corpus_f16(8 * frand(&s));
    for (int i = 0; i < 2 * HA_N2; i++) ((uint16_t *)b[1])[i] = corpus_f16(8 * frand(&s));
    memset(b[2], 0, HA_N2 * 4);
}
static void ha_ref(void *const *b, const corpus_arg *args)
{
    const uint16_t *x = b[0];
    uint16_t *y = b[1];
    float *sum = b[2];
    double a = corpus_from_f16(corpus_f16(args[3].f));
    for (int i = 0; i < 2 * HA_N2; i++) y[i] = corpus_f16(fma(a, corpus_from_f16(x[i]), corpus_from_f16(y[i])));
    for (int i = 0; i < HA_N2; i++) sum[i] = (float)corpus_from_f16(y[2 * i]) + (float)corpus_from_f16(y[2 * i + 1]);
}

/* ** stack_lookup(idx, out, n) */
enum { ST_N = 200 };
static void st_init(void *const *b)
{
    uint32_t s = 7;
    for (int i = 0; i < ST_N; i++) ((int32_t *)b[0])[i] = (int32_t)(lcg(&s) % 5000);
    memset(b[1], 0, ST_N * 4);
}
static void st_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const int32_t *idx = b[0];
    int32_t *out = b[1];
    for (int i = 0; i < ST_N; i++) {
        int32_t t[48];
        for (int k = 0; k < 48; k++) t[k] = (int32_t)((uint32_t)(i + 7) * (uint32_t)(k + 1)) ^ (k << 3);
        int k = idx[i];
        out[i] = (int32_t)((uint32_t)t[k % 48] + (uint32_t)t[(k / 48) % 48]);
    }
}

/* ** reverse_dynamic(in, out, n): blocks of 128 */
enum { RV_N = 512, RV_BLOCK = 128 };
static void rv_init(void *const *b)
{
    uint32_t s = 8;
    for (int i = 0; i < RV_N; i++) ((float *)b[0])[i] = frand(&s);
    memset(b[1], 0, RV_N * 4);
}
static void rv_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    const float *in = b[0];
    float *out = b[1];
    for (int i = 0; i < RV_N; i++) {
        int blk = i / RV_BLOCK, t = i % RV_BLOCK;
        out[blk * RV_BLOCK + (RV_BLOCK - 1 - t)] = in[i];
    }
}

/* ** const_and_global(x, y, n) */
enum { CG_N = 300 };
static void cg_init(void *const *b)
{
    uint32_t s = 9;
    for (int i = 0; i < CG_N; i++) ((float *)b[0])[i] = frand(&s);
    memset(b[1], 0, CG_N * 4);
}
static void cg_ref(void *const *b, const corpus_arg *args)
{
    (void)args;
    static const float coef[4] = {0.5f, -1.0f, 2.0f, 4.0f};
    const float *x = b[0];
    float *y = b[1];
    for (int i = 0; i < CG_N; i++) y[i] = x[i] * coef[i & 3] + 5.0f;
}

#define BUF(k, e, n) {.kind = k, .elem = e, .count = n}
#define I32(v) {.kind = CORPUS_I32, .i = v}
#define F32(v) {.kind = CORPUS_F32, .f = v}

const corpus_case corpus_cases[] = {
    {"matmul_tiled", {(MM_N + 15) / 16, (MM_M + 15) / 16, 1}, {16, 16, 1}, 0, 6,
     {BUF(CORPUS_IN, CORPUS_E_F32, MM_M * MM_K), BUF(CORPUS_IN, CORPUS_E_F32, MM_K * MM_N),
      BUF(CORPUS_OUT, CORPUS_E_F32, MM_M * MM_N), I32(MM_M), I32(MM_N), I32(MM_K)},
     mm_init, mm_ref, 1e-5},
    {"row_sum_shfl", {(RS_ROWS + 3) / 4, 1, 1}, {32, 4, 1}, 0, 4,
     {BUF(CORPUS_IN, CORPUS_E_F32, RS_ROWS * RS_COLS), BUF(CORPUS_OUT, CORPUS_E_F32, RS_ROWS), I32(RS_ROWS),
      I32(RS_COLS)},
     rs_init, rs_ref, 1e-6},
    {"scan_block", {(SC_N + 255) / 256, 1, 1}, {256, 1, 1}, 0, 3,
     {BUF(CORPUS_IN, CORPUS_E_I32, SC_N), BUF(CORPUS_OUT, CORPUS_E_I32, SC_N), I32(SC_N)}, sc_init, sc_ref, 0},
    {"histogram", {4, 1, 1}, {128, 1, 1}, 0, 3,
     {BUF(CORPUS_IN, CORPUS_E_U8, HI_N), I32(HI_N), BUF(CORPUS_INOUT, CORPUS_E_U32, 256)}, hi_init, hi_ref, 0},
    {"softmax_rows", {(SM_ROWS + 3) / 4, 1, 1}, {32, 4, 1}, 0, 4,
     {BUF(CORPUS_IN, CORPUS_E_F32, SM_ROWS * SM_COLS), BUF(CORPUS_OUT, CORPUS_E_F32, SM_ROWS * SM_COLS),
      I32(SM_ROWS), I32(SM_COLS)},
     sm_init, sm_ref, 2e-6},
    {"half_axpy", {(HA_N2 + 127) / 128, 1, 1}, {128, 1, 1}, 0, 5,
     {BUF(CORPUS_IN, CORPUS_E_F16, 2 * HA_N2), BUF(CORPUS_INOUT, CORPUS_E_F16, 2 * HA_N2),
      BUF(CORPUS_OUT, CORPUS_E_F32, HA_N2), F32(ha_a), I32(HA_N2)},
     ha_init, ha_ref, 0},
    {"stack_lookup", {(ST_N + 63) / 64, 1, 1}, {64, 1, 1}, 0, 3,
     {BUF(CORPUS_IN, CORPUS_E_I32, ST_N), BUF(CORPUS_OUT, CORPUS_E_I32, ST_N), I32(ST_N)}, st_init, st_ref, 0},
    {"reverse_dynamic", {RV_N / RV_BLOCK, 1, 1}, {RV_BLOCK, 1, 1}, RV_BLOCK * 4, 3,
     {BUF(CORPUS_IN, CORPUS_E_F32, RV_N), BUF(CORPUS_OUT, CORPUS_E_F32, RV_N), I32(RV_N)}, rv_init, rv_ref, 0},
    {"const_and_global", {(CG_N + 127) / 128, 1, 1}, {128, 1, 1}, 0, 3,
     {BUF(CORPUS_IN, CORPUS_E_F32, CG_N), BUF(CORPUS_OUT, CORPUS_E_F32, CG_N), I32(CG_N)}, cg_init, cg_ref, 0},
};
const unsigned corpus_ncases = sizeof corpus_cases / sizeof corpus_cases[0];
