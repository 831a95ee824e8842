/* The NV mock running real cubins (ptxas's SASS) as their host twins:
 * what the hardware would refuse in a QMD it refuses too, naming the
 * field; BARRIER_COUNT comes from the cubin; the fallback to kernel IR
 * says why; a kernel cache filled where the tools are serves a mock
 * without them. Skips (saying why) where clang or ptxas is missing. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/elf.h"
#include "compiler/twin.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void)
{
    setenv("HCQ_MOCK_SHADER", "twin", 1); /* the twins (by default the mock runs the SASS on its executor) */
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(nv_twin, .init = setup, .timeout = 240);

static void need_twins(const char *arch)
{
    char why[256];
    unsetenv("HCQ_MOCK_SHADER"); /* whether the tools are here (`twin` would say yes without them) */
    base_env_reload();
    bool have = cc_twin_available(arch, why, sizeof why);
    setenv("HCQ_MOCK_SHADER", "twin", 1);
    base_env_reload();
    if (!have) cr_skip_test("no host twins for %s here: %s", arch, why);
}

static hcq_device *open_nv(void)
{
    hcq_device *d = hcq_device_open("NV:0");
    cr_assert_not_null(d, "%s", hcq_error_message());
    return d;
}

static uint32_t qmd_get(hcq_program *p, nv_qmd_id f)
{
    nv_prog *np = p->priv;
    return (uint32_t)nv_qmd_get(np->qmd, nv_of(p->dev)->qmd_ver, f, 0);
}

static void qmd_set(hcq_program *p, nv_qmd_id f, uint64_t v)
{
    nv_prog *np = p->priv;
    nv_qmd_set(np->qmd, nv_of(p->dev)->qmd_ver, f, 0, v);
}

Test(nv_twin, barrier_count_comes_from_the_cubin)
{
    need_twins("sm_90");
    hcq_device *d = open_nv();
    cr_assert_str_eq(hcq_device_get_props(d)->target, "sm_90");
    hcq_program *p = t_load(d, t_k_reverse(false)), *q = t_load(d, t_k_add1());
    cr_assert_eq(qmd_get(p, NV_QMD_BARRIER_COUNT), 1);
    cr_assert_eq(qmd_get(q, NV_QMD_BARRIER_COUNT), 0);
    t_run_reverse(p->dev, p, 3, 256, false);
    T_OK(hcq_program_free(p));
    T_OK(hcq_program_free(q));
    T_OK(hcq_device_close(d));
}

/* a launch of p with field f poked to v (or the launch dims given) faults,
 * and the message names what it should */
static void refused(const char *cfg, hcq_kernel *k, nv_qmd_id f, uint64_t v, uint32_t block, const char *want1,
                    const char *want2)
{
    T_OK(mock_configure(cfg));
    hcq_device *d = open_nv();
    hcq_program *p = t_load(d, k);
    qmd_set(p, f, v);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 1 << 16, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(2, block)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("reverse");
    char why[1024];
    mock_nv_last_error(0, why, sizeof why);
    cr_assert(strstr(why, want1) && strstr(why, want2), "the fault should say \"%s\" and \"%s\": %s", want1,
              want2, why);
    T_OK(hcq_device_close(d));
}

Test(nv_twin, a_bar_sync_beyond_barrier_count_is_an_illegal_instruction)
{
    need_twins("sm_90");
    refused("", t_k_reverse(false), NV_QMD_BARRIER_COUNT, 0, 64, "bar.sync 0", "BARRIER_COUNT 0");
}

Test(nv_twin, registers_times_threads_must_fit_the_register_file)
{
    need_twins("sm_90");
    refused("", t_k_reverse(false), NV_QMD_REGISTER_COUNT, 255, 512, "REGISTER_COUNT 255 x 512 threads",
            "register file");
    /* and the QMD must give the code the registers it uses */
    refused("", t_k_reverse(false), NV_QMD_REGISTER_COUNT, 1, 64, "REGISTER_COUNT 1 is below", "registers");
    /* issue 21 item 4: counted per SM sub-partition, as the scheduler
     * allocates them (SKEDCHECK19): 200 registers x 320 threads is 64000 of
     * the file's 65536, but 10 warps put 3 in one quarter: 19200 > 16384 */
    refused("", t_k_reverse(false), NV_QMD_REGISTER_COUNT, 200, 320, "REGISTER_COUNT 200 x 320 threads",
            "SKEDCHECK19_CTA_REGISTER_CONSUMPTION");
    /* and at most 255 per thread (SKEDCHECK06) */
    refused("", t_k_reverse(false), NV_QMD_REGISTER_COUNT, 256, 32, "REGISTER_COUNT 256 is above the 255",
            "SKEDCHECK06_REGISTER_COUNT");
}

