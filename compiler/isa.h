/* compiler/isa.h: which targets the mock GPUs can run as machine code.
 *
 * A mock GPU executes the instructions of the binaries it is given (a
 * cubin's SASS, a code object's ISA), by default where its target has an
 * executor (HCQ_MOCK_SHADER=twin runs host twins of hcq's source instead). Each vendor's decoder lives beside this
 * (sass.h for NVIDIA); this table only says which targets have an
 * executor, and what the device's `shader` line calls it. */
#ifndef HCQ_COMPILER_ISA_H
#define HCQ_COMPILER_ISA_H

#include <stdbool.h>
#include <stddef.h>

/* The executor's name for a real target ("sm_90": "SASS executor"), or
 * NULL with why saying that no executor runs that target's machine code. */
const char *cc_isa_executor(const char *target, char *why, size_t why_size);

/* Whether a mock GPU of this target runs machine code on its executor:
 * with HCQ_MOCK_SHADER=isa wherever there is one; with HCQ_MOCK_SHADER
 * unset (the default) where the table below makes it the target's default
 * and its decoder is here (NV: nvdisasm); never with `twin` or `ir`. false
 * with why. The device (drv_mock_shader) and the mock's launches (the
 * mock may be a preloaded copy of hcq) both ask it, so they agree. */
bool cc_isa_on(const char *target, char *why, size_t why_size);

/* How mock GPUs of this target's kind run kernels (BASE_MOCK_SHADER_*):
 * HCQ_MOCK_SHADER_NV for sm_* targets, HCQ_MOCK_SHADER_AMD for gfx*
 * ones (mock- prefixes too), where set, else HCQ_MOCK_SHADER. *var, when
 * var is not NULL, names the variable that chose (for messages). */
int cc_mock_shader(const char *target, const char **var);

#endif
