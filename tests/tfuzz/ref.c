/* The reference: every op of the fuzzer written in plain C from tensor.h's
 * definitions (dtype promotion, IEEE f32 arithmetic rounded to the dtype
 * after every op, maxNum, saturating casts, C-style integer division,
 * and the formulas the header gives for gelu, silu and friends), in
 * double precision over dense arrays. Nothing here looks at how the
 * tensor layer lowers an op.
 *
 * Each element carries an error bound (tf_rv.e): 0 where the result is
 * exactly determined (elementwise IEEE ops on exact inputs, movement,
 * selects, integer ops, max/min), else how far a correct device may land
 * from the double-precision value: transcendentals (HCQ_IR_TRANSCENDENTAL_
 * ULP ulp, plus what their argument's rounding does to them), sums and
 * products whose order the API leaves open, and everything computed from
 * such values. Where no bound holds (a sum that may overflow in some
 * order, a comparison of two values closer than their bounds, a cast of
 * a value near an integer boundary) the element is "don't care". */
#include "tfuzz.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define EPS32 0x1p-24 /* half an ulp of 1 in f32: the unit roundoff */
#define TRANS_ULP 2   /* HCQ_IR_TRANSCENDENTAL_ULP */

static bool is_float(hcq_dtype t) { return t == HCQ_F16 || t == HCQ_BF16 || t == HCQ_F32; }

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

static double max_finite(hcq_dtype dt)
{
    switch (dt) {
    case HCQ_F16: return 65504.0;
    case HCQ_BF16: return 0x1.fep127;
    case HCQ_F32: return FLT_MAX;
    case HCQ_I32: return 2147483647.0;
    default: return 1.0;
    }
}

static double sat_i32(double v)
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
    case HCQ_I32: return sat_i32(x);
    case HCQ_BOOL: return x != 0;
    default: return x;
    }
}

/* the result of an f32 computation stored in dt (halfs: computed in f32,
 * rounded to the half) */
static double op_round(hcq_dtype dt, double x) { return dt == HCQ_F32 ? (double)(float)x : tf_round(dt, (double)(float)x); }

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
    case HCQ_I32: return (uint32_t)(int32_t)x;
    case HCQ_BOOL: return x != 0;
    default: return 0;
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
    case HCQ_I32: return (double)(int32_t)b;
    case HCQ_BOOL: return (b & 0xff) != 0;
    default: return 0;
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
static tf_rv rv_dc(void) { return (tf_rv){.v = 0, .e = 0, .b = 0, .f = RV_DC}; }

static tf_rv rv_exact(hcq_dtype dt, double x)
{
    if (!is_float(dt)) x += 0.0; /* an integer has no -0 */
    return (tf_rv){.v = x, .e = 0, .b = tf_bits(dt, x), .f = 0};
}

/* x with error bound e before rounding to dt: the rounding adds up to an
 * ulp (the device rounds a value anywhere in the interval) */
static tf_rv rv_approx(hcq_dtype dt, double x, double e)
{
    if (e == 0) return rv_exact(dt, tf_round(dt, x));
    if (!is_float(dt)) return rv_dc();
    double r = tf_round(dt, x);
    e += tf_ulp(dt, fabs(x) + e);
    if (isnan(x) || !isfinite(e) || !isfinite(r) || fabs(x) + e > max_finite(dt)) return rv_dc();
    return (tf_rv){.v = r, .e = e, .b = tf_bits(dt, r), .f = 0};
}

static bool dc(tf_rv a) { return a.f & RV_DC; }

/* ** tensors */
static int64_t numel(const int64_t *s, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

static void unravel(int64_t i, const int64_t *s, int nd, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
}

static int64_t ravel(const int64_t *idx, const int64_t *s, int nd)
{
    int64_t i = 0;
    for (int d = 0; d < nd; d++) i = i * s[d] + idx[d];
    return i;
}

typedef struct ctx {
    tf_ref *r;
    const tf_prog *p;
    const tf_inst *in;
    int at; /* the value being computed */
    char *why;
    size_t whysz;
} ctx;

static bool fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->whysz, fmt, ap);
    va_end(ap);
    return false;
}

#define TF_MAX_NUMEL (1 << 20)

static tf_tensor *out_tensor(ctx *c, hcq_dtype dt, const int64_t *shape, int nd)
{
    tf_tensor *t = &c->r->t[c->at];
    free(t->x);
    memset(t, 0, sizeof *t);
    t->dt = dt;
    t->ndim = nd;
    for (int d = 0; d < nd; d++) t->shape[d] = shape[d];
    t->n = numel(shape, nd);
    t->x = calloc((size_t)(t->n ? t->n : 1), sizeof *t->x);
    return t;
}

static const tf_tensor *arg(ctx *c, int j) { return &c->r->t[c->in->src[j]]; }

static bool shape_ok(ctx *c, const int64_t *s, int nd)
{
    if (nd < 0 || nd > TF_MAX_DIMS) return fail(c, "%d dims", nd);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        if (s[d] < 0) return fail(c, "negative dim");
        n *= s[d];
        if (n > TF_MAX_NUMEL) return fail(c, "too many elements");
    }
    return true;
}

static int axis_of(int axis, int nd) { return axis < 0 ? axis + nd : axis; }

/* ** promotion (tensor.h) */
static int kind(hcq_dtype t) { return t == HCQ_BOOL ? 0 : is_float(t) ? 2 : 1; }

static hcq_dtype join(hcq_dtype x, hcq_dtype y)
{
    if (x == y) return x;
    if (x == HCQ_F32 || y == HCQ_F32) return HCQ_F32;
    if (kind(x) == 2 && kind(y) == 2) return HCQ_F32;
    if (kind(x) == 2) return x;
    if (kind(y) == 2) return y;
    return HCQ_I32;
}

static hcq_dtype promote(const tf_tensor *a, const tf_tensor *b)
{
    if (a->weak != b->weak) {
        const tf_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
        if (kind(s->dt) == 2) return s->dt;
        return kind(w->dt) == 2 ? HCQ_F32 : HCQ_I32;
    }
    return join(a->dt, b->dt);
}

/* An element converted to dt, as a cast does: rounds once; a weak
 * scalar's value is its unrounded double, so it too rounds once. */
static tf_rv cast_rv(hcq_dtype from, hcq_dtype to, tf_rv a)
{
    if (dc(a)) return a;
    if (from == to) return a;
    if (to == HCQ_BOOL) {
        if (a.e > 0 && fabs(a.v) <= a.e) return rv_dc();
        return rv_exact(to, a.v != 0);
    }
    if (!is_float(to)) { /* to i32 */
        if (a.e > 0) {
            double lo = sat_i32(a.v - a.e), hi = sat_i32(a.v + a.e);
            if (lo != hi) return rv_dc();
        }
        return rv_exact(to, sat_i32(a.v));
    }
    if (a.e > 0) return rv_approx(to, a.v, a.e);
    return rv_exact(to, tf_round(to, a.v));
}

/* Element i of t in dtype dt: a weak scalar keeps its unrounded double
 * and rounds once, to whatever dtype it meets (tensor.h's weak scalars);
 * anything else is cast from its own dtype. */
static tf_rv elem(const tf_tensor *t, int64_t i, hcq_dtype dt)
{
    if (t->weak && !dc(t->x[i])) return rv_exact(dt, tf_round(dt, t->x[i].v));
    return cast_rv(t->dt, dt, t->x[i]);
}

/* ** broadcasting elementwise ops */
static bool bshape(ctx *c, const tf_tensor *const *in, int n, int64_t *out, int *nd)
{
    int m = 0;
    for (int i = 0; i < n; i++) m = in[i]->ndim > m ? in[i]->ndim : m;
    for (int d = 0; d < m; d++) {
        int64_t s = 1;
        for (int i = 0; i < n; i++) {
            int k = in[i]->ndim - m + d;
            int64_t si = k >= 0 ? in[i]->shape[k] : 1;
            if (si != 1) {
                if (s != 1 && s != si) return fail(c, "shapes do not broadcast");
                s = si;
            }
        }
        out[d] = s;
    }
    *nd = m;
    return true;
}

static int64_t bidx(const tf_tensor *t, const int64_t *idx, int nd)
{
    int64_t i = 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t k = idx[nd - t->ndim + d];
        i = i * t->shape[d] + (t->shape[d] == 1 ? 0 : k);
    }
    return i;
}

/* float ops on two elements of dt (already converted) */
enum { F_ADD, F_SUB, F_MUL, F_DIV, F_MAX, F_LT, F_NE, F_NEG, F_SQRT, F_RECIP, F_TRUNC, F_EXP2, F_LOG2, F_SIN };

static double maxnum(double x, double y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return signbit(x) ? y : x;
    return x > y ? x : y;
}

static tf_rv fop(hcq_dtype dt, int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return rv_dc();
    double x = a.v, y = b.v, r;
    bool exact = a.e == 0 && b.e == 0;
    switch (op) {
    case F_ADD: r = x + y; break;
    case F_SUB: r = x - y; break;
    case F_MUL: r = x * y; break;
    case F_DIV: r = x / y; break;
    case F_MAX: r = maxnum(x, y); break;
    case F_NEG: r = -x; break;
    case F_SQRT: r = sqrt(x); break;
    case F_RECIP: r = 1.0 / x; break;
    case F_TRUNC: r = trunc(x); break;
    case F_EXP2: r = exp2(x); break;
    case F_LOG2: r = log2(x); break;
    case F_SIN: r = sin(x); break;
    case F_LT:
    case F_NE: {
        if (!exact && !isnan(x) && !isnan(y) && fabs(x - y) <= a.e + b.e) return rv_dc();
        bool t = op == F_LT ? x < y : x != y;
        return rv_exact(HCQ_BOOL, t);
    }
    default: return rv_dc();
    }
    bool trans = op == F_EXP2 || op == F_LOG2 || op == F_SIN;
    if (exact && !trans) {
        if (op == F_NEG || op == F_MAX) { /* exact without rounding: keeps the bits (NaN payloads too) */
            tf_rv o = rv_exact(dt, r);
            if (op == F_MAX && !isnan(r)) o = (r == x && (signbit(r) == signbit(x))) ? a : b;
            return o;
        }
        return rv_exact(dt, op_round(dt, r));
    }
    if (isnan(r) && exact) return rv_exact(dt, r);
    double e = 0;
    switch (op) {
    case F_ADD:
    case F_SUB: e = a.e + b.e; break;
    case F_MUL:
        if ((isinf(x) && fabs(y) <= b.e) || (isinf(y) && fabs(x) <= a.e)) return rv_dc();
        e = fabs(x) * b.e + fabs(y) * a.e + a.e * b.e;
        break;
    case F_DIV:
        if (fabs(y) <= b.e) return rv_dc();
        e = (a.e + fabs(r) * b.e) / (fabs(y) - b.e);
        break;
    case F_RECIP:
        if (fabs(x) <= a.e) return rv_dc();
        e = fabs(r) * a.e / (fabs(x) - a.e);
        break;
    case F_MAX:
    case F_NEG: e = a.e > b.e ? a.e : b.e; break;
    case F_SQRT:
        if (x - a.e < 0) return a.e > 0 && x + a.e >= 0 ? rv_dc() : rv_approx(dt, r, 0);
        e = a.e / (sqrt(x - a.e) + sqrt(x) + 1e-300);
        break;
    case F_TRUNC:
        if (trunc(x - a.e) != trunc(x + a.e)) return rv_dc();
        if (r == 0) return (tf_rv){.v = 0, .e = 0x1p-149, .b = 0, .f = 0}; /* a zero of either sign */
        return rv_exact(dt, op_round(dt, r));
    case F_EXP2:
        e = fabs(r) * (exp2(a.e) - 1) * 1.01 + TRANS_ULP * tf_ulp(HCQ_F32, r);
        break;
    case F_LOG2:
        if (x - a.e <= 0 && a.e > 0) return rv_dc();
        e = a.e / ((x - a.e) * M_LN2) + TRANS_ULP * tf_ulp(HCQ_F32, r);
        break;
    case F_SIN: e = a.e + TRANS_ULP * tf_ulp(HCQ_F32, r); break;
    }
    if (isinf(r) && e == 0) return rv_exact(dt, r);
    if (e == 0) e = 0x1p-149; /* from inexact inputs: not even a zero's sign is certain */
    return rv_approx(dt, r, e);
}

