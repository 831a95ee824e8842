/* The nn layer on the device under test: initialisation, parameter lists,
 * every optimizer and schedule against a host reference in double
 * precision (f32 tolerance 2e-5 relative), gradient clipping, batch norm
 * and dropout in both modes, safetensors round trips and refusals, the
 * batch iterator, and a JIT'd training step that replays exactly what the
 * eager steps compute, without device memory growing. */
#include "tensortest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(api_nn, .init = tx_setup, .fini = tx_teardown, .timeout = 300);

static void read_f(hcq_tensor *t, double *out, int64_t n) { tx_read(t, out, n); }

Test(api_nn, init)
{
    hcq_ctx_seed(tx_ctx, 7);
    enum { N = 64, M = 64 };
    double *v = malloc(N * M * sizeof *v);
    hcq_tensor *z = hcq_init_tensor(tx_ctx, HCQ_INIT_ZEROS, HCQ_SHAPE(3, 2), 0, 0), *o = hcq_init_tensor(tx_ctx, HCQ_INIT_ONES, HCQ_SHAPE(3), 0, 0);
    cr_assert(hcq_tensor_is_realized(z) && hcq_tensor_is_realized(o));
    double zz[6], oo[3];
    read_f(z, zz, 6);
    read_f(o, oo, 3);
    for (int i = 0; i < 6; i++) cr_assert(zz[i] == 0);
    for (int i = 0; i < 3; i++) cr_assert(oo[i] == 1);
    /* uniform, Kaiming and Xavier bounds for a [64, 64] weight: fan_in = fan_out = 64 */
    static const struct {
        hcq_init init;
        double a, b, bound;
    } u[] = {{HCQ_INIT_UNIFORM, -0.5, 0.25, 0}, {HCQ_INIT_KAIMING_UNIFORM, 0, 0, 0.30618621784789724},
             {HCQ_INIT_XAVIER_UNIFORM, 0, 0, 0.21650635094610965}};
    for (size_t k = 0; k < 3; k++) {
        read_f(hcq_init_tensor(tx_ctx, u[k].init, HCQ_SHAPE(N, M), u[k].a, u[k].b), v, N * M);
        double lo = u[k].bound ? -u[k].bound : u[k].a, hi = u[k].bound ? u[k].bound : u[k].b, mn = 1e9, mx = -1e9;
        for (int i = 0; i < N * M; i++) mn = fmin(mn, v[i]), mx = fmax(mx, v[i]);
        cr_assert(mn >= lo && mx <= hi, "init %zu: [%g, %g] outside [%g, %g]", k, mn, mx, lo, hi);
        cr_assert(mn < lo + 0.05 * (hi - lo) && mx > hi - 0.05 * (hi - lo), "init %zu: [%g, %g] does not fill [%g, %g]", k, mn, mx, lo, hi);
    }
    /* normal, Kaiming normal: mean and standard deviation of 4096 draws */
    static const struct {
        hcq_init init;
        double a, b, mean, std;
    } g[] = {{HCQ_INIT_NORMAL, 1.5, 0.5, 1.5, 0.5}, {HCQ_INIT_KAIMING_NORMAL, 0, 0, 0, 0.17677669529663687},
             {HCQ_INIT_XAVIER_NORMAL, 2.0, 0, 0, 0.25}};
    for (size_t k = 0; k < 3; k++) {
        read_f(hcq_init_tensor(tx_ctx, g[k].init, HCQ_SHAPE(N, M), g[k].a, g[k].b), v, N * M);
        double s = 0, s2 = 0;
        for (int i = 0; i < N * M; i++) s += v[i];
        double mean = s / (N * M);
        for (int i = 0; i < N * M; i++) s2 += (v[i] - mean) * (v[i] - mean);
        double std = sqrt(s2 / (N * M));
        cr_assert(fabs(mean - g[k].mean) < 4 * g[k].std / 64 + 1e-6, "normal %zu: mean %g, want %g", k, mean, g[k].mean);
        cr_assert(fabs(std / g[k].std - 1) < 0.05, "normal %zu: std %g, want %g", k, std, g[k].std);
    }
    /* the same seed gives the same values */
    double a[8], b[8];
    hcq_ctx_seed(tx_ctx, 3);
    read_f(hcq_init_tensor(tx_ctx, HCQ_INIT_NORMAL, HCQ_SHAPE(8), 0, 1), a, 8);
    hcq_ctx_seed(tx_ctx, 3);
    read_f(hcq_init_tensor(tx_ctx, HCQ_INIT_NORMAL, HCQ_SHAPE(8), 0, 1), b, 8);
    tx_close(a, b, 8, 0, 0, "reseeded");
    cr_assert_null(hcq_init_tensor(tx_ctx, (hcq_init)99, HCQ_SHAPE(2), 0, 0));
    cr_assert_null(hcq_init_tensor(tx_ctx, HCQ_INIT_NORMAL, HCQ_SHAPE(2), 0, -1));
    free(v);
}

