/* Vector loads and stores (the `vector` choice: tensor/plan.c, vec.c).
 *
 *   - elementwise kernels (f32, f16, bf16, i32) with vector(d,N,all) forced
 *     give exactly the host's values, and their IR has vector LOADs and
 *     STOREs;
 *   - a view at an element offset (x[:, 1:]) and a transposed one leave
 *     their loads scalar: ',all' refuses the offset one with a message, the
 *     plain form runs it exactly; a transposed load is not contiguous along
 *     the vector dim and stays scalar either way;
 *   - a register tile (matmul) and a tile staged through shared memory
 *     with vectors: exact (bit for bit: the same fused multiply-adds in the
 *     same order), vector accesses in the IR;
 *   - on the GPU devices the default plans take a vector width (elementwise
 *     and tiles), CPU-style ones never (their plans are the C compiler's to
 *     vectorise);
 *   - lists that do not fit are refused with a message.
 * Runs on every device it is given; the GPU mocks execute the machine code
 * (misaligned vector accesses fault on the NVIDIA models), CPU+ir runs the
 * IR interpreter, which faults a misaligned vector access too. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/sass.h"
#include "hcqtest.h"
#include "plantest.h"
#include "tensor/lower.h"
#include "tensortest.h"

TestSuite(tensor_vec, .init = tx_setup, .fini = tx_teardown, .timeout = 240);


/* the compiled CPU target builds each kernel with clang: a few plans there */
static bool few(void) { return !strcmp(tx_ctx->props.target, "cpu"); }

typedef struct vcount {
    int loads, stores; /* vector LOADs (global or local) and vector STOREs */
} vcount;

static vcount count_vec(const hcq_kernel *k)
{
    vcount c = {0, 0};
    const hcq_ir_op *ops = hcq_kernel_ops(k);
    for (uint32_t i = 0; i < hcq_kernel_op_count(k); i++) {
        if (ops[i].op == HCQ_OP_LOAD && hcq_ir_lanes(k, i)) c.loads++;
        if (ops[i].op == HCQ_OP_STORE && hcq_ir_lanes(k, ops[i].src[2])) c.stores++;
    }
    return c;
}

/* n (its sources realized) lowered with list o (NULL: the default) and run
 * by hand; its bytes in out, its choices in used, its vector accesses in vc */
static hcq_status run_plan(tt_node *n, const tt_opts *o, void *out, tt_opts *used, vcount *vc)
{
    tt_lowered meta;
    const hcq_kernel *k = NULL;
    hcq_status s = tp_run_plan(tx_ctx, n, o, out, &meta, &k);
    if (s) return s;
    if (used) *used = meta.opts;
    if (vc) *vc = count_vec(k);
    return HCQ_OK;
}

/* element i of a dt buffer as a double */
static double elem(const void *p, hcq_dtype dt, int64_t i)
{
    switch (dt) {
    case HCQ_F32: return ((const float *)p)[i];
    case HCQ_I32: return ((const int32_t *)p)[i];
    case HCQ_U8: return ((const uint8_t *)p)[i];
    case HCQ_I16: return ((const int16_t *)p)[i];
    case HCQ_F64: return ((const double *)p)[i];
    case HCQ_F16:
    case HCQ_BF16: {
        uint16_t h = ((const uint16_t *)p)[i];
        uint32_t u;
        float f;
        if (dt == HCQ_BF16) {
            u = (uint32_t)h << 16;
            memcpy(&f, &u, 4);
            return f;
        }
        /* f16: sign, 5-bit exponent, 10-bit fraction */
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        if (e == 31) v = m ? NAN : INFINITY;
        return (h & 0x8000) ? -v : v;
    }
    default: cr_assert_fail("dtype %s", hcq_dtype_name(dt)); return 0;
    }
}

/* runs n with list o and compares every element with want (exactly) */
static vcount run_exact(tt_node *n, const tt_opts *o, const double *want, const char *what)
{
    char words[256] = "(default)";
    if (o) tt_opts_format(o, words, sizeof words);
    int64_t count = tt_numel(n->shape, n->ndim);
    void *got = malloc((size_t)count * 8);
    memset(got, 0xff, (size_t)count * 8);
    vcount vc;
    tt_opts used;
    hcq_status s = run_plan(n, o, got, &used, &vc);
    cr_assert_eq(s, HCQ_OK, "%s: %s: plan %s: %s", tx_ctx->props.id, what, words, hcq_error_message());
    tt_opts_format(&used, words, sizeof words);
    for (int64_t i = 0; i < count; i++) {
        double g = elem(got, (hcq_dtype)n->dtype, i);
        cr_assert(g == want[i], "%s: %s: plan %s: element %lld is %.9g, want %.9g", tx_ctx->props.id, what, words, (long long)i, g, want[i]);
    }
    free(got);
    return vc;
}

