/* Node values as IR. tt_em walks the fused graph from a kernel's root with
 * symbolic indexes: a view maps its lane index to its source's (with a
 * validity condition that gates every load below it), an elementwise op
 * applies to its sources at the same index, a reduction opens loops and
 * accumulates its source at the index extended by the loop counters. Each
 * (node, index, gate) is emitted once; the IR builder shares the rest. */
#include "tensor/lower.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE HCQ_IR_NONE

/* ** memo: (node, index, gate) -> value */
struct memo_ent {
    const tt_node *n; /* valid only when gen is the lowering's */
    uint32_t gen;
    hcq_ir_ref gate, val;
    const tt_sx *idx[TT_MAX_DIMS];
};

static uint32_t memo_hash(const tt_node *n, const tt_lane *l)
{
    uint64_t h = (uintptr_t)n * 0x9e3779b97f4a7c15ull ^ l->gate;
    for (int d = 0; d < n->ndim; d++) h = (h ^ (uintptr_t)l->idx[d]) * 0x100000001b3ull;
    return (uint32_t)(h ^ (h >> 31));
}

static bool live_ent(const tt_lw *L, const memo_ent *e) { return e->n && e->gen == L->mgen; }

static memo_ent *memo_slot(tt_lw *L, const tt_node *n, const tt_lane *l, bool *found)
{
    *found = false;
    if ((L->mcount + 1) * 2 > L->mcap) {
        uint32_t ncap = L->mcap ? L->mcap * 2 : 1024;
        memo_ent *nm = calloc(ncap, sizeof *nm);
        if (!nm) return NULL;
        for (uint32_t i = 0; i < L->mcap; i++) {
            memo_ent *e = &L->memo[i];
            if (!live_ent(L, e)) continue;
            tt_lane tmp = {.gate = e->gate};
            memcpy(tmp.idx, e->idx, sizeof tmp.idx);
            uint32_t j = memo_hash(e->n, &tmp) & (ncap - 1);
            while (live_ent(L, &nm[j])) j = (j + 1) & (ncap - 1);
            nm[j] = *e;
        }
        free(L->memo);
        L->memo = nm;
        L->mcap = ncap;
    }
    uint32_t m = L->mcap - 1, j = memo_hash(n, l) & m;
    for (; live_ent(L, &L->memo[j]); j = (j + 1) & m) {
        memo_ent *e = &L->memo[j];
        if (e->n != n || e->gate != l->gate || memcmp(e->idx, l->idx, n->ndim * sizeof *l->idx)) continue;
        *found = true;
        return e;
    }
    return &L->memo[j];
}

void tt_memo_reset(tt_lw *L)
{
    L->mcount = 0;
    if (++L->mgen == 0) { /* wrapped: clear for real */
        if (L->memo) memset(L->memo, 0, L->mcap * sizeof *L->memo);
        L->mgen = 1;
    }
}

void tt_memo_free(tt_lw *L)
{
    free(L->memo);
    L->memo = NULL;
    L->mcap = L->mcount = 0;
}

/* ** index expressions */
const tt_sx *tt_linear(tt_lw *L, const tt_sx *const *idx, const int64_t *shape, int ndim)
{
    const tt_sx *lin = tt_sx_const(&L->sym, 0);
    int64_t st = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1) lin = tt_sx_add(&L->sym, lin, tt_sx_mulc(&L->sym, idx[d], st));
        st *= shape[d];
    }
    return lin;
}

/* The value of symbolic variable var (1-based) as an index variable, the
 * same atom for the whole kernel */
static const tt_sx *var_sx(tt_lw *L, int var)
{
    if (var < 1 || var > TT_MAX_SYMS) return NULL;
    if (!L->vsx[var - 1]) {
        const tt_symvar *v = &L->ctx->syms[var - 1];
        L->vsx[var - 1] = tt_sx_var(&L->sym, v->lo, v->hi, tt_var_param(L, var));
    }
    return L->vsx[var - 1];
}

const tt_sx *tt_mem_linear(tt_lw *L, const tt_node *n, const tt_sx *const *idx)
{
    if (!tt_has_sym(n)) return tt_linear(L, idx, n->shape, n->ndim);
    const tt_sx *lin = tt_sx_const(&L->sym, 0), *V = NULL; /* V: the product of the variables inside dim d */
    int64_t st = 1;
    for (int d = n->ndim - 1; d >= 0; d--) {
        if (n->shape[d] != 1) {
            const tt_sx *t = tt_sx_mulc(&L->sym, idx[d], st);
            lin = tt_sx_add(&L->sym, lin, V ? tt_sx_mulv(&L->sym, t, V) : t);
        }
        if (n->sym[d]) {
            const tt_sx *v = var_sx(L, n->sym[d]);
            V = V ? tt_sx_mulv(&L->sym, V, v) : v;
        } else {
            st *= n->shape[d];
        }
    }
    return lin;
}

/* lin -> per-dim indexes of a row-major shape */
void tt_decompose(tt_lw *L, const tt_sx *lin, const int64_t *shape, int ndim, const tt_sx **out)
{
    int64_t st = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        out[d] = shape[d] == 1 ? tt_sx_const(&L->sym, 0) : tt_sx_mod(&L->sym, tt_sx_div(&L->sym, lin, st), shape[d]);
        st *= shape[d];
    }
}

static hcq_ir_ref i32c(tt_lw *L, int64_t v) { return tt_irb_int(&L->b, HCQ_I32, v); }