Test(api_nn, params)
{
    hcq_params *p = hcq_params_create(tx_ctx);
    T_NONNULL(p);
    hcq_tensor *w = hcq_param(p, "fc.weight", HCQ_INIT_ONES, HCQ_SHAPE(3, 2), 0, 0);
    T_NONNULL(w);
    cr_assert(hcq_tensor_requires_grad(w));
    hcq_tensor *r = hcq_params_add_buffer(p, "stat", hcq_zeros(tx_ctx, HCQ_I32, HCQ_SHAPE(4)));
    T_NONNULL(r);
    cr_assert(!hcq_tensor_requires_grad(r));
    cr_assert_eq(hcq_params_count(p), 2);
    cr_assert_eq(hcq_params_numel(p), 6);
    cr_assert_str_eq(hcq_params_name(p, 1), "stat");
    cr_assert(hcq_params_trainable(p, 0) && !hcq_params_trainable(p, 1));
    cr_assert_eq(hcq_params_find(p, "fc.weight"), w);
    cr_assert_null(hcq_params_find(p, "nope"));
    cr_assert_null(hcq_params_add(p, "fc.weight", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(1))));
    T_MSG_HAS("already");
    cr_assert_null(hcq_params_add(p, "ints", hcq_zeros(tx_ctx, HCQ_I32, HCQ_SHAPE(1))));
    cr_assert_null(hcq_params_add(p, "", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(1))));
    cr_assert(hcq_params_training(p));
    hcq_params_train(p, false);
    cr_assert(!hcq_params_training(p));
    T_OK(hcq_backward(hcq_sum(w, HCQ_ALL_AXES, false)));
    cr_assert(hcq_has_grad(w));
    T_OK(hcq_params_zero_grad(p));
    cr_assert(!hcq_has_grad(w));
    T_OK(hcq_params_destroy(p));
    T_FAILS(hcq_params_destroy(p), HCQ_ESTATE);
}

/* ** optimizers against a host reference.
 * loss = sum(c * p^2) / 2 has gradient c * p. */
enum { NP = 5 };
static const double P0[NP] = {1.0, -2.0, 0.5, 3.0, -0.25}, C[NP] = {1.0, 0.5, 2.0, 0.1, 4.0};

typedef struct ref {
    int kind; /* 0 sgd, 1 adam, 2 adamw */
    double lr, mom, wd, b1, b2, eps;
    bool nesterov;
    int sched; /* 0 const, 1 step(2, 0.5), 2 cosine(4, 0.01) */
    double clip;
    double p[NP], s1[NP], s2[NP];
    int t;
} ref;

static double ref_lr(const ref *r, int t)
{
    if (r->sched == 1) return r->lr * pow(0.5, (t - 1) / 2);
    if (r->sched == 2) return 0.01 + (r->lr - 0.01) * (1 + cos(M_PI * fmin(t - 1, 4) / 4)) / 2;
    return r->lr;
}

static void ref_step(ref *r)
{
    int t = ++r->t;
    double lr = ref_lr(r, t), g[NP], norm = 0;
    for (int i = 0; i < NP; i++) {
        g[i] = C[i] * r->p[i];
        norm += g[i] * g[i];
    }
    norm = sqrt(norm);
    double scale = r->clip > 0 ? fmin(1.0, r->clip / (norm + 1e-6)) : 1.0;
    for (int i = 0; i < NP; i++) {
        double gi = g[i] * scale;
        if (r->wd > 0 && r->kind != 2) gi += r->wd * r->p[i];
        if (r->kind == 0) {
            if (r->mom > 0) {
                r->s1[i] = r->mom * r->s1[i] + gi;
                gi = r->nesterov ? gi + r->mom * r->s1[i] : r->s1[i];
            }
            r->p[i] -= lr * gi;
        } else {
            r->s1[i] = r->b1 * r->s1[i] + (1 - r->b1) * gi;
            r->s2[i] = r->b2 * r->s2[i] + (1 - r->b2) * gi * gi;
            double mh = r->s1[i] / (1 - pow(r->b1, t)), vh = r->s2[i] / (1 - pow(r->b2, t));
            if (r->kind == 2) r->p[i] *= 1 - lr * r->wd;
            r->p[i] -= lr * mh / (sqrt(vh) + r->eps);
        }
    }
}

