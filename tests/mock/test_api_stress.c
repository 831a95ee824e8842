/* Reliability on the device under test: timelines past 2^32, rings so small
 * they wrap under backpressure, a hung queue that times out with a report
 * and leaves the device hung, and a faulting kernel that becomes a clear,
 * sticky error.
 * Each test sets its knobs in the environment before opening the device
 * (Criterion runs every test in a process of its own). */
#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"

TestSuite(api_stress, .timeout = 240);

static hcq_device *open_with(const char *const *env)
{
    for (; env && env[0]; env += 2) setenv(env[0], env[1], 1);
    base_env_reload();
    return t_open();
}

/* out[i] = i * k + c over n work-items, then a slow tail so the engine lags
 * behind the host and the rings fill up. params: u32 *out, u32 k, u32 c, u32 spin */
static hcq_kernel *k_tagged(void)
{
    hcq_kernel *k = hcq_kernel_create("tagged");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref mul = hcq_ir_param_scalar(k, HCQ_U32), add = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref spin = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_int(k, HCQ_U32, 0));
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_U32, 0), spin);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, acc, hcq_ir_const_int(k, HCQ_U32, 3)),
                                      r));
    hcq_ir_endrange(k, r);
    hcq_ir_ref i = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0));
    /* (acc & 0) keeps the loop alive without changing the result */
    hcq_ir_ref keep = hcq_ir_binary(k, HCQ_OP_AND, acc, hcq_ir_const_int(k, HCQ_U32, 0));
    hcq_ir_store(k, out, i, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, i, mul), add),
                                         keep));
    return k;
}

static void timeline_run(uint64_t start)
{
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)start);
    const char *env[] = {"HCQ_TIMELINE_START", v, NULL};
    hcq_device *dev = open_with(env);
    cr_assert_eq(hcq_device_timeline_value(dev), start);
    hcq_program *add1 = t_load(dev, t_k_add1());
    enum { N = 256 };
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *c = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_graph_launch(g, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_copy(g, c, 0, b, 0, sizeof host));
    for (int it = 0; it < 40; it++) {
        T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 64, 64)));
        T_OK(hcq_graph_replay(g, NULL, 0));
        T_OK(hcq_device_synchronize(dev));
    }
    t_read(c, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i + 80, "element %d", i);
    uint64_t end = hcq_device_timeline_value(dev);
    cr_assert_gt(end, start + 80);
    cr_assert_eq(hcq_signal_value(hcq_device_timeline(dev)), end, "the engines wrote the whole 64-bit value");
    T_OK(hcq_device_close(dev));
}

Test(api_stress, timeline_crosses_2_32) { timeline_run((1ull << 32) - 20); }
Test(api_stress, timeline_near_2_63) { timeline_run((1ull << 63) - 20); }

/* Every HCQ_RING_SHIFT the environment accepts (5 to 24) works on every
 * backend: the device opens, runs launches and copies and closes. At 5 the
 * NV GPFIFO ring's 256 bytes once put USERD at an offset RM refuses
 * (NV_ERR_INVALID_OFFSET), so the device did not open. */
static void ring_shift_run(const char *shift)
{
    const char *env[] = {"HCQ_RING_SHIFT", shift, NULL};
    hcq_device *dev = open_with(env);
    cr_assert_not_null(dev, "HCQ_RING_SHIFT=%s: %s", shift, hcq_error_message());
    hcq_program *p = t_load(dev, k_tagged());
    enum { LAUNCHES = 40, G = 4 };
    hcq_buffer *out = T_NONNULL(hcq_buffer_alloc(dev, (size_t)LAUNCHES * G * 4, HCQ_MEM_DEVICE));
    for (uint32_t l = 0; l < LAUNCHES; l++) {
        hcq_buffer *slice = T_NONNULL(hcq_buffer_view(out, (uint64_t)l * G * 4, G * 4));
        hcq_arg a[4] = {hcq_arg_buffer(slice), hcq_arg_u32(l + 1), hcq_arg_u32(l * 7), hcq_arg_u32(1)};
        T_OK(hcq_launch(p, a, 4, hcq_dims_1d(G, 1)));
        T_OK(hcq_buffer_free(slice));
    }
    uint32_t host[LAUNCHES * G];
    t_read(out, host, sizeof host);
    for (uint32_t l = 0; l < LAUNCHES; l++)
        for (uint32_t i = 0; i < G; i++) cr_assert_eq(host[l * G + i], i * (l + 1) + l * 7, "launch %u element %u", l, i);
    T_OK(hcq_device_close(dev));
}

Test(api_stress, ring_shift_smallest_accepted_works) { ring_shift_run("5"); }
Test(api_stress, ring_shift_largest_accepted_works) { ring_shift_run("24"); }

