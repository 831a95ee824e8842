/* Multi-output kernels on the device under test (tensor/group.c): results
 * of one loop structure that do not depend on one another are written by
 * one kernel, with the values each would have alone; in-place assignments
 * share a kernel only where no output overwrites what another still reads;
 * an optimizer step is a kernel per parameter; the JIT captures such a
 * kernel once and replays it into fresh output buffers; HCQ_DEBUG=2 says
 * what was grouped and why something was not. */
#include "tensortest.h"

#include "base/base.h"

#include <hcq/nn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(api_tensor_multi, .init = tx_setup, .fini = tx_teardown, .timeout = 480);

static uint64_t kernels(void)
{
    hcq_ctx_stats s;
    T_OK(hcq_ctx_get_stats(tx_ctx, &s));
    return s.kernels;
}

static uint64_t count(hcq_tensor **ts, int n)
{
    for (int i = 0; i < n; i++) cr_assert_not_null(ts[i], "%s", hcq_error_message());
    uint64_t k0 = kernels();
    T_OK(hcq_realize_all(ts, n));
    return kernels() - k0;
}

Test(api_tensor_multi, elementwise_results_of_one_shape_share_a_kernel)
{
    enum { N = 35 };
    double a[N], b[N], got[N], want[N];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(5, 7), -2, 2, 1, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(5, 7), -2, 2, 2, b);
    hcq_tensor *t[4] = {hcq_add(ta, tb), hcq_mul(ta, tb), hcq_lt(ta, tb), hcq_cast(hcq_neg(ta), HCQ_F16)};
    cr_assert_eq(count(t, 4), 1, "four results of one shape: one kernel");
    tx_read(t[0], got, N);
    for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, a[i] + b[i]);
    tx_close(got, want, N, 0, 0, "a + b");
    tx_read(t[1], got, N);
    for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, a[i] * b[i]);
    tx_close(got, want, N, 0, 0, "a * b");
    tx_read(t[2], got, N);
    for (int i = 0; i < N; i++) want[i] = a[i] < b[i];
    tx_close(got, want, N, 0, 0, "a < b");
    tx_read(t[3], got, N);
    for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F16, -a[i]);
    tx_close(got, want, N, 0, 0, "f16(-a)");
    /* other shapes, and a result computed from another's, stay apart */
    hcq_tensor *u[3] = {hcq_add(ta, tb), hcq_sum(ta, HCQ_AXES(1), false), NULL};
    cr_assert_eq(count(u, 2), 2, "[5, 7] and [5]");
    hcq_tensor *c = hcq_contiguous(hcq_mul(ta, tb));
    u[0] = c;
    u[1] = hcq_add(hcq_flip(c, (int[]){0}, 1), ta);
    cr_assert_eq(count(u, 2), 2, "a result reading another's");
    tx_read(u[1], got, N);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++) want[i * 7 + j] = tx_round(HCQ_F32, tx_round(HCQ_F32, a[(4 - i) * 7 + j] * b[(4 - i) * 7 + j]) + a[i * 7 + j]);
    tx_close(got, want, N, 0, 0, "flip(a * b) + a");
}

/* sums of the same rows: one kernel, one loop structure; a max beside a
 * sum is another reduction, so another kernel */
