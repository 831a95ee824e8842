/* The SASS executor's tensor cores (mock_sass.h): HMMA.16816, what ptxas
 * makes of PTX's mma.sync.aligned.m16n8k16.row.col with f16 or bf16
 * inputs (sm_80 and later):
 *   HMMA.16816.F32       Rd, Ra, Rb, Rc   f16 inputs, f32 accumulator
 *   HMMA.16816.F32.BF16  Rd, Ra, Rb, Rc   bf16 inputs, f32 accumulator
 *   HMMA.16816.F16       Rd, Ra, Rb, Rc   f16 inputs, f16x2 accumulator
 * One instruction for the whole warp: each lane holds a fragment of A
 * (4 registers of two 16-bit values), B (2) and C/D (4 f32, or 2 f16x2),
 * in the layouts of the PTX ISA's "Matrix Fragments for mma.m16n8k16
 * with floating point type" (lane = 4 * group + t):
 *   A (16x16, row-major): register j, half h holds
 *       A[group + 8 * (j & 1)][2 * t + h + 8 * (j >> 1)]
 *   B (16x8, column-major): register j, half h holds B[2 * t + h + 8 * j][group]
 *   C, D f32 (16x8): register j holds C[group + 8 * (j >> 1)][2 * t + (j & 1)]
 *   C, D f16x2: register j, half h holds C[group + 8 * j][2 * t + h]
 * The operation reads every lane's registers, so every lane must take
 * part: the PTX ISA makes mma.sync with a lane missing (diverged, or
 * predicated off in some lanes) undefined, and the executor refuses it
 * with an illegal-instruction error naming the lanes. The arithmetic is
 * drivers/mock/mock_mma.h's model. Other HMMA shapes (1688, tf32, the
 * integer IMMA, sm_90's warpgroup HGMMA) stay illegal instructions. */
#include "drivers/mock/mock_sass.h"

#include "compiler/ir_float.h"
#include "drivers/mock/mock_mma.h"

#include <string.h>

/* the first register of an operand, or 255 for RZ; false if not a register */
static bool reg_of(const sass_opnd *x, uint32_t *reg)
{
    if (x->kind != SASS_K_R || x->sel != SASS_SEL_NONE || (x->flags & (SASS_F_NEG | SASS_F_ABS | SASS_F_NOT)))
        return false;
    *reg = x->reg;
    return true;
}

int msass_mma(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->op != SASS_OP_HMMA) return -1;
    /* the forms implemented; anything else (another shape or type) is an illegal instruction naming it */
    bool f16acc = in->ntypes == 1 && in->types[0] == SASS_M_F16;
    bool bf16 = in->ntypes == 2 && in->types[0] == SASS_M_F32 && in->types[1] == SASS_M_BF16;
    bool f32 = in->ntypes == 1 && in->types[0] == SASS_M_F32;
    uint32_t rd, ra, rb, rc;
    if (!sass_has(in, SASS_M_16816) || !(f16acc || bf16 || f32) || in->nops != 4 || !reg_of(&in->o[0], &rd) ||
        !reg_of(&in->o[1], &ra) || !reg_of(&in->o[2], &rb) || !reg_of(&in->o[3], &rc))
        return -1;
    for (int m = 0; m < SASS_MOD_COUNT; m++)
        if (sass_has(in, (sass_mod)m) && m != SASS_M_16816 && m != SASS_M_F32 && m != SASS_M_F16 && m != SASS_M_BF16)
            return -1;
    if (o->exec != 0xffffffffu)
        return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: HMMA is one operation of the whole warp "
                          "(PTX mma.sync.aligned), but only lanes 0x%08x of it execute it (the warp is diverged, "
                          "predicated off in part, or has fewer than 32 threads): the PTX ISA leaves that undefined",
                          o->exec);
    const uint32_t *r = o->w->r;
    uint32_t cregs = f16acc ? 2 : 4;
    /* the whole matrices first: D may overlap A, B or C (ptxas does that: `HMMA.16816.F16 R10, R8, R12, R14`) */
    float A[16][16], B[16][8], C[16][8];
    for (uint32_t lane = 0; lane < 32; lane++) {
        uint32_t g = lane >> 2, t = lane & 3;
        for (uint32_t j = 0; j < 4; j++) {
            uint32_t v = ra == 255 ? 0 : r[(size_t)(ra + j) * 32 + lane];
            for (uint32_t h = 0; h < 2; h++) {
                uint16_t x = (uint16_t)(v >> (16 * h));
                A[g + 8 * (j & 1)][2 * t + h + 8 * (j >> 1)] = bf16 ? ir_bf16_to_f32(x) : ir_f16_to_f32(x);
            }
        }
        for (uint32_t j = 0; j < 2; j++) {
            uint32_t v = rb == 255 ? 0 : r[(size_t)(rb + j) * 32 + lane];
            for (uint32_t h = 0; h < 2; h++) {
                uint16_t x = (uint16_t)(v >> (16 * h));
                B[2 * t + h + 8 * j][g] = bf16 ? ir_bf16_to_f32(x) : ir_f16_to_f32(x);
            }
        }
        for (uint32_t j = 0; j < cregs; j++) {
            uint32_t v = rc == 255 ? 0 : r[(size_t)(rc + j) * 32 + lane];
            if (f16acc) {
                C[g + 8 * j][2 * t] = ir_f16_to_f32((uint16_t)v);
                C[g + 8 * j][2 * t + 1] = ir_f16_to_f32((uint16_t)(v >> 16));
            } else {
                memcpy(&C[g + 8 * (j >> 1)][2 * t + (j & 1)], &v, 4);
            }
        }
    }
    float D[16][8];
    for (uint32_t m = 0; m < 16; m++)
        for (uint32_t n = 0; n < 8; n++) D[m][n] = mock_mma_dot(A[m], 1, &B[0][n], 8, 16, C[m][n]);
    if (rd == 255) return 0;
    uint32_t *w = o->w->r;
    for (uint32_t lane = 0; lane < 32; lane++) {
        uint32_t g = lane >> 2, t = lane & 3;
        for (uint32_t j = 0; j < cregs; j++) {
            uint32_t v;
            if (f16acc) {
                float lo = D[g + 8 * j][2 * t], hi = D[g + 8 * j][2 * t + 1];
                /* arithmetic NaNs are canonical, as the f16 ALU ops' (0x7fff) */
                uint32_t l = lo != lo ? 0x7fffu : ir_f32_to_f16(lo), h = hi != hi ? 0x7fffu : ir_f32_to_f16(hi);
                v = l | h << 16;
            } else {
                float x = D[g + 8 * (j >> 1)][2 * t + (j & 1)];
                if (x != x) v = 0x7fffffffu; /* the canonical NaN of the f32 ALU ops */
                else memcpy(&v, &x, 4);
            }
            w[(size_t)(rd + j) * 32 + lane] = v;
        }
    }
    return 0;
}
