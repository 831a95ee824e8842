/* The IR builder, the verifier (one malformed kernel per rule), the dump,
 * clone, dtype tables and the kernarg layout. */
#include "test_ir_util.h"

#define NONE HCQ_IR_NONE

static hcq_kernel *K(const char *name)
{
    hcq_kernel *k = hcq_kernel_create(name);
    cr_assert_not_null(k, "%s", hcq_error_message());
    return k;
}

static hcq_ir_ref E(hcq_kernel *k, hcq_op op, hcq_dtype dt, uint8_t flags, uint64_t arg, int nsrc, ...)
{
    hcq_ir_ref src[4] = {NONE, NONE, NONE, NONE};
    va_list ap;
    va_start(ap, nsrc);
    for (int i = 0; i < nsrc; i++) src[i] = va_arg(ap, hcq_ir_ref);
    va_end(ap);
    return hcq_ir_emit(k, op, dt, flags, src, (uint8_t)nsrc, arg);
}

/* verify fails with HCQ_EINVAL and the message has every fragment */
static void expect_bad(hcq_kernel *k, const char *a, const char *b)
{
    hcq_status st = hcq_kernel_verify(k);
    const char *m = hcq_error_message();
    cr_assert_eq(st, HCQ_EINVAL, "verify returned %s: %s", hcq_status_name(st), m);
    cr_assert(strstr(m, a), "message lacks \"%s\": %s", a, m);
    if (b) cr_assert(strstr(m, b), "message lacks \"%s\": %s", b, m);
    cr_assert(strstr(m, hcq_kernel_name(k)), "message does not name the kernel: %s", m);
    hcq_kernel_destroy(k);
}

/* a kernel with %0 = f32 buffer, %1 = i32 const 0, %2 = f32 const 1 */
static hcq_kernel *base3(const char *name)
{
    hcq_kernel *k = K(name);
    hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_const_int(k, HCQ_I32, 0);
    hcq_ir_const_float(k, HCQ_F32, 1.0);
    return k;
}

Test(ir_build, good_kernels_verify)
{
    hcq_kernel *k = K("good");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), n = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_F32, 64);
    hcq_ir_ref zero = hcq_ir_const_float(k, HCQ_F32, 0), acc = hcq_ir_define_acc(k, zero);
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_I32, 0), n); /* uniform: a param */
    hcq_ir_ref x = hcq_ir_cast(k, HCQ_F32, r);
    hcq_ir_store(k, loc, lid, x);
    hcq_ir_barrier(k);
    hcq_ir_ref c = hcq_ir_binary(k, HCQ_OP_CMPLT, lid, hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_ref iff = hcq_ir_if(k, c); /* varying, but no barrier inside */
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, acc, hcq_ir_load(k, loc, lid)));
    hcq_ir_endif(k, iff);
    hcq_ir_ref u = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, grp, n)); /* uniform: barrier allowed */
    hcq_ir_barrier(k);
    hcq_ir_endif(k, u);
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, out, lid, acc);
    tu_verify(k);
    cr_assert_eq(hcq_kernel_param_count(k), 2);
    hcq_kernel_destroy(k);
}

Test(ir_build, builder_error_is_sticky_and_first)
{
    hcq_kernel *k = K("sticky");
    hcq_ir_ref a = hcq_ir_const_int(k, HCQ_I32, 1), b = hcq_ir_const_float(k, HCQ_F32, 2);
    cr_assert_eq(hcq_ir_binary(k, HCQ_OP_ADD, a, b), NONE);
    cr_assert_eq(hcq_ir_binary(k, HCQ_OP_ADD, a, 77), NONE); /* a second mistake is not recorded */
    cr_assert_eq(hcq_ir_const_int(k, HCQ_I32, 3), NONE);     /* nor is anything appended */
    cr_assert_eq(hcq_kernel_op_count(k), 2);
    expect_bad(k, "hcq_ir_binary(add) at op 2", "operands are i32 (op 0) and f32 (op 1)");
}