/* a + b of dtype dt on [R, C] (b read through `bview`: 0 plain, 1 the
 * columns 1.. of an [R, C + 1] array, 2 transposed from [C, R]), its host
 * values in want */
static tt_node *make_add(hcq_dtype dt, int64_t R, int64_t C, int bview, uint32_t seed, double **want)
{
    double *a = malloc(sizeof *a * (size_t)(R * (C + 1))), *b = malloc(sizeof *b * (size_t)(R * (C + 1)));
    double lo = dt == HCQ_I32 ? -1000 : -1, hi = dt == HCQ_I32 ? 1000 : 1;
    hcq_tensor *ta = tx_rand(dt, TX_SHAPE(R, C), lo, hi, seed, a), *tb;
    if (bview == 1) {
        tb = tx_rand(dt, TX_SHAPE(R, C + 1), lo, hi, seed + 1, b);
        T_OK(hcq_realize(tb));
        tb = hcq_slice(tb, 1, 1, C + 1, 1);
    } else if (bview == 2) {
        tb = tx_rand(dt, TX_SHAPE(C, R), lo, hi, seed + 1, b);
        T_OK(hcq_realize(tb));
        tb = hcq_transpose(tb, 0, 1);
    } else {
        tb = tx_rand(dt, TX_SHAPE(R, C), lo, hi, seed + 1, b);
    }
    T_OK(hcq_realize(ta));
    if (!bview) T_OK(hcq_realize(tb)); /* (a view stays a view of its realized source) */
    *want = malloc(sizeof **want * (size_t)(R * C));
    for (int64_t i = 0; i < R; i++)
        for (int64_t j = 0; j < C; j++) {
            double y = bview == 1 ? b[i * (C + 1) + j + 1] : bview == 2 ? b[j * R + i] : b[i * C + j];
            (*want)[i * C + j] = tx_round(dt, a[i * C + j] + y);
        }
    free(a);
    free(b);
    return hcq_add(ta, tb)->n;
}

Test(tensor_vec, elementwise_forced_is_exact_and_vector)
{
    static const hcq_dtype dts[] = {HCQ_F32, HCQ_F16, HCQ_BF16, HCQ_I32};
    for (int t = 0; t < (few() ? 1 : 4); t++) {
        hcq_dtype dt = dts[t];
        int64_t lanes = 16 / (int64_t)hcq_dtype_size(dt); /* 16-byte accesses */
        double *want;
        tt_node *n = make_add(dt, 24, 64, 0, 10 + (uint32_t)t, &want);
        char what[64];
        snprintf(what, sizeof what, "%s a + b", hcq_dtype_name(dt));
        tt_opts o = tp_list(3, TP_UP(1, 1, lanes), TP_VECALL(1, lanes), TP_OPT(TT_OPT_LOCAL, 32));
        vcount vc = run_exact(n, &o, want, what);
        cr_assert(vc.loads == 2 && vc.stores == 1, "%s: %s: %d vector loads, %d vector stores (want 2, 1)", tx_ctx->props.id, what, vc.loads,
                  vc.stores);
        if (t == 0) { /* two vectors per work-item, and 8-byte ones */
            o = tp_list(3, TP_UP(1, 1, lanes), TP_VECALL(1, lanes / 2), TP_OPT(TT_OPT_LOCAL, 16));
            vc = run_exact(n, &o, want, what);
            cr_assert(vc.loads == 4 && vc.stores == 2, "%s: %s: %d vector loads, %d vector stores (want 4, 2)", tx_ctx->props.id, what,
                      vc.loads, vc.stores);
        }
        free(want);
    }
}

