/* Lifetimes and teardown on the device under test: closing a busy device
 * (a queue parked on a signal, a kernel running past the timeout), objects
 * freed while a recording still uses them, stale handles passed to every
 * call, a hung engine, bad graph variables, a signal of another device,
 * and threads sharing one device. Each test sets its knobs in the
 * environment before opening the device (Criterion runs every test in a
 * process of its own). */
#include "hcqtest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "drivers/cpu/cpu.h"

TestSuite(api_lifetime, .timeout = 240);

static hcq_device *open_with(const char *const *env)
{
    for (; env && env[0]; env += 2) setenv(env[0], env[1], 1);
    base_env_reload();
    return t_open();
}

/* The bound every close in this file is held to: the close grace (at most
 * HCQ_TIMEOUT_MS, 1 s) plus the engines' halt limit (1 s), with room for a
 * loaded machine. */
#define CLOSE_BOUND_NS 5000000000ull

static uint64_t timed_close(hcq_device *dev)
{
    uint64_t t0 = hcq_now_ns();
    T_OK(hcq_device_close(dev));
    uint64_t t = hcq_now_ns() - t0;
    cr_assert_lt(t, CLOSE_BOUND_NS, "close took %.0f ms", (double)t / 1e6);
    fprintf(stderr, "%s: close took %.1f ms\n", t_device_name(), (double)t / 1e6);
    return t;
}

/* a fresh open of the device works and computes */
static void still_works(void)
{
    hcq_device *d = t_open();
    T_OK(hcq_device_status(d));
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t v = 41, out = 0;
    hcq_buffer *b = t_buffer_from(d, &v, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 42);
    T_OK(hcq_device_close(d));
}

/* ** 1. closing a busy device */

Test(api_lifetime, close_with_a_queue_parked_on_a_signal)
{
    const char *env[] = {"HCQ_TIMEOUT_MS", "1000", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    hcq_signal *gate = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    /* eager work queued behind the parked engine */
    hcq_arg a = hcq_arg_buffer(c);
    T_OK(hcq_launch(inc, &a, 1, hcq_dims_1d(1, 1)));
    timed_close(dev);
    still_works();
}

Test(api_lifetime, close_with_a_kernel_running_past_the_timeout)
{
    const char *env[] = {"HCQ_TIMEOUT_MS", "1000", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *p = t_load(dev, t_k_spin());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 4096 * 4, HCQ_MEM_DEVICE));
    /* thousands of work-groups, each long: many minutes of work */
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(1u << 22)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(4096, 64)));
    base_sleep_ns(100000000);
    timed_close(dev);
    still_works();
}

/* One long work-group. Compiled CPU code cannot be stopped inside a
 * work-group: close gives up on it at the halt limit (the kernel runs for
 * seconds here) and the device's memory goes when the kernel ends.
 * Interpreted kernels are stopped inside it. The mock's host twins stop
 * between work-groups and at barriers only, and a mock engine is joined,
 * not abandoned: close waits for the work-group, so it is short there. */
Test(api_lifetime, close_with_one_long_work_group)
{
    /* (the bring-up runs under this timeout too: 200 ms timed out on a loaded machine) */
    const char *env[] = {"HCQ_TIMEOUT_MS", "1000", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *p = t_load(dev, t_k_spin());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 4, HCQ_MEM_DEVICE));
    bool cpu = !strcmp(hcq_device_get_props(dev)->kind, "CPU");
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(cpu ? 3u << 29 : 1u << 27)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 1)));
    base_sleep_ns(50000000);
    timed_close(dev);
    still_works();
    /* the abandoned engine (if any) finishes and frees the device */
    for (int i = 0; i < 600 && cpu_abandoned_devices(); i++) base_sleep_ns(100000000);
    cr_assert_eq(cpu_abandoned_devices(), 0u, "the abandoned kernel ended and its device was freed");
}

