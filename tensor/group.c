/* Multi-output kernels: which of the nodes the scheduler materializes share
 * one kernel, and the order the kernels run in.
 *
 * Two materialized nodes can be written by one kernel when they have the
 * same loop structure: the same shape, and either no reduction (elementwise:
 * one output element per lane of each) or the same one reduction structure
 * (the same reduced source shape, axes, op and dtype; the plan the lowering
 * picks for the first fits every other). The kernel computes every output's
 * value at each lane, then stores them all, so an optimizer's update of a
 * parameter and its moments loads the gradient and the old state once.
 *
 * The nodes are taken in creation order (topological); each joins the
 * earliest kernel it fits, or starts a new one at the end. Joining kernel
 * G moves the node up to G's place in the run order, which is allowed when:
 *   - every kernel it reads a result of runs before G (so it does not read
 *     an output of G itself, or of anything after G);
 *   - it stores into an existing buffer B (hcq_assign) that no kernel after
 *     G reads (they ran before its store, and would now run after it);
 *   - within G, no output's value reads another's destination buffer (or
 *     its own) other than at the element it stores: a lane loads those
 *     elements before any store, so reading the stored element sees the old
 *     value, as hcq_assign_all defines, but another element may already be
 *     overwritten by another work-item;
 *   - G has fewer than G_MAX_OUT outputs and the union of the inputs still
 *     fits a launch's parameters with the outputs.
 * Nodes that pick a kept copy at run time (layout copies) or have no
 * elements run on their own. HCQ_DEBUG=2 says which kernels got several
 * outputs and why a node of the same structure did not join one. */
#include "tensor/tt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { G_MAX_OUT = 8, G_MAX_DEPTH = 4096 };

/* ** the HCQ_DEBUG=2 lines, kept until the schedule is chosen */
static void glog(tt_glog *log, const char *fmt, ...) HCQ_PRINTF(2, 3);
static void glog(tt_glog *log, const char *fmt, ...)
{
    if (!log) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (len < 0) return;
    size_t l = (size_t)len < sizeof line ? (size_t)len : sizeof line - 1;
    if (log->n + l + 1 > log->cap) {
        size_t nc = log->cap ? log->cap * 2 : 1024;
        while (nc < log->n + l + 1) nc *= 2;
        char *ns = realloc(log->s, nc);
        if (!ns) return; /* a debug line lost */
        log->s = ns;
        log->cap = nc;
    }
    memcpy(log->s + log->n, line, l);
    log->n += l;
    log->s[log->n++] = 0;
}

void tt_glog_flush(const hcq_ctx *ctx, const tt_glog *log)
{
    for (size_t p = 0; p < log->n; p += strlen(log->s + p) + 1) base_log(2, "%s: schedule: %s", ctx->props.id, log->s + p);
}

void tt_glog_free(tt_glog *log)
{
    free(log->s);
    *log = (tt_glog){0};
}

typedef struct g_read {
    const tt_buf *b;
    bool same; /* only at the element the kernel stores */
} g_read;

typedef struct g_item {
    tt_node *x;
    bool alone;        /* never shares a kernel */
    const tt_node *red; /* its one reduction (the lowering's main), or NULL */
    uint32_t *deps, ndeps, dcap;
    g_read *rd;
    uint32_t nrd, rcap;
    const void *in[TT_MAX_PARAMS]; /* kernel inputs: buffers, random nodes, materialized nodes */
    uint32_t nin;
    uint32_t grp;
} g_item;

typedef struct g_grp {
    uint32_t m[G_MAX_OUT];
    uint32_t n;
} g_grp;

/* a buffer some node of this schedule stores into, and the last kernel
 * (in the order built so far) that reads it */
typedef struct g_target {
    const tt_buf *b;
    uint32_t last;
    bool read;
} g_target;

typedef struct g_state {
    hcq_ctx *ctx;
    g_item *it;
    uint32_t n;
    g_grp *grp;
    uint32_t ngrp;
    g_target *T;
    uint32_t nT;
    uint32_t stamp;
    bool oom;
} g_state;

static bool is_mat(const hcq_ctx *ctx, const tt_node *n) { return n->epoch == ctx->epoch && n->mat; }

static g_target *target_of(g_state *G, const tt_buf *b)
{
    for (uint32_t i = 0; i < G->nT; i++)
        if (G->T[i].b == b) return &G->T[i];
    return NULL;
}

