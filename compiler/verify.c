/* The verifier: everything a consumer (interpreter, renderer, serializer)
 * may then assume without checking. Messages name the op index and kind and
 * say what to change. */
#include "compiler/verify.h"

#include "compiler/mma.h"

#include <stdlib.h>
#include <string.h>

#define WHY(...) (snprintf(why, why_size, __VA_ARGS__), false)

static const char *dtn(unsigned t) { return hcq_dtype_name((hcq_dtype)t); }
static bool is_int(unsigned t) { return hcq_dtype_is_int((hcq_dtype)t); }
static bool is_float(unsigned t) { return hcq_dtype_is_float((hcq_dtype)t); }
static bool is_buffer(const hcq_ir_op *o)
{
    return (o->op == HCQ_OP_PARAM || o->op == HCQ_OP_DEFINE_LOCAL) && (o->flags & HCQ_IR_FLAG_PTR);
}

static int expected_nsrc(hcq_op op, int *alt)
{
    *alt = -1;
    switch (ir_op_class(op)) {
    case IR_C_SOURCE: return 0;
    case IR_C_UNARY: return 1;
    case IR_C_BINARY: return 2;
    case IR_C_TERNARY: return 3;
    case IR_C_CONVERT: return 1;
    case IR_C_MMA: return 3;
    default: break;
    }
    switch (op) {
    case HCQ_OP_DEFINE_ACC: return 1;
    case HCQ_OP_ASSIGN: return 2;
    case HCQ_OP_LOAD: *alt = 4; return 2;
    case HCQ_OP_STORE: *alt = 4; return 3;
    case HCQ_OP_RANGE: return 2;
    case HCQ_OP_VSPLAT:
    case HCQ_OP_VGET: return 1;
    case HCQ_OP_VSET: return 2;
    case HCQ_OP_ENDRANGE:
    case HCQ_OP_IF:
    case HCQ_OP_ENDIF: return 1;
    default: return 0; /* noop, barrier */
    }
}

/* elementwise on vectors: ALU ops whose result is not bool, casts and
 * bitcasts (bool lanes do not exist, so compares and where stay scalar) */
static bool elementwise(hcq_op op)
{
    switch (ir_op_class(op)) {
    case IR_C_UNARY: return true;
    case IR_C_BINARY: return op != HCQ_OP_CMPLT && op != HCQ_OP_CMPNE;
    case IR_C_TERNARY: return op == HCQ_OP_MULACC;
    case IR_C_CONVERT: return true;
    default: return false;
    }
}

/* Field-level checks that need no operands. */
static bool check_fields(const hcq_ir_op *o, char *why, size_t why_size)
{
    if (o->op >= HCQ_OP_COUNT) return WHY("unknown op code %u (the last is %d)", o->op, HCQ_OP_COUNT - 1);
    if (o->dtype >= HCQ_DTYPE_COUNT) return WHY("unknown dtype code %u", o->dtype);
    if (o->flags & ~(HCQ_IR_FLAG_PTR | HCQ_IR_FLAG_LANES_MASK))
        return WHY("unknown flags 0x%x (only HCQ_IR_FLAG_PTR and HCQ_IR_FLAG_LANES exist)", o->flags);
    if ((o->flags & HCQ_IR_FLAG_PTR) && o->op != HCQ_OP_PARAM && o->op != HCQ_OP_DEFINE_LOCAL)
        return WHY("has HCQ_IR_FLAG_PTR; only param and define_local are buffers");
    int alt, want = expected_nsrc((hcq_op)o->op, &alt);
    if (o->nsrc != want && o->nsrc != alt) {
        if (alt >= 0) return WHY("has %u operands; it takes %d or %d", o->nsrc, want, alt);
        return WHY("has %u operands; it takes %d", o->nsrc, want);
    }
    for (unsigned i = o->nsrc; i < HCQ_IR_MAX_SRC; i++)
        if (o->src[i] != HCQ_IR_NONE) return WHY("unused operand slot %u is %u, not HCQ_IR_NONE", i, o->src[i]);
    if (!ir_op_uses_arg((hcq_op)o->op) && o->arg)
        return WHY("arg is 0x%llx; this op takes no arg (leave it 0)", (unsigned long long)o->arg);
    if (ir_vec(o)) {
        bool maker = o->op == HCQ_OP_LOAD || o->op == HCQ_OP_VSPLAT || o->op == HCQ_OP_VSET ||
                     o->op == HCQ_OP_DEFINE_ACC || o->op == HCQ_OP_MMA || elementwise((hcq_op)o->op);
        if (o->op == HCQ_OP_CMPLT || o->op == HCQ_OP_CMPNE)
            return WHY("has %u lanes; a compare of vectors would make bool lanes, which do not exist (compare lanes "
                       "read with vget)", ir_vec(o));
        if (!maker)
            return WHY("has %u lanes; only load, vsplat, vset, define_acc, mma and elementwise ALU ops, casts and "
                       "bitcasts make vectors (no HCQ_IR_FLAG_LANES)", ir_vec(o));
        if (ir_vec(o) != 2 && ir_vec(o) != 4 && ir_vec(o) != 8 && ir_vec(o) != 16)
            return WHY("has %u lanes; a vector has 2, 4, 8 or 16 lanes (HCQ_IR_FLAG_LANES(1..4))", ir_vec(o));
        if (o->dtype == HCQ_BOOL || o->dtype == HCQ_VOID)
            return WHY("is a vector of %s; vectors hold numbers (bool lanes are not supported)", dtn(o->dtype));
        size_t bytes = ir_vec(o) * hcq_dtype_size((hcq_dtype)o->dtype);
        if (bytes > HCQ_IR_MAX_VEC_BYTES)
            return WHY("is a vector of %u x %s = %zu bytes; a vector holds at most %d", ir_vec(o), dtn(o->dtype), bytes,
                       HCQ_IR_MAX_VEC_BYTES);
    }
    return true;
}

