/* The CUDA renderer and the NVIDIA targets: every op of every dtype
 * renders to source that clang + ptxas and nvcc accept for each sm_*
 * target (no GPU here, so values are the mock's business); the cubin
 * loader reads real cubins from both compilers (kernel, parameters,
 * constant-bank base, registers, shared memory); a cache filled with the
 * compilers serves a process that has none; Blackwell is refused by name;
 * a missing ptxas says so. Tests skip, with the reason, where a compiler is
 * missing. Each compile is a few tenths of a second: the sets are small. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/render_gpu.h"
#include "compiler/target_nv.h"
#include "drivers/mock/mock.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(nv_compile, .timeout = 300);

static void need(cc_nv_compiler which)
{
    char why[512];
    if (!cc_nv_have(which, why, sizeof why)) cr_skip_test("%s", why);
}

static void fresh_cache(void)
{
    static char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-nvc");
    setenv("HCQ_CACHE_DIR", dir, 1);
    base_env_reload();
}

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    return hcq_ir_mulacc(k, g, ls, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
}

/* every applicable op, cast and bitcast of dtype t, one output each */
static hcq_kernel *all_ops(hcq_dtype t)
{
    static const hcq_op iops[] = {HCQ_OP_NEG, HCQ_OP_ADD, HCQ_OP_SUB,   HCQ_OP_MUL,   HCQ_OP_IDIV, HCQ_OP_MOD,
                                  HCQ_OP_MAX, HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_AND, HCQ_OP_OR,   HCQ_OP_XOR,
                                  HCQ_OP_SHL, HCQ_OP_SHR, HCQ_OP_WHERE, HCQ_OP_MULACC};
    static const hcq_op fops[] = {HCQ_OP_NEG,  HCQ_OP_EXP2, HCQ_OP_LOG2, HCQ_OP_SIN, HCQ_OP_SQRT, HCQ_OP_RECIP,
                                  HCQ_OP_TRUNC, HCQ_OP_ADD, HCQ_OP_SUB,  HCQ_OP_MUL, HCQ_OP_FDIV, HCQ_OP_MAX,
                                  HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_WHERE, HCQ_OP_MULACC};
    static const hcq_op bops[] = {HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR, HCQ_OP_CMPNE, HCQ_OP_WHERE};
    char name[32];
    snprintf(name, sizeof name, "ops_%s", hcq_dtype_name(t));
    hcq_kernel *k = hcq_kernel_create(name);
    hcq_ir_ref pa = hcq_ir_param_buffer(k, t), pb = hcq_ir_param_buffer(k, t), pc = hcq_ir_param_buffer(k, t);
    hcq_ir_ref pw = hcq_ir_param_buffer(k, HCQ_BOOL), s = hcq_ir_param_scalar(k, t);
    hcq_ir_ref i = gid(k);
    hcq_ir_ref a = hcq_ir_load(k, pa, i), b = hcq_ir_load(k, pb, i), w = hcq_ir_load(k, pw, i);
    hcq_ir_ref c = hcq_ir_load_gated(k, pc, i, w, s);
    const hcq_op *ops = hcq_dtype_is_float(t) ? fops : t == HCQ_BOOL ? bops : iops;
    size_t n = hcq_dtype_is_float(t) ? BASE_ARRAY_LEN(fops) : t == HCQ_BOOL ? BASE_ARRAY_LEN(bops) : BASE_ARRAY_LEN(iops);
    for (size_t j = 0; j < n; j++) {
        hcq_op op = ops[j];
        bool cmp = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE;
        hcq_ir_ref r;
        switch (ir_op_class(op)) {
        case IR_C_UNARY: r = hcq_ir_unary(k, op, a); break;
        case IR_C_BINARY: r = hcq_ir_binary(k, op, a, b); break;
        default: r = op == HCQ_OP_WHERE ? hcq_ir_where(k, w, a, c) : hcq_ir_mulacc(k, a, b, c); break;
        }
        hcq_ir_store_gated(k, hcq_ir_param_buffer(k, cmp ? HCQ_BOOL : t), i, r, w);
    }
    for (int to = HCQ_BOOL; to < HCQ_DTYPE_COUNT; to++) {
        hcq_ir_store(k, hcq_ir_param_buffer(k, (hcq_dtype)to), i, hcq_ir_cast(k, (hcq_dtype)to, a));
        if (to != (int)t && to != HCQ_BOOL && t != HCQ_BOOL && hcq_dtype_size((hcq_dtype)to) == hcq_dtype_size(t))
            hcq_ir_store(k, hcq_ir_param_buffer(k, (hcq_dtype)to), i, hcq_ir_bitcast(k, (hcq_dtype)to, a));
    }
    return k;
}

