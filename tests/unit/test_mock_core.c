/* The mock GPU's core, without any vendor: configuration, the address map
 * and its MMU checks, buffer objects and VRAM accounting, ioctl injection
 * counting, engines woken by doorbells and host writes, progress for host
 * waiters, and the shader core running IR from mapped memory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drivers/mock/mock.h"
#include "hcqtest.h"

static mock_gpu *gpu;

static void setup(void)
{
    T_OK(mock_configure(""));
    gpu = mock_gpu_add("t0", "test", 1 << 20);
    cr_assert_not_null(gpu);
}

TestSuite(mock_core, .init = setup, .timeout = 60);

Test(mock_core, config_parses_and_rejects)
{
    T_OK(mock_configure("nv=A100x2,amd=gfx942,vram=64M,hang=nv0.copy,fail_ioctl=5:ENOMEM"));
    const mock_config *c = mock_cfg();
    cr_assert_str_eq(c->nv_model, "A100");
    cr_assert_eq(c->nv_count, 2);
    cr_assert_str_eq(c->amd_model, "gfx942");
    cr_assert_eq(c->amd_count, 1);
    cr_assert_eq(c->amd_peer, MOCK_PEER_PCIE, "PCIe peer-to-peer between AMD GPUs by default");
    cr_assert_eq(c->vram_bytes, 64ull << 20);
    cr_assert_str_eq(c->hang_engine, "nv0.copy");
    cr_assert_eq(c->fail_errno, ENOMEM);
    T_FAILS(mock_configure("bogus=1"), HCQ_EINVAL);
    T_MSG_HAS("unknown key `bogus`");
    T_FAILS(mock_configure("nv"), HCQ_EINVAL);
    /* every value is checked: typos are errors that name the value */
    const struct {
        const char *spec, *msg;
    } bad[] = {
        {"nv=B200", "no such NVIDIA model"},   {"amd=gfx1030", "no such AMD model"},
        {"hang=amd0.copy", "no such engine"},  {"hang=nv1.compute", "no such engine"},
        {"mmu_fault=zz", "mmu_fault=`zz`"},    {"vram=1X", "vram=`1X`"},
        {"vram=12", "at least 1M"},            {"fail_ioctl=5:ENOMEMM", "errno name"},
        {"fail_ioctl=x", "fail_ioctl=`x`"},    {"ring_shift=40", "5 to 22"},
        {"nv=H100x99", "0 to 8"},              {"nv_driver=latest", "580.95.05"},
        {"open_fail=dev/kfd", "PATH[:E]"},     {"amd_peer=nvlink", "use pcie, xgmi or none"},
        {"amd=gfx942x9", "0 to 8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(mock_configure(bad[i].spec), HCQ_EINVAL, "%s was accepted", bad[i].spec);
        cr_assert(strstr(hcq_error_message(), bad[i].msg), "%s: %s", bad[i].spec, hcq_error_message());
    }
    T_OK(mock_configure("vram=1T,hang=amd0.sdma,mmu_fault=0x5000,fail_ioctl=3:0x1f,open_fail=/dev/kfd:EPERM"));
    c = mock_cfg();
    cr_assert_eq(c->vram_bytes, 1ull << 40, "1T is a tebibyte, not 1 byte");
    cr_assert_str_eq(c->hang_engine, "amd0.sdma");
    cr_assert_eq(c->fail_status, 0x1f);
    cr_assert_str_eq(c->open_fail_path, "/dev/kfd");
    cr_assert_eq(mock_sys()->open(NULL, "/dev/kfd", 2), -EPERM, "open_fail makes the open fail");
    T_OK(mock_configure(""));
}

