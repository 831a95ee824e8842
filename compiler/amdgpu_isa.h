/* compiler/amdgpu_isa.h: AMDGPU machine code, decoded.
 *
 * The mock GPU's shader core runs a code object's machine code
 * (drivers/mock/mock_amd_isa*.c); this is its decoder: the bits of one
 * instruction become an amdi_inst with the operation (one enum for both
 * families), the operands resolved (register file indices, inline
 * constants and the literal at the operand's width, the modifiers) and the
 * encoding's controls (DPP, SDWA, op_sel, cache policy, offsets). Two
 * families: gfx9 as gfx90a and gfx940-942 have it (CDNA2/3) and gfx11
 * (gfx1100, RDNA3). The opcode tables (amdgpu_tables.c) are hardware
 * facts, cited there; tests/unit/test_amdgpu_decode.c checks every
 * instruction of a corpus of real code objects against llvm-objdump's
 * text (amdi_print writes the same syntax).
 *
 * Internal to hcq. */
#ifndef HCQ_COMPILER_AMDGPU_ISA_H
#define HCQ_COMPILER_AMDGPU_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum amdi_family { AMDI_GFX9 = 0, AMDI_GFX11 = 1 } amdi_family;

typedef struct amdi_target {
    amdi_family fam;
    bool gfx940; /* gfx940-942: sc0/sc1/nt cache bits, v_lshl_add_u64, v_mov_b64, architected flat scratch */
    uint8_t wave; /* 32 or 64: how a lane mask prints (vcc_lo or vcc) */
} amdi_target;

/* The operations. Columns: id, gfx9 mnemonic, gfx11 mnemonic ("" where the
 * family lacks it), operand types (VALU and SALU: "D:ABC", one letter per
 * operand; memory: the access):
 *   i 32-bit integer, f f32, h 16-bit (f16/i16), p two 16-bit halves,
 *   d f64, l 64-bit unsigned, L 64-bit signed, m a lane mask (an SGPR, or a
 *   pair in wave64), s SCC, - none.
 * Memory ops: "N" the bytes moved per lane (or per wave for SMEM) and how:
 *   "4" dwords, "u1"/"s1"/"u2"/"s2" sub-dword loads zero/sign-extended,
 *   "h2"/"H2"/"hu1"/"hs1"/"Hu1"/"Hs1" d16 loads into the low/high half. */
