/* IR kernels for the tools. */
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

