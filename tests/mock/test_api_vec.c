/* IR vector values (include/hcq/compiler.h, "Vector values") on the device
 * under test: vector loads and stores of 2 to 16 bytes (f32x2, f32x4,
 * f16x2, bf16x2, f16x8, i32x4, u8x4), gated, through an accumulator, the
 * lane ops, elementwise ops, a vector round trip through local memory, and the alignment
 * rule: a misaligned vector access faults with a message where the device
 * checks (the interpreter, the mock's host twins, NVIDIA's executor; AMD
 * runs it, as its hardware does; the compiled cpu target does not check,
 * as it does not check bounds).
 * Results are compared bit for bit. */
#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>

static hcq_device *dev;
static void setup(void) { dev = t_open(); }
static void teardown(void)
{
    if (dev) T_OK(hcq_device_close(dev));
}
TestSuite(api_vec, .init = setup, .fini = teardown, .timeout = 240);

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    return hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, ls), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
}

/* out[i*N .. i*N+N) = the lanes of in[i*N + skew ..] reversed, where work-
 * items with i % 3 == 0 read nothing and take the alt vector (every lane
 * `fill`) instead; the result goes through a vector accumulator.
 *                                           params: T *out, T *in */
static hcq_kernel *k_vrev(hcq_dtype t, unsigned n, int skew)
{
    hcq_kernel *k = hcq_kernel_create("vrev");
    hcq_ir_ref out = hcq_ir_param_buffer(k, t), in = hcq_ir_param_buffer(k, t), i = gid(k);
    hcq_ir_ref base = hcq_ir_binary(k, HCQ_OP_MUL, i, hcq_ir_const_int(k, HCQ_I32, n));
    hcq_ir_ref at = hcq_ir_binary(k, HCQ_OP_ADD, base, hcq_ir_const_int(k, HCQ_I32, skew));
    hcq_ir_ref gate = hcq_ir_binary(k, HCQ_OP_CMPNE, hcq_ir_binary(k, HCQ_OP_MOD, i, hcq_ir_const_int(k, HCQ_I32, 3)),
                                    hcq_ir_const_int(k, HCQ_I32, 0));
    hcq_ir_ref alt = hcq_ir_vsplat(k, hcq_ir_const_int(k, t, 7), n);
    hcq_ir_ref v = hcq_ir_load_vec_gated(k, in, at, n, gate, alt);
    hcq_ir_ref acc = hcq_ir_define_acc(k, alt);
    hcq_ir_ref w = hcq_ir_vsplat(k, hcq_ir_vget(k, v, 0), n);
    for (unsigned j = 0; j < n; j++) w = hcq_ir_vset(k, w, j, hcq_ir_vget(k, v, n - 1 - j));
    hcq_ir_assign(k, acc, w);
    hcq_ir_store(k, out, base, acc);
    return k;
}

enum { GROUPS = 2, LOCAL = 64, ITEMS = GROUPS * LOCAL };

/* the element bits of dtype t at index e: distinct, and for floats a
 * mix of normal values, signed zeros, infinities and NaN payloads */
static uint64_t elem_bits(hcq_dtype t, unsigned e)
{
    uint64_t x = (uint64_t)e * 0x9e3779b97f4a7c15ull;
    switch (hcq_dtype_size(t)) {
    case 1: return (uint8_t)(x >> 56);
    case 2: return (uint16_t)(x >> 48);
    case 4: return (uint32_t)(x >> 32);
    default: return x;
    }
}

static void put(void *p, size_t es, size_t at, uint64_t v) { memcpy((char *)p + at * es, &v, es); }
static uint64_t get(const void *p, size_t es, size_t at)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)p + at * es, es);
    return v;
}

/* the bits CONST 7 has in dtype t */
static uint64_t seven(hcq_dtype t)
{
    switch (t) {
    case HCQ_F32: return 0x40e00000u;
    case HCQ_F16: return 0x4700u;
    case HCQ_BF16: return 0x40e0u;
    case HCQ_F64: return 0x401c000000000000ull;
    default: return 7;
    }
}

