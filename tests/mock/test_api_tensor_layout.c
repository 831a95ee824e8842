/* Weights' layout copies (tensor/layout.c) on the device under test: a
 * forward pass copies a K-major weight (x @ w^T) to the layout its matmul
 * wants once (on CPU-style targets; GPU targets read it in place), and the
 * next forward launches nothing but the product; every way of writing the
 * weight (hcq_tensor_write, hcq_assign, an optimizer step, a JIT replay
 * that updates it) is seen by the next forward, eager or replayed, which
 * is checked against C loops. */
#include "tensortest.h"

#include <hcq/nn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_layout, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

/* big enough for the CPU plan's copy (M, N >= 16) */
enum { M = 16, K = 8, N = 24 };

/* y = x @ w^T: x [M, K], w [N, K] */
static void ref_linear(const double *x, const double *w, double *y)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += x[i * K + k] * w[j * K + k];
            y[i * N + j] = s;
        }
}

static uint64_t kernels_now(void)
{
    hcq_ctx_stats st;
    T_OK(hcq_ctx_get_stats(tx_ctx, &st));
    return st.kernels;
}

/* realizes y, checks it against x @ w^T and returns the kernels it ran */
static uint64_t check(hcq_tensor *y, const double *x, const double *w, const char *what)
{
    double got[M * N], want[M * N];
    uint64_t k0 = kernels_now();
    T_OK(hcq_realize(y));
    uint64_t ran = kernels_now() - k0;
    tx_read(y, got, M * N);
    ref_linear(x, w, want);
    tx_close(got, want, M * N, 1e-5, 1e-5, what);
    return ran;
}

static void write_w(hcq_tensor *tw, double *w, uint32_t seed)
{
    float raw[N * K];
    uint64_t s = seed;
    for (int i = 0; i < N * K; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        raw[i] = (float)((double)(s >> 40) / (double)(1 << 24) * 2 - 1);
        w[i] = raw[i];
    }
    T_OK(hcq_tensor_write(tw, raw, sizeof raw));
}

Test(api_tensor_layout, second_forward_copies_nothing_and_writes_are_seen)
{
    double x[M * K], w[N * K];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 1, x), *tw = tx_rand(HCQ_F32, TX_SHAPE(N, K), -1, 1, 2, w);
    uint64_t first = check(hcq_linear(tx, tw, NULL), x, w, "first forward");
    cr_assert(first >= 1 && first <= 2, "the first forward ran %llu kernels (the product, and a copy of w on CPUs)",
              (unsigned long long)first);
    cr_assert_eq(check(hcq_linear(tx, tw, NULL), x, w, "second forward"), 1, "the second forward only multiplies");
    /* a host write */
    write_w(tw, w, 3);
    check(hcq_linear(tx, tw, NULL), x, w, "after hcq_tensor_write");
    cr_assert_eq(check(hcq_linear(tx, tw, NULL), x, w, "again"), 1);
    /* an in-place update by a kernel */
    T_OK(hcq_assign(tw, hcq_mul_s(tw, -0.5)));
    for (int i = 0; i < N * K; i++) w[i] *= -0.5;
    check(hcq_linear(tx, tw, NULL), x, w, "after hcq_assign");
    /* a forward built before the write and realized after reads the new
     * values (tensor.h: lazy tensors see the buffer's contents when realized) */
    hcq_tensor *lazy = hcq_linear(tx, tw, NULL);
    write_w(tw, w, 4);
    check(lazy, x, w, "built before the write, realized after");
    /* written by a JIT-free realize into it: hcq_assign of a view of itself */
    T_OK(hcq_assign(tw, hcq_flip(tw, (const int[]){0}, 1)));
    double f[N * K];
    for (int j = 0; j < N; j++) memcpy(f + j * K, w + (N - 1 - j) * K, K * sizeof *f);
    check(hcq_linear(tx, tw, NULL), x, f, "after a flip in place");
}

Test(api_tensor_layout, views_and_dtypes_of_one_buffer_are_copied_apart)
{
    /* one buffer read as two weights (rows 0..N and N..2N), and in f16 */
    double x[M * K], w[2 * N * K];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 5, x), *tw = tx_rand(HCQ_F32, TX_SHAPE(2 * N, K), -1, 1, 6, w);
    for (int rep = 0; rep < 2; rep++) {
        hcq_tensor *lo = hcq_shrink(tw, (const int64_t[]){0, N, 0, K}, 2);
        hcq_tensor *hi = hcq_shrink(tw, (const int64_t[]){N, 2 * N, 0, K}, 2);
        check(hcq_linear(tx, lo, NULL), x, w, "rows 0..N");
        check(hcq_linear(tx, hi, NULL), x, w + N * K, "rows N..2N");
    }
    double hx[M * K], hw[N * K], got[M * N], want[M * N];
    hcq_tensor *thx = tx_rand(HCQ_F16, TX_SHAPE(M, K), -1, 1, 7, hx), *thw = tx_rand(HCQ_F16, TX_SHAPE(N, K), -1, 1, 8, hw);
    for (int rep = 0; rep < 3; rep++) {
        if (rep == 2) {
            T_OK(hcq_assign(thw, hcq_mul_s(thw, 2)));
            for (int i = 0; i < N * K; i++) hw[i] *= 2;
        }
        tx_read(hcq_linear(thx, thw, NULL), got, M * N);
        ref_linear(hx, hw, want);
        for (int i = 0; i < M * N; i++) want[i] = tx_round(HCQ_F16, want[i]);
        tx_close(got, want, M * N, 2e-3, 2e-3, "f16 linear");
    }
}

