/* Learning Fashion-MNIST on the device under test, on a subset (the full
 * runs are `make train`): an MLP (784-32-10) and a small CNN (two 3x3
 * convolutions of 8 channels with max pooling, then 392-10), trained with
 * Adam through a JIT'd step (forward, backward, the update in place) from
 * seed 1, then evaluated on test images.
 *
 * Same seed, same result on every device: each step's loss must match the
 * CPU device's (opened in the same process) within 1e-3 relative, and
 * the final loss and test accuracy must match the values the CPU device
 * gave when this test was written (GOLDEN_*) within 3 % relative and 3
 * percentage points; those absorb reductions summed in another order,
 * not a wrong gradient. The loss must also fall. Skipped when
 * dataset-fashion-mnist is not installed. */
#include "compiler/cc.h"
#include "tensortest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(api_train, .init = tx_setup, .fini = tx_teardown, .timeout = 600);

#define DIR "/usr/share/datasets/fashion-mnist"

typedef struct model {
    bool cnn;
    hcq_params *p;
    hcq_optim *o;
    hcq_tensor *w[4];
} model;

static hcq_tensor *forward(model *m, hcq_tensor *x)
{
    if (!m->cnn) return hcq_linear(hcq_relu(hcq_linear(hcq_flatten(x, 1, -1), m->w[0], NULL)), m->w[1], NULL);
    const hcq_conv2d_opts same = {.padding = {1, 1}};
    const hcq_pool2d_opts pool = {.kernel = {2, 2}};
    hcq_tensor *h = hcq_reshape(x, HCQ_SHAPE(-1, 1, 28, 28));
    h = hcq_max_pool2d(hcq_relu(hcq_conv2d(h, m->w[0], NULL, &same)), &pool);
    h = hcq_max_pool2d(hcq_relu(hcq_conv2d(h, m->w[1], m->w[2], &same)), &pool);
    return hcq_linear(hcq_flatten(h, 1, -1), m->w[3], NULL);
}

static hcq_status step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    model *m = user;
    hcq_tensor *loss = hcq_cross_entropy(forward(m, in[0]), in[1]);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(m->o, &loss, 1);
    out[0] = loss;
    return s;
}

