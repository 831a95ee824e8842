/* Kernel plan search (HCQ_BEAM=N, hcq_ctx_set_beam): for a kernel the
 * context builds for the first time, plans near the default one (plan.c's
 * choice lists) are lowered, compiled and timed on the device itself, and
 * the fastest whose output equals the default plan's is used.
 *
 *   - Candidates: every list one choice away from a plan in the beam (an
 *     upcast amount, adding or dropping an upcast, the unroll, the
 *     work-group size, the column-block walk, the group size, smem and tc
 *     on GPU targets: tc.c's blocks and warps); the N fastest
 *     so far are the next round's beam, for at most 3 rounds, and the search
 *     stops early when a round finds nothing faster.
 *   - Inputs: the kernel's own (realized before it runs); outputs go to
 *     scratch buffers, so an input the kernel overwrites (hcq_assign) is read
 *     unchanged by every candidate.
 *   - Correctness: each candidate's output against the default plan's, every
 *     element: integers exactly, floats within the dtype's rounding (a plan
 *     changes the order of a reduction's additions). A candidate that does not
 *     fit (tt_plan_apply), fails to compile, or differs is discarded with a note
 *     (HCQ_DEBUG=1).
 *   - Timing: device timestamps around each launch (tt_timed_exec), one
 *     untimed run first, then the median of 5; a candidate over 3x the best
 *     after its first timed run stops there. Everything (lowering and compiling
 *     included) within HCQ_BEAM_BUDGET_MS per kernel. A winner other than the
 *     default is timed again against it in alternate turns (3 medians each)
 *     and must still be 3 % faster, or the default stays.
 *   - Cache: the winner's choices in the kernel cache directory
 *     (<hex>.plan, text), keyed by the kernel's canonical graph (tt_key), its
 *     default choices, the device model and the compiler; a later process
 *     lowers the winner without searching. An entry that is corrupt, written
 *     for another key, or does not fit the kernel is ignored with a note.
 * Kernels with variable sizes (hcq_jit_dim) are not searched; a kernel
 * made while a JIT captures takes a cached winner but is not searched
 * (nothing may run then: the default plan). */
#include "tensor/lower.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/cc.h"
#include "compiler/ir_float.h"

#define BEAM_REPS 5
#define BEAM_ROUNDS 3
#define BEAM_MAX 96 /* candidates kept per kernel */

static void note(hcq_ctx *ctx, const char *fmt, ...) HCQ_PRINTF(2, 3);
static void note(hcq_ctx *ctx, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    BASE_LOG(1, "HCQ_BEAM: %s", line);
    /* The context's notes, newest last: one search can leave several (a
     * cache entry ignored, then a winner not confirmed), and the later one
     * must not hide the earlier. When full, the oldest lines go. */
    size_t cap = sizeof ctx->beam_note, len = strlen(ctx->beam_note), add = strlen(line) + (len ? 1 : 0);
    while (len && len + add >= cap) {
        char *nl = strchr(ctx->beam_note, '\n');
        size_t drop = nl ? (size_t)(nl - ctx->beam_note) + 1 : len;
        memmove(ctx->beam_note, ctx->beam_note + drop, len - drop + 1);
        len -= drop;
        add = strlen(line) + (len ? 1 : 0);
    }
    snprintf(ctx->beam_note + len, cap - len, "%s%s", len ? "\n" : "", line);
}

/* ** choice lists as knobs, for making neighbours */
typedef struct knobs {
    int ud[2];
    int64_t ua[2];
    int64_t unroll, local, group, block;
    int64_t smem_bk, smem_gv; /* smem(k<bk>,c<gv>), 0: none */
    int64_t vec;              /* vector(d<ud[1]>,<vec>), 0: none */
    bool vec_all;
    int tdm, tdn;             /* tensor cores (tc.c): tc.m(d<tdm>,<tbm>) tc.n(d<tdn>,<tbn>) tc.wm(<twm>); tbm 0: none */
    int64_t tbm, tbn, twm, tki, tsk;
} knobs;

static void decode(const tt_opts *o, knobs *k)
{
    memset(k, 0, sizeof *k);
    k->ud[0] = k->ud[1] = -1;
    for (uint32_t i = 0; i < o->n; i++) {
        const tt_opt *c = &o->o[i];
        switch ((tt_opt_kind)c->kind) {
        case TT_OPT_UPCAST:
            if (c->slot == 0 || c->slot == 1) {
                k->ud[c->slot] = c->dim;
                k->ua[c->slot] = c->amt;
            }
            break;
        case TT_OPT_UNROLL: k->unroll = c->amt; break;
        case TT_OPT_LOCAL: k->local = c->amt; break;
        case TT_OPT_GROUP: k->group = c->amt; break;
        case TT_OPT_BLOCK: k->block = c->amt; break;
        case TT_OPT_SMEM:
            k->smem_bk = c->amt;
            k->smem_gv = c->slot;
            break;
        case TT_OPT_VECTOR:
            k->vec = c->amt;
            k->vec_all = c->slot == 1;
            break;
        case TT_OPT_TC:
            if (c->slot == 0) k->tdm = c->dim, k->tbm = c->amt;
            else if (c->slot == 1) k->tdn = c->dim, k->tbn = c->amt;
            else if (c->slot == 2) k->twm = c->amt;
            else if (c->slot == 3) k->tki = c->amt;
            else k->tsk = c->amt;
            break;
        default: break;
        }
    }
}

