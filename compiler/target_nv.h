/* compiler/target_nv.h: the NVIDIA targets (target_nv.c) beyond their
 * rows: which compilers build them, for tools and tests. */
#ifndef HCQ_COMPILER_TARGET_NV_H
#define HCQ_COMPILER_TARGET_NV_H

#include "compiler/cc.h"

typedef enum cc_nv_compiler {
    CC_NV_AUTO = 0,  /* clang >= 19 with ptxas, else nvcc */
    CC_NV_CLANG = 1, /* clang -> PTX -> ptxas */
    CC_NV_NVCC = 2,  /* nvcc -cubin */
} cc_nv_compiler;

/* Builds a cubin for target t (an sm_* row) with the compiler asked for,
 * bypassing the cache; label names the compiler that ran. */
hcq_status cc_nv_build(const cc_target *t, const hcq_kernel *k, cc_nv_compiler which, void **out, size_t *out_size,
                       char *label, size_t label_size);
/* Whether the tools a compiler needs are here (and why not, in why). */
bool cc_nv_have(cc_nv_compiler which, char *why, size_t why_size);

/* The SM number (90) and constant-bank parameter base (0x210) of an sm_*
 * or mock-sm_* target; false for other targets. */
bool cc_nv_target_abi(const char *target, uint32_t *sm, uint32_t *param_base);

#endif
