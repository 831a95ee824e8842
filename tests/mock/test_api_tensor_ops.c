/* Elementwise tensor ops on the device under test, against plain C loops
 * in double precision on the same (rounded) inputs. Shapes are odd, have
 * 1s and broadcast; some inputs are non-contiguous views. Tolerances:
 * tensortest.h's per-dtype defaults, times 4 for ops built from exp2/log2/
 * sin (their argument is rounded once more), and exact for i32 and bool.
 * On the cpu target every kernel is also checked against the interpreter. */
#include "tensortest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_ops, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

typedef double (*fn1)(double);
static double r_neg(double x) { return -x; }
static double r_recip(double x) { return 1.0 / x; }
static double r_rsqrt(double x) { return 1.0 / sqrt(x); }
static double r_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static double r_relu(double x) { return x < 0 ? 0 : x; }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static double r_silu(double x) { return x * r_sigmoid(x); }

typedef struct un_case {
    const char *name;
    hcq_tensor *(*op)(hcq_tensor *);
    fn1 ref;
    double lo, hi, tol_mul, atol;
} un_case;

Test(api_tensor_ops, unary_f32_odd_shape)
{
    static const un_case cases[] = {
        {"neg", hcq_neg, r_neg, -3, 3, 1, 0},        {"exp", hcq_exp, exp, -4, 4, 4, 0},
        {"log", hcq_log, log, 0.01, 5, 4, 1e-6},     {"exp2", hcq_exp2, exp2, -5, 5, 4, 0},
        {"log2", hcq_log2, log2, 0.01, 9, 4, 1e-6},  {"sqrt", hcq_sqrt, sqrt, 0, 9, 1, 0},
        {"rsqrt", hcq_rsqrt, r_rsqrt, 0.1, 9, 2, 0}, {"recip", hcq_recip, r_recip, 0.5, 3, 1, 0},
        {"sin", hcq_sin, sin, -6, 6, 4, 1e-6},       {"cos", hcq_cos, cos, -6, 6, 4, 2e-6},
        {"abs", hcq_abs, fabs, -3, 3, 1, 0},         {"sign", hcq_sign, r_sign, -3, 3, 0, 0},
        {"trunc", hcq_trunc, trunc, -3, 3, 0, 0},    {"relu", hcq_relu, r_relu, -3, 3, 0, 0},
        {"sigmoid", hcq_sigmoid, r_sigmoid, -6, 6, 4, 1e-6}, {"tanh", hcq_tanh, tanh, -4, 4, 4, 2e-6},
        {"gelu", hcq_gelu, r_gelu, -4, 4, 4, 2e-6},  {"silu", hcq_silu, r_silu, -4, 4, 4, 2e-6},
    };
    enum { N = 3 * 5 * 7 };
    double x[N], got[N], want[N];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const un_case *k = &cases[c];
        hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(3, 5, 7), k->lo, k->hi, (uint32_t)c + 1, x);
        hcq_tensor *y = k->op(t);
        cr_assert_not_null(y, "%s: %s", k->name, hcq_error_message());
        cr_assert_eq(hcq_tensor_dtype(y), HCQ_F32);
        tx_read(y, got, N);
        for (int i = 0; i < N; i++) want[i] = k->ref(x[i]);
        tx_close(got, want, N, tx_rtol(HCQ_F32) * k->tol_mul, k->atol, k->name);
    }
}

Test(api_tensor_ops, unary_on_a_noncontiguous_view)
{
    double x[4 * 9], got[3 * 2], want[3 * 2];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(4, 9), -2, 2, 7, x);
    /* transpose -> [9, 4], rows 1..6 step 2 -> [3, 4], cols from the end step -2 -> [3, 2] */
    hcq_tensor *v = hcq_slice(hcq_slice(hcq_transpose(t, 0, 1), 0, 1, 7, 2), 1, -1, INT64_MIN, -2);
    hcq_tensor *y = hcq_exp(v);
    cr_assert_eq(hcq_tensor_dim(y, 0), 3);
    cr_assert_eq(hcq_tensor_dim(y, 1), 2);
    tx_read(y, got, 6);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) want[i * 2 + j] = exp(x[(3 - 2 * j) * 9 + 1 + 2 * i]);
    tx_close(got, want, 6, 4e-5, 0, "exp of a view");
}

