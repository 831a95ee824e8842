/* The runner behind tests/tsan/criterion/criterion.h: every registered test
 * in a forked child (suite init, test, fini), a time limit each, and a
 * Criterion-style summary. */
#include "criterion/criterion.h"
#include "criterion/parameterized.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* tests/support/tmptest.c's: a test's temporary files go with its
 * process, and _exit (below) runs no atexit handler (weak: a program
 * without tmptest links too) */
void t_tmp_cleanup(void) __attribute__((weak));

#define MAX_TESTS 1024

static struct test {
    const char *suite, *name;
    void (*fn)(void);
    const struct criterion_test_extra_data *opts;
    void (*pfn)(void *); /* parameterized: fn is NULL */
    struct criterion_test_params (*params)(void);
} tests[MAX_TESTS];
static int ntests;
static struct suite {
    const char *name;
    const struct criterion_test_extra_data *opts;
} suites[64];
static int nsuites;

void shim_register_test(const char *suite, const char *name, void (*fn)(void),
                        const struct criterion_test_extra_data *opts)
{
    if (ntests < MAX_TESTS) tests[ntests++] = (struct test){suite, name, fn, opts, NULL, NULL};
}

void shim_register_param_test(const char *suite, const char *name, void (*fn)(void *),
                              struct criterion_test_params (*params)(void),
                              const struct criterion_test_extra_data *opts)
{
    if (ntests < MAX_TESTS) tests[ntests++] = (struct test){suite, name, NULL, opts, fn, params};
}

void shim_register_suite(const char *suite, const struct criterion_test_extra_data *opts)
{
    if (nsuites < 64) suites[nsuites++] = (struct suite){suite, opts};
}

void shim_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    fprintf(stderr, "[----] %s:%d: Assertion Failed\n[----]   %s\n[----]   ", file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    if (t_tmp_cleanup) t_tmp_cleanup();
    _exit(1);
}

void shim_skip(const char *fmt, ...)
{
    fprintf(stderr, "[SKIP] ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    if (t_tmp_cleanup) t_tmp_cleanup();
    _exit(77);
}

void shim_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

static const struct criterion_test_extra_data *suite_opts(const char *name)
{
    for (int i = 0; i < nsuites; i++)
        if (!strcmp(suites[i].name, name)) return suites[i].opts;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *filter = NULL; /* --filter SUITE/NAME (a prefix) */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--filter=", 9)) filter = argv[i] + 9;
    int passed = 0, failed = 0, crashed = 0, tested = 0;
    for (int i = 0; i < ntests; i++) {
      struct test *t = &tests[i];
      struct criterion_test_params ps = t->params ? t->params() : (struct criterion_test_params){0, NULL, 1};
      for (size_t pi = 0; pi < ps.length; pi++) {
        char full[256];
        if (t->params) snprintf(full, sizeof full, "%s/%s[%zu]", t->suite, t->name, pi);
        else snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
        if (filter && strncmp(full, filter, strlen(filter))) continue;
        const struct criterion_test_extra_data *so = suite_opts(t->suite);
        double timeout = t->opts->timeout ? t->opts->timeout : so && so->timeout ? so->timeout : 300;
        pid_t pid = fork();
        if (pid == 0) {
            alarm((unsigned)(timeout * 4) + 1); /* TSan is slow */
            void (*init)(void) = t->opts->init ? t->opts->init : so ? so->init : NULL;
            void (*fini)(void) = t->opts->fini ? t->opts->fini : so ? so->fini : NULL;
            if (init) init();
            if (t->fn) t->fn();
            else t->pfn((char *)ps.params + pi * ps.size);
            if (fini) fini();
            fflush(NULL);
            exit(0); /* exit, not _exit: TSan reports at exit */
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
            fprintf(stderr, "[SKIP] %s\n", full);
            continue;
        }
        tested++;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            passed++;
        } else if (WIFEXITED(st)) {
            failed++;
            fprintf(stderr, "[FAIL] %s (exit %d)\n", full, WEXITSTATUS(st));
        } else {
            crashed++;
            fprintf(stderr, "[FAIL] %s: crashed with signal %d\n", full, WTERMSIG(st));
        }
      }
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d \n", tested, passed,
            failed, crashed);
    return failed || crashed ? 1 : 0;
}
