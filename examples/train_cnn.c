/* Fashion-MNIST with a small CNN: two convolutions (3x3, 16 and 32
 * channels, each with batch norm, relu and 2x2 max pooling), then
 * 1568-128-10, Adam (lr 2e-3), batches of 64. Each training step (forward,
 * backward, the update in place, batch norm's running statistics) is
 * captured once by the JIT and replayed as one graph; evaluation runs in
 * eval mode (the running statistics). Prints loss, test accuracy and
 * samples/s per epoch.
 *   build: make examples
 *   run:   build/examples/train_cnn [DEVICE] [--epochs 2] [--train N] [--test N] [--eager] ...
 *          (fashion.h lists the options) */
#include "fashion.h"

#include <math.h>

typedef struct cnn {
    hcq_tensor *c1w, *c1b, *c2w, *c2b, *f1w, *f1b, *f2w, *f2b;
} cnn;

static hcq_tensor *forward(fm_model *m, hcq_tensor *x)
{
    cnn *n = m->self;
    const hcq_conv2d_opts same = {.padding = {1, 1}};
    const hcq_pool2d_opts pool = {.kernel = {2, 2}};
    hcq_tensor *h = hcq_reshape(x, HCQ_SHAPE(-1, 1, 28, 28));
    h = hcq_batchnorm(m->p, "bn1", hcq_conv2d(h, n->c1w, n->c1b, &same), 0.1, 1e-5);
    h = hcq_max_pool2d(hcq_relu(h), &pool); /* [N, 16, 14, 14] */
    h = hcq_batchnorm(m->p, "bn2", hcq_conv2d(h, n->c2w, n->c2b, &same), 0.1, 1e-5);
    h = hcq_max_pool2d(hcq_relu(h), &pool); /* [N, 32, 7, 7] */
    h = hcq_relu(hcq_linear(hcq_flatten(h, 1, -1), n->f1w, n->f1b));
    return hcq_linear(h, n->f2w, n->f2b);
}

/* torch's default for conv and linear layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
static hcq_tensor *layer(hcq_params *p, const char *name, const int64_t *shape, int nd, double fan_in)
{
    double c = 1 / sqrt(fan_in);
    return hcq_param(p, name, HCQ_INIT_UNIFORM, shape, nd, -c, c);
}

int main(int argc, char **argv)
{
    fm_opts o = {.epochs = 2, .batch = 64, .lr = 2e-3, .seed = 1};
    if (fm_parse(argc, argv, &o)) return 1;
    hcq_device *dev = hcq_device_open(o.device);
    hcq_ctx *ctx = dev ? hcq_ctx_create(dev) : NULL;
    if (!ctx) return fm_fail("train_cnn");
    hcq_ctx_seed(ctx, o.seed);

    hcq_params *p = hcq_params_create(ctx);
    cnn net = {
        .c1w = layer(p, "conv1.weight", HCQ_SHAPE(16, 1, 3, 3), 9),
        .c1b = layer(p, "conv1.bias", HCQ_SHAPE(16), 9),
        .c2w = layer(p, "conv2.weight", HCQ_SHAPE(32, 16, 3, 3), 144),
        .c2b = layer(p, "conv2.bias", HCQ_SHAPE(32), 144),
        .f1w = layer(p, "fc1.weight", HCQ_SHAPE(128, 1568), 1568),
        .f1b = layer(p, "fc1.bias", HCQ_SHAPE(128), 1568),
        .f2w = layer(p, "fc2.weight", HCQ_SHAPE(10, 128), 128),
        .f2b = layer(p, "fc2.bias", HCQ_SHAPE(10), 128),
    };
    if (hcq_batchnorm_add(p, "bn1", 16) || hcq_batchnorm_add(p, "bn2", 32)) return fm_fail("train_cnn: batch norm");
    fm_model m = {.name = "train_cnn", .p = p, .opt = hcq_adam(p, o.lr, 0.9, 0.999, 1e-8, 0), .forward = forward, .self = &net};
    hcq_tensor *all[] = {net.c1w, net.c1b, net.c2w, net.c2b, net.f1w, net.f1b, net.f2w, net.f2b};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!all[i]) return fm_fail("train_cnn: the model");
    if (!m.opt) return fm_fail("train_cnn: the optimizer");

    int rc = fm_run(ctx, &m, &o);
    hcq_optim_destroy(m.opt);
    hcq_params_destroy(p);
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return rc;
}
