/* The AMD register and target tables (see amd_regs.h for the sources). */
#include "drivers/amd/amd_regs.h"
#include "drivers/amd/amd_pm4.h"
#include "drivers/amd/amd_sdma.h"

#include <stdio.h>
#include <string.h>

#define SH(o) (0x2C00u + (o))
#define BOTH(o) {SH(o), SH(o)}

const amd_reg_info amd_regs[AMD_REG_COUNT] = {
    /* {gfx9, gfx11} */
    [AMD_REG_DISPATCH_INITIATOR] = {"COMPUTE_DISPATCH_INITIATOR", BOTH(0x200)},
    [AMD_REG_DIM_X] = {"COMPUTE_DIM_X", BOTH(0x201)},
    [AMD_REG_DIM_Y] = {"COMPUTE_DIM_Y", BOTH(0x202)},
    [AMD_REG_DIM_Z] = {"COMPUTE_DIM_Z", BOTH(0x203)},
    [AMD_REG_START_X] = {"COMPUTE_START_X", BOTH(0x204)},
    [AMD_REG_START_Y] = {"COMPUTE_START_Y", BOTH(0x205)},
    [AMD_REG_START_Z] = {"COMPUTE_START_Z", BOTH(0x206)},
    [AMD_REG_NUM_THREAD_X] = {"COMPUTE_NUM_THREAD_X", BOTH(0x207)},
    [AMD_REG_NUM_THREAD_Y] = {"COMPUTE_NUM_THREAD_Y", BOTH(0x208)},
    [AMD_REG_NUM_THREAD_Z] = {"COMPUTE_NUM_THREAD_Z", BOTH(0x209)},
    [AMD_REG_PIPELINESTAT_ENABLE] = {"COMPUTE_PIPELINESTAT_ENABLE", BOTH(0x20A)},
    [AMD_REG_PERFCOUNT_ENABLE] = {"COMPUTE_PERFCOUNT_ENABLE", BOTH(0x20B)},
    [AMD_REG_PGM_LO] = {"COMPUTE_PGM_LO", BOTH(0x20C)},
    [AMD_REG_PGM_HI] = {"COMPUTE_PGM_HI", BOTH(0x20D)},
    [AMD_REG_DISPATCH_PKT_ADDR_LO] = {"COMPUTE_DISPATCH_PKT_ADDR_LO", BOTH(0x20E)},
    [AMD_REG_DISPATCH_PKT_ADDR_HI] = {"COMPUTE_DISPATCH_PKT_ADDR_HI", BOTH(0x20F)},
    [AMD_REG_DISPATCH_SCRATCH_BASE_LO] = {"COMPUTE_DISPATCH_SCRATCH_BASE_LO", BOTH(0x210)},
    [AMD_REG_DISPATCH_SCRATCH_BASE_HI] = {"COMPUTE_DISPATCH_SCRATCH_BASE_HI", BOTH(0x211)},
    [AMD_REG_PGM_RSRC1] = {"COMPUTE_PGM_RSRC1", BOTH(0x212)},
    [AMD_REG_PGM_RSRC2] = {"COMPUTE_PGM_RSRC2", BOTH(0x213)},
    [AMD_REG_RESOURCE_LIMITS] = {"COMPUTE_RESOURCE_LIMITS", BOTH(0x215)},
    [AMD_REG_TMPRING_SIZE] = {"COMPUTE_TMPRING_SIZE", BOTH(0x218)},
    [AMD_REG_RESTART_X] = {"COMPUTE_RESTART_X", BOTH(0x21B)},
    [AMD_REG_RESTART_Y] = {"COMPUTE_RESTART_Y", BOTH(0x21C)},
    [AMD_REG_RESTART_Z] = {"COMPUTE_RESTART_Z", BOTH(0x21D)},
    [AMD_REG_THREAD_TRACE_ENABLE] = {"COMPUTE_THREAD_TRACE_ENABLE", BOTH(0x21E)},
    [AMD_REG_CURRENT_LOGIC_XCC_ID] = {"COMPUTE_CURRENT_LOGIC_XCC_ID", {SH(0x225), 0}},
    [AMD_REG_TG_CHUNK_SIZE] = {"COMPUTE_TG_CHUNK_SIZE", {SH(0x227), 0}},
    /* on gfx11, 0x22D is COMPUTE_STATIC_THREAD_MGMT_SE6: writing RSRC3 there
     * would silently change the CU mask */
    [AMD_REG_PGM_RSRC3] = {"COMPUTE_PGM_RSRC3", {SH(0x22D), SH(0x228)}},
    [AMD_REG_USER_DATA_0] = {"COMPUTE_USER_DATA_0", BOTH(0x240)},
};

