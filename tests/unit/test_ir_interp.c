/* Interpreter semantics: exact values for every corner case compiler.h
 * defines, control flow in lock-step, memory faults and their messages,
 * the op budget, launch checks and re-entrancy. */
#include <pthread.h>

#include "test_ir_util.h"

/* out[i] = op(src0[i], src1[i], ...) over n work-items of one group, on
 * the interpreter. rdt is the result (and out) dtype. */
static void run_n(hcq_op op, hcq_dtype rdt, int nsrc, const hcq_dtype *sdt, const void *const *src, void *out,
                  uint32_t n)
{
    hcq_kernel *k = hcq_kernel_create("op");
    hcq_ir_ref ob = hcq_ir_param_buffer(k, rdt), ib[4], v[4];
    for (int j = 0; j < nsrc; j++) ib[j] = hcq_ir_param_buffer(k, sdt[j]);
    hcq_ir_ref gid = tu_gid(k);
    for (int j = 0; j < nsrc; j++) v[j] = hcq_ir_load(k, ib[j], gid);
    hcq_ir_ref r = hcq_ir_emit(k, op, rdt, 0, v, (uint8_t)nsrc, 0);
    hcq_ir_store(k, ob, gid, r);
    tu_verify(k);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    for (int j = 0; j < nsrc; j++) tu_arg_ptr(&a, (uint32_t)j + 1, src[j]);
    tu_interp(k, &a, TU_DIMS1(1, n));
    hcq_kernel_destroy(k);
}

static void bin(hcq_op op, hcq_dtype dt, hcq_dtype rdt, const void *a, const void *b, void *out, uint32_t n)
{
    hcq_dtype s[2] = {dt, dt};
    const void *src[2] = {a, b};
    run_n(op, rdt, 2, s, src, out, n);
}

static void un(hcq_op op, hcq_dtype dt, hcq_dtype rdt, const void *a, void *out, uint32_t n)
{
    run_n(op, rdt, 1, &dt, &a, out, n);
}

#define N(arr) ((uint32_t)(sizeof(arr) / sizeof((arr)[0])))
#define CHECK_ARR(out, want)                                                                                       \
    for (uint32_t i_ = 0; i_ < N(want); i_++)                                                                      \
        cr_assert_eq((out)[i_], (want)[i_], "lane %u: got %lld, want %lld", i_, (long long)(out)[i_],              \
                     (long long)(want)[i_]);

Test(ir_interp, signed_division_corners)
{
    int32_t a[] = {7, INT32_MIN, -7, 7, -7, INT32_MIN, 0}, b[] = {0, -1, 2, -2, -2, 1, 5}, q[7], r[7];
    bin(HCQ_OP_IDIV, HCQ_I32, HCQ_I32, a, b, q, 7);
    bin(HCQ_OP_MOD, HCQ_I32, HCQ_I32, a, b, r, 7);
    int32_t wq[] = {0, INT32_MIN, -3, -3, 3, INT32_MIN, 0}, wr[] = {0, 0, -1, 1, -1, 0, 0};
    CHECK_ARR(q, wq);
    CHECK_ARR(r, wr);
    int64_t a64[] = {INT64_MIN, 9, -9}, b64[] = {-1, 0, 4}, q64[3], r64[3];
    bin(HCQ_OP_IDIV, HCQ_I64, HCQ_I64, a64, b64, q64, 3);
    bin(HCQ_OP_MOD, HCQ_I64, HCQ_I64, a64, b64, r64, 3);
    int64_t wq64[] = {INT64_MIN, 0, -2}, wr64[] = {0, 0, -1};
    CHECK_ARR(q64, wq64);
    CHECK_ARR(r64, wr64);
    int8_t a8[] = {-128, -128}, b8[] = {-1, 3}, q8[2];
    bin(HCQ_OP_IDIV, HCQ_I8, HCQ_I8, a8, b8, q8, 2);
    int8_t wq8[] = {-128, -42};
    CHECK_ARR(q8, wq8);
}

Test(ir_interp, unsigned_division_by_zero)
{
    uint32_t a[] = {7, 0xffffffffu, 10}, b[] = {0, 2, 3}, q[3], r[3];
    bin(HCQ_OP_IDIV, HCQ_U32, HCQ_U32, a, b, q, 3);
    bin(HCQ_OP_MOD, HCQ_U32, HCQ_U32, a, b, r, 3);
    uint32_t wq[] = {0, 0x7fffffffu, 3}, wr[] = {0, 1, 1};
    CHECK_ARR(q, wq);
    CHECK_ARR(r, wr);
}

