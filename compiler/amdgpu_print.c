/* AMDGPU instructions as text, in llvm-objdump's syntax (llvm-project
 * llvm/lib/Target/AMDGPU/MCTargetDesc/AMDGPUInstPrinter.cpp is the syntax's
 * definition): the decoder's test compares this text with llvm-objdump's,
 * and the mock's messages name instructions with it. */
#include "compiler/amdgpu_isa.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct sb {
    char *p;
    size_t n, len;
} sb;

static void put(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb *b, const char *fmt, ...)
{
    if (b->len >= b->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->len, b->n - b->len, fmt, ap);
    va_end(ap);
    if (k > 0) b->len += (size_t)k;
    if (b->len >= b->n) b->len = b->n - 1;
}

static bool in_table(const uint16_t *tab, unsigned n, amdi_op op)
{
    for (unsigned i = 0; i < n; i++)
        if (tab[i] == op) return true;
    return false;
}

/* ops of a VOP1/2/C form that have no VOP3 form, and the reverse, print
 * without _e32/_e64 */
static bool bare(const amdi_target *t, amdi_op op)
{
    if (op == AMDI_V_PK_FMAC_F16 || op == AMDI_V_DOT2C_F32_F16) return t->fam == AMDI_GFX11;
    switch (op) {
    case AMDI_V_READFIRSTLANE_B32: case AMDI_V_SWAP_B32: case AMDI_V_NOP: case AMDI_V_FMAMK_F32:
    case AMDI_V_FMAAK_F32: case AMDI_V_MADMK_F32: case AMDI_V_MADAK_F32: case AMDI_V_PERMLANE64_B32: return true;
    default: return false;
    }
}

static bool has_short(const amdi_target *t, amdi_op op)
{
    const amdi_tables *tb = amdi_tables_of(t);
    return in_table(tb->vop1, tb->nvop1, op) || in_table(tb->vop2, tb->nvop2, op) || in_table(tb->vopc, tb->nvopc, op);
}

void amdi_mnemonic(const amdi_target *t, const amdi_inst *in, char *buf, size_t size)
{
    sb b = {buf, size, 0};
    buf[0] = 0;
    const char *n = amdi_op_name(t->fam, (amdi_op)in->op);
    if (!*n) {
        put(&b, "<unknown>");
        return;
    }
    if (in->op == AMDI_B_INV && t->fam == AMDI_GFX9 && !t->gfx940) n = "buffer_invl2"; /* (gfx90a's name) */
    switch (in->enc) {
    case AMDI_E_FLAT: put(&b, "flat_%s", n); return;
    case AMDI_E_GLOBAL: put(&b, "global_%s", n); return;
    case AMDI_E_SCRATCH: put(&b, "scratch_%s", n); return;
    case AMDI_E_VOPD: put(&b, "v_dual_%s", n + 2); return;
    case AMDI_E_VOP1: case AMDI_E_VOP2: case AMDI_E_VOPC:
        put(&b, "%s", n);
        if (in->flags & AMDI_F_SDWA) put(&b, "_sdwa");
        else if (in->flags & (AMDI_F_DPP | AMDI_F_DPP8)) put(&b, "_dpp");
        else if (!bare(t, (amdi_op)in->op)) put(&b, "_e32");
        return;
    case AMDI_E_VOP3:
        put(&b, "%s", n);
        if ((in->flags & AMDI_F_E64) && has_short(t, (amdi_op)in->op) && !bare(t, (amdi_op)in->op)) put(&b, "_e64");
        if (in->flags & (AMDI_F_DPP | AMDI_F_DPP8)) put(&b, "_dpp");
        return;
    default: put(&b, "%s", n); return;
    }
}

static const char *const fconst[] = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"};

