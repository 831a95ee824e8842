/* compiler/target_amd.h: what the AMD target rows carry (target_amd.c) and
 * the HIP side of them (render_hip.c). */
#ifndef HCQ_COMPILER_TARGET_AMD_H
#define HCQ_COMPILER_TARGET_AMD_H

#include "compiler/target.h"

typedef struct amd_target_arch {
    const char *gfx; /* LLVM processor: "gfx1100" */
    uint8_t mach;    /* EF_AMDGPU_MACH_AMDGCN_* */
    bool wave32;     /* the default wave size is 32 (gfx10+) */
    bool gfx9;       /* clang writes xnack/sramecc "any" into e_flags */
    int min_clang;   /* the first clang that knows the processor */
} amd_target_arch;

/* HIP for the row's processor (refuses ops it cannot render within the
 * IR's semantics, naming them). */
hcq_status cc_hip_render(const cc_target *t, const hcq_kernel *k, char **source_out);
/* HCQ_ENOTSUP naming the first op the row's HIP cannot render within the
 * IR's semantics (SIN; f64 EXP2, LOG2). */
hcq_status cc_hip_supported(const cc_target *t, const hcq_kernel *k);
/* HIP -> clang -> code object, through the portable GPU cache. */
hcq_status cc_hip_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);

#endif
