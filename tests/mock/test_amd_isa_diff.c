/* Proof by difference for the AMD mock's ISA executor: random kernels of
 * the differential test (tests/diff), compiled by clang for gfx1100,
 * gfx942 and gfx90a as for hardware, run on the mock's executor (HCQ_MOCK_SHADER=isa,
 * each in a child process) and compared with the interpreter element for
 * element (exact ops bit for bit, transcendentals within their ulp
 * bounds). A few seeds per target here; HCQ_TEST_ISA_SEEDS=N runs N
 * (`make difftest` runs every engine on thousands). Skips without clang. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/diff/diff.h"

TestSuite(amd_isa_diff, .timeout = 600);

static void seeds(const char *engine, uint64_t first)
{
    if (hcq_toolchain_clang(NULL, NULL) != HCQ_OK) cr_skip_test("no clang: %s", hcq_error_message());
    const char *env = getenv("HCQ_TEST_ISA_SEEDS");
    unsigned n = env && *env ? (unsigned)strtoul(env, NULL, 10) : 8;
    diff_config cfg = {.engines = engine, .shrink_seconds = 60, .gen = {.steps = 36}};
    diff_stats st = {0};
    for (unsigned i = 0; i < n; i++) {
        char *report = NULL;
        hcq_status s = diff_run_seed(first + i, &cfg, &st, &report);
        if (s) cr_assert_fail("%s", report ? report : hcq_error_message());
        free(report);
    }
    cr_assert_eq(st.kernels, n);
    /* the cases the executor ran (a case HIP refuses is skipped) */
    const char *names[DIFF_MAX_ENGINES];
    unsigned ne = diff_engines(names, DIFF_MAX_ENGINES), k = 0;
    while (k < ne && strcmp(names[k], engine)) k++;
    cr_assert_lt(k, ne);
    cr_assert_geq(st.runs[k] * 2, n, "%s compared %llu of %u cases", engine, (unsigned long long)st.runs[k], n);
}

Test(amd_isa_diff, gfx1100) { seeds("gfx1100-isa", 7000); }
Test(amd_isa_diff, gfx942) { seeds("gfx942-isa", 9000); }
Test(amd_isa_diff, gfx90a) { seeds("gfx90a-isa", 11000); }
