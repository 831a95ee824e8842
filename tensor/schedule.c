/* The scheduler: which nodes become buffers (kernels), in which order.
 *
 * Everything reachable from the roots that is not a buffer fuses into the
 * kernel of the nearest materialized node above it, except:
 *   - the roots themselves (unless already a buffer or a view of one);
 *   - hcq_contiguous nodes;
 *   - a reduction whose result is read through an expanding view (it would
 *     be recomputed for every broadcast element), by two kernels or at two
 *     different indexes, or inside another reduction (its loop would run
 *     serially inside the other's: the two stages of a split reduction must
 *     stay apart);
 *   - the top of an elementwise chain over a reduction (mean = sum / n)
 *     when it is read through an expanding view: the chain and the
 *     reduction form one kernel, instead of the reduction alone;
 *   - an elementwise node read by two kernels or at two different indexes
 *     when it costs more than TT_COST_DUP ops to recompute (two reads at
 *     the same index in one kernel are emitted once, so they are free);
 *   - an elementwise node read through an expanding view inside a
 *     reduction (matmul operands) unless it is nearly free (a cast);
 *   - the table of a gather unless it is a buffer, a view of one or a
 *     constant (gathers read it at data-dependent places);
 *   - where a kernel would read more buffers than a launch takes
 *     (TT_MAX_PARAMS - 1 inputs), the fused source holding most of them
 *     (a sum of 100 tensors becomes two kernels, not an error).
 * So (a*b+c).sum() is one kernel and softmax three (max, sum of exp, the
 * division), see tests/unit/test_tensor_sched.c. Then group.c puts the
 * materialized nodes of one loop structure into shared kernels (several
 * outputs each) and orders the kernels: by node creation order, which is
 * topological (a node is always newer than its sources), except that a
 * node joining an earlier kernel runs with it. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

enum { TT_COST_DUP = 8, TT_COST_EXPAND = 1, TT_COST_REDUCE = 1000, TT_COST_MAX = 1u << 20 };
/* A fused chain deeper than this is cut (the node there gets its own
 * kernel), which bounds the recursion of the scheduler, the kernel key and
 * the emitter, and the size of one kernel. */
enum { TT_MAX_FUSED_DEPTH = 1024 };

typedef struct sched_state {
    hcq_ctx *ctx;
    uint32_t round;
    tt_node **mats;
    uint32_t nmats, mcap, marked;
    bool oom;
} sched_state;

/* scratch: `mat` lives for the schedule, the rest for one round */
static void touch(hcq_ctx *ctx, uint32_t round, tt_node *n)
{
    if (n->epoch != ctx->epoch) {
        n->epoch = ctx->epoch;
        n->mat = false;
        n->round = 0;
    }
    if (n->round != round) {
        n->round = round;
        n->cost[0] = n->cost[1] = 0;
        n->walked = 0;
        n->owner = NULL;
        n->owner_viewed = false;
    }
}

static uint32_t op_cost(tt_op op)
{
    switch (op) {
    case TT_BUF:
    case TT_CONST:
    case TT_VIEW:
    case TT_INDEX:
    case TT_BITCAST: return 0;
    case TT_EXP2:
    case TT_LOG2:
    case TT_SIN:
    case TT_SQRT:
    case TT_RECIP:
    case TT_FDIV:
    case TT_IDIV:
    case TT_MOD: return 4;
    case TT_GATHER: return 2;
    case TT_RAND: return 12;
    case TT_REDUCE: return TT_COST_REDUCE;
    default: return 1;
    }
}

/* What recomputing n costs a kernel: its ALU ops down to buffers and
 * materialized nodes (loads are free). A reduction seen through a
 * broadcast (ex) will be materialized (see visit), so it is a load too. */
static uint32_t cost(sched_state *S, tt_node *n, bool ex, int depth)
{
    touch(S->ctx, S->round, n);
    if (n->cost[ex]) return n->cost[ex] - 1;
    if (depth > TT_MAX_FUSED_DEPTH) return TT_COST_MAX;
    uint64_t c = op_cost((tt_op)n->op);
    if (n->op == TT_REDUCE && ex) c = 0;
    else if (n->op != TT_REDUCE && n->op != TT_BUF)
        for (int i = 0; i < n->nsrc && c < TT_COST_MAX; i++) {
            touch(S->ctx, S->round, n->src[i]);
            bool sex = ex || (n->op == TT_VIEW && tt_view_expands(&n->view));
            if (!n->src[i]->mat) c += cost(S, n->src[i], sex, depth + 1);
        }
    if (c > TT_COST_MAX) c = TT_COST_MAX;
    n->cost[ex] = (uint32_t)c + 1;
    return (uint32_t)c;
}

