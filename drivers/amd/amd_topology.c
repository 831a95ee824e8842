/* Discovery: the KFD topology in sysfs, read through the syscall seam (the
 * mock supplies its own tree). Each node directory holds gpu_id (0 for CPU
 * nodes), a properties file of "name value" lines, and mem_banks/ with the
 * device memory. Property names: torvalds/linux
 * drivers/gpu/drm/amd/amdkfd/kfd_topology.c (node_show). */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t prop(const char *text, const char *name, bool *found)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, name, n) && p[n] == ' ') {
            if (found) *found = true;
            return strtoull(p + n + 1, NULL, 10);
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (found) *found = false;
    return 0;
}

void amd_node_parse(amd_node *n, const char *t)
{
    n->gfx_version = (uint32_t)prop(t, "gfx_target_version", NULL);
    n->is_mock = prop(t, "hcq_mock", NULL) == 1;
    n->clock_mhz = (uint32_t)prop(t, "max_engine_clk_fcompute", NULL);
    n->render_minor = (uint32_t)prop(t, "drm_render_minor", NULL);
    n->vendor_id = (uint32_t)prop(t, "vendor_id", NULL);
    n->device_id = (uint32_t)prop(t, "device_id", NULL);
    n->domain = (uint32_t)prop(t, "domain", NULL);
    n->location_id = (uint32_t)prop(t, "location_id", NULL);
    n->simd_count = (uint32_t)prop(t, "simd_count", NULL);
    n->simd_per_cu = (uint32_t)prop(t, "simd_per_cu", NULL);
    n->max_waves_per_simd = (uint32_t)prop(t, "max_waves_per_simd", NULL);
    n->array_count = (uint32_t)prop(t, "array_count", NULL);
    n->simd_arrays_per_engine = (uint32_t)prop(t, "simd_arrays_per_engine", NULL);
    bool has_xcc;
    n->num_xcc = (uint32_t)prop(t, "num_xcc", &has_xcc);
    if (!has_xcc || !n->num_xcc) n->num_xcc = 1; /* kernels before multi-XCC parts */
    n->lds_kib = (uint32_t)prop(t, "lds_size_in_kb", NULL);
    n->wave_front_size = (uint32_t)prop(t, "wave_front_size", NULL);
    n->max_slots_scratch_cu = (uint32_t)prop(t, "max_slots_scratch_cu", NULL);
    /* newer kernels publish the queue buffer sizes they check */
    n->ctl_stack_size = (uint32_t)prop(t, "ctl_stack_size", NULL);
    n->cwsr_size = (uint32_t)prop(t, "cwsr_size", NULL);
    amd_node_derive(n);
}

/* KFD's own sizing of the context save area (amdkfd kfd_queue.c:
 * kfd_queue_ctx_save_restore_size), so queues pass its checks on kernels
 * that do not publish the sizes: the VGPR bytes per CU are the chip
 * table's, 0x40000 for a chip it does not list (KFD's default) */
uint32_t amd_cwsr_vgpr_bytes(uint32_t gfx_version)
{
    const amd_chip *c = amd_chip_by_version(gfx_version);
    return c && c->cwsr_vgpr_bytes ? c->cwsr_vgpr_bytes : 0x40000;
}

void amd_node_derive(amd_node *n)
{
    char name[16];
    amd_arch_name_of(n->gfx_version, name, sizeof name);
    snprintf(n->arch_name, sizeof n->arch_name, "%s", name);
    n->arch = amd_arch_by_version(n->gfx_version);
    uint32_t spc = n->simd_per_cu ? n->simd_per_cu : 1, xcc = n->num_xcc ? n->num_xcc : 1;
    n->cu_count = n->simd_count / spc;
    n->cu_per_xcc = n->cu_count / xcc;
    uint32_t spe = n->simd_arrays_per_engine ? n->simd_arrays_per_engine : 1;
    n->se_per_xcc = n->array_count / spe / xcc;
    uint32_t v = n->gfx_version, cu = n->cu_per_xcc;
    n->wave_num = v < 100100 ? BASE_MIN(cu * 40, n->array_count / spe * 512) : cu * 32;
    uint32_t lds = v == 90500 ? n->lds_kib << 10 : 0x10000;
    uint32_t wg_data = (uint32_t)base_align_up((uint64_t)cu * (amd_cwsr_vgpr_bytes(v) + 0x4000 + lds + 0x1000), 4096);
    uint32_t ctl = (uint32_t)base_align_up(40 + n->wave_num * (v >= 100100 ? 12u : 8u) + 8, 4096);
    if (v / 10000 == 10) ctl = BASE_MIN(ctl, 0x7000u); /* gfx10 hardware limit */
    if (!n->ctl_stack_size) n->ctl_stack_size = ctl;
    if (!n->cwsr_size) n->cwsr_size = n->ctl_stack_size + wg_data;
    n->debug_memory_size = (uint32_t)base_align_up((uint64_t)n->wave_num * 32, 64);
    n->eop_size = 4096; /* every gfx8+ part except Tonga */
}

/* every node: the GPUs' and the CPUs' */
#define LIST_MAX (AMD_MAX_NODES + 64)
typedef struct list_ctx {
    uint32_t nodes[LIST_MAX];
    int n;
} list_ctx;

static void add_node(void *arg, const char *name)
{
    list_ctx *c = arg;
    char *end;
    unsigned long v = strtoul(name, &end, 10);
    if (*name && !*end && c->n < LIST_MAX) c->nodes[c->n++] = (uint32_t)v;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t read_vram(uint32_t node)
{
    /* mem_banks/<M>/properties: heap_type 1 (FB public) or 2 (FB private) is VRAM */
    char path[256], buf[1024];
    uint64_t total = 0;
    for (int b = 0; b < 8; b++) {
        snprintf(path, sizeof path, AMD_KFD_TOPOLOGY "/%u/mem_banks/%d/properties", node, b);
        if (sys_read_file(path, buf, sizeof buf) <= 0) break;
        uint64_t heap = prop(buf, "heap_type", NULL);
        if (heap == 1 || heap == 2) total += prop(buf, "size_in_bytes", NULL);
    }
    return total;
}

int amd_topology_read(amd_node *out, int max)
{
    list_ctx c = {.n = 0};
    int rc = sys_list_dir(AMD_KFD_TOPOLOGY, add_node, &c);
    if (rc < 0) return rc;
    qsort(c.nodes, (size_t)c.n, sizeof c.nodes[0], cmp_u32);
    int found = 0;
    char path[256], buf[8192];
    for (int i = 0; i < c.n && found < max; i++) {
        snprintf(path, sizeof path, AMD_KFD_TOPOLOGY "/%u/gpu_id", c.nodes[i]);
        if (sys_read_file(path, buf, sizeof buf) <= 0) continue;
        uint32_t gpu_id = (uint32_t)strtoul(buf, NULL, 10);
        if (!gpu_id) continue; /* a CPU node */
        snprintf(path, sizeof path, AMD_KFD_TOPOLOGY "/%u/properties", c.nodes[i]);
        if (sys_read_file(path, buf, sizeof buf) <= 0) continue;
        amd_node *n = &out[found++];
        memset(n, 0, sizeof *n);
        n->node = c.nodes[i];
        n->gpu_id = gpu_id;
        amd_node_parse(n, buf);
        n->vram_bytes = read_vram(c.nodes[i]);
    }
    return found;
}
