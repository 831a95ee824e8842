/* Compiling GPU kernels through the cache with portable keys (see
 * render_gpu.h). An entry's payload is
 *   "HCQGPU1\0" | u32 label bytes | label | the binary
 * so a hit says which compiler built the binary, wherever that was. */
#include "compiler/render_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_MAGIC "HCQGPU1"

static void key_of(const cc_gpu_job *job, cc_cache_key *key)
{
    cc_sha256_ctx s;
    cc_key_begin(&s);
    cc_key_add_str(&s, "gpu-portable-v1");
    cc_key_add_str(&s, job->target->name);
    cc_key_add_str(&s, job->source);
    cc_key_add_str(&s, job->flags);
    cc_key_end(&s, key);
}

static bool unpack(const uint8_t *p, size_t n, const uint8_t **bin, size_t *bin_size, char *label, size_t label_size)
{
    if (n < 12 || memcmp(p, GPU_MAGIC, 8)) return false;
    uint32_t len;
    memcpy(&len, p + 8, 4);
    if (len > n - 12 || len >= 4096) return false;
    snprintf(label, label_size, "%.*s", (int)len, (const char *)p + 12);
    *bin = p + 12 + len;
    *bin_size = n - 12 - len;
    return true;
}

hcq_status cc_gpu_compile_cached(const cc_gpu_job *job, hcq_binary **out)
{
    const char *name = job->kernel->name, *target = job->target->name;
    if (hcq_debug_level() >= 3) fprintf(stderr, "hcq[3] source of kernel '%s' for %s:\n%s\n", name, target, job->source);
    cc_cache_key key;
    key_of(job, &key);
    void *data = NULL;
    size_t size = 0;
    char label[128] = "";
    const uint8_t *bin;
    size_t bin_size;
    hcq_status st;
    if (cc_cache_get(&key, &data, &size) && unpack(data, size, &bin, &bin_size, label, sizeof label)) {
        BASE_LOG(1, "kernel '%s' for %s: cache hit (%s.bin in %s), built by %s", name, target, key.hex,
                 hcq_cache_dir(), label);
        hcq_binary *b = cc_binary_new(bin, bin_size, target, label);
        free(data);
        if (!b) return HCQ_ENOMEM;
        b->from_cache = true;
        *out = b;
        return HCQ_OK;
    }
    free(data);
    if ((st = cc_cache_miss_allowed(name, target))) return st;
    void *built = NULL;
    size_t built_size = 0;
    uint64_t t0 = hcq_now_ns();
    if ((st = job->build(job, &built, &built_size, label, sizeof label))) return st;
    BASE_LOG(1, "kernel '%s' for %s: compiled with %s in %.3f s, cache miss", name, target, label,
             (double)(hcq_now_ns() - t0) / 1e9);
    uint32_t len = (uint32_t)strlen(label);
    uint8_t *payload = malloc(12 + len + built_size);
    char note[512] = "";
    if (payload) {
        memcpy(payload, GPU_MAGIC, 8);
        memcpy(payload + 8, &len, 4);
        memcpy(payload + 12, label, len);
        memcpy(payload + 12 + len, built, built_size);
        if (cc_cache_put(&key, payload, 12 + len + built_size) != HCQ_OK) {
            snprintf(note, sizeof note, "%s", hcq_error_message());
            BASE_LOG(1, "kernel '%s': not cached: %s", name, note);
        }
        free(payload);
    } else {
        snprintf(note, sizeof note, "out of host memory for the cache entry");
    }
    hcq_binary *b = cc_binary_new(built, built_size, target, label);
    free(built);
    if (!b) return HCQ_ENOMEM;
    snprintf(b->cache_note, sizeof b->cache_note, "%s", note);
    *out = b;
    return HCQ_OK;
}

hcq_status cc_build_in_temp(const char *source, const char *ext, const char *const *argv, const char *const *post,
                            const char *what, void **out, size_t *out_size)
{
    char dir[4096], src[4200], obj[4200];
    hcq_status st = cc_make_temp_dir(dir, sizeof dir);
    if (st) return base_err_prefix(st, "%s", what);
    snprintf(src, sizeof src, "%s/kernel%s", dir, ext);
    snprintf(obj, sizeof obj, "%s/kernel.out", dir);
    size_t n = 0, np = 0;
    while (argv[n]) n++;
    while (post && post[np]) np++;
    const char **av = calloc(n + np + 4, sizeof *av);
    FILE *f = fopen(src, "we");
    if (!av) st = base_err(HCQ_ENOMEM, "%s: out of memory", what);
    else if (!f || fputs(source, f) < 0) st = base_err(HCQ_EIO, "%s: cannot write %s", what, src);
    if (f && fclose(f) != 0 && !st) st = base_err(HCQ_EIO, "%s: cannot write %s", what, src);
    if (!st) {
        size_t a = 0;
        for (size_t i = 0; i < n; i++) av[a++] = argv[i];
        av[a++] = src;
        av[a++] = "-o";
        av[a++] = obj;
        for (size_t i = 0; i < np; i++) av[a++] = post[i];
        av[a] = NULL;
        st = cc_run_tool(av, what);
    }
    if (!st) {
        f = fopen(obj, "re");
        long len = -1;
        if (f && fseek(f, 0, SEEK_END) == 0) len = ftell(f);
        void *data = len > 0 ? malloc((size_t)len) : NULL;
        if (f) fseek(f, 0, SEEK_SET);
        if (!f) st = base_err(HCQ_ECOMPILE, "%s: the compiler reported success but wrote no %s", what, obj);
        else if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) {
            free(data);
            st = base_err(HCQ_EIO, "%s: cannot read %s", what, obj);
        } else {
            *out = data;
            *out_size = (size_t)len;
        }
        if (f) fclose(f);
    }
    free(av);
    cc_remove_temp_dir(dir);
    return st;
}
