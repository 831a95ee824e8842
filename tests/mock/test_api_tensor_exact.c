/* Exact results at the edges, on the device under test: IEEE special
 * values (all-NaN slices, signalling NaNs, signed zeros, pow's special
 * cases, negative constants), padding that must never win, and limits
 * that are not limits (kernels with more inputs than one launch takes,
 * tensors that need more dims than a view has). One test per item of
 * issue 12; values are read back as bits, so a quieted NaN or a lost sign
 * is a failure. */
#include "tensortest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_exact, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static uint32_t fb(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The tensor's elements as bit patterns (bool and i32 as their values). */
static void read_bits(hcq_tensor *t, uint32_t *out, int64_t n)
{
    cr_assert_not_null(t, "tensor is NULL: %s", hcq_error_message());
    cr_assert_eq(hcq_tensor_numel(t), n, "numel %lld, expected %lld", (long long)hcq_tensor_numel(t), (long long)n);
    hcq_dtype dt = hcq_tensor_dtype(t);
    size_t es = hcq_dtype_size(dt);
    uint8_t *raw = calloc((size_t)n + 1, es);
    T_OK(hcq_tensor_read(t, raw, (size_t)n * es));
    for (int64_t i = 0; i < n; i++) {
        out[i] = 0;
        memcpy(&out[i], raw + i * es, es);
    }
    free(raw);
}

static void expect_bits(hcq_tensor *t, const uint32_t *want, int64_t n, const char *what)
{
    uint32_t got[256];
    cr_assert(n <= 256);
    read_bits(t, got, n);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s[%lld]: got 0x%x, want 0x%x", what, (long long)i, got[i], want[i]);
}

/* NaN of any payload where want is NaN (ops make quiet NaNs of their own
 * choosing); else the exact bits, so -0 and +0 differ. */
static void expect_f32(hcq_tensor *t, const float *want, int64_t n, const char *what)
{
    uint32_t got[256];
    cr_assert(n <= 256);
    cr_assert_eq(hcq_tensor_dtype(t), HCQ_F32, "%s: dtype %s", what, hcq_dtype_name(hcq_tensor_dtype(t)));
    read_bits(t, got, n);
    for (int64_t i = 0; i < n; i++) {
        float g;
        memcpy(&g, &got[i], 4);
        if (isnan(want[i])) cr_assert(isnan(g), "%s[%lld]: got %g (0x%x), want NaN", what, (long long)i, g, got[i]);
        else cr_assert_eq(got[i], fb(want[i]), "%s[%lld]: got %g (0x%x), want %g", what, (long long)i, g, got[i], want[i]);
    }
}

static hcq_tensor *f32s(const int64_t *shape, int nd, const float *v) { return T_NONNULL(hcq_from_data(tx_ctx, HCQ_F32, shape, nd, v)); }

/* ** item 1: max/min/argmax/argmin and max_pool2d of slices that are all NaN */
Test(api_tensor_exact, max_and_min_of_all_nan_slices_are_nan)
{
    const float N = NAN, I = INFINITY;
    const float x[12] = {N, N, N, N, /**/ N, 1, N, -3, /**/ 2, N, -I, N};
    hcq_tensor *t = f32s(TX_SHAPE(3, 4), x);
    expect_f32(hcq_max(t, HCQ_AXES(1), false), (float[]){N, 1, 2}, 3, "max");
    expect_f32(hcq_min(t, HCQ_AXES(1), false), (float[]){N, -3, -I}, 3, "min");
    expect_bits(hcq_argmax(t, 1, false), (uint32_t[]){0, 1, 0}, 3, "argmax");
    expect_bits(hcq_argmin(t, 1, false), (uint32_t[]){0, 3, 2}, 3, "argmin");
    /* the column reductions: column 0 has a number, none is all NaN */
    expect_f32(hcq_max(t, HCQ_AXES(0), true), (float[]){2, 1, -I, -3}, 4, "max over rows");
    /* halfs keep the same rule */
    hcq_tensor *h = hcq_cast(t, HCQ_F16), *bh = hcq_cast(t, HCQ_BF16);
    expect_f32(hcq_cast(hcq_max(h, HCQ_AXES(1), false), HCQ_F32), (float[]){N, 1, 2}, 3, "f16 max");
    expect_f32(hcq_cast(hcq_min(bh, HCQ_AXES(1), false), HCQ_F32), (float[]){N, -3, -I}, 3, "bf16 min");
    /* an empty slice is still the identity */
    hcq_tensor *e = T_NONNULL(hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(2, 0)));
    expect_f32(hcq_max(e, HCQ_AXES(1), false), (float[]){-I, -I}, 2, "empty max");
    expect_f32(hcq_min(e, HCQ_AXES(1), false), (float[]){I, I}, 2, "empty min");
}

