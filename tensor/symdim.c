/* Symbolic dimensions: a JIT input's dim declared a variable in [lo, hi]
 * (hcq_jit_dim) makes every kernel the traced function launches take the
 * variable's value as an argument, so one capture and one compile per
 * kernel serve every value.
 *
 * The input's node is marked (tt_node.sym) while the function runs; ops
 * propagate the mark (tt_sym_join for elementwise results, tt_sym_move for
 * views, reductions clear what they reduce); the shape entry keeps the
 * traced value, so every shape check works as before. The kernel key
 * names the variable, not the value, and a view as it is at the upper
 * bounds (cache.c). The lowering works in the space where every variable
 * dim is at its upper bound (tt_sym_substitute, below): the work-items
 * walk it, the launch scaled by the value of the stored tensor's
 * outermost dim when that is a variable and every other variable dim
 * gated past its value; reduction loops over a variable run to its value,
 * and a mean's count (tt_sym_count) reads it too. Memory is laid out at
 * the bound values: a load's or store's index multiplies the strides
 * that have a variable dim inside by the values (tt_mem_linear,
 * tt_sx_mulv), read as i32 kernel arguments.
 *
 * Supported: any number of variables per kernel (a batch and a sequence),
 * at any dim: elementwise ops, broadcasting, reshapes that keep each
 * variable dim a dim of its own, permutes (a contiguous copy of a
 * transposed batch), reductions over any dims, matmul, softmax and the nn
 * layers, means, and the backward pass of all that. Gathers along a
 * variable dim (the range check reads the value), flips of one and slices
 * of a fixed size from one (gathers whose indexes the kernel computes
 * from the value: tt_sym_flip, tt_sym_slice below). What would need a
 * size that is a function of the value (a reshape merging or splitting a
 * variable dim; padding, a slice to the end, striding or windowing it; a
 * view stepping across it) is HCQ_ENOTSUP with a message. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

tt_symvar *tt_symvar_get(hcq_ctx *ctx, int k) { return k >= 1 && (uint32_t)k <= ctx->nsyms ? &ctx->syms[k - 1] : NULL; }

/* Values that are a function of the element's index alone, whatever the
 * tensor's size: constants, index tensors (hcq_arange), random tensors
 * (element i of a stream at any size: tt_mem_linear numbers it as the
 * eager tensor of that size is numbered), and elementwise ops and views
 * of them. A fixed-size one meeting a variable takes the variable's mark
 * (tt_sym_adopt), so a causal mask from hcq_arange or a dropout mask
 * follows the sequence or the batch. */
static bool size_free(const tt_node *n, int depth)
{
    if (depth > 64 || n->contig || n->assign || n->relayout) return false;
    switch ((tt_op)n->op) {
    case TT_CONST:
    case TT_INDEX:
    case TT_RAND: return true;
    case TT_BUF:
    case TT_REDUCE:
    case TT_GATHER:
    case TT_SYMVAL: return false;
    default: break;
    }
    if (!n->nsrc) return false;
    for (int i = 0; i < n->nsrc; i++)
        if (!size_free(n->src[i], depth + 1)) return false;
    return true;
}

static hcq_status cannot_adopt(const char *why)
{
    return base_err(HCQ_ENOTSUP,
                    "a fixed-size operand built from constants, aranges or random tensors cannot take a variable dim "
                    "(hcq_jit_dim): %s",
                    why);
}

/* A copy of size-free n whose dims are marked `want` (kept where n has a
 * mark already); NULL with the status in *err. */
