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
 * a value near an integer boundary) the element is "don't care".
 *
 * This file: tensors, promotion, elementwise and movement ops, and the
 * dispatcher; ref_elem.c, ref_red.c and ref_nn.c hold the rest (ref.h). */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ** tensors */
int64_t ref_numel(const int64_t *s, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

void ref_unravel(int64_t i, const int64_t *s, int nd, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
}

int64_t ref_ravel(const int64_t *idx, const int64_t *s, int nd)
{
    int64_t i = 0;
    for (int d = 0; d < nd; d++) i = i * s[d] + idx[d];
    return i;
}

bool ref_fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->whysz, fmt, ap);
    va_end(ap);
    return false;
}

tf_tensor *ref_out_tensor(ctx *c, hcq_dtype dt, const int64_t *shape, int nd)
{
    tf_tensor *t = &c->r->t[c->at];
    free(t->x);
    memset(t, 0, sizeof *t);
    t->dt = dt;
    t->ndim = nd;
    for (int d = 0; d < nd; d++) t->shape[d] = shape[d];
    t->n = ref_numel(shape, nd);
    t->x = calloc((size_t)(t->n ? t->n : 1), sizeof *t->x);
    return t;
}

const tf_tensor *ref_arg(ctx *c, int j) { return &c->r->t[c->in->src[j]]; }

bool ref_shape_ok(ctx *c, const int64_t *s, int nd)
{
    if (nd < 0 || nd > TF_MAX_DIMS) return ref_fail(c, "%d dims", nd);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        if (s[d] < 0) return ref_fail(c, "negative dim");
        n *= s[d];
        if (n > TF_MAX_NUMEL) return ref_fail(c, "too many elements");
    }
    return true;
}


/* ** promotion (tensor.h) */

static int width(hcq_dtype t) { return (int)hcq_dtype_size(t) * 8; }

hcq_dtype ref_join(hcq_dtype x, hcq_dtype y)
{
    if (x == y) return x;
    if (kind(x) == 0) return y;
    if (kind(y) == 0) return x;
    if (kind(x) == 2 && kind(y) == 2) return x == HCQ_F64 || y == HCQ_F64 ? HCQ_F64 : HCQ_F32;
    if (kind(x) == 2) return x;
    if (kind(y) == 2) return y;
    /* two integers: one signedness, the wider; else the narrowest signed
     * dtype holding both (u8 with i8 is i16, u32 with i32 is i64) */
    bool ux = is_unsigned(x) || x == HCQ_U64, uy = is_unsigned(y) || y == HCQ_U64;
    if (ux == uy) return width(x) >= width(y) ? x : y;
    int ws = ux ? width(y) : width(x), wu = ux ? width(x) : width(y);
    int w = ws > wu ? ws : 2 * wu;
    return w == 8 ? HCQ_I8 : w == 16 ? HCQ_I16 : w == 32 ? HCQ_I32 : w == 64 ? HCQ_I64 : HCQ_F64;
}

/* A weak scalar takes the other operand's dtype: a float tensor's; an
 * integer tensor's (i32 for bool) when the scalar is an integer that
 * dtype holds (its value decides: hcq_scalar keeps one beyond i32 as an
 * f32 scalar holding the double; -0.0 is no integer); else f32. */
hcq_dtype ref_promote(const tf_tensor *a, const tf_tensor *b)
{
    if (a->weak != b->weak) {
        const tf_tensor *w = a->weak ? a : b, *s = a->weak ? b : a;
        if (kind(s->dt) == 2) return s->dt;
        hcq_dtype it = s->dt == HCQ_BOOL ? HCQ_I32 : s->dt;
        double v = w->x[0].v;
        bool fits = v == trunc(v) && v >= ref_int_lo(it) && v <= ref_int_hi(it) && !(v == 0 && signbit(v));
        return fits ? it : HCQ_F32;
    }
    return ref_join(a->dt, b->dt);
}

/* An element converted to dt, as a cast does: rounds once; a weak
 * scalar's value is its unrounded double, so it too rounds once. */
static tf_rv elem(const tf_tensor *t, int64_t i, hcq_dtype dt)
{
    if (t->weak && !dc(t->x[i])) return ref_rv_exact(dt, tf_round(dt, t->x[i].v));
    return ref_cast_rv(t->dt, dt, t->x[i]);
}