Test(api_tensor_multi, reductions_of_one_structure_share_a_kernel)
{
    enum { R = 6, C = 40 };
    double a[R * C], b[R * C], got[R], want[R];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(R, C), -1, 1, 3, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(R, C), -1, 1, 4, b);
    hcq_tensor *t[2] = {hcq_sum(ta, HCQ_AXES(1), false), hcq_sum(hcq_mul(tb, tb), HCQ_AXES(1), false)};
    cr_assert_eq(count(t, 2), 1, "two row sums");
    for (int k = 0; k < 2; k++) {
        tx_read(t[k], got, R);
        for (int i = 0; i < R; i++) {
            want[i] = 0;
            for (int j = 0; j < C; j++) want[i] += k ? b[i * C + j] * b[i * C + j] : a[i * C + j];
        }
        tx_close(got, want, R, 1e-5, 1e-5, k ? "sum(b*b)" : "sum(a)");
    }
    t[0] = hcq_sum(ta, HCQ_AXES(1), false);
    t[1] = hcq_max(ta, HCQ_AXES(1), false);
    cr_assert_eq(count(t, 2), 2, "a sum and a max");
    /* one reduction read by both outputs at their own element: computed
     * once, inside their kernel (a bias gradient and the optimizer's
     * update of the bias and its moments) */
    hcq_tensor *r = hcq_sum(ta, HCQ_AXES(1), false);
    t[0] = hcq_add_s(r, 1);
    t[1] = hcq_mul(r, r);
    cr_assert_eq(count(t, 2), 1, "a shared row sum and two results of it");
    for (int k = 0; k < 2; k++) {
        tx_read(t[k], got, R);
        for (int i = 0; i < R; i++) {
            double v = 0;
            for (int j = 0; j < C; j++) v += a[i * C + j];
            want[i] = k ? v * v : v + 1;
        }
        tx_close(got, want, R, 1e-5, 1e-5, k ? "sum(a)^2" : "sum(a) + 1");
    }
    /* a product keeps its kernel (its register tile vectorizes alone) */
    hcq_tensor *mm = hcq_matmul(ta, hcq_transpose(tb, 0, 1));
    t[0] = hcq_add_s(mm, 1);
    t[1] = hcq_mul_s(mm, 2);
    cr_assert_eq(count(t, 2), 2, "a shared product and two results of it");
}

/* hcq_assign_all: every value reads the old contents. The moments of an
 * update read their own destinations at the stored element: one kernel.
 * A value reading another destination at other elements (flipped) keeps
 * the two stores in separate kernels, in the order that reads first. */
