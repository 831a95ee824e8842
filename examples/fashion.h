/* What train_mlp.c and train_cnn.c share: loading Fashion-MNIST (the
 * Debian package dataset-fashion-mnist), the JIT'd training step, the
 * evaluation, and the report per epoch. A model gives its parameters and
 * its forward pass; everything else is here.
 *
 * Options: [DEVICE] [--epochs N] [--batch N] [--lr X] [--seed N]
 *          [--train N] [--test N] (first N samples only) [--eager] [--quiet]
 *          [--data DIR] [--save FILE.safetensors] [--min-accuracy P]
 * --min-accuracy makes the run fail (exit 2) below P percent. While an
 * epoch runs, a line at least every FM_PROGRESS_S seconds says the step,
 * the loss, samples/s and the epoch's ETA (--quiet: only the epochs). */
#ifndef HCQ_EXAMPLES_FASHION_H
#define HCQ_EXAMPLES_FASHION_H

#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fm_opts {
    const char *device, *data, *save;
    int epochs;
    int64_t batch, train, test;
    double lr, min_acc;
    uint64_t seed;
    bool eager, quiet;
} fm_opts;

/* how often a long epoch says where it is */
#define FM_PROGRESS_S 3.0

typedef struct fm_model fm_model;
struct fm_model {
    const char *name;
    hcq_params *p;
    hcq_optim *opt;
    /* logits [N, 10] from images [N, 28, 28] */
    hcq_tensor *(*forward)(fm_model *m, hcq_tensor *x);
    void *self;
};

static int fm_fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, hcq_error_message());
    return 1;
}

static int fm_parse(int argc, char **argv, fm_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            o->device = a;
            continue;
        }
        if (!strcmp(a, "--eager")) {
            o->eager = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = true;
            continue;
        }
        if (!v) return fprintf(stderr, "%s needs a value\n", a), 1;
        i++;
        if (!strcmp(a, "--epochs")) o->epochs = atoi(v);
        else if (!strcmp(a, "--batch")) o->batch = atoll(v);
        else if (!strcmp(a, "--lr")) o->lr = atof(v);
        else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--train")) o->train = atoll(v);
        else if (!strcmp(a, "--test")) o->test = atoll(v);
        else if (!strcmp(a, "--data")) o->data = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--min-accuracy")) o->min_acc = atof(v);
        else return fprintf(stderr, "unknown option %s\n", a), 1;
    }
    if (o->epochs < 1 || o->batch < 1) return fprintf(stderr, "--epochs and --batch must be at least 1\n"), 1;
    return 0;
}

/* the first `keep` samples of an IDX file (all of them for 0) */
static int fm_read(const char *dir, const char *file, int64_t keep, hcq_idx *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (hcq_idx_read(path, out))
        return fprintf(stderr, "%s\n(scripts/deps.sh installs the Debian package dataset-fashion-mnist)\n", hcq_error_message()), 1;
    if (keep > 0 && keep < out->shape[0]) out->shape[0] = keep;
    return 0;
}

/* ** the JIT'd step: forward, backward, the optimizer's update in place */
static hcq_status fm_train_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    fm_model *m = user;
    hcq_tensor *loss = hcq_cross_entropy(m->forward(m, in[0]), in[1]);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(m->opt, &loss, 1); /* the loss in the same pass, from the old parameters */
    out[0] = loss;
    return s;
}

/* the number of correct predictions in the batch (i32) */
static hcq_status fm_eval_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    fm_model *m = user;
    hcq_tensor *pred = hcq_argmax(m->forward(m, in[0]), -1, false);
    out[0] = hcq_sum(hcq_eq(pred, in[1]), HCQ_ALL_AXES, false);
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status fm_step(hcq_jit *jit, hcq_jit_fn fn, fm_model *m, hcq_tensor *x, hcq_tensor *y, hcq_tensor **out)
{
    hcq_tensor *in[2] = {x, y};
    if (jit) return hcq_jit_run(jit, in, 2, out, 1);
    return fn(hcq_tensor_ctx(x), in, 2, out, 1, m);
}

static double fm_accuracy(hcq_ctx *ctx, fm_model *m, hcq_batches *test, int64_t n, hcq_jit *jit)
{
    hcq_params_train(m->p, false);
    bool prev = hcq_set_grad_enabled(false);
    int64_t correct = 0;
    for (int64_t i = 0; i < hcq_batches_count(test); i++) {
        size_t mark = hcq_ctx_mark(ctx);
        hcq_tensor *x, *y, *c;
        double v;
        if (hcq_batches_get(test, i, &x, &y) || fm_step(jit, fm_eval_step, m, x, y, &c) || hcq_tensor_item(c, &v)) {
            fm_fail("evaluating");
            correct = -1;
            break;
        }
        correct += (int64_t)v;
        hcq_ctx_release(ctx, mark);
    }
    hcq_set_grad_enabled(prev);
    hcq_params_train(m->p, true);
    return correct < 0 ? -1 : 100.0 * (double)correct / (double)n;
}

/* the kernels' build: a first step of a model builds dozens of kernels,
 * a minute or more with a cold kernel cache, so say how far it got */
typedef struct fm_build {
    uint64_t t0, said;
} fm_build;

static void fm_on_build(void *user, const char *kernel, uint64_t built)
{
    fm_build *b = user;
    uint64_t now = hcq_now_ns();
    if ((double)(now - b->said) * 1e-9 < FM_PROGRESS_S) return;
    printf("  building kernels: %llu built, the last %s  (%.0f s)\n", (unsigned long long)built, kernel,
           (double)(now - b->t0) * 1e-9);
    fflush(stdout);
    b->said = now;
}

