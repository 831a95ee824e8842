/* Movement ops on the device under test: every op read back (which copies
 * the view into a contiguous buffer through a kernel), compositions that
 * merge into one view and ones that must stack (reshape of a transpose,
 * pad then window), against index arithmetic in C. Values are exact. */
#include "tensortest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_move, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static void iota(double *x, int n)
{
    for (int i = 0; i < n; i++) x[i] = i + 1;
}

Test(api_tensor_move, reshape_permute_expand_squeeze)
{
    double x[24], got[96], want[96];
    iota(x, 24);
    hcq_tensor *t = tx_from(HCQ_F32, TX_SHAPE(2, 3, 4), x);
    /* permute (2, 0, 1) -> [4, 2, 3] */
    tx_read(hcq_permute(t, HCQ_AXES(2, 0, 1)), got, 24);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) want[(k * 2 + i) * 3 + j] = x[(i * 3 + j) * 4 + k];
    tx_close(got, want, 24, 0, 0, "permute");
    /* reshape of the transpose cannot merge: a stacked view */
    hcq_tensor *r = hcq_reshape(hcq_transpose(t, 1, 2), TX_SHAPE(2, 12));
    tx_read(r, got, 24);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 3; j++) want[i * 12 + k * 3 + j] = x[(i * 3 + j) * 4 + k];
    tx_close(got, want, 24, 0, 0, "reshape of transpose");
    /* -1 infers; expand a size-1 dim and add a leading one */
    hcq_tensor *e = hcq_expand(hcq_reshape(t, TX_SHAPE(6, 1, -1)), TX_SHAPE(2, 6, 2, 4));
    tx_read(e, got, 96);
    for (int a = 0; a < 2; a++)
        for (int i = 0; i < 6; i++)
            for (int b = 0; b < 2; b++)
                for (int k = 0; k < 4; k++) want[((a * 6 + i) * 2 + b) * 4 + k] = x[i * 4 + k];
    tx_close(got, want, 96, 0, 0, "expand");
    hcq_tensor *u = hcq_unsqueeze(t, -1);
    cr_assert_eq(hcq_tensor_ndim(u), 4);
    cr_assert_eq(hcq_tensor_dim(u, 3), 1);
    cr_assert_eq(hcq_tensor_ndim(hcq_squeeze(u, HCQ_ALL_DIMS)), 3);
    cr_assert_eq(hcq_tensor_dim(hcq_flatten(t, 1, 2), 1), 12);
    /* reshape of a contiguous buffer needs no kernel */
    T_OK(hcq_realize(t));
    hcq_ctx_stats s0, s1;
    T_OK(hcq_ctx_get_stats(tx_ctx, &s0));
    tx_read(hcq_reshape(t, TX_SHAPE(4, 6)), got, 24);
    T_OK(hcq_ctx_get_stats(tx_ctx, &s1));
    cr_assert_eq(s1.kernels, s0.kernels, "a reshape of a buffer is read without a kernel");
    tx_close(got, x, 24, 0, 0, "reshape");
}

Test(api_tensor_move, pad_shrink_compose)
{
    double x[12], got[80], want[80];
    iota(x, 12);
    hcq_tensor *t = tx_from(HCQ_F32, TX_SHAPE(3, 4), x);
    hcq_tensor *p = hcq_pad(t, (const int64_t[]){1, 2, 0, 3}, 2, 9.5); /* [6, 7] */
    tx_read(p, got, 42);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++) want[i * 7 + j] = (i >= 1 && i < 4 && j < 4) ? x[(i - 1) * 4 + j] : 9.5;
    tx_close(got, want, 42, 0, 0, "pad");
    /* shrink into the padding and the data, then pad again (same value: one view) */
    hcq_tensor *s = hcq_shrink(p, (const int64_t[]){0, 3, 2, 6}, 2); /* rows 0..2, cols 2..5 -> [3, 4] */
    hcq_tensor *q = hcq_pad(s, (const int64_t[]){0, 1, 1, 0}, 2, 9.5); /* [4, 5] */
    tx_read(q, got, 20);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) {
            int pi = i, pj = j - 1 + 2; /* in p */
            want[i * 5 + j] = (j >= 1 && i < 3) ? ((pi >= 1 && pi < 4 && pj < 4) ? x[(pi - 1) * 4 + pj] : 9.5) : 9.5;
        }
    tx_close(got, want, 20, 0, 0, "pad/shrink/pad");
    /* a different padding value stacks a view */
    hcq_tensor *q2 = hcq_pad(s, (const int64_t[]){1, 0}, 1, -1.0);
    tx_read(q2, got, 16);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int pi = i - 1, pj = j + 2;
            want[i * 4 + j] = i == 0 ? -1.0 : (pi >= 1 && pi < 4 && pj < 4) ? x[(pi - 1) * 4 + pj] : 9.5;
        }
    tx_close(got, want, 16, 0, 0, "pad values stack");
    /* pad of a permuted view, then a size-1 expand on top */
    hcq_tensor *pp = hcq_pad(hcq_transpose(t, 0, 1), (const int64_t[]){0, 0, 2, 0}, 2, 0); /* [4, 5] */
    tx_read(hcq_sum(pp, HCQ_AXES(1), false), got, 4);
    for (int j = 0; j < 4; j++) want[j] = x[j] + x[4 + j] + x[8 + j];
    tx_close(got, want, 4, 0, 0, "sum of pad of transpose");
}

