/* Host twins (compiler/twin.h): the GPU renderer's own text run on the
 * host. Agreement with the interpreter over the whole corpus is in
 * test_compile_agree.c; here: that the twin runs the very body the GPU
 * compilers get, and how it reports faults. */
#include "compiler/render_gpu.h"
#include "compiler/twin.h"
#include "hcqtest.h"
#include "test_ir_util.h"

static void need_clang(void) { tu_need_clang(); }

/* the kernel function, from its signature to the end of the text */
static const char *body(const char *src)
{
    const char *b = strstr(src, "extern \"C\" HCQ_KERNEL void ");
    cr_assert_not_null(b, "no kernel in:\n%s", src);
    return b;
}

static hcq_kernel *tree_kernel(void)
{
    hcq_kernel *k = hcq_kernel_create("tree");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F16);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_F32, 64);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), gid = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_store(k, loc, lid, hcq_ir_cast(k, HCQ_F32, hcq_ir_load(k, in, hcq_ir_mulacc(k, gid, ls, lid))));
    hcq_ir_barrier(k);
    /* reversed within the group: each work-item reads another's write */
    hcq_ir_ref rev = hcq_ir_binary(k, HCQ_OP_SUB, hcq_ir_binary(k, HCQ_OP_SUB, ls, hcq_ir_const_int(k, HCQ_I32, 1)), lid);
    hcq_ir_store(k, out, hcq_ir_mulacc(k, gid, ls, lid), hcq_ir_load(k, loc, rev));
    tu_verify(k);
    return k;
}

Test(twin, runs_the_gpu_renderers_body_byte_for_byte)
{
    hcq_kernel *k = tree_kernel();
    char *cuda = NULL, *hip = NULL, *tc = NULL, *th = NULL;
    cr_assert_eq(hcq_render(k, "sm_90", &cuda), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(hcq_render(k, "gfx1100", &hip), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(cc_twin_render(k, CC_TWIN_CUDA, "sm_90", &tc), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(cc_twin_render(k, CC_TWIN_HIP, "gfx1100", &th), HCQ_OK, "%s", hcq_error_message());
    /* the twin is the GPU text with the host's header, then its exports */
    const char *bc = body(cuda), *bt = body(tc);
    cr_assert(strncmp(bc, bt, strlen(bc)) == 0, "the twin's body differs from the CUDA text's:\n%s\n--- twin:\n%s", bc, bt);
    cr_assert(strncmp(body(hip), body(th), strlen(body(hip))) == 0);
    /* and the same helpers before it */
    const char *hc = strstr(cuda, "#define H static inline"), *ht = strstr(tc, "#define H static inline");
    const char *hend = strstr(hc, "HCQ_UDIV(u8)");
    cr_assert(hc && ht && hend && strncmp(hc, ht, (size_t)(hend - hc)) == 0);
    free(cuda), free(hip), free(tc), free(th);
    hcq_kernel_destroy(k);
}

static void launch1(hcq_interp_launch *l, const void *args, size_t size, uint32_t groups, uint32_t items)
{
    memset(l, 0, sizeof *l);
    l->kernargs = args;
    l->kernarg_size = size;
    l->num_groups[0] = groups, l->num_groups[1] = l->num_groups[2] = 1;
    l->local_size[0] = items, l->local_size[1] = l->local_size[2] = 1;
}

Test(twin, barriers_order_a_work_groups_items)
{
    need_clang();
    hcq_kernel *k = tree_kernel();
    enum { G = 3, L = 64 };
    float out[G * L];
    uint16_t in[G * L];
    for (int i = 0; i < G * L; i++) in[i] = ir_f32_to_f16((float)i);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, in);
    const char *targets[] = {"sm_90", "gfx942"};
    for (int t = 0; t < 2; t++) {
        memset(out, 0, sizeof out);
        hcq_interp_launch l;
        launch1(&l, a.buf, a.size, G, L);
        cr_assert_eq(cc_twin_run(k, targets[t], &l), HCQ_OK, "%s", hcq_error_message());
        for (int g = 0; g < G; g++)
            for (int i = 0; i < L; i++) cr_assert_eq(out[g * L + i], (float)(g * L + L - 1 - i), "%s [%d][%d]", targets[t], g, i);
    }
    hcq_kernel_destroy(k);
}

/* refuses addresses at or past `limit` in param 1 */
static bool refuse_past(void *ctx, const hcq_interp_access *acc, char *why, size_t size)
{
    uint64_t limit = *(uint64_t *)ctx;
    if (acc->addr + acc->size <= limit) return true;
    snprintf(why, size, "past the test's buffer");
    return false;
}

Test(twin, an_access_the_check_refuses_is_a_fault_naming_it)
{
    need_clang();
    hcq_kernel *k = hcq_kernel_create("oob");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_store(k, out, gid, gid);
    float buf[100];
    uint64_t limit = (uint64_t)(uintptr_t)(buf + 100);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, buf);
    hcq_interp_mem mem = {refuse_past, &limit};
    hcq_interp_launch l;
    launch1(&l, a.buf, a.size, 2, 64);
    l.mem = &mem;
    cr_assert_eq(cc_twin_run(k, "sm_80", &l), HCQ_EFAULT);
    T_MSG_HAS("kernel `oob` wrote 4 bytes");
    T_MSG_HAS("element 100");
    T_MSG_HAS("work-item (36,0,0) of work-group (1,0,0)");
    T_MSG_HAS("past the test's buffer");
    hcq_kernel_destroy(k);
}

Test(twin, a_local_index_out_of_its_array_is_a_fault)
{
    need_clang();
    hcq_kernel *k = hcq_kernel_create("loc_oob");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_I32, 16);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_store(k, loc, lid, lid);
    hcq_ir_store(k, out, lid, hcq_ir_const_int(k, HCQ_I32, 1));
    int32_t buf[32];
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, buf);
    hcq_interp_launch l;
    launch1(&l, a.buf, a.size, 1, 32);
    cr_assert_eq(cc_twin_run(k, "hip", &l), HCQ_EFAULT);
    T_MSG_HAS("element 16 of a local (shared) array of 16 elements in work-item (16,0,0)");
    hcq_kernel_destroy(k);
}

