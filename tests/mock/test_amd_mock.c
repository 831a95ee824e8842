/* The AMD backend on the mock GPU, for what the device-independent API
 * suites cannot see: what discovery reports, every bring-up ioctl failing
 * in turn, GPU memory faults that name the address, the queue and the
 * kernel, two GPUs with transfers between them and one address space, why
 * multi-XCC parts need the AQL queue (docs/amd-xcc.md), hung engines, and
 * the command-stream dumps. Each test configures the mock itself
 * (Criterion runs every test in a process of its own). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/cc.h"
#include "compiler/twin.h"
#include "drivers/amd/amd.h"
#include "drivers/dump.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void use_mock(const char *spec)
{
    setenv("HCQ_MOCK", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(spec));
}

TestSuite(amd_mock, .timeout = 120);

/* real code objects (run as their host twins) where clang knows the GPU,
 * else the mock target */
static const char *expected_target(const char *arch)
{
    static char t[32];
    char why[256];
    snprintf(t, sizeof t, "%s%s", cc_twin_available(arch, why, sizeof why) ? "" : "mock-", arch);
    return t;
}

Test(amd_mock, discovery_reports_the_emulated_gpus)
{
    use_mock("amd=gfx1100");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    const hcq_device_props *p = hcq_device_get_props(d);
    cr_assert_str_eq(p->arch, "gfx1100");
    cr_assert_str_eq(p->target, expected_target("gfx1100"));
    cr_assert(p->is_mock);
    cr_assert_eq(p->compute_units, 96);
    cr_assert_eq(p->memory_bytes, 24ull << 30);
    cr_assert_str_eq(p->driver_version, "amdkfd 1.15");
    cr_assert_str_eq(p->pci_address, "0000:03:00.0");
    cr_assert(strstr(p->name, "gfx1100"), "%s", p->name);
    T_OK(hcq_device_close(d));
    cr_assert_null(hcq_device_open("AMD:1"));
    T_MSG_HAS("AMD:1 does not exist");
}

Test(amd_mock, discovery_of_a_multi_xcc_part)
{
    use_mock("amd=gfx942");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    const hcq_device_props *p = hcq_device_get_props(d);
    cr_assert_str_eq(p->arch, "gfx942");
    cr_assert_str_eq(p->target, expected_target("gfx942"));
    cr_assert_eq(p->compute_units, 304);
    cr_assert(strstr(p->name, "8 XCCs"), "%s", p->name);
    T_OK(hcq_device_close(d));
}

/* each bring-up ioctl in turn fails: the open says which, leaks nothing,
 * and the next open works */
ParameterizedTestParameters(amd_mock, bring_up_ioctl_fails)
{
    static int n[40];
    for (int i = 0; i < 40; i++) n[i] = i + 1;
    return cr_make_param_array(int, n, 40);
}

ParameterizedTest(int *n, amd_mock, bring_up_ioctl_fails)
{
    use_mock("amd=gfx942");
    uint64_t before = mock_ioctl_count();
    mock_fail_ioctl((uint64_t)*n, *n % 3 ? EIO : ENOMEM, 0);
    hcq_device *d = hcq_device_open("AMD:0");
    if (d) {
        /* the open made fewer ioctls than n: nothing failed during it */
        cr_assert_lt(mock_ioctl_count() - before, (uint64_t)*n);
        mock_fail_ioctl(0, 0, 0);
    } else {
        hcq_status s = hcq_error_status();
        cr_assert(s == HCQ_EIO || s == HCQ_ENOMEM, "%s: %s", hcq_status_name(s), hcq_error_message());
        T_MSG_HAS("AMD:0");
        cr_assert(strstr(hcq_error_message(), "amdkfd") || strstr(hcq_error_message(), "memory"), "%s",
                  hcq_error_message());
        d = hcq_device_open("AMD:0");
        cr_assert_not_null(d, "the open after a failed one: %s", hcq_error_message());
    }
    /* and the device works */
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *b = t_buffer_from(d, &zero, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 1);
    T_OK(hcq_device_close(d));
}

typedef struct model {
    char spec[32];
} model;

ParameterizedTestParameters(amd_mock, memory_fault_names_address_queue_and_kernel)
{
    static model m[] = {{"amd=gfx1100"}, {"amd=gfx942"}};
    return cr_make_param_array(model, m, 2);
}

