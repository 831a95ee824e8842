/* IR vector values (include/hcq/compiler.h, "Vector values"): the builder
 * and verifier refuse bad widths, dtypes and uses with a clear message;
 * the dump names vector types; blobs round trip at version 3, and version 2 and 1
 * blobs still load (or are refused, saying why); the interpreter faults a
 * misaligned local access; and what the GPU compilers make of a vector
 * access: one instruction of its width (16 bytes: LDG.E.128 on sm_90,
 * global_load_b128 on gfx1100, global_load_dwordx4 on gfx942; read back
 * with nvdisasm and llvm-objdump-22; skipped, saying so, where the
 * compiler or disassembler is missing). */
#include "compiler/sass.h"
#include "compiler/twin.h"
#include "hcqtest.h"
#include "test_ir_util.h"

#include <stdio.h>
#include <unistd.h>

/* compiles (clang, ptxas) and disassembly: a few seconds each here */
TestSuite(ir_vec, .timeout = 240);

static hcq_ir_ref gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    return hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, g, ls), hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
}

static hcq_kernel *k_swap(hcq_dtype t, unsigned n);
static hcq_kernel *k_swap4(void) { return k_swap(HCQ_F32, 4); }

/* the builder's sticky error for k, which must contain `sub` */
static void refused(hcq_kernel *k, const char *sub)
{
    cr_assert_eq(hcq_kernel_verify(k), HCQ_EINVAL, "the kernel verified");
    cr_assert(strstr(hcq_error_message(), sub), "message lacks \"%s\": %s", sub, hcq_error_message());
    hcq_kernel_destroy(k);
}

Test(ir_vec, a_vector_kernel_verifies_and_dumps_its_types)
{
    hcq_kernel *k = k_swap4();
    cr_assert_eq(hcq_kernel_verify(k), HCQ_OK, "%s", hcq_error_message());
    uint32_t n = hcq_kernel_op_count(k);
    const hcq_ir_op *ops = hcq_kernel_ops(k);
    unsigned loads = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].op == HCQ_OP_LOAD) {
            loads++;
            cr_assert_eq(hcq_ir_lanes(k, i), 4);
            cr_assert_eq(ops[i].flags, HCQ_IR_FLAG_LANES(2));
        }
    cr_assert_eq(loads, 1);
    char *d = hcq_kernel_dump(k);
    cr_assert(strstr(d, "f32x4") && strstr(d, "vset") && strstr(d, "lane 3"), "%s", d);
    free(d);
    hcq_kernel_destroy(k);
}

