/* hcq bench: the figures a driver engineer asks for first, measured on one
 * device through the public API, each as the median (and spread) of
 * repeated runs: host cost per launch, empty-kernel round trip, graph
 * replay per node, copy bandwidth each way, elementwise and reduction
 * bandwidth, matmul rate. --vs-cuda measures the same through the CUDA
 * driver API (dlopen'd here, never linked) where it is installed. */
#include "tools/bench.h"

#include "tools/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ** statistics */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stat bench_stats(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    bench_stat s = {v[n / 2], v[n / 10], v[(n * 9) / 10], n};
    return s;
}

void bench_add(bench_ctx *b, const char *name, const char *unit, bench_stat s, double cuda_median)
{
    if (b->n == BENCH_MAX_RESULTS) return;
    bench_result *r = &b->r[b->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    r->s = s;
    r->cuda = cuda_median;
}

/* ** helpers over the public API */
static hcq_program *load(bench_ctx *b, hcq_kernel *k)
{
    hcq_program *p = hcq_program_from_kernel(b->dev, k);
    if (!p) bench_fail(b, hcq_kernel_name(k));
    hcq_kernel_destroy(k);
    return p;
}

void bench_fail(bench_ctx *b, const char *what)
{
    fprintf(stderr, "hcq bench: %s: %s\n", what, hcq_error_message());
    b->failures++;
}

/* GPU time of one launch, from timestamps around it, in µs */
static double gpu_us(bench_ctx *b, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims d)
{
    hcq_queue_reset(b->q);
    hcq_signal *tl = hcq_device_timeline(b->dev);
    if (hcq_queue_wait(b->q, tl, HCQ_IMM(hcq_device_timeline_value(b->dev))) || hcq_queue_timestamp(b->q, b->t0) ||
        hcq_queue_exec(b->q, p, args, nargs, d) || hcq_queue_timestamp(b->q, b->t1) ||
        hcq_queue_signal(b->q, b->done, HCQ_IMM(++b->done_value)) || hcq_queue_submit(b->q, NULL, 0) ||
        hcq_signal_wait(b->done, b->done_value, 0)) {
        bench_fail(b, "a timed launch");
        return -1;
    }
    return (double)(hcq_signal_timestamp_ns(b->t1) - hcq_signal_timestamp_ns(b->t0)) / 1000.0;
}

/* ** the measurements */
static void launches(bench_ctx *b)
{
    hcq_program *p = load(b, tk_empty());
    hcq_buffer *buf = hcq_buffer_alloc(b->dev, 64, HCQ_MEM_DEVICE);
    if (!p || !buf) return;
    hcq_arg a = hcq_arg_buffer(buf);
    int rounds = b->quick ? 8 : 20, batch = 500;
    double v[64];
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < batch; i++)
            if (hcq_launch(p, &a, 1, hcq_dims_1d(1, 1))) return bench_fail(b, "launch");
        v[r] = (double)(hcq_now_ns() - t0) / batch / 1000.0;
        if (hcq_device_synchronize(b->dev)) return bench_fail(b, "sync");
    }
    bench_add(b, "launch: host enqueue per launch", "us", bench_stats(v, rounds), bench_cuda_launch_enqueue(b));
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        if (hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)) || hcq_device_synchronize(b->dev)) return bench_fail(b, "launch");
        v[r] = (double)(hcq_now_ns() - t0) / 1000.0;
    }
    bench_add(b, "launch: empty kernel round trip", "us", bench_stats(v, rounds), bench_cuda_launch_roundtrip(b));
    for (int nodes = 1; nodes <= 1000; nodes *= 10) {
        hcq_graph *g = hcq_graph_create(b->dev);
        for (int i = 0; g && i < nodes; i++)
            if (hcq_graph_launch(g, p, &a, 1, hcq_dims_1d(1, 1))) return bench_fail(b, "graph capture");
        double host[64], total[64];
        for (int r = 0; g && r < rounds; r++) {
            uint64_t t0 = hcq_now_ns();
            if (hcq_graph_replay(g, NULL, 0)) return bench_fail(b, "replay");
            uint64_t t1 = hcq_now_ns();
            if (hcq_device_synchronize(b->dev)) return bench_fail(b, "sync");
            host[r] = (double)(t1 - t0) / nodes / 1000.0;
            total[r] = (double)(hcq_now_ns() - t0) / nodes / 1000.0;
        }
        char name[80];
        snprintf(name, sizeof name, "graph %4d nodes: host cost per node", nodes);
        bench_add(b, name, "us", bench_stats(host, rounds), bench_cuda_graph_node(b, nodes, false));
        snprintf(name, sizeof name, "graph %4d nodes: replay per node", nodes);
        bench_add(b, name, "us", bench_stats(total, rounds), bench_cuda_graph_node(b, nodes, true));
        hcq_graph_destroy(g);
    }
    hcq_buffer_free(buf);
    hcq_program_free(p);
}

