/* Sharded tensors (tensor.h, "sharded tensors"; issue 23 item 4): n
 * tensors, one per context, split along one axis or replicated. Every op
 * is built from the one-context ops of this layer, on each shard's own
 * context; data crosses devices only through hcq_tensor_to (a peer copy
 * ordered on the GPUs where the devices have a path, staged through host
 * memory where not). What combines across devices (a reduction over the
 * split axis, a matmul split on its contraction) folds the partials on
 * the first context's device in shard order, so results are deterministic
 * whatever the timing, then copies the result to every context. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

struct hcq_sharded {
    int n, axis; /* axis: HCQ_REPLICATED or a logical axis */
    int ndim;
    int64_t shape[TT_MAX_DIMS];
    hcq_ctx *ctx[HCQ_SHARD_MAX];
    hcq_tensor *t[HCQ_SHARD_MAX];
};

static int64_t lo_of(int64_t d, int n, int i) { return d * i / n; }

static hcq_sharded *sh_new(const hcq_sharded *like, int axis, const int64_t *shape, int ndim)
{
    hcq_sharded *s = base_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->n = like->n;
    s->axis = axis;
    s->ndim = ndim;
    memcpy(s->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(s->ctx, like->ctx, sizeof s->ctx);
    return s;
}

static void sh_drop(hcq_sharded *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++)
        if (s->t[i] && base_handle_live(s->t[i], BASE_H_TENSOR)) hcq_tensor_free(s->t[i]);
    free(s);
}

static hcq_sharded *sh_publish(hcq_sharded *s)
{
    base_handle_add(s, BASE_H_SHARDED);
    return s;
}

/* Contexts ctxs[0..n) capture alike: none of them, or all into one JIT's
 * graph (hcq_jit_create_multi over them all). A JIT over only some would
 * put part of a step into its graph and run the rest eagerly, out of
 * order with it. */
static hcq_status same_capture(hcq_ctx *const *ctxs, int n, const char *fn)
{
    for (int i = 1; i < n; i++)
        if (ctxs[i]->capture != ctxs[0]->capture)
            return base_err(HCQ_ENOTSUP, "%s: context %d (%s) is %s and context 0 (%s) is %s: a sharded step runs "
                            "inside a JIT only when the JIT was created over all its contexts "
                            "(hcq_jit_create_multi); else run it outside hcq_jit_run",
                            fn, i, ctxs[i]->props.id, ctxs[i]->capture ? "capturing a JIT" : "not capturing",
                            ctxs[0]->props.id, ctxs[0]->capture ? "capturing a JIT" : "not capturing");
    return HCQ_OK;
}

/* a live sharded tensor whose contexts are live and capture alike */
static hcq_status sh_check(const hcq_sharded *s, const char *fn)
{
    hcq_status st = base_handle_check(s, BASE_H_SHARDED, fn, "the sharded tensor");
    if (st) return st;
    for (int i = 0; i < s->n; i++)
        if (!tt_live_ctx(s->ctx[i]) || !base_handle_live(s->t[i], BASE_H_TENSOR))
            return base_err(HCQ_ESTATE, "%s: shard %d's context was destroyed (or its tensor freed)", fn, i);
    return same_capture(s->ctx, s->n, fn);
}

static hcq_status same_ctxs(const hcq_sharded *a, const hcq_sharded *b, const char *fn)
{
    if (a->n != b->n || memcmp(a->ctx, b->ctx, sizeof a->ctx))
        return base_err(HCQ_EINVAL, "%s: the operands live on different lists of contexts (%d and %d shards)", fn,
                        a->n, b->n);
    return HCQ_OK;
}