Test(nv_twin, shared_memory_must_cover_the_kernel_and_fit_the_carveout)
{
    need_twins("sm_90");
    refused("", t_k_reverse(false), NV_QMD_SHARED_MEMORY_SIZE, 512, 64, "SHARED_MEMORY_SIZE 512 is below", "1024");
    refused("", t_k_reverse(false), NV_QMD_SHARED_MEMORY_SIZE, 40 * 1024, 64, "SHARED_MEMORY_SIZE 40960 exceeds",
            "TARGET_SM_CONFIG_SHARED_MEM_SIZE 9");
    need_twins("sm_89");
    refused("nv=RTX4090", t_k_reverse(false), NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE, 58, 64,
            "MAX_SM_CONFIG_SHARED_MEM_SIZE 58", "the RTX4090 SM has 100");
}

Test(nv_twin, constant_bank_0_must_hold_the_parameters)
{
    need_twins("sm_80");
    refused("nv=A100", t_k_reverse(false), NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0x160 >> 4, 64,
            "constant bank 0 is 352 bytes", "CONSTANT_BUFFER_SIZE_SHIFTED4");
}

/* A cubin whose .nv.info says the kernel needs `bytes` of stack
 * (EIATTR_MIN_STACK_SIZE, 0x12, patched in; the kernel itself does not
 * touch it): the loader must give it a local-memory buffer and size in
 * the QMD, and the mock refuses the launch where they are missing. */
static hcq_program *with_stack(hcq_device *d, uint32_t bytes)
{
    hcq_kernel *k = t_k_reverse(false);
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "sm_90", &b));
    cc_elf e;
    T_OK(cc_elf_open(&e, b->data, b->size));
    int patched = 0;
    const char *names[] = {".nv.info", ".nv.info.reverse"};
    for (int n = 0; n < 2; n++) {
        const cc_elf_section *sec = cc_elf_find_section(&e, names[n]);
        if (!sec || !sec->data) continue;
        uint8_t *r = (uint8_t *)b->data + sec->offset, *end = r + sec->size;
        while (r + 4 <= end) {
            uint32_t len = r[0] == 4 ? (uint32_t)(r[2] | r[3] << 8) : 0; /* EIFMT_SVAL: a payload */
            if (r[0] == 4 && r[1] == 0x12 && len >= 8) memcpy(r + 8, &bytes, 4), patched++;
            r += 4 + len;
        }
    }
    cc_elf_close(&e);
    if (!patched) cr_skip_test("this ptxas writes no EIATTR_MIN_STACK_SIZE record to patch");
    /* its own twin: the process registers the patched binary only */
    T_OK(cc_twin_prepare(k, "sm_90", b->data, b->size));
    hcq_program *p = T_NONNULL(hcq_program_load(d, b->data, b->size));
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    return p;
}

Test(nv_twin, a_kernel_with_a_stack_needs_local_memory_set_up)
{
    need_twins("sm_90");
    hcq_device *d = open_nv();
    hcq_program *p = with_stack(d, 256);
    cr_assert_geq(qmd_get(p, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE), 256u);
    t_run_reverse(p->dev, p, 2, 64, false); /* the loader sets the stack up: the launch runs */
    qmd_set(p, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 16);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 1 << 16, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(2, 64)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    char why[1024];
    mock_nv_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "SHADER_LOCAL_MEMORY_HIGH_SIZE 16 is below") && strstr(why, "256 bytes of stack"), "%s",
              why);
    T_OK(hcq_device_close(d));
}

/* issue 21 item 4: a launch programs the stack plus the 0x240 bytes the ABI
 * keeps above the initial stack pointer (cbuf0 + 0x28 = 16 MiB - 0x240);
 * local memory that covers the stack alone is refused */