static void check_vrev(hcq_dtype t, unsigned n)
{
    size_t es = hcq_dtype_size(t), count = (size_t)ITEMS * n;
    void *in = calloc(count, es), *out = calloc(count, es), *got = calloc(count, es);
    cr_assert(in && out && got);
    for (size_t e = 0; e < count; e++) {
        uint64_t b = elem_bits(t, (unsigned)e);
        /* f16/bf16 loads and stores keep signalling NaNs as they are, but
         * the value form on the GPUs is a float: quiet ones only, so the
         * test holds every device to the same bits */
        if (t == HCQ_F16 && (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu)) b |= 0x200u;
        if (t == HCQ_BF16 && (b & 0x7f80u) == 0x7f80u && (b & 0x7fu)) b |= 0x40u;
        put(in, es, e, b);
    }
    hcq_program *p = t_load(dev, k_vrev(t, n, 0));
    hcq_buffer *bi = t_buffer_from(dev, in, count * es), *bo = t_buffer_from(dev, out, count * es);
    hcq_arg a[2] = {hcq_arg_buffer(bo), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(GROUPS, LOCAL)));
    t_read(bo, got, count * es);
    for (unsigned i = 0; i < ITEMS; i++)
        for (unsigned j = 0; j < n; j++) {
            uint64_t want = i % 3 == 0 ? seven(t) : get(in, es, (size_t)i * n + (n - 1 - j));
            uint64_t have = get(got, es, (size_t)i * n + j);
            cr_assert_eq(have, want, "%s x%u: work-item %u lane %u is 0x%llx, want 0x%llx", hcq_dtype_name(t), n, i, j,
                         (unsigned long long)have, (unsigned long long)want);
        }
    T_OK(hcq_buffer_free(bi));
    T_OK(hcq_buffer_free(bo));
    T_OK(hcq_program_free(p));
    free(in);
    free(out);
    free(got);
}

Test(api_vec, f32x4_16_byte_loads_and_stores_are_exact) { check_vrev(HCQ_F32, 4); }
Test(api_vec, f32x2_loads_and_stores_are_exact) { check_vrev(HCQ_F32, 2); }
Test(api_vec, f16x2_and_bf16x2_are_exact) { check_vrev(HCQ_F16, 2), check_vrev(HCQ_BF16, 2); }
Test(api_vec, f16x8_a_16_byte_mma_fragment_is_exact) { check_vrev(HCQ_F16, 8); }
Test(api_vec, integer_vectors_are_exact) { check_vrev(HCQ_I32, 4), check_vrev(HCQ_U8, 4), check_vrev(HCQ_I64, 2); }

/* Elementwise ops on vectors, lane for lane as the scalar ops: for each
 * work-item i with a = in[i*4 ..] (f32x4),
 *   out[i*4 ..]  = a * a + 0.5            (mulacc, fused)
 *   h[i*4 ..]    = f16(a) + f16(a)        (cast, add in f16: rounded)
 *   u[i*4 ..]    = bits(a) >> 3           (bitcast, shr)
 *                                           params: f32 *out, f16 *h, u32 *u, f32 *in */
static hcq_kernel *k_velem(void)
{
    hcq_kernel *k = hcq_kernel_create("velem");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), h = hcq_ir_param_buffer(k, HCQ_F16);
    hcq_ir_ref u = hcq_ir_param_buffer(k, HCQ_U32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref at = hcq_ir_binary(k, HCQ_OP_MUL, gid(k), hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_ref a = hcq_ir_load_vec(k, in, at, 4);
    hcq_ir_store(k, out, at, hcq_ir_mulacc(k, a, a, hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 0.5), 4)));
    hcq_ir_ref ah = hcq_ir_cast(k, HCQ_F16, a);
    hcq_ir_store(k, h, at, hcq_ir_binary(k, HCQ_OP_ADD, ah, ah));
    hcq_ir_store(k, u, at, hcq_ir_binary(k, HCQ_OP_SHR, hcq_ir_bitcast(k, HCQ_U32, a),
                                         hcq_ir_vsplat(k, hcq_ir_const_int(k, HCQ_U32, 3), 4)));
    return k;
}

