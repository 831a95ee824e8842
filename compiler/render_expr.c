/* IR ops as C expressions (render_expr.h), shared by the C and GPU
 * renderers so the semantics are written once. */
#include "compiler/render_expr.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "compiler/ir_float.h"

/* The helpers the expressions call, with the integer types' names (i8 ...
 * u64); compilers drop the unused ones. Their algorithms are ir_float.h's
 * and interp_alu.c's. The prelude before them defines H (how a helper is
 * declared), HCQ_MEMCPY, HCQ_ISINF, HCQ_FABS, HCQ_SIGNBIT, HCQ_CLZLL and,
 * to round to f16 through the compiler's _Float16, HCQ_RH_FLOAT16. */
const char cc_expr_helpers[] =
    "typedef signed char i8; typedef unsigned char u8; typedef short i16; typedef unsigned short u16;\n"
    "typedef int i32; typedef unsigned u32; typedef long long i64; typedef unsigned long long u64;\n"
    "H u32 hcq_fbits(float f) { u32 u; HCQ_MEMCPY(&u, &f, 4); return u; }\n"
    "H float hcq_bitsf(u32 u) { float f; HCQ_MEMCPY(&f, &u, 4); return f; }\n"
    "H u64 hcq_dbits(double d) { u64 u; HCQ_MEMCPY(&u, &d, 8); return u; }\n"
    "H double hcq_bitsd(u64 u) { double d; HCQ_MEMCPY(&d, &u, 8); return d; }\n"
    "H float hcq_h2f(u16 h) {\n"
    "  u32 sign = (u32)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1f) return hcq_bitsf(sign | 0x7f800000u | (m << 13));\n"
    "  if (e == 0) return hcq_bitsf(sign | hcq_fbits((float)m * 5.9604644775390625e-8f));\n"
    "  return hcq_bitsf(sign | ((e + 112u) << 23) | (m << 13));\n"
    "}\n"
    "H u16 hcq_f2h_rne(float f) {\n"
    "  u32 x = hcq_fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return (u16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));\n"
    "  if (ax >= 0x477ff000u) return (u16)(sign | 0x7c00u);\n"
    "  if (ax >= 0x38800000u) { u32 m = ax - 0x38000000u; return (u16)(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13)); }\n"
    "  if (ax < 0x33000000u) return (u16)sign;\n"
    "  u32 e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;\n"
    "  u32 q = mant >> sh, rem = mant & ((1u << sh) - 1u), half = 1u << (sh - 1u);\n"
    "  if (rem > half || (rem == half && (q & 1u))) q++;\n"
    "  return (u16)(sign | q);\n"
    "}\n"
    "H u16 hcq_h2bits(float f) {\n"
    "  u32 x = hcq_fbits(f), ax = x & 0x7fffffffu;\n"
    "  if (ax <= 0x7f800000u) return hcq_f2h_rne(f);\n"
    "  u32 m = (ax >> 13) & 0x3ffu;\n"
    "  return (u16)(((x >> 16) & 0x8000u) | 0x7c00u | (m ? m : 0x200u));\n"
    "}\n"
    "H float hcq_b2f(u16 h) { return hcq_bitsf((u32)h << 16); }\n"
    "H u16 hcq_f2b_rne(float f) {\n"
    "  u32 x = hcq_fbits(f);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)((x >> 16) | 0x40u);\n"
    "  return (u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
    "}\n"
    "H u16 hcq_b2bits(float f) {\n"
    "  u32 x = hcq_fbits(f);\n"
    "  if ((x & 0x7fffffffu) <= 0x7f800000u) return (u16)(x >> 16);\n"
    "  return (u16)((x >> 16) | ((x & 0x7f0000u) ? 0 : 0x40u));\n"
    "}\n"
    /* rounding of results: RNE, NaN quieted; where the compiler has
     * _Float16 (F16C on x86) the C prelude asks for it: two instructions */
    "#ifdef HCQ_RH_FLOAT16\n"
    "H float hcq_rh(float x) { return (float)(_Float16)x; }\n"
    "#else\n"
    "H float hcq_rh(float x) { return hcq_h2f(hcq_f2h_rne(x)); }\n"
    "#endif\n"
    "H float hcq_rb(float x) { return hcq_b2f(hcq_f2b_rne(x)); }\n"
    "H float hcq_d2f_odd(double d) {\n"
    "  float f = (float)d;\n"
    "  if (d != d || (double)f == d) return f;\n"
    "  u32 u = hcq_fbits(f);\n"
    "  if (HCQ_ISINF(f)) u = (u & 0x80000000u) | 0x7f7fffffu;\n"
    "  else if (HCQ_FABS((double)f) > HCQ_FABS(d)) u -= 1;\n"
    "  return hcq_bitsf(u | 1u);\n"
    "}\n"
    "H float hcq_u2f_odd(u64 m) {\n"
    "  if (m < (1ull << 24)) return (float)m;\n"
    "  int sh = 64 - HCQ_CLZLL(m) - 24; u64 top = m >> sh;\n"
    "  if (m & ((1ull << sh) - 1)) top |= 1;\n"
    "  return (float)top * hcq_bitsf((u32)(127 + sh) << 23);\n"
    "}\n"
    "H float hcq_i2f_odd(i64 v) { u64 m = v < 0 ? 0 - (u64)v : (u64)v; float f = hcq_u2f_odd(m); return v < 0 ? -f : f; }\n"
    /* MAX: IEEE maxNum (a NaN operand loses to a number; both NaN: b),
     * +0 over -0 in either order. Written as selects, never branches: the
     * helper with early returns was measured (issue 16) making clang -O3
     * take about twice as long per link of a fused max/add chain (24 links
     * 18 s, 66 links still compiling after an hour), the optimizer
     * duplicating paths through each link's NaN and zero tests; as selects
     * a chain is straight-line code. Equal operands take the AND of their
     * bits (+0 from a +0/-0 pair, the value itself otherwise), computed
     * ahead of the select: a sign test, or a call on one arm of the select,
     * became a branch per lane that kept clang's SLP vectorizer from
     * packing a 16-accumulator max reduction (a row max ran 4-5x slower
     * than a row sum). */
    "H float hcq_maxf(float a, float b) {\n"
    "  float m = a > b ? a : b, z = hcq_bitsf(hcq_fbits(a) & hcq_fbits(b));\n"
    "  m = a == b ? z : m;\n"
    "  m = b != b ? a : m;\n"
    "  return a != a ? b : m;\n"
    "}\n"
    "H double hcq_maxd(double a, double b) {\n"
    "  double m = a > b ? a : b, z = hcq_bitsd(hcq_dbits(a) & hcq_dbits(b));\n"
    "  m = a == b ? z : m;\n"
    "  m = b != b ? a : m;\n"
    "  return a != a ? b : m;\n"
    "}\n"
    "H i64 hcq_f2s(double d, int bits) {\n"
    "  if (d != d) return 0;\n"
    "  double hi = (double)(1ull << (bits - 1)), lo = -hi;\n"
    "  if (d <= lo) return (i64)(0 - (1ull << (bits - 1)));\n"
    "  if (d >= hi) return (i64)((1ull << (bits - 1)) - 1);\n"
    "  return (i64)d;\n"
    "}\n"
    "H u64 hcq_f2u(double d, int bits) {\n"
    "  if (d != d || d <= 0) return 0;\n"
    "  double hi = bits == 64 ? 18446744073709551616.0 : (double)(1ull << bits);\n"
    "  if (d >= hi) return bits == 64 ? ~0ull : (1ull << bits) - 1;\n"
    "  return (u64)d;\n"
    "}\n"
    "#define HCQ_SDIV(T, U) \\\n"
    "  H T hcq_div_##T(T a, T b) { return b == 0 ? (T)0 : b == -1 ? (T)(U)(0 - (U)a) : (T)(a / b); } \\\n"
    "  H T hcq_mod_##T(T a, T b) { return b == 0 || b == -1 ? (T)0 : (T)(a % b); }\n"
    "#define HCQ_UDIV(T) \\\n"
    "  H T hcq_div_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \\\n"
    "  H T hcq_mod_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }\n"
    "HCQ_SDIV(i8, u8) HCQ_SDIV(i16, u16) HCQ_SDIV(i32, u32) HCQ_SDIV(i64, u64)\n"
    "HCQ_UDIV(u8) HCQ_UDIV(u16) HCQ_UDIV(u32) HCQ_UDIV(u64)\n";