static hcq_ir_ref em_atom(tt_lw *L, const tt_atom *at)
{
    if (at->by) return tt_irb_binary(&L->b, HCQ_OP_MUL, tt_em_sx(L, at->x), em_atom(L, at->by)); /* (x) * a variable */
    if (at->var) return at->ir;
    tt_irb *b = &L->b;
    hcq_ir_ref v = tt_em_sx(L, at->x);
    if (at->a > 1) { /* floor division; IDIV truncates, so shift negative values first */
        if (at->x->lo < 0)
            v = tt_irb_where(b, tt_irb_binary(b, HCQ_OP_CMPLT, v, i32c(L, 0)), tt_irb_binary(b, HCQ_OP_SUB, v, i32c(L, at->a - 1)), v);
        v = tt_irb_binary(b, HCQ_OP_IDIV, v, i32c(L, at->a));
    }
    if (at->b) { /* floor modulo: MOD takes the dividend's sign */
        int64_t qlo = at->x->lo >= 0 ? 0 : -1;
        v = tt_irb_binary(b, HCQ_OP_MOD, v, i32c(L, at->b));
        if (qlo < 0) v = tt_irb_where(b, tt_irb_binary(b, HCQ_OP_CMPLT, v, i32c(L, 0)), tt_irb_binary(b, HCQ_OP_ADD, v, i32c(L, at->b)), v);
    }
    return v;
}

hcq_ir_ref tt_em_sx(tt_lw *L, const tt_sx *x)
{
    if (!x) {
        if (!L->err) L->err = base_err(HCQ_ENOMEM, "lowering: index arithmetic ran out of memory or terms");
        return NONE;
    }
    tt_irb *b = &L->b;
    hcq_ir_ref acc = NONE;
    for (uint32_t i = 0; i < x->n; i++) {
        hcq_ir_ref v = em_atom(L, x->t[i].at);
        int64_t k = x->t[i].k;
        if (k == -1 && acc != NONE) {
            acc = tt_irb_binary(b, HCQ_OP_SUB, acc, v);
            continue;
        }
        if (k != 1) v = tt_irb_binary(b, HCQ_OP_MUL, v, i32c(L, k));
        acc = acc == NONE ? v : tt_irb_binary(b, HCQ_OP_ADD, acc, v);
    }
    if (acc == NONE) return i32c(L, x->c);
    return x->c ? tt_irb_binary(b, HCQ_OP_ADD, acc, i32c(L, x->c)) : acc;
}

/* lo <= e < hi: 1 always, 0 never, -1 with *cond */
static int in_range(tt_lw *L, const tt_sx *e, int64_t lo, int64_t hi, hcq_ir_ref *cond)
{
    if (e->lo >= lo && e->hi < hi) return 1;
    if (e->hi < lo || e->lo >= hi) return 0;
    tt_irb *b = &L->b;
    hcq_ir_ref v = tt_em_sx(L, e), c = NONE;
    if (e->lo < lo) c = tt_irb_binary(b, HCQ_OP_CMPLT, i32c(L, lo - 1), v);
    if (e->hi >= hi) c = tt_irb_and(b, c, tt_irb_binary(b, HCQ_OP_CMPLT, v, i32c(L, hi)));
    *cond = c;
    return -1;
}

int tt_view_apply(tt_lw *L, const tt_node *vn, const tt_sx *const *idx, const tt_sx **src_idx, hcq_ir_ref *valid)
{
    const tt_view *v = &vn->view;
    int state = 1;
    hcq_ir_ref cond = NONE;
    if (v->mask && valid)
        for (int d = 0; d < v->ndim && state; d++) {
            if (v->lo[d] == 0 && v->hi[d] == v->shape[d]) continue;
            hcq_ir_ref c = NONE;
            int s = in_range(L, idx[d], v->lo[d], v->hi[d], &c);
            if (s == 0) state = 0;
            if (s < 0) {
                cond = tt_irb_and(&L->b, cond, c);
                state = -1;
            }
        }
    if (valid) *valid = state < 0 ? cond : NONE;
    if (!state) return 0;
    const tt_node *src = vn->src[0];
    if (tt_numel(src->shape, src->ndim) == 0) { /* an empty source shows nothing (and has no strides to divide by) */
        if (valid) *valid = NONE;
        return 0;
    }
    const tt_sx *lin = tt_sx_const(&L->sym, v->offset);
    for (int d = 0; d < v->ndim; d++)
        if (v->strides[d]) lin = tt_sx_add(&L->sym, lin, tt_sx_mulc(&L->sym, idx[d], v->strides[d]));
    tt_decompose(L, lin, src->shape, src->ndim, src_idx);
    return state;
}

hcq_ir_ref tt_var_param(tt_lw *L, int var)
{
    for (uint32_t i = 0; i < L->key->nin; i++)
        if (L->key->in[i].var == var) return L->pref[L->nout + i];
    if (!L->err) L->err = base_err(HCQ_ESTATE, "lowering: a variable size has no param");
    return NONE;
}

hcq_ir_ref tt_param_of(tt_lw *L, const tt_buf *buf, const tt_node *rand)
{
    for (uint32_t i = 0; i < L->key->nin; i++)
        if ((buf && L->key->in[i].buf == buf) || (rand && L->key->in[i].rand == rand)) return L->pref[L->nout + i];
    return NONE;
}

/* ** random bits: a bijective mix of (key, linear index) in u32 */
static hcq_ir_ref u32c(tt_lw *L, uint32_t v) { return tt_irb_int(&L->b, HCQ_U32, v); }

static hcq_ir_ref fmix(tt_lw *L, hcq_ir_ref x)
{
    tt_irb *b = &L->b;
    x = tt_irb_binary(b, HCQ_OP_XOR, x, tt_irb_binary(b, HCQ_OP_SHR, x, u32c(L, 16)));
    x = tt_irb_binary(b, HCQ_OP_MUL, x, u32c(L, 0x85ebca6bu));
    x = tt_irb_binary(b, HCQ_OP_XOR, x, tt_irb_binary(b, HCQ_OP_SHR, x, u32c(L, 13)));
    x = tt_irb_binary(b, HCQ_OP_MUL, x, u32c(L, 0xc2b2ae35u));
    return tt_irb_binary(b, HCQ_OP_XOR, x, tt_irb_binary(b, HCQ_OP_SHR, x, u32c(L, 16)));
}