/* integer ops (i32 wraps; C division with x/0 = 0) */
static tf_rv iop(int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return rv_dc();
    int32_t x = (int32_t)a.v, y = (int32_t)b.v, r;
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    switch (op) {
    case TF_ADD: r = (int32_t)(ux + uy); break;
    case TF_SUB: r = (int32_t)(ux - uy); break;
    case TF_MUL: r = (int32_t)(ux * uy); break;
    case TF_IDIV: r = y == 0 ? 0 : y == -1 ? (int32_t)(0u - ux) : x / y; break;
    case TF_MOD: r = y == 0 || y == -1 ? 0 : x % y; break;
    case TF_MAXIMUM: r = x > y ? x : y; break;
    case TF_AND: r = x & y; break;
    case TF_OR: r = x | y; break;
    case TF_XOR: r = x ^ y; break;
    case TF_LT: return rv_exact(HCQ_BOOL, x < y);
    case TF_NE: return rv_exact(HCQ_BOOL, x != y);
    default: return rv_dc();
    }
    return rv_exact(HCQ_I32, r);
}

static tf_rv bop(int op, tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return rv_dc();
    bool x = a.v != 0, y = b.v != 0;
    switch (op) {
    case TF_MAXIMUM:
    case TF_OR: return rv_exact(HCQ_BOOL, x || y);
    case TF_AND: return rv_exact(HCQ_BOOL, x && y);
    case TF_XOR: return rv_exact(HCQ_BOOL, x != y);
    case TF_NE: return rv_exact(HCQ_BOOL, x != y);
    case TF_LT: return rv_exact(HCQ_BOOL, x < y);
    default: return rv_dc();
    }
}

/* One binary op on elements of the op dtype dt. */
static tf_rv bin_el(hcq_dtype dt, int op, tf_rv a, tf_rv b)
{
    if (is_float(dt)) {
        switch (op) {
        case TF_ADD: return fop(dt, F_ADD, a, b);
        case TF_SUB: return fop(dt, F_SUB, a, b);
        case TF_MUL: return fop(dt, F_MUL, a, b);
        case TF_DIV: return fop(dt, F_DIV, a, b);
        case TF_MAXIMUM: return fop(dt, F_MAX, a, b);
        case TF_LT: return fop(dt, F_LT, a, b);
        case TF_NE: return fop(dt, F_NE, a, b);
        default: return rv_dc();
        }
    }
    return dt == HCQ_BOOL ? bop(op, a, b) : iop(op, a, b);
}

static tf_rv not_el(hcq_dtype dt, tf_rv a)
{
    if (dc(a)) return a;
    if (dt == HCQ_BOOL) return rv_exact(HCQ_BOOL, a.v == 0);
    return rv_exact(HCQ_I32, ~(int32_t)a.v);
}

/* min(a, b) = -max(-a, -b) for floats (exact, keeps maxNum's rules),
 * and bitwise for ints and bools, as the header's "order flip" */
static tf_rv min_el(hcq_dtype dt, tf_rv a, tf_rv b)
{
    if (is_float(dt)) return fop(dt, F_NEG, fop(dt, F_MAX, fop(dt, F_NEG, a, a), fop(dt, F_NEG, b, b)), a);
    if (dc(a) || dc(b)) return rv_dc();
    if (dt == HCQ_BOOL) return rv_exact(dt, a.v != 0 && b.v != 0);
    return rv_exact(dt, a.v < b.v ? a.v : b.v);
}

/* ** the ops */
typedef tf_rv (*el2_fn)(hcq_dtype dt, int op, tf_rv a, tf_rv b);

/* a binary op: operands promoted to `dt`, broadcast; result in `rdt` */
static bool ew2(ctx *c, const tf_tensor *a, const tf_tensor *b, hcq_dtype dt, hcq_dtype rdt, int op)
{
    const tf_tensor *in[2] = {a, b};
    int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
    int nd;
    if (!bshape(c, in, 2, s, &nd) || !shape_ok(c, s, nd)) return false;
    tf_tensor *o = out_tensor(c, rdt, s, nd);
    for (int64_t i = 0; i < o->n; i++) {
        unravel(i, s, nd, idx);
        tf_rv x = elem(a, bidx(a, idx, nd), dt), y = elem(b, bidx(b, idx, nd), dt);
        tf_rv r;
        switch (op) {
        case TF_MINIMUM: r = min_el(dt, x, y); break;
        case TF_POW: r = rv_dc(); break; /* below */
        default: r = bin_el(dt, op, x, y); break;
        }
        o->x[i] = r;
    }
    return true;
}

static double pow_ieee(double x, double y) { return pow(x, y); /* C's pow follows Annex F */ }

/* pow: C's pow in double, rounded to f32; an integral |y| < 32 is computed
 * by repeated squaring (a few roundings), others through exp2/log2 in f32,
 * whose error grows with |y log2 x| */
static tf_rv pow_el(tf_rv a, tf_rv b)
{
    if (dc(a) || dc(b)) return rv_dc();
    double x = a.v, y = b.v, r = pow_ieee(x, y);
    bool special = y == 0 || x == 1 || isnan(x) || isnan(y) || isinf(x) || isinf(y) || x == 0 || (x == -1 && isinf(y));
    if (a.e == 0 && b.e == 0 && special) return rv_exact(HCQ_F32, (float)r);
    if (a.e == 0 && b.e == 0 && x < 0 && y != trunc(y)) return rv_exact(HCQ_F32, NAN);
    if (a.e > 0 || b.e > 0) {
        if (x - a.e <= 0 && x + a.e >= 0) return rv_dc();
        if (x < 0 && (b.e > 0 || y != trunc(y))) return rv_dc();
    }
    double lx = log2(fabs(x)), t = fabs(y * lx);
    double rel = y == trunc(y) && fabs(y) < 32 ? 12 * EPS32 : (t + 4) * 2 * EPS32 * M_LN2 + 4 * EPS32;
    double e = fabs(r) * rel;
    if (a.e > 0) e += fabs(r) * fabs(y) * a.e / (fabs(x) - a.e) * 1.01;
    if (b.e > 0) e += fabs(r) * (exp2(b.e * fabs(lx)) - 1) * 1.01;
    if (fabs(r) < 0x1p-126) e += 0x1p-149 * 64; /* denormal results: absolute */
    return rv_approx(HCQ_F32, r, e);
}

/* tolerances of the float functions the header defines by formula */
enum { U_EXP, U_LOG, U_COS, U_SIGMOID, U_TANH, U_GELU, U_SILU };

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

static tf_rv func_el(int fn, tf_rv a)
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
        if (a.e > 0 && x - a.e <= 0) return rv_dc();
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
    default: return rv_dc();
    }
    if (isnan(r) && a.e == 0) return rv_exact(HCQ_F32, r);
    if (e == 0) return rv_exact(HCQ_F32, (float)r);
    e += (fabs(x) + 1) * 0x1p-146; /* an intermediate (exp2, a reciprocal) may be a denormal */
    if (fabs(r) < 0x1p-100) e += (fabs(x) + 1) * 0x1p-120; /* or 0: exp2 overflows where the result is tiny */
    return rv_approx(HCQ_F32, r, e);
}

static hcq_dtype float_dt(hcq_dtype t) { return is_float(t) ? t : HCQ_F32; }

/* a unary elementwise op; out dtype odt; each element through f */
static bool unary(ctx *c, const tf_tensor *a, hcq_dtype odt, tf_rv (*f)(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op), int op)
{
    tf_tensor *o = out_tensor(c, odt, a->shape, a->ndim);
    for (int64_t i = 0; i < o->n; i++) o->x[i] = f(a, odt, a->x[i], op);
    return true;
}

static tf_rv u_simple(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    hcq_dtype dt = a->dt;
    switch (op) {
    case TF_NEG: {
        if (dt == HCQ_BOOL || dt == HCQ_I32) {
            if (dc(x)) return x;
            return rv_exact(HCQ_I32, (int32_t)(0u - (uint32_t)(int32_t)x.v));
        }
        return fop(dt, F_NEG, x, x);
    }
    case TF_SQRT: return fop(odt, F_SQRT, cast_rv(dt, odt, x), x);
    case TF_RECIP: return fop(odt, F_RECIP, cast_rv(dt, odt, x), x);
    case TF_RSQRT: {
        tf_rv s = fop(odt, F_SQRT, cast_rv(dt, odt, x), x);
        return fop(odt, F_RECIP, s, s);
    }
    case TF_EXP2:
    case TF_LOG2:
    case TF_SIN: {
        tf_rv y = cast_rv(dt, HCQ_F32, x);
        tf_rv r = fop(HCQ_F32, op == TF_EXP2 ? F_EXP2 : op == TF_LOG2 ? F_LOG2 : F_SIN, y, y);
        return cast_rv(HCQ_F32, odt, r);
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
        return cast_rv(HCQ_F32, odt, func_el(fn[op], cast_rv(dt, HCQ_F32, x)));
    }
    case TF_ABS:
        if (dt == HCQ_BOOL) return x;
        if (dt == HCQ_I32) {
            if (dc(x)) return x;
            int32_t v = (int32_t)x.v;
            return v < 0 ? rv_exact(dt, (int32_t)(0u - (uint32_t)v)) : x;
        }
        if (dc(x)) return x;
        if (isnan(x.v)) return rv_exact(dt, NAN); /* max(x, -x) of NaNs: some NaN */
        return fop(dt, F_MAX, x, fop(dt, F_NEG, x, x));
    case TF_SIGN:
        if (dt == HCQ_BOOL || dc(x)) return x;
        if (isnan(x.v)) return x; /* the NaN itself, its bits */
        if (x.e > 0 && fabs(x.v) <= x.e) return rv_dc();
        return rv_exact(dt, x.v > 0 ? 1 : x.v < 0 ? -1 : 0);
    case TF_TRUNC:
        if (!is_float(dt)) return x;
        return fop(dt, F_TRUNC, x, x);
    case TF_RELU: { /* where(x < 0, 0, x) */
        if (dc(x)) return x;
        if (x.e > 0 && fabs(x.v) <= x.e) return rv_dc();
        if (x.v < 0) return rv_exact(odt, 0);
        return odt == dt ? x : rv_exact(odt, x.v);
    }
    case TF_NOT: {
        tf_rv b = cast_rv(dt, HCQ_BOOL, x);
        return dc(b) ? b : rv_exact(HCQ_BOOL, b.v == 0);
    }
    default: return rv_dc();
    }
}

