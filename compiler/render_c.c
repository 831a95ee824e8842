/* The C renderer ("cpu" target): IR -> C11 that needs no headers, built by
 * clang into a shared object with the CPU ABI (cpu_abi.h).
 *
 * Shape: hcq_entry loops over its work-groups; inside, work-items are a
 * loop nest (x innermost, so clang can vectorise straight-line bodies).
 * Kernels with BARRIERs use the work-item-loop technique: the body is cut
 * at barriers into phases, each phase its own loop over the group's
 * work-items. RANGE/IF blocks that contain a barrier are uniform (the
 * verifier checks) and so stay outside the work-item loops; values that
 * live across a phase boundary go to per-work-item arrays indexed by `lid`.
 *
 * Semantics must match the interpreter bit for bit: -fwrapv for integer
 * wrap, helpers for the cases C leaves undefined (division by zero,
 * INT_MIN / -1, shift counts, float -> int), -ffp-contract=off, and the
 * same narrow-float algorithms as ir_float.h (emitted in the prelude). */
#include "compiler/render_c.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cpu_abi.h"
#include "compiler/ir_float.h"
#include "compiler/strbuf.h"

/* The helpers every kernel may use; clang drops the unused ones. Their
 * algorithms are ir_float.h's and interp_alu.c's. */
static const char prelude[] =
    "typedef signed char i8; typedef unsigned char u8; typedef short i16; typedef unsigned short u16;\n"
    "typedef int i32; typedef unsigned u32; typedef long long i64; typedef unsigned long long u64;\n"
    "typedef struct { u32 num_groups[3]; u32 local_size[3]; } hcq_cpu_dims;\n"
    "#define HCQ_EXPORT __attribute__((visibility(\"default\")))\n"
    "#define H static inline __attribute__((always_inline, unused))\n"
    "H u32 hcq_fbits(float f) { u32 u; __builtin_memcpy(&u, &f, 4); return u; }\n"
    "H float hcq_bitsf(u32 u) { float f; __builtin_memcpy(&f, &u, 4); return f; }\n"
    "H u64 hcq_dbits(double d) { u64 u; __builtin_memcpy(&u, &d, 8); return u; }\n"
    "H double hcq_bitsd(u64 u) { double d; __builtin_memcpy(&d, &u, 8); return d; }\n"
    /* storage conversions: exact bits both ways (ir_f16_to_f32, ir_f32_to_f16_bits, bf16 alike) */
    "H float hcq_h2f(u16 h) {\n"
    "  u32 sign = (u32)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1f) return hcq_bitsf(sign | 0x7f800000u | (m << 13));\n"
    "  if (e == 0) return hcq_bitsf(sign | hcq_fbits((float)m * 0x1p-24f));\n"
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
    /* rounding of results: RNE, NaN quieted; F16C does exactly that in two instructions */
    "#ifdef __FLT16_MANT_DIG__\n"
    "H float hcq_rh(float x) { return (float)(_Float16)x; }\n"
    "#else\n"
    "H float hcq_rh(float x) { return hcq_h2f(hcq_f2h_rne(x)); }\n"
    "#endif\n"
    "H float hcq_rb(float x) { return hcq_b2f(hcq_f2b_rne(x)); }\n"
    "H float hcq_d2f_odd(double d) {\n"
    "  float f = (float)d;\n"
    "  if (d != d || (double)f == d) return f;\n"
    "  u32 u = hcq_fbits(f);\n"
    "  if (__builtin_isinf(f)) u = (u & 0x80000000u) | 0x7f7fffffu;\n"
    "  else if (__builtin_fabs((double)f) > __builtin_fabs(d)) u -= 1;\n"
    "  return hcq_bitsf(u | 1u);\n"
    "}\n"
    "H float hcq_u2f_odd(u64 m) {\n"
    "  if (m < (1ull << 24)) return (float)m;\n"
    "  int sh = 64 - __builtin_clzll(m) - 24; u64 top = m >> sh;\n"
    "  if (m & ((1ull << sh) - 1)) top |= 1;\n"
    "  return __builtin_ldexpf((float)top, sh);\n"
    "}\n"
    "H float hcq_i2f_odd(i64 v) { u64 m = v < 0 ? 0 - (u64)v : (u64)v; float f = hcq_u2f_odd(m); return v < 0 ? -f : f; }\n"
    "H float hcq_maxf(float a, float b) {\n"
    "  if (a != a) return b; if (b != b) return a;\n"
    "  if (a == b) return __builtin_signbit(a) ? b : a;\n"
    "  return a > b ? a : b;\n"
    "}\n"
    "H double hcq_maxd(double a, double b) {\n"
    "  if (a != a) return b; if (b != b) return a;\n"
    "  if (a == b) return __builtin_signbit(a) ? b : a;\n"
    "  return a > b ? a : b;\n"
    "}\n"
    "H i64 hcq_f2s(double d, int bits) {\n"
    "  if (d != d) return 0;\n"
    "  double lo = -__builtin_ldexp(1.0, bits - 1), hi = __builtin_ldexp(1.0, bits - 1);\n"
    "  if (d <= lo) return (i64)lo;\n"
    "  if (d >= hi) return bits == 64 ? (i64)0x7fffffffffffffffll : (i64)hi - 1;\n"
    "  return (i64)d;\n"
    "}\n"
    "H u64 hcq_f2u(double d, int bits) {\n"
    "  if (d != d || d <= 0) return 0;\n"
    "  double hi = __builtin_ldexp(1.0, bits);\n"
    "  if (d >= hi) return bits == 64 ? ~0ull : (u64)hi - 1;\n"
    "  return (u64)d;\n"
    "}\n"
    "#define HCQ_SDIV(T) \\\n"
    "  H T hcq_div_##T(T a, T b) { return b == 0 ? (T)0 : b == -1 ? (T)(0 - (u64)a) : (T)(a / b); } \\\n"
    "  H T hcq_mod_##T(T a, T b) { return b == 0 || b == -1 ? (T)0 : (T)(a % b); }\n"
    "#define HCQ_UDIV(T) \\\n"
    "  H T hcq_div_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \\\n"
    "  H T hcq_mod_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }\n"
    "HCQ_SDIV(i8) HCQ_SDIV(i16) HCQ_SDIV(i32) HCQ_SDIV(i64) HCQ_UDIV(u8) HCQ_UDIV(u16) HCQ_UDIV(u32) HCQ_UDIV(u64)\n";

