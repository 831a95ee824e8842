/* Sharded tensors (tensor.h; issue 23 item 4) on 2 and 4 mock GPUs of
 * both vendors, with and without peer links: every result is compared
 * with the same op on one device, bit for bit where the header promises
 * it, else within the header's bound; and the refusals. Shapes are small;
 * every op runs on 2 NV (NVLink) and 4 AMD (xGMI), the ops that move data
 * across devices also on 4 NV and 2 AMD without links (kernel compiles
 * dominate a run on a cold cache). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "tensortest.h"

#include <hcq/tensor.h>

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void) { mock_configure(""); }
TestSuite(shard, .init = setup, .fini = teardown, .timeout = 300);

enum { MAXD = 4 };

static uint32_t rng = 12345;
static float frand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static hcq_tensor *rand_f32(hcq_ctx *c, int64_t r, int64_t k, float *host)
{
    for (int64_t i = 0; i < r * k; i++) host[i] = frand();
    return T_NONNULL(hcq_from_data(c, HCQ_F32, (const int64_t[]){r, k}, 2, host));
}

/* reads t (any context) into out, n floats */
static void rd(hcq_tensor *t, float *out, size_t n)
{
    cr_assert_not_null(t, "%s", hcq_error_message());
    T_OK(hcq_tensor_read(t, out, n * sizeof *out));
}

/* the sharded result gathered on ctx 0 equals the single-device one bit for bit */
static void same_bits(hcq_sharded *s, hcq_tensor *want, const tx_mdev *e, const char *what)
{
    cr_assert_not_null(s, "%s: %s", what, hcq_error_message());
    int64_t n = hcq_tensor_numel(want);
    float *g = calloc((size_t)n, sizeof *g), *w = calloc((size_t)n, sizeof *w);
    rd(T_NONNULL(hcq_sharded_gather(s, e->ctx[0])), g, (size_t)n);
    rd(want, w, (size_t)n);
    cr_assert(!memcmp(g, w, (size_t)n * sizeof *g), "%s: not bit-equal to one device", what);
    /* a replicated result: every device's copy is the same bytes */
    if (hcq_sharded_axis(s) == HCQ_REPLICATED)
        for (int d = 1; d < e->n; d++) {
            rd(hcq_sharded_piece(s, d), g, (size_t)n);
            cr_assert(!memcmp(g, w, (size_t)n * sizeof *g), "%s: device %d's copy differs", what, d);
        }
    free(g);
    free(w);
}

/* within the header's bound: (2m - 2 + n) u sum|x| per element, sumabs
 * the per-element sum of |terms| */
