/* hcq compile --target T [--cache-dir D]: compiles, through the kernel
 * cache, the kernels the API test suites and `hcq bench` launch
 * (tools/kernels.c, shared with tests/support/hcqtest.c), so a cache
 * filled on a machine with the compilers (clang + ptxas, or nvcc) can be
 * carried to a GPU machine that has neither: GPU targets key their cache
 * entries by target, source and flags only.
 *
 * The tensor layer's kernels (the demo's, the tensor suites') are lowered
 * for the device they run on (its compute units shape the tiling), so
 * they are not listed here: they compile on first use, and a cache filled
 * by running on a device of the same model serves them. */
#include "base/base.h"
#include "tools/kernels.h"
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

static hcq_kernel *(*const kernels[])(void) = {tk_add1, tk_vadd_u32n, tk_muladd, tk_inc,   tk_mark,
                                               tk_copy_u32, tk_empty, tk_vadd, tk_sum, tk_matmul};

int tool_compile(int argc, char **argv)
{
    const char *target = NULL, *dir = NULL;
    bool help = false;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) help = true;
        else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
        else if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc) dir = argv[++i];
        else return tool_bad_arg("compile", argv[i]);
    }
    if (help || !target) {
        fprintf(help ? stdout : stderr, "usage: hcq compile --target TARGET [--cache-dir DIR]\n\nCompiles the kernels of the API test suites, "
               "the demo and the benchmarks for TARGET (sm_90,\nsm_89, mock-sm_90, cpu, ...) into the kernel cache "
               "(DIR, else HCQ_CACHE_DIR, else ~/.cache/hcq).\nGPU entries are keyed by target, source and flags, so "
               "the directory can be copied to another\nmachine (one without clang, ptxas or nvcc, say) and used there "
               "as is.\n");
        return help ? 0 : 2;
    }
    if (dir) {
        setenv("HCQ_CACHE_DIR", dir, 1);
        base_env_reload();
    }
    if (!hcq_target_known(target)) {
        hcq_binary *b = NULL;
        hcq_kernel *k = tk_empty();
        hcq_compile(k, target, &b); /* for the message naming the targets */
        hcq_kernel_destroy(k);
        return tool_fail("compile");
    }
    int failures = 0;
    printf("compiling %zu kernels for %s into %s\n", sizeof kernels / sizeof *kernels, target, hcq_cache_dir());
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        hcq_kernel *k = kernels[i]();
        hcq_binary *b = NULL;
        uint64_t t0 = hcq_now_ns();
        if (hcq_compile(k, target, &b)) {
            failures += tool_fail(hcq_kernel_name(k));
            if (hcq_error_status() == HCQ_ENOTSUP) { /* the same for every kernel */
                hcq_kernel_destroy(k);
                break;
            }
        } else if (b->cache_note[0]) {
            /* compiled, but the point of this command is the cache */
            fprintf(stderr, "hcq compile: %s: compiled but not written to the cache: %s\n", hcq_kernel_name(k),
                    b->cache_note);
            failures++;
            hcq_binary_free(b);
        } else {
            printf("  %-14s %8zu bytes  %s (%s), %.2f s\n", hcq_kernel_name(k), b->size,
                   b->from_cache ? "already cached" : "compiled", b->compiler, (double)(hcq_now_ns() - t0) / 1e9);
            hcq_binary_free(b);
        }
        hcq_kernel_destroy(k);
    }
    return failures ? 1 : 0;
}