ParameterizedTest(model *m, amd_mock, memory_fault_names_address_queue_and_kernel)
{
    use_mock(m->spec);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_program *p = t_load(d, t_k_copy());
    hcq_buffer *src = T_NONNULL(hcq_buffer_alloc(d, 64, HCQ_MEM_DEVICE));
    hcq_arg a[3] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_buffer(src), hcq_arg_u32(1)};
    T_OK(hcq_launch(p, a, 3, hcq_dims_1d(1, 1)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("0xdead0000");
    T_MSG_HAS("copy_u32");
    T_MSG_HAS("compute queue");
    T_MSG_HAS("AMD:0");
    T_FAILS(hcq_device_status(d), HCQ_EFAULT);
    T_OK(hcq_device_close(d));
    hcq_device *again = T_NONNULL(hcq_device_open("AMD:0"));
    T_OK(hcq_device_status(again));
    T_OK(hcq_device_close(again));
}

Test(amd_mock, copy_engine_fault_names_the_address_and_queue)
{
    use_mock("amd=gfx1100");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_buffer *dst = T_NONNULL(hcq_buffer_alloc(d, 4096, HCQ_MEM_DEVICE));
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_copy(q, HCQ_IMM(hcq_buffer_va(dst)), HCQ_IMM(0xbad000ull), HCQ_IMM(64)));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_FAILS(hcq_signal_wait(s, 1, 0), HCQ_EFAULT);
    T_MSG_HAS("0xbad000");
    T_MSG_HAS("sdma queue");
    T_OK(hcq_device_close(d));
}

ParameterizedTestParameters(amd_mock, copies_past_the_packet_limit)
{
    static model m[] = {{"amd=gfx1100"}, {"amd=gfx942"}};
    return cr_make_param_array(model, m, 2);
}

/* SDMA 4 copies at most 4 MiB a packet: bigger copies are chunked, and no
 * chunk is mistaken for an empty variable-size copy */
