/* hcq compile --target T [--cache-dir D]: compiles, through the kernel
 * cache, the kernels the API test suites, the demo and the benchmarks
 * launch, so a cache filled on a machine with the compilers (clang + ptxas,
 * or nvcc) can be carried to a GPU machine that has neither: GPU targets
 * key their cache entries by target, source and flags only.
 *
 * The kernels below are the same IR as tests/support/hcqtest.c (t_k_*) and
 * tools/demo.c (k_*) build; a changed kernel there must change here too,
 * or its entry is simply missing from a carried cache (compiled on use). */
#include "base/base.h"
#include "tools/kernels.h"
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

static hcq_ir_ref bin(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, op, a, b); }
static hcq_ir_ref c_i32(hcq_kernel *k, int v) { return hcq_ir_const_int(k, HCQ_I32, v); }

/* ** the API suites' kernels (tests/support/hcqtest.c) */
static hcq_ir_ref gid_u32(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    return hcq_ir_cast(k, HCQ_U32, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, g, ls), l));
}

static hcq_kernel *t_add1(void)
{
    hcq_kernel *k = hcq_kernel_create("add1");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_ref v = hcq_ir_load(k, a, i);
    hcq_ir_store(k, a, i, bin(k, HCQ_OP_ADD, v, hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *t_vadd(void)
{
    hcq_kernel *k = hcq_kernel_create("vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *t_muladd(void)
{
    hcq_kernel *k = hcq_kernel_create("muladd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), m = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref c = hcq_ir_param_scalar(k, HCQ_U32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_ref v = hcq_ir_load(k, a, i);
    hcq_ir_store(k, a, i, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, v, m), c));
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *t_inc(void)
{
    hcq_kernel *k = hcq_kernel_create("inc");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), one = c_i32(k, 1);
    hcq_ir_ref g0 = bin(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), one);
    hcq_ir_ref l0 = bin(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), one);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_AND, g0, l0));
    hcq_ir_ref i0 = c_i32(k, 0);
    hcq_ir_store(k, a, i0, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i0), hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *t_mark(void)
{
    hcq_kernel *k = hcq_kernel_create("mark");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32), g[3], d[3];
    for (unsigned i = 0; i < 3; i++) {
        hcq_ir_ref gi = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, i), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, i);
        hcq_ir_ref li = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, i), ng = hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, i);
        g[i] = bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, gi, ls), li);
        d[i] = bin(k, HCQ_OP_MUL, ng, ls);
    }
    hcq_ir_ref lin =
        bin(k, HCQ_OP_ADD, g[0], bin(k, HCQ_OP_MUL, d[0], bin(k, HCQ_OP_ADD, g[1], bin(k, HCQ_OP_MUL, d[1], g[2]))));
    hcq_ir_store(k, out, lin, hcq_ir_const_int(k, HCQ_U32, 1));
    return k;
}

static hcq_kernel *t_copy(void)
{
    hcq_kernel *k = hcq_kernel_create("copy_u32");
    hcq_ir_ref dst = hcq_ir_param_buffer(k, HCQ_U32), src = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, dst, i, hcq_ir_load(k, src, i));
    hcq_ir_endif(k, iff);
    return k;
}

/* ** the demo's kernels (tools/demo.c) */
static hcq_ir_ref global_id(hcq_kernel *k, unsigned dim)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, dim);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, dim);
    return bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, g, ls), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, dim));
}

