/* The NV backend on a real NVIDIA GPU: the end-to-end cases the mock runs
 * (bring-up, copies through the staging ring and device to device,
 * launches with kernargs in constant bank 0, recorded queues resubmitted
 * with patched variables, graphs, timestamps, two GPUs, an MMU fault).
 * Skipped, with the reason, where /dev/nvidiactl is absent; kernels are
 * compiled for the GPU's sm_* target (clang + ptxas, or nvcc, or a cache
 * filled elsewhere with `hcq compile --target sm_XX`). */
#include <criterion/criterion.h>
#include <string.h>

#include "hcqtest.h"

static hcq_device *dev;

static void setup(void)
{
    dev = t_open_hw("/dev/nvidiactl", "NV:0", "no NVIDIA GPU here: /dev/nvidiactl is absent (load the NVIDIA driver to run these)");
}

static void teardown(void)
{
    if (dev) T_OK(hcq_device_close(dev));
    dev = NULL;
}

TestSuite(hw_nv, .init = setup, .fini = teardown, .timeout = 300);

Test(hw_nv, bring_up_reports_the_gpu)
{
    const hcq_device_props *p = hcq_device_get_props(dev);
    cr_assert(!p->is_mock);
    cr_assert_eq(strncmp(p->arch, "sm_", 3), 0, "arch %s", p->arch);
    cr_assert_str_eq(p->target, p->arch);
    cr_assert_gt(p->compute_units, 0);
    cr_assert_gt(p->memory_bytes, 1ull << 30);
    cr_assert_neq(p->driver_version[0], 0);
    cr_assert_lt(p->fixed_memory_bytes, 128ull << 20);
}

Test(hw_nv, copies_round_trip)
{
    enum { N = 3 << 20 };
    uint8_t *in = malloc(N), *out = malloc(N);
    for (size_t i = 0; i < N; i++) in[i] = (uint8_t)(i * 131 + 7);
    hcq_buffer *a = t_buffer_from(dev, in, N), *b = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
    free(in);
    free(out);
}

Test(hw_nv, launches_read_their_kernargs)
{
    enum { N = 100000 };
    hcq_program *p = t_load(dev, t_k_muladd());
    uint32_t *host = malloc(N * 4);
    for (uint32_t i = 0; i < N; i++) host[i] = i;
    hcq_buffer *b = t_buffer_from(dev, host, N * 4);
    hcq_arg a[4] = {hcq_arg_buffer(b), hcq_arg_u32(3), hcq_arg_u32(11), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, a, 4, hcq_dims_1d((N + 255) / 256, 256)));
    t_read(b, host, N * 4);
    for (uint32_t i = 0; i < N; i++) cr_assert_eq(host[i], i * 3 + 11, "element %u", i);
    free(host);
}

Test(hw_nv, recorded_queue_resubmits_with_patched_dims_and_signals)
{
    hcq_program *p = t_load(dev, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(c);
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_queue_wait(q, s, HCQ_VAR(0)));
    hcq_dims d = {{HCQ_VAR(2), HCQ_IMM(1), HCQ_IMM(1)}, {HCQ_IMM(32), HCQ_IMM(1), HCQ_IMM(1)}};
    T_OK(hcq_queue_exec(q, p, &a, 1, d));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(1)));
    for (uint64_t i = 0; i < 50; i++) {
        uint64_t v[3] = {i, i + 1, 1 + i % 7};
        T_OK(hcq_queue_submit(q, v, 3));
    }
    T_OK(hcq_signal_wait(s, 50, 0));
    t_read(c, &out, 4);
    cr_assert_eq(out, 50);
    cr_assert_gt(hcq_signal_timestamp_ns(s), 0, "the release wrote the GPU time");
}

Test(hw_nv, graph_replays)
{
    enum { N = 4096 };
    hcq_program *p = t_load(dev, t_k_add1());
    uint32_t host[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *b = t_buffer_from(dev, host, sizeof host), *c = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_graph_launch(g, p, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_copy(g, c, 0, b, 0, sizeof host));
    for (int i = 0; i < 20; i++) T_OK(hcq_graph_replay(g, NULL, 0));
    t_read(c, host, sizeof host);
    for (int i = 0; i < N; i++) cr_assert_eq(host[i], (uint32_t)i + 20, "element %d", i);
    T_OK(hcq_graph_destroy(g));
}

Test(hw_nv, two_gpus_copy_between_them)
{
    hcq_device *d1 = t_open_second_hw("NV");
    enum { N = 1 << 20 };
    uint8_t *in = malloc(N), *out = malloc(N);
    for (size_t i = 0; i < N; i++) in[i] = (uint8_t)(i ^ 0x5a);
    hcq_buffer *a = t_buffer_from(dev, in, N), *b = T_NONNULL(hcq_buffer_alloc(d1, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
    free(in);
    free(out);
    T_OK(hcq_device_close(d1));
}

/* a queue of the second GPU waits, on that GPU, for the first GPU's
 * timeline (its signal page mapped for both), submitted before the work
 * on the first GPU that moves it; the host waits only on the second */
Test(hw_nv, two_gpus_wait_on_each_other_on_the_gpu)
{
    hcq_device *d1 = t_open_second_hw("NV");
    t_wait_across_gpus(dev, d1);
    T_OK(hcq_device_close(d1));
}

Test(hw_nv, an_mmu_fault_names_the_address_and_the_kernel)
{
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    T_MSG_HAS("add1");
}