static void copies(bench_ctx *b)
{
    uint64_t size = b->quick ? 16ull << 20 : 64ull << 20;
    uint8_t *host = malloc(size);
    hcq_buffer *d0 = hcq_buffer_alloc(b->dev, size, HCQ_MEM_DEVICE), *d1 = hcq_buffer_alloc(b->dev, size, HCQ_MEM_DEVICE);
    if (!host || !d0 || !d1) {
        bench_fail(b, "allocating copy buffers");
        goto out;
    }
    memset(host, 1, size);
    int rounds = b->quick ? 3 : 7;
    double h2d[16], d2h[16], d2d[16];
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        if (hcq_buffer_copyin(d0, 0, host, size) || hcq_device_synchronize(b->dev)) goto fail;
        uint64_t t1 = hcq_now_ns();
        if (hcq_buffer_copyout(host, d0, 0, size)) goto fail;
        uint64_t t2 = hcq_now_ns();
        if (hcq_buffer_copy(d1, 0, d0, 0, size) || hcq_device_synchronize(b->dev)) goto fail;
        uint64_t t3 = hcq_now_ns();
        h2d[r] = (double)size / (double)(t1 - t0);
        d2h[r] = (double)size / (double)(t2 - t1);
        d2d[r] = (double)size / (double)(t3 - t2);
    }
    bench_add(b, "copy host->device (copyin, staged)", "GB/s", bench_stats(h2d, rounds), bench_cuda_copy(b, 0, size));
    bench_add(b, "copy device->host (copyout, staged)", "GB/s", bench_stats(d2h, rounds), bench_cuda_copy(b, 1, size));
    bench_add(b, "copy device->device (same device)", "GB/s", bench_stats(d2d, rounds), bench_cuda_copy(b, 2, size));
    /* between two devices, where a second of the same kind exists */
    if (b->peer) {
        hcq_buffer *p = hcq_buffer_alloc(b->peer, size, HCQ_MEM_DEVICE);
        double x[16];
        for (int r = 0; p && r < rounds; r++) {
            uint64_t t0 = hcq_now_ns();
            if (hcq_buffer_copy(p, 0, d0, 0, size) || hcq_device_synchronize(b->peer)) {
                bench_fail(b, "copy between devices");
                break;
            }
            x[r] = (double)size / (double)(hcq_now_ns() - t0);
        }
        if (p) {
            char name[80];
            snprintf(name, sizeof name, "copy device->device (to %s)", hcq_device_get_props(b->peer)->id);
            bench_add(b, name, "GB/s", bench_stats(x, rounds), 0);
        }
        hcq_buffer_free(p);
    }
    goto out;
fail:
    bench_fail(b, "copies");
out:
    hcq_buffer_free(d0);
    hcq_buffer_free(d1);
    free(host);
}