Test(ir_interp, integer_wrap_at_width)
{
    int8_t a[] = {127, 16, -128}, b[] = {1, 16, 1}, s[3], m[3], d[3];
    bin(HCQ_OP_ADD, HCQ_I8, HCQ_I8, a, b, s, 3);
    bin(HCQ_OP_MUL, HCQ_I8, HCQ_I8, a, b, m, 3);
    bin(HCQ_OP_SUB, HCQ_I8, HCQ_I8, a, b, d, 3);
    int8_t ws[] = {-128, 32, -127}, wm[] = {127, 0, -128}, wd[] = {126, 0, 127};
    CHECK_ARR(s, ws);
    CHECK_ARR(m, wm);
    CHECK_ARR(d, wd);
    uint8_t ua[] = {0, 200}, ub[] = {1, 100}, us[2], un_[2];
    bin(HCQ_OP_SUB, HCQ_U8, HCQ_U8, ua, ub, us, 2);
    un(HCQ_OP_NEG, HCQ_U8, HCQ_U8, ua, un_, 2);
    uint8_t wus[] = {255, 100}, wun[] = {0, 56};
    CHECK_ARR(us, wus);
    CHECK_ARR(un_, wun);
    int32_t na[] = {INT32_MIN}, nr[1];
    un(HCQ_OP_NEG, HCQ_I32, HCQ_I32, na, nr, 1);
    cr_assert_eq(nr[0], INT32_MIN);
}

Test(ir_interp, shift_counts_are_modulo_width)
{
    int32_t a[] = {1, 1, -8, -8, 0x40000000}, b[] = {33, -1, 1, 33, 1}, l[5], r[5];
    bin(HCQ_OP_SHL, HCQ_I32, HCQ_I32, a, b, l, 5);
    bin(HCQ_OP_SHR, HCQ_I32, HCQ_I32, a, b, r, 5);
    int32_t wl[] = {2, INT32_MIN, -16, -16, INT32_MIN}, wr[] = {0, 0, -4, -4, 0x20000000};
    CHECK_ARR(l, wl);
    CHECK_ARR(r, wr);
    int8_t a8[] = {1, -128, 64}, b8[] = {9, 1, 1}, l8[3], r8[3];
    bin(HCQ_OP_SHL, HCQ_I8, HCQ_I8, a8, b8, l8, 3);
    bin(HCQ_OP_SHR, HCQ_I8, HCQ_I8, a8, b8, r8, 3);
    int8_t wl8[] = {2, 0, -128}, wr8[] = {0, -64, 32};
    CHECK_ARR(l8, wl8);
    CHECK_ARR(r8, wr8);
    uint8_t ua[] = {128, 128}, ub[] = {9, 7}, ur[2];
    bin(HCQ_OP_SHR, HCQ_U8, HCQ_U8, ua, ub, ur, 2);
    uint8_t wur[] = {64, 1};
    CHECK_ARR(ur, wur);
    uint64_t a64[] = {1, 0x8000000000000000ull}, b64[] = {64 + 63, 63}, l64[2], r64[2];
    bin(HCQ_OP_SHL, HCQ_U64, HCQ_U64, a64, b64, l64, 2);
    bin(HCQ_OP_SHR, HCQ_U64, HCQ_U64, a64, b64, r64, 2);
    cr_assert_eq(l64[0], 0x8000000000000000ull);
    cr_assert_eq(r64[1], 1);
}

Test(ir_interp, float_to_int_saturates_and_nan_is_zero)
{
    float f[] = {3e9f, -3e9f, NAN, -1.9f, 2.9f, INFINITY, -INFINITY, -0.0f};
    int32_t i[8];
    un(HCQ_OP_CAST, HCQ_F32, HCQ_I32, f, i, 8);
    int32_t wi[] = {INT32_MAX, INT32_MIN, 0, -1, 2, INT32_MAX, INT32_MIN, 0};
    CHECK_ARR(i, wi);
    float g[] = {300.0f, -5.0f, 255.9f, NAN, -0.9f};
    uint8_t u[5];
    un(HCQ_OP_CAST, HCQ_F32, HCQ_U8, g, u, 5);
    uint8_t wu[] = {255, 0, 255, 0, 0};
    CHECK_ARR(u, wu);
    float h[] = {1e30f, -1.0f, 1.8446744e19f};
    uint64_t u64[3];
    un(HCQ_OP_CAST, HCQ_F32, HCQ_U64, h, u64, 3);
    cr_assert_eq(u64[0], UINT64_MAX);
    cr_assert_eq(u64[1], 0);
    cr_assert_eq(u64[2], UINT64_MAX); /* 2^64 exactly after rounding to f32 */
    double d[] = {1e19, -1e19, 0x1p63, -0x1p63};
    int64_t i64[4];
    un(HCQ_OP_CAST, HCQ_F64, HCQ_I64, d, i64, 4);
    cr_assert_eq(i64[0], INT64_MAX);
    cr_assert_eq(i64[1], INT64_MIN);
    cr_assert_eq(i64[2], INT64_MAX); /* 2^63 */
    cr_assert_eq(i64[3], INT64_MIN);
    float b[] = {NAN, 0.0f, -0.0f, 0.5f};
    uint8_t bo[4];
    un(HCQ_OP_CAST, HCQ_F32, HCQ_BOOL, b, bo, 4);
    uint8_t wbo[] = {1, 0, 0, 1};
    CHECK_ARR(bo, wbo);
}

