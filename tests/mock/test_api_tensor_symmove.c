/* Movements of a variable dim (hcq_jit_dim, tensor/symdim.c) on the device
 * under test: flips of a variable batch and sequence, slices of a fixed
 * size from a variable sequence and slices to its end, padding, steps,
 * max pooling windows along it, concatenations along it, and gathers
 * along it (indexes at or past
 * the run's size read zero, not the captured upper bound's elements), and
 * the gradients through each; one capture replayed at several sizes, as
 * the eager ops give them at each. A reshape merging the variable dim, a
 * slice reaching past the variable's lower bound, and one to the end
 * whose size would be negative there say so. */
#include "tensortest.h"

#include "base/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_symmove, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

enum { D = 3, K = 4, B_HI = 4, S_LO = 3, S_HI = 8, OUTS = 12 };

static hcq_status move_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    hcq_tensor *x = in[0], *idx = in[1], *w = user;
    int64_t b = hcq_tensor_dim(x, 0);
    out[0] = hcq_flip(x, HCQ_AXES(1));                            /* the sequence: a dim inside the batch */
    out[1] = hcq_flip(x, HCQ_AXES(0, 1, 2));                      /* both variables and a fixed dim */
    out[2] = hcq_shrink(x, HCQ_PAIRS(0, b, 1, 3));                /* (b, 2, D): a fixed size from the sequence */
    out[3] = hcq_slice(x, 1, -1, INT64_MIN, -1);                  /* x[:, ::-1] */
    out[4] = hcq_gather(x, 1, idx);                               /* (b, K, D) */
    out[6] = hcq_slice(x, 1, 1, INT64_MAX, 1);                    /* x[:, 1:]: (b, s-1, D) */
    out[7] = hcq_pad(x, HCQ_PAIRS(0, 0, 1, 2), 0.5);              /* (b, s+3, D) */
    out[8] = hcq_slice(x, 1, 0, INT64_MAX, 2);                    /* x[:, ::2]: (b, ceil(s/2), D) */
    out[9] = hcq_max_pool2d(x, &(hcq_pool2d_opts){{2, 1}, {1, 1}, {0, 0}}); /* windows along the sequence: (b, s-1, D) */
    hcq_tensor *head = hcq_shrink(x, HCQ_PAIRS(0, b, 0, 2));
    out[10] = hcq_cat((hcq_tensor *[]){head, x, x}, 3, 1);       /* (b, 2s+2, D): parts at offsets 2 and s+2 */
    out[11] = hcq_cat((hcq_tensor *[]){x, head}, 2, 1);          /* (b, s+2, D) */
    /* the gradients of each movement, into w through u = x * w */
    hcq_tensor *u = hcq_mul(x, w);
    hcq_tensor *l = hcq_add(hcq_sum(hcq_mul(hcq_flip(u, HCQ_AXES(1)), x), HCQ_ALL_AXES, false),
                            hcq_sum(hcq_mul_s(hcq_shrink(u, HCQ_PAIRS(0, b, 1, 3)), 3.0), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_mul(hcq_gather(u, 1, idx), hcq_gather(x, 1, idx)), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_mul(hcq_slice(u, 1, 1, INT64_MAX, 1), hcq_slice(x, 1, 1, INT64_MAX, 1)), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_mul_s(hcq_pad(u, HCQ_PAIRS(0, 0, 1, 2), 0.5), 2.0), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_mul(hcq_slice(u, 1, 0, INT64_MAX, 2), hcq_slice(x, 1, 0, INT64_MAX, 2)), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_max_pool2d(u, &(hcq_pool2d_opts){{2, 1}, {1, 1}, {0, 0}}), HCQ_ALL_AXES, false));
    l = hcq_add(l, hcq_sum(hcq_mul(hcq_cat((hcq_tensor *[]){u, hcq_shrink(u, HCQ_PAIRS(0, b, 0, 2))}, 2, 1), out[11]), HCQ_ALL_AXES, false));
    hcq_status st = l ? hcq_backward(l) : hcq_error_status();
    if (st) return st;
    out[5] = hcq_grad(w);
    for (int i = 0; i < OUTS; i++)
        if (!out[i]) return hcq_error_status();
    st = hcq_realize_all(out, OUTS); /* before the gradient is dropped for the next call */
    return st ? st : hcq_zero_grad(w);
}

