/* Host cost of launching: recording + submitting one eager launch, one
 * recorded-queue submission, and one node of a replayed 1,000-launch graph,
 * on a device (default CPU; argv[1] or HCQ_DEVICE overrides). The engine
 * runs meanwhile; batches stay below the ring size so the host never waits
 * for it, and the device is synchronised between batches (not timed).
 * Prints median and spread (p10, p90) over batches; --json for JSON. */
#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_stats.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_launch: %s: %s\n", what, hcq_error_message());
    exit(1);
}

/* a kernel with one buffer param that does nothing: launch cost only */
static hcq_kernel *k_empty(void)
{
    hcq_kernel *k = hcq_kernel_create("empty");
    hcq_ir_param_buffer(k, HCQ_U32);
    return k;
}

enum { BATCH = 1000, ROUNDS = 30 };

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    const char *name = argc > 1 && strcmp(argv[1], "--json") ? argv[1] : NULL;
    if (!name && !getenv("HCQ_DEVICE")) name = "CPU";
    hcq_device *dev = hcq_device_open(name);
    if (!dev) die("open");
    hcq_kernel *k = k_empty();
    hcq_program *p = hcq_program_from_kernel(dev, k);
    hcq_kernel_destroy(k);
    if (!p) die("compile");
    hcq_buffer *b = hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE);
    if (!b) die("alloc");
    hcq_arg a = hcq_arg_buffer(b);
    double eager[ROUNDS], queue[ROUNDS], roundtrip[ROUNDS], graph[ROUNDS];

    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < BATCH; i++)
            if (hcq_launch(p, &a, 1, hcq_dims_1d(1, 1))) die("launch");
        eager[r] = (double)(hcq_now_ns() - t0) / BATCH;
        if (hcq_device_synchronize(dev)) die("sync");
    }

    /* a recorded one-launch queue resubmitted with a patched signal value:
     * the stream is patched and copied, nothing waits */
    hcq_queue *q = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE);
    hcq_signal *s = hcq_signal_create(dev, 0);
    if (!q || !s) die("queue");
    if (hcq_queue_exec(q, p, &a, 1, hcq_dims_1d(1, 1)) || hcq_queue_signal(q, s, HCQ_VAR(0))) die("record");
    uint64_t n = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < BATCH; i++) {
            ++n;
            if (hcq_queue_submit(q, &n, 1)) die("submit");
        }
        queue[r] = (double)(hcq_now_ns() - t0) / BATCH;
        if (hcq_signal_wait(s, n, 0)) die("wait");
    }

    /* a patched kernarg: the submission waits for the previous run of the
     * queue (its kernarg memory is rewritten), so this is a round trip */
    hcq_queue *qk = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE);
    hcq_arg va = hcq_arg_addr(HCQ_VAR(0));
    if (!qk || hcq_queue_exec(qk, p, &va, 1, hcq_dims_1d(1, 1)) || hcq_queue_signal(qk, s, HCQ_VAR(1)))
        die("record kernarg queue");
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < 100; i++) {
            uint64_t v[2] = {hcq_buffer_va(b), ++n};
            if (hcq_queue_submit(qk, v, 2)) die("submit");
        }
        roundtrip[r] = (double)(hcq_now_ns() - t0) / 100;
        if (hcq_signal_wait(s, n, 0)) die("wait");
    }

    hcq_graph *g = hcq_graph_create(dev);
    if (!g) die("graph");
    for (int i = 0; i < BATCH; i++)
        if (hcq_graph_launch(g, p, &a, 1, hcq_dims_1d(1, 1))) die("capture");
    if (hcq_graph_replay(g, NULL, 0) || hcq_device_synchronize(dev)) die("first replay");
    hcq_buffer *b2 = hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE);
    for (int r = 0; r < ROUNDS; r++) {
        /* a new input every replay: the patch path is part of the cost */
        if (hcq_graph_set_buffer(g, b, r % 2 ? b2 : NULL)) die("set_buffer");
        uint64_t t0 = hcq_now_ns();
        if (hcq_graph_replay(g, NULL, 0)) die("replay");
        graph[r] = (double)(hcq_now_ns() - t0) / BATCH;
        if (hcq_device_synchronize(dev)) die("sync");
    }

    const hcq_device_props *pr = hcq_device_get_props(dev);
    stat3 se = stats(eager, ROUNDS), sq = stats(queue, ROUNDS), sr = stats(roundtrip, ROUNDS), sg = stats(graph, ROUNDS);
    if (json) {
        printf("{\"hcq\": {\"version\": \"%s\", \"revision\": \"%s\"},\n ", hcq_version(), hcq_build_revision());
        printf("\"device\": \"%s\", \"name\": \"%s\", \"target\": \"%s\", \"unit\": \"ns\",\n", pr->id, pr->name,
               pr->target);
        printf(" \"eager_launch\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", se.p10, se.median, se.p90);
        printf(" \"queue_submit\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", sq.p10, sq.median, sq.p90);
        printf(" \"kernarg_patch_roundtrip\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f},\n", sr.p10, sr.median,
               sr.p90);
        printf(" \"graph_node\": {\"p10\": %.1f, \"median\": %.1f, \"p90\": %.1f}}\n", sg.p10, sg.median, sg.p90);
    } else {
        printf("host cost per launch on %s (%s, target %s); target < 1000 ns\n", pr->id, pr->name, pr->target);
        printf("  %-36s %9s %9s %9s\n", "", "p10 ns", "median", "p90 ns");
        printf("  %-36s %9.1f %9.1f %9.1f\n", "eager hcq_launch (record + submit)", se.p10, se.median, se.p90);
        printf("  %-36s %9.1f %9.1f %9.1f\n", "recorded queue resubmit (signal var)", sq.p10, sq.median, sq.p90);
        printf("  %-36s %9.1f %9.1f %9.1f\n", "graph replay, per node (1000)", sg.p10, sg.median, sg.p90);
        printf("  %-36s %9.1f %9.1f %9.1f\n", "kernarg-patched resubmit (round trip)", sr.p10, sr.median, sr.p90);
    }
    hcq_graph_destroy(g);
    hcq_queue_destroy(q);
    hcq_queue_destroy(qk);
    hcq_signal_destroy(s);
    hcq_buffer_free(b);
    hcq_buffer_free(b2);
    hcq_program_free(p);
    hcq_device_close(dev);
    return 0;
}