static tf_rv u_cast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    (void)op;
    tf_rv r = cast_rv(a->dt, odt, x);
    if (a->dt == odt) return r;
    if (r.f & RV_MOVED) r.f &= (uint8_t)~RV_MOVED;
    return r;
}

static tf_rv u_bitcast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op)
{
    (void)op;
    if (dc(x) || x.e > 0) return rv_dc();
    if (is_float(a->dt) && isnan(x.v) && !(x.f & RV_MOVED)) return rv_dc(); /* a computed NaN's payload is open */
    tf_rv r = {.v = tf_from_bits(odt, x.b), .e = 0, .b = x.b, .f = x.f & RV_MOVED};
    if (!(r.f & RV_MOVED) && is_float(odt) && isnan(r.v)) r.f |= RV_MOVED;
    return r;
}

/* ** reductions */
typedef struct red {
    int64_t n;
    double sum, abssum, sumsq;
    double maxabs;
    bool any_dc, any_nan, pinf, ninf, zero;
    double pbig, psmall; /* product of |x| >= 1, of |x| < 1 */
    double esum;         /* sum of the elements' error bounds */
} red;

/* the reduced positions of output element `o` */
static bool reduce_shape(ctx *c, const tf_tensor *a, const int64_t *axes, int naxes, uint32_t *mask)
{
    uint32_t m = 0;
    if (!naxes) m = a->ndim ? (1u << a->ndim) - 1 : 0;
    for (int i = 0; i < naxes; i++) {
        int ax = axis_of((int)axes[i], a->ndim);
        if (ax < 0 || ax >= a->ndim) return fail(c, "axis out of range");
        if (m & (1u << ax)) return fail(c, "axis twice");
        m |= 1u << ax;
    }
    *mask = m;
    return true;
}

static void red_out_shape(const tf_tensor *a, uint32_t mask, bool keep, int64_t *s, int *nd, int64_t *ks)
{
    int k = 0;
    for (int d = 0; d < a->ndim; d++) {
        ks[d] = mask & (1u << d) ? 1 : a->shape[d];
        if (!(mask & (1u << d)) || keep) s[k++] = ks[d];
    }
    *nd = k;
}

/* for each output (in the keepdim shape ks), the inputs it reduces */
typedef void (*red_visit)(void *u, int64_t o, const tf_rv *x, const int64_t *pos, int64_t cnt);

static void for_each_group(const tf_tensor *a, hcq_dtype dt, uint32_t mask, const int64_t *ks, void *u, red_visit f)
{
    int64_t no = numel(ks, a->ndim), cnt = no ? a->n / no : 0;
    if (!no) return;
    tf_rv *buf = calloc((size_t)(cnt ? cnt : 1), sizeof *buf);
    int64_t *pos = calloc((size_t)(cnt ? cnt : 1), sizeof *pos);
    int64_t rs[TF_MAX_DIMS], idx[TF_MAX_DIMS], ridx[TF_MAX_DIMS];
    int nr = 0;
    for (int d = 0; d < a->ndim; d++)
        if (mask & (1u << d)) rs[nr++] = a->shape[d];
    for (int64_t o = 0; o < no; o++) {
        unravel(o, ks, a->ndim, idx);
        for (int64_t j = 0; j < cnt; j++) {
            unravel(j, rs, nr, ridx);
            for (int d = 0, k = 0; d < a->ndim; d++)
                if (mask & (1u << d)) idx[d] = ridx[k++];
            int64_t at = ravel(idx, a->shape, a->ndim);
            buf[j] = cast_rv(a->dt, dt, a->x[at]);
            pos[j] = j;
        }
        f(u, o, buf, pos, cnt);
    }
    free(buf);
    free(pos);
}

typedef struct red_u {
    tf_tensor *o;
    int op;
    hcq_dtype acc, odt;
    int corr;
} red_u;

/* a float sum in any order: NaN if any NaN or both infinities, the
 * infinity if one, else the double sum with (n + 2) roundings of the
 * running sum; don't care where some order may overflow */
static tf_rv fsum(const tf_rv *x, int64_t n, hcq_dtype acc, hcq_dtype odt)
{
    double s = 0, abs = 0, e = 0;
    bool nan = false, pinf = false, ninf = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return rv_dc();
        double v = x[i].v;
        if (isnan(v)) nan = true;
        else if (isinf(v)) {
            if (x[i].e > 0) return rv_dc();
            if (v > 0) pinf = true;
            else ninf = true;
        } else {
            s += v;
            abs += fabs(v);
            e += x[i].e;
        }
    }
    if (n == 1) /* one element: no accumulation at all (tensor.h: a cast) */
        return x[0].e > 0 ? rv_approx(odt, x[0].v, x[0].e) : rv_exact(odt, op_round(odt, x[0].v));
    if (abs * (1 + 4 * n * EPS32) + e >= max_finite(acc)) return rv_dc();
    if (nan || (pinf && ninf)) return rv_exact(odt, NAN);
    if (pinf || ninf) return rv_exact(odt, pinf ? INFINITY : -INFINITY);
    /* n + 2 roundings of the running sum; each summand may have been a
     * product fused into the sum (sum(a * b) accumulates with a fused
     * multiply-add), so off by its own rounding or underflow, and a zero
     * may come out with either sign */
    double ulps = 0;
    for (int64_t i = 0; i < n; i++) ulps += tf_ulp(HCQ_F32, x[i].v);
    e += (double)(n + 2) * EPS32 * abs + ulps + (double)n * 0x1p-149;
    return rv_approx(odt, s, e);
}

static tf_rv fprod(const tf_rv *x, int64_t n, hcq_dtype odt)
{
    double p = 1, big = 1, small = 1, e = 0;
    bool nan = false, inf = false, zero = false, neg = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return rv_dc();
        double v = x[i].v, a = fabs(v);
        if (isnan(v)) nan = true;
        if (isinf(v)) inf = true;
        if (v == 0) zero = true;
        if (signbit(v)) neg = !neg;
        if (x[i].e > 0) {
            if (a <= x[i].e) return rv_dc();
            e += x[i].e / a;
        }
        if (a >= 1) big *= a;
        else small *= a;
        p *= v;
    }
    if (nan) return rv_exact(odt, NAN);
    if (big > 0x1p126 || (small < 0x1p-125 && !zero)) return rv_dc();
    if (inf && zero) return rv_exact(odt, NAN);
    if (zero || inf) return rv_exact(odt, neg ? -(zero ? 0.0 : INFINITY) : (zero ? 0.0 : INFINITY));
    double rel = (double)(n + 2) * EPS32 + e * 1.01;
    if (n <= 1 && e == 0) return rv_exact(odt, op_round(odt, p));
    return rv_approx(odt, p, fabs(p) * rel);
}

static tf_rv fmaxr(const tf_rv *x, int64_t n, hcq_dtype odt, bool is_min)
{
    tf_rv best = {0};
    bool have = false;
    double e = 0;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return rv_dc();
        if (x[i].e > e) e = x[i].e;
        if (isnan(x[i].v)) continue;
        if (!have) {
            best = x[i], have = true;
            continue;
        }
        double a = x[i].v, b = best.v;
        bool better = is_min ? (a < b || (a == b && signbit(a) && !signbit(b))) : (a > b || (a == b && !signbit(a) && signbit(b)));
        if (better) best = x[i];
    }
    if (!have) return rv_exact(odt, NAN); /* every element NaN */
    if (e > 0) {
        best.e = e;
        best.f &= (uint8_t)~RV_MOVED;
        if (!is_float(odt)) return rv_dc();
    }
    return best;
}

static void red_visit_fn(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    (void)pos;
    red_u *u = uu;
    tf_rv r;
    switch (u->op) {
    case TF_SUM:
        if (is_float(u->acc)) r = fsum(x, n, u->acc, u->odt);
        else {
            uint32_t s = 0;
            r = rv_exact(HCQ_I32, 0);
            for (int64_t i = 0; i < n; i++) {
                if (dc(x[i])) {
                    r = rv_dc();
                    break;
                }
                s += (uint32_t)(int32_t)x[i].v;
            }
            if (!dc(r)) r = rv_exact(HCQ_I32, (int32_t)s);
        }
        break;
    case TF_PROD:
        if (is_float(u->acc)) r = fprod(x, n, u->odt);
        else {
            uint32_t s = 1;
            r = rv_exact(HCQ_I32, 1);
            for (int64_t i = 0; i < n; i++) {
                if (dc(x[i])) {
                    r = rv_dc();
                    break;
                }
                s *= (uint32_t)(int32_t)x[i].v;
            }
            if (!dc(r)) r = rv_exact(HCQ_I32, (int32_t)s);
        }
        break;
    case TF_MAX:
    case TF_MIN:
        if (!n) {
            if (is_float(u->odt)) r = rv_exact(u->odt, u->op == TF_MAX ? -INFINITY : INFINITY);
            else if (u->odt == HCQ_BOOL) r = rv_exact(u->odt, u->op == TF_MAX ? 0 : 1);
            else r = rv_exact(u->odt, u->op == TF_MAX ? -2147483648.0 : 2147483647.0);
        } else if (is_float(u->odt)) {
            r = fmaxr(x, n, u->odt, u->op == TF_MIN);
        } else {
            r = x[0];
            for (int64_t i = 1; i < n && !dc(r); i++) {
                if (dc(x[i])) r = rv_dc();
                else if (u->op == TF_MAX ? x[i].v > r.v : x[i].v < r.v) r = x[i];
            }
            r.f &= (uint8_t)~RV_MOVED;
            if (!dc(r)) r = rv_exact(u->odt, r.v);
        }
        break;
    default: r = rv_dc();
    }
    u->o->x[o] = r;
}

static bool reduce_op(ctx *c, const tf_tensor *a, int op)
{
    const tf_inst *in = c->in;
    uint32_t mask;
    if (!reduce_shape(c, a, in->iv, in->niv, &mask)) return false;
    hcq_dtype dt = a->dt;
    if (op != TF_MAX && op != TF_MIN && dt == HCQ_BOOL) dt = HCQ_I32;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ia != 0, s, &nd, ks);
    tf_tensor *o = out_tensor(c, dt, s, nd);
    int64_t cnt = 1;
    for (int d = 0; d < a->ndim; d++)
        if (mask & (1u << d)) cnt *= a->shape[d];
    if (cnt == 1) { /* every reduced dim has size 1: nothing to combine, a cast */
        for (int64_t i = 0; i < o->n; i++) {
            o->x[i] = u_cast(a, dt, a->x[i], 0);
            if (op == TF_MIN) o->x[i].f &= (uint8_t)~RV_MOVED; /* min is -max(-x): a NaN's bits are open */
        }
        return true;
    }
    hcq_dtype acc = is_float(dt) && op != TF_MAX && op != TF_MIN ? HCQ_F32 : dt;
    red_u u = {.o = o, .op = op, .acc = acc, .odt = dt};
    for_each_group(a, acc, mask, ks, &u, red_visit_fn);
    return true;
}