/* indexes into a sequence of s: every position, and s itself (out of
 * range: reads zero) */
static hcq_tensor *indexes(int64_t b, int64_t s)
{
    double v[B_HI * K * D];
    for (int64_t i = 0; i < b * K * D; i++) v[i] = (double)((i * 7 + i / D) % (s + 1));
    return tx_from(HCQ_I32, TX_SHAPE(b, K, D), v);
}

Test(api_tensor_symmove, flips_slices_and_gathers_of_variable_dims)
{
    /* traced at the first two; each size's eager kernels are compiled
     * apart, so the eager reference runs at the replayed sizes */
    static const int64_t sizes[][2] = {{3, 5}, {2, 7}, {4, 3}, {1, 8}};
    static const char *const what[OUTS] = {"flip of the sequence", "flip of every dim", "slice [1, 3) of the sequence",
                                           "reversed sequence", "gather along the sequence", "w's gradient",
                                           "slice [1, end) of the sequence", "padding of the sequence", "every second element",
                                           "max pooling along the sequence", "cat of a slice and the sequence twice",
                                           "cat of the sequence and a slice"};
    hcq_tensor *w = tx_rand(HCQ_F32, TX_SHAPE(D), -1, 1, 5, NULL);
    T_OK(hcq_realize(w));
    T_OK(hcq_requires_grad(w, true));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, move_fn, w));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, B_HI));
    T_OK(hcq_jit_dim(j, 0, 1, "seq", S_LO, S_HI));
    T_OK(hcq_jit_dim(j, 1, 0, "batch", 1, B_HI));
    static double got[B_HI * (2 * S_HI + 2) * D], want[B_HI * (2 * S_HI + 2) * D];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r][0], s = sizes[r][1];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, s, D), -1, 1, 30 + (uint32_t)r, NULL), *ix = indexes(b, s), *o[OUTS], *e[OUTS];
        T_OK(hcq_realize_all((hcq_tensor *[]){x, ix}, 2));
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, ix}, 2, o, OUTS));
        cr_assert_eq(hcq_tensor_dim(o[0], 1), s, "the run's size");
        if (!getenv("HCQ_TEST_LONG") && r != 2) {
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        T_OK(move_fn(tx_ctx, (hcq_tensor *[]){x, ix}, 2, e, OUTS, w));
        const int64_t n[OUTS] = {b * s * D, b * s * D, b * 2 * D, b * s * D, b * K * D, D, b * (s - 1) * D, b * (s + 3) * D, b * ((s + 1) / 2) * D,
                                 b * (s - 1) * D, b * (2 * s + 2) * D, b * (s + 2) * D};
        for (int i = 0; i < OUTS; i++) {
            cr_assert_eq(hcq_tensor_numel(o[i]), n[i], "(%lld, %lld) %s: its size", (long long)b, (long long)s, what[i]);
            tx_read(o[i], got, n[i]);
            tx_read(e[i], want, n[i]);
            char msg[96];
            snprintf(msg, sizeof msg, "(%lld, %lld) %s against the eager run", (long long)b, (long long)s, what[i]);
            if (i != 5)
                tx_same(got, want, n[i], msg); /* no sums: the same bits */
            else
                tx_close(got, want, n[i], 1e-5, 1e-5, msg);
        }
        /* an index equal to the size reads zero */
        tx_read(o[4], got, n[4]);
        for (int64_t k = 0; k < n[4]; k++)
            if ((k * 7 + k / D) % (s + 1) == s) cr_assert(got[k] == 0, "(%lld, %lld) gather: index %lld reads %g", (long long)b, (long long)s, (long long)s, got[k]);
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
}

