/* Round-trip latency on a device (default CPU; argv[1] or HCQ_DEVICE
 * overrides), in one run:
 *   - realize + wait of a tiny kernel: a 1-element tensor op (x * 2 + 1),
 *     hcq_realize then hcq_device_synchronize, the kernel cache hot. Two
 *     rhythms: back to back (the engines are still awake from the previous
 *     round), and after 2 ms idle (they have gone to sleep, so this is the
 *     cost of waking them). Target: back to back under 10 us.
 *   - eager hcq_launch of an empty kernel + hcq_device_synchronize, the
 *     same two rhythms: the device's part without the tensor layer.
 *   - a fresh process whose kernels are all cached: this program started
 *     again (--first-child), from its main() to its first kernel done
 *     (device open, context, realize, wait), and from the parent's spawn to
 *     the same point (adds exec and the dynamic loader). The first child
 *     warms the cache and is not counted. Target: main to first kernel
 *     under 5 ms.
 * Medians (and p10, p90) over rounds; --json prints JSON instead. */
#include <hcq/hcq.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_stats.h"

extern char **environ;

static void die(const char *what)
{
    fprintf(stderr, "bench_latency: %s: %s\n", what, hcq_error_message());
    exit(1);
}

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static hcq_tensor *tiny_op(hcq_tensor *x) { return hcq_add_s(hcq_mul_s(x, 2.0), 1.0); }

/* realize + wait of the tiny op, in us; idle_ns of sleep before each round */
static stat3 tensor_roundtrip(hcq_ctx *ctx, hcq_tensor *x, int rounds, long idle_ns)
{
    hcq_device *dev = hcq_ctx_device(ctx);
    double *v = malloc(sizeof *v * (size_t)rounds);
    if (!v) die("malloc");
    for (int r = 0; r < rounds; r++) {
        size_t m = hcq_ctx_mark(ctx);
        hcq_tensor *y = tiny_op(x);
        if (!y) die("build");
        if (idle_ns) sleep_ns(idle_ns);
        uint64_t t0 = hcq_now_ns();
        if (hcq_realize(y) || hcq_device_synchronize(dev)) die("realize");
        v[r] = (double)(hcq_now_ns() - t0) * 1e-3;
        hcq_ctx_release(ctx, m);
    }
    stat3 s = stats(v, rounds);
    free(v);
    return s;
}

static stat3 launch_roundtrip(hcq_device *dev, hcq_program *p, hcq_arg *a, int rounds, long idle_ns)
{
    double *v = malloc(sizeof *v * (size_t)rounds);
    if (!v) die("malloc");
    for (int r = 0; r < rounds; r++) {
        if (idle_ns) sleep_ns(idle_ns);
        uint64_t t0 = hcq_now_ns();
        if (hcq_launch(p, a, 1, hcq_dims_1d(1, 1)) || hcq_device_synchronize(dev)) die("launch");
        v[r] = (double)(hcq_now_ns() - t0) * 1e-3;
    }
    stat3 s = stats(v, rounds);
    free(v);
    return s;
}

/* The child: prints "<main ns> <open ns> <first kernel done ns>" (monotonic
 * clock, comparable with the parent's) and exits. */
static int first_child(const char *name)
{
    uint64_t t_main = hcq_now_ns();
    hcq_device *dev = hcq_device_open(name);
    if (!dev) die("open");
    uint64_t t_open = hcq_now_ns();
    hcq_ctx *ctx = hcq_ctx_create(dev);
    if (!ctx) die("context");
    hcq_tensor *x = hcq_full(ctx, HCQ_F32, HCQ_SHAPE(1), 3.0);
    hcq_tensor *y = x ? tiny_op(x) : NULL;
    float out = 0;
    if (!y || hcq_tensor_read(y, &out, sizeof out)) die("first kernel");
    uint64_t t_done = hcq_now_ns();
    if (out != 7.0f) {
        fprintf(stderr, "bench_latency: the first kernel computed %g, not 7\n", out);
        return 1;
    }
    printf("%llu %llu %llu\n", (unsigned long long)t_main, (unsigned long long)t_open, (unsigned long long)t_done);
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return 0;
}

/* Runs the child once; the three times in ms: spawn to first kernel, main
 * to first kernel, main to device open. */
static void spawn_child(const char *name, double out[3])
{
    int fd[2];
    if (pipe(fd)) die("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *argv[] = {"bench_latency", "--first-child", (char *)(name ? name : ""), NULL};
    pid_t pid;
    uint64_t t0 = hcq_now_ns();
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ)) die("spawn");
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    char buf[256] = "";
    ssize_t n = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    int ws;
    waitpid(pid, &ws, 0);
    unsigned long long m, o, d;
    if (n <= 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) || sscanf(buf, "%llu %llu %llu", &m, &o, &d) != 3) {
        fprintf(stderr, "bench_latency: the child failed (status 0x%x)\n", ws);
        exit(1);
    }
    out[0] = (double)(d - t0) * 1e-6;
    out[1] = (double)(d - m) * 1e-6;
    out[2] = (double)(o - m) * 1e-6;
}

