/* Failures that used to be silent (issue 26): a word variable with a typo,
 * a negative number, a cache directory that cannot be made, a profile that
 * cannot be written, and a normal close logged as a fault. Criterion runs
 * each test in a process of its own, so setenv stays in the test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/isa.h"
#include "hcqtest.h"

TestSuite(loud_env, .timeout = 120);

/* every word variable, with values it must refuse and the words the
 * message lists */
static const struct {
    const char *name, *bad[4], *words[3];
} words[] = {
    {"HCQ_CPU_TARGET", {"IR", "gpu", "ir ", "interp"}, {"`cpu`", "`ir`"}},
    {"HCQ_MOCK_SHADER", {"twins", "IR", "auto", "sass "}, {"`ir`", "`twin`"}},
    {"HCQ_MOCK_SHADER_NV", {"twins", "nv", NULL}, {"`ir`", "`twin`", "`isa`"}},
    {"HCQ_MOCK_SHADER_AMD", {"TWIN", "amd", NULL}, {"`ir`", "`twin`", "`isa`"}},
    {"HCQ_STATUS_DIR", {"of", "OFF", "relative/dir", NULL}, {"`off`", "absolute"}},
    {"HCQ_TRACE_JSON", {"yes", "2", NULL}, {"0 or 1"}},
    {"HCQ_TRACE_STREAMS", {"on", "-1", NULL}, {"0 or 1"}},
};

Test(loud_env, typos_in_word_variables_are_refused_with_the_accepted_values)
{
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        for (int j = 0; j < 4 && words[i].bad[j]; j++) {
            setenv(words[i].name, words[i].bad[j], 1);
            base_env_reload();
            cr_assert_null(hcq_device_open("CPU"), "%s=%s opened a device", words[i].name, words[i].bad[j]);
            cr_assert_eq(hcq_error_status(), HCQ_EINVAL, "%s=%s: %s", words[i].name, words[i].bad[j],
                         hcq_error_message());
            T_MSG_HAS(words[i].name);
            T_MSG_HAS(words[i].bad[j]);
            for (int w = 0; w < 3 && words[i].words[w]; w++) T_MSG_HAS(words[i].words[w]);
            unsetenv(words[i].name);
        }
    }
    base_env_reload();
    T_OK(base_env_check("test"));
}

Test(loud_env, a_bad_hcq_device_is_named_as_the_variable)
{
    setenv("HCQ_DEVICE", "gpu", 1);
    base_env_reload();
    cr_assert_null(hcq_device_open(NULL));
    T_MSG_HAS("HCQ_DEVICE=gpu");
    T_MSG_HAS("kinds are CPU, NV and AMD");
}

Test(loud_env, accepted_words_are_taken)
{
    setenv("HCQ_CPU_TARGET", "cpu", 1);
    setenv("HCQ_MOCK_SHADER", "twin", 1);
    setenv("HCQ_STATUS_DIR", "off", 1);
    base_env_reload();
    T_OK(base_env_check("test"));
    cr_assert_str_eq(base_env_get()->mock_shader, "twin");
    setenv("HCQ_CPU_TARGET", "ir", 1);
    setenv("HCQ_MOCK_SHADER", "ir", 1);
    setenv("HCQ_STATUS_DIR", "/tmp/hcq-status-test", 1);
    base_env_reload();
    T_OK(base_env_check("test"));
    cr_assert_str_eq(base_env_get()->cpu_target, "ir");
}

Test(loud_env, a_negative_number_is_out_of_range_with_the_range)
{
    setenv("HCQ_TIMEOUT_MS", "-5", 1);
    base_env_reload();
    T_FAILS(base_env_check("test"), HCQ_EINVAL);
    T_MSG_HAS("HCQ_TIMEOUT_MS=-5 is out of range");
    T_MSG_HAS("from 0 to 86400000");
    setenv("HCQ_TIMEOUT_MS", "-x", 1);
    base_env_reload();
    T_FAILS(base_env_check("test"), HCQ_EINVAL);
    T_MSG_HAS("is not a number");
}

