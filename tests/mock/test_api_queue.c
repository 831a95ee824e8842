/* Queue semantics on the device under test (HCQ_TEST_DEVICE): signals,
 * waits, ordering, timeouts, and resubmission with patched variables of
 * every kind. Runs unchanged on the CPU device and on the mock GPUs. */
#include "hcqtest.h"

#include <string.h>

static hcq_device *dev;

static void setup(void) { dev = t_open(); }
static void teardown(void) { T_OK(hcq_device_close(dev)); }

TestSuite(api_queue, .init = setup, .fini = teardown, .timeout = 120);

Test(api_queue, signal_from_compute_and_copy_reaches_host)
{
    for (int t = 0; t < 2; t++) {
        hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
        hcq_queue *q = T_NONNULL(hcq_queue_create(dev, (hcq_queue_type)t));
        T_OK(hcq_queue_signal(q, s, HCQ_IMM(42)));
        T_OK(hcq_queue_submit(q, NULL, 0));
        T_OK(hcq_signal_wait(s, 42, 0));
        cr_assert_eq(hcq_signal_value(s), 42);
        T_OK(hcq_queue_destroy(q));
        T_OK(hcq_signal_destroy(s));
    }
}

Test(api_queue, signal_jump_is_exact)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 7));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(7 + 0xff)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(s, 7 + 0xff, 0));
    cr_assert_eq(hcq_signal_value(s), 7 + 0xff);
    hcq_queue_destroy(q);
}

Test(api_queue, satisfied_wait_passes)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 10));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, s, HCQ_IMM(5)));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(done, 1, 0));
}

Test(api_queue, unsatisfied_wait_blocks_until_host_sets)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, s, HCQ_IMM(3)));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_FAILS(hcq_signal_wait(done, 1, 100 * 1000 * 1000), HCQ_ETIMEDOUT);
    cr_assert_eq(hcq_signal_value(done), 0);
    hcq_signal_set(s, 3);
    T_OK(hcq_signal_wait(done, 1, 0));
}

Test(api_queue, wait_timeout_names_observed_value)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 41));
    uint64_t t0 = hcq_now_ns();
    T_FAILS(hcq_signal_wait(s, 42, 50 * 1000 * 1000), HCQ_ETIMEDOUT);
    uint64_t dt = hcq_now_ns() - t0;
    cr_assert(dt >= 50 * 1000 * 1000ull, "returned after %llu ns", (unsigned long long)dt);
    T_MSG_HAS("value is 41");
    T_MSG_HAS("reach 42");
}

Test(api_queue, empty_queue_submit_is_harmless)
{
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_queue_submit(q, NULL, 0));
    cr_assert_eq(hcq_queue_command_count(q), 0);
    T_OK(hcq_device_synchronize(dev));
}

Test(api_queue, exec_order_within_queue_resubmitted)
{
    /* wait(tl) -> inc -> inc -> signal, 100 times: 200 proves every launch
     * ran, in order, once per submission */
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0;
    hcq_buffer *ctr = t_buffer_from(dev, &zero, 4);
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(ctr);
    T_OK(hcq_queue_wait(q, s, HCQ_VAR(0)));
    T_OK(hcq_queue_exec(q, inc, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_queue_exec(q, inc, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(1)));
    T_OK(hcq_device_synchronize(dev));
    for (uint64_t i = 0; i < 100; i++) {
        uint64_t v[2] = {i, i + 1};
        T_OK(hcq_queue_submit(q, v, 2));
    }
    T_OK(hcq_signal_wait(s, 100, 0));
    uint32_t out = 0;
    t_read(ctr, &out, 4);
    cr_assert_eq(out, 200);
}

Test(api_queue, copy_queue_waits_for_compute_submitted_later)
{
    enum { N = 1024 };
    hcq_program *add1 = t_load(dev, t_k_add1());
    uint32_t host[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *a = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    T_OK(hcq_device_synchronize(dev));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));

    hcq_queue *cq = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_wait(cq, s, HCQ_IMM(1)));
    T_OK(hcq_queue_copy(cq, HCQ_IMM(hcq_buffer_va(b)), HCQ_IMM(hcq_buffer_va(a)), HCQ_IMM(sizeof host)));
    T_OK(hcq_queue_signal(cq, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(cq, NULL, 0));

    hcq_queue *xq = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg args[2] = {hcq_arg_buffer(a), hcq_arg_u32(N)};
    T_OK(hcq_queue_exec(xq, add1, args, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_queue_signal(xq, s, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(xq, NULL, 0));

    T_OK(hcq_signal_wait(done, 1, 0));
    uint32_t out[N];
    t_read(b, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i + 1, "element %d", i);
}

Test(api_queue, resubmit_never_exceeds_last_value)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(0)));
    for (uint64_t i = 1; i <= 50; i++) T_OK(hcq_queue_submit(q, &i, 1));
    T_OK(hcq_signal_wait(s, 50, 0));
    T_FAILS(hcq_signal_wait(s, 51, 20 * 1000 * 1000), HCQ_ETIMEDOUT);
    cr_assert_eq(hcq_signal_value(s), 50);
}

