/* The NVIDIA families hcq drives (compiler/nv_chips.h). Sources, for a
 * reviewer checking a row:
 *   - SM versions, classes: open-gpu-kernel-modules 580.95.05
 *     src/nvidia/generated/g_gpu_class_list.c (per chip), ctrl0080gr.h;
 *   - QMD layouts per compute class: open-gpu-doc classes/compute/
 *     clc6c0qmd.h (V02_03, V02_04, V03_00), clc7c0qmd.h (the same),
 *     clc9c0qmd.h (V02_04, V03_00), clcbc0qmd.h (V03_00, V04_00);
 *   - the parameter base: EIATTR_PARAM_CBANK in ptxas's cubins (0x160 up
 *     to sm_89, 0x210 on sm_90; nv-facts §4);
 *   - 64-bit copy-engine semaphores: SEMAPHORE_PAYLOAD_SIZE in open-gpu-doc
 *     classes/dma-copy/clc7b5.h and clc8b5.h, absent from clc6b5.h;
 *   - SET_SHADER_LOCAL_MEMORY_A ADDRESS_UPPER: 16:0 in clc6c0.h, clc7c0.h,
 *     clc9c0.h; 24:0 in clcbc0.h; SEM_ADDR_HI 7:0 in clc56f.h, 24:0 in
 *     clc86f.h, whose SEM_EXECUTE lists no ACQ_STRICT_GEQ (open-gpu-kernel-
 *     modules src/common/sdk/nvidia/inc/class/);
 *   - 64 Ki 32-bit registers per SM in four processing blocks, at most 255
 *     per thread (NVIDIA's A100, RTX 3090, Ada and H100 architecture
 *     whitepapers); 256-register allocation units per warp (the CUDA
 *     occupancy calculator);
 *   - shared-memory carve-outs: the CUDA C++ programming guide, "Compute
 *     capabilities" (8.0 and 8.7: up to 164 KiB, 8.6 and 8.9: up to 100,
 *     9.0: up to 228). */
#include "compiler/nv_chips.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define AMPERE_CHANNELS {AMPERE_CHANNEL_GPFIFO_A, TURING_CHANNEL_GPFIFO_A, VOLTA_CHANNEL_GPFIFO_A}
#define AMPERE_USERMODES {AMPERE_USERMODE_A, TURING_USERMODE_A, VOLTA_USERMODE_A}
#define QMD(n) (1u << (n))
/* every family here is sm_80 or later: m16n8k16 f16 and bf16 */
#define NV_MMA_SM80 {HCQ_MMA_NV_M16N8K16_F16, HCQ_MMA_NV_M16N8K16_BF16}

