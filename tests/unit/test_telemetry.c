/* Telemetry (hcq_device_telemetry, hcq info, hcq top) against the mock: the
 * NV mock answers the RM monitoring controls and the AMD mock serves the
 * amdgpu/amdkfd sysfs files, with plausible values that follow the work the
 * mock runs; where the driver refuses (a GeForce has no ECC, 570 has no
 * thermal control, an injected RM status or errno, a file an MI300X does
 * not have) the reading is unavailable and names what the driver said. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "drivers/amd/amd_metrics.h"
#include "drivers/mock/mock.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "queue/status.h"

static void setup(void)
{
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(telemetry, .init = setup, .timeout = 240);

static hcq_telemetry *sample(hcq_device *d)
{
    hcq_telemetry *t = malloc(sizeof *t);
    cr_assert_not_null(t);
    T_OK(hcq_device_telemetry(d, t));
    return t;
}

static const hcq_reading *get(const hcq_telemetry *t, const char *name)
{
    const hcq_reading *r = hcq_telemetry_find(t, name);
    cr_assert_not_null(r, "no reading %s", name);
    return r;
}

static void expect_value(const hcq_telemetry *t, const char *name, double lo, double hi)
{
    const hcq_reading *r = get(t, name);
    cr_assert(r->available && !r->is_text, "%s unavailable: %s", name, r->text);
    cr_assert(r->value >= lo && r->value <= hi, "%s = %g, not in [%g, %g]", name, r->value, lo, hi);
    cr_assert(r->source[0], "%s names no source", name);
}

static void expect_none(const hcq_telemetry *t, const char *name, const char *why)
{
    const hcq_reading *r = get(t, name);
    cr_assert(!r->available, "%s is available (%g %s) where the driver gives nothing", name, r->value, r->text);
    cr_assert(strstr(r->text, why), "%s: \"%s\" does not say \"%s\"", name, r->text, why);
}

static bool has_process(const hcq_telemetry *t, uint32_t pid, uint64_t *mem)
{
    for (uint32_t i = 0; i < t->nprocesses; i++)
        if (t->processes[i].pid == pid) {
            if (mem) *mem = t->processes[i].memory_bytes;
            return t->processes[i].memory_known;
        }
    return false;
}

Test(telemetry, nv_h100_reports_what_rm_controls_give_and_says_what_they_do_not)
{
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 8 << 20, HCQ_MEM_DEVICE));
    hcq_telemetry *t = sample(d);
    const hcq_reading *u = get(t, "uuid");
    cr_assert(u->available && u->is_text && !strncmp(u->text, "GPU-", 4) && strlen(u->text) == 40, "%s", u->text);
    cr_assert_str_eq(get(t, "pcie.link")->text, "Gen5 x16");
    cr_assert(strstr(get(t, "pci.device")->text, "10de:2330"), "%s", get(t, "pci.device")->text);
    cr_assert_str_eq(get(t, "pstate")->text, "P0");
    expect_value(t, "temperature.gpu", 20, 100);
    expect_value(t, "temperature.memory", 20, 100);
    expect_value(t, "utilization.gpu", 0, 100);
    expect_value(t, "memory.total", 80.0 * (1 << 30), 80.0 * (1 << 30));
    expect_value(t, "memory.used", 8 << 20, 80.0 * (1 << 30));
    expect_value(t, "ecc.uncorrected", 0, 0);
    /* the open driver has no control for these: said, never made up */
    expect_none(t, "power.draw", "no RM control");
    expect_none(t, "clocks.sm", "no RM control");
    /* RM gives the error journal's count to administrators only */
    if (geteuid() == 0) expect_value(t, "errors.xid", 0, 1e9);
    else expect_none(t, "errors.xid", "NV_ERR_INSUFFICIENT_PERMISSIONS");
    uint64_t mem = 0;
    cr_assert(t->processes_known && has_process(t, (uint32_t)getpid(), &mem), "%s", t->processes_why);
    cr_assert_geq(mem, 8 << 20, "this process holds %llu bytes", (unsigned long long)mem);
    cr_assert(!strcmp(get(t, "temperature.gpu")->source, "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2"));
    free(t);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
}

Test(telemetry, nv_refusals_name_the_rm_status)
{
    /* a GeForce board has no ECC; a 570 driver has no thermal control */
    T_OK(mock_configure("nv=RTX4090,nv_driver=570.86.15"));
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    hcq_telemetry *t = sample(d);
    expect_none(t, "ecc.corrected", "NV_ERR_NOT_SUPPORTED");
    expect_none(t, "temperature.gpu", "NV_ERR_NOT_SUPPORTED");
    cr_assert(!hcq_telemetry_find(t, "temperature.memory"));
    free(t);
    /* an RM status or an errno injected into the first control (PCI info) */
    mock_fail_ioctl(1, 0, NV_ERR_INVALID_STATE);
    t = sample(d);
    expect_none(t, "pci.device", "NV_ERR_INVALID_STATE");
    expect_value(t, "utilization.gpu", 0, 100);
    free(t);
    mock_fail_ioctl(1, EIO, 0);
    t = sample(d);
    expect_none(t, "pci.device", "EIO");
    free(t);
    T_OK(hcq_device_close(d));
}

