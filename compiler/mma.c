/* The matrix multiply-accumulate kinds (compiler.h "Matrix multiply-
 * accumulate"): one row per kind with its shape, dtypes, warp and the
 * fragment layouts as the vendors document them, and the public calls that
 * read the table. tests/unit/test_ir_mma.c states every layout again,
 * independently, and tests/mock/test_api_mma.c runs each kind as machine
 * code on the mock's executors (which implement the same documents) with
 * the fragments placed by this table. */
#include "compiler/mma.h"

#include "compiler/ir.h"

#include <string.h>

#define L(shift, width, scale) {CC_MMA_LANE, shift, width, scale}
#define E(shift, width, scale) {CC_MMA_ELEM, shift, width, scale}

/* NVIDIA mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
 * floating point type"; the lane is 4 g + t): A 16x16 row-major fragment
 * a0..a7: rows g (a0, a1, a4, a5) and g + 8 (a2, a3, a6, a7), columns
 * 2t + (i & 1) + 8 (i >= 4); B 16x8: b0..b3 at rows 2t + (i & 1) + 8 (i >= 2),
 * column g; C/D 16x8: c0..c3 at row g + 8 (i >= 2), column 2t + (i & 1). */
#define NV_SOURCE "NVIDIA PTX ISA, 'Matrix Fragments for mma.m16n8k16 with floating point type'"
#define NV_FRAGS                                                                                          \
    {                                                                                                     \
        {.row = {L(2, 3, 1), E(1, 1, 8)}, .col = {L(0, 2, 2), E(0, 1, 1), E(2, 1, 8)}},                   \
        {.row = {L(0, 2, 2), E(0, 1, 1), E(1, 1, 8)}, .col = {L(2, 3, 1)}},                               \
        {.row = {L(2, 3, 1), E(1, 1, 8)}, .col = {L(0, 2, 2), E(0, 1, 1)}},                               \
    }
/* AMD gfx11 WMMA 16x16x16 (RDNA3 ISA guide, "Wave Matrix Multiply
 * Accumulate"; AMD's matrix instruction calculator for the wave64 form):
 * lane l holds row l % 16 of A and column l % 16 of B, element e at k = e
 * (lanes 16.. repeat lanes 0-15); C/D element e of lane l is row
 * 2e + l / 16 (wave32) or 4e + l / 16 (wave64), column l % 16. */
#define WMMA_SOURCE                                                                                       \
    "AMD RDNA3 ISA guide, 'Wave Matrix Multiply Accumulate' (WMMA); ROCm/amd_matrix_instruction_calculator " \
    "matrix_calculator.py (InstCalcGfx11: C/D element (i, j) in register i / (wave / 16), lane "             \
    "16 i % wave + j)"
#define WMMA_FRAGS(c_row)                                                                                 \
    {                                                                                                     \
        {.row = {L(0, 4, 1)}, .col = {E(0, 4, 1)}},                                                       \
        {.row = {E(0, 4, 1)}, .col = {L(0, 4, 1)}},                                                       \
        {.row = c_row, .col = {L(0, 4, 1)}},                                                              \
    }
#define WMMA_C_W32 {E(0, 3, 2), L(4, 1, 1)}
#define WMMA_C_W64 {E(0, 2, 4), L(4, 2, 1)}
/* AMD gfx9 MFMA (CDNA2 and CDNA3 ISA guides, "Matrix Fused Multiply Add";
 * AMD's matrix instruction calculator), one block: 16x16x16: lane l holds
 * A[l % 16][4 (l / 16) + e], B[4 (l / 16) + e][l % 16], C/D element
 * (4 (l / 16) + e, l % 16). 32x32x8: A[l % 32][4 (l / 32) + e],
 * B[4 (l / 32) + e][l % 32], C/D element (8 (e / 4) + 4 (l / 32) + e % 4,
 * l % 32). */
#define MFMA_SOURCE                                                                                       \
    "AMD CDNA2/CDNA3 ISA guides, 'Matrix Fused Multiply Add' (MFMA); ROCm/amd_matrix_instruction_calculator " \
    "matrix_calculator.py (InstCalcGfx9)"
#define MFMA16_FRAGS                                                                                      \
    {                                                                                                     \
        {.row = {L(0, 4, 1)}, .col = {L(4, 2, 4), E(0, 2, 1)}},                                           \
        {.row = {L(4, 2, 4), E(0, 2, 1)}, .col = {L(0, 4, 1)}},                                           \
        {.row = {L(4, 2, 4), E(0, 2, 1)}, .col = {L(0, 4, 1)}},                                           \
    }

