#include "tools/tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* hcq demo: the tensor layer on the default device. A matmul, checked
 * against C loops and against the same tensor program on the CPU device,
 * and a small MLP forward pass (three layers, relu, softmax) checked against
 * the CPU device, run eagerly and through the JIT, with timings. Inputs and
 * weights come from the counter-based generator with one seed, so both
 * devices compute on identical data. Sizes shrink on devices that run
 * kernels on the interpreter (mock GPUs, HCQ_CPU_TARGET=ir). */

typedef struct side {
    hcq_device *dev;
    hcq_ctx *ctx;
} side;

typedef struct mlp_dims {
    int64_t batch, in, hidden, out;
} mlp_dims;

static int failures;

static int fail(const char *what)
{
    failures++;
    return tool_fail(what);
}

static double ms_since(uint64_t t0) { return (double)(hcq_now_ns() - t0) / 1e6; }

/* uniform weights in [-s, s) from the context's generator */
static hcq_tensor *uniform(hcq_ctx *ctx, int64_t r, int64_t c, double s)
{
    return hcq_mul_s(hcq_sub_s(hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(r, c)), 0.5), 2 * s);
}

/* the model's tensors, created identically on any device */
typedef struct model {
    hcq_tensor *x, *w1, *b1, *w2, *b2, *w3, *b3;
} model;

static model make_model(hcq_ctx *ctx, const mlp_dims *d)
{
    hcq_ctx_seed(ctx, 2024);
    model m;
    m.x = uniform(ctx, d->batch, d->in, 1.0);
    m.w1 = uniform(ctx, d->hidden, d->in, 1.0 / sqrt((double)d->in));
    m.b1 = uniform(ctx, 1, d->hidden, 0.1);
    m.w2 = uniform(ctx, d->hidden, d->hidden, 1.0 / sqrt((double)d->hidden));
    m.b2 = uniform(ctx, 1, d->hidden, 0.1);
    m.w3 = uniform(ctx, d->out, d->hidden, 1.0 / sqrt((double)d->hidden));
    m.b3 = uniform(ctx, 1, d->out, 0.1);
    hcq_tensor *all[7] = {m.x, m.w1, m.b1, m.w2, m.b2, m.w3, m.b3};
    if (hcq_realize_all(all, 7)) fail("creating the model");
    return m;
}

static hcq_tensor *forward(hcq_tensor *const *p)
{
    hcq_tensor *h = hcq_relu(hcq_linear(p[0], p[1], p[2]));
    h = hcq_relu(hcq_linear(h, p[3], p[4]));
    return hcq_softmax(hcq_linear(h, p[5], p[6]), -1);
}

static hcq_status jit_forward(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = forward(in);
    return out[0] ? HCQ_OK : hcq_error_status();
}

static float *read_all(hcq_tensor *t)
{
    int64_t n = hcq_tensor_numel(t);
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v || hcq_tensor_read(t, v, (size_t)n * sizeof *v)) {
        fail("reading a result");
        free(v);
        return NULL;
    }
    return v;
}

static double max_diff(const float *a, const float *b, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs((double)a[i] - (double)b[i]));
    return e;
}

static void verdict(double err, double tol)
{
    printf("   max error %.3g (tolerance %.3g)  %s\n", err, tol, err <= tol ? "ok" : "WRONG");
    if (!(err <= tol)) failures++;
}

static void run_matmul(side *dv, side *ref, int64_t n)
{
    hcq_tensor *a[2], *b[2], *c[2];
    side *s[2] = {dv, ref};
    for (int i = 0; i < 2; i++) {
        hcq_ctx_seed(s[i]->ctx, 7);
        a[i] = uniform(s[i]->ctx, n, n, 1.0);
        b[i] = uniform(s[i]->ctx, n, n, 1.0);
        hcq_tensor *in[2] = {a[i], b[i]};
        if (hcq_realize_all(in, 2)) fail("matmul inputs");
    }
    c[0] = hcq_matmul(a[0], b[0]);
    if (hcq_realize(c[0]) || hcq_device_synchronize(dv->dev)) fail("matmul (first run, compiles)");
    double best = 1e30;
    for (int r = 0; r < 3; r++) { /* warm runs: the kernel comes from the context's cache */
        size_t m = hcq_ctx_mark(dv->ctx);
        hcq_tensor *t = hcq_matmul(a[0], b[0]);
        uint64_t t0 = hcq_now_ns();
        if (hcq_realize(t) || hcq_device_synchronize(dv->dev)) fail("matmul");
        best = fmin(best, ms_since(t0));
        hcq_ctx_release(dv->ctx, m);
    }
    c[1] = hcq_matmul(a[1], b[1]);
    float *got = read_all(c[0]), *want = read_all(c[1]), *ha = read_all(a[1]), *hb = read_all(b[1]);
    if (!got || !want || !ha || !hb) return;
    double err_c = 0; /* against C loops, on a sample of rows */
    for (int64_t i = 0; i < n; i += n > 64 ? 7 : 1)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t k = 0; k < n; k++) acc += (double)ha[i * n + k] * hb[k * n + j];
            err_c = fmax(err_c, fabs(acc - got[i * n + j]));
        }
    printf("  %-40s %9.3f ms  %8.2f GFLOP/s\n", "matmul", best, 2.0 * (double)n * n * n / (best * 1e-3) * 1e-9);
    printf("    %lld x %lld x %lld f32 vs C loops:", (long long)n, (long long)n, (long long)n);
    verdict(err_c, 1e-5 * n);
    printf("    vs the CPU device:                 ");
    verdict(max_diff(got, want, n * n), 1e-5 * n);
    free(got), free(want), free(ha), free(hb);
}

