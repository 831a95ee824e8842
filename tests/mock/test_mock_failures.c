/* Driver calls failing after bring-up, on the NV and AMD mocks: every ioctl
 * of allocating device and host memory, creating queues and loading a
 * program fails in turn (the mock's n-th-call injection). Each failure is a
 * clear error naming the device, the step and the driver's answer; it
 * leaves no driver object, buffer or VRAM behind; the device goes on
 * working; closing it releases everything. The frees failing in turn: the
 * driver keeps what it would not free and its addresses are never handed
 * out again, so the next allocation works. And out of device memory: the
 * message has the sizes, and the allocation cache is emptied and the
 * allocation retried before it fails.
 *
 * Then teardown: 2,000 open/close cycles per mock (slots the driver hands
 * out anew start clean), and a demo-like workload closed at every point,
 * idle and busy, on the mocks and the CPU device: each close is bounded,
 * leaves nothing behind, and the next open works. A queue KFD will not
 * destroy at close (AMD: a debugged process's) keeps the device's memory, so
 * it never faults on memory freed under it.
 *
 * The bring-up ioctls have their own walks (test_nv_mock.c,
 * test_amd_mock.c). The hardware queues (NV channels, kfd queues) are
 * created there; hcq_queue_create records into host memory hcq already
 * holds, so its walk finds no ioctl today and would walk any it grew. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/twin.h"
#include "drivers/cpu/cpu.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(mock_failures, .timeout = 240);

typedef struct gpu_case {
    char spec[32]; /* mock configuration */
    char device[16];
    bool nv;
} gpu_case;

static gpu_case cases[] = {
    {"nv=H100", "NV:0", true},
    {"amd=gfx1100", "AMD:0", false},
    {"amd=gfx942", "AMD:0", false},
};

/* what the driver holds for the process: RM objects or kfd buffer objects,
 * events and queues; and the GPU's memory in use */
typedef struct live {
    uint64_t objects, vram;
} live;

static live live_now(const gpu_case *c)
{
    live l = {0};
    if (c->nv) {
        l.objects = mnv_rm_objects();
        l.vram = atomic_load(&mnv_gpu_by_index(0)->g->vram_used);
    } else {
        pthread_mutex_lock(&mock_amd_P.lock);
        l.objects = mock_amd_P.nbos + mock_amd_P.nevents;
        for (mock_amd_queue *q = mock_amd_P.queues; q; q = q->next) l.objects++;
        pthread_mutex_unlock(&mock_amd_P.lock);
        l.vram = atomic_load(&mock_amd_gpu_at(0)->g->vram_used);
    }
    return l;
}