const char *cc_expr_ctype(hcq_dtype t, bool cxx)
{
    switch (t) {
    case HCQ_BOOL: return cxx ? "bool" : "_Bool";
    case HCQ_F16:
    case HCQ_BF16:
    case HCQ_F32: return "float";
    case HCQ_F64: return "double";
    default: return hcq_dtype_name(t);
    }
}

const char *cc_expr_stype(hcq_dtype t, bool cxx)
{
    switch (t) {
    case HCQ_BOOL: return "u8";
    case HCQ_F16:
    case HCQ_BF16: return "u16";
    default: return cc_expr_ctype(t, cxx);
    }
}

/* the unsigned type wrapping arithmetic goes through */
static const char *utype(hcq_dtype t)
{
    switch (ir_dt_bits(t)) {
    case 8: return "u8";
    case 16: return "u16";
    case 32: return "u32";
    default: return "u64";
    }
}

static void emit_float_lit(cc_sb *b, hcq_dtype t, uint64_t lane)
{
    if (t == HCQ_F64) {
        double d = ir_bits_f64(lane);
        if (isfinite(d)) cc_sb_printf(b, "%a", d);
        else cc_sb_printf(b, "hcq_bitsd(0x%016" PRIx64 "ull)", lane);
        return;
    }
    float f = ir_bits_f32((uint32_t)lane);
    if (isfinite(f)) cc_sb_printf(b, "%af", (double)f);
    else cc_sb_printf(b, "hcq_bitsf(0x%08" PRIx32 "u)", (uint32_t)lane);
}

