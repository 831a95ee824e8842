/* The vector-Jacobian product of every differentiable node op: given g,
 * the gradient of a node, the lazy nodes that are its sources' gradients.
 * The public ops are built from these node ops (exp from exp2, conv2d from
 * windows, a multiply and a sum, ...), so their gradients follow.
 *
 * Conventions (tensor.h states them for users):
 *   - max (TT_MAX, the max reduction, and so maximum, minimum, max/min,
 *     max pooling and relu through where) sends the gradient to every
 *     element equal to the result, split evenly among ties;
 *   - trunc has gradient 0;
 *   - the product's gradient is exact with zeros: one zero gets the
 *     product of the others, two or more give 0 everywhere;
 *   - gather's gradient sums the gradients of every place that read an
 *     element (out-of-range indexes read nothing, so send nothing). */
#include "tensor/grad.h"

#include <math.h>
#include <string.h>

#define OWN(x) tt_gb_own(B, (x))

static tt_val fval(hcq_dtype dt, double v) { return tt_val_from_double(dt, v); }

/* (nodes made at a forward node's shape take its variable dims too:
 * hcq_jit_dim) */
static tt_node *cnst(tt_gb *B, const tt_node *like, hcq_dtype dt, double v)
{
    if (!like) return NULL;
    tt_node *c = OWN(tt_const_node(NULL, dt, fval(dt, v), like->shape, like->ndim));
    if (c) memcpy(c->sym, like->sym, sizeof c->sym);
    return c;
}

static tt_node *alu1(tt_gb *B, tt_op op, tt_node *a)
{
    if (!a) return NULL;
    return OWN(tt_alu(NULL, op, (hcq_dtype)a->dtype, a, NULL, NULL));
}

static tt_node *alu2(tt_gb *B, tt_op op, tt_node *a, tt_node *b)
{
    if (!a || !b) return NULL;
    hcq_dtype dt = op == TT_CMPNE || op == TT_CMPLT ? HCQ_BOOL : (hcq_dtype)a->dtype;
    return OWN(tt_alu(NULL, op, dt, a, b, NULL));
}

static tt_node *add(tt_gb *B, tt_node *a, tt_node *b) { return alu2(B, TT_ADD, a, b); }
static tt_node *mul(tt_gb *B, tt_node *a, tt_node *b) { return alu2(B, TT_MUL, a, b); }
static tt_node *neg(tt_gb *B, tt_node *a) { return alu1(B, TT_NEG, a); }
static tt_node *mul_s(tt_gb *B, tt_node *a, double v)
{
    return a ? mul(B, a, cnst(B, a, (hcq_dtype)a->dtype, v)) : NULL;
}
static tt_node *eq(tt_gb *B, tt_node *a, tt_node *b) { return alu1(B, TT_NOT, alu2(B, TT_CMPNE, a, b)); }
static tt_node *eq_s(tt_gb *B, tt_node *a, double v) { return a ? eq(B, a, cnst(B, a, (hcq_dtype)a->dtype, v)) : NULL; }

static tt_node *where(tt_gb *B, tt_node *c, tt_node *a, tt_node *b)
{
    if (!c || !a || !b) return NULL;
    return OWN(tt_alu(NULL, TT_WHERE, (hcq_dtype)a->dtype, c, a, b));
}

/* a where c holds, else 0 */
static tt_node *keep(tt_gb *B, tt_node *c, tt_node *a)
{
    return a ? where(B, c, a, cnst(B, a, (hcq_dtype)a->dtype, 0)) : NULL;
}

static tt_node *cast(tt_gb *B, tt_node *a, hcq_dtype dt) { return a ? OWN(tt_cast_node(a, dt)) : NULL; }

static tt_node *expand_as(tt_gb *B, tt_node *a, const tt_node *like)
{
    if (!a) return NULL;
    if (a->ndim == like->ndim && !memcmp(a->shape, like->shape, a->ndim * sizeof *a->shape)) return a;
    tt_node *e = OWN(tt_mv_expand(a, like->shape, like->ndim));
    if (e) memcpy(e->sym, like->sym, sizeof e->sym);
    return e;
}

static tt_node *reduce(tt_gb *B, tt_node *a, tt_rop rop, uint32_t axes)
{
    return a ? OWN(tt_reduce_node(a, rop, axes, (hcq_dtype)a->dtype)) : NULL;
}

static tt_node *reshape(tt_gb *B, tt_node *a, const int64_t *shape, int nd)
{
    return a ? OWN(tt_mv_reshape(a, shape, nd)) : NULL;
}