static hcq_ir_ref em_rand(tt_lw *L, const tt_node *n, const tt_lane *l)
{
    tt_irb *b = &L->b;
    /* numbered as the eager tensor of the bound size is (variable dims) */
    hcq_ir_ref x = tt_irb_cast(b, HCQ_U32, tt_em_sx(L, tt_mem_linear(L, n, l->idx)));
    /* the seed is a u64 param: new random tensors reuse the program */
    hcq_ir_ref seed = tt_param_of(L, NULL, n);
    hcq_ir_ref k1 = tt_irb_cast(b, HCQ_U32, seed);
    hcq_ir_ref k2 = tt_irb_cast(b, HCQ_U32, tt_irb_binary(b, HCQ_OP_SHR, seed, tt_irb_int(b, HCQ_U64, 32)));
    x = tt_irb_binary(b, HCQ_OP_ADD, tt_irb_binary(b, HCQ_OP_MUL, x, u32c(L, 0x9e3779b1u)), k1);
    x = fmix(L, tt_irb_binary(b, HCQ_OP_XOR, fmix(L, x), k2));
    if (n->dtype == HCQ_U32) return x;
    /* the top 24 bits as a float in [0, 1): exact */
    hcq_ir_ref f = tt_irb_cast(b, HCQ_F32, tt_irb_binary(b, HCQ_OP_SHR, x, u32c(L, 8)));
    return tt_irb_binary(b, HCQ_OP_MUL, f, tt_irb_float(b, HCQ_F32, 0x1p-24));
}

/* ** reductions */
static hcq_ir_ref reduce_op(tt_lw *L, tt_rop rop, hcq_ir_ref acc, hcq_ir_ref v)
{
    hcq_dtype dt = tt_irb_dtype(&L->b, acc);
    hcq_op op = rop == TT_R_SUM ? HCQ_OP_ADD : rop == TT_R_PROD ? HCQ_OP_MUL : dt == HCQ_BOOL ? HCQ_OP_OR : HCQ_OP_MAX;
    if (hcq_dtype_is_float(dt)) L->flops += L->mult;
    return tt_irb_binary(&L->b, op, acc, v);
}

#define MAX_RLOOPS TT_MAX_DIMS

/* The reduction's loops: its reduced dims of extent > 1, outermost first,
 * and the number of elements each output sums. */
static int em_red_axes(const tt_node *R, int axes[MAX_RLOOPS], int64_t *total)
{
    const tt_node *src = R->src[0];
    int na = 0;
    *total = 1;
    for (int d = 0; d < src->ndim; d++)
        if ((R->axes & (1u << d)) && src->shape[d] != 1) {
            axes[na++] = d;
            *total *= src->shape[d];
        }
    return na;
}

/* The main reduction with smem (plan.c's smem_rules): per slice of bk
 * reduced elements, the group copies the values of the factor that does
 * not move with the columns (A) for its bm block rows, and of the other (B)
 * for its bn block columns, to local memory; after a barrier each
 * work-item runs its ur x uv tile from there, and a second barrier keeps
 * the next slice's copy from overwriting what a slower work-item still
 * reads. Each output still sums its products in the reduction's order, one
 * fused multiply-add at a time as em_reduce does, so the result is the
 * plain loop's bit for bit (a slice past the end adds 0 * 0). Rows and
 * columns past the output's edge are clamped to the last (their values are
 * not stored). The lanes must be the kernel's tile (tt_lower), reached
 * through reshapes only (smem_space in lower.c); false (nothing emitted)
 * when they are not, and em_reduce runs the plain loop. */
