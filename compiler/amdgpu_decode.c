/* The AMDGPU decoder: one instruction's bits -> amdi_inst (amdgpu_isa.h).
 * Field layouts: AMD's ISA guides, chapter "Microcode Formats" (RDNA3 for
 * gfx11; MI200/MI300 for gfx9), and llvm-project
 * llvm/lib/Target/AMDGPU/SIInstrFormats.td, VOPInstructions.td,
 * SMInstructions.td, DSInstructions.td, FLATInstructions.td,
 * BUFInstructions.td (the Enc* classes). Operand codes (SIDefines.h,
 * "Scalar and vector operand encodings" in the guides): 0-105 SGPRs, 106-107
 * VCC, 108-123 trap temporaries, 124 M0 (gfx9) or null (gfx11), 125 M0
 * (gfx11), 126-127 EXEC, 128-208 the integers 0..64 and -1..-16, 235-238 the
 * shared and private apertures, 240-248 the float constants, 250 DPP, 249
 * SDWA (gfx9), 233-234 DPP8 (gfx11), 251 VCCZ, 252 EXECZ, 253 SCC, 255 a
 * 32-bit literal after the instruction, 256-511 VGPRs. */
#include "compiler/amdgpu_isa.h"

#include <stdio.h>
#include <string.h>

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint32_t bits(uint32_t w, unsigned lo, unsigned n) { return (w >> lo) & ((n == 32 ? 0u : 1u << n) - 1u); }
static int32_t sext(uint32_t v, unsigned n) { return (int32_t)(v << (32 - n)) >> (32 - n); }

typedef struct dctx {
    const amdi_target *t;
    const uint8_t *p;
    size_t avail;
    unsigned base;   /* bytes before a literal */
    bool lit_used, bad;
    uint32_t lit;
} dctx;

/* operand width in bits for a type letter */
static unsigned type_bits(const amdi_target *t, char ty)
{
    switch (ty) {
    case 'h': return 16;
    case 'd': case 'l': case 'L': return 64;
    case 'm': return t->wave == 64 ? 64 : 32;
    default: return 32;
    }
}

static uint64_t float_const(unsigned code, unsigned width)
{
    static const uint16_t h[] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
    static const uint32_t f[] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000,
                                 0xc0000000, 0x40800000, 0xc0800000, 0x3e22f983};
    static const uint64_t d[] = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
                                 0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
                                 0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882};
    unsigned i = code - 240;
    return width == 16 ? h[i] : width == 64 ? d[i] : f[i];
}

/* A source operand from its 9-bit code (VGPRs at 256+) for type ty. */
static void src_of(dctx *c, unsigned code, char ty, amdi_opnd *o)
{
    const amdi_target *t = c->t;
    unsigned w = type_bits(t, ty);
    memset(o, 0, sizeof *o);
    o->code = (uint8_t)code;
    o->n = (uint8_t)(w == 64 ? 2 : 1);
    if (code >= 256) {
        o->kind = AMDI_O_VGPR;
        o->reg = (uint16_t)(code - 256);
        return;
    }
    if (code < 128) {
        unsigned r = code;
        if (t->fam == AMDI_GFX11 && code == 124) { o->kind = AMDI_O_NULL; return; }
        if (t->fam == AMDI_GFX11 && code == 125) r = AMDI_SREG_M0;
        o->kind = AMDI_O_SGPR;
        o->reg = (uint16_t)r;
        return;
    }
    if (code <= 208) {
        int64_t v = code <= 192 ? (int64_t)code - 128 : 192 - (int64_t)code;
        o->kind = AMDI_O_CONST;
        o->imm = w == 64 ? (uint64_t)v : w == 16 && ty == 'h' ? (uint64_t)v & 0xffff : (uint32_t)v;
        return;
    }
    if (code >= 240 && code <= 248) {
        o->kind = AMDI_O_CONST;
        o->imm = float_const(code, ty == 'p' ? 16 : w);
        return;
    }
    switch (code) {
    case 235: case 236: case 237: case 238: o->kind = AMDI_O_APERTURE; o->reg = (uint16_t)code; return;
    case 251: o->kind = AMDI_O_VCCZ; return;
    case 252: o->kind = AMDI_O_EXECZ; return;
    case 253: o->kind = AMDI_O_SCC; return;
    case 255:
        if (c->avail < c->base + 4) { c->bad = true; return; }
        c->lit_used = true;
        c->lit = rd32(c->p + c->base);
        o->kind = AMDI_O_CONST;
        o->mod |= AMDI_M_LIT;
        if (w == 64)
            o->imm = ty == 'd' ? (uint64_t)c->lit << 32 : ty == 'L' ? (uint64_t)(int64_t)(int32_t)c->lit : c->lit;
        else
            o->imm = w == 16 ? c->lit & 0xffff : c->lit;
        return;
    }
    c->bad = true; /* LDS direct, POPS, DPP/SDWA markers where they may not be, reserved codes */
}

/* a scalar destination (7-bit) */
static void sdst_of(dctx *c, unsigned code, char ty, amdi_opnd *o)
{
    src_of(c, code, ty, o);
    if (o->kind != AMDI_O_SGPR && o->kind != AMDI_O_NULL) c->bad = true;
}

static void vgpr_of(unsigned reg, unsigned n, amdi_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->kind = AMDI_O_VGPR;
    o->reg = (uint16_t)reg;
    o->n = (uint8_t)n;
    o->code = (uint8_t)reg;
}

static const char *sig_of(amdi_op op)
{
    const char *s = amdi_op_sig(op);
    return s && s[0] && s[1] == ':' ? s : "i:iii";
}
static char sig_src(amdi_op op, unsigned i)
{
    const char *s = sig_of(op) + 2;
    for (unsigned k = 0; k < i && *s; k++) s++;
    return *s ? *s : 'i';
}
static char sig_dst(amdi_op op) { return sig_of(op)[0]; }
static unsigned sig_nsrc(amdi_op op) { return (unsigned)strlen(sig_of(op) + 2); }

static amdi_op lookup(const uint16_t *tab, unsigned n, unsigned opc) { return opc < n ? (amdi_op)tab[opc] : AMDI_OP_NONE; }

/* where gfx90a and gfx940-942 differ inside the gfx9 tables (llvm-project
 * VOP2Instructions.td / VOP3Instructions.td: gfx940 drops the non-IEEE
 * mad/mac and reuses their VOP2 opcodes for fmamk/fmaak; v_mov_b64 and
 * v_lshl_add_u64 are gfx940's; BUFInstructions.td: MUBUF 0x29 is gfx90a's
 * buffer_invl2 and gfx940's buffer_inv, both a cache invalidate) */