static tt_node *pad(tt_gb *B, tt_node *a, const int64_t *before, const int64_t *after)
{
    return a ? OWN(tt_mv_pad(a, before, after, fval((hcq_dtype)a->dtype, 0))) : NULL;
}

static tt_node *shrink(tt_gb *B, tt_node *a, const int64_t *begin, const int64_t *end)
{
    return a ? OWN(tt_mv_shrink(a, begin, end)) : NULL;
}

static tt_node *fail(tt_gb *B, hcq_status s)
{
    if (!B->err) B->err = s;
    return NULL;
}

/* dim d of a (size o) becomes o*s long with element j at j*s, zeros between */
static tt_node *interleave(tt_gb *B, tt_node *a, int d, int64_t s)
{
    if (!a || s == 1) return a;
    int nd = a->ndim;
    if (nd >= TT_MAX_DIMS)
        return fail(B, base_err(HCQ_ENOTSUP, "hcq_backward: the gradient of a strided view of a %d-d tensor needs %d dims",
                                nd, nd + 1));
    int64_t s1[TT_MAX_DIMS], before[TT_MAX_DIMS] = {0}, after[TT_MAX_DIMS] = {0}, s2[TT_MAX_DIMS];
    for (int i = 0, j = 0; i < nd; i++) {
        s1[j++] = a->shape[i];
        if (i == d) s1[j++] = 1;
        s2[i] = i == d ? a->shape[i] * s : a->shape[i];
    }
    after[d + 1] = s - 1;
    return reshape(B, pad(B, reshape(B, a, s1, nd + 1), before, after), s2, nd);
}

/* dim d of a cut or zero-padded at the end to size n */
static tt_node *fit(tt_gb *B, tt_node *a, int d, int64_t n)
{
    if (!a || a->shape[d] == n) return a;
    int64_t x[TT_MAX_DIMS] = {0}, y[TT_MAX_DIMS];
    if (a->shape[d] > n) {
        for (int i = 0; i < a->ndim; i++) y[i] = i == d ? n : a->shape[i];
        return shrink(B, a, x, y);
    }
    memset(y, 0, sizeof y);
    y[d] = n - a->shape[d];
    return pad(B, a, x, y);
}

