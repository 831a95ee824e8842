/* drivers/amd/amd_regs.h: what differs between the AMD GPUs we drive, as
 * data written once and shared by the encoders, the mock GPU and a future
 * decoder: the per-target facts (amd_arch), the compute registers with
 * their offsets per register family (one table, gfx9's differences in its
 * own column), and the bit fields of the registers and packet dwords we
 * fill (amd_field).
 *
 * Sources (numbers checked against these, definitions our own):
 *   register offsets: tinygrad/tinygrad tinygrad/runtime/autogen/am/regs.py
 *     with the gc_11_0_0 / gc_9_4_3 IP base tables, as collected in
 *     ../shared/reference/amd-facts.md §3.2; torvalds/linux
 *     drivers/gpu/drm/amd/include/asic_reg/gc/gc_11_0_0_offset.h and
 *     gc_9_4_3_offset.h (same numbers);
 *   field layouts: the *_sh_mask.h headers beside them;
 *   HDP flush registers: NBIO 4.3.0 / 7.9.0 (amdgpu nbio_v4_3.c,
 *     nbio_v7_9.c: BIF_BX_PF0_GPU_HDP_FLUSH_REQ/DONE in segment 2 at 0xD20).
 * Unverified on hardware (none is available to this project): gfx90a's
 * HDP registers are taken to match gfx942's. */
#ifndef HCQ_DRIVERS_AMD_REGS_H
#define HCQ_DRIVERS_AMD_REGS_H

#include "compiler/amd_chips.h"

#include <stdbool.h>
#include <stdint.h>

/* ** bit fields: shift/mask, never C bitfields */
typedef struct amd_field {
    const char *name;
    uint8_t shift, width;
} amd_field;

static inline uint32_t amd_fmask(amd_field f) { return f.width >= 32 ? 0xffffffffu : ((1u << f.width) - 1u) << f.shift; }
static inline uint32_t amd_fset(amd_field f, uint32_t v)
{
    return (f.width >= 32 ? v : (v & ((1u << f.width) - 1u))) << f.shift;
}
static inline uint32_t amd_fget(amd_field f, uint32_t dw)
{
    return f.width >= 32 ? dw : (dw >> f.shift) & ((1u << f.width) - 1u);
}
/* true when v fits the field */
static inline bool amd_ffits(amd_field f, uint64_t v) { return f.width >= 32 ? v <= 0xffffffffu : v < (1ull << f.width); }

/* ** register families (compiler/amd_chips.h amd_family): gfx11 (gc 11.x)
 * and gfx9 (gc 9.4.x: gfx90a, gfx942) */

/* ** compute registers (SH space: SET_SH_REG writes them) */
typedef enum amd_reg {
    AMD_REG_DISPATCH_INITIATOR,
    AMD_REG_DIM_X,
    AMD_REG_DIM_Y,
    AMD_REG_DIM_Z,
    AMD_REG_START_X,
    AMD_REG_START_Y,
    AMD_REG_START_Z,
    AMD_REG_NUM_THREAD_X,
    AMD_REG_NUM_THREAD_Y,
    AMD_REG_NUM_THREAD_Z,
    AMD_REG_PIPELINESTAT_ENABLE,
    AMD_REG_PERFCOUNT_ENABLE,
    AMD_REG_PGM_LO,
    AMD_REG_PGM_HI,
    AMD_REG_DISPATCH_PKT_ADDR_LO,
    AMD_REG_DISPATCH_PKT_ADDR_HI,
    AMD_REG_DISPATCH_SCRATCH_BASE_LO,
    AMD_REG_DISPATCH_SCRATCH_BASE_HI,
    AMD_REG_PGM_RSRC1,
    AMD_REG_PGM_RSRC2,
    AMD_REG_RESOURCE_LIMITS,
    AMD_REG_TMPRING_SIZE,
    AMD_REG_RESTART_X,
    AMD_REG_RESTART_Y,
    AMD_REG_RESTART_Z,
    AMD_REG_THREAD_TRACE_ENABLE,
    AMD_REG_CURRENT_LOGIC_XCC_ID, /* gfx9.4 only: which share of a split dispatch this XCC runs */
    AMD_REG_TG_CHUNK_SIZE,        /* gfx9.4 only: work-groups per XCC turn (0: no split) */
    AMD_REG_PGM_RSRC3,            /* differs: 0x2E28 gfx11, 0x2E2D gfx9 */
    AMD_REG_USER_DATA_0,          /* ..15 follow */
    AMD_REG_COUNT
} amd_reg;

typedef struct amd_reg_info {
    const char *name;
    uint32_t off[AMD_FAMILY_COUNT]; /* absolute dword offset; 0: absent */
} amd_reg_info;
extern const amd_reg_info amd_regs[AMD_REG_COUNT];

