/* hcq_assign: computing values straight into existing buffers, so a
 * training step updates its parameters and optimizer state in place (and
 * a JIT replaying it writes the same buffers every time).
 *
 * Each destination gets a copy node (an identity view, materialized) whose
 * kernel stores into the destination's buffer instead of a new one; the
 * value's elementwise work fuses into that kernel as into any other. The
 * kernels run in node creation order, so every kernel the values need
 * (backward reductions, ...) runs before the first store. What remains to
 * rule out is a store under a read in the same pass:
 *   - a kernel reading its own destination, or that of another copy it
 *     stores with (group.c puts a parameter's and its moments' copies in
 *     one kernel), anywhere but at the element it stores (through a view,
 *     inside a reduction, as a gather table);
 *   - a kernel reading a buffer that an earlier kernel of the same call has
 *     already overwritten.
 * Within one kernel every value is loaded before any store, so reading a
 * destination at the stored element sees the old value, as here defined.
 * Both are found by walking each copy kernel's fused graph after
 * scheduling; such a value is computed into a buffer of its own first and
 * then copied. */
#include "tensor/grad.h"

#include <stdlib.h>
#include <string.h>

/* a small set of visited (node, flag) pairs */
typedef struct vset {
    uintptr_t *k;
    uint32_t cap, n;
    bool oom;
} vset;

static bool vset_add(vset *s, const tt_node *n, bool flag)
{
    uintptr_t key = (uintptr_t)n | (uintptr_t)flag;
    if ((s->n + 1) * 2 > s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 64;
        uintptr_t *nk = base_calloc(nc, sizeof *nk);
        if (!nk) {
            s->oom = true;
            return false;
        }
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->k[i])
                for (uint32_t h = (uint32_t)(s->k[i] >> 3) & (nc - 1);; h = (h + 1) & (nc - 1))
                    if (!nk[h]) {
                        nk[h] = s->k[i];
                        break;
                    }
        free(s->k);
        s->k = nk;
        s->cap = nc;
    }
    for (uint32_t h = (uint32_t)(key >> 3) & (s->cap - 1);; h = (h + 1) & (s->cap - 1)) {
        if (s->k[h] == key) return false;
        if (!s->k[h]) {
            s->k[h] = key;
            s->n++;
            return true;
        }
    }
}

typedef struct hz {
    hcq_ctx *ctx;
    tt_node *const *copies; /* the copy nodes, in run order */
    tt_buf *const *dst;
    int n, self;
    vset seen;
    bool hazard;
} hz;

static bool materialized(const hcq_ctx *ctx, const tt_node *x) { return x->epoch == ctx->epoch && x->mat; }

/* the kernel that stores copy j, in run order (one kernel may store
 * several: group.c) */
static uint32_t kernel_of(const hz *H, int j)
{
    const tt_node *c = H->copies[j];
    return materialized(H->ctx, c) ? c->gidx : UINT32_MAX;
}

/* x is read by copy `self`'s kernel; `same` when at the element it stores */
static void walk(hz *H, const tt_node *x, bool same, int depth)
{
    if (H->hazard || H->seen.oom || !vset_add(&H->seen, x, same)) return;
    if (depth > 4096) { /* deeper than any fused kernel: be safe */
        H->hazard = true;
        return;
    }
    if (x->op == TT_BUF) {
        uint32_t me = kernel_of(H, H->self);
        for (int j = 0; j < H->n; j++)
            if (x->buf == H->dst[j] && (kernel_of(H, j) == me ? !same : kernel_of(H, j) < me)) H->hazard = true;
        return;
    }
    if (materialized(H->ctx, x)) return; /* a kernel of its own, run before every copy */
    bool keeps = x->op != TT_VIEW && x->op != TT_REDUCE && x->op != TT_GATHER;
    if (x->op == TT_VIEW && tt_view_is_identity(&x->view, x->src[0]->shape, x->src[0]->ndim)) keeps = true;
    for (int i = 0; i < x->nsrc; i++) walk(H, x->src[i], same && keeps, depth + 1);
}

/* an identity view of v materialized on its own (into `into` if given) */
tt_node *tt_copy_node(tt_node *v, tt_buf *into)
{
    tt_node *c = tt_node_new(NULL, TT_VIEW, (hcq_dtype)v->dtype, v->shape, v->ndim);
    if (!c) return NULL;
    memcpy(c->sym, v->sym, sizeof c->sym);
    tt_view_init(&c->view, v->shape, v->ndim);
    c->contig = true;
    c->ad_state = TT_AD_NONE;
    tt_node_ref(v);
    c->src[0] = v;
    c->nsrc = 1;
    if (into) {
        tt_buf_ref(into);
        c->assign = into;
    }
    return c;
}

static void unref_all(tt_node **a, int n)
{
    for (int i = 0; i < n; i++) {
        tt_node_unref(a[i]);
        a[i] = NULL;
    }
}

