/* Reductions. The node keeps reduced axes as size 1; keepdim = false is a
 * reshape on top. A large reduction to few outputs is split in two
 * (partial sums, then their sum), so its first stage spreads over every
 * core or compute unit instead of running on a handful of work-items. */
#include "tensor/tt.h"

#include <math.h>
#include <string.h>

/* The value of an empty reduction (tensor.h: -inf for a float max). */
static tt_val identity(tt_rop rop, hcq_dtype dt)
{
    bool f = hcq_dtype_is_float(dt);
    switch (rop) {
    case TT_R_SUM: return f ? (tt_val){.f = 0} : (tt_val){.i = 0};
    case TT_R_PROD: return f ? (tt_val){.f = 1} : (tt_val){.i = 1};
    case TT_R_MAX: /* the dtype's least value: false, 0 for unsigned, INT_MIN */
        if (f) return (tt_val){.f = -INFINITY};
        if (dt == HCQ_BOOL || !hcq_dtype_is_signed(dt)) return (tt_val){.i = 0};
        return (tt_val){.i = (int64_t)(UINT64_MAX << (hcq_dtype_size(dt) * 8 - 1))};
    }
    return (tt_val){.i = 0};
}

/* What pads a reduction without changing it: the identity, except for
 * floats, where IEEE's neutral elements differ from it. maxNum drops a
 * NaN operand, so max starts from NaN: max(NaN, x) is x, and a slice of
 * only NaNs stays NaN (-inf would turn it into -inf). A sum starts from
 * -0.0: x + -0 is x for every x, so a sum of -0s is -0 (as in IEEE and
 * numpy), where +0 would make it +0. */
tt_val tt_reduce_neutral(tt_rop rop, hcq_dtype dt)
{
    if (rop == TT_R_MAX && hcq_dtype_is_float(dt)) return (tt_val){.f = NAN};
    if (rop == TT_R_SUM && hcq_dtype_is_float(dt)) return (tt_val){.f = -0.0};
    return identity(rop, dt);
}

static tt_node *plain_reduce(tt_node *a, tt_rop rop, uint32_t axes, hcq_dtype out_dt)
{
    tt_node *n = tt_node_new(NULL, TT_REDUCE, out_dt, a->shape, a->ndim);
    if (!n) return NULL;
    for (int d = 0; d < a->ndim; d++)
        if (axes & (1u << d)) n->shape[d] = 1;
        else n->sym[d] = a->sym[d];
    n->rop = (uint8_t)rop;
    n->axes = axes;
    tt_node_ref(a);
    n->src[0] = a;
    n->nsrc = 1;
    return n;
}

