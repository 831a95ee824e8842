/* Tensor cores (the `tc` choice): a matmul-like kernel's main reduction as
 * the IR's matrix multiply-accumulate (HCQ_OP_MMA, include/hcq/compiler.h).
 *
 * What qualifies (tt_tc_space): a GPU target with a kind for the product's
 * input dtype (hcq_target_mma_kinds, best first: the first whose inputs
 * are the product's), a main reduction that smem.c could stage (a sum of
 * products reached from the root through elementwise ops and reshapes, no
 * variable dim), f32 products of f16 or bf16 values widened exactly (what
 * hcq_matmul and hcq_conv2d make of halfs: the cast under views, so the
 * narrow value is recovered exactly), and two output dims dm, dn with one
 * factor (A) independent of dn and the other (B) of dm; the other output
 * dims are a batch, the reduced axes (row-major) are k.
 *
 * The plan: each warp (hcq_mma_info's warp: work-items lid / warp of a
 * group) owns bm x bn MMA blocks, a TM = bm*m by TN = bn*n tile of
 * (dm, dn) outputs; a group is wm x wn warps (wn = L / warp / wm),
 * GM = wm*TM by GN = wn*TN; groups walk dn fastest, then dm, then the
 * batch dims. Per step of the kind's k, each work-item loads its A and B
 * fragment lanes from the factors at their hcq_ir_mma_coord positions
 * (rows, columns and k past the edges clamped to the last, the load gated
 * off and the lane 0: so 0 x inf never happens at a stored output, and a
 * padded k adds 0 x 0), and runs bm x bn MMAs into f32 accumulator
 * fragments. The MMA model sums each product with one fused multiply-add
 * in k order from +0, as the scalar plan's loop does (fma of the f32-cast
 * inputs: em_reduce's mulacc), so a tc kernel's values are the plain and
 * smem plans' bit for bit on the mock GPUs. The D lanes are the outputs at
 * their coordinates: the rest of the kernel (the cast to f16, a bias, an
 * activation) is emitted at those indexes and stored gated to the edges.
 *
 * Staged (tc.smem(sk)): per slice of sk k-steps the group copies its GM
 * rows of A and GN columns of B (0 past the edges) to local memory, a
 * barrier, the warps load their fragments from there (each element read
 * from memory once per group instead of once per warp), a barrier. The
 * fragments hold the same values, so the bits are the same. */
#include "tensor/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir_float.h"

#define NONE HCQ_IR_NONE
#define MAX_ACC 64 /* f32 accumulator lanes per work-item (bm x bn x c_lanes) */
#define TC_PAD 8   /* staged rows are 8 elements (16 bytes) longer: apart in the banks, still aligned */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* tc.smem: the local memory of a group's slice, GM x (BK + pad) of A and
 * BK x (GN + pad) of B, and the copies each work-item makes of it */
static uint64_t staged_bytes(int64_t gm, int64_t gn, int64_t bk, size_t es)
{
    return (uint64_t)(gm * (bk + TC_PAD) + bk * (gn + TC_PAD)) * es;
}
static int64_t staged_copies(int64_t gm, int64_t gn, int64_t bk, int64_t local) { return cdiv(gm * bk, local) + cdiv(bk * gn, local); }

/* ** what qualifies */

/* f, through views, is the f32 cast of an f16 or bf16 value: that dtype
 * (HCQ_VOID: it is not, or a masked view above the cast pads with a value
 * the narrow dtype does not hold exactly) */
static hcq_dtype half_source(const tt_node *f)
{
    float pads[16];
    int np = 0;
    for (int depth = 0; depth < 64; depth++) {
        if (f->op == TT_VIEW) {
            if (f->view.mask) {
                if (np == 16) return HCQ_VOID;
                pads[np++] = (float)f->cv.f;
            }
            f = f->src[0];
            continue;
        }
        if (f->op != TT_CAST || f->dtype != HCQ_F32) return HCQ_VOID;
        hcq_dtype dt = (hcq_dtype)f->src[0]->dtype;
        if (dt != HCQ_F16 && dt != HCQ_BF16) return HCQ_VOID;
        for (int i = 0; i < np; i++) {
            float back = dt == HCQ_F16 ? ir_f16_to_f32(ir_f32_to_f16(pads[i])) : ir_bf16_to_f32(ir_f32_to_bf16(pads[i]));
            if (memcmp(&back, &pads[i], sizeof back)) return HCQ_VOID;
        }
        return dt;
    }
    return HCQ_VOID;
}

#define WHY(st, ...) (sp->tc_st = (st), snprintf(sp->tc_why, sizeof sp->tc_why, __VA_ARGS__))

/* Whether the target's compiler writes kind's MMA: a one-MMA kernel
 * rendered (no compile: cheap), once per context and kind (a renderer
 * may not write every kind the target's hardware has, and a plan must not
 * be chosen that cannot be built); its refusal in why. */
