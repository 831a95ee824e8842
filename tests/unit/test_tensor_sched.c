/* The scheduler and the lowering, on the CPU device.
 *
 * Kernel counts (keep them from regressing):
 *   (a*b+c).sum()                          1
 *   relu(x @ w + b)                        1
 *   a 2-layer MLP                          2  (the hidden layer is materialized: it feeds a matmul)
 *   softmax, log_softmax, layernorm        3 each
 *   x.sum(1).sum(0)                        2  (a reduction inside another is its own kernel)
 *   sum of 2^17 elements                   2  (split: partial sums, then their sum)
 *   conv2d with bias                       1
 *   cat of 3                               1
 *   a sum of 100 tensors, cat of 100       2 each (a kernel reads at most 63 buffers)
 *   an expensive elementwise result read by two kernels: materialized once (3)
 *   a cheap one (exp) read by two kernels: recomputed (2)
 *   reshape of a realized buffer           0
 *   a reduction behind a shared view read by two results: computed once,
 *     the two results one kernel (2)
 * Multi-output kernels (group.c, tests/mock/test_api_tensor_multi.c):
 *   results of one shape, elementwise, realized together      1
 *   row sums of one shape (one loop structure)                1
 *   a shared row sum and two results of it                    1  (the sum runs inside)
 *   a shared matmul and two results of it                     2  (the product keeps its tile)
 *   the demo MLP's (784-32-10) Adam step, gradients realized  5  (was 15: 3 per parameter,
 *                                                                 2 scalars, the step count)
 *   SGD with momentum on it                                   5  (was 9)
 *   the demo's JIT'd training step (hcq demo)                23  (was 35)
 * Plans: contiguous elementwise kernels index without divisions; matmuls
 * get register tiles and mulacc on CPU targets; GPU-style plans (forced on
 * a context) reduce through local memory with barriers and give the same
 * results on the CPU device. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hcqtest.h"
#include "tensor/tt.h"
#include "tensortest.h"

TestSuite(tensor_sched, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static uint64_t kernels(void)
{
    hcq_ctx_stats s;
    T_OK(hcq_ctx_get_stats(tx_ctx, &s));
    return s.kernels;
}

/* kernels realizing the given tensors takes */
static uint64_t count(hcq_tensor **ts, int n)
{
    for (int i = 0; i < n; i++) cr_assert_not_null(ts[i], "%s", hcq_error_message());
    uint64_t k0 = kernels();
    T_OK(hcq_realize_all(ts, n));
    return kernels() - k0;
}

static hcq_tensor *rnd(int64_t a, int64_t b, uint32_t seed) { return tx_rand(HCQ_F32, TX_SHAPE(a, b), -1, 1, seed, NULL); }

