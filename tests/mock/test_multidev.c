/* Many devices in one process (issue 23 items 1 and 3): a queue of one GPU
 * waits, on its own GPU, for a signal of another (the signal's page mapped
 * for both: NV through UVM external ranges, AMD through kfd
 * MAP_MEMORY_TO_GPU with the second GPU's id), on both mocks, with and
 * without peer links between the GPUs (signals are host memory, which
 * every GPU reaches whatever the links); the refusals where no mapping can
 * exist; and mock servers of up to 8 GPUs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "drivers/amd/amd_abi.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "mem/mem.h"

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void) { mock_configure(""); }
TestSuite(multidev, .init = setup, .fini = teardown, .timeout = 240);

static hcq_device *open_dev(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "%s: %s", name, hcq_error_message());
    return d;
}

/* Queue B (on `b`) waits for `a`'s timeline to pass its next value, then
 * writes its own signal; it is submitted first, and only then does a
 * launch on `a` move that timeline. The host waits on B's signal alone:
 * B's engine sat on the wait until A's engine wrote A's timeline, so the
 * ordering ran on the GPUs. */
static void wait_across(const char *spec, const char *na, const char *nb)
{
    T_OK(mock_configure(spec));
    hcq_device *a = open_dev(na), *b = open_dev(nb);
    enum { N = 256 };
    hcq_program *pa = t_load(a, t_k_add1());
    uint32_t host[N] = {0}, out[N];
    hcq_buffer *buf = t_buffer_from(a, host, sizeof host);
    T_OK(hcq_device_synchronize(a));

    hcq_signal *tl = T_NONNULL(hcq_device_timeline(a));
    uint64_t next = hcq_device_timeline_value(a) + 1;
    hcq_signal *done = T_NONNULL(hcq_signal_create(b, 0));
    for (int t = 0; t < 2; t++) {
        hcq_queue *q = T_NONNULL(hcq_queue_create(b, (hcq_queue_type)t));
        T_OK(hcq_queue_wait(q, tl, HCQ_IMM(next)));
        T_OK(hcq_queue_signal(q, done, HCQ_IMM((uint64_t)t + 1)));
        hcq_signal_set(done, (uint64_t)t);
        T_OK(hcq_queue_submit(q, NULL, 0));
        /* nothing on `a` has moved its timeline: B's engine waits */
        cr_assert_lt(hcq_signal_value(tl), next, "%s: %s's timeline moved by itself", spec, na);
        cr_assert_eq(hcq_signal_value(done), (uint64_t)t, "%s: %s's %s queue passed a wait nothing satisfied", spec,
                     nb, t ? "copy" : "compute");
        if (t == 0) {
            hcq_arg args[2] = {hcq_arg_buffer(buf), hcq_arg_u32(N)};
            T_OK(hcq_launch(pa, args, 2, hcq_dims_1d(N / 64, 64)));
        } else {
            T_OK(hcq_buffer_copyin(buf, 0, host, 4)); /* any eager call moves the timeline */
        }
        T_OK(hcq_signal_wait(done, (uint64_t)t + 1, 0));
        cr_assert_geq(hcq_signal_value(tl), next, "%s: %s's queue went on before %s's timeline got there", spec, nb, na);
        next = hcq_device_timeline_value(a) + 1;
        T_OK(hcq_queue_destroy(q));
    }
    t_read(buf, out, sizeof out);
    cr_assert_eq(out[1], 1u, "%s: the launch on %s", spec, na);

    /* the other way: A's queue waits for a signal B's queue writes */
    hcq_signal *go = T_NONNULL(hcq_signal_create(b, 0)), *seen = T_NONNULL(hcq_signal_create(a, 0));
    hcq_queue *qa = T_NONNULL(hcq_queue_create(a, HCQ_QUEUE_COMPUTE));
    hcq_queue *qb = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_wait(qa, go, HCQ_IMM(5)));
    T_OK(hcq_queue_signal(qa, seen, HCQ_IMM(7)));
    T_OK(hcq_queue_signal(qb, go, HCQ_IMM(5)));
    T_OK(hcq_queue_submit(qa, NULL, 0));
    cr_assert_eq(hcq_signal_value(seen), 0u, "%s: %s's queue passed its wait early", spec, na);
    T_OK(hcq_queue_submit(qb, NULL, 0));
    T_OK(hcq_signal_wait(seen, 7, 0));
    cr_assert_eq(hcq_signal_value(go), 5u);

    T_OK(hcq_queue_destroy(qa));
    T_OK(hcq_queue_destroy(qb));
    T_OK(hcq_signal_destroy(go));
    T_OK(hcq_signal_destroy(seen));
    T_OK(hcq_signal_destroy(done));
    T_OK(hcq_program_free(pa));
    T_OK(hcq_buffer_free(buf));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(multidev, an_nv_queue_waits_on_another_gpus_timeline_on_its_gpu)
{
    wait_across("nv=H100x2", "NV:0", "NV:1");
}
Test(multidev, nv_signals_cross_without_peer_links) { wait_across("nv=H100x2,nv_peer=none", "NV:1", "NV:0"); }
Test(multidev, an_amd_queue_waits_on_another_gpus_timeline_on_its_gpu)
{
    wait_across("amd=gfx1100x2", "AMD:0", "AMD:1");
}
Test(multidev, amd_signals_cross_on_a_multi_xcc_part) { wait_across("amd=gfx942x4", "AMD:3", "AMD:1"); }