static amdi_op for_target(const amdi_target *t, amdi_op op)
{
    if (t->fam != AMDI_GFX9) return op;
    if (t->gfx940) {
        switch (op) {
        case AMDI_V_MAC_F32: case AMDI_V_MAD_F32: case AMDI_B_WBINVL1: case AMDI_B_WBINVL1_VOL: return AMDI_OP_NONE;
        case AMDI_V_MADMK_F32: return AMDI_V_FMAMK_F32;
        case AMDI_V_MADAK_F32: return AMDI_V_FMAAK_F32;
        /* the MFMA renames (VOP3PInstructions.td VOP3P_Real_MFMA_gfx940) */
        case AMDI_V_MFMA_F32_16X16X16F16: return AMDI_V_MFMA_F32_16X16X16_F16;
        case AMDI_V_MFMA_F32_32X32X8F16: return AMDI_V_MFMA_F32_32X32X8_F16;
        case AMDI_V_MFMA_F32_16X16X16BF16_1K: return AMDI_OP_NONE;
        default: return op;
        }
    }
    switch (op) {
    case AMDI_V_MOV_B64: case AMDI_V_LSHL_ADD_U64: case AMDI_V_MFMA_F32_16X16X16_BF16: return AMDI_OP_NONE;
    default: return op;
    }
}

static bool is_cmp(amdi_op op) { return op >= AMDI_V_CMP_F_F16 && op <= AMDI_V_CMPX_CLASS_F64; }
static bool is_cmpx(amdi_op op)
{
    const char *n = amdi_op_name(AMDI_GFX9, op);
    if (!*n) n = amdi_op_name(AMDI_GFX11, op);
    return is_cmp(op) && !strncmp(n, "v_cmpx", 6);
}

/* ops that write VCC (VOP2 e32) or an SGPR mask (VOP3b) beside the VGPR */
static bool carry_out(amdi_op op)
{
    switch (op) {
    case AMDI_V_ADD_CO_U32: case AMDI_V_SUB_CO_U32: case AMDI_V_SUBREV_CO_U32: case AMDI_V_ADDC_CO_U32:
    case AMDI_V_SUBB_CO_U32: case AMDI_V_SUBBREV_CO_U32: case AMDI_V_DIV_SCALE_F32: case AMDI_V_DIV_SCALE_F64:
    case AMDI_V_MAD_U64_U32: case AMDI_V_MAD_I64_I32: return true;
    default: return false;
    }
}
static bool carry_in(amdi_op op)
{
    return op == AMDI_V_ADDC_CO_U32 || op == AMDI_V_SUBB_CO_U32 || op == AMDI_V_SUBBREV_CO_U32 ||
           op == AMDI_V_CNDMASK_B32 || op == AMDI_V_CNDMASK_B16;
}

static bool t16(const amdi_target *t, amdi_op op)
{
    if (t->fam != AMDI_GFX11) return false;
    const char *s = sig_of(op);
    return strchr(s, 'h') != NULL;
}

static void mask_opnd(const amdi_target *t, unsigned reg, amdi_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->kind = AMDI_O_SGPR;
    o->reg = (uint16_t)reg;
    o->n = (uint8_t)(t->wave == 64 ? 2 : 1);
    o->code = (uint8_t)reg;
}

/* ** VOP1 / VOP2 / VOPC (32-bit encodings), with gfx9 SDWA/DPP and gfx11
 * DPP16/DPP8 */
static void dpp16_of(amdi_inst *in, uint32_t w1, bool gfx11)
{
    in->flags |= AMDI_F_DPP;
    in->dpp_ctrl = (uint16_t)bits(w1, 8, 9);
    in->fi = gfx11 ? (uint8_t)bits(w1, 18, 1) : 0;
    in->bound_ctrl = (uint8_t)bits(w1, 19, 1);
    if (bits(w1, 20, 1)) in->s[0].mod |= AMDI_M_NEG;
    if (bits(w1, 21, 1)) in->s[0].mod |= AMDI_M_ABS;
    if (bits(w1, 22, 1)) in->s[1].mod |= AMDI_M_NEG;
    if (bits(w1, 23, 1)) in->s[1].mod |= AMDI_M_ABS;
    in->bank_mask = (uint8_t)bits(w1, 24, 4);
    in->row_mask = (uint8_t)bits(w1, 28, 4);
}

