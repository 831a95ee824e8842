/* The SASS executor's arithmetic (mock_sass.h): integer, predicate,
 * single, half and double precision, conversions, special registers.
 *
 * Semantics: NVIDIA's instruction-set reference (CUDA Binary Utilities)
 * names the instructions; what each computes is the PTX ISA's operation
 * it implements (ptxas maps add.cc/addc to IADD3 carries, mad.wide to
 * IMAD.WIDE, shf to SHF, lop3 to LOP3.LUT, cvt to I2F/F2I/F2F/F2FP, the
 * .approx functions to MUFU). Where the encoding's meaning is not
 * documented, the rule chosen is the one ptxas's own sequences need, and
 * says so:
 *   - IADD3's two carry-out predicates: the carry of a + b, then of that
 *     sum + c; a negated operand is ~x + 1 (so a - b carries when there is
 *     no borrow, as IADD3.X's ~b + carry then expects);
 *   - LOP3.LUT's predicate output: the result is non-zero;
 *   - MUFU.SIN/COS take the angle in turns (ptxas multiplies radians by
 *     1/(2 pi) first); MUFU results are the correctly rounded function,
 *     inside the PTX ISA's stated error bounds for the .approx operations
 *     (the hardware's exact bits are not documented);
 *   - arithmetic NaN results are the canonical NaN 0x7fffffff (PTX ISA:
 *     NaN payloads are not propagated).
 * Paired-half arithmetic is done in double and rounded once to half (the
 * product of two halves is exact there; a sum may round twice in rare
 * ties). */
#include "drivers/mock/mock_sass.h"

#include "base/base.h"

#include <fenv.h>
#include <stdatomic.h>
#include <math.h>
#include <string.h>

#define LANES(o, i) for (uint32_t _m = (o)->exec, i; _m && ((i = (uint32_t)__builtin_ctz(_m)), 1); _m &= _m - 1)