Test(ir_vec, bad_widths_dtypes_and_uses_are_refused_with_a_message)
{
    hcq_kernel *k;
    hcq_ir_ref b, v;

    k = hcq_kernel_create("w3");
    b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_load_vec(k, b, hcq_ir_const_int(k, HCQ_I32, 0), 3);
    refused(k, "3 lanes; a vector has 2, 4, 8 or 16");

    k = hcq_kernel_create("w32");
    hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 32);
    refused(k, "32 lanes");

    k = hcq_kernel_create("bool");
    hcq_ir_vsplat(k, hcq_ir_const_bool(k, true), 4);
    refused(k, "vector of bool");

    k = hcq_kernel_create("big");
    hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F64, 1), 16); /* 128 bytes */
    refused(k, "at most 64");

    k = hcq_kernel_create("wide_access");
    b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_load_vec(k, b, hcq_ir_const_int(k, HCQ_I32, 0), 8); /* 32 bytes */
    refused(k, "a vector access is at most 16 bytes");

    k = hcq_kernel_create("wide_store");
    b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_store(k, b, hcq_ir_const_int(k, HCQ_I32, 0), hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 8));
    refused(k, "stores 8 x f32 = 32 bytes");

    k = hcq_kernel_create("compare");
    v = hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4);
    hcq_ir_binary(k, HCQ_OP_CMPLT, v, v);
    refused(k, "would make bool lanes");

    k = hcq_kernel_create("where");
    v = hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4);
    hcq_ir_where(k, hcq_ir_const_bool(k, true), v, v);
    refused(k, "a vector of 4 x f32; where takes a scalar there");

    k = hcq_kernel_create("mixed");
    v = hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4);
    hcq_ir_binary(k, HCQ_OP_ADD, v, hcq_ir_const_float(k, HCQ_F32, 1));
    refused(k, "operand 1 (op 2) has 0 lanes and the result 4");

    k = hcq_kernel_create("widths");
    hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4),
                  hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 2));
    refused(k, "has 2 lanes and the result 4");

    k = hcq_kernel_create("cast_wide");
    hcq_ir_cast(k, HCQ_F64, hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 16)); /* 128 bytes */
    refused(k, "at most 64");

    k = hcq_kernel_create("index");
    b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_load(k, b, hcq_ir_vsplat(k, hcq_ir_const_int(k, HCQ_I32, 0), 2));
    refused(k, "load takes a scalar there");

    k = hcq_kernel_create("lane");
    v = hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4);
    hcq_ir_vget(k, v, 4);
    refused(k, "lane 4 of a 4-lane vector");

    k = hcq_kernel_create("vget_scalar");
    hcq_ir_vget(k, hcq_ir_const_float(k, HCQ_F32, 1), 0);
    refused(k, "takes a vector");

    k = hcq_kernel_create("vset_dtype");
    v = hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4);
    hcq_ir_vset(k, v, 1, hcq_ir_const_int(k, HCQ_I32, 1));
    refused(k, "the dtypes must match");

    k = hcq_kernel_create("alt");
    b = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_load_vec_gated(k, b, hcq_ir_const_int(k, HCQ_I32, 0), 4, hcq_ir_const_bool(k, true),
                          hcq_ir_const_float(k, HCQ_F32, 0));
    refused(k, "alt value");

    k = hcq_kernel_create("assign");
    v = hcq_ir_define_acc(k, hcq_ir_vsplat(k, hcq_ir_const_float(k, HCQ_F32, 1), 4));
    hcq_ir_assign(k, v, hcq_ir_const_float(k, HCQ_F32, 2));
    refused(k, "assigns 0 lanes");

    /* unchecked ops: lanes on an op that makes no vector */
    k = hcq_kernel_create("flags");
    hcq_ir_ref c = hcq_ir_const_float(k, HCQ_F32, 1);
    hcq_ir_emit(k, HCQ_OP_BARRIER, HCQ_VOID, HCQ_IR_FLAG_LANES(2), NULL, 0, 0);
    (void)c;
    refused(k, "only load, vsplat, vset, define_acc, mma and elementwise");
}

/* a blob's version field, and its CRC fixed after an edit */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void set_version(uint8_t *b, size_t n, uint32_t v)
{
    memcpy(b + 4, &v, 4);
    uint32_t c = crc32_ieee(b, n - 4);
    memcpy(b + n - 4, &c, 4);
}

Test(ir_vec, blobs_round_trip_and_version_1_blobs_load_or_are_refused_saying_why)
{
    hcq_kernel *k = k_swap4(), *back = NULL;
    void *p;
    size_t n;
    cr_assert_eq(hcq_kernel_serialize(k, &p, &n), HCQ_OK, "%s", hcq_error_message());
    uint8_t *b = p;
    uint32_t ver;
    memcpy(&ver, b + 4, 4);
    cr_assert_eq(ver, 3, "blobs are written at version 3 (which added mma)");
    cr_assert_eq(hcq_kernel_deserialize(b, n, &back), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(hcq_kernel_op_count(back), hcq_kernel_op_count(k));
    cr_assert(!memcmp(hcq_kernel_ops(back), hcq_kernel_ops(k), hcq_kernel_op_count(k) * sizeof(hcq_ir_op)));
    hcq_kernel_destroy(back);

    /* as version 2 (vectors, no mma) it loads */
    set_version(b, n, 2);
    cr_assert_eq(hcq_kernel_deserialize(b, n, &back), HCQ_OK, "%s", hcq_error_message());
    hcq_kernel_destroy(back);
    /* as version 1, a vector kernel is refused: version 1 had no lanes */
    set_version(b, n, 1);
    cr_assert_eq(hcq_kernel_deserialize(b, n, &back), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "version 1"), "%s", hcq_error_message());
    set_version(b, n, 4);
    cr_assert_eq(hcq_kernel_deserialize(b, n, &back), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "version 4; this build reads versions 1 to 3"), "%s", hcq_error_message());
    free(p);
    hcq_kernel_destroy(k);

    /* a scalar kernel written as version 1 (the bytes are the same) loads */
    k = hcq_kernel_create("scalar");
    hcq_ir_ref buf = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_store(k, buf, gid(k), hcq_ir_const_int(k, HCQ_U32, 5));
    cr_assert_eq(hcq_kernel_serialize(k, &p, &n), HCQ_OK, "%s", hcq_error_message());
    set_version(p, n, 1);
    cr_assert_eq(hcq_kernel_deserialize(p, n, &back), HCQ_OK, "%s", hcq_error_message());
    hcq_kernel_destroy(back);
    free(p);
    hcq_kernel_destroy(k);
}

