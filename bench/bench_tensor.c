/* Tensor-layer throughput on a device (default CPU; argv[1] or HCQ_DEVICE
 * overrides), side by side with what the machine can do, in one run:
 *   - copy bandwidth: host memcpy on as many threads as the device has
 *     workers, and a device-to-device hcq_buffer_copy; the larger is the
 *     reference (bytes read + written per second);
 *   - a fused f32 elementwise chain (2 inputs, 1 output, 16 Mi elements)
 *     and its bandwidth; target >= 70 % of the reference on CPUs, 85 % of
 *     the device copy on GPUs;
 *   - reduction bandwidth: a full sum (split into two kernels), row sums
 *     and sums over axis 0; softmax along rows of 1024 (bytes read +
 *     written once);
 *   - the MLP 64x784-512-512-10 forward, realized and as a JIT replay, and
 *     the round trip of a one-element op (realize + wait), medians;
 *     bench/tensor_compare.py runs the same workloads in numpy and torch
 *     beside this program's --json (make bench-compare);
 *   - matmul GFLOP/s over sizes, and the cores' peak FMA rate, computed as
 *     cores x 2 FMA pipes x vector lanes x 2 flops x clock (the clock
 *     measured with a chain of dependent adds, the lanes from the CPU's
 *     flags: 16 f32 with AVX-512 on a full-width datapath, 8 with AVX2 or
 *     the half-width AVX-512 of Zen 4) and also measured with independent
 *     FMA chains; target: 1024^3 at >= 25 % of the computed peak;
 *   - host time per kernel with the caches hot: hcq_realize of a graph
 *     seen before (scheduling, the AST key and kernel-cache hit, launch
 *     submission), target < 100 us; and, for information, lowering a new
 *     kernel to IR (no compile).
 * Times are the best of several runs, wall clock around realize +
 * synchronize (the kernels run milliseconds; the host part is tens of
 * microseconds). Prints a table; --json prints JSON instead. */
#include <hcq/hcq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tt.h" /* tt_schedule / tt_lower, to time them alone */

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static void die(const char *what)
{
    fprintf(stderr, "bench_tensor: %s: %s\n", what, hcq_error_message());
    exit(1);
}

static double now_s(void) { return (double)hcq_now_ns() * 1e-9; }

/* ** the machine */
typedef struct mc_job {
    char *dst;
    const char *src;
    size_t n;
} mc_job;

static void *mc_run(void *p)
{
    mc_job *j = p;
    memcpy(j->dst, j->src, j->n);
    return NULL;
}

/* best r+w bandwidth of memcpy over `threads` threads, GB/s */
static double memcpy_gbs(size_t bytes, int threads)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) die("malloc");
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = 0;
    for (int r = 0; r < 8; r++) {
        pthread_t th[64];
        mc_job jobs[64];
        size_t part = bytes / (size_t)threads;
        double t0 = now_s();
        for (int i = 0; i < threads; i++) {
            jobs[i] = (mc_job){b + i * part, a + i * part, i == threads - 1 ? bytes - i * part : part};
            if (i) pthread_create(&th[i], NULL, mc_run, &jobs[i]);
        }
        mc_run(&jobs[0]);
        for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
        double t = now_s() - t0, gbs = 2.0 * (double)bytes / t * 1e-9;
        if (gbs > best) best = gbs;
    }
    free(a);
    free(b);
    return best;
}

/* GHz from a chain of dependent integer adds (one cycle each) */
static double clock_ghz(void)
{
    double best = 0;
    for (int r = 0; r < 5; r++) {
        uint64_t x = 0, n = 200000000;
        double t0 = now_s();
        for (uint64_t i = 0; i < n; i += 8) {
#define ADD __asm__ volatile("add $1, %0" : "+r"(x))
#if defined(__x86_64__)
            ADD;
            ADD;
            ADD;
            ADD;
            ADD;
            ADD;
            ADD;
            ADD;
#else
            x += 8;
#endif
        }
        double t = now_s() - t0, ghz = (double)n / t * 1e-9;
        if (ghz > best && x) best = ghz;
    }
    return best;
}

