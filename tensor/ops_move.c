/* Movement operations. Each makes a VIEW node: composed into the source's
 * view when view.c can (so chains of movement ops stay one view), stacked
 * on top of it when not. Constants stay constants; a view that masks
 * everything becomes its padding value. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

static bool same_val(tt_val a, tt_val b) { return !memcmp(&a, &b, sizeof a); }

/* A node showing src through v (new reference). */
static tt_node *view_node(tt_node *src, const tt_view *v, tt_val pad)
{
    if (tt_view_all_masked(v)) return tt_const_node(NULL, (hcq_dtype)src->dtype, pad, v->shape, v->ndim);
    if (tt_view_is_identity(v, src->shape, src->ndim)) {
        tt_node_ref(src);
        return src;
    }
    tt_node *n = tt_node_new(NULL, TT_VIEW, (hcq_dtype)src->dtype, v->shape, v->ndim);
    if (!n) return NULL;
    n->view = *v;
    n->cv = v->mask ? pad : (tt_val){.i = 0};
    tt_node_ref(src);
    n->src[0] = src;
    n->nsrc = 1;
    return n;
}

static bool apply(const tt_view *v, tt_mv_kind kind, const tt_mv_args *x, tt_view *out)
{
    switch (kind) {
    case TT_MV_RESHAPE: return tt_view_reshape(v, x->shape, x->ndim, out);
    case TT_MV_PERMUTE: tt_view_permute(v, x->perm, out); return true;
    case TT_MV_EXPAND: tt_view_expand(v, x->shape, out); return true;
    case TT_MV_PAD: tt_view_pad(v, x->a, x->b, out); return true;
    case TT_MV_SHRINK: tt_view_shrink(v, x->a, x->b, out); return true;
    case TT_MV_FLIP: tt_view_flip(v, x->axes, out); return true;
    case TT_MV_STEP: tt_view_step(v, x->a, out); return true;
    case TT_MV_WINDOW: return tt_view_window(v, x->axis, x->k, x->stride, x->dil, out);
    }
    return false;
}

static tt_node *mv_view(tt_node *a, tt_mv_kind kind, const tt_mv_args *x)
{
    tt_view v, r;
    if (a->op == TT_CONST && kind != TT_MV_PAD) { /* every element is the same: only the shape changes */
        tt_view_init(&v, a->shape, a->ndim);
        if (!apply(&v, kind, x, &r)) return NULL;
        tt_node *c = tt_const_node(NULL, (hcq_dtype)a->dtype, a->cv, r.shape, r.ndim);
        if (c) c->weak = a->weak && r.ndim == 0;
        return c;
    }
    if (a->op == TT_VIEW && !a->contig) { /* a contiguous() node is a materialization point: stack on it */
        bool pad_clash = kind == TT_MV_PAD && a->view.mask && !same_val(a->cv, x->pad);
        if (!pad_clash && apply(&a->view, kind, x, &r)) return view_node(a->src[0], &r, kind == TT_MV_PAD ? x->pad : a->cv);
    }
    tt_view_init(&v, a->shape, a->ndim);
    if (!apply(&v, kind, x, &r)) {
        base_err(HCQ_EINVAL, "internal: a movement op failed on a contiguous view");
        return NULL;
    }
    return view_node(a, &r, x->pad);
}

/* the view, and its autodiff record when a needs gradients */
static tt_node *mv(tt_node *a, tt_mv_kind kind, const tt_mv_args *x);

/* A movement that changes a variable dim (hcq_jit_dim) other than by a
 * view: the fixed dims move as a view, the variable ones through gathers
 * (symdim.c). The result's autodiff record is the movement itself (its
 * rule undoes it by gathers too), but for a window, whose gradient is the
 * gathers' own. NULL with *done false when a
 * has no variable dim the movement changes. */
