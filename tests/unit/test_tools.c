/* The hcq command, run as a user runs it (HCQ_TEST_HCQ_BIN, set by
 * scripts/run-tests.sh): info, demo, decode of a real dump, bench. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hcqtest.h"
#include <unistd.h>

static char *run(const char *env, const char *args, int *status)
{
    const char *bin = getenv("HCQ_TEST_HCQ_BIN");
    if (!bin) bin = "build/hcq";
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s%s %s %s 2>&1", T_CHILD_SAN_ENV, env ? env : "", bin, args);
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
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-dump");
    char env[T_TMP_PATH + 64], args[512];
    snprintf(env, sizeof env, "HCQ_DEVICE=CPU HCQ_DUMP=%s", dir);
    int st;
    free(run(env, "demo --no-train", &st));
    cr_assert_eq(st, 0);
    snprintf(args, sizeof args, "decode %s", dir);
    char *out = run(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", out);
    /* launches name their kernel: the dump records each program's name */
    cr_assert(strstr(out, "exec      `") && strstr(out, "copy      ") && strstr(out, "signal    signal"),
              "%s", out);
    free(out);
    /* a second run into the same directory is refused, loudly (--no-train:
     * the launches, copies and signals without the training's repeats of
     * them, which are not what this checks) */
    out = run(env, "demo --no-train", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "already holds") && strstr(out, "holds one run"), "%s", out);
    free(out);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    char not_dump[T_TMP_PATH];
    FILE *f = fdopen(t_tmpfile(not_dump, sizeof not_dump, "hcq-not-a-dump"), "w"); /* (/dev/null is refused: not a regular file) */
    cr_assert_not_null(f);
    fputs("words", f);
    fclose(f);
    snprintf(args, sizeof args, "decode %s", not_dump);
    out = run(NULL, args, &st);
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
                          "elementwise", "reduction", "matmul", "\"median_gib_s\"",
                          /* the tensor layer's matmuls, at --quick's size */
                          "matmul 256x256x256 f32 (tensor)", "matmul 256x256x256 f16 (tensor)",
                          "matmul 256x256x256 bf16 (tensor)", "\"TFLOP/s\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no %s in: %s", want[i], out);
    free(out);
}

/* --matmul-sizes picks the tensor matmuls' sizes; --beam times them again
 * after a plan search where the device allows one (not the mock GPUs,
 * which say why; the CPU device as the interpreter, so that no candidate
 * waits for clang); bad values are usage errors */