/* mean/var/std: f32 (halfs stay halfs, rounded once at the end) */
typedef struct mv_u {
    tf_tensor *o;
    int op, corr;
    hcq_dtype odt;
} mv_u;

static void mv_visit(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    (void)pos;
    mv_u *u = uu;
    double s = 0, abs = 0, e = 0, sq = 0;
    bool nan = false, inf = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) {
            u->o->x[o] = rv_dc();
            return;
        }
        double v = x[i].v;
        if (isnan(v)) nan = true;
        else if (isinf(v)) inf = true;
        s += v;
        abs += fabs(v);
        e += x[i].e;
        sq += v * v;
    }
    double mean = s / (double)n;
    tf_rv r;
    if (u->op == TF_MEAN) { /* sum in f32, divided by the count in f32, rounded to the dtype */
        tf_rv sm = fsum(x, n, HCQ_F32, HCQ_F32);
        r = cast_rv(HCQ_F32, u->odt, fop(HCQ_F32, F_DIV, sm, rv_exact(HCQ_F32, (double)(float)n)));
    } else {
        double den = (double)n - u->corr;
        if (den <= 0) den = 0;
        double dev = 0, maxdev = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = x[i].v - mean;
            dev += d * d;
            if (fabs(d) > maxdev) maxdev = fabs(d);
        }
        double var = dev / den;
        if (nan || inf || !n) {
            r = rv_exact(u->odt, NAN); /* inf - inf, NaN, or 0/0 */
            if (!nan && !inf && !n) r = rv_exact(u->odt, NAN);
        } else if (sq >= FLT_MAX / 4 || abs * (1 + 4 * n * EPS32) >= FLT_MAX) {
            r = rv_dc();
        } else if (den == 0) {
            r = dev == 0 && e == 0 ? rv_exact(u->odt, NAN) : rv_dc(); /* x/0: NaN for 0, inf else */
            if (dev != 0 && e == 0) r = rv_dc();
        } else {
            /* the mean's error moves every deviation; squares and sums round */
            double em = (e + (double)(n + 3) * EPS32 * abs) / (double)n;
            double ed = 2 * (maxdev + em) * (em + 2 * EPS32 * (maxdev + fabs(mean))) * (double)n;
            double err = (ed + (double)(n + 4) * 2 * EPS32 * dev + 2 * e * (maxdev + em) + (double)(n + 2) * 0x1p-149) / den;
            if (u->op == TF_VAR) r = err == 0 ? rv_exact(u->odt, op_round(u->odt, var)) : rv_approx(u->odt, var, err);
            else {
                double sd = sqrt(var);
                double es = var - err <= 0 ? sqrt(var + err) : err / (sqrt(var) + sqrt(var - err));
                r = es == 0 ? rv_exact(u->odt, op_round(u->odt, sd)) : rv_approx(u->odt, sd, es);
            }
        }
    }
    u->o->x[o] = r;
}

static bool mean_var(ctx *c, const tf_tensor *a, int op)
{
    const tf_inst *in = c->in;
    uint32_t mask;
    if (!reduce_shape(c, a, in->iv, in->niv, &mask)) return false;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ia != 0, s, &nd, ks);
    hcq_dtype odt = float_dt(a->dt);
    tf_tensor *o = out_tensor(c, odt, s, nd);
    mv_u u = {.o = o, .op = op, .corr = op == TF_MEAN ? 0 : in->ib, .odt = odt};
    int64_t no = numel(ks, a->ndim);
    if (no && a->n == 0) { /* empty slices */
        for (int64_t i = 0; i < o->n; i++) mv_visit(&u, i, NULL, NULL, 0);
        return true;
    }
    for_each_group(a, HCQ_F32, mask, ks, &u, mv_visit);
    return true;
}

typedef struct arg_u {
    tf_tensor *o;
    bool is_min;
} arg_u;

static void arg_visit(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    arg_u *u = uu;
    int64_t best = -1;
    bool allnan = true;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) {
            u->o->x[o] = rv_dc();
            return;
        }
        if (!isnan(x[i].v)) allnan = false;
    }
    if (allnan) {
        u->o->x[o] = rv_exact(HCQ_I32, 0);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i].v)) continue;
        if (best < 0 || (u->is_min ? x[i].v < x[best].v : x[i].v > x[best].v)) best = i;
    }
    for (int64_t i = 0; i < n; i++) /* a rival within the error bounds: the index is open */
        if (i != best && !isnan(x[i].v) && fabs(x[i].v - x[best].v) <= x[i].e + x[best].e && (x[i].e + x[best].e) > 0) {
            u->o->x[o] = rv_dc();
            return;
        }
    u->o->x[o] = rv_exact(HCQ_I32, (double)pos[best]);
}

static bool argext(ctx *c, const tf_tensor *a, bool is_min)
{
    const tf_inst *in = c->in;
    int ax = axis_of(in->ia, a->ndim);
    if (ax < 0 || ax >= a->ndim) return fail(c, "axis out of range");
    if (a->shape[ax] == 0) return fail(c, "empty axis");
    uint32_t mask = 1u << ax;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ib != 0, s, &nd, ks);
    tf_tensor *o = out_tensor(c, HCQ_I32, s, nd);
    arg_u u = {.o = o, .is_min = is_min};
    hcq_dtype dt = a->dt == HCQ_BOOL ? HCQ_I32 : a->dt;
    for_each_group(a, dt, mask, ks, &u, arg_visit);
    return true;
}

/* ** movement: every output element names its source element (or padding) */
static tf_rv const_rv(hcq_dtype dt, double v)
{
    tf_rv r = rv_exact(dt, tf_round(dt, v));
    r.f |= RV_MOVED; /* a constant's bits are exact */
    if (is_float(dt) && isnan(v)) r.f &= (uint8_t)~RV_MOVED;
    return r;
}