static int vop_short(dctx *c, amdi_inst *in, uint32_t w, amdi_enc enc)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    unsigned src0 = bits(w, 0, 9), vsrc1 = 0, vdst = 0;
    amdi_op op;
    if (enc == AMDI_E_VOP1) {
        op = for_target(t, lookup(tb->vop1, tb->nvop1, bits(w, 9, 8)));
        vdst = bits(w, 17, 8);
    } else if (enc == AMDI_E_VOP2) {
        op = for_target(t, lookup(tb->vop2, tb->nvop2, bits(w, 25, 6)));
        vsrc1 = bits(w, 9, 8);
        vdst = bits(w, 17, 8);
    } else {
        op = lookup(tb->vopc, tb->nvopc, bits(w, 17, 8));
        vsrc1 = bits(w, 9, 8);
    }
    in->op = (uint16_t)op;
    in->enc = (uint8_t)enc;
    if (op == AMDI_OP_NONE) return -1;
    bool is16 = t16(t, op);
    if (is16) in->flags |= AMDI_F_T16;
    unsigned ns = enc == AMDI_E_VOP1 ? (op == AMDI_V_NOP ? 0 : 1) : 2;
    if (amdi_dst_is_addend(op)) ns = 2;
    /* the real src0 behind the DPP/SDWA markers */
    uint32_t w1 = 0;
    bool sdwa = false, dpp = false, dpp8 = false;
    if (t->fam == AMDI_GFX9 && (src0 == 249 || src0 == 250)) {
        if (c->avail < 8) return -1;
        w1 = rd32(c->p + 4);
        c->base = 8;
        sdwa = src0 == 249;
        dpp = src0 == 250;
        src0 = sdwa && bits(w1, 23, 1) ? bits(w1, 0, 8) : 256 + bits(w1, 0, 8);
    } else if (t->fam == AMDI_GFX11 && (src0 == 250 || src0 == 233 || src0 == 234)) {
        if (c->avail < 8) return -1;
        w1 = rd32(c->p + 4);
        c->base = 8;
        dpp = src0 == 250;
        dpp8 = !dpp;
        if (dpp8) in->fi = src0 == 234;
        src0 = 256 + bits(w1, 0, 8);
    }
    /* operands */
    char d = sig_dst(op);
    in->ns = (uint8_t)ns;
    if (ns >= 1) {
        unsigned s0 = src0;
        bool hi = false;
        if (is16 && s0 >= 256 && sig_src(op, 0) == 'h') { hi = (s0 - 256) >> 7; s0 = 256 + ((s0 - 256) & 0x7f); }
        src_of(c, s0, sig_src(op, 0), &in->s[0]);
        if (hi) in->s[0].mod |= AMDI_M_HI;
    }
    if (ns >= 2) {
        unsigned r = vsrc1;
        bool hi = false;
        if (is16 && sig_src(op, 1) == 'h') { hi = r >> 7; r &= 0x7f; }
        src_of(c, 256 + r, sig_src(op, 1), &in->s[1]);
        if (hi) in->s[1].mod |= AMDI_M_HI;
    }
    if (enc == AMDI_E_VOPC) {
        in->nd = 1;
        if (is_cmpx(op) && t->fam == AMDI_GFX11) mask_opnd(t, AMDI_SREG_EXEC, &in->d[0]);
        else mask_opnd(t, AMDI_SREG_VCC, &in->d[0]);
        if (is_cmpx(op) && t->fam == AMDI_GFX9) {
            /* gfx9's v_cmpx writes EXEC and VCC */
            in->nd = 2;
            mask_opnd(t, AMDI_SREG_EXEC, &in->d[1]);
        }
    } else if (op != AMDI_V_NOP) {
        in->nd = 1;
        if (op == AMDI_V_READFIRSTLANE_B32) {
            sdst_of(c, vdst, 'i', &in->d[0]);
        } else {
            bool hi = false;
            unsigned r = vdst;
            if (is16 && d == 'h') { hi = r >> 7; r &= 0x7f; }
            vgpr_of(r, type_bits(t, d) == 64 ? 2 : 1, &in->d[0]);
            if (hi) in->d[0].mod |= AMDI_M_HI;
        }
    }
    if (enc == AMDI_E_VOP2) {
        if (carry_out(op)) { in->nd = 2; mask_opnd(t, AMDI_SREG_VCC, &in->d[1]); }
        if (carry_in(op)) { in->ns = 3; mask_opnd(t, AMDI_SREG_VCC, &in->s[2]); }
        if (op == AMDI_V_MADMK_F32 || op == AMDI_V_FMAMK_F32) {
            /* D = S0 * K + S1: s[1] the literal K, s[2] vsrc1 */
            in->s[2] = in->s[1];
            c->lit_used = true;
            if (c->avail < c->base + 4) return -1;
            c->lit = rd32(c->p + c->base);
            in->s[1] = (amdi_opnd){.kind = AMDI_O_CONST, .mod = AMDI_M_LIT, .n = 1, .code = 255, .imm = c->lit};
            in->ns = 3;
        } else if (op == AMDI_V_MADAK_F32 || op == AMDI_V_FMAAK_F32) {
            c->lit_used = true;
            if (c->avail < c->base + 4) return -1;
            c->lit = rd32(c->p + c->base);
            in->s[2] = (amdi_opnd){.kind = AMDI_O_CONST, .mod = AMDI_M_LIT, .n = 1, .code = 255, .imm = c->lit};
            in->ns = 3;
        }
    }
    if (sdwa) {
        in->flags |= AMDI_F_SDWA;
        if (enc == AMDI_E_VOPC) {
            if (bits(w1, 15, 1)) sdst_of(c, bits(w1, 8, 7), 'm', &in->d[0]);
        } else {
            in->sdwa_dst_sel = (uint8_t)bits(w1, 8, 3);
            in->sdwa_dst_unused = (uint8_t)bits(w1, 11, 2);
            in->clamp = (uint8_t)bits(w1, 13, 1);
            in->omod = (uint8_t)bits(w1, 14, 2);
        }
        in->sdwa_sel[0] = (uint8_t)bits(w1, 16, 3);
        if (bits(w1, 19, 1)) in->s[0].mod |= AMDI_M_SEXT;
        if (bits(w1, 20, 1)) in->s[0].mod |= AMDI_M_NEG;
        if (bits(w1, 21, 1)) in->s[0].mod |= AMDI_M_ABS;
        in->sdwa_sel[1] = (uint8_t)bits(w1, 24, 3);
        if (bits(w1, 27, 1)) in->s[1].mod |= AMDI_M_SEXT;
        if (bits(w1, 28, 1)) in->s[1].mod |= AMDI_M_NEG;
        if (bits(w1, 29, 1)) in->s[1].mod |= AMDI_M_ABS;
        if (bits(w1, 31, 1) && enc != AMDI_E_VOP1) src_of(c, bits(w, 9, 8), sig_src(op, 1), &in->s[1]);
    } else if (dpp) {
        dpp16_of(in, w1, t->fam == AMDI_GFX11);
    } else if (dpp8) {
        in->flags |= AMDI_F_DPP8;
        in->dpp8 = bits(w1, 8, 24);
    }
    return 0;
}

