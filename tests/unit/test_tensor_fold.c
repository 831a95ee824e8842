/* Constant folding in the lazy graph (tensor/fold.c), on the CPU device:
 * identities give their operand back and run no kernel, constant-only
 * expressions (reductions of constants and casts included) are constants,
 * and IEEE's rules hold: x * 0 is not folded for floats (NaN, inf, -0.0),
 * nor x + 0.0 (-0.0 + 0.0 is +0.0), while x - 0.0 and x + -0.0 are x. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hcqtest.h"
#include "tensor/tt.h"
#include "tensortest.h"

TestSuite(tensor_fold, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static uint64_t kernels(void)
{
    hcq_ctx_stats s;
    T_OK(hcq_ctx_get_stats(tx_ctx, &s));
    return s.kernels;
}

static hcq_tensor *data(void)
{
    static const float v[4] = {-0.0f, 2.5f, INFINITY, NAN};
    return hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(4), v);
}

static const tt_node *node(const hcq_tensor *t) { return t->n; }

Test(tensor_fold, identities_give_the_operand_itself)
{
    hcq_tensor *x = data();
    cr_assert_eq(node(hcq_mul_s(x, 1.0)), node(x), "x * 1");
    cr_assert_eq(node(hcq_div_s(x, 1.0)), node(x), "x / 1");
    cr_assert_eq(node(hcq_sub_s(x, 0.0)), node(x), "x - 0.0");
    cr_assert_eq(node(hcq_add_s(x, -0.0)), node(x), "x + -0.0");
    cr_assert_eq(node(hcq_neg(hcq_neg(x))), node(x), "neg(neg x)");
    cr_assert_eq(node(hcq_pow_s(x, 1.0)), node(x), "x ** 1");
    hcq_tensor *i = hcq_cast(x, HCQ_I32);
    cr_assert_eq(node(hcq_add_s(i, 0)), node(i), "i + 0");
    cr_assert_eq(node(hcq_sub_s(i, 0)), node(i), "i - 0");
    cr_assert_eq(node(hcq_mul_s(i, 1)), node(i), "i * 1");
    cr_assert_eq(node(hcq_idiv(i, hcq_scalar(tx_ctx, 1))), node(i), "i / 1");
    cr_assert_eq(node(hcq_logical_or(i, hcq_scalar(tx_ctx, 0))), node(i), "i | 0");
    cr_assert_eq(node(hcq_logical_xor(i, hcq_scalar(tx_ctx, 0))), node(i), "i ^ 0");
    cr_assert_eq(node(hcq_logical_and(i, hcq_scalar(tx_ctx, -1))), node(i), "i & ~0");
    hcq_tensor *b = hcq_lt(x, hcq_scalar(tx_ctx, 1.0));
    cr_assert_eq(node(hcq_logical_not(hcq_logical_not(b))), node(b), "not(not b)");
    cr_assert_eq(node(hcq_where(b, x, x)), node(x), "where(c, x, x)");
    cr_assert_eq(node(hcq_where(hcq_scalar(tx_ctx, 1), x, hcq_neg(x))), node(x), "where(true, x, y)");
}

Test(tensor_fold, integer_annihilators_are_constants)
{
    hcq_tensor *i = hcq_cast(data(), HCQ_I32);
    hcq_tensor *zero[] = {hcq_mul_s(i, 0), hcq_logical_and(i, hcq_scalar(tx_ctx, 0)),
                          hcq_idiv(i, hcq_scalar(tx_ctx, 0)), hcq_mod(i, hcq_scalar(tx_ctx, 1)),
                          hcq_mod(i, hcq_scalar(tx_ctx, 0))};
    for (size_t k = 0; k < BASE_ARRAY_LEN(zero); k++) {
        cr_assert_eq(node(zero[k])->op, TT_CONST, "case %zu", k);
        cr_assert_eq(node(zero[k])->cv.i, 0, "case %zu", k);
    }
}

Test(tensor_fold, ieee_rules_keep_float_zero_forms)
{
    hcq_tensor *x = data();
    /* not identities for floats: each still runs, and gives IEEE's values */
    hcq_tensor *plus0 = hcq_add_s(x, 0.0), *times0 = hcq_mul_s(x, 0.0), *minus_neg0 = hcq_sub_s(x, -0.0);
    cr_assert_neq(node(plus0), node(x), "x + 0.0 is not x for x = -0.0");
    cr_assert_neq(node(times0)->op, TT_CONST, "x * 0 is not 0 for a float");
    cr_assert_neq(node(minus_neg0), node(x), "x - -0.0 is x + 0.0");
    double got[4];
    tx_read(plus0, got, 4);
    cr_assert(got[0] == 0 && !signbit(got[0]), "-0.0 + 0.0 is +0.0");
    tx_read(times0, got, 4);
    cr_assert(got[0] == 0 && signbit(got[0]), "-0.0 * 0 is -0.0");
    cr_assert(isnan(got[2]) && isnan(got[3]), "inf * 0 and NaN * 0 are NaN");
    tx_read(hcq_sub_s(x, 0.0), got, 4);
    cr_assert(got[0] == 0 && signbit(got[0]), "x - 0.0 keeps -0.0");
}

