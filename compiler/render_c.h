/* compiler/render_c.h: IR -> C for the "cpu" target (see render_c.c). */
#ifndef HCQ_COMPILER_RENDER_C_H
#define HCQ_COMPILER_RENDER_C_H

#include "compiler/ir.h"

/* Verifies k and renders it as a C11 translation unit exporting the CPU ABI
 * (cpu_abi.h). *source_out is malloc'd. */
hcq_status cc_render_c(const hcq_kernel *k, char **source_out);

#endif
