/* The AMD part of the mock GPU: an emulated amdkfd. It publishes a KFD
 * topology in sysfs (a 7900 XTX-like gfx1100 by default; gfx942 and gfx90a
 * by HCQ_MOCK_CONFIG amd=), answers /dev/kfd's ioctls with the kernel's
 * checks (torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_chardev.c and
 * kfd_queue.c: sizes, flags, the VM binding, queue buffers of exactly the
 * sizes KFD validates), keeps buffer objects as mock_bos at the addresses
 * the process chose, mmaps them through the render node and the doorbells
 * through /dev/kfd, and reports GPU faults through memory and hardware
 * exception events. Its KFD process lives as long as the mock, as the
 * kernel's lives as long as the process: closing /dev/kfd forgets nothing.
 * The queues' engines are in mock_amd_cp.c and mock_amd_sdma.c. */
#include "drivers/mock/mock_amd.h"

#include "base/base.h"
#include "drivers/amd/amd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* The parts the mock emulates: the KFD properties of each, and what its
 * amdgpu sysfs shows (a Radeon has no RAS directory, an MI300X no edge
 * temperature sensor (temp1) and no average power (its hwmon has
 * power1_input), and writes gpu_metrics v1.5 where the others write
 * v1.3). The chip's own facts come from its row of the chip table. */
static const mock_amd_model builtin_models[] = {
    /* the properties amdkfd shows for a Radeon RX 7900 XTX (tinygrad's mock
     * copies them from one, ../shared/reference/amd-facts.md §1.2) */
    {.name = "gfx1100", .device_id = 0x744c, .simd_count = 192, .simd_per_cu = 2, .max_waves_per_simd = 16,
     .array_count = 12, .simd_arrays_per_engine = 2, .num_xcc = 1, .vram_bytes = 24ull << 30, .clock_mhz = 2500,
     .sensors = {38, 74, 17, 345, 30, 2500}, .revision = 0xc8, .subsys_vendor = 0x1002, .subsys_device = 0x0e3b,
     .link_speed = "16.0 GT/s PCIe", .power_cap_w = 355, .mclk_mhz = 1250, .metrics_minor = 3, .edge_sensor = true,
     .power_average = true, .gb_addr_config = 0x00000545},
    /* an Instinct MI300X in SPX mode: 304 CUs in 8 XCCs */
    {.name = "gfx942", .device_id = 0x74a1, .simd_count = 1216, .simd_per_cu = 4, .max_waves_per_simd = 8,
     .array_count = 32, .simd_arrays_per_engine = 1, .num_xcc = 8, .vram_bytes = 192ull << 30,
     .publishes_queue_sizes = true, .clock_mhz = 2100, .sensors = {36, 79, 142, 735, 140, 2100}, .revision = 0x00,
     .subsys_vendor = 0x1002, .subsys_device = 0x74a1, .link_speed = "32.0 GT/s PCIe", .power_cap_w = 750,
     .mclk_mhz = 1300, .metrics_minor = 5, .ras = true, .gb_addr_config = 0x2a114042},
    /* an Instinct MI210 */
    {.name = "gfx90a", .device_id = 0x740f, .simd_count = 416, .simd_per_cu = 4, .max_waves_per_simd = 8,
     .array_count = 8, .simd_arrays_per_engine = 1, .num_xcc = 1, .vram_bytes = 64ull << 30, .clock_mhz = 1700,
     .sensors = {34, 71, 43, 292, 800, 1700}, .revision = 0x02, .subsys_vendor = 0x1002, .subsys_device = 0x0c34,
     .link_speed = "16.0 GT/s PCIe", .power_cap_w = 300, .mclk_mhz = 1600, .metrics_minor = 3, .edge_sensor = true,
     .power_average = true, .ras = true, .gb_addr_config = 0x2a114042},
};
#define MAX_ADDED_MODELS 4
static const mock_amd_model *added_models[MAX_ADDED_MODELS];
static unsigned nadded_models;
static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;

static const mock_amd_model *model_at(unsigned i)
{
    if (i < BASE_ARRAY_LEN(builtin_models)) return &builtin_models[i];
    i -= (unsigned)BASE_ARRAY_LEN(builtin_models);
    pthread_mutex_lock(&models_lock);
    const mock_amd_model *m = i < nadded_models ? added_models[i] : NULL;
    pthread_mutex_unlock(&models_lock);
    return m;
}

