/* drivers/mock/mock_mma.h: the arithmetic of one element of a tensor-core
 * matrix multiply-accumulate, shared by the SASS executor (HMMA) and the
 * AMD ISA executor (WMMA, MFMA), so both model the same thing.
 *
 * What the vendors document: NVIDIA's PTX ISA (mma, "Matrix multiply-
 * accumulate operation") gives D = A * B + C and leaves the order and the
 * intermediate precision of the accumulation unspecified; AMD's CDNA2/3
 * and RDNA3 ISA guides give the same formula per element of D and say no
 * more. Measurements of the hardware (e.g. Fasi, Higham, Mikaitis,
 * Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021) find the
 * products exact and the sum of a block of them formed with alignment and
 * truncation, differently per generation; none of that is documented.
 *
 * The model here: each product is formed exactly (f16*f16 and bf16*bf16
 * products fit an f32 significand), then D = C; for k = 0, 1, ... in
 * order: D = fma(A[m][k], B[k][n], D) rounded to f32 nearest-even (f32
 * denormals kept). For f16 inputs, and bf16 inputs whose product is in
 * f32's normal range, that is adding the exact product. An f16
 * accumulator (HMMA.16816.F16) is widened exactly, summed as above in
 * f32 and rounded once to f16 at the end. So a kernel's results can
 * differ from a GPU's in the last bits of a sum; a test's scalar
 * reference states the same order and rounding. */
#ifndef HCQ_DRIVERS_MOCK_MMA_H
#define HCQ_DRIVERS_MOCK_MMA_H

#include <math.h>

/* c + sum over k < n of a[k * as] * b[k * bs], in k order, each step one
 * f32 fma (the inputs already widened to f32 exactly) */
static inline float mock_mma_dot(const float *a, unsigned as, const float *b, unsigned bs, unsigned n, float c)
{
    float d = c;
    for (unsigned k = 0; k < n; k++) d = fmaf(a[k * as], b[k * bs], d);
    return d;
}

#endif
