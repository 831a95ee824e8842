/* The IR's matrix multiply-accumulate (include/hcq/compiler.h, "Matrix
 * multiply-accumulate"): the kinds' table against the layouts stated again
 * here from the vendors' documents (independently of compiler/mma.c's
 * bit-field form); hcq_ir_mma_coord's ops against hcq_mma_coord; the
 * builder's and verifier's refusals; dump and serialization (version 3,
 * older blobs refused for mma); the interpreter on every kind, every
 * element against a scalar f32 fma loop in k order; its refusals (a partial
 * warp, a work-group not a multiple of the warp); and which targets have
 * which kinds. */
#include "hcqtest.h"
#include "mma_ref.h"
#include "test_ir_util.h"

#include "compiler/ir.h"
#include "compiler/sass.h"
#include "compiler/twin.h"

#include <stdio.h>
#include <unistd.h>

TestSuite(ir_mma, .timeout = 120);

/* ** the layouts, as the documents state them (lane l) */
static void doc_coord(hcq_mma_kind kind, unsigned op, unsigned l, unsigned e, unsigned *row, unsigned *col)
{
    switch (kind) {
    case HCQ_MMA_NV_M16N8K16_F16:
    case HCQ_MMA_NV_M16N8K16_BF16: {
        /* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type": groupID g = l / 4,
         * threadID_in_group t = l % 4; A: a0..a7 in four registers of two halves; register i = e / 2 holds
         * row g (i = 0, 2) or g + 8 (i = 1, 3), columns 2t, 2t + 1 (+ 8 for i >= 2); B: b0..b3, rows
         * 2t, 2t + 1 (+ 8 for b2, b3), column g; C: c0, c1 at row g, c2, c3 at row g + 8, columns 2t, 2t + 1 */
        unsigned g = l / 4, t = l % 4, i = e / 2;
        if (op == 0) *row = i % 2 ? g + 8 : g, *col = 2 * t + e % 2 + (i >= 2 ? 8 : 0);
        else if (op == 1) *row = 2 * t + e % 2 + (e >= 2 ? 8 : 0), *col = g;
        else *row = e >= 2 ? g + 8 : g, *col = 2 * t + e % 2;
        return;
    }
    case HCQ_MMA_WMMA_F16_W32:
    case HCQ_MMA_WMMA_BF16_W32:
    case HCQ_MMA_WMMA_F16_W64:
    case HCQ_MMA_WMMA_BF16_W64: {
        /* RDNA3 ISA guide, WMMA: A row l % 16 (all of k), B column l % 16; D element e of lane l: row
         * e * (wave / 16) + l / 16 ... i.e. rows interleaved across the lane halves (quarters in wave64) */
        bool w64 = kind == HCQ_MMA_WMMA_F16_W64 || kind == HCQ_MMA_WMMA_BF16_W64;
        if (op == 0) *row = l % 16, *col = e;
        else if (op == 1) *row = e, *col = l % 16;
        else *row = (w64 ? 4 : 2) * e + l / 16, *col = l % 16;
        return;
    }
    case HCQ_MMA_MFMA_16X16X16_F16:
    case HCQ_MMA_MFMA_16X16X16_BF16:
        /* CDNA3 ISA guide / matrix instruction calculator: A[i][k] with i = l % 16, k = 4 (l / 16) + e;
         * B[k][j] with j = l % 16; D[i][j] with i = 4 (l / 16) + e, j = l % 16 */
        if (op == 0) *row = l % 16, *col = 4 * (l / 16) + e;
        else if (op == 1) *row = 4 * (l / 16) + e, *col = l % 16;
        else *row = 4 * (l / 16) + e, *col = l % 16;
        return;
    case HCQ_MMA_MFMA_32X32X8_F16:
        /* A[i][k]: i = l % 32, k = 4 (l / 32) + e; D[i][j]: j = l % 32, i = 8 (e / 4) + 4 (l / 32) + e % 4 */
        if (op == 0) *row = l % 32, *col = 4 * (l / 32) + e;
        else if (op == 1) *row = 4 * (l / 32) + e, *col = l % 32;
        else *row = 8 * (e / 4) + 4 * (l / 32) + e % 4, *col = l % 32;
        return;
    default: cr_assert_fail("kind %d", kind);
    }
}

