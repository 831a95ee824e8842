/* Foreign kernels on the NV mock's SASS executor: the corpus
 * (tests/corpus/corpus.cu), built by nvcc for each model's SM, loaded
 * with hcq_program_load_kernel and run on the H100 (sm_90), A100 (sm_80),
 * RTX 4090 (sm_89) and RTX 3090 (sm_86) mocks under HCQ_MOCK_SHADER=isa, each output
 * compared with the C reference (tests/corpus/corpus_ref.c). Skips, saying
 * why, where nvcc or nvdisasm is missing. The cubins are kept in the
 * kernel cache (keyed by the source and the arch) so reruns build none. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "nvcc_build.h"
#include "proctest.h"
#include "tests/corpus/corpus_ref.h"

static void setup(void)
{
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
}
static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}
TestSuite(sass_corpus, .init = setup, .fini = teardown, .timeout = 600);

/* runs every case on NV:0 of the mock configured as cfg; returns failures */
static unsigned run_corpus(const char *cfg, unsigned sm)
{
    t_need_nvdisasm();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/corpus.cu", sm, &size);
    T_OK(mock_configure(cfg));
    hcq_device *d = hcq_device_open("NV:0");
    cr_assert_not_null(d, "%s", hcq_error_message());
    cr_assert(strstr(hcq_device_get_props(d)->shader, "SASS executor"), "%s", hcq_device_get_props(d)->shader);
    unsigned failed = 0;
    for (unsigned c = 0; c < corpus_ncases; c++) {
        const corpus_case *k = &corpus_cases[c];
        hcq_program *p = hcq_program_load_kernel(d, bin, size, k->kernel);
        cr_assert_not_null(p, "%s: %s", k->kernel, hcq_error_message());
        if (k->dyn_shared) { /* what a CUDA driver does with a launch's dynamic shared bytes */
            nv_prog *np = p->priv;
            int v = nv_of(d)->qmd_ver;
            uint32_t shared = (uint32_t)nv_qmd_get(np->qmd, v, NV_QMD_SHARED_MEMORY_SIZE, 0);
            nv_qmd_set(np->qmd, v, NV_QMD_SHARED_MEMORY_SIZE, 0, base_align_up(shared + k->dyn_shared, 128));
        }
        void *host[CORPUS_MAX_ARGS] = {0}, *want[CORPUS_MAX_ARGS] = {0};
        hcq_buffer *buf[CORPUS_MAX_ARGS] = {0};
        hcq_arg args[CORPUS_MAX_ARGS];
        for (unsigned a = 0; a < k->nargs; a++) {
            const corpus_arg *x = &k->args[a];
            if (x->kind == CORPUS_I32) args[a] = hcq_arg_i32(x->i);
            else if (x->kind == CORPUS_F32) args[a] = hcq_arg_f32(x->f);
            else {
                size_t n = corpus_arg_bytes(x);
                host[a] = calloc(1, n);
                want[a] = calloc(1, n);
            }
        }
        k->init(host);
        for (unsigned a = 0; a < k->nargs; a++) {
            if (!host[a]) continue;
            size_t n = corpus_arg_bytes(&k->args[a]);
            memcpy(want[a], host[a], n);
            buf[a] = t_buffer_from(d, host[a], n);
            args[a] = hcq_arg_buffer(buf[a]);
        }
        k->ref(want, k->args);
        T_OK(hcq_launch(p, args, k->nargs,
                        hcq_dims_3d(k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2])));
        hcq_status s = hcq_device_synchronize(d);
        if (s) {
            char err[1024];
            mock_nv_last_error(0, err, sizeof err);
            cr_log_info("%s on %s: %s (%s)", k->kernel, cfg, hcq_error_message(), err);
            failed++;
            break; /* the channel is dead */
        }
        for (unsigned a = 0; a < k->nargs; a++) {
            if (!buf[a] || k->args[a].kind == CORPUS_IN) continue;
            size_t n = corpus_arg_bytes(&k->args[a]);
            t_read(buf[a], host[a], n);
            char why[256];
            if (!corpus_compare(k, a, host[a], want[a], why, sizeof why)) {
                cr_log_info("on %s: %s", cfg, why);
                failed++;
            }
        }
        for (unsigned a = 0; a < k->nargs; a++) {
            if (buf[a]) T_OK(hcq_buffer_free(buf[a]));
            free(host[a]);
            free(want[a]);
        }
        T_OK(hcq_program_free(p));
    }
    T_OK(hcq_device_close(d));
    free(bin);
    return failed;
}