static void use_mock(const gpu_case *c, const char *extra)
{
    /* freed memory goes straight back to the driver, so what a failed
     * call left behind shows in the driver's counts */
    setenv("HCQ_ALLOC_CACHE", "0", 1);
    setenv("HCQ_MOCK", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    char spec[96];
    snprintf(spec, sizeof spec, "%s%s%s", c->spec, extra ? "," : "", extra ? extra : "");
    T_OK(mock_configure(spec));
}

/* hcq_compile for a mock GPU, with the host twin the mock runs the binary
 * as (hcq_program_from_kernel makes it; hcq_compile alone does not, and a
 * later hcq_program_load then finds one only if an earlier suite left it in
 * the kernel cache) */
static void compile_for_mock(const hcq_kernel *k, const char *target, hcq_binary **out)
{
    T_OK(hcq_compile(k, target, out));
    T_OK(cc_twin_prepare(k, target, (*out)->data, (*out)->size));
}

/* ** the steps walked: each does its thing (i makes sizes differ) and
 * returns something to undo, or NULL with the error set */
typedef struct step {
    const char *name;
    void *(*run)(hcq_device *d, unsigned i);
    void (*undo)(void *);
} step;

static void *alloc_device(hcq_device *d, unsigned i)
{
    return hcq_buffer_alloc(d, (1u << 20) + i * 65536u, HCQ_MEM_DEVICE);
}
static void *alloc_host(hcq_device *d, unsigned i) { return hcq_buffer_alloc(d, (1u << 20) + i * 65536u, HCQ_MEM_HOST); }
static void free_buffer(void *b) { T_OK(hcq_buffer_free(b)); }

static void *queue_compute(hcq_device *d, unsigned i)
{
    (void)i;
    return hcq_queue_create(d, HCQ_QUEUE_COMPUTE);
}
static void *queue_copy(hcq_device *d, unsigned i)
{
    (void)i;
    return hcq_queue_create(d, HCQ_QUEUE_COPY);
}
static void destroy_queue(void *q) { T_OK(hcq_queue_destroy(q)); }

static hcq_binary *bin; /* the program walked, compiled once per test */
static void *load_program(hcq_device *d, unsigned i)
{
    (void)i;
    return hcq_program_load(d, bin->data, bin->size);
}
static void free_program(void *p) { T_OK(hcq_program_free(p)); }

static const step steps[] = {
    {"allocating device memory", alloc_device, free_buffer},
    {"allocating host memory", alloc_host, free_buffer},
    {"creating a compute queue", queue_compute, destroy_queue},
    {"creating a copy queue", queue_copy, destroy_queue},
    {"loading a program", load_program, free_program},
};

/* the device computes: inc on a fresh buffer */
static void still_works(hcq_device *d)
{
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t v = 41, out = 0;
    hcq_buffer *b = t_buffer_from(d, &v, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 42);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(p));
}

ParameterizedTestParameters(mock_failures, every_ioctl_after_bringup_fails_in_turn)
{
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gpu_case *c, mock_failures, every_ioctl_after_bringup_fails_in_turn)
{
    use_mock(c, NULL);
    hcq_device *d = T_NONNULL(hcq_device_open(c->device));
    hcq_kernel *k = t_k_add1();
    compile_for_mock(k, hcq_device_get_props(d)->target, &bin);
    hcq_kernel_destroy(k);
    still_works(d); /* the pools and rings the first launch makes are made */
    live stuck = {0}; /* what the driver kept when told to free it */
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        unsigned walked = 0;
        const step *st = &steps[s];
        live before = live_now(c);
        uint64_t c0 = mock_ioctl_count();
        void *obj = T_NONNULL(st->run(d, 0));
        uint64_t n = mock_ioctl_count() - c0;
        st->undo(obj);
        cr_assert(live_now(c).objects == before.objects && live_now(c).vram == before.vram,
                  "%s: undoing it releases what it made", st->name);
        for (uint64_t i = 1; i <= n; i++) {
            /* errnos and, on NV, RM statuses, as the drivers report them */
            bool as_status = c->nv && i % 2;
            int err = as_status ? 0 : i % 3 ? EIO : ENOMEM;
            mock_fail_ioctl(i, err, as_status ? NV_ERR_INVALID_ARGUMENT : 0);
            obj = st->run(d, (unsigned)i);
            mock_fail_ioctl(0, 0, 0);
            if (obj) {
                /* a failure the call recovers from (ENOMEM: the cache
                 * emptied, tried again) or one in a free (logged: a driver
                 * that will not free keeps what it holds) */
                st->undo(obj);
                before = live_now(c);
                continue;
            }
            walked++;
            hcq_status e = hcq_error_status();
            const char *msg = hcq_error_message();
            cr_assert(e == HCQ_EIO || e == HCQ_ENOMEM, "%s, ioctl %llu of %llu: %s: %s", st->name,
                      (unsigned long long)i, (unsigned long long)n, hcq_status_name(e), msg);
            cr_assert(strstr(msg, c->device), "%s, ioctl %llu: the message names the device: %s", st->name,
                      (unsigned long long)i, msg);
            cr_assert(strstr(msg, as_status ? "NV_ERR_INVALID_ARGUMENT" : strerror(err)),
                      "%s, ioctl %llu: the message gives the driver's answer: %s", st->name, (unsigned long long)i,
                      msg);
            live after = live_now(c);
            cr_assert(after.objects == before.objects && after.vram == before.vram,
                      "%s, ioctl %llu failing: %llu driver objects and %llu bytes of VRAM left behind", st->name,
                      (unsigned long long)i, (unsigned long long)(after.objects - before.objects),
                      (unsigned long long)(after.vram - before.vram));
            T_OK(hcq_device_status(d)); /* a failed call does not poison the device */
        }
        cr_assert(walked > 0 || n == 0, "%s: none of its %llu ioctls failing made it fail", st->name,
                  (unsigned long long)n);

        /* the undo's ioctls failing in turn: a driver that will not free
         * keeps what it holds (logged), and the same call made again works:
         * addresses the driver still holds are not handed out again */
        obj = T_NONNULL(st->run(d, 0));
        c0 = mock_ioctl_count();
        st->undo(obj);
        uint64_t m = mock_ioctl_count() - c0;
        live u0 = live_now(c);
        for (uint64_t j = 1; j <= m; j++) {
            obj = T_NONNULL(st->run(d, 0));
            mock_fail_ioctl(j, c->nv && j % 2 ? 0 : EIO, c->nv && j % 2 ? NV_ERR_INVALID_ARGUMENT : 0);
            st->undo(obj);
            mock_fail_ioctl(0, 0, 0);
            obj = st->run(d, 0);
            cr_assert_not_null(obj, "%s after ioctl %llu of its undo failed: %s", st->name, (unsigned long long)j,
                               hcq_error_message());
            st->undo(obj);
            T_OK(hcq_device_status(d));
        }
        live u1 = live_now(c);
        stuck.objects += u1.objects - u0.objects;
        stuck.vram += u1.vram - u0.vram;
    }
    still_works(d);
    hcq_binary_free(bin);
    T_OK(hcq_device_close(d));
    /* RM frees a client's objects with the client; a KFD process keeps
     * what it would not free until the process ends */
    live end = live_now(c), want = c->nv ? (live){0} : stuck;
    cr_assert(end.objects == want.objects && end.vram == want.vram,
              "after close: %llu driver objects, %llu bytes of VRAM (expected %llu, %llu)",
              (unsigned long long)end.objects, (unsigned long long)end.vram, (unsigned long long)want.objects,
              (unsigned long long)want.vram);
    /* the NV device's files are all closed (mock_configure refuses while
     * one is open); the KFD process keeps /dev/kfd and the render node for
     * the life of the process (docs/architecture.md), holding nothing */
    if (c->nv) T_OK(mock_configure(""));
}