/* ** movement ops: each undone on the gradient */
static tt_node *vjp_move(tt_gb *B, const tt_ad *r, tt_node *x, tt_node *g)
{
    tt_node *p = r->src[0]; /* the movement's argument */
    int nd = p->ndim;
    int64_t lo[TT_MAX_DIMS] = {0}, hi[TT_MAX_DIMS] = {0};
    switch (r->mv) {
    case TT_AD_MV_CONTIG: { /* a materialization point backward too: the
                             * gradient lands in the layout the forward copied
                             * into (im2col's matrices, a matmul's operand) */
        tt_node *c = OWN(tt_node_new(NULL, TT_VIEW, (hcq_dtype)g->dtype, g->shape, g->ndim));
        if (!c) return NULL;
        memcpy(c->sym, g->sym, sizeof c->sym);
        tt_view_init(&c->view, g->shape, g->ndim);
        c->contig = true;
        tt_node_ref(g);
        c->src[0] = g;
        c->nsrc = 1;
        return c;
    }
    case TT_AD_MV_COPY:
    case TT_MV_RESHAPE: return reshape(B, g, p->shape, nd);
    case TT_MV_PERMUTE: {
        int inv[TT_MAX_DIMS];
        for (int d = 0; d < nd; d++) inv[r->perm[d]] = d;
        return OWN(tt_mv_permute(g, inv));
    }
    case TT_MV_EXPAND: {
        uint32_t axes = 0;
        for (int d = 0; d < nd; d++)
            if (p->shape[d] != x->shape[d]) axes |= 1u << d;
        return axes ? reduce(B, g, TT_R_SUM, axes) : g;
    }
    case TT_MV_PAD:
    case TT_MV_SHRINK: {
        /* a variable dim the movement changed: put back by a gather
         * (symdim.c); the others by the opposite movement */
        bool var = false;
        int64_t off[TT_MAX_DIMS] = {0};
        for (int d = 0; d < nd; d++) {
            bool v = p->sym[d] && p->sym[d] != x->sym[d];
            var = var || v;
            off[d] = r->mv == TT_MV_PAD ? r->arg[d] : -r->arg[d];
            lo[d] = v ? 0 : r->arg[d];
            hi[d] = v                     ? (r->mv == TT_MV_PAD ? x->shape[d] : 0)
                    : r->mv == TT_MV_PAD ? r->arg[d] + p->shape[d]
                                          : p->shape[d] - r->arg[d] - x->shape[d];
        }
        tt_node *q = r->mv == TT_MV_PAD ? shrink(B, g, lo, hi) : pad(B, g, lo, hi);
        return var && q ? OWN(tt_sym_unmove(q, p, off)) : q;
    }
    case TT_MV_FLIP: return OWN(tt_mv_flip(g, r->axes));
    case TT_MV_STEP: {
        tt_node *y = g;
        bool var = false; /* a variable dim stepped: put back by a gather (symdim.c) */
        for (int d = 0; d < nd; d++) var = var || (p->sym[d] && r->arg[d] > 1);
        if (var && y) y = OWN(tt_sym_unstep(y, p, r->arg));
        for (int d = 0; d < nd; d++)
            if (r->arg[d] > 1 && !p->sym[d]) y = fit(B, interleave(B, y, d, r->arg[d]), d, p->shape[d]);
        return y;
    }
    case TT_MV_WINDOW: {
        /* x [.., o, k, ..] at (axis, axis+1): element (j, w) was p's
         * j*stride + w*dil; each w's slice goes back to its places */
        int ax = r->axis;
        int64_t o = x->shape[ax], k = x->shape[ax + 1];
        if (!o || !k) return cnst(B, p, (hcq_dtype)g->dtype, 0);
        if (r->stride == k && (r->dil == 1 || k == 1)) { /* windows side by side (pooling): a reshape */
            int64_t merged[TT_MAX_DIMS];
            for (int d = 0, e = 0; d < x->ndim; d++)
                if (d == ax + 1) merged[e - 1] *= k;
                else merged[e++] = x->shape[d];
            return fit(B, reshape(B, g, merged, nd), ax, p->shape[ax]);
        }
        int64_t drop[TT_MAX_DIMS];
        for (int d = 0, e = 0; d < x->ndim; d++)
            if (d != ax + 1) drop[e++] = x->shape[d];
        tt_node *sum = NULL;
        for (int64_t w = 0; w < k; w++) {
            int64_t b[TT_MAX_DIMS] = {0}, e[TT_MAX_DIMS], before[TT_MAX_DIMS] = {0}, after[TT_MAX_DIMS] = {0};
            for (int d = 0; d < x->ndim; d++) e[d] = x->shape[d];
            b[ax + 1] = w;
            e[ax + 1] = w + 1;
            tt_node *y = interleave(B, reshape(B, shrink(B, g, b, e), drop, nd), ax, r->stride);
            before[ax] = w * r->dil;
            y = fit(B, w ? pad(B, y, before, after) : y, ax, p->shape[ax]);
            sum = sum ? add(B, sum, y) : y;
        }
        return sum;
    }
    }
    return fail(B, base_err(HCQ_EINVAL, "hcq_backward: internal: unknown movement %d", r->mv));
}

/* ** reductions */
static tt_node *vjp_reduce(tt_gb *B, const tt_ad *r, tt_node *x, tt_node *g)
{
    tt_node *s = r->src[0];
    hcq_dtype dt = (hcq_dtype)s->dtype;
    tt_node *gs = cast(B, g, dt);
    switch ((tt_rop)r->rop) {
    case TT_R_SUM: return expand_as(B, gs, s);
    case TT_R_MAX: {
        tt_node *hit = eq(B, s, expand_as(B, cast(B, x, dt), s));
        tt_node *cnt = reduce(B, cast(B, hit, dt), TT_R_SUM, r->axes);
        return keep(B, hit, expand_as(B, alu2(B, TT_FDIV, gs, cnt), s));
    }
    case TT_R_PROD: {
        tt_node *zero = eq_s(B, s, 0);
        tt_node *nz = expand_as(B, reduce(B, cast(B, zero, dt), TT_R_SUM, r->axes), s);
        tt_node *others = expand_as(B, reduce(B, where(B, zero, cnst(B, s, dt, 1), s), TT_R_PROD, r->axes), s);
        tt_node *no_zero = alu2(B, TT_FDIV, others, s);
        tt_node *one_zero = keep(B, zero, others);
        tt_node *d = where(B, eq_s(B, nz, 0), no_zero, keep(B, eq_s(B, nz, 1), one_zero));
        return mul(B, d, expand_as(B, gs, s));
    }
    }
    return fail(B, base_err(HCQ_EINVAL, "hcq_backward: internal: unknown reduction %d", r->rop));
}

