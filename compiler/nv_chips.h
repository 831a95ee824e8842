/* compiler/nv_chips.h: the NVIDIA GPU families hcq drives, one row each
 * (nv_chips.c): the SM version and compile target, the RM classes, the
 * QMD versions the compute class documents and the one hcq launches with,
 * the constant-bank parameter base, the register file, the shared-memory
 * carve-outs and the paths a first run may need to probe. Read by the
 * compiler's NV targets (target_nv.c), bring-up and encoders (drivers/nv),
 * the mock's GPU models (drivers/mock/mock_nv.c: a part is one row there
 * naming its family by SM version), the decoders and the tracer (class
 * names), hcq info and every "hcq drives ..." message. It lives in the
 * compiler layer because the targets, the lowest reader, need it.
 *
 * Adding a GPU of a family listed here is one mock model row (and nothing
 * for hardware: bring-up picks the family by the SM version RM reports);
 * a new family is one row here plus its compile target row. */
#ifndef HCQ_COMPILER_NV_CHIPS_H
#define HCQ_COMPILER_NV_CHIPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hcq/compiler.h>

/* ** classes (open-gpu-kernel-modules src/nvidia/generated/g_allclasses.h;
 * per-chip lists in g_gpu_class_list.c) */
enum nv_class {
    NV01_ROOT_CLIENT = 0x0041,
    NV01_DEVICE_0 = 0x0080,
    NV20_SUBDEVICE_0 = 0x2080,
    NV01_MEMORY_SYSTEM = 0x003E,
    NV01_MEMORY_LOCAL_USER = 0x0040,
    NV01_MEMORY_VIRTUAL = 0x0070, /* a range of a vaspace, mapped into with RM_MAP_MEMORY_DMA */
    NV01_MEMORY_SYSTEM_OS_DESCRIPTOR = 0x0071,
    FERMI_VASPACE_A = 0x90F1,
    FERMI_CONTEXT_SHARE_A = 0x9067,
    KEPLER_CHANNEL_GROUP_A = 0xA06C,
    GT200_DEBUGGER = 0x83DE,
    VOLTA_USERMODE_A = 0xC361,
    TURING_USERMODE_A = 0xC461,
    AMPERE_USERMODE_A = 0xC561,
    HOPPER_USERMODE_A = 0xC661,
    VOLTA_CHANNEL_GPFIFO_A = 0xC36F,
    TURING_CHANNEL_GPFIFO_A = 0xC46F,
    AMPERE_CHANNEL_GPFIFO_A = 0xC56F,
    HOPPER_CHANNEL_GPFIFO_A = 0xC86F,
    AMPERE_COMPUTE_A = 0xC6C0,
    AMPERE_COMPUTE_B = 0xC7C0,
    ADA_COMPUTE_A = 0xC9C0,
    HOPPER_COMPUTE_A = 0xCBC0,
    BLACKWELL_COMPUTE_A = 0xCDC0,
    AMPERE_DMA_COPY_A = 0xC6B5,
    AMPERE_DMA_COPY_B = 0xC7B5,
    HOPPER_DMA_COPY_A = 0xC8B5,
};

#define NV_MAX_CARVEOUTS 12

typedef struct nv_family {
    const char *family;          /* "Hopper": the name messages group by */
    const char *name;            /* "Hopper (GH100)": this row */
    uint32_t sm_version;         /* GR SM_VERSION: 0x900 */
    uint32_t sm;                 /* the cubin's / target's number: 90 */
    const char *target;          /* "sm_90" */
    /* RM classes (open-gpu-kernel-modules src/nvidia/generated/g_gpu_class_list.c) */
    uint32_t compute_cls, copy_cls, channel_cls, usermode_cls; /* what hcq allocates */
    uint32_t channel_classes[4], usermode_classes[4];          /* what RM offers (0-terminated) */
    /* QMD: bit n set when the compute class's QMD header (open-gpu-doc
     * classes/compute/cl*c0qmd.h) defines a V0n_xx layout */
    uint32_t qmd_documented;
    uint32_t qmd_major;          /* the version hcq launches with by default (3 or 4) */
    uint32_t param_base;         /* kernargs in constant bank 0 (EIATTR_PARAM_CBANK of ptxas's cubins) */
    bool copy_sem64;             /* the copy class has SEMAPHORE_PAYLOAD_SIZE (64-bit releases) */
    uint32_t local_upper_bits;   /* SET_SHADER_LOCAL_MEMORY_A ADDRESS_UPPER width */
    uint32_t sem_addr_hi_bits;   /* the channel class's SEM_ADDR_HI width */
    bool acquire_strict_geq;     /* the channel class documents ACQ_STRICT_GEQ (clc56f.h has it, clc86f.h not) */
    /* the SM: registers, in SM sub-partitions that each hold a quarter,
     * allocated per warp in units of reg_unit (the CUDA occupancy
     * calculator's allocation granularity); shared-memory carve-outs in
     * KiB (CUDA C programming guide, "Compute capabilities"), 0-terminated
     * after the first, the last the largest */
    uint32_t regs_per_sm, reg_unit, sm_partitions, max_regs_per_thread;
    uint16_t carveouts_kib[NV_MAX_CARVEOUTS];
    /* the tensor-core operations hcq compiles for it, best first, 0-terminated
     * (compiler.h hcq_mma_kind; mma.sync.m16n8k16 with f16 and bf16 inputs
     * exists from sm_80: PTX ISA, "Warp-level Matrix Multiply-Accumulate
     * Instructions", its target ISA notes) */
    hcq_mma_kind mma[4];
} nv_family;

extern const nv_family nv_families[];
extern const size_t nv_family_count;

/* The family of SM version sm_version (0x900), or NULL. */
const nv_family *nv_family_for_sm(uint32_t sm_version);
/* The family a compile target number belongs to (90), or NULL. */
const nv_family *nv_family_for_target(uint32_t sm);
/* The family whose compute, copy, channel or usermode class cls is. */
const nv_family *nv_family_for_class(uint32_t cls);
/* "Ampere (sm_80, sm_86, sm_87), Ada (sm_89) and Hopper (sm_90)": what hcq
 * drives, for messages */
const char *nv_families_driven(void);
/* The largest shared-memory carve-out of f, in KiB. */
uint32_t nv_family_shared_kib(const nv_family *f);

#endif
