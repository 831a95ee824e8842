/* Lowering one scheduled node to a kernel: the plan (how work-items map to
 * output elements, what is upcast, how the main reduction runs), then the
 * skeleton (ids, lanes, stores) around the emitter.
 *
 * Plans, chosen from hcq_device_get_props only:
 *   - CPU-style targets ("cpu", "ir"): work-items are the iterations of a
 *     loop the C compiler vectorises, so elementwise kernels take one
 *     element per work-item in big groups. Reductions keep several outputs
 *     or several accumulators per work-item so the inner loop has
 *     independent vector work: a matmul-like reduction (one operand
 *     contiguous along an output dim the other does not move with) gets a
 *     register tile of up to 8 x 64 outputs; a reduction along a contiguous
 *     axis gets 16 accumulators; else a contiguous output dim is upcast.
 *   - GPU-style targets: many work-items; a large reduction to few outputs
 *     runs a work-group per output that reduces through local memory; a
 *     matmul-like one computes 4 x 4 outputs per work-item, staged
 *     through shared memory in blocks of such tiles where it can be
 *     (smem.c; plan.c's smem_rules, emit.c's em_reduce_smem); loads and
 *     stores move 16 bytes at a time where they are consecutive and
 *     aligned (gpu_vector, vec.c); one of f16 or bf16 inputs runs on the
 *     tensor cores where the target has and writes a kind for them (tc.c).
 * Launch dims stay within the device's max block, group and grid sizes. */
#include "tensor/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE HCQ_IR_NONE

/* ** analysis: how each load's index moves with the output dims */
#define MAX_ACC 32
typedef struct analysis {
    const tt_sx *ovar[TT_MAX_DIMS];
    const tt_sx *rvar; /* the main reduction's innermost axis */
    const tt_sx *acc[MAX_ACC];
    int n, visits;
    bool in_main; /* only loads inside the main reduction's loop matter */
} analysis;

static void an_walk(tt_lw *L, analysis *A, tt_node *n, const tt_sx *const *idx)
{
    if (A->n >= MAX_ACC || ++A->visits > 4096) return;
    const tt_sx *sub[TT_MAX_DIMS];
    switch ((tt_op)n->op) {
    case TT_BUF:
        if (A->in_main) A->acc[A->n++] = tt_linear(L, idx, n->shape, n->ndim);
        return;
    case TT_CONST:
    case TT_INDEX:
    case TT_RAND: return;
    case TT_VIEW:
        tt_view_apply(L, n, idx, sub, NULL);
        an_walk(L, A, n->src[0], sub);
        return;
    case TT_REDUCE: {
        tt_node *s = n->src[0];
        int last = -1;
        for (int d = 0; d < s->ndim; d++) {
            sub[d] = idx[d];
            if ((n->axes & (1u << d)) && s->shape[d] > 1) {
                sub[d] = tt_sx_var(&L->sym, 0, s->shape[d] - 1, NONE);
                last = d;
            }
        }
        bool was = A->in_main;
        if (n == L->plan.main) {
            if (last >= 0) A->rvar = sub[last];
            A->in_main = true;
        }
        an_walk(L, A, s, sub);
        A->in_main = was;
        return;
    }
    case TT_GATHER:
        an_walk(L, A, n->src[1], idx);
        memcpy(sub, idx, sizeof sub);
        sub[n->axes] = tt_sx_var(&L->sym, 0, n->src[0]->shape[n->axes], NONE);
        an_walk(L, A, n->src[0], sub);
        return;
    default:
        for (int i = 0; i < n->nsrc; i++) an_walk(L, A, n->src[i], idx);
        return;
    }
}

static bool coef(const tt_sx *lin, const tt_sx *var, int64_t *k)
{
    if (!lin || !var) return false;
    return tt_sx_coef(lin, var->t[0].at, k);
}

/* The one reduction the root reaches through elementwise ops and views
 * (not through another reduction or a gather): it is emitted once per
 * work-item, at the top level of the kernel, for all lanes together. */
static void find_main(tt_node *n, tt_node **found, int *count, int depth)
{
    if (*count > 1 || depth > 64) return;
    if (n->op == TT_REDUCE) {
        if (*found != n) {
            *found = n;
            ++*count;
        }
        return;
    }
    if (n->op == TT_BUF || n->op == TT_GATHER || n->op == TT_CONST) return;
    for (int i = 0; i < n->nsrc; i++) find_main(n->src[i], found, count, depth + 1);
}

/* A register tile for a matmul-like reduction: ur outputs along dr (the
 * dim the contiguous operand does not move with) times uv along dv (the
 * contiguous one). CPU: the most outputs per work-item whose accumulators
 * fit 24 vector registers of 16 f32, uv a multiple of 8 so the loads
 * vectorize, enough work-items left for every core; both must divide
 * their dims (a ragged edge would gate every load). GPU: 4 x 4 or less. */