bool mock_amd_add_model(const mock_amd_model *m)
{
    const mock_amd_model *o;
    for (unsigned i = 0; (o = model_at(i)); i++)
        if (!strcmp(o->name, m->name)) return false;
    if (!amd_chip_by_name(m->name)) return false;
    pthread_mutex_lock(&models_lock);
    bool ok = nadded_models < MAX_ADDED_MODELS;
    if (ok) added_models[nadded_models++] = m;
    pthread_mutex_unlock(&models_lock);
    return ok;
}

#define TOPO AMD_KFD_TOPOLOGY_PATH
#define AMD_KFD_TOPOLOGY_PATH "/sys/devices/virtual/kfd/kfd/topology/nodes"

mock_amd_proc mock_amd_P = {.lock = PTHREAD_MUTEX_INITIALIZER};

mock_amd_gpu *mock_amd_gpu_at(uint32_t i) { return i < mock_amd_P.ngpus ? mock_amd_P.gpus[i] : NULL; }

uint64_t mock_amd_clock(void) { return hcq_now_ns() / 10; }

uint64_t mock_amd_doorbell(const mock_amd_queue *q)
{
    /* through the mock's own mapping (the process may unmap its own while
     * the queue lives); sys_doorbell_acquire orders what the process wrote
     * before ringing */
    uint64_t v = atomic_load_explicit((_Atomic uint64_t *)(q->gpu->doorbell_cpu + 8ull * q->doorbell),
                                      memory_order_acquire);
    sys_doorbell_acquire();
    return v;
}

/* ** topology */
/* the caches the topology lists: one entry per level (KFD lists one per
 * instance: an L1 per CU, an L2 per XCC; ROCm reads the levels and sizes) */
static uint32_t ncaches(const mock_amd_gpu *a)
{
    return (a->chip->l1_kib != 0) + (a->chip->l2_kib != 0) + (a->chip->l3_kib != 0);
}

/* caches/<i>/properties as kfd_topology.c kfd_cache_show writes them;
 * type 9: a data cache of the GPU (HSA_CACHE_TYPE_DATA | HSA_CACHE_TYPE_HSACU) */
static bool cache_properties(const mock_amd_gpu *a, uint32_t i, char *buf, size_t size)
{
    const uint32_t kib[3] = {a->chip->l1_kib, a->chip->l2_kib, a->chip->l3_kib};
    for (uint32_t level = 1, k = 0; level <= 3; level++) {
        if (!kib[level - 1] || k++ != i) continue;
        snprintf(buf, size, "processor_id_low %u\nlevel %u\nsize %u\ncache_line_size %u\ncache_lines_per_tag 1\n"
                 "association %u\nlatency 1\ntype 9\nsibling_map 1\n", 0x80001000u, level, kib[level - 1],
                 level == 1 ? 64 : 128, level == 3 ? 16 : level == 2 ? 16 : 64);
        return true;
    }
    return false;
}

/* The links KFD publishes between topology nodes (node 0 the CPU, node k
 * GPU k-1), from torvalds/linux amdkfd: kfd_crat.c builds each GPU's
 * io_link to the CPU (kfd_fill_gpu_direct_io_link_to_cpu: PCIe) and to
 * every GPU of its xGMI hive (kfd_fill_gpu_xgmi_link_to_gpu), the CPU
 * gets the reverse of each GPU's (kfd_parse_subtype_iolink), weights 20
 * for PCIe and 15 per xGMI hop; kfd_topology.c kfd_dev_create_p2p_links
 * adds p2p_links, with CONFIG_HSA_AMD_P2P, between GPUs of no common
 * hive that can reach each other's memory (kfd_add_peer_prop: the two
 * GPUs' CPU links added up) and, with a second CPU node, indirect ones
 * (none here). kfd_fill_iolink_non_crat_info sets flags to ENABLED (plus
 * bits for atomics and coherence this model does not restrict). Types:
 * kfd_crat.h CRAT_IOLINK_TYPE_PCIEXPRESS 2, CRAT_IOLINK_TYPE_XGMI 11. */
#define KFD_LINK_PCIE 2u
#define KFD_LINK_XGMI 11u
#define KFD_LINK_ENABLED 1u
#define MOCK_AMD_HIVE 0x4843514849564531ull /* the hive_id of the mock's xGMI hive */

typedef struct kfd_link {
    uint32_t type, from, to, weight;
} kfd_link;

/* whether node `from` has an io_link (p2p false) or p2p_link (true) to
 * node `to`, and which (*l) */