static hcq_status merged(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_reshape(hcq_transpose(in[0], 0, 1), HCQ_SHAPE(-1)); /* the variable dim inside a fixed one, merged */
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status past_lo(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_slice(in[0], 0, 0, 3, 1); /* x[:3] with sizes from 2 */
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status end_past_lo(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_slice(in[0], 0, 4, INT64_MAX, 1); /* x[4:] with sizes from 2 */
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_symmove, what_cannot_follow_the_value_says_so)
{
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(6, 5), -1, 1, 1, NULL), *out;
    hcq_jit_fn fns[3] = {merged, past_lo, end_past_lo};
    const hcq_status st[3] = {HCQ_ENOTSUP, HCQ_EINVAL, HCQ_EINVAL};
    const char *want[3] = {"with fixed dims outside it", "past the variable's lower bound", "would be negative"};
    for (int f = 0; f < 3; f++) {
        hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, fns[f], NULL));
        T_OK(hcq_jit_dim(j, 0, 0, "n", 2, 64));
        cr_assert_eq(hcq_jit_run(j, &x, 1, &out, 1), st[f], "case %d: %s", f, hcq_error_message());
        cr_assert(strstr(hcq_error_message(), want[f]), "%s", hcq_error_message());
        T_OK(hcq_jit_destroy(j));
    }
}

/* Reshapes merging a variable batch with fixed dims and splitting it
 * again: [b, 4, D] -> [b*4, D] (a product with a weight) -> [b, 4, E], a
 * split of a variable row count [n, D] -> [n/2, 2*D] (n must be even at
 * every run), and the weight's gradient through both; as the eager ops. */
enum { RS = 4, RE = 5, RB_HI = 6 };
static hcq_status reshape_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    hcq_tensor *x = in[0], *r = in[1], *w = user;
    int64_t b = hcq_tensor_dim(x, 0), n = hcq_tensor_dim(r, 0);
    hcq_tensor *flat = hcq_reshape(x, HCQ_SHAPE(b * RS, D));                      /* [b*4, D] */
    out[0] = hcq_reshape(hcq_matmul(flat, w), HCQ_SHAPE(b, RS, RE));              /* [b, 4, E] */
    out[1] = hcq_reshape(r, HCQ_SHAPE(n / 2, 2 * D));                             /* [n/2, 2D] */
    out[2] = hcq_reshape(hcq_flip(flat, HCQ_AXES(0)), HCQ_SHAPE(b, RS * D));       /* [b, 4D] of the reversed rows */
    hcq_tensor *l = hcq_sum(hcq_mul(out[0], out[0]), HCQ_ALL_AXES, false);
    l = hcq_add(l, hcq_sum(hcq_reshape(hcq_matmul(hcq_reshape(r, HCQ_SHAPE(n / 2, 2, D)), w), HCQ_SHAPE(n, RE)), HCQ_ALL_AXES, false));
    hcq_status st = l ? hcq_backward(l) : hcq_error_status();
    if (st) return st;
    out[3] = hcq_grad(w);
    for (int i = 0; i < 4; i++)
        if (!out[i]) return hcq_error_status();
    st = hcq_realize_all(out, 4);
    return st ? st : hcq_zero_grad(w);
}

Test(api_tensor_symmove, reshapes_merging_and_splitting_a_variable_dim)
{
    static const int64_t sizes[][2] = {{3, 4}, {2, 6}, {5, 2}, {1, 12}};
    hcq_tensor *w = tx_rand(HCQ_F32, TX_SHAPE(D, RE), -1, 1, 7, NULL);
    T_OK(hcq_realize(w));
    T_OK(hcq_requires_grad(w, true));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, reshape_fn, w));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, RB_HI));
    T_OK(hcq_jit_dim(j, 1, 0, "rows", 2, 12));
    static const char *const what[4] = {"merged, multiplied and split", "a split of the rows", "merged, flipped and split",
                                        "w's gradient"};
    static double got[RB_HI * RS * RE + 64], want[RB_HI * RS * RE + 64];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r][0], n = sizes[r][1];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, RS, D), -1, 1, 40 + (uint32_t)r, NULL);
        hcq_tensor *rw = tx_rand(HCQ_F32, TX_SHAPE(n, D), -1, 1, 50 + (uint32_t)r, NULL), *o[4], *e[4];
        T_OK(hcq_realize_all((hcq_tensor *[]){x, rw}, 2));
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, rw}, 2, o, 4));
        cr_assert_eq(hcq_tensor_dim(o[1], 0), n / 2, "the run's size");
        if (!getenv("HCQ_TEST_LONG") && r != 2) {
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        T_OK(reshape_fn(tx_ctx, (hcq_tensor *[]){x, rw}, 2, e, 4, w));
        const int64_t cnt[4] = {b * RS * RE, n * D, b * RS * D, D * RE};
        for (int i = 0; i < 4; i++) {
            cr_assert_eq(hcq_tensor_numel(o[i]), cnt[i], "(%lld, %lld) %s: its size", (long long)b, (long long)n, what[i]);
            tx_read(o[i], got, cnt[i]);
            tx_read(e[i], want, cnt[i]);
            char msg[96];
            snprintf(msg, sizeof msg, "(%lld, %lld) %s", (long long)b, (long long)n, what[i]);
            tx_close(got, want, cnt[i], 1e-5, 1e-5, msg);
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    /* rows not a multiple of 2: the split cannot hold */
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(2, RS, D), -1, 1, 9, NULL), *rw = tx_rand(HCQ_F32, TX_SHAPE(5, D), -1, 1, 9, NULL), *o[4];
    cr_assert_eq(hcq_jit_run(j, (hcq_tensor *[]){x, rw}, 2, o, 4), HCQ_EINVAL, "5 rows in pairs");
    cr_assert(strstr(hcq_error_message(), "must be a multiple"), "%s", hcq_error_message());
    T_OK(hcq_jit_destroy(j));
}