/* ** analysis for barrier kernels */
typedef struct rc {
    const hcq_kernel *k;
    cc_sb *b;
    bool *outer;      /* rendered outside the work-item loops: barriers and the blocks around them */
    uint32_t *phase;  /* per op inside a work-item loop: its phase; UINT32_MAX for outer ops */
    bool *cross;      /* value kept per work-item across phases */
    hcq_param_info *params;
    unsigned indent;
} rc;

static void mark_outer(rc *r)
{
    const hcq_kernel *k = r->k;
    hcq_ir_ref *stack = malloc((k->nops + 1) * sizeof *stack);
    uint32_t depth = 0, ph = 0;
    if (!stack) {
        r->b->oom = true;
        return;
    }
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) stack[depth++] = i;
        if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) {
            depth--;
            r->outer[i] = r->outer[o->src[0]]; /* an end is outer when its block is */
        }
        if (o->op == HCQ_OP_BARRIER) {
            r->outer[i] = true;
            for (uint32_t d = 0; d < depth; d++) r->outer[stack[d]] = true;
        }
    }
    /* ends were visited before later barriers could mark their openers */
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) r->outer[i] = r->outer[o->src[0]];
    }
    for (uint32_t i = 0; i < k->nops; i++) {
        if (r->outer[i]) {
            r->phase[i] = UINT32_MAX;
            ph++;
        } else {
            r->phase[i] = ph;
        }
    }
    free(stack);
}

/* Consts, params and ids render inline where they are used. */
static bool is_inline(const hcq_ir_op *o)
{
    return o->op == HCQ_OP_CONST || o->op == HCQ_OP_PARAM || o->op == HCQ_OP_SPECIAL || o->op == HCQ_OP_DEFINE_LOCAL;
}