static void mark(sched_state *S, tt_node *x)
{
    if (x->mat) return;
    x->mat = true;
    S->marked++;
    if (S->nmats == S->mcap) {
        uint32_t nc = S->mcap ? S->mcap * 2 : 32;
        tt_node **na = realloc(S->mats, nc * sizeof *na);
        if (!na) {
            S->oom = true;
            return;
        }
        S->mats = na;
        S->mcap = nc;
    }
    S->mats[S->nmats++] = x;
}

static bool is_leaf(const tt_node *x)
{
    return x->op == TT_BUF || x->op == TT_CONST || x->op == TT_INDEX || x->op == TT_RAND;
}

static bool cheap_table(const tt_node *x) { return x->op == TT_CONST || tt_is_buffer_view(x); }

static void walk_srcs(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, bool viewed, int depth);

/* x is reached from kernel `root`; `viewed` when a view lies between. */
static void visit(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, bool viewed, int depth)
{
    touch(S->ctx, S->round, x);
    if (is_leaf(x) || x->mat) return;
    if (depth > TT_MAX_FUSED_DEPTH) {
        mark(S, x);
        return;
    }
    /* read again by another kernel, or maybe at another index */
    bool dup = x->owner && (x->owner != root || viewed || x->owner_viewed);
    bool elementwise = x->op != TT_VIEW && x->op != TT_REDUCE;
    bool must = x->contig || (x->op == TT_REDUCE && (dup || ex || in_r)) ||
                (elementwise && ex && cost(S, x, false, 0) >= TT_COST_REDUCE) ||
                (elementwise && dup && cost(S, x, false, 0) > TT_COST_DUP) ||
                (elementwise && ex && in_r && cost(S, x, false, 0) > TT_COST_EXPAND);
    if (must) {
        mark(S, x);
        return;
    }
    if (!x->owner) {
        x->owner = root;
        x->owner_viewed = viewed;
    }
    /* reached from a second kernel: walk again, so what lies below a shared
     * view (a reduction behind a gradient's permute, read by two optimizer
     * kernels) sees the second reader too */
    bool other = x->owner != root;
    uint32_t bit = 1u << ((in_r ? 2 : 0) + (ex ? 1 : 0) + (viewed ? 4 : 0) + (other ? 8 : 0));
    if (x->walked & bit) return;
    x->walked |= bit;
    walk_srcs(S, x, in_r, ex, root, viewed, depth);
}

static void walk_srcs(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, bool viewed, int depth)
{
    for (int i = 0; i < x->nsrc; i++) {
        tt_node *s = x->src[i];
        if (x->op == TT_GATHER && i == 0 && !cheap_table(s)) {
            touch(S->ctx, S->round, s);
            if (!is_leaf(s)) mark(S, s);
            continue;
        }
        bool sex = x->op == TT_VIEW ? ex || tt_view_expands(&x->view) : x->op == TT_REDUCE ? false : ex;
        visit(S, s, in_r || x->op == TT_REDUCE, sex, root, viewed || x->op == TT_VIEW, depth + 1);
    }
}

/* ** kernels with too many inputs */
enum { TT_MAX_INPUTS = TT_MAX_PARAMS - 1 };

typedef struct in_set {
    const void *p[TT_MAX_INPUTS + 1];
    uint32_t n;
} in_set;

static void in_add(in_set *s, const void *p)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->p[i] == p) return;
    if (s->n <= TT_MAX_INPUTS) s->p[s->n++] = p;
}

/* The kernel parameters x's fused subtree needs (as cache.c's key makes
 * them: buffers, random nodes, and materialized nodes, which will be
 * buffers), counted up to TT_MAX_INPUTS + 1. */
