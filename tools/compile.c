/* hcq compile --target T [--cache-dir D] [-o OUT] [--twins] [KERNEL.hcqir | DIR ...]:
 * compiles kernels through the kernel cache for a target.
 *
 * With no input, the kernels the API test suites and `hcq bench` launch
 * (tools/kernels.c, shared with tests/support/hcqtest.c), so a cache
 * filled on a machine with the compilers (clang + ptxas, or nvcc) can be
 * carried to a GPU machine that has neither: GPU targets key their cache
 * entries by target, source and flags only.
 *
 * With inputs, the kernels you give it as serialized IR (.hcqir, what
 * hcq_kernel_serialize writes): files, or directories of them. A run with
 * HCQ_DUMP=DIR writes every kernel the program builds into DIR, the tensor
 * layer's included, so `hcq compile --target sm_90 DIR` builds a small
 * program's kernels for another target. -o writes the binaries: the file
 * for one kernel, a directory (created) for several.
 *
 * --twins also makes each sm_* / gfx* binary's host twin (compiler/twin.h),
 * cached under the binary's SHA-256: the mock GPU runs a real binary as
 * its twin, so with HCQ_MOCK_SHADER=twin a machine without clang or ptxas
 * runs the cached binaries on the mock, and a binary written by -o loads
 * there with hcq_program_load.
 *
 * --sass decodes each sm_* binary's SASS with nvdisasm into the cache
 * (compiler/sass.h), for the mock's SASS executor (HCQ_MOCK_SHADER=isa)
 * on machines without nvdisasm. */
#include "base/base.h"
#include "compiler/sass.h"
#include "compiler/twin.h"
#include "tools/kernels.h"
#include "tools/tools.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static hcq_kernel *(*const builtin[])(void) = {tk_add1, tk_vadd_u32n, tk_muladd, tk_inc,   tk_mark,
                                               tk_copy_u32, tk_empty, tk_vadd, tk_sum, tk_matmul};

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq compile --target TARGET [--cache-dir DIR] [-o OUT] [--twins] [--sass] [KERNEL.hcqir | DIR ...]\n\n"
               "Compiles kernels for TARGET (sm_90, sm_89, mock-sm_90, gfx1100, cpu, ...) into the kernel cache\n"
               "(DIR, else HCQ_CACHE_DIR, else ~/.cache/hcq). With no KERNEL, the kernels of the API test\n"
               "suites, the demo and the benchmarks; else the serialized IR files given, or every .hcqir\n"
               "in a DIR: a program run with HCQ_DUMP=DIR leaves there each kernel it built, the tensor\n"
               "layer's included. -o OUT writes the binaries (OUT is the file for one kernel, a\n"
               "directory for several). GPU entries are keyed by target, source and flags, so the cache\n"
               "can be copied to another machine (one without clang, ptxas or nvcc) and used as is.\n"
               "--twins also makes each binary's host twin (sm_* and gfx* targets), cached under the\n"
               "binary's hash: the mock GPU runs a real binary as its twin, so a machine without the\n"
               "tools runs the cached binaries on the mock with HCQ_MOCK_SHADER=twin.\n"
               "--sass also decodes each sm_* binary's SASS (nvdisasm) into the cache, for the mock's SASS\n"
               "executor (HCQ_MOCK_SHADER=isa) on machines without nvdisasm.\n");
}

typedef struct job {
    const char *target, *out;
    int failures, done, total;
    bool out_is_dir, twins, sass;
    char **written; /* the names written into OUT (a directory) so far */
    size_t nwritten;
} job;

static const char *binary_ext(const char *target)
{
    if (strstr(target, "sm_")) return ".cubin";
    if (strstr(target, "gfx")) return ".co";
    if (!strcmp(target, "cpu")) return ".so";
    return ".bin";
}

/* OUT/NAME.ext, or OUT/NAME-2.ext and on where an earlier kernel of this
 * run took that name (kernels of different shapes share a name) */
