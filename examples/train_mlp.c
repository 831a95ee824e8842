/* Fashion-MNIST with a two-layer MLP (784-256-10, relu), Adam, batches of
 * 128: each training step (forward, backward, Adam's update of the
 * parameters in place) is captured once by the JIT and replayed as one
 * graph. Prints loss, test accuracy and samples/s per epoch.
 *   build: make examples
 *   run:   build/examples/train_mlp [DEVICE] [--epochs 2] [--train N] [--test N] [--eager] ...
 *          (fashion.h lists the options) */
#include "fashion.h"

typedef struct mlp {
    hcq_tensor *w1, *b1, *w2, *b2;
} mlp;

static hcq_tensor *forward(fm_model *m, hcq_tensor *x)
{
    mlp *n = m->self;
    hcq_tensor *h = hcq_relu(hcq_linear(hcq_flatten(x, 1, -1), n->w1, n->b1));
    return hcq_linear(h, n->w2, n->b2);
}

int main(int argc, char **argv)
{
    fm_opts o = {.epochs = 2, .batch = 128, .lr = 1e-3, .seed = 1};
    if (fm_parse(argc, argv, &o)) return 1;
    hcq_device *dev = hcq_device_open(o.device);
    hcq_ctx *ctx = dev ? hcq_ctx_create(dev) : NULL;
    if (!ctx) return fm_fail("train_mlp");
    hcq_ctx_seed(ctx, o.seed);

    /* torch's default for linear layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    hcq_params *p = hcq_params_create(ctx);
    mlp net = {
        .w1 = hcq_param(p, "fc1.weight", HCQ_INIT_UNIFORM, HCQ_SHAPE(256, 784), -1 / 28.0, 1 / 28.0),
        .b1 = hcq_param(p, "fc1.bias", HCQ_INIT_UNIFORM, HCQ_SHAPE(256), -1 / 28.0, 1 / 28.0),
        .w2 = hcq_param(p, "fc2.weight", HCQ_INIT_UNIFORM, HCQ_SHAPE(10, 256), -1 / 16.0, 1 / 16.0),
        .b2 = hcq_param(p, "fc2.bias", HCQ_INIT_UNIFORM, HCQ_SHAPE(10), -1 / 16.0, 1 / 16.0),
    };
    fm_model m = {.name = "train_mlp", .p = p, .opt = hcq_adam(p, o.lr, 0.9, 0.999, 1e-8, 0), .forward = forward, .self = &net};
    if (!net.w1 || !net.b1 || !net.w2 || !net.b2 || !m.opt) return fm_fail("train_mlp: the model");

    int rc = fm_run(ctx, &m, &o);
    hcq_optim_destroy(m.opt);
    hcq_params_destroy(p);
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return rc;
}