const char *amd_reg_name(amd_family fam, uint32_t off)
{
    static const char *user[AMD_USER_DATA_COUNT] = {
        "COMPUTE_USER_DATA_0",  "COMPUTE_USER_DATA_1",  "COMPUTE_USER_DATA_2",  "COMPUTE_USER_DATA_3",
        "COMPUTE_USER_DATA_4",  "COMPUTE_USER_DATA_5",  "COMPUTE_USER_DATA_6",  "COMPUTE_USER_DATA_7",
        "COMPUTE_USER_DATA_8",  "COMPUTE_USER_DATA_9",  "COMPUTE_USER_DATA_10", "COMPUTE_USER_DATA_11",
        "COMPUTE_USER_DATA_12", "COMPUTE_USER_DATA_13", "COMPUTE_USER_DATA_14", "COMPUTE_USER_DATA_15"};
    uint32_t u0 = amd_regs[AMD_REG_USER_DATA_0].off[fam];
    if (off >= u0 && off < u0 + AMD_USER_DATA_COUNT) return user[off - u0];
    for (unsigned i = 0; i < AMD_REG_COUNT; i++)
        if (amd_regs[i].off[fam] == off) return amd_regs[i].name;
    return NULL;
}

/* ** field lists (amd_regs.h: amd_fields) */
#define FL(a) ((amd_fields){(a), sizeof(a) / sizeof *(a)})
static const amd_field rsrc1_gfx9[] = {
    AMD_RSRC1_VGPRS, AMD_RSRC1_SGPRS, {"PRIORITY", 10, 2}, {"FLOAT_ROUND_MODE_32", 12, 2},
    {"FLOAT_ROUND_MODE_16_64", 14, 2}, {"FLOAT_DENORM_MODE_32", 16, 2}, {"FLOAT_DENORM_MODE_16_64", 18, 2},
    AMD_RSRC1_PRIV, {"DX10_CLAMP", 21, 1}, {"DEBUG_MODE", 22, 1}, {"IEEE_MODE", 23, 1}, {"BULKY", 24, 1},
    {"CDBG_USER", 25, 1}, {"FP16_OVFL", 26, 1}};
static const amd_field rsrc1_gfx11[] = {
    AMD_RSRC1_VGPRS, AMD_RSRC1_SGPRS, {"PRIORITY", 10, 2}, {"FLOAT_ROUND_MODE_32", 12, 2},
    {"FLOAT_ROUND_MODE_16_64", 14, 2}, {"FLOAT_DENORM_MODE_32", 16, 2}, {"FLOAT_DENORM_MODE_16_64", 18, 2},
    AMD_RSRC1_PRIV, {"DX10_CLAMP", 21, 1}, {"DEBUG_MODE", 22, 1}, {"IEEE_MODE", 23, 1}, {"BULKY", 24, 1},
    {"CDBG_USER", 25, 1}, {"FP16_OVFL", 26, 1}, AMD_RSRC1_WGP_MODE, {"MEM_ORDERED", 30, 1}, {"FWD_PROGRESS", 31, 1}};
static const amd_field rsrc2[] = {AMD_RSRC2_SCRATCH_EN, AMD_RSRC2_USER_SGPR,       AMD_RSRC2_TRAP_PRESENT,
                                  AMD_RSRC2_TGID_X_EN,  AMD_RSRC2_TGID_Y_EN,       AMD_RSRC2_TGID_Z_EN,
                                  AMD_RSRC2_TG_SIZE_EN, AMD_RSRC2_TIDIG_COMP_CNT, {"EXCP_EN_MSB", 13, 2},
                                  AMD_RSRC2_LDS_SIZE,   {"EXCP_EN", 24, 7}};
static const amd_field rsrc3_gfx9[] = {{"ACCUM_OFFSET", 0, 6}, {"TG_SPLIT", 16, 1}};
static const amd_field rsrc3_gfx11[] = {{"SHARED_VGPR_COUNT", 0, 4}, {"INST_PREF_SIZE", 4, 6}, {"TRAP_ON_START", 10, 1},
                                        {"TRAP_ON_END", 11, 1}, {"IMAGE_OP", 31, 1}};