static tt_node *remark(tt_node *n, const uint8_t *want, int depth, hcq_status *err)
{
    uint8_t w[TT_MAX_DIMS] = {0};
    bool any = false;
    for (int d = 0; d < n->ndim; d++) {
        if (want[d] && n->sym[d] && want[d] != n->sym[d]) return (*err = cannot_adopt("a dim is another variable")), NULL;
        w[d] = n->sym[d] ? n->sym[d] : want[d];
        any = any || (want[d] && !n->sym[d]);
    }
    if (!any) {
        tt_node_ref(n);
        return n;
    }
    if (depth > 64) return (*err = cannot_adopt("too deep")), NULL;
    tt_node *r = NULL, *s[3] = {0};
    switch ((tt_op)n->op) {
    case TT_CONST: r = tt_const_node(NULL, (hcq_dtype)n->dtype, n->cv, n->shape, n->ndim); break;
    case TT_INDEX:
    case TT_RAND: /* the same stream: the same numbers as the original at its size */
        if ((r = tt_node_new(NULL, (tt_op)n->op, (hcq_dtype)n->dtype, n->shape, n->ndim))) {
            r->axes = n->axes;
            r->rstream = n->rstream;
            r->seed = n->seed;
        }
        break;
    case TT_VIEW: { /* a new mark goes to the source dim the view dim steps by one row */
        const tt_node *src = n->src[0];
        int64_t rt[TT_MAX_DIMS], st = 1;
        for (int e = src->ndim - 1; e >= 0; e--) {
            rt[e] = st;
            st *= src->shape[e];
        }
        uint8_t sw[TT_MAX_DIMS] = {0};
        for (int d = 0; d < n->ndim; d++) {
            if (!want[d] || n->sym[d]) continue;
            if (n->view.mask && (n->view.lo[d] != 0 || n->view.hi[d] != n->view.shape[d]))
                return (*err = cannot_adopt("a view masks part of the dim")), NULL;
            if (!n->view.strides[d]) continue; /* broadcast */
            int e = 0;
            while (e < src->ndim && !(src->shape[e] == n->shape[d] && rt[e] == n->view.strides[d])) e++;
            if (e == src->ndim) return (*err = cannot_adopt("a view steps the dim in a way this version does not follow")), NULL;
            sw[e] = want[d];
        }
        if (!(s[0] = remark(n->src[0], sw, depth + 1, err))) return NULL;
        if ((r = tt_node_new(NULL, TT_VIEW, (hcq_dtype)n->dtype, n->shape, n->ndim))) {
            r->view = n->view;
            r->cv = n->cv;
            r->src[r->nsrc++] = s[0];
            s[0] = NULL;
        }
        break;
    }
    default: /* elementwise: every source has n's shape */
        for (int i = 0; i < n->nsrc; i++) {
            if (n->src[i]->ndim != n->ndim || memcmp(n->src[i]->shape, n->shape, n->ndim * sizeof *n->shape)) {
                *err = cannot_adopt("an operand of another shape");
                break;
            }
            if (!(s[i] = remark(n->src[i], w, depth + 1, err))) break;
        }
        if (!*err && (r = tt_node_new(NULL, (tt_op)n->op, (hcq_dtype)n->dtype, n->shape, n->ndim))) {
            r->rop = n->rop;
            r->axes = n->axes;
            r->cv = n->cv;
            r->weak = n->weak;
            for (int i = 0; i < n->nsrc; i++) {
                r->src[r->nsrc++] = s[i];
                s[i] = NULL;
            }
        }
        break;
    }
    for (int i = 0; i < 3; i++) tt_node_unref(s[i]);
    if (!r) {
        if (!*err) *err = base_err(HCQ_ENOMEM, "out of memory marking a variable dim");
        return NULL;
    }
    memcpy(r->sym, w, sizeof r->sym);
    r->ad_state = TT_AD_NONE; /* no parameter behind it */
    return r;
}

hcq_status tt_sym_adopt(tt_node **in, int n, const int64_t *shape, int ndim, const uint8_t *sym, tt_node **out)
{
    hcq_status err = HCQ_OK;
    for (int i = 0; i < n; i++) out[i] = NULL;
    for (int i = 0; i < n && !err; i++) {
        tt_node *a = in[i];
        uint8_t want[TT_MAX_DIMS] = {0};
        bool any = false;
        for (int d = 0; d < ndim; d++) {
            int ia = a->ndim - ndim + d;
            if (ia < 0 || !sym[d] || a->shape[ia] != shape[d] || a->sym[ia]) continue;
            want[ia] = sym[d];
            any = true;
        }
        if (!any || a->op == TT_CONST) continue; /* a constant's broadcast takes the marks (the caller) */
        out[i] = remark(a, want, 0, &err);
    }
    if (err)
        for (int i = 0; i < n; i++) {
            tt_node_unref(out[i]);
            out[i] = NULL;
        }
    return err;
}

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
                if (!size_free(a, 0)) fixed = i; /* a constant's, an arange's, a random tensor's values do not depend on its size */
                continue;
            }
            if (out[d] && out[d] != m)
                return base_err(HCQ_ENOTSUP, "%s: dim %d is one variable (hcq_jit_dim) in one operand and another in the other", fn, d);
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

