/* compiler/target_amd.h: what the AMD target rows carry (target_amd.c) and
 * the HIP side of them (render_hip.c). */
#ifndef HCQ_COMPILER_TARGET_AMD_H
#define HCQ_COMPILER_TARGET_AMD_H

#include "compiler/target.h"

#include "compiler/amd_chips.h"

/* a target row's data: its chip's row of the AMD chip table */
typedef amd_chip amd_target_arch;

/* The AMD target rows, made from the chip table: "gfxNNN" (HIP) for each
 * chip clang knows (min_clang), "mock-gfxNNN" for each chip hcq drives.
 * Row i, or NULL past the end; rows of chips added later (amd_chips_add)
 * come after. */
const cc_target *cc_amd_target_at(size_t i);

/* HIP for the row's processor (refuses ops it cannot render within the
 * IR's semantics, naming them). */
hcq_status cc_hip_render(const cc_target *t, const hcq_kernel *k, char **source_out);
/* HCQ_ENOTSUP naming the first op the row's HIP cannot render within the
 * IR's semantics (SIN; f64 EXP2, LOG2). */
hcq_status cc_hip_supported(const cc_target *t, const hcq_kernel *k);
/* HIP -> clang -> code object, through the portable GPU cache. */
hcq_status cc_hip_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);

#endif