static tt_node *mv_sym(tt_node *a, tt_mv_kind kind, const tt_mv_args *x, bool *done)
{
    *done = false;
    if (!tt_has_sym(a) || kind == TT_MV_PERMUTE || kind == TT_MV_EXPAND) return NULL;
    if (kind == TT_MV_RESHAPE) { /* a variable dim merged or split: regrouped by gathers (symdim.c) */
        bool own = true; /* each variable dim stays a dim of its own, the same elements before it: a view */
        for (int d = 0; d < a->ndim && own; d++) {
            if (!a->sym[d]) continue;
            int64_t pre = 1, q = 1;
            for (int k = 0; k < d; k++) pre *= a->shape[k];
            own = false;
            for (int k = 0; k < x->ndim && !own; k++) {
                own = q == pre && x->shape[k] == a->shape[d];
                q *= x->shape[k];
            }
        }
        if (own) return NULL;
        *done = true;
        tt_node *r = tt_sym_reshape(a, x->shape, x->ndim);
        if (r) tt_ad_move(r, a, kind, x);
        return r;
    }
    uint32_t vm = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (!a->sym[d]) continue;
        bool ch = false;
        switch (kind) {
        case TT_MV_FLIP: ch = (x->axes >> d) & 1; break;
        case TT_MV_SHRINK: ch = x->a[d] || x->b[d] != a->shape[d]; break;
        case TT_MV_PAD: ch = x->a[d] || x->b[d]; break;
        case TT_MV_STEP: ch = x->a[d] != 1; break;
        case TT_MV_WINDOW: ch = d == x->axis; break;
        default: break;
        }
        if (ch) vm |= 1u << d;
    }
    if (!vm) return NULL;
    *done = true;
    tt_node *f = NULL, *r = NULL;
    int64_t p[TT_MAX_DIMS], q[TT_MAX_DIMS];
    tt_mv_args y = *x;
    for (int d = 0; d < a->ndim; d++) { /* the fixed dims' movement */
        bool v = (vm >> d) & 1;
        if (kind == TT_MV_SHRINK) p[d] = v ? 0 : x->a[d], q[d] = v ? a->shape[d] : x->b[d];
        if (kind == TT_MV_PAD || kind == TT_MV_STEP) p[d] = v ? (kind == TT_MV_STEP) : x->a[d], q[d] = v || kind == TT_MV_STEP ? 0 : x->b[d];
    }
    y.a = p;
    y.b = q;
    switch (kind) {
    case TT_MV_FLIP:
        y.axes &= ~vm;
        f = y.axes ? mv(a, kind, &y) : (tt_node_ref(a), a);
        r = f ? tt_sym_flip(f, vm) : NULL;
        break;
    case TT_MV_SHRINK:
        f = mv(a, kind, &y);
        r = f ? tt_sym_slice(f, x->a, x->b) : NULL;
        break;
    case TT_MV_PAD:
        f = mv(a, kind, &y);
        r = f ? tt_sym_pad(f, x->a, x->b, x->pad) : NULL;
        break;
    case TT_MV_STEP:
        f = mv(a, kind, &y);
        r = f ? tt_sym_step(f, x->a) : NULL;
        break;
    case TT_MV_WINDOW: r = tt_sym_window(a, x->axis, x->k, x->stride, x->dil); break;
    default: break;
    }
    tt_node_unref(f);
    if (r && kind != TT_MV_WINDOW) tt_ad_move(r, a, kind, x);
    return r;
}

static tt_node *mv(tt_node *a, tt_mv_kind kind, const tt_mv_args *x)
{
    bool done;
    tt_node *q = mv_sym(a, kind, x, &done);
    if (done) return q;
    tt_node *r = mv_view(a, kind, x);
    if (r && tt_has_sym(a) && tt_sym_move(r, a, kind, x)) { /* a variable dim the movement cannot keep */
        tt_node_unref(r);
        return NULL;
    }
    if (r) tt_ad_move(r, a, kind, x);
    return r;
}

