/* Fashion-MNIST with a two-layer MLP (784-256-10, relu), Adam, batches of
 * 128: each training step (forward, backward, Adam's update of the
 * parameters in place) is captured once by the JIT and replayed as one
 * graph. Prints loss, test accuracy and samples/s per epoch.
 *   build: make examples
 *   run:   build/examples/train_mlp [DEVICE] [--epochs 2] [--train N] [--test N] [--eager] ...
 *          (fashion.h lists the options)
 *   data-parallel: build/examples/train_mlp NV:0,NV:1,NV:2,NV:3 ...; across processes:
 *          mpirun -np 2 build/examples/train_mlp NV:0,NV:1 ... (each rank on its own two) */
#include "fashion.h"

static hcq_tensor *forward(fm_replica *r, hcq_tensor *x)
{
    hcq_tensor *h = hcq_relu(hcq_linear(hcq_flatten(x, 1, -1), r->w[0], r->w[1]));
    return hcq_linear(h, r->w[2], r->w[3]);
}

/* torch's default for linear layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
static int build(fm_replica *r, const fm_opts *o)
{
    hcq_params *p = r->p = hcq_params_create(r->ctx);
    r->w[0] = hcq_param(p, "fc1.weight", HCQ_INIT_UNIFORM, HCQ_SHAPE(256, 784), -1 / 28.0, 1 / 28.0);
    r->w[1] = hcq_param(p, "fc1.bias", HCQ_INIT_UNIFORM, HCQ_SHAPE(256), -1 / 28.0, 1 / 28.0);
    r->w[2] = hcq_param(p, "fc2.weight", HCQ_INIT_UNIFORM, HCQ_SHAPE(10, 256), -1 / 16.0, 1 / 16.0);
    r->w[3] = hcq_param(p, "fc2.bias", HCQ_INIT_UNIFORM, HCQ_SHAPE(10), -1 / 16.0, 1 / 16.0);
    r->opt = hcq_adam(p, o->lr, 0.9, 0.999, 1e-8, 0);
    if (!r->w[0] || !r->w[1] || !r->w[2] || !r->w[3] || !r->opt) return fm_fail("train_mlp: the model");
    return 0;
}

int main(int argc, char **argv)
{
    fm_model m = {.name = "train_mlp", .build = build, .forward = forward};
    return fm_main(argc, argv, &m, (fm_opts){.epochs = 2, .batch = 128, .lr = 1e-3, .seed = 1});
}