#define AMD_SH_REG_BASE 0x2C00u
#define AMD_SH_REG_END 0x3000u
#define AMD_UCONFIG_REG_BASE 0xC000u
#define AMD_USER_DATA_COUNT 16u

/* The name of the register at an absolute offset for family fam, or NULL. */
const char *amd_reg_name(amd_family fam, uint32_t off);

/* ** register fields */
/* COMPUTE_PGM_RSRC1 */
#define AMD_RSRC1_VGPRS ((amd_field){"VGPRS", 0, 6})
#define AMD_RSRC1_SGPRS ((amd_field){"SGPRS", 6, 4})
#define AMD_RSRC1_PRIV ((amd_field){"PRIV", 20, 1})
#define AMD_RSRC1_WGP_MODE ((amd_field){"WGP_MODE", 29, 1}) /* gfx10+ */
/* COMPUTE_PGM_RSRC2 */
#define AMD_RSRC2_SCRATCH_EN ((amd_field){"SCRATCH_EN", 0, 1})
#define AMD_RSRC2_USER_SGPR ((amd_field){"USER_SGPR", 1, 5})

/* ** the HDP flush handshake (amdgpu gfx_v9_0/gfx_v11_0 ring_emit_hdp_flush):
 * a compute ring writes its one client bit to GPU_HDP_FLUSH_REQ and waits
 * until that bit of GPU_HDP_FLUSH_DONE equals it. Client bits: CP0 bit 0
 * (gfx), CP2 << pipe for MEC1 (nbio_v7_4.c etc. hdp_flush_reg
 * ref_and_mask_cp2 = GPU_HDP_FLUSH_DONE__CP2_MASK). User queues run on
 * MEC1; the pipe is KFD's choice, so hcq uses pipe 0's bit: the flush is
 * the HDP's, whichever client asks. */
#define AMD_HDP_FLUSH_CP2 (1u << 2)
#define AMD_HDP_FLUSH_MEC1_BITS (0xFu << 2) /* CP2..CP5: MEC1 pipes 0..3 */

/* ** buffer resource descriptors (V#), word 3: the scratch buffer the
 * PRIVATE_SEGMENT_BUFFER user SGPRs hold. gfx9's layout (ROCR
 * src/core/inc/registers.h SQ_BUF_RSRC_WORD3, filled as amd_aql_queue.cpp
 * FillBufRsrcWord3 does) differs from gfx10/11's (FORMAT replaces
 * NUM_FORMAT/DATA_FORMAT, OOB_SELECT, RESOURCE_LEVEL). */
#define AMD_BUF3_DST_SEL_X ((amd_field){"DST_SEL_X", 0, 3})
#define AMD_BUF3_DST_SEL_Y ((amd_field){"DST_SEL_Y", 3, 3})
#define AMD_BUF3_DST_SEL_Z ((amd_field){"DST_SEL_Z", 6, 3})
#define AMD_BUF3_DST_SEL_W ((amd_field){"DST_SEL_W", 9, 3})
#define AMD_BUF3_GFX9_NUM_FORMAT ((amd_field){"NUM_FORMAT", 12, 3})
#define AMD_BUF3_GFX9_DATA_FORMAT ((amd_field){"DATA_FORMAT", 15, 4})
#define AMD_BUF3_GFX9_ELEMENT_SIZE ((amd_field){"ELEMENT_SIZE", 19, 2})
#define AMD_BUF3_GFX9_INDEX_STRIDE ((amd_field){"INDEX_STRIDE", 21, 2})
#define AMD_BUF3_ADD_TID_ENABLE ((amd_field){"ADD_TID_ENABLE", 23, 1})
#define AMD_BUF3_TYPE ((amd_field){"TYPE", 30, 2})
enum {
    AMD_SQ_SEL_X = 4, AMD_SQ_SEL_Y = 5, AMD_SQ_SEL_Z = 6, AMD_SQ_SEL_W = 7,
    AMD_BUF_NUM_FORMAT_UINT = 4, /* gfx9 */
    AMD_BUF_DATA_FORMAT_32 = 4,  /* gfx9 */
    AMD_BUF_ELEMENT_SIZE_4 = 1,  /* gfx9: 4 bytes */
    AMD_BUF_INDEX_STRIDE_64 = 3, /* gfx9: 64 (one per wave64 lane) */
};
/* The four words of the scratch buffer resource at va, swizzled, for the
 * family (gfx9: ROCR's; gfx11: tinygrad's 0x20c14000, which runs there). */
