/* The GPU renderer (see render_gpu.h): IR -> one kernel function in CUDA
 * (HIP later) that needs no vendor headers. A work-item is a thread, so the
 * body is the IR in order with structured blocks; barriers are the
 * dialect's. The helpers implement the interpreter's semantics with the
 * algorithms of ir_float.h and interp_alu.c (as render_c.c does). */
#include "compiler/render_gpu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir_float.h"
#include "compiler/mma.h"
#include "compiler/render_expr.h"
#include "compiler/strbuf.h"

/* ** dialects. CUDA: with clang (-x cuda -nocudainc -nocudalib), builtins
 * and NVVM intrinsics; sin/exp2/log2 from libdevice, linked only when
 * used. With nvcc, its built-in variables and math library. */
static const char cuda_header[] =
    "#if defined(__NVCC__)\n"
    "#define HCQ_KERNEL __global__\n"
    "#define HCQ_SHARED __shared__\n"
    "#define HCQ_DEV __device__\n"
    "#define HCQ_GID_X ((i32)blockIdx.x)\n#define HCQ_GID_Y ((i32)blockIdx.y)\n#define HCQ_GID_Z ((i32)blockIdx.z)\n"
    "#define HCQ_LID_X ((i32)threadIdx.x)\n#define HCQ_LID_Y ((i32)threadIdx.y)\n#define HCQ_LID_Z ((i32)threadIdx.z)\n"
    "#define HCQ_NGRP_X ((i32)gridDim.x)\n#define HCQ_NGRP_Y ((i32)gridDim.y)\n#define HCQ_NGRP_Z ((i32)gridDim.z)\n"
    "#define HCQ_LSIZE_X ((i32)blockDim.x)\n#define HCQ_LSIZE_Y ((i32)blockDim.y)\n#define HCQ_LSIZE_Z ((i32)blockDim.z)\n"
    "#define HCQ_BARRIER() __syncthreads()\n"
    "#define HCQ_SINF(x) sinf(x)\n#define HCQ_SIN(x) sin(x)\n#define HCQ_EXP2F(x) exp2f(x)\n#define HCQ_EXP2(x) exp2(x)\n"
    "#define HCQ_LOG2F(x) log2f(x)\n#define HCQ_LOG2(x) log2(x)\n#define HCQ_SQRTF(x) sqrtf(x)\n#define HCQ_SQRT(x) sqrt(x)\n"
    "#define HCQ_TRUNCF(x) truncf(x)\n#define HCQ_TRUNC(x) trunc(x)\n#define HCQ_FMAF(a, b, c) fmaf(a, b, c)\n"
    "#define HCQ_FMA(a, b, c) fma(a, b, c)\n#define HCQ_FABS(x) fabs(x)\n#define HCQ_SIGNBIT(x) signbit(x)\n"
    "#define HCQ_ISINF(x) isinf(x)\n#define HCQ_CLZLL(x) __clzll((long long)(x))\n"
    "#define HCQ_MEMCPY(d, s, n) memcpy(d, s, n)\n"
    "#else\n"
    "#define HCQ_KERNEL __attribute__((global))\n"
    "#define HCQ_SHARED __attribute__((shared))\n"
    "#define HCQ_DEV __attribute__((device))\n"
    "#define HCQ_GID_X ((i32)__nvvm_read_ptx_sreg_ctaid_x())\n#define HCQ_GID_Y ((i32)__nvvm_read_ptx_sreg_ctaid_y())\n"
    "#define HCQ_GID_Z ((i32)__nvvm_read_ptx_sreg_ctaid_z())\n"
    "#define HCQ_LID_X ((i32)__nvvm_read_ptx_sreg_tid_x())\n#define HCQ_LID_Y ((i32)__nvvm_read_ptx_sreg_tid_y())\n"
    "#define HCQ_LID_Z ((i32)__nvvm_read_ptx_sreg_tid_z())\n"
    "#define HCQ_NGRP_X ((i32)__nvvm_read_ptx_sreg_nctaid_x())\n#define HCQ_NGRP_Y ((i32)__nvvm_read_ptx_sreg_nctaid_y())\n"
    "#define HCQ_NGRP_Z ((i32)__nvvm_read_ptx_sreg_nctaid_z())\n"
    "#define HCQ_LSIZE_X ((i32)__nvvm_read_ptx_sreg_ntid_x())\n#define HCQ_LSIZE_Y ((i32)__nvvm_read_ptx_sreg_ntid_y())\n"
    "#define HCQ_LSIZE_Z ((i32)__nvvm_read_ptx_sreg_ntid_z())\n"
    "#define HCQ_BARRIER() __nvvm_barrier_sync(0)\n"
    "extern \"C\" HCQ_DEV float __nv_sinf(float); extern \"C\" HCQ_DEV double __nv_sin(double);\n"
    "extern \"C\" HCQ_DEV float __nv_exp2f(float); extern \"C\" HCQ_DEV double __nv_exp2(double);\n"
    "extern \"C\" HCQ_DEV float __nv_log2f(float); extern \"C\" HCQ_DEV double __nv_log2(double);\n"
    "#define HCQ_SINF(x) __nv_sinf(x)\n#define HCQ_SIN(x) __nv_sin(x)\n#define HCQ_EXP2F(x) __nv_exp2f(x)\n"
    "#define HCQ_EXP2(x) __nv_exp2(x)\n#define HCQ_LOG2F(x) __nv_log2f(x)\n#define HCQ_LOG2(x) __nv_log2(x)\n"
    "#define HCQ_SQRTF(x) __builtin_sqrtf(x)\n#define HCQ_SQRT(x) __builtin_sqrt(x)\n"
    "#define HCQ_TRUNCF(x) __builtin_truncf(x)\n#define HCQ_TRUNC(x) __builtin_trunc(x)\n"
    "#define HCQ_FMAF(a, b, c) __builtin_fmaf(a, b, c)\n#define HCQ_FMA(a, b, c) __builtin_fma(a, b, c)\n"
    "#define HCQ_FABS(x) __builtin_fabs(x)\n#define HCQ_SIGNBIT(x) __builtin_signbit(x)\n"
    "#define HCQ_ISINF(x) __builtin_isinf(x)\n#define HCQ_CLZLL(x) __builtin_clzll(x)\n"
    "#define HCQ_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)\n"
    "#endif\n";