static hcq_kernel *d_vadd(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref i = global_id(k, 0);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

enum { RED_L = 256 };
static hcq_kernel *d_sum(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_sum");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_F32), out = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_I32), per = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref lds = hcq_ir_define_local(k, HCQ_F32, RED_L);
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref base = bin(k, HCQ_OP_MUL, g, per);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_ref r = hcq_ir_range(k, c_i32(k, 0), hcq_ir_binary(k, HCQ_OP_IDIV, per, c_i32(k, RED_L)));
    hcq_ir_ref idx = bin(k, HCQ_OP_ADD, base, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, r, c_i32(k, RED_L)), l));
    hcq_ir_ref v = hcq_ir_load_gated(k, in, idx, bin(k, HCQ_OP_CMPLT, idx, n), hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_assign(k, acc, bin(k, HCQ_OP_ADD, acc, v));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, lds, l, acc);
    hcq_ir_barrier(k);
    for (int step = RED_L / 2; step >= 1; step /= 2) {
        hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, l, c_i32(k, step)));
        hcq_ir_ref o = bin(k, HCQ_OP_ADD, l, c_i32(k, step));
        hcq_ir_store(k, lds, l, bin(k, HCQ_OP_ADD, hcq_ir_load(k, lds, l), hcq_ir_load(k, lds, o)));
        hcq_ir_endif(k, iff);
        hcq_ir_barrier(k);
    }
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, l, c_i32(k, 1)));
    hcq_ir_store(k, out, g, hcq_ir_load(k, lds, c_i32(k, 0)));
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *d_matmul(void)
{
    hcq_kernel *k = hcq_kernel_create("demo_matmul");
    hcq_ir_ref A = hcq_ir_param_buffer(k, HCQ_F32), B = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref C = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref M = hcq_ir_param_scalar(k, HCQ_I32), N = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref K = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref col = global_id(k, 0), row = global_id(k, 1);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_AND, bin(k, HCQ_OP_CMPLT, row, M), bin(k, HCQ_OP_CMPLT, col, N)));
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_ref r = hcq_ir_range(k, c_i32(k, 0), K);
    hcq_ir_ref a = hcq_ir_load(k, A, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, row, K), r));
    hcq_ir_ref b = hcq_ir_load(k, B, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, r, N), col));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, a, b, acc));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, C, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, row, N), col), acc);
    hcq_ir_endif(k, iff);
    return k;
}

static hcq_kernel *(*const kernels[])(void) = {t_add1, t_vadd, t_muladd, t_inc, t_mark,   t_copy,    d_vadd,
                                               d_sum,  d_matmul, tk_empty, tk_vadd, tk_sum, tk_matmul};

static const char *arg_value(int argc, char **argv, const char *flag)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], flag)) return argv[i + 1];
    return NULL;
}

int tool_compile(int argc, char **argv)
{
    const char *target = arg_value(argc, argv, "--target"), *dir = arg_value(argc, argv, "--cache-dir");
    if (tool_has_flag(argc, argv, "--help") || !target) {
        printf("usage: hcq compile --target TARGET [--cache-dir DIR]\n\nCompiles the kernels of the API test suites, "
               "the demo and the benchmarks for TARGET (sm_90,\nsm_89, mock-sm_90, cpu, ...) into the kernel cache "
               "(DIR, else HCQ_CACHE_DIR, else ~/.cache/hcq).\nGPU entries are keyed by target, source and flags, so "
               "the directory can be copied to another\nmachine (one without clang, ptxas or nvcc, say) and used there "
               "as is.\n");
        return target || tool_has_flag(argc, argv, "--help") ? 0 : 2;
    }
    if (dir) {
        setenv("HCQ_CACHE_DIR", dir, 1);
        base_env_reload();
    }
    if (!hcq_target_known(target)) {
        hcq_binary *b = NULL;
        hcq_kernel *k = tk_empty();
        hcq_compile(k, target, &b); /* for the message naming the targets */
        hcq_kernel_destroy(k);
        return tool_fail("compile");
    }
    int failures = 0;
    printf("compiling %zu kernels for %s into %s\n", sizeof kernels / sizeof *kernels, target, hcq_cache_dir());
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        hcq_kernel *k = kernels[i]();
        hcq_binary *b = NULL;
        uint64_t t0 = hcq_now_ns();
        if (hcq_compile(k, target, &b)) {
            failures += tool_fail(hcq_kernel_name(k));
            if (hcq_error_status() == HCQ_ENOTSUP) { /* the same for every kernel */
                hcq_kernel_destroy(k);
                break;
            }
        } else {
            printf("  %-14s %8zu bytes  %s (%s), %.2f s\n", hcq_kernel_name(k), b->size,
                   b->from_cache ? "already cached" : "compiled", b->compiler, (double)(hcq_now_ns() - t0) / 1e9);
            hcq_binary_free(b);
        }
        hcq_kernel_destroy(k);
    }
    return failures ? 1 : 0;
}