static hcq_sharded *shard_impl(hcq_tensor *t, hcq_ctx *const *ctxs, int n, int axis, const char *fn)
{
    if (!tt_arg(t, fn)) return NULL;
    if (n < 1 || n > HCQ_SHARD_MAX || !ctxs)
        return base_err(HCQ_EINVAL, "%s: %d contexts (1 to %d)", fn, n, HCQ_SHARD_MAX), NULL;
    hcq_ctx *src = hcq_tensor_ctx(t);
    for (int i = 0; i < n; i++) {
        if (!tt_live_ctx(ctxs[i])) return base_err(HCQ_ESTATE, "%s: context %d is not a live context", fn, i), NULL;
        for (int k = 0; k < i; k++)
            if (ctxs[k] == ctxs[i]) return base_err(HCQ_EINVAL, "%s: context %d is given twice", fn, i), NULL;
    }
    if (same_capture(ctxs, n, fn)) return NULL;
    if (src->capture != ctxs[0]->capture)
        return base_err(HCQ_ENOTSUP, "%s: the tensor's context (%s) and the shards' contexts capture differently "
                        "(a JIT over all of them captures a sharded step: hcq_jit_create_multi)", fn, src->props.id), NULL;
    hcq_sharded like = {.n = n};
    memcpy(like.ctx, ctxs, (size_t)n * sizeof *ctxs);
    int64_t shape[TT_MAX_DIMS];
    int nd = hcq_tensor_shape(t, shape);
    if (axis != HCQ_REPLICATED) {
        if (axis < 0) axis += nd;
        if (axis < 0 || axis >= nd)
            return base_err(HCQ_EINVAL, "%s: axis out of range for a %d-dim tensor", fn, nd), NULL;
        if (shape[axis] < n)
            return base_err(HCQ_EINVAL, "%s: dim %d has %lld elements, fewer than the %d shards", fn, axis,
                            (long long)shape[axis], n), NULL;
    }
    hcq_sharded *s = sh_new(&like, axis, shape, nd);
    if (!s) return NULL;
    for (int i = 0; i < n; i++) {
        hcq_tensor *piece = t;
        if (axis != HCQ_REPLICATED &&
            !(piece = hcq_slice(t, axis, lo_of(shape[axis], n, i), lo_of(shape[axis], n, i + 1), 1)))
            break;
        s->t[i] = hcq_tensor_to(ctxs[i], piece);
        if (piece != t) hcq_tensor_free(piece);
        if (!s->t[i]) break;
    }
    for (int i = 0; i < n; i++) {
        if (!s->t[i]) {
            hcq_status st = hcq_error_status();
            sh_drop(s);
            return base_err_prefix(st, "%s: shard %d", fn, i), NULL;
        }
    }
    return sh_publish(s);
}

hcq_sharded *hcq_shard(hcq_tensor *t, hcq_ctx *const *ctxs, int n, int axis)
{
    return shard_impl(t, ctxs, n, axis, "hcq_shard");
}

static hcq_tensor *gather_impl(hcq_sharded *s, hcq_ctx *dst, const char *fn)
{
    if (sh_check(s, fn)) return NULL;
    if (!tt_live_ctx(dst)) return base_err(HCQ_ESTATE, "%s: not a live context", fn), NULL;
    if (s->axis == HCQ_REPLICATED) return hcq_tensor_to(dst, s->t[0]);
    hcq_tensor *parts[HCQ_SHARD_MAX] = {0}, *out = NULL;
    int i = 0;
    for (; i < s->n; i++)
        if (!(parts[i] = hcq_tensor_to(dst, s->t[i]))) break;
    if (i == s->n) out = s->n == 1 ? parts[0] : hcq_cat(parts, s->n, s->axis);
    hcq_status st = out ? HCQ_OK : hcq_error_status();
    for (int k = 0; k < i; k++)
        if (parts[k] != out) hcq_tensor_free(parts[k]);
    if (!out) base_err_prefix(st, "%s", fn);
    return out;
}

hcq_tensor *hcq_sharded_gather(hcq_sharded *s, hcq_ctx *dst) { return gather_impl(s, dst, "hcq_sharded_gather"); }

hcq_sharded *hcq_reshard(hcq_sharded *s, int axis)
{
    const char *fn = "hcq_reshard";
    if (sh_check(s, fn)) return NULL;
    hcq_tensor *whole = gather_impl(s, s->ctx[0], fn);
    if (!whole) return NULL;
    hcq_sharded *r = shard_impl(whole, s->ctx, s->n, axis, fn);
    hcq_tensor_free(whole);
    return r;
}

hcq_status hcq_sharded_free(hcq_sharded *s)
{
    if (!s) return HCQ_OK;
    if (!base_handle_remove(s, BASE_H_SHARDED))
        return base_err(HCQ_ESTATE, "hcq_sharded_free: %p is not a live sharded tensor (freed twice?)", (void *)s);
    sh_drop(s);
    return HCQ_OK;
}