Test(api_lifetime, close_with_everything_alive)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 256, HCQ_MEM_HOST));
    T_NONNULL(hcq_buffer_view(b, 16, 64));
    T_NONNULL(hcq_signal_create(dev, 3));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(64)};
    T_OK(hcq_queue_exec(q, p, a, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    T_OK(hcq_graph_launch(g, p, a, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_graph_replay(g, NULL, 0));
    hcq_ctx *ctx = T_NONNULL(hcq_ctx_create(dev));
    int64_t shape[1] = {8};
    hcq_tensor *t = T_NONNULL(hcq_ones(ctx, HCQ_F32, shape, 1));
    T_OK(hcq_realize(t));
    timed_close(dev);
    /* the context went with the device: using it is an error, not a crash */
    T_FAILS(hcq_ctx_destroy(ctx), HCQ_ESTATE);
    cr_assert_null(hcq_add_s(t, 1));
    T_FAILS(hcq_tensor_free(t), HCQ_ESTATE);
    still_works();
}

/* ** 2. what a recording uses stays alive */

Test(api_lifetime, freed_program_and_buffer_live_on_in_a_recorded_queue)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *p = t_load(dev, t_k_add1());
    uint32_t host[64] = {0}, out[64];
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *root = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    hcq_buffer *view = T_NONNULL(hcq_buffer_view(root, 0, sizeof host));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(64)};
    hcq_arg av[2] = {hcq_arg_buffer(view), hcq_arg_u32(64)};
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_queue_exec(q, p, a, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_queue_exec(q, p, av, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_queue_signal(q, done, HCQ_VAR(0)));
    /* the user lets go of everything the queue names */
    T_OK(hcq_program_free(p));
    T_FAILS(hcq_program_free(p), HCQ_ESTATE);
    T_OK(hcq_buffer_free(view));
    T_OK(hcq_buffer_free(root));
    T_OK(hcq_signal_destroy(done));
    /* the recording still runs what it recorded, on memory still there */
    for (uint64_t i = 1; i <= 3; i++) T_OK(hcq_queue_submit(q, &i, 1));
    T_OK(hcq_queue_destroy(q)); /* waits, then lets go: the program is unloaded now */
    t_read(b, out, sizeof out);
    for (int i = 0; i < 64; i++) cr_assert_eq(out[i], 3u, "element %d", i);
    T_OK(hcq_device_close(dev));
}

Test(api_lifetime, freed_program_lives_on_in_a_graph)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *p = t_load(dev, t_k_add1());
    uint32_t host[64] = {0}, out[64];
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *b2 = t_buffer_from(dev, host, sizeof host);
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(64)};
    T_OK(hcq_graph_launch(g, p, a, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_graph_replay(g, NULL, 0));
    T_OK(hcq_program_free(p));
    T_OK(hcq_graph_replay(g, NULL, 0));
    /* a replacement freed by the user is held too; the original, freed
     * without one, is refused at the next replay */
    T_OK(hcq_graph_set_buffer(g, b, b2));
    T_OK(hcq_graph_replay(g, NULL, 0));
    t_read(b, out, sizeof out);
    for (int i = 0; i < 64; i++) cr_assert_eq(out[i], 2u, "element %d", i);
    T_OK(hcq_buffer_free(b2));
    T_FAILS(hcq_graph_replay(g, NULL, 0), HCQ_ESTATE);
    T_OK(hcq_graph_set_buffer(g, b, NULL));
    T_OK(hcq_graph_replay(g, NULL, 0));
    t_read(b, out, sizeof out);
    for (int i = 0; i < 64; i++) cr_assert_eq(out[i], 3u, "element %d", i);
    T_OK(hcq_buffer_free(b));
    T_FAILS(hcq_graph_replay(g, NULL, 0), HCQ_ESTATE);
    T_MSG_HAS("was freed");
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_device_status(dev));
    T_OK(hcq_device_close(dev));
}

/* ** 3. stale handles: HCQ_ESTATE (NULL where a pointer is returned), never a crash */