static const struct {
    hcq_mma_kind kind;
    const char *name;
    unsigned m, n, k, warp, a, b, c;
    hcq_dtype ab;
} want_info[] = {
    {HCQ_MMA_NV_M16N8K16_F16, "nv_m16n8k16_f16", 16, 8, 16, 32, 8, 4, 4, HCQ_F16},
    {HCQ_MMA_NV_M16N8K16_BF16, "nv_m16n8k16_bf16", 16, 8, 16, 32, 8, 4, 4, HCQ_BF16},
    {HCQ_MMA_WMMA_F16_W32, "wmma_f16_w32", 16, 16, 16, 32, 16, 16, 8, HCQ_F16},
    {HCQ_MMA_WMMA_BF16_W32, "wmma_bf16_w32", 16, 16, 16, 32, 16, 16, 8, HCQ_BF16},
    {HCQ_MMA_WMMA_F16_W64, "wmma_f16_w64", 16, 16, 16, 64, 16, 16, 4, HCQ_F16},
    {HCQ_MMA_WMMA_BF16_W64, "wmma_bf16_w64", 16, 16, 16, 64, 16, 16, 4, HCQ_BF16},
    {HCQ_MMA_MFMA_16X16X16_F16, "mfma_16x16x16_f16", 16, 16, 16, 64, 4, 4, 4, HCQ_F16},
    {HCQ_MMA_MFMA_32X32X8_F16, "mfma_32x32x8_f16", 32, 32, 8, 64, 4, 4, 16, HCQ_F16},
    {HCQ_MMA_MFMA_16X16X16_BF16, "mfma_16x16x16_bf16", 16, 16, 16, 64, 4, 4, 4, HCQ_BF16},
};
#define NKINDS (sizeof want_info / sizeof want_info[0])

Test(ir_mma, every_kind_has_its_documented_shape)
{
    cr_assert_eq(NKINDS, HCQ_MMA_KINDS - 1);
    for (unsigned i = 0; i < NKINDS; i++) {
        hcq_mma_info in;
        T_OK(hcq_mma_info_get(want_info[i].kind, &in));
        cr_assert_str_eq(in.name, want_info[i].name);
        cr_assert(in.m == want_info[i].m && in.n == want_info[i].n && in.k == want_info[i].k, "%s", in.name);
        cr_assert_eq(in.warp, want_info[i].warp, "%s", in.name);
        cr_assert(in.a_lanes == want_info[i].a && in.b_lanes == want_info[i].b && in.c_lanes == want_info[i].c, "%s",
                  in.name);
        cr_assert(in.ab == want_info[i].ab && in.acc == HCQ_F32, "%s", in.name);
    }
    hcq_mma_info in;
    cr_assert_eq(hcq_mma_info_get(HCQ_MMA_NONE, &in), HCQ_EINVAL);
    cr_assert_eq(hcq_mma_info_get(HCQ_MMA_KINDS, &in), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "not a matrix multiply-accumulate kind"), "%s", hcq_error_message());
}

/* every (lane, element) of every operand where the documents put it; C/D covers each element once, A and B
 * each element at least once (WMMA's upper lanes repeat lanes 0-15) */
Test(ir_mma, the_table_places_every_element_as_the_documents_do)
{
    for (unsigned i = 0; i < NKINDS; i++) {
        hcq_mma_info in;
        T_OK(hcq_mma_info_get(want_info[i].kind, &in));
        unsigned rows[3] = {in.m, in.k, in.m}, cols[3] = {in.k, in.n, in.n}, lanes[3] = {in.a_lanes, in.b_lanes, in.c_lanes};
        for (unsigned op = 0; op < 3; op++) {
            unsigned seen[32 * 32] = {0};
            for (unsigned l = 0; l < in.warp; l++)
                for (unsigned e = 0; e < lanes[op]; e++) {
                    unsigned r, c, wr, wc;
                    T_OK(hcq_mma_coord(want_info[i].kind, op, l, e, &r, &c));
                    doc_coord(want_info[i].kind, op, l, e, &wr, &wc);
                    cr_assert(r == wr && c == wc, "%s operand %u lane %u element %u: (%u, %u), the documents say (%u, %u)",
                              in.name, op, l, e, r, c, wr, wc);
                    cr_assert(r < rows[op] && c < cols[op]);
                    seen[r * cols[op] + c]++;
                }
            for (unsigned x = 0; x < rows[op] * cols[op]; x++) {
                cr_assert(seen[x] >= 1, "%s operand %u: element (%u, %u) is in no lane", in.name, op, x / cols[op],
                          x % cols[op]);
                if (op == 2) cr_assert_eq(seen[x], 1, "%s: D element %u is in %u lanes", in.name, x, seen[x]);
            }
        }
    }
    unsigned r, c;
    cr_assert_eq(hcq_mma_coord(HCQ_MMA_NV_M16N8K16_F16, 0, 32, 0, &r, &c), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "lane 32"), "%s", hcq_error_message());
    cr_assert_eq(hcq_mma_coord(HCQ_MMA_NV_M16N8K16_F16, 1, 0, 4, &r, &c), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "element 4 of a 4-lane B fragment"), "%s", hcq_error_message());
    cr_assert_eq(hcq_mma_coord(HCQ_MMA_NV_M16N8K16_F16, 3, 0, 0, &r, &c), HCQ_EINVAL);
}