/* Out of device memory: freed buffers sit in the allocation cache; a bigger
 * request that the driver refuses empties the cache and is retried, and
 * succeeds; one that cannot fit fails with HCQ_ENOMEM naming the sizes. */
ParameterizedTestParameters(mock_failures, out_of_memory_empties_the_cache_then_says_how_much)
{
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gpu_case *c, mock_failures, out_of_memory_empties_the_cache_then_says_how_much)
{
    use_mock(c, "vram=256M");
    setenv("HCQ_ALLOC_CACHE", "1", 1);
    base_env_reload();
    hcq_device *d = T_NONNULL(hcq_device_open(c->device));
    uint64_t base = live_now(c).vram;
    uint64_t room = ((256ull << 20) - base) & ~((1ull << 20) - 1);
    /* fill most of the memory with buffers the cache will keep */
    hcq_buffer *b[4];
    for (int i = 0; i < 4; i++) b[i] = T_NONNULL(hcq_buffer_alloc(d, room / 5, HCQ_MEM_DEVICE));
    for (int i = 0; i < 4; i++) T_OK(hcq_buffer_free(b[i]));
    cr_assert_geq(live_now(c).vram, base + 4 * (room / 5), "the cache holds the freed buffers");
    /* needs the cached memory back */
    hcq_buffer *big = T_NONNULL(hcq_buffer_alloc(d, room / 2, HCQ_MEM_DEVICE));
    cr_assert_lt(live_now(c).vram, base + 4 * (room / 5), "the cache was emptied for it");
    /* more than there is */
    cr_assert_null(hcq_buffer_alloc(d, room, HCQ_MEM_DEVICE));
    cr_assert_eq(hcq_error_status(), HCQ_ENOMEM, "%s", hcq_error_message());
    char want[32];
    base_fmt_bytes(want, sizeof want, room);
    T_MSG_HAS(want);
    T_MSG_HAS(c->device);
    T_OK(hcq_device_status(d));
    T_OK(hcq_buffer_free(big));
    still_works(d);
    T_OK(hcq_device_close(d));
    cr_assert_eq(live_now(c).vram, 0);
}