static void mark_cross(rc *r)
{
    const hcq_kernel *k = r->k;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        for (unsigned j = 0; j < o->nsrc; j++) {
            hcq_ir_ref s = o->src[j];
            const hcq_ir_op *d = &k->ops[s];
            if (is_inline(d) || r->outer[s] || !ir_op_has_value(d)) continue;
            if (r->phase[i] != r->phase[s]) r->cross[s] = true;
        }
    }
}

/* ** names and types */
static const char *ctype(hcq_dtype t)
{
    switch (t) {
    case HCQ_BOOL: return "_Bool";
    case HCQ_F16:
    case HCQ_BF16:
    case HCQ_F32: return "float";
    case HCQ_F64: return "double";
    default: return hcq_dtype_name(t);
    }
}

static const char *stype(hcq_dtype t) /* in memory */
{
    switch (t) {
    case HCQ_BOOL: return "u8";
    case HCQ_F16:
    case HCQ_BF16: return "u16";
    default: return ctype(t);
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

static void emit_const(cc_sb *b, const hcq_ir_op *o)
{
    hcq_dtype t = (hcq_dtype)o->dtype;
    uint64_t v = ir_const_lane(t, o->arg);
    if (t == HCQ_BOOL) cc_sb_printf(b, "(_Bool)%d", (int)v);
    else if (hcq_dtype_is_float(t)) emit_float_lit(b, t, v);
    else if (hcq_dtype_is_signed(t) && (int64_t)v > INT32_MIN && (int64_t)v <= INT32_MAX)
        cc_sb_printf(b, "((%s)%d)", ctype(t), (int)(int64_t)v);
    else if (!hcq_dtype_is_signed(t) && v <= INT32_MAX)
        cc_sb_printf(b, "((%s)%uu)", ctype(t), (unsigned)v);
    else
        cc_sb_printf(b, "((%s)0x%" PRIx64 "ull)", ctype(t), v); /* wraps to the dtype, as -fwrapv clang does */
}

static const char *special_var(uint64_t arg)
{
    static const char *names[4][3] = {{"gx", "gy", "gz"}, {"lx", "ly", "lz"}, {"ngx", "ngy", "ngz"},
                                      {"lsx", "lsy", "lsz"}};
    return names[arg & 3][(arg >> 8) % 3];
}

/* Appends how op s is read from where op `at` sits. */
static void ref(rc *r, hcq_ir_ref s, hcq_ir_ref at)
{
    const hcq_ir_op *o = &r->k->ops[s];
    cc_sb *b = r->b;
    switch (o->op) {
    case HCQ_OP_CONST: emit_const(b, o); return;
    case HCQ_OP_SPECIAL: cc_sb_puts(b, special_var(o->arg)); return;
    case HCQ_OP_PARAM: cc_sb_printf(b, "%c%" PRIu64, (o->flags & HCQ_IR_FLAG_PTR) ? 'p' : 's', o->arg); return;
    case HCQ_OP_DEFINE_LOCAL: cc_sb_printf(b, "l%u", s); return;
    default: break;
    }
    if (r->cross[s])
        cc_sb_printf(b, "v%u_a[%s]", s, r->outer[at] ? "0" : "lid");
    else
        cc_sb_printf(b, "v%u", s);
}

/* ** expressions */
typedef struct ex {
    rc *r;
    hcq_ir_ref at;
} ex;

static void R(ex *e, unsigned j) { ref(e->r, e->r->k->ops[e->at].src[j], e->at); }
static void P(ex *e, const char *s) { cc_sb_puts(e->r->b, s); }

static void int_alu(ex *e, const hcq_ir_op *o, hcq_dtype t)
{
    const char *T = ctype(t);
    unsigned w = ir_dt_bits(t);
    cc_sb *b = e->r->b;
    static const char *sym[HCQ_OP_COUNT] = {[HCQ_OP_ADD] = "+", [HCQ_OP_SUB] = "-", [HCQ_OP_MUL] = "*",
                                            [HCQ_OP_AND] = "&", [HCQ_OP_OR] = "|",  [HCQ_OP_XOR] = "^"};
    switch (o->op) {
    case HCQ_OP_NEG: cc_sb_printf(b, "(%s)(0 - ", T), R(e, 0), P(e, ")"); return;
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
    case HCQ_OP_AND:
    case HCQ_OP_OR:
    case HCQ_OP_XOR: cc_sb_printf(b, "(%s)(", T), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")"); return;
    case HCQ_OP_MULACC: cc_sb_printf(b, "(%s)(", T), R(e, 0), P(e, " * "), R(e, 1), P(e, " + "), R(e, 2), P(e, ")"); return;
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

static void float_alu(ex *e, const hcq_ir_op *o, hcq_dtype t)
{
    bool d = t == HCQ_F64, narrow = t == HCQ_F16 || t == HCQ_BF16;
    const char *sfx = d ? "" : "f";
    static const char *sym[HCQ_OP_COUNT] = {[HCQ_OP_ADD] = "+", [HCQ_OP_SUB] = "-", [HCQ_OP_MUL] = "*",
                                            [HCQ_OP_FDIV] = "/", [HCQ_OP_CMPLT] = "<", [HCQ_OP_CMPNE] = "!="};
    static const char *fn[HCQ_OP_COUNT] = {[HCQ_OP_EXP2] = "exp2", [HCQ_OP_LOG2] = "log2", [HCQ_OP_SIN] = "sin",
                                           [HCQ_OP_SQRT] = "sqrt", [HCQ_OP_TRUNC] = "trunc"};
    cc_sb *b = e->r->b;
    if (o->op == HCQ_OP_CMPLT || o->op == HCQ_OP_CMPNE) {
        P(e, "("), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")");
        return;
    }
    if (narrow) P(e, t == HCQ_F16 ? "hcq_rh(" : "hcq_rb(");
    switch (o->op) {
    case HCQ_OP_NEG: P(e, "(-"), R(e, 0), P(e, ")"); break;
    case HCQ_OP_RECIP: cc_sb_printf(b, "(1.0%s / ", sfx), R(e, 0), P(e, ")"); break;
    case HCQ_OP_MAX: cc_sb_printf(b, "hcq_max%s(", d ? "d" : "f"), R(e, 0), P(e, ", "), R(e, 1), P(e, ")"); break;
    case HCQ_OP_MULACC: cc_sb_printf(b, "__builtin_fma%s(", sfx), R(e, 0), P(e, ", "), R(e, 1), P(e, ", "), R(e, 2), P(e, ")"); break;
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
    case HCQ_OP_FDIV: P(e, "("), R(e, 0), cc_sb_printf(b, " %s ", sym[o->op]), R(e, 1), P(e, ")"); break;
    default: cc_sb_printf(b, "__builtin_%s%s(", fn[o->op], sfx), R(e, 0), P(e, ")"); break;
    }
    if (narrow) P(e, ")");
}

static void emit_cast(ex *e, hcq_dtype from, hcq_dtype to)
{
    cc_sb *b = e->r->b;
    bool ff = hcq_dtype_is_float(from), tf = hcq_dtype_is_float(to);
    bool narrow = to == HCQ_F16 || to == HCQ_BF16;
    const char *rnd = to == HCQ_F16 ? "hcq_rh(" : "hcq_rb(";
    if (from == to) {
        R(e, 0);
    } else if (to == HCQ_BOOL) {
        P(e, "("), R(e, 0), P(e, " != 0)");
    } else if (!ff && !tf) {
        cc_sb_printf(b, "(%s)", ctype(to)), R(e, 0);
    } else if (!ff) { /* integer or bool -> float */
        bool sgn = hcq_dtype_is_signed(from);
        if (to == HCQ_BF16)
            cc_sb_printf(b, "hcq_rb(hcq_%s2f_odd((%s)", sgn ? "i" : "u", sgn ? "i64" : "u64"), R(e, 0), P(e, "))");
        else if (to == HCQ_F16)
            P(e, "hcq_rh((float)"), R(e, 0), P(e, ")"); /* exact or overflowing either way: see interp_alu.c */
        else
            cc_sb_printf(b, "(%s)", ctype(to)), R(e, 0);
    } else if (!tf) { /* float -> integer, saturating */
        bool sgn = hcq_dtype_is_signed(to);
        cc_sb_printf(b, "(%s)hcq_f2%c((double)", ctype(to), sgn ? 's' : 'u'), R(e, 0), cc_sb_printf(b, ", %u)", ir_dt_bits(to));
    } else if (from == HCQ_F64) {
        if (to == HCQ_F32) P(e, "(float)"), R(e, 0);
        else P(e, rnd), P(e, "hcq_d2f_odd("), R(e, 0), P(e, "))");
    } else { /* f32/f16/bf16 -> float */
        if (to == HCQ_F64) P(e, "(double)"), R(e, 0);
        else if (narrow) P(e, rnd), R(e, 0), P(e, ")");
        else R(e, 0);
    }
}

static void emit_bitcast(ex *e, hcq_dtype from, hcq_dtype to)
{
    cc_sb *b = e->r->b;
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
    default: cc_sb_printf(b, "((%s)", ctype(to)); break;
    }
    P(e, open), R(e, 0), P(e, close), P(e, ")");
}

/* A buffer element read: converts the stored form to the value form. */
static void emit_elem(ex *e, hcq_dtype t)
{
    const char *pre = t == HCQ_F16 ? "hcq_h2f(" : t == HCQ_BF16 ? "hcq_b2f(" : t == HCQ_BOOL ? "(_Bool)(" : "(";
    const hcq_ir_op *o = &e->r->k->ops[e->at];
    bool sgn = hcq_dtype_is_signed((hcq_dtype)e->r->k->ops[o->src[1]].dtype);
    P(e, pre), R(e, 0), cc_sb_printf(e->r->b, "[(%s)", sgn ? "i64" : "u64"), R(e, 1), P(e, "])");
}

static void emit_expr(ex *e)
{
    const hcq_kernel *k = e->r->k;
    const hcq_ir_op *o = &k->ops[e->at];
    hcq_dtype from = (hcq_dtype)k->ops[o->src[0]].dtype;
    switch (o->op) {
    case HCQ_OP_CAST: emit_cast(e, from, (hcq_dtype)o->dtype); return;
    case HCQ_OP_BITCAST: emit_bitcast(e, from, (hcq_dtype)o->dtype); return;
    case HCQ_OP_WHERE: P(e, "("), R(e, 0), P(e, " ? "), R(e, 1), P(e, " : "), R(e, 2), P(e, ")"); return;
    case HCQ_OP_DEFINE_ACC: R(e, 0); return;
    case HCQ_OP_LOAD:
        if (o->nsrc == 4) P(e, "("), R(e, 2), P(e, " ? ");
        emit_elem(e, (hcq_dtype)o->dtype);
        if (o->nsrc == 4) P(e, " : "), R(e, 3), P(e, ")");
        return;
    default: break;
    }
    if (hcq_dtype_is_float(from))
        float_alu(e, o, from);
    else
        int_alu(e, o, from);
}

/* ** statements */
static void line_start(rc *r) { cc_sb_printf(r->b, "%*s", (int)(2 * r->indent), ""); }

static void emit_store(rc *r, hcq_ir_ref i)
{
    const hcq_ir_op *o = &r->k->ops[i];
    ex e = {r, i};
    hcq_dtype t = (hcq_dtype)r->k->ops[o->src[0]].dtype;
    bool sgn = hcq_dtype_is_signed((hcq_dtype)r->k->ops[o->src[1]].dtype);
    if (o->nsrc == 4) P(&e, "if ("), R(&e, 3), P(&e, ") ");
    R(&e, 0), cc_sb_printf(r->b, "[(%s)", sgn ? "i64" : "u64"), R(&e, 1), P(&e, "] = ");
    const char *conv = t == HCQ_F16 ? "hcq_h2bits(" : t == HCQ_BF16 ? "hcq_b2bits(" : t == HCQ_BOOL ? "(u8)(" : "(";
    P(&e, conv), R(&e, 2), P(&e, ");\n");
}

static void emit_op(rc *r, hcq_ir_ref i)
{
    const hcq_ir_op *o = &r->k->ops[i];
    ex e = {r, i};
    cc_sb *b = r->b;
    if (is_inline(o) || o->op == HCQ_OP_NOOP) return;
    if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) r->indent--;
    line_start(r);
    switch (o->op) {
    case HCQ_OP_BARRIER: cc_sb_printf(b, "/* barrier (op %u) */\n", i); return;
    case HCQ_OP_ENDRANGE:
    case HCQ_OP_ENDIF: cc_sb_printf(b, "}\n"); return;
    case HCQ_OP_STORE: emit_store(r, i); return;
    case HCQ_OP_ASSIGN: R(&e, 0), P(&e, " = "), R(&e, 1), P(&e, ";\n"); return;
    case HCQ_OP_IF:
        P(&e, "if ("), R(&e, 0), P(&e, ") {\n");
        r->indent++;
        return;
    case HCQ_OP_RANGE: {
        const char *T = ctype((hcq_dtype)o->dtype);
        cc_sb_printf(b, "for (%s v%u = ", T, i), R(&e, 0), cc_sb_printf(b, "; v%u < ", i), R(&e, 1);
        cc_sb_printf(b, "; v%u++) {\n", i);
        r->indent++;
        return;
    }
    default: break;
    }
    if (r->cross[i])
        cc_sb_printf(b, "v%u_a[lid] = ", i);
    else
        cc_sb_printf(b, "%s v%u = ", ctype((hcq_dtype)o->dtype), i);
    emit_expr(&e);
    cc_sb_printf(b, ";\n");
}

