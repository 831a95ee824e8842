/* Symbolic dimensions (hcq_jit_dim, tensor/symdim.c) on the device under
 * test: a JIT whose batch is a variable captures once and compiles each
 * kernel once, then replays for any batch in range with the results of
 * the eager ops (up to the order of sums: the kernels' plans are chosen
 * for the variable's upper bound); sizes out of range, a size of 1 while
 * tracing and what this version cannot express are clear errors. */
#include "tensortest.h"

#include "base/base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api_tensor_symdim, .init = tx_setup, .fini = tx_teardown, .timeout = 480);

enum { F = 24, H = 300, C = 10 };

typedef struct model {
    hcq_tensor *w1, *b1, *w2, *b2, *g, *beta;
} model;

/* a linear layer, layernorm over 300 features (a work-group per row on
 * GPU-style plans), relu, a linear layer, softmax; its mean over the
 * batch; and a cross-entropy against labels of the same batch */
static hcq_tensor *forward(model *m, hcq_tensor *x)
{
    hcq_tensor *h = hcq_relu(hcq_layernorm(hcq_linear(x, m->w1, m->b1), 1, m->g, m->beta, 1e-5));
    return hcq_linear(h, m->w2, m->b2);
}

static hcq_status infer(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    hcq_tensor *logits = forward(user, in[0]);
    out[0] = hcq_softmax(logits, -1);
    out[1] = hcq_mean(out[0], HCQ_AXES(0), false);
    out[2] = hcq_cross_entropy(logits, in[1]);
    return out[0] && out[1] && out[2] ? HCQ_OK : hcq_error_status();
}

static model make_model(void)
{
    model m = {
        .w1 = tx_rand(HCQ_F32, TX_SHAPE(H, F), -0.3, 0.3, 1, NULL),
        .b1 = tx_rand(HCQ_F32, TX_SHAPE(H), -0.1, 0.1, 2, NULL),
        .w2 = tx_rand(HCQ_F32, TX_SHAPE(C, H), -0.1, 0.1, 3, NULL),
        .b2 = tx_rand(HCQ_F32, TX_SHAPE(C), -0.1, 0.1, 4, NULL),
        .g = tx_rand(HCQ_F32, TX_SHAPE(H), 0.5, 1.5, 5, NULL),
        .beta = tx_rand(HCQ_F32, TX_SHAPE(H), -0.1, 0.1, 6, NULL),
    };
    T_OK(hcq_realize_all((hcq_tensor *[]){m.w1, m.b1, m.w2, m.b2, m.g, m.beta}, 6));
    return m;
}

static hcq_tensor *labels(int64_t b)
{
    int32_t *l = malloc((size_t)b * 4);
    for (int64_t i = 0; i < b; i++) l[i] = (int32_t)((i * 7 + 3) % C);
    hcq_tensor *t = T_NONNULL(hcq_from_data(tx_ctx, HCQ_I32, HCQ_SHAPE(b), l));
    free(l);
    return t;
}

static uint64_t stat_programs(void)
{
    hcq_ctx_stats s;
    T_OK(hcq_ctx_get_stats(tx_ctx, &s));
    return s.programs;
}

/* The kernels are the same for every batch, so a row's softmax is the same
 * bits whatever batch it is in; the eager ops (kernels of their own, one
 * set per size: compiled once here, at 100 rows) agree up to the order of
 * sums. */
