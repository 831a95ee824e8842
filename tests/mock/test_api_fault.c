/* A kernel's bad memory access is a fault of its device on every device,
 * never a crash of the program: a store far outside any mapping, a read of
 * one, and a raw bad address passed with hcq_arg_addr each end in
 * HCQ_EFAULT from the synchronize, naming the kernel, the device and an
 * address; the device stays faulted (sticky) and the next device opened
 * runs kernels. On the CPU device's compiled target the fault is the CPU's
 * own (drivers/cpu/cpu_fault.c); on CPU+ir the interpreter's bounds check;
 * on the mocks their MMU. Each test runs in a process of its own. */
#include "hcqtest.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

TestSuite(api_fault, .timeout = 240);

/* Address space no device maps: a PROT_NONE reservation of this process.
 * The CPU device's memory is host memory, so a kernel's access there is a
 * real fault; a mock GPU maps only what its driver mapped, which this never
 * is. */
enum { HOLE_BYTES = 1 << 20 };
static uint64_t hole(void)
{
    void *p = mmap(NULL, HOLE_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(p, MAP_FAILED, "cannot reserve address space for the test");
    return (uint64_t)(uintptr_t)p;
}

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref i = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, ls),
                                 hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    return hcq_ir_cast(k, HCQ_I64, i);
}

/* p[at + i] = i for every work-item i.     params: u32 *p, i64 at */
static hcq_kernel *k_poke(void)
{
    hcq_kernel *k = hcq_kernel_create("poke");
    hcq_ir_ref p = hcq_ir_param_buffer(k, HCQ_U32), at = hcq_ir_param_scalar(k, HCQ_I64), i = gid(k);
    hcq_ir_store(k, p, hcq_ir_binary(k, HCQ_OP_ADD, at, i), hcq_ir_cast(k, HCQ_U32, i));
    return k;
}

/* out[i] = p[at + i].                       params: u32 *out, u32 *p, i64 at */
static hcq_kernel *k_peek(void)
{
    hcq_kernel *k = hcq_kernel_create("peek");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32), p = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref at = hcq_ir_param_scalar(k, HCQ_I64), i = gid(k);
    hcq_ir_store(k, out, i, hcq_ir_load(k, p, hcq_ir_binary(k, HCQ_OP_ADD, at, i)));
    return k;
}

static bool compiled_cpu(hcq_device *d) { return !strcmp(hcq_device_get_props(d)->target, "cpu"); }

/* The launch faulted: HCQ_EFAULT naming the kernel and the device, sticky,
 * and the device closes; then a fresh device runs a kernel right. */
static void faulted(hcq_device *d, const char *kernel)
{
    uint64_t t0 = hcq_now_ns();
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    cr_assert_lt(hcq_now_ns() - t0, 10000000000ull, "the fault was reported within the timeout");
    T_MSG_HAS(kernel);
    T_MSG_HAS(hcq_device_get_props(d)->id);
    T_MSG_HAS("0x");
    T_FAILS(hcq_device_status(d), HCQ_EFAULT);
}

static void next_device_works(hcq_device *d)
{
    T_OK(hcq_device_close(d));
    hcq_device *again = t_open();
    hcq_program *p = t_load(again, t_k_add1());
    enum { N = 256 };
    uint32_t host[N], out[N];
    for (uint32_t i = 0; i < N; i++) host[i] = i;
    hcq_buffer *b = t_buffer_from(again, host, sizeof host);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_device_synchronize(again));
    t_read(b, out, sizeof out);
    for (uint32_t i = 0; i < N; i++) cr_assert_eq(out[i], i + 1, "element %u", i);
    T_OK(hcq_device_close(again));
}

Test(api_fault, a_store_far_outside_any_mapping_is_a_device_fault)
{
    uint64_t h = hole();
    hcq_device *d = t_open();
    hcq_program *p = t_load(d, k_poke());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64, HCQ_MEM_DEVICE));
    /* from the buffer to the hole, in elements: far past the buffer's end
     * (or before its start), wherever the two are */
    int64_t at = ((int64_t)h - (int64_t)hcq_buffer_va(b)) / 4;
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_i64(at)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)));
    faulted(d, "poke");
    if (compiled_cpu(d)) {
        /* one group runs its work-items in order: the first store faults */
        char want[64];
        snprintf(want, sizeof want, "wrote address 0x%llx", (unsigned long long)h);
        T_MSG_HAS(want);
        T_MSG_HAS("work-group (0,0,0)");
        T_MSG_HAS("not inside any allocation");
    }
    next_device_works(d);
}

Test(api_fault, a_read_of_unmapped_memory_is_a_device_fault)
{
    uint64_t h = hole();
    hcq_device *d = t_open();
    hcq_program *p = t_load(d, k_peek());
    hcq_buffer *out = T_NONNULL(hcq_buffer_alloc(d, 256, HCQ_MEM_DEVICE));
    hcq_arg a[3] = {hcq_arg_buffer(out), hcq_arg_addr(HCQ_IMM(h)), hcq_arg_i64(0)};
    T_OK(hcq_launch(p, a, 3, hcq_dims_1d(1, 64)));
    faulted(d, "peek");
    if (compiled_cpu(d)) {
        char want[64];
        snprintf(want, sizeof want, "read address 0x%llx", (unsigned long long)h);
        T_MSG_HAS(want);
        T_MSG_HAS("mapped without that permission");
    }
    next_device_works(d);
}

Test(api_fault, a_raw_null_address_from_hcq_arg_addr_is_a_device_fault)
{
    hcq_device *d = t_open();
    hcq_program *p = t_load(d, k_poke());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0x10)), hcq_arg_i64(0)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)));
    faulted(d, "poke");
    if (compiled_cpu(d)) {
        T_MSG_HAS("wrote address 0x10,");
        T_MSG_HAS("not mapped");
        T_MSG_HAS("in the kernel's code");
    }
    next_device_works(d);
}

Test(api_fault, a_non_canonical_address_is_a_device_fault)
{
    /* x86-64 raises a general-protection fault, which carries no address */
    hcq_device *d = t_open();
    hcq_program *p = t_load(d, k_poke());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0x8000000000001000ull)), hcq_arg_i64(0)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("poke");
    T_FAILS(hcq_device_status(d), HCQ_EFAULT);
    next_device_works(d);
}

Test(api_fault, many_work_groups_faulting_at_once_are_one_device_fault)
{
    /* every worker thread faults, several times over, while the others run */
    uint64_t h = hole();
    hcq_device *d = t_open();
    hcq_program *p = t_load(d, k_poke());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(h)), hcq_arg_i64(0)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(HOLE_BYTES / 4 / 64, 64)));
    faulted(d, "poke");
    next_device_works(d);
}