Test(tensor_vec, offset_and_transposed_views_fall_back)
{
    double *want;
    /* b = x[:, 1:] of a [24, 65] x: its row starts are 65 elements apart
     * and its first at element 1: no aligned run */
    tt_node *n = make_add(HCQ_F32, 24, 64, 1, 20, &want);
    tt_opts o = tp_list(3, TP_UP(1, 1, 4), TP_VEC(1, 4), TP_OPT(TT_OPT_LOCAL, 32));
    vcount vc = run_exact(n, &o, want, "a + x[:, 1:]");
    cr_assert(vc.loads == 1 && vc.stores == 1, "%s: a's loads and the store are vectors, x's not: %d, %d", tx_ctx->props.id, vc.loads,
              vc.stores);
    o = tp_list(3, TP_UP(1, 1, 4), TP_VECALL(1, 4), TP_OPT(TT_OPT_LOCAL, 32));
    double out[24 * 64];
    hcq_status s = run_plan(n, &o, out, NULL, NULL);
    cr_assert_eq(s, HCQ_EINVAL, "%s: vector(..,all) of a misaligned view: %d (%s)", tx_ctx->props.id, s, hcq_error_message());
    cr_assert(strstr(hcq_error_message(), "not a multiple of 4"), "%s: %s", tx_ctx->props.id, hcq_error_message());
    /* the default plan: right, whatever it takes */
    run_exact(n, NULL, want, "a + x[:, 1:] (default)");
    free(want);
    /* transposed: b's lanes are 24 elements apart, not a run: scalar even
     * under ',all' */
    n = make_add(HCQ_F32, 24, 64, 2, 30, &want);
    o = tp_list(3, TP_UP(1, 1, 4), TP_VECALL(1, 4), TP_OPT(TT_OPT_LOCAL, 32));
    vc = run_exact(n, &o, want, "a + y^T");
    cr_assert(vc.loads == 1 && vc.stores == 1, "%s: a's loads and the store are vectors, y^T's not: %d, %d", tx_ctx->props.id, vc.loads,
              vc.stores);
    run_exact(n, NULL, want, "a + y^T (default)");
    free(want);
}

/* A matmul [M, K] @ [K, N] of dtype dt as an f32 node (halfs: the f16/bf16
 * result cast to f32) and its host values: the products of the inputs as
 * stored, in f32, summed in k order with one fused multiply-add each (as
 * the kernels do), rounded to dt. */
static tt_node *make_mm(hcq_dtype dt, int64_t M, int64_t K, int64_t N, uint32_t seed, double **want)
{
    double *a = malloc(sizeof *a * (size_t)(M * K)), *b = malloc(sizeof *b * (size_t)(K * N));
    hcq_tensor *ta = tx_rand(dt, TX_SHAPE(M, K), -1, 1, seed, a), *tb = tx_rand(dt, TX_SHAPE(K, N), -1, 1, seed + 1, b);
    T_OK(hcq_realize(ta));
    T_OK(hcq_realize(tb));
    *want = malloc(sizeof **want * (size_t)(M * N));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float s = 0;
            for (int64_t k = 0; k < K; k++) s = fmaf((float)a[i * K + k], (float)b[k * N + j], s);
            (*want)[i * N + j] = (float)tx_round(dt, s);
        }
    free(a);
    free(b);
    hcq_tensor *p = hcq_matmul(ta, tb);
    if (dt != HCQ_F32) p = hcq_cast(p, HCQ_F32);
    tt_node *n = p->n;
    while (n->op == TT_VIEW) n = n->src[0]; /* the reduction's own [M, N, 1] */
    return n;
}

Test(tensor_vec, register_tiles_and_smem_staging_with_vectors_are_exact)
{
    static const hcq_dtype dts[] = {HCQ_F32, HCQ_F16, HCQ_BF16};
    for (int t = 0; t < (few() ? 1 : 3); t++) {
        hcq_dtype dt = dts[t];
        double *want;
        tt_node *n = make_mm(dt, 32, 40, 32, 40 + (uint32_t)t, &want);
        char what[64];
        snprintf(what, sizeof what, "%s matmul", hcq_dtype_name(dt));
        /* a 4 x 4 tile: B's rows and the output's as 4-lane vectors (the
         * halfs: staged only, below) */
        tt_opts o = tp_list(4, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_VECALL(1, 4), TP_OPT(TT_OPT_LOCAL, 8));
        vcount vc;
        if (t == 0) {
            vc = run_exact(n, &o, want, what);
            cr_assert(vc.loads >= 1 && vc.stores == 4, "%s: %s tile: %d vector loads, %d stores (want B's, 4 rows)", tx_ctx->props.id, what,
                      vc.loads, vc.stores);
        }
        /* staged: A copied along k (vector loads, scalar stores into its
         * [k][row] array), B along its rows (vector loads and stores), the
         * tile read from local memory as vectors */
        o = tp_list(5, TP_UP(0, 0, 4), TP_UP(1, 1, 4), TP_VECALL(1, 4), TP_OPT(TT_OPT_LOCAL, 16), TP_SMEM(8, 4));
        vc = run_exact(n, &o, want, what);
        cr_assert(vc.loads >= 4 && vc.stores >= 5, "%s: %s smem: %d vector loads, %d stores", tx_ctx->props.id, what, vc.loads, vc.stores);
        /* 2-lane vectors, and a slice that does not divide the reduction */
        o = tp_list(5, TP_UP(0, 0, 2), TP_UP(1, 1, 4), TP_VEC(1, 2), TP_OPT(TT_OPT_LOCAL, 32), TP_SMEM(6, 8));
        if (t == 0) run_exact(n, &o, want, what);
        free(want);
    }
}

