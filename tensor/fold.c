/* Constant folding while the lazy graph is built, so a folded node never
 * becomes a kernel (or a part of one):
 *   - an operation whose operands are all constants is a constant, its
 *     value computed as the kernel IR defines the operation (the
 *     interpreter's semantics, compiler/interp_alu.c: f16/bf16 computed in
 *     f32 and rounded once; integers wrap at their width; x / 0 and x % 0
 *     are 0; maxNum);
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

#include "compiler/interp.h"

#include <math.h>
#include <string.h>

static bool is_const(const tt_node *n) { return n && n->op == TT_CONST; }

static bool is_float(hcq_dtype t) { return hcq_dtype_is_float(t); }

static bool const_is(const tt_node *n, double v)
{
    if (!is_const(n)) return false;
    if (is_float((hcq_dtype)n->dtype)) return n->cv.f == v && signbit(n->cv.f) == signbit(v);
    return n->cv.i == (int64_t)v;
}

/* every bit set: -1 (a signed dtype), the largest value (unsigned), true */
static bool const_all_ones(const tt_node *n)
{
    if (!is_const(n) || is_float((hcq_dtype)n->dtype)) return false;
    if (n->dtype == HCQ_BOOL) return n->cv.i != 0;
    return tt_val_lane(n->cv, (hcq_dtype)n->dtype) == ir_canon((hcq_dtype)n->dtype, ~0ull);
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

static tt_val ival(hcq_dtype dt, int64_t r) { return tt_val_of_lane((uint64_t)r, dt); }

/* op(a, b, c) of constants, computed by the interpreter's ALU (the
 * reference semantics every renderer is held to); false for an op this
 * does not fold (BITCAST: left to the kernel) */
static bool eval(tt_op op, hcq_dtype dt, const tt_node *a, const tt_node *b, const tt_node *c, tt_val *out)
{
    static const hcq_op ir[TT_OP_COUNT] = {
        [TT_NEG] = HCQ_OP_NEG,     [TT_EXP2] = HCQ_OP_EXP2, [TT_LOG2] = HCQ_OP_LOG2,   [TT_SIN] = HCQ_OP_SIN,
        [TT_SQRT] = HCQ_OP_SQRT,   [TT_RECIP] = HCQ_OP_RECIP, [TT_TRUNC] = HCQ_OP_TRUNC, [TT_ADD] = HCQ_OP_ADD,
        [TT_SUB] = HCQ_OP_SUB,     [TT_MUL] = HCQ_OP_MUL,   [TT_FDIV] = HCQ_OP_FDIV,   [TT_IDIV] = HCQ_OP_IDIV,
        [TT_MOD] = HCQ_OP_MOD,     [TT_MAX] = HCQ_OP_MAX,   [TT_CMPLT] = HCQ_OP_CMPLT, [TT_CMPNE] = HCQ_OP_CMPNE,
        [TT_AND] = HCQ_OP_AND,     [TT_OR] = HCQ_OP_OR,     [TT_XOR] = HCQ_OP_XOR,     [TT_NOT] = HCQ_OP_XOR,
        [TT_SHL] = HCQ_OP_SHL,     [TT_SHR] = HCQ_OP_SHR,   [TT_WHERE] = HCQ_OP_WHERE,
    };
    if (op >= TT_OP_COUNT || !ir[op]) return false;
    hcq_dtype st = (hcq_dtype)a->dtype; /* operands' dtype (a comparison's result is bool) */
    const tt_node *x = op == TT_WHERE ? b : a, *y = op == TT_WHERE ? c : b;
    ir_slot s0 = {.u = tt_val_lane(a->cv, st)}, s1 = {0}, s2 = {0}, d = {0};
    if (op == TT_WHERE) {
        s1.u = tt_val_lane(x->cv, dt);
        s2.u = tt_val_lane(y->cv, dt);
        st = dt;
    } else if (op == TT_NOT) { /* not x is x ^ all ones (bool: x ^ true) */
        s1.u = st == HCQ_BOOL ? 1 : ir_canon(st, ~0ull);
    } else if (b) {
        s1.u = tt_val_lane(b->cv, st);
    }
    hcq_ir_op o = {.op = (uint16_t)ir[op], .dtype = (uint8_t)dt};
    ir_alu(&o, op == TT_WHERE ? HCQ_BOOL : st, &d, &s0, &s1, &s2, 1);
    *out = tt_val_of_lane(d.u, dt);
    return true;
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
        if (k_is_right && (const_is(k, 0) || const_is(k, 1) || (hcq_dtype_is_signed(dt) && const_is(k, -1))))
            return constant(dt, ival(dt, 0), x);
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
    } else { /* wrapping at acc's width: n * v, v^n by squaring, v */
        uint64_t x = tt_val_lane(v, acc), p = 1, base = x;
        switch (rop) {
        case TT_R_SUM: r = ival(acc, (int64_t)(x * (uint64_t)n)); break;
        case TT_R_PROD:
            for (uint64_t e = (uint64_t)n; e; e >>= 1, base *= base)
                if (e & 1) p *= base;
            r = ival(acc, (int64_t)p);
            break;
        case TT_R_MAX: r = v; break;
        default: return NULL;
        }
    }
    return tt_const_node(NULL, out_dt, tt_val_cast(r, acc, out_dt), shape, ndim);
}
