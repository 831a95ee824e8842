/* The reference's composite ops: matmul and linear, conv2d, pools,
 * softmax, layernorm, gather, each from tensor.h's definition. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ** composites */
/* out[m, n] = sum_k a[m, k] b[k, n], batch dims broadcast; in f32 (halfs)
 * or i32 (bools), rounded once to the promoted dtype */
static tf_rv dot(const tf_rv *x, const tf_rv *y, int64_t K, hcq_dtype cdt, hcq_dtype odt)
{
    if (!is_float(cdt)) {
        uint64_t s = 0; /* modulo 2^64, then wrapped to the accumulator */
        for (int64_t k = 0; k < K; k++) {
            if (dc(x[k]) || dc(y[k])) return ref_rv_dc();
            s += (uint64_t)(int64_t)x[k].v * (uint64_t)(int64_t)y[k].v;
        }
        return ref_rv_exact(odt, ref_wrap(cdt, (int64_t)s));
    }
    tf_rv *prods = calloc((size_t)(K ? K : 1), sizeof *prods);
    for (int64_t k = 0; k < K; k++) {
        tf_rv p = ref_fop(HCQ_F32, F_MUL, x[k], y[k]);
        if (!dc(p) && !dc(x[k]) && !dc(y[k])) { /* the product is fused into the sum: exact in double */
            double v = x[k].v * y[k].v;
            p.v = v;
            p.e = fabs(x[k].v) * y[k].e + fabs(y[k].v) * x[k].e + x[k].e * y[k].e;
            /* an exact zero times an inexact value: zero, but of either sign */
            if (p.e == 0 && (x[k].e > 0 || y[k].e > 0)) p.e = 0x1p-149;
            if (isinf(v) && (x[k].e > 0 || y[k].e > 0)) p = ref_rv_dc();
            if (!isinf(v) && !isnan(v) && fabs(v) >= FLT_MAX) p = ref_rv_dc(); /* overflows in f32 in some order */
        }
        prods[k] = p;
    }
    tf_rv r = ref_fsum(prods, K, HCQ_F32, HCQ_F32);
    free(prods);
    if (dc(r)) return r;
    return r.e > 0 ? ref_rv_approx(odt, r.v, r.e) : ref_rv_exact(odt, tf_round(odt, r.v));
}

bool ref_matmul_op(ctx *c, const tf_tensor *a, const tf_tensor *b, bool b_transposed, const tf_tensor *bias)
{
    if (!a->ndim || !b->ndim) return ref_fail(c, "0-d operand");
    hcq_dtype dt = ref_promote(a, b);
    if (!ref_modeled(dt)) return ref_fail(c, "promotes to %s, which the reference does not model", hcq_dtype_name(dt));
    if (!is_float(dt)) dt = ref_sum_dt(dt);
    hcq_dtype cdt = (dt == HCQ_F16 || dt == HCQ_BF16) ? HCQ_F32 : dt;
    /* a: [..., M, K] (1-d: [K]); b: [..., K, N] (1-d: [K]); linear: b is [N, K] */
    int64_t M = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, K = a->shape[a->ndim - 1];
    int64_t Kb, N;
    if (b_transposed) {
        if (b->ndim != 2) return ref_fail(c, "linear w is not 2-d");
        Kb = b->shape[1], N = b->shape[0];
    } else {
        Kb = b->shape[b->ndim >= 2 ? b->ndim - 2 : 0];
        N = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
    }
    if (K != Kb) return ref_fail(c, "inner dims differ");
    /* batch dims */
    int ab = a->ndim >= 2 ? a->ndim - 2 : 0, bb = b_transposed ? 0 : (b->ndim >= 2 ? b->ndim - 2 : 0);
    int nb = ab > bb ? ab : bb;
    int64_t bs[TF_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int ia = ab - nb + d, ib = bb - nb + d;
        int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) return ref_fail(c, "batch dims do not broadcast");
        bs[d] = sa == 1 ? sb : sa;
    }
    int64_t s[TF_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < nb; d++) s[nd++] = bs[d];
    if (a->ndim >= 2) s[nd++] = M;
    if (b_transposed || b->ndim >= 2) s[nd++] = N;
    if (nd > TF_MAX_DIMS || !ref_shape_ok(c, s, nd)) return ref_fail(c, "shape");
    if (a->ndim + 1 > TF_MAX_DIMS || b->ndim + 1 > TF_MAX_DIMS || nb + 3 > TF_MAX_DIMS) return ref_fail(c, "too many dims for the product");
    hcq_dtype odt = dt;
    /* linear adds the bias after the product, in the promoted dtype */
    tf_tensor *o = ref_out_tensor(c, odt, s, nd);
    tf_rv *x = calloc((size_t)(K ? K : 1), sizeof *x), *y = calloc((size_t)(K ? K : 1), sizeof *y);
    int64_t nbatch = ref_numel(bs, nb), bidx_[TF_MAX_DIMS];
    for (int64_t bt = 0; bt < nbatch; bt++) {
        ref_unravel(bt, bs, nb, bidx_);
        int64_t aoff = 0, boff = 0;
        for (int d = 0; d < ab; d++) aoff = aoff * a->shape[d] + (a->shape[d] == 1 ? 0 : bidx_[nb - ab + d]);
        for (int d = 0; d < bb; d++) boff = boff * b->shape[d] + (b->shape[d] == 1 ? 0 : bidx_[nb - bb + d]);
        for (int64_t m = 0; m < M; m++)
            for (int64_t nn = 0; nn < N; nn++) {
                for (int64_t k = 0; k < K; k++) {
                    x[k] = ref_cast_rv(a->dt, cdt, a->x[(aoff * M + m) * K + k]);
                    int64_t bi = b_transposed ? nn * K + k : (boff * K + k) * N + nn;
                    y[k] = ref_cast_rv(b->dt, cdt, b->x[bi]);
                }
                o->x[(bt * M + m) * N + nn] = dot(x, y, K, cdt, odt);
            }
    }
    free(x);
    free(y);
    (void)bias;
    return true;
}