void cc_expr_const(cc_sb *b, const hcq_ir_op *o, bool cxx)
{
    hcq_dtype t = (hcq_dtype)o->dtype;
    uint64_t v = ir_const_lane(t, o->arg);
    if (t == HCQ_BOOL) cc_sb_printf(b, cxx ? "%s" : "(_Bool)%s", cxx ? (v ? "true" : "false") : (v ? "1" : "0"));
    else if (hcq_dtype_is_float(t)) emit_float_lit(b, t, v);
    else if (hcq_dtype_is_signed(t) && (int64_t)v > INT32_MIN && (int64_t)v <= INT32_MAX)
        cc_sb_printf(b, "((%s)%d)", cc_expr_ctype(t, cxx), (int)(int64_t)v);
    else if (!hcq_dtype_is_signed(t) && v <= INT32_MAX)
        cc_sb_printf(b, "((%s)%uu)", cc_expr_ctype(t, cxx), (unsigned)v);
    else
        cc_sb_printf(b, "((%s)0x%" PRIx64 "ull)", cc_expr_ctype(t, cxx), v); /* conversion wraps to the dtype */
}

static void R(cc_expr *e, unsigned j)
{
    hcq_ir_ref s = e->k->ops[e->at].src[j];
    e->operand(e, s);
    if (e->lane && ir_vec(&e->k->ops[s])) cc_sb_printf(e->b, ".v[%u]", e->lane - 1);
}
static void P(cc_expr *e, const char *s) { cc_sb_puts(e->b, s); }