tt_node *tt_mv_reshape(tt_node *a, const int64_t *shape, int ndim)
{
    tt_mv_args x = {.shape = shape, .ndim = ndim};
    return mv(a, TT_MV_RESHAPE, &x);
}
tt_node *tt_mv_permute(tt_node *a, const int *perm)
{
    tt_mv_args x = {.perm = perm};
    return mv(a, TT_MV_PERMUTE, &x);
}
tt_node *tt_mv_expand(tt_node *a, const int64_t *shape, int ndim)
{
    tt_mv_args x = {.shape = shape, .ndim = ndim};
    return mv(a, TT_MV_EXPAND, &x);
}
tt_node *tt_mv_pad(tt_node *a, const int64_t *before, const int64_t *after, tt_val padval)
{
    tt_mv_args x = {.a = before, .b = after, .pad = padval};
    return mv(a, TT_MV_PAD, &x);
}
tt_node *tt_mv_shrink(tt_node *a, const int64_t *begin, const int64_t *end)
{
    tt_mv_args x = {.a = begin, .b = end};
    return mv(a, TT_MV_SHRINK, &x);
}
tt_node *tt_mv_flip(tt_node *a, uint32_t axes)
{
    tt_mv_args x = {.axes = axes};
    return mv(a, TT_MV_FLIP, &x);
}
tt_node *tt_mv_step(tt_node *a, const int64_t *steps)
{
    tt_mv_args x = {.a = steps};
    return mv(a, TT_MV_STEP, &x);
}
tt_node *tt_mv_window(tt_node *a, int axis, int64_t k, int64_t stride, int64_t dil)
{
    tt_mv_args x = {.axis = axis, .k = k, .stride = stride, .dil = dil};
    return mv(a, TT_MV_WINDOW, &x);
}

/* ** axes */
int tt_axis(int axis, int ndim, const char *fn)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        base_err(HCQ_EINVAL, "%s: axis %d is out of range for a %d-d tensor", fn, axis, ndim);
        return -1;
    }
    return a;
}

hcq_status tt_axes_mask(const int *axes, int naxes, int ndim, uint32_t *mask, const char *fn)
{
    if (naxes < 0 || (naxes && !axes)) return base_err(HCQ_EINVAL, "%s: %d axes at %p", fn, naxes, (const void *)axes);
    uint32_t m = 0;
    if (!naxes) m = ndim ? (1u << ndim) - 1 : 0;
    for (int i = 0; i < naxes; i++) {
        int a = tt_axis(axes[i], ndim, fn);
        if (a < 0) return HCQ_EINVAL;
        if (m & (1u << a)) return base_err(HCQ_EINVAL, "%s: axis %d is given twice", fn, axes[i]);
        m |= 1u << a;
    }
    *mask = m;
    return HCQ_OK;
}

#define ARG(t, fn)                                                                                 \
    tt_node *n = tt_arg((t), (fn));                                                                \
    if (!n) return NULL