static void add(tt_opts *o, tt_opt_kind kind, int slot, int dim, int64_t amt)
{
    if (o->n < TT_MAX_OPTS) {
        tt_opt *c = &o->o[o->n++];
        c->kind = (uint8_t)kind;
        c->slot = (int8_t)slot;
        c->dim = (int8_t)dim;
        c->amt = amt;
    }
}

/* The canonical list of k (pad where slot 0 does not divide; the
 * work-group size clamped to the items; a block that no longer divides
 * the column tiles dropped). */
static void encode(const tt_space *sp, const knobs *k, tt_opts *o)
{
    memset(o, 0, sizeof *o);
    if (k->tbm > 0) { /* a tc plan takes only local (tt_opts_from_plan's order) */
        add(o, TT_OPT_LOCAL, -1, -1, k->local);
        add(o, TT_OPT_TC, 0, k->tdm, k->tbm);
        add(o, TT_OPT_TC, 1, k->tdn, k->tbn);
        add(o, TT_OPT_TC, 2, -1, k->twm);
        if (k->tki > 0) add(o, TT_OPT_TC, 3, -1, k->tki);
        if (k->tsk > 0) add(o, TT_OPT_TC, 4, -1, k->tsk);
        return;
    }
    uint64_t items = 1;
    int64_t T[TT_MAX_DIMS];
    for (int d = 0; d < sp->ndim; d++) {
        T[d] = sp->shape[d];
        for (int u = 0; u < 2; u++)
            if (k->ud[u] == d && k->ua[u] > 1) T[d] = (T[d] + k->ua[u] - 1) / k->ua[u];
        items *= (uint64_t)T[d];
    }
    for (int u = 0; u < 2; u++) {
        if (k->ud[u] < 0 || k->ua[u] < 2) continue;
        add(o, TT_OPT_UPCAST, u, k->ud[u], k->ua[u]);
        if (u == 0 && sp->shape[k->ud[0]] % k->ua[0]) add(o, TT_OPT_PADTO, -1, k->ud[0], k->ua[0]);
    }
    /* (a width the upcast no longer divides is dropped) */
    if (k->vec > 1 && k->ud[1] >= 0 && k->ua[1] > 1 && k->ua[1] % k->vec == 0 && (uint64_t)k->vec * sp->out_bytes <= HCQ_IR_MAX_ACCESS_BYTES)
        add(o, TT_OPT_VECTOR, k->vec_all ? 1 : -1, k->ud[1], k->vec);
    if (k->unroll > 1) add(o, TT_OPT_UNROLL, -1, -1, k->unroll);
    if (k->group) {
        add(o, TT_OPT_GROUP, -1, -1, k->group);
        return;
    }
    int64_t l = k->local < 1 ? 1 : k->local;
    bool tile = k->ud[0] >= 0 && k->ua[0] > 1 && k->ud[1] >= 0 && k->ua[1] > 1;
    bool smem = tile && k->smem_bk > 0 && k->smem_gv > 0;
    if ((uint64_t)l > items && !smem) l = items ? (int64_t)items : 1; /* (an smem group is a block, clamped at the edges) */
    add(o, TT_OPT_LOCAL, -1, -1, l);
    if (smem) {
        add(o, TT_OPT_SMEM, (int)k->smem_gv, -1, k->smem_bk);
        return; /* (no block walk: the group is the block) */
    }
    if (tile && k->block > 0 && T[k->ud[1]] % k->block == 0) add(o, TT_OPT_BLOCK, -1, -1, k->block);
}

static bool opts_equal(const tt_opts *a, const tt_opts *b)
{
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->o[i].kind != b->o[i].kind || a->o[i].slot != b->o[i].slot || a->o[i].dim != b->o[i].dim || a->o[i].amt != b->o[i].amt)
            return false;
    return true;
}

typedef struct cand {
    tt_opts o;
    tt_kentry ke;
    double us;
} cand;

typedef struct search {
    hcq_ctx *ctx;
    tt_node *const *xs;
    uint32_t nx;
    const tt_key *key;
    const tt_space *sp;
    /* the lists tried (timed or not), and those timed */
    tt_opts seen[BEAM_MAX];
    uint32_t nseen;
    cand *timed;
    uint32_t ntimed;
    /* the launch */
    hcq_arg args[TT_MAX_PARAMS];
    uint32_t nargs;
    tt_buf *ref[TT_MAX_PARAMS], *out[TT_MAX_PARAMS];
    void *want[TT_MAX_PARAMS], *got[TT_MAX_PARAMS];
    uint64_t t_end;
} search;

