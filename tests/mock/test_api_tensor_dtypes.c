/* The tensor layer's integer and f64 dtypes (i8, u8, i16, u16, u32, i64,
 * u64, f64) on the device under test: data in and out, casts (float to
 * integer truncates and saturates, NaN gives 0), wrapping arithmetic,
 * C division at every width (x / 0 = 0, INT_MIN / -1 = INT_MIN), unsigned
 * comparisons and max/min above the sign bit, bitwise ops, where,
 * reductions and their accumulation dtypes, matmuls, f64 bits, and the
 * promotion table of tensor.h. Expected values come from C arithmetic in
 * this file (written from tensor.h's rules, not from the tensor layer),
 * compared as bits: every device must give the same ones. Small shapes, a
 * few kernels per test. */
#include "tensortest.h"

#include <hcq/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(api_tensor_dtypes, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static const hcq_dtype INTS[] = {HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_I32, HCQ_U32, HCQ_I64, HCQ_U64};

static unsigned bits(hcq_dtype t) { return (unsigned)hcq_dtype_size(t) * 8; }

/* v wrapped to dtype t, as the canonical 64-bit pattern (sign-extended
 * for signed dtypes) */
static uint64_t wrap(hcq_dtype t, uint64_t v)
{
    unsigned b = bits(t);
    if (b == 64) return v;
    v &= (1ull << b) - 1;
    if (hcq_dtype_is_signed(t) && (v >> (b - 1))) v |= ~0ull << b;
    return v;
}

/* the reference float -> integer cast of tensor.h: truncate, saturate, NaN 0 */
static uint64_t sat(hcq_dtype t, double x)
{
    unsigned b = bits(t);
    if (x != x) return 0;
    if (hcq_dtype_is_signed(t)) {
        double hi = ldexp(1.0, (int)b - 1);
        if (x <= -hi) return (uint64_t)(-(int64_t)1) << (b - 1);
        if (x >= hi) return b == 64 ? (uint64_t)INT64_MAX : (uint64_t)((int64_t)hi - 1);
        return (uint64_t)(int64_t)x;
    }
    double hi = ldexp(1.0, (int)b);
    if (x <= 0) return 0;
    if (x >= hi) return b == 64 ? UINT64_MAX : (uint64_t)hi - 1;
    return (uint64_t)x;
}

/* a tensor of dtype t from canonical 64-bit patterns (stored at t's width) */
static hcq_tensor *ints(hcq_dtype t, const uint64_t *v, int64_t n)
{
    size_t es = hcq_dtype_size(t);
    uint8_t *raw = calloc((size_t)n + 1, es);
    for (int64_t i = 0; i < n; i++) memcpy(raw + i * es, &v[i], es); /* little-endian: the low bytes */
    hcq_tensor *r = hcq_from_data(tx_ctx, t, &n, 1, raw);
    free(raw);
    cr_assert_not_null(r, "from_data %s: %s", hcq_dtype_name(t), hcq_error_message());
    return r;
}

/* the elements as canonical 64-bit patterns */
static void read_ints(hcq_tensor *x, uint64_t *out, int64_t n)
{
    cr_assert_not_null(x, "tensor is NULL: %s", hcq_error_message());
    hcq_dtype t = hcq_tensor_dtype(x);
    cr_assert_eq(hcq_tensor_numel(x), n, "numel %lld, want %lld", (long long)hcq_tensor_numel(x), (long long)n);
    size_t es = hcq_dtype_size(t);
    uint8_t *raw = calloc((size_t)n + 1, es);
    T_OK(hcq_tensor_read(x, raw, (size_t)n * es));
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = 0;
        memcpy(&v, raw + i * es, es);
        out[i] = t == HCQ_BOOL || t == HCQ_F64 ? v : wrap(t, v);
    }
    free(raw);
}

static void expect_ints(hcq_tensor *x, hcq_dtype t, const uint64_t *want, int64_t n, const char *what)
{
    cr_assert_not_null(x, "%s: %s", what, hcq_error_message());
    cr_assert_eq(hcq_tensor_dtype(x), t, "%s: dtype %s, want %s", what, hcq_dtype_name(hcq_tensor_dtype(x)),
                 hcq_dtype_name(t));
    uint64_t got[64];
    cr_assert(n <= 64);
    read_ints(x, got, n);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s (%s) [%lld]: got 0x%llx, want 0x%llx", what, hcq_dtype_name(t), (long long)i,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
}