Test(twin, hip_text_reads_its_sizes_from_the_implicit_arguments)
{
    need_clang();
    hcq_kernel *k = hcq_kernel_create("sizes");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_ref v = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, 0),
                                                              hcq_ir_const_int(k, HCQ_I32, 1000)),
                                 hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0));
    hcq_ir_store(k, out, gid, v);
    int32_t buf[3 * 8];
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, buf);
    hcq_interp_launch l;
    launch1(&l, a.buf, a.size, 3, 8);
    cr_assert_eq(cc_twin_run(k, "gfx90a", &l), HCQ_OK, "%s", hcq_error_message());
    for (int i = 0; i < 24; i++) cr_assert_eq(buf[i], 3008);
    hcq_kernel_destroy(k);
}

Test(twin, hip_text_refuses_what_hip_refuses)
{
    hcq_kernel *k = hcq_kernel_create("s");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F64);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_store(k, out, gid, hcq_ir_unary(k, HCQ_OP_SIN, hcq_ir_load(k, out, gid)));
    char *src = NULL;
    cr_assert_eq(cc_twin_render(k, CC_TWIN_HIP, "gfx1100", &src), HCQ_ENOTSUP);
    T_MSG_HAS("sin");
    cr_assert_eq(cc_twin_render(k, CC_TWIN_CUDA, "sm_90", &src), HCQ_OK);
    free(src);
    cr_assert_eq(cc_twin_render(k, 0, "cpu", &src), HCQ_EINVAL);
    hcq_kernel_destroy(k);
}

/* HIP's own sin (CC_HIP_SINF) through the HIP text's twin, against the
 * host's sin in f64 rounded once: equal on a sample striding through every
 * exponent (HCQ_TEST_SINF_STEP=1 checks all 2^32 inputs: minutes) */
Test(twin, hip_sinf_rounds_sin_correctly)
{
    need_clang();
    const char *env = getenv("HCQ_TEST_SINF_STEP");
    uint64_t step = env ? strtoull(env, NULL, 0) : 4099;
    enum { CHUNK = 1 << 20 };
    hcq_kernel *k = hcq_kernel_create("sinf_sample");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_store(k, out, gid, hcq_ir_unary(k, HCQ_OP_SIN, hcq_ir_load(k, in, gid)));
    float *x = malloc(CHUNK * 4), *y = malloc(CHUNK * 4);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, y);
    tu_arg_ptr(&a, 1, x);
    uint64_t checked = 0;
    for (uint64_t u = 0; u < 0x100000000ull;) {
        uint32_t n = 0;
        for (; n < CHUNK && u < 0x100000000ull; u += step) x[n++] = ir_bits_f32((uint32_t)u);
        for (uint32_t i = n; i < CHUNK; i++) x[i] = 0;
        hcq_interp_launch l;
        launch1(&l, a.buf, a.size, CHUNK / 256, 256);
        cr_assert_eq(cc_twin_run(k, "gfx942", &l), HCQ_OK, "%s", hcq_error_message());
        for (uint32_t i = 0; i < n; i++) {
            float want = (float)sin((double)x[i]);
            if (isnan(x[i]) || isinf(x[i])) cr_assert(isnan(y[i]), "sin(%a) = %a", (double)x[i], (double)y[i]);
            else cr_assert(ir_f32_bits(y[i]) == ir_f32_bits(want), "sin(%a): HIP %a, host %a", (double)x[i],
                           (double)y[i], (double)want);
        }
        checked += n;
    }
    cr_assert_gt(checked, 1000000);
    free(x);
    free(y);
    hcq_kernel_destroy(k);
}