static void sreg(sb *b, const amdi_target *t, unsigned r, unsigned n)
{
    if (r == AMDI_SREG_VCC && n == 2) { put(b, "vcc"); return; }
    if (r == AMDI_SREG_EXEC && n == 2) { put(b, "exec"); return; }
    if (r == AMDI_SREG_VCC) { put(b, "vcc_lo"); return; }
    if (r == AMDI_SREG_VCC + 1) { put(b, "vcc_hi"); return; }
    if (r == AMDI_SREG_EXEC) { put(b, "exec_lo"); return; }
    if (r == AMDI_SREG_EXEC + 1) { put(b, "exec_hi"); return; }
    if (r == AMDI_SREG_M0) { put(b, "m0"); return; }
    if (t->fam == AMDI_GFX9 && r == 102 && n == 2) { put(b, "flat_scratch"); return; }
    if (t->fam == AMDI_GFX9 && (r == 102 || r == 103) && n == 1) { put(b, r == 102 ? "flat_scratch_lo" : "flat_scratch_hi"); return; }
    if (t->fam == AMDI_GFX9 && r == 104 && n == 2) { put(b, "xnack_mask"); return; }
    if (r >= 108 && r <= 123) {
        if (n == 1) put(b, "ttmp%u", r - 108);
        else put(b, "ttmp[%u:%u]", r - 108, r - 108 + n - 1);
        return;
    }
    if (n == 1) put(b, "s%u", r);
    else put(b, "s[%u:%u]", r, r + n - 1);
}

static void opnd(sb *b, const amdi_target *t, const amdi_inst *in, const amdi_opnd *o, bool t16)
{
    bool neg = (o->mod & AMDI_M_NEG) && in->enc != AMDI_E_VOP3P, abs = o->mod & AMDI_M_ABS, sx = o->mod & AMDI_M_SEXT;
    if (neg) put(b, "-");
    if (abs) put(b, "|");
    if (sx) put(b, "sext(");
    switch (o->kind) {
    case AMDI_O_SGPR: sreg(b, t, o->reg, o->n); break;
    case AMDI_O_VGPR:
    case AMDI_O_AGPR: {
        char c = o->kind == AMDI_O_VGPR ? 'v' : 'a';
        if (o->n <= 1) put(b, "%c%u", c, o->reg);
        else put(b, "%c[%u:%u]", c, o->reg, o->reg + o->n - 1);
        if (t16) put(b, o->mod & AMDI_M_HI ? ".h" : ".l");
        break;
    }
    case AMDI_O_CONST:
        if (o->mod & AMDI_M_LIT) {
            uint32_t lit = (o->imm >> 32) && !(o->imm & 0xffffffffu) ? (uint32_t)(o->imm >> 32) : (uint32_t)o->imm;
            /* a literal an inline constant could have said is marked */
            bool inl = (int32_t)lit >= -16 && (int32_t)lit <= 64;
            put(b, inl ? "lit(0x%x)" : "0x%x", lit);
        } else if (o->code >= 240 && o->code <= 248) {
            put(b, "%s", fconst[o->code - 240]);
        } else {
            put(b, "%d", o->code <= 192 ? (int)o->code - 128 : 192 - (int)o->code);
        }
        break;
    case AMDI_O_NULL: put(b, in->enc == AMDI_E_FLAT || in->enc == AMDI_E_GLOBAL || in->enc == AMDI_E_SCRATCH ||
                                    in->enc == AMDI_E_MUBUF ? "off" : "null"); break;
    case AMDI_O_SCC: put(b, "src_scc"); break;
    case AMDI_O_VCCZ: put(b, "src_vccz"); break;
    case AMDI_O_EXECZ: put(b, "src_execz"); break;
    case AMDI_O_APERTURE: {
        static const char *const ap[] = {"src_shared_base", "src_shared_limit", "src_private_base",
                                         "src_private_limit"};
        put(b, "%s", ap[o->reg - 235]);
        break;
    }
    default: put(b, "?"); break;
    }
    if (sx) put(b, ")");
    if (abs) put(b, "|");
}

static bool t16_opnd(const amdi_inst *in, const amdi_opnd *o, char ty)
{
    return (in->flags & AMDI_F_T16) && o->kind == AMDI_O_VGPR && ty == 'h';
}

static char sig_at(amdi_op op, int i) /* -1: dst */
{
    const char *s = amdi_op_sig(op);
    if (!s[0] || s[1] != ':') return 'i';
    if (i < 0) return s[0];
    s += 2;
    for (int k = 0; k < i && *s; k++) s++;
    return *s ? *s : 'i';
}

