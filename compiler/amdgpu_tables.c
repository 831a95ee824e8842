/* The AMDGPU opcode tables: each encoding's opcode field -> amdi_op, per
 * family. Hardware facts, from llvm-project llvm/lib/Target/AMDGPU/
 * (SOPInstructions.td, SMInstructions.td, VOP1Instructions.td,
 * VOP2Instructions.td, VOPCInstructions.td, VOP3Instructions.td,
 * VOP3PInstructions.td, VOPDInstructions.td, DSInstructions.td,
 * FLATInstructions.td, BUFInstructions.td: the *_Real_vi / *_gfx9 and
 * *_gfx11 records) and AMD's ISA reference guides ("AMD Instinct MI200
 * (CDNA2) ISA" and "MI300 (CDNA3) ISA", chapter "Microcode Formats"; "RDNA3
 * ISA", chapter "Microcode Formats"). The VOP3 encoding's opcode space holds
 * the VOPC, VOP2 and VOP1 ops at fixed bases (gfx9: 0x000, 0x100, 0x140;
 * gfx11: 0x000, 0x100, 0x180), which the decoder adds; the vop3 tables
 * below list the VOP3-only ops. tests/unit/test_amdgpu_decode.c checks
 * these tables against llvm-objdump's disassembly of real code objects. */
#include "compiler/amdgpu_isa.h"

#define O(x) AMDI_##x
#define N(a) (uint16_t)(sizeof(a) / sizeof((a)[0]))

