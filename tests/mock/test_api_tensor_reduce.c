/* Reductions on the device under test against C loops: every axis
 * combination of an odd 3-d shape, keepdim, non-contiguous inputs, empty
 * axes, i32/bool/f16 accumulation, the split path of large reductions, and
 * shapes that take the CPU plans' upcasts (multiples of 16). Tolerances:
 * sums in f32 get rtol 1e-5 times sqrt(n), prod 1e-5 * n; max/min/argmax
 * and integers are exact. */
#include "tensortest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_reduce, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

enum { R_SUM, R_PROD, R_MAX, R_MIN, R_MEAN, R_VAR, R_STD };

/* reference reduction of x[shape] over the axes in mask */
static void ref_reduce(const double *x, const int64_t *shape, int nd, uint32_t mask, int op, double *out, int64_t *nout)
{
    int64_t os[8], n = tx_numel(shape, nd), idx[8];
    for (int d = 0; d < nd; d++) os[d] = mask & (1u << d) ? 1 : shape[d];
    int64_t on = tx_numel(os, nd), cnt = n / (on ? on : 1);
    double *acc = calloc((size_t)on + 1, sizeof *acc), *acc2 = calloc((size_t)on + 1, sizeof *acc2);
    for (int64_t o = 0; o < on; o++) acc[o] = op == R_PROD ? 1 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0;
    for (int64_t i = 0; i < n; i++) {
        tx_unravel(i, shape, nd, idx);
        for (int d = 0; d < nd; d++)
            if (mask & (1u << d)) idx[d] = 0;
        int64_t o = tx_ravel(idx, os, nd);
        double v = x[i];
        if (op == R_PROD) acc[o] *= v;
        else if (op == R_MAX) acc[o] = fmax(acc[o], v);
        else if (op == R_MIN) acc[o] = fmin(acc[o], v);
        else acc[o] += v, acc2[o] += v * v;
    }
    for (int64_t o = 0; o < on; o++) {
        double m = acc[o] / (double)cnt;
        if (op == R_MEAN) acc[o] = m;
        if (op == R_VAR || op == R_STD) {
            double v = (acc2[o] - cnt * m * m) / (double)(cnt - 1);
            acc[o] = op == R_STD ? sqrt(v) : v;
        }
        out[o] = acc[o];
    }
    *nout = on;
    free(acc);
    free(acc2);
}

typedef hcq_tensor *(*red_fn)(hcq_tensor *, const int *, int, bool);
static hcq_tensor *var1(hcq_tensor *a, const int *ax, int n, bool k) { return hcq_var(a, ax, n, k, 1); }
static hcq_tensor *std1(hcq_tensor *a, const int *ax, int n, bool k) { return hcq_std(a, ax, n, k, 1); }

Test(api_tensor_reduce, every_axis_set_f32)
{
    static const struct { const char *name; red_fn f; int op; double tol; } ops[] = {
        {"sum", hcq_sum, R_SUM, 1e-5}, {"prod", hcq_prod, R_PROD, 1e-4}, {"max", hcq_max, R_MAX, 0},
        {"min", hcq_min, R_MIN, 0},    {"mean", hcq_mean, R_MEAN, 1e-5}, {"var", var1, R_VAR, 1e-4},
        {"std", std1, R_STD, 1e-4},
    };
    static const int axsets[][3] = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}};
    static const int naxes[] = {1, 1, 1, 2, 2, 3};
    const int64_t shape[3] = {3, 4, 5};
    double x[60], got[60], want[60];
    hcq_tensor *t = tx_rand(HCQ_F32, shape, 3, 0.5, 1.5, 1, x);
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t s = 0; s < sizeof naxes / sizeof *naxes; s++) {
            if (o >= 4 && s % 2) continue; /* mean/var/std: half the sets keep the suite lean */
            uint32_t mask = 0;
            for (int i = 0; i < naxes[s]; i++) mask |= 1u << axsets[s][i];
            bool keep = (s + o) % 2;
            hcq_tensor *y = ops[o].f(t, axsets[s], naxes[s], keep);
            cr_assert_not_null(y, "%s: %s", ops[o].name, hcq_error_message());
            cr_assert_eq(hcq_tensor_ndim(y), keep ? 3 : 3 - naxes[s], "%s ndim", ops[o].name);
            int64_t n;
            ref_reduce(x, shape, 3, mask, ops[o].op, want, &n);
            tx_read(y, got, n);
            char what[64];
            snprintf(what, sizeof what, "%s over set %zu", ops[o].name, s);
            tx_close(got, want, n, ops[o].tol, 1e-6, what);
        }
}

Test(api_tensor_reduce, negative_axes_and_views)
{
    double x[6 * 5], got[7], want[7];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(6, 5), -3, 3, 2, x);
    /* sum over the last axis of the transpose = column sums */
    hcq_tensor *y = hcq_sum(hcq_transpose(t, 0, 1), HCQ_AXES(-1), false);
    tx_read(y, got, 5);
    for (int j = 0; j < 5; j++) {
        want[j] = 0;
        for (int i = 0; i < 6; i++) want[j] += x[i * 5 + j];
    }
    tx_close(got, want, 5, 1e-5, 1e-6, "column sums via transpose");
    /* max over a padded view: padding is -7, never the max except for padded-only rows */
    hcq_tensor *p = hcq_pad(t, (const int64_t[]){1, 0, 0, 2}, 2, -7.0); /* [7, 7] */
    tx_read(hcq_max(p, HCQ_AXES(1), false), got, 7);
    for (int i = 0; i < 7; i++) {
        want[i] = -7;
        for (int j = 0; i > 0 && j < 5; j++) want[i] = fmax(want[i], x[(i - 1) * 5 + j]);
    }
    tx_close(got, want, 7, 0, 0, "max of a padded view");
}