static hcq_tensor *f64s(const double *v, int64_t n)
{
    return T_NONNULL(hcq_from_data(tx_ctx, HCQ_F64, &n, 1, v));
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* ** data in and out */
Test(api_tensor_dtypes, data_constants_and_items_round_trip_every_dtype)
{
    const uint64_t v[5] = {0, 1, 0x8000000000000081ull, 0x7fffffffffffffffull, 0xfedcba9876543210ull};
    for (size_t k = 0; k < sizeof INTS / sizeof *INTS; k++) {
        hcq_dtype t = INTS[k];
        uint64_t w[5];
        for (int i = 0; i < 5; i++) w[i] = wrap(t, v[i]);
        expect_ints(ints(t, w, 5), t, w, 5, "from_data");
        /* constants read without a kernel, and through one (x + 0 of a buffer) */
        hcq_tensor *c = T_NONNULL(hcq_full(tx_ctx, t, HCQ_SHAPE(3), 100));
        expect_ints(c, t, (uint64_t[]){100, 100, 100}, 3, "full");
        double item;
        T_OK(hcq_tensor_item(hcq_slice(ints(t, w, 5), 0, 1, 2, 1), &item));
        cr_assert_eq(item, 1.0, "%s item %g", hcq_dtype_name(t), item);
        /* hcq_full saturates a value beyond the dtype, as a cast does */
        expect_ints(hcq_full(tx_ctx, t, HCQ_SHAPE(1), -1e30), t, (uint64_t[]){sat(t, -1e30)}, 1, "full(-1e30)");
    }
    const double d[4] = {0.1, -0.0, 1e308, 5e-324};
    hcq_tensor *x = f64s(d, 4);
    expect_ints(x, HCQ_F64, (uint64_t[]){dbits(0.1), dbits(-0.0), dbits(1e308), dbits(5e-324)}, 4, "f64 data");
    double item;
    T_OK(hcq_tensor_item(hcq_full(tx_ctx, HCQ_F64, NULL, 0, 0.1), &item));
    cr_assert_eq(dbits(item), dbits(0.1), "f64 item keeps every bit");
}

/* ** casts */
Test(api_tensor_dtypes, float_to_integer_casts_truncate_and_saturate)
{
    const double x[12] = {NAN, -INFINITY, -1e20, -32769.5, -129.5, -1.75, -0.0, 0.9, 255.5, 70000.25, 3e9, INFINITY};
    hcq_tensor *f = f64s(x, 12), *f32 = hcq_cast(f, HCQ_F32), *r[16];
    for (size_t k = 0; k < 8; k++) r[2 * k] = hcq_cast(f, INTS[k]), r[2 * k + 1] = hcq_cast(f32, INTS[k]);
    T_OK(hcq_realize_all(r, 16)); /* one kernel writes them all */
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        uint64_t want[12], want32[12];
        for (int i = 0; i < 12; i++) want[i] = sat(t, x[i]), want32[i] = sat(t, (double)(float)x[i]);
        expect_ints(r[2 * k], t, want, 12, "cast from f64");
        expect_ints(r[2 * k + 1], t, want32, 12, "cast from f32");
    }
}

Test(api_tensor_dtypes, integer_casts_wrap_and_widen_by_sign)
{
    const uint64_t v[6] = {0, 1, 127, 0x80, 0xffffffffffffff00ull, 0x123456789abcdefull};
    hcq_tensor *a = ints(HCQ_U64, v, 6), *r[32];
    for (size_t k = 0; k < 8; k++) {
        hcq_tensor *c = hcq_cast(a, INTS[k]);
        r[4 * k] = c, r[4 * k + 1] = hcq_cast(c, HCQ_I64), r[4 * k + 2] = hcq_cast(c, HCQ_F64), r[4 * k + 3] = hcq_cast(c, HCQ_BOOL);
    }
    T_OK(hcq_realize_all(r, 32)); /* one kernel writes them all */
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        uint64_t want[6];
        for (int i = 0; i < 6; i++) want[i] = wrap(t, v[i]);
        expect_ints(r[4 * k], t, want, 6, "cast from u64");
        /* and back to i64: sign- or zero-extended by the source's dtype */
        expect_ints(r[4 * k + 1], HCQ_I64, want, 6, "widened to i64");
        /* to f64: exact below 2^53, rounded to nearest above */
        double wd[6];
        uint64_t wb[6];
        for (int i = 0; i < 6; i++) {
            wd[i] = hcq_dtype_is_signed(t) ? (double)(int64_t)want[i] : (double)want[i];
            wb[i] = dbits(wd[i]);
        }
        expect_ints(r[4 * k + 2], HCQ_F64, wb, 6, "to f64");
        expect_ints(r[4 * k + 3], HCQ_BOOL, (uint64_t[]){0, 1, want[2] != 0, want[3] != 0, want[4] != 0, want[5] != 0},
                    6, "to bool");
    }
}

/* integer -> bf16 and f16 at the ends of each width, -32768 above all: a
 * narrow integer's f32 is exact, so one rounding to nearest-even gives the
 * half (ptxas once turned clang's |v| for an i16 into a signed 16-bit
 * conversion of 0x8000 and the sign came out wrong on sm_80/sm_90) */