static void all_calls_refuse(hcq_device *dev, hcq_buffer *b, hcq_program *p, hcq_queue *q, hcq_graph *g,
                             hcq_signal *s, hcq_buffer *live_buf, hcq_program *live_prog)
{
    uint32_t x = 0;
    uint64_t v = 0;
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(1)};
    hcq_arg la[2] = {hcq_arg_buffer(live_buf), hcq_arg_u32(1)};
    hcq_param_info pi;
    if (dev) {
        cr_assert_null(hcq_device_get_props(dev));
        cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
        T_FAILS(hcq_device_synchronize(dev), HCQ_ESTATE);
        T_FAILS(hcq_device_status(dev), HCQ_ESTATE);
        cr_assert_null(hcq_device_timeline(dev));
        cr_assert_eq(hcq_device_timeline_value(dev), 0);
        cr_assert_null(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
        cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
        cr_assert_null(hcq_signal_create(dev, 0));
        cr_assert_null(hcq_queue_create(dev, HCQ_QUEUE_COPY));
        cr_assert_null(hcq_graph_create(dev));
        cr_assert_null(hcq_program_load(dev, "x", 1));
        cr_assert_null(hcq_program_from_kernel(dev, NULL));
        cr_assert_null(hcq_ctx_create(dev));
        cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
        T_FAILS(hcq_device_close(dev), HCQ_ESTATE);
    }
    if (b) {
        T_FAILS(hcq_buffer_copyin(b, 0, &x, 4), HCQ_ESTATE);
        T_FAILS(hcq_buffer_copyout(&x, b, 0, 4), HCQ_ESTATE);
        T_FAILS(hcq_buffer_copy(b, 0, b, 0, 4), HCQ_ESTATE);
        cr_assert_null(hcq_buffer_view(b, 0, 4));
        cr_assert_eq(hcq_buffer_va(b), 0);
        cr_assert_eq(hcq_buffer_size(b), 0);
        cr_assert_null(hcq_buffer_device(b));
        cr_assert_null(hcq_buffer_cpu_ptr(b));
        T_FAILS(hcq_buffer_free(b), HCQ_ESTATE);
        if (live_prog) T_FAILS(hcq_launch(live_prog, a, 2, hcq_dims_1d(1, 1)), HCQ_ESTATE);
    }
    if (p) {
        T_FAILS(hcq_launch(p, la, 2, hcq_dims_1d(1, 1)), HCQ_ESTATE);
        cr_assert_null(hcq_program_get_info(p));
        T_FAILS(hcq_program_param(p, 0, &pi), HCQ_ESTATE);
        T_FAILS(hcq_program_free(p), HCQ_ESTATE);
    }
    if (q) {
        T_FAILS(hcq_queue_barrier(q), HCQ_ESTATE);
        T_FAILS(hcq_queue_wait_at(q, HCQ_IMM(0), HCQ_IMM(0)), HCQ_ESTATE);
        T_FAILS(hcq_queue_signal_at(q, HCQ_IMM(0), HCQ_IMM(0)), HCQ_ESTATE);
        T_FAILS(hcq_queue_timestamp_at(q, HCQ_IMM(0)), HCQ_ESTATE);
        T_FAILS(hcq_queue_copy(q, HCQ_IMM(0), HCQ_IMM(0), HCQ_IMM(4)), HCQ_ESTATE);
        if (live_prog) T_FAILS(hcq_queue_exec(q, live_prog, la, 2, hcq_dims_1d(1, 1)), HCQ_ESTATE);
        T_FAILS(hcq_queue_submit(q, &v, 1), HCQ_ESTATE);
        T_FAILS(hcq_queue_reset(q), HCQ_ESTATE);
        cr_assert_eq(hcq_queue_var_count(q), 0);
        cr_assert_eq(hcq_queue_command_count(q), 0);
        T_FAILS(hcq_queue_destroy(q), HCQ_ESTATE);
    }
    if (g) {
        if (live_prog) T_FAILS(hcq_graph_launch(g, live_prog, la, 2, hcq_dims_1d(1, 1)), HCQ_ESTATE);
        if (live_buf) T_FAILS(hcq_graph_copy(g, live_buf, 0, live_buf, 4, 4), HCQ_ESTATE);
        T_FAILS(hcq_graph_set_buffer(g, live_buf, NULL), HCQ_ESTATE);
        T_FAILS(hcq_graph_replay(g, NULL, 0), HCQ_ESTATE);
        cr_assert_eq(hcq_graph_node_count(g), 0);
        T_FAILS(hcq_graph_destroy(g), HCQ_ESTATE);
    }
    if (s) {
        cr_assert_eq(hcq_signal_va(s), 0);
        cr_assert_null(hcq_signal_device(s));
        cr_assert_eq(hcq_signal_value(s), 0);
        hcq_signal_set(s, 5);
        cr_assert_eq(hcq_error_status(), HCQ_ESTATE);
        cr_assert_eq(hcq_signal_timestamp_ns(s), 0);
        T_FAILS(hcq_signal_wait(s, 1, 1000), HCQ_ESTATE);
        T_FAILS(hcq_signal_destroy(s), HCQ_ESTATE);
    }
}