/* hcq_ir_mma_coord's ops, run on the interpreter for every lane, give hcq_mma_coord's answers */
Test(ir_mma, ir_coordinates_agree_with_the_table)
{
    for (unsigned i = 0; i < NKINDS; i++) {
        hcq_mma_kind kind = want_info[i].kind;
        hcq_mma_info in;
        T_OK(hcq_mma_info_get(kind, &in));
        hcq_kernel *k = hcq_kernel_create("coords");
        hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), lane = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
        unsigned lanes[3] = {in.a_lanes, in.b_lanes, in.c_lanes}, slot = 0;
        for (unsigned op = 0; op < 3; op++)
            for (unsigned e = 0; e < lanes[op]; e++, slot++) {
                hcq_ir_ref r, c;
                T_OK(hcq_ir_mma_coord(k, kind, op, lane, e, &r, &c));
                hcq_ir_ref at = tref_add(k, tref_mul(k, lane, tref_c32(k, 2 * 40)), tref_c32(k, 2 * slot));
                hcq_ir_store(k, out, at, r);
                hcq_ir_store(k, out, tref_add(k, at, tref_c32(k, 1)), c);
            }
        T_OK(hcq_kernel_verify(k));
        static int32_t got[64 * 80];
        tu_args a;
        tu_args_init(&a, k);
        tu_arg_ptr(&a, 0, got);
        tu_interp(k, &a, TU_DIMS1(1, in.warp));
        slot = 0;
        for (unsigned op = 0; op < 3; op++)
            for (unsigned e = 0; e < lanes[op]; e++, slot++)
                for (unsigned l = 0; l < in.warp; l++) {
                    unsigned r, c;
                    T_OK(hcq_mma_coord(kind, op, l, e, &r, &c));
                    cr_assert(got[l * 80 + 2 * slot] == (int32_t)r && got[l * 80 + 2 * slot + 1] == (int32_t)c,
                              "%s operand %u lane %u element %u: IR (%d, %d), table (%u, %u)", in.name, op, l, e,
                              got[l * 80 + 2 * slot], got[l * 80 + 2 * slot + 1], r, c);
                }
        hcq_kernel_destroy(k);
    }
}

/* the builder's sticky error for k, which must contain `sub` */
static void refused(hcq_kernel *k, const char *sub)
{
    cr_assert_eq(hcq_kernel_verify(k), HCQ_EINVAL, "the kernel verified");
    cr_assert(strstr(hcq_error_message(), sub), "message lacks \"%s\": %s", sub, hcq_error_message());
    hcq_kernel_destroy(k);
}

static hcq_ir_ref vzero(hcq_kernel *k, hcq_dtype t, unsigned lanes)
{
    return hcq_ir_vsplat(k, hcq_ir_const_float(k, t, 0), lanes);
}

Test(ir_mma, wrong_fragments_and_kinds_are_refused_with_a_message)
{
    hcq_kernel *k = hcq_kernel_create("bad");
    hcq_ir_mma(k, HCQ_MMA_NV_M16N8K16_F16, vzero(k, HCQ_F16, 4), vzero(k, HCQ_F16, 4), vzero(k, HCQ_F32, 4));
    refused(k, "is 4 x f16 (0: scalar); nv_m16n8k16_f16 takes A as 8 x f16 per work-item");
    k = hcq_kernel_create("bad");
    hcq_ir_mma(k, HCQ_MMA_NV_M16N8K16_BF16, vzero(k, HCQ_BF16, 8), vzero(k, HCQ_F16, 4), vzero(k, HCQ_F32, 4));
    refused(k, "nv_m16n8k16_bf16 takes B as 4 x bf16");
    k = hcq_kernel_create("bad");
    hcq_ir_mma(k, HCQ_MMA_MFMA_16X16X16_F16, vzero(k, HCQ_F16, 4), vzero(k, HCQ_F16, 4), vzero(k, HCQ_F32, 8));
    refused(k, "takes C as 4 x f32");
    k = hcq_kernel_create("bad");
    hcq_ir_mma(k, HCQ_MMA_WMMA_F16_W32, vzero(k, HCQ_F16, 16), vzero(k, HCQ_F16, 16), hcq_ir_const_float(k, HCQ_F32, 0));
    refused(k, "is 0 x f32 (0: scalar)");
    k = hcq_kernel_create("bad");
    hcq_ir_mma(k, HCQ_MMA_KINDS, vzero(k, HCQ_F16, 4), vzero(k, HCQ_F16, 4), vzero(k, HCQ_F32, 4));
    refused(k, "not a matrix multiply-accumulate kind");
    /* a hand-made op whose D is not C's shape */
    k = hcq_kernel_create("bad");
    hcq_ir_ref s[3] = {vzero(k, HCQ_F16, 4), vzero(k, HCQ_F16, 4), vzero(k, HCQ_F32, 4)};
    hcq_ir_emit(k, HCQ_OP_MMA, HCQ_F32, HCQ_IR_FLAG_LANES(3), s, 3, HCQ_MMA_MFMA_16X16X16_F16);
    cr_assert_eq(hcq_kernel_verify(k), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "D is 8 x f32; mfma_16x16x16_f16 makes 4 x f32"), "%s", hcq_error_message());
    hcq_kernel_destroy(k);
    /* coordinates from a lane that is not an i32 */
    k = hcq_kernel_create("bad");
    hcq_ir_ref r, c, f = hcq_ir_const_float(k, HCQ_F32, 1);
    cr_assert_eq(hcq_ir_mma_coord(k, HCQ_MMA_NV_M16N8K16_F16, 0, f, 0, &r, &c), HCQ_EINVAL);
    cr_assert_eq(r, HCQ_IR_NONE);
    refused(k, "not an i32 scalar");
}