const cc_gpu_dialect cc_gpu_cuda = {"cuda", cuda_header, "extern \"C\" ", NULL, CC_MMA_PTX};

/* How buffers are declared, unless the dialect says otherwise (the host
 * twin's dialect makes both checked types: twin.c). */
static const char storage_defaults[] =
    "#ifndef HCQ_GLOBAL\n#define HCQ_GLOBAL(T) T *\n#endif\n"
    "#ifndef HCQ_LOCAL\n#define HCQ_LOCAL(T, name, n) HCQ_SHARED static T name[n] __attribute__((aligned(16)))\n#endif\n";

/* A vector access, unless the dialect says otherwise (the twins check it):
 * one copy of a struct aligned to its size, which the compilers make one
 * instruction of that width (sm_90: LDG.E.128; gfx1100: global_load_b128;
 * tests/unit/test_ir_vec.c looks); the alignment is the kernel's to keep
 * (compiler.h says who faults). Only in kernels with vectors. */
static const char vector_defaults[] =
    "#ifndef HCQ_VLD\n#define HCQ_VLD(tag, b, i) (*(const hcq_m##tag *)&(b)[i])\n"
    "#define HCQ_VST(tag, b, i, m) (*(hcq_m##tag *)&(b)[i] = (m))\n#endif\n";