/* Reduce `axes` of a (out: the same ndim, reduced dims 1). */
tt_node *tt_reduce_node(tt_node *a, tt_rop rop, uint32_t axes, hcq_dtype out_dt)
{
    int64_t R = 1, numel = tt_numel(a->shape, a->ndim);
    uint32_t real = 0;
    bool sym = false; /* a variable dim is reduced: its size is known only at run time */
    for (int d = 0; d < a->ndim; d++)
        if (axes & (1u << d)) {
            R *= a->shape[d];
            if (a->shape[d] != 1) real |= 1u << d;
            sym = sym || a->sym[d];
        }
    if (!real) { /* nothing to combine */
        tt_node *c = tt_cast_node(a, out_dt);
        return c;
    }
    if (R == 0) { /* an empty reduction is the identity (a variable dim is never 0) */
        int64_t s[TT_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) s[d] = axes & (1u << d) ? 1 : a->shape[d];
        hcq_dtype acc = out_dt;
        tt_node *c = tt_const_node(NULL, out_dt, tt_val_cast(identity(rop, acc), acc, out_dt), s, a->ndim);
        for (int d = 0; c && d < a->ndim; d++) c->sym[d] = axes & (1u << d) ? 0 : a->sym[d];
        return c;
    }
    if (sym) return plain_reduce(a, rop, axes, out_dt); /* neither folded by its size nor split */
    if (a->op == TT_CONST) { /* every element is the same: no kernel */
        int64_t s[TT_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) s[d] = axes & (1u << d) ? 1 : a->shape[d];
        hcq_dtype acc = hcq_dtype_is_float(out_dt) && rop != TT_R_MAX ? tt_calc_float(out_dt) : out_dt;
        tt_node *f = tt_fold_reduce(a, rop, R, acc, out_dt, s, a->ndim);
        if (f) { /* the kept dims keep their variables (hcq_jit_dim) */
            for (int d = 0; d < a->ndim; d++) f->sym[d] = axes & (1u << d) ? 0 : a->sym[d];
            return f;
        }
    }
    int64_t O = numel / R;
    /* (a kept variable dim: the output count is not known when the graph
     * is built, and one graph serves every value; so no split) */
    if (R < 16384 || O > 64 || tt_has_sym(a)) return plain_reduce(a, rop, axes, out_dt);

    /* split: move the reduced axes last, flatten them to R = S * (R/S) */
    int perm[TT_MAX_DIMS], k = 0, nd = a->ndim;
    int64_t s1[TT_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        if (!(axes & (1u << d))) {
            perm[k] = d;
            s1[k++] = a->shape[d];
        }
    int nkeep = k;
    for (int d = 0; d < nd; d++)
        if (axes & (1u << d)) perm[k++] = d;
    int64_t S = 0;
    static const int64_t cand[] = {512, 256, 128, 64, 32, 16};
    for (size_t i = 0; i < BASE_ARRAY_LEN(cand) && !S; i++)
        if (cand[i] * O <= 1024 && R % cand[i] == 0 && R / cand[i] >= 256) S = cand[i];
    int64_t Rp = R;
    hcq_dtype acc = hcq_dtype_is_float(out_dt) && rop != TT_R_MAX ? tt_calc_float(out_dt) : out_dt;
    tt_node *x = tt_cast_node(a, hcq_dtype_is_float((hcq_dtype)a->dtype) ? (hcq_dtype)a->dtype : acc);
    tt_node *p = x ? tt_mv_permute(x, perm) : NULL;
    s1[nkeep] = R;
    tt_node *f = p ? tt_mv_reshape(p, s1, nkeep + 1) : NULL;
    tt_node_unref(x);
    tt_node_unref(p);
    if (!f) return NULL;
    if (!S) { /* no divisor fits: pad with the identity */
        S = 256;
        Rp = (R + S - 1) / S * S;
        int64_t before[TT_MAX_DIMS] = {0}, after[TT_MAX_DIMS] = {0};
        after[nkeep] = Rp - R;
        tt_node *pd = tt_mv_pad(f, before, after, tt_val_cast(tt_reduce_neutral(rop, acc), acc, (hcq_dtype)f->dtype));
        tt_node_unref(f);
        if (!(f = pd)) return NULL;
    }
    s1[nkeep] = S;
    s1[nkeep + 1] = Rp / S;
    tt_node *g = tt_mv_reshape(f, s1, nkeep + 2);
    tt_node *st1 = g ? plain_reduce(g, rop, 1u << (nkeep + 1), acc) : NULL;
    tt_node *st2 = st1 ? plain_reduce(st1, rop, 1u << nkeep, out_dt) : NULL;
    tt_node_unref(f);
    tt_node_unref(g);
    tt_node_unref(st1);
    if (!st2) return NULL;
    int64_t s2[TT_MAX_DIMS];
    for (int d = 0; d < nd; d++) s2[d] = axes & (1u << d) ? 1 : a->shape[d];
    tt_node *r = tt_mv_reshape(st2, s2, nd); /* kept dims were moved in order, so this is exact */
    tt_node_unref(st2);
    return r;
}

/* ** public reductions */
static tt_node *drop_dims(tt_node *r, uint32_t axes, bool keepdim)
{
    if (!r || keepdim) return r;
    int64_t s[TT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < r->ndim; d++)
        if (!(axes & (1u << d))) s[k++] = r->shape[d];
    tt_node *o = tt_mv_reshape(r, s, k);
    tt_node_unref(r);
    return o;
}

static hcq_tensor *reduce(hcq_tensor *t, tt_rop rop, const int *axes, int naxes, bool keepdim, bool flip, const char *fn)
{
    tt_node *a = tt_arg(t, fn);
    if (!a) return NULL;
    uint32_t mask;
    if (tt_axes_mask(axes, naxes, a->ndim, &mask, fn)) return NULL;
    hcq_dtype dt = (hcq_dtype)a->dtype;
    if (rop != TT_R_MAX) dt = tt_sum_dtype(dt); /* narrow integers and bool add up in 32 bits */
    tt_node *x = tt_cast_node(a, dt);
    tt_node *fx = x && flip ? tt_flip_order(x) : (tt_node_ref(x), x);
    tt_node *r = fx ? tt_reduce_node(fx, rop, mask, dt) : NULL;
    tt_node *fr = r && flip ? tt_flip_order(r) : (tt_node_ref(r), r);
    tt_node_unref(x);
    tt_node_unref(fx);
    tt_node_unref(r);
    return tt_wrap(t->ctx, drop_dims(fr, mask, keepdim));
}

hcq_tensor *hcq_sum(hcq_tensor *a, const int *axes, int naxes, bool keepdim)
{
    return reduce(a, TT_R_SUM, axes, naxes, keepdim, false, "hcq_sum");
}
hcq_tensor *hcq_prod(hcq_tensor *a, const int *axes, int naxes, bool keepdim)
{
    return reduce(a, TT_R_PROD, axes, naxes, keepdim, false, "hcq_prod");
}
hcq_tensor *hcq_max(hcq_tensor *a, const int *axes, int naxes, bool keepdim)
{
    return reduce(a, TT_R_MAX, axes, naxes, keepdim, false, "hcq_max");
}
/* min = flip(max(flip x)): flip is an exact order-reversing map */
hcq_tensor *hcq_min(hcq_tensor *a, const int *axes, int naxes, bool keepdim)
{
    return reduce(a, TT_R_MAX, axes, naxes, keepdim, true, "hcq_min");
}

static int64_t count_of(const tt_node *a, uint32_t mask)
{
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++)
        if (mask & (1u << d)) n *= a->shape[d];
    return n;
}

