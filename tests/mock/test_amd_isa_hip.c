/* A whole HIP program built by Debian's hipcc (ROCm 5.2) for gfx90a, run
 * by ROCm's own runtime on the preloaded mock (libhcqmock.so) with the ISA
 * executor (HCQ_MOCK_SHADER=isa): the runtime's blit kernels and the
 * program's (tests/corpus/hip/rocm_prog.hip: dynamic shared memory,
 * shuffles, shared and global atomics, f16, a softmax, f64 division and
 * square root as LLVM 14 writes them, code object v4) reach the executor
 * through the AQL kernel-dispatch packets the runtime writes, and the
 * program checks each result against C. Skips, saying why, where hipcc is
 * missing, where ROCm's runtime finds no device on this build's mock, and
 * where this build's AQL packet processor does not hand machine code to
 * the executor (the mock then stops the queue at the runtime's first
 * kernel, saying so). */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hcqtest.h"
#include "proctest.h"

TestSuite(amd_isa_hip, .timeout = 240);

Test(amd_isa_hip, a_hipcc_program_runs_on_the_executor)
{
    if (t_sh("command -v hipcc >/dev/null 2>&1 && test -f /usr/include/hip/hip_runtime.h"))
        cr_skip_test("hipcc and the HIP headers (Debian packages hipcc, libamdhip64-dev) are not installed");
    const char *lib = t_mock_preload_lib();
    char src[512];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    cr_assert_not_null(slash);
    snprintf(slash, sizeof src - (size_t)(slash - src), "/../corpus/hip/rocm_prog.hip");
    char *text = t_slurp(src, 1 << 16);
    cr_assert(text[0], "%s cannot be read", src);
    /* hipcc takes a while: the program is built once per source and kept */
    unsigned long hash = 5381;
    for (const char *c = text; *c; c++) hash = hash * 33 + (unsigned char)*c;
    free(text);
    /* the HIP runtime unpacks code objects into $TMPDIR and leaves them:
     * the program runs with a TMPDIR of the test's */
    char rt[T_TMP_PATH];
    setenv("TMPDIR", t_tmpdir(rt, sizeof rt, "hcq-hip-rt"), 1);
    char bin[PATH_MAX], out_path[PATH_MAX + 8], cmd[4 * PATH_MAX], name[32];
    snprintf(name, sizeof name, "hcq-isa-hip-%lx", hash);
    t_kept_path(bin, sizeof bin, name);
    if (access(bin, X_OK))
        cr_assert_eq(t_sh("timeout 170 hipcc --offload-arch=gfx90a -o %s.tmp %s >/dev/null 2>&1 && mv %s.tmp %s", bin, src,
                        bin, bin),
                     0, "hipcc failed on %s", src);
    snprintf(out_path, sizeof out_path, "%s.out", bin);
    snprintf(cmd, sizeof cmd,
             "HCQ_MOCK_SHADER=isa HCQ_MOCK_CONFIG=amd=gfx90a LD_PRELOAD=%s exec timeout 120 %s > %s 2>&1", lib, bin,
             out_path);
    unlink(out_path);
    /* in a process group of its own: a stopped queue leaves the program
     * waiting for ever, so it is killed once the mock has said so */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (!pid) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = 0, rc = -1;
    bool stopped = false;
    for (int i = 0; i < 1500 && rc < 0; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            break;
        }
        char *chunk = t_slurp(out_path, 1 << 16);
        stopped = strstr(chunk, "holds neither mock code");
        free(chunk);
        if (stopped) break;
        usleep(100000);
    }
    if (rc < 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    char *out = t_slurp(out_path, 1 << 17);
    cr_assert_not_null(out);
    unlink(out_path);
    /* what the mock's KFD and AQL side serve ROCm's runtime is
     * tests/mock/test_amd_rocm.c's to hold; here only where it gets that far */
    if (strstr(out, "hipErrorInvalidDevice") || strstr(out, "hipErrorNoDevice"))
        cr_skip_test("ROCm's runtime finds no device on this build's mock: %s", out);
    if (stopped && strstr(out, "AQL kernel dispatch"))
        cr_skip_test("this build's AQL packet processor does not hand machine code to the ISA executor: %s", out);
    static const char *const kernels[] = {"dyn_rev", "rowsum", "hist", "half", "softmax", "f64", "results"};
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s right\n", kernels[i]);
        cr_assert(strstr(out, want), "the program does not say `%s right` (exit %d): %s", kernels[i], rc, out);
    }
    cr_assert_eq(rc, 0, "%s", out);
    free(out);
}