static bool mv_reshape(ctx *c, const tf_tensor *a, const int64_t *shape, int nd)
{
    int64_t s[TF_MAX_DIMS], known = 1;
    int infer = -1;
    if (nd < 0 || nd > TF_MAX_DIMS) return fail(c, "dims");
    for (int d = 0; d < nd; d++) {
        s[d] = shape[d];
        if (s[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (s[d] < 0) return fail(c, "negative dim");
        known *= s[d];
    }
    if (infer >= 0) {
        if (known == 0 || a->n % known) return fail(c, "cannot infer");
        s[infer] = a->n / known;
        known *= s[infer];
    }
    if (known != a->n) return fail(c, "numel differs");
    tf_tensor *o = out_tensor(c, a->dt, s, nd);
    for (int64_t i = 0; i < o->n; i++) o->x[i] = a->x[i];
    return true;
}

static bool mv_general(ctx *c, const tf_tensor *a, int op)
{
    const tf_inst *in = c->in;
    int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS], sidx[TF_MAX_DIMS];
    int nd = a->ndim;
    int perm[TF_MAX_DIMS];
    int64_t lo[TF_MAX_DIMS] = {0}, step[TF_MAX_DIMS];
    uint32_t flipm = 0;
    tf_rv pad = rv_dc();
    for (int d = 0; d < nd; d++) perm[d] = d, s[d] = a->shape[d], step[d] = 1;
    switch (op) {
    case TF_PERMUTE: {
        if (in->niv != nd) return fail(c, "perm size");
        uint32_t seen = 0;
        for (int d = 0; d < nd; d++) {
            int p = axis_of((int)in->iv[d], nd);
            if (p < 0 || p >= nd || (seen & (1u << p))) return fail(c, "bad perm");
            seen |= 1u << p;
            perm[d] = p;
            s[d] = a->shape[p];
        }
        break;
    }
    case TF_TRANSPOSE: {
        int x = axis_of(in->ia, nd), y = axis_of(in->ib, nd);
        if (x < 0 || x >= nd || y < 0 || y >= nd) return fail(c, "axis");
        perm[x] = y, perm[y] = x;
        s[x] = a->shape[y], s[y] = a->shape[x];
        break;
    }
    case TF_PAD: {
        if (in->niv % 2 || in->niv / 2 > nd) return fail(c, "pairs");
        for (int d = 0; d < in->niv / 2; d++) {
            if (in->iv[2 * d] < 0 || in->iv[2 * d + 1] < 0) return fail(c, "negative pad");
            lo[d] = -in->iv[2 * d];
            s[d] = a->shape[d] + in->iv[2 * d] + in->iv[2 * d + 1];
        }
        pad = const_rv(a->dt, in->fv);
        break;
    }
    case TF_SHRINK: {
        if (in->niv % 2 || in->niv / 2 > nd) return fail(c, "pairs");
        for (int d = 0; d < in->niv / 2; d++) {
            int64_t b = in->iv[2 * d], e = in->iv[2 * d + 1];
            if (b < 0 || b > e || e > a->shape[d]) return fail(c, "range");
            lo[d] = b;
            s[d] = e - b;
        }
        break;
    }
    case TF_FLIP: {
        uint32_t m = 0;
        if (!in->niv) m = nd ? (1u << nd) - 1 : 0;
        for (int i = 0; i < in->niv; i++) {
            int ax = axis_of((int)in->iv[i], nd);
            if (ax < 0 || ax >= nd || (m & (1u << ax))) return fail(c, "axes");
            m |= 1u << ax;
        }
        flipm = m;
        break;
    }
    case TF_SLICE: {
        int ax = axis_of(in->ia, nd);
        if (ax < 0 || ax >= nd) return fail(c, "axis");
        int64_t start = in->iv[0], stop = in->iv[1], st = in->iv[2], size = a->shape[ax];
        if (st == 0) return fail(c, "step 0");
        int64_t lo0 = st > 0 ? 0 : -1, hi0 = st > 0 ? size : size - 1;
        if (start < 0) start = start < -size ? lo0 : start + size;
        if (stop < 0) stop = stop < -size ? lo0 : stop + size;
        start = start < lo0 ? lo0 : start > hi0 ? hi0 : start;
        stop = stop < lo0 ? lo0 : stop > hi0 ? hi0 : stop;
        int64_t cnt = st > 0 ? (stop > start ? (stop - start + st - 1) / st : 0) : (start > stop ? (start - stop - st - 1) / (-st) : 0);
        s[ax] = cnt;
        lo[ax] = start;
        step[ax] = st;
        break;
    }
    case TF_EXPAND: {
        int pre = in->niv - nd;
        if (pre < 0 || in->niv > TF_MAX_DIMS) return fail(c, "dims");
        int64_t ns[TF_MAX_DIMS];
        for (int d = 0; d < in->niv; d++) {
            int64_t have = d < pre ? 1 : a->shape[d - pre];
            int64_t want = in->iv[d] == -1 && d >= pre ? have : in->iv[d];
            if (want < 0 || (have != 1 && want != have)) return fail(c, "cannot expand");
            ns[d] = want;
        }
        if (!shape_ok(c, ns, in->niv)) return false;
        tf_tensor *o = out_tensor(c, a->dt, ns, in->niv);
        for (int64_t i = 0; i < o->n; i++) {
            unravel(i, ns, in->niv, idx);
            o->x[i] = a->x[bidx(a, idx, in->niv)];
        }
        return true;
    }
    default: return fail(c, "movement op");
    }
    if (!shape_ok(c, s, nd)) return false;
    tf_tensor *o = out_tensor(c, a->dt, s, nd);
    for (int64_t i = 0; i < o->n; i++) {
        unravel(i, s, nd, idx);
        bool in_box = true;
        for (int d = 0; d < nd; d++) {
            int64_t k = idx[d];
            if (flipm & (1u << d)) k = s[d] - 1 - k;
            int64_t p = perm[d];
            int64_t v = lo[d] + k * step[d];
            if (op == TF_PERMUTE || op == TF_TRANSPOSE) v = k;
            if (v < 0 || v >= a->shape[p]) in_box = false;
            sidx[p] = v;
        }
        o->x[i] = in_box ? a->x[ravel(sidx, a->shape, nd)] : pad;
    }
    return true;
}

static bool cat_op(ctx *c, bool stack)
{
    const tf_inst *in = c->in;
    int n = in->nsrc;
    if (n < 1) return fail(c, "no parts");
    const tf_tensor *p0 = arg(c, 0);
    int nd = p0->ndim + (stack ? 1 : 0);
    int ax = axis_of(in->ia, nd);
    if (ax < 0 || ax >= nd) return fail(c, "axis");
    hcq_dtype dt = p0->dt;
    int64_t s[TF_MAX_DIMS], total = 0;
    for (int i = 0; i < n; i++) {
        const tf_tensor *t = arg(c, i);
        if (t->ndim != p0->ndim) return fail(c, "ranks differ");
        for (int d = 0; d < p0->ndim; d++) {
            int od = stack ? d : d;
            if (stack ? t->shape[d] != p0->shape[d] : (d != ax && t->shape[d] != p0->shape[d])) return fail(c, "sizes differ");
            (void)od;
        }
        total += stack ? 1 : t->shape[ax];
        if (i) dt = join(dt, t->dt);
    }
    for (int d = 0, k = 0; d < nd; d++) s[d] = stack ? (d == ax ? n : p0->shape[k++]) : p0->shape[d];
    if (!stack) s[ax] = total;
    if (!shape_ok(c, s, nd)) return false;
    tf_tensor *o = out_tensor(c, dt, s, nd);
    int64_t idx[TF_MAX_DIMS], sidx[TF_MAX_DIMS];
    for (int64_t i = 0; i < o->n; i++) {
        unravel(i, s, nd, idx);
        int part = 0;
        int64_t k = idx[ax];
        if (stack) part = (int)k;
        else
            while (k >= arg(c, part)->shape[ax]) k -= arg(c, part++)->shape[ax];
        const tf_tensor *t = arg(c, part);
        for (int d = 0, j = 0; d < nd; d++) {
            if (stack && d == ax) continue;
            sidx[j++] = (!stack && d == ax) ? k : idx[d];
        }
        tf_rv v = t->x[ravel(sidx, t->shape, t->ndim)];
        o->x[i] = t->dt == dt ? v : u_cast(t, dt, v, 0);
    }
    return true;
}

static bool repeat_op(ctx *c, const tf_tensor *a)
{
    const tf_inst *in = c->in;
    int nr = in->niv;
    if (nr < a->ndim || nr > TF_MAX_DIMS) return fail(c, "repeats");
    int64_t s[TF_MAX_DIMS], ins[TF_MAX_DIMS], idx[TF_MAX_DIMS];
    int pre = nr - a->ndim;
    for (int d = 0; d < nr; d++) {
        if (in->iv[d] < 0) return fail(c, "negative repeat");
        ins[d] = d < pre ? 1 : a->shape[d - pre];
        s[d] = ins[d] * in->iv[d];
    }
    if (!shape_ok(c, s, nr)) return false;
    tf_tensor *o = out_tensor(c, a->dt, s, nr);
    for (int64_t i = 0; i < o->n; i++) {
        unravel(i, s, nr, idx);
        for (int d = 0; d < nr; d++) idx[d] %= ins[d];
        o->x[i] = a->x[ravel(idx, ins, nr)];
    }
    return true;
}

/* ** composites */
/* out[m, n] = sum_k a[m, k] b[k, n], batch dims broadcast; in f32 (halfs)
 * or i32 (bools), rounded once to the promoted dtype */
static tf_rv dot(const tf_rv *x, const tf_rv *y, int64_t K, hcq_dtype cdt, hcq_dtype odt)
{
    if (!is_float(cdt)) {
        uint32_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            if (dc(x[k]) || dc(y[k])) return rv_dc();
            s += (uint32_t)(int32_t)x[k].v * (uint32_t)(int32_t)y[k].v;
        }
        return rv_exact(odt, tf_round(odt, (int32_t)s));
    }
    tf_rv *prods = calloc((size_t)(K ? K : 1), sizeof *prods);
    for (int64_t k = 0; k < K; k++) {
        tf_rv p = fop(HCQ_F32, F_MUL, x[k], y[k]);
        if (!dc(p) && !dc(x[k]) && !dc(y[k])) { /* the product is fused into the sum: exact in double */
            double v = x[k].v * y[k].v;
            p.v = v;
            p.e = fabs(x[k].v) * y[k].e + fabs(y[k].v) * x[k].e + x[k].e * y[k].e;
            if (isinf(v) && (x[k].e > 0 || y[k].e > 0)) p = rv_dc();
            if (!isinf(v) && !isnan(v) && fabs(v) >= FLT_MAX) p = rv_dc(); /* overflows in f32 in some order */
        }
        prods[k] = p;
    }
    tf_rv r = fsum(prods, K, HCQ_F32, HCQ_F32);
    free(prods);
    if (dc(r)) return r;
    return r.e > 0 ? rv_approx(odt, r.v, r.e) : rv_exact(odt, tf_round(odt, r.v));
}

static bool matmul_op(ctx *c, const tf_tensor *a, const tf_tensor *b, bool b_transposed, const tf_tensor *bias)
{
    if (!a->ndim || !b->ndim) return fail(c, "0-d operand");
    hcq_dtype dt = promote(a, b);
    if (dt == HCQ_BOOL) dt = HCQ_I32;
    hcq_dtype cdt = (dt == HCQ_F16 || dt == HCQ_BF16) ? HCQ_F32 : dt;
    /* a: [..., M, K] (1-d: [K]); b: [..., K, N] (1-d: [K]); linear: b is [N, K] */
    int64_t M = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, K = a->shape[a->ndim - 1];
    int64_t Kb, N;
    if (b_transposed) {
        if (b->ndim != 2) return fail(c, "linear w is not 2-d");
        Kb = b->shape[1], N = b->shape[0];
    } else {
        Kb = b->shape[b->ndim >= 2 ? b->ndim - 2 : 0];
        N = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
    }
    if (K != Kb) return fail(c, "inner dims differ");
    /* batch dims */
    int ab = a->ndim >= 2 ? a->ndim - 2 : 0, bb = b_transposed ? 0 : (b->ndim >= 2 ? b->ndim - 2 : 0);
    int nb = ab > bb ? ab : bb;
    int64_t bs[TF_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int ia = ab - nb + d, ib = bb - nb + d;
        int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) return fail(c, "batch dims do not broadcast");
        bs[d] = sa == 1 ? sb : sa;
    }
    int64_t s[TF_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < nb; d++) s[nd++] = bs[d];
    if (a->ndim >= 2) s[nd++] = M;
    if (b_transposed || b->ndim >= 2) s[nd++] = N;
    if (nd > TF_MAX_DIMS || !shape_ok(c, s, nd)) return fail(c, "shape");
    if (a->ndim + 1 > TF_MAX_DIMS || b->ndim + 1 > TF_MAX_DIMS || nb + 3 > TF_MAX_DIMS) return fail(c, "too many dims for the product");
    hcq_dtype odt = dt;
    /* linear adds the bias after the product, in the promoted dtype */
    tf_tensor *o = out_tensor(c, odt, s, nd);
    tf_rv *x = calloc((size_t)(K ? K : 1), sizeof *x), *y = calloc((size_t)(K ? K : 1), sizeof *y);
    int64_t nbatch = numel(bs, nb), bidx_[TF_MAX_DIMS];
    for (int64_t bt = 0; bt < nbatch; bt++) {
        unravel(bt, bs, nb, bidx_);
        int64_t aoff = 0, boff = 0;
        for (int d = 0; d < ab; d++) aoff = aoff * a->shape[d] + (a->shape[d] == 1 ? 0 : bidx_[nb - ab + d]);
        for (int d = 0; d < bb; d++) boff = boff * b->shape[d] + (b->shape[d] == 1 ? 0 : bidx_[nb - bb + d]);
        for (int64_t m = 0; m < M; m++)
            for (int64_t nn = 0; nn < N; nn++) {
                for (int64_t k = 0; k < K; k++) {
                    x[k] = cast_rv(a->dt, cdt, a->x[(aoff * M + m) * K + k]);
                    int64_t bi = b_transposed ? nn * K + k : (boff * K + k) * N + nn;
                    y[k] = cast_rv(b->dt, cdt, b->x[bi]);
                }
                o->x[(bt * M + m) * N + nn] = dot(x, y, K, cdt, odt);
            }
    }
    free(x);
    free(y);
    (void)bias;
    return true;
}

/* windows: [..., H, W] -> [..., OH, OW] over k x k windows of the padded input */
static int64_t out_size(int64_t s, int64_t k, int64_t st, int64_t pad, int64_t dil)
{
    int64_t ps = s + 2 * pad, span = dil * (k - 1) + 1;
    return ps >= span ? (ps - span) / st + 1 : 0;
}