Test(api_tensor_exact, large_split_max_of_nans_is_nan)
{
    /* 40000 elements to one output: the reduction is split in two kernels
     * and padded to a multiple of its chunk (40000 has no divisor there) */
    enum { R = 40009 };
    float *x = malloc(R * sizeof *x);
    for (int i = 0; i < R; i++) x[i] = NAN;
    hcq_tensor *all = f32s(TX_SHAPE(R), x);
    expect_f32(hcq_max(all, HCQ_ALL_AXES, false), (float[]){NAN}, 1, "max of NaNs");
    expect_f32(hcq_min(all, HCQ_ALL_AXES, false), (float[]){NAN}, 1, "min of NaNs");
    x[R - 1] = -5;
    hcq_tensor *one = f32s(TX_SHAPE(R), x);
    expect_f32(hcq_max(one, HCQ_ALL_AXES, false), (float[]){-5}, 1, "max of NaNs and -5");
    expect_bits(hcq_argmax(one, 0, false), (uint32_t[]){R - 1}, 1, "argmax");
    free(x);
}

Test(api_tensor_exact, max_pool_of_an_all_nan_window_is_nan)
{
    const float N = NAN;
    const float x[8] = {N, N, 1, N, /**/ N, N, N, 2};
    hcq_tensor *t = f32s(TX_SHAPE(1, 1, 2, 4), x);
    hcq_pool2d_opts o = {.kernel = {2, 2}};
    expect_f32(hcq_max_pool2d(t, &o), (float[]){N, 2}, 2, "pool");
    /* with padding, the border windows hold padding and NaNs only */
    hcq_pool2d_opts p = {.kernel = {2, 2}, .stride = {2, 2}, .padding = {1, 1}};
    expect_f32(hcq_max_pool2d(t, &p), (float[]){N, 1, N, N, N, 2}, 6, "padded pool");
}

/* ** item 2: the padding of a max pool never wins, in every dtype */
Test(api_tensor_exact, max_pool_padding_never_wins)
{
    uint8_t f[9] = {0};
    hcq_tensor *b = T_NONNULL(hcq_from_data(tx_ctx, HCQ_BOOL, TX_SHAPE(1, 1, 3, 3), f));
    hcq_pool2d_opts o = {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}};
    hcq_tensor *r = hcq_max_pool2d(b, &o);
    cr_assert_eq(hcq_tensor_dtype(r), HCQ_BOOL);
    expect_bits(r, (uint32_t[9]){0}, 9, "bool pool of false");
    int32_t iv[4] = {-7, INT32_MIN + 1, -2147483000, -1};
    hcq_tensor *i = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, TX_SHAPE(1, 1, 2, 2), iv));
    hcq_pool2d_opts o2 = {.kernel = {2, 2}, .stride = {1, 1}, .padding = {1, 1}};
    expect_bits(hcq_max_pool2d(i, &o2),
                (uint32_t[]){(uint32_t)-7, (uint32_t)-7, (uint32_t)(INT32_MIN + 1), (uint32_t)-7, (uint32_t)-1,
                             (uint32_t)-1, (uint32_t)-2147483000, (uint32_t)-1, (uint32_t)-1},
                9, "i32 pool");
    float fv[4] = {-INFINITY, -3e38f, -1, -INFINITY};
    hcq_tensor *fl = f32s(TX_SHAPE(1, 1, 2, 2), fv);
    expect_f32(hcq_max_pool2d(fl, &o2), (float[]){-INFINITY, -3e38f, -3e38f, -1, -1, -3e38f, -1, -1, -INFINITY}, 9,
               "f32 pool of -inf");
}