static bool link_of(uint32_t from, uint32_t to, bool p2p, kfd_link *l)
{
    uint32_t n = mock_amd_P.ngpus;
    if (from == to || from > n || to > n) return false;
    kfd_link k = {KFD_LINK_PCIE, from, to, 20};
    bool cpu = from == 0 || to == 0, xgmi = mock_cfg()->amd_peer == MOCK_PEER_XGMI;
    if (!p2p && !cpu && xgmi) k.type = KFD_LINK_XGMI, k.weight = 15; /* one hop: the hive is fully connected */
    else if (p2p && !cpu && mock_cfg()->amd_peer == MOCK_PEER_PCIE) k.weight = 40;
    else if (p2p || (!cpu && !xgmi)) return false;
    if (l) *l = k;
    return true;
}

/* the i-th link of node's io_links (p2p false) or p2p_links, in the order
 * KFD lists them: the CPU link first, then the peers in node order */
static bool nth_link(uint32_t node, uint32_t i, bool p2p, kfd_link *l)
{
    for (uint32_t to = 0, k = 0; to <= mock_amd_P.ngpus; to++)
        if (link_of(node, to, p2p, l) && k++ == i) return true;
    return false;
}

static uint32_t nlinks(uint32_t node, bool p2p)
{
    uint32_t k = 0;
    while (nth_link(node, k, p2p, NULL)) k++;
    return k;
}

/* the properties KFD publishes, and one key it never does: hcq_mock, so
 * hcq knows the emulation by the driver's answer, also preloaded into a
 * program that reaches it through plain libc (libhcqmock.so) */
static void make_properties(mock_amd_gpu *a)
{
    const mock_amd_model *m = a->model;
    char extra[128] = "";
    if (m->publishes_queue_sizes)
        snprintf(extra, sizeof extra, "cwsr_size %u\nctl_stack_size %u\n", a->cwsr_size, a->ctl_stack_size);
    uint32_t io = 0, p2p = 0;
    for (uint32_t k = 0; k <= mock_amd_P.ngpus; k++) {
        io += link_of(a->index + 1, k, false, NULL);
        p2p += link_of(a->index + 1, k, true, NULL);
    }
    snprintf(a->properties, sizeof a->properties,
             "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\ncaches_count %u\nio_links_count %u\n"
             "p2p_links_count %u\ncpu_core_id_base 0\nsimd_id_base 2147487744\nmax_waves_per_simd %u\n"
             "lds_size_in_kb %u\ngds_size_in_kb 0\nnum_gws %u\nwave_front_size %u\narray_count %u\n"
             "simd_arrays_per_engine %u\ncu_per_simd_array %u\nsimd_per_cu %u\nmax_slots_scratch_cu 32\n"
             "gfx_target_version %u\nvendor_id 4098\ndevice_id %u\nlocation_id %u\ndomain 0\n"
             "drm_render_minor %u\nhive_id %llu\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\n"
             "num_sdma_queues_per_engine 6\nnum_cp_queues 8\nmax_engine_clk_fccl 2500\nlocal_mem_size 0\n"
             "fw_version 1\ncapability 0\ndebug_prop 0\nsdma_fw_version 1\nunique_id %u\nnum_xcc %u\n"
             "max_engine_clk_ccompute 3000\nmax_engine_clk_fcompute %u\nhcq_mock 1\n%s",
             m->simd_count, ncaches(a), io, p2p, m->max_waves_per_simd, m->lds_kib, MOCK_AMD_NUM_GWS, m->wave_front_size, m->array_count,
             m->simd_arrays_per_engine, m->simd_count / m->simd_per_cu / (m->array_count ? m->array_count : 1),
             m->simd_per_cu, m->gfx_version, m->device_id, (3u + a->index) << 8, a->render_minor,
             (unsigned long long)(mock_cfg()->amd_peer == MOCK_PEER_XGMI && mock_amd_P.ngpus > 1 ? MOCK_AMD_HIVE : 0),
             0x5eed0000u + a->index, m->num_xcc, m->clock_mhz, extra);
}

static int put(char *buf, size_t size, ssize_t *rc, const char *text)
{
    size_t n = strlen(text);
    if (n >= size) n = size - 1;
    memcpy(buf, text, n);
    buf[n] = 0;
    *rc = (ssize_t)n;
    return 1;
}

/* The KFD topology tree (torvalds/linux amdkfd/kfd_topology.c:
 * kfd_topology_update_sysfs, kfd_build_sysfs_node_entry): topology/
 * generation_id and system_properties, and nodes/<N>/ with gpu_id, name,
 * properties and the mem_banks, caches, io_links and p2p_links
 * directories. Node 0 is the CPU. A file's text into buf (*rc its length),
 * a directory *rc -EISDIR with its entries through fn, else -ENOENT. */