static void make(hcq_ctx *ctx, model *m, bool cnn)
{
    memset(m, 0, sizeof *m);
    m->cnn = cnn;
    hcq_ctx_seed(ctx, 1);
    m->p = hcq_params_create(ctx);
    if (!cnn) {
        m->w[0] = hcq_param(m->p, "fc1", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(32, 784), 0, 0);
        m->w[1] = hcq_param(m->p, "fc2", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(10, 32), 0, 0);
    } else {
        m->w[0] = hcq_param(m->p, "conv1", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(8, 1, 3, 3), 0, 0);
        m->w[1] = hcq_param(m->p, "conv2", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(8, 8, 3, 3), 0, 0);
        m->w[2] = hcq_param(m->p, "conv2.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(8), 0, 0);
        m->w[3] = hcq_param(m->p, "fc", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(10, 392), 0, 0);
    }
    m->o = hcq_adam(m->p, cnn ? 3e-3 : 5e-3, 0.9, 0.999, 1e-8, 0);
    cr_assert(m->o, "%s", hcq_error_message());
}

typedef struct run {
    int steps;
    double loss[16];
    double acc;
} run;

/* trains on `ntrain` images in batches of `batch`, evaluates on `ntest` */
static void train(hcq_ctx *ctx, bool cnn, int64_t ntrain, int64_t batch, int64_t ntest, run *r)
{
    hcq_idx x, y, tx, ty;
    T_OK(hcq_idx_read(DIR "/train-images-idx3-ubyte.gz", &x));
    T_OK(hcq_idx_read(DIR "/train-labels-idx1-ubyte.gz", &y));
    T_OK(hcq_idx_read(DIR "/t10k-images-idx3-ubyte.gz", &tx));
    T_OK(hcq_idx_read(DIR "/t10k-labels-idx1-ubyte.gz", &ty));
    x.shape[0] = y.shape[0] = ntrain;
    tx.shape[0] = ty.shape[0] = ntest;
    model m;
    make(ctx, &m, cnn);
    hcq_batches *tb = hcq_batches_create(ctx, &x, &y, batch, 1.0 / 255, 1, false);
    hcq_batches *eb = hcq_batches_create(ctx, &tx, &ty, ntest, 1.0 / 255, 1, false);
    T_NONNULL(tb);
    T_NONNULL(eb);
    T_OK(hcq_batches_shuffle(tb, 0));
    hcq_jit *jit = hcq_jit_create(ctx, step, &m);
    r->steps = (int)hcq_batches_count(tb);
    for (int i = 0; i < r->steps; i++) {
        size_t mark = hcq_ctx_mark(ctx);
        hcq_tensor *bx, *by, *loss;
        T_OK(hcq_batches_get(tb, i, &bx, &by));
        T_OK(hcq_jit_run(jit, (hcq_tensor *[]){bx, by}, 2, &loss, 1));
        T_OK(hcq_tensor_item(loss, &r->loss[i]));
        hcq_ctx_release(ctx, mark);
    }
    size_t mark = hcq_ctx_mark(ctx);
    hcq_params_train(m.p, false);
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *bx, *by;
    T_OK(hcq_batches_get(eb, 0, &bx, &by));
    double correct;
    T_OK(hcq_tensor_item(hcq_sum(hcq_eq(hcq_argmax(forward(&m, bx), -1, false), by), HCQ_ALL_AXES, false), &correct));
    r->acc = 100.0 * correct / (double)ntest;
    hcq_set_grad_enabled(prev);
    hcq_ctx_release(ctx, mark);
    hcq_jit_destroy(jit);
    hcq_batches_destroy(tb);
    hcq_batches_destroy(eb);
    hcq_optim_destroy(m.o);
    hcq_params_destroy(m.p);
    hcq_idx_free(&x);
    hcq_idx_free(&y);
    hcq_idx_free(&tx);
    hcq_idx_free(&ty);
}

static void check(const char *name, bool cnn, int64_t ntrain, int64_t batch, int64_t ntest, double golden_loss,
                  double golden_acc)
{
    if (access(DIR "/t10k-labels-idx1-ubyte.gz", R_OK)) cr_skip_test("dataset-fashion-mnist is not installed (scripts/deps.sh)");
    T_SKIP_LONG_MOCK_RUN_UNDER_TSAN(tx_dev);
    run r;
    train(tx_ctx, cnn, ntrain, batch, ntest, &r);
    int last = r.steps - 1;
    cr_assert(r.loss[last] < 0.8 * r.loss[0], "%s: the loss does not fall: %g -> %g", name, r.loss[0], r.loss[last]);
    printf("%s on %s: loss %.4f -> %.4f, test accuracy %.1f %%\n", name, t_device_name(), r.loss[0], r.loss[last], r.acc);
    /* against the CPU device, step by step: its compiled target needs clang,
     * which a GPU server running the hardware kit may lack (the golden
     * values below, the CPU device's, still hold the run) */
    const cc_clang_info *clang = NULL;
    bool have_clang = cc_clang(&clang) == HCQ_OK;
    hcq_error_clear();
    if (strcmp(t_device_name(), "CPU") != 0 && !have_clang)
        printf("%s on %s: no clang here, so no step-by-step comparison with the CPU device\n", name, t_device_name());
    else if (strcmp(t_device_name(), "CPU") != 0) {
        hcq_device *cpu = hcq_device_open("CPU");
        hcq_ctx *cctx = cpu ? hcq_ctx_create(cpu) : NULL;
        cr_assert(cctx, "the CPU device: %s", hcq_error_message());
        run c;
        train(cctx, cnn, ntrain, batch, ntest, &c);
        for (int i = 0; i < r.steps; i++)
            cr_assert(fabs(r.loss[i] - c.loss[i]) <= 1e-3 * c.loss[i], "%s step %d: loss %.6f, the CPU device's %.6f", name, i,
                      r.loss[i], c.loss[i]);
        cr_assert(fabs(r.acc - c.acc) <= 1.0, "%s: test accuracy %.2f %%, the CPU device's %.2f %%", name, r.acc, c.acc);
        T_OK(hcq_ctx_destroy(cctx));
        T_OK(hcq_device_close(cpu));
    }
    cr_assert(fabs(r.loss[last] - golden_loss) <= 0.03 * golden_loss, "%s: final loss %.4f, written with %.4f", name,
              r.loss[last], golden_loss);
    cr_assert(fabs(r.acc - golden_acc) <= 3.0, "%s: test accuracy %.2f %%, written with %.2f %%", name, r.acc, golden_acc);
}

/* GOLDEN values: the CPU device (cpu target), when this test was written */
Test(api_train, mlp) { check("mlp", false, 2048, 128, 500, 0.8284, 68.8); }
Test(api_train, cnn) { check("cnn", true, 256, 32, 200, 1.9637, 44.5); }
