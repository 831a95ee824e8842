/* hcq compile of kernels you give it: serialized IR files and directories
 * of them (what a run with HCQ_DUMP leaves), for a target, with -o writing
 * the binaries; bad files are clear errors; HCQ_DEBUG=3 shows the IR of
 * a mock target's kernel. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
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
    char dir[] = "/tmp/hcq-compile-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char k[128], out[128], args[512];
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
    /* directories of them: every .hcqir in each, -o a directory where each
     * binary is named after its file, and a name taken already is not
     * overwritten (kernels of different shapes share names) */
    write_kernel(k, tk_vadd_u32n());
    char k2[200], k3[200], sub[100], od[160];
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
    char b1[200], b2[200], b3[200];
    snprintf(b1, sizeof b1, "%s/add1.co", od);
    snprintf(b2, sizeof b2, "%s/copy.co", od);
    snprintf(b3, sizeof b3, "%s/copy-2.co", od);
    cr_assert(stat(b1, &sb) == 0 && stat(b2, &sb) == 0 && stat(b3, &sb) == 0, "binaries in %s", od);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(tools_compile, what_is_not_a_kernel_is_a_clear_error)
{
    char dir[] = "/tmp/hcq-compile-bad-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[300], path[160];
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
    char dir[] = "/tmp/hcq-compile-dump-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
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
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q -- '-add1.hcqir$'", dir);
    cr_assert_eq(system(cmd), 0, "no add1.hcqir in %s", dir);
    char args[300];
    int st;
    snprintf(args, sizeof args, "compile --target mock-gfx942 %s", dir);
    char *o = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", o);
    cr_assert(strstr(o, "add1") && strstr(o, "compiled"), "%s", o);
    free(o);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