#define KFD_DIR "/sys/devices/virtual/kfd/kfd"
static int topology(const char *path, char *buf, size_t size, ssize_t *rc, void (*fn)(void *, const char *), void *arg)
{
    char tmp[320];
    *rc = -ENOENT;
    if (!strcmp(path, KFD_DIR) || !strcmp(path, KFD_DIR "/topology")) {
        if (fn && !strcmp(path, KFD_DIR)) fn(arg, "topology");
        if (fn && strcmp(path, KFD_DIR)) {
            fn(arg, "generation_id");
            fn(arg, "system_properties");
            fn(arg, "nodes");
        }
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(path, KFD_DIR "/topology/generation_id")) return put(buf, size, rc, "1\n");
    if (!strcmp(path, KFD_DIR "/topology/system_properties"))
        return put(buf, size, rc, "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
    if (!strcmp(path, TOPO)) {
        for (uint32_t i = 0; fn && i <= mock_amd_P.ngpus; i++) {
            snprintf(tmp, sizeof tmp, "%u", i);
            fn(arg, tmp);
        }
        return *rc = -EISDIR, 1;
    }
    size_t n = strlen(TOPO);
    if (strncmp(path, TOPO, n) || path[n] != '/') return 1;
    char *end;
    long node = strtol(path + n + 1, &end, 10);
    if (end == path + n + 1 || node < 0 || node > (long)mock_amd_P.ngpus) return 1;
    const char *rest = end;
    mock_amd_gpu *a = node ? mock_amd_P.gpus[node - 1] : NULL;
    if (!*rest) {
        static const char *const entries[] = {"gpu_id", "name", "properties", "mem_banks", "caches", "io_links",
                                              "p2p_links"};
        for (size_t i = 0; fn && i < BASE_ARRAY_LEN(entries); i++) fn(arg, entries[i]);
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(rest, "/gpu_id")) {
        snprintf(tmp, sizeof tmp, "%u\n", a ? a->gpu_id : 0);
        return put(buf, size, rc, tmp);
    }
    if (!strcmp(rest, "/name")) {
        snprintf(tmp, sizeof tmp, "%s\n", a ? a->model->name : "");
        return put(buf, size, rc, tmp);
    }
    if (!strcmp(rest, "/properties")) {
        if (a) return put(buf, size, rc, a->properties);
        char cpu[1024];
        snprintf(cpu, sizeof cpu,
                 "cpu_cores_count 2\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count %u\n"
                       "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\n"
                       "lds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\nwave_front_size 0\narray_count 0\n"
                       "simd_arrays_per_engine 0\ncu_per_simd_array 0\nsimd_per_cu 0\nmax_slots_scratch_cu 0\n"
                       "gfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\n"
                       "drm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\n"
                       "num_sdma_queues_per_engine 0\nnum_cp_queues 0\nmax_engine_clk_ccompute 3000\n", nlinks(0, false));
        return put(buf, size, rc, cpu);
    }
    if (!strcmp(rest, "/mem_banks")) {
        if (fn) fn(arg, "0");
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(rest, "/caches")) {
        for (uint32_t i = 0; a && fn && i < ncaches(a); i++) {
            snprintf(tmp, sizeof tmp, "%u", i);
            fn(arg, tmp);
        }
        return *rc = -EISDIR, 1;
    }
    unsigned ci;
    char tail[32];
    if (a && sscanf(rest, "/caches/%u%31s", &ci, tail) >= 1 && ci < ncaches(a)) {
        if (sscanf(rest, "/caches/%u%31s", &ci, tail) == 1) {
            if (fn) fn(arg, "properties");
            return *rc = -EISDIR, 1;
        }
        if (!strcmp(tail, "/properties") && cache_properties(a, ci, tmp, sizeof tmp)) return put(buf, size, rc, tmp);
        return 1;
    }
    for (int p2p = 0; p2p < 2; p2p++) {
        const char *dir = p2p ? "/p2p_links" : "/io_links";
        size_t dl = strlen(dir);
        if (strncmp(rest, dir, dl)) continue;
        if (!rest[dl]) {
            for (uint32_t i = 0; fn && i < nlinks((uint32_t)node, p2p); i++) {
                snprintf(tmp, sizeof tmp, "%u", i);
                fn(arg, tmp);
            }
            return *rc = -EISDIR, 1;
        }
        unsigned li;
        int used = 0;
        kfd_link l;
        if (sscanf(rest + dl, "/%u%n", &li, &used) != 1 || !nth_link((uint32_t)node, li, p2p, &l)) return 1;
        if (!rest[dl + used]) {
            if (fn) fn(arg, "properties");
            return *rc = -EISDIR, 1;
        }
        if (strcmp(rest + dl + used, "/properties")) return 1;
        /* kfd_topology.c iolink_show's keys, in its order */
        snprintf(tmp, sizeof tmp, "type %u\nversion_major 0\nversion_minor 0\nnode_from %u\nnode_to %u\nweight %u\n"
                 "min_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\nrecommended_transfer_size 0\n"
                 "flags %u\n", l.type, l.from, l.to, l.weight, KFD_LINK_ENABLED);
        return put(buf, size, rc, tmp);
    }
    if (!strcmp(rest, "/mem_banks/0")) {
        if (fn) fn(arg, "properties");
        return *rc = -EISDIR, 1;
    }
    if (!strcmp(rest, "/mem_banks/0/properties")) {
        /* heap_type: 0 system memory (the CPU's), 1 public frame buffer */
        snprintf(tmp, sizeof tmp, "heap_type %u\nsize_in_bytes %llu\nflags 0\nwidth %u\nmem_clk_max %u\n", a ? 1 : 0,
                 a ? (unsigned long long)a->g->vram_bytes : 64ull << 30, a ? 4096 : 64, a ? 2500 : 3200);
        return put(buf, size, rc, tmp);
    }
    return 1;
}

/* /proc/modules with amdgpu loaded (what libkmod reads, and ROCm's
 * rocminfo through it, to see the driver is there): the host's lines, then
 * amdgpu's in the kernel's format (kernel/module/procfs.c m_show: name,
 * size, use count, users, state, address) unless the host has it */
static int proc_modules(char *buf, size_t size, ssize_t *rc)
{
    ssize_t n = sys_libc()->read_file(NULL, "/proc/modules", buf, size);
    if (n < 0) n = 0;
    buf[n] = 0;
    if (!strstr(buf, "amdgpu ") && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "amdgpu 16384000 0 - Live 0x0000000000000000\n");
    *rc = BASE_MIN(n, (ssize_t)size - 1);
    return 1;
}

static int amd_read_file(const char *path, char *buf, size_t size, ssize_t *rc)
{
    if (!mock_amd_P.ngpus) return 0;
    if (!strcmp(path, "/proc/modules")) return proc_modules(buf, size, rc);
    if (mock_amd_sysfs_read(path, buf, size, rc)) return 1;
    if (strncmp(path, KFD_DIR, strlen(KFD_DIR)) || (path[strlen(KFD_DIR)] && path[strlen(KFD_DIR)] != '/')) return 0;
    return topology(path, buf, size, rc, NULL, NULL);
}

static int amd_list_dir(const char *path, void (*fn)(void *, const char *), void *arg, int *rc)
{
    if (!mock_amd_P.ngpus) return 0;
    if (mock_amd_sysfs_list(path, fn, arg, rc)) return 1;
    if (strncmp(path, KFD_DIR, strlen(KFD_DIR)) || (path[strlen(KFD_DIR)] && path[strlen(KFD_DIR)] != '/')) return 0;
    char tmp[512];
    ssize_t r = 0;
    topology(path, tmp, sizeof tmp, &r, fn, arg);
    *rc = r == -EISDIR ? 0 : r >= 0 ? -ENOTDIR : (int)r;
    return 1;
}

static mock_amd_gpu *gpu_by_render(const char *path)
{
    unsigned minor;
    char tail;
    if (sscanf(path, "/dev/dri/renderD%u%c", &minor, &tail) != 1) return NULL;
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++)
        if (mock_amd_P.gpus[i]->render_minor == minor) return mock_amd_P.gpus[i];
    return NULL;
}

