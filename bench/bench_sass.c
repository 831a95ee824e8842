/* The NV mock's SASS executor's rate (HCQ_MOCK_SHADER=isa): thread
 * instructions (active lanes of each instruction issued) per second of
 * the process's CPU time, that is per core, for:
 *   alu    a loop of integer multiply and xor per thread (ptxas unrolls it:
 *          IMAD, LOP3, ISETP, BRA), 256 blocks of 128 threads;
 *   memory a vector add over 4 Mi elements (LDG, FADD, STG and the address
 *          arithmetic), 4096 blocks of 256 threads;
 * and the wall time of each launch on the GPU's worker pool. Needs clang
 * and ptxas (the kernels are hcq IR built for sm_90) and nvdisasm, else it
 * says so and exits 0. --json prints JSON. */
#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/sass.h"
#include "compiler/twin.h"
#include "drivers/mock/mock_sass.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_sass: %s: %s\n", what, hcq_error_message());
    exit(1);
}

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* the global index of a 1-d launch of blocks of `bs` */
static hcq_ir_ref gid(hcq_kernel *k, uint32_t bs)
{
    hcq_ir_ref g = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0));
    hcq_ir_ref l = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    return hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, hcq_ir_const_int(k, HCQ_U32, bs)), l);
}

/* out[gid] = acc after n rounds of acc = acc * 3 ^ i */
static hcq_kernel *k_alu(void)
{
    hcq_kernel *k = hcq_kernel_create("alu");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_int(k, HCQ_U32, 1));
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_U32, 0), n);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_XOR, hcq_ir_binary(k, HCQ_OP_MUL, acc, hcq_ir_const_int(k, HCQ_U32, 3)), r));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, out, gid(k, 128), acc);
    return k;
}

/* c[i] = a[i] + b[i] */
static hcq_kernel *k_mem(void)
{
    hcq_kernel *k = hcq_kernel_create("vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32), c = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref i = gid(k, 256);
    hcq_ir_store(k, c, i, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    return k;
}

typedef struct result {
    const char *name;
    double thread_insns, cpu_s, wall_s;
} result;

static result run(hcq_device *dev, const char *name, hcq_kernel *k, hcq_arg *args, int nargs, hcq_dims dims)
{
    hcq_program *p = hcq_program_from_kernel(dev, k);
    if (!p) die(name);
    /* once to warm (decode, first touches), then measured */
    if (hcq_launch(p, args, nargs, dims) || hcq_device_synchronize(dev)) die(name);
    uint64_t w0, t0, w1, t1;
    mock_sass_counters(&w0, &t0);
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), s0 = now(CLOCK_MONOTONIC);
    if (hcq_launch(p, args, nargs, dims) || hcq_device_synchronize(dev)) die(name);
    double c1 = now(CLOCK_PROCESS_CPUTIME_ID), s1 = now(CLOCK_MONOTONIC);
    mock_sass_counters(&w1, &t1);
    hcq_program_free(p);
    return (result){name, (double)(t1 - t0), c1 - c0, s1 - s0};
}

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    char why[600];
    if (!cc_twin_available("sm_90", why, sizeof why)) {
        printf("bench_sass: no clang and ptxas for sm_90 here (%s); nothing to measure\n", why);
        return 0;
    }
    if (!sass_nvdisasm(why, sizeof why)) {
        printf("bench_sass: %s; nothing to measure\n", why);
        return 0;
    }
    hcq_device *dev = hcq_device_open("NV:0");
    if (!dev) die("open");
    enum { N = 4 << 20 };
    hcq_buffer *a = hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE), *b = hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE),
               *c = hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE);
    if (!a || !b || !c) die("alloc");
    hcq_arg alu_args[2] = {hcq_arg_buffer(c), hcq_arg_u32(2000)};
    hcq_arg mem_args[3] = {hcq_arg_buffer(a), hcq_arg_buffer(b), hcq_arg_buffer(c)};
    result r[2] = {run(dev, "alu", k_alu(), alu_args, 2, hcq_dims_1d(256, 128)),
                   run(dev, "memory", k_mem(), mem_args, 3, hcq_dims_1d(N / 256, 256))};
    for (int i = 0; i < 2; i++) {
        double rate = r[i].thread_insns / r[i].cpu_s;
        if (json)
            printf("%s{\"kernel\": \"%s\", \"thread_insns\": %.0f, \"cpu_s\": %.3f, \"wall_s\": %.3f, "
                   "\"insns_per_core_s\": %.0f}%s\n", i ? "" : "[", r[i].name, r[i].thread_insns, r[i].cpu_s,
                   r[i].wall_s, rate, i ? "]" : ",");
        else
            printf("%-7s %6.1f M thread instructions in %.2f s CPU (%.2f s wall): %.0f M instructions/s per core\n",
                   r[i].name, r[i].thread_insns / 1e6, r[i].cpu_s, r[i].wall_s, rate / 1e6);
    }
    hcq_device_close(dev);
    return 0;
}
