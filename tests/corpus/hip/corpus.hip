// Foreign HIP kernels in the style of the usual samples, built without
// ROCm's headers (clang -x hip -nogpuinc -nogpulib --cuda-device-only), so
// the few HIP names they use are spelled here. tests/mock/test_amd_isa_corpus.c
// builds this file for gfx1100 (wave32 and wave64), gfx90a and gfx942, loads
// each kernel with hcq_program_load_kernel and checks it against a C
// reference.
#define __global__ extern "C" __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ static __attribute__((device)) inline

__device__ unsigned tid_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ unsigned tid_y() { return __builtin_amdgcn_workitem_id_y(); }
__device__ unsigned bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ unsigned bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
// code object v5: hidden_group_size_x/y at 12/14 of the implicit arguments
__device__ unsigned bdim_x() { return *(const unsigned short *)((const char *)__builtin_amdgcn_implicitarg_ptr() + 12); }
__device__ unsigned bdim_y() { return *(const unsigned short *)((const char *)__builtin_amdgcn_implicitarg_ptr() + 14); }
__device__ void sync() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__device__ unsigned lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
__device__ float shfl_xor(float v, int mask) {
    int src = (int)(lane_id() ^ (unsigned)mask);
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src << 2, __builtin_bit_cast(int, v)));
}
__device__ unsigned wave_size() { return __builtin_amdgcn_wavefrontsize(); }

#define TILE 16
// C[n x n] = A[n x n] * B[n x n], 16x16 work-groups, tiles in LDS
__global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int tx = tid_x(), ty = tid_y();
    int row = bid_y() * TILE + ty, col = bid_x() * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + tx, br = t * TILE + ty;
        As[ty][tx] = row < n && ac < n ? A[row * n + ac] : 0.0f;
        Bs[ty][tx] = br < n && col < n ? B[br * n + col] : 0.0f;
        sync();
        for (int k = 0; k < TILE; k++) acc = __builtin_fmaf(As[ty][k], Bs[k][tx], acc);
        sync();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

// out[r] = sum of row r (cols floats), one wave per row, shuffles
__global__ void row_sum_shfl(const float *in, float *out, int cols) {
    unsigned r = bid_x(), l = tid_x(), w = wave_size();
    float s = 0.0f;
    for (unsigned c = l; c < (unsigned)cols; c += w) s += in[r * cols + c];
    for (unsigned m = w / 2; m > 0; m /= 2) s += shfl_xor(s, (int)m);
    if (l == 0) out[r] = s;
}

// the same with DPP row shifts and a cross-row swap through ds_swizzle
__global__ void row_max_dpp(const int *in, int *out) {
    unsigned r = bid_x(), l = tid_x();
    int v = in[r * wave_size() + l];
    // row_shr:1,2,4,8 within each row of 16 (bound_ctrl: out of row reads 0; values are positive)
    for (int sh = 1; sh < 16; sh *= 2) {
        int o;
        switch (sh) {
        case 1: o = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false); break;
        case 2: o = __builtin_amdgcn_update_dpp(0, v, 0x112, 0xf, 0xf, false); break;
        case 4: o = __builtin_amdgcn_update_dpp(0, v, 0x114, 0xf, 0xf, false); break;
        default: o = __builtin_amdgcn_update_dpp(0, v, 0x118, 0xf, 0xf, false); break;
        }
        v = v > o ? v : o;
    }
    // lane 15 of each row holds the row's max: gather them with bpermute
    int m = 0;
    for (unsigned row = 0; row < wave_size() / 16; row++) {
        int x = __builtin_amdgcn_ds_bpermute((int)(row * 16 + 15) << 2, v);
        m = m > x ? m : x;
    }
    // ds_swizzle in quad-permute mode reverses each quad: out[l] gets the max too
    int q = __builtin_amdgcn_ds_swizzle(m, 0x801b);
    if (l == 0) out[r] = q > m ? q : m;
}

// inclusive scan of 256 ints per work-group (Hillis-Steele in LDS)
__global__ void scan_block(const int *in, int *out) {
    __shared__ int buf[2][256];
    unsigned l = tid_x(), base = bid_x() * 256;
    int p = 0;
    buf[0][l] = in[base + l];
    sync();
    for (unsigned off = 1; off < 256; off *= 2) {
        int v = buf[p][l];
        if (l >= off) v += buf[p][l - off];
        buf[1 - p][l] = v;
        p = 1 - p;
        sync();
    }
    out[base + l] = buf[p][l];
}

// 64-bin histogram of bytes: LDS atomics, then global atomics; old values
// returned by the LDS atomic are counted in `tickets` to check return values
__global__ void histogram(const unsigned char *data, unsigned n, unsigned *bins, unsigned *tickets) {
    __shared__ unsigned local[64];
    unsigned l = tid_x(), i = bid_x() * bdim_x() + l;
    if (l < 64) local[l] = 0;
    sync();
    if (i < n) {
        unsigned old = __hip_atomic_fetch_add(&local[data[i] & 63], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
        __hip_atomic_fetch_add(&tickets[old & 1023], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    }
    sync();
    if (l < 64 && local[l]) __hip_atomic_fetch_add(&bins[l], local[l], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// softmax of each row of `cols` floats, one work-group of one wave per row
__global__ void softmax_rows(const float *in, float *out, int cols) {
    unsigned r = bid_x(), l = tid_x(), w = wave_size();
    const float *x = in + r * cols;
    float m = -__builtin_inff();
    for (unsigned c = l; c < (unsigned)cols; c += w) m = __builtin_fmaxf(m, x[c]);
    for (unsigned k = w / 2; k > 0; k /= 2) m = __builtin_fmaxf(m, shfl_xor(m, (int)k));
    float s = 0.0f;
    for (unsigned c = l; c < (unsigned)cols; c += w) s += __builtin_expf(x[c] - m);
    for (unsigned k = w / 2; k > 0; k /= 2) s += shfl_xor(s, (int)k);
    for (unsigned c = l; c < (unsigned)cols; c += w) out[r * cols + c] = __builtin_expf(x[c] - m) / s;
}

// f16: y = a * x + b in half precision, and a packed half2 product
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
__global__ void f16_axpb(const _Float16 *x, _Float16 *y, half2_t *p, _Float16 a, _Float16 b, unsigned n) {
    unsigned i = bid_x() * bdim_x() + tid_x();
    if (i < n) {
        y[i] = a * x[i] + b;
        half2_t v = {x[i], (_Float16)(x[i] * (_Float16)0.5f)};
        p[i] = v * v;
    }
}

// a stack: a per-thread array indexed by data (private segment / scratch)
__global__ void stack_sort8(const int *in, int *out, unsigned n) {
    unsigned i = bid_x() * bdim_x() + tid_x();
    if (i >= n) return;
    volatile int v[8];
    for (int k = 0; k < 8; k++) v[k] = in[i * 8 + k];
    for (int a = 1; a < 8; a++)
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            int t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
    for (int k = 0; k < 8; k++) out[i * 8 + k] = v[k];
}

// dynamic shared memory: the work-group reverses its slice through it
extern __shared__ float dyn[];
__global__ void reverse_dyn(const float *in, float *out) {
    unsigned l = tid_x(), n = bdim_x(), base = bid_x() * n;
    dyn[l] = in[base + l];
    sync();
    out[base + l] = dyn[n - 1 - l];
}