Test(ir_build, builder_rejects_bad_refs_and_dtypes)
{
    hcq_kernel *k = K("refs");
    cr_assert_eq(hcq_ir_unary(k, HCQ_OP_SQRT, 5), NONE);
    expect_bad(k, "operand 0 is op 5, which does not exist", NULL);
    k = K("sqrt_int");
    cr_assert_eq(hcq_ir_unary(k, HCQ_OP_SQRT, hcq_ir_const_int(k, HCQ_I32, 4)), NONE);
    expect_bad(k, "sqrt takes floats only", NULL);
    k = K("special");
    cr_assert_eq(hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 3), NONE);
    expect_bad(k, "special dim 3", NULL);
}

Test(ir_build, operand_later_is_named)
{
    hcq_kernel *k = base3("later");
    E(k, HCQ_OP_ADD, HCQ_F32, 0, 0, 2, 2, 4); /* op 3 uses op 4 */
    E(k, HCQ_OP_CONST, HCQ_F32, 0, 0, 0);
    expect_bad(k, "op 3 (add): operand 1 is op 4, which comes later", NULL);
}

Test(ir_build, operand_must_be_a_value)
{
    hcq_kernel *k = base3("novalue");
    E(k, HCQ_OP_STORE, HCQ_VOID, 0, 0, 3, 0, 1, 2);
    E(k, HCQ_OP_NEG, HCQ_F32, 0, 0, 1, 3);
    expect_bad(k, "op 4 (neg): operand 0 is op 3 (store), which has no value", NULL);
}

Test(ir_build, buffer_only_in_load_store)
{
    hcq_kernel *k = base3("bufval");
    E(k, HCQ_OP_ADD, HCQ_F32, 0, 0, 2, 0, 2);
    expect_bad(k, "op 3 (add): operand 0 is op 0 (param), a buffer", NULL);
    k = base3("notbuf");
    E(k, HCQ_OP_LOAD, HCQ_F32, 0, 0, 2, 2, 1);
    expect_bad(k, "op 3 (load): operand 0 is op 2 (const), not a buffer", NULL);
}

Test(ir_build, binary_dtypes_must_match)
{
    hcq_kernel *k = base3("mismatch");
    E(k, HCQ_OP_MUL, HCQ_F32, 0, 0, 2, 2, 1);
    expect_bad(k, "op 3 (mul): operands are f32 (op 2) and i32 (op 1)", NULL);
}

Test(ir_build, compare_gives_bool)
{
    hcq_kernel *k = base3("cmp");
    E(k, HCQ_OP_CMPLT, HCQ_F32, 0, 0, 2, 2, 2);
    expect_bad(k, "op 3 (cmplt): result dtype is f32; it must be bool", NULL);
}

