/* The amdgpu and amdkfd sysfs files the monitoring path reads
 * (drivers/amd/amd_telemetry.c lists them and their sources), for the mock
 * GPUs: /sys/class/drm/renderD<minor>/device/... and
 * /sys/class/kfd/kfd/proc/<pid>/.... Values follow the mock's sensors
 * (mock_gpu_sensors) and its memory accounting. What a part does not have
 * is absent, as on the real one: a Radeon has no RAS directory, an MI300X
 * no edge temperature sensor (temp1) and no average power (its hwmon has
 * power1_input), and writes gpu_metrics v1.5 where the others write v1.3. */
#include "drivers/amd/amd_metrics.h"
#include "drivers/mock/mock_amd.h"

#include "base/base.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ** the IP-discovery tree amdgpu publishes from the GPU's discovery table
 * (torvalds/linux drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c,
 * amdgpu_discovery_sysfs_init, amdgpu_discovery_sysfs_ips):
 * ip_discovery/die/<die>/<hw id>/<instance>/ with the attributes hw_id,
 * num_instance, major, minor, revision, harvest, num_base_addresses and
 * base_addr; num_ips in each die (its IP entries: one per instance); and
 * beside each numbered directory a link named as hw_id_names[] names it
 * (GC -> 11), which is how most clients read it (GC/0/major). Hardware ids
 * from include/soc15_hw_ip.h; the versions are the chip table's. The mock
 * serves GC (one instance per XCC), SDMA0, SDMA1, NBIF, HDP, MMHUB and MP1
 * (those the chip row has a version for). *Model limits*: the kernel's
 * other blocks are absent; the named links read as directories (readdir's
 * DT_DIR, where sysfs gives DT_LNK); base_addr is the gfx9 parts' first
 * segment for every chip (vega20_ip_offset.h's bases). */
typedef struct ip_block {
    uint16_t hw_id;
    const char *name; /* amdgpu_discovery.c hw_id_names[] */
    amd_ip_version v;
    uint8_t instances; /* 0: one per XCC */
    uint32_t base;     /* the first register segment's base (dwords) */
} ip_block;
enum { HWID_MP1 = 1, HWID_GC = 11, HWID_MMHUB = 34, HWID_HDP = 41, HWID_SDMA0 = 42, HWID_SDMA1 = 43, HWID_NBIF = 108 };
#define NIP 7

/* the blocks the model has (a chip row without a version lacks that block); their count */
static uint32_t ip_blocks(const mock_amd_gpu *a, ip_block out[NIP])
{
    const amd_chip *c = a->chip;
    const ip_block all[NIP] = {
        {HWID_MP1, "MP1", c->ip_mp1, 1, 0x16000},   {HWID_GC, "GC", c->ip_gc, 0, 0x2000},
        {HWID_MMHUB, "MMHUB", c->ip_mmhub, 1, 0x1A000}, {HWID_HDP, "HDP", c->ip_hdp, 1, 0x0F20},
        {HWID_SDMA0, "SDMA0", c->ip_sdma, 1, 0x1260}, {HWID_SDMA1, "SDMA1", c->ip_sdma, 1, 0x1860},
        {HWID_NBIF, "NBIF", c->ip_nbio, 1, 0x0},
    };
    uint32_t n = 0;
    for (uint32_t i = 0; i < NIP; i++)
        if (all[i].v.major) out[n++] = all[i];
    return n;
}

static uint32_t ip_instances(const mock_amd_gpu *a, const ip_block *b)
{
    return b->instances ? b->instances : a->model->num_xcc;
}

#define DRM "/sys/class/drm/renderD"
#define KFD_PROC "/sys/class/kfd/kfd/proc"

/* the GPU whose render node directory path is under, and the rest ("" for
 * the device directory itself) */
#define DEV_CHAR "/sys/dev/char/226:" /* the render node by its device number (DRM's major, 226) */
static mock_amd_gpu *gpu_of(const char *path, const char **rest)
{
    size_t pre = !strncmp(path, DRM, strlen(DRM)) ? strlen(DRM) : !strncmp(path, DEV_CHAR, strlen(DEV_CHAR))
                                                                     ? strlen(DEV_CHAR)
                                                                     : 0;
    if (!pre) return NULL;
    char *end;
    unsigned long minor = strtoul(path + pre, &end, 10);
    if (end == path + pre) return NULL;
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++) {
        mock_amd_gpu *a = mock_amd_P.gpus[i];
        if (a->render_minor != minor) continue;
        if (!strcmp(end, "/device") || !strcmp(end, "")) *rest = "";
        else if (!strncmp(end, "/device/", 8)) *rest = end + 8;
        else *rest = NULL; /* other files of the render node's own directory */
        return a;
    }
    return NULL;
}

