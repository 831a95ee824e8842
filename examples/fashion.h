/* What train_mlp.c and train_cnn.c share: loading Fashion-MNIST (the
 * Debian package dataset-fashion-mnist), the JIT'd training step, the
 * evaluation, and the report per epoch. A model gives how to build its
 * parameters and optimizer in a context, and its forward pass; everything
 * else is here.
 *
 * Options: [DEVICES] [--epochs N] [--batch N] [--lr X] [--seed N]
 *          [--train N] [--test N] (first N samples only) [--eager] [--quiet]
 *          [--data DIR] [--save FILE.safetensors] [--min-accuracy P]
 * DEVICES is one device (NV:0) or a comma-separated list (NV:0,NV:1,...):
 * with several, the model is trained data-parallel (nn.h, hcq_dp): a
 * replica per device, each taking an equal part of every batch, the
 * gradients averaged across the devices each step. Started by mpirun
 * (a build with Open MPI's mpicc present: FM_MPI), every rank drives its
 * own list and the gradients are averaged across the ranks as well
 * (fm_mpi_gather below is the whole of the MPI glue): rank 0 prints.
 * Ranks sharing a machine take the devices after the ones before them
 * (local rank 1 of `mpirun -np 2 train_mlp NV:0,NV:1` opens NV:2,NV:3),
 * so one list serves one rank per machine and several per machine.
 * --min-accuracy makes the run fail (exit 2) below P percent. While an
 * epoch runs, a line at least every FM_PROGRESS_S seconds says the step,
 * the loss, samples/s and the epoch's ETA (--quiet: only the epochs). */
#ifndef HCQ_EXAMPLES_FASHION_H
#define HCQ_EXAMPLES_FASHION_H

#include <hcq/hcq.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FM_MPI
#include <mpi.h>
#endif

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

#define FM_MAX_DEVICES 16

typedef struct fm_model fm_model;
/* One replica of the model: on one device, in a context of its own. With
 * one device there is one; data-parallel training has one per device
 * (dp, i: the set and this replica's place in it). */
typedef struct fm_replica {
    fm_model *m;
    hcq_device *dev;
    hcq_ctx *ctx;
    hcq_params *p;
    hcq_optim *opt;
    hcq_tensor *w[16]; /* the model's tensors, as its build leaves them */
    hcq_dp *dp;
    int i;
    hcq_batches *train;
    hcq_jit *tj, *aj;    /* the step; data-parallel: the update after the average */
    hcq_tensor **losses; /* this epoch's, one per step */
} fm_replica;

struct fm_model {
    const char *name;
    /* makes r->p (the parameters, r->w) and r->opt in r->ctx; 0 or 1 */
    int (*build)(fm_replica *r, const fm_opts *o);
    /* logits [N, 10] from images [N, 28, 28] */
    hcq_tensor *(*forward)(fm_replica *r, hcq_tensor *x);
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

/* ** the JIT'd steps. One device: forward, backward, the optimizer's
 * update in place. Data-parallel: forward, backward and the gradients into
 * the replica's vector (hcq_dp_grads); after hcq_dp_reduce averaged the
 * vectors, fm_apply_step's update. */
static hcq_status fm_train_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    fm_replica *r = user;
    hcq_tensor *loss = hcq_cross_entropy(r->m->forward(r, in[0]), in[1]);
    hcq_status s = hcq_backward(loss);
    /* the loss in the same pass, from the old parameters */
    if (!s) s = r->dp ? hcq_dp_grads(r->dp, r->i, &loss, 1) : hcq_optim_step_with(r->opt, &loss, 1);
    out[0] = loss;
    return s;
}

static hcq_status fm_apply_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)in, (void)nin, (void)nout;
    fm_replica *r = user;
    hcq_status s = hcq_dp_apply(r->dp, r->i);
    out[0] = s ? NULL : hcq_optim_lr(r->opt); /* a JIT has an output: the next step's learning rate */
    return s ? s : out[0] ? HCQ_OK : hcq_error_status();
}

/* the number of correct predictions in the batch (i32) */
static hcq_status fm_eval_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    fm_replica *r = user;
    hcq_tensor *pred = hcq_argmax(r->m->forward(r, in[0]), -1, false);
    out[0] = hcq_sum(hcq_eq(pred, in[1]), HCQ_ALL_AXES, false);
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status fm_step(hcq_jit *jit, hcq_jit_fn fn, fm_replica *r, hcq_tensor *x, hcq_tensor *y, hcq_tensor **out)
{
    hcq_tensor *in[2] = {x, y};
    int nin = x ? 2 : 0;
    if (jit) return hcq_jit_run(jit, in, nin, out, 1);
    return fn(r->ctx, in, nin, out, 1, r);
}