static void int_alu(cc_expr *e, const hcq_ir_op *o, hcq_dtype t)
{
    const char *T = cc_expr_ctype(t, e->cxx), *U = utype(t);
    unsigned w = ir_dt_bits(t);
    cc_sb *b = e->b;
    static const char *sym[HCQ_OP_COUNT] = {[HCQ_OP_ADD] = "+", [HCQ_OP_SUB] = "-", [HCQ_OP_MUL] = "*",
                                            [HCQ_OP_AND] = "&", [HCQ_OP_OR] = "|",  [HCQ_OP_XOR] = "^"};
    switch (o->op) {
    case HCQ_OP_NEG: cc_sb_printf(b, "(%s)(%s)(0u - (%s)", T, U, U), R(e, 0), P(e, ")"); return;
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
        /* in the unsigned type: wraps by definition, with any compiler */
        cc_sb_printf(b, "(%s)(%s)((%s)", T, U, w < 32 ? "u32" : U), R(e, 0);
        cc_sb_printf(b, " %s (%s)", sym[o->op], w < 32 ? "u32" : U), R(e, 1), P(e, ")");
        return;
    case HCQ_OP_AND:
    case HCQ_OP_OR:
    case HCQ_OP_XOR: cc_sb_printf(b, "(%s)(", T), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")"); return;
    case HCQ_OP_MULACC:
        cc_sb_printf(b, "(%s)(%s)((%s)", T, U, w < 32 ? "u32" : U), R(e, 0);
        cc_sb_printf(b, " * (%s)", w < 32 ? "u32" : U), R(e, 1);
        cc_sb_printf(b, " + (%s)", w < 32 ? "u32" : U), R(e, 2), P(e, ")");
        return;
    case HCQ_OP_IDIV:
    case HCQ_OP_MOD:
        cc_sb_printf(b, "hcq_%s_%s(", o->op == HCQ_OP_IDIV ? "div" : "mod", T), R(e, 0), P(e, ", "), R(e, 1), P(e, ")");
        return;
    case HCQ_OP_SHL:
        cc_sb_printf(b, "(%s)((%s)", T, w > 32 ? "u64" : "u32"), R(e, 0), P(e, " << ("), R(e, 1);
        cc_sb_printf(b, " & %u))", w - 1);
        return;
    case HCQ_OP_SHR: cc_sb_printf(b, "(%s)(", T), R(e, 0), P(e, " >> ("), R(e, 1), cc_sb_printf(b, " & %u))", w - 1); return;
    case HCQ_OP_MAX: P(e, "("), R(e, 0), P(e, " > "), R(e, 1), P(e, " ? "), R(e, 0), P(e, " : "), R(e, 1), P(e, ")"); return;
    case HCQ_OP_CMPLT: P(e, "("), R(e, 0), P(e, " < "), R(e, 1), P(e, ")"); return;
    case HCQ_OP_CMPNE: P(e, "("), R(e, 0), P(e, " != "), R(e, 1), P(e, ")"); return;
    default: return;
    }
}

static void float_alu(cc_expr *e, const hcq_ir_op *o, hcq_dtype t)
{
    bool d = t == HCQ_F64, narrow = t == HCQ_F16 || t == HCQ_BF16;
    static const char *sym[HCQ_OP_COUNT] = {[HCQ_OP_ADD] = "+", [HCQ_OP_SUB] = "-", [HCQ_OP_MUL] = "*",
                                            [HCQ_OP_FDIV] = "/", [HCQ_OP_CMPLT] = "<", [HCQ_OP_CMPNE] = "!="};
    static const char *fn[HCQ_OP_COUNT] = {[HCQ_OP_EXP2] = "EXP2", [HCQ_OP_LOG2] = "LOG2", [HCQ_OP_SIN] = "SIN",
                                           [HCQ_OP_SQRT] = "SQRT", [HCQ_OP_TRUNC] = "TRUNC"};
    cc_sb *b = e->b;
    if (o->op == HCQ_OP_CMPLT || o->op == HCQ_OP_CMPNE) {
        P(e, "("), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")");
        return;
    }
    if (narrow) P(e, t == HCQ_F16 ? "hcq_rh(" : "hcq_rb(");
    switch (o->op) {
    /* the operand may be a negative literal: "-(-0x1p+0f)", never "--" */
    case HCQ_OP_NEG: P(e, "(-("), R(e, 0), P(e, "))"); break;
    case HCQ_OP_RECIP: cc_sb_printf(b, "(1.0%s / ", d ? "" : "f"), R(e, 0), P(e, ")"); break;
    case HCQ_OP_MAX: cc_sb_printf(b, "hcq_max%s(", d ? "d" : "f"), R(e, 0), P(e, ", "), R(e, 1), P(e, ")"); break;
    case HCQ_OP_MULACC:
        cc_sb_printf(b, "HCQ_FMA%s(", d ? "" : "F"), R(e, 0), P(e, ", "), R(e, 1), P(e, ", "), R(e, 2), P(e, ")");
        break;
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
    case HCQ_OP_FDIV: P(e, "("), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")"); break;
    default:
        if (o->op == HCQ_OP_EXP2 || o->op == HCQ_OP_LOG2 || o->op == HCQ_OP_SIN) e->uses_math = true;
        cc_sb_printf(b, "HCQ_%s%s(", fn[o->op], d ? "" : "F"), R(e, 0), P(e, ")");
        break;
    }
    if (narrow) P(e, ")");
}

