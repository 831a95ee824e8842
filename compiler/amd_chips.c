/* The AMD chip table (amd_chips.h). Numbers and their sources:
 *   gfx_target_version, the KFD CWSR VGPR bytes: torvalds/linux
 *     drivers/gpu/drm/amd/amdkfd/kfd_topology.c, kfd_queue.c
 *     (kfd_queue_ctx_save_restore_size: 0x80000 for 9.0.8/9.0.10/9.4.x/9.5,
 *     0x60000 for 11.0.0/11.0.1/11.5.1/12.0.x, else 0x40000);
 *   EF_AMDGPU_MACH: llvm-project llvm/include/llvm/BinaryFormat/ELF.h;
 *   VGPR granules and totals: llvm-project
 *     llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp (gfx90a insts: 8 and
 *     512; 1.5x VGPRs (gfx1100/1101/1151/12): 24 wave32, 12 wave64);
 *   LDS: KFD's lds_size_in_kb (64 KiB; gfx950 160 KiB);
 *   the encoders' facts: amdgpu's gfx_v9_0.c / gfx_v11_0.c (emit_mem_sync,
 *     emit_fence), sdma_v4_4_2.c / sdma_v6_0.c (copy_max_bytes 0x400000,
 *     kept at 4 MiB on every part: the 1 GiB of newer kernels is not
 *     verified here), nbio_v4_3.c / nbio_v7_9.c (HDP flush registers in
 *     segment 2 at 0xD20; gfx90a's taken to match gfx942's, unverified);
 *   IP versions: amdgpu_discovery.c (Navi 31: GC 11.0.0, SDMA 6.0.0, NBIO
 *     4.3.0; Aldebaran: GC 9.4.2, SDMA 4.4.0, NBIO 7.4.4; MI300: GC 9.4.3,
 *     SDMA 4.4.2, NBIO 7.9.0). HDP, MMHUB, MP1: Aldebaran's from
 *     amdgpu_discovery_set_ip_blocks' CHIP_ALDEBARAN list (4.4.0, 9.4.2,
 *     13.0.2); Navi 31's (6.0.0, 3.0.0, 13.0.0) and MI300's (4.4.2, 1.8.0,
 *     13.0.6) from the register headers amdgpu pairs with their GC
 *     (include/asic_reg hdp_6_0_0 / mmhub_3_0_0 / mp_13_0_0 beside
 *     gc_11_0_0; hdp_4_4_2 / mmhub_1_8_0 / smu_v13_0_6 beside gc_9_4_3).
 * Unverified on hardware: none is available to this project. */
#include "compiler/amd_chips.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static const amd_chip builtin[] = {
    /* driven */
    {.name = "gfx1100", .gfx_version = 110000, .elf_mach = 0x41, .family = AMD_FAMILY_GFX11, .wave32 = true,
     .mma = {HCQ_MMA_WMMA_F16_W32, HCQ_MMA_WMMA_BF16_W32},
     .min_clang = 16, .lds_kib = 64, .vgpr_granule64 = 12, .vgpr_granule32 = 24, .vgprs64 = 768, .max_xcc = 1,
     .l1_kib = 32, .l2_kib = 6144, .l3_kib = 98304, .cwsr_vgpr_bytes = 0x60000, AMD_CHIP_GFX11_ENCODERS, .ip_gc = {11, 0, 0}, .ip_sdma = {6, 0, 0}, .ip_nbio = {4, 3, 0},
     .ip_hdp = {6, 0, 0}, .ip_mmhub = {3, 0, 0}, .ip_mp1 = {13, 0, 0}},
    {.name = "gfx90a", .gfx_version = 90010, .elf_mach = 0x3F, .family = AMD_FAMILY_GFX9, .xnack_sramecc = true,
     .mma = {HCQ_MMA_MFMA_16X16X16_F16, HCQ_MMA_MFMA_16X16X16_BF16, HCQ_MMA_MFMA_32X32X8_F16},
     .min_clang = 13, .lds_kib = 64, .vgpr_granule64 = 8, .vgprs64 = 512, .max_xcc = 1, .l1_kib = 16, .l2_kib = 8192,
     .cwsr_vgpr_bytes = 0x80000,
     AMD_CHIP_GFX9_ENCODERS, .ip_gc = {9, 4, 2}, .ip_sdma = {4, 4, 0}, .ip_nbio = {7, 4, 4},
     .ip_hdp = {4, 4, 0}, .ip_mmhub = {9, 4, 2}, .ip_mp1 = {13, 0, 2}},
    {.name = "gfx942", .gfx_version = 90402, .elf_mach = 0x4C, .family = AMD_FAMILY_GFX9, .xnack_sramecc = true,
     .mma = {HCQ_MMA_MFMA_16X16X16_F16, HCQ_MMA_MFMA_16X16X16_BF16, HCQ_MMA_MFMA_32X32X8_F16},
     .min_clang = 17, .lds_kib = 64, .vgpr_granule64 = 8, .vgprs64 = 512, .max_xcc = 8, .l1_kib = 16, .l2_kib = 4096,
     .l3_kib = 262144, .cwsr_vgpr_bytes = 0x80000,
     AMD_CHIP_GFX9_ENCODERS, .ip_gc = {9, 4, 3}, .ip_sdma = {4, 4, 2}, .ip_nbio = {7, 9, 0},
     .ip_hdp = {4, 4, 2}, .ip_mmhub = {1, 8, 0}, .ip_mp1 = {13, 0, 6}},
    /* known, not driven: compiler targets and KFD's sizing */
    {.name = "gfx950", .gfx_version = 90500, .elf_mach = 0x4F, .family = AMD_FAMILY_NONE, .xnack_sramecc = true,
     .min_clang = 20, .lds_kib = 160, .vgpr_granule64 = 8, .vgprs64 = 512, .max_xcc = 8, .cwsr_vgpr_bytes = 0x80000},
    {.name = "gfx1201", .gfx_version = 120001, .elf_mach = 0x4E, .family = AMD_FAMILY_NONE, .wave32 = true,
     .min_clang = 20, .lds_kib = 64, .max_xcc = 1, .cwsr_vgpr_bytes = 0x60000},
    {.name = "gfx908", .gfx_version = 90008, .elf_mach = 0x30, .family = AMD_FAMILY_NONE, .xnack_sramecc = true,
     .mma = {HCQ_MMA_MFMA_16X16X16_F16, HCQ_MMA_MFMA_32X32X8_F16},
     .lds_kib = 64, .vgpr_granule64 = 4, .vgprs64 = 256, .max_xcc = 1, .cwsr_vgpr_bytes = 0x80000},
    {.name = "gfx1101", .gfx_version = 110001, .elf_mach = 0x46, .family = AMD_FAMILY_NONE, .wave32 = true,
     .mma = {HCQ_MMA_WMMA_F16_W32, HCQ_MMA_WMMA_BF16_W32},
     .lds_kib = 64, .vgpr_granule64 = 12, .vgpr_granule32 = 24, .vgprs64 = 768, .max_xcc = 1,
     .cwsr_vgpr_bytes = 0x60000},
    {.name = "gfx1151", .gfx_version = 110501, .elf_mach = 0x4A, .family = AMD_FAMILY_NONE, .wave32 = true,
     .mma = {HCQ_MMA_WMMA_F16_W32, HCQ_MMA_WMMA_BF16_W32},
     .lds_kib = 64, .vgpr_granule64 = 12, .vgpr_granule32 = 24, .vgprs64 = 768, .max_xcc = 1,
     .cwsr_vgpr_bytes = 0x60000},
    {.name = "gfx1200", .gfx_version = 120000, .elf_mach = 0x48, .family = AMD_FAMILY_NONE, .wave32 = true,
     .lds_kib = 64, .max_xcc = 1, .cwsr_vgpr_bytes = 0x60000},
};