/* a new handle to t's value (the same node), in t's context */
static hcq_tensor *alias(hcq_tensor *t)
{
    tt_node_ref(t->n);
    hcq_tensor *a = tt_wrap(t->ctx, t->n);
    if (!a) tt_node_unref(t->n);
    return a;
}

hcq_sharded *hcq_sharded_wrap(hcq_tensor *const *pieces, int n, int axis)
{
    const char *fn = "hcq_sharded_wrap";
    if (n < 1 || n > HCQ_SHARD_MAX || !pieces)
        return base_err(HCQ_EINVAL, "%s: %d pieces (1 to %d)", fn, n, HCQ_SHARD_MAX), NULL;
    hcq_sharded like = {.n = n};
    int64_t sh0[TT_MAX_DIMS], shape[TT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < n; i++) {
        if (!tt_arg(pieces[i], fn)) return base_err_prefix(hcq_error_status(), "%s: piece %d", fn, i), NULL;
        like.ctx[i] = pieces[i]->ctx;
        for (int k = 0; k < i; k++)
            if (like.ctx[k] == like.ctx[i])
                return base_err(HCQ_EINVAL, "%s: pieces %d and %d are of one context", fn, k, i), NULL;
        int d = hcq_tensor_shape(pieces[i], i ? shape : sh0);
        if (!i) {
            nd = d;
            if (axis != HCQ_REPLICATED && axis < 0) axis += nd;
            if (axis != HCQ_REPLICATED && (axis < 0 || axis >= nd))
                return base_err(HCQ_EINVAL, "%s: axis out of range for %d-dim pieces", fn, nd), NULL;
            continue;
        }
        bool ok = d == nd && hcq_tensor_dtype(pieces[i]) == hcq_tensor_dtype(pieces[0]);
        for (int k = 0; ok && k < nd; k++) ok = k == axis || shape[k] == sh0[k];
        if (!ok)
            return base_err(HCQ_EINVAL, "%s: piece %d's dtype or shape differs from piece 0's (beyond the split axis)",
                            fn, i), NULL;
    }
    if (same_capture(like.ctx, n, fn)) return NULL;
    memcpy(shape, sh0, sizeof shape);
    if (axis != HCQ_REPLICATED) {
        int64_t total = 0;
        for (int i = 0; i < n; i++) total += pieces[i]->n->shape[axis];
        for (int i = 0; i < n; i++)
            if (pieces[i]->n->shape[axis] != lo_of(total, n, i + 1) - lo_of(total, n, i))
                return base_err(HCQ_EINVAL, "%s: piece %d has %lld of axis %d; a split of %lld over %d pieces gives it "
                                "%lld (hcq_shard's split)", fn, i, (long long)pieces[i]->n->shape[axis], axis,
                                (long long)total, n, (long long)(lo_of(total, n, i + 1) - lo_of(total, n, i))), NULL;
        shape[axis] = total;
    }
    hcq_sharded *s = sh_new(&like, axis, shape, nd);
    if (!s) return NULL;
    for (int i = 0; i < n; i++)
        if (!(s->t[i] = alias(pieces[i]))) {
            sh_drop(s);
            return NULL;
        }
    return sh_publish(s);
}

hcq_status hcq_sharded_unwrap(hcq_sharded *s, hcq_tensor **pieces)
{
    const char *fn = "hcq_sharded_unwrap";
    hcq_status st = base_handle_check(s, BASE_H_SHARDED, fn, "the sharded tensor");
    if (st) return st;
    if (!pieces) return base_err(HCQ_EINVAL, "%s: pieces is NULL", fn);
    for (int i = 0; i < s->n; i++)
        if (!base_handle_live(s->t[i], BASE_H_TENSOR))
            return base_err(HCQ_ESTATE, "%s: shard %d's context was destroyed (or its tensor freed)", fn, i);
    base_handle_remove(s, BASE_H_SHARDED);
    memcpy(pieces, s->t, (size_t)s->n * sizeof *pieces);
    free(s);
    return HCQ_OK;
}

int hcq_sharded_count(const hcq_sharded *s) { return base_handle_live(s, BASE_H_SHARDED) ? s->n : 0; }
int hcq_sharded_axis(const hcq_sharded *s) { return base_handle_live(s, BASE_H_SHARDED) ? s->axis : HCQ_REPLICATED; }