Test(ir_interp, int_to_float_rounds_to_nearest_even)
{
    int64_t a[] = {(1 << 24) + 1, (1 << 24) + 3, -((1 << 24) + 1), INT64_MAX};
    float f[4];
    un(HCQ_OP_CAST, HCQ_I64, HCQ_F32, a, f, 4);
    cr_assert_eq(f[0], 16777216.0f);
    cr_assert_eq(f[1], 16777220.0f);
    cr_assert_eq(f[2], -16777216.0f);
    cr_assert_eq(f[3], 9223372036854775808.0f);
    uint64_t u[] = {UINT64_MAX};
    float g[1];
    un(HCQ_OP_CAST, HCQ_U64, HCQ_F32, u, g, 1);
    cr_assert_eq(g[0], 18446744073709551616.0f);
}

Test(ir_interp, int_casts_truncate_and_extend)
{
    uint8_t a[] = {255, 128};
    int8_t b[2];
    un(HCQ_OP_CAST, HCQ_U8, HCQ_I8, a, b, 2);
    cr_assert_eq(b[0], -1);
    cr_assert_eq(b[1], -128);
    int32_t c[] = {-1, 0x12345678};
    uint64_t d[2];
    int16_t e[2];
    un(HCQ_OP_CAST, HCQ_I32, HCQ_U64, c, d, 2);
    un(HCQ_OP_CAST, HCQ_I32, HCQ_I16, c, e, 2);
    cr_assert_eq(d[0], UINT64_MAX);
    cr_assert_eq(e[1], 0x5678);
    int32_t f[] = {5, 0, -3};
    uint8_t g[3];
    un(HCQ_OP_CAST, HCQ_I32, HCQ_BOOL, f, g, 3);
    uint8_t wg[] = {1, 0, 1};
    CHECK_ARR(g, wg);
    uint8_t raw[] = {2, 0}; /* a bool byte other than 0/1 loads as true */
    int32_t h[2];
    un(HCQ_OP_CAST, HCQ_BOOL, HCQ_I32, raw, h, 2);
    cr_assert_eq(h[0], 1);
    cr_assert_eq(h[1], 0);
}

Test(ir_interp, nan_compares_follow_ieee)
{
    float a[] = {NAN, 1.0f, NAN, 1.0f, -0.0f}, b[] = {1.0f, NAN, NAN, 1.0f, 0.0f};
    uint8_t lt[5], ne[5];
    bin(HCQ_OP_CMPLT, HCQ_F32, HCQ_BOOL, a, b, lt, 5);
    bin(HCQ_OP_CMPNE, HCQ_F32, HCQ_BOOL, a, b, ne, 5);
    uint8_t wlt[] = {0, 0, 0, 0, 0}, wne[] = {1, 1, 1, 0, 0};
    CHECK_ARR(lt, wlt);
    CHECK_ARR(ne, wne);
}

Test(ir_interp, max_is_maxnum)
{
    float a[] = {NAN, 1.0f, -0.0f, 0.0f, NAN, -INFINITY}, b[] = {1.0f, NAN, 0.0f, -0.0f, NAN, -5.0f}, m[6];
    bin(HCQ_OP_MAX, HCQ_F32, HCQ_F32, a, b, m, 6);
    cr_assert_eq(m[0], 1.0f);
    cr_assert_eq(m[1], 1.0f);
    cr_assert(m[2] == 0.0f && !signbit(m[2]), "max(-0, +0) must be +0");
    cr_assert(m[3] == 0.0f && !signbit(m[3]), "max(+0, -0) must be +0");
    cr_assert(isnan(m[4]));
    cr_assert_eq(m[5], -5.0f);
    int32_t ia[] = {-5, 3}, ib[] = {2, -7}, im[2];
    bin(HCQ_OP_MAX, HCQ_I32, HCQ_I32, ia, ib, im, 2);
    cr_assert(im[0] == 2 && im[1] == 3);
    uint32_t ua[] = {0xffffffffu}, ub[] = {1}, um[1];
    bin(HCQ_OP_MAX, HCQ_U32, HCQ_U32, ua, ub, um, 1);
    cr_assert_eq(um[0], 0xffffffffu);
}