static int put(char *buf, size_t size, ssize_t *rc, const void *data, size_t n)
{
    if (n >= size) n = size - 1;
    memcpy(buf, data, n);
    buf[n] = 0;
    *rc = (ssize_t)n;
    return 1;
}

static int putf(char *buf, size_t size, ssize_t *rc, const char *fmt, ...) HCQ_PRINTF(4, 5);
static int putf(char *buf, size_t size, ssize_t *rc, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return put(buf, size, rc, tmp, strlen(tmp));
}

static int metrics(const mock_amd_gpu *a, const mock_amd_model *m, const mock_sensors *s, char *buf, size_t size,
                   ssize_t *rc)
{
    uint8_t table[sizeof(amd_metrics_v1_5)];
    memset(table, 0xff, sizeof table); /* smu_cmn_init_soft_gpu_metrics */
    uint16_t temp = (uint16_t)(s->temp_c + 0.5), power = (uint16_t)(s->power_w + 0.5);
    uint16_t util = (uint16_t)(s->util + 0.5), clk = (uint16_t)(s->clock_mhz + 0.5);
    size_t n;
    if (m->metrics_minor == 3) {
        amd_metrics_v1_3 v;
        memset(&v, 0xff, sizeof v);
        v.h = (amd_metrics_header){sizeof v, 1, 3};
        v.temperature_edge = temp;
        v.temperature_hotspot = (uint16_t)(temp + 9);
        v.temperature_mem = (uint16_t)(temp + 4);
        v.average_gfx_activity = util;
        v.average_umc_activity = (uint16_t)(util * 2 / 5);
        v.average_socket_power = power;
        v.energy_accumulator = 0;
        v.system_clock_counter = hcq_now_ns();
        v.current_gfxclk = v.average_gfxclk_frequency = clk;
        v.current_uclk = v.average_uclk_frequency = (uint16_t)m->mclk_mhz;
        v.throttle_status = 0;
        v.pcie_link_width = 16;
        v.pcie_link_speed = (uint16_t)(strtod(m->link_speed, NULL) * 10);
        v.indep_throttle_status = 0;
        memcpy(table, &v, n = sizeof v);
    } else {
        amd_metrics_v1_5 v;
        memset(&v, 0xff, sizeof v);
        v.h = (amd_metrics_header){sizeof v, 1, 5};
        v.temperature_hotspot = temp;
        v.temperature_mem = (uint16_t)(temp + 3);
        v.curr_socket_power = power;
        v.average_gfx_activity = util;
        v.average_umc_activity = (uint16_t)(util * 2 / 5);
        v.system_clock_counter = hcq_now_ns();
        v.throttle_status = 0;
        v.pcie_link_width = 16;
        v.pcie_link_speed = (uint16_t)(strtod(m->link_speed, NULL) * 10);
        for (uint32_t x = 0; x < 8; x++) v.current_gfxclk[x] = x < a->model->num_xcc ? clk : AMD_METRICS_NONE16;
        v.current_uclk = (uint16_t)m->mclk_mhz;
        memcpy(table, &v, n = sizeof v);
    }
    if (n > size) n = size; /* sysfs hands out at most the caller's buffer */
    memcpy(buf, table, n);
    *rc = (ssize_t)n;
    return 1;
}

