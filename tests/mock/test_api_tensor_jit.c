/* The JIT on the device under test (capture on the second run, replays
 * after, with new inputs giving new, correct outputs) and the tensor
 * layer's errors: shape mismatches, bad axes, unsupported dtypes, freed
 * tensors and contexts, NULL chains. */
#include "tensortest.h"

#include "base/base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(api_tensor_jit, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

/* out0 = relu(x @ w + b), out1 = sum(out0) */
static hcq_status mlp_layer(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx;
    (void)user;
    cr_assert_eq(nin, 3);
    cr_assert_eq(nout, 2);
    out[0] = hcq_relu(hcq_add(hcq_matmul(in[0], in[1]), in[2]));
    out[1] = hcq_sum(out[0], HCQ_ALL_AXES, false);
    return out[0] && out[1] ? HCQ_OK : hcq_error_status();
}

static void ref_layer(const double *x, const double *w, const double *b, double *y, double *s)
{
    *s = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            double v = b[j];
            for (int k = 0; k < 5; k++) v += x[i * 5 + k] * w[k * 3 + j];
            y[i * 3 + j] = v < 0 ? 0 : v;
            *s += y[i * 3 + j];
        }
}

Test(api_tensor_jit, replays_with_new_inputs)
{
    double w[15], b[3];
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(5, 3), -1, 1, 1, w), *tb = tx_rand(HCQ_F32, TX_SHAPE(3), -1, 1, 2, b);
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, mlp_layer, NULL));
    cr_assert_eq(hcq_jit_kernel_count(j), 0);
    hcq_tensor *keep[6][2];
    double xs[6][20];
    for (int run = 0; run < 6; run++) {
        hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(4, 5), -1, 1, 10 + (uint32_t)run, xs[run]);
        hcq_tensor *in[3] = {tx, tw, tb};
        hcq_ctx_stats s0, s1;
        T_OK(hcq_ctx_get_stats(tx_ctx, &s0));
        T_OK(hcq_jit_run(j, in, 3, keep[run], 2));
        T_OK(hcq_ctx_get_stats(tx_ctx, &s1));
        if (run >= 2) {
            cr_assert_gt(hcq_jit_kernel_count(j), 0);
            cr_assert_eq(s1.graph_replays, s0.graph_replays + 1, "run %d is a replay", run);
            cr_assert_eq(s1.programs, s0.programs, "a replay builds nothing");
        }
    }
    /* every run's outputs are its own, even after later replays */
    for (int run = 0; run < 6; run++) {
        double y[12], want[12], s, got_s;
        ref_layer(xs[run], w, b, want, &s);
        tx_read(keep[run][0], y, 12);
        tx_close(y, want, 12, 1e-5, 1e-5, "jit output");
        T_OK(hcq_tensor_item(keep[run][1], &got_s));
        cr_assert(fabs(got_s - s) < 1e-4, "run %d: sum %g vs %g", run, got_s, s);
    }
    /* a changed weight buffer (another input) is picked up too */
    double w2[15];
    hcq_tensor *tw2 = tx_rand(HCQ_F32, TX_SHAPE(5, 3), -1, 1, 3, w2);
    hcq_tensor *in[3] = {tx_from(HCQ_F32, TX_SHAPE(4, 5), xs[0]), tw2, tb}, *out[2];
    T_OK(hcq_jit_run(j, in, 3, out, 2));
    double y[12], want[12], s;
    ref_layer(xs[0], w2, b, want, &s);
    tx_read(out[0], y, 12);
    tx_close(y, want, 12, 1e-5, 1e-5, "new weights");
    /* inputs must keep their shapes */
    hcq_tensor *bad[3] = {hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(2, 5)), tw, tb};
    T_FAILS(hcq_jit_run(j, bad, 3, out, 2), HCQ_EINVAL);
    T_MSG_HAS("shape");
    T_OK(hcq_jit_destroy(j));
    T_FAILS(hcq_jit_destroy(j), HCQ_ESTATE);
}

static hcq_status passthrough(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = in[0]; /* an input as the output: the JIT copies it */
    return HCQ_OK;
}

Test(api_tensor_jit, output_is_an_input_and_lazy_inputs)
{
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, passthrough, NULL));
    for (int run = 0; run < 4; run++) {
        double x[6], got[6];
        hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(2, 3), -1, 1, 40 + (uint32_t)run, x);
        hcq_tensor *lazy = hcq_transpose(hcq_mul_s(t, 2), 0, 1); /* realized and copied before the run */
        hcq_tensor *out;
        T_OK(hcq_jit_run(j, &lazy, 1, &out, 1));
        tx_read(out, got, 6);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 2; c++) cr_assert_eq(got[r * 2 + c], 2 * x[c * 3 + r]);
    }
}