static uint16_t h(double v) { return ir_f32_to_f16((float)v); }

Test(ir_interp, f16_ops_round_to_nearest_even)
{
    /* 1 + 2^-11 ties to 1; 1 + 3*2^-11 ties to 1 + 2^-9; 65504 + 16 = 65520 rounds to inf */
    uint16_t a[] = {h(1), h(1), h(65504), h(65504), h(0x1p-14), h(0x1p-24), h(0x1p-24)};
    uint16_t b[] = {h(0x1p-11), h(0x1.8p-10), h(16), h(8), h(0.5), h(0.5), h(1.5)}, s[7], p[7];
    bin(HCQ_OP_ADD, HCQ_F16, HCQ_F16, a, b, s, 4);
    cr_assert_eq(s[0], 0x3c00);
    cr_assert_eq(s[1], 0x3c02);
    cr_assert_eq(s[2], 0x7c00);
    cr_assert_eq(s[3], 0x7bff);
    bin(HCQ_OP_MUL, HCQ_F16, HCQ_F16, a, b, p, 7);
    cr_assert_eq(p[4], 0x0200); /* 2^-15, subnormal, exact */
    cr_assert_eq(p[5], 0x0000); /* 2^-25 ties to even: 0 */
    cr_assert_eq(p[6], 0x0002); /* 1.5 * 2^-24 ties to even: 2^-23 */
}

static uint16_t bf(double v) { return ir_f32_to_bf16((float)v); }

Test(ir_interp, bf16_ops_round_to_nearest_even)
{
    uint16_t a[] = {bf(1), bf(1)}, b[] = {bf(0x1p-8), bf(0x1.8p-7)}, s[2];
    bin(HCQ_OP_ADD, HCQ_BF16, HCQ_BF16, a, b, s, 2);
    cr_assert_eq(s[0], 0x3f80); /* 1 + 2^-8 ties to 1 */
    cr_assert_eq(s[1], 0x3f82); /* 1 + 3*2^-8 ties to 1 + 2^-6 */
}

Test(ir_interp, narrow_casts_round_once)
{
    /* through an RNE f32 these would double-round to 1.0 */
    double d[] = {1.0 + 0x1p-8 + 0x1p-30, 1.0 + 0x1p-11 + 0x1p-40, 65519.99, 1e-9};
    uint16_t b16[4], f16[4];
    un(HCQ_OP_CAST, HCQ_F64, HCQ_BF16, d, b16, 2);
    un(HCQ_OP_CAST, HCQ_F64, HCQ_F16, d, f16, 4);
    cr_assert_eq(b16[0], 0x3f81);
    cr_assert_eq(f16[1], 0x3c01);
    cr_assert_eq(f16[2], 0x7bff);
    cr_assert_eq(f16[3], 0x0000);
    int32_t i[] = {(1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1), 70000};
    uint16_t ib[3], ih[3];
    un(HCQ_OP_CAST, HCQ_I32, HCQ_BF16, i, ib, 3);
    un(HCQ_OP_CAST, HCQ_I32, HCQ_F16, i, ih, 3);
    cr_assert_eq(ib[0], 0x4b81);
    cr_assert_eq(ib[1], 0xcb81);
    cr_assert_eq(ih[2], 0x7c00); /* beyond f16's range */
    uint16_t x[] = {0x3c01};    /* f16 -> bf16: 1 + 2^-10 rounds to 1 */
    uint16_t y[1];
    un(HCQ_OP_CAST, HCQ_F16, HCQ_BF16, x, y, 1);
    cr_assert_eq(y[0], 0x3f80);
}

Test(ir_interp, bitcasts_keep_bits)
{
    float f[] = {1.0f, -2.0f};
    int32_t i[2];
    un(HCQ_OP_BITCAST, HCQ_F32, HCQ_I32, f, i, 2);
    cr_assert_eq(i[0], 0x3f800000);
    cr_assert_eq((uint32_t)i[1], 0xc0000000u);
    int16_t s[] = {0x3c00, (int16_t)0xc000};
    uint16_t o[2];
    un(HCQ_OP_BITCAST, HCQ_I16, HCQ_F16, s, o, 2);
    cr_assert_eq(o[0], 0x3c00);
    cr_assert_eq(o[1], 0xc000);
    uint16_t b[] = {0x3f80};
    uint16_t ob[1];
    un(HCQ_OP_BITCAST, HCQ_BF16, HCQ_U16, b, ob, 1);
    cr_assert_eq(ob[0], 0x3f80);
    double d[] = {-0.0};
    uint64_t u[1];
    un(HCQ_OP_BITCAST, HCQ_F64, HCQ_U64, d, u, 1);
    cr_assert_eq(u[0], 0x8000000000000000ull);
}