Test(telemetry, the_mock_sensors_follow_the_work_it_runs)
{
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    hcq_telemetry *idle = sample(d);
    hcq_program *p = t_load(d, t_k_add1());
    enum { N = 1 << 16 };
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, N * 4, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    uint64_t t0 = hcq_now_ns();
    while (hcq_now_ns() - t0 < 600000000ull) {
        for (int i = 0; i < 8; i++) T_OK(hcq_launch(p, a, 2, hcq_dims_1d(N / 256, 256)));
        T_OK(hcq_device_synchronize(d));
    }
    hcq_telemetry *busy = sample(d);
    cr_assert_gt(get(busy, "utilization.gpu")->value, get(idle, "utilization.gpu")->value + 10,
                 "utilization %g after 0.6 s of kernels (idle %g)", get(busy, "utilization.gpu")->value,
                 get(idle, "utilization.gpu")->value);
    cr_assert_gt(get(busy, "temperature.gpu")->value, get(idle, "temperature.gpu")->value);
    cr_assert_eq(busy->timeline_completed, busy->timeline_submitted);
    cr_assert_geq(busy->timeline_submitted, 8);
    cr_assert(strstr(busy->engines, "compute channel"), "%s", busy->engines);
    free(idle);
    free(busy);
    T_OK(hcq_program_free(p));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
}

