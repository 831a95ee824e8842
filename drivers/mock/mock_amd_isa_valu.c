/* The vector ALU of the AMD ISA executor: VOP1, VOP2, VOPC, VOP3(b),
 * VOP3P and VOPD, with DPP (gfx9 DPP, gfx11 DPP16/DPP8) and SDWA (gfx9) on
 * the sources, true16 halves (gfx11) and op_sel (gfx9 VOP3), abs/neg,
 * clamp and omod. Each instruction reads its sources for every lane into
 * arrays first (so a VOPD pair, and an instruction reading its own
 * destination, see the old values), computes over the lanes EXEC enables,
 * then writes. Semantics: the ISA guides' pseudocode (RDNA3 and
 * MI200/MI300 "Vector ALU Operations"), e.g. the carries of
 * V_ADD_CO_U32/V_SUB_CO_U32, V_DIV_SCALE/FMAS/FIXUP's special cases, the
 * IEEE-mode min/max.
 *
 * Precision: the exact operations are IEEE round-to-nearest-even (the
 * host's; f16 arithmetic is done in double and rounded once). AMD gives
 * the transcendentals as approximations with stated error (V_EXP_F32,
 * V_LOG_F32, V_RCP_F32, V_RSQ_F32, V_SQRT_F32: 1 ULP; V_SIN/V_COS_F32 over
 * |x| < 256 revolutions) and does not document their exact bits: the
 * executor returns the correctly rounded value, within those bounds. */
#include "drivers/mock/mock_amd_isa.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

typedef struct vres {
    uint64_t r[64];  /* per-lane results */
    uint64_t wmask;  /* the lanes written */
    uint64_t cmask;  /* compare results / carry-outs */
    uint64_t r2[64]; /* v_swap_b32: the second destination */
} vres;