/* ** VOP3 (and VOP3b), VOP3P */
static int vop3(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    unsigned opc = bits(w0, 16, 10);
    unsigned vopc_base = 0, vop2_base = 0x100, vop1_base = t->fam == AMDI_GFX11 ? 0x180 : 0x140;
    amdi_op op;
    amdi_enc sub;
    if (opc < 0x100) { op = lookup(tb->vopc, tb->nvopc, opc - vopc_base); sub = AMDI_E_VOPC; }
    else if (opc < 0x140) { op = lookup(tb->vop2, tb->nvop2, opc - vop2_base); sub = AMDI_E_VOP2; }
    else if (opc >= vop1_base && opc < vop1_base + 0x80) { op = lookup(tb->vop1, tb->nvop1, opc - vop1_base); sub = AMDI_E_VOP1; }
    else { op = lookup(tb->vop3, tb->nvop3, opc); sub = AMDI_E_VOP3; }
    op = for_target(t, op);
    in->op = (uint16_t)op;
    in->enc = AMDI_E_VOP3;
    if (op == AMDI_OP_NONE) return -1;
    if (sub != AMDI_E_VOP3 || (t->fam == AMDI_GFX9 && (op == AMDI_V_ADD_CO_U32 || op == AMDI_V_SUB_CO_U32 ||
                                                     op == AMDI_V_SUBREV_CO_U32)))
        in->flags |= AMDI_F_E64;
    /* gfx11's v_dot2acc_f32_f16 has no VOP3 form (llvm-mc -mcpu=gfx1100 refuses VOP3 opcode 0x102) */
    if (sub == AMDI_E_VOP2 && t->fam == AMDI_GFX11 && op == AMDI_V_DOT2C_F32_F16) return -1;
    if (sub == AMDI_E_VOP2 && (op == AMDI_V_MADMK_F32 || op == AMDI_V_MADAK_F32 || op == AMDI_V_FMAMK_F32 ||
                               op == AMDI_V_FMAAK_F32))
        return -1;
    bool is16 = t16(t, op);
    if (is16) in->flags |= AMDI_F_T16;
    bool vop3b = carry_out(op);
    unsigned ns = sig_nsrc(op);
    if (sub == AMDI_E_VOP2 && carry_in(op)) ns = 3;
    if (amdi_dst_is_addend(op)) ns = 2;
    if (op == AMDI_V_NOP) ns = 0;
    if (op == AMDI_V_READLANE_B32 || op == AMDI_V_WRITELANE_B32) ns = 2;
    in->ns = (uint8_t)ns;
    unsigned src0 = bits(w1, 0, 9);
    uint32_t w2 = 0;
    bool dpp = false, dpp8 = false;
    if (t->fam == AMDI_GFX11 && (src0 == 250 || src0 == 233 || src0 == 234)) {
        if (c->avail < 12) return -1;
        w2 = rd32(c->p + 8);
        c->base = 12;
        dpp = src0 == 250;
        dpp8 = !dpp;
        if (dpp8) in->fi = src0 == 234;
        src0 = 256 + bits(w2, 0, 8);
    }
    unsigned codes[3] = {src0, bits(w1, 9, 9), bits(w1, 18, 9)};
    in->op_sel = vop3b ? 0 : (uint8_t)bits(w0, 11, 4);
    for (unsigned i = 0; i < ns && i < 3; i++) {
        char ty = sig_src(op, i);
        if (sub == AMDI_E_VOP2 && carry_in(op) && i == 2) ty = 'm';
        src_of(c, codes[i], ty, &in->s[i]);
        if (!vop3b && bits(w0, 8 + i, 1)) in->s[i].mod |= AMDI_M_ABS;
        if (bits(w1, 29 + i, 1)) in->s[i].mod |= AMDI_M_NEG;
        if (is16 && ty == 'h' && (in->op_sel >> i & 1)) in->s[i].mod |= AMDI_M_HI;
    }
    in->clamp = (uint8_t)bits(w0, 15, 1);
    in->omod = (uint8_t)bits(w1, 27, 2);
    unsigned vdst = bits(w0, 0, 8);
    char d = sig_dst(op);
    in->nd = 1;
    if (sub == AMDI_E_VOPC) {
        if (is_cmpx(op) && t->fam == AMDI_GFX11) {
            mask_opnd(t, AMDI_SREG_EXEC, &in->d[0]);
        } else {
            sdst_of(c, vdst, 'm', &in->d[0]);
            if (is_cmpx(op)) { in->nd = 2; mask_opnd(t, AMDI_SREG_EXEC, &in->d[1]); }
        }
    } else if (op == AMDI_V_READLANE_B32 || op == AMDI_V_READFIRSTLANE_B32) {
        sdst_of(c, vdst, 'i', &in->d[0]);
    } else {
        vgpr_of(vdst, type_bits(t, d) == 64 ? 2 : 1, &in->d[0]);
        if (is16 && d == 'h' && (in->op_sel & 8)) in->d[0].mod |= AMDI_M_HI;
    }
    if (vop3b) {
        in->nd = 2;
        sdst_of(c, bits(w0, 8, 7), 'm', &in->d[1]);
    }
    if (t->fam == AMDI_GFX9 && c->lit_used) return -1; /* gfx9's VOP3 has no literal */
    if (dpp) dpp16_of(in, w2, true);
    if (dpp8) { in->flags |= AMDI_F_DPP8; in->dpp8 = bits(w2, 8, 24); }
    return 0;
}

/* gfx9's MFMA (VOP3P-MAI, as llvm-mc -show-encoding lays it out): vdst 0-7, cbsz 8-10, abid 11-14, acc_cd 15
 * (D and C are AGPRs), op 16-22; src0/src1/src2 in the second dword's 0-8/9-17/18-26, bits 27/28 make A/B
 * AGPRs, blgp 29-31. A and B are two registers (four 16-bit values); C and D four (16x16) or sixteen (32x32) */
static int mfma(dctx *c, amdi_inst *in, amdi_op op, uint32_t w0, uint32_t w1)
{
    unsigned nd = op == AMDI_V_MFMA_F32_32X32X8F16 || op == AMDI_V_MFMA_F32_32X32X8_F16 ? 16 : 4;
    bool acc_cd = bits(w0, 15, 1);
    in->ns = 3;
    unsigned codes[3] = {bits(w1, 0, 9), bits(w1, 9, 9), bits(w1, 18, 9)};
    for (unsigned i = 0; i < 3; i++) {
        src_of(c, codes[i], 'f', &in->s[i]);
        if (in->s[i].kind == AMDI_O_VGPR) {
            in->s[i].n = (uint8_t)(i < 2 ? 2 : nd);
            if (i < 2 && bits(w1, 27 + i, 1)) in->s[i].kind = AMDI_O_AGPR;
            if (i == 2 && acc_cd) in->s[i].kind = AMDI_O_AGPR;
        } else if (i < 2 || in->s[i].kind != AMDI_O_CONST) {
            return -1; /* A and B are registers; C a register range or an inline constant */
        }
    }
    in->cbsz = (uint8_t)bits(w0, 8, 3);
    in->abid = (uint8_t)bits(w0, 11, 4);
    in->blgp = (uint8_t)bits(w1, 29, 3);
    in->nd = 1;
    vgpr_of(bits(w0, 0, 8), nd, &in->d[0]);
    if (acc_cd) in->d[0].kind = AMDI_O_AGPR;
    return c->lit_used ? -1 : 0;
}