/* Found by the differential fuzzer (tests/tfuzz, CPU+sym): results with a
 * dim of 0 keep the variable batch (a concatenation of empty parts, max
 * pooling of an empty image: the reduction of a constant folded), and
 * pooling windows along a variable dim whose count is 0 at the smallest
 * value replay at every size. */
static hcq_status empty_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    hcq_tensor *e = in[0], *x = in[1];
    out[0] = hcq_cat((hcq_tensor *[]){e, e, e}, 3, 1);                                                  /* (b, 0) */
    out[1] = hcq_max_pool2d(hcq_reshape(e, HCQ_SHAPE(hcq_tensor_dim(e, 0), 1, 0)), &(hcq_pool2d_opts){{3, 2}, {2, 2}, {1, 0}}); /* (b, 1, 0) */
    out[2] = hcq_max_pool2d(hcq_contiguous(hcq_transpose(x, 0, 2)), &(hcq_pool2d_opts){{3, 2}, {2, 2}, {1, 0}}); /* (1, 7, (b-2)/2+1) */
    return out[0] && out[1] && out[2] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_symmove, empty_results_and_empty_windows)
{
    static const int64_t sizes[] = {3, 4, 1, 6, 2};
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, empty_fn, NULL));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 8));
    T_OK(hcq_jit_dim(j, 1, 0, "batch", 1, 8));
    double got[64], want[64];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *e = T_NONNULL(hcq_zeros(tx_ctx, HCQ_F32, TX_SHAPE(b, 0))), *x = tx_rand(HCQ_F32, TX_SHAPE(b, 13, 1), -1, 1, 3, NULL), *o[3], *w[3];
        T_OK(hcq_realize_all((hcq_tensor *[]){e, x}, 2));
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){e, x}, 2, o, 3));
        T_OK(empty_fn(tx_ctx, (hcq_tensor *[]){e, x}, 2, w, 3, NULL));
        for (int i = 0; i < 3; i++) {
            int64_t so[HCQ_MAX_DIMS], sw[HCQ_MAX_DIMS];
            int nd = hcq_tensor_shape(o[i], so);
            cr_assert_eq(nd, hcq_tensor_shape(w[i], sw), "batch %lld, output %d: its dims", (long long)b, i);
            for (int d = 0; d < nd; d++)
                cr_assert_eq(so[d], sw[d], "batch %lld, output %d: dim %d is %lld, eagerly %lld", (long long)b, i, d, (long long)so[d],
                             (long long)sw[d]);
        }
        int64_t n = hcq_tensor_numel(w[2]);
        tx_read(o[2], got, n);
        tx_read(w[2], want, n);
        for (int64_t k = 0; k < n; k++) cr_assert(got[k] == want[k], "batch %lld, pooled element %lld: %g, eagerly %g", (long long)b, (long long)k, got[k], want[k]);
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
}
