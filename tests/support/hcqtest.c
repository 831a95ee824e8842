#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>

const char *t_device_name(void)
{
    const char *d = getenv("HCQ_TEST_DEVICE");
    return d && *d ? d : "CPU";
}

hcq_device *t_open(void)
{
    hcq_device *dev = hcq_device_open(t_device_name());
    cr_assert_not_null(dev, "opening %s: %s", t_device_name(), hcq_error_message());
    return dev;
}

hcq_program *t_load(hcq_device *dev, hcq_kernel *k)
{
    cr_assert_not_null(k);
    hcq_program *p = hcq_program_from_kernel(dev, k);
    cr_assert_not_null(p, "building `%s` for %s: %s", hcq_kernel_name(k), hcq_device_get_props(dev)->target,
                       hcq_error_message());
    hcq_kernel_destroy(k);
    return p;
}

/* global id in x: group * local size + local id, as u32 */
static hcq_ir_ref gid_x(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref i = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, ls), l);
    return hcq_ir_cast(k, HCQ_U32, i);
}

hcq_kernel *t_k_add1(void)
{
    hcq_kernel *k = hcq_kernel_create("add1");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref i = gid_x(k);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_ref v = hcq_ir_load(k, a, i);
    hcq_ir_store(k, a, i, hcq_ir_binary(k, HCQ_OP_ADD, v, hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *t_k_vadd(void)
{
    hcq_kernel *k = hcq_kernel_create("vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref i = gid_x(k);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *t_k_muladd(void)
{
    hcq_kernel *k = hcq_kernel_create("muladd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref m = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref c = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref i = gid_x(k);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_ref v = hcq_ir_load(k, a, i);
    hcq_ir_store(k, a, i, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, v, m), c));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *t_k_inc(void)
{
    hcq_kernel *k = hcq_kernel_create("inc");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref one = hcq_ir_const_int(k, HCQ_I32, 1);
    /* ids are >= 0, so id < 1 means id == 0 */
    hcq_ir_ref g0 = hcq_ir_binary(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), one);
    hcq_ir_ref l0 = hcq_ir_binary(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), one);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_AND, g0, l0));
    hcq_ir_ref i0 = hcq_ir_const_int(k, HCQ_I32, 0);
    hcq_ir_store(k, a, i0, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_load(k, a, i0), hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *t_k_mark(void)
{
    hcq_kernel *k = hcq_kernel_create("mark");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref g[3], d[3];
    for (unsigned i = 0; i < 3; i++) {
        hcq_ir_ref gi = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, i);
        hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, i);
        hcq_ir_ref li = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, i);
        hcq_ir_ref ng = hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, i);
        g[i] = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, gi, ls), li);
        d[i] = hcq_ir_binary(k, HCQ_OP_MUL, ng, ls);
    }
    hcq_ir_ref lin = hcq_ir_binary(k, HCQ_OP_ADD, g[0],
                                   hcq_ir_binary(k, HCQ_OP_MUL, d[0],
                                                 hcq_ir_binary(k, HCQ_OP_ADD, g[1], hcq_ir_binary(k, HCQ_OP_MUL, d[1], g[2]))));
    hcq_ir_store(k, out, lin, hcq_ir_const_int(k, HCQ_U32, 1));
    return k;
}

hcq_kernel *t_k_copy(void)
{
    hcq_kernel *k = hcq_kernel_create("copy_u32");
    hcq_ir_ref dst = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref src = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref i = gid_x(k);
    hcq_ir_ref iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, dst, i, hcq_ir_load(k, src, i));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_buffer *t_buffer_from(hcq_device *dev, const void *data, size_t size)
{
    hcq_buffer *b = hcq_buffer_alloc(dev, size, HCQ_MEM_DEVICE);
    cr_assert_not_null(b, "alloc %zu: %s", size, hcq_error_message());
    T_OK(hcq_buffer_copyin(b, 0, data, size));
    return b;
}

void t_read(hcq_buffer *b, void *out, size_t size) { T_OK(hcq_buffer_copyout(out, b, 0, size)); }