ParameterizedTest(model *m, amd_mock, copies_past_the_packet_limit)
{
    use_mock(m->spec);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    enum { N = (9 << 20) + 3 };
    uint8_t *in = malloc(N), *out = malloc(N);
    for (size_t i = 0; i < N; i++) in[i] = (uint8_t)(i * 131 + 7);
    hcq_buffer *a = t_buffer_from(d, in, N), *b = T_NONNULL(hcq_buffer_alloc(d, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
    free(in);
    free(out);
    T_OK(hcq_device_close(d));
}

static bool overlap(const hcq_buffer *a, const hcq_buffer *b)
{
    uint64_t x = hcq_buffer_va(a), y = hcq_buffer_va(b);
    return x < y + hcq_buffer_size(b) && y < x + hcq_buffer_size(a);
}

ParameterizedTestParameters(amd_mock, two_gpus_transfer_and_share_one_address_space)
{
    static model m[] = {{"amd=gfx1100x2"}, {"amd=gfx942x2"}};
    return cr_make_param_array(model, m, 2);
}

ParameterizedTest(model *m, amd_mock, two_gpus_transfer_and_share_one_address_space)
{
    use_mock(m->spec);
    hcq_device *d0 = T_NONNULL(hcq_device_open("AMD:0")), *d1 = T_NONNULL(hcq_device_open("AMD:1"));
    enum { N = 4096 };
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3;
    hcq_program *p0 = t_load(d0, t_k_add1()), *p1 = t_load(d1, t_k_add1());
    hcq_buffer *a = t_buffer_from(d0, host, sizeof host);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d1, sizeof host, HCQ_MEM_DEVICE));
    hcq_arg x0[2] = {hcq_arg_buffer(a), hcq_arg_u32(N)}, x1[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(p0, x0, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_buffer_copy(b, 0, a, 0, sizeof host)); /* GPU 0 -> GPU 1 */
    T_OK(hcq_launch(p1, x1, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_buffer_copy(a, 0, b, 0, sizeof host)); /* and back */
    t_read(a, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i * 3 + 2, "element %d", i);
    /* every buffer of either GPU at its own addresses */
    hcq_buffer *bufs[8];
    for (int i = 0; i < 8; i++) bufs[i] = T_NONNULL(hcq_buffer_alloc(i % 2 ? d1 : d0, 4096u << i, i % 3 ? HCQ_MEM_DEVICE : HCQ_MEM_HOST));
    for (int i = 0; i < 8; i++) {
        cr_assert_not(overlap(bufs[i], a) || overlap(bufs[i], b));
        for (int j = 0; j < i; j++) cr_assert_not(overlap(bufs[i], bufs[j]), "buffers %d and %d overlap", i, j);
    }
    T_OK(hcq_device_close(d0));
    T_OK(hcq_device_close(d1));
}

/* A PM4 queue on a multi-XCC part runs on every XCC, and with KFD's PM4
 * setup (no work-group split) each XCC runs the whole dispatch: a kernel
 * that counts once per launch counts 8, and each XCC writes the timeline
 * (late duplicates could even move it back). The AQL queue splits the
 * work-groups over the XCCs and writes signals once. docs/amd-xcc.md. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* gfx942: a PM4 queue runs on its target XCC alone (each XCC's MQD carries
 * pm4_target_xcc, kfd_mqd_manager_v9.c), whole grids on one XCC of eight;
 * the AQL queue runs on every XCC with the grid split between them. Both
 * run each work-group once. */
Test(amd_mock, multi_xcc_parts_run_pm4_on_one_xcc_and_aql_on_all)
{
    use_mock("amd=gfx942");
    for (int pass = 0; pass < 2; pass++) {
        const char *kind = pass == 0 ? "PM4" : "AQL";
        amd_proc_set_compute_queue(pass == 0 ? AMD_QUEUE_PM4 : -1);
        hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
        pthread_mutex_lock(&mock_amd_P.lock);
        uint32_t ncp = 0, xcc = 99;
        for (mock_amd_queue *q = mock_amd_P.queues; q; q = q->next)
            if (q->type != KFD_QUEUE_SDMA) ncp = q->ncp, xcc = q->cp[0].xcc;
        pthread_mutex_unlock(&mock_amd_P.lock);
        cr_assert_eq(ncp, pass == 0 ? 1u : 8u, "%s queue: %u XCCs run it", kind, ncp);
        cr_assert_eq(xcc, 0, "%s queue: its first XCC is %u", kind, xcc);
        hcq_program *p = t_load(d, t_k_inc());
        hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4, HCQ_MEM_HOST));
        volatile uint32_t *ctr = hcq_buffer_cpu_ptr(b);
        *ctr = 0;
        hcq_arg a = hcq_arg_buffer(b);
        T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
        T_OK(hcq_device_synchronize(d));
        cr_assert_eq(*ctr, 1, "%s queue: the kernel ran %u times", kind, *ctr);
        /* every work-group of a grid that does not divide evenly, once */
        enum { G = 8 * 13 + 5 };
        hcq_program *add1 = t_load(d, t_k_add1());
        uint32_t host[G * 4] = {0}, res[G * 4];
        hcq_buffer *c = t_buffer_from(d, host, sizeof host);
        hcq_arg x[2] = {hcq_arg_buffer(c), hcq_arg_u32(G * 4)};
        T_OK(hcq_launch(add1, x, 2, hcq_dims_1d(G, 4)));
        t_read(c, res, sizeof res);
        for (int i = 0; i < G * 4; i++) cr_assert_eq(res[i], 1, "%s queue: element %d", kind, i);
        T_OK(hcq_device_close(d));
    }
    amd_proc_set_compute_queue(-1);
}

/* gfx942's AQL queue: eight XCCs run each packet, and the read dispatch id
 * in memory is the slowest one's. They finish a packet at about the same
 * time; one that took the minimum before a sibling moved but wrote it after
 * the sibling's write moves the read pointer back, for good when that was
 * the last packet: the driver then waits for packets long consumed (the
 * self-test at open failed so under load). HCQ_MOCK_SCHED pauses the
 * engines at random points, between those two among them. A thread watches
 * the read pointer while launches run: it must never go back, and the
 * queue must end idle. */
typedef struct rptr_watch {
    volatile uint64_t *rptr;
    atomic_bool stop;
    uint64_t max, back_from, back_to;
} rptr_watch;

static void *watch_rptr(void *arg)
{
    rptr_watch *w = arg;
    while (!atomic_load(&w->stop)) {
        uint64_t v = atomic_load_explicit((_Atomic uint64_t *)w->rptr, memory_order_acquire);
        if (v < w->max && !w->back_from) w->back_from = w->max, w->back_to = v;
        if (v > w->max) w->max = v;
    }
    return NULL;
}

