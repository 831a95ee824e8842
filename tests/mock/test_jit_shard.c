/* A sharded step captured by one JIT over several contexts
 * (hcq_jit_create_multi; issue 23 item 4) on 2 and 4 mock GPUs of both
 * vendors: every replay is bit-equal to the same step run eagerly on the
 * same inputs, the graph holds every device's kernels and the peer copies
 * of the folds; without peer links the capture is refused, saying why,
 * and the step still runs eagerly; hcq_tensors_allreduce (captured, it
 * is test_dp.c's whole-step JIT); and the refusals of what is not
 * supported yet. Shapes are small (kernel compiles dominate a cold run). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "tensortest.h"

#include <hcq/tensor.h>

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void) { mock_configure(""); }
TestSuite(jit_shard, .init = setup, .fini = teardown, .timeout = 300);

enum { MAXD = 4, M = 11, K = 9, N = 6 };

static uint32_t rng = 777;
static float frand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static hcq_tensor *rand_f32(hcq_ctx *c, int64_t r, int64_t k)
{
    float h[M * K];
    for (int64_t i = 0; i < r * k; i++) h[i] = frand();
    return T_NONNULL(hcq_from_data(c, HCQ_F32, (const int64_t[]){r, k}, 2, h));
}

static hcq_tensor *add(hcq_tensor *a, hcq_tensor *b) { return hcq_add(a, b); }

/* The step: inputs are x's n row pieces, then w's n replicated copies;
 * outputs y = relu(x + x) @ w (row-split: n pieces), then the column sums
 * of y over the split rows (folded on device 0, replicated: n pieces). */
static hcq_status step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx;
    (void)user;
    (void)nout;
    int n = nin / 2;
    hcq_status st = HCQ_OK;
    hcq_sharded *x = hcq_sharded_wrap(in, n, 0), *w = hcq_sharded_wrap(in + n, n, HCQ_REPLICATED);
    hcq_sharded *h = x && w ? hcq_sharded_map2(x, x, add) : NULL;
    hcq_sharded *r = h ? hcq_sharded_map1(h, hcq_relu) : NULL;
    hcq_sharded *y = r ? hcq_sharded_matmul(r, w) : NULL;
    hcq_sharded *s = y ? hcq_sharded_reduce(y, HCQ_REDUCE_SUM, (const int[]){0}, 1, false) : NULL;
    if (!s || hcq_sharded_unwrap(y, out) || hcq_sharded_unwrap(s, out + n)) st = hcq_error_status();
    else y = s = NULL;
    hcq_sharded_free(x);
    hcq_sharded_free(w);
    hcq_sharded_free(h);
    hcq_sharded_free(r);
    hcq_sharded_free(y);
    hcq_sharded_free(s);
    return st;
}

/* the inputs: x split on rows, w replicated, fresh values each call */
static void make_inputs(const tx_mdev *e, hcq_sharded **xs, hcq_sharded **ws, hcq_tensor **in)
{
    hcq_tensor *x = rand_f32(e->ctx[0], M, K), *w = rand_f32(e->ctx[0], K, N);
    *xs = T_NONNULL(hcq_shard(x, e->ctx, e->n, 0));
    *ws = T_NONNULL(hcq_shard(w, e->ctx, e->n, HCQ_REPLICATED));
    for (int i = 0; i < e->n; i++) {
        in[i] = hcq_sharded_piece(*xs, i);
        in[e->n + i] = hcq_sharded_piece(*ws, i);
    }
    T_OK(hcq_tensor_free(x));
    T_OK(hcq_tensor_free(w));
}

static void same_bytes(hcq_tensor *got, hcq_tensor *want, hcq_ctx *where, const char *what, int run)
{
    cr_assert_not_null(got, "%s (run %d): %s", what, run, hcq_error_message());
    cr_assert_eq(hcq_tensor_ctx(got), where, "%s (run %d): on another context", what, run);
    int64_t n = hcq_tensor_numel(want);
    cr_assert_eq(hcq_tensor_numel(got), n, "%s (run %d)", what, run);
    float g[M * N], w[M * N];
    T_OK(hcq_tensor_read(got, g, (size_t)n * sizeof *g));
    T_OK(hcq_tensor_read(want, w, (size_t)n * sizeof *w));
    cr_assert(!memcmp(g, w, (size_t)n * sizeof *g), "%s (run %d): not bit-equal to the eager step", what, run);
}

