/* The AMD ISA executor's matrix cores (mock_amd_isa.h): one operation of
 * the whole wave, gathering A, B and C from every lane's registers,
 * computing each element of D with drivers/mock/mock_mma.h's model (exact
 * products summed into C in k order, one f32 fma per step) and scattering
 * D back. Layouts (lane l, 16-bit values two to a register, low half
 * first):
 *   gfx11 WMMA 16x16x16, wave32 (RDNA3 ISA guide, "Wave Matrix Multiply
 *   Accumulate"): A register v of lane l holds A[l % 16][2v], [2v + 1];
 *   B register v holds B[2v][l % 16], B[2v + 1][l % 16] (lanes 16-31 hold
 *   the same as lanes 0-15; the executor reads lanes 0-15); C/D register v
 *   holds element (2v + l / 16, l % 16). Wave64 (A and B as in wave32, in
 *   lanes 0-15, the rest copies): C/D register v holds element
 *   (4v + l / 16, l % 16), four rows per register, as AMD's matrix
 *   instruction calculator gives the gfx11 wave64 form.
 *   gfx9 MFMA 16x16x16 (CDNA2/3 ISA guides, "Matrix Fused Multiply Add",
 *   one block): A register j/2 of lane l holds A[l % 16][4 (l / 16) + j],
 *   B B[4 (l / 16) + j][l % 16]; C/D register j holds element
 *   (4 (l / 16) + j, l % 16).
 *   gfx9 MFMA 32x32x8: A[l % 32][4 (l / 32) + j], B[4 (l / 32) + j][l % 32];
 *   C/D register j holds element (8 (j / 4) + 4 (l / 32) + j % 4, l % 32).
 * C may be an inline constant (every element that value); on gfx90a and
 * gfx940 C and D may be AGPRs (acc_cd) and A and B too (the mock keeps the
 * AGPRs as their own file, which gives the same results as gfx90a's and
 * gfx940's unified file split at ACCUM_OFFSET for a kernel that stays in
 * its registers). The MFMA dependency rules (the s_nop counts between an
 * MFMA and a reader of its result) are the compiler's to keep; the mock
 * writes D at once, which is what correctly scheduled code sees.
 *
 * Refused (an illegal-instruction exception naming the instruction): EXEC
 * not all of the wave's lanes (the guides give WMMA's results only for a
 * full EXEC; the mock refuses MFMA likewise rather than guess), the
 * broadcast controls cbsz/abid/blgp, and WMMA's op_sel/neg/clamp
 * modifiers. */
#include "drivers/mock/mock_amd_isa.h"

#include "compiler/ir_float.h"
#include "drivers/mock/mock_mma.h"

#include <string.h>

static void refuse(mai_wave *w, const amdi_inst *in, const char *what)
{
    char text[200];
    mai_describe(w, in, text, sizeof text);
    mai_illegal(w, "%s: %s", text, what);
}