static uint16_t bf16_rne(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

Test(api_tensor_dtypes, narrow_integers_to_bf16_and_f16_round_once_with_their_sign)
{
    static const hcq_dtype ts[] = {HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_I32};
    /* every value is exact in f32 (at most 24 significant bits) */
    const uint64_t v[8] = {0, 1, 0xffffffffffffffffull, 0xffffffffffff8000ull, 0x7fff, 0x8001, 0x101,
                           0xffffffff80000000ull};
    hcq_tensor *r[10];
    for (size_t k = 0; k < 5; k++) {
        hcq_tensor *a = ints(ts[k], v, 8);
        r[2 * k] = hcq_cast(a, HCQ_BF16), r[2 * k + 1] = hcq_cast(a, HCQ_F16);
    }
    T_OK(hcq_realize_all(r, 10));
    for (size_t k = 0; k < 5; k++) {
        hcq_dtype t = ts[k];
        uint16_t got[8], goth[8];
        T_OK(hcq_tensor_read(r[2 * k], got, sizeof got));
        T_OK(hcq_tensor_read(r[2 * k + 1], goth, sizeof goth));
        for (int i = 0; i < 8; i++) {
            uint64_t w = wrap(t, v[i]);
            float f = hcq_dtype_is_signed(t) ? (float)(int64_t)w : (float)w;
            cr_assert_eq(got[i], bf16_rne(f), "%s %g to bf16: 0x%04x, want 0x%04x", hcq_dtype_name(t), (double)f, got[i],
                         bf16_rne(f));
        }
        if (t == HCQ_I16) { /* f16: 0, 1, -1, -32768, 32767 -> 32768, -32767 -> -32768, 257, 0 */
            static const uint16_t want[8] = {0, 0x3c00, 0xbc00, 0xf800, 0x7800, 0xf800, 0x5c04, 0};
            for (int i = 0; i < 8; i++)
                cr_assert_eq(goth[i], want[i], "i16 element %d to f16: 0x%04x, want 0x%04x", i, goth[i], want[i]);
        }
    }
}

/* ** arithmetic */
static uint64_t ref_div(hcq_dtype t, uint64_t x, uint64_t y, bool mod)
{
    if (y == 0) return 0;
    if (hcq_dtype_is_signed(t)) {
        int64_t a = (int64_t)x, b = (int64_t)y;
        if (b == -1) return mod ? 0 : wrap(t, 0 - x);
        return wrap(t, (uint64_t)(mod ? a % b : a / b));
    }
    return mod ? x % y : x / y;
}

Test(api_tensor_dtypes, integer_arithmetic_wraps_and_divides_as_c_at_every_width)
{
    const uint64_t xs[8] = {7, 0xffffffffffffff80ull, 100, 0x8000000000000000ull, 5, 0xfffffffffffffff9ull, 0, 0x7fffffffffffffffull};
    const uint64_t ys[8] = {2, 0xffffffffffffffffull, 0, 0xffffffffffffffffull, 200, 2, 3, 0x7fffffffffffffffull};
    enum { NOPS = 10 };
    hcq_tensor *r[8][NOPS];
    for (size_t k = 0; k < 8; k++) { /* every dtype's results realized together: few kernels */
        hcq_dtype t = INTS[k];
        uint64_t x[8], y[8];
        for (int i = 0; i < 8; i++) x[i] = wrap(t, xs[i]), y[i] = wrap(t, ys[i]);
        hcq_tensor *a = ints(t, x, 8), *b = ints(t, y, 8);
        hcq_tensor *o[NOPS] = {hcq_add(a, b), hcq_sub(a, b), hcq_mul(a, b), hcq_idiv(a, b), hcq_mod(a, b),
                               hcq_logical_and(a, b), hcq_logical_or(a, b), hcq_logical_xor(a, b), hcq_neg(a),
                               hcq_logical_xor(a, hcq_full(tx_ctx, t, NULL, 0, hcq_dtype_is_signed(t) ? -1 : 0))};
        for (int i = 0; i < NOPS; i++) cr_assert_not_null(r[k][i] = o[i], "%s op %d: %s", hcq_dtype_name(t), i, hcq_error_message());
    }
    T_OK(hcq_realize_all(&r[0][0], 8 * NOPS));
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        uint64_t x[8], y[8], add[8], sub[8], mul[8], dv[8], md[8], an[8], orr[8], xr[8], nt[8], ng[8];
        for (int i = 0; i < 8; i++) {
            x[i] = wrap(t, xs[i]);
            y[i] = wrap(t, ys[i]);
            add[i] = wrap(t, x[i] + y[i]);
            sub[i] = wrap(t, x[i] - y[i]);
            mul[i] = wrap(t, x[i] * y[i]);
            dv[i] = ref_div(t, x[i], y[i], false);
            md[i] = ref_div(t, x[i], y[i], true);
            an[i] = x[i] & y[i];
            orr[i] = x[i] | y[i];
            xr[i] = x[i] ^ y[i];
            nt[i] = wrap(t, ~x[i]);
            ng[i] = wrap(t, 0 - x[i]);
        }
        expect_ints(r[k][0], t, add, 8, "add");
        expect_ints(r[k][1], t, sub, 8, "sub");
        expect_ints(r[k][2], t, mul, 8, "mul");
        expect_ints(r[k][3], t, dv, 8, "idiv");
        expect_ints(r[k][4], t, md, 8, "mod");
        expect_ints(r[k][5], t, an, 8, "and");
        expect_ints(r[k][6], t, orr, 8, "or");
        expect_ints(r[k][7], t, xr, 8, "xor");
        expect_ints(r[k][8], t, ng, 8, "neg");
        if (hcq_dtype_is_signed(t)) expect_ints(r[k][9], t, nt, 8, "xor -1 (not)");
    }
}

