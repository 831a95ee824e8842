/* memcheck's bounds check (HCQ_MOCK_CHECK=memcheck): on the NV mock's SASS
 * executor and the AMD mock's ISA executor, a global access outside the
 * bytes a buffer was allocated with (not its 4 KiB rounding) stops the
 * kernel; the wait's error and stderr carry one report per bad access with
 * the instruction, thread, block and address; so does an access to a
 * freed buffer whose mapping the allocator keeps; accesses inside never
 * trip.
 * Kernels: tests/mock/memcheck.cu (nvcc, sm_90; skips without nvcc or
 * nvdisasm) and tests/corpus/hip/memcheck.hip (clang; gfx1100, gfx942).
 * The executors that stop at the first bad access (the mocks' host twins
 * and IR interpreter, the CPU device's interpreter) report that one; hcq's
 * own add-one kernel, run past its buffer, shows it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/twin.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "hiptest.h"
#include "nvcc_build.h"

static void setup(void)
{
    setenv("HCQ_MOCK_CHECK", "memcheck", 1);
    base_env_reload();
}
static void teardown(void)
{
    unsetenv("HCQ_MOCK_CHECK");
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}
TestSuite(memcheck, .init = setup, .fini = teardown, .timeout = 300);

typedef struct run {
    hcq_device *d;
    void *bin;
    size_t size;
    const char *store_insn; /* what the executor's instruction text names a global store by */
    const char *thread, *block; /* and a thread and a block */
} run;

static run open_nv(void)
{
    t_need_nvdisasm();
    run r = {.store_insn = "STG", .thread = "thread", .block = "block"};
    r.bin = t_nvcc_cubin("tests/mock/memcheck.cu", 90, &r.size);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure("nv=H100"));
    r.d = T_NONNULL(hcq_device_open("NV:0"));
    return r;
}

static run open_amd(const char *arch)
{
    run r = {.store_insn = "global_store", .thread = "work-item", .block = "work-group"};
    r.bin = t_build_hip("memcheck.hip", arch, false, &r.size);
    r.d = t_open_amd_isa(arch);
    return r;
}

static void finish(run *r)
{
    hcq_device_close(r->d);
    free(r->bin);
}

/* launches kernel over one block of `threads` with args; returns the
 * synchronize status and what the checker printed to stderr */
static hcq_status launch(run *r, const char *kernel, const hcq_arg *args, uint32_t nargs, uint32_t threads, char *err,
                         size_t err_size)
{
    hcq_program *p = hcq_program_load_kernel(r->d, r->bin, r->size, kernel);
    cr_assert_not_null(p, "%s: %s", kernel, hcq_error_message());
    t_stderr cap = t_stderr_begin();
    T_OK(hcq_launch(p, args, nargs, hcq_dims_1d(1, threads)));
    hcq_status s = hcq_device_synchronize(r->d);
    t_stderr_end(cap, err, err_size);
    return s;
}

static unsigned count(const char *s, const char *sub)
{
    unsigned n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) n++;
    return n;
}

/* thread 15 of 16 stores p[16]: 4 bytes right after a 64-byte buffer,
 * inside its page */
static void store_one_past(run r)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(r.d, 64, HCQ_MEM_DEVICE));
    hcq_arg a[] = {hcq_arg_buffer(b), hcq_arg_i32(1)};
    char printed[8192];
    T_FAILS(launch(&r, "mc_store", a, 2, 16, printed, sizeof printed), HCQ_EFAULT);
    const char *m = hcq_error_message();
    char where[64], thread[32], block[32];
    snprintf(where, sizeof where, "0x%llx", (unsigned long long)(hcq_buffer_va(b) + 64));
    snprintf(thread, sizeof thread, "%s (15,0,0)", r.thread);
    snprintf(block, sizeof block, "%s (0,0,0)", r.block);
    cr_assert(strstr(m, "memcheck found 1 bad access:") && strstr(m, "invalid global write of 4 bytes") &&
              strstr(m, where) && strstr(m, "0 bytes past the end of the 64-byte allocation") && strstr(m, thread) &&
              strstr(m, block) && strstr(m, "mc_store") && strstr(m, r.store_insn), "%s", m);
    cr_assert_eq(count(printed, "hcq memcheck: invalid global write"), 1, "%s", printed);
    finish(&r);
}

/* 32 threads read 4 KiB past the end of a 64-byte buffer: one report each,
 * the first four in the error and a count */
static void load_4k_past(run r)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(r.d, 64, HCQ_MEM_DEVICE)),
               *o = T_NONNULL(hcq_buffer_alloc(r.d, 32 * 4, HCQ_MEM_DEVICE));
    hcq_arg a[] = {hcq_arg_buffer(b), hcq_arg_buffer(o), hcq_arg_i32(16 + 1024)};
    char printed[32768];
    T_FAILS(launch(&r, "mc_load", a, 3, 32, printed, sizeof printed), HCQ_EFAULT);
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "memcheck found 32 bad accesses:") && strstr(m, "and 28 more") &&
              strstr(m, "invalid global read of 4 bytes") &&
              strstr(m, "4096 bytes past the end of the 64-byte allocation") && strstr(m, "mc_load"), "%s", m);
    cr_assert_eq(count(printed, "hcq memcheck: invalid global read"), 32, "%s", printed);
    char last[32];
    snprintf(last, sizeof last, "%s (31,0,0)", r.thread);
    cr_assert(strstr(printed, last), "%s", printed);
    finish(&r);
}