/* ** broadcasting elementwise ops */
bool ref_bshape(ctx *c, const tf_tensor *const *in, int n, int64_t *out, int *nd)
{
    int m = 0;
    for (int i = 0; i < n; i++) m = in[i]->ndim > m ? in[i]->ndim : m;
    for (int d = 0; d < m; d++) {
        int64_t s = 1;
        for (int i = 0; i < n; i++) {
            int k = in[i]->ndim - m + d;
            int64_t si = k >= 0 ? in[i]->shape[k] : 1;
            if (si != 1) {
                if (s != 1 && s != si) return ref_fail(c, "shapes do not broadcast");
                s = si;
            }
        }
        out[d] = s;
    }
    *nd = m;
    return true;
}

int64_t ref_bidx(const tf_tensor *t, const int64_t *idx, int nd)
{
    int64_t i = 0;
    for (int d = 0; d < t->ndim; d++) {
        int64_t k = idx[nd - t->ndim + d];
        i = i * t->shape[d] + (t->shape[d] == 1 ? 0 : k);
    }
    return i;
}

/* float ops on two elements of dt (already converted) */
/* ** the ops */

/* a binary op: operands promoted to `dt`, broadcast; result in `rdt` */
static bool ew2(ctx *c, const tf_tensor *a, const tf_tensor *b, hcq_dtype dt, hcq_dtype rdt, int op)
{
    const tf_tensor *in[2] = {a, b};
    int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
    int nd;
    if (!ref_bshape(c, in, 2, s, &nd) || !ref_shape_ok(c, s, nd)) return false;
    tf_tensor *o = ref_out_tensor(c, rdt, s, nd);
    for (int64_t i = 0; i < o->n; i++) {
        ref_unravel(i, s, nd, idx);
        tf_rv x = elem(a, ref_bidx(a, idx, nd), dt), y = elem(b, ref_bidx(b, idx, nd), dt);
        tf_rv r;
        switch (op) {
        case TF_MINIMUM: r = ref_min_el(dt, x, y); break;
        case TF_POW: r = ref_rv_dc(); break; /* below */
        default: r = ref_bin_el(dt, op, x, y); break;
        }
        o->x[i] = r;
    }
    return true;
}

static bool unary(ctx *c, const tf_tensor *a, hcq_dtype odt, tf_rv (*f)(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op), int op)
{
    tf_tensor *o = ref_out_tensor(c, odt, a->shape, a->ndim);
    for (int64_t i = 0; i < o->n; i++) o->x[i] = f(a, odt, a->x[i], op);
    return true;
}

/* ** movement: every output element names its source element (or padding) */
tf_rv ref_const_rv(hcq_dtype dt, double v)
{
    tf_rv r = ref_rv_exact(dt, tf_round(dt, v));
    r.f |= RV_MOVED; /* a constant's bits are exact */
    if (is_float(dt) && isnan(v)) r.f &= (uint8_t)~RV_MOVED;
    return r;
}