Test(mock_core, a_bad_config_from_the_environment_stops_the_process)
{
    const char *hcq = getenv("HCQ_TEST_HCQ_BIN");
    if (!hcq) hcq = "build/hcq";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=B200 %s info >/dev/null 2>&1", hcq);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "hcq info with nv=B200 exited %d", st);
    snprintf(cmd, sizeof cmd, "HCQ_MOCK_CONFIG=nv=H100 %s info >/dev/null 2>&1", hcq);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "HCQ_MOCK_CONFIG without HCQ_MOCK=1 is refused (%d)", st);
    /* a bad HCQ_MOCK_SCHED (non-ASCII here) is blamed on HCQ_MOCK_SCHED,
     * with HCQ_MOCK_CONFIG fine and unset */
    snprintf(cmd, sizeof cmd, "HCQ_MOCK=1 HCQ_MOCK_SCHED=$(printf 'random:\\303\\251') %s info 2>&1 >/dev/null", hcq);
    FILE *p = popen(cmd, "r");
    char out[1024] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    st = pclose(p);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exited %d: %s", st, out);
    cr_assert(strstr(out, "wrong (HCQ_MOCK_SCHED=random:\303\251)"), "the stop blames another variable: %s", out);
    cr_assert_null(strstr(out, "HCQ_MOCK_CONFIG"), "%s", out);
}

Test(mock_core, bo_memory_is_counted_against_vram)
{
    int err = 0;
    mock_bo *a = mock_bo_new(gpu, 768 << 10, &err);
    cr_assert_not_null(a);
    cr_assert_null(mock_bo_new(gpu, 512 << 10, &err), "allocated past the 1 MiB of VRAM");
    cr_assert_eq(err, ENOMEM);
    mock_bo *sys = mock_bo_new(NULL, 512 << 10, &err); /* system memory is not counted */
    cr_assert_not_null(sys);
    mock_bo_unref(a);
    mock_bo *b = mock_bo_new(gpu, 512 << 10, &err);
    cr_assert_not_null(b, "freed VRAM is available again");
    mock_bo_unref(b);
    mock_bo_unref(sys);
    cr_assert_eq(atomic_load(&gpu->vram_used), 0);
}

Test(mock_core, cpu_and_gpu_share_one_mapping)
{
    int err;
    mock_bo *bo = mock_bo_new(gpu, 8192, &err);
    uint64_t va = mock_va_reserve(8192);
    cr_assert_neq(va, 0);
    uint32_t gbit = 1u << gpu->index;
    cr_assert_eq(mock_va_map(va, 8192, bo, 0, gbit, true), 0);
    char why[256];
    cr_assert(mock_gpu_access(gpu, va + 100, 8, true, why, sizeof why), "%s", why);
    cr_assert_eq(mock_va_map(va, 8192, bo, 0, MOCK_MAP_CPU, true), 0, "the CPU joins the GPU's mapping");
    cr_assert_eq(mock_va_map(va, 4096, bo, 0, MOCK_MAP_CPU, true), -EEXIST, "a different range overlaps");
    ((volatile uint32_t *)(uintptr_t)va)[10] = 0xabcd;
    cr_assert_eq(mock_va_unmap(va, 8192, MOCK_MAP_CPU), 0);
    /* the GPU still maps it: the memory and its contents stay */
    cr_assert_eq(((volatile uint32_t *)(uintptr_t)va)[10], 0xabcd);
    cr_assert_eq(mock_va_unmap(va, 8192, gbit), 0);
    cr_assert(!mock_gpu_access(gpu, va, 8, false, why, sizeof why));
    cr_assert(strstr(why, "not mapped for t0"), "%s", why);
    cr_assert_eq(mock_va_unmap(va, 8192, gbit), -ENOENT);
    mock_bo_unref(bo);
}