/* Which operands may be vectors: the lane ops' vector, a store's value, a
 * gated load's alt, and the accumulator ops. Everything else (ALU, casts,
 * indexes, gates, conditions, bounds) takes scalars. */
static bool vector_operand_ok(const hcq_ir_op *o, unsigned i)
{
    if (elementwise((hcq_op)o->op)) return true; /* lanes checked in check_vector_operands */
    switch (o->op) {
    case HCQ_OP_VGET:
    case HCQ_OP_VSET: return i == 0;
    case HCQ_OP_STORE: return i == 2;
    case HCQ_OP_LOAD: return i == 3;
    case HCQ_OP_DEFINE_ACC:
    case HCQ_OP_ASSIGN:
    case HCQ_OP_MMA: return true; /* its lanes checked in check_mma */
    default: return false;
    }
}

static bool check_vector_operands(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    for (unsigned i = 0; i < o->nsrc; i++) {
        const hcq_ir_op *d = &k->ops[o->src[i]];
        if (ir_vec(d) && !vector_operand_ok(o, i))
            return WHY("operand %u is op %u, a vector of %u x %s; %s takes a scalar there (read lanes with vget)", i,
                       o->src[i], ir_vec(d), dtn(d->dtype), hcq_op_name((hcq_op)o->op));
    }
    if (!elementwise((hcq_op)o->op)) return true;
    /* elementwise: every operand and the result have the same lanes */
    for (unsigned i = 0; i < o->nsrc; i++) {
        const hcq_ir_op *d = &k->ops[o->src[i]];
        if (ir_vec(d) != ir_vec(o))
            return WHY("operand %u (op %u) has %u lanes and the result %u (0: scalar); an elementwise op keeps the "
                       "lanes (vsplat a scalar operand)", i, o->src[i], ir_vec(d), ir_vec(o));
    }
    return true;
}

static bool check_lane_ops(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    const hcq_ir_op *v = &k->ops[o->src[0]];
    if (o->op == HCQ_OP_VSPLAT) {
        if (!ir_vec(o)) return WHY("vsplat has no lanes; give 2, 4, 8 or 16");
        if (o->dtype != v->dtype) return WHY("is %s but its scalar (op %u) is %s", dtn(o->dtype), o->src[0], dtn(v->dtype));
        return true;
    }
    if (!ir_vec(v)) return WHY("operand 0 (op %u) is a scalar %s; %s takes a vector", o->src[0], dtn(v->dtype), hcq_op_name((hcq_op)o->op));
    if (o->arg >= ir_vec(v))
        return WHY("lane %llu of a %u-lane vector (op %u); lanes are 0..%u", (unsigned long long)o->arg, ir_vec(v), o->src[0],
                   ir_vec(v) - 1u);
    if (o->dtype != v->dtype) return WHY("is %s but the vector (op %u) holds %s", dtn(o->dtype), o->src[0], dtn(v->dtype));
    if (o->op == HCQ_OP_VGET) return true;
    if (ir_vec(o) != ir_vec(v)) return WHY("has %u lanes but the vector it copies (op %u) has %u", ir_vec(o), o->src[0], ir_vec(v));
    if (k->ops[o->src[1]].dtype != o->dtype)
        return WHY("sets a %s lane to %s (op %u); the dtypes must match (insert a cast)", dtn(o->dtype),
                   dtn(k->ops[o->src[1]].dtype), o->src[1]);
    return true;
}

