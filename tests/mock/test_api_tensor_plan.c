/* Kernel plans as choice lists (tensor/plan.c) and the plan search
 * (tensor/beam.c, HCQ_BEAM).
 *
 *   - the default list is today's plan: lowering it forced gives the very
 *     kernel the heuristics give (and tt_lower checks that the list applies
 *     back to their plan for every kernel it lowers); a pinned default list
 *     for a matmul and a row sum on a context with fixed core and cache
 *     counts records what the heuristics decide;
 *   - each kind of choice, applied by hand, gives the right values (CPU-style
 *     devices: CPU and CPU+ir), and a different kernel from the default;
 *   - choices that do not fit, or that no target takes yet (vector width),
 *     are refused with a message (smem's own refusals and
 *     plans: test_api_tensor_smem.c);
 *   - the search: a tiny one (3 plans) finds a plan, caches it on disk, a
 *     second context uses it without searching, a corrupt or foreign entry
 *     is ignored with a note (and searched again);
 *   - an emulated device refuses the search (its timings are not a GPU's). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cc.h"
#include "hcqtest.h"
#include "tensor/lower.h"
#include "plantest.h"
#include "tensortest.h"

TestSuite(tensor_plan, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static void need_cpu_style(void)
{
    if (!tx_ctx->cpu_style) cr_skip_test("plans are applied by hand on the CPU-style devices (CPU, CPU+ir); %s is not one", tx_ctx->props.id);
}

/* a context with fixed core and cache counts, so the heuristics' choices
 * do not depend on the machine the test runs on */
static hcq_ctx *pinned_ctx(void)
{
    hcq_ctx *c = T_NONNULL(hcq_ctx_create(tx_dev));
    c->props.compute_units = 2;
    c->props.cache_bytes = 32ull << 20;
    return c;
}

static tt_node *under_views(hcq_tensor *t)
{
    tt_node *n = t->n;
    while (n->op == TT_VIEW) n = n->src[0];
    return n;
}


/* the 24x16 @ 16x32 matmul's reduction on c, and its values on the host */
static tt_node *matmul_node(hcq_ctx *c, double *want)
{
    double a[24 * 16], b[16 * 32];
    hcq_tensor *ta = tx_rand(HCQ_F32, TX_SHAPE(24, 16), -1, 1, 41, a), *tb = tx_rand(HCQ_F32, TX_SHAPE(16, 32), -1, 1, 42, b);
    ta = hcq_tensor_to(c, ta);
    tb = hcq_tensor_to(c, tb);
    T_OK(hcq_realize(ta));
    T_OK(hcq_realize(tb));
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < 32; j++) {
            double s = 0;
            for (int k = 0; k < 16; k++) s += a[i * 16 + k] * b[k * 32 + j];
            want[i * 32 + j] = s;
        }
    return under_views(hcq_matmul(ta, tb));
}

Test(tensor_plan, default_list_is_todays_plan)
{
    need_cpu_style();
    hcq_ctx *c = pinned_ctx();
    double want[24 * 32];
    tt_node *mm = matmul_node(c, want);
    tt_key key = {0};
    tt_lowered def, forced;
    T_OK(tt_key_make(c, &mm, 1, &key));
    T_OK(tt_lower(c, &mm, 1, &key, &def));
    char words[256];
    tt_opts_format(&def.opts, words, sizeof words);
    /* what the heuristics decide for it (24 rows, 32 columns, 2 cores):
     * a 6 x 32 register tile, the 4 tiles in one group */
    cr_assert_str_eq(words, "upcast0(d0,6) upcast1(d1,32) local(4)", "the matmul's default plan: %s", words);
    T_OK(tt_lower_opts(c, &mm, 1, &key, &def.opts, &forced));
    cr_assert_str_eq(forced.name, def.name);
    cr_assert_eq(hcq_kernel_op_count(forced.k), hcq_kernel_op_count(def.k));
    const hcq_ir_op *x = hcq_kernel_ops(def.k), *y = hcq_kernel_ops(forced.k);
    for (uint32_t i = 0; i < hcq_kernel_op_count(def.k); i++) {
        cr_assert_eq(x[i].op, y[i].op, "op %u", i);
        cr_assert_eq(x[i].dtype, y[i].dtype, "op %u", i);
        cr_assert_eq(x[i].nsrc, y[i].nsrc, "op %u", i);
        cr_assert(!memcmp(x[i].src, y[i].src, sizeof x[i].src), "op %u's sources", i);
    }
    cr_assert(!memcmp(def.grid, forced.grid, sizeof def.grid) && !memcmp(def.block, forced.block, sizeof def.block));
    tt_lowered_free(&forced);
    /* another list: another kernel */
    tt_opts other = tp_list(3, TP_UP(0, 0, 4), TP_UP(1, 1, 8), TP_OPT(TT_OPT_LOCAL, 2));
    T_OK(tt_lower_opts(c, &mm, 1, &key, &other, &forced));
    cr_assert(strcmp(forced.name, def.name) || hcq_kernel_op_count(forced.k) != hcq_kernel_op_count(def.k), "a plan change is another kernel");
    tt_lowered_free(&forced);
    tt_lowered_free(&def);
    tt_key_free(&key);
    /* a row sum: 16 accumulators along the contiguous axis */
    hcq_tensor *tr = hcq_tensor_to(c, tx_rand(HCQ_F32, TX_SHAPE(8, 64), -1, 1, 5, NULL));
    T_OK(hcq_realize(tr));
    tt_node *rows = hcq_sum(tr, HCQ_AXES(1), true)->n;
    T_OK(tt_key_make(c, &rows, 1, &key));
    T_OK(tt_lower(c, &rows, 1, &key, &def));
    tt_opts_format(&def.opts, words, sizeof words);
    cr_assert_str_eq(words, "unroll(16) local(1)", "the row sum's default plan: %s", words);
    tt_lowered_free(&def);
    tt_key_free(&key);
    T_OK(hcq_ctx_destroy(c));
}