static void propose(search *S, const knobs *k, tt_opts *list, uint32_t *n, uint32_t max)
{
    tt_opts o;
    encode(S->sp, k, &o);
    for (uint32_t i = 0; i < S->nseen; i++)
        if (opts_equal(&S->seen[i], &o)) return;
    for (uint32_t i = 0; i < *n; i++)
        if (opts_equal(&list[i], &o)) return;
    if (*n < max) list[(*n)++] = o;
}

/* Tensor-core lists near b (GPU targets with a kind for the kernel): from
 * a plan without them, tc with one block per warp and one warp per group,
 * and with 2 x 2 of each; from a tc plan, its blocks and warps halved and
 * doubled each way, staging off or in slices of 1, 2 or 4 k-steps, the
 * target's other kinds for the inputs, and a 4 x 4 register tile staged
 * through shared memory instead (the default when tc is not: the search
 * can leave tc). */
static void tc_neighbours(search *S, const knobs *b, tt_opts *list, uint32_t *n, uint32_t max)
{
    const tt_space *sp = S->sp;
    hcq_mma_info in;
    if (sp->cpu || !sp->tc_kind || hcq_mma_info_get(sp->tc_kind, &in)) return;
    knobs k;
    if (!b->tbm) {
        for (int64_t v = 1; v <= 2; v++) {
            memset(&k, 0, sizeof k);
            k.ud[0] = k.ud[1] = -1;
            k.tdm = sp->tc_dm;
            k.tdn = sp->tc_dn;
            k.tbm = k.tbn = k.twm = v;
            k.local = v * v * in.warp;
            propose(S, &k, list, n, max);
        }
        return;
    }
    int64_t warps = b->local / in.warp, wn = b->twm ? warps / b->twm : 1;
    const int64_t bms[] = {b->tbm / 2, b->tbm * 2}, bns[] = {b->tbn / 2, b->tbn * 2}, wms[] = {b->twm / 2, b->twm * 2},
                  wns[] = {wn / 2, wn * 2};
    for (int i = 0; i < 2; i++) {
        k = *b;
        k.tbm = bms[i];
        if (k.tbm >= 1) propose(S, &k, list, n, max);
        k = *b;
        k.tbn = bns[i];
        if (k.tbn >= 1) propose(S, &k, list, n, max);
        k = *b;
        k.twm = wms[i];
        k.local = wms[i] * wn * in.warp;
        if (k.twm >= 1 && k.local <= sp->maxl) propose(S, &k, list, n, max);
        k = *b;
        k.local = b->twm * wns[i] * in.warp;
        if (wns[i] >= 1 && k.local <= sp->maxl) propose(S, &k, list, n, max);
    }
    const int64_t sks[] = {0, 1, 2, 4}; /* staged through local memory or not, its slice */
    for (size_t i = 0; i < BASE_ARRAY_LEN(sks); i++) {
        k = *b;
        k.tsk = sks[i];
        if (sks[i] != b->tsk) propose(S, &k, list, n, max);
    }
    for (uint32_t i = 0; i < sp->tc_nkinds; i++) { /* the target's other kinds for the inputs */
        k = *b;
        k.tki = i;
        if ((int64_t)i != b->tki) propose(S, &k, list, n, max);
    }
    memset(&k, 0, sizeof k);
    k.ud[0] = sp->tc_dm;
    k.ud[1] = sp->tc_dn;
    k.ua[0] = 4;
    k.ua[1] = sp->shape[sp->tc_dn] % 4 == 0 ? 4 : sp->shape[sp->tc_dn] % 2 == 0 ? 2 : 1;
    k.local = 64;
    k.smem_bk = 16;
    k.smem_gv = 8;
    propose(S, &k, list, n, max);
}