Test(ir_build, op_dtype_classes)
{
    struct {
        hcq_op op;
        bool float_operand;
        const char *msg;
    } cases[] = {
        {HCQ_OP_IDIV, true, "idiv takes integers only"}, {HCQ_OP_MOD, true, "mod takes integers only"},
        {HCQ_OP_FDIV, false, "fdiv takes floats only"},  {HCQ_OP_EXP2, false, "exp2 takes floats only"},
        {HCQ_OP_SHL, true, "shl takes integers only"},   {HCQ_OP_AND, true, "and takes integers and bool"},
        {HCQ_OP_LOG2, false, "log2 takes floats only"},  {HCQ_OP_TRUNC, false, "trunc takes floats only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hcq_kernel *k = base3("classes");
        hcq_ir_ref x = cases[i].float_operand ? 2 : 1;
        bool unary = ir_op_class(cases[i].op) == IR_C_UNARY;
        hcq_dtype dt = cases[i].float_operand ? HCQ_F32 : HCQ_I32;
        if (unary)
            E(k, cases[i].op, dt, 0, 0, 1, x);
        else
            E(k, cases[i].op, dt, 0, 0, 2, x, x);
        expect_bad(k, cases[i].msg, "op 3");
    }
    hcq_kernel *k = K("booladd");
    hcq_ir_ref t = hcq_ir_const_bool(k, true);
    E(k, HCQ_OP_ADD, HCQ_BOOL, 0, 0, 2, t, t);
    expect_bad(k, "op 1 (add): operand dtype bool is not allowed", NULL);
}

Test(ir_build, where_condition_is_bool)
{
    hcq_kernel *k = base3("where");
    E(k, HCQ_OP_WHERE, HCQ_F32, 0, 0, 3, 1, 2, 2);
    expect_bad(k, "op 3 (where): condition (operand 0, op 1) is i32", NULL);
}

Test(ir_build, load_store_rules)
{
    hcq_kernel *k = base3("ldidx");
    E(k, HCQ_OP_LOAD, HCQ_F32, 0, 0, 2, 0, 2);
    expect_bad(k, "op 3 (load): index (operand 1, op 2) is f32", NULL);
    k = base3("lddt");
    E(k, HCQ_OP_LOAD, HCQ_I32, 0, 0, 2, 0, 1);
    expect_bad(k, "op 3 (load): loads i32 from a f32 buffer", NULL);
    k = base3("stdt");
    E(k, HCQ_OP_STORE, HCQ_VOID, 0, 0, 3, 0, 1, 1);
    expect_bad(k, "op 3 (store): stores i32 (op 1) into a f32 buffer", NULL);
    k = base3("gate");
    E(k, HCQ_OP_LOAD, HCQ_F32, 0, 0, 4, 0, 1, 1, 2);
    expect_bad(k, "op 3 (load): gate (op 1) is i32", NULL);
    k = base3("alt");
    hcq_ir_ref t = hcq_ir_const_bool(k, true);
    E(k, HCQ_OP_LOAD, HCQ_F32, 0, 0, 4, 0, 1, t, 1);
    expect_bad(k, "op 4 (load): alt value (op 1) is i32", NULL);
    k = base3("stgate");
    E(k, HCQ_OP_STORE, HCQ_VOID, 0, 0, 4, 0, 1, 2, 2);
    expect_bad(k, "op 3 (store): gate (op 2) is f32", NULL);
}

Test(ir_build, assign_targets_an_acc_of_its_dtype)
{
    hcq_kernel *k = base3("assign");
    E(k, HCQ_OP_ASSIGN, HCQ_VOID, 0, 0, 2, 2, 2);
    expect_bad(k, "op 3 (assign): operand 0 is op 2 (const); assign writes a define_acc", NULL);
    k = base3("assign_dt");
    hcq_ir_ref acc = hcq_ir_define_acc(k, 2);
    E(k, HCQ_OP_ASSIGN, HCQ_VOID, 0, 0, 2, acc, 1);
    expect_bad(k, "op 4 (assign): assigns i32 (op 1) to a f32 accumulator (op 3)", NULL);
    k = base3("acc_dt");
    E(k, HCQ_OP_DEFINE_ACC, HCQ_I32, 0, 0, 1, 2);
    expect_bad(k, "op 3 (define_acc): is i32 but its initial value (op 2) is f32", NULL);
}

Test(ir_build, cast_and_bitcast_sizes)
{
    hcq_kernel *k = base3("bitcast");
    E(k, HCQ_OP_BITCAST, HCQ_F64, 0, 0, 1, 2);
    expect_bad(k, "op 3 (bitcast): bitcast from f32 (4 bytes) to f64 (8 bytes)", NULL);
    k = base3("bitbool");
    E(k, HCQ_OP_BITCAST, HCQ_BOOL, 0, 0, 1, 1);
    expect_bad(k, "bitcast to or from bool", "op 3");
    k = base3("castvoid");
    E(k, HCQ_OP_CAST, HCQ_VOID, 0, 0, 1, 1);
    expect_bad(k, "op 3 (cast): has dtype void; it makes a value", NULL);
}

Test(ir_build, range_and_if_nesting)
{
    hcq_kernel *k = base3("rng_dt");
    E(k, HCQ_OP_RANGE, HCQ_F32, 0, 0, 2, 2, 2);
    expect_bad(k, "op 3 (range): range counter is f32", NULL);

    k = base3("rng_end");
    hcq_ir_ref e64 = hcq_ir_const_int(k, HCQ_I64, 4);
    E(k, HCQ_OP_RANGE, HCQ_I32, 0, 0, 2, 1, e64);
    expect_bad(k, "op 4 (range): end (op 3) is i64; the range is i32", NULL);

    k = base3("cross"); /* range { if { endrange } endif } */
    hcq_ir_ref r = hcq_ir_range(k, 1, hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_ref i = hcq_ir_if(k, hcq_ir_const_bool(k, true));
    E(k, HCQ_OP_ENDRANGE, HCQ_VOID, 0, 0, 1, r);
    E(k, HCQ_OP_ENDIF, HCQ_VOID, 0, 0, 1, i);
    expect_bad(k, "op 7 (endrange): closes the range at op 4, but the innermost open block is the if at op 6", NULL);

    k = base3("twice");
    r = hcq_ir_range(k, 1, hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_endrange(k, r);
    E(k, HCQ_OP_ENDRANGE, HCQ_VOID, 0, 0, 1, r);
    expect_bad(k, "op 6 (endrange): closes the range at op 4, which op 5 closed already", NULL);

    k = base3("open");
    hcq_ir_if(k, hcq_ir_const_bool(k, true));
    expect_bad(k, "op 4 (if): is never closed (add an endif)", NULL);

    k = base3("endif_range");
    r = hcq_ir_range(k, 1, hcq_ir_const_int(k, HCQ_I32, 4));
    E(k, HCQ_OP_ENDIF, HCQ_VOID, 0, 0, 1, r);
    expect_bad(k, "op 5 (endif): operand 0 is op 4 (range), not a if", NULL);

    k = base3("ifcond");
    E(k, HCQ_OP_IF, HCQ_VOID, 0, 0, 1, 1);
    expect_bad(k, "op 3 (if): condition (op 1) is i32; if takes a bool", NULL);
}

Test(ir_build, values_are_visible_only_inside_their_block)
{
    hcq_kernel *k = base3("scope");
    hcq_ir_ref r = hcq_ir_range(k, 1, hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_ref x = hcq_ir_binary(k, HCQ_OP_ADD, r, r);
    hcq_ir_endrange(k, r);
    E(k, HCQ_OP_NEG, HCQ_I32, 0, 0, 1, x);
    expect_bad(k, "op 7 (neg): operand 0 is op 5 (add), defined inside the range at op 4, which closed at op 6", NULL);
}

Test(ir_build, params_numbered_without_gaps)
{
    hcq_kernel *k = K("gap");
    E(k, HCQ_OP_PARAM, HCQ_F32, HCQ_IR_FLAG_PTR, 0, 0);
    E(k, HCQ_OP_PARAM, HCQ_F32, HCQ_IR_FLAG_PTR, 2, 0);
    expect_bad(k, "op 1 (param): param index 2, but the kernel has 2 params", NULL);
    k = K("dup");
    E(k, HCQ_OP_PARAM, HCQ_F32, HCQ_IR_FLAG_PTR, 0, 0);
    E(k, HCQ_OP_PARAM, HCQ_I32, 0, 0, 0);
    expect_bad(k, "op 1 (param): param index 0 is also op 0", NULL);
}

Test(ir_build, special_fields)
{
    hcq_kernel *k = K("sp_kind");
    E(k, HCQ_OP_SPECIAL, HCQ_I32, 0, 7, 0);
    expect_bad(k, "op 0 (special): special kind 7 is unknown", NULL);
    k = K("sp_dt");
    E(k, HCQ_OP_SPECIAL, HCQ_I64, 0, 1, 0);
    expect_bad(k, "op 0 (special): special has dtype i64; ids are i32", NULL);
}

Test(ir_build, define_local_rules)
{
    hcq_kernel *k = base3("loc_nested");
    hcq_ir_ref r = hcq_ir_range(k, 1, hcq_ir_const_int(k, HCQ_I32, 4));
    E(k, HCQ_OP_DEFINE_LOCAL, HCQ_F32, HCQ_IR_FLAG_PTR, 16, 0);
    hcq_ir_endrange(k, r);
    expect_bad(k, "op 5 (define_local): inside the range at op 4", NULL);
    k = K("loc_zero");
    E(k, HCQ_OP_DEFINE_LOCAL, HCQ_F32, HCQ_IR_FLAG_PTR, 0, 0);
    expect_bad(k, "op 0 (define_local): define_local of 0 f32 elements", NULL);
    k = K("loc_ptr");
    E(k, HCQ_OP_DEFINE_LOCAL, HCQ_F32, 0, 4, 0);
    expect_bad(k, "op 0 (define_local): define_local lacks HCQ_IR_FLAG_PTR", NULL);
}

Test(ir_build, field_checks)
{
    hcq_kernel *k = base3("flags");
    E(k, HCQ_OP_NEG, HCQ_F32, HCQ_IR_FLAG_PTR, 0, 1, 2);
    expect_bad(k, "op 3 (neg): has HCQ_IR_FLAG_PTR", NULL);
    k = base3("nsrc");
    E(k, HCQ_OP_ADD, HCQ_F32, 0, 0, 1, 2);
    expect_bad(k, "op 3 (add): has 1 operands; it takes 2", NULL);
    k = base3("arg");
    E(k, HCQ_OP_ADD, HCQ_F32, 0, 5, 2, 2, 2);
    expect_bad(k, "op 3 (add): arg is 0x5; this op takes no arg", NULL);
    k = base3("opcode");
    E(k, (hcq_op)200, HCQ_F32, 0, 0, 0);
    expect_bad(k, "op 3 (?): unknown op code 200", NULL);
    k = base3("dtcode");
    E(k, HCQ_OP_CONST, (hcq_dtype)99, 0, 0, 0);
    expect_bad(k, "op 3 (const): unknown dtype code 99", NULL);
    k = K("boolconst");
    E(k, HCQ_OP_CONST, HCQ_BOOL, 0, 2, 0);
    expect_bad(k, "op 0 (const): bool const has arg 2", NULL);
    k = base3("voidstore");
    E(k, HCQ_OP_STORE, HCQ_F32, 0, 0, 3, 0, 1, 2);
    expect_bad(k, "op 3 (store): has dtype f32; it makes no value", NULL);
}

/* barrier placement: a barrier under a block whose operand varies */
static hcq_kernel *barrier_kernel(const char *name, int variant)
{
    hcq_kernel *k = K(name);
    hcq_ir_ref buf = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref zero = hcq_ir_const_int(k, HCQ_I32, 0), four = hcq_ir_const_int(k, HCQ_I32, 4);
    hcq_ir_ref opener;
    if (variant == 0) { /* if (lid < 4) */
        opener = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lid, four));
        hcq_ir_barrier(k);
        hcq_ir_endif(k, opener);
    } else if (variant == 1) { /* range(0, buf[0]) */
        opener = hcq_ir_range(k, zero, hcq_ir_load(k, buf, zero));
        hcq_ir_barrier(k);
        hcq_ir_endrange(k, opener);
    } else { /* acc assigned lid, then if (acc < 4) */
        hcq_ir_ref acc = hcq_ir_define_acc(k, zero);
        hcq_ir_ref c = hcq_ir_binary(k, HCQ_OP_CMPLT, acc, four);
        hcq_ir_assign(k, acc, lid);
        opener = hcq_ir_if(k, c);
        hcq_ir_barrier(k);
        hcq_ir_endif(k, opener);
    }
    return k;
}

Test(ir_build, barrier_only_under_uniform_control)
{
    expect_bad(barrier_kernel("b_if", 0), "op 6 (barrier): inside the if at op 5, whose condition depends on local_id (op 1)", NULL);
    expect_bad(barrier_kernel("b_rng", 1), "op 6 (barrier): inside the range at op 5, whose bounds depend on a load (op 4)", NULL);
    expect_bad(barrier_kernel("b_acc", 2), "op 8 (barrier): inside the if at op 7, whose condition depends on local_id (op 1)", NULL);
}

Test(ir_build, dump_lists_ops)
{
    hcq_kernel *k = K("dumpme");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F16), gid = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 1);
    hcq_ir_ref lo = hcq_ir_const_int(k, HCQ_I32, 0), hi = hcq_ir_const_int(k, HCQ_I32, 3);
    hcq_ir_ref r = hcq_ir_range(k, lo, hi);
    hcq_ir_store(k, out, r, hcq_ir_const_float(k, HCQ_F16, 1.5));
    hcq_ir_endrange(k, r);
    (void)gid;
    char *d = hcq_kernel_dump(k);
    cr_assert_not_null(d);
    cr_assert(strstr(d, "kernel 'dumpme': 8 ops, 1 params, 0 local bytes"), "%s", d);
    cr_assert(strstr(d, "f16*  %0 = param 0"), "%s", d);
    cr_assert(strstr(d, "%1 = special group_id.y"), "%s", d);
    cr_assert(strstr(d, "%4 = range %2, %3"), "%s", d);
    cr_assert(strstr(d, "  store %0[%4] %5"), "%s", d); /* indented inside the range */
    cr_assert(strstr(d, "%5 = const 1.5"), "%s", d);
    free(d);
    hcq_kernel_destroy(k);
}

