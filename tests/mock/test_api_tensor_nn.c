/* Composite ops and creation on the device under test against C loops:
 * matmul (vectors, batches that broadcast, a size that takes the CPU
 * register-tile plan), linear, conv2d with stride, padding, dilation and
 * groups, pooling, softmax, layernorm, cross-entropy, embedding, gather,
 * arange/eye and the counter-based random numbers (checked bit for bit
 * against a host copy of the generator). Tolerance: f32 sums of k products
 * get rtol 1e-5 + atol 1e-5 * sqrt(k); f16 matmuls 2e-3 relative to the
 * sum of |products|. */
#include "tensortest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_nn, .init = tx_setup, .fini = tx_teardown, .timeout = 300);

static void ref_matmul(const double *a, const double *b, double *c, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
            c[i * N + j] = s;
        }
}

Test(api_tensor_nn, matmul_shapes)
{
    double a[5 * 7], b[7 * 3], got[64], want[64];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(5, 7), -1, 1, 1, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(7, 3), -1, 1, 2, b);
    tx_read(hcq_matmul(ta, tb), got, 15);
    ref_matmul(a, b, want, 5, 7, 3);
    tx_close(got, want, 15, 1e-5, 1e-5, "5x7 @ 7x3");
    /* vector cases */
    double v[7];
    hcq_tensor *tv = tx_rand(HCQ_F32, TX_SHAPE(7), -1, 1, 3, v);
    hcq_tensor *vm = hcq_matmul(tv, tb);
    cr_assert_eq(hcq_tensor_ndim(vm), 1);
    tx_read(vm, got, 3);
    ref_matmul(v, b, want, 1, 7, 3);
    tx_close(got, want, 3, 1e-5, 1e-5, "vec @ mat");
    hcq_tensor *mv = hcq_matmul(ta, tv);
    cr_assert_eq(hcq_tensor_ndim(mv), 1);
    tx_read(mv, got, 5);
    ref_matmul(a, v, want, 5, 7, 1);
    tx_close(got, want, 5, 1e-5, 1e-5, "mat @ vec");
    double dot;
    T_OK(hcq_tensor_item(hcq_matmul(tv, tv), &dot));
    double wd = 0;
    for (int i = 0; i < 7; i++) wd += v[i] * v[i];
    cr_assert(fabs(dot - wd) < 1e-5, "dot %g vs %g", dot, wd);
}

Test(api_tensor_nn, matmul_batched_broadcast)
{
    /* [2, 1, 4, 6] @ [3, 6, 5] -> [2, 3, 4, 5] */
    double a[2 * 4 * 6], b[3 * 6 * 5], got[120], want[120];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(2, 1, 4, 6), -1, 1, 4, a);
    hcq_tensor *tb = tx_rand(HCQ_F32, TX_SHAPE(3, 6, 5), -1, 1, 5, b);
    hcq_tensor *c = hcq_matmul(ta, tb);
    int64_t s[4];
    cr_assert_eq(hcq_tensor_shape(c, s), 4);
    cr_assert(s[0] == 2 && s[1] == 3 && s[2] == 4 && s[3] == 5);
    tx_read(c, got, 120);
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 3; y++) ref_matmul(a + x * 24, b + y * 30, want + (x * 3 + y) * 20, 4, 6, 5);
    tx_close(got, want, 120, 1e-5, 1e-5, "batched");
}

/* 61 x 48 @ 48 x 64: the CPU plan tiles it (4 x 64 per work-item, the
 * last row tile ragged: 61 is prime) */
