/* hcq bench's tensor matmul: hcq_matmul of square matrices in f32, f16 and
 * bf16 through the tensor layer (the kernels a model runs, not the naive
 * IR one of the kernels section), as TFLOP/s (2 n^3 flops) from the wall
 * time around hcq_realize + synchronize, with the inputs realized and the
 * kernel built by an untimed first run. The hardware kit puts torch.matmul
 * of the same size and dtype beside it (scripts/hw-kit/torch_bench.py).
 * Sizes: --matmul-sizes, else 4096 on a GPU, 1024 on the CPU device, 256
 * with --quick, on the mock GPUs and on the interpreter (those run the
 * kernels on the host). --beam W times each again in a context that
 * searches plans (tensor.h, hcq_ctx_set_beam): the search runs in the
 * untimed first run, so the figure is the winner's. */
#include "tools/bench.h"

#include <string.h>

static double now_s(void) { return (double)hcq_now_ns() * 1e-9; }

/* one dtype: the median TFLOP/s over rounds, 0 on failure (said on stderr) */
static void matmul_one(bench_ctx *b, hcq_ctx *ctx, hcq_dtype dt, const char *dtname, int64_t n, int rounds, uint32_t beam)
{
    char what[96], how[32] = "tensor";
    if (beam) snprintf(how, sizeof how, "tensor, beam %u", beam);
    snprintf(what, sizeof what, "%s matmul %lld %s", how, (long long)n, dtname);
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
    snprintf(name, sizeof name, "matmul %lldx%lldx%lld %s (%s)", (long long)n, (long long)n, (long long)n, dtname, how);
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
    if (pr->is_mock && !strncmp(pr->shader, "nothing", 7)) /* HCQ_MOCK_SHADER=none: the kit's cache fill */
        snprintf(b->note, sizeof b->note, "%s runs no kernel (HCQ_MOCK_SHADER=none): the matmul figures time launches, not work", pr->id);
    const int64_t *sizes = b->n_mm ? b->mm_sizes : &n;
    int nsizes = b->n_mm ? b->n_mm : 1;
    static const struct {
        hcq_dtype dt;
        const char *name;
    } dts[] = {{HCQ_F32, "f32"}, {HCQ_F16, "f16"}, {HCQ_BF16, "bf16"}};
    for (int pass = 0; pass < (b->beam ? 2 : 1); pass++) {
        uint32_t beam = pass ? b->beam : 0;
        hcq_ctx *ctx = hcq_ctx_create(b->dev);
        if (!ctx) return bench_fail(b, "tensor context");
        if (beam && hcq_ctx_set_beam(ctx, beam)) { /* the mocks refuse: an emulator's timings are not a GPU's */
            snprintf(b->note, sizeof b->note, "--beam %u: %s", beam, hcq_error_message());
            hcq_ctx_destroy(ctx);
            return;
        }
        for (int i = 0; i < nsizes; i++)
            for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) matmul_one(b, ctx, dts[d].dt, dts[d].name, sizes[i], rounds, beam);
        hcq_ctx_destroy(ctx);
    }
}
