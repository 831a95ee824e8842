/* The render node's DRM ioctls, as amdgpu answers them for what a KFD
 * runtime asks (libdrm's amdgpu_device_initialize, ROCm's libhsakmt):
 * DRM_IOCTL_VERSION (drm_ioctl.c drm_version, drm_copy_field: each string
 * copied up to the caller's length, the full length returned) and
 * AMDGPU_INFO (amdgpu_kms.c amdgpu_info_ioctl: every answer copied up to
 * return_size). Buffer objects, contexts and submission through the
 * render node (GEM_CREATE, CS, ...) are refused with EINVAL naming the
 * call: KFD clients allocate through /dev/kfd, and the mock models no
 * graphics rings. */
#include "drivers/amd/amd_drm.h"
#include "drivers/mock/mock_amd.h"

#include "base/base.h"

#include <errno.h>
#include <string.h>

static int refuse(const char *what, unsigned long req)
{
    BASE_LOG(1, "mock amdgpu: %s (request 0x%lx): not modelled -> EINVAL", what, req);
    return -EINVAL;
}

/* drm_copy_field: up to the caller's length; the field's own length back */
static void copy_field(uint64_t *len, uint64_t ptr, const char *value)
{
    size_t n = strlen(value);
    if (ptr && *len) memcpy((void *)(uintptr_t)ptr, value, BASE_MIN(n, (size_t)*len));
    *len = n;
}

/* the answer, up to return_size bytes (min(size, sizeof) in amdgpu_info_ioctl) */
static int answer(const amdgpu_info_args *a, const void *v, size_t n)
{
    if (!a->return_pointer) return -EINVAL;
    memcpy((void *)(uintptr_t)a->return_pointer, v, BASE_MIN(n, (size_t)a->return_size));
    return 0;
}

static void dev_info(const mock_amd_gpu *g, amdgpu_info_device *d)
{
    const mock_amd_model *m = g->model;
    const amd_chip *c = g->chip;
    memset(d, 0, sizeof *d);
    uint32_t se = m->array_count / (m->simd_arrays_per_engine ? m->simd_arrays_per_engine : 1);
    uint32_t cu = m->simd_count / m->simd_per_cu, per_sh = cu / (m->array_count ? m->array_count : 1);
    d->device_id = m->device_id;
    d->pci_rev = m->revision;
    d->external_rev = m->revision;
    d->family = c->family == AMD_FAMILY_GFX11 ? AMDGPU_FAMILY_GC_11_0_0 : AMDGPU_FAMILY_AI;
    d->num_shader_engines = se;
    d->num_shader_arrays_per_engine = m->simd_arrays_per_engine;
    d->gpu_counter_freq = 100000; /* the 100 MHz clock timestamps count */
    d->max_engine_clock = m->clock_mhz * 1000ull;
    d->max_memory_clock = m->mclk_mhz * 1000ull;
    d->cu_active_number = cu;
    /* every CU of every shader array present (cu_bitmap[se % 4][sh + se / 4 * 2]) */
    for (uint32_t s = 0; s < se; s++)
        for (uint32_t h = 0; h < m->simd_arrays_per_engine; h++)
            d->cu_bitmap[s % 4][h + s / 4 * 2] = per_sh >= 32 ? 0xffffffffu : (1u << per_sh) - 1;
    d->num_hw_gfx_contexts = 8;
    d->num_rb_pipes = se * 4;
    d->enabled_rb_pipes_mask = d->num_rb_pipes >= 32 ? 0xffffffffu : (1u << d->num_rb_pipes) - 1;
    /* amdgpu_kms.c: the low VA range from AMDGPU_VA_RESERVED_SIZE (2 MiB
     * then) to the hole at 2^47, the high range above it */
    d->virtual_address_offset = 2ull << 20;
    d->virtual_address_max = 1ull << 47;
    d->virtual_address_alignment = 4096;
    d->pte_fragment_size = 2u << 20;
    d->gart_page_size = 4096;
    d->vram_type = c->family == AMD_FAMILY_GFX11 ? AMDGPU_VRAM_TYPE_GDDR6 : AMDGPU_VRAM_TYPE_HBM;
    d->vram_bit_width = c->family == AMD_FAMILY_GFX11 ? 384 : 4096;
    d->wave_front_size = m->wave_front_size;
    d->num_shader_visible_vgprs = 256;
    d->num_cu_per_sh = per_sh;
    d->num_tcc_blocks = 16;
    d->high_va_offset = 0xffff800000000000ull;
    d->high_va_max = 0xffff800000000000ull + (1ull << 47);
}