Test(api_tensor_multi, assignments_in_place)
{
    enum { N = 64 };
    double p[N], m[N], g[N], v[N], got[N], want[N];
    hcq_tensor *tp = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 5, p), *tm = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 6, m);
    hcq_tensor *tg = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 7, g), *tv = tx_rand(HCQ_F32, TX_SHAPE(N), 0, 1, 8, v);
    T_OK(hcq_realize(tg));
    size_t mark = hcq_ctx_mark(tx_ctx);
    hcq_tensor *mn = hcq_add(hcq_mul_s(tm, 0.5), tg), *vn = hcq_add(hcq_mul_s(tv, 0.25), hcq_mul(tg, tg));
    hcq_tensor *pn = hcq_sub(tp, hcq_div(mn, hcq_add_s(hcq_sqrt(vn), 1)));
    uint64_t k0 = kernels();
    T_OK(hcq_assign_all((hcq_tensor *[]){tp, tm, tv}, (hcq_tensor *[]){pn, mn, vn}, 3));
    cr_assert_eq(kernels() - k0, 1, "parameter and moments: one kernel, %llu", (unsigned long long)(kernels() - k0));
    hcq_ctx_release(tx_ctx, mark);
    double mw[N], vw[N];
    for (int i = 0; i < N; i++) {
        float mf = (float)((float)(m[i] * 0.5) + g[i]), vf = (float)((float)(v[i] * 0.25) + (float)(g[i] * g[i]));
        mw[i] = mf;
        vw[i] = vf;
        want[i] = (float)(p[i] - (float)(mf / (float)((float)sqrt(vf) + 1)));
    }
    tx_read(tp, got, N);
    tx_close(got, want, N, 1e-6, 1e-7, "parameter");
    tx_read(tm, got, N);
    tx_close(got, mw, N, 0, 0, "first moment");
    tx_read(tv, got, N);
    tx_close(got, vw, N, 0, 0, "second moment");
    /* x <- flip(y) + 1, y <- x * 2, both from the old x and y */
    double x[N], y[N];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 9, x), *ty = tx_rand(HCQ_F32, TX_SHAPE(N), -1, 1, 10, y);
    T_OK(hcq_realize_all((hcq_tensor *[]){tx, ty}, 2));
    T_OK(hcq_assign_all((hcq_tensor *[]){tx, ty},
                        (hcq_tensor *[]){hcq_add_s(hcq_flip(ty, (int[]){0}, 1), 1), hcq_mul_s(tx, 2)}, 2));
    tx_read(tx, got, N);
    for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, y[N - 1 - i] + 1);
    tx_close(got, want, N, 0, 0, "x <- flip(y) + 1");
    tx_read(ty, got, N);
    for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, x[i] * 2);
    tx_close(got, want, N, 0, 0, "y <- x * 2");
    /* P <- P + 1, Q <- R's two halves summed, R <- R * 3: R's store would
     * fit P's kernel, but moving it there would run it before Q's kernel
     * reads R; so three kernels, and Q sums the old R */
    double P[16], R[16], Q[8];
    hcq_tensor *tP = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 11, P), *tR = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 12, R);
    hcq_tensor *tQ = tx_rand(HCQ_F32, TX_SHAPE(8), -1, 1, 13, Q);
    T_OK(hcq_realize_all((hcq_tensor *[]){tP, tQ, tR}, 3));
    uint64_t k1 = kernels();
    T_OK(hcq_assign_all((hcq_tensor *[]){tP, tQ, tR},
                        (hcq_tensor *[]){hcq_add_s(tP, 1), hcq_sum(hcq_reshape(tR, HCQ_SHAPE(2, 8)), HCQ_AXES(0), false), hcq_mul_s(tR, 3)},
                        3));
    cr_assert_eq(kernels() - k1, 3, "P's, Q's and R's stores: %llu kernels", (unsigned long long)(kernels() - k1));
    tx_read(tQ, got, 8);
    for (int i = 0; i < 8; i++) want[i] = tx_round(HCQ_F32, R[i] + R[8 + i]);
    tx_close(got, want, 8, 0, 0, "Q <- the old R's halves");
    tx_read(tR, got, 16);
    for (int i = 0; i < 16; i++) want[i] = tx_round(HCQ_F32, R[i] * 3);
    tx_close(got, want, 16, 0, 0, "R <- R * 3");
    tx_read(tP, got, 16);
    for (int i = 0; i < 16; i++) want[i] = tx_round(HCQ_F32, P[i] + 1);
    tx_close(got, want, 16, 0, 0, "P <- P + 1");
    /* the same with the reader not an assignment: a loss realized in the
     * pass (NULL destination) reads R after a kernel of R's shape (w); R's
     * store must not join w's kernel, which runs before the loss */
    double W[16];
    hcq_tensor *tW = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 14, W);
    T_OK(hcq_realize(tW));
    double R2[16];
    tx_read(tR, R2, 16);
    hcq_tensor *w = hcq_contiguous(hcq_mul_s(tW, 2)), *loss = hcq_sum(hcq_mul(tR, w), HCQ_ALL_AXES, false);
    T_OK(hcq_assign_all((hcq_tensor *[]){tP, NULL, tR}, (hcq_tensor *[]){hcq_add_s(tP, 1), loss, hcq_mul_s(tR, 3)}, 3));
    double lv, lw = 0;
    T_OK(hcq_tensor_item(loss, &lv));
    for (int i = 0; i < 16; i++) lw += R2[i] * tx_round(HCQ_F32, W[i] * 2);
    cr_assert(fabs(lv - lw) <= 1e-5 * (1 + fabs(lw)), "the loss reads the old R: %g, want %g", lv, lw);
}

/* The demo's model (784-32-10, hcq demo's training part) on a small batch:
 * the optimizer's update is one kernel per parameter (and one for the
 * step's scalars: the step count and Adam's bias corrections). */
