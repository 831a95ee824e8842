/* Gradients on the device under test against central finite differences.
 *
 * Each check builds f(x...) from f32 inputs that require gradients, takes
 * the gradient of L = sum(f * r) for a fixed random r by hcq_backward, and
 * compares it with (L(x + eps e_j) - L(x - eps e_j)) / 2 eps evaluated on
 * the device: every element of small inputs, 10 random elements and one
 * random direction of larger ones. The tensor layer has no f64, so this is
 * f32 throughout: eps = 5e-3, and a gradient passes when
 * |fd - analytic| <= 2e-3 + 1e-2 |analytic| (eps^2 truncation and f32
 * rounding of L divided by eps both stay well below that for inputs of
 * order 1). Inputs of kinked functions (abs, relu, max, pooling) are kept
 * away from their kinks and ties by more than eps. Shapes are random per
 * case (fixed seeds), with broadcasting and non-contiguous views (permuted,
 * sliced with steps, flipped) in front of the ops. */
#include "tensortest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_grad, .init = tx_setup, .fini = tx_teardown, .timeout = 600);

#define EPS 5e-3
#define ATOL 2e-3
#define RTOL 1e-2
#define MAXIN 3

typedef hcq_tensor *(*gfn)(hcq_tensor **x, const void *arg);

typedef enum { G_ANY, G_POS, G_SEP, G_AWAY } gkind; /* [-1,1); (0.2, 2); distinct by 0.02; |x| > 0.05 */

typedef struct gin {
    int ndim;
    int64_t shape[8];
    gkind kind;
} gin;

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(urand() * (double)(hi - lo + 1)); }

static void fill(double *v, int64_t n, gkind k)
{
    for (int64_t i = 0; i < n; i++) {
        double u = urand();
        switch (k) {
        case G_ANY: v[i] = 2 * u - 1; break;
        case G_POS: v[i] = 0.2 + 1.8 * u; break;
        case G_AWAY: v[i] = (u < 0.5 ? -1 : 1) * (0.05 + 0.95 * urand()); break;
        case G_SEP: v[i] = (double)i; break;
        }
        v[i] = (float)v[i];
    }
    if (k == G_SEP) { /* a shuffled grid: every pair differs by at least 0.02 */
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(urand() * (double)(i + 1));
            double t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        for (int64_t i = 0; i < n; i++) v[i] = (float)(-1 + 0.02 * v[i] + (n > 100 ? 0 : 0.3));
    }
}

static hcq_tensor *from(const gin *g, const double *v)
{
    int64_t n = tx_numel(g->shape, g->ndim);
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
    hcq_tensor *t = hcq_from_data(tx_ctx, HCQ_F32, g->shape, g->ndim, f);
    free(f);
    cr_assert(t, "from_data: %s", hcq_error_message());
    return t;
}

/* L = sum(f(x) * r) without gradients */
static double eval(gfn f, const void *arg, int nin, const gin *in, double *const *v, hcq_tensor *r)
{
    size_t m = hcq_ctx_mark(tx_ctx);
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *x[MAXIN];
    for (int i = 0; i < nin; i++) x[i] = from(&in[i], v[i]);
    double L;
    T_OK(hcq_tensor_item(hcq_sum(hcq_mul(f(x, arg), r), HCQ_ALL_AXES, false), &L));
    hcq_set_grad_enabled(prev);
    hcq_ctx_release(tx_ctx, m);
    return L;
}

static void check(const char *name, int input, const char *what, double fd, double an)
{
    cr_assert(fabs(fd - an) <= ATOL + RTOL * fabs(an), "%s: input %d, %s: finite difference %.6g, gradient %.6g", name,
              input, what, fd, an);
}