Test(api_tensor_symdim, one_capture_serves_every_batch)
{
    enum { BIG = 257 };
    static const int64_t sizes[] = {8, BIG, 100, 1, 32};
    model m = make_model();
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, infer, &m));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 300));
    T_OK(hcq_jit_dim(j, 1, 0, "batch", 1, 300));
    hcq_tensor *xall = tx_rand(HCQ_F32, TX_SHAPE(BIG, F), -1, 1, 10, NULL);
    T_OK(hcq_realize(xall));
    static double rows[BIG * C], got[BIG * C], want[BIG * C];
    uint64_t compiled_first = 0;
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = hcq_contiguous(hcq_slice(xall, 0, 0, b, 1)), *y = labels(b), *out[3];
        T_OK(hcq_realize_all((hcq_tensor *[]){x, y}, 2));
        uint64_t p0 = stat_programs();
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, y}, 2, out, 3));
        uint64_t built = stat_programs() - p0;
        if (r == 0) compiled_first = built;
        else cr_assert_eq(built, 0, "batch %lld: %llu kernels compiled again", (long long)b, (unsigned long long)built);
        cr_assert_eq(hcq_tensor_dim(out[0], 0), b, "the output has the run's batch");
        tx_read(out[0], got, b * C);
        if (b == BIG) memcpy(rows, got, sizeof rows);
        if (r > 1)
            for (int64_t i = 0; i < b * C; i++)
                cr_assert(got[i] == rows[i], "batch %lld, element %lld: %.9g; in the batch of %d: %.9g", (long long)b, (long long)i,
                          got[i], BIG, rows[i]);
        if (b == 100) { /* the eager ops on the same inputs */
            hcq_tensor *lg = forward(&m, x), *ref[3] = {hcq_softmax(lg, -1), NULL, NULL};
            ref[1] = hcq_mean(ref[0], HCQ_AXES(0), false);
            ref[2] = hcq_cross_entropy(lg, y);
            int64_t n[3] = {b * C, C, 1};
            for (int k = 0; k < 3; k++) {
                tx_read(out[k], got, n[k]);
                tx_read(ref[k], want, n[k]);
                tx_close(got, want, n[k], 1e-5, 1e-6, k == 0 ? "softmax" : k == 1 ? "its mean over the batch" : "cross-entropy");
            }
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    cr_assert_gt(compiled_first, 0);
    /* each kernel compiled once (and on CPU-style targets the K-major
     * weights' copies, made once and kept outside the graph) */
    cr_assert_leq(compiled_first, hcq_jit_kernel_count(j) + 2, "each kernel compiled once: %llu for %u kernels",
                  (unsigned long long)compiled_first, hcq_jit_kernel_count(j));
    T_OK(hcq_jit_destroy(j));
}

/* Causal self-attention over a variable batch of fixed-length sequences:
 * batched products (the batch outermost in every operand), a mask from
 * index comparisons, softmax over the keys; as the eager ops give it. */
enum { T = 8, D = 16 };
typedef struct attn {
    hcq_tensor *wq, *wk, *wv;
} attn;

static hcq_tensor *attend(attn *a, hcq_tensor *x)
{
    hcq_ctx *ctx = hcq_tensor_ctx(x);
    hcq_tensor *q = hcq_matmul(x, a->wq), *k = hcq_matmul(x, a->wk), *v = hcq_matmul(x, a->wv);
    hcq_tensor *sc = hcq_mul_s(hcq_matmul(q, hcq_transpose(k, -1, -2)), 0.25);
    hcq_tensor *i = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, T, 1), HCQ_SHAPE(T, 1));
    hcq_tensor *jj = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, T, 1), HCQ_SHAPE(1, T));
    sc = hcq_where(hcq_ge(i, jj), sc, hcq_scalar(ctx, -1e30));
    return hcq_matmul(hcq_softmax(sc, -1), v);
}

static hcq_status attend_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    out[0] = attend(user, in[0]);
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_symdim, causal_attention_over_a_variable_batch)
{
    static const int64_t sizes[] = {4, 9, 2, 33};
    attn a = {tx_rand(HCQ_F32, TX_SHAPE(D, D), -0.5, 0.5, 1, NULL), tx_rand(HCQ_F32, TX_SHAPE(D, D), -0.5, 0.5, 2, NULL),
              tx_rand(HCQ_F32, TX_SHAPE(D, D), -0.5, 0.5, 3, NULL)};
    T_OK(hcq_realize_all((hcq_tensor *[]){a.wq, a.wk, a.wv}, 3));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, attend_fn, &a));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 64));
    static double got[33 * T * D], want[33 * T * D];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, T, D), -1, 1, 50 + (uint32_t)r, NULL), *o;
        T_OK(hcq_realize(x));
        T_OK(hcq_jit_run(j, &x, 1, &o, 1));
        tx_read(o, got, b * T * D);
        tx_read(attend(&a, x), want, b * T * D);
        tx_close(got, want, b * T * D, 1e-5, 1e-6, "attention");
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    T_OK(hcq_jit_destroy(j));
}

/* The eager reference at size r: each size's eager kernels are compiled
 * apart (some 20 per size, seconds on a cold cache), so make test checks
 * the sizes in `quick` and CI (HCQ_TEST_LONG=1) every one; the JIT runs
 * at every size either way. */
static bool eager_at(size_t r, unsigned quick) { return getenv("HCQ_TEST_LONG") || (quick >> r & 1u); }

/* Batch AND sequence variable (two variables per kernel, the sequence
 * not outermost: strides of the batch dim are products with the
 * sequence's value): elementwise ops, reductions over the sequence,
 * softmax over it, a product with a fixed weight and a masked attention
 * score (batch, seq, seq) with a key-padding mask of the same sizes;
 * captured once, replayed for several (batch, seq) pairs, as the eager
 * ops give it at each size. */
