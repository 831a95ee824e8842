// Tensor-core kernels written the way CUDA code uses mma.sync directly
// (inline PTX, as CUTLASS's warp-level code does), built outside hcq
// (nvcc -cubin) and run on the NV mock's SASS executor by
// tests/mock/test_sass_mma.c against a scalar reference.
//
// Each warp computes one 16x8 tile D = A (16x16) * B (16x8) + C. Tile w
// reads A at a + 256 w (row-major 16-bit values), B at b + 128 w (row-major
// K x N: B[k][n] at k * 8 + n), C and D at c, d + 128 w (row-major f32).
// The fragments are gathered as the PTX ISA's "Matrix Fragments for
// mma.m16n8k16 with floating point type" lays them out (lane = 4 g + t).

// 16-bit values x[lo], x[hi] packed as one .f16x2 / .bf16x2 register (lo in the low half)
__device__ static unsigned pack(const unsigned short *x, int lo, int hi)
{
    return (unsigned)x[lo] | (unsigned)x[hi] << 16;
}

// lane (g, t)'s A fragment (a[0..3]) of a row-major 16x16 tile and its B fragment (b[0..1]) of a
// row-major 16x8 (K x N) tile, gathered from global memory
struct frags {
    unsigned a[4], b[2];
};
__device__ static frags load_ab(const unsigned short *a, const unsigned short *b, int g, int t)
{
    frags f;
    f.a[0] = pack(a, g * 16 + 2 * t, g * 16 + 2 * t + 1), f.a[1] = pack(a, (g + 8) * 16 + 2 * t, (g + 8) * 16 + 2 * t + 1);
    f.a[2] = pack(a, g * 16 + 2 * t + 8, g * 16 + 2 * t + 9), f.a[3] = pack(a, (g + 8) * 16 + 2 * t + 8, (g + 8) * 16 + 2 * t + 9);
    f.b[0] = pack(b, (2 * t) * 8 + g, (2 * t + 1) * 8 + g), f.b[1] = pack(b, (2 * t + 8) * 8 + g, (2 * t + 9) * 8 + g);
    return f;
}

// lane (g, t)'s four f32 elements of a row-major 16x8 C or D tile
struct acc4 {
    float v[4];
};
__device__ static acc4 load_c(const float *c, int g, int t)
{
    acc4 r = {{c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]}};
    return r;
}
__device__ static void store_d(float *d, int g, int t, acc4 r)
{
    d[g * 8 + 2 * t] = r.v[0], d[g * 8 + 2 * t + 1] = r.v[1], d[(g + 8) * 8 + 2 * t] = r.v[2], d[(g + 8) * 8 + 2 * t + 1] = r.v[3];
}

// D = A B + C with f32 accumulators and inputs of type TY (f16 or bf16)
#define MMA_F32(TY, f, cc, dd)                                                                                           \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "  \
                 "{%10,%11,%12,%13};"                                                                                    \
                 : "=f"(dd.v[0]), "=f"(dd.v[1]), "=f"(dd.v[2]), "=f"(dd.v[3])                                            \
                 : "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3]), "r"(f.b[0]), "r"(f.b[1]), "f"(cc.v[0]),          \
                   "f"(cc.v[1]), "f"(cc.v[2]), "f"(cc.v[3]))

// fragments loaded from global memory by each lane; f32 accumulator; f16 inputs
extern "C" __global__ void mma_f16_f32(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a += 256 * w, b += 128 * w, c += 128 * w, d += 128 * w;
    frags f = load_ab(a, b, g, t);
    acc4 cc = load_c(c, g, t), dd;
    MMA_F32("f16", f, cc, dd);
    store_d(d, g, t, dd);
}

// the same with bf16 inputs
extern "C" __global__ void mma_bf16_f32(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a += 256 * w, b += 128 * w, c += 128 * w, d += 128 * w;
    frags f = load_ab(a, b, g, t);
    acc4 cc = load_c(c, g, t), dd;
    MMA_F32("bf16", f, cc, dd);
    store_d(d, g, t, dd);
}

