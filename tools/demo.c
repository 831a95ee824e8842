#include "tools/tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* hcq demo: three kernels written in the kernel IR (a vector add, a
 * two-pass reduction through local memory, a small matmul), compiled for the
 * device's target, run through a recorded queue with GPU timestamps around
 * each launch, and checked against plain C loops. */

typedef struct demo {
    hcq_device *dev;
    hcq_queue *q;
    hcq_signal *t0, *t1, *done;
    uint64_t done_value;
    int failures;
} demo;

static hcq_ir_ref c_i32(hcq_kernel *k, int v) { return hcq_ir_const_int(k, HCQ_I32, v); }
static hcq_ir_ref bin(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, op, a, b); }

static hcq_ir_ref global_id(hcq_kernel *k, unsigned dim)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, dim);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, dim);
    return bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, g, ls), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, dim));
}

/* c[i] = a[i] + b[i], i < n */
static hcq_kernel *k_vadd(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref i = global_id(k, 0);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

/* out[group] = sum of in[group*per .. +per) (clipped to n): each work-item
 * sums a strided slice, then the group adds the slices in local memory */
enum { RED_L = 256 };
static hcq_kernel *k_sum(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_sum");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_F32), out = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_I32), per = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref lds = hcq_ir_define_local(k, HCQ_F32, RED_L);
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref base = bin(k, HCQ_OP_MUL, g, per);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_ref r = hcq_ir_range(k, c_i32(k, 0), hcq_ir_binary(k, HCQ_OP_IDIV, per, c_i32(k, RED_L)));
    hcq_ir_ref idx = bin(k, HCQ_OP_ADD, base, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, r, c_i32(k, RED_L)), l));
    hcq_ir_ref v = hcq_ir_load_gated(k, in, idx, bin(k, HCQ_OP_CMPLT, idx, n), hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_assign(k, acc, bin(k, HCQ_OP_ADD, acc, v));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, lds, l, acc);
    hcq_ir_barrier(k);
    for (int step = RED_L / 2; step >= 1; step /= 2) {
        hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, l, c_i32(k, step)));
        hcq_ir_ref o = bin(k, HCQ_OP_ADD, l, c_i32(k, step));
        hcq_ir_store(k, lds, l, bin(k, HCQ_OP_ADD, hcq_ir_load(k, lds, l), hcq_ir_load(k, lds, o)));
        hcq_ir_endif(k, iff);
        hcq_ir_barrier(k);
    }
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, l, c_i32(k, 1)));
    hcq_ir_store(k, out, g, hcq_ir_load(k, lds, c_i32(k, 0)));
    hcq_ir_endif(k, iff);
    return k;
}

/* C[M x N] = A[M x K] @ B[K x N], one work-item per output */
static hcq_kernel *k_matmul(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_matmul");
    hcq_ir_ref A = hcq_ir_param_buffer(k, HCQ_F32), B = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref C = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref M = hcq_ir_param_scalar(k, HCQ_I32), N = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref K = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref col = global_id(k, 0), row = global_id(k, 1);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_AND, bin(k, HCQ_OP_CMPLT, row, M), bin(k, HCQ_OP_CMPLT, col, N)));
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_ref r = hcq_ir_range(k, c_i32(k, 0), K);
    hcq_ir_ref a = hcq_ir_load(k, A, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, row, K), r));
    hcq_ir_ref b = hcq_ir_load(k, B, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, r, N), col));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, a, b, acc));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, C, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, row, N), col), acc);
    hcq_ir_endif(k, iff);
    return k;
}