Test(nv_twin, local_memory_covers_the_stack_and_the_abi_reserve)
{
    need_twins("sm_90");
    hcq_device *d = open_nv();
    hcq_program *p = with_stack(d, 256);
    cr_assert_eq(qmd_get(p, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE), 256u + NV_LOCAL_RESERVE);
    qmd_set(p, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 256);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 1 << 16, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(2, 64)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    char why[1024];
    mock_nv_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "SHADER_LOCAL_MEMORY_HIGH_SIZE 256 is below its 256 bytes of stack + the 0x240"), "%s", why);
    T_OK(hcq_device_close(d));
}

/* the twin's global accesses go through the GPU's mappings: an unmapped
 * one is the MMU fault hardware would raise, naming address and kernel */
Test(nv_twin, a_bad_address_is_an_mmu_fault_naming_the_kernel)
{
    need_twins("sm_90");
    hcq_device *d = open_nv();
    cr_assert(strstr(hcq_device_get_props(d)->shader, "host twins"), "%s", hcq_device_get_props(d)->shader);
    hcq_program *p = t_load(d, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("MMU fault");
    T_MSG_HAS("0xdead0000");
    T_MSG_HAS("add1");
    char why[1024];
    mock_nv_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "kernel `add1`") && strstr(why, "0xdead0000 is not mapped"), "%s", why);
    T_OK(hcq_device_close(d));
}

Test(nv_twin, parameters_come_from_constant_bank_0_at_the_cubins_offsets)
{
    const char *models[][2] = {{"nv=H100", "sm_90"}, {"nv=A100", "sm_80"}, {"nv=RTX4090", "sm_89"},
                               {"nv=RTX3090", "sm_86"}};
    for (int i = 0; i < 4; i++) {
        need_twins(models[i][1]);
        T_OK(mock_configure(models[i][0]));
        hcq_device *d = open_nv();
        hcq_program *p = t_load(d, t_k_reverse(false));
        nv_prog *np = p->priv;
        cr_assert_eq(np->param_base, i ? 0x160u : 0x210u);
        t_run_reverse(p->dev, p, 2, 128, false);
        T_OK(hcq_program_free(p));
        T_OK(hcq_device_close(d));
    }
}

/* ** the fallback, and a cache that travels: in child processes, since
 * the tools are found once per process */
static int in_child(void (*fn)(const char *), const char *arg, const char *err_file)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (err_file) {
            int fd = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(fd, 2);
        }
        fn(arg);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void add1_on(hcq_device *d, int code)
{
    enum { N = 100 };
    hcq_program *p = hcq_program_from_kernel(d, t_k_add1());
    if (!p) {
        fprintf(stderr, "%s\n", hcq_error_message());
        _exit(code);
    }
    uint32_t v[N];
    for (int i = 0; i < N; i++) v[i] = (uint32_t)i;
    hcq_buffer *b = hcq_buffer_alloc(d, sizeof v, HCQ_MEM_DEVICE);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    if (!b || hcq_buffer_copyin(b, 0, v, sizeof v) || hcq_launch(p, a, 2, hcq_dims_1d(2, 64)) ||
        hcq_buffer_copyout(v, b, 0, sizeof v)) {
        fprintf(stderr, "%s\n", hcq_error_message());
        _exit(code + 1);
    }
    for (int i = 0; i < N; i++)
        if (v[i] != (uint32_t)i + 1) _exit(code + 2);
}