/* windows: [..., H, W] -> [..., OH, OW] over k x k windows of the padded input */
static int64_t out_size(int64_t s, int64_t k, int64_t st, int64_t pad, int64_t dil)
{
    int64_t ps = s + 2 * pad, span = dil * (k - 1) + 1;
    return ps >= span ? (ps - span) / st + 1 : 0;
}

bool ref_pool_op(ctx *c, const tf_tensor *a, bool is_max)
{
    const tf_inst *in = c->in;
    int64_t k[2] = {in->iv[0], in->iv[1]}, st[2], pad[2] = {in->iv[4], in->iv[5]};
    if (k[0] < 1 || k[1] < 1) return ref_fail(c, "kernel");
    if (a->ndim < 2) return ref_fail(c, "dims");
    if (a->ndim + 2 > TF_MAX_DIMS) return ref_fail(c, "too many dims");
    for (int i = 0; i < 2; i++) {
        st[i] = in->iv[2 + i] ? in->iv[2 + i] : k[i];
        if (st[i] < 0 || pad[i] < 0) return ref_fail(c, "negative");
    }
    int nd = a->ndim;
    int64_t H = a->shape[nd - 2], W = a->shape[nd - 1];
    int64_t OH = out_size(H, k[0], st[0], pad[0], 1), OW = out_size(W, k[1], st[1], pad[1], 1);
    int64_t s[TF_MAX_DIMS];
    for (int d = 0; d < nd - 2; d++) s[d] = a->shape[d];
    s[nd - 2] = OH, s[nd - 1] = OW;
    hcq_dtype dt = a->dt;
    /* avg_pool2d of the narrow integers is not modeled (the header does
     * not say which dtype their window sums in) */
    if (!is_max && is_int(dt) && dt != HCQ_I32) return ref_fail(c, "avg_pool2d of %s not modeled", hcq_dtype_name(dt));
    hcq_dtype odt = is_max ? dt : float_dt(dt);
    hcq_dtype sdt = is_max ? dt : (dt == HCQ_F16 || dt == HCQ_BF16) ? HCQ_F32 : dt; /* avg sums in f32 (halfs) */
    if (!ref_shape_ok(c, s, nd)) return false;
    tf_tensor *o = ref_out_tensor(c, odt, s, nd);
    int64_t outer = ref_numel(s, nd - 2), kk = k[0] * k[1];
    tf_rv *w = calloc((size_t)kk, sizeof *w);
    tf_rv padv = is_max ? (is_float(dt) ? ref_rv_exact(dt, NAN) : dt == HCQ_BOOL ? ref_rv_exact(dt, 0) : ref_rv_exact(dt, ref_int_lo(dt)))
                        : ref_rv_exact(sdt, 0);
    for (int64_t ob = 0; ob < outer; ob++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                for (int64_t i = 0; i < k[0]; i++)
                    for (int64_t j = 0; j < k[1]; j++) {
                        int64_t h = oh * st[0] + i - pad[0], x = ow * st[1] + j - pad[1];
                        bool inside = h >= 0 && h < H && x >= 0 && x < W;
                        w[i * k[1] + j] = inside ? ref_cast_rv(dt, sdt, a->x[(ob * H + h) * W + x]) : padv;
                    }
                tf_rv r;
                if (is_max) {
                    red_u u = {.o = o, .op = TF_MAX, .acc = dt, .odt = dt};
                    ref_red_visit_fn(&u, (ob * OH + oh) * OW + ow, w, NULL, kk);
                    continue;
                }
                if (sdt == HCQ_BOOL || sdt == HCQ_I32) { /* i32 sum, then f32 division */
                    uint32_t si = 0;
                    bool bad = false;
                    for (int64_t i = 0; i < kk; i++) {
                        if (dc(w[i])) bad = true;
                        si += (uint32_t)(int32_t)w[i].v;
                    }
                    r = bad ? ref_rv_dc() : ref_rv_exact(odt, ref_op_round(HCQ_F32, (double)(float)(int32_t)si / (double)(float)kk));
                } else {
                    tf_rv sum = ref_fsum(w, kk, HCQ_F32, HCQ_F32);
                    if (dc(sum)) r = sum;
                    else if (sum.e == 0) r = ref_rv_exact(odt, ref_op_round(odt, (double)(float)sum.v / (double)(float)kk));
                    else r = ref_rv_approx(odt, sum.v / (double)kk, sum.e / (double)kk);
                }
                o->x[(ob * OH + oh) * OW + ow] = r;
            }
    free(w);
    return true;
}

