/* The scalar ALU and scalar memory of the AMD ISA executor (SOP1, SOP2,
 * SOPK, SOPC, SMEM). Semantics: the ISA guides' pseudocode (RDNA3 "Scalar
 * ALU Operations"; MI200/MI300 likewise): SCC is the carry of the 32-bit
 * adds and subtracts, "result != 0" of the bit ops, shifts and bit-field
 * ops, the comparison of SOPC and SOPK compares; the saveexec ops write the
 * old EXEC to the destination and SCC = (new EXEC != 0). */
#include "drivers/mock/mock_amd_isa.h"

#include <inttypes.h>
#include <string.h>

static uint32_t brev32(uint32_t x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    x = (x >> 8 & 0x00ff00ffu) | (x & 0x00ff00ffu) << 8;
    return x >> 16 | x << 16;
}

static uint32_t ff1_64(uint64_t x) { return x ? (uint32_t)__builtin_ctzll(x) : 0xffffffffu; }
static uint32_t flbit_64(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 0xffffffffu; }
static uint32_t cls32(int32_t x)
{
    if (x == 0 || x == -1) return 0xffffffffu;
    uint32_t u = x < 0 ? ~(uint32_t)x : (uint32_t)x;
    return (uint32_t)__builtin_clz(u);
}

/* a scalar op's sources, 64-bit wide where its signature says so */
static uint64_t src(const mai_wave *w, const amdi_inst *in, unsigned i) { return mai_ssrc(w, &in->s[i]); }

static uint64_t wqm(uint64_t x, unsigned bits)
{
    uint64_t r = 0;
    for (unsigned q = 0; q < bits; q += 4)
        if (x >> q & 0xf) r |= 0xfull << q;
    return r;
}

/* s_getreg: the hardware registers a kernel reads (llvm-project
 * llvm/lib/Target/AMDGPU/SIDefines.h "Hwreg" ids: MODE 1, STATUS 2, HW_ID
 * 4 (gfx9), SH_MEM_BASES 15, FLAT_SCR_LO/HI 20/21 and HW_ID1 23 (gfx10+), SHADER_CYCLES 29
 * (gfx10.3+)); false for one the executor does not model */
static bool getreg(mai_wave *w, uint32_t id, uint32_t *v)
{
    bool g11 = w->g->d->t.fam == AMDI_GFX11;
    switch (id) {
    case 1: *v = w->mode; return true;
    case 2: *v = 0; return true; /* STATUS: nothing pending (no traps, halts or debug state) */
    case 15: /* SH_MEM_BASES (gfx9+): the private and shared apertures' bits 63:48 in 15:0 and 31:16, which
              * code without aperture registers shifts into a flat address's high dword (LLVM
              * AMDGPULegalizerInfo::getSegmentAperture, Hwreg OFFSET_SRC_PRIVATE_BASE 0 / SHARED_BASE 16) */
        *v = (uint32_t)(MAI_PRIVATE_BASE >> 48) | (uint32_t)(MAI_SHARED_BASE >> 48) << 16;
        return true;
    case 20: if (!g11) return false; *v = (uint32_t)w->scratch; return true;
    case 21: if (!g11) return false; *v = (uint32_t)(w->scratch >> 32); return true;
    case 29: if (!g11) return false; *v = (uint32_t)mock_amd_clock(); return true;
    case 4: /* gfx9 HW_ID: wave id 3:0, the rest (SIMD, CU, SE...) 0 */
        if (g11) return false;
        *v = w->id & 0xf;
        return true;
    case 23: /* gfx10+ HW_ID1: wave id 4:0 */
        if (!g11) return false;
        *v = w->id & 0x1f;
        return true;
    default: return false;
    }
}

