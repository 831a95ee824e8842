/* Tensor cores (the `tc` choice, tensor/tc.c): f16 and bf16 matmuls and
 * convolutions as the IR's matrix multiply-accumulate.
 *
 *   - on a GPU target with a kind for the inputs (hcq_target_mma_kinds) a
 *     half matmul-like kernel whose M, N and K each fill the kind's block
 *     takes tc by default; CPU-style targets never do (their plans are
 *     unchanged), and a forced tc list is refused there;
 *   - tc plans forced by hand (square, ragged in M, N and K, batched,
 *     x @ w^T; blocks per warp and warps per group both ways; staged
 *     through local memory or not) give exactly
 *     the host's values: the MMA model sums each product with one fused
 *     multiply-add in k order from +0, as the host reference and the
 *     scalar plan do, so the comparison is bit for bit; and exactly the
 *     plain (one output per work-item) plan's;
 *   - the default stages a product of several warps a group;
 *   - the default through realize (a batch, a bias and a ReLU after the
 *     product), and a convolution (the direct form on a GPU);
 *   - lists that do not fit, f32 products, a max-reduction and the CPU are
 *     refused with a message; two tc plans are two kernels.
 * Small shapes: the mock GPUs' executors run every MMA lane by lane. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcqtest.h"
#include "plantest.h"
#include "tensor/lower.h"
#include "tensortest.h"

TestSuite(tensor_tc, .init = tx_setup, .fini = tx_teardown, .timeout = 240);


/* The target's compiler writes an MMA of kind (rendered: a target
 * whose renderer does not write MMAs yet takes no tc plan) */
static bool writes(hcq_mma_kind kind, const hcq_mma_info *in)
{
    hcq_kernel *k = T_NONNULL(hcq_kernel_create("probe"));
    hcq_ir_ref o = hcq_ir_param_buffer(k, HCQ_F32), x = hcq_ir_const_float(k, in->ab, 2.0), z = hcq_ir_const_float(k, HCQ_F32, 0.0);
    hcq_ir_ref d = hcq_ir_mma(k, kind, hcq_ir_vsplat(k, x, in->a_lanes), hcq_ir_vsplat(k, x, in->b_lanes), hcq_ir_vsplat(k, z, in->c_lanes));
    hcq_ir_store(k, o, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), hcq_ir_vget(k, d, 1));
    char *src = NULL;
    bool ok = hcq_render(k, tx_ctx->props.target, &src) == HCQ_OK;
    free(src);
    hcq_kernel_destroy(k);
    return ok;
}

/* The target's first kind for inputs of dtype dt (false: it has none, or
 * its compiler does not write it yet). */
static bool tc_info(hcq_dtype dt, hcq_mma_info *out)
{
    hcq_mma_kind kinds[HCQ_MMA_KINDS];
    unsigned n = hcq_target_mma_kinds(tx_ctx->props.target, kinds, HCQ_MMA_KINDS);
    for (unsigned i = 0; i < n && i < HCQ_MMA_KINDS; i++)
        if (!hcq_mma_info_get(kinds[i], out) && out->ab == dt) return writes(kinds[i], out);
    return false;
}

static void need_tc(hcq_dtype dt, hcq_mma_info *in)
{
    if (!tc_info(dt, in))
        cr_skip_test("%s (target %s) has no matrix-multiply-accumulate kind for %s inputs", tx_ctx->props.id, tx_ctx->props.target,
                     hcq_dtype_name(dt));
}

/* a tc list: bm x bn blocks per warp along dims dm x dn, wm x wn warps */
static tt_opts tc_list(const hcq_mma_info *in, int dm, int64_t bm, int dn, int64_t bn, int64_t wm, int64_t wn)
{
    return tp_list(4, TP_OPT(TT_OPT_LOCAL, wm * wn * in->warp), TP_TCM(dm, bm), TP_TCN(dn, bn), TP_TCW(wm));
}

