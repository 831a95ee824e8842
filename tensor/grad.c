/* Autodiff over the lazy graph: which nodes need gradients, the records
 * of how they were made, and the backward pass.
 *
 * A node's state is decided once: for a view, by the movement op that
 * makes it (tt_ad_move, which knows the movement and its argument before
 * views compose and forget it); for everything else when it is first
 * wrapped in a handle (tt_ad_resolve, while its sources are still
 * attached). A node that depends differentiably on a tensor that requires
 * gradients gets a record (grad.h) holding its op and its own references to
 * its sources, so realizing it (which drops n->src) loses nothing.
 *
 * hcq_backward walks the records from the output, newest node first (node
 * ids are creation order, so every consumer comes before its sources),
 * builds each source's contribution as lazy nodes (grad_rules.c) and sums
 * them; leaves (hcq_requires_grad) add what reaches them to their
 * gradient. Nothing runs: the gradients are lazy tensors over the forward
 * graph, which fuse and schedule with it. */
#include "tensor/grad.h"

#include <stdlib.h>
#include <string.h>

/* hcq_set_grad_enabled is per thread, like torch.no_grad */
static _Thread_local bool grad_off;

bool tt_ad_enabled(void) { return !grad_off; }

bool hcq_set_grad_enabled(bool on)
{
    bool prev = !grad_off;
    grad_off = !on;
    return prev;
}

bool hcq_grad_enabled(void) { return !grad_off; }

/* ** records */
static tt_ad *ad_new(tt_node *n)
{
    tt_ad *a = base_calloc(1, sizeof *a);
    if (!a) return NULL;
    a->op = n->op;
    n->ad = a;
    n->ad_state = TT_AD_REC;
    return a;
}

int tt_ad_release(tt_node *n, tt_node **refs)
{
    tt_ad *a = n->ad;
    int k = 0;
    if (!a) return 0;
    for (int i = 0; i < a->nsrc; i++) refs[k++] = a->src[i];
    if (a->grad) refs[k++] = a->grad;
    free(a);
    n->ad = NULL;
    return k;
}

static bool is_float(const tt_node *n) { return hcq_dtype_is_float((hcq_dtype)n->dtype); }

/* Ops with a gradient (for float results). Views are recorded by their
 * movement op; a view decided here is an identity copy (hcq_contiguous,
 * the JIT's output copies). */
static bool differentiable(const tt_node *x)
{
    if (!is_float(x)) return false;
    switch ((tt_op)x->op) {
    case TT_NEG:
    case TT_EXP2:
    case TT_LOG2:
    case TT_SIN:
    case TT_SQRT:
    case TT_RECIP:
    case TT_TRUNC:
    case TT_CAST:
    case TT_ADD:
    case TT_SUB:
    case TT_MUL:
    case TT_FDIV:
    case TT_MAX:
    case TT_WHERE:
    case TT_REDUCE:
    case TT_GATHER: return true;
    case TT_VIEW: return tt_view_is_identity(&x->view, x->src[0]->shape, x->src[0]->ndim);
    default: return false;
    }
}

static void decide(tt_node *x)
{
    bool rec = false;
    uint8_t block = 0;
    if (tt_ad_enabled())
        for (int i = 0; i < x->nsrc; i++) {
            if (x->src[i]->ad_state == TT_AD_REC) rec = true;
            else if (x->src[i]->ad_state == TT_AD_BLOCKED && !block) block = x->src[i]->ad_block;
        }
    if (rec && differentiable(x)) {
        tt_ad *a = ad_new(x);
        if (!a) { /* out of memory: the gradient cannot pass here; say so if asked */
            x->ad_state = TT_AD_BLOCKED;
            x->ad_block = TT_OP_COUNT;
            return;
        }
        a->rop = x->rop;
        a->axes = x->axes;
        a->nsrc = x->nsrc;
        if (x->op == TT_VIEW) a->mv = x->contig ? TT_AD_MV_CONTIG : TT_AD_MV_COPY;
        for (int i = 0; i < x->nsrc; i++) {
            tt_node_ref(x->src[i]);
            a->src[i] = x->src[i];
        }
        return;
    }
    if (rec) {
        x->ad_state = TT_AD_BLOCKED;
        x->ad_block = x->op == TT_VIEW ? TT_OP_COUNT : x->op;
        if (x->op == TT_REDUCE || x->op == TT_GATHER || x->op == TT_CAST) x->ad_block = x->op; /* with a non-float result */
        return;
    }
    x->ad_state = block ? TT_AD_BLOCKED : TT_AD_NONE;
    x->ad_block = block;
}