static inline float f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static inline uint32_t bits32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static inline double f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static inline uint64_t bits64(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* ** halves */
static uint16_t to_f16(double v)
{
    float f = (float)v; /* exact enough: the f16 rounding below decides */
    if (fabs(v) < 65520.0 && (double)f != v) {
        /* round the double itself to 11 bits (one rounding) */
        int e;
        double m = frexp(v, &e); /* v = m * 2^e, 0.5 <= |m| < 1 */
        int bits = e - 1 >= -14 ? 11 : 11 - (-14 - (e - 1));
        if (bits < 0) return (uint16_t)(signbit(v) ? 0x8000 : 0);
        double r = nearbyint(ldexp(m, bits));
        v = ldexp(r, e - bits);
        f = (float)v;
    }
    uint32_t x = bits32(f);
    uint32_t sign = (x >> 16) & 0x8000, ex = (x >> 23) & 0xff, mant = x & 0x7fffff;
    if (ex == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    int ee = (int)ex - 127 + 15;
    if (ee >= 31) return (uint16_t)(sign | 0x7c00);
    if (ee <= 0) {
        if (ee < -10) return (uint16_t)sign;
        mant |= 0x800000;
        uint32_t shift = (uint32_t)(14 - ee), h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = (uint32_t)ee << 10 | mant >> 13, rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static double from_f16(uint16_t h)
{
    uint32_t sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31) v = m ? NAN : INFINITY;
    else if (!e) v = ldexp((double)m, -24);
    else v = ldexp((double)(m | 1024), (int)e - 25);
    return sign ? -v : v;
}

static uint16_t to_bf16(float f)
{
    uint32_t x = bits32(f);
    if (isnan(f)) return 0x7fff;
    uint32_t r = x + 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(r >> 16);
}
static double from_bf16(uint16_t h) { return f32((uint32_t)h << 16); }

/* ** single precision */
static inline float ftz(float f) { return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }

static float fin(msass_op *o, unsigned k, uint32_t v)
{
    const sass_opnd *x = &o->in->o[k];
    float f = f32(v);
    if (x->flags & SASS_F_ABS) f = fabsf(f);
    if (x->flags & SASS_F_NEG) f = -f;
    if (sass_has(o->in, SASS_M_FTZ)) f = ftz(f);
    return f;
}

static uint32_t fout(msass_op *o, float f)
{
    if (sass_has(o->in, SASS_M_FTZ)) f = ftz(f);
    if (sass_has(o->in, SASS_M_SAT)) f = isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f;
    if (isnan(f)) return 0x7fffffffu;
    return bits32(f);
}

static int rounding(const sass_insn *in)
{
    if (sass_has(in, SASS_M_RZ) || sass_has(in, SASS_M_TRUNC)) return FE_TOWARDZERO;
    if (sass_has(in, SASS_M_RM) || sass_has(in, SASS_M_FLOOR)) return FE_DOWNWARD;
    if (sass_has(in, SASS_M_RP) || sass_has(in, SASS_M_CEIL)) return FE_UPWARD;
    return FE_TONEAREST;
}

static bool fcmp(int cmp, double a, double b)
{
    bool un = isnan(a) || isnan(b);
    switch (cmp) {
    case SASS_M_F: return false;
    case SASS_M_T: return true;
    case SASS_M_LT: return !un && a < b;
    case SASS_M_EQ: return !un && a == b;
    case SASS_M_LE: return !un && a <= b;
    case SASS_M_GT: return !un && a > b;
    case SASS_M_NE: return !un && a != b;
    case SASS_M_GE: return !un && a >= b;
    case SASS_M_NUM: return !un;
    case SASS_M_NAN: return un;
    case SASS_M_LTU: return un || a < b;
    case SASS_M_EQU: return un || a == b;
    case SASS_M_LEU: return un || a <= b;
    case SASS_M_GTU: return un || a > b;
    case SASS_M_NEU: return un || a != b;
    case SASS_M_GEU: return un || a >= b;
    default: return false;
    }
}

static int cmp_of(const sass_insn *in)
{
    static const int cmps[] = {SASS_M_LT, SASS_M_EQ, SASS_M_LE, SASS_M_GT, SASS_M_NE, SASS_M_GE, SASS_M_NUM,
                               SASS_M_NAN, SASS_M_LTU, SASS_M_EQU, SASS_M_LEU, SASS_M_GTU, SASS_M_NEU, SASS_M_GEU,
                               SASS_M_T, SASS_M_F};
    for (size_t i = 0; i < BASE_ARRAY_LEN(cmps); i++)
        if (sass_has(in, (sass_mod)cmps[i])) return cmps[i];
    return -1;
}

/* P = x bop c */
static uint32_t bop(const sass_insn *in, uint32_t x, uint32_t c)
{
    if (sass_has(in, SASS_M_OR)) return x | c;
    if (sass_has(in, SASS_M_XOR)) return x ^ c;
    return x & c;
}

/* ** integer helpers */
static inline uint32_t ineg(const sass_opnd *x, uint32_t v, uint32_t *plus)
{
    if (x->flags & SASS_F_NEG) {
        *plus += 1;
        return ~v;
    }
    if (x->flags & SASS_F_NOT) return ~v;
    return v;
}

/* bit i of the result is lut's bit (a_i << 2 | b_i << 1 | c_i): Shannon's
 * expansion on a, then b; c's four functions */
static inline uint32_t lut1(uint32_t v, uint32_t c) { return v == 0 ? 0 : v == 1 ? ~c : v == 2 ? c : ~0u; }
static inline uint32_t lut2(uint32_t u, uint32_t b, uint32_t c)
{
    return (b & lut1(u >> 2, c)) | (~b & lut1(u & 3, c));
}
static inline uint32_t lut3(uint32_t lut, uint32_t a, uint32_t b, uint32_t c)
{
    return (a & lut2(lut >> 4 & 15, b, c)) | (~a & lut2(lut & 15, b, c));
}

/* index of the first operand after the destinations: d, then any P's */
static unsigned after_preds(const sass_insn *in, unsigned from)
{
    while (from < in->nops && (in->o[from].kind == SASS_K_P || in->o[from].kind == SASS_K_UP)) from++;
    return from;
}

static bool is_pred(const sass_opnd *x) { return x->kind == SASS_K_P || x->kind == SASS_K_UP; }

/* ** ops */
static int iadd3(msass_op *o)
{
    const sass_insn *in = o->in;
    unsigned s = after_preds(in, 1), nout = s - 1;
    if (in->nops < s + 3) return -1;
    const uint32_t *a = msass_src_row(o, s, 0), *b = msass_src_row(o, s + 1, 1), *c = msass_src_row(o, s + 2, 2);
    uint32_t cin[2] = {0, 0};
    unsigned ncin = 0;
    for (unsigned k = s + 3; k < in->nops && ncin < 2; k++)
        if (is_pred(&in->o[k])) cin[ncin++] = msass_pred(o, k);
    bool x = sass_has(in, SASS_M_X);
    uint32_t *d = msass_dst(o, 0), c0 = 0, c1 = 0;
    if (!nout && !x && !((in->o[s].flags | in->o[s + 1].flags | in->o[s + 2].flags) & (SASS_F_NEG | SASS_F_NOT))) {
        MSASS_LANES(o, i, d[i] = a[i] + b[i] + c[i]); /* the common three-way sum */
        return 0;
    }
    LANES(o, i) {
        uint32_t p1 = 0, p2 = 0;
        uint64_t av = ineg(&in->o[s], a[i], &p1), bv = ineg(&in->o[s + 1], b[i], &p1), cv = ineg(&in->o[s + 2], c[i], &p2);
        uint64_t carry = x ? ((cin[0] >> i) & 1) + ((cin[1] >> i) & 1) : 0;
        uint64_t s1 = av + bv + p1 + carry;
        uint64_t s2 = (s1 & 0xffffffffu) + cv + p2;
        d[i] = (uint32_t)s2;
        c0 |= (uint32_t)((s1 >> 32) != 0) << i;
        c1 |= (uint32_t)((s2 >> 32) != 0) << i;
        if ((s1 >> 32) > 1) c1 |= 1u << i; /* a carry of 2 from the first sum: one in each predicate */
    }
    if (nout >= 1) msass_pred_set(o, 1, c0);
    if (nout >= 2) msass_pred_set(o, 2, c1);
    return 0;
}

static int imad(msass_op *o)
{
    const sass_insn *in = o->in;
    unsigned s = after_preds(in, 1), nout = s - 1;
    if (in->nops < s + (in->op == SASS_OP_IMUL ? 2 : 3)) return -1;
    bool wide = sass_has(in, SASS_M_WIDE), hi = sass_has(in, SASS_M_HI), x = sass_has(in, SASS_M_X);
    bool uns = sass_has(in, SASS_M_U32) && !sass_has(in, SASS_M_MOV) && !sass_has(in, SASS_M_SHL);
    if (sass_has(in, SASS_M_MOV) || sass_has(in, SASS_M_SHL) || sass_has(in, SASS_M_IADD)) uns = true;
    const uint32_t *a = msass_src_row(o, s, 0), *b = msass_src_row(o, s + 1, 1);
    const uint32_t *c = in->op == SASS_OP_IMUL ? NULL : msass_src_row(o, s + 2, 2);
    /* IMAD.WIDE's and IMAD.HI's addend is a register pair: HI adds the product to {c+1:c} and keeps bits
     * 63:32 (ptxas's division zeroes c and puts the estimate in c+1 to add it) */
    const uint32_t *ch = (wide || hi) && c ? msass_src_hi(o, s + 2, 3) : NULL;
    uint32_t cin = 0;
    for (unsigned k = s + 3; k < in->nops; k++)
        if (is_pred(&in->o[k])) cin = msass_pred(o, k);
    uint32_t *d = msass_dst(o, 0), *dh = wide ? msass_dst_hi(o, 0) : NULL, cout = 0;
    bool na = in->o[s].flags & SASS_F_NEG, nb = in->o[s + 1].flags & SASS_F_NEG, nc = c && (in->o[s + 2].flags & SASS_F_NEG);
    /* ~c (ptxas's 64-bit negation: IMAD.X d, RZ, RZ, ~hi, carry, the high
     * word of 0 - x) is the addend's bitwise not, over the pair for WIDE/HI */
    bool tc = c && (in->o[s + 2].flags & SASS_F_NOT);
    if (!wide && !hi && !x && !na && !nb && !nc && !tc && nout == 0 && c) { /* the common a * b + c */
        if (in->o[s + 1].kind == SASS_K_IMM || in->o[s + 1].kind == SASS_K_UR) {
            uint32_t bv = b[__builtin_ctz(o->exec)]; /* the same in every lane */
            MSASS_LANES(o, i, d[i] = a[i] * bv + c[i]);
        } else {
            MSASS_LANES(o, i, d[i] = a[i] * b[i] + c[i]);
        }
        return 0;
    }
    if (wide && !hi && !x && !na && !nb && !nc && !tc && nout == 0 && c) { /* the common address a * b + {c+1:c} */
        MSASS_LANES(o, i, {
            uint64_t prod = uns ? (uint64_t)a[i] * b[i] : (uint64_t)((int64_t)(int32_t)a[i] * (int32_t)b[i]);
            uint64_t r = prod + ((uint64_t)ch[i] << 32 | c[i]);
            d[i] = (uint32_t)r;
            dh[i] = (uint32_t)(r >> 32);
        });
        return 0;
    }
    LANES(o, i) {
        uint64_t prod;
        uint32_t av = na ? (uint32_t)-a[i] : a[i], bv = nb ? (uint32_t)-b[i] : b[i];
        if (uns) prod = (uint64_t)av * bv;
        else prod = (uint64_t)((int64_t)(int32_t)av * (int32_t)bv);
        uint64_t carry = x ? (cin >> i) & 1 : 0;
        if (wide) {
            uint64_t cv = c ? ((uint64_t)ch[i] << 32 | c[i]) : 0;
            if (nc) cv = (uint64_t)-cv;
            if (tc) cv = ~cv;
            unsigned __int128 r = (unsigned __int128)prod + cv + carry;
            d[i] = (uint32_t)r;
            dh[i] = (uint32_t)(r >> 32);
            cout |= (uint32_t)((r >> 64) != 0) << i;
        } else if (hi) {
            uint64_t cv = c ? ((uint64_t)ch[i] << 32 | c[i]) : 0;
            if (nc) cv = (uint64_t)-cv;
            if (tc) cv = ~cv;
            unsigned __int128 r = (unsigned __int128)prod + cv + carry;
            if (!uns && (int64_t)prod < 0) r -= (unsigned __int128)1 << 64; /* the signed product's 128-bit sum */
            d[i] = (uint32_t)(r >> 32);
            cout |= (uint32_t)((r >> 64) != 0) << i;
        } else {
            uint64_t cv = c ? (nc ? (uint32_t)-c[i] : tc ? ~c[i] : c[i]) : 0;
            uint64_t r = (prod & 0xffffffffu) + cv + carry;
            d[i] = (uint32_t)r;
            cout |= (uint32_t)((r >> 32) != 0) << i;
        }
    }
    if (nout >= 1) msass_pred_set(o, 1, cout);
    return 0;
}

/* LEA d, [P,] a, b, shift [, P]; LEA.HI d, [P,] a, b, c, shift [, P];
 * LEA.HI.SX32 d, a, b, shift [, P] (c: a's sign) */
static int lea(msass_op *o)
{
    const sass_insn *in = o->in;
    unsigned s = after_preds(in, 1), nout = s - 1;
    bool hi = sass_has(in, SASS_M_HI), sx = sass_has(in, SASS_M_SX32), x = sass_has(in, SASS_M_X);
    unsigned nsrc = hi && !sx ? 4 : 3;
    if (in->nops < s + nsrc) return -1;
    const uint32_t *a = msass_src_row(o, s, 0), *b = msass_src_row(o, s + 1, 1);
    const uint32_t *c = hi && !sx ? msass_src_row(o, s + 2, 2) : NULL;
    const uint32_t *sh = msass_src_row(o, s + nsrc - 1, 3);
    uint32_t cin = 0;
    for (unsigned k = s + nsrc; k < in->nops; k++)
        if (is_pred(&in->o[k])) cin = msass_pred(o, k);
    uint32_t *d = msass_dst(o, 0), cout = 0;
    MSASS_LANES(o, i, {
        uint32_t p = 0, av = ineg(&in->o[s], a[i], &p);
        av += p;
        uint32_t n = sh[i] & 31, part;
        if (hi) {
            uint32_t cv = sx ? (uint32_t)((int32_t)av >> 31) : c[i];
            uint64_t v = (uint64_t)cv << 32 | av;
            part = (uint32_t)((v << n) >> 32);
        } else {
            part = av << n;
        }
        uint32_t pb = 0;
        uint64_t bv = ineg(&in->o[s + 1], b[i], &pb);
        uint64_t r = (uint64_t)part + bv + pb + (x ? (cin >> i) & 1 : 0);
        d[i] = (uint32_t)r;
        cout |= (uint32_t)((r >> 32) != 0) << i;
    });
    if (nout >= 1) msass_pred_set(o, 1, cout);
    return 0;
}

/* LOP3.LUT [Pd,] d, a, b, c, lut, Pin: the predicate output comes first */
static int lop3(msass_op *o)
{
    const sass_insn *in = o->in;
    unsigned dk = is_pred(&in->o[0]) ? 1 : 0, s = dk + 1, nout = dk;
    if (in->nops < s + 4) return -1;
    const uint32_t *a = msass_src_row(o, s, 0), *b = msass_src_row(o, s + 1, 1), *c = msass_src_row(o, s + 2, 2);
    uint32_t lut = (uint32_t)in->o[s + 3].imm & 0xff;
    uint32_t na = in->o[s].flags & SASS_F_NOT ? ~0u : 0, nb = in->o[s + 1].flags & SASS_F_NOT ? ~0u : 0,
             nc = in->o[s + 2].flags & SASS_F_NOT ? ~0u : 0;
    uint32_t *d = msass_dst(o, dk), nz = 0;
    /* the table's four functions of c, each (c & m) ^ x, chosen once: then
     * every lane is Shannon's expansion on a and b without a branch */
    uint32_t m[4], x[4];
    for (int j = 0; j < 4; j++) {
        uint32_t v = (lut >> (2 * j)) & 3; /* j = a << 1 | b */
        m[j] = v == 1 || v == 2 ? ~0u : 0;
        x[j] = v == 1 || v == 3 ? ~0u : 0;
    }
#define LOP3_LANE(i)                                                                                           \
    uint32_t av = a[i] ^ na, bv = b[i] ^ nb, cv = c[i] ^ nc;                                                   \
    uint32_t g0 = (cv & m[0]) ^ x[0], g1 = (cv & m[1]) ^ x[1], g2 = (cv & m[2]) ^ x[2], g3 = (cv & m[3]) ^ x[3]; \
    uint32_t f0 = (bv & g1) | (~bv & g0), f1 = (bv & g3) | (~bv & g2);                                         \
    uint32_t r = (av & f1) | (~av & f0);                                                                       \
    d[i] = r
    if (!nout) { /* no predicate output: lanes without a mask to build */
        MSASS_LANES(o, i, { LOP3_LANE(i); });
        return 0;
    }
    MSASS_LANES(o, i, {
        LOP3_LANE(i);
        nz |= (uint32_t)(r != 0) << i;
    });
#undef LOP3_LANE
    if (nout) msass_pred_set(o, 0, nz);
    return 0;
}

static int plop3(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 7) return -1;
    uint32_t a = msass_pred(o, 2), b = msass_pred(o, 3), c = msass_pred(o, 4);
    msass_pred_set(o, 0, lut3((uint32_t)in->o[5].imm & 0xff, a, b, c));
    msass_pred_set(o, 1, lut3((uint32_t)in->o[6].imm & 0xff, a, b, c));
    return 0;
}

/* SHF.{L,R}.{U32,S32,U64,S64}[.HI][.W] d, a, shift, c: the funnel {c:a} */
static int shf(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 4) return -1;
    bool left = sass_has(in, SASS_M_L), hi = sass_has(in, SASS_M_HI), wrap = sass_has(in, SASS_M_W);
    bool sgn = sass_has(in, SASS_M_S32) || sass_has(in, SASS_M_S64);
    bool b64 = sass_has(in, SASS_M_U64) || sass_has(in, SASS_M_S64);
    const uint32_t *a = msass_src_row(o, 1, 0), *sh = msass_src_row(o, 2, 1), *c = msass_src_row(o, 3, 2);
    uint32_t *d = msass_dst(o, 0);
    uint32_t lim = b64 ? 64 : 32;
    MSASS_LANES(o, i, {
        uint32_t n = wrap ? sh[i] & (lim - 1) : BASE_MIN(sh[i], lim);
        uint64_t v = (uint64_t)c[i] << 32 | a[i];
        uint64_t r;
        if (left) {
            unsigned __int128 w = (unsigned __int128)v << n;
            r = (uint64_t)w;
        } else if (sgn) {
            r = n >= 64 ? (uint64_t)((int64_t)v >> 63) : (uint64_t)((int64_t)v >> n);
        } else {
            r = n >= 64 ? 0 : v >> n;
        }
        if (!b64 && !left && !hi) r = n >= 64 ? 0 : r; /* the low word of the funnel shifted right */
        d[i] = hi ? (uint32_t)(r >> 32) : (uint32_t)r;
    });
    return 0;
}

static int prmt(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 4) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *sel = msass_src_row(o, 2, 1), *b = msass_src_row(o, 3, 2);
    uint32_t *d = msass_dst(o, 0);
    if (in->ntypes) return -1; /* PRMT with a mode: not implemented */
    if (in->o[2].kind == SASS_K_IMM) { /* ptxas's usual selectors, as one operation each */
        switch (in->o[2].imm & 0xffff) {
        case 0x3210: LANES(o, i) d[i] = a[i]; return 0;
        case 0x7654: LANES(o, i) d[i] = b[i]; return 0;
        case 0x9910: LANES(o, i) d[i] = (uint32_t)(int32_t)(int16_t)a[i]; return 0;           /* sign-extend a's half */
        case 0x8880: LANES(o, i) d[i] = (uint32_t)(int32_t)(int8_t)a[i]; return 0;            /* sign-extend a's byte */
        case 0x5410: LANES(o, i) d[i] = (a[i] & 0xffff) | b[i] << 16; return 0;                /* the low halves */
        case 0x7632: LANES(o, i) d[i] = a[i] >> 16 | (b[i] & 0xffff0000u); return 0;          /* the high halves */
        case 0x7710: if (in->o[3].kind == SASS_K_R && in->o[3].reg == 255) {                   /* a's half, b = RZ */
                LANES(o, i) d[i] = a[i] & 0xffff;
                return 0;
            }
            break;
        default: break;
        }
    }
    LANES(o, i) {
        uint64_t v = (uint64_t)b[i] << 32 | a[i];
        uint32_t r = 0, s = sel[i];
        for (int k = 0; k < 4; k++) {
            uint32_t q = (s >> (4 * k)) & 15;
            uint32_t byte = (uint32_t)(v >> (8 * (q & 7))) & 0xff;
            if (q & 8) byte = byte & 0x80 ? 0xff : 0; /* sign replicate */
            r |= byte << (8 * k);
        }
        d[i] = r;
    }
    return 0;
}