Test(api_tensor_nn, matmul_tiled_and_f16)
{
    enum { M = 61, K = 48, N = 64 };
    double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b), *got = malloc(M * N * sizeof *got),
           *want = malloc(M * N * sizeof *want);
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 6, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(K, N), -1, 1, 7, b);
    tx_read(hcq_matmul(ta, tb), got, M * N);
    ref_matmul(a, b, want, M, K, N);
    tx_close(got, want, M * N, 1e-5, 1e-4, "61x48 @ 48x64");
    /* f16 operands: products and sums in f32, rounded once */
    hcq_tensor *ha = tx_rand(HCQ_F16, TX_SHAPE(M, K), -1, 1, 8, a), *hb = tx_rand(HCQ_F16, TX_SHAPE(K, N), -1, 1, 9, b);
    hcq_tensor *hc = hcq_matmul(ha, hb);
    cr_assert_eq(hcq_tensor_dtype(hc), HCQ_F16);
    tx_read(hc, got, M * N);
    ref_matmul(a, b, want, M, K, N);
    for (int i = 0; i < M * N; i++) want[i] = tx_round(HCQ_F16, want[i]);
    tx_close(got, want, M * N, 1e-3, 1e-3, "f16 matmul");
    free(a);
    free(b);
    free(got);
    free(want);
}

Test(api_tensor_nn, linear_with_bias)
{
    double x[3 * 5], w[4 * 5], bias[4], got[12], want[12];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(3, 5), -1, 1, 10, x), *tw = tx_rand(HCQ_F32, TX_SHAPE(4, 5), -1, 1, 11, w);
    hcq_tensor *tb = tx_rand(HCQ_F32, TX_SHAPE(4), -1, 1, 12, bias);
    tx_read(hcq_linear(tx, tw, tb), got, 12);
    for (int i = 0; i < 3; i++)
        for (int o = 0; o < 4; o++) {
            double s = bias[o];
            for (int k = 0; k < 5; k++) s += x[i * 5 + k] * w[o * 5 + k];
            want[i * 4 + o] = s;
        }
    tx_close(got, want, 12, 1e-5, 1e-5, "linear");
}

Test(api_tensor_nn, conv2d_stride_pad_dilation_groups)
{
    enum { Nb = 2, C = 4, H = 9, W = 8, O = 6, G = 2, KH = 3, KW = 2 };
    const int sh = 2, sw = 1, ph = 1, pw = 2, dh = 1, dw = 2;
    const int OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1, OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
    double *x = malloc(Nb * C * H * W * sizeof *x), w[O * (C / G) * KH * KW], bias[O];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(Nb, C, H, W), -1, 1, 13, x);
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(O, C / G, KH, KW), -1, 1, 14, w);
    hcq_tensor *tb = tx_rand(HCQ_F32, TX_SHAPE(O), -1, 1, 15, bias);
    hcq_conv2d_opts opts = {{sh, sw}, {ph, pw}, {dh, dw}, G};
    hcq_tensor *y = hcq_conv2d(tx, tw, tb, &opts);
    cr_assert_not_null(y, "%s", hcq_error_message());
    cr_assert_eq(hcq_tensor_dim(y, 2), OH);
    cr_assert_eq(hcq_tensor_dim(y, 3), OW);
    int n = Nb * O * OH * OW;
    double *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    for (int b = 0; b < Nb; b++)
        for (int o = 0; o < O; o++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    int g = o / (O / G);
                    double s = bias[o];
                    for (int c = 0; c < C / G; c++)
                        for (int u = 0; u < KH; u++)
                            for (int v = 0; v < KW; v++) {
                                int yy = i * sh - ph + u * dh, xx = j * sw - pw + v * dw;
                                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                                s += x[((b * C + g * (C / G) + c) * H + yy) * W + xx] * w[((o * (C / G) + c) * KH + u) * KW + v];
                            }
                    want[((b * O + o) * OH + i) * OW + j] = s;
                }
    tx_read(y, got, n);
    tx_close(got, want, n, 1e-5, 1e-5, "conv2d");
    free(x);
    free(got);
    free(want);
}