static int dpm(char *buf, size_t size, ssize_t *rc, const uint32_t *levels, int nlevels, double now)
{
    char tmp[256] = "";
    int best = 0;
    for (int i = 0; i < nlevels; i++)
        if (fabs((double)levels[i] - now) < fabs((double)levels[best] - now)) best = i;
    for (int i = 0; i < nlevels; i++)
        snprintf(tmp + strlen(tmp), sizeof tmp - strlen(tmp), "%d: %uMhz %s\n", i, levels[i], i == best ? "*" : "");
    return put(buf, size, rc, tmp, strlen(tmp));
}

#define IPD "ip_discovery"
/* The ip_discovery path p (after device/): 1 with a file's text in buf, or
 * *rc -EISDIR for a directory (names listed through fn when fn is set), or
 * -ENOENT. */
static int ip_discovery(const mock_amd_gpu *a, const char *p, char *buf, size_t size, ssize_t *rc,
                        void (*fn)(void *, const char *), void *arg)
{
    ip_block ip[NIP];
    uint32_t nip = ip_blocks(a, ip);
    char name[32];
    *rc = -ENOENT;
    if (!strcmp(p, IPD)) {
        if (fn) fn(arg, "die");
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(p, IPD "/die")) {
        if (fn) fn(arg, "0");
        return *rc = -EISDIR, 1;
    }
    if (strncmp(p, IPD "/die/0", strlen(IPD "/die/0"))) return 1;
    p += strlen(IPD "/die/0");
    if (!*p) {
        if (fn) {
            fn(arg, "num_ips");
            for (uint32_t i = 0; i < nip; i++) {
                snprintf(name, sizeof name, "%u", ip[i].hw_id);
                fn(arg, name);
                fn(arg, ip[i].name);
            }
        }
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(p, "/num_ips")) {
        uint32_t entries = 0;
        for (uint32_t i = 0; i < nip; i++) entries += ip_instances(a, &ip[i]);
        return putf(buf, size, rc, "%u\n", entries);
    }
    /* the block by its number or its link's name */
    const ip_block *b = NULL;
    const char *end = p + 1 + strcspn(p + 1, "/");
    for (uint32_t i = 0; i < nip && !b && end != p + 1; i++) {
        snprintf(name, sizeof name, "%u", ip[i].hw_id);
        size_t len = (size_t)(end - (p + 1));
        if ((strlen(name) == len && !strncmp(p + 1, name, len)) ||
            (strlen(ip[i].name) == len && !strncmp(p + 1, ip[i].name, len)))
            b = &ip[i];
    }
    if (!b) return 1;
    if (!*end) {
        for (uint32_t i = 0; fn && i < ip_instances(a, b); i++) {
            snprintf(name, sizeof name, "%u", i);
            fn(arg, name);
        }
        return *rc = -EISDIR, 1;
    }
    const char *q = end;
    char *iend;
    unsigned long inst = strtoul(q + 1, &iend, 10);
    if (*q != '/' || iend == q + 1 || inst >= ip_instances(a, b)) return 1;
    static const char *const attrs[] = {"hw_id", "num_instance", "major", "minor", "revision", "harvest",
                                        "num_base_addresses", "base_addr"};
    if (!*iend) {
        for (size_t i = 0; fn && i < BASE_ARRAY_LEN(attrs); i++) fn(arg, attrs[i]);
        return *rc = -EISDIR, 1;
    }
    const char *f = iend + 1;
    if (*iend != '/') return 1;
    /* the formats of amdgpu_discovery.c's show functions */
    if (!strcmp(f, "hw_id")) return putf(buf, size, rc, "%u\n", b->hw_id);
    if (!strcmp(f, "num_instance")) return putf(buf, size, rc, "%lu\n", inst);
    if (!strcmp(f, "major")) return putf(buf, size, rc, "%u\n", b->v.major);
    if (!strcmp(f, "minor")) return putf(buf, size, rc, "%u\n", b->v.minor);
    if (!strcmp(f, "revision")) return putf(buf, size, rc, "%u\n", b->v.revision);
    if (!strcmp(f, "harvest")) return putf(buf, size, rc, "0x%01X\n", 0u);
    if (!strcmp(f, "num_base_addresses")) return putf(buf, size, rc, "1\n");
    if (!strcmp(f, "base_addr")) return putf(buf, size, rc, "0x%08X\n", b->base + (uint32_t)inst * 0x10000u);
    return 1;
}