static int isetp(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 5) return -1;
    int cmp = cmp_of(in);
    if (cmp < 0) return -1;
    bool uns = sass_has(in, SASS_M_U32), ex = sass_has(in, SASS_M_EX);
    const uint32_t *a = msass_src_row(o, 2, 0), *b = msass_src_row(o, 3, 1);
    uint32_t c = msass_pred(o, 4), low = ex && in->nops >= 6 ? msass_pred(o, 5) : 0, r = 0;
    LANES(o, i) {
        bool lt, eq = a[i] == b[i];
        if (uns) lt = a[i] < b[i];
        else lt = (int32_t)a[i] < (int32_t)b[i];
        bool gt = !lt && !eq, v, lo = (low >> i) & 1;
        switch (cmp) {
        case SASS_M_LT: v = lt || (ex && eq && lo); break;
        case SASS_M_LE: v = ex ? lt || (eq && lo) : lt || eq; break;
        case SASS_M_GT: v = gt || (ex && eq && lo); break;
        case SASS_M_GE: v = ex ? gt || (eq && lo) : gt || eq; break;
        case SASS_M_EQ: v = ex ? eq && lo : eq; break;
        case SASS_M_NE: v = ex ? !eq || lo : !eq; break;
        case SASS_M_T: v = true; break;
        default: v = false; break;
        }
        r |= (uint32_t)v << i;
    }
    msass_pred_set(o, 0, bop(in, r, c));
    msass_pred_set(o, 1, bop(in, ~r, c));
    return 0;
}

/* DSETP.MAX/.MIN P, Q, a, b, Pc: ptxas's max.f64/min.f64 on sm_90 (then
 * FSEL/SEL pick a's words where P, b's elsewhere, and where Q set b's quiet
 * bit): P whether the result is a, Q whether both are NaN (PTX ISA: a NaN
 * operand gives the other; two NaNs give a NaN). Read off ptxas's
 * sequences; not documented by NVIDIA. */
