/* IR kernels for the tools, and the API suites' kernels (tests/support/
 * hcqtest.c launches these), kept here once so `hcq compile` fills a
 * cache with exactly what the suites run. */
#include "tools/kernels.h"

hcq_kernel *tk_empty(void)
{
    hcq_kernel *k = hcq_kernel_create("empty");
    hcq_ir_param_buffer(k, HCQ_U32);
    return k;
}

static hcq_ir_ref c_i32(hcq_kernel *k, int v) { return hcq_ir_const_int(k, HCQ_I32, v); }
static hcq_ir_ref bin(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, op, a, b); }

static hcq_ir_ref global_id(hcq_kernel *k, unsigned dim)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, dim);
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, dim);
    return bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, g, ls), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, dim));
}

/* c[i] = a[i] + b[i], i < n */
hcq_kernel *tk_vadd(void)
{
    hcq_kernel *k = hcq_kernel_create("vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref i = global_id(k, 0);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

/* out[group] = sum of in[group*per .. +per) (clipped to n): each work-item
 * sums a strided slice, then the group adds the slices in local memory */
hcq_kernel *tk_sum(void)
{
    hcq_kernel *k = hcq_kernel_create("sum");
    hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_F32), out = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_I32), per = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref lds = hcq_ir_define_local(k, HCQ_F32, TK_SUM_LOCAL);
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref base = bin(k, HCQ_OP_MUL, g, per);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_ref r = hcq_ir_range(k, c_i32(k, 0), hcq_ir_binary(k, HCQ_OP_IDIV, per, c_i32(k, TK_SUM_LOCAL)));
    hcq_ir_ref idx = bin(k, HCQ_OP_ADD, base, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, r, c_i32(k, TK_SUM_LOCAL)), l));
    hcq_ir_ref v = hcq_ir_load_gated(k, in, idx, bin(k, HCQ_OP_CMPLT, idx, n), hcq_ir_const_float(k, HCQ_F32, 0.0));
    hcq_ir_assign(k, acc, bin(k, HCQ_OP_ADD, acc, v));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, lds, l, acc);
    hcq_ir_barrier(k);
    for (int step = TK_SUM_LOCAL / 2; step >= 1; step /= 2) {
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

/* C[M x N] = A[M x K] @ B[K x N], one work-item per output */
hcq_kernel *tk_matmul(void)
{
    hcq_kernel *k = hcq_kernel_create("matmul");
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

/* ** the API suites' kernels: global id in x as u32 */
static hcq_ir_ref gid_u32(hcq_kernel *k) { return hcq_ir_cast(k, HCQ_U32, global_id(k, 0)); }

hcq_kernel *tk_add1(void)
{
    hcq_kernel *k = hcq_kernel_create("add1");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, a, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *tk_vadd_u32n(void)
{
    hcq_kernel *k = hcq_kernel_create("vadd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32), b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref c = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, c, i, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i), hcq_ir_load(k, b, i)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *tk_muladd(void)
{
    hcq_kernel *k = hcq_kernel_create("muladd");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), m = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref c = hcq_ir_param_scalar(k, HCQ_U32), n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, a, i, bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, hcq_ir_load(k, a, i), m), c));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *tk_inc(void)
{
    hcq_kernel *k = hcq_kernel_create("inc");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32), one = c_i32(k, 1);
    /* ids are >= 0, so id < 1 means id == 0 */
    hcq_ir_ref g0 = bin(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), one);
    hcq_ir_ref l0 = bin(k, HCQ_OP_CMPLT, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), one);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_AND, g0, l0));
    hcq_ir_ref i0 = c_i32(k, 0);
    hcq_ir_store(k, a, i0, bin(k, HCQ_OP_ADD, hcq_ir_load(k, a, i0), hcq_ir_const_int(k, HCQ_U32, 1)));
    hcq_ir_endif(k, iff);
    return k;
}

hcq_kernel *tk_mark(void)
{
    hcq_kernel *k = hcq_kernel_create("mark");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32), g[3], d[3];
    for (unsigned i = 0; i < 3; i++) {
        g[i] = global_id(k, i);
        d[i] = bin(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, i), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, i));
    }
    hcq_ir_ref lin =
        bin(k, HCQ_OP_ADD, g[0], bin(k, HCQ_OP_MUL, d[0], bin(k, HCQ_OP_ADD, g[1], bin(k, HCQ_OP_MUL, d[1], g[2]))));
    hcq_ir_store(k, out, lin, hcq_ir_const_int(k, HCQ_U32, 1));
    return k;
}

hcq_kernel *tk_copy_u32(void)
{
    hcq_kernel *k = hcq_kernel_create("copy_u32");
    hcq_ir_ref dst = hcq_ir_param_buffer(k, HCQ_U32), src = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref n = hcq_ir_param_scalar(k, HCQ_U32), i = gid_u32(k);
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, n));
    hcq_ir_store(k, dst, i, hcq_ir_load(k, src, i));
    hcq_ir_endif(k, iff);
    return k;
}