/* One timed launch: timestamp, exec, timestamp, signal; returns GPU µs. */
static double timed(demo *d, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims)
{
    hcq_queue_reset(d->q);
    /* a recorded queue is not ordered with eager calls by itself: wait for
     * the timeline value of the last copyin before the kernel reads */
    hcq_signal *tl = hcq_device_timeline(d->dev);
    if (hcq_queue_wait(d->q, tl, HCQ_IMM(hcq_device_timeline_value(d->dev))) ||
        hcq_queue_timestamp(d->q, d->t0) || hcq_queue_exec(d->q, p, args, nargs, dims) ||
        hcq_queue_timestamp(d->q, d->t1) || hcq_queue_signal(d->q, d->done, HCQ_IMM(d->done_value + 1)) ||
        hcq_queue_submit(d->q, NULL, 0) || hcq_signal_wait(d->done, ++d->done_value, 0)) {
        tool_fail(hcq_program_get_info(p)->name);
        d->failures++;
        return -1;
    }
    return (double)(hcq_signal_timestamp_ns(d->t1) - hcq_signal_timestamp_ns(d->t0)) / 1000.0;
}

static void report(demo *d, const char *what, double us, double err, double tol, double gflop, double gbytes)
{
    int ok = err <= tol;
    if (!ok) d->failures++;
    printf("  %-28s %9.1f us", what, us);
    if (us > 0 && gflop > 0) printf("  %7.2f GFLOP/s", gflop / (us * 1e-6));
    if (us > 0 && gbytes > 0) printf("  %7.2f GB/s", gbytes / (us * 1e-6));
    printf("   max error %.3g (tolerance %.3g)  %s\n", err, tol, ok ? "ok" : "WRONG");
}

static hcq_program *build(demo *d, hcq_kernel *k)
{
    hcq_program *p = hcq_program_from_kernel(d->dev, k);
    if (!p) {
        tool_fail(hcq_kernel_name(k));
        d->failures++;
    }
    hcq_kernel_destroy(k);
    return p;
}

static hcq_buffer *upload(demo *d, const void *data, size_t size)
{
    hcq_buffer *b = hcq_buffer_alloc(d->dev, size, HCQ_MEM_DEVICE);
    if (!b || hcq_buffer_copyin(b, 0, data, size)) {
        tool_fail("upload");
        d->failures++;
        hcq_buffer_free(b);
        return NULL;
    }
    return b;
}

static float frand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 24) - 0.5f;
}

static void run_vadd(demo *d)
{
    enum { N = 1 << 20 };
    float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
    uint32_t s = 1;
    for (int i = 0; i < N; i++) a[i] = frand(&s), b[i] = frand(&s);
    hcq_program *p = build(d, k_vadd());
    hcq_buffer *ba = upload(d, a, N * 4), *bb = upload(d, b, N * 4), *bc = hcq_buffer_alloc(d->dev, N * 4, HCQ_MEM_DEVICE);
    if (p && ba && bb && bc) {
        hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_i32(N)};
        double us = timed(d, p, args, 4, hcq_dims_1d(N / 256, 256));
        if (hcq_buffer_copyout(c, bc, 0, N * 4)) d->failures += tool_fail("copyout");
        double err = 0;
        for (int i = 0; i < N; i++) err = fmax(err, fabs((double)c[i] - (double)(a[i] + b[i])));
        report(d, "vector add (1M f32)", us, err, 0, 0, 3.0 * N * 4 / 1e9);
    }
    hcq_buffer_free(ba), hcq_buffer_free(bb), hcq_buffer_free(bc), hcq_program_free(p);
    free(a), free(b), free(c);
}

static void run_sum(demo *d)
{
    enum { N = 1 << 20, PER = 16384, G = N / PER };
    float *x = malloc(N * 4), part[G], total[1];
    uint32_t s = 7;
    double want = 0;
    for (int i = 0; i < N; i++) x[i] = frand(&s), want += x[i];
    hcq_program *p = build(d, k_sum());
    hcq_buffer *bx = upload(d, x, N * 4), *bp = hcq_buffer_alloc(d->dev, G * 4, HCQ_MEM_DEVICE);
    hcq_buffer *bt = hcq_buffer_alloc(d->dev, 4, HCQ_MEM_DEVICE);
    if (p && bx && bp && bt) {
        hcq_arg a1[4] = {hcq_arg_buffer(bx), hcq_arg_buffer(bp), hcq_arg_i32(N), hcq_arg_i32(PER)};
        double us = timed(d, p, a1, 4, hcq_dims_1d(G, RED_L));
        hcq_arg a2[4] = {hcq_arg_buffer(bp), hcq_arg_buffer(bt), hcq_arg_i32(G), hcq_arg_i32(RED_L)};
        us += timed(d, p, a2, 4, hcq_dims_1d(1, RED_L));
        if (hcq_buffer_copyout(part, bp, 0, sizeof part) || hcq_buffer_copyout(total, bt, 0, 4))
            d->failures += tool_fail("copyout");
        report(d, "sum (1M f32, two passes)", us, fabs(total[0] - want), 1e-3 * sqrt((double)N), 0, N * 4 / 1e9);
    }
    hcq_buffer_free(bx), hcq_buffer_free(bp), hcq_buffer_free(bt), hcq_program_free(p);
    free(x);
}