Test(amd_mock, multi_xcc_read_pointer_never_moves_back)
{
    setenv("HCQ_MOCK_SCHED", "random:11:300", 1);
    setenv("HCQ_TIMEOUT_MS", "5000", 1); /* the bound of a failure */
    use_mock("amd=gfx942");
    for (int cycle = 0; cycle < 2; cycle++) {
        hcq_device *d = hcq_device_open("AMD:0");
        cr_assert_not_null(d, "cycle %d: %s", cycle, hcq_error_message());
        amd_dev *ad = amd_of(d);
        cr_assert_eq(ad->compute.kind, AMD_QUEUE_AQL);
        hcq_program *p = t_load(d, t_k_inc());
        hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4, HCQ_MEM_HOST));
        hcq_arg a = hcq_arg_buffer(b);
        rptr_watch w = {.rptr = ad->compute.rptr};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, watch_rptr, &w), 0);
        for (int i = 0; i < 100; i++) {
            T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
            if (i % 10 == 9) T_OK(hcq_device_synchronize(d));
        }
        /* the last completion signal comes after the last XCC's report; a
         * sibling's store may still be on its way: wait for idle as the
         * driver does, within its bound */
        uint64_t t0 = hcq_now_ns();
        while (amd_queue_busy(&ad->compute) && hcq_now_ns() - t0 < base_env_get()->timeout_ns) base_sleep_ns(100000);
        atomic_store(&w.stop, true);
        pthread_join(th, NULL);
        char state[320];
        amd_queue_state(&ad->compute, state, sizeof state);
        cr_assert_eq(w.back_from, 0, "cycle %d: the read dispatch id went back from %llu to %llu", cycle,
                     (unsigned long long)w.back_from, (unsigned long long)w.back_to);
        cr_assert(!amd_queue_busy(&ad->compute), "cycle %d: %s", cycle, state);
        T_OK(hcq_device_close(d));
    }
}

Test(amd_mock, hung_copy_engine_times_out_naming_positions)
{
    setenv("HCQ_TIMEOUT_MS", "300", 1);
    use_mock("amd=gfx1100,hang=amd0.sdma");
    amd_proc_set_selftest(false); /* its copy would fail the open: this test is about a later copy's timeout */
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    uint32_t v = 7;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, &v, 4));
    T_FAILS(hcq_device_synchronize(d), HCQ_ETIMEDOUT);
    T_MSG_HAS("sdma queue");
    T_MSG_HAS("rptr 0");
    T_OK(hcq_device_close(d));
}

static int count_dumps(const char *dir, const char *format)
{
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp);
    int n = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        drv_dump_header h;
        if (f && fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, DRV_DUMP_MAGIC, 4) && !strcmp(h.format, format)) {
            n++;
            cr_assert_eq(h.arch, 110000, "the gfx version names the packet dialect");
        }
        if (f) fclose(f);
    }
    closedir(dp);
    return n;
}

Test(amd_mock, dumps_the_streams_it_runs)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-amd-dump");
    setenv("HCQ_MOCK_DUMP", dir, 1);
    use_mock("amd=gfx1100");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t zero = 0;
    hcq_buffer *b = t_buffer_from(d, &zero, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_device_synchronize(d));
    T_OK(hcq_device_close(d));
    cr_assert_gt(count_dumps(dir, "amd-pm4"), 0);
    cr_assert_gt(count_dumps(dir, "amd-sdma"), 0);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(amd_mock, loader_refuses_code_for_another_target)
{
    use_mock("amd=gfx1100");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    /* a mock object for another GPU */
    T_OK(hcq_compile(k, "mock-gfx942", &b));
    cr_assert_null(hcq_program_load(d, b->data, b->size));
    cr_assert_eq(hcq_error_status(), HCQ_EFORMAT);
    T_MSG_HAS("gfx942");
    T_MSG_HAS(hcq_device_get_props(d)->target);
    hcq_binary_free(b);
    /* machine code the mock has no host twin of (none made, none cached):
     * the ISA executor runs it by default; pinned to twins, it is refused */
    if (cc_require_clang(17, "HIP for gfx1100") == HCQ_OK) {
        char dir[T_TMP_PATH];
        t_tmpdir(dir, sizeof dir, "hcq-amd-cache");
        setenv("HCQ_CACHE_DIR", dir, 1);
        base_env_reload();
        T_OK(hcq_compile(k, "gfx1100", &b));
        hcq_program *p = T_NONNULL(hcq_program_load(d, b->data, b->size));
        T_OK(hcq_program_free(p));
        setenv("HCQ_MOCK_SHADER", "twin", 1); /* (a device's shader is chosen at its open) */
        base_env_reload();
        T_OK(hcq_device_close(d));
        d = T_NONNULL(hcq_device_open("AMD:0"));
        cr_assert_null(hcq_program_load(d, b->data, b->size));
        cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
        T_MSG_HAS("host twin");
        unsetenv("HCQ_MOCK_SHADER");
        base_env_reload();
        hcq_binary_free(b);
        char cmd[T_TMP_PATH + 16];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
    }
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
}