/* the device directory's own entries (what device_file serves) */
static const char *const device_entries[] = {
    "vendor", "device", "revision", "subsystem_vendor", "subsystem_device", "current_link_speed",
    "current_link_width", "unique_id", "gpu_busy_percent", "mem_busy_percent", "mem_info_vram_total",
    "mem_info_vram_used", "gpu_metrics", "pp_dpm_sclk", "pp_dpm_mclk", "hwmon", "drm", IPD};

static int device_file(mock_amd_gpu *a, const char *f, char *buf, size_t size, ssize_t *rc)
{
    if (!strncmp(f, IPD, strlen(IPD)) && (!f[strlen(IPD)] || f[strlen(IPD)] == '/'))
        return ip_discovery(a, f, buf, size, rc, NULL, NULL);
    if (!strcmp(f, "hwmon") || !strcmp(f, "drm") || (!strcmp(f, "ras") && a->model->ras)) return *rc = -EISDIR, 1;
    char hwdir[32];
    snprintf(hwdir, sizeof hwdir, "hwmon/hwmon%u", 2 + a->index);
    if (!strcmp(f, hwdir)) return *rc = -EISDIR, 1;

    const mock_amd_model *m = a->model;
    mock_sensors s = mock_gpu_sensors(a->g, &m->sensors);
    char hw[32];
    snprintf(hw, sizeof hw, "hwmon/hwmon%u/", 2 + a->index);
    if (!strncmp(f, hw, strlen(hw))) {
        const char *h = f + strlen(hw);
        if (!strcmp(h, "name")) return putf(buf, size, rc, "amdgpu\n");
        if (!strcmp(h, "temp1_input") && m->edge_sensor) return putf(buf, size, rc, "%d\n", (int)(s.temp_c * 1000));
        if (!strcmp(h, "temp2_input")) return putf(buf, size, rc, "%d\n", (int)((s.temp_c + 9) * 1000));
        if (!strcmp(h, "temp3_input")) return putf(buf, size, rc, "%d\n", (int)((s.temp_c + 4) * 1000));
        if (!strcmp(h, m->power_average ? "power1_average" : "power1_input"))
            return putf(buf, size, rc, "%llu\n", (unsigned long long)(s.power_w * 1e6));
        if (!strcmp(h, "power1_cap")) return putf(buf, size, rc, "%llu\n", (unsigned long long)(m->power_cap_w * 1e6));
        if (!strcmp(h, "freq1_input") && m->edge_sensor)
            return putf(buf, size, rc, "%llu\n", (unsigned long long)(s.clock_mhz * 1e6));
        if (!strcmp(h, "freq2_input") && m->edge_sensor)
            return putf(buf, size, rc, "%llu\n", (unsigned long long)m->mclk_mhz * 1000000ull);
        return *rc = -ENOENT, 1;
    }
    if (!strcmp(f, "vendor")) return putf(buf, size, rc, "0x1002\n");
    if (!strcmp(f, "device")) return putf(buf, size, rc, "0x%04x\n", a->model->device_id);
    if (!strcmp(f, "revision")) return putf(buf, size, rc, "0x%02x\n", m->revision);
    if (!strcmp(f, "subsystem_vendor")) return putf(buf, size, rc, "0x%04x\n", m->subsys_vendor);
    if (!strcmp(f, "subsystem_device")) return putf(buf, size, rc, "0x%04x\n", m->subsys_device);
    if (!strcmp(f, "current_link_speed")) return putf(buf, size, rc, "%s\n", m->link_speed);
    if (!strcmp(f, "current_link_width")) return putf(buf, size, rc, "16\n");
    if (!strcmp(f, "unique_id")) return putf(buf, size, rc, "%016llx\n", 0x5eed00001234ull + a->index);
    if (!strcmp(f, "gpu_busy_percent")) return putf(buf, size, rc, "%d\n", (int)(s.util + 0.5));
    if (!strcmp(f, "mem_busy_percent")) return putf(buf, size, rc, "%d\n", (int)(s.util * 0.4 + 0.5));
    if (!strcmp(f, "mem_info_vram_total")) return putf(buf, size, rc, "%llu\n", (unsigned long long)a->g->vram_bytes);
    if (!strcmp(f, "mem_info_vram_used"))
        return putf(buf, size, rc, "%llu\n", (unsigned long long)atomic_load(&a->g->vram_used));
    if (!strcmp(f, "gpu_metrics")) return metrics(a, m, &s, buf, size, rc);
    if (!strcmp(f, "pp_dpm_sclk")) {
        uint32_t lv[3] = {(uint32_t)m->sensors.idle_mhz, (uint32_t)(m->sensors.boost_mhz * 0.7), (uint32_t)m->sensors.boost_mhz};
        return dpm(buf, size, rc, lv, 3, s.clock_mhz);
    }
    if (!strcmp(f, "pp_dpm_mclk")) {
        uint32_t lv[2] = {96, m->mclk_mhz};
        return dpm(buf, size, rc, lv, 2, s.util > 1 ? m->mclk_mhz : 96);
    }
    if (!strcmp(f, "ras/umc_err_count") && m->ras) return putf(buf, size, rc, "ue: 0\nce: 0\n");
    return *rc = -ENOENT, 1;
}