static bool em_reduce_smem(tt_lw *L, tt_node *R, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    const tt_plan *P = &L->plan;
    const tt_node *root = L->sm.root;
    tt_node *src = R->src[0];
    if (!L->sm.tile || !root || src->op != TT_MUL || R->rop != TT_R_SUM) return false;
    int dr = P->up_dim[0], dv = P->up_dim[1], nd = root->ndim;
    int64_t ur = P->up[0], uv = P->up[1], gv = P->smem_gv, gr = P->L / gv, bm = gr * ur, bn = gv * uv, bk = P->smem_bk;
    int ntile = (int)(ur * uv), fa = tt_smem_rows_factor(&L->space, dr, dv);
    if (fa < 0) return false;
    int64_t lg = P->L;
    /* a vector plan copies cw[f] consecutive elements a work-item (one
     * vector load where the factor is contiguous that way, one vector
     * store where local memory is): whole chunks along the copy's fast
     * index, else one element at a time */
    const tt_node *fsrc[2] = {src->src[fa], src->src[1 - fa]};
    int64_t cw[2], np = 0;
    for (int f = 0; f < 2; f++) {
        int64_t fast = L->space.kfast[fa == 0 ? f : 1 - f] ? bk : (f == 0 ? bm : bn);
        cw[f] = tt_vec_width(P, (hcq_dtype)fsrc[f]->dtype);
        if (cw[f] < 2 || fast % cw[f]) cw[f] = 1;
        int64_t nc = ((f == 0 ? bm : bn) * bk / cw[f] + lg - 1) / lg * cw[f];
        if (nc > np) np = nc;
    }
    if (P->vec > 1 && (np < ur || np < uv)) np = ur > uv ? ur : uv; /* (dsx holds a tile row's indexes too) */
    int *pos = malloc((size_t)nl * sizeof *pos);
    const tt_sx **want = malloc((size_t)ntile * TT_MAX_DIMS * sizeof *want);
    hcq_ir_ref *acc = calloc((size_t)ntile, sizeof *acc), *vals = calloc((size_t)np, sizeof *vals), *keep = calloc((size_t)np, sizeof *keep);
    hcq_ir_ref *dest = calloc((size_t)np, sizeof *dest), *egate = calloc((size_t)np, sizeof *egate);
    hcq_ir_ref *fv[2] = {calloc((size_t)(ur > uv ? ur : uv), sizeof **fv), calloc((size_t)(ur > uv ? ur : uv), sizeof **fv)};
    tt_lane *st = calloc((size_t)np, sizeof *st);
    const tt_sx **dsx = calloc((size_t)np, sizeof *dsx);
    bool done = false;
    if (!pos || !want || !acc || !vals || !keep || !dest || !egate || !fv[0] || !fv[1] || !st || !dsx) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        done = true;
        goto out;
    }
    /* which tile output each lane is: the tile lanes seen through the reshapes */
    for (int p = 0; p < ntile; p++)
        tt_decompose(L, tt_linear(L, L->sm.tile[p].idx, root->shape, nd), R->shape, R->ndim, want + (size_t)p * TT_MAX_DIMS);
    for (int l = 0; l < nl; l++) {
        pos[l] = -1;
        for (int p = 0; p < ntile && pos[l] < 0; p++)
            if (!memcmp(want + (size_t)p * TT_MAX_DIMS, lanes[l].idx, (size_t)R->ndim * sizeof *want)) pos[l] = p;
        if (pos[l] < 0) {
            base_log(1, "lowering: smem: the main reduction is not reached at the tile's index; the plain loop runs");
            goto out;
        }
    }
    done = true;
    hcq_dtype odt = (hcq_dtype)R->dtype;
    hcq_dtype adt = (odt == HCQ_F16 || odt == HCQ_BF16) ? HCQ_F32 : odt;
    int axes[MAX_RLOOPS];
    int64_t rtot;
    int na = em_red_axes(R, axes, &rtot);
    hcq_ir_ref ident = tt_irb_val(b, adt, tt_reduce_neutral(TT_R_SUM, adt));
    for (int p = 0; p < ntile; p++) acc[p] = tt_irb_acc(b, ident);
    tt_node *fac[2] = {src->src[fa], src->src[1 - fa]};
    /* consecutive work-items copy consecutive elements of memory: along
     * the reduction where the factor is contiguous along it (a row-major
     * [M, K], or the [N, K] of x @ w^T), else along its rows or columns (a
     * row-major [K, N]); local memory is [k][row], TT_SMEM_PAD longer rows
     * for the first kind */
    bool kfirst[2] = {L->space.kfast[fa], L->space.kfast[1 - fa]};
    int64_t rows[2] = {bm, bn}, pitch[2] = {bm + (kfirst[0] ? TT_SMEM_PAD : 0), bn + (kfirst[1] ? TT_SMEM_PAD : 0)};
    hcq_ir_ref lds[2] = {tt_irb_local(b, (hcq_dtype)fac[0]->dtype, (uint32_t)(pitch[0] * bk)),
                         tt_irb_local(b, (hcq_dtype)fac[1]->dtype, (uint32_t)(pitch[1] * bk))};
    int64_t nk = (rtot + bk - 1) / bk;
    double save_mult = L->mult;
    hcq_ir_ref kb = tt_irb_range(b, i32c(L, 0), i32c(L, nk));
    L->mult *= (double)nk;
    const tt_sx *kbv = tt_sx_var(&L->sym, 0, nk - 1, kb), *lid = tt_sx_var(&L->sym, 0, lg - 1, L->sm.lid);
    for (int f = 0; f < 2; f++) {
        int64_t c = cw[f], n = rows[f] * bk, nq = n / c, ns = (nq + lg - 1) / lg * c;
        int dm = f == 0 ? dr : dv, dz = f == 0 ? dv : dr;
        hcq_dtype fdt = (hcq_dtype)fac[f]->dtype;
        for (int64_t s = 0; s < ns; s++) {
            /* element i of chunk q = lid + s' * lg (s = s' * c + i): c
             * divides the fast index's extent, so the chunk's elements are
             * c * (q mod per) + i along it (written so, not as a division
             * of q * c + i, the lanes' indexes differ by constants only) */
            const tt_sx *q = tt_sx_addc(&L->sym, lid, s / c * lg), *r, *kk;
            int64_t per = (kfirst[f] ? bk : rows[f]) / c;
            for (int x = 0; x < 2; x++) { /* r first (the order the index atoms are made in) */
                bool want_along = (x == 0) != kfirst[f];
                const tt_sx *v = want_along ? tt_sx_addc(&L->sym, tt_sx_mulc(&L->sym, tt_sx_mod(&L->sym, q, per), c), s % c)
                                            : tt_sx_div(&L->sym, q, per);
                if (x == 0) r = v;
                else kk = v;
            }
            egate[s] = q->hi >= nq ? tt_irb_binary(b, HCQ_OP_CMPLT, tt_em_sx(L, q), i32c(L, nq)) : NONE;
            dsx[s] = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, kk, pitch[f]), r);
            dest[s] = tt_em_sx(L, dsx[s]);
            const tt_sx *at[TT_MAX_DIMS];
            for (int d = 0; d < nd; d++) at[d] = L->sm.base[d];
            at[dz] = tt_sx_const(&L->sym, 0); /* the factor does not move with it */
            at[dm] = tt_sx_add(&L->sym, L->sm.base[dm], r);
            if (at[dm]->hi >= root->shape[dm]) { /* a block past the edge: clamped */
                hcq_ir_ref raw = tt_em_sx(L, at[dm]), last = i32c(L, root->shape[dm] - 1);
                hcq_ir_ref ok = tt_irb_binary(b, HCQ_OP_CMPLT, raw, i32c(L, root->shape[dm]));
                at[dm] = tt_sx_var(&L->sym, 0, root->shape[dm] - 1, tt_irb_where(b, ok, raw, last));
            }
            const tt_sx *k = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, kbv, bk), kk);
            keep[s] = k->hi >= rtot ? tt_irb_binary(b, HCQ_OP_CMPLT, tt_em_sx(L, k), i32c(L, rtot)) : NONE;
            tt_decompose(L, tt_linear(L, at, root->shape, nd), R->shape, R->ndim, st[s].idx);
            int64_t sz = 1;
            for (int x = na - 1; x >= 0; x--) {
                int64_t size = src->shape[axes[x]];
                st[s].idx[axes[x]] = tt_sx_mod(&L->sym, tt_sx_div(&L->sym, k, sz), size);
                sz *= size;
            }
            st[s].gate = tt_irb_and(b, egate[s], keep[s]);
        }
        tt_em(L, fac[f], (int)ns, st, vals);
        hcq_ir_ref zero = tt_irb_val(b, fdt, (tt_val){.i = 0});
        for (int64_t s = 0; s < ns; s++) /* past the reduction's end: 0, whatever the factor's value there */
            if (c == 1)
                tt_irb_store(b, lds[f], dest[s], keep[s] == NONE ? vals[s] : tt_irb_where(b, keep[s], vals[s], zero), egate[s]);
            else
                vals[s] = keep[s] == NONE ? vals[s] : tt_irb_where(b, keep[s], vals[s], zero);
        if (c > 1) tt_vec_store(L, lds[f], (int)ns, dsx, vals, egate, "local memory");
    }
    tt_irb_barrier(b);
    hcq_ir_ref kr = tt_irb_range(b, i32c(L, 0), i32c(L, bk));
    L->mult *= (double)bk;
    const tt_sx *kv = tt_sx_var(&L->sym, 0, bk - 1, kr), *own[2] = {L->sm.tr, L->sm.tc};
    int64_t up[2] = {ur, uv};
    for (int f = 0; f < 2; f++) {
        for (int64_t i = 0; i < up[f]; i++) {
            const tt_sx *x = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, kv, pitch[f]), tt_sx_addc(&L->sym, tt_sx_mulc(&L->sym, own[f], up[f]), i));
            if (P->vec > 1)
                dsx[i] = x; /* (np >= up[f]: above) */
            else
                fv[f][i] = tt_irb_load(b, lds[f], tt_em_sx(L, x), NONE, NONE);
        }
        if (P->vec > 1) tt_vec_load(L, lds[f], (int)up[f], dsx, NULL, NONE, fv[f], "local memory");
    }
    bool mulacc = hcq_dtype_is_float(adt) && src->dtype == adt;
    for (int p = 0; p < ntile; p++) {
        hcq_ir_ref x = fv[0][p / uv], y = fv[1][p % uv];
        if (fa == 1) { /* the product's own operand order */
            hcq_ir_ref t = x;
            x = y;
            y = t;
        }
        if (mulacc) {
            L->flops += 2 * L->mult;
            tt_irb_assign(b, acc[p], tt_irb_mulacc(b, x, y, acc[p]));
        } else {
            if (hcq_dtype_is_float((hcq_dtype)src->dtype)) L->flops += L->mult;
            hcq_ir_ref v = tt_irb_cast(b, adt, tt_irb_binary(b, HCQ_OP_MUL, x, y));
            tt_irb_assign(b, acc[p], reduce_op(L, TT_R_SUM, acc[p], v));
        }
    }
    tt_irb_endrange(b, kr);
    tt_irb_barrier(b);
    tt_irb_endrange(b, kb);
    L->mult = save_mult;
    for (int l = 0; l < nl; l++) out[l] = tt_irb_cast(b, odt, acc[pos[l]]);