Test(tensor_sched, kernel_counts)
{
    hcq_tensor *a = rnd(7, 9, 1), *b = rnd(7, 9, 2), *c = rnd(7, 9, 3);
    hcq_tensor *t[2];
    t[0] = hcq_sum(hcq_add(hcq_mul(a, b), c), HCQ_ALL_AXES, false);
    cr_assert_eq(count(t, 1), 1, "(a*b+c).sum()");
    hcq_tensor *x = rnd(6, 9, 4), *w = rnd(9, 5, 5), *bias = tx_rand(HCQ_F32, TX_SHAPE(5), -1, 1, 6, NULL);
    t[0] = hcq_relu(hcq_add(hcq_matmul(x, w), bias));
    cr_assert_eq(count(t, 1), 1, "relu(x @ w + b)");
    hcq_tensor *w2 = rnd(5, 3, 7);
    t[0] = hcq_matmul(hcq_relu(hcq_add(hcq_matmul(x, w), bias)), w2);
    cr_assert_eq(count(t, 1), 2, "2-layer MLP");
    t[0] = hcq_softmax(a, -1);
    cr_assert_eq(count(t, 1), 3, "softmax");
    t[0] = hcq_log_softmax(a, 0);
    cr_assert_eq(count(t, 1), 3, "log_softmax");
    t[0] = hcq_layernorm(a, 1, NULL, NULL, 1e-5);
    cr_assert_eq(count(t, 1), 3, "layernorm");
    t[0] = hcq_sum(hcq_sum(a, HCQ_AXES(1), false), HCQ_AXES(0), false);
    cr_assert_eq(count(t, 1), 2, "nested sums");
    hcq_tensor *big = tx_rand(HCQ_F32, TX_SHAPE(1 << 17), -1, 1, 8, NULL);
    t[0] = hcq_sum(big, HCQ_ALL_AXES, false);
    cr_assert_eq(count(t, 1), 2, "split sum");
    hcq_tensor *img = tx_rand(HCQ_F32, TX_SHAPE(1, 3, 8, 8), -1, 1, 9, NULL);
    hcq_tensor *k = tx_rand(HCQ_F32, TX_SHAPE(4, 3, 3, 3), -1, 1, 10, NULL), *kb = tx_rand(HCQ_F32, TX_SHAPE(4), -1, 1, 11, NULL);
    t[0] = hcq_conv2d(img, k, kb, &(hcq_conv2d_opts){.padding = {1, 1}});
    cr_assert_eq(count(t, 1), 1, "conv2d + bias");
    hcq_tensor *parts[3] = {a, b, c};
    t[0] = hcq_cat(parts, 3, 1);
    cr_assert_eq(count(t, 1), 1, "cat");
    /* 12 ops: recomputing in two kernels would double them */
    hcq_tensor *e = hcq_sqrt(hcq_add_s(hcq_mul(hcq_exp(a), hcq_log(hcq_add_s(hcq_abs(b), 1))), 1));
    t[0] = hcq_sum(e, HCQ_ALL_AXES, false);
    t[1] = hcq_mul_s(e, 2);
    cr_assert_eq(count(t, 2), 3, "expensive shared node");
    hcq_tensor *cheap = hcq_exp(a);
    t[0] = hcq_sum(cheap, HCQ_ALL_AXES, false);
    t[1] = hcq_mul_s(cheap, 2);
    cr_assert_eq(count(t, 2), 2, "cheap shared node");
    T_OK(hcq_realize(a));
    t[0] = hcq_reshape(a, TX_SHAPE(9, 7));
    cr_assert_eq(count(t, 1), 0, "reshape of a buffer");
    /* one view node over a reduction, read by two elementwise results (a
     * gradient read by two optimizer updates): the reduction is its own
     * kernel, read through the view, and the two results one kernel */
    hcq_tensor *shared = hcq_transpose(hcq_matmul(a, hcq_transpose(b, 0, 1)), 0, 1);
    t[0] = hcq_add_s(shared, 1);
    t[1] = hcq_mul_s(shared, 2);
    cr_assert_eq(count(t, 2), 2, "a reduction behind a shared view");
}

/* more inputs than a launch takes: split into kernels that each fit */
Test(tensor_sched, wide_kernels_are_split)
{
    enum { N = 100 };
    hcq_tensor *p[N], *t[1];
    for (int i = 0; i < N; i++) p[i] = tx_rand(HCQ_F32, TX_SHAPE(3), -1, 1, 20 + i, NULL);
    hcq_tensor *s = p[0];
    for (int i = 1; i < N; i++) s = hcq_add(s, p[i]);
    t[0] = s;
    cr_assert_eq(count(t, 1), 2, "sum of %d tensors", N);
    t[0] = hcq_cat(p, N, 0);
    cr_assert_eq(count(t, 1), 2, "cat of %d tensors", N);
    t[0] = hcq_cat(p, 63, 0);
    cr_assert_eq(count(t, 1), 1, "cat of 63 tensors");
}

/* a chain far deeper than one kernel may fuse: cut into several kernels,
 * no recursion runs out of stack */
Test(tensor_sched, deep_chains_are_cut)
{
    /* data, not hcq_zeros: a chain over a constant folds to a constant */
    static const float zero[3];
    hcq_tensor *x = hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(3), zero);
    size_t m = hcq_ctx_mark(tx_ctx);
    hcq_tensor *y = x;
    for (int i = 0; i < 2500; i++) y = hcq_add_s(y, 1.0);
    uint64_t k0 = kernels();
    double v;
    T_OK(hcq_tensor_item(hcq_sum(y, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, 7500.0);
    cr_assert_geq(kernels() - k0, 3, "2500 fused adds are cut into kernels of at most 1024");
    T_OK(hcq_ctx_release(tx_ctx, m));
}

/* lowering a node directly: the kernel's IR */
static hcq_status lower_node(hcq_ctx *ctx, tt_node *n, tt_lowered *lw)
{
    tt_key key = {0};
    hcq_status s = tt_key_make(ctx, &n, 1, &key);
    if (!s) s = tt_lower(ctx, &n, 1, &key, lw);
    tt_key_free(&key);
    return s;
}

static hcq_kernel *lower(tt_node *n, char *name)
{
    tt_lowered lw;
    T_OK(lower_node(tx_ctx, n, &lw));
    strcpy(name, lw.name);
    return lw.k;
}

static uint32_t count_ops(const hcq_kernel *k, hcq_op op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < hcq_kernel_op_count(k); i++) n += hcq_kernel_ops(k)[i].op == op;
    return n;
}