#define AMDI_OPS(X)                                                            \
    /* SOP1 */                                                                 \
    X(S_MOV_B32, "s_mov_b32", "s_mov_b32", "i:i")                              \
    X(S_MOV_B64, "s_mov_b64", "s_mov_b64", "l:l")                              \
    X(S_CMOV_B32, "s_cmov_b32", "s_cmov_b32", "i:i")                           \
    X(S_CMOV_B64, "s_cmov_b64", "s_cmov_b64", "l:l")                           \
    X(S_NOT_B32, "s_not_b32", "s_not_b32", "i:i")                              \
    X(S_NOT_B64, "s_not_b64", "s_not_b64", "l:l")                              \
    X(S_WQM_B32, "s_wqm_b32", "s_wqm_b32", "i:i")                              \
    X(S_WQM_B64, "s_wqm_b64", "s_wqm_b64", "l:l")                              \
    X(S_BREV_B32, "s_brev_b32", "s_brev_b32", "i:i")                           \
    X(S_BREV_B64, "s_brev_b64", "s_brev_b64", "l:l")                           \
    X(S_BCNT0_I32_B32, "s_bcnt0_i32_b32", "s_bcnt0_i32_b32", "i:i")            \
    X(S_BCNT0_I32_B64, "s_bcnt0_i32_b64", "s_bcnt0_i32_b64", "i:l")            \
    X(S_BCNT1_I32_B32, "s_bcnt1_i32_b32", "s_bcnt1_i32_b32", "i:i")            \
    X(S_BCNT1_I32_B64, "s_bcnt1_i32_b64", "s_bcnt1_i32_b64", "i:l")            \
    X(S_FF1_I32_B32, "s_ff1_i32_b32", "s_ctz_i32_b32", "i:i")                  \
    X(S_FF1_I32_B64, "s_ff1_i32_b64", "s_ctz_i32_b64", "i:l")                  \
    X(S_FLBIT_I32_B32, "s_flbit_i32_b32", "s_clz_i32_u32", "i:i")              \
    X(S_FLBIT_I32_B64, "s_flbit_i32_b64", "s_clz_i32_u64", "i:l")              \
    X(S_FLBIT_I32, "s_flbit_i32", "s_cls_i32", "i:i")                          \
    X(S_SEXT_I32_I8, "s_sext_i32_i8", "s_sext_i32_i8", "i:i")                  \
    X(S_SEXT_I32_I16, "s_sext_i32_i16", "s_sext_i32_i16", "i:i")               \
    X(S_BITSET0_B32, "s_bitset0_b32", "s_bitset0_b32", "i:i")                  \
    X(S_BITSET0_B64, "s_bitset0_b64", "s_bitset0_b64", "l:i")                  \
    X(S_BITSET1_B32, "s_bitset1_b32", "s_bitset1_b32", "i:i")                  \
    X(S_BITSET1_B64, "s_bitset1_b64", "s_bitset1_b64", "l:i")                  \
    X(S_GETPC_B64, "s_getpc_b64", "s_getpc_b64", "l:")                         \
    X(S_SETPC_B64, "s_setpc_b64", "s_setpc_b64", "-:l")                        \
    X(S_SWAPPC_B64, "s_swappc_b64", "s_swappc_b64", "l:l")                     \
    X(S_AND_SAVEEXEC_B32, "", "s_and_saveexec_b32", "i:i")                     \
    X(S_AND_SAVEEXEC_B64, "s_and_saveexec_b64", "s_and_saveexec_b64", "l:l")   \
    X(S_OR_SAVEEXEC_B32, "", "s_or_saveexec_b32", "i:i")                       \
    X(S_OR_SAVEEXEC_B64, "s_or_saveexec_b64", "s_or_saveexec_b64", "l:l")      \
    X(S_XOR_SAVEEXEC_B32, "", "s_xor_saveexec_b32", "i:i")                     \
    X(S_XOR_SAVEEXEC_B64, "s_xor_saveexec_b64", "s_xor_saveexec_b64", "l:l")   \
    X(S_ANDN2_SAVEEXEC_B32, "", "s_and_not1_saveexec_b32", "i:i")              \
    X(S_ANDN2_SAVEEXEC_B64, "s_andn2_saveexec_b64", "s_and_not1_saveexec_b64", "l:l") \
    X(S_ORN2_SAVEEXEC_B32, "", "s_or_not1_saveexec_b32", "i:i")                \
    X(S_ORN2_SAVEEXEC_B64, "s_orn2_saveexec_b64", "s_or_not1_saveexec_b64", "l:l") \
    X(S_ANDN1_SAVEEXEC_B32, "", "s_and_not0_saveexec_b32", "i:i")              \
    X(S_ANDN1_SAVEEXEC_B64, "s_andn1_saveexec_b64", "s_and_not0_saveexec_b64", "l:l") \
    X(S_ANDN2_WREXEC_B32, "", "s_and_not1_wrexec_b32", "i:i")                  \
    X(S_ANDN2_WREXEC_B64, "s_andn2_wrexec_b64", "s_and_not1_wrexec_b64", "l:l") \
    X(S_ABS_I32, "s_abs_i32", "s_abs_i32", "i:i")                              \
    /* SOP2 */                                                                 \
    X(S_ADD_U32, "s_add_u32", "s_add_u32", "i:ii")                             \
    X(S_SUB_U32, "s_sub_u32", "s_sub_u32", "i:ii")                             \
    X(S_ADD_I32, "s_add_i32", "s_add_i32", "i:ii")                             \
    X(S_SUB_I32, "s_sub_i32", "s_sub_i32", "i:ii")                             \
    X(S_ADDC_U32, "s_addc_u32", "s_addc_u32", "i:ii")                          \
    X(S_SUBB_U32, "s_subb_u32", "s_subb_u32", "i:ii")                          \
    X(S_MIN_I32, "s_min_i32", "s_min_i32", "i:ii")                             \
    X(S_MIN_U32, "s_min_u32", "s_min_u32", "i:ii")                             \
    X(S_MAX_I32, "s_max_i32", "s_max_i32", "i:ii")                             \
    X(S_MAX_U32, "s_max_u32", "s_max_u32", "i:ii")                             \
    X(S_CSELECT_B32, "s_cselect_b32", "s_cselect_b32", "i:ii")                 \
    X(S_CSELECT_B64, "s_cselect_b64", "s_cselect_b64", "l:ll")                 \
    X(S_AND_B32, "s_and_b32", "s_and_b32", "i:ii")                             \
    X(S_AND_B64, "s_and_b64", "s_and_b64", "l:ll")                             \
    X(S_OR_B32, "s_or_b32", "s_or_b32", "i:ii")                                \
    X(S_OR_B64, "s_or_b64", "s_or_b64", "l:ll")                                \
    X(S_XOR_B32, "s_xor_b32", "s_xor_b32", "i:ii")                             \
    X(S_XOR_B64, "s_xor_b64", "s_xor_b64", "l:ll")                             \
    X(S_ANDN2_B32, "s_andn2_b32", "s_and_not1_b32", "i:ii")                    \
    X(S_ANDN2_B64, "s_andn2_b64", "s_and_not1_b64", "l:ll")                    \
    X(S_ORN2_B32, "s_orn2_b32", "s_or_not1_b32", "i:ii")                       \
    X(S_ORN2_B64, "s_orn2_b64", "s_or_not1_b64", "l:ll")                       \
    X(S_NAND_B32, "s_nand_b32", "s_nand_b32", "i:ii")                          \
    X(S_NAND_B64, "s_nand_b64", "s_nand_b64", "l:ll")                          \
    X(S_NOR_B32, "s_nor_b32", "s_nor_b32", "i:ii")                             \
    X(S_NOR_B64, "s_nor_b64", "s_nor_b64", "l:ll")                             \
    X(S_XNOR_B32, "s_xnor_b32", "s_xnor_b32", "i:ii")                          \
    X(S_XNOR_B64, "s_xnor_b64", "s_xnor_b64", "l:ll")                          \
    X(S_LSHL_B32, "s_lshl_b32", "s_lshl_b32", "i:ii")                          \
    X(S_LSHL_B64, "s_lshl_b64", "s_lshl_b64", "l:li")                          \
    X(S_LSHR_B32, "s_lshr_b32", "s_lshr_b32", "i:ii")                          \
    X(S_LSHR_B64, "s_lshr_b64", "s_lshr_b64", "l:li")                          \
    X(S_ASHR_I32, "s_ashr_i32", "s_ashr_i32", "i:ii")                          \
    X(S_ASHR_I64, "s_ashr_i64", "s_ashr_i64", "L:Li")                          \
    X(S_BFM_B32, "s_bfm_b32", "s_bfm_b32", "i:ii")                             \
    X(S_BFM_B64, "s_bfm_b64", "s_bfm_b64", "l:ii")                             \
    X(S_MUL_I32, "s_mul_i32", "s_mul_i32", "i:ii")                             \
    X(S_MUL_HI_U32, "s_mul_hi_u32", "s_mul_hi_u32", "i:ii")                    \
    X(S_MUL_HI_I32, "s_mul_hi_i32", "s_mul_hi_i32", "i:ii")                    \
    X(S_BFE_U32, "s_bfe_u32", "s_bfe_u32", "i:ii")                             \
    X(S_BFE_I32, "s_bfe_i32", "s_bfe_i32", "i:ii")                             \
    X(S_BFE_U64, "s_bfe_u64", "s_bfe_u64", "l:li")                             \
    X(S_BFE_I64, "s_bfe_i64", "s_bfe_i64", "L:Li")                             \
    X(S_ABSDIFF_I32, "s_absdiff_i32", "s_absdiff_i32", "i:ii")                 \
    X(S_LSHL1_ADD_U32, "s_lshl1_add_u32", "s_lshl1_add_u32", "i:ii")           \
    X(S_LSHL2_ADD_U32, "s_lshl2_add_u32", "s_lshl2_add_u32", "i:ii")           \
    X(S_LSHL3_ADD_U32, "s_lshl3_add_u32", "s_lshl3_add_u32", "i:ii")           \
    X(S_LSHL4_ADD_U32, "s_lshl4_add_u32", "s_lshl4_add_u32", "i:ii")           \
    X(S_PACK_LL_B32_B16, "s_pack_ll_b32_b16", "s_pack_ll_b32_b16", "i:ii")     \
    X(S_PACK_LH_B32_B16, "s_pack_lh_b32_b16", "s_pack_lh_b32_b16", "i:ii")     \
    X(S_PACK_HH_B32_B16, "s_pack_hh_b32_b16", "s_pack_hh_b32_b16", "i:ii")     \
    X(S_PACK_HL_B32_B16, "s_pack_hl_b32_b16", "s_pack_hl_b32_b16", "i:ii")     \
    /* SOPK */                                                                 \
    X(S_MOVK_I32, "s_movk_i32", "s_movk_i32", "i:")                            \
    X(S_CMOVK_I32, "s_cmovk_i32", "s_cmovk_i32", "i:")                         \
    X(S_CMPK_EQ_I32, "s_cmpk_eq_i32", "s_cmpk_eq_i32", "-:i")                  \
    X(S_CMPK_LG_I32, "s_cmpk_lg_i32", "s_cmpk_lg_i32", "-:i")                  \
    X(S_CMPK_GT_I32, "s_cmpk_gt_i32", "s_cmpk_gt_i32", "-:i")                  \
    X(S_CMPK_GE_I32, "s_cmpk_ge_i32", "s_cmpk_ge_i32", "-:i")                  \
    X(S_CMPK_LT_I32, "s_cmpk_lt_i32", "s_cmpk_lt_i32", "-:i")                  \
    X(S_CMPK_LE_I32, "s_cmpk_le_i32", "s_cmpk_le_i32", "-:i")                  \
    X(S_CMPK_EQ_U32, "s_cmpk_eq_u32", "s_cmpk_eq_u32", "-:i")                  \
    X(S_CMPK_LG_U32, "s_cmpk_lg_u32", "s_cmpk_lg_u32", "-:i")                  \
    X(S_CMPK_GT_U32, "s_cmpk_gt_u32", "s_cmpk_gt_u32", "-:i")                  \
    X(S_CMPK_GE_U32, "s_cmpk_ge_u32", "s_cmpk_ge_u32", "-:i")                  \
    X(S_CMPK_LT_U32, "s_cmpk_lt_u32", "s_cmpk_lt_u32", "-:i")                  \
    X(S_CMPK_LE_U32, "s_cmpk_le_u32", "s_cmpk_le_u32", "-:i")                  \
    X(S_ADDK_I32, "s_addk_i32", "s_addk_i32", "i:")                            \
    X(S_MULK_I32, "s_mulk_i32", "s_mulk_i32", "i:")                            \
    X(S_GETREG_B32, "s_getreg_b32", "s_getreg_b32", "i:")                      \
    X(S_SETREG_B32, "s_setreg_b32", "s_setreg_b32", "-:i")                     \
    X(S_SETREG_IMM32_B32, "s_setreg_imm32_b32", "s_setreg_imm32_b32", "-:")    \
    X(S_CALL_B64, "s_call_b64", "s_call_b64", "l:")                            \
    X(S_WAITCNT_VSCNT, "", "s_waitcnt_vscnt", "-:i")                           \
    X(S_WAITCNT_VMCNT, "", "s_waitcnt_vmcnt", "-:i")                           \
    X(S_WAITCNT_EXPCNT, "", "s_waitcnt_expcnt", "-:i")                         \
    X(S_WAITCNT_LGKMCNT, "", "s_waitcnt_lgkmcnt", "-:i")                       \
    X(S_VERSION, "", "s_version", "-:")                                        \
    /* SOPC */                                                                 \
    X(S_CMP_EQ_I32, "s_cmp_eq_i32", "s_cmp_eq_i32", "-:ii")                    \
    X(S_CMP_LG_I32, "s_cmp_lg_i32", "s_cmp_lg_i32", "-:ii")                    \
    X(S_CMP_GT_I32, "s_cmp_gt_i32", "s_cmp_gt_i32", "-:ii")                    \
    X(S_CMP_GE_I32, "s_cmp_ge_i32", "s_cmp_ge_i32", "-:ii")                    \
    X(S_CMP_LT_I32, "s_cmp_lt_i32", "s_cmp_lt_i32", "-:ii")                    \
    X(S_CMP_LE_I32, "s_cmp_le_i32", "s_cmp_le_i32", "-:ii")                    \
    X(S_CMP_EQ_U32, "s_cmp_eq_u32", "s_cmp_eq_u32", "-:ii")                    \
    X(S_CMP_LG_U32, "s_cmp_lg_u32", "s_cmp_lg_u32", "-:ii")                    \
    X(S_CMP_GT_U32, "s_cmp_gt_u32", "s_cmp_gt_u32", "-:ii")                    \
    X(S_CMP_GE_U32, "s_cmp_ge_u32", "s_cmp_ge_u32", "-:ii")                    \
    X(S_CMP_LT_U32, "s_cmp_lt_u32", "s_cmp_lt_u32", "-:ii")                    \
    X(S_CMP_LE_U32, "s_cmp_le_u32", "s_cmp_le_u32", "-:ii")                    \
    X(S_BITCMP0_B32, "s_bitcmp0_b32", "s_bitcmp0_b32", "-:ii")                 \
    X(S_BITCMP1_B32, "s_bitcmp1_b32", "s_bitcmp1_b32", "-:ii")                 \
    X(S_BITCMP0_B64, "s_bitcmp0_b64", "s_bitcmp0_b64", "-:li")                 \
    X(S_BITCMP1_B64, "s_bitcmp1_b64", "s_bitcmp1_b64", "-:li")                 \
    X(S_CMP_EQ_U64, "s_cmp_eq_u64", "s_cmp_eq_u64", "-:ll")                    \
    X(S_CMP_LG_U64, "s_cmp_lg_u64", "s_cmp_lg_u64", "-:ll")                    \
    /* SOPP */                                                                 \
    X(S_NOP, "s_nop", "s_nop", "")                                             \
    X(S_ENDPGM, "s_endpgm", "s_endpgm", "")                                    \
    X(S_BRANCH, "s_branch", "s_branch", "")                                    \
    X(S_CBRANCH_SCC0, "s_cbranch_scc0", "s_cbranch_scc0", "")                  \
    X(S_CBRANCH_SCC1, "s_cbranch_scc1", "s_cbranch_scc1", "")                  \
    X(S_CBRANCH_VCCZ, "s_cbranch_vccz", "s_cbranch_vccz", "")                  \
    X(S_CBRANCH_VCCNZ, "s_cbranch_vccnz", "s_cbranch_vccnz", "")               \
    X(S_CBRANCH_EXECZ, "s_cbranch_execz", "s_cbranch_execz", "")               \
    X(S_CBRANCH_EXECNZ, "s_cbranch_execnz", "s_cbranch_execnz", "")            \
    X(S_BARRIER, "s_barrier", "s_barrier", "")                                 \
    X(S_WAITCNT, "s_waitcnt", "s_waitcnt", "")                                 \
    X(S_SETHALT, "s_sethalt", "s_sethalt", "")                                 \
    X(S_SLEEP, "s_sleep", "s_sleep", "")                                       \
    X(S_SETPRIO, "s_setprio", "s_setprio", "")                                 \
    X(S_SENDMSG, "s_sendmsg", "s_sendmsg", "")                                 \
    X(S_TRAP, "s_trap", "s_trap", "")                                          \
    X(S_ICACHE_INV, "s_icache_inv", "s_icache_inv", "")                        \
    X(S_CODE_END, "", "s_code_end", "")                                        \
    X(S_CLAUSE, "", "s_clause", "")                                            \
    X(S_DELAY_ALU, "", "s_delay_alu", "")                                      \
    X(S_WAITCNT_DEPCTR, "", "s_waitcnt_depctr", "")                            \
    X(S_INST_PREFETCH, "", "s_set_inst_prefetch_distance", "")                 \
    X(S_DENORM_MODE, "", "s_denorm_mode", "")                                  \
    X(S_ROUND_MODE, "", "s_round_mode", "")                                    \
    X(S_SET_GPR_IDX_OFF, "s_set_gpr_idx_off", "", "")                          \
    /* SMEM */                                                                 \
    X(S_LOAD_B32, "s_load_dword", "s_load_b32", "4")                           \
    X(S_LOAD_B64, "s_load_dwordx2", "s_load_b64", "8")                         \
    X(S_LOAD_B128, "s_load_dwordx4", "s_load_b128", "16")                      \
    X(S_LOAD_B256, "s_load_dwordx8", "s_load_b256", "32")                      \
    X(S_LOAD_B512, "s_load_dwordx16", "s_load_b512", "64")                     \
    X(S_DCACHE_INV, "s_dcache_inv", "s_dcache_inv", "")                        \
    X(S_GL1_INV, "", "s_gl1_inv", "")                                          \
    X(S_MEMTIME, "s_memtime", "", "8")                                         \
    X(S_MEMREALTIME, "s_memrealtime", "", "8")                                 \
    /* VOP1 */                                                                 \
    X(V_NOP, "v_nop", "v_nop", "-:")                                           \
    X(V_MOV_B32, "v_mov_b32", "v_mov_b32", "i:i")                              \
    X(V_READFIRSTLANE_B32, "v_readfirstlane_b32", "v_readfirstlane_b32", "i:i") \
    X(V_CVT_I32_F64, "v_cvt_i32_f64", "v_cvt_i32_f64", "i:d")                  \
    X(V_CVT_F64_I32, "v_cvt_f64_i32", "v_cvt_f64_i32", "d:i")                  \
    X(V_CVT_F32_I32, "v_cvt_f32_i32", "v_cvt_f32_i32", "f:i")                  \
    X(V_CVT_F32_U32, "v_cvt_f32_u32", "v_cvt_f32_u32", "f:i")                  \
    X(V_CVT_U32_F32, "v_cvt_u32_f32", "v_cvt_u32_f32", "i:f")                  \
    X(V_CVT_I32_F32, "v_cvt_i32_f32", "v_cvt_i32_f32", "i:f")                  \
    X(V_CVT_F16_F32, "v_cvt_f16_f32", "v_cvt_f16_f32", "h:f")                  \
    X(V_CVT_F32_F16, "v_cvt_f32_f16", "v_cvt_f32_f16", "f:h")                  \
    X(V_CVT_RPI_I32_F32, "v_cvt_rpi_i32_f32", "v_cvt_nearest_i32_f32", "i:f")  \
    X(V_CVT_FLR_I32_F32, "v_cvt_flr_i32_f32", "v_cvt_floor_i32_f32", "i:f")    \
    X(V_CVT_F32_F64, "v_cvt_f32_f64", "v_cvt_f32_f64", "f:d")                  \
    X(V_CVT_F64_F32, "v_cvt_f64_f32", "v_cvt_f64_f32", "d:f")                  \
    X(V_CVT_F32_UBYTE0, "v_cvt_f32_ubyte0", "v_cvt_f32_ubyte0", "f:i")         \
    X(V_CVT_F32_UBYTE1, "v_cvt_f32_ubyte1", "v_cvt_f32_ubyte1", "f:i")         \
    X(V_CVT_F32_UBYTE2, "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte2", "f:i")         \
    X(V_CVT_F32_UBYTE3, "v_cvt_f32_ubyte3", "v_cvt_f32_ubyte3", "f:i")         \
    X(V_CVT_U32_F64, "v_cvt_u32_f64", "v_cvt_u32_f64", "i:d")                  \
    X(V_CVT_F64_U32, "v_cvt_f64_u32", "v_cvt_f64_u32", "d:i")                  \
    X(V_TRUNC_F64, "v_trunc_f64", "v_trunc_f64", "d:d")                        \
    X(V_CEIL_F64, "v_ceil_f64", "v_ceil_f64", "d:d")                           \
    X(V_RNDNE_F64, "v_rndne_f64", "v_rndne_f64", "d:d")                        \
    X(V_FLOOR_F64, "v_floor_f64", "v_floor_f64", "d:d")                        \
    X(V_FRACT_F32, "v_fract_f32", "v_fract_f32", "f:f")                        \
    X(V_TRUNC_F32, "v_trunc_f32", "v_trunc_f32", "f:f")                        \
    X(V_CEIL_F32, "v_ceil_f32", "v_ceil_f32", "f:f")                           \
    X(V_RNDNE_F32, "v_rndne_f32", "v_rndne_f32", "f:f")                        \
    X(V_FLOOR_F32, "v_floor_f32", "v_floor_f32", "f:f")                        \
    X(V_EXP_F32, "v_exp_f32", "v_exp_f32", "f:f")                              \
    X(V_LOG_F32, "v_log_f32", "v_log_f32", "f:f")                              \
    X(V_RCP_F32, "v_rcp_f32", "v_rcp_f32", "f:f")                              \
    X(V_RCP_IFLAG_F32, "v_rcp_iflag_f32", "v_rcp_iflag_f32", "f:f")            \
    X(V_RSQ_F32, "v_rsq_f32", "v_rsq_f32", "f:f")                              \
    X(V_RCP_F64, "v_rcp_f64", "v_rcp_f64", "d:d")                              \
    X(V_RSQ_F64, "v_rsq_f64", "v_rsq_f64", "d:d")                              \
    X(V_SQRT_F32, "v_sqrt_f32", "v_sqrt_f32", "f:f")                           \
    X(V_SQRT_F64, "v_sqrt_f64", "v_sqrt_f64", "d:d")                           \
    X(V_SIN_F32, "v_sin_f32", "v_sin_f32", "f:f")                              \
    X(V_COS_F32, "v_cos_f32", "v_cos_f32", "f:f")                              \
    X(V_NOT_B32, "v_not_b32", "v_not_b32", "i:i")                              \
    X(V_BFREV_B32, "v_bfrev_b32", "v_bfrev_b32", "i:i")                        \
    X(V_FFBH_U32, "v_ffbh_u32", "v_clz_i32_u32", "i:i")                        \
    X(V_FFBL_B32, "v_ffbl_b32", "v_ctz_i32_b32", "i:i")                        \
    X(V_FFBH_I32, "v_ffbh_i32", "v_cls_i32", "i:i")                            \
    X(V_FREXP_EXP_I32_F64, "v_frexp_exp_i32_f64", "v_frexp_exp_i32_f64", "i:d") \
    X(V_FREXP_MANT_F64, "v_frexp_mant_f64", "v_frexp_mant_f64", "d:d")         \
    X(V_FRACT_F64, "v_fract_f64", "v_fract_f64", "d:d")                        \
    X(V_FREXP_EXP_I32_F32, "v_frexp_exp_i32_f32", "v_frexp_exp_i32_f32", "i:f") \
    X(V_FREXP_MANT_F32, "v_frexp_mant_f32", "v_frexp_mant_f32", "f:f")         \
    X(V_MOV_B16, "", "v_mov_b16", "h:h")                                       \
    X(V_CVT_F16_U16, "v_cvt_f16_u16", "v_cvt_f16_u16", "h:h")                  \
    X(V_CVT_F16_I16, "v_cvt_f16_i16", "v_cvt_f16_i16", "h:h")                  \
    X(V_CVT_U16_F16, "v_cvt_u16_f16", "v_cvt_u16_f16", "h:h")                  \
    X(V_CVT_I16_F16, "v_cvt_i16_f16", "v_cvt_i16_f16", "h:h")                  \
    X(V_RCP_F16, "v_rcp_f16", "v_rcp_f16", "h:h")                              \
    X(V_SQRT_F16, "v_sqrt_f16", "v_sqrt_f16", "h:h")                           \
    X(V_RSQ_F16, "v_rsq_f16", "v_rsq_f16", "h:h")                              \
    X(V_LOG_F16, "v_log_f16", "v_log_f16", "h:h")                              \
    X(V_EXP_F16, "v_exp_f16", "v_exp_f16", "h:h")                              \
    X(V_FLOOR_F16, "v_floor_f16", "v_floor_f16", "h:h")                        \
    X(V_CEIL_F16, "v_ceil_f16", "v_ceil_f16", "h:h")                           \
    X(V_TRUNC_F16, "v_trunc_f16", "v_trunc_f16", "h:h")                        \
    X(V_RNDNE_F16, "v_rndne_f16", "v_rndne_f16", "h:h")                        \
    X(V_NOT_B16, "", "v_not_b16", "h:h")                                       \
    X(V_CVT_I32_I16, "", "v_cvt_i32_i16", "i:h")                               \
    X(V_CVT_U32_U16, "", "v_cvt_u32_u16", "i:h")                               \
    X(V_SWAP_B32, "v_swap_b32", "v_swap_b32", "i:i")                           \
    X(V_PERMLANE64_B32, "", "v_permlane64_b32", "i:i")                         \
    X(V_MOV_B64, "v_mov_b64", "", "l:l")                                       \
    /* VOP2 */                                                                 \
    X(V_CNDMASK_B32, "v_cndmask_b32", "v_cndmask_b32", "i:iim")                \
    X(V_ADD_F32, "v_add_f32", "v_add_f32", "f:ff")                             \
    X(V_SUB_F32, "v_sub_f32", "v_sub_f32", "f:ff")                             \
    X(V_SUBREV_F32, "v_subrev_f32", "v_subrev_f32", "f:ff")                    \
    X(V_MUL_LEGACY_F32, "v_mul_legacy_f32", "v_mul_dx9_zero_f32", "f:ff")      \
    X(V_MUL_F32, "v_mul_f32", "v_mul_f32", "f:ff")                             \
    X(V_MUL_I32_I24, "v_mul_i32_i24", "v_mul_i32_i24", "i:ii")                 \
    X(V_MUL_HI_I32_I24, "v_mul_hi_i32_i24", "v_mul_hi_i32_i24", "i:ii")        \
    X(V_MUL_U32_U24, "v_mul_u32_u24", "v_mul_u32_u24", "i:ii")                 \
    X(V_MUL_HI_U32_U24, "v_mul_hi_u32_u24", "v_mul_hi_u32_u24", "i:ii")        \
    X(V_MIN_F32, "v_min_f32", "v_min_f32", "f:ff")                             \
    X(V_MAX_F32, "v_max_f32", "v_max_f32", "f:ff")                             \
    X(V_MIN_I32, "v_min_i32", "v_min_i32", "i:ii")                             \
    X(V_MAX_I32, "v_max_i32", "v_max_i32", "i:ii")                             \
    X(V_MIN_U32, "v_min_u32", "v_min_u32", "i:ii")                             \
    X(V_MAX_U32, "v_max_u32", "v_max_u32", "i:ii")                             \
    X(V_LSHRREV_B32, "v_lshrrev_b32", "v_lshrrev_b32", "i:ii")                 \
    X(V_ASHRREV_I32, "v_ashrrev_i32", "v_ashrrev_i32", "i:ii")                 \
    X(V_LSHLREV_B32, "v_lshlrev_b32", "v_lshlrev_b32", "i:ii")                 \
    X(V_AND_B32, "v_and_b32", "v_and_b32", "i:ii")                             \
    X(V_OR_B32, "v_or_b32", "v_or_b32", "i:ii")                                \
    X(V_XOR_B32, "v_xor_b32", "v_xor_b32", "i:ii")                             \
    X(V_XNOR_B32, "v_xnor_b32", "v_xnor_b32", "i:ii")                          \
    X(V_MAC_F32, "v_mac_f32", "", "f:fff")                                     \
    X(V_MADMK_F32, "v_madmk_f32", "", "f:fff")                                 \
    X(V_MADAK_F32, "v_madak_f32", "", "f:fff")                                 \
    X(V_FMAC_F32, "v_fmac_f32", "v_fmac_f32", "f:fff")                         \
    X(V_FMAMK_F32, "v_fmamk_f32", "v_fmamk_f32", "f:fff")                                 \
    X(V_FMAAK_F32, "v_fmaak_f32", "v_fmaak_f32", "f:fff")                                 \
    X(V_FMAC_F64, "v_fmac_f64", "", "d:ddd")                                   \
    X(V_ADD_CO_U32, "v_add_co_u32", "v_add_co_u32", "i:ii")                    \
    X(V_SUB_CO_U32, "v_sub_co_u32", "v_sub_co_u32", "i:ii")                    \
    X(V_SUBREV_CO_U32, "v_subrev_co_u32", "v_subrev_co_u32", "i:ii")           \
    X(V_ADDC_CO_U32, "v_addc_co_u32", "v_add_co_ci_u32", "i:iim")              \
    X(V_SUBB_CO_U32, "v_subb_co_u32", "v_sub_co_ci_u32", "i:iim")              \
    X(V_SUBBREV_CO_U32, "v_subbrev_co_u32", "v_subrev_co_ci_u32", "i:iim")     \
    X(V_ADD_U32, "v_add_u32", "v_add_nc_u32", "i:ii")                          \
    X(V_SUB_U32, "v_sub_u32", "v_sub_nc_u32", "i:ii")                          \
    X(V_SUBREV_U32, "v_subrev_u32", "v_subrev_nc_u32", "i:ii")                 \
    X(V_ADD_F16, "v_add_f16", "v_add_f16", "h:hh")                             \
    X(V_SUB_F16, "v_sub_f16", "v_sub_f16", "h:hh")                             \
    X(V_SUBREV_F16, "v_subrev_f16", "v_subrev_f16", "h:hh")                    \
    X(V_MUL_F16, "v_mul_f16", "v_mul_f16", "h:hh")                             \
    X(V_MAC_F16, "v_mac_f16", "", "h:hhh")                                     \
    X(V_FMAC_F16, "", "v_fmac_f16", "h:hhh")                                   \
    X(V_ADD_U16, "v_add_u16", "v_add_nc_u16", "h:hh")                          \
    X(V_SUB_U16, "v_sub_u16", "v_sub_nc_u16", "h:hh")                          \
    X(V_SUBREV_U16, "v_subrev_u16", "", "h:hh")                                \
    X(V_MUL_LO_U16, "v_mul_lo_u16", "v_mul_lo_u16", "h:hh")                    \
    X(V_LSHLREV_B16, "v_lshlrev_b16", "v_lshlrev_b16", "h:hh")                 \
    X(V_LSHRREV_B16, "v_lshrrev_b16", "v_lshrrev_b16", "h:hh")                 \
    X(V_ASHRREV_I16, "v_ashrrev_i16", "v_ashrrev_i16", "h:hh")                 \
    X(V_MAX_F16, "v_max_f16", "v_max_f16", "h:hh")                             \
    X(V_MIN_F16, "v_min_f16", "v_min_f16", "h:hh")                             \
    X(V_MAX_U16, "v_max_u16", "v_max_u16", "h:hh")                             \
    X(V_MAX_I16, "v_max_i16", "v_max_i16", "h:hh")                             \
    X(V_MIN_U16, "v_min_u16", "v_min_u16", "h:hh")                             \
    X(V_MIN_I16, "v_min_i16", "v_min_i16", "h:hh")                             \
    X(V_LDEXP_F16, "v_ldexp_f16", "v_ldexp_f16", "h:hh")                       \
    X(V_AND_B16, "", "v_and_b16", "h:hh")                                      \
    X(V_OR_B16, "", "v_or_b16", "h:hh")                                        \
    X(V_XOR_B16, "", "v_xor_b16", "h:hh")                                      \
    X(V_CVT_PKRTZ_F16_F32, "v_cvt_pkrtz_f16_f32", "v_cvt_pk_rtz_f16_f32", "i:ff") \
    X(V_PK_FMAC_F16, "v_pk_fmac_f16", "v_pk_fmac_f16", "p:ppp")                \
    /* integer and f16 dot products accumulating into the destination */     \
    X(V_DOT2C_F32_F16, "v_dot2c_f32_f16", "v_dot2acc_f32_f16", "f:ppf")        \
    X(V_DOT2C_F32_BF16, "", "v_dot2acc_f32_bf16", "f:ppf")                     \
    X(V_DOT2C_I32_I16, "v_dot2c_i32_i16", "", "i:ppi")                         \
    X(V_DOT4C_I32_I8, "v_dot4c_i32_i8", "", "i:iii")                           \
    X(V_DOT8C_I32_I4, "v_dot8c_i32_i4", "", "i:iii")                           \
    /* VOP3 only */                                                            \
    X(V_MAD_F32, "v_mad_f32", "", "f:fff")                                     \
    X(V_MAD_I32_I24, "v_mad_i32_i24", "v_mad_i32_i24", "i:iii")                \
    X(V_MAD_U32_U24, "v_mad_u32_u24", "v_mad_u32_u24", "i:iii")                \
    X(V_BFE_U32, "v_bfe_u32", "v_bfe_u32", "i:iii")                            \
    X(V_BFE_I32, "v_bfe_i32", "v_bfe_i32", "i:iii")                            \
    X(V_BFI_B32, "v_bfi_b32", "v_bfi_b32", "i:iii")                            \
    X(V_FMA_F32, "v_fma_f32", "v_fma_f32", "f:fff")                            \
    X(V_FMA_F64, "v_fma_f64", "v_fma_f64", "d:ddd")                            \
    X(V_ALIGNBIT_B32, "v_alignbit_b32", "v_alignbit_b32", "i:iih")             \
    X(V_ALIGNBYTE_B32, "v_alignbyte_b32", "v_alignbyte_b32", "i:iih")          \
    X(V_MIN3_F32, "v_min3_f32", "v_min3_f32", "f:fff")                         \
    X(V_MIN3_I32, "v_min3_i32", "v_min3_i32", "i:iii")                         \
    X(V_MIN3_U32, "v_min3_u32", "v_min3_u32", "i:iii")                         \
    X(V_MAX3_F32, "v_max3_f32", "v_max3_f32", "f:fff")                         \
    X(V_MAX3_I32, "v_max3_i32", "v_max3_i32", "i:iii")                         \
    X(V_MAX3_U32, "v_max3_u32", "v_max3_u32", "i:iii")                         \
    X(V_MED3_F32, "v_med3_f32", "v_med3_f32", "f:fff")                         \
    X(V_MED3_I32, "v_med3_i32", "v_med3_i32", "i:iii")                         \
    X(V_MED3_U32, "v_med3_u32", "v_med3_u32", "i:iii")                         \
    X(V_SAD_U32, "v_sad_u32", "v_sad_u32", "i:iii")                            \
    X(V_DIV_FIXUP_F32, "v_div_fixup_f32", "v_div_fixup_f32", "f:fff")          \
    X(V_DIV_FIXUP_F64, "v_div_fixup_f64", "v_div_fixup_f64", "d:ddd")          \
    X(V_DIV_SCALE_F32, "v_div_scale_f32", "v_div_scale_f32", "f:fff")          \
    X(V_DIV_SCALE_F64, "v_div_scale_f64", "v_div_scale_f64", "d:ddd")          \
    X(V_DIV_FMAS_F32, "v_div_fmas_f32", "v_div_fmas_f32", "f:fff")             \
    X(V_DIV_FMAS_F64, "v_div_fmas_f64", "v_div_fmas_f64", "d:ddd")             \
    X(V_MAD_U64_U32, "v_mad_u64_u32", "v_mad_u64_u32", "l:iil")                \
    X(V_MAD_I64_I32, "v_mad_i64_i32", "v_mad_i64_i32", "L:iiL")                \
    X(V_PERM_B32, "v_perm_b32", "v_perm_b32", "i:iii")                         \
    X(V_XAD_U32, "v_xad_u32", "v_xad_u32", "i:iii")                            \
    X(V_XOR3_B32, "", "v_xor3_b32", "i:iii")                                   \
    X(V_LSHL_ADD_U32, "v_lshl_add_u32", "v_lshl_add_u32", "i:iii")             \
    X(V_ADD_LSHL_U32, "v_add_lshl_u32", "v_add_lshl_u32", "i:iii")             \
    X(V_ADD3_U32, "v_add3_u32", "v_add3_u32", "i:iii")                         \
    X(V_LSHL_OR_B32, "v_lshl_or_b32", "v_lshl_or_b32", "i:iii")                \
    X(V_AND_OR_B32, "v_and_or_b32", "v_and_or_b32", "i:iii")                   \
    X(V_OR3_B32, "v_or3_b32", "v_or3_b32", "i:iii")                            \
    X(V_MAD_U32_U16, "v_mad_u32_u16", "v_mad_u32_u16", "i:hhi")                \
    X(V_MAD_I32_I16, "v_mad_i32_i16", "v_mad_i32_i16", "i:hhi")                \
    X(V_FMA_F16, "v_fma_f16", "v_fma_f16", "h:hhh")                            \
    X(V_MAD_U16, "v_mad_u16", "v_mad_u16", "h:hhh")                            \
    X(V_MAD_LEGACY_U16, "v_mad_legacy_u16", "", "h:hhh")                       \
    X(V_MAD_LEGACY_I16, "v_mad_legacy_i16", "", "h:hhh")                       \
    X(V_MAD_LEGACY_F16, "v_mad_legacy_f16", "", "h:hhh")                       \
    X(V_MAD_F16, "v_mad_f16", "", "h:hhh")                                     \
    X(V_FMA_LEGACY_F16, "v_fma_legacy_f16", "", "h:hhh")                       \
    X(V_MIN3_I16, "v_min3_i16", "v_min3_i16", "h:hhh")                         \
    X(V_MIN3_U16, "v_min3_u16", "v_min3_u16", "h:hhh")                         \
    X(V_MAX3_I16, "v_max3_i16", "v_max3_i16", "h:hhh")                         \
    X(V_MAX3_U16, "v_max3_u16", "v_max3_u16", "h:hhh")                         \
    X(V_MED3_I16, "v_med3_i16", "v_med3_i16", "h:hhh")                         \
    X(V_MED3_U16, "v_med3_u16", "v_med3_u16", "h:hhh")                         \
    X(V_MAD_I16, "v_mad_i16", "v_mad_i16", "h:hhh")                            \
    X(V_DIV_FIXUP_F16, "v_div_fixup_f16", "v_div_fixup_f16", "h:hhh")          \
    X(V_MIN3_F16, "v_min3_f16", "v_min3_f16", "h:hhh")                         \
    X(V_MAX3_F16, "v_max3_f16", "v_max3_f16", "h:hhh")                         \
    X(V_MED3_F16, "v_med3_f16", "v_med3_f16", "h:hhh")                         \
    X(V_CNDMASK_B16, "", "v_cndmask_b16", "h:hhm")                             \
    X(V_MAXMIN_F32, "", "v_maxmin_f32", "f:fff")                               \
    X(V_MINMAX_F32, "", "v_minmax_f32", "f:fff")                               \
    X(V_MAXMIN_U32, "", "v_maxmin_u32", "i:iii")                               \
    X(V_MINMAX_U32, "", "v_minmax_u32", "i:iii")                               \
    X(V_MAXMIN_I32, "", "v_maxmin_i32", "i:iii")                               \
    X(V_MINMAX_I32, "", "v_minmax_i32", "i:iii")                               \
    X(V_ADD_F64, "v_add_f64", "v_add_f64", "d:dd")                             \
    X(V_MUL_F64, "v_mul_f64", "v_mul_f64", "d:dd")                             \
    X(V_MIN_F64, "v_min_f64", "v_min_f64", "d:dd")                             \
    X(V_MAX_F64, "v_max_f64", "v_max_f64", "d:dd")                             \
    X(V_LDEXP_F64, "v_ldexp_f64", "v_ldexp_f64", "d:di")                       \
    X(V_MUL_LO_U32, "v_mul_lo_u32", "v_mul_lo_u32", "i:ii")                    \
    X(V_MUL_HI_U32, "v_mul_hi_u32", "v_mul_hi_u32", "i:ii")                    \
    X(V_MUL_HI_I32, "v_mul_hi_i32", "v_mul_hi_i32", "i:ii")                    \
    X(V_LDEXP_F32, "v_ldexp_f32", "v_ldexp_f32", "f:fi")                       \
    X(V_READLANE_B32, "v_readlane_b32", "v_readlane_b32", "i:ii")              \
    X(V_WRITELANE_B32, "v_writelane_b32", "v_writelane_b32", "i:ii")           \
    X(V_BCNT_U32_B32, "v_bcnt_u32_b32", "v_bcnt_u32_b32", "i:ii")              \
    X(V_MBCNT_LO_U32_B32, "v_mbcnt_lo_u32_b32", "v_mbcnt_lo_u32_b32", "i:ii")  \
    X(V_MBCNT_HI_U32_B32, "v_mbcnt_hi_u32_b32", "v_mbcnt_hi_u32_b32", "i:ii")  \
    X(V_LSHLREV_B64, "v_lshlrev_b64", "v_lshlrev_b64", "l:il")                 \
    X(V_LSHRREV_B64, "v_lshrrev_b64", "v_lshrrev_b64", "l:il")                 \
    X(V_ASHRREV_I64, "v_ashrrev_i64", "v_ashrrev_i64", "L:iL")                 \
    X(V_BFM_B32, "v_bfm_b32", "v_bfm_b32", "i:ii")                             \
    X(V_CVT_PK_U16_U32, "v_cvt_pk_u16_u32", "v_cvt_pk_u16_u32", "i:ii")        \
    X(V_CVT_PK_I16_I32, "v_cvt_pk_i16_i32", "v_cvt_pk_i16_i32", "i:ii")        \
    X(V_ADD_I32, "v_add_i32", "v_add_nc_i32", "i:ii")                          \
    X(V_SUB_I32, "v_sub_i32", "v_sub_nc_i32", "i:ii")                          \
    X(V_PACK_B32_F16, "v_pack_b32_f16", "v_pack_b32_f16", "i:hh")              \
    X(V_LSHL_ADD_U64, "v_lshl_add_u64", "", "l:lil")                           \
    /* VOP3P */                                                                \
    X(V_PK_MAD_I16, "v_pk_mad_i16", "v_pk_mad_i16", "p:ppp")                   \
    X(V_PK_MUL_LO_U16, "v_pk_mul_lo_u16", "v_pk_mul_lo_u16", "p:pp")           \
    X(V_PK_ADD_I16, "v_pk_add_i16", "v_pk_add_i16", "p:pp")                    \
    X(V_PK_SUB_I16, "v_pk_sub_i16", "v_pk_sub_i16", "p:pp")                    \
    X(V_PK_LSHLREV_B16, "v_pk_lshlrev_b16", "v_pk_lshlrev_b16", "p:pp")        \
    X(V_PK_LSHRREV_B16, "v_pk_lshrrev_b16", "v_pk_lshrrev_b16", "p:pp")        \
    X(V_PK_ASHRREV_I16, "v_pk_ashrrev_i16", "v_pk_ashrrev_i16", "p:pp")        \
    X(V_PK_MAX_I16, "v_pk_max_i16", "v_pk_max_i16", "p:pp")                    \
    X(V_PK_MIN_I16, "v_pk_min_i16", "v_pk_min_i16", "p:pp")                    \
    X(V_PK_MAD_U16, "v_pk_mad_u16", "v_pk_mad_u16", "p:ppp")                   \
    X(V_PK_ADD_U16, "v_pk_add_u16", "v_pk_add_u16", "p:pp")                    \
    X(V_PK_SUB_U16, "v_pk_sub_u16", "v_pk_sub_u16", "p:pp")                    \
    X(V_PK_MAX_U16, "v_pk_max_u16", "v_pk_max_u16", "p:pp")                    \
    X(V_PK_MIN_U16, "v_pk_min_u16", "v_pk_min_u16", "p:pp")                    \
    X(V_PK_FMA_F16, "v_pk_fma_f16", "v_pk_fma_f16", "p:ppp")                   \
    X(V_PK_ADD_F16, "v_pk_add_f16", "v_pk_add_f16", "p:pp")                    \
    X(V_PK_MUL_F16, "v_pk_mul_f16", "v_pk_mul_f16", "p:pp")                    \
    X(V_PK_MIN_F16, "v_pk_min_f16", "v_pk_min_f16", "p:pp")                    \
    X(V_PK_MAX_F16, "v_pk_max_f16", "v_pk_max_f16", "p:pp")                    \
    X(V_FMA_MIX_F32, "v_fma_mix_f32", "v_fma_mix_f32", "f:ppp")                \
    X(V_FMA_MIXLO_F16, "v_fma_mixlo_f16", "v_fma_mixlo_f16", "p:ppp")          \
    X(V_FMA_MIXHI_F16, "v_fma_mixhi_f16", "v_fma_mixhi_f16", "p:ppp")          \
    X(V_DOT2_F32_F16, "v_dot2_f32_f16", "v_dot2_f32_f16", "f:ppf")             \
    X(V_DOT2_F32_BF16, "", "v_dot2_f32_bf16", "f:ppf")                         \
    X(V_DOT2_I32_I16, "v_dot2_i32_i16", "", "i:ppi")                           \
    X(V_DOT2_U32_U16, "v_dot2_u32_u16", "", "i:ppi")                           \
    /* gfx11's iu forms take each source's signedness from its neg_lo bit */ \
    X(V_DOT4_I32_I8, "v_dot4_i32_i8", "v_dot4_i32_iu8", "i:iii")               \
    X(V_DOT4_U32_U8, "v_dot4_u32_u8", "v_dot4_u32_u8", "i:iii")                \
    X(V_DOT8_I32_I4, "v_dot8_i32_i4", "v_dot8_i32_iu4", "i:iii")               \
    X(V_DOT8_U32_U4, "v_dot8_u32_u4", "v_dot8_u32_u4", "i:iii")                \
    X(V_PK_FMA_F32, "v_pk_fma_f32", "", "l:lll")                               \
    X(V_PK_MUL_F32, "v_pk_mul_f32", "", "l:ll")                                \
    X(V_PK_ADD_F32, "v_pk_add_f32", "", "l:ll")                                \
    X(V_PK_MOV_B32, "v_pk_mov_b32", "", "l:ll")                                \
    X(V_ACCVGPR_READ_B32, "v_accvgpr_read_b32", "", "i:i")                     \
    X(V_ACCVGPR_WRITE_B32, "v_accvgpr_write_b32", "", "i:i")                   \
    X(V_ACCVGPR_MOV_B32, "v_accvgpr_mov_b32", "", "i:i")                       \
    /* matrix multiply-accumulate (one operation of the whole wave): gfx9's  \
     * MFMA (VOP3P-MAI; gfx940 renames them, and moves the bf16 one), gfx11's \
     * WMMA. A and B are 16-bit values two to a register */                  \
    X(V_MFMA_F32_16X16X16F16, "v_mfma_f32_16x16x16f16", "", "f:ppf")           \
    X(V_MFMA_F32_32X32X8F16, "v_mfma_f32_32x32x8f16", "", "f:ppf")             \
    X(V_MFMA_F32_16X16X16BF16_1K, "v_mfma_f32_16x16x16bf16_1k", "", "f:ppf")   \
    X(V_MFMA_F32_16X16X16_F16, "v_mfma_f32_16x16x16_f16", "", "f:ppf")         \
    X(V_MFMA_F32_32X32X8_F16, "v_mfma_f32_32x32x8_f16", "", "f:ppf")           \
    X(V_MFMA_F32_16X16X16_BF16, "v_mfma_f32_16x16x16_bf16", "", "f:ppf")       \
    X(V_WMMA_F32_16X16X16_F16, "", "v_wmma_f32_16x16x16_f16", "f:ppf")         \
    X(V_WMMA_F32_16X16X16_BF16, "", "v_wmma_f32_16x16x16_bf16", "f:ppf")       \
    /* VOPC: compares write a lane mask (VCC in VOPC, an SGPR in VOP3);     \
     * cmpx forms write EXEC */                                                \
    AMDI_CMP_OPS(X)                                                            \
    /* DS */                                                                   \
    X(DS_ADD_U32, "ds_add_u32", "ds_add_u32", "4")                             \
    X(DS_SUB_U32, "ds_sub_u32", "ds_sub_u32", "4")                             \
    X(DS_INC_U32, "ds_inc_u32", "ds_inc_u32", "4")                             \
    X(DS_DEC_U32, "ds_dec_u32", "ds_dec_u32", "4")                             \
    X(DS_MIN_I32, "ds_min_i32", "ds_min_i32", "4")                             \
    X(DS_MAX_I32, "ds_max_i32", "ds_max_i32", "4")                             \
    X(DS_MIN_U32, "ds_min_u32", "ds_min_u32", "4")                             \
    X(DS_MAX_U32, "ds_max_u32", "ds_max_u32", "4")                             \
    X(DS_AND_B32, "ds_and_b32", "ds_and_b32", "4")                             \
    X(DS_OR_B32, "ds_or_b32", "ds_or_b32", "4")                                \
    X(DS_XOR_B32, "ds_xor_b32", "ds_xor_b32", "4")                             \
    X(DS_MIN_F32, "ds_min_f32", "ds_min_f32", "4")                             \
    X(DS_MAX_F32, "ds_max_f32", "ds_max_f32", "4")                             \
    X(DS_ADD_F32, "ds_add_f32", "ds_add_f32", "4")                             \
    X(DS_WRITE_B32, "ds_write_b32", "ds_store_b32", "4")                       \
    X(DS_WRITE2_B32, "ds_write2_b32", "ds_store_2addr_b32", "4")               \
    X(DS_WRITE2ST64_B32, "ds_write2st64_b32", "ds_store_2addr_stride64_b32", "4") \
    X(DS_WRITE_B8, "ds_write_b8", "ds_store_b8", "1")                          \
    X(DS_WRITE_B16, "ds_write_b16", "ds_store_b16", "2")                       \
    X(DS_WRITE_B8_D16_HI, "ds_write_b8_d16_hi", "ds_store_b8_d16_hi", "1")     \
    X(DS_WRITE_B16_D16_HI, "ds_write_b16_d16_hi", "ds_store_b16_d16_hi", "2")  \
    X(DS_ADD_RTN_U32, "ds_add_rtn_u32", "ds_add_rtn_u32", "4")                 \
    X(DS_SUB_RTN_U32, "ds_sub_rtn_u32", "ds_sub_rtn_u32", "4")                 \
    X(DS_INC_RTN_U32, "ds_inc_rtn_u32", "ds_inc_rtn_u32", "4")                 \
    X(DS_DEC_RTN_U32, "ds_dec_rtn_u32", "ds_dec_rtn_u32", "4")                 \
    X(DS_MIN_RTN_I32, "ds_min_rtn_i32", "ds_min_rtn_i32", "4")                 \
    X(DS_MAX_RTN_I32, "ds_max_rtn_i32", "ds_max_rtn_i32", "4")                 \
    X(DS_MIN_RTN_U32, "ds_min_rtn_u32", "ds_min_rtn_u32", "4")                 \
    X(DS_MAX_RTN_U32, "ds_max_rtn_u32", "ds_max_rtn_u32", "4")                 \
    X(DS_AND_RTN_B32, "ds_and_rtn_b32", "ds_and_rtn_b32", "4")                 \
    X(DS_OR_RTN_B32, "ds_or_rtn_b32", "ds_or_rtn_b32", "4")                    \
    X(DS_XOR_RTN_B32, "ds_xor_rtn_b32", "ds_xor_rtn_b32", "4")                 \
    X(DS_WRXCHG_RTN_B32, "ds_wrxchg_rtn_b32", "ds_storexchg_rtn_b32", "4")     \
    X(DS_CMPST_RTN_B32, "ds_cmpst_rtn_b32", "ds_cmpstore_rtn_b32", "4")        \
    X(DS_MIN_RTN_F32, "ds_min_rtn_f32", "ds_min_rtn_f32", "4")                 \
    X(DS_MAX_RTN_F32, "ds_max_rtn_f32", "ds_max_rtn_f32", "4")                 \
    X(DS_ADD_RTN_F32, "ds_add_rtn_f32", "ds_add_rtn_f32", "4")                 \
    X(DS_READ_B32, "ds_read_b32", "ds_load_b32", "4")                          \
    X(DS_READ2_B32, "ds_read2_b32", "ds_load_2addr_b32", "4")                  \
    X(DS_READ2ST64_B32, "ds_read2st64_b32", "ds_load_2addr_stride64_b32", "4") \
    X(DS_READ_I8, "ds_read_i8", "ds_load_i8", "s1")                            \
    X(DS_READ_U8, "ds_read_u8", "ds_load_u8", "u1")                            \
    X(DS_READ_I16, "ds_read_i16", "ds_load_i16", "s2")                         \
    X(DS_READ_U16, "ds_read_u16", "ds_load_u16", "u2")                         \
    X(DS_SWIZZLE_B32, "ds_swizzle_b32", "ds_swizzle_b32", "4")                 \
    X(DS_PERMUTE_B32, "ds_permute_b32", "ds_permute_b32", "4")                 \
    X(DS_BPERMUTE_B32, "ds_bpermute_b32", "ds_bpermute_b32", "4")              \
    X(DS_ADD_U64, "ds_add_u64", "ds_add_u64", "8")                             \
    X(DS_WRITE_B64, "ds_write_b64", "ds_store_b64", "8")                       \
    X(DS_WRITE2_B64, "ds_write2_b64", "ds_store_2addr_b64", "8")               \
    X(DS_WRITE2ST64_B64, "ds_write2st64_b64", "ds_store_2addr_stride64_b64", "8") \
    X(DS_ADD_RTN_U64, "ds_add_rtn_u64", "ds_add_rtn_u64", "8")                 \
    X(DS_CMPST_RTN_B64, "ds_cmpst_rtn_b64", "ds_cmpstore_rtn_b64", "8")        \
    X(DS_READ_B64, "ds_read_b64", "ds_load_b64", "8")                          \
    X(DS_READ2_B64, "ds_read2_b64", "ds_load_2addr_b64", "8")                  \
    X(DS_READ2ST64_B64, "ds_read2st64_b64", "ds_load_2addr_stride64_b64", "8") \
    X(DS_READ_U8_D16, "ds_read_u8_d16", "ds_load_u8_d16", "hu1")               \
    X(DS_READ_U8_D16_HI, "ds_read_u8_d16_hi", "ds_load_u8_d16_hi", "Hu1")      \
    X(DS_READ_I8_D16, "ds_read_i8_d16", "ds_load_i8_d16", "hs1")               \
    X(DS_READ_I8_D16_HI, "ds_read_i8_d16_hi", "ds_load_i8_d16_hi", "Hs1")      \
    X(DS_READ_U16_D16, "ds_read_u16_d16", "ds_load_u16_d16", "h2")             \
    X(DS_READ_U16_D16_HI, "ds_read_u16_d16_hi", "ds_load_u16_d16_hi", "H2")    \
    X(DS_WRITE_B96, "ds_write_b96", "ds_store_b96", "12")                      \
    X(DS_WRITE_B128, "ds_write_b128", "ds_store_b128", "16")                   \
    X(DS_READ_B96, "ds_read_b96", "ds_load_b96", "12")                         \
    X(DS_READ_B128, "ds_read_b128", "ds_load_b128", "16")                      \
    /* FLAT, GLOBAL, SCRATCH (one op each; the segment picks the prefix) */   \
    X(M_LOAD_U8, "load_ubyte", "load_u8", "u1")                                \
    X(M_LOAD_I8, "load_sbyte", "load_i8", "s1")                                \
    X(M_LOAD_U16, "load_ushort", "load_u16", "u2")                             \
    X(M_LOAD_I16, "load_sshort", "load_i16", "s2")                             \
    X(M_LOAD_B32, "load_dword", "load_b32", "4")                               \
    X(M_LOAD_B64, "load_dwordx2", "load_b64", "8")                             \
    X(M_LOAD_B96, "load_dwordx3", "load_b96", "12")                            \
    X(M_LOAD_B128, "load_dwordx4", "load_b128", "16")                          \
    X(M_STORE_B8, "store_byte", "store_b8", "1")                               \
    X(M_STORE_B8_D16_HI, "store_byte_d16_hi", "store_d16_hi_b8", "H1")        \
    X(M_STORE_B16, "store_short", "store_b16", "2")                            \
    X(M_STORE_B16_D16_HI, "store_short_d16_hi", "store_d16_hi_b16", "H2")     \
    X(M_STORE_B32, "store_dword", "store_b32", "4")                            \
    X(M_STORE_B64, "store_dwordx2", "store_b64", "8")                          \
    X(M_STORE_B96, "store_dwordx3", "store_b96", "12")                         \
    X(M_STORE_B128, "store_dwordx4", "store_b128", "16")                       \
    X(M_LOAD_D16_U8, "load_ubyte_d16", "load_d16_u8", "hu1")                   \
    X(M_LOAD_D16_HI_U8, "load_ubyte_d16_hi", "load_d16_hi_u8", "Hu1")          \
    X(M_LOAD_D16_I8, "load_sbyte_d16", "load_d16_i8", "hs1")                   \
    X(M_LOAD_D16_HI_I8, "load_sbyte_d16_hi", "load_d16_hi_i8", "Hs1")          \
    X(M_LOAD_D16_B16, "load_short_d16", "load_d16_b16", "h2")                  \
    X(M_LOAD_D16_HI_B16, "load_short_d16_hi", "load_d16_hi_b16", "H2")         \
    X(M_ATOMIC_SWAP, "atomic_swap", "atomic_swap_b32", "4")                    \
    X(M_ATOMIC_CMPSWAP, "atomic_cmpswap", "atomic_cmpswap_b32", "4")           \
    X(M_ATOMIC_ADD, "atomic_add", "atomic_add_u32", "4")                       \
    X(M_ATOMIC_SUB, "atomic_sub", "atomic_sub_u32", "4")                       \
    X(M_ATOMIC_SMIN, "atomic_smin", "atomic_min_i32", "4")                     \
    X(M_ATOMIC_UMIN, "atomic_umin", "atomic_min_u32", "4")                     \
    X(M_ATOMIC_SMAX, "atomic_smax", "atomic_max_i32", "4")                     \
    X(M_ATOMIC_UMAX, "atomic_umax", "atomic_max_u32", "4")                     \
    X(M_ATOMIC_AND, "atomic_and", "atomic_and_b32", "4")                       \
    X(M_ATOMIC_OR, "atomic_or", "atomic_or_b32", "4")                          \
    X(M_ATOMIC_XOR, "atomic_xor", "atomic_xor_b32", "4")                       \
    X(M_ATOMIC_INC, "atomic_inc", "atomic_inc_u32", "4")                       \
    X(M_ATOMIC_DEC, "atomic_dec", "atomic_dec_u32", "4")                       \
    X(M_ATOMIC_ADD_F32, "atomic_add_f32", "atomic_add_f32", "4")               \
    X(M_ATOMIC_MIN_F32, "", "atomic_min_f32", "4")                             \
    X(M_ATOMIC_MAX_F32, "", "atomic_max_f32", "4")                             \
    X(M_ATOMIC_SWAP_X2, "atomic_swap_x2", "atomic_swap_b64", "8")              \
    X(M_ATOMIC_CMPSWAP_X2, "atomic_cmpswap_x2", "atomic_cmpswap_b64", "8")     \
    X(M_ATOMIC_ADD_X2, "atomic_add_x2", "atomic_add_u64", "8")                 \
    X(M_ATOMIC_ADD_F64, "atomic_add_f64", "", "8")                             \
    /* MUBUF (gfx9 scratch through the private segment buffer) */             \
    X(B_LOAD_U8, "buffer_load_ubyte", "buffer_load_u8", "u1")                  \
    X(B_LOAD_I8, "buffer_load_sbyte", "buffer_load_i8", "s1")                  \
    X(B_LOAD_U16, "buffer_load_ushort", "buffer_load_u16", "u2")               \
    X(B_LOAD_I16, "buffer_load_sshort", "buffer_load_i16", "s2")               \
    X(B_LOAD_B32, "buffer_load_dword", "buffer_load_b32", "4")                 \
    X(B_LOAD_B64, "buffer_load_dwordx2", "buffer_load_b64", "8")               \
    X(B_LOAD_B96, "buffer_load_dwordx3", "buffer_load_b96", "12")              \
    X(B_LOAD_B128, "buffer_load_dwordx4", "buffer_load_b128", "16")            \
    X(B_STORE_B8, "buffer_store_byte", "buffer_store_b8", "1")                 \
    X(B_STORE_B16, "buffer_store_short", "buffer_store_b16", "2")              \
    X(B_STORE_B32, "buffer_store_dword", "buffer_store_b32", "4")              \
    X(B_STORE_B64, "buffer_store_dwordx2", "buffer_store_b64", "8")            \
    X(B_STORE_B96, "buffer_store_dwordx3", "buffer_store_b96", "12")           \
    X(B_STORE_B128, "buffer_store_dwordx4", "buffer_store_b128", "16")        \
    X(B_GL0_INV, "", "buffer_gl0_inv", "")                                     \
    X(B_GL1_INV, "", "buffer_gl1_inv", "")                                     \
    X(B_WBL2, "buffer_wbl2", "", "")                                           \
    X(B_INV, "buffer_inv", "", "")                                             \
    X(B_WBINVL1, "buffer_wbinvl1", "", "")                                     \
    X(B_WBINVL1_VOL, "buffer_wbinvl1_vol", "", "")

