#include "tools/tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* hcq demo's training part: an MLP learns Fashion-MNIST on the device,
 * each step (forward, backward, Adam's update in place) captured once by
 * the JIT and replayed. The running loss is printed as it falls, then the
 * test accuracy. On the CPU device: 784-128-10 over the whole training set
 * for 2 epochs (well under a minute on the 2-core VM); on interpreted
 * kernels (mock GPUs, HCQ_CPU_TARGET=ir) or with --quick: 784-32-10 on the
 * first 2048 images, 16 steps. It fails when the loss does not fall or the accuracy
 * stays near chance; it is skipped when the data set is not installed. */

#define FASHION "/usr/share/datasets/fashion-mnist"

typedef struct dt_model {
    hcq_tensor *w1, *b1, *w2, *b2;
    hcq_optim *opt;
} dt_model;

static hcq_tensor *dt_forward(dt_model *m, hcq_tensor *x)
{
    return hcq_linear(hcq_relu(hcq_linear(hcq_flatten(x, 1, -1), m->w1, m->b1)), m->w2, m->b2);
}

static hcq_status dt_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    dt_model *m = user;
    hcq_tensor *loss = hcq_cross_entropy(dt_forward(m, in[0]), in[1]);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(m->opt, &loss, 1);
    out[0] = loss;
    return s;
}

static int dt_fail(const char *what)
{
    tool_fail(what);
    return 1;
}

/* inference: the predicted classes of a batch of any size */
static hcq_status dt_predict(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    out[0] = hcq_argmax(dt_forward(user, in[0]), -1, false);
    return out[0] ? HCQ_OK : hcq_error_status();
}

/* One JIT serves batches of 8, 32 and 100 test images: its batch dim is a
 * variable (hcq_jit_dim), so it captures once and compiles each kernel
 * once; the predictions must equal the eager forward pass's. */
static int dt_variable_batch(hcq_ctx *ctx, dt_model *m, hcq_tensor *images)
{
    static const int64_t sizes[] = {8, 32, 100};
    hcq_jit *j = hcq_jit_create(ctx, dt_predict, m);
    if (!j || hcq_jit_dim(j, 0, 0, "batch", 1, 512)) {
        hcq_jit_destroy(j);
        return dt_fail("variable batch: the JIT");
    }
    bool prev = hcq_set_grad_enabled(false), same = true;
    uint64_t captures = 0, compiles = 0;
    int rc = 0;
    for (size_t r = 0; r < sizeof sizes / sizeof *sizes && !rc; r++) {
        size_t mark = hcq_ctx_mark(ctx);
        int64_t b = sizes[r];
        hcq_tensor *x = hcq_contiguous(hcq_slice(images, 0, 0, b, 1)), *pred = NULL;
        int32_t got[100], want[100];
        hcq_ctx_stats s0, s1;
        if (hcq_realize(x) || hcq_ctx_get_stats(ctx, &s0) || hcq_jit_run(j, &x, 1, &pred, 1) || hcq_ctx_get_stats(ctx, &s1) ||
            hcq_tensor_read(pred, got, (size_t)b * 4) ||
            hcq_tensor_read(hcq_argmax(dt_forward(m, x), -1, false), want, (size_t)b * 4))
            rc = dt_fail("variable batch");
        captures = hcq_jit_capture_count(j);
        compiles += s1.programs - s0.programs;
        same = same && !rc && !memcmp(got, want, (size_t)b * 4);
        hcq_ctx_release(ctx, mark);
    }
    hcq_set_grad_enabled(prev);
    if (!rc) {
        uint32_t k = hcq_jit_kernel_count(j);
        bool ok = captures == 1 && compiles <= k && same;
        printf("    variable batch (8, 32, 100) through the JIT: %llu capture%s, %llu compiles for %u kernels; predictions %s eager\n",
               (unsigned long long)captures, captures == 1 ? "" : "s", (unsigned long long)compiles, k, same ? "equal" : "DIFFER from");
        if (!ok) rc = dt_fail("variable batch: one capture, a compile per kernel at most, the eager predictions");
    }
    hcq_jit_destroy(j);
    return rc;
}