Test(tensor_sched, lowering_plans_on_cpu)
{
    char name[64];
    hcq_tensor *a = tx_rand(HCQ_F32, TX_SHAPE(7, 9, 11), -1, 1, 1, NULL), *b = tx_rand(HCQ_F32, TX_SHAPE(7, 9, 11), -1, 1, 2, NULL);
    hcq_tensor *y = hcq_add(hcq_reshape(a, TX_SHAPE(63, 11)), hcq_reshape(b, TX_SHAPE(63, 11)));
    hcq_kernel *k = lower(y->n, name);
    T_OK(hcq_kernel_verify(k));
    cr_assert_eq(count_ops(k, HCQ_OP_IDIV) + count_ops(k, HCQ_OP_MOD), 0, "a contiguous kernel indexes without divisions");
    hcq_kernel_destroy(k);
    hcq_tensor *m1 = tx_rand(HCQ_F32, TX_SHAPE(64, 32), -1, 1, 3, NULL), *m2 = tx_rand(HCQ_F32, TX_SHAPE(32, 128), -1, 1, 4, NULL);
    tt_node *mm = hcq_matmul(m1, m2)->n;
    while (mm->op == TT_VIEW) mm = mm->src[0]; /* the reduction under the final reshape */
    k = lower(mm, name);
    T_OK(hcq_kernel_verify(k));
    cr_assert(strstr(name, "_u"), "matmul upcast: %s", name);
    cr_assert_geq(count_ops(k, HCQ_OP_MULACC), 64, "a register tile of mulaccs in %s", name);
    hcq_kernel_destroy(k);
    /* a prime row count gets a ragged tile: no gated loads, gated stores */
    hcq_tensor *p1 = tx_rand(HCQ_F32, TX_SHAPE(61, 32), -1, 1, 13, NULL);
    tt_node *pm = hcq_matmul(p1, m2)->n;
    while (pm->op == TT_VIEW) pm = pm->src[0];
    k = lower(pm, name);
    T_OK(hcq_kernel_verify(k));
    cr_assert(strstr(name, "_u"), "ragged tile: %s", name);
    for (uint32_t i = 0; i < hcq_kernel_op_count(k); i++)
        cr_assert(!(hcq_kernel_ops(k)[i].op == HCQ_OP_LOAD && hcq_kernel_ops(k)[i].nsrc == 4), "op %u: a gated load", i);
    hcq_kernel_destroy(k);
    hcq_tensor *rows = hcq_sum(tx_rand(HCQ_F32, TX_SHAPE(8, 64), -1, 1, 5, NULL), HCQ_AXES(1), true);
    k = lower(rows->n, name);
    cr_assert(strstr(name, "_a16"), "16 accumulators along a contiguous axis: %s", name);
    hcq_kernel_destroy(k);
}

/* GPU-style plans, forced on the CPU device (which runs any IR, barriers
 * and local memory included), against CPU-style results. */