int hcq_sharded_shape(const hcq_sharded *s, int64_t *shape)
{
    if (base_handle_check(s, BASE_H_SHARDED, "hcq_sharded_shape", "the sharded tensor")) return 0;
    if (shape) memcpy(shape, s->shape, (size_t)s->ndim * sizeof *shape);
    return s->ndim;
}

hcq_tensor *hcq_sharded_piece(const hcq_sharded *s, int i)
{
    if (base_handle_check(s, BASE_H_SHARDED, "hcq_sharded_piece", "the sharded tensor")) return NULL;
    if (i < 0 || i >= s->n) return base_err(HCQ_EINVAL, "hcq_sharded_piece: shard %d of %d", i, s->n), NULL;
    return s->t[i];
}

hcq_status hcq_sharded_realize(hcq_sharded *s)
{
    hcq_status st = sh_check(s, "hcq_sharded_realize");
    for (int i = 0; !st && i < s->n; i++) st = hcq_realize(s->t[i]);
    return st;
}

/* shard i's result must be the shard's shape: the op was elementwise */
static hcq_status check_piece(const hcq_sharded *r, int i, const hcq_tensor *out, const char *fn)
{
    int64_t shape[TT_MAX_DIMS];
    int nd = hcq_tensor_shape(out, shape);
    bool ok = nd == r->ndim;
    for (int k = 0; ok && k < nd; k++) {
        int64_t want = r->shape[k];
        if (k == r->axis) want = lo_of(want, r->n, i + 1) - lo_of(want, r->n, i);
        ok = shape[k] == want;
    }
    if (!ok)
        return base_err(HCQ_ENOTSUP, "%s: the op changed shard %d's shape: only elementwise ops run per shard "
                        "(use hcq_sharded_reduce, hcq_sharded_matmul, or gather first)", fn, i);
    return HCQ_OK;
}

hcq_sharded *hcq_sharded_map1(hcq_sharded *a, hcq_tensor *(*fn)(hcq_tensor *))
{
    const char *name = "hcq_sharded_map1";
    if (sh_check(a, name)) return NULL;
    if (!fn) return base_err(HCQ_EINVAL, "%s: fn is NULL", name), NULL;
    hcq_sharded *r = sh_new(a, a->axis, a->shape, a->ndim);
    if (!r) return NULL;
    for (int i = 0; i < a->n; i++) {
        if (!(r->t[i] = fn(a->t[i])) || check_piece(r, i, r->t[i], name)) {
            hcq_status st = hcq_error_status();
            sh_drop(r);
            return base_err_prefix(st, "%s: shard %d", name, i), NULL;
        }
    }
    return sh_publish(r);
}

/* The piece of replicated operand `rep` that goes with shard i of `sp`
 * (split on axis ax), broadcasting right-aligned; *slice: a new tensor
 * the caller frees. HCQ_ENOTSUP where rep's matching dim is neither 1 nor
 * the whole axis. */
static hcq_status rep_piece(const hcq_sharded *sp, const hcq_sharded *rep, int i, hcq_tensor **out, bool *fresh,
                            const char *fn)
{
    int k = sp->axis - (sp->ndim - rep->ndim);
    *fresh = false;
    if (k < 0 || rep->shape[k] == 1) {
        *out = rep->t[i];
        return HCQ_OK;
    }
    if (rep->shape[k] != sp->shape[sp->axis])
        return base_err(HCQ_ENOTSUP, "%s: the replicated operand's dim %d (%lld) neither spans nor broadcasts over "
                        "the split axis (%lld)", fn, k, (long long)rep->shape[k], (long long)sp->shape[sp->axis]);
    *out = hcq_slice(rep->t[i], k, lo_of(sp->shape[sp->axis], sp->n, i), lo_of(sp->shape[sp->axis], sp->n, i + 1), 1);
    *fresh = true;
    return *out ? HCQ_OK : hcq_error_status();
}

static hcq_sharded *map2_impl(hcq_sharded *a, hcq_sharded *b, hcq_tensor *(*fn)(hcq_tensor *, hcq_tensor *),
                              const char *name);