/* An MMA: a known kind, and A, B and C fragments of its dtypes and lanes; D like C. */
static bool check_mma(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    const cc_mma_kind *m = cc_mma_kind_of((unsigned)o->arg);
    if (!m || o->arg >= HCQ_MMA_KINDS)
        return WHY("kind %llu is not a matrix multiply-accumulate kind (1..%d: hcq_mma_kind)", (unsigned long long)o->arg,
                   HCQ_MMA_KINDS - 1);
    const hcq_mma_info *i = &m->info;
    static const char *const names[3] = {"A", "B", "C"};
    unsigned want_dt[3] = {i->ab, i->ab, i->acc}, want_lanes[3] = {i->a_lanes, i->b_lanes, i->c_lanes};
    for (unsigned j = 0; j < 3; j++) {
        const hcq_ir_op *d = &k->ops[o->src[j]];
        if (d->dtype != want_dt[j] || ir_vec(d) != want_lanes[j])
            return WHY("%s (operand %u, op %u) is %u x %s (0: scalar); %s takes %s as %u x %s per work-item", names[j], j,
                       o->src[j], ir_vec(d), dtn(d->dtype), i->name, names[j], want_lanes[j], dtn(want_dt[j]));
    }
    if (o->dtype != i->acc || ir_vec(o) != i->c_lanes)
        return WHY("D is %u x %s; %s makes %u x %s (like C)", ir_vec(o), dtn(o->dtype), i->name, i->c_lanes, dtn(i->acc));
    return true;
}

/* After the operand checks, so a bad ref is reported as such rather than as
 * the void dtype a builder call inferred from it. */
static bool check_void(const hcq_ir_op *o, char *why, size_t why_size)
{
    bool void_op = o->op == HCQ_OP_ASSIGN || o->op == HCQ_OP_STORE || o->op == HCQ_OP_ENDRANGE ||
                   o->op == HCQ_OP_IF || o->op == HCQ_OP_ENDIF || o->op == HCQ_OP_BARRIER ||
                   o->op == HCQ_OP_NOOP;
    if (void_op && o->dtype != HCQ_VOID) return WHY("has dtype %s; it makes no value (use void)", dtn(o->dtype));
    if (!void_op && o->dtype == HCQ_VOID) return WHY("has dtype void; it makes a value");
    return true;
}

/* Operand refs: earlier, and values (or buffers / blocks where expected). */
static bool check_refs(const hcq_kernel *k, hcq_ir_ref at, const hcq_ir_op *o, char *why, size_t why_size)
{
    for (unsigned i = 0; i < o->nsrc; i++) {
        hcq_ir_ref s = o->src[i];
        if (s >= at) {
            if (s < k->nops) return WHY("operand %u is op %u, which comes later", i, s);
            return WHY("operand %u is op %u, which does not exist (the kernel has %u ops)", i, s, k->nops);
        }
        const hcq_ir_op *d = &k->ops[s];
        const char *dname = hcq_op_name((hcq_op)d->op);
        bool want_buf = i == 0 && (o->op == HCQ_OP_LOAD || o->op == HCQ_OP_STORE);
        bool want_block = o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF;
        if (want_block) {
            hcq_op need = o->op == HCQ_OP_ENDRANGE ? HCQ_OP_RANGE : HCQ_OP_IF;
            if (d->op != need) return WHY("operand 0 is op %u (%s), not a %s", s, dname, hcq_op_name(need));
        } else if (o->op == HCQ_OP_ASSIGN && i == 0) {
            if (d->op != HCQ_OP_DEFINE_ACC)
                return WHY("operand 0 is op %u (%s); assign writes a define_acc", s, dname);
        } else if (want_buf) {
            if (!is_buffer(d))
                return WHY("operand 0 is op %u (%s), not a buffer (a param with HCQ_IR_FLAG_PTR or a "
                           "define_local)", s, dname);
        } else if (is_buffer(d)) {
            return WHY("operand %u is op %u (%s), a buffer; only load and store take buffers", i, s, dname);
        } else if (!ir_op_has_value(d)) {
            return WHY("operand %u is op %u (%s), which has no value", i, s, dname);
        }
    }
    return true;
}