static double fm_accuracy(fm_replica *r, hcq_batches *test, int64_t n, hcq_jit *jit)
{
    hcq_params_train(r->p, false);
    bool prev = hcq_set_grad_enabled(false);
    int64_t correct = 0;
    for (int64_t i = 0; i < hcq_batches_count(test); i++) {
        size_t mark = hcq_ctx_mark(r->ctx);
        hcq_tensor *x, *y, *c;
        double v;
        if (hcq_batches_get(test, i, &x, &y) || fm_step(jit, fm_eval_step, r, x, y, &c) || hcq_tensor_item(c, &v)) {
            fm_fail("evaluating");
            correct = -1;
            break;
        }
        correct += (int64_t)v;
        hcq_ctx_release(r->ctx, mark);
    }
    hcq_set_grad_enabled(prev);
    hcq_params_train(r->p, true);
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

/* The mean loss of an epoch: with one device, the mean of its steps'
 * losses; data-parallel, each step's loss is the mean of its parts' (every
 * rank's replicas, gathered in rank order, so every rank and a single
 * process with all the devices add them in the same order). */
static int fm_epoch_loss(fm_replica *rs, int n, int64_t steps, double *out)
{
    double *mine = malloc((size_t)(n * steps) * sizeof *mine), *all = NULL;
    int parts = rs[0].dp ? hcq_dp_parts(rs[0].dp) : 1;
    if (!mine) return fprintf(stderr, "out of memory\n"), 1;
    for (int r = 0; r < n; r++)
        for (int64_t i = 0; i < steps; i++)
            if (hcq_tensor_item(rs[r].losses[i], &mine[r * steps + i])) return free(mine), fm_fail("reading the loss");
    if (rs[0].dp) {
        size_t bytes = (size_t)(n * steps) * sizeof *mine;
        if (!(all = malloc(bytes * (size_t)(parts / n)))) return free(mine), fprintf(stderr, "out of memory\n"), 1;
        if (hcq_dp_gather(rs[0].dp, mine, bytes, all)) return free(mine), free(all), fm_fail("gathering the losses");
    }
    double sum = 0;
    for (int64_t i = 0; i < steps; i++) {
        double step = 0;
        for (int p = 0; p < parts; p++) step += (all ? all : mine)[p * steps + i];
        sum += step / parts;
    }
    free(mine);
    free(all);
    *out = sum / (double)steps;
    return 0;
}

/* Trains the replicas rs[0..n) for o->epochs on the training set and
 * reports each epoch (where `say`: rank 0). */
static int fm_run(fm_replica *rs, int n, const fm_opts *o, bool say)
{
    fm_replica *r0 = &rs[0];
    fm_model *m = r0->m;
    hcq_dp *dp = r0->dp;
    hcq_idx xtr, ytr, xte, yte;
    const char *dir = o->data ? o->data : "/usr/share/datasets/fashion-mnist";
    if (fm_read(dir, "train-images-idx3-ubyte.gz", o->train, &xtr) || fm_read(dir, "train-labels-idx1-ubyte.gz", o->train, &ytr) ||
        fm_read(dir, "t10k-images-idx3-ubyte.gz", o->test, &xte) || fm_read(dir, "t10k-labels-idx1-ubyte.gz", o->test, &yte))
        return 1;
    int64_t ntest = xte.shape[0], tb = ntest >= 1000 ? 1000 : ntest;
    int parts = dp ? hcq_dp_parts(dp) : 1;
    for (int r = 0; r < n; r++) {
        rs[r].train = hcq_batches_create(rs[r].ctx, &xtr, &ytr, o->batch, 1.0 / 255, o->seed, false);
        if (!rs[r].train || (dp && hcq_batches_split(rs[r].train, hcq_dp_part(dp, r), parts))) return fm_fail("batches");
        rs[r].tj = o->eager ? NULL : hcq_jit_create(rs[r].ctx, fm_train_step, &rs[r]);
        rs[r].aj = o->eager || !dp ? NULL : hcq_jit_create(rs[r].ctx, fm_apply_step, &rs[r]);
    }
    hcq_batches *test = hcq_batches_create(r0->ctx, &xte, &yte, tb, 1.0 / 255, o->seed, true);
    if (!test) return fm_fail("batches");
    hcq_jit *ej = o->eager ? NULL : hcq_jit_create(r0->ctx, fm_eval_step, r0);
    int64_t steps = hcq_batches_count(r0->train);
    for (int r = 0; r < n; r++)
        if (!(rs[r].losses = calloc((size_t)steps, sizeof *rs[r].losses))) return fprintf(stderr, "out of memory\n"), 1;
    if (say) {
        char where[FM_MAX_DEVICES * 20] = "";
        for (int r = 0; r < n; r++)
            snprintf(where + strlen(where), sizeof where - strlen(where), "%s%s", r ? "," : "", hcq_device_get_props(rs[r].dev)->id);
        printf("%s on %s", m->name, where);
        if (dp && parts > n) printf(" in each of %d ranks", parts / n);
        if (dp) printf(" (data-parallel: %d parts of %lld samples)", parts, (long long)(o->batch / parts));
        printf(": %lld parameters, %lld training samples in batches of %lld, %lld test samples, %s\n",
               (long long)hcq_params_numel(r0->p), (long long)xtr.shape[0], (long long)o->batch, (long long)ntest,
               o->eager ? "eager" : "JIT'd step");
    }
    double acc = 0;
    bool progress = say && !o->quiet;
    fm_build build = {.t0 = hcq_now_ns(), .said = hcq_now_ns()};
    if (progress) hcq_ctx_on_build(r0->ctx, fm_on_build, &build);
    for (int e = 0; e < o->epochs; e++) {
        size_t mark[FM_MAX_DEVICES];
        for (int r = 0; r < n; r++) {
            mark[r] = hcq_ctx_mark(rs[r].ctx);
            hcq_batches_shuffle(rs[r].train, (uint64_t)e);
        }
        uint64_t t0 = hcq_now_ns(), said = t0, ref_t = t0;
        int64_t ref_i = 0;
        if (progress && e == 0) {
            printf("  epoch 1: building the step's kernels (the first step; cached for later runs)\n");
            fflush(stdout);
        }
        for (int64_t i = 0; i < steps; i++) {
            for (int r = 0; r < n; r++) {
                hcq_tensor *x, *y;
                if (hcq_batches_get(rs[r].train, i, &x, &y) || fm_step(rs[r].tj, fm_train_step, &rs[r], x, y, &rs[r].losses[i]))
                    return fm_fail("training step");
            }
            if (dp && hcq_dp_reduce(dp)) return fm_fail("averaging the gradients");
            for (int r = 0; dp && r < n; r++) {
                hcq_tensor *lr;
                if (fm_step(rs[r].aj, fm_apply_step, &rs[r], NULL, NULL, &lr)) return fm_fail("the update");
            }
            /* steps run ahead of the host: reading a step's loss waits for
             * it, so the rate and the ETA are the device's. The rate is
             * counted from the end of the first step, which compiles.
             * Data-parallel, the loss said here is the first device's part's. */
            uint64_t now = hcq_now_ns();
            bool first = i == 0 && e == 0;
            if (progress && i + 1 < steps && (first || (double)(now - said) * 1e-9 >= FM_PROGRESS_S)) {
                double v;
                if (hcq_tensor_item(r0->losses[i], &v)) return fm_fail("reading the loss");
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
        for (int r = 0; r < n; r++)
            if (hcq_device_synchronize(rs[r].dev)) return fm_fail("training");
        double sec = (double)(hcq_now_ns() - t0) * 1e-9, loss;
        if (fm_epoch_loss(rs, n, steps, &loss)) return 1;
        for (int r = 0; r < n; r++) hcq_ctx_release(rs[r].ctx, mark[r]);
        /* the replicas are equal: the first one's accuracy is the model's */
        acc = fm_accuracy(r0, test, ntest, ej);
        if (acc < 0) return 1;
        hcq_ctx_stats st;
        hcq_ctx_get_stats(r0->ctx, &st);
        if (say)
            printf("epoch %d: loss %.4f  test accuracy %.2f %%  %.0f samples/s  (%u kernels per step, %.1f MiB device memory%s)\n",
                   e + 1, loss, acc, (double)(steps * o->batch) / sec,
                   r0->tj ? hcq_jit_kernel_count(r0->tj) + (r0->aj ? hcq_jit_kernel_count(r0->aj) : 0) : 0,
                   (double)st.buffer_bytes / (1 << 20), n > 1 ? " on the first device" : "");
        fflush(stdout);
    }
    hcq_ctx_on_build(r0->ctx, NULL, NULL);
    if (say && o->save && hcq_params_save(r0->p, o->save)) return fm_fail("saving");
    if (say && o->save) printf("saved the parameters to %s\n", o->save);
    for (int r = 0; r < n; r++) {
        free(rs[r].losses);
        hcq_jit_destroy(rs[r].tj);
        hcq_jit_destroy(rs[r].aj);
        hcq_batches_destroy(rs[r].train);
    }
    hcq_jit_destroy(ej);
    hcq_batches_destroy(test);
    hcq_idx_free(&xtr);
    hcq_idx_free(&ytr);
    hcq_idx_free(&xte);
    hcq_idx_free(&yte);
    if (o->min_acc > 0 && acc < o->min_acc) {
        if (say) fprintf(stderr, "%s: test accuracy %.2f %% is below %.2f %%\n", m->name, acc, o->min_acc);
        return 2;
    }
    return 0;
}

#ifdef FM_MPI
/* The MPI glue, all of it: hcq_dp's gather is MPI_Allgather (every rank's
 * bytes, in rank order, on every rank: a data movement, so the sums hcq
 * makes of them have one order whatever MPI's reductions would do). */
static hcq_status fm_mpi_gather(void *user, const void *mine, size_t bytes, void *all)
{
    (void)user;
    if (bytes > INT_MAX) {
        fprintf(stderr, "fm_mpi_gather: %zu bytes: more than one MPI_Allgather moves\n", bytes);
        return HCQ_ELIMIT;
    }
    int rc = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) fprintf(stderr, "MPI_Allgather: error %d\n", rc);
    return rc == MPI_SUCCESS ? HCQ_OK : HCQ_EIO;
}

/* started by mpirun (Open MPI's, or a PMI launcher's) */
static bool fm_mpi_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK"); }
#endif

/* main(): the options, the devices (a comma-separated list), MPI where
 * mpirun started us, a replica per device, the training. */
static int fm_main(int argc, char **argv, fm_model *m, fm_opts o)
{
    if (fm_parse(argc, argv, &o)) return 1;
    int rank = 0, nranks = 1;
#ifdef FM_MPI
    bool mpi = fm_mpi_launched();
    if (mpi && (MPI_Init(&argc, &argv) != MPI_SUCCESS || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
                MPI_Comm_size(MPI_COMM_WORLD, &nranks) != MPI_SUCCESS))
        return fprintf(stderr, "%s: MPI_Init failed\n", m->name), 1;
#endif
    char names[FM_MAX_DEVICES][32];
    int n = 0;
    for (const char *d = o.device; d && *d; n++) {
        size_t len = strcspn(d, ",");
        if (n == FM_MAX_DEVICES || len == 0 || len >= sizeof names[0])
            return fprintf(stderr, "%s: %s: up to %d devices, comma-separated (NV:0,NV:1)\n", m->name, o.device, FM_MAX_DEVICES), 1;
        memcpy(names[n], d, len);
        names[n][len] = 0;
        d += len + (d[len] == ',');
    }
#ifdef FM_MPI
    /* ranks sharing a machine take the next devices of the same kind:
     * with NV:0,NV:1, the second rank on a machine opens NV:2,NV:3 */
    MPI_Comm node;
    int local = 0;
    if (mpi && MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    for (int r = 0; r < n && local; r++) {
        char kind[16];
        int idx, used;
        if (sscanf(names[r], "%15[^:]:%d%n", kind, &idx, &used) == 2 && !names[r][used])
            snprintf(names[r], sizeof names[r], "%s:%d", kind, idx + local * n);
    }
#endif
    fm_replica rs[FM_MAX_DEVICES] = {0};
    int rc = 0;
    hcq_params *ps[FM_MAX_DEVICES];
    hcq_optim *os[FM_MAX_DEVICES];
    for (int r = 0; r < (n ? n : 1) && !rc; r++) {
        rs[r].m = m;
        rs[r].i = r;
        rs[r].dev = hcq_device_open(n ? names[r] : NULL);
        rs[r].ctx = rs[r].dev ? hcq_ctx_create(rs[r].dev) : NULL;
        if (!rs[r].ctx) rc = fm_fail(m->name);
        else {
            hcq_ctx_seed(rs[r].ctx, o.seed);
            rc = m->build(&rs[r], &o);
            ps[r] = rs[r].p;
            os[r] = rs[r].opt;
        }
    }
    if (!n) n = 1;
    hcq_dp *dp = NULL;
    if (!rc && (n > 1 || nranks > 1)) {
        dp = hcq_dp_create(ps, os, n);
        if (!dp) rc = fm_fail("data-parallel replicas");
#ifdef FM_MPI
        else if (nranks > 1 && hcq_dp_set_ranks(dp, rank, nranks, fm_mpi_gather, NULL)) rc = fm_fail("data-parallel ranks");
#endif
        for (int r = 0; r < n; r++) rs[r].dp = dp;
    }
    if (!rc) rc = fm_run(rs, n, &o, rank == 0);
    hcq_dp_destroy(dp);
    for (int r = n - 1; r >= 0; r--) {
        hcq_optim_destroy(rs[r].opt);
        hcq_params_destroy(rs[r].p);
        hcq_ctx_destroy(rs[r].ctx);
        hcq_device_close(rs[r].dev);
    }
#ifdef FM_MPI
    if (mpi && rc == 1) MPI_Abort(MPI_COMM_WORLD, 1); /* the other ranks may wait in a gather */
    if (mpi) MPI_Finalize();
#endif
    return rc;
}

#endif