out:
    free(pos);
    free(want);
    free(acc);
    free(vals);
    free(keep);
    free(dest);
    free(egate);
    free(fv[0]);
    free(fv[1]);
    free(st);
    free(dsx);
    return done;
}

static void em_reduce(tt_lw *L, tt_node *R, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    tt_node *src = R->src[0];
    hcq_dtype odt = (hcq_dtype)R->dtype;
    hcq_dtype adt = (odt == HCQ_F16 || odt == HCQ_BF16) && R->rop != TT_R_MAX ? HCQ_F32 : odt;
    tt_rop rop = (tt_rop)R->rop;
    bool main = R == L->plan.main;
    for (uint32_t i = 0; i < L->nmains && !main; i++) main = R == L->mains[i];
    bool group = main && L->plan.group;
    if (R == L->plan.main && L->plan.smem_bk && em_reduce_smem(L, R, nl, lanes, out)) return;
    if (R == L->plan.main && L->plan.tc.kind && tt_tc_reduce(L, R, nl, lanes, out)) return;
    int64_t ru = main ? L->plan.red_up : 1;
    if (ru < 1) ru = 1;
    int axes[MAX_RLOOPS];
    int64_t rtot;
    int na = em_red_axes(R, axes, &rtot);
    if (ru > 1 && (!na || src->shape[axes[na - 1]] % ru || src->sym[axes[na - 1]])) ru = 1;
    int nacc = nl * (int)ru;
    hcq_ir_ref *acc = calloc((size_t)nacc, sizeof *acc);
    tt_lane *sub = calloc((size_t)nacc, sizeof *sub);
    hcq_ir_ref *vals = calloc((size_t)nacc * 2, sizeof *vals);
    if (!acc || !sub || !vals) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto done;
    }
    hcq_ir_ref ident = tt_irb_val(b, adt, tt_reduce_neutral(rop, adt));
    for (int i = 0; i < nacc; i++) acc[i] = tt_irb_acc(b, ident);

    hcq_ir_ref loops[MAX_RLOOPS];
    int nloops = 0;
    const tt_sx *ax_idx[MAX_RLOOPS][16];
    hcq_ir_ref rgate = NONE;
    double save_mult = L->mult;
    if (group) { /* one loop over every reduced element, L work-items apart */
        uint32_t Lg = L->plan.L;
        int64_t it = (rtot + Lg - 1) / Lg;
        hcq_ir_ref j = tt_irb_range(b, i32c(L, 0), i32c(L, it));
        loops[nloops++] = j;
        L->mult *= (double)it;
        const tt_sx *jv = tt_sx_var(&L->sym, 0, it - 1, j);
        const tt_sx *lv = tt_sx_var(&L->sym, 0, Lg - 1, L->lid);
        const tt_sx *r = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, jv, Lg), lv);
        if (rtot % Lg) rgate = tt_irb_binary(b, HCQ_OP_CMPLT, tt_em_sx(L, r), i32c(L, rtot));
        int64_t st = 1;
        for (int a = na - 1; a >= 0; a--) {
            int64_t s = src->shape[axes[a]];
            ax_idx[a][0] = tt_sx_mod(&L->sym, tt_sx_div(&L->sym, r, st), s);
            st *= s;
        }
    } else {
        for (int a = 0; a < na; a++) {
            int64_t s = src->shape[axes[a]];
            bool up = a == na - 1 && ru > 1;
            int64_t trip = up ? s / ru : s;
            /* a variable dim: its shape entry is the upper bound; the loop
             * runs to the value (never upcast: tt_lower's plan) */
            int sv = src->sym[axes[a]];
            hcq_ir_ref r = tt_irb_range(b, i32c(L, 0), sv ? tt_var_param(L, sv) : i32c(L, trip));
            loops[nloops++] = r;
            L->mult *= (double)trip;
            const tt_sx *v = tt_sx_var(&L->sym, 0, trip - 1, r);
            for (int u = 0; u < (up ? ru : 1); u++)
                ax_idx[a][u] = up ? tt_sx_addc(&L->sym, tt_sx_mulc(&L->sym, v, ru), u) : v;
        }
    }
    for (int l = 0; l < nl; l++)
        for (int u = 0; u < ru; u++) {
            tt_lane *s = &sub[l * ru + u];
            memcpy(s->idx, lanes[l].idx, sizeof s->idx);
            for (int a = 0; a < na; a++) s->idx[axes[a]] = ax_idx[a][a == na - 1 ? u : 0];
            for (int d = 0; d < src->ndim; d++)
                if ((R->axes & (1u << d)) && src->shape[d] == 1) s->idx[d] = tt_sx_const(&L->sym, 0);
            s->gate = tt_irb_and(b, lanes[l].gate, rgate);
        }
    /* sum(a * b) accumulates with a fused multiply-add */
    bool mulacc = rop == TT_R_SUM && src->op == TT_MUL && hcq_dtype_is_float(adt) && src->dtype == adt && rgate == NONE;
    if (mulacc) {
        tt_em(L, src->src[0], nacc, sub, vals);
        tt_em(L, src->src[1], nacc, sub, vals + nacc);
        for (int i = 0; i < nacc; i++) {
            L->flops += 2 * L->mult;
            tt_irb_assign(b, acc[i], tt_irb_mulacc(b, vals[i], vals[nacc + i], acc[i]));
        }
    } else {
        tt_em(L, src, nacc, sub, vals);
        for (int i = 0; i < nacc; i++) {
            hcq_ir_ref v = tt_irb_cast(b, adt, vals[i]);
            if (rgate != NONE) v = tt_irb_where(b, rgate, v, ident);
            tt_irb_assign(b, acc[i], reduce_op(L, rop, acc[i], v));
        }
    }
    for (int i = nloops - 1; i >= 0; i--) tt_irb_endrange(b, loops[i]);
    L->mult = save_mult;
    for (int l = 0; l < nl; l++) { /* combine the accumulators of a lane pairwise */
        hcq_ir_ref *a = &acc[l * ru];
        for (int64_t w = 1; w < ru; w *= 2)
            for (int64_t u = 0; u + w < ru; u += 2 * w) a[u] = reduce_op(L, rop, a[u], a[u + w]);
        hcq_ir_ref r = a[0];
        if (group) { /* tree through local memory; every work-item reads the result */
            hcq_ir_ref lds = L->lds;
            uint32_t Lg = L->plan.L;
            if (L->lds_used) tt_irb_barrier(b); /* every work-item has read the last result */
            L->lds_used = true;
            tt_irb_store(b, lds, L->lid, r, NONE);
            tt_irb_barrier(b);
            for (uint32_t s = Lg / 2; s >= 1; s /= 2) {
                hcq_ir_ref iff = tt_irb_if(b, tt_irb_binary(b, HCQ_OP_CMPLT, L->lid, i32c(L, s)));
                hcq_ir_ref x = tt_irb_load(b, lds, L->lid, NONE, NONE);
                hcq_ir_ref y = tt_irb_load(b, lds, tt_irb_binary(b, HCQ_OP_ADD, L->lid, i32c(L, s)), NONE, NONE);
                tt_irb_store(b, lds, L->lid, reduce_op(L, rop, x, y), NONE);
                tt_irb_endif(b, iff);
                tt_irb_barrier(b);
            }
            r = tt_irb_load(b, lds, i32c(L, 0), NONE, NONE);
        }
        out[l] = tt_irb_cast(b, odt, r);
    }