/* ** gather: out[.., j@ax, ..] = a[.., idx[..j..]@ax, ..]; the gradient of
 * a[.., v@ax, ..] sums g where idx == v, over j (a compare against the
 * position along a new axis, then a sum) */
static tt_node *vjp_gather(tt_gb *B, const tt_ad *r, tt_node *g)
{
    tt_node *a = r->src[0], *idx = r->src[1];
    int ax = (int)r->axes, nd = a->ndim;
    if (nd + 1 > TT_MAX_DIMS)
        return fail(B, base_err(HCQ_ENOTSUP, "hcq_backward: the gradient of a gather on a %d-d tensor needs %d dims", nd,
                                nd + 1));
    int64_t e1[TT_MAX_DIMS] = {0}, ex[TT_MAX_DIMS] = {0}, res[TT_MAX_DIMS] = {0};
    uint8_t exs[TT_MAX_DIMS] = {0};
    for (int d = 0, j = 0; d < nd; d++) {
        e1[j] = idx->shape[d];
        exs[j] = idx->sym[d];
        ex[j++] = idx->shape[d];
        if (d == ax) {
            e1[j] = 1;
            exs[j] = a->sym[ax];
            ex[j++] = a->shape[ax];
        }
        res[d] = d == ax ? a->shape[ax] : idx->shape[d];
    }
    tt_node *pos = OWN(tt_node_new(NULL, TT_INDEX, HCQ_I32, ex, nd + 1));
    if (pos) {
        pos->axes = (uint32_t)(ax + 1);
        memcpy(pos->sym, exs, sizeof pos->sym);
    }
    tt_node *hit = eq(B, expand_as(B, reshape(B, idx, e1, nd + 1), pos), pos);
    tt_node *ge = expand_as(B, reshape(B, g, e1, nd + 1), pos);
    tt_node *sum = reduce(B, keep(B, hit, ge), TT_R_SUM, 1u << ax);
    tt_node *y = reshape(B, sum, res, nd);
    for (int d = 0; d < nd; d++)
        if (d != ax) y = fit(B, y, d, a->shape[d]);
    return y;
}

/* ** composite ops with a rule of their own, written with the public ops */
static hcq_tensor *handle(tt_gb *B, tt_node *n)
{
    if (!n) return NULL;
    tt_node_ref(n);
    return tt_wrap(B->ctx, n);
}

static tt_node *take(tt_gb *B, hcq_tensor *t)
{
    if (!t) return fail(B, hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM);
    tt_node_ref(t->n);
    return OWN(t->n);
}

/* pow(x, y), as torch differentiates it: d/dx = y x^(y-1) (0 where y is
 * 0), d/dy = pow(x, y) ln x (0 where x is 0 and y >= 0; NaN for x < 0) */
static void vjp_pow(tt_gb *B, const tt_ad *r, tt_node *out, tt_node *g, const bool need[3], tt_node *c[3])
{
    size_t m = hcq_ctx_mark(B->ctx);
    hcq_ctx *ctx = B->ctx;
    hcq_tensor *x = handle(B, r->src[0]), *y = handle(B, r->src[1]), *gf = hcq_cast(handle(B, g), HCQ_F32);
    hcq_tensor *zero = hcq_scalar(ctx, 0);
    if (need[0]) {
        hcq_tensor *d = hcq_mul(y, hcq_pow(x, hcq_sub_s(y, 1.0)));
        c[0] = take(B, hcq_mul(gf, hcq_where(hcq_eq(y, zero), zero, d)));
    }
    if (need[1]) {
        hcq_tensor *d = hcq_mul(hcq_cast(handle(B, out), HCQ_F32), hcq_log(x));
        hcq_tensor *flat = hcq_logical_and(hcq_eq(x, zero), hcq_ge(y, zero));
        c[1] = take(B, hcq_mul(gf, hcq_where(flat, zero, d)));
    }
    hcq_ctx_release(ctx, m);
}

/* b's last two dims are a transposed view (w^T, as linear passes it) */
static bool k_major(const tt_node *b)
{
    if (b->op != TT_VIEW || b->view.mask || b->ndim < 2) return false;
    int nd = b->view.ndim;
    return b->view.strides[nd - 2] == 1 && b->view.strides[nd - 1] != 1;
}

/* a @ b (2-d, or 3-d with one batch): d a = g @ b^T, d b = a^T @ g, or
 * (g^T @ a)^T when b is a transposed view, so the product lands in the
 * layout the weight is stored in ([out, in] for linear) and the updates
 * read it contiguously. b^T for d a is copied into a buffer of its own
 * when it is a view (a weight: small; a view of a 4-d conv weight costs
 * the tile planner divisions per lane). */