static void kernels(bench_ctx *b)
{
    const hcq_device_props *pr = hcq_device_get_props(b->dev);
    /* interpreted targets (the mock, the ir CPU target) run ~50x slower */
    bool slow = b->quick || pr->is_mock || !strcmp(pr->target, "ir");
    int n = slow ? 1 << 20 : 1 << 24, rounds = slow ? 3 : 7;
    hcq_program *vadd = load(b, tk_vadd()), *sum = load(b, tk_sum()), *mm = load(b, tk_matmul());
    hcq_buffer *x = hcq_buffer_alloc(b->dev, (uint64_t)n * 4, HCQ_MEM_DEVICE);
    hcq_buffer *y = hcq_buffer_alloc(b->dev, (uint64_t)n * 4, HCQ_MEM_DEVICE);
    hcq_buffer *z = hcq_buffer_alloc(b->dev, (uint64_t)n * 4, HCQ_MEM_DEVICE);
    if (!vadd || !sum || !mm || !x || !y || !z) {
        bench_fail(b, "kernel setup");
        goto out;
    }
    double v[16];
    hcq_arg va[4] = {hcq_arg_buffer(x), hcq_arg_buffer(y), hcq_arg_buffer(z), hcq_arg_i32(n)};
    for (int r = 0; r < rounds; r++) v[r] = 3.0 * 4 * n / (gpu_us(b, vadd, va, 4, hcq_dims_1d(n / 256, 256)) * 1e3);
    bench_add(b, "elementwise c = a + b (f32)", "GB/s", bench_stats(v, rounds), 0);
    int per = 64 * TK_SUM_LOCAL, groups = n / per;
    hcq_arg sa[4] = {hcq_arg_buffer(x), hcq_arg_buffer(y), hcq_arg_i32(n), hcq_arg_i32(per)};
    for (int r = 0; r < rounds; r++)
        v[r] = 4.0 * n / (gpu_us(b, sum, sa, 4, hcq_dims_1d((uint32_t)groups, TK_SUM_LOCAL)) * 1e3);
    bench_add(b, "reduction sum (f32, pass 1)", "GB/s", bench_stats(v, rounds), 0);
    int m = slow ? 128 : 512;
    hcq_arg ma[6] = {hcq_arg_buffer(x), hcq_arg_buffer(y), hcq_arg_buffer(z), hcq_arg_i32(m), hcq_arg_i32(m), hcq_arg_i32(m)};
    for (int r = 0; r < rounds; r++)
        v[r] = 2.0 * m * m * m / (gpu_us(b, mm, ma, 6, hcq_dims_3d((uint32_t)m / 16, (uint32_t)m / 16, 1, 16, 16, 1)) * 1e3);
    char name[80];
    snprintf(name, sizeof name, "matmul %dx%dx%d f32 (naive IR)", m, m, m);
    bench_add(b, name, "GFLOP/s", bench_stats(v, rounds), 0);
out:
    hcq_buffer_free(x);
    hcq_buffer_free(y);
    hcq_buffer_free(z);
    hcq_program_free(vadd);
    hcq_program_free(sum);
    hcq_program_free(mm);
}

static void print_text(const bench_ctx *b)
{
    const hcq_device_props *p = hcq_device_get_props(b->dev);
    printf("hcq bench on %s: %s%s\n  arch %s, target %s%s%s\n", p->id, p->name, p->is_mock ? " [mock]" : "", p->arch,
           p->target, p->driver_version[0] ? ", driver " : "", p->driver_version);
    if (b->cuda_status[0]) printf("  CUDA driver API: %s\n", b->cuda_status);
    printf("\n  %-44s %10s %10s %10s  %-8s", "", "median", "p10", "p90", "unit");
    printf(b->cuda_ok ? " %10s %7s\n" : "\n", "CUDA", "hcq/CUDA");
    for (int i = 0; i < b->n; i++) {
        const bench_result *r = &b->r[i];
        printf("  %-44s %10.3f %10.3f %10.3f  %-8s", r->name, r->s.median, r->s.p10, r->s.p90, r->unit);
        if (b->cuda_ok && r->cuda > 0) printf(" %10.3f %7.2f", r->cuda, r->s.median / r->cuda);
        printf("\n");
    }
    printf("\n  GB/s are 10^9 bytes per second; GiB/s = GB/s x 0.931.\n");
    if (b->note[0]) printf("  %s.\n", b->note);
}