static void emit_cast(cc_expr *e, hcq_dtype from, hcq_dtype to)
{
    cc_sb *b = e->b;
    bool ff = hcq_dtype_is_float(from), tf = hcq_dtype_is_float(to);
    bool narrow = to == HCQ_F16 || to == HCQ_BF16;
    const char *rnd = to == HCQ_F16 ? "hcq_rh(" : "hcq_rb(";
    if (from == to) {
        R(e, 0);
    } else if (to == HCQ_BOOL) {
        P(e, "("), R(e, 0), P(e, " != 0)");
    } else if (!ff && !tf) {
        cc_sb_printf(b, "(%s)", cc_expr_ctype(to, e->cxx)), R(e, 0);
    } else if (!ff) { /* integer or bool -> float */
        bool sgn = hcq_dtype_is_signed(from);
        /* up to 16 bits the f32 is exact and one rounding to bf16 follows;
         * wider integers go through round-to-odd. Never hcq_i2f_odd for
         * i16: clang lowers its |v| to abs.s16 + cvt.rn.f32.u16, which
         * ptxas (CUDA 13) turns into IABS + I2F.S16 (the low 16 bits read
         * as signed), so -32768 came out +32768 on sm_80/sm_90 (difftest
         * seed 5099; seen in the SASS the mock's executor runs) */
        if (to == HCQ_BF16 && ir_dt_bits(from) <= 16)
            P(e, "hcq_rb((float)"), R(e, 0), P(e, ")");
        else if (to == HCQ_BF16)
            cc_sb_printf(b, "hcq_rb(hcq_%s2f_odd((%s)", sgn ? "i" : "u", sgn ? "i64" : "u64"), R(e, 0), P(e, "))");
        else if (to == HCQ_F16)
            P(e, "hcq_rh((float)"), R(e, 0), P(e, ")"); /* exact or overflowing either way: see interp_alu.c */
        else
            cc_sb_printf(b, "(%s)", cc_expr_ctype(to, e->cxx)), R(e, 0);
    } else if (!tf) { /* float -> integer, saturating */
        bool sgn = hcq_dtype_is_signed(to);
        cc_sb_printf(b, "(%s)hcq_f2%c((double)", cc_expr_ctype(to, e->cxx), sgn ? 's' : 'u'), R(e, 0), cc_sb_printf(b, ", %u)", ir_dt_bits(to));
    } else if (from == HCQ_F64) {
        if (to == HCQ_F32) P(e, "(float)"), R(e, 0);
        else P(e, rnd), P(e, "hcq_d2f_odd("), R(e, 0), P(e, "))");
    } else { /* f32/f16/bf16 -> float */
        if (to == HCQ_F64) P(e, "(double)"), R(e, 0);
        else if (narrow) P(e, rnd), R(e, 0), P(e, ")");
        else R(e, 0);
    }
}

