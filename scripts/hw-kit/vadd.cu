// A small CUDA program for `hcq trace` on the GPU server (run.sh builds it
// with nvcc): the driver traffic of libcuda bringing a GPU up, allocating,
// copying and launching, to set beside hcq's own. Exits non-zero, with the
// CUDA error, where there is no GPU.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("vadd: %s: %s\n", #x, cudaGetErrorString(e_));                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main()
{
    const int n = 1 << 20;
    static float a[n], b[n], c[n];
    for (int i = 0; i < n; i++) a[i] = (float)i, b[i] = 2.0f * (float)i;
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, sizeof a));
    CHECK(cudaMalloc(&db, sizeof b));
    CHECK(cudaMalloc(&dc, sizeof c));
    CHECK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (c[i] != 3.0f * (float)i) {
            std::printf("vadd: wrong result at %d: %g\n", i, c[i]);
            return 1;
        }
    std::printf("vadd: ok (%d elements)\n", n);
    return 0;
}
