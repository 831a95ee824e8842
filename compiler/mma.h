/* compiler/mma.h: the matrix multiply-accumulate kinds' table (mma.c) and
 * the arithmetic of one element of D, shared by the interpreter, the host
 * twins' prelude (as text: twin.c) and the mock GPU's executors
 * (drivers/mock/mock_mma.h includes this), so every path that runs an MMA
 * computes the same thing. */
#ifndef HCQ_COMPILER_MMA_H
#define HCQ_COMPILER_MMA_H

#include <math.h>

#include <hcq/compiler.h>

/* The model (compiler.h "Matrix multiply-accumulate"): each product is
 * formed exactly (f16*f16 and bf16*bf16 products fit an f32 significand),
 * then D = C; for k = 0, 1, ... in order: D = fma(A[m][k], B[k][n], D)
 * rounded to f32 nearest-even (denormals kept).
 *
 * What the vendors document: NVIDIA's PTX ISA (mma, "Matrix multiply-
 * accumulate operation") gives D = A * B + C and leaves the order and the
 * intermediate precision of the accumulation unspecified; AMD's CDNA2/3
 * and RDNA3 ISA guides give the same formula per element of D and say no
 * more. Measurements of the hardware (e.g. Fasi, Higham, Mikaitis,
 * Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021) find the
 * products exact and the sum of a block of them formed with alignment and
 * truncation, differently per generation; none of that is documented. So
 * results can differ from a GPU's in the last bits of a sum; a test's
 * scalar reference states the same order and rounding.
 *
 * c + sum over k < n of a[k * as] * b[k * bs], in k order, each step one
 * f32 fma (the inputs already widened to f32 exactly). */
static inline float cc_mma_dot(const float *a, unsigned as, const float *b, unsigned bs, unsigned n, float c)
{
    float d = c;
    for (unsigned k = 0; k < n; k++) d = fmaf(a[k * as], b[k * bs], d);
    return d;
}

/* ** the layouts: a fragment coordinate (row or col) is a sum of up to
 * three bit fields of the lane or of the fragment element e, each scaled:
 *   sum of scale * ((x >> shift) & (2^width - 1)), x = lane or e.
 * Every documented layout has that form (the shapes are powers of two). */
typedef enum cc_mma_src { CC_MMA_LANE = 1, CC_MMA_ELEM = 2 } cc_mma_src;
typedef struct cc_mma_term {
    unsigned char src; /* cc_mma_src; 0 ends the sum */
    unsigned char shift, width;
    unsigned short scale;
} cc_mma_term;
#define CC_MMA_TERMS 3
typedef struct cc_mma_map {
    cc_mma_term row[CC_MMA_TERMS], col[CC_MMA_TERMS];
} cc_mma_map;

typedef struct cc_mma_kind {
    hcq_mma_info info;
    cc_mma_map frag[3]; /* A, B, C/D */
    const char *source; /* where the layout is stated (repository and path, or document and section) */
} cc_mma_kind;

/* The kind's row, or NULL for HCQ_MMA_NONE and unknown kinds. */
const cc_mma_kind *cc_mma_kind_of(unsigned kind);
/* A fragment coordinate of one lane (no checks: kind, lane and e valid). */
unsigned cc_mma_eval(const cc_mma_term *t, unsigned lane, unsigned e);

#endif