/* The lists one choice away from o. */
static uint32_t neighbours(search *S, const tt_opts *o, tt_opts *list, uint32_t max)
{
    const tt_space *sp = S->sp;
    knobs b, k;
    decode(o, &b);
    uint32_t n = 0;
    tc_neighbours(S, &b, list, &n, max);
    if (b.tbm) return n;
    static const int64_t vs[] = {4, 8, 16, 24, 32, 48, 64, 96, 128};
    static const int64_t rs[] = {1, 2, 3, 4, 5, 6, 8};
    static const int64_t us[] = {1, 2, 4, 8, 16};
    if (!b.group) {
        /* slot 1: the contiguous dim's upcast */
        int d1 = b.ud[1] >= 0 ? b.ud[1] : sp->ndim - 1;
        for (size_t i = 0; d1 >= 0 && !sp->sym[d1] && i < BASE_ARRAY_LEN(vs); i++) {
            k = b;
            if (d1 == k.ud[0] || sp->shape[d1] % vs[i] || vs[i] == b.ua[1]) continue;
            k.ud[1] = d1;
            k.ua[1] = vs[i];
            propose(S, &k, list, &n, max);
        }
        if (b.ud[1] >= 0) {
            k = b;
            k.ud[1] = -1;
            propose(S, &k, list, &n, max);
        }
        /* slot 0: rows of a tile (on the dims next to slot 1 when there is none) */
        for (int d = sp->ndim - 1; d >= 0; d--) {
            if (b.ud[0] >= 0 && d != b.ud[0]) continue;
            if (d == b.ud[1] || sp->sym[d] || sp->shape[d] < 2 || !sp->main) continue;
            for (size_t i = 0; i < BASE_ARRAY_LEN(rs); i++) {
                if (rs[i] == (b.ud[0] >= 0 ? b.ua[0] : 1) || rs[i] > sp->shape[d]) continue;
                k = b;
                k.ud[0] = rs[i] > 1 ? d : -1;
                k.ua[0] = rs[i];
                propose(S, &k, list, &n, max);
            }
        }
        /* the work-group size */
        int64_t l = b.local < 1 ? 1 : b.local;
        const int64_t ls[] = {l / 4, l / 2, l * 2, l * 4};
        for (size_t i = 0; i < BASE_ARRAY_LEN(ls); i++) {
            if (ls[i] < 1 || ls[i] > sp->maxl) continue;
            k = b;
            k.local = ls[i];
            propose(S, &k, list, &n, max);
        }
        /* shared-memory staging of a register tile (GPU targets): on or
         * off, its slice, its block's shape at the same tile rows */
        if (b.ud[0] >= 0 && b.ud[1] >= 0 && !sp->cpu && !sp->smem_why) {
            k = b;
            if (b.smem_bk) {
                k.smem_bk = 0;
                propose(S, &k, list, &n, max);
                const int64_t bks[] = {b.smem_bk / 2, b.smem_bk * 2};
                for (size_t i = 0; i < BASE_ARRAY_LEN(bks); i++) {
                    k = b;
                    k.smem_bk = bks[i];
                    if (bks[i] >= 1 && bks[i] <= 64) propose(S, &k, list, &n, max);
                }
                const int64_t gvs[] = {b.smem_gv / 2, b.smem_gv * 2};
                for (size_t i = 0; i < BASE_ARRAY_LEN(gvs); i++) {
                    k = b;
                    k.smem_gv = gvs[i];
                    k.local = l / b.smem_gv * gvs[i];
                    if (gvs[i] >= 1 && gvs[i] <= 64 && k.local <= sp->maxl) propose(S, &k, list, &n, max);
                }
            } else {
                int64_t gv = 16;
                while (gv > 1 && l % gv) gv /= 2;
                k.smem_bk = 16;
                k.smem_gv = gv;
                k.block = 0;
                propose(S, &k, list, &n, max);
            }
        }
        /* the vector width (GPU targets; vec.c): of slot 1's upcast, or
         * with one of that many along the contiguous dim */
        static const int64_t ws[] = {0, 2, 4, 8, 16};
        for (size_t i = 0; !sp->cpu && d1 >= 0 && !sp->sym[d1] && d1 != b.ud[0] && i < BASE_ARRAY_LEN(ws); i++) {
            if (ws[i] == b.vec || (uint64_t)ws[i] * sp->out_bytes > HCQ_IR_MAX_ACCESS_BYTES) continue;
            k = b;
            k.vec = ws[i];
            if (ws[i] && b.ud[1] < 0) {
                if (sp->shape[d1] % ws[i]) continue;
                k.ud[1] = d1;
                k.ua[1] = ws[i];
            } else if (ws[i] && b.ua[1] % ws[i]) {
                continue;
            }
            propose(S, &k, list, &n, max);
        }
        /* the column-block walk of a register tile */
        if (b.ud[0] >= 0 && b.ud[1] >= 0 && !b.smem_bk) {
            const int64_t bs[] = {0, b.block / 2, b.block * 2, 1, 2, 4, 8};
            for (size_t i = 0; i < BASE_ARRAY_LEN(bs); i++) {
                if (bs[i] == b.block || (i && bs[i] < 1)) continue;
                k = b;
                k.block = bs[i];
                propose(S, &k, list, &n, max);
            }
        }
    } else {
        for (int64_t g = 32; g <= 1024; g *= 2) {
            if (g == b.group) continue;
            k = b;
            k.group = g;
            propose(S, &k, list, &n, max);
        }
    }
    /* the accumulators along the reduction */
    for (size_t i = 0; sp->main && !sp->main_sym && !b.group && i < BASE_ARRAY_LEN(us); i++) {
        if (us[i] == (b.unroll > 1 ? b.unroll : 1) || sp->rin % us[i]) continue;
        k = b;
        k.unroll = us[i];
        propose(S, &k, list, &n, max);
    }
    return n;
}

/* ** comparing outputs */
static double elem(const void *p, hcq_dtype dt, uint64_t i)
{
    switch (dt) {
    case HCQ_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case HCQ_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    case HCQ_F32: return ((const float *)p)[i];
    case HCQ_F64: return ((const double *)p)[i];
    default: return 0;
    }
}

/* Within the dtype's rounding: |got - want| <= rtol (|want| + mean |want|);
 * NaN where the default has NaN, the same infinities. */
