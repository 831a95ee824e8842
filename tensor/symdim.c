/* Symbolic dimensions: a JIT input's dim declared a variable in [lo, hi]
 * (hcq_jit_dim) makes every kernel the traced function launches take the
 * variable's value as an argument, so one capture and one compile per
 * kernel serve every value.
 *
 * The input's node is marked (tt_node.sym) while the function runs; ops
 * propagate the mark (tt_sym_join for elementwise results, tt_sym_move for
 * views, reductions clear what they reduce); the shape entry keeps the
 * traced value, so every shape check works as before. The kernel key
 * names the variable, not the value (cache.c). The lowering sees the
 * variable's upper bound in every marked shape entry (tt_sym_substitute),
 * takes the value as an i32 parameter for the launch size (the work-items
 * past value * per are gated off) and for reduction loops over the
 * variable, and a mean's count (tt_sym_count) reads it too.
 *
 * What this first version supports: one variable per kernel, as the
 * outermost dim of what a kernel stores and of every buffer it reads (a
 * batch): elementwise ops, broadcasting, reshapes that keep the dim,
 * permutes, reductions over any dims (the variable's too), matmul with a
 * variable M, softmax and the nn layers over the other dims, means, and
 * the backward pass of all that (the gradients' products reduce over the
 * batch through views; the rules' constants and broadcasts take the
 * forward nodes' marks). What needs the value in index arithmetic (a
 * buffer whose variable dim is not its outermost, as a contiguous copy of
 * a transposed batch makes; padding, shrinking, flipping, striding or
 * windowing the variable dim; a reshape merging it; a gather along it;
 * two variables in one kernel) is HCQ_ENOTSUP with a message. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

tt_symvar *tt_symvar_get(hcq_ctx *ctx, int k) { return k >= 1 && (uint32_t)k <= ctx->nsyms ? &ctx->syms[k - 1] : NULL; }

hcq_status tt_sym_join(tt_node *const *in, int n, const int64_t *shape, int ndim, uint8_t *out, const char *fn)
{
    memset(out, 0, TT_MAX_DIMS);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        int fixed = -1; /* an operand (not a constant) with this size and no variable */
        for (int i = 0; i < n; i++) {
            const tt_node *a = in[i];
            int ia = a->ndim - ndim + d;
            if (ia < 0 || a->shape[ia] != shape[d]) continue; /* broadcast from 1 */
            uint8_t m = a->sym[ia];
            if (!m) {
                if (a->op != TT_CONST) fixed = i; /* a constant's values do not depend on its size */
                continue;
            }
            if (out[d] && out[d] != m)
                return base_err(HCQ_ENOTSUP, "%s: dim %d is one variable in one operand and another in the other; one kernel takes one variable",
                                fn, d);
            out[d] = m;
        }
        if (out[d] && fixed >= 0)
            return base_err(HCQ_ENOTSUP,
                            "%s: dim %d is a variable (hcq_jit_dim) in one operand and a fixed %lld in operand %d: a JIT with a variable "
                            "size cannot combine them (make that operand from the input's size, or broadcast it from 1)",
                            fn, d, (long long)shape[d], fixed);
    }
    return HCQ_OK;
}

static const char *kind_name(tt_mv_kind k)
{
    static const char *const names[] = {[TT_MV_RESHAPE] = "a reshape", [TT_MV_PERMUTE] = "a permute", [TT_MV_EXPAND] = "an expand",
                                        [TT_MV_PAD] = "padding",      [TT_MV_SHRINK] = "shrinking",  [TT_MV_FLIP] = "a flip",
                                        [TT_MV_STEP] = "a step",      [TT_MV_WINDOW] = "a window"};
    return names[k];
}

static hcq_status refuse(int d, tt_mv_kind kind, const char *why)
{
    return base_err(HCQ_ENOTSUP,
                    "%s along dim %d, a variable size (hcq_jit_dim), is not supported: %s; the JIT captures it only with that dim fixed",
                    kind_name(kind), d, why);
}