static hcq_kernel *one_mma(hcq_mma_kind kind) { return tref_mma_kernel(kind, 1, 1); }

Test(ir_mma, dump_names_the_kind_and_blobs_round_trip_at_version_3)
{
    hcq_kernel *k = one_mma(HCQ_MMA_MFMA_32X32X8_F16);
    T_OK(hcq_kernel_verify(k));
    char *d = hcq_kernel_dump(k);
    cr_assert(strstr(d, "f32x16") && strstr(d, "= mma mfma_32x32x8_f16 %"), "%s", d);
    free(d);
    void *blob;
    size_t size;
    T_OK(hcq_kernel_serialize(k, &blob, &size));
    cr_assert_eq(((uint8_t *)blob)[4], 3, "version 3 is written");
    hcq_kernel *back;
    T_OK(hcq_kernel_deserialize(blob, size, &back));
    cr_assert_eq(hcq_kernel_op_count(back), hcq_kernel_op_count(k));
    cr_assert(!memcmp(hcq_kernel_ops(back), hcq_kernel_ops(k), hcq_kernel_op_count(k) * sizeof(hcq_ir_op)));
    hcq_kernel_destroy(back);
    /* the same blob claiming version 2 (checksum not checked, to reach the field check): refused for its mma */
    ((uint8_t *)blob)[4] = 2;
    cr_assert_eq(ir_deserialize(blob, size, false, &back), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "(mma) is a version 3 op in a version 2 blob"), "%s", hcq_error_message());
    free(blob);
    hcq_kernel_destroy(k);
}

/* runs tref_mma_kernel on the interpreter: `tiles` tiles over groups of wpg warps; every element compared
 * with the reference bit for bit (no NaN arises from these inputs) */
/* target NULL: the interpreter; else the host twin of that target's text (cc_twin_run) */
static void engine_check(const char *target, hcq_mma_kind kind, unsigned ksteps, unsigned wpg, unsigned groups,
                         uint64_t seed)
{
    hcq_mma_info in;
    T_OK(hcq_mma_info_get(kind, &in));
    int bf16 = in.ab == HCQ_BF16;
    unsigned tiles = wpg * groups, kt = ksteps * in.k;
    uint16_t *a = malloc(sizeof *a * tiles * in.m * kt), *b = malloc(sizeof *b * tiles * kt * in.n);
    float *c = malloc(sizeof *c * tiles * in.m * in.n), *d = calloc(tiles * in.m * in.n, sizeof *d);
    uint64_t s = seed;
    for (unsigned i = 0; i < tiles * in.m * kt; i++) a[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < tiles * kt * in.n; i++) b[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < tiles * in.m * in.n; i++) c[i] = tref_rnd_c(&s);
    hcq_kernel *k = tref_mma_kernel(kind, ksteps, wpg);
    T_OK(hcq_kernel_verify(k));
    tu_args args;
    tu_args_init(&args, k);
    tu_arg_ptr(&args, 0, a), tu_arg_ptr(&args, 1, b), tu_arg_ptr(&args, 2, c), tu_arg_ptr(&args, 3, d);
    if (target) {
        hcq_interp_launch l = {.kernargs = args.buf, .kernarg_size = args.size, .num_groups = {groups, 1, 1},
                               .local_size = {wpg * in.warp, 1, 1}};
        T_OK(cc_twin_run(k, target, &l));
    } else {
        tu_interp(k, &args, TU_DIMS1(groups, wpg * in.warp));
    }
    unsigned order_matters = 0;
    for (unsigned t = 0; t < tiles; t++)
        for (unsigned m = 0; m < in.m; m++)
            for (unsigned n = 0; n < in.n; n++) {
                const uint16_t *ta = a + t * in.m * kt, *tb = b + t * kt * in.n;
                const float *tc = c + t * in.m * in.n;
                uint32_t want = tref_f32_raw(tref_mma_elem(ta, tb, tc, bf16, in.n, kt, m, n, 0)),
                         got = tref_f32_raw(d[t * in.m * in.n + m * in.n + n]);
                cr_assert_eq(got, want, "%s x%u on %s: tile %u D[%u][%u] = 0x%08x, want 0x%08x", in.name, ksteps,
                             target ? target : "the interpreter", t, m, n, got, want);
                order_matters += tref_f32_raw(tref_mma_elem(ta, tb, tc, bf16, in.n, kt, m, n, 1)) != want;
            }
    cr_assert(order_matters > 0, "%s: the inputs do not show the order of the sum", in.name);
    hcq_kernel_destroy(k);
    free(a), free(b), free(c), free(d);
}

