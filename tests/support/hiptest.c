#include "hiptest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/cc.h"
#include "compiler/sha256.h"
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"

void *t_build_hip(const char *file, const char *arch, bool w64, size_t *size)
{
    if (cc_require_clang(17, "AMDGPU code objects") != HCQ_OK) cr_skip_test("%s", hcq_error_message());
    const cc_clang_info *cl;
    cr_assert_eq(cc_clang(&cl), HCQ_OK);
    char src[4200], dir[4096], out[4200], offload[64];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    cr_assert_not_null(slash);
    snprintf(slash, sizeof src - (size_t)(slash - src), "/../corpus/hip/%s", file);
    /* through the kernel cache: the suites build each file once per target
     * (key: the source, the target, the wave size and the compiler) */
    FILE *sf = fopen(src, "rb");
    cr_assert_not_null(sf, "%s", src);
    char text[1 << 16];
    size_t tn = fread(text, 1, sizeof text, sf);
    fclose(sf);
    cc_sha256_ctx ks;
    cc_cache_key key;
    cc_key_begin(&ks);
    cc_key_add_str(&ks, "tests/support/hiptest v1");
    cc_key_add(&ks, text, tn);
    cc_key_add_str(&ks, arch);
    cc_key_add_str(&ks, w64 ? "wave64" : "default");
    cc_key_add_str(&ks, cl->label);
    cc_key_end(&ks, &key);
    void *cached = NULL;
    if (cc_cache_get_ext(&key, ".hiptest", &cached, size)) return cached;
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/k.co", dir);
    snprintf(offload, sizeof offload, "--offload-arch=%s", arch);
    const char *argv[] = {cl->path, "-x", "hip", offload, "-nogpuinc", "-nogpulib", "--cuda-device-only",
                          "--no-gpu-bundle-output", "-O2", "-c", src, "-o", out, w64 ? "-mwavefrontsize64" : NULL, NULL};
    char *log = NULL;
    int code = -1;
    T_OK(cc_run(argv, &log, &code));
    if (code) {
        cc_remove_temp_dir(dir);
        cr_skip_test("%s cannot build %s for %s: %s", cl->label, file, arch, log ? log : "");
    }
    free(log);
    FILE *f = fopen(out, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)n);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cc_remove_temp_dir(dir);
    *size = (size_t)n;
    cc_cache_put_ext(&key, ".hiptest", data, *size); /* (a failed put only costs the next run a compile) */
    return data;
}

hcq_device *t_open_amd_isa(const char *arch) { return t_open_amd_isa_cfg(arch, NULL); }

hcq_device *t_open_amd_isa_cfg(const char *arch, const char *extra)
{
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
    char cfg[160];
    snprintf(cfg, sizeof cfg, "amd=%s%s%s", arch, extra ? "," : "", extra ? extra : "");
    T_OK(mock_configure(cfg));
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    cr_assert_str_eq(hcq_device_get_props(d)->target, arch);
    return d;
}