static void run_mlp(side *dv, side *ref, const mlp_dims *d)
{
    model m[2] = {make_model(dv->ctx, d), make_model(ref->ctx, d)};
    hcq_tensor *p0[7] = {m[0].x, m[0].w1, m[0].b1, m[0].w2, m[0].b2, m[0].w3, m[0].b3};
    hcq_tensor *p1[7] = {m[1].x, m[1].w1, m[1].b1, m[1].w2, m[1].b2, m[1].w3, m[1].b3};
    hcq_ctx_stats s0, s1;
    hcq_ctx_get_stats(dv->ctx, &s0);
    uint64_t t0 = hcq_now_ns();
    hcq_tensor *y = forward(p0);
    if (hcq_realize(y) || hcq_device_synchronize(dv->dev)) fail("MLP forward");
    double first = ms_since(t0);
    hcq_ctx_get_stats(dv->ctx, &s1);
    double eager = 1e30;
    for (int r = 0; r < 3; r++) {
        size_t mk = hcq_ctx_mark(dv->ctx);
        t0 = hcq_now_ns();
        hcq_tensor *t = forward(p0);
        if (hcq_realize(t) || hcq_device_synchronize(dv->dev)) fail("MLP forward");
        eager = fmin(eager, ms_since(t0));
        hcq_ctx_release(dv->ctx, mk);
    }
    /* the JIT: run, capture, then replays with the same weights */
    hcq_jit *j = hcq_jit_create(dv->ctx, jit_forward, NULL);
    double replay = 1e30;
    hcq_tensor *jy = NULL;
    for (int r = 0; j && r < 5; r++) {
        t0 = hcq_now_ns();
        if (hcq_jit_run(j, p0, 7, &jy, 1) || hcq_device_synchronize(dv->dev)) {
            fail("MLP through the JIT");
            break;
        }
        if (r >= 2) replay = fmin(replay, ms_since(t0));
    }
    char what[96];
    snprintf(what, sizeof what, "MLP %lldx%lld -> %lld -> %lld -> %lld", (long long)d->batch, (long long)d->in,
             (long long)d->hidden, (long long)d->hidden, (long long)d->out);
    printf("  %-40s %9.3f ms  (%llu kernels; first run %.1f ms with %llu programs built)\n", what, eager,
           (unsigned long long)(s1.kernels - s0.kernels), first, (unsigned long long)(s1.programs - s0.programs));
    printf("  %-40s %9.3f ms  (%u kernels in one graph)\n", "  the same through the JIT (replay)", replay,
           hcq_jit_kernel_count(j));
    float *got = read_all(y), *want = read_all(forward(p1)), *jit = jy ? read_all(jy) : NULL;
    if (got && want) {
        int64_t n = d->batch * d->out;
        printf("    probabilities vs the CPU device:   ");
        verdict(max_diff(got, want, n), 1e-5);
        if (jit) {
            printf("    JIT vs eager:                      ");
            verdict(max_diff(jit, got, n), 0);
        }
        double rowsum = 0;
        int best = 0;
        for (int64_t k = 0; k < d->out; k++) {
            rowsum += got[k];
            if (got[k] > got[best]) best = (int)k;
        }
        printf("    the first row's probabilities sum to %.6f; it predicts class %d\n", rowsum, best);
    }
    free(got), free(want), free(jit);
    hcq_jit_destroy(j);
}

int tool_demo(int argc, char **argv)
{
    if (tool_has_flag(argc, argv, "--help")) {
        printf("usage: hcq demo [DEVICE] [--quick]\n\nRuns a matmul and a small MLP forward pass with the tensor layer on DEVICE\n"
               "(default: $HCQ_DEVICE, else the best device present), checks them against C loops\nand against the "
               "CPU device, and prints timings; then trains an MLP on Fashion-MNIST\n(tools/demo_train.c; --quick: "
               "on 2048 images only). HCQ_DEBUG=2 also prints every kernel.\n");
        return 0;
    }
    side dv = {0}, ref = {0};
    dv.dev = hcq_device_open(argc > 1 && argv[1][0] != '-' ? argv[1] : NULL);
    if (!dv.dev) return tool_fail("opening the device");
    const hcq_device_props *pr = hcq_device_get_props(dv.dev);
    bool cpu = !strcmp(pr->kind, "CPU");
    ref.dev = cpu ? dv.dev : hcq_device_open("CPU");
    if (!ref.dev) return tool_fail("opening the CPU device");
    dv.ctx = hcq_ctx_create(dv.dev);
    ref.ctx = hcq_ctx_create(ref.dev);
    if (!dv.ctx || !ref.ctx) return tool_fail("creating tensor contexts");
    /* interpreted kernels (mock GPUs, the ir target) are slow: small sizes */
    bool interp = pr->is_mock || !strcmp(pr->target, "ir");
    printf("hcq demo on %s: %s (target %s)%s; reference: the CPU device\n", pr->id, pr->name, pr->target,
           pr->is_mock ? " [mock GPU]" : "");
    run_matmul(&dv, &ref, interp ? 48 : 512);
    mlp_dims d = interp ? (mlp_dims){8, 32, 48, 10} : (mlp_dims){64, 784, 512, 10};
    run_mlp(&dv, &ref, &d);
    if (demo_train(dv.dev, tool_has_flag(argc, argv, "--quick"))) failures++;
    if (hcq_ctx_destroy(dv.ctx) || hcq_ctx_destroy(ref.ctx)) fail("destroying the contexts");
    if (!cpu && hcq_device_close(ref.dev)) fail("closing the CPU device");
    if (hcq_device_close(dv.dev)) fail("closing the device");
    printf("%s\n", failures ? "demo FAILED" : "all results match the references");
    return failures ? 1 : 0;
}