/* scratch sized as tinygrad sizes it on a 7900 XTX: 128 bytes per lane is
 * 24 MiB, WAVESIZE 32 (256-byte units), 512 waves per shader engine */
Test(amd_mock, scratch_sizing_follows_the_hardware_units)
{
    use_mock("amd=gfx1100");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    uint64_t va = 0, per_xcc = 0;
    uint32_t tmpring = 0;
    T_OK(amd_scratch_ensure(amd_of(d), 100, &va, &per_xcc, &tmpring));
    cr_assert_eq(per_xcc, 24ull << 20);
    cr_assert_eq(tmpring, 0x20200, "TMPRING 0x%x", tmpring);
    cr_assert_neq(va, 0);
    uint64_t va2 = 0;
    T_OK(amd_scratch_ensure(amd_of(d), 64, &va2, &per_xcc, &tmpring));
    cr_assert_eq(va2, va, "a smaller need reuses the scratch");
    T_OK(amd_scratch_ensure(amd_of(d), 1000, &va2, &per_xcc, &tmpring));
    cr_assert_neq(va2, va, "a bigger one grows it");
    cr_assert_eq(tmpring >> 12, 256, "1024 bytes per lane: WAVESIZE 256");
    T_OK(hcq_device_close(d));
}

/* gfx9 reads the scratch buffer resource's word 3 in its own layout: the
 * mock's dispatch check takes hcq's gfx9 words and refuses the gfx10/11
 * word hcq wrote on every arch before (its INDEX_STRIDE of 32 read as gfx9's
 * has lanes 32-63 share lanes 0-31's scratch) */
Test(amd_mock, gfx9_dispatch_refuses_a_gfx11_scratch_descriptor)
{
    uint32_t w[4];
    char why[256] = "";
    amd_scratch_srd(AMD_FAMILY_GFX9, 0x7f1234560000ull, w);
    cr_assert(mock_amd_scratch_srd_ok(AMD_FAMILY_GFX9, w, why, sizeof why), "%s", why);
    amd_scratch_srd(AMD_FAMILY_GFX11, 0x7f1234560000ull, w);
    cr_assert_not(mock_amd_scratch_srd_ok(AMD_FAMILY_GFX9, w, why, sizeof why));
    cr_assert(strstr(why, "INDEX_STRIDE is not 64") && strstr(why, "0x20c14000"), "%s", why);
    amd_scratch_srd(AMD_FAMILY_GFX9, 0x7f1234560000ull, w);
    w[1] &= ~(1u << 31);
    cr_assert_not(mock_amd_scratch_srd_ok(AMD_FAMILY_GFX9, w, why, sizeof why));
    cr_assert(strstr(why, "SWIZZLE_ENABLE"), "%s", why);
}

/* gfx9 waits compare all 64 bits (AQL barrier-value packets): a value in a
 * higher 2^32 block with a smaller low half passes, one below does not */
static void waits_across_2_32(const char *spec)
{
    use_mock(spec);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0xFFFFFFF0ull)), *done = T_NONNULL(hcq_signal_create(d, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, s, HCQ_IMM(0x100000005ull)));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_FAILS(hcq_signal_wait(done, 1, 30000000ull), HCQ_ETIMEDOUT);
    hcq_signal_set(s, 0x100000000ull); /* low half 0: below the target */
    T_FAILS(hcq_signal_wait(done, 1, 30000000ull), HCQ_ETIMEDOUT);
    hcq_signal_set(s, 0x100000005ull);
    T_OK(hcq_signal_wait(done, 1, 2000000000ull));
    /* past the target in a higher block, low half below the target's */
    hcq_signal_set(s, 0x200000000ull);
    hcq_queue *q2 = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q2, s, HCQ_IMM(0x1FFFFFFFFull)));
    T_OK(hcq_queue_signal(q2, done, HCQ_IMM(2)));
    T_OK(hcq_queue_submit(q2, NULL, 0));
    T_OK(hcq_signal_wait(done, 2, 2000000000ull));
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_queue_destroy(q2));
    hcq_signal_destroy(s);
    hcq_signal_destroy(done);
    T_OK(hcq_device_close(d));
}
Test(amd_mock, gfx942_waits_compare_64_bits) { waits_across_2_32("amd=gfx942"); }
Test(amd_mock, gfx90a_waits_compare_64_bits) { waits_across_2_32("amd=gfx90a"); }