static void check_optim(const char *name, ref r)
{
    size_t mark = hcq_ctx_mark(tx_ctx);
    memcpy(r.p, P0, sizeof P0);
    hcq_params *ps = hcq_params_create(tx_ctx);
    hcq_tensor *p = hcq_params_add(ps, "p", tx_from(HCQ_F32, TX_SHAPE(NP), P0)), *c = tx_from(HCQ_F32, TX_SHAPE(NP), C);
    hcq_optim *o = r.kind == 0 ? hcq_sgd(ps, r.lr, r.mom, r.wd, r.nesterov)
                   : r.kind == 1 ? hcq_adam(ps, r.lr, r.b1, r.b2, r.eps, r.wd)
                                 : hcq_adamw(ps, r.lr, r.b1, r.b2, r.eps, r.wd);
    cr_assert(o, "%s: %s", name, hcq_error_message());
    if (r.sched == 1) T_OK(hcq_optim_schedule_step(o, 2, 0.5));
    if (r.sched == 2) T_OK(hcq_optim_schedule_cosine(o, 4, 0.01));
    if (r.clip > 0) T_OK(hcq_optim_clip(o, r.clip));
    for (int step = 0; step < 6; step++) {
        double lr;
        T_OK(hcq_tensor_item(hcq_optim_lr(o), &lr));
        cr_assert(fabs(lr - ref_lr(&r, step + 1)) <= 1e-6 * ref_lr(&r, step + 1) + 1e-9, "%s step %d: lr %g, want %g", name,
                  step, lr, ref_lr(&r, step + 1));
        size_t m = hcq_ctx_mark(tx_ctx);
        T_OK(hcq_backward(hcq_div_s(hcq_sum(hcq_mul(c, hcq_mul(p, p)), HCQ_ALL_AXES, false), 2.0)));
        T_OK(hcq_optim_step(o));
        cr_assert(!hcq_has_grad(p), "%s: the step consumes the gradient", name);
        hcq_ctx_release(tx_ctx, m);
        ref_step(&r);
        double got[NP];
        read_f(p, got, NP);
        char what[64];
        snprintf(what, sizeof what, "%s after step %d", name, step + 1);
        tx_close(got, r.p, NP, 2e-5, 1e-6, what);
    }
    cr_assert_gt(hcq_optim_state_bytes(o), 0);
    T_OK(hcq_optim_destroy(o));
    T_OK(hcq_params_destroy(ps));
    hcq_ctx_release(tx_ctx, mark);
}

Test(api_nn, optimizers)
{
    check_optim("sgd", (ref){.kind = 0, .lr = 0.1});
    check_optim("sgd momentum wd", (ref){.kind = 0, .lr = 0.05, .mom = 0.9, .wd = 0.01});
    check_optim("sgd nesterov", (ref){.kind = 0, .lr = 0.05, .mom = 0.8, .nesterov = true});
    check_optim("adam", (ref){.kind = 1, .lr = 0.05, .b1 = 0.9, .b2 = 0.999, .eps = 1e-8});
    check_optim("adam wd", (ref){.kind = 1, .lr = 0.05, .b1 = 0.8, .b2 = 0.99, .eps = 1e-6, .wd = 0.1});
    check_optim("adamw", (ref){.kind = 2, .lr = 0.05, .b1 = 0.9, .b2 = 0.999, .eps = 1e-8, .wd = 0.1});
}

Test(api_nn, schedules_clipping_and_set_lr)
{
    check_optim("sgd step schedule", (ref){.kind = 0, .lr = 0.1, .sched = 1});
    check_optim("adam cosine schedule", (ref){.kind = 1, .lr = 0.1, .b1 = 0.9, .b2 = 0.999, .eps = 1e-8, .sched = 2});
    check_optim("sgd clipped", (ref){.kind = 0, .lr = 0.1, .mom = 0.5, .clip = 0.5});
    /* set_lr takes effect from the next step */
    hcq_params *ps = hcq_params_create(tx_ctx);
    hcq_tensor *p = hcq_params_add(ps, "p", tx_from(HCQ_F32, TX_SHAPE(1), (double[]){1.0}));
    hcq_optim *o = hcq_sgd(ps, 0.5, 0, 0, false);
    T_OK(hcq_optim_set_lr(o, 0.25));
    T_OK(hcq_backward(hcq_sum(p, HCQ_ALL_AXES, false)));
    T_OK(hcq_optim_step(o));
    double v;
    T_OK(hcq_tensor_item(p, &v));
    cr_assert(v == 0.75, "after set_lr: %g", v);
    /* a parameter without a gradient is left alone */
    T_OK(hcq_optim_step(o));
    T_OK(hcq_tensor_item(p, &v));
    cr_assert(v == 0.75);
    T_FAILS(hcq_optim_set_lr(o, -1), HCQ_EINVAL);
    cr_assert_null(hcq_sgd(ps, 0.1, 0, 0, true)); /* Nesterov without momentum */
    cr_assert_null(hcq_adam(ps, 0.1, 1.0, 0.9, 1e-8, 0));
    /* hcq_clip_grad_norm on the list */
    T_OK(hcq_backward(hcq_mul_s(hcq_sum(p, HCQ_ALL_AXES, false), 4.0)));
    double norm, g;
    T_OK(hcq_tensor_item(hcq_clip_grad_norm(ps, 1.0), &norm));
    T_OK(hcq_tensor_item(hcq_grad(p), &g));
    cr_assert(fabs(norm - 4) < 1e-6 && fabs(g - 1) < 1e-5, "norm %g, clipped gradient %g", norm, g);
    T_OK(hcq_optim_destroy(o));
    T_FAILS(hcq_optim_step(o), HCQ_ESTATE);
    T_OK(hcq_params_destroy(ps));
}