/* ** movements of a variable dim through a gather
 *
 * A flip of a variable dim reads element v-1-i (v its value), and a slice
 * of fixed size k from a variable dim reads element b+i: each is a gather
 * along the dim (TT_GATHER, whose range check reads the value of a
 * variable table dim, emit.c) with indexes computed in the kernel from
 * TT_INDEX and TT_SYMVAL, so no view needs an offset that depends on the
 * value. */
static tt_node *sym_gather(tt_node *table, int ax, tt_node *idx)
{
    if (!idx) return NULL;
    tt_node *g = tt_node_new(NULL, TT_GATHER, (hcq_dtype)table->dtype, idx->shape, idx->ndim);
    if (!g) return NULL;
    memcpy(g->sym, idx->sym, sizeof g->sym);
    g->axes = (uint32_t)ax;
    tt_node_ref(table);
    tt_node_ref(idx);
    g->src[0] = table;
    g->src[1] = idx;
    g->nsrc = 2;
    return g;
}

/* i32 over (shape, sym): mul * (index along ax) + add, plus the value of
 * variable `var` when var != 0 */
static tt_node *axis_index(const int64_t *shape, int nd, const uint8_t *sym, int ax, int var, int64_t mul, int64_t add)
{
    tt_node *x = tt_node_new(NULL, TT_INDEX, HCQ_I32, shape, nd), *t = NULL;
    if (!x) return NULL;
    x->axes = (uint32_t)ax;
    memcpy(x->sym, sym, sizeof x->sym);
    x->ad_state = TT_AD_NONE;
    tt_node *c[2] = {tt_const_node(NULL, HCQ_I32, (tt_val){.i = mul}, shape, nd), tt_const_node(NULL, HCQ_I32, (tt_val){.i = add}, shape, nd)};
    if (c[0] && c[1]) {
        memcpy(c[0]->sym, sym, sizeof c[0]->sym);
        memcpy(c[1]->sym, sym, sizeof c[1]->sym);
        tt_node *m = tt_alu(NULL, TT_MUL, HCQ_I32, x, c[0], NULL);
        t = m ? tt_alu(NULL, TT_ADD, HCQ_I32, m, c[1], NULL) : NULL;
        tt_node_unref(m);
    }
    tt_node_unref(x);
    tt_node_unref(c[0]);
    tt_node_unref(c[1]);
    if (!t || !var) return t;
    int64_t ones[TT_MAX_DIMS];
    for (int d = 0; d < nd; d++) ones[d] = 1;
    tt_node *v = tt_node_new(NULL, TT_SYMVAL, HCQ_I32, NULL, 0), *v1 = NULL, *ve = NULL, *r = NULL;
    if (v) {
        v->axes = (uint32_t)var;
        v->ad_state = TT_AD_NONE; /* no gradient flows into a size */
        v1 = tt_mv_reshape(v, ones, nd);
        ve = v1 ? tt_mv_expand(v1, shape, nd) : NULL;
        r = ve ? tt_alu(NULL, TT_ADD, HCQ_I32, t, ve, NULL) : NULL;
    }
    tt_node_unref(t);
    tt_node_unref(v);
    tt_node_unref(v1);
    tt_node_unref(ve);
    return r;
}

tt_node *tt_sym_flip(tt_node *a, uint32_t axes)
{
    tt_node_ref(a);
    if (a->op == TT_CONST) return a; /* every element the same */
    for (int d = 0; d < a->ndim && a; d++) {
        if (!(axes & (1u << d)) || !a->sym[d] || a->shape[d] <= 1) continue;
        /* element i reads v-1-i */
        tt_node *ix = axis_index(a->shape, a->ndim, a->sym, d, a->sym[d], -1, -1);
        tt_node *g = sym_gather(a, d, ix);
        tt_node_unref(ix);
        tt_node_unref(a);
        a = g;
    }
    return a;
}