static int dsetp_minmax(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 5) return -1;
    bool mn = sass_has(in, SASS_M_MIN);
    const uint32_t *a = msass_src_row(o, 2, 0), *b = msass_src_row(o, 3, 1);
    const uint32_t *ah = msass_src_hi(o, 2, 2), *bh = msass_src_hi(o, 3, 3);
    uint32_t c = msass_pred(o, 4), pa = 0, pn = 0;
    /* an operand's |..| and - are on its sign bit (ptxas's max(x, -c):
     * DSETP.MAX P, Q, R, -UR, then FSEL of R's or -UR's high word; seed 9076) */
    uint64_t fa = in->o[2].flags, fb = in->o[3].flags, S = 1ull << 63;
    LANES(o, i) {
        uint64_t xa = (uint64_t)ah[i] << 32 | a[i], xb = (uint64_t)bh[i] << 32 | b[i];
        if (fa & SASS_F_ABS) xa &= ~S;
        if (fa & SASS_F_NEG) xa ^= S;
        if (fb & SASS_F_ABS) xb &= ~S;
        if (fb & SASS_F_NEG) xb ^= S;
        double x = f64(xa), y = f64(xb), r = mn ? fmin(x, y) : fmax(x, y);
        pa |= (uint32_t)(!isnan(x) && bits64(r) == xa) << i;
        pn |= (uint32_t)(isnan(x) && isnan(y)) << i;
    }
    msass_pred_set(o, 0, bop(in, pa, c));
    msass_pred_set(o, 1, bop(in, pn, c));
    return 0;
}

static int fsetp(msass_op *o, bool dbl, bool set)
{
    const sass_insn *in = o->in;
    unsigned s = set ? 1 : 2;
    if (in->nops < s + 3) return -1;
    if (dbl && !set && (sass_has(in, SASS_M_MIN) || sass_has(in, SASS_M_MAX))) return dsetp_minmax(o);
    int cmp = cmp_of(in);
    if (cmp < 0) return -1;
    const uint32_t *a = msass_src_row(o, s, 0), *b = msass_src_row(o, s + 1, 1);
    const uint32_t *ah = dbl ? msass_src_hi(o, s, 2) : NULL, *bh = dbl ? msass_src_hi(o, s + 1, 3) : NULL;
    uint32_t c = msass_pred(o, s + 2), r = 0;
    LANES(o, i) {
        double x, y;
        if (dbl) {
            x = f64((uint64_t)ah[i] << 32 | a[i]);
            y = f64((uint64_t)bh[i] << 32 | b[i]);
            if (in->o[s].flags & SASS_F_ABS) x = fabs(x);
            if (in->o[s].flags & SASS_F_NEG) x = -x;
            if (in->o[s + 1].flags & SASS_F_ABS) y = fabs(y);
            if (in->o[s + 1].flags & SASS_F_NEG) y = -y;
        } else {
            x = fin(o, s, a[i]);
            y = fin(o, s + 1, b[i]);
        }
        r |= (uint32_t)fcmp(cmp, x, y) << i;
    }
    if (set) { /* FSET[.BF] d, a, b, Pc: 1.0 / 0xffffffff or 0 */
        uint32_t v = bop(in, r, c), *d = msass_dst(o, 0);
        bool bf = sass_has(in, SASS_M_BF);
        LANES(o, i) d[i] = (v >> i) & 1 ? (bf ? 0x3f800000u : 0xffffffffu) : 0;
        return 0;
    }
    msass_pred_set(o, 0, bop(in, r, c));
    msass_pred_set(o, 1, bop(in, ~r, c));
    return 0;
}

/* min or max of the two signed or unsigned 16-bit halves of x and y,
 * each half on its own (PTX ISA min/max .s16x2/.u16x2, sm_90: what
 * VIMNMX.S16x2/.U16x2 runs); relu: a negative half becomes 0 (min.relu,
 * max.relu, signed only) */
static uint32_t minmax16x2(uint32_t x, uint32_t y, bool mn, bool uns, bool relu)
{
    uint32_t r = 0;
    for (int h = 0; h < 32; h += 16) {
        uint32_t a = x >> h & 0xffff, b = y >> h & 0xffff, v;
        if (uns) v = mn ? BASE_MIN(a, b) : BASE_MAX(a, b);
        else {
            int32_t sa = (int16_t)a, sb = (int16_t)b, sv = mn ? BASE_MIN(sa, sb) : BASE_MAX(sa, sb);
            if (relu && sv < 0) sv = 0;
            v = (uint32_t)sv & 0xffff;
        }
        r |= v << h;
    }
    return r;
}

static int minmax(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    unsigned nsrc = op == SASS_OP_VIMNMX3 || op == SASS_OP_VIADDMNMX ? 3 : 2;
    if (in->nops < 1 + nsrc + 1) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1), *c = nsrc == 3 ? msass_src_row(o, 3, 2) : NULL;
    uint32_t pmin = msass_pred(o, 1 + nsrc), *d = msass_dst(o, 0);
    bool x2 = sass_has(in, SASS_M_S16x2) || sass_has(in, SASS_M_U16x2);
    bool uns = sass_has(in, SASS_M_U32) || sass_has(in, SASS_M_U16x2), relu = sass_has(in, SASS_M_RELU);
    bool fl = op == SASS_OP_FMNMX;
    /* packed halves: VIMNMX and VIMNMX3 (the PTX ISA's three-input min/max:
     * min(min(a, b), c) per half) */
    if (x2 && op != SASS_OP_VIMNMX && op != SASS_OP_VIMNMX3) return -1;
    LANES(o, i) {
        bool mn = (pmin >> i) & 1;
        if (fl) {
            float x = fin(o, 1, a[i]), y = fin(o, 2, b[i]);
            float r = mn ? fminf(x, y) : fmaxf(x, y);
            d[i] = fout(o, r);
            continue;
        }
        uint32_t x = a[i], y = b[i], p = 0;
        if (x2) {
            d[i] = op == SASS_OP_VIMNMX3 ? minmax16x2(minmax16x2(x, y, mn, uns, false), c[i], mn, uns, relu)
                                         : minmax16x2(x, y, mn, uns, relu);
            continue;
        }
        if (op == SASS_OP_VIADDMNMX) { /* min/max(a + b, c) */
            uint32_t xa = ineg(&in->o[1], a[i], &p), xb = ineg(&in->o[2], b[i], &p);
            x = xa + xb + p;
            y = c[i];
        }
        uint32_t r;
        if (uns) r = mn ? BASE_MIN(x, y) : BASE_MAX(x, y);
        else r = (uint32_t)(mn ? BASE_MIN((int32_t)x, (int32_t)y) : BASE_MAX((int32_t)x, (int32_t)y));
        if (op == SASS_OP_VIMNMX3) {
            if (uns) r = mn ? BASE_MIN(r, c[i]) : BASE_MAX(r, c[i]);
            else r = (uint32_t)(mn ? BASE_MIN((int32_t)r, (int32_t)c[i]) : BASE_MAX((int32_t)r, (int32_t)c[i]));
        }
        if (relu && !uns && (int32_t)r < 0) r = 0; /* PTX min.relu/max.relu .s32: a negative result is 0 */
        d[i] = r;
    }
    return 0;
}

static int unary_int(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    unsigned s = in->nops - 1;
    if (in->nops < 2) return -1;
    if (op == SASS_OP_BMSK || op == SASS_OP_UBMSK || op == SASS_OP_SGXT || op == SASS_OP_USGXT) s = 1;
    const uint32_t *a = msass_src_row(o, s, 0), *b = in->nops > 2 ? msass_src_row(o, 2, 1) : NULL;
    uint32_t *d = msass_dst(o, 0);
    bool inv = in->o[s].flags & SASS_F_NOT;
    LANES(o, i) {
        uint32_t v = inv ? ~a[i] : a[i], r = 0;
        switch (op) {
        case SASS_OP_POPC: case SASS_OP_UPOPC: r = (uint32_t)__builtin_popcount(v); break;
        case SASS_OP_BREV: case SASS_OP_UBREV:
            for (int k = 0; k < 32; k++) r |= ((v >> k) & 1) << (31 - k);
            break;
        case SASS_OP_FLO: case SASS_OP_UFLO: {
            bool sh = sass_has(in, SASS_M_SH);
            if (!sass_has(in, SASS_M_U32) && (int32_t)v < 0) v = ~v; /* signed: the highest bit unlike the sign */
            r = v ? 31u - (uint32_t)__builtin_clz(v) : 0xffffffffu;
            if (sh && v) r = 31 - r;
            break;
        }
        case SASS_OP_IABS: r = (int32_t)v < 0 ? (uint32_t)-v : v; break;
        case SASS_OP_BMSK: case SASS_OP_UBMSK: { /* b bits from bit a */
            uint32_t pos = v & 31, n = b ? b[i] : 0;
            if (sass_has(in, SASS_M_W)) n &= 31;
            uint64_t m = n >= 32 ? 0xffffffffull : ((1ull << n) - 1);
            r = (uint32_t)(m << pos);
            break;
        }
        case SASS_OP_SGXT: case SASS_OP_USGXT: { /* the low b bits of a, sign- or zero-extended */
            uint32_t n = b ? BASE_MIN(b[i], 32u) : 32;
            if (n >= 32) r = v;
            else if (!n) r = 0;
            else if (sass_has(in, SASS_M_U32)) r = v & ((1u << n) - 1);
            else r = (uint32_t)((int32_t)(v << (32 - n)) >> (32 - n));
            break;
        }
        default: return -1;
        }
        d[i] = r;
    }
    return 0;
}

