/* The cpu target's own f32 exp2 and log2 (render_c.c's prelude: polynomials
 * that clang vectorises, instead of libm calls): within 1 ulp of the
 * exact value (HCQ_IR_TRANSCENDENTAL_ULP allows 2) over a sweep of 2^20
 * floats spread over every exponent and sign, and exact on the special
 * values; and the loop that applies them is vectorised. */
#include "test_ir_util.h"

/* distance in ulps on the ordered line of floats; NaN matches only NaN */
static uint64_t ulps(float a, float b)
{
    if (a != a || b != b) return (a != a) == (b != b) ? 0 : UINT64_MAX;
    if (a == b) return 0;
    int32_t i, j;
    memcpy(&i, &a, 4);
    memcpy(&j, &b, 4);
    int64_t x = i < 0 ? -(int64_t)(i & 0x7fffffff) : i, y = j < 0 ? -(int64_t)(j & 0x7fffffff) : j;
    return (uint64_t)(x > y ? x - y : y - x);
}

/* out[gid] = op(in[gid]) */
static hcq_kernel *unary_kernel(hcq_op op)
{
    hcq_kernel *k = hcq_kernel_create(op == HCQ_OP_EXP2 ? "m_exp2" : "m_log2");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32), gid = tu_gid(k);
    hcq_ir_store(k, out, gid, hcq_ir_unary(k, op, hcq_ir_load(k, in, gid)));
    tu_verify(k);
    return k;
}

enum { SWEEP = 1 << 20 };

static void check(hcq_op op, double (*ref)(double))
{
    hcq_kernel *k = unary_kernel(op);
    cc_cpu_module m;
    tu_cpu_load(k, &m);
    static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 2.0f, 0.5f, 128.0f,
                                     127.99999f, -126.0f, -149.0f, -149.5f, -150.0f, -150.5f, -151.0f, 1e-45f,
                                     1.17549435e-38f, 3.4028235e38f, 0x1.fffffep-1f, 0x1.000002p+0f};
    size_t ns = sizeof specials / sizeof *specials, n = SWEEP + ns;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    cr_assert(in && out);
    /* every 4096th bit pattern, offset so that the low mantissa bits vary */
    for (uint32_t i = 0; i < SWEEP; i++) {
        uint32_t u = i * 4096u + (i * 2654435761u >> 20);
        memcpy(&in[i], &u, 4);
    }
    memcpy(in + SWEEP, specials, sizeof specials);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, in);
    tu_cpu_run(&m, &a, TU_DIMS1((uint32_t)(n + 63) / 64, 64));
    uint64_t worst = 0;
    float at = 0;
    for (size_t i = 0; i < n; i++) {
        /* the double function rounded to float: within 1/2 ulp + a hair of
         * the exact value, so 1 ulp from it is within 2 of the exact */
        uint64_t d = ulps(out[i], (float)ref((double)in[i]));
        if (d > worst) {
            worst = d;
            at = in[i];
        }
    }
    cr_assert_leq(worst, 1, "%s is %llu ulp off at %a", hcq_op_name(op), (unsigned long long)worst, (double)at);
    /* the special values exactly */
    for (size_t i = SWEEP; i < n; i++) {
        float want = (float)ref((double)in[i]);
        cr_assert(ulps(out[i], want) == 0 || (in[i] != 0 && fabsf(want) > 1e-30f && fabsf(want) < 1e30f &&
                                              ulps(out[i], want) <= 1),
                  "%s(%a) = %a, want %a", hcq_op_name(op), (double)in[i], (double)out[i], (double)want);
    }
    free(in);
    free(out);
    cc_cpu_module_unload(&m);
    hcq_kernel_destroy(k);
}

Test(render_cpu_math, exp2_within_one_ulp) { check(HCQ_OP_EXP2, exp2); }
Test(render_cpu_math, log2_within_one_ulp) { check(HCQ_OP_LOG2, log2); }

/* the reason for the helpers: no call left in the kernel's code */
Test(render_cpu_math, exp2_and_log2_are_no_libm_calls)
{
    for (int i = 0; i < 2; i++) {
        hcq_kernel *k = unary_kernel(i ? HCQ_OP_LOG2 : HCQ_OP_EXP2);
        char *src = NULL;
        cr_assert_eq(hcq_render(k, "cpu", &src), HCQ_OK, "%s", hcq_error_message());
        cr_assert(strstr(src, i ? "hcq_log2f(" : "hcq_exp2f("), "%s", src);
        cr_assert_null(strstr(src, "__builtin_exp2f"));
        cr_assert_null(strstr(src, "__builtin_log2f"));
        free(src);
        hcq_kernel_destroy(k);
    }
}
