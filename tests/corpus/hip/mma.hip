// Matrix-core kernels written as HIP code calls them (clang's builtins, and
// one through inline assembly with the accumulator in AGPRs), built without
// ROCm's headers (clang -x hip -nogpuinc -nogpulib --cuda-device-only) and
// run on the AMD mock's ISA executor by tests/mock/test_amd_isa_mma.c
// against a scalar reference.
//
// Each wave (one per block) computes one tile D = A * B + C of its block's
// matrices: A at a + blk * M * K and B at b + blk * K * N (16-bit values,
// row-major), C and D at c, d + blk * 1024 (f32, row-major). Each lane
// gathers its fragments as the ISA guides lay them out (RDNA3 "Wave Matrix
// Multiply Accumulate"; CDNA2/3 "Matrix Fused Multiply Add" and AMD's
// matrix instruction calculator).
#define __global__ extern "C" __attribute__((global))
#define __device__ static __attribute__((device)) inline

typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef short i16x16 __attribute__((ext_vector_type(16)));

__device__ unsigned lane() { return __builtin_amdgcn_workitem_id_x(); }
__device__ unsigned blk() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ _Float16 h(unsigned short x) { return __builtin_bit_cast(_Float16, x); }

#if defined(__gfx1100__) // built for wave32 only (mma_w64.hip is the wave64 form; clang has no macro telling them apart)
// wave32, 16x16x16: lane l holds row l % 16 of A and column l % 16 of B (lanes 16-31 the same again);
// C/D register v of lane l is element (2 v + l / 16, l % 16)
__global__ void wmma_f16_w32(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    f16x16 A, B;
    f32x8 C;
    for (int k = 0; k < 16; k++) A[k] = h(a[r * 16 + k]), B[k] = h(b[k * 16 + r]);
    for (int v = 0; v < 8; v++) C[v] = c[(2 * v + l / 16) * 16 + r];
    f32x8 D = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(A, B, C);
    for (int v = 0; v < 8; v++) d[(2 * v + l / 16) * 16 + r] = D[v];
}
__global__ void wmma_bf16_w32(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    i16x16 A, B;
    f32x8 C;
    for (int k = 0; k < 16; k++) A[k] = (short)a[r * 16 + k], B[k] = (short)b[k * 16 + r];
    for (int v = 0; v < 8; v++) C[v] = c[(2 * v + l / 16) * 16 + r];
    f32x8 D = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(A, B, C);
    for (int v = 0; v < 8; v++) d[(2 * v + l / 16) * 16 + r] = D[v];
}
// only part of the wave at the WMMA: EXEC must be all ones (the ISA guide), so the mock refuses it
__global__ void wmma_diverged(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane();
    if (a[l] & 1) {
        f16x16 A, B;
        f32x8 C = {};
        for (int k = 0; k < 16; k++) A[k] = h(a[k]), B[k] = h(b[k]);
        f32x8 D = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(A, B, C);
        d[l] = D[0];
    }
}
#endif


#if defined(__gfx90a__) || defined(__gfx942__)
// 16x16x16 (wave64, one block): lane l holds A[l % 16][4 (l / 16) + j] and B[4 (l / 16) + j][l % 16];
// C/D register j of lane l is element (4 (l / 16) + j, l % 16)
__global__ void mfma_16x16x16_f16(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16, q = l / 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    f16x4 A, B;
    f32x4 C;
    for (int j = 0; j < 4; j++) A[j] = h(a[r * 16 + 4 * q + j]), B[j] = h(b[(4 * q + j) * 16 + r]);
    for (int j = 0; j < 4; j++) C[j] = c[(4 * q + j) * 16 + r];
    f32x4 D = __builtin_amdgcn_mfma_f32_16x16x16f16(A, B, C, 0, 0, 0);
    for (int j = 0; j < 4; j++) d[(4 * q + j) * 16 + r] = D[j];
}
__global__ void mfma_16x16x16_bf16(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16, q = l / 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    i16x4 A, B;
    f32x4 C;
    for (int j = 0; j < 4; j++) A[j] = (short)a[r * 16 + 4 * q + j], B[j] = (short)b[(4 * q + j) * 16 + r];
    for (int j = 0; j < 4; j++) C[j] = c[(4 * q + j) * 16 + r];
    f32x4 D = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(A, B, C, 0, 0, 0);
    for (int j = 0; j < 4; j++) d[(4 * q + j) * 16 + r] = D[j];
}
// 32x32x8 (A 32x8, B 8x32, C/D 32x32): lane l holds A[l % 32][4 (l / 32) + j] and B[4 (l / 32) + j][l % 32];
// C/D register j of lane l is element (8 (j / 4) + 4 (l / 32) + j % 4, l % 32)
__global__ void mfma_32x32x8_f16(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 32, q = l / 32;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    f16x4 A, B;
    f32x16 C;
    for (int j = 0; j < 4; j++) A[j] = h(a[r * 8 + 4 * q + j]), B[j] = h(b[(4 * q + j) * 32 + r]);
    for (int j = 0; j < 16; j++) C[j] = c[(8 * (j / 4) + 4 * q + j % 4) * 32 + r];
    f32x16 D = __builtin_amdgcn_mfma_f32_32x32x8f16(A, B, C, 0, 0, 0);
    for (int j = 0; j < 16; j++) d[(8 * (j / 4) + 4 * q + j % 4) * 32 + r] = D[j];
}
// only part of the wave at the MFMA: the mock refuses it (it models MFMA only with a full EXEC)
__global__ void mfma_diverged(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane();
    if (a[l] & 1) {
        f16x4 A, B;
        f32x4 C = {};
        for (int j = 0; j < 4; j++) A[j] = h(a[j]), B[j] = h(b[j]);
        f32x4 D = __builtin_amdgcn_mfma_f32_16x16x16f16(A, B, C, 0, 0, 0);
        d[l] = D[0];
    }
}
// the 16x16x16 f16 product through inline assembly with C and D in AGPRs (acc_cd; v_accvgpr_write/read move
// them), twice in a row: D = A * B + (A * B + C)
#if defined(__gfx942__)
#define MFMA16 "v_mfma_f32_16x16x16_f16"
#else
#define MFMA16 "v_mfma_f32_16x16x16f16"
#endif
__global__ void mfma_agpr_twice(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    unsigned l = lane(), r = l % 16, q = l / 16;
    a += blk() * 256, b += blk() * 256, c += blk() * 1024, d += blk() * 1024;
    f16x4 A, B;
    f32x4 C;
    for (int j = 0; j < 4; j++) A[j] = h(a[r * 16 + 4 * q + j]), B[j] = h(b[(4 * q + j) * 16 + r]);
    for (int j = 0; j < 4; j++) C[j] = c[(4 * q + j) * 16 + r];
    asm volatile(MFMA16 " %0, %1, %2, %0\n\ts_nop 7\n\ts_nop 7\n\t" MFMA16 " %0, %1, %2, %0\n\ts_nop 7\n\ts_nop 7"
                 : "+a"(C) : "v"(A), "v"(B));
    for (int j = 0; j < 4; j++) d[(4 * q + j) * 16 + r] = C[j];
}
#endif