Test(tensor_sched, gpu_style_plans_agree)
{
    hcq_ctx *g = T_NONNULL(hcq_ctx_create(tx_dev));
    g->cpu_style = false;
    g->props.compute_units = 8;
    double x[3 * 4096], want[64], got[64];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(3, 4096), -1, 1, 6, x);
    hcq_tensor *tg = T_NONNULL(hcq_tensor_to(g, t));
    /* large rows: a work-group per row, reducing through local memory */
    hcq_tensor *s = hcq_sum(tg, HCQ_AXES(1), true);
    char name[64];
    tt_lowered lw;
    T_OK(lower_node(g, s->n, &lw));
    cr_assert(strstr(lw.name, "_g"), "group reduction: %s", lw.name);
    cr_assert_gt(count_ops(lw.k, HCQ_OP_BARRIER), 0);
    cr_assert_gt(count_ops(lw.k, HCQ_OP_DEFINE_LOCAL), 0);
    tt_lowered_free(&lw);
    (void)name;
    T_OK(hcq_tensor_read(hcq_cast(s, HCQ_F32), (float[3]){0}, 12));
    float f[3];
    T_OK(hcq_tensor_read(s, f, sizeof f));
    for (int i = 0; i < 3; i++) {
        want[i] = 0;
        for (int j = 0; j < 4096; j++) want[i] += x[i * 4096 + j];
        got[i] = f[i];
    }
    tx_close(got, want, 3, 1e-5, 1e-4, "group sums");
    T_OK(hcq_tensor_item(hcq_max(tg, HCQ_ALL_AXES, false), &got[0]));
    want[0] = -1;
    for (int i = 0; i < 3 * 4096; i++) want[0] = fmax(want[0], x[i]);
    cr_assert_eq(got[0], want[0], "group max");
    /* matmul with 4 x 4 tiles, softmax and a strided reduction */
    double a[8 * 12], b[12 * 16], mm[8 * 16], gm[8 * 16];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(8, 12), -1, 1, 7, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(12, 16), -1, 1, 8, b);
    hcq_tensor *gmm = hcq_matmul(hcq_tensor_to(g, ta), hcq_tensor_to(g, tb));
    float fm[8 * 16];
    T_OK(hcq_tensor_read(gmm, fm, sizeof fm));
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++) {
            mm[i * 16 + j] = 0;
            for (int k = 0; k < 12; k++) mm[i * 16 + j] += a[i * 12 + k] * b[k * 16 + j];
            gm[i * 16 + j] = fm[i * 16 + j];
        }
    tx_close(gm, mm, 128, 1e-5, 1e-5, "gpu-style matmul");
    float sm[8 * 12];
    T_OK(hcq_tensor_read(hcq_softmax(hcq_tensor_to(g, ta), 0), sm, sizeof sm));
    for (int j = 0; j < 12; j++) {
        double mx = -INFINITY, z = 0;
        for (int i = 0; i < 8; i++) mx = fmax(mx, a[i * 12 + j]);
        for (int i = 0; i < 8; i++) z += exp(a[i * 12 + j] - mx);
        for (int i = 0; i < 8; i++) cr_assert(fabs(sm[i * 12 + j] - exp(a[i * 12 + j] - mx) / z) < 1e-6);
    }
    T_OK(hcq_ctx_destroy(g));
}

/* Outputs of one reduction structure in one kernel, GPU-style (a
 * work-group per row, reducing through local memory): each reduction
 * reuses the local memory after a barrier, and the results are the ones
 * each gives alone. */
Test(tensor_sched, grouped_reductions_in_gpu_style_plans)
{
    hcq_ctx *g = T_NONNULL(hcq_ctx_create(tx_dev));
    g->cpu_style = false;
    g->props.compute_units = 8;
    enum { R = 3, C = 4096 };
    static double x[R * C], y[R * C];
    hcq_tensor *tg = T_NONNULL(hcq_tensor_to(g, tx_rand(HCQ_F32, TX_SHAPE(R, C), -1, 1, 21, x)));
    hcq_tensor *ug = T_NONNULL(hcq_tensor_to(g, tx_rand(HCQ_F32, TX_SHAPE(R, C), -1, 1, 22, y)));
    T_OK(hcq_realize_all((hcq_tensor *[]){tg, ug}, 2));
    hcq_tensor *t[3] = {hcq_sum(tg, HCQ_AXES(1), false), hcq_sum(hcq_mul(ug, ug), HCQ_AXES(1), false),
                        hcq_sum(hcq_mul(tg, ug), HCQ_AXES(1), false)};
    tt_node *roots[3] = {t[0]->n, t[1]->n, t[2]->n};
    tt_sched sc;
    T_OK(tt_schedule(g, roots, 3, &sc));
    cr_assert_eq(sc.nk, 1, "three row sums: one kernel (%u)", sc.nk);
    tt_key key = {0};
    tt_lowered lw, one;
    T_OK(tt_key_make(g, sc.items, 3, &key));
    T_OK(tt_lower(g, sc.items, 3, &key, &lw));
    T_OK(tt_key_make(g, sc.items, 1, &key));
    T_OK(tt_lower(g, sc.items, 1, &key, &one));
    tt_key_free(&key);
    tt_sched_free(&sc);
    cr_assert(strstr(lw.name, "_g") && strstr(lw.name, "_o3"), "%s", lw.name);
    cr_assert_eq(count_ops(lw.k, HCQ_OP_BARRIER), 3 * count_ops(one.k, HCQ_OP_BARRIER) + 2,
                 "each reduction's tree, and a barrier before the local memory is reused");
    tt_lowered_free(&lw);
    tt_lowered_free(&one);
    uint64_t k0 = g->stats.kernels;
    T_OK(hcq_realize_all(t, 3));
    cr_assert_eq(g->stats.kernels - k0, 1);
    for (int k = 0; k < 3; k++) {
        float f[R];
        double got[R], want[R];
        T_OK(hcq_tensor_read(t[k], f, sizeof f));
        for (int i = 0; i < R; i++) {
            want[i] = 0;
            for (int j = 0; j < C; j++) want[i] += k == 0 ? x[i * C + j] : k == 1 ? y[i * C + j] * y[i * C + j] : x[i * C + j] * y[i * C + j];
            got[i] = f[i];
        }
        tx_close(got, want, R, 1e-5, 1e-4, "grouped row sums");
    }
    T_OK(hcq_ctx_destroy(g));
}