const nv_family nv_families[] = {
    {
        .family = "Ampere",
        .name = "Ampere (GA100)",
        .sm_version = 0x800,
        .sm = 80,
        .target = "sm_80",
        .compute_cls = AMPERE_COMPUTE_A,
        .copy_cls = AMPERE_DMA_COPY_A,
        .channel_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = AMPERE_USERMODE_A,
        .channel_classes = AMPERE_CHANNELS,
        .usermode_classes = AMPERE_USERMODES,
        .qmd_documented = QMD(2) | QMD(3),
        .qmd_major = 3,
        .param_base = 0x160,
        .copy_sem64 = false,
        .local_upper_bits = 17,
        .sem_addr_hi_bits = 8,
        .acquire_strict_geq = true,
        .regs_per_sm = 65536,
        .reg_unit = 256,
        .sm_partitions = 4,
        .max_regs_per_thread = 255,
        .carveouts_kib = {0, 8, 16, 32, 64, 100, 132, 164},
        .mma = NV_MMA_SM80,
    },
    {
        .family = "Ampere",
        .name = "Ampere (GA10x)",
        .sm_version = 0x806,
        .sm = 86,
        .target = "sm_86",
        .compute_cls = AMPERE_COMPUTE_B,
        .copy_cls = AMPERE_DMA_COPY_B,
        .channel_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = AMPERE_USERMODE_A,
        .channel_classes = AMPERE_CHANNELS,
        .usermode_classes = AMPERE_USERMODES,
        .qmd_documented = QMD(2) | QMD(3),
        .qmd_major = 3,
        .param_base = 0x160,
        .copy_sem64 = true,
        .local_upper_bits = 17,
        .sem_addr_hi_bits = 8,
        .acquire_strict_geq = true,
        .regs_per_sm = 65536,
        .reg_unit = 256,
        .sm_partitions = 4,
        .max_regs_per_thread = 255,
        .carveouts_kib = {0, 8, 16, 32, 64, 100},
        .mma = NV_MMA_SM80,
    },
    {
        .family = "Ampere",
        .name = "Ampere (GA10B)",
        .sm_version = 0x807,
        .sm = 87,
        .target = "sm_87",
        .compute_cls = AMPERE_COMPUTE_B,
        .copy_cls = AMPERE_DMA_COPY_B,
        .channel_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = AMPERE_USERMODE_A,
        .channel_classes = AMPERE_CHANNELS,
        .usermode_classes = AMPERE_USERMODES,
        .qmd_documented = QMD(2) | QMD(3),
        .qmd_major = 3,
        .param_base = 0x160,
        .copy_sem64 = true,
        .local_upper_bits = 17,
        .sem_addr_hi_bits = 8,
        .acquire_strict_geq = true,
        .regs_per_sm = 65536,
        .reg_unit = 256,
        .sm_partitions = 4,
        .max_regs_per_thread = 255,
        .carveouts_kib = {0, 8, 16, 32, 64, 100, 132, 164},
        .mma = NV_MMA_SM80,
    },
    {
        .family = "Ada",
        .name = "Ada (AD10x)",
        .sm_version = 0x809,
        .sm = 89,
        .target = "sm_89",
        .compute_cls = ADA_COMPUTE_A,
        .copy_cls = AMPERE_DMA_COPY_B,
        .channel_cls = AMPERE_CHANNEL_GPFIFO_A,
        .usermode_cls = AMPERE_USERMODE_A,
        .channel_classes = AMPERE_CHANNELS,
        .usermode_classes = AMPERE_USERMODES,
        .qmd_documented = QMD(2) | QMD(3),
        .qmd_major = 3,
        .param_base = 0x160,
        .copy_sem64 = true,
        .local_upper_bits = 17,
        .sem_addr_hi_bits = 8,
        .acquire_strict_geq = true,
        .regs_per_sm = 65536,
        .reg_unit = 256,
        .sm_partitions = 4,
        .max_regs_per_thread = 255,
        .carveouts_kib = {0, 8, 16, 32, 64, 100},
        .mma = NV_MMA_SM80,
    },
    {
        .family = "Hopper",
        .name = "Hopper (GH100)",
        .sm_version = 0x900,
        .sm = 90,
        .target = "sm_90",
        .compute_cls = HOPPER_COMPUTE_A,
        .copy_cls = HOPPER_DMA_COPY_A,
        .channel_cls = HOPPER_CHANNEL_GPFIFO_A,
        .usermode_cls = HOPPER_USERMODE_A,
        .channel_classes = {HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A, TURING_CHANNEL_GPFIFO_A,
                            VOLTA_CHANNEL_GPFIFO_A},
        .usermode_classes = {HOPPER_USERMODE_A, AMPERE_USERMODE_A, TURING_USERMODE_A, VOLTA_USERMODE_A},
        .qmd_documented = QMD(3) | QMD(4),
        .qmd_major = 4,
        .param_base = 0x210,
        .copy_sem64 = true,
        .local_upper_bits = 25,
        .sem_addr_hi_bits = 25,
        .acquire_strict_geq = false,
        .regs_per_sm = 65536,
        .reg_unit = 256,
        .sm_partitions = 4,
        .max_regs_per_thread = 255,
        .carveouts_kib = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228},
        .mma = NV_MMA_SM80,
    },
};
const size_t nv_family_count = sizeof nv_families / sizeof nv_families[0];

const nv_family *nv_family_for_sm(uint32_t sm_version)
{
    for (size_t i = 0; i < nv_family_count; i++)
        if (nv_families[i].sm_version == sm_version) return &nv_families[i];
    return NULL;
}

const nv_family *nv_family_for_target(uint32_t sm)
{
    for (size_t i = 0; i < nv_family_count; i++)
        if (nv_families[i].sm == sm) return &nv_families[i];
    return NULL;
}

const nv_family *nv_family_for_class(uint32_t cls)
{
    for (size_t i = 0; i < nv_family_count; i++) {
        const nv_family *f = &nv_families[i];
        if (f->compute_cls == cls || f->copy_cls == cls || f->channel_cls == cls || f->usermode_cls == cls) return f;
    }
    return NULL;
}

static char driven[256];
static pthread_once_t driven_once = PTHREAD_ONCE_INIT;

static void make_driven(void)
{
    char buf[sizeof driven] = "";
    size_t n = 0;
    for (size_t i = 0; i < nv_family_count; i++) {
        const nv_family *f = &nv_families[i];
        bool first = !i || strcmp(nv_families[i - 1].family, f->family);
        bool last = i + 1 == nv_family_count || strcmp(nv_families[i + 1].family, f->family);
        bool final_group = true;
        for (size_t k = i + 1; k < nv_family_count; k++) final_group &= !strcmp(nv_families[k].family, f->family);
        if (first)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s (", i ? (final_group ? " and " : ", ") : "",
                                  f->family);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s%s", first ? "" : ", ", f->target, last ? ")" : "");
        if (n >= sizeof buf) break;
    }
    memcpy(driven, buf, sizeof driven);
}

const char *nv_families_driven(void)
{
    pthread_once(&driven_once, make_driven); /* the table is constant: the text once is the text */
    return driven;
}

uint32_t nv_family_shared_kib(const nv_family *f)
{
    uint32_t m = 0;
    for (size_t i = 0; i < NV_MAX_CARVEOUTS && (i == 0 || f->carveouts_kib[i]); i++)
        if (f->carveouts_kib[i] > m) m = f->carveouts_kib[i];
    return m;
}