Test(api_lifetime, freed_handles_are_refused_everywhere)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *live_prog = t_load(dev, t_k_add1());
    hcq_buffer *live_buf = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(p));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_signal_destroy(s));
    all_calls_refuse(NULL, b, p, q, g, s, live_buf, live_prog);
    /* a live queue given a freed signal */
    hcq_queue *lq = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_FAILS(hcq_queue_wait(lq, s, HCQ_IMM(1)), HCQ_ESTATE);
    T_FAILS(hcq_queue_signal(lq, s, HCQ_IMM(1)), HCQ_ESTATE);
    T_FAILS(hcq_queue_timestamp(lq, s), HCQ_ESTATE);
    T_FAILS(hcq_queue_exec(lq, p, NULL, 0, hcq_dims_1d(1, 1)), HCQ_ESTATE);
    /* NULLs: a clear error, not a crash */
    cr_assert_null(hcq_device_get_props(NULL));
    T_FAILS(hcq_device_synchronize(NULL), HCQ_EINVAL);
    T_FAILS(hcq_launch(NULL, NULL, 0, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_FAILS(hcq_queue_submit(NULL, NULL, 0), HCQ_EINVAL);
    T_OK(hcq_device_status(dev));
    T_OK(hcq_device_close(dev));
}

Test(api_lifetime, handles_of_a_closed_device_are_refused_everywhere)
{
    /* another device, open throughout, whose objects the stale handles
     * must not reach (made first: a freed object's memory may be handed to
     * a new one, and a stale pointer to it would then name the new one) */
    hcq_device *other = open_with(NULL);
    hcq_program *live_prog = t_load(other, t_k_add1());
    hcq_buffer *live_buf = T_NONNULL(hcq_buffer_alloc(other, 64, HCQ_MEM_DEVICE));
    hcq_device *dev = t_open();
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    T_OK(hcq_device_close(dev));
    all_calls_refuse(dev, b, p, q, g, s, live_buf, live_prog);
    T_OK(hcq_device_status(other));
    T_OK(hcq_device_close(other));
}

/* ** 4. a hung engine fails once, then at once */

Test(api_lifetime, a_hung_engine_is_reported_once_then_at_once)
{
    /* long enough that a loaded machine's scheduler cannot pass for a hang
     * in the set-up's synchronize (300 ms once did, make test on the 2-core
     * VM: the copy engine had not run yet) */
    const char *env[] = {"HCQ_TIMEOUT_MS", "1000", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    T_OK(hcq_device_synchronize(dev));
    hcq_signal *gate = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    hcq_arg a = hcq_arg_buffer(c);
    T_OK(hcq_launch(inc, &a, 1, hcq_dims_1d(1, 1)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_ETIMEDOUT);
    T_MSG_HAS("rptr"); /* the engines' state */
    /* everything after fails at once with the same report */
    uint64_t t0 = hcq_now_ns();
    for (int i = 0; i < 48; i++) {
        T_FAILS(hcq_launch(inc, &a, 1, hcq_dims_1d(1, 1)), HCQ_ETIMEDOUT);
        T_MSG_HAS("hung");
        T_MSG_HAS("rptr");
        uint32_t out;
        T_FAILS(hcq_buffer_copyout(&out, c, 0, 4), HCQ_ETIMEDOUT);
        T_FAILS(hcq_device_synchronize(dev), HCQ_ETIMEDOUT);
    }
    cr_assert_lt(hcq_now_ns() - t0, 300000000ull, "48 rounds of calls on the hung device took %.0f ms",
                 (double)(hcq_now_ns() - t0) / 1e6);
    T_FAILS(hcq_device_status(dev), HCQ_ETIMEDOUT);
    /* freeing is still fine; the memory waits for the close */
    T_OK(hcq_buffer_free(c));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_program_free(inc));
    timed_close(dev);
    still_works();
}

/* ** 5. bad graph variables are refused like bad queue submissions */

Test(api_lifetime, bad_graph_variables_leave_the_device_usable)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *p = t_load(dev, t_k_add1());
    uint32_t host[64] = {0}, out[64];
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(64)};
    hcq_dims d = {{HCQ_IMM(1), HCQ_IMM(1), HCQ_IMM(1)}, {HCQ_VAR(0), HCQ_IMM(1), HCQ_IMM(1)}};
    T_OK(hcq_graph_launch(g, p, a, 2, d));
    uint64_t bad[] = {0, 5000, 1u << 20};
    for (size_t i = 0; i < 3; i++) {
        hcq_status s = hcq_graph_replay(g, &bad[i], 1);
        cr_assert(s == HCQ_ELIMIT || s == HCQ_EINVAL, "block %llu: %s: %s", (unsigned long long)bad[i],
                  hcq_status_name(s), hcq_error_message());
        T_OK(hcq_device_status(dev));
    }
    uint64_t good = 64;
    T_OK(hcq_graph_replay(g, &good, 1));
    t_read(b, out, sizeof out);
    for (int i = 0; i < 64; i++) cr_assert_eq(out[i], 1u, "element %d", i);
    T_OK(hcq_device_close(dev));
}