/* a WAIT_REG_MEM64 (the encoding hcq used before on gfx9) reaching a gfx9
 * CP stops the queue, naming it */
Test(amd_mock, gfx9_refuses_wait_reg_mem64)
{
    use_mock("amd=gfx942");
    amd_proc_set_compute_queue(AMD_QUEUE_PM4);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 1));
    drv_rec raw;
    drv_rec_init(&raw, d, HCQ_QUEUE_COMPUTE);
    pm4_wait_reg_mem64(&raw, PM4_FUNC_GE, HCQ_IMM(hcq_signal_va(s)), HCQ_IMM(1), ~0ull, 4);
    /* the mock prints why it hung the queue; the driver reports a reset */
    t_stderr c = t_stderr_begin();
    T_OK(amd_submit(d, &raw));
    drv_rec_fini(&raw);
    hcq_status st = HCQ_OK;
    for (int i = 0; i < 2000 && !(st = hcq_device_status(d)); i++) base_sleep_ns(1000000);
    char text[2048];
    t_stderr_end(c, text, sizeof text);
    cr_assert_neq(st, HCQ_OK);
    T_MSG_HAS("reset");
    cr_assert(strstr(text, "PM4 opcode 0x93 (WAIT_REG_MEM64) does not exist on gfx942"), "%s", text);
    hcq_signal_destroy(s);
    T_OK(hcq_device_close(d));
    amd_proc_set_compute_queue(-1);
}

/* ** the kfd ABI details: RUNTIME_ENABLE came with ABI 1.13 and enables
 * only with its ENABLE mode bit (clear, it disables); CREATE_QUEUE takes
 * the 96-byte 1.17 form (older kernels read its first 88 bytes); AQL
 * queues carry max_wave_id as ROCR sets it; the HDP flush asks for one
 * client's bit and waits for it to equal itself */
static void runtime_enabled_on(const char *spec, bool want)
{
    use_mock(spec);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    pthread_mutex_lock(&mock_amd_P.lock);
    bool on = mock_amd_P.runtime_enabled;
    pthread_mutex_unlock(&mock_amd_P.lock);
    cr_assert_eq(on, want, "%s: the KFD runtime is %s", spec, on ? "enabled" : "not enabled");
    T_OK(hcq_device_close(d));
}
Test(amd_mock, runtime_enable_from_abi_1_13) { runtime_enabled_on("amd=gfx1100,kfd_minor=13", true); }
Test(amd_mock, no_runtime_enable_before_abi_1_13) { runtime_enabled_on("amd=gfx1100,kfd_minor=12", false); }

Test(amd_mock, aql_queues_carry_max_wave_id_and_hdp_flush_asks_one_bit)
{
    use_mock("amd=gfx942");
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    const amd_dev *ad = d->priv;
    const uint8_t *c = ad->compute.ctl.cpu;
    uint32_t max_wave, max_cu;
    memcpy(&max_wave, c + AMD_QUEUE_MAX_WAVE_ID_OFF, 4);
    memcpy(&max_cu, c + AMD_QUEUE_MAX_CU_ID_OFF, 4);
    cr_assert_eq(max_wave, ad->node.max_waves_per_simd * ad->node.simd_per_cu - 1, "max_wave_id %u", max_wave);
    cr_assert_eq(max_cu, ad->node.cu_count - 1);
    cr_assert_gt(max_wave, 0);
    /* a barrier (HDP flush, then ACQUIRE_MEM) runs on the mock's CP, which
     * refuses the all-ones handshake hcq used before */
    hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
    T_OK(hcq_queue_barrier(q));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(s, 1, 2000000000ull));
    T_OK(hcq_queue_destroy(q));
    hcq_signal_destroy(s);
    T_OK(hcq_device_close(d));
    cr_assert_eq(sizeof(kfd_create_queue_args), 96);
}

/* CREATE_QUEUE's two forms, seen at the ioctl: hcq always sends the 96-byte
 * 1.17 command (0xC0604B02) with sdma_engine_id 0, on kernels before and
 * after 1.17; and the mock, like kfd_ioctl (kfd_chardev.c), takes the
 * 88-byte form of older callers too, copying in and out only the caller's
 * bytes. A wrapper over the mock's table records (and, asked to, shortens)
 * each CREATE_QUEUE on its way down. */