static void open_wi_loop(rc *r)
{
    line_start(r);
    cc_sb_printf(r->b, "for (i32 lz = 0; lz < lsz; lz++) for (i32 ly = 0; ly < lsy; ly++) "
                       "for (i32 lx = 0; lx < lsx; lx++) {\n");
    r->indent++;
    line_start(r);
    cc_sb_printf(r->b, "const i32 lid = (lz * lsy + ly) * lsx + lx; (void)lid;\n");
}

static void close_wi_loop(rc *r)
{
    r->indent--;
    line_start(r);
    cc_sb_printf(r->b, "}\n");
}

static void emit_body(rc *r)
{
    bool in_loop = false;
    for (uint32_t i = 0; i < r->k->nops; i++) {
        const hcq_ir_op *o = &r->k->ops[i];
        if (is_inline(o) || o->op == HCQ_OP_NOOP) continue;
        if (r->outer[i] && in_loop) {
            close_wi_loop(r);
            in_loop = false;
        }
        if (!r->outer[i] && !in_loop) {
            open_wi_loop(r);
            in_loop = true;
        }
        emit_op(r, i);
    }
    if (in_loop) close_wi_loop(r);
}

/* ** the entry point */
static void emit_params(rc *r, uint32_t nparams)
{
    cc_sb *b = r->b;
    for (uint32_t p = 0; p < nparams; p++) {
        const hcq_param_info *pi = &r->params[p];
        hcq_dtype t = (hcq_dtype)pi->dtype;
        if (pi->is_buffer) {
            cc_sb_printf(b, "  %s *p%u; __builtin_memcpy(&p%u, ka + %u, 8);\n", stype(t), p, p, pi->offset);
            continue;
        }
        cc_sb_printf(b, "  %s s%u; { %s raw; __builtin_memcpy(&raw, ka + %u, %u); s%u = ", ctype(t), p, stype(t),
                     pi->offset, pi->size, p);
        if (t == HCQ_F16) cc_sb_printf(b, "hcq_h2f(raw); }\n");
        else if (t == HCQ_BF16) cc_sb_printf(b, "hcq_b2f(raw); }\n");
        else if (t == HCQ_BOOL) cc_sb_printf(b, "raw != 0; }\n");
        else cc_sb_printf(b, "raw; }\n");
    }
}