enum { SD = 6, SE = 5, SB_HI = 6, SS_HI = 12 };
typedef struct seqm {
    hcq_tensor *w, *wq, *wk, *wide;
} seqm;

enum { SEQ_OUTS = 9, SW = 300 };
static hcq_status seq_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)nin, (void)nout;
    seqm *m = user;
    hcq_tensor *x = in[0], *mask = in[1];
    out[0] = hcq_relu(hcq_add_s(hcq_mul_s(x, 2.0), -0.25));                       /* (b, s, d) */
    out[1] = hcq_sum(x, HCQ_AXES(1), false);                                      /* (b, d) */
    out[2] = hcq_mean(x, HCQ_AXES(1), false);
    out[3] = hcq_max(x, HCQ_AXES(1), false);
    out[4] = hcq_softmax(x, 1);                                                   /* over the sequence */
    out[5] = hcq_matmul(x, m->w);                                                 /* (b, s, e) */
    hcq_tensor *q = hcq_matmul(x, m->wq), *k = hcq_matmul(x, m->wk);
    hcq_tensor *sc = hcq_mul_s(hcq_matmul(q, hcq_transpose(k, -1, -2)), 0.5);    /* (b, s, s) */
    hcq_tensor *keep = hcq_gt(hcq_unsqueeze(mask, 1), hcq_scalar(ctx, 0.5));     /* (b, 1, s): keys to attend */
    out[6] = hcq_softmax(hcq_where(keep, sc, hcq_scalar(ctx, -1e30)), -1);
    out[7] = hcq_contiguous(hcq_transpose(x, 0, 1));                             /* (s, b, d): both variables inside */
    /* few outputs of long rows: a work-group per output on GPU-style plans,
     * the sequence gated inside the launch */
    out[8] = hcq_sum(hcq_matmul(x, m->wide), HCQ_AXES(-1), false);
    for (int i = 0; i < SEQ_OUTS; i++)
        if (!out[i]) return hcq_error_status();
    return HCQ_OK;
}

static hcq_tensor *seq_mask(int64_t b, int64_t s)
{
    double v[SB_HI * SS_HI];
    for (int64_t i = 0; i < b; i++)
        for (int64_t j = 0; j < s; j++) v[i * s + j] = j < s - (i % 3) || j == 0; /* the last keys of some rows padded */
    return tx_from(HCQ_F32, TX_SHAPE(b, s), v);
}