typedef struct cpu_facts {
    char model[96];
    int family;
    bool avx512, avx2, fma;
} cpu_facts;

static cpu_facts cpu_info(void)
{
    cpu_facts f = {{0}};
    FILE *fp = fopen("/proc/cpuinfo", "r");
    char line[4096];
    while (fp && fgets(line, sizeof line, fp)) {
        if (!strncmp(line, "model name", 10) && !f.model[0]) {
            char *c = strchr(line, ':');
            if (c) snprintf(f.model, sizeof f.model, "%s", c + 2);
            f.model[strcspn(f.model, "\n")] = 0;
        }
        if (!strncmp(line, "cpu family", 10) && !f.family) f.family = atoi(strchr(line, ':') + 1);
        if (!strncmp(line, "flags", 5)) {
            f.avx512 = strstr(line, " avx512f") != NULL;
            f.avx2 = strstr(line, " avx2") != NULL;
            f.fma = strstr(line, " fma") != NULL;
            break;
        }
    }
    if (fp) fclose(fp);
    return f;
}

/* f32 lanes one FMA pipe completes per cycle */
static int fma_lanes(const cpu_facts *f)
{
    if (f->avx512 && f->family != 25) return 16; /* Zen 4 (family 25) splits 512-bit ops in two */
    if (f->avx512 || (f->avx2 && f->fma)) return 8;
    return 4;
}

#if defined(__x86_64__)
/* independent FMA chains on one thread (12 accumulators: latency 4 x 2
 * pipes needs 8); writes the flops done */
#define FMA_ITERS 50000000ull
#define FMA12(F)                                                                                   \
    a0 = F(a0, m, c), a1 = F(a1, m, c), a2 = F(a2, m, c), a3 = F(a3, m, c), a4 = F(a4, m, c),      \
    a5 = F(a5, m, c), a6 = F(a6, m, c), a7 = F(a7, m, c), a8 = F(a8, m, c), a9 = F(a9, m, c),      \
    a10 = F(a10, m, c), a11 = F(a11, m, c)
__attribute__((target("avx512f"))) static void *fma512(void *p)
{
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    /* distinct starting values: equal chains would be merged by the compiler */
#define S512(i) _mm512_set1_ps(1.0f + 0.01f * (i))
    __m512 a0 = S512(0), a1 = S512(1), a2 = S512(2), a3 = S512(3), a4 = S512(4), a5 = S512(5), a6 = S512(6),
           a7 = S512(7), a8 = S512(8), a9 = S512(9), a10 = S512(10), a11 = S512(11);
    uint64_t n = FMA_ITERS;
    for (uint64_t i = 0; i < n; i++) {
        FMA12(_mm512_fmadd_ps);
        __asm__ volatile("" : "+v"(a0), "+v"(a6));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(_mm512_add_ps(a6, a7),
                                                                               _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)))));
    float sink[16];
    _mm512_storeu_ps(sink, s);
    *(double *)p = sink[0] == 12345.f ? 0 : (double)n * 12 * 16 * 2; /* flops */
    return NULL;
}

__attribute__((target("avx2,fma"))) static void *fma256(void *p)
{
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
#define S256(i) _mm256_set1_ps(1.0f + 0.01f * (i))
    __m256 a0 = S256(0), a1 = S256(1), a2 = S256(2), a3 = S256(3), a4 = S256(4), a5 = S256(5), a6 = S256(6),
           a7 = S256(7), a8 = S256(8), a9 = S256(9), a10 = S256(10), a11 = S256(11);
    uint64_t n = FMA_ITERS;
    for (uint64_t i = 0; i < n; i++) {
        FMA12(_mm256_fmadd_ps);
        __asm__ volatile("" : "+x"(a0), "+x"(a6));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(_mm256_add_ps(a6, a7),
                                                                               _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)))));
    float sink[8];
    _mm256_storeu_ps(sink, s);
    *(double *)p = sink[0] == 12345.f ? 0 : (double)n * 12 * 8 * 2;
    return NULL;
}
#endif