static bool check_source(const hcq_ir_op *o, char *why, size_t why_size)
{
    switch (o->op) {
    case HCQ_OP_SPECIAL: {
        uint64_t kind = o->arg & 0xff, dim = o->arg >> 8;
        if (kind > HCQ_SPECIAL_LOCAL_SIZE) return WHY("special kind %llu is unknown (0..3)", (unsigned long long)kind);
        if (dim > 2) return WHY("special dim %llu is not 0, 1 or 2", (unsigned long long)dim);
        if (o->dtype != HCQ_I32) return WHY("special has dtype %s; ids are i32", dtn(o->dtype));
        return true;
    }
    case HCQ_OP_PARAM:
        if (o->arg > 0xffff) return WHY("param index %llu is too large", (unsigned long long)o->arg);
        return true;
    case HCQ_OP_CONST:
        if (o->dtype == HCQ_BOOL && o->arg > 1)
            return WHY("bool const has arg %llu; use 0 or 1", (unsigned long long)o->arg);
        return true;
    case HCQ_OP_DEFINE_LOCAL: {
        uint64_t max = IR_MAX_LOCAL_BYTES / hcq_dtype_size((hcq_dtype)o->dtype);
        if (!(o->flags & HCQ_IR_FLAG_PTR)) return WHY("define_local lacks HCQ_IR_FLAG_PTR");
        if (o->arg == 0 || o->arg > max)
            return WHY("define_local of %llu %s elements; give 1 to %llu", (unsigned long long)o->arg,
                       dtn(o->dtype), (unsigned long long)max);
        return true;
    }
    default: return true;
    }
}

/* Which operand dtypes an ALU op accepts. */
static bool alu_accepts(hcq_op op, unsigned t)
{
    switch (op) {
    case HCQ_OP_NEG:
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
    case HCQ_OP_MAX:
    case HCQ_OP_CMPLT:
    case HCQ_OP_MULACC: return is_int(t) || is_float(t);
    case HCQ_OP_IDIV:
    case HCQ_OP_MOD:
    case HCQ_OP_SHL:
    case HCQ_OP_SHR: return is_int(t);
    case HCQ_OP_AND:
    case HCQ_OP_OR:
    case HCQ_OP_XOR: return is_int(t) || t == HCQ_BOOL;
    case HCQ_OP_CMPNE:
    case HCQ_OP_WHERE: return ir_dt_valid(t);
    default: return is_float(t); /* exp2, log2, sin, sqrt, recip, trunc, fdiv */
    }
}

static const char *accepts_text(hcq_op op)
{
    switch (op) {
    case HCQ_OP_IDIV:
    case HCQ_OP_MOD:
    case HCQ_OP_SHL:
    case HCQ_OP_SHR: return "integers only";
    case HCQ_OP_AND:
    case HCQ_OP_OR:
    case HCQ_OP_XOR: return "integers and bool";
    case HCQ_OP_NEG:
    case HCQ_OP_ADD:
    case HCQ_OP_SUB:
    case HCQ_OP_MUL:
    case HCQ_OP_MAX:
    case HCQ_OP_CMPLT:
    case HCQ_OP_MULACC: return "integers and floats";
    default: return "floats only";
    }
}

static bool check_alu(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    hcq_op op = (hcq_op)o->op;
    unsigned first = op == HCQ_OP_WHERE ? 1 : 0, t = k->ops[o->src[first]].dtype;
    if (op == HCQ_OP_WHERE && k->ops[o->src[0]].dtype != HCQ_BOOL)
        return WHY("condition (operand 0, op %u) is %s; where takes a bool", o->src[0],
                   dtn(k->ops[o->src[0]].dtype));
    for (unsigned i = first + 1; i < o->nsrc; i++) {
        unsigned u = k->ops[o->src[i]].dtype;
        if (u != t)
            return WHY("operands are %s (op %u) and %s (op %u); operands must have one dtype (insert a cast)",
                       dtn(t), o->src[first], dtn(u), o->src[i]);
    }
    if (!alu_accepts(op, t)) return WHY("operand dtype %s is not allowed: %s takes %s", dtn(t), hcq_op_name(op), accepts_text(op));
    unsigned want = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE ? HCQ_BOOL : t;
    if (o->dtype != want) return WHY("result dtype is %s; it must be %s", dtn(o->dtype), dtn(want));
    return true;
}

