/* compiler/interp.h: the interpreter's lane representation and its ALU,
 * shared by interp.c (control flow, memory, launch) and interp_alu.c.
 *
 * Every value is a vector of 64-bit lanes, one per work-item of the group.
 * A lane holds its value canonically, so ops never re-normalise inputs:
 *   ints    sign-extended (signed dtypes) or zero-extended (unsigned)
 *   bool    0 or 1
 *   f32     float in .f (upper word undefined)
 *   f16/bf16 float in .f holding a value the dtype represents exactly
 *   f64     double in .d */
#ifndef HCQ_COMPILER_INTERP_H
#define HCQ_COMPILER_INTERP_H

#include "compiler/ir.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the interpreter reads and writes memory in host order and assumes a little-endian host"
#endif

typedef union ir_slot {
    uint64_t u;
    int64_t i;
    double d;
    float f;
} ir_slot;

/* Runs one ALU, conversion or WHERE op over n lanes: d = op(s0, s1, s2).
 * Operands an op does not have are passed as s0 (never NULL). `from` is
 * the dtype of operand 0 (1 for WHERE). Lanes of inactive work-items are
 * computed too: every op is total (no traps, no UB), and their results are
 * never observed. */
void ir_alu(const hcq_ir_op *o, hcq_dtype from, ir_slot *restrict d, const ir_slot *s0, const ir_slot *s1,
            const ir_slot *s2, uint32_t n);

/* One lane's CAST (for constants, parameters and tests). */
uint64_t ir_cast_lane(hcq_dtype from, hcq_dtype to, uint64_t v);

/* Memory <-> lane conversion for an element of dtype t (host byte order). */
uint64_t ir_lane_from_mem(hcq_dtype t, const void *p);
void ir_lane_to_mem(hcq_dtype t, uint64_t v, void *p);

/* The canonical lane for integer dtype t holding the low bits of v. */
static inline uint64_t ir_canon(hcq_dtype t, uint64_t v)
{
    unsigned bits = ir_dt_bits(t);
    if (t == HCQ_BOOL) return v != 0;
    if (bits >= 64 || hcq_dtype_is_float(t)) return v;
    if (hcq_dtype_is_signed(t)) return (uint64_t)((int64_t)(v << (64 - bits)) >> (64 - bits));
    return v & ((1ull << bits) - 1);
}

/* ir_canon for an integer dtype with its facts looked up once, for lane
 * loops (not for bool, which is x != 0). */
typedef struct ir_ifmt {
    unsigned sh; /* 64 - width */
    bool sgn;
    uint64_t mask; /* width bits */
} ir_ifmt;

static inline ir_ifmt ir_ifmt_of(hcq_dtype t)
{
    unsigned w = ir_dt_bits(t);
    ir_ifmt f = {64 - w, hcq_dtype_is_signed(t), w >= 64 ? ~0ull : (1ull << w) - 1};
    return f;
}

static inline uint64_t ir_ifmt_canon(ir_ifmt f, uint64_t v)
{
    return f.sgn ? (uint64_t)((int64_t)(v << f.sh) >> f.sh) : v & f.mask;
}

#endif