static bool pool_op(ctx *c, const tf_tensor *a, bool is_max)
{
    const tf_inst *in = c->in;
    int64_t k[2] = {in->iv[0], in->iv[1]}, st[2], pad[2] = {in->iv[4], in->iv[5]};
    if (k[0] < 1 || k[1] < 1) return fail(c, "kernel");
    if (a->ndim < 2) return fail(c, "dims");
    if (a->ndim + 2 > TF_MAX_DIMS) return fail(c, "too many dims");
    for (int i = 0; i < 2; i++) {
        st[i] = in->iv[2 + i] ? in->iv[2 + i] : k[i];
        if (st[i] < 0 || pad[i] < 0) return fail(c, "negative");
    }
    int nd = a->ndim;
    int64_t H = a->shape[nd - 2], W = a->shape[nd - 1];
    int64_t OH = out_size(H, k[0], st[0], pad[0], 1), OW = out_size(W, k[1], st[1], pad[1], 1);
    int64_t s[TF_MAX_DIMS];
    for (int d = 0; d < nd - 2; d++) s[d] = a->shape[d];
    s[nd - 2] = OH, s[nd - 1] = OW;
    hcq_dtype dt = a->dt;
    hcq_dtype odt = is_max ? dt : float_dt(dt);
    hcq_dtype sdt = is_max ? dt : (dt == HCQ_F16 || dt == HCQ_BF16) ? HCQ_F32 : dt; /* avg sums in f32 (halfs) */
    if (!shape_ok(c, s, nd)) return false;
    tf_tensor *o = out_tensor(c, odt, s, nd);
    int64_t outer = numel(s, nd - 2), kk = k[0] * k[1];
    tf_rv *w = calloc((size_t)kk, sizeof *w);
    tf_rv padv = is_max ? (is_float(dt) ? rv_exact(dt, NAN) : dt == HCQ_BOOL ? rv_exact(dt, 0) : rv_exact(dt, -2147483648.0))
                        : rv_exact(sdt, 0);
    for (int64_t ob = 0; ob < outer; ob++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                for (int64_t i = 0; i < k[0]; i++)
                    for (int64_t j = 0; j < k[1]; j++) {
                        int64_t h = oh * st[0] + i - pad[0], x = ow * st[1] + j - pad[1];
                        bool inside = h >= 0 && h < H && x >= 0 && x < W;
                        w[i * k[1] + j] = inside ? cast_rv(dt, sdt, a->x[(ob * H + h) * W + x]) : padv;
                    }
                tf_rv r;
                if (is_max) {
                    red_u u = {.o = o, .op = TF_MAX, .acc = dt, .odt = dt};
                    red_visit_fn(&u, (ob * OH + oh) * OW + ow, w, NULL, kk);
                    continue;
                }
                if (sdt == HCQ_BOOL || sdt == HCQ_I32) { /* i32 sum, then f32 division */
                    uint32_t si = 0;
                    bool bad = false;
                    for (int64_t i = 0; i < kk; i++) {
                        if (dc(w[i])) bad = true;
                        si += (uint32_t)(int32_t)w[i].v;
                    }
                    r = bad ? rv_dc() : rv_exact(odt, op_round(HCQ_F32, (double)(float)(int32_t)si / (double)(float)kk));
                } else {
                    tf_rv sum = fsum(w, kk, HCQ_F32, HCQ_F32);
                    if (dc(sum)) r = sum;
                    else if (sum.e == 0) r = rv_exact(odt, op_round(odt, (double)(float)sum.v / (double)(float)kk));
                    else r = rv_approx(odt, sum.v / (double)kk, sum.e / (double)kk);
                }
                o->x[(ob * OH + oh) * OW + ow] = r;
            }
    free(w);
    return true;
}

static bool conv_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *bias)
{
    const tf_inst *in = c->in;
    int64_t st[2] = {in->iv[0] ? in->iv[0] : 1, in->iv[1] ? in->iv[1] : 1}, pad[2] = {in->iv[2], in->iv[3]};
    int64_t dil[2] = {in->iv[4] ? in->iv[4] : 1, in->iv[5] ? in->iv[5] : 1}, g = in->iv[6] ? in->iv[6] : 1;
    for (int i = 0; i < 2; i++)
        if (st[i] < 0 || dil[i] < 0 || pad[i] < 0) return fail(c, "negative");
    if (x->ndim != 4 || w->ndim != 4) return fail(c, "not 4-d");
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], O = w->shape[0];
    if (g < 1 || C % g || O % g || w->shape[1] != C / g) return fail(c, "groups");
    hcq_dtype dt = promote(x, w);
    if (bias) {
        if (bias->ndim != 1 || bias->shape[0] != O) return fail(c, "bias");
    }
    hcq_dtype cdt = dt == HCQ_F16 || dt == HCQ_BF16 ? HCQ_F32 : dt == HCQ_BOOL ? HCQ_I32 : dt;
    int64_t KH = w->shape[2], KW = w->shape[3];
    int64_t OH = out_size(H, KH, st[0], pad[0], dil[0]), OW = out_size(W, KW, st[1], pad[1], dil[1]);
    int64_t s[4] = {N, O, OH, OW};
    if (!shape_ok(c, s, 4)) return false;
    hcq_dtype odt = dt; /* the sum and the bias add in cdt, then one cast to dt */
    tf_tensor *o = out_tensor(c, odt, s, 4);
    int64_t Cg = C / g, Og = O / g, K = Cg * KH * KW;
    tf_rv *xa = calloc((size_t)(K + 1), sizeof *xa), *wa = calloc((size_t)(K + 1), sizeof *wa);
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t gi = oc / Og, k = 0;
                    for (int64_t ci = 0; ci < Cg; ci++)
                        for (int64_t i = 0; i < KH; i++)
                            for (int64_t j = 0; j < KW; j++, k++) {
                                int64_t h = oh * st[0] + i * dil[0] - pad[0], ww = ow * st[1] + j * dil[1] - pad[1];
                                bool inside = h >= 0 && h < H && ww >= 0 && ww < W;
                                int64_t cc = gi * Cg + ci;
                                xa[k] = inside ? cast_rv(x->dt, cdt, x->x[((n * C + cc) * H + h) * W + ww]) : rv_exact(cdt, 0);
                                wa[k] = cast_rv(w->dt, cdt, w->x[((oc * Cg + ci) * KH + i) * KW + j]);
                            }
                    tf_rv r = dot(xa, wa, K, cdt, cdt);
                    if (bias) r = bin_el(cdt, TF_ADD, r, cast_rv(bias->dt, cdt, bias->x[oc]));
                    o->x[((n * O + oc) * OH + oh) * OW + ow] = cast_rv(cdt, odt, r);
                }
    free(xa);
    free(wa);
    return true;
}

/* softmax/log_softmax along one axis, in f32: d = x - max(x) (maxNum),
 * e = exp(d), s = sum(e); e / s or d - log(s). A NaN anywhere in the row,
 * or an infinite maximum, makes some d NaN, so s and every output NaN. */
static bool softmax_op(ctx *c, const tf_tensor *a, int axis, bool lg)
{
    int ax = axis_of(axis, a->ndim);
    if (ax < 0 || ax >= a->ndim) return fail(c, "axis");
    hcq_dtype odt = float_dt(a->dt);
    tf_tensor *o = out_tensor(c, odt, a->shape, a->ndim);
    int64_t L = a->shape[ax], inner = 1, outer = 1;
    for (int d = ax + 1; d < a->ndim; d++) inner *= a->shape[d];
    for (int d = 0; d < ax; d++) outer *= a->shape[d];
    for (int64_t ob = 0; ob < outer; ob++)
        for (int64_t ib = 0; ib < inner; ib++) {
#define AT(l) ((ob * L + (l)) * inner + ib)
            double m = NAN, e = 0;
            bool anydc = false, nan = false;
            for (int64_t l = 0; l < L; l++) {
                tf_rv v = cast_rv(a->dt, HCQ_F32, a->x[AT(l)]);
                if (dc(v)) anydc = true;
                if (isnan(v.v)) nan = true;
                m = maxnum(m, v.v);
                if (v.e > e) e = v.e;
            }
            if (!anydc && (nan || isinf(m))) {
                for (int64_t l = 0; l < L; l++) o->x[AT(l)] = rv_exact(odt, NAN);
                continue;
            }
            double s = 0, D = 0;
            for (int64_t l = 0; l < L; l++) {
                double d = cast_rv(a->dt, HCQ_F32, a->x[AT(l)]).v - m;
                s += exp(d);
                if (fabs(d) > D) D = fabs(d);
            }
            /* each exp's relative error: its argument rounds at |d| (and
             * through exp2's scaling), the inputs move d by 2e */
            double te = (3 * D + 10) * EPS32 + (exp(2 * e) - 1) * 1.01;
            double se = te + ((double)L + 2) * EPS32;
            for (int64_t l = 0; l < L; l++) {
                if (anydc) {
                    o->x[AT(l)] = rv_dc();
                    continue;
                }
                double d = cast_rv(a->dt, HCQ_F32, a->x[AT(l)]).v - m;
                double r = lg ? d - log(s) : exp(d) / s;
                double err = lg ? (fabs(d) + 2 * e) * 2 * EPS32 + 2 * e + se * 1.01 + (fabs(d) + log(s)) * 2 * EPS32 + 4 * EPS32
                                : fabs(r) * (te + se + 2 * EPS32) * 1.01 + 0x1p-149 * 4;
                o->x[AT(l)] = rv_approx(odt, r, err);
            }
#undef AT
        }
    return true;
}

static bool layernorm_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *b)
{
    const tf_inst *in = c->in;
    int na = in->ia;
    if (na < 1 || na > x->ndim) return fail(c, "naxes");
    hcq_dtype odt = float_dt(x->dt);
    int64_t L = 1;
    for (int d = x->ndim - na; d < x->ndim; d++) L *= x->shape[d];
    int64_t outer = L ? x->n / L : 0;
    /* w and b broadcast against x's shape (numpy rules) */
    int64_t s[TF_MAX_DIMS];
    int nd;
    const tf_tensor *ins[3] = {x, w ? w : x, b ? b : x};
    if (!bshape(c, ins, 3, s, &nd)) return false;
    for (int d = 0; d < nd; d++)
        if (nd != x->ndim || s[d] != x->shape[d]) return fail(c, "w/b broadcast beyond x");
    hcq_dtype wdt = HCQ_F32;
    if (w) wdt = join(wdt, w->dt);
    if (b) wdt = join(wdt, b->dt);
    tf_tensor *o = out_tensor(c, odt, x->shape, x->ndim);
    int64_t idx[TF_MAX_DIMS];
    double eps = (double)(float)in->fv;
    for (int64_t r = 0; r < outer; r++) {
        double sum = 0, abs = 0, e = 0, mx = 0;
        bool anydc = false, special = false;
        for (int64_t l = 0; l < L; l++) {
            tf_rv v = cast_rv(x->dt, HCQ_F32, x->x[r * L + l]);
            if (dc(v)) anydc = true;
            if (!isfinite(v.v)) special = true;
            sum += v.v, abs += fabs(v.v), e = v.e > e ? v.e : e, mx = fabs(v.v) > mx ? fabs(v.v) : mx;
        }
        double mean = sum / (double)L, var = 0;
        for (int64_t l = 0; l < L; l++) {
            double d = cast_rv(x->dt, HCQ_F32, x->x[r * L + l]).v - mean;
            var += d * d;
        }
        var /= (double)L;
        double rs = 1.0 / sqrt((double)(float)(var) + eps);
        double em = e + (double)(L + 3) * EPS32 * (abs / (double)L) * 2;
        bool overflow = mx * mx * (double)L >= FLT_MAX / 4 || (double)(float)(var + eps) == 0;
        for (int64_t l = 0; l < L; l++) {
            int64_t at = r * L + l;
            unravel(at, x->shape, x->ndim, idx);
            tf_rv wv = w ? cast_rv(w->dt, wdt, w->x[bidx(w, idx, x->ndim)]) : rv_exact(HCQ_F32, 1);
            tf_rv bv = b ? cast_rv(b->dt, wdt, b->x[bidx(b, idx, x->ndim)]) : rv_exact(HCQ_F32, 0);
            if (anydc) {
                o->x[at] = rv_dc();
                continue;
            }
            if (special || isnan(eps)) { /* the row's variance is NaN */
                o->x[at] = rv_exact(odt, NAN);
                continue;
            }
            double cx = cast_rv(x->dt, HCQ_F32, x->x[at]).v - mean;
            double y = cx * rs * wv.v + bv.v;
            if (dc(wv) || dc(bv) || overflow || isnan(y) || !(var + eps > 0) || wv.e > 0 || bv.e > 0 || isinf(wv.v) || isinf(bv.v)) {
                o->x[at] = rv_dc();
                continue;
            }
            /* c's error is the mean's; the variance's relative error moves rsqrt */
            double evar = (2 * sqrt(var) * em + (double)(L + 4) * 4 * EPS32 * var) + 0.0;
            double erel = evar / (var + eps) * 0.5 + 8 * EPS32;
            double ey = (em * rs + fabs(cx * rs) * erel) * fabs(wv.v) + fabs(cx * rs) * wv.e + bv.e + fabs(y) * 4 * EPS32;
            o->x[at] = rv_approx(odt, y, ey + 4 * EPS32 * fabs(bv.v) + 0x1p-149); /* never exact: not even a zero's sign */
        }
    }
    return true;
}