Test(mock_core, mmu_checks_bounds_permissions_and_injection)
{
    int err;
    mock_bo *bo = mock_bo_new(gpu, 4096, &err);
    uint64_t va = mock_va_reserve(3 * 4096) + 4096;
    cr_assert_eq(mock_va_map(va, 4096, bo, 0, 1u << gpu->index, false), 0);
    char why[256];
    cr_assert(mock_gpu_access(gpu, va, 4096, false, why, sizeof why), "%s", why);
    cr_assert(!mock_gpu_access(gpu, va + 4090, 8, false, why, sizeof why));
    cr_assert(strstr(why, "past the end"), "%s", why);
    cr_assert(!mock_gpu_access(gpu, va, 4, true, why, sizeof why));
    cr_assert(strstr(why, "read-only"), "%s", why);
    cr_assert_eq(mock_va_unmap(va, 4096, 1u << gpu->index), 0);
    mock_bo_unref(bo);
    T_OK(mock_configure("mmu_fault=0x5000"));
    mock_gpu *g = mock_gpu_add("t1", "test", 1 << 20);
    cr_assert(!mock_gpu_access(g, 0x5ff0, 4, false, why, sizeof why));
    cr_assert(strstr(why, "injection"), "%s", why);
}

Test(mock_core, ioctl_injection_hits_exactly_the_nth)
{
    int err = 0;
    uint32_t status = 0;
    mock_fail_ioctl(3, ENOSPC, 0);
    cr_assert(!mock_ioctl_inject(&err, &status));
    cr_assert(!mock_ioctl_inject(&err, &status));
    cr_assert(mock_ioctl_inject(&err, &status));
    cr_assert_eq(err, ENOSPC);
    cr_assert(!mock_ioctl_inject(&err, &status), "it fails once");
    mock_fail_ioctl(1, 0, 0x51);
    cr_assert(mock_ioctl_inject(&err, &status));
    cr_assert_eq(status, 0x51);
    cr_assert_eq(err, 0);
}

/* an engine that counts steps and reports progress each time a flag is set */
typedef struct counter {
    atomic_int steps;
    atomic_int work;
    volatile uint32_t bell;
} counter;

static mock_step count_step(mock_engine *e, void *ctx)
{
    (void)e;
    counter *c = ctx;
    atomic_fetch_add(&c->steps, 1);
    if (atomic_load(&c->work)) {
        atomic_fetch_sub(&c->work, 1);
        mock_progress();
        return MOCK_STEP_PROGRESS;
    }
    return MOCK_STEP_IDLE;
}

Test(mock_core, doorbells_wake_engines_and_progress_wakes_waiters)
{
    static counter c;
    /* idle engines look again only after 30 s: a wake sooner is the doorbell's */
    uint64_t old = mock_engines_idle_poll(30000000000ull);
    mock_engine *e = mock_engine_start(gpu, "t0.test", count_step, &c);
    cr_assert_not_null(e);
    mock_engine_set_doorbell(e, &c.bell, sizeof c.bell);
    while (atomic_load(&c.steps) == 0) usleep(1000); /* it has looked once and sleeps */
    usleep(2000);
    const hcq_sys *s = mock_sys();
    uint64_t seq = s->progress_seq(s->ctx);
    atomic_store(&c.work, 3);
    uint64_t t0 = hcq_now_ns();
    c.bell = 1;
    s->doorbell(s->ctx, &c.bell);
    while (s->progress_seq(s->ctx) < seq + 3 && hcq_now_ns() - t0 < 20000000000ull)
        s->progress_wait(s->ctx, s->progress_seq(s->ctx), 50000000);
    cr_assert_geq(s->progress_seq(s->ctx), seq + 3);
    cr_assert_lt(hcq_now_ns() - t0, 20000000000ull, "the doorbell did not wake the engine: it waited for its poll");
    mock_engine_stop(e);
    mock_engines_idle_poll(old);
}

Test(mock_core, hung_engines_never_step)
{
    T_OK(mock_configure("hang=nv0.copy"));
    mock_gpu *g = mock_gpu_add("t9", "test", 1 << 20);
    static counter c;
    mock_engine *e = mock_engine_start(g, "nv0.copy", count_step, &c);
    mock_engine_kick(e);
    base_sleep_ns(20000000);
    cr_assert_eq(atomic_load(&c.steps), 0);
    mock_engine_stop(e);
}

