/* HCQ_PROFILE on the device under test: the trace names every kernel, copy
 * and graph node; GPU spans are monotonic on each engine's track and start
 * after their host-side submit began. */
#include "hcqtest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

TestSuite(api_profile, .timeout = 120);

typedef struct ev {
    unsigned pid, tid;
    double ts, dur;
    char name[64];
} ev;

/* The writer puts one event per line; complete events ("X") only. */
static ev *read_trace(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no trace at %s", path);
    ev *v = calloc(4096, sizeof *v);
    char line[512];
    *n = 0;
    while (fgets(line, sizeof line, f) && *n < 4096) {
        ev e;
        const char *x = strstr(line, "{\"ph\": \"X\"");
        if (x && sscanf(x, "{\"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %lf, \"dur\": %lf, \"name\": \"%63[^\"]",
                        &e.pid, &e.tid, &e.ts, &e.dur, e.name) == 5)
            v[(*n)++] = e;
    }
    fclose(f);
    return v;
}

static int by_ts(const void *a, const void *b)
{
    double x = ((const ev *)a)->ts, y = ((const ev *)b)->ts;
    return (x > y) - (x < y);
}

static unsigned count(const ev *v, size_t n, unsigned tid, const char *name)
{
    unsigned c = 0;
    for (size_t i = 0; i < n; i++) c += v[i].tid == tid && !strcmp(v[i].name, name);
    return c;
}

/* HCQ_PROFILE names a new temporary file (its path into path, T_TMP_PATH bytes) */
static void profile_into(char *path)
{
    int fd = t_tmpfile(path, T_TMP_PATH, "hcq-profile");
    cr_assert_geq(fd, 0);
    close(fd);
    setenv("HCQ_PROFILE", path, 1);
    base_env_reload();
}

Test(api_profile, trace_names_spans_in_order)
{
    char path[T_TMP_PATH];
    profile_into(path);
    hcq_device *dev = t_open();
    hcq_program *add1 = t_load(dev, t_k_add1());
    enum { N = 4096 };
    static uint32_t host[N];
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    for (int i = 0; i < 5; i++) T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 64, 64)));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_buffer *c = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    T_OK(hcq_graph_launch(g, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_copy(g, c, 0, b, 0, sizeof host));
    T_OK(hcq_graph_replay(g, NULL, 0));
    T_OK(hcq_graph_replay(g, NULL, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_queue_exec(q, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(0)));
    for (uint64_t i = 1; i <= 3; i++) T_OK(hcq_queue_submit(q, &i, 1));
    T_OK(hcq_signal_wait(s, 3, 0));
    t_read(b, host, sizeof host);
    cr_assert_eq(host[7], 5 + 2 + 3, "the profiled work still computes the same");
    T_OK(hcq_device_close(dev));

    size_t n;
    ev *v = read_trace(path, &n);
    unlink(path);
    cr_assert_eq(count(v, n, 1, "add1"), 5 + 2 + 3, "eager, graph and queue launches on the compute track");
    cr_assert_eq(count(v, n, 2, "graph copy"), 2);
    cr_assert_geq(count(v, n, 2, "copyin"), 1);
    cr_assert_geq(count(v, n, 3, "add1"), 5, "host submit events");
    qsort(v, n, sizeof *v, by_ts);
    for (unsigned tid = 1; tid <= 2; tid++) {
        double prev_end = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i].tid != tid) continue;
            cr_assert_geq(v[i].dur, 0.0);
            /* in-order engines: a span starts after the one before ended
             * (0.5 µs of slack for the rounding of ts and dur) */
            cr_assert_geq(v[i].ts + 0.5, prev_end, "track %u: %s at %.3f starts before %.3f", tid, v[i].name, v[i].ts,
                          prev_end);
            prev_end = v[i].ts + v[i].dur;
        }
    }
    /* the k-th eager add1 on the GPU starts after the k-th submit began */
    double host_ts[8], gpu_ts[16];
    int nh = 0, ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].name, "add1")) continue;
        if (v[i].tid == 3 && nh < 8) host_ts[nh++] = v[i].ts;
        if (v[i].tid == 1 && ng < 16) gpu_ts[ng++] = v[i].ts;
    }
    for (int k = 0; k < nh && k < 5; k++)
        cr_assert_geq(gpu_ts[k] + 0.5, host_ts[k], "launch %d ran before it was submitted", k);
    free(v);
}

/* every GPU span carries its args and ends a flow that starts on the host
 * track at its submit; the trace names hcq's version and the device's driver */