/* every byte of the buffer, written and read back: nothing to report */
static void in_bounds(run r)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(r.d, 64, HCQ_MEM_DEVICE)),
               *o = T_NONNULL(hcq_buffer_alloc(r.d, 64, HCQ_MEM_DEVICE));
    hcq_arg st[] = {hcq_arg_buffer(b), hcq_arg_i32(0)}, ld[] = {hcq_arg_buffer(b), hcq_arg_buffer(o), hcq_arg_i32(0)};
    char printed[4096];
    T_OK(launch(&r, "mc_store", st, 2, 16, printed, sizeof printed));
    T_OK(launch(&r, "mc_load", ld, 3, 16, printed, sizeof printed));
    cr_assert_eq(count(printed, "memcheck"), 0, "%s", printed);
    int out[16];
    T_OK(hcq_buffer_copyout(out, o, 0, sizeof out));
    for (int i = 0; i < 16; i++) cr_assert_eq(out[i], i + 1);
    finish(&r);
}

/* a store into a buffer freed meanwhile (its mapping kept by the
 * allocator's cache): the address is mapped, the allocation is gone */
static void store_after_free(run r)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(r.d, 64, HCQ_MEM_DEVICE));
    uint64_t va = hcq_buffer_va(b);
    T_OK(hcq_buffer_free(b));
    hcq_arg a[] = {hcq_arg_addr(HCQ_IMM(va)), hcq_arg_i32(0)};
    char printed[16384];
    T_FAILS(launch(&r, "mc_store", a, 2, 16, printed, sizeof printed), HCQ_EFAULT);
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "memcheck found 16 bad accesses:") && strstr(m, "that was freed") && strstr(m, "and 12 more"),
              "%s", m);
    cr_assert_eq(count(printed, "hcq memcheck: invalid global write"), 16, "%s", printed);
    finish(&r);
}

Test(memcheck, sass_store_one_past_a_64_byte_buffer) { store_one_past(open_nv()); }
Test(memcheck, sass_load_4k_past_a_64_byte_buffer) { load_4k_past(open_nv()); }
Test(memcheck, sass_in_bounds_never_trips) { in_bounds(open_nv()); }
Test(memcheck, sass_store_after_free) { store_after_free(open_nv()); }
Test(memcheck, gfx1100_store_one_past_a_64_byte_buffer) { store_one_past(open_amd("gfx1100")); }
Test(memcheck, gfx1100_load_4k_past_a_64_byte_buffer) { load_4k_past(open_amd("gfx1100")); }
Test(memcheck, gfx1100_in_bounds_never_trips) { in_bounds(open_amd("gfx1100")); }
Test(memcheck, gfx1100_store_after_free) { store_after_free(open_amd("gfx1100")); }
Test(memcheck, gfx942_store_one_past_a_64_byte_buffer) { store_one_past(open_amd("gfx942")); }
Test(memcheck, gfx942_in_bounds_never_trips) { in_bounds(open_amd("gfx942")); }

/* ** the host twins and the interpreters: a[i] += 1 for i < n over a
 * 64-byte buffer (16 words) */
static void add1_past(hcq_device *d)
{
    hcq_program *p = t_load(d, t_k_add1());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64, HCQ_MEM_DEVICE));
    hcq_arg ok[] = {hcq_arg_buffer(b), hcq_arg_u32(16)}, bad[] = {hcq_arg_buffer(b), hcq_arg_u32(17)};
    T_OK(hcq_launch(p, ok, 2, hcq_dims_1d(1, 32)));
    T_OK(hcq_device_synchronize(d));
    char printed[4096];
    t_stderr cap = t_stderr_begin();
    hcq_status s = hcq_launch(p, bad, 2, hcq_dims_1d(1, 32));
    if (!s) s = hcq_device_synchronize(d);
    t_stderr_end(cap, printed, sizeof printed);
    cr_assert_eq(s, HCQ_EFAULT, "%s: %s", hcq_status_name(s), hcq_error_message());
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "memcheck: invalid global") && strstr(m, "0 bytes past the end of the 64-byte allocation") &&
              strstr(m, "(16,0,0)"), "%s", m);
    cr_assert_eq(count(printed, "hcq memcheck: "), 1, "%s", printed);
    /* the NV mock's MMU fault names the refused element's address, not
     * the start of the span the interpreter asked about first */
    char at[80];
    snprintf(at, sizeof at, "at address 0x%llx (read access", (unsigned long long)(hcq_buffer_va(b) + 64));
    cr_assert(strncmp(hcq_device_get_props(d)->id, "NV", 2) || strstr(m, at), "%s", m);
    hcq_device_close(d);
}

static hcq_device *open_mock(const char *shader, const char *name)
{
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", shader, 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(""));
    return T_NONNULL(hcq_device_open(name));
}

static void need_twins(const char *arch)
{
    char why[256];
    if (!cc_twin_available(arch, why, sizeof why)) cr_skip_test("no host twins for %s here: %s", arch, why);
}

Test(memcheck, nv_twin_stops_at_the_first_bad_access) { need_twins("sm_90"), add1_past(open_mock("twin", "NV:0")); }
Test(memcheck, amd_twin_stops_at_the_first_bad_access) { need_twins("gfx1100"), add1_past(open_mock("twin", "AMD:0")); }
Test(memcheck, nv_ir_stops_at_the_first_bad_access) { add1_past(open_mock("ir", "NV:0")); }
Test(memcheck, cpu_ir_stops_at_the_first_bad_access)
{
    setenv("HCQ_CPU_TARGET", "ir", 1);
    base_env_reload();
    add1_past(T_NONNULL(hcq_device_open("CPU")));
}
