// The wave64 form of gfx11's WMMA, built by tests/mock/test_amd_isa_mma.c
// with clang -x hip -mwavefrontsize64 for gfx1100 (a file of its own: clang
// has no macro telling a wave64 build from a wave32 one). Same tiles as
// mma.hip: A and B as in wave32 (lanes 16-63 copy lanes 0-15); C/D register
// v of lane l is element (4 v + l / 16, l % 16).
#define __global__ extern "C" __attribute__((global))
#define __device__ static __attribute__((device)) inline

typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));

__device__ unsigned lane() { return __builtin_amdgcn_workitem_id_x(); }
__device__ unsigned blk() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ _Float16 h(unsigned short x) { return __builtin_bit_cast(_Float16, x); }

__global__ void wmma_f16_w64(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    f16x16 A, B;
    f32x4 C;
    for (int k = 0; k < 16; k++) A[k] = h(a[r * 16 + k]), B[k] = h(b[k * 16 + r]);
    for (int v = 0; v < 4; v++) C[v] = c[(4 * v + l / 16) * 16 + r];
    f32x4 D = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(A, B, C);
    for (int v = 0; v < 4; v++) d[(4 * v + l / 16) * 16 + r] = D[v];
}