Test(ir_mma, the_interpreter_runs_every_kind_as_an_fma_loop_in_k_order)
{
    for (unsigned i = 0; i < NKINDS; i++) engine_check(NULL, want_info[i].kind, 3, 2, 2, 0x9e3779b97f4a7c15ull + i);
}

/* the host twins of the CUDA text (NVIDIA kinds) and of the HIP text (AMD kinds): warp-collective through the
 * fibers, bit-equal to the same reference */
Test(ir_mma, the_host_twins_run_every_kind_as_the_interpreter_does)
{
    tu_need_clang();
    for (unsigned i = 0; i < NKINDS; i++)
        engine_check(want_info[i].warp == 32 && want_info[i].n == 8 ? "sm_90" : "hip", want_info[i].kind, 2, 2, 2,
                     0x243f6a8885a308d3ull + i);
}

/* through local memory and barriers, each warp's MMA under its own branch (warp-uniform, not group-uniform):
 * the group stages its tiles' A and B in local memory, a barrier, warp 0 multiplies its tile, a barrier, warp 1
 * its own; the twin's schedule keeps barriers and rendezvous apart. Params as tref_mma_kernel (ksteps 1, two
 * warps a group) */
static hcq_kernel *staged_kernel(hcq_mma_kind kind)
{
    hcq_mma_info in;
    cr_assert_eq(hcq_mma_info_get(kind, &in), HCQ_OK);
    const unsigned wpg = 2, W = wpg * in.warp, na = wpg * in.m * in.k, nb = wpg * in.k * in.n;
    hcq_kernel *k = hcq_kernel_create("mma_staged");
    hcq_ir_ref pa = hcq_ir_param_buffer(k, in.ab), pb = hcq_ir_param_buffer(k, in.ab),
               pc = hcq_ir_param_buffer(k, HCQ_F32), pd = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref la = hcq_ir_define_local(k, in.ab, na), lb = hcq_ir_define_local(k, in.ab, nb);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref lane = hcq_ir_binary(k, HCQ_OP_MOD, lid, tref_c32(k, in.warp)),
               warp = hcq_ir_binary(k, HCQ_OP_IDIV, lid, tref_c32(k, in.warp));
    /* stage: element lid + j W of the group's A and B */
    hcq_ir_ref bufs[2][2] = {{pa, la}, {pb, lb}};
    unsigned counts[2] = {na, nb};
    for (unsigned x = 0; x < 2; x++) {
        hcq_ir_ref j = hcq_ir_range(k, tref_c32(k, 0), tref_c32(k, (counts[x] + W - 1) / W));
        hcq_ir_ref i = tref_add(k, lid, tref_mul(k, j, tref_c32(k, W)));
        hcq_ir_ref ok = hcq_ir_binary(k, HCQ_OP_CMPLT, i, tref_c32(k, counts[x]));
        hcq_ir_ref g = tref_add(k, tref_mul(k, grp, tref_c32(k, counts[x])), i);
        hcq_ir_ref v = hcq_ir_load_gated(k, bufs[x][0], g, ok, hcq_ir_const_float(k, in.ab, 0));
        hcq_ir_store_gated(k, bufs[x][1], i, v, ok);
        hcq_ir_endrange(k, j);
    }
    hcq_ir_ref arow[16], acol[16], brow[16], bcol[16], crow[16], ccol[16];
    for (unsigned e = 0; e < in.a_lanes; e++) hcq_ir_mma_coord(k, kind, 0, lane, e, &arow[e], &acol[e]);
    for (unsigned e = 0; e < in.b_lanes; e++) hcq_ir_mma_coord(k, kind, 1, lane, e, &brow[e], &bcol[e]);
    for (unsigned e = 0; e < in.c_lanes; e++) hcq_ir_mma_coord(k, kind, 2, lane, e, &crow[e], &ccol[e]);
    hcq_ir_ref tile = tref_add(k, tref_mul(k, grp, tref_c32(k, wpg)), warp);
    hcq_ir_ref coff = tref_mul(k, tile, tref_c32(k, in.m * in.n));
    hcq_ir_ref aoff = tref_mul(k, warp, tref_c32(k, in.m * in.k)), boff = tref_mul(k, warp, tref_c32(k, in.k * in.n));
    for (unsigned w = 0; w < wpg; w++) {
        hcq_ir_barrier(k);
        hcq_ir_ref is_w = hcq_ir_binary(k, HCQ_OP_XOR, hcq_ir_binary(k, HCQ_OP_CMPNE, warp, tref_c32(k, w)),
                                        hcq_ir_const_bool(k, true));
        hcq_ir_ref iff = hcq_ir_if(k, is_w);
        hcq_ir_ref a = tref_frag_load(k, la, in.ab, in.a_lanes, arow, acol, aoff, in.k, HCQ_IR_NONE, HCQ_IR_NONE);
        hcq_ir_ref b = tref_frag_load(k, lb, in.ab, in.b_lanes, brow, bcol, boff, in.n, HCQ_IR_NONE, HCQ_IR_NONE);
        hcq_ir_ref c = tref_frag_load(k, pc, HCQ_F32, in.c_lanes, crow, ccol, coff, in.n, HCQ_IR_NONE, HCQ_IR_NONE);
        hcq_ir_ref d = hcq_ir_mma(k, kind, a, b, c);
        for (unsigned e = 0; e < in.c_lanes; e++) {
            hcq_ir_ref idx = tref_add(k, coff, tref_add(k, tref_mul(k, crow[e], tref_c32(k, in.n)), ccol[e]));
            hcq_ir_store(k, pd, idx, hcq_ir_vget(k, d, e));
        }
        hcq_ir_endif(k, iff);
    }
    return k;
}