Test(api_tensor_nn, pooling)
{
    double x[2 * 7 * 6], got[64], want[64];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(2, 7, 6), -2, 2, 16, x);
    hcq_pool2d_opts o = {{3, 2}, {2, 2}, {1, 1}};
    hcq_tensor *mp = hcq_max_pool2d(t, &o), *ap = hcq_avg_pool2d(t, &o);
    int OH = (7 + 2 - 3) / 2 + 1, OW = (6 + 2 - 2) / 2 + 1;
    cr_assert_eq(hcq_tensor_dim(mp, 1), OH);
    cr_assert_eq(hcq_tensor_dim(mp, 2), OW);
    double want2[64];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++) {
                double m = -INFINITY, s = 0;
                for (int u = 0; u < 3; u++)
                    for (int v = 0; v < 2; v++) {
                        int yy = i * 2 - 1 + u, xx = j * 2 - 1 + v;
                        if (yy < 0 || yy >= 7 || xx < 0 || xx >= 6) continue;
                        m = fmax(m, x[(b * 7 + yy) * 6 + xx]);
                        s += x[(b * 7 + yy) * 6 + xx];
                    }
                want[(b * OH + i) * OW + j] = m;
                want2[(b * OH + i) * OW + j] = s / 6.0;
            }
    tx_read(mp, got, 2 * OH * OW);
    tx_close(got, want, 2 * OH * OW, 0, 0, "max pool");
    tx_read(ap, got, 2 * OH * OW);
    tx_close(got, want2, 2 * OH * OW, 1e-5, 1e-6, "avg pool");
}

Test(api_tensor_nn, softmax_logsoftmax_layernorm)
{
    double x[4 * 9], got[36], want[36], l2[36];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(4, 9), -5, 5, 17, x);
    for (int i = 0; i < 4; i++) {
        double m = -INFINITY, s = 0;
        for (int j = 0; j < 9; j++) m = fmax(m, x[i * 9 + j]);
        for (int j = 0; j < 9; j++) s += exp(x[i * 9 + j] - m);
        for (int j = 0; j < 9; j++) {
            want[i * 9 + j] = exp(x[i * 9 + j] - m) / s;
            l2[i * 9 + j] = x[i * 9 + j] - m - log(s);
        }
    }
    tx_read(hcq_softmax(t, -1), got, 36);
    tx_close(got, want, 36, 4e-5, 1e-7, "softmax");
    tx_read(hcq_log_softmax(t, 1), got, 36);
    tx_close(got, l2, 36, 4e-5, 4e-6, "log_softmax");
    /* over axis 0 */
    tx_read(hcq_softmax(t, 0), got, 36);
    for (int j = 0; j < 9; j++) {
        double m = -INFINITY, s = 0;
        for (int i = 0; i < 4; i++) m = fmax(m, x[i * 9 + j]);
        for (int i = 0; i < 4; i++) s += exp(x[i * 9 + j] - m);
        for (int i = 0; i < 4; i++) want[i * 9 + j] = exp(x[i * 9 + j] - m) / s;
    }
    tx_close(got, want, 36, 4e-5, 1e-7, "softmax axis 0");
    double w[9], b[9];
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(9), 0.5, 1.5, 18, w), *tb = tx_rand(HCQ_F32, TX_SHAPE(9), -1, 1, 19, b);
    tx_read(hcq_layernorm(t, 1, tw, tb, 1e-5), got, 36);
    for (int i = 0; i < 4; i++) {
        double m = 0, v = 0;
        for (int j = 0; j < 9; j++) m += x[i * 9 + j] / 9;
        for (int j = 0; j < 9; j++) v += (x[i * 9 + j] - m) * (x[i * 9 + j] - m) / 9;
        for (int j = 0; j < 9; j++) want[i * 9 + j] = (x[i * 9 + j] - m) / sqrt(v + 1e-5) * w[j] + b[j];
    }
    tx_close(got, want, 36, 1e-4, 1e-5, "layernorm");
}

