/* compiler/amd_chips.h: the AMD chip table, one row per GPU with every
 * fact hcq uses about it, in designated initializers (amd_chips.c). The
 * compiler targets, the AMD backend's bring-up and encoders (drivers/amd
 * calls a driven row its amd_arch), the mock GPU's models, the decoders,
 * the tracer and `hcq info` read it; none keeps a list of its own. It lives
 * in the compiler layer because the compiler is the lowest layer that
 * needs it.
 *
 * Adding a chip of a family hcq drives (gfx9.4 or gfx11 register layout)
 * is one row here (and, to emulate it, one model row in
 * drivers/mock/mock_amd.c); docs/architecture.md says how. A row with
 * .family AMD_FAMILY_NONE is a chip hcq knows (its code objects, KFD's
 * sizing of its queues) but does not drive.
 *
 * Sources, per field, beside the struct; each number is checked against
 * them by tests/unit/test_amd_chips.c, written from the sources, not
 * from this table. */
#ifndef HCQ_COMPILER_AMD_CHIPS_H
#define HCQ_COMPILER_AMD_CHIPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hcq/compiler.h>

/* the register layout a chip's compute registers follow: gfx9 (gc 9.4.x:
 * gfx90a, gfx942) or gfx11 (gc 11.x); the column of drivers/amd/amd_regs.c */
typedef enum amd_family { AMD_FAMILY_GFX9 = 0, AMD_FAMILY_GFX11 = 1, AMD_FAMILY_COUNT, AMD_FAMILY_NONE = 0xff } amd_family;

/* ** cache control: ACQUIRE_MEM's GCR_CNTL (gfx11) and CP_COHER_CNTL (gfx9),
 * RELEASE_MEM's cache action bits (nvd.h / soc15d.h in amdgpu) */
enum {
    AMD_GCR_GLI_INV = 1u << 0, /* GLI_INV = 1: the whole I$ */
    AMD_GCR_GLM_WB = 1u << 4,
    AMD_GCR_GLM_INV = 1u << 5,
    AMD_GCR_GLK_WB = 1u << 6,
    AMD_GCR_GLK_INV = 1u << 7,
    AMD_GCR_GLV_INV = 1u << 8,
    AMD_GCR_GL1_INV = 1u << 9,
    AMD_GCR_GL2_INV = 1u << 14,
    AMD_GCR_GL2_WB = 1u << 15,
    AMD_GCR_KNOWN = 0x0007ffffu, /* bits 0-18 are defined */
};
enum {
    AMD_COHER_TC_WB_ACTION_ENA = 1u << 18,
    AMD_COHER_TCL1_ACTION_ENA = 1u << 22,
    AMD_COHER_TC_ACTION_ENA = 1u << 23,
    AMD_COHER_SH_KCACHE_ACTION_ENA = 1u << 27,
    AMD_COHER_SH_ICACHE_ACTION_ENA = 1u << 29,
};
enum {
    /* gfx11 RELEASE_MEM DW1 */
    AMD_REL_GCR_GLM_WB = 1u << 12,
    AMD_REL_GCR_GLM_INV = 1u << 13,
    AMD_REL_GCR_GLV_INV = 1u << 14,
    AMD_REL_GCR_GL1_INV = 1u << 15,
    AMD_REL_GCR_GL2_INV = 1u << 20,
    AMD_REL_GCR_GL2_WB = 1u << 21,
    AMD_REL_GCR_SEQ = 1u << 22,
    /* gfx9 RELEASE_MEM DW1 */
    AMD_REL_TC_WB_ACTION_EN = 1u << 15,
    AMD_REL_TC_NC_ACTION_EN = 1u << 19,
};

/* an IP block's version, as amdgpu's discovery table gives it */
typedef struct amd_ip_version {
    uint8_t major, minor, revision;
} amd_ip_version;

