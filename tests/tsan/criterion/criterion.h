/* A minimal stand-in for Criterion, used only by `make tsan`.
 *
 * Criterion maps a shared-memory arena at addresses ThreadSanitizer keeps
 * for its shadow memory, so Criterion binaries cannot run under TSan. This
 * header gives the same test files the subset of Criterion they use, and
 * shim.c runs each test in a forked child of a single-threaded runner (the
 * fork TSan supports). Its summary line has Criterion's format, so
 * scripts/run-tests.sh reads it the same way. Not for anything else: the
 * real suites use the real Criterion. */
#ifndef HCQ_TSAN_CRITERION_SHIM_H
#define HCQ_TSAN_CRITERION_SHIM_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h> /* the real header brings it too; tests rely on that */
#include <string.h>

struct criterion_test_extra_data {
    int sentinel_;
    void (*init)(void);
    void (*fini)(void);
    double timeout;
    const char *description;
    bool disabled;
};

void shim_register_test(const char *suite, const char *name, void (*fn)(void),
                        const struct criterion_test_extra_data *opts);
void shim_register_suite(const char *suite, const struct criterion_test_extra_data *opts);
__attribute__((noreturn, format(printf, 4, 5))) void shim_fail(const char *file, int line, const char *expr,
                                                               const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void shim_skip(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void shim_log(const char *fmt, ...);

#define Test(suite, name, ...)                                                                     \
    static void shim_fn_##suite##_##name(void);                                                    \
    __attribute__((constructor)) static void shim_reg_##suite##_##name(void)                       \
    {                                                                                              \
        static const struct criterion_test_extra_data o = {.sentinel_ = 0, __VA_ARGS__};           \
        shim_register_test(#suite, #name, shim_fn_##suite##_##name, &o);                           \
    }                                                                                              \
    static void shim_fn_##suite##_##name(void)

#define TestSuite(suite, ...)                                                                      \
    __attribute__((constructor)) static void shim_suite_##suite(void)                              \
    {                                                                                              \
        static const struct criterion_test_extra_data o = {.sentinel_ = 0, __VA_ARGS__};           \
        shim_register_suite(#suite, &o);                                                           \
    }

#define cr_assert(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) shim_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);                         \
    } while (0)
#define cr_assert_not(cond, ...) cr_assert(!(cond), __VA_ARGS__)
#define cr_assert_fail(...) shim_fail(__FILE__, __LINE__, "fail", "" __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_assert_str_empty(s, ...) cr_assert((s)[0] == 0, __VA_ARGS__)
#define cr_assert_str_not_empty(s, ...) cr_assert((s)[0] != 0, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...) cr_assert(fabs((double)(a) - (double)(b)) <= (eps), __VA_ARGS__)
#define cr_skip_test(...) shim_skip("" __VA_ARGS__)
#define cr_log_info(...) shim_log(__VA_ARGS__)
#define cr_log_warn(...) shim_log(__VA_ARGS__)
#define cr_log_error(...) shim_log(__VA_ARGS__)

#endif
