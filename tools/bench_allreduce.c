/* hcq bench --only allreduce: hcq_allreduce of f32 sums over 2, 4 and 8
 * devices of the benched device's kind (as many as are present), 4 KiB to
 * 256 MiB per device. Latency is the call's wall time (it returns once
 * every buffer holds the result); bus bandwidth is NCCL's convention,
 * size / time x 2(n-1)/n, the bytes each device's links carry in a ring,
 * so figures for different n compare with the links' speed. */
#include "tools/bench.h"

#include <stdlib.h>
#include <string.h>

#define AR_MAX_DEVS 8

static void one(bench_ctx *b, hcq_device **devs, uint32_t n, uint64_t bytes)
{
    hcq_buffer *bufs[AR_MAX_DEVS] = {0};
    char what[56];
    const char *unit = bytes >= (1u << 20) ? "MiB" : "KiB";
    uint64_t shown = bytes >> (bytes >= (1u << 20) ? 20 : 10);
    snprintf(what, sizeof what, "allreduce x%u %llu %s", n, (unsigned long long)shown, unit);
    for (uint32_t i = 0; i < n; i++)
        if (!(bufs[i] = hcq_buffer_alloc(devs[i], bytes, HCQ_MEM_DEVICE))) {
            bench_fail(b, what);
            goto out;
        }
    /* zeros: sums of zeros stay zero whatever the rounds */
    float *zero = calloc(1, bytes);
    for (uint32_t i = 0; i < n && zero; i++)
        if (hcq_buffer_copyin(bufs[i], 0, zero, bytes)) {
            bench_fail(b, what);
            free(zero);
            goto out;
        }
    free(zero);
    /* one untimed call compiles and loads the fold kernels */
    if (hcq_allreduce(bufs, n, HCQ_F32, HCQ_REDUCE_SUM)) {
        bench_fail(b, what);
        goto out;
    }
    int rounds = b->quick ? 3 : bytes >= (64u << 20) ? 3 : bytes >= (1u << 20) ? 5 : 11;
    double lat[16], bw[16];
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        if (hcq_allreduce(bufs, n, HCQ_F32, HCQ_REDUCE_SUM)) {
            bench_fail(b, what);
            goto out;
        }
        double s = (double)(hcq_now_ns() - t0) / 1e9;
        lat[r] = s * 1e6;
        bw[r] = (double)bytes / s * 2.0 * (n - 1) / n / 1e9;
    }
    char name[80];
    snprintf(name, sizeof name, "%s: latency", what);
    bench_add(b, name, "us", bench_stats(lat, rounds), 0);
    snprintf(name, sizeof name, "%s: bus bandwidth", what);
    bench_add(b, name, "GB/s", bench_stats(bw, rounds), 0);
out:
    for (uint32_t i = 0; i < n; i++) hcq_buffer_free(bufs[i]);
}

void bench_allreduce(bench_ctx *b)
{
    const hcq_device_props *p = hcq_device_get_props(b->dev);
    hcq_device *devs[AR_MAX_DEVS] = {b->dev};
    uint32_t ndev = 1;
    char names[32][16];
    uint32_t nn = hcq_device_list(names, 32);
    size_t kl = strlen(p->kind);
    for (uint32_t i = 0; i < nn && i < 32 && ndev < AR_MAX_DEVS; i++) {
        if (strncmp(names[i], p->kind, kl) || names[i][kl] != ':' || !strcmp(names[i], p->id)) continue;
        if (!(devs[ndev] = hcq_device_open(names[i]))) {
            bench_fail(b, names[i]);
            continue;
        }
        ndev++;
    }
    if (ndev < 2) {
        fprintf(stderr, "hcq bench: allreduce needs two or more devices of one kind; %s is the only %s device%s\n", p->id,
                p->kind, p->is_mock ? " (the mock models up to 8: HCQ_MOCK_CONFIG=nv=H100x8 or amd=gfx942x8)" : "");
        return;
    }
    if (p->is_mock)
        snprintf(b->note, sizeof b->note,
                 "allreduce on the mock: the form of the figures only (its engines are host threads, its copies "
                 "memcpy, its kernels host code: not a GPU's speed)");
    /* 4 KiB to 256 MiB in steps of 4x (to 1 MiB with --quick) */
    uint64_t top = b->quick ? (1u << 20) : (256u << 20);
    for (uint32_t n = 2; n <= ndev; n *= 2)
        for (uint64_t bytes = 4096; bytes <= top; bytes *= 4) one(b, devs, n, bytes);
    for (uint32_t i = 1; i < ndev; i++) hcq_device_close(devs[i]);
}