/* ... staged through local memory in slices of sk k-steps */
static tt_opts tc_staged(const hcq_mma_info *in, int dm, int64_t bm, int dn, int64_t bn, int64_t wm, int64_t wn, int64_t sk)
{
    tt_opts o = tc_list(in, dm, bm, dn, bn, wm, wn);
    o.o[o.n++] = TP_TCS(sk);
    return o;
}

static bool has_tc(const tt_opts *o)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (o->o[i].kind == TT_OPT_TC) return true;
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

Test(tensor_tc, gpu_default_takes_tc_cpu_default_does_not)
{
    static const hcq_dtype dts[] = {HCQ_F16, HCQ_BF16};
    for (int t = 0; t < 2; t++) {
        tp_mm m = tp_make_mm(dts[t], 0, 32, 32, 32, 11 + (uint32_t)t, false);
        float *got = malloc(sizeof *got * (size_t)m.count);
        tt_lowered meta;
        T_OK(tp_run_plan(tx_ctx, m.n, NULL, got, &meta, NULL));
        char words[256];
        tt_opts_format(&meta.opts, words, sizeof words);
        hcq_mma_info in;
        if (tc_info(dts[t], &in)) /* (HCQ_DEBUG=1 prints these words) */
            cr_assert(has_tc(&meta.opts) && strstr(words, "tc.m(d0,") && strstr(words, "tc.n(d1,") && strstr(meta.name, "_tc"),
                      "%s: a %s matmul's default takes the tensor cores (%s): %s, kernel %s", tx_ctx->props.id, hcq_dtype_name(dts[t]),
                      in.name, words, meta.name);
        else
            cr_assert(!has_tc(&meta.opts), "%s: no kind, no tc: %s", tx_ctx->props.id, words);
        tp_check_exact(&m, got, words);
        /* the default's list is one the rules take as given (the search
         * starts from it; a plan cache entry holds it): the same kernel */
        tt_lowered again;
        cr_assert_eq(tp_run_plan(tx_ctx, m.n, &meta.opts, got, &again, NULL), HCQ_OK, "%s: the default list %s: %s", tx_ctx->props.id,
                     words, hcq_error_message());
        cr_assert_str_eq(again.name, meta.name, "%s: the default list %s lowers to the default's kernel", tx_ctx->props.id, words);
        tp_check_exact(&m, got, words);
        free(got);
        free(m.want);
    }
}

/* A product big enough for 2 x 2 warps a group (the device pinned to one
 * compute unit, so the default does not spread the work over fewer warps):
 * the default stages it (tc.smem(1)), exactly. */
Test(tensor_tc, default_stages_several_warps)
{
    hcq_mma_info in;
    need_tc(HCQ_F16, &in);
    tp_mm m = tp_make_mm(HCQ_F16, 0, 64, 48, 64, 17, false);
    float *got = malloc(sizeof *got * (size_t)m.count);
    uint32_t cus = tx_ctx->props.compute_units;
    tx_ctx->props.compute_units = 1;
    tt_lowered meta;
    hcq_status st = tp_run_plan(tx_ctx, m.n, NULL, got, &meta, NULL);
    tx_ctx->props.compute_units = cus;
    T_OK(st);
    char words[256];
    tt_opts_format(&meta.opts, words, sizeof words);
    cr_assert(strstr(words, "tc.wm(2)") && strstr(words, "tc.smem(1)"), "%s: %s", tx_ctx->props.id, words);
    tp_check_exact(&m, got, words);
    free(got);
    free(m.want);
}