Test(tensor_plan, each_choice_gives_the_right_values)
{
    need_cpu_style();
    hcq_ctx *c = pinned_ctx();
    double want[24 * 32];
    float got[24 * 32];
    tt_node *mm = matmul_node(c, want);
    /* the matmul's reduction is [24, 32, 1] (d0 rows, d1 columns) */
    const tt_opts lists[] = {
        tp_list(3, TP_UP(0, 0, 3), TP_UP(1, 1, 8), TP_OPT(TT_OPT_LOCAL, 1)),                           /* another tile */
        tp_list(4, TP_UP(0, 0, 5), TP_PAD(0, 5), TP_UP(1, 1, 16), TP_OPT(TT_OPT_LOCAL, 2)),              /* rows padded: 24 -> 25 */
        tp_list(3, TP_UP(1, 1, 32), TP_OPT(TT_OPT_UNROLL, 4), TP_OPT(TT_OPT_LOCAL, 4)),               /* accumulators along k */
        tp_list(4, TP_UP(0, 0, 2), TP_UP(1, 1, 8), TP_OPT(TT_OPT_LOCAL, 5), TP_OPT(TT_OPT_BLOCK, 2)),    /* a blocked walk, a gated tail */
        tp_list(1, TP_OPT(TT_OPT_GROUP, 16)),                                                   /* a work-group per output */
        tp_list(1, TP_OPT(TT_OPT_LOCAL, 7)),                                                    /* one output per work-item */
        tp_list(2, TP_UP(1, 0, 4), TP_OPT(TT_OPT_LOCAL, 3)),                                       /* rows in slot 1 */
    };
    for (size_t t = 0; t < sizeof lists / sizeof lists[0]; t++) {
        char words[256];
        tt_opts_format(&lists[t], words, sizeof words);
        memset(got, 0xff, sizeof got);
        tt_lowered meta;
        hcq_status s = tp_run_plan(c, mm, &lists[t], got, &meta, NULL);
        cr_assert_eq(s, HCQ_OK, "plan %s: %s", words, hcq_error_message());
        double g[24 * 32];
        for (int i = 0; i < 24 * 32; i++) g[i] = got[i];
        tx_close(g, want, 24 * 32, 1e-5, 1e-5, words);
    }
    /* a row sum: unrolled, upcast across rows, grouped */
    double x[8 * 64], rs[8];
    float rg[8];
    hcq_tensor *tx = hcq_tensor_to(c, tx_rand(HCQ_F32, TX_SHAPE(8, 64), -1, 1, 5, x));
    T_OK(hcq_realize(tx));
    tt_node *sum = hcq_sum(tx, HCQ_AXES(1), true)->n;
    for (int i = 0; i < 8; i++) {
        rs[i] = 0;
        for (int j = 0; j < 64; j++) rs[i] += x[i * 64 + j];
    }
    const tt_opts rlists[] = {
        tp_list(2, TP_OPT(TT_OPT_UNROLL, 8), TP_OPT(TT_OPT_LOCAL, 2)),
        tp_list(3, TP_UP(0, 0, 3), TP_PAD(0, 3), TP_OPT(TT_OPT_UNROLL, 2)),
        tp_list(1, TP_OPT(TT_OPT_GROUP, 32)),
    };
    for (size_t t = 0; t < sizeof rlists / sizeof rlists[0]; t++) {
        char words[256];
        tt_opts_format(&rlists[t], words, sizeof words);
        cr_assert_eq(tp_run_plan(c, sum, &rlists[t], rg, NULL, NULL), HCQ_OK, "plan %s: %s", words, hcq_error_message());
        double g[8];
        for (int i = 0; i < 8; i++) g[i] = rg[i];
        tx_close(g, rs, 8, 1e-5, 1e-5, words);
    }
    T_OK(hcq_ctx_destroy(c));
}