/* a device of another kind shares no memory with a mock GPU: refused with
 * the way out, nothing recorded */
Test(multidev, a_signal_of_another_kind_of_device_is_refused)
{
    T_OK(mock_configure(""));
    hcq_device *cpu = open_dev("CPU"), *nv = open_dev("NV:0");
    hcq_signal *s = T_NONNULL(hcq_signal_create(cpu, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(nv, HCQ_QUEUE_COMPUTE));
    T_FAILS(hcq_queue_wait(q, s, HCQ_IMM(1)), HCQ_EINVAL);
    T_MSG_HAS("devices of different kinds");
    T_MSG_HAS("order work across these devices on the host");
    T_FAILS(hcq_queue_signal(q, s, HCQ_IMM(1)), HCQ_EINVAL);
    cr_assert_eq(hcq_queue_command_count(q), 0);
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(nv));
    T_OK(hcq_device_close(cpu));
}

/* no queue writes a timeline, its own device's or another's: the
 * timeline counts that device's own submissions */
Test(multidev, no_queue_writes_a_timeline)
{
    T_OK(mock_configure("nv=H100x2"));
    hcq_device *a = open_dev("NV:0"), *b = open_dev("NV:1");
    for (int k = 0; k < 2; k++) {
        hcq_queue *q = T_NONNULL(hcq_queue_create(k ? b : a, HCQ_QUEUE_COMPUTE));
        T_FAILS(hcq_queue_signal(q, hcq_device_timeline(a), HCQ_IMM(1)), HCQ_EINVAL);
        T_MSG_HAS("NV:0's timeline");
        T_OK(hcq_queue_wait(q, hcq_device_timeline(a), HCQ_IMM(0)));
        cr_assert_eq(hcq_queue_command_count(q), 1u);
        T_OK(hcq_queue_destroy(q));
    }
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

/* a timestamp is the signal's own device's clock: not across devices */
Test(multidev, a_timestamp_into_another_devices_signal_is_refused)
{
    T_OK(mock_configure("nv=H100x2"));
    hcq_device *a = open_dev("NV:0"), *b = open_dev("NV:1");
    hcq_signal *s = T_NONNULL(hcq_signal_create(a, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COPY));
    T_FAILS(hcq_queue_timestamp(q, s), HCQ_EINVAL);
    T_MSG_HAS("in its clock");
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

/* The mock's kfd refuses to map a buffer for a GPU id that is not one of
 * the process's (kfd_ioctl_map_memory_to_gpu: kfd_process_device_data_by_id
 * finds no device, EINVAL), and maps for every GPU the process acquired. */
Test(multidev, kfd_maps_only_for_the_processs_gpus)
{
    T_OK(mock_configure("amd=gfx1100x2"));
    hcq_device *a = open_dev("AMD:0"), *b = open_dev("AMD:1");
    hcq_signal *s = T_NONNULL(hcq_signal_create(a, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, s, HCQ_IMM(1))); /* its page mapped for AMD:1 */
    hcq_buffer *buf = T_NONNULL(hcq_buffer_alloc(a, 4096, HCQ_MEM_DEVICE));
    int fd = sys_open("/dev/kfd", 2);
    cr_assert_geq(fd, 0);
    uint32_t ids[1] = {0xdead};
    kfd_map_memory_args m = {.handle = buf->mem.handle, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids,
                             .n_devices = 1};
    cr_assert_eq(sys_ioctl(fd, KFD_IOC_MAP_MEMORY, &m), -EINVAL);
    cr_assert_eq(m.n_success, 0u);
    sys_close(fd);
    T_OK(hcq_buffer_free(buf));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(b));
    /* the page goes with AMD:0: unmapped from both GPUs first, else kfd
     * refuses to free it (EBUSY) and the buffer stays */
    T_OK(hcq_device_close(a));
    cr_assert_eq(mock_amd_P.nbos, 0u, "buffers left in the mock's kfd");
}

/* up to 8 GPUs per model; a ninth is refused by name */
Test(multidev, the_mock_models_eight_gpus_of_a_kind)
{
    T_OK(mock_configure("nv=H100x8,amd=gfx942x8"));
    cr_assert_eq(hcq_device_count("NV", NULL, 0), 8u);
    cr_assert_eq(hcq_device_count("AMD", NULL, 0), 8u);
    hcq_device *first = open_dev("NV:0"), *last = open_dev("NV:7");
    hcq_signal *s = T_NONNULL(hcq_signal_create(first, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(last, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(3)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(s, 3, 0));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(last));
    T_OK(hcq_device_close(first));
    cr_assert_neq(mock_configure("nv=H100x9"), HCQ_OK);
    T_MSG_HAS("0 to 8");
}

/* The mapping is what lets the other GPU reach the signal: a wait on its
 * raw address (hcq_queue_wait_at maps nothing) faults on the waiting GPU,
 * as the hardware's MMU would */
static void unmapped_faults(const char *spec, const char *na, const char *nb)
{
    T_OK(mock_configure(spec));
    hcq_device *a = open_dev(na), *b = open_dev(nb);
    hcq_signal *s = T_NONNULL(hcq_signal_create(a, 1));
    hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COMPUTE));
    hcq_signal *done = T_NONNULL(hcq_signal_create(b, 0));
    T_OK(hcq_queue_wait_at(q, HCQ_IMM(hcq_signal_va(s)), HCQ_IMM(1)));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_FAILS(hcq_signal_wait(done, 1, 0), HCQ_EFAULT);
    cr_assert(strstr(hcq_error_message(), nb), "%s", hcq_error_message());
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(multidev, nv_an_unmapped_signal_of_another_gpu_faults) { unmapped_faults("nv=H100x2", "NV:0", "NV:1"); }
Test(multidev, amd_an_unmapped_signal_of_another_gpu_faults) { unmapped_faults("amd=gfx1100x2", "AMD:0", "AMD:1"); }

/* ** peer copies (item 2): on the source's copy engine through a peer
 * mapping, ordered on both GPUs (no host wait in between), or through host
 * memory where no link lets one GPU reach the other's memory; the debug log
 * says which ran. Each copy sits between launches on both devices, so a
 * copy that ran out of order leaves a wrong element. */
static hcq_status copy_logged(hcq_buffer *dst, hcq_buffer *src, uint64_t size, char *log, size_t log_size)
{
    t_stderr c = t_stderr_begin();
    hcq_status s = hcq_buffer_copy(dst, 0, src, 0, size);
    t_stderr_end(c, log, log_size);
    return s;
}

/* HCQ_DEBUG=1 (the copies' log) is set while no device runs: the engines
 * read the environment */
static void debug_log(bool on)
{
    if (on) setenv("HCQ_DEBUG", "1", 1);
    else unsetenv("HCQ_DEBUG");
    base_env_reload();
}

static void copies_between(const char *spec, const char *na, const char *nb, bool peer)
{
    T_OK(mock_configure(spec));
    debug_log(true);
    hcq_device *d[2] = {open_dev(na), open_dev(nb)};
    enum { N = 3000 };
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 7 + 3;
    hcq_program *p[2];
    hcq_buffer *b[2];
    for (int k = 0; k < 2; k++) {
        p[k] = t_load(d[k], t_k_add1());
        b[k] = T_NONNULL(hcq_buffer_alloc(d[k], sizeof host, HCQ_MEM_DEVICE));
    }
    T_OK(hcq_buffer_copyin(b[0], 0, host, sizeof host));
    for (int dir = 0; dir < 2; dir++) { /* 0 -> 1, then 1 -> 0 */
        int from = dir, to = 1 - dir;
        hcq_arg af[2] = {hcq_arg_buffer(b[from]), hcq_arg_u32(N)}, at[2] = {hcq_arg_buffer(b[to]), hcq_arg_u32(N)};
        T_OK(hcq_launch(p[from], af, 2, hcq_dims_1d((N + 63) / 64, 64))); /* before the copy, on the source */
        T_OK(hcq_launch(p[to], at, 2, hcq_dims_1d((N + 63) / 64, 64)));   /* before it, on the destination */
        char log[8192];
        T_OK(copy_logged(b[to], b[from], sizeof host, log, sizeof log));
        cr_assert(strstr(log, peer ? "through a peer mapping, ordered on the GPUs" : "through host memory"),
                  "%s: %s -> %s: %s", spec, d[from]->props.id, d[to]->props.id, log);
        if (!peer) cr_assert(strstr(log, "no peer path"), "%s: the reason: %s", spec, log);
        T_OK(hcq_launch(p[to], at, 2, hcq_dims_1d((N + 63) / 64, 64))); /* after it, on the destination */
        t_read(b[to], out, sizeof out);
        for (int i = 0; i < N; i++)
            cr_assert_eq(out[i], host[i] + 2, "%s: copy %d, element %d", spec, dir, i);
        for (int i = 0; i < N; i++) host[i] = out[i];
    }
    for (int k = 0; k < 2; k++) {
        T_OK(hcq_program_free(p[k]));
        T_OK(hcq_buffer_free(b[k]));
    }
    T_OK(hcq_device_close(d[1]));
    T_OK(hcq_device_close(d[0]));
    debug_log(false);
    /* kfd frees a buffer only once no GPU maps it: the peers' mappings went first */
    if (!strncmp(spec, "amd", 3)) cr_assert_eq(mock_amd_P.nbos, 0u, "%s: buffers left in the mock's kfd", spec);
}

Test(multidev, nv_peer_copies_run_on_the_copy_engine_ordered_on_the_gpus)
{
    copies_between("nv=H100x2", "NV:0", "NV:1", true);
}
Test(multidev, nv_copies_without_a_link_are_staged) { copies_between("nv=H100x2,nv_peer=none", "NV:0", "NV:1", false); }

/* The copy waits on the GPU, not the host: the destination's work before
 * it is held back by a gate only the host opens, later; hcq_buffer_copy
 * returns meanwhile (a host wait for the destination would never end), the
 * source's timeline stands at the copy, and once the gate opens the copy
 * lands after the destination's launch and before its next one. Then the
 * source is gated: the destination's next launch waits for the copy. */
static void copy_waits_on_the_gpu(const char *spec, const char *na, const char *nb)
{
    T_OK(mock_configure(spec));
    hcq_device *a = open_dev(na), *b = open_dev(nb);
    enum { N = 1024 };
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3 + 1;
    hcq_program *pb = t_load(b, t_k_add1());
    hcq_buffer *ba = t_buffer_from(a, host, sizeof host);
    hcq_buffer *bb = t_buffer_from(b, host, sizeof host);
    T_OK(hcq_device_synchronize(a));
    T_OK(hcq_device_synchronize(b));
    hcq_signal *gate = T_NONNULL(hcq_signal_create(b, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    hcq_arg args[2] = {hcq_arg_buffer(bb), hcq_arg_u32(N)};
    T_OK(hcq_launch(pb, args, 2, hcq_dims_1d(N / 64, 64))); /* behind the gate */
    T_OK(hcq_buffer_copy(bb, 0, ba, 0, sizeof host));
    uint64_t copy_at = hcq_device_timeline_value(a);
    cr_assert_lt(hcq_signal_value(hcq_device_timeline(a)), copy_at, "%s: the copy ran before %s's earlier launch",
                 spec, nb);
    T_OK(hcq_launch(pb, args, 2, hcq_dims_1d(N / 64, 64))); /* after the copy */
    hcq_signal_set(gate, 1);
    t_read(bb, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], host[i] + 1, "%s: element %d", spec, i);
    cr_assert_geq(hcq_signal_value(hcq_device_timeline(a)), copy_at);

    /* the other side: the source's copy engine is held by a gate, so the
     * copy cannot run; the destination's later work waits for it on the
     * destination's GPU (its timeline stands until the gate opens) */
    hcq_signal *gate2 = T_NONNULL(hcq_signal_create(a, 0));
    hcq_queue *qa = T_NONNULL(hcq_queue_create(a, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_wait(qa, gate2, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(qa, NULL, 0));
    for (int i = 0; i < N; i++) host[i] += 100;
    T_OK(hcq_buffer_copyin(ba, 0, host, sizeof host)); /* behind the gate too (a's copy engine) */
    T_OK(hcq_buffer_copy(bb, 0, ba, 0, sizeof host));
    T_OK(hcq_launch(pb, args, 2, hcq_dims_1d(N / 64, 64)));
    uint64_t launch_at = hcq_device_timeline_value(b);
    cr_assert_lt(hcq_signal_value(hcq_device_timeline(b)), launch_at,
                 "%s: %s's launch after the copy ran before the copy could", spec, nb);
    hcq_signal_set(gate2, 1);
    t_read(bb, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], host[i] + 1, "%s: after the second copy, element %d", spec, i);
    T_OK(hcq_queue_destroy(qa));
    T_OK(hcq_signal_destroy(gate2));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(gate));
    T_OK(hcq_program_free(pb));
    T_OK(hcq_buffer_free(ba));
    T_OK(hcq_buffer_free(bb));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(multidev, nv_a_peer_copy_is_ordered_on_both_gpus)
{
    copy_waits_on_the_gpu("nv=H100x2,nv_peer=nvlink", "NV:0", "NV:1");
}

Test(multidev, amd_peer_copies_run_on_sdma_ordered_on_the_gpus)
{
    copies_between("amd=gfx1100x2", "AMD:0", "AMD:1", true);
}
Test(multidev, amd_xgmi_peers_copy_on_a_multi_xcc_part)
{
    copies_between("amd=gfx942x4,amd_peer=xgmi", "AMD:2", "AMD:0", true);
}
Test(multidev, amd_copies_without_a_link_are_staged) { copies_between("amd=gfx1100x2,amd_peer=none", "AMD:1", "AMD:0", false); }
Test(multidev, amd_a_peer_copy_is_ordered_on_both_gpus)
{
    copy_waits_on_the_gpu("amd=gfx1100x2", "AMD:0", "AMD:1");
}

/* hcq_device_peer_access asks the drivers: a peer path with a link, the
 * reason without one, and none between kinds. (One AMD configuration per
 * test: the KFD process keeps its files open until the process exits.) */
static void peer_access_case(const char *spec, const char *na, const char *nb, bool peer)
{
    T_OK(mock_configure(spec));
    hcq_device *a = open_dev(na), *b = open_dev(nb);
    T_OK(hcq_device_peer_access(a, a));
    hcq_status s = hcq_device_peer_access(a, b);
    cr_assert_eq(s, peer ? HCQ_OK : HCQ_ENOTSUP, "%s: %s", spec, hcq_error_message());
    if (!peer) T_MSG_HAS("no peer path");
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(multidev, peer_access_between_nv_gpus_and_kinds)
{
    peer_access_case("nv=H100x2", "NV:0", "NV:1", true);
    peer_access_case("nv=H100x2,nv_peer=none", "NV:1", "NV:0", false);
    T_OK(mock_configure(""));
    hcq_device *cpu = open_dev("CPU"), *nv = open_dev("NV:0");
    T_FAILS(hcq_device_peer_access(nv, cpu), HCQ_ENOTSUP);
    T_MSG_HAS("different kinds");
    T_OK(hcq_device_close(nv));
    T_OK(hcq_device_close(cpu));
}
Test(multidev, peer_access_between_xgmi_peers) { peer_access_case("amd=gfx942x2,amd_peer=xgmi", "AMD:0", "AMD:1", true); }
Test(multidev, peer_access_between_amd_gpus_without_a_link)
{
    peer_access_case("amd=gfx1100x2,amd_peer=none", "AMD:0", "AMD:1", false);
}

/* A GPU whose last device closes leaves UVM, and its mappings of every
 * range go with it (the mock drops them as UVM does): opened again, it
 * maps the other GPU's signal page anew rather than trusting the old
 * mapping, and waits on it as before; the GPU that stayed keeps its own */
Test(multidev, a_gpu_that_left_and_came_back_maps_again)
{
    T_OK(mock_configure("nv=H100x3"));
    hcq_device *a = open_dev("NV:0"), *c = open_dev("NV:2");
    hcq_signal *s = T_NONNULL(hcq_signal_create(a, 0));
    for (int round = 0; round < 2; round++) {
        hcq_device *b = open_dev("NV:1");
        hcq_signal *done = T_NONNULL(hcq_signal_create(b, 0)), *done_c = T_NONNULL(hcq_signal_create(c, 0));
        hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COPY)), *qc = T_NONNULL(hcq_queue_create(c, HCQ_QUEUE_COPY));
        T_OK(hcq_queue_wait(q, s, HCQ_IMM((uint64_t)round + 1)));
        T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
        T_OK(hcq_queue_wait(qc, s, HCQ_IMM((uint64_t)round + 1)));
        T_OK(hcq_queue_signal(qc, done_c, HCQ_IMM(1)));
        T_OK(hcq_queue_submit(q, NULL, 0));
        T_OK(hcq_queue_submit(qc, NULL, 0));
        hcq_signal_set(s, (uint64_t)round + 1);
        T_OK(hcq_signal_wait(done, 1, 0));
        T_OK(hcq_signal_wait(done_c, 1, 0));
        T_OK(hcq_queue_destroy(q));
        T_OK(hcq_queue_destroy(qc));
        T_OK(hcq_signal_destroy(done));
        T_OK(hcq_signal_destroy(done_c));
        T_OK(hcq_device_close(b)); /* NV:1 leaves UVM */
    }
    T_OK(hcq_signal_destroy(s));
    T_OK(hcq_device_close(c));
    T_OK(hcq_device_close(a));
}

/* An eager launch given another GPU's buffer is ordered on both GPUs as a
 * peer copy is: with the owner's earlier launch held by a gate, the launch
 * returns and its GPU's timeline stands; once the gate opens, the three
 * launches (owner, other GPU, owner) each add one, in that order */
static void launch_on_peer_buffer(const char *spec, const char *na, const char *nb)
{
    T_OK(mock_configure(spec));
    hcq_device *a = open_dev(na), *b = open_dev(nb);
    enum { N = 512 };
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 11;
    hcq_program *pa = t_load(a, t_k_muladd()), *pb = t_load(b, t_k_muladd());
    hcq_buffer *bb = t_buffer_from(b, host, sizeof host);
    T_OK(hcq_device_synchronize(b));
    hcq_signal *gate = T_NONNULL(hcq_signal_create(b, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(b, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    /* x*2+1 on b, then x*3 on a, then x+5 on b: any other order differs */
    hcq_arg a1[4] = {hcq_arg_buffer(bb), hcq_arg_u32(2), hcq_arg_u32(1), hcq_arg_u32(N)};
    hcq_arg a2[4] = {hcq_arg_buffer(bb), hcq_arg_u32(3), hcq_arg_u32(0), hcq_arg_u32(N)};
    hcq_arg a3[4] = {hcq_arg_buffer(bb), hcq_arg_u32(1), hcq_arg_u32(5), hcq_arg_u32(N)};
    T_OK(hcq_launch(pb, a1, 4, hcq_dims_1d(N / 64, 64))); /* behind the gate */
    T_OK(hcq_launch(pa, a2, 4, hcq_dims_1d(N / 64, 64))); /* on a, b's buffer */
    uint64_t at = hcq_device_timeline_value(a);
    cr_assert_lt(hcq_signal_value(hcq_device_timeline(a)), at, "%s: %s's launch ran before %s's earlier one", spec,
                 na, nb);
    T_OK(hcq_launch(pb, a3, 4, hcq_dims_1d(N / 64, 64)));
    hcq_signal_set(gate, 1);
    t_read(bb, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (host[i] * 2 + 1) * 3 + 5, "%s: element %d", spec, i);
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(gate));
    T_OK(hcq_program_free(pa));
    T_OK(hcq_program_free(pb));
    T_OK(hcq_buffer_free(bb));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(multidev, nv_a_launch_on_a_peers_buffer_is_ordered_on_both_gpus)
{
    launch_on_peer_buffer("nv=H100x2", "NV:0", "NV:1");
}
Test(multidev, amd_a_launch_on_a_peers_buffer_is_ordered_on_both_gpus)
{
    launch_on_peer_buffer("amd=gfx1100x2", "AMD:1", "AMD:0");
}
