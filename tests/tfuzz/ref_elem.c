/* The reference, one element at a time: the dtypes' rounding written from
 * the formats' definitions, IEEE ops on elements with their error bounds,
 * tensor.h's formulas for the float functions, and the unary ops. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ** dtypes: rounding written from the formats' definitions */
static double fmt_round(double x, int p, int emin, double maxv)
{
    if (isnan(x) || isinf(x) || x == 0) return x;
    double a = fabs(x);
    int k;
    frexp(a, &k);
    int E = k - 1 < emin ? emin : k - 1;
    double q = ldexp(1.0, E - (p - 1));
    double r = nearbyint(a / q) * q;
    if (r > maxv) r = INFINITY;
    return copysign(r, x);
}

double ref_max_finite(hcq_dtype dt)
{
    switch (dt) {
    case HCQ_F16: return 65504.0;
    case HCQ_BF16: return 0x1.fep127;
    case HCQ_F32: return FLT_MAX;
    default: return is_int(dt) ? ref_int_hi(dt) : 1.0;
    }
}

/* the integer dtypes' ranges, from their widths */
static int int_width(hcq_dtype dt) { return (int)hcq_dtype_size(dt) * 8; }
double ref_int_lo(hcq_dtype dt) { return is_unsigned(dt) ? 0 : -ldexp(1.0, int_width(dt) - 1); }
double ref_int_hi(hcq_dtype dt) { return ldexp(1.0, int_width(dt) - (is_unsigned(dt) ? 0 : 1)) - 1; }

double ref_wrap(hcq_dtype dt, int64_t v)
{
    int w = int_width(dt);
    uint64_t u = (uint64_t)v & ((1ull << w) - 1);
    if (!is_unsigned(dt) && (u >> (w - 1))) return (double)(int64_t)(u | ~((1ull << w) - 1));
    return (double)u;
}

/* float to integer: truncates toward zero, saturates, NaN gives 0 */
static double sat_int(hcq_dtype dt, double v)
{
    if (v != v) return 0;
    if (v <= ref_int_lo(dt)) return ref_int_lo(dt);
    if (v >= ref_int_hi(dt)) return ref_int_hi(dt);
    return trunc(v) + 0.0;
}

double ref_sat_i32(double v)
{
    if (v != v) return 0;
    if (v <= -2147483648.0) return -2147483648.0;
    if (v >= 2147483647.0) return 2147483647.0;
    return trunc(v) + 0.0;
}

/* x rounded once to dt (a cast, a constant) */
double tf_round(hcq_dtype dt, double x)
{
    switch (dt) {
    case HCQ_F32: return (double)(float)x;
    case HCQ_F16: return fmt_round(x, 11, -14, 65504.0);
    case HCQ_BF16: return fmt_round(x, 8, -126, 0x1.fep127);
    case HCQ_BOOL: return x != 0;
    default: return is_int(dt) ? sat_int(dt, x) : x;
    }
}

/* the result of an f32 computation stored in dt (halfs: computed in f32,
 * rounded to the half) */
double ref_op_round(hcq_dtype dt, double x) { return dt == HCQ_F32 ? (double)(float)x : tf_round(dt, (double)(float)x); }