Test(api_profile, spans_carry_args_and_flows_from_their_submit)
{
    char path[T_TMP_PATH];
    profile_into(path);
    hcq_device *dev = t_open();
    hcq_program *add1 = t_load(dev, t_k_add1());
    enum { N = 1024 };
    static uint32_t host[N];
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 64, 64)));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_exec(q, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_device_close(dev));
    unsetenv("HCQ_PROFILE");
    base_env_reload();

    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[1024];
    unsigned long long starts[64], ends[64];
    int ns = 0, ne = 0, with_args = 0;
    bool version = false, labels = false;
    char want_version[64];
    snprintf(want_version, sizeof want_version, "\"hcq_version\": \"%s\"", hcq_version());
    while (fgets(line, sizeof line, f)) {
        unsigned long long id;
        if (strstr(line, want_version) && strstr(line, "\"hcq_revision\"")) version = true;
        if (strstr(line, "\"process_labels\"") && strstr(line, "target ")) labels = true;
        if (strstr(line, "\"ph\": \"X\"") && strstr(line, "\"tid\": 1,") && strstr(line, "\"add1\"")) {
            cr_assert(strstr(line, "\"args\": {\"grid\": [16, 1, 1], \"block\": [64, 1, 1], \"registers\": ") &&
                          strstr(line, "\"device\": \"") && strstr(line, "\"queue\": \""),
                      "a launch span without its args: %s", line);
            with_args++;
        }
        const char *s = strstr(line, "\"ph\": \"s\"");
        if (s && sscanf(strstr(line, "\"id\": "), "\"id\": %llu", &id) == 1 && ns < 64) {
            cr_assert(strstr(line, "\"tid\": 3,"), "flows start on the host track: %s", line);
            starts[ns++] = id;
        }
        const char *e = strstr(line, "\"ph\": \"f\"");
        if (e && sscanf(strstr(line, "\"id\": "), "\"id\": %llu", &id) == 1 && ne < 64) {
            cr_assert(!strstr(line, "\"tid\": 3,"), "flows end on an engine's track: %s", line);
            ends[ne++] = id;
        }
    }
    fclose(f);
    unlink(path);
    cr_assert(version, "the trace names hcq's version and revision");
    cr_assert(labels, "each device process is labelled with its driver and target");
    cr_assert_eq(with_args, 2, "the eager and the recorded launch");
    cr_assert_geq(ne, 3, "copyin, the eager launch and the queue's launch end flows");
    for (int i = 0; i < ne; i++) {
        bool found = false;
        for (int k = 0; k < ns; k++) found |= starts[k] == ends[i];
        cr_assert(found, "flow %llu ends but never starts", ends[i]);
    }
}

/* Threads sharing one device, profiled: each launches and synchronizes
 * while the others do. A synchronize resolves and frees every finished
 * span, another thread's included, so a launch must not touch its span
 * after queueing it (it read the span's flow after the free: ASan's
 * use-after-free, TSan's race on the pending list; in a plain build a
 * flow id read from freed memory). Every submit's flow ends on exactly one
 * GPU span. */
enum { PT_THREADS = 6, PT_LAUNCHES = 80 };

typedef struct pt_arg {
    hcq_program *p;
    hcq_buffer *b;
    hcq_status s;
} pt_arg;

static void *pt_run(void *arg)
{
    pt_arg *a = arg;
    hcq_arg args[2] = {hcq_arg_buffer(a->b), hcq_arg_u32(64)};
    for (int i = 0; i < PT_LAUNCHES && !a->s; i++) {
        a->s = hcq_launch(a->p, args, 2, hcq_dims_1d(1, 64));
        if (!a->s && i % 2) a->s = hcq_device_synchronize(hcq_buffer_device(a->b));
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void threads_round(void)
{
    char path[T_TMP_PATH];
    profile_into(path);
    hcq_device *dev = t_open();
    hcq_program *add1 = t_load(dev, t_k_add1());
    pt_arg a[PT_THREADS];
    pthread_t th[PT_THREADS];
    for (int t = 0; t < PT_THREADS; t++) {
        a[t] = (pt_arg){.p = add1, .b = T_NONNULL(hcq_buffer_alloc(dev, 256, HCQ_MEM_DEVICE))};
        cr_assert_eq(pthread_create(&th[t], NULL, pt_run, &a[t]), 0);
    }
    for (int t = 0; t < PT_THREADS; t++) {
        pthread_join(th[t], NULL);
        cr_assert_eq(a[t].s, HCQ_OK, "thread %d: %s", t, hcq_status_name(a[t].s));
    }
    T_OK(hcq_device_close(dev));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    /* every profiled process writes all its events: a runner that keeps
     * one process for several tests (the TSan shim) has earlier ones too */
    size_t ns = 0, ne = 0, cap = 4096;
    uint64_t *starts = malloc(cap * sizeof *starts), *ends = malloc(cap * sizeof *ends);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long id;
        const char *x = strstr(line, "\"id\": ");
        if (!x || sscanf(x, "\"id\": %llu", &id) != 1) continue;
        bool s_ev = strstr(line, "\"ph\": \"s\"") != NULL, f_ev = strstr(line, "\"ph\": \"f\"") != NULL;
        if ((s_ev && ns == cap) || (f_ev && ne == cap)) {
            cap *= 2;
            starts = realloc(starts, cap * sizeof *starts);
            ends = realloc(ends, cap * sizeof *ends);
        }
        if (s_ev) starts[ns++] = id;
        else if (f_ev) ends[ne++] = id;
    }
    fclose(f);
    unlink(path);
    cr_assert_geq(ns, (size_t)PT_THREADS * PT_LAUNCHES, "one submit flow per launch");
    cr_assert_eq(ne, ns, "one GPU span per submit");
    qsort(starts, ns, sizeof *starts, cmp_u64);
    qsort(ends, ne, sizeof *ends, cmp_u64);
    for (size_t i = 0; i < ns; i++) {
        cr_assert(i == 0 || starts[i] != starts[i - 1], "flow %llu started twice", (unsigned long long)starts[i]);
        cr_assert_eq(starts[i], ends[i], "submit flow %llu ends on no GPU span", (unsigned long long)starts[i]);
    }
    free(starts);
    free(ends);
}

/* the window is narrow: three rounds (before the fix, ASan caught it in about
 * a third of single rounds) */
Test(api_profile, threads_sharing_a_device_lose_no_span)
{
    for (int round = 0; round < 3; round++) threads_round();
}
