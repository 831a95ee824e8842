/* Host shared objects loaded from memory (cpu-target kernels, host twins:
 * compiler/cpu_load.c) stay the objects they were loaded as when the
 * program reuses descriptor numbers. The memfd's path /proc/self/fd/N was
 * the module's name for dlopen, kept valid by keeping the descriptor open;
 * a program that closed it (a daemon's close loop) made the next module
 * loaded through the same number come back as the old one, its code run in
 * the new one's place. Now no descriptor is kept, and a name already taken
 * is spelled another way. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cpu_abi.h"
#include "hcqtest.h"

TestSuite(host_so, .timeout = 60);

/* a shared object whose which() returns v, as bytes */
static void *build(int v, size_t *size)
{
    char dir[T_TMP_PATH], cmd[4 * T_TMP_PATH], path[T_TMP_PATH + 32];
    t_tmpdir(dir, sizeof dir, "hcq-so");
    snprintf(cmd, sizeof cmd, "printf 'int which(void) { return %d; }\\n' > %s/w.c && cc -shared -fPIC -o %s/w.so %s/w.c",
             v, dir, dir, dir);
    if (system(cmd)) cr_skip_test("no C compiler to build a test shared object");
    snprintf(path, sizeof path, "%s/w.so", dir);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    void *b = malloc(1 << 20);
    *size = fread(b, 1, 1 << 20, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    return b;
}

static int call_which(void *dl)
{
    int (*which)(void);
    *(void **)&which = dlsym(dl, "which");
    cr_assert_not_null(which);
    return which();
}

Test(host_so, a_reused_descriptor_number_never_brings_back_an_older_module)
{
    size_t n1, n2, n3;
    void *b1 = build(1, &n1), *b2 = build(2, &n2), *b3 = build(3, &n3);
    void *d1 = NULL, *d2 = NULL, *d3 = NULL;
    int f1 = -1, f2 = -1, f3 = -1;
    T_OK(cc_host_so_open(b1, n1, "test object", "", &d1, &f1));
    cr_assert_eq(call_which(d1), 1);
    /* the program closes whatever the loader kept (a close loop) */
    if (f1 >= 0) close(f1);
    T_OK(cc_host_so_open(b2, n2, "test object", "", &d2, &f2));
    cr_assert_eq(call_which(d2), 2, "the second module came back as the first");
    if (f2 >= 0) close(f2);
    T_OK(cc_host_so_open(b3, n3, "test object", "", &d3, &f3));
    cr_assert_eq(call_which(d3), 3, "the third module came back as an older one");
    cr_assert_eq(call_which(d1), 1);
    cc_host_so_close(d1, -1);
    cc_host_so_close(d2, -1);
    cc_host_so_close(d3, f3);
    free(b1);
    free(b2);
    free(b3);
}