static bool has_vector(const tt_opts *o)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (o->o[i].kind == TT_OPT_VECTOR) return true;
    return false;
}

/* GPU defaults take a width (HCQ_DEBUG=1 prints these words); CPU-style
 * ones never: their plans, kernels and cache keys are the C compiler's */
Test(tensor_vec, gpu_defaults_take_a_width_cpu_defaults_do_not)
{
    static const hcq_dtype dts[] = {HCQ_F32, HCQ_F16, HCQ_I32};
    for (int t = 0; t < 3; t++) {
        double *want;
        tt_node *n = make_add(dts[t], 8, 96, 0, 50 + (uint32_t)t, &want);
        char words[256];
        tt_opts used;
        void *got = malloc(8 * 96 * 8);
        T_OK(run_plan(n, NULL, got, &used, NULL));
        tt_opts_format(&used, words, sizeof words);
        int64_t lanes = 16 / (int64_t)hcq_dtype_size(dts[t]);
        char want_words[64];
        snprintf(want_words, sizeof want_words, "upcast1(d1,%lld) vector(d1,%lld)", (long long)lanes, (long long)lanes);
        if (tx_ctx->cpu_style)
            cr_assert(!has_vector(&used), "%s: a CPU-style default takes no vector: %s", tx_ctx->props.id, words);
        else
            cr_assert(strstr(words, want_words), "%s: a GPU elementwise default is %s: %s", tx_ctx->props.id, want_words, words);
        run_exact(n, NULL, want, "default a + b");
        free(got);
        free(want);
    }
    /* a row of 6 f32: 2-lane vectors (8 bytes divide it, 16 do not) */
    double *want;
    tt_node *n = make_add(HCQ_F32, 10, 6, 0, 60, &want);
    tt_opts used;
    float got[60];
    T_OK(run_plan(n, NULL, got, &used, NULL));
    char words[256];
    tt_opts_format(&used, words, sizeof words);
    if (!tx_ctx->cpu_style) cr_assert(strstr(words, "vector(d1,2)"), "%s: %s", tx_ctx->props.id, words);
    run_exact(n, NULL, want, "default a + b, rows of 6");
    free(want);
    /* a matmul: the tile's rows (and an smem plan's copies) as vectors */
    n = make_mm(HCQ_F32, 64, 48, 64, 61, &want);
    float *mg = malloc(sizeof *mg * 64 * 64);
    vcount vc;
    T_OK(run_plan(n, NULL, mg, &used, &vc));
    tt_opts_format(&used, words, sizeof words);
    if (tx_ctx->cpu_style)
        cr_assert(!has_vector(&used), "%s: a CPU-style default takes no vector: %s", tx_ctx->props.id, words);
    else
        cr_assert(strstr(words, "vector(d1,4)") && vc.loads >= 2 && vc.stores >= 4, "%s: a GPU matmul default: %s (%d vector loads, %d stores)",
                  tx_ctx->props.id, words, vc.loads, vc.stores);
    run_exact(n, NULL, want, "default matmul");
    free(mg);
    free(want);
}

static void refused(tt_node *n, tt_opts o, const char *says)
{
    char words[256];
    tt_opts_format(&o, words, sizeof words);
    void *got = malloc((size_t)tt_numel(n->shape, n->ndim) * 8);
    hcq_status s = run_plan(n, &o, got, NULL, NULL);
    cr_assert_eq(s, HCQ_EINVAL, "plan %s: %d (%s)", words, s, hcq_error_message());
    cr_assert(strstr(hcq_error_message(), says), "plan %s: %s", words, hcq_error_message());
    free(got);
}