Test(api_stress, small_rings_wrap_under_backpressure)
{
    const char *env[] = {"HCQ_KERNARG_RING_KIB", "64", "HCQ_STAGING_CHUNK_KIB", "4", "HCQ_STAGING_SLOTS", "2",
                         "HCQ_RING_SHIFT", "8", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *p = t_load(dev, k_tagged());
    enum { LAUNCHES = 3000, G = 4 };
    hcq_buffer *out = T_NONNULL(hcq_buffer_alloc(dev, (size_t)LAUNCHES * G * 4, HCQ_MEM_DEVICE));
    /* each launch writes its own slice with its own kernargs: a kernarg
     * slot reused too early shows up as a wrong slice */
    for (uint32_t l = 0; l < LAUNCHES; l++) {
        hcq_buffer *slice = T_NONNULL(hcq_buffer_view(out, (uint64_t)l * G * 4, G * 4));
        hcq_arg a[4] = {hcq_arg_buffer(slice), hcq_arg_u32(l + 1), hcq_arg_u32(l * 7), hcq_arg_u32(l % 64)};
        T_OK(hcq_launch(p, a, 4, hcq_dims_1d(G, 1)));
        T_OK(hcq_buffer_free(slice));
    }
    uint32_t *host = malloc((size_t)LAUNCHES * G * 4);
    cr_assert_not_null(host);
    t_read(out, host, (size_t)LAUNCHES * G * 4);
    for (uint32_t l = 0; l < LAUNCHES; l++)
        for (uint32_t i = 0; i < G; i++)
            cr_assert_eq(host[l * G + i], i * (l + 1) + l * 7, "launch %u element %u", l, i);
    /* staging: 2 slots of 4 KiB carry 100 KiB each way */
    enum { BYTES = 100 * 1024 + 3 };
    uint8_t *in = malloc(BYTES), *back = malloc(BYTES);
    for (int i = 0; i < BYTES; i++) in[i] = (uint8_t)(i * 31 + 7);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, BYTES, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, in, BYTES));
    T_OK(hcq_buffer_copyout(back, b, 0, BYTES));
    cr_assert(memcmp(in, back, BYTES) == 0);
    free(in);
    free(back);
    free(host);
    T_OK(hcq_device_close(dev));
}

Test(api_stress, hung_queue_times_out_with_a_report_and_the_device_is_hung)
{
    const char *env[] = {"HCQ_TIMEOUT_MS", "300", NULL};
    hcq_device *dev = open_with(env);
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    T_OK(hcq_device_synchronize(dev));
    uint64_t done_before = hcq_device_timeline_value(dev);
    /* the compute engine parks on a signal nobody sets... */
    hcq_signal *gate = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    /* ...so the eager launch behind it cannot run */
    hcq_arg a = hcq_arg_buffer(c);
    T_OK(hcq_launch(inc, &a, 1, hcq_dims_1d(1, 1)));
    uint64_t t0 = hcq_now_ns();
    T_FAILS(hcq_device_synchronize(dev), HCQ_ETIMEDOUT);
    cr_assert_lt(hcq_now_ns() - t0, 5000000000ull, "the wait returned at its timeout");
    char want[96];
    snprintf(want, sizeof want, "timeline completed %llu of %llu submitted", (unsigned long long)done_before,
             (unsigned long long)done_before + 1);
    T_MSG_HAS(want);
    T_MSG_HAS("rptr"); /* the engines' positions */
    /* hung from now on (sticky, like a fault): later calls fail at once
     * with the report instead of each waiting out a timeout, even if the
     * engine moves again */
    hcq_signal_set(gate, 1);
    t0 = hcq_now_ns();
    T_FAILS(hcq_device_synchronize(dev), HCQ_ETIMEDOUT);
    T_MSG_HAS("hung");
    T_MSG_HAS(want);
    T_FAILS(hcq_buffer_copyout(&out, c, 0, 4), HCQ_ETIMEDOUT);
    cr_assert_lt(hcq_now_ns() - t0, 100000000ull, "the hung device answered at once");
    T_OK(hcq_device_close(dev));
    /* and the next open of the device works */
    hcq_device *again = t_open();
    T_OK(hcq_device_status(again));
    T_OK(hcq_device_close(again));
}

static bool checked_target(hcq_device *dev)
{
    /* native code on the CPU device is not bounds-checked; every other
     * target runs where an MMU (the interpreter's or the mock's) checks */
    return strcmp(hcq_device_get_props(dev)->target, "cpu") != 0;
}

Test(api_stress, faulting_kernel_is_a_sticky_clear_error)
{
    hcq_device *dev = open_with(NULL);
    if (!checked_target(dev)) {
        T_OK(hcq_device_close(dev));
        cr_skip_test("native cpu kernels are not bounds-checked (HCQ_CPU_TARGET=ir checks them)");
    }
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    T_OK(hcq_device_synchronize(dev));
    /* n = 100000 over a 16-element buffer: the kernel runs off its end */
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(100000)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(100000 / 64, 64)));
    uint64_t t0 = hcq_now_ns();
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    cr_assert_lt(hcq_now_ns() - t0, 1000000000ull, "the fault was reported within a second");
    T_MSG_HAS("add1");                                        /* the kernel */
    T_MSG_HAS(hcq_device_get_props(dev)->id);                 /* the device */
    T_MSG_HAS("0x"); /* an address (which one depends on which work-group ran first) */
    /* sticky: later calls say so instead of hanging */
    T_FAILS(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)), HCQ_EFAULT);
    T_FAILS(hcq_device_status(dev), HCQ_EFAULT);
    cr_assert_null(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    cr_assert_eq(hcq_error_status(), HCQ_EFAULT);
    T_OK(hcq_device_close(dev));
    /* and the next open of the device works */
    hcq_device *again = t_open();
    T_OK(hcq_device_status(again));
    T_OK(hcq_device_close(again));
}
