/* hcq trace: runs a program with libhcqtrace.so preloaded, so its driver
 * traffic is decoded as it happens. */
#include "tools/tools.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq trace [-o FILE] [--json] -- PROGRAM [ARGS...]\n\n"
               "Runs PROGRAM with libhcqtrace.so preloaded: every open, ioctl, mmap and close of\n"
               "/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN, /dev/kfd and /dev/dri/* is printed\n"
               "with its name, key fields in and out, status and time (unknown requests as numbers\n"
               "with their raw argument). Works on programs that are not hcq's, such as CUDA ones.\n"
               "HCQ_TRACE=1 gives the same decoding of hcq's own calls without preloading.\n");
}

/* libhcqtrace.so beside this executable, or in ../lib when installed */
static bool find_library(char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    const char *dir = dirname(exe);
    const char *tries[] = {"%s/libhcqtrace.so", "%s/../lib/libhcqtrace.so"};
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
        snprintf(out, size, tries[i], dir);
        if (access(out, R_OK) == 0) {
            char *real = realpath(out, NULL);
            if (real) {
                snprintf(out, size, "%s", real);
                free(real);
            }
            return true;
        }
    }
    return false;
}

int tool_trace(int argc, char **argv)
{
    const char *outfile = NULL;
    bool json = false;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            outfile = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char lib[PATH_MAX];
    if (!find_library(lib, sizeof lib)) {
        fprintf(stderr, "hcq trace: libhcqtrace.so is not beside the hcq executable nor in ../lib; build it with "
                        "`make` (it is build/libhcqtrace.so)\n");
        return 1;
    }
    const char *old = getenv("LD_PRELOAD");
    char preload[2 * PATH_MAX];
    snprintf(preload, sizeof preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    if (outfile) setenv("HCQ_TRACE_OUT", outfile, 1);
    if (json) setenv("HCQ_TRACE_JSON", "1", 1);
    execvp(argv[i], argv + i);
    fprintf(stderr, "hcq trace: cannot run %s: %s\n", argv[i], strerror(errno));
    return 127;
}