typedef struct bin_case {
    const char *name;
    hcq_tensor *(*op)(hcq_tensor *, hcq_tensor *);
    int kind; /* 0 add 1 sub 2 mul 3 div 4 max 5 min 6 pow 7 lt 8 le 9 gt 10 ge 11 eq 12 ne */
} bin_case;

static double bref(int kind, double a, double b)
{
    switch (kind) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return fmax(a, b);
    case 5: return fmin(a, b);
    case 6: return pow(a, b);
    case 7: return a < b;
    case 8: return a <= b;
    case 9: return a > b;
    case 10: return a >= b;
    case 11: return a == b;
    default: return a != b;
    }
}

Test(api_tensor_ops, binary_broadcasting_f32)
{
    static const bin_case cases[] = {{"add", hcq_add, 0},     {"sub", hcq_sub, 1},     {"mul", hcq_mul, 2},
                                     {"div", hcq_div, 3},     {"maximum", hcq_maximum, 4}, {"minimum", hcq_minimum, 5},
                                     {"pow", hcq_pow, 6},     {"lt", hcq_lt, 7},       {"le", hcq_le, 8},
                                     {"gt", hcq_gt, 9},       {"ge", hcq_ge, 10},      {"eq", hcq_eq, 11},
                                     {"ne", hcq_ne, 12}};
    /* a [4, 1, 3] with b [5, 1] -> [4, 5, 3] */
    double a[12], b[5], got[60], want[60];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(4, 1, 3), 0.5, 3, 11 + (uint32_t)c, a);
        hcq_tensor *tb = tx_rand(HCQ_F32, TX_SHAPE(5, 1), -2, 2, 99, b);
        if (cases[c].kind >= 7) { /* make some equal pairs */
            a[0] = b[0] = 1.5;
            ta = tx_from(HCQ_F32, TX_SHAPE(4, 1, 3), a);
            tb = tx_from(HCQ_F32, TX_SHAPE(5, 1), b);
        }
        hcq_tensor *y = cases[c].op(ta, tb);
        cr_assert_not_null(y, "%s: %s", cases[c].name, hcq_error_message());
        int64_t s[3];
        cr_assert_eq(hcq_tensor_shape(y, s), 3);
        cr_assert(s[0] == 4 && s[1] == 5 && s[2] == 3, "%s: shape", cases[c].name);
        cr_assert_eq(hcq_tensor_dtype(y), cases[c].kind >= 7 ? HCQ_BOOL : HCQ_F32, "%s dtype", cases[c].name);
        tx_read(y, got, 60);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                for (int k = 0; k < 3; k++) want[(i * 5 + j) * 3 + k] = tx_round(HCQ_F32, bref(cases[c].kind, a[i * 3 + k], b[j]));
        tx_close(got, want, 60, cases[c].kind == 6 ? 4e-5 : 1e-6, 1e-6, cases[c].name);
    }
}