Test(sass_corpus, h100_sm90) { cr_assert_eq(run_corpus("nv=H100", 90), 0); }
Test(sass_corpus, a100_sm80) { cr_assert_eq(run_corpus("nv=A100", 80), 0); }
/* sm_89 and sm_86 in CI (HCQ_TEST_LONG=1): the same executor on two more
 * targets' SASS, 8 s of CPU each in make test's budget */
static void long_only(void)
{
    if (!getenv("HCQ_TEST_LONG")) cr_skip_test("HCQ_TEST_LONG=1 (CI) runs the corpus on sm_89 and sm_86 too");
}
Test(sass_corpus, rtx4090_sm89)
{
    long_only();
    cr_assert_eq(run_corpus("nv=RTX4090", 89), 0);
}
Test(sass_corpus, rtx3090_sm86)
{
    long_only();
    cr_assert_eq(run_corpus("nv=RTX3090", 86), 0);
}

/* by default (no HCQ_MOCK_SHADER) a cubin hcq made no twin of still runs:
 * on the executor, where its decoder is */
Test(sass_corpus, by_default_a_cubin_without_a_twin_runs_on_the_executor)
{
    t_need_nvdisasm();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/corpus.cu", 90, &size);
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
    T_OK(mock_configure("nv=H100"));
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    const corpus_case *k = NULL;
    for (unsigned c = 0; c < corpus_ncases; c++)
        if (!strcmp(corpus_cases[c].kernel, "scan_block")) k = &corpus_cases[c];
    cr_assert_not_null(k);
    hcq_program *p = hcq_program_load_kernel(d, bin, size, k->kernel);
    cr_assert_not_null(p, "%s", hcq_error_message());
    void *host[CORPUS_MAX_ARGS] = {0}, *want[CORPUS_MAX_ARGS] = {0};
    hcq_buffer *buf[CORPUS_MAX_ARGS] = {0};
    hcq_arg args[CORPUS_MAX_ARGS];
    for (unsigned a = 0; a < k->nargs; a++) {
        if (k->args[a].kind == CORPUS_I32) {
            args[a] = hcq_arg_i32(k->args[a].i);
            continue;
        }
        host[a] = calloc(1, corpus_arg_bytes(&k->args[a]));
        want[a] = calloc(1, corpus_arg_bytes(&k->args[a]));
    }
    k->init(host);
    for (unsigned a = 0; a < k->nargs; a++)
        if (host[a]) {
            memcpy(want[a], host[a], corpus_arg_bytes(&k->args[a]));
            buf[a] = t_buffer_from(d, host[a], corpus_arg_bytes(&k->args[a]));
            args[a] = hcq_arg_buffer(buf[a]);
        }
    k->ref(want, k->args);
    T_OK(hcq_launch(p, args, k->nargs, hcq_dims_3d(k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2])));
    t_read(buf[1], host[1], corpus_arg_bytes(&k->args[1]));
    char why[256];
    cr_assert(corpus_compare(k, 1, host[1], want[1], why, sizeof why), "%s", why);
    for (unsigned a = 0; a < k->nargs; a++) free(host[a]), free(want[a]);
    T_OK(hcq_device_close(d));
    free(bin);
}

/* the memory checker finds nothing in correct kernels */
Test(sass_corpus, h100_sm90_under_memcheck)
{
    setenv("HCQ_MOCK_CHECK", "memcheck", 1);
    base_env_reload();
    unsigned failed = run_corpus("nv=H100", 90);
    unsetenv("HCQ_MOCK_CHECK");
    base_env_reload();
    cr_assert_eq(failed, 0);
}