/* out[i*2 ..] = l[i*2 + skew ..] as one f32x2 load from a local array of n */
static hcq_kernel *k_local2(int skew, uint32_t n)
{
    hcq_kernel *k = hcq_kernel_create("local2");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), l = hcq_ir_define_local(k, HCQ_F32, n);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), two = hcq_ir_const_int(k, HCQ_I32, 2);
    hcq_ir_ref at = hcq_ir_binary(k, HCQ_OP_MUL, lid, two);
    hcq_ir_store(k, l, at, hcq_ir_vsplat(k, hcq_ir_cast(k, HCQ_F32, lid), 2));
    hcq_ir_barrier(k);
    hcq_ir_ref v = hcq_ir_load_vec(k, l, hcq_ir_binary(k, HCQ_OP_ADD, at, hcq_ir_const_int(k, HCQ_I32, skew)), 2);
    hcq_ir_store(k, out, at, v);
    return k;
}

Test(ir_vec, the_interpreter_runs_local_vectors_and_faults_a_misaligned_one)
{
    float out[64] = {0};
    hcq_kernel *k = k_local2(0, 64);
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    cr_assert_eq(tu_interp_status(k, &a, TU_DIMS1(1, 16)), HCQ_OK, "%s", hcq_error_message());
    for (int i = 0; i < 16; i++) cr_assert(out[2 * i] == (float)i && out[2 * i + 1] == (float)i, "item %d", i);
    hcq_kernel_destroy(k);

    k = k_local2(1, 64);
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    cr_assert_eq(tu_interp_status(k, &a, TU_DIMS1(1, 16)), HCQ_EFAULT);
    const char *m = hcq_error_message();
    cr_assert(strstr(m, "misaligned vector access") && strstr(m, "local offset 0x4") && strstr(m, "(8 bytes)"), "%s", m);
    hcq_kernel_destroy(k);

    /* a vector reaching past the end: item 15 reads elements 62 and 63 of 63 */
    k = k_local2(32, 63);
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    cr_assert_eq(tu_interp_status(k, &a, TU_DIMS1(1, 16)), HCQ_EFAULT);
    m = hcq_error_message();
    cr_assert(strstr(m, "element 62") && strstr(m, "out of bounds") && strstr(m, "(15,0,0)"), "%s", m);
    hcq_kernel_destroy(k);
}

/* out[i*N ..] = in[i*N ..] with lanes 0 and N-1 swapped: one N-lane load
 * and one N-lane store of dtype t */
static hcq_kernel *k_swap(hcq_dtype t, unsigned n)
{
    hcq_kernel *k = hcq_kernel_create("swapn");
    hcq_ir_ref out = hcq_ir_param_buffer(k, t), in = hcq_ir_param_buffer(k, t);
    hcq_ir_ref at = hcq_ir_binary(k, HCQ_OP_MUL, gid(k), hcq_ir_const_int(k, HCQ_I32, n));
    hcq_ir_ref v = hcq_ir_load_vec(k, in, at, n);
    hcq_ir_ref w = hcq_ir_vset(k, hcq_ir_vset(k, v, 0, hcq_ir_vget(k, v, n - 1)), n - 1, hcq_ir_vget(k, v, 0));
    hcq_ir_store(k, out, at, w);
    return k;
}