static bool writes_mma(tt_lw *L, hcq_mma_kind kind, char *why, size_t wn)
{
    if ((unsigned)kind >= HCQ_MMA_KINDS) return false;
    if (L->tc_writes[kind]) return L->tc_writes[kind] > 0;
    hcq_mma_info in;
    hcq_kernel *k = hcq_kernel_create("tc_probe");
    bool ok = false;
    if (k && !hcq_mma_info_get(kind, &in)) {
        hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32);
        hcq_ir_ref ab = hcq_ir_const_float(k, in.ab, 1.0), zero = hcq_ir_const_float(k, HCQ_F32, 0.0);
        hcq_ir_ref d = hcq_ir_mma(k, kind, hcq_ir_vsplat(k, ab, in.a_lanes), hcq_ir_vsplat(k, ab, in.b_lanes), hcq_ir_vsplat(k, zero, in.c_lanes));
        hcq_ir_store(k, out, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), hcq_ir_vget(k, d, 0));
        char *src = NULL;
        ok = hcq_render(k, L->ctx->props.target, &src) == HCQ_OK;
        free(src);
    }
    if (!ok) snprintf(why, wn, "%s", hcq_error_message());
    hcq_kernel_destroy(k);
    L->tc_writes[kind] = ok ? 1 : -1;
    return ok;
}

void tt_tc_space(tt_lw *L, tt_node *root, tt_space *sp)
{
    const char *target = L->ctx->props.target;
    sp->tc_kind = HCQ_MMA_NONE;
    sp->tc_dm = sp->tc_dn = -1;
    hcq_mma_kind kinds[HCQ_MMA_KINDS];
    unsigned nk = hcq_target_mma_kinds(target, kinds, HCQ_MMA_KINDS);
    if (nk > HCQ_MMA_KINDS) nk = HCQ_MMA_KINDS;
    if (!nk) {
        WHY(HCQ_ENOTSUP, "the %s target has no matrix-multiply-accumulate units", target);
        return;
    }
    if (sp->smem_why) {
        WHY(HCQ_EINVAL, "%s", sp->smem_why);
        return;
    }
    for (int d = 0; d < sp->ndim; d++)
        if (sp->sym[d]) {
            WHY(HCQ_EINVAL, "the output has a variable dim (%d): the warp tiles are fixed at lowering", d);
            return;
        }
    tt_node *R = L->plan.main, *src = R->src[0];
    hcq_dtype h0 = half_source(src->src[0]), h1 = half_source(src->src[1]);
    if (R->dtype != HCQ_F32 || src->dtype != HCQ_F32 || h0 == HCQ_VOID || h0 != h1) {
        WHY(HCQ_EINVAL, "the product is not of f16 or bf16 values (both alike) widened to f32, as matmul and conv2d make of halfs "
                        "(a %s sum of %s products)",
            hcq_dtype_name((hcq_dtype)R->dtype), hcq_dtype_name((hcq_dtype)src->dtype));
        return;
    }
    char why[128] = "";
    bool some = false;
    for (unsigned i = 0; i < nk && sp->tc_nkinds < 4; i++) {
        hcq_mma_info in;
        if (hcq_mma_info_get(kinds[i], &in) || in.ab != h0) continue;
        some = true;
        if (writes_mma(L, kinds[i], why, sizeof why)) sp->tc_kinds[sp->tc_nkinds++] = kinds[i];
    }
    if (!some) {
        WHY(HCQ_ENOTSUP, "the %s target has no matrix-multiply-accumulate kind for %s inputs", target, hcq_dtype_name(h0));
        return;
    }
    if (!sp->tc_nkinds) {
        WHY(HCQ_ENOTSUP, "the %s compiler cannot write its MMA (%s)", target, why);
        return;
    }
    sp->tc_kind = sp->tc_kinds[0];
    /* default dims: dn the last output dim one factor moves with and the
     * other not, dm the last the other moves with (a matmul's M and N; a
     * convolution's output channels and columns) */
    for (int dn = sp->ndim - 1; dn >= 0 && sp->tc_dm < 0; dn--)
        for (int dm = sp->ndim - 1; dm >= 0 && sp->tc_dm < 0; dm--) {
            if (dm == dn || sp->shape[dm] < 2 || sp->shape[dn] < 2) continue;
            int a = tt_smem_rows_factor(sp, dm, dn);
            if (a >= 0 && (sp->dep[a] & (1u << dm)) && (sp->dep[1 - a] & (1u << dn))) {
                sp->tc_dm = dm;
                sp->tc_dn = dn;
            }
        }
    if (sp->tc_dm < 0) {
        sp->tc_kind = HCQ_MMA_NONE;
        sp->tc_nkinds = 0;
        WHY(HCQ_EINVAL, "no two output dims (of at least 2) where each factor of the product moves with one and not the other");
    }
    (void)root;
}

/* ** the rules of a list, and the default */