Test(api_tensor_nn, cross_entropy_embedding_gather)
{
    double lg[5 * 4], tg[5] = {0, 3, 1, 7 /* out of range: contributes 0 */, 2};
    hcq_tensor *tl = tx_rand(HCQ_F32, TX_SHAPE(5, 4), -3, 3, 20, lg);
    hcq_tensor *tt = tx_from(HCQ_I32, TX_SHAPE(5), tg);
    double loss, want = 0;
    T_OK(hcq_tensor_item(hcq_cross_entropy(tl, tt), &loss));
    for (int i = 0; i < 5; i++) {
        double m = -INFINITY, s = 0;
        for (int j = 0; j < 4; j++) m = fmax(m, lg[i * 4 + j]);
        for (int j = 0; j < 4; j++) s += exp(lg[i * 4 + j] - m);
        if (tg[i] < 4) want -= lg[i * 4 + (int)tg[i]] - m - log(s);
    }
    want /= 5;
    cr_assert(fabs(loss - want) < 1e-5, "cross entropy %g vs %g", loss, want);
    double w[6 * 3], idx[4] = {5, 0, -1, 2}, got[12];
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(6, 3), -1, 1, 21, w);
    hcq_tensor *e = hcq_embedding(tw, tx_from(HCQ_I32, TX_SHAPE(2, 2), idx));
    cr_assert_eq(hcq_tensor_ndim(e), 3);
    tx_read(e, got, 12);
    double wemb[12];
    for (int i = 0; i < 4; i++)
        for (int d = 0; d < 3; d++) wemb[i * 3 + d] = idx[i] >= 0 && idx[i] < 6 ? w[(int)idx[i] * 3 + d] : 0;
    tx_close(got, wemb, 12, 0, 0, "embedding");
    /* torch.gather along axis 1 with a smaller index tensor */
    double gi[2 * 2] = {2, 0, 1, 1};
    tx_read(hcq_gather(tw, 1, tx_from(HCQ_I32, TX_SHAPE(2, 2), gi)), got, 4);
    double wg[4] = {w[2], w[0], w[4], w[4]};
    tx_close(got, wg, 4, 0, 0, "gather");
    /* gather from a computed table (materialized first) */
    tx_read(hcq_gather(hcq_mul_s(tw, 2), 1, tx_from(HCQ_I32, TX_SHAPE(2, 2), gi)), got, 4);
    for (int i = 0; i < 4; i++) wg[i] *= 2;
    tx_close(got, wg, 4, 0, 0, "gather of a computed table");
}

Test(api_tensor_nn, arange_eye_full)
{
    double got[20];
    tx_read(hcq_arange(tx_ctx, HCQ_F32, 1, 3, 0.25), got, 8);
    for (int i = 0; i < 8; i++) cr_assert_eq(got[i], 1 + 0.25 * i);
    tx_read(hcq_arange(tx_ctx, HCQ_I32, 10, 0, -3), got, 4);
    double w[4] = {10, 7, 4, 1};
    tx_close(got, w, 4, 0, 0, "arange down");
    tx_read(hcq_eye(tx_ctx, HCQ_I32, 3, 4), got, 12);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) cr_assert_eq(got[i * 4 + j], (double)(i == j));
    tx_read(hcq_full(tx_ctx, HCQ_BF16, TX_SHAPE(2, 2), 1.0 / 3), got, 4);
    for (int i = 0; i < 4; i++) cr_assert_eq(got[i], tx_round(HCQ_BF16, 1.0 / 3));
}

/* the generator, as the kernels compute it (tensor.c's key, emit.c's mix) */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static uint32_t fmix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    return x ^ (x >> 16);
}
static double host_rand(uint64_t seed, uint64_t stream, uint32_t i)
{
    uint64_t key = mix64(seed * 0x9e3779b97f4a7c15ull + stream);
    uint32_t x = fmix(i * 0x9e3779b1u + (uint32_t)key);
    x = fmix(x ^ (uint32_t)(key >> 32));
    return (float)(x >> 8) * 0x1p-24;
}

Test(api_tensor_nn, random_numbers_reproducible)
{
    enum { N = 4000 };
    double *u = malloc(N * sizeof *u), *n = malloc(N * sizeof *n), *r = malloc(N * sizeof *r);
    hcq_ctx_seed(tx_ctx, 42);
    tx_read(hcq_rand(tx_ctx, HCQ_F32, TX_SHAPE(40, 100)), u, N);
    for (int i = 0; i < N; i++) cr_assert_eq(u[i], host_rand(42, 1, (uint32_t)i), "rand[%d] differs from the generator", i);
    tx_read(hcq_randn(tx_ctx, HCQ_F32, TX_SHAPE(N)), n, N);
    tx_read(hcq_randint(tx_ctx, TX_SHAPE(N), -3, 4), r, N);
    double mu = 0, var = 0, lo = 1e9, hi = -1e9;
    for (int i = 0; i < N; i++) mu += n[i] / N;
    for (int i = 0; i < N; i++) var += (n[i] - mu) * (n[i] - mu) / N;
    for (int i = 0; i < N; i++) lo = fmin(lo, r[i]), hi = fmax(hi, r[i]);
    cr_assert(fabs(mu) < 0.1 && fabs(var - 1) < 0.1, "randn mean %g var %g", mu, var);
    cr_assert(lo == -3 && hi == 3, "randint range [%g, %g]", lo, hi);
    /* the same seed gives the same sequence */
    hcq_ctx_seed(tx_ctx, 42);
    tx_read(hcq_rand(tx_ctx, HCQ_F32, TX_SHAPE(N)), r, N);
    tx_close(r, u, N, 0, 0, "reseeded rand");
    free(u);
    free(n);
    free(r);
}