static void pick_tile(tt_plan *P, bool cpu, const int64_t *S, uint64_t n, int dv, int dr, uint32_t cores)
{
    static const int64_t cuv[] = {64, 48, 40, 32, 24, 16, 8}, cur[] = {8, 6, 5, 4, 3, 2};
    static const int64_t guv[] = {4, 2}, gur[] = {4, 2};
    const int64_t *uvs = cpu ? cuv : guv, *urs = cpu ? cur : gur;
    size_t nuv = cpu ? BASE_ARRAY_LEN(cuv) : BASE_ARRAY_LEN(guv), nur = cpu ? BASE_ARRAY_LEN(cur) : BASE_ARRAY_LEN(gur);
    int64_t best_uv = 0, best_ur = 0;
    double best = 0;
    for (size_t a = 0; a < nuv; a++)
        for (size_t b = 0; b < nur; b++) {
            int64_t uv = uvs[a], ur = urs[b];
            int64_t rows = (S[dr] + ur - 1) / ur * ur; /* a ragged edge wastes rows - S[dr] */
            if (S[dv] % uv || (S[dr] % ur && (!cpu || (rows - S[dr]) * 20 > S[dr]))) continue;
            if (cpu && ((uv + 15) / 16) * ur > 24) continue;
            if (cpu && n / (uint64_t)(uv * ur) < 2ull * (cores ? cores : 1)) continue;
            double score = (double)(uv * ur) * (double)S[dr] / (double)rows;
            if (score > best || (score == best && uv > best_uv)) {
                best = score;
                best_uv = uv;
                best_ur = ur;
            }
        }
    if (!best_uv) return;
    P->up_dim[0] = dr;
    P->up[0] = best_ur;
    P->up_dim[1] = dv;
    P->up[1] = best_uv;
    P->ragged = S[dr] % best_ur != 0;
    if (cpu) P->cblock = -1; /* a CPU tile: cpu_tile_walk chooses its walk and group size */
}

static int64_t largest_divisor(uint64_t n, uint64_t max)
{
    for (uint64_t d = max; d > 1; d--)
        if (n % d == 0) return (int64_t)d;
    return 1;
}


/* How a CPU register tile's work-items are grouped and walked.
 *
 * Group size by work, not by count: a work-item runs ur x uv x rsize FMAs
 * (a 6 x 64 x 2048 tile is 1.6 MFLOP, some 15 us on one core), so a few
 * items per group, about 2^20 flops, lets the device's split (a launch
 * starts on one thread and hands the rest to the pool after 20 us) happen
 * on time and the pool balance the last groups; a divisor of the items,
 * so no group is partial and no load needs a gate.
 *
 * The walk: consecutive work-items (and so the cores, which take groups in
 * order) walk dv, sharing the ur-row panel of the operand that moves with
 * dr and reading a fresh rsize x uv column panel of the other each. When
 * that other operand (rsize x S[dv]) is larger than an eighth of the
 * last-level cache, a row strip's walk streams all of it and it no longer
 * survives in the cache until the next strip (a 2048^3 f32 matmul: A, B and
 * C are 48 MiB against a 32 MiB L3, and B came from DRAM). So the walk goes
 * in column blocks of cblock tiles whose panels fit that eighth: all row
 * strips of one block, then the next block; the block stays in the cache
 * and the row panels are read S[dv] / (cblock x uv) times instead of once.
 * (Reusing the column panel from L2 instead needs it packed contiguously: a
 * panel of a row-major matrix has rows 4-8 KiB apart that share a few L2
 * sets. Not done.) */
static void cpu_tile_walk(tt_plan *P, const int64_t *S, uint64_t rsize, hcq_dtype dt, uint64_t cache_bytes)
{
    uint64_t per = 2ull * (uint64_t)(P->up[0] * P->up[1]) * rsize, want = per ? (1ull << 20) / per : 1;
    if (want > 64) want = 64;
    if (want < 1) want = 1;
    P->L = (uint32_t)largest_divisor(P->items, want);
    P->cblock = 0;
    if (!cache_bytes) cache_bytes = 8ull << 20; /* not known: a common last-level size */
    uint64_t panel = rsize * (uint64_t)P->up[1] * hcq_dtype_size(dt);
    int64_t tv = tt_plan_tiles(S, P, P->up_dim[1]), tr = tt_plan_tiles(S, P, P->up_dim[0]);
    if (tr < 2 || panel * (uint64_t)tv <= cache_bytes / 8) return;
    uint64_t fit = cache_bytes / 8 / (panel ? panel : 1);
    P->cblock = largest_divisor((uint64_t)tv, fit ? fit : 1);
}

/* GPU targets: 16-byte loads and stores where they fit (vec.c). A
 * register tile's rows are its upcast1 consecutive columns: vectors of
 * the widest power of 2 dividing them within 16 bytes of the output's
 * dtype (4 x f32 of a 4 x 4 tile). An elementwise kernel computes that
 * many consecutive outputs along its innermost dim per work-item (an
 * upcast of 16 bytes, halved until it divides the dim): a warp then reads
 * and writes 512 contiguous bytes per instruction instead of 128, with a
 * quarter of the instructions and index arithmetic. Inputs whose runs are
 * not aligned (a view at an odd offset) stay scalar, so the plan needs no
 * look at the views. Reductions without a tile, group reductions and bool
 * outputs (no bool lanes) keep their plans. CPU-style targets never take
 * a width: the C compiler vectorises their loops, and their kernels and
 * cache keys stay as they were. */
static void gpu_vector(tt_plan *P, const tt_node *root)
{
    size_t sz = hcq_dtype_size((hcq_dtype)root->dtype);
    if (root->dtype == HCQ_BOOL || !sz || sz > HCQ_IR_MAX_ACCESS_BYTES / 2) return;
    int64_t w = HCQ_IR_MAX_ACCESS_BYTES / (int64_t)sz;
    if (P->up_dim[1] >= 0) {
        while (w >= 2 && P->up[1] % w) w /= 2;
        if (w >= 2) P->vec = w;
        return;
    }
    if (P->main || P->up_dim[0] >= 0) return;
    int d = root->ndim - 1;
    while (d >= 0 && root->shape[d] == 1) d--;
    if (d < 0 || root->sym[d]) return;
    while (w >= 2 && root->shape[d] % w) w /= 2;
    if (w < 2) return;
    P->up_dim[1] = d;
    P->up[1] = w;
    P->vec = w;
}