Test(ir_build, clone_is_deep_and_equal)
{
    hcq_kernel *k = base3("orig");
    hcq_ir_binary(k, HCQ_OP_ADD, 2, 2);
    hcq_kernel *c = hcq_kernel_clone(k);
    cr_assert_not_null(c);
    cr_assert_str_eq(hcq_kernel_name(c), "orig");
    cr_assert_eq(hcq_kernel_op_count(c), hcq_kernel_op_count(k));
    cr_assert(memcmp(hcq_kernel_ops(c), hcq_kernel_ops(k), hcq_kernel_op_count(k) * sizeof(hcq_ir_op)) == 0);
    hcq_ir_unary(c, HCQ_OP_NEG, 3);
    cr_assert_eq(hcq_kernel_op_count(c), hcq_kernel_op_count(k) + 1);
    hcq_kernel_destroy(k);
    tu_verify(c);
    hcq_kernel_destroy(c);
    /* the sticky error is cloned too */
    k = base3("errclone");
    hcq_ir_binary(k, HCQ_OP_ADD, 1, 2);
    c = hcq_kernel_clone(k);
    cr_assert_eq(hcq_kernel_verify(c), HCQ_EINVAL);
    hcq_kernel_destroy(k);
    hcq_kernel_destroy(c);
}