/* measured FMA rate over `threads` threads, GFLOP/s (0 if unknown) */
static double measured_fma(const cpu_facts *f, int threads)
{
#if defined(__x86_64__)
    void *(*fn)(void *) = f->avx512 ? fma512 : (f->avx2 && f->fma) ? fma256 : NULL;
    if (!fn) return 0;
    /* all threads' flops over the wall time they took together: threads
     * that share a core's pipes (SMT siblings) then show it */
    pthread_t th[64];
    double r[64] = {0}, sum = 0, t0 = now_s();
    for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, fn, &r[i]);
    fn(&r[0]);
    for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
    double t = now_s() - t0;
    for (int i = 0; i < threads; i++) sum += r[i];
    return sum / t * 1e-9;
#else
    (void)f, (void)threads;
    return 0;
#endif
}

/* ** tensor workloads */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* seconds of realize + synchronize: the best of reps runs, or their
 * median (the MLP's, compared with its JIT replay and numpy's medians) */
static double time_realize_stat(hcq_ctx *ctx, hcq_tensor *(*build)(hcq_ctx *, hcq_tensor **), hcq_tensor **in, int reps,
                                bool median)
{
    double v[64];
    if (reps > 64) reps = 64;
    hcq_device *dev = hcq_ctx_device(ctx);
    for (int r = 0; r < reps; r++) {
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *y = build(ctx, in);
        if (!y) die("build");
        if (hcq_device_synchronize(dev)) die("sync");
        double t0 = now_s();
        if (hcq_realize(y) || hcq_device_synchronize(dev)) die("realize");
        v[r] = now_s() - t0;
        hcq_ctx_release(ctx, m);
    }
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    return median ? v[reps / 2] : v[0];
}
static double time_realize(hcq_ctx *ctx, hcq_tensor *(*build)(hcq_ctx *, hcq_tensor **), hcq_tensor **in, int reps)
{
    return time_realize_stat(ctx, build, in, reps, false);
}

static hcq_tensor *b_chain(hcq_ctx *ctx, hcq_tensor **in)
{
    /* max((x + y) * x - 0.5 * y, 0) + 1: five ops, one pass */
    return hcq_add_s(hcq_relu(hcq_sub(hcq_mul(hcq_add(in[0], in[1]), in[0]), hcq_mul_s(in[1], 0.5))), 1.0 + 0 * (double)!ctx);
}
static hcq_tensor *b_sum(hcq_ctx *ctx, hcq_tensor **in) { (void)ctx; return hcq_sum(in[0], HCQ_ALL_AXES, false); }
static hcq_tensor *b_rows(hcq_ctx *ctx, hcq_tensor **in)
{
    (void)ctx;
    return hcq_sum(hcq_reshape(in[0], HCQ_SHAPE(4096, -1)), HCQ_AXES(1), false);
}
static hcq_tensor *b_matmul(hcq_ctx *ctx, hcq_tensor **in) { (void)ctx; return hcq_matmul(in[0], in[1]); }
static hcq_tensor *b_axis0(hcq_ctx *ctx, hcq_tensor **in)
{
    (void)ctx;
    return hcq_sum(hcq_reshape(in[0], HCQ_SHAPE(4096, -1)), HCQ_AXES(0), false);
}
static hcq_tensor *b_softmax(hcq_ctx *ctx, hcq_tensor **in)
{
    (void)ctx;
    return hcq_softmax(hcq_reshape(in[0], HCQ_SHAPE(-1, 1024)), -1);
}

/* the MLP: x [64, 784], layers 784-512-512-10 ([out, in] weights
 * as hcq_linear takes them), relu between */