static void refused(hcq_ctx *c, tt_node *n, tt_opts o, hcq_status want, const char *says)
{
    float out[24 * 32];
    char words[256];
    tt_opts_format(&o, words, sizeof words);
    hcq_status s = tp_run_plan(c, n, &o, out, NULL, NULL);
    cr_assert_eq(s, want, "plan %s: %d (%s)", words, s, hcq_error_message());
    cr_assert(strstr(hcq_error_message(), says), "plan %s: %s", words, hcq_error_message());
}

Test(tensor_plan, choices_that_do_not_fit_are_refused)
{
    need_cpu_style();
    hcq_ctx *c = pinned_ctx();
    double want[24 * 32];
    tt_node *mm = matmul_node(c, want);
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_VECTOR, 4)), HCQ_EINVAL, "no upcast1"); /* (test_api_tensor_vec.c has the rest) */
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_SMEM, 1)), HCQ_EINVAL, "column tile");
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_TC, 1)), HCQ_EINVAL, "tc.m"); /* (tensor cores: test_api_tensor_tc.c) */
    refused(c, mm, tp_list(1, TP_UP(0, 0, 5)), HCQ_EINVAL, "does not divide");
    refused(c, mm, tp_list(2, TP_UP(0, 0, 4), TP_PAD(0, 4)), HCQ_EINVAL, "multiple already");
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_UNROLL, 3)), HCQ_EINVAL, "dividing the innermost");
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_UNROLL, 32)), HCQ_EINVAL, "2 to 16"); /* the emitter's bound */
    refused(c, mm, tp_list(2, TP_UP(1, 1, 8), TP_OPT(TT_OPT_BLOCK, 2)), HCQ_EINVAL, "register tile");
    refused(c, mm, tp_list(2, TP_OPT(TT_OPT_GROUP, 16), TP_UP(1, 1, 8)), HCQ_EINVAL, "group");
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_GROUP, 12)), HCQ_EINVAL, "power of 2");
    refused(c, mm, tp_list(1, TP_UP(0, 7, 2)), HCQ_EINVAL, "dims");
    refused(c, mm, tp_list(1, TP_OPT(TT_OPT_LOCAL, 100000)), HCQ_EINVAL, "work-items");
    T_OK(hcq_ctx_destroy(c));
}