static void vjp_matmul(tt_gb *B, const tt_ad *r, tt_node *g, const bool need[3], tt_node *c[3])
{
    size_t m = hcq_ctx_mark(B->ctx);
    hcq_tensor *a = handle(B, r->src[0]), *b = handle(B, r->src[1]), *gt = handle(B, g);
    hcq_dtype da = (hcq_dtype)r->src[0]->dtype, db = (hcq_dtype)r->src[1]->dtype;
    if (need[0]) c[0] = take(B, hcq_cast(hcq_matmul(gt, hcq_contiguous(hcq_transpose(b, -1, -2))), da));
    if (need[1]) {
        hcq_tensor *d = k_major(r->src[1]) ? hcq_transpose(hcq_matmul(hcq_transpose(gt, -1, -2), a), -1, -2)
                                            : hcq_matmul(hcq_transpose(a, -1, -2), gt);
        c[1] = take(B, hcq_cast(d, db));
    }
    hcq_ctx_release(B->ctx, m);
}

hcq_status tt_ad_vjp(tt_gb *B, tt_node *x, tt_node *g, tt_node *c[3])
{
    const tt_ad *r = x->ad;
    tt_node *s0 = r->nsrc > 0 ? r->src[0] : NULL, *s1 = r->nsrc > 1 ? r->src[1] : NULL;
    bool need[3];
    for (int i = 0; i < 3; i++) need[i] = i < r->nsrc && r->src[i]->ad_state == TT_AD_REC;
    hcq_dtype dt = (hcq_dtype)x->dtype;
    switch ((int)r->op) {
    case TT_BUF: break; /* a leaf */
    case TT_NEG: c[0] = neg(B, g); break;
    case TT_EXP2: c[0] = mul(B, g, mul_s(B, x, M_LN2)); break;
    case TT_LOG2: c[0] = mul(B, g, mul_s(B, alu1(B, TT_RECIP, s0), 1.0 / M_LN2)); break;
    case TT_SIN: c[0] = mul(B, g, alu1(B, TT_SIN, add(B, s0, cnst(B, s0, dt, M_PI_2)))); break;
    case TT_SQRT: c[0] = mul(B, g, mul_s(B, alu1(B, TT_RECIP, x), 0.5)); break;
    case TT_RECIP: c[0] = neg(B, mul(B, g, mul(B, x, x))); break;
    case TT_TRUNC: c[0] = cnst(B, s0, dt, 0); break;
    case TT_CAST: c[0] = cast(B, g, (hcq_dtype)s0->dtype); break;
    case TT_ADD:
        c[0] = g;
        c[1] = g;
        break;
    case TT_SUB:
        c[0] = g;
        if (need[1]) c[1] = neg(B, g);
        break;
    case TT_MUL:
        if (need[0]) c[0] = mul(B, g, s1);
        if (need[1]) c[1] = mul(B, g, s0);
        break;
    case TT_FDIV:
        if (need[0]) c[0] = alu2(B, TT_FDIV, g, s1);
        if (need[1]) c[1] = neg(B, alu2(B, TT_FDIV, mul(B, g, x), s1));
        break;
    case TT_MAX: { /* to the operands equal to the result, split on a tie */
        tt_node *e0 = eq(B, x, s0), *e1 = eq(B, x, s1), *half = mul_s(B, g, 0.5);
        if (need[0]) c[0] = keep(B, e0, where(B, e1, half, g));
        if (need[1]) c[1] = keep(B, e1, where(B, e0, half, g));
        break;
    }
    case TT_WHERE:
        if (need[1]) c[1] = keep(B, s0, g);
        if (need[2]) c[2] = where(B, s0, cnst(B, g, dt, 0), g);
        break;
    case TT_REDUCE: c[0] = vjp_reduce(B, r, x, g); break;
    case TT_GATHER: c[0] = vjp_gather(B, r, g); break;
    case TT_VIEW: c[0] = vjp_move(B, r, x, g); break;
    case TT_AD_POW: vjp_pow(B, r, x, g, need, c); break;
    case TT_AD_MATMUL: vjp_matmul(B, r, g, need, c); break;
    default: return base_err(HCQ_EINVAL, "hcq_backward: internal: op %d has no gradient rule", r->op);
    }
    if (B->err) return B->err;
    for (int i = 0; i < 3; i++)
        if (!need[i]) c[i] = NULL;
        else if (!c[i]) return base_err(HCQ_EINVAL, "hcq_backward: internal: op %d gave source %d no gradient", r->op, i);
    return HCQ_OK;
}