/* loops, accumulators, local memory and barriers */
static hcq_kernel *reduce(void)
{
    hcq_kernel *k = hcq_kernel_create("block_sum");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_F32), out = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref lds = hcq_ir_define_local(k, HCQ_F32, 128);
    hcq_ir_ref l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0));
    hcq_ir_ref r = hcq_ir_range(k, l, n);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, acc, hcq_ir_load(k, in, r)));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, lds, l, acc);
    hcq_ir_barrier(k);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, l, hcq_ir_const_int(k, HCQ_I32, 1)));
    hcq_ir_store(k, out, g, hcq_ir_load(k, lds, hcq_ir_const_int(k, HCQ_I32, 127)));
    hcq_ir_endif(k, iff);
    return k;
}

static void check_cubin(const void *data, size_t size, const hcq_kernel *k, uint32_t sm, uint32_t base)
{
    nv_cubin c;
    hcq_status s = nv_cubin_parse(data, size, "test", NULL, &c);
    cr_assert_eq(s, HCQ_OK, "%s: %s", hcq_kernel_name(k), hcq_error_message());
    cr_assert_str_eq(c.name, hcq_kernel_name(k));
    cr_assert_eq(c.sm, sm);
    cr_assert(c.have_cbank);
    cr_assert_eq(c.param_base, base, "%s: parameter base 0x%x", c.name, c.param_base);
    uint32_t np = hcq_kernel_param_count(k);
    hcq_param_info *want = calloc(np ? np : 1, sizeof *want);
    uint32_t kb = hcq_kernel_param_layout(k, want), end = 0;
    for (uint32_t i = 0; i < np; i++) end = BASE_MAX(end, want[i].offset + want[i].size);
    cr_assert_eq(c.nparams, np, "%s: %u params, want %u", c.name, c.nparams, np);
    /* the compilers count to the last parameter's end; hcq's layout pads to 8 */
    cr_assert(c.param_bytes == end || c.param_bytes == kb, "%s: %u parameter bytes, want %u", c.name, c.param_bytes, end);
    for (uint32_t i = 0; i < np; i++) {
        cr_assert_eq(c.params[i].offset, want[i].offset, "%s param %u", c.name, i);
        cr_assert_eq(c.params[i].size, want[i].size, "%s param %u", c.name, i);
    }
    cr_assert_gt(c.regs, 0);
    cr_assert_eq(c.shared_user, hcq_kernel_local_bytes(k), "%s: shared memory", c.name);
    cr_assert_gt(c.text_bytes, 0);
    T_OK(nv_cubin_relocate(&c, 0x2000000000ull, "test"));
    free(want);
    nv_cubin_free(&c);
}

static void build_and_check(cc_nv_compiler which, const char *target, hcq_kernel *k)
{
    void *data = NULL;
    size_t size = 0;
    char label[128];
    uint32_t sm = 0, base = 0;
    cr_assert(cc_nv_target_abi(target, &sm, &base));
    hcq_status s = cc_nv_build(cc_target_find(target), k, which, &data, &size, label, sizeof label);
    cr_assert_eq(s, HCQ_OK, "%s for %s: %s", hcq_kernel_name(k), target, hcq_error_message());
    cr_assert(strstr(label, which == CC_NV_NVCC ? "nvcc" : "ptxas"), "built by %s", label);
    check_cubin(data, size, k, sm, base);
    free(data);
}

Test(nv_compile, every_op_of_every_dtype_through_clang_and_ptxas)
{
    need(CC_NV_CLANG);
    fresh_cache();
    for (int t = HCQ_BOOL; t < HCQ_DTYPE_COUNT; t++) {
        hcq_kernel *k = all_ops((hcq_dtype)t);
        build_and_check(CC_NV_CLANG, t % 2 ? "sm_90" : "sm_86", k);
        hcq_kernel_destroy(k);
    }
}

Test(nv_compile, every_op_of_every_dtype_through_nvcc)
{
    need(CC_NV_NVCC);
    fresh_cache();
    /* nvcc's front end costs a second a kernel: make test takes the dtypes
     * its headers treat apart (the half types, f64, a byte type), CI
     * (HCQ_TEST_LONG=1) every one; clang + ptxas above take them all */
    bool all = getenv("HCQ_TEST_LONG");
    for (int t = HCQ_BOOL; t < HCQ_DTYPE_COUNT; t++) {
        if (!all && t != HCQ_F16 && t != HCQ_BF16 && t != HCQ_F64 && t != HCQ_I8) continue;
        hcq_kernel *k = all_ops((hcq_dtype)t);
        build_and_check(CC_NV_NVCC, t % 2 ? "sm_80" : "sm_90", k);
        hcq_kernel_destroy(k);
    }
}