static const amd_field initiator[] = {AMD_INIT_COMPUTE_SHADER_EN, AMD_INIT_PARTIAL_TG_EN, AMD_INIT_FORCE_START_AT_000,
                                      AMD_INIT_ORDER_MODE, AMD_INIT_CS_W32_EN};
static const amd_field tmpring_gfx9[] = {AMD_TMPRING_WAVES, AMD_TMPRING_WAVESIZE_GFX9};
static const amd_field tmpring_gfx11[] = {AMD_TMPRING_WAVES, AMD_TMPRING_WAVESIZE_GFX11};

amd_fields amd_reg_fields(amd_family fam, uint32_t off)
{
    bool g11 = fam == AMD_FAMILY_GFX11;
    if (off == amd_regs[AMD_REG_PGM_RSRC1].off[fam]) return g11 ? FL(rsrc1_gfx11) : FL(rsrc1_gfx9);
    if (off == amd_regs[AMD_REG_PGM_RSRC2].off[fam]) return FL(rsrc2);
    if (off == amd_regs[AMD_REG_PGM_RSRC3].off[fam]) return g11 ? FL(rsrc3_gfx11) : FL(rsrc3_gfx9);
    if (off == amd_regs[AMD_REG_DISPATCH_INITIATOR].off[fam]) return FL(initiator);
    if (off == amd_regs[AMD_REG_TMPRING_SIZE].off[fam]) return g11 ? FL(tmpring_gfx11) : FL(tmpring_gfx9);
    return (amd_fields){NULL, 0};
}

/* RELEASE_MEM DW1: the event, then the cache actions; gfx10+ (nvd.h)
 * names the GCR bits, gfx9 (soc15d.h) the EOP_*_ACTION_EN ones */
static const amd_field rel_gfx11[] = {{"EVENT_INDEX", 8, 4}, {"GLM_WB", 12, 1},  {"GLM_INV", 13, 1},
                                      {"GLV_INV", 14, 1},     {"GL1_INV", 15, 1}, {"GL2_INV", 20, 1},
                                      {"GL2_WB", 21, 1},      {"SEQ", 22, 1},     {"CACHE_POLICY", 25, 2}};
static const amd_field rel_gfx9[] = {
    {"EVENT_INDEX", 8, 4},   {"TCL1_VOL_ACTION_EN", 12, 1}, {"TC_VOL_ACTION_EN", 13, 1}, {"TC_WB_ACTION_EN", 15, 1},
    {"TCL1_ACTION_EN", 16, 1}, {"TC_ACTION_EN", 17, 1},   {"TC_NC_ACTION_EN", 19, 1},  {"TC_MD_ACTION_EN", 21, 1},
    {"CACHE_POLICY", 25, 2}, {"EXEC", 28, 1}};
/* ACQUIRE_MEM: GCR_CNTL (gfx10+), CP_COHER_CNTL (gfx9) */
static const amd_field gcr[] = {{"GLI_INV", 0, 2},  {"GL1_RANGE", 2, 2},  {"GLM_WB", 4, 1},     {"GLM_INV", 5, 1},
                                {"GLK_WB", 6, 1},   {"GLK_INV", 7, 1},    {"GLV_INV", 8, 1},    {"GL1_INV", 9, 1},
                                {"GL2_US", 10, 1},  {"GL2_RANGE", 11, 2}, {"GL2_DISCARD", 13, 1}, {"GL2_INV", 14, 1},
                                {"GL2_WB", 15, 1},  {"SEQ", 16, 2},       {"RANGE_IS_PA", 18, 1}};
static const amd_field coher[] = {{"TC_WB_ACTION_ENA", 18, 1},    {"TCL1_ACTION_ENA", 22, 1},
                                  {"TC_ACTION_ENA", 23, 1},       {"SH_KCACHE_ACTION_ENA", 27, 1},
                                  {"SH_ICACHE_ACTION_ENA", 29, 1}};

amd_fields amd_release_event_fields(amd_family fam)
{
    return fam == AMD_FAMILY_GFX11 ? FL(rel_gfx11) : FL(rel_gfx9);
}

amd_fields amd_acquire_cntl_fields(amd_family fam) { return fam == AMD_FAMILY_GFX11 ? FL(gcr) : FL(coher); }