Test(api_tensor_symdim, batch_and_sequence_both_variable)
{
    /* traced at the first two; each size's eager kernels are compiled
     * apart, so few sizes: the upper bounds, 1, a mix */
    static const int64_t sizes[][2] = {{3, 5}, {2, 7}, {4, 3}, {6, 12}, {1, 1}};
    seqm m = {tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 1, NULL), tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 2, NULL),
              tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 3, NULL), tx_rand(HCQ_F32, TX_SHAPE(SD, SW), -0.5, 0.5, 4, NULL)};
    T_OK(hcq_realize_all((hcq_tensor *[]){m.w, m.wq, m.wk, m.wide}, 4));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, seq_fn, &m));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, SB_HI));
    T_OK(hcq_jit_dim(j, 0, 1, "seq", 1, SS_HI));
    T_OK(hcq_jit_dim(j, 1, 0, "batch", 1, SB_HI));
    T_OK(hcq_jit_dim(j, 1, 1, "seq", 1, SS_HI));
    static const char *const what[SEQ_OUTS] = {"elementwise", "sum over seq", "mean over seq", "max over seq",
                                               "softmax over seq", "x @ w", "masked scores' softmax", "transposed copy",
                                               "sums of long rows"};
    static double got[SB_HI * SS_HI * SS_HI], want[SB_HI * SS_HI * SS_HI];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r][0], s = sizes[r][1];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, s, SD), -1, 1, 60 + (uint32_t)r, NULL), *mk = seq_mask(b, s);
        hcq_tensor *o[SEQ_OUTS], *e[SEQ_OUTS];
        T_OK(hcq_realize_all((hcq_tensor *[]){x, mk}, 2));
        uint64_t p0 = stat_programs();
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, mk}, 2, o, SEQ_OUTS));
        if (r >= 2) cr_assert_eq(stat_programs(), p0, "(%lld, %lld): kernels compiled again", (long long)b, (long long)s);
        if (!eager_at(r, 0x19u)) {
            cr_assert_eq(hcq_tensor_dim(o[7], 0), s, "the run's size");
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        T_OK(seq_fn(tx_ctx, (hcq_tensor *[]){x, mk}, 2, e, SEQ_OUTS, &m));
        const int64_t n[SEQ_OUTS] = {b * s * SD, b * SD, b * SD, b * SD, b * s * SD, b * s * SE, b * s * s, s * b * SD, b * s};
        for (int i = 0; i < SEQ_OUTS; i++) {
            cr_assert_eq(hcq_tensor_dim(o[i], 0), i == 7 ? s : b, "%s: the run's size", what[i]);
            tx_read(o[i], got, n[i]);
            tx_read(e[i], want, n[i]);
            char msg[96];
            snprintf(msg, sizeof msg, "(%lld, %lld) %s against the eager run", (long long)b, (long long)s, what[i]);
            if (i == 0 || i == 3 || i == 7)
                tx_same(got, want, n[i], msg); /* no sums: the same bits */
            else
                tx_close(got, want, n[i], 1e-5, i == 8 ? 1e-4 : 1e-6, msg);
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    /* out of range, and the two inputs disagreeing on a variable */
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(2, SS_HI + 1, SD), -1, 1, 9, NULL), *mk = seq_mask(2, SS_HI + 1), *o[SEQ_OUTS];
    cr_assert_eq(hcq_jit_run(j, (hcq_tensor *[]){x, mk}, 2, o, SEQ_OUTS), HCQ_EINVAL, "seq 13: out of range");
    cr_assert(strstr(hcq_error_message(), "outside the range of 'seq', [1, 12]"), "%s", hcq_error_message());
    x = tx_rand(HCQ_F32, TX_SHAPE(2, 4, SD), -1, 1, 9, NULL);
    mk = seq_mask(2, 5);
    cr_assert_eq(hcq_jit_run(j, (hcq_tensor *[]){x, mk}, 2, o, SEQ_OUTS), HCQ_EINVAL, "seq 4 and 5");
    cr_assert(strstr(hcq_error_message(), "'seq' is 4 in one input and 5"), "%s", hcq_error_message());
    T_OK(hcq_jit_destroy(j));
}

/* What does not depend on a size takes the variable's mark: a causal mask
 * from hcq_arange over a variable sequence, random tensors of a variable
 * size (numbered as the eager tensor of that size: the same numbers), a
 * random tensor broadcast over a variable batch; as the eager ops with
 * the same seed give them. */
static hcq_status causal_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)nin, (void)nout, (void)user;
    hcq_tensor *x = in[0];
    int64_t b = hcq_tensor_dim(x, 0), s = hcq_tensor_dim(x, 1), d = hcq_tensor_dim(x, 2);
    hcq_tensor *i = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, (double)s, 1), HCQ_SHAPE(s, 1));
    hcq_tensor *jj = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, (double)s, 1), HCQ_SHAPE(1, s));
    hcq_tensor *sc = hcq_mul_s(hcq_matmul(x, hcq_transpose(x, -1, -2)), 0.5);
    out[0] = hcq_softmax(hcq_where(hcq_ge(i, jj), sc, hcq_scalar(ctx, -1e30)), -1); /* (b, s, s) */
    hcq_tensor *keep = hcq_ge(hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(b, s, d)), hcq_scalar(ctx, 0.3));
    out[1] = hcq_where(keep, hcq_mul_s(x, 1 / 0.7), hcq_scalar(ctx, 0.0));            /* dropout */
    out[2] = hcq_add(x, hcq_rand(ctx, HCQ_F32, HCQ_SHAPE(1, s, d)));                   /* broadcast over the batch */
    for (int k = 0; k < 3; k++)
        if (!out[k]) return hcq_error_status();
    return HCQ_OK;
}