/* ** types */
/* value and memory types: C++ spelling (bool) */
static const char *ctype(hcq_dtype t) { return cc_expr_ctype(t, true); }
static const char *stype(hcq_dtype t) { return cc_expr_stype(t, true); }

/* ** rendering state */
typedef struct rg {
    const hcq_kernel *k;
    cc_sb *b;
    unsigned indent;
    cc_gpu_render_info info;
} rg;

static void ref(rg *r, hcq_ir_ref s)
{
    static const char *sp[4] = {"GID", "LID", "NGRP", "LSIZE"};
    const hcq_ir_op *o = &r->k->ops[s];
    cc_sb *b = r->b;
    switch (o->op) {
    case HCQ_OP_CONST: cc_expr_const(b, o, true); return;
    case HCQ_OP_SPECIAL: cc_sb_printf(b, "HCQ_%s_%c", sp[o->arg & 3], "XYZ"[(o->arg >> 8) % 3]); return;
    case HCQ_OP_PARAM: cc_sb_printf(b, "%c%" PRIu64, (o->flags & HCQ_IR_FLAG_PTR) ? 'p' : 's', o->arg); return;
    case HCQ_OP_DEFINE_LOCAL: cc_sb_printf(b, "l%u", s); return;
    default: cc_sb_printf(b, "v%u", s); return;
    }
}

static void operand(cc_expr *e, hcq_ir_ref s) { ref(e->user, s); }
static void R(cc_expr *e, unsigned j) { operand(e, e->k->ops[e->at].src[j]); }
static void P(cc_expr *e, const char *s) { cc_sb_puts(e->b, s); }

/* ** statements */
static void line(rg *r) { cc_sb_printf(r->b, "%*s", (int)(2 * r->indent), ""); }

static bool is_inline(const hcq_ir_op *o)
{
    return o->op == HCQ_OP_CONST || o->op == HCQ_OP_PARAM || o->op == HCQ_OP_SPECIAL || o->op == HCQ_OP_DEFINE_LOCAL ||
           o->op == HCQ_OP_NOOP;
}

static void emit_op(rg *r, hcq_ir_ref i)
{
    const hcq_ir_op *o = &r->k->ops[i];
    cc_expr e = {.b = r->b, .k = r->k, .at = i, .operand = operand, .user = r, .cxx = true};
    cc_sb *b = r->b;
    if (is_inline(o)) return;
    if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) r->indent--;
    line(r);
    switch (o->op) {
    case HCQ_OP_BARRIER: cc_sb_printf(b, "HCQ_BARRIER();\n"); return;
    case HCQ_OP_ENDRANGE:
    case HCQ_OP_ENDIF: cc_sb_printf(b, "}\n"); return;
    case HCQ_OP_STORE: cc_expr_store(&e); return;
    case HCQ_OP_ASSIGN: R(&e, 0), P(&e, " = "), R(&e, 1), P(&e, ";\n"); return;
    case HCQ_OP_MMA: {
        char ty[32];
        cc_sb_printf(b, "%s v%u = hcq_mma_%s(", cc_expr_decl_type(ty, sizeof ty, o, true), i,
                     cc_mma_kind_of((unsigned)o->arg)->info.name);
        R(&e, 0), P(&e, ", "), R(&e, 1), P(&e, ", "), R(&e, 2), P(&e, ");\n");
        return;
    }
    case HCQ_OP_IF:
        P(&e, "if ("), R(&e, 0), P(&e, ") {\n");
        r->indent++;
        return;
    case HCQ_OP_RANGE:
        cc_sb_printf(b, "for (%s v%u = ", ctype((hcq_dtype)o->dtype), i), R(&e, 0), cc_sb_printf(b, "; v%u < ", i),
            R(&e, 1);
        cc_sb_printf(b, "; v%u = (%s)(v%u + 1)) {\n", i, ctype((hcq_dtype)o->dtype), i);
        r->indent++;
        return;
    default: break;
    }
    char ty[32];
    cc_sb_printf(b, "%s v%u = ", cc_expr_decl_type(ty, sizeof ty, o, true), i);
    cc_expr_emit(&e);
    r->info.uses_math |= e.uses_math;
    cc_sb_printf(b, ";\n");
}

