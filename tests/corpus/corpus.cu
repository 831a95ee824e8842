// A corpus of kernels written the way the usual CUDA samples write them
// (and one with __constant__ data and a __device__ variable),
// built outside hcq (nvcc -cubin) and run through hcq_program_load_kernel
// on the NV mock's SASS executor (tests/mock/test_sass_corpus.c). Each
// kernel's expected output is computed by tests/corpus/corpus_ref.c from
// the same inputs; corpus_ref.h says how each is launched. The HIP
// versions of these kernels keep the same names, parameters and launches.
#include <cuda_fp16.h>

#define TILE 16

// C = A (M x K) * B (K x N), row-major; 16x16 tiles through shared memory
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; t++) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < M && ak < K ? A[row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = bk < K && col < N ? B[bk * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// one warp per row (blockDim 32 x 4): strided partial sums, then a tree of shuffles
extern "C" __global__ void row_sum_shfl(const float *x, float *out, int rows, int cols)
{
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += x[row * cols + c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) out[row] = s;
}

// inclusive scan of each block's 256 elements (Hillis-Steele, double-buffered in shared memory)
extern "C" __global__ void scan_block(const int *in, int *out, int n)
{
    __shared__ int buf[2][256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t, cur = 0;
    buf[0][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int v = buf[cur][t];
        if (t >= off) v += buf[cur][t - off];
        buf[cur ^ 1][t] = v;
        cur ^= 1;
        __syncthreads();
    }
    if (i < n) out[i] = buf[cur][t];
}

// 256-bin histogram: per-block bins in shared memory, then added to the global ones
extern "C" __global__ void histogram(const unsigned char *data, int n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

// softmax of each row, one warp per row: max and sum by butterfly shuffles
extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols)
{
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    const float *r = x + row * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, r[c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += expf(r[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int c = threadIdx.x; c < cols; c += 32) y[row * cols + c] = expf(r[c] - m) / s;
}

// y = a * x + y on pairs of halves, and the sum of each pair as a float
extern "C" __global__ void half_axpy(const __half2 *x, __half2 *y, float *pair_sum, float a, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 a2 = __float2half2_rn(a);
    __half2 v = __hfma2(a2, x[i], y[i]);
    y[i] = v;
    pair_sum[i] = __half2float(__low2half(v)) + __half2float(__high2half(v));
}

// a stack: a local array indexed by data, filled by a function that is not inlined
__device__ __noinline__ void fill_table(int *t, int n, int seed)
{
    for (int i = 0; i < n; i++) t[i] = seed * (i + 1) ^ (i << 3);
}

extern "C" __global__ void stack_lookup(const int *idx, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int table[48];
    fill_table(table, 48, i + 7);
    int k = idx[i];
    out[i] = table[k % 48] + table[(k / 48) % 48];
}

// each block reverses its slice through dynamic shared memory (blockDim floats, sized at the launch)
extern "C" __global__ void reverse_dynamic(const float *in, float *out, int n)
{
    extern __shared__ float s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
    if (j < n) out[j] = s[t];
}

// constant memory and a global variable, both initialized in the binary:
// the loader binds the constant bank and relocates the global's address
__constant__ float c_coef[4] = {0.5f, -1.0f, 2.0f, 4.0f};
__device__ int g_offset = 5;

extern "C" __global__ void const_and_global(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * c_coef[i & 3] + (float)g_offset;
}