typedef struct mlp {
    hcq_params *p;
    hcq_tensor *w1, *b1, *w2, *b2;
} mlp;

static void mlp_make(mlp *m)
{
    hcq_ctx_seed(tx_ctx, 3);
    m->p = T_NONNULL(hcq_params_create(tx_ctx));
    m->w1 = T_NONNULL(hcq_param(m->p, "fc1.weight", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(32, 784), 0, 0));
    m->b1 = T_NONNULL(hcq_param(m->p, "fc1.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(32), 0, 0));
    m->w2 = T_NONNULL(hcq_param(m->p, "fc2.weight", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(10, 32), 0, 0));
    m->b2 = T_NONNULL(hcq_param(m->p, "fc2.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(10), 0, 0));
}

static hcq_tensor *mlp_loss(mlp *m, hcq_tensor *x, hcq_tensor *y)
{
    return hcq_cross_entropy(hcq_linear(hcq_relu(hcq_linear(x, m->w1, m->b1)), m->w2, m->b2), y);
}

static uint64_t step_kernels(mlp *m, hcq_optim *o, hcq_tensor *x, hcq_tensor *y)
{
    size_t mark = hcq_ctx_mark(tx_ctx);
    T_OK(hcq_backward(mlp_loss(m, x, y)));
    hcq_tensor *g[4] = {hcq_grad(m->w1), hcq_grad(m->b1), hcq_grad(m->w2), hcq_grad(m->b2)};
    T_OK(hcq_realize_all(g, 4)); /* the backward pass's kernels apart */
    uint64_t k0 = kernels();
    T_OK(hcq_optim_step(o));
    uint64_t k = kernels() - k0;
    hcq_ctx_release(tx_ctx, mark);
    return k;
}

Test(api_tensor_multi, optimizer_steps_are_a_kernel_per_parameter)
{
    enum { B = 8 };
    mlp m;
    mlp_make(&m);
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(B, 784), 0, 1, 11, NULL);
    int32_t lab[B];
    for (int i = 0; i < B; i++) lab[i] = (i * 7) % 10;
    hcq_tensor *y = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(B), lab));
    hcq_optim *adam = T_NONNULL(hcq_adam(m.p, 1e-3, 0.9, 0.999, 1e-8, 0));
    /* before multi-output kernels: 15 (3 per parameter, 2 scalars, the step count) */
    uint64_t k = step_kernels(&m, adam, x, y);
    cr_assert_leq(k, 12, "the demo MLP's Adam step: %llu kernels", (unsigned long long)k);
    cr_assert_eq(k, 5, "Adam: a kernel per parameter and one for the scalars, %llu", (unsigned long long)k);
    T_OK(hcq_optim_destroy(adam));
    hcq_optim *sgd = T_NONNULL(hcq_sgd(m.p, 0.01, 0.9, 0, false));
    k = step_kernels(&m, sgd, x, y);
    cr_assert_eq(k, 5, "SGD with momentum: a kernel per parameter and the step count, %llu", (unsigned long long)k);
    T_OK(hcq_optim_destroy(sgd));
    T_OK(hcq_params_destroy(m.p));
}

/* The demo's training step through the JIT (forward, backward, Adam; the
 * loss rides in the update's pass): 35 kernels before multi-output
 * kernels, 23 with them (the update of each parameter and its moments is
 * one kernel, a bias gradient's reduction runs inside it). */
typedef struct train {
    mlp m;
    hcq_optim *o;
} train;

static hcq_status train_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    train *t = user;
    hcq_tensor *loss = mlp_loss(&t->m, in[0], in[1]);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(t->o, &loss, 1);
    out[0] = loss;
    return s;
}

