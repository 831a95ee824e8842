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
#define TP_VEC(dim, amt) ((tt_opt){TT_OPT_VECTOR, -1, (dim), (amt)})
#define TP_VECALL(dim, amt) ((tt_opt){TT_OPT_VECTOR, 1, (dim), (amt)}) /* every access or refused */
/* tensor cores: bm MMA blocks a warp along dim (m), bn along dim (n), wm warps along m, the target's
 * kind i, staged in slices of sk k-steps */
#define TP_TCM(dim, bm) ((tt_opt){TT_OPT_TC, 0, (dim), (bm)})
#define TP_TCN(dim, bn) ((tt_opt){TT_OPT_TC, 1, (dim), (bn)})
#define TP_TCW(wm) ((tt_opt){TT_OPT_TC, 2, -1, (wm)})
#define TP_TCK(i) ((tt_opt){TT_OPT_TC, 3, -1, (i)})
#define TP_TCS(sk) ((tt_opt){TT_OPT_TC, 4, -1, (sk)})

/* a list of n choices (tt_opt values) */
tt_opts tp_list(int n, ...);

/* n (its sources realized) lowered on c with list o (NULL: the default),
 * launched by hand into a new buffer, its values (numel x its dtype's
 * size bytes) copied to out. A plan the lowering refuses returns its
 * status (out untouched). meta, if given, gets the lowering's record (its
 * kernel pointer NULL); kernel, if given, the kernel as lowered (the
 * context's program cache owns it). Asserts that every other step works. */
hcq_status tp_run_plan(hcq_ctx *c, tt_node *n, const tt_opts *o, void *out, tt_lowered *meta, const hcq_kernel **kernel);

/* A matmul [B, M, K] @ [B, K, N] of dtype dt (B = 0: 2-d; wt: b stored
 * [N, K] and transposed, x @ w^T as linear makes it: both factors
 * contiguous along k) as an f32 node (a half result cast to f32), its
 * sources realized on the suite's context (tensortest.h's tx_ctx), and
 * its host values: the products of the inputs as stored, in f32, summed
 * in k order from +0 with one fused multiply-add each (the scalar plans'
 * order and the tensor cores' model), rounded to dt. want is malloc'd. */
typedef struct tp_mm {
    tt_node *n;
    int64_t count;
    float *want;
} tp_mm;
tp_mm tp_make_mm(hcq_dtype dt, int64_t B, int64_t M, int64_t K, int64_t N, uint32_t seed, bool wt);
/* asserts got holds m's values bit for bit (NaNs: any NaN) */
void tp_check_exact(const tp_mm *m, const float *got, const char *what);

#endif