/* /sys/class/kfd/kfd/proc/<pid>/... of the process the mock lives in */
static int proc_file(const char *rest, char *buf, size_t size, ssize_t *rc)
{
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++) {
        mock_amd_gpu *a = mock_amd_P.gpus[i];
        char name[64];
        snprintf(name, sizeof name, "vram_%u", a->gpu_id);
        if (!strcmp(rest, name)) return putf(buf, size, rc, "%llu\n", (unsigned long long)atomic_load(&a->g->vram_used));
        snprintf(name, sizeof name, "counters_%u/faults", a->gpu_id);
        if (!strcmp(rest, name)) return putf(buf, size, rc, "%u\n", atomic_load(&a->faults));
    }
    if (!strcmp(rest, "pasid")) return putf(buf, size, rc, "32769\n");
    return *rc = -ENOENT, 1;
}

/* the part of path under our own proc/<pid>/, or NULL */
static const char *own_proc(const char *path, bool *is_dir)
{
    if (strncmp(path, KFD_PROC "/", strlen(KFD_PROC) + 1)) return NULL;
    char *end;
    unsigned long pid = strtoul(path + strlen(KFD_PROC) + 1, &end, 10);
    if (pid != (unsigned long)getpid() || !mock_amd_P.kfd_process) return NULL;
    *is_dir = !*end;
    return *end == '/' ? end + 1 : end;
}

/* /sys/module/amdgpu: the loaded module as the kernel's module sysfs
 * shows it (libkmod reads initstate, refcnt and holders/) */
#define MODULE "/sys/module/amdgpu"
static int module_file(const char *path, char *buf, size_t size, ssize_t *rc, void (*fn)(void *, const char *),
                       void *arg)
{
    if (!strcmp(path, MODULE)) {
        if (fn) {
            fn(arg, "initstate");
            fn(arg, "refcnt");
            fn(arg, "holders");
        }
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(path, MODULE "/holders")) return *rc = -EISDIR, 1;
    if (!strcmp(path, MODULE "/initstate")) return putf(buf, size, rc, "live\n");
    if (!strcmp(path, MODULE "/refcnt")) return putf(buf, size, rc, "0\n");
    return *rc = -ENOENT, 1;
}

