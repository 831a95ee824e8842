/* A two-layer MLP classifier forward pass, run through the JIT: the first
 * call executes, the second captures its kernels into a graph, later
 * batches only replay the graph with the new input.
 *   build: make examples        run: build/examples/mlp [DEVICE] */
#include <hcq/hcq.h>
#include <stdio.h>

enum { BATCH = 32, IN = 64, HIDDEN = 128, CLASSES = 10 };

/* in: x, w1, b1, w2, b2 -> out: the predicted class of each row (i32) */
static hcq_status forward(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    hcq_tensor *h = hcq_gelu(hcq_linear(in[0], in[1], in[2]));
    out[0] = hcq_argmax(hcq_linear(h, in[3], in[4]), -1, false);
    return out[0] ? HCQ_OK : hcq_error_status(); /* a NULL anywhere above ends up here */
}

int main(int argc, char **argv)
{
    hcq_device *dev = hcq_device_open(argc > 1 ? argv[1] : NULL);
    hcq_ctx *ctx = dev ? hcq_ctx_create(dev) : NULL;
    if (!ctx) return fprintf(stderr, "mlp: %s\n", hcq_error_message()), 1;

    hcq_ctx_seed(ctx, 1);
    hcq_tensor *params[5] = {
        NULL,
        hcq_mul_s(hcq_randn(ctx, HCQ_F32, HCQ_SHAPE(HIDDEN, IN)), 0.125), /* [out, in], like torch */
        hcq_zeros(ctx, HCQ_F32, HCQ_SHAPE(HIDDEN)),
        hcq_mul_s(hcq_randn(ctx, HCQ_F32, HCQ_SHAPE(CLASSES, HIDDEN)), 0.09),
        hcq_zeros(ctx, HCQ_F32, HCQ_SHAPE(CLASSES)),
    };
    if (hcq_realize_all(params + 1, 4)) return fprintf(stderr, "mlp: %s\n", hcq_error_message()), 1;

    hcq_jit *jit = hcq_jit_create(ctx, forward, NULL);
    for (int step = 0; step < 5; step++) {
        size_t mark = hcq_ctx_mark(ctx); /* this batch's tensors go at the end of the step */
        params[0] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(BATCH, IN));
        hcq_tensor *pred;
        uint64_t t0 = hcq_now_ns();
        if (hcq_jit_run(jit, params, 5, &pred, 1)) return fprintf(stderr, "mlp: %s\n", hcq_error_message()), 1;
        int32_t cls[BATCH];
        if (hcq_tensor_read(pred, cls, sizeof cls)) return fprintf(stderr, "mlp: %s\n", hcq_error_message()), 1;
        printf("batch %d: %7.3f ms  classes %d %d %d %d ...%s\n", step, (double)(hcq_now_ns() - t0) / 1e6, cls[0], cls[1],
               cls[2], cls[3], step == 1 ? "  (captured)" : step > 1 ? "  (replayed)" : "");
        hcq_ctx_release(ctx, mark);
    }
    printf("%u kernels per replay\n", hcq_jit_kernel_count(jit));
    hcq_ctx_destroy(ctx); /* frees the JIT and every tensor */
    return hcq_device_close(dev);
}
