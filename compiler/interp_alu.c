/* The interpreter's ALU: one tight loop per (op, dtype class), with the
 * dtype's facts (width, signedness) hoisted out so the compiler can
 * vectorise. This file *is* the definition of every corner case in
 * compiler.h (division by zero, shift counts, saturation, NaN, rounding of
 * narrow floats); render_c.c emits C that must agree with it bit for bit. */
#include "compiler/interp.h"
#include "compiler/ir_float.h"

/* ** integers (and bool, for the bitwise ops, cmpne and where) */

/* Loops an expression of x, y, z (the lanes' u64 bits) and canonicalises
 * the result at the dtype's width. */
#define INT_LOOP(EXPR)                                                                                             \
    do {                                                                                                           \
        if (sgn) {                                                                                                 \
            for (uint32_t i = 0; i < n; i++) {                                                                     \
                uint64_t x = a[i].u, y = b[i].u, z = c[i].u;                                                       \
                (void)y, (void)z;                                                                                  \
                d[i].u = (uint64_t)((int64_t)((EXPR) << sh) >> sh);                                                \
            }                                                                                                      \
        } else {                                                                                                   \
            for (uint32_t i = 0; i < n; i++) {                                                                     \
                uint64_t x = a[i].u, y = b[i].u, z = c[i].u;                                                       \
                (void)y, (void)z;                                                                                  \
                d[i].u = (EXPR)&mask;                                                                              \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)

/* Loops an expression that needs no canonicalisation (compares, bitwise
 * ops on canonical inputs, shifts right). xs/ys are the signed views. */
#define RAW_LOOP(EXPR)                                                                                             \
    do {                                                                                                           \
        for (uint32_t i = 0; i < n; i++) {                                                                         \
            uint64_t x = a[i].u, y = b[i].u;                                                                       \
            int64_t xs = a[i].i, ys = b[i].i;                                                                      \
            (void)x, (void)y, (void)xs, (void)ys;                                                                  \
            d[i].u = (uint64_t)(EXPR);                                                                             \
        }                                                                                                          \
    } while (0)

static void int_div(hcq_op op, bool sgn, unsigned sh, uint64_t mask, ir_slot *restrict d, const ir_slot *a,
                    const ir_slot *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r;
        if (sgn) {
            int64_t x = a[i].i, y = b[i].i;
            if (y == 0) r = 0;
            else if (y == -1) r = op == HCQ_OP_IDIV ? 0 - (uint64_t)x : 0; /* INT_MIN / -1 wraps to INT_MIN */
            else r = (uint64_t)(op == HCQ_OP_IDIV ? x / y : x % y);
            d[i].u = (uint64_t)((int64_t)(r << sh) >> sh);
        } else {
            uint64_t x = a[i].u, y = b[i].u;
            r = y == 0 ? 0 : op == HCQ_OP_IDIV ? x / y : x % y;
            d[i].u = r & mask;
        }
    }
}

static void alu_int(hcq_op op, hcq_dtype t, ir_slot *restrict d, const ir_slot *a, const ir_slot *b,
                    const ir_slot *c, uint32_t n)
{
    unsigned w = t == HCQ_BOOL ? 1 : ir_dt_bits(t), sh = t == HCQ_BOOL ? 0 : 64 - w;
    bool sgn = hcq_dtype_is_signed(t);
    uint64_t mask = w >= 64 ? ~0ull : (1ull << w) - 1, cnt = w - 1; /* shift counts are taken mod w */
    switch (op) {
    case HCQ_OP_NEG: INT_LOOP(0 - x); break;
    case HCQ_OP_ADD: INT_LOOP(x + y); break;
    case HCQ_OP_SUB: INT_LOOP(x - y); break;
    case HCQ_OP_MUL: INT_LOOP(x * y); break;
    case HCQ_OP_MULACC: INT_LOOP(x * y + z); break;
    case HCQ_OP_SHL: INT_LOOP(x << (y & cnt)); break;
    case HCQ_OP_IDIV:
    case HCQ_OP_MOD: int_div(op, sgn, sh, mask, d, a, b, n); break;
    case HCQ_OP_SHR:
        if (sgn) RAW_LOOP(xs >> (y & cnt));
        else RAW_LOOP(x >> (y & cnt));
        break;
    case HCQ_OP_MAX:
        if (sgn) RAW_LOOP(xs > ys ? x : y);
        else RAW_LOOP(x > y ? x : y);
        break;
    case HCQ_OP_CMPLT:
        if (sgn) RAW_LOOP(xs < ys);
        else RAW_LOOP(x < y);
        break;
    case HCQ_OP_CMPNE: RAW_LOOP(x != y); break;
    case HCQ_OP_AND: RAW_LOOP(x & y); break;
    case HCQ_OP_OR: RAW_LOOP(x | y); break;
    case HCQ_OP_XOR: RAW_LOOP(x ^ y); break;
    default: break; /* the verifier admits nothing else on integers */
    }
}

/* ** floats: f32 (and f16/bf16, computed in f32 then rounded) and f64 */

#define F_LOOP(FIELD, EXPR)                                                                                        \
    do {                                                                                                           \
        for (uint32_t i = 0; i < n; i++) {                                                                         \
            __typeof__(a[i].FIELD) x = a[i].FIELD, y = b[i].FIELD, z = c[i].FIELD;                                 \
            (void)y, (void)z;                                                                                      \
            d[i].FIELD = (EXPR);                                                                                   \
        }                                                                                                          \
    } while (0)

#define CMP_LOOP(FIELD, EXPR)                                                                                      \
    do {                                                                                                           \
        for (uint32_t i = 0; i < n; i++) {                                                                         \
            __typeof__(a[i].FIELD) x = a[i].FIELD, y = b[i].FIELD;                                                 \
            d[i].u = (EXPR);                                                                                       \
        }                                                                                                          \
    } while (0)

/* Returns whether the result is a float (and so needs narrow rounding). */
static bool alu_f32(hcq_op op, ir_slot *restrict d, const ir_slot *a, const ir_slot *b, const ir_slot *c,
                    uint32_t n)
{
    switch (op) {
    case HCQ_OP_NEG: F_LOOP(f, -x); return true;
    case HCQ_OP_EXP2: F_LOOP(f, exp2f(x)); return true;
    case HCQ_OP_LOG2: F_LOOP(f, log2f(x)); return true;
    case HCQ_OP_SIN: F_LOOP(f, sinf(x)); return true;
    case HCQ_OP_SQRT: F_LOOP(f, sqrtf(x)); return true;
    case HCQ_OP_RECIP: F_LOOP(f, 1.0f / x); return true;
    case HCQ_OP_TRUNC: F_LOOP(f, truncf(x)); return true;
    case HCQ_OP_ADD: F_LOOP(f, x + y); return true;
    case HCQ_OP_SUB: F_LOOP(f, x - y); return true;
    case HCQ_OP_MUL: F_LOOP(f, x * y); return true;
    case HCQ_OP_FDIV: F_LOOP(f, x / y); return true;
    case HCQ_OP_MAX: F_LOOP(f, ir_maxf(x, y)); return true;
    case HCQ_OP_MULACC: F_LOOP(f, fmaf(x, y, z)); return true;
    case HCQ_OP_CMPLT: CMP_LOOP(f, x < y); return false;
    case HCQ_OP_CMPNE: CMP_LOOP(f, x != y); return false;
    default: return false;
    }
}

static void alu_f64(hcq_op op, ir_slot *restrict d, const ir_slot *a, const ir_slot *b, const ir_slot *c,
                    uint32_t n)
{
    switch (op) {
    case HCQ_OP_NEG: F_LOOP(d, -x); break;
    case HCQ_OP_EXP2: F_LOOP(d, exp2(x)); break;
    case HCQ_OP_LOG2: F_LOOP(d, log2(x)); break;
    case HCQ_OP_SIN: F_LOOP(d, sin(x)); break;
    case HCQ_OP_SQRT: F_LOOP(d, sqrt(x)); break;
    case HCQ_OP_RECIP: F_LOOP(d, 1.0 / x); break;
    case HCQ_OP_TRUNC: F_LOOP(d, trunc(x)); break;
    case HCQ_OP_ADD: F_LOOP(d, x + y); break;
    case HCQ_OP_SUB: F_LOOP(d, x - y); break;
    case HCQ_OP_MUL: F_LOOP(d, x * y); break;
    case HCQ_OP_FDIV: F_LOOP(d, x / y); break;
    case HCQ_OP_MAX: F_LOOP(d, ir_max(x, y)); break;
    case HCQ_OP_MULACC: F_LOOP(d, fma(x, y, z)); break;
    case HCQ_OP_CMPLT: CMP_LOOP(d, x < y); break;
    case HCQ_OP_CMPNE: CMP_LOOP(d, x != y); break;
    default: break;
    }
}

static void round_narrow(hcq_dtype t, ir_slot *d, uint32_t n)
{
    if (t == HCQ_F16)
        for (uint32_t i = 0; i < n; i++) d[i].u = ir_f32_bits(ir_round_f16(d[i].f));
    else
        for (uint32_t i = 0; i < n; i++) d[i].u = ir_f32_bits(ir_round_bf16(d[i].f));
}

/* ** conversions */

static uint64_t int_to_float(hcq_dtype from, hcq_dtype to, uint64_t v)
{
    bool sgn = hcq_dtype_is_signed(from) && from != HCQ_BOOL;
    int64_t s = (int64_t)v;
    switch (to) {
    case HCQ_F64: return ir_f64_bits(sgn ? (double)s : (double)v);
    case HCQ_F32: return ir_f32_bits(sgn ? (float)s : (float)v);
    /* int -> f32 -> f16 is exact or overflows either way (|x| >= 65520
     * is inf in f16, and f32 is exact below 2^24), so one RNE suffices */
    case HCQ_F16: return ir_f32_bits(ir_round_f16(sgn ? (float)s : (float)v));
    default: /* bf16 keeps 8 bits, so round to odd first (see ir_float.h) */
        return ir_f32_bits(ir_round_bf16(sgn ? ir_i64_to_f32_odd(s) : ir_u64_to_f32_odd(v)));
    }
}

static uint64_t float_to_int(hcq_dtype to, double x)
{
    if (to == HCQ_BOOL) return x != 0;
    unsigned bits = ir_dt_bits(to);
    if (hcq_dtype_is_signed(to)) return (uint64_t)ir_f2i_signed(x, bits);
    return ir_f2i_unsigned(x, bits);
}

static uint64_t float_to_float(hcq_dtype from, hcq_dtype to, uint64_t v)
{
    if (from == HCQ_F64) {
        double x = ir_bits_f64(v);
        if (to == HCQ_F64) return v;
        if (to == HCQ_F32) return ir_f32_bits((float)x);
        float odd = ir_f64_to_f32_odd(x); /* one correct rounding to the narrow type */
        return ir_f32_bits(to == HCQ_F16 ? ir_round_f16(odd) : ir_round_bf16(odd));
    }
    float f = ir_bits_f32((uint32_t)v);
    switch (to) {
    case HCQ_F64: return ir_f64_bits((double)f);
    case HCQ_F32: return ir_f32_bits(f);
    case HCQ_F16: return ir_f32_bits(ir_round_f16(f));
    default: return ir_f32_bits(ir_round_bf16(f));
    }
}

uint64_t ir_cast_lane(hcq_dtype from, hcq_dtype to, uint64_t v)
{
    bool ff = hcq_dtype_is_float(from), tf = hcq_dtype_is_float(to);
    if (ff && tf) return float_to_float(from, to, v);
    if (ff) return float_to_int(to, from == HCQ_F64 ? ir_bits_f64(v) : (double)ir_bits_f32((uint32_t)v));
    if (tf) return int_to_float(from, to, v);
    return ir_canon(to, v); /* int/bool -> int/bool: truncate and extend; bool is x != 0 */
}

/* The bit pattern of a lane as stored in memory (the low size bytes). */
static uint64_t lane_bits(hcq_dtype t, uint64_t v)
{
    switch (t) {
    case HCQ_F16: return ir_f32_to_f16_bits(ir_bits_f32((uint32_t)v));
    case HCQ_BF16: return ir_f32_to_bf16_bits(ir_bits_f32((uint32_t)v));
    case HCQ_F32: return (uint32_t)v;
    default: return v;
    }
}

static uint64_t lane_of_bits(hcq_dtype t, uint64_t bits)
{
    switch (t) {
    case HCQ_F16: return ir_f32_bits(ir_f16_to_f32((uint16_t)bits));
    case HCQ_BF16: return ir_f32_bits(ir_bf16_to_f32((uint16_t)bits));
    case HCQ_F32: return (uint32_t)bits;
    case HCQ_F64: return bits;
    default: return ir_canon(t, bits);
    }
}

static void convert(const hcq_ir_op *o, hcq_dtype from, ir_slot *restrict d, const ir_slot *a, uint32_t n)
{
    hcq_dtype to = (hcq_dtype)o->dtype;
    if (o->op == HCQ_OP_BITCAST) {
        for (uint32_t i = 0; i < n; i++) d[i].u = lane_of_bits(to, lane_bits(from, a[i].u));
        return;
    }
    /* the common conversions get their own loops; the rest go lane by lane */
    if (from == HCQ_F32 && to == HCQ_I32) {
        for (uint32_t i = 0; i < n; i++) d[i].i = ir_f2i_signed(a[i].f, 32);
    } else if (from == HCQ_I32 && to == HCQ_F32) {
        for (uint32_t i = 0; i < n; i++) d[i].u = ir_f32_bits((float)a[i].i);
    } else if (hcq_dtype_is_int(to) && (hcq_dtype_is_int(from) || from == HCQ_BOOL)) {
        ir_ifmt f = ir_ifmt_of(to);
        for (uint32_t i = 0; i < n; i++) d[i].u = ir_ifmt_canon(f, a[i].u);
    } else if (to == HCQ_BOOL && !hcq_dtype_is_float(from)) {
        for (uint32_t i = 0; i < n; i++) d[i].u = a[i].u != 0;
    } else {
        for (uint32_t i = 0; i < n; i++) d[i].u = ir_cast_lane(from, to, a[i].u);
    }
}

void ir_alu(const hcq_ir_op *o, hcq_dtype from, ir_slot *restrict d, const ir_slot *s0, const ir_slot *s1,
            const ir_slot *s2, uint32_t n)
{
    hcq_op op = (hcq_op)o->op;
    if (op == HCQ_OP_CAST || op == HCQ_OP_BITCAST) {
        convert(o, from, d, s0, n);
        return;
    }
    if (op == HCQ_OP_WHERE) { /* any dtype: lanes are copied whole */
        for (uint32_t i = 0; i < n; i++) d[i].u = s0[i].u ? s1[i].u : s2[i].u;
        return;
    }
    if (from == HCQ_F64) {
        alu_f64(op, d, s0, s1, s2, n);
    } else if (hcq_dtype_is_float(from)) {
        if (alu_f32(op, d, s0, s1, s2, n) && from != HCQ_F32) round_narrow(from, d, n);
    } else {
        alu_int(op, from, d, s0, s1, s2, n);
    }
}

uint64_t ir_lane_from_mem(hcq_dtype t, const void *p)
{
    uint64_t bits = 0;
    memcpy(&bits, p, hcq_dtype_size(t)); /* little-endian host: the low bytes */
    return lane_of_bits(t, bits);
}

void ir_lane_to_mem(hcq_dtype t, uint64_t v, void *p)
{
    uint64_t bits = lane_bits(t, v);
    memcpy(p, &bits, hcq_dtype_size(t));
}
