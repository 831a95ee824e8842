// Kernels whose SASS exercises what is easy to get wrong in an executor
// (tests/mock/test_sass_semantics.c checks each against C): carries of
// 64-bit arithmetic (IADD3/IADD3.X, IMAD.WIDE/.HI/.X), every LOP3 truth
// table, divergence and reconvergence with shuffles and votes inside
// branches, shuffles over segments, atomics' return values (global and
// shared), an instruction the executor does not implement (HMMA), and
// an access outside every mapping.
#include <cuda_fp16.h>

extern "C" __global__ void carry64(const unsigned long long *a, const unsigned long long *b, unsigned long long *out,
                                   int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = a[i], y = b[i];
    out[4 * i + 0] = x + y;
    out[4 * i + 1] = x - y;
    out[4 * i + 2] = x * y;
    out[4 * i + 3] = __umul64hi(x, y);
}

// signed 64-bit division and remainder: ptxas calls its __cuda_sm20_div_s64
// and rem_s64, which negate with IMAD.X d, RZ, RZ, ~hi, carry (an operand's
// bitwise not in IMAD); the host never passes b = 0 or INT64_MIN / -1
extern "C" __global__ void divrem64(const long long *a, const long long *b, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = a[i], y = b[i];
    out[3 * i + 0] = x / y;
    out[3 * i + 1] = x % y;
    out[3 * i + 2] = -x;
}

// paired 16-bit min/max (sm_90's VIMNMX.S16x2/.U16x2 and VIMNMX3)
extern "C" __global__ void minmax16x2(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out)
{
    int i = threadIdx.x;
    unsigned x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = __vmins2(x, y);
    out[6 * i + 1] = __vmaxs2(x, y);
    out[6 * i + 2] = __vminu2(x, y);
    out[6 * i + 3] = __vmaxu2(x, y);
    out[6 * i + 4] = __vimin3_s16x2(x, y, z);
    out[6 * i + 5] = __vimax3_u16x2(x, y, z);
}

template <unsigned L> __device__ unsigned lop3(unsigned a, unsigned b, unsigned c)
{
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(L));
    return d;
}

template <unsigned L, unsigned N> __device__ void lops(unsigned a, unsigned b, unsigned c, unsigned *out, int i)
{
    if constexpr (N == 1) {
        out[L * 64 + i] = lop3<L>(a, b, c);
    } else {
        lops<L, N / 2>(a, b, c, out, i);
        lops<L + N / 2, N / 2>(a, b, c, out, i);
    }
}

// out[lut * 64 + i] = lop3(a[i], b[i], c[i], lut) for every lut
extern "C" __global__ void lop3_all(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out)
{
    int i = threadIdx.x;
    lops<0, 256>(a[i], b[i], c[i], out, i);
}

// lanes take different paths by their id; shuffles and votes inside and after
extern "C" __global__ void diverge(const int *in, int *out)
{
    int t = threadIdx.x, v = in[t], r = 0;
    if (t & 1) {
        for (int k = 0; k < (t & 7); k++) r += v * k;
        unsigned m = __activemask();
        r += __popc(m) * 1000;
        r += __shfl_sync(m, v, (t + 2) & 31) * 7; /* from another odd lane */
    } else if (t & 2) {
        r = -v;
        while (r < 100) r += t + 1;
    } else {
        r = __ballot_sync(__activemask(), v > 50) & 0xffff;
    }
    r += __shfl_xor_sync(0xffffffffu, r, 16); /* all lanes again */
    out[t] = r + (__all_sync(0xffffffffu, v >= 0) ? 1 : 0) + 2 * (__any_sync(0xffffffffu, v == 77) ? 1 : 0);
}