/* work-items of the plan (every work-item of every group runs) */
static uint64_t tc_items(const tt_space *sp, const tt_plan *P, const hcq_mma_info *in)
{
    int64_t wn = P->L / in->warp / P->tc.wm, gm = P->tc.wm * P->tc.bm * in->m, gn = wn * P->tc.bn * in->n;
    uint64_t groups = (uint64_t)((sp->shape[P->tc.dm] + gm - 1) / gm) * (uint64_t)((sp->shape[P->tc.dn] + gn - 1) / gn);
    for (int d = 0; d < sp->ndim; d++)
        if (d != P->tc.dm && d != P->tc.dn) groups *= (uint64_t)sp->shape[d];
    return groups * P->L;
}

#define REFUSE(st, ...) return base_err((st), "kernel plan: " __VA_ARGS__)

hcq_status tt_tc_rules(const tt_space *sp, tt_plan *P, int64_t local)
{
    if (!sp->tc_kind) REFUSE(sp->tc_st ? sp->tc_st : HCQ_EINVAL, "tc: %s", sp->tc_why);
    if (P->tc.ki < 0 || (uint64_t)P->tc.ki >= sp->tc_nkinds)
        REFUSE(HCQ_EINVAL, "tc.kind(%lld): the target writes %u kinds for the product's inputs (0 to %u)", (long long)P->tc.ki, sp->tc_nkinds,
               sp->tc_nkinds - 1);
    hcq_mma_info in;
    hcq_status st = hcq_mma_info_get(sp->tc_kinds[P->tc.ki], &in);
    if (st) return st;
    int dm = P->tc.dm, dn = P->tc.dn;
    if (dm < 0 || dm >= sp->ndim || dn < 0 || dn >= sp->ndim || dm == dn)
        REFUSE(HCQ_EINVAL, "tc.m(d%d) and tc.n(d%d): two different dims of the output's %d", dm, dn, sp->ndim);
    if (tt_smem_rows_factor(sp, dm, dn) < 0)
        REFUSE(HCQ_EINVAL, "tc.m(d%d) and tc.n(d%d): neither factor of the product is independent of dim %d while the other is of dim %d",
               dm, dn, dn, dm);
    if (P->tc.bm < 1 || P->tc.bn < 1 || P->tc.bm > 8 || P->tc.bn > 8)
        REFUSE(HCQ_EINVAL, "tc.m(d%d,%lld) and tc.n(d%d,%lld): 1 to 8 blocks per warp each way", dm, (long long)P->tc.bm, dn,
               (long long)P->tc.bn);
    if ((uint64_t)(P->tc.bm * P->tc.bn) * in.c_lanes > MAX_ACC)
        REFUSE(HCQ_EINVAL, "tc: %lld x %lld blocks of %s are %llu accumulators per work-item, at most %d", (long long)P->tc.bm,
               (long long)P->tc.bn, in.name, (unsigned long long)(P->tc.bm * P->tc.bn) * in.c_lanes, MAX_ACC);
    if (P->tc.wm < 1 || !local || local % ((int64_t)in.warp * P->tc.wm))
        REFUSE(HCQ_EINVAL, "tc.wm(%lld) with local(%lld): local must be a multiple of tc.wm's warps of %u (%s)", (long long)P->tc.wm,
               (long long)local, in.warp, in.name);
    if (P->tc.sk < 0 || P->tc.sk > 8) REFUSE(HCQ_EINVAL, "tc.smem(%lld): slices of 0 (not staged) to 8 k-steps", (long long)P->tc.sk);
    if (P->tc.sk) {
        int64_t gm = P->tc.wm * P->tc.bm * in.m, gn = local / in.warp / P->tc.wm * P->tc.bn * in.n, bk = P->tc.sk * in.k;
        uint64_t bytes = staged_bytes(gm, gn, bk, hcq_dtype_size(in.ab));
        if (bytes > sp->max_local_bytes)
            REFUSE(HCQ_EINVAL, "tc.smem(%lld): a %lld x %lld group tile's slice is %llu bytes of local memory, the device has %u",
                   (long long)P->tc.sk, (long long)gm, (long long)gn, (unsigned long long)bytes, sp->max_local_bytes);
        if (staged_copies(gm, gn, bk, local) > 64)
            REFUSE(HCQ_EINVAL, "tc.smem(%lld): %lld copies per work-item per slice, at most 64", (long long)P->tc.sk,
                   (long long)staged_copies(gm, gn, bk, local));
    }
    P->tc.kind = sp->tc_kinds[P->tc.ki];
    P->L = (uint32_t)local;
    P->items = tc_items(sp, P, &in);
    return HCQ_OK;
}

