/* Test support shared by the Criterion suites: the device under test, the
 * small kernels the API suites launch (built from IR, compiled for whatever
 * target the device has), and assertion helpers that print hcq's message. */
#ifndef HCQ_TESTS_SUPPORT_H
#define HCQ_TESTS_SUPPORT_H

#include <criterion/criterion.h>
#include <hcq/hcq.h>

#include "tmptest.h"

/* asserts HCQ_OK, printing the expression and hcq_error_message() */
#define T_OK(expr)                                                                                 \
    do {                                                                                           \
        hcq_status t_s_ = (expr);                                                                  \
        cr_assert_eq(t_s_, HCQ_OK, "%s -> %s: %s", #expr, hcq_status_name(t_s_),                   \
                     hcq_error_message());                                                         \
    } while (0)
/* asserts a specific failure status */
#define T_FAILS(expr, status)                                                                      \
    do {                                                                                           \
        hcq_status t_s_ = (expr);                                                                  \
        cr_assert_eq(t_s_, (status), "%s -> %s (expected %s): %s", #expr, hcq_status_name(t_s_),   \
                     hcq_status_name(status), hcq_error_message());                                \
    } while (0)
#define T_NONNULL(expr)                                                                            \
    ({                                                                                             \
        __typeof__(expr) t_p_ = (expr);                                                            \
        cr_assert_not_null(t_p_, "%s -> NULL: %s", #expr, hcq_error_message());                    \
        t_p_;                                                                                      \
    })
/* asserts the last error message contains a substring */
#define T_MSG_HAS(sub)                                                                             \
    cr_assert(strstr(hcq_error_message(), (sub)) != NULL, "message lacks \"%s\": %s", (sub),       \
              hcq_error_message())

/* The device the API suites run on: $HCQ_TEST_DEVICE, default "CPU". */
const char *t_device_name(void);
hcq_device *t_open(void);
/* The hardware suites' device: skips the test, saying why, where the
 * driver file is absent; else opens name on the real driver (even under
 * HCQ_MOCK=1) and fails the test if that does not work. */
hcq_device *t_open_hw(const char *driver_file, const char *name, const char *why_absent);
/* The second GPU of a kind ("NV", "AMD") for the two-GPU hardware tests:
 * skips the test, saying why, where there is one GPU of that kind or the
 * second does not open. */
hcq_device *t_open_second_hw(const char *kind);
/* A queue of d1 waits, on d1's GPU, for dev's timeline (its signal page
 * mapped for both), submitted before the work on dev that moves it; the
 * host waits only on d1. */
void t_wait_across_gpus(hcq_device *dev, hcq_device *d1);
/* Compiles and loads a kernel for dev; destroys k. */
hcq_program *t_load(hcq_device *dev, hcq_kernel *k);

/* ** kernels (global id = group id * local size + local id, in x) */
/* a[i] += 1 for i < n.                     params: u32 *a, u32 n */
hcq_kernel *t_k_add1(void);
/* c[i] = a[i] + b[i] for i < n.            params: f32 *a, f32 *b, f32 *c, u32 n */
hcq_kernel *t_k_vadd(void);
/* a[i] = a[i] * k + c for i < n.           params: u32 *a, u32 k, u32 c, u32 n */
hcq_kernel *t_k_muladd(void);
/* work-item 0 of group 0: a[0] += 1.       params: u32 *a */
hcq_kernel *t_k_inc(void);
/* out[lin] = 1 at the linear 3-D global index of each work-item, where
 * lin = x + X * (y + Y * z) over the launch's global size.  params: u32 *out */
hcq_kernel *t_k_mark(void);
/* dst[i] = src[i] for i < n.               params: u32 *dst, u32 *src, u32 n */
hcq_kernel *t_k_copy(void);
/* out[group] = a recurrence over spin steps, so a kernel runs as long as
 * asked and no compiler can shorten it.     params: u32 *out, u32 spin */
hcq_kernel *t_k_spin(void);

/* Captures what the process writes to stderr (hcq's logs, the mocks'
 * reasons) between t_stderr_begin and t_stderr_end into buf. */
typedef struct t_stderr {
    FILE *f;
    int saved;
} t_stderr;
t_stderr t_stderr_begin(void);
void t_stderr_end(t_stderr c, char *buf, size_t size);

/* a buffer filled from host data / read back */
hcq_buffer *t_buffer_from(hcq_device *dev, const void *data, size_t size);

/* out[g * L + i] = in[g * L + L - 1 - i] (+ the group count with
 * plus_groups), through local memory and a barrier: the twin suites' kernel
 * for barriers, local memory and the launch's sizes */
hcq_kernel *t_k_reverse(bool plus_groups);
/* runs it (loaded on d) over G groups of L items and checks every element */
void t_run_reverse(hcq_device *d, hcq_program *p, uint32_t G, uint32_t L, bool plus_groups);
void t_read(hcq_buffer *b, void *out, size_t size);

/* Runs `hcq ARGS` (HCQ_TEST_HCQ_BIN, else build/hcq) with ENV assignments
 * before it, stderr with stdout; returns the output (free it) and sets
 * *status to the exit status (128 + signal when killed). */
char *t_run_hcq(const char *env, const char *args, int *status);
/* cmd's output (stdout; add 2>&1 for both), malloc'd; its exit status in
 * *status if given (128 + signal when killed). cmd carries its own timeout. */
char *t_capture(const char *cmd, int *status);
/* how many times word occurs in text */
unsigned t_count(const char *text, const char *word);

/* Prefixed to the environment of hcq commands the tests run. Under ASan the
 * child runs without LeakSanitizer: gcc 12's LSan crashes at exit ("Tracer
 * caught signal 11" at a bogus dynamic-TLS range) once a thread's DTV has
 * been resized, which a process that dlopens more than about 14 host twins
 * (they hold work-group state in thread_local variables) does, e.g. `hcq
 * demo` on the mock GPUs. Leaks of the same code are checked in process by
 * the suites themselves. */
#if defined(__SANITIZE_ADDRESS__)
#define T_CHILD_SAN_ENV "ASAN_OPTIONS=detect_leaks=0 "
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_CHILD_SAN_ENV "ASAN_OPTIONS=detect_leaks=0 "
#endif
#endif
#ifndef T_CHILD_SAN_ENV
#define T_CHILD_SAN_ENV ""
#endif

/* Under ThreadSanitizer, `hcq demo` on the mock GPUs (thousands of host-twin
 * work-groups on fibers, whose shadow stacks TSan cannot unwind across
 * reuse) outlasts its timeouts or trips TSan's own state; the tests that
 * run it skip there and run in make test and make asan. */
#if defined(__SANITIZE_THREAD__)
#define T_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_UNDER_TSAN 1
#endif
#endif
#ifdef T_UNDER_TSAN
#define T_SKIP_MOCK_DEMO_UNDER_TSAN()                                                                             \
    cr_skip_test("hcq demo on the mock GPUs under ThreadSanitizer: host twins' fibers exceed what TSan's fiber "   \
                 "support keeps up with; make test and make asan run this")
#define T_SKIP_LONG_MOCK_RUN_UNDER_TSAN(dev)                                                                      \
    do {                                                                                                           \
        if (hcq_device_get_props(dev)->is_mock)                                                                   \
            cr_skip_test("a long run on the mock GPU under ThreadSanitizer: host twins' fibers exceed what TSan's " \
                         "fiber support keeps up with; make test and make asan run this");                           \
    } while (0)
#else
#define T_SKIP_MOCK_DEMO_UNDER_TSAN() ((void)0)
#define T_SKIP_LONG_MOCK_RUN_UNDER_TSAN(dev) ((void)(dev))
#endif

#endif
