/* Shared-memory staging (the smem choice): what lower.c needs to offer
 * it. tt_smem_space works out whether a kernel's main reduction can be
 * staged and which output dims each factor of its product depends on (the
 * space plan.c's smem_rules check a list against); tt_smem_default makes it
 * the GPU default where it fits. The staging itself is emit.c's
 * em_reduce_smem; the group-to-block mapping is tt_lower's. */
#include "tensor/lower.h"

#define NONE HCQ_IR_NONE

static bool coef(const tt_sx *lin, const tt_sx *var, int64_t *k) { return lin && var && tt_sx_coef(lin, var->t[0].at, k); }

/* ** which output dims each factor of the main product depends on, in
 * the root's index (see tt_space) */
#define DEP_ALL 0xffffffffu
typedef struct depw {
    tt_lw *L;
    const tt_sx *const *ovar;
    const tt_sx *rvar; /* the main reduction's innermost axis */
    int nd, visits;
    bool kcontig; /* some load is contiguous along rvar */
} depw;

static uint32_t dims_of(const depw *W, const tt_sx *x)
{
    uint32_t m = 0;
    int64_t k;
    for (int d = 0; d < W->nd; d++)
        if (!coef(x, W->ovar[d], &k) || k) m |= 1u << d; /* not affine in it counts as depending */
    return m;
}

/* The output dims n's value at idx depends on (DEP_ALL: not known). A
 * view's mask depends on the dims its masked indexes move with. */
static uint32_t dep_walk(depw *W, tt_node *n, const tt_sx *const *idx, int depth)
{
    if (++W->visits > 4096 || depth > 64) return DEP_ALL;
    const tt_sx *sub[TT_MAX_DIMS];
    uint32_t m = 0;
    switch ((tt_op)n->op) {
    case TT_CONST: return 0;
    case TT_BUF: {
        const tt_sx *lin = tt_linear(W->L, idx, n->shape, n->ndim);
        int64_t k;
        W->kcontig = W->kcontig || (coef(lin, W->rvar, &k) && k == 1);
        return dims_of(W, lin);
    }
    case TT_INDEX: return dims_of(W, idx[n->axes]);
    case TT_VIEW: {
        const tt_view *v = &n->view;
        for (int d = 0; v->mask && d < v->ndim; d++)
            if (v->lo[d] != 0 || v->hi[d] != v->shape[d]) m |= dims_of(W, idx[d]);
        if (!tt_view_apply(W->L, n, idx, sub, NULL)) return m;
        return m | dep_walk(W, n->src[0], sub, depth + 1);
    }
    case TT_REDUCE:
    case TT_GATHER:
    case TT_RAND:
    case TT_SYMVAL: return DEP_ALL;
    default:
        for (int i = 0; i < n->nsrc; i++) m |= dep_walk(W, n->src[i], idx, depth + 1);
        return m;
    }
}

/* A view that only reshapes: the root's linear index is its source's. */
static bool pure_reshape(const tt_node *n)
{
    const tt_view *v = &n->view;
    if (v->mask || v->offset || tt_numel(v->shape, v->ndim) != tt_numel(n->src[0]->shape, n->src[0]->ndim)) return false;
    int64_t st = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != st) return false;
        st *= v->shape[d];
    }
    return true;
}

/* 1: every path from n to R is elementwise ops and reshapes; 0: n does
 * not reach R; -1: a path goes through another view (or is too long). */
static int reshape_path(const tt_node *n, const tt_node *R, int depth, int *visits)
{
    if (n == R) return 1;
    if (++*visits > 4096 || depth > 64) return -1;
    switch ((tt_op)n->op) {
    case TT_BUF:
    case TT_CONST:
    case TT_REDUCE:
    case TT_GATHER: return 0;
    case TT_VIEW: {
        int r = reshape_path(n->src[0], R, depth + 1, visits);
        return r == 1 && !pure_reshape(n) ? -1 : r;
    }
    default: {
        int r = 0;
        for (int i = 0; i < n->nsrc; i++) {
            int x = reshape_path(n->src[i], R, depth + 1, visits);
            if (x < 0) return -1;
            if (x) r = 1;
        }
        return r;
    }
    }
}

/* The index of R's source where the root's index is idx (a reshape path):
 * the reduced axes are left for the caller. */
static void reduce_src_index(tt_lw *L, const tt_node *root, const tt_node *R, const tt_sx *const *idx, const tt_sx **out)
{
    tt_decompose(L, tt_linear(L, idx, root->shape, root->ndim), R->shape, R->ndim, out);
}