/* f16 bits of a float that f16 holds exactly (the test's inputs) */
static uint16_t f16_bits_exact(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) == 0) return (uint16_t)(x >> 16);
    uint32_t e = (x >> 23) & 0xff, m = x & 0x7fffffu;
    return (uint16_t)((x >> 16 & 0x8000u) | (e - 112u) << 10 | m >> 13);
}

Test(api_vec, elementwise_vector_ops_match_the_scalar_ops)
{
    enum { N = ITEMS * 4 };
    float in[N], out[N];
    uint16_t h[N];
    uint32_t u[N];
    for (int e = 0; e < N; e++) in[e] = (float)(e % 97) * 0.25f - 12.0f; /* exact in f16, doubled too */
    hcq_program *p = t_load(dev, k_velem());
    hcq_buffer *bi = t_buffer_from(dev, in, sizeof in);
    hcq_buffer *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_buffer *bh = T_NONNULL(hcq_buffer_alloc(dev, sizeof h, HCQ_MEM_DEVICE));
    hcq_buffer *bu = T_NONNULL(hcq_buffer_alloc(dev, sizeof u, HCQ_MEM_DEVICE));
    hcq_arg a[4] = {hcq_arg_buffer(bo), hcq_arg_buffer(bh), hcq_arg_buffer(bu), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 4, hcq_dims_1d(GROUPS, LOCAL)));
    t_read(bo, out, sizeof out);
    t_read(bh, h, sizeof h);
    t_read(bu, u, sizeof u);
    for (int e = 0; e < N; e++) {
        float want = __builtin_fmaf(in[e], in[e], 0.5f);
        uint32_t bits;
        memcpy(&bits, &in[e], 4);
        cr_assert_eq(out[e], want, "element %d: %a, want %a", e, (double)out[e], (double)want);
        cr_assert_eq(h[e], f16_bits_exact(in[e] + in[e]), "element %d: f16 0x%04x", e, h[e]);
        cr_assert_eq(u[e], bits >> 3, "element %d", e);
    }
}

/* l[lid*4 ..] = in[i*4 ..] as one 16-byte store to local memory; barrier;
 * out[i*4 ..] = l[((lid + 1) % LOCAL) * 4 ..] as one 16-byte load, but
 * lane 0 is lane 3 of the work-item's own vector from before the barrier
 * (a vector value living across a barrier: the cpu target keeps it per
 * work-item).                               params: f32 *out, f32 *in */
static hcq_kernel *k_vlocal(void)
{
    hcq_kernel *k = hcq_kernel_create("vlocal");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref l = hcq_ir_define_local(k, HCQ_F32, LOCAL * 4), i = gid(k);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), four = hcq_ir_const_int(k, HCQ_I32, 4);
    hcq_ir_ref v = hcq_ir_load_vec(k, in, hcq_ir_binary(k, HCQ_OP_MUL, i, four), 4);
    hcq_ir_store(k, l, hcq_ir_binary(k, HCQ_OP_MUL, lid, four), v);
    hcq_ir_barrier(k);
    hcq_ir_ref next = hcq_ir_binary(k, HCQ_OP_MOD, hcq_ir_binary(k, HCQ_OP_ADD, lid, hcq_ir_const_int(k, HCQ_I32, 1)),
                                    hcq_ir_const_int(k, HCQ_I32, LOCAL));
    hcq_ir_ref w = hcq_ir_load_vec(k, l, hcq_ir_binary(k, HCQ_OP_MUL, next, four), 4);
    hcq_ir_store(k, out, hcq_ir_binary(k, HCQ_OP_MUL, i, four), hcq_ir_vset(k, w, 0, hcq_ir_vget(k, v, 3)));
    return k;
}