static void staged_check(const char *target, hcq_mma_kind kind, uint64_t seed)
{
    hcq_mma_info in;
    T_OK(hcq_mma_info_get(kind, &in));
    int bf16 = in.ab == HCQ_BF16;
    enum { GROUPS = 2, TILES = 4 };
    unsigned na = TILES * in.m * in.k, nb = TILES * in.k * in.n, nc = TILES * in.m * in.n;
    uint16_t *a = malloc(2 * na), *b = malloc(2 * nb);
    float *c = malloc(4 * nc), *d = calloc(nc, 4);
    uint64_t s = seed;
    for (unsigned i = 0; i < na; i++) a[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < nb; i++) b[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < nc; i++) c[i] = tref_rnd_c(&s);
    hcq_kernel *k = staged_kernel(kind);
    T_OK(hcq_kernel_verify(k));
    tu_args args;
    tu_args_init(&args, k);
    tu_arg_ptr(&args, 0, a), tu_arg_ptr(&args, 1, b), tu_arg_ptr(&args, 2, c), tu_arg_ptr(&args, 3, d);
    hcq_interp_launch l = {.kernargs = args.buf, .kernarg_size = args.size, .num_groups = {GROUPS, 1, 1},
                           .local_size = {2 * in.warp, 1, 1}};
    T_OK(target ? cc_twin_run(k, target, &l) : hcq_interp_run(k, &l));
    for (unsigned t = 0; t < TILES; t++)
        for (unsigned m = 0; m < in.m; m++)
            for (unsigned n = 0; n < in.n; n++) {
                uint32_t want = tref_f32_raw(tref_mma_elem(a + t * in.m * in.k, b + t * in.k * in.n, c + t * in.m * in.n,
                                                           bf16, in.n, in.k, m, n, 0)),
                         got = tref_f32_raw(d[t * in.m * in.n + m * in.n + n]);
                cr_assert_eq(got, want, "%s staged on %s: tile %u D[%u][%u] = 0x%08x, want 0x%08x", in.name,
                             target ? target : "the interpreter", t, m, n, got, want);
            }
    hcq_kernel_destroy(k);
    free(a), free(b), free(c), free(d);
}

Test(ir_mma, staged_through_local_memory_with_each_warp_under_its_own_branch)
{
    staged_check(NULL, HCQ_MMA_NV_M16N8K16_F16, 11);
    staged_check(NULL, HCQ_MMA_MFMA_32X32X8_F16, 12);
    tu_need_clang();
    staged_check("sm_80", HCQ_MMA_NV_M16N8K16_BF16, 13);
    staged_check("hip", HCQ_MMA_WMMA_F16_W32, 14);
    staged_check("hip", HCQ_MMA_MFMA_16X16X16_F16, 15);
}