static bool check_convert(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    unsigned from = k->ops[o->src[0]].dtype;
    if (o->op == HCQ_OP_CAST) return true; /* any value dtype to any value dtype */
    if (from == HCQ_BOOL || o->dtype == HCQ_BOOL) return WHY("bitcast to or from bool (use cast)");
    if (hcq_dtype_size((hcq_dtype)from) != hcq_dtype_size((hcq_dtype)o->dtype))
        return WHY("bitcast from %s (%zu bytes) to %s (%zu bytes); sizes must match", dtn(from),
                   hcq_dtype_size((hcq_dtype)from), dtn(o->dtype), hcq_dtype_size((hcq_dtype)o->dtype));
    return true;
}

static bool check_mem(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    unsigned elem = k->ops[o->src[0]].dtype, idx = k->ops[o->src[1]].dtype;
    if (!is_int(idx)) return WHY("index (operand 1, op %u) is %s; indexes are integers", o->src[1], dtn(idx));
    bool load = o->op == HCQ_OP_LOAD;
    if (load && o->dtype != elem) return WHY("loads %s from a %s buffer; the dtypes must match", dtn(o->dtype), dtn(elem));
    if (!load && k->ops[o->src[2]].dtype != elem)
        return WHY("stores %s (op %u) into a %s buffer; the dtypes must match (insert a cast)",
                   dtn(k->ops[o->src[2]].dtype), o->src[2], dtn(elem));
    if (o->nsrc == 4) {
        hcq_ir_ref g = load ? o->src[2] : o->src[3];
        if (k->ops[g].dtype != HCQ_BOOL) return WHY("gate (op %u) is %s; gates are bool", g, dtn(k->ops[g].dtype));
        if (load && k->ops[o->src[3]].dtype != elem)
            return WHY("alt value (op %u) is %s; it must be the loaded dtype %s", o->src[3],
                       dtn(k->ops[o->src[3]].dtype), dtn(elem));
        if (load && ir_vec(&k->ops[o->src[3]]) != ir_vec(o))
            return WHY("alt value (op %u) has %u lanes; it must have the load's %u (0: scalar)", o->src[3],
                       ir_vec(&k->ops[o->src[3]]), ir_vec(o));
    }
    unsigned lanes = load ? ir_vec(o) : ir_vec(&k->ops[o->src[2]]);
    size_t bytes = lanes * hcq_dtype_size((hcq_dtype)elem);
    if (lanes && bytes > HCQ_IR_MAX_ACCESS_BYTES)
        return WHY("%s %u x %s = %zu bytes in one access; a vector access is at most %d bytes (split it)",
                   load ? "loads" : "stores", lanes, dtn(elem), bytes, HCQ_IR_MAX_ACCESS_BYTES);
    return true;
}

static bool check_other(const hcq_kernel *k, const hcq_ir_op *o, char *why, size_t why_size)
{
    switch (o->op) {
    case HCQ_OP_DEFINE_ACC:
        if (o->dtype != k->ops[o->src[0]].dtype)
            return WHY("is %s but its initial value (op %u) is %s", dtn(o->dtype), o->src[0],
                       dtn(k->ops[o->src[0]].dtype));
        if (ir_vec(o) != ir_vec(&k->ops[o->src[0]]))
            return WHY("has %u lanes but its initial value (op %u) has %u (0: scalar)", ir_vec(o), o->src[0],
                       ir_vec(&k->ops[o->src[0]]));
        return true;
    case HCQ_OP_ASSIGN:
        if (k->ops[o->src[0]].dtype != k->ops[o->src[1]].dtype)
            return WHY("assigns %s (op %u) to a %s accumulator (op %u)", dtn(k->ops[o->src[1]].dtype), o->src[1],
                       dtn(k->ops[o->src[0]].dtype), o->src[0]);
        if (ir_vec(&k->ops[o->src[0]]) != ir_vec(&k->ops[o->src[1]]))
            return WHY("assigns %u lanes (op %u) to a %u-lane accumulator (op %u) (0: scalar)", ir_vec(&k->ops[o->src[1]]),
                       o->src[1], ir_vec(&k->ops[o->src[0]]), o->src[0]);
        return true;
    case HCQ_OP_RANGE:
        if (!is_int(o->dtype)) return WHY("range counter is %s; it must be an integer", dtn(o->dtype));
        for (unsigned i = 0; i < 2; i++)
            if (k->ops[o->src[i]].dtype != o->dtype)
                return WHY("%s (op %u) is %s; the range is %s", i ? "end" : "start", o->src[i],
                           dtn(k->ops[o->src[i]].dtype), dtn(o->dtype));
        return true;
    case HCQ_OP_IF:
        if (k->ops[o->src[0]].dtype != HCQ_BOOL)
            return WHY("condition (op %u) is %s; if takes a bool", o->src[0], dtn(k->ops[o->src[0]].dtype));
        return true;
    default: return true;
    }
}