void amd_scratch_srd(amd_family fam, uint64_t va, uint32_t out[4]);
#define AMD_RSRC2_TRAP_PRESENT ((amd_field){"TRAP_PRESENT", 6, 1})
#define AMD_RSRC2_TGID_X_EN ((amd_field){"TGID_X_EN", 7, 1})
#define AMD_RSRC2_TGID_Y_EN ((amd_field){"TGID_Y_EN", 8, 1})
#define AMD_RSRC2_TGID_Z_EN ((amd_field){"TGID_Z_EN", 9, 1})
#define AMD_RSRC2_TG_SIZE_EN ((amd_field){"TG_SIZE_EN", 10, 1})
#define AMD_RSRC2_TIDIG_COMP_CNT ((amd_field){"TIDIG_COMP_CNT", 11, 2})
#define AMD_RSRC2_LDS_SIZE ((amd_field){"LDS_SIZE", 15, 9}) /* 512-byte blocks (128 dwords) */
#define AMD_LDS_BLOCK_BYTES 512u
/* COMPUTE_DISPATCH_INITIATOR */
#define AMD_INIT_COMPUTE_SHADER_EN ((amd_field){"COMPUTE_SHADER_EN", 0, 1})
#define AMD_INIT_PARTIAL_TG_EN ((amd_field){"PARTIAL_TG_EN", 1, 1})
#define AMD_INIT_FORCE_START_AT_000 ((amd_field){"FORCE_START_AT_000", 2, 1})
#define AMD_INIT_ORDER_MODE ((amd_field){"ORDER_MODE", 6, 1})
#define AMD_INIT_CS_W32_EN ((amd_field){"CS_W32_EN", 15, 1}) /* gfx10+ */
/* COMPUTE_TMPRING_SIZE: WAVESIZE is 15 bits on gfx11, 13 on gfx9 */
#define AMD_TMPRING_WAVES ((amd_field){"WAVES", 0, 12})
#define AMD_TMPRING_WAVESIZE_GFX11 ((amd_field){"WAVESIZE", 12, 15})
#define AMD_TMPRING_WAVESIZE_GFX9 ((amd_field){"WAVESIZE", 12, 13})

/* ** cache control bits: compiler/amd_chips.h (the chip rows use them) */

/* ** field lists for decoders: every field of a register or packet dword
 * hcq knows, in bit order, per family (COMPUTE_PGM_RSRC1/2/3 as LLVM's
 * llvm/include/llvm/Support/AMDHSAKernelDescriptor.h lays them out:
 * RSRC1 PRIORITY 11:10, FLOAT_ROUND_MODE_32 13:12, ..._16_64 15:14,
 * FLOAT_DENORM_MODE_32 17:16, ..._16_64 19:18, DX10_CLAMP 21, DEBUG_MODE 22,
 * IEEE_MODE 23, BULKY 24, CDBG_USER 25, FP16_OVFL 26, MEM_ORDERED 30,
 * FWD_PROGRESS 31; RSRC3 gfx90a/gfx942 ACCUM_OFFSET 5:0, TG_SPLIT 16;
 * gfx10+ SHARED_VGPR_COUNT 3:0, INST_PREF_SIZE 9:4, TRAP_ON_START 10,
 * TRAP_ON_END 11, IMAGE_OP 31; RELEASE_MEM and ACQUIRE_MEM cache bits from
 * amdgpu's soc15d.h and nvd.h). NULL when hcq knows none for it. */
typedef struct amd_fields {
    const amd_field *f;
    uint32_t n;
} amd_fields;
/* the fields of SH register off (absolute) */
amd_fields amd_reg_fields(amd_family fam, uint32_t off);
/* RELEASE_MEM's event dword (DW1), ACQUIRE_MEM's cache control (GCR_CNTL
 * on gfx11, CP_COHER_CNTL on gfx9), SDMA GCR_REQ's GCR_CNTL */
amd_fields amd_release_event_fields(amd_family fam);
amd_fields amd_acquire_cntl_fields(amd_family fam);
/* names of EVENT_TYPE values (CS_PARTIAL_FLUSH, CACHE_FLUSH_AND_INV_TS_EVENT,
 * ...), NULL when hcq does not know it */
const char *amd_event_name(uint32_t type);

/* ** the targets: the rows of the AMD chip table (compiler/amd_chips.h)
 * hcq drives, with their encoder facts */
typedef amd_chip amd_arch;
/* The arch for a KFD gfx_target_version (110000) or a name ("gfx942"):
 * a chip hcq drives, else NULL. */
const amd_arch *amd_arch_by_version(uint32_t gfx_version);
const amd_arch *amd_arch_by_name(const char *name);

static inline uint32_t amd_reg_off(const amd_arch *a, amd_reg r) { return amd_regs[r].off[a->family]; }

#endif
