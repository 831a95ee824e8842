/* difftest: the differential test for as many kernels or as long as asked
 * (see diff.h). `make difftest` runs it; `make test` runs a fixed few
 * hundred seeds through tests/unit/test_difftest.c instead.
 *
 *   difftest [--seed S] [-n KERNELS] [--seconds T] [--jobs J] [--engines cpu,...]
 *            [--no-shrink] [--vectors] [--ops N] [--steps N] [--dump]
 *
 * Seeds S, S+1, ... run until KERNELS are done or T seconds have passed
 * (whichever first; 0 = no limit), in J worker processes. A failure prints
 * its shrunk repro; the last line gives the totals and the rate. Exit
 * status 1 if anything failed. --dump prints the kernels instead. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/diff/diff.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: difftest [--seed S] [-n KERNELS] [--seconds T] [--jobs J] [--engines cpu,...] "
                    "[--no-shrink] [--vectors] [--ops N] [--steps N] [--dump]\n");
    exit(2);
}

static void worker(uint64_t seed, uint64_t kernels, double seconds, unsigned job, unsigned jobs,
                   const diff_config *cfg, int fd)
{
    diff_stats st = {0};
    double t0 = now();
    for (uint64_t i = job; i < kernels; i += jobs) {
        if (seconds > 0 && now() - t0 > seconds) break;
        char *report = NULL;
        hcq_status s = diff_run_seed(seed + i, cfg, &st, &report);
        if (s) {
            const char *text = report ? report : hcq_error_message();
            if (write(STDERR_FILENO, text, strlen(text)) < 0) { /* nothing better to do */
            }
            if (!report) fprintf(stderr, "\ndifftest seed %" PRIu64 ": %s\n", seed + i, hcq_status_name(s));
        }
        free(report);
    }
    if (write(fd, &st, sizeof st) != (ssize_t)sizeof st) _exit(4);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1, kernels = 1000;
    double seconds = 0;
    unsigned jobs = 1;
    diff_config cfg = {0};
    bool dump = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-shrink")) cfg.no_shrink = true;
        else if (!strcmp(a, "--vectors")) cfg.gen.vectors = true;
        else if (!strcmp(a, "--dump")) dump = true;
        else if (!v) usage();
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "-n") || !strcmp(a, "--kernels")) kernels = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--seconds")) seconds = strtod(v, NULL), i++;
        else if (!strcmp(a, "--jobs")) jobs = (unsigned)strtoul(v, NULL, 0), i++;
        else if (!strcmp(a, "--engines")) cfg.engines = v, i++;
        else if (!strcmp(a, "--ops")) cfg.gen.max_ops = (uint32_t)strtoul(v, NULL, 0), i++;
        else if (!strcmp(a, "--steps")) cfg.gen.steps = (uint32_t)strtoul(v, NULL, 0), i++;
        else usage();
    }
    if (!jobs) jobs = 1;
    if (dump) { /* the cases, not run */
        for (uint64_t i = 0; i < kernels; i++) {
            irg_case c;
            if (irg_generate(seed + i, &cfg.gen, &c)) return 1;
            char *d = hcq_kernel_dump(c.k);
            printf("seed %" PRIu64 ": %u x %u x %u groups of %u x %u x %u\n%s", seed + i, c.ng[0], c.ng[1], c.ng[2],
                   c.ls[0], c.ls[1], c.ls[2], d ? d : "");
            free(d);
            irg_case_free(&c);
        }
        return 0;
    }
    if (!kernels && seconds <= 0) usage();
    if (!kernels) kernels = UINT64_MAX;
    if (hcq_toolchain_clang(NULL, NULL) != HCQ_OK)
        fprintf(stderr, "difftest: %s; the compiled engines will fail\n", hcq_error_message());
    int pfd[2];
    if (pipe(pfd)) {
        perror("difftest: pipe");
        return 2;
    }
    double t0 = now();
    for (unsigned j = 0; j < jobs; j++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("difftest: fork");
            return 2;
        }
        if (pid == 0) {
            close(pfd[0]);
            worker(seed, kernels, seconds, j, jobs, &cfg, pfd[1]);
            _exit(0);
        }
    }
    close(pfd[1]);
    diff_stats total = {0};
    unsigned got = 0;
    diff_stats st;
    for (ssize_t n; (n = read(pfd[0], &st, sizeof st)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n != (ssize_t)sizeof st) break;
        got++;
        total.kernels += st.kernels;
        total.ops += st.ops;
        total.failures += st.failures;
        for (unsigned e = 0; e < DIFF_MAX_ENGINES; e++) {
            total.runs[e] += st.runs[e];
            total.skipped[e] += st.skipped[e];
        }
    }
    int bad = 0;
    for (unsigned j = 0; j < jobs; j++) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) bad = 1;
    }
    double dt = now() - t0;
    const char *names[DIFF_MAX_ENGINES];
    unsigned ne = diff_engines(names, DIFF_MAX_ENGINES);
    printf("difftest: %" PRIu64 " kernels (%" PRIu64 " IR ops) from seed %" PRIu64 " in %.1f s, %.1f kernels/s, %u jobs;",
           total.kernels, total.ops, seed, dt, dt > 0 ? (double)total.kernels / dt : 0.0, jobs);
    for (unsigned e = 0; e < ne; e++)
        printf(" %s %" PRIu64 " compared, %" PRIu64 " skipped;", names[e], total.runs[e], total.skipped[e]);
    printf(" %" PRIu64 " failed\n", total.failures);
    if (got != jobs) fprintf(stderr, "difftest: %u of %u workers did not report (crashed?)\n", jobs - got, jobs);
    return total.failures || bad || got != jobs ? 1 : 0;
}