/* A matmul whose column operand is larger than an eighth of the last-level
 * cache walks its register tiles in column blocks (the name says _bN); the
 * walk changes which work-item computes what, never how: the results are
 * bit-identical to the plain walk's, ragged rows and batches included. The
 * context's cache size is shrunk so that small operands take the blocked
 * walk. */
Test(tensor_sched, blocked_tile_walk_is_exact)
{
    hcq_ctx *small = T_NONNULL(hcq_ctx_create(tx_dev));
    small->props.cache_bytes = 128 << 10; /* blocks of 16 KiB: two 32 x 64 f32 panels */
    static const int64_t shapes[][4] = {{1, 61, 32, 512}, {3, 48, 32, 384}};
    for (int c = 0; c < 2; c++) {
        int64_t bt = shapes[c][0], m = shapes[c][1], k = shapes[c][2], n = shapes[c][3];
        double *ha = malloc(sizeof(double) * bt * m * k), *hb = malloc(sizeof(double) * bt * k * n);
        float *plain = malloc(sizeof(float) * bt * m * n), *blocked = malloc(sizeof(float) * bt * m * n);
        cr_assert(ha && hb && plain && blocked);
        hcq_tensor *a = tx_rand(HCQ_F32, TX_SHAPE(bt, m, k), -1, 1, 20 + c, ha);
        hcq_tensor *b = tx_rand(HCQ_F32, TX_SHAPE(bt, k, n), -1, 1, 30 + c, hb);
        hcq_tensor *a2 = T_NONNULL(hcq_tensor_to(small, a)), *b2 = T_NONNULL(hcq_tensor_to(small, b));
        hcq_tensor *y = hcq_matmul(a2, b2);
        cr_assert_not_null(y, "%s", hcq_error_message());
        tt_node *r = y->n;
        while (r->op == TT_VIEW) r = r->src[0];
        tt_lowered lw;
        T_OK(lower_node(small, r, &lw));
        cr_assert(strstr(lw.name, "_u") && strstr(lw.name, "_b"), "a blocked tile walk: %s", lw.name);
        T_OK(hcq_kernel_verify(lw.k));
        tt_lowered_free(&lw);
        T_OK(hcq_tensor_read(y, blocked, sizeof(float) * bt * m * n));
        T_OK(hcq_tensor_read(hcq_matmul(a, b), plain, sizeof(float) * bt * m * n));
        cr_assert(!memcmp(plain, blocked, sizeof(float) * bt * m * n), "case %d: the blocked walk gives other bits", c);
        for (int64_t q = 0; q < bt * m * n; q += 97) { /* and both are the product */
            int64_t i = q / n % m, j = q % n, p = q / (m * n);
            double want = 0;
            for (int64_t l = 0; l < k; l++) want += ha[(p * m + i) * k + l] * hb[(p * k + l) * n + j];
            cr_assert(fabs(blocked[q] - want) < 1e-4, "case %d [%lld]: %g, want %g", c, (long long)q, blocked[q], want);
        }
        free(ha);
        free(hb);
        free(plain);
        free(blocked);
    }
    T_OK(hcq_ctx_destroy(small));
}
