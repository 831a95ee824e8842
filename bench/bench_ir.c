/* bench_ir: the IR interpreter's throughput (the mock GPU's shader core) and
 * the C-rendered cpu build of the same kernels, single-threaded.
 *
 *   build/bench/bench_ir [repeats]
 *
 * Prints, per kernel, the median and the min..max of `repeats` runs, the
 * interpreter's rate in work-item IR ops per second (work-items x ops each
 * executes / s) and how much faster the compiled build is. */
#include <hcq/compiler.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/cpu_abi.h"

typedef struct bench {
    const char *name;
    hcq_kernel *k;
    uint32_t ng[3], ls[3];
    double ops_per_item; /* IR ops each work-item executes */
    void *bufs[4];
    uint8_t kernargs[64];
    size_t kernarg_size;
} bench;

static void set_ptr(bench *b, uint32_t i, void *p)
{
    hcq_param_info pi[8];
    b->kernarg_size = hcq_kernel_param_layout(b->k, pi);
    uint64_t v = (uint64_t)(uintptr_t)p;
    memcpy(b->kernargs + pi[i].offset, &v, 8);
}

static float *randf(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) * 0x1p-24f - 0.5f;
    }
    return p;
}

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    return hcq_ir_mulacc(k, g, ls, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
}

static hcq_ir_ref ci(hcq_kernel *k, int v) { return hcq_ir_const_int(k, HCQ_I32, v); }
static hcq_ir_ref cf(hcq_kernel *k, double v) { return hcq_ir_const_float(k, HCQ_F32, v); }

/* out = ((a*b + c) * 0.5 - a) max 0, sqrt'd: 1M work-items */
static void make_elementwise(bench *b)
{
    enum { N = 1 << 20 };
    hcq_kernel *k = b->k = hcq_kernel_create("elementwise");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), pa = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref pb = hcq_ir_param_buffer(k, HCQ_F32), pc = hcq_ir_param_buffer(k, HCQ_F32), i = gid(k);
    hcq_ir_ref a = hcq_ir_load(k, pa, i), x = hcq_ir_mulacc(k, a, hcq_ir_load(k, pb, i), hcq_ir_load(k, pc, i));
    x = hcq_ir_binary(k, HCQ_OP_SUB, hcq_ir_binary(k, HCQ_OP_MUL, x, cf(k, 0.5)), a);
    x = hcq_ir_unary(k, HCQ_OP_SQRT, hcq_ir_binary(k, HCQ_OP_MAX, x, cf(k, 0)));
    hcq_ir_store(k, out, i, x);
    b->name = "elementwise f32 (1M)";
    b->ng[0] = N / 256;
    b->ls[0] = 256;
    b->ops_per_item = hcq_kernel_op_count(k);
    for (int j = 0; j < 4; j++) set_ptr(b, (uint32_t)j, b->bufs[j] = randf(N, (unsigned)j + 1));
}

/* out[row] = sum of a[row, 0..1024): 4096 rows, one work-item each */
static void make_reduction(bench *b)
{
    enum { ROWS = 4096, COLS = 1024 };
    hcq_kernel *k = b->k = hcq_kernel_create("reduction");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), pa = hcq_ir_param_buffer(k, HCQ_F32), row = gid(k);
    hcq_ir_ref acc = hcq_ir_define_acc(k, cf(k, 0)), base = hcq_ir_binary(k, HCQ_OP_MUL, row, ci(k, COLS));
    hcq_ir_ref j = hcq_ir_range(k, ci(k, 0), ci(k, COLS));
    hcq_ir_ref v = hcq_ir_load(k, pa, hcq_ir_binary(k, HCQ_OP_ADD, base, j));
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, acc, v));
    hcq_ir_endrange(k, j);
    hcq_ir_store(k, out, row, acc);
    b->name = "row sum f32 (4096x1024)";
    b->ng[0] = ROWS / 64;
    b->ls[0] = 64;
    b->ops_per_item = 12 + 5.0 * COLS; /* body: add, load, add, assign, endrange */
    set_ptr(b, 0, b->bufs[0] = randf(ROWS, 9));
    set_ptr(b, 1, b->bufs[1] = randf((size_t)ROWS * COLS, 10));
}