/* The kernel's optimization space: what every plan of it shares. */
static void fill_space(tt_lw *L, tt_node *root, uint64_t rsize, bool main_sym)
{
    tt_space *sp = &L->space;
    const hcq_device_props *pr = &L->ctx->props;
    tt_node *m = L->plan.main;
    memset(sp, 0, sizeof *sp);
    sp->ndim = root->ndim;
    for (int d = 0; d < root->ndim; d++) {
        sp->shape[d] = root->shape[d];
        sp->sym[d] = root->sym[d];
    }
    sp->main = m;
    sp->rsize = rsize;
    for (int d = 0; m && d < m->src[0]->ndim; d++)
        if ((m->axes & (1u << d)) && m->src[0]->shape[d] > 1) sp->rin = m->src[0]->shape[d];
    sp->main_sym = main_sym;
    sp->cpu = L->ctx->cpu_style;
    sp->maxl = pr->max_threads_per_group < pr->max_block[0] ? pr->max_threads_per_group : pr->max_block[0];
    if (!sp->maxl) sp->maxl = 1;
    sp->max_local_bytes = pr->max_local_bytes;
    /* group mode's accumulators: f16/bf16 sums in f32 (emit.c's em_reduce) */
    sp->acc_bytes = m ? (uint32_t)hcq_dtype_size((m->dtype == HCQ_F16 || m->dtype == HCQ_BF16) && m->rop != TT_R_MAX ? HCQ_F32
                                                                                                          : (hcq_dtype)m->dtype)
                      : 4;
    sp->out_bytes = (uint32_t)hcq_dtype_size((hcq_dtype)root->dtype);
    tt_smem_space(L, root, sp, main_sym);
    tt_tc_space(L, root, sp);
}

/* The heuristics: today's plan for the kernel, which tt_lower records as
 * the default choice list (plan.c). */