void tt_ad_resolve(tt_node *n)
{
    if (n->ad_state) return;
    /* iterative post-order over the undecided nodes (a long chain of
     * fresh nodes, e.g. hcq_cat of many tensors, must not exhaust the stack) */
    tt_node *small[64], **st = small;
    size_t top = 0, cap = 64;
    st[top++] = n;
    while (top) {
        tt_node *x = st[top - 1];
        if (x->ad_state) {
            top--;
            continue;
        }
        tt_node *next = NULL;
        for (int i = 0; i < x->nsrc && !next; i++)
            if (!x->src[i]->ad_state) next = x->src[i];
        if (!next) {
            decide(x);
            top--;
            continue;
        }
        if (top == cap) {
            tt_node **ns = malloc(cap * 2 * sizeof *ns);
            if (!ns) { /* out of memory: decide from what is known (unknown sources count as none) */
                decide(x);
                top--;
                continue;
            }
            memcpy(ns, st, top * sizeof *ns);
            if (st != small) free(st);
            st = ns;
            cap *= 2;
        }
        st[top++] = next;
    }
    if (st != small) free(st);
}

void tt_ad_move(tt_node *r, tt_node *a, tt_mv_kind kind, const tt_mv_args *x)
{
    /* the movement may return a node that already exists (an identity, or
     * the source of a view it undoes): that node keeps its own state */
    bool fresh = r != a && !(a->op == TT_VIEW && a->nsrc && r == a->src[0]);
    if (!fresh || r->ad_state) return;
    tt_ad_resolve(a);
    /* (r's source is a or a's source: decided already) */
    if (!tt_ad_enabled() || a->ad_state == TT_AD_NONE || r->op == TT_CONST) {
        r->ad_state = TT_AD_NONE; /* a constant here is all padding: no gradient flows */
        return;
    }
    if (a->ad_state == TT_AD_BLOCKED) {
        r->ad_state = TT_AD_BLOCKED;
        r->ad_block = a->ad_block;
        return;
    }
    tt_ad *d = ad_new(r);
    if (!d) {
        r->ad_state = TT_AD_BLOCKED;
        r->ad_block = TT_OP_COUNT;
        return;
    }
    d->op = TT_VIEW;
    d->mv = (uint8_t)kind;
    d->nsrc = 1;
    tt_node_ref(a);
    d->src[0] = a;
    switch (kind) {
    case TT_MV_PERMUTE:
        for (int i = 0; i < a->ndim; i++) d->perm[i] = (uint8_t)x->perm[i];
        break;
    case TT_MV_PAD:
    case TT_MV_SHRINK:
    case TT_MV_STEP: memcpy(d->arg, x->a, a->ndim * sizeof *x->a); break;
    case TT_MV_FLIP: d->axes = x->axes; break;
    case TT_MV_WINDOW:
        d->axis = x->axis;
        d->k = x->k;
        d->stride = x->stride;
        d->dil = x->dil;
        break;
    case TT_MV_RESHAPE:
    case TT_MV_EXPAND: break; /* the source's shape says it */
    }
}

void tt_ad_custom(hcq_tensor *out, int kind, hcq_tensor *const *srcs, int n)
{
    if (!out || !base_handle_live(out, BASE_H_TENSOR)) return;
    tt_node *x = out->n;
    tt_ad_resolve(x);
    if (x->ad_state != TT_AD_REC || !x->ad->nsrc || n > 3) return; /* no history, or a marked leaf */
    for (int i = 0; i < n; i++)
        if (!srcs[i] || !base_handle_live(srcs[i], BASE_H_TENSOR)) return; /* keep the generic record */
    for (int i = 0; i < n; i++) /* the backward visits newest first: sources must be older */
        if (srcs[i]->n->id > x->id) return;
    bool leaf = x->ad->leaf;
    tt_node *refs[TT_AD_MAX_REFS];
    int k = tt_ad_release(x, refs);
    tt_ad *a = ad_new(x);
    if (a) {
        a->op = (uint8_t)kind;
        a->leaf = leaf;
        a->nsrc = (uint8_t)n;
        for (int i = 0; i < n; i++) {
            tt_ad_resolve(srcs[i]->n);
            tt_node_ref(srcs[i]->n);
            a->src[i] = srcs[i]->n;
        }
    } else {
        x->ad_state = TT_AD_BLOCKED;
        x->ad_block = TT_OP_COUNT;
    }
    for (int i = 0; i < k; i++) tt_node_unref(refs[i]);
}