static void emit_meta(rc *r, uint32_t nparams, uint32_t kernarg_size)
{
    cc_sb *b = r->b;
    cc_sb_printf(b, "HCQ_EXPORT const char hcq_name[] = \"%s\";\n", r->k->name); /* names are printable, no quotes */
    cc_sb_printf(b, "HCQ_EXPORT const u32 hcq_meta[] = {0x%08xu, %uu, %uu, %uu, %uu", HCQ_CPU_ABI_MAGIC,
                 HCQ_CPU_ABI_VERSION, nparams, kernarg_size, hcq_kernel_local_bytes(r->k));
    for (uint32_t p = 0; p < nparams; p++)
        cc_sb_printf(b, ", %uu, 0x%xu", r->params[p].offset,
                     r->params[p].size | (uint32_t)r->params[p].is_buffer << 16 | (uint32_t)r->params[p].dtype << 24);
    cc_sb_printf(b, "};\n\n");
}

static void emit_group_scope(rc *r)
{
    const hcq_kernel *k = r->k;
    cc_sb *b = r->b;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_DEFINE_LOCAL) /* zeroed per group, as the interpreter does */
            cc_sb_printf(b, "    %s l%u[%" PRIu64 "] __attribute__((aligned(16))) = {0};\n", stype((hcq_dtype)o->dtype),
                         i, o->arg);
    }
    for (uint32_t i = 0; i < k->nops; i++)
        if (r->cross[i]) cc_sb_printf(b, "    %s v%u_a[W];\n", ctype((hcq_dtype)k->ops[i].dtype), i);
}