/* The binary of k_swap(t, n) for target, written to a temp file (path in
 * file); false (with the reason in hcq_error_message) where no compiler
 * for the target is here. */
static bool binary_file(const char *target, hcq_dtype t, unsigned n, char *file, size_t size)
{
    hcq_kernel *k = k_swap(t, n);
    hcq_binary *bin = NULL;
    hcq_status s = hcq_compile(k, target, &bin);
    hcq_kernel_destroy(k);
    if (s == HCQ_ENODEV || s == HCQ_ENOTSUP) return false;
    cr_assert_eq(s, HCQ_OK, "%s", hcq_error_message());
    snprintf(file, size, "/tmp/hcq_ir_vec_%d_%s.bin", (int)getpid(), target);
    FILE *f = fopen(file, "wb");
    cr_assert(f && fwrite(bin->data, 1, bin->size, f) == bin->size && !fclose(f));
    hcq_binary_free(bin);
    return true;
}

/* each access size is one instruction of that width (a struct copy that a
 * compiler split into lanes would show as several narrower ones) */
static const struct {
    hcq_dtype t;
    unsigned n;
    const char *sass_ld, *sass_st, *gfx11_ld, *gfx11_st, *gfx9_ld, *gfx9_st;
} widths[] = {
    {HCQ_F32, 4, "LDG.E.128", "STG.E.128", "global_load_b128", "global_store_b128", "global_load_dwordx4", "global_store_dwordx4"},
    {HCQ_F16, 8, "LDG.E.128", "STG.E.128", "global_load_b128", "global_store_b128", "global_load_dwordx4", "global_store_dwordx4"},
    {HCQ_F32, 2, "LDG.E.64", "STG.E.64", "global_load_b64", "global_store_b64", "global_load_dwordx2", "global_store_dwordx2"},
    {HCQ_BF16, 2, "LDG.E ", "STG.E ", "global_load_b32", "global_store_b32", "global_load_dword ", "global_store_dword "},
};

Test(ir_vec, a_vector_access_is_one_LDG_of_its_width_on_sm_90)
{
    char why[256], file[128], cmd[1024];
    const char *nvdisasm = sass_nvdisasm(why, sizeof why);
    if (!nvdisasm) cr_skip_test("nvdisasm is not here: %s", why);
    for (size_t w = 0; w < BASE_ARRAY_LEN(widths); w++) {
        if (!binary_file("sm_90", widths[w].t, widths[w].n, file, sizeof file))
            cr_skip_test("no compiler for sm_90 here: %s", hcq_error_message());
        snprintf(cmd, sizeof cmd, "timeout 60 %s -c %s 2>&1", nvdisasm, file);
        char *sass = t_capture(cmd, NULL);
        unlink(file);
        const char *what = hcq_dtype_name(widths[w].t);
        cr_assert_eq(t_count(sass, widths[w].sass_ld), 1, "%s x%u: want one %s:\n%s", what, widths[w].n, widths[w].sass_ld, sass);
        cr_assert_eq(t_count(sass, widths[w].sass_st), 1, "%s x%u: want one %s:\n%s", what, widths[w].n, widths[w].sass_st, sass);
        cr_assert_eq(t_count(sass, "LDG"), 1, "%s x%u: want no other load:\n%s", what, widths[w].n, sass);
        free(sass);
    }
}

