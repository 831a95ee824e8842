/* Softmax over the rows of a small matrix from host data, and how many
 * kernels it takes (max, sum of exp, division: three).
 *   build: make examples        run: build/examples/softmax [DEVICE] */
#include <hcq/hcq.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    hcq_device *dev = hcq_device_open(argc > 1 ? argv[1] : NULL);
    hcq_ctx *ctx = dev ? hcq_ctx_create(dev) : NULL;
    if (!ctx) return fprintf(stderr, "softmax: %s\n", hcq_error_message()), 1;

    const float logits[2][4] = {{1, 2, 3, 4}, {-1, 0, 1000, 1}};
    hcq_tensor *x = hcq_from_data(ctx, HCQ_F32, HCQ_SHAPE(2, 4), logits);
    hcq_tensor *p = hcq_softmax(x, -1);           /* lazy: nothing has run yet */
    hcq_tensor *lp = hcq_log_softmax(x, -1);

    hcq_ctx_stats before, after;
    hcq_ctx_get_stats(ctx, &before);
    float out[2][4], lout[2][4];
    if (hcq_tensor_read(p, out, sizeof out) || hcq_tensor_read(lp, lout, sizeof lout)) /* realizes, then copies */
        return fprintf(stderr, "softmax: %s\n", hcq_error_message()), 1;
    hcq_ctx_get_stats(ctx, &after);

    for (int i = 0; i < 2; i++) {
        printf("row %d: softmax", i);
        for (int j = 0; j < 4; j++) printf(" %.4f", out[i][j]);
        printf("   log_softmax");
        for (int j = 0; j < 4; j++) printf(" %.3f", lout[i][j]);
        printf("\n");
    }
    printf("%llu kernels for softmax and log_softmax\n", (unsigned long long)(after.kernels - before.kernels));
    hcq_ctx_destroy(ctx);
    return hcq_device_close(dev);
}