Test(api_tensor_dtypes, comparisons_max_min_and_where_order_unsigned_above_the_sign_bit)
{
    const uint64_t xs[6] = {0, 1, 0xffffffffffffffffull, 0x80, 0x8000000000000000ull, 5};
    const uint64_t ys[6] = {1, 0, 1, 0x7f, 0x7fffffffffffffffull, 5};
    hcq_tensor *r[8][5];
    for (size_t k = 0; k < 8; k++) { /* every dtype's results realized together: few kernels */
        hcq_dtype t = INTS[k];
        uint64_t x[6], y[6];
        for (int i = 0; i < 6; i++) x[i] = wrap(t, xs[i]), y[i] = wrap(t, ys[i]);
        hcq_tensor *a = ints(t, x, 6), *b = ints(t, y, 6);
        hcq_tensor *o[5] = {hcq_lt(a, b), hcq_eq(a, b), hcq_maximum(a, b), hcq_minimum(a, b),
                            hcq_where(hcq_lt(a, b), a, hcq_scalar(tx_ctx, 3))};
        memcpy(r[k], o, sizeof o);
    }
    T_OK(hcq_realize_all(&r[0][0], 8 * 5));
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        bool sg = hcq_dtype_is_signed(t);
        uint64_t x[6], y[6], lt[6], eq[6], mx[6], mn[6], wh[6];
        for (int i = 0; i < 6; i++) {
            x[i] = wrap(t, xs[i]);
            y[i] = wrap(t, ys[i]);
            bool l = sg ? (int64_t)x[i] < (int64_t)y[i] : x[i] < y[i];
            lt[i] = l;
            eq[i] = x[i] == y[i];
            mx[i] = l ? y[i] : x[i];
            mn[i] = l ? x[i] : y[i];
            wh[i] = l ? x[i] : wrap(t, 3);
        }
        expect_ints(r[k][0], HCQ_BOOL, lt, 6, "lt");
        expect_ints(r[k][1], HCQ_BOOL, eq, 6, "eq");
        expect_ints(r[k][2], t, mx, 6, "maximum");
        expect_ints(r[k][3], t, mn, 6, "minimum");
        expect_ints(r[k][4], t, wh, 6, "where");
    }
}

/* ** reductions */
Test(api_tensor_dtypes, sums_accumulate_in_the_stated_dtype)
{
    /* narrow integers add up in 32 bits: i8/i16 in i32, u8/u16 in u32 */
    uint64_t v[8];
    for (int i = 0; i < 8; i++) v[i] = 200;
    expect_ints(hcq_sum(ints(HCQ_U8, v, 8), HCQ_ALL_AXES, false), HCQ_U32, (uint64_t[]){1600}, 1, "sum u8");
    for (int i = 0; i < 8; i++) v[i] = wrap(HCQ_I8, (uint64_t)-100);
    expect_ints(hcq_sum(ints(HCQ_I8, v, 8), HCQ_ALL_AXES, false), HCQ_I32, (uint64_t[]){wrap(HCQ_I32, (uint64_t)-800)}, 1,
                "sum i8");
    for (int i = 0; i < 8; i++) v[i] = 60000;
    expect_ints(hcq_sum(ints(HCQ_U16, v, 8), HCQ_ALL_AXES, false), HCQ_U32, (uint64_t[]){480000}, 1, "sum u16");
    /* 64-bit sums wrap at 64 bits; u32 at 32 */
    uint64_t big[4] = {0x7fffffffffffffffull, 2, 3, 0x4000000000000000ull}, s64 = 0;
    for (int i = 0; i < 4; i++) s64 += big[i];
    expect_ints(hcq_sum(ints(HCQ_I64, big, 4), HCQ_ALL_AXES, false), HCQ_I64, (uint64_t[]){s64}, 1, "sum i64");
    expect_ints(hcq_sum(ints(HCQ_U64, big, 4), HCQ_ALL_AXES, false), HCQ_U64, (uint64_t[]){s64}, 1, "sum u64");
    uint64_t u32v[3] = {0xffffffffull, 2, 0x80000000ull};
    expect_ints(hcq_sum(ints(HCQ_U32, u32v, 3), HCQ_ALL_AXES, false), HCQ_U32,
                (uint64_t[]){(0xffffffffull + 2 + 0x80000000ull) & 0xffffffffull}, 1, "sum u32");
    /* products likewise */
    uint64_t p[3] = {200, 200, 3};
    expect_ints(hcq_prod(ints(HCQ_U8, p, 3), HCQ_ALL_AXES, false), HCQ_U32, (uint64_t[]){120000}, 1, "prod u8");
}