/* GPU default: an MMA-sized product or larger (M, N and K each at least
 * the kind's m, n and k: smaller, most of every MMA would multiply the
 * zeros past an edge, and the scalar tile does as well). A warp takes a
 * tile of about 32 x 32 outputs (bm x bn blocks: 2 x 4 of NVIDIA's
 * 16 x 8, 2 x 2 of a 16 x 16 kind, one of MFMA's 32 x 32; fewer where the
 * output is smaller), a group 2 x 2 warps (fewer along a dim the output
 * does not fill), then fewer warps per group while the groups would leave
 * compute units idle. A real GPU's best is the search's to find (HCQ_BEAM
 * proposes other blocks and warps). */
bool tt_tc_default(tt_lw *L, tt_plan *P, const int64_t *S, uint64_t rsize, uint32_t maxl)
{
    const tt_space *sp = &L->space;
    hcq_mma_info in;
    if (sp->cpu || !sp->tc_kind || hcq_mma_info_get(sp->tc_kind, &in)) return false;
    int dm = sp->tc_dm, dn = sp->tc_dn;
    if (S[dm] < in.m || S[dn] < in.n || rsize < in.k) return false;
    int64_t bm = 32 / in.m ? 32 / in.m : 1, bn = 32 / in.n ? 32 / in.n : 1;
    if (bm > cdiv(S[dm], in.m)) bm = cdiv(S[dm], in.m);
    if (bn > cdiv(S[dn], in.n)) bn = cdiv(S[dn], in.n);
    int64_t wm = cdiv(S[dm], bm * in.m) < 2 ? 1 : 2, wn = cdiv(S[dn], bn * in.n) < 2 ? 1 : 2;
    uint64_t cus = L->ctx->props.compute_units ? L->ctx->props.compute_units : 1, other = 1;
    for (int d = 0; d < sp->ndim; d++)
        if (d != dm && d != dn) other *= (uint64_t)S[d];
    for (;;) {
        uint64_t groups = (uint64_t)cdiv(S[dm], wm * bm * in.m) * (uint64_t)cdiv(S[dn], wn * bn * in.n) * other;
        if ((uint64_t)(wm * wn) * in.warp <= maxl && (groups >= cus || wm * wn == 1)) break;
        if (wm >= wn) wm = wm > 1 ? wm / 2 : wm;
        else wn /= 2;
        if (wm * wn == 1 && in.warp > maxl) return false;
    }
    tt_plan T = *P;
    T.up_dim[0] = T.up_dim[1] = -1;
    T.up[0] = T.up[1] = 1;
    T.ragged = false;
    T.red_up = 1;
    T.cblock = 0;
    T.smem_bk = 0;
    T.smem_gv = 0;
    T.group = false;
    T.tc.dm = dm;
    T.tc.dn = dn;
    T.tc.bm = bm;
    T.tc.bn = bn;
    T.tc.wm = wm;
    T.tc.kind = sp->tc_kind;
    T.tc.ki = 0;
    T.L = (uint32_t)(wm * wn * in.warp);
    /* several warps: each slice of A and B read once per group (staged)
     * instead of once per warp, where it fits */
    int64_t gm = wm * bm * in.m, gn = wn * bn * in.n;
    T.tc.sk = wm * wn > 1 && staged_bytes(gm, gn, in.k, hcq_dtype_size(in.ab)) <= sp->max_local_bytes &&
                      staged_copies(gm, gn, in.k, T.L) <= 64
                  ? 1
                  : 0;
    T.items = tc_items(sp, &T, &in);
    *P = T;
    return true;
}

/* ** the lowering */

/* i32 const */
static hcq_ir_ref i32c(tt_lw *L, int64_t v) { return tt_irb_int(&L->b, HCQ_I32, v); }

/* x (an index of dim size n) clamped to n - 1 where it may pass it, *ok
 * the condition it does not (NONE: never) */
static const tt_sx *clamp(tt_lw *L, const tt_sx *x, int64_t n, hcq_ir_ref *ok)
{
    *ok = NONE;
    if (!x || x->hi < n) return x;
    tt_irb *b = &L->b;
    hcq_ir_ref raw = tt_em_sx(L, x);
    *ok = tt_irb_binary(b, HCQ_OP_CMPLT, raw, i32c(L, n));
    return tt_sx_var(&L->sym, 0, n - 1, tt_irb_where(b, *ok, raw, i32c(L, n - 1)));
}

/* the (row, col) of fragment lane e of operand op for the work-item's lane,
 * as index expressions over [0, rows) x [0, cols) */
static void coord(tt_lw *L, unsigned op, unsigned e, int64_t rows, int64_t cols, const tt_sx **r, const tt_sx **c)
{
    hcq_ir_ref from = hcq_kernel_op_count(L->b.k), ir = NONE, ic = NONE;
    hcq_status st = hcq_ir_mma_coord(L->b.k, L->plan.tc.kind, op, L->tc.lane, e, &ir, &ic);
    tt_irb_adopt(&L->b, from);
    if (st && !L->err) L->err = st;
    *r = tt_sx_var(&L->sym, 0, rows - 1, ir);
    *c = tt_sx_var(&L->sym, 0, cols - 1, ic);
}