tt_node *tt_sym_slice(tt_node *a, const int64_t *begin, const int64_t *end)
{
    tt_node_ref(a);
    for (int d = 0; d < a->ndim && a; d++) {
        if (!a->sym[d] || (!begin[d] && end[d] == a->shape[d])) continue;
        /* a fixed size end-begin: element i reads begin+i */
        int64_t shape[TT_MAX_DIMS];
        uint8_t sym[TT_MAX_DIMS];
        memcpy(shape, a->shape, sizeof shape);
        memcpy(sym, a->sym, sizeof sym);
        shape[d] = end[d] - begin[d];
        sym[d] = 0;
        tt_node *ix = axis_index(shape, a->ndim, sym, d, 0, 1, begin[d]);
        tt_node *g = ix && a->op == TT_CONST ? tt_const_node(NULL, (hcq_dtype)a->dtype, a->cv, shape, a->ndim) : sym_gather(a, d, ix);
        if (g && a->op == TT_CONST) memcpy(g->sym, sym, sizeof g->sym);
        tt_node_unref(ix);
        tt_node_unref(a);
        a = g;
    }
    return a;
}

tt_node *tt_sym_unslice(tt_node *g, const tt_node *p, const int64_t *begin)
{
    tt_node_ref(g);
    for (int d = 0; d < g->ndim && g; d++) {
        if (!p->sym[d] || g->sym[d]) continue;
        /* element i of the variable dim is g's i-begin, zero outside g
         * (the gather's range check) */
        int64_t shape[TT_MAX_DIMS];
        uint8_t sym[TT_MAX_DIMS];
        memcpy(shape, g->shape, sizeof shape);
        memcpy(sym, g->sym, sizeof sym);
        shape[d] = p->shape[d];
        sym[d] = p->sym[d];
        tt_node *ix = axis_index(shape, g->ndim, sym, d, 0, 1, -begin[d]);
        tt_node *r = sym_gather(g, d, ix);
        tt_node_unref(ix);
        tt_node_unref(g);
        g = r;
    }
    return g;
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

/* ** the lowering's space: every variable dim at its upper bound
 *
 * A kernel over variable dims is lowered once, in the space where each
 * variable dim has its upper bound: its work-items walk that space (the
 * launch dim, the stored tensor's outermost, only to the value; the
 * others are gated past theirs), views map indexes within it, and only
 * memory is laid out at the bound values (tt_mem_linear: a stride with a
 * variable dim inside it reads the values). A view keeps its meaning in
 * that space once its strides and offset are restated in it: each is a
 * sum of the source's row-major strides (its mixed-radix digits over the
 * source's traced shape), and the same digits over the upper-bound shape
 * give the stride there. That holds when a variable dim contributes a
 * digit only as itself: a view dim that is the variable steps its source
 * dim by one, no other dim and no offset steps a variable source dim
 * (tt_sym_move refuses the movements that would). A view found otherwise
 * (a reshape of a padded view that crosses a variable dim, for one) is
 * HCQ_ENOTSUP. */
typedef struct sym_ent {
    tt_node *n;
    int64_t shape[TT_MAX_DIMS];
    tt_view view, nview; /* saved; the view in the upper-bound space */
} sym_ent;

struct tt_symsave {
    sym_ent *e;
    uint32_t n, cap;
    uint32_t stamp;
    hcq_status err;
};

static int64_t upper_of(const hcq_ctx *ctx, const tt_node *n, int d)
{
    return n->sym[d] && n->sym[d] <= ctx->nsyms ? ctx->syms[n->sym[d] - 1].hi : n->shape[d];
}

/* |x|'s digits over the row-major strides rt (outermost digit unbounded) */
static void digits(int64_t x, const int64_t *rt, int nd, int64_t *c)
{
    int64_t a = x < 0 ? -x : x;
    for (int e = 0; e < nd; e++) {
        c[e] = a / rt[e];
        a -= c[e] * rt[e];
    }
}

static hcq_status cross(int d)
{
    return base_err(HCQ_ENOTSUP,
                    "a view%s steps across a variable dim (hcq_jit_dim) of its source: its stride at one value is not the "
                    "same movement at another (a reshape or pad mixing the variable dim with others); not supported",
                    d < 0 ? "'s offset" : "");
}

hcq_status tt_sym_view_padded(const hcq_ctx *ctx, const tt_node *n, tt_view *out)
{
    const tt_node *src = n->src[0];
    tt_view v = n->view;
    for (int d = 0; d < v.ndim; d++) {
        if (!n->sym[d]) continue;
        if (v.mask && (v.lo[d] != 0 || v.hi[d] != v.shape[d]))
            return base_err(HCQ_ENOTSUP, "a view masks part of a variable dim (hcq_jit_dim): not supported");
        v.shape[d] = upper_of(ctx, n, d);
        if (v.mask) v.hi[d] = v.shape[d];
    }
    int nd = src->ndim;
    int64_t rt[TT_MAX_DIMS], rp[TT_MAX_DIMS], st = 1, sp = 1;
    bool same = true;
    for (int e = nd - 1; e >= 0; e--) {
        rt[e] = st;
        rp[e] = sp;
        same = same && st == sp;
        st *= src->shape[e];
        sp *= upper_of(ctx, src, e);
    }
    if (same || !st) { /* no variable inside any stride (or nothing to index) */
        *out = v;
        return HCQ_OK;
    }
    int64_t c[TT_MAX_DIMS];
    for (int d = 0; d < v.ndim; d++) {
        if (v.shape[d] == 1) { /* index 0 only */
            v.strides[d] = 0;
            continue;
        }
        if (!v.strides[d]) continue;
        digits(n->view.strides[d], rt, nd, c);
        int64_t p = 0;
        bool own = false; /* the variable view dim steps its source dim by one, and nothing else */
        for (int e = 0; e < nd; e++) {
            if (src->sym[e] && c[e]) {
                if (n->sym[d] != src->sym[e] || c[e] != 1 || (n->view.strides[d] < 0 ? -n->view.strides[d] : n->view.strides[d]) != rt[e])
                    return cross(d);
                own = true;
            }
            p += c[e] * rp[e];
        }
        if (n->sym[d] && !own) return cross(d);
        v.strides[d] = n->view.strides[d] < 0 ? -p : p;
    }
    digits(n->view.offset, rt, nd, c);
    int64_t p = 0;
    for (int e = 0; e < nd; e++) {
        if (src->sym[e] && c[e]) return cross(-1);
        p += c[e] * rp[e];
    }
    v.offset = n->view.offset < 0 ? -p : p;
    *out = v;
    return HCQ_OK;
}

static void sub_walk(hcq_ctx *ctx, tt_symsave *S, tt_node *n, int depth)
{
    if (S->err || depth > 4096) return;
    if (n->sstamp == S->stamp) return;
    n->sstamp = S->stamp;
    if (tt_has_sym(n) || (n->op == TT_VIEW && tt_has_sym(n->src[0]))) {
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
        e->view = e->nview = n->view;
        /* (the source's traced shape: nothing is changed before every
         * view is restated) */
        if (n->op == TT_VIEW && (S->err = tt_sym_view_padded(ctx, n, &e->nview))) return;
    }
    if (n->op == TT_BUF) return;
    for (int i = 0; i < n->nsrc; i++) sub_walk(ctx, S, n->src[i], depth + 1);
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
    /* the launch follows the variable of the stored tensors' outermost dim
     * (every root has the same shape, and must have the same variables) */
    for (uint32_t r = 1; r < nroots && !S->err; r++)
        if (memcmp(roots[r]->sym, roots[0]->sym, sizeof roots[0]->sym))
            S->err = base_err(HCQ_ENOTSUP, "one kernel would store tensors of one shape with different variable dims (hcq_jit_dim): "
                                           "not supported");
    for (int d = 0; d < roots[0]->ndim && !S->err; d++)
        if (roots[0]->shape[d] != 1) {
            *var = roots[0]->sym[d];
            break;
        }
    for (uint32_t r = 0; r < nroots && !S->err; r++) sub_walk(ctx, S, roots[r], 0);
    if (S->err) {
        hcq_status s = S->err;
        S->n = 0; /* nothing changed yet */
        tt_sym_restore(S);
        *var = 0;
        return s;
    }
    for (uint32_t i = 0; i < S->n; i++) {
        tt_node *n = S->e[i].n;
        for (int d = 0; d < n->ndim; d++) n->shape[d] = upper_of(ctx, n, d);
        if (n->op == TT_VIEW) n->view = S->e[i].nview;
    }
    if (!S->n) {
        tt_sym_restore(S);
        return HCQ_OK;
    }
    *save = S;
    return HCQ_OK;
}
