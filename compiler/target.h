/* compiler/target.h: the compiler targets, one row each in target.c.
 *
 * A target turns a verified kernel into a binary for one kind of device:
 *   render   IR -> source text (NULL when the target has none)
 *   compile  IR -> hcq_binary (usually: render, then cc_compile_with_clang,
 *            which handles the toolchain, the cache and error messages)
 *
 * Adding a target (e.g. the NV backend's sm_90):
 *   1. write its render function (compiler/render_cuda.c) and a compile
 *      function that renders, then calls cc_compile_with_clang() with its
 *      clang arguments (--target=nvptx64-nvidia-cuda -march=sm_90 ...) and,
 *      if it needs a second tool (ptxas), cc_run_tool() on the result;
 *   2. declare both in this header, next to the cpu and ir ones;
 *   3. add a row to the table in target.c: name, binary kind, functions,
 *      and an `arch` pointer for per-row data (so sm_80/86/89/90/90a share
 *      one function pair and differ only in their row).
 * hcq_target_known / hcq_render / hcq_compile pick the row up by name. */
#ifndef HCQ_COMPILER_TARGET_H
#define HCQ_COMPILER_TARGET_H

#include "compiler/ir.h"

typedef enum cc_binary_kind {
    CC_BIN_IR_ELF,  /* ELF, e_machine EM_NONE, serialized IR in .hcq.ir */
    CC_BIN_HOST_SO, /* host shared object with the CPU ABI (cpu_abi.h) */
    CC_BIN_CUBIN,   /* NVIDIA cubin (EM_CUDA) */
    CC_BIN_AMD_CO,  /* AMDGPU code object (EM_AMDGPU) */
} cc_binary_kind;

typedef struct cc_target cc_target;
struct cc_target {
    const char *name;    /* "cpu", "ir", "sm_90", "gfx1100" */
    cc_binary_kind kind;
    const char *lang;    /* what render produces: "c", "cuda", "hip", "ir listing" */
    hcq_status (*render)(const cc_target *t, const hcq_kernel *k, char **source_out);
    hcq_status (*compile)(const cc_target *t, const hcq_kernel *k, hcq_binary **out);
    const void *arch;    /* per-row data for the functions (NULL for cpu and ir) */
};

/* Rows each GPU backend owns (compiler/target_nv.c, target_amd.c), so the
 * two can grow without touching this table. */
extern const cc_target cc_nv_targets[];
extern const size_t cc_nv_target_count;
/* the AMD rows are made from the chip table (compiler/amd_chips.h) */
const cc_target *cc_amd_target_at(size_t i);

/* The row named `name`, or NULL. */
const cc_target *cc_target_find(const char *name);
/* Row i of all the rows (built-in, then NV, then AMD), or NULL past the end. */
const cc_target *cc_target_at(size_t i);

/* ** the targets built in (target_cpu.c, target_ir.c) */
hcq_status cc_cpu_render(const cc_target *t, const hcq_kernel *k, char **source_out);
hcq_status cc_cpu_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);
hcq_status cc_ir_render(const cc_target *t, const hcq_kernel *k, char **source_out);
hcq_status cc_ir_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);

#endif