static void emit_bitcast(cc_expr *e, hcq_dtype from, hcq_dtype to)
{
    cc_sb *b = e->b;
    /* to the bit pattern ... */
    const char *open = "(", *close = ")";
    switch (from) {
    case HCQ_F16: open = "hcq_h2bits("; break;
    case HCQ_BF16: open = "hcq_b2bits("; break;
    case HCQ_F32: open = "hcq_fbits("; break;
    case HCQ_F64: open = "hcq_dbits("; break;
    default: break;
    }
    /* ... and from it */
    switch (to) {
    case HCQ_F16: P(e, "hcq_h2f((u16)"); break;
    case HCQ_BF16: P(e, "hcq_b2f((u16)"); break;
    case HCQ_F32: P(e, "hcq_bitsf((u32)"); break;
    case HCQ_F64: P(e, "hcq_bitsd((u64)"); break;
    default: cc_sb_printf(b, "((%s)", cc_expr_ctype(to, e->cxx)); break;
    }
    P(e, open), R(e, 0), P(e, close), P(e, ")");
}

/* A buffer element read: converts the stored form to the value form. */
static void emit_elem(cc_expr *e, hcq_dtype t)
{
    const char *boolean = e->cxx ? "(bool)(" : "(_Bool)(";
    const char *pre = t == HCQ_F16 ? "hcq_h2f(" : t == HCQ_BF16 ? "hcq_b2f(" : t == HCQ_BOOL ? boolean : "(";
    const hcq_ir_op *o = &e->k->ops[e->at];
    bool sgn = hcq_dtype_is_signed((hcq_dtype)e->k->ops[o->src[1]].dtype);
    P(e, pre), R(e, 0), cc_sb_printf(e->b, "[(%s)", sgn ? "i64" : "u64"), R(e, 1), P(e, "])");
}

/* ** vectors */
const char *cc_expr_vtag(char *buf, size_t size, hcq_dtype t, unsigned lanes)
{
    snprintf(buf, size, "%sx%u", hcq_dtype_name(t), lanes);
    return buf;
}

const char *cc_expr_decl_type(char *buf, size_t size, const hcq_ir_op *o, bool cxx)
{
    if (!ir_vec(o)) return cc_expr_ctype((hcq_dtype)o->dtype, cxx);
    char tag[16];
    snprintf(buf, size, "hcq_v%s", cc_expr_vtag(tag, sizeof tag, (hcq_dtype)o->dtype, ir_vec(o)));
    return buf;
}

/* value form <-> memory form of one lane (as the scalar load and store do) */
static const char *to_value(hcq_dtype t) { return t == HCQ_F16 ? "hcq_h2f" : t == HCQ_BF16 ? "hcq_b2f" : ""; }
static const char *to_memory(hcq_dtype t) { return t == HCQ_F16 ? "hcq_h2bits" : t == HCQ_BF16 ? "hcq_b2bits" : ""; }