hcq_sharded *hcq_sharded_map2(hcq_sharded *a, hcq_sharded *b, hcq_tensor *(*fn)(hcq_tensor *, hcq_tensor *))
{
    const char *name = "hcq_sharded_map2";
    if (sh_check(a, name) || sh_check(b, name) || same_ctxs(a, b, name)) return NULL;
    if (!fn) return base_err(HCQ_EINVAL, "%s: fn is NULL", name), NULL;
    hcq_sharded *moved = NULL; /* b resharded on a's axis */
    if (a->axis != HCQ_REPLICATED && b->axis != HCQ_REPLICATED) {
        if (a->ndim != b->ndim || memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape))
            return base_err(HCQ_ENOTSUP, "%s: both operands are split and their shapes differ (a broadcast between "
                            "split operands): replicate one (hcq_reshard with HCQ_REPLICATED)", name), NULL;
        /* split on different axes: b is resharded on a's (through the first
         * device, as hcq_reshard does: exact, so the result is too) */
        if (a->axis != b->axis && !(b = moved = hcq_reshard(b, a->axis)))
            return base_err_prefix(hcq_error_status(), "%s: resharding b on a's axis %d", name, a->axis), NULL;
    }
    hcq_sharded *r = map2_impl(a, b, fn, name);
    if (moved) hcq_sharded_free(moved);
    return r;
}

static hcq_sharded *map2_impl(hcq_sharded *a, hcq_sharded *b, hcq_tensor *(*fn)(hcq_tensor *, hcq_tensor *),
                              const char *name)
{
    const hcq_sharded *sp = a->axis != HCQ_REPLICATED ? a : b; /* the split one, if any */
    /* the result's shape: the op on shard 0, checked on every shard */
    hcq_sharded *r = NULL;
    for (int i = 0; i < a->n; i++) {
        hcq_tensor *x = a->t[i], *y = b->t[i];
        bool fx = false, fy = false;
        hcq_status st = HCQ_OK;
        if (a->axis == HCQ_REPLICATED && b->axis != HCQ_REPLICATED) st = rep_piece(b, a, i, &x, &fx, name);
        if (b->axis == HCQ_REPLICATED && a->axis != HCQ_REPLICATED) st = rep_piece(a, b, i, &y, &fy, name);
        hcq_tensor *o = st ? NULL : fn(x, y);
        if (fx) hcq_tensor_free(x);
        if (fy) hcq_tensor_free(y);
        if (o && !r) {
            /* the logical shape: the piece's, with the split axis whole */
            int64_t shape[TT_MAX_DIMS];
            int nd = hcq_tensor_shape(o, shape);
            int ax = sp->axis == HCQ_REPLICATED ? HCQ_REPLICATED : sp->axis + (nd - sp->ndim);
            if (ax != HCQ_REPLICATED) shape[ax] = sp->shape[sp->axis];
            if (!(r = sh_new(a, ax, shape, nd))) {
                hcq_tensor_free(o);
                return NULL;
            }
            if (ax != HCQ_REPLICATED && ax != sp->axis)
                st = base_err(HCQ_ENOTSUP, "%s: the replicated operand has more dims than the split one", name);
        }
        if (r) r->t[i] = o;
        if (!st && (!o || check_piece(r, i, o, name))) st = hcq_error_status();
        if (st) {
            if (!r && o) hcq_tensor_free(o);
            sh_drop(r);
            return base_err_prefix(st, "%s: shard %d", name, i), NULL;
        }
    }
    return sh_publish(r);
}

/* Folds parts[0..n) (one per context, same shape) on ctx[0] in order,
 * then copies the result to every context: a replicated result. */