Test(ir_interp, float_unary_ops)
{
    float a[] = {3.0f, 8.0f, 0.0f, 2.0f, 3.0f, -2.75f, -1.0f}, r[7];
    un(HCQ_OP_EXP2, HCQ_F32, HCQ_F32, a, r, 1);
    cr_assert_eq(r[0], 8.0f);
    un(HCQ_OP_LOG2, HCQ_F32, HCQ_F32, a + 1, r, 1);
    cr_assert_eq(r[0], 3.0f);
    un(HCQ_OP_SIN, HCQ_F32, HCQ_F32, a + 2, r, 1);
    cr_assert_eq(r[0], 0.0f);
    un(HCQ_OP_SQRT, HCQ_F32, HCQ_F32, a + 3, r, 1);
    cr_assert_eq(r[0], sqrtf(2.0f));
    un(HCQ_OP_RECIP, HCQ_F32, HCQ_F32, a + 4, r, 1);
    cr_assert_eq(r[0], 1.0f / 3.0f);
    un(HCQ_OP_TRUNC, HCQ_F32, HCQ_F32, a + 5, r, 1);
    cr_assert_eq(r[0], -2.0f);
    un(HCQ_OP_SQRT, HCQ_F32, HCQ_F32, a + 6, r, 1);
    cr_assert(isnan(r[0]));
    double d[] = {2.0}, dr[1];
    un(HCQ_OP_SQRT, HCQ_F64, HCQ_F64, d, dr, 1);
    cr_assert_eq(dr[0], sqrt(2.0));
}

Test(ir_interp, mulacc_is_fused)
{
    /* a*b+c with a*b = 1 - 2^-46 exactly: fused gives -2^-46, unfused 0 */
    float a[] = {1.0f + 0x1p-23f}, b[] = {1.0f - 0x1p-23f}, c[] = {-1.0f}, r[1];
    hcq_dtype s[3] = {HCQ_F32, HCQ_F32, HCQ_F32};
    const void *src[3] = {a, b, c};
    run_n(HCQ_OP_MULACC, HCQ_F32, 3, s, src, r, 1);
    cr_assert_eq(r[0], -0x1p-46f);
    int32_t ia[] = {0x10000}, ib[] = {0x10000}, ic[] = {5}, ir_[1];
    hcq_dtype si[3] = {HCQ_I32, HCQ_I32, HCQ_I32};
    const void *isrc[3] = {ia, ib, ic};
    run_n(HCQ_OP_MULACC, HCQ_I32, 3, si, isrc, ir_, 1);
    cr_assert_eq(ir_[0], 5); /* 2^32 wraps to 0 */
}

/* ** memory */
typedef struct checker {
    uintptr_t lo, hi;   /* param 1's buffer [lo, hi) */
    uintptr_t lo2, hi2; /* param 0's buffer [lo2, hi2) */
    int calls, calls_param1;
} checker;

/* An access must stay inside the buffer of the param it goes through: two
 * arrays on the stack may be neighbours (they are under TSan), and running
 * off one must not count as reaching the other. */
static bool check_range(void *ctx, const hcq_interp_access *a, char *why, size_t why_size)
{
    checker *c = ctx;
    c->calls++;
    c->calls_param1 += a->param == 1;
    if (a->param != 0 && a->addr >= c->lo && a->addr + a->size <= c->hi) return true;
    if (a->param != 1 && a->addr >= c->lo2 && a->addr + a->size <= c->hi2) return true;
    snprintf(why, why_size, "buffer of %zu bytes at 0x%zx", (size_t)(c->hi - c->lo), (size_t)c->lo);
    return false;
}

/* out[gid] = gate ? in[gid] : -1 with a gate of (gid < limit) */
static hcq_kernel *gated_kernel(bool store)
{
    hcq_kernel *k = hcq_kernel_create("gated");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), in = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref lim = hcq_ir_param_scalar(k, HCQ_I32), gid = tu_gid(k);
    hcq_ir_ref gate = hcq_ir_binary(k, HCQ_OP_CMPLT, gid, lim);
    if (store) {
        hcq_ir_store_gated(k, in, gid, gid, gate);
    } else {
        hcq_ir_ref v = hcq_ir_load_gated(k, in, gid, gate, hcq_ir_const_int(k, HCQ_I32, -1));
        hcq_ir_store(k, out, gid, v);
    }
    tu_verify(k);
    return k;
}

