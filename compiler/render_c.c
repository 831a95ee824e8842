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
 * Semantics must match the interpreter bit for bit: the expressions are
 * render_expr.c's (shared with the GPU renderer: wrapping through unsigned
 * types, helpers for the cases C leaves undefined), -ffp-contract=off, and
 * the same narrow-float algorithms as ir_float.h (emitted in the prelude). */
#include "compiler/render_c.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cpu_abi.h"
#include "compiler/ir_float.h"
#include "compiler/render_expr.h"
#include "compiler/strbuf.h"

/* What the shared helpers and expressions (render_expr.h) need from C:
 * clang builtins, no headers. */
static const char prelude[] =
    "#define H static inline __attribute__((always_inline, unused))\n"
    "#define HCQ_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)\n"
    "#define HCQ_ISINF(x) __builtin_isinf(x)\n#define HCQ_FABS(x) __builtin_fabs(x)\n"
    "#define HCQ_SIGNBIT(x) __builtin_signbit(x)\n#define HCQ_CLZLL(x) __builtin_clzll(x)\n"
    "#define HCQ_SINF(x) __builtin_sinf(x)\n#define HCQ_SIN(x) __builtin_sin(x)\n"
    "#define HCQ_EXP2F(x) hcq_exp2f(x)\n#define HCQ_EXP2(x) __builtin_exp2(x)\n"
    "#define HCQ_LOG2F(x) hcq_log2f(x)\n#define HCQ_LOG2(x) __builtin_log2(x)\n"
    "#define HCQ_SQRTF(x) __builtin_sqrtf(x)\n#define HCQ_SQRT(x) __builtin_sqrt(x)\n"
    "#define HCQ_TRUNCF(x) __builtin_truncf(x)\n#define HCQ_TRUNC(x) __builtin_trunc(x)\n"
    "#define HCQ_FMAF(a, b, c) __builtin_fmaf(a, b, c)\n#define HCQ_FMA(a, b, c) __builtin_fma(a, b, c)\n"
    /* f16 rounding in hardware where the target has it (F16C: two instructions) */
    "#ifdef __FLT16_MANT_DIG__\n#define HCQ_RH_FLOAT16 1\n#endif\n";

/* after the helpers (their types): f32 exp2 and log2 that clang vectorises
 * (libm's exp2f/log2f are calls, which keep every loop that holds one
 * scalar: softmax, exp, log, pow, sigmoid, ...), then the CPU ABI's.
 *
 * exp2 computes in float (as many lanes per vector as the loads; in double
 * it ran half as fast, and clang's SLP vectorizer packed only two lanes of
 * a 16-accumulator sum of exps): x = n + f with n = round(x) (the 1.5 *
 * 2^23 trick leaves n in the low bits of t), |f| <= 1/2, 2^f = 1 + f * q(f)
 * with q Taylor's to f^7 (truncation below 2^-27 relative; the 1 + f * q
 * form keeps q's rounding error under a quarter ulp of the sum), times 2^n
 * as two powers of two so n in [-151, 129] needs no denormal or infinite
 * scale (overflow to inf and underflow through denormals then round
 * once). x is clamped to [-151, 129] first (NaN passes: comparisons are
 * false). Within 1 ulp of the correctly rounded value for every one of the
 * 2^32 floats (checked exhaustively against (float)exp2((double)x) when it
 * was written; 0.4 % differ by 1 ulp).
 * log2 computes in double and rounds once to float at the end: the
 * correctly rounded value except next to a tie. Both are within
 * HCQ_IR_TRANSCENDENTAL_ULP (2) of the exact value; tests/unit/
 * test_render_cpu_math.c holds them to 1 ulp of the double function over a
 * sweep of 2^20 floats.
 *   log2: x = 2^e * m from the bits of (double)x (a float denormal is a
 *     normal double), m in [sqrt(1/2), sqrt(2)), and log2 m = 2/ln2 *
 *     atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^13
 *     (truncation below 2^-34); 0, inf, negatives and NaN by selects. */