/* ** float ops */
/* the common FFMA/FADD/FMUL: round to nearest, no modifiers; the FMA is
 * the hardware's where the host has one (as exact as fmaf, and inline) */
static inline uint32_t canon(float f) { return f != f ? 0x7fffffffu : bits32(f); }

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void ffma_lanes_hw(uint32_t exec, const uint32_t *a, const uint32_t *b,
                                                         const uint32_t *c, uint32_t *d)
{
    for (uint32_t m = exec; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(m);
        d[i] = canon(__builtin_fmaf(f32(a[i]), f32(b[i]), f32(c[i])));
    }
}
#endif

static void ffma_lanes(uint32_t exec, const uint32_t *a, const uint32_t *b, const uint32_t *c, uint32_t *d)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static _Atomic int hw = -1; /* workers of several launches ask at once */
    int h = atomic_load_explicit(&hw, memory_order_relaxed);
    if (h < 0) atomic_store_explicit(&hw, h = __builtin_cpu_supports("fma") ? 1 : 0, memory_order_relaxed);
    if (h) {
        ffma_lanes_hw(exec, a, b, c, d);
        return;
    }
#endif
    for (uint32_t m = exec; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(m);
        d[i] = canon(fmaf(f32(a[i]), f32(b[i]), f32(c[i])));
    }
}

static int farith(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    unsigned n = op == SASS_OP_FFMA ? 3 : 2;
    if (in->nops < 1 + n) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1), *c = n == 3 ? msass_src_row(o, 3, 2) : NULL;
    uint32_t *d = msass_dst(o, 0);
    int rm = rounding(in);
    uint8_t flags = (uint8_t)(in->o[1].flags | in->o[2].flags | (n == 3 ? in->o[3].flags : 0));
    if (rm == FE_TONEAREST && !(flags & (SASS_F_NEG | SASS_F_ABS)) && !sass_has(in, SASS_M_FTZ) &&
        !sass_has(in, SASS_M_SAT) && !sass_has(in, SASS_M_D2) && !sass_has(in, SASS_M_D4)) {
        if (op == SASS_OP_FFMA) ffma_lanes(o->exec, a, b, c, d);
        else if (op == SASS_OP_FADD) MSASS_LANES(o, i, d[i] = canon(f32(a[i]) + f32(b[i])));
        else MSASS_LANES(o, i, d[i] = canon(f32(a[i]) * f32(b[i])));
        return 0;
    }
    if (rm != FE_TONEAREST) fesetround(rm);
    LANES(o, i) {
        volatile float x = fin(o, 1, a[i]), y = fin(o, 2, b[i]);
        volatile float r;
        if (op == SASS_OP_FADD) r = x + y;
        else if (op == SASS_OP_FMUL) {
            r = x * y;
            if (sass_has(in, SASS_M_D2)) r = r * 0.5f;
            if (sass_has(in, SASS_M_D4)) r = r * 0.25f;
        } else {
            volatile float z = fin(o, 3, c[i]);
            r = fmaf(x, y, z);
        }
        d[i] = fout(o, r);
    }
    if (rm != FE_TONEAREST) fesetround(FE_TONEAREST);
    return 0;
}

static int mufu(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0);
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) {
        if (sass_has(in, SASS_M_RCP64H) || sass_has(in, SASS_M_RSQ64H)) {
            double x = f64((uint64_t)a[i] << 32);
            if (in->o[1].flags & SASS_F_ABS) x = fabs(x);
            if (in->o[1].flags & SASS_F_NEG) x = -x;
            double r = sass_has(in, SASS_M_RCP64H) ? 1.0 / x : 1.0 / sqrt(x);
            d[i] = (uint32_t)(bits64(r) >> 32);
            continue;
        }
        double x = fin(o, 1, a[i]), r;
        if (sass_has(in, SASS_M_EX2)) r = exp2(x);
        else if (sass_has(in, SASS_M_LG2)) r = log2(x);
        else if (sass_has(in, SASS_M_RCP)) r = 1.0 / x;
        else if (sass_has(in, SASS_M_RSQ)) r = 1.0 / sqrt(x);
        else if (sass_has(in, SASS_M_SQRT)) r = sqrt(x);
        else if (sass_has(in, SASS_M_SIN)) r = isinf(x) ? NAN : sin(fmod(x, 1.0) * 2 * M_PI);
        else if (sass_has(in, SASS_M_COS)) r = isinf(x) ? NAN : cos(fmod(x, 1.0) * 2 * M_PI);
        else if (sass_has(in, SASS_M_TANH)) r = tanh(x);
        else return -1;
        d[i] = fout(o, (float)r);
    }
    return 0;
}

/* FCHK P, a, b: whether a / b needs the slow path (ptxas's division checks
 * this before its Newton iteration): anything but two normal numbers of
 * moderate exponents goes there, which is always correct. A zero numerator
 * too: the fast path's first quotient is FFMA q, r, a, RZ, whose +0 addend
 * makes -0 / b a +0 (difftest seeds 5045, 5046, 5053), while the slow path
 * keeps the sign IEEE division gives it (NVIDIA does not document FCHK's
 * rule) */
static int fchk(msass_op *o)
{
    if (o->in->nops < 3) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1);
    uint32_t r = 0;
    LANES(o, i) {
        int ea = (int)((a[i] >> 23) & 0xff), eb = (int)((b[i] >> 23) & 0xff);
        bool az = (a[i] & 0x7fffffff) == 0;
        bool slow = eb == 0 || eb == 0xff || ea == 0xff || ea == 0 || eb < 4 || eb > 250 ||
                    (!az && (ea - eb > 120 || ea - eb < -120 || ea > 250 || ea < 4));
        r |= (uint32_t)slow << i;
    }
    msass_pred_set(o, 0, r);
    return 0;
}

static double din(msass_op *o, unsigned k, uint32_t lo, uint32_t hi);

static int frnd(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2) return -1;
    bool dbl = sass_has(in, SASS_M_F64);
    const uint32_t *a = msass_src_row(o, 1, 0), *ah = dbl ? msass_src_hi(o, 1, 1) : NULL;
    uint32_t *d = msass_dst(o, 0), *dh = dbl ? msass_dst_hi(o, 0) : NULL;
    int rm = rounding(in);
    LANES(o, i) {
        double x = dbl ? din(o, 1, a[i], ah[i]) : fin(o, 1, a[i]), r; /* ptxas folds a negation: FRND.F64.TRUNC R, -R */
        r = rm == FE_TOWARDZERO ? trunc(x) : rm == FE_DOWNWARD ? floor(x) : rm == FE_UPWARD ? ceil(x) : nearbyint(x);
        if (dbl) {
            uint64_t b = bits64(r);
            d[i] = (uint32_t)b;
            dh[i] = (uint32_t)(b >> 32);
        } else {
            d[i] = fout(o, (float)r);
        }
    }
    return 0;
}

/* ** double */
static double din(msass_op *o, unsigned k, uint32_t lo, uint32_t hi)
{
    double v = f64((uint64_t)hi << 32 | lo);
    if (o->in->o[k].flags & SASS_F_ABS) v = fabs(v);
    if (o->in->o[k].flags & SASS_F_NEG) v = -v;
    return v;
}

static int darith(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    unsigned n = op == SASS_OP_DFMA ? 3 : 2;
    if (op == SASS_OP_DMNMX) n = 2;
    if (in->nops < 1 + n) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *ah = msass_src_hi(o, 1, 1), *b = msass_src_row(o, 2, 2),
                   *bh = msass_src_hi(o, 2, 3);
    const uint32_t *c = n == 3 ? msass_src_row(o, 3, 4) : NULL, *ch = n == 3 ? msass_src_hi(o, 3, 5) : NULL;
    uint32_t pmin = op == SASS_OP_DMNMX && in->nops > 3 ? msass_pred(o, 3) : 0;
    uint32_t *d = msass_dst(o, 0), *dh = msass_dst_hi(o, 0);
    int rm = rounding(in);
    if (rm != FE_TONEAREST) fesetround(rm);
    LANES(o, i) {
        volatile double x = din(o, 1, a[i], ah[i]), y = din(o, 2, b[i], bh[i]), r;
        if (op == SASS_OP_DADD) r = x + y;
        else if (op == SASS_OP_DMUL) r = x * y;
        else if (op == SASS_OP_DMNMX) r = (pmin >> i) & 1 ? fmin(x, y) : fmax(x, y);
        else {
            volatile double z = din(o, 3, c[i], ch[i]);
            r = fma(x, y, z);
        }
        uint64_t bb = isnan(r) ? 0xfff8000000000000ull : bits64(r);
        d[i] = (uint32_t)bb;
        dh[i] = (uint32_t)(bb >> 32);
    }
    if (rm != FE_TONEAREST) fesetround(FE_TONEAREST);
    return 0;
}