static void emit_entry(rc *r, uint32_t nparams)
{
    cc_sb *b = r->b;
    cc_sb_printf(b, "HCQ_EXPORT void hcq_entry(const u8 *ka, const hcq_cpu_dims *dims, u64 gb, u64 ge)\n{\n");
    cc_sb_printf(b, "  (void)ka;\n");
    emit_params(r, nparams);
    cc_sb_printf(b, "  const i32 ngx = (i32)dims->num_groups[0], ngy = (i32)dims->num_groups[1], "
                    "ngz = (i32)dims->num_groups[2];\n"
                    "  const i32 lsx = (i32)dims->local_size[0], lsy = (i32)dims->local_size[1], "
                    "lsz = (i32)dims->local_size[2];\n"
                    "  const i32 W = lsx * lsy * lsz; (void)W; (void)ngz;\n"
                    "  for (u64 g = gb; g < ge; g++) {\n"
                    "    const i32 gx = (i32)(g %% (u32)ngx), gy = (i32)(g / (u32)ngx %% (u32)ngy), "
                    "gz = (i32)(g / (u32)ngx / (u32)ngy);\n"
                    "    (void)gx; (void)gy; (void)gz;\n");
    emit_group_scope(r);
    r->indent = 2;
    emit_body(r);
    cc_sb_printf(b, "  }\n}\n");
}

