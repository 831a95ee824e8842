/* Host cost of the NV backend's launch path, measured on the mock H100 with
 * its engines paused (and their doorbells disconnected, so a doorbell costs
 * what the store costs on hardware): what the host spends to encode and
 * submit one launch (cbuf0 + QMD in the kernarg ring, methods in the
 * pushbuffer, a GPFIFO entry, GPPut, the doorbell). Target: < 500 ns, a
 * fifth of cuLaunchKernel's host cost. Also states the fixed device memory
 * an open device holds (target: < 128 MiB).
 *   eager      hcq_launch: wait(timeline) + launch + signal folded into the QMD
 *   encode     the backend alone: nv_rec_exec + nv_submit of one launch
 * Median and spread (p10, p90) over rounds; --json for JSON. */
#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "mem/mem.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_nv: %s: %s\n", what, hcq_error_message());
    exit(1);
}

enum { BATCH = 500, ROUNDS = 30 };

/* kernarg memory for the raw-encoder rounds: a bump allocator over one
 * host buffer, reset each round */
typedef struct bump {
    hcq_buffer *buf;
    uint64_t used;
} bump;

static hcq_status bump_alloc(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    bump *b = r->aux_ctx;
    uint64_t off = (b->used + align - 1) / align * align;
    if (off + size > hcq_buffer_size(b->buf)) return HCQ_ENOMEM;
    b->used = off + size;
    *cpu = (uint8_t *)hcq_buffer_cpu_ptr(b->buf) + off;
    *va = hcq_buffer_va(b->buf) + off;
    return HCQ_OK;
}

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[1], "--json");
    sys_set(mock_sys());
    if (mock_configure("nv=H100")) die("mock");
    hcq_device *dev = hcq_device_open("NV:0");
    if (!dev) die("open");
    hcq_kernel *k = hcq_kernel_create("empty");
    hcq_ir_param_buffer(k, HCQ_U32);
    hcq_program *p = hcq_program_from_kernel(dev, k);
    hcq_kernel_destroy(k);
    hcq_buffer *b = hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE);
    bump aux = {hcq_buffer_alloc(dev, (uint64_t)BATCH * 2048, HCQ_MEM_HOST), 0};
    if (!p || !b || !aux.buf) die("setup");
    hcq_arg a = hcq_arg_buffer(b);
    double eager[ROUNDS], encode[ROUNDS];

    for (int r = 0; r < ROUNDS; r++) {
        mock_nv_pause(0, true);
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < BATCH; i++)
            if (hcq_launch(p, &a, 1, hcq_dims_1d(1, 1))) die("launch");
        eager[r] = (double)(hcq_now_ns() - t0) / BATCH;
        mock_nv_pause(0, false);
        if (hcq_device_synchronize(dev)) die("sync");
    }

    drv_rec rec;
    drv_rec_init(&rec, dev, HCQ_QUEUE_COMPUTE);
    rec.aux_alloc = bump_alloc;
    rec.aux_ctx = &aux;
    hcq_val params[1] = {HCQ_IMM(hcq_buffer_va(b))};
    hcq_dims d = hcq_dims_1d(1, 1);
    for (int r = 0; r < ROUNDS; r++) {
        aux.used = 0;
        mock_nv_pause(0, true);
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < BATCH; i++) {
            drv_rec_reset(&rec);
            if (nv_rec_exec(&rec, p, params, &d) || nv_submit(dev, &rec)) die("encode");
        }
        encode[r] = (double)(hcq_now_ns() - t0) / BATCH;
        mock_nv_pause(0, false);
        /* the launches carry no signal: a timeline launch behind them drains */
        if (hcq_launch(p, &a, 1, d) || hcq_device_synchronize(dev)) die("drain");
    }
    drv_rec_fini(&rec);

    qsort(eager, ROUNDS, sizeof *eager, cmp_double);
    qsort(encode, ROUNDS, sizeof *encode, cmp_double);
    const hcq_device_props *pr = hcq_device_get_props(dev);
    uint64_t fixed = pr->fixed_memory_bytes;
    if (json) {
        printf("{\"hcq\": {\"version\": \"%s\", \"revision\": \"%s\"}, ", hcq_version(), hcq_build_revision());
        printf("\"device\": \"%s\", \"unit\": \"ns\", \"eager_launch\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": "
               "%.1f}, \"encode_submit\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f}, "
               "\"fixed_memory_bytes\": %llu}\n",
               pr->name, eager[ROUNDS / 10], eager[ROUNDS / 2], eager[ROUNDS * 9 / 10], encode[ROUNDS / 10],
               encode[ROUNDS / 2], encode[ROUNDS * 9 / 10], (unsigned long long)fixed);
    } else {
        printf("NV launch path on the mock %s, engines paused; target < 500 ns per launch\n", pr->name);
        printf("  %-44s %9s %9s %9s\n", "", "p10 ns", "median", "p90 ns");
        printf("  %-44s %9.1f %9.1f %9.1f\n", "hcq_launch (wait + QMD launch + signal)", eager[ROUNDS / 10],
               eager[ROUNDS / 2], eager[ROUNDS * 9 / 10]);
        printf("  %-44s %9.1f %9.1f %9.1f\n", "backend encode + submit (QMD, GPFIFO, doorbell)", encode[ROUNDS / 10],
               encode[ROUNDS / 2], encode[ROUNDS * 9 / 10]);
        printf("fixed device memory of an open NV device: %.1f MiB (target < 128 MiB): %s\n",
               (double)fixed / (1 << 20), fixed < (128ull << 20) ? "ok" : "OVER");
    }
    hcq_buffer_free(aux.buf);
    hcq_buffer_free(b);
    hcq_program_free(p);
    hcq_device_close(dev);
    return 0;
}