Test(tensor_plan, cache_entries_parse_strictly)
{
    char id[65], why[200];
    memset(id, 'a', 64);
    id[64] = 0;
    char good[512];
    int n = snprintf(good, sizeof good, "hcq-plan 1\nid %s\ndevice x\nopts 2 0 0 0 8 3 -1 -1 4\n", id);
    tt_opts o;
    cr_assert_eq(tt_beam_entry_parse(good, (size_t)n, id, &o, why, sizeof why), HCQ_OK, "%s", why);
    cr_assert_eq(o.n, 2);
    cr_assert_eq(o.o[0].kind, TT_OPT_UPCAST);
    cr_assert_eq(o.o[0].amt, 8);
    cr_assert_eq(o.o[1].kind, TT_OPT_LOCAL);
    char other[65];
    memset(other, 'b', 64);
    other[64] = 0;
    cr_assert_eq(tt_beam_entry_parse(good, (size_t)n, other, &o, why, sizeof why), HCQ_EFORMAT);
    cr_assert(strstr(why, "another kernel"), "%s", why);
    const char *bad[] = {"", "hcq-plan 2\n", "garbage\x01\x02", "hcq-plan 1\nid zz\nopts 0\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(tt_beam_entry_parse(bad[i], strlen(bad[i]), id, &o, why, sizeof why), HCQ_EFORMAT, "entry %zu", i);
    char trunc[512];
    n = snprintf(trunc, sizeof trunc, "hcq-plan 1\nid %s\nopts 3 0 0 0 8 3 -1 -1 4\n", id);
    cr_assert_eq(tt_beam_entry_parse(trunc, (size_t)n, id, &o, why, sizeof why), HCQ_EFORMAT);
    n = snprintf(trunc, sizeof trunc, "hcq-plan 1\nid %s\nopts 1 99 0 0 8\n", id);
    cr_assert_eq(tt_beam_entry_parse(trunc, (size_t)n, id, &o, why, sizeof why), HCQ_EFORMAT);
}

/* a row sum of 8 x 64 on a new context searching with width 2 and at
 * most 3 plans timed; its values checked */
static hcq_ctx *search_ctx(const double *x, hcq_tensor **sum)
{
    hcq_ctx *c = T_NONNULL(hcq_ctx_create(tx_dev));
    T_OK(hcq_ctx_set_beam(c, 2));
    c->beam_max = 3;
    hcq_tensor *t = T_NONNULL(hcq_tensor_to(c, tx_from(HCQ_F32, TX_SHAPE(8, 64), x)));
    T_OK(hcq_realize(t));
    *sum = T_NONNULL(hcq_sum(t, HCQ_AXES(1), true));
    return c;
}

static void check_sum(hcq_tensor *t, const double *x)
{
    float f[8];
    T_OK(hcq_tensor_read(t, f, sizeof f));
    for (int i = 0; i < 8; i++) {
        double s = 0;
        for (int j = 0; j < 64; j++) s += x[i * 64 + j];
        cr_assert(fabs(f[i] - s) <= 1e-4 * (1 + fabs(s)), "row %d: %g, want %g", i, f[i], s);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(tensor_plan, search_caches_its_winner)
{
    need_cpu_style();
    double x[8 * 64];
    for (int i = 0; i < 8 * 64; i++) x[i] = (double)((i * 37) % 101) / 64.0 - 0.7;
    hcq_tensor *n;
    hcq_ctx *c = search_ctx(x, &n);
    char path[512];
    T_OK(tt_beam_entry_path(c, &n->n, 1, path, sizeof path));
    unlink(path);
    check_sum(n, x);
    cr_assert_eq(c->beam_stats.searched, 1, "searched %u, note: %s", c->beam_stats.searched, c->beam_note);
    cr_assert_geq(c->beam_stats.timed + c->beam_stats.discarded, 1);
    cr_assert_leq(c->beam_stats.timed + c->beam_stats.discarded, 2, "at most 3 plans with the default");
    cr_assert_eq(access(path, R_OK), 0, "the winner is cached at %s", path);
    T_OK(hcq_ctx_destroy(c));
    /* the next context pays nothing */
    c = search_ctx(x, &n);
    check_sum(n, x);
    cr_assert_eq(c->beam_stats.cache_hits, 1, "note: %s", c->beam_note);
    cr_assert_eq(c->beam_stats.searched, 0);
    T_OK(hcq_ctx_destroy(c));
    /* a corrupt entry: ignored with a note, searched again, rewritten */
    write_file(path, "hcq-plan 1\nid 12\x01garbage");
    c = search_ctx(x, &n);
    check_sum(n, x);
    cr_assert_eq(c->beam_stats.cache_ignored, 1);
    cr_assert(strstr(c->beam_note, "ignoring the cached plan"), "note: %s", c->beam_note);
    cr_assert_eq(c->beam_stats.searched, 1);
    T_OK(hcq_ctx_destroy(c));
    /* a foreign one (another key's entry under this name) */
    char foreign[256];
    int len = snprintf(foreign, sizeof foreign, "hcq-plan 1\nid %064d\nopts 1 3 -1 -1 1\n", 0);
    cc_cache_key key;
    const char *hex = strrchr(path, '/') + 1;
    memcpy(key.hex, hex, 64);
    key.hex[64] = 0;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        key.digest[i] = (uint8_t)v;
    }
    T_OK(cc_cache_put_ext(&key, ".plan", foreign, (size_t)len));
    c = search_ctx(x, &n);
    check_sum(n, x);
    cr_assert_eq(c->beam_stats.cache_ignored, 1, "note: %s", c->beam_note);
    cr_assert(strstr(c->beam_note, "another kernel"), "note: %s", c->beam_note);
    cr_assert_eq(c->beam_stats.searched, 1);
    T_OK(hcq_ctx_destroy(c));
    c = search_ctx(x, &n); /* rewritten by that search */
    check_sum(n, x);
    cr_assert_eq(c->beam_stats.cache_hits, 1, "note: %s", c->beam_note);
    T_OK(hcq_ctx_destroy(c));
}

Test(tensor_plan, beam_settings)
{
    hcq_ctx *c = T_NONNULL(hcq_ctx_create(tx_dev));
    cr_assert_eq(hcq_ctx_set_beam(c, 65), HCQ_EINVAL);
    cr_assert_eq(hcq_ctx_set_beam(c, 0), HCQ_OK);
    if (tx_ctx->props.is_mock) {
        cr_assert_eq(hcq_ctx_set_beam(c, 2), HCQ_ENOTSUP, "the mock refuses timing plans");
        cr_assert(strstr(hcq_error_message(), "not a GPU's"), "%s", hcq_error_message());
        cr_assert_eq(c->beam, 0);
    } else {
        T_OK(hcq_ctx_set_beam(c, 2));
        cr_assert_eq(c->beam, 2);
    }
    cr_assert_eq(hcq_ctx_set_beam(NULL, 2), HCQ_EINVAL);
    T_OK(hcq_ctx_destroy(c));
}