static bool same_output(const void *got, const void *want, hcq_dtype dt, uint64_t n, uint64_t *bad)
{
    if (!hcq_dtype_is_float(dt)) {
        size_t es = hcq_dtype_size(dt);
        for (uint64_t i = 0; i < n; i++)
            if (memcmp((const char *)got + i * es, (const char *)want + i * es, es)) return (*bad = i, false);
        return true;
    }
    double rtol = dt == HCQ_F64 ? 1e-9 : dt == HCQ_F32 ? 1e-4 : dt == HCQ_F16 ? 1e-2 : 4e-2, mean = 0;
    uint64_t finite = 0;
    for (uint64_t i = 0; i < n; i++) {
        double w = elem(want, dt, i);
        if (isfinite(w)) {
            mean += fabs(w);
            finite++;
        }
    }
    mean = finite ? mean / (double)finite : 0;
    for (uint64_t i = 0; i < n; i++) {
        double g = elem(got, dt, i), w = elem(want, dt, i);
        bool ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs(g - w) <= rtol * (fabs(w) + mean);
        if (!ok) return (*bad = i, false);
    }
    return true;
}

/* ** running a candidate */
static hcq_dims dims_of(const tt_kentry *ke)
{
    return hcq_dims_3d(ke->grid[0], ke->grid[1], ke->grid[2], ke->block[0], ke->block[1], ke->block[2]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs ke into the outputs (args' first nx), untimed, then up to
 * BEAM_REPS timed runs: the median in *us (stopping after one over
 * give_up us). */
static hcq_status time_kernel(search *S, const tt_kentry *ke, double give_up, double *us)
{
    double t[BEAM_REPS];
    int n = 0;
    hcq_status s = tt_timed_exec(S->ctx, ke->p, S->args, S->nargs, dims_of(ke), &t[0]);
    for (; !s && n < BEAM_REPS; n++) {
        s = tt_timed_exec(S->ctx, ke->p, S->args, S->nargs, dims_of(ke), &t[n]);
        if (!s && ((give_up > 0 && t[n] > give_up) || hcq_now_ns() > S->t_end)) {
            n++;
            break;
        }
    }
    if (s) return s;
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    *us = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return HCQ_OK;
}

static void kentry_from(const tt_lowered *lw, tt_kentry *e)
{
    memset(e, 0, sizeof *e);
    memcpy(e->grid, lw->grid, sizeof e->grid);
    memcpy(e->block, lw->block, sizeof e->block);
    memcpy(e->name, lw->name, sizeof e->name);
    e->flops = lw->flops;
}

/* The kernel of list o (NULL: the default), built; its choices in *used. */
static hcq_status build(search *S, const tt_opts *o, tt_kentry *e, tt_opts *used)
{
    tt_lowered lw;
    hcq_status s = tt_lower_opts(S->ctx, S->xs, S->nx, S->key, o, &lw);
    if (s) return s;
    kentry_from(&lw, e);
    *used = lw.opts;
    e->p = tt_get_program(S->ctx, lw.k, &e->k); /* takes lw.k */
    return e->p ? HCQ_OK : hcq_error_status() ? hcq_error_status() : HCQ_ECOMPILE;
}

static hcq_status read_outputs(search *S, tt_buf *const *bufs, void *const *host)
{
    hcq_status s = HCQ_OK;
    for (uint32_t r = 0; r < S->nx && !s; r++) s = hcq_buffer_copyout(host[r], bufs[r]->hb, 0, bufs[r]->size_B);
    return s;
}

/* Lowers, builds, checks and times list o; true when it joined S->timed. */
static bool try_list(search *S, const tt_opts *o, double best)
{
    hcq_ctx *ctx = S->ctx;
    char words[256];
    tt_opts_format(o, words, sizeof words);
    if (S->nseen < BEAM_MAX) S->seen[S->nseen++] = *o;
    cand c = {.o = *o};
    tt_opts used;
    hcq_status s = build(S, o, &c.ke, &used);
    if (s) {
        ctx->beam_stats.discarded++;
        note(ctx, "%s: plan %s discarded: %s", ctx->props.id, words, hcq_error_message());
        return false;
    }
    for (uint32_t r = 0; r < S->nx; r++) S->args[r] = hcq_arg_buffer(S->out[r]->hb);
    s = time_kernel(S, &c.ke, best > 0 ? 3 * best : 0, &c.us);
    if (!s) s = read_outputs(S, S->out, S->got);
    if (s) {
        ctx->beam_stats.discarded++;
        note(ctx, "%s: plan %s discarded: it failed to run: %s", ctx->props.id, words, hcq_error_message());
        return false;
    }
    for (uint32_t r = 0; r < S->nx; r++) {
        uint64_t bad = 0;
        hcq_dtype dt = (hcq_dtype)S->xs[r]->dtype;
        if (!same_output(S->got[r], S->want[r], dt, S->out[r]->size_B / hcq_dtype_size(dt), &bad)) {
            ctx->beam_stats.discarded++;
            note(ctx, "%s: plan %s of kernel %s discarded: output %u element %llu is %.9g, the default plan's %.9g", ctx->props.id,
                 words, c.ke.name, r, (unsigned long long)bad, hcq_dtype_is_float(dt) ? elem(S->got[r], dt, bad) : 0.0,
                 hcq_dtype_is_float(dt) ? elem(S->want[r], dt, bad) : 0.0);
            return false;
        }
    }
    ctx->beam_stats.timed++;
    BASE_LOG(2, "HCQ_BEAM: %s: kernel %s plan %s: %.1f us", ctx->props.id, c.ke.name, words, c.us);
    cand *nt = base_realloc_array(S->timed, S->ntimed + 1, sizeof *nt);
    if (!nt) return false;
    S->timed = nt;
    S->timed[S->ntimed++] = c;
    return true;
}

/* The winner against the default once more, in alternate turns (3 each,
 * a median of medians): a load spike during the default's first timing
 * must not crown a plan that is no faster. It must beat the default by 3 %. */
static bool confirmed(search *S, const cand *def, const cand *win)
{
    double td[3], tw[3];
    int n = 0;
    for (; n < 3; n++) {
        for (uint32_t r = 0; r < S->nx; r++) S->args[r] = hcq_arg_buffer(S->out[r]->hb);
        if (time_kernel(S, &def->ke, 0, &td[n]) || time_kernel(S, &win->ke, 0, &tw[n])) return false;
    }
    qsort(td, 3, sizeof td[0], cmp_double);
    qsort(tw, 3, sizeof tw[0], cmp_double);
    if (tw[1] < 0.97 * td[1]) return true;
    char words[256];
    tt_opts_format(&win->o, words, sizeof words);
    note(S->ctx, "%s: kernel %s: plan %s not confirmed (%.1f us against the default's %.1f us): the default stays",
         S->ctx->props.id, win->ke.name, words, tw[1], td[1]);
    return false;
}

static int cmp_cand(const void *a, const void *b)
{
    double x = ((const cand *)a)->us, y = ((const cand *)b)->us;
    return x < y ? -1 : x > y;
}

/* ** the disk cache */
static void beam_id(hcq_ctx *ctx, const tt_key *key, const tt_opts *def, cc_cache_key *id, const char **compiler)
{
    const hcq_device_props *pr = &ctx->props;
    const cc_clang_info *cl = NULL;
    *compiler = !strcmp(pr->target, "ir") ? "the IR interpreter" : !cc_clang(&cl) && cl ? cl->label : "no clang";
    char words[256];
    tt_opts_format(def, words, sizeof words);
    cc_sha256_ctx h;
    cc_key_begin(&h);
    cc_key_add_str(&h, "hcq kernel plan 1");
    cc_key_add_str(&h, pr->name);
    cc_key_add_str(&h, pr->arch);
    cc_key_add_str(&h, pr->target);
    cc_key_add(&h, &pr->compute_units, sizeof pr->compute_units);
    cc_key_add(&h, &pr->cache_bytes, sizeof pr->cache_bytes);
    cc_key_add_str(&h, base_env_get()->cpu_target);
    cc_key_add_str(&h, *compiler);
    cc_key_add_str(&h, words); /* new heuristics: a new search */
    cc_key_add(&h, &key->nout, sizeof key->nout);
    cc_key_add(&h, key->w, (size_t)key->n * sizeof *key->w);
    for (uint32_t i = 0; i < key->nin; i++) {
        uint8_t kind[2] = {(uint8_t)key->in[i].dtype, (uint8_t)(key->in[i].buf ? 1 : key->in[i].rand ? 2 : 3)};
        cc_key_add(&h, kind, sizeof kind);
    }
    cc_key_end(&h, id);
}

hcq_status tt_beam_entry_parse(const char *text, size_t size, const char *want_id, tt_opts *out, char *why, size_t wn)
{
    char buf[4096];
    if (size >= sizeof buf) return snprintf(why, wn, "%zu bytes, longer than any entry", size), HCQ_EFORMAT;
    memcpy(buf, text, size);
    buf[size] = 0;
    if (strncmp(buf, "hcq-plan 1\n", 11)) return snprintf(why, wn, "no 'hcq-plan 1' header"), HCQ_EFORMAT;
    const char *id = strstr(buf, "\nid ");
    char got[65] = {0};
    if (!id || sscanf(id + 4, "%64[0-9a-f]", got) != 1 || strlen(got) != 64) return snprintf(why, wn, "no id line"), HCQ_EFORMAT;
    if (strcmp(got, want_id))
        return snprintf(why, wn, "written for another kernel, device or compiler (id %.16s..., this one's %.16s...)", got, want_id), HCQ_EFORMAT;
    const char *op = strstr(buf, "\nopts ");
    unsigned n = 0;
    int used = 0;
    if (!op || sscanf(op + 6, "%u%n", &n, &used) != 1 || n > TT_MAX_OPTS) return snprintf(why, wn, "no valid opts line"), HCQ_EFORMAT;
    tt_opts o;
    memset(&o, 0, sizeof o);
    const char *p = op + 6 + used;
    for (unsigned i = 0; i < n; i++) {
        int kind, slot, dim, k = 0;
        long long amt;
        if (sscanf(p, " %d %d %d %lld%n", &kind, &slot, &dim, &amt, &k) != 4 || kind < 0 || kind >= TT_OPT_KINDS || slot < -1 ||
            slot > 1 || dim < -1 || dim >= TT_MAX_DIMS)
            return snprintf(why, wn, "choice %u of %u is malformed", i + 1, n), HCQ_EFORMAT;
        add(&o, (tt_opt_kind)kind, slot, dim, amt);
        p += k;
    }
    if (*p != '\n') return snprintf(why, wn, "the opts line has more than %u choices", n), HCQ_EFORMAT;
    *out = o;
    return HCQ_OK;
}

static void entry_write(hcq_ctx *ctx, const cc_cache_key *id, const char *compiler, const cand *def, const cand *win)
{
    char text[2048], dw[256], ww[256];
    tt_opts_format(&def->o, dw, sizeof dw);
    tt_opts_format(&win->o, ww, sizeof ww);
    size_t pos = (size_t)snprintf(text, sizeof text,
                                  "hcq-plan 1\nid %s\ndevice %s (%s)\ncompiler %s\nkernel %s\ndefault %s: %.1f us\nwinner %s: %.1f us\nopts %u",
                                  id->hex, ctx->props.name, ctx->props.target, compiler, win->ke.name, dw, def->us, ww, win->us, win->o.n);
    for (uint32_t i = 0; i < win->o.n && pos + 64 < sizeof text; i++)
        pos += (size_t)snprintf(text + pos, sizeof text - pos, " %d %d %d %lld", win->o.o[i].kind, win->o.o[i].slot,
                                win->o.o[i].dim, (long long)win->o.o[i].amt);
    if (pos + 2 >= sizeof text) return;
    text[pos++] = '\n';
    if (cc_cache_put_ext(id, ".plan", text, pos)) note(ctx, "the winner of kernel %s is not cached: %s", win->ke.name, hcq_error_message());
}

/* The cached winner for id, built; false (with a note when an entry was
 * there) when none is usable. */
static bool cached(search *S, const cc_cache_key *id, tt_kentry *out)
{
    hcq_ctx *ctx = S->ctx;
    void *data = NULL;
    size_t size = 0;
    if (!cc_cache_get_ext(id, ".plan", &data, &size)) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.plan", hcq_cache_dir(), id->hex);
        if (access(path, F_OK)) return false; /* no entry */
        ctx->beam_stats.cache_ignored++;
        note(ctx, "ignoring the cached plan %s: not a whole cache entry (corrupt or truncated; searching again)", path);
        return false;
    }
    tt_opts o, used;
    char why[200];
    hcq_status s = tt_beam_entry_parse(data, size, id->hex, &o, why, sizeof why);
    free(data);
    if (!s) {
        s = build(S, &o, out, &used);
        if (s) snprintf(why, sizeof why, "its plan does not build: %s", hcq_error_message());
    }
    if (s) {
        ctx->beam_stats.cache_ignored++;
        note(ctx, "ignoring the cached plan %s/%s.plan: %s (searching again)", hcq_cache_dir(), id->hex, why);
        return false;
    }
    ctx->beam_stats.cache_hits++;
    return true;
}

static void search_free(search *S)
{
    for (uint32_t r = 0; r < S->nx; r++) {
        tt_buf_unref(S->ref[r]);
        tt_buf_unref(S->out[r]);
        free(S->want[r]);
        free(S->got[r]);
    }
    free(S->timed);
}

hcq_status tt_beam_kernel(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, const tt_key *key, tt_kentry *out, bool *done)
{
    *done = false;
    for (uint32_t i = 0; i < key->nin; i++)
        if (key->in[i].var) { /* the plan is made for the bound; timings at one value say little */
            ctx->beam_stats.skipped++;
            return HCQ_OK;
        }
    search S;
    memset(&S, 0, sizeof S);
    S.ctx = ctx;
    S.xs = xs;
    S.nx = nx;
    S.key = key;
    S.t_end = hcq_now_ns() + (uint64_t)base_env_get()->beam_budget_ms * 1000000ull;
    cand def = {0};
    hcq_status s = build(&S, NULL, &def.ke, &def.o);
    if (s) return s;
    S.sp = &ctx->lw->space; /* (tt_lower_opts rewrites it alike for each list) */
    tt_space sp = *S.sp;
    S.sp = &sp;
    cc_cache_key id;
    const char *compiler;
    beam_id(ctx, key, &def.o, &id, &compiler);
    if (cached(&S, &id, out)) {
        *done = true;
        return HCQ_OK;
    }
    if (ctx->capture) { /* a JIT captures: a cached winner only, nothing runs now */
        *out = def.ke;
        *done = true;
        return HCQ_OK;
    }
    /* scratch outputs and the launch's arguments */
    S.nargs = nx + key->nin;
    for (uint32_t r = 0; r < nx && !s; r++) {
        uint64_t bytes = (uint64_t)tt_numel(xs[r]->shape, xs[r]->ndim) * hcq_dtype_size((hcq_dtype)xs[r]->dtype);
        S.ref[r] = tt_buf_alloc(ctx, bytes);
        S.out[r] = tt_buf_alloc(ctx, bytes);
        S.want[r] = malloc(bytes ? bytes : 1);
        S.got[r] = malloc(bytes ? bytes : 1);
        if (!S.ref[r] || !S.out[r] || !S.want[r] || !S.got[r] || !S.ref[r]->hb || !S.out[r]->hb) s = HCQ_ENOMEM;
    }
    for (uint32_t i = 0; i < key->nin && !s; i++) {
        const tt_input *in = &key->in[i];
        if (in->rand)
            S.args[nx + i] = hcq_arg_u64(in->rand->seed);
        else if (in->buf && in->buf->hb)
            S.args[nx + i] = hcq_arg_buffer(in->buf->hb);
        else { /* a zero-size input is never read; any buffer stands in */
            if (!ctx->dummy && !(ctx->dummy = tt_buf_alloc(ctx, 64))) s = hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
            if (!s) S.args[nx + i] = hcq_arg_buffer(ctx->dummy->hb);
        }
    }
    /* the default plan: the reference output and the time to beat */
    for (uint32_t r = 0; r < nx && !s; r++) S.args[r] = hcq_arg_buffer(S.ref[r]->hb);
    if (!s) s = time_kernel(&S, &def.ke, 0, &def.us);
    if (!s) s = read_outputs(&S, S.ref, S.want);
    if (s) {
        search_free(&S);
        return base_err_prefix(s ? s : HCQ_ENOMEM, "the plan search of kernel %s", def.ke.name);
    }
    ctx->beam_stats.searched++;
    cand *nt = base_realloc_array(NULL, 1, sizeof *nt);
    if (!nt) {
        search_free(&S);
        return HCQ_ENOMEM;
    }
    S.timed = nt;
    S.timed[S.ntimed++] = def;
    S.seen[S.nseen++] = def.o;
    /* rounds: the neighbours of the beam (the `width` fastest so far) */
    tt_opts beam[64], next[BEAM_MAX];
    uint32_t nbeam = 1, width = ctx->beam < 64 ? ctx->beam : 64;
    beam[0] = def.o;
    double best = def.us;
    for (int round = 0; round < BEAM_ROUNDS && nbeam && hcq_now_ns() < S.t_end; round++) {
        uint32_t nn = 0;
        for (uint32_t b = 0; b < nbeam && nn < BEAM_MAX; b++) nn += neighbours(&S, &beam[b], next + nn, BEAM_MAX - nn);
        uint32_t limit = ctx->beam_max && ctx->beam_max < BEAM_MAX ? ctx->beam_max : BEAM_MAX;
        for (uint32_t i = 0; i < nn && hcq_now_ns() < S.t_end && S.nseen < limit; i++) try_list(&S, &next[i], best);
        qsort(S.timed, S.ntimed, sizeof *S.timed, cmp_cand);
        if (S.timed[0].us >= best && round) break; /* nothing faster this round */
        best = S.timed[0].us;
        nbeam = S.ntimed < width ? S.ntimed : width;
        for (uint32_t b = 0; b < nbeam; b++) beam[b] = S.timed[b].o;
    }
    qsort(S.timed, S.ntimed, sizeof *S.timed, cmp_cand);
    const cand *win = &S.timed[0];
    if (!opts_equal(&win->o, &def.o) && !confirmed(&S, &def, win)) win = &def;
    char dw[256], ww[256];
    tt_opts_format(&def.o, dw, sizeof dw);
    tt_opts_format(&win->o, ww, sizeof ww);
    BASE_LOG(1, "HCQ_BEAM: %s: kernel %s: %s %.1f us (default %s %.1f us; %u plans timed)", ctx->props.id, win->ke.name, ww,
             win->us, dw, def.us, S.ntimed);
    entry_write(ctx, &id, compiler, &def, win);
    *out = win->ke;
    *done = true;
    search_free(&S);
    return HCQ_OK;
}

hcq_status tt_beam_entry_path(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, char *path, size_t size)
{
    tt_key key = {0};
    tt_lowered lw;
    hcq_status s = tt_key_make(ctx, xs, nx, &key);
    if (!s) s = tt_lower(ctx, xs, nx, &key, &lw);
    if (!s) {
        cc_cache_key id;
        const char *compiler;
        beam_id(ctx, &key, &lw.opts, &id, &compiler);
        snprintf(path, size, "%s/%s.plan", hcq_cache_dir(), id.hex);
        tt_lowered_free(&lw);
    }
    tt_key_free(&key);
    return s;
}

uint32_t tt_beam_neighbours(const tt_space *sp, const tt_opts *o, tt_opts *list, uint32_t max)
{
    search *S = calloc(1, sizeof *S);
    if (!S) return 0;
    S->sp = sp;
    uint32_t n = neighbours(S, o, list, max);
    free(S);
    return n;
}
