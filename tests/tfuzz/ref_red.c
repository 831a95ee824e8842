/* The reference's reductions: sums and products in any order (bounded,
 * or don't care where an order may overflow), maxNum max/min, mean, var,
 * std, argmax/argmin. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ** reductions */
/* the reduced positions of output element `o` */
static bool reduce_shape(ctx *c, const tf_tensor *a, const int64_t *axes, int naxes, uint32_t *mask)
{
    uint32_t m = 0;
    if (!naxes) m = a->ndim ? (1u << a->ndim) - 1 : 0;
    for (int i = 0; i < naxes; i++) {
        int ax = axis_of((int)axes[i], a->ndim);
        if (ax < 0 || ax >= a->ndim) return ref_fail(c, "axis out of range");
        if (m & (1u << ax)) return ref_fail(c, "axis twice");
        m |= 1u << ax;
    }
    *mask = m;
    return true;
}

static void red_out_shape(const tf_tensor *a, uint32_t mask, bool keep, int64_t *s, int *nd, int64_t *ks)
{
    int k = 0;
    for (int d = 0; d < a->ndim; d++) {
        ks[d] = mask & (1u << d) ? 1 : a->shape[d];
        if (!(mask & (1u << d)) || keep) s[k++] = ks[d];
    }
    *nd = k;
}

/* for each output (in the keepdim shape ks), the inputs it reduces */
typedef void (*red_visit)(void *u, int64_t o, const tf_rv *x, const int64_t *pos, int64_t cnt);

static void for_each_group(const tf_tensor *a, hcq_dtype dt, uint32_t mask, const int64_t *ks, void *u, red_visit f)
{
    int64_t no = ref_numel(ks, a->ndim), cnt = no ? a->n / no : 0;
    if (!no) return;
    tf_rv *buf = calloc((size_t)(cnt ? cnt : 1), sizeof *buf);
    int64_t *pos = calloc((size_t)(cnt ? cnt : 1), sizeof *pos);
    int64_t rs[TF_MAX_DIMS], idx[TF_MAX_DIMS], ridx[TF_MAX_DIMS];
    int nr = 0;
    for (int d = 0; d < a->ndim; d++)
        if (mask & (1u << d)) rs[nr++] = a->shape[d];
    for (int64_t o = 0; o < no; o++) {
        ref_unravel(o, ks, a->ndim, idx);
        for (int64_t j = 0; j < cnt; j++) {
            ref_unravel(j, rs, nr, ridx);
            for (int d = 0, k = 0; d < a->ndim; d++)
                if (mask & (1u << d)) idx[d] = ridx[k++];
            int64_t at = ref_ravel(idx, a->shape, a->ndim);
            buf[j] = ref_cast_rv(a->dt, dt, a->x[at]);
            pos[j] = j;
        }
        f(u, o, buf, pos, cnt);
    }
    free(buf);
    free(pos);
}

/* a float sum in any order: NaN if any NaN or both infinities, the
 * infinity if one, else the double sum with (n + 2) roundings of the
 * running sum; don't care where some order may overflow */
tf_rv ref_fsum(const tf_rv *x, int64_t n, hcq_dtype acc, hcq_dtype odt)
{
    double s = 0, abs = 0, e = 0;
    bool nan = false, pinf = false, ninf = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return ref_rv_dc();
        double v = x[i].v;
        if (isnan(v)) nan = true;
        else if (isinf(v)) {
            if (x[i].e > 0) return ref_rv_dc();
            if (v > 0) pinf = true;
            else ninf = true;
        } else {
            s += v;
            abs += fabs(v);
            e += x[i].e;
        }
    }
    if (n == 1) /* one element: no accumulation at all (tensor.h: a cast) */
        return x[0].e > 0 ? ref_rv_approx(odt, x[0].v, x[0].e) : ref_rv_exact(odt, ref_op_round(odt, x[0].v));
    if (abs * (1 + 4 * n * EPS32) + e >= ref_max_finite(acc)) return ref_rv_dc();
    if (nan || (pinf && ninf)) return ref_rv_exact(odt, NAN);
    if (pinf || ninf) return ref_rv_exact(odt, pinf ? INFINITY : -INFINITY);
    /* n + 2 roundings of the running sum; each summand may have been a
     * product fused into the sum (sum(a * b) accumulates with a fused
     * multiply-add), so off by its own rounding or underflow, and a zero
     * may come out with either sign */
    double ulps = 0;
    for (int64_t i = 0; i < n; i++) ulps += tf_ulp(HCQ_F32, x[i].v);
    e += (double)(n + 2) * EPS32 * abs + ulps + (double)n * 0x1p-149;
    return ref_rv_approx(odt, s, e);
}

