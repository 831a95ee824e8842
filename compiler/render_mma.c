/* The GPU renderer's matrix multiply-accumulate (render_gpu.h; compiler.h
 * "Matrix multiply-accumulate"): one helper per kind a kernel uses,
 * hcq_mma_<kind>(A, B, C) on the fragments in value form (hcq_vf16x8 ...:
 * f16 and bf16 lanes held as float), called by the kernel body. Three
 * forms, by dialect:
 *   - CUDA: inline PTX mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.
 *     {f16,bf16}.f32 on packed 32-bit registers (element 2i in the low
 *     half of register i, as the PTX ISA's fragment tables give them);
 *   - HIP: clang's __builtin_amdgcn_wmma_f32_16x16x16_{f16,bf16}_w32/_w64
 *     and __builtin_amdgcn_mfma_f32_{16x16x16f16,32x32x8f16,
 *     16x16x16bf16_1k} on ext_vector_type vectors (the bf16 ones take the
 *     bits as shorts);
 *   - the host twins: the work-item publishes its fragments in the group's
 *     scratch (thread-local: a runner thread runs one group's fibers),
 *     waits at a warp rendezvous (the runtime's barrier call with
 *     CC_TWIN_WARP_SYNC: twin_run.c holds it until every lane of the warp
 *     is there, and faults when one never comes), gathers the warp's A, B
 *     and C by the kinds' table (lanes from the last to the first: the
 *     lowest lane's copy of a repeated element wins, as in the
 *     interpreter), computes its elements of D as cc_mma_dot does (one
 *     fmaf per k in order) and waits again, so no lane overwrites its
 *     scratch before the warp has read it. Bit-equal to the interpreter.
 * The inputs go to the hardware as bits (hcq_h2bits, hcq_b2bits: exact for
 * the values f16/bf16 lanes hold). */
#include "compiler/render_gpu.h"

#include "compiler/mma.h"
#include "compiler/render_expr.h"
#include "compiler/strbuf.h"
#include "compiler/twin_abi.h"

bool cc_mma_used(const hcq_kernel *k)
{
    for (uint32_t i = 0; i < k->nops; i++)
        if (k->ops[i].op == HCQ_OP_MMA) return true;
    return false;
}

static void signature(cc_sb *b, const cc_mma_kind *m)
{
    const hcq_mma_info *in = &m->info;
    char ta[16], tb[16], tc[16];
    cc_expr_vtag(ta, sizeof ta, in->ab, in->a_lanes);
    cc_expr_vtag(tb, sizeof tb, in->ab, in->b_lanes);
    cc_expr_vtag(tc, sizeof tc, in->acc, in->c_lanes);
    cc_sb_printf(b, "H hcq_v%s hcq_mma_%s(hcq_v%s a, hcq_v%s b, hcq_v%s c) {\n", tc, in->name, ta, tb, tc);
}

static void ptx(cc_sb *b, const cc_mma_kind *m)
{
    const hcq_mma_info *in = &m->info;
    const char *bits = in->ab == HCQ_BF16 ? "hcq_b2bits" : "hcq_h2bits", *t = in->ab == HCQ_BF16 ? "bf16" : "f16";
    signature(b, m);
    for (unsigned r = 0; r < in->a_lanes / 2; r++)
        cc_sb_printf(b, "  u32 a%u = (u32)%s(a.v[%u]) | (u32)%s(a.v[%u]) << 16;\n", r, bits, 2 * r, bits, 2 * r + 1);
    for (unsigned r = 0; r < in->b_lanes / 2; r++)
        cc_sb_printf(b, "  u32 b%u = (u32)%s(b.v[%u]) | (u32)%s(b.v[%u]) << 16;\n", r, bits, 2 * r, bits, 2 * r + 1);
    cc_sb_printf(b, "  hcq_vf32x4 d;\n");
    cc_sb_printf(b, "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%%0,%%1,%%2,%%3}, "
                    "{%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%10,%%11,%%12,%%13};\"\n", t, t);
    cc_sb_printf(b, "      : \"=f\"(d.v[0]), \"=f\"(d.v[1]), \"=f\"(d.v[2]), \"=f\"(d.v[3])\n"
                    "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1),\n"
                    "        \"f\"(c.v[0]), \"f\"(c.v[1]), \"f\"(c.v[2]), \"f\"(c.v[3]));\n");
    cc_sb_printf(b, "  return d;\n}\n");
}

/* the builtin of each AMD kind */
static const char *amdgcn_builtin(hcq_mma_kind kind)
{
    switch (kind) {
    case HCQ_MMA_WMMA_F16_W32: return "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32";
    case HCQ_MMA_WMMA_BF16_W32: return "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32";
    case HCQ_MMA_WMMA_F16_W64: return "__builtin_amdgcn_wmma_f32_16x16x16_f16_w64";
    case HCQ_MMA_WMMA_BF16_W64: return "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w64";
    case HCQ_MMA_MFMA_16X16X16_F16: return "__builtin_amdgcn_mfma_f32_16x16x16f16";
    case HCQ_MMA_MFMA_32X32X8_F16: return "__builtin_amdgcn_mfma_f32_32x32x8f16";
    case HCQ_MMA_MFMA_16X16X16_BF16: return "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k";
    default: return NULL;
    }
}

