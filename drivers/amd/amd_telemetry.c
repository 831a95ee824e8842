/* AMD telemetry (hcq info, hcq top) from sysfs, through the syscall seam
 * (the mock serves the same files):
 *   /sys/class/drm/renderD<minor>/device/   the GPU's PCI device: vendor,
 *     device, revision, subsystem_*, current_link_speed/width (PCI core);
 *     unique_id, gpu_busy_percent, mem_busy_percent, mem_info_vram_used,
 *     mem_info_vram_total, pp_dpm_sclk/mclk ("N: <MHz>Mhz *" marks the
 *     current level), gpu_metrics (amd_metrics.h), ras/umc_err_count
 *     ("ue: N\nce: M") and hwmon/hwmon<N>/: temp1_input (edge),
 *     temp2_input (junction), temp3_input (memory) in millidegrees C,
 *     power1_average or power1_input and power1_cap in microwatts,
 *     freq1_input (sclk) and freq2_input (mclk) in Hz
 *     (torvalds/linux drivers/gpu/drm/amd/pm/amdgpu_pm.c,
 *     drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c, Documentation/gpu/amdgpu/
 *     thermal.rst; Documentation/hwmon/sysfs-interface.rst for the units)
 *   /sys/class/kfd/kfd/proc/<pid>/   each KFD process: vram_<gpu_id> (bytes
 *     it holds on that GPU) and counters_<gpu_id>/faults (GPU page faults)
 *     (drivers/gpu/drm/amd/amdkfd/kfd_process.c)
 * hwmon comes first; gpu_metrics fills what hwmon lacks (MI300 has no edge
 * sensor), pp_dpm_* what both lack. Each missing file is an unavailable
 * reading naming it. */
#include "drivers/amd/amd.h"
#include "drivers/amd/amd_metrics.h"

#include "base/base.h"
#include "drivers/sys.h"
#include "drivers/telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int amd_metrics_parse(const void *buf, size_t size, amd_metrics *m, char *why, size_t why_size)
{
    amd_metrics_header h;
    if (size < sizeof h) {
        snprintf(why, why_size, "%zu bytes, shorter than its header", size);
        return -1;
    }
    memcpy(&h, buf, sizeof h);
    memset(m, 0xff, sizeof *m);
    m->format = h.format_revision;
    m->content = h.content_revision;
    m->indep_throttle_status = 0;
    size_t want = h.format_revision != 1 ? 0
                  : h.content_revision == 3 ? sizeof(amd_metrics_v1_3)
                  : h.content_revision == 4 ? sizeof(amd_metrics_v1_4)
                  : h.content_revision == 5 ? sizeof(amd_metrics_v1_5)
                                            : 0;
    if (!want) {
        snprintf(why, why_size, "format v%u.%u, which hcq does not decode (it reads v1.3, v1.4, v1.5)",
                 h.format_revision, h.content_revision);
        return -1;
    }
    if (size < want || h.structure_size != want) {
        snprintf(why, why_size, "a v%u.%u table is %zu bytes; the file has %zu and says %u", h.format_revision,
                 h.content_revision, want, size, h.structure_size);
        return -1;
    }
    if (h.content_revision == 3) {
        amd_metrics_v1_3 v;
        memcpy(&v, buf, sizeof v);
        m->temp_edge = v.temperature_edge;
        m->temp_hotspot = v.temperature_hotspot;
        m->temp_mem = v.temperature_mem;
        m->power_w = v.average_socket_power;
        m->gfx_activity = v.average_gfx_activity;
        m->umc_activity = v.average_umc_activity;
        m->gfxclk_mhz = v.current_gfxclk;
        m->uclk_mhz = v.current_uclk;
        m->pcie_width = v.pcie_link_width;
        m->pcie_speed_x10 = v.pcie_link_speed;
        m->throttle_status = v.throttle_status;
        m->indep_throttle_status = v.indep_throttle_status;
    } else {
        /* v1.4 and v1.5 differ only by the JPEG activities and NAK counts,
         * which hcq does not read: take the fields from each layout */
        amd_metrics_v1_5 v5;
        amd_metrics_v1_4 v4;
        bool is5 = h.content_revision == 5;
        if (is5) memcpy(&v5, buf, sizeof v5);
        else memcpy(&v4, buf, sizeof v4);
#define F(f) (is5 ? v5.f : v4.f)
        m->temp_hotspot = F(temperature_hotspot);
        m->temp_mem = F(temperature_mem);
        m->power_w = F(curr_socket_power);
        m->gfx_activity = F(average_gfx_activity);
        m->umc_activity = F(average_umc_activity);
        m->gfxclk_mhz = F(current_gfxclk[0]);
        m->uclk_mhz = F(current_uclk);
        m->pcie_width = F(pcie_link_width);
        m->pcie_speed_x10 = F(pcie_link_speed);
        m->throttle_status = F(throttle_status);
#undef F
    }
    return 0;
}