// out[5 * i + k]: shfl idx, up, down, xor, and idx within segments of 8
extern "C" __global__ void shuffles(const int *in, int *out)
{
    int t = threadIdx.x, v = in[t];
    out[5 * t + 0] = __shfl_sync(0xffffffffu, v, (t * 7) & 31);
    out[5 * t + 1] = __shfl_up_sync(0xffffffffu, v, 3);
    out[5 * t + 2] = __shfl_down_sync(0xffffffffu, v, 5);
    out[5 * t + 3] = __shfl_xor_sync(0xffffffffu, v, 9);
    out[5 * t + 4] = __shfl_sync(0xffffffffu, v, 3, 8);
}

// returned old values: a permutation for add, one winner for CAS, ...
extern "C" __global__ void atomics_ret(int *g, int *old_add, int *old_cas, int *old_sh, unsigned *wrap)
{
    __shared__ int sh;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) sh = 0;
    __syncthreads();
    old_add[t] = atomicAdd(&g[0], 1);
    old_cas[t] = atomicCAS(&g[1], 0, t + 1);
    old_sh[t] = atomicAdd(&sh, 2) + 1000 * blockIdx.x;
    atomicMax(&g[2], t * 3 - 50);
    atomicMin(&g[3], 100 - t);
    wrap[t] = atomicInc((unsigned *)&g[4], 9);
    atomicExch(&g[5], 12345);
}

// HMMA: matrix multiply-accumulate on the tensor cores (not implemented by the executor)
extern "C" __global__ void uses_hmma(const unsigned *a, float *d)
{
    unsigned a0 = a[threadIdx.x], b0 = a[threadIdx.x + 32];
    float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a0), "r"(b0));
    d[threadIdx.x] = c0 + c1 + c2 + c3;
}

// a store far past its buffer, outside every mapping
extern "C" __global__ void store_far(int *p, long long off)
{
    p[off + threadIdx.x] = 1;
}