static bool gather_op(ctx *c, const tf_tensor *a, int axis, const tf_tensor *idx)
{
    int ax = axis_of(axis, a->ndim);
    if (ax < 0 || ax >= a->ndim) return fail(c, "axis");
    if (idx->dt != HCQ_I32) return fail(c, "indexes not i32");
    if (idx->ndim != a->ndim) return fail(c, "ranks differ");
    for (int d = 0; d < a->ndim; d++)
        if (d != ax && idx->shape[d] > a->shape[d]) return fail(c, "index dim too large");
    tf_tensor *o = out_tensor(c, a->dt, idx->shape, idx->ndim);
    int64_t ii[TF_MAX_DIMS];
    for (int64_t i = 0; i < o->n; i++) {
        tf_rv k = idx->x[i];
        if (dc(k)) {
            o->x[i] = rv_dc();
            continue;
        }
        unravel(i, idx->shape, idx->ndim, ii);
        int64_t kv = (int64_t)k.v;
        if (kv < 0 || kv >= a->shape[ax]) {
            o->x[i] = const_rv(a->dt, 0);
            continue;
        }
        ii[ax] = kv;
        o->x[i] = a->x[ravel(ii, a->shape, a->ndim)];
    }
    return true;
}

/* ** the dispatcher */
static void set_weak(ctx *c, bool w) { c->r->t[c->at].weak = w; }

/* hcq_scalar(v): weak; i32 when integral, else f32; its value stays the
 * unrounded double, so it rounds once, to the dtype it meets */
static void scalar_tensor(double v, tf_tensor *t, tf_rv *one)
{
    bool integral = v == trunc(v) && fabs(v) <= 2147483647.0 && !(v == 0 && signbit(v));
    memset(t, 0, sizeof *t);
    t->dt = integral ? HCQ_I32 : HCQ_F32;
    t->weak = true;
    t->n = 1;
    *one = (tf_rv){.v = integral ? sat_i32(v) : v, .e = 0, .b = tf_bits(t->dt, v), .f = 0};
    t->x = one;
}

static tf_rv or_el(tf_rv x, tf_rv y)
{
    if (!dc(x) && x.v) return x;
    if (!dc(y) && y.v) return y;
    if (dc(x) || dc(y)) return rv_dc();
    return rv_exact(HCQ_BOOL, 0);
}

/* the binary ops with tensor.h's promotion: arithmetic on bools in i32,
 * div and pow in a float, idiv/mod on integers, logic on bool or i32,
 * comparisons in the promoted dtype (lt on bools as i32) */
static bool binary(ctx *c, int op, const tf_tensor *a, const tf_tensor *b)
{
    hcq_dtype t = promote(a, b);
    switch (op) {
    case TF_ADD:
    case TF_SUB:
    case TF_MUL: {
        hcq_dtype dt = t == HCQ_BOOL ? HCQ_I32 : t;
        return ew2(c, a, b, dt, dt, op);
    }
    case TF_DIV: return ew2(c, a, b, float_dt(t), float_dt(t), op);
    case TF_IDIV:
    case TF_MOD:
        if (kind(t) == 2) return fail(c, "float operands");
        return ew2(c, a, b, HCQ_I32, HCQ_I32, op);
    case TF_AND:
    case TF_OR:
    case TF_XOR:
        if (kind(t) == 2) return fail(c, "float operands");
        return ew2(c, a, b, t, t, op);
    case TF_MAXIMUM:
    case TF_MINIMUM: return ew2(c, a, b, t, t, op);
    case TF_POW: {
        hcq_dtype dt = float_dt(t);
        const tf_tensor *in2[2] = {a, b};
        int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
        int nd;
        if (!bshape(c, in2, 2, s, &nd) || !shape_ok(c, s, nd)) return false;
        tf_tensor *o = out_tensor(c, dt, s, nd);
        for (int64_t i = 0; i < o->n; i++) {
            unravel(i, s, nd, idx);
            /* both straight to f32 (tensor.h: "a^b in f32"), a weak scalar too */
            tf_rv x = elem(a, bidx(a, idx, nd), HCQ_F32);
            tf_rv y = elem(b, bidx(b, idx, nd), HCQ_F32);
            o->x[i] = cast_rv(HCQ_F32, dt, pow_el(x, y));
        }
        return true;
    }
    default: break;
    }
    /* comparisons: gt(a, b) is lt(b, a); eq is not ne; le is lt or eq */
    bool swap = op == TF_GT || op == TF_GE;
    const tf_tensor *x = swap ? b : a, *y = swap ? a : b;
    hcq_dtype lt_dt = t == HCQ_BOOL ? HCQ_I32 : t;
    if (op == TF_LT || op == TF_GT) return ew2(c, x, y, lt_dt, HCQ_BOOL, TF_LT);
    if (!ew2(c, x, y, t, HCQ_BOOL, TF_NE)) return false;
    tf_tensor *o = &c->r->t[c->at];
    for (int64_t i = 0; i < o->n; i++)
        if (op != TF_NE) o->x[i] = not_el(HCQ_BOOL, o->x[i]);
    if (op == TF_NE || op == TF_EQ) return true;
    tf_rv *eq = o->x;
    o->x = NULL;
    if (!ew2(c, x, y, lt_dt, HCQ_BOOL, TF_LT)) {
        free(eq);
        return false;
    }
    o = &c->r->t[c->at];
    for (int64_t i = 0; i < o->n; i++) o->x[i] = or_el(o->x[i], eq[i]);
    free(eq);
    return true;
}