static hcq_tensor *mlp_forward(hcq_tensor *x, hcq_tensor *const *w)
{
    hcq_tensor *h = hcq_relu(hcq_linear(x, w[0], w[1]));
    h = hcq_relu(hcq_linear(h, w[2], w[3]));
    return hcq_linear(h, w[4], w[5]);
}
static hcq_tensor *mlp_w[6];
static hcq_tensor *b_mlp(hcq_ctx *ctx, hcq_tensor **in) { (void)in; return mlp_forward(in[6], mlp_w + 0 * (size_t)!ctx); }
static hcq_status jit_mlp(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = mlp_forward(in[0], mlp_w);
    return out[0] ? HCQ_OK : hcq_error_status();
}

/* median seconds of a JIT replay of the MLP, realize + synchronize */
static double time_mlp_jit(hcq_ctx *ctx, hcq_tensor *x, int reps)
{
    hcq_device *dev = hcq_ctx_device(ctx);
    hcq_jit *j = hcq_jit_create(ctx, jit_mlp, NULL);
    if (!j) die("jit");
    double v[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps + 2; r++) { /* the first two run fn and capture */
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *y;
        if (hcq_device_synchronize(dev)) die("sync");
        double t0 = now_s();
        if (hcq_jit_run(j, &x, 1, &y, 1) || hcq_realize(y) || hcq_device_synchronize(dev)) die("jit run");
        if (r >= 2) v[r - 2] = now_s() - t0;
        hcq_ctx_release(ctx, m);
    }
    hcq_jit_destroy(j);
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    return v[reps / 2];
}

/* median seconds of realize + synchronize of a one-element op (kernel
 * cached): the host's round trip to the device and back */
static double time_tiny(hcq_ctx *ctx)
{
    enum { RUNS = 200 };
    static double v[RUNS];
    hcq_device *dev = hcq_ctx_device(ctx);
    hcq_tensor *t = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(1));
    if (!t || hcq_realize(t) || hcq_device_synchronize(dev)) die("tiny input");
    for (int r = 0; r < RUNS + 5; r++) {
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *y = hcq_add_s(t, 1.0);
        double t0 = now_s();
        if (!y || hcq_realize(y) || hcq_device_synchronize(dev)) die("tiny");
        if (r >= 5) v[r - 5] = now_s() - t0;
        hcq_ctx_release(ctx, m);
    }
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

/* Host time per kernel, nothing compiled, median of 200:
 *   hot:  hcq_realize of a graph seen before (schedule, AST key, kernel
 *         cache hit, buffer from the pool, launch submitted; the kernels
 *         run meanwhile and are waited for outside the timing);
 *   cold: lowering a new kernel to IR (schedule + key + tt_lower; the
 *         program would then come from the program cache by its IR). */
enum { SL_RUNS = 200 };
static void sched_lower_us(hcq_ctx *ctx, hcq_tensor *(*build)(hcq_ctx *, hcq_tensor **), hcq_tensor **in, double *hot,
                           double *cold)
{
    static double hv[SL_RUNS], cv[SL_RUNS];
    int nh = 0;
    hcq_device *dev = hcq_ctx_device(ctx);
    tt_key key = {0};
    for (int r = 0; r < SL_RUNS; r++) {
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *y = build(ctx, in);
        if (!y || hcq_device_synchronize(dev)) die("build");
        hcq_ctx_stats s0, s1;
        hcq_ctx_get_stats(ctx, &s0);
        double t0 = now_s();
        if (hcq_realize(y)) die("realize");
        double t = now_s() - t0;
        hcq_ctx_get_stats(ctx, &s1);
        if (hcq_device_synchronize(dev)) die("sync");
        if (s1.programs == s0.programs && s1.kernels > s0.kernels) hv[nh++] = t / (double)(s1.kernels - s0.kernels) * 1e6;
        hcq_ctx_release(ctx, m);
        y = build(ctx, in);
        tt_node *root = y->n;
        tt_sched sc;
        t0 = now_s();
        if (tt_schedule(ctx, &root, 1, &sc)) die("schedule");
        for (uint32_t k = 0; k < sc.nk; k++) {
            tt_lowered lw;
            tt_node *const *xs = sc.items + sc.kfirst[k];
            uint32_t nx = sc.kfirst[k + 1] - sc.kfirst[k];
            if (tt_key_make(ctx, xs, nx, &key) || tt_lower(ctx, xs, nx, &key, &lw)) die("lower");
            tt_lowered_free(&lw);
        }
        cv[r] = (now_s() - t0) / (sc.nk ? sc.nk : 1) * 1e6;
        tt_sched_free(&sc);
        hcq_ctx_release(ctx, m);
    }
    tt_key_free(&key);
    qsort(hv, (size_t)nh, sizeof *hv, cmp_double);
    qsort(cv, SL_RUNS, sizeof *cv, cmp_double);
    *hot = nh ? hv[nh / 2] : 1e30;
    *cold = cv[SL_RUNS / 2];
}