done:
    free(acc);
    free(sub);
    free(vals);
}

/* ** gather: a loaded index along one axis */
static void em_gather(tt_lw *L, tt_node *g, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    tt_node *table = g->src[0];
    int ax = (int)g->axes;
    int64_t size = table->shape[ax];
    hcq_ir_ref *iv = calloc((size_t)nl * 2, sizeof *iv);
    tt_lane *sub = calloc((size_t)nl, sizeof *sub);
    if (!iv || !sub) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto done;
    }
    tt_em(L, g->src[1], nl, lanes, iv);
    hcq_ir_ref *valid = iv + nl;
    /* a variable table dim (symdim.c): in range below its value, not the
     * upper bound its shape entry holds while lowering */
    hcq_ir_ref bound = table->sym[ax] ? tt_var_param(L, table->sym[ax]) : i32c(L, size);
    for (int l = 0; l < nl; l++) {
        hcq_ir_ref v = iv[l];
        valid[l] = tt_irb_and(b, tt_irb_binary(b, HCQ_OP_CMPLT, i32c(L, -1), v), tt_irb_binary(b, HCQ_OP_CMPLT, v, bound));
        memcpy(sub[l].idx, lanes[l].idx, sizeof sub[l].idx);
        sub[l].idx[ax] = tt_sx_var(&L->sym, 0, size > 0 ? size - 1 : 0, v);
        sub[l].gate = tt_irb_and(b, lanes[l].gate, valid[l]);
    }
    tt_em(L, table, nl, sub, out);
    hcq_ir_ref zero = tt_irb_val(b, (hcq_dtype)g->dtype, (tt_val){.i = 0});
    for (int l = 0; l < nl; l++) out[l] = tt_irb_where(b, valid[l], out[l], zero);