/* ** the builder */
tt_node *tt_gb_own(tt_gb *B, tt_node *x)
{
    if (!x) {
        if (!B->err) B->err = hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
        return NULL;
    }
    tt_ad_resolve(x); /* built with gradients off: NONE, with whatever fresh node is below it */
    if (B->n == B->cap) {
        uint32_t nc = B->cap ? B->cap * 2 : 64;
        tt_node **nn = base_realloc_array(B->nodes, nc, sizeof *nn);
        if (!nn) {
            tt_node_unref(x);
            if (!B->err) B->err = HCQ_ENOMEM;
            return NULL;
        }
        B->nodes = nn;
        B->cap = nc;
    }
    B->nodes[B->n++] = x;
    return x;
}

void tt_gb_free(tt_gb *B)
{
    for (uint32_t i = 0; i < B->n; i++) tt_node_unref(B->nodes[i]);
    free(B->nodes);
    B->nodes = NULL;
    B->n = B->cap = 0;
}

/* ** public API */
static const char *block_name(uint8_t op)
{
    switch (op) {
    case TT_CMPLT:
    case TT_CMPNE: return "a comparison (lt, eq, argmax, ...)";
    case TT_AND:
    case TT_OR:
    case TT_XOR:
    case TT_NOT: return "a logical op";
    case TT_SHL:
    case TT_SHR: return "a shift";
    case TT_IDIV:
    case TT_MOD: return "integer division";
    case TT_BITCAST: return "a bitcast";
    case TT_CAST: return "a cast to an integer or bool dtype";
    default: return "an op without a gradient";
    }
}

static tt_node *live_arg(const hcq_tensor *t, const char *fn)
{
    tt_node *n = tt_arg(t, fn);
    if (n) tt_ad_resolve(n);
    return n;
}

hcq_status hcq_requires_grad(hcq_tensor *t, bool on)
{
    const char *fn = "hcq_requires_grad";
    tt_node *n = live_arg(t, fn);
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (!on) {
        if (n->ad_state != TT_AD_REC || !n->ad->leaf) return HCQ_OK;
        tt_ad *a = n->ad;
        a->leaf = false;
        tt_node_unref(a->grad);
        a->grad = NULL;
        if (!a->nsrc) { /* a pure leaf: nothing behind it needs gradients */
            tt_node *refs[TT_AD_MAX_REFS];
            tt_ad_release(n, refs);
            n->ad_state = TT_AD_NONE;
        }
        return HCQ_OK;
    }
    if (!is_float(n))
        return base_err(HCQ_EINVAL, "%s: only float tensors take gradients; this one is %s", fn,
                        hcq_dtype_name((hcq_dtype)n->dtype));
    if (n->ad_state == TT_AD_REC) {
        n->ad->leaf = true;
        return HCQ_OK;
    }
    /* A constant's movements and casts fold into new constants that keep
     * no link to it: give it storage first. */
    if (n->op == TT_CONST) {
        hcq_status s = tt_realize_nodes(t->ctx, &n, 1);
        if (s) return s;
    }
    tt_ad *a = ad_new(n);
    if (!a) return HCQ_ENOMEM;
    a->op = TT_BUF; /* a leaf: no sources */
    a->leaf = true;
    return HCQ_OK;
}

bool hcq_tensor_requires_grad(const hcq_tensor *t)
{
    if (!t || !base_handle_live(t, BASE_H_TENSOR)) return false;
    tt_ad_resolve(t->n);
    return t->n->ad_state == TT_AD_REC;
}

hcq_tensor *hcq_grad(hcq_tensor *t)
{
    const char *fn = "hcq_grad";
    tt_node *n = live_arg(t, fn);
    if (!n) return NULL;
    if (n->ad_state != TT_AD_REC || !n->ad->leaf)
        return base_err(HCQ_EINVAL, "%s: the tensor does not keep a gradient; call hcq_requires_grad on it first", fn),
               NULL;
    if (!n->ad->grad)
        return base_err(HCQ_ESTATE, "%s: no gradient yet: no hcq_backward reached this tensor since the last zero_grad", fn),
               NULL;
    tt_node_ref(n->ad->grad);
    return tt_wrap(t->ctx, n->ad->grad);
}

bool hcq_has_grad(const hcq_tensor *t)
{
    if (!t || !base_handle_live(t, BASE_H_TENSOR)) return false;
    const tt_node *n = t->n;
    return n->ad_state == TT_AD_REC && n->ad->leaf && n->ad->grad;
}