static void fallback(const char *how)
{
    unsetenv("HCQ_MOCK_SHADER"); /* the default: without ptxas neither the executor nor twins */
    setenv(how, strcmp(how, "HCQ_PTXAS") ? "ir" : "/nonexistent/ptxas", 1); /* or HCQ_MOCK_SHADER */
    setenv("HCQ_DEBUG", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    hcq_device *d = hcq_device_open("NV:0");
    if (!d) _exit(2);
    const hcq_device_props *pr = hcq_device_get_props(d);
    if (strcmp(pr->target, "mock-sm_90")) _exit(3);
    if (!strstr(pr->shader, "kernel IR on the interpreter")) _exit(4);
    add1_on(d, 10);
    hcq_device_close(d);
}

static bool file_has(const char *path, const char *s)
{
    char buf[1 << 16] = "";
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return strstr(buf, s) != NULL;
}

Test(nv_twin, without_ptxas_the_mock_runs_kernel_ir_and_says_why)
{
    char log[T_TMP_PATH];
    int fd = t_tmpfile(log, sizeof log, "hcq-twin-log");
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(in_child(fallback, "HCQ_PTXAS", log), 0);
    cr_assert(file_has(log, "target mock-sm_90; kernels run as kernel IR on the interpreter"));
    cr_assert(file_has(log, "ptxas"));
    cr_assert_eq(in_child(fallback, "HCQ_MOCK_SHADER", log), 0);
    cr_assert(file_has(log, "HCQ_MOCK_SHADER=ir"));
    unlink(log);
}

static void fill(const char *why_file)
{
    char why[256];
    if (!cc_twin_available("sm_90", why, sizeof why)) {
        FILE *f = fopen(why_file, "w");
        if (f) fputs(why, f), fclose(f);
        _exit(77);
    }
    sys_set(mock_sys());
    hcq_device *d = hcq_device_open("NV:0");
    if (!d || strcmp(hcq_device_get_props(d)->target, "sm_90")) _exit(2);
    add1_on(d, 10);
    hcq_device_close(d);
}

static void use_without_tools(const char *dir)
{
    (void)dir;
    setenv("PATH", "/nonexistent", 1);
    setenv("HCQ_CLANG", "/nonexistent/clang", 1);
    setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
    setenv("HCQ_MOCK_SHADER", "twin", 1);
    base_env_reload();
    sys_set(mock_sys());
    hcq_device *d = hcq_device_open("NV:0");
    if (!d || strcmp(hcq_device_get_props(d)->target, "sm_90")) _exit(2);
    add1_on(d, 10);
    hcq_device_close(d);
}

/* (the tools are found once per process: this test's own process never
 * looks, so the second child finds none) */
Test(nv_twin, a_cache_filled_with_the_tools_runs_real_cubins_without_them)
{
    char dir[T_TMP_PATH], why_file[300];
    t_tmpdir(dir, sizeof dir, "hcq-twin-cache");
    setenv("HCQ_CACHE_DIR", dir, 1);
    base_env_reload();
    snprintf(why_file, sizeof why_file, "%s/why", dir);
    int rc = in_child(fill, why_file, NULL);
    if (rc == 77) {
        char why[256] = "";
        FILE *f = fopen(why_file, "r");
        if (f) why[fread(why, 1, sizeof why - 1, f)] = 0, fclose(f);
        cr_skip_test("no host twins for sm_90 here: %s", why);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(in_child(use_without_tools, dir, NULL), 0);
    char cmd[T_TMP_PATH + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* a kernel storing its thread index; `unused` adds a last parameter the
 * code never reads, so both versions compile to the same SASS and differ
 * only in the cubin's parameter list (the tensor fuzzer met such a pair) */
static hcq_kernel *k_index(bool unused)
{
    hcq_kernel *k = hcq_kernel_create("E");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    if (unused) hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref i = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    hcq_ir_store(k, out, i, i);
    return k;
}

Test(nv_twin, kernels_of_the_same_code_are_checked_against_their_own_parameters)
{
    need_twins("sm_90");
    hcq_device *d = open_nv();
    hcq_program *wide = t_load(d, k_index(true)), *narrow = t_load(d, k_index(false));
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64 * 4, HCQ_MEM_DEVICE));
    hcq_arg one[1] = {hcq_arg_buffer(b)}, two[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    /* the narrow launch's constant bank ends before the wide cubin's
     * parameters would: it must be checked against its own */
    T_OK(hcq_launch(narrow, one, 1, hcq_dims_1d(1, 64)));
    T_OK(hcq_launch(wide, two, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_device_synchronize(d));
    uint32_t got[64];
    T_OK(hcq_buffer_copyout(got, b, 0, sizeof got));
    for (uint32_t i = 0; i < 64; i++) cr_assert_eq(got[i], i);
    T_OK(hcq_device_close(d));
}