static int vop3p(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    amdi_op op = for_target(t, lookup(tb->vop3p, tb->nvop3p, bits(w0, 16, 7)));
    in->op = (uint16_t)op;
    in->enc = AMDI_E_VOP3P;
    if (op == AMDI_OP_NONE) return -1;
    if (t->fam == AMDI_GFX9 && amdi_is_mma(op)) return mfma(c, in, op, w0, w1);
    unsigned ns = sig_nsrc(op);
    if (op == AMDI_V_ACCVGPR_READ_B32 || op == AMDI_V_ACCVGPR_WRITE_B32) ns = 1;
    in->ns = (uint8_t)ns;
    unsigned codes[3] = {bits(w1, 0, 9), bits(w1, 9, 9), bits(w1, 18, 9)};
    for (unsigned i = 0; i < ns; i++) {
        /* gfx90a's packed f32 ops take register pairs, but a constant is one
         * f32 (in the low dword; op_sel_hi picks it for the high element) */
        char ty = sig_src(op, i);
        src_of(c, codes[i], ty == 'l' ? 'f' : ty, &in->s[i]);
        if (ty == 'l' && in->s[i].kind != AMDI_O_CONST) in->s[i].n = 2;
        if (bits(w1, 29 + i, 1)) in->s[i].mod |= AMDI_M_NEG;
    }
    in->op_sel = (uint8_t)bits(w0, 11, 3);
    in->op_sel_hi = (uint8_t)(bits(w1, 27, 2) | bits(w0, 14, 1) << 2);
    in->neg_hi = (uint8_t)bits(w0, 8, 3);
    in->clamp = (uint8_t)bits(w0, 15, 1);
    in->nd = 1;
    vgpr_of(bits(w0, 0, 8), type_bits(t, sig_dst(op)) == 64 ? 2 : 1, &in->d[0]);
    if (op == AMDI_V_ACCVGPR_WRITE_B32) in->d[0].kind = AMDI_O_AGPR;
    if (op == AMDI_V_ACCVGPR_READ_B32) in->s[0].kind = in->s[0].kind == AMDI_O_VGPR ? AMDI_O_AGPR : in->s[0].kind;
    if (amdi_is_mma(op)) { /* gfx11 WMMA: A and B eight registers; C and D eight in wave32, four in wave64 */
        unsigned ncd = t->wave == 64 ? 4 : 8;
        for (unsigned i = 0; i < 3; i++)
            if (in->s[i].kind == AMDI_O_VGPR) in->s[i].n = (uint8_t)(i < 2 ? 8 : ncd);
            else if (i < 2 || in->s[i].kind != AMDI_O_CONST) return -1;
        in->d[0].n = (uint8_t)ncd;
    }
    if (t->fam == AMDI_GFX9 && c->lit_used) return -1;
    return 0;
}

/* ** VOPD (gfx11): two ops, decoded into in[0] (X) and in[1] (Y) */
static int vopd(dctx *c, amdi_inst *in, uint32_t w0)
{
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    amdi_op ox = amdi_vopd_op(bits(w0, 22, 4)), oy = amdi_vopd_op(bits(w0, 17, 5));
    if (bits(w0, 22, 4) > 13) ox = AMDI_OP_NONE;
    amdi_inst *x = &in[0], *y = &in[1];
    memset(y, 0, sizeof *y);
    y->raw[0] = x->raw[0];
    y->raw[1] = x->raw[1];
    x->op = (uint16_t)ox;
    x->enc = y->enc = AMDI_E_VOPD;
    if (ox == AMDI_OP_NONE || oy == AMDI_OP_NONE) return -1;
    y->op = (uint16_t)oy;
    x->flags = AMDI_F_VOPD_X;
    y->flags = AMDI_F_VOPD_Y;
    unsigned vdstx = bits(w1, 24, 8), vdsty = bits(w1, 17, 7) << 1 | ((vdstx & 1) ^ 1);
    struct { amdi_inst *in; amdi_op op; unsigned src0, vsrc1, vdst; } h[2] = {
        {x, ox, bits(w0, 0, 9), bits(w0, 9, 8), vdstx}, {y, oy, bits(w1, 0, 9), bits(w1, 9, 8), vdsty}};
    /* the literal first (shared): fmaak/fmamk K or a src0 of 255 */
    for (int i = 0; i < 2; i++) {
        amdi_inst *e = h[i].in;
        amdi_op op = h[i].op;
        e->nd = 1;
        vgpr_of(h[i].vdst, 1, &e->d[0]);
        src_of(c, h[i].src0, 'i', &e->s[0]);
        if (op == AMDI_V_MOV_B32) { e->ns = 1; continue; }
        src_of(c, 256 + h[i].vsrc1, 'i', &e->s[1]);
        e->ns = 2;
        if (op == AMDI_V_FMAMK_F32 || op == AMDI_V_FMAAK_F32) {
            if (c->avail < c->base + 4) return -1;
            c->lit_used = true;
            c->lit = rd32(c->p + c->base);
            amdi_opnd k = {.kind = AMDI_O_CONST, .mod = AMDI_M_LIT, .n = 1, .code = 255, .imm = c->lit};
            if (op == AMDI_V_FMAMK_F32) { e->s[2] = e->s[1]; e->s[1] = k; }
            else e->s[2] = k;
            e->ns = 3;
        }
        if (op == AMDI_V_CNDMASK_B32) { e->ns = 3; mask_opnd(c->t, AMDI_SREG_VCC, &e->s[2]); }
    }
    return 0;
}

/* ** memory */
static int smem(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    amdi_op op = lookup(tb->smem, tb->nsmem, bits(w0, 18, 8));
    in->op = (uint16_t)op;
    in->enc = AMDI_E_SMEM;
    if (op == AMDI_OP_NONE) return -1;
    const char *sig = amdi_op_sig(op);
    unsigned bytes = (unsigned)(sig[0] ? (sig[0] - '0') * (sig[1] >= '0' && sig[1] <= '9' ? 10 : 1) +
                                             (sig[1] >= '0' && sig[1] <= '9' ? sig[1] - '0' : 0)
                                       : 0);
    unsigned sdata = bits(w0, 6, 7);
    in->nd = bytes ? 1 : 0;
    if (bytes) {
        src_of(c, sdata, 'i', &in->d[0]);
        in->d[0].n = (uint8_t)(bytes / 4);
    }
    bool has_base = op != AMDI_S_DCACHE_INV && op != AMDI_S_GL1_INV && op != AMDI_S_MEMTIME &&
                    op != AMDI_S_MEMREALTIME;
    in->ns = 0;
    if (has_base) {
        in->ns = 2;
        src_of(c, bits(w0, 0, 6) * 2, 'l', &in->s[0]);
        in->s[1].kind = AMDI_O_NULL;
        if (t->fam == AMDI_GFX11) {
            in->cpol = (uint8_t)(bits(w0, 14, 1) * AMDI_C_GLC | bits(w0, 13, 1) * AMDI_C_DLC);
            in->offset = sext(bits(w1, 0, 21), 21);
            src_of(c, bits(w1, 25, 7), 'i', &in->s[1]);
        } else {
            in->cpol = (uint8_t)(bits(w0, 16, 1) * AMDI_C_GLC);
            bool imm = bits(w0, 17, 1), soe = bits(w0, 14, 1);
            if (imm) in->offset = sext(bits(w1, 0, 21), 21);
            in->offen = (uint8_t)(imm && soe); /* printing: the offset shows beside the SGPR */
            if (soe) src_of(c, bits(w1, 25, 7), 'i', &in->s[1]);
            else if (!imm) src_of(c, bits(w1, 0, 8), 'i', &in->s[1]);
        }
    }
    return 0;
}