static hcq_sharded *fold_replicate(const hcq_sharded *like, hcq_tensor **parts, hcq_reduce_op op, double divisor,
                                   const char *fn)
{
    int n = like->n;
    hcq_ctx *c0 = like->ctx[0];
    hcq_tensor *acc = parts[0];
    hcq_status st = HCQ_OK;
    for (int i = 1; i < n && !st; i++) {
        hcq_tensor *p = hcq_tensor_to(c0, parts[i]);
        hcq_tensor *next = p ? (op == HCQ_REDUCE_MAX ? hcq_maximum(acc, p) : hcq_add(acc, p)) : NULL;
        if (p) hcq_tensor_free(p);
        if (acc != parts[0]) hcq_tensor_free(acc);
        acc = next;
        if (!acc) st = hcq_error_status();
    }
    if (!st && op == HCQ_REDUCE_MEAN) {
        hcq_tensor *m = hcq_div_s(acc, divisor);
        if (acc != parts[0]) hcq_tensor_free(acc);
        if (!(acc = m)) st = hcq_error_status();
    }
    hcq_sharded *r = NULL;
    if (!st) {
        int64_t shape[TT_MAX_DIMS];
        int nd = hcq_tensor_shape(acc, shape);
        if (!(r = sh_new(like, HCQ_REPLICATED, shape, nd))) st = HCQ_ENOMEM;
    }
    /* the fold runs once, on ctx[0]; the others get its bytes */
    if (!st && (st = hcq_realize(acc)) == HCQ_OK) {
        r->t[0] = acc == parts[0] ? hcq_contiguous(acc) : acc;
        acc = NULL;
        for (int i = 0; i < n && !st; i++)
            if ((i && !(r->t[i] = hcq_tensor_to(like->ctx[i], r->t[0]))) || !r->t[i]) st = hcq_error_status();
    }
    if (acc && acc != parts[0]) hcq_tensor_free(acc);
    for (int i = 0; i < n; i++) hcq_tensor_free(parts[i]);
    if (st) {
        sh_drop(r);
        return base_err_prefix(st, "%s: folding the shards' partial results", fn), NULL;
    }
    return sh_publish(r);
}

hcq_sharded *hcq_sharded_reduce(hcq_sharded *a, hcq_reduce_op op, const int *axes, int naxes, bool keepdim)
{
    const char *fn = "hcq_sharded_reduce";
    if (sh_check(a, fn)) return NULL;
    if (op != HCQ_REDUCE_SUM && op != HCQ_REDUCE_MAX && op != HCQ_REDUCE_MEAN)
        return base_err(HCQ_EINVAL, "%s: op %d is not sum, max or mean", fn, (int)op), NULL;
    if (naxes < 0 || naxes > a->ndim || (naxes && !axes))
        return base_err(HCQ_EINVAL, "%s: %d axes of a %d-dim tensor", fn, naxes, a->ndim), NULL;
    /* naxes 0 reduces every axis, as hcq_sum does */
    bool red[TT_MAX_DIMS] = {0};
    for (int k = 0; k < naxes; k++) {
        int ax = axes[k] < 0 ? axes[k] + a->ndim : axes[k];
        if (ax < 0 || ax >= a->ndim) return base_err(HCQ_EINVAL, "%s: axis %d out of range", fn, axes[k]), NULL;
        red[ax] = true;
    }
    if (!naxes)
        for (int k = 0; k < a->ndim; k++) red[k] = true;
    bool across = a->axis != HCQ_REPLICATED && red[a->axis];
    hcq_dtype dt = hcq_tensor_dtype(a->t[0]);
    if (across && op == HCQ_REDUCE_MEAN && !hcq_dtype_is_float(dt))
        return base_err(HCQ_ENOTSUP, "%s: the mean of %s over the split axis (cast to a float first)", fn,
                        hcq_dtype_name(dt)), NULL;
    hcq_tensor *parts[HCQ_SHARD_MAX] = {0};
    for (int i = 0; i < a->n; i++) {
        hcq_reduce_op pop = across && op == HCQ_REDUCE_MEAN ? HCQ_REDUCE_SUM : op;
        parts[i] = pop == HCQ_REDUCE_SUM ? hcq_sum(a->t[i], axes, naxes, keepdim)
                   : pop == HCQ_REDUCE_MAX ? hcq_max(a->t[i], axes, naxes, keepdim)
                                           : hcq_mean(a->t[i], axes, naxes, keepdim);
        if (!parts[i]) {
            hcq_status st = hcq_error_status();
            for (int k = 0; k < i; k++) hcq_tensor_free(parts[k]);
            return base_err_prefix(st, "%s: shard %d", fn, i), NULL;
        }
    }
    if (across) {
        double count = 1;
        for (int k = 0; k < a->ndim; k++)
            if (red[k]) count *= (double)a->shape[k];
        return fold_replicate(a, parts, op, count, fn);
    }
    int64_t shape[TT_MAX_DIMS];
    int nd = 0, ax = a->axis;
    for (int k = 0; k < a->ndim; k++) {
        if (!red[k]) shape[nd++] = a->shape[k];
        else if (keepdim) shape[nd++] = 1;
        else if (a->axis != HCQ_REPLICATED && k < a->axis) ax--;
    }
    hcq_sharded *r = sh_new(a, ax, shape, nd);
    if (!r) {
        for (int i = 0; i < a->n; i++) hcq_tensor_free(parts[i]);
        return NULL;
    }
    memcpy(r->t, parts, sizeof parts);
    return sh_publish(r);
}