/* Trains m for o->epochs on the training set and reports each epoch. */
static int fm_run(hcq_ctx *ctx, fm_model *m, const fm_opts *o)
{
    hcq_idx xtr, ytr, xte, yte;
    const char *dir = o->data ? o->data : "/usr/share/datasets/fashion-mnist";
    if (fm_read(dir, "train-images-idx3-ubyte.gz", o->train, &xtr) || fm_read(dir, "train-labels-idx1-ubyte.gz", o->train, &ytr) ||
        fm_read(dir, "t10k-images-idx3-ubyte.gz", o->test, &xte) || fm_read(dir, "t10k-labels-idx1-ubyte.gz", o->test, &yte))
        return 1;
    int64_t ntest = xte.shape[0], tb = ntest >= 1000 ? 1000 : ntest;
    hcq_batches *train = hcq_batches_create(ctx, &xtr, &ytr, o->batch, 1.0 / 255, o->seed, false);
    hcq_batches *test = hcq_batches_create(ctx, &xte, &yte, tb, 1.0 / 255, o->seed, true);
    if (!train || !test) return fm_fail("batches");
    hcq_jit *tj = o->eager ? NULL : hcq_jit_create(ctx, fm_train_step, m);
    hcq_jit *ej = o->eager ? NULL : hcq_jit_create(ctx, fm_eval_step, m);
    int64_t steps = hcq_batches_count(train);
    hcq_tensor **losses = calloc((size_t)steps, sizeof *losses);
    printf("%s on %s: %lld parameters, %lld training samples in batches of %lld, %lld test samples, %s\n", m->name,
           hcq_device_get_props(hcq_ctx_device(ctx))->id, (long long)hcq_params_numel(m->p), (long long)xtr.shape[0],
           (long long)o->batch, (long long)ntest, o->eager ? "eager" : "JIT'd step");
    double acc = 0;
    fm_build build = {.t0 = hcq_now_ns(), .said = hcq_now_ns()};
    if (!o->quiet) hcq_ctx_on_build(ctx, fm_on_build, &build);
    for (int e = 0; e < o->epochs; e++) {
        size_t mark = hcq_ctx_mark(ctx);
        hcq_batches_shuffle(train, (uint64_t)e);
        uint64_t t0 = hcq_now_ns(), said = t0, ref_t = t0;
        int64_t ref_i = 0;
        if (!o->quiet && e == 0) {
            printf("  epoch 1: building the step's kernels (the first step; cached for later runs)\n");
            fflush(stdout);
        }
        for (int64_t i = 0; i < steps; i++) {
            hcq_tensor *x, *y;
            if (hcq_batches_get(train, i, &x, &y) || fm_step(tj, fm_train_step, m, x, y, &losses[i]))
                return fm_fail("training step");
            /* steps run ahead of the host: reading a step's loss waits for
             * it, so the rate and the ETA are the device's. The rate is
             * counted from the end of the first step, which compiles. */
            uint64_t now = hcq_now_ns();
            bool first = i == 0 && e == 0;
            if (!o->quiet && i + 1 < steps && (first || (double)(now - said) * 1e-9 >= FM_PROGRESS_S)) {
                double v;
                if (hcq_tensor_item(losses[i], &v)) return fm_fail("reading the loss");
                now = hcq_now_ns();
                if (first) {
                    printf("  epoch 1: step 1/%lld  loss %.4f  (%.1f s, the kernels' build included)\n", (long long)steps, v,
                           (double)(now - t0) * 1e-9);
                    ref_t = now;
                    ref_i = 1;
                } else {
                    double rate = (double)((i + 1 - ref_i) * o->batch) / ((double)(now - ref_t) * 1e-9);
                    printf("  epoch %d: step %lld/%lld  loss %.4f  %.0f samples/s  ETA %.0f s\n", e + 1,
                           (long long)(i + 1), (long long)steps, v, rate, (double)((steps - i - 1) * o->batch) / rate);
                }
                fflush(stdout);
                said = now;
            }
        }
        if (hcq_device_synchronize(hcq_ctx_device(ctx))) return fm_fail("training");
        double sec = (double)(hcq_now_ns() - t0) * 1e-9, sum = 0;
        for (int64_t i = 0; i < steps; i++) {
            double v;
            if (hcq_tensor_item(losses[i], &v)) return fm_fail("reading the loss");
            sum += v;
        }
        hcq_ctx_release(ctx, mark);
        acc = fm_accuracy(ctx, m, test, ntest, ej);
        if (acc < 0) return 1;
        hcq_ctx_stats st;
        hcq_ctx_get_stats(ctx, &st);
        printf("epoch %d: loss %.4f  test accuracy %.2f %%  %.0f samples/s  (%u kernels per step, %.1f MiB device memory)\n",
               e + 1, sum / (double)steps, acc, (double)(steps * o->batch) / sec, tj ? hcq_jit_kernel_count(tj) : 0,
               (double)st.buffer_bytes / (1 << 20));
        fflush(stdout);
    }
    hcq_ctx_on_build(ctx, NULL, NULL);
    if (o->save && hcq_params_save(m->p, o->save)) return fm_fail("saving");
    if (o->save) printf("saved the parameters to %s\n", o->save);
    free(losses);
    hcq_jit_destroy(tj);
    hcq_jit_destroy(ej);
    hcq_batches_destroy(train);
    hcq_batches_destroy(test);
    hcq_idx_free(&xtr);
    hcq_idx_free(&ytr);
    hcq_idx_free(&xte);
    hcq_idx_free(&yte);
    if (o->min_acc > 0 && acc < o->min_acc) {
        fprintf(stderr, "%s: test accuracy %.2f %% is below %.2f %%\n", m->name, acc, o->min_acc);
        return 2;
    }
    return 0;
}

#endif