/* C = A x B, 256^3, 16x16 tiles in local memory with barriers */
static void make_matmul(bench *b)
{
    enum { T = 16, M = 256 };
    hcq_kernel *k = b->k = hcq_kernel_create("matmul");
    hcq_ir_ref pc = hcq_ir_param_buffer(k, HCQ_F32), pa = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref pb = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref as = hcq_ir_define_local(k, HCQ_F32, T * T), bs = hcq_ir_define_local(k, HCQ_F32, T * T);
    hcq_ir_ref lx = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), ly = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 1);
    hcq_ir_ref gx = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), gy = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 1);
    hcq_ir_ref col = hcq_ir_mulacc(k, gx, ci(k, T), lx), row = hcq_ir_mulacc(k, gy, ci(k, T), ly);
    hcq_ir_ref acc = hcq_ir_define_acc(k, cf(k, 0)), lidx = hcq_ir_mulacc(k, ly, ci(k, T), lx);
    hcq_ir_ref t = hcq_ir_range(k, ci(k, 0), ci(k, M / T));
    hcq_ir_ref k0 = hcq_ir_binary(k, HCQ_OP_MUL, t, ci(k, T));
    hcq_ir_store(k, as, lidx, hcq_ir_load(k, pa, hcq_ir_mulacc(k, row, ci(k, M), hcq_ir_binary(k, HCQ_OP_ADD, k0, lx))));
    hcq_ir_store(k, bs, lidx, hcq_ir_load(k, pb, hcq_ir_mulacc(k, hcq_ir_binary(k, HCQ_OP_ADD, k0, ly), ci(k, M), col)));
    hcq_ir_barrier(k);
    hcq_ir_ref i = hcq_ir_range(k, ci(k, 0), ci(k, T));
    hcq_ir_ref av = hcq_ir_load(k, as, hcq_ir_mulacc(k, ly, ci(k, T), i));
    hcq_ir_ref bv = hcq_ir_load(k, bs, hcq_ir_mulacc(k, i, ci(k, T), lx));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, av, bv, acc));
    hcq_ir_endrange(k, i);
    hcq_ir_barrier(k);
    hcq_ir_endrange(k, t);
    hcq_ir_store(k, pc, hcq_ir_mulacc(k, row, ci(k, M), col), acc);
    b->name = "tiled matmul f32 (256^3)";
    b->ng[0] = b->ng[1] = M / T;
    b->ls[0] = b->ls[1] = T;
    b->ops_per_item = 20 + (M / T) * (14 + 7.0 * T); /* outer body 14 ops, inner 7 */
    set_ptr(b, 0, b->bufs[0] = randf((size_t)M * M, 11));
    set_ptr(b, 1, b->bufs[1] = randf((size_t)M * M, 12));
    set_ptr(b, 2, b->bufs[2] = randf((size_t)M * M, 13));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double median, min, max;
} stats;

static stats summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return (stats){t[n / 2], t[0], t[n - 1]};
}

static bool time_interp(bench *b, int reps, stats *out)
{
    double t[64];
    hcq_interp_launch l = {.kernargs = b->kernargs, .kernarg_size = b->kernarg_size};
    memcpy(l.num_groups, b->ng, sizeof b->ng);
    memcpy(l.local_size, b->ls, sizeof b->ls);
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = hcq_now_ns();
        if (hcq_interp_run(b->k, &l) != HCQ_OK) {
            fprintf(stderr, "%s: interpreter: %s\n", b->name, hcq_error_message());
            return false;
        }
        t[r] = (double)(hcq_now_ns() - t0) / 1e6;
    }
    *out = summarize(t, reps);
    return true;
}

static bool time_cpu(bench *b, int reps, stats *out, bool *cached)
{
    hcq_binary *bin;
    cc_cpu_module m;
    if (hcq_compile(b->k, "cpu", &bin) != HCQ_OK || cc_cpu_module_load(bin->data, bin->size, &m) != HCQ_OK) {
        fprintf(stderr, "%s: cpu build: %s\n", b->name, hcq_error_message());
        return false;
    }
    *cached = bin->from_cache;
    hcq_binary_free(bin);
    hcq_cpu_dims d;
    memcpy(d.num_groups, b->ng, sizeof b->ng);
    memcpy(d.local_size, b->ls, sizeof b->ls);
    uint64_t groups = (uint64_t)b->ng[0] * b->ng[1] * (b->ng[2] ? b->ng[2] : 1);
    double t[64];
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = hcq_now_ns();
        m.entry(b->kernargs, &d, 0, groups);
        t[r] = (double)(hcq_now_ns() - t0) / 1e6;
    }
    cc_cpu_module_unload(&m);
    *out = summarize(t, reps);
    return true;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 64) reps = 7;
    bench benches[3];
    memset(benches, 0, sizeof benches);
    make_elementwise(&benches[0]);
    make_reduction(&benches[1]);
    make_matmul(&benches[2]);
    printf("IR interpreter vs C-rendered cpu build, one thread, %d runs each (median, min..max)\n\n", reps);
    printf("%-26s %10s %8s | %22s %10s | %22s %8s\n", "kernel", "items", "ops/item", "interp ms", "Gops/s",
           "cpu ms", "speedup");
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        bench *b = &benches[i];
        for (int d = 0; d < 3; d++) b->ng[d] = b->ng[d] ? b->ng[d] : 1, b->ls[d] = b->ls[d] ? b->ls[d] : 1;
        double items = (double)b->ng[0] * b->ng[1] * b->ng[2] * b->ls[0] * b->ls[1] * b->ls[2];
        stats si, sc;
        bool cached = false;
        if (!time_interp(b, reps, &si) || !time_cpu(b, reps, &sc, &cached)) {
            rc = 1;
            continue;
        }
        char ci_[40], cc_[40];
        snprintf(ci_, sizeof ci_, "%.2f (%.2f..%.2f)", si.median, si.min, si.max);
        snprintf(cc_, sizeof cc_, "%.3f (%.3f..%.3f)", sc.median, sc.min, sc.max);
        printf("%-26s %10.0f %8.0f | %22s %10.3f | %22s %7.0fx\n", b->name, items, b->ops_per_item, ci_,
               items * b->ops_per_item / (si.median * 1e6), cc_, si.median / sc.median);
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++) free(benches[i].bufs[j]);
        hcq_kernel_destroy(benches[i].k);
    }
    return rc;
}