/* a program that loads its own cubin through the preloaded mock
 * (libhcqmock.so): the mock's copy of hcq knows nothing of the program's
 * binaries, so it finds where the kernel's code ends by ptxas's terminator
 * and decodes it itself; no HCQ_MOCK_SHADER: machine code no twin was made
 * of goes to the executor by default */
static const char *preload_prog =
    "#include <hcq/hcq.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "int main(int argc, char **argv) {\n"
    "  FILE *f = fopen(argv[1], \"rb\"); static char bin[1 << 20]; size_t n = fread(bin, 1, sizeof bin, f); fclose(f);\n"
    "  hcq_device *d = hcq_device_open(\"NV:0\"); if (!d) return 2;\n"
    "  hcq_program *p = hcq_program_load_kernel(d, bin, n, \"row_sum_shfl\"); if (!p) return 4;\n"
    "  float x[300], out[3] = {0};\n"
    "  for (int i = 0; i < 300; i++) x[i] = (float)(i % 100);\n"
    "  hcq_buffer *bx = hcq_buffer_alloc(d, sizeof x, HCQ_MEM_DEVICE), *bo = hcq_buffer_alloc(d, sizeof out, HCQ_MEM_DEVICE);\n"
    "  if (hcq_buffer_copyin(bx, 0, x, sizeof x) || hcq_buffer_copyin(bo, 0, out, sizeof out)) return 5;\n"
    "  hcq_arg a[4] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo), hcq_arg_i32(3), hcq_arg_i32(100)};\n"
    "  if (hcq_launch(p, a, 4, hcq_dims_3d(1, 1, 1, 32, 4, 1)) || hcq_device_synchronize(d)) {\n"
    "    fprintf(stderr, \"%s\\n\", hcq_error_message()); return 6; }\n"
    "  if (hcq_buffer_copyout(out, bo, 0, sizeof out)) return 7;\n"
    "  for (int r = 0; r < 3; r++) if (out[r] != 4950.0f) { fprintf(stderr, \"row %d: %g\\n\", r, out[r]); return 8; }\n"
    "  return hcq_device_close(d) ? 9 : 0; }\n";

Test(sass_corpus, the_preloaded_mock_runs_a_programs_own_cubin)
{
    t_need_nvdisasm();
    size_t size;
    void *bin = t_nvcc_cubin("tests/corpus/corpus.cu", 90, &size);
    /* the program links libhcq.a of the build hcq's binary is in (a
     * sanitizer build's would need its runtime first: t_hcq_bin skips) */
    char build[512], lib[600], dir[T_TMP_PATH], path[T_TMP_PATH + 32], cmd[3000];
    snprintf(build, sizeof build, "%s", t_hcq_bin());
    char *slash = strrchr(build, '/');
    if (slash) *slash = 0;
    else snprintf(build, sizeof build, ".");
    snprintf(lib, sizeof lib, "%s", t_mock_preload_lib());
    t_tmpdir(dir, sizeof dir, "hcq-sasspre");
    snprintf(path, sizeof path, "%s/corpus.cubin", dir);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(bin, 1, size, f) == size);
    fclose(f);
    free(bin);
    snprintf(path, sizeof path, "%s/prog.c", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#include <string.h>\n%s", preload_prog);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O1 -Iinclude -o %s/prog %s %s/libhcq.a -lz -lm -ldl -lpthread", dir, path,
             build);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "LD_PRELOAD=%s %s/prog %s/corpus.cubin 2>%s/err.txt", lib, dir, dir,
             dir);
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    snprintf(cmd, sizeof cmd, "cat %s/err.txt >&2; rm -rf %s", dir, dir);
    if (rc) (void)!system(cmd);
    else {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        (void)!system(cmd);
    }
    cr_assert_eq(rc, 0, "the program failed at step %d", rc);
}