/* ** layers with a mode */
Test(api_nn, batchnorm)
{
    enum { N = 4, Cc = 3, HW = 5 };
    double x[N * Cc * HW];
    for (int i = 0; i < N * Cc * HW; i++) x[i] = sin(i * 0.7) * (1 + i % 3) + (i / HW % Cc);
    hcq_params *p = hcq_params_create(tx_ctx);
    T_OK(hcq_batchnorm_add(p, "bn", Cc));
    cr_assert_eq(hcq_params_count(p), 4);
    hcq_tensor *tx = tx_from(HCQ_F32, TX_SHAPE(N, Cc, HW), x);
    double y[N * Cc * HW], rm[Cc], rv[Cc];
    read_f(hcq_batchnorm(p, "bn", tx, 0.1, 1e-5), y, N * Cc * HW);
    read_f(hcq_params_find(p, "bn.running_mean"), rm, Cc);
    read_f(hcq_params_find(p, "bn.running_var"), rv, Cc);
    for (int c = 0; c < Cc; c++) {
        double s = 0, s2 = 0, ys = 0, ys2 = 0;
        for (int n = 0; n < N; n++)
            for (int k = 0; k < HW; k++) {
                double v = x[(n * Cc + c) * HW + k], w = y[(n * Cc + c) * HW + k];
                s += v, s2 += v * v, ys += w, ys2 += w * w;
            }
        double m = s / (N * HW), var = s2 / (N * HW) - m * m;
        cr_assert(fabs(ys / (N * HW)) < 1e-5 && fabs(ys2 / (N * HW) - var / (var + 1e-5)) < 1e-4, "channel %d normalized", c);
        cr_assert(fabs(rm[c] - 0.1 * m) < 1e-5, "running mean %d: %g, want %g", c, rm[c], 0.1 * m);
        double unb = var * (N * HW) / (N * HW - 1);
        cr_assert(fabs(rv[c] - (0.9 + 0.1 * unb)) < 1e-4, "running var %d: %g, want %g", c, rv[c], 0.9 + 0.1 * unb);
    }
    /* evaluation mode: the running statistics, which stay */
    hcq_params_train(p, false);
    read_f(hcq_batchnorm(p, "bn", tx, 0.1, 1e-5), y, N * Cc * HW);
    for (int i = 0; i < N * Cc * HW; i++) {
        int c = i / HW % Cc;
        double want = (x[i] - rm[c]) / sqrt(rv[c] + 1e-5);
        cr_assert(fabs(y[i] - want) < 1e-4 * (1 + fabs(want)), "eval element %d: %g, want %g", i, y[i], want);
    }
    double rm2[Cc];
    read_f(hcq_params_find(p, "bn.running_mean"), rm2, Cc);
    tx_close(rm2, rm, Cc, 0, 0, "running mean in eval mode");
    /* gradients reach weight and bias (d sum(y) / d bias = N*HW) */
    hcq_params_train(p, true);
    T_OK(hcq_backward(hcq_sum(hcq_batchnorm(p, "bn", tx, 0.1, 1e-5), HCQ_ALL_AXES, false)));
    double gb[Cc];
    read_f(hcq_grad(hcq_params_find(p, "bn.bias")), gb, Cc);
    for (int c = 0; c < Cc; c++) cr_assert(fabs(gb[c] - N * HW) < 1e-4, "bias gradient %g", gb[c]);
    cr_assert_null(hcq_batchnorm(p, "other", tx, 0.1, 1e-5));
    T_OK(hcq_params_destroy(p));
}