bool ref_conv_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *bias)
{
    const tf_inst *in = c->in;
    int64_t st[2] = {in->iv[0] ? in->iv[0] : 1, in->iv[1] ? in->iv[1] : 1}, pad[2] = {in->iv[2], in->iv[3]};
    int64_t dil[2] = {in->iv[4] ? in->iv[4] : 1, in->iv[5] ? in->iv[5] : 1}, g = in->iv[6] ? in->iv[6] : 1;
    for (int i = 0; i < 2; i++)
        if (st[i] < 0 || dil[i] < 0 || pad[i] < 0) return ref_fail(c, "negative");
    if (x->ndim != 4 || w->ndim != 4) return ref_fail(c, "not 4-d");
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], O = w->shape[0];
    if (g < 1 || C % g || O % g || w->shape[1] != C / g) return ref_fail(c, "groups");
    hcq_dtype dt = ref_promote(x, w);
    /* conv2d of the narrow integers is not modeled (the header states no
     * accumulation dtype for it); bool, i32 and the floats are */
    if (!ref_modeled(dt) || (is_int(dt) && dt != HCQ_I32) || (bias && is_int(bias->dt) && bias->dt != HCQ_I32))
        return ref_fail(c, "conv2d in %s not modeled", hcq_dtype_name(dt));
    if (bias) {
        if (bias->ndim != 1 || bias->shape[0] != O) return ref_fail(c, "bias");
    }
    hcq_dtype cdt = dt == HCQ_F16 || dt == HCQ_BF16 ? HCQ_F32 : dt == HCQ_BOOL ? HCQ_I32 : dt;
    int64_t KH = w->shape[2], KW = w->shape[3];
    int64_t OH = out_size(H, KH, st[0], pad[0], dil[0]), OW = out_size(W, KW, st[1], pad[1], dil[1]);
    int64_t s[4] = {N, O, OH, OW};
    if (!ref_shape_ok(c, s, 4)) return false;
    hcq_dtype odt = dt; /* the sum and the bias add in cdt, then one cast to dt */
    tf_tensor *o = ref_out_tensor(c, odt, s, 4);
    int64_t Cg = C / g, Og = O / g, K = Cg * KH * KW;
    tf_rv *xa = calloc((size_t)(K + 1), sizeof *xa), *wa = calloc((size_t)(K + 1), sizeof *wa);
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t gi = oc / Og, k = 0;
                    for (int64_t ci = 0; ci < Cg; ci++)
                        for (int64_t i = 0; i < KH; i++)
                            for (int64_t j = 0; j < KW; j++, k++) {
                                int64_t h = oh * st[0] + i * dil[0] - pad[0], ww = ow * st[1] + j * dil[1] - pad[1];
                                bool inside = h >= 0 && h < H && ww >= 0 && ww < W;
                                int64_t cc = gi * Cg + ci;
                                xa[k] = inside ? ref_cast_rv(x->dt, cdt, x->x[((n * C + cc) * H + h) * W + ww]) : ref_rv_exact(cdt, 0);
                                wa[k] = ref_cast_rv(w->dt, cdt, w->x[((oc * Cg + ci) * KH + i) * KW + j]);
                            }
                    tf_rv r = dot(xa, wa, K, cdt, cdt);
                    if (bias) r = ref_bin_el(cdt, TF_ADD, r, ref_cast_rv(bias->dt, cdt, bias->x[oc]));
                    o->x[((n * O + oc) * OH + oh) * OW + ow] = ref_cast_rv(cdt, odt, r);
                }
    free(xa);
    free(wa);
    return true;
}

