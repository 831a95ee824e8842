/* The differential test (tests/diff/diff.h) in `make test`: a fixed 16
 * random kernels, each run on the interpreter, the cpu engine and one of
 * the host twins (the CUDA text on even seeds, the HIP text on odd ones:
 * a compile costs about 0.3 s of CPU, so every engine on every kernel is
 * for `make difftest`, which runs thousands), and the kernels of the bugs
 * it found, by hand. Under the sanitizers (SAN set by make asan / tsan) a
 * fifth of the seeds run: those builds look for memory and thread bugs in
 * hcq, and each kernel costs compiles in their own cold cache. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/diff.h"

/* kernels per test; 8 tests. 80 kernels cost about 40 s of CPU with a cold
 * kernel cache (two compiles each), the most of any unit suite, and 40 took
 * 24 s of a make test over its budget (2026-11-27), so make test runs a fifth
 * (seeds 1-2, 11-12, ...); CI's make difftest runs new seeds at length on
 * every engine, the mocks' machine-code executors included */
#define PER_TEST 2u
#define STEPS 36u    /* smaller kernels than make difftest's (30 to 90 steps) */

static void need_clang(void)
{
    if (hcq_toolchain_clang(NULL, NULL) != HCQ_OK) cr_skip_test("no clang for the compiled engines: %s", hcq_error_message());
}

static void seeds(uint64_t first)
{
    need_clang();
    const char *san = getenv("SAN");
    unsigned n = san && *san ? 1 : PER_TEST;
    diff_config cfg = {.shrink_seconds = 60, .gen = {.steps = STEPS}};
    diff_stats st = {0};
    for (unsigned i = 0; i < n; i++) {
        uint64_t seed = first + i;
        cfg.engines = seed & 1 ? "cpu,hip-twin" : "cpu,cuda-twin";
        char *report = NULL;
        hcq_status s = diff_run_seed(seed, &cfg, &st, &report);
        if (s) cr_assert_fail("%s", report ? report : hcq_error_message());
        free(report);
    }
    cr_assert_eq(st.kernels, n);
}

/* with vector values (irg_options.vectors: aligned vector loads, lane ops,
 * vector accumulators): seed 1 on the CUDA twin and 5 on the HIP twin, both
 * with vectors at 36 steps (make difftest --vectors runs them at length) */
Test(difftest, vector_seeds)
{
    need_clang();
    diff_config cfg = {.shrink_seconds = 60, .gen = {.steps = STEPS, .vectors = true}};
    diff_stats st = {0};
    static const uint64_t picked[] = {1, 5};
    for (unsigned i = 0; i < 2; i++) {
        cfg.engines = i ? "cpu,hip-twin" : "cpu,cuda-twin";
        char *report = NULL;
        hcq_status s = diff_run_seed(picked[i], &cfg, &st, &report);
        if (s) cr_assert_fail("%s", report ? report : hcq_error_message());
        free(report);
    }
    cr_assert_eq(st.kernels, 2);
}

/* seeds 1..2, 11..12, ..., 71..72 */
Test(difftest, seeds_1) { seeds(1); }
Test(difftest, seeds_11) { seeds(11); }
Test(difftest, seeds_21) { seeds(21); }
Test(difftest, seeds_31) { seeds(31); }
Test(difftest, seeds_41) { seeds(41); }
Test(difftest, seeds_51) { seeds(51); }
Test(difftest, seeds_61) { seeds(61); }
Test(difftest, seeds_71) { seeds(71); }

/* ** kernels by hand */
typedef struct hand {
    irg_case c;
} hand;

static void hand_init(hand *h, const char *name, uint32_t groups, uint32_t local)
{
    memset(h, 0, sizeof *h);
    h->c.k = hcq_kernel_create(name);
    cr_assert_not_null(h->c.k);
    h->c.ng[0] = groups, h->c.ng[1] = h->c.ng[2] = 1;
    h->c.ls[0] = local, h->c.ls[1] = h->c.ls[2] = 1;
    h->c.data_seed = 7;
    h->c.by_hand = true;
}

static hcq_ir_ref hand_buf(hand *h, irg_role role, hcq_dtype t, uint32_t count)
{
    irg_param *p = &h->c.p[h->c.np];
    *p = (irg_param){.role = role, .dt = t, .count = count, .id = h->c.np};
    snprintf(p->label, sizeof p->label, "%s%u", role == IRG_INPUT ? "in" : "out", h->c.np);
    h->c.np++;
    return hcq_ir_param_buffer(h->c.k, t);
}

static void hand_run(hand *h)
{
    need_clang();
    diff_config cfg = {.shrink_seconds = 30};
    diff_stats st = {0};
    char *report = NULL;
    hcq_status s = diff_run_case(&h->c, &cfg, &st, &report);
    if (s) cr_assert_fail("%s", report ? report : hcq_error_message());
    irg_case_free(&h->c);
}

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    return hcq_ir_mulacc(k, g, ls, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
}

/* seeds 7 and 49 found it (as did issue 12, which fixed it): the C text of
 * neg(-2.5f) was "(--0x1.4p+1f)", a decrement of a constant, which does
 * not compile */
Test(difftest, neg_of_a_negative_float_constant)
{
    hand h;
    hand_init(&h, "neg_const", 1, 4);
    hcq_kernel *k = h.c.k;
    static const hcq_dtype ts[] = {HCQ_F16, HCQ_BF16, HCQ_F32, HCQ_F64};
    hcq_ir_ref out[4];
    for (int i = 0; i < 4; i++) out[i] = hand_buf(&h, IRG_OUTPUT, ts[i], 4);
    hcq_ir_ref id = gid(k);
    for (int i = 0; i < 4; i++)
        hcq_ir_store(k, out[i], id, hcq_ir_unary(k, HCQ_OP_NEG, hcq_ir_const_float(k, ts[i], -2.5)));
    hand_run(&h);
}