Test(tensor_tc, forced_plans_are_exact_and_equal_the_plain_plan)
{
    hcq_mma_info in;
    need_tc(HCQ_F16, &in);
    tp_mm sq = tp_make_mm(HCQ_F16, 0, 32, 32, 32, 21, false);
    /* ragged: no dim a multiple of any kind's block */
    tp_mm rg = tp_make_mm(HCQ_F16, 0, 19, 37, 21, 22, false);
    tp_mm bt = tp_make_mm(HCQ_F16, 2, 17, 20, 24, 23, false); /* d1 rows, d2 columns, d0 the batch */
    tp_mm lt = tp_make_mm(HCQ_F16, 0, 20, 36, 24, 24, true);  /* x @ w^T: both factors contiguous along k */
    float *got = malloc(sizeof *got * (size_t)(sq.count > bt.count ? sq.count : bt.count));
    float *plain = malloc(sizeof *plain * (size_t)sq.count);
    run_exact(&sq, tc_list(&in, 0, 1, 1, 1, 1, 1), got);
    /* the plain plan (one output per work-item, the scalar fma loop): the same bits */
    T_OK(tp_run_plan(tx_ctx, sq.n, &(tt_opts){1, {TP_OPT(TT_OPT_LOCAL, 64)}}, plain, NULL, NULL));
    cr_assert(!memcmp(got, plain, sizeof *got * (size_t)sq.count), "%s: the tc plan's bits are the plain plan's", tx_ctx->props.id);
    run_exact(&rg, tc_list(&in, 0, 1, 1, 1, 1, 1), got);
    run_exact(&bt, tc_list(&in, 1, 1, 2, 2, 1, 1), got);
    run_exact(&lt, tc_list(&in, 0, 1, 1, 1, 1, 2), got);
    /* the dims the other way round: rows of the output as the MMA's n */
    run_exact(&sq, tc_list(&in, 1, 1, 0, 1, 1, 1), got);
    /* several blocks and warps, staged through local memory (tc.smem) or
     * not: slices past the end of k (37) and groups and warps past both
     * edges; x @ w^T's B copied along k */
    run_exact(&sq, tc_staged(&in, 0, 1, 1, 2, 2, 1, 1), got);
    run_exact(&rg, tc_list(&in, 0, 2, 1, 1, 2, 1), got);
    run_exact(&rg, tc_staged(&in, 0, 1, 1, 1, 2, 2, 2), got);
    run_exact(&lt, tc_staged(&in, 0, 2, 1, 1, 1, 2, 1), got);
    /* smaller than one block each way (M 5, K 7): forced, most of the MMA
     * is padding, still exact; the default leaves it to the scalar plan */
    tp_mm tiny = tp_make_mm(HCQ_F16, 0, 5, 7, 6, 25, false);
    run_exact(&tiny, tc_list(&in, 0, 1, 1, 1, 1, 1), got);
    tt_lowered meta;
    T_OK(tp_run_plan(tx_ctx, tiny.n, NULL, got, &meta, NULL));
    cr_assert(!has_tc(&meta.opts), "%s: %s", tx_ctx->props.id, meta.name);
    tp_check_exact(&tiny, got, meta.name);
    free(tiny.want);
    free(got);
    free(plain);
    free(sq.want);
    free(rg.want);
    free(bt.want);
    free(lt.want);
}

Test(tensor_tc, bf16_forced_plans_are_exact)
{
    hcq_mma_info in;
    need_tc(HCQ_BF16, &in);
    tp_mm sq = tp_make_mm(HCQ_BF16, 0, 32, 32, 32, 31, false);
    tp_mm rg = tp_make_mm(HCQ_BF16, 2, 19, 37, 21, 32, false);
    float *got = malloc(sizeof *got * (size_t)(rg.count > sq.count ? rg.count : sq.count));
    run_exact(&sq, tc_list(&in, 0, 2, 1, 1, 1, 1), got);
    run_exact(&rg, tc_list(&in, 1, 1, 2, 1, 1, 2), got);
    run_exact(&rg, tc_staged(&in, 1, 1, 2, 1, 2, 1, 2), got);
    free(got);
    free(sq.want);
    free(rg.want);
}

/* Every kind the target writes for f16 inputs (tc.kind(i): gfx90a and
 * gfx942 have MFMA's 32 x 32 x 8 beside 16 x 16 x 16), ragged. */