Test(tensor_fold, constant_expressions_run_no_kernel)
{
    uint64_t k0 = kernels();
    hcq_tensor *c = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(64, 3), 1.5);
    hcq_tensor *e = hcq_sqrt(hcq_add_s(hcq_mul(c, c), 1.75)); /* sqrt(1.5^2 + 1.75) = 2 */
    cr_assert_eq(node(e)->op, TT_CONST);
    cr_assert_eq(node(e)->cv.f, 2.0);
    hcq_tensor *s = hcq_sum(e, HCQ_ALL_AXES, false);
    cr_assert_eq(node(s)->op, TT_CONST, "a sum of a constant");
    hcq_tensor *mx = hcq_max(e, HCQ_AXES(0), false), *mean = hcq_mean(e, HCQ_AXES(1), false);
    hcq_tensor *ci = hcq_cast(hcq_mul_s(e, 3.0), HCQ_I32), *pi = hcq_prod(ci, HCQ_ALL_AXES, false);
    double v;
    T_OK(hcq_tensor_item(s, &v));
    cr_assert_eq(v, 384.0);
    double m[64];
    tx_read(mx, m, 3);
    cr_assert(m[0] == 2 && m[1] == 2 && m[2] == 2);
    tx_read(mean, m, 64);
    for (int i = 0; i < 64; i++) cr_assert_eq(m[i], 2.0);
    T_OK(hcq_tensor_item(pi, &v));
    cr_assert_eq(v, (double)(int32_t)0u, "6^192 wraps to 0 in i32");
    hcq_tensor *sum_i = hcq_sum(ci, HCQ_ALL_AXES, false), *f16 = hcq_cast(hcq_add_s(c, 1e-4), HCQ_F16);
    T_OK(hcq_tensor_item(sum_i, &v));
    cr_assert_eq(v, 6.0 * 192);
    cr_assert_eq(node(f16)->op, TT_CONST, "a cast of a constant");
    cr_assert_eq(node(f16)->cv.f, 1.5, "1.5001 rounds to f16's 1.5");
    cr_assert_eq(kernels() - k0, 0, "nothing here needs a kernel");
    /* the folded value is what a kernel computes: the same expression on data */
    float h = 1.5f;
    hcq_tensor *d = hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(1), &h);
    T_OK(hcq_tensor_item(hcq_sqrt(hcq_add_s(hcq_mul(d, d), 1.75)), &v));
    cr_assert_eq(v, 2.0);
}