static void amdgcn(cc_sb *b, hcq_mma_kind kind, const cc_mma_kind *m)
{
    const hcq_mma_info *in = &m->info;
    bool bf16 = in->ab == HCQ_BF16, mfma = in->warp == 64 && in->a_lanes == 4;
    const char *et = bf16 ? "short" : "_Float16", *bits = bf16 ? "hcq_b2bits" : "hcq_h2bits";
    signature(b, m);
    cc_sb_printf(b, "  typedef %s ab_t __attribute__((ext_vector_type(%u)));\n", et, in->a_lanes);
    cc_sb_printf(b, "  typedef float c_t __attribute__((ext_vector_type(%u)));\n", in->c_lanes);
    cc_sb_printf(b, "  ab_t A, B;\n  c_t C;\n");
    cc_sb_printf(b, "  for (int i = 0; i < %u; i++) A[i] = __builtin_bit_cast(%s, %s(a.v[i])), "
                    "B[i] = __builtin_bit_cast(%s, %s(b.v[i]));\n", in->a_lanes, et, bits, et, bits);
    cc_sb_printf(b, "  for (int i = 0; i < %u; i++) C[i] = c.v[i];\n", in->c_lanes);
    cc_sb_printf(b, "  c_t D = %s(A, B, C%s);\n", amdgcn_builtin(kind), mfma ? ", 0, 0, 0" : "");
    cc_sb_printf(b, "  hcq_vf32x%u d;\n  for (int i = 0; i < %u; i++) d.v[i] = D[i];\n  return d;\n}\n", in->c_lanes,
                 in->c_lanes);
}

/* one fragment coordinate of the kinds' table as an expression of l and e */
static void coord(cc_sb *b, const cc_mma_term *t)
{
    bool any = false;
    for (unsigned i = 0; i < CC_MMA_TERMS && t[i].src; i++, any = true)
        cc_sb_printf(b, "%s((%s >> %u) & %uu) * %uu", any ? " + " : "", t[i].src == CC_MMA_LANE ? "l" : "e",
                     t[i].shift, (1u << t[i].width) - 1, t[i].scale);
    if (!any) cc_sb_printf(b, "0u");
}

static void host(cc_sb *b, const cc_mma_kind *m)
{
    const hcq_mma_info *in = &m->info;
    signature(b, m);
    unsigned lanes[3] = {in->a_lanes, in->b_lanes, in->c_lanes};
    cc_sb_printf(b, "  const u32 W = %uu, me = hcq_mma_lane_id(), base = me - me %% W;\n", in->warp);
    cc_sb_printf(b, "  float *s = hcq_mma_scratch[me];\n");
    cc_sb_printf(b, "  for (u32 e = 0; e < %uu; e++) s[e] = a.v[e];\n", in->a_lanes);
    cc_sb_printf(b, "  for (u32 e = 0; e < %uu; e++) s[16 + e] = b.v[e];\n", in->b_lanes);
    cc_sb_printf(b, "  for (u32 e = 0; e < %uu; e++) s[32 + e] = c.v[e];\n", in->c_lanes);
    cc_sb_printf(b, "  hcq_mma_sync(W);\n");
    cc_sb_printf(b, "  float A[%u][%u], B[%u][%u], C[%u][%u];\n", in->m, in->k, in->k, in->n, in->m, in->n);
    cc_sb_printf(b, "  for (u32 l = W; l-- > 0;) {\n    const float *t = hcq_mma_scratch[base + l];\n");
    static const char *const mat[3] = {"A", "B", "C"};
    for (unsigned op = 0; op < 3; op++) {
        cc_sb_printf(b, "    for (u32 e = 0; e < %uu; e++) %s[", lanes[op], mat[op]);
        coord(b, m->frag[op].row);
        cc_sb_printf(b, "][");
        coord(b, m->frag[op].col);
        cc_sb_printf(b, "] = t[%u + e];\n", 16 * op);
    }
    cc_sb_printf(b, "  }\n  hcq_v%s d;\n  const u32 l = me %% W;\n", in->c_lanes == 4 ? "f32x4" : in->c_lanes == 8 ? "f32x8" : "f32x16");
    cc_sb_printf(b, "  for (u32 e = 0; e < %uu; e++) {\n    const u32 r = ", in->c_lanes);
    coord(b, m->frag[2].row);
    cc_sb_printf(b, ", q = ");
    coord(b, m->frag[2].col);
    cc_sb_printf(b, ";\n    float x = C[r][q];\n");
    cc_sb_printf(b, "    for (u32 k = 0; k < %uu; k++) x = HCQ_FMAF(A[r][k], B[k][q], x);\n    d.v[e] = x;\n  }\n",
                 in->k);
    cc_sb_printf(b, "  hcq_mma_sync(W);\n  return d;\n}\n");
}

void cc_mma_defs(cc_sb *b, const hcq_kernel *k, cc_mma_style style)
{
    bool done[HCQ_MMA_KINDS] = {false};
    if (style == CC_MMA_HOST) {
        /* A, B and C of each work-item of the group at 0, 16 and 32 */
        cc_sb_printf(b, "static thread_local float hcq_mma_scratch[1024][48];\n");
        cc_sb_printf(b, "H u32 hcq_mma_lane_id(void) {\n  return (u32)(HCQ_LID_X + HCQ_LSIZE_X * (HCQ_LID_Y + HCQ_LSIZE_Y * "
                        "HCQ_LID_Z));\n}\n");
        cc_sb_printf(b, "H void hcq_mma_sync(u32 w) {\n  const hcq_twin_group *g = hcq_item->grp;\n"
                        "  g->rt->barrier(g->ctx, 0x%xu | w);\n}\n", CC_TWIN_WARP_SYNC);
    }
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op != HCQ_OP_MMA || done[o->arg]) continue;
        done[o->arg] = true;
        const cc_mma_kind *m = cc_mma_kind_of((unsigned)o->arg);
        if (style == CC_MMA_PTX) ptx(b, m);
        else if (style == CC_MMA_AMDGCN) amdgcn(b, (hcq_mma_kind)o->arg, m);
        else host(b, m);
    }
}