Test(api_tensor_jit, errors_are_clear)
{
    hcq_tensor *a = hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(2, 3)), *b = hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(4, 3));
    cr_assert_null(hcq_add(a, b));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    T_MSG_HAS("broadcast");
    /* a NULL chain keeps the first message */
    cr_assert_null(hcq_relu(hcq_exp(hcq_add(a, b))));
    T_MSG_HAS("broadcast");
    cr_assert_null(hcq_sum(a, HCQ_AXES(2), false));
    T_MSG_HAS("axis 2 is out of range");
    cr_assert_null(hcq_sum(a, HCQ_AXES(1, -1), false));
    T_MSG_HAS("twice");
    cr_assert_null(hcq_matmul(a, a));
    T_MSG_HAS("inner dims");
    cr_assert_null(hcq_reshape(a, TX_SHAPE(4, 2)));
    T_MSG_HAS("elements");
    cr_assert_null(hcq_zeros(tx_ctx, HCQ_VOID, TX_SHAPE(2)));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    T_MSG_HAS("not a tensor dtype");
    cr_assert_null(hcq_cast(a, HCQ_DTYPE_COUNT));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    cr_assert_null(hcq_idiv(a, a));
    T_MSG_HAS("integer or bool operands");
    cr_assert_null(hcq_bitcast(a, HCQ_BOOL));
    T_MSG_HAS("sizes must match");
    cr_assert_null(hcq_pad(a, (const int64_t[]){-1, 0}, 1, 0));
    T_MSG_HAS("hcq_shrink");
    cr_assert_null(hcq_shrink(a, (const int64_t[]){1, 3}, 1));
    T_MSG_HAS("range");
    cr_assert_null(hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(-1)));
    cr_assert_null(hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(1 << 20, 1 << 12)));
    cr_assert_eq(hcq_error_status(), HCQ_ELIMIT);
    double buf[6];
    T_FAILS(hcq_tensor_read(a, buf, 5), HCQ_EINVAL);
    T_MSG_HAS("bytes");
    T_FAILS(hcq_tensor_write(hcq_add(a, a), buf, 24), HCQ_EINVAL);
    /* freed tensors: a clear HCQ_ESTATE, and users of them live on */
    hcq_tensor *x = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(3), 2.0), *y = hcq_mul(x, x);
    T_OK(hcq_tensor_free(x));
    T_FAILS(hcq_realize(x), HCQ_ESTATE);
    T_MSG_HAS("not live");
    cr_assert_null(hcq_exp(x));
    cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
    T_FAILS(hcq_tensor_free(x), HCQ_ESTATE);
    double v;
    T_OK(hcq_tensor_item(hcq_sum(y, HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, 12.0);
    /* release to a mark frees what came after it */
    size_t m = hcq_ctx_mark(tx_ctx);
    hcq_tensor *z = hcq_ones(tx_ctx, HCQ_F32, TX_SHAPE(2));
    T_OK(hcq_ctx_release(tx_ctx, m));
    T_FAILS(hcq_realize(z), HCQ_ESTATE);
    T_FAILS(hcq_ctx_release(tx_ctx, (size_t)-1), HCQ_EINVAL);
    /* contexts do not mix */
    hcq_ctx *other = T_NONNULL(hcq_ctx_create(tx_dev));
    hcq_tensor *o = hcq_ones(other, HCQ_F32, TX_SHAPE(3));
    cr_assert_null(hcq_add(y, o));
    T_MSG_HAS("different contexts");
    hcq_tensor *moved = T_NONNULL(hcq_tensor_to(tx_ctx, o));
    T_OK(hcq_tensor_item(hcq_sum(hcq_add(y, moved), HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, 15.0);
    T_OK(hcq_ctx_destroy(other));
    T_FAILS(hcq_realize(o), HCQ_ESTATE);
    T_FAILS(hcq_ctx_destroy(other), HCQ_ESTATE);
    cr_assert_null(hcq_ctx_create(NULL));
}

Test(api_tensor_jit, every_kernel_agrees_with_the_interpreter_on_cpu)
{
    if (strcmp(hcq_device_get_props(tx_dev)->target, "cpu")) cr_skip_test("the check runs on the cpu target");
    uint64_t before = tx_agreed_kernels();
    double x[10];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(10), -1, 1, 50, x);
    double v;
    T_OK(hcq_tensor_item(hcq_sum(hcq_exp(t), HCQ_ALL_AXES, false), &v));
    cr_assert_gt(tx_agreed_kernels(), before, "the launch hook ran the kernel on the interpreter");
}

/* HCQ_DEBUG=2: a line per kernel launched eagerly (name, dims, device time,
 * GB/s, GFLOP/s) and a line per JIT replay */
Test(api_tensor_jit, debug_level_2_prints_kernels_and_replays)
{
    char log[T_TMP_PATH];
    int fd = t_tmpfile(log, sizeof log, "hcq-jit-log");
    cr_assert(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("HCQ_DEBUG", "2", 1);
    base_env_reload();
    double w[15], b[3], x[20];
    hcq_tensor *tw = tx_rand(HCQ_F32, TX_SHAPE(5, 3), -1, 1, 1, w), *tb = tx_rand(HCQ_F32, TX_SHAPE(3), -1, 1, 2, b);
    hcq_jit *j = hcq_jit_create(tx_ctx, mlp_layer, NULL);
    hcq_status s = j ? HCQ_OK : hcq_error_status();
    for (int run = 0; run < 3 && !s; run++) {
        hcq_tensor *in[3] = {tx_rand(HCQ_F32, TX_SHAPE(4, 5), -1, 1, 7, x), tw, tb}, *out[2];
        s = hcq_jit_run(j, in, 3, out, 2);
    }
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
    cr_assert(strstr(text, ": kernel ") && strstr(text, " GB/s ") && strstr(text, " GFLOP/s"), "%s", text);
    cr_assert(strstr(text, "jit replay: "), "%s", text);
    T_OK(hcq_jit_destroy(j));
}