/* ** 6. a signal of another device */

Test(api_lifetime, a_signal_of_another_device_is_mapped_or_refused_when_recorded)
{
    hcq_device *dev = open_with(NULL);
    hcq_device *other = t_open(); /* the same device opened twice: two devices */
    hcq_signal *s = T_NONNULL(hcq_signal_create(other, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    /* GPUs map each other's signal pages (tests/mock/test_multidev.c);
     * a backend without peer mappings refuses, saying how to order the two */
    hcq_status st = hcq_queue_wait(q, s, HCQ_IMM(1));
    if (st) {
        T_FAILS(st, HCQ_EINVAL);
        T_MSG_HAS("order work across these devices on the host");
        T_FAILS(hcq_queue_signal(q, s, HCQ_IMM(1)), HCQ_EINVAL);
    } else {
        T_OK(hcq_queue_signal(q, s, HCQ_IMM(1)));
    }
    uint32_t n = hcq_queue_command_count(q);
    T_FAILS(hcq_queue_timestamp(q, s), HCQ_EINVAL); /* another device's clock */
    cr_assert_eq(hcq_queue_command_count(q), n);
    cr_assert_eq(n, st ? 0u : 2u);
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_device_close(other));
    T_OK(hcq_device_close(dev));
}

/* ** 7. threads sharing a device: views, allocations, signals, launches
 * and timeline reads at once (TSan runs this too) */

typedef struct share {
    hcq_device *dev;
    hcq_buffer *buf;
    hcq_program *prog;
    int id;
} share;

static void *worker(void *arg)
{
    share *s = arg;
    uint64_t last = 0;
    for (int i = 0; i < 200; i++) {
        hcq_buffer *v = hcq_buffer_view(s->buf, (uint64_t)(s->id * 64 + i % 16) * 4, 4);
        if (!v) return "view";
        hcq_buffer *own = hcq_buffer_alloc(s->dev, 4096 + (uint64_t)i * 64, HCQ_MEM_DEVICE);
        hcq_signal *sig = hcq_signal_create(s->dev, (uint64_t)i);
        if (!own || !sig) return "alloc";
        if (i % 20 == 0) {
            hcq_arg a = hcq_arg_buffer(v);
            if (hcq_launch(s->prog, &a, 1, hcq_dims_1d(1, 1))) return "launch";
        }
        uint64_t t = hcq_device_timeline_value(s->dev);
        if (t < last) return "timeline went back";
        last = t;
        if (hcq_signal_value(sig) != (uint64_t)i) return "signal";
        if (hcq_signal_destroy(sig) || hcq_buffer_free(own) || hcq_buffer_free(v)) return "free";
    }
    return NULL;
}

Test(api_lifetime, threads_share_a_device)
{
    hcq_device *dev = open_with(NULL);
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero[256] = {0}, out[256];
    hcq_buffer *buf = t_buffer_from(dev, zero, sizeof zero);
    enum { T = 4 };
    pthread_t th[T];
    share sh[T];
    for (int i = 0; i < T; i++) {
        sh[i] = (share){dev, buf, inc, i};
        cr_assert_eq(pthread_create(&th[i], NULL, worker, &sh[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        void *r;
        pthread_join(th[i], &r);
        cr_assert_null(r, "thread %d: %s: %s", i, (const char *)r, hcq_error_message());
    }
    t_read(buf, out, sizeof out);
    uint32_t total = 0;
    for (int i = 0; i < 256; i++) total += out[i];
    cr_assert_eq(total, T * 10u, "every launch incremented once");
    T_OK(hcq_buffer_free(buf)); /* no views left */
    T_OK(hcq_device_close(dev));
}

/* A process that ran kernels on the device ends cleanly with
 * LeakSanitizer's exit scan working (under ASan). The mock GPU runs host
 * twins, whose thread-locals give each thread that ran one dynamic TLS the
 * sanitizer tracks; worker threads left alive at exit after their twins
 * were unloaded made the scan read a stale range ("Tracer caught signal
 * 11", "LeakSanitizer has encountered a fatal error") on every run. The
 * child does the work and exits through exit(), so the scan runs there;
 * in a plain build it checks the child's exit only. */
Test(api_lifetime, a_process_that_ran_kernels_exits_cleanly)
{
    int err[2];
    cr_assert_eq(pipe(err), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(err[1], 2);
        close(err[0]);
        hcq_device *dev = hcq_device_open(t_device_name());
        if (!dev) _exit(10);
        hcq_kernel *k = t_k_add1();
        hcq_program *p = hcq_program_from_kernel(dev, k);
        if (!p) _exit(11);
        enum { N = 1 << 16 };
        hcq_buffer *b = hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE);
        hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
        for (int i = 0; i < 4; i++)
            if (hcq_launch(p, a, 2, hcq_dims_1d(N / 64, 64))) _exit(12);
        if (hcq_device_synchronize(dev)) _exit(13);
        hcq_program_free(p); /* unloads the twin; the GPU's workers live on */
        hcq_kernel_destroy(k);
        hcq_buffer_free(b);
        if (hcq_device_close(dev)) _exit(14);
        exit(0);
    }
    close(err[1]);
    char text[8192] = "";
    size_t n = 0;
    ssize_t r;
    while ((r = read(err[0], text + n, sizeof text - 1 - n)) > 0) n += (size_t)r;
    text[n] = 0;
    close(err[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ended with status 0x%x: %s", st, text);
    cr_assert_null(strstr(text, "LeakSanitizer has encountered a fatal error"), "%s", text);
}
