/* A matrix product with the tensor layer: random operands from the seeded
 * generator, one fused kernel, GFLOP/s, and a spot check against C.
 *   build: make examples        run: build/examples/matmul [DEVICE] [N]
 * DEVICE as for the other examples (default: $HCQ_DEVICE, else the best
 * present); N the matrix size (default 512). */
#include <hcq/hcq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what)
{
    fprintf(stderr, "matmul: %s: %s\n", what, hcq_error_message());
    return 1;
}

static int usage(const char *why)
{
    fprintf(stderr, "matmul: %s\nusage: matmul [DEVICE] [N]   (DEVICE: CPU, NV:0, AMD:0, ...; N: 1 to 8192, "
                    "default 512)\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 3) return usage("too many arguments");
    const char *name = argc > 1 && argv[1][0] ? argv[1] : NULL;
    if (name && name[0] >= '0' && name[0] <= '9') return usage("the device comes first, then the size");
    int64_t n = 512;
    if (argc > 2) {
        char *end;
        long long v = strtoll(argv[2], &end, 10);
        if (!argv[2][0] || *end || v < 1 || v > 8192) return usage("N must be a whole number from 1 to 8192");
        n = v;
    }
    hcq_device *dev = hcq_device_open(name);
    if (!dev) return fail("opening a device");
    hcq_ctx *ctx = hcq_ctx_create(dev); /* owns every tensor below */
    if (!ctx) return fail("creating a context");

    hcq_ctx_seed(ctx, 42);
    hcq_tensor *a = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(n, n)), *b = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(n, n));
    hcq_tensor *ab[2] = {a, b};
    if (hcq_realize_all(ab, 2)) return fail("making the operands");

    double best = 1e30;
    hcq_tensor *c = NULL;
    for (int run = 0; run < 4; run++) { /* the first run compiles; later ones hit the caches */
        size_t mark = hcq_ctx_mark(ctx);
        hcq_tensor *t = hcq_matmul(a, b);
        uint64_t t0 = hcq_now_ns();
        if (hcq_realize(t) || hcq_device_synchronize(dev)) return fail("matmul");
        double s = (double)(hcq_now_ns() - t0) * 1e-9;
        if (s < best) best = s;
        if (run < 3) hcq_ctx_release(ctx, mark); /* frees t */
        else c = t;
    }
    printf("%lld x %lld x %lld f32 on %s: %.3f ms, %.1f GFLOP/s\n", (long long)n, (long long)n, (long long)n,
           hcq_device_get_props(dev)->id, best * 1e3, 2.0 * n * n * n / best * 1e-9);

    /* spot check one row against C */
    float *ha = malloc(n * n * sizeof *ha), *hb = malloc(n * n * sizeof *hb), *hc = malloc(n * n * sizeof *hc);
    if (hcq_tensor_read(a, ha, n * n * 4) || hcq_tensor_read(b, hb, n * n * 4) || hcq_tensor_read(c, hc, n * n * 4))
        return fail("reading back");
    double err = 0;
    int64_t i = n / 2;
    for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += (double)ha[i * n + k] * hb[k * n + j];
        err = fmax(err, fabs(s - hc[i * n + j]));
    }
    printf("row %lld: max error vs C %.3g\n", (long long)i, err);
    free(ha), free(hb), free(hc);
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return err < 1e-5 * n ? 0 : 1;
}