Test(api_tensor_symdim, causal_masks_and_random_tensors_of_variable_sizes)
{
    static const int64_t sizes[][2] = {{3, 5}, {2, 7}, {5, 10}, {1, 2}};
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, causal_fn, NULL));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 6));
    T_OK(hcq_jit_dim(j, 0, 1, "seq", 1, 10));
    static double got[6 * 10 * 10], want[6 * 10 * 10];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r][0], s = sizes[r][1];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, s, SD), -1, 1, 80 + (uint32_t)r, NULL), *o[3], *e[3];
        T_OK(hcq_realize(x));
        uint64_t p0 = stat_programs();
        hcq_ctx_seed(tx_ctx, 11 + r);
        T_OK(hcq_jit_run(j, &x, 1, o, 3));
        if (r >= 2) cr_assert_eq(stat_programs(), p0, "(%lld, %lld): kernels compiled again", (long long)b, (long long)s);
        if (!eager_at(r, 0x5u)) {
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        hcq_ctx_seed(tx_ctx, 11 + r);
        T_OK(causal_fn(tx_ctx, &x, 1, e, 3, NULL));
        const int64_t n[3] = {b * s * s, b * s * SD, b * s * SD};
        for (int k = 0; k < 3; k++) {
            tx_read(o[k], got, n[k]);
            tx_read(e[k], want, n[k]);
            char msg[96];
            snprintf(msg, sizeof msg, "(%lld, %lld) %s", (long long)b, (long long)s, k == 0 ? "causal softmax" : k == 1 ? "dropout" : "x + rand");
            if (k == 0) {
                tx_close(got, want, n[k], 1e-5, 1e-6, msg);
                continue;
            }
            for (int64_t q = 0; q < n[k]; q++) cr_assert(got[q] == want[q], "%s, element %lld: %.9g, eagerly %.9g", msg, (long long)q, got[q], want[q]);
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
}

/* The backward pass over both variables: the gradients of causal
 * attention's mean with respect to its weights reduce over the batch and
 * the sequence; as the eager backward pass gives them. */
static hcq_status attn_grad_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)nin, (void)nout;
    seqm *m = user;
    hcq_tensor *x = in[0];
    int64_t s = hcq_tensor_dim(x, 1);
    hcq_tensor *i = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, (double)s, 1), HCQ_SHAPE(s, 1));
    hcq_tensor *jj = hcq_reshape(hcq_arange(ctx, HCQ_I32, 0, (double)s, 1), HCQ_SHAPE(1, s));
    hcq_tensor *q = hcq_matmul(x, m->wq), *k = hcq_matmul(x, m->wk), *v = hcq_matmul(x, m->w);
    hcq_tensor *sc = hcq_mul_s(hcq_matmul(q, hcq_transpose(k, -1, -2)), 0.5);
    hcq_tensor *a = hcq_matmul(hcq_softmax(hcq_where(hcq_ge(i, jj), sc, hcq_scalar(ctx, -1e30)), -1), v);
    hcq_tensor *loss = hcq_mean(hcq_mul(a, a), HCQ_AXES(0, 1, 2), false);
    hcq_status st = loss ? hcq_backward(loss) : hcq_error_status();
    if (st) return st;
    out[0] = loss;
    out[1] = hcq_grad(m->wq);
    out[2] = hcq_grad(m->wk);
    out[3] = hcq_grad(m->w);
    for (int n = 1; n < 4; n++)
        if (!out[n]) return hcq_error_status();
    st = hcq_realize_all(out, 4); /* before the gradients are dropped for the next call */
    for (int n = 0; n < 3 && !st; n++) st = hcq_zero_grad(n == 0 ? m->wq : n == 1 ? m->wk : m->w);
    return st;
}

Test(api_tensor_symdim, gradients_over_batch_and_sequence)
{
    static const int64_t sizes[][2] = {{3, 5}, {2, 7}, {5, 9}};
    seqm m = {tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 1, NULL), tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 2, NULL),
              tx_rand(HCQ_F32, TX_SHAPE(SD, SE), -0.5, 0.5, 3, NULL), NULL};
    T_OK(hcq_realize_all((hcq_tensor *[]){m.w, m.wq, m.wk}, 3));
    T_OK(hcq_requires_grad(m.w, true));
    T_OK(hcq_requires_grad(m.wq, true));
    T_OK(hcq_requires_grad(m.wk, true));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, attn_grad_fn, &m));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 6));
    T_OK(hcq_jit_dim(j, 0, 1, "seq", 1, 10));
    double got[SD * SE], want[SD * SE];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r][0], s = sizes[r][1];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, s, SD), -1, 1, 90 + (uint32_t)r, NULL), *o[4], *e[4];
        T_OK(hcq_realize(x));
        T_OK(hcq_jit_run(j, &x, 1, o, 4));
        if (!eager_at(r, 0x4u)) {
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        T_OK(attn_grad_fn(tx_ctx, &x, 1, e, 4, &m));
        for (int k = 0; k < 4; k++) {
            int64_t n = k ? SD * SE : 1;
            tx_read(o[k], got, n);
            tx_read(e[k], want, n);
            char msg[96];
            snprintf(msg, sizeof msg, "(%lld, %lld) %s", (long long)b, (long long)s, k ? "a weight's gradient" : "loss");
            tx_close(got, want, n, 1e-4, 1e-6, msg);
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
}

/* A convolution over a variable batch: on CPU-style targets a matrix
 * product of the windows (im2col) whose matrix keeps the batch a dim of
 * its own; its gradients too. As the eager ops give them. */
typedef struct convm {
    hcq_tensor *w, *bias;
} convm;

static hcq_status conv_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    convm *m = user;
    hcq_tensor *y = hcq_relu(hcq_conv2d(in[0], m->w, m->bias, &(hcq_conv2d_opts){{1, 1}, {1, 1}, {1, 1}, 1}));
    hcq_tensor *loss = hcq_mean(hcq_mul(y, y), HCQ_AXES(0, 1, 2, 3), false);
    hcq_status st = loss ? hcq_backward(loss) : hcq_error_status();
    if (st) return st;
    out[0] = y;
    out[1] = hcq_grad(m->w);
    if (!out[1]) return hcq_error_status();
    st = hcq_realize_all(out, 2);
    return st ? st : hcq_zero_grad(m->w);
}