static unsigned mem_bytes(amdi_op op)
{
    const char *s = amdi_op_sig(op);
    while (*s && (*s < '0' || *s > '9')) s++;
    unsigned n = 0;
    while (*s >= '0' && *s <= '9') n = n * 10 + (unsigned)(*s++ - '0');
    return n;
}
static bool mem_is_store(amdi_op op)
{
    return (op >= AMDI_M_STORE_B8 && op <= AMDI_M_STORE_B128) || (op >= AMDI_B_STORE_B8 && op <= AMDI_B_STORE_B128);
}
static bool mem_is_atomic(amdi_op op) { return op >= AMDI_M_ATOMIC_SWAP && op <= AMDI_M_ATOMIC_ADD_F64; }

static int ds(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    unsigned opc = t->fam == AMDI_GFX11 ? bits(w0, 18, 8) : bits(w0, 17, 8);
    amdi_op op = lookup(tb->ds, tb->nds, opc);
    in->op = (uint16_t)op;
    in->enc = AMDI_E_DS;
    if (op == AMDI_OP_NONE) return -1;
    in->gds = (uint8_t)(t->fam == AMDI_GFX11 ? bits(w0, 17, 1) : bits(w0, 16, 1));
    bool acc = t->fam == AMDI_GFX9 && bits(w0, 25, 1);
    in->offset = (int32_t)bits(w0, 0, 8);
    in->offset1 = (uint8_t)bits(w0, 8, 8);
    unsigned addr = bits(w1, 0, 8), data0 = bits(w1, 8, 8), data1 = bits(w1, 16, 8), vdst = bits(w1, 24, 8);
    unsigned b = mem_bytes(op), n = (b + 3) / 4;
    const char *name = amdi_op_name(AMDI_GFX9, op);
    bool two = strstr(name, "2_") || strstr(name, "2st64");
    bool ret = strstr(name, "read") || strstr(name, "_rtn") || op == AMDI_DS_SWIZZLE_B32 ||
               op == AMDI_DS_PERMUTE_B32 || op == AMDI_DS_BPERMUTE_B32;
    bool writes_data = !strstr(name, "read") && op != AMDI_DS_SWIZZLE_B32;
    bool cmp = op == AMDI_DS_CMPST_RTN_B32 || op == AMDI_DS_CMPST_RTN_B64;
    in->ns = 1;
    vgpr_of(addr, 1, &in->s[0]);
    if (writes_data) {
        vgpr_of(data0, n, &in->s[1]);
        in->ns = 2;
        if (two || cmp) { vgpr_of(data1, n, &in->s[2]); in->ns = 3; }
        if (acc) in->s[1].kind = in->s[2].kind = AMDI_O_AGPR;
    }
    if (ret) {
        in->nd = 1;
        vgpr_of(vdst, two ? 2 * n : n, &in->d[0]);
        if (strstr(name, "d16")) in->d[0].n = 1;
        if (acc) in->d[0].kind = AMDI_O_AGPR;
    }
    return 0;
}

static int flat(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    amdi_op op = lookup(tb->flat, tb->nflat, bits(w0, 18, 7));
    unsigned seg = t->fam == AMDI_GFX11 ? bits(w0, 16, 2) : bits(w0, 14, 2);
    in->op = (uint16_t)op;
    in->enc = (uint8_t)(seg == 0 ? AMDI_E_FLAT : seg == 1 ? AMDI_E_SCRATCH : AMDI_E_GLOBAL);
    if (op == AMDI_OP_NONE || seg == 3) return -1;
    if (t->fam == AMDI_GFX11) {
        in->cpol = (uint8_t)(bits(w0, 14, 1) * AMDI_C_GLC | bits(w0, 15, 1) * AMDI_C_SLC | bits(w0, 13, 1) * AMDI_C_DLC);
        in->offset = sext(bits(w0, 0, 13), 13);
        in->sve = (uint8_t)bits(w1, 23, 1);
    } else {
        if (t->gfx940)
            in->cpol = (uint8_t)(bits(w0, 16, 1) * AMDI_C_SC0 | bits(w0, 25, 1) * AMDI_C_SC1 | bits(w0, 17, 1) * AMDI_C_NT);
        else
            in->cpol = (uint8_t)(bits(w0, 16, 1) * AMDI_C_GLC | bits(w0, 17, 1) * AMDI_C_SLC);
        in->offset = seg == 0 ? (int32_t)bits(w0, 0, 12) : sext(bits(w0, 0, 13), 13);
    }
    bool acc = t->fam == AMDI_GFX9 && bits(w1, 23, 1);
    unsigned addr = bits(w1, 0, 8), data = bits(w1, 8, 8), saddr = bits(w1, 16, 7), vdst = bits(w1, 24, 8);
    unsigned b = mem_bytes(op), n = (b + 3) / 4;
    bool store = mem_is_store(op), atomic = mem_is_atomic(op);
    bool ret = !store && (!atomic || (t->fam == AMDI_GFX11 ? bits(w0, 14, 1) : bits(w0, 16, 1)));
    bool saddr_off = t->fam == AMDI_GFX11 ? saddr == 124 : saddr == 0x7f;
    if (seg == 0) saddr_off = true;
    /* address: VGPR(s) unless scratch uses saddr alone */
    bool vaddr_used = true;
    if (seg == 1) vaddr_used = t->fam == AMDI_GFX11 ? in->sve : saddr_off;
    /* gfx90a: a scratch VGPR address exactly when saddr is off; gfx940
     * moved that choice to SVE, bit 13 of the first dword (where gfx90a
     * has LDS): with SVE 0 the VGPR field is unused even when saddr is off
     * (llvm-mc -mcpu=gfx942: `scratch_store_dword off, v1, off` has it 0,
     * `v0, v1, off` and `v0, v1, s2` have it 1; LLVM's
     * AMDGPU/FLATInstructions.td, the gfx940 SVE bit) */
    if (seg == 1 && t->fam == AMDI_GFX9) vaddr_used = t->gfx940 ? bits(w0, 13, 1) : saddr_off;
    if (seg == 1 && t->gfx940) in->sve = (uint8_t)bits(w0, 13, 1);
    unsigned an = seg == 2 && !saddr_off ? 1 : seg == 1 ? 1 : 2;
    in->ns = 3;
    if (vaddr_used) vgpr_of(addr, an, &in->s[0]);
    else in->s[0].kind = AMDI_O_NULL;
    if (store || atomic) {
        unsigned dn = atomic && (op == AMDI_M_ATOMIC_CMPSWAP || op == AMDI_M_ATOMIC_CMPSWAP_X2) ? 2 * n : n;
        vgpr_of(data, dn, &in->s[1]);
        if (acc) in->s[1].kind = AMDI_O_AGPR;
    }
    if (saddr_off) in->s[2].kind = AMDI_O_NULL;
    else src_of(c, saddr, seg == 1 ? 'i' : 'l', &in->s[2]);
    if (ret) {
        in->nd = 1;
        vgpr_of(vdst, n, &in->d[0]);
        if (acc) in->d[0].kind = AMDI_O_AGPR;
    }
    return 0;
}