/* value as dst's shape and dtype (new reference) */
static tt_node *as_dst(const tt_node *d, tt_node *v, const char *fn, int i)
{
    int pre = d->ndim - v->ndim;
    bool ok = pre >= 0;
    for (int k = 0; ok && k < v->ndim; k++) ok = v->shape[k] == 1 || v->shape[k] == d->shape[k + pre];
    if (!ok) return base_err(HCQ_EINVAL, "%s: value %d's shape does not broadcast to its destination's", fn, i), NULL;
    tt_node *c = tt_cast_node(v, (hcq_dtype)d->dtype);
    tt_node *b = c ? tt_broadcast_to(c, d->shape, d->ndim) : NULL;
    tt_node_unref(c);
    return b;
}

static hcq_status check_dst(hcq_tensor *t, int i, const char *fn)
{
    tt_node *d = t->n;
    tt_ad_resolve(d);
    if (d->ad_state == TT_AD_REC && d->ad->nsrc)
        return base_err(HCQ_EINVAL,
                        "%s: destination %d was computed from tensors that require gradients; overwriting it would "
                        "change what their gradients read",
                        fn, i);
    if (d->op == TT_BUF) return HCQ_OK;
    /* storage of its own first (a lazy tensor or a view) */
    hcq_status s = tt_realize_nodes(t->ctx, &d, 1);
    if (!s && d->op != TT_BUF) s = tt_realize_contiguous(t->ctx, d);
    return s;
}

hcq_status hcq_assign_all(hcq_tensor *const *dst, hcq_tensor *const *values, int n)
{
    const char *fn = "hcq_assign";
    if (n < 0 || (n && (!dst || !values))) return base_err(HCQ_EINVAL, "%s: %d tensors", fn, n);
    if (!n) return HCQ_OK;
    for (int i = 0; i < n; i++) {
        if ((dst[i] && !tt_arg(dst[i], fn)) || !tt_arg(values[i], fn)) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
        if ((dst[i] && dst[i]->ctx != values[0]->ctx) || values[i]->ctx != values[0]->ctx)
            return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn);
    }
    hcq_ctx *ctx = values[0]->ctx;
    tt_node **v = base_calloc((size_t)n * 3, sizeof *v);
    tt_buf **bufs = base_calloc((size_t)n, sizeof *bufs);
    if (!v || !bufs) {
        free(v);
        free(bufs);
        return HCQ_ENOMEM;
    }
    tt_node **sep = v + n, **cp = v + 2 * n; /* values computed apart; the copies */
    bool prev = hcq_set_grad_enabled(false);
    hcq_status s = HCQ_OK;
    for (int i = 0; i < n && !s; i++) {
        if (!dst[i]) { /* realized in the same pass, before anything is overwritten */
            tt_node_ref(values[i]->n);
            v[i] = values[i]->n;
            continue;
        }
        s = check_dst(dst[i], i, fn);
        if (s) break;
        bufs[i] = dst[i]->n->buf;
        for (int j = 0; j < i && !s; j++)
            if (bufs[j] == bufs[i] && bufs[i]->hb)
                s = base_err(HCQ_EINVAL, "%s: destinations %d and %d share storage", fn, j, i);
        if (!s && !(v[i] = as_dst(dst[i]->n, values[i]->n, fn, i))) s = hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
        if (v[i]) tt_ad_resolve(v[i]);
    }
    /* at most n rounds: each that finds a hazard computes one more value apart */
    for (int round = 0; round <= n && !s; round++) {
        for (int i = 0; i < n && !s; i++)
            if (!dst[i]) cp[i] = (tt_node_ref(v[i]), v[i]);
            else if (!(cp[i] = tt_copy_node(sep[i] ? sep[i] : v[i], bufs[i]))) s = HCQ_ENOMEM;
        if (s) break;
        tt_sched sc;
        ctx->sched_quiet = true; /* the realize below says what it runs */
        s = tt_schedule(ctx, cp, (uint32_t)n, &sc);
        ctx->sched_quiet = false;
        if (s) break;
        bool any = false;
        for (int i = 0; i < n; i++) {
            if (!dst[i] || sep[i] || !materialized(ctx, cp[i])) continue;
            hz H = {.ctx = ctx, .copies = cp, .dst = bufs, .n = n, .self = i};
            walk(&H, cp[i]->src[0], true, 0);
            free(H.seen.k);
            if (H.hazard || H.seen.oom) {
                any = true;
                if (!(sep[i] = tt_copy_node(v[i], NULL))) s = HCQ_ENOMEM;
            }
        }
        tt_sched_free(&sc);
        if (!any || s) break;
        unref_all(cp, n); /* made again after the new nodes, so they still run last */
    }
    if (!s) s = tt_realize_nodes(ctx, cp, (uint32_t)n);
    hcq_set_grad_enabled(prev);
    unref_all(v, 3 * n);
    free(v);
    free(bufs);
    return s;
}

hcq_status hcq_assign(hcq_tensor *dst, hcq_tensor *value) { return hcq_assign_all(&dst, &value, 1); }
