/* compiler/ir_float.h: the float and conversion rules of the IR, as plain
 * integer code so they are exact on every host and compiler (no _Float16,
 * no reliance on the FPU's rounding of narrow types). The interpreter uses
 * them; the C renderer emits the same algorithms into its prelude
 * (render_c.c), and the agreement tests hold the two to the same bits.
 *
 * f16 and bf16 values live in float variables holding a value the narrow
 * type can represent exactly. Two kinds of conversion:
 *   - storage (load, store, bitcast, scalar params): exact both ways, NaN
 *     payloads and signalling NaNs included, so copying data never changes
 *     its bits: ir_f16_to_f32 / ir_f32_to_f16_bits (and bf16);
 *   - rounding (every op that produces an f16/bf16, and casts to them):
 *     round to nearest even, NaNs quieted with the payload's top bits
 *     kept, as x86 F16C does: ir_round_f16 / ir_round_bf16. */
#ifndef HCQ_COMPILER_IR_FLOAT_H
#define HCQ_COMPILER_IR_FLOAT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ir_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float ir_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint64_t ir_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static inline double ir_bits_f64(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* f32 -> f16 bits, round to nearest even, NaN quieted. */
static inline uint16_t ir_f32_to_f16(float f)
{
    uint32_t x = ir_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (ax >= 0x38800000u) {                                  /* normal: >= 2^-14 */
        uint32_t m = ax - 0x38000000u;                        /* rebias 127 -> 15 */
        return (uint16_t)(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13));
    }
    if (ax < 0x33000000u) return (uint16_t)sign; /* below 2^-25: zero */
    uint32_t e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;
    uint32_t q = mant >> sh, rem = mant & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

/* f32 holding an f16 value -> its bits, exactly (a signalling NaN stays
 * one; a NaN whose payload does not fit is quieted so it stays a NaN). */
static inline uint16_t ir_f32_to_f16_bits(float f)
{
    uint32_t x = ir_f32_bits(f), ax = x & 0x7fffffffu;
    if (ax <= 0x7f800000u) return ir_f32_to_f16(f);
    uint32_t m = (ax >> 13) & 0x3ffu;
    return (uint16_t)(((x >> 16) & 0x8000u) | 0x7c00u | (m ? m : 0x200u));
}

/* f16 bits -> f32, exact (NaN payloads kept). */
static inline float ir_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return ir_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) return ir_bits_f32(sign | ir_f32_bits((float)m * 0x1p-24f));
    return ir_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* f32 -> bf16 bits, round to nearest even, NaN quieted. */
static inline uint16_t ir_f32_to_bf16(float f)
{
    uint32_t x = ir_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* f32 holding a bf16 value -> its bits, exactly (see ir_f32_to_f16_bits). */
static inline uint16_t ir_f32_to_bf16_bits(float f)
{
    uint32_t x = ir_f32_bits(f);
    if ((x & 0x7fffffffu) <= 0x7f800000u) return (uint16_t)(x >> 16);
    return (uint16_t)((x >> 16) | ((x & 0x7f0000u) ? 0 : 0x40u));
}

static inline float ir_bf16_to_f32(uint16_t h) { return ir_bits_f32((uint32_t)h << 16); }

static inline float ir_round_f16(float x) { return ir_f16_to_f32(ir_f32_to_f16(x)); }
static inline float ir_round_bf16(float x) { return ir_bf16_to_f32(ir_f32_to_bf16(x)); }

/* f64 -> f32 rounded to odd: truncate, then set the last bit if inexact.
 * Rounding that to f16/bf16 (11 and 8 bits, both <= 24 - 2) gives the
 * correctly rounded narrow value, which double rounding through an RNE f32
 * would not (1 + 2^-8 + 2^-30 must become bf16 1 + 2^-7, not 1). */
static inline float ir_f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (d != d || (double)f == d) return f;
    uint32_t u = ir_f32_bits(f);
    if (isinf(f))
        u = (u & 0x80000000u) | 0x7f7fffffu; /* truncation of a finite value beyond FLT_MAX */
    else if (fabs((double)f) > fabs(d))
        u -= 1; /* one step toward zero: float bits order by magnitude */
    return ir_bits_f32(u | 1u);
}

/* |integer| -> f32 rounded to odd (exact below 2^24), for int -> bf16. */
static inline float ir_u64_to_f32_odd(uint64_t m)
{
    if (m < (1ull << 24)) return (float)m;
    int sh = 64 - __builtin_clzll(m) - 24;
    uint64_t top = m >> sh;
    if (m & ((1ull << sh) - 1)) top |= 1;
    return ldexpf((float)top, sh);
}
static inline float ir_i64_to_f32_odd(int64_t v)
{
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    float f = ir_u64_to_f32_odd(m);
    return v < 0 ? -f : f;
}

/* maxNum with a fixed order for zeros: a NaN loses to a number, and
 * max(-0, +0) is +0 whichever side it is on. */
static inline float ir_maxf(float a, float b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static inline double ir_max(double a, double b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* float -> integer: truncate toward zero, saturate, NaN gives 0. `bits` is
 * the integer width; the result is the canonical (extended) lane value. */
static inline int64_t ir_f2i_signed(double d, unsigned bits)
{
    if (d != d) return 0;
    double lo = -ldexp(1.0, (int)bits - 1), hi = ldexp(1.0, (int)bits - 1);
    if (d <= lo) return (int64_t)lo;
    if (d >= hi) return bits == 64 ? INT64_MAX : (int64_t)hi - 1;
    return (int64_t)d; /* C truncates toward zero */
}
static inline uint64_t ir_f2i_unsigned(double d, unsigned bits)
{
    if (d != d || d <= 0) return 0;
    double hi = ldexp(1.0, (int)bits);
    if (d >= hi) return bits == 64 ? UINT64_MAX : (uint64_t)hi - 1;
    return (uint64_t)d;
}

#endif