Test(api_tensor_ops, integer_and_bool_ops)
{
    double a[6 * 7], b[7], got[42], want[42];
    hcq_tensor *ta = tx_rand(HCQ_I32, TX_SHAPE(6, 7), -50, 50, 3, a);
    hcq_tensor *tb = tx_rand(HCQ_I32, TX_SHAPE(7), -9, 9, 4, b);
    b[0] = 0; /* x / 0 and x % 0 are 0 */
    tb = tx_from(HCQ_I32, TX_SHAPE(7), b);
    struct { const char *name; hcq_tensor *y; int kind; } cases[] = {
        {"idiv", hcq_idiv(ta, tb), 0}, {"mod", hcq_mod(ta, tb), 1},    {"and", hcq_logical_and(ta, tb), 2},
        {"or", hcq_logical_or(ta, tb), 3}, {"xor", hcq_logical_xor(ta, tb), 4}, {"add_s", hcq_add_s(ta, 3), 5},
        {"maximum", hcq_maximum(ta, tb), 6}, {"minimum", hcq_minimum(ta, tb), 7}, {"neg", hcq_neg(ta), 8},
        {"abs", hcq_abs(ta), 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        cr_assert_not_null(cases[c].y, "%s: %s", cases[c].name, hcq_error_message());
        cr_assert_eq(hcq_tensor_dtype(cases[c].y), HCQ_I32, "%s", cases[c].name);
        tx_read(cases[c].y, got, 42);
        for (int i = 0; i < 42; i++) {
            int32_t x = (int32_t)a[i], y = (int32_t)b[i % 7], r = 0;
            switch (cases[c].kind) {
            case 0: r = y ? x / y : 0; break;
            case 1: r = y ? x % y : 0; break;
            case 2: r = x & y; break;
            case 3: r = x | y; break;
            case 4: r = x ^ y; break;
            case 5: r = x + 3; break;
            case 6: r = x > y ? x : y; break;
            case 7: r = x < y ? x : y; break;
            case 8: r = -x; break;
            default: r = x < 0 ? -x : x; break;
            }
            want[i] = r;
        }
        tx_close(got, want, 42, 0, 0, cases[c].name);
    }
    /* bools: logic, comparisons and arithmetic (which works in i32) */
    double p[12], q[12], g[12];
    hcq_tensor *tp = tx_rand(HCQ_BOOL, TX_SHAPE(12), 0, 1, 5, p), *tq = tx_rand(HCQ_BOOL, TX_SHAPE(12), 0, 1, 6, q);
    hcq_tensor *land = hcq_logical_and(tp, hcq_logical_not(tq)), *lt = hcq_lt(tp, tq), *sum = hcq_add(tp, tq);
    cr_assert_eq(hcq_tensor_dtype(land), HCQ_BOOL);
    cr_assert_eq(hcq_tensor_dtype(sum), HCQ_I32);
    tx_read(land, g, 12);
    for (int i = 0; i < 12; i++) cr_assert_eq(g[i], (double)(p[i] && !q[i]), "and-not[%d]", i);
    tx_read(lt, g, 12);
    for (int i = 0; i < 12; i++) cr_assert_eq(g[i], (double)(p[i] < q[i]), "lt[%d]", i);
    tx_read(sum, g, 12);
    for (int i = 0; i < 12; i++) cr_assert_eq(g[i], p[i] + q[i], "bool add[%d]", i);
}

Test(api_tensor_ops, promotion_rules)
{
    hcq_tensor *f16 = hcq_full(tx_ctx, HCQ_F16, TX_SHAPE(2), 1.5), *f32 = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(2), 1);
    hcq_tensor *bf = hcq_full(tx_ctx, HCQ_BF16, TX_SHAPE(2), 1), *i32 = hcq_full(tx_ctx, HCQ_I32, TX_SHAPE(2), 2);
    hcq_tensor *b = hcq_full(tx_ctx, HCQ_BOOL, TX_SHAPE(2), 1);
    cr_assert_eq(hcq_tensor_dtype(hcq_add(f16, f32)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_add(f16, bf)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_add(f16, i32)), HCQ_F16);
    cr_assert_eq(hcq_tensor_dtype(hcq_add(i32, b)), HCQ_I32);
    cr_assert_eq(hcq_tensor_dtype(hcq_mul_s(f16, 2.5)), HCQ_F16);
    cr_assert_eq(hcq_tensor_dtype(hcq_mul_s(i32, 2.5)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_mul_s(i32, 2)), HCQ_I32);
    cr_assert_eq(hcq_tensor_dtype(hcq_add_s(b, 1)), HCQ_I32);
    cr_assert_eq(hcq_tensor_dtype(hcq_div(i32, i32)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_exp(i32)), HCQ_F32);
    cr_assert_eq(hcq_tensor_dtype(hcq_exp(bf)), HCQ_BF16);
    cr_assert_eq(hcq_tensor_dtype(hcq_sum(b, HCQ_ALL_AXES, false)), HCQ_I32);
    cr_assert_eq(hcq_tensor_dtype(hcq_mean(i32, HCQ_ALL_AXES, false)), HCQ_F32);
    double v;
    T_OK(hcq_tensor_item(hcq_sum(hcq_mul_s(f16, 2.5), HCQ_ALL_AXES, false), &v));
    cr_assert_eq(v, 7.5);
}