typedef struct amd_sysfs {
    char dev[96];   /* /sys/class/drm/renderD128/device */
    char hwmon[192]; /* .../hwmon/hwmonN, "" when there is none */
    char hwmon_name[32];
} amd_sysfs;

/* reads dir/name as text; bytes, or -errno */
static ssize_t read_text(const char *dir, const char *name, char *buf, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return sys_read_file(path, buf, size);
}

/* an integer file; false with why when absent or not a number */
static bool read_u64(const char *dir, const char *name, uint64_t *v, char *why, size_t why_size)
{
    char buf[64];
    ssize_t n = read_text(dir, name, buf, sizeof buf);
    if (n < 0) {
        snprintf(why, why_size, "%s: %s", name, n == -ENOENT ? "no such file" : strerror((int)-n));
        return false;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 0);
    if (end == buf || errno) {
        snprintf(why, why_size, "%s does not hold a number", name);
        return false;
    }
    *v = x;
    return true;
}

static void first_hwmon(void *arg, const char *name)
{
    amd_sysfs *s = arg;
    if (!strncmp(name, "hwmon", 5) && !s->hwmon_name[0]) snprintf(s->hwmon_name, sizeof s->hwmon_name, "%.31s", name);
}

/* a hwmon value scaled into unit; from gpu_metrics when hwmon lacks it
 * (fallback != NONE16), else unavailable */
static void hwmon_or_metrics(hcq_telemetry *t, const amd_sysfs *s, const char *reading, const char *unit,
                             const char *const *files, double scale, const amd_metrics *m, bool have_m,
                             uint16_t mval, const char *mfield)
{
    char why[128] = "the GPU has no hwmon directory", src[72];
    uint64_t v;
    for (int i = 0; s->hwmon[0] && files[i]; i++) {
        if (read_u64(s->hwmon, files[i], &v, why, sizeof why)) {
            snprintf(src, sizeof src, "hwmon %s", files[i]);
            drv_reading_num(t, reading, unit, src, (double)v * scale);
            return;
        }
    }
    if (have_m && mval != AMD_METRICS_NONE16) {
        snprintf(src, sizeof src, "gpu_metrics v%u.%u %s", m->format, m->content, mfield);
        drv_reading_num(t, reading, unit, src, mval);
        return;
    }
    drv_reading_none(t, reading, unit, "hwmon", "%s%s", why,
                     have_m ? "; gpu_metrics does not report it either" : "");
}