hcq_status tt_sym_move(tt_node *r, const tt_node *a, tt_mv_kind kind, const tt_mv_args *x)
{
    if (!tt_has_sym(a)) return HCQ_OK;
    uint8_t m[TT_MAX_DIMS] = {0};
    for (int d = 0; d < a->ndim; d++) {
        if (!a->sym[d]) continue;
        switch (kind) {
        case TT_MV_RESHAPE: { /* the dim must stay a dim of its own, with the same elements before it */
            int64_t pre = 1, p = 1;
            for (int k = 0; k < d; k++) pre *= a->shape[k];
            int to = -1;
            for (int k = 0; k < x->ndim && to < 0; k++) {
                if (p == pre && x->shape[k] == a->shape[d]) to = k;
                p *= x->shape[k];
            }
            if (to < 0) return refuse(d, kind, "it merges or splits the variable dim");
            m[to] = a->sym[d];
            break;
        }
        case TT_MV_PERMUTE:
            for (int k = 0; k < a->ndim; k++)
                if (x->perm[k] == d) m[k] = a->sym[d];
            break;
        case TT_MV_EXPAND: m[d] = a->sym[d]; break;
        case TT_MV_PAD:
            if (x->a[d] || x->b[d]) return refuse(d, kind, "its size would be the variable plus a constant");
            m[d] = a->sym[d];
            break;
        case TT_MV_SHRINK:
            if (x->a[d] || x->b[d] != a->shape[d]) return refuse(d, kind, "its bounds would depend on the variable");
            m[d] = a->sym[d];
            break;
        case TT_MV_FLIP:
            if (x->axes & (1u << d)) return refuse(d, kind, "its offset would depend on the variable");
            m[d] = a->sym[d];
            break;
        case TT_MV_STEP:
            if (x->a[d] != 1) return refuse(d, kind, "its size would be a fraction of the variable");
            m[d] = a->sym[d];
            break;
        case TT_MV_WINDOW:
            if (d == x->axis) return refuse(d, kind, "its window count would depend on the variable");
            m[d < x->axis ? d : d + 1] = a->sym[d];
            break;
        }
    }
    memcpy(r->sym, m, sizeof m);
    return HCQ_OK;
}

int64_t tt_numel_sym(const hcq_ctx *ctx, const tt_node *n, bool upper)
{
    int64_t v = 1;
    for (int d = 0; d < n->ndim; d++) {
        int64_t s = n->shape[d];
        if (upper && n->sym[d] && n->sym[d] <= ctx->nsyms) s = ctx->syms[n->sym[d] - 1].hi;
        v *= s;
    }
    return v;
}

int64_t tt_dim_upper(const hcq_ctx *ctx, const tt_node *n, int d)
{
    return n->sym[d] && n->sym[d] <= ctx->nsyms ? ctx->syms[n->sym[d] - 1].hi : n->shape[d];
}

tt_node *tt_sym_count(hcq_ctx *ctx, const tt_node *a, uint32_t mask)
{
    int64_t fixed = 1;
    tt_node *r = NULL;
    for (int d = 0; d < a->ndim; d++) {
        if (!(mask & (1u << d))) continue;
        if (!a->sym[d]) {
            fixed *= a->shape[d];
            continue;
        }
        tt_node *v = tt_node_new(ctx, TT_SYMVAL, HCQ_I32, NULL, 0);
        if (!v) {
            tt_node_unref(r);
            return NULL;
        }
        v->axes = a->sym[d];
        v->ad_state = TT_AD_NONE; /* no gradient flows into a size */
        if (!r) {
            r = v;
            continue;
        }
        tt_node *p = tt_alu(ctx, TT_MUL, HCQ_I32, r, v, NULL);
        tt_node_unref(r);
        tt_node_unref(v);
        if (!(r = p)) return NULL;
    }
    tt_node *c = tt_const_node(ctx, HCQ_I32, (tt_val){.i = fixed}, NULL, 0);
    if (!r || !c) {
        tt_node_unref(r);
        return c;
    }
    tt_node *p = fixed == 1 ? (tt_node_ref(r), r) : tt_alu(ctx, TT_MUL, HCQ_I32, r, c, NULL);
    tt_node_unref(r);
    tt_node_unref(c);
    return p;
}

/* ** the lowering's view: marked shape entries at their upper bound */
typedef struct sym_ent {
    tt_node *n;
    int64_t shape[TT_MAX_DIMS];
    tt_view view;
} sym_ent;

struct tt_symsave {
    sym_ent *e;
    uint32_t n, cap;
    uint32_t stamp;
    hcq_status err;
};

/* the variable dim is the outermost dim larger than 1 (all before are 1),
 * and there is one: row-major strides then never involve it */