/* Open and close, again and again: the driver hands out its slots (NV
 * channels and their work-submit tokens, kfd queue ids and doorbells)
 * anew each time, and a new queue must never see what the previous owner
 * of its slot left there (a stale write pointer is a spurious reset on
 * gfx1100 and a hang on gfx942). Each cycle copies in, launches and copies
 * out, so both engines run. */
ParameterizedTestParameters(mock_failures, open_close_cycles_start_clean)
{
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gpu_case *c, mock_failures, open_close_cycles_start_clean, .timeout = 600)
{
    use_mock(c, NULL);
    setenv("HCQ_TIMEOUT_MS", "5000", 1);
    base_env_reload();
    hcq_device *d = T_NONNULL(hcq_device_open(c->device));
    hcq_kernel *k = t_k_inc();
    compile_for_mock(k, hcq_device_get_props(d)->target, &bin);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
    live start = live_now(c);
    /* past 512, where round-robin doorbells first came back to a used slot
     * (db6c1cf); CI (HCQ_TEST_LONG=1) runs 2,000 */
    const unsigned CYCLES = getenv("HCQ_TEST_LONG") ? 2000 : 600;
    for (unsigned i = 0; i < CYCLES; i++) {
        d = hcq_device_open(c->device);
        cr_assert_not_null(d, "cycle %u: %s", i, hcq_error_message());
        hcq_program *p = hcq_program_load(d, bin->data, bin->size);
        cr_assert_not_null(p, "cycle %u: %s", i, hcq_error_message());
        uint32_t v = i, out = 0;
        hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4, HCQ_MEM_DEVICE));
        hcq_arg a = hcq_arg_buffer(b);
        hcq_status s = hcq_buffer_copyin(b, 0, &v, 4);
        if (!s) s = hcq_launch(p, &a, 1, hcq_dims_1d(1, 1));
        if (!s) s = hcq_buffer_copyout(&out, b, 0, 4);
        cr_assert_eq(s, HCQ_OK, "cycle %u: %s", i, hcq_error_message());
        cr_assert_eq(out, i + 1, "cycle %u", i);
        T_OK(hcq_device_close(d));
    }
    live end = live_now(c);
    cr_assert(end.objects == start.objects && end.vram == start.vram,
              "after %u cycles: %llu driver objects and %llu bytes of VRAM more than after the first", CYCLES,
              (unsigned long long)(end.objects - start.objects), (unsigned long long)(end.vram - start.vram));
    hcq_binary_free(bin);
}

/* ** the teardown walk: a demo-like workload closed at every point in it,
 * idle (everything submitted has completed) and busy (a long kernel
 * running, a queue parked on a signal nobody sets, eager work queued
 * behind it). Every close returns within the bound, leaves no driver object
 * or VRAM behind (host leaks: ASan's LeakSanitizer in `make asan`), and the
 * next open works. The CPU device (compiled and interpreted) walks too. */
typedef struct walk_case {
    gpu_case g;
    bool cpu, ir;
} walk_case;

static walk_case walk_cases[] = {
    {{"nv=H100", "NV:0", true}, false, false},
    {{"amd=gfx1100", "AMD:0", false}, false, false},
    {{"amd=gfx942", "AMD:0", false}, false, false},
    {{"", "CPU", false}, true, false},
    {{"", "CPU", false}, true, true},
};

typedef struct walk {
    hcq_device *d;
    hcq_binary *inc_bin, *spin_bin;
    hcq_program *inc, *spin;
    hcq_buffer *a, *h, *v, *out;
    hcq_signal *s;
    hcq_queue *q;
    hcq_graph *g;
    hcq_ctx *ctx;
} walk;