/* softmax/log_softmax along one axis, in f32: d = x - max(x) (maxNum),
 * e = exp(d), s = sum(e); e / s or d - log(s). A NaN anywhere in the row,
 * or an infinite maximum, makes some d NaN, so s and every output NaN. */
bool ref_softmax_op(ctx *c, const tf_tensor *a, int axis, bool lg)
{
    int ax = axis_of(axis, a->ndim);
    if (ax < 0 || ax >= a->ndim) return ref_fail(c, "axis");
    hcq_dtype odt = float_dt(a->dt);
    tf_tensor *o = ref_out_tensor(c, odt, a->shape, a->ndim);
    int64_t L = a->shape[ax], inner = 1, outer = 1;
    for (int d = ax + 1; d < a->ndim; d++) inner *= a->shape[d];
    for (int d = 0; d < ax; d++) outer *= a->shape[d];
    for (int64_t ob = 0; ob < outer; ob++)
        for (int64_t ib = 0; ib < inner; ib++) {
#define AT(l) ((ob * L + (l)) * inner + ib)
            double m = NAN, e = 0;
            bool anydc = false, nan = false;
            for (int64_t l = 0; l < L; l++) {
                tf_rv v = ref_cast_rv(a->dt, HCQ_F32, a->x[AT(l)]);
                if (dc(v)) anydc = true;
                if (isnan(v.v)) nan = true;
                m = ref_maxnum(m, v.v);
                if (v.e > e) e = v.e;
            }
            if (!anydc && (nan || isinf(m))) {
                for (int64_t l = 0; l < L; l++) o->x[AT(l)] = ref_rv_exact(odt, NAN);
                continue;
            }
            double s = 0, D = 0;
            for (int64_t l = 0; l < L; l++) {
                double d = ref_cast_rv(a->dt, HCQ_F32, a->x[AT(l)]).v - m;
                s += exp(d);
                if (fabs(d) > D) D = fabs(d);
            }
            /* each exp's relative error: its argument rounds at |d| (and
             * through exp2's scaling), the inputs move d by 2e */
            double te = (3 * D + 10) * EPS32 + (exp(2 * e) - 1) * 1.01;
            double se = te + ((double)L + 2) * EPS32;
            for (int64_t l = 0; l < L; l++) {
                if (anydc) {
                    o->x[AT(l)] = ref_rv_dc();
                    continue;
                }
                double d = ref_cast_rv(a->dt, HCQ_F32, a->x[AT(l)]).v - m;
                double r = lg ? d - log(s) : exp(d) / s;
                double err = lg ? (fabs(d) + 2 * e) * 2 * EPS32 + 2 * e + se * 1.01 + (fabs(d) + log(s)) * 2 * EPS32 + 4 * EPS32
                                : fabs(r) * (te + se + 2 * EPS32) * 1.01 + 0x1p-149 * 4;
                o->x[AT(l)] = ref_rv_approx(odt, r, err);
            }
#undef AT
        }
    return true;
}

