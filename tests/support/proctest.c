/* Test support: programs run by a test (proctest.h). */
#include "proctest.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int t_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    if (st < 0) return 128;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

char *t_slurp(const char *path, size_t max)
{
    char *buf = calloc(1, max + 1);
    cr_assert_not_null(buf);
    FILE *f = fopen(path, "r");
    if (f) {
        buf[fread(buf, 1, max, f)] = 0;
        fclose(f);
    }
    return buf;
}

const char *t_hcq_bin(void)
{
#ifdef T_SANITIZED
    cr_skip_test("a sanitizer build of libhcqmock.so (and of the other preload libraries) cannot load into an "
                 "uninstrumented program, whose sanitizer runtime must come first; the plain build tests this");
#endif
    const char *h = getenv("HCQ_TEST_HCQ_BIN");
    return h && *h ? h : "build/hcq";
}

const char *t_mock_preload_lib(void)
{
    static char lib[PATH_MAX];
    char beside[PATH_MAX];
    snprintf(beside, sizeof beside, "%s", t_hcq_bin());
    char *slash = strrchr(beside, '/');
    snprintf(slash ? slash + 1 : beside, sizeof beside - (size_t)(slash ? slash + 1 - beside : 0), "libhcqmock.so");
    cr_assert_eq(access(beside, R_OK), 0, "%s is built beside hcq (make all)", beside);
    cr_assert_not_null(realpath(beside, lib), "%s", beside);
    return lib;
}

void t_kept_path(char *buf, size_t size, const char *name)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", t_mock_preload_lib());
    char *slash = strrchr(dir, '/');
    cr_assert_not_null(slash);
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/test-kept");
    cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
    int n = snprintf(buf, size, "%s/%s", dir, name);
    cr_assert(n > 0 && (size_t)n < size, "%s/%s does not fit %zu bytes", dir, name, size);
}