/* runs cmd with stderr into a buffer; returns the exit status */
static int run_sh(const char *cmd, char *out, size_t size)
{
    char full[2048];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    return pclose(p);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

static const char *hcq_bin(void)
{
    const char *b = getenv("HCQ_TEST_HCQ_BIN");
    return b ? b : "build/hcq";
}

Test(loud_env, an_unusable_cache_directory_is_said_once_at_the_default_level)
{
    setenv("HCQ_CACHE_DIR", "/proc/nope", 1);
    base_env_reload();
    char buf[8192];
    t_stderr c = t_stderr_begin();
    hcq_kernel *ks[2] = {t_k_inc(), t_k_add1()};
    for (int i = 0; i < 2; i++) {
        hcq_binary *b = NULL;
        T_OK(hcq_compile(ks[i], "cpu", &b)); /* compiles all the same, uncached */
        hcq_binary_free(b);
        hcq_kernel_destroy(ks[i]);
    }
    t_stderr_end(c, buf, sizeof buf);
    cr_assert(strstr(buf, "kernel cache unusable") && strstr(buf, "/proc/nope"), "%s", buf);
    cr_assert_eq(count(buf, "kernel cache unusable"), 1, "once: %s", buf);
}

Test(loud_env, a_profile_that_cannot_be_written_is_said_once_with_errno_and_fails)
{
    char cmd[512], out[16384];
    snprintf(cmd, sizeof cmd, "%s HCQ_PROFILE=/no/such/dir/p.json %s demo CPU", T_CHILD_SAN_ENV, hcq_bin());
    int st = run_sh(cmd, out, sizeof out);
    cr_assert_neq(st, 0, "the run without its profile fails: %s", out);
    cr_assert(strstr(out, "HCQ_PROFILE=/no/such/dir/p.json: cannot create it: ENOENT"), "%s", out);
    cr_assert_eq(count(out, "cannot create it"), 1, "once: %s", out);
    cr_assert(!strstr(out, "hcq[0]"), "said by the command that failed, not logged besides: %s", out);

    /* in process: the open fails with the reason */
    setenv("HCQ_PROFILE", "/no/such/dir/p.json", 1);
    base_env_reload();
    cr_assert_null(hcq_device_open("CPU"));
    cr_assert_eq(hcq_error_status(), HCQ_EIO, "%s", hcq_error_message());
    T_MSG_HAS("ENOENT");
}

Test(loud_env, a_normal_close_logs_no_fault)
{
    setenv("HCQ_DEBUG", "1", 1);
    base_env_reload();
    char buf[8192];
    t_stderr c = t_stderr_begin();
    hcq_device *d = T_NONNULL(hcq_device_open("CPU"));
    T_OK(hcq_device_close(d));
    t_stderr_end(c, buf, sizeof buf);
    cr_assert(strstr(buf, "closed in"), "the close is logged: %s", buf);
    cr_assert(!strstr(buf, "faulted"), "no fault on a normal close: %s", buf);
}

/* HCQ_MOCK_SHADER_NV / _AMD choose for their kind only, over
 * HCQ_MOCK_SHADER, and messages name the variable that chose */
Test(loud_env, a_kind_s_own_shader_variable_wins_for_that_kind_only)
{
    setenv("HCQ_MOCK_SHADER", "ir", 1);
    setenv("HCQ_MOCK_SHADER_NV", "twin", 1);
    base_env_reload();
    T_OK(base_env_check("test"));
    const char *var = NULL;
    cr_assert_eq(cc_mock_shader("sm_90", &var), BASE_MOCK_SHADER_TWIN);
    cr_assert_str_eq(var, "HCQ_MOCK_SHADER_NV");
    cr_assert_eq(cc_mock_shader("mock-sm_80", NULL), BASE_MOCK_SHADER_TWIN);
    cr_assert_eq(cc_mock_shader("gfx1100", &var), BASE_MOCK_SHADER_IR);
    cr_assert_str_eq(var, "HCQ_MOCK_SHADER");
    char why[600];
    cr_assert(!cc_isa_on("sm_90", why, sizeof why));
    cr_assert(strstr(why, "HCQ_MOCK_SHADER_NV=twin"), "%s", why);
    unsetenv("HCQ_MOCK_SHADER");
    unsetenv("HCQ_MOCK_SHADER_NV");
    setenv("HCQ_MOCK_SHADER_AMD", "isa", 1);
    base_env_reload();
    cr_assert_eq(cc_mock_shader("gfx942", NULL), BASE_MOCK_SHADER_ISA);
    cr_assert_eq(cc_mock_shader("sm_90", NULL), BASE_MOCK_SHADER_DEFAULT);
    unsetenv("HCQ_MOCK_SHADER_AMD");
    base_env_reload();
}
