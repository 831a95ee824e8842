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
#include "compiler/strbuf.h"

/* how a dialect writes a matrix multiply-accumulate (render_mma.c) */
typedef enum cc_mma_style {
    CC_MMA_NONE = 0, /* refused */
    CC_MMA_PTX,      /* CUDA: inline PTX mma.sync */
    CC_MMA_AMDGCN,   /* HIP: clang's WMMA and MFMA builtins */
    CC_MMA_HOST,     /* host twins: fragments exchanged at a warp rendezvous, the model computed in C */
} cc_mma_style;

typedef struct cc_gpu_dialect {
    const char *name;   /* "cuda" */
    const char *header; /* defines the HCQ_* macros the rendered code uses */
    const char *extern_c; /* how a kernel gets C linkage ("extern \"C\" ") */
    const char *after_helpers; /* more definitions after the helpers (their types), or NULL */
    cc_mma_style mma;
} cc_gpu_dialect;

/* ** matrix multiply-accumulate (render_mma.c) */
bool cc_mma_used(const hcq_kernel *k);
/* hcq_mma_<kind>(a, b, c) for each kind k uses, in the dialect's style
 * (after the vector types) */
void cc_mma_defs(cc_sb *b, const hcq_kernel *k, cc_mma_style style);

extern const cc_gpu_dialect cc_gpu_cuda;
/* HIP's grid and work-group sizes, read from the implicit kernel arguments
 * through HCQ_IMPLICIT_U32/U16 (which each HIP dialect defines) */
#define CC_HIP_SIZES                                                                                    \
    "#define HCQ_NGRP_X ((i32)HCQ_IMPLICIT_U32(0))\n#define HCQ_NGRP_Y ((i32)HCQ_IMPLICIT_U32(1))\n"    \
    "#define HCQ_NGRP_Z ((i32)HCQ_IMPLICIT_U32(2))\n"                                                  \
    "#define HCQ_LSIZE_X ((i32)HCQ_IMPLICIT_U16(6))\n#define HCQ_LSIZE_Y ((i32)HCQ_IMPLICIT_U16(7))\n" \
    "#define HCQ_LSIZE_Z ((i32)HCQ_IMPLICIT_U16(8))\n"
extern const cc_gpu_dialect cc_gpu_hip; /* compiler/render_hip.c */
/* HIP has no device library here: sin on f32 is hcq_sinf, which the HIP
 * text carries (and so its host twin). Exact argument reduction against
 * 2/pi's bits (x * 2/pi mod 4 from a 96-bit window, enough for every
 * float), then sin or cos on [-pi/4, pi/4] by Taylor series in f64,
 * rounded once: equal to (float)sin((double)x) for every f32 x (checked
 * against glibc, all 2^32 inputs). Needs HCQ_CTABLE (a constant table
 * declaration) from the dialect. */
#define CC_HIP_SINF \
    "HCQ_CTABLE u32 hcq_2opi[8] = {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,\n" \
    "                              0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};\n" \
    "H double hcq_sin_poly(double r) {\n" \
    "  double r2 = r * r;\n" \
    "  return r + r * r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 + r2 * (-1.0 / 39916800 +\n" \
    "         r2 * (1.0 / 6227020800.0 + r2 * (-1.0 / 1307674368000.0 + r2 * (1.0 / 355687428096000.0))))))));\n" \
    "}\n" \
    "H double hcq_cos_poly(double r) {\n" \
    "  double r2 = r * r;\n" \
    "  return 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (-1.0 / 3628800 +\n" \
    "         r2 * (1.0 / 479001600.0 + r2 * (-1.0 / 87178291200.0 + r2 * (1.0 / 20922789888000.0))))))));\n" \
    "}\n" \
    "H float hcq_sinf(float x) {\n" \
    "  u32 ix = hcq_fbits(x), ax = ix & 0x7fffffffu;\n" \
    "  if (ax >= 0x7f800000u) return x - x; /* NaN for inf and NaN */\n" \
    "  double r = (double)hcq_bitsf(ax);\n" \
    "  u32 q = 0;\n" \
    "  if (ax >= 0x3f490fdbu) { /* |x| >= pi/4: r = |x| - q pi/2 */\n" \
    "    u32 m = (ax & 0x7fffffu) | 0x800000u;\n" \
    "    int pos = (int)(ax >> 23) - 152; /* the 2/pi bit whose weight makes m * 2^e * it worth 2 */\n" \
    "    u32 w2, w1, w0;\n" \
    "    if (pos < 0) {\n" \
    "      int n = -pos;\n" \
    "      w2 = hcq_2opi[0] >> n;\n" \
    "      w1 = hcq_2opi[0] << (32 - n) | hcq_2opi[1] >> n;\n" \
    "      w0 = hcq_2opi[1] << (32 - n) | hcq_2opi[2] >> n;\n" \
    "    } else {\n" \
    "      int w = pos >> 5, s = pos & 31;\n" \
    "      w2 = hcq_2opi[w], w1 = hcq_2opi[w + 1], w0 = hcq_2opi[w + 2];\n" \
    "      if (s) {\n" \
    "        w2 = w2 << s | w1 >> (32 - s);\n" \
    "        w1 = w1 << s | w0 >> (32 - s);\n" \
    "        w0 = w0 << s | hcq_2opi[w + 3] >> (32 - s);\n" \
    "      }\n" \
    "    }\n" \
    "    /* m * window mod 2^96: two integer bits (the quadrant), 94 of fraction */\n" \
    "    u64 p0 = (u64)m * w0, p1 = (u64)m * w1 + (p0 >> 32), p2 = (u64)m * w2 + (p1 >> 32);\n" \
    "    u32 l2 = (u32)p2, l1 = (u32)p1, l0 = (u32)p0;\n" \
    "    q = l2 >> 30;\n" \
    "    u64 hi = (u64)(l2 & 0x3fffffffu) << 32 | l1; /* fraction bits 93..32 */\n" \
    "    u32 lo = l0;                                   /* bits 31..0 */\n" \
    "    bool neg = hi >> 61; /* fraction >= 1/2: take fraction - 1, one quadrant on */\n" \
    "    if (neg) {\n" \
    "      lo = 0u - lo;\n" \
    "      hi = (~hi + (lo == 0 ? 1u : 0u)) & 0x3fffffffffffffffull;\n" \
    "      q = (q + 1) & 3;\n" \
    "    }\n" \
    "    double f = (double)hi * 0x1p-62 + (double)lo * 0x1p-94;\n" \
    "    r = (neg ? -f : f) * 1.5707963267948966;\n" \
    "  }\n" \
    "  double s = (q & 1) ? hcq_cos_poly(r) : hcq_sin_poly(r);\n" \
    "  if (q & 2) s = -s;\n" \
    "  return (float)(ix >> 31 ? -s : s);\n" \
    "}\n"


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