Test(api_tensor_symdim, convolution_over_a_variable_batch)
{
    enum { CI = 3, CO = 8, HW = 6 };
    static const int64_t sizes[] = {3, 2, 1};
    convm m = {tx_rand(HCQ_F32, TX_SHAPE(CO, CI, 3, 3), -0.5, 0.5, 1, NULL), tx_rand(HCQ_F32, TX_SHAPE(CO), -0.1, 0.1, 2, NULL)};
    T_OK(hcq_realize_all((hcq_tensor *[]){m.w, m.bias}, 2));
    T_OK(hcq_requires_grad(m.w, true));
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, conv_fn, &m));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 8));
    static double got[5 * CO * HW * HW], want[5 * CO * HW * HW];
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t b = sizes[r];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(b, CI, HW, HW), -1, 1, 70 + (uint32_t)r, NULL), *o[2], *e[2];
        T_OK(hcq_realize(x));
        uint64_t p0 = stat_programs();
        T_OK(hcq_jit_run(j, &x, 1, o, 2));
        if (r >= 2) cr_assert_eq(stat_programs(), p0, "batch %lld: kernels compiled again", (long long)b);
        if (!eager_at(r, 0x5u)) {
            T_OK(hcq_ctx_release(tx_ctx, mark));
            continue;
        }
        T_OK(conv_fn(tx_ctx, &x, 1, e, 2, &m));
        const int64_t n[2] = {b * CO * HW * HW, CO * CI * 9};
        for (int k = 0; k < 2; k++) {
            tx_read(o[k], got, n[k]);
            tx_read(e[k], want, n[k]);
            char msg[64];
            snprintf(msg, sizeof msg, "batch %lld: %s", (long long)b, k ? "the weight's gradient" : "conv2d");
            tx_close(got, want, n[k], 1e-4, 1e-6, msg);
        }
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
}