static void emit_kernel(rg *r, const cc_gpu_dialect *d)
{
    const hcq_kernel *k = r->k;
    cc_sb *b = r->b;
    uint32_t n = hcq_kernel_param_count(k);
    hcq_param_info *pi = calloc(n ? n : 1, sizeof *pi);
    if (!pi) {
        b->oom = true;
        return;
    }
    hcq_kernel_param_layout(k, pi);
    /* parameters in order: the ABI lays them out as hcq_kernel_param_layout does */
    cc_sb_printf(b, "%sHCQ_KERNEL void %s(", d->extern_c, k->name);
    for (uint32_t p = 0; p < n; p++) {
        hcq_dtype t = (hcq_dtype)pi[p].dtype;
        if (pi[p].is_buffer) cc_sb_printf(b, "%sHCQ_GLOBAL(%s) p%u", p ? ", " : "", stype(t), p);
        else cc_sb_printf(b, "%s%s s%u_raw", p ? ", " : "", stype(t), p);
    }
    cc_sb_printf(b, ")\n{\n");
    for (uint32_t p = 0; p < n; p++) {
        hcq_dtype t = (hcq_dtype)pi[p].dtype;
        if (pi[p].is_buffer) continue;
        cc_sb_printf(b, "  const %s s%u = ", ctype(t), p);
        if (t == HCQ_F16) cc_sb_printf(b, "hcq_h2f(s%u_raw);\n", p);
        else if (t == HCQ_BF16) cc_sb_printf(b, "hcq_b2f(s%u_raw);\n", p);
        else if (t == HCQ_BOOL) cc_sb_printf(b, "s%u_raw != 0;\n", p);
        else cc_sb_printf(b, "s%u_raw;\n", p);
    }
    free(pi);
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_DEFINE_LOCAL)
            cc_sb_printf(b, "  HCQ_LOCAL(%s, l%u, %" PRIu64 ");\n", stype((hcq_dtype)o->dtype), i, o->arg);
    }
    r->indent = 1;
    for (uint32_t i = 0; i < k->nops; i++) emit_op(r, i);
    cc_sb_printf(b, "}\n");
}

hcq_status cc_render_gpu(const cc_gpu_dialect *d, const hcq_kernel *k, char **source_out, cc_gpu_render_info *info)
{
    hcq_status st = hcq_kernel_verify(k);
    if (st) return st;
    if (!d->mma && cc_mma_used(k))
        return base_err(HCQ_ENOTSUP, "kernel '%s': the %s renderer does not write matrix multiply-accumulate", k->name,
                        d->name);
    cc_sb b = {0};
    rg r = {.k = k, .b = &b};
    cc_sb_printf(&b, "/* kernel '%s': generated by hcq (%s, no headers needed) */\n", k->name, d->name);
    cc_sb_puts(&b, d->header);
    cc_sb_puts(&b, storage_defaults);
    cc_sb_puts(&b, "#define H static inline HCQ_DEV\n");
    cc_sb_puts(&b, cc_expr_helpers);
    if (d->after_helpers) cc_sb_puts(&b, d->after_helpers);
    if (cc_expr_uses_vectors(k)) {
        cc_sb_puts(&b, vector_defaults);
        cc_expr_vec_defs(&b, k, true);
        if (cc_mma_used(k)) cc_mma_defs(&b, k, d->mma); /* only kernels with mma: others' text is as it was */
    }
    cc_sb_puts(&b, "\n");
    emit_kernel(&r, d);
    char *src = cc_sb_take(&b, "GPU source");
    if (!src) return HCQ_ENOMEM;
    if (info) *info = r.info;
    *source_out = src;
    return HCQ_OK;
}