static void add_in(g_state *G, g_item *it, const void *p)
{
    for (uint32_t i = 0; i < it->nin; i++)
        if (it->in[i] == p) return;
    if (it->nin == TT_MAX_PARAMS) {
        it->alone = true; /* the scheduler keeps kernels within a launch; do not judge the rest */
        return;
    }
    (void)G;
    it->in[it->nin++] = p;
}

static void add_dep(g_state *G, g_item *it, uint32_t d)
{
    for (uint32_t i = 0; i < it->ndeps; i++)
        if (it->deps[i] == d) return;
    if (it->ndeps == it->dcap) {
        uint32_t nc = it->dcap ? it->dcap * 2 : 8;
        uint32_t *nd = base_realloc_array(it->deps, nc, sizeof *nd);
        if (!nd) {
            G->oom = true;
            return;
        }
        it->deps = nd;
        it->dcap = nc;
    }
    it->deps[it->ndeps++] = d;
}

static void add_read(g_state *G, g_item *it, const tt_buf *b, bool same)
{
    for (uint32_t i = 0; i < it->nrd; i++)
        if (it->rd[i].b == b) {
            it->rd[i].same = it->rd[i].same && same;
            return;
        }
    if (it->nrd == it->rcap) {
        uint32_t nc = it->rcap ? it->rcap * 2 : 4;
        g_read *nr = base_realloc_array(it->rd, nc, sizeof *nr);
        if (!nr) {
            G->oom = true;
            return;
        }
        it->rd = nr;
        it->rcap = nc;
    }
    it->rd[it->nrd++] = (g_read){b, same};
}

/* x's fused graph: the materialized nodes it reads (dependencies), its
 * inputs, its reads of destination buffers (at the stored element or not:
 * as assign.c judges, through elementwise ops and identity views only),
 * and the reductions reached through elementwise ops and views alone (as
 * the lowering's find_main looks for its main one). */
static void gwalk(g_state *G, g_item *it, tt_node *n, bool same, bool mp, int depth)
{
    if (G->oom || it->alone) return;
    if (n != it->x && is_mat(G->ctx, n)) {
        add_dep(G, it, n->gidx);
        add_in(G, it, n);
        return;
    }
    if (depth > G_MAX_DEPTH) {
        it->alone = true;
        return;
    }
    if (n->gstamp != G->stamp) {
        n->gstamp = G->stamp;
        n->gseen = 0;
    }
    uint8_t bit = (uint8_t)(1u << ((same ? 1 : 0) + (mp ? 2 : 0)));
    if (n->gseen & bit) return;
    bool first = !n->gseen, first_mp = mp && !(n->gseen & 0xc);
    n->gseen |= bit;
    for (int d = 0; first && d < n->ndim; d++)
        if (n->sym[d] && n->sym[d] <= G->ctx->nsyms) add_in(G, it, &G->ctx->syms[n->sym[d] - 1]);
    switch ((tt_op)n->op) {
    case TT_BUF:
        if (first) add_in(G, it, n->buf);
        if (target_of(G, n->buf)) add_read(G, it, n->buf, same);
        return;
    case TT_RAND:
        if (first) add_in(G, it, n);
        return;
    case TT_SYMVAL: /* a kernel argument, as a variable dim's value is */
        if (first) add_in(G, it, &G->ctx->syms[n->axes - 1]);
        return;
    case TT_CONST:
    case TT_INDEX: return;
    case TT_REDUCE:
        if (first_mp) {
            if (it->red) it->alone = true; /* two reductions: the lowering has no main one */
            it->red = n;
        }
        break;
    default: break;
    }
    bool keeps = n->op != TT_VIEW && n->op != TT_REDUCE && n->op != TT_GATHER;
    if (n->op == TT_VIEW && tt_view_is_identity(&n->view, n->src[0]->shape, n->src[0]->ndim)) keeps = true;
    bool smp = mp && n->op != TT_REDUCE && n->op != TT_GATHER;
    for (int i = 0; i < n->nsrc; i++) gwalk(G, it, n->src[i], same && keeps, smp, depth + 1);
}

bool tt_same_reduce(const tt_node *a, const tt_node *b)
{
    if (a == b) return true;
    if (!a || !b || a->op != TT_REDUCE || b->op != TT_REDUCE || a->nsrc != 1 || b->nsrc != 1) return false;
    const tt_node *x = a->src[0], *y = b->src[0];
    return a->rop == b->rop && a->dtype == b->dtype && a->axes == b->axes && a->ndim == b->ndim &&
           !memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape) && x->ndim == y->ndim &&
           !memcmp(x->shape, y->shape, x->ndim * sizeof *x->shape);
}