done:
    free(iv);
    free(sub);
}

/* ** views */
static void em_view(tt_lw *L, tt_node *vn, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    tt_node *src = vn->src[0];
    hcq_ir_ref pad = tt_irb_val(b, (hcq_dtype)vn->dtype, vn->cv);
    tt_lane *sub = calloc((size_t)nl, sizeof *sub);
    hcq_ir_ref *valid = calloc((size_t)nl * 2, sizeof *valid), *vals = valid + nl;
    int *map = calloc((size_t)nl, sizeof *map);
    if (!sub || !valid || !map) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto done;
    }
    int m = 0;
    for (int l = 0; l < nl; l++) {
        int st = tt_view_apply(L, vn, lanes[l].idx, sub[m].idx, &valid[l]);
        map[l] = st ? m : -1;
        if (!st) continue;
        sub[m].gate = tt_irb_and(b, lanes[l].gate, valid[l]);
        m++;
    }
    if (m) tt_em(L, src, m, sub, vals);
    for (int l = 0; l < nl; l++) {
        if (map[l] < 0) out[l] = pad;
        else out[l] = valid[l] == NONE ? vals[map[l]] : tt_irb_where(b, valid[l], vals[map[l]], pad);
    }
done:
    free(sub);
    free(valid);
    free(map);
}

/* ** elementwise */
static hcq_ir_ref em_alu(tt_lw *L, const tt_node *n, const hcq_ir_ref *s)
{
    tt_irb *b = &L->b;
    hcq_dtype dt = (hcq_dtype)n->dtype;
    if (hcq_dtype_is_float(dt) && n->op != TT_CAST && n->op != TT_BITCAST) L->flops += L->mult;
    static const hcq_op un[TT_OP_COUNT] = {[TT_NEG] = HCQ_OP_NEG,   [TT_EXP2] = HCQ_OP_EXP2,   [TT_LOG2] = HCQ_OP_LOG2,
                                           [TT_SIN] = HCQ_OP_SIN,   [TT_SQRT] = HCQ_OP_SQRT,   [TT_RECIP] = HCQ_OP_RECIP,
                                           [TT_TRUNC] = HCQ_OP_TRUNC};
    static const hcq_op bin[TT_OP_COUNT] = {[TT_ADD] = HCQ_OP_ADD,     [TT_SUB] = HCQ_OP_SUB,     [TT_MUL] = HCQ_OP_MUL,
                                            [TT_FDIV] = HCQ_OP_FDIV,   [TT_IDIV] = HCQ_OP_IDIV,   [TT_MOD] = HCQ_OP_MOD,
                                            [TT_MAX] = HCQ_OP_MAX,     [TT_CMPLT] = HCQ_OP_CMPLT, [TT_CMPNE] = HCQ_OP_CMPNE,
                                            [TT_AND] = HCQ_OP_AND,     [TT_OR] = HCQ_OP_OR,       [TT_XOR] = HCQ_OP_XOR,
                                            [TT_SHL] = HCQ_OP_SHL,     [TT_SHR] = HCQ_OP_SHR};
    switch ((tt_op)n->op) {
    case TT_CAST: return tt_irb_cast(b, dt, s[0]);
    case TT_BITCAST: return tt_irb_bitcast(b, dt, s[0]);
    case TT_NOT: return tt_irb_binary(b, HCQ_OP_XOR, s[0], dt == HCQ_BOOL ? tt_irb_bool(b, true) : tt_irb_int(b, dt, -1));
    case TT_WHERE: return tt_irb_where(b, s[0], s[1], s[2]);
    case TT_MAX:
        if (tt_irb_dtype(b, s[0]) == HCQ_BOOL) return tt_irb_binary(b, HCQ_OP_OR, s[0], s[1]);
        return tt_irb_binary(b, HCQ_OP_MAX, s[0], s[1]);
    default: break;
    }
    if (un[n->op]) return tt_irb_unary(b, un[n->op], s[0]);
    return tt_irb_binary(b, bin[n->op], s[0], s[1]);
}

/* A buffer's lanes with a vector plan: runs of consecutive elements as
 * vector loads (vec.c). */
static void em_load_vec(tt_lw *L, const tt_node *n, hcq_ir_ref p, hcq_ir_ref zero, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    const tt_sx **idx = malloc((size_t)nl * sizeof *idx);
    hcq_ir_ref *gate = malloc((size_t)nl * sizeof *gate);
    if (!idx || !gate) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        for (int l = 0; l < nl; l++) out[l] = NONE;
    } else {
        char what[32] = "a buffer";
        for (uint32_t i = 0; i < L->key->nin; i++)
            if (L->key->in[i].buf == n->buf) snprintf(what, sizeof what, "input %u", i);
        for (int l = 0; l < nl; l++) {
            idx[l] = tt_mem_linear(L, n, lanes[l].idx);
            gate[l] = lanes[l].gate;
        }
        tt_vec_load(L, p, nl, idx, gate, zero, out, what);
    }
    free(idx);
    free(gate);
}

