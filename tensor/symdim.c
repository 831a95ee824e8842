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
 * variable dim (the range check reads the value), and the movements that
 * need the value, as gathers whose indexes the kernel computes from it:
 * flips, slices, padding, steps, windows, concatenations, and reshapes
 * merging the dim with the fixed dims inside it or splitting it; the
 * sizes they make are derived variables ((mul * v + add) / div of one,
 * tt_sym_derive). Merging two variable dims, or one inside a fixed dim,
 * and a view stepping across one are HCQ_ENOTSUP with a message. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

tt_symvar *tt_symvar_get(hcq_ctx *ctx, int k) { return k >= 1 && (uint32_t)k <= ctx->nsyms ? &ctx->syms[k - 1] : NULL; }

/* ** derived variables: the sizes movements make of a variable dim */
static _Thread_local hcq_ctx *tracing;
void tt_sym_tracing(hcq_ctx *ctx) { tracing = ctx; }
hcq_ctx *tt_sym_tracing_ctx(void) { return tracing; }

static int64_t fdiv(int64_t a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }
static int64_t gcd64(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t derived_value(const tt_symvar *d, int64_t base)
{
    return fdiv(d->mul * base + d->add, d->div);
}

int tt_sym_derive(hcq_ctx *ctx, int var, int64_t mul, int64_t add, int64_t div, bool exact, const char *what)
{
    const tt_symvar *v = tt_symvar_get(ctx, var);
    if (!v || mul < 1 || div < 1) return base_err(HCQ_EINVAL, "%s: internal: derive variable %d (%lld, %lld, %lld)", what, var, (long long)mul, (long long)add, (long long)div), 0;
    int b = var;
    if (v->base) { /* restated over the base: (mul * ((m * b + a) / d) + add) / div */
        if (v->div > 1 && !v->exact && (mul > 1 || exact))
            return base_err(HCQ_ENOTSUP, "%s: a multiple or an exact part of a variable dim that is a rounded fraction of one (%s): not supported",
                            what, v->name),
                   0;
        /* exact (or no division): (mul * (m*b + a) + add * d) / (d * div), exact as
         * this division is (the base's own exactness its slot checks);
         * rounded: floor((floor(x / d) + c) / e) = floor((x + c*d) / (d*e)) */
        b = v->base;
        add = mul * v->add + add * v->div;
        mul *= v->mul;
        div *= v->div;
    }
    int64_t g = gcd64(gcd64(mul, add), div);
    if (g > 1) mul /= g, add /= g, div /= g;
    if (div == 1) exact = false;
    if (mul == 1 && add == 0 && div == 1) return b;
    const tt_symvar *bv = &ctx->syms[b - 1];
    tt_symvar t = {.base = (uint8_t)b, .mul = mul, .add = add, .div = div, .exact = exact};
    t.lo = derived_value(&t, bv->lo);
    if (exact && (mul * bv->lo + add) % div) t.lo++; /* the least exact value is above */
    t.hi = derived_value(&t, bv->hi);
    t.val = derived_value(&t, bv->val);
    if (t.lo < 0)
        return base_err(HCQ_EINVAL,
                        "%s: the size would be negative where the variable '%s' is at its lower bound %lld (its range is [%lld, %lld])",
                        what, bv->name, (long long)bv->lo, (long long)bv->lo, (long long)bv->hi),
               0;
    uint32_t k = 0, free_k = TT_MAX_SYMS;
    for (; k < ctx->nsyms; k++) {
        const tt_symvar *o = &ctx->syms[k];
        if (o->users && o->base == b && o->mul == mul && o->add == add && o->div == div && o->exact == exact) return (int)k + 1;
        if (!o->users && free_k == TT_MAX_SYMS) free_k = k;
    }
    if (free_k == TT_MAX_SYMS && ctx->nsyms < TT_MAX_SYMS) free_k = ctx->nsyms++;
    if (free_k == TT_MAX_SYMS)
        return base_err(HCQ_ELIMIT, "%s: at most %d variables per context, the sizes movements make of variable dims included", what, TT_MAX_SYMS), 0;
    char nm[96]; /* (a message's name; cut to the slot's) */
    snprintf(nm, sizeof nm, "(%lld*%s%+lld)/%lld", (long long)mul, bv->name, (long long)add, (long long)div);
    memcpy(t.name, nm, sizeof t.name - 1);
    t.users = 1;
    ctx->syms[free_k] = t;
    return (int)free_k + 1;
}

hcq_status tt_sym_bind_derived(hcq_ctx *ctx, const bool *bound)
{
    for (uint32_t k = 0; k < ctx->nsyms; k++) {
        tt_symvar *d = &ctx->syms[k];
        if (!d->users || !d->base || !bound[d->base - 1]) continue;
        const tt_symvar *b = &ctx->syms[d->base - 1];
        if (d->exact && (d->mul * b->val + d->add) % d->div)
            return base_err(HCQ_EINVAL, "hcq_jit_run: '%s' is %lld, and a reshape the JIT captured splits it into parts of %lld: it must be a multiple",
                            b->name, (long long)b->val, (long long)(d->div / gcd64(d->div, d->mul)));
        d->val = derived_value(d, b->val);
    }
    return HCQ_OK;
}

void tt_sym_release(hcq_ctx *ctx)
{
    for (uint32_t k = 0; k < ctx->nsyms; k++)
        if (ctx->syms[k].base && ctx->syms[k].users && !ctx->syms[ctx->syms[k].base - 1].users) ctx->syms[k].users = 0;
}

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
 * A movement along a variable dim whose view would need the value (a
 * flip reads element v-1-i; padding reads i-p, masked past p+v; a slice,
 * a step or a window reads an affine function of the result's indexes)
 * is a gather along the dim instead (TT_GATHER, whose range check reads
 * the value of a variable table dim, emit.c; an index outside reads
 * zero), its indexes computed in the kernel from TT_INDEX and TT_SYMVAL,
 * and a size that is a function of the value is a derived variable
 * (tt_sym_derive). So no view needs an offset, a mask or a stride that
 * depends on the value. */
static tt_node *sym_gather(tt_node *table, int ax, tt_node *idx)
{
    return idx ? tt_gather_node(table, ax, idx) : NULL;
}

/* consumes a and b */
static tt_node *alu2(tt_op op, hcq_dtype dt, tt_node *a, tt_node *b)
{
    tt_node *r = a && b ? tt_alu(NULL, op, dt, a, b, NULL) : NULL;
    tt_node_unref(a);
    tt_node_unref(b);
    return r;
}

static tt_node *iconst(int64_t v, const int64_t *shape, int nd, const uint8_t *sym)
{
    tt_node *c = tt_const_node(NULL, HCQ_I32, (tt_val){.i = v}, shape, nd);
    if (c) memcpy(c->sym, sym, sizeof c->sym);
    return c;
}

static tt_node *index_of(const int64_t *shape, int nd, const uint8_t *sym, int ax)
{
    tt_node *x = tt_node_new(NULL, TT_INDEX, HCQ_I32, shape, nd);
    if (!x) return NULL;
    x->axes = (uint32_t)ax;
    memcpy(x->sym, sym, sizeof x->sym);
    x->ad_state = TT_AD_NONE;
    return x;
}

/* i32 over (shape, sym): mul * (index along ax) + mul2 * (index along
 * ax2, when ax2 >= 0) + add, plus the value of variable `var` when var
 * != 0 */
static tt_node *axis_index_v(const int64_t *shape, int nd, const uint8_t *sym, int ax, int64_t mul, int ax2, int64_t mul2, int64_t add,
                             int var, int64_t vmul);
static tt_node *axis_index(const int64_t *shape, int nd, const uint8_t *sym, int ax, int64_t mul, int ax2, int64_t mul2, int64_t add,
                           int var)
{
    return axis_index_v(shape, nd, sym, ax, mul, ax2, mul2, add, var, 1);
}

/* (and vmul times the value) */
static tt_node *axis_index_v(const int64_t *shape, int nd, const uint8_t *sym, int ax, int64_t mul, int ax2, int64_t mul2, int64_t add,
                             int var, int64_t vmul)
{
    tt_node *t = alu2(TT_MUL, HCQ_I32, index_of(shape, nd, sym, ax), iconst(mul, shape, nd, sym));
    if (ax2 >= 0) t = alu2(TT_ADD, HCQ_I32, t, alu2(TT_MUL, HCQ_I32, index_of(shape, nd, sym, ax2), iconst(mul2, shape, nd, sym)));
    t = alu2(TT_ADD, HCQ_I32, t, iconst(add, shape, nd, sym));
    if (!t || !var) return t;
    int64_t ones[TT_MAX_DIMS];
    for (int d = 0; d < nd; d++) ones[d] = 1;
    tt_node *v = tt_node_new(NULL, TT_SYMVAL, HCQ_I32, NULL, 0), *v1 = NULL, *ve = NULL;
    if (v) {
        v->axes = (uint32_t)var;
        v->ad_state = TT_AD_NONE; /* no gradient flows into a size */
        v1 = tt_mv_reshape(v, ones, nd);
        ve = v1 ? tt_mv_expand(v1, shape, nd) : NULL;
    }
    tt_node_unref(v);
    tt_node_unref(v1);
    if (vmul != 1) ve = alu2(TT_MUL, HCQ_I32, ve, iconst(vmul, shape, nd, sym));
    return alu2(TT_ADD, HCQ_I32, t, ve);
}

/* a gather along d: the result is a with dim d of traced size `size`
 * (variable `var`, or fixed when 0), element i reading a's mul*i + add
 * (+ the value of `plus`, when set); zero where that is outside a */
static tt_node *take(tt_node *a, int d, int64_t size, uint8_t var, int64_t mul, int64_t add, int plus)
{
    int64_t shape[TT_MAX_DIMS];
    uint8_t sym[TT_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    memcpy(sym, a->sym, sizeof sym);
    shape[d] = size;
    sym[d] = var;
    if (a->op == TT_CONST && !var && !plus && mul == 1 && add >= 0) { /* a fixed slice of a constant (inside it: slice_in_range) */
        tt_node *c = tt_const_node(NULL, (hcq_dtype)a->dtype, a->cv, shape, a->ndim);
        if (c) memcpy(c->sym, sym, sizeof c->sym);
        return c;
    }
    tt_node *ix = axis_index(shape, a->ndim, sym, d, mul, -1, 0, add, plus);
    tt_node *g = sym_gather(a, d, ix);
    tt_node_unref(ix);
    return g;
}

static hcq_ctx *need_ctx(const char *what)
{
    hcq_ctx *c = tt_sym_tracing_ctx();
    if (!c) base_err(HCQ_ESTATE, "%s: a variable dim outside a traced JIT run", what);
    return c;
}

tt_node *tt_sym_flip(tt_node *a, uint32_t axes)
{
    tt_node_ref(a);
    if (a->op == TT_CONST) return a; /* every element the same */
    for (int d = 0; d < a->ndim && a; d++) {
        if (!(axes & (1u << d)) || !a->sym[d] || a->shape[d] <= 1) continue;
        tt_node *g = take(a, d, a->shape[d], a->sym[d], -1, -1, a->sym[d]); /* element i reads v-1-i */
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
        uint8_t w = 0; /* a fixed size end-begin; to the end: the value minus begin */
        if (end[d] == a->shape[d]) {
            hcq_ctx *ctx = need_ctx("a slice of a variable dim");
            int k = ctx ? tt_sym_derive(ctx, a->sym[d], 1, -begin[d], 1, false, "a slice of a variable dim to its end") : 0;
            if (!k) {
                tt_node_unref(a);
                return NULL;
            }
            w = (uint8_t)k;
        }
        tt_node *g = take(a, d, end[d] - begin[d], w, 1, begin[d], 0);
        tt_node_unref(a);
        a = g;
    }
    return a;
}

tt_node *tt_sym_pad(tt_node *a, const int64_t *before, const int64_t *after, tt_val padval)
{
    hcq_ctx *ctx = need_ctx("padding a variable dim");
    if (!ctx) return NULL;
    tt_node_ref(a);
    for (int d = 0; d < a->ndim && a; d++) {
        if (!a->sym[d] || (!before[d] && !after[d])) continue;
        int k = tt_sym_derive(ctx, a->sym[d], 1, before[d] + after[d], 1, false, "padding a variable dim");
        int64_t size = a->shape[d] + before[d] + after[d];
        tt_node *g = k ? take(a, d, size, (uint8_t)k, 1, -before[d], 0) : NULL;
        if (g && padval.i) { /* the padding where a gather of "true" reads zero */
            tt_node *t = tt_const_node(NULL, HCQ_BOOL, (tt_val){.i = 1}, a->shape, a->ndim);
            if (t) memcpy(t->sym, a->sym, sizeof t->sym);
            tt_node *in = t ? take(t, d, size, (uint8_t)k, 1, -before[d], 0) : NULL;
            tt_node *c = tt_const_node(NULL, (hcq_dtype)a->dtype, padval, g->shape, g->ndim);
            if (c) memcpy(c->sym, g->sym, sizeof c->sym);
            tt_node *r = in && c ? tt_alu(NULL, TT_WHERE, (hcq_dtype)a->dtype, in, g, c) : NULL;
            tt_node_unref(t);
            tt_node_unref(in);
            tt_node_unref(c);
            tt_node_unref(g);
            g = r;
        }
        tt_node_unref(a);
        a = g;
    }
    return a;
}

tt_node *tt_sym_step(tt_node *a, const int64_t *steps)
{
    hcq_ctx *ctx = need_ctx("a step along a variable dim");
    if (!ctx) return NULL;
    tt_node_ref(a);
    for (int d = 0; d < a->ndim && a; d++) {
        if (!a->sym[d] || steps[d] == 1) continue;
        int64_t k = steps[d];
        int w = tt_sym_derive(ctx, a->sym[d], 1, k - 1, k, false, "a step along a variable dim"); /* ceil(v / k) */
        tt_node *g = w ? take(a, d, (a->shape[d] + k - 1) / k, (uint8_t)w, k, 0, 0) : NULL;
        tt_node_unref(a);
        a = g;
    }
    return a;
}

/* windows; split (a reshape splitting the dim into [v/k, k], k = stride,
 * dil 1): the division must be exact */
static tt_node *window(tt_node *a, int axis, int64_t k, int64_t stride, int64_t dil, bool split)
{
    const char *what = split ? "a reshape splitting a variable dim" : "windows along a variable dim";
    hcq_ctx *ctx = need_ctx(what);
    if (!ctx) return NULL;
    if (a->ndim + 1 > TT_MAX_DIMS) return base_err(HCQ_ENOTSUP, "%s: a %d-d tensor would need more dims", what, a->ndim), NULL;
    int64_t ek = dil * (k - 1) + 1, nw = a->shape[axis] >= ek ? (a->shape[axis] - ek) / stride + 1 : 0;
    /* (v - ek) / stride + 1 windows */
    int w = tt_sym_derive(ctx, a->sym[axis], 1, stride - ek, stride, split, what);
    if (!w) return NULL;
    /* a [.., v, 1, ..] expanded to [.., v, k, ..], gathered along the
     * variable dim at i*stride + j*dil for window i, element j */
    int64_t s1[TT_MAX_DIMS], sk[TT_MAX_DIMS], so[TT_MAX_DIMS];
    uint8_t sym[TT_MAX_DIMS] = {0};
    for (int d = 0, e = 0; d < a->ndim; d++, e++) {
        s1[e] = sk[e] = so[e] = a->shape[d];
        sym[e] = a->sym[d];
        if (d == axis) {
            e++;
            s1[e] = 1;
            sk[e] = so[e] = k;
            so[e - 1] = nw;
            sym[e - 1] = (uint8_t)w;
        }
    }
    tt_node *r = tt_mv_reshape(a, s1, a->ndim + 1), *x = r ? tt_mv_expand(r, sk, a->ndim + 1) : NULL;
    tt_node *ix = x ? axis_index(so, a->ndim + 1, sym, axis, stride, axis + 1, dil, 0, 0) : NULL;
    tt_node *g = ix ? sym_gather(x, axis, ix) : NULL;
    tt_node_unref(r);
    tt_node_unref(x);
    tt_node_unref(ix);
    return g;
}

tt_node *tt_sym_window(tt_node *a, int axis, int64_t k, int64_t stride, int64_t dil) { return window(a, axis, k, stride, dil, false); }

/* [.., v, F, ..] (v at d) -> [.., v*F, ..]: element i reads (i / F, i % F),
 * a gather along d, then one along d+1 (to a dim of 1, dropped) */
static tt_node *merge(tt_node *a, int d)
{
    hcq_ctx *ctx = need_ctx("a reshape merging a variable dim");
    if (!ctx) return NULL;
    int64_t F = a->shape[d + 1];
    int w = tt_sym_derive(ctx, a->sym[d], F, 0, 1, false, "a reshape merging a variable dim");
    if (!w) return NULL;
    int64_t s1[TT_MAX_DIMS], s2[TT_MAX_DIMS];
    uint8_t sym[TT_MAX_DIMS];
    memcpy(s1, a->shape, sizeof s1);
    memcpy(sym, a->sym, sizeof sym);
    s1[d] = a->shape[d] * F;
    sym[d] = (uint8_t)w;
    memcpy(s2, s1, sizeof s2);
    s2[d + 1] = 1;
    int nd = a->ndim;
    tt_node *i1 = alu2(TT_IDIV, HCQ_I32, index_of(s1, nd, sym, d), iconst(F, s1, nd, sym));
    tt_node *g1 = i1 ? sym_gather(a, d, i1) : NULL;
    tt_node *i2 = g1 ? alu2(TT_MOD, HCQ_I32, index_of(s2, nd, sym, d), iconst(F, s2, nd, sym)) : NULL;
    tt_node *g2 = i2 ? sym_gather(g1, d + 1, i2) : NULL;
    int64_t s3[TT_MAX_DIMS];
    for (int e = 0, k = 0; e < nd; e++)
        if (e != d + 1) s3[k++] = s2[e];
    tt_node *r = g2 ? tt_mv_reshape(g2, s3, nd - 1) : NULL;
    tt_node_unref(i1);
    tt_node_unref(g1);
    tt_node_unref(i2);
    tt_node_unref(g2);
    return r;
}

/* a reshape of a's dims [from, from+ns) (a variable outermost, the rest
 * fixed) into `nr` dims of `rs` (the first one taking the variable): the
 * fixed dims merged (a view), the variable dim merged with them and split
 * again as the result needs (gathers), the result's fixed dims split off
 * (a view) */
static tt_node *regroup(tt_node *a, int from, int ns, const int64_t *rs, int nr)
{
    int64_t F = 1, G = 1;
    for (int e = 1; e < ns; e++) F *= a->shape[from + e];
    for (int e = 1; e < nr; e++) G *= rs[e];
    int64_t sh[TT_MAX_DIMS];
    int nd = 0;
    for (int e = 0; e < from + 1; e++) sh[nd++] = a->shape[e];
    if (ns > 1) sh[nd++] = F;
    for (int e = from + ns; e < a->ndim; e++) sh[nd++] = a->shape[e];
    tt_node *x = tt_mv_reshape(a, sh, nd), *y; /* [.., v, F, ..]: the variable dim its own */
    if (x && ns > 1 && F > 1) {
        y = merge(x, from);
        tt_node_unref(x);
        x = y;
    } else if (x && ns > 1) { /* F == 1: drop it */
        int64_t s2[TT_MAX_DIMS];
        for (int e = 0, k = 0; e < nd; e++)
            if (e != from + 1) s2[k++] = sh[e];
        y = tt_mv_reshape(x, s2, nd - 1);
        tt_node_unref(x);
        x = y;
    }
    if (x && G > 1) {
        y = window(x, from, G, G, 1, true); /* [.., w/G, G, ..] */
        tt_node_unref(x);
        x = y;
    }
    return x;
}

tt_node *tt_sym_reshape(tt_node *a, const int64_t *shape, int ndim)
{
    /* groups of source and result dims of equal products; a group whose
     * variable dim does not stay a dim of its own is regrouped */
    int i = 0, j = 0;
    for (;;) {
        while (i < a->ndim && a->shape[i] == 1) i++; /* (dims of 1 belong to no group) */
        while (j < ndim && shape[j] == 1) j++;
        if (i == a->ndim && j == ndim) break;
        int i0 = i, j0 = j;
        int64_t ps = i < a->ndim ? a->shape[i++] : 1, pr = j < ndim ? shape[j++] : 1;
        while (ps != pr) {
            if (ps < pr && i < a->ndim) ps *= a->shape[i++];
            else if (pr < ps && j < ndim) pr *= shape[j++];
            else break;
        }
        if (ps != pr || !ps) /* (a variable dim is never 0, so another dim is) */
            return base_err(HCQ_ENOTSUP, "a reshape of an empty tensor with a variable dim (hcq_jit_dim): not supported"), NULL;
        int nv = 0;
        for (int e = i0; e < i; e++) nv += a->sym[e] != 0;
        if (!nv) continue;
        bool own = i - i0 == 1 && j - j0 == 1; /* kept as it is */
        if (own) continue;
        if (nv > 1 || !a->sym[i0])
            return base_err(HCQ_ENOTSUP,
                            "a reshape merges or splits a variable dim (hcq_jit_dim) %s: not supported (a variable dim outermost "
                            "among fixed ones is)",
                            nv > 1 ? "with another variable dim" : "with fixed dims outside it"),
                   NULL;
        tt_node *x = regroup(a, i0, i - i0, shape + j0, j - j0);
        tt_node *r = x ? tt_mv_reshape(x, shape, ndim) : NULL; /* the rest (views; other groups again) */
        tt_node_unref(x);
        return r;
    }
    return base_err(HCQ_ENOTSUP, "a reshape moving a variable dim (hcq_jit_dim) this version does not follow"), NULL;
}

tt_node *tt_sym_cat(tt_node *const *parts, int count, int ax)
{
    const char *what = "a concatenation along a variable dim";
    hcq_ctx *ctx = need_ctx(what);
    if (!ctx) return NULL;
    /* each part's size along ax, m * b + a over one base variable b */
    int base = 0;
    int64_t M = 0, A = 0, total = 0;
    for (int i = 0; i < count; i++) {
        const tt_node *x = parts[i];
        total += x->shape[ax];
        if (!x->sym[ax]) {
            A += x->shape[ax];
            continue;
        }
        const tt_symvar *v = &ctx->syms[x->sym[ax] - 1];
        int b = v->base ? v->base : x->sym[ax];
        if ((base && b != base) || (v->base && v->div != 1))
            return base_err(HCQ_ENOTSUP, "%s: parts of different variables, or a fraction of one: not supported", what), NULL;
        base = b;
        M += v->base ? v->mul : 1;
        A += v->base ? v->add : 0;
    }
    int w = tt_sym_derive(ctx, base, M, A, 1, false, what);
    if (!w) return NULL;
    tt_node *acc = NULL;
    int64_t m = 0, a = 0; /* the part's offset: m * b + a */
    for (int i = 0; i < count && (i == 0 || acc); i++) {
        tt_node *x = parts[i];
        int64_t shape[TT_MAX_DIMS];
        uint8_t sym[TT_MAX_DIMS];
        memcpy(shape, x->shape, sizeof shape);
        memcpy(sym, x->sym, sizeof sym);
        shape[ax] = total;
        sym[ax] = (uint8_t)w;
        /* element i of the whole is the part's i - offset; where that is
         * inside the part (a gather of "true"), the part's value */
        tt_node *ix = axis_index_v(shape, x->ndim, sym, ax, 1, -1, 0, -a, m ? base : 0, -m);
        tt_node *t = tt_const_node(NULL, HCQ_BOOL, (tt_val){.i = 1}, x->shape, x->ndim);
        if (t) memcpy(t->sym, x->sym, sizeof t->sym);
        tt_node *g = ix ? sym_gather(x, ax, ix) : NULL, *in = ix && t ? sym_gather(t, ax, ix) : NULL, *r = NULL;
        if (g && in) r = acc ? tt_alu(NULL, TT_WHERE, (hcq_dtype)x->dtype, in, g, acc) : (tt_node_ref(g), g);
        tt_node_unref(ix);
        tt_node_unref(t);
        tt_node_unref(g);
        tt_node_unref(in);
        tt_node_unref(acc);
        acc = r;
        if (!x->sym[ax]) a += x->shape[ax];
        else {
            const tt_symvar *v = &ctx->syms[x->sym[ax] - 1];
            m += v->base ? v->mul : 1;
            a += v->base ? v->add : 0;
        }
    }
    return acc;
}

tt_node *tt_sym_unstep(tt_node *g, const tt_node *p, const int64_t *steps)
{
    tt_node_ref(g);
    for (int d = 0; d < g->ndim && g; d++) {
        if (!p->sym[d] || steps[d] == 1) continue;
        /* element i of p's variable dim is g's i / k where k divides i,
         * else zero */
        int64_t shape[TT_MAX_DIMS], k = steps[d];
        uint8_t sym[TT_MAX_DIMS];
        memcpy(shape, g->shape, sizeof shape);
        memcpy(sym, g->sym, sizeof sym);
        shape[d] = p->shape[d];
        sym[d] = p->sym[d];
        int nd = g->ndim;
        tt_node *ix = alu2(TT_IDIV, HCQ_I32, index_of(shape, nd, sym, d), iconst(k, shape, nd, sym));
        tt_node *off = alu2(TT_CMPNE, HCQ_BOOL, alu2(TT_MOD, HCQ_I32, index_of(shape, nd, sym, d), iconst(k, shape, nd, sym)),
                            iconst(0, shape, nd, sym));
        tt_node *z = tt_const_node(NULL, (hcq_dtype)g->dtype, (tt_val){.i = 0}, shape, nd);
        if (z) {
            memcpy(z->sym, sym, sizeof z->sym);
            if (hcq_dtype_is_float((hcq_dtype)g->dtype)) z->cv.f = 0.0;
        }
        tt_node *v = ix ? sym_gather(g, d, ix) : NULL;
        tt_node *r = v && off && z ? tt_alu(NULL, TT_WHERE, (hcq_dtype)g->dtype, off, z, v) : NULL;
        tt_node_unref(ix);
        tt_node_unref(off);
        tt_node_unref(z);
        tt_node_unref(v);
        tt_node_unref(g);
        g = r;
    }
    return g;
}

tt_node *tt_sym_unmove(tt_node *g, const tt_node *p, const int64_t *off)
{
    tt_node_ref(g);
    for (int d = 0; d < g->ndim && g; d++) {
        if (!p->sym[d] || g->sym[d] == p->sym[d]) continue;
        /* element i of p's variable dim is g's i+off, zero outside g */
        tt_node *r = take(g, d, p->shape[d], p->sym[d], 1, off[d], 0);
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
