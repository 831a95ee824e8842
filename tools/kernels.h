/* Kernels written in the IR that the tools launch (bench, compile) and
 * the API suites run (tests/support/hcqtest.h names them t_k_*). */
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

/* ** the API suites' kernels (global id = group id * local size + local id, in x, as u32) */
hcq_kernel *tk_add1(void);     /* a[i] += 1, i < n.             params: u32 *a, u32 n */
hcq_kernel *tk_vadd_u32n(void); /* c[i] = a[i] + b[i], i < n.   params: f32 *a, *b, *c, u32 n */
hcq_kernel *tk_muladd(void);   /* a[i] = a[i] * k + c, i < n.   params: u32 *a, u32 k, u32 c, u32 n */
hcq_kernel *tk_inc(void);      /* item 0 of group 0: a[0] += 1. params: u32 *a */
/* out[x + X * (y + Y * z)] = 1 over the launch's global size.  params: u32 *out */
hcq_kernel *tk_mark(void);
hcq_kernel *tk_copy_u32(void); /* dst[i] = src[i], i < n.       params: u32 *dst, *src, u32 n */

#endif