/* The piece of replicated operand `rep` (nd dims) that goes with shard i
 * of a matmul whose output (ndo dims) is split on batch axis oax (sizes
 * right-aligned, the last two dims the matrix's): its matching batch dim
 * sliced where it has the axis in full, whole where it broadcasts. */
static hcq_status mm_rep_piece(const hcq_sharded *rep, int oax, int ndo, int64_t full, int n, int i, hcq_tensor **out,
                               bool *fresh)
{
    int k = oax - (ndo - rep->ndim);
    *fresh = false;
    *out = rep->t[i];
    if (k < 0 || rep->shape[k] == 1) return HCQ_OK;
    if (rep->shape[k] != full)
        return base_err(HCQ_EINVAL, "hcq_sharded_matmul: batch dims %lld and %lld do not broadcast",
                        (long long)rep->shape[k], (long long)full);
    *fresh = true;
    *out = hcq_slice(rep->t[i], k, lo_of(full, n, i), lo_of(full, n, i + 1), 1);
    return *out ? HCQ_OK : hcq_error_status();
}

hcq_sharded *hcq_sharded_matmul(hcq_sharded *a, hcq_sharded *b)
{
    const char *fn = "hcq_sharded_matmul";
    if (sh_check(a, fn) || sh_check(b, fn) || same_ctxs(a, b, fn)) return NULL;
    if (a->ndim < 2 || b->ndim < 2)
        return base_err(HCQ_ENOTSUP, "%s: %d-dim x %d-dim: a split vector (1-dim operand) is not supported; reshape "
                        "it to a matrix", fn, a->ndim, b->ndim), NULL;
    int na = a->ndim, nb = b->ndim, ndo = na > nb ? na : nb;
    if (a->shape[na - 1] != b->shape[nb - 2])
        return base_err(HCQ_EINVAL, "%s: a's last dim %lld is not b's next-to-last %lld", fn,
                        (long long)a->shape[na - 1], (long long)b->shape[nb - 2]), NULL;
    enum { R = HCQ_REPLICATED };
    int sa = a->axis, sb = b->axis;
    /* each split axis as an axis of the output (-1: the contraction) */
    int oa = sa == R ? R : sa == na - 1 ? -1 : sa + (ndo - na);
    int ob = sb == R ? R : sb == nb - 2 ? -1 : sb + (ndo - nb);
    bool batch_a = sa != R && sa < na - 2, batch_b = sb != R && sb < nb - 2;
    int out_axis = R;
    bool contraction = false;
    if (oa == -1 && (ob == -1 || ob == R)) contraction = true;  /* a on K, b on K or replicated */
    else if (oa == R && ob == -1) contraction = true;           /* a replicated, b on K */
    else if (oa == R || ob == R) out_axis = oa == R ? ob : oa; /* one split on a batch, M or N axis */
    else if (batch_a && batch_b && oa == ob && a->shape[sa] == b->shape[sb]) out_axis = oa; /* the same batch axis */
    if (!contraction && out_axis == R && (sa != R || sb != R))
        return base_err(HCQ_ENOTSUP, "%s: a split on axis %d with b split on axis %d is not supported (one operand "
                        "split on a batch, row or column axis and the other replicated, both split alike on a batch "
                        "axis, or both on the contraction): reshard one operand", fn, sa, sb), NULL;
    /* the split axis's size, where one side is split on a batch axis and
     * the other replicated: that side is sliced to match */
    bool slice_rep = out_axis != R && ((batch_a && sb == R) || (batch_b && sa == R));
    int64_t full = slice_rep ? (sa != R ? a->shape[sa] : b->shape[sb]) : 0;
    hcq_tensor *parts[HCQ_SHARD_MAX] = {0};
    hcq_status st = HCQ_OK;
    int64_t k_total = a->shape[na - 1];
    for (int i = 0; i < a->n && !st; i++) {
        hcq_tensor *x = a->t[i], *y = b->t[i];
        bool fx = false, fy = false;
        int64_t lo = lo_of(k_total, a->n, i), hi = lo_of(k_total, a->n, i + 1);
        if (contraction && sa == R && (fx = true) && !(x = hcq_slice(a->t[i], na - 1, lo, hi, 1))) st = hcq_error_status();
        if (contraction && sb == R && (fy = true) && !(y = hcq_slice(b->t[i], nb - 2, lo, hi, 1))) st = hcq_error_status();
        if (!st && slice_rep && sa == R) st = mm_rep_piece(a, out_axis, ndo, full, a->n, i, &x, &fx);
        if (!st && slice_rep && sb == R) st = mm_rep_piece(b, out_axis, ndo, full, a->n, i, &y, &fy);
        if (!st && !(parts[i] = hcq_matmul(x, y))) st = hcq_error_status();
        if (fx && x) hcq_tensor_free(x);
        if (fy && y) hcq_tensor_free(y);
    }
    if (st) {
        for (int i = 0; i < a->n; i++)
            if (parts[i]) hcq_tensor_free(parts[i]);
        return base_err_prefix(st, "%s", fn), NULL;
    }
    if (contraction) return fold_replicate(a, parts, HCQ_REDUCE_SUM, 1, fn);
    /* the logical shape: shard 0's, the split axis whole */
    int64_t shape[TT_MAX_DIMS];
    int nd = hcq_tensor_shape(parts[0], shape);
    if (out_axis != R) shape[out_axis] = sa != R ? a->shape[sa] : b->shape[sb];
    hcq_sharded *r = sh_new(a, out_axis, shape, nd);
    if (!r) {
        for (int i = 0; i < a->n; i++) hcq_tensor_free(parts[i]);
        return NULL;
    }
    memcpy(r->t, parts, sizeof parts);
    return sh_publish(r);
}

