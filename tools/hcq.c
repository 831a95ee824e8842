#include "tools/tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"info", tool_info, "devices, their properties and what their drivers report (--json)"},
    {"top", tool_top, "temperatures, power, clocks, utilization, processes, refreshed (--json)"},
    {"demo", tool_demo, "the main job: kernels on the default device, checked against C"},
    {"decode", tool_decode, "command streams (HCQ_MOCK_DUMP / HCQ_DUMP dumps) as text"},
    {"trace", tool_trace, "run a program and decode its driver ioctls (LD_PRELOAD)"},
    {"bench", tool_bench, "launch overhead, graph replay, copy and kernel figures (--json, --vs-cuda)"},
    {"compile", tool_compile, "compile the suites' kernels or yours (.hcqir) for a target (--target T), into the cache"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq COMMAND [ARGS]   (hcq COMMAND --help for more)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nenvironment: HCQ_DEVICE, HCQ_MOCK, HCQ_DEBUG, HCQ_CACHE_DIR, HCQ_CLANG (see the README)\n");
}

int tool_fail(const char *what)
{
    fprintf(stderr, "hcq: %s: %s (%s)\n", what, hcq_error_message(), hcq_status_name(hcq_error_status()));
    return 1;
}

int tool_has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], flag)) return 1;
    return 0;
}

bool tool_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

int tool_bad_arg(const char *tool, const char *arg)
{
    fprintf(stderr, "hcq %s: %s `%s`; see `hcq %s --help`\n", tool,
            arg[0] == '-' && arg[1] ? "unknown option" : "unexpected argument", arg, tool);
    return 2;
}

bool tool_parse_u64(const char *tool, const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
    if (s[0] < '0' || s[0] > '9' || errno || *end || v < min || v > max) {
        fprintf(stderr, "hcq %s: %s `%s` is not a number from %llu to %llu\n", tool, what, s,
                (unsigned long long)min, (unsigned long long)max);
        return false;
    }
    *out = v;
    return true;
}

/* The devices the API test suites run on (scripts/run-tests.sh): those
 * present, and "CPU+ir", the CPU device running the interpreter target.
 * With --gpus only the NV and AMD ones (run under HCQ_MOCK=1 for the mock). */
static int test_devices(int gpus_only)
{
    char names[32][16];
    uint32_t n = hcq_device_list(names, 32);
    const char *sep = "";
    for (uint32_t i = 0; i < n && i < 32; i++) {
        if (gpus_only && !strcmp(names[i], "CPU")) continue;
        printf("%s%s", sep, names[i]);
        sep = " ";
    }
    if (!gpus_only) printf("%sCPU+ir", sep);
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("hcq %s (revision %s)\n", hcq_version(), hcq_build_revision());
        return 0;
    }
    if (!strcmp(argv[1], "test-devices")) {
        int gpus = 0;
        for (int i = 2; i < argc; i++) {
            if (tool_is_help(argv[i])) {
                printf("usage: hcq test-devices [--gpus]\n\nThe devices the API test suites run on, one line "
                       "(scripts/run-tests.sh reads it).\n");
                return 0;
            }
            if (strcmp(argv[i], "--gpus")) return tool_bad_arg("test-devices", argv[i]);
            gpus = 1;
        }
        return test_devices(gpus);
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "hcq: unknown command `%s`\n\n", argv[1]);
    usage(stderr);
    return 2;
}