static hcq_status sum_rows(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_sum(in[0], HCQ_AXES(1), false);
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_symdim, sizes_out_of_range_and_ones_while_tracing_are_refused)
{
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, sum_rows, NULL));
    cr_assert_eq(hcq_jit_dim(j, 0, 0, "rows", 0, 8), HCQ_EINVAL);
    cr_assert_eq(hcq_jit_dim(j, 0, 0, "rows", 5, 4), HCQ_EINVAL);
    cr_assert_eq(hcq_jit_dim(j, 0, 0, "", 1, 4), HCQ_EINVAL);
    T_OK(hcq_jit_dim(j, 0, 0, "rows", 1, 64));
    cr_assert_eq(hcq_jit_dim(j, 0, 0, "rows", 1, 64), HCQ_EINVAL, "declared twice");
    hcq_jit *k = T_NONNULL(hcq_jit_create(tx_ctx, sum_rows, NULL));
    cr_assert_eq(hcq_jit_dim(k, 0, 0, "rows", 1, 32), HCQ_EINVAL, "one name, one range");
    cr_assert(strstr(hcq_error_message(), "one range"), "%s", hcq_error_message());
    T_OK(hcq_jit_destroy(k));
    hcq_tensor *out;
    hcq_tensor *one = tx_rand(HCQ_F32, TX_SHAPE(1, 5), -1, 1, 1, NULL);
    cr_assert_eq(hcq_jit_run(j, &one, 1, &out, 1), HCQ_EINVAL, "a size of 1 while tracing");
    cr_assert(strstr(hcq_error_message(), "broadcasts"), "%s", hcq_error_message());
    hcq_tensor *big = tx_rand(HCQ_F32, TX_SHAPE(65, 5), -1, 1, 2, NULL);
    cr_assert_eq(hcq_jit_run(j, &big, 1, &out, 1), HCQ_EINVAL, "65 rows: out of range");
    cr_assert(strstr(hcq_error_message(), "outside the range of 'rows', [1, 64]"), "%s", hcq_error_message());
    for (int r = 0; r < 4; r++) {
        double x[7 * 5], got[7];
        int64_t rows = r == 3 ? 1 : 3 + 2 * r; /* 1 only once captured */
        hcq_tensor *t = tx_rand(HCQ_F32, TX_SHAPE(rows, 5), -1, 1, 3 + (uint32_t)r, x);
        T_OK(hcq_jit_run(j, &t, 1, &out, 1));
        tx_read(out, got, rows);
        for (int i = 0; i < rows; i++) {
            double w = 0;
            for (int c = 0; c < 5; c++) w += x[i * 5 + c];
            cr_assert(fabs(got[i] - w) < 1e-5, "run %d row %d: %g, want %g", r, i, got[i], w);
        }
    }
    cr_assert_eq(hcq_jit_run(j, &big, 1, &out, 1), HCQ_EINVAL, "out of range on a replay too");
    hcq_tensor *wide = tx_rand(HCQ_F32, TX_SHAPE(4, 6), -1, 1, 9, NULL);
    cr_assert_eq(hcq_jit_run(j, &wide, 1, &out, 1), HCQ_EINVAL, "a fixed dim changed");
    cr_assert_eq(hcq_jit_dim(j, 0, 1, "cols", 1, 8), HCQ_ESTATE, "declared after the first run");
    T_OK(hcq_jit_destroy(j));
}

/* what cannot follow the variable's value: HCQ_ENOTSUP from the op or
 * the kernel, naming the variable dim */
static hcq_status split_rows(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_reshape(in[0], HCQ_SHAPE(2, -1, 5)); /* the variable rows split in two */
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status fixed_meets_variable(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    out[0] = hcq_add(in[0], user); /* a (4, 5) tensor in memory: its size is its own */
    return out[0] ? HCQ_OK : hcq_error_status();
}

static hcq_status merged_reshape(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout, (void)user;
    out[0] = hcq_reshape(hcq_transpose(in[0], 0, 1), HCQ_SHAPE(-1)); /* the variable dim inside a fixed one */
    return out[0] ? HCQ_OK : hcq_error_status();
}

Test(api_tensor_symdim, what_is_not_supported_says_so)
{
    hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(4, 5), -1, 1, 1, NULL), *out, *fixed = tx_rand(HCQ_F32, TX_SHAPE(4, 5), -1, 1, 2, NULL);
    T_OK(hcq_realize(fixed));
    /* a split whose -1 is not where the variable goes, a fixed size in
     * memory meeting the variable, a merge with the variable inside a
     * fixed dim (its index would divide by the value) */
    hcq_jit_fn fns[3] = {split_rows, fixed_meets_variable, merged_reshape};
    const char *want[3] = {"the -1 (dim 1) is a fixed size", "a fixed 4", "merges or splits"};
    for (int f = 0; f < 3; f++) {
        hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, fns[f], fixed));
        T_OK(hcq_jit_dim(j, 0, 0, "n", 1, 64));
        cr_assert_eq(hcq_jit_run(j, &x, 1, &out, 1), HCQ_ENOTSUP, "case %d: %s", f, hcq_error_message());
        cr_assert(strstr(hcq_error_message(), want[f]), "%s", hcq_error_message());
        T_OK(hcq_jit_destroy(j));
    }
}

/* Training with a variable batch: forward, backward (the gradients'
 * products reduce over the batch) and Adam in place, captured once; every
 * step's loss and the weights after it agree with the same steps run
 * eagerly on a copy of the model (up to the order of sums; each size's
 * eager kernels are compiled apart, so few sizes). */
typedef struct net {
    hcq_tensor *w1, *b1, *w2, *b2;
    hcq_params *p;
    hcq_optim *o;
} net;

