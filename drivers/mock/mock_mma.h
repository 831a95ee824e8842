/* drivers/mock/mock_mma.h: the arithmetic of one element of a tensor-core
 * matrix multiply-accumulate, shared by the SASS executor (HMMA) and the
 * AMD ISA executor (WMMA, MFMA), so both model the same thing. The model
 * and why it is this one: compiler/mma.h (cc_mma_dot), its one
 * definition, which the IR interpreter and the host twins use too, so a
 * kernel's MMA results are the same on every path of the mock GPU. An f16
 * accumulator (HMMA.16816.F16) is widened exactly, summed as there in f32
 * and rounded once to f16 at the end. */
#ifndef HCQ_DRIVERS_MOCK_MMA_H
#define HCQ_DRIVERS_MOCK_MMA_H

#include "compiler/mma.h"

/* c + sum over k < n of a[k * as] * b[k * bs], in k order, each step one
 * f32 fma (the inputs already widened to f32 exactly) */
static inline float mock_mma_dot(const float *a, unsigned as, const float *b, unsigned bs, unsigned n, float c)
{
    return cc_mma_dot(a, as, b, bs, n, c);
}

#endif