static void gradcheck(const char *name, gfn f, const void *arg, int nin, const gin *in)
{
    size_t mark = hcq_ctx_mark(tx_ctx);
    double *v[MAXIN], *g[MAXIN];
    hcq_tensor *x[MAXIN];
    for (int i = 0; i < nin; i++) {
        int64_t n = tx_numel(in[i].shape, in[i].ndim);
        v[i] = malloc((size_t)(n ? n : 1) * sizeof *v[i]);
        g[i] = malloc((size_t)(n ? n : 1) * sizeof *g[i]);
        fill(v[i], n, in[i].kind);
        x[i] = from(&in[i], v[i]);
        T_OK(hcq_requires_grad(x[i], true));
    }
    hcq_tensor *y = f(x, arg);
    cr_assert(y, "%s: %s", name, hcq_error_message());
    int64_t ys[8];
    int ynd = hcq_tensor_shape(y, ys), yn = (int)tx_numel(ys, ynd);
    double *rv = malloc((size_t)(yn ? yn : 1) * sizeof *rv);
    for (int i = 0; i < yn; i++) rv[i] = (float)(2 * urand() - 1);
    gin rg = {.ndim = ynd};
    memcpy(rg.shape, ys, sizeof ys);
    hcq_tensor *r = from(&rg, rv);
    hcq_tensor *L = hcq_sum(hcq_mul(y, r), HCQ_ALL_AXES, false);
    cr_assert(hcq_tensor_requires_grad(L), "%s: the output does not require gradients", name);
    T_OK(hcq_backward(L));
    for (int i = 0; i < nin; i++) {
        hcq_tensor *gi = hcq_grad(x[i]);
        cr_assert(gi, "%s: input %d has no gradient: %s", name, i, hcq_error_message());
        tx_read(gi, g[i], tx_numel(in[i].shape, in[i].ndim));
    }
    for (int i = 0; i < nin; i++) {
        int64_t n = tx_numel(in[i].shape, in[i].ndim);
        int64_t picks = n <= 12 ? n : 10;
        for (int64_t p = 0; p < picks; p++) {
            int64_t j = n <= 12 ? p : (int64_t)(urand() * (double)n);
            double keep = v[i][j];
            v[i][j] = keep + EPS;
            double lp = eval(f, arg, nin, in, v, r);
            v[i][j] = keep - EPS;
            double lm = eval(f, arg, nin, in, v, r);
            v[i][j] = keep;
            char what[48];
            snprintf(what, sizeof what, "element %lld", (long long)j);
            check(name, i, what, (lp - lm) / (2 * EPS), g[i][j]);
        }
        if (n > 12) { /* every element at once along a random direction */
            double *d = malloc((size_t)n * sizeof *d), *save = malloc((size_t)n * sizeof *save), an = 0;
            memcpy(save, v[i], (size_t)n * sizeof *save);
            for (int64_t j = 0; j < n; j++) {
                d[j] = urand() < 0.5 ? -1 : 1;
                an += d[j] * g[i][j];
            }
            for (int64_t j = 0; j < n; j++) v[i][j] = save[j] + EPS * d[j];
            double lp = eval(f, arg, nin, in, v, r);
            for (int64_t j = 0; j < n; j++) v[i][j] = save[j] - EPS * d[j];
            double lm = eval(f, arg, nin, in, v, r);
            memcpy(v[i], save, (size_t)n * sizeof *save);
            check(name, i, "a random direction", (lp - lm) / (2 * EPS), an);
            free(d);
            free(save);
        }
    }
    for (int i = 0; i < nin; i++) {
        free(v[i]);
        free(g[i]);
    }
    free(rv);
    hcq_ctx_release(tx_ctx, mark);
}

#define IN(k, ...) {.ndim = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), .shape = {__VA_ARGS__}, .kind = (k)}

/* ** elementwise, unary: each on a permuted (non-contiguous) view too */
typedef hcq_tensor *(*unary)(hcq_tensor *);
static hcq_tensor *u_plain(hcq_tensor **x, const void *arg) { return ((unary)arg)(x[0]); }
static hcq_tensor *u_perm(hcq_tensor **x, const void *arg) { return ((unary)arg)(hcq_permute(x[0], HCQ_AXES(2, 0, 1))); }
static hcq_tensor *rsqrt_(hcq_tensor *a) { return hcq_rsqrt(a); }
static hcq_tensor *square(hcq_tensor *a) { return hcq_mul(a, a); }

Test(api_tensor_grad, unary)
{
    static const struct {
        const char *name;
        unary f;
        gkind k;
    } ops[] = {
        {"neg", hcq_neg, G_ANY},        {"exp", hcq_exp, G_ANY},         {"log", hcq_log, G_POS},
        {"exp2", hcq_exp2, G_ANY},      {"log2", hcq_log2, G_POS},       {"sqrt", hcq_sqrt, G_POS},
        {"rsqrt", rsqrt_, G_POS},       {"recip", hcq_recip, G_POS},     {"sin", hcq_sin, G_ANY},
        {"cos", hcq_cos, G_ANY},        {"abs", hcq_abs, G_AWAY},        {"relu", hcq_relu, G_AWAY},
        {"sigmoid", hcq_sigmoid, G_ANY}, {"tanh", hcq_tanh, G_ANY},      {"gelu", hcq_gelu, G_ANY},
        {"silu", hcq_silu, G_ANY},      {"square", square, G_ANY},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        gin a = IN(ops[i].k, irand(1, 4), irand(1, 5), irand(2, 6));
        gradcheck(ops[i].name, u_plain, (const void *)ops[i].f, 1, &a);
        gradcheck(ops[i].name, u_perm, (const void *)ops[i].f, 1, &a);
    }
}