/* ** paired halves */
static void halves(msass_op *o, unsigned k, uint32_t v, bool bf, double h[2])
{
    const sass_opnd *x = &o->in->o[k];
    uint16_t lo = (uint16_t)v, hi = (uint16_t)(v >> 16);
    if (x->kind == SASS_K_R || x->kind == SASS_K_UR || x->kind == SASS_K_CBANK) {
        if (x->sel == SASS_SEL_H0_H0) hi = lo;
        else if (x->sel == SASS_SEL_H1_H1) lo = hi;
        else if (x->sel == SASS_SEL_H1_H0) {
            uint16_t t = lo;
            lo = hi;
            hi = t;
        }
    }
    if (x->sel == SASS_SEL_F32) { /* a single float operand */
        h[0] = h[1] = f32(v);
    } else {
        h[0] = bf ? from_bf16(lo) : from_f16(lo);
        h[1] = bf ? from_bf16(hi) : from_f16(hi);
    }
    for (int j = 0; j < 2; j++) {
        if (x->flags & SASS_F_ABS) h[j] = fabs(h[j]);
        if (x->flags & SASS_F_NEG) h[j] = -h[j];
    }
}

static int harith(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    unsigned n = op == SASS_OP_HFMA2 ? 3 : 2;
    if (in->nops < 1 + n) return -1;
    bool bf = sass_has(in, SASS_M_BF16_V2) || sass_has(in, SASS_M_BF16), out32 = sass_has(in, SASS_M_F32);
    bool sat = sass_has(in, SASS_M_SAT);
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1), *c = n == 3 ? msass_src_row(o, 3, 2) : NULL;
    uint32_t pmin = op == SASS_OP_HMNMX2 && in->nops > 3 ? msass_pred(o, 3) : 0;
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) {
        double x[2], y[2], z[2] = {0, 0}, r[2];
        halves(o, 1, a[i], bf, x);
        halves(o, 2, b[i], bf, y);
        if (c) halves(o, 3, c[i], bf, z);
        for (int j = 0; j < 2; j++) {
            if (op == SASS_OP_HADD2) r[j] = x[j] + y[j];
            else if (op == SASS_OP_HMUL2) r[j] = x[j] * y[j];
            else if (op == SASS_OP_HFMA2) r[j] = fma(x[j], y[j], z[j]);
            else r[j] = (pmin >> i) & 1 ? fmin(x[j], y[j]) : fmax(x[j], y[j]);
            if (sat) r[j] = isnan(r[j]) ? 0 : r[j] < 0 ? 0 : r[j] > 1 ? 1 : r[j];
        }
        if (out32) {
            float f = (float)r[0];
            d[i] = isnan(f) ? 0x7fffffffu : bits32(f);
        } else if (bf) {
            d[i] = (uint32_t)to_bf16((float)r[0]) | (uint32_t)to_bf16((float)r[1]) << 16;
        } else {
            uint16_t l = to_f16(r[0]), h = to_f16(r[1]);
            if (isnan(r[0])) l = 0x7fff;
            if (isnan(r[1])) h = 0x7fff;
            d[i] = (uint32_t)l | (uint32_t)h << 16;
        }
    }
    return 0;
}

static int hsetp2(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 5) return -1;
    int cmp = cmp_of(in);
    if (cmp < 0) return -1;
    bool bf = sass_has(in, SASS_M_BF16_V2);
    const uint32_t *a = msass_src_row(o, 2, 0), *b = msass_src_row(o, 3, 1);
    uint32_t c = msass_pred(o, 4), r0 = 0, r1 = 0;
    LANES(o, i) {
        double x[2], y[2];
        halves(o, 2, a[i], bf, x);
        halves(o, 3, b[i], bf, y);
        r0 |= (uint32_t)fcmp(cmp, x[0], y[0]) << i;
        r1 |= (uint32_t)fcmp(cmp, x[1], y[1]) << i;
    }
    msass_pred_set(o, 0, bop(in, r0, c));
    msass_pred_set(o, 1, bop(in, r1, c));
    return 0;
}

/* ** conversions */
static bool is_float_type(int t) { return t == SASS_M_F16 || t == SASS_M_BF16 || t == SASS_M_F32 || t == SASS_M_F64; }

static int int_bits(int t, bool *sgn)
{
    switch (t) {
    case SASS_M_S8: *sgn = true; return 8;
    case SASS_M_U8: *sgn = false; return 8;
    case SASS_M_S16: *sgn = true; return 16;
    case SASS_M_U16: *sgn = false; return 16;
    case SASS_M_U32: *sgn = false; return 32;
    case SASS_M_S64: *sgn = true; return 64;
    case SASS_M_U64: *sgn = false; return 64;
    default: *sgn = true; return 32;
    }
}

/* the types of a conversion: (dst, src) from the type modifiers in order,
 * with the default for the side not named */
static void conv_types(const sass_insn *in, int dflt_dst, int dflt_src, bool dst_float, int *dst, int *src)
{
    *dst = dflt_dst;
    *src = dflt_src;
    if (in->ntypes >= 2) {
        *dst = in->types[0];
        *src = in->types[1];
    } else if (in->ntypes == 1) {
        if (is_float_type(in->types[0]) == dst_float) *dst = in->types[0];
        else *src = in->types[0];
    }
}

static double read_float(int t, uint32_t lo, uint32_t hi, const sass_opnd *x)
{
    double v;
    if (t == SASS_M_F64) v = f64((uint64_t)hi << 32 | lo);
    else if (t == SASS_M_F16) v = from_f16((uint16_t)(x->sel == SASS_SEL_H1 ? lo >> 16 : lo));
    else if (t == SASS_M_BF16) v = from_bf16((uint16_t)(x->sel == SASS_SEL_H1 ? lo >> 16 : lo));
    else v = f32(lo);
    if (x->flags & SASS_F_ABS) v = fabs(v);
    if (x->flags & SASS_F_NEG) v = -v;
    return v;
}

static double round_mode(double v, int rm)
{
    return rm == FE_TOWARDZERO ? trunc(v) : rm == FE_DOWNWARD ? floor(v) : rm == FE_UPWARD ? ceil(v) : nearbyint(v);
}