static void dpp_ctrl(sb *b, const amdi_inst *in)
{
    unsigned c = in->dpp_ctrl;
    if (c <= 0xff) put(b, " quad_perm:[%u,%u,%u,%u]", c & 3, c >> 2 & 3, c >> 4 & 3, c >> 6 & 3);
    else if (c >= 0x101 && c <= 0x10f) put(b, " row_shl:%u", c & 0xf);
    else if (c >= 0x111 && c <= 0x11f) put(b, " row_shr:%u", c & 0xf);
    else if (c >= 0x121 && c <= 0x12f) put(b, " row_ror:%u", c & 0xf);
    else if (c == 0x130) put(b, " wave_shl:1");
    else if (c == 0x134) put(b, " wave_rol:1");
    else if (c == 0x138) put(b, " wave_shr:1");
    else if (c == 0x13c) put(b, " wave_ror:1");
    else if (c == 0x140) put(b, " row_mirror");
    else if (c == 0x141) put(b, " row_half_mirror");
    else if (c == 0x142) put(b, " row_bcast:15");
    else if (c == 0x143) put(b, " row_bcast:31");
    else if (c >= 0x150 && c <= 0x15f) put(b, " row_share:%u", c & 0xf);
    else if (c >= 0x160 && c <= 0x16f) put(b, " row_xmask:%u", c & 0xf);
    else put(b, " dpp_ctrl:0x%x", c);
    put(b, " row_mask:0x%x bank_mask:0x%x", in->row_mask, in->bank_mask);
    if (in->bound_ctrl) put(b, " bound_ctrl:1");
    if (in->fi) put(b, " fi:1");
}

