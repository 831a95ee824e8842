/* compiler/verify.h: the verifier's pieces other passes reuse. */
#ifndef HCQ_COMPILER_VERIFY_H
#define HCQ_COMPILER_VERIFY_H

#include "compiler/ir.h"

/* The local rules of one op about to sit at index `at`: fields, operand
 * refs (earlier, values, buffers only where buffers go) and dtypes. Not
 * nesting, scoping or barrier placement, which need the whole kernel.
 * On failure writes the reason (without the "op N (kind): " prefix). */
bool ir_check_op(const hcq_kernel *k, hcq_ir_ref at, const hcq_ir_op *o, char *why, size_t why_size);

/* The matching ENDRANGE/ENDIF of every RANGE/IF and the opener of every
 * end, HCQ_IR_NONE elsewhere; `match` has nops entries. The kernel must
 * verify. */
void ir_match_blocks(const hcq_kernel *k, hcq_ir_ref *match);

#endif