Test(ir_vec, a_vector_access_is_one_global_load_of_its_width_on_gfx1100_and_gfx942)
{
    char file[128], cmd[1024];
    if (system("command -v llvm-objdump-22 >/dev/null 2>&1") != 0) cr_skip_test("llvm-objdump-22 is not here");
    static const char *targets[] = {"gfx1100", "gfx942"};
    for (int g = 0; g < 2; g++)
        for (size_t w = 0; w < BASE_ARRAY_LEN(widths); w++) {
            if (!binary_file(targets[g], widths[w].t, widths[w].n, file, sizeof file))
                cr_skip_test("no compiler for %s here: %s", targets[g], hcq_error_message());
            snprintf(cmd, sizeof cmd, "timeout 60 llvm-objdump-22 -d --mcpu=%s %s 2>&1", targets[g], file);
            char *isa = t_capture(cmd, NULL);
            unlink(file);
            const char *ld = g ? widths[w].gfx9_ld : widths[w].gfx11_ld, *st = g ? widths[w].gfx9_st : widths[w].gfx11_st;
            const char *what = hcq_dtype_name(widths[w].t);
            cr_assert_eq(t_count(isa, ld), 1, "%s %s x%u: want one %s:\n%s", targets[g], what, widths[w].n, ld, isa);
            cr_assert_eq(t_count(isa, st), 1, "%s %s x%u: want one %s:\n%s", targets[g], what, widths[w].n, st, isa);
            cr_assert_eq(t_count(isa, "global_load"), 1, "%s %s x%u: want no other load:\n%s", targets[g], what,
                         widths[w].n, isa);
            free(isa);
        }
}

/* The host twins (the mock's opt-in fast path) run vector code exactly; the
 * CUDA twin faults a misaligned access as NVIDIA does, the HIP twin runs it
 * as AMD's unaligned mode does (compiler.h). */
static hcq_status twin_swap4(const char *target, int skew, float *out, const float *in)
{
    hcq_kernel *k = hcq_kernel_create("swap4s");
    hcq_ir_ref o = hcq_ir_param_buffer(k, HCQ_F32), i = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref at = hcq_ir_binary(k, HCQ_OP_MUL, gid(k), hcq_ir_const_int(k, HCQ_I32, 4));
    hcq_ir_ref v = hcq_ir_load_vec(k, i, hcq_ir_binary(k, HCQ_OP_ADD, at, hcq_ir_const_int(k, HCQ_I32, skew)), 4);
    hcq_ir_store(k, o, at, hcq_ir_vset(k, hcq_ir_vset(k, v, 0, hcq_ir_vget(k, v, 3)), 3, hcq_ir_vget(k, v, 0)));
    tu_args a;
    tu_args_init(&a, k);
    tu_arg_ptr(&a, 0, out);
    tu_arg_ptr(&a, 1, in);
    hcq_interp_launch l = {.kernargs = a.buf, .kernarg_size = a.size, .num_groups = {2, 1, 1}, .local_size = {8, 1, 1}};
    hcq_status s = cc_twin_run(k, target, &l);
    hcq_kernel_destroy(k);
    return s;
}

Test(ir_vec, host_twins_run_vectors_and_check_alignment_as_their_hardware)
{
    char why[256];
    static const char *targets[] = {"sm_90", "gfx1100"};
    for (int t = 0; t < 2; t++) {
        if (!cc_twin_available(targets[t], why, sizeof why)) {
            cr_log_warn("no host twin of %s here: %s", targets[t], why);
            continue;
        }
        float in[68] __attribute__((aligned(16))), out[64] __attribute__((aligned(16)));
        for (int e = 0; e < 68; e++) in[e] = (float)e + 0.5f;
        cr_assert_eq(twin_swap4(targets[t], 0, out, in), HCQ_OK, "%s: %s", targets[t], hcq_error_message());
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 4; j++) {
                int src = j == 0 ? 3 : j == 3 ? 0 : j;
                cr_assert_eq(out[i * 4 + j], in[i * 4 + src], "%s: item %d lane %d", targets[t], i, j);
            }
        hcq_status s = twin_swap4(targets[t], 1, out, in);
        if (t == 0) {
            cr_assert_eq(s, HCQ_EFAULT, "the CUDA twin ran a misaligned vector load");
            cr_assert(strstr(hcq_error_message(), "misaligned vector access"), "%s", hcq_error_message());
        } else {
            cr_assert_eq(s, HCQ_OK, "%s", hcq_error_message());
            cr_assert_eq(out[0], in[4], "the HIP twin's unaligned load reads elements 1..4");
        }
    }
}