/* runs 0 (eager), 1 (capture) and `replays` replays, each on new inputs,
 * every output bit-equal to the eager step's */
static void captured_step(const char *spec, const char *kind, int nd, int replays)
{
    tx_mdev e;
    tx_mdev_open(&e, spec, kind, nd);
    hcq_jit *j = T_NONNULL(hcq_jit_create_multi(e.ctx, nd, step, NULL));
    for (int run = 0; run < 2 + replays; run++) {
        hcq_sharded *xs, *ws;
        hcq_tensor *in[2 * MAXD], *got[2 * MAXD] = {0}, *want[2 * MAXD] = {0};
        make_inputs(&e, &xs, &ws, in);
        T_OK(hcq_jit_run(j, in, 2 * nd, got, 2 * nd));
        T_OK(step(e.ctx[0], in, 2 * nd, want, 2 * nd, NULL));
        for (int i = 0; i < 2 * nd; i++)
            same_bytes(got[i], want[i], e.ctx[i % nd], i < nd ? "y's piece" : "the column sums' copy", run);
        for (int i = 0; i < 2 * nd; i++) {
            T_OK(hcq_tensor_free(got[i]));
            T_OK(hcq_tensor_free(want[i]));
        }
        T_OK(hcq_sharded_free(xs));
        T_OK(hcq_sharded_free(ws));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture, then replays");
    /* each device's add+relu, matmul and partial sum, the fold on device 0, the outputs' copies */
    cr_assert_geq(hcq_jit_kernel_count(j), (uint32_t)(2 * nd), "%u kernels", hcq_jit_kernel_count(j));
    T_OK(hcq_jit_destroy(j));
    tx_mdev_close(&e);
}

Test(jit_shard, amd_four_gpus_xgmi) { captured_step("amd=gfx942x4,amd_peer=xgmi", "AMD", 4, 2); }
/* (make test's budget: the NV mocks' SASS executor is the slower one; CI's long form adds 4 GPUs) */
Test(jit_shard, nv_two_gpus_nvlink) { captured_step("nv=H100x2,nv_peer=nvlink", "NV", 2, 1); }
Test(jit_shard, nv_four_gpus_nvlink)
{
    if (!getenv("HCQ_TEST_LONG")) cr_skip_test("in CI's long form (HCQ_TEST_LONG=1); make test runs 2 NV GPUs");
    captured_step("nv=H100x4,nv_peer=nvlink", "NV", 4, 2);
}

/* Without a peer link, the graph cannot hold the fold's copy between
 * devices (a replay has no host thread to stage through): the capture is
 * refused, saying so, every time; the step still runs eagerly (staged). */
static void refused_without_links(const char *spec, const char *kind, int nd)
{
    tx_mdev e;
    tx_mdev_open(&e, spec, kind, nd);
    hcq_jit *j = T_NONNULL(hcq_jit_create_multi(e.ctx, nd, step, NULL));
    hcq_sharded *xs, *ws;
    hcq_tensor *in[2 * MAXD], *got[2 * MAXD] = {0}, *want[2 * MAXD] = {0};
    make_inputs(&e, &xs, &ws, in);
    T_OK(hcq_jit_run(j, in, 2 * nd, got, 2 * nd)); /* run 0 is eager */
    for (int i = 0; i < 2 * nd; i++) T_OK(hcq_tensor_free(got[i]));
    for (int t = 0; t < 2; t++) {
        T_FAILS(hcq_jit_run(j, in, 2 * nd, got, 2 * nd), HCQ_ENOTSUP);
        T_MSG_HAS("peer");
        for (int i = 0; i < 2 * nd; i++) cr_assert_null(got[i]);
    }
    cr_assert_eq(hcq_jit_capture_count(j), 0);
    T_OK(step(e.ctx[0], in, 2 * nd, want, 2 * nd, NULL));
    for (int i = 0; i < 2 * nd; i++) T_OK(hcq_tensor_free(want[i]));
    T_OK(hcq_sharded_free(xs));
    T_OK(hcq_sharded_free(ws));
    T_OK(hcq_jit_destroy(j));
    tx_mdev_close(&e);
}

Test(jit_shard, amd_two_gpus_without_links) { refused_without_links("amd=gfx1100x2,amd_peer=none", "AMD", 2); }
Test(jit_shard, nv_two_gpus_without_links) { refused_without_links("nv=H100x2,nv_peer=none", "NV", 2); }

/* Random tensors on every context of the JIT: each context's streams are
 * graph variables, so every replay draws what calling fn again would. */
static hcq_status rand_on_each(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nout, (void)user;
    for (int i = 0; i < nin; i++) {
        hcq_tensor *r = hcq_rand(hcq_tensor_ctx(in[i]), HCQ_F32, (const int64_t[]){M, K}, 2);
        if (!(out[i] = r ? hcq_add(in[i], r) : NULL)) return hcq_error_status();
    }
    return HCQ_OK;
}

Test(jit_shard, random_tensors_on_every_context_draw_anew)
{
    tx_mdev e;
    tx_mdev_open(&e, "amd=gfx1100x2,amd_peer=xgmi", "AMD", 2);
    hcq_tensor *in[2] = {rand_f32(e.ctx[0], M, K), rand_f32(e.ctx[1], M, K)};
    enum { RUNS = 4 };
    static float got[RUNS][2][M * K], want[M * K];
    hcq_jit *j = T_NONNULL(hcq_jit_create_multi(e.ctx, 2, rand_on_each, NULL));
    hcq_ctx_seed(e.ctx[0], 11);
    hcq_ctx_seed(e.ctx[1], 22);
    for (int r = 0; r < RUNS; r++) {
        hcq_tensor *out[2];
        T_OK(hcq_jit_run(j, in, 2, out, 2));
        for (int i = 0; i < 2; i++) {
            cr_assert_eq(hcq_tensor_ctx(out[i]), e.ctx[i]);
            T_OK(hcq_tensor_read(out[i], got[r][i], sizeof got[r][i]));
            T_OK(hcq_tensor_free(out[i]));
        }
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1);
    cr_assert(memcmp(got[2][1], got[3][1], sizeof got[2][1]), "replays draw new numbers");
    hcq_ctx_seed(e.ctx[0], 11);
    hcq_ctx_seed(e.ctx[1], 22);
    for (int r = 0; r < RUNS; r++) {
        hcq_tensor *out[2];
        T_OK(rand_on_each(e.ctx[0], in, 2, out, 2, NULL));
        for (int i = 0; i < 2; i++) {
            T_OK(hcq_tensor_read(out[i], want, sizeof want));
            cr_assert(!memcmp(got[r][i], want, sizeof want), "run %d, context %d: not the eager call's numbers", r, i);
            T_OK(hcq_tensor_free(out[i]));
        }
    }
    /* the second context goes first: it takes the captured JIT (its graph
     * and both contexts' buffers) with it */
    T_OK(hcq_ctx_destroy(e.ctx[1]));
    e.ctx[1] = NULL;
    T_FAILS(hcq_jit_destroy(j), HCQ_ESTATE);
    tx_mdev_close(&e);
}

Test(jit_shard, what_is_refused)
{
    tx_mdev e;
    tx_mdev_open(&e, "amd=gfx1100x2,amd_peer=xgmi", "AMD", 2);
    hcq_tensor *a = rand_f32(e.ctx[0], M, K), *b = rand_f32(e.ctx[1], M, K), *out = NULL;
    hcq_tensor *in[2] = {a, b};
    hcq_jit *j = T_NONNULL(hcq_jit_create_multi(e.ctx, 2, rand_on_each, NULL));
    T_FAILS(hcq_jit_dim(j, 0, 0, "batch", 2, 16), HCQ_ENOTSUP);
    T_MSG_HAS("several contexts");
    T_OK(hcq_jit_destroy(j));

    /* bad contexts */
    cr_assert_null(hcq_jit_create_multi((hcq_ctx *const[]){e.ctx[0], e.ctx[0]}, 2, step, NULL));
    T_MSG_HAS("given twice");
    cr_assert_null(hcq_jit_create_multi(e.ctx, 0, step, NULL));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);

    /* an input from a context the JIT does not capture */
    j = T_NONNULL(hcq_jit_create(e.ctx[0], rand_on_each, NULL));
    T_FAILS(hcq_jit_run(j, in, 2, &out, 1), HCQ_EINVAL);
    T_MSG_HAS("does not capture");

    /* wrap: pieces that are not hcq_shard's split */
    hcq_tensor *small = T_NONNULL(hcq_slice(b, 0, 0, 3, 1));
    cr_assert_null(hcq_sharded_wrap((hcq_tensor *const[]){a, small}, 2, 0));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    cr_assert_null(hcq_sharded_wrap((hcq_tensor *const[]){a, a}, 2, 0));
    T_MSG_HAS("one context");
    hcq_sharded *w = T_NONNULL(hcq_sharded_wrap(in, 2, 0));
    cr_assert_eq(hcq_sharded_shape(w, NULL), 2);
    int64_t shape[2];
    hcq_sharded_shape(w, shape);
    cr_assert_eq(shape[0], 2 * M);
    hcq_tensor *pieces[2];
    T_OK(hcq_sharded_unwrap(w, pieces));
    T_FAILS(hcq_sharded_free(w), HCQ_ESTATE);
    cr_assert_eq(hcq_tensor_ctx(pieces[1]), e.ctx[1]);
    T_OK(hcq_tensor_free(pieces[0]));
    T_OK(hcq_tensor_free(pieces[1]));
    T_OK(hcq_tensor_free(a)); /* the caller's handles were its own */
    T_OK(hcq_tensor_free(b));

    /* destroying a context other than the first frees the JIT */
    hcq_jit *m = T_NONNULL(hcq_jit_create_multi(e.ctx, 2, step, NULL));
    T_OK(hcq_ctx_destroy(e.ctx[1]));
    e.ctx[1] = NULL;
    T_FAILS(hcq_jit_destroy(m), HCQ_ESTATE);
    T_OK(hcq_jit_destroy(j));
    tx_mdev_close(&e);
}