Test(api_tensor_dtypes, max_min_and_empty_reductions_use_the_dtype_range)
{
    const uint64_t xs[4] = {5, 0xffffffffffffff00ull, 0x8000000000000001ull, 7};
    hcq_tensor *r[8][3];
    for (size_t k = 0; k < 8; k++) {
        uint64_t x[4];
        for (int i = 0; i < 4; i++) x[i] = wrap(INTS[k], xs[i]);
        hcq_tensor *a = ints(INTS[k], x, 4);
        r[k][0] = hcq_max(a, HCQ_ALL_AXES, false), r[k][1] = hcq_min(a, HCQ_ALL_AXES, false), r[k][2] = hcq_argmax(a, 0, false);
    }
    T_OK(hcq_realize_all(&r[0][0], 8 * 3)); /* together: few kernels */
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        bool sg = hcq_dtype_is_signed(t);
        uint64_t x[4], mx, mn;
        for (int i = 0; i < 4; i++) x[i] = wrap(t, xs[i]);
        mx = mn = x[0];
        for (int i = 1; i < 4; i++) {
            if (sg ? (int64_t)x[i] > (int64_t)mx : x[i] > mx) mx = x[i];
            if (sg ? (int64_t)x[i] < (int64_t)mn : x[i] < mn) mn = x[i];
        }
        expect_ints(r[k][0], t, &mx, 1, "max");
        expect_ints(r[k][1], t, &mn, 1, "min");
        int64_t am = 0;
        for (int i = 0; i < 4; i++)
            if (x[i] == mx) {
                am = i;
                break;
            }
        expect_ints(r[k][2], HCQ_I32, (uint64_t[]){(uint64_t)am}, 1, "argmax");
        /* empty: max is the dtype's least value, min its greatest (constants, no kernel) */
        hcq_tensor *e = hcq_zeros(tx_ctx, t, HCQ_SHAPE(0));
        uint64_t least = sg ? wrap(t, 1ull << (bits(t) - 1)) : 0, most = sg ? wrap(t, least - 1) : wrap(t, ~0ull);
        expect_ints(hcq_max(e, HCQ_ALL_AXES, false), t, &least, 1, "empty max");
        expect_ints(hcq_min(e, HCQ_ALL_AXES, false), t, &most, 1, "empty min");
    }
}

/* ** f64 */
Test(api_tensor_dtypes, f64_arithmetic_gives_the_same_bits_as_c_double)
{
    const double x[6] = {0.1, 1e300, -3.5, 1.0 / 3.0, 5e-324, 2.0};
    const double y[6] = {0.2, 1e10, 0.0, 3.0, 0.5, 1e-300};
    uint64_t add[6], mul[6], dv[6], sq[6];
    volatile double vx, vy; /* keep the host from folding with other precision */
    for (int i = 0; i < 6; i++) {
        vx = x[i];
        vy = y[i];
        add[i] = dbits(vx + vy);
        mul[i] = dbits(vx * vy);
        dv[i] = dbits(vx / vy);
        sq[i] = dbits(sqrt(fabs(vx)));
    }
    hcq_tensor *a = f64s(x, 6), *b = f64s(y, 6);
    hcq_tensor *r[4] = {hcq_add(a, b), hcq_mul(a, b), hcq_div(a, b), hcq_sqrt(hcq_abs(a))};
    T_OK(hcq_realize_all(r, 4));
    expect_ints(r[0], HCQ_F64, add, 6, "add");
    expect_ints(r[1], HCQ_F64, mul, 6, "mul");
    expect_ints(r[2], HCQ_F64, dv, 6, "div");
    expect_ints(r[3], HCQ_F64, sq, 6, "sqrt");
    /* a sum and a mean of values whose partial sums are exact in any order */
    const double s[8] = {0.5, 1e15, 0.25, -1e15, 3, 2.75, 1, 0.5};
    hcq_tensor *t = f64s(s, 8);
    expect_ints(hcq_sum(t, HCQ_ALL_AXES, false), HCQ_F64, (uint64_t[]){dbits(8.0)}, 1, "sum");
    expect_ints(hcq_mean(t, HCQ_ALL_AXES, false), HCQ_F64, (uint64_t[]){dbits(1.0)}, 1, "mean");
    /* f64's float functions compute in f64: far beyond f32's precision (a
     * constant folds, through the interpreter; data goes through a kernel) */
    const double v[3] = {1.0, 2.0, 0.3};
    hcq_tensor *tv = f64s(v, 3);
    const char *target = hcq_device_get_props(tx_dev)->target;
    if (!strncmp(target, "gfx", 3)) { /* AMD targets compile without ROCm's device library: refused when called */
        cr_assert_null(hcq_exp(tv));
        cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
        cr_assert(strstr(hcq_error_message(), "hcq_exp") && strstr(hcq_error_message(), "f64"), "%s", hcq_error_message());
        cr_assert_null(hcq_pow_s(tv, 1.5));
        cr_assert(!strncmp(hcq_error_message(), "hcq_pow", 7), "%s", hcq_error_message());
        return;
    }
    double e;
    T_OK(hcq_tensor_item(hcq_exp(hcq_full(tx_ctx, HCQ_F64, NULL, 0, 1.0)), &e));
    cr_assert(fabs(e - M_E) < 1e-14, "exp(1) in f64 is %.17g", e);
    hcq_tensor *fr[5] = {hcq_exp(tv), hcq_log(tv), hcq_sin(tv), hcq_pow_s(tv, 1.5), hcq_tanh(tv)};
    T_OK(hcq_realize_all(fr, 5));
    double (*ref[5])(double) = {exp, log, sin, NULL, tanh};
    for (int f = 0; f < 5; f++) {
        double got[3];
        cr_assert_eq(hcq_tensor_dtype(fr[f]), HCQ_F64);
        T_OK(hcq_tensor_read(fr[f], got, sizeof got));
        for (int i = 0; i < 3; i++) {
            double want = ref[f] ? ref[f](v[i]) : pow(v[i], 1.5);
            cr_assert(fabs(got[i] - want) <= 1e-14 * fabs(want) + 1e-15, "f64 function %d of %g: %.17g, want %.17g", f,
                      v[i], got[i], want);
        }
    }
}