Test(tensor_tc, each_kind_is_exact)
{
    hcq_mma_info first;
    need_tc(HCQ_F16, &first);
    hcq_mma_kind kinds[HCQ_MMA_KINDS];
    unsigned n = hcq_target_mma_kinds(tx_ctx->props.target, kinds, HCQ_MMA_KINDS), i16 = 0;
    tp_mm rg = tp_make_mm(HCQ_F16, 0, 19, 37, 21, 41, false); /* (the first kind's kernel is forced_plans' own) */
    float *got = malloc(sizeof *got * (size_t)rg.count);
    for (unsigned i = 0; i < n && i < HCQ_MMA_KINDS; i++) {
        hcq_mma_info in;
        if (hcq_mma_info_get(kinds[i], &in) || in.ab != HCQ_F16 || !writes(kinds[i], &in)) continue;
        tt_opts o = tc_list(&in, 0, 1, 1, 1, 1, 1);
        o.o[o.n++] = TP_TCK(i16);
        tt_lowered meta;
        T_OK(tp_run_plan(tx_ctx, rg.n, &o, got, &meta, NULL));
        tp_check_exact(&rg, got, meta.name);
        i16++;
    }
    cr_assert_geq(i16, 1);
    /* one past the last: refused */
    tt_opts o = tc_list(&first, 0, 1, 1, 1, 1, 1);
    o.o[o.n++] = TP_TCK(i16);
    cr_assert_eq(tp_run_plan(tx_ctx, rg.n, &o, got, NULL, NULL), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "tc.kind"), "%s", hcq_error_message());
    free(got);
    free(rg.want);
}

/* Through realize: a batched product, then a bias and a ReLU fused after it
 * (emitted at the D fragments' outputs), on the default plan. */
Test(tensor_tc, default_matmul_with_epilogue_through_realize)
{
    static const hcq_dtype dts[] = {HCQ_F16, HCQ_BF16};
    for (int t = 0; t < 2; t++) {
        hcq_dtype dt = dts[t];
        int64_t B = 2, M = 33, K = 40, N = 36;
        double *a = malloc(sizeof *a * (size_t)(B * M * K)), *b = malloc(sizeof *b * (size_t)(B * K * N)), bias[36];
        double *got = malloc(sizeof *got * (size_t)(B * M * N)), *want = malloc(sizeof *want * (size_t)(B * M * N));
        hcq_tensor *ta = tx_rand(dt, TX_SHAPE(B, M, K), -1, 1, 50 + (uint32_t)t, a);
        hcq_tensor *tb = tx_rand(dt, TX_SHAPE(B, K, N), -1, 1, 60 + (uint32_t)t, b);
        hcq_tensor *tbias = tx_rand(dt, TX_SHAPE(N), -1, 1, 70 + (uint32_t)t, bias);
        for (int64_t z = 0; z < B; z++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    float s = 0;
                    for (int64_t k = 0; k < K; k++) s = fmaf((float)a[(z * M + i) * K + k], (float)b[(z * K + k) * N + j], s);
                    double r = tx_round(dt, tx_round(dt, s) + bias[j]); /* the product rounds to dt, then the add in dt */
                    want[(z * M + i) * N + j] = r > 0 ? r : 0;
                }
        tx_read(hcq_relu(hcq_add(hcq_matmul(ta, tb), tbias)), got, B * M * N);
        for (int64_t i = 0; i < B * M * N; i++)
            cr_assert(got[i] == want[i], "%s %s: element %lld is %.9g, want %.9g", tx_ctx->props.id, hcq_dtype_name(dt), (long long)i,
                      got[i], want[i]);
        hcq_mma_info in;
        bool on = false;
        for (uint32_t i = 0; i < tx_ctx->kcap; i++) on = on || (tx_ctx->kern[i].hash && strstr(tx_ctx->kern[i].name, "_tc"));
        cr_assert_eq(on, tc_info(dt, &in), "%s %s: the product runs on the tensor cores exactly where the target has a kind",
                     tx_ctx->props.id, hcq_dtype_name(dt));
        free(a);
        free(b);
        free(got);
        free(want);
    }
}