Test(ir_build, param_layout_is_natural)
{
    hcq_kernel *k = K("layout");
    hcq_ir_param_buffer(k, HCQ_F32);   /* 0: 8 bytes at 0 */
    hcq_ir_param_scalar(k, HCQ_I8);    /* 1: at 8 */
    hcq_ir_param_scalar(k, HCQ_F64);   /* 2: at 16 */
    hcq_ir_param_scalar(k, HCQ_U16);   /* 3: at 24 */
    hcq_ir_param_scalar(k, HCQ_F32);   /* 4: at 28 */
    hcq_ir_param_buffer(k, HCQ_BOOL);  /* 5: at 32 */
    hcq_ir_param_scalar(k, HCQ_BOOL);  /* 6: at 40 */
    hcq_param_info pi[7];
    cr_assert_eq(hcq_kernel_param_layout(k, pi), 48);
    uint32_t off[7] = {0, 8, 16, 24, 28, 32, 40}, size[7] = {8, 1, 8, 2, 4, 8, 1};
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(pi[i].offset, off[i], "param %d at %u", i, pi[i].offset);
        cr_assert_eq(pi[i].size, size[i], "param %d size %u", i, pi[i].size);
    }
    cr_assert(pi[0].is_buffer && pi[5].is_buffer && !pi[1].is_buffer);
    cr_assert_eq(pi[5].dtype, HCQ_BOOL);
    hcq_kernel_destroy(k);
    k = K("noparams");
    cr_assert_eq(hcq_kernel_param_layout(k, NULL), 0);
    hcq_kernel_destroy(k);
}