static void run_matmul(demo *d)
{
    enum { M = 128, N = 96, K = 160 };
    float *A = malloc(M * K * 4), *B = malloc(K * N * 4), *C = malloc(M * N * 4);
    uint32_t s = 3;
    for (int i = 0; i < M * K; i++) A[i] = frand(&s);
    for (int i = 0; i < K * N; i++) B[i] = frand(&s);
    hcq_program *p = build(d, k_matmul());
    hcq_buffer *bA = upload(d, A, M * K * 4), *bB = upload(d, B, K * N * 4);
    hcq_buffer *bC = hcq_buffer_alloc(d->dev, M * N * 4, HCQ_MEM_DEVICE);
    if (p && bA && bB && bC) {
        hcq_arg args[6] = {hcq_arg_buffer(bA), hcq_arg_buffer(bB), hcq_arg_buffer(bC),
                           hcq_arg_i32(M),     hcq_arg_i32(N),     hcq_arg_i32(K)};
        double us = timed(d, p, args, 6, hcq_dims_3d(N / 16, M / 16, 1, 16, 16, 1));
        if (hcq_buffer_copyout(C, bC, 0, M * N * 4)) d->failures += tool_fail("copyout");
        double err = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += (double)A[i * K + k] * B[k * N + j];
                err = fmax(err, fabs(acc - C[i * N + j]));
            }
        report(d, "matmul 128x160 @ 160x96", us, err, 1e-4, 2.0 * M * N * K / 1e9, 0);
    }
    hcq_buffer_free(bA), hcq_buffer_free(bB), hcq_buffer_free(bC), hcq_program_free(p);
    free(A), free(B), free(C);
}

int tool_demo(int argc, char **argv)
{
    if (tool_has_flag(argc, argv, "--help")) {
        printf("usage: hcq demo [DEVICE]\n\nRuns a vector add, a reduction and a matmul written in the kernel IR on "
               "DEVICE\n(default: $HCQ_DEVICE, else the best device present), checks each against C loops\nand "
               "prints GPU-timed results. HCQ_DEBUG=2 also prints every launch.\n");
        return 0;
    }
    demo d = {0};
    d.dev = hcq_device_open(argc > 1 ? argv[1] : NULL);
    if (!d.dev) return tool_fail("opening the device");
    const hcq_device_props *pr = hcq_device_get_props(d.dev);
    printf("hcq demo on %s: %s (target %s)%s\n", pr->id, pr->name, pr->target, pr->is_mock ? " [mock GPU]" : "");
    d.q = hcq_queue_create(d.dev, HCQ_QUEUE_COMPUTE);
    d.t0 = hcq_signal_create(d.dev, 0);
    d.t1 = hcq_signal_create(d.dev, 0);
    d.done = hcq_signal_create(d.dev, 0);
    if (!d.q || !d.t0 || !d.t1 || !d.done) return tool_fail("setting up");
    run_vadd(&d);
    run_sum(&d);
    run_matmul(&d);
    hcq_queue_destroy(d.q);
    hcq_signal_destroy(d.t0), hcq_signal_destroy(d.t1), hcq_signal_destroy(d.done);
    if (hcq_device_close(d.dev)) d.failures += tool_fail("closing");
    printf("%s\n", d.failures ? "demo FAILED" : "all results match the C reference");
    return d.failures ? 1 : 0;
}