typedef struct amd_chip {
    /* ** identity */
    const char *name;     /* LLVM processor: "gfx942" */
    uint32_t gfx_version; /* KFD gfx_target_version: 90402 (kfd_topology.c) */
    uint8_t elf_mach;     /* EF_AMDGPU_MACH_AMDGCN_* (llvm BinaryFormat/ELF.h) */
    amd_family family;    /* the register layout; AMD_FAMILY_NONE: hcq does not drive it */
    /* ** the compiler (llvm AMDGPUUsage "Processors"; clang's offload-arch list) */
    bool wave32;          /* the default wave size is 32 (gfx10+) */
    bool xnack_sramecc;   /* clang writes xnack/sramecc "any" into e_flags (gfx9) */
    int min_clang;        /* the first clang that knows the processor */
    /* the matrix-core operations hcq's kernels for it can run, best first,
     * 0-terminated (compiler.h hcq_mma_kind): hcq compiles gfx11 as wave32
     * (its default wave size), so the wave32 WMMA forms; gfx9's MFMA is
     * wave64. LLVM AMDGPUUsage / the ISA guides say which processors have
     * which instruction (WMMA: gfx11; 16x16x16f16 and 32x32x8f16: gfx908+;
     * 16x16x16 bf16: gfx90a's _1k form, gfx942's own) */
    hcq_mma_kind mma[4];
    /* ** the shader core (llvm AMDGPUBaseInfo.cpp getVGPRAllocGranule,
     * getTotalNumVGPRs; KFD properties lds_size_in_kb) */
    uint32_t lds_kib;       /* LDS a work-group may have */
    uint8_t vgpr_granule64; /* VGPR allocation granule of a wave64 (0: not recorded for this chip) */
    uint8_t vgpr_granule32; /* of a wave32; 0 without wave32 */
    uint16_t vgprs64;       /* VGPRs a wave64 can have in all (gfx90a/942: VGPRs and AGPRs) */
    uint32_t max_xcc;       /* XCCs of the largest part (MI300X: 8 in SPX mode) */
    /* the caches KFD lists in the topology (AMD's product pages: MI210
     * 16 KiB L1 per CU, 8 MiB L2; MI300X 16 KiB L1, 4 MiB L2 per XCD,
     * 256 MiB Infinity Cache; RX 7900 XTX 32 KiB L0 per CU, 6 MiB L2,
     * 96 MiB Infinity Cache); 0: none */
    uint32_t l1_kib, l2_kib, l3_kib;
    /* ** KFD: bytes of VGPR state per CU its context-save area sizing
     * counts (kfd_queue.c kfd_queue_ctx_save_restore_size) */
    uint32_t cwsr_vgpr_bytes;
    /* ** the encoders (driven chips; amdgpu gfx_v9_0.c / gfx_v11_0.c
     * emit_mem_sync and emit_fence, sdma_v4_4_2.c / sdma_v6_0.c) */
    uint8_t sdma_major;       /* SDMA IP major version: 6, 4 */
    bool aql_compute;         /* the compute queue is AQL: gfx9, whose waits are AQL barrier-value packets (it has
                               * no WAIT_REG_MEM64), and its multi-XCC parts (docs/amd-xcc.md) */
    uint32_t hdp_flush_req;   /* NBIO BIF_BX_PF0_GPU_HDP_FLUSH_REQ (dword offset) */
    uint32_t hdp_flush_done;
    uint32_t scratch_unit;    /* TMPRING WAVESIZE unit in bytes: 256 gfx11, 1024 gfx9 */
    uint32_t acquire_body_dw; /* ACQUIRE_MEM body dwords: 7 gfx11, 6 gfx9 */
    uint32_t acquire_full;    /* full cache invalidate + write-back: GCR_CNTL (gfx11) or CP_COHER_CNTL (gfx9) */
    uint32_t release_flush;   /* RELEASE_MEM DW1 cache actions that make results visible to the host */
    uint64_t sdma_copy_max;   /* bytes one COPY_LINEAR moves at most */
    uint8_t sdma_count_bits;  /* width of COPY_LINEAR's count field */
    bool sdma_fence_mtype;    /* FENCE takes an MTYPE in its header (SDMA 5+) */
    bool sdma_gcr;            /* SDMA has GCR_REQ (SDMA 5+) */
    /* ** the IP versions amdgpu's discovery table gives the part
     * (amdgpu_discovery.c; served by the mock as sysfs ip_discovery) */
    amd_ip_version ip_gc, ip_sdma, ip_nbio, ip_hdp, ip_mmhub, ip_mp1;
} amd_chip;