/* s / (the elements of a's dims in mask, less correction, at least 0): a
 * scalar, or for a variable dim (hcq_jit_dim) its value read by the
 * kernel, converted to f32 as the scalar would be (exact below 2^24) */
static hcq_tensor *divide_by_count(hcq_tensor *s, const tt_node *a, uint32_t mask, int correction)
{
    bool sym = false;
    for (int d = 0; d < a->ndim; d++) sym = sym || ((mask & (1u << d)) && a->sym[d]);
    if (!s) return NULL;
    if (!sym) {
        double n = (double)count_of(a, mask) - correction;
        return hcq_div_s(s, n > 0 ? n : 0.0);
    }
    hcq_tensor *n = tt_wrap(s->ctx, tt_sym_count(s->ctx, a, mask));
    if (correction) n = hcq_maximum(hcq_sub_s(n, correction), hcq_zeros(s->ctx, HCQ_I32, NULL, 0));
    return hcq_div(s, hcq_cast(n, hcq_tensor_dtype(s)));
}

static hcq_dtype mean_dt(const tt_node *a) { return tt_float_of((hcq_dtype)a->dtype); }

/* sums in f32, f64 for f64 and 64-bit integers (halfs accumulate and
 * divide there, rounding once at the end) */
hcq_tensor *hcq_mean(hcq_tensor *t, const int *axes, int naxes, bool keepdim)
{
    const char *fn = "hcq_mean";
    tt_node *a = tt_arg(t, fn);
    uint32_t mask;
    if (!a || tt_axes_mask(axes, naxes, a->ndim, &mask, fn)) return NULL;
    hcq_ctx *ctx = t->ctx;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *s = hcq_sum(hcq_cast(t, tt_calc_float((hcq_dtype)a->dtype)), axes, naxes, keepdim);
    hcq_tensor *r = hcq_cast(divide_by_count(s, a, mask, 0), mean_dt(a));
    return tt_scope_end(ctx, m, "hcq_mean", r);
}