static int amd_exists(const char *path)
{
    if (!mock_amd_P.ngpus) return 0;
    if (!strcmp(path, "/dev/kfd") || !strcmp(path, "/proc/modules") || mock_amd_sysfs_exists(path) ||
        gpu_by_render(path) != NULL)
        return 1;
    char tmp[512];
    ssize_t r = 0;
    return amd_read_file(path, tmp, sizeof tmp, &r) && (r >= 0 || r == -EISDIR);
}

/* ** lifetime */
static void fini(void);

static int init(const mock_config *cfg)
{
    const mock_amd_model *row = NULL, *o;
    char names[128] = "";
    for (unsigned i = 0; (o = model_at(i)); i++) {
        if (!strcmp(cfg->amd_model, o->name)) row = o;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", o->name);
    }
    const amd_chip *chip = row ? amd_chip_by_name(row->name) : NULL;
    if (!row || !chip || chip->family == AMD_FAMILY_NONE) {
        base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: amd=`%s`: no such AMD model (models: %s)", cfg->amd_model, names);
        return -EINVAL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mock_amd_P.events_cond, &ca);
    pthread_condattr_destroy(&ca);
    mock_amd_P.up = true;
    for (uint32_t i = 0; i < cfg->amd_count && i < BASE_ARRAY_LEN(mock_amd_P.gpus); i++) {
        char name[16];
        snprintf(name, sizeof name, "amd%u", i);
        mock_amd_gpu *a = calloc(1, sizeof *a);
        if (a) {
            /* the row, with its chip's facts */
            a->model_row = *row;
            a->model_row.gfx_version = chip->gfx_version;
            a->model_row.lds_kib = chip->lds_kib;
            a->model_row.wave_front_size = chip->wave32 ? 32 : 64;
            a->model = &a->model_row;
            a->chip = chip;
        }
        const mock_amd_model *m = a ? &a->model_row : row;
        mock_gpu *g = a ? mock_gpu_add(name, row->name, row->vram_bytes) : NULL;
        int err = 0;
        mock_bo *db = g ? mock_bo_new(NULL, KFD_DOORBELL_SLICE_BYTES, &err) : NULL;
        void *dcpu = db ? mock_bo_map(db, NULL, 0, KFD_DOORBELL_SLICE_BYTES, PROT_READ | PROT_WRITE, &err) : NULL;
        if (!dcpu) {
            mock_bo_unref(db);
            free(a);
            fini();
            return -ENOMEM;
        }
        a->g = g;
        a->arch = chip;
        a->index = i;
        a->node = i + 1;
        a->gpu_id = 0x3a1c + 0x1111 * i; /* KFD's ids are hashes: any nonzero */
        a->render_minor = 128 + i;
        a->doorbells = db;
        a->doorbell_cpu = dcpu;
        g->vendor = a;
        /* what KFD checks the queue buffers against (kfd_queue.c) */
        uint32_t cu = m->simd_count / m->simd_per_cu / m->num_xcc, v = m->gfx_version;
        uint32_t waves = v < 100100 ? BASE_MIN(cu * 40, m->array_count / m->simd_arrays_per_engine * 512) : cu * 32;
        uint32_t vgpr = amd_cwsr_vgpr_bytes(v); /* KFD's sizing, from the chip table */
        a->ctl_stack_size = (uint32_t)base_align_up(40 + waves * (v >= 100100 ? 12u : 8u) + 8, 4096);
        a->cwsr_size = a->ctl_stack_size + (uint32_t)base_align_up((uint64_t)cu * (vgpr + 0x4000 + 0x10000 + 0x1000), 4096);
        a->debug_memory_size = (uint32_t)base_align_up(waves * 32ull, 64);
        a->eop_size = 4096;
        mock_amd_P.gpus[mock_amd_P.ngpus++] = a;
    }
    /* (once every GPU is there: the link counts name them all) */
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++) make_properties(mock_amd_P.gpus[i]);
    return 0;
}

