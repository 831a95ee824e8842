// The wave64 form of gfx11's WMMA (tests/mock/test_amd_isa_mma.c builds it
// with clang -x hip -mwavefrontsize64 for gfx1100): decoded by the mock, but
// not run yet (the wave64 C/D layout is not modelled: an illegal-instruction
// error naming it).
#define __global__ extern "C" __attribute__((global))
#define __device__ static __attribute__((device)) inline

typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));

__device__ unsigned lane() { return __builtin_amdgcn_workitem_id_x(); }
__device__ _Float16 h(unsigned short x) { return __builtin_bit_cast(_Float16, x); }

__global__ void wmma_f16_w64(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16;
    f16x16 A, B;
    f32x4 C;
    for (int k = 0; k < 16; k++) A[k] = h(a[r * 16 + k]), B[k] = h(b[k * 16 + r]);
    for (int v = 0; v < 4; v++) C[v] = c[l * 4 + v];
    f32x4 D = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(A, B, C);
    for (int v = 0; v < 4; v++) d[l * 4 + v] = D[v];
}
