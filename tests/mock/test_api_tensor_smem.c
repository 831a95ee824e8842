/* Shared-memory staging of a register tile (the `smem` choice, tensor/plan.c
 * and emit.c's em_reduce_smem).
 *
 *   - on the GPU devices a matmul-like kernel's default plan stages its
 *     operands (smem in the choice list); on the CPU-style ones it does not
 *     (their default plans are today's);
 *   - smem plans forced by hand (square, ragged blocks and slices, rows
 *     padded, batched; f32, f16 and bf16 inputs) give exactly the host's
 *     values: each output sums its products in the reduction's order with
 *     one fused multiply-add each, as the host reference does, so the
 *     comparison is bit for bit; and exactly the plain (unstaged) tile's;
 *   - a convolution (im2col + matmul) takes the smem plan on a GPU and is
 *     right;
 *   - smem lists that do not fit are refused with a message.
 * Runs on every device it is given: the GPU mocks execute the machine code
 * (shared memory and barriers included), CPU and CPU+ir run the IR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcqtest.h"
#include "tensor/lower.h"
#include "plantest.h"
#include "tensortest.h"

TestSuite(tensor_smem, .init = tx_setup, .fini = tx_teardown, .timeout = 240);


/* The compiled CPU target builds each kernel with clang (~1 s of CPU on a
 * cold cache) and never takes smem by default: the suite runs a few of its
 * plans there, all of them elsewhere (CPU+ir, the GPU mocks). */
static bool few(void) { return !strcmp(tx_ctx->props.target, "cpu"); }

static bool has_smem(const tt_opts *o)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (o->o[i].kind == TT_OPT_SMEM) return true;
    return false;
}


/* lowers m with list o (it must apply), checks it exactly */
static void run_exact(const tp_mm *m, tt_opts o, float *got)
{
    char words[256];
    tt_opts_format(&o, words, sizeof words);
    memset(got, 0xff, sizeof *got * (size_t)m->count);
    hcq_status s = tp_run_plan(tx_ctx, m->n, &o, got, NULL, NULL);
    cr_assert_eq(s, HCQ_OK, "%s: plan %s: %s", tx_ctx->props.id, words, hcq_error_message());
    tp_check_exact(m, got, words);
}

Test(tensor_smem, gpu_default_stages_cpu_default_does_not)
{
    tp_mm m = tp_make_mm(HCQ_F32, 0, 64, 48, 64, 11, false);
    float *got = malloc(sizeof *got * (size_t)m.count);
    tt_lowered meta;
    T_OK(tp_run_plan(tx_ctx, m.n, NULL, got, &meta, NULL));
    tt_opts used = meta.opts;
    char words[256];
    tt_opts_format(&used, words, sizeof words);
    if (tx_ctx->cpu_style)
        cr_assert(!has_smem(&used), "%s: a CPU-style default takes no smem: %s", tx_ctx->props.id, words);
    else /* (HCQ_DEBUG=1 prints these words) */
        cr_assert(has_smem(&used) && strstr(words, "smem(k16,c"), "%s: a GPU matmul's default stages through shared memory: %s",
                  tx_ctx->props.id, words);
    tp_check_exact(&m, got, words);
    free(got);
    free(m.want);
}

