#include "tools/demo.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* hcq demo: the tensor layer on the default device. A matmul, checked
 * against C loops and against the same tensor program on the CPU device,
 * and a small MLP forward pass (three layers, relu, softmax) checked against
 * the CPU device, run eagerly and through the JIT, with timings. Inputs and
 * weights come from the counter-based generator with one seed, so both
 * devices compute on identical data. Sizes shrink on devices that run
 * kernels on the host (the mock GPUs, executing real binaries' machine
 * code, as their host twins or as kernel IR; HCQ_CPU_TARGET=ir). */

typedef struct mlp_dims {
    int64_t batch, in, hidden, out;
} mlp_dims;

int demo_fail(const char *what) { return tool_fail(what); }

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

static int make_model(hcq_ctx *ctx, const mlp_dims *d, model *out)
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
    if (hcq_realize_all(all, 7)) return demo_fail("creating the model");
    *out = m;
    return 0;
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
        demo_fail("reading a result");
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

int demo_verdict(double err, double tol)
{
    printf("   max error %.3g (tolerance %.3g)  %s\n", err, tol, err <= tol ? "ok" : "WRONG");
    return !(err <= tol);
}

static int run_matmul(demo_run *run, int64_t n)
{
    hcq_tensor *a[2], *b[2], *c[2];
    demo_side *s[2] = {&run->dv, &run->ref};
    for (int i = 0; i < 2; i++) {
        hcq_ctx_seed(s[i]->ctx, 7);
        a[i] = uniform(s[i]->ctx, n, n, 1.0);
        b[i] = uniform(s[i]->ctx, n, n, 1.0);
        hcq_tensor *in[2] = {a[i], b[i]};
        if (hcq_realize_all(in, 2)) return demo_fail(i ? "matmul inputs on the CPU device" : "matmul inputs");
    }
    demo_side *dv = &run->dv;
    c[0] = hcq_matmul(a[0], b[0]);
    if (hcq_realize(c[0]) || hcq_device_synchronize(dv->dev)) return demo_fail("matmul (first run, compiles)");
    double best = INFINITY;
    for (int r = 0; r < 3; r++) { /* warm runs: the kernel comes from the context's cache */
        size_t m = hcq_ctx_mark(dv->ctx);
        hcq_tensor *t = hcq_matmul(a[0], b[0]);
        uint64_t t0 = hcq_now_ns();
        if (hcq_realize(t) || hcq_device_synchronize(dv->dev)) return demo_fail("matmul");
        best = fmin(best, ms_since(t0));
        hcq_ctx_release(dv->ctx, m);
    }
    c[1] = hcq_matmul(a[1], b[1]);
    float *got = read_all(c[0]), *want = got ? read_all(c[1]) : NULL, *ha = want ? read_all(a[1]) : NULL,
          *hb = ha ? read_all(b[1]) : NULL;
    int bad = !got || !want || !ha || !hb;
    if (!bad) {
        double err_c = 0; /* against C loops, on a sample of rows */
        for (int64_t i = 0; i < n; i += n > 64 ? 7 : 1)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t k = 0; k < n; k++) acc += (double)ha[i * n + k] * hb[k * n + j];
                err_c = fmax(err_c, fabs(acc - got[i * n + j]));
            }
        printf("  %-40s %9.3f ms  %8.2f GFLOP/s\n", "matmul", best, 2.0 * (double)n * n * n / (best * 1e-3) * 1e-9);
        printf("    %lld x %lld x %lld f32 vs C loops:", (long long)n, (long long)n, (long long)n);
        bad |= demo_verdict(err_c, 1e-5 * n);
        printf("    vs the CPU device:                 ");
        bad |= demo_verdict(max_diff(got, want, n * n), 1e-5 * n);
    }
    free(got), free(want), free(ha), free(hb);
    return bad;
}