bool mai_salu(mai_wave *w, const amdi_inst *in)
{
    amdi_op op = (amdi_op)in->op;
    uint64_t a = in->ns > 0 ? src(w, in, 0) : 0, b = in->ns > 1 ? src(w, in, 1) : 0;
    uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
    uint64_t d = 0;
    unsigned n = 1;  /* destination dwords */
    int scc = -1;    /* -1: SCC unchanged */
    bool write = true;
    uint64_t exec = mai_exec(w);
    unsigned sh32 = b32 & 31, sh64 = b32 & 63;
    switch (op) {
    /* SOP1 */
    case AMDI_S_MOV_B32: d = a32; break;
    case AMDI_S_MOV_B64: d = a; n = 2; break;
    case AMDI_S_CMOV_B32: d = a32; write = w->scc; break;
    case AMDI_S_CMOV_B64: d = a; n = 2; write = w->scc; break;
    case AMDI_S_NOT_B32: d = ~a32; scc = d != 0; d &= 0xffffffffu; break;
    case AMDI_S_NOT_B64: d = ~a; n = 2; scc = d != 0; break;
    case AMDI_S_WQM_B32: d = wqm(a32, 32); scc = d != 0; break;
    case AMDI_S_WQM_B64: d = wqm(a, 64); n = 2; scc = d != 0; break;
    case AMDI_S_BREV_B32: d = brev32(a32); break;
    case AMDI_S_BREV_B64: d = (uint64_t)brev32((uint32_t)a) << 32 | brev32((uint32_t)(a >> 32)); n = 2; break;
    case AMDI_S_BCNT0_I32_B32: d = 32u - (uint32_t)__builtin_popcount(a32); scc = d != 0; break;
    case AMDI_S_BCNT0_I32_B64: d = 64u - (uint32_t)__builtin_popcountll(a); scc = d != 0; break;
    case AMDI_S_BCNT1_I32_B32: d = (uint32_t)__builtin_popcount(a32); scc = d != 0; break;
    case AMDI_S_BCNT1_I32_B64: d = (uint32_t)__builtin_popcountll(a); scc = d != 0; break;
    case AMDI_S_FF1_I32_B32: d = a32 ? (uint32_t)__builtin_ctz(a32) : 0xffffffffu; break;
    case AMDI_S_FF1_I32_B64: d = ff1_64(a); break;
    case AMDI_S_FLBIT_I32_B32: d = a32 ? (uint32_t)__builtin_clz(a32) : 0xffffffffu; break;
    case AMDI_S_FLBIT_I32_B64: d = flbit_64(a); break;
    case AMDI_S_FLBIT_I32: d = cls32((int32_t)a32); break;
    case AMDI_S_SEXT_I32_I8: d = (uint32_t)(int32_t)(int8_t)a32; break;
    case AMDI_S_SEXT_I32_I16: d = (uint32_t)(int32_t)(int16_t)a32; break;
    case AMDI_S_BITSET0_B32: d = w->s[in->d[0].reg] & ~(1u << (a32 & 31)); break;
    case AMDI_S_BITSET1_B32: d = w->s[in->d[0].reg] | 1u << (a32 & 31); break;
    case AMDI_S_BITSET0_B64: d = mai_sreg64(w, in->d[0].reg) & ~(1ull << (a32 & 63)); n = 2; break;
    case AMDI_S_BITSET1_B64: d = mai_sreg64(w, in->d[0].reg) | 1ull << (a32 & 63); n = 2; break;
    case AMDI_S_ABS_I32: d = (uint32_t)((int32_t)a32 < 0 ? -(int64_t)(int32_t)a32 : (int32_t)a32); scc = d != 0; break;
    case AMDI_S_AND_SAVEEXEC_B32: case AMDI_S_AND_SAVEEXEC_B64:
    case AMDI_S_OR_SAVEEXEC_B32: case AMDI_S_OR_SAVEEXEC_B64:
    case AMDI_S_XOR_SAVEEXEC_B32: case AMDI_S_XOR_SAVEEXEC_B64:
    case AMDI_S_ANDN2_SAVEEXEC_B32: case AMDI_S_ANDN2_SAVEEXEC_B64:
    case AMDI_S_ORN2_SAVEEXEC_B32: case AMDI_S_ORN2_SAVEEXEC_B64:
    case AMDI_S_ANDN1_SAVEEXEC_B32: case AMDI_S_ANDN1_SAVEEXEC_B64:
    case AMDI_S_ANDN2_WREXEC_B32: case AMDI_S_ANDN2_WREXEC_B64: {
        bool w64 = op == AMDI_S_AND_SAVEEXEC_B64 || op == AMDI_S_OR_SAVEEXEC_B64 || op == AMDI_S_XOR_SAVEEXEC_B64 ||
                   op == AMDI_S_ANDN2_SAVEEXEC_B64 || op == AMDI_S_ORN2_SAVEEXEC_B64 ||
                   op == AMDI_S_ANDN1_SAVEEXEC_B64 || op == AMDI_S_ANDN2_WREXEC_B64;
        uint64_t m = w64 ? ~0ull : 0xffffffffull;
        uint64_t old = ((uint64_t)w->s[AMDI_SREG_EXEC] | (uint64_t)w->s[AMDI_SREG_EXEC + 1] << 32) & m, s0 = a & m, e;
        switch (op) {
        case AMDI_S_AND_SAVEEXEC_B32: case AMDI_S_AND_SAVEEXEC_B64: e = s0 & old; break;
        case AMDI_S_OR_SAVEEXEC_B32: case AMDI_S_OR_SAVEEXEC_B64: e = s0 | old; break;
        case AMDI_S_XOR_SAVEEXEC_B32: case AMDI_S_XOR_SAVEEXEC_B64: e = s0 ^ old; break;
        case AMDI_S_ANDN2_SAVEEXEC_B32: case AMDI_S_ANDN2_SAVEEXEC_B64: e = s0 & ~old; break;
        case AMDI_S_ORN2_SAVEEXEC_B32: case AMDI_S_ORN2_SAVEEXEC_B64: e = s0 | ~old; break;
        case AMDI_S_ANDN1_SAVEEXEC_B32: case AMDI_S_ANDN1_SAVEEXEC_B64: e = ~s0 & old; break;
        default: e = s0 & ~old; break; /* s_andn2_wrexec: the result goes to EXEC and the destination */
        }
        e &= m;
        bool wrexec = op == AMDI_S_ANDN2_WREXEC_B32 || op == AMDI_S_ANDN2_WREXEC_B64;
        w->s[AMDI_SREG_EXEC] = (uint32_t)e;
        if (w64) w->s[AMDI_SREG_EXEC + 1] = (uint32_t)(e >> 32);
        mai_sdst(w, &in->d[0], wrexec ? e : old, w64 ? 2 : 1);
        w->scc = e != 0;
        return true;
    }
    /* SOP2 */
    case AMDI_S_ADD_U32: d = (uint64_t)a32 + b32; scc = d >> 32 & 1; d &= 0xffffffffu; break;
    case AMDI_S_SUB_U32: d = (uint32_t)(a32 - b32); scc = b32 > a32; break;
    case AMDI_S_ADD_I32: {
        int32_t r = (int32_t)(a32 + b32);
        scc = ((int32_t)a32 < 0) == ((int32_t)b32 < 0) && (r < 0) != ((int32_t)a32 < 0);
        d = (uint32_t)r;
        break;
    }
    case AMDI_S_SUB_I32: {
        int32_t r = (int32_t)(a32 - b32);
        scc = ((int32_t)a32 < 0) != ((int32_t)b32 < 0) && (r < 0) != ((int32_t)a32 < 0);
        d = (uint32_t)r;
        break;
    }
    case AMDI_S_ADDC_U32: d = (uint64_t)a32 + b32 + w->scc; scc = d >> 32 & 1; d &= 0xffffffffu; break;
    case AMDI_S_SUBB_U32: d = (uint32_t)(a32 - b32 - w->scc); scc = (uint64_t)b32 + w->scc > a32; break;
    case AMDI_S_MIN_I32: scc = (int32_t)a32 < (int32_t)b32; d = scc ? a32 : b32; break;
    case AMDI_S_MIN_U32: scc = a32 < b32; d = scc ? a32 : b32; break;
    case AMDI_S_MAX_I32: scc = (int32_t)a32 > (int32_t)b32; d = scc ? a32 : b32; break;
    case AMDI_S_MAX_U32: scc = a32 > b32; d = scc ? a32 : b32; break;
    case AMDI_S_CSELECT_B32: d = w->scc ? a32 : b32; break;
    case AMDI_S_CSELECT_B64: d = w->scc ? a : b; n = 2; break;
    case AMDI_S_AND_B32: d = a32 & b32; scc = d != 0; break;
    case AMDI_S_AND_B64: d = a & b; n = 2; scc = d != 0; break;
    case AMDI_S_OR_B32: d = a32 | b32; scc = d != 0; break;
    case AMDI_S_OR_B64: d = a | b; n = 2; scc = d != 0; break;
    case AMDI_S_XOR_B32: d = a32 ^ b32; scc = d != 0; break;
    case AMDI_S_XOR_B64: d = a ^ b; n = 2; scc = d != 0; break;
    case AMDI_S_ANDN2_B32: d = a32 & ~b32; scc = d != 0; break;
    case AMDI_S_ANDN2_B64: d = a & ~b; n = 2; scc = d != 0; break;
    case AMDI_S_ORN2_B32: d = (a32 | ~b32) & 0xffffffffu; scc = d != 0; break;
    case AMDI_S_ORN2_B64: d = a | ~b; n = 2; scc = d != 0; break;
    case AMDI_S_NAND_B32: d = ~(a32 & b32) & 0xffffffffu; scc = d != 0; break;
    case AMDI_S_NAND_B64: d = ~(a & b); n = 2; scc = d != 0; break;
    case AMDI_S_NOR_B32: d = ~(a32 | b32) & 0xffffffffu; scc = d != 0; break;
    case AMDI_S_NOR_B64: d = ~(a | b); n = 2; scc = d != 0; break;
    case AMDI_S_XNOR_B32: d = ~(a32 ^ b32) & 0xffffffffu; scc = d != 0; break;
    case AMDI_S_XNOR_B64: d = ~(a ^ b); n = 2; scc = d != 0; break;
    case AMDI_S_LSHL_B32: d = (uint32_t)(a32 << sh32); scc = d != 0; break;
    case AMDI_S_LSHL_B64: d = a << sh64; n = 2; scc = d != 0; break;
    case AMDI_S_LSHR_B32: d = a32 >> sh32; scc = d != 0; break;
    case AMDI_S_LSHR_B64: d = a >> sh64; n = 2; scc = d != 0; break;
    case AMDI_S_ASHR_I32: d = (uint32_t)((int32_t)a32 >> sh32); scc = d != 0; break;
    case AMDI_S_ASHR_I64: d = (uint64_t)((int64_t)a >> sh64); n = 2; scc = d != 0; break;
    case AMDI_S_BFM_B32: d = (uint32_t)(((1ull << (a32 & 31)) - 1) << (b32 & 31)); break;
    case AMDI_S_BFM_B64: d = ((a32 & 63) ? ((1ull << (a32 & 63)) - 1) : 0) << (b32 & 63); n = 2; break;
    case AMDI_S_MUL_I32: d = (uint32_t)(a32 * b32); break;
    case AMDI_S_MUL_HI_U32: d = (uint32_t)(((uint64_t)a32 * b32) >> 32); break;
    case AMDI_S_MUL_HI_I32: d = (uint32_t)((uint64_t)((int64_t)(int32_t)a32 * (int32_t)b32) >> 32); break;
    case AMDI_S_BFE_U32: case AMDI_S_BFE_I32: {
        unsigned off = b32 & 31, wd = b32 >> 16 & 0x7f;
        uint32_t v = wd ? (wd >= 32 ? a32 >> off : (a32 >> off) & ((1u << wd) - 1)) : 0;
        if (op == AMDI_S_BFE_I32 && wd && wd < 32) v = (uint32_t)((int32_t)(v << (32 - wd)) >> (32 - wd));
        d = v;
        scc = d != 0;
        break;
    }
    case AMDI_S_BFE_U64: case AMDI_S_BFE_I64: {
        unsigned off = b32 & 63, wd = b32 >> 16 & 0x7f;
        uint64_t v = wd ? (wd >= 64 ? a >> off : (a >> off) & ((1ull << wd) - 1)) : 0;
        if (op == AMDI_S_BFE_I64 && wd && wd < 64) v = (uint64_t)((int64_t)(v << (64 - wd)) >> (64 - wd));
        d = v;
        n = 2;
        scc = d != 0;
        break;
    }
    case AMDI_S_ABSDIFF_I32: {
        int64_t r = (int64_t)(int32_t)a32 - (int32_t)b32;
        d = (uint32_t)(r < 0 ? -r : r);
        scc = d != 0;
        break;
    }
    case AMDI_S_LSHL1_ADD_U32: case AMDI_S_LSHL2_ADD_U32: case AMDI_S_LSHL3_ADD_U32: case AMDI_S_LSHL4_ADD_U32: {
        unsigned k = op == AMDI_S_LSHL1_ADD_U32 ? 1 : op == AMDI_S_LSHL2_ADD_U32 ? 2 : op == AMDI_S_LSHL3_ADD_U32 ? 3 : 4;
        uint64_t r = ((uint64_t)a32 << k) + b32;
        scc = r >> 32 != 0;
        d = (uint32_t)r;
        break;
    }
    case AMDI_S_PACK_LL_B32_B16: d = (a32 & 0xffff) | b32 << 16; break;
    case AMDI_S_PACK_LH_B32_B16: d = (a32 & 0xffff) | (b32 & 0xffff0000u); break;
    case AMDI_S_PACK_HH_B32_B16: d = a32 >> 16 | (b32 & 0xffff0000u); break;
    case AMDI_S_PACK_HL_B32_B16: d = a32 >> 16 | b32 << 16; break; /* {S1[15:0], S0[31:16]} */
    /* SOPK */
    case AMDI_S_MOVK_I32: d = (uint32_t)in->simm; break;
    case AMDI_S_CMOVK_I32: d = (uint32_t)in->simm; write = w->scc; break;
    case AMDI_S_ADDK_I32: {
        int32_t x = (int32_t)w->s[in->d[0].reg], k = in->simm, r = (int32_t)((uint32_t)x + (uint32_t)k);
        scc = (x < 0) == (k < 0) && (r < 0) != (x < 0);
        d = (uint32_t)r;
        break;
    }
    case AMDI_S_MULK_I32: d = w->s[in->d[0].reg] * (uint32_t)in->simm; break; /* (wraps, as the hardware does) */
    case AMDI_S_CMPK_EQ_I32: scc = (int32_t)a32 == in->simm; write = false; break;
    case AMDI_S_CMPK_LG_I32: scc = (int32_t)a32 != in->simm; write = false; break;
    case AMDI_S_CMPK_GT_I32: scc = (int32_t)a32 > in->simm; write = false; break;
    case AMDI_S_CMPK_GE_I32: scc = (int32_t)a32 >= in->simm; write = false; break;
    case AMDI_S_CMPK_LT_I32: scc = (int32_t)a32 < in->simm; write = false; break;
    case AMDI_S_CMPK_LE_I32: scc = (int32_t)a32 <= in->simm; write = false; break;
    case AMDI_S_CMPK_EQ_U32: scc = a32 == (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_CMPK_LG_U32: scc = a32 != (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_CMPK_GT_U32: scc = a32 > (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_CMPK_GE_U32: scc = a32 >= (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_CMPK_LT_U32: scc = a32 < (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_CMPK_LE_U32: scc = a32 <= (uint32_t)(in->simm & 0xffff); write = false; break;
    case AMDI_S_GETREG_B32: {
        uint32_t id = in->simm & 0x3f, off = in->simm >> 6 & 31, size = (in->simm >> 11 & 31) + 1, v;
        if (!getreg(w, id, &v)) {
            char text[200];
            mai_describe(w, in, text, sizeof text);
            mai_illegal(w, "%s: hardware register %u is not modelled", text, id);
            return false;
        }
        v >>= off;
        d = size >= 32 ? v : v & ((1u << size) - 1);
        break;
    }
    case AMDI_S_SETREG_B32: case AMDI_S_SETREG_IMM32_B32: {
        uint32_t id = in->simm & 0x3f, off = in->simm >> 6 & 31, size = (in->simm >> 11 & 31) + 1;
        uint32_t v = op == AMDI_S_SETREG_B32 ? a32 : (uint32_t)in->raw[1];
        uint32_t m = (size >= 32 ? ~0u : (1u << size) - 1) << off;
        if (id == 1) w->mode = (w->mode & ~m) | (v << off & m);
        /* other registers (trap and debug state): ignored */
        return true;
    }
    case AMDI_S_WAITCNT_VSCNT: case AMDI_S_WAITCNT_VMCNT: case AMDI_S_WAITCNT_EXPCNT: case AMDI_S_WAITCNT_LGKMCNT:
    case AMDI_S_VERSION:
        return true; /* every access completes in order */
    /* SOPC */
    case AMDI_S_CMP_EQ_I32: case AMDI_S_CMP_EQ_U32: scc = a32 == b32; write = false; break;
    case AMDI_S_CMP_LG_I32: case AMDI_S_CMP_LG_U32: scc = a32 != b32; write = false; break;
    case AMDI_S_CMP_GT_I32: scc = (int32_t)a32 > (int32_t)b32; write = false; break;
    case AMDI_S_CMP_GE_I32: scc = (int32_t)a32 >= (int32_t)b32; write = false; break;
    case AMDI_S_CMP_LT_I32: scc = (int32_t)a32 < (int32_t)b32; write = false; break;
    case AMDI_S_CMP_LE_I32: scc = (int32_t)a32 <= (int32_t)b32; write = false; break;
    case AMDI_S_CMP_GT_U32: scc = a32 > b32; write = false; break;
    case AMDI_S_CMP_GE_U32: scc = a32 >= b32; write = false; break;
    case AMDI_S_CMP_LT_U32: scc = a32 < b32; write = false; break;
    case AMDI_S_CMP_LE_U32: scc = a32 <= b32; write = false; break;
    case AMDI_S_BITCMP0_B32: scc = !(a32 >> (b32 & 31) & 1); write = false; break;
    case AMDI_S_BITCMP1_B32: scc = a32 >> (b32 & 31) & 1; write = false; break;
    case AMDI_S_BITCMP0_B64: scc = !(a >> (b32 & 63) & 1); write = false; break;
    case AMDI_S_BITCMP1_B64: scc = a >> (b32 & 63) & 1; write = false; break;
    case AMDI_S_CMP_EQ_U64: scc = a == b; write = false; break;
    case AMDI_S_CMP_LG_U64: scc = a != b; write = false; break;
    default: {
        char text[200];
        mai_describe(w, in, text, sizeof text);
        mai_illegal(w, "%s: the executor does not implement it", text);
        return false;
    }
    }
    (void)exec;
    if (write && in->nd) mai_sdst(w, &in->d[0], d, n);
    if (scc >= 0) w->scc = (uint8_t)scc;
    return true;
}

/* ** SMEM: loads of 1-16 dwords; cache invalidates and time */
bool mai_smem(mai_wave *w, const amdi_inst *in)
{
    amdi_op op = (amdi_op)in->op;
    switch (op) {
    case AMDI_S_DCACHE_INV: case AMDI_S_GL1_INV: return true;
    case AMDI_S_MEMTIME: case AMDI_S_MEMREALTIME: mai_sdst(w, &in->d[0], mock_amd_clock(), 2); return true;
    default: break;
    }
    uint64_t base = mai_ssrc(w, &in->s[0]) & 0xffffffffffffull;
    uint64_t off = (uint64_t)(int64_t)in->offset;
    if (in->s[1].kind != AMDI_O_NULL) off += (uint32_t)mai_ssrc(w, &in->s[1]);
    uint64_t va = (base + off) & ~3ull; /* scalar loads ignore the low two bits */
    unsigned n = in->d[0].n;
    const uint32_t *p = mai_mem(w, in, MAI_SCALAR, va, n * 4u, false);
    if (!p) return false;
    if (in->d[0].kind != AMDI_O_SGPR) return true;
    for (unsigned i = 0; i < n; i++) w->s[(in->d[0].reg + i) & 127] = p[i];
    return true;
}