Test(tensor_smem, forced_plans_are_exact)
{
    /* square: 4 x 4 tiles in 4 x 4 blocks (16 x 16), slices of 8 */
    tp_mm sq = tp_make_mm(HCQ_F32, 0, 32, 32, 32, 21, false);
    /* ragged: 33 rows padded to 4-row tiles, 50 columns in 2-column
     * tiles; blocks of 4 x 8 tiles (16 x 16) past both edges; slices of
     * 16 past the end of 37 */
    tp_mm rg = tp_make_mm(HCQ_F32, 0, 33, 37, 50, 22, false);
    /* batched: [2, 17, 20] @ [2, 20, 24] (d1 rows, d2 columns) */
    tp_mm bt = tp_make_mm(HCQ_F32, 2, 17, 20, 24, 23, false);
    int64_t most = rg.count > bt.count ? rg.count : bt.count;
    float *got = malloc(sizeof *got * (size_t)(most > sq.count ? most : sq.count));
    bool all = !few();
    if (all) {
        run_exact(&sq, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 16), TP_SMEM(8, 4)), got);
        run_exact(&sq, tp_list(4, TP_UP(0, 0, 2), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 24), TP_SMEM(5, 8)), got); /* 3 x 8 tiles; 5 does not divide 32 */
        run_exact(&sq, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 16), TP_SMEM(32, 4)), got); /* one slice */
        run_exact(&sq, tp_list(3, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4)), got);                /* the plain tile: the same values */
    }
    /* several warps / waves a group (the barriers matter): 2 x 2 tiles in
     * 8 x 8 and 16 x 8 blocks (the second past the edge) */
    if (all) run_exact(&sq, tp_list(4, TP_UP(0, 0, 2), TP_UP(1, 1, 2), TP_OPT(TT_OPT_LOCAL, 64), TP_SMEM(4, 8)), got);
    run_exact(&sq, tp_list(4, TP_UP(0, 0, 2), TP_UP(1, 1, 2), TP_OPT(TT_OPT_LOCAL, 128), TP_SMEM(8, 8)), got);
    run_exact(&rg, tp_list(5, TP_UP(0, 0, 4), TP_PAD(0, 4), TP_UP(1, 1, 2), TP_OPT(TT_OPT_LOCAL, 32), TP_SMEM(16, 8)), got);
    if (all) run_exact(&rg, tp_list(5, TP_UP(0, 0, 5), TP_PAD(0, 5), TP_UP(1, 1, 10), TP_OPT(TT_OPT_LOCAL, 6), TP_SMEM(4, 3)), got);
    run_exact(&bt, tp_list(5, TP_UP(0, 1, 2), TP_PAD(1, 2), TP_UP(1, 2, 4), TP_OPT(TT_OPT_LOCAL, 12), TP_SMEM(8, 3)), got);
    if (all) run_exact(&bt, tp_list(5, TP_UP(0, 1, 4), TP_PAD(1, 4), TP_UP(1, 2, 8), TP_OPT(TT_OPT_LOCAL, 8), TP_SMEM(16, 2)), got);
    /* x @ w^T: both factors copied along the reduction */
    tp_mm lt = tp_make_mm(HCQ_F32, 0, 20, 36, 24, 24, true);
    run_exact(&lt, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 6), TP_SMEM(16, 3)), got);
    free(lt.want);
    /* halfs: the f32 reduction of the cast inputs, rounded once */
    static const hcq_dtype halfs[] = {HCQ_F16, HCQ_BF16};
    for (int h = 0; h < (all ? 2 : 1); h++) {
        tp_mm hm = tp_make_mm(halfs[h], 0, 24, 40, 32, 30 + (uint32_t)h, false);
        float *hg = malloc(sizeof *hg * (size_t)hm.count);
        run_exact(&hm, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 16), TP_SMEM(16, 4)), hg);
        if (all) run_exact(&hm, tp_list(3, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4)), hg);
        free(hg);
        free(hm.want);
    }
    free(got);
    free(sq.want);
    free(rg.want);
    free(bt.want);
}

/* The tensor API end to end on halfs and a batch: on a GPU, the kernels
 * are the smem defaults (checked above; halfs take the tensor cores
 * instead where the target writes a kind for them: test_api_tensor_tc.c);
 * here the results through realize, exact against the host. */
Test(tensor_smem, default_matmuls_through_realize)
{
    static const hcq_dtype dts[] = {HCQ_F32, HCQ_F16, HCQ_BF16};
    for (int t = 0; t < (few() ? 1 : 3); t++) {
        hcq_dtype dt = dts[t];
        int64_t B = 2, M = 32, K = 24, N = 40;
        double *a = malloc(sizeof *a * (size_t)(B * M * K)), *b = malloc(sizeof *b * (size_t)(B * K * N));
        double *got = malloc(sizeof *got * (size_t)(B * M * N)), *want = malloc(sizeof *want * (size_t)(B * M * N));
        hcq_tensor *ta = tx_rand(dt, TX_SHAPE(B, M, K), -1, 1, 50 + (uint32_t)t, a);
        hcq_tensor *tb = tx_rand(dt, TX_SHAPE(B, K, N), -1, 1, 60 + (uint32_t)t, b);
        for (int64_t z = 0; z < B; z++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    float s = 0;
                    for (int64_t k = 0; k < K; k++) s = fmaf((float)a[(z * M + i) * K + k], (float)b[(z * K + k) * N + j], s);
                    want[(z * M + i) * N + j] = tx_round(dt, s);
                }
        tx_read(hcq_matmul(ta, tb), got, B * M * N);
        for (int64_t i = 0; i < B * M * N; i++)
            cr_assert(got[i] == want[i], "%s %s: element %lld is %.9g, want %.9g", tx_ctx->props.id, hcq_dtype_name(dt), (long long)i,
                      got[i], want[i]);
        free(a);
        free(b);
        free(got);
        free(want);
    }
}

/* A convolution: on the CPU-style devices it goes through im2col and a
 * matmul (conv_im2col.c), plans unchanged; on a GPU it is the direct form,
 * a sum over (C, KH, KW) of a window of x (moving with the output pixels,
 * not the channels) times w (the other way round): a register tile whose
 * default plan stages both. Padded (pad 1), the window's index goes
 * through the pad's offset and floor divisions the tile analysis does not
 * see as affine (choose() in lower.c finds no register tile, with or
 * without smem): right, but not staged. */