hcq_status hcq_zero_grad(hcq_tensor *t)
{
    tt_node *n = live_arg(t, "hcq_zero_grad");
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (n->ad_state == TT_AD_REC) {
        tt_node_unref(n->ad->grad);
        n->ad->grad = NULL;
    }
    return HCQ_OK;
}

hcq_status hcq_set_grad(hcq_tensor *t, hcq_tensor *grad)
{
    const char *fn = "hcq_set_grad";
    tt_node *n = live_arg(t, fn), *g = n ? tt_arg(grad, fn) : NULL;
    if (!g) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (n->ad_state != TT_AD_REC || !n->ad->leaf)
        return base_err(HCQ_EINVAL, "%s: the tensor does not keep a gradient; call hcq_requires_grad on it first", fn);
    if (grad->ctx != t->ctx) return base_err(HCQ_EINVAL, "%s: the gradient is from another context", fn);
    if (g->ndim != n->ndim || memcmp(g->shape, n->shape, n->ndim * sizeof *n->shape))
        return base_err(HCQ_EINVAL, "%s: the gradient's shape differs from the tensor's", fn);
    bool prev = hcq_set_grad_enabled(false);
    tt_node *c = tt_cast_node(g, (hcq_dtype)n->dtype);
    if (c) tt_ad_resolve(c);
    hcq_set_grad_enabled(prev);
    if (!c) return hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
    tt_node_unref(n->ad->grad);
    n->ad->grad = c;
    return HCQ_OK;
}

hcq_tensor *hcq_detach(hcq_tensor *t)
{
    tt_node *n = tt_arg(t, "hcq_detach");
    if (!n) return NULL;
    tt_node *c = tt_node_new(t->ctx, TT_VIEW, (hcq_dtype)n->dtype, n->shape, n->ndim);
    if (!c) return NULL;
    memcpy(c->sym, n->sym, sizeof c->sym);
    tt_view_init(&c->view, n->shape, n->ndim);
    tt_node_ref(n);
    c->src[0] = n;
    c->nsrc = 1;
    c->ad_state = TT_AD_NONE; /* the same values, without their history */
    return tt_wrap(t->ctx, c);
}

/* ** the backward pass */
static int by_id_desc(const void *x, const void *y)
{
    const tt_node *a = *(tt_node *const *)x, *b = *(tt_node *const *)y;
    return a->id < b->id ? 1 : a->id > b->id ? -1 : 0;
}

/* Every recorded node reachable from n through records, marked with walk. */
static hcq_status collect(tt_node *n, uint64_t walk, tt_node ***out, uint32_t *count)
{
    tt_node **list = NULL, **st = NULL;
    uint32_t nl = 0, cl = 0, ns = 0, cs = 0;
    hcq_status s = HCQ_OK;
#define PUSH(arr, cnt, capv, v)                                                                    \
    do {                                                                                           \
        if (cnt == capv) {                                                                         \
            uint32_t nc_ = capv ? capv * 2 : 64;                                                   \
            tt_node **na_ = base_realloc_array(arr, nc_, sizeof *na_);                             \
            if (!na_) {                                                                            \
                s = HCQ_ENOMEM;                                                                    \
                goto done;                                                                         \
            }                                                                                      \
            arr = na_;                                                                             \
            capv = nc_;                                                                            \
        }                                                                                          \
        arr[cnt++] = v;                                                                            \
    } while (0)
    n->ad->walk = walk;
    PUSH(st, ns, cs, n);
    while (ns) {
        tt_node *x = st[--ns];
        PUSH(list, nl, cl, x);
        for (int i = 0; i < x->ad->nsrc; i++) {
            tt_node *y = x->ad->src[i];
            if (y->ad_state != TT_AD_REC || y->ad->walk == walk) continue;
            y->ad->walk = walk;
            PUSH(st, ns, cs, y);
        }
    }
#undef PUSH
done:
    free(st);
    if (s) {
        free(list);
        return s;
    }
    if (nl) qsort(list, nl, sizeof *list, by_id_desc);
    *out = list;
    *count = nl;
    return HCQ_OK;
}

static bool same_shape(const tt_node *a, const tt_node *b)
{
    return a->ndim == b->ndim && !memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape);
}