static tf_rv fprod(const tf_rv *x, int64_t n, hcq_dtype odt)
{
    double p = 1, big = 1, small = 1, e = 0;
    bool nan = false, inf = false, zero = false, neg = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return ref_rv_dc();
        double v = x[i].v, a = fabs(v);
        if (isnan(v)) nan = true;
        if (isinf(v)) inf = true;
        if (v == 0) zero = true;
        if (signbit(v)) neg = !neg;
        if (x[i].e > 0) {
            if (a <= x[i].e) return ref_rv_dc();
            e += x[i].e / a;
        }
        if (a >= 1) big *= a;
        else small *= a;
        p *= v;
    }
    if (nan) return ref_rv_exact(odt, NAN);
    if (big > 0x1p126 || (small < 0x1p-125 && !zero)) return ref_rv_dc();
    if (inf && zero) return ref_rv_exact(odt, NAN);
    if (zero || inf) return ref_rv_exact(odt, neg ? -(zero ? 0.0 : INFINITY) : (zero ? 0.0 : INFINITY));
    double rel = (double)(n + 2) * EPS32 + e * 1.01;
    if (n <= 1 && e == 0) return ref_rv_exact(odt, ref_op_round(odt, p));
    return ref_rv_approx(odt, p, fabs(p) * rel);
}

static tf_rv fmaxr(const tf_rv *x, int64_t n, hcq_dtype odt, bool is_min)
{
    tf_rv best = {0};
    bool have = false;
    double e = 0;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) return ref_rv_dc();
        if (x[i].e > e) e = x[i].e;
        if (isnan(x[i].v)) continue;
        if (!have) {
            best = x[i], have = true;
            continue;
        }
        double a = x[i].v, b = best.v;
        bool better = is_min ? (a < b || (a == b && signbit(a) && !signbit(b))) : (a > b || (a == b && !signbit(a) && signbit(b)));
        if (better) best = x[i];
    }
    if (!have) return ref_rv_exact(odt, NAN); /* every element NaN */
    if (e > 0) {
        best.e = e;
        best.f &= (uint8_t)~RV_MOVED;
        if (!is_float(odt)) return ref_rv_dc();
    }
    return best;
}

void ref_red_visit_fn(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    (void)pos;
    red_u *u = uu;
    tf_rv r;
    switch (u->op) {
    case TF_SUM:
        if (is_float(u->acc)) r = ref_fsum(x, n, u->acc, u->odt);
        else {
            /* wraps at the accumulator's width: modulo 2^64 first, the same low bits */
            uint64_t s = 0;
            r = ref_rv_exact(u->odt, 0);
            for (int64_t i = 0; i < n; i++) {
                if (dc(x[i])) {
                    r = ref_rv_dc();
                    break;
                }
                s += (uint64_t)(int64_t)x[i].v;
            }
            if (!dc(r)) r = ref_rv_exact(u->odt, ref_wrap(u->odt, (int64_t)s));
        }
        break;
    case TF_PROD:
        if (is_float(u->acc)) r = fprod(x, n, u->odt);
        else {
            /* wraps at the accumulator's width: modulo 2^64 first, the same low bits */
            uint64_t s = 1;
            r = ref_rv_exact(u->odt, 1);
            for (int64_t i = 0; i < n; i++) {
                if (dc(x[i])) {
                    r = ref_rv_dc();
                    break;
                }
                s *= (uint64_t)(int64_t)x[i].v;
            }
            if (!dc(r)) r = ref_rv_exact(u->odt, ref_wrap(u->odt, (int64_t)s));
        }
        break;
    case TF_MAX:
    case TF_MIN:
        if (!n) {
            if (is_float(u->odt)) r = ref_rv_exact(u->odt, u->op == TF_MAX ? -INFINITY : INFINITY);
            else if (u->odt == HCQ_BOOL) r = ref_rv_exact(u->odt, u->op == TF_MAX ? 0 : 1);
            else r = ref_rv_exact(u->odt, u->op == TF_MAX ? ref_int_lo(u->odt) : ref_int_hi(u->odt));
        } else if (is_float(u->odt)) {
            r = fmaxr(x, n, u->odt, u->op == TF_MIN);
        } else {
            r = x[0];
            for (int64_t i = 1; i < n && !dc(r); i++) {
                if (dc(x[i])) r = ref_rv_dc();
                else if (u->op == TF_MAX ? x[i].v > r.v : x[i].v < r.v) r = x[i];
            }
            r.f &= (uint8_t)~RV_MOVED;
            if (!dc(r)) r = ref_rv_exact(u->odt, r.v);
        }
        break;
    default: r = ref_rv_dc();
    }
    u->o->x[o] = r;
}

