/* hcq bench internals: results and the optional CUDA side. */
#ifndef HCQ_TOOLS_BENCH_H
#define HCQ_TOOLS_BENCH_H

#include "tools/tools.h"

#define BENCH_MAX_RESULTS 128

typedef struct bench_stat {
    double median, p10, p90;
    int runs;
} bench_stat;

typedef struct bench_result {
    char name[80];
    char unit[12];
    bench_stat s;
    double cuda; /* the same through CUDA, median; 0 when not measured */
} bench_result;

typedef struct bench_cuda bench_cuda;

typedef struct bench_ctx {
    hcq_device *dev, *peer;
    hcq_queue *q;
    hcq_signal *t0, *t1, *done;
    uint64_t done_value;
    bool quick, vs_cuda;
    bench_result r[BENCH_MAX_RESULTS];
    int n;
    int failures;
    bench_cuda *cuda;
    bool cuda_ok;
    char cuda_status[256];
    char note[200]; /* printed under the table: what the figures are (a part on the mock says so) */
    int64_t mm_sizes[8]; /* --matmul-sizes: the tensor matmuls' sizes (n_mm 0: the default for the device) */
    int n_mm;
    uint32_t beam; /* --beam N: each matmul again with the plan search of width N (hcq_ctx_set_beam) */
} bench_ctx;

/* sorts v and returns median, p10, p90 */
bench_stat bench_stats(double *v, int n);
void bench_add(bench_ctx *b, const char *name, const char *unit, bench_stat s, double cuda_median);
void bench_fail(bench_ctx *b, const char *what);
/* hcq_matmul's TFLOP/s in f32, f16 and bf16 (bench_matmul.c) */
void bench_matmul(bench_ctx *b);
/* hcq_allreduce latency and bus bandwidth over 2, 4, 8 devices of the
 * benched device's kind (bench_allreduce.c) */
void bench_allreduce(bench_ctx *b);

/* ** the CUDA driver API side (bench_cuda.c): each returns the median in
 * the same unit as the hcq figure it sits beside, or 0 when CUDA is not
 * there or the step failed (the reason goes to cuda_status) */
void bench_cuda_open(bench_ctx *b);
void bench_cuda_close(bench_ctx *b);
double bench_cuda_launch_enqueue(bench_ctx *b);
double bench_cuda_launch_roundtrip(bench_ctx *b);
double bench_cuda_graph_node(bench_ctx *b, int nodes, bool with_sync);
/* dir: 0 host->device, 1 device->host, 2 device->device */
double bench_cuda_copy(bench_ctx *b, int dir, uint64_t size);

#endif