// f16 accumulator: C and D are f16 (row-major 16x8 16-bit values)
extern "C" __global__ void mma_f16_f16(const unsigned short *a, const unsigned short *b, const unsigned short *c,
                                       unsigned *d)
{
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a += 256 * w, b += 128 * w, c += 128 * w, d += 64 * w;
    frags f = load_ab(a, b, g, t);
    unsigned c0 = pack(c, g * 8 + 2 * t, g * 8 + 2 * t + 1), c1 = pack(c, (g + 8) * 8 + 2 * t, (g + 8) * 8 + 2 * t + 1), d0, d1;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
                 : "=r"(d0), "=r"(d1)
                 : "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3]), "r"(f.b[0]), "r"(f.b[1]), "r"(c0), "r"(c1));
    d[(g * 8 + 2 * t) / 2] = d0, d[((g + 8) * 8 + 2 * t) / 2] = d1;
}

// through shared memory with ldmatrix (A: .x4; B: .x2.trans from its row-major K x N layout), f16 inputs
extern "C" __global__ void mma_ldmatrix_f16(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    __shared__ __align__(16) unsigned short sa[4][256], sb[4][128];
    int wi = threadIdx.x / 32, w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    int g = lane / 4, t = lane % 4;
    a += 256 * w, b += 128 * w, c += 128 * w, d += 128 * w;
    for (int i = lane; i < 256; i += 32) sa[wi][i] = a[i];
    for (int i = lane; i < 128; i += 32) sb[wi][i] = b[i];
    __syncwarp();
    frags f;
    // lane l gives row (l % 16) at column 8 (l / 16) of A: matrices rows 0-7 | 8-15 x columns 0-7 | 8-15
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[wi][(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(f.a[0]), "=r"(f.a[1]), "=r"(f.a[2]), "=r"(f.a[3]) : "r"(pa));
    // lanes 0-15 give rows k = 0..15 of B; transposed, each lane gets B[2t][g], B[2t+1][g]
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[wi][(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(f.b[0]), "=r"(f.b[1]) : "r"(pb));
    acc4 cc = load_c(c, g, t), dd;
    MMA_F32("f16", f, cc, dd);
    store_d(d, g, t, dd);
}

// C = 0: ptxas gives HMMA RZ as its accumulator
extern "C" __global__ void mma_f16_zero_c(const unsigned short *a, const unsigned short *b, const float *c, float *d)
{
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    a += 256 * w, b += 128 * w, d += 128 * w;
    (void)c;
    frags f = load_ab(a, b, g, t);
    acc4 dd;
    float z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                 : "=f"(dd.v[0]), "=f"(dd.v[1]), "=f"(dd.v[2]), "=f"(dd.v[3])
                 : "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3]), "r"(f.b[0]), "r"(f.b[1]), "f"(z));
    store_d(d, g, t, dd);
}

// ldmatrix .x1 (non-transposed): each lane's register as loaded, to check the layout by itself
extern "C" __global__ void ldmatrix_x1(const unsigned short *a, unsigned *out)
{
    __shared__ __align__(16) unsigned short s[64];
    int lane = threadIdx.x;
    s[lane] = a[lane], s[lane + 32] = a[lane + 32];
    __syncwarp();
    unsigned r, p = (unsigned)__cvta_generic_to_shared(&s[(lane % 8) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(p));
    out[lane] = r;
}

// a diverged warp at mma.sync: undefined in the PTX ISA, an error on the mock
extern "C" __global__ void mma_diverged(const unsigned *a, float *d)
{
    int lane = threadIdx.x % 32;
    if (a[lane] & 1) {
        float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%4,%4}, {%0,%1,%2,%3};"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a[lane]));
        d[lane] = d0 + d1 + d2 + d3;
    }
}