/* ** item 3: f16 std computes in f32 and rounds once */
Test(api_tensor_exact, half_std_rounds_once)
{
    float x[2] = {0, 1000}; /* variance 500000: beyond f16, its root (707.1) is not */
    for (int k = 0; k < 2; k++) {
        hcq_dtype dt = k ? HCQ_BF16 : HCQ_F16;
        hcq_tensor *t = hcq_cast(f32s(TX_SHAPE(2), x), dt);
        hcq_tensor *s = hcq_std(t, HCQ_ALL_AXES, false, 1);
        cr_assert_eq(hcq_tensor_dtype(s), dt);
        double got;
        T_OK(hcq_tensor_item(s, &got));
        double want = tx_round(dt, sqrt(500000.0));
        cr_assert_eq(got, want, "%s std: got %g, want %g", hcq_dtype_name(dt), got, want);
        hcq_tensor *v = hcq_var(t, HCQ_ALL_AXES, false, 1);
        T_OK(hcq_tensor_item(v, &got));
        cr_assert_eq(got, tx_round(dt, 500000.0), "%s var: got %g", hcq_dtype_name(dt), got);
    }
}

/* ** item 4: movement ops move bits */
Test(api_tensor_exact, cat_and_stack_move_bits)
{
    const uint32_t f[4] = {0x7f800001u /* sNaN */, 0xffc12345u /* payload */, 0x80000000u /* -0 */, 0x00000001u};
    const uint16_t h[4] = {0x7c01u, 0xfe3fu, 0x8000u, 0x0001u}; /* f16 sNaN, payload, -0, denormal */
    const uint16_t bf[4] = {0x7f81u, 0xffc1u, 0x8000u, 0x0001u};
    struct { hcq_dtype dt; const void *v; } cases[] = {{HCQ_F32, f}, {HCQ_F16, h}, {HCQ_BF16, bf}};
    for (size_t c = 0; c < (sizeof cases / sizeof *cases); c++) {
        hcq_dtype dt = cases[c].dt;
        size_t es = hcq_dtype_size(dt);
        hcq_tensor *a = T_NONNULL(hcq_from_data(tx_ctx, dt, TX_SHAPE(2, 2), cases[c].v));
        uint32_t w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = 0;
            memcpy(&w[i], (const uint8_t *)cases[c].v + i * es, es);
        }
        uint32_t w0[8] = {w[0], w[1], w[2], w[3], w[0], w[1], w[2], w[3]};
        uint32_t w1[8] = {w[0], w[1], w[0], w[1], w[2], w[3], w[2], w[3]};
        expect_bits(hcq_cat((hcq_tensor *[]){a, a}, 2, 0), w0, 8, "cat axis 0");
        expect_bits(hcq_cat((hcq_tensor *[]){a, a}, 2, 1), w1, 8, "cat axis 1");
        expect_bits(hcq_stack((hcq_tensor *[]){a, a}, 2, 0), w0, 8, "stack");
        /* a single part, and parts that are views */
        expect_bits(hcq_cat((hcq_tensor *[]){a}, 1, 0), w, 4, "cat of one");
        hcq_tensor *t = hcq_transpose(a, 0, 1);
        uint32_t wt[8] = {w[0], w[2], w[1], w[3], w[0], w[1], w[2], w[3]};
        expect_bits(hcq_cat((hcq_tensor *[]){t, a}, 2, 0), wt, 8, "cat of a transpose");
    }
}

/* ** item 5: more inputs than a launch takes, more dims than a view has */
Test(api_tensor_exact, sixty_four_and_more_inputs_split_into_kernels)
{
    enum { N = 100 };
    hcq_tensor *parts[N];
    for (int i = 0; i < N; i++) {
        float v[2] = {(float)i, (float)-i};
        parts[i] = f32s(TX_SHAPE(2), v);
    }
    static const int counts[] = {63, 64, N};
    for (size_t k = 0; k < (sizeof counts / sizeof *counts); k++) {
        int n = counts[k];
        float got[2 * N];
        hcq_tensor *s = hcq_stack(parts, n, 0);
        T_OK(hcq_tensor_read(s, got, (size_t)n * 2 * sizeof(float)));
        for (int i = 0; i < n; i++) cr_assert(got[2 * i] == i && got[2 * i + 1] == -i, "stack of %d: row %d", n, i);
        hcq_tensor *c = hcq_cat(parts, n, 0);
        T_OK(hcq_tensor_read(c, got, (size_t)n * 2 * sizeof(float)));
        for (int i = 0; i < n; i++) cr_assert(got[2 * i] == i && got[2 * i + 1] == -i, "cat of %d: row %d", n, i);
        hcq_tensor *sum = parts[0];
        for (int i = 1; i < n; i++) sum = hcq_add(sum, parts[i]);
        float tot = (float)(n * (n - 1) / 2);
        expect_f32(sum, (float[]){tot, -tot}, 2, "sum of tensors");
    }
}

