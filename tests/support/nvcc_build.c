#include "nvcc_build.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cc.h"
#include "compiler/sass.h"
#include "hcqtest.h"

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

void *t_nvcc_cubin(const char *path, unsigned sm, size_t *size)
{
    size_t src_size;
    char *src = slurp(path, &src_size);
    cr_assert_not_null(src, "%s: run the suite from the source tree", path);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%u", sm);
    cc_sha256_ctx s;
    cc_cache_key key;
    cc_key_begin(&s);
    cc_key_add_str(&s, "test cubin v1");
    cc_key_add_str(&s, arch);
    cc_key_add_str(&s, src);
    cc_key_end(&s, &key);
    free(src);
    void *bin = NULL;
    if (cc_cache_get_ext(&key, ".cubin", &bin, size)) return bin;
    char nvcc[1024];
    if (!find_nvcc(nvcc, sizeof nvcc)) cr_skip_test("nvcc is not on PATH nor in /usr/local/cuda/bin: %s cannot be built", path);
    char dir[512], out[600], gpu[32];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/t.cubin", dir);
    snprintf(gpu, sizeof gpu, "-arch=%s", arch);
    const char *argv[] = {nvcc, "-cubin", gpu, "-O3", "-o", out, path, NULL};
    char *log = NULL;
    int code = 0;
    T_OK(cc_run(argv, &log, &code));
    cr_assert_eq(code, 0, "nvcc failed on %s:\n%s", path, log);
    free(log);
    bin = slurp(out, size);
    cc_remove_temp_dir(dir);
    cr_assert_not_null(bin);
    cc_cache_put_ext(&key, ".cubin", bin, *size);
    return bin;
}

void t_need_nvdisasm(void)
{
    char why[600];
    if (!sass_nvdisasm(why, sizeof why))
        cr_skip_test("the SASS executor's decoder is missing (and the kernel cache may lack the decodes): %s", why);
}