static int write_binary(job *j, const char *name, const hcq_binary *b)
{
    char path[4096];
    if (j->out_is_dir) {
        char unique[256];
        snprintf(unique, sizeof unique, "%s", name);
        for (int n = 2;; n++) {
            size_t i = 0;
            while (i < j->nwritten && strcmp(j->written[i], unique)) i++;
            if (i == j->nwritten) break;
            snprintf(unique, sizeof unique, "%s-%d", name, n);
        }
        char **w = realloc(j->written, (j->nwritten + 1) * sizeof *w);
        if (w) {
            j->written = w;
            if ((w[j->nwritten] = strdup(unique))) j->nwritten++;
        }
        snprintf(path, sizeof path, "%s/%s%s", j->out, unique, binary_ext(j->target));
    } else {
        snprintf(path, sizeof path, "%s", j->out);
    }
    /* replaced whole: a write that fails (a full disk) leaves the file that
     * was there, never a truncated binary a later load would refuse */
    base_outfile o;
    if (base_outfile_open(&o, path, "hcq compile") ||
        (fwrite(b->data, 1, b->size, o.f), base_outfile_commit(&o, "hcq compile"))) {
        fprintf(stderr, "hcq compile: cannot write %s: %s\n", path, hcq_error_message());
        return 1;
    }
    printf("    wrote %s\n", path);
    return 0;
}

/* compiles k (destroyed), its binary written as OUTNAME under -o; false
 * when the target cannot compile at all */
static bool compile_one(job *j, hcq_kernel *k, const char *outname)
{
    hcq_binary *b = NULL;
    uint64_t t0 = hcq_now_ns();
    bool go_on = true;
    char name[64];
    snprintf(name, sizeof name, "%s", hcq_kernel_name(k));
    if (hcq_compile(k, j->target, &b)) {
        j->failures += tool_fail(name);
        go_on = hcq_error_status() != HCQ_ENOTSUP; /* the same for every kernel */
    } else if (b->cache_note[0]) {
        /* compiled, but the point of this command is the cache */
        fprintf(stderr, "hcq compile: %s: compiled but not written to the cache: %s\n", name, b->cache_note);
        j->failures++;
        if (j->out) j->failures += write_binary(j, outname ? outname : name, b);
        hcq_binary_free(b);
    } else if (j->twins && cc_twin_prepare(k, j->target, b->data, b->size)) {
        fprintf(stderr, "hcq compile: %s: compiled, but its host twin was not made: %s\n", name, hcq_error_message());
        j->failures++;
        if (j->out) j->failures += write_binary(j, outname ? outname : name, b);
        hcq_binary_free(b);
    } else if (j->sass && sass_decode_cubin(b->data, b->size, (uint32_t)strtoul(j->target + 3, NULL, 10), NULL)) {
        fprintf(stderr, "hcq compile: %s: compiled, but its SASS was not decoded: %s\n", name, hcq_error_message());
        j->failures++;
        if (j->out) j->failures += write_binary(j, outname ? outname : name, b);
        hcq_binary_free(b);
    } else {
        printf("  %-22s %8zu bytes  %s (%s)%s%s, %.2f s\n", name, b->size, b->from_cache ? "already cached" : "compiled",
               b->compiler, j->twins ? " + host twin" : "", j->sass ? " + decoded SASS" : "",
               (double)(hcq_now_ns() - t0) / 1e9);
        if (j->out) j->failures += write_binary(j, outname ? outname : name, b);
        hcq_binary_free(b);
        j->done++;
    }
    hcq_kernel_destroy(k);
    return go_on;
}

static bool compile_file(job *j, const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
        fprintf(stderr, "hcq compile: %s: %s\n", path,
                !f ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : "larger than any kernel's IR");
        if (f) fclose(f);
        j->failures++;
        return true;
    }
    size_t n = (size_t)st.st_size;
    void *data = malloc(n ? n : 1);
    bool ok = data && fread(data, 1, n, f) == n;
    fclose(f);
    hcq_kernel *k = NULL;
    if (!ok || hcq_kernel_deserialize(data, n, &k)) {
        fprintf(stderr, "hcq compile: %s is not a kernel's serialized IR: %s\n", path,
                ok ? hcq_error_message() : "cannot read it");
        free(data);
        j->failures++;
        return true;
    }
    free(data);
    j->total++;
    /* the binary is named after the file (00000002-E_48_48.hcqir ->
     * 00000002-E_48_48.co): kernels of one name differ in shape or type */
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    size_t len = strlen(stem);
    if (len > 6 && !strcmp(stem + len - 6, ".hcqir")) stem[len - 6] = 0;
    return compile_one(j, k, stem);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool compile_dir(job *j, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hcq compile: cannot open %s: %s\n", dir, strerror(errno));
        j->failures++;
        return true;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".hcqir")) continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str); /* names is NULL when there are none */
    bool go_on = true;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (go_on) go_on = compile_file(j, path);
        free(names[i]);
    }
    free(names);
    if (!n) {
        fprintf(stderr, "hcq compile: no .hcqir files in %s (a run with HCQ_DUMP=%s writes them)\n", dir, dir);
        j->failures++;
    }
    return go_on;
}