static void inputs_of(sched_state *S, tt_node *x, const tt_node *root, uint32_t stamp, in_set *s)
{
    if (s->n > TT_MAX_INPUTS) return;
    touch(S->ctx, S->round, x);
    if (x->counted == stamp) return;
    x->counted = stamp;
    if ((x != root && x->mat) || x->op == TT_RAND) in_add(s, x);
    else if (x->op == TT_BUF) in_add(s, x->buf);
    else
        for (int i = 0; i < x->nsrc; i++) inputs_of(S, x->src[i], root, stamp, s);
}

static uint32_t count_inputs(sched_state *S, tt_node *x, const tt_node *root)
{
    in_set s = {.n = 0};
    if (++S->ctx->count_stamp == 0) ++S->ctx->count_stamp; /* 0 is "never counted" */
    inputs_of(S, x, root, S->ctx->count_stamp, &s);
    return s.n;
}

/* Marks, below each kernel root reading too many inputs, the fused source
 * with the most inputs that fits in one kernel: its kernel then reads
 * those, the root only its buffer. A node has at most three sources, so
 * going down from a node over the limit always finds one. Returns whether
 * anything was marked (the rounds then run again). */
static bool split_wide(sched_state *S)
{
    bool any = false;
    for (uint32_t i = 0; i < S->nmats && !S->oom; i++) {
        tt_node *root = S->mats[i], *x = root;
        if (count_inputs(S, root, root) <= TT_MAX_INPUTS) continue;
        for (;;) {
            tt_node *best = NULL;
            uint32_t bestn = 0;
            for (int k = 0; k < x->nsrc; k++) {
                tt_node *s = x->src[k];
                touch(S->ctx, S->round, s);
                if (is_leaf(s) || s->mat) continue;
                uint32_t n = count_inputs(S, s, s);
                if (n > bestn) best = s, bestn = n;
            }
            if (!best) break;
            if (bestn > TT_MAX_INPUTS) {
                x = best;
                continue;
            }
            while (best->op == TT_VIEW && !is_leaf(best->src[0]) && !best->src[0]->mat)
                best = best->src[0]; /* keep the view; materialize what it shows */
            mark(S, best);
            any = true;
            break;
        }
    }
    return any;
}

static int by_id(const void *a, const void *b)
{
    const tt_node *x = *(tt_node *const *)a, *y = *(tt_node *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

hcq_status tt_schedule(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_sched *out)
{
    memset(out, 0, sizeof *out);
    ctx->epoch++;
    sched_state S = {.ctx = ctx, .round = 1};
    /* A root that only reshapes another node realizes that node and stays
     * a view of it. */
    for (uint32_t i = 0; i < nroots && !S.oom; i++) {
        tt_node *r = roots[i];
        while (r->op == TT_VIEW && !r->contig && tt_view_is_reshape(&r->view, r->src[0]->shape, r->src[0]->ndim))
            r = r->src[0];
        if (r->op == TT_BUF || (!r->contig && tt_is_buffer_view(r))) continue;
        touch(ctx, S.round, r);
        mark(&S, r);
    }
    /* Rounds: walk down from every kernel root with fresh ownership; what a
     * round materializes is walked as a root only in the next, so its
     * subtree is not judged by ownership its old kernel left behind. */
    while (!S.oom) {
        uint32_t n = S.nmats;
        S.marked = 0;
        S.round++;
        for (uint32_t i = n; i-- > 0 && !S.oom;) {
            touch(ctx, S.round, S.mats[i]);
            walk_srcs(&S, S.mats[i], false, false, S.mats[i], false, 0);
        }
        if (!S.marked && !split_wide(&S)) break;
    }
    if (S.oom) {
        free(S.mats);
        return base_err(HCQ_ENOMEM, "scheduling: out of memory");
    }
    if (S.nmats) qsort(S.mats, S.nmats, sizeof *S.mats, by_id);
    for (uint32_t i = 0; i < S.nmats; i++) tt_node_ref(S.mats[i]);
    hcq_status s = tt_group(ctx, S.mats, S.nmats, out); /* takes S.mats */
    if (s) tt_sched_free(out);
    return s;
}

void tt_sched_free(tt_sched *s)
{
    for (uint32_t i = 0; i < s->n; i++) tt_node_unref(s->items[i]);
    free(s->items);
    free(s->kfirst);
    memset(s, 0, sizeof *s);
}