static int run_mlp(demo_run *run, const mlp_dims *d)
{
    demo_side *dv = &run->dv, *ref = &run->ref;
    model m[2];
    if (make_model(dv->ctx, d, &m[0]) || make_model(ref->ctx, d, &m[1])) return 1;
    hcq_tensor *p0[7] = {m[0].x, m[0].w1, m[0].b1, m[0].w2, m[0].b2, m[0].w3, m[0].b3};
    hcq_tensor *p1[7] = {m[1].x, m[1].w1, m[1].b1, m[1].w2, m[1].b2, m[1].w3, m[1].b3};
    hcq_ctx_stats s0, s1;
    hcq_ctx_get_stats(dv->ctx, &s0);
    uint64_t t0 = hcq_now_ns();
    hcq_tensor *y = forward(p0);
    if (hcq_realize(y) || hcq_device_synchronize(dv->dev)) return demo_fail("MLP forward");
    double first = ms_since(t0);
    hcq_ctx_get_stats(dv->ctx, &s1);
    double eager = INFINITY;
    for (int r = 0; r < 3; r++) {
        size_t mk = hcq_ctx_mark(dv->ctx);
        t0 = hcq_now_ns();
        hcq_tensor *t = forward(p0);
        if (hcq_realize(t) || hcq_device_synchronize(dv->dev)) return demo_fail("MLP forward");
        eager = fmin(eager, ms_since(t0));
        hcq_ctx_release(dv->ctx, mk);
    }
    /* the JIT: run, capture, then replays with the same weights */
    hcq_jit *j = hcq_jit_create(dv->ctx, jit_forward, NULL);
    if (!j) return demo_fail("creating the JIT");
    double replay = INFINITY;
    hcq_tensor *jy = NULL;
    for (int r = 0; r < 5; r++) {
        t0 = hcq_now_ns();
        if (hcq_jit_run(j, p0, 7, &jy, 1) || hcq_device_synchronize(dv->dev)) {
            hcq_jit_destroy(j);
            return demo_fail("MLP through the JIT");
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
    hcq_tensor *yref = forward(p1);
    if (!yref || hcq_realize(yref)) {
        hcq_jit_destroy(j);
        return demo_fail("MLP forward on the CPU device");
    }
    float *got = read_all(y), *want = got ? read_all(yref) : NULL, *jit = want ? read_all(jy) : NULL;
    int bad = !got || !want || !jit;
    if (!bad) {
        int64_t n = d->batch * d->out;
        printf("    probabilities vs the CPU device:   ");
        bad |= demo_verdict(max_diff(got, want, n), 1e-5);
        printf("    JIT vs eager:                      ");
        bad |= demo_verdict(max_diff(jit, got, n), 0);
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
    return bad;
}

/* The job, part by part; it stops at the first part that fails. A part
 * in a file of its own is one more line here. */
static bool demo_quick;    /* --quick: the training part on 2048 images only */
static bool demo_no_train; /* --no-train: without the training part */

static int demo_job(demo_run *run)
{
    if (run_matmul(run, run->small ? 48 : 512)) return 1;
    mlp_dims d = run->small ? (mlp_dims){8, 32, 48, 10} : (mlp_dims){64, 784, 512, 10};
    if (run_mlp(run, &d)) return 1;
    if (!demo_no_train && demo_train(run->dv.dev, demo_quick)) return 1; /* tools/demo_train.c */
    return 0;
}

/* Opens the device (and the CPU device for reference), runs the job,
 * closes both. */
static int run_on(const char *name)
{
    demo_run run = {0};
    run.dv.dev = hcq_device_open(name);
    if (!run.dv.dev) return demo_fail("opening the device");
    run.dv.props = hcq_device_get_props(run.dv.dev);
    bool cpu = !strcmp(run.dv.props->kind, "CPU");
    run.ref.dev = cpu ? run.dv.dev : hcq_device_open("CPU");
    int rc = 1;
    if (!run.ref.dev) {
        demo_fail("opening the CPU device");
        goto out;
    }
    run.ref.props = hcq_device_get_props(run.ref.dev);
    run.dv.ctx = hcq_ctx_create(run.dv.dev);
    run.ref.ctx = hcq_ctx_create(run.ref.dev);
    if (!run.dv.ctx || !run.ref.ctx) {
        demo_fail("creating tensor contexts");
        goto out;
    }
    const hcq_device_props *pr = run.dv.props;
    run.small = pr->is_mock || !strcmp(pr->target, "ir");
    if (pr->is_mock)
        printf("hcq demo on %s: %s (target %s) [mock GPU: emulated; kernels run as %s]; reference: the CPU device\n",
               pr->id, pr->name, pr->target, pr->shader[0] ? pr->shader : "kernel IR on the interpreter");
    else
        printf("hcq demo on %s: %s (target %s); reference: the CPU device\n", pr->id, pr->name, pr->target);
    rc = demo_job(&run);
out:
    if (run.dv.ctx && hcq_ctx_destroy(run.dv.ctx) && !rc) rc = demo_fail("destroying the context");
    if (run.ref.ctx && hcq_ctx_destroy(run.ref.ctx) && !rc) rc = demo_fail("destroying the CPU context");
    if (!cpu && run.ref.dev && hcq_device_close(run.ref.dev) && !rc) rc = demo_fail("closing the CPU device");
    if (hcq_device_close(run.dv.dev) && !rc) rc = demo_fail("closing the device");
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq demo [DEVICE] [--quick | --no-train]\n\nRuns the main job (a matmul and a small MLP forward "
               "pass with the tensor layer, eagerly and\nthrough the JIT) on DEVICE and on the CPU device, checks the "
               "results against C loops\nand against each other, and prints timings; then trains an MLP on "
               "Fashion-MNIST\n(tools/demo_train.c; --quick: on 2048 images only; --no-train: no training). It stops "
               "at the\nfirst error.\n\n"
               "DEVICE defaults to $HCQ_DEVICE, else one device of each GPU kind present (NV:0, AMD:0).\n"
               "Without a GPU it says why and runs on hcq's mock GPUs instead: an emulated NVIDIA H100\n"
               "and AMD gfx1100, as HCQ_MOCK=1 gives (their kernels run on the host: the machine code of real cubins\n"
               "and code objects on the mock's executors where clang and ptxas build them, host twins with\n"
               "HCQ_MOCK_SHADER=twin, else kernel IR; the demo's first line per device says which).\n"
               "HCQ_DEBUG=2 also prints every kernel.\n");
}

int tool_demo(int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--quick")) {
            demo_quick = true;
            continue;
        }
        if (!strcmp(argv[i], "--no-train")) {
            demo_no_train = true;
            continue;
        }
        if (argv[i][0] == '-' || name) return tool_bad_arg("demo", argv[i]);
        name = argv[i];
    }
    if (!name) name = base_env_get()->device;
    if (name) {
        int rc = run_on(name);
        printf("%s\n", rc ? "demo FAILED" : "all results match the references");
        return rc;
    }
    /* one device of each GPU kind present; none: the mock's */
    const char *gpus[2] = {"NV", "AMD"};
    char why[2][1024];
    int found = 0, rc = 0;
    for (int k = 0; k < 2; k++) found += hcq_device_count(gpus[k], why[k], sizeof why[k]) > 0;
    if (!found && !base_env_get()->mock) {
        printf("No GPU here.\n  NV:  %s\n  AMD: %s\n", why[0], why[1]);
        printf("Running the main job on hcq's mock GPUs instead: an emulated NVIDIA H100 and AMD gfx1100, as\n"
               "HCQ_MOCK=1 gives (emulated kernel drivers and engines; kernels run on the host, so the timings are\n"
               "not a GPU's). The CPU device is the reference.\n\n");
        fflush(stdout);
        setenv("HCQ_MOCK", "1", 1);
        base_env_reload();
        sys_set(NULL);
        for (int k = 0; k < 2; k++) found += hcq_device_count(gpus[k], why[k], sizeof why[k]) > 0;
    }
    if (!found) rc = run_on("CPU"); /* HCQ_MOCK=1 with a configuration of no GPU */
    for (int k = 0; k < 2 && !rc; k++) {
        if (!hcq_device_count(gpus[k], NULL, 0)) continue;
        char dev[16];
        snprintf(dev, sizeof dev, "%s:0", gpus[k]);
        rc = run_on(dev);
        if (k == 0 && found > 1 && !rc) printf("\n");
    }
    printf("%s\n", rc ? "demo FAILED" : "all results match the references");
    return rc;
}