Test(api_queue, patch_signal_address_and_value)
{
    hcq_signal *s1 = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *s2 = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_signal_at(q, HCQ_VAR(0), HCQ_VAR(1)));
    cr_assert_eq(hcq_queue_var_count(q), 2);
    uint64_t v1[2] = {hcq_signal_va(s1), 0x1234};
    T_OK(hcq_queue_submit(q, v1, 2));
    T_OK(hcq_signal_wait(s1, 0x1234, 0));
    uint64_t v2[2] = {hcq_signal_va(s2), 0x5678};
    T_OK(hcq_queue_submit(q, v2, 2));
    T_OK(hcq_signal_wait(s2, 0x5678, 0));
    cr_assert_eq(hcq_signal_value(s1), 0x1234, "the first signal was written again");
    /* a value past 2^32: both halves are patched */
    uint64_t v3[2] = {hcq_signal_va(s1), 0x100000005ull};
    T_OK(hcq_queue_submit(q, v3, 2));
    T_OK(hcq_signal_wait(s1, 0x100000005ull, 0));
}

Test(api_queue, patch_wait_address_and_value)
{
    hcq_signal *g1 = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *g2 = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait_at(q, HCQ_VAR(0), HCQ_VAR(1)));
    T_OK(hcq_queue_signal(q, done, HCQ_VAR(2)));
    uint64_t v1[3] = {hcq_signal_va(g1), 5, 1};
    T_OK(hcq_queue_submit(q, v1, 3));
    hcq_signal_set(g1, 5);
    T_OK(hcq_signal_wait(done, 1, 0));
    uint64_t v2[3] = {hcq_signal_va(g2), 9, 2};
    T_OK(hcq_queue_submit(q, v2, 3));
    hcq_signal_set(g1, 100); /* the old gate no longer matters */
    T_FAILS(hcq_signal_wait(done, 2, 30 * 1000 * 1000), HCQ_ETIMEDOUT);
    hcq_signal_set(g2, 9);
    T_OK(hcq_signal_wait(done, 2, 0));
}

Test(api_queue, patch_kernarg_scalar_and_buffer_address)
{
    enum { N = 256 };
    hcq_program *p = t_load(dev, t_k_muladd());
    uint32_t host[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *a = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host);
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg args[4] = {hcq_arg_addr(HCQ_VAR(0)), hcq_arg_scalar(4, HCQ_VAR(1)), hcq_arg_u32(7), hcq_arg_u32(N)};
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_queue_exec(q, p, args, 4, hcq_dims_1d(N / 32, 32)));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(2)));
    uint64_t v1[3] = {hcq_buffer_va(a), 2, 1};
    T_OK(hcq_queue_submit(q, v1, 3));
    uint64_t v2[3] = {hcq_buffer_va(b), 3, 2};
    T_OK(hcq_queue_submit(q, v2, 3));
    T_OK(hcq_signal_wait(s, 2, 0));
    uint32_t oa[N], ob[N];
    t_read(a, oa, sizeof oa);
    t_read(b, ob, sizeof ob);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(oa[i], (uint32_t)i * 2 + 7, "a[%d]", i);
        cr_assert_eq(ob[i], (uint32_t)i * 3 + 7, "b[%d]", i);
    }
}