Test(api_tensor_multi, jit_training_step_kernel_count)
{
    enum { B = 128 };
    train t;
    mlp_make(&t.m);
    t.o = T_NONNULL(hcq_adam(t.m.p, 1e-3, 0.9, 0.999, 1e-8, 0));
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(B, 784), 0, 1, 12, NULL);
    int32_t lab[B];
    for (int i = 0; i < B; i++) lab[i] = (i * 3) % 10;
    hcq_tensor *y = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(B), lab));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, train_step, &t));
    double loss[3];
    for (int r = 0; r < 3; r++) {
        hcq_tensor *l;
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, y}, 2, &l, 1));
        T_OK(hcq_tensor_item(l, &loss[r]));
        hcq_tensor_free(l);
    }
    cr_assert(loss[2] < loss[0], "the loss falls: %g -> %g", loss[0], loss[2]);
    cr_assert_leq(hcq_jit_kernel_count(j), 23, "kernels per training step: %u", hcq_jit_kernel_count(j));
    T_OK(hcq_jit_destroy(j));
    T_OK(hcq_optim_destroy(t.o));
    T_OK(hcq_params_destroy(t.m.p));
}

/* A JIT whose two outputs share a kernel: captured as one launch; every
 * replay writes both into new buffers, so earlier outputs stay intact. */
static hcq_status two_out(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_add(in[0], in[1]);
    out[1] = hcq_mul(in[0], in[1]);
    return out[0] && out[1] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_multi, jit_replays_a_multi_output_kernel)
{
    enum { N = 24, RUNS = 4 };
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, two_out, NULL));
    hcq_tensor *outs[RUNS][2];
    double a[RUNS][N], b[RUNS][N], got[N], want[N];
    for (int r = 0; r < RUNS; r++) {
        hcq_tensor *in[2] = {tx_rand(HCQ_F32, TX_SHAPE(4, 6), -1, 1, 20 + r, a[r]), tx_rand(HCQ_F32, TX_SHAPE(4, 6), -1, 1, 40 + r, b[r])};
        T_OK(hcq_jit_run(j, in, 2, outs[r], 2));
    }
    cr_assert_eq(hcq_jit_kernel_count(j), 1, "both outputs from one captured kernel: %u", hcq_jit_kernel_count(j));
    for (int r = 0; r < RUNS; r++) {
        tx_read(outs[r][0], got, N);
        for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, a[r][i] + b[r][i]);
        tx_close(got, want, N, 0, 0, "a + b of each run");
        tx_read(outs[r][1], got, N);
        for (int i = 0; i < N; i++) want[i] = tx_round(HCQ_F32, a[r][i] * b[r][i]);
        tx_close(got, want, N, 0, 0, "a * b of each run");
    }
    T_OK(hcq_jit_destroy(j));
}

/* HCQ_DEBUG=2: which outputs one kernel writes, and why an output of the
 * same structure did not join it */
Test(api_tensor_multi, debug_level_2_explains_the_grouping)
{
    char log[T_TMP_PATH];
    int fd = t_tmpfile(log, sizeof log, "hcq-multi-log");
    cr_assert(fd >= 0);
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 30, NULL), *ty = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 31, NULL);
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(16), -1, 1, 32, NULL);
    T_OK(hcq_realize_all((hcq_tensor *[]){tx, ty, ta}, 3));
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("HCQ_DEBUG", "2", 1);
    base_env_reload();
    hcq_status s = hcq_realize_all((hcq_tensor *[]){hcq_add(ta, tx), hcq_mul(ta, ty)}, 2);
    if (!s)
        s = hcq_assign_all((hcq_tensor *[]){tx, ty}, (hcq_tensor *[]){hcq_flip(ty, (int[]){0}, 1), hcq_add_s(ty, 1)}, 2);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    setenv("HCQ_DEBUG", "0", 1);
    base_env_reload();
    T_OK(s);
    char text[65536];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(log);
    cr_assert_gt(n, 0);
    text[n] = 0;
    cr_assert(strstr(text, "schedule: one kernel writes 2 outputs of shape [16], elementwise"), "%s", text);
    cr_assert(strstr(text, "not in the kernel of node") && strstr(text, "elsewhere than at the stored element"), "%s", text);
}