/* randn as tensor/data.c builds it, operation by operation in f32 (this
 * file is ISO C: no contraction), written here from the header's promise
 * that every device gives the same values: only exactly rounded
 * operations, so these bits are what every device must give */
static float host_randn(uint64_t seed, uint64_t stream, uint32_t i)
{
    float u1 = (float)host_rand(seed, stream, i), u2 = (float)host_rand(seed, stream + 1, i);
    float x = 1.0f - u1;
    int32_t bits;
    memcpy(&bits, &x, 4);
    int32_t e = bits / 8388608 - 127, mb = (bits & 0x7fffff) | 0x3f800000;
    float m;
    memcpy(&m, &mb, 4);
    int big = m > 1.41421353816986083984375f;
    if (big) m = m * 0.5f;
    float ef = (float)(e + big), sv = (m - 1.0f) / (m + 1.0f), z = sv * sv;
    float p = z * (float)(1.0 / 9.0) + (float)(1.0 / 7.0);
    p = p * z + (float)(1.0 / 5.0);
    p = p * z + (float)(1.0 / 3.0);
    p = p * z + 1.0f;
    float lnm = (sv * 2.0f) * p;
    float ln = ef * 0.693145751953125f + (ef * (float)1.4286068202862268e-06 + lnm);
    float r = sqrtf(ln * -2.0f);
    float t = u2 * 4.0f, q = truncf(t), f = t - q;
    int swap = f > 0.5f;
    float g = swap ? 1.0f - f : f, a = g * (float)1.57079632679489661923, a2 = a * a;
    float sp = a2 * (float)(1.0 / 362880.0) + (float)(-1.0 / 5040.0);
    sp = sp * a2 + (float)(1.0 / 120.0);
    sp = sp * a2 + (float)(-1.0 / 6.0);
    sp = sp * a2 + 1.0f;
    float sn = a * sp;
    float cp = a2 * (float)(-1.0 / 3628800.0) + (float)(1.0 / 40320.0);
    cp = cp * a2 + (float)(-1.0 / 720.0);
    cp = cp * a2 + (float)(1.0 / 24.0);
    cp = cp * a2 + -0.5f;
    float cs = cp * a2 + 1.0f;
    int qi = (int)q, use_sin = (qi & 1) ^ swap;
    float mag = use_sin ? sn : cs;
    return r * (qi == 1 || qi == 2 ? -mag : mag);
}

Test(api_tensor_nn, randn_is_the_same_bits_on_every_device)
{
    enum { N = 13 * 17 * 13 };
    double *n = malloc(N * sizeof *n);
    hcq_ctx_seed(tx_ctx, 7);
    tx_read(hcq_randn(tx_ctx, HCQ_F32, TX_SHAPE(13, 17, 13)), n, N);
    double worst = 0;
    for (uint32_t i = 0; i < N; i++) {
        float want = host_randn(7, 1, i);
        cr_assert_eq((float)n[i], want, "randn[%u] is %.9g; the exactly rounded sequence gives %.9g", i, n[i],
                     (double)want);
        /* and it is a standard normal sample: Box-Muller to a few ulp */
        double u1 = host_rand(7, 1, i), u2 = host_rand(7, 2, i);
        double exact = sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
        worst = fmax(worst, fabs(want - exact) / fmax(fabs(exact), 1e-3));
    }
    cr_assert_lt(worst, 1e-5, "the polynomials stray %g (relative) from Box-Muller in double", worst);
    free(n);
}