typedef struct cq_spy_state {
    const hcq_sys *under;
    bool shorten;      /* send the 88-byte form, its tail poisoned */
    unsigned n, wrong; /* CREATE_QUEUEs seen; of them not the 96-byte form or not engine 0 */
    unsigned tail_touched;
} cq_spy_state;
static cq_spy_state cq_spy;
static int cq_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    (void)ctx;
    if (AMD_IOC_TYPE(req) != 'K' || AMD_IOC_NR(req) != 0x02)
        return cq_spy.under->ioctl(cq_spy.under->ctx, fd, req, arg);
    kfd_create_queue_args *a = arg;
    cq_spy.n++;
    if (req != 0xC0604B02ul || a->sdma_engine_id != 0) cq_spy.wrong++; /* AMDKFD_IOC_CREATE_QUEUE, 1.17 */
    if (!cq_spy.shorten) return cq_spy.under->ioctl(cq_spy.under->ctx, fd, req, arg);
    unsigned long short_req = (req & ~(0x3ffful << 16)) | ((unsigned long)KFD_CREATE_QUEUE_ARGS_1_15 << 16);
    uint8_t *tail = (uint8_t *)arg + KFD_CREATE_QUEUE_ARGS_1_15;
    uint8_t keep[sizeof(kfd_create_queue_args) - KFD_CREATE_QUEUE_ARGS_1_15];
    memcpy(keep, tail, sizeof keep);
    memset(tail, 0xA5, sizeof keep);
    int rc = cq_spy.under->ioctl(cq_spy.under->ctx, fd, short_req, arg);
    for (size_t i = 0; i < sizeof keep; i++) cq_spy.tail_touched += tail[i] != 0xA5;
    memcpy(tail, keep, sizeof keep);
    return rc;
}
static void create_queue_forms(const char *spec, bool shorten)
{
    use_mock(spec);
    cq_spy = (cq_spy_state){.under = mock_sys(), .shorten = shorten};
    hcq_sys spy = *mock_sys();
    spy.ioctl = cq_ioctl;
    spy.name = "CREATE_QUEUE spy";
    sys_set(&spy);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    /* both engines: the device's compute and copy queues, then a launch */
    uint32_t v = 6, out = 0;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, &v, 4));
    hcq_program *p = t_load(d, t_k_inc());
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_buffer_copyout(&out, b, 0, 4));
    cr_assert_eq(out, 7, "%s: the queues ran", spec);
    T_OK(hcq_program_free(p));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
    sys_set(mock_sys());
    cr_assert_geq(cq_spy.n, 2, "%s: %u CREATE_QUEUEs", spec, cq_spy.n);
    cr_assert_eq(cq_spy.wrong, 0, "%s: %u CREATE_QUEUEs not the 96-byte 1.17 form with engine 0", spec, cq_spy.wrong);
    cr_assert_eq(cq_spy.tail_touched, 0, "%s: the 88-byte form's caller got %u bytes written past its struct", spec,
                 cq_spy.tail_touched);
}
Test(amd_mock, create_queue_is_the_96_byte_form_on_abi_1_17) { create_queue_forms("amd=gfx1100,kfd_minor=17", false); }
Test(amd_mock, create_queue_is_the_96_byte_form_before_abi_1_17) { create_queue_forms("amd=gfx942,kfd_minor=15", false); }
Test(amd_mock, create_queue_of_an_88_byte_caller_works_on_abi_1_17)
{
    create_queue_forms("amd=gfx942,kfd_minor=17", true);
}

/* 8 MI300X in CPX mode are 64 GPU nodes: the topology scan reads past 16 */
static ssize_t topo_read(void *ctx, const char *path, char *buf, size_t size)
{
    (void)ctx;
    unsigned node;
    char leaf[64];
    if (sscanf(path, AMD_KFD_TOPOLOGY "/%u/%63s", &node, leaf) != 2) return -ENOENT;
    int n = 0;
    if (!strcmp(leaf, "gpu_id")) n = snprintf(buf, size, "%u\n", node ? 1000 + node : 0);
    else if (!strcmp(leaf, "properties"))
        n = snprintf(buf, size, "gfx_target_version 90402\nsimd_count %u\nsimd_per_cu 4\nnum_xcc 1\n"
                     "max_waves_per_simd 8\n", node ? 152u : 0u);
    else return -ENOENT;
    return n;
}
static int topo_list(void *ctx, const char *path, void (*fn)(void *arg, const char *name), void *arg)
{
    (void)ctx;
    if (strcmp(path, AMD_KFD_TOPOLOGY)) return -ENOENT;
    for (int i = 0; i <= 64; i++) { /* node 0 is the CPU */
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        fn(arg, name);
    }
    return 0;
}
Test(amd_mock, the_topology_scan_reads_64_gpu_nodes)
{
    hcq_sys t = *sys_libc();
    t.read_file = topo_read;
    t.list_dir = topo_list;
    t.name = "64 MI300X partitions";
    sys_set(&t);
    amd_node *nodes = calloc(AMD_MAX_NODES, sizeof *nodes);
    cr_assert_not_null(nodes);
    int n = amd_topology_read(nodes, AMD_MAX_NODES);
    cr_assert_eq(n, 64, "%d GPU nodes read", n);
    cr_assert_eq(nodes[63].gpu_id, 1064);
    free(nodes);
    sys_set(sys_libc());
}

