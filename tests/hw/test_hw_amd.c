/* The AMD backend on a real AMD GPU: the end-to-end cases the mock runs
 * (bring-up, copies through the staging ring and between devices, launches
 * whose grid and group sizes arrive through the implicit kernel arguments,
 * recorded queues resubmitted with patched variables, timestamps, two GPUs,
 * a GPU memory fault, and on multi-XCC parts each work-group run once and
 * each signal written once: docs/amd-xcc.md). Skipped, with the reason,
 * where /dev/kfd is absent; kernels are compiled for the GPU's gfx target
 * with clang (HIP, no ROCm needed). No AMD hardware is available to this
 * project: these have run on the mock's checks only (docs/hardware.md). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hcqtest.h"

static hcq_device *dev;

static void setup(void)
{
    dev = t_open_hw("/dev/kfd", "AMD:0", "no AMD GPU here: /dev/kfd is absent (load amdgpu with KFD to run these)");
}

static void teardown(void)
{
    if (dev) T_OK(hcq_device_close(dev));
    dev = NULL;
}

TestSuite(hw_amd, .init = setup, .fini = teardown, .timeout = 300);

Test(hw_amd, bring_up_reports_the_gpu)
{
    const hcq_device_props *p = hcq_device_get_props(dev);
    cr_assert(!p->is_mock);
    cr_assert_eq(strncmp(p->arch, "gfx", 3), 0, "arch %s", p->arch);
    cr_assert_str_eq(p->target, p->arch);
    cr_assert_gt(p->compute_units, 0);
    cr_assert_gt(p->memory_bytes, 1ull << 30);
    cr_assert_eq(strncmp(p->driver_version, "amdkfd 1.", 9), 0, "%s", p->driver_version);
}

Test(hw_amd, copies_round_trip)
{
    enum { N = 9 << 20 }; /* over two SDMA packets' worth */
    uint8_t *in = malloc(N), *out = malloc(N);
    for (size_t i = 0; i < N; i++) in[i] = (uint8_t)(i * 131 + 7);
    hcq_buffer *a = t_buffer_from(dev, in, N), *b = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
    free(in);
    free(out);
}

Test(hw_amd, launches_cover_every_work_item_once)
{
    /* mark writes 1 at each work-item's linear index: sizes read from the
     * implicit arguments; every element exactly once (split over XCCs) */
    hcq_program *p = t_load(dev, t_k_mark());
    enum { N = 7 * 5 * 3 * 64 };
    uint32_t zeros[N] = {0}, host[N];
    hcq_buffer *out = t_buffer_from(dev, zeros, sizeof zeros);
    hcq_arg a = hcq_arg_buffer(out);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_3d(7, 5, 3, 16, 2, 2)));
    t_read(out, host, sizeof host);
    for (int i = 0; i < N; i++) cr_assert_eq(host[i], 1, "element %d", i);
}

Test(hw_amd, recorded_queue_resubmits_with_patched_values)
{
    enum { N = 1024 };
    hcq_program *p = t_load(dev, t_k_muladd());
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *a = t_buffer_from(dev, host, sizeof host);
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_device_synchronize(dev));
    hcq_arg args[4] = {hcq_arg_buffer(a), hcq_arg_scalar(4, HCQ_VAR(0)), hcq_arg_u32(1), hcq_arg_u32(N)};
    hcq_dims d = hcq_dims_1d(N / 64, 64);
    d.block[0] = HCQ_VAR(1);
    d.grid[0] = HCQ_VAR(2);
    T_OK(hcq_queue_exec(q, p, args, 4, d));
    T_OK(hcq_queue_signal(q, s, HCQ_VAR(3)));
    uint64_t v1[4] = {2, 64, N / 64, 1}, v2[4] = {3, 128, N / 128, 2};
    T_OK(hcq_queue_submit(q, v1, 4));
    T_OK(hcq_queue_submit(q, v2, 4));
    T_OK(hcq_signal_wait(s, 2, 0));
    t_read(a, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], ((uint32_t)i * 2 + 1) * 3 + 1, "element %d", i);
    T_OK(hcq_queue_destroy(q));
}

Test(hw_amd, signals_arrive_once_and_in_order)
{
    /* a value written by every XCC would move backwards under this ping-pong */
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *c = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_queue *x = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    for (uint64_t i = 0; i < 200; i++) {
        T_OK(hcq_queue_wait(c, s, HCQ_IMM(2 * i)));
        T_OK(hcq_queue_signal(c, s, HCQ_IMM(2 * i + 1)));
        T_OK(hcq_queue_wait(x, s, HCQ_IMM(2 * i + 1)));
        T_OK(hcq_queue_signal(x, s, HCQ_IMM(2 * i + 2)));
    }
    T_OK(hcq_queue_submit(x, NULL, 0));
    T_OK(hcq_queue_submit(c, NULL, 0));
    T_OK(hcq_signal_wait(s, 400, 0));
    cr_assert_eq(hcq_signal_value(s), 400);
}

Test(hw_amd, timestamps_move_forward)
{
    hcq_signal *t0 = T_NONNULL(hcq_signal_create(dev, 0)), *t1 = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_signal *done = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_timestamp(q, t0));
    T_OK(hcq_queue_timestamp(q, t1));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(done, 1, 0));
    cr_assert_gt(hcq_signal_timestamp_ns(t0), 0);
    cr_assert_geq(hcq_signal_timestamp_ns(t1), hcq_signal_timestamp_ns(t0));
}

Test(hw_amd, two_gpus_transfer)
{
    hcq_device *d1 = t_open_second_hw("AMD");
    enum { N = 1 << 20 };
    uint32_t *in = malloc(N * 4), *out = malloc(N * 4);
    for (int i = 0; i < N; i++) in[i] = (uint32_t)i ^ 0x5a5a5a5au;
    hcq_buffer *a = t_buffer_from(dev, in, N * 4), *b = T_NONNULL(hcq_buffer_alloc(d1, N * 4, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N * 4));
    t_read(b, out, N * 4);
    cr_assert(memcmp(in, out, N * 4) == 0);
    free(in);
    free(out);
    T_OK(hcq_device_close(d1));
}

/* a queue of the second GPU waits, on that GPU, for the first GPU's
 * timeline (its signal page mapped for both), submitted before the work
 * on the first GPU that moves it; the host waits only on the second */
Test(hw_amd, two_gpus_wait_on_each_other_on_the_gpu)
{
    hcq_device *d1 = t_open_second_hw("AMD");
    t_wait_across_gpus(dev, d1);
    T_OK(hcq_device_close(d1));
}

Test(hw_amd, memory_fault_names_the_address_and_kernel)
{
    hcq_program *p = t_load(dev, t_k_copy());
    hcq_buffer *src = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_arg a[3] = {hcq_arg_addr(HCQ_IMM(0x100000ull)), hcq_arg_buffer(src), hcq_arg_u32(1)};
    T_OK(hcq_launch(p, a, 3, hcq_dims_1d(1, 1)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    T_MSG_HAS("0x100000");
    T_MSG_HAS("copy_u32");
}