/* The compares: for each type, the conditions in opcode order (AMD's
 * VOPC tables list them so). f: F LT EQ LE GT LG GE O U NGE NLG NGT NLE
 * NEQ NLT TRU; i: F LT EQ LE GT NE GE T. */
#define AMDI_CMP_F(X, T, t, s)                                                        \
    X(V_CMP_F_##T, "v_cmp_f_" t, "v_cmp_f_" t, s)                                   \
    X(V_CMP_LT_##T, "v_cmp_lt_" t, "v_cmp_lt_" t, s)                                \
    X(V_CMP_EQ_##T, "v_cmp_eq_" t, "v_cmp_eq_" t, s)                                \
    X(V_CMP_LE_##T, "v_cmp_le_" t, "v_cmp_le_" t, s)                                \
    X(V_CMP_GT_##T, "v_cmp_gt_" t, "v_cmp_gt_" t, s)                                \
    X(V_CMP_LG_##T, "v_cmp_lg_" t, "v_cmp_lg_" t, s)                                \
    X(V_CMP_GE_##T, "v_cmp_ge_" t, "v_cmp_ge_" t, s)                                \
    X(V_CMP_O_##T, "v_cmp_o_" t, "v_cmp_o_" t, s)                                   \
    X(V_CMP_U_##T, "v_cmp_u_" t, "v_cmp_u_" t, s)                                   \
    X(V_CMP_NGE_##T, "v_cmp_nge_" t, "v_cmp_nge_" t, s)                             \
    X(V_CMP_NLG_##T, "v_cmp_nlg_" t, "v_cmp_nlg_" t, s)                             \
    X(V_CMP_NGT_##T, "v_cmp_ngt_" t, "v_cmp_ngt_" t, s)                             \
    X(V_CMP_NLE_##T, "v_cmp_nle_" t, "v_cmp_nle_" t, s)                             \
    X(V_CMP_NEQ_##T, "v_cmp_neq_" t, "v_cmp_neq_" t, s)                             \
    X(V_CMP_NLT_##T, "v_cmp_nlt_" t, "v_cmp_nlt_" t, s)                             \
    X(V_CMP_TRU_##T, "v_cmp_tru_" t, "v_cmp_t_" t, s)                               \
    X(V_CMPX_F_##T, "v_cmpx_f_" t, "v_cmpx_f_" t, s)                                \
    X(V_CMPX_LT_##T, "v_cmpx_lt_" t, "v_cmpx_lt_" t, s)                             \
    X(V_CMPX_EQ_##T, "v_cmpx_eq_" t, "v_cmpx_eq_" t, s)                             \
    X(V_CMPX_LE_##T, "v_cmpx_le_" t, "v_cmpx_le_" t, s)                             \
    X(V_CMPX_GT_##T, "v_cmpx_gt_" t, "v_cmpx_gt_" t, s)                             \
    X(V_CMPX_LG_##T, "v_cmpx_lg_" t, "v_cmpx_lg_" t, s)                             \
    X(V_CMPX_GE_##T, "v_cmpx_ge_" t, "v_cmpx_ge_" t, s)                             \
    X(V_CMPX_O_##T, "v_cmpx_o_" t, "v_cmpx_o_" t, s)                                \
    X(V_CMPX_U_##T, "v_cmpx_u_" t, "v_cmpx_u_" t, s)                                \
    X(V_CMPX_NGE_##T, "v_cmpx_nge_" t, "v_cmpx_nge_" t, s)                          \
    X(V_CMPX_NLG_##T, "v_cmpx_nlg_" t, "v_cmpx_nlg_" t, s)                          \
    X(V_CMPX_NGT_##T, "v_cmpx_ngt_" t, "v_cmpx_ngt_" t, s)                          \
    X(V_CMPX_NLE_##T, "v_cmpx_nle_" t, "v_cmpx_nle_" t, s)                          \
    X(V_CMPX_NEQ_##T, "v_cmpx_neq_" t, "v_cmpx_neq_" t, s)                          \
    X(V_CMPX_NLT_##T, "v_cmpx_nlt_" t, "v_cmpx_nlt_" t, s)                          \
    X(V_CMPX_TRU_##T, "v_cmpx_tru_" t, "v_cmpx_t_" t, s)
#define AMDI_CMP_I(X, T, t, s)                                                        \
    X(V_CMP_F_##T, "v_cmp_f_" t, "v_cmp_f_" t, s)                                   \
    X(V_CMP_LT_##T, "v_cmp_lt_" t, "v_cmp_lt_" t, s)                                \
    X(V_CMP_EQ_##T, "v_cmp_eq_" t, "v_cmp_eq_" t, s)                                \
    X(V_CMP_LE_##T, "v_cmp_le_" t, "v_cmp_le_" t, s)                                \
    X(V_CMP_GT_##T, "v_cmp_gt_" t, "v_cmp_gt_" t, s)                                \
    X(V_CMP_NE_##T, "v_cmp_ne_" t, "v_cmp_ne_" t, s)                                \
    X(V_CMP_GE_##T, "v_cmp_ge_" t, "v_cmp_ge_" t, s)                                \
    X(V_CMP_T_##T, "v_cmp_t_" t, "v_cmp_t_" t, s)                                   \
    X(V_CMPX_F_##T, "v_cmpx_f_" t, "v_cmpx_f_" t, s)                                \
    X(V_CMPX_LT_##T, "v_cmpx_lt_" t, "v_cmpx_lt_" t, s)                             \
    X(V_CMPX_EQ_##T, "v_cmpx_eq_" t, "v_cmpx_eq_" t, s)                             \
    X(V_CMPX_LE_##T, "v_cmpx_le_" t, "v_cmpx_le_" t, s)                             \
    X(V_CMPX_GT_##T, "v_cmpx_gt_" t, "v_cmpx_gt_" t, s)                             \
    X(V_CMPX_NE_##T, "v_cmpx_ne_" t, "v_cmpx_ne_" t, s)                             \
    X(V_CMPX_GE_##T, "v_cmpx_ge_" t, "v_cmpx_ge_" t, s)                             \
    X(V_CMPX_T_##T, "v_cmpx_t_" t, "v_cmpx_t_" t, s)
#define AMDI_CMP_OPS(X)                                                               \
    AMDI_CMP_F(X, F16, "f16", "m:hh")                                               \
    AMDI_CMP_F(X, F32, "f32", "m:ff")                                               \
    AMDI_CMP_F(X, F64, "f64", "m:dd")                                               \
    AMDI_CMP_I(X, I16, "i16", "m:hh")                                               \
    AMDI_CMP_I(X, U16, "u16", "m:hh")                                               \
    AMDI_CMP_I(X, I32, "i32", "m:ii")                                               \
    AMDI_CMP_I(X, U32, "u32", "m:ii")                                               \
    AMDI_CMP_I(X, I64, "i64", "m:LL")                                               \
    AMDI_CMP_I(X, U64, "u64", "m:ll")                                               \
    X(V_CMP_CLASS_F16, "v_cmp_class_f16", "v_cmp_class_f16", "m:hi")                \
    X(V_CMP_CLASS_F32, "v_cmp_class_f32", "v_cmp_class_f32", "m:fi")                \
    X(V_CMP_CLASS_F64, "v_cmp_class_f64", "v_cmp_class_f64", "m:di")                \
    X(V_CMPX_CLASS_F16, "v_cmpx_class_f16", "v_cmpx_class_f16", "m:hi")             \
    X(V_CMPX_CLASS_F32, "v_cmpx_class_f32", "v_cmpx_class_f32", "m:fi")             \
    X(V_CMPX_CLASS_F64, "v_cmpx_class_f64", "v_cmpx_class_f64", "m:di")

typedef enum amdi_op {
    AMDI_OP_NONE = 0,
#define AMDI_ENUM(id, n9, n11, sig) AMDI_##id,
    AMDI_OPS(AMDI_ENUM)
#undef AMDI_ENUM
    AMDI_OP_COUNT
} amdi_op;

/* the encodings */
typedef enum amdi_enc {
    AMDI_E_NONE, AMDI_E_SOP1, AMDI_E_SOP2, AMDI_E_SOPK, AMDI_E_SOPC, AMDI_E_SOPP, AMDI_E_SMEM,
    AMDI_E_VOP1, AMDI_E_VOP2, AMDI_E_VOPC, AMDI_E_VOP3, AMDI_E_VOP3P, AMDI_E_VOPD, AMDI_E_DS,
    AMDI_E_FLAT, AMDI_E_GLOBAL, AMDI_E_SCRATCH, AMDI_E_MUBUF,
} amdi_enc;

/* an operand */
typedef enum amdi_okind {
    AMDI_O_NONE,
    AMDI_O_SGPR,    /* reg: the scalar file index (AMDI_SREG_*: SGPRs, VCC, M0, EXEC...) */
    AMDI_O_VGPR,    /* reg: v0..v255 */
    AMDI_O_AGPR,    /* reg: a0..a255 (gfx90a, gfx940) */
    AMDI_O_CONST,   /* imm: an inline constant or the literal, at the operand's width */
    AMDI_O_SCC, AMDI_O_VCCZ, AMDI_O_EXECZ,
    AMDI_O_NULL,    /* reads 0, writes vanish (gfx11's null, SMEM/FLAT "off") */
    AMDI_O_APERTURE,/* reg: 235 shared base, 236 shared limit, 237 private base, 238 private limit */
} amdi_okind;

/* the scalar file as the executor keeps it (encodings 0-127, with gfx11's
 * M0 (125) and null (124) swapped to gfx9's M0 position) */
enum { AMDI_SREG_VCC = 106, AMDI_SREG_M0 = 124, AMDI_SREG_NULL = 125, AMDI_SREG_EXEC = 126, AMDI_SREG_COUNT = 128 };

enum { AMDI_M_NEG = 1, AMDI_M_ABS = 2, AMDI_M_HI = 4 /* the high 16 bits (true16 .h, op_sel) */,
       AMDI_M_LIT = 8 /* the literal (printing) */, AMDI_M_SEXT = 16 /* SDWA */ };

typedef struct amdi_opnd {
    uint8_t kind;  /* amdi_okind */
    uint8_t mod;   /* AMDI_M_* */
    uint8_t n;     /* dwords (registers) */
    uint8_t code;  /* the field's raw value (low 8 bits), for printing */
    uint16_t reg;
    uint64_t imm;
} amdi_opnd;

enum {
    AMDI_F_E64 = 1,    /* a VOP1/2/C op in the VOP3 encoding */
    AMDI_F_DPP = 2,    /* DPP16 (gfx9 DPP) on src0 */
    AMDI_F_DPP8 = 4,
    AMDI_F_SDWA = 8,
    AMDI_F_VOPD_X = 16, AMDI_F_VOPD_Y = 32, /* the two halves of a VOPD (two amdi_inst at one pc) */
    AMDI_F_BRANCH = 64,
    AMDI_F_T16 = 128,  /* gfx11 true16 operands */
    AMDI_F_PLAIN = 256, /* a VALU op on 32-bit operands with no modifier, DPP, SDWA, clamp or omod, one
                           VGPR result: the executor's fast path may take it */
    AMDI_F_NOMOD = 512, /* a VOP1/2/C/3 op with no abs/neg, DPP, SDWA, clamp or omod (halves and masks
                           allowed): the executor's second fast path may take it */
};

/* cache policy bits as printed */
enum { AMDI_C_GLC = 1, AMDI_C_SLC = 2, AMDI_C_DLC = 4, AMDI_C_SC0 = 8, AMDI_C_SC1 = 16, AMDI_C_NT = 32 };

typedef struct amdi_inst {
    uint16_t op;     /* amdi_op */
    uint8_t enc;     /* amdi_enc */
    uint8_t len;     /* bytes, literal included */
    uint16_t flags;  /* AMDI_F_* */
    uint8_t nd, ns;  /* operands used */
    amdi_opnd d[2];  /* d[0] the result (VGPR or SGPR); d[1] a carry-out or compare mask (VOP3b, VOP3 VOPC) */
    amdi_opnd s[4];  /* sources; memory: s[0] address, s[1] data, s[2] data1 / saddr, s[3] soffset */
    /* VOP3 / VOP3P */
    uint8_t clamp, omod, op_sel, op_sel_hi, neg_hi;
    /* MFMA: the broadcast controls (cbsz, abid: A's blocks; blgp: B's lane groups) */
    uint8_t cbsz, abid, blgp;
    /* DPP (gfx9 DPP, gfx11 DPP16) and DPP8; SDWA */
    uint16_t dpp_ctrl;
    uint8_t row_mask, bank_mask, bound_ctrl, fi;
    uint32_t dpp8;
    uint8_t sdwa_dst_sel, sdwa_dst_unused, sdwa_sel[2];
    /* memory */
    int32_t offset;      /* FLAT/GLOBAL/SCRATCH/MUBUF/SMEM byte offset; DS: offset0 */
    uint8_t offset1;     /* DS */
    uint8_t cpol;        /* AMDI_C_* */
    uint8_t offen, idxen, gds, sve;
    /* SOPP/SOPK immediate (sign-extended where the op takes it so) */
    int32_t simm;
    /* the operand types (AMDI_OPS's letters: ty[0] the result, ty[1..3]
     * the sources) and, for memory ops, the bytes per lane and how they
     * extend ('u', 's', 'h'/'H' d16 low/high, '4' whole dwords) */
    char ty[4];
    uint8_t mbytes;
    char mkind;
    /* raw dwords (the first two), for messages */
    uint32_t raw[2];
} amdi_inst;

/* Decodes the instruction at p (avail bytes there) into in[0], and for a
 * gfx11 VOPD its Y half into in[1] (so in points at two). 0 with *in
 * filled; -1 when the bytes are no instruction this decoder knows: in->op
 * is AMDI_OP_NONE (or the op whose operand or control it does not take),
 * in->raw holds the first dwords and in->len the encoding's length where
 * it was recognized. */
int amdi_decode(const amdi_target *t, const uint8_t *p, size_t avail, amdi_inst *in);

/* The mnemonic as llvm-objdump spells it (with _e32/_e64/_dpp/_sdwa,
 * flat_/global_/scratch_, v_dual_ for VOPD halves). */
void amdi_mnemonic(const amdi_target *t, const amdi_inst *in, char *buf, size_t size);
/* The whole instruction in llvm-objdump's syntax (mnemonic and operands;
 * a VOPD pair prints as one line from its X half: "X :: Y" needs both, so
 * pass the Y half as y, else NULL). */
void amdi_print(const amdi_target *t, const amdi_inst *in, const amdi_inst *y, char *buf, size_t size);

/* The op's names and operand types (the AMDI_OPS columns). */
const char *amdi_op_name(amdi_family fam, amdi_op op);
const char *amdi_op_sig(amdi_op op);

/* VOP2 ops whose destination is also their last source (the addend): the
 * encoding has two sources, the operation three */
static inline bool amdi_dst_is_addend(amdi_op op)
{
    switch (op) {
    case AMDI_V_FMAC_F32: case AMDI_V_MAC_F32: case AMDI_V_FMAC_F16: case AMDI_V_MAC_F16: case AMDI_V_FMAC_F64:
    case AMDI_V_PK_FMAC_F16: case AMDI_V_DOT2C_F32_F16: case AMDI_V_DOT2C_F32_BF16: case AMDI_V_DOT2C_I32_I16: case AMDI_V_DOT4C_I32_I8:
    case AMDI_V_DOT8C_I32_I4: return true;
    default: return false;
    }
}

/* the matrix multiply-accumulate ops (MFMA, WMMA) */
static inline bool amdi_is_mma(amdi_op op) { return op >= AMDI_V_MFMA_F32_16X16X16F16 && op <= AMDI_V_WMMA_F32_16X16X16_BF16; }

/* per-family opcode tables (amdgpu_tables.c): encoding opcode -> amdi_op */
typedef struct amdi_tables {
    const uint16_t *sop1, *sop2, *sopk, *sopc, *sopp, *smem, *vop1, *vop2, *vopc, *vop3, *vop3p, *ds, *flat, *mubuf;
    uint16_t nsop1, nsop2, nsopk, nsopc, nsopp, nsmem, nvop1, nvop2, nvopc, nvop3, nvop3p, nds, nflat, nmubuf;
} amdi_tables;
const amdi_tables *amdi_tables_of(const amdi_target *t);
/* gfx11 VOPD opcodes: OPX (0-13) and OPY (0-18) */
amdi_op amdi_vopd_op(unsigned opc);

#endif