bool ref_reduce_op(ctx *c, const tf_tensor *a, int op)
{
    const tf_inst *in = c->in;
    uint32_t mask;
    if (!reduce_shape(c, a, in->iv, in->niv, &mask)) return false;
    hcq_dtype dt = op != TF_MAX && op != TF_MIN ? ref_sum_dt(a->dt) : a->dt;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ia != 0, s, &nd, ks);
    tf_tensor *o = ref_out_tensor(c, dt, s, nd);
    int64_t cnt = 1;
    for (int d = 0; d < a->ndim; d++)
        if (mask & (1u << d)) cnt *= a->shape[d];
    if (cnt == 1) { /* every reduced dim has size 1: nothing to combine, a cast */
        for (int64_t i = 0; i < o->n; i++) {
            o->x[i] = ref_u_cast(a, dt, a->x[i], 0);
            if (op == TF_MIN) o->x[i].f &= (uint8_t)~RV_MOVED; /* min is -max(-x): a NaN's bits are open */
        }
        return true;
    }
    hcq_dtype acc = is_float(dt) && op != TF_MAX && op != TF_MIN ? HCQ_F32 : dt;
    red_u u = {.o = o, .op = op, .acc = acc, .odt = dt};
    for_each_group(a, acc, mask, ks, &u, ref_red_visit_fn);
    return true;
}

/* mean/var/std: f32 (halfs stay halfs, rounded once at the end) */
typedef struct mv_u {
    tf_tensor *o;
    int op, corr;
    hcq_dtype odt;
} mv_u;

static void mv_visit(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    (void)pos;
    mv_u *u = uu;
    double s = 0, abs = 0, e = 0, sq = 0;
    bool nan = false, inf = false;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) {
            u->o->x[o] = ref_rv_dc();
            return;
        }
        double v = x[i].v;
        if (isnan(v)) nan = true;
        else if (isinf(v)) inf = true;
        s += v;
        abs += fabs(v);
        e += x[i].e;
        sq += v * v;
    }
    double mean = s / (double)n;
    tf_rv r;
    if (u->op == TF_MEAN) { /* sum in f32, divided by the count in f32, rounded to the dtype */
        tf_rv sm = ref_fsum(x, n, HCQ_F32, HCQ_F32);
        r = ref_cast_rv(HCQ_F32, u->odt, ref_fop(HCQ_F32, F_DIV, sm, ref_rv_exact(HCQ_F32, (double)(float)n)));
    } else {
        double den = (double)n - u->corr;
        if (den <= 0) den = 0;
        double dev = 0, maxdev = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = x[i].v - mean;
            dev += d * d;
            if (fabs(d) > maxdev) maxdev = fabs(d);
        }
        double var = dev / den;
        if (nan || inf || !n) {
            r = ref_rv_exact(u->odt, NAN); /* inf - inf, NaN, or 0/0 */
            if (!nan && !inf && !n) r = ref_rv_exact(u->odt, NAN);
        } else if (sq >= FLT_MAX / 4 || abs * (1 + 4 * n * EPS32) >= FLT_MAX) {
            r = ref_rv_dc();
        } else if (den == 0) {
            r = dev == 0 && e == 0 ? ref_rv_exact(u->odt, NAN) : ref_rv_dc(); /* x/0: NaN for 0, inf else */
            if (dev != 0 && e == 0) r = ref_rv_dc();
        } else {
            /* the mean's error moves every deviation; squares and sums round */
            double em = (e + (double)(n + 3) * EPS32 * abs) / (double)n;
            double ed = 2 * (maxdev + em) * (em + 2 * EPS32 * (maxdev + fabs(mean))) * (double)n;
            double err = (ed + (double)(n + 4) * 2 * EPS32 * dev + 2 * e * (maxdev + em) + (double)(n + 2) * 0x1p-149) / den;
            if (u->op == TF_VAR) r = err == 0 ? ref_rv_exact(u->odt, ref_op_round(u->odt, var)) : ref_rv_approx(u->odt, var, err);
            else {
                double sd = sqrt(var);
                double es = var - err <= 0 ? sqrt(var + err) : err / (sqrt(var) + sqrt(var - err));
                r = es == 0 ? ref_rv_exact(u->odt, ref_op_round(u->odt, sd)) : ref_rv_approx(u->odt, sd, es);
            }
        }
    }
    u->o->x[o] = r;
}