/* a twin refuses a partial warp at its rendezvous, naming the lanes, and a group that is not whole warps */
Test(ir_mma, a_twin_refuses_a_partial_warp)
{
    tu_need_clang();
    static uint16_t a[16 * 16 * 2], b[16 * 8 * 2];
    static float c[16 * 8 * 2], d[16 * 8 * 2];
    for (int gated = 1; gated >= 0; gated--) {
        hcq_kernel *k = tref_mma_kernel_gated(HCQ_MMA_NV_M16N8K16_F16, 1, 1, gated);
        tu_args args;
        tu_args_init(&args, k);
        tu_arg_ptr(&args, 0, a), tu_arg_ptr(&args, 1, b), tu_arg_ptr(&args, 2, c), tu_arg_ptr(&args, 3, d);
        hcq_interp_launch l = {.kernargs = args.buf, .kernarg_size = args.size, .num_groups = {1, 1, 1},
                               .local_size = {gated ? 32 : 48, 1, 1}};
        cr_assert_eq(cc_twin_run(k, "sm_80", &l), HCQ_EFAULT);
        if (gated)
            cr_assert(strstr(hcq_error_message(), "only lanes 0x0000ffff of the warp of work-items 0..31 reach a "
                                                  "warp-collective operation (mma)"), "%s", hcq_error_message());
        else
            cr_assert(strstr(hcq_error_message(), "on warps of 32 work-items, but the work-group has 48"), "%s",
                      hcq_error_message());
        hcq_kernel_destroy(k);
    }
}

Test(ir_mma, a_partial_warp_and_a_group_not_of_whole_warps_are_refused)
{
    hcq_kernel *k = tref_mma_kernel_gated(HCQ_MMA_NV_M16N8K16_F16, 1, 1, true);
    T_OK(hcq_kernel_verify(k));
    static uint16_t a[16 * 16], b[16 * 8];
    static float c[16 * 8], d[16 * 8];
    tu_args args;
    tu_args_init(&args, k);
    tu_arg_ptr(&args, 0, a), tu_arg_ptr(&args, 1, b), tu_arg_ptr(&args, 2, c), tu_arg_ptr(&args, 3, d);
    cr_assert_eq(tu_interp_status(k, &args, TU_DIMS1(1, 32)), HCQ_EFAULT);
    cr_assert(strstr(hcq_error_message(), "mma nv_m16n8k16_f16): only lanes 0x0000ffff of the warp of work-items 0..31") &&
              strstr(hcq_error_message(), "one operation of the whole warp"), "%s", hcq_error_message());
    hcq_kernel_destroy(k);
    k = tref_mma_kernel(HCQ_MMA_NV_M16N8K16_F16, 1, 1);
    tu_args_init(&args, k);
    tu_arg_ptr(&args, 0, a), tu_arg_ptr(&args, 1, b), tu_arg_ptr(&args, 2, c), tu_arg_ptr(&args, 3, d);
    cr_assert_eq(tu_interp_status(k, &args, TU_DIMS1(1, 48)), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "runs on warps of 32 work-items, but the work-group of 48 x 1 x 1 = 48 is not a "
                                          "multiple of 32"), "%s", hcq_error_message());
    hcq_kernel_destroy(k);
}

Test(ir_mma, targets_list_their_kinds_and_refuse_the_others)
{
    hcq_mma_kind got[8];
    cr_assert_eq(hcq_target_mma_kinds("sm_90", got, 8), 2);
    cr_assert(got[0] == HCQ_MMA_NV_M16N8K16_F16 && got[1] == HCQ_MMA_NV_M16N8K16_BF16);
    cr_assert_eq(hcq_target_mma_kinds("mock-sm_80", got, 1), 2, "the count, though only one was written");
    cr_assert_eq(hcq_target_mma_kinds("gfx1100", got, 8), 2);
    cr_assert(got[0] == HCQ_MMA_WMMA_F16_W32 && got[1] == HCQ_MMA_WMMA_BF16_W32, "gfx1100 kernels are wave32");
    cr_assert_eq(hcq_target_mma_kinds("mock-gfx942", got, 8), 3);
    cr_assert_eq(hcq_target_mma_kinds("gfx90a", got, 8), 3);
    cr_assert(got[0] == HCQ_MMA_MFMA_16X16X16_F16);
    cr_assert_eq(hcq_target_mma_kinds("cpu", got, 8), 0);
    cr_assert_eq(hcq_target_mma_kinds("ir", got, 8), 0);
    cr_assert_eq(hcq_target_mma_kinds("no-such", got, 8), 0);
    cr_assert_eq(hcq_target_mma_kinds("gfx1201", got, 8), 0, "gfx12's WMMA has another layout, not a kind here");
    /* the cpu target refuses an MMA; a GPU target refuses a kind it lacks; ir runs any kind */
    hcq_kernel *k = one_mma(HCQ_MMA_WMMA_F16_W32);
    hcq_binary *bin = NULL;
    cr_assert_eq(hcq_compile(k, "cpu", &bin), HCQ_ENOTSUP);
    cr_assert(strstr(hcq_error_message(), "target cpu has no such matrix operation (it has none)"), "%s",
              hcq_error_message());
    cr_assert_eq(hcq_compile(k, "mock-sm_90", &bin), HCQ_ENOTSUP);
    cr_assert(strstr(hcq_error_message(), "(mma wmma_f16_w32): target mock-sm_90 has no such matrix operation (it has: "
                                          "nv_m16n8k16_f16, nv_m16n8k16_bf16)"), "%s", hcq_error_message());
    char *src = NULL;
    cr_assert_eq(hcq_render(k, "gfx942", &src), HCQ_ENOTSUP);
    T_OK(hcq_compile(k, "ir", &bin));
    hcq_binary_free(bin);
    T_OK(hcq_compile(k, "mock-gfx1100", &bin));
    hcq_binary_free(bin);
    hcq_kernel_destroy(k);
}

