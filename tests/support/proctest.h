/* Test support: other programs run by a test, and the preloaded mock
 * (libhcqmock.so) inside them. Shared by the suites that build or run
 * programs hcq did not write (ROCm's, hipcc's, hand-written clients) or
 * hcq's own tools. */
#ifndef HCQ_TESTS_PROCTEST_H
#define HCQ_TESTS_PROCTEST_H

#include <stddef.h>

#include "tmptest.h"

/* A sanitizer build's libhcqmock.so carries the sanitizer's runtime, which
 * must load first: it cannot be preloaded into the uninstrumented programs
 * these suites run (gcc says __SANITIZE_*__, clang __has_feature). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T_SANITIZED 1
#endif
#endif

/* Runs the shell command fmt: its exit status, 128 + the signal that ended
 * it, or 128 when it could not run. */
int t_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The file's first max bytes, NUL-terminated, in a buffer to free(); an
 * empty string when it cannot be read. */
char *t_slurp(const char *path, size_t max);

/* hcq's binary ($HCQ_TEST_HCQ_BIN, else build/hcq); skips the test in a
 * sanitizer build, whose libraries cannot be preloaded into other programs. */
const char *t_hcq_bin(void);

/* The absolute path of libhcqmock.so, built beside t_hcq_bin() (programs
 * run in other directories); skips as t_hcq_bin does, fails the test when
 * the library is not there. */
const char *t_mock_preload_lib(void);

/* Writes into buf the path of NAME in the build directory's test-kept/
 * (beside t_mock_preload_lib(), made if absent): for what a slow build
 * (hipcc) makes once and later runs reuse, which a temporary directory
 * would lose and /tmp would collect. Skips and fails as t_mock_preload_lib. */
void t_kept_path(char *buf, size_t size, const char *name);

#endif
