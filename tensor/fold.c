/* Constant folding while the lazy graph is built, so a folded node never
 * becomes a kernel (or a part of one):
 *   - an operation whose operands are all constants is a constant, its
 *     value computed as the kernel IR defines the operation (the
 *     interpreter's semantics, compiler/interp_alu.c: f16/bf16 computed in
 *     f32 and rounded once; wrapping i32; x / 0 and x % 0 are 0; maxNum);
 *   - identities with one constant operand give the other operand itself:
 *     x * 1, x / 1, x - (+0.0), x + (-0.0), neg(neg x), not(not x), and for
 *     integers x + 0, x - 0, x | 0, x ^ 0, x & ~0; annihilators give a
 *     constant: integer x * 0, x & 0, x / 0, x % 0, x % 1, bool x & false,
 *     x | true; a select on a constant condition, or between one value
 *     and itself, is that value;
 *   - a reduction of a constant is a constant (ops_reduce.c calls
 *     tt_fold_reduce).
 * IEEE's rules are kept: x * 0 is not 0 for a float x (NaN, inf, -0.0),
 * and x + 0.0 is not x (-0.0 + 0.0 is +0.0), so neither folds. A weak
 * scalar (a value that yields its dtype to the other operand) is never
 * handed back as a result: the result would inherit its weakness. */
#include "tensor/tt.h"

#include <math.h>
#include <string.h>

static bool is_const(const tt_node *n) { return n && n->op == TT_CONST; }

static bool is_float(hcq_dtype t) { return hcq_dtype_is_float(t); }

/* the constant as the f32 the IR computes with (f16/bf16 are exact in f32) */
static float as_f32(const tt_node *n) { return (float)n->cv.f; }

static int32_t as_i32(const tt_node *n) { return (int32_t)(uint32_t)(uint64_t)n->cv.i; }

static bool const_is(const tt_node *n, double v)
{
    if (!is_const(n)) return false;
    if (is_float((hcq_dtype)n->dtype)) return n->cv.f == v && signbit(n->cv.f) == signbit(v);
    return n->cv.i == (int64_t)v;
}

/* every bit set: -1 for i32, true for bool */
static bool const_all_ones(const tt_node *n)
{
    if (!is_const(n) || is_float((hcq_dtype)n->dtype)) return false;
    return n->dtype == HCQ_BOOL ? n->cv.i != 0 : as_i32(n) == -1;
}

static tt_node *keep(tt_node *x, hcq_dtype dt)
{
    if (x->weak || x->dtype != dt) return NULL;
    tt_node_ref(x);
    return x;
}

static tt_node *constant(hcq_dtype dt, tt_val v, const tt_node *shape_of)
{
    return tt_const_node(NULL, dt, v, shape_of->shape, shape_of->ndim);
}

static tt_val fval(hcq_dtype dt, float r)
{
    return (tt_val){.f = dt == HCQ_F32 ? (double)r : hcq_dtype_round(dt, (double)r)};
}

static tt_val ival(hcq_dtype dt, int64_t r)
{
    if (dt == HCQ_BOOL) return (tt_val){.i = r != 0};
    return (tt_val){.i = (int64_t)(int32_t)(uint32_t)(uint64_t)r};
}