/* ** where the drivers' sources do not settle what the hardware does, the
 * mock warns once, naming the doubt, and goes on: an HDP flush asking
 * every client's bit and waiting for all of them with >= (tinygrad's
 * form), and ACQUIRE_MEM with COHER_SIZE_HI 0xffffffff (the kernel driver
 * writes 0xffffff). Each runs twice on a PM4 queue; the signal after it
 * arrives both times and the warning is printed once. */
static void doubt_passes(const char *spec, void (*emit)(const amd_arch *a, drv_rec *r), const char *warning)
{
    setenv("HCQ_DEBUG", "1", 1); /* hcq's own driver under HCQ_MOCK=1 hears doubts at level 1 */
    t_stderr c = t_stderr_begin(); /* the self-test at open runs a barrier already */
    use_mock(spec);
    amd_proc_set_compute_queue(AMD_QUEUE_PM4);
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    const amd_arch *a = amd_of(d)->arch;
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
    for (uint64_t i = 1; i <= 2; i++) {
        drv_rec raw;
        drv_rec_init(&raw, d, HCQ_QUEUE_COMPUTE);
        emit(a, &raw);
        pm4_release_mem(&raw, pm4_release_event(a->release_flush), pm4_release_data(PM4_DATA_64, 0),
                        HCQ_IMM(hcq_signal_va(s)), 0, HCQ_IMM(i), 0);
        T_OK(amd_submit(d, &raw));
        drv_rec_fini(&raw);
        T_OK(hcq_signal_wait(s, i, 5000000000ull));
    }
    static char text[1 << 16];
    t_stderr_end(c, text, sizeof text);
    const char *w = strstr(text, warning);
    cr_assert(w, "%s: no warning `%s`: %s", spec, warning, text);
    cr_assert_null(strstr(w + 1, warning), "%s: warned twice: %s", spec, text);
    cr_assert_null(strstr(text, "would hang"), "%s", text);
    hcq_signal_destroy(s);
    T_OK(hcq_device_close(d));
    amd_proc_set_compute_queue(-1);
}
static void hdp_all_bits(const amd_arch *a, drv_rec *r)
{
    pm4_wait_reg_write(r, PM4_FUNC_GE, a->hdp_flush_req, a->hdp_flush_done, 0xffffffffu, 0xffffffffu, 4);
}
static void acquire_size_hi_all_ones(const amd_arch *a, drv_rec *r)
{
    uint32_t n = r->ndw;
    pm4_acquire_mem(r, a, a->acquire_full);
    r->dw[n + 3] = 0xffffffffu; /* COHER_SIZE_HI */
}
Test(amd_mock, hdp_flush_of_every_bit_warns_once_and_proceeds_gfx1100)
{
    doubt_passes("amd=gfx1100", hdp_all_bits, "waits for (DONE & 0xffffffff) >= 0xffffffff");
}
Test(amd_mock, hdp_flush_of_every_bit_warns_once_and_proceeds_gfx942)
{
    doubt_passes("amd=gfx942", hdp_all_bits, "waits for (DONE & 0xffffffff) >= 0xffffffff");
}
Test(amd_mock, acquire_mem_size_hi_all_ones_warns_once_and_proceeds_gfx90a)
{
    doubt_passes("amd=gfx90a", acquire_size_hi_all_ones, "ACQUIRE_MEM with COHER_SIZE_HI 0xffffffff");
}
Test(amd_mock, acquire_mem_size_hi_all_ones_warns_once_and_proceeds_gfx1100)
{
    doubt_passes("amd=gfx1100", acquire_size_hi_all_ones, "ACQUIRE_MEM with COHER_SIZE_HI 0xffffffff");
}
