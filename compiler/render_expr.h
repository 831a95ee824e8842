/* compiler/render_expr.h: IR ops as C expressions, for the renderers that
 * write C-family source (render_c.c for the CPU, render_gpu.c for CUDA and
 * HIP). One copy of the semantics the interpreter defines: integer
 * arithmetic through unsigned types (wrapping needs no -fwrapv), helpers
 * for what C leaves undefined (division by zero, INT_MIN / -1, shift
 * counts, float -> int), maxNum, narrow floats rounded after each op, and
 * the math functions behind HCQ_* macros (HCQ_SINF(x), HCQ_FMA(a, b, c),
 * ...) that each renderer's prelude defines, and one copy of the helpers
 * they call (cc_expr_helpers: hcq_div_i32, hcq_rh, ...). */
#ifndef HCQ_COMPILER_RENDER_EXPR_H
#define HCQ_COMPILER_RENDER_EXPR_H

#include <stdbool.h>

#include "compiler/cc.h"
#include "compiler/strbuf.h"

typedef struct cc_expr cc_expr;
struct cc_expr {
    cc_sb *b;
    const hcq_kernel *k;
    hcq_ir_ref at; /* the op being written */
    /* writes how op src is read where op `at` sits: constants through
     * cc_expr_const, specials, params and values by the renderer's names */
    void (*operand)(cc_expr *e, hcq_ir_ref src);
    void *user;
    bool cxx;       /* spells bool `bool`/`true` (CUDA, HIP) rather than `_Bool` */
    bool uses_math; /* set once EXP2, LOG2 or SIN was written */
    unsigned lane;  /* 1 + the lane of an elementwise vector op being written (vector operands then
                     * read .v[lane - 1]); 0 otherwise, as a zeroed cc_expr has it */
};

/* the helpers' source (hcq_h2f, hcq_div_i32, ...), after the prelude's
 * types and macros (render_expr.c says which) */
extern const char cc_expr_helpers[];

/* the value type of a dtype, and its type in memory (u16 for f16/bf16, u8 for bool) */
const char *cc_expr_ctype(hcq_dtype t, bool cxx);
const char *cc_expr_stype(hcq_dtype t, bool cxx);
/* a CONST op as a literal */
void cc_expr_const(cc_sb *b, const hcq_ir_op *o, bool cxx);
/* the op at e->at (an ALU op, CAST, BITCAST, WHERE, LOAD, DEFINE_ACC) as an expression */
void cc_expr_emit(cc_expr *e);

/* ** vectors (compiler.h "Vector values"): a vector value is a struct of
 * its lanes in value form, hcq_v<dtype>x<N> { T v[N]; }; in memory a
 * struct aligned to its size, hcq_m<dtype>x<N>, so one struct copy is one
 * access (ld.global.v4 / global_load_b128 at 16 bytes). Helpers per type:
 * hcq_splat_<tag>(x), hcq_set_<tag>(v, lane, x), hcq_ld_<tag>(m) and
 * hcq_st_<tag>(v) (memory <-> value form), hcq_vld_<tag>(p) and
 * hcq_vst_<tag>(p, m) (through memcpy: no alignment assumed, for hosts).
 * The body reads and writes memory through the dialect's
 * HCQ_VLD(tag, buf, index) and HCQ_VST(tag, buf, index, m). */
/* the tag "f32x4" of a value of dtype t with `lanes` lanes */
const char *cc_expr_vtag(char *buf, size_t size, hcq_dtype t, unsigned lanes);
/* the declared type of op o's value: ctype, or hcq_v<tag> for a vector */
const char *cc_expr_decl_type(char *buf, size_t size, const hcq_ir_op *o, bool cxx);
/* whether the kernel has vector values: renderers add their vector text
 * only then, so a scalar kernel's source (and its cache key) is what it was
 * before vectors existed */
bool cc_expr_uses_vectors(const hcq_kernel *k);
/* the types and helpers for every vector the kernel uses (after the
 * helpers: they need u16 and H) */
void cc_expr_vec_defs(cc_sb *b, const hcq_kernel *k, bool cxx);
/* a STORE op (either form) as a statement without indent, for both renderers */
void cc_expr_store(cc_expr *e);

#endif