Test(api_tensor_reduce, argmax_argmin_ties_first)
{
    double x[4 * 6] = {1, 3, 3, 0, 2, 3, /**/ -1, -1, -2, -2, 0, 0, /**/ 5, 4, 3, 2, 1, 0, /**/ 0, 0, 0, 0, 0, 0};
    hcq_tensor *t = tx_from(HCQ_F32, TX_SHAPE(4, 6), x);
    double got[6];
    hcq_tensor *am = hcq_argmax(t, 1, false);
    cr_assert_eq(hcq_tensor_dtype(am), HCQ_I32);
    tx_read(am, got, 4);
    double w1[4] = {1, 4, 0, 0};
    tx_close(got, w1, 4, 0, 0, "argmax rows");
    tx_read(hcq_argmin(t, -1, true), got, 4);
    double w2[4] = {3, 2, 5, 0};
    tx_close(got, w2, 4, 0, 0, "argmin rows");
    tx_read(hcq_argmax(t, 0, false), got, 6);
    double w3[6] = {2, 2, 0, 2, 0, 0};
    tx_close(got, w3, 6, 0, 0, "argmax columns");
}

Test(api_tensor_reduce, integer_bool_half_accumulators)
{
    double xi[5 * 33], got[5], want[5];
    hcq_tensor *ti = tx_rand(HCQ_I32, TX_SHAPE(5, 33), -1000, 1000, 3, xi);
    tx_read(hcq_sum(ti, HCQ_AXES(1), false), got, 5);
    for (int i = 0; i < 5; i++) {
        want[i] = 0;
        for (int j = 0; j < 33; j++) want[i] += xi[i * 33 + j];
    }
    tx_close(got, want, 5, 0, 0, "i32 sum");
    tx_read(hcq_max(ti, HCQ_AXES(1), false), got, 5);
    for (int i = 0; i < 5; i++) {
        want[i] = -1e9;
        for (int j = 0; j < 33; j++) want[i] = fmax(want[i], xi[i * 33 + j]);
    }
    tx_close(got, want, 5, 0, 0, "i32 max");
    double xb[40];
    hcq_tensor *tb = tx_rand(HCQ_BOOL, TX_SHAPE(40), 0, 1, 4, xb);
    double cnt = 0;
    for (int i = 0; i < 40; i++) cnt += xb[i];
    double v;
    T_OK(hcq_tensor_item(hcq_sum(tb, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, cnt, "bool sum");
    T_OK(hcq_tensor_item(hcq_max(tb, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, cnt > 0, "bool max");
    T_OK(hcq_tensor_item(hcq_min(tb, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, cnt == 40, "bool min");
    /* 4096 halfs of 1.0: an f16 accumulator would stop at 2048 */
    hcq_tensor *h = hcq_ones(tx_ctx, HCQ_F16, TX_SHAPE(4096));
    T_OK(hcq_tensor_item(hcq_sum(h, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, 4096.0, "f16 sum accumulates in f32");
}

Test(api_tensor_reduce, empty_and_size_one_axes)
{
    hcq_tensor *e = hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(3, 0));
    double got[3];
    tx_read(hcq_sum(e, HCQ_AXES(1), false), got, 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(got[i], 0.0);
    tx_read(hcq_prod(e, HCQ_AXES(1), false), got, 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(got[i], 1.0);
    tx_read(hcq_max(e, HCQ_AXES(1), false), got, 3);
    for (int i = 0; i < 3; i++) cr_assert(isinf(got[i]) && got[i] < 0);
    cr_assert_eq(hcq_tensor_numel(hcq_sum(e, HCQ_AXES(0), false)), 0);
    double x[3];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(3, 1), -1, 1, 5, x);
    tx_read(hcq_sum(t, HCQ_AXES(1), false), got, 3);
    tx_close(got, x, 3, 0, 0, "sum over a size-1 axis");
}

/* big enough to take the split path (two kernels), with a size that has
 * no convenient divisor, so the split pads with the identity */
Test(api_tensor_reduce, large_reductions_split)
{
    enum { N = 70001 };
    double *x = malloc(N * sizeof *x), got[2], want[2] = {0, -INFINITY};
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 6, x);
    for (int i = 0; i < N; i++) {
        want[0] += x[i];
        want[1] = fmax(want[1], x[i]);
    }
    tx_read(hcq_sum(t, HCQ_ALL_AXES, false), got, 1);
    tx_close(got, want, 1, 1e-4, 1e-3, "split sum");
    tx_read(hcq_max(t, HCQ_ALL_AXES, false), got + 1, 1);
    cr_assert_eq(got[1], want[1], "split max");
    free(x);
}

/* shapes that take the CPU plans' upcasts: 16 accumulators over a
 * contiguous axis, 16 outputs per work-item along a contiguous output dim */
Test(api_tensor_reduce, upcast_plans)
{
    double x[8 * 64], got[64], want[64];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(8, 64), -1, 1, 7, x);
    tx_read(hcq_sum(t, HCQ_AXES(1), false), got, 8);
    for (int i = 0; i < 8; i++) {
        want[i] = 0;
        for (int j = 0; j < 64; j++) want[i] += x[i * 64 + j];
    }
    tx_close(got, want, 8, 1e-5, 1e-5, "rows");
    tx_read(hcq_sum(t, HCQ_AXES(0), false), got, 64);
    for (int j = 0; j < 64; j++) {
        want[j] = 0;
        for (int i = 0; i < 8; i++) want[j] += x[i * 64 + j];
    }
    tx_close(got, want, 64, 1e-5, 1e-5, "columns");
}