bool ir_check_op(const hcq_kernel *k, hcq_ir_ref at, const hcq_ir_op *o, char *why, size_t why_size)
{
    if (!check_fields(o, why, why_size) || !check_refs(k, at, o, why, why_size) || !check_void(o, why, why_size) ||
        !check_vector_operands(k, o, why, why_size))
        return false;
    switch (ir_op_class((hcq_op)o->op)) {
    case IR_C_VECTOR: return check_lane_ops(k, o, why, why_size);
    case IR_C_MMA: return check_mma(k, o, why, why_size);
    case IR_C_SOURCE: return check_source(o, why, why_size);
    case IR_C_UNARY:
        if (o->dtype != k->ops[o->src[0]].dtype)
            return WHY("result dtype %s differs from the operand's %s", dtn(o->dtype), dtn(k->ops[o->src[0]].dtype));
        /* fallthrough */
    case IR_C_BINARY:
    case IR_C_TERNARY: return check_alu(k, o, why, why_size);
    case IR_C_CONVERT: return check_convert(k, o, why, why_size);
    case IR_C_MEM: return check_mem(k, o, why, why_size);
    default: return check_other(k, o, why, why_size);
    }
}

/* ** whole-kernel checks */
typedef struct vstate {
    const hcq_kernel *k;
    hcq_ir_ref *scope;    /* innermost open RANGE/IF at each op (a RANGE is its own) */
    hcq_ir_ref *closed;   /* for openers: the op that closed it, NONE while open */
    hcq_ir_ref *stack;    /* open openers */
    uint32_t depth;
} vstate;

static hcq_status fail(const hcq_kernel *k, hcq_ir_ref i, const char *fmt, ...) HCQ_PRINTF(3, 4);
static hcq_status fail(const hcq_kernel *k, hcq_ir_ref i, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_err(HCQ_EINVAL, "kernel '%s': op %u (%s): %s", k->name, i, hcq_op_name((hcq_op)k->ops[i].op), msg);
}

static const char *block_name(const hcq_kernel *k, hcq_ir_ref r)
{
    return k->ops[r].op == HCQ_OP_RANGE ? "range" : "if";
}

static hcq_status check_visible(vstate *v, hcq_ir_ref i)
{
    const hcq_ir_op *o = &v->k->ops[i];
    if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) return HCQ_OK;
    for (unsigned j = 0; j < o->nsrc; j++) {
        hcq_ir_ref s = o->src[j], sc = v->scope[s];
        if (sc != HCQ_IR_NONE && v->closed[sc] != HCQ_IR_NONE)
            return fail(v->k, i,
                        "operand %u is op %u (%s), defined inside the %s at op %u, which closed at op %u; "
                        "a value is visible only inside its block (carry it out with a define_acc)",
                        j, s, hcq_op_name((hcq_op)v->k->ops[s].op), block_name(v->k, sc), sc, v->closed[sc]);
    }
    return HCQ_OK;
}