/* The variance in f32 (f64 for f64 and 64-bit integers), whatever a's
 * dtype: var and std round to a's float dtype once, at the end (std
 * after its square root). */
static hcq_tensor *var_f32(hcq_tensor *t, const tt_node *a, uint32_t mask, const int *axes, int naxes, bool keepdim,
                           int correction)
{
    hcq_tensor *x = hcq_cast(t, tt_calc_float((hcq_dtype)a->dtype));
    hcq_tensor *d = hcq_sub(x, hcq_mean(x, axes, naxes, true));
    return divide_by_count(hcq_sum(hcq_mul(d, d), axes, naxes, keepdim), a, mask, correction);
}

static hcq_tensor *var_std(hcq_tensor *t, const int *axes, int naxes, bool keepdim, int correction, bool root,
                           const char *fn)
{
    tt_node *a = tt_arg(t, fn);
    uint32_t mask;
    if (!a || tt_axes_mask(axes, naxes, a->ndim, &mask, fn)) return NULL;
    hcq_ctx *ctx = t->ctx;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *v = var_f32(t, a, mask, axes, naxes, keepdim, correction);
    if (root) v = hcq_sqrt(v);
    return tt_scope_end(ctx, m, fn, hcq_cast(v, mean_dt(a)));
}

hcq_tensor *hcq_var(hcq_tensor *t, const int *axes, int naxes, bool keepdim, int correction)
{
    return var_std(t, axes, naxes, keepdim, correction, false, "hcq_var");
}

hcq_tensor *hcq_std(hcq_tensor *t, const int *axes, int naxes, bool keepdim, int correction)
{
    return var_std(t, axes, naxes, keepdim, correction, true, "hcq_std");
}

/* The first index of the maximum: n - max(where(x == max, n - i, 0)), where
 * NaNs count as equal to a NaN maximum (which only happens when every
 * element is NaN, maxNum ignoring NaNs). */
static hcq_tensor *arg_ext(hcq_tensor *t, int axis, bool keepdim, bool flip, const char *fn)
{
    tt_node *a = tt_arg(t, fn);
    if (!a) return NULL;
    int ax = tt_axis(axis, a->ndim, fn);
    if (ax < 0) return NULL;
    hcq_ctx *ctx = t->ctx;
    if (a->shape[ax] == 0) return base_err(HCQ_EINVAL, "%s: axis %d is empty", fn, axis), NULL;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *x = t;
    if (flip) x = tt_wrap(ctx, tt_flip_order(a->dtype == HCQ_BOOL ? a : a));
    hcq_tensor *mx = hcq_max(x, &ax, 1, true);
    hcq_tensor *eq = hcq_eq(x, mx);
    if (hcq_dtype_is_float((hcq_dtype)a->dtype))
        eq = hcq_logical_or(eq, hcq_logical_and(hcq_ne(x, x), hcq_ne(mx, mx)));
    int64_t n = a->shape[ax];
    int64_t shape[TT_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) shape[d] = d == ax ? n : 1;
    hcq_tensor *rev = hcq_reshape(hcq_arange(ctx, HCQ_I32, (double)n, 0, -1), shape, a->ndim);
    hcq_tensor *pick = hcq_max(hcq_where(eq, rev, hcq_scalar(ctx, 0)), &ax, 1, keepdim);
    hcq_tensor *r = hcq_sub(hcq_full(ctx, HCQ_I32, NULL, 0, (double)n), pick);
    return tt_scope_end(ctx, m, fn, r);
}

hcq_tensor *hcq_argmax(hcq_tensor *a, int axis, bool keepdim) { return arg_ext(a, axis, keepdim, false, "hcq_argmax"); }
hcq_tensor *hcq_argmin(hcq_tensor *a, int axis, bool keepdim) { return arg_ext(a, axis, keepdim, true, "hcq_argmin"); }