/* ** public movement ops */
hcq_tensor *hcq_reshape(hcq_tensor *a, const int64_t *shape, int ndim)
{
    const char *fn = "hcq_reshape";
    ARG(a, fn);
    if (ndim < 0 || ndim > TT_MAX_DIMS || (ndim && !shape)) return base_err(HCQ_EINVAL, "%s: %d dims", fn, ndim), NULL;
    int64_t s[TT_MAX_DIMS], known = 1, numel = tt_numel(n->shape, n->ndim);
    int infer = -1;
    for (int d = 0; d < ndim; d++) {
        s[d] = shape[d];
        if (s[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (s[d] < 0) return base_err(HCQ_EINVAL, "%s: dim %d is %lld", fn, d, (long long)s[d]), NULL;
        known *= s[d];
    }
    if (infer >= 0) {
        if (known == 0 || numel % known)
            return base_err(HCQ_EINVAL, "%s: cannot infer dim %d: %lld elements into parts of %lld", fn, infer,
                            (long long)numel, (long long)known),
                   NULL;
        s[infer] = numel / known;
        known *= s[infer];
    }
    if (known != numel)
        return base_err(HCQ_EINVAL, "%s: the tensor has %lld elements; the new shape has %lld", fn, (long long)numel,
                        (long long)known),
               NULL;
    tt_node *r = tt_mv_reshape(n, s, ndim);
    if (r && infer >= 0 && tt_has_sym(n) && !r->sym[infer]) {
        /* a variable dim merged or split goes to the outermost dim of its
         * group; a -1 elsewhere in it means the caller meant the variable
         * there (2 x n/2, not n/2 x 2), which cannot be followed */
        bool moved = false;
        for (int d = 0; d < r->ndim; d++) {
            bool kept = false;
            for (int e = 0; e < n->ndim; e++) kept = kept || (r->sym[d] && r->sym[d] == n->sym[e]);
            moved = moved || (r->sym[d] && !kept);
        }
        if (moved) {
            tt_node_unref(r);
            return base_err(HCQ_ENOTSUP,
                            "%s: the -1 (dim %d) is a fixed size here: a variable dim (hcq_jit_dim) a reshape merges or splits goes "
                            "to the outermost dim of its group; write the shape with the -1 there (or no -1)",
                            fn, infer),
                   NULL;
        }
    }
    return tt_wrap(a->ctx, r);
}

hcq_tensor *hcq_permute(hcq_tensor *a, const int *perm, int ndim)
{
    const char *fn = "hcq_permute";
    ARG(a, fn);
    if (ndim != n->ndim || (ndim && !perm))
        return base_err(HCQ_EINVAL, "%s: %d axes for a %d-d tensor", fn, ndim, n->ndim), NULL;
    int p[TT_MAX_DIMS];
    uint32_t seen = 0;
    for (int d = 0; d < ndim; d++) {
        p[d] = tt_axis(perm[d], ndim, fn);
        if (p[d] < 0) return NULL;
        if (seen & (1u << p[d])) return base_err(HCQ_EINVAL, "%s: axis %d appears twice", fn, perm[d]), NULL;
        seen |= 1u << p[d];
    }
    return tt_wrap(a->ctx, tt_mv_permute(n, p));
}

hcq_tensor *hcq_transpose(hcq_tensor *a, int axis0, int axis1)
{
    const char *fn = "hcq_transpose";
    ARG(a, fn);
    int x = tt_axis(axis0, n->ndim, fn), y = x < 0 ? -1 : tt_axis(axis1, n->ndim, fn);
    if (y < 0) return NULL;
    int p[TT_MAX_DIMS];
    for (int d = 0; d < n->ndim; d++) p[d] = d;
    p[x] = y;
    p[y] = x;
    return tt_wrap(a->ctx, tt_mv_permute(n, p));
}

hcq_tensor *hcq_expand(hcq_tensor *a, const int64_t *shape, int ndim)
{
    const char *fn = "hcq_expand";
    ARG(a, fn);
    if (ndim < n->ndim || ndim > TT_MAX_DIMS || (ndim && !shape))
        return base_err(HCQ_EINVAL, "%s: %d dims for a %d-d tensor", fn, ndim, n->ndim), NULL;
    int64_t s[TT_MAX_DIMS];
    int pre = ndim - n->ndim;
    for (int d = 0; d < ndim; d++) {
        int64_t have = d < pre ? 1 : n->shape[d - pre];
        s[d] = shape[d] == -1 && d >= pre ? have : shape[d];
        if (s[d] < 0 || (have != 1 && s[d] != have))
            return base_err(HCQ_EINVAL, "%s: dim %d of size %lld cannot expand to %lld", fn, d, (long long)have,
                            (long long)shape[d]),
                   NULL;
    }
    if (tt_check_shape(s, ndim, fn)) return NULL;
    return tt_wrap(a->ctx, tt_broadcast_to(n, s, ndim));
}

hcq_tensor *hcq_expand_as(hcq_tensor *a, const hcq_tensor *b)
{
    tt_node *nb = tt_arg(b, "hcq_expand_as");
    return nb ? hcq_expand(a, nb->shape, nb->ndim) : NULL;
}

hcq_tensor *hcq_pad(hcq_tensor *a, const int64_t *pads, int npairs, double value)
{
    const char *fn = "hcq_pad";
    ARG(a, fn);
    if (npairs < 0 || npairs > n->ndim || (npairs && !pads))
        return base_err(HCQ_EINVAL, "%s: %d pairs for a %d-d tensor", fn, npairs, n->ndim), NULL;
    int64_t before[TT_MAX_DIMS] = {0}, after[TT_MAX_DIMS] = {0}, s[TT_MAX_DIMS];
    for (int d = 0; d < n->ndim; d++) {
        if (d < npairs) {
            before[d] = pads[2 * d];
            after[d] = pads[2 * d + 1];
        }
        if (before[d] < 0 || after[d] < 0)
            return base_err(HCQ_EINVAL, "%s: dim %d pads by %lld, %lld; use hcq_shrink to cut", fn, d,
                            (long long)before[d], (long long)after[d]),
                   NULL;
        s[d] = n->shape[d] + before[d] + after[d];
    }
    if (tt_check_shape(s, n->ndim, fn)) return NULL;
    return tt_wrap(a->ctx, tt_mv_pad(n, before, after, tt_val_from_double((hcq_dtype)n->dtype, value)));
}

/* A slice of fixed size from a variable dim must lie inside it at every
 * value: below the variable's lower bound. */
static hcq_status slice_in_range(hcq_ctx *ctx, const tt_node *n, const int64_t *b, const int64_t *e, const char *fn)
{
    for (int d = 0; d < n->ndim; d++) {
        const tt_symvar *v = n->sym[d] ? tt_symvar_get(ctx, n->sym[d]) : NULL;
        if (v && (b[d] || e[d] != n->shape[d]) && e[d] < n->shape[d] && e[d] > v->lo)
            return base_err(HCQ_EINVAL,
                            "%s: the slice [%lld, %lld) of dim %d, the variable '%s' of range [%lld, %lld], ends past the "
                            "variable's lower bound: it would read past the end at a smaller size",
                            fn, (long long)b[d], (long long)e[d], d, v->name, (long long)v->lo, (long long)v->hi);
    }
    return HCQ_OK;
}

hcq_tensor *hcq_shrink(hcq_tensor *a, const int64_t *ranges, int npairs)
{
    const char *fn = "hcq_shrink";
    ARG(a, fn);
    if (npairs < 0 || npairs > n->ndim || (npairs && !ranges))
        return base_err(HCQ_EINVAL, "%s: %d pairs for a %d-d tensor", fn, npairs, n->ndim), NULL;
    int64_t b[TT_MAX_DIMS], e[TT_MAX_DIMS];
    for (int d = 0; d < n->ndim; d++) {
        b[d] = d < npairs ? ranges[2 * d] : 0;
        e[d] = d < npairs ? ranges[2 * d + 1] : n->shape[d];
        if (b[d] < 0 || b[d] > e[d] || e[d] > n->shape[d])
            return base_err(HCQ_EINVAL, "%s: range [%lld, %lld) of dim %d (size %lld)", fn, (long long)b[d],
                            (long long)e[d], d, (long long)n->shape[d]),
                   NULL;
    }
    if (tt_has_sym(n) && slice_in_range(a->ctx, n, b, e, fn)) return NULL;
    return tt_wrap(a->ctx, tt_mv_shrink(n, b, e));
}

hcq_tensor *hcq_slice(hcq_tensor *a, int axis, int64_t start, int64_t stop, int64_t step)
{
    const char *fn = "hcq_slice";
    ARG(a, fn);
    int ax = tt_axis(axis, n->ndim, fn);
    if (ax < 0) return NULL;
    if (step == 0) return base_err(HCQ_EINVAL, "%s: step is 0", fn), NULL;
    int64_t size = n->shape[ax], lo = step > 0 ? 0 : -1, hi = step > 0 ? size : size - 1;
    /* a variable dim (hcq_jit_dim): the bounds as written say what follows
     * the value: a start from the beginning, a stop at or past the traced
     * size is the end, a stop below it a fixed place; backwards, the whole
     * dim only. Bounds from the end would move with the value and clamp
     * in ways one variable cannot state. */
    bool to_end = false;
    if (n->sym[ax]) {
        bool ok = step > 0 ? start >= 0 && stop >= 0 : (start == -1 || start >= size - 1) && stop < -size;
        if (!ok)
            return base_err(HCQ_ENOTSUP,
                            "%s: [%lld:%lld:%lld] of dim %d, a variable size (hcq_jit_dim): with a variable dim a slice starts at "
                            "0 or later and stops at a fixed place or the end, or walks the whole dim backwards",
                            fn, (long long)start, (long long)stop, (long long)step, ax),
                   NULL;
        to_end = step < 0 || stop >= size;
    }
    if (start < 0) start = start < -size ? lo : start + size;
    if (stop < 0) stop = stop < -size ? lo : stop + size;
    start = start < lo ? lo : start > hi ? hi : start;
    stop = stop < lo ? lo : stop > hi ? hi : stop;
    int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                             : (start > stop ? (start - stop + (-step) - 1) / (-step) : 0);
    int64_t b[TT_MAX_DIMS], e[TT_MAX_DIMS], steps[TT_MAX_DIMS];
    for (int d = 0; d < n->ndim; d++) {
        b[d] = 0;
        e[d] = n->shape[d];
        steps[d] = 1;
    }
    int64_t first = count ? (step > 0 ? start : start + (count - 1) * step) : 0;
    b[ax] = first;
    e[ax] = count ? first + (count - 1) * (step > 0 ? step : -step) + 1 : 0;
    steps[ax] = step > 0 ? step : -step;
    /* to the end of a variable dim (x[1::2], x[::-2]): the rest of the
     * dim, stepped, whatever the value's remainder */
    if (to_end && count) {
        b[ax] = step > 0 ? start : 0;
        e[ax] = size;
    }
    if (tt_has_sym(n) && slice_in_range(a->ctx, n, b, e, fn)) return NULL;
    tt_node *s = tt_mv_shrink(n, b, e);
    tt_node *f = s && step < 0 ? tt_mv_flip(s, 1u << ax) : (tt_node_ref(s), s);
    tt_node *r = f ? tt_mv_step(f, steps) : NULL;
    tt_node_unref(s);
    tt_node_unref(f);
    return tt_wrap(a->ctx, r);
}

hcq_tensor *hcq_flip(hcq_tensor *a, const int *axes, int naxes)
{
    ARG(a, "hcq_flip");
    uint32_t m;
    if (tt_axes_mask(axes, naxes, n->ndim, &m, "hcq_flip")) return NULL;
    return tt_wrap(a->ctx, tt_mv_flip(n, m));
}

hcq_tensor *hcq_cat(hcq_tensor *const *ts, int count, int axis)
{
    const char *fn = "hcq_cat";
    if (count < 1 || !ts) return base_err(HCQ_EINVAL, "%s: %d tensors", fn, count), NULL;
    ARG(ts[0], fn);
    int ax = tt_axis(axis, n->ndim, fn);
    if (ax < 0) return NULL;
    hcq_ctx *ctx = ts[0]->ctx;
    int64_t total = 0;
    bool vcat = false; /* along a variable dim (hcq_jit_dim) */
    hcq_dtype dt = (hcq_dtype)n->dtype;
    for (int i = 0; i < count; i++) {
        tt_node *x = tt_arg(ts[i], fn);
        if (!x) return NULL;
        if (ts[i]->ctx != ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
        if (x->ndim != n->ndim) return base_err(HCQ_EINVAL, "%s: tensor %d has %d dims, tensor 0 has %d", fn, i, x->ndim, n->ndim), NULL;
        for (int d = 0; d < n->ndim; d++)
            if (d != ax && x->shape[d] != n->shape[d])
                return base_err(HCQ_EINVAL, "%s: tensor %d has size %lld in dim %d, tensor 0 has %lld", fn, i,
                                (long long)x->shape[d], d, (long long)n->shape[d]),
                       NULL;
        vcat = vcat || x->sym[ax];
        total += x->shape[ax];
        if (i) {
            tt_node tmp = {.dtype = (uint8_t)dt};
            dt = tt_promote(&tmp, x);
        }
    }
    int64_t shape[TT_MAX_DIMS];
    memcpy(shape, n->shape, sizeof shape);
    shape[ax] = total;
    if (tt_check_shape(shape, n->ndim, fn)) return NULL;
    if (vcat) { /* each part gathered at an offset of the value (symdim.c) */
        tt_node *c[64] = {0}, *r = NULL;
        if (count > 64) return base_err(HCQ_ENOTSUP, "%s: %d parts along a variable dim (hcq_jit_dim); at most 64", fn, count), NULL;
        bool ok = true;
        for (int i = 0; i < count; i++) ok = ok && (c[i] = tt_cast_node(ts[i]->n, dt));
        if (ok) r = tt_sym_cat(c, count, ax);
        for (int i = 0; i < count; i++) tt_node_unref(c[i]);
        return tt_wrap(ctx, r);
    }
    /* Each part padded to the whole, chosen by where its own box holds:
     * acc = where(box_i, part_i, acc). A select moves bits, so signalling
     * NaNs and payloads come through as they are (adding the parts, with
     * -0.0 as padding, would quiet them on some devices and not others). */
    tt_node *acc = NULL;
    int64_t off = 0;
    for (int i = 0; i < count; i++) {
        tt_node *x = ts[i]->n;
        int64_t before[TT_MAX_DIMS] = {0}, after[TT_MAX_DIMS] = {0};
        before[ax] = off;
        after[ax] = total - off - x->shape[ax];
        off += x->shape[ax];
        if (!x->shape[ax] && count > 1) continue;
        tt_node *c = tt_cast_node(x, dt), *p = c ? tt_mv_pad(c, before, after, (tt_val){.i = 0}) : NULL;
        tt_node_unref(c);
        if (!p || !acc) {
            if (!p) tt_node_unref(acc);
            acc = p;
            if (!acc) return NULL;
            continue;
        }
        tt_node *one = tt_const_node(ctx, HCQ_BOOL, (tt_val){.i = 1}, x->shape, x->ndim);
        tt_node *box = one ? tt_mv_pad(one, before, after, (tt_val){.i = 0}) : NULL;
        tt_node *s = box ? tt_alu(ctx, TT_WHERE, dt, box, p, acc) : NULL;
        tt_node_unref(one);
        tt_node_unref(box);
        tt_node_unref(acc);
        tt_node_unref(p);
        if (!(acc = s)) return NULL;
    }
    if (!acc && (acc = tt_const_node(ctx, dt, (tt_val){.i = 0}, shape, n->ndim))) /* empty: the parts' variable dims stay */
        for (int d = 0; d < n->ndim; d++) acc->sym[d] = d == ax ? 0 : n->sym[d];
    return tt_wrap(ctx, acc);
}

hcq_tensor *hcq_stack(hcq_tensor *const *ts, int count, int axis)
{
    const char *fn = "hcq_stack";
    if (count < 1 || !ts) return base_err(HCQ_EINVAL, "%s: %d tensors", fn, count), NULL;
    ARG(ts[0], fn);
    hcq_ctx *ctx = ts[0]->ctx;
    int ax = tt_axis(axis, n->ndim + 1, fn);
    if (ax < 0) return NULL;
    hcq_tensor *small[16], **u = count <= 16 ? small : base_calloc((size_t)count, sizeof *u);
    if (!u) return NULL;
    size_t m = hcq_ctx_mark(ctx);
    for (int i = 0; i < count; i++) u[i] = hcq_unsqueeze(ts[i], ax);
    hcq_tensor *r = NULL;
    bool ok = true;
    for (int i = 0; i < count; i++) ok = ok && u[i];
    if (ok) r = hcq_cat(u, count, ax);
    if (u != small) free(u);
    tt_node *rn = r ? r->n : NULL;
    tt_node_ref(rn);
    hcq_ctx_release(ctx, m);
    return tt_wrap(ctx, rn);
}

/* Tiles dim d of a (size s) reps times, whatever a's rank: the dims
 * before and after d merged, [P, s, Q] -> [P, 1, s, Q] -> [P, reps, s, Q]
 * -> [P, reps * s, Q], back to a's rank. At most four dims at a time. */
static tt_node *tile_dim(tt_node *a, int d, int64_t reps)
{
    int64_t P = 1, Q = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (i < d) P *= a->shape[i];
        if (i > d) Q *= a->shape[i];
    }
    int64_t s = a->shape[d], out[TT_MAX_DIMS];
    memcpy(out, a->shape, sizeof out);
    out[d] = s * reps;
    tt_node *r = tt_mv_reshape(a, (int64_t[]){P, 1, s, Q}, 4);
    tt_node *e = r ? tt_mv_expand(r, (int64_t[]){P, reps, s, Q}, 4) : NULL;
    tt_node *f = e ? tt_mv_reshape(e, out, a->ndim) : NULL;
    tt_node_unref(r);
    tt_node_unref(e);
    return f;
}

hcq_tensor *hcq_repeat(hcq_tensor *a, const int64_t *reps, int nreps)
{
    const char *fn = "hcq_repeat";
    ARG(a, fn);
    if (nreps < n->ndim || nreps > TT_MAX_DIMS || (nreps && !reps))
        return base_err(HCQ_EINVAL, "%s: %d repeats for a %d-d tensor (at most %d dims)", fn, nreps, n->ndim, TT_MAX_DIMS),
               NULL;
    int64_t s1[2 * TT_MAX_DIMS], s2[2 * TT_MAX_DIMS], in[TT_MAX_DIMS], out[TT_MAX_DIMS];
    int k = 0, pre = nreps - n->ndim;
    for (int d = 0; d < nreps; d++) {
        in[d] = d < pre ? 1 : n->shape[d - pre];
        if (reps[d] < 0) return base_err(HCQ_EINVAL, "%s: repeat %lld for dim %d", fn, (long long)reps[d], d), NULL;
        if (reps[d] != 1) {
            s1[k] = 1;
            s2[k++] = reps[d];
        }
        s1[k] = in[d];
        s2[k++] = in[d];
        out[d] = in[d] * reps[d];
    }
    if (tt_check_shape(out, nreps, fn)) return NULL;
    if (k <= TT_MAX_DIMS) { /* one view: each repeated dim interleaved with its copies */
        tt_node *r = tt_mv_reshape(n, s1, k);
        tt_node *e = r ? tt_mv_expand(r, s2, k) : NULL;
        tt_node *f = e ? tt_mv_reshape(e, out, nreps) : NULL;
        tt_node_unref(r);
        tt_node_unref(e);
        return tt_wrap(a->ctx, f);
    }
    /* more dims than a view has: one dim at a time (stacked views) */
    tt_node *t = tt_mv_reshape(n, in, nreps);
    for (int d = 0; d < nreps && t; d++) {
        if (reps[d] == 1) continue;
        tt_node *u = tile_dim(t, d, reps[d]);
        tt_node_unref(t);
        t = u;
    }
    return tt_wrap(a->ctx, t);
}

hcq_tensor *hcq_squeeze(hcq_tensor *a, int axis)
{
    const char *fn = "hcq_squeeze";
    ARG(a, fn);
    int64_t s[TT_MAX_DIMS];
    int k = 0, ax = -1;
    if (axis != HCQ_ALL_DIMS) {
        ax = tt_axis(axis, n->ndim, fn);
        if (ax < 0) return NULL;
        if (n->shape[ax] != 1)
            return base_err(HCQ_EINVAL, "%s: dim %d has size %lld, not 1", fn, axis, (long long)n->shape[ax]), NULL;
    }
    for (int d = 0; d < n->ndim; d++)
        if (!(n->shape[d] == 1 && (ax < 0 || ax == d))) s[k++] = n->shape[d];
    return tt_wrap(a->ctx, tt_mv_reshape(n, s, k));
}

hcq_tensor *hcq_unsqueeze(hcq_tensor *a, int axis)
{
    const char *fn = "hcq_unsqueeze";
    ARG(a, fn);
    if (n->ndim >= TT_MAX_DIMS) return base_err(HCQ_EINVAL, "%s: the tensor has %d dims already", fn, n->ndim), NULL;
    int ax = tt_axis(axis, n->ndim + 1, fn);
    if (ax < 0) return NULL;
    int64_t s[TT_MAX_DIMS];
    for (int d = 0, k = 0; d <= n->ndim; d++) s[d] = d == ax ? 1 : n->shape[k++];
    return tt_wrap(a->ctx, tt_mv_reshape(n, s, n->ndim + 1));
}

hcq_tensor *hcq_flatten(hcq_tensor *a, int start, int end)
{
    const char *fn = "hcq_flatten";
    ARG(a, fn);
    if (n->ndim == 0) return tt_wrap(a->ctx, tt_mv_reshape(n, (int64_t[]){1}, 1));
    int s0 = tt_axis(start, n->ndim, fn), e0 = s0 < 0 ? -1 : tt_axis(end, n->ndim, fn);
    if (e0 < 0) return NULL;
    if (e0 < s0) return base_err(HCQ_EINVAL, "%s: end axis %d comes before start axis %d", fn, end, start), NULL;
    int64_t s[TT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < n->ndim; d++) {
        if (d > s0 && d <= e0)
            s[k - 1] *= n->shape[d];
        else
            s[k++] = n->shape[d];
    }
    return tt_wrap(a->ctx, tt_mv_reshape(n, s, k));
}

hcq_tensor *hcq_contiguous(hcq_tensor *a)
{
    ARG(a, "hcq_contiguous");
    if (n->op == TT_BUF) return tt_wrap(a->ctx, (tt_node_ref(n), n));
    /* a node of its own, so `a` itself stays free to fuse elsewhere */
    tt_view v;
    tt_view_init(&v, n->shape, n->ndim);
    tt_node *c = tt_node_new(a->ctx, TT_VIEW, (hcq_dtype)n->dtype, n->shape, n->ndim);
    if (!c) return NULL;
    memcpy(c->sym, n->sym, sizeof c->sym);
    c->view = v;
    c->contig = true;
    tt_node_ref(n);
    c->src[0] = n;
    c->nsrc = 1;
    return tt_wrap(a->ctx, c);
}