Test(api_nn, dropout)
{
    enum { N = 4096 };
    hcq_params *p = hcq_params_create(tx_ctx);
    hcq_tensor *x = hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(N));
    hcq_ctx_seed(tx_ctx, 11);
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    read_f(hcq_dropout(p, x, 0.25), a, N);
    int zeros = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(a[i] == 0 || fabs(a[i] - 1 / 0.75) < 1e-6, "element %d: %g", i, a[i]);
        zeros += a[i] == 0;
    }
    cr_assert(fabs(zeros / (double)N - 0.25) < 0.03, "dropped %d of %d", zeros, N);
    hcq_ctx_seed(tx_ctx, 11);
    read_f(hcq_dropout(p, x, 0.25), b, N);
    tx_close(a, b, N, 0, 0, "same seed, same mask");
    /* the gradient is the mask, scaled */
    hcq_tensor *w = hcq_params_add(p, "w", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(N)));
    hcq_ctx_seed(tx_ctx, 11);
    T_OK(hcq_backward(hcq_sum(hcq_dropout(p, w, 0.25), HCQ_ALL_AXES, false)));
    read_f(hcq_grad(w), b, N);
    tx_close(b, a, N, 1e-6, 0, "gradient of dropout");
    hcq_params_train(p, false);
    read_f(hcq_dropout(p, x, 0.25), a, N);
    for (int i = 0; i < N; i++) cr_assert(a[i] == 1);
    cr_assert_null(hcq_dropout(p, x, 1.5));
    free(a);
    free(b);
    T_OK(hcq_params_destroy(p));
}

/* random numbers in a JIT'd function: every replay draws new ones, the
 * same as calling the function again would (here: in a second context
 * with the same seed, eagerly) */
static hcq_status drop_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    out[0] = hcq_add(hcq_dropout(user, in[0], 0.5), hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64)));
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(api_nn, dropout_in_a_jit)
{
    hcq_ctx *other = hcq_ctx_create(tx_dev);
    hcq_params *pa = hcq_params_create(tx_ctx), *pb = hcq_params_create(other);
    hcq_tensor *xa = hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(64)), *xb = hcq_ones(other, HCQ_F32, HCQ_SHAPE(64));
    T_OK(hcq_realize(xa));
    T_OK(hcq_realize(xb));
    hcq_ctx_seed(tx_ctx, 5);
    hcq_ctx_seed(other, 5);
    hcq_jit *jit = hcq_jit_create(tx_ctx, drop_fn, pa);
    double prev[64], a[64], b[64];
    for (int run = 0; run < 5; run++) {
        hcq_tensor *oa, *ob;
        T_OK(hcq_jit_run(jit, &xa, 1, &oa, 1));
        T_OK(drop_fn(other, &xb, 1, &ob, 1, pb));
        read_f(oa, a, 64);
        read_f(ob, b, 64);
        char what[32];
        snprintf(what, sizeof what, "run %d", run);
        tx_close(a, b, 64, 0, 0, what);
        if (run) {
            int same = 0;
            for (int i = 0; i < 64; i++) same += a[i] == prev[i];
            cr_assert_lt(same, 64, "run %d repeats run %d's numbers", run, run - 1);
        }
        memcpy(prev, a, sizeof a);
    }
    hcq_params_destroy(pa);
    hcq_params_destroy(pb);
    T_OK(hcq_ctx_destroy(other));
}