static int64_t red_size(const tt_node *r)
{
    int64_t n = 1;
    for (int d = 0; d < r->src[0]->ndim; d++)
        if (r->axes & (1u << d)) n *= r->src[0]->shape[d];
    return n;
}

static bool same_structure(const g_item *a, const g_item *b)
{
    const tt_node *x = a->x, *y = b->x;
    if (x->ndim != y->ndim || memcmp(x->shape, y->shape, x->ndim * sizeof *x->shape) || memcmp(x->sym, y->sym, sizeof x->sym))
        return false;
    return (!a->red && !b->red) || (a->red && b->red && tt_same_reduce(a->red, b->red));
}

static void shape_str(const tt_node *x, char *out, size_t size)
{
    size_t p = (size_t)snprintf(out, size, "[");
    for (int d = 0; d < x->ndim && p + 24 < size; d++)
        p += (size_t)snprintf(out + p, size - p, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
    snprintf(out + p, size - p, "]");
}

static const char *what(const tt_node *x) { return x->assign ? "an assignment" : "a tensor"; }

/* Why `it` cannot join kernel g (NULL: it can). */
static const char *refuse(g_state *G, const g_item *it, uint32_t g, char *why, size_t size)
{
    const g_grp *k = &G->grp[g];
    if (k->n == G_MAX_OUT) return snprintf(why, size, "the kernel has %d outputs already", G_MAX_OUT), why;
    const tt_buf *B = it->x->assign;
    if (B) {
        const g_target *t = target_of(G, B);
        if (t && t->read && t->last > g)
            return snprintf(why, size, "it stores into a buffer that a later kernel (#%u) reads first", t->last), why;
    }
    const void *u[TT_MAX_PARAMS];
    uint32_t nu = 0;
    for (uint32_t a = 0; a < k->n; a++) {
        const g_item *m = &G->it[k->m[a]];
        for (uint32_t r = 0; r < m->nrd; r++)
            if (B && m->rd[r].b == B && !m->rd[r].same)
                return snprintf(why, size, "node %llu of that kernel reads the buffer it stores into elsewhere than at the stored element",
                                (unsigned long long)m->x->id),
                       why;
        for (uint32_t r = 0; r < it->nrd; r++)
            if (m->x->assign && it->rd[r].b == m->x->assign && !it->rd[r].same)
                return snprintf(why, size, "it reads the buffer node %llu of that kernel stores into elsewhere than at the stored element",
                                (unsigned long long)m->x->id),
                       why;
        for (uint32_t i = 0; i < m->nin; i++) {
            uint32_t j = 0;
            while (j < nu && u[j] != m->in[i]) j++;
            if (j == nu && nu < TT_MAX_PARAMS) u[nu++] = m->in[i];
        }
    }
    for (uint32_t i = 0; i < it->nin; i++) {
        uint32_t j = 0;
        while (j < nu && u[j] != it->in[i]) j++;
        if (j == nu && nu < TT_MAX_PARAMS) u[nu++] = it->in[i];
    }
    if (nu + k->n + 1 > TT_MAX_PARAMS)
        return snprintf(why, size, "together they would read %u buffers and write %u (a launch takes %d)", nu, k->n + 1,
                        TT_MAX_PARAMS),
               why;
    return NULL;
}

static void log_kernel(g_state *G, const g_grp *k, tt_glog *log)
{
    char sh[96], ids[160];
    const g_item *f = &G->it[k->m[0]];
    shape_str(f->x, sh, sizeof sh);
    size_t p = 0;
    ids[0] = 0;
    for (uint32_t a = 0; a < k->n && p + 32 < sizeof ids; a++) {
        const tt_node *x = G->it[k->m[a]].x;
        p += (size_t)snprintf(ids + p, sizeof ids - p, "%s%llu (%s)", a ? ", " : "", (unsigned long long)x->id,
                              x->assign ? "assign" : "new");
    }
    bool one = true; /* one reduction node, or several of one structure */
    for (uint32_t a = 1; a < k->n; a++) one = one && G->it[k->m[a]].red == f->red;
    if (f->red)
        glog(log, "one kernel writes %u outputs of shape %s over %s reduction%s of %lld elements: nodes %s", k->n, sh,
             one ? "one" : "one loop structure of", one ? "" : "s", (long long)red_size(f->red), ids);
    else
        glog(log, "one kernel writes %u outputs of shape %s, elementwise: nodes %s", k->n, sh, ids);
}

static void free_items(g_state *G)
{
    for (uint32_t i = 0; i < G->n; i++) {
        free(G->it[i].deps);
        free(G->it[i].rd);
    }
    free(G->it);
    free(G->grp);
    free(G->T);
}

/* mats: the materialized nodes in creation order (referenced by the
 * caller). Writes the kernels' order to out (items, kfirst, nk). */
hcq_status tt_group(hcq_ctx *ctx, tt_node **mats, uint32_t n, tt_sched *out, tt_glog *log)
{
    out->items = mats;
    out->n = out->cap = n;
    out->kfirst = base_calloc((size_t)n + 1, sizeof *out->kfirst);
    if (!out->kfirst) return HCQ_ENOMEM;
    if (n < 2) {
        out->nk = n;
        out->kfirst[n] = n;
        return HCQ_OK;
    }
    g_state G = {.ctx = ctx, .n = n};
    G.it = base_calloc(n, sizeof *G.it);
    G.grp = base_calloc(n, sizeof *G.grp);
    G.T = base_calloc(n, sizeof *G.T);
    if (!G.it || !G.grp || !G.T) {
        free_items(&G);
        return HCQ_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        mats[i]->gidx = i;
        if (mats[i]->assign) G.T[G.nT++] = (g_target){mats[i]->assign, 0, false};
    }
    for (uint32_t i = 0; i < n && !G.oom; i++) {
        g_item *it = &G.it[i];
        it->x = mats[i];
        it->alone = mats[i]->relayout || tt_numel(mats[i]->shape, mats[i]->ndim) == 0;
        if (++ctx->count_stamp == 0) ++ctx->count_stamp;
        G.stamp = ctx->count_stamp;
        gwalk(&G, it, mats[i], true, true, 0);
        if (it->red && red_size(it->red) <= 1) it->red = NULL; /* the lowering plans it as elementwise */
    }
    char why[160];
    for (uint32_t i = 0; i < n && !G.oom; i++) {
        g_item *it = &G.it[i];
        uint32_t start = 0, g = UINT32_MAX;
        for (uint32_t d = 0; d < it->ndeps; d++)
            if (G.it[it->deps[d]].grp + 1 > start) start = G.it[it->deps[d]].grp + 1;
        for (uint32_t k = start; k < G.ngrp && !it->alone; k++) {
            const g_item *f = &G.it[G.grp[k].m[0]];
            if (f->alone || !same_structure(f, it)) continue;
            const char *r = refuse(&G, it, k, why, sizeof why);
            if (!r) {
                g = k;
                break;
            }
            if (log) {
                char sh[96];
                shape_str(it->x, sh, sizeof sh);
                glog(log, "%s %s (node %llu) not in the kernel of node %llu: %s", what(it->x), sh, (unsigned long long)it->x->id,
                     (unsigned long long)f->x->id, r);
            }
        }
        if (g == UINT32_MAX) g = G.ngrp++;
        G.grp[g].m[G.grp[g].n++] = i;
        it->grp = g;
        for (uint32_t r = 0; r < it->nrd; r++) {
            g_target *t = target_of(&G, it->rd[r].b);
            if (t && (!t->read || t->last < g)) t->last = g;
            if (t) t->read = true;
        }
    }
    if (G.oom) {
        free_items(&G);
        return base_err(HCQ_ENOMEM, "scheduling: out of memory");
    }
    tt_node **order = base_calloc(n, sizeof *order);
    if (!order) {
        free_items(&G);
        return HCQ_ENOMEM;
    }
    uint32_t p = 0;
    for (uint32_t k = 0; k < G.ngrp; k++) {
        out->kfirst[k] = p;
        for (uint32_t a = 0; a < G.grp[k].n; a++) {
            order[p] = mats[G.grp[k].m[a]];
            order[p]->gidx = k; /* from here on: the kernel it is written by */
            p++;
        }
        if (log && G.grp[k].n > 1) log_kernel(&G, &G.grp[k], log);
    }
    out->kfirst[G.ngrp] = n;
    out->nk = G.ngrp;
    memcpy(mats, order, n * sizeof *order);
    free(order);
    free_items(&G);
    return HCQ_OK;
}