static void vec_defs_one(cc_sb *b, hcq_dtype t, unsigned n, bool mem, bool cxx)
{
    char tag[16];
    cc_expr_vtag(tag, sizeof tag, t, n);
    const char *T = cc_expr_ctype(t, cxx), *S = cc_expr_stype(t, cxx);
    cc_sb_printf(b, "typedef struct { %s v[%u]; } hcq_v%s;\n", T, n, tag);
    cc_sb_printf(b, "H hcq_v%s hcq_splat_%s(%s x) { hcq_v%s r;", tag, tag, T, tag);
    for (unsigned j = 0; j < n; j++) cc_sb_printf(b, " r.v[%u] = x;", j);
    cc_sb_printf(b, " return r; }\n");
    cc_sb_printf(b, "H hcq_v%s hcq_set_%s(hcq_v%s a, int i, %s x) { a.v[i] = x; return a; }\n", tag, tag, tag, T);
    if (!mem) return;
    size_t bytes = n * hcq_dtype_size(t);
    cc_sb_printf(b, "typedef struct __attribute__((aligned(%zu))) { %s v[%u]; } hcq_m%s;\n", bytes, S, n, tag);
    cc_sb_printf(b, "H hcq_v%s hcq_ld_%s(hcq_m%s m) { hcq_v%s r;", tag, tag, tag, tag);
    for (unsigned j = 0; j < n; j++) cc_sb_printf(b, " r.v[%u] = %s(m.v[%u]);", j, to_value(t), j);
    cc_sb_printf(b, " return r; }\n");
    cc_sb_printf(b, "H hcq_m%s hcq_st_%s(hcq_v%s a) { hcq_m%s m;", tag, tag, tag, tag);
    for (unsigned j = 0; j < n; j++) cc_sb_printf(b, " m.v[%u] = %s(a.v[%u]);", j, to_memory(t), j);
    cc_sb_printf(b, " return m; }\n");
    cc_sb_printf(b, "H hcq_m%s hcq_vld_%s(const void *p) { hcq_m%s m; HCQ_MEMCPY(&m, p, sizeof m); return m; }\n", tag,
                 tag, tag);
    cc_sb_printf(b, "H void hcq_vst_%s(void *p, hcq_m%s m) { HCQ_MEMCPY(p, &m, sizeof m); }\n", tag, tag);
}

bool cc_expr_uses_vectors(const hcq_kernel *k)
{
    for (uint32_t i = 0; i < k->nops; i++)
        if (ir_vec(&k->ops[i])) return true;
    return false;
}

void cc_expr_vec_defs(cc_sb *b, const hcq_kernel *k, bool cxx)
{
    /* which (dtype, lanes) the kernel uses, and which of them in memory */
    uint8_t used[HCQ_DTYPE_COUNT][5] = {{0}}; /* lanes 2, 4, 8, 16 at log2 - 1; bit 0 value, bit 1 memory */
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        const hcq_ir_op *v = o->op == HCQ_OP_STORE ? &k->ops[o->src[2]] : o;
        if (!ir_vec(v)) continue;
        unsigned l = (unsigned)__builtin_ctz(ir_vec(v)) - 1;
        used[v->dtype][l] |= 1 | (o->op == HCQ_OP_LOAD || o->op == HCQ_OP_STORE ? 2 : 0);
    }
    for (unsigned t = 0; t < HCQ_DTYPE_COUNT; t++)
        for (unsigned l = 0; l < 4; l++)
            if (used[t][l]) vec_defs_one(b, (hcq_dtype)t, 2u << l, used[t][l] & 2, cxx);
}

void cc_expr_store(cc_expr *e)
{
    const hcq_ir_op *o = &e->k->ops[e->at];
    const hcq_ir_op *v = &e->k->ops[o->src[2]];
    hcq_dtype t = (hcq_dtype)e->k->ops[o->src[0]].dtype;
    bool sgn = hcq_dtype_is_signed((hcq_dtype)e->k->ops[o->src[1]].dtype);
    cc_sb *b = e->b;
    if (o->nsrc == 4) P(e, "if ("), R(e, 3), P(e, ") ");
    if (ir_vec(v)) {
        char tag[16];
        cc_expr_vtag(tag, sizeof tag, (hcq_dtype)v->dtype, ir_vec(v));
        cc_sb_printf(b, "HCQ_VST(%s, ", tag), R(e, 0), cc_sb_printf(b, ", (%s)", sgn ? "i64" : "u64"), R(e, 1);
        cc_sb_printf(b, ", hcq_st_%s(", tag), R(e, 2), P(e, "));\n");
        return;
    }
    R(e, 0), cc_sb_printf(b, "[(%s)", sgn ? "i64" : "u64"), R(e, 1), P(e, "] = ");
    const char *conv = t == HCQ_F16 ? "hcq_h2bits(" : t == HCQ_BF16 ? "hcq_b2bits(" : t == HCQ_BOOL ? "(u8)(" : "(";
    P(e, conv), R(e, 2), P(e, ");\n");
}