/* ** safetensors */
Test(api_nn, save_and_load)
{
    char path[T_TMP_PATH];
    int fd = t_tmpfile(path, sizeof path, "hcq_st");
    cr_assert(fd >= 0);
    close(fd);
    hcq_params *p = hcq_params_create(tx_ctx);
    hcq_ctx_seed(tx_ctx, 5);
    hcq_tensor *w = hcq_param(p, "layer \"1\".weight", HCQ_INIT_NORMAL, HCQ_SHAPE(3, 4), 0, 1);
    hcq_tensor *h = hcq_params_add(p, "half", hcq_cast(hcq_arange(tx_ctx, HCQ_F32, 0, 6, 1), HCQ_F16));
    hcq_tensor *k = hcq_params_add_buffer(p, "count", hcq_arange(tx_ctx, HCQ_I32, 0, 5, 1));
    hcq_tensor *s = hcq_params_add_buffer(p, "scalar", hcq_full(tx_ctx, HCQ_F32, NULL, 0, 2.5));
    T_NONNULL(w);
    T_NONNULL(h);
    T_NONNULL(k);
    T_NONNULL(s);
    double w0[12], h0[6], k0[5], got[12];
    read_f(w, w0, 12);
    read_f(h, h0, 6);
    read_f(k, k0, 5);
    T_OK(hcq_params_save(p, path));
    /* overwrite, then load back */
    T_OK(hcq_assign(w, hcq_scalar(tx_ctx, 9)));
    T_OK(hcq_assign(h, hcq_scalar(tx_ctx, 9)));
    T_OK(hcq_assign(k, hcq_scalar(tx_ctx, 9)));
    T_OK(hcq_params_load(p, path));
    read_f(w, got, 12);
    tx_close(got, w0, 12, 0, 0, "weight");
    read_f(h, got, 6);
    tx_close(got, h0, 6, 0, 0, "half");
    read_f(k, got, 5);
    tx_close(got, k0, 5, 0, 0, "count");
    /* a list the file does not fit: nothing is written */
    hcq_params *q = hcq_params_create(tx_ctx);
    hcq_tensor *a = hcq_params_add(q, "half", hcq_ones(tx_ctx, HCQ_F16, HCQ_SHAPE(6)));
    hcq_tensor *b = hcq_params_add(q, "layer \"1\".weight", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(4, 3)));
    T_FAILS(hcq_params_load(q, path), HCQ_EINVAL);
    T_MSG_HAS("shape");
    read_f(a, got, 6);
    for (int i = 0; i < 6; i++) cr_assert(got[i] == 1, "nothing loaded before the mismatch was found");
    (void)b;
    hcq_params *r = hcq_params_create(tx_ctx);
    hcq_params_add(r, "absent", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(1)));
    T_FAILS(hcq_params_load(r, path), HCQ_EINVAL);
    T_MSG_HAS("absent");
    /* a damaged file */
    FILE *f = fopen(path, "r+b");
    fseek(f, 12, SEEK_SET);
    fputc('}', f);
    fclose(f);
    T_FAILS(hcq_params_load(p, path), HCQ_EFORMAT);
    unlink(path);
    T_FAILS(hcq_params_load(p, path), HCQ_EINVAL);
    hcq_params_destroy(p);
    hcq_params_destroy(q);
    hcq_params_destroy(r);
}

/* the whole file at path (NULL when absent); *n its size */
static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
    if (d) closedir(d);
    return n;
}

/* A save that fails (here the file size limit stands for a full disk:
 * writes past it fail with EFBIG) leaves the previous checkpoint exactly
 * as it was and no temporary file behind; the next save replaces it. */
Test(api_nn, save_failing_keeps_the_previous_checkpoint)
{
    char dir[T_TMP_PATH], path[T_TMP_PATH + 32];
    t_tmpdir(dir, sizeof dir, "hcq_ckpt");
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    hcq_params *p = hcq_params_create(tx_ctx);
    hcq_tensor *w = T_NONNULL(hcq_params_add(p, "w", hcq_arange(tx_ctx, HCQ_F32, 0, 1000, 1)));
    T_OK(hcq_params_save(p, path));
    size_t n0, n1;
    uint8_t *before = T_NONNULL(slurp(path, &n0));
    cr_assert_gt(n0, 4000);
    chmod(path, 0640);
    T_OK(hcq_assign(w, hcq_scalar(tx_ctx, 7)));
    struct rlimit old, lim = {.rlim_cur = 2048, .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    hcq_status s = hcq_params_save(p, path);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    cr_assert_eq(s, HCQ_EIO, "%s", hcq_error_message());
    T_MSG_HAS("unchanged");
    uint8_t *after = slurp(path, &n1);
    cr_assert_not_null(after, "the previous checkpoint is gone");
    cr_assert(n1 == n0 && !memcmp(before, after, n0), "the previous checkpoint changed (%zu bytes, was %zu)", n1, n0);
    cr_assert_eq(entries(dir), 1, "a temporary file was left beside the checkpoint");
    /* a directory that does not exist: refused, nothing created */
    char nowhere[T_TMP_PATH + 32];
    snprintf(nowhere, sizeof nowhere, "%s/absent/model.safetensors", dir);
    T_FAILS(hcq_params_save(p, nowhere), HCQ_EINVAL);
    /* the next save replaces it whole, keeping its permissions */
    T_OK(hcq_params_save(p, path));
    struct stat st;
    cr_assert(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "mode %o", st.st_mode & 0777);
    cr_assert_eq(entries(dir), 1);
    T_OK(hcq_assign(w, hcq_scalar(tx_ctx, 0)));
    T_OK(hcq_params_load(p, path));
    double *got = malloc(1000 * sizeof *got);
    read_f(w, got, 1000);
    cr_assert(got[0] == 7 && got[999] == 7);
    free(got);
    free(before);
    free(after);
    unlink(path);
    rmdir(dir);
    hcq_params_destroy(p);
}

/* The loader checks the header against the file's size before reading
 * the data, and reads only the ranges it loads: a 16 GiB file (sparse)
 * whose header describes 8 bytes is refused at once, where reading it
 * whole first ran out of memory. Address space is capped a little above
 * what the process has so that reading it whole fails fast (not under the
 * sanitizers, whose shadow memory needs the space). */
Test(api_nn, load_checks_the_header_before_reading_data)
{
    char path[T_TMP_PATH];
    int fd = t_tmpfile(path, sizeof path, "hcq_big");
    cr_assert(fd >= 0);
    const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}   ";
    uint8_t len[8] = {(uint8_t)strlen(hdr)};
    cr_assert(write(fd, len, 8) == 8 && write(fd, hdr, strlen(hdr)) == (ssize_t)strlen(hdr));
    cr_assert_eq(ftruncate(fd, 16ll << 30), 0);
    close(fd);
    hcq_params *p = hcq_params_create(tx_ctx);
    T_NONNULL(hcq_params_add(p, "w", hcq_ones(tx_ctx, HCQ_F32, HCQ_SHAPE(2))));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    cr_assert(f && fscanf(f, "%lu", &pages) == 1);
    fclose(f);
    struct rlimit old, cap = {.rlim_cur = pages * 4096 + (1ull << 30), .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_AS, &old);
    setrlimit(RLIMIT_AS, &cap);
#endif
    hcq_status s = hcq_params_load(p, path);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    setrlimit(RLIMIT_AS, &old);
#endif
    cr_assert_eq(s, HCQ_EFORMAT, "%s: %s", hcq_status_name(s), hcq_error_message());
    T_MSG_HAS("describes 8 bytes of data");
    /* cut to size, it loads */
    cr_assert_eq(truncate(path, (off_t)(8 + strlen(hdr) + 8)), 0);
    T_OK(hcq_params_load(p, path));
    unlink(path);
    hcq_params_destroy(p);
}