/* An f16 convolution: on a GPU the direct form (a window of x times w over
 * C x KH x KW, reached from the output through a reshape) as MMAs (dims:
 * the output channels as m, the output columns as n, the batch and rows a
 * batch of warps); im2col + matmul on the CPU-style devices. Exact against
 * the host's fma chain over (c, kh, kw) in order (padded: 0 past the
 * edges, which adds nothing). */
static void conv_case(int pad)
{
    int64_t N = 2, C = 4, H = 10, W = 18, O = 32, KH = 3, KW = 3, OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
    double *x = malloc(sizeof *x * (size_t)(N * C * H * W)), *w = malloc(sizeof *w * (size_t)(O * C * KH * KW));
    double *got = malloc(sizeof *got * (size_t)(N * O * OH * OW)), *want = malloc(sizeof *want * (size_t)(N * O * OH * OW));
    hcq_tensor *tx = tx_rand(HCQ_F16, TX_SHAPE(N, C, H, W), -1, 1, 80, x), *tw = tx_rand(HCQ_F16, TX_SHAPE(O, C, KH, KW), -1, 1, 81, w);
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t i = 0; i < OH; i++)
                for (int64_t j = 0; j < OW; j++) {
                    float s = 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t p = 0; p < KH; p++)
                            for (int64_t q = 0; q < KW; q++) {
                                int64_t yy = i + p - pad, zz = j + q - pad; /* (a padded element: fma(0, w, s) = s) */
                                if (yy >= 0 && yy < H && zz >= 0 && zz < W)
                                    s = fmaf((float)x[((n * C + c) * H + yy) * W + zz], (float)w[((o * C + c) * KH + p) * KW + q], s);
                            }
                    want[((n * O + o) * OH + i) * OW + j] = tx_round(HCQ_F16, s);
                }
    hcq_conv2d_opts co = {.padding = {pad, pad}};
    tx_read(hcq_conv2d(tx, tw, NULL, &co), got, N * O * OH * OW);
    hcq_mma_info in;
    if (tc_info(HCQ_F16, &in)) { /* (CPU-style: im2col's matrix product, not this order: within rounding) */
        tx_same(got, want, N * O * OH * OW, "conv2d on a GPU");
        bool tc = false; /* the kernel cache: a reduction of 36 on the tensor cores */
        for (uint32_t i = 0; i < tx_ctx->kcap; i++)
            tc = tc || (tx_ctx->kern[i].hash && strstr(tx_ctx->kern[i].name, "_r36") && strstr(tx_ctx->kern[i].name, "_tc"));
        /* padded too: the window's mask (a view above the f32 cast,
         * padding with 0, which f16 holds) gates the fragment loads */
        bool fills = O >= in.m && OW >= in.n && C * KH * KW >= in.k;
        cr_assert_eq(tc, fills, "%s: the convolution takes tc by default exactly where it fills a %s block", tx_ctx->props.id, in.name);
    } else {
        tx_close(got, want, N * O * OH * OW, 1e-2, 1e-2, "conv2d");
    }
    free(x);
    free(w);
    free(got);
    free(want);
}

Test(tensor_tc, convolution) { conv_case(0); }
Test(tensor_tc, convolution_padded) { conv_case(1); }

static void refused(const tp_mm *m, tt_opts o, hcq_status want, const char *says)
{
    float *got = malloc(sizeof *got * (size_t)m->count);
    char words[256];
    tt_opts_format(&o, words, sizeof words);
    hcq_status s = tp_run_plan(tx_ctx, m->n, &o, got, NULL, NULL);
    cr_assert_eq(s, want, "%s: plan %s: %d (%s)", tx_ctx->props.id, words, s, hcq_error_message());
    cr_assert(strstr(hcq_error_message(), says), "%s: plan %s: %s", tx_ctx->props.id, words, hcq_error_message());
    free(got);
}