static void emit_vec_load(cc_expr *e, const hcq_ir_op *o)
{
    char tag[16];
    cc_expr_vtag(tag, sizeof tag, (hcq_dtype)o->dtype, ir_vec(o));
    bool sgn = hcq_dtype_is_signed((hcq_dtype)e->k->ops[o->src[1]].dtype);
    cc_sb_printf(e->b, "hcq_ld_%s(HCQ_VLD(%s, ", tag, tag), R(e, 0), cc_sb_printf(e->b, ", (%s)", sgn ? "i64" : "u64");
    R(e, 1), P(e, "))");
}

static void emit_scalar(cc_expr *e);

/* An elementwise op on vectors: the struct of its lanes' expressions, each
 * written as the scalar op with the operands' lane (R appends .v[lane]) */
static void emit_elementwise(cc_expr *e, const hcq_ir_op *o)
{
    char ty[32];
    cc_expr_decl_type(ty, sizeof ty, o, e->cxx);
    cc_sb_printf(e->b, e->cxx ? "%s{{" : "(%s){{", ty);
    for (unsigned j = 0; j < ir_vec(o); j++) {
        if (j) P(e, ", ");
        e->lane = j + 1;
        emit_scalar(e);
    }
    e->lane = 0;
    P(e, "}}");
}

void cc_expr_emit(cc_expr *e)
{
    const hcq_ir_op *o = &e->k->ops[e->at];
    e->lane = 0;
    bool lane_ops = o->op == HCQ_OP_VSPLAT || o->op == HCQ_OP_VSET || o->op == HCQ_OP_VGET;
    if (ir_vec(o) && !lane_ops && o->op != HCQ_OP_LOAD && o->op != HCQ_OP_DEFINE_ACC) emit_elementwise(e, o);
    else emit_scalar(e);
}

static void emit_scalar(cc_expr *e)
{
    const hcq_kernel *k = e->k;
    const hcq_ir_op *o = &k->ops[e->at];
    hcq_dtype from = (hcq_dtype)k->ops[o->src[0]].dtype;
    char tag[16];
    switch (o->op) {
    case HCQ_OP_VSPLAT:
        cc_sb_printf(e->b, "hcq_splat_%s(", cc_expr_vtag(tag, sizeof tag, (hcq_dtype)o->dtype, ir_vec(o))), R(e, 0), P(e, ")");
        return;
    case HCQ_OP_VSET:
        cc_sb_printf(e->b, "hcq_set_%s(", cc_expr_vtag(tag, sizeof tag, (hcq_dtype)o->dtype, ir_vec(o))), R(e, 0);
        cc_sb_printf(e->b, ", %u, ", (unsigned)o->arg), R(e, 1), P(e, ")");
        return;
    case HCQ_OP_VGET: R(e, 0), cc_sb_printf(e->b, ".v[%u]", (unsigned)o->arg); return;
    default: break;
    }
    switch (o->op) {
    case HCQ_OP_CAST: emit_cast(e, from, (hcq_dtype)o->dtype); return;
    case HCQ_OP_BITCAST: emit_bitcast(e, from, (hcq_dtype)o->dtype); return;
    case HCQ_OP_WHERE: P(e, "("), R(e, 0), P(e, " ? "), R(e, 1), P(e, " : "), R(e, 2), P(e, ")"); return;
    case HCQ_OP_DEFINE_ACC: R(e, 0); return;
    case HCQ_OP_LOAD:
        if (o->nsrc == 4) P(e, "("), R(e, 2), P(e, " ? ");
        if (ir_vec(o)) emit_vec_load(e, o);
        else emit_elem(e, (hcq_dtype)o->dtype);
        if (o->nsrc == 4) P(e, " : "), R(e, 3), P(e, ")");
        return;
    default: break;
    }
    if (hcq_dtype_is_float(from)) float_alu(e, o, from);
    else int_alu(e, o, from);
}