static void em_miss(tt_lw *L, tt_node *n, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    tt_irb *b = &L->b;
    hcq_dtype dt = (hcq_dtype)n->dtype;
    switch ((tt_op)n->op) {
    case TT_BUF: {
        hcq_ir_ref p = tt_param_of(L, n->buf, NULL), zero = tt_irb_val(b, dt, (tt_val){.i = 0});
        bool empty = tt_numel(n->shape, n->ndim) == 0;
        if (L->plan.vec > 1 && !empty && p != NONE) {
            em_load_vec(L, n, p, zero, nl, lanes, out);
            return;
        }
        for (int l = 0; l < nl; l++) {
            if (empty || p == NONE) {
                out[l] = zero;
                if (p == NONE && !empty && !L->err) L->err = base_err(HCQ_ESTATE, "lowering: a buffer has no param");
                continue;
            }
            hcq_ir_ref idx = tt_em_sx(L, tt_mem_linear(L, n, lanes[l].idx));
            out[l] = tt_irb_load(b, p, idx, lanes[l].gate, zero);
        }
        return;
    }
    case TT_CONST:
        for (int l = 0; l < nl; l++) out[l] = tt_irb_val(b, dt, n->cv);
        return;
    case TT_INDEX:
        for (int l = 0; l < nl; l++) out[l] = tt_em_sx(L, lanes[l].idx[n->axes]);
        return;
    case TT_SYMVAL:
        for (int l = 0; l < nl; l++) out[l] = tt_var_param(L, (int)n->axes);
        return;
    case TT_RAND:
        for (int l = 0; l < nl; l++) out[l] = em_rand(L, n, &lanes[l]);
        return;
    case TT_VIEW: em_view(L, n, nl, lanes, out); return;
    case TT_REDUCE: em_reduce(L, n, nl, lanes, out); return;
    case TT_GATHER: em_gather(L, n, nl, lanes, out); return;
    default: break;
    }
    hcq_ir_ref *s = calloc((size_t)nl * n->nsrc + 1, sizeof *s);
    if (!s) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        return;
    }
    /* the sources leading to the main reduction first (tt_on_main_path) */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n->nsrc; i++)
            if (tt_on_main_path(L, n->src[i]) == !pass) tt_em(L, n->src[i], nl, lanes, s + i * nl);
    for (int l = 0; l < nl; l++) {
        hcq_ir_ref a[3] = {s[l], n->nsrc > 1 ? s[nl + l] : NONE, n->nsrc > 2 ? s[2 * nl + l] : NONE};
        out[l] = em_alu(L, n, a);
    }
    free(s);
}

void tt_em(tt_lw *L, tt_node *n, int nl, const tt_lane *lanes, hcq_ir_ref *out)
{
    if (L->err) {
        for (int l = 0; l < nl; l++) out[l] = NONE;
        return;
    }
    /* lanes already emitted (and still in scope) are reused; the same
     * index twice in one call is emitted once (a local hash finds it) */
    uint32_t hcap = 16;
    while (hcap < 2u * (uint32_t)nl) hcap *= 2;
    int *miss = malloc((size_t)nl * sizeof *miss), *slot = malloc(hcap * sizeof *slot);
    tt_lane *ml = malloc((size_t)nl * sizeof *ml);
    hcq_ir_ref *mo = malloc((size_t)nl * sizeof *mo);
    tt_lane *canon = NULL;
    if (!miss || !ml || !mo || !slot) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto done;
    }
    memset(slot, 0xff, hcap * sizeof *slot);
    /* dims a view broadcasts (stride 0, no mask) do not change its value:
     * lanes that differ only there are one lane (a matmul operand is read
     * once per row or column of the tile, not once per output) */
    if (n->op == TT_VIEW) {
        const tt_view *v = &n->view;
        bool any = false;
        for (int d = 0; d < v->ndim; d++)
            any = any || (!v->strides[d] && v->shape[d] > 1 && (!v->mask || (v->lo[d] == 0 && v->hi[d] == v->shape[d])));
        if (any && (canon = malloc((size_t)nl * sizeof *canon))) {
            const tt_sx *zero = tt_sx_const(&L->sym, 0);
            for (int l = 0; l < nl; l++) {
                canon[l] = lanes[l];
                for (int d = 0; d < v->ndim; d++)
                    if (!v->strides[d] && (!v->mask || (v->lo[d] == 0 && v->hi[d] == v->shape[d]))) canon[l].idx[d] = zero;
            }
            lanes = canon;
        }
    }
    int m = 0;
    for (int l = 0; l < nl; l++) {
        bool found;
        memo_ent *e = memo_slot(L, n, &lanes[l], &found);
        if (found && tt_irb_visible(&L->b, e->val)) {
            out[l] = e->val;
            miss[l] = -1;
            continue;
        }
        uint32_t h = memo_hash(n, &lanes[l]) & (hcap - 1);
        int dup = -1;
        for (; slot[h] >= 0; h = (h + 1) & (hcap - 1)) {
            const tt_lane *o = &ml[slot[h]];
            if (o->gate == lanes[l].gate && !memcmp(o->idx, lanes[l].idx, n->ndim * sizeof *o->idx)) {
                dup = slot[h];
                break;
            }
        }
        if (dup >= 0) {
            miss[l] = -2 - dup;
            continue;
        }
        slot[h] = m;
        miss[l] = m;
        ml[m++] = lanes[l];
    }
    if (m) em_miss(L, n, m, ml, mo);
    for (int l = 0; l < nl; l++) {
        bool found;
        memo_ent *e;
        if (miss[l] == -1) continue;
        int j = miss[l] >= 0 ? miss[l] : -2 - miss[l];
        out[l] = mo[j];
        if (miss[l] < 0 || mo[j] == NONE) continue;
        e = memo_slot(L, n, &lanes[l], &found);
        if (!e) continue;
        if (!found) L->mcount++;
        e->n = n;
        e->gen = L->mgen;
        e->gate = lanes[l].gate;
        memset(e->idx, 0, sizeof e->idx);
        memcpy(e->idx, lanes[l].idx, n->ndim * sizeof *e->idx);
        e->val = mo[j];
    }
done:
    free(canon);
    free(miss);
    free(slot);
    free(ml);
    free(mo);
}