/* ** bits and floats */
static inline float uf(uint64_t x)
{
    uint32_t u = (uint32_t)x;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint64_t fu(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline double ud(uint64_t x)
{
    double d;
    memcpy(&d, &x, 8);
    return d;
}
static inline uint64_t du(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* f16 <-> wider, round to nearest even with denormals */
static double h2d(uint64_t hx)
{
    uint32_t h = (uint32_t)hx & 0xffff, s = h >> 15, e = h >> 10 & 31, m = h & 0x3ff;
    double v;
    if (e == 31) v = m ? NAN : INFINITY;
    else if (!e) v = ldexp((double)m, -24);
    else v = ldexp((double)(m | 0x400), (int)e - 25);
    if (e == 31 && m) {
        /* keep the payload: f16 NaN -> f32/f64 NaN with the same top bits */
        uint64_t b = 0x7ff8000000000000ull | (uint64_t)(m & 0x1ff) << 42;
        v = ud(b);
    }
    return s ? -v : v;
}
static float h2f(uint64_t h) { return (float)h2d(h); }

static uint16_t d2h(double x)
{
    uint64_t b = du(x);
    uint16_t s = (uint16_t)(b >> 48 & 0x8000);
    if (isnan(x)) return (uint16_t)(s | 0x7e00 | (uint16_t)(b >> 42 & 0x1ff));
    double a = fabs(x);
    if (a >= 65520.0) return (uint16_t)(s | 0x7c00);
    if (a < ldexp(1.0, -14)) {
        /* denormal: a multiple of 2^-24, rounded to nearest even */
        double q = nearbyint(ldexp(a, 24));
        return (uint16_t)(s | (uint16_t)q);
    }
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    double m = nearbyint(ldexp(f, 11)); /* 11 significant bits */
    if (m >= 2048.0) {
        m /= 2;
        e++;
    }
    int be = e - 1 + 15;
    if (be >= 31) return (uint16_t)(s | 0x7c00);
    return (uint16_t)(s | (uint16_t)(be << 10) | ((uint16_t)m & 0x3ff));
}
static uint16_t f2h(float x) { return d2h((double)x); }
static uint16_t f2h_rtz(float x)
{
    if (isnan(x) || isinf(x)) return f2h(x);
    uint16_t h = f2h(x);
    if (fabs(h2d(h)) > fabs((double)x)) h = (uint16_t)(h - 1); /* rounded away: step back toward zero */
    return h;
}

static bool is_fnan(float f) { return f != f; }
static float qnan_f(float f) { return uf(fu(f) | 0x400000); }

/* IEEE-mode min/max (the guides' V_MIN/V_MAX_F32: a quiet NaN loses,
 * -0 < +0) */
static float fmin_amd(float a, float b)
{
    if (is_fnan(a)) return is_fnan(b) ? qnan_f(a) : b;
    if (is_fnan(b)) return a;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static float fmax_amd(float a, float b)
{
    if (is_fnan(a)) return is_fnan(b) ? qnan_f(a) : b;
    if (is_fnan(b)) return a;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static double dmin_amd(double a, double b)
{
    if (isnan(a)) return isnan(b) ? a : b;
    if (isnan(b)) return a;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static double dmax_amd(double a, double b)
{
    if (isnan(a)) return isnan(b) ? a : b;
    if (isnan(b)) return a;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static float fmed3(float a, float b, float c)
{
    if (is_fnan(a) || is_fnan(b) || is_fnan(c)) return fmin_amd(fmin_amd(a, b), c);
    return fmax_amd(fmin_amd(a, b), fmin_amd(fmax_amd(a, b), c));
}

static int32_t cvt_i32(double x)
{
    if (isnan(x)) return 0;
    if (x >= 2147483647.0) return INT32_MAX;
    if (x <= -2147483648.0) return INT32_MIN;
    return (int32_t)x;
}
static uint32_t cvt_u32(double x)
{
    if (isnan(x) || x <= 0) return 0;
    if (x >= 4294967295.0) return UINT32_MAX;
    return (uint32_t)x;
}

static int fexp32(uint64_t x) { return (int)((uint32_t)x >> 23 & 0xff); }
static int fexp64(uint64_t x) { return (int)(x >> 52 & 0x7ff); }

/* V_DIV_SCALE_F32 (RDNA3 and CDNA3 guides' pseudocode) */
static float div_scale_f32(float s0, float s1, float s2, bool *vcc)
{
    *vcc = false;
    uint64_t b1 = fu(s1), b2 = fu(s2);
    bool d1 = fexp32(b1) == 0 && (b1 & 0x7fffff), d2 = fexp32(b2) == 0 && (b2 & 0x7fffff);
    /* "1.0 / 64'F(S1.f) == DENORM.f64", read literally, is never true for
     * an f32 denominator (its reciprocal as a double is never subnormal);
     * the reciprocal that matters is V_RCP_F32's, which is subnormal in f32
     * for |S1| > 2^126. Without scaling then, the Newton steps of a
     * division run on a subnormal reciprocal and the quotient can be an
     * ulp off (4 / -FLT_MAX gave 0x80800000, not 0x80800001: tfuzz seed
     * 1795850685). So, as for f64 below, the reciprocal is tested in the
     * format's own precision and a large denominator scaled down by 2^-64
     * (the numerator with it, or, when the quotient is subnormal too, the
     * denominator alone with VCC, V_DIV_FMAS undoing it).
     * "S2.f / S1.f == DENORM.f": the f32 quotient */
    float q = s2 / s1;
    bool inv_denorm = fabsf(s1) > 0x1p126f && !isinf(s1), q_denorm = q != 0 && fabsf(q) < 0x1p-126f;
    (void)d2;
    if (s2 == 0 || s1 == 0) return NAN;
    if (fexp32(b2) - fexp32(b1) >= 96) {
        *vcc = true;
        return s0 == s1 ? ldexpf(s0, 64) : s0;
    }
    if (d1) return ldexpf(s0, 64);
    if (inv_denorm && q_denorm) {
        *vcc = true;
        return s0 == s1 ? ldexpf(s0, -64) : s0;
    }
    if (inv_denorm) return ldexpf(s0, -64);
    if (q_denorm) {
        *vcc = true;
        return s0 == s2 ? ldexpf(s0, 64) : s0;
    }
    if (fexp32(b2) <= 23) return ldexpf(s0, 64);
    return s0;
}
static double div_scale_f64(double s0, double s1, double s2, bool *vcc)
{
    *vcc = false;
    uint64_t b1 = du(s1), b2 = du(s2);
    bool d1 = fexp64(b1) == 0 && (b1 & 0xfffffffffffffull);
    double inv = 1.0 / s1, q = s2 / s1;
    bool inv_denorm = inv != 0 && fabs(inv) < 0x1p-1022, q_denorm = q != 0 && fabs(q) < 0x1p-1022;
    if (s2 == 0 || s1 == 0) return NAN;
    if (fexp64(b2) - fexp64(b1) >= 768) {
        *vcc = true;
        return s0 == s1 ? ldexp(s0, 128) : s0;
    }
    if (d1) return ldexp(s0, 128);
    if (inv_denorm && q_denorm) {
        /* The guides' pseudocode says ldexp(S0, 128) here, which cannot be
         * what the hardware does: a denominator whose reciprocal is
         * subnormal is above 2^1022, so that overflows to inf and 1/DBL_MAX
         * would be inf (difftest seeds 1795804521, 1795804502); and
         * V_DIV_FMAS then scales a quotient below 2 by 2^-128, which only
         * undoes a denominator scaled down. So the denominator is scaled by
         * 2^-128, as the next case scales both. */
        *vcc = true;
        return s0 == s1 ? ldexp(s0, -128) : s0;
    }
    if (inv_denorm) return ldexp(s0, -128);
    if (q_denorm) {
        *vcc = true;
        return s0 == s2 ? ldexp(s0, 128) : s0;
    }
    if (fexp64(b2) <= 53) return ldexp(s0, 128);
    return s0;
}
/* V_DIV_FMAS's scaled fused multiply-add, 2^e * (a * b + c) rounded once
 * (to f64 or f32: mant 53 or 24). A quotient scaled down (e < 0) may land
 * among the subnormals, where rounding a*b+c to the format first and then
 * again at the scaling would round twice. So a*b+c is rounded to odd in
 * long double (64 bits: x87 extended; fmal is exact before its one
 * rounding, and round-to-odd to p >= mant + 2 bits then rounding to mant
 * bits is the correctly rounded result), scaled there (its exponent range
 * holds any result) and rounded once to the format. */
static long double fma_scaled(double a, double b, double c, int e, bool f32)
{
#if LDBL_MANT_DIG >= 64
    if (e < 0 && isfinite(a) && isfinite(b) && isfinite(c)) {
        fenv_t env;
        feholdexcept(&env);
        fesetround(FE_TOWARDZERO);
        volatile long double r = fmal(a, b, c);
        bool inexact = fetestexcept(FE_INEXACT);
        fesetenv(&env);
        long double t = r;
        if (inexact && t != 0) { /* round to odd: set the last of the 64 bits */
            int ex;
            long double m = frexpl(t, &ex); /* |m| in [0.5, 1): 64 bits below the point */
            long double units = ldexpl(m, 64);
            if (fmodl(units, 2.0L) == 0) units += units < 0 ? -1.0L : 1.0L;
            t = ldexpl(units, ex - 64);
        }
        (void)f32;
        return ldexpl(t, e);
    }
#endif
    (void)f32;
    return f32 ? (long double)ldexpf(fmaf((float)a, (float)b, (float)c), e) : (long double)ldexp(fma(a, b, c), e);
}

/* V_DIV_FIXUP: S0 the quotient, S1 the denominator, S2 the numerator */
static float div_fixup_f32(float s0, float s1, float s2)
{
    bool sign = signbit(s1) != signbit(s2);
    if (is_fnan(s2)) return qnan_f(s2);
    if (is_fnan(s1)) return qnan_f(s1);
    if (s1 == 0 && s2 == 0) return uf(0xffc00000u);
    if (isinf(s1) && isinf(s2)) return uf(0xffc00000u);
    if (s1 == 0 || isinf(s2)) return sign ? -INFINITY : INFINITY;
    if (isinf(s1) || s2 == 0) return sign ? -0.0f : 0.0f;
    if (fexp32(fu(s2)) - fexp32(fu(s1)) < -150) return sign ? -0.0f : 0.0f;
    if (fexp32(fu(s1)) == 255) return sign ? -INFINITY : INFINITY;
    if (is_fnan(s0)) return sign ? -INFINITY : INFINITY;
    return sign ? -fabsf(s0) : fabsf(s0);
}
static double div_fixup_f64(double s0, double s1, double s2)
{
    bool sign = signbit(s1) != signbit(s2);
    if (isnan(s2)) return s2;
    if (isnan(s1)) return s1;
    if (s1 == 0 && s2 == 0) return ud(0xfff8000000000000ull);
    if (isinf(s1) && isinf(s2)) return ud(0xfff8000000000000ull);
    if (s1 == 0 || isinf(s2)) return sign ? -INFINITY : INFINITY;
    if (isinf(s1) || s2 == 0) return sign ? -0.0 : 0.0;
    if (fexp64(du(s2)) - fexp64(du(s1)) < -1075) return sign ? -0.0 : 0.0;
    if (isnan(s0)) return sign ? -INFINITY : INFINITY;
    return sign ? -fabs(s0) : fabs(s0);
}

/* V_CMP_CLASS: S1's bits name the classes that match */
static bool fclass(double v, bool snan, uint32_t m)
{
    int c;
    if (isnan(v)) c = snan ? 0 : 1;
    else if (isinf(v)) c = v < 0 ? 2 : 9;
    else if (v == 0) c = signbit(v) ? 5 : 6;
    else if (fpclassify(v) == FP_SUBNORMAL) c = v < 0 ? 4 : 7;
    else c = v < 0 ? 3 : 8;
    return m >> c & 1;
}
static bool class_f32(uint64_t x, uint32_t m)
{
    uint32_t u = (uint32_t)x;
    float f = uf(u);
    bool snan = is_fnan(f) && !(u & 0x400000);
    if (fexp32(u) == 0 && (u & 0x7fffff)) { /* denormal f32 (a double would call it normal) */
        return m >> (f < 0 ? 4 : 7) & 1;
    }
    return fclass(f, snan, m);
}
static bool class_f16(uint64_t x, uint32_t m)
{
    uint32_t h = (uint32_t)x & 0xffff, e = h >> 10 & 31, mt = h & 0x3ff;
    bool neg = h >> 15;
    int c;
    if (e == 31) c = mt ? (mt & 0x200 ? 1 : 0) : (neg ? 2 : 9);
    else if (!e && !mt) c = neg ? 5 : 6;
    else if (!e) c = neg ? 4 : 7;
    else c = neg ? 3 : 8;
    return m >> c & 1;
}
static bool class_f64(uint64_t x, uint32_t m)
{
    double d = ud(x);
    return fclass(d, isnan(d) && !(x & 0x8000000000000ull), m);
}

static bool fcmp(unsigned cond, double a, double b)
{
    switch (cond) {
    case 0: return false;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a < b || a > b;
    case 6: return a >= b;
    case 7: return !isnan(a) && !isnan(b);
    case 8: return isnan(a) || isnan(b);
    case 9: return !(a >= b);
    case 10: return !(a < b || a > b);
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return !(a == b);
    case 14: return !(a < b);
    default: return true;
    }
}
static bool icmp(unsigned cond, int64_t a, int64_t b, uint64_t ua, uint64_t ub, bool sgn)
{
    switch (cond) {
    case 0: return false;
    case 1: return sgn ? a < b : ua < ub;
    case 2: return ua == ub;
    case 3: return sgn ? a <= b : ua <= ub;
    case 4: return sgn ? a > b : ua > ub;
    case 5: return ua != ub;
    case 6: return sgn ? a >= b : ua >= ub;
    default: return true;
    }
}

static uint8_t byte_perm(uint64_t data, unsigned sel)
{
    if (sel >= 13) return 0xff;
    if (sel == 12) return 0;
    if (sel >= 8) {
        static const unsigned bit[] = {15, 31, 47, 63};
        return data >> bit[sel - 8] & 1 ? 0xff : 0;
    }
    return (uint8_t)(data >> (8 * sel));
}

/* ** operand types */
static unsigned ty_bits(char t) { return t == 'h' ? 16 : (t == 'd' || t == 'l' || t == 'L') ? 64 : 32; }

/* one source for every lane */
static void rd(const mai_wave *w, const amdi_inst *in, unsigned i, char ty, uint64_t *out)
{
    const amdi_opnd *o = &in->s[i];
    unsigned W = w->g->d->wave, bits = ty_bits(ty);
    bool hi = (o->mod & AMDI_M_HI) ||
              (ty == 'h' && in->enc == AMDI_E_VOP3 && w->g->d->t.fam == AMDI_GFX9 && (in->op_sel >> i & 1));
    if (ty == 'm') {
        uint64_t m = mai_mask_of(w, o);
        for (unsigned l = 0; l < W; l++) out[l] = m >> l & 1;
        return;
    }
    if (o->kind == AMDI_O_VGPR || o->kind == AMDI_O_AGPR) {
        const uint32_t *v = (o->kind == AMDI_O_VGPR ? w->v : w->a) + (size_t)o->reg * 64;
        if (bits == 64)
            for (unsigned l = 0; l < W; l++) out[l] = v[l] | (uint64_t)v[64 + l] << 32;
        else if (bits == 16)
            for (unsigned l = 0; l < W; l++) out[l] = (hi ? v[l] >> 16 : v[l]) & 0xffff;
        else
            for (unsigned l = 0; l < W; l++) out[l] = v[l];
        return;
    }
    uint64_t x = mai_ssrc(w, o);
    if (o->kind == AMDI_O_SGPR && bits == 64 && o->n < 2) x = mai_sreg64(w, o->reg);
    if (bits == 16) x = (hi && o->kind != AMDI_O_CONST ? x >> 16 : x) & 0xffff;
    else if (bits == 32) x &= 0xffffffffu;
    for (unsigned l = 0; l < W; l++) out[l] = x;
}

/* abs/neg on a float (or cndmask) source */
static void mods(uint64_t *x, unsigned W, uint8_t mod, unsigned bits)
{
    uint64_t sign = 1ull << (bits - 1);
    if (mod & AMDI_M_ABS)
        for (unsigned l = 0; l < W; l++) x[l] &= ~sign;
    if (mod & AMDI_M_NEG)
        for (unsigned l = 0; l < W; l++) x[l] ^= sign;
}

/* ** DPP: the lane src0 reads, or -1 */
static int dpp_lane(const amdi_inst *in, unsigned l, unsigned W)
{
    if (in->flags & AMDI_F_DPP8) return (int)((l & ~7u) | (in->dpp8 >> (3 * (l & 7)) & 7));
    unsigned c = in->dpp_ctrl, r = l & 15;
    int s;
    if (c <= 0xff) s = (int)((l & ~3u) | (c >> (2 * (l & 3)) & 3));
    else if (c >= 0x101 && c <= 0x10f) s = r + (c & 15) < 16 ? (int)(l + (c & 15)) : -1;
    else if (c >= 0x111 && c <= 0x11f) s = r >= (c & 15) ? (int)(l - (c & 15)) : -1;
    else if (c >= 0x121 && c <= 0x12f) s = (int)((l & ~15u) | ((r - (c & 15)) & 15));
    else if (c == 0x130) s = l + 1 < W ? (int)l + 1 : -1;
    else if (c == 0x134) s = (int)((l + 1) % W);
    else if (c == 0x138) s = l ? (int)l - 1 : -1;
    else if (c == 0x13c) s = (int)((l + W - 1) % W);
    else if (c == 0x140) s = (int)((l & ~15u) | (15 - r));
    else if (c == 0x141) s = (int)((l & ~7u) | (7 - (l & 7)));
    else if (c == 0x142) s = l >= 16 ? (int)((l & ~15u) - 1) : -1;
    else if (c == 0x143) s = l >= 32 ? 31 : -1;
    else if (c >= 0x150 && c <= 0x15f) s = (int)((l & ~15u) | (c & 15));
    else if (c >= 0x160 && c <= 0x16f) s = (int)((l & ~15u) | (r ^ (c & 15)));
    else s = -2;
    return s >= (int)W ? -1 : s;
}

/* applies DPP to src0 (x, read for every lane); returns the lanes it lets
 * write, or ~0 with *bad set for a control the executor does not know */
static uint64_t dpp(const mai_wave *w, const amdi_inst *in, uint64_t *x, uint64_t exec, bool *bad)
{
    unsigned W = w->g->d->wave;
    uint64_t tmp[64], ok = 0;
    memcpy(tmp, x, sizeof tmp);
    bool fi = in->fi, dpp8 = in->flags & AMDI_F_DPP8;
    for (unsigned l = 0; l < W; l++) {
        int s = dpp_lane(in, l, W);
        if (s == -2) {
            *bad = true;
            return 0;
        }
        bool row = dpp8 || ((in->row_mask >> (l >> 4) & 1) && (in->bank_mask >> (l >> 2 & 3) & 1));
        if (!row) continue;
        bool valid = s >= 0 && (fi || (exec >> s & 1));
        if (valid) {
            x[l] = tmp[s];
            ok |= 1ull << l;
        } else if (in->bound_ctrl && !dpp8) {
            x[l] = 0;
            ok |= 1ull << l;
        }
    }
    return ok;
}

/* SDWA source select (gfx9) */
static void sdwa_sel(uint64_t *x, unsigned W, unsigned sel, bool sx)
{
    if (sel >= 6) return;
    unsigned sh = sel < 4 ? 8 * sel : 16 * (sel - 4), n = sel < 4 ? 8 : 16;
    for (unsigned l = 0; l < W; l++) {
        uint32_t v = (uint32_t)(x[l] >> sh) & ((1u << n) - 1);
        if (sx) v = (uint32_t)((int32_t)(v << (32 - n)) >> (32 - n));
        x[l] = v;
    }
}

static bool is_float_ty(char t) { return t == 'f' || t == 'h' || t == 'd'; }

/* compare op -> (type letter, condition, writes exec) */
static bool cmp_decode(amdi_op op, char *ty, unsigned *cond, bool *x, bool *sgn, bool *cls)
{
    struct { amdi_op base; char t; unsigned n; bool f, s; } r[] = {
        {AMDI_V_CMP_F_F16, 'h', 32, true, true}, {AMDI_V_CMP_F_F32, 'f', 32, true, true},
        {AMDI_V_CMP_F_F64, 'd', 32, true, true}, {AMDI_V_CMP_F_I16, 'h', 16, false, true},
        {AMDI_V_CMP_F_U16, 'h', 16, false, false}, {AMDI_V_CMP_F_I32, 'i', 16, false, true},
        {AMDI_V_CMP_F_U32, 'i', 16, false, false}, {AMDI_V_CMP_F_I64, 'l', 16, false, true},
        {AMDI_V_CMP_F_U64, 'l', 16, false, false},
    };
    *cls = false;
    for (unsigned k = 0; k < sizeof r / sizeof r[0]; k++) {
        if (op >= r[k].base && op < r[k].base + (int)r[k].n) {
            unsigned i = op - r[k].base, half = r[k].n / 2;
            *ty = r[k].t;
            *cond = i % half;
            *x = i >= half;
            *sgn = r[k].s;
            if (!r[k].f) *cond |= 0x100; /* integer */
            return true;
        }
    }
    switch (op) {
    case AMDI_V_CMP_CLASS_F16: *ty = 'h'; *x = false; break;
    case AMDI_V_CMP_CLASS_F32: *ty = 'f'; *x = false; break;
    case AMDI_V_CMP_CLASS_F64: *ty = 'd'; *x = false; break;
    case AMDI_V_CMPX_CLASS_F16: *ty = 'h'; *x = true; break;
    case AMDI_V_CMPX_CLASS_F32: *ty = 'f'; *x = true; break;
    case AMDI_V_CMPX_CLASS_F64: *ty = 'd'; *x = true; break;
    default: return false;
    }
    *cls = true;
    *cond = 0;
    *sgn = false;
    return true;
}

/* cmp_decode's answers per op, made once */
typedef struct cmpi {
    bool is, x, sgn, cls;
    char ty;
    unsigned cond;
} cmpi;
static cmpi cmp_tab[AMDI_OP_COUNT];
static pthread_once_t cmp_once = PTHREAD_ONCE_INIT;
static void cmp_init(void)
{
    for (int op = 1; op < AMDI_OP_COUNT; op++) {
        cmpi *c = &cmp_tab[op];
        c->is = cmp_decode((amdi_op)op, &c->ty, &c->cond, &c->x, &c->sgn, &c->cls);
    }
}
static bool cmp_info(amdi_op op, char *ty, unsigned *cond, bool *x, bool *sgn, bool *cls)
{
    pthread_once(&cmp_once, cmp_init);
    const cmpi *c = &cmp_tab[op];
    if (!c->is) return false;
    *ty = c->ty;
    *cond = c->cond;
    *x = c->x;
    *sgn = c->sgn;
    *cls = c->cls;
    return true;
}

static void unsupported(mai_wave *w, const amdi_inst *in, const char *what)
{
    char text[200];
    mai_describe(w, in, text, sizeof text);
    mai_illegal(w, "%s: %s", text, what);
}

/* every lane computes (an inactive lane's result is never written: commit and
 * the masks use EXEC), so the loops have no branch per lane */
#define LANES for (unsigned l = 0; l < W; l++)

/* fma_mix operands: f32, or an f16 half, as op_sel_hi and op_sel say */
static float mix_src(uint64_t raw, const amdi_inst *in, unsigned i)
{
    float v;
    if (in->op_sel_hi >> i & 1) v = h2f((in->op_sel >> i & 1) ? raw >> 16 : raw);
    else v = uf(raw);
    if (in->neg_hi >> i & 1) v = fabsf(v); /* fma_mix: neg_hi is abs */
    if (in->s[i].mod & AMDI_M_NEG) v = -v;
    return v;
}

/* a packed (VOP3P) operand's two halves after op_sel/op_sel_hi and the negs */
static void pk_halves(const amdi_inst *in, unsigned i, uint64_t raw, bool fl, uint32_t *lo, uint32_t *hi)
{
    uint32_t x = (uint32_t)raw;
    uint32_t a = (in->op_sel >> i & 1) ? x >> 16 : x & 0xffff, b = (in->op_sel_hi >> i & 1) ? x >> 16 : x & 0xffff;
    if (fl && (in->s[i].mod & AMDI_M_NEG)) a ^= 0x8000;
    if (fl && (in->neg_hi >> i & 1)) b ^= 0x8000;
    *lo = a;
    *hi = b;
}
static void pk32_halves(const amdi_inst *in, unsigned i, uint64_t raw, uint32_t *lo, uint32_t *hi)
{
    uint32_t a = (in->op_sel >> i & 1) ? (uint32_t)(raw >> 32) : (uint32_t)raw;
    uint32_t b = (in->op_sel_hi >> i & 1) ? (uint32_t)(raw >> 32) : (uint32_t)raw;
    if (in->s[i].mod & AMDI_M_NEG) a ^= 0x80000000u;
    if (in->neg_hi >> i & 1) b ^= 0x80000000u;
    *lo = a;
    *hi = b;
}

/* The integer dot products (AMD's ISA guides, "VOP3P Instructions":
 * D = the sum of the products of S0's and S1's packed elements, plus S2;
 * with clamp the sum saturates to the result's range instead of wrapping;
 * llvm-project VOP3PInstructions.td, the V_DOT* records). Elements are
 * 16, 8 or 4 bits from the low end, signed for the _i32_ forms of gfx9;
 * gfx11's _iu forms take each source's signedness from its neg_lo bit
 * (1: signed), as clang's llvm.amdgcn.sudot4/sudot8 set it, and the _u32
 * forms are unsigned. The 16-bit form picks its halves with op_sel and
 * op_sel_hi as the packed ops do; the others read whole dwords, so an
 * op_sel there, neg_hi, or neg_lo where it is no signedness, is no
 * encoding clang makes: an illegal instruction here, not a guess. */
static bool idot(mai_wave *w, const amdi_inst *in, const uint64_t *A, const uint64_t *B, const uint64_t *C, vres *o)
{
    unsigned W = w->g->d->wave;
    amdi_op op = (amdi_op)in->op;
    bool gfx11 = w->g->d->t.fam == AMDI_GFX11;
    unsigned bits = op == AMDI_V_DOT2_I32_I16 || op == AMDI_V_DOT2_U32_U16 ? 16
                    : op == AMDI_V_DOT4_I32_I8 || op == AMDI_V_DOT4_U32_U8 ? 8 : 4;
    bool signed_res = op == AMDI_V_DOT2_I32_I16 || op == AMDI_V_DOT4_I32_I8 || op == AMDI_V_DOT8_I32_I4;
    bool iu = gfx11 && (op == AMDI_V_DOT4_I32_I8 || op == AMDI_V_DOT8_I32_I4);
    unsigned neg_lo = 0;
    for (unsigned i = 0; i < 3; i++) neg_lo |= (in->s[i].mod & AMDI_M_NEG ? 1u : 0u) << i;
    if ((in->neg_hi & 7) || (neg_lo & ~(iu ? 3u : 0u)) || (bits != 16 && (in->op_sel & 7))) {
        unsupported(w, in, "a modifier this integer dot product does not take");
        return false;
    }
    bool sa = iu ? (neg_lo & 1) != 0 : signed_res, sb = iu ? (neg_lo & 2) != 0 : signed_res;
    unsigned n = 32 / bits;
    uint32_t m = (1u << bits) - 1;
    LANES {
        uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l];
        if (bits == 16) {
            uint32_t a0, a1, b0, b1;
            pk_halves(in, 0, A[l], false, &a0, &a1);
            pk_halves(in, 1, B[l], false, &b0, &b1);
            a = a0 | a1 << 16;
            b = b0 | b1 << 16;
        }
        int64_t sum = signed_res ? (int64_t)(int32_t)(uint32_t)C[l] : (int64_t)(uint32_t)C[l];
        for (unsigned k = 0; k < n; k++) {
            uint32_t x = a >> (k * bits) & m, y = b >> (k * bits) & m;
            int64_t sx = sa && (x >> (bits - 1)) ? (int64_t)x - (1ll << bits) : (int64_t)x;
            int64_t sy = sb && (y >> (bits - 1)) ? (int64_t)y - (1ll << bits) : (int64_t)y;
            sum += sx * sy;
        }
        if (in->clamp) {
            int64_t lo = signed_res ? INT32_MIN : 0, hi = signed_res ? INT32_MAX : (int64_t)UINT32_MAX;
            sum = sum < lo ? lo : sum > hi ? hi : sum;
        }
        o->r[l] = (uint32_t)(uint64_t)sum;
    }
    return true;
}

static bool vop3p(mai_wave *w, const amdi_inst *in, const uint64_t *A, const uint64_t *B, const uint64_t *C,
                  uint64_t act, vres *o)
{
    unsigned W = w->g->d->wave;
    amdi_op op = (amdi_op)in->op;
    (void)act;
    switch (op) {
    case AMDI_V_FMA_MIX_F32: LANES o->r[l] = fu(fmaf(mix_src(A[l], in, 0), mix_src(B[l], in, 1), mix_src(C[l], in, 2))); return true;
    case AMDI_V_FMA_MIXLO_F16: case AMDI_V_FMA_MIXHI_F16: {
        const uint32_t *d = w->v + (size_t)in->d[0].reg * 64;
        LANES {
            uint16_t h = f2h(fmaf(mix_src(A[l], in, 0), mix_src(B[l], in, 1), mix_src(C[l], in, 2)));
            o->r[l] = op == AMDI_V_FMA_MIXLO_F16 ? (d[l] & 0xffff0000u) | h : (d[l] & 0xffffu) | (uint32_t)h << 16;
        }
        return true;
    }
    case AMDI_V_PK_FMA_F32: case AMDI_V_PK_MUL_F32: case AMDI_V_PK_ADD_F32: case AMDI_V_PK_MOV_B32:
        LANES {
            uint32_t a0, a1, b0, b1, c0 = 0, c1 = 0;
            pk32_halves(in, 0, A[l], &a0, &a1);
            pk32_halves(in, 1, B[l], &b0, &b1);
            if (op == AMDI_V_PK_FMA_F32) pk32_halves(in, 2, C[l], &c0, &c1);
            uint32_t r0, r1;
            switch (op) {
            case AMDI_V_PK_FMA_F32: r0 = (uint32_t)fu(fmaf(uf(a0), uf(b0), uf(c0))); r1 = (uint32_t)fu(fmaf(uf(a1), uf(b1), uf(c1))); break;
            case AMDI_V_PK_MUL_F32: r0 = (uint32_t)fu(uf(a0) * uf(b0)); r1 = (uint32_t)fu(uf(a1) * uf(b1)); break;
            case AMDI_V_PK_ADD_F32: r0 = (uint32_t)fu(uf(a0) + uf(b0)); r1 = (uint32_t)fu(uf(a1) + uf(b1)); break;
            default: r0 = a0; r1 = b1; break; /* v_pk_mov_b32: lo from src0, hi from src1 (op_sel picks the dwords) */
            }
            o->r[l] = r0 | (uint64_t)r1 << 32;
        }
        if (op == AMDI_V_PK_MOV_B32) {
            LANES {
                uint32_t a = (in->op_sel & 1) ? (uint32_t)(A[l] >> 32) : (uint32_t)A[l];
                uint32_t b = (in->op_sel & 2) ? (uint32_t)(B[l] >> 32) : (uint32_t)B[l];
                o->r[l] = a | (uint64_t)b << 32;
            }
        }
        return true;
    case AMDI_V_DOT2_F32_F16:
        LANES {
            uint32_t a0, a1, b0, b1;
            pk_halves(in, 0, A[l], true, &a0, &a1);
            pk_halves(in, 1, B[l], true, &b0, &b1);
            float c = uf(C[l]);
            if (in->s[2].mod & AMDI_M_NEG) c = -c;
            o->r[l] = fu((float)((double)h2f(a0) * h2f(b0) + (double)h2f(a1) * h2f(b1) + c));
        }
        if (in->clamp) LANES o->r[l] = fu(fminf(fmaxf(uf(o->r[l]), 0.0f), 1.0f));
        return true;
    case AMDI_V_DOT2_F32_BF16:
        /* bf16 products are exact in double, so the sum rounds once to f32 */
        LANES {
            uint32_t a0, a1, b0, b1;
            pk_halves(in, 0, A[l], true, &a0, &a1);
            pk_halves(in, 1, B[l], true, &b0, &b1);
            float c = uf(C[l]);
            if (in->s[2].mod & AMDI_M_NEG) c = -c;
            o->r[l] = fu((float)((double)uf(a0 << 16) * uf(b0 << 16) + (double)uf(a1 << 16) * uf(b1 << 16) + c));
        }
        if (in->clamp) LANES o->r[l] = fu(fminf(fmaxf(uf(o->r[l]), 0.0f), 1.0f));
        return true;
    case AMDI_V_DOT2_I32_I16: case AMDI_V_DOT2_U32_U16: case AMDI_V_DOT4_I32_I8: case AMDI_V_DOT4_U32_U8:
    case AMDI_V_DOT8_I32_I4: case AMDI_V_DOT8_U32_U4: return idot(w, in, A, B, C, o);
    default: break;
    }
    bool fl = op == AMDI_V_PK_FMA_F16 || op == AMDI_V_PK_ADD_F16 || op == AMDI_V_PK_MUL_F16 || op == AMDI_V_PK_MIN_F16 ||
              op == AMDI_V_PK_MAX_F16 || op == AMDI_V_PK_FMAC_F16;
    LANES {
        uint32_t a[2], b[2], c[2] = {0, 0}, r[2];
        pk_halves(in, 0, A[l], fl, &a[0], &a[1]);
        pk_halves(in, 1, B[l], fl, &b[0], &b[1]);
        if (in->ns > 2) pk_halves(in, 2, C[l], fl, &c[0], &c[1]);
        for (int k = 0; k < 2; k++) {
            uint32_t x = a[k], y = b[k], z = c[k];
            int16_t sx = (int16_t)x, sy = (int16_t)y;
            switch (op) {
            case AMDI_V_PK_ADD_F16: r[k] = d2h(h2d(x) + h2d(y)); break;
            case AMDI_V_PK_MUL_F16: r[k] = d2h(h2d(x) * h2d(y)); break;
            case AMDI_V_PK_FMA_F16: case AMDI_V_PK_FMAC_F16: r[k] = d2h(fma(h2d(x), h2d(y), h2d(z))); break;
            case AMDI_V_PK_MIN_F16: r[k] = f2h(fmin_amd(h2f(x), h2f(y))); break;
            case AMDI_V_PK_MAX_F16: r[k] = f2h(fmax_amd(h2f(x), h2f(y))); break;
            case AMDI_V_PK_ADD_U16: case AMDI_V_PK_ADD_I16: r[k] = (x + y) & 0xffff; break;
            case AMDI_V_PK_SUB_U16: case AMDI_V_PK_SUB_I16: r[k] = (x - y) & 0xffff; break;
            case AMDI_V_PK_MUL_LO_U16: r[k] = (x * y) & 0xffff; break;
            case AMDI_V_PK_MAD_U16: r[k] = (x * y + z) & 0xffff; break;
            case AMDI_V_PK_MAD_I16: r[k] = (uint32_t)(sx * sy + (int16_t)z) & 0xffff; break;
            case AMDI_V_PK_LSHLREV_B16: r[k] = (y << (x & 15)) & 0xffff; break;
            case AMDI_V_PK_LSHRREV_B16: r[k] = y >> (x & 15); break;
            case AMDI_V_PK_ASHRREV_I16: r[k] = (uint32_t)(sy >> (x & 15)) & 0xffff; break;
            case AMDI_V_PK_MAX_I16: r[k] = (uint32_t)(sx > sy ? sx : sy) & 0xffff; break;
            case AMDI_V_PK_MIN_I16: r[k] = (uint32_t)(sx < sy ? sx : sy) & 0xffff; break;
            case AMDI_V_PK_MAX_U16: r[k] = x > y ? x : y; break;
            case AMDI_V_PK_MIN_U16: r[k] = x < y ? x : y; break;
            default: unsupported(w, in, "the executor does not implement this packed op"); return false;
            }
        }
        o->r[l] = r[0] | r[1] << 16;
    }
    if (in->clamp && fl)
        LANES {
            uint32_t lo = f2h(fminf(fmaxf(h2f(o->r[l]), 0.0f), 1.0f)), hi = f2h(fminf(fmaxf(h2f(o->r[l] >> 16), 0.0f), 1.0f));
            o->r[l] = lo | (uint32_t)hi << 16;
        }
    return true;
}

/* computes an instruction's results without writing them */
static bool compute(mai_wave *w, const amdi_inst *in, vres *o)
{
    const mai_dispatch *d = w->g->d;
    unsigned W = d->wave;
    amdi_op op = (amdi_op)in->op;
    uint64_t exec = mai_exec(w), act = exec;
    uint64_t A[64], B[64], C[64];
    char td = in->ty[0], t0 = in->ty[1], t1 = in->ty[2], t2 = in->ty[3];
    bool vop2_carry = op == AMDI_V_ADDC_CO_U32 || op == AMDI_V_SUBB_CO_U32 || op == AMDI_V_SUBBREV_CO_U32;
    if (vop2_carry || op == AMDI_V_CNDMASK_B32 || op == AMDI_V_CNDMASK_B16) t2 = 'm';
    o->cmask = 0;
    /* lane ops: they ignore or pick lanes themselves */
    switch (op) {
    case AMDI_V_READFIRSTLANE_B32: {
        rd(w, in, 0, 'i', A);
        unsigned l = exec ? (unsigned)__builtin_ctzll(exec) : 0;
        mai_sdst(w, &in->d[0], A[l] & 0xffffffffu, 1);
        o->wmask = 0;
        return true;
    }
    case AMDI_V_READLANE_B32: {
        rd(w, in, 0, 'i', A);
        unsigned l = (unsigned)mai_ssrc(w, &in->s[1]) & (W - 1);
        mai_sdst(w, &in->d[0], A[l] & 0xffffffffu, 1);
        o->wmask = 0;
        return true;
    }
    case AMDI_V_WRITELANE_B32: {
        unsigned l = (unsigned)mai_ssrc(w, &in->s[1]) & (W - 1);
        o->r[l] = mai_ssrc(w, &in->s[0]) & 0xffffffffu;
        o->wmask = 1ull << l;
        return true;
    }
    default: break;
    }
    /* sources */
    unsigned ns = in->ns;
    bool mac = amdi_dst_is_addend(op);
    /* SDWA selects from the whole register: read 16-bit operands whole */
    bool sdwa = in->flags & AMDI_F_SDWA;
    if (ns > 0) rd(w, in, 0, in->enc == AMDI_E_VOP3P ? (t0 == 'l' ? 'l' : 'i') : sdwa && t0 == 'h' ? 'i' : t0, A);
    if (ns > 1) rd(w, in, 1, in->enc == AMDI_E_VOP3P ? (t1 == 'l' ? 'l' : 'i') : sdwa && t1 == 'h' ? 'i' : t1, B);
    if (ns > 2) rd(w, in, 2, in->enc == AMDI_E_VOP3P ? (t2 == 'l' ? 'l' : 'i') : t2, C);
    if (mac) {
        /* the destination is the addend */
        amdi_inst tmp = *in;
        tmp.s[2] = in->d[0];
        tmp.s[2].mod = in->d[0].mod & AMDI_M_HI;
        char ta = op == AMDI_V_FMAC_F64 ? 'd' : op == AMDI_V_PK_FMAC_F16 ? 'i' : td;
        rd(w, &tmp, 2, ta, C);
        t2 = ta;
    }
    o->wmask = exec;
    if (in->flags & (AMDI_F_DPP | AMDI_F_DPP8)) {
        bool bad = false;
        o->wmask &= dpp(w, in, A, exec, &bad);
        if (bad) {
            unsupported(w, in, "a DPP control the executor does not know");
            return false;
        }
    }
    if (sdwa) {
        sdwa_sel(A, W, in->sdwa_sel[0], in->s[0].mod & AMDI_M_SEXT);
        if (ns > 1 && in->enc != AMDI_E_VOP1) sdwa_sel(B, W, in->sdwa_sel[1], in->s[1].mod & AMDI_M_SEXT);
        if (t0 == 'h')
            for (unsigned l = 0; l < W; l++) A[l] &= 0xffff;
        if (t1 == 'h' && ns > 1)
            for (unsigned l = 0; l < W; l++) B[l] &= 0xffff;
    }
    /* float modifiers (VOP3P applies its own) */
    if (in->enc != AMDI_E_VOP3P) {
        char ts[3] = {t0, t1, t2};
        uint64_t *S[3] = {A, B, C};
        for (unsigned i = 0; i < ns && i < 3; i++) {
            uint8_t m = in->s[i].mod & (AMDI_M_ABS | AMDI_M_NEG);
            if (!m) continue;
            if (!is_float_ty(ts[i]) && op != AMDI_V_CNDMASK_B32 && op != AMDI_V_CNDMASK_B16 && op != AMDI_V_MOV_B32 &&
                !(op >= AMDI_V_CMP_F_I16 && op <= AMDI_V_CMPX_T_U64)) {
                unsupported(w, in, "abs/neg on an integer operand");
                return false;
            }
            mods(S[i], W, m, ts[i] == 'm' ? 32 : ty_bits(ts[i]) == 64 ? 64 : ty_bits(ts[i]) == 16 ? 16 : 32);
        }
    }
    act = o->wmask; /* lanes computed: the written ones */
    if (in->enc == AMDI_E_VOP3P) return vop3p(w, in, A, B, C, act, o);
    if (op == AMDI_V_DOT2C_F32_F16 || op == AMDI_V_DOT2C_F32_BF16 || op == AMDI_V_DOT2C_I32_I16 ||
        op == AMDI_V_DOT4C_I32_I8 || op == AMDI_V_DOT8C_I32_I4) {
        /* VOP2's accumulating forms: the VOP3P op with the destination as
         * S2, no modifiers, signed sources (gfx9's _i32 dot products) */
        amdi_inst pk = *in;
        pk.op = (uint16_t)(op == AMDI_V_DOT2C_F32_F16 ? AMDI_V_DOT2_F32_F16 : op == AMDI_V_DOT2C_F32_BF16 ? AMDI_V_DOT2_F32_BF16
                           : op == AMDI_V_DOT2C_I32_I16 ? AMDI_V_DOT2_I32_I16
                           : op == AMDI_V_DOT4C_I32_I8 ? AMDI_V_DOT4_I32_I8 : AMDI_V_DOT8_I32_I4);
        pk.op_sel = 0;
        pk.op_sel_hi = 7;
        pk.neg_hi = 0;
        pk.ns = 3;
        for (unsigned i = 0; i < 3; i++) pk.s[i].mod = 0;
        pk.clamp = in->clamp;
        return vop3p(w, &pk, A, B, C, act, o);
    }
    if (op == AMDI_V_PK_FMAC_F16) { /* VOP2: both halves from their own halves */
        amdi_inst pk = *in;
        pk.op_sel = 0;
        pk.op_sel_hi = 7;
        pk.ns = 3;
        return vop3p(w, &pk, A, B, C, act, o);
    }

    /* compares */
    char cty;
    unsigned cond;
    bool cx, sgn, cls;
    if (cmp_info(op, &cty, &cond, &cx, &sgn, &cls)) {
        uint64_t m = 0;
        LANES {
            bool r;
            if (cls) r = cty == 'f' ? class_f32(A[l], (uint32_t)B[l]) : cty == 'h' ? class_f16(A[l], (uint32_t)B[l])
                                                                                 : class_f64(A[l], (uint32_t)B[l]);
            else if (!(cond & 0x100)) {
                double a = cty == 'f' ? uf(A[l]) : cty == 'h' ? h2d(A[l]) : ud(A[l]);
                double b = cty == 'f' ? uf(B[l]) : cty == 'h' ? h2d(B[l]) : ud(B[l]);
                r = fcmp(cond, a, b);
            } else {
                uint64_t ua = A[l], ub = B[l];
                int64_t sa, sb;
                if (cty == 'h') { sa = (int16_t)ua; sb = (int16_t)ub; ua &= 0xffff; ub &= 0xffff; }
                else if (cty == 'i') { sa = (int32_t)ua; sb = (int32_t)ub; ua &= 0xffffffffu; ub &= 0xffffffffu; }
                else { sa = (int64_t)ua; sb = (int64_t)ub; }
                r = icmp(cond & 0xff, sa, sb, ua, ub, sgn);
            }
            if (r) m |= 1ull << l;
        }
        o->cmask = m;
        o->wmask = 0;
        (void)cx;
        return true;
    }

    switch (op) {
    case AMDI_V_NOP: o->wmask = 0; return true;
    case AMDI_V_MOV_B32: case AMDI_V_MOV_B16: case AMDI_V_MOV_B64: case AMDI_V_ACCVGPR_READ_B32:
    case AMDI_V_ACCVGPR_WRITE_B32: case AMDI_V_ACCVGPR_MOV_B32:
        LANES o->r[l] = A[l];
        break;
    case AMDI_V_SWAP_B32: {
        const uint32_t *dv = w->v + (size_t)in->d[0].reg * 64;
        LANES {
            o->r[l] = A[l];      /* vdst <- src0 */
            o->r2[l] = dv[l];    /* src0 <- vdst */
        }
        break;
    }
    case AMDI_V_PERMLANE64_B32: {
        uint64_t tmp[64];
        memcpy(tmp, A, sizeof tmp);
        LANES o->r[l] = W == 64 ? tmp[l ^ 32] : tmp[l];
        break;
    }
    /* conversions */
    case AMDI_V_CVT_I32_F64: LANES o->r[l] = (uint32_t)cvt_i32(ud(A[l])); break;
    case AMDI_V_CVT_U32_F64: LANES o->r[l] = cvt_u32(ud(A[l])); break;
    case AMDI_V_CVT_F64_I32: LANES o->r[l] = du((double)(int32_t)A[l]); break;
    case AMDI_V_CVT_F64_U32: LANES o->r[l] = du((double)(uint32_t)A[l]); break;
    case AMDI_V_CVT_F32_I32: LANES o->r[l] = fu((float)(int32_t)A[l]); break;
    case AMDI_V_CVT_F32_U32: LANES o->r[l] = fu((float)(uint32_t)A[l]); break;
    case AMDI_V_CVT_U32_F32: LANES o->r[l] = cvt_u32(uf(A[l])); break;
    case AMDI_V_CVT_I32_F32: LANES o->r[l] = (uint32_t)cvt_i32(uf(A[l])); break;
    case AMDI_V_CVT_RPI_I32_F32: LANES o->r[l] = (uint32_t)cvt_i32(floor((double)uf(A[l]) + 0.5)); break;
    case AMDI_V_CVT_FLR_I32_F32: LANES o->r[l] = (uint32_t)cvt_i32(floor((double)uf(A[l]))); break;
    case AMDI_V_CVT_F16_F32: LANES o->r[l] = f2h(uf(A[l])); break;
    case AMDI_V_CVT_F32_F16: LANES o->r[l] = fu(h2f(A[l])); break;
    case AMDI_V_CVT_F32_F64: LANES o->r[l] = fu((float)ud(A[l])); break;
    case AMDI_V_CVT_F64_F32: LANES o->r[l] = du((double)uf(A[l])); break;
    case AMDI_V_CVT_F32_UBYTE0: LANES o->r[l] = fu((float)(A[l] & 0xff)); break;
    case AMDI_V_CVT_F32_UBYTE1: LANES o->r[l] = fu((float)(A[l] >> 8 & 0xff)); break;
    case AMDI_V_CVT_F32_UBYTE2: LANES o->r[l] = fu((float)(A[l] >> 16 & 0xff)); break;
    case AMDI_V_CVT_F32_UBYTE3: LANES o->r[l] = fu((float)(A[l] >> 24 & 0xff)); break;
    case AMDI_V_CVT_F16_U16: LANES o->r[l] = d2h((double)(A[l] & 0xffff)); break;
    case AMDI_V_CVT_F16_I16: LANES o->r[l] = d2h((double)(int16_t)A[l]); break;
    case AMDI_V_CVT_U16_F16: LANES { double x = h2d(A[l]); o->r[l] = isnan(x) || x <= 0 ? 0 : x >= 65535 ? 65535 : (uint32_t)x; } break;
    case AMDI_V_CVT_I16_F16: LANES { double x = h2d(A[l]); o->r[l] = (uint16_t)(isnan(x) ? 0 : x >= 32767 ? 32767 : x <= -32768 ? -32768 : (int16_t)x); } break;
    case AMDI_V_CVT_I32_I16: LANES o->r[l] = (uint32_t)(int32_t)(int16_t)A[l]; break;
    case AMDI_V_CVT_U32_U16: LANES o->r[l] = A[l] & 0xffff; break;
    case AMDI_V_CVT_PKRTZ_F16_F32: LANES o->r[l] = f2h_rtz(uf(A[l])) | (uint32_t)f2h_rtz(uf(B[l])) << 16; break;
    case AMDI_V_CVT_PK_U16_U32: LANES o->r[l] = ((uint32_t)A[l] > 0xffff ? 0xffff : A[l]) | ((uint32_t)B[l] > 0xffff ? 0xffffu : (uint32_t)B[l]) << 16; break;
    case AMDI_V_CVT_PK_I16_I32:
        LANES {
            int32_t x = (int32_t)A[l], y = (int32_t)B[l];
            x = x > 32767 ? 32767 : x < -32768 ? -32768 : x;
            y = y > 32767 ? 32767 : y < -32768 ? -32768 : y;
            o->r[l] = ((uint32_t)x & 0xffff) | ((uint32_t)y & 0xffff) << 16;
        }
        break;
    case AMDI_V_PACK_B32_F16: LANES o->r[l] = (A[l] & 0xffff) | (B[l] & 0xffff) << 16; break;
    /* f32 rounding and transcendentals */
    case AMDI_V_FRACT_F32: LANES { float x = uf(A[l]); o->r[l] = fu(isinf(x) ? NAN : fminf(x - floorf(x), 0x1.fffffep-1f)); } break;
    case AMDI_V_TRUNC_F32: LANES o->r[l] = fu(truncf(uf(A[l]))); break;
    case AMDI_V_CEIL_F32: LANES o->r[l] = fu(ceilf(uf(A[l]))); break;
    case AMDI_V_RNDNE_F32: LANES o->r[l] = fu(nearbyintf(uf(A[l]))); break;
    case AMDI_V_FLOOR_F32: LANES o->r[l] = fu(floorf(uf(A[l]))); break;
    case AMDI_V_EXP_F32: LANES o->r[l] = fu((float)exp2((double)uf(A[l]))); break;
    case AMDI_V_LOG_F32: LANES o->r[l] = fu((float)log2((double)uf(A[l]))); break;
    case AMDI_V_RCP_F32: case AMDI_V_RCP_IFLAG_F32: LANES o->r[l] = fu((float)(1.0 / (double)uf(A[l]))); break;
    case AMDI_V_RSQ_F32: LANES o->r[l] = fu((float)(1.0 / sqrt((double)uf(A[l])))); break;
    case AMDI_V_SQRT_F32: LANES o->r[l] = fu(sqrtf(uf(A[l]))); break;
    case AMDI_V_SIN_F32: case AMDI_V_COS_F32:
        LANES {
            double x = uf(A[l]);
            double r = isinf(x) ? NAN : x - floor(x); /* the input is in revolutions */
            o->r[l] = fu((float)(op == AMDI_V_SIN_F32 ? sin(2 * M_PI * r) : cos(2 * M_PI * r)));
        }
        break;
    case AMDI_V_FREXP_MANT_F32: LANES { float x = uf(A[l]); int e; o->r[l] = fu(isinf(x) || is_fnan(x) ? x : frexpf(x, &e)); } break;
    case AMDI_V_FREXP_EXP_I32_F32: LANES { float x = uf(A[l]); int e = 0; if (!isinf(x) && !is_fnan(x)) frexpf(x, &e); o->r[l] = (uint32_t)e; } break;
    /* f64 */
    case AMDI_V_TRUNC_F64: LANES o->r[l] = du(trunc(ud(A[l]))); break;
    case AMDI_V_CEIL_F64: LANES o->r[l] = du(ceil(ud(A[l]))); break;
    case AMDI_V_RNDNE_F64: LANES o->r[l] = du(nearbyint(ud(A[l]))); break;
    case AMDI_V_FLOOR_F64: LANES o->r[l] = du(floor(ud(A[l]))); break;
    case AMDI_V_FRACT_F64: LANES { double x = ud(A[l]); o->r[l] = du(isinf(x) ? NAN : fmin(x - floor(x), 0x1.fffffffffffffp-1)); } break;
    case AMDI_V_RCP_F64: LANES o->r[l] = du(1.0 / ud(A[l])); break;
    case AMDI_V_RSQ_F64: LANES o->r[l] = du(1.0 / sqrt(ud(A[l]))); break;
    case AMDI_V_SQRT_F64: LANES o->r[l] = du(sqrt(ud(A[l]))); break;
    case AMDI_V_FREXP_MANT_F64: LANES { double x = ud(A[l]); int e; o->r[l] = du(isinf(x) || isnan(x) ? x : frexp(x, &e)); } break;
    case AMDI_V_FREXP_EXP_I32_F64: LANES { double x = ud(A[l]); int e = 0; if (!isinf(x) && !isnan(x)) frexp(x, &e); o->r[l] = (uint32_t)e; } break;
    case AMDI_V_ADD_F64: LANES o->r[l] = du(ud(A[l]) + ud(B[l])); break;
    case AMDI_V_MUL_F64: LANES o->r[l] = du(ud(A[l]) * ud(B[l])); break;
    case AMDI_V_MIN_F64: LANES o->r[l] = du(dmin_amd(ud(A[l]), ud(B[l]))); break;
    case AMDI_V_MAX_F64: LANES o->r[l] = du(dmax_amd(ud(A[l]), ud(B[l]))); break;
    case AMDI_V_LDEXP_F64: LANES o->r[l] = du(ldexp(ud(A[l]), (int32_t)B[l])); break;
    case AMDI_V_FMA_F64: case AMDI_V_FMAC_F64: LANES o->r[l] = du(fma(ud(A[l]), ud(B[l]), ud(C[l]))); break;
    case AMDI_V_DIV_FMAS_F64: {
        uint64_t vcc = mai_sreg64(w, AMDI_SREG_VCC);
        LANES {
            double r = fma(ud(A[l]), ud(B[l]), ud(C[l]));
            if (vcc >> l & 1) r = (double)fma_scaled(ud(A[l]), ud(B[l]), ud(C[l]), fexp64(C[l]) > 1023 ? 128 : -128, false);
            o->r[l] = du(r);
        }
        break;
    }
    case AMDI_V_DIV_FIXUP_F64: LANES o->r[l] = du(div_fixup_f64(ud(A[l]), ud(B[l]), ud(C[l]))); break;
    case AMDI_V_DIV_SCALE_F64:
        LANES {
            bool v;
            o->r[l] = du(div_scale_f64(ud(A[l]), ud(B[l]), ud(C[l]), &v));
            if (v) o->cmask |= 1ull << l;
        }
        break;
    /* f32 arithmetic */
    case AMDI_V_ADD_F32: LANES o->r[l] = fu(uf(A[l]) + uf(B[l])); break;
    case AMDI_V_SUB_F32: LANES o->r[l] = fu(uf(A[l]) - uf(B[l])); break;
    case AMDI_V_SUBREV_F32: LANES o->r[l] = fu(uf(B[l]) - uf(A[l])); break;
    case AMDI_V_MUL_F32: LANES o->r[l] = fu(uf(A[l]) * uf(B[l])); break;
    case AMDI_V_MUL_LEGACY_F32: LANES { float a = uf(A[l]), b = uf(B[l]); o->r[l] = fu(a == 0 || b == 0 ? 0.0f : a * b); } break;
    case AMDI_V_MIN_F32: LANES o->r[l] = fu(fmin_amd(uf(A[l]), uf(B[l]))); break;
    case AMDI_V_MAX_F32: LANES o->r[l] = fu(fmax_amd(uf(A[l]), uf(B[l]))); break;
    case AMDI_V_MIN3_F32: LANES o->r[l] = fu(fmin_amd(fmin_amd(uf(A[l]), uf(B[l])), uf(C[l]))); break;
    case AMDI_V_MAX3_F32: LANES o->r[l] = fu(fmax_amd(fmax_amd(uf(A[l]), uf(B[l])), uf(C[l]))); break;
    case AMDI_V_MED3_F32: LANES o->r[l] = fu(fmed3(uf(A[l]), uf(B[l]), uf(C[l]))); break;
    case AMDI_V_MAXMIN_F32: LANES o->r[l] = fu(fmin_amd(fmax_amd(uf(A[l]), uf(B[l])), uf(C[l]))); break;
    case AMDI_V_MINMAX_F32: LANES o->r[l] = fu(fmax_amd(fmin_amd(uf(A[l]), uf(B[l])), uf(C[l]))); break;
    case AMDI_V_LDEXP_F32: LANES o->r[l] = fu(ldexpf(uf(A[l]), (int32_t)B[l])); break;
    case AMDI_V_FMA_F32: case AMDI_V_FMAC_F32: case AMDI_V_FMAMK_F32: case AMDI_V_FMAAK_F32:
        LANES o->r[l] = fu(fmaf(uf(A[l]), uf(B[l]), uf(C[l])));
        break;
    case AMDI_V_MAD_F32: case AMDI_V_MAC_F32: case AMDI_V_MADMK_F32: case AMDI_V_MADAK_F32:
        /* not fused: the product rounds first */
        LANES o->r[l] = fu(uf(A[l]) * uf(B[l]) + uf(C[l]));
        break;
    case AMDI_V_DIV_SCALE_F32:
        LANES {
            bool v;
            o->r[l] = fu(div_scale_f32(uf(A[l]), uf(B[l]), uf(C[l]), &v));
            if (v) o->cmask |= 1ull << l;
        }
        break;
    case AMDI_V_DIV_FMAS_F32: {
        uint64_t vcc = mai_sreg64(w, AMDI_SREG_VCC);
        LANES {
            float r = fmaf(uf(A[l]), uf(B[l]), uf(C[l]));
            if (vcc >> l & 1) r = (float)fma_scaled(uf(A[l]), uf(B[l]), uf(C[l]), fexp32(C[l]) > 127 ? 64 : -64, true);
            o->r[l] = fu(r);
        }
        break;
    }
    case AMDI_V_DIV_FIXUP_F32: LANES o->r[l] = fu(div_fixup_f32(uf(A[l]), uf(B[l]), uf(C[l]))); break;
    /* f16 arithmetic: exact in double, rounded once */
    case AMDI_V_ADD_F16: LANES o->r[l] = d2h(h2d(A[l]) + h2d(B[l])); break;
    case AMDI_V_SUB_F16: LANES o->r[l] = d2h(h2d(A[l]) - h2d(B[l])); break;
    case AMDI_V_SUBREV_F16: LANES o->r[l] = d2h(h2d(B[l]) - h2d(A[l])); break;
    case AMDI_V_MUL_F16: LANES o->r[l] = d2h(h2d(A[l]) * h2d(B[l])); break;
    case AMDI_V_FMA_F16: case AMDI_V_FMAC_F16: LANES o->r[l] = d2h(fma(h2d(A[l]), h2d(B[l]), h2d(C[l]))); break;
    case AMDI_V_MAC_F16: LANES o->r[l] = d2h((double)(float)(h2d(A[l]) * h2d(B[l])) + h2d(C[l])); break;
    case AMDI_V_MAX_F16: LANES o->r[l] = f2h(fmax_amd(h2f(A[l]), h2f(B[l]))); break;
    case AMDI_V_MIN_F16: LANES o->r[l] = f2h(fmin_amd(h2f(A[l]), h2f(B[l]))); break;
    case AMDI_V_MIN3_F16: LANES o->r[l] = f2h(fmin_amd(fmin_amd(h2f(A[l]), h2f(B[l])), h2f(C[l]))); break;
    case AMDI_V_MAX3_F16: LANES o->r[l] = f2h(fmax_amd(fmax_amd(h2f(A[l]), h2f(B[l])), h2f(C[l]))); break;
    case AMDI_V_MED3_F16: LANES o->r[l] = f2h(fmed3(h2f(A[l]), h2f(B[l]), h2f(C[l]))); break;
    case AMDI_V_LDEXP_F16: LANES o->r[l] = d2h(ldexp(h2d(A[l]), (int16_t)B[l])); break;
    case AMDI_V_RCP_F16: LANES o->r[l] = d2h(1.0 / h2d(A[l])); break;
    case AMDI_V_SQRT_F16: LANES o->r[l] = d2h(sqrt(h2d(A[l]))); break;
    case AMDI_V_RSQ_F16: LANES o->r[l] = d2h(1.0 / sqrt(h2d(A[l]))); break;
    case AMDI_V_LOG_F16: LANES o->r[l] = d2h(log2(h2d(A[l]))); break;
    case AMDI_V_EXP_F16: LANES o->r[l] = d2h(exp2(h2d(A[l]))); break;
    case AMDI_V_FLOOR_F16: LANES o->r[l] = d2h(floor(h2d(A[l]))); break;
    case AMDI_V_CEIL_F16: LANES o->r[l] = d2h(ceil(h2d(A[l]))); break;
    case AMDI_V_TRUNC_F16: LANES o->r[l] = d2h(trunc(h2d(A[l]))); break;
    case AMDI_V_RNDNE_F16: LANES o->r[l] = d2h(nearbyint(h2d(A[l]))); break;
    case AMDI_V_DIV_FIXUP_F16: LANES o->r[l] = f2h(div_fixup_f32(h2f(A[l]), h2f(B[l]), h2f(C[l]))); break;
    /* 16-bit integers */
    case AMDI_V_ADD_U16: LANES o->r[l] = (A[l] + B[l]) & 0xffff; break;
    case AMDI_V_SUB_U16: LANES o->r[l] = (A[l] - B[l]) & 0xffff; break;
    case AMDI_V_SUBREV_U16: LANES o->r[l] = (B[l] - A[l]) & 0xffff; break;
    case AMDI_V_MUL_LO_U16: LANES o->r[l] = (A[l] * B[l]) & 0xffff; break;
    case AMDI_V_LSHLREV_B16: LANES o->r[l] = (B[l] << (A[l] & 15)) & 0xffff; break;
    case AMDI_V_LSHRREV_B16: LANES o->r[l] = (B[l] & 0xffff) >> (A[l] & 15); break;
    case AMDI_V_ASHRREV_I16: LANES o->r[l] = (uint16_t)((int16_t)B[l] >> (A[l] & 15)); break;
    case AMDI_V_MAX_U16: LANES o->r[l] = (A[l] & 0xffff) > (B[l] & 0xffff) ? A[l] & 0xffff : B[l] & 0xffff; break;
    case AMDI_V_MIN_U16: LANES o->r[l] = (A[l] & 0xffff) < (B[l] & 0xffff) ? A[l] & 0xffff : B[l] & 0xffff; break;
    case AMDI_V_MAX_I16: LANES o->r[l] = (uint16_t)((int16_t)A[l] > (int16_t)B[l] ? (int16_t)A[l] : (int16_t)B[l]); break;
    case AMDI_V_MIN_I16: LANES o->r[l] = (uint16_t)((int16_t)A[l] < (int16_t)B[l] ? (int16_t)A[l] : (int16_t)B[l]); break;
    case AMDI_V_MAD_U16: case AMDI_V_MAD_LEGACY_U16: LANES o->r[l] = (A[l] * B[l] + C[l]) & 0xffff; break;
    case AMDI_V_MAD_I16: case AMDI_V_MAD_LEGACY_I16: LANES o->r[l] = (uint16_t)((int16_t)A[l] * (int16_t)B[l] + (int16_t)C[l]); break;
    case AMDI_V_MAD_F16: case AMDI_V_MAD_LEGACY_F16:
        /* not fused: the product rounds to f16 first */
        LANES o->r[l] = d2h(h2d(d2h(h2d(A[l]) * h2d(B[l]))) + h2d(C[l]));
        break;
    case AMDI_V_FMA_LEGACY_F16: LANES o->r[l] = d2h(fma(h2d(A[l]), h2d(B[l]), h2d(C[l]))); break;
    case AMDI_V_MIN3_I16: LANES { int16_t a = (int16_t)A[l], b = (int16_t)B[l], c = (int16_t)C[l], m = a < b ? a : b; o->r[l] = (uint16_t)(m < c ? m : c); } break;
    case AMDI_V_MAX3_I16: LANES { int16_t a = (int16_t)A[l], b = (int16_t)B[l], c = (int16_t)C[l], m = a > b ? a : b; o->r[l] = (uint16_t)(m > c ? m : c); } break;
    case AMDI_V_MIN3_U16: LANES { uint16_t a = (uint16_t)A[l], b = (uint16_t)B[l], c = (uint16_t)C[l], m = a < b ? a : b; o->r[l] = m < c ? m : c; } break;
    case AMDI_V_MAX3_U16: LANES { uint16_t a = (uint16_t)A[l], b = (uint16_t)B[l], c = (uint16_t)C[l], m = a > b ? a : b; o->r[l] = m > c ? m : c; } break;
    case AMDI_V_MED3_I16:
        LANES {
            int16_t a = (int16_t)A[l], b = (int16_t)B[l], c = (int16_t)C[l], lo = a < b ? a : b, hi = a < b ? b : a;
            o->r[l] = (uint16_t)(c < lo ? lo : c > hi ? hi : c);
        }
        break;
    case AMDI_V_MED3_U16:
        LANES {
            uint16_t a = (uint16_t)A[l], b = (uint16_t)B[l], c = (uint16_t)C[l], lo = a < b ? a : b, hi = a < b ? b : a;
            o->r[l] = c < lo ? lo : c > hi ? hi : c;
        }
        break;
    case AMDI_V_AND_B16: LANES o->r[l] = A[l] & B[l] & 0xffff; break;
    case AMDI_V_OR_B16: LANES o->r[l] = (A[l] | B[l]) & 0xffff; break;
    case AMDI_V_XOR_B16: LANES o->r[l] = (A[l] ^ B[l]) & 0xffff; break;
    case AMDI_V_NOT_B16: LANES o->r[l] = ~A[l] & 0xffff; break;
    case AMDI_V_MAD_U32_U16: LANES o->r[l] = (uint32_t)((A[l] & 0xffff) * (B[l] & 0xffff) + (uint32_t)C[l]); break;
    case AMDI_V_MAD_I32_I16: LANES o->r[l] = (uint32_t)((int64_t)(int16_t)A[l] * (int16_t)B[l] + (int32_t)C[l]); break;
    case AMDI_V_CNDMASK_B16: LANES o->r[l] = C[l] ? B[l] : A[l]; break;
    /* 32-bit integers and bits */
    case AMDI_V_CNDMASK_B32: LANES o->r[l] = C[l] ? B[l] : A[l]; break;
    case AMDI_V_NOT_B32: LANES o->r[l] = ~A[l] & 0xffffffffu; break;
    case AMDI_V_BFREV_B32: LANES { uint32_t x = (uint32_t)A[l], r = 0; for (int k = 0; k < 32; k++) r |= (x >> k & 1) << (31 - k); o->r[l] = r; } break;
    case AMDI_V_FFBH_U32: LANES { uint32_t x = (uint32_t)A[l]; o->r[l] = x ? (uint32_t)__builtin_clz(x) : 0xffffffffu; } break;
    case AMDI_V_FFBL_B32: LANES { uint32_t x = (uint32_t)A[l]; o->r[l] = x ? (uint32_t)__builtin_ctz(x) : 0xffffffffu; } break;
    case AMDI_V_FFBH_I32:
        LANES {
            int32_t x = (int32_t)A[l];
            uint32_t u = x < 0 ? ~(uint32_t)x : (uint32_t)x;
            o->r[l] = x == 0 || x == -1 ? 0xffffffffu : (uint32_t)__builtin_clz(u);
        }
        break;
    case AMDI_V_MUL_I32_I24: LANES o->r[l] = (uint32_t)((int64_t)((int32_t)(A[l] << 8) >> 8) * ((int32_t)(B[l] << 8) >> 8)); break;
    case AMDI_V_MUL_HI_I32_I24: LANES o->r[l] = (uint32_t)((uint64_t)((int64_t)((int32_t)(A[l] << 8) >> 8) * ((int32_t)(B[l] << 8) >> 8)) >> 32); break;
    case AMDI_V_MUL_U32_U24: LANES o->r[l] = (uint32_t)((A[l] & 0xffffff) * (B[l] & 0xffffff)); break;
    case AMDI_V_MUL_HI_U32_U24: LANES o->r[l] = (uint32_t)(((A[l] & 0xffffff) * (B[l] & 0xffffff)) >> 32); break;
    case AMDI_V_MAD_I32_I24: LANES o->r[l] = (uint32_t)((int64_t)((int32_t)(A[l] << 8) >> 8) * ((int32_t)(B[l] << 8) >> 8) + (int32_t)C[l]); break;
    case AMDI_V_MAD_U32_U24: LANES o->r[l] = (uint32_t)((A[l] & 0xffffff) * (B[l] & 0xffffff) + (uint32_t)C[l]); break;
    case AMDI_V_MIN_I32: LANES o->r[l] = (uint32_t)((int32_t)A[l] < (int32_t)B[l] ? A[l] : B[l]); break;
    case AMDI_V_MAX_I32: LANES o->r[l] = (uint32_t)((int32_t)A[l] > (int32_t)B[l] ? A[l] : B[l]); break;
    case AMDI_V_MIN_U32: LANES o->r[l] = (uint32_t)A[l] < (uint32_t)B[l] ? A[l] : B[l]; break;
    case AMDI_V_MAX_U32: LANES o->r[l] = (uint32_t)A[l] > (uint32_t)B[l] ? A[l] : B[l]; break;
    case AMDI_V_MIN3_I32: LANES { int32_t a = (int32_t)A[l], b = (int32_t)B[l], c = (int32_t)C[l], m = a < b ? a : b; o->r[l] = (uint32_t)(m < c ? m : c); } break;
    case AMDI_V_MAX3_I32: LANES { int32_t a = (int32_t)A[l], b = (int32_t)B[l], c = (int32_t)C[l], m = a > b ? a : b; o->r[l] = (uint32_t)(m > c ? m : c); } break;
    case AMDI_V_MIN3_U32: LANES { uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l], c = (uint32_t)C[l], m = a < b ? a : b; o->r[l] = m < c ? m : c; } break;
    case AMDI_V_MAX3_U32: LANES { uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l], c = (uint32_t)C[l], m = a > b ? a : b; o->r[l] = m > c ? m : c; } break;
    case AMDI_V_MED3_I32:
        LANES {
            int32_t a = (int32_t)A[l], b = (int32_t)B[l], c = (int32_t)C[l];
            int32_t lo = a < b ? a : b, hi = a < b ? b : a;
            o->r[l] = (uint32_t)(c < lo ? lo : c > hi ? hi : c);
        }
        break;
    case AMDI_V_MED3_U32:
        LANES {
            uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l], c = (uint32_t)C[l];
            uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
            o->r[l] = c < lo ? lo : c > hi ? hi : c;
        }
        break;
    case AMDI_V_MAXMIN_U32: LANES { uint32_t m = (uint32_t)A[l] > (uint32_t)B[l] ? (uint32_t)A[l] : (uint32_t)B[l]; o->r[l] = m < (uint32_t)C[l] ? m : (uint32_t)C[l]; } break;
    case AMDI_V_MINMAX_U32: LANES { uint32_t m = (uint32_t)A[l] < (uint32_t)B[l] ? (uint32_t)A[l] : (uint32_t)B[l]; o->r[l] = m > (uint32_t)C[l] ? m : (uint32_t)C[l]; } break;
    case AMDI_V_MAXMIN_I32: LANES { int32_t m = (int32_t)A[l] > (int32_t)B[l] ? (int32_t)A[l] : (int32_t)B[l]; o->r[l] = (uint32_t)(m < (int32_t)C[l] ? m : (int32_t)C[l]); } break;
    case AMDI_V_MINMAX_I32: LANES { int32_t m = (int32_t)A[l] < (int32_t)B[l] ? (int32_t)A[l] : (int32_t)B[l]; o->r[l] = (uint32_t)(m > (int32_t)C[l] ? m : (int32_t)C[l]); } break;
    case AMDI_V_SAD_U32: LANES { uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l]; o->r[l] = (uint32_t)((a > b ? a - b : b - a) + (uint32_t)C[l]); } break;
    case AMDI_V_LSHRREV_B32: LANES o->r[l] = (uint32_t)B[l] >> (A[l] & 31); break;
    case AMDI_V_ASHRREV_I32: LANES o->r[l] = (uint32_t)((int32_t)B[l] >> (A[l] & 31)); break;
    case AMDI_V_LSHLREV_B32: LANES o->r[l] = (uint32_t)(B[l] << (A[l] & 31)); break;
    case AMDI_V_LSHLREV_B64: LANES o->r[l] = B[l] << (A[l] & 63); break;
    case AMDI_V_LSHRREV_B64: LANES o->r[l] = B[l] >> (A[l] & 63); break;
    case AMDI_V_ASHRREV_I64: LANES o->r[l] = (uint64_t)((int64_t)B[l] >> (A[l] & 63)); break;
    case AMDI_V_AND_B32: LANES o->r[l] = A[l] & B[l]; break;
    case AMDI_V_OR_B32: LANES o->r[l] = A[l] | B[l]; break;
    case AMDI_V_XOR_B32: LANES o->r[l] = A[l] ^ B[l]; break;
    case AMDI_V_XNOR_B32: LANES o->r[l] = ~(A[l] ^ B[l]) & 0xffffffffu; break;
    case AMDI_V_ADD_U32: case AMDI_V_ADD_I32: LANES o->r[l] = (uint32_t)(A[l] + B[l]); break;
    case AMDI_V_SUB_U32: case AMDI_V_SUB_I32: LANES o->r[l] = (uint32_t)(A[l] - B[l]); break;
    case AMDI_V_SUBREV_U32: LANES o->r[l] = (uint32_t)(B[l] - A[l]); break;
    case AMDI_V_ADD_CO_U32: LANES { uint64_t r = (A[l] & 0xffffffffu) + (B[l] & 0xffffffffu); o->r[l] = (uint32_t)r; if (r >> 32) o->cmask |= 1ull << l; } break;
    case AMDI_V_SUB_CO_U32: LANES { o->r[l] = (uint32_t)(A[l] - B[l]); if ((uint32_t)B[l] > (uint32_t)A[l]) o->cmask |= 1ull << l; } break;
    case AMDI_V_SUBREV_CO_U32: LANES { o->r[l] = (uint32_t)(B[l] - A[l]); if ((uint32_t)A[l] > (uint32_t)B[l]) o->cmask |= 1ull << l; } break;
    case AMDI_V_ADDC_CO_U32: LANES { uint64_t r = (A[l] & 0xffffffffu) + (B[l] & 0xffffffffu) + C[l]; o->r[l] = (uint32_t)r; if (r >> 32) o->cmask |= 1ull << l; } break;
    case AMDI_V_SUBB_CO_U32: LANES { o->r[l] = (uint32_t)(A[l] - B[l] - C[l]); if ((uint64_t)(uint32_t)B[l] + C[l] > (uint32_t)A[l]) o->cmask |= 1ull << l; } break;
    case AMDI_V_SUBBREV_CO_U32: LANES { o->r[l] = (uint32_t)(B[l] - A[l] - C[l]); if ((uint64_t)(uint32_t)A[l] + C[l] > (uint32_t)B[l]) o->cmask |= 1ull << l; } break;
    case AMDI_V_MUL_LO_U32: LANES o->r[l] = (uint32_t)(A[l] * B[l]); break;
    case AMDI_V_MUL_HI_U32: LANES o->r[l] = (uint32_t)(((A[l] & 0xffffffffu) * (B[l] & 0xffffffffu)) >> 32); break;
    case AMDI_V_MUL_HI_I32: LANES o->r[l] = (uint32_t)((uint64_t)((int64_t)(int32_t)A[l] * (int32_t)B[l]) >> 32); break;
    case AMDI_V_MAD_U64_U32:
        LANES {
            unsigned __int128 r = (unsigned __int128)((A[l] & 0xffffffffu) * (B[l] & 0xffffffffu)) + C[l];
            o->r[l] = (uint64_t)r;
            if ((uint64_t)(r >> 64)) o->cmask |= 1ull << l;
        }
        break;
    case AMDI_V_MAD_I64_I32:
        LANES {
            __int128 r = (__int128)((int64_t)(int32_t)A[l] * (int32_t)B[l]) + (int64_t)C[l];
            o->r[l] = (uint64_t)r;
            if (r > INT64_MAX || r < INT64_MIN) o->cmask |= 1ull << l;
        }
        break;
    case AMDI_V_BFE_U32: LANES { uint32_t off = (uint32_t)B[l] & 31, wd = (uint32_t)C[l] & 31; o->r[l] = wd ? ((uint32_t)A[l] >> off) & ((1u << wd) - 1) : 0; } break;
    case AMDI_V_BFE_I32:
        LANES {
            uint32_t off = (uint32_t)B[l] & 31, wd = (uint32_t)C[l] & 31;
            uint32_t v = wd ? ((uint32_t)A[l] >> off) & ((1u << wd) - 1) : 0;
            o->r[l] = wd ? (uint32_t)((int32_t)(v << (32 - wd)) >> (32 - wd)) : 0;
        }
        break;
    case AMDI_V_BFI_B32: LANES o->r[l] = (A[l] & B[l]) | (~A[l] & C[l] & 0xffffffffu); break;
    case AMDI_V_BFM_B32: LANES o->r[l] = (uint32_t)(((1ull << (A[l] & 31)) - 1) << (B[l] & 31)); break;
    case AMDI_V_ALIGNBIT_B32: LANES o->r[l] = (uint32_t)((((A[l] & 0xffffffffu) << 32) | (B[l] & 0xffffffffu)) >> (C[l] & 31)); break;
    case AMDI_V_ALIGNBYTE_B32: LANES o->r[l] = (uint32_t)((((A[l] & 0xffffffffu) << 32) | (B[l] & 0xffffffffu)) >> (8 * (C[l] & 3))); break;
    case AMDI_V_PERM_B32:
        LANES {
            uint64_t data = (A[l] & 0xffffffffu) << 32 | (B[l] & 0xffffffffu);
            uint32_t r = 0;
            for (int k = 0; k < 4; k++) r |= (uint32_t)byte_perm(data, (unsigned)(C[l] >> (8 * k)) & 0xff) << (8 * k);
            o->r[l] = r;
        }
        break;
    case AMDI_V_XAD_U32: LANES o->r[l] = (uint32_t)((A[l] ^ B[l]) + C[l]); break;
    case AMDI_V_XOR3_B32: LANES o->r[l] = (A[l] ^ B[l] ^ C[l]) & 0xffffffffu; break;
    case AMDI_V_LSHL_ADD_U32: LANES o->r[l] = (uint32_t)((A[l] << (B[l] & 31)) + C[l]); break;
    case AMDI_V_ADD_LSHL_U32: LANES o->r[l] = (uint32_t)((A[l] + B[l]) << (C[l] & 31)); break;
    case AMDI_V_ADD3_U32: LANES o->r[l] = (uint32_t)(A[l] + B[l] + C[l]); break;
    case AMDI_V_LSHL_OR_B32: LANES o->r[l] = (uint32_t)((A[l] << (B[l] & 31)) | C[l]); break;
    case AMDI_V_AND_OR_B32: LANES o->r[l] = (uint32_t)((A[l] & B[l]) | C[l]); break;
    case AMDI_V_OR3_B32: LANES o->r[l] = (uint32_t)(A[l] | B[l] | C[l]); break;
    case AMDI_V_LSHL_ADD_U64: LANES o->r[l] = (A[l] << (B[l] & 63)) + C[l]; break;
    case AMDI_V_BCNT_U32_B32: LANES o->r[l] = (uint32_t)(__builtin_popcount((uint32_t)A[l]) + (uint32_t)B[l]); break;
    case AMDI_V_MBCNT_LO_U32_B32: LANES o->r[l] = (uint32_t)(__builtin_popcount((uint32_t)A[l] & (uint32_t)((1ull << l) - 1)) + (uint32_t)B[l]); break;
    case AMDI_V_MBCNT_HI_U32_B32: LANES o->r[l] = (uint32_t)(__builtin_popcount((uint32_t)A[l] & (uint32_t)(((1ull << l) - 1) >> 32)) + (uint32_t)B[l]); break;
    default: unsupported(w, in, "the executor does not implement it"); return false;
    }
    /* output modifiers on float results */
    if (in->omod || in->clamp) {
        if (!is_float_ty(td)) {
            if (in->clamp) {
                unsupported(w, in, "clamp (saturation) of an integer result");
                return false;
            }
        } else {
            static const double mul[] = {1, 2, 4, 0.5};
            LANES {
                if (td == 'f') {
                    float x = uf(o->r[l]) * (float)mul[in->omod];
                    if (in->clamp) x = is_fnan(x) ? 0.0f : fminf(fmaxf(x, 0.0f), 1.0f);
                    o->r[l] = fu(x);
                } else if (td == 'd') {
                    double x = ud(o->r[l]) * mul[in->omod];
                    if (in->clamp) x = isnan(x) ? 0.0 : fmin(fmax(x, 0.0), 1.0);
                    o->r[l] = du(x);
                } else {
                    double x = h2d(o->r[l]) * mul[in->omod];
                    if (in->clamp) x = isnan(x) ? 0.0 : fmin(fmax(x, 0.0), 1.0);
                    o->r[l] = d2h(x);
                }
            }
        }
    }
    return true;
}

/* writes the results */
static void commit(mai_wave *w, const amdi_inst *in, const vres *o)
{
    const mai_dispatch *d = w->g->d;
    unsigned W = d->wave;
    amdi_op op = (amdi_op)in->op;
    uint64_t exec = mai_exec(w);
    char cty;
    unsigned cond;
    bool cx, sgn, cls;
    if (cmp_info(op, &cty, &cond, &cx, &sgn, &cls)) {
        uint64_t m = o->cmask & exec;
        if (in->flags & AMDI_F_DPP) m &= o->wmask | ~0ull;
        mai_write_mask(w, &in->d[0], m);
        if (in->nd > 1) mai_write_mask(w, &in->d[1], m); /* gfx9 v_cmpx: EXEC too */
        return;
    }
    if (in->nd > 1) mai_write_mask(w, &in->d[1], o->cmask & exec); /* carry-out, div_scale's VCC */
    if (!in->nd || !o->wmask) return;
    const amdi_opnd *dst = &in->d[0];
    if (dst->kind != AMDI_O_VGPR && dst->kind != AMDI_O_AGPR) return;
    uint32_t *v = (dst->kind == AMDI_O_VGPR ? w->v : w->a) + (size_t)dst->reg * 64;
    char td = in->ty[0];
    uint64_t m = o->wmask;
    if (op == AMDI_V_SWAP_B32) {
        uint32_t *s0 = w->v + (size_t)in->s[0].reg * 64;
        for (unsigned l = 0; l < W; l++)
            if (m >> l & 1) {
                v[l] = (uint32_t)o->r[l];
                s0[l] = (uint32_t)o->r2[l];
            }
        return;
    }
    if (ty_bits(td) == 64) {
        for (unsigned l = 0; l < W; l++)
            if (m >> l & 1) {
                v[l] = (uint32_t)o->r[l];
                v[64 + l] = (uint32_t)(o->r[l] >> 32);
            }
        return;
    }
    if (in->flags & AMDI_F_SDWA) {
        unsigned sel = in->sdwa_dst_sel, un = in->sdwa_dst_unused;
        for (unsigned l = 0; l < W; l++) {
            if (!(m >> l & 1)) continue;
            uint32_t r = (uint32_t)o->r[l];
            if (sel < 6) {
                unsigned sh = sel < 4 ? 8 * sel : 16 * (sel - 4), n = sel < 4 ? 8 : 16;
                uint32_t f = ((1u << n) - 1) << sh, x = (r << sh) & f;
                if (un == 2) x |= v[l] & ~f;
                else if (un == 1 && (x >> (sh + n - 1) & 1)) x |= ~((1u << (sh + n)) - 1);
                r = x;
            }
            v[l] = r;
        }
        return;
    }
    if (td == 'h') {
        bool hi = (dst->mod & AMDI_M_HI) || (d->t.fam == AMDI_GFX9 && in->enc == AMDI_E_VOP3 && (in->op_sel & 8));
        bool preserve = d->t.fam == AMDI_GFX11 || hi;
        for (unsigned l = 0; l < W; l++) {
            if (!(m >> l & 1)) continue;
            uint32_t h = (uint32_t)o->r[l] & 0xffff;
            if (hi) v[l] = (v[l] & 0xffffu) | h << 16;
            else v[l] = preserve ? (v[l] & 0xffff0000u) | h : h; /* gfx9's 16-bit ops zero the high half */
        }
        return;
    }
    for (unsigned l = 0; l < W; l++)
        if (m >> l & 1) v[l] = (uint32_t)o->r[l];
}

/* ** the fast path: the common 32-bit ops, computed over 32-bit lanes
 * straight from the registers and written under EXEC; anything else (or an
 * op not listed) takes the general path */
static uint32_t f2u32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline __attribute__((always_inline)) const uint32_t *src32(const mai_wave *w, const amdi_opnd *o,
                                                                    uint32_t *tmp, unsigned W)
{
    if (o->kind == AMDI_O_VGPR) return w->v + (size_t)o->reg * 64;
    uint32_t x = (uint32_t)mai_ssrc(w, o);
    for (unsigned l = 0; l < W; l++) tmp[l] = x; /* W: a constant where the callers are (fast32_w, fast_more_w) */
    return tmp;
}

/* R = a * b + c, fused, per lane: with the CPU's FMA instruction where it has one (what libm's fmaf runs
 * there, one lane-loop of vector FMAs instead of a call per lane), else fmaf; the same bits either way */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void fma_lanes_hw(uint32_t *R, const uint32_t *a, const uint32_t *b,
                                                        const uint32_t *c, unsigned W)
{
    if (W == 64)
        for (unsigned l = 0; l < 64; l++) R[l] = f2u32(__builtin_fmaf(u2f32(a[l]), u2f32(b[l]), u2f32(c[l])));
    else
        for (unsigned l = 0; l < 32; l++) R[l] = f2u32(__builtin_fmaf(u2f32(a[l]), u2f32(b[l]), u2f32(c[l])));
}
#endif

static void fma_lanes(uint32_t *R, const uint32_t *a, const uint32_t *b, const uint32_t *c, unsigned W)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static _Atomic int hw = -1; /* workers of several dispatches ask at once */
    int h = atomic_load_explicit(&hw, memory_order_relaxed);
    if (h < 0) atomic_store_explicit(&hw, h = __builtin_cpu_supports("fma") ? 1 : 0, memory_order_relaxed);
    if (h) {
        fma_lanes_hw(R, a, b, c, W);
        return;
    }
#endif
    for (unsigned l = 0; l < W; l++) R[l] = f2u32(fmaf(u2f32(a[l]), u2f32(b[l]), u2f32(c[l])));
}

/* R's lanes into d where EXEC has them, without a branch per lane */
static inline __attribute__((always_inline)) void put32(uint32_t *d, const uint32_t *R, uint64_t exec, uint64_t all, unsigned W)
{
    if (exec == all) {
        memcpy(d, R, W * sizeof *R);
        return;
    }
    for (unsigned l = 0; l < W; l++) {
        uint32_t m = 0u - (uint32_t)(exec >> l & 1);
        d[l] = (d[l] & ~m) | (R[l] & m);
    }
}

/* (W, the wave size, is a constant in each of the two copies the callers below make: lane loops of a fixed
 * count, which the compiler unrolls and vectorizes) */
static inline __attribute__((always_inline)) bool fast32_w(mai_wave *w, const amdi_inst *in, unsigned W)
{
    amdi_op op = (amdi_op)in->op;
    uint32_t t0[64], t1[64], t2[64], R[64];
    uint32_t *d = w->v + (size_t)in->d[0].reg * 64;
    const uint32_t *a = in->ns > 0 ? src32(w, &in->s[0], t0, W) : NULL;
    const uint32_t *b = in->ns > 1 ? src32(w, &in->s[1], t1, W) : NULL;
    const uint32_t *c = in->ns > 2 ? src32(w, &in->s[2], t2, W) : NULL;
#define L32 for (unsigned l = 0; l < W; l++)
    switch (op) {
    case AMDI_V_MOV_B32: L32 R[l] = a[l]; break;
    case AMDI_V_ADD_F32: L32 R[l] = f2u32(u2f32(a[l]) + u2f32(b[l])); break;
    case AMDI_V_SUB_F32: L32 R[l] = f2u32(u2f32(a[l]) - u2f32(b[l])); break;
    case AMDI_V_SUBREV_F32: L32 R[l] = f2u32(u2f32(b[l]) - u2f32(a[l])); break;
    case AMDI_V_MUL_F32: L32 R[l] = f2u32(u2f32(a[l]) * u2f32(b[l])); break;
    case AMDI_V_FMA_F32: case AMDI_V_FMAMK_F32: case AMDI_V_FMAAK_F32: fma_lanes(R, a, b, c, W); break;
    case AMDI_V_FMAC_F32: fma_lanes(R, a, b, d, W); break;
    case AMDI_V_ADD_U32: case AMDI_V_ADD_I32: L32 R[l] = a[l] + b[l]; break;
    case AMDI_V_SUB_U32: case AMDI_V_SUB_I32: L32 R[l] = a[l] - b[l]; break;
    case AMDI_V_SUBREV_U32: L32 R[l] = b[l] - a[l]; break;
    case AMDI_V_LSHLREV_B32: L32 R[l] = b[l] << (a[l] & 31); break;
    case AMDI_V_LSHRREV_B32: L32 R[l] = b[l] >> (a[l] & 31); break;
    case AMDI_V_ASHRREV_I32: L32 R[l] = (uint32_t)((int32_t)b[l] >> (a[l] & 31)); break;
    case AMDI_V_AND_B32: L32 R[l] = a[l] & b[l]; break;
    case AMDI_V_OR_B32: L32 R[l] = a[l] | b[l]; break;
    case AMDI_V_XOR_B32: L32 R[l] = a[l] ^ b[l]; break;
    case AMDI_V_NOT_B32: L32 R[l] = ~a[l]; break;
    case AMDI_V_MUL_U32_U24: L32 R[l] = (a[l] & 0xffffff) * (b[l] & 0xffffff); break;
    case AMDI_V_MUL_LO_U32: L32 R[l] = a[l] * b[l]; break;
    case AMDI_V_MUL_HI_U32: L32 R[l] = (uint32_t)(((uint64_t)a[l] * b[l]) >> 32); break;
    case AMDI_V_MAD_U32_U24: L32 R[l] = (a[l] & 0xffffff) * (b[l] & 0xffffff) + c[l]; break;
    case AMDI_V_LSHL_ADD_U32: L32 R[l] = (a[l] << (b[l] & 31)) + c[l]; break;
    case AMDI_V_ADD_LSHL_U32: L32 R[l] = (a[l] + b[l]) << (c[l] & 31); break;
    case AMDI_V_ADD3_U32: L32 R[l] = a[l] + b[l] + c[l]; break;
    case AMDI_V_LSHL_OR_B32: L32 R[l] = (a[l] << (b[l] & 31)) | c[l]; break;
    case AMDI_V_AND_OR_B32: L32 R[l] = (a[l] & b[l]) | c[l]; break;
    case AMDI_V_OR3_B32: L32 R[l] = a[l] | b[l] | c[l]; break;
    case AMDI_V_XOR3_B32: L32 R[l] = a[l] ^ b[l] ^ c[l]; break;
    case AMDI_V_BFE_U32: L32 { uint32_t wd = c[l] & 31; R[l] = wd ? (a[l] >> (b[l] & 31)) & ((1u << wd) - 1) : 0; } break;
    case AMDI_V_MIN_U32: L32 R[l] = a[l] < b[l] ? a[l] : b[l]; break;
    case AMDI_V_MAX_U32: L32 R[l] = a[l] > b[l] ? a[l] : b[l]; break;
    case AMDI_V_MIN_I32: L32 R[l] = (int32_t)a[l] < (int32_t)b[l] ? a[l] : b[l]; break;
    case AMDI_V_MAX_I32: L32 R[l] = (int32_t)a[l] > (int32_t)b[l] ? a[l] : b[l]; break;
    case AMDI_V_CVT_F32_U32: L32 R[l] = f2u32((float)a[l]); break;
    case AMDI_V_CVT_F32_I32: L32 R[l] = f2u32((float)(int32_t)a[l]); break;
    default: return false;
    }
#undef L32
    put32(d, R, mai_exec(w), w->mask, W);
    return true;
}

static bool fast32(mai_wave *w, const amdi_inst *in)
{
    return w->g->d->wave == 64 ? fast32_w(w, in, 64) : fast32_w(w, in, 32);
}

/* 16-bit operands: a VGPR's half (true16 .h, gfx9's VOP3 op_sel), or a
 * scalar's low (or selected) half */
static inline __attribute__((always_inline)) const uint16_t *src16(const mai_wave *w, const amdi_inst *in, unsigned i, uint16_t *tmp, unsigned W)
{
    const amdi_opnd *o = &in->s[i];
    bool hi = (o->mod & AMDI_M_HI) || (in->enc == AMDI_E_VOP3 && w->g->d->t.fam == AMDI_GFX9 && (in->op_sel >> i & 1));
    if (o->kind == AMDI_O_VGPR) {
        const uint32_t *v = w->v + (size_t)o->reg * 64;
        if (hi)
            for (unsigned l = 0; l < W; l++) tmp[l] = (uint16_t)(v[l] >> 16);
        else
            for (unsigned l = 0; l < W; l++) tmp[l] = (uint16_t)v[l];
    } else {
        uint64_t x = mai_ssrc(w, o);
        uint16_t h = (uint16_t)(hi && o->kind != AMDI_O_CONST ? x >> 16 : x);
        for (unsigned l = 0; l < W; l++) tmp[l] = h;
    }
    return tmp;
}

/* the second fast path: 16-bit integer ops, the 32-bit ops with masks or
 * carries, 64-bit shifts and the integer and f32 compares, without abs/neg,
 * DPP or SDWA; false: the general path */
static inline __attribute__((always_inline)) bool fast_more_w(mai_wave *w, const amdi_inst *in, unsigned W)
{
    const mai_dispatch *d = w->g->d;
    amdi_op op = (amdi_op)in->op;
    uint64_t exec = mai_exec(w);
    switch (op) {
    case AMDI_V_MOV_B16: case AMDI_V_ADD_U16: case AMDI_V_SUB_U16: case AMDI_V_MUL_LO_U16: case AMDI_V_LSHRREV_B16:
    case AMDI_V_LSHLREV_B16: case AMDI_V_AND_B16: case AMDI_V_OR_B16: case AMDI_V_XOR_B16: {
        if (in->nd != 1 || in->d[0].kind != AMDI_O_VGPR) return false;
        uint16_t ta[64], tb[64], R[64];
        const uint16_t *a = src16(w, in, 0, ta, W), *b = in->ns > 1 ? src16(w, in, 1, tb, W) : NULL;
#define L16 for (unsigned l = 0; l < W; l++)
        switch (op) {
        case AMDI_V_MOV_B16: L16 R[l] = a[l]; break;
        case AMDI_V_ADD_U16: L16 R[l] = (uint16_t)(a[l] + b[l]); break;
        case AMDI_V_SUB_U16: L16 R[l] = (uint16_t)(a[l] - b[l]); break;
        case AMDI_V_MUL_LO_U16: L16 R[l] = (uint16_t)(a[l] * b[l]); break;
        case AMDI_V_LSHRREV_B16: L16 R[l] = (uint16_t)(b[l] >> (a[l] & 15)); break;
        case AMDI_V_LSHLREV_B16: L16 R[l] = (uint16_t)(b[l] << (a[l] & 15)); break;
        case AMDI_V_AND_B16: L16 R[l] = a[l] & b[l]; break;
        case AMDI_V_OR_B16: L16 R[l] = a[l] | b[l]; break;
        default: L16 R[l] = a[l] ^ b[l]; break;
        }
#undef L16
        uint32_t *v = w->v + (size_t)in->d[0].reg * 64;
        bool hi = (in->d[0].mod & AMDI_M_HI) || (d->t.fam == AMDI_GFX9 && in->enc == AMDI_E_VOP3 && (in->op_sel & 8));
        bool preserve = d->t.fam == AMDI_GFX11 || hi;
        /* the half written, the other kept (gfx9 zeroes the high half of a
         * low-half result); lanes outside EXEC keep everything */
        uint32_t keep = hi ? 0xffffu : preserve ? 0xffff0000u : 0;
        unsigned sh = hi ? 16 : 0;
        if (exec == (W == 64 ? ~0ull : 0xffffffffull))
            for (unsigned l = 0; l < W; l++) v[l] = (v[l] & keep) | (uint32_t)R[l] << sh;
        else
            for (unsigned l = 0; l < W; l++) {
                uint32_t m = 0u - (uint32_t)(exec >> l & 1);
                v[l] = (v[l] & (keep | ~m)) | ((uint32_t)R[l] << sh & m);
            }
        return true;
    }
    case AMDI_V_MUL_I32_I24: case AMDI_V_BFE_I32: case AMDI_V_MUL_HI_I32: case AMDI_V_MAD_I32_I24:
    case AMDI_V_CNDMASK_B32: case AMDI_V_ADD_CO_U32: case AMDI_V_SUB_CO_U32: case AMDI_V_ADDC_CO_U32:
    case AMDI_V_SUBB_CO_U32: {
        if (in->d[0].kind != AMDI_O_VGPR) return false;
        uint32_t t0[64], t1[64], t2[64], R[64];
        const uint32_t *a = src32(w, &in->s[0], t0, W), *b = src32(w, &in->s[1], t1, W);
        const uint32_t *c = op == AMDI_V_BFE_I32 || op == AMDI_V_MAD_I32_I24 ? src32(w, &in->s[2], t2, W) : NULL;
        uint64_t m = in->ns > 2 && !c ? mai_mask_of(w, &in->s[2]) : 0, co = 0;
#define L32 for (unsigned l = 0; l < W; l++)
        switch (op) {
        case AMDI_V_MUL_I32_I24: L32 R[l] = (uint32_t)((int64_t)((int32_t)(a[l] << 8) >> 8) * ((int32_t)(b[l] << 8) >> 8)); break;
        case AMDI_V_MAD_I32_I24: L32 R[l] = (uint32_t)((int64_t)((int32_t)(a[l] << 8) >> 8) * ((int32_t)(b[l] << 8) >> 8)) + c[l]; break;
        case AMDI_V_MUL_HI_I32: L32 R[l] = (uint32_t)((uint64_t)((int64_t)(int32_t)a[l] * (int32_t)b[l]) >> 32); break;
        case AMDI_V_BFE_I32:
            L32 {
                uint32_t off = b[l] & 31, wd = c[l] & 31, x = wd ? (a[l] >> off) & ((1u << wd) - 1) : 0;
                R[l] = wd ? (uint32_t)((int32_t)(x << (32 - wd)) >> (32 - wd)) : 0;
            }
            break;
        case AMDI_V_CNDMASK_B32: L32 R[l] = m >> l & 1 ? b[l] : a[l]; break;
        case AMDI_V_ADD_CO_U32: case AMDI_V_ADDC_CO_U32: {
            uint64_t cin = op == AMDI_V_ADDC_CO_U32 ? m : 0;
            L32 {
                uint64_t r = (uint64_t)a[l] + b[l] + (cin >> l & 1);
                R[l] = (uint32_t)r;
                co |= (r >> 32) << l;
            }
            break;
        }
        default: { /* sub, subb */
            uint64_t bw = op == AMDI_V_SUBB_CO_U32 ? m : 0;
            L32 {
                uint64_t bin = (uint64_t)b[l] + (bw >> l & 1);
                R[l] = (uint32_t)(a[l] - bin);
                co |= (uint64_t)(bin > a[l]) << l;
            }
            break;
        }
        }
#undef L32
        put32(w->v + (size_t)in->d[0].reg * 64, R, exec, w->mask, W);
        if (in->nd > 1) mai_write_mask(w, &in->d[1], co & exec);
        return true;
    }
    case AMDI_V_LSHLREV_B64: {
        if (in->d[0].kind != AMDI_O_VGPR || in->s[1].kind != AMDI_O_VGPR) return false;
        uint32_t t0[64];
        const uint32_t *a = src32(w, &in->s[0], t0, W), *b = w->v + (size_t)in->s[1].reg * 64;
        uint64_t R[64];
        for (unsigned l = 0; l < W; l++) R[l] = (b[l] | (uint64_t)b[64 + l] << 32) << (a[l] & 63);
        uint32_t *v = w->v + (size_t)in->d[0].reg * 64;
        for (unsigned l = 0; l < W; l++)
            if (exec >> l & 1) {
                v[l] = (uint32_t)R[l];
                v[64 + l] = (uint32_t)(R[l] >> 32);
            }
        return true;
    }
    default: break;
    }
    /* compares of 32-bit integers and f32 */
    char cty;
    unsigned cond;
    bool cx, sgn, cls;
    if (!cmp_info(op, &cty, &cond, &cx, &sgn, &cls) || cls || cty == 'h' || cty == 'd' || cty == 'l') return false;
    uint32_t t0[64], t1[64];
    const uint32_t *a = src32(w, &in->s[0], t0, W), *b = src32(w, &in->s[1], t1, W);
    uint64_t m = 0;
    if (cond & 0x100) {
        unsigned c = cond & 0xff;
        for (unsigned l = 0; l < W; l++)
            m |= (uint64_t)icmp(c, (int32_t)a[l], (int32_t)b[l], a[l], b[l], sgn) << l;
    } else {
        for (unsigned l = 0; l < W; l++) m |= (uint64_t)fcmp(cond, u2f32(a[l]), u2f32(b[l])) << l;
    }
    m &= exec;
    mai_write_mask(w, &in->d[0], m);
    if (in->nd > 1) mai_write_mask(w, &in->d[1], m);
    return true;
}

static bool fast_more(mai_wave *w, const amdi_inst *in)
{
    return w->g->d->wave == 64 ? fast_more_w(w, in, 64) : fast_more_w(w, in, 32);
}

bool mai_valu(mai_wave *w, const amdi_inst *in)
{
    if (amdi_is_mma((amdi_op)in->op)) return mai_mma(w, in);
    if ((in->flags & AMDI_F_PLAIN) && fast32(w, in)) return true;
    if ((in->flags & AMDI_F_NOMOD) && fast_more(w, in)) return true;
    vres o;
    if (!compute(w, in, &o)) return false;
    commit(w, in, &o);
    return true;
}

bool mai_vopd(mai_wave *w, const amdi_inst *x, const amdi_inst *y)
{
    /* both halves read their sources before either writes */
    vres ox, oy;
    if (!compute(w, x, &ox) || !compute(w, y, &oy)) return false;
    commit(w, x, &ox);
    commit(w, y, &oy);
    return true;
}
