/* Plan-suite support: building a kernel plan's choice list in a line, and
 * running one node lowered with a given list (or the default) by hand, so a
 * suite can compare plans' results element by element. Uses the tensor
 * layer's internal headers (tensor/lower.h). */
#ifndef HCQ_TESTS_PLANTEST_H
#define HCQ_TESTS_PLANTEST_H

#include "tensor/lower.h"

#define TP_UP(slot, dim, amt) ((tt_opt){TT_OPT_UPCAST, (slot), (dim), (amt)})
#define TP_OPT(kind, amt) ((tt_opt){(kind), -1, -1, (amt)})
#define TP_PAD(dim, amt) ((tt_opt){TT_OPT_PADTO, -1, (dim), (amt)})
#define TP_SMEM(bk, cols) ((tt_opt){TT_OPT_SMEM, (cols), -1, (bk)})

/* a list of n choices (tt_opt values) */
tt_opts tp_list(int n, ...);

/* n (an f32 node, its sources realized) lowered on c with list o (NULL: the
 * default), launched by hand into a new buffer, its count values copied to
 * out. A plan the lowering refuses returns its status (out untouched);
 * meta, if given, gets the lowering's record (its kernel pointer NULL:
 * the program cache owns the kernel). Asserts that every other step works. */
hcq_status tp_run_plan(hcq_ctx *c, tt_node *n, const tt_opts *o, float *out, uint64_t count, tt_lowered *meta);

#endif
