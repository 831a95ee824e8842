/* The hcq command, run as a user runs it (HCQ_TEST_HCQ_BIN, set by
 * scripts/run-tests.sh): info, demo, decode of a real dump, bench. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *run(const char *env, const char *args, int *status)
{
    const char *bin = getenv("HCQ_TEST_HCQ_BIN");
    if (!bin) bin = "build/hcq";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", env ? env : "", bin, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) out = realloc(out, cap *= 2);
    }
    out[n] = 0;
    *status = pclose(p);
    return out;
}

Test(tools, info_lists_the_cpu_device_as_json)
{
    int st;
    char *out = run(NULL, "info --json", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "\"id\": \"CPU\"") && strstr(out, "\"fixed_memory_bytes\""), "%s", out);
    free(out);
}

Test(tools, demo_checks_its_results, .timeout = 120)
{
    int st;
    char *out = run("HCQ_DEVICE=CPU", "demo --quick", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "all results match"), "%s", out);
    cr_assert(strstr(out, "test accuracy") || strstr(out, "training: skipped"), "%s", out);
    free(out);
}

Test(tools, decode_reads_a_dump_of_the_demo, .timeout = 120)
{
    char dir[] = "/tmp/hcq-dump-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char env[256], args[512];
    snprintf(env, sizeof env, "HCQ_DEVICE=CPU HCQ_DUMP=%s", dir);
    int st;
    free(run(env, "demo --quick", &st));
    cr_assert_eq(st, 0);
    snprintf(args, sizeof args, "decode %s", dir);
    char *out = run(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", out);
    /* launches name their kernel: the dump records each program's name */
    cr_assert(strstr(out, "exec      `") && strstr(out, "copy      ") && strstr(out, "signal    signal"),
              "%s", out);
    free(out);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen("/tmp/hcq-not-a-dump", "w"); /* (/dev/null is refused: not a regular file) */
    cr_assert_not_null(f);
    fputs("words", f);
    fclose(f);
    out = run(NULL, "decode /tmp/hcq-not-a-dump", &st);
    unlink("/tmp/hcq-not-a-dump");
    cr_assert_neq(st, 0, "a file that is not a dump needs a format");
    cr_assert(strstr(out, "not an .hcqdump file"), "%s", out);
    free(out);
}

Test(tools, bench_prints_every_figure_as_json, .timeout = 120)
{
    int st;
    char *out = run("HCQ_DEVICE=CPU", "bench --quick --json", &st);
    cr_assert_eq(st, 0, "%s", out);
    const char *want[] = {"launch: host enqueue per launch", "launch: empty kernel round trip",
                          "graph 1000 nodes: replay per node", "copy host->device", "copy device->host",
                          "elementwise", "reduction", "matmul", "\"median_gib_s\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no %s in: %s", want[i], out);
    free(out);
}

Test(tools, unknown_commands_and_bad_devices_fail_clearly)
{
    int st;
    char *out = run(NULL, "frobnicate", &st);
    cr_assert_neq(st, 0);
    cr_assert(strstr(out, "unknown command"), "%s", out);
    free(out);
    out = run(NULL, "bench --device TPU:0", &st);
    cr_assert_neq(st, 0);
    cr_assert(strstr(out, "unknown device"), "%s", out);
    free(out);
}