// memcheck's bug classes: a shared read of bytes nothing wrote; a read of
// bytes another warp wrote since the last barrier; and the fixed version
extern "C" __global__ void mc_uninit(int *out)
{
    __shared__ int s[64];
    if (threadIdx.x < 32) s[threadIdx.x] = 1;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void mc_race(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    s[t] = s[t ^ 32] + 1; /* the other warp's slot, which it writes in this same epoch */
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void mc_clean(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    int v = s[t ^ 32] + 1;
    __syncthreads();
    s[t] = v;
    __syncthreads();
    out[t] = s[t];
}

// __syncthreads_count/_and/_or (BAR.RED, B2R.RESULT), and some integer ops
extern "C" __global__ void bar_reductions(const int *x, int *out)
{
    int t = threadIdx.x;
    int c = __syncthreads_count(x[t] > 0);
    int a = __syncthreads_and(x[t] > -5);
    int o = __syncthreads_or(x[t] == 7);
    out[t] = c * 100 + a * 10 + o + (t << 16) + (x[t] << 3) + (x[t] >> 2) + (int)(__brev(x[t]) % 3) +
             (int)__byte_perm(x[t], t, 0x4321);
}

// libdevice's log2 of a double: its special cases end in FSEL with a NaN
// immediate whose bits are the high word of -inf (nvdisasm prints "-QNAN")
extern "C" __global__ void log2_f64(const double *x, double *out)
{
    out[threadIdx.x] = log2(x[threadIdx.x]);
}

// packed 16-bit min/max (sm_90: VIMNMX.S16x2/.U16x2, .RELU) and the 32-bit relu form
extern "C" __global__ void minmax16x2_relu(const unsigned *a, const unsigned *b, unsigned *out)
{
    int t = threadIdx.x;
    unsigned x = a[t], y = b[t];
    out[6 * t] = __vmins2(x, y);
    out[6 * t + 1] = __vmaxs2(x, y);
    out[6 * t + 2] = __vminu2(x, y);
    out[6 * t + 3] = __vmaxu2(x, y);
    out[6 * t + 4] = __vimax_s16x2_relu(x, y);
    out[6 * t + 5] = (unsigned)__vimin_s32_relu((int)x, (int)y);
}

// three-input forms (VIMNMX3.S16x2/.U16x2, .RELU)
extern "C" __global__ void minmax3_16x2(const unsigned *a, const unsigned *b, unsigned *out)
{
    int t = threadIdx.x;
    unsigned x = a[t], y = b[t], z = a[t] ^ b[(t + 5) % 64];
    out[3 * t] = __vimin3_s16x2(x, y, z);
    out[3 * t + 1] = __vimax3_u16x2(x, y, z);
    out[3 * t + 2] = __vimax3_s16x2_relu(x, y, z);
}

// 64-bit negations of sign-extended ints: ptxas's high words are
// IMAD.X d, RZ, RZ, ~hi, carry (and IMAD.X d, b, 0x1, ~c, carry)
extern "C" __global__ void neg64(const int *x, long long *out)
{
    int t = threadIdx.x;
    long long a = x[t], b = x[t + 32], c = x[t + 64], d = x[t + 96];
    out[8 * t] = -a;
    out[8 * t + 1] = -b;
    out[8 * t + 2] = -c;
    out[8 * t + 3] = -d;
    out[8 * t + 4] = -(a ^ b);
    out[8 * t + 5] = -(c | d);
    out[8 * t + 6] = -(a + c);
    out[8 * t + 7] = -(b - d);
}

// some lanes call a function (placed after the kernel) while the others
// wait at the barrier: a converged subset returning must not take the
// waiting lanes along
__device__ __noinline__ unsigned collatz_steps(unsigned v)
{
    unsigned n = 0;
    while (v > 1 && n < 1000) v = v & 1 ? 3 * v + 1 : v / 2, n++;
    return n;
}

extern "C" __global__ void call_then_barrier(const unsigned *x, unsigned *out)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x, v = x[t];
    if (v % 3 == 0) v = collatz_steps(v);
    s[t] = v;
    __syncthreads();
    out[t] = s[63 - t] + v;
}

// a shuffle after some lanes called a function: the BSYNC before it waits
// for the callers (at higher PCs), so the shuffle sees every lane's value
extern "C" __global__ void call_then_shuffle(const unsigned *x, unsigned *out)
{
    unsigned t = threadIdx.x, v = x[t];
    if (v % 3 == 0) v = collatz_steps(v);
    out[t] = __shfl_xor_sync(0xffffffffu, v, 1) * 1000u + v;
}

// IEEE single division (MUFU.RCP, FCHK, FFMA, the slow-path call): signed
// zeros, and quotients at the ends of the range
extern "C" __global__ void fdiv32(const float *n, const float *d, float *q)
{
    q[threadIdx.x] = n[threadIdx.x] / d[threadIdx.x];
}

// packed 16-bit add (sm_90: VIADD.16x2) and double min/max (sm_90:
// DSETP.MAX/.MIN choosing the words, quieting two NaNs)
extern "C" __global__ void add16x2_minmax64(const unsigned *a, const double *x, unsigned *o, double *m)
{
    int t = threadIdx.x;
    o[t] = __vadd2(a[t], a[t + 32]);
    m[3 * t] = fmax(x[t], x[t + 32]);
    m[3 * t + 1] = fmin(x[t], x[t + 32]);
    m[3 * t + 2] = fmax(x[t], -2.5);
}

// rounding a negated double: ptxas folds the negation into the operand
// (FRND.F64.TRUNC R, -R; difftest seed 5199: the sign was lost)
extern "C" __global__ void round_negated(const double *x, double *o)
{
    int t = threadIdx.x;
    double v = x[t];
    o[4 * t] = trunc(-v);
    o[4 * t + 1] = floor(-v);
    o[4 * t + 2] = ceil(-fabs(v));
    o[4 * t + 3] = rint(-v);
}

// double min/max of negated operands: ptxas folds the negation into
// DSETP.MAX/.MIN and the FSEL of the high words (difftest seed 9076)
extern "C" __global__ void minmax64_neg(const double *x, double *m)
{
    int t = threadIdx.x;
    m[2 * t] = fmax(x[t], -x[t + 32]);
    m[2 * t + 1] = fmin(-x[t], x[t + 32]);
}