/* ** compares: the conditions in opcode order from a base */
#define CMPF(b, T)                                                                                              \
    [(b) + 0x0] = O(V_CMP_F_##T), [(b) + 0x1] = O(V_CMP_LT_##T), [(b) + 0x2] = O(V_CMP_EQ_##T),              \
    [(b) + 0x3] = O(V_CMP_LE_##T), [(b) + 0x4] = O(V_CMP_GT_##T), [(b) + 0x5] = O(V_CMP_LG_##T),             \
    [(b) + 0x6] = O(V_CMP_GE_##T), [(b) + 0x7] = O(V_CMP_O_##T), [(b) + 0x8] = O(V_CMP_U_##T),               \
    [(b) + 0x9] = O(V_CMP_NGE_##T), [(b) + 0xa] = O(V_CMP_NLG_##T), [(b) + 0xb] = O(V_CMP_NGT_##T),          \
    [(b) + 0xc] = O(V_CMP_NLE_##T), [(b) + 0xd] = O(V_CMP_NEQ_##T), [(b) + 0xe] = O(V_CMP_NLT_##T),          \
    [(b) + 0xf] = O(V_CMP_TRU_##T)
#define CMPXF(b, T)                                                                                             \
    [(b) + 0x0] = O(V_CMPX_F_##T), [(b) + 0x1] = O(V_CMPX_LT_##T), [(b) + 0x2] = O(V_CMPX_EQ_##T),           \
    [(b) + 0x3] = O(V_CMPX_LE_##T), [(b) + 0x4] = O(V_CMPX_GT_##T), [(b) + 0x5] = O(V_CMPX_LG_##T),          \
    [(b) + 0x6] = O(V_CMPX_GE_##T), [(b) + 0x7] = O(V_CMPX_O_##T), [(b) + 0x8] = O(V_CMPX_U_##T),            \
    [(b) + 0x9] = O(V_CMPX_NGE_##T), [(b) + 0xa] = O(V_CMPX_NLG_##T), [(b) + 0xb] = O(V_CMPX_NGT_##T),       \
    [(b) + 0xc] = O(V_CMPX_NLE_##T), [(b) + 0xd] = O(V_CMPX_NEQ_##T), [(b) + 0xe] = O(V_CMPX_NLT_##T),       \
    [(b) + 0xf] = O(V_CMPX_TRU_##T)
#define CMPI(b, T)                                                                                              \
    [(b) + 0] = O(V_CMP_F_##T), [(b) + 1] = O(V_CMP_LT_##T), [(b) + 2] = O(V_CMP_EQ_##T),                    \
    [(b) + 3] = O(V_CMP_LE_##T), [(b) + 4] = O(V_CMP_GT_##T), [(b) + 5] = O(V_CMP_NE_##T),                   \
    [(b) + 6] = O(V_CMP_GE_##T), [(b) + 7] = O(V_CMP_T_##T)
/* gfx11's 16-bit integer compares: LT..GE only (no F, T) */
#define CMPI6(b, T)                                                                                             \
    [(b) + 1] = O(V_CMP_LT_##T), [(b) + 2] = O(V_CMP_EQ_##T), [(b) + 3] = O(V_CMP_LE_##T),                    \
    [(b) + 4] = O(V_CMP_GT_##T), [(b) + 5] = O(V_CMP_NE_##T), [(b) + 6] = O(V_CMP_GE_##T)
#define CMPXI6(b, T)                                                                                            \
    [(b) + 1] = O(V_CMPX_LT_##T), [(b) + 2] = O(V_CMPX_EQ_##T), [(b) + 3] = O(V_CMPX_LE_##T),                 \
    [(b) + 4] = O(V_CMPX_GT_##T), [(b) + 5] = O(V_CMPX_NE_##T), [(b) + 6] = O(V_CMPX_GE_##T)
#define CMPXI(b, T)                                                                                             \
    [(b) + 0] = O(V_CMPX_F_##T), [(b) + 1] = O(V_CMPX_LT_##T), [(b) + 2] = O(V_CMPX_EQ_##T),                 \
    [(b) + 3] = O(V_CMPX_LE_##T), [(b) + 4] = O(V_CMPX_GT_##T), [(b) + 5] = O(V_CMPX_NE_##T),                \
    [(b) + 6] = O(V_CMPX_GE_##T), [(b) + 7] = O(V_CMPX_T_##T)

/* ================================ gfx9 (gfx90a, gfx940-942) ========== */
static const uint16_t g9_sop1[] = {
    [0x00] = O(S_MOV_B32), [0x01] = O(S_MOV_B64), [0x02] = O(S_CMOV_B32), [0x03] = O(S_CMOV_B64),
    [0x04] = O(S_NOT_B32), [0x05] = O(S_NOT_B64), [0x06] = O(S_WQM_B32), [0x07] = O(S_WQM_B64),
    [0x08] = O(S_BREV_B32), [0x09] = O(S_BREV_B64), [0x0a] = O(S_BCNT0_I32_B32), [0x0b] = O(S_BCNT0_I32_B64),
    [0x0c] = O(S_BCNT1_I32_B32), [0x0d] = O(S_BCNT1_I32_B64), [0x10] = O(S_FF1_I32_B32), [0x11] = O(S_FF1_I32_B64),
    [0x12] = O(S_FLBIT_I32_B32), [0x13] = O(S_FLBIT_I32_B64), [0x14] = O(S_FLBIT_I32), [0x16] = O(S_SEXT_I32_I8),
    [0x17] = O(S_SEXT_I32_I16), [0x18] = O(S_BITSET0_B32), [0x19] = O(S_BITSET0_B64), [0x1a] = O(S_BITSET1_B32),
    [0x1b] = O(S_BITSET1_B64), [0x1c] = O(S_GETPC_B64), [0x1d] = O(S_SETPC_B64), [0x1e] = O(S_SWAPPC_B64),
    [0x20] = O(S_AND_SAVEEXEC_B64), [0x21] = O(S_OR_SAVEEXEC_B64), [0x22] = O(S_XOR_SAVEEXEC_B64),
    [0x23] = O(S_ANDN2_SAVEEXEC_B64), [0x24] = O(S_ORN2_SAVEEXEC_B64), [0x30] = O(S_ABS_I32),
    [0x33] = O(S_ANDN1_SAVEEXEC_B64), [0x36] = O(S_ANDN2_WREXEC_B64),
};
static const uint16_t g9_sop2[] = {
    [0x00] = O(S_ADD_U32), [0x01] = O(S_SUB_U32), [0x02] = O(S_ADD_I32), [0x03] = O(S_SUB_I32),
    [0x04] = O(S_ADDC_U32), [0x05] = O(S_SUBB_U32), [0x06] = O(S_MIN_I32), [0x07] = O(S_MIN_U32),
    [0x08] = O(S_MAX_I32), [0x09] = O(S_MAX_U32), [0x0a] = O(S_CSELECT_B32), [0x0b] = O(S_CSELECT_B64),
    [0x0c] = O(S_AND_B32), [0x0d] = O(S_AND_B64), [0x0e] = O(S_OR_B32), [0x0f] = O(S_OR_B64),
    [0x10] = O(S_XOR_B32), [0x11] = O(S_XOR_B64), [0x12] = O(S_ANDN2_B32), [0x13] = O(S_ANDN2_B64),
    [0x14] = O(S_ORN2_B32), [0x15] = O(S_ORN2_B64), [0x16] = O(S_NAND_B32), [0x17] = O(S_NAND_B64),
    [0x18] = O(S_NOR_B32), [0x19] = O(S_NOR_B64), [0x1a] = O(S_XNOR_B32), [0x1b] = O(S_XNOR_B64),
    [0x1c] = O(S_LSHL_B32), [0x1d] = O(S_LSHL_B64), [0x1e] = O(S_LSHR_B32), [0x1f] = O(S_LSHR_B64),
    [0x20] = O(S_ASHR_I32), [0x21] = O(S_ASHR_I64), [0x22] = O(S_BFM_B32), [0x23] = O(S_BFM_B64),
    [0x24] = O(S_MUL_I32), [0x25] = O(S_BFE_U32), [0x26] = O(S_BFE_I32), [0x27] = O(S_BFE_U64),
    [0x28] = O(S_BFE_I64), [0x2a] = O(S_ABSDIFF_I32), [0x2c] = O(S_MUL_HI_U32), [0x2d] = O(S_MUL_HI_I32),
    [0x2e] = O(S_LSHL1_ADD_U32), [0x2f] = O(S_LSHL2_ADD_U32), [0x30] = O(S_LSHL3_ADD_U32),
    [0x31] = O(S_LSHL4_ADD_U32), [0x32] = O(S_PACK_LL_B32_B16), [0x33] = O(S_PACK_LH_B32_B16),
    [0x34] = O(S_PACK_HH_B32_B16),
};
static const uint16_t g9_sopk[] = {
    [0x00] = O(S_MOVK_I32), [0x01] = O(S_CMOVK_I32), [0x02] = O(S_CMPK_EQ_I32), [0x03] = O(S_CMPK_LG_I32),
    [0x04] = O(S_CMPK_GT_I32), [0x05] = O(S_CMPK_GE_I32), [0x06] = O(S_CMPK_LT_I32), [0x07] = O(S_CMPK_LE_I32),
    [0x08] = O(S_CMPK_EQ_U32), [0x09] = O(S_CMPK_LG_U32), [0x0a] = O(S_CMPK_GT_U32), [0x0b] = O(S_CMPK_GE_U32),
    [0x0c] = O(S_CMPK_LT_U32), [0x0d] = O(S_CMPK_LE_U32), [0x0e] = O(S_ADDK_I32), [0x0f] = O(S_MULK_I32),
    [0x11] = O(S_GETREG_B32), [0x12] = O(S_SETREG_B32), [0x14] = O(S_SETREG_IMM32_B32), [0x15] = O(S_CALL_B64),
};
static const uint16_t g9_sopc[] = {
    [0x00] = O(S_CMP_EQ_I32), [0x01] = O(S_CMP_LG_I32), [0x02] = O(S_CMP_GT_I32), [0x03] = O(S_CMP_GE_I32),
    [0x04] = O(S_CMP_LT_I32), [0x05] = O(S_CMP_LE_I32), [0x06] = O(S_CMP_EQ_U32), [0x07] = O(S_CMP_LG_U32),
    [0x08] = O(S_CMP_GT_U32), [0x09] = O(S_CMP_GE_U32), [0x0a] = O(S_CMP_LT_U32), [0x0b] = O(S_CMP_LE_U32),
    [0x0c] = O(S_BITCMP0_B32), [0x0d] = O(S_BITCMP1_B32), [0x0e] = O(S_BITCMP0_B64), [0x0f] = O(S_BITCMP1_B64),
    [0x12] = O(S_CMP_EQ_U64), [0x13] = O(S_CMP_LG_U64),
};
static const uint16_t g9_sopp[] = {
    [0x00] = O(S_NOP), [0x01] = O(S_ENDPGM), [0x02] = O(S_BRANCH), [0x04] = O(S_CBRANCH_SCC0),
    [0x05] = O(S_CBRANCH_SCC1), [0x06] = O(S_CBRANCH_VCCZ), [0x07] = O(S_CBRANCH_VCCNZ),
    [0x08] = O(S_CBRANCH_EXECZ), [0x09] = O(S_CBRANCH_EXECNZ), [0x0a] = O(S_BARRIER), [0x0c] = O(S_WAITCNT),
    [0x0d] = O(S_SETHALT), [0x0e] = O(S_SLEEP), [0x0f] = O(S_SETPRIO), [0x10] = O(S_SENDMSG), [0x12] = O(S_TRAP),
    [0x13] = O(S_ICACHE_INV), [0x1c] = O(S_SET_GPR_IDX_OFF),
};
static const uint16_t g9_smem[] = {
    [0x00] = O(S_LOAD_B32), [0x01] = O(S_LOAD_B64), [0x02] = O(S_LOAD_B128), [0x03] = O(S_LOAD_B256),
    [0x04] = O(S_LOAD_B512), [0x20] = O(S_DCACHE_INV), [0x24] = O(S_MEMTIME), [0x25] = O(S_MEMREALTIME),
};
static const uint16_t g9_vop1[] = {
    [0x00] = O(V_NOP), [0x01] = O(V_MOV_B32), [0x02] = O(V_READFIRSTLANE_B32), [0x03] = O(V_CVT_I32_F64),
    [0x04] = O(V_CVT_F64_I32), [0x05] = O(V_CVT_F32_I32), [0x06] = O(V_CVT_F32_U32), [0x07] = O(V_CVT_U32_F32),
    [0x08] = O(V_CVT_I32_F32), [0x0a] = O(V_CVT_F16_F32), [0x0b] = O(V_CVT_F32_F16), [0x0c] = O(V_CVT_RPI_I32_F32),
    [0x0d] = O(V_CVT_FLR_I32_F32), [0x0f] = O(V_CVT_F32_F64), [0x10] = O(V_CVT_F64_F32),
    [0x11] = O(V_CVT_F32_UBYTE0), [0x12] = O(V_CVT_F32_UBYTE1), [0x13] = O(V_CVT_F32_UBYTE2),
    [0x14] = O(V_CVT_F32_UBYTE3), [0x15] = O(V_CVT_U32_F64), [0x16] = O(V_CVT_F64_U32), [0x17] = O(V_TRUNC_F64),
    [0x18] = O(V_CEIL_F64), [0x19] = O(V_RNDNE_F64), [0x1a] = O(V_FLOOR_F64), [0x1b] = O(V_FRACT_F32),
    [0x1c] = O(V_TRUNC_F32), [0x1d] = O(V_CEIL_F32), [0x1e] = O(V_RNDNE_F32), [0x1f] = O(V_FLOOR_F32),
    [0x20] = O(V_EXP_F32), [0x21] = O(V_LOG_F32), [0x22] = O(V_RCP_F32), [0x23] = O(V_RCP_IFLAG_F32),
    [0x24] = O(V_RSQ_F32), [0x25] = O(V_RCP_F64), [0x26] = O(V_RSQ_F64), [0x27] = O(V_SQRT_F32),
    [0x28] = O(V_SQRT_F64), [0x29] = O(V_SIN_F32), [0x2a] = O(V_COS_F32), [0x2b] = O(V_NOT_B32),
    [0x2c] = O(V_BFREV_B32), [0x2d] = O(V_FFBH_U32), [0x2e] = O(V_FFBL_B32), [0x2f] = O(V_FFBH_I32),
    [0x30] = O(V_FREXP_EXP_I32_F64), [0x31] = O(V_FREXP_MANT_F64), [0x32] = O(V_FRACT_F64),
    [0x33] = O(V_FREXP_EXP_I32_F32), [0x34] = O(V_FREXP_MANT_F32), [0x38] = O(V_MOV_B64),
    [0x39] = O(V_CVT_F16_U16), [0x3a] = O(V_CVT_F16_I16), [0x3b] = O(V_CVT_U16_F16), [0x3c] = O(V_CVT_I16_F16),
    [0x3d] = O(V_RCP_F16), [0x3e] = O(V_SQRT_F16), [0x3f] = O(V_RSQ_F16), [0x40] = O(V_LOG_F16),
    [0x41] = O(V_EXP_F16), [0x44] = O(V_FLOOR_F16), [0x45] = O(V_CEIL_F16), [0x46] = O(V_TRUNC_F16),
    [0x47] = O(V_RNDNE_F16), [0x51] = O(V_SWAP_B32),
};
static const uint16_t g9_vop2[] = {
    [0x00] = O(V_CNDMASK_B32), [0x01] = O(V_ADD_F32), [0x02] = O(V_SUB_F32), [0x03] = O(V_SUBREV_F32),
    [0x04] = O(V_FMAC_F64), [0x05] = O(V_MUL_F32), [0x06] = O(V_MUL_I32_I24), [0x07] = O(V_MUL_HI_I32_I24),
    [0x08] = O(V_MUL_U32_U24), [0x09] = O(V_MUL_HI_U32_U24), [0x0a] = O(V_MIN_F32), [0x0b] = O(V_MAX_F32),
    [0x0c] = O(V_MIN_I32), [0x0d] = O(V_MAX_I32), [0x0e] = O(V_MIN_U32), [0x0f] = O(V_MAX_U32),
    [0x10] = O(V_LSHRREV_B32), [0x11] = O(V_ASHRREV_I32), [0x12] = O(V_LSHLREV_B32), [0x13] = O(V_AND_B32),
    [0x14] = O(V_OR_B32), [0x15] = O(V_XOR_B32), [0x16] = O(V_MAC_F32), [0x17] = O(V_MADMK_F32),
    [0x18] = O(V_MADAK_F32), [0x19] = O(V_ADD_CO_U32), [0x1a] = O(V_SUB_CO_U32), [0x1b] = O(V_SUBREV_CO_U32),
    [0x1c] = O(V_ADDC_CO_U32), [0x1d] = O(V_SUBB_CO_U32), [0x1e] = O(V_SUBBREV_CO_U32), [0x1f] = O(V_ADD_F16),
    [0x20] = O(V_SUB_F16), [0x21] = O(V_SUBREV_F16), [0x22] = O(V_MUL_F16), [0x23] = O(V_MAC_F16),
    [0x26] = O(V_ADD_U16), [0x27] = O(V_SUB_U16), [0x28] = O(V_SUBREV_U16), [0x29] = O(V_MUL_LO_U16),
    [0x2a] = O(V_LSHLREV_B16), [0x2b] = O(V_LSHRREV_B16), [0x2c] = O(V_ASHRREV_I16), [0x2d] = O(V_MAX_F16),
    [0x2e] = O(V_MIN_F16), [0x2f] = O(V_MAX_U16), [0x30] = O(V_MAX_I16), [0x31] = O(V_MIN_U16),
    [0x32] = O(V_MIN_I16), [0x33] = O(V_LDEXP_F16), [0x34] = O(V_ADD_U32), [0x35] = O(V_SUB_U32),
    [0x36] = O(V_SUBREV_U32), [0x3b] = O(V_FMAC_F32), [0x3c] = O(V_PK_FMAC_F16), [0x3d] = O(V_XNOR_B32),
    /* the dot-product accumulators (VOP2Instructions.td VOP2_Real_DOT_ACC_gfx9; gfx90a and gfx940-942 alike) */
    [0x37] = O(V_DOT2C_F32_F16), [0x38] = O(V_DOT2C_I32_I16), [0x39] = O(V_DOT4C_I32_I8), [0x3a] = O(V_DOT8C_I32_I4),
};
static const uint16_t g9_vopc[] = {
    [0x10] = O(V_CMP_CLASS_F32), [0x11] = O(V_CMPX_CLASS_F32), [0x12] = O(V_CMP_CLASS_F64),
    [0x13] = O(V_CMPX_CLASS_F64), [0x14] = O(V_CMP_CLASS_F16), [0x15] = O(V_CMPX_CLASS_F16),
    CMPF(0x20, F16), CMPXF(0x30, F16), CMPF(0x40, F32), CMPXF(0x50, F32), CMPF(0x60, F64), CMPXF(0x70, F64),
    CMPI(0xa0, I16), CMPI(0xa8, U16), CMPXI(0xb0, I16), CMPXI(0xb8, U16),
    CMPI(0xc0, I32), CMPI(0xc8, U32), CMPXI(0xd0, I32), CMPXI(0xd8, U32),
    CMPI(0xe0, I64), CMPI(0xe8, U64), CMPXI(0xf0, I64), CMPXI(0xf8, U64),
};
static const uint16_t g9_vop3[] = {
    [0x1c1] = O(V_MAD_F32), [0x1c2] = O(V_MAD_I32_I24), [0x1c3] = O(V_MAD_U32_U24), [0x1c8] = O(V_BFE_U32),
    [0x1c9] = O(V_BFE_I32), [0x1ca] = O(V_BFI_B32), [0x1cb] = O(V_FMA_F32), [0x1cc] = O(V_FMA_F64),
    [0x1ce] = O(V_ALIGNBIT_B32), [0x1cf] = O(V_ALIGNBYTE_B32), [0x1d0] = O(V_MIN3_F32), [0x1d1] = O(V_MIN3_I32),
    [0x1d2] = O(V_MIN3_U32), [0x1d3] = O(V_MAX3_F32), [0x1d4] = O(V_MAX3_I32), [0x1d5] = O(V_MAX3_U32),
    [0x1d6] = O(V_MED3_F32), [0x1d7] = O(V_MED3_I32), [0x1d8] = O(V_MED3_U32), [0x1dc] = O(V_SAD_U32),
    [0x1de] = O(V_DIV_FIXUP_F32), [0x1df] = O(V_DIV_FIXUP_F64), [0x1e0] = O(V_DIV_SCALE_F32),
    [0x1e1] = O(V_DIV_SCALE_F64), [0x1e2] = O(V_DIV_FMAS_F32), [0x1e3] = O(V_DIV_FMAS_F64),
    [0x1e8] = O(V_MAD_U64_U32), [0x1e9] = O(V_MAD_I64_I32), [0x1ea] = O(V_MAD_LEGACY_F16),
    [0x1eb] = O(V_MAD_LEGACY_U16), [0x1ec] = O(V_MAD_LEGACY_I16), [0x1ed] = O(V_PERM_B32),
    [0x1ee] = O(V_FMA_LEGACY_F16), [0x1f1] = O(V_MAD_U32_U16), [0x1f5] = O(V_MIN3_I16), [0x1f6] = O(V_MIN3_U16),
    [0x1f8] = O(V_MAX3_I16), [0x1f9] = O(V_MAX3_U16), [0x1fb] = O(V_MED3_I16), [0x1fc] = O(V_MED3_U16),
    [0x203] = O(V_MAD_F16),
    [0x1f2] = O(V_MAD_I32_I16), [0x1f3] = O(V_XAD_U32), [0x1f4] = O(V_MIN3_F16), [0x1f7] = O(V_MAX3_F16),
    [0x1fa] = O(V_MED3_F16), [0x1fd] = O(V_LSHL_ADD_U32), [0x1fe] = O(V_ADD_LSHL_U32), [0x1ff] = O(V_ADD3_U32),
    [0x200] = O(V_LSHL_OR_B32), [0x201] = O(V_AND_OR_B32), [0x202] = O(V_OR3_B32), [0x204] = O(V_MAD_U16),
    [0x205] = O(V_MAD_I16), [0x206] = O(V_FMA_F16), [0x207] = O(V_DIV_FIXUP_F16), [0x208] = O(V_LSHL_ADD_U64),
    [0x280] = O(V_ADD_F64), [0x281] = O(V_MUL_F64), [0x282] = O(V_MIN_F64), [0x283] = O(V_MAX_F64),
    [0x284] = O(V_LDEXP_F64), [0x285] = O(V_MUL_LO_U32), [0x286] = O(V_MUL_HI_U32), [0x287] = O(V_MUL_HI_I32),
    [0x288] = O(V_LDEXP_F32), [0x289] = O(V_READLANE_B32), [0x28a] = O(V_WRITELANE_B32),
    [0x28b] = O(V_BCNT_U32_B32), [0x28c] = O(V_MBCNT_LO_U32_B32), [0x28d] = O(V_MBCNT_HI_U32_B32),
    [0x28f] = O(V_LSHLREV_B64), [0x290] = O(V_LSHRREV_B64), [0x291] = O(V_ASHRREV_I64), [0x293] = O(V_BFM_B32),
    [0x296] = O(V_CVT_PKRTZ_F16_F32), [0x297] = O(V_CVT_PK_U16_U32), [0x298] = O(V_CVT_PK_I16_I32),
    [0x29c] = O(V_ADD_I32), [0x29d] = O(V_SUB_I32), [0x2a0] = O(V_PACK_B32_F16),
};
static const uint16_t g9_vop3p[] = {
    [0x00] = O(V_PK_MAD_I16), [0x01] = O(V_PK_MUL_LO_U16), [0x02] = O(V_PK_ADD_I16), [0x03] = O(V_PK_SUB_I16),
    [0x04] = O(V_PK_LSHLREV_B16), [0x05] = O(V_PK_LSHRREV_B16), [0x06] = O(V_PK_ASHRREV_I16),
    [0x07] = O(V_PK_MAX_I16), [0x08] = O(V_PK_MIN_I16), [0x09] = O(V_PK_MAD_U16), [0x0a] = O(V_PK_ADD_U16),
    [0x0b] = O(V_PK_SUB_U16), [0x0c] = O(V_PK_MAX_U16), [0x0d] = O(V_PK_MIN_U16), [0x0e] = O(V_PK_FMA_F16),
    [0x0f] = O(V_PK_ADD_F16), [0x10] = O(V_PK_MUL_F16), [0x11] = O(V_PK_MIN_F16), [0x12] = O(V_PK_MAX_F16),
    [0x20] = O(V_FMA_MIX_F32), [0x21] = O(V_FMA_MIXLO_F16), [0x22] = O(V_FMA_MIXHI_F16),
    [0x23] = O(V_DOT2_F32_F16), [0x26] = O(V_DOT2_I32_I16), [0x27] = O(V_DOT2_U32_U16),
    [0x28] = O(V_DOT4_I32_I8), [0x29] = O(V_DOT4_U32_U8), [0x2a] = O(V_DOT8_I32_I4), [0x2b] = O(V_DOT8_U32_U4),
    [0x30] = O(V_PK_FMA_F32), [0x31] = O(V_PK_MUL_F32), [0x32] = O(V_PK_ADD_F32),
    [0x33] = O(V_PK_MOV_B32), [0x58] = O(V_ACCVGPR_READ_B32), [0x59] = O(V_ACCVGPR_WRITE_B32),
    /* MFMA (VOP3PInstructions.td VOP3P_Real_MFMA_gfx90a / _gfx940): gfx940 renames 0x4c/0x4d (see for_target)
     * and has the bf16 one at 0x61 (gfx90a's 0x67, v_mfma_f32_16x16x16bf16_1k) */
    [0x4c] = O(V_MFMA_F32_32X32X8F16), [0x4d] = O(V_MFMA_F32_16X16X16F16), [0x61] = O(V_MFMA_F32_16X16X16_BF16),
    [0x67] = O(V_MFMA_F32_16X16X16BF16_1K),
};
static const uint16_t g9_ds[] = {
    [0x00] = O(DS_ADD_U32), [0x01] = O(DS_SUB_U32), [0x03] = O(DS_INC_U32), [0x04] = O(DS_DEC_U32),
    [0x05] = O(DS_MIN_I32), [0x06] = O(DS_MAX_I32), [0x07] = O(DS_MIN_U32), [0x08] = O(DS_MAX_U32),
    [0x09] = O(DS_AND_B32), [0x0a] = O(DS_OR_B32), [0x0b] = O(DS_XOR_B32), [0x0d] = O(DS_WRITE_B32),
    [0x0e] = O(DS_WRITE2_B32), [0x0f] = O(DS_WRITE2ST64_B32), [0x12] = O(DS_MIN_F32), [0x13] = O(DS_MAX_F32),
    [0x15] = O(DS_ADD_F32), [0x1e] = O(DS_WRITE_B8), [0x1f] = O(DS_WRITE_B16), [0x20] = O(DS_ADD_RTN_U32),
    [0x21] = O(DS_SUB_RTN_U32), [0x23] = O(DS_INC_RTN_U32), [0x24] = O(DS_DEC_RTN_U32),
    [0x25] = O(DS_MIN_RTN_I32), [0x26] = O(DS_MAX_RTN_I32), [0x27] = O(DS_MIN_RTN_U32),
    [0x28] = O(DS_MAX_RTN_U32), [0x29] = O(DS_AND_RTN_B32), [0x2a] = O(DS_OR_RTN_B32), [0x2b] = O(DS_XOR_RTN_B32),
    [0x2d] = O(DS_WRXCHG_RTN_B32), [0x30] = O(DS_CMPST_RTN_B32), [0x32] = O(DS_MIN_RTN_F32),
    [0x33] = O(DS_MAX_RTN_F32), [0x35] = O(DS_ADD_RTN_F32), [0x36] = O(DS_READ_B32), [0x37] = O(DS_READ2_B32),
    [0x38] = O(DS_READ2ST64_B32), [0x39] = O(DS_READ_I8), [0x3a] = O(DS_READ_U8), [0x3b] = O(DS_READ_I16),
    [0x3c] = O(DS_READ_U16), [0x3d] = O(DS_SWIZZLE_B32), [0x3e] = O(DS_PERMUTE_B32), [0x3f] = O(DS_BPERMUTE_B32),
    [0x40] = O(DS_ADD_U64), [0x4d] = O(DS_WRITE_B64), [0x4e] = O(DS_WRITE2_B64), [0x4f] = O(DS_WRITE2ST64_B64),
    [0x54] = O(DS_WRITE_B8_D16_HI), [0x55] = O(DS_WRITE_B16_D16_HI), [0x56] = O(DS_READ_U8_D16),
    [0x57] = O(DS_READ_U8_D16_HI), [0x58] = O(DS_READ_I8_D16), [0x59] = O(DS_READ_I8_D16_HI),
    [0x5a] = O(DS_READ_U16_D16), [0x5b] = O(DS_READ_U16_D16_HI), [0x60] = O(DS_ADD_RTN_U64),
    [0x70] = O(DS_CMPST_RTN_B64), [0x76] = O(DS_READ_B64), [0x77] = O(DS_READ2_B64), [0x78] = O(DS_READ2ST64_B64),
    [0xde] = O(DS_WRITE_B96), [0xdf] = O(DS_WRITE_B128), [0xfe] = O(DS_READ_B96), [0xff] = O(DS_READ_B128),
};
static const uint16_t g9_flat[] = {
    [0x10] = O(M_LOAD_U8), [0x11] = O(M_LOAD_I8), [0x12] = O(M_LOAD_U16), [0x13] = O(M_LOAD_I16),
    [0x14] = O(M_LOAD_B32), [0x15] = O(M_LOAD_B64), [0x16] = O(M_LOAD_B96), [0x17] = O(M_LOAD_B128),
    [0x18] = O(M_STORE_B8), [0x19] = O(M_STORE_B8_D16_HI), [0x1a] = O(M_STORE_B16), [0x1b] = O(M_STORE_B16_D16_HI),
    [0x1c] = O(M_STORE_B32), [0x1d] = O(M_STORE_B64), [0x1e] = O(M_STORE_B96), [0x1f] = O(M_STORE_B128),
    [0x20] = O(M_LOAD_D16_U8), [0x21] = O(M_LOAD_D16_HI_U8), [0x22] = O(M_LOAD_D16_I8),
    [0x23] = O(M_LOAD_D16_HI_I8), [0x24] = O(M_LOAD_D16_B16), [0x25] = O(M_LOAD_D16_HI_B16),
    [0x40] = O(M_ATOMIC_SWAP), [0x41] = O(M_ATOMIC_CMPSWAP), [0x42] = O(M_ATOMIC_ADD), [0x43] = O(M_ATOMIC_SUB),
    [0x44] = O(M_ATOMIC_SMIN), [0x45] = O(M_ATOMIC_UMIN), [0x46] = O(M_ATOMIC_SMAX), [0x47] = O(M_ATOMIC_UMAX),
    [0x48] = O(M_ATOMIC_AND), [0x49] = O(M_ATOMIC_OR), [0x4a] = O(M_ATOMIC_XOR), [0x4b] = O(M_ATOMIC_INC),
    [0x4c] = O(M_ATOMIC_DEC), [0x4d] = O(M_ATOMIC_ADD_F32), [0x4f] = O(M_ATOMIC_ADD_F64),
    [0x60] = O(M_ATOMIC_SWAP_X2), [0x61] = O(M_ATOMIC_CMPSWAP_X2), [0x62] = O(M_ATOMIC_ADD_X2),
};
static const uint16_t g9_mubuf[] = {
    [0x10] = O(B_LOAD_U8), [0x11] = O(B_LOAD_I8), [0x12] = O(B_LOAD_U16), [0x13] = O(B_LOAD_I16),
    [0x14] = O(B_LOAD_B32), [0x15] = O(B_LOAD_B64), [0x16] = O(B_LOAD_B96), [0x17] = O(B_LOAD_B128),
    [0x18] = O(B_STORE_B8), [0x1a] = O(B_STORE_B16), [0x1c] = O(B_STORE_B32), [0x1d] = O(B_STORE_B64),
    [0x1e] = O(B_STORE_B96), [0x1f] = O(B_STORE_B128), [0x28] = O(B_WBL2), [0x29] = O(B_INV),
    [0x3e] = O(B_WBINVL1), [0x3f] = O(B_WBINVL1_VOL),
};

/* ================================ gfx11 (gfx1100) ==================== */
static const uint16_t g11_sop1[] = {
    [0x00] = O(S_MOV_B32), [0x01] = O(S_MOV_B64), [0x02] = O(S_CMOV_B32), [0x03] = O(S_CMOV_B64),
    [0x04] = O(S_BREV_B32), [0x05] = O(S_BREV_B64), [0x08] = O(S_FF1_I32_B32), [0x09] = O(S_FF1_I32_B64),
    [0x0a] = O(S_FLBIT_I32_B32), [0x0b] = O(S_FLBIT_I32_B64), [0x0c] = O(S_FLBIT_I32), [0x0e] = O(S_SEXT_I32_I8),
    [0x0f] = O(S_SEXT_I32_I16), [0x10] = O(S_BITSET0_B32), [0x11] = O(S_BITSET0_B64), [0x12] = O(S_BITSET1_B32),
    [0x13] = O(S_BITSET1_B64), [0x15] = O(S_ABS_I32), [0x16] = O(S_BCNT0_I32_B32), [0x17] = O(S_BCNT0_I32_B64),
    [0x18] = O(S_BCNT1_I32_B32), [0x19] = O(S_BCNT1_I32_B64), [0x1c] = O(S_WQM_B32), [0x1d] = O(S_WQM_B64),
    [0x1e] = O(S_NOT_B32), [0x1f] = O(S_NOT_B64), [0x20] = O(S_AND_SAVEEXEC_B32), [0x21] = O(S_AND_SAVEEXEC_B64),
    [0x22] = O(S_OR_SAVEEXEC_B32), [0x23] = O(S_OR_SAVEEXEC_B64), [0x24] = O(S_XOR_SAVEEXEC_B32),
    [0x25] = O(S_XOR_SAVEEXEC_B64), [0x2c] = O(S_ANDN1_SAVEEXEC_B32), [0x2d] = O(S_ANDN1_SAVEEXEC_B64),
    [0x30] = O(S_ANDN2_SAVEEXEC_B32), [0x31] = O(S_ANDN2_SAVEEXEC_B64), [0x32] = O(S_ORN2_SAVEEXEC_B32),
    [0x33] = O(S_ORN2_SAVEEXEC_B64), [0x36] = O(S_ANDN2_WREXEC_B32), [0x37] = O(S_ANDN2_WREXEC_B64),
    [0x47] = O(S_GETPC_B64), [0x48] = O(S_SETPC_B64), [0x49] = O(S_SWAPPC_B64),
};
static const uint16_t g11_sop2[] = {
    [0x00] = O(S_ADD_U32), [0x01] = O(S_SUB_U32), [0x02] = O(S_ADD_I32), [0x03] = O(S_SUB_I32),
    [0x04] = O(S_ADDC_U32), [0x05] = O(S_SUBB_U32), [0x06] = O(S_ABSDIFF_I32), [0x08] = O(S_LSHL_B32),
    [0x09] = O(S_LSHL_B64), [0x0a] = O(S_LSHR_B32), [0x0b] = O(S_LSHR_B64), [0x0c] = O(S_ASHR_I32),
    [0x0d] = O(S_ASHR_I64), [0x0e] = O(S_LSHL1_ADD_U32), [0x0f] = O(S_LSHL2_ADD_U32), [0x10] = O(S_LSHL3_ADD_U32),
    [0x11] = O(S_LSHL4_ADD_U32), [0x12] = O(S_MIN_I32), [0x13] = O(S_MIN_U32), [0x14] = O(S_MAX_I32),
    [0x15] = O(S_MAX_U32), [0x16] = O(S_AND_B32), [0x17] = O(S_AND_B64), [0x18] = O(S_OR_B32),
    [0x19] = O(S_OR_B64), [0x1a] = O(S_XOR_B32), [0x1b] = O(S_XOR_B64), [0x1c] = O(S_NAND_B32),
    [0x1d] = O(S_NAND_B64), [0x1e] = O(S_NOR_B32), [0x1f] = O(S_NOR_B64), [0x20] = O(S_XNOR_B32),
    [0x21] = O(S_XNOR_B64), [0x22] = O(S_ANDN2_B32), [0x23] = O(S_ANDN2_B64), [0x24] = O(S_ORN2_B32),
    [0x25] = O(S_ORN2_B64), [0x26] = O(S_BFE_U32), [0x27] = O(S_BFE_I32), [0x28] = O(S_BFE_U64),
    [0x29] = O(S_BFE_I64), [0x2a] = O(S_BFM_B32), [0x2b] = O(S_BFM_B64), [0x2c] = O(S_MUL_I32),
    [0x2d] = O(S_MUL_HI_U32), [0x2e] = O(S_MUL_HI_I32), [0x30] = O(S_CSELECT_B32), [0x31] = O(S_CSELECT_B64),
    [0x32] = O(S_PACK_LL_B32_B16), [0x33] = O(S_PACK_LH_B32_B16), [0x34] = O(S_PACK_HH_B32_B16),
    [0x35] = O(S_PACK_HL_B32_B16), /* gfx11 only (llvm-mc -mcpu=gfx1100: 0x9a830002) */
};
static const uint16_t g11_sopk[] = {
    [0x00] = O(S_MOVK_I32), [0x01] = O(S_VERSION), [0x02] = O(S_CMOVK_I32), [0x03] = O(S_CMPK_EQ_I32),
    [0x04] = O(S_CMPK_LG_I32), [0x05] = O(S_CMPK_GT_I32), [0x06] = O(S_CMPK_GE_I32), [0x07] = O(S_CMPK_LT_I32),
    [0x08] = O(S_CMPK_LE_I32), [0x09] = O(S_CMPK_EQ_U32), [0x0a] = O(S_CMPK_LG_U32), [0x0b] = O(S_CMPK_GT_U32),
    [0x0c] = O(S_CMPK_GE_U32), [0x0d] = O(S_CMPK_LT_U32), [0x0e] = O(S_CMPK_LE_U32), [0x0f] = O(S_ADDK_I32),
    [0x10] = O(S_MULK_I32), [0x11] = O(S_GETREG_B32), [0x12] = O(S_SETREG_B32), [0x13] = O(S_SETREG_IMM32_B32),
    [0x14] = O(S_CALL_B64), [0x18] = O(S_WAITCNT_VSCNT), [0x19] = O(S_WAITCNT_VMCNT),
    [0x1a] = O(S_WAITCNT_EXPCNT), [0x1b] = O(S_WAITCNT_LGKMCNT),
};
static const uint16_t g11_sopc[] = {
    [0x00] = O(S_CMP_EQ_I32), [0x01] = O(S_CMP_LG_I32), [0x02] = O(S_CMP_GT_I32), [0x03] = O(S_CMP_GE_I32),
    [0x04] = O(S_CMP_LT_I32), [0x05] = O(S_CMP_LE_I32), [0x06] = O(S_CMP_EQ_U32), [0x07] = O(S_CMP_LG_U32),
    [0x08] = O(S_CMP_GT_U32), [0x09] = O(S_CMP_GE_U32), [0x0a] = O(S_CMP_LT_U32), [0x0b] = O(S_CMP_LE_U32),
    [0x0c] = O(S_BITCMP0_B32), [0x0d] = O(S_BITCMP1_B32), [0x0e] = O(S_BITCMP0_B64), [0x0f] = O(S_BITCMP1_B64),
    [0x10] = O(S_CMP_EQ_U64), [0x11] = O(S_CMP_LG_U64),
};
static const uint16_t g11_sopp[] = {
    [0x00] = O(S_NOP), [0x02] = O(S_SETHALT), [0x03] = O(S_SLEEP), [0x04] = O(S_INST_PREFETCH),
    [0x05] = O(S_CLAUSE), [0x07] = O(S_DELAY_ALU), [0x08] = O(S_WAITCNT_DEPCTR), [0x09] = O(S_WAITCNT),
    [0x10] = O(S_TRAP), [0x11] = O(S_ROUND_MODE), [0x12] = O(S_DENORM_MODE), [0x1f] = O(S_CODE_END),
    [0x20] = O(S_BRANCH), [0x21] = O(S_CBRANCH_SCC0), [0x22] = O(S_CBRANCH_SCC1), [0x23] = O(S_CBRANCH_VCCZ),
    [0x24] = O(S_CBRANCH_VCCNZ), [0x25] = O(S_CBRANCH_EXECZ), [0x26] = O(S_CBRANCH_EXECNZ), [0x30] = O(S_ENDPGM),
    [0x35] = O(S_SETPRIO), [0x36] = O(S_SENDMSG), [0x3c] = O(S_ICACHE_INV), [0x3d] = O(S_BARRIER),
};
static const uint16_t g11_smem[] = {
    [0x00] = O(S_LOAD_B32), [0x01] = O(S_LOAD_B64), [0x02] = O(S_LOAD_B128), [0x03] = O(S_LOAD_B256),
    [0x04] = O(S_LOAD_B512), [0x20] = O(S_GL1_INV), [0x21] = O(S_DCACHE_INV),
};
static const uint16_t g11_vop1[] = {
    [0x00] = O(V_NOP), [0x01] = O(V_MOV_B32), [0x02] = O(V_READFIRSTLANE_B32), [0x03] = O(V_CVT_I32_F64),
    [0x04] = O(V_CVT_F64_I32), [0x05] = O(V_CVT_F32_I32), [0x06] = O(V_CVT_F32_U32), [0x07] = O(V_CVT_U32_F32),
    [0x08] = O(V_CVT_I32_F32), [0x0a] = O(V_CVT_F16_F32), [0x0b] = O(V_CVT_F32_F16), [0x0c] = O(V_CVT_RPI_I32_F32),
    [0x0d] = O(V_CVT_FLR_I32_F32), [0x0f] = O(V_CVT_F32_F64), [0x10] = O(V_CVT_F64_F32),
    [0x11] = O(V_CVT_F32_UBYTE0), [0x12] = O(V_CVT_F32_UBYTE1), [0x13] = O(V_CVT_F32_UBYTE2),
    [0x14] = O(V_CVT_F32_UBYTE3), [0x15] = O(V_CVT_U32_F64), [0x16] = O(V_CVT_F64_U32), [0x17] = O(V_TRUNC_F64),
    [0x18] = O(V_CEIL_F64), [0x19] = O(V_RNDNE_F64), [0x1a] = O(V_FLOOR_F64), [0x1c] = O(V_MOV_B16),
    [0x20] = O(V_FRACT_F32), [0x21] = O(V_TRUNC_F32), [0x22] = O(V_CEIL_F32), [0x23] = O(V_RNDNE_F32),
    [0x24] = O(V_FLOOR_F32), [0x25] = O(V_EXP_F32), [0x27] = O(V_LOG_F32), [0x2a] = O(V_RCP_F32),
    [0x2b] = O(V_RCP_IFLAG_F32), [0x2e] = O(V_RSQ_F32), [0x2f] = O(V_RCP_F64), [0x31] = O(V_RSQ_F64),
    [0x33] = O(V_SQRT_F32), [0x34] = O(V_SQRT_F64), [0x35] = O(V_SIN_F32), [0x36] = O(V_COS_F32),
    [0x37] = O(V_NOT_B32), [0x38] = O(V_BFREV_B32), [0x39] = O(V_FFBH_U32), [0x3a] = O(V_FFBL_B32),
    [0x3b] = O(V_FFBH_I32), [0x3c] = O(V_FREXP_EXP_I32_F64), [0x3d] = O(V_FREXP_MANT_F64),
    [0x3e] = O(V_FRACT_F64), [0x3f] = O(V_FREXP_EXP_I32_F32), [0x40] = O(V_FREXP_MANT_F32),
    [0x50] = O(V_CVT_F16_U16), [0x51] = O(V_CVT_F16_I16), [0x52] = O(V_CVT_U16_F16), [0x53] = O(V_CVT_I16_F16),
    [0x54] = O(V_RCP_F16), [0x55] = O(V_SQRT_F16), [0x56] = O(V_RSQ_F16), [0x57] = O(V_LOG_F16),
    [0x58] = O(V_EXP_F16), [0x5b] = O(V_FLOOR_F16), [0x5c] = O(V_CEIL_F16), [0x5d] = O(V_TRUNC_F16),
    [0x5e] = O(V_RNDNE_F16), [0x65] = O(V_SWAP_B32), [0x67] = O(V_PERMLANE64_B32), [0x69] = O(V_NOT_B16),
    [0x6a] = O(V_CVT_I32_I16), [0x6b] = O(V_CVT_U32_U16),
};
static const uint16_t g11_vop2[] = {
    [0x01] = O(V_CNDMASK_B32), [0x02] = O(V_DOT2C_F32_F16), /* v_dot2acc_f32_f16: VOP2 only */ [0x03] = O(V_ADD_F32), [0x04] = O(V_SUB_F32), [0x05] = O(V_SUBREV_F32),
    [0x07] = O(V_MUL_LEGACY_F32), [0x08] = O(V_MUL_F32), [0x09] = O(V_MUL_I32_I24), [0x0a] = O(V_MUL_HI_I32_I24),
    [0x0b] = O(V_MUL_U32_U24), [0x0c] = O(V_MUL_HI_U32_U24), [0x0f] = O(V_MIN_F32), [0x10] = O(V_MAX_F32),
    [0x11] = O(V_MIN_I32), [0x12] = O(V_MAX_I32), [0x13] = O(V_MIN_U32), [0x14] = O(V_MAX_U32),
    [0x18] = O(V_LSHLREV_B32), [0x19] = O(V_LSHRREV_B32), [0x1a] = O(V_ASHRREV_I32), [0x1b] = O(V_AND_B32),
    [0x1c] = O(V_OR_B32), [0x1d] = O(V_XOR_B32), [0x1e] = O(V_XNOR_B32), [0x20] = O(V_ADDC_CO_U32),
    [0x21] = O(V_SUBB_CO_U32), [0x22] = O(V_SUBBREV_CO_U32), [0x25] = O(V_ADD_U32), [0x26] = O(V_SUB_U32),
    [0x27] = O(V_SUBREV_U32), [0x2b] = O(V_FMAC_F32), [0x2c] = O(V_FMAMK_F32), [0x2d] = O(V_FMAAK_F32),
    [0x2f] = O(V_CVT_PKRTZ_F16_F32), [0x32] = O(V_ADD_F16), [0x33] = O(V_SUB_F16), [0x34] = O(V_SUBREV_F16),
    [0x35] = O(V_MUL_F16), [0x36] = O(V_FMAC_F16), [0x39] = O(V_MAX_F16), [0x3a] = O(V_MIN_F16),
    [0x3b] = O(V_LDEXP_F16), [0x3c] = O(V_PK_FMAC_F16),
};
static const uint16_t g11_vopc[] = {
    CMPF(0x00, F16), CMPF(0x10, F32), CMPF(0x20, F64), CMPI6(0x30, I16), CMPI6(0x38, U16), CMPI(0x40, I32),
    CMPI(0x48, U32), CMPI(0x50, I64), CMPI(0x58, U64), [0x7d] = O(V_CMP_CLASS_F16), [0x7e] = O(V_CMP_CLASS_F32),
    [0x7f] = O(V_CMP_CLASS_F64),
    CMPXF(0x80, F16), CMPXF(0x90, F32), CMPXF(0xa0, F64), CMPXI6(0xb0, I16), CMPXI6(0xb8, U16), CMPXI(0xc0, I32),
    CMPXI(0xc8, U32), CMPXI(0xd0, I64), CMPXI(0xd8, U64), [0xfd] = O(V_CMPX_CLASS_F16),
    [0xfe] = O(V_CMPX_CLASS_F32), [0xff] = O(V_CMPX_CLASS_F64),
};
static const uint16_t g11_vop3[] = {
    [0x20a] = O(V_MAD_I32_I24), [0x20b] = O(V_MAD_U32_U24), [0x210] = O(V_BFE_U32), [0x211] = O(V_BFE_I32),
    [0x212] = O(V_BFI_B32), [0x213] = O(V_FMA_F32), [0x214] = O(V_FMA_F64), [0x216] = O(V_ALIGNBIT_B32),
    [0x217] = O(V_ALIGNBYTE_B32), [0x219] = O(V_MIN3_F32), [0x21a] = O(V_MIN3_I32), [0x21b] = O(V_MIN3_U32),
    [0x21c] = O(V_MAX3_F32), [0x21d] = O(V_MAX3_I32), [0x21e] = O(V_MAX3_U32), [0x21f] = O(V_MED3_F32),
    [0x220] = O(V_MED3_I32), [0x221] = O(V_MED3_U32), [0x225] = O(V_SAD_U32), [0x227] = O(V_DIV_FIXUP_F32),
    [0x228] = O(V_DIV_FIXUP_F64), [0x237] = O(V_DIV_FMAS_F32), [0x238] = O(V_DIV_FMAS_F64),
    [0x240] = O(V_XOR3_B32), [0x241] = O(V_MAD_U16), [0x244] = O(V_PERM_B32), [0x245] = O(V_XAD_U32),
    [0x246] = O(V_LSHL_ADD_U32), [0x247] = O(V_ADD_LSHL_U32), [0x248] = O(V_FMA_F16), [0x249] = O(V_MIN3_F16),
    [0x24a] = O(V_MIN3_I16), [0x24b] = O(V_MIN3_U16), [0x24c] = O(V_MAX3_F16), [0x24d] = O(V_MAX3_I16),
    [0x24e] = O(V_MAX3_U16), [0x24f] = O(V_MED3_F16), [0x250] = O(V_MED3_I16), [0x251] = O(V_MED3_U16), [0x253] = O(V_MAD_I16), [0x254] = O(V_DIV_FIXUP_F16),
    [0x255] = O(V_ADD3_U32), [0x256] = O(V_LSHL_OR_B32), [0x257] = O(V_AND_OR_B32), [0x258] = O(V_OR3_B32),
    [0x259] = O(V_MAD_U32_U16), [0x25a] = O(V_MAD_I32_I16), [0x25d] = O(V_CNDMASK_B16), [0x25e] = O(V_MAXMIN_F32),
    [0x25f] = O(V_MINMAX_F32), [0x262] = O(V_MAXMIN_U32), [0x263] = O(V_MINMAX_U32), [0x264] = O(V_MAXMIN_I32),
    [0x265] = O(V_MINMAX_I32), [0x2fc] = O(V_DIV_SCALE_F32), [0x2fd] = O(V_DIV_SCALE_F64),
    [0x2fe] = O(V_MAD_U64_U32), [0x2ff] = O(V_MAD_I64_I32), [0x300] = O(V_ADD_CO_U32), [0x301] = O(V_SUB_CO_U32),
    [0x302] = O(V_SUBREV_CO_U32), [0x303] = O(V_ADD_U16), [0x304] = O(V_SUB_U16), [0x305] = O(V_MUL_LO_U16),
    [0x309] = O(V_MAX_U16), [0x30a] = O(V_MAX_I16), [0x30b] = O(V_MIN_U16), [0x30c] = O(V_MIN_I16),
    [0x311] = O(V_PACK_B32_F16), [0x31c] = O(V_LDEXP_F32), [0x31d] = O(V_BFM_B32), [0x31e] = O(V_BCNT_U32_B32),
    [0x31f] = O(V_MBCNT_LO_U32_B32), [0x320] = O(V_MBCNT_HI_U32_B32), [0x323] = O(V_CVT_PK_U16_U32),
    [0x324] = O(V_CVT_PK_I16_I32), [0x325] = O(V_SUB_I32), [0x326] = O(V_ADD_I32), [0x327] = O(V_ADD_F64),
    [0x328] = O(V_MUL_F64), [0x329] = O(V_MIN_F64), [0x32a] = O(V_MAX_F64), [0x32b] = O(V_LDEXP_F64),
    [0x32c] = O(V_MUL_LO_U32), [0x32d] = O(V_MUL_HI_U32), [0x32e] = O(V_MUL_HI_I32), [0x338] = O(V_LSHLREV_B16),
    [0x339] = O(V_LSHRREV_B16), [0x33a] = O(V_ASHRREV_I16), [0x33c] = O(V_LSHLREV_B64), [0x33d] = O(V_LSHRREV_B64),
    [0x33e] = O(V_ASHRREV_I64), [0x360] = O(V_READLANE_B32), [0x361] = O(V_WRITELANE_B32), [0x362] = O(V_AND_B16),
    [0x363] = O(V_OR_B16), [0x364] = O(V_XOR_B16),
};
static const uint16_t g11_vop3p[] = {
    [0x00] = O(V_PK_MAD_I16), [0x01] = O(V_PK_MUL_LO_U16), [0x02] = O(V_PK_ADD_I16), [0x03] = O(V_PK_SUB_I16),
    [0x04] = O(V_PK_LSHLREV_B16), [0x05] = O(V_PK_LSHRREV_B16), [0x06] = O(V_PK_ASHRREV_I16),
    [0x07] = O(V_PK_MAX_I16), [0x08] = O(V_PK_MIN_I16), [0x09] = O(V_PK_MAD_U16), [0x0a] = O(V_PK_ADD_U16),
    [0x0b] = O(V_PK_SUB_U16), [0x0c] = O(V_PK_MAX_U16), [0x0d] = O(V_PK_MIN_U16), [0x0e] = O(V_PK_FMA_F16),
    [0x0f] = O(V_PK_ADD_F16), [0x10] = O(V_PK_MUL_F16), [0x11] = O(V_PK_MIN_F16), [0x12] = O(V_PK_MAX_F16),
    [0x13] = O(V_DOT2_F32_F16), [0x16] = O(V_DOT4_I32_I8), [0x17] = O(V_DOT4_U32_U8), [0x18] = O(V_DOT8_I32_I4),
    [0x19] = O(V_DOT8_U32_U4), [0x1a] = O(V_DOT2_F32_BF16), [0x20] = O(V_FMA_MIX_F32), [0x21] = O(V_FMA_MIXLO_F16),
    [0x22] = O(V_FMA_MIXHI_F16),
    /* WMMA (VOP3PInstructions.td VOP3P_Real_WMMA_gfx11) */
    [0x40] = O(V_WMMA_F32_16X16X16_F16), [0x41] = O(V_WMMA_F32_16X16X16_BF16),
};
static const uint16_t g11_ds[] = {
    [0x00] = O(DS_ADD_U32), [0x01] = O(DS_SUB_U32), [0x03] = O(DS_INC_U32), [0x04] = O(DS_DEC_U32),
    [0x05] = O(DS_MIN_I32), [0x06] = O(DS_MAX_I32), [0x07] = O(DS_MIN_U32), [0x08] = O(DS_MAX_U32),
    [0x09] = O(DS_AND_B32), [0x0a] = O(DS_OR_B32), [0x0b] = O(DS_XOR_B32), [0x0d] = O(DS_WRITE_B32),
    [0x0e] = O(DS_WRITE2_B32), [0x0f] = O(DS_WRITE2ST64_B32), [0x12] = O(DS_MIN_F32), [0x13] = O(DS_MAX_F32),
    [0x15] = O(DS_ADD_F32), [0x1e] = O(DS_WRITE_B8), [0x1f] = O(DS_WRITE_B16), [0x20] = O(DS_ADD_RTN_U32),
    [0x21] = O(DS_SUB_RTN_U32), [0x23] = O(DS_INC_RTN_U32), [0x24] = O(DS_DEC_RTN_U32),
    [0x25] = O(DS_MIN_RTN_I32), [0x26] = O(DS_MAX_RTN_I32), [0x27] = O(DS_MIN_RTN_U32),
    [0x28] = O(DS_MAX_RTN_U32), [0x29] = O(DS_AND_RTN_B32), [0x2a] = O(DS_OR_RTN_B32), [0x2b] = O(DS_XOR_RTN_B32),
    [0x2d] = O(DS_WRXCHG_RTN_B32), [0x30] = O(DS_CMPST_RTN_B32), [0x32] = O(DS_MIN_RTN_F32),
    [0x33] = O(DS_MAX_RTN_F32), [0x35] = O(DS_SWIZZLE_B32), [0x36] = O(DS_READ_B32), [0x37] = O(DS_READ2_B32),
    [0x38] = O(DS_READ2ST64_B32), [0x39] = O(DS_READ_I8), [0x3a] = O(DS_READ_U8), [0x3b] = O(DS_READ_I16),
    [0x3c] = O(DS_READ_U16), [0x40] = O(DS_ADD_U64), [0x4d] = O(DS_WRITE_B64), [0x4e] = O(DS_WRITE2_B64),
    [0x4f] = O(DS_WRITE2ST64_B64), [0x60] = O(DS_ADD_RTN_U64), [0x70] = O(DS_CMPST_RTN_B64),
    [0x76] = O(DS_READ_B64), [0x77] = O(DS_READ2_B64), [0x78] = O(DS_READ2ST64_B64), [0x79] = O(DS_ADD_RTN_F32),
    [0xa0] = O(DS_WRITE_B8_D16_HI), [0xa1] = O(DS_WRITE_B16_D16_HI), [0xa2] = O(DS_READ_U8_D16),
    [0xa3] = O(DS_READ_U8_D16_HI), [0xa4] = O(DS_READ_I8_D16), [0xa5] = O(DS_READ_I8_D16_HI),
    [0xa6] = O(DS_READ_U16_D16), [0xa7] = O(DS_READ_U16_D16_HI), [0xb2] = O(DS_PERMUTE_B32),
    [0xb3] = O(DS_BPERMUTE_B32), [0xde] = O(DS_WRITE_B96), [0xdf] = O(DS_WRITE_B128), [0xfe] = O(DS_READ_B96),
    [0xff] = O(DS_READ_B128),
};
static const uint16_t g11_flat[] = {
    [0x10] = O(M_LOAD_U8), [0x11] = O(M_LOAD_I8), [0x12] = O(M_LOAD_U16), [0x13] = O(M_LOAD_I16),
    [0x14] = O(M_LOAD_B32), [0x15] = O(M_LOAD_B64), [0x16] = O(M_LOAD_B96), [0x17] = O(M_LOAD_B128),
    [0x18] = O(M_STORE_B8), [0x19] = O(M_STORE_B16), [0x1a] = O(M_STORE_B32), [0x1b] = O(M_STORE_B64),
    [0x1c] = O(M_STORE_B96), [0x1d] = O(M_STORE_B128), [0x1e] = O(M_LOAD_D16_U8), [0x1f] = O(M_LOAD_D16_I8),
    [0x20] = O(M_LOAD_D16_B16), [0x21] = O(M_LOAD_D16_HI_U8), [0x22] = O(M_LOAD_D16_HI_I8),
    [0x23] = O(M_LOAD_D16_HI_B16), [0x24] = O(M_STORE_B8_D16_HI), [0x25] = O(M_STORE_B16_D16_HI),
    [0x33] = O(M_ATOMIC_SWAP), [0x34] = O(M_ATOMIC_CMPSWAP), [0x35] = O(M_ATOMIC_ADD), [0x36] = O(M_ATOMIC_SUB),
    [0x38] = O(M_ATOMIC_SMIN), [0x39] = O(M_ATOMIC_UMIN), [0x3a] = O(M_ATOMIC_SMAX), [0x3b] = O(M_ATOMIC_UMAX),
    [0x3c] = O(M_ATOMIC_AND), [0x3d] = O(M_ATOMIC_OR), [0x3e] = O(M_ATOMIC_XOR), [0x3f] = O(M_ATOMIC_INC),
    [0x40] = O(M_ATOMIC_DEC), [0x41] = O(M_ATOMIC_SWAP_X2), [0x42] = O(M_ATOMIC_CMPSWAP_X2),
    [0x43] = O(M_ATOMIC_ADD_X2), [0x51] = O(M_ATOMIC_MIN_F32), [0x52] = O(M_ATOMIC_MAX_F32),
    [0x56] = O(M_ATOMIC_ADD_F32),
};
static const uint16_t g11_mubuf[] = {
    [0x10] = O(B_LOAD_U8), [0x11] = O(B_LOAD_I8), [0x12] = O(B_LOAD_U16), [0x13] = O(B_LOAD_I16),
    [0x14] = O(B_LOAD_B32), [0x15] = O(B_LOAD_B64), [0x16] = O(B_LOAD_B96), [0x17] = O(B_LOAD_B128),
    [0x18] = O(B_STORE_B8), [0x19] = O(B_STORE_B16), [0x1a] = O(B_STORE_B32), [0x1b] = O(B_STORE_B64),
    [0x1c] = O(B_STORE_B96), [0x1d] = O(B_STORE_B128), [0x2b] = O(B_GL0_INV), [0x2c] = O(B_GL1_INV),
};

/* VOPD (gfx11): OPX 0-13, OPY adds 16-18 (VOPDInstructions.td; RDNA3 ISA
 * "VOPD") */
static const uint16_t g11_vopd[] = {
    [0] = O(V_FMAC_F32), [1] = O(V_FMAAK_F32), [2] = O(V_FMAMK_F32), [3] = O(V_MUL_F32), [4] = O(V_ADD_F32),
    [5] = O(V_SUB_F32), [6] = O(V_SUBREV_F32), [7] = O(V_MUL_LEGACY_F32), [8] = O(V_MOV_B32),
    [9] = O(V_CNDMASK_B32), [10] = O(V_MAX_F32), [11] = O(V_MIN_F32), [12] = O(V_DOT2C_F32_F16),
    [13] = O(V_DOT2C_F32_BF16), [16] = O(V_ADD_U32), [17] = O(V_LSHLREV_B32),
    [18] = O(V_AND_B32),
};

#define T(p) .p = p, .n##p = N(p)
static const amdi_tables gfx9 = {
    .sop1 = g9_sop1, .nsop1 = N(g9_sop1), .sop2 = g9_sop2, .nsop2 = N(g9_sop2), .sopk = g9_sopk,
    .nsopk = N(g9_sopk), .sopc = g9_sopc, .nsopc = N(g9_sopc), .sopp = g9_sopp, .nsopp = N(g9_sopp),
    .smem = g9_smem, .nsmem = N(g9_smem), .vop1 = g9_vop1, .nvop1 = N(g9_vop1), .vop2 = g9_vop2,
    .nvop2 = N(g9_vop2), .vopc = g9_vopc, .nvopc = N(g9_vopc), .vop3 = g9_vop3, .nvop3 = N(g9_vop3),
    .vop3p = g9_vop3p, .nvop3p = N(g9_vop3p), .ds = g9_ds, .nds = N(g9_ds), .flat = g9_flat,
    .nflat = N(g9_flat), .mubuf = g9_mubuf, .nmubuf = N(g9_mubuf),
};
static const amdi_tables gfx11 = {
    .sop1 = g11_sop1, .nsop1 = N(g11_sop1), .sop2 = g11_sop2, .nsop2 = N(g11_sop2), .sopk = g11_sopk,
    .nsopk = N(g11_sopk), .sopc = g11_sopc, .nsopc = N(g11_sopc), .sopp = g11_sopp, .nsopp = N(g11_sopp),
    .smem = g11_smem, .nsmem = N(g11_smem), .vop1 = g11_vop1, .nvop1 = N(g11_vop1), .vop2 = g11_vop2,
    .nvop2 = N(g11_vop2), .vopc = g11_vopc, .nvopc = N(g11_vopc), .vop3 = g11_vop3, .nvop3 = N(g11_vop3),
    .vop3p = g11_vop3p, .nvop3p = N(g11_vop3p), .ds = g11_ds, .nds = N(g11_ds), .flat = g11_flat,
    .nflat = N(g11_flat), .mubuf = g11_mubuf, .nmubuf = N(g11_mubuf),
};
#undef T

const amdi_tables *amdi_tables_of(const amdi_target *t) { return t->fam == AMDI_GFX11 ? &gfx11 : &gfx9; }

amdi_op amdi_vopd_op(unsigned opc) { return opc < N(g11_vopd) ? (amdi_op)g11_vopd[opc] : AMDI_OP_NONE; }

/* ** names */
static const char *const names9[AMDI_OP_COUNT] = {
#define NAME9(id, n9, n11, sig) [AMDI_##id] = n9,
    AMDI_OPS(NAME9)
#undef NAME9
};
static const char *const names11[AMDI_OP_COUNT] = {
#define NAME11(id, n9, n11, sig) [AMDI_##id] = n11,
    AMDI_OPS(NAME11)
#undef NAME11
};
static const char *const sigs[AMDI_OP_COUNT] = {
#define SIG(id, n9, n11, sig) [AMDI_##id] = sig,
    AMDI_OPS(SIG)
#undef SIG
};

const char *amdi_op_name(amdi_family fam, amdi_op op)
{
    if (op <= AMDI_OP_NONE || op >= AMDI_OP_COUNT) return "";
    return fam == AMDI_GFX11 ? names11[op] : names9[op];
}

const char *amdi_op_sig(amdi_op op) { return op > AMDI_OP_NONE && op < AMDI_OP_COUNT ? sigs[op] : ""; }