static void print_json(const bench_ctx *b)
{
    const hcq_device_props *p = hcq_device_get_props(b->dev);
    printf("{");
    tool_json_hcq(stdout);
    printf(",\n \"device\": {\"id\": ");
    tool_json_str(stdout, p->id);
    printf(", \"name\": ");
    tool_json_str(stdout, p->name);
    printf(", \"arch\": ");
    tool_json_str(stdout, p->arch);
    printf(", \"target\": ");
    tool_json_str(stdout, p->target);
    printf(", \"driver\": ");
    tool_json_str(stdout, p->driver_version);
    printf(", \"mock\": %s},\n \"cuda\": ", p->is_mock ? "true" : "false");
    tool_json_str(stdout, b->cuda_status);
    if (b->note[0]) {
        printf(",\n \"note\": ");
        tool_json_str(stdout, b->note);
    }
    printf(",\n \"results\": [\n");
    for (int i = 0; i < b->n; i++) {
        const bench_result *r = &b->r[i];
        printf("  {\"name\": \"%s\", \"unit\": \"%s\", \"median\": %.6g, \"p10\": %.6g, \"p90\": %.6g, \"runs\": %d",
               r->name, r->unit, r->s.median, r->s.p10, r->s.p90, r->s.runs);
        if (!strcmp(r->unit, "GB/s")) printf(", \"median_gib_s\": %.6g", r->s.median * 1e9 / (1024.0 * 1024 * 1024));
        if (r->cuda > 0) printf(", \"cuda_median\": %.6g", r->cuda);
        printf("}%s\n", i + 1 < b->n ? "," : "");
    }
    printf(" ]}\n");
}

/* --matmul-sizes "1024,2048": 1 to 8 sizes from 16 to 16384; 1 (said) if not */
static int parse_sizes(const char *s, bench_ctx *b)
{
    const char *p = s;
    b->n_mm = 0;
    while (*p) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 16 || v > 16384 || b->n_mm == 8 || (*end && *end != ',')) {
            fprintf(stderr, "hcq bench: --matmul-sizes %s: up to 8 sizes from 16 to 16384, separated by commas\n", s);
            return 1;
        }
        b->mm_sizes[b->n_mm++] = v;
        p = *end ? end + 1 : end;
    }
    if (!b->n_mm) {
        fprintf(stderr, "hcq bench: --matmul-sizes: no size given\n");
        return 1;
    }
    return 0;
}

