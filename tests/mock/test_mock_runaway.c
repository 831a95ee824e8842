/* Runaway kernels end (issue 20, item 3). A kernel that loops for
 * minutes, on the mock GPUs:
 *   - host twins (NV and AMD): the host's wait times out, and closing the
 *     device returns (the twin's loops look at the engine's stop flag);
 *   - the SASS executor: past the mock's watchdog the channel gets the
 *     error RM reports for it, Xid 8 (ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT,
 *     "GPU stopped processing"), and closing during the kernel returns too.
 * Closes are held to the bound test_api_lifetime.c uses. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/sass.h"
#include "compiler/twin.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

#define CLOSE_BOUND_NS 5000000000ull

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    unsetenv("HCQ_TIMEOUT_MS");
    base_env_reload();
}
TestSuite(mock_runaway, .init = setup, .fini = teardown, .timeout = 120);

static void env(const char *shader, const char *timeout_ms)
{
    if (shader) setenv("HCQ_MOCK_SHADER", shader, 1);
    else unsetenv("HCQ_MOCK_SHADER");
    setenv("HCQ_TIMEOUT_MS", timeout_ms, 1);
    base_env_reload();
}

/* spin's loop runs 2^31 times in each of many work-items: minutes on any executor */
static hcq_program *launch_runaway(hcq_device *d)
{
    hcq_program *p = t_load(d, t_k_spin());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64 * 4, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(1u << 31)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(64, 32)));
    return p;
}

static void bounded_close(hcq_device *d)
{
    uint64_t t0 = hcq_now_ns();
    T_OK(hcq_device_close(d));
    uint64_t t = hcq_now_ns() - t0;
    cr_assert_lt(t, CLOSE_BOUND_NS, "close took %.0f ms", (double)t / 1e6);
}

static void twin_close(const char *cfg, const char *id, const char *arch)
{
    char why[256];
    env(NULL, "1000"); /* whether the tools are here (`twin` would say yes without them) */
    if (!cc_twin_available(arch, why, sizeof why)) cr_skip_test("no host twins for %s here: %s", arch, why);
    env("twin", "1000"); /* (by default the mock runs the machine code on its executor) */
    T_OK(mock_configure(cfg));
    hcq_device *d = hcq_device_open(id);
    cr_assert_not_null(d, "%s", hcq_error_message());
    cr_assert(strstr(hcq_device_get_props(d)->shader, "host twins"), "%s", hcq_device_get_props(d)->shader);
    launch_runaway(d);
    T_FAILS(hcq_device_synchronize(d), HCQ_ETIMEDOUT);
    bounded_close(d);
}

Test(mock_runaway, nv_twin_close_returns) { twin_close("", "NV:0", "sm_90"); }
Test(mock_runaway, amd_twin_close_returns) { twin_close("", "AMD:0", "gfx1100"); }

static void need_sass(void)
{
    char why[600];
    if (!sass_nvdisasm(why, sizeof why)) cr_skip_test("no SASS decoder: %s", why);
}

Test(mock_runaway, sass_watchdog_is_xid_8)
{
    need_sass();
    env("isa", "20000");
    T_OK(mock_configure("watchdog_ms=300"));
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    launch_runaway(d);
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("Xid 8");
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "watchdog") && strstr(err, "spin"), "%s", err);
    bounded_close(d);
}

Test(mock_runaway, sass_close_stops_the_kernel)
{
    need_sass();
    env("isa", "500");
    T_OK(mock_configure("watchdog_ms=0"));
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    launch_runaway(d);
    T_FAILS(hcq_device_synchronize(d), HCQ_ETIMEDOUT);
    bounded_close(d);
}