int demo_train(hcq_device *dev, bool quick)
{
    if (access(FASHION "/t10k-labels-idx1-ubyte.gz", R_OK)) {
        printf("training: skipped: dataset-fashion-mnist is not installed (scripts/deps.sh installs it)\n");
        return 0;
    }
    const hcq_device_props *pr = hcq_device_get_props(dev);
    bool interp = quick || pr->is_mock || !strcmp(pr->target, "ir");
    int64_t ntrain = interp ? 2048 : 60000, ntest = interp ? 500 : 10000, hidden = interp ? 32 : 128;
    int epochs = interp ? 1 : 2;
    hcq_idx x, y, tx, ty;
    if (hcq_idx_read(FASHION "/train-images-idx3-ubyte.gz", &x) || hcq_idx_read(FASHION "/train-labels-idx1-ubyte.gz", &y) ||
        hcq_idx_read(FASHION "/t10k-images-idx3-ubyte.gz", &tx) || hcq_idx_read(FASHION "/t10k-labels-idx1-ubyte.gz", &ty))
        return dt_fail("reading Fashion-MNIST");
    x.shape[0] = y.shape[0] = ntrain;
    tx.shape[0] = ty.shape[0] = ntest;
    hcq_ctx *ctx = hcq_ctx_create(dev);
    if (!ctx) return dt_fail("training: a context");
    hcq_ctx_seed(ctx, 1);
    hcq_params *p = hcq_params_create(ctx);
    dt_model m = {
        .w1 = hcq_param(p, "fc1.weight", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(hidden, 784), 0, 0),
        .b1 = hcq_param(p, "fc1.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(hidden), 0, 0),
        .w2 = hcq_param(p, "fc2.weight", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(10, hidden), 0, 0),
        .b2 = hcq_param(p, "fc2.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(10), 0, 0),
    };
    m.opt = hcq_adam(p, interp ? 5e-3 : 1e-3, 0.9, 0.999, 1e-8, 0);
    hcq_batches *train = hcq_batches_create(ctx, &x, &y, 128, 1.0 / 255, 1, false);
    hcq_batches *test = hcq_batches_create(ctx, &tx, &ty, interp ? ntest : 1000, 1.0 / 255, 1, false);
    hcq_jit *jit = hcq_jit_create(ctx, dt_step, &m);
    int rc = 0;
    if (!m.w1 || !m.b1 || !m.w2 || !m.b2 || !m.opt || !train || !test || !jit) rc = dt_fail("training: the model");
    int64_t steps = hcq_batches_count(train), every = steps / 4 > 0 ? steps / 4 : 1, seen = 0;
    printf("training: an MLP (784-%lld-10, Adam) on %lld Fashion-MNIST images, %d epoch%s, batches of 128, one JIT'd step\n",
           (long long)hidden, (long long)ntrain, epochs, epochs > 1 ? "s" : "");
    double first = -1, last = -1, sum = 0, acc = 0;
    uint64_t t0 = hcq_now_ns();
    for (int e = 0; e < epochs && !rc; e++) {
        hcq_batches_shuffle(train, (uint64_t)e);
        for (int64_t i = 0; i < steps && !rc; i++) {
            size_t mark = hcq_ctx_mark(ctx);
            hcq_tensor *bx, *by, *loss;
            double v = 0;
            if (hcq_batches_get(train, i, &bx, &by) || hcq_jit_run(jit, (hcq_tensor *[]){bx, by}, 2, &loss, 1) ||
                hcq_tensor_item(loss, &v))
                rc = dt_fail("training step");
            hcq_ctx_release(ctx, mark);
            sum += v;
            if (++seen % every == 0 || i == steps - 1) {
                double avg = sum / (double)(seen % every ? seen % every : every);
                if (first < 0) first = avg;
                last = avg;
                printf("    epoch %d, step %4lld: loss %.4f\n", e + 1, (long long)(i + 1), avg);
                sum = 0;
                seen = 0;
            }
        }
    }
    double sec = (double)(hcq_now_ns() - t0) * 1e-9;
    int64_t correct = 0;
    bool prev = hcq_set_grad_enabled(false);
    for (int64_t i = 0; i < hcq_batches_count(test) && !rc; i++) {
        size_t mark = hcq_ctx_mark(ctx);
        hcq_tensor *bx, *by;
        double c = 0;
        if (hcq_batches_get(test, i, &bx, &by) ||
            hcq_tensor_item(hcq_sum(hcq_eq(hcq_argmax(dt_forward(&m, bx), -1, false), by), HCQ_ALL_AXES, false), &c))
            rc = dt_fail("evaluating");
        correct += (int64_t)c;
        hcq_ctx_release(ctx, mark);
    }
    hcq_set_grad_enabled(prev);
    if (!rc) {
        acc = 100.0 * (double)correct / (double)ntest;
        printf("    test accuracy %.2f %% on %lld images; %.0f samples/s training, %u kernels per step\n", acc,
               (long long)ntest, (double)(epochs * steps * 128) / sec, hcq_jit_kernel_count(jit));
        double floor = interp ? 50.0 : 80.0;
        printf("    [%s] the loss fell (%.3f -> %.3f) and the accuracy is above %.0f %%\n",
               last < 0.7 * first && acc > floor ? "ok" : "FAIL", first, last, floor);
        if (!(last < 0.7 * first && acc > floor)) rc = 1;
    }
    if (!rc) {
        hcq_tensor *bx, *by;
        size_t mark = hcq_ctx_mark(ctx);
        rc = hcq_batches_get(test, 0, &bx, &by) ? dt_fail("variable batch: test images") : dt_variable_batch(ctx, &m, bx);
        hcq_ctx_release(ctx, mark);
    }
    hcq_jit_destroy(jit);
    hcq_batches_destroy(train);
    hcq_batches_destroy(test);
    hcq_optim_destroy(m.opt);
    hcq_params_destroy(p);
    if (hcq_ctx_destroy(ctx)) rc = dt_fail("training: destroying the context");
    hcq_idx_free(&x);
    hcq_idx_free(&y);
    hcq_idx_free(&tx);
    hcq_idx_free(&ty);
    return rc;
}