static hcq_status backward(hcq_ctx *ctx, tt_node *out, tt_node *seed)
{
    static uint64_t walks;
    uint64_t walk = __atomic_add_fetch(&walks, 1, __ATOMIC_RELAXED);
    tt_node **order = NULL;
    uint32_t n = 0;
    hcq_status s = collect(out, walk, &order, &n);
    if (s) return s;
    tt_gb B = {.ctx = ctx};
    /* leaves' new gradients, committed only when the whole pass is built */
    tt_node **lv = base_calloc(n ? n : 1, sizeof *lv), **lg = base_calloc(n ? n : 1, sizeof *lg);
    uint32_t nleaves = 0;
    if (!lv || !lg) s = HCQ_ENOMEM;
    out->ad->pending = seed;
    for (uint32_t i = 0; i < n && !s; i++) {
        tt_node *x = order[i];
        tt_node *g = x->ad->pending;
        if (!g) continue;
        if (x->ad->leaf) {
            lv[nleaves] = x;
            lg[nleaves++] = g;
        }
        tt_node *c[3] = {0};
        s = tt_ad_vjp(&B, x, g, c);
        for (int k = 0; k < x->ad->nsrc && !s; k++) {
            tt_node *y = x->ad->src[k];
            if (!c[k] || y->ad_state != TT_AD_REC) continue;
            if (!same_shape(c[k], y) || c[k]->dtype != y->dtype) {
                s = base_err(HCQ_EINVAL, "hcq_backward: internal: the gradient of op %d source %d has the wrong shape or dtype",
                             x->ad->op, k);
                break;
            }
            tt_node *p = y->ad->pending;
            y->ad->pending = p ? tt_gb_own(&B, tt_alu(ctx, TT_ADD, (hcq_dtype)y->dtype, p, c[k], NULL)) : c[k];
            if (!y->ad->pending) s = B.err;
        }
    }
    for (uint32_t i = 0; i < n; i++) order[i]->ad->pending = NULL;
    for (uint32_t i = 0; i < nleaves && !s; i++) {
        tt_ad *a = lv[i]->ad;
        tt_node *g = a->grad ? tt_gb_own(&B, tt_alu(ctx, TT_ADD, (hcq_dtype)lv[i]->dtype, a->grad, lg[i], NULL)) : lg[i];
        if (!g) s = B.err;
        lg[i] = g;
    }
    if (!s)
        for (uint32_t i = 0; i < nleaves; i++) {
            tt_ad *a = lv[i]->ad;
            tt_node_ref(lg[i]);
            tt_node_unref(a->grad);
            a->grad = lg[i];
        }
    free(lv);
    free(lg);
    free(order);
    tt_gb_free(&B);
    return s;
}

hcq_status hcq_backward_with(hcq_tensor *t, hcq_tensor *grad)
{
    const char *fn = "hcq_backward";
    tt_node *n = live_arg(t, fn);
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (n->ad_state == TT_AD_BLOCKED)
        return base_err(HCQ_EINVAL,
                        "%s: the output depends on the tensors that require gradients only through %s, which has no "
                        "gradient",
                        fn, block_name(n->ad_block));
    if (n->ad_state != TT_AD_REC)
        return base_err(HCQ_EINVAL, "%s: the output does not depend on any tensor that requires gradients "
                                    "(hcq_requires_grad, outside hcq_set_grad_enabled(false))",
                        fn);
    tt_node *g;
    if (grad) {
        tt_node *gn = tt_arg(grad, fn);
        if (!gn) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
        if (grad->ctx != t->ctx) return base_err(HCQ_EINVAL, "%s: the gradient is from another context", fn);
        if (!same_shape(gn, n))
            return base_err(HCQ_EINVAL, "%s: the gradient's shape differs from the output's", fn);
        g = tt_cast_node(gn, (hcq_dtype)n->dtype);
    } else {
        if (tt_numel(n->shape, n->ndim) != 1)
            return base_err(HCQ_EINVAL,
                            "%s: the output has %lld elements; hcq_backward takes a one-element loss "
                            "(hcq_backward_with seeds any other output)",
                            fn, (long long)tt_numel(n->shape, n->ndim));
        g = tt_const_node(t->ctx, (hcq_dtype)n->dtype, tt_val_from_double((hcq_dtype)n->dtype, 1.0), n->shape, n->ndim);
        if (g) memcpy(g->sym, n->sym, sizeof g->sym);
    }
    if (!g) return hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
    bool prev = hcq_set_grad_enabled(false);
    tt_ad_resolve(g);
    hcq_status s = backward(t->ctx, n, g);
    hcq_set_grad_enabled(prev);
    tt_node_unref(g);
    return s;
}

hcq_status hcq_backward(hcq_tensor *loss) { return hcq_backward_with(loss, NULL); }