bool ref_mean_var(ctx *c, const tf_tensor *a, int op)
{
    const tf_inst *in = c->in;
    uint32_t mask;
    if (!reduce_shape(c, a, in->iv, in->niv, &mask)) return false;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ia != 0, s, &nd, ks);
    hcq_dtype odt = float_dt(a->dt);
    tf_tensor *o = ref_out_tensor(c, odt, s, nd);
    mv_u u = {.o = o, .op = op, .corr = op == TF_MEAN ? 0 : in->ib, .odt = odt};
    int64_t no = ref_numel(ks, a->ndim);
    if (no && a->n == 0) { /* empty slices */
        for (int64_t i = 0; i < o->n; i++) mv_visit(&u, i, NULL, NULL, 0);
        return true;
    }
    for_each_group(a, HCQ_F32, mask, ks, &u, mv_visit);
    return true;
}

typedef struct arg_u {
    tf_tensor *o;
    bool is_min;
} arg_u;

static void arg_visit(void *uu, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n)
{
    arg_u *u = uu;
    int64_t best = -1;
    bool allnan = true;
    for (int64_t i = 0; i < n; i++) {
        if (dc(x[i])) {
            u->o->x[o] = ref_rv_dc();
            return;
        }
        if (!isnan(x[i].v)) allnan = false;
    }
    if (allnan) {
        u->o->x[o] = ref_rv_exact(HCQ_I32, 0);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i].v)) continue;
        if (best < 0 || (u->is_min ? x[i].v < x[best].v : x[i].v > x[best].v)) best = i;
    }
    for (int64_t i = 0; i < n; i++) /* a rival within the error bounds: the index is open */
        if (i != best && !isnan(x[i].v) && fabs(x[i].v - x[best].v) <= x[i].e + x[best].e && (x[i].e + x[best].e) > 0) {
            u->o->x[o] = ref_rv_dc();
            return;
        }
    u->o->x[o] = ref_rv_exact(HCQ_I32, (double)pos[best]);
}

bool ref_argext(ctx *c, const tf_tensor *a, bool is_min)
{
    const tf_inst *in = c->in;
    int ax = axis_of(in->ia, a->ndim);
    if (ax < 0 || ax >= a->ndim) return ref_fail(c, "axis out of range");
    if (a->shape[ax] == 0) return ref_fail(c, "empty axis");
    uint32_t mask = 1u << ax;
    int64_t s[TF_MAX_DIMS], ks[TF_MAX_DIMS];
    int nd;
    red_out_shape(a, mask, in->ib != 0, s, &nd, ks);
    tf_tensor *o = ref_out_tensor(c, HCQ_I32, s, nd);
    arg_u u = {.o = o, .is_min = is_min};
    hcq_dtype dt = a->dt == HCQ_BOOL ? HCQ_I32 : a->dt;
    for_each_group(a, dt, mask, ks, &u, arg_visit);
    return true;
}