Test(ir_build, local_bytes_align_each_buffer)
{
    hcq_kernel *k = K("locals");
    hcq_ir_define_local(k, HCQ_F32, 10); /* 40 bytes */
    hcq_ir_define_local(k, HCQ_U8, 3);   /* at 48 */
    cr_assert_eq(hcq_kernel_local_bytes(k), 51);
    hcq_kernel_destroy(k);
}

Test(ir_build, dtype_tables)
{
    cr_assert_eq(hcq_dtype_size(HCQ_BF16), 2);
    cr_assert_eq(hcq_dtype_size(HCQ_BOOL), 1);
    cr_assert_eq(hcq_dtype_size(HCQ_VOID), 0);
    cr_assert_str_eq(hcq_dtype_name(HCQ_U64), "u64");
    cr_assert_str_eq(hcq_dtype_name((hcq_dtype)99), "?");
    cr_assert(hcq_dtype_is_float(HCQ_F16) && !hcq_dtype_is_float(HCQ_I16));
    cr_assert(hcq_dtype_is_int(HCQ_U8) && !hcq_dtype_is_int(HCQ_BOOL));
    cr_assert(hcq_dtype_is_signed(HCQ_I8) && !hcq_dtype_is_signed(HCQ_U32));
    cr_assert_str_eq(hcq_op_name(HCQ_OP_MULACC), "mulacc");
    cr_assert_str_eq(hcq_op_name(HCQ_OP_COUNT), "?");
    for (int op = 0; op < HCQ_OP_COUNT; op++) cr_assert_str_neq(hcq_op_name((hcq_op)op), "?", "op %d unnamed", op);
}