static bool step(ctx *c)
{
    const tf_inst *in = c->in;
    int op = in->op;
    for (int j = 0; j < in->nsrc; j++)
        if (in->src[j] >= (int)(in - c->p->ins)) return fail(c, "operand from the future");
    const tf_tensor *a = in->nsrc > 0 && in->src[0] >= 0 ? arg(c, 0) : NULL;
    const tf_tensor *b = in->nsrc > 1 && in->src[1] >= 0 ? arg(c, 1) : NULL;
    const tf_tensor *t3 = in->nsrc > 2 && in->src[2] >= 0 ? arg(c, 2) : NULL;
    bool dtype_ok = in->dt == HCQ_BOOL || in->dt == HCQ_I32 || in->dt == HCQ_F16 || in->dt == HCQ_BF16 || in->dt == HCQ_F32;
    switch (op) {
    case TF_IN: {
        if (!dtype_ok || !shape_ok(c, in->iv, in->niv)) return fail(c, "input");
        size_t es = hcq_dtype_size(in->dt);
        if (in->nbytes != (size_t)numel(in->iv, in->niv) * es) return fail(c, "data size");
        tf_tensor *o = out_tensor(c, in->dt, in->iv, in->niv);
        for (int64_t i = 0; i < o->n; i++) {
            uint32_t bits = 0;
            memcpy(&bits, (const uint8_t *)in->data + i * es, es);
            if (in->dt == HCQ_BOOL) bits = bits != 0; /* any non-zero byte is true */
            o->x[i] = (tf_rv){.v = tf_from_bits(in->dt, bits), .e = 0, .b = bits, .f = RV_MOVED};
        }
        return true;
    }
    case TF_FULL: {
        if (!dtype_ok || !shape_ok(c, in->iv, in->niv)) return fail(c, "full");
        tf_tensor *o = out_tensor(c, in->dt, in->iv, in->niv);
        for (int64_t i = 0; i < o->n; i++) o->x[i] = const_rv(in->dt, in->fv);
        return true;
    }
    case TF_SCALAR: {
        tf_tensor sc;
        tf_rv one;
        scalar_tensor(in->fv, &sc, &one);
        tf_tensor *o = out_tensor(c, sc.dt, NULL, 0);
        o->x[0] = one;
        set_weak(c, true);
        return true;
    }
    case TF_ARANGE: {
        if (!dtype_ok || in->niv != 3 || in->iv[2] == 0) return fail(c, "arange");
        double start = (double)in->iv[0], stop = (double)in->iv[1], st = (double)in->iv[2];
        double cnt = ceil((stop - start) / st);
        int64_t n = cnt > 0 ? (int64_t)cnt : 0;
        if (!shape_ok(c, &n, 1)) return false;
        tf_tensor *o = out_tensor(c, in->dt, &n, 1);
        hcq_dtype cdt = is_float(in->dt) ? HCQ_F32 : HCQ_I32;
        for (int64_t i = 0; i < n; i++) {
            double v;
            if (cdt == HCQ_F32) v = (double)(float)((double)(float)((double)(float)i * (float)st) + (float)start);
            else v = (int32_t)((uint32_t)(int32_t)i * (uint32_t)(int32_t)sat_i32(st) + (uint32_t)(int32_t)sat_i32(start));
            o->x[i] = cast_rv(cdt, in->dt, rv_exact(cdt, v));
        }
        return true;
    }
    case TF_EYE: {
        int64_t s[2] = {in->iv[0], in->iv[1]};
        if (!dtype_ok || in->niv != 2 || !shape_ok(c, s, 2)) return fail(c, "eye");
        tf_tensor *o = out_tensor(c, in->dt, s, 2);
        for (int64_t i = 0; i < o->n; i++) o->x[i] = rv_exact(in->dt, (i / s[1]) == (i % s[1]));
        return true;
    }
    case TF_NEG: return unary(c, a, a->dt == HCQ_BOOL ? HCQ_I32 : a->dt, u_simple, op);
    case TF_EXP:
    case TF_LOG:
    case TF_EXP2:
    case TF_LOG2:
    case TF_SIN:
    case TF_COS:
    case TF_SIGMOID:
    case TF_TANH:
    case TF_GELU:
    case TF_SILU:
    case TF_SQRT:
    case TF_RECIP:
    case TF_RSQRT: return unary(c, a, float_dt(a->dt), u_simple, op);
    case TF_ABS:
    case TF_SIGN:
    case TF_TRUNC: return unary(c, a, a->dt, u_simple, op);
    case TF_RELU: /* where(x < 0, 0, x): the scalar 0 makes a bool an i32 */
        return unary(c, a, a->dt == HCQ_BOOL ? HCQ_I32 : a->dt, u_simple, op);
    case TF_NOT: return unary(c, a, HCQ_BOOL, u_simple, op);
    case TF_CAST:
        if (!dtype_ok) return fail(c, "dtype");
        return unary(c, a, in->dt, u_cast, op);
    case TF_BITCAST:
        if (!dtype_ok || in->dt == HCQ_BOOL || a->dt == HCQ_BOOL || hcq_dtype_size(in->dt) != hcq_dtype_size(a->dt))
            return fail(c, "bitcast");
        return unary(c, a, in->dt, u_bitcast, op);
    case TF_ADD:
    case TF_SUB:
    case TF_MUL:
    case TF_DIV:
    case TF_IDIV:
    case TF_MOD:
    case TF_AND:
    case TF_OR:
    case TF_XOR:
    case TF_MAXIMUM:
    case TF_MINIMUM:
    case TF_LT:
    case TF_GT:
    case TF_NE:
    case TF_EQ:
    case TF_LE:
    case TF_GE:
    case TF_POW: return binary(c, op, a, b);
    case TF_WHERE: {
        const tf_tensor *in3[3] = {a, b, t3};
        hcq_dtype dt = promote(b, t3);
        int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
        int nd;
        if (!bshape(c, in3, 3, s, &nd) || !shape_ok(c, s, nd)) return false;
        tf_tensor *o = out_tensor(c, dt, s, nd);
        for (int64_t i = 0; i < o->n; i++) {
            unravel(i, s, nd, idx);
            tf_rv cnd = elem(a, bidx(a, idx, nd), HCQ_BOOL);
            if (dc(cnd)) {
                o->x[i] = rv_dc();
                continue;
            }
            const tf_tensor *t = cnd.v ? b : t3;
            tf_rv v = t->x[bidx(t, idx, nd)];
            o->x[i] = t->dt == dt && !t->weak ? v : elem(t, bidx(t, idx, nd), dt);
        }
        return true;
    }
    case TF_ADD_S:
    case TF_SUB_S:
    case TF_MUL_S:
    case TF_DIV_S:
    case TF_POW_S:
    case TF_MAXIMUM_S:
    case TF_MINIMUM_S: { /* op(a, hcq_scalar(fv)) */
        static const int base[TF_OP_COUNT] = {[TF_ADD_S] = TF_ADD, [TF_SUB_S] = TF_SUB, [TF_MUL_S] = TF_MUL, [TF_DIV_S] = TF_DIV,
                                              [TF_POW_S] = TF_POW, [TF_MAXIMUM_S] = TF_MAXIMUM, [TF_MINIMUM_S] = TF_MINIMUM};
        tf_tensor sc;
        tf_rv one;
        scalar_tensor(in->fv, &sc, &one);
        return binary(c, base[op], a, &sc);
    }
    case TF_SUM:
    case TF_PROD:
    case TF_MAX:
    case TF_MIN: return reduce_op(c, a, op);
    case TF_MEAN:
    case TF_VAR:
    case TF_STD: return mean_var(c, a, op);
    case TF_ARGMAX:
    case TF_ARGMIN: return argext(c, a, op == TF_ARGMIN);
    case TF_RESHAPE: return mv_reshape(c, a, in->iv, in->niv);
    case TF_PERMUTE:
    case TF_TRANSPOSE:
    case TF_PAD:
    case TF_SHRINK:
    case TF_SLICE:
    case TF_FLIP:
    case TF_EXPAND: return mv_general(c, a, op);
    case TF_CAT: return cat_op(c, false);
    case TF_STACK:
        if (a->ndim + 1 > TF_MAX_DIMS) return fail(c, "dims");
        return cat_op(c, true);
    case TF_REPEAT: return repeat_op(c, a);
    case TF_SQUEEZE: {
        int64_t s[TF_MAX_DIMS];
        int k = 0, ax = -1;
        if (in->ia != 0x7fffffff) {
            ax = axis_of(in->ia, a->ndim);
            if (ax < 0 || ax >= a->ndim || a->shape[ax] != 1) return fail(c, "squeeze");
        }
        for (int d = 0; d < a->ndim; d++)
            if (!(a->shape[d] == 1 && (ax < 0 || ax == d))) s[k++] = a->shape[d];
        return mv_reshape(c, a, s, k);
    }
    case TF_UNSQUEEZE: {
        if (a->ndim >= TF_MAX_DIMS) return fail(c, "dims");
        int ax = axis_of(in->ia, a->ndim + 1);
        if (ax < 0 || ax > a->ndim) return fail(c, "axis");
        int64_t s[TF_MAX_DIMS];
        for (int d = 0, k = 0; d <= a->ndim; d++) s[d] = d == ax ? 1 : a->shape[k++];
        return mv_reshape(c, a, s, a->ndim + 1);
    }
    case TF_FLATTEN: {
        if (!a->ndim) return mv_reshape(c, a, (int64_t[]){1}, 1);
        int s0 = axis_of(in->ia, a->ndim), e0 = axis_of(in->ib, a->ndim);
        if (s0 < 0 || s0 >= a->ndim || e0 < 0 || e0 >= a->ndim || e0 < s0) return fail(c, "flatten");
        int64_t s[TF_MAX_DIMS];
        int k = 0;
        for (int d = 0; d < a->ndim; d++) {
            if (d > s0 && d <= e0) s[k - 1] *= a->shape[d];
            else s[k++] = a->shape[d];
        }
        return mv_reshape(c, a, s, k);
    }
    case TF_CONTIGUOUS: return mv_reshape(c, a, a->shape, a->ndim);
    case TF_MATMUL: return matmul_op(c, a, b, false, NULL);
    case TF_LINEAR: {
        if (!matmul_op(c, a, b, true, NULL)) return false;
        if (!t3) return true;
        /* + bias: a broadcasting add on the product */
        tf_tensor prod = c->r->t[c->at];
        memset(&c->r->t[c->at], 0, sizeof prod);
        hcq_dtype dt = promote(&prod, t3);
        if (dt == HCQ_BOOL) dt = HCQ_I32;
        bool ok = ew2(c, &prod, t3, dt, dt, TF_ADD);
        free(prod.x);
        return ok;
    }
    case TF_CONV2D: return conv_op(c, a, b, t3);
    case TF_AVGPOOL:
    case TF_MAXPOOL: return pool_op(c, a, op == TF_MAXPOOL);
    case TF_SOFTMAX:
    case TF_LOGSOFTMAX: return softmax_op(c, a, in->ia, op == TF_LOGSOFTMAX);
    case TF_LAYERNORM: return layernorm_op(c, a, b, t3);
    case TF_XENT: {
        if (a->ndim != 2 || b->ndim != 1 || a->shape[0] != b->shape[0]) return fail(c, "shapes");
        if (b->dt != HCQ_I32) return fail(c, "target dtype");
        /* mean over the batch of -log_softmax(logits)[n, target[n]]: the
         * picked values sum in f32 and round to the logits' dtype, negate,
         * divide by N there */
        int64_t N = a->shape[0], C = a->shape[1];
        hcq_dtype odt = float_dt(a->dt);
        if (!softmax_op(c, a, 1, true)) return false;
        tf_tensor lp = c->r->t[c->at];
        memset(&c->r->t[c->at], 0, sizeof lp);
        tf_rv *picked = calloc((size_t)(N ? N : 1), sizeof *picked);
        int64_t np = 0;
        bool anydc = false;
        for (int64_t n = 0; n < N; n++) {
            tf_rv k = b->x[n];
            if (dc(k)) {
                anydc = true;
                continue;
            }
            int64_t kv = (int64_t)k.v;
            picked[np++] = kv < 0 || kv >= C ? rv_exact(odt, 0) : cast_rv(odt, HCQ_F32, lp.x[n * C + kv]);
        }
        free(lp.x);
        tf_tensor *o = out_tensor(c, odt, NULL, 0);
        tf_rv sum = anydc ? rv_dc() : fsum(picked, np, HCQ_F32, odt);
        free(picked);
        tf_rv r = fop(odt, F_DIV, fop(odt, F_NEG, sum, sum), rv_exact(odt, tf_round(odt, (double)N)));
        o->x[0] = r;
        return true;
    }
    case TF_EMBEDDING: {
        if (a->ndim != 2) return fail(c, "weight not 2-d");
        if (b->dt != HCQ_I32) return fail(c, "idx dtype");
        if (b->ndim + 1 > TF_MAX_DIMS) return fail(c, "dims");
        int64_t D = a->shape[1], s[TF_MAX_DIMS];
        for (int d = 0; d < b->ndim; d++) s[d] = b->shape[d];
        s[b->ndim] = D;
        if (!shape_ok(c, s, b->ndim + 1)) return false;
        tf_tensor *o = out_tensor(c, a->dt, s, b->ndim + 1);
        for (int64_t i = 0; i < b->n; i++)
            for (int64_t j = 0; j < D; j++) {
                tf_rv k = b->x[i];
                int64_t kv = (int64_t)k.v;
                o->x[i * D + j] = dc(k) ? rv_dc() : (kv < 0 || kv >= a->shape[0]) ? const_rv(a->dt, 0) : a->x[kv * D + j];
            }
        return true;
    }
    case TF_GATHER: return gather_op(c, a, in->ia, b);
    default: return fail(c, "op %d", op);
    }
}

bool tf_ref_step(tf_ref *r, const tf_prog *p, int i, char *why, size_t whysz)
{
    if (r->cap < p->n) {
        int nc = p->n + 16;
        tf_tensor *nt = realloc(r->t, (size_t)nc * sizeof *nt);
        if (!nt) return snprintf(why, whysz, "out of memory"), false;
        memset(nt + r->cap, 0, (size_t)(nc - r->cap) * sizeof *nt);
        r->t = nt;
        r->cap = nc;
    }
    free(r->t[i].x);
    memset(&r->t[i], 0, sizeof r->t[i]);
    ctx c = {.r = r, .p = p, .in = &p->ins[i], .at = i, .why = why, .whysz = whysz};
    for (int j = 0; j < p->ins[i].nsrc; j++)
        if (p->ins[i].src[j] < -1 || p->ins[i].src[j] >= i) return snprintf(why, whysz, "bad operand"), false;
    bool ok = step(&c);
    if (r->n < i + 1) r->n = i + 1;
    if (!ok) {
        free(r->t[i].x);
        memset(&r->t[i], 0, sizeof r->t[i]);
    }
    return ok;
}

bool tf_ref_run(tf_ref *r, const tf_prog *p, char *why, size_t whysz)
{
    for (int i = 0; i < p->n; i++)
        if (!tf_ref_step(r, p, i, why, whysz)) {
            char tmp[200];
            snprintf(tmp, sizeof tmp, "%s", why);
            snprintf(why, whysz, "v%d (%s): %s", i, tf_op_name(p->ins[i].op), tmp);
            return false;
        }
    return true;
}

void tf_ref_free(tf_ref *r)
{
    for (int i = 0; i < r->cap; i++) free(r->t[i].x);
    free(r->t);
    memset(r, 0, sizeof *r);
}
