/* compiler/render_gpu.h: IR -> GPU source (CUDA now, HIP later) and the
 * portable compile cache GPU targets share.
 *
 * The renderer writes one kernel function, one work-item per thread, with
 * everything a dialect differs in behind macros (HCQ_KERNEL, HCQ_GID_X,
 * HCQ_BARRIER(), HCQ_SINF(x), ...) that the dialect's header defines. A
 * dialect is a row: its name, that header, and a few hooks. Semantics are
 * the interpreter's (include/hcq/compiler.h): helpers for division by
 * zero, shift counts, saturating float->int, maxNum, narrow floats;
 * signed arithmetic through unsigned types so wrapping does not depend on
 * a -fwrapv flag; no contraction (compilers run with it off). */
#ifndef HCQ_COMPILER_RENDER_GPU_H
#define HCQ_COMPILER_RENDER_GPU_H

#include "compiler/cc.h"

typedef struct cc_gpu_dialect {
    const char *name;   /* "cuda" */
    const char *header; /* defines the HCQ_* macros the rendered code uses */
    const char *extern_c; /* how a kernel gets C linkage ("extern \"C\" ") */
    const char *after_helpers; /* more definitions after the helpers (their types), or NULL */
} cc_gpu_dialect;

extern const cc_gpu_dialect cc_gpu_cuda;
/* HIP's grid and work-group sizes, read from the implicit kernel arguments
 * through HCQ_IMPLICIT_U32/U16 (which each HIP dialect defines) */
#define CC_HIP_SIZES                                                                                    \
    "#define HCQ_NGRP_X ((i32)HCQ_IMPLICIT_U32(0))\n#define HCQ_NGRP_Y ((i32)HCQ_IMPLICIT_U32(1))\n"    \
    "#define HCQ_NGRP_Z ((i32)HCQ_IMPLICIT_U32(2))\n"                                                  \
    "#define HCQ_LSIZE_X ((i32)HCQ_IMPLICIT_U16(6))\n#define HCQ_LSIZE_Y ((i32)HCQ_IMPLICIT_U16(7))\n" \
    "#define HCQ_LSIZE_Z ((i32)HCQ_IMPLICIT_U16(8))\n"
extern const cc_gpu_dialect cc_gpu_hip; /* compiler/render_hip.c */

typedef struct cc_gpu_render_info {
    bool uses_math; /* calls sin/exp2/log2 from the vendor's math library */
} cc_gpu_render_info;

/* Verifies k and renders it; *source_out is malloc'd. info may be NULL. */
hcq_status cc_render_gpu(const cc_gpu_dialect *d, const hcq_kernel *k, char **source_out, cc_gpu_render_info *info);

/* ** compiling GPU kernels through a portable cache
 * The key is the target, the rendered source and the job's flags: never
 * the local compiler's path or version, so a cache filled on one machine
 * (with clang + ptxas, or nvcc) serves another as is (one with neither
 * compiler, say). The entry records which compiler built it. */
typedef struct cc_gpu_job cc_gpu_job;
struct cc_gpu_job {
    const cc_target *target;
    const hcq_kernel *kernel;
    const char *source;
    const char *flags; /* what else decides the output: ISA, codegen options */
    /* builds the binary on a cache miss: *out malloc'd; label names the
     * compiler ("clang 22.1.8 + ptxas 13.0") */
    hcq_status (*build)(const cc_gpu_job *job, void **out, size_t *out_size, char *label, size_t label_size);
    const void *ctx;
};
hcq_status cc_gpu_compile_cached(const cc_gpu_job *job, hcq_binary **out);

/* A compiler run in a private temp directory: writes source to
 * kernel<ext>, runs `argv... kernel<ext> -o out post...` (argv[0] the
 * tool) and returns what it wrote (*out malloc'd). */
hcq_status cc_build_in_temp(const char *source, const char *ext, const char *const *argv, const char *const *post,
                            const char *what, void **out, size_t *out_size);

#endif
