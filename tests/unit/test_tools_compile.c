/* hcq compile of kernels you give it: serialized IR files and directories
 * of them (what a run with HCQ_DUMP leaves), for a target, with -o writing
 * the binaries; bad files are clear errors; HCQ_DEBUG=3 shows the IR of
 * a mock target's kernel; --twins leaves each binary's host twin in the
 * cache, so the mock runs the binary on a machine without the tools. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/twin.h"
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "tools/kernels.h"

TestSuite(tools_compile, .timeout = 120);

static void write_kernel(const char *path, hcq_kernel *k)
{
    void *ir = NULL;
    size_t n = 0;
    T_OK(hcq_kernel_serialize(k, &ir, &n));
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(ir, 1, n, f), n);
    fclose(f);
    free(ir);
    hcq_kernel_destroy(k);
}

Test(tools_compile, a_serialized_kernel_for_a_target_and_its_binary)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-compile");
    char k[2 * T_TMP_PATH], out[2 * T_TMP_PATH], args[8 * T_TMP_PATH];
    snprintf(k, sizeof k, "%s/add1.hcqir", dir);
    snprintf(out, sizeof out, "%s/add1.cubin", dir);
    write_kernel(k, tk_add1());
    snprintf(args, sizeof args, "compile --target mock-sm_90 %s -o %s", k, out);
    int st;
    char *o = t_run_hcq("HCQ_DEBUG=3", args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert(strstr(o, "add1") && strstr(o, "compiled") && strstr(o, "wrote"), "%s", o);
    cr_assert(strstr(o, "hcq[3] IR of kernel 'add1' for mock-sm_90") && strstr(o, "= param 0"),
              "HCQ_DEBUG=3 shows a mock target's IR: %s", o);
    free(o);
    struct stat sb;
    cr_assert_eq(stat(out, &sb), 0);
    cr_assert_gt(sb.st_size, 64);
    /* an output that cannot be written (a full device) is an error, and
     * the file there before stays whole under a failed rewrite */
    if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode)) {
        snprintf(args, sizeof args, "compile --target mock-sm_90 %s -o /dev/full", k);
        o = t_run_hcq("", args, &st);
        cr_assert_neq(st, 0, "-o /dev/full succeeded: %s", o);
        cr_assert(strstr(o, "cannot write /dev/full") && strstr(o, "No space left"), "%s", o);
        free(o);
        cr_assert(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode), "/dev/full is no longer a device");
    }
    stat(out, &sb);
    off_t before = sb.st_size;
    snprintf(args, sizeof args, "compile --target mock-sm_90 %s -o %s", k, out);
    o = t_run_hcq("ulimit -f 0; trap '' XFSZ; " T_CHILD_SAN_ENV, args, &st);
    cr_assert_neq(st, 0, "a write past the file size limit succeeded: %s", o);
    free(o);
    cr_assert(stat(out, &sb) == 0 && sb.st_size == before, "the binary was cut to %lld bytes", (long long)sb.st_size);
    /* directories of them: every .hcqir in each, -o a directory where each
     * binary is named after its file, and a name taken already is not
     * overwritten (kernels of different shapes share names) */
    write_kernel(k, tk_vadd_u32n());
    char k2[2 * T_TMP_PATH], k3[3 * T_TMP_PATH], sub[2 * T_TMP_PATH], od[2 * T_TMP_PATH];
    snprintf(k2, sizeof k2, "%s/copy.hcqir", dir);
    write_kernel(k2, tk_copy_u32());
    snprintf(sub, sizeof sub, "%s/more", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    snprintf(k3, sizeof k3, "%s/copy.hcqir", sub);
    write_kernel(k3, tk_add1());
    snprintf(od, sizeof od, "%s/bin", dir);
    snprintf(args, sizeof args, "compile --target mock-gfx1100 %s %s -o %s", dir, sub, od);
    o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert(strstr(o, "/bin/copy-2.co"), "%s", o);
    free(o);
    char b1[3 * T_TMP_PATH], b2[3 * T_TMP_PATH], b3[3 * T_TMP_PATH];
    snprintf(b1, sizeof b1, "%s/add1.co", od);
    snprintf(b2, sizeof b2, "%s/copy.co", od);
    snprintf(b3, sizeof b3, "%s/copy-2.co", od);
    cr_assert(stat(b1, &sb) == 0 && stat(b2, &sb) == 0 && stat(b3, &sb) == 0, "binaries in %s", od);
    char cmd[3 * T_TMP_PATH];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(tools_compile, what_is_not_a_kernel_is_a_clear_error)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-compile-bad");
    char args[8 * T_TMP_PATH], path[3 * T_TMP_PATH];
    int st;
    snprintf(args, sizeof args, "compile --target mock-sm_90 %s", dir);
    char *o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 1, "%s", o);
    cr_assert(strstr(o, "no .hcqir files in"), "%s", o);
    free(o);
    snprintf(path, sizeof path, "%s/junk.hcqir", dir);
    FILE *f = fopen(path, "wb");
    fputs("not an IR blob at all", f);
    fclose(f);
    snprintf(args, sizeof args, "compile --target mock-sm_90 %s", path);
    o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 1, "%s", o);
    cr_assert(strstr(o, "is not a kernel's serialized IR"), "%s", o);
    free(o);
    o = t_run_hcq(NULL, "compile --target mock-sm_90 --bogus", &st);
    cr_assert_eq(st, 2, "%s", o);
    free(o);
    o = t_run_hcq(NULL, "compile /tmp", &st);
    cr_assert_eq(st, 2, "%s", o);
    cr_assert(strstr(o, "--target"), "%s", o);
    free(o);
    unlink(path);
    rmdir(dir);
}

