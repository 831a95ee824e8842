/* HCQ_MOCK_SHADER=none: the mock GPUs build kernels as they would for the
 * real target and complete their launches without running them (the
 * hardware kit fills its kernel cache this way with matmuls no emulator
 * could run in time). What the mode must keep: the device says what it
 * does, a launch completes and leaves memory as it was, the binaries are
 * the real target's where its tools are, and the self-test's kernel
 * stage is reported as not run rather than failed. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "base/base.h"
#include "compiler/twin.h"
#include "hcqtest.h"

static void setup(void)
{
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "none", 1);
    base_env_reload();
}

static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}

TestSuite(mock_shader_none, .init = setup, .fini = teardown, .timeout = 120);

/* out[i] = 42 for each work-item i */
static hcq_kernel *k_store42(void)
{
    hcq_kernel *k = hcq_kernel_create("store42");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref i = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    hcq_ir_store(k, out, i, hcq_ir_const_int(k, HCQ_U32, 42));
    return k;
}

static void check(const char *name, const char *arch)
{
    hcq_device *dev = hcq_device_open(name);
    cr_assert_not_null(dev, "opening %s with HCQ_MOCK_SHADER=none: %s", name, hcq_error_message());
    const hcq_device_props *pr = hcq_device_get_props(dev);
    cr_assert(!strncmp(pr->shader, "nothing (HCQ_MOCK_SHADER=none)", 30), "%s: shader \"%s\"", name, pr->shader);
    cr_assert(strstr(pr->paths, "not run"), "%s: the self-test's kernel stage is reported as not run: \"%s\"", name, pr->paths);
    char why[480];
    bool real = cc_twin_available(arch, why, sizeof why);
    char want[32];
    snprintf(want, sizeof want, "%s%s", real ? "" : "mock-", arch);
    cr_assert_str_eq(pr->target, want, "%s builds for %s (%s)", name, want, real ? "its tools are here" : why);

    uint32_t init[64], got[64];
    for (int i = 0; i < 64; i++) init[i] = 7u + (uint32_t)i;
    hcq_program *p = t_load(dev, k_store42());
    hcq_buffer *b = t_buffer_from(dev, init, sizeof init);
    hcq_arg a[1] = {hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(1, 64)));
    T_OK(hcq_device_synchronize(dev));
    t_read(b, got, sizeof got);
    cr_assert(!memcmp(got, init, sizeof got), "%s: a launch under HCQ_MOCK_SHADER=none left memory as it was (got %u at 0)", name,
              got[0]);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(p));
    T_OK(hcq_device_close(dev));
}

Test(mock_shader_none, nv_builds_and_completes_without_running) { check("NV:0", "sm_90"); }

Test(mock_shader_none, amd_builds_and_completes_without_running) { check("AMD:0", "gfx1100"); }

Test(mock_shader_none, an_unknown_word_is_refused_with_the_words)
{
    setenv("HCQ_MOCK_SHADER", "nothing", 1);
    base_env_reload();
    cr_assert_null(hcq_device_open("NV:0"));
    T_MSG_HAS("`none`");
}
