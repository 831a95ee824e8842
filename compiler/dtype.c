/* dtypes and op names: the tables every pass and every message uses. */
#include "compiler/ir.h"

static const struct {
    const char *name;
    uint8_t size, bits;
    bool is_float, is_int, is_signed;
} dtypes[HCQ_DTYPE_COUNT] = {
    [HCQ_VOID] = {"void", 0, 0, false, false, false},
    [HCQ_BOOL] = {"bool", 1, 1, false, false, false},
    [HCQ_I8] = {"i8", 1, 8, false, true, true},
    [HCQ_U8] = {"u8", 1, 8, false, true, false},
    [HCQ_I16] = {"i16", 2, 16, false, true, true},
    [HCQ_U16] = {"u16", 2, 16, false, true, false},
    [HCQ_I32] = {"i32", 4, 32, false, true, true},
    [HCQ_U32] = {"u32", 4, 32, false, true, false},
    [HCQ_I64] = {"i64", 8, 64, false, true, true},
    [HCQ_U64] = {"u64", 8, 64, false, true, false},
    [HCQ_F16] = {"f16", 2, 16, true, false, true},
    [HCQ_BF16] = {"bf16", 2, 16, true, false, true},
    [HCQ_F32] = {"f32", 4, 32, true, false, true},
    [HCQ_F64] = {"f64", 8, 64, true, false, true},
};

size_t hcq_dtype_size(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT ? dtypes[t].size : 0; }
const char *hcq_dtype_name(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT ? dtypes[t].name : "?"; }
bool hcq_dtype_is_float(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT && dtypes[t].is_float; }
bool hcq_dtype_is_int(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT && dtypes[t].is_int; }
bool hcq_dtype_is_signed(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT && dtypes[t].is_signed; }
unsigned ir_dt_bits(hcq_dtype t) { return (unsigned)t < HCQ_DTYPE_COUNT ? dtypes[t].bits : 0; }

static const struct {
    const char *name;
    ir_class cls;
    bool uses_arg;
} ops[HCQ_OP_COUNT] = {
    [HCQ_OP_NOOP] = {"noop", IR_C_CONTROL, false},
    [HCQ_OP_SPECIAL] = {"special", IR_C_SOURCE, true},
    [HCQ_OP_PARAM] = {"param", IR_C_SOURCE, true},
    [HCQ_OP_CONST] = {"const", IR_C_SOURCE, true},
    [HCQ_OP_DEFINE_LOCAL] = {"define_local", IR_C_SOURCE, true},
    [HCQ_OP_DEFINE_ACC] = {"define_acc", IR_C_ACC, false},
    [HCQ_OP_ASSIGN] = {"assign", IR_C_ACC, false},
    [HCQ_OP_LOAD] = {"load", IR_C_MEM, false},
    [HCQ_OP_STORE] = {"store", IR_C_MEM, false},
    [HCQ_OP_NEG] = {"neg", IR_C_UNARY, false},
    [HCQ_OP_EXP2] = {"exp2", IR_C_UNARY, false},
    [HCQ_OP_LOG2] = {"log2", IR_C_UNARY, false},
    [HCQ_OP_SIN] = {"sin", IR_C_UNARY, false},
    [HCQ_OP_SQRT] = {"sqrt", IR_C_UNARY, false},
    [HCQ_OP_RECIP] = {"recip", IR_C_UNARY, false},
    [HCQ_OP_TRUNC] = {"trunc", IR_C_UNARY, false},
    [HCQ_OP_ADD] = {"add", IR_C_BINARY, false},
    [HCQ_OP_SUB] = {"sub", IR_C_BINARY, false},
    [HCQ_OP_MUL] = {"mul", IR_C_BINARY, false},
    [HCQ_OP_IDIV] = {"idiv", IR_C_BINARY, false},
    [HCQ_OP_MOD] = {"mod", IR_C_BINARY, false},
    [HCQ_OP_FDIV] = {"fdiv", IR_C_BINARY, false},
    [HCQ_OP_MAX] = {"max", IR_C_BINARY, false},
    [HCQ_OP_CMPLT] = {"cmplt", IR_C_BINARY, false},
    [HCQ_OP_CMPNE] = {"cmpne", IR_C_BINARY, false},
    [HCQ_OP_AND] = {"and", IR_C_BINARY, false},
    [HCQ_OP_OR] = {"or", IR_C_BINARY, false},
    [HCQ_OP_XOR] = {"xor", IR_C_BINARY, false},
    [HCQ_OP_SHL] = {"shl", IR_C_BINARY, false},
    [HCQ_OP_SHR] = {"shr", IR_C_BINARY, false},
    [HCQ_OP_WHERE] = {"where", IR_C_TERNARY, false},
    [HCQ_OP_MULACC] = {"mulacc", IR_C_TERNARY, false},
    [HCQ_OP_CAST] = {"cast", IR_C_CONVERT, false},
    [HCQ_OP_BITCAST] = {"bitcast", IR_C_CONVERT, false},
    [HCQ_OP_RANGE] = {"range", IR_C_CONTROL, false},
    [HCQ_OP_ENDRANGE] = {"endrange", IR_C_CONTROL, false},
    [HCQ_OP_IF] = {"if", IR_C_CONTROL, false},
    [HCQ_OP_ENDIF] = {"endif", IR_C_CONTROL, false},
    [HCQ_OP_BARRIER] = {"barrier", IR_C_CONTROL, false},
    [HCQ_OP_VSPLAT] = {"vsplat", IR_C_VECTOR, false},
    [HCQ_OP_VGET] = {"vget", IR_C_VECTOR, true},
    [HCQ_OP_VSET] = {"vset", IR_C_VECTOR, true},
    [HCQ_OP_MMA] = {"mma", IR_C_MMA, true},
};

const char *hcq_op_name(hcq_op op) { return (unsigned)op < HCQ_OP_COUNT ? ops[op].name : "?"; }
ir_class ir_op_class(hcq_op op) { return (unsigned)op < HCQ_OP_COUNT ? ops[op].cls : IR_C_CONTROL; }
bool ir_op_uses_arg(hcq_op op) { return (unsigned)op < HCQ_OP_COUNT && ops[op].uses_arg; }

bool ir_op_has_value(const hcq_ir_op *o)
{
    switch (o->op) {
    case HCQ_OP_NOOP:
    case HCQ_OP_ASSIGN:
    case HCQ_OP_STORE:
    case HCQ_OP_ENDRANGE:
    case HCQ_OP_IF:
    case HCQ_OP_ENDIF:
    case HCQ_OP_BARRIER: return false;
    default: return o->op < HCQ_OP_COUNT && o->dtype != HCQ_VOID;
    }
}

const char *ir_op_label(char *buf, size_t size, const hcq_kernel *k, hcq_ir_ref i)
{
    if (i < k->nops)
        snprintf(buf, size, "op %u (%s)", i, hcq_op_name((hcq_op)k->ops[i].op));
    else
        snprintf(buf, size, "op %u", i);
    return buf;
}