Test(api_tensor_exact, repeat_of_many_dims)
{
    /* a 5-d tensor repeated in every dim needs 10 interleaved dims */
    float x[2] = {1.5f, -2.0f};
    hcq_tensor *t = hcq_reshape(f32s(TX_SHAPE(2), x), TX_SHAPE(1, 1, 2, 1, 1));
    hcq_tensor *r = hcq_repeat(t, TX_SHAPE(2, 1, 3, 2, 2));
    cr_assert_not_null(r, "%s", hcq_error_message());
    int64_t shape[HCQ_MAX_DIMS];
    cr_assert_eq(hcq_tensor_shape(r, shape), 5);
    cr_assert(shape[0] == 2 && shape[1] == 1 && shape[2] == 6 && shape[3] == 2 && shape[4] == 2);
    float got[48];
    T_OK(hcq_tensor_read(r, got, sizeof got));
    for (int i = 0; i < 48; i++) {
        int d2 = (i / 4) % 6;
        cr_assert_eq(got[i], x[d2 % 2], "element %d", i);
    }
    /* 8 dims, most repeated; a ninth is refused (no tensor has 9 dims) */
    hcq_tensor *e = hcq_reshape(t, TX_SHAPE(1, 1, 1, 1, 1, 2, 1, 1));
    hcq_tensor *r8 = hcq_repeat(e, TX_SHAPE(2, 2, 1, 2, 1, 2, 1, 2));
    cr_assert_not_null(r8, "%s", hcq_error_message());
    float g8[2 * 2 * 2 * 4 * 2];
    T_OK(hcq_tensor_read(r8, g8, sizeof g8));
    for (int i = 0; i < 64; i++) cr_assert_eq(g8[i], x[(i / 2) % 4 % 2], "8-d element %d", i);
    cr_assert_null(hcq_repeat(e, TX_SHAPE(2, 1, 1, 1, 1, 1, 1, 1, 1)));
}

/* ** item 6: unary ops on negative constants (the C renderer wrote "--") */
Test(api_tensor_exact, unary_ops_of_negative_constants)
{
    hcq_tensor *c = T_NONNULL(hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(3), -1.25));
    expect_f32(hcq_neg(c), (float[]){1.25f, 1.25f, 1.25f}, 3, "neg");
    expect_f32(hcq_abs(c), (float[]){1.25f, 1.25f, 1.25f}, 3, "abs");
    expect_f32(hcq_min(c, HCQ_ALL_AXES, false), (float[]){-1.25f}, 1, "min");
    expect_f32(hcq_minimum_s(hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(2), 3), -1.25), (float[]){-1.25f, -1.25f}, 2,
               "minimum_s");
    expect_f32(hcq_neg(hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(1), -0.0)), (float[]){0.0f}, 1, "neg -0");
    hcq_tensor *h = hcq_full(tx_ctx, HCQ_F16, TX_SHAPE(1), -2.5);
    expect_f32(hcq_cast(hcq_neg(h), HCQ_F32), (float[]){2.5f}, 1, "f16 neg");
}

/* ** item 7: pow follows IEEE 754 (C's Annex F) in its special cases */
Test(api_tensor_exact, pow_special_cases_follow_ieee)
{
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0.5f, -0.5f, 2.0f, -2.0f,
                              3.0f, -3.0f, 2.5f, -2.5f, 1e-30f, -1e30f};
    enum { K = sizeof v / sizeof *v };
    float x[K * K], y[K * K], want[K * K];
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) {
            x[i * K + j] = v[i];
            y[i * K + j] = v[j];
            want[i * K + j] = powf(v[i], v[j]);
        }
    hcq_tensor *r = hcq_pow(f32s(TX_SHAPE(K * K), x), f32s(TX_SHAPE(K * K), y));
    uint32_t got[K * K];
    read_bits(r, got, K * K);
    for (int i = 0; i < K * K; i++) {
        float g;
        memcpy(&g, &got[i], 4);
        float w = want[i];
        bool special = isnan(w) || isinf(w) || w == 0 || fabsf(w) == 1;
        if (isnan(w)) cr_assert(isnan(g), "pow(%g, %g): got %g, want NaN", x[i], y[i], g);
        else if (special) cr_assert_eq(got[i], fb(w), "pow(%g, %g): got %g (0x%x), want %g", x[i], y[i], g, got[i], w);
        else cr_assert(fabsf(g - w) <= 4e-6f * fabsf(w), "pow(%g, %g): got %.9g, want %.9g", x[i], y[i], g, w);
    }
}