static const char prelude_abi[] =
    "H float hcq_exp2f(float x) {\n"
    "  float d = x > 129.0f ? 129.0f : x;\n"
    "  d = d < -151.0f ? -151.0f : d;\n"
    "  float t = d + 0x1.8p23f, f = d - (t - 0x1.8p23f);\n"
    "  i32 n = (i32)(hcq_fbits(t) & 0x3fffffu) - 0x200000, n1 = n >> 1, n2 = n - n1;\n"
    "  float q = 0x1.ffcbfcp-17f;\n"
    "  q = q * f + 0x1.430912p-13f; q = q * f + 0x1.5d87fep-10f; q = q * f + 0x1.3b2ab6p-7f;\n"
    "  q = q * f + 0x1.c6b08ep-5f; q = q * f + 0x1.ebfbe0p-3f; q = q * f + 0x1.62e430p-1f;\n"
    "  float p = 1.0f + f * q;\n"
    "  return p * hcq_bitsf((u32)(n1 + 127) << 23) * hcq_bitsf((u32)(n2 + 127) << 23);\n"
    "}\n"
    "H float hcq_log2f(float x) {\n"
    "  u64 b = hcq_dbits((double)x);\n"
    "  double m = hcq_bitsd((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);\n"
    "  i32 e = (i32)((b >> 52) & 0x7ffu) - 1023;\n"
    "  i32 big = m > 0x1.6a09e667f3bcdp+0;\n"
    "  m = big ? m * 0.5 : m;\n"
    "  e += big;\n"
    "  double s = (m - 1.0) / (m + 1.0), z = s * s;\n"
    "  double p = 0x1.c68f568d31761p-3;\n"
    "  p = p * z + 0x1.0c9a84994022dp-2; p = p * z + 0x1.484b13d7c02a9p-2; p = p * z + 0x1.a61762a7adedap-2;\n"
    "  p = p * z + 0x1.2776c50ef9bfep-1; p = p * z + 0x1.ec709dc3a03fep-1; p = p * z + 0x1.71547652b82fep+1;\n"
    "  float r = (float)((double)e + s * p);\n"
    "  r = x == __builtin_inff() ? x : r;\n"
    "  r = x == 0.0f ? -__builtin_inff() : r;\n"
    "  return x < 0.0f || x != x ? __builtin_nanf(\"\") : r;\n"
    "}\n"
    "typedef struct { u32 num_groups[3]; u32 local_size[3]; } hcq_cpu_dims;\n"
    "#define HCQ_EXPORT __attribute__((visibility(\"default\")))\n";

/* ** analysis for barrier kernels */
typedef struct rc {
    const hcq_kernel *k;
    cc_sb *b;
    bool *outer;      /* rendered outside the work-item loops: barriers and the blocks around them */
    uint32_t *phase;  /* per op inside a work-item loop: its phase; UINT32_MAX for outer ops */
    bool *cross;      /* value kept per work-item across phases */
    bool *hoist;      /* lane-uniform: computed once per work-group, before the work-item loops */
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

/* Values that are the same for every work-item of a group (built from
 * constants, params, group ids and sizes, and loads of such addresses) at
 * the top of the kernel, before its first barrier, loop or branch (and for
 * loads, before its first store), are computed once per work-group ahead
 * of the work-item loops, as a GPU
 * computes them once per wave. Besides saving the work per item, this keeps
 * clang's loop vectorizer from seeing them: a lane-uniform chain of maxes
 * inside the work-item loop (`x = maximum(x + 0.25, -10)` on a 1-element
 * tensor, or one broadcast into a larger one) made clang -O3 about twice as
 * slow per link (24 links 5 s, 30 over a minute; the same chain on varying
 * values compiled in milliseconds), its vectorizer walking each link's
 * several uses of the previous one again for every path. Hoisting a load is
 * sound only before the first store: no item has written memory yet, and
 * what other items write without a barrier in between is a race on a GPU
 * too. Accumulators and everything after a block opens stay per item. */
static void mark_hoist(rc *r)
{
    const hcq_kernel *k = r->k;
    bool stored = false;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_BARRIER || o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) return;
        stored = stored || o->op == HCQ_OP_STORE;
        if (is_inline(o) || !ir_op_has_value(o) || o->op == HCQ_OP_DEFINE_ACC) continue;
        if (o->op == HCQ_OP_LOAD && stored) continue; /* it may read what an item stored */
        bool uniform = true;
        for (unsigned j = 0; j < o->nsrc && uniform; j++) {
            const hcq_ir_op *d = &k->ops[o->src[j]];
            if (d->op == HCQ_OP_SPECIAL) uniform = (d->arg & 0xff) != HCQ_SPECIAL_LOCAL_ID;
            else if (!is_inline(d)) uniform = r->hoist[o->src[j]];
        }
        r->hoist[i] = uniform;
    }
}

static void mark_cross(rc *r)
{
    const hcq_kernel *k = r->k;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        for (unsigned j = 0; j < o->nsrc; j++) {
            hcq_ir_ref s = o->src[j];
            const hcq_ir_op *d = &k->ops[s];
            if (is_inline(d) || r->outer[s] || r->hoist[s] || !ir_op_has_value(d)) continue;
            if (r->phase[i] != r->phase[s]) r->cross[s] = true;
        }
    }
}