Test(api_tensor_layout, optimizer_steps_are_seen_by_the_next_forward)
{
    /* SGD on 0.5 * sum((x @ w^T)^2): the gradient is y^T @ x, so each
     * step's weights are known on the host; each forward must use them */
    double x[M * K], w[N * K], y[M * N];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -0.5, 0.5, 9, x);
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(N, K), -0.5, 0.5, 10, w);
    hcq_params *ps = T_NONNULL(hcq_params_create(tx_ctx));
    T_NONNULL(hcq_params_add(ps, "w", tw));
    hcq_optim *opt = T_NONNULL(hcq_sgd(ps, 0.01, 0, 0, false));
    for (int step = 0; step < 4; step++) {
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *out = hcq_linear(tx, tw, NULL);
        hcq_tensor *loss = hcq_mul_s(hcq_sum(hcq_mul(out, out), HCQ_ALL_AXES, false), 0.5);
        check(out, x, w, "forward of a step");
        T_OK(hcq_backward(loss));
        T_OK(hcq_optim_step(opt));
        ref_linear(x, w, y);
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++) {
                double g = 0;
                for (int i = 0; i < M; i++) g += y[i * N + j] * x[i * K + k];
                w[j * K + k] = (double)(float)(w[j * K + k] - 0.01 * g);
            }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    double got[N * K];
    tx_read(tw, got, N * K);
    tx_close(got, w, N * K, 1e-5, 1e-6, "weights after 4 steps");
    check(hcq_linear(tx, tw, NULL), x, w, "forward after the steps");
    T_OK(hcq_optim_destroy(opt));
    T_OK(hcq_params_destroy(ps));
}

/* ** JIT */
static hcq_tensor *g_w;

/* x @ w^T, w is g_w or (user non-NULL) the second input */
static hcq_status fwd(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    out[0] = hcq_linear(in[0], user ? in[1] : g_w, NULL);
    return out[0] ? HCQ_OK : hcq_error_status();
}

/* the forward, then w *= 0.5 in place */
static hcq_status fwd_then_update(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    hcq_status s = fwd(ctx, in, nin, out, nout, user);
    if (!s) s = hcq_assign_all((hcq_tensor *[]){NULL, g_w}, (hcq_tensor *[]){out[0], hcq_mul_s(g_w, 0.5)}, 2);
    return s;
}

Test(api_tensor_layout, jit_replays_no_copy_and_sees_writes_between_replays)
{
    double x[M * K], w[N * K];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 11, x);
    g_w = tx_rand(HCQ_F32, TX_SHAPE(N, K), -1, 1, 12, w);
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, fwd, NULL));
    for (int run = 0; run < 8; run++) {
        if (run == 4) write_w(g_w, w, 13); /* between replays, from the host */
        if (run == 6) {                    /* and by a kernel */
            T_OK(hcq_assign(g_w, hcq_add_s(g_w, 1)));
            for (int i = 0; i < N * K; i++) w[i] = (double)(float)(w[i] + 1);
        }
        hcq_tensor *out;
        T_OK(hcq_jit_run(j, &tx, 1, &out, 1));
        check(out, x, w, "jit forward");
        if (run >= 1)
            cr_assert_eq(hcq_jit_kernel_count(j), 1, "the captured forward is the product alone (%u kernels)",
                         hcq_jit_kernel_count(j));
    }
    T_OK(hcq_jit_destroy(j));
}

Test(api_tensor_layout, jit_that_updates_its_weight_reads_the_update)
{
    double x[M * K], w[N * K];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 14, x);
    g_w = tx_rand(HCQ_F32, TX_SHAPE(N, K), -1, 1, 15, w);
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, fwd_then_update, NULL));
    for (int run = 0; run < 6; run++) {
        /* an eager forward before the capture, so the capture finds w's
         * copy current and the graph reads it; later ones between replays */
        if (run == 1 || run == 4) check(hcq_linear(tx, g_w, NULL), x, w, "eager forward between runs");
        hcq_tensor *out;
        T_OK(hcq_jit_run(j, &tx, 1, &out, 1));
        check(out, x, w, "jit forward, then w *= 0.5");
        for (int i = 0; i < N * K; i++) w[i] *= 0.5;
    }
    double got[N * K];
    tx_read(g_w, got, N * K);
    tx_close(got, w, N * K, 0, 0, "w after 6 halvings");
    T_OK(hcq_jit_destroy(j));
}

Test(api_tensor_layout, jit_weight_input_swapped_on_replay)
{
    double x[M * K], wa[N * K], wb[N * K];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(M, K), -1, 1, 16, x);
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(N, K), -1, 1, 17, wa), *tb = tx_rand(HCQ_F32, TX_SHAPE(N, K), -1, 1, 18, wb);
    check(hcq_linear(tx, ta, NULL), x, wa, "eager, so wa's copy is current");
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, fwd, "w is input 1"));
    for (int run = 0; run < 6; run++) {
        bool b = run >= 3 && run % 2;
        hcq_tensor *out;
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){tx, b ? tb : ta}, 2, &out, 1));
        check(out, x, b ? wb : wa, b ? "replay with wb" : "run with wa");
    }
    T_OK(hcq_jit_destroy(j));
}