static int convert(msass_op *o)
{
    const sass_insn *in = o->in;
    int op = in->op;
    if (in->nops < 2) return -1;
    unsigned s = in->nops - 1;
    int dt, st, rm = rounding(in);
    if (op == SASS_OP_I2F || op == SASS_OP_I2FP) conv_types(in, SASS_M_F32, SASS_M_S32, true, &dt, &st);
    else if (op == SASS_OP_F2I || op == SASS_OP_F2IP) conv_types(in, SASS_M_S32, SASS_M_F32, false, &dt, &st);
    else if (op == SASS_OP_I2I || op == SASS_OP_I2IP) conv_types(in, SASS_M_S32, SASS_M_S32, false, &dt, &st);
    else { /* F2F */
        dt = in->ntypes >= 1 ? in->types[0] : SASS_M_F32;
        st = in->ntypes >= 2 ? in->types[1] : dt;
    }
    bool src64 = st == SASS_M_S64 || st == SASS_M_U64 || st == SASS_M_F64;
    bool dst64 = dt == SASS_M_S64 || dt == SASS_M_U64 || dt == SASS_M_F64;
    const uint32_t *a = msass_src_row(o, s, 0), *ah = src64 ? msass_src_hi(o, s, 1) : NULL;
    uint32_t *d = msass_dst(o, 0), *dh = dst64 ? msass_dst_hi(o, 0) : NULL;
    const sass_opnd *x = &in->o[s];
    if (op == SASS_OP_I2F || op == SASS_OP_I2FP) {
        bool sgn;
        int nb = int_bits(st, &sgn);
        if (rm != FE_TONEAREST) fesetround(rm);
        LANES(o, i) {
            uint64_t raw = src64 ? ((uint64_t)ah[i] << 32 | a[i]) : a[i];
            if (x->sel >= SASS_SEL_B0 && x->sel <= SASS_SEL_B3) raw = (raw >> (8 * (x->sel - SASS_SEL_B0))) & 0xff;
            if (x->sel == SASS_SEL_H1) raw >>= 16;
            volatile double dv;
            volatile float fv;
            if (nb < 64) raw &= (1ull << nb) - 1;
            if (sgn && nb < 64 && (raw >> (nb - 1)) & 1) raw |= ~0ull << nb;
            if (dt == SASS_M_F64) {
                dv = sgn ? (double)(int64_t)raw : (double)raw;
                uint64_t b = bits64(dv);
                d[i] = (uint32_t)b;
                dh[i] = (uint32_t)(b >> 32);
            } else {
                fv = sgn ? (float)(int64_t)raw : (float)raw;
                if (dt == SASS_M_F16) d[i] = to_f16(fv);
                else d[i] = bits32(fv);
            }
        }
        if (rm != FE_TONEAREST) fesetround(FE_TONEAREST);
        return 0;
    }
    if (op == SASS_OP_F2I || op == SASS_OP_F2IP) {
        bool sgn;
        int nb = int_bits(dt, &sgn);
        LANES(o, i) {
            double v = read_float(st, a[i], ah ? ah[i] : 0, x);
            if (sass_has(in, SASS_M_FTZ) && fpclassify(v) == FP_SUBNORMAL) v = 0;
            v = round_mode(v, rm);
            int64_t r;
            double lo = sgn ? -ldexp(1, nb - 1) : 0, hi = sgn ? ldexp(1, nb - 1) - 1 : ldexp(1, nb) - 1;
            if (isnan(v)) r = 0;
            else if (v <= lo) r = (int64_t)lo;
            else if (v >= hi) r = sgn ? (int64_t)hi : (int64_t)(uint64_t)hi;
            else r = sgn ? (int64_t)v : (int64_t)(uint64_t)v;
            if (!sgn && nb == 64 && v >= hi) r = (int64_t)UINT64_MAX;
            d[i] = (uint32_t)r;
            if (dh) dh[i] = (uint32_t)((uint64_t)r >> 32);
        }
        return 0;
    }
    if (op == SASS_OP_I2I || op == SASS_OP_I2IP) {
        bool dsg, ssg;
        int dn = int_bits(dt, &dsg), sn = int_bits(st, &ssg);
        LANES(o, i) {
            int64_t v = ssg ? (int64_t)(int32_t)a[i] : (int64_t)a[i];
            if (sn < 32) v = ssg ? (int64_t)((int32_t)(a[i] << (32 - sn)) >> (32 - sn)) : (int64_t)(a[i] & ((1u << sn) - 1));
            if (sass_has(in, SASS_M_SAT)) {
                int64_t lo = dsg ? -(1ll << (dn - 1)) : 0, hi = dsg ? (1ll << (dn - 1)) - 1 : (int64_t)((1ull << dn) - 1);
                v = v < lo ? lo : v > hi ? hi : v;
            }
            d[i] = (uint32_t)v;
        }
        return 0;
    }
    /* F2F */
    LANES(o, i) {
        double v = read_float(st, a[i], ah ? ah[i] : 0, x);
        if (sass_has(in, SASS_M_FTZ) && fpclassify(v) == FP_SUBNORMAL) v = 0;
        if (dt == st) v = round_mode(v, rm); /* same type: to an integral value */
        if (dt == SASS_M_F64) {
            uint64_t b = isnan(v) ? 0xfff8000000000000ull : bits64(v);
            d[i] = (uint32_t)b;
            dh[i] = (uint32_t)(b >> 32);
        } else if (dt == SASS_M_F16) {
            d[i] = isnan(v) ? 0x7fff : to_f16(v);
        } else if (dt == SASS_M_BF16) {
            d[i] = to_bf16((float)v);
        } else {
            volatile float f;
            if (rm != FE_TONEAREST && dt != st) fesetround(rm);
            f = (float)v;
            if (rm != FE_TONEAREST && dt != st) fesetround(FE_TONEAREST);
            if (sass_has(in, SASS_M_FTZ)) f = ftz(f);
            d[i] = isnan(f) ? 0x7fffffffu : bits32(f);
        }
    }
    return 0;
}

/* F2FP.{F16,BF16}.F32.PACK_AB d, a, b: a to the high half, b to the low */
static int f2fp(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 3) return -1;
    bool bf = sass_has(in, SASS_M_BF16), relu = sass_has(in, SASS_M_RELU);
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1);
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) {
        float x = fin(o, 1, a[i]), y = fin(o, 2, b[i]);
        if (relu) x = x < 0 ? 0 : x, y = y < 0 ? 0 : y;
        uint16_t h = bf ? to_bf16(x) : (isnan(x) ? 0x7fff : to_f16(x));
        uint16_t l = bf ? to_bf16(y) : (isnan(y) ? 0x7fff : to_f16(y));
        d[i] = (uint32_t)h << 16 | l;
    }
    return 0;
}

/* ** special registers */
static uint32_t sr_value(msass_op *o, uint32_t sr, uint32_t lane, bool hi)
{
    const msass_launch *l = o->wk->l;
    uint32_t t = o->w->first_thread + lane;
    uint64_t v;
    switch (sr) {
    case SASS_SR_TID_X: return t % l->block[0];
    case SASS_SR_TID_Y: return t / l->block[0] % l->block[1];
    case SASS_SR_TID_Z: return t / l->block[0] / l->block[1];
    case SASS_SR_CTAID_X: return o->wk->ctaid[0];
    case SASS_SR_CTAID_Y: return o->wk->ctaid[1];
    case SASS_SR_CTAID_Z: return o->wk->ctaid[2];
    case SASS_SR_NTID_X: return l->block[0];
    case SASS_SR_NTID_Y: return l->block[1];
    case SASS_SR_NTID_Z: return l->block[2];
    case SASS_SR_NCTAID_X: return l->grid[0];
    case SASS_SR_NCTAID_Y: return l->grid[1];
    case SASS_SR_NCTAID_Z: return l->grid[2];
    case SASS_SR_LANEID: return lane;
    case SASS_SR_EQMASK: return 1u << lane;
    case SASS_SR_LTMASK: return (1u << lane) - 1;
    case SASS_SR_LEMASK: return lane == 31 ? 0xffffffffu : (2u << lane) - 1;
    case SASS_SR_GTMASK: return lane == 31 ? 0 : ~((2u << lane) - 1);
    case SASS_SR_GEMASK: return ~((1u << lane) - 1);
    case SASS_SR_CLOCKLO: case SASS_SR_CLOCKHI: case SASS_SR_CLOCK:
        v = o->wk->executed * 4; /* cycles: a deterministic count that moves with the work done */
        return hi || sr == SASS_SR_CLOCKHI ? (uint32_t)(v >> 32) : (uint32_t)v;
    case SASS_SR_GLOBALTIMERLO: case SASS_SR_GLOBALTIMERHI:
        v = hcq_now_ns();
        return hi || sr == SASS_SR_GLOBALTIMERHI ? (uint32_t)(v >> 32) : (uint32_t)v;
    case SASS_SR_SMID: case SASS_SR_VIRTUALSMID: return o->wk->slot % BASE_MAX(l->sm_count, 1u);
    case SASS_SR_NSMID: return l->sm_count;
    case SASS_SR_WARPID: return o->w->warp_id;
    case SASS_SR_NWARPID: return 64;
    case SASS_SR_VIRTID: return o->w->warp_id << 8 | (o->wk->slot % BASE_MAX(l->sm_count, 1u)) << 20;
    case SASS_SR_SWINLO: return (uint32_t)l->shared_window;
    case SASS_SR_SWINHI: return (uint32_t)(l->shared_window >> 32);
    case SASS_SRZ: case SASS_SR_CgaCtaId: case SASS_SR_CTARANK: case SASS_SR_CLUSTERID_X: case SASS_SR_CLUSTERID_Y:
    case SASS_SR_CLUSTERID_Z: return 0; /* a cluster of one CTA */
    default: return 0;
    }
}

static int sreg(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2 || in->o[1].kind != SASS_K_SR) return -1;
    uint32_t sr = in->o[1].reg;
    bool pair = in->op == SASS_OP_CS2R && !sass_has(in, SASS_M_B32);
    uint32_t *d = msass_dst(o, 0), *dh = pair ? msass_dst_hi(o, 0) : NULL;
    LANES(o, i) {
        d[i] = sr_value(o, sr, i, false);
        if (dh) dh[i] = sr == SASS_SRZ ? 0 : sr_value(o, sr, i, true);
    }
    return 0;
}