/* ** what the GPU compilers make of an mma: one tensor-core instruction of the kind per mma (nvdisasm on sm_90's
 * cubin, llvm-objdump-22 on the code objects; skipped, saying so, where a tool or compiler is missing) */
static char *run_tool(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    cr_assert(f, "cannot run %s", cmd);
    size_t cap = 1 << 16, n = 0, r;
    char *out = malloc(cap);
    while ((r = fread(out + n, 1, cap - 1 - n, f)) > 0)
        if ((n += r) == cap - 1) out = realloc(out, cap *= 2);
    out[n] = 0;
    pclose(f);
    return out;
}

static unsigned count(const char *text, const char *word)
{
    unsigned c = 0;
    for (const char *p = text; (p = strstr(p, word)); p += strlen(word)) c++;
    return c;
}

Test(ir_mma, each_kind_compiles_to_one_instruction_of_its_own)
{
    static const struct {
        hcq_mma_kind kind;
        const char *target, *insn;
    } want[] = {
        {HCQ_MMA_NV_M16N8K16_F16, "sm_90", "HMMA.16816.F32 "},
        {HCQ_MMA_NV_M16N8K16_BF16, "sm_80", "HMMA.16816.F32.BF16 "},
        {HCQ_MMA_WMMA_F16_W32, "gfx1100", "v_wmma_f32_16x16x16_f16 "},
        {HCQ_MMA_WMMA_BF16_W32, "gfx1100", "v_wmma_f32_16x16x16_bf16 "},
        {HCQ_MMA_MFMA_16X16X16_F16, "gfx942", "v_mfma_f32_16x16x16_f16 "},
        {HCQ_MMA_MFMA_32X32X8_F16, "gfx942", "v_mfma_f32_32x32x8_f16 "},
        {HCQ_MMA_MFMA_16X16X16_BF16, "gfx942", "v_mfma_f32_16x16x16_bf16 "},
        {HCQ_MMA_MFMA_16X16X16_F16, "gfx90a", "v_mfma_f32_16x16x16f16 "},
        {HCQ_MMA_MFMA_32X32X8_F16, "gfx90a", "v_mfma_f32_32x32x8f16 "},
        {HCQ_MMA_MFMA_16X16X16_BF16, "gfx90a", "v_mfma_f32_16x16x16bf16_1k "},
    };
    char why[256], file[128], cmd[1024];
    const char *nvdisasm = sass_nvdisasm(why, sizeof why);
    bool objdump = system("command -v llvm-objdump-22 >/dev/null 2>&1") == 0;
    unsigned ran = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        bool nv = !strncmp(want[i].target, "sm_", 3);
        if (nv ? !nvdisasm : !objdump) continue;
        /* test_api_mma's kernel (two chained MMAs), so the two suites share its binary in the kernel cache */
        hcq_kernel *k = tref_mma_kernel(want[i].kind, 2, 2);
        hcq_binary *bin = NULL;
        hcq_status st = hcq_compile(k, want[i].target, &bin);
        hcq_kernel_destroy(k);
        if (st == HCQ_ENODEV || st == HCQ_ENOTSUP) continue; /* no compiler for the target here */
        cr_assert_eq(st, HCQ_OK, "%s: %s", want[i].target, hcq_error_message());
        snprintf(file, sizeof file, "/tmp/hcq_ir_mma_%d_%s.bin", (int)getpid(), want[i].target);
        FILE *f = fopen(file, "wb");
        cr_assert(f && fwrite(bin->data, 1, bin->size, f) == bin->size && !fclose(f));
        hcq_binary_free(bin);
        if (nv) snprintf(cmd, sizeof cmd, "timeout 60 %s -c %s 2>&1", nvdisasm, file);
        else snprintf(cmd, sizeof cmd, "timeout 60 llvm-objdump-22 -d --mcpu=%s %s 2>&1", want[i].target, file);
        char *text = run_tool(cmd);
        unlink(file);
        unsigned n = count(text, want[i].insn), any = count(text, nv ? "HMMA" : "v_wmma") + count(text, "v_mfma");
        cr_assert(n >= 1 && n <= 2 && n == any, "%s on %s: want one %s per mma (the loop of two kept or unrolled), "
                  "and no other:\n%s", want_info[want[i].kind - 1].name, want[i].target, want[i].insn, text);
        free(text);
        ran++;
    }
    if (!ran) cr_skip_test("no GPU compiler with its disassembler here (nvdisasm: %s)", nvdisasm ? "yes" : why);
}