static void conv_case(int pad, bool want_staged)
{
    int64_t N = 2, C = 4, H = 10, W = 10, O = 16, KH = 3, KW = 3, OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
    double *x = malloc(sizeof *x * (size_t)(N * C * H * W)), *w = malloc(sizeof *w * (size_t)(O * C * KH * KW));
    double *got = malloc(sizeof *got * (size_t)(N * O * OH * OW)), *want = malloc(sizeof *want * (size_t)(N * O * OH * OW));
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(N, C, H, W), -1, 1, 70, x), *tw = tx_rand(HCQ_F32, TX_SHAPE(O, C, KH, KW), -1, 1, 71, w);
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    double s = 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t p = 0; p < KH; p++)
                            for (int64_t q = 0; q < KW; q++) {
                                int64_t y = i + p - pad, z = j + q - pad;
                                if (y >= 0 && y < H && z >= 0 && z < W) s += x[((n * C + c) * H + y) * W + z] * w[((o * C + c) * KH + p) * KW + q];
                            }
                    want[((n * O + o) * OH + i) * OW + j] = s;
                }
    hcq_conv2d_opts co = {.padding = {pad, pad}};
    tx_read(hcq_conv2d(tx, tw, NULL, &co), got, N * O * OH * OW);
    tx_close(got, want, N * O * OH * OW, 1e-5, 1e-5, "conv2d");
    bool staged = false; /* the kernel cache: a reduction of 36 staged in slices of 16 */
    for (uint32_t i = 0; i < tx_ctx->kcap; i++)
        staged = staged || (tx_ctx->kern[i].hash && strstr(tx_ctx->kern[i].name, "_r36") && strstr(tx_ctx->kern[i].name, "_s16c"));
    if (want_staged && !tx_ctx->cpu_style) cr_assert(staged, "%s: the convolution takes the smem default", tx_ctx->props.id);
    free(x);
    free(w);
    free(got);
    free(want);
}

Test(tensor_smem, convolution) { conv_case(0, true); }
Test(tensor_smem, convolution_padded)
{
    if (few()) cr_skip_test("the compiled CPU target: the padded convolution's kernels are im2col's plain ones");
    conv_case(1, false);
}

static void refused(const tp_mm *m, tt_opts o, const char *says)
{
    float *got = malloc(sizeof *got * (size_t)m->count);
    char words[256];
    tt_opts_format(&o, words, sizeof words);
    hcq_status s = tp_run_plan(tx_ctx, m->n, &o, got, NULL, NULL);
    cr_assert_eq(s, HCQ_EINVAL, "plan %s: %d (%s)", words, s, hcq_error_message());
    cr_assert(strstr(hcq_error_message(), says), "plan %s: %s", words, hcq_error_message());
    free(got);
}

Test(tensor_smem, lists_that_do_not_fit_are_refused)
{
    tp_mm m = tp_make_mm(HCQ_F32, 0, 32, 32, 32, 80, false);
    refused(&m, tp_list(3, TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 8), TP_SMEM(8, 4)), "register tile");
    refused(&m, tp_list(3, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_SMEM(8, 4)), "multiple of the 4 column tiles");
    refused(&m, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 6), TP_SMEM(8, 4)), "multiple of the 4 column tiles");
    refused(&m, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_SMEM(0, 4)), "a slice of 1 to 64");
    refused(&m, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_SMEM(33, 4)), "at most the reduction's 32");
    refused(&m, tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_SMEM(8, 0)), "column tile");
    refused(&m, tp_list(5, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_SMEM(8, 4), TP_SMEM(8, 4)), "twice");
    refused(&m, tp_list(5, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_OPT(TT_OPT_BLOCK, 2), TP_SMEM(8, 4)), "no group, unroll or block");
    /* one 8 x 32 tile per group: 1280 copies per work-item per slice */
    refused(&m, tp_list(4, TP_UP(0, 0, 8), TP_UP(1, 1, 32), TP_OPT(TT_OPT_LOCAL, 1), TP_SMEM(32, 1)), "copies per work-item");
    free(m.want);
    /* a sum that is not of products: nothing to stage */
    double x[16 * 32];
    hcq_tensor *tx = tx_rand(HCQ_F32, TX_SHAPE(16, 32), -1, 1, 81, x);
    T_OK(hcq_realize(tx));
    tp_mm s = {.n = hcq_sum(tx, HCQ_AXES(1), true)->n, .count = 16};
    refused(&s, tp_list(3, TP_UP(1, 0, 4), TP_OPT(TT_OPT_LOCAL, 4), TP_SMEM(8, 4)), "not a sum of products");
}