/* ** names and types */
/* value and memory types: C spelling (_Bool) */
static const char *ctype(hcq_dtype t) { return cc_expr_ctype(t, false); }
static const char *stype(hcq_dtype t) { return cc_expr_stype(t, false); }

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
    case HCQ_OP_CONST: cc_expr_const(b, o, false); return;
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

static void operand(cc_expr *e, hcq_ir_ref s) { ref(e->user, s, e->at); }
static void R(cc_expr *e, unsigned j) { operand(e, e->k->ops[e->at].src[j]); }
static void P(cc_expr *e, const char *s) { cc_sb_puts(e->b, s); }

static void line_start(rc *r) { cc_sb_printf(r->b, "%*s", (int)(2 * r->indent), ""); }

static void emit_store(rc *r, hcq_ir_ref i)
{
    cc_expr e = {.b = r->b, .k = r->k, .at = i, .operand = operand, .user = r};
    cc_expr_store(&e);
}

static void emit_op(rc *r, hcq_ir_ref i)
{
    const hcq_ir_op *o = &r->k->ops[i];
    cc_expr e = {.b = r->b, .k = r->k, .at = i, .operand = operand, .user = r};
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
    char ty[32];
    if (r->cross[i])
        cc_sb_printf(b, "v%u_a[lid] = ", i);
    else
        cc_sb_printf(b, "%s v%u = ", cc_expr_decl_type(ty, sizeof ty, o, false), i);
    cc_expr_emit(&e);
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
        if (is_inline(o) || o->op == HCQ_OP_NOOP || r->hoist[i]) continue;
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
    char ty[32];
    for (uint32_t i = 0; i < k->nops; i++)
        if (r->cross[i]) cc_sb_printf(b, "    %s v%u_a[W];\n", cc_expr_decl_type(ty, sizeof ty, &k->ops[i], false), i);
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
    for (uint32_t i = 0; i < r->k->nops; i++)
        if (r->hoist[i]) emit_op(r, i);
    emit_body(r);
    cc_sb_printf(b, "  }\n}\n");
}

hcq_status cc_render_c(const hcq_kernel *k, char **source_out)
{
    hcq_status st = hcq_kernel_verify(k);
    if (st) return st;
    /* the CPU has no matrix cores, and a work-item here is not a lane of a warp */
    for (uint32_t i = 0; i < k->nops; i++)
        if (k->ops[i].op == HCQ_OP_MMA)
            return base_err(HCQ_ENOTSUP, "kernel '%s' op %u (mma): the cpu target has no matrix multiply-accumulate "
                            "(hcq_target_mma_kinds lists none for it); build the product from mulacc instead", k->name, i);
    cc_sb b = {0};
    rc r = {.k = k, .b = &b};
    uint32_t nparams = hcq_kernel_param_count(k), n = k->nops ? k->nops : 1;
    r.outer = calloc(n, sizeof *r.outer);
    r.phase = calloc(n, sizeof *r.phase);
    r.cross = calloc(n, sizeof *r.cross);
    r.hoist = calloc(n, sizeof *r.hoist);
    r.params = calloc(nparams ? nparams : 1, sizeof *r.params);
    if (!r.outer || !r.phase || !r.cross || !r.hoist || !r.params) {
        b.oom = true;
    } else {
        uint32_t kernarg_size = hcq_kernel_param_layout(k, r.params);
        mark_outer(&r);
        mark_hoist(&r);
        mark_cross(&r);
        cc_sb_printf(&b, "/* kernel '%s': generated by hcq for the cpu target */\n", k->name);
        cc_sb_puts(&b, prelude);
        cc_sb_puts(&b, cc_expr_helpers);
        cc_sb_puts(&b, prelude_abi);
        if (cc_expr_uses_vectors(k)) { /* only then: a scalar kernel's source stays as it was */
            /* vector accesses through memcpy: the cpu target assumes no alignment (compiler.h) */
            cc_sb_puts(&b, "#define HCQ_VLD(tag, b, i) hcq_vld_##tag(&(b)[i])\n"
                           "#define HCQ_VST(tag, b, i, m) hcq_vst_##tag(&(b)[i], m)\n");
            cc_expr_vec_defs(&b, k, false);
        }
        cc_sb_puts(&b, "\n");
        emit_meta(&r, nparams, kernarg_size);
        emit_entry(&r, nparams);
    }
    free(r.outer);
    free(r.phase);
    free(r.cross);
    free(r.hoist);
    free(r.params);
    char *src = cc_sb_take(&b, "C source");
    if (!src) return HCQ_ENOMEM;
    *source_out = src;
    return HCQ_OK;
}