Test(api_tensor_dtypes, matmuls_of_f64_and_small_integers)
{
    /* f64: products of dyadic values, exact in any summation order */
    const double a[6] = {1.5, -2, 0.25, 3, 1e-3, 7}, b[6] = {2, 0.5, -4, 8, 1, 0.125};
    hcq_tensor *ta = T_NONNULL(hcq_from_data(tx_ctx, HCQ_F64, HCQ_SHAPE(2, 3), a));
    hcq_tensor *tb = T_NONNULL(hcq_from_data(tx_ctx, HCQ_F64, HCQ_SHAPE(3, 2), b));
    uint64_t w[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double acc = 0;
            for (int k = 0; k < 3; k++) acc += a[i * 3 + k] * b[k * 2 + j];
            w[i * 2 + j] = dbits(acc);
        }
    expect_ints(hcq_matmul(ta, tb), HCQ_F64, w, 4, "f64 matmul");
    /* i8 and u8 accumulate (and result) in i32 / u32: 100 * 100 * 3 does not fit 8 bits */
    uint64_t x8[6], y8[6];
    for (int i = 0; i < 6; i++) x8[i] = wrap(HCQ_I8, (uint64_t)(i % 2 ? -100 : 100)), y8[i] = 100;
    hcq_tensor *xi = hcq_reshape(ints(HCQ_I8, x8, 6), HCQ_SHAPE(2, 3)), *yi = hcq_reshape(ints(HCQ_I8, y8, 6), HCQ_SHAPE(3, 2));
    expect_ints(hcq_matmul(xi, yi), HCQ_I32,
                (uint64_t[]){10000, 10000, wrap(HCQ_I32, (uint64_t)-10000), wrap(HCQ_I32, (uint64_t)-10000)}, 4, "i8 matmul");
    uint64_t u8[6] = {200, 200, 200, 1, 2, 3};
    hcq_tensor *xu = hcq_reshape(ints(HCQ_U8, u8, 6), HCQ_SHAPE(2, 3)), *yu = hcq_reshape(ints(HCQ_U8, u8, 6), HCQ_SHAPE(3, 2));
    /* [[200,200,200],[1,2,3]] @ [[200,200],[200,1],[2,3]] */
    expect_ints(hcq_matmul(xu, yu), HCQ_U32, (uint64_t[]){80400, 40800, 606, 211}, 4, "u8 matmul");
}