static hcq_tensor *b_small_chain(hcq_ctx *ctx, hcq_tensor **in)
{
    (void)ctx;
    return hcq_gelu(hcq_add(hcq_mul(in[2], in[3]), in[2]));
}
static hcq_tensor *b_small_softmax(hcq_ctx *ctx, hcq_tensor **in) { (void)ctx; return hcq_softmax(in[2], -1); }
static hcq_tensor *b_small_matmul(hcq_ctx *ctx, hcq_tensor **in)
{
    (void)ctx;
    return hcq_relu(hcq_matmul(in[4], in[5]));
}

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    const char *name = argc > 1 && strcmp(argv[1], "--json") ? argv[1] : NULL;
    if (!name && !getenv("HCQ_DEVICE")) name = "CPU";
    hcq_device *dev = hcq_device_open(name);
    if (!dev) die("open");
    const hcq_device_props *pr = hcq_device_get_props(dev);
    bool is_cpu = !strcmp(pr->kind, "CPU");
    if (pr->is_mock || !strcmp(pr->target, "ir")) {
        printf("bench_tensor: %s runs kernels on the IR interpreter; its numbers would measure that, skipped\n", pr->id);
        hcq_device_close(dev);
        return 0;
    }
    hcq_ctx *ctx = hcq_ctx_create(dev);
    if (!ctx) die("context");
    int threads = (int)(pr->compute_units ? pr->compute_units : 1);
    if (threads > 64) threads = 64;

    /* references */
    const int64_t N = 1 << 24;
    const size_t bytes = (size_t)N * 4;
    double mc = is_cpu ? memcpy_gbs(bytes, threads) : 0;
    hcq_buffer *cb0 = hcq_buffer_alloc(dev, bytes, HCQ_MEM_DEVICE), *cb1 = hcq_buffer_alloc(dev, bytes, HCQ_MEM_DEVICE);
    if (!cb0 || !cb1) die("alloc");
    double devcopy = 0;
    for (int r = 0; r < 6; r++) {
        double t0 = now_s();
        if (hcq_buffer_copy(cb1, 0, cb0, 0, bytes) || hcq_device_synchronize(dev)) die("copy");
        double g = 2.0 * (double)bytes / (now_s() - t0) * 1e-9;
        if (r && g > devcopy) devcopy = g; /* the first touches fresh pages */
    }
    hcq_buffer_free(cb0);
    hcq_buffer_free(cb1);
    double ref = is_cpu ? mc : devcopy; /* the brief's references: memcpy on CPUs, the device's copy on GPUs */

    /* inputs */
    hcq_tensor *in[7];
    in[0] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(N));
    in[1] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(N));
    in[2] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64, 100));
    in[3] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64, 100));
    in[4] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64, 64));
    in[5] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64, 64));
    if (hcq_realize_all(in, 6)) die("inputs");

    double t_chain = time_realize(ctx, b_chain, in, 8);
    double ew = 3.0 * (double)bytes / t_chain * 1e-9;
    double t_sum = time_realize(ctx, b_sum, in, 8), red = (double)bytes / t_sum * 1e-9;
    double t_rows = time_realize(ctx, b_rows, in, 8), rows = (double)bytes / t_rows * 1e-9;
    double t_axis0 = time_realize(ctx, b_axis0, in, 8), axis0 = (double)bytes / t_axis0 * 1e-9;
    /* softmax of 16 Ki rows of 1024: bytes read + written once */
    double t_soft = time_realize(ctx, b_softmax, in, 8), soft = 2.0 * (double)bytes / t_soft * 1e-9;

    static const int64_t mlp_dims[4] = {784, 512, 512, 10};
    for (int l = 0; l < 3; l++) {
        mlp_w[2 * l] = hcq_mul_s(hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(mlp_dims[l + 1], mlp_dims[l])), 0.05);
        mlp_w[2 * l + 1] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(mlp_dims[l + 1]));
    }
    in[6] = hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(64, 784));
    if (hcq_realize_all(mlp_w, 6) || hcq_realize(in[6])) die("mlp inputs");
    (void)time_realize(ctx, b_mlp, in, 2); /* compile */
    double t_mlp = time_realize_stat(ctx, b_mlp, in, 21, true), t_mlp_jit = time_mlp_jit(ctx, in[6], 21);
    double t_tiny = time_tiny(ctx);

    static const int sizes[] = {128, 256, 512, 1000, 1024, 2048};
    enum { NMM = 6 };
    double mm[NMM];
    for (int i = 0; i < NMM; i++) {
        int s = sizes[i];
        hcq_tensor *m2[2] = {hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(s, s)), hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(s, s))};
        if (hcq_realize_all(m2, 2)) die("matmul inputs");
        double t = time_realize(ctx, b_matmul, m2, s >= 2000 ? 3 : s >= 1000 ? 5 : 10);
        mm[i] = 2.0 * s * s * (double)s / t * 1e-9;
    }

    /* realize each once so the kernel cache is hot */
    hcq_tensor *warm[3] = {b_small_chain(ctx, in), b_small_softmax(ctx, in), b_small_matmul(ctx, in)};
    if (hcq_realize_all(warm, 3) || hcq_device_synchronize(dev)) die("warm up");
    double us_chain, us_soft, us_mm, cold_chain, cold_soft, cold_mm;
    sched_lower_us(ctx, b_small_chain, in, &us_chain, &cold_chain);
    sched_lower_us(ctx, b_small_softmax, in, &us_soft, &cold_soft);
    sched_lower_us(ctx, b_small_matmul, in, &us_mm, &cold_mm);
    double us_max = us_chain > us_soft ? us_chain : us_soft;
    if (us_mm > us_max) us_max = us_mm;

    cpu_facts cf = cpu_info();
    double ghz = is_cpu ? clock_ghz() : 0;
    int lanes = fma_lanes(&cf);
    double peak = is_cpu ? threads * 2.0 * lanes * 2.0 * ghz : 0;
    double fma_meas = is_cpu ? measured_fma(&cf, threads) : 0;

    double ew_pct = ref > 0 ? 100 * ew / ref : 0, mm_pct = peak > 0 ? 100 * mm[4] / peak : 0 /* 1024^3 */;
    double ew_target = is_cpu ? 70 : 85;
    bool ok_ew = ew_pct >= ew_target, ok_mm = !is_cpu || mm_pct >= 25, ok_us = us_max < 100;

    if (json) {
        printf("{\n  \"hcq\": {\"version\": \"%s\", \"revision\": \"%s\"},\n", hcq_version(), hcq_build_revision());
        printf("  \"device\": \"%s\",\n  \"target\": \"%s\",\n  \"workers\": %d,\n", pr->name, pr->target, threads);
        printf("  \"memcpy_gbs\": %.2f,\n  \"device_copy_gbs\": %.2f,\n", mc, devcopy);
        printf("  \"elementwise_gbs\": %.2f,\n  \"elementwise_pct_of_copy\": %.1f,\n", ew, ew_pct);
        printf("  \"sum_gbs\": %.2f,\n  \"row_sum_gbs\": %.2f,\n", red, rows);
        printf("  \"axis0_sum_gbs\": %.2f,\n  \"softmax_gbs\": %.2f,\n", axis0, soft);
        printf("  \"mlp_forward_ms\": %.3f,\n  \"mlp_forward_jit_ms\": %.3f,\n", t_mlp * 1e3, t_mlp_jit * 1e3);
        printf("  \"tiny_realize_wait_us\": %.1f,\n", t_tiny * 1e6);
        printf("  \"matmul_gflops\": {");
        for (int i = 0; i < NMM; i++) printf("%s\"%d\": %.1f", i ? ", " : "", sizes[i], mm[i]);
        printf("},\n  \"clock_ghz\": %.2f,\n  \"fma_lanes\": %d,\n  \"peak_gflops\": %.1f,\n", ghz, lanes, peak);
        printf("  \"measured_fma_gflops\": %.1f,\n  \"matmul_1024_pct_of_peak\": %.1f,\n", fma_meas, mm_pct);
        printf("  \"sched_lower_us\": {\"elementwise\": %.1f, \"softmax\": %.1f, \"matmul\": %.1f},\n", us_chain, us_soft, us_mm);
        printf("  \"lower_cold_us\": {\"elementwise\": %.1f, \"softmax\": %.1f, \"matmul\": %.1f},\n", cold_chain, cold_soft, cold_mm);
        printf("  \"targets_met\": {\"elementwise\": %s, \"matmul\": %s, \"sched_lower\": %s}\n}\n", ok_ew ? "true" : "false",
               ok_mm ? "true" : "false", ok_us ? "true" : "false");
    } else {
        printf("bench_tensor on %s (%s), %d workers\n", pr->name, pr->target, threads);
        if (is_cpu) printf("  %-44s %10.2f GB/s\n", "memcpy (read + write, all workers)", mc);
        printf("  %-44s %10.2f GB/s\n", "device copy (read + write)", devcopy);
        printf("  %-44s %10.2f GB/s   %5.1f %% of copy (target %.0f %%)  %s\n", "elementwise chain, 16 Mi f32, 5 ops", ew,
               ew_pct, ew_target, ok_ew ? "ok" : "MISSED");
        printf("  %-44s %10.2f GB/s\n", "sum of 16 Mi f32", red);
        printf("  %-44s %10.2f GB/s\n", "row sums, 4096 x 4096 f32", rows);
        printf("  %-44s %10.2f GB/s\n", "sum over axis 0, 4096 x 4096 f32", axis0);
        printf("  %-44s %10.2f GB/s\n", "softmax 16384 x 1024 f32 (read + write)", soft);
        printf("  %-44s %10.3f ms (JIT replay %.3f ms)\n", "MLP 64x784-512-512-10 forward", t_mlp * 1e3, t_mlp_jit * 1e3);
        printf("  %-44s %10.1f us\n", "1-element op, realize + wait (median)", t_tiny * 1e6);
        for (int i = 0; i < NMM; i++) {
            char what[64];
            snprintf(what, sizeof what, "matmul %d x %d x %d f32", sizes[i], sizes[i], sizes[i]);
            printf("  %-44s %10.1f GFLOP/s\n", what, mm[i]);
        }
        if (is_cpu) {
            printf("  peak FMA rate: %d cores x 2 pipes x %d lanes x 2 flops x %.2f GHz = %.1f GFLOP/s (%s)\n", threads, lanes,
                   ghz, peak, cf.model);
            printf("  %-44s %10.1f GFLOP/s\n", "measured FMA rate (independent chains, wall)", fma_meas);
            printf("  matmul 1024^3 at %.1f %% of peak (target 25 %%)  %s\n", mm_pct, ok_mm ? "ok" : "MISSED");
        }
        printf("  realize per kernel, caches hot (schedule, key, launch): elementwise %.1f us, softmax %.1f us, "
               "matmul %.1f us (target < 100 us)  %s\n",
               us_chain, us_soft, us_mm, ok_us ? "ok" : "MISSED");
        printf("  lowering a new kernel (cold, no compile):   elementwise %.1f us, softmax %.1f us, matmul 64^3 %.1f us\n",
               cold_chain, cold_soft, cold_mm);
    }
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return 0;
}