static uint64_t map_blob(const void *data, size_t size, bool writable)
{
    int err;
    size_t bytes = (size + 4095) & ~4095ull;
    mock_bo *bo = mock_bo_new(gpu, bytes, &err);
    uint64_t va = mock_va_reserve(bytes);
    cr_assert_eq(mock_va_map(va, bytes, bo, 0, (1u << gpu->index) | MOCK_MAP_CPU, writable), 0);
    mock_bo_unref(bo);
    memcpy((void *)(uintptr_t)va, data, size);
    return va;
}

Test(mock_core, shader_runs_ir_from_gpu_memory_and_faults_on_bad_access)
{
    /* out[i] = in[i] * 2 over 64 work-items */
    hcq_kernel *k = hcq_kernel_create("dbl");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_U32), out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref i = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_store(k, out, i, hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_load(k, in, i), hcq_ir_const_int(k, HCQ_U32, 2)));
    void *blob;
    size_t blob_size;
    T_OK(hcq_kernel_serialize(k, &blob, &blob_size));
    hcq_kernel_destroy(k);
    uint64_t code = map_blob(blob, blob_size, false);
    free(blob);
    uint32_t data[64];
    for (int j = 0; j < 64; j++) data[j] = (uint32_t)j;
    uint64_t bin = map_blob(data, sizeof data, false), bout = map_blob(data, sizeof data, true);
    uint64_t args[2] = {bin, bout};
    uint64_t kargs = map_blob(args, sizeof args, false);
    uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
    mock_fault f;
    T_OK(mock_shader_run(gpu, code, kargs, grid, block, &f));
    for (int j = 0; j < 64; j++) cr_assert_eq(((uint32_t *)(uintptr_t)bout)[j], (uint32_t)j * 2);
    /* writing the read-only input is a fault naming the address */
    uint64_t bad[2] = {bin, bin};
    uint64_t kbad = map_blob(bad, sizeof bad, false);
    T_FAILS(mock_shader_run(gpu, code, kbad, grid, block, &f), HCQ_EFAULT);
    cr_assert_eq(f.va, bin, "fault va 0x%llx", (unsigned long long)f.va);
    cr_assert(f.write);
    cr_assert(f.mmu, "the mappings refused it: an MMU fault");
    cr_assert(strstr(f.what, "dbl") && strstr(f.what, "read-only"), "%s", f.what);
    /* code that is not mapped for the GPU */
    T_FAILS(mock_shader_run(gpu, 0x1000, kargs, grid, block, &f), HCQ_EFAULT);
    cr_assert(f.mmu);
    cr_assert(strstr(f.what, "kernel code"), "%s", f.what);
    /* mapped bytes that are not a kernel */
    T_FAILS(mock_shader_run(gpu, bin, kargs, grid, block, &f), HCQ_EFORMAT);
}

Test(mock_core, real_files_pass_through_and_device_files_are_hidden)
{
    /* no emulated GPUs: the real device files stay hidden all the same */
    T_OK(mock_configure("nv=H100x0,amd=gfx1100x0"));
    const hcq_sys *s = mock_sys();
    char buf[64];
    cr_assert_gt(s->read_file(s->ctx, "/proc/self/stat", buf, sizeof buf), 0);
    cr_assert_eq(s->open(s->ctx, "/dev/nvidiactl", 2), -ENOENT);
    cr_assert_eq(s->open(s->ctx, "/dev/kfd", 2), -ENOENT);
    int fd = s->open(s->ctx, "/dev/null", 2);
    cr_assert_geq(fd, 0);
    cr_assert_eq(s->close(s->ctx, fd), 0);
    int err = 0;
    void *p = s->mmap(s->ctx, NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &err);
    cr_assert_not_null(p);
    cr_assert_eq(s->munmap(s->ctx, p, 4096), 0);
}