/* ** promotion and refusals */
Test(api_tensor_dtypes, promotion_follows_the_header_table)
{
    static const struct {
        hcq_dtype a, b, r;
    } tab[] = {
        {HCQ_BOOL, HCQ_U8, HCQ_U8},   {HCQ_U8, HCQ_I8, HCQ_I16},    {HCQ_U16, HCQ_I16, HCQ_I32},
        {HCQ_U32, HCQ_I32, HCQ_I64},  {HCQ_U64, HCQ_I64, HCQ_F64},  {HCQ_U8, HCQ_I32, HCQ_I32},
        {HCQ_U32, HCQ_I64, HCQ_I64},  {HCQ_I8, HCQ_I64, HCQ_I64},   {HCQ_U16, HCQ_U64, HCQ_U64},
        {HCQ_I64, HCQ_F16, HCQ_F16},  {HCQ_F16, HCQ_F64, HCQ_F64},  {HCQ_BF16, HCQ_F64, HCQ_F64},
        {HCQ_F32, HCQ_F64, HCQ_F64},  {HCQ_U8, HCQ_F32, HCQ_F32},
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
        size_t m = hcq_ctx_mark(tx_ctx);
        hcq_tensor *a = hcq_zeros(tx_ctx, tab[i].a, HCQ_SHAPE(2)), *b = hcq_zeros(tx_ctx, tab[i].b, HCQ_SHAPE(2));
        hcq_tensor *s = hcq_add(a, b), *s2 = hcq_add(b, a);
        cr_assert_not_null(s, "%s + %s: %s", hcq_dtype_name(tab[i].a), hcq_dtype_name(tab[i].b), hcq_error_message());
        cr_assert_eq(hcq_tensor_dtype(s), tab[i].r, "%s + %s is %s, want %s", hcq_dtype_name(tab[i].a),
                     hcq_dtype_name(tab[i].b), hcq_dtype_name(hcq_tensor_dtype(s)), hcq_dtype_name(tab[i].r));
        cr_assert_eq(hcq_tensor_dtype(s2), tab[i].r, "the table is symmetric");
        T_OK(hcq_ctx_release(tx_ctx, m));
    }
    /* weak scalars take the tensor's dtype when they are integers it holds,
     * else its float */
    hcq_tensor *u = T_NONNULL(hcq_from_data(tx_ctx, HCQ_U8, HCQ_SHAPE(2), ((uint8_t[]){250, 3})));
    expect_ints(hcq_add_s(u, 7), HCQ_U8, (uint64_t[]){1, 10}, 2, "u8 + 7 wraps in u8");
    cr_assert_eq(hcq_tensor_dtype(hcq_add_s(u, 0.5)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_add_s(hcq_zeros(tx_ctx, HCQ_I64, HCQ_SHAPE(2)), 0.5)), HCQ_F64);
    double got;
    T_OK(hcq_tensor_item(hcq_slice(hcq_add_s(u, 300), 0, 0, 1, 1), &got));
    cr_assert_eq(got, 550.0, "u8 + 300 is 550 in f32, not a wrapped sum: %g", got);
    cr_assert_eq(hcq_tensor_dtype(hcq_add_s(u, -1)), HCQ_F32, "-1 is not a u8");
    /* an integer beyond i32 keeps an i64 or u64 tensor's dtype, exactly */
    expect_ints(hcq_add_s(hcq_zeros(tx_ctx, HCQ_I64, HCQ_SHAPE(1)), 3e12), HCQ_I64, (uint64_t[]){3000000000000ull}, 1,
                "i64 + 3e12");
    expect_ints(hcq_add_s(hcq_ones(tx_ctx, HCQ_U64, HCQ_SHAPE(1)), 0x1p63), HCQ_U64, (uint64_t[]){0x8000000000000001ull}, 1,
                "u64 + 2^63");
    cr_assert_eq(hcq_tensor_dtype(hcq_add_s(hcq_zeros(tx_ctx, HCQ_I32, HCQ_SHAPE(1)), 3e12)), HCQ_F32, "beyond i32");
    /* true division: f32 for narrow integers, f64 for 64-bit ones */
    cr_assert_eq(hcq_tensor_dtype(hcq_div(u, u)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_div(hcq_zeros(tx_ctx, HCQ_U64, HCQ_SHAPE(2)), u)), HCQ_F64);
}

Test(api_tensor_dtypes, integer_only_ops_refuse_floats_naming_the_call_and_dtypes)
{
    hcq_tensor *d = hcq_zeros(tx_ctx, HCQ_F64, HCQ_SHAPE(2)), *i = hcq_zeros(tx_ctx, HCQ_I64, HCQ_SHAPE(2));
    cr_assert_null(hcq_idiv(d, i));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "hcq_idiv") && strstr(hcq_error_message(), "f64"), "message: %s",
              hcq_error_message());
    cr_assert_null(hcq_logical_xor(i, d));
    cr_assert(strstr(hcq_error_message(), "hcq_logical_xor") && strstr(hcq_error_message(), "f64"), "message: %s",
              hcq_error_message());
    cr_assert_null(hcq_bitcast(i, HCQ_I32));
    cr_assert(strstr(hcq_error_message(), "hcq_bitcast"), "message: %s", hcq_error_message());
    cr_assert_null(hcq_cast(i, HCQ_VOID));
    cr_assert(strstr(hcq_error_message(), "hcq_cast"), "message: %s", hcq_error_message());
    /* bitcast of same-size dtypes moves bits */
    expect_ints(hcq_bitcast(hcq_full(tx_ctx, HCQ_F64, HCQ_SHAPE(1), -2.0), HCQ_U64), HCQ_U64, (uint64_t[]){dbits(-2.0)}, 1,
                "bitcast f64 -> u64");
}

Test(api_tensor_dtypes, gathers_take_any_integer_index_dtype)
{
    const double w[6] = {10, 11, 20, 21, 30, 31};
    hcq_tensor *tw = T_NONNULL(hcq_from_data(tx_ctx, HCQ_F64, HCQ_SHAPE(3, 2), w));
    /* i64 and u8 indexes; one beyond i32 (and out of range) gives a zero row */
    uint64_t ix[3] = {2, 0x100000000ull, 1};
    hcq_tensor *e = hcq_embedding(tw, ints(HCQ_I64, ix, 3));
    expect_ints(e, HCQ_F64, (uint64_t[]){dbits(30), dbits(31), 0, 0, dbits(20), dbits(21)}, 6, "embedding i64");
    uint64_t iu[2] = {0, 2};
    expect_ints(hcq_embedding(tw, ints(HCQ_U8, iu, 2)), HCQ_F64, (uint64_t[]){dbits(10), dbits(11), dbits(30), dbits(31)}, 4,
                "embedding u8");
}