/* ** batches */
Test(api_nn, batches)
{
    enum { N = 10, S = 3 };
    uint8_t xs[N * S];
    int32_t ys[N];
    for (int i = 0; i < N; i++) {
        ys[i] = i;
        for (int k = 0; k < S; k++) xs[i * S + k] = (uint8_t)(i * 10 + k);
    }
    hcq_idx x = {.type = 0x08, .ndim = 2, .shape = {N, S}, .data = xs, .size_B = sizeof xs};
    hcq_idx y = {.type = 0x0c, .ndim = 1, .shape = {N}, .data = ys, .size_B = sizeof ys};
    hcq_batches *b = hcq_batches_create(tx_ctx, &x, &y, 4, 0.5, 9, true);
    T_NONNULL(b);
    cr_assert_eq(hcq_batches_count(b), 3);
    hcq_tensor *bx, *by;
    double vx[4 * S], vy[4];
    T_OK(hcq_batches_get(b, 0, &bx, &by));
    read_f(bx, vx, 4 * S);
    read_f(by, vy, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(vy[i], i, "file order");
        for (int k = 0; k < S; k++) cr_assert_eq(vx[i * S + k], (i * 10 + k) * 0.5);
    }
    T_OK(hcq_batches_get(b, 2, &bx, &by));
    cr_assert_eq(hcq_tensor_dim(bx, 0), 2, "the last batch keeps the rest");
    /* a shuffled epoch: a permutation, the same for the same (seed, epoch) */
    int seen[N] = {0}, order[N];
    T_OK(hcq_batches_shuffle(b, 1));
    for (int i = 0; i < 3; i++) {
        T_OK(hcq_batches_get(b, i, &bx, &by));
        int64_t rows = hcq_tensor_dim(by, 0);
        read_f(by, vy, rows);
        read_f(bx, vx, rows * S);
        for (int r = 0; r < rows; r++) {
            int s = (int)vy[r];
            order[i * 4 + r] = s;
            seen[s]++;
            cr_assert_eq(vx[r * S], s * 10 * 0.5, "x and y stay paired");
        }
    }
    for (int i = 0; i < N; i++) cr_assert_eq(seen[i], 1, "sample %d", i);
    T_OK(hcq_batches_shuffle(b, 1));
    T_OK(hcq_batches_get(b, 0, &bx, &by));
    read_f(by, vy, 4);
    for (int r = 0; r < 4; r++) cr_assert_eq(vy[r], order[r], "same seed and epoch, same order");
    T_FAILS(hcq_batches_get(b, 3, &bx, &by), HCQ_EINVAL);
    T_OK(hcq_batches_destroy(b));
    T_FAILS(hcq_batches_destroy(b), HCQ_ESTATE);
    hcq_batches *d = hcq_batches_create(tx_ctx, &x, &y, 4, 1, 9, false);
    cr_assert_eq(hcq_batches_count(d), 2, "without the rest");
    hcq_batches_destroy(d);
    cr_assert_null(hcq_batches_create(tx_ctx, &x, &y, 11, 1, 0, false));
}

