/* The hcq command fails loudly (issue 26): a GPU present but inaccessible is
 * listed with its error and fix and makes `hcq info` exit 1; `hcq bench`
 * that would measure nothing is an error; and every command's --help and
 * man page agree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "hcqtest.h"

TestSuite(tools_loud, .timeout = 120);


Test(tools_loud, info_lists_a_present_but_inaccessible_gpu_and_exits_1)
{
    const char *nodes[] = {"/dev/kfd", "/dev/nvidia0"}, *ids[] = {"AMD:0", "NV:0"}, *groups[] = {"render", "video"};
    for (int i = 0; i < 2; i++) {
        char env[128], want[64];
        snprintf(env, sizeof env, "HCQ_MOCK=1 HCQ_MOCK_CONFIG=open_fail=%s:EACCES", nodes[i]);
        int st;
        char *out = t_run_hcq(env, "info --no-telemetry", &st);
        cr_assert_eq(st, 1, "%s: %s", nodes[i], out);
        snprintf(want, sizeof want, "%s  present but cannot be opened", ids[i]);
        cr_assert(strstr(out, want) && strstr(out, "EACCES") && strstr(out, groups[i]), "on stdout, with the fix: %s",
                  out);
        free(out);
        out = t_run_hcq(env, "info --no-telemetry --json", &st);
        cr_assert_eq(st, 1, "%s: %s", nodes[i], out);
        snprintf(want, sizeof want, "\"id\": \"%s\",\n    \"accessible\": false", ids[i]);
        cr_assert(strstr(out, want) && strstr(out, "\"error\": \"") && strstr(out, "usermod"), "%s", out);
        cr_assert(strstr(out, "\"accessible\": true"), "the others are listed as usual: %s", out);
        free(out);
    }
}

Test(tools_loud, bench_that_measures_nothing_fails)
{
    int st;
    char *out = t_run_hcq("HCQ_DEVICE=CPU", "bench --quick --only gpu", &st);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "--only gpu: no such part") && strstr(out, "launch, copy, kernels, matmul and allreduce"), "%s", out);
    free(out);
}

/* runs a shell command line; its stdout (free it) */
static char *sh(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t cap = 1 << 16, n = 0, got;
    char *out = malloc(cap);
    while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) out = realloc(out, cap *= 2);
    }
    out[n] = 0;
    pclose(p);
    return out;
}

static const char *hcq_bin(void)
{
    const char *b = getenv("HCQ_TEST_HCQ_BIN");
    return b ? b : "build/hcq";
}

/* the options a usage line names (-x, --xyz), sorted, one a line */
#define OPTS "grep -o -- '-[-a-z]*[a-z]' | sort -u"

/* Every command's options in its --help usage line are the options of its
 * synopsis in hcq(1) (man/hcq.1), and its own page hcq-CMD(1) is what
 * scripts/hcq-man.sh makes of its --help now (not stale). */
Test(tools_loud, every_command_s_help_and_man_pages_agree)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "scripts/hcq-man.sh %s --commands", hcq_bin());
    char *cmds = sh(cmd);
    cr_assert(strstr(cmds, "info") && strstr(cmds, "trace"), "%s", cmds);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", hcq_bin());
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    int n = 0;
    for (char *c = strtok(cmds, "\n"); c; c = strtok(NULL, "\n"), n++) {
        snprintf(cmd, sizeof cmd, "%s %s --help | head -1 | " OPTS, hcq_bin(), c);
        char *help = sh(cmd);
        snprintf(cmd, sizeof cmd,
                 "awk '/^\\.TP/ { getline; if ($2 == \"%s\") { print; exit } }' man/hcq.1 | sed 's/\\\\-/-/g' | " OPTS,
                 c);
        char *man = sh(cmd);
        cr_assert_str_eq(man, help, "hcq(1)'s synopsis of %s names the options\n%sbut hcq %s --help names\n%s", c,
                         man, c, help);
        free(help);
        free(man);
        snprintf(cmd, sizeof cmd, "scripts/hcq-man.sh %s %s | cmp - %s/man/hcq-%s.1 2>&1", hcq_bin(), c, dir, c);
        char *diff = sh(cmd);
        cr_assert_str_empty(diff, "%s/man/hcq-%s.1 is not what its --help makes now (make man): %s", dir, c, diff);
        free(diff);
    }
    cr_assert_geq(n, 7);
    free(cmds);
}

/* An option table in --help becomes a list in the man page, each option at
 * the start of its own line at any width, not text refilled across the
 * columns (hcq-trace(1) used to come out as broken lines at 80). */
Test(tools_loud, man_pages_keep_option_tables_as_lists)
{
    char *have = sh("command -v man");
    if (!have[0]) cr_skip_test("man is not installed");
    free(have);
    char cmd[1024], dir[512];
    snprintf(dir, sizeof dir, "%s", hcq_bin());
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(cmd, sizeof cmd, "%s trace --help | sed -n 's/^  *\\(-[-a-z]*\\).*/\\1/p'", hcq_bin());
    char *tags = sh(cmd);
    snprintf(cmd, sizeof cmd, "MANWIDTH=80 man -l %s/man/hcq-trace.1 2>/dev/null | sed 's/\\xe2\\x80\\x90/-/g'", dir);
    char *page = sh(cmd);
    int n = 0;
    for (char *t = strtok(tags, "\n"); t; t = strtok(NULL, "\n"), n++) {
        char want[64];
        snprintf(want, sizeof want, "\n       %s", t);
        cr_assert(strstr(page, want), "%s does not start a line of hcq-trace(1) at 80 columns:\n%s", t, page);
    }
    cr_assert_geq(n, 6, "the options of hcq trace --help: %s", tags);
    free(tags);
    free(page);
}