hcq_status tt_tc_lower(tt_lw *L, tt_node *const *roots, uint32_t nroots, uint64_t grid)
{
    tt_irb *b = &L->b;
    const tt_plan *P = &L->plan;
    tt_node *root = roots[0];
    hcq_mma_info in;
    hcq_status s = hcq_mma_info_get(P->tc.kind, &in);
    if (s) return s;
    int nd = root->ndim, dm = P->tc.dm, dn = P->tc.dn;
    const int64_t *S = root->shape;
    int64_t warp = in.warp, wm = P->tc.wm, wn = P->L / warp / wm, tm = P->tc.bm * in.m, tn = P->tc.bn * in.n;
    int64_t gm = wm * tm, gn = wn * tn, nbm = cdiv(S[dm], gm), nbn = cdiv(S[dn], gn);
    hcq_ir_ref gx = tt_irb_special(b, HCQ_SPECIAL_GROUP_ID, 0), lx = tt_irb_special(b, HCQ_SPECIAL_LOCAL_ID, 0);
    tt_sym *y = &L->sym;
    const tt_sx *gs = tt_sx_var(y, 0, (int64_t)grid - 1, gx), *ls = tt_sx_var(y, 0, (int64_t)P->L - 1, lx);
    const tt_sx *w = tt_sx_div(y, ls, warp), *wr = tt_sx_div(y, w, wn), *wc = tt_sx_mod(y, w, wn);
    const tt_sx *bc = tt_sx_mod(y, gs, nbn), *br = tt_sx_mod(y, tt_sx_div(y, gs, nbn), nbm);
    L->tc.root = root;
    L->tc.lane = tt_em_sx(L, tt_sx_mod(y, ls, warp));
    L->tc.lid = ls;
    L->tc.grow0 = tt_sx_mulc(y, br, gm);
    L->tc.gcol0 = tt_sx_mulc(y, bc, gn);
    L->tc.wrow = tt_sx_mulc(y, wr, tm);
    L->tc.wcol = tt_sx_mulc(y, wc, tn);
    L->tc.row0 = tt_sx_add(y, L->tc.grow0, L->tc.wrow);
    L->tc.col0 = tt_sx_add(y, L->tc.gcol0, L->tc.wcol);
    int64_t st = nbm * nbn;
    for (int d = nd - 1; d >= 0; d--) {
        L->tc.base[d] = tt_sx_const(y, 0);
        if (d == dm || d == dn || S[d] == 1) continue;
        L->tc.base[d] = tt_sx_mod(y, tt_sx_div(y, gs, st), S[d]);
        st *= S[d];
    }
    /* the D fragments' outputs: block (i, j), lane e at l = (i*bn + j)*c + e */
    int64_t nc = in.c_lanes, nl = P->tc.bm * P->tc.bn * nc;
    tt_lane *lanes = calloc((size_t)nl, sizeof *lanes);
    hcq_ir_ref *vals = calloc((size_t)nl * (nroots + 1), sizeof *vals), *sgate = vals + (size_t)nl * nroots;
    const tt_sx **cr = calloc((size_t)nc * 2, sizeof *cr), **cc = cr + nc;
    if (!lanes || !vals || !cr) {
        free(lanes);
        free(vals);
        free(cr);
        return base_err(HCQ_ENOMEM, "lowering: out of memory");
    }
    for (int64_t e = 0; e < nc; e++) coord(L, 2, (unsigned)e, in.m, in.n, &cr[e], &cc[e]);
    for (int64_t i = 0; i < P->tc.bm; i++)
        for (int64_t j = 0; j < P->tc.bn; j++)
            for (int64_t e = 0; e < nc; e++) {
                tt_lane *l = &lanes[(i * P->tc.bn + j) * nc + e];
                hcq_ir_ref okm, okn;
                memcpy(l->idx, L->tc.base, sizeof l->idx);
                l->idx[dm] = clamp(L, tt_sx_add(y, tt_sx_addc(y, L->tc.row0, i * in.m), cr[e]), S[dm], &okm);
                l->idx[dn] = clamp(L, tt_sx_add(y, tt_sx_addc(y, L->tc.col0, j * in.n), cc[e]), S[dn], &okn);
                l->gate = NONE; /* (clamped: every value is computed; the stores are gated) */
                sgate[l - lanes] = tt_irb_and(b, okm, okn);
            }
    L->tc.tile = lanes;
    if (hcq_debug_level() >= 1)
        base_log(1, "%s: tc: %s, warp tile %lld x %lld (d%d x d%d), group %lld x %lld of %lld work-items, k %u of %llu",
                 L->ctx->props.id, in.name, (long long)tm, (long long)tn, dm, dn, (long long)gm, (long long)gn, (long long)P->L, in.k,
                 (unsigned long long)L->space.rsize);
    for (uint32_t r = 0; r < nroots; r++) tt_em(L, roots[r], (int)nl, lanes, vals + (size_t)r * nl);
    for (int64_t l = 0; l < nl && !L->err; l++) {
        hcq_ir_ref idx = tt_em_sx(L, tt_mem_linear(L, root, lanes[l].idx));
        for (uint32_t r = 0; r < nroots; r++)
            tt_irb_store(b, L->pref[r], idx, tt_irb_cast(b, (hcq_dtype)roots[r]->dtype, vals[(size_t)r * nl + l]), sgate[l]);
    }
    L->tc.tile = NULL;
    free(lanes);
    free(vals);
    free(cr);
    return HCQ_OK;
}