static int r2p_p2r(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->op == SASS_OP_R2P) { /* R2P PR, a, mask */
        if (in->nops < 3) return -1;
        const uint32_t *a = msass_src_row(o, 1, 0), *m = msass_src_row(o, 2, 1);
        uint32_t shift = in->o[1].sel >= SASS_SEL_B0 && in->o[1].sel <= SASS_SEL_B3 ? 8 * (in->o[1].sel - SASS_SEL_B0) : 0;
        LANES(o, i) {
            for (uint32_t k = 0; k < 7; k++) {
                if (!((m[i] >> k) & 1)) continue;
                uint32_t bit = (a[i] >> (k + shift)) & 1;
                o->w->p[k] = (o->w->p[k] & ~(1u << i)) | bit << i;
            }
        }
        return 0;
    }
    /* P2R d, PR, a, mask; UP2UR d, UPR, a, mask: the same from the uniform predicates, once for the warp */
    if (in->nops < 4 || in->o[1].kind != SASS_K_PR || in->o[1].reg != (in->op == SASS_OP_UP2UR)) return -1;
    const uint32_t *a = msass_src_row(o, 2, 0), *m = msass_src_row(o, 3, 1);
    uint32_t shift = in->o[2].sel >= SASS_SEL_B0 && in->o[2].sel <= SASS_SEL_B3 ? 8 * (in->o[2].sel - SASS_SEL_B0) : 0;
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) {
        uint32_t p = 0;
        if (in->op == SASS_OP_UP2UR) p = o->w->up & 0x7f;
        else
            for (uint32_t k = 0; k < 7; k++) p |= ((o->w->p[k] >> i) & 1) << k;
        uint32_t mask = (m[i] & 0x7f) << shift;
        d[i] = (a[i] & ~mask) | ((p << shift) & mask);
    }
    return 0;
}

/* SHL / SHR d, a, b: shifts by b, clamped to 32 (.W: modulo 32); SHR is
 * arithmetic unless .U32 */
static int shift(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 3) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1);
    uint32_t *d = msass_dst(o, 0);
    bool left = in->op == SASS_OP_SHL || in->op == SASS_OP_USHL, wrap = sass_has(in, SASS_M_W);
    bool uns = sass_has(in, SASS_M_U32);
    LANES(o, i) {
        uint32_t n = wrap ? b[i] & 31 : BASE_MIN(b[i], 32u);
        if (left) d[i] = n >= 32 ? 0 : a[i] << n;
        else if (uns) d[i] = n >= 32 ? 0 : a[i] >> n;
        else d[i] = (uint32_t)((int32_t)a[i] >> (n >= 32 ? 31 : n));
    }
    return 0;
}

/* B2R.RESULT d [, P]: the last BAR.RED's result (a count, or 0/1) */
static int b2r(msass_op *o)
{
    const sass_insn *in = o->in;
    if (!sass_has(in, SASS_M_RESULT) || in->nops < 1) return -1;
    uint32_t v = o->wk->red_result, *d = msass_dst(o, 0);
    LANES(o, i) d[i] = v;
    if (in->nops >= 2) msass_pred_set(o, 1, v ? 0xffffffffu : 0);
    return 0;
}

int msass_alu(msass_op *o)
{
    const sass_insn *in = o->in;
    /* paired 16-bit integer ops: only the min/max ones are implemented */
    if ((sass_has(in, SASS_M_S16x2) || sass_has(in, SASS_M_U16x2)) && in->op != SASS_OP_VIMNMX && in->op != SASS_OP_VIMNMX3)
        return -1;
    if (sass_has(in, SASS_M_16x2) && in->op != SASS_OP_VIADD) return -1;
    switch (in->op) {
    case SASS_OP_SHL: case SASS_OP_SHR: case SASS_OP_USHL: case SASS_OP_USHR: return shift(o);
    case SASS_OP_B2R: return b2r(o);
    case SASS_OP_MOV: case SASS_OP_UMOV: case SASS_OP_MOV32I: case SASS_OP_R2UR: {
        if (in->nops < 2) return -1;
        const uint32_t *a = msass_src_row(o, 1, 0);
        uint32_t *d = msass_dst(o, 0);
        MSASS_LANES(o, i, d[i] = a[i]);
        return 0;
    }
    case SASS_OP_SEL: case SASS_OP_USEL: case SASS_OP_FSEL: {
        if (in->nops < 4) return -1;
        const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1);
        uint32_t p = msass_pred(o, 3), *d = msass_dst(o, 0);
        bool fl = in->op == SASS_OP_FSEL;
        LANES(o, i) {
            bool t = (p >> i) & 1;
            uint32_t v = t ? a[i] : b[i];
            if (fl) v = bits32(fin(o, t ? 1 : 2, v));
            d[i] = v;
        }
        return 0;
    }
    case SASS_OP_IADD3: case SASS_OP_UIADD3: return iadd3(o);
    case SASS_OP_VIADD: case SASS_OP_IADD: {
        if (in->nops < 3) return -1;
        const uint32_t *a = msass_src_row(o, 1, 0), *b = msass_src_row(o, 2, 1);
        uint32_t *d = msass_dst(o, 0);
        if (sass_has(in, SASS_M_16x2)) { /* PTX add.u16x2/.s16x2 (sm_90): each 16-bit half on its own, wrapping */
            if (in->op != SASS_OP_VIADD || ((in->o[1].flags | in->o[2].flags) & (SASS_F_NEG | SASS_F_NOT))) return -1;
            LANES(o, i) d[i] = ((a[i] & 0xffff0000u) + (b[i] & 0xffff0000u)) | ((a[i] + b[i]) & 0xffffu);
            return 0;
        }
        LANES(o, i) {
            uint32_t p = 0, x = ineg(&in->o[1], a[i], &p), y = ineg(&in->o[2], b[i], &p);
            d[i] = x + y + p;
        }
        return 0;
    }
    case SASS_OP_IMAD: case SASS_OP_UIMAD: case SASS_OP_IMUL: return imad(o);
    case SASS_OP_LEA: case SASS_OP_ULEA: return lea(o);
    case SASS_OP_LOP3: case SASS_OP_ULOP3: return lop3(o);
    case SASS_OP_PLOP3: case SASS_OP_UPLOP3: return plop3(o);
    case SASS_OP_SHF: case SASS_OP_USHF: return shf(o);
    case SASS_OP_PRMT: case SASS_OP_UPRMT: return prmt(o);
    case SASS_OP_ISETP: case SASS_OP_UISETP: return isetp(o);
    case SASS_OP_IMNMX: case SASS_OP_UIMNMX: case SASS_OP_VIMNMX: case SASS_OP_VIMNMX3: case SASS_OP_VIADDMNMX:
    case SASS_OP_FMNMX: return minmax(o);
    case SASS_OP_IABS: case SASS_OP_POPC: case SASS_OP_UPOPC: case SASS_OP_FLO: case SASS_OP_UFLO:
    case SASS_OP_BREV: case SASS_OP_UBREV: case SASS_OP_BMSK: case SASS_OP_UBMSK: case SASS_OP_SGXT:
    case SASS_OP_USGXT: return unary_int(o);
    case SASS_OP_FADD: case SASS_OP_FMUL: case SASS_OP_FFMA: return farith(o);
    case SASS_OP_FSETP: return fsetp(o, false, false);
    case SASS_OP_FSET: return fsetp(o, false, true);
    case SASS_OP_DSETP: return fsetp(o, true, false);
    case SASS_OP_FCHK: return fchk(o);
    case SASS_OP_FRND: return frnd(o);
    case SASS_OP_MUFU: return mufu(o);
    case SASS_OP_DADD: case SASS_OP_DMUL: case SASS_OP_DFMA: case SASS_OP_DMNMX: return darith(o);
    case SASS_OP_HADD2: case SASS_OP_HMUL2: case SASS_OP_HFMA2: case SASS_OP_HMNMX2: return harith(o);
    case SASS_OP_HSETP2: return hsetp2(o);
    case SASS_OP_I2F: case SASS_OP_I2FP: case SASS_OP_F2I: case SASS_OP_F2IP: case SASS_OP_F2F: case SASS_OP_I2I:
    case SASS_OP_I2IP: return convert(o);
    case SASS_OP_F2FP: return f2fp(o);
    case SASS_OP_S2R: case SASS_OP_S2UR: case SASS_OP_CS2R: return sreg(o);
    case SASS_OP_R2P: case SASS_OP_P2R: case SASS_OP_UP2UR: return r2p_p2r(o);
    default: return -1;
    }
}