Test(tensor_fold, folded_values_match_kernels_bit_for_bit)
{
    /* each op on two constants against the same op on the same values as
     * data (a kernel), including the IR's corner cases */
    static const float fa[] = {1.0f, -0.0f, 3.0f, INFINITY, NAN, 1e-30f, -7.5f};
    static const float fb[] = {3.0f, 0.0f, -0.0f, INFINITY, 2.0f, 1e30f, 0.1f};
    static const int32_t ia[] = {7, INT32_MIN, -7, 0, 5, 123456789, -1};
    static const int32_t ib[] = {0, -1, 2, -3, 0, 1000, 31};
    hcq_tensor *(*fops[])(hcq_tensor *, hcq_tensor *) = {hcq_add, hcq_sub, hcq_mul, hcq_div, hcq_maximum, hcq_lt,
                                                          hcq_ne};
    hcq_tensor *(*iops[])(hcq_tensor *, hcq_tensor *) = {hcq_add, hcq_sub, hcq_mul, hcq_idiv, hcq_mod,
                                                          hcq_maximum, hcq_logical_and, hcq_logical_xor};
    for (size_t k = 0; k < BASE_ARRAY_LEN(fa); k++) {
        hcq_tensor *ca = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(1), fa[k]), *cb = hcq_full(tx_ctx, HCQ_F32, TX_SHAPE(1), fb[k]);
        hcq_tensor *da = hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(1), &fa[k]);
        hcq_tensor *db = hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(1), &fb[k]);
        for (size_t o = 0; o < BASE_ARRAY_LEN(fops); o++) {
            hcq_tensor *folded = fops[o](ca, cb), *run = fops[o](da, db);
            cr_assert_eq(node(folded)->op, TT_CONST);
            double f, r;
            T_OK(hcq_tensor_item(folded, &f));
            T_OK(hcq_tensor_item(run, &r));
            cr_assert(memcmp(&f, &r, sizeof f) == 0 || (isnan(f) && isnan(r)), "f32 op %zu on case %zu: folded %a, "
                      "kernel %a", o, k, f, r);
        }
        hcq_tensor *fun[] = {hcq_sqrt(ca), hcq_recip(ca), hcq_trunc(ca), hcq_exp2(ca), hcq_log2(ca), hcq_neg(ca)};
        hcq_tensor *run[] = {hcq_sqrt(da), hcq_recip(da), hcq_trunc(da), hcq_exp2(da), hcq_log2(da), hcq_neg(da)};
        for (size_t o = 0; o < BASE_ARRAY_LEN(fun); o++) {
            double f, r;
            T_OK(hcq_tensor_item(fun[o], &f));
            T_OK(hcq_tensor_item(run[o], &r));
            /* exp2 and log2 on the CPU target are within 1 ulp of libm's */
            double tol = o == 3 || o == 4 ? fabs(r) * 0x1p-23 : 0;
            cr_assert(fabs(f - r) <= tol || (isnan(f) && isnan(r)) || f == r, "unary %zu on case %zu: folded %a, "
                      "kernel %a", o, k, f, r);
        }
    }
    for (size_t k = 0; k < BASE_ARRAY_LEN(ia); k++) {
        hcq_tensor *ca = hcq_full(tx_ctx, HCQ_I32, TX_SHAPE(1), ia[k]), *cb = hcq_full(tx_ctx, HCQ_I32, TX_SHAPE(1), ib[k]);
        hcq_tensor *da = hcq_from_data(tx_ctx, HCQ_I32, TX_SHAPE(1), &ia[k]);
        hcq_tensor *db = hcq_from_data(tx_ctx, HCQ_I32, TX_SHAPE(1), &ib[k]);
        for (size_t o = 0; o < BASE_ARRAY_LEN(iops); o++) {
            double f, r;
            T_OK(hcq_tensor_item(iops[o](ca, cb), &f));
            T_OK(hcq_tensor_item(iops[o](da, db), &r));
            cr_assert_eq(f, r, "i32 op %zu on %d, %d: folded %g, kernel %g", o, ia[k], ib[k], f, r);
        }
    }
}

Test(tensor_fold, a_weak_scalar_is_not_handed_back)
{
    /* 2.0 * 1 (both scalars) folds to a constant that is not the weak 2.0:
     * f16 data times it must stay f16 */
    hcq_tensor *w = hcq_mul_s(hcq_scalar(tx_ctx, 2.0), 1.0);
    cr_assert_neq(node(w), node(hcq_scalar(tx_ctx, 2.0)));
    hcq_tensor *h = hcq_cast(data(), HCQ_F16);
    cr_assert_eq(hcq_tensor_dtype(hcq_mul(h, hcq_scalar(tx_ctx, 1.0))), HCQ_F16);
}

Test(tensor_fold, gradients_flow_through_a_folded_identity)
{
    float v[3] = {1, 2, 3};
    hcq_tensor *x = hcq_from_data(tx_ctx, HCQ_F32, TX_SHAPE(3), v);
    T_OK(hcq_requires_grad(x, true));
    hcq_tensor *y = hcq_sum(hcq_mul(hcq_mul_s(x, 1.0), x), HCQ_ALL_AXES, false); /* sum(x^2) */
    T_OK(hcq_backward(y));
    double g[3];
    tx_read(hcq_grad(x), g, 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(g[i], 2 * v[i]);
}