/* The reduction's shape, for loading its factors at (m or n, k). */
typedef struct kax {
    tt_node *R;
    int na, axes[TT_MAX_DIMS];
    int64_t rtot;
} kax;

/* Factor f's values (0 = A: index mn[i] along dm; 1 = B: along dn) at
 * reduced index kk[i], gated also by eg[i] (NONE: no gate), in the input
 * dtype (exact: the factor is a widened half), 0 past the edges or the
 * gate: indexes past an edge are clamped to the last and the load gated
 * off. */
static void factor_values(tt_lw *L, const kax *K, tt_node *fac, const hcq_mma_info *in, int f, int n, const tt_sx *const *mn,
                          const tt_sx *const *kk, const hcq_ir_ref *eg, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    tt_sym *y = &L->sym;
    const tt_plan *P = &L->plan;
    const tt_node *root = L->tc.root, *R = K->R;
    int dm = f ? P->tc.dn : P->tc.dm, dz = f ? P->tc.dm : P->tc.dn; /* the dim it moves with, the one it does not */
    tt_lane *st = calloc((size_t)n, sizeof *st);
    hcq_ir_ref *v = calloc((size_t)n, sizeof *v);
    if (!st || !v) {
        if (!L->err) L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        for (int i = 0; i < n; i++) out[i] = NONE;
        free(st);
        free(v);
        return;
    }
    for (int i = 0; i < n; i++) {
        const tt_sx *at[TT_MAX_DIMS];
        hcq_ir_ref okm, okk;
        memcpy(at, L->tc.base, sizeof at);
        at[dz] = tt_sx_const(y, 0);
        at[dm] = clamp(L, mn[i], root->shape[dm], &okm);
        const tt_sx *k = clamp(L, kk[i], K->rtot, &okk);
        tt_decompose(L, tt_linear(L, at, root->shape, root->ndim), R->shape, R->ndim, st[i].idx);
        int64_t sz = 1;
        for (int x = K->na - 1; x >= 0; x--) {
            int64_t size = R->src[0]->shape[K->axes[x]];
            st[i].idx[K->axes[x]] = tt_sx_mod(y, tt_sx_div(y, k, sz), size);
            sz *= size;
        }
        st[i].gate = tt_irb_and(b, tt_irb_and(b, okm, okk), eg ? eg[i] : NONE);
    }
    tt_em(L, fac, n, st, v);
    hcq_ir_ref zero = tt_irb_float(b, HCQ_F32, 0.0);
    for (int i = 0; i < n; i++) out[i] = tt_irb_cast(b, in->ab, st[i].gate == NONE ? v[i] : tt_irb_where(b, st[i].gate, v[i], zero));
    free(st);
    free(v);
}

/* n values as one vector */
static hcq_ir_ref vec_of(tt_lw *L, const hcq_ir_ref *x, unsigned n)
{
    hcq_ir_ref from = hcq_kernel_op_count(L->b.k), vec = hcq_ir_vsplat(L->b.k, x[0], n);
    for (unsigned e = 1; e < n; e++) vec = hcq_ir_vset(L->b.k, vec, e, x[e]);
    tt_irb_adopt(&L->b, from);
    return vec;
}

/* One fragment from memory (operand f: 0 = A, block blk along dm; 1 = B,
 * along dn) at k step kv: fr, fc its lanes' (row, col) in the block. */
static hcq_ir_ref fragment(tt_lw *L, const kax *K, tt_node *fac, const hcq_mma_info *in, int f, int64_t blk, const tt_sx *kv,
                           const tt_sx *const *fr, const tt_sx *const *fc)
{
    tt_sym *y = &L->sym;
    unsigned ne = f ? in->b_lanes : in->a_lanes;
    const tt_sx *mn[16], *kk[16];
    hcq_ir_ref v[16];
    for (unsigned e = 0; e < ne; e++) { /* A: (row m, col k); B: (row k, col n) */
        mn[e] = tt_sx_add(y, tt_sx_addc(y, f ? L->tc.col0 : L->tc.row0, blk * (f ? in->n : in->m)), f ? fc[e] : fr[e]);
        kk[e] = tt_sx_add(y, tt_sx_mulc(y, kv, in->k), f ? fr[e] : fc[e]);
    }
    factor_values(L, K, fac, in, f, (int)ne, mn, kk, NULL, v);
    return vec_of(L, v, ne);
}

