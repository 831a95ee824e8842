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

/* A node reached by two kernels that one kernel will write together
 * (pass 2, see tt_schedule): fused into it on condition they stay one. */
typedef struct shared_read {
    const tt_node *a, *b;
} shared_read;

typedef struct sched_state {
    hcq_ctx *ctx;
    uint32_t round;
    tt_node **mats;
    uint32_t nmats, mcap, marked;
    uint32_t dup_marks; /* nodes materialized because two kernels read them */
    uint32_t gep;       /* pass 2: nodes with this grep_epoch have a kernel group (grep) */
    shared_read *shared;
    uint32_t nshared, scap;
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
        n->owner_viewed = 0;
    }
}

static uint32_t op_cost(tt_op op)
{
    switch (op) {
    case TT_BUF:
    case TT_CONST:
    case TT_VIEW:
    case TT_INDEX:
    case TT_SYMVAL:
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
    return x->op == TT_BUF || x->op == TT_CONST || x->op == TT_INDEX || x->op == TT_RAND || x->op == TT_SYMVAL;
}

static bool cheap_table(const tt_node *x) { return x->op == TT_CONST || tt_is_buffer_view(x); }

/* `viewed` bits: a view lies between the kernel root and the node (V_ANY),
 * one that is not a reshape (V_MOVED: the node's linear index is not the
 * root's) */
enum { V_ANY = 1, V_MOVED = 2 };

static void walk_srcs(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, uint8_t viewed, int depth);

/* pass 2: a and b are written by one kernel (group.c's first grouping) */
static bool one_kernel(const sched_state *S, const tt_node *a, const tt_node *b)
{
    return S->gep && a->grep_epoch == S->gep && b->grep_epoch == S->gep && a->grep == b->grep;
}

static void note_shared(sched_state *S, const tt_node *a, const tt_node *b)
{
    if (S->nshared == S->scap) {
        uint32_t nc = S->scap ? S->scap * 2 : 16;
        shared_read *ns = realloc(S->shared, nc * sizeof *ns);
        if (!ns) {
            S->oom = true;
            return;
        }
        S->shared = ns;
        S->scap = nc;
    }
    S->shared[S->nshared++] = (shared_read){a, b};
}

/* A product's reduction (hcq_matmul: sum(x[.., M, 1, K] * y[.., 1, N, K]),
 * both operands broadcast) gets a register tile on CPU targets, whose code
 * the C compiler vectorizes only alone: with an optimizer's update of every
 * tile element after it, clang's SLP vectorizer gave up on the whole
 * kernel (the 784-32-10 MLP's weight update ran 4x slower than the
 * product and the update apart). Such a reduction below a shared node
 * keeps its own kernel. */
static const tt_node *skip_casts(const tt_node *n)
{
    while (n->op == TT_CAST) n = n->src[0];
    return n;
}

static bool broadcast_view(const tt_node *n)
{
    n = skip_casts(n);
    return n->op == TT_VIEW && tt_view_expands(&n->view);
}

static bool tiled_reduce_below(const tt_node *n, int depth)
{
    if (n->op == TT_REDUCE) {
        const tt_node *p = skip_casts(n->src[0]);
        return p->op == TT_MUL && broadcast_view(p->src[0]) && broadcast_view(p->src[1]);
    }
    if (depth > 16 || n->op == TT_BUF || n->op == TT_GATHER) return false;
    for (int i = 0; i < n->nsrc; i++)
        if (tiled_reduce_below(n->src[i], depth + 1)) return true;
    return false;
}

/* x is reached from kernel `root` through `viewed` views. */
static void visit(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, uint8_t viewed, int depth)
{
    touch(S->ctx, S->round, x);
    if (is_leaf(x) || x->mat) return;
    if (depth > TT_MAX_FUSED_DEPTH) {
        mark(S, x);
        return;
    }
    /* read again by another kernel, or maybe at another index; in pass 2
     * another output of the same kernel reading it at the same linear
     * index (through elementwise ops and reshapes only) is no second read */
    bool shared = x->owner && x->owner != root && one_kernel(S, x->owner, root) && !((viewed | x->owner_viewed) & V_MOVED) &&
                  !tiled_reduce_below(x, 0);
    bool dup = x->owner && !shared && (x->owner != root || ((viewed | x->owner_viewed) & V_ANY));
    bool elementwise = x->op != TT_VIEW && x->op != TT_REDUCE;
    bool must = x->contig || (x->op == TT_REDUCE && (dup || ex || in_r)) ||
                (elementwise && ex && cost(S, x, false, 0) >= TT_COST_REDUCE) ||
                (elementwise && dup && cost(S, x, false, 0) > TT_COST_DUP) ||
                (elementwise && ex && in_r && cost(S, x, false, 0) > TT_COST_EXPAND);
    if (must) {
        if (dup && !x->contig) S->dup_marks++;
        mark(S, x);
        return;
    }
    if (shared) { /* walked from the first reader already, with the same flags */
        note_shared(S, x->owner, root);
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
    uint32_t bit = 1u << ((in_r ? 2 : 0) + (ex ? 1 : 0) + (viewed & V_ANY ? 4 : 0) + (other ? 8 : 0) + (viewed & V_MOVED ? 16 : 0));
    if (x->walked & bit) return;
    x->walked |= bit;
    walk_srcs(S, x, in_r, ex, root, viewed, depth);
}

static void walk_srcs(sched_state *S, tt_node *x, bool in_r, bool ex, const tt_node *root, uint8_t viewed, int depth)
{
    uint8_t sv = viewed;
    if (x->op == TT_VIEW)
        sv |= V_ANY | (tt_view_is_reshape(&x->view, x->src[0]->shape, x->src[0]->ndim) && !x->view.mask ? 0 : V_MOVED);
    for (int i = 0; i < x->nsrc; i++) {
        tt_node *s = x->src[i];
        if (x->op == TT_GATHER && i == 0 && !cheap_table(s)) {
            touch(S->ctx, S->round, s);
            if (!is_leaf(s)) mark(S, s);
            continue;
        }
        bool sex = x->op == TT_VIEW ? ex || tt_view_expands(&x->view) : x->op == TT_REDUCE ? false : ex;
        visit(S, s, in_r || x->op == TT_REDUCE, sex, root, x->op == TT_REDUCE || x->op == TT_GATHER ? sv | V_MOVED : sv,
              depth + 1);
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
    if ((x != root && x->mat) || x->op == TT_RAND || x->op == TT_SYMVAL) in_add(s, x);
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

/* One marking pass: S->mats are the nodes to materialize, by id,
 * referenced. */
static hcq_status mark_pass(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, sched_state *S)
{
    ctx->epoch++;
    S->ctx = ctx;
    S->round = 1;
    /* A root that only reshapes another node realizes that node and stays
     * a view of it. */
    for (uint32_t i = 0; i < nroots && !S->oom; i++) {
        tt_node *r = roots[i];
        while (r->op == TT_VIEW && !r->contig && tt_view_is_reshape(&r->view, r->src[0]->shape, r->src[0]->ndim))
            r = r->src[0];
        if (r->op == TT_BUF || (!r->contig && tt_is_buffer_view(r))) continue;
        touch(ctx, S->round, r);
        mark(S, r);
    }
    /* Rounds: walk down from every kernel root with fresh ownership; what a
     * round materializes is walked as a root only in the next, so its
     * subtree is not judged by ownership its old kernel left behind. */
    while (!S->oom) {
        uint32_t n = S->nmats;
        S->marked = 0;
        S->round++;
        for (uint32_t i = n; i-- > 0 && !S->oom;) {
            touch(ctx, S->round, S->mats[i]);
            walk_srcs(S, S->mats[i], false, false, S->mats[i], 0, 0);
        }
        if (!S->marked && !split_wide(S)) break;
    }
    if (S->oom) {
        free(S->mats);
        free(S->shared);
        S->mats = NULL;
        S->shared = NULL;
        return base_err(HCQ_ENOMEM, "scheduling: out of memory");
    }
    if (S->nmats) qsort(S->mats, S->nmats, sizeof *S->mats, by_id);
    for (uint32_t i = 0; i < S->nmats; i++) tt_node_ref(S->mats[i]);
    return HCQ_OK;
}

/* The first pass materializes what two kernels read; when grouping then
 * puts such readers into one kernel (an optimizer's parameter and moment
 * updates all reading one gradient), a second pass marks again knowing
 * the groups: a node the outputs of one kernel read at the same linear
 * index is computed once inside that kernel (the gradient's reduction
 * runs in the update's kernel). It is kept only if the grouping that
 * follows does put those readers into one kernel again; otherwise the
 * first pass's schedule stands. */
hcq_status tt_schedule(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_sched *out)
{
    memset(out, 0, sizeof *out);
    bool dbg = hcq_debug_level() >= 2 && !ctx->sched_quiet;
    tt_glog log1 = {0}, log2 = {0};
    sched_state S = {0};
    hcq_status s = mark_pass(ctx, roots, nroots, &S);
    if (!s) s = tt_group(ctx, S.mats, S.nmats, out, dbg ? &log1 : NULL); /* takes S.mats */
    bool multi = false;
    for (uint32_t k = 0; !s && k < out->nk && !multi; k++) multi = out->kfirst[k + 1] - out->kfirst[k] > 1;
    if (s || !multi || !S.dup_marks) goto done;
    uint32_t gep = ++ctx->grep_epoch ? ctx->grep_epoch : ++ctx->grep_epoch;
    for (uint32_t k = 0; k < out->nk; k++)
        for (uint32_t i = out->kfirst[k]; i < out->kfirst[k + 1] && out->kfirst[k + 1] - out->kfirst[k] > 1; i++) {
            out->items[i]->grep = out->items[out->kfirst[k]];
            out->items[i]->grep_epoch = gep;
        }
    sched_state S2 = {.gep = gep};
    tt_sched two = {0};
    s = mark_pass(ctx, roots, nroots, &S2);
    if (!s && !S2.nshared) { /* nothing changed: the marks are the first pass's */
        for (uint32_t i = 0; i < S2.nmats; i++) tt_node_unref(S2.mats[i]);
        free(S2.mats);
        goto done;
    }
    if (!s) s = tt_group(ctx, S2.mats, S2.nmats, &two, dbg ? &log2 : NULL);
    bool ok = !s;
    for (uint32_t i = 0; ok && i < S2.nshared; i++) ok = S2.shared[i].a->gidx == S2.shared[i].b->gidx;
    free(S2.shared);
    if (ok) {
        tt_sched_free(out);
        *out = two;
        tt_glog_free(&log1);
        log1 = log2;
        log2 = (tt_glog){0};
        goto done;
    }
    tt_sched_free(&two);
    tt_sched_free(out);
    tt_glog_free(&log1);
    tt_glog_free(&log2);
    if (s) goto done;
    /* the first pass again (its marks and kernel numbers) */
    free(S.shared);
    S = (sched_state){0};
    s = mark_pass(ctx, roots, nroots, &S);
    if (!s) s = tt_group(ctx, S.mats, S.nmats, out, dbg ? &log1 : NULL);
done:
    free(S.shared);
    if (s) tt_sched_free(out);
    else tt_glog_flush(ctx, &log1);
    tt_glog_free(&log1);
    tt_glog_free(&log2);
    return s;
}

void tt_sched_free(tt_sched *s)
{
    for (uint32_t i = 0; i < s->n; i++) tt_node_unref(s->items[i]);
    free(s->items);
    free(s->kfirst);
    memset(s, 0, sizeof *s);
}
