/* compiler/isa.h: which targets the mock GPUs can run as machine code.
 *
 * Under HCQ_MOCK_SHADER=isa a mock GPU executes the instructions of the
 * binaries it is given (a cubin's SASS, a code object's ISA) instead of
 * host twins of hcq's source. Each vendor's decoder lives beside this
 * (sass.h for NVIDIA); this table only says which targets have an
 * executor, and what the device's `shader` line calls it. */
#ifndef HCQ_COMPILER_ISA_H
#define HCQ_COMPILER_ISA_H

#include <stdbool.h>
#include <stddef.h>

/* The executor's name for a real target ("sm_90": "SASS executor"), or
 * NULL with why saying that no executor runs that target's machine code. */
const char *cc_isa_executor(const char *target, char *why, size_t why_size);

#endif