Test(ir_interp, gated_load_with_false_gate_touches_nothing)
{
    hcq_kernel *k = gated_kernel(false);
    int32_t out[8], in[4] = {10, 11, 12, 13}, lim = 4;
    checker c = {(uintptr_t)in, (uintptr_t)(in + 4), (uintptr_t)out, (uintptr_t)(out + 8), 0, 0};
    hcq_interp_mem mem = {check_range, &c};
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, in); /* 4 elements, 8 work-items: lanes 4..7 are gated off */
    tu_arg_bytes(&a, 2, &lim);
    hcq_interp_launch l = {.kernargs = a.buf, .kernarg_size = a.size, .num_groups = {1, 1, 1},
                           .local_size = {8, 1, 1}, .mem = &mem};
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_OK, "%s", hcq_error_message());
    int32_t want[8] = {10, 11, 12, 13, -1, -1, -1, -1};
    CHECK_ARR(out, want);
    /* every gate false: no memory is touched at all, even through a bad pointer */
    lim = 0;
    tu_arg_bytes(&a, 2, &lim);
    tu_arg_ptr(&a, 1, (void *)(uintptr_t)0x10);
    c.calls_param1 = 0;
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(c.calls_param1, 0, "the checker was asked %d times about param 1", c.calls_param1);
    l.mem = NULL;
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_OK, "%s", hcq_error_message());
    hcq_kernel_destroy(k);
}

Test(ir_interp, gated_store_with_false_gate_stores_nothing)
{
    hcq_kernel *k = gated_kernel(true);
    int32_t out[1], buf[8] = {-5, -5, -5, -5, -5, -5, -5, -5}, lim = 3;
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, buf);
    tu_arg_bytes(&a, 2, &lim);
    tu_interp(k, &a, TU_DIMS1(2, 4));
    int32_t want[8] = {0, 1, 2, -5, -5, -5, -5, -5};
    CHECK_ARR(buf, want);
    hcq_kernel_destroy(k);
}

Test(ir_interp, refused_access_names_kernel_op_param_and_element)
{
    hcq_kernel *k = hcq_kernel_create("oob");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32), gid = tu_gid(k);
    hcq_ir_ref v = hcq_ir_load(k, in, gid); /* op 6 */
    hcq_ir_store(k, out, gid, v);
    float o[16], i[8] = {0};
    checker c = {(uintptr_t)i, (uintptr_t)(i + 8), (uintptr_t)o, (uintptr_t)(o + 16), 0, 0};
    hcq_interp_mem mem = {check_range, &c};
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, o);
    tu_arg_ptr(&a, 1, i);
    hcq_interp_launch l = {.kernargs = a.buf, .kernarg_size = a.size, .num_groups = {2, 1, 1},
                           .local_size = {8, 1, 1}, .mem = &mem};
    /* group 0 reads elements 0..7; group 1's first lane reads element 8 */
    hcq_status st = hcq_interp_run(k, &l);
    const char *m = hcq_error_message();
    cr_assert_eq(st, HCQ_EFAULT, "%s", m);
    cr_assert(strstr(m, "kernel 'oob'"), "%s", m);
    cr_assert(strstr(m, "op 6 (load)"), "%s", m);
    cr_assert(strstr(m, "param 1"), "%s", m);
    cr_assert(strstr(m, "element 8"), "%s", m);
    cr_assert(strstr(m, "work-group (1,0,0)"), "%s", m);
    cr_assert(strstr(m, "buffer of 32 bytes"), "checker text missing: %s", m);
    hcq_kernel_destroy(k);
}

Test(ir_interp, local_out_of_bounds_faults)
{
    hcq_kernel *k = hcq_kernel_create("lds");
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_I32, 8);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_store(k, loc, lid, lid);
    tu_verify(k);
    tu_args a;
    tu_args_init(&a, k);
    cr_assert_eq(tu_interp_status(k, &a, TU_DIMS1(1, 8)), HCQ_OK, "%s", hcq_error_message());
    hcq_status st = tu_interp_status(k, &a, TU_DIMS1(1, 12));
    const char *m = hcq_error_message();
    cr_assert_eq(st, HCQ_EFAULT, "%s", m);
    cr_assert(strstr(m, "op 2 (store) wrote local buffer op 0 (i32[8]) element 8"), "%s", m);
    cr_assert(strstr(m, "work-item (8,0,0)"), "%s", m);
    cr_assert(strstr(m, "out of bounds"), "%s", m);
    hcq_kernel_destroy(k);
}

