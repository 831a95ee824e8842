/* The hardware kit's run.sh never reports less than it was asked to run as
 * a success: on a small kit made here (the real hcq for `hcq info`, two
 * stand-in suites that print Criterion's --verbose lines), a suite the
 * MANIFEST lists but the kit lacks is an error row, an "incomplete" report
 * and a failing exit; an --out where nothing can be written (a full disk:
 * here a file size limit of 0) is said at once with a failing exit; a disk
 * that fills during the run names the file that could not be written and
 * fails the run. Before, these printed "0 passed" or "complete" and exited 0. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctest.h"

TestSuite(hw_kit, .timeout = 120);

static char kit[T_TMP_PATH];

/* the kit: bin/hcq, run.sh, cache/, a MANIFEST listing `listed`, and the
 * stand-in suites tests/hw/test_hw_fake and tests/mock/test_api_fake */
static void make_kit(const char *listed)
{
    t_tmpdir(kit, sizeof kit, "hcq-kit");
    char hcq[4096];
    const char *b = getenv("HCQ_TEST_HCQ_BIN");
    cr_assert(realpath(b ? b : "build/hcq", hcq), "no hcq binary to put in the kit");
    cr_assert_eq(t_sh("mkdir -p %s/bin %s/cache %s/tests/hw %s/tests/mock && ln -s %s %s/bin/hcq && "
                    "cp scripts/hw-kit/run.sh %s/ && printf 'commit=test\\nsuites=%s\\n' > %s/MANIFEST",
                    kit, kit, kit, kit, hcq, kit, kit, listed, kit),
                 0);
    cr_assert_eq(t_sh("printf '#!/bin/sh\\necho \"[RUN ] hw::absent\"\\necho \"[SKIP] hw::absent: no driver (absent)\"\\n' "
                    "> %s/tests/hw/test_hw_fake && "
                    "printf '#!/bin/sh\\necho \"[RUN ] api::works\"\\necho \"[PASS] api::works: (0.00s)\"\\n' "
                    "> %s/tests/mock/test_api_fake && chmod +x %s/tests/*/test_*",
                    kit, kit, kit),
                 0);
}

static int run_kit(const char *limit, char *err, size_t size)
{
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/err.txt", kit);
    /* stderr through a pipe: the file size limit is the run's, not the reader's */
    int rc = t_sh("cd %s && { (trap '' XFSZ; %s ./run.sh --out %s/report --devices CPU --no-trace --budget 60) "
                "2>&1 >/dev/null; echo \"rc=$?\"; } | cat > %s; exit $(sed -n 's/^rc=//p' %s)",
                kit, limit, kit, path, path);
    char *e = t_slurp(path, 1 << 20);
    snprintf(err, size, "%s", e);
    free(e);
    return rc;
}

Test(hw_kit, a_complete_kit_passes)
{
    make_kit("tests/hw/test_hw_fake tests/mock/test_api_fake");
    char err[4096], path[T_TMP_PATH + 32];
    int rc = run_kit("", err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
    snprintf(path, sizeof path, "%s/report/report.json", kit);
    char *r = t_slurp(path, 1 << 20);
    cr_assert(strstr(r, "\"state\": \"complete\""), "%.400s", r);
    cr_assert(strstr(r, "\"passed\": 1, \"failed\": 0, \"skipped\": 1"), "%.600s", r);
    free(r);
    t_sh("rm -rf %s", kit);
}

Test(hw_kit, a_suite_missing_from_the_kit_fails_the_run)
{
    make_kit("tests/hw/test_hw_fake tests/mock/test_api_fake tests/mock/test_api_gone");
    char err[4096], path[T_TMP_PATH + 32];
    int rc = run_kit("", err, sizeof err);
    cr_assert_neq(rc, 0, "a kit without test_api_gone exited 0");
    snprintf(path, sizeof path, "%s/report/report.json", kit);
    char *r = t_slurp(path, 1 << 20);
    cr_assert(strstr(r, "\"state\": \"incomplete: missing from the kit: tests/mock/test_api_gone\""), "%.400s", r);
    cr_assert(strstr(r, "\"suite\": \"test_api_gone\", \"device\": \"kit\", \"test\": \"(the suite)\", \"status\": \"error\""),
              "%.2000s", r);
    free(r);
    t_sh("rm -rf %s", kit);
}

Test(hw_kit, an_out_that_cannot_be_written_fails_at_once)
{
    make_kit("tests/hw/test_hw_fake tests/mock/test_api_fake");
    char err[4096];
    int rc = run_kit("ulimit -f 0;", err, sizeof err);
    cr_assert_neq(rc, 0, "exit 0 with nothing written: %s", err);
    cr_assert(strstr(err, "run.sh: cannot write in "), "[%s]", err);
    t_sh("rm -rf %s", kit);
}

Test(hw_kit, a_disk_that_fills_during_the_run_fails_it)
{
    make_kit("tests/hw/test_hw_fake tests/mock/test_api_fake");
    char err[4096];
    int rc = run_kit("ulimit -f 2;", err, sizeof err); /* 2 KiB: the report does not fit */
    cr_assert_neq(rc, 0, "exit 0 with the report cut short: %s", err);
    cr_assert(strstr(err, "failed (disk full?)") && strstr(err, "report.json"), "%s", err);
    t_sh("rm -rf %s", kit);
}