static void net_make(net *m)
{
    hcq_ctx_seed(tx_ctx, 7);
    m->p = T_NONNULL(hcq_params_create(tx_ctx));
    m->w1 = T_NONNULL(hcq_param(m->p, "w1", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(16, F), 0, 0));
    m->b1 = T_NONNULL(hcq_param(m->p, "b1", HCQ_INIT_ZEROS, HCQ_SHAPE(16), 0, 0));
    m->w2 = T_NONNULL(hcq_param(m->p, "w2", HCQ_INIT_XAVIER_UNIFORM, HCQ_SHAPE(C, 16), 0, 0));
    m->b2 = T_NONNULL(hcq_param(m->p, "b2", HCQ_INIT_ZEROS, HCQ_SHAPE(C), 0, 0));
    m->o = T_NONNULL(hcq_adam(m->p, 1e-2, 0.9, 0.999, 1e-8, 0));
}

static hcq_status net_step(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    net *m = user;
    hcq_tensor *loss = hcq_cross_entropy(hcq_linear(hcq_relu(hcq_linear(in[0], m->w1, m->b1)), m->w2, m->b2), in[1]);
    hcq_status s = hcq_backward(loss);
    if (!s) s = hcq_optim_step_with(m->o, &loss, 1);
    out[0] = loss;
    return s;
}

Test(api_tensor_symdim, training_with_a_variable_batch)
{
    static const int64_t sizes[] = {8, 32, 5}; /* traced at 8 and 32, replayed at 5 (buffers smaller than the captured) */
    net a, b;
    net_make(&a);
    net_make(&b);
    hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, net_step, &a));
    T_OK(hcq_jit_dim(j, 0, 0, "batch", 1, 128));
    T_OK(hcq_jit_dim(j, 1, 0, "batch", 1, 128));
    for (size_t r = 0; r < BASE_ARRAY_LEN(sizes); r++) {
        int64_t n = sizes[r];
        size_t mark = hcq_ctx_mark(tx_ctx);
        hcq_tensor *x = tx_rand(HCQ_F32, TX_SHAPE(n, F), -1, 1, 40 + (uint32_t)r, NULL), *y = labels(n), *lj, *le;
        T_OK(hcq_realize_all((hcq_tensor *[]){x, y}, 2));
        uint64_t p0 = stat_programs();
        T_OK(hcq_jit_run(j, (hcq_tensor *[]){x, y}, 2, &lj, 1));
        if (r > 0) cr_assert_eq(stat_programs(), p0, "batch %lld: kernels compiled again", (long long)n);
        T_OK(net_step(tx_ctx, (hcq_tensor *[]){x, y}, 2, &le, 1, &b));
        double vj, ve, wj[C * 16], we[C * 16];
        T_OK(hcq_tensor_item(lj, &vj));
        T_OK(hcq_tensor_item(le, &ve));
        cr_assert(fabs(vj - ve) <= 1e-5 * fabs(ve) + 1e-6, "batch %lld: loss %.9g through the JIT, %.9g eagerly", (long long)n, vj, ve);
        tx_read(a.w2, wj, C * 16);
        tx_read(b.w2, we, C * 16);
        tx_close(wj, we, C * 16, 1e-4, 1e-6, "the weights after the step");
        T_OK(hcq_ctx_release(tx_ctx, mark));
    }
    cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
    T_OK(hcq_jit_destroy(j));
    T_OK(hcq_optim_destroy(a.o));
    T_OK(hcq_optim_destroy(b.o));
    T_OK(hcq_params_destroy(a.p));
    T_OK(hcq_params_destroy(b.p));
}

/* the queue layer's part: a graph whose launches take their sizes from
 * variables accepts a smaller replacement for a buffer, down to what the
 * caller says the graph reaches */
Test(api_tensor_symdim, graph_buffer_need)
{
    hcq_device *dev = hcq_ctx_device(tx_ctx);
    hcq_buffer *a = T_NONNULL(hcq_buffer_alloc(dev, 4096, HCQ_MEM_DEVICE)), *small = T_NONNULL(hcq_buffer_alloc(dev, 1024, HCQ_MEM_DEVICE));
    hcq_buffer *other = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    T_OK(hcq_graph_copy(g, a, 0, a, 512, 256));
    cr_assert_eq(hcq_graph_set_buffer(g, a, small), HCQ_EINVAL, "smaller than the original");
    cr_assert_eq(hcq_graph_buffer_need(g, a, 8192), HCQ_EINVAL, "more than the buffer");
    cr_assert_eq(hcq_graph_buffer_need(g, other, 64), HCQ_EINVAL, "a buffer the graph does not use");
    T_OK(hcq_graph_buffer_need(g, a, 1024));
    T_OK(hcq_graph_set_buffer(g, a, small));
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_buffer_free(a));
    T_OK(hcq_buffer_free(small));
    T_OK(hcq_buffer_free(other));
}