/* register k of an operand in lane l (a constant: its value in every register) */
static uint32_t reg(const mai_wave *w, const amdi_opnd *o, unsigned k, unsigned l)
{
    if (o->kind == AMDI_O_CONST) return (uint32_t)o->imm;
    return (o->kind == AMDI_O_AGPR ? w->a : w->v)[(size_t)(o->reg + k) * 64 + l];
}
static float half_of(const mai_wave *w, const amdi_opnd *o, unsigned k, unsigned l, unsigned h, bool bf16)
{
    uint16_t x = (uint16_t)(reg(w, o, k, l) >> (16 * h));
    return bf16 ? ir_bf16_to_f32(x) : ir_f16_to_f32(x);
}
static float f32_of(const mai_wave *w, const amdi_opnd *o, unsigned k, unsigned l)
{
    uint32_t u = reg(w, o, k, l);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

bool mai_mma(mai_wave *w, const amdi_inst *in)
{
    const mai_dispatch *d = w->g->d;
    amdi_op op = (amdi_op)in->op;
    if (mai_exec(w) != w->mask) {
        refuse(w, in, "a matrix multiply-accumulate with EXEC not all of the wave's lanes (the ISA guides define its "
                      "results only for a full EXEC)");
        return false;
    }
    bool wmma = op == AMDI_V_WMMA_F32_16X16X16_F16 || op == AMDI_V_WMMA_F32_16X16X16_BF16;
    bool bf16 = op == AMDI_V_WMMA_F32_16X16X16_BF16 || op == AMDI_V_MFMA_F32_16X16X16BF16_1K ||
                op == AMDI_V_MFMA_F32_16X16X16_BF16;
    bool big = op == AMDI_V_MFMA_F32_32X32X8F16 || op == AMDI_V_MFMA_F32_32X32X8_F16;
    if (wmma) {
        bool mods = in->op_sel || in->neg_hi || in->clamp || (in->op_sel_hi & 7) != 7;
        for (unsigned i = 0; i < 3; i++) mods |= (in->s[i].mod & AMDI_M_NEG) != 0;
        if (mods) {
            refuse(w, in, "WMMA with op_sel, neg or clamp modifiers is not implemented by the mock");
            return false;
        }
    } else if (in->cbsz || in->abid || in->blgp) {
        refuse(w, in, "MFMA with cbsz/abid/blgp broadcast controls is not implemented by the mock");
        return false;
    }
    const amdi_opnd *A = &in->s[0], *B = &in->s[1], *C = &in->s[2], *D = &in->d[0];
    if (D->kind != AMDI_O_VGPR && D->kind != AMDI_O_AGPR) {
        refuse(w, in, "a matrix result that is not a register range");
        return false;
    }
    /* a range running past the last register (a crafted encoding: LLVM prints v[250:265] but no compiler makes
     * it) would read another file */
    const amdi_opnd *ops[4] = {A, B, C, D};
    for (unsigned i = 0; i < 4; i++)
        if (ops[i]->kind != AMDI_O_CONST && ops[i]->reg + ops[i]->n > 256) {
            refuse(w, in, "a register range past the 256th register");
            return false;
        }
    /* M x K times K x N: 16x16x16, or 32x8 times 8x32 */
    unsigned M = big ? 32 : 16, N = M, K = big ? 8 : 16;
    float a[32][16], b[16][32], c[32][32], r[32][32];
    if (wmma) {
        for (unsigned l = 0; l < 16; l++)
            for (unsigned k = 0; k < 16; k++) {
                a[l][k] = half_of(w, A, k / 2, l, k & 1, bf16);
                b[k][l] = half_of(w, B, k / 2, l, k & 1, bf16);
            }
        unsigned rows = d->wave / 16; /* rows per C/D register: 2 (wave32) or 4 (wave64) */
        for (unsigned l = 0; l < d->wave; l++)
            for (unsigned v = 0; v < 16 / rows; v++) c[rows * v + l / 16][l % 16] = f32_of(w, C, v, l);
    } else {
        for (unsigned l = 0; l < 64; l++) {
            unsigned row = l % M, q = l / M;
            for (unsigned j = 0; j < 4; j++) {
                a[row][4 * q + j] = half_of(w, A, j / 2, l, j & 1, bf16);
                b[4 * q + j][row] = half_of(w, B, j / 2, l, j & 1, bf16);
            }
            for (unsigned j = 0; j < (big ? 16u : 4u); j++) {
                unsigned m = big ? 8 * (j / 4) + 4 * q + j % 4 : 4 * q + j;
                c[m][row] = f32_of(w, C, j, l);
            }
        }
    }
    for (unsigned m = 0; m < M; m++)
        for (unsigned n = 0; n < N; n++) r[m][n] = mock_mma_dot(a[m], 1, &b[0][n], 32, K, c[m][n]);
    uint32_t *out = (D->kind == AMDI_O_AGPR ? w->a : w->v) + (size_t)D->reg * 64;
    for (unsigned l = 0; l < d->wave; l++) {
        unsigned rows = d->wave / 16, nreg = wmma ? 16 / rows : big ? 16 : 4;
        for (unsigned j = 0; j < nreg; j++) {
            float x = wmma ? r[rows * j + l / 16][l % 16]
                           : big ? r[8 * (j / 4) + 4 * (l / M) + j % 4][l % M] : r[4 * (l / M) + j][l % M];
            uint32_t u;
            if (x != x) u = 0x7fc00000u; /* a NaN result: the default quiet NaN */
            else memcpy(&u, &x, 4);
            out[(size_t)j * 64 + l] = u;
        }
    }
    return true;
}