static const cc_mma_kind kinds[HCQ_MMA_KINDS] = {
    [HCQ_MMA_NV_M16N8K16_F16] = {.info = {.name = "nv_m16n8k16_f16", .m = 16, .n = 8, .k = 16, .warp = 32,
                                          .ab = HCQ_F16, .acc = HCQ_F32, .a_lanes = 8, .b_lanes = 4, .c_lanes = 4},
                                 .frag = NV_FRAGS, .source = NV_SOURCE},
    [HCQ_MMA_NV_M16N8K16_BF16] = {.info = {.name = "nv_m16n8k16_bf16", .m = 16, .n = 8, .k = 16, .warp = 32,
                                           .ab = HCQ_BF16, .acc = HCQ_F32, .a_lanes = 8, .b_lanes = 4, .c_lanes = 4},
                                  .frag = NV_FRAGS, .source = NV_SOURCE},
    [HCQ_MMA_WMMA_F16_W32] = {.info = {.name = "wmma_f16_w32", .m = 16, .n = 16, .k = 16, .warp = 32,
                                       .ab = HCQ_F16, .acc = HCQ_F32, .a_lanes = 16, .b_lanes = 16, .c_lanes = 8},
                              .frag = WMMA_FRAGS(WMMA_C_W32), .source = WMMA_SOURCE},
    [HCQ_MMA_WMMA_BF16_W32] = {.info = {.name = "wmma_bf16_w32", .m = 16, .n = 16, .k = 16, .warp = 32,
                                        .ab = HCQ_BF16, .acc = HCQ_F32, .a_lanes = 16, .b_lanes = 16, .c_lanes = 8},
                               .frag = WMMA_FRAGS(WMMA_C_W32), .source = WMMA_SOURCE},
    [HCQ_MMA_WMMA_F16_W64] = {.info = {.name = "wmma_f16_w64", .m = 16, .n = 16, .k = 16, .warp = 64,
                                       .ab = HCQ_F16, .acc = HCQ_F32, .a_lanes = 16, .b_lanes = 16, .c_lanes = 4},
                              .frag = WMMA_FRAGS(WMMA_C_W64), .source = WMMA_SOURCE},
    [HCQ_MMA_WMMA_BF16_W64] = {.info = {.name = "wmma_bf16_w64", .m = 16, .n = 16, .k = 16, .warp = 64,
                                        .ab = HCQ_BF16, .acc = HCQ_F32, .a_lanes = 16, .b_lanes = 16, .c_lanes = 4},
                               .frag = WMMA_FRAGS(WMMA_C_W64), .source = WMMA_SOURCE},
    [HCQ_MMA_MFMA_16X16X16_F16] = {.info = {.name = "mfma_16x16x16_f16", .m = 16, .n = 16, .k = 16, .warp = 64,
                                            .ab = HCQ_F16, .acc = HCQ_F32, .a_lanes = 4, .b_lanes = 4, .c_lanes = 4},
                                   .frag = MFMA16_FRAGS, .source = MFMA_SOURCE},
    [HCQ_MMA_MFMA_32X32X8_F16] = {.info = {.name = "mfma_32x32x8_f16", .m = 32, .n = 32, .k = 8, .warp = 64,
                                           .ab = HCQ_F16, .acc = HCQ_F32, .a_lanes = 4, .b_lanes = 4, .c_lanes = 16},
                                  .frag = {{.row = {L(0, 5, 1)}, .col = {L(5, 1, 4), E(0, 2, 1)}},
                                           {.row = {L(5, 1, 4), E(0, 2, 1)}, .col = {L(0, 5, 1)}},
                                           {.row = {E(2, 2, 8), L(5, 1, 4), E(0, 2, 1)}, .col = {L(0, 5, 1)}}},
                                  .source = MFMA_SOURCE},
    [HCQ_MMA_MFMA_16X16X16_BF16] = {.info = {.name = "mfma_16x16x16_bf16", .m = 16, .n = 16, .k = 16, .warp = 64,
                                             .ab = HCQ_BF16, .acc = HCQ_F32, .a_lanes = 4, .b_lanes = 4, .c_lanes = 4},
                                    .frag = MFMA16_FRAGS, .source = MFMA_SOURCE},
};

const cc_mma_kind *cc_mma_kind_of(unsigned kind)
{
    return kind > HCQ_MMA_NONE && kind < HCQ_MMA_KINDS ? &kinds[kind] : NULL;
}

unsigned cc_mma_eval(const cc_mma_term *t, unsigned lane, unsigned e)
{
    unsigned v = 0;
    for (unsigned i = 0; i < CC_MMA_TERMS && t[i].src; i++) {
        unsigned x = t[i].src == CC_MMA_LANE ? lane : e;
        v += t[i].scale * ((x >> t[i].shift) & ((1u << t[i].width) - 1));
    }
    return v;
}

hcq_status hcq_mma_info_get(hcq_mma_kind kind, hcq_mma_info *out)
{
    const cc_mma_kind *m = cc_mma_kind_of(kind);
    if (!m) return base_err(HCQ_EINVAL, "hcq_mma_info_get: kind %d is not a matrix multiply-accumulate kind (1..%d)",
                            (int)kind, HCQ_MMA_KINDS - 1);
    if (!out) return base_err(HCQ_EINVAL, "hcq_mma_info_get: out is NULL");
    *out = m->info;
    return HCQ_OK;
}

static unsigned frag_lanes(const hcq_mma_info *i, unsigned operand)
{
    return operand == 0 ? i->a_lanes : operand == 1 ? i->b_lanes : i->c_lanes;
}