/* hcq_tensors_allreduce: eager, in place, every copy the same bits;
 * refused for views and for contexts capturing unalike */
static hcq_tensor *ar_peer;
static hcq_status ar_half_jit(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    hcq_status s = hcq_tensors_allreduce((hcq_tensor *const[]){in[0], ar_peer}, 2, HCQ_REDUCE_SUM);
    out[0] = s ? NULL : hcq_add(in[0], in[0]);
    return s;
}

Test(jit_shard, tensors_allreduce)
{
    tx_mdev e;
    tx_mdev_open(&e, "amd=gfx1100x2,amd_peer=xgmi", "AMD", 2);
    const float x0[3] = {1, 2, 3}, x1[3] = {3, 4, 6}, want[3] = {2, 3, 4.5f};
    hcq_tensor *t[2] = {T_NONNULL(hcq_from_data(e.ctx[0], HCQ_F32, (const int64_t[]){3}, 1, x0)),
                        T_NONNULL(hcq_from_data(e.ctx[1], HCQ_F32, (const int64_t[]){3}, 1, x1))};
    T_OK(hcq_tensors_allreduce(t, 2, HCQ_REDUCE_MEAN));
    for (int i = 0; i < 2; i++) {
        float got[3];
        T_OK(hcq_tensor_read(t[i], got, sizeof got));
        cr_assert(!memcmp(got, want, sizeof got), "device %d: %g %g %g", i, got[0], got[1], got[2]);
    }
    hcq_tensor *v = T_NONNULL(hcq_add(t[1], t[1])); /* lazy: no buffer of its own */
    T_FAILS(hcq_tensors_allreduce((hcq_tensor *const[]){t[0], v}, 2, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_MSG_HAS("not a buffer");
    T_FAILS(hcq_tensors_allreduce((hcq_tensor *const[]){t[0], t[0]}, 2, HCQ_REDUCE_SUM), HCQ_EINVAL);
    /* a JIT over context 0 only: the all-reduce would be half in its graph */
    ar_peer = t[1];
    hcq_jit *j = T_NONNULL(hcq_jit_create(e.ctx[0], ar_half_jit, NULL));
    hcq_tensor *out = NULL;
    T_OK(hcq_jit_run(j, t, 1, &out, 1)); /* run 0 is eager */
    T_FAILS(hcq_jit_run(j, t, 1, &out, 1), HCQ_ENOTSUP);
    T_MSG_HAS("created over all its contexts");
    cr_assert(!hcq_ctx_capturing(e.ctx[0]), "the capture ended with the run");
    T_OK(hcq_jit_destroy(j));
    tx_mdev_close(&e);
}