/* ** IDX files: each type code becomes a tensor of its dtype */
static void write_idx(const char *path, uint8_t type, const void *elems, int n, int es)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    const uint8_t head[8] = {0, 0, type, 1, 0, 0, 0, (uint8_t)n};
    fwrite(head, 1, 8, f);
    for (int i = 0; i < n; i++) /* big-endian elements */
        for (int b = es - 1; b >= 0; b--) fputc(((const uint8_t *)elems)[i * es + b], f);
    fclose(f);
}

Test(api_tensor_dtypes, idx_files_load_as_tensors_of_their_dtype)
{
    static const struct {
        uint8_t type;
        hcq_dtype dt;
    } codes[] = {{0x08, HCQ_U8}, {0x09, HCQ_I8}, {0x0b, HCQ_I16}, {0x0c, HCQ_I32}, {0x0d, HCQ_F32}, {0x0e, HCQ_F64}};
    char path[T_TMP_PATH];
    int fd = t_tmpfile(path, sizeof path, "hcq-idx");
    cr_assert(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        uint8_t raw[3 * 8];
        int es = (int)hcq_dtype_size(codes[i].dt);
        for (int k = 0; k < 3 * es; k++) raw[k] = (uint8_t)(0x91 + 7 * k); /* every byte differs */
        write_idx(path, codes[i].type, raw, 3, es);
        hcq_idx x;
        T_OK(hcq_idx_read(path, &x));
        hcq_tensor *t = hcq_idx_tensor(tx_ctx, &x);
        hcq_idx_free(&x);
        cr_assert_not_null(t, "type 0x%02x: %s", codes[i].type, hcq_error_message());
        cr_assert_eq(hcq_tensor_dtype(t), codes[i].dt, "type 0x%02x is %s", codes[i].type,
                     hcq_dtype_name(hcq_tensor_dtype(t)));
        uint8_t back[3 * 8];
        T_OK(hcq_tensor_read(t, back, (size_t)(3 * es)));
        cr_assert(!memcmp(back, raw, (size_t)(3 * es)), "type 0x%02x: the elements' bits come through", codes[i].type);
    }
    unlink(path);
    cr_assert_null(hcq_idx_tensor(tx_ctx, NULL));
    cr_assert(strstr(hcq_error_message(), "hcq_idx_tensor"), "message: %s", hcq_error_message());
}

/* ** shifts and bitwise not: counts modulo the width, >> arithmetic on
 * signed dtypes and logical on unsigned ones */
Test(api_tensor_dtypes, shifts_take_the_count_modulo_the_width)
{
    const uint64_t xs[4] = {0x8000000000000081ull, 1, 0xfffffffffffffff0ull, 0x5a};
    const uint64_t cs[4] = {1, 3, 65, 200}; /* 65 and 200: beyond every width */
    hcq_tensor *r[8][3];
    for (size_t k = 0; k < 8; k++) {
        uint64_t x[4], c[4];
        for (int i = 0; i < 4; i++) x[i] = wrap(INTS[k], xs[i]), c[i] = wrap(INTS[k], cs[i]);
        hcq_tensor *a = ints(INTS[k], x, 4), *b = ints(INTS[k], c, 4);
        r[k][0] = hcq_shl(a, b), r[k][1] = hcq_shr(a, b), r[k][2] = hcq_bitwise_not(a);
    }
    T_OK(hcq_realize_all(&r[0][0], 8 * 3));
    for (size_t k = 0; k < 8; k++) {
        hcq_dtype t = INTS[k];
        unsigned w = bits(t);
        uint64_t shl[4], shr[4], nt[4];
        for (int i = 0; i < 4; i++) {
            uint64_t x = wrap(t, xs[i]), n = wrap(t, cs[i]) & (w - 1);
            shl[i] = wrap(t, x << n);
            shr[i] = hcq_dtype_is_signed(t) ? (uint64_t)((int64_t)x >> n) : x >> n;
            nt[i] = wrap(t, ~x);
        }
        expect_ints(r[k][0], t, shl, 4, "shl");
        expect_ints(r[k][1], t, shr, 4, "shr");
        expect_ints(r[k][2], t, nt, 4, "bitwise_not");
    }
    hcq_tensor *f = hcq_zeros(tx_ctx, HCQ_F64, HCQ_SHAPE(1));
    cr_assert_null(hcq_shl(f, f));
    cr_assert(strstr(hcq_error_message(), "hcq_shl") && strstr(hcq_error_message(), "f64"), "%s", hcq_error_message());
    cr_assert_null(hcq_bitwise_not(f));
    cr_assert(strstr(hcq_error_message(), "hcq_bitwise_not") && strstr(hcq_error_message(), "f64"), "%s",
              hcq_error_message());
    expect_ints(hcq_bitwise_not(hcq_cast(hcq_ones(tx_ctx, HCQ_I32, HCQ_SHAPE(1)), HCQ_BOOL)), HCQ_BOOL, (uint64_t[]){0}, 1,
                "not true");
}