Test(ir_interp, op_budget_stops_runaway_kernels)
{
    hcq_kernel *k = hcq_kernel_create("spin");
    hcq_ir_ref lo = hcq_ir_const_int(k, HCQ_I64, 0), hi = hcq_ir_const_int(k, HCQ_I64, INT64_MAX);
    hcq_ir_ref r = hcq_ir_range(k, lo, hi);
    hcq_ir_endrange(k, r);
    tu_args a;
    tu_args_init(&a, k);
    hcq_interp_launch l = {.num_groups = {1, 1, 1}, .local_size = {32, 1, 1}, .op_budget = 1000000};
    uint64_t t0 = hcq_now_ns();
    hcq_status st = hcq_interp_run(k, &l);
    cr_assert_eq(st, HCQ_ETIMEDOUT, "%s", hcq_error_message());
    cr_assert(strstr(hcq_error_message(), "op_budget 1000000"), "%s", hcq_error_message());
    cr_assert(strstr(hcq_error_message(), "kernel 'spin'"), "%s", hcq_error_message());
    cr_assert(hcq_now_ns() - t0 < 5000000000ull);
    hcq_kernel_destroy(k);
}

/* ** control flow */
Test(ir_interp, divergent_loops_and_ifs)
{
    /* out[lid] = sum of i in [0, lid) with i odd, via a per-lane trip count */
    hcq_kernel *k = hcq_kernel_create("diverge");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref zero = hcq_ir_const_int(k, HCQ_I32, 0), one = hcq_ir_const_int(k, HCQ_I32, 1);
    hcq_ir_ref acc = hcq_ir_define_acc(k, zero);
    hcq_ir_ref r = hcq_ir_range(k, zero, lid);
    hcq_ir_ref odd = hcq_ir_binary(k, HCQ_OP_CMPNE, hcq_ir_binary(k, HCQ_OP_AND, r, one), zero);
    hcq_ir_ref iff = hcq_ir_if(k, odd);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, acc, r));
    hcq_ir_endif(k, iff);
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, out, lid, acc);
    tu_verify(k);
    int32_t o[40];
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, o);
    tu_interp(k, &a, TU_DIMS1(1, 40));
    for (int i = 0; i < 40; i++) {
        int want = 0;
        for (int j = 1; j < i; j += 2) want += j;
        cr_assert_eq(o[i], want, "lane %d: %d != %d", i, o[i], want);
    }
    hcq_kernel_destroy(k);
}

Test(ir_interp, barrier_reduction_in_lock_step)
{
    /* local tree reduction: out[group] = sum of in[group*64 .. +64) */
    hcq_kernel *k = hcq_kernel_create("tree");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), in = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_I32, 64);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_store(k, loc, lid, hcq_ir_load(k, in, gid));
    hcq_ir_barrier(k);
    hcq_ir_ref zero = hcq_ir_const_int(k, HCQ_I32, 0), six = hcq_ir_const_int(k, HCQ_I32, 6);
    hcq_ir_ref step = hcq_ir_range(k, zero, six);
    hcq_ir_ref stride = hcq_ir_binary(k, HCQ_OP_SHR, hcq_ir_const_int(k, HCQ_I32, 32), step);
    hcq_ir_ref act = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lid, stride));
    hcq_ir_ref other = hcq_ir_load(k, loc, hcq_ir_binary(k, HCQ_OP_ADD, lid, stride));
    hcq_ir_store(k, loc, lid, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_load(k, loc, lid), other));
    hcq_ir_endif(k, act);
    hcq_ir_barrier(k);
    hcq_ir_endrange(k, step);
    hcq_ir_ref lead = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lid, hcq_ir_const_int(k, HCQ_I32, 1)));
    hcq_ir_store(k, out, grp, hcq_ir_load(k, loc, zero));
    hcq_ir_endif(k, lead);
    tu_verify(k);
    int32_t data[256], o[4];
    for (int i = 0; i < 256; i++) data[i] = i * 3 - 100;
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, o);
    tu_arg_ptr(&a, 1, data);
    tu_interp(k, &a, TU_DIMS1(4, 64));
    for (int g = 0; g < 4; g++) {
        int want = 0;
        for (int i = 0; i < 64; i++) want += data[g * 64 + i];
        cr_assert_eq(o[g], want, "group %d: %d != %d", g, o[g], want);
    }
    hcq_kernel_destroy(k);
}