void mock_amd_queue_free(mock_amd_queue *q)
{
    mock_amd_queue_stop(q);
    pthread_mutex_destroy(&q->xcc_lock);
    for (uint32_t i = 0; i < q->ncp; i++) free(q->cp[i].ib);
    free(q->aql_done);
    free(q);
}

static void fini(void)
{
    if (!mock_amd_P.up) return;
    while (mock_amd_P.queues) {
        mock_amd_queue *q = mock_amd_P.queues;
        mock_amd_P.queues = q->next;
        mock_amd_queue_free(q);
    }
    for (size_t i = 0; i < mock_amd_P.nbos; i++) {
        for (uint32_t g = 0; g < mock_amd_P.ngpus; g++)
            if (mock_amd_P.bos[i].mapped & (1u << mock_amd_P.gpus[g]->g->index))
                mock_va_unmap(mock_amd_P.bos[i].va, mock_amd_P.bos[i].size, 1u << mock_amd_P.gpus[g]->g->index);
        mock_bo_unref(mock_amd_P.bos[i].bo);
    }
    free(mock_amd_P.bos);
    free(mock_amd_P.events);
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++) {
        sys_libc()->munmap(NULL, mock_amd_P.gpus[i]->doorbell_cpu, KFD_DOORBELL_SLICE_BYTES);
        mock_bo_unref(mock_amd_P.gpus[i]->doorbells);
        free(mock_amd_P.gpus[i]);
    }
    pthread_cond_destroy(&mock_amd_P.events_cond);
    pthread_mutex_t l = mock_amd_P.lock;
    memset(&mock_amd_P, 0, sizeof mock_amd_P);
    mock_amd_P.lock = l;
}