Test(tensor_vec, lists_that_do_not_fit_are_refused)
{
    double *want;
    tt_node *n = make_add(HCQ_F32, 8, 64, 0, 70, &want);
    refused(n, tp_list(3, TP_UP(1, 1, 4), TP_VEC(1, 3), TP_OPT(TT_OPT_LOCAL, 8)), "2, 4, 8 or 16 lanes");
    refused(n, tp_list(3, TP_UP(1, 1, 8), TP_VEC(1, 8), TP_OPT(TT_OPT_LOCAL, 8)), "an access is at most 16");
    refused(n, tp_list(2, TP_VEC(1, 4), TP_OPT(TT_OPT_LOCAL, 8)), "there is no upcast1");
    refused(n, tp_list(3, TP_UP(1, 1, 4), TP_VEC(0, 4), TP_OPT(TT_OPT_LOCAL, 8)), "slot 1's upcast outputs, along d1");
    refused(n, tp_list(3, TP_UP(1, 1, 2), TP_VEC(1, 4), TP_OPT(TT_OPT_LOCAL, 8)), "does not divide upcast1's 2");
    refused(n, tp_list(4, TP_UP(1, 1, 4), TP_VEC(1, 4), TP_VEC(1, 4), TP_OPT(TT_OPT_LOCAL, 8)), "twice");
    free(want);
}

/* The search's neighbours of a default plan: other widths on GPU targets
 * (each one a list that runs exactly), none on CPU-style ones. */
Test(tensor_vec, the_search_proposes_widths_on_gpu_targets)
{
    double *want;
    tt_node *n = make_add(HCQ_F32, 8, 64, 0, 80, &want);
    tt_opts def, near[96];
    float got[8 * 64];
    T_OK(run_plan(n, NULL, got, &def, NULL));
    uint32_t nn = tt_beam_neighbours(&tx_ctx->lw->space, &def, near, 96);
    int widths = 0, ran = 0;
    for (uint32_t i = 0; i < nn; i++) {
        if (!has_vector(&near[i])) continue;
        widths++;
        if (ran < 2) {
            run_exact(n, &near[i], want, "a neighbour with a width");
            ran++;
        }
    }
    char words[256];
    tt_opts_format(&def, words, sizeof words);
    if (tx_ctx->cpu_style)
        cr_assert_eq(widths, 0, "%s: no widths proposed on a CPU-style target (default %s)", tx_ctx->props.id, words);
    else
        cr_assert_geq(widths, 2, "%s: widths proposed around %s: %d", tx_ctx->props.id, words, widths);
    free(want);
}

/* The machine code the GPU devices run: a default elementwise f32 kernel's
 * loads and store are one 16-byte instruction each (nvdisasm for NVIDIA,
 * llvm-objdump-22 for AMD; skipped, saying so, where they are missing). */
Test(tensor_vec, gpu_machine_code_has_16_byte_accesses)
{
    const char *target = tx_ctx->props.target;
    bool nv = !strncmp(target, "sm_", 3), amd = !strncmp(target, "gfx", 3);
    if (!nv && !amd) cr_skip_test("%s runs no GPU machine code (target %s)", tx_ctx->props.id, target);
    char why[256], cmd[1024], file[128];
    const char *nvdisasm = nv ? sass_nvdisasm(why, sizeof why) : NULL;
    if (nv && !nvdisasm) cr_skip_test("nvdisasm is not here: %s", why);
    if (amd && system("command -v llvm-objdump-22 >/dev/null 2>&1") != 0) cr_skip_test("llvm-objdump-22 is not here");
    double *want;
    tt_node *n = make_add(HCQ_F32, 8, 64, 0, 90, &want);
    tt_key key = {0};
    tt_lowered lw;
    T_OK(tt_key_make(tx_ctx, &n, 1, &key));
    T_OK(tt_lower_opts(tx_ctx, &n, 1, &key, NULL, &lw));
    hcq_binary *bin = NULL;
    hcq_status s = hcq_compile(lw.k, target, &bin);
    if (s == HCQ_ENODEV || s == HCQ_ENOTSUP) cr_skip_test("no compiler for %s here: %s", target, hcq_error_message());
    cr_assert_eq(s, HCQ_OK, "%s", hcq_error_message());
    snprintf(file, sizeof file, "/tmp/hcq_tensor_vec_%d_%s.bin", (int)getpid(), target);
    FILE *f = fopen(file, "wb");
    cr_assert(f && fwrite(bin->data, 1, bin->size, f) == bin->size && !fclose(f));
    if (nv)
        snprintf(cmd, sizeof cmd, "timeout 60 %s -c %s 2>&1", nvdisasm, file);
    else
        snprintf(cmd, sizeof cmd, "timeout 60 llvm-objdump-22 -d --mcpu=%s %s 2>&1", target, file);
    char *code = t_capture(cmd, NULL);
    unlink(file);
    bool gfx9 = amd && !strncmp(target, "gfx9", 4);
    const char *ld = nv ? "LDG.E.128" : gfx9 ? "global_load_dwordx4" : "global_load_b128";
    const char *st = nv ? "STG.E.128" : gfx9 ? "global_store_dwordx4" : "global_store_b128";
    const char *any_ld = nv ? "LDG" : "global_load";
    cr_assert(t_count(code, ld) == 2 && t_count(code, any_ld) == 2, "%s %s: want two loads, both %s:\n%s", tx_ctx->props.id, lw.name, ld, code);
    cr_assert(t_count(code, st) == 1, "%s %s: want one %s:\n%s", tx_ctx->props.id, lw.name, st, code);
    free(code);
    hcq_binary_free(bin);
    tt_lowered_free(&lw);
    tt_key_free(&key);
    free(want);
}