/* the shared argument checks; NULL with the reason in why */
static const cc_mma_kind *check_args(hcq_mma_kind kind, unsigned operand, unsigned e, char *why, size_t why_size)
{
    const cc_mma_kind *m = cc_mma_kind_of(kind);
    if (!m) snprintf(why, why_size, "kind %d is not a matrix multiply-accumulate kind (1..%d)", (int)kind, HCQ_MMA_KINDS - 1);
    else if (operand > 2) snprintf(why, why_size, "operand %u; give 0 (A), 1 (B) or 2 (C and D)", operand);
    else if (e >= frag_lanes(&m->info, operand))
        snprintf(why, why_size, "element %u of a %u-lane %s fragment of %s", e, frag_lanes(&m->info, operand),
                 operand == 2 ? "C/D" : operand ? "B" : "A", m->info.name);
    else return m;
    return NULL;
}

hcq_status hcq_mma_coord(hcq_mma_kind kind, unsigned operand, unsigned lane, unsigned e, unsigned *row, unsigned *col)
{
    char why[160];
    const cc_mma_kind *m = check_args(kind, operand, e, why, sizeof why);
    if (!m) return base_err(HCQ_EINVAL, "hcq_mma_coord: %s", why);
    if (lane >= m->info.warp)
        return base_err(HCQ_EINVAL, "hcq_mma_coord: lane %u of %s, whose warp has %u", lane, m->info.name, m->info.warp);
    if (!row || !col) return base_err(HCQ_EINVAL, "hcq_mma_coord: NULL %s", row ? "col" : "row");
    *row = cc_mma_eval(m->frag[operand].row, lane, e);
    *col = cc_mma_eval(m->frag[operand].col, lane, e);
    return HCQ_OK;
}

/* one coordinate as i32 ops: the lane's bit fields shifted, masked and
 * scaled, plus the element's part folded into a constant */
static hcq_ir_ref coord_ir(hcq_kernel *k, const cc_mma_term *t, hcq_ir_ref lane, unsigned e)
{
    unsigned fixed = cc_mma_eval(t, 0, e) - cc_mma_eval(t, 0, 0); /* the element's terms alone */
    hcq_ir_ref sum = HCQ_IR_NONE;
    for (unsigned i = 0; i < CC_MMA_TERMS && t[i].src; i++) {
        if (t[i].src != CC_MMA_LANE) continue;
        hcq_ir_ref x = lane;
        if (t[i].shift) x = hcq_ir_binary(k, HCQ_OP_SHR, x, hcq_ir_const_int(k, HCQ_I32, t[i].shift));
        x = hcq_ir_binary(k, HCQ_OP_AND, x, hcq_ir_const_int(k, HCQ_I32, (1 << t[i].width) - 1));
        if (t[i].scale != 1) x = hcq_ir_binary(k, HCQ_OP_MUL, x, hcq_ir_const_int(k, HCQ_I32, t[i].scale));
        sum = sum == HCQ_IR_NONE ? x : hcq_ir_binary(k, HCQ_OP_ADD, sum, x);
    }
    if (sum == HCQ_IR_NONE) return hcq_ir_const_int(k, HCQ_I32, fixed);
    return fixed ? hcq_ir_binary(k, HCQ_OP_ADD, sum, hcq_ir_const_int(k, HCQ_I32, fixed)) : sum;
}

hcq_status hcq_ir_mma_coord(hcq_kernel *k, hcq_mma_kind kind, unsigned operand, hcq_ir_ref lane, unsigned e,
                            hcq_ir_ref *row, hcq_ir_ref *col)
{
    if (!k) return base_err(HCQ_EINVAL, "hcq_ir_mma_coord: kernel is NULL");
    if (!row || !col) return base_err(HCQ_EINVAL, "hcq_ir_mma_coord: NULL %s", row ? "col" : "row");
    *row = *col = HCQ_IR_NONE;
    if (k->build_err) return base_err(k->build_err, "hcq_ir_mma_coord: kernel '%s' has a builder error already: %s",
                                      k->name, k->build_msg ? k->build_msg : "?");
    char why[160];
    const cc_mma_kind *m = check_args(kind, operand, e, why, sizeof why);
    if (m && (lane >= k->nops || k->ops[lane].dtype != HCQ_I32 || ir_vec(&k->ops[lane]) ||
              !ir_op_has_value(&k->ops[lane]))) {
        snprintf(why, sizeof why, "the lane (op %u) is not an i32 scalar value", lane);
        m = NULL;
    }
    if (!m) {
        ir_build_fail(k, "hcq_ir_mma_coord at op %u: %s", k->nops, why);
        return base_err(HCQ_EINVAL, "hcq_ir_mma_coord: kernel '%s': %s", k->name, why);
    }
    hcq_ir_ref r = coord_ir(k, m->frag[operand].row, lane, e), c = coord_ir(k, m->frag[operand].col, lane, e);
    if (k->build_err) return base_err(k->build_err, "hcq_ir_mma_coord: kernel '%s': %s", k->name,
                                      k->build_msg ? k->build_msg : "a builder call failed");
    *row = r;
    *col = c;
    return HCQ_OK;
}