static int mubuf(dctx *c, amdi_inst *in, uint32_t w0)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    if (c->avail < 8) return -1;
    uint32_t w1 = rd32(c->p + 4);
    c->base = 8;
    if (t->fam == AMDI_GFX11) {
        /* gfx11's MUBUF: clang uses scratch_* for the stack; only the cache
         * invalidates (no operands) come this way */
        amdi_op op = lookup(tb->mubuf, tb->nmubuf, bits(w0, 18, 8));
        in->op = (uint16_t)op;
        in->enc = AMDI_E_MUBUF;
        return op == AMDI_B_GL0_INV || op == AMDI_B_GL1_INV ? 0 : -1;
    }
    amdi_op op = for_target(t, lookup(tb->mubuf, tb->nmubuf, bits(w0, 18, 7)));
    in->op = (uint16_t)op;
    in->enc = AMDI_E_MUBUF;
    if (op == AMDI_OP_NONE || bits(w0, 16, 1) /* lds */) return -1;
    if (op == AMDI_B_WBL2 || op == AMDI_B_INV || op == AMDI_B_WBINVL1 || op == AMDI_B_WBINVL1_VOL) {
        if (t->gfx940) in->cpol = (uint8_t)(bits(w0, 14, 1) * AMDI_C_SC0 | bits(w0, 15, 1) * AMDI_C_SC1);
        return 0;
    }
    in->offset = (int32_t)bits(w0, 0, 12);
    in->offen = (uint8_t)bits(w0, 12, 1);
    in->idxen = (uint8_t)bits(w0, 13, 1);
    if (t->gfx940)
        in->cpol = (uint8_t)(bits(w0, 14, 1) * AMDI_C_SC0 | bits(w0, 15, 1) * AMDI_C_SC1 | bits(w0, 17, 1) * AMDI_C_NT);
    else
        in->cpol = (uint8_t)(bits(w0, 14, 1) * AMDI_C_GLC | bits(w0, 17, 1) * AMDI_C_SLC);
    bool acc = bits(w1, 23, 1);
    unsigned vaddr = bits(w1, 0, 8), vdata = bits(w1, 8, 8), srsrc = bits(w1, 16, 5) * 4, soffset = bits(w1, 24, 8);
    unsigned n = (mem_bytes(op) + 3) / 4;
    in->ns = 4;
    if (in->offen || in->idxen) vgpr_of(vaddr, (unsigned)in->offen + in->idxen, &in->s[0]);
    else in->s[0].kind = AMDI_O_NULL;
    src_of(c, srsrc, 'i', &in->s[2]);
    in->s[2].n = 4;
    src_of(c, soffset, 'i', &in->s[3]);
    if (mem_is_store(op)) {
        vgpr_of(vdata, n, &in->s[1]);
        if (acc) in->s[1].kind = AMDI_O_AGPR;
    } else {
        in->nd = 1;
        vgpr_of(vdata, n, &in->d[0]);
        if (acc) in->d[0].kind = AMDI_O_AGPR;
    }
    return 0;
}

/* ** scalar */
static int salu(dctx *c, amdi_inst *in, uint32_t w)
{
    const amdi_target *t = c->t;
    const amdi_tables *tb = amdi_tables_of(t);
    c->base = 4;
    amdi_op op;
    if (bits(w, 23, 9) == 0x17d) { /* SOP1 */
        op = lookup(tb->sop1, tb->nsop1, bits(w, 8, 8));
        in->enc = AMDI_E_SOP1;
        in->op = (uint16_t)op;
        if (op == AMDI_OP_NONE) return -1;
        const char *s = sig_of(op);
        if (s[0] != '-') { in->nd = 1; sdst_of(c, bits(w, 16, 7), s[0], &in->d[0]); }
        if (s[2]) { in->ns = 1; src_of(c, bits(w, 0, 8), s[2], &in->s[0]); }
        return 0;
    }
    if (bits(w, 23, 9) == 0x17e) { /* SOPC */
        op = lookup(tb->sopc, tb->nsopc, bits(w, 16, 7));
        in->enc = AMDI_E_SOPC;
        in->op = (uint16_t)op;
        if (op == AMDI_OP_NONE) return -1;
        const char *s = sig_of(op);
        in->ns = 2;
        src_of(c, bits(w, 0, 8), s[2], &in->s[0]);
        src_of(c, bits(w, 8, 8), s[3] ? s[3] : 'i', &in->s[1]);
        return 0;
    }
    if (bits(w, 23, 9) == 0x17f) { /* SOPP */
        op = lookup(tb->sopp, tb->nsopp, bits(w, 16, 7));
        in->enc = AMDI_E_SOPP;
        in->op = (uint16_t)op;
        if (op == AMDI_OP_NONE) return -1;
        in->simm = (int32_t)bits(w, 0, 16);
        if ((op >= AMDI_S_BRANCH && op <= AMDI_S_CBRANCH_EXECNZ)) {
            in->simm = sext(bits(w, 0, 16), 16);
            in->flags |= AMDI_F_BRANCH;
        }
        return 0;
    }
    if (bits(w, 28, 4) == 0xb) { /* SOPK */
        op = lookup(tb->sopk, tb->nsopk, bits(w, 23, 5));
        in->enc = AMDI_E_SOPK;
        in->op = (uint16_t)op;
        if (op == AMDI_OP_NONE) return -1;
        in->simm = (int32_t)bits(w, 0, 16);
        bool signed_imm = op == AMDI_S_MOVK_I32 || op == AMDI_S_CMOVK_I32 || op == AMDI_S_ADDK_I32 ||
                          op == AMDI_S_MULK_I32 || (op >= AMDI_S_CMPK_EQ_I32 && op <= AMDI_S_CMPK_LE_I32);
        if (signed_imm) in->simm = sext(bits(w, 0, 16), 16);
        if (op == AMDI_S_CALL_B64) { in->simm = sext(bits(w, 0, 16), 16); in->flags |= AMDI_F_BRANCH; }
        const char *s = sig_of(op);
        unsigned r = bits(w, 16, 7);
        if (s[0] != '-') { in->nd = 1; sdst_of(c, r, s[0], &in->d[0]); }
        if (s[2]) { in->ns = 1; src_of(c, r, s[2], &in->s[0]); }
        if (op == AMDI_S_ADDK_I32 || op == AMDI_S_MULK_I32) { in->ns = 1; in->s[0] = in->d[0]; }
        if (op == AMDI_S_SETREG_IMM32_B32) {
            c->lit_used = true; /* (the length, also when the bytes stop short) */
            if (c->avail < 8) return -1;
            c->lit = rd32(c->p + 4);
        }
        return 0;
    }
    if (bits(w, 30, 2) == 2) { /* SOP2 */
        op = lookup(tb->sop2, tb->nsop2, bits(w, 23, 7));
        in->enc = AMDI_E_SOP2;
        in->op = (uint16_t)op;
        if (op == AMDI_OP_NONE) return -1;
        const char *s = sig_of(op);
        in->nd = 1;
        sdst_of(c, bits(w, 16, 7), s[0], &in->d[0]);
        in->ns = 2;
        src_of(c, bits(w, 0, 8), s[2], &in->s[0]);
        src_of(c, bits(w, 8, 8), s[3], &in->s[1]);
        return 0;
    }
    return -1;
}