static hcq_status check_nesting(vstate *v, hcq_ir_ref i)
{
    const hcq_kernel *k = v->k;
    const hcq_ir_op *o = &k->ops[i];
    hcq_ir_ref top = v->depth ? v->stack[v->depth - 1] : HCQ_IR_NONE;
    v->scope[i] = top;
    switch (o->op) {
    case HCQ_OP_RANGE:
    case HCQ_OP_IF:
        if (o->op == HCQ_OP_RANGE) v->scope[i] = i; /* the counter lives inside its loop */
        v->stack[v->depth++] = i;
        return HCQ_OK;
    case HCQ_OP_ENDRANGE:
    case HCQ_OP_ENDIF: {
        hcq_ir_ref s = o->src[0];
        if (v->closed[s] != HCQ_IR_NONE)
            return fail(k, i, "closes the %s at op %u, which op %u closed already", block_name(k, s), s, v->closed[s]);
        if (top == HCQ_IR_NONE) return fail(k, i, "closes the %s at op %u, but no block is open", block_name(k, s), s);
        if (top != s)
            return fail(k, i, "closes the %s at op %u, but the innermost open block is the %s at op %u (blocks nest like braces)",
                        block_name(k, s), s, block_name(k, top), top);
        v->closed[s] = i;
        v->depth--;
        return HCQ_OK;
    }
    case HCQ_OP_DEFINE_LOCAL:
        if (top != HCQ_IR_NONE)
            return fail(k, i, "inside the %s at op %u; local buffers are defined once per work-group, at the top level",
                        block_name(k, top), top);
        return HCQ_OK;
    default: return HCQ_OK;
    }
}

static hcq_status check_params(const hcq_kernel *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nops; i++) n += k->ops[i].op == HCQ_OP_PARAM;
    if (!n) return HCQ_OK;
    hcq_ir_ref *seen = malloc(n * sizeof *seen);
    if (!seen) return base_err(HCQ_ENOMEM, "kernel '%s': out of memory verifying %u params", k->name, n);
    for (uint32_t j = 0; j < n; j++) seen[j] = HCQ_IR_NONE;
    hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < k->nops && !st; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op != HCQ_OP_PARAM) continue;
        if (o->arg >= n)
            st = fail(k, i, "param index %llu, but the kernel has %u params; number them 0..%u without gaps",
                      (unsigned long long)o->arg, n, n - 1);
        else if (seen[o->arg] != HCQ_IR_NONE)
            st = fail(k, i, "param index %llu is also op %u; each index is used once", (unsigned long long)o->arg,
                      seen[o->arg]);
        else
            seen[o->arg] = i;
    }
    free(seen);
    return st;
}

/* ** barrier placement: a value is varying when it can differ between the
 * work-items of a group, i.e. depends on LOCAL_ID or on a load (or on an
 * accumulator assigned a varying value, or assigned under varying control).
 * cause[i] is the LOCAL_ID / LOAD op it comes from, NONE when uniform. */
static hcq_ir_ref varying_operand(const hcq_kernel *k, const hcq_ir_ref *cause, const hcq_ir_op *o)
{
    for (unsigned j = 0; j < o->nsrc; j++) {
        hcq_ir_ref s = o->src[j];
        if (is_buffer(&k->ops[s])) continue;
        if (cause[s] != HCQ_IR_NONE) return cause[s];
    }
    return HCQ_IR_NONE;
}

/* One pass over the kernel; returns whether an accumulator became varying
 * (its earlier readers then need another pass). */
static bool varying_pass(const hcq_kernel *k, hcq_ir_ref *cause, hcq_ir_ref *stack)
{
    bool changed = false;
    uint32_t depth = 0;
    hcq_ir_ref ctl = HCQ_IR_NONE; /* cause of the innermost varying control, if any */
    hcq_ir_ref *ctl_at = stack;   /* per depth: control cause in force inside that block */
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        hcq_ir_ref c = HCQ_IR_NONE;
        if (o->op == HCQ_OP_SPECIAL && (o->arg & 0xff) == HCQ_SPECIAL_LOCAL_ID) c = i;
        else if (o->op == HCQ_OP_LOAD) c = i;
        else if (o->op == HCQ_OP_DEFINE_ACC) c = cause[i] != HCQ_IR_NONE ? cause[i] : varying_operand(k, cause, o);
        else c = varying_operand(k, cause, o);
        if (o->op == HCQ_OP_ASSIGN) {
            hcq_ir_ref a = o->src[0], why = c != HCQ_IR_NONE ? c : ctl;
            if (why != HCQ_IR_NONE && cause[a] == HCQ_IR_NONE) {
                cause[a] = why;
                changed = true;
            }
            continue;
        }
        if (ir_op_has_value(o) && o->op != HCQ_OP_DEFINE_ACC) cause[i] = c;
        else if (o->op == HCQ_OP_DEFINE_ACC && c != HCQ_IR_NONE && cause[i] == HCQ_IR_NONE) {
            cause[i] = c;
            changed = true;
        }
        if (o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) {
            ctl_at[depth++] = ctl;
            if (ctl == HCQ_IR_NONE) ctl = c;
        } else if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) {
            ctl = ctl_at[--depth];
        }
    }
    return changed;
}

