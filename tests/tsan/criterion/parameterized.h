/* The shim's parameterized tests (see criterion.h beside this file):
 * ParameterizedTestParameters returns an array made by cr_make_param_array,
 * and the runner forks one child per element. */
#ifndef HCQ_TSAN_CRITERION_PARAMETERIZED_H
#define HCQ_TSAN_CRITERION_PARAMETERIZED_H

#include "criterion.h"

struct criterion_test_params {
    size_t size;
    void *params;
    size_t length;
};

#define cr_make_param_array(Type, Array, Len, ...)                                                 \
    ((struct criterion_test_params){sizeof(Type), (void *)(Array), (size_t)(Len)})

void shim_register_param_test(const char *suite, const char *name, void (*fn)(void *),
                              struct criterion_test_params (*params)(void),
                              const struct criterion_test_extra_data *opts);

#define ParameterizedTestParameters(suite, name)                                                   \
    static struct criterion_test_params shim_params_##suite##_##name(void)

#define ParameterizedTest(decl, suite, name, ...)                                                  \
    static struct criterion_test_params shim_params_##suite##_##name(void);                        \
    static void shim_pfn_##suite##_##name(decl);                                                   \
    static void shim_pwrap_##suite##_##name(void *p) { shim_pfn_##suite##_##name(p); }             \
    __attribute__((constructor)) static void shim_preg_##suite##_##name(void)                      \
    {                                                                                              \
        static const struct criterion_test_extra_data o = {.sentinel_ = 0, __VA_ARGS__};           \
        shim_register_param_test(#suite, #name, shim_pwrap_##suite##_##name,                       \
                                 shim_params_##suite##_##name, &o);                                \
    }                                                                                              \
    static void shim_pfn_##suite##_##name(decl)

#endif