Test(tools, bench_matmul_sizes_and_beam, .timeout = 120)
{
    int st;
    char *out = run("HCQ_DEVICE=CPU HCQ_CPU_TARGET=ir HCQ_BEAM_BUDGET_MS=300", "bench --only matmul --matmul-sizes 32,48 --beam 2 --json", &st);
    cr_assert_eq(st, 0, "%s", out);
    const char *want[] = {"matmul 32x32x32 f32 (tensor)", "matmul 48x48x48 bf16 (tensor)",
                          "matmul 32x32x32 f16 (tensor, beam 2)", "matmul 48x48x48 f32 (tensor, beam 2)"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no %s in: %s", want[i], out);
    cr_assert_null(strstr(out, "256x256"), "only the sizes asked for: %s", out);
    free(out);
    out = run("HCQ_MOCK=1", "bench --device NV:0 --only matmul --matmul-sizes 16 --beam 2", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "matmul 16x16x16 f32 (tensor)") && strstr(out, "--beam 2: ") && strstr(out, "emulated"), "%s", out);
    cr_assert_null(strstr(out, "(tensor, beam"), "%s", out);
    free(out);
    const char *bad[] = {"bench --matmul-sizes 8", "bench --matmul-sizes 64,x", "bench --matmul-sizes 1,2,3,4,5,6,7,8,9",
                         "bench --beam 0", "bench --beam 65"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        out = run(NULL, bad[i], &st);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: a usage error (exit 2): %s", bad[i], out);
        cr_assert(strstr(out, "hcq bench: --"), "%s: %s", bad[i], out);
        free(out);
    }
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

Test(tools, every_command_takes_help_and_refuses_unknown_options)
{
    const char *cmds[] = {"info", "demo", "decode", "trace", "bench", "compile", "top", "test-devices"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char args[64];
        int st;
        snprintf(args, sizeof args, "%s -h", cmds[i]);
        char *out = run(NULL, args, &st);
        cr_assert_eq(st, 0, "%s: %s", args, out);
        cr_assert(strstr(out, "usage: hcq"), "%s: %s", args, out);
        free(out);
        snprintf(args, sizeof args, "%s --jsn", cmds[i]);
        out = run(NULL, args, &st);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s exited %d: %s", args, st, out);
        cr_assert(strstr(out, "unknown option `--jsn`"), "%s: %s", args, out);
        free(out);
    }
}

/* 600 s: with a cold kernel cache the demo compiles its kernels for both
 * mock GPUs, and its training runs there as host twins (on 2048 images, as
 * --quick does elsewhere), while make test runs another suite beside it */
Test(tools, without_a_gpu_demo_runs_on_the_mock_gpus, .timeout = 600)
{
    T_SKIP_MOCK_DEMO_UNDER_TSAN();
    int st;
    char *out = run(NULL, "demo", &st);
    cr_assert_eq(st, 0, "%s", out);
    if (strstr(out, "No GPU here")) {
        cr_assert(strstr(out, "/dev/nvidiactl") && strstr(out, "KFD topology"), "why, per kind: %s", out);
        cr_assert(strstr(out, "mock GPUs instead") && strstr(out, "HCQ_MOCK=1"), "%s", out);
        cr_assert(strstr(out, "hcq demo on NV:0") && strstr(out, "hcq demo on AMD:0"), "%s", out);
        cr_assert(strstr(out, "[mock GPU: emulated"), "%s", out);
    }
    cr_assert(strstr(out, "all results match"), "%s", out);
    free(out);
}

/* issue 22: with any one of the NV first-run paths refused by the mock's
 * model (it hangs there), the demo passes through the other. Each run is
 * the whole demo, so this is long: HCQ_TEST_REFUSE_DEMO=1 runs it (the
 * fast form, every path with a launch, copies and waits, is
 * tests/mock/test_nv_paths.c). */
Test(tools, demo_passes_with_each_nv_path_refused, .timeout = 3600)
{
    if (!getenv("HCQ_TEST_REFUSE_DEMO"))
        cr_skip_test("long (the demo once per refused path): set HCQ_TEST_REFUSE_DEMO=1 to run it");
    T_SKIP_MOCK_DEMO_UNDER_TSAN();
    const char *names[] = {"acq-strict-geq", "acq-circ-geq", "qmd-v4", "qmd-v3",
                           "local-lazy", "local-min", "ce-release64", "ce-release32"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char env[128];
        snprintf(env, sizeof env, "HCQ_MOCK=1 HCQ_MOCK_CONFIG=refuse=%s", names[i]);
        int st;
        char *out = run(env, "demo NV:0 --quick", &st);
        cr_assert_eq(st, 0, "refuse=%s: %s", names[i], out);
        cr_assert(strstr(out, "all results match"), "refuse=%s: %s", names[i], out);
        free(out);
    }
}

Test(tools, demo_stops_at_its_first_error, .timeout = 120)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-demo-cache");
    char env[T_TMP_PATH + 64];
    snprintf(env, sizeof env, "HCQ_CACHE_DIR=%s HCQ_CLANG=/nonexistent/clang", dir);
    int st;
    char *out = run(env, "demo CPU", &st);
    cr_assert_neq(st, 0, "%s", out);
    int errors = 0;
    for (const char *p = out; (p = strstr(p, "hcq: ")); p++) errors++;
    cr_assert_eq(errors, 1, "one error, then it stops: %s", out);
    cr_assert(strstr(out, "demo FAILED") && !strstr(out, "inf ms") && !strstr(out, "e+30"), "%s", out);
    free(out);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(tools, info_and_open_errors_say_why_there_is_no_device)
{
    int st;
    char *out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=open_fail=/dev/nvidiactl:EACCES", "info", &st);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a driver that refuses this user is an error: %s", out);
    cr_assert(strstr(out, "NV  refused (a GPU may be present): /dev/nvidiactl: EACCES") && strstr(out, "`video` group"),
              "%s", out);
    free(out);
    out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=open_fail=/dev/nvidiactl:EACCES", "demo NV:0", &st);
    cr_assert_neq(st, 0);
    cr_assert(strstr(out, "/dev/nvidiactl: EACCES") && strstr(out, "usermod -aG video"), "%s", out);
    free(out);
    out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=open_fail=/dev/kfd:EPERM", "demo AMD:0", &st);
    cr_assert_neq(st, 0);
    cr_assert(strstr(out, "/dev/kfd: EPERM") && strstr(out, "`render` group"), "%s", out);
    free(out);
    out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x0,amd=gfx1100x0", "info --json", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "\"absent\": [") && strstr(out, "\"kind\": \"NV\"") && strstr(out, "has no NVIDIA GPU") &&
                  strstr(out, "has no AMD GPU"),
              "%s", out);
    free(out);
}

/* several GPUs of a kind: the peer-access matrix, in text and JSON, with
 * the reason where copies go through host memory */
Test(tools, info_prints_the_peer_access_matrix)
{
    int st;
    char *out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x2,nv_peer=nvlink,amd=gfx1100x2,amd_peer=none",
                    "info --no-telemetry", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "NV peer access") && strstr(out, "AMD peer access"), "%s", out);
    const char *nv = strstr(out, "NV peer access"), *amd = strstr(out, "AMD peer access");
    cr_assert(strstr(nv, "peer") && strstr(amd, "host"), "%s", out);
    free(out);
    out = run("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x2,nv_peer=none,amd=gfx1100x0", "info --json --no-telemetry", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "\"peers\": [") && strstr(out, "\"from\": \"NV:0\", \"to\": \"NV:1\", \"access\": \"host\"") &&
                  strstr(out, "no peer path"),
              "%s", out);
    free(out);
}

/* a trace file or dump directory hcq cannot write is said at the default
 * log level, and the command goes on (tracing to stderr, dumping nothing) */
Test(tools, trace_file_and_dump_failures_are_said_at_the_default_level)
{
    int st;
    char *out = run("HCQ_MOCK=1 HCQ_TRACE=1 HCQ_TRACE_FILE=/nonexistent/dir/t.txt", "info --no-telemetry NV:0", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "HCQ_TRACE_FILE=/nonexistent/dir/t.txt: cannot open it: ENOENT") &&
                  strstr(out, "tracing to stderr") && strstr(out, "NV_ESC_RM_ALLOC"),
              "%s", out);
    free(out);
    out = run("HCQ_MOCK=1 HCQ_DUMP=/nonexistent/dir", "info --no-telemetry NV:0", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "cannot create the dump directory /nonexistent/dir") && strstr(out, "nothing is dumped"),
              "%s", out);
    free(out);
}