/* sign and trunc are flat: their gradient is 0. A cast passes the
 * gradient through, cast back (f16 steps are too coarse for differences). */
Test(api_tensor_grad, flat_ops_and_casts)
{
    double v[4] = {-1.5, -0.25, 0.75, 2.5}, g[4];
    hcq_tensor *x = tx_from(HCQ_F32, TX_SHAPE(4), v);
    T_OK(hcq_requires_grad(x, true));
    T_OK(hcq_backward(hcq_sum(hcq_add(hcq_trunc(x), hcq_sign(x)), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(x), g, 4);
    for (int i = 0; i < 4; i++) cr_assert(g[i] == 0, "element %d: %g", i, g[i]);
    T_OK(hcq_zero_grad(x));
    hcq_tensor *h = hcq_cast(x, HCQ_F16);
    T_OK(hcq_backward(hcq_sum(hcq_cast(hcq_mul(h, h), HCQ_F32), HCQ_ALL_AXES, false)));
    hcq_tensor *gx = hcq_grad(x);
    cr_assert_eq(hcq_tensor_dtype(gx), HCQ_F32);
    tx_read(gx, g, 4);
    for (int i = 0; i < 4; i++) cr_assert(g[i] == 2 * v[i], "through f16, element %d: %g", i, g[i]);
}

/* ** binary, with broadcasting both ways */
typedef hcq_tensor *(*binary)(hcq_tensor *, hcq_tensor *);
static hcq_tensor *b_plain(hcq_tensor **x, const void *arg) { return ((binary)arg)(x[0], x[1]); }
static hcq_tensor *b_views(hcq_tensor **x, const void *arg)
{
    /* a stepped slice of one and a transposed other */
    return ((binary)arg)(hcq_slice(x[0], 0, 0, 1000, 2), hcq_transpose(x[1], 0, 1));
}

Test(api_tensor_grad, binary)
{
    static const struct {
        const char *name;
        binary f;
        gkind ka, kb;
    } ops[] = {
        {"add", hcq_add, G_ANY, G_ANY},          {"sub", hcq_sub, G_ANY, G_ANY},
        {"mul", hcq_mul, G_ANY, G_ANY},          {"div", hcq_div, G_ANY, G_POS},
        {"pow", hcq_pow, G_POS, G_ANY},          {"maximum", hcq_maximum, G_SEP, G_SEP},
        {"minimum", hcq_minimum, G_SEP, G_SEP},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        int64_t m = irand(2, 4), n = irand(2, 5);
        gin bc[2] = {IN(ops[i].ka, m, 1, n), IN(ops[i].kb, irand(2, 3), n)}; /* -> [m, k, n] */
        gradcheck(ops[i].name, b_plain, (const void *)ops[i].f, 2, bc);
        gin vw[2] = {IN(ops[i].ka, 2 * m, n), IN(ops[i].kb, n, m)}; /* [m, n] from views */
        gradcheck(ops[i].name, b_views, (const void *)ops[i].f, 2, vw);
    }
}

static hcq_tensor *f_where(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_where(hcq_gt(x[0], hcq_scalar(tx_ctx, 0)), hcq_mul(x[0], x[1]), hcq_exp(x[1]));
}
static hcq_tensor *f_scalar_ops(hcq_tensor **x, const void *arg)
{
    (void)arg;
    hcq_tensor *a = hcq_add_s(hcq_mul_s(x[0], 3.0), 1.5);
    return hcq_pow_s(hcq_div_s(hcq_sub_s(hcq_maximum_s(hcq_minimum_s(a, 4.0), 0.5), 0.25), 2.0), 1.7);
}

Test(api_tensor_grad, where_and_scalars)
{
    gin w[2] = {IN(G_AWAY, 3, 4), IN(G_ANY, 4)};
    gradcheck("where", f_where, NULL, 2, w);
    gin s = IN(G_SEP, 5, 6);
    gradcheck("scalar ops", f_scalar_ops, NULL, 1, &s);
}

/* ** reductions */
typedef struct red {
    hcq_tensor *(*f)(hcq_tensor *, const int *, int, bool);
    int axes[2], naxes;
    bool keep;
} red;
static hcq_tensor *r_apply(hcq_tensor **x, const void *arg)
{
    const red *r = arg;
    return r->f(hcq_flip(x[0], HCQ_AXES(1)), r->axes, r->naxes, r->keep);
}
static hcq_tensor *var_(hcq_tensor *a, const int *ax, int n, bool k) { return hcq_var(a, ax, n, k, 1); }
static hcq_tensor *std_(hcq_tensor *a, const int *ax, int n, bool k) { return hcq_std(a, ax, n, k, 0); }

Test(api_tensor_grad, reductions)
{
    static const struct {
        const char *name;
        hcq_tensor *(*f)(hcq_tensor *, const int *, int, bool);
        gkind k;
    } ops[] = {
        {"sum", hcq_sum, G_ANY}, {"mean", hcq_mean, G_ANY}, {"prod", hcq_prod, G_POS}, {"max", hcq_max, G_SEP},
        {"min", hcq_min, G_SEP}, {"var", var_, G_ANY},      {"std", std_, G_ANY},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        gin a = IN(ops[i].k, irand(2, 3), irand(2, 4), irand(2, 5));
        red r1 = {ops[i].f, {1}, 1, false}, r2 = {ops[i].f, {0, 2}, 2, true}, r3 = {ops[i].f, {0}, 0, false};
        gradcheck(ops[i].name, r_apply, &r1, 1, &a);
        gradcheck(ops[i].name, r_apply, &r2, 1, &a);
        gradcheck(ops[i].name, r_apply, &r3, 1, &a);
    }
}

/* ties split evenly; a zero in a product gets the product of the others */
Test(api_tensor_grad, max_ties_and_prod_zeros)
{
    double v[6] = {1, 3, 3, 2, 2, 2}, g[6];
    hcq_tensor *x = tx_from(HCQ_F32, TX_SHAPE(2, 3), v);
    T_OK(hcq_requires_grad(x, true));
    T_OK(hcq_backward(hcq_sum(hcq_max(x, HCQ_AXES(1), false), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(x), g, 6);
    double want[6] = {0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    tx_close(g, want, 6, 1e-6, 1e-7, "max with ties");
    /* maximum(a, a): half to each side, so the total is 1 */
    T_OK(hcq_zero_grad(x));
    T_OK(hcq_backward(hcq_sum(hcq_maximum(x, x), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(x), g, 6);
    for (int i = 0; i < 6; i++) cr_assert(fabs(g[i] - 1) < 1e-6, "maximum(x, x) element %d: %g", i, g[i]);
    double p[6] = {2, 0, 3, 0, 4, 0.5}, gp[6];
    hcq_tensor *y = tx_from(HCQ_F32, TX_SHAPE(2, 3), p);
    T_OK(hcq_requires_grad(y, true));
    T_OK(hcq_backward(hcq_sum(hcq_prod(hcq_reshape(y, HCQ_SHAPE(3, 2)), HCQ_AXES(1), false), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(y), gp, 6);
    /* rows (2, 0), (3, 0), (4, 0.5) */
    double wp[6] = {0, 2, 0, 3, 0.5, 4};
    tx_close(gp, wp, 6, 1e-6, 1e-7, "prod with zeros");
}

/* pow's own rule: d/dx = y x^(y-1), d/dy = x^y ln x, also at integral
 * exponents (where the value is computed by repeated squaring) and with
 * torch's zeros at y = 0 (d/dx) and x = 0, y >= 0 (d/dy) */
Test(api_tensor_grad, pow_rule)
{
    double xv[5] = {-1.5, 0.5, 2, 0, 3}, yv[5] = {2, 3, -2, 2, 0}, gx[5], gy[5];
    hcq_tensor *x = tx_from(HCQ_F32, TX_SHAPE(5), xv), *y = tx_from(HCQ_F32, TX_SHAPE(5), yv);
    T_OK(hcq_requires_grad(x, true));
    T_OK(hcq_requires_grad(y, true));
    T_OK(hcq_backward(hcq_sum(hcq_pow(x, y), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(x), gx, 5);
    tx_read(hcq_grad(y), gy, 5);
    double wx[5], wy[5];
    for (int i = 0; i < 5; i++) {
        wx[i] = yv[i] == 0 ? 0 : yv[i] * pow(xv[i], yv[i] - 1);
        wy[i] = xv[i] == 0 && yv[i] >= 0 ? 0 : pow(xv[i], yv[i]) * log(xv[i]);
    }
    tx_close(gx, wx, 5, 1e-5, 1e-6, "d pow / dx");
    tx_close(gy + 1, wy + 1, 4, 1e-5, 1e-6, "d pow / dy"); /* element 0: ln of a negative base, NaN */
    cr_assert(isnan(gy[0]), "d pow / dy at x < 0: %g", gy[0]);
}

/* ** movement */
static hcq_tensor *m_chain(hcq_tensor **x, const void *arg)
{
    (void)arg; /* [4, 6, 5] */
    hcq_tensor *a = hcq_permute(x[0], HCQ_AXES(2, 0, 1));                              /* [5, 4, 6] */
    a = hcq_pad(a, (int64_t[]){1, 2, 0, 1, 3, 0}, 3, 0.5);                              /* [8, 5, 9] */
    a = hcq_shrink(a, (int64_t[]){1, 7, 0, 4, 2, 9}, 3);                                /* [6, 4, 7] */
    a = hcq_flip(a, HCQ_AXES(0, 2));
    a = hcq_slice(a, 2, -1, 0, -3);                                                      /* [6, 4, 2] */
    a = hcq_reshape(hcq_contiguous(a), HCQ_SHAPE(3, 2, 8));
    a = hcq_expand(hcq_unsqueeze(a, 1), HCQ_SHAPE(3, 3, 2, 8));
    return hcq_mul(hcq_flatten(a, 0, 1), hcq_squeeze(hcq_reshape(hcq_transpose(a, 0, 1), HCQ_SHAPE(9, 1, 2, 8)), 1));
}
static hcq_tensor *m_cat(hcq_tensor **x, const void *arg)
{
    (void)arg;
    hcq_tensor *parts[3] = {x[0], hcq_exp(x[1]), x[0]};
    hcq_tensor *c = hcq_cat(parts, 3, 1);
    hcq_tensor *s[2] = {c, hcq_flip(c, HCQ_AXES(0))};
    return hcq_stack(s, 2, 1);
}
static hcq_tensor *m_repeat(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_repeat(hcq_slice(x[0], 1, 1, 5, 2), HCQ_SHAPE(2, 1, 3));
}

Test(api_tensor_grad, movement)
{
    gin a = IN(G_ANY, 4, 6, 5);
    gradcheck("movement chain", m_chain, NULL, 1, &a);
    gin c[2] = {IN(G_ANY, 3, 2), IN(G_ANY, 3, 4)};
    gradcheck("cat/stack", m_cat, NULL, 2, c);
    gin r = IN(G_ANY, 3, 5);
    gradcheck("repeat", m_repeat, NULL, 1, &r);
}

/* ** matmul, linear */
static hcq_tensor *f_matmul(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_matmul(x[0], x[1]);
}
static hcq_tensor *f_linear(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_linear(x[0], x[1], x[2]);
}
static hcq_tensor *f_matvec(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_matmul(hcq_transpose(x[0], 0, 1), x[1]);
}

Test(api_tensor_grad, matmul)
{
    int64_t M = irand(2, 5), K = irand(2, 6), N = irand(2, 5);
    gin mm[2] = {IN(G_ANY, 2, 1, M, K), IN(G_ANY, 3, K, N)}; /* batched, broadcast */
    gradcheck("matmul batched", f_matmul, NULL, 2, mm);
    gin ln[3] = {IN(G_ANY, M, K), IN(G_ANY, N, K), IN(G_ANY, N)};
    gradcheck("linear", f_linear, NULL, 3, ln);
    gin mv[2] = {IN(G_ANY, K, M), IN(G_ANY, K)};
    gradcheck("matrix @ vector", f_matvec, NULL, 2, mv);
    /* big enough for the CPU's register-tile plan and the K-major copy */
    gin big[3] = {IN(G_ANY, 20, 24), IN(G_ANY, 17, 24), IN(G_ANY, 17)};
    gradcheck("linear 20x24x17", f_linear, NULL, 3, big);
}

/* ** convolution and pooling */
static hcq_tensor *f_conv(hcq_tensor **x, const void *arg)
{
    return hcq_conv2d(x[0], x[1], x[2], (const hcq_conv2d_opts *)arg);
}
static hcq_tensor *f_avgpool(hcq_tensor **x, const void *arg) { return hcq_avg_pool2d(x[0], arg); }
static hcq_tensor *f_maxpool(hcq_tensor **x, const void *arg) { return hcq_max_pool2d(x[0], arg); }

Test(api_tensor_grad, conv2d)
{
    hcq_conv2d_opts plain = {0}, strided = {.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}},
                    grouped = {.stride = {1, 2}, .padding = {1, 0}, .groups = 2};
    gin a[3] = {IN(G_ANY, 2, 3, 6, 5), IN(G_ANY, 4, 3, 3, 2), IN(G_ANY, 4)};
    gradcheck("conv2d", f_conv, &plain, 3, a);
    gradcheck("conv2d stride/pad/dilation", f_conv, &strided, 3, a);
    gin g[3] = {IN(G_ANY, 1, 4, 5, 6), IN(G_ANY, 6, 2, 3, 3), IN(G_ANY, 6)};
    gradcheck("conv2d groups", f_conv, &grouped, 3, g);
    /* 8 or more output channels per group: CPU-style targets multiply
     * matrices (im2col) instead */
    gin wide[3] = {IN(G_ANY, 2, 2, 5, 4), IN(G_ANY, 8, 2, 3, 2), IN(G_ANY, 8)};
    gradcheck("conv2d as a matrix product", f_conv, &strided, 3, wide);
    gin wg[3] = {IN(G_ANY, 1, 4, 4, 5), IN(G_ANY, 16, 2, 2, 3), IN(G_ANY, 16)};
    gradcheck("conv2d as a matrix product, groups", f_conv, &grouped, 3, wg);
}

Test(api_tensor_grad, pooling)
{
    hcq_pool2d_opts k2 = {.kernel = {2, 2}}, k3 = {.kernel = {3, 2}, .stride = {2, 1}, .padding = {1, 1}};
    gin a = IN(G_SEP, 2, 2, 6, 5);
    gradcheck("avg_pool2d 2x2", f_avgpool, &k2, 1, &a);
    gradcheck("avg_pool2d 3x2 stride/pad", f_avgpool, &k3, 1, &a);
    gradcheck("max_pool2d 2x2", f_maxpool, &k2, 1, &a);
    gradcheck("max_pool2d 3x2 stride/pad", f_maxpool, &k3, 1, &a);
}

/* ** normalization, softmax, losses, lookups */
static hcq_tensor *f_softmax(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_softmax(hcq_transpose(x[0], 0, 1), 0);
}
static hcq_tensor *f_logsoftmax(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_log_softmax(x[0], -1);
}
static hcq_tensor *f_layernorm(hcq_tensor **x, const void *arg)
{
    (void)arg;
    return hcq_layernorm(x[0], 2, x[1], x[2], 1e-5);
}
static hcq_tensor *f_xent(hcq_tensor **x, const void *arg)
{
    const int32_t *t = arg;
    hcq_tensor *tt = hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(5), t);
    return hcq_cross_entropy(hcq_mul_s(x[0], 2.0), tt);
}
static hcq_tensor *f_embedding(hcq_tensor **x, const void *arg)
{
    const int32_t *t = arg;
    hcq_tensor *idx = hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(2, 3), t);
    return hcq_embedding(x[0], idx);
}
static hcq_tensor *f_gather(hcq_tensor **x, const void *arg)
{
    const int32_t *t = arg;
    hcq_tensor *idx = hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(2, 3, 2), t);
    return hcq_gather(x[0], 1, idx);
}

Test(api_tensor_grad, nn_ops)
{
    gin s = IN(G_ANY, 4, 6);
    gradcheck("softmax", f_softmax, NULL, 1, &s);
    gradcheck("log_softmax", f_logsoftmax, NULL, 1, &s);
    gin ln[3] = {IN(G_ANY, 3, 4, 5), IN(G_ANY, 4, 5), IN(G_ANY, 5)};
    gradcheck("layernorm", f_layernorm, NULL, 3, ln);
    static const int32_t cls[5] = {0, 3, 1, 3, 7}; /* 7 is out of range: it contributes 0 */
    gin xe = IN(G_ANY, 5, 4);
    gradcheck("cross_entropy", f_xent, cls, 1, &xe);
    static const int32_t rows[6] = {1, 4, 1, 0, 9, 3}; /* row 1 twice; 9 is out of range */
    gin em = IN(G_ANY, 5, 3);
    gradcheck("embedding", f_embedding, rows, 1, &em);
    static const int32_t gi[12] = {0, 2, 3, 3, 1, 0, 2, 2, 0, 1, 3, 0};
    gin ga = IN(G_ANY, 3, 4, 2);
    gradcheck("gather", f_gather, gi, 1, &ga);
}

/* ** batch norm (nn.h) in training mode: the gradient flows through the
 * batch's mean and variance to every input, and to the layer's weight and
 * bias, which are parameters rather than inputs (perturbed in place for
 * their finite differences). The input is a transposed view. */
static hcq_tensor *f_batchnorm(hcq_tensor **x, const void *arg)
{
    return hcq_batchnorm((hcq_params *)arg, "bn", hcq_transpose(x[0], 0, 1), 0.1, 1e-5);
}

/* L = sum(batchnorm(x) * r) with the parameter `which` perturbed at c by d */
static double bn_loss(hcq_params *p, hcq_tensor *x, hcq_tensor *r, const char *which, double *w, int c, double d)
{
    enum { C = 3 };
    float f[C];
    for (int k = 0; k < C; k++) f[k] = (float)(w[k] + (k == c ? d : 0));
    T_OK(hcq_tensor_write(hcq_params_find(p, which), f, sizeof f));
    size_t m = hcq_ctx_mark(tx_ctx);
    bool prev = hcq_set_grad_enabled(false);
    double L;
    T_OK(hcq_tensor_item(hcq_sum(hcq_mul(f_batchnorm(&x, p), r), HCQ_ALL_AXES, false), &L));
    hcq_set_grad_enabled(prev);
    hcq_ctx_release(tx_ctx, m);
    for (int k = 0; k < C; k++) f[k] = (float)w[k];
    T_OK(hcq_tensor_write(hcq_params_find(p, which), f, sizeof f));
    return L;
}

Test(api_tensor_grad, batchnorm)
{
    enum { C = 3 };
    hcq_params *p = hcq_params_create(tx_ctx);
    T_OK(hcq_batchnorm_add(p, "bn", C));
    double w[C] = {1.5, -0.75, 0.5}, b[C] = {0.25, -0.5, 1};
    const char *names[2] = {"bn.weight", "bn.bias"};
    double *vals[2] = {w, b};
    for (int k = 0; k < 2; k++) {
        float f[C] = {(float)vals[k][0], (float)vals[k][1], (float)vals[k][2]};
        T_OK(hcq_tensor_write(hcq_params_find(p, names[k]), f, sizeof f));
    }
    /* [C, N, H, W] transposed to [N, C, H, W]: 4 x 3 x 3 x 2 */
    gin x = IN(G_ANY, C, 4, 3, 2);
    gradcheck("batchnorm (input)", f_batchnorm, p, 1, &x);

    /* the parameters: one backward, then central differences per channel */
    size_t mark = hcq_ctx_mark(tx_ctx);
    double xv[C * 24], rv[C * 24], gw[C], gb[C];
    fill(xv, C * 24, G_ANY);
    fill(rv, C * 24, G_ANY);
    hcq_tensor *xt = from(&x, xv);
    gin rg = IN(G_ANY, 4, C, 3, 2);
    hcq_tensor *r = from(&rg, rv);
    T_OK(hcq_params_zero_grad(p));
    T_OK(hcq_backward(hcq_sum(hcq_mul(f_batchnorm(&xt, p), r), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(hcq_params_find(p, "bn.weight")), gw, C);
    tx_read(hcq_grad(hcq_params_find(p, "bn.bias")), gb, C);
    double *an[2] = {gw, gb};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < C; c++) {
            double fd = (bn_loss(p, xt, r, names[k], vals[k], c, EPS) - bn_loss(p, xt, r, names[k], vals[k], c, -EPS)) / (2 * EPS);
            char what[48];
            snprintf(what, sizeof what, "%s[%d]", names[k], c);
            check("batchnorm (parameters)", k + 1, what, fd, an[k][c]);
        }
    hcq_ctx_release(tx_ctx, mark);
    T_OK(hcq_params_destroy(p));
}

/* ** the API's rules */
Test(api_tensor_grad, accumulate_and_zero)
{
    double v[3] = {1, 2, 3}, g[3];
    hcq_tensor *x = tx_from(HCQ_F32, TX_SHAPE(3), v);
    T_OK(hcq_requires_grad(x, true));
    cr_assert(!hcq_has_grad(x));
    T_FAILS(hcq_grad(x) ? HCQ_OK : hcq_error_status(), HCQ_ESTATE);
    hcq_tensor *loss = hcq_sum(hcq_mul(x, x), HCQ_ALL_AXES, false);
    T_OK(hcq_backward(loss));
    T_OK(hcq_backward(loss)); /* twice: the gradients add */
    tx_read(hcq_grad(x), g, 3);
    for (int i = 0; i < 3; i++) cr_assert(g[i] == 4 * v[i], "element %d: %g", i, g[i]);
    T_OK(hcq_zero_grad(x));
    cr_assert(!hcq_has_grad(x));
    /* the loss realized first: the records survive realization */
    hcq_tensor *l2 = hcq_sum(hcq_exp(x), HCQ_ALL_AXES, false);
    double lv;
    T_OK(hcq_tensor_item(l2, &lv));
    T_OK(hcq_backward(l2));
    tx_read(hcq_grad(x), g, 3);
    for (int i = 0; i < 3; i++) cr_assert(fabs(g[i] - exp(v[i])) < 1e-4 * exp(v[i]), "element %d: %g", i, g[i]);
}

Test(api_tensor_grad, no_grad_detach_and_errors)
{
    double v[4] = {1, 2, 3, 4};
    hcq_tensor *x = tx_from(HCQ_F32, TX_SHAPE(2, 2), v);
    T_OK(hcq_requires_grad(x, true));
    cr_assert(hcq_grad_enabled());
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *y = hcq_mul_s(x, 2.0);
    hcq_set_grad_enabled(prev);
    cr_assert(!hcq_tensor_requires_grad(y), "made under no-grad");
    cr_assert(hcq_tensor_requires_grad(hcq_reshape(x, HCQ_SHAPE(4))));
    cr_assert(!hcq_tensor_requires_grad(hcq_detach(x)));
    cr_assert(!hcq_tensor_requires_grad(hcq_reshape(y, HCQ_SHAPE(4))), "a view of a no-grad tensor");
    /* no gradient to follow */
    T_FAILS(hcq_backward(hcq_sum(y, HCQ_ALL_AXES, false)), HCQ_EINVAL);
    T_MSG_HAS("does not depend");
    /* only through argmax: a comparison */
    T_FAILS(hcq_backward(hcq_sum(hcq_cast(hcq_argmax(x, 1, false), HCQ_F32), HCQ_ALL_AXES, false)), HCQ_EINVAL);
    T_MSG_HAS("comparison");
    /* not one element */
    T_FAILS(hcq_backward(hcq_exp(x)), HCQ_EINVAL);
    T_MSG_HAS("hcq_backward_with");
    /* integers take no gradient */
    T_FAILS(hcq_requires_grad(hcq_cast(x, HCQ_I32), true), HCQ_EINVAL);
    /* a tensor not marked keeps none */
    T_FAILS(hcq_grad(hcq_exp(x)) ? HCQ_OK : hcq_error_status(), HCQ_EINVAL);
    /* a seed of the output's shape */
    double gv[4];
    T_OK(hcq_backward_with(hcq_mul(x, x), hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(2, 2))));
    tx_read(hcq_grad(x), gv, 4);
    for (int i = 0; i < 4; i++) cr_assert(gv[i] == 2 * v[i]);
    /* a constant is given storage, and its movements still reach it */
    hcq_tensor *z = hcq_zeros(tx_ctx, HCQ_F32, HCQ_SHAPE(2, 2));
    T_OK(hcq_requires_grad(z, true));
    T_OK(hcq_backward(hcq_sum(hcq_mul(hcq_transpose(z, 0, 1), x), HCQ_ALL_AXES, false)));
    tx_read(hcq_grad(z), gv, 4);
    double want[4] = {1, 3, 2, 4};
    tx_close(gv, want, 4, 0, 0, "gradient of a constant leaf");
    /* marking off drops the gradient */
    T_OK(hcq_requires_grad(z, false));
    cr_assert(!hcq_tensor_requires_grad(z));
}

/* ** assign: in place, hazards resolved */
Test(api_tensor_grad, assign_in_place)
{
    double v[6] = {1, 2, 3, 4, 5, 6}, w[6] = {10, 20, 30, 40, 50, 60}, got[6];
    hcq_tensor *a = tx_from(HCQ_F32, TX_SHAPE(2, 3), v), *b = tx_from(HCQ_F32, TX_SHAPE(2, 3), w);
    hcq_tensor *view = hcq_reshape(a, HCQ_SHAPE(3, 2)); /* shares a's storage */
    T_OK(hcq_assign(a, hcq_add_s(hcq_mul_s(a, 2.0), 1.0)));
    tx_read(view, got, 6);
    for (int i = 0; i < 6; i++) cr_assert(got[i] == 2 * v[i] + 1, "element %d: %g", i, got[i]);
    /* a swap: each value reads the other's old contents */
    hcq_tensor *dst[2] = {a, b}, *val[2] = {b, a};
    T_OK(hcq_assign_all(dst, val, 2));
    tx_read(a, got, 6);
    tx_close(got, w, 6, 0, 0, "a after the swap");
    /* a square transpose of itself reads elements other kernels' work-items store */
    double s[16], st[16];
    for (int i = 0; i < 16; i++) s[i] = i;
    hcq_tensor *m = tx_from(HCQ_F32, TX_SHAPE(4, 4), s);
    T_OK(hcq_assign(m, hcq_transpose(m, 0, 1)));
    tx_read(m, st, 16);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) cr_assert(st[i * 4 + j] == s[j * 4 + i], "transpose [%d][%d]", i, j);
    /* a matmul of itself */
    T_OK(hcq_assign(m, hcq_matmul(m, m)));
    double mm[16];
    tx_read(m, mm, 16);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = 0;
            for (int k = 0; k < 4; k++) want += st[i * 4 + k] * st[k * 4 + j];
            cr_assert(mm[i * 4 + j] == want, "m @ m [%d][%d]: %g, want %g", i, j, mm[i * 4 + j], want);
        }
    /* broadcast and cast into the destination */
    T_OK(hcq_assign(b, hcq_scalar(tx_ctx, 7)));
    tx_read(b, got, 6);
    for (int i = 0; i < 6; i++) cr_assert(got[i] == 7);
    T_FAILS(hcq_assign(b, hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(4))), HCQ_EINVAL);
    hcq_tensor *same[2] = {a, a};
    T_FAILS(hcq_assign_all(same, val, 2), HCQ_EINVAL);
}