static void w_load(walk *w)
{
    w->inc = T_NONNULL(hcq_program_load(w->d, w->inc_bin->data, w->inc_bin->size));
    w->spin = T_NONNULL(hcq_program_load(w->d, w->spin_bin->data, w->spin_bin->size));
}
static void w_alloc(walk *w)
{
    w->a = T_NONNULL(hcq_buffer_alloc(w->d, 4096, HCQ_MEM_DEVICE));
    w->h = T_NONNULL(hcq_buffer_alloc(w->d, 4096, HCQ_MEM_HOST));
    w->out = T_NONNULL(hcq_buffer_alloc(w->d, 64 * 4, HCQ_MEM_DEVICE));
}
static void w_copyin(walk *w)
{
    static uint32_t z[1024];
    T_OK(hcq_buffer_copyin(w->a, 0, z, sizeof z));
}
static void w_launch(walk *w)
{
    hcq_arg a = hcq_arg_buffer(w->a);
    T_OK(hcq_launch(w->inc, &a, 1, hcq_dims_1d(1, 1)));
}
static void w_view(walk *w) { w->v = T_NONNULL(hcq_buffer_view(w->a, 64, 64)); }
static void w_queue(walk *w)
{
    w->s = T_NONNULL(hcq_signal_create(w->d, 0));
    w->q = T_NONNULL(hcq_queue_create(w->d, HCQ_QUEUE_COMPUTE));
    hcq_arg a = hcq_arg_buffer(w->v);
    T_OK(hcq_queue_exec(w->q, w->inc, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_queue_signal(w->q, w->s, HCQ_VAR(0)));
    uint64_t one = 1;
    T_OK(hcq_queue_submit(w->q, &one, 1));
}
static void w_graph(walk *w)
{
    w->g = T_NONNULL(hcq_graph_create(w->d));
    hcq_arg a = hcq_arg_buffer(w->a);
    T_OK(hcq_graph_launch(w->g, w->inc, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_graph_copy(w->g, w->h, 0, w->a, 0, 4096));
    T_OK(hcq_graph_replay(w->g, NULL, 0));
}
static void w_tensor(walk *w)
{
    w->ctx = T_NONNULL(hcq_ctx_create(w->d));
    int64_t shape[1] = {256};
    hcq_tensor *t = hcq_add_s(hcq_ones(w->ctx, HCQ_F32, shape, 1), 1);
    T_OK(hcq_realize(t));
}
static void w_frees(walk *w)
{
    /* let go of what the recordings hold: they keep it */
    T_OK(hcq_program_free(w->inc));
    T_OK(hcq_buffer_free(w->v));
    T_OK(hcq_signal_destroy(w->s));
    w->inc = NULL;
    w->v = NULL;
    w->s = NULL;
}
static void w_copyout(walk *w)
{
    uint32_t x[1024];
    T_OK(hcq_buffer_copyout(x, w->a, 0, sizeof x));
    cr_assert_geq(x[0], 1u);
}
static void w_replay_again(walk *w) { T_OK(hcq_graph_replay(w->g, NULL, 0)); }

static const struct {
    const char *name;
    void (*run)(walk *w);
} walk_steps[] = {
    {"programs loaded", w_load},  {"buffers allocated", w_alloc}, {"copied in", w_copyin},
    {"launched", w_launch},       {"a view made", w_view},        {"a queue submitted", w_queue},
    {"a graph replayed", w_graph}, {"a tensor realized", w_tensor}, {"objects freed under recordings", w_frees},
    {"copied out", w_copyout},    {"the graph replayed again", w_replay_again},
};
#define WALK_STEPS (sizeof walk_steps / sizeof walk_steps[0])

/* work that keeps the engines busy at close: a long kernel, a queue parked
 * on a gate, and eager work behind both */
static void w_busy(walk *w, hcq_program *spin, hcq_buffer *out, uint32_t spin_steps)
{
    hcq_arg a[2] = {hcq_arg_buffer(out), hcq_arg_u32(spin_steps)};
    T_OK(hcq_launch(spin, a, 2, hcq_dims_1d(64, 1)));
    hcq_signal *gate = T_NONNULL(hcq_signal_create(w->d, 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(w->d, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    static uint32_t z[64];
    T_OK(hcq_buffer_copyin(out, 0, z, sizeof z));
}

ParameterizedTestParameters(mock_failures, teardown_at_every_point_busy_or_not)
{
    return cr_make_param_array(walk_case, walk_cases, sizeof walk_cases / sizeof walk_cases[0]);
}

ParameterizedTest(walk_case *c, mock_failures, teardown_at_every_point_busy_or_not, .timeout = 600)
{
    if (c->cpu) {
        setenv("HCQ_ALLOC_CACHE", "0", 1);
        unsetenv("HCQ_MOCK");
        if (c->ir) setenv("HCQ_CPU_TARGET", "ir", 1);
    } else {
        use_mock(&c->g, NULL);
    }
    setenv("HCQ_TIMEOUT_MS", "20000", 1); /* nothing may time out under load */
    base_env_reload();
    if (c->cpu) sys_set(NULL);
    walk w = {0};
    w.d = T_NONNULL(hcq_device_open(c->g.device));
    const char *target = hcq_device_get_props(w.d)->target;
    hcq_kernel *k = t_k_inc();
    compile_for_mock(k, target, &w.inc_bin);
    hcq_kernel_destroy(k);
    k = t_k_spin();
    compile_for_mock(k, target, &w.spin_bin);
    hcq_kernel_destroy(k);
    w_tensor(&w); /* kernels compiled once, before the walk */
    T_OK(hcq_device_close(w.d));
    live base = c->cpu ? (live){0} : live_now(&c->g);
    uint64_t worst = 0;
    char worst_at[96] = "";
    unsigned closes = 0;
    for (size_t point = 0; point <= WALK_STEPS; point++) {
        for (int busy = 0; busy < 2; busy++) {
            hcq_binary *ib = w.inc_bin, *sb = w.spin_bin;
            w = (walk){.inc_bin = ib, .spin_bin = sb};
            w.d = hcq_device_open(c->g.device);
            cr_assert_not_null(w.d, "point %zu: %s", point, hcq_error_message());
            for (size_t i = 0; i < point; i++) walk_steps[i].run(&w);
            if (busy) {
                hcq_program *spin = w.spin ? w.spin : T_NONNULL(hcq_program_load(w.d, sb->data, sb->size));
                hcq_buffer *out = w.out ? w.out : T_NONNULL(hcq_buffer_alloc(w.d, 64 * 4, HCQ_MEM_DEVICE));
                w_busy(&w, spin, out, 1u << 24);
            } else {
                T_OK(hcq_device_synchronize(w.d));
            }
            uint64_t t0 = hcq_now_ns();
            T_OK(hcq_device_close(w.d));
            uint64_t t = hcq_now_ns() - t0;
            closes++;
            if (t > worst) {
                worst = t;
                snprintf(worst_at, sizeof worst_at, "%s, %s", point ? walk_steps[point - 1].name : "opened",
                         busy ? "busy" : "idle");
            }
            cr_assert_lt(t, 5000000000ull, "closing after \"%s\" (%s) took %.0f ms",
                         point ? walk_steps[point - 1].name : "opened", busy ? "busy" : "idle", (double)t / 1e6);
            if (!c->cpu) {
                live l = live_now(&c->g);
                cr_assert(l.objects == base.objects && l.vram == base.vram,
                          "closing after \"%s\" (%s): %lld driver objects and %lld bytes of VRAM left behind",
                          point ? walk_steps[point - 1].name : "opened", busy ? "busy" : "idle",
                          (long long)(l.objects - base.objects), (long long)(l.vram - base.vram));
            }
        }
    }
    /* an abandoned CPU engine (none expected: the busy kernel's work-groups
     * are short) would free its device when it ends */
    for (int i = 0; i < 300 && cpu_abandoned_devices(); i++) base_sleep_ns(100000000);
    cr_assert_eq(cpu_abandoned_devices(), 0u);
    hcq_device *d = T_NONNULL(hcq_device_open(c->g.device));
    still_works(d);
    T_OK(hcq_device_close(d));
    fprintf(stderr, "teardown walk on %s%s: %u closes at %zu points, longest %.1f ms (%s)\n", c->g.device,
            c->ir ? " (ir)" : c->cpu ? "" : c->g.spec[0] == 'n' ? " (mock nv)" : " (mock amd)", closes,
            WALK_STEPS + 1, (double)worst / 1e6, worst_at);
    hcq_binary_free(w.inc_bin);
    hcq_binary_free(w.spin_bin);
}

/* ** the teardown's own ioctls failing in turn: at a busy point, each
 * driver call that closing makes fails once (errnos, and RM statuses on
 * NV). Close still returns within the bound and the next open works; a
 * driver that would not free keeps what it holds (logged), as above. When
 * the call that stops the engines is the one refused (freeing NV's channel
 * group, destroying a kfd queue), the engines run on until the driver
 * tears them down with the device, and the mock does not unmap memory
 * under a running kernel: close then lasts as long as the kernel in
 * flight, so this walk's kernel is short. */
ParameterizedTestParameters(mock_failures, every_ioctl_of_a_busy_close_fails_in_turn)
{
    return cr_make_param_array(gpu_case, cases, sizeof cases / sizeof cases[0]);
}

static void busy_workload(walk *w, hcq_binary *inc_bin, hcq_binary *spin_bin, const char *device)
{
    *w = (walk){.inc_bin = inc_bin, .spin_bin = spin_bin};
    w->d = T_NONNULL(hcq_device_open(device));
    w_load(w);
    w_alloc(w);
    w_copyin(w);
    w_launch(w);
    w_view(w);
    w_queue(w);
    w_graph(w);
    w_busy(w, w->spin, w->out, 1u << 14);
}

ParameterizedTest(gpu_case *c, mock_failures, every_ioctl_of_a_busy_close_fails_in_turn, .timeout = 600)
{
    /* the walk sets a busy device up once per ioctl: 8-14 s each; make test
     * walks NV's (RM statuses and errnos), CI (HCQ_TEST_LONG=1) AMD's
     * gfx1100 and multi-XCC gfx942 too */
    if (!c->nv && !getenv("HCQ_TEST_LONG"))
        cr_skip_test("HCQ_TEST_LONG=1 (CI) walks the AMD mocks' busy close too");
    use_mock(c, NULL);
    setenv("HCQ_TIMEOUT_MS", "20000", 1);
    base_env_reload();
    hcq_device *d = T_NONNULL(hcq_device_open(c->device));
    const char *target = hcq_device_get_props(d)->target;
    hcq_binary *inc_bin = NULL, *spin_bin = NULL;
    hcq_kernel *k = t_k_inc();
    compile_for_mock(k, target, &inc_bin);
    hcq_kernel_destroy(k);
    k = t_k_spin();
    compile_for_mock(k, target, &spin_bin);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
    walk w;
    busy_workload(&w, inc_bin, spin_bin, c->device);
    uint64_t c0 = mock_ioctl_count();
    T_OK(hcq_device_close(w.d));
    uint64_t n = mock_ioctl_count() - c0;
    cr_assert_gt(n, 0);
    uint64_t worst = 0;
    /* A busy close's ioctls are not the same number every time (the
     * close's grace polls for faults while it waits, as often as the
     * timing allows), so the walk goes on to the longest close seen: the
     * tail of a longer close has its turn too (a close shorter than i
     * just closes). */
    for (uint64_t i = 1; i <= n; i++) {
        busy_workload(&w, inc_bin, spin_bin, c->device);
        bool as_status = c->nv && i % 2;
        mock_fail_ioctl(i, as_status ? 0 : i % 3 ? EIO : EBUSY, as_status ? NV_ERR_INVALID_ARGUMENT : 0);
        uint64_t t0 = hcq_now_ns(), c1 = mock_ioctl_count();
        T_OK(hcq_device_close(w.d));
        uint64_t t = hcq_now_ns() - t0, made = mock_ioctl_count() - c1;
        mock_fail_ioctl(0, 0, 0);
        if (made > n) n = made;
        if (t > worst) worst = t;
        if (getenv("WALK_VERBOSE")) fprintf(stderr, "ioctl %llu: %.1f ms\n", (unsigned long long)i, (double)t / 1e6);
        cr_assert_lt(t, 5000000000ull, "close with its ioctl %llu of %llu failing took %.0f ms", (unsigned long long)i,
                     (unsigned long long)n, (double)t / 1e6);
    }
    d = T_NONNULL(hcq_device_open(c->device));
    still_works(d);
    T_OK(hcq_device_close(d));
    fprintf(stderr, "failing teardown on %s (%s): %llu ioctls of a busy close failed in turn, longest close %.1f ms\n",
            c->device, c->spec, (unsigned long long)n, (double)worst / 1e6);
    hcq_binary_free(inc_bin);
    hcq_binary_free(spin_bin);
}

/* A queue KFD will not destroy (the process is under a debugger: EBUSY,
 * and the queue runs on) at a busy close: the close keeps every buffer of
 * the device, allocated and mapped, so the copy queue still polling its
 * gate signal reads mapped memory and never faults (a fault would reach
 * the next device's memory event and evict its queues), and the next open
 * and its work go as usual. */
static gpu_case amd_cases[] = {
    {"amd=gfx1100", "AMD:0", false},
    {"amd=gfx942", "AMD:0", false},
};
ParameterizedTestParameters(mock_failures, a_queue_kfd_keeps_keeps_the_devices_memory)
{
    return cr_make_param_array(gpu_case, amd_cases, sizeof amd_cases / sizeof amd_cases[0]);
}

ParameterizedTest(gpu_case *c, mock_failures, a_queue_kfd_keeps_keeps_the_devices_memory)
{
    use_mock(c, NULL);
    hcq_device *d = T_NONNULL(hcq_device_open(c->device));
    const char *target = hcq_device_get_props(d)->target;
    hcq_binary *inc_bin = NULL, *spin_bin = NULL;
    hcq_kernel *k = t_k_inc();
    compile_for_mock(k, target, &inc_bin);
    hcq_kernel_destroy(k);
    k = t_k_spin();
    compile_for_mock(k, target, &spin_bin);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
    walk w;
    busy_workload(&w, inc_bin, spin_bin, c->device);
    mock_amd_gpu *g = mock_amd_gpu_at(0);
    unsigned faults = atomic_load(&g->faults);
    uint64_t vram = atomic_load(&g->g->vram_used);
    pthread_mutex_lock(&mock_amd_P.lock);
    size_t nbos = mock_amd_P.nbos;
    mock_amd_P.debugged = true;
    pthread_mutex_unlock(&mock_amd_P.lock);
    T_OK(hcq_device_close(w.d));
    pthread_mutex_lock(&mock_amd_P.lock);
    mock_amd_P.debugged = false;
    unsigned queues = 0;
    for (mock_amd_queue *q = mock_amd_P.queues; q; q = q->next) queues++;
    size_t kept = mock_amd_P.nbos;
    pthread_mutex_unlock(&mock_amd_P.lock);
    cr_assert_eq(queues, 2, "KFD keeps the compute and copy queues it would not destroy: %u queues", queues);
    cr_assert_eq(kept, nbos, "every buffer of the device stays while its queues may run: %zu of %zu", kept, nbos);
    cr_assert_eq(atomic_load(&g->g->vram_used), vram);
    d = T_NONNULL(hcq_device_open(c->device));
    still_works(d);
    T_OK(hcq_device_close(d));
    cr_assert_eq(atomic_load(&g->faults), faults, "the queues left running never faulted");
    hcq_binary_free(inc_bin);
    hcq_binary_free(spin_bin);
}
