/* Kernels written in the IR that the tools launch (bench, compile). */
#ifndef HCQ_TOOLS_KERNELS_H
#define HCQ_TOOLS_KERNELS_H

#include <hcq/compiler.h>

/* does nothing; one buffer param (launch overhead).      params: u32 *unused */
hcq_kernel *tk_empty(void);
/* c[i] = a[i] + b[i], i < n.                             params: f32 *a, *b, *c, i32 n */
hcq_kernel *tk_vadd(void);
/* out[g] = sum of in[g*per, +per) clipped to n, through local memory;
 * launch with TK_SUM_LOCAL work-items per group.        params: f32 *in, *out, i32 n, i32 per */
#define TK_SUM_LOCAL 256
hcq_kernel *tk_sum(void);
/* C[MxN] = A[MxK] @ B[KxN], one work-item per output.   params: f32 *A, *B, *C, i32 M, N, K */
hcq_kernel *tk_matmul(void);

#endif