Test(tools_compile, hcq_dump_keeps_the_ir_of_every_kernel_a_program_builds)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-compile-dump");
    setenv("HCQ_DUMP", dir, 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(""));
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    hcq_program *p = t_load(d, t_k_add1());
    T_OK(hcq_program_free(p));
    T_OK(hcq_device_close(d));
    unsetenv("HCQ_DUMP");
    base_env_reload();
    char cmd[3 * T_TMP_PATH];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q -- '-add1.hcqir$'", dir);
    cr_assert_eq(system(cmd), 0, "no add1.hcqir in %s", dir);
    char args[8 * T_TMP_PATH];
    int st;
    snprintf(args, sizeof args, "compile --target mock-gfx942 %s", dir);
    char *o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert(strstr(o, "add1") && strstr(o, "compiled"), "%s", o);
    free(o);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ** --twins. In a child process (the tools are found once per process):
 * no clang, no ptxas, HCQ_MOCK_SHADER=twin, the cache `dir`; loads the
 * cubin file and runs add1 on the mock H100. Exit 0: ran and right; 3:
 * the load was refused (message on stderr). */
static const char *twin_cache, *twin_cubin;

static void run_cubin_without_tools(void)
{
    setenv("PATH", "/nonexistent", 1);
    setenv("HCQ_CLANG", "/nonexistent/clang", 1);
    setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
    setenv("HCQ_MOCK_SHADER", "twin", 1);
    setenv("HCQ_CACHE_DIR", twin_cache, 1);
    base_env_reload();
    sys_set(mock_sys());
    if (mock_configure("")) _exit(1);
    hcq_device *d = hcq_device_open("NV:0");
    if (!d || strcmp(hcq_device_get_props(d)->target, "sm_90")) _exit(2);
    FILE *f = fopen(twin_cubin, "rb");
    static uint8_t bin[1 << 20];
    size_t n = f ? fread(bin, 1, sizeof bin, f) : 0;
    if (f) fclose(f);
    hcq_program *p = n ? hcq_program_load(d, bin, n) : NULL;
    if (!p) {
        fprintf(stderr, "%s\n", hcq_error_message());
        _exit(3);
    }
    enum { N = 100 };
    uint32_t v[N];
    for (int i = 0; i < N; i++) v[i] = (uint32_t)i;
    hcq_buffer *b = hcq_buffer_alloc(d, sizeof v, HCQ_MEM_DEVICE);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    if (!b || hcq_buffer_copyin(b, 0, v, sizeof v) || hcq_launch(p, a, 2, hcq_dims_1d(2, 64)) ||
        hcq_buffer_copyout(v, b, 0, sizeof v)) {
        fprintf(stderr, "%s\n", hcq_error_message());
        _exit(4);
    }
    for (int i = 0; i < N; i++)
        if (v[i] != (uint32_t)i + 1) _exit(5);
    _exit(0);
}

static int in_child(const char *err_file)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) dup2(fd, 2);
        run_cubin_without_tools();
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

Test(tools_compile, twins_let_the_mock_run_the_binaries_without_the_tools)
{
    char why[256];
    if (!cc_twin_available("sm_90", why, sizeof why)) cr_skip_test("no host twins for sm_90 here: %s", why);
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-compile-twins");
    char k[2 * T_TMP_PATH], cubin[2 * T_TMP_PATH], plain[2 * T_TMP_PATH], with[2 * T_TMP_PATH], err[2 * T_TMP_PATH], args[8 * T_TMP_PATH];
    snprintf(k, sizeof k, "%s/add1.hcqir", dir);
    snprintf(cubin, sizeof cubin, "%s/add1.cubin", dir);
    snprintf(plain, sizeof plain, "%s/plain", dir);
    snprintf(with, sizeof with, "%s/with", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    write_kernel(k, tk_add1());
    twin_cubin = cubin;
    int st;
    /* without --twins the cache holds the cubin only: the mock says what is missing */
    snprintf(args, sizeof args, "compile --target sm_90 --cache-dir %s %s -o %s", plain, k, cubin);
    char *o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert_null(strstr(o, "host twin"), "%s", o);
    free(o);
    twin_cache = plain;
    cr_assert_eq(in_child(err), 3, "%s", slurp(err));
    cr_assert(strstr(slurp(err), "host twin"), "the refusal names the missing twin: %s", slurp(err));
    /* with --twins the same cubin runs on the mock without clang or ptxas */
    snprintf(args, sizeof args, "compile --target sm_90 --twins --cache-dir %s %s -o %s", with, k, cubin);
    o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert(strstr(o, "add1") && strstr(o, "+ host twin"), "%s", o);
    free(o);
    twin_cache = with;
    cr_assert_eq(in_child(err), 0, "%s", slurp(err));
    /* a target whose binaries have no twin is a clear error */
    o = t_run_hcq(NULL, "compile --target cpu --twins", &st);
    cr_assert_eq(st, 2, "%s", o);
    cr_assert(strstr(o, "no host twin"), "%s", o);
    free(o);
    char cmd[3 * T_TMP_PATH];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