Test(api_vec, vectors_round_trip_through_local_memory)
{
    enum { N = ITEMS * 4 };
    float in[N], out[N];
    for (int e = 0; e < N; e++) in[e] = (float)e * 0.25f - 100.0f;
    hcq_program *p = t_load(dev, k_vlocal());
    hcq_buffer *bi = t_buffer_from(dev, in, sizeof in);
    hcq_buffer *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(bo), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(GROUPS, LOCAL)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < ITEMS; i++) {
        int g = i / LOCAL, src = g * LOCAL + (i % LOCAL + 1) % LOCAL;
        for (int j = 0; j < 4; j++) {
            float want = j ? in[src * 4 + j] : in[i * 4 + 3];
            cr_assert_eq(out[i * 4 + j], want, "work-item %d lane %d: %g, want %g", i, j, (double)out[i * 4 + j],
                         (double)want);
        }
    }
}

/* NVIDIA faults (the SASS executor, as the hardware: Xid 13, its log
 * naming LDG.E.128 and the misaligned address; the CUDA host twins with
 * "misaligned vector access"); the interpreter faults with "misaligned
 * vector access". AMD's kernel driver
 * runs every queue in the unaligned mode (Linux amdkfd,
 * kfd_device_queue_manager_v9.c/_v10.c/_v11.c: SH_MEM_ALIGNMENT_MODE_UNALIGNED),
 * so there the access completes, as the mock's AMD executor and HIP twins
 * do: the
 * kernel broke the IR's rule, and the rule says who catches it. */
Test(api_vec, a_misaligned_vector_load_faults_where_the_device_checks)
{
    if (!strcmp(hcq_device_get_props(dev)->target, "cpu"))
        cr_skip_test("the compiled cpu target does not check alignment (include/hcq/compiler.h); CPU+ir does");
    enum { N = ITEMS * 4 + 4 };
    float in[N], out[N];
    for (int e = 0; e < N; e++) in[e] = (float)e;
    hcq_program *p = t_load(dev, k_vrev(HCQ_F32, 4, 1)); /* element i*4 + 1: 4 bytes past a 16-byte boundary */
    hcq_buffer *bi = t_buffer_from(dev, in, sizeof in);
    hcq_buffer *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof in, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(bo), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(GROUPS, LOCAL)));
    hcq_status st = hcq_device_synchronize(dev);
    if (st == HCQ_OK) {
        cr_assert(!strncmp(hcq_device_get_props(dev)->target, "gfx", 3),
                  "%s ran a misaligned vector load without a fault", t_device_name());
        t_read(bo, out, ITEMS * 4 * sizeof(float));
        for (int i = 0; i < ITEMS; i++)
            for (int j = 0; j < 4; j++) {
                float want = i % 3 == 0 ? 7.0f : in[i * 4 + 1 + (3 - j)];
                cr_assert_eq(out[i * 4 + j], want, "work-item %d lane %d", i, j);
            }
        return;
    }
    cr_assert_eq(st, HCQ_EFAULT, "%s: %s", hcq_status_name(st), hcq_error_message());
    cr_log_info("%s: %s", t_device_name(), hcq_error_message());
    T_MSG_HAS("vrev");
    /* an AMD mock running kernel IR (HCQ_MOCK_SHADER=ir) reports the
     * interpreter's fault as its driver's memory fault, without the
     * interpreter's words (the NV mock's is the SM's exception, with them) */
    if (!strstr(hcq_device_get_props(dev)->shader, "kernel IR") || !strcmp(hcq_device_get_props(dev)->kind, "NV"))
        cr_assert(strstr(hcq_error_message(), "misaligned vector access") || strstr(hcq_error_message(), "Xid 13"),
                  "the fault does not say what happened: %s", hcq_error_message());
    T_OK(hcq_device_close(dev));
    dev = NULL;
}