/* ** all-reduce of tensors, eager or captured */

bool hcq_ctx_capturing(const hcq_ctx *ctx) { return tt_live_ctx(ctx) && ctx->capture; }

hcq_status hcq_tensors_allreduce(hcq_tensor *const *ts, int n, hcq_reduce_op op)
{
    const char *fn = "hcq_tensors_allreduce";
    if (n < 1 || n > HCQ_SHARD_MAX || !ts) return base_err(HCQ_EINVAL, "%s: %d tensors (1 to %d)", fn, n, HCQ_SHARD_MAX);
    hcq_ctx *ctxs[HCQ_SHARD_MAX];
    tt_buf *bufs[HCQ_SHARD_MAX];
    hcq_dtype dt = HCQ_VOID;
    int64_t numel = 0;
    for (int i = 0; i < n; i++) {
        tt_node *nd = tt_arg(ts[i], fn);
        if (!nd) return base_err_prefix(hcq_error_status() ? hcq_error_status() : HCQ_EINVAL, "%s: tensor %d", fn, i);
        if (nd->op != TT_BUF)
            return base_err(HCQ_EINVAL, "%s: tensor %d is %s, not a buffer of its own (make one with hcq_empty and "
                            "hcq_assign)", fn, i, nd->op == TT_VIEW ? "a view" : "a lazy result");
        ctxs[i] = ts[i]->ctx;
        bufs[i] = nd->buf;
        if (!i) dt = (hcq_dtype)nd->dtype, numel = tt_numel(nd->shape, nd->ndim);
        else if (nd->dtype != dt || tt_numel(nd->shape, nd->ndim) != numel)
            return base_err(HCQ_EINVAL, "%s: tensor %d's dtype or size differs from tensor 0's", fn, i);
        for (int k = 0; k < i; k++)
            if (ctxs[k] == ctxs[i]) return base_err(HCQ_EINVAL, "%s: tensors %d and %d are of one context", fn, k, i);
    }
    hcq_status st = same_capture(ctxs, n, fn);
    if (st || n == 1 || !numel) return st;
    if (ctxs[0]->capture) st = tt_capture_allreduce(ctxs[0]->capture, bufs, n, dt, op);
    else {
        hcq_buffer *hb[HCQ_SHARD_MAX];
        for (int i = 0; i < n; i++) {
            tt_buf_written(bufs[i]);
            hb[i] = bufs[i]->hb;
        }
        st = hcq_allreduce(hb, (uint32_t)n, dt, op);
    }
    if (st) base_err_prefix(st, "%s", fn);
    return st;
}