static void choose(tt_lw *L, tt_node *root)
{
    tt_plan *P = &L->plan;
    const hcq_device_props *pr = &L->ctx->props;
    int nd = root->ndim;
    const int64_t *S = root->shape;
    uint64_t n = (uint64_t)tt_numel(S, nd);
    memset(P, 0, sizeof *P);
    P->up_dim[0] = P->up_dim[1] = -1;
    P->up[0] = P->up[1] = 1;
    P->red_up = 1;
    int count = 0;
    find_main(root, &P->main, &count, 0);
    if (count != 1) P->main = NULL;
    uint64_t rsize = 1;
    if (P->main)
        for (int d = 0; d < P->main->src[0]->ndim; d++)
            if (P->main->axes & (1u << d)) rsize *= (uint64_t)P->main->src[0]->shape[d];
    if (rsize <= 1) P->main = NULL;

    analysis A;
    memset(&A, 0, sizeof A);
    if (P->main) {
        for (int d = 0; d < nd; d++) A.ovar[d] = tt_sx_var(&L->sym, 0, S[d] > 0 ? S[d] - 1 : 0, NONE);
        an_walk(L, &A, root, A.ovar);
    }
    int64_t k;
    bool cpu = L->ctx->cpu_style;
    /* matmul-like: dv contiguous for some load, dr a dim those loads do not
     * move with but another load does */
    if (P->main) {
        for (int dv = nd - 1; dv >= 0 && P->up_dim[0] < 0; dv--) {
            bool vec = false;
            for (int i = 0; i < A.n; i++) vec = vec || (coef(A.acc[i], A.ovar[dv], &k) && k == 1);
            if (!vec || root->sym[dv]) continue; /* a variable dim is never upcast: its size is known at launch */
            for (int dr = nd - 1; dr >= 0 && P->up_dim[0] < 0; dr--) {
                if (dr == dv || S[dr] < 2 || root->sym[dr]) continue;
                bool ok = true, moves = false;
                for (int i = 0; i < A.n && ok; i++) {
                    int64_t kv, kr;
                    bool av = coef(A.acc[i], A.ovar[dv], &kv), ar = coef(A.acc[i], A.ovar[dr], &kr);
                    if (av && kv == 1 && !(ar && kr == 0)) ok = false;
                    if (ar && kr != 0) moves = true;
                }
                if (ok && moves) pick_tile(P, cpu, S, n, dv, dr, pr->compute_units);
            }
        }
    }
    bool main_sym = false; /* the main reduction runs over a variable dim: a plain loop to its value */
    for (int d = 0; P->main && d < P->main->src[0]->ndim; d++) main_sym = main_sym || ((P->main->axes & (1u << d)) && P->main->src[0]->sym[d]);
    fill_space(L, root, rsize, main_sym);
    if (P->main && !cpu && !main_sym && P->up_dim[0] < 0 && rsize >= 256 && n <= 64ull * (pr->compute_units ? pr->compute_units : 1)) {
        uint32_t lg = 256;
        if (lg > pr->max_threads_per_group) lg = pr->max_threads_per_group;
        if (lg > pr->max_block[0]) lg = pr->max_block[0];
        while (lg > 1 && (uint64_t)lg * 2 > rsize) lg /= 2;
        uint32_t es = 4;
        while (lg >= 32 && (uint64_t)lg * es > pr->max_local_bytes) lg /= 2;
        if (lg >= 32 && (lg & (lg - 1)) == 0) {
            P->group = true;
            P->L = lg;
        }
    }
    if (P->main && cpu && P->up_dim[0] < 0) {
        int64_t rin = 0;
        for (int d = 0; d < P->main->src[0]->ndim; d++)
            if ((P->main->axes & (1u << d)) && P->main->src[0]->shape[d] > 1) rin = P->main->src[0]->shape[d];
        bool contig = false;
        for (int i = 0; i < A.n; i++) contig = contig || (coef(A.acc[i], A.rvar, &k) && k == 1);
        if (contig && rin % 8 == 0 && !main_sym) P->red_up = rin % 16 == 0 ? 16 : 8;
        /* with accumulators along the reduction, also compute up to 4 x 4
         * outputs along dims some load is reused over (coefficient 0) and
         * another moves with: x @ w^T reads a row of x for 4 rows of w */
        for (int d = nd - 1, u = 0; d >= 0 && P->red_up > 1 && u < 2; d--) {
            bool reused = false, moves = false;
            for (int i = 0; i < A.n; i++) {
                bool aff = coef(A.acc[i], A.ovar[d], &k);
                reused = reused || (aff && k == 0);
                moves = moves || !aff || k != 0;
            }
            int64_t f = S[d] % 4 == 0 ? 4 : S[d] % 2 == 0 ? 2 : 1;
            if (root->sym[d] || !reused || !moves || f == 1 || n / (uint64_t)(P->up[0] * P->up[1] * f) < 2ull * pr->compute_units) continue;
            P->up_dim[u] = d;
            P->up[u++] = f;
        }
        /* a reduction across rows (sum over axis 0): each work-item keeps a
         * strip of contiguous outputs and adds one row segment of the
         * strip per step. Wide strips (up to 128 floats: 8 vector
         * registers of accumulators, 512 bytes of each row) keep the walk
         * down the rows a few long streams the prefetcher follows, instead
         * of one cache line per page (a 16-float strip of a 4096-wide f32
         * matrix reads 64 bytes every 16 KiB); narrower when the strips
         * would leave fewer than 4 per core. Each output is still summed
         * row by row, so the strip width does not change any result. */
        for (int dv = nd - 1; dv >= 0 && P->red_up == 1 && P->up_dim[1] < 0; dv--) {
            if (S[dv] % 8 || root->sym[dv]) continue;
            bool vec = false;
            for (int i = 0; i < A.n; i++) vec = vec || (coef(A.acc[i], A.ovar[dv], &k) && k == 1);
            if (vec) {
                int64_t w = S[dv] % 16 == 0 ? 16 : 8;
                uint64_t cores = pr->compute_units ? pr->compute_units : 1;
                while (w < 128 && S[dv] % (w * 2) == 0 && n / (uint64_t)(P->up[0] * w * 2) >= 4 * cores) w *= 2;
                P->up_dim[1] = dv;
                P->up[1] = w;
            }
        }
    }
    if (!cpu && !P->group) gpu_vector(P, root);
    uint64_t items = 1;
    for (int d = 0; d < nd; d++) {
        int64_t t = S[d];
        for (int u = 0; u < 2; u++)
            if (P->up_dim[u] == d) t = (t + P->up[u] - 1) / P->up[u];
        items *= (uint64_t)t;
    }
    P->items = items;
    uint32_t maxl = pr->max_threads_per_group < pr->max_block[0] ? pr->max_threads_per_group : pr->max_block[0];
    if (!maxl) maxl = 1;
    if (P->group) return;
    uint64_t want;
    if (cpu && !P->main) {
        want = 1024;
    } else if (cpu && P->cblock) {
        cpu_tile_walk(P, S, rsize, (hcq_dtype)P->main->dtype, pr->cache_bytes);
        want = P->L;
    } else if (cpu) { /* enough groups for every worker thread, a few each */
        uint64_t t = pr->compute_units ? pr->compute_units : 1;
        /* work-items that each stream a lot (a strip summed down many rows,
         * as in a sum over axis 0: 2 MiB an item at 4096 x 4096) get twice
         * as many groups a worker: a worker that was descheduled or drew
         * slower items hands more of its share to the others. The plan
         * search picked local(1) or local(2) over local(4) for that sum
         * (HCQ_BEAM=4 on the 2-core VM, 17-25 % faster, 2026-11-28). */
        uint64_t per = rsize * (uint64_t)(P->up[0] > 0 ? P->up[0] : 1) * (uint64_t)(P->up[1] > 0 ? P->up[1] : 1);
        want = items / ((per >= (1u << 18) ? 8 : 4) * t);
        if (want > 64) want = 64;
        if (want < 1) want = 1;
        int64_t d = largest_divisor(items, want);
        if ((uint64_t)d * 4 >= want) want = (uint64_t)d;
    } else {
        if (P->main && tt_tc_default(L, P, S, rsize, maxl)) {
            /* a tc plan takes no other choice but local (plan.c's tc rules):
             * the width gpu_vector gave the tile it replaced goes with it */
            P->vec = 0;
            P->vec_all = false;
            return;
        }
        if (P->main && tt_smem_default(L, P, S, rsize, maxl)) return;
        want = P->main ? 64 : 256;
    }
    if (want > maxl) want = maxl;
    if (want > items) want = items ? items : 1;
    P->L = (uint32_t)want;
}