int tool_compile(int argc, char **argv)
{
    job j = {0};
    const char *dir = NULL;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    int ninputs = 0;
    if (!inputs) return 1;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (tool_is_help(a)) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "--target") && has_value) {
            j.target = argv[++i];
        } else if (!strcmp(a, "--cache-dir") && has_value) {
            dir = argv[++i];
        } else if (!strcmp(a, "-o") && has_value) {
            j.out = argv[++i];
        } else if (!strcmp(a, "--twins")) {
            j.twins = true;
        } else if (!strcmp(a, "--sass")) {
            j.sass = true;
        } else if (!strcmp(a, "--target") || !strcmp(a, "--cache-dir") || !strcmp(a, "-o")) {
            fprintf(stderr, "hcq compile: a value is missing after %s; see `hcq compile --help`\n", a);
            goto out;
        } else if (a[0] == '-') {
            rc = tool_bad_arg("compile", a);
            goto out;
        } else {
            inputs[ninputs++] = argv[i];
        }
    }
    if (!j.target) {
        fprintf(stderr, "hcq compile: say the target: --target TARGET\n");
        usage(stderr);
        goto out;
    }
    if (dir) {
        setenv("HCQ_CACHE_DIR", dir, 1);
        base_env_reload();
    }
    rc = 1;
    if (!hcq_target_known(j.target)) {
        hcq_binary *b = NULL;
        hcq_kernel *k = tk_empty();
        hcq_compile(k, j.target, &b); /* for the message naming the targets */
        hcq_kernel_destroy(k);
        tool_fail("compile");
        goto out;
    }
    if (j.twins && !cc_twin_origin_of(j.target)) {
        fprintf(stderr, "hcq compile: --twins: %s binaries have no host twin (only sm_* and gfx* targets' do)\n",
                j.target);
        rc = 2;
        goto out;
    }
    if (j.sass && strncmp(j.target, "sm_", 3)) {
        fprintf(stderr, "hcq compile: --sass: %s binaries are no SASS (only sm_* targets' are)\n", j.target);
        rc = 2;
        goto out;
    }
    /* several kernels (or a directory) with -o: OUT is a directory */
    if (j.out) {
        struct stat st;
        j.out_is_dir = !ninputs || ninputs > 1 || (stat(inputs[0], &st) == 0 && S_ISDIR(st.st_mode)) ||
                       (stat(j.out, &st) == 0 && S_ISDIR(st.st_mode));
        if (j.out_is_dir && mkdir(j.out, 0755) < 0 && errno != EEXIST) {
            fprintf(stderr, "hcq compile: cannot create %s: %s\n", j.out, strerror(errno));
            goto out;
        }
    }
    if (!ninputs) {
        printf("compiling %zu kernels for %s into %s\n", sizeof builtin / sizeof *builtin, j.target, hcq_cache_dir());
        for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++) {
            j.total++;
            if (!compile_one(&j, builtin[i](), NULL)) break;
        }
    } else {
        printf("compiling for %s into %s\n", j.target, hcq_cache_dir());
        bool go_on = true;
        for (int i = 0; i < ninputs && go_on; i++) {
            struct stat st;
            if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) go_on = compile_dir(&j, inputs[i]);
            else go_on = compile_file(&j, inputs[i]);
        }
    }
    rc = j.failures ? 1 : 0;
out:
    for (size_t i = 0; i < j.nwritten; i++) free(j.written[i]);
    free(j.written);
    free(inputs);
    return rc;
}
