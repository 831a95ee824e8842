/* Foreign kernels on the NV mock's SASS executor: the corpus
 * (tests/corpus/corpus.cu), built by nvcc for each model's SM, loaded
 * with hcq_program_load_kernel and run on the H100 (sm_90), A100 (sm_80)
 * and RTX 4090 (sm_89) mocks under HCQ_MOCK_SHADER=isa, each output
 * compared with the C reference (tests/corpus/corpus_ref.c). Skips, saying
 * why, where nvcc or nvdisasm is missing. The cubins are kept in the
 * kernel cache (keyed by the source and the arch) so reruns build none. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/cc.h"
#include "compiler/sass.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
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

static bool find_nvcc(char *out, size_t size)
{
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        snprintf(out, size, "%.*s/nvcc", (int)n, p);
        if (n && access(out, X_OK) == 0) return true;
        p += n + (c ? 1 : 0);
    }
    snprintf(out, size, "/usr/local/cuda/bin/nvcc");
    return access(out, X_OK) == 0;
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    *size = (size_t)n;
    return b;
}

/* the corpus built for sm_<sm> by nvcc (from the kernel cache when it has it) */
static void *corpus_cubin(unsigned sm, size_t *size)
{
    size_t src_size;
    char *src = slurp("tests/corpus/corpus.cu", &src_size);
    cr_assert_not_null(src, "tests/corpus/corpus.cu: run the suite from the source tree");
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%u", sm);
    cc_sha256_ctx s;
    cc_cache_key key;
    cc_key_begin(&s);
    cc_key_add_str(&s, "test corpus cubin v1");
    cc_key_add_str(&s, arch);
    cc_key_add_str(&s, src);
    cc_key_end(&s, &key);
    void *bin = NULL;
    if (cc_cache_get_ext(&key, ".cubin", &bin, size)) {
        free(src);
        return bin;
    }
    char nvcc[1024];
    if (!find_nvcc(nvcc, sizeof nvcc)) {
        free(src);
        cr_skip_test("nvcc is not on PATH nor in /usr/local/cuda/bin: the corpus cannot be built");
    }
    char dir[512], out[600], gpu[32];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/corpus.cubin", dir);
    snprintf(gpu, sizeof gpu, "-arch=%s", arch);
    const char *argv[] = {nvcc, "-cubin", gpu, "-O3", "-o", out, "tests/corpus/corpus.cu", NULL};
    char *log = NULL;
    int code = 0;
    T_OK(cc_run(argv, &log, &code));
    cr_assert_eq(code, 0, "nvcc failed:\n%s", log);
    free(log);
    bin = slurp(out, size);
    cc_remove_temp_dir(dir);
    cr_assert_not_null(bin);
    cc_cache_put_ext(&key, ".cubin", bin, *size);
    free(src);
    return bin;
}

static void need_nvdisasm(void)
{
    char why[600];
    if (!sass_nvdisasm(why, sizeof why))
        cr_skip_test("the SASS executor's decoder is missing (and the kernel cache may lack the decodes): %s", why);
}

/* runs every case on NV:0 of the mock configured as cfg; returns failures */
static unsigned run_corpus(const char *cfg, unsigned sm)
{
    need_nvdisasm();
    size_t size;
    void *bin = corpus_cubin(sm, &size);
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
            int v = nv_of(d)->gen->qmd_ver;
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
            cr_log_error("%s on %s: %s (%s)", k->kernel, cfg, hcq_error_message(), err);
            failed++;
            break; /* the channel is dead */
        }
        for (unsigned a = 0; a < k->nargs; a++) {
            if (!buf[a] || k->args[a].kind == CORPUS_IN) continue;
            size_t n = corpus_arg_bytes(&k->args[a]);
            t_read(buf[a], host[a], n);
            char why[256];
            if (!corpus_compare(k, a, host[a], want[a], why, sizeof why)) {
                cr_log_error("on %s: %s", cfg, why);
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
Test(sass_corpus, rtx4090_sm89) { cr_assert_eq(run_corpus("nv=RTX4090", 89), 0); }