Test(nv_compile, the_suites_kernels_on_every_arch)
{
    need(CC_NV_CLANG);
    fresh_cache();
    const char *targets[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
    hcq_kernel *(*ks[])(void) = {t_k_add1, t_k_vadd, t_k_mark, reduce};
    for (size_t i = 0; i < BASE_ARRAY_LEN(ks); i++) {
        hcq_kernel *k = ks[i]();
        build_and_check(CC_NV_CLANG, targets[i % 5], k);
        if (i == 3) build_and_check(CC_NV_CLANG, "sm_90a", k);
        hcq_kernel_destroy(k);
    }
    need(CC_NV_NVCC);
    hcq_kernel *k = reduce();
    build_and_check(CC_NV_NVCC, "sm_89", k);
    hcq_kernel_destroy(k);
}

Test(nv_compile, source_needs_no_headers_and_names_the_dialect)
{
    hcq_kernel *k = reduce();
    char *src = NULL;
    T_OK(hcq_render(k, "sm_90", &src));
    cr_assert_null(strstr(src, "#include"));
    cr_assert_not_null(strstr(src, "HCQ_KERNEL void block_sum("));
    cr_assert_not_null(strstr(src, "HCQ_BARRIER();"));
    cr_assert_not_null(strstr(src, "__nvvm_barrier_sync"));
    free(src);
    hcq_kernel_destroy(k);
}

/* runs fn in a child process (fresh tool lookup) and returns its exit code */
static int in_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void fill_cache(void)
{
    hcq_kernel *k = t_k_muladd();
    hcq_binary *b = NULL;
    if (hcq_compile(k, "sm_89", &b) || b->from_cache) _exit(1);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

static void use_cache_without_compilers(void)
{
    setenv("PATH", "/nonexistent", 1);
    setenv("HCQ_CLANG", "/nonexistent/clang", 1);
    setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
    base_env_reload();
    hcq_kernel *k = t_k_muladd();
    hcq_binary *b = NULL;
    if (hcq_compile(k, "sm_89", &b)) {
        fprintf(stderr, "%s\n", hcq_error_message());
        _exit(2);
    }
    if (!b->from_cache || !strstr(b->compiler, "ptxas")) _exit(3);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(nv_compile, a_cache_filled_with_compilers_serves_a_machine_without_them)
{
    need(CC_NV_CLANG);
    fresh_cache();
    cr_assert_eq(in_child(fill_cache), 0);
    cr_assert_eq(in_child(use_cache_without_compilers), 0);
}

static void no_ptxas(void)
{
    setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
    base_env_reload();
    char why[512];
    if (cc_nv_have(CC_NV_CLANG, why, sizeof why)) _exit(1);
    if (!strstr(why, "ptxas") || !strstr(why, "HCQ_PTXAS")) _exit(2);
}

Test(nv_compile, a_missing_ptxas_is_named)
{
    cr_assert_eq(in_child(no_ptxas), 0);
}

Test(nv_compile, blackwell_is_refused_by_name)
{
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    T_FAILS(hcq_compile(k, "sm_100", &b), HCQ_ENOTSUP);
    T_MSG_HAS("Blackwell");
    T_FAILS(hcq_compile(k, "sm_120", &b), HCQ_ENOTSUP);
    hcq_kernel_destroy(k);
    cr_assert_null(nv_gen_for_sm(0xA00, "a B200"));
    T_MSG_HAS("Blackwell");
    cr_assert_not_null(nv_gen_for_sm(0x900, "an H100"));
}

Test(nv_compile, a_cubin_without_its_host_twin_is_a_clear_error_on_the_mock_gpu)
{
    need(CC_NV_CLANG);
    fresh_cache();
    /* and without the SASS executor's decoder, which would run it */
    setenv("HCQ_NVDISASM", "/nonexistent/nvdisasm", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(""));
    hcq_device *d = hcq_device_open("NV:0");
    cr_assert_not_null(d, "%s", hcq_error_message());
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "sm_90", &b));
    /* SASS the process never made a twin of, with none in the cache */
    cr_assert_null(hcq_program_load(d, b->data, b->size));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    T_MSG_HAS("host twin");
    T_MSG_HAS("nor can the mock's SASS executor run it");
    /* compiling the kernel makes it; then the same bytes load */
    hcq_program *p = hcq_program_from_kernel(d, k);
    cr_assert_not_null(p, "%s", hcq_error_message());
    hcq_program *p2 = hcq_program_load(d, b->data, b->size);
    cr_assert_not_null(p2, "%s", hcq_error_message());
    T_OK(hcq_program_free(p2));
    T_OK(hcq_program_free(p));
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
}
