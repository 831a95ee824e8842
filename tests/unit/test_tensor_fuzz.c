/* The differential tensor fuzzer (tests/tfuzz) in `make test`: 120 seeded
 * random programs (200 in CI's long form, HCQ_TEST_LONG=1) of tensor API calls, each run on every device the other
 * suites use (the devices present, CPU+ir, the mock GPUs; HCQ_TEST_DEVICES
 * picks others) and in the C reference, every output element compared.
 * Devices that compile their kernels (the CPU's C, the mocks' cubins and
 * code objects and their host twins) take part in the first 10 programs:
 * a cold kernel cache costs them a compile per kernel (50 compiled
 * programs took 86 s of CPU of a cold make test, 20 of 300 took 23 s,
 * 2026-11-27; with a warm cache the whole run takes a few seconds). Under sanitizers (SAN set by
 * scripts/run-tests.sh): 80 programs, 10 of them compiled.
 * `make tfuzz` runs thousands. A disagreement prints its shrunk repro. */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Test(tensor_fuzz, programs_agree_on_every_device_and_with_the_reference, .timeout = 1200)
{
    char self[4096], cmd[8192];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert(n > 0, "cannot find the test's executable");
    self[n] = 0;
    const char *san = getenv("SAN");
    bool sanitized = san && *san;
    /* build/tests/unit/test_tensor_fuzz -> build/tests/tfuzz/tfuzz */
    snprintf(cmd, sizeof cmd, "'%s/../tfuzz/tfuzz' --graphs %d --compiled-graphs %d --seed 1 2>&1", dirname(self),
             sanitized ? 80 : getenv("HCQ_TEST_LONG") ? 200 : 120, 10);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen %s", cmd);
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof line, p)) {
        fputs(line, stdout);
        if (!strncmp(line, "tfuzz: ", 7)) snprintf(last, sizeof last, "%s", line);
    }
    int st = pclose(p);
    fflush(stdout);
    cr_assert(WIFEXITED(st), "tfuzz did not exit normally (status %d)", st);
    cr_assert_eq(WEXITSTATUS(st), 0, "tfuzz failed (exit %d): %s(the repro is above)", WEXITSTATUS(st), last);
}
