/* hcq bench's tensor matmul: hcq_matmul of square matrices in f32, f16 and
 * bf16 through the tensor layer (the kernels a model runs, not the naive
 * IR one of the kernels section), as TFLOP/s (2 n^3 flops) from the wall
 * time around hcq_realize + synchronize, with the inputs realized and the
 * kernel built by an untimed first run. The hardware kit puts torch.matmul
 * of the same size and dtype beside it (scripts/hw-kit/torch_bench.py).
 * Sizes: 4096 on a GPU, 1024 on the CPU device, 256 with --quick, on the
 * mock GPUs and on the interpreter (those run the kernels on the host). */
#include "tools/bench.h"

#include <string.h>

static double now_s(void) { return (double)hcq_now_ns() * 1e-9; }

/* one dtype: the median TFLOP/s over rounds, 0 on failure (said on stderr) */
static void matmul_one(bench_ctx *b, hcq_ctx *ctx, hcq_dtype dt, const char *dtname, int64_t n, int rounds)
{
    char what[96];
    snprintf(what, sizeof what, "tensor matmul %s", dtname);
    size_t mark = hcq_ctx_mark(ctx);
    hcq_tensor *x = hcq_rand(ctx, dt, HCQ_SHAPE(n, n)), *y = hcq_rand(ctx, dt, HCQ_SHAPE(n, n));
    hcq_tensor *in[2] = {x, y};
    double v[16];
    if (!x || !y || hcq_realize_all(in, 2)) goto fail;
    for (int r = -1; r < rounds; r++) { /* r = -1 builds the kernel, untimed */
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *z = hcq_matmul(x, y);
        if (!z || hcq_device_synchronize(b->dev)) goto fail;
        double t0 = now_s();
        if (hcq_realize(z) || hcq_device_synchronize(b->dev)) goto fail;
        if (r >= 0) v[r] = 2.0 * (double)n * (double)n * (double)n / (now_s() - t0) * 1e-12;
        hcq_ctx_release(ctx, m);
    }
    char name[80];
    snprintf(name, sizeof name, "matmul %lldx%lldx%lld %s (tensor)", (long long)n, (long long)n, (long long)n, dtname);
    bench_add(b, name, "TFLOP/s", bench_stats(v, rounds), 0);
    hcq_ctx_release(ctx, mark);
    return;
fail:
    bench_fail(b, what);
    hcq_ctx_release(ctx, mark);
}

void bench_matmul(bench_ctx *b)
{
    const hcq_device_props *pr = hcq_device_get_props(b->dev);
    bool host_run = pr->is_mock || !strcmp(pr->target, "ir");
    int64_t n = b->quick || host_run ? 256 : !strcmp(pr->kind, "CPU") ? 1024 : 4096;
    int rounds = b->quick || host_run ? 3 : 5;
    hcq_ctx *ctx = hcq_ctx_create(b->dev);
    if (!ctx) return bench_fail(b, "tensor context");
    matmul_one(b, ctx, HCQ_F32, "f32", n, rounds);
    matmul_one(b, ctx, HCQ_F16, "f16", n, rounds);
    matmul_one(b, ctx, HCQ_BF16, "bf16", n, rounds);
    hcq_ctx_destroy(ctx);
}