/* ** files */
static int amd_open(const char *path, int flags, void **priv)
{
    (void)flags;
    if (!mock_amd_P.ngpus) return 0;
    mock_amd_gpu *g = NULL;
    if (strcmp(path, "/dev/kfd") && !(g = gpu_by_render(path))) return 0;
    mock_amd_file *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    pthread_mutex_lock(&mock_amd_P.lock);
    f->kind = g ? MOCK_AMD_FILE_RENDER : MOCK_AMD_FILE_KFD;
    if (!g) mock_amd_P.kfd_process = true;
    f->id = ++mock_amd_P.next_file;
    f->gpu = g;
    pthread_mutex_unlock(&mock_amd_P.lock);
    *priv = f;
    return 1;
}

static int amd_close(void *priv)
{
    /* KFD keeps what the process set up: its binding to a render file
     * holds that file, and the process outlives its /dev/kfd fd */
    free(priv);
    return 0;
}

/* ** mmap: buffers through the render node, doorbells through /dev/kfd */
static void *amd_mmap(void *priv, void *addr, size_t len, int prot, int flags, off_t off, int *err)
{
    mock_amd_file *f = priv;
    pthread_mutex_lock(&mock_amd_P.lock);
    void *ret = NULL;
    *err = EINVAL;
    if (f->kind == MOCK_AMD_FILE_KFD) {
        uint64_t o = (uint64_t)off;
        mock_amd_gpu *g = mock_amd_gpu_by_id((uint32_t)(o >> KFD_MMAP_GPU_ID_SHIFT & 0xffff));
        if ((o & KFD_MMAP_TYPE_DOORBELL) == KFD_MMAP_TYPE_DOORBELL && g && len == KFD_DOORBELL_SLICE_BYTES &&
            !(o & (KFD_DOORBELL_SLICE_BYTES - 1))) {
            ret = mock_bo_map(g->doorbells, (flags & MAP_FIXED) ? addr : NULL, 0, len, prot, err);
            if (ret) {
                atomic_store(&g->doorbell_user, ret);
                for (mock_amd_queue *q = mock_amd_P.queues; q; q = q->next)
                    if (q->gpu == g) mock_amd_queue_bell(q);
            }
        } else {
            BASE_LOG(1, "mock amdkfd: mmap of /dev/kfd at offset 0x%llx, %zu bytes: only the doorbell slice",
                     (unsigned long long)o, len);
        }
    } else {
        for (size_t i = 0; i < mock_amd_P.nbos; i++) {
            mock_amd_bo *b = &mock_amd_P.bos[i];
            if (b->mmap_offset != (uint64_t)off || !b->bo || b->gpu != f->gpu) continue;
            if (base_align_up(len, 4096) != b->size || (uint64_t)(uintptr_t)addr != b->va) {
                BASE_LOG(1, "mock amdkfd: mmap of buffer 0x%llx: the mock maps it whole at its GPU address",
                         (unsigned long long)b->va);
                break;
            }
            int rc = mock_va_map(b->va, b->size, b->bo, 0, MOCK_MAP_CPU, (prot & PROT_WRITE) != 0);
            if (rc) *err = -rc;
            else ret = addr;
            break;
        }
    }
    pthread_mutex_unlock(&mock_amd_P.lock);
    return ret;
}

/* ** faults */
static void signal_events(uint32_t type, const kfd_event_data *data)
{
    for (size_t i = 0; i < mock_amd_P.nevents; i++)
        if (mock_amd_P.events[i].type == type) {
            mock_amd_P.events[i].signaled = true;
            mock_amd_P.events[i].data = *data;
        }
    pthread_cond_broadcast(&mock_amd_P.events_cond);
}

void mock_amd_interrupt(mock_amd_gpu *g, uint32_t ctxid)
{
    (void)g; /* event ids are the process's, not a GPU's */
    pthread_mutex_lock(&mock_amd_P.lock);
    for (size_t i = 0; i < mock_amd_P.nevents; i++)
        if (mock_amd_P.events[i].id == ctxid && mock_amd_P.events[i].type == KFD_EVENT_SIGNAL) {
            mock_amd_P.events[i].signaled = true;
            pthread_cond_broadcast(&mock_amd_P.events_cond);
        }
    pthread_mutex_unlock(&mock_amd_P.lock);
}

