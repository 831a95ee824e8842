/* Binaries of several kernels: a cubin of two global functions (nvcc) and
 * a code object of two kernels (clang -x hip), as programs built outside
 * hcq usually are. The loaders' parsers pick a kernel by name, refuse a
 * binary of several without one, and name the kernels a binary holds when
 * the one asked for is missing. Skipped, with the reason, where nvcc or a
 * clang that targets AMDGPU is absent. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cc.h"
#include "drivers/amd/amd.h"
#include "drivers/nv/nv.h"
#include "hcqtest.h"

static const char cuda_src[] =
    "extern \"C\" __global__ void first(float *a) { a[threadIdx.x] = 1.0f; }\n"
    "extern \"C\" __global__ void second(float *a, const float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = b[i] * 2.0f; }\n";

static const char hip_src[] =
    "extern \"C\" __attribute__((global)) void first(float *a) { a[__builtin_amdgcn_workitem_id_x()] = 1.0f; }\n"
    "extern \"C\" __attribute__((global)) void second(float *a, const float *b, int n) {\n"
    "  int i = __builtin_amdgcn_workitem_id_x(); if (i < n) a[i] = b[i] * 2.0f; }\n";

/* Writes src to DIR/name, runs argv (whose last-but-two entry is replaced by
 * the source's path and the last by the output's), and returns the output;
 * skips the test when the tool fails to run or refuses. */
static void *build(const char *tool_label, const char *src, const char *name, const char **argv, int src_at,
                   int out_at, size_t *size)
{
    char dir[4096], in[4200], out[4200];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(in, sizeof in, "%s/%s", dir, name);
    snprintf(out, sizeof out, "%s/out.bin", dir);
    FILE *f = fopen(in, "w");
    cr_assert_not_null(f);
    fputs(src, f);
    fclose(f);
    argv[src_at] = in;
    argv[out_at] = out;
    char *log = NULL;
    int code = -1;
    hcq_status s = cc_run(argv, &log, &code);
    if (s || code) {
        cc_remove_temp_dir(dir);
        cr_skip_test("%s cannot build the test's kernels: %s", tool_label, s ? hcq_error_message() : log ? log : "");
    }
    free(log);
    f = fopen(out, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)n);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cc_remove_temp_dir(dir);
    *size = (size_t)n;
    return data;
}

static void *cubin(size_t *size)
{
    const char *nvcc = getenv("HCQ_TEST_NVCC") ? getenv("HCQ_TEST_NVCC") : "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK)) cr_skip_test("no nvcc at %s (set HCQ_TEST_NVCC)", nvcc);
    const char *argv[] = {nvcc, "-cubin", "-arch=sm_90", "-O2", "-x", "cu", "SRC", "-o", "OUT", NULL};
    return build("nvcc", cuda_src, "k.cu", argv, 6, 8, size);
}

static void *code_object(size_t *size)
{
    if (cc_require_clang(17, "AMDGPU code objects") != HCQ_OK) cr_skip_test("%s", hcq_error_message());
    const cc_clang_info *cl;
    cr_assert_eq(cc_clang(&cl), HCQ_OK);
    const char *argv[] = {cl->path, "-x", "hip", "--offload-arch=gfx1100", "-nogpuinc", "-nogpulib",
                          "--cuda-device-only", "--no-gpu-bundle-output", "-O2", "-c", "SRC", "-o", "OUT", NULL};
    return build(cl->label, hip_src, "k.hip", argv, 10, 12, size);
}

Test(program_names, a_cubin_kernel_is_picked_by_name)
{
    size_t size;
    void *b = cubin(&size);
    nv_cubin c;
    T_OK(nv_cubin_parse(b, size, "test", "second", &c));
    cr_assert_str_eq(c.name, "second");
    cr_assert_eq(c.nparams, 3);
    nv_cubin_free(&c);
    T_OK(nv_cubin_parse(b, size, "test", "first", &c));
    cr_assert_str_eq(c.name, "first");
    cr_assert_eq(c.nparams, 1);
    nv_cubin_free(&c);
    free(b);
}

Test(program_names, a_cubin_of_several_needs_a_name_and_lists_them)
{
    size_t size;
    void *b = cubin(&size);
    nv_cubin c;
    T_FAILS(nv_cubin_parse(b, size, "test", NULL, &c), HCQ_EINVAL);
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "`first`") && strstr(m, "`second`") && strstr(m, "hcq_program_load_kernel"), "%s", m);
    T_FAILS(nv_cubin_parse(b, size, "test", "third", &c), HCQ_EINVAL);
    m = hcq_error_message();
    cr_assert(strstr(m, "no kernel `third`") && strstr(m, "`first`") && strstr(m, "`second`"), "%s", m);
    free(b);
}

Test(program_names, a_code_object_kernel_is_picked_by_name)
{
    size_t size;
    void *b = code_object(&size);
    amd_co co;
    T_OK(amd_co_parse(b, size, "second", &co));
    cr_assert_str_eq(co.name, "second");
    cr_assert_eq(co.nparams, 3);
    cr_assert_eq(co.mach, 0x41, "gfx1100's EF_AMDGPU_MACH");
    uint64_t second_entry = co.entry_offset;
    amd_co_free(&co);
    T_OK(amd_co_parse(b, size, "first", &co));
    cr_assert_str_eq(co.name, "first");
    cr_assert_eq(co.nparams, 1);
    cr_assert_neq(co.entry_offset, second_entry, "each kernel has its own descriptor and entry");
    amd_co_free(&co);
    free(b);
}

Test(program_names, a_code_object_of_several_needs_a_name_and_lists_them)
{
    size_t size;
    void *b = code_object(&size);
    amd_co co;
    T_FAILS(amd_co_parse(b, size, NULL, &co), HCQ_EINVAL);
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "2 kernels") && strstr(m, "`first`") && strstr(m, "`second`"), "%s", m);
    T_FAILS(amd_co_parse(b, size, "third", &co), HCQ_EINVAL);
    m = hcq_error_message();
    cr_assert(strstr(m, "no kernel `third`") && strstr(m, "`second`"), "%s", m);
    free(b);
}

Test(program_names, the_cpu_device_names_its_one_kernel)
{
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    hcq_kernel *k = t_k_add1();
    hcq_binary *bin = NULL;
    T_OK(hcq_compile(k, hcq_device_get_props(d)->target, &bin));
    hcq_program *p = hcq_program_load_kernel(d, bin->data, bin->size, hcq_kernel_name(k));
    cr_assert_not_null(p, "%s", hcq_error_message());
    T_OK(hcq_program_free(p));
    cr_assert_null(hcq_program_load_kernel(d, bin->data, bin->size, "other"));
    cr_assert(strstr(hcq_error_message(), "no kernel `other`"), "%s", hcq_error_message());
    cr_assert_null(hcq_program_load_kernel(d, bin->data, bin->size, ""));
    cr_assert(strstr(hcq_error_message(), "empty"), "%s", hcq_error_message());
    hcq_binary_free(bin);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
}