/* tc.smem: the group copies slice kbv (BK = sk x k reduced elements) of A
 * (its GM rows, [row][k] with rows TC_PAD longer) and of B (its GN
 * columns, [k][column]) to local memory, consecutive work-items along k
 * for A and along the columns for B (a row-major [M, K] and [K, N] read
 * in order), each its straight-line share, 0 past the edges. */
static void stage_slice(tt_lw *L, const kax *K, tt_node *const *fac, const hcq_mma_info *in, const tt_sx *kbv, int64_t bk, int64_t gm,
                        int64_t gn, const hcq_ir_ref *lds)
{
    tt_irb *b = &L->b;
    tt_sym *y = &L->sym;
    int64_t lg = L->plan.L;
    for (int f = 0; f < 2; f++) {
        int64_t rows = f ? bk : gm, cols = f ? gn : bk, pitch = cols + TC_PAD, tot = rows * cols, n = cdiv(tot, lg);
        const tt_sx **mn = calloc((size_t)n * 2, sizeof *mn), **kk = mn + n;
        hcq_ir_ref *eg = calloc((size_t)n * 3, sizeof *eg), *dest = eg + n, *v = eg + 2 * n;
        if (!mn || !eg) {
            if (!L->err) L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
            free(mn);
            free(eg);
            return;
        }
        for (int64_t t = 0; t < n; t++) {
            const tt_sx *e = tt_sx_addc(y, L->tc.lid, t * lg), *r = tt_sx_div(y, e, cols), *c = tt_sx_mod(y, e, cols);
            eg[t] = e->hi >= tot ? tt_irb_binary(b, HCQ_OP_CMPLT, tt_em_sx(L, e), i32c(L, tot)) : NONE;
            dest[t] = tt_em_sx(L, tt_sx_add(y, tt_sx_mulc(y, r, pitch), c));
            mn[t] = tt_sx_add(y, f ? L->tc.gcol0 : L->tc.grow0, f ? c : r);
            kk[t] = tt_sx_add(y, tt_sx_mulc(y, kbv, bk), f ? r : c);
        }
        factor_values(L, K, fac[f], in, f, (int)n, mn, kk, eg, v);
        for (int64_t t = 0; t < n; t++) tt_irb_store(b, lds[f], dest[t], v[t], eg[t]);
        free(mn);
        free(eg);
    }
}

/* A fragment from the staged slice: step s of it. */
static hcq_ir_ref staged_fragment(tt_lw *L, const hcq_mma_info *in, int f, int64_t blk, int64_t s, int64_t bk, int64_t gn, hcq_ir_ref lds,
                                  const tt_sx *const *fr, const tt_sx *const *fc)
{
    tt_sym *y = &L->sym;
    unsigned ne = f ? in->b_lanes : in->a_lanes;
    hcq_ir_ref v[16];
    for (unsigned e = 0; e < ne; e++) {
        const tt_sx *idx;
        if (f) /* B [k][column]: row k = s*k + fr, column = the warp's + blk*n + fc */
            idx = tt_sx_add(y, tt_sx_mulc(y, tt_sx_addc(y, fr[e], s * in->k), gn + TC_PAD),
                            tt_sx_add(y, tt_sx_addc(y, L->tc.wcol, blk * in->n), fc[e]));
        else /* A [row][k] */
            idx = tt_sx_add(y, tt_sx_mulc(y, tt_sx_add(y, tt_sx_addc(y, L->tc.wrow, blk * in->m), fr[e]), bk + TC_PAD),
                            tt_sx_addc(y, fc[e], s * in->k));
        v[e] = tt_irb_load(&L->b, lds, tt_em_sx(L, idx), NONE, NONE);
    }
    return vec_of(L, v, ne);
}