/* Marks the nodes on paths from n to a main reduction (as find_main
 * walks); returns whether n is on one. */
static bool mark_path(tt_lw *L, tt_node *n, int depth)
{
    if (n->lstamp == L->pstamp) return n->lpath;
    n->lstamp = L->pstamp;
    n->lpath = false;
    bool on = n == L->plan.main;
    for (uint32_t i = 0; i < L->nmains && !on; i++) on = n == L->mains[i];
    if (!on && depth <= 64 && n->op != TT_REDUCE && n->op != TT_BUF && n->op != TT_GATHER && n->op != TT_CONST)
        for (int i = 0; i < n->nsrc; i++) on = mark_path(L, n->src[i], depth + 1) || on;
    n->lpath = on;
    return on;
}

static void make_name(const tt_plan *P, const tt_node *root, uint64_t rsize, char *out, size_t size)
{
    size_t pos = (size_t)snprintf(out, size, "%s", P->main ? "R" : "E");
    for (int d = 0; d < root->ndim && pos + 24 < size; d++) {
        int64_t s = root->shape[d];
        if (s == 1) continue; /* (a variable dim: v and its upper bound) */
        pos += (size_t)snprintf(out + pos, size - pos, root->sym[d] ? "_v%lld" : "_%lld", (long long)s);
    }
    if (P->main && pos + 24 < size) pos += (size_t)snprintf(out + pos, size - pos, "_r%llu", (unsigned long long)rsize);
    if ((P->up[0] > 1 || P->up[1] > 1) && pos + 24 < size)
        pos += (size_t)snprintf(out + pos, size - pos, "_u%lldx%lld", (long long)P->up[0], (long long)P->up[1]);
    if (P->red_up > 1 && pos + 12 < size) pos += (size_t)snprintf(out + pos, size - pos, "_a%lld", (long long)P->red_up);
    if (P->cblock > 0 && pos + 12 < size) pos += (size_t)snprintf(out + pos, size - pos, "_b%lld", (long long)P->cblock);
    if (P->smem_bk && pos + 24 < size) pos += (size_t)snprintf(out + pos, size - pos, "_s%lldc%u", (long long)P->smem_bk, P->smem_gv);
    if (P->vec > 1 && pos + 12 < size) pos += (size_t)snprintf(out + pos, size - pos, "_v%lld%s", (long long)P->vec, P->vec_all ? "a" : "");
    if (P->group && pos + 12 < size) pos += (size_t)snprintf(out + pos, size - pos, "_g%u", P->L);
    if (P->tc.kind && pos + 24 < size) /* tensor cores: blocks per warp, warps along m, group size */
        snprintf(out + pos, size - pos, "_tc%lldx%lldw%lldl%u%s%.0lld%s%.0lld", (long long)P->tc.bm, (long long)P->tc.bn, (long long)P->tc.wm,
                 P->L, P->tc.ki ? "k" : "", (long long)P->tc.ki, P->tc.sk ? "s" : "", (long long)P->tc.sk);
}

/* The outputs' stores with a vector plan: each output's lanes in order,
 * so a run of consecutive columns is one vector store (vec.c). (Without
 * one, tt_lower stores lane by lane as it always did: CPU kernels' IR is
 * unchanged.) */
static void store_vec(tt_lw *L, tt_node *const *roots, uint32_t nroots, const tt_lane *lanes, int nl, const hcq_ir_ref *vals,
                      hcq_ir_ref sgate, const hcq_ir_ref *row_ok, const hcq_ir_ref *col_ok)
{
    tt_irb *b = &L->b;
    const tt_plan *P = &L->plan;
    const tt_sx **idx = malloc((size_t)nl * sizeof *idx);
    hcq_ir_ref *gate = malloc((size_t)nl * sizeof *gate), *v = malloc((size_t)nl * sizeof *v);
    if (!idx || !gate || !v) {
        L->err = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto done;
    }
    for (int l = 0; l < nl; l++) {
        idx[l] = tt_mem_linear(L, roots[0], lanes[l].idx);
        gate[l] = tt_irb_and(b, tt_irb_and(b, sgate, row_ok[l / P->up[1]]), col_ok[l % P->up[1]]);
    }
    for (uint32_t r = 0; r < nroots && !L->err; r++) {
        char what[32];
        snprintf(what, sizeof what, "output %u", r);
        for (int l = 0; l < nl; l++) v[l] = tt_irb_cast(b, (hcq_dtype)roots[r]->dtype, vals[(size_t)r * nl + l]);
        tt_vec_store(L, L->pref[r], nl, idx, v, gate, what);
    }
done:
    free(idx);
    free(gate);
    free(v);
}

hcq_status tt_lower(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, const tt_key *key, tt_lowered *out)
{
    return tt_lower_opts(ctx, roots, nroots, key, NULL, out);
}

/* The plan from its choices, in one place: the heuristics' default list
 * (which must give back their own plan: checked, so the default kernels
 * stay exactly the heuristics' ones) or a forced one. */
static hcq_status apply_choices(tt_lw *L, const tt_opts *force)
{
    tt_plan planned = L->plan, applied;
    if (force)
        L->opts = *force;
    else
        tt_opts_from_plan(&planned, &L->opts);
    hcq_status s = tt_plan_apply(&L->space, &L->opts, &applied);
    if (s) return s;
    if (!force && !tt_plan_same(&planned, &applied))
        return base_err(HCQ_EFORMAT, "lowering: the default choice list does not give the heuristics' plan back (a bug in tensor/plan.c)");
    L->plan = applied;
    return HCQ_OK;
}