/* the MHz of the level pp_dpm_<clk> marks current ("1: 1800Mhz *") */
static bool dpm_current(const char *dev, const char *file, double *mhz)
{
    char buf[1024];
    if (read_text(dev, file, buf, sizeof buf) <= 0) return false;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *colon = strchr(line, ':');
        if (strchr(line, '*') && colon) {
            *mhz = strtod(colon + 1, NULL);
            return *mhz > 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

static void clock_reading(hcq_telemetry *t, const amd_sysfs *s, const char *reading, const char *hw, const char *dpm,
                  const amd_metrics *m, bool have_m, uint16_t mval, const char *mfield)
{
    const char *files[] = {hw, NULL};
    double mhz;
    uint64_t v;
    char why[128];
    if (s->hwmon[0] && read_u64(s->hwmon, hw, &v, why, sizeof why)) {
        char src[72];
        snprintf(src, sizeof src, "hwmon %s", hw);
        drv_reading_num(t, reading, "MHz", src, (double)v / 1e6);
    } else if (dpm_current(s->dev, dpm, &mhz)) {
        drv_reading_num(t, reading, "MHz", dpm, mhz);
    } else {
        hwmon_or_metrics(t, s, reading, "MHz", files, 1e-6, m, have_m, mval, mfield);
    }
}

static void identity(hcq_telemetry *t, hcq_device *dev, const amd_sysfs *s)
{
    char buf[128], why[128];
    ssize_t n = read_text(s->dev, "unique_id", buf, sizeof buf);
    if (n > 0) {
        buf[strcspn(buf, "\n")] = 0;
        drv_reading_text(t, "uuid", "unique_id", "%s", buf);
    } else {
        drv_reading_none(t, "uuid", "", "unique_id", "%s", n == -ENOENT ? "no such file" : strerror((int)-n));
    }
    drv_reading_text(t, "pci.bus_id", "kfd topology (domain, location_id)", "%s", dev->props.pci_address);
    uint64_t ven, did, rev, sven = 0, sdev = 0;
    if (read_u64(s->dev, "vendor", &ven, why, sizeof why) && read_u64(s->dev, "device", &did, why, sizeof why) &&
        read_u64(s->dev, "revision", &rev, why, sizeof why)) {
        bool sub = read_u64(s->dev, "subsystem_vendor", &sven, why, sizeof why) &&
                   read_u64(s->dev, "subsystem_device", &sdev, why, sizeof why);
        if (sub)
            drv_reading_text(t, "pci.device", "PCI sysfs", "%04llx:%04llx rev %02llx, subsystem %04llx:%04llx",
                             (unsigned long long)ven, (unsigned long long)did, (unsigned long long)rev,
                             (unsigned long long)sven, (unsigned long long)sdev);
        else
            drv_reading_text(t, "pci.device", "PCI sysfs", "%04llx:%04llx rev %02llx", (unsigned long long)ven,
                             (unsigned long long)did, (unsigned long long)rev);
    } else {
        drv_reading_none(t, "pci.device", "", "PCI sysfs", "%s", why);
    }
    char speed[64], width[32];
    if (read_text(s->dev, "current_link_speed", speed, sizeof speed) > 0 &&
        read_text(s->dev, "current_link_width", width, sizeof width) > 0) {
        speed[strcspn(speed, "\n")] = 0;
        width[strcspn(width, "\n")] = 0;
        drv_reading_text(t, "pcie.link", "PCI sysfs current_link_speed/width", "%s x%s", speed, width);
    } else {
        drv_reading_none(t, "pcie.link", "", "PCI sysfs", "current_link_speed/width: no such file");
    }
}

static void memory_and_processes(hcq_telemetry *t, amd_dev *ad, const amd_sysfs *s);

void amd_telemetry(hcq_device *dev, hcq_telemetry *t)
{
    amd_dev *ad = amd_of(dev);
    amd_sysfs s = {{0}, {0}, {0}};
    snprintf(s.dev, sizeof s.dev, "/sys/class/drm/renderD%u/device", ad->node.render_minor);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/hwmon", s.dev);
    sys_list_dir(dir, first_hwmon, &s);
    if (s.hwmon_name[0]) snprintf(s.hwmon, sizeof s.hwmon, "%s/%s", dir, s.hwmon_name);
    identity(t, dev, &s);

    char *buf = malloc(4096), why[160] = "";
    amd_metrics m;
    bool have_m = false;
    ssize_t n = buf ? read_text(s.dev, "gpu_metrics", buf, 4096) : -ENOMEM;
    if (n < 0) snprintf(why, sizeof why, "gpu_metrics: %s", n == -ENOENT ? "no such file" : strerror((int)-n));
    else have_m = amd_metrics_parse(buf, (size_t)n, &m, why, sizeof why) == 0;
    free(buf);

    static const char *const edge[] = {"temp1_input", NULL}, *const junction[] = {"temp2_input", NULL},
                             *const mem[] = {"temp3_input", NULL},
                             *const power[] = {"power1_average", "power1_input", NULL},
                             *const cap[] = {"power1_cap", NULL};
    uint16_t none = AMD_METRICS_NONE16;
    hwmon_or_metrics(t, &s, "temperature.gpu", "C", edge, 1e-3, &m, have_m, have_m ? m.temp_edge : none,
                     "temperature_edge");
    hwmon_or_metrics(t, &s, "temperature.hotspot", "C", junction, 1e-3, &m, have_m, have_m ? m.temp_hotspot : none,
                     "temperature_hotspot");
    hwmon_or_metrics(t, &s, "temperature.memory", "C", mem, 1e-3, &m, have_m, have_m ? m.temp_mem : none,
                     "temperature_mem");
    hwmon_or_metrics(t, &s, "power.draw", "W", power, 1e-6, &m, have_m, have_m ? m.power_w : none,
                     "socket_power");
    hwmon_or_metrics(t, &s, "power.limit", "W", cap, 1e-6, &m, false, none, "");
    clock_reading(t, &s, "clocks.sm", "freq1_input", "pp_dpm_sclk", &m, have_m, have_m ? m.gfxclk_mhz : none,
          "current_gfxclk");
    clock_reading(t, &s, "clocks.memory", "freq2_input", "pp_dpm_mclk", &m, have_m, have_m ? m.uclk_mhz : none,
          "current_uclk");
    uint64_t v;
    char w[128];
    if (read_u64(s.dev, "gpu_busy_percent", &v, w, sizeof w)) drv_reading_num(t, "utilization.gpu", "%", "gpu_busy_percent", (double)v);
    else if (have_m && m.gfx_activity != none) drv_reading_num(t, "utilization.gpu", "%", "gpu_metrics average_gfx_activity", m.gfx_activity);
    else drv_reading_none(t, "utilization.gpu", "%", "gpu_busy_percent", "%s", w);
    if (read_u64(s.dev, "mem_busy_percent", &v, w, sizeof w)) drv_reading_num(t, "utilization.memory", "%", "mem_busy_percent", (double)v);
    else if (have_m && m.umc_activity != none) drv_reading_num(t, "utilization.memory", "%", "gpu_metrics average_umc_activity", m.umc_activity);
    else drv_reading_none(t, "utilization.memory", "%", "mem_busy_percent", "%s", w);
    if (have_m)
        drv_reading_text(t, "throttle", "gpu_metrics throttle_status", "0x%08x", m.throttle_status);
    else
        drv_reading_none(t, "throttle", "", "gpu_metrics", "%s", why);
    memory_and_processes(t, ad, &s);
}

static void add_pid(void *arg, const char *name)
{
    uint32_t *list = arg;
    char *end;
    unsigned long v = strtoul(name, &end, 10);
    if (*name && !*end && list[0] < 255) list[++list[0]] = (uint32_t)v;
}

static void memory_and_processes(hcq_telemetry *t, amd_dev *ad, const amd_sysfs *s)
{
    uint64_t used, total;
    char why[128], w2[128];
    if (read_u64(s->dev, "mem_info_vram_used", &used, why, sizeof why) &&
        read_u64(s->dev, "mem_info_vram_total", &total, w2, sizeof w2)) {
        drv_reading_num(t, "memory.used", "B", "mem_info_vram_used", (double)used);
        drv_reading_num(t, "memory.total", "B", "mem_info_vram_total", (double)total);
    } else {
        drv_reading_none(t, "memory.used", "B", "mem_info_vram_used", "%s", why);
    }
    /* RAS: uncorrectable and correctable memory errors (boards without
     * RAS, the Radeon ones, have no ras directory) */
    char buf[256];
    ssize_t n = read_text(s->dev, "ras/umc_err_count", buf, sizeof buf);
    const char *ue = n > 0 ? strstr(buf, "ue:") : NULL, *ce = n > 0 ? strstr(buf, "ce:") : NULL;
    if (ue && ce) {
        drv_reading_num(t, "ecc.corrected", "", "ras/umc_err_count", strtod(ce + 3, NULL));
        drv_reading_num(t, "ecc.uncorrected", "", "ras/umc_err_count", strtod(ue + 3, NULL));
    } else {
        const char *r = n == -ENOENT ? "no such file (the board has no RAS)" : n < 0 ? strerror((int)-n)
                                                                                       : "not in the ue:/ce: form";
        drv_reading_none(t, "ecc.corrected", "", "ras/umc_err_count", "%s", r);
        drv_reading_none(t, "ecc.uncorrected", "", "ras/umc_err_count", "%s", r);
    }
    /* processes: every KFD process with memory on this GPU */
    uint32_t pids[256] = {0};
    int rc = sys_list_dir("/sys/class/kfd/kfd/proc", add_pid, pids);
    if (rc < 0) {
        snprintf(t->processes_why, sizeof t->processes_why, "/sys/class/kfd/kfd/proc: %s", strerror(-rc));
        return;
    }
    t->processes_known = true;
    uint64_t faults = 0;
    bool have_faults = false;
    for (uint32_t i = 1; i <= pids[0]; i++) {
        char dir[96], name[64];
        snprintf(dir, sizeof dir, "/sys/class/kfd/kfd/proc/%u", pids[i]);
        snprintf(name, sizeof name, "vram_%u", ad->node.gpu_id);
        uint64_t bytes;
        if (!read_u64(dir, name, &bytes, why, sizeof why)) continue; /* not on this GPU */
        drv_telemetry_process(t, pids[i], true, bytes);
        snprintf(name, sizeof name, "counters_%u/faults", ad->node.gpu_id);
        uint64_t f;
        if (read_u64(dir, name, &f, why, sizeof why)) {
            faults += f;
            have_faults = true;
        }
    }
    if (have_faults) drv_reading_num(t, "faults.retry", "", "kfd proc/<pid>/counters_<gpu>/faults", (double)faults);
}