int amdi_decode(const amdi_target *t, const uint8_t *p, size_t avail, amdi_inst *in)
{
    memset(in, 0, sizeof *in);
    if (avail < 4) {
        in->len = (uint8_t)avail;
        return -1;
    }
    dctx c = {.t = t, .p = p, .avail = avail, .base = 4};
    uint32_t w = rd32(p);
    in->raw[0] = w;
    if (avail >= 8) in->raw[1] = rd32(p + 4);
    int r = -1;
    bool g11 = t->fam == AMDI_GFX11;
    if (bits(w, 30, 2) == 2 || bits(w, 28, 4) == 0xb) {
        r = salu(&c, in, w);
    } else if (bits(w, 25, 7) == 0x3f) {
        r = vop_short(&c, in, w, AMDI_E_VOP1);
    } else if (bits(w, 25, 7) == 0x3e) {
        r = vop_short(&c, in, w, AMDI_E_VOPC);
    } else if (bits(w, 31, 1) == 0) {
        r = vop_short(&c, in, w, AMDI_E_VOP2);
    } else if (!g11 && bits(w, 23, 9) == 0x1a7) {
        r = vop3p(&c, in, w);
    } else if (g11 && bits(w, 24, 8) == 0xcc) {
        r = vop3p(&c, in, w);
    } else if (bits(w, 26, 6) == (g11 ? 0x35u : 0x34u)) {
        r = vop3(&c, in, w);
    } else if (g11 && bits(w, 26, 6) == 0x32) {
        r = vopd(&c, in, w);
    } else if (bits(w, 26, 6) == (g11 ? 0x3du : 0x30u)) {
        r = smem(&c, in, w);
    } else if (bits(w, 26, 6) == 0x36) {
        r = ds(&c, in, w);
    } else if (bits(w, 26, 6) == 0x37) {
        r = flat(&c, in, w);
    } else if (bits(w, 26, 6) == 0x38) {
        r = mubuf(&c, in, w);
    } else {
        c.base = 8; /* the remaining encodings (MIMG, MTBUF, EXP, ...) are 64-bit */
    }
    unsigned len = c.base + (c.lit_used ? 4u : 0u);
    in->len = (uint8_t)len;
    if (in->enc == AMDI_E_VOPD) in[1].len = in->len;
    for (int h = 0; h < (in->enc == AMDI_E_VOPD ? 2 : 1); h++) {
        amdi_inst *x = &in[h];
        amdi_op op = (amdi_op)x->op;
        const char *sig = amdi_op_sig(op);
        if (sig[0] && sig[1] == ':') {
            x->ty[0] = sig[0];
            for (int i = 0; i < 3; i++) x->ty[i + 1] = sig_src(op, (unsigned)i);
            if (carry_in(op) && (x->enc != AMDI_E_VOP3 || x->ns > 2)) x->ty[3] = 'm';
        } else if (sig[0]) {
            x->mbytes = (uint8_t)mem_bytes(op);
            x->mkind = sig[0] >= '0' && sig[0] <= '9' ? '4' : sig[0] == 'h' || sig[0] == 'H' ? sig[0] : sig[0];
            if ((sig[0] == 'h' || sig[0] == 'H') && (sig[1] == 's')) x->mkind = sig[0] == 'h' ? 'x' : 'X';
        }
    }
    if ((in->enc == AMDI_E_VOP1 || in->enc == AMDI_E_VOP2 || in->enc == AMDI_E_VOPC || in->enc == AMDI_E_VOP3) &&
        !(in->flags & (AMDI_F_DPP | AMDI_F_DPP8 | AMDI_F_SDWA)) && !in->clamp && !in->omod) {
        bool nomod = true;
        for (unsigned i = 0; i < in->ns && i < 3; i++)
            if ((in->s[i].mod & (AMDI_M_NEG | AMDI_M_ABS)) || in->s[i].kind == AMDI_O_AGPR) nomod = false;
        if (nomod) in->flags |= AMDI_F_NOMOD;
    }
    if ((in->enc == AMDI_E_VOP1 || in->enc == AMDI_E_VOP2 || in->enc == AMDI_E_VOP3) &&
        !(in->flags & (AMDI_F_DPP | AMDI_F_DPP8 | AMDI_F_SDWA)) && !in->clamp && !in->omod && in->nd == 1 &&
        in->d[0].kind == AMDI_O_VGPR && in->d[0].n == 1 && (in->ty[0] == 'i' || in->ty[0] == 'f')) {
        bool plain = true;
        for (unsigned i = 0; i < in->ns && i < 3; i++)
            if ((in->ty[i + 1] != 'i' && in->ty[i + 1] != 'f') || (in->s[i].mod & (AMDI_M_NEG | AMDI_M_ABS | AMDI_M_HI)) ||
                in->s[i].kind == AMDI_O_AGPR)
                plain = false;
        if (plain) in->flags |= AMDI_F_PLAIN;
    }
    /* an op with an operand or control this decoder does not take keeps
     * its name (for the message) but is no instruction it knows */
    return r || c.bad || len > avail ? -1 : 0;
}
