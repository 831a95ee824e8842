/* A whole HIP program for ROCm's own runtime on the preloaded mock
 * (tests/mock/test_amd_isa_hip.c): built by Debian's hipcc (ROCm 5.2) for
 * gfx90a, its kernels (dynamic shared memory, shuffles, shared and global
 * atomics, f16, a softmax, f64 division and square root) run on the mock's
 * ISA executor through the AQL packets ROCm's runtime writes, checked here
 * against C. Prints one line per kernel and "results right" at the end. */
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <stdio.h>
#include <math.h>
#define CK(x) do { hipError_t e_ = (x); if (e_) { printf("%s: %s\n", #x, hipGetErrorString(e_)); return 2; } } while (0)

__global__ void dyn_rev(const float *in, float *out, int n) {
  extern __shared__ float s[];
  int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  s[t] = g < n ? in[g] : 0.f;
  __syncthreads();
  if (g < n) out[g] = s[blockDim.x - 1 - t] * 2.f;
}
__global__ void rowsum_shfl(const float *in, float *out, int cols) {
  float v = 0;
  for (int c = threadIdx.x; c < cols; c += warpSize) v += in[blockIdx.x * cols + c];
  for (int o = warpSize / 2; o; o >>= 1) v += __shfl_xor(v, o);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
__global__ void hist(const int *in, int n, unsigned *bins) {
  __shared__ unsigned s[16];
  if (threadIdx.x < 16) s[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&s[in[i] & 15], 1u);
  __syncthreads();
  if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], s[threadIdx.x]);
}
__global__ void halfmath(const __half *a, const __half *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(__hfma(a[i], b[i], __float2half(1.5f)));
}
__global__ void smax(const float *in, float *out, int cols) {
  __shared__ float red[64];
  const float *r = in + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, r[c]);
  red[threadIdx.x] = m; __syncthreads();
  for (int s = blockDim.x / 2; s; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }
  m = red[0]; __syncthreads();
  float sum = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(r[c] - m);
  red[threadIdx.x] = sum; __syncthreads();
  for (int s = blockDim.x / 2; s; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }
  sum = red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[blockIdx.x * cols + c] = expf(r[c] - m) / sum;
}
__global__ void dbl(const double *a, double *o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = sqrt(a[i]) * 3.0 + a[i] / 7.0;
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  const int n = 1000, R = 8, C = 300;
  float *hi = (float *)malloc(4 * n), *ho = (float *)malloc(4 * n);
  for (int i = 0; i < n; i++) hi[i] = (float)(i % 37) - 11.f;
  float *di, *dout; CK(hipMalloc(&di, 4 * n)); CK(hipMalloc(&dout, 4 * n));
  CK(hipMemcpy(di, hi, 4 * n, hipMemcpyHostToDevice));
  int bad = 0;
  /* dynamic shared memory */
  hipLaunchKernelGGL(dyn_rev, dim3((n + 127) / 128), dim3(128), 128 * 4, 0, di, dout, n);
  CK(hipDeviceSynchronize()); CK(hipMemcpy(ho, dout, 4 * n, hipMemcpyDeviceToHost));
  for (int b = 0; b * 128 < n; b++) for (int t = 0; t < 128 && b * 128 + t < n; t++) {
    int src = b * 128 + 127 - t; float e = src < n ? hi[src] * 2.f : 0.f;
    if (ho[b * 128 + t] != e) { if (bad++ < 3) printf("dyn_rev %d: %g want %g\n", b * 128 + t, ho[b * 128 + t], e); }
  }
  printf("dyn_rev %s\n", bad ? "WRONG" : "right");
  /* row sums with shuffles (wave64 on gfx90a) */
  int b0 = bad;
  hipLaunchKernelGGL(rowsum_shfl, dim3(R), dim3(64), 0, 0, di, dout, C / 3);
  CK(hipDeviceSynchronize()); CK(hipMemcpy(ho, dout, 4 * R, hipMemcpyDeviceToHost));
  for (int r = 0; r < R; r++) { float e = 0; for (int c = 0; c < C / 3; c++) e += hi[r * (C / 3) + c]; if (fabsf(ho[r] - e) > 1e-3f) { if (bad++ < b0 + 3) printf("rowsum %d: %g want %g\n", r, ho[r], e); } }
  printf("rowsum %s\n", bad > b0 ? "WRONG" : "right");
  /* histogram */
  b0 = bad;
  int *hin = (int *)malloc(4 * n); for (int i = 0; i < n; i++) hin[i] = i * 7 + i / 3;
  int *din; unsigned *dbins; CK(hipMalloc(&din, 4 * n)); CK(hipMalloc(&dbins, 64));
  CK(hipMemcpy(din, hin, 4 * n, hipMemcpyHostToDevice)); CK(hipMemset(dbins, 0, 64));
  hipLaunchKernelGGL(hist, dim3(4), dim3(128), 0, 0, din, n, dbins);
  unsigned hb[16], eb[16] = {0}; CK(hipDeviceSynchronize()); CK(hipMemcpy(hb, dbins, 64, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) eb[hin[i] & 15]++;
  for (int i = 0; i < 16; i++) if (hb[i] != eb[i]) { if (bad++ < b0 + 3) printf("hist %d: %u want %u\n", i, hb[i], eb[i]); }
  printf("hist %s\n", bad > b0 ? "WRONG" : "right");
  /* f16 */
  b0 = bad;
  __half ha[256], hb2[256]; for (int i = 0; i < 256; i++) { ha[i] = __float2half(i * 0.25f - 3); hb2[i] = __float2half(0.5f + (i % 5)); }
  __half *dha, *dhb; CK(hipMalloc(&dha, 512)); CK(hipMalloc(&dhb, 512));
  CK(hipMemcpy(dha, ha, 512, hipMemcpyHostToDevice)); CK(hipMemcpy(dhb, hb2, 512, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(halfmath, dim3(4), dim3(64), 0, 0, dha, dhb, dout, 256);
  CK(hipDeviceSynchronize()); CK(hipMemcpy(ho, dout, 1024, hipMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) { float e = (i * 0.25f - 3) * (0.5f + (i % 5)) + 1.5f; if (fabsf(ho[i] - e) > fabsf(e) * 2e-3f + 1e-3f) { if (bad++ < b0 + 3) printf("half %d: %g want %g\n", i, ho[i], e); } }
  printf("half %s\n", bad > b0 ? "WRONG" : "right");
  /* softmax */
  b0 = bad;
  hipLaunchKernelGGL(smax, dim3(R), dim3(64), 0, 0, di, dout, 100);
  CK(hipDeviceSynchronize()); CK(hipMemcpy(ho, dout, 4 * R * 100, hipMemcpyDeviceToHost));
  for (int r = 0; r < R; r++) { float m = -INFINITY, s = 0; for (int c = 0; c < 100; c++) m = fmaxf(m, hi[r * 100 + c]); for (int c = 0; c < 100; c++) s += expf(hi[r * 100 + c] - m);
    for (int c = 0; c < 100; c++) { float e = expf(hi[r * 100 + c] - m) / s; if (fabsf(ho[r * 100 + c] - e) > 1e-5f + e * 1e-4f) { if (bad++ < b0 + 3) printf("softmax %d,%d: %g want %g\n", r, c, ho[r * 100 + c], e); } } }
  printf("softmax %s\n", bad > b0 ? "WRONG" : "right");
  /* f64 */
  b0 = bad;
  double hd[200], od[200]; for (int i = 0; i < 200; i++) hd[i] = i * 1.25 + 0.5;
  double *dd, *dod; CK(hipMalloc(&dd, 1600)); CK(hipMalloc(&dod, 1600)); CK(hipMemcpy(dd, hd, 1600, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(dbl, dim3(4), dim3(64), 0, 0, dd, dod, 200);
  CK(hipDeviceSynchronize()); CK(hipMemcpy(od, dod, 1600, hipMemcpyDeviceToHost));
  for (int i = 0; i < 200; i++) { double e = fma(sqrt(hd[i]), 3.0, hd[i] / 7.0); /* hipcc contracts */ if (od[i] != e) { if (bad++ < b0 + 3) printf("f64 %d: %.17g want %.17g\n", i, od[i], e); } }
  printf("f64 %s\n", bad > b0 ? "WRONG" : "right");
  printf("results %s\n", bad ? "WRONG" : "right");
  return bad != 0;
}