static float maxnum(float a, float b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* op(a, b, c) of constants, as the IR computes it; false for an op this
 * does not fold (BITCAST: left to the kernel) */
static bool eval(tt_op op, hcq_dtype dt, const tt_node *a, const tt_node *b, const tt_node *c, tt_val *out)
{
    hcq_dtype st = (hcq_dtype)a->dtype; /* operands' dtype (a comparison's result is bool) */
    if (op == TT_WHERE) {
        *out = a->cv.i ? b->cv : c->cv;
        return true;
    }
    if (is_float(st)) {
        float x = as_f32(a), y = b ? as_f32(b) : 0;
        switch (op) {
        case TT_NEG: *out = fval(dt, -x); return true;
        case TT_EXP2: *out = fval(dt, exp2f(x)); return true;
        case TT_LOG2: *out = fval(dt, log2f(x)); return true;
        case TT_SIN: *out = fval(dt, sinf(x)); return true;
        case TT_SQRT: *out = fval(dt, sqrtf(x)); return true;
        case TT_RECIP: *out = fval(dt, 1.0f / x); return true;
        case TT_TRUNC: *out = fval(dt, truncf(x)); return true;
        case TT_ADD: *out = fval(dt, x + y); return true;
        case TT_SUB: *out = fval(dt, x - y); return true;
        case TT_MUL: *out = fval(dt, x * y); return true;
        case TT_FDIV: *out = fval(dt, x / y); return true;
        case TT_MAX: *out = fval(dt, maxnum(x, y)); return true;
        case TT_CMPLT: *out = (tt_val){.i = x < y}; return true;
        case TT_CMPNE: *out = (tt_val){.i = x != y}; return true;
        default: return false;
        }
    }
    int64_t x = st == HCQ_BOOL ? (a->cv.i != 0) : as_i32(a), y = 0;
    if (b) y = st == HCQ_BOOL ? (b->cv.i != 0) : as_i32(b);
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    switch (op) {
    case TT_NEG: *out = ival(dt, -(int64_t)ux); return true;
    case TT_NOT: *out = ival(dt, st == HCQ_BOOL ? !x : ~x); return true;
    case TT_ADD: *out = ival(dt, (int64_t)(ux + uy)); return true;
    case TT_SUB: *out = ival(dt, (int64_t)(ux - uy)); return true;
    case TT_MUL: *out = ival(dt, (int64_t)(ux * uy)); return true;
    case TT_IDIV:
    case TT_MOD: {
        int64_t r;
        if (y == 0) r = 0;
        else if (y == -1) r = op == TT_IDIV ? (int64_t)(0u - ux) : 0; /* INT_MIN / -1 wraps */
        else r = op == TT_IDIV ? x / y : x % y;
        *out = ival(dt, r);
        return true;
    }
    case TT_MAX: *out = ival(dt, x > y ? x : y); return true;
    case TT_CMPLT: *out = (tt_val){.i = x < y}; return true;
    case TT_CMPNE: *out = (tt_val){.i = x != y}; return true;
    case TT_AND: *out = ival(dt, (int64_t)(ux & uy)); return true;
    case TT_OR: *out = ival(dt, (int64_t)(ux | uy)); return true;
    case TT_XOR: *out = ival(dt, (int64_t)(ux ^ uy)); return true;
    default: return false;
    }
}

/* x op k with k the constant operand (commutative ops try both orders) */
static tt_node *identity(tt_op op, hcq_dtype dt, tt_node *x, tt_node *k, bool k_is_right)
{
    if (!is_const(k) || x->dtype != k->dtype) return NULL;
    bool flt = is_float(dt), boolean = dt == HCQ_BOOL;
    switch (op) {
    case TT_ADD:
        if (flt ? const_is(k, -0.0) : const_is(k, 0)) return keep(x, dt);
        return NULL;
    case TT_SUB:
        if (k_is_right && (flt ? const_is(k, 0.0) : const_is(k, 0))) return keep(x, dt);
        return NULL;
    case TT_MUL:
        if (const_is(k, 1)) return keep(x, dt);
        if (!flt && const_is(k, 0)) return constant(dt, ival(dt, 0), x);
        return NULL;
    case TT_FDIV:
        if (k_is_right && const_is(k, 1)) return keep(x, dt);
        return NULL;
    case TT_IDIV:
        if (!k_is_right) return NULL;
        if (const_is(k, 1)) return keep(x, dt);
        if (const_is(k, 0)) return constant(dt, ival(dt, 0), x);
        return NULL;
    case TT_MOD:
        if (k_is_right && (const_is(k, 0) || const_is(k, 1) || const_is(k, -1))) return constant(dt, ival(dt, 0), x);
        return NULL;
    case TT_AND:
        if (const_all_ones(k)) return keep(x, dt);
        if (const_is(k, 0)) return constant(dt, ival(dt, 0), x);
        return NULL;
    case TT_OR:
        if (const_is(k, 0)) return keep(x, dt);
        if (const_all_ones(k)) return constant(dt, boolean ? ival(dt, 1) : ival(dt, -1), x);
        return NULL;
    case TT_XOR:
        if (const_is(k, 0)) return keep(x, dt);
        return NULL;
    default: return NULL;
    }
}

tt_node *tt_fold_alu(tt_op op, hcq_dtype dt, tt_node *a, tt_node *b, tt_node *c)
{
    if (op == TT_CAST || op == TT_BITCAST) return NULL; /* tt_cast_node folds casts */
    if (is_const(a) && (!b || is_const(b)) && (!c || is_const(c))) {
        tt_val v;
        return eval(op, dt, a, b, c, &v) ? constant(dt, v, a) : NULL;
    }
    if (op == TT_WHERE) {
        if (is_const(a)) return keep(a->cv.i ? b : c, dt);
        if (b == c) return keep(b, dt);
        return NULL;
    }
    if ((op == TT_NEG || op == TT_NOT) && a->op == op && a->nsrc == 1) return keep(a->src[0], dt);
    if (!b || c || op == TT_CMPLT || op == TT_CMPNE) return NULL;
    tt_node *r = identity(op, dt, a, b, true);
    if (!r && op != TT_SUB && op != TT_FDIV && op != TT_IDIV && op != TT_MOD) r = identity(op, dt, b, a, false);
    return r;
}

/* n copies of v combined by rop, as exactly as the value allows: a sum is
 * n * v rounded once (the order a kernel would add in is unspecified;
 * this is the correctly rounded one), a product v^n, a max v */
tt_node *tt_fold_reduce(const tt_node *a, tt_rop rop, int64_t n, hcq_dtype acc, hcq_dtype out_dt, const int64_t *shape,
                        int ndim)
{
    if (!is_const(a) || n < 1) return NULL;
    tt_val v = tt_val_cast(a->cv, (hcq_dtype)a->dtype, acc), r;
    if (is_float(acc)) {
        double x = v.f;
        switch (rop) {
        case TT_R_SUM: r.f = hcq_dtype_round(acc, (double)((long double)x * (long double)n)); break;
        case TT_R_PROD: r.f = hcq_dtype_round(acc, (double)powl((long double)x, (long double)n)); break;
        case TT_R_MAX: r.f = x; break;
        default: return NULL;
        }
    } else if (acc == HCQ_BOOL) {
        if (rop != TT_R_MAX) return NULL; /* bool sums are computed in i32 */
        r.i = v.i != 0;
    } else {
        uint32_t x = (uint32_t)(uint64_t)v.i, p = 1, base = x;
        switch (rop) {
        case TT_R_SUM: r.i = (int32_t)(uint32_t)((uint64_t)x * (uint64_t)n); break;
        case TT_R_PROD:
            for (uint64_t e = (uint64_t)n; e; e >>= 1, base *= base)
                if (e & 1) p *= base;
            r.i = (int32_t)p;
            break;
        case TT_R_MAX: r.i = (int32_t)x; break;
        default: return NULL;
        }
    }
    return tt_const_node(NULL, out_dt, tt_val_cast(r, acc, out_dt), shape, ndim);
}