static const char *const sdwa_sel[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "?"};
static const char *const sdwa_unused[] = {"UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "?"};

static void cpol(sb *b, const amdi_inst *in)
{
    if (in->cpol & AMDI_C_GLC) put(b, " glc");
    if (in->cpol & AMDI_C_SLC) put(b, " slc");
    if (in->cpol & AMDI_C_DLC) put(b, " dlc");
    if (in->cpol & AMDI_C_SC0) put(b, " sc0");
    if (in->cpol & AMDI_C_SC1) put(b, " sc1");
    if (in->cpol & AMDI_C_NT) put(b, " nt");
}

static void vop_operands(sb *b, const amdi_target *t, const amdi_inst *in)
{
    amdi_op op = (amdi_op)in->op;
    bool first = true;
    bool cmpx11 = t->fam == AMDI_GFX11 && in->nd == 1 && in->d[0].kind == AMDI_O_SGPR &&
                  in->d[0].reg == AMDI_SREG_EXEC && op >= AMDI_V_CMP_F_F16 && op <= AMDI_V_CMPX_CLASS_F64;
    for (unsigned i = 0; i < in->nd && i < 2; i++) {
        if (cmpx11) break;
        if (t->fam == AMDI_GFX9 && i == 1 && in->d[1].kind == AMDI_O_SGPR && in->d[1].reg == AMDI_SREG_EXEC) break;
        put(b, first ? " " : ", ");
        first = false;
        opnd(b, t, in, &in->d[i], i == 0 && t16_opnd(in, &in->d[0], sig_at(op, -1)));
    }
    for (unsigned i = 0; i < in->ns && i < 3; i++) {
        /* VOPD's cndmask and the e32 cndmask print VCC; VOPD's does not */
        if (in->enc == AMDI_E_VOPD && op == AMDI_V_CNDMASK_B32 && i == 2) break;
        put(b, first ? " " : ", ");
        first = false;
        opnd(b, t, in, &in->s[i], t16_opnd(in, &in->s[i], sig_at(op, i)));
    }
}

static void print_one(sb *b, const amdi_target *t, const amdi_inst *in)
{
    char mn[96];
    amdi_mnemonic(t, in, mn, sizeof mn);
    put(b, "%s", mn);
    amdi_op op = (amdi_op)in->op;
    switch (in->enc) {
    case AMDI_E_SOP1: case AMDI_E_SOP2: case AMDI_E_SOPC:
        vop_operands(b, t, in);
        return;
    case AMDI_E_SOPK:
        if (in->nd) { put(b, " "); opnd(b, t, in, &in->d[0], false); }
        else if (in->ns) { put(b, " "); opnd(b, t, in, &in->s[0], false); }
        put(b, "%s0x%x", in->nd || in->ns ? ", " : " ", (unsigned)in->simm & 0xffff);
        return;
    case AMDI_E_SOPP:
        if (in->flags & AMDI_F_BRANCH) put(b, " %u", (unsigned)in->simm & 0xffff);
        else if (op == AMDI_S_NOP || op == AMDI_S_SETPRIO || op == AMDI_S_SLEEP || op == AMDI_S_TRAP ||
                 op == AMDI_S_INST_PREFETCH)
            put(b, " %d", in->simm);
        else if (op == AMDI_S_CLAUSE) put(b, " 0x%x", in->simm);
        else if (op != AMDI_S_ENDPGM && op != AMDI_S_BARRIER && op != AMDI_S_CODE_END && op != AMDI_S_ICACHE_INV &&
                 op != AMDI_S_SET_GPR_IDX_OFF)
            put(b, " 0x%x", in->simm);
        return;
    case AMDI_E_SMEM:
        if (in->nd) { put(b, " "); opnd(b, t, in, &in->d[0], false); }
        if (in->ns) {
            put(b, ", ");
            opnd(b, t, in, &in->s[0], false);
            put(b, ", ");
            if (in->s[1].kind == AMDI_O_NULL) {
                if (t->fam == AMDI_GFX11 && !in->offset) put(b, "null");
                else put(b, "0x%x", (unsigned)in->offset & 0x1fffff);
            } else {
                opnd(b, t, in, &in->s[1], false);
                if (in->offset || in->offen /* gfx9 soe with imm */) put(b, " offset:0x%x", (unsigned)in->offset & 0x1fffff);
            }
        }
        cpol(b, in);
        return;
    case AMDI_E_DS: {
        bool first = true;
        if (in->nd) { put(b, " "); opnd(b, t, in, &in->d[0], false); first = false; }
        for (unsigned i = 0; i < in->ns; i++) {
            put(b, first ? " " : ", ");
            first = false;
            opnd(b, t, in, &in->s[i], false);
        }
        const char *n9 = amdi_op_name(AMDI_GFX9, op);
        if (strstr(n9, "2_") || strstr(n9, "2st64")) {
            if (in->offset) put(b, " offset0:%d", in->offset);
            if (in->offset1) put(b, " offset1:%u", in->offset1);
        } else {
            unsigned off = (unsigned)in->offset | (unsigned)in->offset1 << 8;
            if (off) put(b, " offset:%u", off);
        }
        if (in->gds) put(b, " gds");
        return;
    }
    case AMDI_E_FLAT: case AMDI_E_GLOBAL: case AMDI_E_SCRATCH: {
        bool first = true;
        if (in->nd) { put(b, " "); opnd(b, t, in, &in->d[0], false); first = false; }
        put(b, first ? " " : ", ");
        opnd(b, t, in, &in->s[0], false);
        if (in->s[1].kind) { put(b, ", "); opnd(b, t, in, &in->s[1], false); }
        if (in->enc != AMDI_E_FLAT) { put(b, ", "); opnd(b, t, in, &in->s[2], false); }
        if (in->offset) put(b, " offset:%d", in->offset);
        cpol(b, in);
        return;
    }
    case AMDI_E_MUBUF:
        if (op == AMDI_B_GL0_INV || op == AMDI_B_GL1_INV || op == AMDI_B_WBL2 || op == AMDI_B_INV || op == AMDI_B_WBINVL1 ||
            op == AMDI_B_WBINVL1_VOL) {
            cpol(b, in);
            return;
        }
        put(b, " ");
        opnd(b, t, in, in->nd ? &in->d[0] : &in->s[1], false);
        put(b, ", ");
        opnd(b, t, in, &in->s[0], false);
        put(b, ", ");
        opnd(b, t, in, &in->s[2], false);
        put(b, ", ");
        opnd(b, t, in, &in->s[3], false);
        if (in->offen) put(b, " offen");
        if (in->idxen) put(b, " idxen");
        if (in->offset) put(b, " offset:%d", in->offset);
        cpol(b, in);
        return;
    default: break;
    }
    /* VALU */
    vop_operands(b, t, in);
    if (in->flags & AMDI_F_SDWA) {
        if (in->enc != AMDI_E_VOPC) {
            if (in->clamp) put(b, " clamp");
            put(b, " dst_sel:%s dst_unused:%s", sdwa_sel[in->sdwa_dst_sel & 7], sdwa_unused[in->sdwa_dst_unused & 3]);
        }
        put(b, " src0_sel:%s", sdwa_sel[in->sdwa_sel[0] & 7]);
        if (in->enc != AMDI_E_VOP1) put(b, " src1_sel:%s", sdwa_sel[in->sdwa_sel[1] & 7]);
        return;
    }
    if (in->clamp && in->enc != AMDI_E_VOP3P) put(b, " clamp"); /* VOP3P's follows its op_sel and neg */
    if (in->omod) put(b, " %s", in->omod == 1 ? "mul:2" : in->omod == 2 ? "mul:4" : "div:2");
    /* true16 operands show their halves as .l/.h; op_sel prints too, but
     * for v_cndmask_b16 only where the destination is high */
    bool show_sel = op == AMDI_V_CNDMASK_B16 ? (in->op_sel & 8) != 0 : in->op_sel != 0;
    if (in->enc == AMDI_E_VOP3 && show_sel) {
        unsigned ns = in->ns > 3 ? 3 : in->ns;
        put(b, " op_sel:[");
        for (unsigned i = 0; i < ns; i++) put(b, "%s%u", i ? "," : "", in->op_sel >> i & 1);
        put(b, ",%u]", in->op_sel >> 3 & 1);
    }
    if (in->enc == AMDI_E_VOP3P && t->fam == AMDI_GFX9 && amdi_is_mma(op)) {
        if (in->cbsz) put(b, " cbsz:%u", in->cbsz);
        if (in->abid) put(b, " abid:%u", in->abid);
        if (in->blgp) put(b, " blgp:%u", in->blgp);
    } else if (in->enc == AMDI_E_VOP3P) {
        unsigned ns = in->ns, all = (1u << ns) - 1;
        unsigned neg_lo = 0;
        for (unsigned i = 0; i < ns; i++) neg_lo |= (in->s[i].mod & AMDI_M_NEG ? 1u : 0u) << i;
        if (in->op_sel & all) {
            put(b, " op_sel:[");
            for (unsigned i = 0; i < ns; i++) put(b, "%s%u", i ? "," : "", in->op_sel >> i & 1);
            put(b, "]");
        }
        if ((in->op_sel_hi & all) != all) {
            put(b, " op_sel_hi:[");
            for (unsigned i = 0; i < ns; i++) put(b, "%s%u", i ? "," : "", in->op_sel_hi >> i & 1);
            put(b, "]");
        }
        if (neg_lo) {
            put(b, " neg_lo:[");
            for (unsigned i = 0; i < ns; i++) put(b, "%s%u", i ? "," : "", neg_lo >> i & 1);
            put(b, "]");
        }
        if (in->neg_hi & all) {
            put(b, " neg_hi:[");
            for (unsigned i = 0; i < ns; i++) put(b, "%s%u", i ? "," : "", in->neg_hi >> i & 1);
            put(b, "]");
        }
        if (in->clamp) put(b, " clamp");
    }
    if (in->flags & AMDI_F_DPP) dpp_ctrl(b, in);
    if (in->flags & AMDI_F_DPP8) {
        put(b, " dpp8:[");
        for (unsigned i = 0; i < 8; i++) put(b, "%s%u", i ? "," : "", in->dpp8 >> (3 * i) & 7);
        put(b, "]");
        if (in->fi) put(b, " fi:1");
    }
}

void amdi_print(const amdi_target *t, const amdi_inst *in, const amdi_inst *y, char *buf, size_t size)
{
    sb b = {buf, size, 0};
    buf[0] = 0;
    if (in->op == AMDI_OP_NONE) {
        put(&b, "<unknown 0x%08x 0x%08x>", in->raw[0], in->raw[1]);
        return;
    }
    print_one(&b, t, in);
    if (y && in->enc == AMDI_E_VOPD) {
        put(&b, " :: ");
        print_one(&b, t, y);
    }
}