int mock_amd_sysfs_read(const char *path, char *buf, size_t size, ssize_t *rc)
{
    if (!strncmp(path, MODULE, strlen(MODULE)) && (!path[strlen(MODULE)] || path[strlen(MODULE)] == '/'))
        return module_file(path, buf, size, rc, NULL, NULL);
    const char *rest = NULL;
    mock_amd_gpu *a = gpu_of(path, &rest);
    if (a) return rest && *rest ? device_file(a, rest, buf, size, rc) : (*rc = rest ? -EISDIR : -ENOENT, 1);
    bool dir;
    const char *p = own_proc(path, &dir);
    if (p) return dir ? (*rc = -EISDIR, 1) : proc_file(p, buf, size, rc);
    if (!strncmp(path, KFD_PROC, strlen(KFD_PROC))) return *rc = -ENOENT, 1;
    return 0;
}

int mock_amd_sysfs_list(const char *path, void (*fn)(void *, const char *), void *arg, int *rc)
{
    if (!strncmp(path, MODULE, strlen(MODULE)) && (!path[strlen(MODULE)] || path[strlen(MODULE)] == '/')) {
        char tmp[64];
        ssize_t r = 0;
        module_file(path, tmp, sizeof tmp, &r, fn, arg);
        return *rc = r == -EISDIR ? 0 : r >= 0 ? -ENOTDIR : (int)r, 1;
    }
    const char *rest = NULL;
    mock_amd_gpu *a = gpu_of(path, &rest);
    if (a) {
        char name[32];
        if (rest && !*rest) {
            for (size_t i = 0; fn && i < BASE_ARRAY_LEN(device_entries); i++) fn(arg, device_entries[i]);
            if (fn && a->model->ras) fn(arg, "ras");
            return *rc = 0, 1;
        }
        if (rest && !strncmp(rest, IPD, strlen(IPD))) {
            char tmp[64];
            ssize_t r = 0;
            ip_discovery(a, rest, tmp, sizeof tmp, &r, fn, arg);
            return *rc = r == -EISDIR ? 0 : r >= 0 ? -ENOTDIR : (int)r, 1;
        }
        snprintf(name, sizeof name, "hwmon/hwmon%u", 2 + a->index);
        if (rest && !strcmp(rest, name)) {
            static const char *const hw[] = {"name", "temp1_input", "temp2_input", "temp3_input", "power1_average",
                                             "power1_input", "power1_cap", "freq1_input", "freq2_input"};
            char probe[64], path2[160];
            for (size_t i = 0; fn && i < BASE_ARRAY_LEN(hw); i++) {
                ssize_t r = 0;
                snprintf(path2, sizeof path2, "%s/%s", name, hw[i]);
                device_file(a, path2, probe, sizeof probe, &r);
                if (r >= 0) fn(arg, hw[i]);
            }
            return *rc = 0, 1;
        }
        if (rest && !strcmp(rest, "drm")) {
            /* the device's DRM nodes (libdrm's drmNodeIsDRM looks for this directory) */
            snprintf(name, sizeof name, "renderD%u", a->render_minor);
            if (fn) fn(arg, name);
            return *rc = 0, 1;
        }
        if (rest && !strcmp(rest, "hwmon")) {
            snprintf(name, sizeof name, "hwmon%u", 2 + a->index);
            if (fn) fn(arg, name);
            return *rc = 0, 1;
        }
        if (rest && !strcmp(rest, "ras") && a->model->ras) {
            if (fn) fn(arg, "umc_err_count");
            return *rc = 0, 1;
        }
        return *rc = -ENOENT, 1;
    }
    if (!strcmp(path, KFD_PROC)) {
        if (mock_amd_P.kfd_process) {
            char pid[16];
            snprintf(pid, sizeof pid, "%d", (int)getpid());
            if (fn) fn(arg, pid);
        }
        return *rc = 0, 1;
    }
    if (!strncmp(path, KFD_PROC, strlen(KFD_PROC))) return *rc = -ENOENT, 1;
    return 0;
}

int mock_amd_sysfs_exists(const char *path)
{
    char buf[512];
    ssize_t rc = 0;
    int lrc = 0;
    if (mock_amd_sysfs_read(path, buf, sizeof buf, &rc) && (rc >= 0 || rc == -EISDIR)) return 1;
    return !strcmp(path, KFD_PROC) || (mock_amd_sysfs_list(path, NULL, NULL, &lrc) && lrc == 0);
}