/* ** a JIT'd training step replays what eager steps compute */
typedef struct lin {
    hcq_params *p;
    hcq_tensor *w, *b;
    hcq_optim *o;
} lin;

static hcq_status lin_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    lin *m = user;
    hcq_tensor *pred = hcq_linear(hcq_tanh(hcq_linear(in[0], m->w, m->b)), hcq_ones(ctx, HCQ_F32, HCQ_SHAPE(1, 6)), NULL);
    hcq_tensor *d = hcq_sub(pred, in[1]);
    hcq_tensor *loss = hcq_mean(hcq_mul(d, d), HCQ_ALL_AXES, false);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(m->o, &loss, 1);
    out[0] = loss;
    return s;
}

static void lin_make(lin *m, uint64_t seed)
{
    hcq_ctx_seed(tx_ctx, seed);
    m->p = hcq_params_create(tx_ctx);
    m->w = hcq_param(m->p, "w", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(6, 4), 0, 0);
    m->b = hcq_param(m->p, "b", HCQ_INIT_ZEROS, HCQ_SHAPE(6), 0, 0);
    m->o = hcq_adamw(m->p, 0.05, 0.9, 0.99, 1e-8, 0.01);
    T_OK(hcq_optim_schedule_cosine(m->o, 8, 0.001));
    cr_assert(m->w && m->b && m->o, "%s", hcq_error_message());
}

Test(api_nn, jit_training_step)
{
    enum { STEPS = 8, B = 16 };
    lin e, j;
    lin_make(&e, 21);
    lin_make(&j, 21);
    hcq_tensor *x = hcq_empty(tx_ctx, HCQ_F32, HCQ_SHAPE(B, 4)), *y = hcq_empty(tx_ctx, HCQ_F32, HCQ_SHAPE(B, 1));
    hcq_jit *jit = hcq_jit_create(tx_ctx, lin_step, &j);
    double le[STEPS], lj[STEPS];
    uint64_t bytes[STEPS];
    for (int s = 0; s < STEPS; s++) {
        float xv[B * 4], yv[B];
        for (int i = 0; i < B; i++) {
            yv[i] = 0;
            for (int k = 0; k < 4; k++) {
                xv[i * 4 + k] = (float)sin(s * 3.1 + i * 1.7 + k);
                yv[i] += (float)((k + 1) * 0.3) * xv[i * 4 + k];
            }
        }
        T_OK(hcq_tensor_write(x, xv, sizeof xv));
        T_OK(hcq_tensor_write(y, yv, sizeof yv));
        size_t m = hcq_ctx_mark(tx_ctx);
        hcq_tensor *loss;
        T_OK(lin_step(tx_ctx, (hcq_tensor *[]){x, y}, 2, &loss, 1, &e));
        T_OK(hcq_tensor_item(loss, &le[s]));
        hcq_ctx_release(tx_ctx, m);
        T_OK(hcq_jit_run(jit, (hcq_tensor *[]){x, y}, 2, &loss, 1));
        T_OK(hcq_tensor_item(loss, &lj[s]));
        hcq_tensor_free(loss);
        hcq_ctx_stats st;
        T_OK(hcq_ctx_get_stats(tx_ctx, &st));
        bytes[s] = st.buffer_bytes;
    }
    for (int s = 0; s < STEPS; s++) cr_assert(fabs(le[s] - lj[s]) <= 1e-5 * fabs(le[s]) + 1e-7, "step %d: eager loss %g, JIT %g", s, le[s], lj[s]);
    cr_assert(le[STEPS - 1] < le[0], "the loss falls: %g -> %g", le[0], le[STEPS - 1]);
    double we[24], wj[24];
    read_f(e.w, we, 24);
    read_f(j.w, wj, 24);
    tx_close(wj, we, 24, 1e-5, 1e-7, "weights after the replays");
    cr_assert_gt(hcq_jit_kernel_count(jit), 0);
    for (int s = 3; s < STEPS; s++) cr_assert_eq(bytes[s], bytes[2], "device memory after replay %d: %llu, after the capture %llu", s, (unsigned long long)bytes[s], (unsigned long long)bytes[2]);
    hcq_optim_destroy(e.o);
    hcq_optim_destroy(j.o);
    hcq_params_destroy(e.p);
    hcq_params_destroy(j.p);
}