static int info(const mock_amd_gpu *g, amdgpu_info_args *a, unsigned long req)
{
    const mock_amd_model *m = g->model;
    switch (a->query) {
    case AMDGPU_INFO_ACCEL_WORKING: {
        uint32_t one = 1;
        return answer(a, &one, sizeof one);
    }
    case AMDGPU_INFO_DEV_INFO: {
        amdgpu_info_device d;
        dev_info(g, &d);
        return answer(a, &d, sizeof d);
    }
    case AMDGPU_INFO_VRAM_GTT: {
        amdgpu_info_vram_gtt v = {g->g->vram_bytes, g->g->vram_bytes, 64ull << 30};
        return answer(a, &v, sizeof v);
    }
    case AMDGPU_INFO_MEMORY: {
        uint64_t used = atomic_load(&g->g->vram_used);
        amdgpu_heap_info vram = {g->g->vram_bytes, g->g->vram_bytes, used, g->g->vram_bytes};
        amdgpu_info_memory v = {vram, vram, {64ull << 30, 64ull << 30, 0, 64ull << 30}};
        return answer(a, &v, sizeof v);
    }
    case AMDGPU_INFO_VRAM_USAGE:
    case AMDGPU_INFO_VIS_VRAM_USAGE: {
        uint64_t used = atomic_load(&g->g->vram_used);
        return answer(a, &used, sizeof used);
    }
    case AMDGPU_INFO_GTT_USAGE: {
        uint64_t zero = 0;
        return answer(a, &zero, sizeof zero);
    }
    case AMDGPU_INFO_READ_MMR_REG: {
        /* GB_ADDR_CONFIG (0x263e) only: the tiling configuration libdrm
         * reads at initialization, the model's value */
        if (a->read_mmr_reg.dword_offset != 0x263e || a->read_mmr_reg.count != 1)
            return refuse("AMDGPU_INFO_READ_MMR_REG of a register the mock does not model", req);
        return answer(a, &m->gb_addr_config, 4);
    }
    case AMDGPU_INFO_HW_IP_COUNT: {
        /* one compute and one SDMA instance are what the mock runs */
        uint32_t n = a->query_hw_ip.type == AMDGPU_IP_COMPUTE || a->query_hw_ip.type == AMDGPU_IP_DMA;
        return answer(a, &n, sizeof n);
    }
    case AMDGPU_INFO_HW_IP_INFO: {
        if (a->query_hw_ip.type != AMDGPU_IP_COMPUTE && a->query_hw_ip.type != AMDGPU_IP_DMA)
            return refuse("AMDGPU_INFO_HW_IP_INFO of an engine the mock does not model", req);
        amd_ip_version v = a->query_hw_ip.type == AMDGPU_IP_COMPUTE ? g->chip->ip_gc : g->chip->ip_sdma;
        amdgpu_info_hw_ip h = {.hw_ip_version_major = v.major, .hw_ip_version_minor = v.minor,
                               .ib_start_alignment = 32, .ib_size_alignment = 32, .available_rings = 0};
        return answer(a, &h, sizeof h);
    }
    case AMDGPU_INFO_FW_VERSION: {
        amdgpu_info_firmware f = {1, 0};
        return answer(a, &f, sizeof f);
    }
    }
    return refuse("an AMDGPU_INFO query the mock does not model", req);
}

int mock_amd_drm_ioctl(mock_amd_gpu *g, unsigned long req, void *arg)
{
    if (DRM_IOC_TYPE(req) != 'd') return -ENOTTY;
    unsigned nr = DRM_IOC_NR(req), size = DRM_IOC_SIZE(req);
    if (nr == DRM_NR_VERSION && size >= sizeof(drm_version_args)) {
        /* amdgpu_drv.c: KMS_DRIVER_MAJOR 3 (the minor is the 6.1 kernel's) */
        drm_version_args *v = arg;
        v->major = 3;
        v->minor = 49;
        v->patchlevel = 0;
        copy_field(&v->name_len, v->name, "amdgpu");
        copy_field(&v->date_len, v->date, "20150101");
        copy_field(&v->desc_len, v->desc, "AMD GPU");
        return 0;
    }
    if (nr == DRM_COMMAND_BASE + AMDGPU_NR_INFO && size >= sizeof(amdgpu_info_args))
        return info(g, arg, req);
    return refuse("a DRM ioctl", req);
}