static void within(hcq_sharded *s, hcq_tensor *want, const double *sumabs, int m, const tx_mdev *e, const char *what)
{
    cr_assert_not_null(s, "%s: %s", what, hcq_error_message());
    int64_t n = hcq_tensor_numel(want);
    float *g = calloc((size_t)n, sizeof *g), *w = calloc((size_t)n, sizeof *w);
    rd(T_NONNULL(hcq_sharded_gather(s, e->ctx[0])), g, (size_t)n);
    rd(want, w, (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        double bound = (2.0 * m - 2 + e->n) * ldexp(1, -24) * sumabs[i];
        cr_assert_leq(fabs((double)g[i] - w[i]), bound, "%s: element %lld: %.9g vs %.9g (bound %.3g)", what,
                      (long long)i, g[i], w[i], bound);
    }
    free(g);
    free(w);
}

/* every sharded tensor a test makes, freed at its end */
static hcq_sharded *made[64];
static int nmade;
static hcq_sharded *keep(hcq_sharded *s)
{
    cr_assert_not_null(s, "%s", hcq_error_message());
    cr_assert_lt(nmade, 64);
    return made[nmade++] = s;
}
static void free_made(void)
{
    while (nmade) T_OK(hcq_sharded_free(made[--nmade]));
}

static hcq_tensor *add(hcq_tensor *a, hcq_tensor *b) { return hcq_add(a, b); }
static hcq_tensor *mul(hcq_tensor *a, hcq_tensor *b) { return hcq_mul(a, b); }
static hcq_tensor *sum0(hcq_tensor *a) { return hcq_sum(a, (const int[]){0}, 1, false); }

/* full: every op; else the ones whose data crosses devices (shard,
 * gather, reshard, a fold over the split axis, a contraction-split
 * matmul), which is what a missing link changes: each op costs kernel
 * compiles on a cold cache, and make test has a budget */
static void all_ops(const char *spec, const char *kind, int nd, bool full)
{
    tx_mdev e;
    tx_mdev_open(&e, spec, kind, nd);
    enum { M = 11, K = 9, N = 6 };
    static float ha[M * K], hb[M * K], hw[K * N], hbias[K];
    hcq_ctx *c0 = e.ctx[0];
    hcq_tensor *a = rand_f32(c0, M, K, ha), *b = rand_f32(c0, M, K, hb), *w = rand_f32(c0, K, N, hw);
    for (int i = 0; i < K; i++) hbias[i] = frand();
    hcq_tensor *bias = T_NONNULL(hcq_from_data(c0, HCQ_F32, (const int64_t[]){K}, 1, hbias));

    /* shard and gather, on rows, on columns, replicated; reshard */
    hcq_sharded *ar = keep(hcq_shard(a, e.ctx, nd, 0));
    hcq_sharded *ac = keep(hcq_shard(a, e.ctx, nd, -1));
    hcq_sharded *arep = keep(hcq_shard(a, e.ctx, nd, HCQ_REPLICATED));
    cr_assert_eq(hcq_sharded_axis(ac), 1);
    cr_assert_eq(hcq_tensor_dim(hcq_sharded_piece(ar, nd - 1), 0), M - M * (nd - 1) / nd);
    same_bits(ar, a, &e, "rows");
    same_bits(ac, a, &e, "columns");
    same_bits(arep, a, &e, "replicated");
    hcq_sharded *re = keep(hcq_reshard(ar, 1));
    same_bits(re, a, &e, "resharded rows -> columns");

    /* elementwise */
    hcq_sharded *br = keep(hcq_shard(b, e.ctx, nd, 0));
    hcq_sharded *biasrep = keep(hcq_shard(bias, e.ctx, nd, HCQ_REPLICATED));
    same_bits(keep(hcq_sharded_map2(ar, br, add)), hcq_add(a, b), &e, "a + b (rows)");
    /* split on different axes: b is resharded on a's, exactly */
    hcq_sharded *rc = keep(hcq_sharded_map2(ar, keep(hcq_shard(b, e.ctx, nd, 1)), add));
    cr_assert_eq(hcq_sharded_axis(rc), 0);
    same_bits(rc, hcq_add(a, b), &e, "a (rows) + b (columns)");
    if (full) {
        same_bits(keep(hcq_sharded_map1(ar, hcq_relu)), hcq_relu(a), &e, "relu (rows)");
        same_bits(keep(hcq_sharded_map1(ac, hcq_exp)), hcq_exp(a), &e, "exp (columns)");
        same_bits(keep(hcq_sharded_map2(ar, biasrep, mul)), hcq_mul(a, bias), &e, "rows * replicated bias");
        /* the bias spans the split axis of the column split: sliced per shard */
        same_bits(keep(hcq_sharded_map2(ac, biasrep, add)), hcq_add(a, bias), &e, "columns + replicated bias");

        /* reductions over other axes stay split and are bit-exact */
        hcq_sharded *rs = keep(hcq_sharded_reduce(ar, HCQ_REDUCE_SUM, (const int[]){1}, 1, false));
        cr_assert_eq(hcq_sharded_axis(rs), 0);
        same_bits(rs, hcq_sum(a, (const int[]){1}, 1, false), &e, "row sums of rows");
        hcq_sharded *cs = keep(hcq_sharded_reduce(ac, HCQ_REDUCE_MAX, (const int[]){0}, 1, false));
        cr_assert_eq(hcq_sharded_axis(cs), 0, "the split axis renumbered");
        same_bits(cs, hcq_max(a, (const int[]){0}, 1, false), &e, "column maxima of columns");
    }

    /* over the split axis: max exact, sum and mean within the bound */
    same_bits(keep(hcq_sharded_reduce(ar, HCQ_REDUCE_MAX, (const int[]){0}, 1, true)),
              hcq_max(a, (const int[]){0}, 1, true), &e, "max over the split rows");
    double sabs[K];
    for (int k = 0; k < K; k++) {
        sabs[k] = 0;
        for (int i = 0; i < M; i++) sabs[k] += fabs(ha[i * K + k]);
    }
    within(keep(hcq_sharded_reduce(ar, HCQ_REDUCE_SUM, (const int[]){0}, 1, false)), hcq_sum(a, (const int[]){0}, 1, false),
           sabs, M, &e, "sum over the split rows");
    if (full) {
        for (int k = 0; k < K; k++) sabs[k] /= M;
        within(keep(hcq_sharded_reduce(ar, HCQ_REDUCE_MEAN, (const int[]){0}, 1, false)),
               hcq_mean(a, (const int[]){0}, 1, false), sabs, M + 1, &e, "mean over the split rows");
        double total = 0;
        for (int i = 0; i < M * K; i++) total += fabs(ha[i]);
        within(keep(hcq_sharded_reduce(ac, HCQ_REDUCE_SUM, NULL, 0, false)), hcq_sum(a, NULL, 0, false), &total, M * K, &e,
               "sum of everything, columns");

        /* integer sums over the split axis are exact */
        static int32_t hi[M * K];
        for (int i = 0; i < M * K; i++) hi[i] = (int32_t)(i * 2654435761u >> 3);
        hcq_tensor *ti = T_NONNULL(hcq_from_data(c0, HCQ_I32, (const int64_t[]){M, K}, 2, hi));
        hcq_sharded *tir = keep(hcq_shard(ti, e.ctx, nd, 0));
        same_bits(keep(hcq_sharded_reduce(tir, HCQ_REDUCE_SUM, (const int[]){0}, 1, false)), hcq_sum(ti, (const int[]){0}, 1, false),
                  &e, "i32 sum over the split rows (wrapping)");
    }

    /* matmul */
    hcq_sharded *wrep = keep(hcq_shard(w, e.ctx, nd, HCQ_REPLICATED));
    hcq_sharded *wcol = keep(hcq_shard(w, e.ctx, nd, 1));
    hcq_sharded *wrow = keep(hcq_shard(w, e.ctx, nd, 0));
    hcq_tensor *aw = hcq_matmul(a, w);
    if (full) {
            same_bits(keep(hcq_sharded_matmul(ar, wrep)), aw, &e, "row-split a x replicated w");
            same_bits(keep(hcq_sharded_matmul(arep, wcol)), aw, &e, "replicated a x column-split w");
            same_bits(keep(hcq_sharded_matmul(arep, wrep)), aw, &e, "replicated x replicated");
    }
    double mabs[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            mabs[i * N + j] = 0;
            for (int k = 0; k < K; k++) mabs[i * N + j] += fabs(ha[i * K + k] * hw[k * N + j]);
        }
    within(keep(hcq_sharded_matmul(ac, wrow)), aw, mabs, K, &e, "contraction-split a x w");
    if (full) { /* batched: [B, M, K] x [K, N] and x [B, K, N] */
        enum { B = 5, M3 = 7 };
        static float h3[B * M3 * K], hb3[B * K * N];
        for (int i = 0; i < B * M3 * K; i++) h3[i] = frand();
        for (int i = 0; i < B * K * N; i++) hb3[i] = frand();
        hcq_tensor *a3 = T_NONNULL(hcq_from_data(c0, HCQ_F32, (const int64_t[]){B, M3, K}, 3, h3));
        hcq_tensor *b3 = T_NONNULL(hcq_from_data(c0, HCQ_F32, (const int64_t[]){B, K, N}, 3, hb3));
        hcq_sharded *a3b = keep(hcq_shard(a3, e.ctx, nd, 0)), *a3m = keep(hcq_shard(a3, e.ctx, nd, 1));
        hcq_sharded *a3r = keep(hcq_shard(a3, e.ctx, nd, HCQ_REPLICATED)), *b3b = keep(hcq_shard(b3, e.ctx, nd, 0));
        hcq_sharded *b3r = keep(hcq_shard(b3, e.ctx, nd, HCQ_REPLICATED));
        hcq_tensor *a3w = hcq_matmul(a3, w), *a3b3 = hcq_matmul(a3, b3);
        hcq_sharded *m1 = keep(hcq_sharded_matmul(a3b, wrep));
        cr_assert_eq(hcq_sharded_axis(m1), 0);
        same_bits(m1, a3w, &e, "batch-split a3 x replicated w");
        hcq_sharded *m2 = keep(hcq_sharded_matmul(a3m, wrep));
        cr_assert_eq(hcq_sharded_axis(m2), 1);
        same_bits(m2, a3w, &e, "row-split a3 x replicated w");
        same_bits(keep(hcq_sharded_matmul(a3b, b3b)), a3b3, &e, "batch-split a3 x batch-split b3");
        same_bits(keep(hcq_sharded_matmul(a3r, b3b)), a3b3, &e, "replicated a3 x batch-split b3 (a3 sliced)");
        same_bits(keep(hcq_sharded_matmul(a3b, b3r)), a3b3, &e, "batch-split a3 x replicated b3 (b3 sliced)");
        hcq_sharded *m3 = keep(hcq_sharded_matmul(a3r, wcol));
        cr_assert_eq(hcq_sharded_axis(m3), 2);
        same_bits(m3, a3w, &e, "replicated a3 x column-split w");
        cr_assert_null(hcq_sharded_matmul(a3m, b3b)); /* rows of a3 with batches of b3 */
        cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    }
    if (full) {
            within(keep(hcq_sharded_matmul(ac, wrep)), aw, mabs, K, &e, "contraction-split a x replicated w");
            within(keep(hcq_sharded_matmul(arep, wrow)), aw, mabs, K, &e, "replicated a x contraction-split w");
    }

    /* refusals: never a wrong answer */
    cr_assert_null(hcq_sharded_matmul(ar, wcol));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    T_MSG_HAS("not supported");
    cr_assert_null(hcq_sharded_map1(ar, sum0));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    T_MSG_HAS("only elementwise");
    hcq_sharded *bias_split = keep(hcq_shard(bias, e.ctx, nd, 0));
    cr_assert_null(hcq_sharded_map2(ar, bias_split, add));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    T_MSG_HAS("shapes differ");
    hcq_sharded *sub = keep(hcq_shard(a, e.ctx + 1, nd - 1, HCQ_REPLICATED));
    cr_assert_null(hcq_sharded_map2(arep, sub, add));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    cr_assert_null(hcq_shard(a, (hcq_ctx *const[]){c0, c0}, 2, 0));
    T_MSG_HAS("given twice");
    cr_assert_null(hcq_shard(hcq_slice(a, 0, 0, 1, 1), e.ctx, nd, 0));
    T_MSG_HAS("fewer than");
    hcq_sharded *stale = T_NONNULL(hcq_shard(a, e.ctx, nd, 0));
    T_OK(hcq_sharded_free(stale));
    T_FAILS(hcq_sharded_free(stale), HCQ_ESTATE);
    cr_assert_eq(hcq_sharded_count(stale), 0);
    T_FAILS(hcq_sharded_realize(stale), HCQ_ESTATE);
    T_FAILS(hcq_sharded_realize(NULL), HCQ_EINVAL);
    cr_assert_null(hcq_sharded_gather(stale, c0));
    T_OK(hcq_sharded_realize(ar));
    free_made();
    tx_mdev_close(&e);
}

/* (make test's budget: on the NV mocks' SASS executor every op costs ~20 s of CPU; make test runs the ops that
 * move data across devices there and every op on the AMD mocks, CI's long form every op on both) */
Test(shard, nv_two_gpus_nvlink) { all_ops("nv=H100x2,nv_peer=nvlink", "NV", 2, getenv("HCQ_TEST_LONG") != NULL); }
/* (make test's budget: CI's long form, HCQ_TEST_LONG=1, adds the linkless NV run; make test keeps the linkless
 * AMD one, whose kernels cost less on a cold cache) */
Test(shard, nv_four_gpus_without_links)
{
    if (!getenv("HCQ_TEST_LONG")) cr_skip_test("in CI's long form (HCQ_TEST_LONG=1); make test runs the linkless AMD case");
    all_ops("nv=H100x4,nv_peer=none", "NV", 4, false);
}
Test(shard, amd_two_gpus_without_links) { all_ops("amd=gfx1100x2,amd_peer=none", "AMD", 2, false); }
Test(shard, amd_four_gpus_xgmi) { all_ops("amd=gfx942x4,amd_peer=xgmi", "AMD", 4, true); }

/* A sharded call inside a JIT capture is refused, saying so. */
static hcq_ctx *jit_peer;
static hcq_status jit_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)nin;
    (void)nout;
    (void)user;
    hcq_ctx *ctxs[2] = {ctx, jit_peer};
    hcq_sharded *s = hcq_shard(in[0], ctxs, 2, 0);
    if (!s) return hcq_error_status();
    out[0] = hcq_sharded_gather(s, ctx);
    hcq_sharded_free(s);
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(shard, a_jit_capture_refuses_sharded_tensors)
{
    tx_mdev e;
    tx_mdev_open(&e, "nv=H100x2", "NV", 2);
    jit_peer = e.ctx[1];
    static float h[8 * 4];
    hcq_tensor *x = rand_f32(e.ctx[0], 8, 4, h);
    hcq_jit *j = T_NONNULL(hcq_jit_create(e.ctx[0], jit_fn, NULL));
    hcq_tensor *out = NULL;
    T_OK(hcq_jit_run(j, &x, 1, &out, 1)); /* the first run is eager */
    T_FAILS(hcq_jit_run(j, &x, 1, &out, 1), HCQ_ENOTSUP);
    T_MSG_HAS("JIT");
    T_OK(hcq_jit_destroy(j));
    tx_mdev_close(&e);
}

/* A context destroyed under a sharded tensor makes it stale, not a crash;
 * it still frees. */
Test(shard, a_destroyed_context_makes_it_stale)
{
    tx_mdev e;
    tx_mdev_open(&e, "amd=gfx1100x2", "AMD", 2);
    static float h[4 * 3];
    hcq_tensor *x = rand_f32(e.ctx[0], 4, 3, h);
    hcq_sharded *s = T_NONNULL(hcq_shard(x, e.ctx, 2, 0));
    T_OK(hcq_ctx_destroy(e.ctx[1]));
    cr_assert_null(hcq_sharded_gather(s, e.ctx[0]));
    cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
    T_MSG_HAS("destroyed");
    cr_assert_null(hcq_sharded_map1(s, hcq_relu));
    T_OK(hcq_sharded_free(s));
    e.ctx[1] = T_NONNULL(hcq_ctx_create(e.dev[1]));
    tx_mdev_close(&e);
}