enum { ROUNDS = 400, IDLE_ROUNDS = 100, CHILDREN = 9 };

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--first-child")) return first_child(argv[2][0] ? argv[2] : NULL);
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    const char *name = argc > 1 && strcmp(argv[1], "--json") ? argv[1] : NULL;
    if (!name && !getenv("HCQ_DEVICE")) name = "CPU";
    hcq_device *dev = hcq_device_open(name);
    if (!dev) die("open");
    const hcq_device_props *pr = hcq_device_get_props(dev);
    hcq_ctx *ctx = hcq_ctx_create(dev);
    if (!ctx) die("context");
    hcq_tensor *x = hcq_full(ctx, HCQ_F32, HCQ_SHAPE(1), 3.0);
    if (!x || hcq_realize(x)) die("input");
    (void)tensor_roundtrip(ctx, x, 20, 0); /* compiles, warms the caches */

    hcq_kernel *k = hcq_kernel_create("empty");
    hcq_ir_param_buffer(k, HCQ_U32);
    hcq_program *p = hcq_program_from_kernel(dev, k);
    hcq_kernel_destroy(k);
    hcq_buffer *b = hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE);
    if (!p || !b) die("empty kernel");
    hcq_arg a = hcq_arg_buffer(b);
    (void)launch_roundtrip(dev, p, &a, 20, 0);

    stat3 tb = tensor_roundtrip(ctx, x, ROUNDS, 0);
    stat3 ti = tensor_roundtrip(ctx, x, IDLE_ROUNDS, 2000000);
    stat3 lb = launch_roundtrip(dev, p, &a, ROUNDS, 0);
    stat3 li = launch_roundtrip(dev, p, &a, IDLE_ROUNDS, 2000000);

    double ch[CHILDREN][3], spawn[CHILDREN], first[CHILDREN], open[CHILDREN];
    spawn_child(name, ch[0]); /* fills the kernel cache */
    for (int i = 0; i < CHILDREN; i++) {
        spawn_child(name, ch[i]);
        spawn[i] = ch[i][0];
        first[i] = ch[i][1];
        open[i] = ch[i][2];
    }
    stat3 cs = stats(spawn, CHILDREN), cf = stats(first, CHILDREN), co = stats(open, CHILDREN);
    bool ok_rt = tb.median < 10, ok_first = cf.median < 5;

    if (json) {
        printf("{\"hcq\": {\"version\": \"%s\", \"revision\": \"%s\"},\n", hcq_version(), hcq_build_revision());
        printf(" \"device\": \"%s\", \"name\": \"%s\", \"target\": \"%s\",\n", pr->id, pr->name, pr->target);
        printf(" \"tensor_roundtrip_us\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", tb.p10, tb.median, tb.p90);
        printf(" \"tensor_roundtrip_idle_us\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", ti.p10, ti.median,
               ti.p90);
        printf(" \"launch_roundtrip_us\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", lb.p10, lb.median, lb.p90);
        printf(" \"launch_roundtrip_idle_us\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", li.p10, li.median,
               li.p90);
        printf(" \"first_kernel_ms\": {\"p10\": %.2f, \"median\": %.2f, \"p90\": %.2f},\n", cf.p10, cf.median, cf.p90);
        printf(" \"spawn_to_first_kernel_ms\": {\"p10\": %.2f, \"median\": %.2f, \"p90\": %.2f},\n", cs.p10, cs.median,
               cs.p90);
        printf(" \"device_open_ms\": {\"p10\": %.2f, \"median\": %.2f, \"p90\": %.2f},\n", co.p10, co.median, co.p90);
        printf(" \"targets_met\": {\"roundtrip\": %s, \"first_kernel\": %s}}\n", ok_rt ? "true" : "false",
               ok_first ? "true" : "false");
    } else {
        printf("round trips on %s (%s, target %s)\n", pr->id, pr->name, pr->target);
        printf("  %-52s %8s %8s %8s\n", "", "p10", "median", "p90");
        printf("  %-52s %8.1f %8.1f %8.1f us  (target < 10 us)  %s\n", "1-element op, realize + wait, back to back",
               tb.p10, tb.median, tb.p90, ok_rt ? "ok" : "MISSED");
        printf("  %-52s %8.1f %8.1f %8.1f us\n", "1-element op, realize + wait, after 2 ms idle", ti.p10, ti.median,
               ti.p90);
        printf("  %-52s %8.1f %8.1f %8.1f us\n", "empty kernel, hcq_launch + synchronize, back to back", lb.p10,
               lb.median, lb.p90);
        printf("  %-52s %8.1f %8.1f %8.1f us\n", "empty kernel, hcq_launch + synchronize, after 2 ms idle", li.p10,
               li.median, li.p90);
        printf("  %-52s %8.2f %8.2f %8.2f ms  (target < 5 ms)  %s\n", "new process, kernels cached: main to first kernel",
               cf.p10, cf.median, cf.p90, ok_first ? "ok" : "MISSED");
        printf("  %-52s %8.2f %8.2f %8.2f ms\n", "  of which device open", co.p10, co.median, co.p90);
        printf("  %-52s %8.2f %8.2f %8.2f ms\n", "  spawn to first kernel (adds exec, loader)", cs.p10, cs.median,
               cs.p90);
    }
    hcq_buffer_free(b);
    hcq_program_free(p);
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return 0;
}