hcq_status tt_lower_opts(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, const tt_key *key, const tt_opts *force,
                         tt_lowered *out)
{
    tt_node *root = roots[0]; /* every root has its shape and loop structure (group.c) */
    memset(out, 0, sizeof *out);
    tt_lw *L = ctx->lw;
    if (!L) {
        if (!(L = ctx->lw = base_calloc(1, sizeof *L))) return HCQ_ENOMEM;
        tt_sym_init(&L->sym, &L->ar);
        L->mgen = 1;
    }
    /* reset the scratch, keeping its memory */
    tt_arena_reset(&L->ar);
    tt_sym_reset(&L->sym);
    tt_memo_reset(L);
    L->ctx = ctx;
    L->mult = 1;
    L->flops = 0;
    L->key = key;
    L->err = HCQ_OK;
    L->lid = L->lds = NONE;
    L->lds_used = false;
    memset(&L->sm, 0, sizeof L->sm);
    memset(&L->tc, 0, sizeof L->tc);
    memset(L->vsx, 0, sizeof L->vsx);
    /* variable dims (hcq_jit_dim) at their upper bound while lowering;
     * var: the variable of the stored tensors' outermost dim (the launch
     * size follows it; the other variable dims are gated) */
    tt_symsave *save = NULL;
    int var = 0;
    hcq_status s = tt_sym_substitute(ctx, roots, nroots, &save, &var);
    if (s) return s;
    int launch_dim = -1;
    for (int d = 0; var && d < root->ndim && launch_dim < 0; d++)
        if (root->shape[d] != 1) launch_dim = d;
    choose(L, root);
    s = apply_choices(L, force);
    if (s) {
        tt_sym_restore(save);
        return s;
    }
    tt_plan *P = &L->plan;
    L->nmains = 0;
    for (uint32_t r = 1; r < nroots && P->main; r++) {
        tt_node *m = NULL;
        int count = 0;
        find_main(roots[r], &m, &count, 0);
        if (count == 1 && m != P->main && tt_same_reduce(m, P->main)) L->mains[L->nmains++] = m;
    }
    if (++L->pstamp == 0) ++L->pstamp;
    for (uint32_t r = 0; r < nroots && P->main; r++) mark_path(L, roots[r], 0);
    uint64_t rsize = 1;
    if (P->main)
        for (int d = 0; d < P->main->src[0]->ndim; d++)
            if (P->main->axes & (1u << d)) rsize *= (uint64_t)P->main->src[0]->shape[d];
    make_name(P, root, rsize, out->name, sizeof out->name);
    if (nroots > 1) {
        size_t len = strlen(out->name);
        if (len + 8 < sizeof out->name) snprintf(out->name + len, sizeof out->name - len, "_o%u", nroots);
    }
    if (hcq_debug_level() >= 1) {
        char words[256];
        tt_opts_format(&L->opts, words, sizeof words);
        base_log(1, "%s: kernel %s plan%s: %s", ctx->props.id, out->name, force ? "" : " (default)", words);
    }
    L->nout = nroots;
    s = tt_irb_init(&L->b, out->name);
    if (s) goto fail;
    tt_irb *b = &L->b;
    for (uint32_t r = 0; r < nroots; r++) L->pref[r] = tt_irb_param(b, (hcq_dtype)roots[r]->dtype);
    for (uint32_t i = 0; i < key->nin; i++) {
        const tt_input *in = &key->in[i];
        L->pref[nroots + i] = in->buf ? tt_irb_param(b, in->dtype) : tt_irb_param_scalar(b, in->var ? HCQ_I32 : HCQ_U64);
    }
    uint64_t grid = P->group ? P->items : (P->items + P->L - 1) / P->L;
    const hcq_device_props *pr = &ctx->props;
    if (grid > pr->max_grid[0] || grid > UINT32_MAX) {
        s = base_err(HCQ_ELIMIT, "lowering: %llu work-groups exceed %s's grid limit of %u", (unsigned long long)grid,
                     pr->id, pr->max_grid[0]);
        goto fail;
    }
    if (P->tc.kind) { /* tensor cores: a skeleton of their own (tc.c) */
        s = tt_tc_lower(L, roots, nroots, grid);
        if (s) goto fail;
        goto built;
    }
    hcq_ir_ref gx = tt_irb_special(b, HCQ_SPECIAL_GROUP_ID, 0), lx = tt_irb_special(b, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref gid, gate = NONE;
    if (P->group) {
        tt_node *m = P->main;
        hcq_dtype adt = (m->dtype == HCQ_F16 || m->dtype == HCQ_BF16) && m->rop != TT_R_MAX ? HCQ_F32 : (hcq_dtype)m->dtype;
        L->lid = lx;
        L->lds = tt_irb_local(b, adt, P->L);
        gid = gx;
    } else if (P->smem_bk) { /* blocks of tiles (below); every work-item runs */
        gid = NONE;
    } else {
        gid = tt_irb_binary(b, HCQ_OP_ADD, tt_irb_binary(b, HCQ_OP_MUL, gx, tt_irb_int(b, HCQ_I32, P->L)), lx);
        if (var) /* items: the variable's value times the items per unit of it */
            gate = tt_irb_binary(b, HCQ_OP_CMPLT, gid,
                                 tt_irb_binary(b, HCQ_OP_MUL, tt_var_param(L, var),
                                               tt_irb_int(b, HCQ_I32, (int64_t)(P->items / (uint64_t)ctx->syms[var - 1].hi))));
        else if (grid * P->L > P->items) gate = tt_irb_binary(b, HCQ_OP_CMPLT, gid, tt_irb_int(b, HCQ_I32, (int64_t)P->items));
    }
    /* work-item -> item index over the output shape with upcast dims divided */
    int nd = root->ndim;
    int64_t T[TT_MAX_DIMS];
    memcpy(T, root->shape, sizeof T);
    for (int u = 0; u < 2; u++)
        if (P->up_dim[u] >= 0) T[P->up_dim[u]] = (T[P->up_dim[u]] + P->up[u] - 1) / P->up[u];
    /* Split launches index as group * L + lane, two variables with their own
     * ranges rather than one opaque gid: a row index (gid / cols) then folds
     * to the group and a column to the lane wherever L divides the row, so
     * loads of per-row values (softmax's max and sum) stay loop-invariant
     * and the C renderer's lane loop is affine, which clang vectorises. A
     * gated tail's out-of-range indices are never loaded or stored. Only
     * for elementwise kernels: a register tile's lanes (a matmul's column
     * tiles) made affine let clang rework the tile loops, which ran a
     * 256^3 matmul 13x slower. */
    const tt_sx *g = P->group || P->L <= 1 || P->main
                         ? tt_sx_var(&L->sym, 0, P->items ? (int64_t)P->items - 1 : 0, gid)
                         : tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, tt_sx_var(&L->sym, 0, (int64_t)grid - 1, gx), P->L),
                                     tt_sx_var(&L->sym, 0, (int64_t)P->L - 1, lx));
    const tt_sx *t[TT_MAX_DIMS];
    int64_t st = 1;
    if (P->smem_bk) { /* a group is a block of gr x gv tiles, lid row-major in it */
        int dr = P->up_dim[0], dv = P->up_dim[1];
        int64_t gv = P->smem_gv, gr = P->L / gv, nbr = (T[dr] + gr - 1) / gr, nbv = (T[dv] + gv - 1) / gv;
        const tt_sx *gs = tt_sx_var(&L->sym, 0, (int64_t)grid - 1, gx), *ls = tt_sx_var(&L->sym, 0, (int64_t)P->L - 1, lx);
        const tt_sx *bv = tt_sx_mod(&L->sym, gs, nbv), *br = tt_sx_mod(&L->sym, tt_sx_div(&L->sym, gs, nbv), nbr);
        L->sm.tc = tt_sx_mod(&L->sym, ls, gv);
        L->sm.tr = tt_sx_div(&L->sym, ls, gv);
        L->sm.lid = lx;
        t[dr] = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, br, gr), L->sm.tr);
        t[dv] = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, bv, gv), L->sm.tc);
        L->sm.base[dr] = tt_sx_mulc(&L->sym, br, gr * P->up[0]);
        L->sm.base[dv] = tt_sx_mulc(&L->sym, bv, gv * P->up[1]);
        st = nbr * nbv;
        for (int d = nd - 1; d >= 0; d--) {
            if (d == dr || d == dv) continue;
            t[d] = L->sm.base[d] = T[d] == 1 ? tt_sx_const(&L->sym, 0) : tt_sx_mod(&L->sym, tt_sx_div(&L->sym, gs, st), T[d]);
            st *= T[d];
        }
    } else if (P->cblock > 0) {
        int dr = P->up_dim[0], dv = P->up_dim[1];
        const tt_sx *jj = tt_sx_mod(&L->sym, g, P->cblock);
        t[dr] = tt_sx_mod(&L->sym, tt_sx_div(&L->sym, g, P->cblock), T[dr]);
        const tt_sx *cb = tt_sx_mod(&L->sym, tt_sx_div(&L->sym, g, P->cblock * T[dr]), T[dv] / P->cblock);
        t[dv] = tt_sx_add(&L->sym, tt_sx_mulc(&L->sym, cb, P->cblock), jj);
        st = T[dr] * T[dv];
        for (int d = nd - 1; d >= 0; d--) {
            if (d == dr || d == dv) continue;
            t[d] = T[d] == 1 ? tt_sx_const(&L->sym, 0) : tt_sx_mod(&L->sym, tt_sx_div(&L->sym, g, st), T[d]);
            st *= T[d];
        }
    } else
        for (int d = nd - 1; d >= 0; d--) {
            t[d] = T[d] == 1 ? tt_sx_const(&L->sym, 0) : tt_sx_mod(&L->sym, tt_sx_div(&L->sym, g, st), T[d]);
            st *= T[d];
        }
    /* the other variable dims run to their upper bound: the items past
     * the value are gated off (their indexes are never loaded or stored) */
    hcq_ir_ref vgate = NONE;
    for (int d = 0; d < nd; d++)
        if (root->sym[d] && d != launch_dim)
            vgate = tt_irb_and(b, vgate, tt_irb_binary(b, HCQ_OP_CMPLT, tt_em_sx(L, t[d]), tt_var_param(L, root->sym[d])));
    gate = tt_irb_and(b, gate, vgate);
    int nl = (int)(P->up[0] * P->up[1]);
    tt_lane *lanes = calloc((size_t)nl, sizeof *lanes);
    hcq_ir_ref *vals = calloc((size_t)nl * nroots, sizeof *vals);
    if (!lanes || !vals) {
        free(lanes);
        free(vals);
        s = base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto fail;
    }
    /* ragged rows: the value of a row past the edge is computed at the
     * last row (so no load needs a gate) and its store is skipped */
    const tt_sx *rows[8] = {0};
    hcq_ir_ref row_ok[8];
    for (int a = 0; a < P->up[0]; a++) {
        int d = P->up_dim[0];
        row_ok[a] = NONE;
        if (d < 0) continue;
        rows[a] = tt_sx_addc(&L->sym, tt_sx_mulc(&L->sym, t[d], P->up[0]), a);
        if ((!P->ragged && !P->smem_bk) || rows[a]->hi < root->shape[d]) continue;
        hcq_ir_ref raw = tt_em_sx(L, rows[a]), last = tt_irb_int(b, HCQ_I32, root->shape[d] - 1);
        row_ok[a] = tt_irb_binary(b, HCQ_OP_CMPLT, raw, tt_irb_int(b, HCQ_I32, root->shape[d]));
        rows[a] = tt_sx_var(&L->sym, 0, root->shape[d] - 1, tt_irb_where(b, row_ok[a], raw, last));
    }
    /* smem blocks past the last column: clamped as the rows are */
    const tt_sx *cols[256] = {0}; /* up[1] <= 256 (plan.c) */
    hcq_ir_ref col_ok[256];
    for (int c = 0; c < P->up[1]; c++) {
        int d = P->up_dim[1];
        col_ok[c] = NONE;
        if (d < 0) continue;
        cols[c] = tt_sx_addc(&L->sym, tt_sx_mulc(&L->sym, t[d], P->up[1]), c);
        if (!P->smem_bk || cols[c]->hi < root->shape[d]) continue;
        hcq_ir_ref raw = tt_em_sx(L, cols[c]), last = tt_irb_int(b, HCQ_I32, root->shape[d] - 1);
        col_ok[c] = tt_irb_binary(b, HCQ_OP_CMPLT, raw, tt_irb_int(b, HCQ_I32, root->shape[d]));
        cols[c] = tt_sx_var(&L->sym, 0, root->shape[d] - 1, tt_irb_where(b, col_ok[c], raw, last));
    }
    for (int a = 0; a < P->up[0]; a++)
        for (int c = 0; c < P->up[1]; c++) {
            tt_lane *l = &lanes[a * P->up[1] + c];
            memcpy(l->idx, t, sizeof t);
            if (P->up_dim[0] >= 0) l->idx[P->up_dim[0]] = rows[a];
            if (P->up_dim[1] >= 0) l->idx[P->up_dim[1]] = cols[c];
            l->gate = gate;
        }
    if (P->smem_bk) {
        L->sm.tile = lanes;
        L->sm.root = root;
    }
    /* every output's values first, then the stores: a value may read
     * (at the element stored) a buffer another output overwrites */
    for (uint32_t r = 0; r < nroots; r++) tt_em(L, roots[r], nl, lanes, vals + (size_t)r * nl);
    hcq_ir_ref sgate = P->group ? tt_irb_and(b, tt_irb_binary(b, HCQ_OP_CMPLT, L->lid, tt_irb_int(b, HCQ_I32, 1)), vgate) : gate;
    if (P->vec > 1)
        store_vec(L, roots, nroots, lanes, nl, vals, sgate, row_ok, col_ok);
    else
        for (int l = 0; l < nl && !L->err; l++) {
            hcq_ir_ref idx = tt_em_sx(L, tt_mem_linear(L, root, lanes[l].idx));
            for (uint32_t r = 0; r < nroots; r++)
                tt_irb_store(b, L->pref[r], idx, tt_irb_cast(b, (hcq_dtype)roots[r]->dtype, vals[(size_t)r * nl + l]),
                             tt_irb_and(b, tt_irb_and(b, sgate, row_ok[l / P->up[1]]), col_ok[l % P->up[1]]));
        }
    L->sm.tile = NULL;
    free(lanes);
    free(vals);