Test(telemetry, an_xid_is_an_event_and_counts)
{
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    hcq_telemetry *t = sample(d);
    double before = geteuid() == 0 ? get(t, "errors.xid")->value : 0;
    free(t);
    hcq_program *p = t_load(d, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    t = sample(d);
    cr_assert_eq(t->nevents, 1);
    cr_assert(strstr(t->events[0], "MMU fault") && strstr(t->events[0], "0xdead0000"), "%s", t->events[0]);
    if (geteuid() == 0) expect_value(t, "errors.xid", before + 1, before + 1);
    free(t);
    T_OK(hcq_device_close(d));
}

Test(telemetry, amd_gfx1100_reads_hwmon_gpu_metrics_and_kfd_proc)
{
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_telemetry *t = sample(d);
    expect_value(t, "temperature.gpu", 20, 100);
    cr_assert_str_eq(get(t, "temperature.gpu")->source, "hwmon temp1_input");
    expect_value(t, "temperature.hotspot", 20, 110);
    expect_value(t, "power.draw", 1, 400);
    expect_value(t, "power.limit", 355, 355);
    expect_value(t, "clocks.sm", 1, 3000);
    expect_value(t, "clocks.memory", 1250, 1250);
    expect_value(t, "memory.total", 24.0 * (1 << 30), 24.0 * (1 << 30));
    cr_assert_str_eq(get(t, "pcie.link")->text, "16.0 GT/s PCIe x16");
    cr_assert(strstr(get(t, "throttle")->source, "gpu_metrics"));
    /* a Radeon board has no RAS: no ECC counts, and it says so */
    expect_none(t, "ecc.corrected", "no RAS");
    expect_value(t, "faults.retry", 0, 0);
    uint64_t mem = 0;
    cr_assert(has_process(t, (uint32_t)getpid(), &mem), "%s", t->processes_why);
    cr_assert_gt(mem, 0);
    free(t);
    T_OK(hcq_device_close(d));
}

Test(telemetry, amd_mi300x_has_no_edge_sensor_and_reads_what_it_has)
{
    T_OK(mock_configure("amd=gfx942"));
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    hcq_telemetry *t = sample(d);
    expect_none(t, "temperature.gpu", "temp1_input: no such file");
    expect_value(t, "temperature.hotspot", 20, 110);
    expect_value(t, "power.draw", 100, 750);
    cr_assert_str_eq(get(t, "power.draw")->source, "hwmon power1_input");
    /* no freq1_input on this part: the clock comes from pp_dpm_sclk */
    expect_value(t, "clocks.sm", 1, 2100);
    cr_assert_str_eq(get(t, "clocks.sm")->source, "pp_dpm_sclk");
    expect_value(t, "ecc.uncorrected", 0, 0);
    cr_assert_str_eq(get(t, "pcie.link")->text, "32.0 GT/s PCIe x16");
    free(t);
    T_OK(hcq_device_close(d));
}

Test(telemetry, gpu_metrics_tables_of_each_version_and_bad_ones)
{
    amd_metrics m;
    char why[160];
    amd_metrics_v1_3 v3;
    memset(&v3, 0xff, sizeof v3);
    v3.h = (amd_metrics_header){sizeof v3, 1, 3};
    v3.temperature_edge = 41;
    v3.average_socket_power = 120;
    v3.current_gfxclk = 2400;
    cr_assert_eq(amd_metrics_parse(&v3, sizeof v3, &m, why, sizeof why), 0, "%s", why);
    cr_assert_eq(m.temp_edge, 41);
    cr_assert_eq(m.power_w, 120);
    cr_assert_eq(m.gfxclk_mhz, 2400);
    cr_assert_eq(m.temp_mem, AMD_METRICS_NONE16, "a field the firmware left 0xffff stays unreported");
    amd_metrics_v1_5 v5;
    memset(&v5, 0xff, sizeof v5);
    v5.h = (amd_metrics_header){sizeof v5, 1, 5};
    v5.temperature_hotspot = 55;
    v5.curr_socket_power = 600;
    v5.current_gfxclk[0] = 2100;
    v5.current_uclk = 1300;
    cr_assert_eq(amd_metrics_parse(&v5, sizeof v5, &m, why, sizeof why), 0, "%s", why);
    cr_assert_eq(m.temp_hotspot, 55);
    cr_assert_eq(m.power_w, 600);
    cr_assert_eq(m.gfxclk_mhz, 2100);
    cr_assert_eq(m.uclk_mhz, 1300);
    cr_assert_eq(m.temp_edge, AMD_METRICS_NONE16);
    /* a truncated table, a size that disagrees, a version not decoded */
    cr_assert_eq(amd_metrics_parse(&v3, 2, &m, why, sizeof why), -1);
    cr_assert_eq(amd_metrics_parse(&v3, 64, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "120 bytes"), "%s", why);
    v3.h.content_revision = 9;
    cr_assert_eq(amd_metrics_parse(&v3, sizeof v3, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "v1.9"), "%s", why);
    v3.h = (amd_metrics_header){sizeof v3, 2, 1};
    cr_assert_eq(amd_metrics_parse(&v3, sizeof v3, &m, why, sizeof why), -1);
}

Test(telemetry, the_cpu_device_has_no_driver_readings_and_says_so)
{
    hcq_device *d = T_NONNULL(hcq_device_open("CPU"));
    hcq_telemetry *t = sample(d);
    cr_assert_eq(t->nreadings, 0);
    cr_assert(!t->processes_known && t->processes_why[0]);
    free(t);
    T_OK(hcq_device_close(d));
    T_FAILS(hcq_device_telemetry(d, NULL), HCQ_EINVAL);
    hcq_telemetry t2;
    T_FAILS(hcq_device_telemetry(d, &t2), HCQ_ESTATE);
}

Test(telemetry, an_open_device_publishes_its_progress_for_hcq_top)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-status");
    char sub[T_TMP_PATH + 16];
    snprintf(sub, sizeof sub, "%s/pages", dir);
    setenv("HCQ_STATUS_DIR", sub, 1);
    base_env_reload();
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/%d-NV-0.status", sub, (int)getpid());
    struct stat st;
    cr_assert_eq(stat(sub, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700, "the directory is private: %o", st.st_mode & 0777);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4096, HCQ_MEM_DEVICE));
    uint32_t x[16] = {0};
    for (int i = 0; i < 3; i++) T_OK(hcq_buffer_copyin(b, 0, x, sizeof x));
    T_OK(hcq_device_synchronize(d));
    q_status_page pg;
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "no status page at %s", path);
    cr_assert_eq(fread(&pg, 1, sizeof pg, f), sizeof pg);
    fclose(f);
    cr_assert(!memcmp(pg.magic, Q_STATUS_MAGIC, sizeof Q_STATUS_MAGIC));
    cr_assert_eq(pg.pid, (uint32_t)getpid());
    cr_assert_str_eq(pg.device, "NV:0");
    cr_assert_geq(atomic_load(&pg.copies), 3);
    cr_assert_eq(atomic_load(&pg.timeline_completed), atomic_load(&pg.timeline_submitted));
    cr_assert_geq(atomic_load(&pg.timeline_submitted), 3);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
    cr_assert_neq(stat(path, &st), 0, "the page outlived the device");
    /* HCQ_STATUS_DIR=off publishes nothing */
    setenv("HCQ_STATUS_DIR", "off", 1);
    base_env_reload();
    d = T_NONNULL(hcq_device_open("NV:0"));
    cr_assert_neq(stat(path, &st), 0);
    T_OK(hcq_device_close(d));
    unsetenv("HCQ_STATUS_DIR");
    base_env_reload();
    rmdir(sub);
    rmdir(dir);
}