bool ref_layernorm_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *b)
{
    const tf_inst *in = c->in;
    int na = in->ia;
    if (na < 1 || na > x->ndim) return ref_fail(c, "naxes");
    hcq_dtype odt = float_dt(x->dt);
    int64_t L = 1;
    for (int d = x->ndim - na; d < x->ndim; d++) L *= x->shape[d];
    int64_t outer = L ? x->n / L : 0;
    /* w and b broadcast against x's shape (numpy rules) */
    int64_t s[TF_MAX_DIMS];
    int nd;
    const tf_tensor *ins[3] = {x, w ? w : x, b ? b : x};
    if (!ref_bshape(c, ins, 3, s, &nd)) return false;
    for (int d = 0; d < nd; d++)
        if (nd != x->ndim || s[d] != x->shape[d]) return ref_fail(c, "w/b broadcast beyond x");
    hcq_dtype wdt = HCQ_F32;
    if (w) wdt = ref_join(wdt, w->dt);
    if (b) wdt = ref_join(wdt, b->dt);
    tf_tensor *o = ref_out_tensor(c, odt, x->shape, x->ndim);
    int64_t idx[TF_MAX_DIMS];
    double eps = (double)(float)in->fv;
    for (int64_t r = 0; r < outer; r++) {
        double sum = 0, abs = 0, e = 0, mx = 0;
        bool anydc = false, special = false;
        for (int64_t l = 0; l < L; l++) {
            tf_rv v = ref_cast_rv(x->dt, HCQ_F32, x->x[r * L + l]);
            if (dc(v)) anydc = true;
            if (!isfinite(v.v)) special = true;
            sum += v.v, abs += fabs(v.v), e = v.e > e ? v.e : e, mx = fabs(v.v) > mx ? fabs(v.v) : mx;
        }
        double mean = sum / (double)L, var = 0;
        for (int64_t l = 0; l < L; l++) {
            double d = ref_cast_rv(x->dt, HCQ_F32, x->x[r * L + l]).v - mean;
            var += d * d;
        }
        var /= (double)L;
        double rs = 1.0 / sqrt((double)(float)(var) + eps);
        double em = e + (double)(L + 3) * EPS32 * (abs / (double)L) * 2;
        bool overflow = mx * mx * (double)L >= FLT_MAX / 4 || (double)(float)(var + eps) == 0;
        for (int64_t l = 0; l < L; l++) {
            int64_t at = r * L + l;
            ref_unravel(at, x->shape, x->ndim, idx);
            tf_rv wv = w ? ref_cast_rv(w->dt, wdt, w->x[ref_bidx(w, idx, x->ndim)]) : ref_rv_exact(HCQ_F32, 1);
            tf_rv bv = b ? ref_cast_rv(b->dt, wdt, b->x[ref_bidx(b, idx, x->ndim)]) : ref_rv_exact(HCQ_F32, 0);
            if (anydc) {
                o->x[at] = ref_rv_dc();
                continue;
            }
            if (special || isnan(eps)) { /* the row's variance is NaN */
                o->x[at] = ref_rv_exact(odt, NAN);
                continue;
            }
            double cx = ref_cast_rv(x->dt, HCQ_F32, x->x[at]).v - mean;
            double y = cx * rs * wv.v + bv.v;
            if (dc(wv) || dc(bv) || overflow || isnan(y) || !(var + eps > 0) || wv.e > 0 || bv.e > 0 || isinf(wv.v) || isinf(bv.v)) {
                o->x[at] = ref_rv_dc();
                continue;
            }
            /* c's error is the mean's; the variance's relative error moves rsqrt */
            double evar = (2 * sqrt(var) * em + (double)(L + 4) * 4 * EPS32 * var) + 0.0;
            double erel = evar / (var + eps) * 0.5 + 8 * EPS32;
            double ey = (em * rs + fabs(cx * rs) * erel) * fabs(wv.v) + fabs(cx * rs) * wv.e + bv.e + fabs(y) * 4 * EPS32;
            o->x[at] = ref_rv_approx(odt, y, ey + 4 * EPS32 * fabs(bv.v) + 0x1p-149); /* never exact: not even a zero's sign */
        }
    }
    return true;
}

bool ref_gather_op(ctx *c, const tf_tensor *a, int axis, const tf_tensor *idx)
{
    int ax = axis_of(axis, a->ndim);
    if (ax < 0 || ax >= a->ndim) return ref_fail(c, "axis");
    if (idx->dt != HCQ_I32) return ref_fail(c, "indexes not i32");
    if (idx->ndim != a->ndim) return ref_fail(c, "ranks differ");
    for (int d = 0; d < a->ndim; d++)
        if (d != ax && idx->shape[d] > a->shape[d]) return ref_fail(c, "index dim too large");
    tf_tensor *o = ref_out_tensor(c, a->dt, idx->shape, idx->ndim);
    int64_t ii[TF_MAX_DIMS];
    for (int64_t i = 0; i < o->n; i++) {
        tf_rv k = idx->x[i];
        if (dc(k)) {
            o->x[i] = ref_rv_dc();
            continue;
        }
        ref_unravel(i, idx->shape, idx->ndim, ii);
        int64_t kv = (int64_t)k.v;
        if (kv < 0 || kv >= a->shape[ax]) {
            o->x[i] = ref_const_rv(a->dt, 0);
            continue;
        }
        ii[ax] = kv;
        o->x[i] = a->x[ref_ravel(ii, a->shape, a->ndim)];
    }
    return true;
}