hcq_status cc_render_c(const hcq_kernel *k, char **source_out)
{
    hcq_status st = hcq_kernel_verify(k);
    if (st) return st;
    cc_sb b = {0};
    rc r = {.k = k, .b = &b};
    uint32_t nparams = hcq_kernel_param_count(k), n = k->nops ? k->nops : 1;
    r.outer = calloc(n, sizeof *r.outer);
    r.phase = calloc(n, sizeof *r.phase);
    r.cross = calloc(n, sizeof *r.cross);
    r.params = calloc(nparams ? nparams : 1, sizeof *r.params);
    if (!r.outer || !r.phase || !r.cross || !r.params) {
        b.oom = true;
    } else {
        uint32_t kernarg_size = hcq_kernel_param_layout(k, r.params);
        mark_outer(&r);
        mark_cross(&r);
        cc_sb_printf(&b, "/* kernel '%s': generated by hcq for the cpu target */\n", k->name);
        cc_sb_puts(&b, prelude);
        cc_sb_puts(&b, "\n");
        emit_meta(&r, nparams, kernarg_size);
        emit_entry(&r, nparams);
    }
    free(r.outer);
    free(r.phase);
    free(r.cross);
    free(r.params);
    char *src = cc_sb_take(&b, "C source");
    if (!src) return HCQ_ENOMEM;
    *source_out = src;
    return HCQ_OK;
}