static bool mv_reshape(ctx *c, const tf_tensor *a, const int64_t *shape, int nd)
{
    int64_t s[TF_MAX_DIMS], known = 1;
    int infer = -1;
    if (nd < 0 || nd > TF_MAX_DIMS) return ref_fail(c, "dims");
    for (int d = 0; d < nd; d++) {
        s[d] = shape[d];
        if (s[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (s[d] < 0) return ref_fail(c, "negative dim");
        known *= s[d];
    }
    if (infer >= 0) {
        if (known == 0 || a->n % known) return ref_fail(c, "cannot infer");
        s[infer] = a->n / known;
        known *= s[infer];
    }
    if (known != a->n) return ref_fail(c, "numel differs");
    tf_tensor *o = ref_out_tensor(c, a->dt, s, nd);
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
    tf_rv pad = ref_rv_dc();
    for (int d = 0; d < nd; d++) perm[d] = d, s[d] = a->shape[d], step[d] = 1;
    switch (op) {
    case TF_PERMUTE: {
        if (in->niv != nd) return ref_fail(c, "perm size");
        uint32_t seen = 0;
        for (int d = 0; d < nd; d++) {
            int p = axis_of((int)in->iv[d], nd);
            if (p < 0 || p >= nd || (seen & (1u << p))) return ref_fail(c, "bad perm");
            seen |= 1u << p;
            perm[d] = p;
            s[d] = a->shape[p];
        }
        break;
    }
    case TF_TRANSPOSE: {
        int x = axis_of(in->ia, nd), y = axis_of(in->ib, nd);
        if (x < 0 || x >= nd || y < 0 || y >= nd) return ref_fail(c, "axis");
        perm[x] = y, perm[y] = x;
        s[x] = a->shape[y], s[y] = a->shape[x];
        break;
    }
    case TF_PAD: {
        if (in->niv % 2 || in->niv / 2 > nd) return ref_fail(c, "pairs");
        for (int d = 0; d < in->niv / 2; d++) {
            if (in->iv[2 * d] < 0 || in->iv[2 * d + 1] < 0) return ref_fail(c, "negative pad");
            lo[d] = -in->iv[2 * d];
            s[d] = a->shape[d] + in->iv[2 * d] + in->iv[2 * d + 1];
        }
        pad = ref_const_rv(a->dt, in->fv);
        break;
    }
    case TF_SHRINK: {
        if (in->niv % 2 || in->niv / 2 > nd) return ref_fail(c, "pairs");
        for (int d = 0; d < in->niv / 2; d++) {
            int64_t b = in->iv[2 * d], e = in->iv[2 * d + 1];
            if (b < 0 || b > e || e > a->shape[d]) return ref_fail(c, "range");
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
            if (ax < 0 || ax >= nd || (m & (1u << ax))) return ref_fail(c, "axes");
            m |= 1u << ax;
        }
        flipm = m;
        break;
    }
    case TF_SLICE: {
        int ax = axis_of(in->ia, nd);
        if (ax < 0 || ax >= nd) return ref_fail(c, "axis");
        int64_t start = in->iv[0], stop = in->iv[1], st = in->iv[2], size = a->shape[ax];
        if (st == 0) return ref_fail(c, "step 0");
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
        if (pre < 0 || in->niv > TF_MAX_DIMS) return ref_fail(c, "dims");
        int64_t ns[TF_MAX_DIMS];
        for (int d = 0; d < in->niv; d++) {
            int64_t have = d < pre ? 1 : a->shape[d - pre];
            int64_t want = in->iv[d] == -1 && d >= pre ? have : in->iv[d];
            if (want < 0 || (have != 1 && want != have)) return ref_fail(c, "cannot expand");
            ns[d] = want;
        }
        if (!ref_shape_ok(c, ns, in->niv)) return false;
        tf_tensor *o = ref_out_tensor(c, a->dt, ns, in->niv);
        for (int64_t i = 0; i < o->n; i++) {
            ref_unravel(i, ns, in->niv, idx);
            o->x[i] = a->x[ref_bidx(a, idx, in->niv)];
        }
        return true;
    }
    default: return ref_fail(c, "movement op");
    }
    if (!ref_shape_ok(c, s, nd)) return false;
    tf_tensor *o = ref_out_tensor(c, a->dt, s, nd);
    for (int64_t i = 0; i < o->n; i++) {
        ref_unravel(i, s, nd, idx);
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
        o->x[i] = in_box ? a->x[ref_ravel(sidx, a->shape, nd)] : pad;
    }
    return true;
}

static bool cat_op(ctx *c, bool stack)
{
    const tf_inst *in = c->in;
    int n = in->nsrc;
    if (n < 1) return ref_fail(c, "no parts");
    const tf_tensor *p0 = ref_arg(c, 0);
    int nd = p0->ndim + (stack ? 1 : 0);
    int ax = axis_of(in->ia, nd);
    if (ax < 0 || ax >= nd) return ref_fail(c, "axis");
    hcq_dtype dt = p0->dt;
    int64_t s[TF_MAX_DIMS], total = 0;
    for (int i = 0; i < n; i++) {
        const tf_tensor *t = ref_arg(c, i);
        if (t->ndim != p0->ndim) return ref_fail(c, "ranks differ");
        for (int d = 0; d < p0->ndim; d++) {
            int od = stack ? d : d;
            if (stack ? t->shape[d] != p0->shape[d] : (d != ax && t->shape[d] != p0->shape[d])) return ref_fail(c, "sizes differ");
            (void)od;
        }
        total += stack ? 1 : t->shape[ax];
        if (i) dt = ref_join(dt, t->dt);
    }
    if (!ref_modeled(dt)) return ref_fail(c, "promotes to %s, which the reference does not model", hcq_dtype_name(dt));
    for (int d = 0, k = 0; d < nd; d++) s[d] = stack ? (d == ax ? n : p0->shape[k++]) : p0->shape[d];
    if (!stack) s[ax] = total;
    if (!ref_shape_ok(c, s, nd)) return false;
    tf_tensor *o = ref_out_tensor(c, dt, s, nd);
    int64_t idx[TF_MAX_DIMS], sidx[TF_MAX_DIMS];
    for (int64_t i = 0; i < o->n; i++) {
        ref_unravel(i, s, nd, idx);
        int part = 0;
        int64_t k = idx[ax];
        if (stack) part = (int)k;
        else
            while (k >= ref_arg(c, part)->shape[ax]) k -= ref_arg(c, part++)->shape[ax];
        const tf_tensor *t = ref_arg(c, part);
        for (int d = 0, j = 0; d < nd; d++) {
            if (stack && d == ax) continue;
            sidx[j++] = (!stack && d == ax) ? k : idx[d];
        }
        tf_rv v = t->x[ref_ravel(sidx, t->shape, t->ndim)];
        o->x[i] = t->dt == dt ? v : ref_u_cast(t, dt, v, 0);
    }
    return true;
}

static bool repeat_op(ctx *c, const tf_tensor *a)
{
    const tf_inst *in = c->in;
    int nr = in->niv;
    if (nr < a->ndim || nr > TF_MAX_DIMS) return ref_fail(c, "repeats");
    int64_t s[TF_MAX_DIMS], ins[TF_MAX_DIMS], idx[TF_MAX_DIMS];
    int pre = nr - a->ndim;
    for (int d = 0; d < nr; d++) {
        if (in->iv[d] < 0) return ref_fail(c, "negative repeat");
        ins[d] = d < pre ? 1 : a->shape[d - pre];
        s[d] = ins[d] * in->iv[d];
    }
    if (!ref_shape_ok(c, s, nr)) return false;
    tf_tensor *o = ref_out_tensor(c, a->dt, s, nr);
    for (int64_t i = 0; i < o->n; i++) {
        ref_unravel(i, s, nr, idx);
        for (int d = 0; d < nr; d++) idx[d] %= ins[d];
        o->x[i] = a->x[ref_ravel(idx, ins, nr)];
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
    *one = (tf_rv){.v = integral ? ref_sat_i32(v) : v, .e = 0, .b = tf_bits(t->dt, v), .f = 0};
    t->x = one;
}

static tf_rv or_el(tf_rv x, tf_rv y)
{
    if (!dc(x) && x.v) return x;
    if (!dc(y) && y.v) return y;
    if (dc(x) || dc(y)) return ref_rv_dc();
    return ref_rv_exact(HCQ_BOOL, 0);
}

/* the binary ops with tensor.h's promotion: arithmetic on bools in i32,
 * div and pow in a float, idiv/mod on integers, logic on bool or i32,
 * comparisons in the promoted dtype (lt on bools as i32) */
static bool binary(ctx *c, int op, const tf_tensor *a, const tf_tensor *b)
{
    hcq_dtype t = ref_promote(a, b);
    if (!ref_modeled(t)) return ref_fail(c, "promotes to %s, which the reference does not model", hcq_dtype_name(t));
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
    case TF_SHL:
    case TF_SHR:
        if (kind(t) == 2) return ref_fail(c, "float operands");
        return ew2(c, a, b, t == HCQ_BOOL ? HCQ_I32 : t, t == HCQ_BOOL ? HCQ_I32 : t, op);
    case TF_AND:
    case TF_OR:
    case TF_XOR:
        if (kind(t) == 2) return ref_fail(c, "float operands");
        return ew2(c, a, b, t, t, op);
    case TF_MAXIMUM:
    case TF_MINIMUM: return ew2(c, a, b, t, t, op);
    case TF_POW: {
        hcq_dtype dt = float_dt(t);
        const tf_tensor *in2[2] = {a, b};
        int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
        int nd;
        if (!ref_bshape(c, in2, 2, s, &nd) || !ref_shape_ok(c, s, nd)) return false;
        tf_tensor *o = ref_out_tensor(c, dt, s, nd);
        for (int64_t i = 0; i < o->n; i++) {
            ref_unravel(i, s, nd, idx);
            /* both straight to f32 (tensor.h: "a^b in f32"), a weak scalar too */
            tf_rv x = elem(a, ref_bidx(a, idx, nd), HCQ_F32);
            tf_rv y = elem(b, ref_bidx(b, idx, nd), HCQ_F32);
            o->x[i] = ref_cast_rv(HCQ_F32, dt, ref_pow_el(x, y));
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
        if (op != TF_NE) o->x[i] = ref_not_el(HCQ_BOOL, o->x[i]);
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
        if (in->src[j] >= (int)(in - c->p->ins)) return ref_fail(c, "operand from the future");
    const tf_tensor *a = in->nsrc > 0 && in->src[0] >= 0 ? ref_arg(c, 0) : NULL;
    const tf_tensor *b = in->nsrc > 1 && in->src[1] >= 0 ? ref_arg(c, 1) : NULL;
    const tf_tensor *t3 = in->nsrc > 2 && in->src[2] >= 0 ? ref_arg(c, 2) : NULL;
    bool dtype_ok = ref_modeled(in->dt);
    switch (op) {
    case TF_IN: {
        if (!dtype_ok || !ref_shape_ok(c, in->iv, in->niv)) return ref_fail(c, "input");
        size_t es = hcq_dtype_size(in->dt);
        if (in->nbytes != (size_t)ref_numel(in->iv, in->niv) * es) return ref_fail(c, "data size");
        tf_tensor *o = ref_out_tensor(c, in->dt, in->iv, in->niv);
        for (int64_t i = 0; i < o->n; i++) {
            uint32_t bits = 0;
            memcpy(&bits, (const uint8_t *)in->data + i * es, es);
            if (in->dt == HCQ_BOOL) bits = bits != 0; /* any non-zero byte is true */
            o->x[i] = (tf_rv){.v = tf_from_bits(in->dt, bits), .e = 0, .b = bits, .f = RV_MOVED};
        }
        return true;
    }
    case TF_FULL: {
        if (!dtype_ok || !ref_shape_ok(c, in->iv, in->niv)) return ref_fail(c, "full");
        tf_tensor *o = ref_out_tensor(c, in->dt, in->iv, in->niv);
        for (int64_t i = 0; i < o->n; i++) o->x[i] = ref_const_rv(in->dt, in->fv);
        return true;
    }
    case TF_SCALAR: {
        tf_tensor sc;
        tf_rv one;
        scalar_tensor(in->fv, &sc, &one);
        tf_tensor *o = ref_out_tensor(c, sc.dt, NULL, 0);
        o->x[0] = one;
        set_weak(c, true);
        return true;
    }
    case TF_ARANGE: {
        /* arange of the narrow integers is not modeled (how the count and
         * values are computed in them is the lowering's); bool/i32/floats are */
        if (!dtype_ok || in->niv != 3 || in->iv[2] == 0 || (is_int(in->dt) && in->dt != HCQ_I32)) return ref_fail(c, "arange");
        double start = (double)in->iv[0], stop = (double)in->iv[1], st = (double)in->iv[2];
        double cnt = ceil((stop - start) / st);
        int64_t n = cnt > 0 ? (int64_t)cnt : 0;
        if (!ref_shape_ok(c, &n, 1)) return false;
        tf_tensor *o = ref_out_tensor(c, in->dt, &n, 1);
        hcq_dtype cdt = is_float(in->dt) ? HCQ_F32 : HCQ_I32;
        for (int64_t i = 0; i < n; i++) {
            double v;
            if (cdt == HCQ_F32) v = (double)(float)((double)(float)((double)(float)i * (float)st) + (float)start);
            else v = (int32_t)((uint32_t)(int32_t)i * (uint32_t)(int32_t)ref_sat_i32(st) + (uint32_t)(int32_t)ref_sat_i32(start));
            o->x[i] = ref_cast_rv(cdt, in->dt, ref_rv_exact(cdt, v));
        }
        return true;
    }
    case TF_EYE: {
        int64_t s[2] = {in->iv[0], in->iv[1]};
        if (!dtype_ok || in->niv != 2 || !ref_shape_ok(c, s, 2)) return ref_fail(c, "eye");
        tf_tensor *o = ref_out_tensor(c, in->dt, s, 2);
        for (int64_t i = 0; i < o->n; i++) o->x[i] = ref_rv_exact(in->dt, (i / s[1]) == (i % s[1]));
        return true;
    }
    case TF_NEG: return unary(c, a, a->dt == HCQ_BOOL ? HCQ_I32 : a->dt, ref_u_simple, op);
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
    case TF_RSQRT: return unary(c, a, float_dt(a->dt), ref_u_simple, op);
    case TF_ABS:
    case TF_SIGN:
    case TF_TRUNC: return unary(c, a, a->dt, ref_u_simple, op);
    case TF_RELU: /* where(x < 0, 0, x): the scalar 0 makes a bool an i32 */
        return unary(c, a, a->dt == HCQ_BOOL ? HCQ_I32 : a->dt, ref_u_simple, op);
    case TF_NOT: return unary(c, a, HCQ_BOOL, ref_u_simple, op);
    case TF_BNOT: /* ~x on integers, not x on bool; floats are refused */
        if (is_float(a->dt)) return ref_fail(c, "bitwise_not of a float");
        return unary(c, a, a->dt, ref_u_simple, op);
    case TF_CAST:
        if (!dtype_ok) return ref_fail(c, "dtype");
        return unary(c, a, in->dt, ref_u_cast, op);
    case TF_BITCAST:
        if (!dtype_ok || in->dt == HCQ_BOOL || a->dt == HCQ_BOOL || hcq_dtype_size(in->dt) != hcq_dtype_size(a->dt))
            return ref_fail(c, "bitcast");
        return unary(c, a, in->dt, ref_u_bitcast, op);
    case TF_ADD:
    case TF_SUB:
    case TF_MUL:
    case TF_DIV:
    case TF_IDIV:
    case TF_MOD:
    case TF_AND:
    case TF_OR:
    case TF_XOR:
    case TF_SHL:
    case TF_SHR:
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
        hcq_dtype dt = ref_promote(b, t3);
        if (!ref_modeled(dt)) return ref_fail(c, "where: %s not modeled", hcq_dtype_name(dt));
        int64_t s[TF_MAX_DIMS], idx[TF_MAX_DIMS];
        int nd;
        if (!ref_bshape(c, in3, 3, s, &nd) || !ref_shape_ok(c, s, nd)) return false;
        tf_tensor *o = ref_out_tensor(c, dt, s, nd);
        for (int64_t i = 0; i < o->n; i++) {
            ref_unravel(i, s, nd, idx);
            tf_rv cnd = elem(a, ref_bidx(a, idx, nd), HCQ_BOOL);
            if (dc(cnd)) {
                o->x[i] = ref_rv_dc();
                continue;
            }
            const tf_tensor *t = cnd.v ? b : t3;
            tf_rv v = t->x[ref_bidx(t, idx, nd)];
            o->x[i] = t->dt == dt && !t->weak ? v : elem(t, ref_bidx(t, idx, nd), dt);
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
    case TF_MIN: return ref_reduce_op(c, a, op);
    case TF_MEAN:
    case TF_VAR:
    case TF_STD: return ref_mean_var(c, a, op);
    case TF_ARGMAX:
    case TF_ARGMIN: return ref_argext(c, a, op == TF_ARGMIN);
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
        if (a->ndim + 1 > TF_MAX_DIMS) return ref_fail(c, "dims");
        return cat_op(c, true);
    case TF_REPEAT: return repeat_op(c, a);
    case TF_SQUEEZE: {
        int64_t s[TF_MAX_DIMS];
        int k = 0, ax = -1;
        if (in->ia != 0x7fffffff) {
            ax = axis_of(in->ia, a->ndim);
            if (ax < 0 || ax >= a->ndim || a->shape[ax] != 1) return ref_fail(c, "squeeze");
        }
        for (int d = 0; d < a->ndim; d++)
            if (!(a->shape[d] == 1 && (ax < 0 || ax == d))) s[k++] = a->shape[d];
        return mv_reshape(c, a, s, k);
    }
    case TF_UNSQUEEZE: {
        if (a->ndim >= TF_MAX_DIMS) return ref_fail(c, "dims");
        int ax = axis_of(in->ia, a->ndim + 1);
        if (ax < 0 || ax > a->ndim) return ref_fail(c, "axis");
        int64_t s[TF_MAX_DIMS];
        for (int d = 0, k = 0; d <= a->ndim; d++) s[d] = d == ax ? 1 : a->shape[k++];
        return mv_reshape(c, a, s, a->ndim + 1);
    }
    case TF_FLATTEN: {
        if (!a->ndim) return mv_reshape(c, a, (int64_t[]){1}, 1);
        int s0 = axis_of(in->ia, a->ndim), e0 = axis_of(in->ib, a->ndim);
        if (s0 < 0 || s0 >= a->ndim || e0 < 0 || e0 >= a->ndim || e0 < s0) return ref_fail(c, "flatten");
        int64_t s[TF_MAX_DIMS];
        int k = 0;
        for (int d = 0; d < a->ndim; d++) {
            if (d > s0 && d <= e0) s[k - 1] *= a->shape[d];
            else s[k++] = a->shape[d];
        }
        return mv_reshape(c, a, s, k);
    }
    case TF_CONTIGUOUS: return mv_reshape(c, a, a->shape, a->ndim);
    case TF_MATMUL: return ref_matmul_op(c, a, b, false, NULL);
    case TF_LINEAR: {
        if (!ref_matmul_op(c, a, b, true, NULL)) return false;
        if (!t3) return true;
        /* + bias: a broadcasting add on the product */
        tf_tensor prod = c->r->t[c->at];
        memset(&c->r->t[c->at], 0, sizeof prod);
        hcq_dtype dt = ref_promote(&prod, t3);
        if (dt == HCQ_BOOL) dt = HCQ_I32;
        if (!ref_modeled(dt)) {
            free(prod.x);
            return ref_fail(c, "bias promotes to %s, which the reference does not model", hcq_dtype_name(dt));
        }
        bool ok = ew2(c, &prod, t3, dt, dt, TF_ADD);
        free(prod.x);
        return ok;
    }
    case TF_CONV2D: return ref_conv_op(c, a, b, t3);
    case TF_AVGPOOL:
    case TF_MAXPOOL: return ref_pool_op(c, a, op == TF_MAXPOOL);
    case TF_SOFTMAX:
    case TF_LOGSOFTMAX: return ref_softmax_op(c, a, in->ia, op == TF_LOGSOFTMAX);
    case TF_LAYERNORM: return ref_layernorm_op(c, a, b, t3);
    case TF_XENT: {
        if (a->ndim != 2 || b->ndim != 1 || a->shape[0] != b->shape[0]) return ref_fail(c, "shapes");
        if (b->dt != HCQ_I32) return ref_fail(c, "target dtype");
        /* mean over the batch of -log_softmax(logits)[n, target[n]]: the
         * picked values sum in f32 and round to the logits' dtype, negate,
         * divide by N there */
        int64_t N = a->shape[0], C = a->shape[1];
        hcq_dtype odt = float_dt(a->dt);
        if (!ref_softmax_op(c, a, 1, true)) return false;
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
            picked[np++] = kv < 0 || kv >= C ? ref_rv_exact(odt, 0) : ref_cast_rv(odt, HCQ_F32, lp.x[n * C + kv]);
        }
        free(lp.x);
        tf_tensor *o = ref_out_tensor(c, odt, NULL, 0);
        tf_rv sum = anydc ? ref_rv_dc() : ref_fsum(picked, np, HCQ_F32, odt);
        free(picked);
        tf_rv r = ref_fop(odt, F_DIV, ref_fop(odt, F_NEG, sum, sum), ref_rv_exact(odt, tf_round(odt, (double)N)));
        o->x[0] = r;
        return true;
    }
    case TF_EMBEDDING: {
        if (a->ndim != 2) return ref_fail(c, "weight not 2-d");
        if (b->dt != HCQ_I32) return ref_fail(c, "idx dtype");
        if (b->ndim + 1 > TF_MAX_DIMS) return ref_fail(c, "dims");
        int64_t D = a->shape[1], s[TF_MAX_DIMS];
        for (int d = 0; d < b->ndim; d++) s[d] = b->shape[d];
        s[b->ndim] = D;
        if (!ref_shape_ok(c, s, b->ndim + 1)) return false;
        tf_tensor *o = ref_out_tensor(c, a->dt, s, b->ndim + 1);
        for (int64_t i = 0; i < b->n; i++)
            for (int64_t j = 0; j < D; j++) {
                tf_rv k = b->x[i];
                int64_t kv = (int64_t)k.v;
                o->x[i * D + j] = dc(k) ? ref_rv_dc() : (kv < 0 || kv >= a->shape[0]) ? ref_const_rv(a->dt, 0) : a->x[kv * D + j];
            }
        return true;
    }
    case TF_GATHER: return ref_gather_op(c, a, in->ia, b);
    default: return ref_fail(c, "op %d", op);
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
