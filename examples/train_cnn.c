/* Fashion-MNIST with a small CNN: two convolutions (3x3, 16 and 32
 * channels, each with batch norm, relu and 2x2 max pooling), then
 * 1568-128-10, Adam (lr 2e-3), batches of 64. Each training step (forward,
 * backward, the update in place, batch norm's running statistics) is
 * captured once by the JIT and replayed as one graph; evaluation runs in
 * eval mode (the running statistics). Prints loss, test accuracy and
 * samples/s per epoch. Data-parallel (a device list, mpirun: fashion.h),
 * batch norm normalizes over each device's part of the batch and its
 * running statistics are averaged every step (nn.h, hcq_dp), so the
 * losses differ a little from one device's.
 *   build: make examples
 *   run:   build/examples/train_cnn [DEVICE] [--epochs 2] [--train N] [--test N] [--eager] ...
 *          (fashion.h lists the options) */
#include "fashion.h"

#include <math.h>

static hcq_tensor *forward(fm_replica *r, hcq_tensor *x)
{
    hcq_tensor **w = r->w;
    const hcq_conv2d_opts same = {.padding = {1, 1}};
    const hcq_pool2d_opts pool = {.kernel = {2, 2}};
    hcq_tensor *h = hcq_reshape(x, HCQ_SHAPE(-1, 1, 28, 28));
    h = hcq_batchnorm(r->p, "bn1", hcq_conv2d(h, w[0], w[1], &same), 0.1, 1e-5);
    h = hcq_max_pool2d(hcq_relu(h), &pool); /* [N, 16, 14, 14] */
    h = hcq_batchnorm(r->p, "bn2", hcq_conv2d(h, w[2], w[3], &same), 0.1, 1e-5);
    h = hcq_max_pool2d(hcq_relu(h), &pool); /* [N, 32, 7, 7] */
    h = hcq_relu(hcq_linear(hcq_flatten(h, 1, -1), w[4], w[5]));
    return hcq_linear(h, w[6], w[7]);
}

/* torch's default for conv and linear layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
static hcq_tensor *layer(hcq_params *p, const char *name, const int64_t *shape, int nd, double fan_in)
{
    double c = 1 / sqrt(fan_in);
    return hcq_param(p, name, HCQ_INIT_UNIFORM, shape, nd, -c, c);
}

static int build(fm_replica *r, const fm_opts *o)
{
    hcq_params *p = r->p = hcq_params_create(r->ctx);
    r->w[0] = layer(p, "conv1.weight", HCQ_SHAPE(16, 1, 3, 3), 9);
    r->w[1] = layer(p, "conv1.bias", HCQ_SHAPE(16), 9);
    r->w[2] = layer(p, "conv2.weight", HCQ_SHAPE(32, 16, 3, 3), 144);
    r->w[3] = layer(p, "conv2.bias", HCQ_SHAPE(32), 144);
    r->w[4] = layer(p, "fc1.weight", HCQ_SHAPE(128, 1568), 1568);
    r->w[5] = layer(p, "fc1.bias", HCQ_SHAPE(128), 1568);
    r->w[6] = layer(p, "fc2.weight", HCQ_SHAPE(10, 128), 128);
    r->w[7] = layer(p, "fc2.bias", HCQ_SHAPE(10), 128);
    for (int i = 0; i < 8; i++)
        if (!r->w[i]) return fm_fail("train_cnn: the model");
    if (hcq_batchnorm_add(p, "bn1", 16) || hcq_batchnorm_add(p, "bn2", 32)) return fm_fail("train_cnn: batch norm");
    if (!(r->opt = hcq_adam(p, o->lr, 0.9, 0.999, 1e-8, 0))) return fm_fail("train_cnn: the optimizer");
    return 0;
}

int main(int argc, char **argv)
{
    fm_model m = {.name = "train_cnn", .build = build, .forward = forward};
    return fm_main(argc, argv, &m, (fm_opts){.epochs = 2, .batch = 64, .lr = 2e-3, .seed = 1});
}