built:
    if (L->err || L->sym.oom || b->oom) {
        s = L->err ? L->err : base_err(HCQ_ENOMEM, "lowering: out of memory");
        goto fail;
    }
    out->k = tt_irb_take(b);
    out->grid[0] = (uint32_t)grid;
    out->grid[1] = out->grid[2] = 1;
    out->block[0] = P->L;
    out->block[1] = out->block[2] = 1;
    out->flops = L->flops * (double)P->items * (P->group ? P->L : 1);
    out->opts = L->opts;
    if (var) {
        out->var = (uint8_t)var;
        out->per = P->items / (uint64_t)ctx->syms[var - 1].hi;
        out->div = P->group ? 1 : P->L;
    }
    s = HCQ_OK;
fail:
    tt_sym_restore(save);
    hcq_kernel_destroy(tt_irb_take(&L->b)); /* the tables stay for the next kernel */
    if (s) memset(out, 0, sizeof *out);
    return s;
}

void tt_lower_scratch_free(hcq_ctx *ctx)
{
    tt_lw *L = ctx->lw;
    if (!L) return;
    tt_irb_free(&L->b);
    tt_memo_free(L);
    tt_sym_free(&L->sym);
    tt_arena_free(&L->ar);
    free(L);
    ctx->lw = NULL;
}

void tt_lowered_free(tt_lowered *l)
{
    hcq_kernel_destroy(l->k);
    l->k = NULL;
}