static bool outermost(const tt_node *n, int *var)
{
    int found = -1;
    for (int d = 0; d < n->ndim; d++) {
        if (n->sym[d]) {
            if (found >= 0) return false;
            found = d;
        }
    }
    if (found < 0) return true;
    for (int d = 0; d < found; d++)
        if (n->shape[d] != 1) return false;
    if (var) *var = n->sym[found];
    return true;
}

static hcq_status not_outermost(const char *what)
{
    return base_err(HCQ_ENOTSUP,
                    "a kernel would index %s whose variable dim (hcq_jit_dim) is not its outermost (or has two variables): its strides "
                    "would depend on the variable's value, which this version does not support (a contiguous copy with the batch "
                    "transposed inwards, for one)",
                    what);
}

static void sub_walk(hcq_ctx *ctx, tt_symsave *S, tt_node *n, bool decomposed, int depth)
{
    if (S->err || depth > 4096) return;
    if (n->sstamp == S->stamp) { /* seen; a node first reached as a view's source was checked then */
        if (decomposed && !outermost(n, NULL) && tt_has_sym(n)) S->err = not_outermost("a view's source");
        return;
    }
    n->sstamp = S->stamp;
    if (tt_has_sym(n)) {
        if ((decomposed || n->op == TT_BUF) && !outermost(n, NULL)) {
            S->err = not_outermost(n->op == TT_BUF ? "a buffer" : "a view's source");
            return;
        }
        if (n->op == TT_VIEW && n->view.mask)
            for (int d = 0; d < n->ndim; d++)
                if (n->sym[d] && (n->view.lo[d] != 0 || n->view.hi[d] != n->shape[d])) {
                    S->err = base_err(HCQ_ENOTSUP, "a view masks part of a variable dim (hcq_jit_dim): not supported");
                    return;
                }
        if (S->n == S->cap) {
            uint32_t nc = S->cap ? S->cap * 2 : 32;
            sym_ent *ne = base_realloc_array(S->e, nc, sizeof *ne);
            if (!ne) {
                S->err = HCQ_ENOMEM;
                return;
            }
            S->e = ne;
            S->cap = nc;
        }
        sym_ent *e = &S->e[S->n++];
        e->n = n;
        memcpy(e->shape, n->shape, sizeof e->shape);
        e->view = n->view;
        for (int d = 0; d < n->ndim; d++) {
            if (!n->sym[d]) continue;
            int64_t hi = ctx->syms[n->sym[d] - 1].hi;
            if (n->op == TT_VIEW) {
                if (n->view.mask) n->view.hi[d] = hi;
                n->view.shape[d] = hi;
            }
            n->shape[d] = hi;
        }
    }
    if (n->op == TT_BUF) return;
    if (n->op == TT_GATHER && n->src[0]->sym[n->axes]) {
        S->err = base_err(HCQ_ENOTSUP, "a gather along a variable dim (hcq_jit_dim) is not supported");
        return;
    }
    for (int i = 0; i < n->nsrc; i++) sub_walk(ctx, S, n->src[i], n->op == TT_VIEW, depth + 1);
}

void tt_sym_restore(tt_symsave *S)
{
    if (!S) return;
    for (uint32_t i = S->n; i-- > 0;) {
        sym_ent *e = &S->e[i];
        memcpy(e->n->shape, e->shape, sizeof e->shape);
        e->n->view = e->view;
    }
    free(S->e);
    free(S);
}

hcq_status tt_sym_substitute(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_symsave **save, int *var)
{
    *save = NULL;
    *var = 0;
    tt_symsave *S = base_calloc(1, sizeof *S);
    if (!S) return HCQ_ENOMEM;
    if (++ctx->sym_stamp == 0) ++ctx->sym_stamp;
    S->stamp = ctx->sym_stamp;
    for (uint32_t r = 0; r < nroots && !S->err; r++) {
        int v = 0;
        if (!outermost(roots[r], &v)) S->err = not_outermost("the tensor it stores");
        else if (*var && v && v != *var)
            S->err = base_err(HCQ_ENOTSUP, "one kernel would store tensors of two variable sizes (hcq_jit_dim): not supported");
        else if (v) *var = v;
    }
    for (uint32_t r = 0; r < nroots && !S->err; r++) sub_walk(ctx, S, roots[r], true, 0);
    if (S->err) {
        hcq_status s = S->err;
        tt_sym_restore(S);
        *var = 0;
        return s;
    }
    if (!S->n) {
        tt_sym_restore(S);
        return HCQ_OK;
    }
    *save = S;
    return HCQ_OK;
}