Test(ir_interp, ids_in_three_dimensions)
{
    hcq_kernel *k = hcq_kernel_create("ids");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref v[12];
    for (int kind = 0; kind < 4; kind++)
        for (unsigned d = 0; d < 3; d++) v[kind * 3 + d] = hcq_ir_special(k, (hcq_special)kind, d);
    /* linear work-item index over the whole launch, x fastest */
    hcq_ir_ref gx = hcq_ir_mulacc(k, v[0], v[9], v[3]), gy = hcq_ir_mulacc(k, v[1], v[10], v[4]);
    hcq_ir_ref gz = hcq_ir_mulacc(k, v[2], v[11], v[5]);
    hcq_ir_ref nx = hcq_ir_binary(k, HCQ_OP_MUL, v[6], v[9]), ny = hcq_ir_binary(k, HCQ_OP_MUL, v[7], v[10]);
    hcq_ir_ref lin = hcq_ir_mulacc(k, hcq_ir_mulacc(k, gz, ny, gy), nx, gx);
    hcq_ir_ref code = hcq_ir_mulacc(k, gz, hcq_ir_const_int(k, HCQ_I32, 10000),
                                    hcq_ir_mulacc(k, gy, hcq_ir_const_int(k, HCQ_I32, 100), gx));
    hcq_ir_store(k, out, lin, code);
    tu_verify(k);
    tu_dims d = {{3, 2, 2}, {4, 2, 3}};
    int nx_ = 12, ny_ = 4, nz_ = 6;
    int32_t *o = calloc((size_t)nx_ * ny_ * nz_, sizeof *o);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, o);
    tu_interp(k, &a, d);
    for (int z = 0; z < nz_; z++)
        for (int y = 0; y < ny_; y++)
            for (int x = 0; x < nx_; x++) {
                int i = (z * ny_ + y) * nx_ + x;
                cr_assert_eq(o[i], z * 10000 + y * 100 + x, "(%d,%d,%d): %d", x, y, z, o[i]);
            }
    free(o);
    hcq_kernel_destroy(k);
}

Test(ir_interp, launch_checks)
{
    hcq_kernel *k = gated_kernel(false);
    tu_args a;
    tu_args_init(&a, k);
    cr_assert_eq(tu_interp_status(k, &a, TU_DIMS1(1, 2048)), HCQ_ELIMIT);
    cr_assert(strstr(hcq_error_message(), "limit is 1024"), "%s", hcq_error_message());
    hcq_interp_launch l = {.kernargs = a.buf, .kernarg_size = 8, .num_groups = {1, 1, 1}, .local_size = {1, 1, 1}};
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "needs 24 bytes of kernargs, got 8"), "%s", hcq_error_message());
    l.kernarg_size = a.size;
    l.group_begin = 2;
    l.group_end = 5;
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "outside the grid of 1 groups"), "%s", hcq_error_message());
    l.group_begin = 0;
    l.group_end = 0;
    l.local_size[1] = 0;
    cr_assert_eq(hcq_interp_run(k, &l), HCQ_EINVAL);
    /* an unverifiable kernel is refused with the verifier's message */
    hcq_kernel *bad = hcq_kernel_create("bad");
    hcq_ir_ref src[2] = {0, 0};
    hcq_ir_emit(bad, HCQ_OP_ADD, HCQ_I32, 0, src, 2, 0);
    l.local_size[1] = 1;
    cr_assert_eq(hcq_interp_run(bad, &l), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "op 0 (add)"), "%s", hcq_error_message());
    hcq_kernel_destroy(bad);
    hcq_kernel_destroy(k);
}

/* several threads run disjoint group ranges of one launch at once */
typedef struct thr {
    const hcq_kernel *k;
    hcq_interp_launch l;
    hcq_status st;
} thr;

static void *thr_run(void *p)
{
    thr *t = p;
    t->st = hcq_interp_run(t->k, &t->l);
    return NULL;
}

Test(ir_interp, reentrant_across_threads)
{
    hcq_kernel *k = gated_kernel(false);
    enum { G = 64, L = 32, T = 4 };
    int32_t *in = malloc(G * L * sizeof *in), *out = calloc(G * L, sizeof *out), lim = G * L - 5;
    for (int i = 0; i < G * L; i++) in[i] = i * 7;
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, in);
    tu_arg_bytes(&a, 2, &lim);
    thr t[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        t[i] = (thr){k, {.kernargs = a.buf, .kernarg_size = a.size, .num_groups = {G, 1, 1}, .local_size = {L, 1, 1},
                         .group_begin = (uint64_t)i * G / T, .group_end = (uint64_t)(i + 1) * G / T}, HCQ_OK};
        pthread_create(&th[i], NULL, thr_run, &t[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(t[i].st, HCQ_OK);
    }
    for (int i = 0; i < G * L; i++) cr_assert_eq(out[i], i < lim ? i * 7 : -1, "element %d", i);
    free(in);
    free(out);
    hcq_kernel_destroy(k);
}