static hcq_status check_barriers(vstate *v)
{
    const hcq_kernel *k = v->k;
    bool any = false;
    for (uint32_t i = 0; i < k->nops && !any; i++) any = k->ops[i].op == HCQ_OP_BARRIER;
    if (!any) return HCQ_OK;
    hcq_ir_ref *cause = malloc(k->nops * sizeof *cause);
    if (!cause) return base_err(HCQ_ENOMEM, "kernel '%s': out of memory verifying barriers", k->name);
    for (uint32_t i = 0; i < k->nops; i++) cause[i] = HCQ_IR_NONE;
    while (varying_pass(k, cause, v->stack)) {
    }
    hcq_status st = HCQ_OK;
    uint32_t depth = 0;
    for (uint32_t i = 0; i < k->nops && !st; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) v->stack[depth++] = i;
        else if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) depth--;
        else if (o->op == HCQ_OP_BARRIER) {
            for (uint32_t d = 0; d < depth && !st; d++) {
                hcq_ir_ref b = v->stack[d], c = varying_operand(k, cause, &k->ops[b]);
                if (c == HCQ_IR_NONE) continue;
                const char *what = k->ops[b].op == HCQ_OP_RANGE ? "bounds depend" : "condition depends";
                const char *src = k->ops[c].op == HCQ_OP_LOAD ? "a load" : "local_id";
                st = fail(k, i,
                          "inside the %s at op %u, whose %s on %s (op %u); every work-item of a group must reach "
                          "a barrier: move it out of the %s or make the %s uniform",
                          block_name(k, b), b, what, src, c, block_name(k, b),
                          k->ops[b].op == HCQ_OP_RANGE ? "bounds" : "condition");
            }
        }
    }
    free(cause);
    return st;
}

hcq_status hcq_kernel_verify(const hcq_kernel *k)
{
    if (!k) return base_err(HCQ_EINVAL, "hcq_kernel_verify: kernel is NULL");
    if (k->build_err)
        return base_err(k->build_err, "kernel '%s': %s", k->name,
                        k->build_msg ? k->build_msg : "a builder call failed (out of memory recording why)");
    if (!k->nops) return HCQ_OK;
    vstate v = {.k = k};
    v.scope = malloc(k->nops * sizeof *v.scope);
    v.closed = malloc(k->nops * sizeof *v.closed);
    v.stack = malloc(k->nops * sizeof *v.stack);
    hcq_status st = HCQ_OK;
    if (!v.scope || !v.closed || !v.stack) {
        st = base_err(HCQ_ENOMEM, "kernel '%s': out of memory verifying %u ops", k->name, k->nops);
        goto out;
    }
    for (uint32_t i = 0; i < k->nops; i++) v.closed[i] = HCQ_IR_NONE;
    char why[512];
    for (uint32_t i = 0; i < k->nops && !st; i++) {
        if (!ir_check_op(k, i, &k->ops[i], why, sizeof why)) st = fail(k, i, "%s", why);
        if (!st) st = check_visible(&v, i);
        if (!st) st = check_nesting(&v, i);
    }
    if (!st && v.depth) {
        hcq_ir_ref open = v.stack[v.depth - 1];
        st = fail(k, open, "is never closed (add an end%s)", block_name(k, open));
    }
    if (!st) st = check_params(k);
    if (!st && hcq_kernel_local_bytes(k) > IR_MAX_LOCAL_BYTES)
        st = base_err(HCQ_EINVAL, "kernel '%s': local buffers total more than %u bytes", k->name, IR_MAX_LOCAL_BYTES);
    if (!st) st = check_barriers(&v);
out:
    free(v.scope);
    free(v.closed);
    free(v.stack);
    return st;
}

void ir_match_blocks(const hcq_kernel *k, hcq_ir_ref *match)
{
    for (uint32_t i = 0; i < k->nops; i++) match[i] = HCQ_IR_NONE;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) { /* verified: closes its own opener */
            match[i] = o->src[0];
            match[o->src[0]] = i;
        }
    }
}