int tool_bench(int argc, char **argv)
{
    bench_ctx b = {0};
    const char *dev = NULL, *only = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) {
            printf("usage: hcq bench [--device D] [--json] [--quick] [--only launch|copy|kernels|matmul|allreduce] [--vs-cuda]\n"
                   "                 [--matmul-sizes N[,N...]] [--beam W]\n\n"
                   "Host cost per launch, empty-kernel round trip, graph replay per node (1..1000 nodes),\n"
                   "copy bandwidth (host->device, device->host, device->device, and to a second device of the\n"
                   "same kind when present), elementwise and reduction bandwidth, a naive matmul's GFLOP/s, the\n"
                   "tensor layer's matmul TFLOP/s in f32, f16 and bf16: medians with p10/p90 over repeated runs.\n"
                   "--only allreduce (not in the default run): hcq_allreduce latency and bus bandwidth\n"
                   "(size/time x 2(n-1)/n) on 2, 4 and 8 devices of the device's kind, 4 KiB to 256 MiB each\n"
                   "(to 1 MiB with --quick); on the mock, HCQ_MOCK_CONFIG=nv=H100x8 gives it 8 GPUs.\n"
                   "--vs-cuda measures launches and copies through the CUDA driver API (libcuda, loaded with\n"
                   "dlopen) on a machine that has NVIDIA's driver.\n"
                   "--matmul-sizes: the tensor matmuls' sizes (16 to 16384, up to 8; default 4096 on a GPU, 1024 on\n"
                   "the CPU device, 256 with --quick or on the mock). --beam W: each matmul again after a plan search\n"
                   "of width W (HCQ_BEAM; its winner is cached like a kernel), named \"(tensor, beam W)\"; where the\n"
                   "device refuses the search (the mock GPUs) it says why instead.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--device") && i + 1 < argc) dev = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--quick")) b.quick = true;
        else if (!strcmp(argv[i], "--vs-cuda")) b.vs_cuda = true;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--matmul-sizes") && i + 1 < argc) {
            if (parse_sizes(argv[++i], &b)) return 2;
        } else if (!strcmp(argv[i], "--beam") && i + 1 < argc) {
            char *end;
            unsigned long w = strtoul(argv[++i], &end, 10);
            if (*end || w < 1 || w > 64) {
                fprintf(stderr, "hcq bench: --beam %s: a search width from 1 to 64\n", argv[i]);
                return 2;
            }
            b.beam = (uint32_t)w;
        }
        else return tool_bad_arg("bench", argv[i]); /* or --device / --only without a value */
    }
    /* a selector bench does not know measures nothing: say so as a usage
     * error, not an empty table and exit 0 */
    static const char *const parts[] = {"launch", "copy", "kernels", "matmul", "allreduce"};
    bool known = !only;
    for (size_t i = 0; i < sizeof parts / sizeof *parts && !known; i++) known = !strcmp(only, parts[i]);
    if (!known) {
        fprintf(stderr, "hcq bench: --only %s: no such part; the parts are launch, copy, kernels, matmul and allreduce (of the device "
                "--device names, else HCQ_DEVICE, else the best present)\n", only);
        return 2;
    }
    if (!(b.dev = hcq_device_open(dev))) return tool_fail("opening the device");
    b.q = hcq_queue_create(b.dev, HCQ_QUEUE_COMPUTE);
    b.t0 = hcq_signal_create(b.dev, 0);
    b.t1 = hcq_signal_create(b.dev, 0);
    b.done = hcq_signal_create(b.dev, 0);
    if (!b.q || !b.t0 || !b.t1 || !b.done) return tool_fail("setting up");
    /* a second device of the same kind, for device-to-device copies */
    const hcq_device_props *pr = hcq_device_get_props(b.dev);
    char names[32][16];
    uint32_t n = hcq_device_list(names, 32);
    for (uint32_t i = 0; i < n && i < 32 && strcmp(pr->kind, "CPU"); i++)
        if (!strncmp(names[i], pr->kind, strlen(pr->kind)) && strcmp(names[i], pr->id)) {
            b.peer = hcq_device_open(names[i]);
            break;
        }
    if (b.vs_cuda) bench_cuda_open(&b);
    if (!only || !strcmp(only, "launch")) launches(&b);
    if (!only || !strcmp(only, "copy")) copies(&b);
    if (!only || !strcmp(only, "kernels")) kernels(&b);
    if (!only || !strcmp(only, "matmul")) bench_matmul(&b);
    if (only && !strcmp(only, "allreduce")) bench_allreduce(&b); /* opens every device of the kind: asked for by name */
    bench_cuda_close(&b);
    if (json) print_json(&b);
    else print_text(&b);
    int rc = b.failures ? 1 : 0;
    if (!b.n && !b.failures) {
        fprintf(stderr, "hcq bench: nothing was measured on %s%s%s\n", pr->id, only ? " with --only " : "",
                only ? only : "");
        rc = 1;
    }
    hcq_queue_destroy(b.q);
    hcq_signal_destroy(b.t0);
    hcq_signal_destroy(b.t1);
    hcq_signal_destroy(b.done);
    hcq_device_close(b.peer);
    hcq_device_close(b.dev);
    return rc;
}
