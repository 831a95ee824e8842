/* Layout copies: a constant operand re-laid out once, not on every call.
 *
 * hcq_matmul on CPU-style targets copies a K-major right operand (x @ w^T,
 * as hcq_linear and conv2d make) to N-major, because the register tile
 * vectorizes along a contiguous output dim. For a weight that copy is the
 * same on every forward, so the copy node is marked `relayout` and the
 * buffer it makes is kept with its source buffer (tt_buf.layout), keyed by
 * the view and dtypes it copies and by the source's write generation.
 *
 * Correctness rests on one rule: every write to a buffer goes through
 * tt_buf_written, which bumps its generation and drops its kept copy. The
 * writes are kernel launches into it (realize.c: hcq_assign, optimizer
 * steps, a realize into an assigned buffer), host writes (data.c) and JIT
 * replays (jit.c: every buffer the graph stores into). Because launches
 * run in order on the device's timeline, a copy kept at a generation holds
 * what every kernel launched after it sees in the source until the next
 * write. A lazy tensor built before a write and realized after it reads the
 * new values, as tensor.h promises: the kept copy is looked up when the
 * copy node is realized, not when it is built.
 *
 * A JIT capture that takes a kept copy bakes its buffer into the graph.
 * Such a use is recorded, and each replay first copies the source again if
 * it was written since the copy was made (eagerly, by the user, or by the
 * graph itself: a training step that reads a weight and then updates it).
 * A JIT's inputs are never served from the cache during a capture: replays
 * swap them for other buffers. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

void tt_layout_drop(tt_buf *b)
{
    tt_layout *l = b->layout;
    if (!l) return;
    b->layout = NULL;
    tt_buf_unref(l->copy);
    free(l);
}

void tt_buf_written(tt_buf *b)
{
    if (!b) return;
    b->gen++;
    tt_layout_drop(b);
}

static bool view_eq(const tt_view *a, const tt_view *b)
{
    if (a->ndim != b->ndim || a->mask != b->mask || a->offset != b->offset) return false;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return false;
        if (a->mask && (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])) return false;
    }
    return true;
}

static bool key_eq(const tt_layout_key *a, const tt_layout_key *b)
{
    if (a->src_dt != b->src_dt || a->dt != b->dt || a->src_ndim != b->src_ndim) return false;
    for (int d = 0; d < a->src_ndim; d++)
        if (a->src_shape[d] != b->src_shape[d]) return false;
    return view_eq(&a->view, &b->view);
}

/* x: contig copy of [cast of] one view of a buffer node; the key and the
 * buffer, or false for any other shape of graph (it then copies as usual) */
static bool key_of(const tt_node *x, tt_layout_key *k, tt_buf **src)
{
    if (!x->relayout || x->op != TT_VIEW || !x->contig || x->assign || x->nsrc != 1) return false;
    if (!tt_view_is_identity(&x->view, x->src[0]->shape, x->src[0]->ndim)) return false;
    const tt_node *c = x->src[0], *v = c;
    if (c->op == TT_CAST) v = c->src[0];
    if (v->op != TT_VIEW || v->nsrc != 1 || v->contig) return false;
    const tt_node *b = v->src[0];
    if (b->op != TT_BUF || !b->buf || !b->buf->hb) return false;
    memset(k, 0, sizeof *k);
    k->src_dt = (hcq_dtype)b->dtype;
    k->dt = (hcq_dtype)x->dtype;
    k->src_ndim = b->ndim;
    memcpy(k->src_shape, b->shape, b->ndim * sizeof *b->shape);
    k->view = v->view;
    *src = b->buf;
    return true;
}

static bool capture_input(const tt_capture *c, const tt_buf *b)
{
    for (uint32_t i = 0; i < c->ninputs; i++)
        if (c->inputs[i] == b) return true;
    return false;
}

/* a capture takes l: held until the JIT goes */
static bool capture_use(tt_capture *c, tt_buf *src, const tt_layout *l)
{
    for (uint32_t i = 0; i < c->nuses; i++)
        if (c->uses[i].l.copy == l->copy) return true;
    if (c->nuses == c->ucap) {
        uint32_t nc = c->ucap ? c->ucap * 2 : 4;
        tt_layout_use *nu = base_realloc_array(c->uses, nc, sizeof *nu);
        if (!nu) return false;
        c->uses = nu;
        c->ucap = nc;
    }
    tt_buf_ref(src);
    tt_buf_ref(l->copy);
    c->uses[c->nuses++] = (tt_layout_use){.src = src, .l = *l};
    return true;
}

tt_buf *tt_layout_find(hcq_ctx *ctx, const tt_node *x)
{
    tt_layout_key k;
    tt_buf *src;
    if (!key_of(x, &k, &src)) return NULL;
    tt_layout *l = src->layout;
    if (!l || l->gen != src->gen || !key_eq(&l->key, &k)) return NULL;
    if (ctx->capture && (capture_input(ctx->capture, src) || !capture_use(ctx->capture, src, l))) return NULL;
    tt_buf_ref(l->copy);
    return l->copy;
}

void tt_layout_keep(hcq_ctx *ctx, const tt_node *x, tt_buf *copy)
{
    tt_layout_key k;
    tt_buf *src;
    /* a captured launch only writes the copy when the graph replays (and
     * again on every replay): nothing is kept from a capture */
    if (ctx->capture || !key_of(x, &k, &src)) return;
    tt_layout *l = base_calloc(1, sizeof *l);
    if (!l) return; /* not kept: the next call copies again */
    tt_layout_drop(src);
    l->key = k;
    l->copy = copy;
    l->gen = src->gen;
    tt_buf_ref(copy);
    src->layout = l;
}

hcq_status tt_layout_refresh(hcq_ctx *ctx, tt_layout_use *u)
{
    if (u->src->gen == u->l.gen) return HCQ_OK;
    const tt_layout_key *k = &u->l.key;
    tt_node *b = tt_node_new(ctx, TT_BUF, k->src_dt, k->src_shape, k->src_ndim);
    tt_node *v = b ? tt_node_new(ctx, TT_VIEW, k->src_dt, k->view.shape, k->view.ndim) : NULL;
    tt_node *c = NULL, *x = NULL;
    if (v) {
        tt_buf_ref(u->src);
        b->buf = u->src;
        b->ad_state = v->ad_state = TT_AD_NONE;
        v->view = k->view;
        v->src[0] = b;
        v->nsrc = 1;
        tt_node_ref(b);
        c = k->dt == k->src_dt ? (tt_node_ref(v), v) : tt_cast_node(v, k->dt);
    }
    bool prev = hcq_set_grad_enabled(false);
    if (c) x = tt_copy_node(c, u->l.copy);
    hcq_status s = x ? tt_realize_nodes(ctx, &x, 1) : (hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM);
    hcq_set_grad_enabled(prev);
    if (!s) u->l.gen = u->src->gen;
    tt_node_unref(x);
    tt_node_unref(c);
    tt_node_unref(v);
    tt_node_unref(b);
    return s ? base_err_prefix(s, "hcq_jit_run: copying a written weight into its layout again") : HCQ_OK;
}

void tt_layout_use_release(tt_layout_use *u)
{
    tt_buf_unref(u->src);
    tt_buf_unref(u->l.copy);
    u->src = u->l.copy = NULL;
}