/* halfs round after every op: the reference does too */
Test(api_tensor_ops, f16_and_bf16_round_per_op)
{
    hcq_dtype dts[2] = {HCQ_F16, HCQ_BF16};
    for (int k = 0; k < 2; k++) {
        hcq_dtype dt = dts[k];
        double a[5 * 9], b[9], c[5 * 9], got[45], want[45];
        hcq_tensor *ta = tx_rand(dt, TX_SHAPE(5, 9), -4, 4, 21, a), *tb = tx_rand(dt, TX_SHAPE(9), -4, 4, 22, b);
        hcq_tensor *tc = tx_rand(dt, TX_SHAPE(5, 9), -4, 4, 23, c);
        hcq_tensor *y = hcq_sub(hcq_mul(ta, tb), tc);
        cr_assert_eq(hcq_tensor_dtype(y), dt);
        tx_read(y, got, 45);
        for (int i = 0; i < 45; i++) want[i] = tx_round(dt, tx_round(dt, a[i] * b[i % 9]) - c[i]);
        tx_close(got, want, 45, 0, 0, hcq_dtype_name(dt));
        hcq_tensor *e = hcq_exp(ta);
        tx_read(e, got, 45);
        for (int i = 0; i < 45; i++) want[i] = exp(a[i]);
        tx_close(got, want, 45, 2 * tx_rtol(dt), 1e-3, "half exp");
    }
}

Test(api_tensor_ops, where_cast_bitcast)
{
    double c[7], a[3 * 7], got[21], want[21];
    hcq_tensor *tc = tx_rand(HCQ_BOOL, TX_SHAPE(7), 0, 1, 31, c), *ta = tx_rand(HCQ_F32, TX_SHAPE(3, 7), -5, 5, 32, a);
    hcq_tensor *y = hcq_where(tc, ta, hcq_scalar(tx_ctx, -1.25));
    tx_read(y, got, 21);
    for (int i = 0; i < 21; i++) want[i] = c[i % 7] ? a[i] : -1.25;
    tx_close(got, want, 21, 0, 0, "where");
    double f[6] = {1.9, -1.9, 3e10, -3e10, NAN, 0.0}, gi[6];
    hcq_tensor *tf = tx_from(HCQ_F32, TX_SHAPE(6), f);
    tx_read(hcq_cast(tf, HCQ_I32), gi, 6);
    double wi[6] = {1, -1, 2147483647.0, -2147483648.0, 0, 0};
    tx_close(gi, wi, 6, 0, 0, "f32 -> i32 saturates");
    tx_read(hcq_cast(tf, HCQ_BOOL), gi, 6);
    double wb[6] = {1, 1, 1, 1, 1, 0};
    tx_close(gi, wb, 6, 0, 0, "f32 -> bool");
    hcq_tensor *one = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(2), 1.0);
    tx_read(hcq_bitcast(one, HCQ_I32), gi, 2);
    cr_assert_eq(gi[0], (double)0x3f800000);
    double h[3] = {1.5, -2.25, 65504}, gh[3];
    tx_read(hcq_cast(hcq_cast(tx_from(HCQ_F32, TX_SHAPE(3), h), HCQ_F16), HCQ_F32), gh, 3);
    tx_close(gh, h, 3, 0, 0, "f32 -> f16 -> f32");
}

Test(api_tensor_ops, zero_size_and_ones)
{
    hcq_tensor *a = hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(0, 3)), *b = hcq_ones(tx_ctx, HCQ_F32, TX_SHAPE(3));
    hcq_tensor *y = hcq_exp(hcq_add(a, b));
    cr_assert_eq(hcq_tensor_numel(y), 0);
    T_OK(hcq_realize(y));
    T_OK(hcq_tensor_read(y, NULL, 0));
    double x[7], got[7], want[7];
    hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(1, 7, 1), -1, 1, 41, x);
    hcq_tensor *s = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(1, 1, 1), 2);
    tx_read(hcq_mul(t, s), got, 7);
    for (int i = 0; i < 7; i++) want[i] = 2 * x[i];
    tx_close(got, want, 7, 0, 0, "size-1 broadcast");
}
