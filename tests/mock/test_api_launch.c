/* Launches on the device under test: results, many back-to-back launches,
 * multi-dimensional grids, and every launch-limit and argument check. */
#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>

static hcq_device *dev;
static void setup(void) { dev = t_open(); }
static void teardown(void) { T_OK(hcq_device_close(dev)); }
TestSuite(api_launch, .init = setup, .fini = teardown, .timeout = 180);

Test(api_launch, vadd_is_correct)
{
    enum { N = 1000 };
    hcq_program *p = t_load(dev, t_k_vadd());
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)i;
    }
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b);
    hcq_buffer *bc = T_NONNULL(hcq_buffer_alloc(dev, sizeof c, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d((N + 63) / 64, 64)));
    t_read(bc, c, sizeof c);
    for (int i = 0; i < N; i++) cr_assert_float_eq(c[i], a[i] + b[i], 0, "c[%d]", i);
    const hcq_program_info *info = hcq_program_get_info(p);
    cr_assert_str_eq(info->name, "vadd");
    cr_assert_eq(info->nparams, 4);
    cr_assert_str_eq(info->target, hcq_device_get_props(dev)->target);
}

Test(api_launch, ten_thousand_back_to_back_launches)
{
    hcq_program *p = t_load(dev, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *b = t_buffer_from(dev, &zero, 4);
    hcq_arg a = hcq_arg_buffer(b);
    for (int i = 0; i < 10000; i++) T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 10000);
}

Test(api_launch, grids_in_three_dimensions)
{
    hcq_program *p = t_load(dev, t_k_mark());
    enum { N = 8 * 4 * 6 * 4 * 2 * 3 };
    uint32_t zeros[N] = {0}, host[N];
    hcq_buffer *b = t_buffer_from(dev, zeros, sizeof zeros);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_3d(8, 4, 6, 4, 2, 3)));
    t_read(b, host, sizeof host);
    for (int i = 0; i < N; i++) cr_assert_eq(host[i], 1, "element %d", i);
}

Test(api_launch, too_many_threads_is_a_limit_error)
{
    hcq_program *p = t_load(dev, t_k_inc());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_arg a = hcq_arg_buffer(b);
    const hcq_device_props *pr = hcq_device_get_props(dev);
    T_FAILS(hcq_launch(p, &a, 1, hcq_dims_3d(1, 1, 1, 32, 32, 2)), HCQ_ELIMIT);
    T_MSG_HAS("threads per group");
    T_FAILS(hcq_launch(p, &a, 1, hcq_dims_3d(1, 1, 1, 1, 1, pr->max_block[2] + 1)), HCQ_ELIMIT);
    T_FAILS(hcq_launch(p, &a, 1, hcq_dims_3d(1, pr->max_grid[1] + 1, 1, 1, 1, 1)), HCQ_ELIMIT);
    T_FAILS(hcq_launch(p, &a, 1, hcq_dims_1d(0, 1)), HCQ_EINVAL);
    /* the device still works */
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_device_synchronize(dev));
}

Test(api_launch, wrong_arguments_are_refused)
{
    hcq_program *p = t_load(dev, t_k_add1());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_arg one = hcq_arg_buffer(b);
    T_FAILS(hcq_launch(p, &one, 1, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_MSG_HAS("takes 2 arguments, got 1");
    hcq_arg swapped[2] = {hcq_arg_u32(1), hcq_arg_buffer(b)};
    T_FAILS(hcq_launch(p, swapped, 2, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    hcq_arg wide[2] = {hcq_arg_buffer(b), hcq_arg_u64(1)};
    T_FAILS(hcq_launch(p, wide, 2, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_MSG_HAS("8-byte scalar");
    hcq_arg var[2] = {hcq_arg_buffer(b), hcq_arg_scalar(4, HCQ_VAR(0))};
    T_FAILS(hcq_launch(p, var, 2, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_OK(hcq_buffer_free(b));
    T_FAILS(hcq_launch(p, &one, 2, hcq_dims_1d(1, 1)), HCQ_ESTATE); /* a freed buffer */
}

Test(api_launch, programs_from_another_device_are_refused)
{
    /* a buffer of another open device cannot be an argument */
    hcq_device *other = hcq_device_open("CPU");
    if (!other) cr_skip_test("no second device to compare with");
    hcq_program *p = t_load(dev, t_k_inc());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(other, 64, HCQ_MEM_DEVICE));
    hcq_arg a = hcq_arg_buffer(b);
    T_FAILS(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)), HCQ_EINVAL);
    T_MSG_HAS("buffer on");
    T_OK(hcq_device_close(other));
}

Test(api_launch, local_memory_and_barrier_reduction)
{
    /* a work-group tree reduction through local memory: sums of 256 */
    enum { G = 16, L = 256 };
    hcq_kernel *k = hcq_kernel_create("group_sum");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_U32), out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref lds = hcq_ir_define_local(k, HCQ_U32, L);
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref gid = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, hcq_ir_const_int(k, HCQ_I32, L)), l);
    hcq_ir_store(k, lds, l, hcq_ir_load(k, in, gid));
    hcq_ir_barrier(k);
    for (int step = L / 2; step >= 1; step /= 2) {
        hcq_ir_ref c = hcq_ir_binary(k, HCQ_OP_CMPLT, l, hcq_ir_const_int(k, HCQ_I32, step));
        hcq_ir_ref iff = hcq_ir_if(k, c);
        hcq_ir_ref other = hcq_ir_binary(k, HCQ_OP_ADD, l, hcq_ir_const_int(k, HCQ_I32, step));
        hcq_ir_store(k, lds, l, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_load(k, lds, l), hcq_ir_load(k, lds, other)));
        hcq_ir_endif(k, iff);
        hcq_ir_barrier(k);
    }
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, l, hcq_ir_const_int(k, HCQ_I32, 1)));
    hcq_ir_store(k, out, g, hcq_ir_load(k, lds, hcq_ir_const_int(k, HCQ_I32, 0)));
    hcq_ir_endif(k, iff);
    hcq_program *p = t_load(dev, k);
    cr_assert_eq(hcq_program_get_info(p)->local_bytes, L * 4);
    uint32_t host[G * L], sums[G];
    for (int i = 0; i < G * L; i++) host[i] = (uint32_t)(i % 1000);
    hcq_buffer *bi = t_buffer_from(dev, host, sizeof host);
    hcq_buffer *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof sums, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(G, L)));
    t_read(bo, sums, sizeof sums);
    for (int gi = 0; gi < G; gi++) {
        uint32_t want = 0;
        for (int i = 0; i < L; i++) want += host[gi * L + i];
        cr_assert_eq(sums[gi], want, "group %d", gi);
    }
}
