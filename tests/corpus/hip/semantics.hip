// Small kernels for tests/mock/test_amd_isa.c: each pins one piece of the
// ISA executor's semantics (exec masking and saveexec, carries, DPP and
// bpermute, LDS atomics' returned values) or one of its failures (an
// unknown instruction, an access outside the GPU's mappings, a kernel that
// never ends). Built like corpus.hip.
#define __global__ extern "C" __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ static __attribute__((device)) inline

__device__ unsigned tid() { return __builtin_amdgcn_workitem_id_x(); }

// nested divergence: lanes take different paths twice, a loop with a
// lane-dependent trip count, and reconverge (s_and_saveexec, s_or exec,
// s_cbranch_execz)
__global__ void divergence(int *out) {
    unsigned l = tid();
    int v = 0;
    if (l & 1) {
        v = 10;
        if (l & 2) v += 100;
        else v -= 3;
    } else {
        for (unsigned k = 0; k < l; k++) v += (int)k;
    }
    if (l > 40) v = -v;
    out[l] = v;
}

// 64-bit arithmetic: carries across the halves (v_add_co_u32 + addc,
// v_sub_co + subb, v_mad_u64_u32)
__global__ void carries(const unsigned long long *a, const unsigned long long *b, unsigned long long *out) {
    unsigned l = tid();
    unsigned long long x = a[l], y = b[l];
    out[4 * l] = x + y;
    out[4 * l + 1] = x - y;
    out[4 * l + 2] = x * y;
    out[4 * l + 3] = (unsigned long long)(unsigned)x * (unsigned)y + y;
}

// DPP and ds_bpermute: each lane's neighbours
__global__ void lanes(const int *in, int *out) {
    unsigned l = tid();
    int v = in[l];
    out[4 * l] = __builtin_amdgcn_update_dpp(-1, v, 0x111, 0xf, 0xf, false);     // row_shr:1, lane 0 of a row keeps -1
    out[4 * l + 1] = __builtin_amdgcn_update_dpp(-1, v, 0x1b, 0xf, 0xf, false);  // quad_perm [3,2,1,0]
    out[4 * l + 2] = __builtin_amdgcn_ds_bpermute((int)((l * 7 + 3) % __builtin_amdgcn_wavefrontsize()) << 2, v);
    out[4 * l + 3] = __builtin_amdgcn_update_dpp(-1, v, 0x140, 0xf, 0xf, false); // row_mirror
}

// LDS atomics: every lane adds to one counter; the values returned are a
// permutation of 0..n-1; a max and an exchange
__global__ void lds_atomics(int *ret, int *fin) {
    __shared__ int c[3];
    unsigned l = tid();
    if (l == 0) c[0] = 0, c[1] = -1, c[2] = 7;
    __builtin_amdgcn_s_barrier();
    ret[3 * l] = __hip_atomic_fetch_add(&c[0], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    ret[3 * l + 1] = __hip_atomic_fetch_max(&c[1], (int)l, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    ret[3 * l + 2] = __hip_atomic_exchange(&c[2], (int)l, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    __builtin_amdgcn_s_barrier();
    if (l == 0) fin[0] = c[0], fin[1] = c[1], fin[2] = c[2];
}

// an instruction no gfx9 or gfx11 part has (a SOPP opcode left unused)
__global__ void unknown_instruction(int *out) {
    out[tid()] = 1;
    asm volatile(".long 0xbfff0000");
    out[tid()] = 2;
}

// a store 1 MiB past the end of its buffer (past the allocator's guard)
__global__ void out_of_bounds(int *out, int n) {
    out[tid() + n + (1 << 18)] = 1;
}

// never ends
__global__ void runaway(volatile int *flag) {
    while (*flag == 0) {}
}

// memcheck (HCQ_MOCK_CHECK=memcheck): LDS read before any wave wrote it
__global__ void lds_uninitialised(int *out) {
    __shared__ int s[128];
    unsigned l = tid();
    if (l != 5) s[l] = (int)l;
    __builtin_amdgcn_s_barrier();
    out[l] = s[l ^ 1];
}

// memcheck: after a barrier, one wave writes what another reads, with no
// barrier between
__global__ void lds_race(int *out) {
    __shared__ int s[128];
    unsigned l = tid(), w = __builtin_amdgcn_wavefrontsize();
    s[l] = (int)l;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (l < w) s[l + w] = 5;
    else out[l] = s[l];
}

// IEEE division (v_div_scale, v_rcp, v_div_fmas, v_div_fixup): quotients
// and denominators at the ends of the range, where the scaling cases apply
__global__ void division(const double *n, const double *d, double *q, const float *nf, const float *df, float *qf) {
    unsigned l = tid();
    q[l] = n[l] / d[l];
    qf[l] = nf[l] / df[l];
}

// the integer and f16 dot products an i8 matmul compiles to: each lane's
// a, b, c through the forms the target has (gfx11: v_dot4_i32_iu8 and
// v_dot8_i32_iu4 with their neg_lo signedness bits, the unsigned forms,
// v_dot2_f32_f16 and _bf16; gfx9: v_dot4c_i32_i8 / v_dot4_i32_i8,
// v_dot2_i32_i16 and v_dot8_i32_i4 with and without clamp); the test
// computes what each should give
typedef short short2_t __attribute__((ext_vector_type(2)));
typedef unsigned short ushort2_t __attribute__((ext_vector_type(2)));
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
__global__ void dots(const int *a, const int *b, const int *c, int *out) {
    unsigned l = tid();
    int x = a[l], y = b[l], z = c[l];
    int *o = out + 8 * l;
#if defined(__gfx1100__)
    o[0] = __builtin_amdgcn_sudot4(true, x, true, y, z, false);
    o[1] = __builtin_amdgcn_sudot4(true, x, false, y, z, false);
    o[2] = __builtin_amdgcn_sudot4(false, x, true, y, z, true);
    o[3] = __builtin_amdgcn_sudot8(true, x, true, y, z, false);
    o[4] = __builtin_amdgcn_sudot8(false, x, true, y, z, true);
    o[7] = __builtin_bit_cast(int, __builtin_amdgcn_fdot2_f32_bf16(__builtin_bit_cast(short2_t, x),
                                                                  __builtin_bit_cast(short2_t, y),
                                                                  __builtin_bit_cast(float, z), false));
#else
    o[0] = __builtin_amdgcn_sdot4(x, y, z, false);
    o[1] = __builtin_amdgcn_sdot2(__builtin_bit_cast(short2_t, x), __builtin_bit_cast(short2_t, y), z, false);
    o[2] = __builtin_amdgcn_sdot4(x, y, z, true);
    o[3] = __builtin_amdgcn_sdot8(x, y, z, false);
    o[4] = __builtin_amdgcn_sdot8(x, y, z, true);
    o[7] = (int)__builtin_amdgcn_udot2(__builtin_bit_cast(ushort2_t, x), __builtin_bit_cast(ushort2_t, y), (unsigned)z, true);
#endif
    o[5] = (int)(l & 1 ? __builtin_amdgcn_udot4((unsigned)x, (unsigned)y, (unsigned)z, true)
                       : __builtin_amdgcn_udot4((unsigned)x, (unsigned)y, (unsigned)z, false));
    o[6] = __builtin_bit_cast(int, __builtin_amdgcn_fdot2(__builtin_bit_cast(half2_t, x), __builtin_bit_cast(half2_t, y),
                                                          __builtin_bit_cast(float, z), false));
}