Test(api_queue, patch_launch_dims)
{
    /* a 1x1 launch writes only element 0; then every local/grid shape up to
     * 3 in each dimension marks exactly x*y*z elements */
    hcq_program *p = t_load(dev, t_k_mark());
    enum { N = 6 * 6 * 6 * 8 };
    hcq_buffer *out = T_NONNULL(hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(out);
    hcq_dims d = {{HCQ_VAR(0), HCQ_VAR(1), HCQ_VAR(2)}, {HCQ_VAR(3), HCQ_VAR(4), HCQ_VAR(5)}};
    T_OK(hcq_queue_exec(q, p, &a, 1, d));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(6)));
    uint32_t zeros[N] = {0}, host[N];
    uint64_t run = 0;
    for (uint32_t bx = 1; bx <= 3; bx++)
        for (uint32_t by = 1; by <= 3; by++)
            for (uint32_t bz = 1; bz <= 3; bz++) {
                uint32_t gx = bz, gy = bx, gz = by; /* vary the grid too */
                T_OK(hcq_buffer_copyin(out, 0, zeros, sizeof zeros));
                T_OK(hcq_device_synchronize(dev));
                uint64_t v[7] = {gx, gy, gz, bx, by, bz, ++run};
                T_OK(hcq_queue_submit(q, v, 7));
                T_OK(hcq_signal_wait(s, run, 0));
                t_read(out, host, sizeof host);
                uint32_t sum = 0;
                for (int i = 0; i < N; i++) sum += host[i];
                cr_assert_eq(sum, gx * gy * gz * bx * by * bz, "grid %ux%ux%u block %ux%ux%u", gx, gy, gz, bx, by, bz);
            }
    T_OK(hcq_buffer_copyin(out, 0, zeros, sizeof zeros));
    T_OK(hcq_device_synchronize(dev));
    uint64_t v[7] = {1, 1, 1, 1, 1, 1, ++run};
    T_OK(hcq_queue_submit(q, v, 7));
    T_OK(hcq_signal_wait(s, run, 0));
    t_read(out, host, sizeof host);
    cr_assert_eq(host[0], 1);
    for (int i = 1; i < N; i++) cr_assert_eq(host[i], 0, "element %d written by a 1x1 launch", i);
}

Test(api_queue, patched_dims_are_checked_at_submit)
{
    hcq_program *p = t_load(dev, t_k_mark());
    hcq_buffer *out = T_NONNULL(hcq_buffer_alloc(dev, 4096, HCQ_MEM_DEVICE));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(out);
    hcq_dims d = hcq_dims_1d(1, 1);
    d.block[0] = HCQ_VAR(0);
    T_OK(hcq_queue_exec(q, p, &a, 1, d));
    uint64_t too_many = hcq_device_get_props(dev)->max_threads_per_group + 1;
    T_FAILS(hcq_queue_submit(q, &too_many, 1), HCQ_ELIMIT);
    uint64_t zero = 0;
    T_FAILS(hcq_queue_submit(q, &zero, 1), HCQ_EINVAL);
    uint64_t ok = 4;
    T_OK(hcq_queue_submit(q, &ok, 1));
    T_OK(hcq_queue_destroy(q));
}