#define GFX11_ACQUIRE_FULL                                                                                  \
    (AMD_GCR_GLI_INV | AMD_GCR_GLM_WB | AMD_GCR_GLM_INV | AMD_GCR_GLK_WB | AMD_GCR_GLK_INV | AMD_GCR_GLV_INV | \
     AMD_GCR_GL1_INV | AMD_GCR_GL2_INV | AMD_GCR_GL2_WB)
#define GFX11_RELEASE_FLUSH                                                                              \
    (AMD_REL_GCR_GLM_WB | AMD_REL_GCR_GLM_INV | AMD_REL_GCR_GLV_INV | AMD_REL_GCR_GL1_INV | AMD_REL_GCR_GL2_INV | \
     AMD_REL_GCR_GL2_WB | AMD_REL_GCR_SEQ)
#define GFX9_ACQUIRE_FULL                                                                                    \
    (AMD_COHER_TC_WB_ACTION_ENA | AMD_COHER_TCL1_ACTION_ENA | AMD_COHER_TC_ACTION_ENA | AMD_COHER_SH_KCACHE_ACTION_ENA | \
     AMD_COHER_SH_ICACHE_ACTION_ENA)
#define GFX9_RELEASE_FLUSH (AMD_REL_TC_WB_ACTION_EN | AMD_REL_TC_NC_ACTION_EN)

/* The encoder facts a family shares (SDMA 6 / SDMA 4 and their NBIO's HDP
 * registers), for a row: {.name = ..., AMD_CHIP_GFX11_ENCODERS, ...} */
#define AMD_CHIP_GFX11_ENCODERS                                                                                        \
    .sdma_major = 6, .aql_compute = false, .hdp_flush_req = 0xE26, .hdp_flush_done = 0xE27, .scratch_unit = 256, \
    .acquire_body_dw = 7, .acquire_full = GFX11_ACQUIRE_FULL, .release_flush = GFX11_RELEASE_FLUSH,            \
    .sdma_copy_max = 4u << 20, .sdma_count_bits = 30, .sdma_fence_mtype = true, .sdma_gcr = true
#define AMD_CHIP_GFX9_ENCODERS                                                                                          \
    .sdma_major = 4, .aql_compute = true, .hdp_flush_req = 0xE26, .hdp_flush_done = 0xE27, .scratch_unit = 1024, \
    .acquire_body_dw = 6, .acquire_full = GFX9_ACQUIRE_FULL, .release_flush = GFX9_RELEASE_FLUSH,              \
    .sdma_copy_max = 4u << 20, .sdma_count_bits = 22, .sdma_fence_mtype = false, .sdma_gcr = false

/* The chips: the built-in rows, then any added. i past the end: NULL. */
const amd_chip *amd_chip_at(unsigned i);
unsigned amd_chip_count(void);
/* By KFD gfx_target_version, LLVM name or EF_AMDGPU_MACH; NULL if unknown. */
const amd_chip *amd_chip_by_version(uint32_t gfx_version);
const amd_chip *amd_chip_by_name(const char *name);
const amd_chip *amd_chip_by_mach(uint8_t mach);
/* Adds a row (it must live as long as the process uses it): for bring-up
 * of a new part, and the test that shows a new chip takes one row. A row
 * whose name or gfx_version is already known is refused (false). */
bool amd_chips_add(const amd_chip *c);
/* "gfx1100, gfx90a and gfx942": the chips hcq drives, for messages */
void amd_chips_driven_list(char *buf, size_t size);
/* "gfx" + major + minor and stepping in hex: 110000 -> "gfx1100", 90402 -> "gfx942" */
void amd_arch_name_of(uint32_t gfx_version, char *buf, unsigned size);

#endif