/* rows added at run time (amd_chips_add), after the built-in ones */
#define MAX_ADDED 8
static const amd_chip *added[MAX_ADDED];
static unsigned nadded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

unsigned amd_chip_count(void)
{
    pthread_mutex_lock(&lock);
    unsigned n = (unsigned)(sizeof builtin / sizeof builtin[0]) + nadded;
    pthread_mutex_unlock(&lock);
    return n;
}

const amd_chip *amd_chip_at(unsigned i)
{
    unsigned nb = (unsigned)(sizeof builtin / sizeof builtin[0]);
    if (i < nb) return &builtin[i];
    pthread_mutex_lock(&lock);
    const amd_chip *c = i - nb < nadded ? added[i - nb] : NULL;
    pthread_mutex_unlock(&lock);
    return c;
}

const amd_chip *amd_chip_by_version(uint32_t v)
{
    const amd_chip *c;
    for (unsigned i = 0; (c = amd_chip_at(i)); i++)
        if (c->gfx_version == v) return c;
    return NULL;
}

const amd_chip *amd_chip_by_name(const char *name)
{
    const amd_chip *c;
    for (unsigned i = 0; name && (c = amd_chip_at(i)); i++)
        if (!strcmp(c->name, name)) return c;
    return NULL;
}

const amd_chip *amd_chip_by_mach(uint8_t mach)
{
    const amd_chip *c;
    for (unsigned i = 0; (c = amd_chip_at(i)); i++)
        if (c->elf_mach == mach) return c;
    return NULL;
}

bool amd_chips_add(const amd_chip *c)
{
    if (!c || !c->name || amd_chip_by_name(c->name) || amd_chip_by_version(c->gfx_version)) return false;
    pthread_mutex_lock(&lock);
    bool ok = nadded < MAX_ADDED;
    if (ok) added[nadded++] = c;
    pthread_mutex_unlock(&lock);
    return ok;
}

void amd_chips_driven_list(char *buf, size_t size)
{
    const amd_chip *c;
    unsigned n = 0, k = 0;
    for (unsigned i = 0; (c = amd_chip_at(i)); i++) n += c->family != AMD_FAMILY_NONE;
    size_t len = 0;
    buf[0] = 0;
    for (unsigned i = 0; (c = amd_chip_at(i)) && len < size; i++) {
        if (c->family == AMD_FAMILY_NONE) continue;
        k++;
        int w = snprintf(buf + len, size - len, "%s%s", k == 1 ? "" : k == n ? " and " : ", ", c->name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

void amd_arch_name_of(uint32_t v, char *buf, unsigned size)
{
    /* the LLVM processor name prints minor and stepping as hex digits */
    snprintf(buf, size, "gfx%u%x%x", v / 10000, (v / 100) % 100, v % 100);
}