Test(ir_build, const_int_canonicalises)
{
    hcq_kernel *k = K("consts");
    hcq_ir_ref a = hcq_ir_const_int(k, HCQ_U8, -1), b = hcq_ir_const_int(k, HCQ_I8, 255);
    hcq_ir_ref f = hcq_ir_const_int(k, HCQ_F32, 3), c = hcq_ir_const_float(k, HCQ_F16, 1.0 + 1.0 / 4096);
    const hcq_ir_op *ops = hcq_kernel_ops(k);
    cr_assert_eq(ops[a].arg, 255);
    cr_assert_eq((int64_t)ops[b].arg, -1);
    cr_assert_eq(ir_bits_f64(ops[f].arg), 3.0);
    cr_assert_eq(ir_bits_f64(ops[c].arg), 1.0); /* rounded to f16 when built */
    hcq_kernel_destroy(k);
}

Test(ir_build, create_rejects_bad_names)
{
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cr_assert_null(hcq_kernel_create(longname));
    cr_assert(strstr(hcq_error_message(), "299 characters"), "%s", hcq_error_message());
    cr_assert_null(hcq_kernel_create("tab\there"));
    cr_assert(strstr(hcq_error_message(), "0x09"), "%s", hcq_error_message());
    hcq_kernel *k = hcq_kernel_create(NULL);
    cr_assert_str_eq(hcq_kernel_name(k), "kernel");
    hcq_kernel_destroy(k);
    hcq_kernel_destroy(NULL);
}