void tt_smem_space(tt_lw *L, tt_node *root, tt_space *sp, bool main_sym)
{
    tt_node *R = L->plan.main;
    sp->dep[0] = sp->dep[1] = DEP_ALL;
    int visits = 0;
    if (!R) {
        sp->smem_why = "the kernel has no main reduction";
        return;
    }
    tt_node *src = R->src[0];
    if (R->rop != TT_R_SUM || src->op != TT_MUL) {
        sp->smem_why = "the main reduction is not a sum of products";
        return;
    }
    if (main_sym) {
        sp->smem_why = "the main reduction runs over a variable dim";
        return;
    }
    if (reshape_path(root, R, 0, &visits) != 1) {
        sp->smem_why = "the main reduction reaches the output through a view other than a reshape";
        return;
    }
    const tt_sx *ovar[TT_MAX_DIMS], *idx[TT_MAX_DIMS];
    for (int d = 0; d < root->ndim; d++) ovar[d] = tt_sx_var(&L->sym, 0, root->shape[d] > 0 ? root->shape[d] - 1 : 0, NONE);
    reduce_src_index(L, root, R, ovar, idx);
    const tt_sx *rvar = NULL;
    for (int d = 0; d < src->ndim; d++)
        if ((R->axes & (1u << d)) && src->shape[d] > 1) rvar = idx[d] = tt_sx_var(&L->sym, 0, src->shape[d] - 1, NONE);
    for (int i = 0; i < 2; i++) {
        depw W = {L, ovar, rvar, root->ndim, 0, false};
        sp->dep[i] = dep_walk(&W, src->src[i], idx, 0);
        sp->kfast[i] = W.kcontig;
        sp->op_bytes[i] = (uint32_t)hcq_dtype_size((hcq_dtype)src->src[i]->dtype);
    }
    if (L->sym.oom) sp->smem_why = "index arithmetic ran out of memory";
}

/* GPU: a register tile of a sum of products stages its operands through
 * shared memory in slices of 16 reduced elements, the work-group a block
 * of up to 16 x 16 tiles (a 64 x 64 block of 4 x 4 tiles: each operand
 * element is read from memory by one work-item instead of 16), smaller
 * while the blocks leave compute units idle. Only where plan.c's smem
 * rules hold (checked here the same way) and both the tile rows and
 * columns are reused (two tiles or more each way, 16 reduced or more). */
bool tt_smem_default(tt_lw *L, tt_plan *P, const int64_t *S, uint64_t rsize, uint32_t maxl)
{
    const tt_space *sp = &L->space;
    int dr = P->up_dim[0], dv = P->up_dim[1];
    if (dr < 0 || dv < 0 || sp->smem_why || rsize < 16 || P->red_up > 1 || P->cblock) return false;
    for (int d = 0; d < sp->ndim; d++)
        if (sp->sym[d]) return false;
    int a = tt_smem_rows_factor(sp, dr, dv);
    int64_t tr = tt_plan_tiles(S, P, dr), tv = tt_plan_tiles(S, P, dv);
    if (a < 0 || tr < 2 || tv < 2) return false;
    uint64_t gr = tr < 16 ? (uint64_t)tr : 16, gv = tv < 16 ? (uint64_t)tv : 16, bk = 16;
    uint64_t other = P->items / ((uint64_t)tr * (uint64_t)tv), cus = L->ctx->props.compute_units;
    for (;;) {
        uint64_t groups = ((uint64_t)tr + gr - 1) / gr * (((uint64_t)tv + gv - 1) / gv) * other;
        if (gr * gv <= maxl && (groups >= cus || gr * gv <= 64)) break;
        if (gr >= gv) gr = (gr + 1) / 2;
        else gv = (gv + 1) / 2;
    }
    uint64_t l = gr * gv, bm = gr * (uint64_t)P->up[0], bn = gv * (uint64_t)P->up[1];
    uint64_t bytes = tt_smem_bytes(sp, a, bm, bn, bk);
    uint64_t per = (bm * bk + l - 1) / l + (bn * bk + l - 1) / l;
    if (bytes > sp->max_local_bytes || per > 64) return false;
    P->smem_bk = (int64_t)bk;
    P->smem_gv = (uint32_t)gv;
    P->L = (uint32_t)l;
    P->items = ((uint64_t)tr + gr - 1) / gr * (((uint64_t)tv + gv - 1) / gv) * other * l;
    return true;
}