/* x of dtype dt on [R, C] from an f32 or i32 tensor of small values (cast:
 * exact), realized; its values in v */
static hcq_tensor *cast_input(hcq_dtype dt, int64_t R, int64_t C, uint32_t seed, double *v)
{
    bool i = dt == HCQ_U8 || dt == HCQ_I16;
    hcq_tensor *t = hcq_cast(tx_rand(i ? HCQ_I32 : HCQ_F32, TX_SHAPE(R, C), 0, i ? 100 : 1, seed, v), dt);
    T_OK(hcq_realize(t));
    return t;
}

/* the widths per buffer: 16 x u8, 8 x i16, 2 x f64 (16 bytes each); an
 * f32 kernel of f16 and f64 inputs reads 8-byte f16 vectors and two
 * 16-byte f64 ones per 4 outputs */
Test(tensor_vec, narrow_wide_and_mixed_dtypes)
{
    static const hcq_dtype dts[] = {HCQ_U8, HCQ_I16, HCQ_F64};
    int64_t R = 4, C = 64;
    double a[4 * 64], b[4 * 64], want[4 * 64];
    for (int t = 0; t < (few() ? 1 : 3); t++) {
        hcq_dtype dt = dts[t];
        int64_t lanes = 16 / (int64_t)hcq_dtype_size(dt);
        hcq_tensor *ta = cast_input(dt, R, C, 100 + (uint32_t)t, a), *tb = cast_input(dt, R, C, 110 + (uint32_t)t, b);
        for (int64_t i = 0; i < R * C; i++) want[i] = a[i] + b[i];
        tt_node *n = hcq_add(ta, tb)->n;
        char what[64];
        snprintf(what, sizeof what, "%s a + b", hcq_dtype_name(dt));
        tt_opts o = tp_list(3, TP_UP(1, 1, lanes), TP_VECALL(1, lanes), TP_OPT(TT_OPT_LOCAL, 16));
        vcount vc = run_exact(n, &o, want, what);
        cr_assert(vc.loads == 2 && vc.stores == 1, "%s: %s: %d vector loads, %d stores", tx_ctx->props.id, what, vc.loads, vc.stores);
    }
    hcq_tensor *th = cast_input(HCQ_F16, R, C, 120, a), *td = cast_input(HCQ_F64, R, C, 121, b);
    for (int64_t i = 0; i < R * C; i++) want[i] = (float)((float)tx_round(HCQ_F16, a[i]) + (float)b[i]);
    tt_node *n = hcq_add(hcq_cast(th, HCQ_F32), hcq_cast(td, HCQ_F32))->n;
    tt_opts o = tp_list(3, TP_UP(1, 1, 4), TP_VECALL(1, 4), TP_OPT(TT_OPT_LOCAL, 16));
    vcount vc = run_exact(n, &o, want, "f16 + f64 as f32");
    cr_assert(vc.loads == 3 && vc.stores == 1, "%s: f16 + f64: %d vector loads (want 1 f16 x 4, 2 f64 x 2), %d stores", tx_ctx->props.id,
              vc.loads, vc.stores);
}