Test(api_queue, patch_copy_addresses_and_size)
{
    enum { N = 4096 };
    uint8_t src[N], out[N];
    for (int i = 0; i < N; i++) src[i] = (uint8_t)(i * 7 + 3);
    hcq_buffer *a = t_buffer_from(dev, src, N);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    hcq_buffer *c = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    uint8_t zeros[N] = {0};
    T_OK(hcq_buffer_copyin(b, 0, zeros, N));
    T_OK(hcq_buffer_copyin(c, 0, zeros, N));
    T_OK(hcq_device_synchronize(dev));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_copy(q, HCQ_VAR(0), HCQ_VAR(1), HCQ_VAR(2)));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(3)));
    uint64_t v1[4] = {hcq_buffer_va(b), hcq_buffer_va(a), 100, 1};
    T_OK(hcq_queue_submit(q, v1, 4));
    uint64_t v2[4] = {hcq_buffer_va(c) + 10, hcq_buffer_va(a) + 20, 1000, 2};
    T_OK(hcq_queue_submit(q, v2, 4));
    T_OK(hcq_signal_wait(s, 2, 0));
    t_read(b, out, N);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], i < 100 ? src[i] : 0, "b[%d]", i);
    t_read(c, out, N);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], i >= 10 && i < 1010 ? src[i + 10] : 0, "c[%d]", i);
}

Test(api_queue, bound_signal_wait_in_one_queue_many_times)
{
    /* signal(s, 2) then wait(s, 2) in one queue, the host resetting s each
     * time: a queue must see its own earlier signal */
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(2)));
    T_OK(hcq_queue_wait(q, s, HCQ_IMM(2)));
    T_OK(hcq_queue_signal(q, done, HCQ_VAR(0)));
    for (uint64_t i = 1; i <= 300; i++) {
        hcq_signal_set(s, 0);
        T_OK(hcq_queue_submit(q, &i, 1));
        T_OK(hcq_signal_wait(done, i, 0));
    }
}

Test(api_queue, timestamps_are_monotonic)
{
    hcq_signal *t[4];
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    for (int i = 0; i < 4; i++) {
        t[i] = T_NONNULL(hcq_signal_create(dev, 0));
        T_OK(hcq_queue_timestamp(q, t[i]));
    }
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(done, 1, 0));
    for (int i = 1; i < 4; i++)
        cr_assert_geq(hcq_signal_timestamp_ns(t[i]), hcq_signal_timestamp_ns(t[i - 1]), "timestamp %d", i);
    cr_assert_gt(hcq_signal_timestamp_ns(t[0]), 0);
}

Test(api_queue, cross_queue_waits_on_both_engines)
{
    /* ping-pong between the compute and copy engines through one signal */
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *c = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_queue *x = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    for (uint64_t i = 0; i < 20; i++) {
        T_OK(hcq_queue_wait(c, s, HCQ_IMM(2 * i)));
        T_OK(hcq_queue_signal(c, s, HCQ_IMM(2 * i + 1)));
        T_OK(hcq_queue_wait(x, s, HCQ_IMM(2 * i + 1)));
        T_OK(hcq_queue_signal(x, s, HCQ_IMM(2 * i + 2)));
    }
    T_OK(hcq_queue_submit(x, NULL, 0)); /* the copy side first: it waits */
    T_OK(hcq_queue_submit(c, NULL, 0));
    T_OK(hcq_signal_wait(s, 40, 0));
}

Test(api_queue, wrong_queue_type_is_refused)
{
    hcq_program *p = t_load(dev, t_k_inc());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_queue *cq = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    hcq_queue *xq = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(b);
    T_FAILS(hcq_queue_exec(cq, p, &a, 1, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_MSG_HAS("compute queue");
    T_FAILS(hcq_queue_copy(xq, HCQ_IMM(hcq_buffer_va(b)), HCQ_IMM(hcq_buffer_va(b)), HCQ_IMM(8)), HCQ_EINVAL);
    cr_assert_eq(hcq_queue_command_count(cq), 0, "a refused command was recorded");
    cr_assert_eq(hcq_queue_command_count(xq), 0, "a refused command was recorded");
}

Test(api_queue, too_few_variables_is_refused)
{
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(3)));
    uint64_t v[2] = {1, 2};
    T_FAILS(hcq_queue_submit(q, v, 2), HCQ_EINVAL);
    T_MSG_HAS("4 variables");
}