const char *amd_event_name(uint32_t type)
{
    switch (type) {
    case 0x07: return "CS_PARTIAL_FLUSH";
    case 0x0F: return "VS_PARTIAL_FLUSH";
    case 0x10: return "PS_PARTIAL_FLUSH";
    case 0x14: return "CACHE_FLUSH_AND_INV_TS_EVENT";
    case 0x16: return "CACHE_FLUSH_AND_INV_EVENT";
    default: return NULL;
    }
}

const amd_arch *amd_arch_by_version(uint32_t v)
{
    const amd_chip *c = amd_chip_by_version(v);
    return c && c->family != AMD_FAMILY_NONE ? c : NULL;
}

const amd_arch *amd_arch_by_name(const char *name)
{
    const amd_chip *c = amd_chip_by_name(name);
    return c && c->family != AMD_FAMILY_NONE ? c : NULL;
}

const char *pm4_op_name(uint32_t op)
{
    switch (op) {
    case 0x10: return "NOP";
    case 0x15: return "DISPATCH_DIRECT";
    case 0x23: return "PRED_EXEC";
    case 0x3C: return "WAIT_REG_MEM";
    case 0x3F: return "INDIRECT_BUFFER";
    case 0x46: return "EVENT_WRITE";
    case 0x49: return "RELEASE_MEM";
    case 0x58: return "ACQUIRE_MEM";
    case 0x76: return "SET_SH_REG";
    case 0x93: return "WAIT_REG_MEM64";
    }
    return NULL;
}

void amd_scratch_srd(amd_family fam, uint64_t va, uint32_t out[4])
{
    out[0] = (uint32_t)va;
    out[1] = ((uint32_t)(va >> 32) & 0xffffu) | 1u << 31; /* BASE_ADDRESS_HI 15:0, SWIZZLE_ENABLE 31 */
    out[2] = 0xffffffffu;                                  /* NUM_RECORDS: the whole slice */
    if (fam == AMD_FAMILY_GFX9)
        out[3] = amd_fset(AMD_BUF3_DST_SEL_X, AMD_SQ_SEL_X) | amd_fset(AMD_BUF3_DST_SEL_Y, AMD_SQ_SEL_Y) |
                 amd_fset(AMD_BUF3_DST_SEL_Z, AMD_SQ_SEL_Z) | amd_fset(AMD_BUF3_DST_SEL_W, AMD_SQ_SEL_W) |
                 amd_fset(AMD_BUF3_GFX9_NUM_FORMAT, AMD_BUF_NUM_FORMAT_UINT) |
                 amd_fset(AMD_BUF3_GFX9_DATA_FORMAT, AMD_BUF_DATA_FORMAT_32) |
                 amd_fset(AMD_BUF3_GFX9_ELEMENT_SIZE, AMD_BUF_ELEMENT_SIZE_4) |
                 amd_fset(AMD_BUF3_GFX9_INDEX_STRIDE, AMD_BUF_INDEX_STRIDE_64) | amd_fset(AMD_BUF3_ADD_TID_ENABLE, 1) |
                 amd_fset(AMD_BUF3_TYPE, 0);
    else
        out[3] = 0x20c14000u;
}

bool pm4_op_exists(amd_family fam, uint32_t op)
{
    switch (op) {
    case PM4_NOP: case PM4_DISPATCH_DIRECT: case PM4_PRED_EXEC: case PM4_WAIT_REG_MEM: case PM4_INDIRECT_BUFFER:
    case PM4_EVENT_WRITE: case PM4_RELEASE_MEM: case PM4_ACQUIRE_MEM: case PM4_SET_SH_REG:
        return true; /* soc15d.h and nvd.h both */
    case PM4_WAIT_REG_MEM64: return fam == AMD_FAMILY_GFX11;
    }
    return false;
}

const char *sdma_op_name(uint32_t dw0)
{
    switch (dw0 & 0xff) {
    case 0: return "NOP";
    case 1: return (dw0 >> 8 & 0xff) == 0 ? "COPY_LINEAR" : NULL;
    case 5: return "FENCE";
    case 6: return "TRAP";
    case 8: return "POLL_REGMEM";
    case 10: return (dw0 >> 8 & 0xff) == 0 ? "ATOMIC" : NULL;
    case 11: return (dw0 >> 8 & 0xff) == 0 ? "CONST_FILL" : NULL;
    case 13: return (dw0 >> 8 & 0xff) == 2 ? "TIMESTAMP" : NULL;
    case 17: return "GCR_REQ";
    }
    return NULL;
}
