/* A hostile environment: numeric HCQ_* variables that are not numbers or
 * out of range (refused with a message, never a wrapped size), a driver
 * that answers EAGAIN forever (bounded, sleeping), a compiler that never
 * finishes (killed at HCQ_COMPILE_TIMEOUT_S), and kernel caches that are
 * full, hold FIFOs, or belong to someone else. Criterion runs each test in
 * a process of its own, so setenv stays in the test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(hostile_env, .timeout = 120);

/* every numeric variable, with values it must refuse */
static const struct {
    const char *name, *bad[4];
} numeric[] = {
    {"HCQ_DEBUG", {"verbose", "5", "-1", "2x"}},
    {"HCQ_MOCK", {"yes", "2", "-1", "1.5"}},
    {"HCQ_TRACE", {"on", "3", NULL}},
    {"HCQ_TIMEOUT_MS", {"forever", "-5", "99999999999", "1e3"}},
    {"HCQ_COMPILE_TIMEOUT_S", {"never", "-1", "100000", NULL}},
    {"HCQ_CPU_THREADS", {"all", "-2", "100000", NULL}},
    {"HCQ_ALLOC_CACHE", {"off", "2", NULL}},
    {"HCQ_KERNARG_RING_KIB", {"big", "0", "63", "4294967297"}},
    {"HCQ_STAGING_CHUNK_KIB", {"x", "0", "3", "4294967297"}},
    {"HCQ_STAGING_SLOTS", {"many", "1", "65", "-1"}},
    {"HCQ_TIMELINE_START", {"zero", "-1", "18446744073709551615", NULL}},
    {"HCQ_RING_SHIFT", {"x", "4", "25", NULL}},
};

Test(hostile_env, nonsense_in_numeric_variables_is_refused_with_a_message)
{
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
        for (int j = 0; j < 4 && numeric[i].bad[j]; j++) {
            setenv(numeric[i].name, numeric[i].bad[j], 1);
            base_env_reload();
            cr_assert_null(hcq_device_open("CPU"), "%s=%s opened a device", numeric[i].name, numeric[i].bad[j]);
            cr_assert_eq(hcq_error_status(), HCQ_EINVAL, "%s=%s: %s", numeric[i].name, numeric[i].bad[j],
                         hcq_error_message());
            T_MSG_HAS(numeric[i].name);
            T_MSG_HAS(numeric[i].bad[j]);
            hcq_binary *b = NULL;
            hcq_kernel *k = t_k_inc();
            T_FAILS(hcq_compile(k, "ir", &b), HCQ_EINVAL);
            hcq_kernel_destroy(k);
            unsetenv(numeric[i].name);
        }
    }
    base_env_reload();
    T_OK(base_env_check("test"));
}

Test(hostile_env, good_values_are_taken)
{
    setenv("HCQ_STAGING_CHUNK_KIB", " 64", 1);
    setenv("HCQ_STAGING_SLOTS", "0x10", 1);
    setenv("HCQ_TIMEOUT_MS", "0", 1); /* the default */
    setenv("HCQ_DEBUG", "", 1);       /* empty is unset */
    base_env_reload();
    T_OK(base_env_check("test"));
    const base_env *e = base_env_get();
    cr_assert_eq(e->staging_chunk_kib, 64u);
    cr_assert_eq(e->staging_slots, 16u);
    cr_assert_eq(e->timeout_ns, HCQ_DEFAULT_TIMEOUT_NS);
    cr_assert_eq(e->debug, 0);
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    cr_assert_eq(hcq_device_get_props(d)->staging_bytes, 64u * 1024 * 16);
    T_OK(hcq_device_close(d));
}

/* The sizes that used to wrap: refused as a product too, and a copy
 * through the largest staging accepted moves every byte. */
Test(hostile_env, staging_sizes_that_would_wrap_are_refused)
{
    setenv("HCQ_STAGING_CHUNK_KIB", "1048576", 1);
    setenv("HCQ_STAGING_SLOTS", "64", 1);
    base_env_reload();
    cr_assert_null(hcq_device_open("CPU"));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    T_MSG_HAS("HCQ_STAGING_CHUNK_KIB=1048576 x HCQ_STAGING_SLOTS=64");
    setenv("HCQ_STAGING_CHUNK_KIB", "4", 1);
    setenv("HCQ_STAGING_SLOTS", "2", 1);
    base_env_reload();
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    enum { N = 40000 };
    static uint8_t in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (uint8_t)(i * 7 + 1);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, in, N));
    T_OK(hcq_buffer_copyout(out, b, 0, N));
    cr_assert(memcmp(in, out, N) == 0);
    T_OK(hcq_device_close(d));
}

/* ** a driver answering EAGAIN */
static int calls;
static int always_again(void *arg)
{
    (void)arg;
    calls++;
    return -EAGAIN;
}
static int again_then_ok(void *arg)
{
    (void)arg;
    return ++calls < 5 ? -EAGAIN : 7;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(hostile_env, eagain_forever_gives_up_at_the_timeout_without_spinning)
{
    setenv("HCQ_TIMEOUT_MS", "400", 1);
    base_env_reload();
    calls = 0;
    uint64_t t0 = hcq_now_ns();
    double c0 = cpu_seconds();
    int r = sys_retry(always_again, NULL);
    double wall = (double)(hcq_now_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
    cr_assert_eq(r, -EAGAIN);
    cr_assert_geq(wall, 0.39, "gave up after %.3f s", wall);
    cr_assert_lt(wall, 2.0, "gave up after %.3f s, not at the 400 ms timeout", wall);
    cr_assert_lt(cpu, wall / 4, "%.3f s of CPU in %.3f s: it spun", cpu, wall);
    cr_assert_lt(calls, 1000, "%d calls in %.3f s", calls, wall);
    calls = 0;
    cr_assert_eq(sys_retry(again_then_ok, NULL), 7, "a driver busy for a moment is waited for");
}