Test(api_tensor_move, slices_flips_steps)
{
    double x[30], got[30], want[30];
    iota(x, 30);
    hcq_tensor *t = tx_from(HCQ_I32, TX_SHAPE(5, 6), x);
    hcq_tensor *a = hcq_slice(hcq_slice(t, 0, 1, 5, 2), 1, -1, -7, -2); /* rows 1,3; cols 5,3,1 */
    tx_read(a, got, 6);
    int rows[2] = {1, 3}, cols[3] = {5, 3, 1};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) want[i * 3 + j] = x[rows[i] * 6 + cols[j]];
    tx_close(got, want, 6, 0, 0, "slice with steps");
    hcq_tensor *f = hcq_flip(t, HCQ_AXES(0, 1));
    tx_read(f, got, 30);
    for (int i = 0; i < 30; i++) want[i] = x[29 - i];
    tx_close(got, want, 30, 0, 0, "flip both");
    cr_assert_eq(hcq_tensor_numel(hcq_slice(t, 1, 4, 2, 1)), 0, "empty slice");
    hcq_tensor *big = hcq_slice(t, 0, -100, 100, 3); /* clamped: rows 0, 3 */
    tx_read(big, got, 12);
    for (int j = 0; j < 6; j++) {
        want[j] = x[j];
        want[6 + j] = x[18 + j];
    }
    tx_close(got, want, 12, 0, 0, "clamped slice");
}

Test(api_tensor_move, cat_stack_repeat)
{
    double a[6], b[9], got[60], want[60];
    iota(a, 6);
    for (int i = 0; i < 9; i++) b[i] = -(i + 1) * 0.5;
    hcq_tensor *ta = tx_from(HCQ_F32, TX_SHAPE(2, 3), a), *tb = tx_from(HCQ_F32, TX_SHAPE(3, 3), b);
    hcq_tensor *empty = hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(0, 3));
    hcq_tensor *parts[3] = {ta, empty, tb};
    hcq_tensor *c = hcq_cat(parts, 3, 0);
    tx_read(c, got, 15);
    for (int i = 0; i < 6; i++) want[i] = a[i];
    for (int i = 0; i < 9; i++) want[6 + i] = b[i];
    tx_close(got, want, 15, 0, 0, "cat axis 0");
    /* -0.0 survives a cat (the padding adds -0) */
    double nz[3] = {-0.0, 1, -0.0}, g3[3];
    hcq_tensor *two[2] = {tx_from(HCQ_F32, TX_SHAPE(1, 3), nz), ta};
    tx_read(hcq_shrink(hcq_cat(two, 2, 0), (const int64_t[]){0, 1}, 1), g3, 3);
    cr_assert(signbit(g3[0]) && signbit(g3[2]), "cat keeps -0.0");
    hcq_tensor *ab[2] = {ta, hcq_shrink(tb, (const int64_t[]){0, 2}, 1)};
    hcq_tensor *s = hcq_stack(ab, 2, 1); /* [2, 2, 3] */
    tx_read(s, got, 12);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++) {
            want[(i * 2 + 0) * 3 + k] = a[i * 3 + k];
            want[(i * 2 + 1) * 3 + k] = b[i * 3 + k];
        }
    tx_close(got, want, 12, 0, 0, "stack axis 1");
}

Test(api_tensor_move, repeat_and_bool_cat)
{
    double a[6], got[72], want[72];
    iota(a, 6);
    hcq_tensor *ta = tx_from(HCQ_I32, TX_SHAPE(2, 3), a);
    hcq_tensor *r = hcq_repeat(ta, TX_SHAPE(2, 3, 2)); /* [2, 6, 6] */
    cr_assert_eq(hcq_tensor_numel(r), 72);
    tx_read(r, got, 72);
    for (int z = 0; z < 2; z++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) want[(z * 6 + i) * 6 + j] = a[(i % 2) * 3 + j % 3];
    tx_close(got, want, 72, 0, 0, "repeat");
    double p[4] = {1, 0, 1, 1}, q[2] = {0, 1};
    hcq_tensor *bb[2] = {tx_from(HCQ_BOOL, TX_SHAPE(4), p), tx_from(HCQ_BOOL, TX_SHAPE(2), q)};
    tx_read(hcq_cat(bb, 2, 0), got, 6);
    double w[6] = {1, 0, 1, 1, 0, 1};
    tx_close(got, w, 6, 0, 0, "bool cat");
}