Test(api_tensor_exact, pow_of_integral_exponents_is_exact_when_representable)
{
    const float x[] = {3, 10, -3, 2, 3, -2, 1.5f, 7, 0.5f};
    const float y[] = {15, 7, 5, -3, -2, 31, 4, 8, -20};
    enum { K = sizeof x / sizeof *x };
    float want[K];
    for (int i = 0; i < K; i++) want[i] = (float)pow(x[i], y[i]); /* each representable, or 1/9 rounded once */
    expect_f32(hcq_pow(f32s(TX_SHAPE(K), x), f32s(TX_SHAPE(K), y)), want, K, "integral powers");
}

/* ** found by the differential fuzzer (tests/tfuzz), each shrunk to these calls */
Test(api_tensor_exact, a_negative_zero_scalar_is_a_float)
{
    float z[3] = {0, 5, -2};
    hcq_tensor *x = f32s(TX_SHAPE(3), z);
    expect_f32(hcq_mul_s(x, -0.0), (float[]){-0.0f, -0.0f, 0.0f}, 3, "x * -0.0");
    int32_t iv[2] = {0, -3};
    hcq_tensor *i = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, TX_SHAPE(2), iv));
    hcq_tensor *m = hcq_maximum_s(i, -0.0); /* a float scalar: the result is f32 */
    expect_f32(m, (float[]){0.0f, -0.0f}, 2, "maximum(i32, -0.0)");
}

Test(api_tensor_exact, constants_hold_their_dtype_value)
{
    /* 16777217 is no f32: the f32 tensor holds 16777216, and so does its cast */
    hcq_tensor *c = hcq_cast(hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(1), 16777217.0), HCQ_I32);
    expect_bits(c, (uint32_t[]){16777216u}, 1, "f32 16777217 as i32");
    hcq_tensor *h = hcq_cast(hcq_full(tx_ctx, HCQ_F16, TX_SHAPE(1), 0.1), HCQ_F32);
    expect_f32(h, (float[]){0.0999755859375f}, 1, "f16 0.1 as f32");
    /* padding is a constant of the tensor's dtype too */
    hcq_tensor *p = hcq_cast(hcq_pad(hcq_zeros(tx_ctx, HCQ_BF16, TX_SHAPE(1)), (const int64_t[]){0, 1}, 1, 1.00390625), HCQ_F32);
    expect_f32(p, (float[]){0.0f, 1.0f}, 2, "bf16 padding");
}

Test(api_tensor_exact, a_sum_of_negative_zeros_is_negative_zero)
{
    float z[5] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
    hcq_tensor *x = f32s(TX_SHAPE(5), z);
    expect_f32(hcq_sum(x, HCQ_ALL_AXES, false), (float[]){-0.0f}, 1, "sum of -0");
    expect_f32(hcq_sum(hcq_reshape(x, TX_SHAPE(5, 1)), HCQ_AXES(0), false), (float[]){-0.0f}, 1, "column sum of -0");
    float m[4] = {-0.0f, 0.0f, -0.0f, -0.0f};
    expect_f32(hcq_sum(f32s(TX_SHAPE(4), m), HCQ_ALL_AXES, false), (float[]){0.0f}, 1, "sum with a +0");
    /* the split path of a large reduction */
    enum { R = 40000 };
    float *big = malloc(R * sizeof *big);
    for (int i = 0; i < R; i++) big[i] = -0.0f;
    expect_f32(hcq_sum(f32s(TX_SHAPE(R), big), HCQ_ALL_AXES, false), (float[]){-0.0f}, 1, "split sum of -0");
    free(big);
    /* an empty sum is still +0 */
    expect_f32(hcq_sum(T_NONNULL(hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(0))), HCQ_ALL_AXES, false), (float[]){0.0f}, 1, "empty");
}

Test(api_tensor_exact, gather_from_an_empty_view)
{
    /* lowering divided by the empty source's strides (SIGFPE) */
    hcq_tensor *e = hcq_reshape(T_NONNULL(hcq_zeros(tx_ctx, HCQ_BF16, TX_SHAPE(13, 0, 11))), TX_SHAPE(0));
    int32_t k = 0;
    hcq_tensor *idx = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, TX_SHAPE(1), &k));
    hcq_tensor *g = hcq_cast(hcq_gather(e, 0, idx), HCQ_F32);
    expect_f32(g, (float[]){0.0f}, 1, "gather out of an empty table");
}