void mock_amd_doubt(const char *key, const char *fmt, ...)
{
    /* a short list: each doubt is one place in the mock */
    static const char *seen[32];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    bool first = true;
    size_t i = 0;
    for (; i < BASE_ARRAY_LEN(seen) && seen[i]; i++) first = first && strcmp(seen[i], key);
    if (first && i < BASE_ARRAY_LEN(seen)) seen[i] = key;
    pthread_mutex_unlock(&lock);
    if (!first) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a program on the preloaded mock hears it; hcq's own driver under
     * HCQ_MOCK=1 takes these forms knowingly (its first-run defaults,
     * self-tested at open: drivers/amd/amd_selftest.c), so there it is
     * HCQ_DEBUG=1's */
    if (sys_mock_preloaded()) base_log(0, "mock amdgpu: warning: %s", msg);
    else BASE_LOG(1, "mock amdgpu: warning: %s", msg);
}

static void stop_gpu_queues(mock_amd_gpu *g)
{
    for (mock_amd_queue *q = mock_amd_P.queues; q; q = q->next)
        if (q->gpu == g) atomic_store(&q->stopped, 1);
}

void mock_amd_memory_fault(mock_amd_gpu *g, uint64_t va, bool read_only, const char *what)
{
    BASE_LOG(1, "mock %s: GPU memory fault at 0x%llx: %s", g->g->name, (unsigned long long)va, what);
    pthread_mutex_lock(&mock_amd_P.lock);
    snprintf(g->last_error, sizeof g->last_error, "memory fault at 0x%llx: %.900s", (unsigned long long)va, what);
    pthread_mutex_unlock(&mock_amd_P.lock);
    atomic_fetch_add(&g->faults, 1);
    kfd_event_data d;
    memset(&d, 0, sizeof d);
    d.memory_exception_data.va = va;
    d.memory_exception_data.gpu_id = g->gpu_id;
    d.memory_exception_data.failure.not_present = !read_only;
    d.memory_exception_data.failure.read_only = read_only;
    pthread_mutex_lock(&mock_amd_P.lock);
    stop_gpu_queues(g);
    signal_events(KFD_EVENT_MEMORY, &d);
    pthread_mutex_unlock(&mock_amd_P.lock);
    mock_progress();
}

void mock_amd_hang(mock_amd_queue *q, const char *why)
{
    /* a stream the hardware would choke on is an encoder bug: say it */
    base_log(0, "mock %s: %s; the GPU would hang here (KFD resets it)", q->name, why);
    pthread_mutex_lock(&mock_amd_P.lock);
    snprintf(q->gpu->last_error, sizeof q->gpu->last_error, "%s: %.900s", q->name, why);
    pthread_mutex_unlock(&mock_amd_P.lock);
    kfd_event_data d;
    memset(&d, 0, sizeof d);
    d.hw_exception_data.gpu_id = q->gpu->gpu_id;
    pthread_mutex_lock(&mock_amd_P.lock);
    stop_gpu_queues(q->gpu);
    signal_events(KFD_EVENT_HW_EXCEPTION, &d);
    pthread_mutex_unlock(&mock_amd_P.lock);
    mock_progress();
}

bool mock_amd_access(mock_amd_queue *q, uint64_t va, uint64_t size, bool write, const char *what)
{
    char why[256];
    if (mock_gpu_access(q->gpu->g, va, size, write, why, sizeof why)) return true;
    char msg[512];
    snprintf(msg, sizeof msg, "%s %s: %s", q->name, what, why);
    mock_amd_memory_fault(q->gpu, va, strstr(why, "read-only") != NULL, msg);
    return false;
}

void mock_amd_last_error(uint32_t index, char *buf, size_t size)
{
    mock_amd_gpu *g = mock_amd_gpu_at(index);
    if (!size) return;
    pthread_mutex_lock(&mock_amd_P.lock);
    snprintf(buf, size, "%s", g ? g->last_error : "");
    pthread_mutex_unlock(&mock_amd_P.lock);
}

const mock_driver mock_amd_driver = {
    .name = "amd",
    .init = init,
    .fini = fini,
    .open = amd_open,
    .close = amd_close,
    .ioctl = mock_amd_ioctl,
    .mmap = amd_mmap,
    .read_file = amd_read_file,
    .list_dir = amd_list_dir,
    .exists = amd_exists,
};
