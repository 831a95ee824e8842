/* Composite operations, written with the public ops inside a scope (the
 * helper tensors are freed; only the result's graph survives). Matmul and
 * convolution are a broadcast multiply and a sum: the scheduler fuses them
 * into one reduction kernel and the lowering tiles it. */
#include "tensor/tt.h"

#include <math.h>
#include <string.h>

static bool is_half(hcq_dtype t) { return t == HCQ_F16 || t == HCQ_BF16; }

/* b [.., K, N] is a view whose K dim is contiguous and N is not */
static bool k_major(const tt_node *b)
{
    while (b->op == TT_CAST) b = b->src[0];
    if (b->op != TT_VIEW || b->view.mask) return false;
    int nd = b->view.ndim;
    return b->view.strides[nd - 2] == 1 && b->view.strides[nd - 1] != 1;
}

hcq_tensor *hcq_matmul(hcq_tensor *ta, hcq_tensor *tb)
{
    const char *fn = "hcq_matmul";
    tt_node *a = tt_arg(ta, fn), *b = a ? tt_arg(tb, fn) : NULL;
    if (!b) return NULL;
    hcq_ctx *ctx = ta->ctx;
    if (tb->ctx != ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
    if (!a->ndim || !b->ndim) return base_err(HCQ_EINVAL, "%s: operands must have at least 1 dim", fn), NULL;
    int64_t K = a->shape[a->ndim - 1], Kb = b->shape[b->ndim >= 2 ? b->ndim - 2 : 0];
    if (K != Kb) {
        char da[TT_DESC_MAX], db[TT_DESC_MAX];
        return base_err(HCQ_EINVAL, "%s: a %s and b %s: the inner dims differ: %lld (a's last) and %lld (b's %s)", fn,
                        tt_desc(a, da, sizeof da), tt_desc(b, db, sizeof db), (long long)K, (long long)Kb,
                        b->ndim >= 2 ? "second to last" : "only"),
               NULL;
    }
    /* integers: products and sums in the sum dtype (i32 for bool, i8, i16;
     * u32 for u8, u16), which is also the result's; halfs in f32, rounded once */
    hcq_dtype dt = tt_sum_dtype(tt_promote(a, b));
    hcq_dtype cdt = is_half(dt) ? HCQ_F32 : dt;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *x = hcq_cast(ta, cdt), *y = hcq_cast(tb, cdt), *x0 = x, *y0 = y;
    if (a->ndim == 1) x = hcq_unsqueeze(x, 0);
    if (b->ndim == 1) y = hcq_unsqueeze(y, 1);
    /* CPU-style targets vectorize along a contiguous output dim (the
     * register tile in lower.c). A K-major b (x @ w^T, as linear makes) has
     * none, so copy it to N-major first when the product amortizes it. The
     * copy of a weight is made once and kept until the weight is written
     * (layout.c), so a forward pass does not copy its weights again. */
    /* (a variable M counts at its upper bound: one graph for every value) */
    int64_t M = a->ndim >= 2 ? tt_dim_upper(ctx, a, a->ndim - 2) : 1, N = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
    if (ctx->cpu_style && b->ndim >= 2 && M >= 16 && N >= 16 && k_major(b)) {
        y = hcq_contiguous(y);
        if (y && y->n->op == TT_VIEW && y->n->contig) y->n->relayout = true;
    }
    /* x [..., M, K] -> [..., M, 1, K]; y [..., K, N] -> [..., 1, N, K] */
    hcq_tensor *xa = hcq_unsqueeze(x, -2);
    hcq_tensor *yb = hcq_unsqueeze(hcq_transpose(y, -1, -2), -3);
    hcq_tensor *r = hcq_sum(hcq_mul(xa, yb), HCQ_AXES(-1), false);
    if (a->ndim == 1) r = hcq_squeeze(r, -2);
    if (b->ndim == 1) r = hcq_squeeze(r, -1);
    hcq_tensor *res = hcq_cast(r, dt);
    /* gradients as matmuls of the operands as given, not of the copy above */
    if (a->ndim == b->ndim && (a->ndim == 2 || (a->ndim == 3 && a->shape[0] == b->shape[0])) && hcq_dtype_is_float(cdt))
        tt_ad_custom(res, TT_AD_MATMUL, (hcq_tensor *[]){x0, y0}, 2);
    return tt_scope_end(ctx, m, "hcq_matmul", res);
}

hcq_tensor *hcq_linear(hcq_tensor *x, hcq_tensor *w, hcq_tensor *bias)
{
    const char *fn = "hcq_linear";
    tt_node *n = tt_arg(x, fn), *wn = n ? tt_arg(w, fn) : NULL, *bn = wn && bias ? tt_arg(bias, fn) : NULL;
    if (!wn || (bias && !bn)) return NULL;
    char dx[TT_DESC_MAX], dw[TT_DESC_MAX], db[TT_DESC_MAX];
    tt_desc(n, dx, sizeof dx), tt_desc(wn, dw, sizeof dw);
    if (wn->ndim != 2) return base_err(HCQ_EINVAL, "%s: w is %s; it must be 2-d, [out, in]", fn, dw), NULL;
    if (!n->ndim || n->shape[n->ndim - 1] != wn->shape[1])
        return base_err(HCQ_EINVAL, "%s: x %s does not fit w %s ([out, in]): x's last dim must be in = %lld", fn, dx, dw,
                        (long long)wn->shape[1]),
               NULL;
    /* bias broadcasts over x @ w^T [..., out]: its last dim is out (or 1) */
    if (bn && (!bn->ndim || (bn->shape[bn->ndim - 1] != wn->shape[0] && bn->shape[bn->ndim - 1] != 1)))
        return base_err(HCQ_EINVAL, "%s: bias %s does not fit w %s ([out, in]): it must broadcast to [..., out], "
                        "e.g. [out] = [%lld]", fn, tt_desc(bn, db, sizeof db), dw, (long long)wn->shape[0]),
               NULL;
    hcq_ctx *ctx = x->ctx;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *r = hcq_matmul(x, hcq_transpose(w, 0, 1));
    if (bias) r = hcq_add(r, bias);
    return tt_scope_end(ctx, m, "hcq_linear", r);
}

/* [..., H, W] -> [..., OH, OW, KH, KW] windows of a padded input */
static hcq_tensor *windows(hcq_tensor *x, const int k[2], const int st[2], const int pad[2], const int dil[2], double padval)
{
    hcq_ctx *ctx = x->ctx;
    int nd = x->n->ndim;
    int64_t pads[2 * TT_MAX_DIMS] = {0};
    pads[2 * (nd - 2)] = pads[2 * (nd - 2) + 1] = pad[0];
    pads[2 * (nd - 1)] = pads[2 * (nd - 1) + 1] = pad[1];
    hcq_tensor *p = hcq_pad(x, pads, nd, padval);
    if (!p) return NULL;
    if (nd + 2 > TT_MAX_DIMS) return base_err(HCQ_ENOTSUP, "windows of a %d-d tensor need more than %d dims", nd, TT_MAX_DIMS), NULL;
    tt_node *h = tt_mv_window(p->n, nd - 2, k[0], st[0], dil[0]); /* [..., OH, KH, W'] */
    tt_node *w = h ? tt_mv_window(h, nd, k[1], st[1], dil[1]) : NULL; /* [..., OH, KH, OW, KW] */
    tt_node_unref(h);
    hcq_tensor *t = tt_wrap(ctx, w);
    int perm[TT_MAX_DIMS];
    for (int d = 0; d < nd - 2; d++) perm[d] = d;
    perm[nd - 2] = nd - 2;
    perm[nd - 1] = nd;
    perm[nd] = nd - 1;
    perm[nd + 1] = nd + 1;
    return hcq_permute(t, perm, nd + 2);
}

hcq_tensor *hcq_conv2d(hcq_tensor *x, hcq_tensor *w, hcq_tensor *bias, const hcq_conv2d_opts *opts)
{
    const char *fn = "hcq_conv2d";
    tt_node *nx = tt_arg(x, fn), *nw = nx ? tt_arg(w, fn) : NULL;
    if (!nw) return NULL;
    hcq_conv2d_opts o = opts ? *opts : (hcq_conv2d_opts){{0}};
    int g = o.groups ? o.groups : 1;
    for (int i = 0; i < 2; i++) {
        if (!o.stride[i]) o.stride[i] = 1;
        if (!o.dilation[i]) o.dilation[i] = 1;
        if (o.stride[i] < 0 || o.dilation[i] < 0 || o.padding[i] < 0)
            return base_err(HCQ_EINVAL, "%s: negative stride, dilation or padding", fn), NULL;
    }
    if (nx->ndim != 4 || nw->ndim != 4)
        return base_err(HCQ_EINVAL, "%s: x [N, C, H, W] and w [O, C/groups, KH, KW] must be 4-d (got %d-d and %d-d)", fn,
                        nx->ndim, nw->ndim),
               NULL;
    int64_t N = nx->shape[0], C = nx->shape[1], O = nw->shape[0];
    if (g < 1 || C % g || O % g || nw->shape[1] != C / g)
        return base_err(HCQ_EINVAL, "%s: %lld input channels, %lld output channels, groups %d and w's dim 1 (%lld) do not fit",
                        fn, (long long)C, (long long)O, g, (long long)nw->shape[1]),
               NULL;
    hcq_ctx *ctx = x->ctx;
    size_t m = hcq_ctx_mark(ctx);
    hcq_dtype dt = tt_promote(nx, nw), cdt = is_half(dt) ? HCQ_F32 : tt_sum_dtype(dt);
    int k[2] = {(int)nw->shape[2], (int)nw->shape[3]};
    if (ctx->cpu_style && O / g >= 8) { /* a matrix product: register tiles along the output channels */
        hcq_tensor *r = tt_conv2d_im2col(hcq_cast(x, cdt), hcq_cast(w, cdt), o.stride, o.padding, o.dilation, g);
        if (bias) r = hcq_add(r, hcq_reshape(hcq_cast(bias, cdt), HCQ_SHAPE(1, O, 1, 1)));
        return tt_scope_end(ctx, m, "hcq_conv2d", hcq_cast(r, dt));
    }
    hcq_tensor *win = windows(hcq_cast(x, cdt), k, o.stride, o.padding, o.dilation, 0.0); /* [N, C, OH, OW, KH, KW] */
    int64_t OH = hcq_tensor_dim(win, 2), OW = hcq_tensor_dim(win, 3);
    hcq_tensor *xw = hcq_reshape(win, HCQ_SHAPE(N, g, 1, C / g, OH, OW, k[0], k[1]));
    hcq_tensor *ww = hcq_reshape(hcq_cast(w, cdt), HCQ_SHAPE(1, g, O / g, C / g, 1, 1, k[0], k[1]));
    hcq_tensor *r = hcq_sum(hcq_mul(xw, ww), HCQ_AXES(3, 6, 7), false); /* [N, g, O/g, OH, OW] */
    r = hcq_reshape(r, HCQ_SHAPE(N, O, OH, OW));
    if (bias) r = hcq_add(r, hcq_reshape(hcq_cast(bias, cdt), HCQ_SHAPE(1, O, 1, 1)));
    return tt_scope_end(ctx, m, "hcq_conv2d", hcq_cast(r, dt));
}

static hcq_tensor *pool(hcq_tensor *x, const hcq_pool2d_opts *opts, bool is_max, const char *fn)
{
    tt_node *n = tt_arg(x, fn);
    if (!n) return NULL;
    if (!opts || opts->kernel[0] < 1 || opts->kernel[1] < 1)
        return base_err(HCQ_EINVAL, "%s: opts with a kernel size of at least 1 are required", fn), NULL;
    if (n->ndim < 2) return base_err(HCQ_EINVAL, "%s: needs at least 2 dims, got %d", fn, n->ndim), NULL;
    int st[2], dil[2] = {1, 1};
    for (int i = 0; i < 2; i++) {
        st[i] = opts->stride[i] ? opts->stride[i] : opts->kernel[i];
        if (st[i] < 0 || opts->padding[i] < 0) return base_err(HCQ_EINVAL, "%s: negative stride or padding", fn), NULL;
    }
    hcq_ctx *ctx = x->ctx;
    size_t m = hcq_ctx_mark(ctx);
    hcq_dtype dt = (hcq_dtype)n->dtype;
    /* max: the padding must never win. For floats that is NaN (maxNum
     * drops it, so a window of NaNs stays NaN where -inf would win); for
     * bool false (INT_MIN would cast to true); for integers their least
     * value (INT_MIN, 0 for unsigned ones). */
    double padval = 0.0;
    if (is_max && hcq_dtype_is_float(dt)) padval = NAN;
    else if (is_max && hcq_dtype_is_signed(dt)) padval = -ldexp(1.0, (int)hcq_dtype_size(dt) * 8 - 1);
    hcq_tensor *src = is_max ? x : hcq_cast(x, is_half(dt) ? HCQ_F32 : dt);
    hcq_tensor *w = windows(src, opts->kernel, st, opts->padding, dil, padval);
    int nd = n->ndim;
    int axes[2] = {nd, nd + 1};
    hcq_tensor *r;
    if (is_max)
        r = hcq_max(w, axes, 2, false);
    else
        r = hcq_cast(hcq_div_s(hcq_sum(w, axes, 2, false), (double)opts->kernel[0] * opts->kernel[1]), tt_float_of(dt));
    return tt_scope_end(ctx, m, fn, r);
}

hcq_tensor *hcq_avg_pool2d(hcq_tensor *x, const hcq_pool2d_opts *opts) { return pool(x, opts, false, "hcq_avg_pool2d"); }
hcq_tensor *hcq_max_pool2d(hcq_tensor *x, const hcq_pool2d_opts *opts) { return pool(x, opts, true, "hcq_max_pool2d"); }

static hcq_tensor *softmax_impl(hcq_tensor *t, int axis, bool log, const char *fn)
{
    tt_node *n = tt_arg(t, fn);
    if (!n) return NULL;
    int ax = tt_axis(axis, n->ndim, fn);
    if (ax < 0) return NULL;
    hcq_ctx *ctx = t->ctx;
    hcq_dtype dt = tt_float_of((hcq_dtype)n->dtype);
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *x = hcq_cast(t, tt_calc_float(dt));
    hcq_tensor *d = hcq_sub(x, hcq_max(x, &ax, 1, true));
    hcq_tensor *e = hcq_exp(d);
    hcq_tensor *s = hcq_sum(e, &ax, 1, true);
    hcq_tensor *r = log ? hcq_sub(d, hcq_log(s)) : hcq_div(e, s);
    return tt_scope_end(ctx, m, fn, hcq_cast(r, dt));
}

hcq_tensor *hcq_softmax(hcq_tensor *a, int axis) { return softmax_impl(a, axis, false, "hcq_softmax"); }
hcq_tensor *hcq_log_softmax(hcq_tensor *a, int axis) { return softmax_impl(a, axis, true, "hcq_log_softmax"); }

hcq_tensor *hcq_layernorm(hcq_tensor *x, int naxes, hcq_tensor *w, hcq_tensor *b, double eps)
{
    const char *fn = "hcq_layernorm";
    tt_node *n = tt_arg(x, fn);
    if (!n) return NULL;
    if (naxes < 1 || naxes > n->ndim)
        return base_err(HCQ_EINVAL, "%s: normalizing over %d axes of a %d-d tensor", fn, naxes, n->ndim), NULL;
    hcq_ctx *ctx = x->ctx;
    int axes[TT_MAX_DIMS];
    for (int i = 0; i < naxes; i++) axes[i] = n->ndim - naxes + i;
    hcq_dtype dt = tt_float_of((hcq_dtype)n->dtype);
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *xf = hcq_cast(x, tt_calc_float(dt));
    hcq_tensor *c = hcq_sub(xf, hcq_mean(xf, axes, naxes, true));
    hcq_tensor *v = hcq_mean(hcq_mul(c, c), axes, naxes, true);
    hcq_tensor *y = hcq_mul(c, hcq_rsqrt(hcq_add_s(v, eps)));
    if (w) y = hcq_mul(y, w);
    if (b) y = hcq_add(y, b);
    return tt_scope_end(ctx, m, "hcq_layernorm", hcq_cast(y, dt));
}

hcq_tensor *hcq_gather(hcq_tensor *ta, int axis, hcq_tensor *tidx)
{
    const char *fn = "hcq_gather";
    tt_node *a = tt_arg(ta, fn), *idx = a ? tt_arg(tidx, fn) : NULL;
    if (!idx) return NULL;
    if (ta->ctx != tidx->ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
    int ax = tt_axis(axis, a->ndim, fn);
    if (ax < 0) return NULL;
    char da[TT_DESC_MAX], di[TT_DESC_MAX];
    tt_desc(a, da, sizeof da), tt_desc(idx, di, sizeof di);
    if (!hcq_dtype_is_int((hcq_dtype)idx->dtype))
        return base_err(HCQ_EINVAL, "%s: the indexes are %s; they must be an integer dtype", fn, di), NULL;
    if (idx->dtype != HCQ_I32) { /* any integer dtype: as i32, one beyond it out of range (-1) */
        hcq_ctx *ctx = ta->ctx;
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *i32 = hcq_cast(tidx, HCQ_I32);
        if (hcq_dtype_size((hcq_dtype)idx->dtype) >= 4 && idx->dtype != HCQ_I32)
            i32 = hcq_where(hcq_logical_and(hcq_ge(tidx, hcq_scalar(ctx, 0)), hcq_le(tidx, hcq_scalar(ctx, INT32_MAX))),
                            i32, hcq_scalar(ctx, -1));
        return tt_scope_end(ctx, m, fn, hcq_gather(ta, axis, i32));
    }
    if (idx->ndim != a->ndim)
        return base_err(HCQ_EINVAL, "%s: the indexes %s and the tensor %s must have as many dims", fn, di, da), NULL;
    for (int d = 0; d < a->ndim; d++)
        if (d != ax && idx->shape[d] > a->shape[d])
            return base_err(HCQ_EINVAL, "%s: the indexes %s are larger than the tensor %s in dim %d", fn, di, da, d),
                   NULL;
    for (int d = 0; d < a->ndim; d++) /* variable dims (hcq_jit_dim): the indexes' and the table's agree */
        if (d != ax && a->sym[d] != idx->sym[d])
            return base_err(HCQ_ENOTSUP, "%s: dim %d is a variable size in one of the tensor and the indexes but not in the other", fn,
                            d),
                   NULL;
    tt_node *g = tt_gather_node(a, ax, idx);
    return g ? tt_wrap(ta->ctx, g) : NULL;
}

hcq_tensor *hcq_embedding(hcq_tensor *weight, hcq_tensor *idx)
{
    const char *fn = "hcq_embedding";
    tt_node *w = tt_arg(weight, fn), *i = w ? tt_arg(idx, fn) : NULL;
    if (!i) return NULL;
    char dw[TT_DESC_MAX], di[TT_DESC_MAX];
    tt_desc(w, dw, sizeof dw), tt_desc(i, di, sizeof di);
    if (w->ndim != 2) return base_err(HCQ_EINVAL, "%s: weight is %s; it must be 2-d, [V, D]", fn, dw), NULL;
    if (!hcq_dtype_is_int((hcq_dtype)i->dtype))
        return base_err(HCQ_EINVAL, "%s: idx is %s; it holds rows of weight %s, so it must be an integer dtype", fn, di,
                        dw),
               NULL;
    if (i->ndim + 1 > TT_MAX_DIMS) return base_err(HCQ_EINVAL, "%s: indexes have %d dims; at most %d", fn, i->ndim, TT_MAX_DIMS - 1), NULL;
    hcq_ctx *ctx = weight->ctx;
    int64_t D = w->shape[1], cnt = tt_numel(i->shape, i->ndim);
    int64_t shape[TT_MAX_DIMS];
    memcpy(shape, i->shape, sizeof shape);
    shape[i->ndim] = D;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *flat = hcq_expand(hcq_reshape(idx, HCQ_SHAPE(cnt, 1)), HCQ_SHAPE(cnt, D));
    hcq_tensor *g = hcq_gather(weight, 0, flat);
    return tt_scope_end(ctx, m, "hcq_embedding", hcq_reshape(g, shape, i->ndim + 1));
}

hcq_tensor *hcq_cross_entropy(hcq_tensor *logits, hcq_tensor *target)
{
    const char *fn = "hcq_cross_entropy";
    tt_node *l = tt_arg(logits, fn), *t = l ? tt_arg(target, fn) : NULL;
    if (!t) return NULL;
    char dl[TT_DESC_MAX], dt[TT_DESC_MAX];
    tt_desc(l, dl, sizeof dl), tt_desc(t, dt, sizeof dt);
    if (l->ndim != 2 || t->ndim != 1 || l->shape[0] != t->shape[0])
        return base_err(HCQ_EINVAL, "%s: logits %s and target %s: logits must be [N, C] and target [N]", fn, dl, dt),
               NULL;
    if (!hcq_dtype_is_int((hcq_dtype)t->dtype))
        return base_err(HCQ_EINVAL, "%s: target is %s; it holds class indexes into logits %s, so it must be an integer dtype", fn,
                        dt, dl),
               NULL;
    hcq_ctx *ctx = logits->ctx;
    int64_t N = l->shape[0];
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *lp = hcq_log_softmax(logits, 1);
    hcq_tensor *picked = hcq_gather(lp, 1, hcq_reshape(target, HCQ_SHAPE(N, 1)));
    hcq_tensor *total = hcq_neg(hcq_sum(picked, HCQ_ALL_AXES, false)), *loss;
    if (l->sym[0]) /* a variable batch (hcq_jit_dim): divided by its value, rounded to the dtype as the scalar would be */
        loss = hcq_div(total, hcq_cast(tt_wrap(ctx, tt_sym_count(ctx, l, 1u)), hcq_tensor_dtype(total)));
    else
        loss = hcq_div_s(total, (double)N);
    return tt_scope_end(ctx, m, "hcq_cross_entropy", loss);
}