Test(tensor_tc, refusals)
{
    tp_mm h = tp_make_mm(HCQ_F16, 0, 32, 32, 32, 90, false);
    hcq_mma_info in;
    if (!tc_info(HCQ_F16, &in)) { /* the CPU-style targets (and GPUs without matrix units) */
        hcq_mma_info any = {.warp = 32};
        refused(&h, tc_list(&any, 0, 1, 1, 1, 1, 1), HCQ_ENOTSUP,
                tx_ctx->cpu_style ? "no matrix-multiply-accumulate" : "tc: "); /* (or: its compiler does not write it yet) */
        free(h.want);
        return;
    }
    /* an f32 product: no kind takes it */
    tp_mm f = tp_make_mm(HCQ_F32, 0, 32, 32, 32, 91, false);
    refused(&f, tc_list(&in, 0, 1, 1, 1, 1, 1), HCQ_EINVAL, "not of f16 or bf16 values");
    free(f.want);
    /* a max-reduction of halfs: not a sum of products */
    double x[16 * 32];
    hcq_tensor *tx = tx_rand(HCQ_F16, TX_SHAPE(16, 32), -1, 1, 92, x);
    T_OK(hcq_realize(tx));
    tt_node *mx = hcq_cast(hcq_max(tx, HCQ_AXES(1), true), HCQ_F32)->n;
    while (mx->op == TT_VIEW) mx = mx->src[0];
    tp_mm s = {.n = mx, .count = 16};
    refused(&s, tc_list(&in, 0, 1, 1, 1, 1, 1), HCQ_EINVAL, "not a sum of products");
    /* lists that do not fit */
    refused(&h, tp_list(3, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(1, 1)), HCQ_EINVAL, "together");
    refused(&h, tp_list(4, TP_OPT(TT_OPT_LOCAL, in.warp + 1), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(1)), HCQ_EINVAL, "multiple of tc.wm");
    refused(&h, tp_list(4, TP_OPT(TT_OPT_LOCAL, 2 * in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(4)), HCQ_EINVAL, "multiple of tc.wm");
    refused(&h, tp_list(4, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(0, 1), TP_TCW(1)), HCQ_EINVAL, "two different dims");
    refused(&h, tp_list(4, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 9), TP_TCN(1, 1), TP_TCW(1)), HCQ_EINVAL, "1 to 8 blocks");
    refused(&h, tp_list(4, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 8), TP_TCN(1, 8), TP_TCW(1)), HCQ_EINVAL, "accumulators per work-item");
    refused(&h, tp_list(5, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(1), TP_OPT(TT_OPT_UNROLL, 2)), HCQ_EINVAL, "takes only local");
    refused(&h, tp_list(5, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(1), TP_VEC(1, 2)), HCQ_EINVAL, "takes only local");
    refused(&h, tp_list(5, TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(1), TP_TCW(1)), HCQ_EINVAL, "each once");
    refused(&h, tc_staged(&in, 0, 1, 1, 1, 1, 1, 9), HCQ_EINVAL, "slices of 0");
    refused(&h, tc_staged(&in, 0, 8, 1, 1, 1, 1, 4), HCQ_EINVAL, "copies per work-item");
    free(h.want);
}

/* Two tc plans are two kernels (names and code), as every plan is: the
 * kernel caches key on the kernel, which the plan changes. */
Test(tensor_tc, plans_are_different_kernels)
{
    hcq_mma_info in;
    need_tc(HCQ_F16, &in);
    tp_mm m = tp_make_mm(HCQ_F16, 0, 32, 32, 32, 95, false);
    float *got = malloc(sizeof *got * (size_t)m.count);
    tt_lowered a, b;
    T_OK(tp_run_plan(tx_ctx, m.n, &(tt_opts){4, {TP_OPT(TT_OPT_LOCAL, in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(1)}}, got, &a, NULL));
    T_OK(tp_run_plan(tx_ctx, m.n, &(tt_opts){4, {TP_OPT(TT_OPT_LOCAL, 2 * in.warp), TP_TCM(0, 1), TP_TCN(1, 1), TP_TCW(2)}}, got, &b, NULL));
    cr_assert(strcmp(a.name, b.name), "%s and %s", a.name, b.name);
    tp_check_exact(&m, got, b.name);
    free(got);
    free(m.want);
}