bool tt_tc_reduce(tt_lw *L, tt_node *R, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    const tt_plan *P = &L->plan;
    const tt_node *root = L->tc.root;
    tt_node *src = R->src[0];
    hcq_mma_info in;
    if (!L->tc.tile || !root || src->op != TT_MUL || R->rop != TT_R_SUM || hcq_mma_info_get(P->tc.kind, &in)) return false;
    int fa = tt_smem_rows_factor(&L->space, P->tc.dm, P->tc.dn);
    if (fa < 0 || in.a_lanes > 16 || in.b_lanes > 16) return false;
    int64_t bm = P->tc.bm, bn = P->tc.bn, nc = in.c_lanes, ntile = bm * bn * nc;
    int *pos = malloc((size_t)nl * sizeof *pos);
    const tt_sx **want = malloc((size_t)ntile * TT_MAX_DIMS * sizeof *want);
    hcq_ir_ref acc[MAX_ACC], fv[2][8];
    bool done = false;
    if (!pos || !want) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        done = true;
        goto out;
    }
    /* which D lane each lane is: the tile's lanes seen through the reshapes */
    for (int64_t p = 0; p < ntile; p++)
        tt_decompose(L, tt_linear(L, L->tc.tile[p].idx, root->shape, root->ndim), R->shape, R->ndim, want + (size_t)p * TT_MAX_DIMS);
    for (int l = 0; l < nl; l++) {
        pos[l] = -1;
        for (int64_t p = 0; p < ntile && pos[l] < 0; p++)
            if (!memcmp(want + (size_t)p * TT_MAX_DIMS, lanes[l].idx, (size_t)R->ndim * sizeof *want)) pos[l] = (int)p;
        if (pos[l] < 0) {
            base_log(1, "lowering: tc: the main reduction is not reached at the D fragments' index; the plain loop runs");
            goto out;
        }
    }
    done = true;
    kax K = {.R = R, .na = 0, .rtot = 1};
    for (int d = 0; d < src->ndim; d++)
        if ((R->axes & (1u << d)) && src->shape[d] != 1) {
            K.axes[K.na++] = d;
            K.rtot *= src->shape[d];
        }
    const tt_sx *ar[16], *ac[16], *brw[16], *bcl[16];
    for (unsigned e = 0; e < in.a_lanes; e++) coord(L, 0, e, in.m, in.k, &ar[e], &ac[e]);
    for (unsigned e = 0; e < in.b_lanes; e++) coord(L, 1, e, in.k, in.n, &brw[e], &bcl[e]);
    hcq_ir_ref zero = tt_irb_float(b, HCQ_F32, 0.0), from = hcq_kernel_op_count(b->k);
    hcq_ir_ref z = hcq_ir_vsplat(b->k, zero, in.c_lanes);
    for (int64_t t = 0; t < bm * bn; t++) acc[t] = hcq_ir_define_acc(b->k, z);
    tt_irb_adopt(b, from);
    tt_node *fac[2] = {src->src[fa], src->src[1 - fa]};
    /* staged: slices of sk steps through local memory, a barrier after the
     * copies and after the slice's MMAs (the next copies must not overwrite
     * what a slower warp still reads) */
    int64_t sk = P->tc.sk, steps = sk ? sk : 1, wn = P->L / in.warp / P->tc.wm;
    int64_t gm = P->tc.wm * bm * in.m, gn = wn * bn * in.n, bk = steps * in.k;
    hcq_ir_ref lds[2] = {NONE, NONE};
    if (sk) {
        lds[0] = tt_irb_local(b, in.ab, (uint32_t)(gm * (bk + TC_PAD)));
        lds[1] = tt_irb_local(b, in.ab, (uint32_t)(bk * (gn + TC_PAD)));
    }
    int64_t nk = cdiv(K.rtot, bk);
    double save_mult = L->mult;
    hcq_ir_ref kr = tt_irb_range(b, i32c(L, 0), i32c(L, nk));
    L->mult *= (double)nk;
    const tt_sx *kv = tt_sx_var(&L->sym, 0, nk - 1, kr);
    if (sk) {
        stage_slice(L, &K, fac, &in, kv, bk, gm, gn, lds);
        tt_irb_barrier(b);
    }
    for (int64_t s = 0; s < steps; s++) {
        for (int64_t i = 0; i < bm; i++)
            fv[0][i] = sk ? staged_fragment(L, &in, 0, i, s, bk, gn, lds[0], ar, ac) : fragment(L, &K, fac[0], &in, 0, i, kv, ar, ac);
        for (int64_t j = 0; j < bn; j++)
            fv[1][j] = sk ? staged_fragment(L, &in, 1, j, s, bk, gn, lds[1], brw, bcl) : fragment(L, &K, fac[1], &in, 1, j, kv, brw, bcl);
        for (int64_t i = 0; i < bm; i++)
            for (int64_t j = 0; j < bn; j++) {
                hcq_ir_ref *a = &acc[i * bn + j];
                from = hcq_kernel_op_count(b->k);
                hcq_ir_ref d = hcq_ir_mma(b->k, P->tc.kind, fv[0][i], fv[1][j], *a);
                tt_irb_adopt(b, from);
                tt_irb_assign(b, *a, d);
                L->flops += 2.0 * in.m * in.n * in.k / in.warp * L->mult;
            }
    }
    if (sk) tt_irb_barrier(b);
    tt_irb_endrange(b, kr);
    L->mult = save_mult;
    for (int l = 0; l < nl; l++) {
        from = hcq_kernel_op_count(b->k);
        out[l] = hcq_ir_vget(b->k, acc[pos[l] / nc], (unsigned)(pos[l] % nc));
        tt_irb_adopt(b, from);
        out[l] = tt_irb_cast(b, (hcq_dtype)R->dtype, out[l]);
    }
out:
    free(pos);
    free(want);
    return done;
}