uint32_t tf_bits(hcq_dtype dt, double x)
{
    switch (dt) {
    case HCQ_F32: {
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    case HCQ_BF16: {
        if (isnan(x)) return 0x7fc0u;
        float f = (float)x;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u >> 16;
    }
    case HCQ_F16: {
        uint32_t s = signbit(x) ? 0x8000u : 0;
        double a = fabs(x);
        if (isnan(x)) return 0x7e00u;
        if (isinf(x)) return s | 0x7c00u;
        if (a < 0x1p-14) return s | (uint32_t)(a * 0x1p24); /* subnormal (or zero): exact */
        int k;
        frexp(a, &k);
        int E = k - 1;
        return s | (uint32_t)(E + 15) << 10 | ((uint32_t)ldexp(a, 10 - E) - 1024u);
    }
    case HCQ_BOOL: return x != 0;
    default: return is_int(dt) ? (uint32_t)((uint64_t)(int64_t)x & ((1ull << int_width(dt)) - 1)) : 0;
    }
}

double tf_from_bits(hcq_dtype dt, uint32_t b)
{
    switch (dt) {
    case HCQ_F32: {
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    case HCQ_BF16: {
        uint32_t u = b << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case HCQ_F16: {
        double s = b & 0x8000u ? -1 : 1;
        uint32_t e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
        if (e == 0x1f) return m ? NAN : s * INFINITY;
        if (!e) return s * m * 0x1p-24;
        return s * ldexp(1024 + m, (int)e - 25);
    }
    case HCQ_BOOL: return (b & 0xff) != 0;
    default: return is_int(dt) ? ref_wrap(dt, b) : 0;
    }
}

double tf_ulp(hcq_dtype dt, double x)
{
    double a = fabs(x);
    int p, emin;
    switch (dt) {
    case HCQ_F16: p = 11, emin = -14; break;
    case HCQ_BF16: p = 8, emin = -126; break;
    case HCQ_F32: p = 24, emin = -126; break;
    default: return 0;
    }
    if (isinf(a) || isnan(a)) return INFINITY;
    int k = 0;
    if (a > 0) frexp(a, &k);
    int E = k - 1 < emin ? emin : k - 1;
    return ldexp(1.0, E - (p - 1));
}


/* ** elements */
tf_rv ref_rv_dc(void) { return (tf_rv){.v = 0, .e = 0, .b = 0, .f = RV_DC}; }

tf_rv ref_rv_exact(hcq_dtype dt, double x)
{
    if (!is_float(dt)) x += 0.0; /* an integer has no -0 */
    return (tf_rv){.v = x, .e = 0, .b = tf_bits(dt, x), .f = 0};
}

/* x with error bound e before rounding to dt: the rounding adds up to an
 * ulp (the device rounds a value anywhere in the interval) */
tf_rv ref_rv_approx(hcq_dtype dt, double x, double e)
{
    if (e == 0) return ref_rv_exact(dt, tf_round(dt, x));
    if (!is_float(dt)) return ref_rv_dc();
    double r = tf_round(dt, x);
    e += tf_ulp(dt, fabs(x) + e);
    if (isnan(x) || !isfinite(e) || !isfinite(r) || fabs(x) + e > ref_max_finite(dt)) return ref_rv_dc();
    return (tf_rv){.v = r, .e = e, .b = tf_bits(dt, r), .f = 0};
}


tf_rv ref_cast_rv(hcq_dtype from, hcq_dtype to, tf_rv a)
{
    if (dc(a)) return a;
    if (from == to) return a;
    if (to == HCQ_BOOL) {
        if (a.e > 0 && fabs(a.v) <= a.e) return ref_rv_dc();
        return ref_rv_exact(to, a.v != 0);
    }
    if (!is_float(to)) {
        if (!is_float(from)) return ref_rv_exact(to, ref_wrap(to, (int64_t)a.v)); /* integer to integer wraps */
        if (a.e > 0) {
            double lo = sat_int(to, a.v - a.e), hi = sat_int(to, a.v + a.e);
            if (lo != hi) return ref_rv_dc();
        }
        return ref_rv_exact(to, sat_int(to, a.v));
    }
    if (a.e > 0) return ref_rv_approx(to, a.v, a.e);
    return ref_rv_exact(to, tf_round(to, a.v));
}

/* Element i of t in dtype dt: a weak scalar keeps its unrounded double
 * and rounds once, to whatever dtype it meets (tensor.h's weak scalars);
 * anything else is cast from its own dtype. */

double ref_maxnum(double x, double y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return signbit(x) ? y : x;
    return x > y ? x : y;
}

tf_rv ref_fop(hcq_dtype dt, int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return ref_rv_dc();
    double x = a.v, y = b.v, r;
    bool exact = a.e == 0 && b.e == 0;
    switch (op) {
    case F_ADD: r = x + y; break;
    case F_SUB: r = x - y; break;
    case F_MUL: r = x * y; break;
    case F_DIV: r = x / y; break;
    case F_MAX: r = ref_maxnum(x, y); break;
    case F_NEG: r = -x; break;
    case F_SQRT: r = sqrt(x); break;
    case F_RECIP: r = 1.0 / x; break;
    case F_TRUNC: r = trunc(x); break;
    case F_EXP2: r = exp2(x); break;
    case F_LOG2: r = log2(x); break;
    case F_SIN: r = sin(x); break;
    case F_LT:
    case F_NE: {
        if (!exact && !isnan(x) && !isnan(y) && fabs(x - y) <= a.e + b.e) return ref_rv_dc();
        bool t = op == F_LT ? x < y : x != y;
        return ref_rv_exact(HCQ_BOOL, t);
    }
    default: return ref_rv_dc();
    }
    bool trans = op == F_EXP2 || op == F_LOG2 || op == F_SIN;
    if (exact && !trans) {
        if (op == F_NEG || op == F_MAX) { /* exact without rounding: keeps the bits (NaN payloads too) */
            tf_rv o = ref_rv_exact(dt, r);
            if (op == F_MAX && !isnan(r)) o = (r == x && (signbit(r) == signbit(x))) ? a : b;
            return o;
        }
        return ref_rv_exact(dt, ref_op_round(dt, r));
    }
    if (isnan(r) && exact) return ref_rv_exact(dt, r);
    double e = 0;
    switch (op) {
    case F_ADD:
    case F_SUB: e = a.e + b.e; break;
    case F_MUL:
        if ((isinf(x) && fabs(y) <= b.e) || (isinf(y) && fabs(x) <= a.e)) return ref_rv_dc();
        e = fabs(x) * b.e + fabs(y) * a.e + a.e * b.e;
        break;
    case F_DIV:
        if (fabs(y) <= b.e) return ref_rv_dc();
        e = (a.e + fabs(r) * b.e) / (fabs(y) - b.e);
        break;
    case F_RECIP:
        if (fabs(x) <= a.e) return ref_rv_dc();
        e = fabs(r) * a.e / (fabs(x) - a.e);
        break;
    case F_MAX:
    case F_NEG: e = a.e > b.e ? a.e : b.e; break;
    case F_SQRT:
        if (x - a.e < 0) return a.e > 0 && x + a.e >= 0 ? ref_rv_dc() : ref_rv_approx(dt, r, 0);
        e = a.e / (sqrt(x - a.e) + sqrt(x) + 1e-300);
        break;
    case F_TRUNC:
        if (trunc(x - a.e) != trunc(x + a.e)) return ref_rv_dc();
        if (r == 0) return (tf_rv){.v = 0, .e = 0x1p-149, .b = 0, .f = 0}; /* a zero of either sign */
        return ref_rv_exact(dt, ref_op_round(dt, r));
    case F_EXP2:
        e = fabs(r) * (exp2(a.e) - 1) * 1.01 + TRANS_ULP * tf_ulp(HCQ_F32, r);
        break;
    case F_LOG2:
        if (x - a.e <= 0 && a.e > 0) return ref_rv_dc();
        e = a.e / ((x - a.e) * M_LN2) + TRANS_ULP * tf_ulp(HCQ_F32, r);
        break;
    case F_SIN: e = a.e + TRANS_ULP * tf_ulp(HCQ_F32, r); break;
    }
    if (isinf(r) && e == 0) return ref_rv_exact(dt, r);
    if (e == 0) e = 0x1p-149; /* from inexact inputs: not even a zero's sign is certain */
    return ref_rv_approx(dt, r, e);
}

/* integer ops on dt (wrapping at its width; C division with x/0 = 0,
 * MIN/-1 = MIN and MIN%-1 = 0): every value of the modeled integers and
 * every product of two of them fits an int64 */
static tf_rv iop(hcq_dtype dt, int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return ref_rv_dc();
    int64_t x = (int64_t)a.v, y = (int64_t)b.v, r;
    switch (op) {
    case TF_ADD: r = x + y; break;
    case TF_SUB: r = x - y; break;
    case TF_MUL: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
    case TF_IDIV: r = y == 0 ? 0 : y == -1 ? -x : x / y; break;
    case TF_MOD: r = y == 0 || y == -1 ? 0 : x % y; break;
    case TF_MAXIMUM: r = x > y ? x : y; break;
    case TF_AND: r = x & y; break;
    case TF_OR: r = x | y; break;
    case TF_XOR: r = x ^ y; break;
    case TF_SHL:
    case TF_SHR: { /* the count modulo the width (its low bits); >> arithmetic on signed, logical on unsigned */
        unsigned n = (unsigned)((uint64_t)y & (hcq_dtype_size(dt) * 8 - 1));
        r = op == TF_SHL ? (int64_t)((uint64_t)x << n) : x >> n; /* x >= 0 when unsigned: >> is logical */
        break;
    }
    case TF_LT: return ref_rv_exact(HCQ_BOOL, x < y);
    case TF_NE: return ref_rv_exact(HCQ_BOOL, x != y);
    default: return ref_rv_dc();
    }
    return ref_rv_exact(dt, ref_wrap(dt, r));
}

static tf_rv bop(int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return ref_rv_dc();
    bool x = a.v != 0, y = b.v != 0;
    switch (op) {
    case TF_MAXIMUM:
    case TF_OR: return ref_rv_exact(HCQ_BOOL, x || y);
    case TF_AND: return ref_rv_exact(HCQ_BOOL, x && y);
    case TF_XOR: return ref_rv_exact(HCQ_BOOL, x != y);
    case TF_NE: return ref_rv_exact(HCQ_BOOL, x != y);
    case TF_LT: return ref_rv_exact(HCQ_BOOL, x < y);
    default: return ref_rv_dc();
    }
}

/* One binary op on elements of the op dtype dt. */
tf_rv ref_bin_el(hcq_dtype dt, int op, tf_rv a, tf_rv b)
{
    if (is_float(dt)) {
        switch (op) {
        case TF_ADD: return ref_fop(dt, F_ADD, a, b);
        case TF_SUB: return ref_fop(dt, F_SUB, a, b);
        case TF_MUL: return ref_fop(dt, F_MUL, a, b);
        case TF_DIV: return ref_fop(dt, F_DIV, a, b);
        case TF_MAXIMUM: return ref_fop(dt, F_MAX, a, b);
        case TF_LT: return ref_fop(dt, F_LT, a, b);
        case TF_NE: return ref_fop(dt, F_NE, a, b);
        default: return ref_rv_dc();
        }
    }
    return dt == HCQ_BOOL ? bop(op, a, b) : iop(dt, op, a, b);
}

tf_rv ref_not_el(hcq_dtype dt, tf_rv a)
{
    if (dc(a)) return a;
    if (dt == HCQ_BOOL) return ref_rv_exact(HCQ_BOOL, a.v == 0);
    return ref_rv_exact(dt, ref_wrap(dt, ~(int64_t)a.v));
}

/* min(a, b) = -max(-a, -b) for floats (exact, keeps maxNum's rules),
 * and bitwise for ints and bools, as the header's "order flip" */
tf_rv ref_min_el(hcq_dtype dt, tf_rv a, tf_rv b)
{
    if (is_float(dt)) return ref_fop(dt, F_NEG, ref_fop(dt, F_MAX, ref_fop(dt, F_NEG, a, a), ref_fop(dt, F_NEG, b, b)), a);
    if (dc(a) || dc(b)) return ref_rv_dc();
    if (dt == HCQ_BOOL) return ref_rv_exact(dt, a.v != 0 && b.v != 0);
    return ref_rv_exact(dt, a.v < b.v ? a.v : b.v);
}

static double pow_ieee(double x, double y) { return pow(x, y); /* C's pow follows Annex F */ }

/* pow: C's pow in double, rounded to f32; an integral |y| < 32 is computed
 * by repeated squaring (a few roundings), others through exp2/log2 in f32,
 * whose error grows with |y log2 x| */
tf_rv ref_pow_el(tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return ref_rv_dc();
    double x = a.v, y = b.v, r = pow_ieee(x, y);
    bool special = y == 0 || x == 1 || isnan(x) || isnan(y) || isinf(x) || isinf(y) || x == 0 || (x == -1 && isinf(y));
    if (a.e == 0 && b.e == 0 && special) return ref_rv_exact(HCQ_F32, (float)r);
    if (a.e == 0 && b.e == 0 && x < 0 && y != trunc(y)) return ref_rv_exact(HCQ_F32, NAN);
    if (a.e > 0 || b.e > 0) {
        if (x - a.e <= 0 && x + a.e >= 0) return ref_rv_dc();
        if (x < 0 && (b.e > 0 || y != trunc(y))) return ref_rv_dc();
    }
    double lx = log2(fabs(x)), t = fabs(y * lx);
    double rel = y == trunc(y) && fabs(y) < 32 ? 12 * EPS32 : (t + 4) * 2 * EPS32 * M_LN2 + 4 * EPS32;
    double e = fabs(r) * rel;
    if (a.e > 0) e += fabs(r) * fabs(y) * a.e / (fabs(x) - a.e) * 1.01;
    if (b.e > 0) e += fabs(r) * (exp2(b.e * fabs(lx)) - 1) * 1.01;
    if (fabs(r) < 0x1p-126) e += 0x1p-149 * 64; /* denormal results: absolute */
    return ref_rv_approx(HCQ_F32, r, e);
}

/* tolerances of the float functions the header defines by formula */

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

tf_rv ref_func_el(int fn, tf_rv a)
{
    if (dc(a)) return a;
    double x = a.v, r, e;
    switch (fn) {
    case U_EXP: /* exp2(x log2 e): the product's rounding scales with x */
        r = exp(x);
        e = fabs(r) * ((fabs(x) * 2 + 6) * EPS32 + (exp(a.e) - 1) * 1.01);
        break;
    case U_LOG:
        r = log(x);
        if (a.e > 0 && x - a.e <= 0) return ref_rv_dc();
        e = (fabs(r) + 1) * 6 * EPS32 + (a.e > 0 ? a.e / (x - a.e) : 0);
        if (x == 0 || x < 0 || isinf(x)) e = a.e > 0 ? INFINITY : 0;
        break;
    case U_COS: /* sin(x + pi/2): the sum rounds at x's scale */
        r = cos(x);
        e = a.e + (fabs(x) + 2) * 2 * EPS32 + 4 * EPS32;
        if (isinf(x)) e = 0;
        break;
    case U_SIGMOID:
        r = sigm(x);
        e = fabs(r) * (fabs(x) * 2 + 8) * EPS32 + 0.25 * a.e;
        if (isinf(x)) e = 0;
        break;
    case U_TANH: /* 2 sigmoid(2x) - 1: absolute error near 0 */
        r = tanh(x);
        e = 2 * (fabs(2 * x) * 2 + 8) * EPS32 * fabs(sigm(2 * x)) + 4 * EPS32 + a.e;
        if (isinf(x)) e = 0;
        break;
    case U_GELU: { /* 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))) */
        double in = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        double th = tanh(in);
        r = 0.5 * x * (1 + th);
        if (isinf(x) || isnan(x)) {
            e = 0;
            break;
        }
        double eth = 2 * (fabs(2 * in) * 2 + 8) * EPS32 + 8 * EPS32 + fabs(in) * 8 * EPS32;
        e = 0.5 * fabs(x) * eth + fabs(r) * 4 * EPS32 + a.e * 1.2;
        if (fabs(in) > 1e30) e = fabs(r) * 8 * EPS32 + a.e * 1.2; /* tanh is +-1: gelu is x or 0 */
        break;
    }
    case U_SILU: /* x sigmoid(x) */
        r = x * sigm(x);
        if (isinf(x) || isnan(x)) {
            r = x * (isnan(x) ? x : x > 0 ? 1.0 : 0.0); /* -inf * 0 is NaN, as the formula says */
            e = 0;
            break;
        }
        e = fabs(r) * (fabs(x) * 2 + 10) * EPS32 + a.e * 1.2;
        break;
    default: return ref_rv_dc();
    }
    if (isnan(r) && a.e == 0) return ref_rv_exact(HCQ_F32, r);
    if (e == 0) return ref_rv_exact(HCQ_F32, (float)r);
    e += (fabs(x) + 1) * 0x1p-146; /* an intermediate (exp2, a reciprocal) may be a denormal */
    if (fabs(r) < 0x1p-100) e += (fabs(x) + 1) * 0x1p-120; /* or 0: exp2 overflows where the result is tiny */
    return ref_rv_approx(HCQ_F32, r, e);
}

tf_rv ref_u_simple(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    hcq_dtype dt = a->dt;
    switch (op) {
    case TF_NEG: {
        if (!is_float(dt)) { /* bool in i32; integers wrap (-MIN is MIN, unsigned -x is 2^w - x) */
            if (dc(x)) return x;
            return ref_rv_exact(odt, ref_wrap(odt, -(int64_t)x.v));
        }
        return ref_fop(dt, F_NEG, x, x);
    }
    case TF_SQRT: return ref_fop(odt, F_SQRT, ref_cast_rv(dt, odt, x), x);
    case TF_RECIP: return ref_fop(odt, F_RECIP, ref_cast_rv(dt, odt, x), x);
    case TF_RSQRT: {
        tf_rv s = ref_fop(odt, F_SQRT, ref_cast_rv(dt, odt, x), x);
        return ref_fop(odt, F_RECIP, s, s);
    }
    case TF_EXP2:
    case TF_LOG2:
    case TF_SIN: {
        tf_rv y = ref_cast_rv(dt, HCQ_F32, x);
        tf_rv r = ref_fop(HCQ_F32, op == TF_EXP2 ? F_EXP2 : op == TF_LOG2 ? F_LOG2 : F_SIN, y, y);
        return ref_cast_rv(HCQ_F32, odt, r);
    }
    case TF_EXP:
    case TF_LOG:
    case TF_COS:
    case TF_SIGMOID:
    case TF_TANH:
    case TF_GELU:
    case TF_SILU: {
        static const int fn[] = {[TF_EXP] = U_EXP,         [TF_LOG] = U_LOG,   [TF_COS] = U_COS, [TF_SIGMOID] = U_SIGMOID,
                                 [TF_TANH] = U_TANH, [TF_GELU] = U_GELU, [TF_SILU] = U_SILU};
        return ref_cast_rv(HCQ_F32, odt, ref_func_el(fn[op], ref_cast_rv(dt, HCQ_F32, x)));
    }
    case TF_ABS:
        if (dt == HCQ_BOOL) return x;
        if (is_int(dt)) {
            if (dc(x)) return x;
            return x.v < 0 ? ref_rv_exact(dt, ref_wrap(dt, -(int64_t)x.v)) : x;
        }
        if (dc(x)) return x;
        if (isnan(x.v)) return ref_rv_exact(dt, NAN); /* max(x, -x) of NaNs: some NaN */
        return ref_fop(dt, F_MAX, x, ref_fop(dt, F_NEG, x, x));
    case TF_SIGN:
        if (dt == HCQ_BOOL || dc(x)) return x;
        if (isnan(x.v)) return x; /* the NaN itself, its bits */
        if (x.e > 0 && fabs(x.v) <= x.e) return ref_rv_dc();
        return ref_rv_exact(dt, x.v > 0 ? 1 : x.v < 0 ? -1 : 0);
    case TF_TRUNC:
        if (!is_float(dt)) return x;
        return ref_fop(dt, F_TRUNC, x, x);
    case TF_RELU: { /* where(x < 0, 0, x) */
        if (dc(x)) return x;
        if (x.e > 0 && fabs(x.v) <= x.e) return ref_rv_dc();
        if (x.v < 0) return ref_rv_exact(odt, 0);
        return odt == dt ? x : ref_rv_exact(odt, x.v);
    }
    case TF_BNOT: return ref_not_el(dt, x);
    case TF_NOT: {
        tf_rv b = ref_cast_rv(dt, HCQ_BOOL, x);
        return dc(b) ? b : ref_rv_exact(HCQ_BOOL, b.v == 0);
    }
    default: return ref_rv_dc();
    }
}

tf_rv ref_u_cast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    (void)op;
    tf_rv r = ref_cast_rv(a->dt, odt, x);
    if (a->dt == odt) return r;
    if (r.f & RV_MOVED) r.f &= (uint8_t)~RV_MOVED;
    return r;
}

tf_rv ref_u_bitcast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    (void)op;
    if (dc(x) || x.e > 0) return ref_rv_dc();
    if (is_float(a->dt) && isnan(x.v) && !(x.f & RV_MOVED)) return ref_rv_dc(); /* a computed NaN's payload is open */
    tf_rv r = {.v = tf_from_bits(odt, x.b), .e = 0, .b = x.b, .f = x.f & RV_MOVED};
    if (!(r.f & RV_MOVED) && is_float(odt) && isnan(r.v)) r.f |= RV_MOVED;
    return r;
}
