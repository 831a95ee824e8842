#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

/* Graphs. Capture records every node straight into internal queues, one per
 * engine of each device the graph uses, with variables where a replay may
 * change something: the user's variables, the address of each (buffer,
 * offset) a node names, and each device's timeline address and values. A
 * replay only patches those fields and submits the recorded streams:
 * nothing is encoded again.
 *
 * Order: nodes run in capture order, each finishing before the next starts.
 * Within one queue that is the queue's own order; where consecutive nodes
 * use different queues (another engine, or another device), the first
 * queue signals a graph-private signal with the node's sync number and the
 * second waits for it. The signal is host memory of the graph's device,
 * mapped for every other device of the graph (mem_signal_map_for), so the
 * order across devices runs on the GPUs. The private signal is reset by
 * the host before a replay, when no replay is in flight (replays wait for
 * the previous one: patching kernarg memory under a running replay would
 * change what it reads).
 *
 * Devices: the graph's own (hcq_graph_create) and every device one of its
 * nodes runs on or names a buffer of ("parts", at most G_MAXDEV). A device
 * joins at the first node that involves it: that node's queue first waits
 * for the device's timeline value before the replay (the work the device
 * had been given), so the node follows it.
 *
 * Shape of a replay (n_d = the timeline value it takes on device d):
 *   each queue:     wait(tl_d, n_d - 1) ... nodes ...
 *   the last node's queue:  ... signal(sync, last)
 *   d's compute:    ... [wait(sync, last)] wait(tl_d, n_d - 1) signal(tl_d, n_d)
 * so every device's timeline passes n_d only once the whole graph has run:
 * later work on any of its devices follows the replay as a unit, and
 * hcq_device_synchronize on any one of them waits for all of its nodes
 * (not for the other devices' own timeline releases, each the packet after
 * their wait: those land a moment later).
 */

/* Internal variables carry this bit while capturing; sealing renumbers them
 * after the user's. */
#define IVAR_BIT 0x80000000u
#define USER_VAR_MAX 0x10000000u
#define IVAR(i) HCQ_VAR(IVAR_BIT | (uint32_t)(i))

/* per part d: its timeline's address, the value waited for, the value
 * signalled, at IV_TL(d, k); the buffers after every part's */
#define G_MAXDEV 8
enum { IV_TL_ADDR, IV_TL_WAIT, IV_TL_SIG, IV_PER_DEV };
#define IV_TL(d, k) ((uint32_t)(d) * IV_PER_DEV + (k))
#define IV_FIRST_BUF (G_MAXDEV * IV_PER_DEV)

typedef struct g_buf {
    hcq_buffer *orig, *repl;
    uint64_t offset;
    uint64_t need; /* bytes a replacement needs (0: the original's size; hcq_graph_buffer_need) */
    uint32_t users; /* parts whose nodes reach it (bit per part): a replacement is mapped for each */
    bool owned;     /* the graph's own (q_graph_own): its handle may be gone */
} g_buf;

/* one device's share of the graph */
typedef struct g_part {
    hcq_device *dev;
    hcq_queue *q[2];
    uint64_t last_tl;   /* the timeline value of the last replay, 0 if none */
    q_prof_points prof; /* HCQ_PROFILE: around each node on this device */
} g_part;

struct hcq_graph {
    hcq_device *dev; /* the graph's own: it lists the graph, owns the sync signal */
    g_part part[G_MAXDEV];
    uint32_t nparts; /* part[0] is dev's */
    g_buf *bufs; /* internal var IV_FIRST_BUF + i */
    uint32_t nbufs, bcap;
    uint32_t nuser; /* user variables used: max index + 1 */
    hcq_queue *last_q; /* the queue of the last node */
    uint32_t cur; /* the part whose node is being captured (buf_var) */
    uint32_t joined; /* parts that joined during the node being captured (bits) */
    uint32_t nsync;
    hcq_signal *sync;
    uint32_t nodes;
    bool sealed;
    uint64_t *vars;
    uint32_t nvars;
    q_holds holds;      /* programs and captured buffers (replacements: bufs[i].repl) */
    hcq_graph *next, *prev;
};

static hcq_status note_user_val(hcq_graph *g, hcq_val v, const char *fn)
{
    if (!hcq_val_is_var(v)) return HCQ_OK;
    uint32_t k = hcq_val_var_index(v);
    if (k >= USER_VAR_MAX) return base_err(HCQ_EINVAL, "%s: variable %u is too large (max %u)", fn, k, USER_VAR_MAX - 1);
    if (k + 1 > g->nuser) g->nuser = k + 1;
    return HCQ_OK;
}

static void graph_gone_with_part(void *arg);

/* The part of device d, joining it to the graph if new (its timeline's
 * address and values become variables; the caller records the wait). */
static hcq_status part_of(hcq_graph *g, hcq_device *d, uint32_t *out)
{
    for (uint32_t i = 0; i < g->nparts; i++) {
        if (g->part[i].dev == d) {
            *out = i;
            return HCQ_OK;
        }
    }
    if (g->nparts == G_MAXDEV)
        return base_err(HCQ_ELIMIT, "a graph spans at most %u devices; %s would be the %u-th", G_MAXDEV, d->props.id,
                        G_MAXDEV + 1);
    if (d->be != g->dev->be)
        return base_err(HCQ_EINVAL, "%s and %s are devices of different kinds: one graph cannot order them (order "
                        "them on the host)", d->props.id, g->dev->props.id);
    /* every part's queues wait on every other's signals: the sync signal
     * and the timelines */
    hcq_status s = HCQ_OK;
    if (!g->sync && !(g->sync = mem_signal_new(g->dev, 0))) return hcq_error_status();
    if (d != g->dev && (s = mem_signal_map_for(d, g->sync)))
        return base_err_prefix(s, "%s cannot reach the graph's signal on %s", d->props.id, g->dev->props.id);
    for (uint32_t i = 0; i < g->nparts && !s; i++)
        if ((s = mem_signal_map_for(d, g->part[i].dev->mem->timeline)) ||
            (s = mem_signal_map_for(g->part[i].dev, d->mem->timeline)))
            return base_err_prefix(s, "ordering %s with %s in one graph", d->props.id, g->part[i].dev->props.id);
    /* the graph's queues on d are d's memory: d's close takes the graph */
    if (d != g->dev && !base_dependent_add(d, graph_gone_with_part, g)) return HCQ_ENOMEM;
    g->part[g->nparts].dev = d;
    g->joined |= 1u << g->nparts;
    *out = g->nparts++;
    return HCQ_OK;
}

static hcq_status buf_var(hcq_graph *g, hcq_buffer *b, uint64_t offset, hcq_val *out)
{
    uint32_t pi;
    hcq_status s = part_of(g, b->dev, &pi);
    if (s) return s;
    for (uint32_t i = 0; i < g->nbufs; i++) {
        if (g->bufs[i].orig == b && g->bufs[i].offset == offset) {
            g->bufs[i].users |= 1u << g->cur;
            *out = IVAR(IV_FIRST_BUF + i);
            return HCQ_OK;
        }
    }
    if (g->nbufs == g->bcap) {
        uint32_t cap = g->bcap ? g->bcap * 2 : 16;
        g_buf *nb = base_realloc_array(g->bufs, cap, sizeof *nb);
        if (!nb) return HCQ_ENOMEM;
        g->bufs = nb;
        g->bcap = cap;
    }
    if ((s = q_hold(&g->holds, BASE_H_BUFFER, b))) return s;
    g->bufs[g->nbufs] = (g_buf){b, NULL, offset, 0, 1u << g->cur, false};
    *out = IVAR(IV_FIRST_BUF + g->nbufs);
    g->nbufs++;
    return HCQ_OK;
}

static hcq_status arg_buf_var(void *ctx, hcq_buffer *b, hcq_val *out) { return buf_var(ctx, b, 0, out); }

static hcq_queue *engine_queue(hcq_graph *g, uint32_t pi, int e)
{
    g_part *pt = &g->part[pi];
    if (!pt->q[e]) {
        hcq_queue *q = q_create(pt->dev, (hcq_queue_type)e, true);
        if (!q) return NULL;
        if (q_wait_at(q, IVAR(IV_TL(pi, IV_TL_ADDR)), IVAR(IV_TL(pi, IV_TL_WAIT)))) {
            q_free(q);
            return NULL;
        }
        pt->q[e] = q;
    }
    return pt->q[e];
}

/* Orders the next node, on engine e of part pi, after the previous node,
 * and after the timelines of the devices that joined with it. */
static hcq_status switch_engine(hcq_graph *g, uint32_t pi, int e)
{
    hcq_queue *q = engine_queue(g, pi, e);
    if (!q) return hcq_error_status();
    hcq_status s = HCQ_OK;
    if (g->last_q && g->last_q != q) {
        if (!g->sync && !(g->sync = mem_signal_new(g->dev, 0))) return hcq_error_status();
        g->nsync++;
        s = q_signal_at(g->last_q, HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync));
        if (!s) s = q_wait_at(q, HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync));
    }
    for (uint32_t i = 0; i < g->nparts && !s; i++)
        if (i != pi && (g->joined >> i & 1))
            s = q_wait_at(q, IVAR(IV_TL(i, IV_TL_ADDR)), IVAR(IV_TL(i, IV_TL_WAIT)));
    g->joined = 0;
    if (!s) g->last_q = q;
    return s;
}

hcq_graph *hcq_graph_create(hcq_device *dev)
{
    if (Q_CHECK_DEV(dev, "hcq_graph_create")) return NULL;
    hcq_graph *g = base_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->dev = dev;
    g->part[0].dev = dev;
    g->nparts = 1;
    struct queue_dev *qd = dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    g->next = qd->graphs;
    if (qd->graphs) qd->graphs->prev = g;
    qd->graphs = g;
    pthread_mutex_unlock(&qd->list_lock);
    base_handle_add(g, BASE_H_GRAPH);
    return g;
}

static hcq_status capture_check(hcq_graph *g, const char *fn)
{
    hcq_status s = Q_CHECK_GRAPH(g, fn);
    if (s) return s;
    if (g->sealed)
        return base_err(HCQ_ESTATE, "%s: the graph has been replayed and is closed to new nodes; create another", fn);
    return HCQ_OK;
}

hcq_status hcq_graph_launch(hcq_graph *g, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims)
{
    const char *fn = "hcq_graph_launch";
    hcq_status s = capture_check(g, fn);
    if (!s) s = Q_CHECK_PROGRAM(p, fn);
    if (s) return s;
    for (uint32_t i = 0; i < nargs && args; i++)
        if ((s = note_user_val(g, args[i].val, fn))) return s;
    for (int i = 0; i < 3; i++)
        if ((s = note_user_val(g, dims.grid[i], fn)) || (s = note_user_val(g, dims.block[i], fn))) return s;
    uint32_t pi;
    if ((s = part_of(g, p->dev, &pi))) return base_err_prefix(s, "%s", fn);
    g->cur = pi;
    hcq_queue *q = NULL;
    hcq_val stack[32], *params = nargs <= 32 ? stack : base_calloc(nargs, sizeof *params);
    if (!params) return HCQ_ENOMEM;
    s = q_resolve_args(p, args, nargs, params, arg_buf_var, g, true, fn);
    if (!s) s = q_hold(&g->holds, BASE_H_PROGRAM, p);
    if (!s) s = switch_engine(g, pi, HCQ_QUEUE_COMPUTE);
    if (!s) q = g->part[pi].q[HCQ_QUEUE_COMPUTE];
    q_prof_point *pr = NULL;
    char pargs[200] = "";
    if (q_prof_on()) q_prof_launch_args(pargs, sizeof pargs, p->dev, p, &dims, "graph");
    if (!s) s = q_prof_point_begin(&g->part[pi].prof, q, p->info.name, pargs, &pr);
    if (!s) s = q_exec(q, p, params, &dims, fn);
    if (!s) s = q_prof_point_end(q, pr);
    if (params != stack) free(params);
    if (!s) g->nodes++;
    return s;
}

/* A copy runs on the source's copy engine; between two devices, into a
 * peer mapping of the destination (without one: refused, there being no
 * host thread in a replay to stage through). */
hcq_status hcq_graph_copy(hcq_graph *g, hcq_buffer *dst, uint64_t doff, hcq_buffer *src, uint64_t soff, uint64_t size)
{
    const char *fn = "hcq_graph_copy";
    hcq_status s = capture_check(g, fn);
    if (s) return s;
    hcq_buffer *b[2] = {dst, src};
    uint64_t off[2] = {doff, soff};
    for (int i = 0; i < 2; i++) {
        if ((s = Q_CHECK_BUFFER(b[i], fn, i ? "the source" : "the destination"))) return s;
        if (b[i]->dev->be != g->dev->be)
            return base_err(HCQ_EINVAL, "%s: the %s buffer is on %s, the graph on %s (devices of different kinds)", fn,
                            i ? "source" : "destination", b[i]->dev->props.id, g->dev->props.id);
        if (off[i] > b[i]->size || size > b[i]->size - off[i])
            return base_err(HCQ_EINVAL, "%s: [%llu, +%llu) is outside the %llu-byte %s buffer", fn,
                            (unsigned long long)off[i], (unsigned long long)size, (unsigned long long)b[i]->size,
                            i ? "source" : "destination");
    }
    if (dst->dev != src->dev && (s = q_peer_map(src->dev, dst))) {
        if (s != HCQ_ENOTSUP) return s;
        char why[512];
        snprintf(why, sizeof why, "%s", hcq_error_message());
        return base_err(HCQ_ENOTSUP, "%s: %s -> %s: %s; a graph copies between devices only through a peer mapping "
                        "(copy with hcq_buffer_copy outside the graph, which stages through host memory)", fn,
                        src->dev->props.id, dst->dev->props.id, why);
    }
    uint32_t pi;
    if ((s = part_of(g, src->dev, &pi))) return base_err_prefix(s, "%s", fn);
    g->cur = pi;
    hcq_val vd, vs;
    if ((s = buf_var(g, dst, doff, &vd)) || (s = buf_var(g, src, soff, &vs))) return s;
    if ((s = switch_engine(g, pi, HCQ_QUEUE_COPY))) return s;
    hcq_queue *q = g->part[pi].q[HCQ_QUEUE_COPY];
    q_prof_point *pr = NULL;
    char pargs[200] = "";
    if (q_prof_on()) q_prof_copy_args(pargs, sizeof pargs, src->dev, HCQ_IMM(size), "graph");
    if ((s = q_prof_point_begin(&g->part[pi].prof, q, "graph copy", pargs, &pr))) return s;
    if ((s = q_copy(q, vd, vs, HCQ_IMM(size), fn))) return s;
    if ((s = q_prof_point_end(q, pr))) return s;
    g->nodes++;
    return HCQ_OK;
}

static uint32_t remap(hcq_graph *g, uint32_t v)
{
    return v & IVAR_BIT ? g->nuser + (v & ~IVAR_BIT) : v;
}

static hcq_val remap_val(hcq_graph *g, hcq_val v)
{
    return hcq_val_is_var(v) ? HCQ_VAR(remap(g, hcq_val_var_index(v))) : v;
}

static void remap_queue(hcq_graph *g, hcq_queue *q)
{
    drv_rec *r = &q->rec;
    r->nvars = 0;
    for (uint32_t i = 0; i < r->npatches; i++) {
        r->patches[i].var = remap(g, r->patches[i].var);
        if (r->patches[i].var + 1 > r->nvars) r->nvars = r->patches[i].var + 1;
    }
    for (uint32_t i = 0; i < r->ndimchecks; i++) {
        for (int k = 0; k < 3; k++) {
            r->dimchecks[i].dims.grid[k] = remap_val(g, r->dimchecks[i].dims.grid[k]);
            r->dimchecks[i].dims.block[k] = remap_val(g, r->dimchecks[i].dims.block[k]);
        }
    }
    for (uint32_t i = 0; i < q->nsizechecks; i++) q->sizechecks[i] = remap_val(g, q->sizechecks[i]);
    for (uint32_t i = 0; i < r->naligns; i++) r->alignchecks[i].addr = remap_val(g, r->alignchecks[i].addr);
}

/* Closes the capture: the last node's queue reports the end, and each
 * device's compute engine waits for it and releases its timeline value. */
static hcq_status seal(hcq_graph *g)
{
    hcq_status s;
    for (uint32_t i = 0; i < g->nparts; i++)
        if (!engine_queue(g, i, HCQ_QUEUE_COMPUTE)) return hcq_error_status();
    uint32_t end = 0;
    bool need_end = false;
    for (uint32_t i = 0; i < g->nparts; i++)
        for (int e = 0; e < 2; e++)
            need_end |= g->part[i].q[e] && g->part[i].q[e] != g->last_q;
    if (g->last_q && need_end) {
        if (!g->sync && !(g->sync = mem_signal_new(g->dev, 0))) return hcq_error_status();
        end = ++g->nsync;
        if ((s = q_signal_at(g->last_q, HCQ_IMM(g->sync->va), HCQ_IMM(end)))) return s;
    }
    for (uint32_t i = 0; i < g->nparts; i++) {
        hcq_queue *q = g->part[i].q[HCQ_QUEUE_COMPUTE];
        /* a queue made only now began with its own wait for the timeline */
        if (end && q != g->last_q && (s = q_wait_at(q, HCQ_IMM(g->sync->va), HCQ_IMM(end)))) return s;
        if ((s = q_signal_at(q, IVAR(IV_TL(i, IV_TL_ADDR)), IVAR(IV_TL(i, IV_TL_SIG))))) return s;
    }
    for (uint32_t i = 0; i < g->nparts; i++)
        for (int e = 0; e < 2; e++)
            if (g->part[i].q[e]) remap_queue(g, g->part[i].q[e]);
    g->nvars = g->nuser + IV_FIRST_BUF + g->nbufs;
    g->vars = base_calloc(g->nvars, sizeof *g->vars);
    if (!g->vars) return HCQ_ENOMEM;
    g->sealed = true;
    return HCQ_OK;
}

hcq_status hcq_graph_set_buffer(hcq_graph *g, hcq_buffer *orig, hcq_buffer *repl)
{
    hcq_status s = Q_CHECK_GRAPH(g, "hcq_graph_set_buffer");
    if (s) return s;
    if (!orig) return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the original is NULL");
    /* the original may have been freed by the user (the graph holds it), so
     * it is found among the captured ones before it is looked at */
    bool found = false;
    uint64_t need = 0;
    for (uint32_t i = 0; i < g->nbufs && !found; i++)
        if ((found = g->bufs[i].orig == orig)) need = g->bufs[i].need;
    for (uint32_t i = 0; i < g->nbufs && found; i++)
        if (g->bufs[i].orig == orig && g->bufs[i].owned)
            return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: that buffer is the graph's own scratch (freed by its "
                            "owner: a replacement would stand for memory the graph allocated)");
    if (!found) return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the graph does not use that buffer");
    if (!need) need = orig->size;
    if (repl) {
        if ((s = Q_CHECK_BUFFER(repl, "hcq_graph_set_buffer", "the replacement"))) return s;
        if (repl->dev != orig->dev)
            return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the replacement is on %s, the original on %s",
                            repl->dev->props.id, orig->dev->props.id);
        if (repl->size < need)
            return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the replacement has %llu bytes, the graph needs %llu",
                            (unsigned long long)repl->size, (unsigned long long)need);
        /* nodes on other devices reach it through a peer mapping, as the original */
        for (uint32_t i = 0; i < g->nbufs; i++) {
            if (g->bufs[i].orig != orig) continue;
            for (uint32_t k = 0; k < g->nparts; k++)
                if ((g->bufs[i].users >> k & 1) && g->part[k].dev != repl->dev &&
                    (s = q_peer_map(g->part[k].dev, repl)))
                    return base_err_prefix(s, "hcq_graph_set_buffer: mapping the replacement for %s",
                                           g->part[k].dev->props.id);
        }
    }
    /* the graph holds its replacements too, so a replay never patches in
     * memory that has gone (or a new buffer at a freed one's address) */
    for (uint32_t i = 0; i < g->nbufs; i++) {
        if (g->bufs[i].orig != orig) continue;
        if (repl) mem_buffer_hold(repl);
        if (g->bufs[i].repl) mem_buffer_release(g->bufs[i].repl);
        g->bufs[i].repl = repl;
    }
    return HCQ_OK;
}

hcq_status hcq_graph_buffer_need(hcq_graph *g, hcq_buffer *orig, uint64_t bytes)
{
    hcq_status s = Q_CHECK_GRAPH(g, "hcq_graph_buffer_need");
    if (s) return s;
    bool found = false;
    for (uint32_t i = 0; i < g->nbufs; i++) {
        if (g->bufs[i].orig != orig) continue;
        if (bytes == 0 || bytes > orig->size || bytes <= g->bufs[i].offset)
            return base_err(HCQ_EINVAL, "hcq_graph_buffer_need: %llu bytes of a %llu-byte buffer the graph uses from offset %llu",
                            (unsigned long long)bytes, (unsigned long long)orig->size, (unsigned long long)g->bufs[i].offset);
        g->bufs[i].need = bytes;
        found = true;
    }
    return found ? HCQ_OK : base_err(HCQ_EINVAL, "hcq_graph_buffer_need: the graph does not use that buffer");
}

static int part_cmp(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)(*(g_part *const *)x)->dev, b = (uintptr_t)(*(g_part *const *)y)->dev;
    return a < b ? -1 : a > b;
}

hcq_status hcq_graph_replay(hcq_graph *g, const uint64_t *vars, uint32_t nvars)
{
    hcq_status s = Q_CHECK_GRAPH(g, "hcq_graph_replay");
    if (s) return s;
    if (!g->sealed && (s = seal(g))) return base_err_prefix(s, "hcq_graph_replay: closing the capture");
    if (nvars < g->nuser)
        return base_err(HCQ_EINVAL, "hcq_graph_replay: the graph uses %u variables, %u given", g->nuser, nvars);
    if (g->nuser && !vars) return base_err(HCQ_EINVAL, "hcq_graph_replay: vars is NULL");
    if (g->nuser) memcpy(g->vars, vars, g->nuser * sizeof *vars);
    uint64_t *iv = g->vars + g->nuser;
    for (uint32_t i = 0; i < g->nbufs; i++) {
        hcq_buffer *b = g->bufs[i].repl ? g->bufs[i].repl : g->bufs[i].orig;
        if (!g->bufs[i].owned && !base_handle_live(b, BASE_H_BUFFER))
            return base_err(HCQ_ESTATE, "hcq_graph_replay: a captured buffer was freed; give it a replacement with "
                            "hcq_graph_set_buffer");
        iv[IV_FIRST_BUF + i] = b->va + g->bufs[i].offset;
    }
    for (uint32_t i = 0; i < g->nparts; i++)
        if ((s = drv_fault_status(g->part[i].dev))) return s;

    /* the previous replay, on every device, before anything is patched */
    for (uint32_t i = 0; i < g->nparts; i++) {
        g_part *pt = &g->part[i];
        if (pt->last_tl && (s = mem_tl_wait(pt->dev, pt->last_tl, 0)))
            return base_err_prefix(s, "hcq_graph_replay: waiting for the previous replay on %s", pt->dev->props.id);
        if (pt->last_tl) q_prof_points_harvest(pt->dev, &pt->prof);
    }
    uint64_t h0 = hcq_now_ns();
    /* every part's device locked at once, in one global order (the
     * devices' addresses), so two replays sharing devices cannot deadlock;
     * eager calls take one device lock at a time */
    g_part *order[G_MAXDEV];
    for (uint32_t i = 0; i < g->nparts; i++) order[i] = &g->part[i];
    qsort(order, g->nparts, sizeof *order, part_cmp);
    for (uint32_t i = 0; i < g->nparts; i++) pthread_mutex_lock(&order[i]->dev->lock);
    if (g->sync) mem_signal_set(g->sync, 0);
    for (uint32_t i = 0; i < g->nparts; i++) {
        uint64_t n = mem_tl_next(g->part[i].dev);
        iv[IV_TL(i, IV_TL_ADDR)] = mem_tl_va(g->part[i].dev);
        iv[IV_TL(i, IV_TL_WAIT)] = n - 1;
        iv[IV_TL(i, IV_TL_SIG)] = n;
    }
    /* what the values can break (a block dimension of 0 or 5000, a copy
     * too big) is refused before any engine gets anything: the devices
     * stay usable, as after a refused hcq_queue_submit */
    for (uint32_t i = 0; i < g->nparts && !s; i++)
        for (int e = 0; e < 2 && !s; e++)
            if (g->part[i].q[e]) s = q_submit_checks(g->part[i].q[e], g->vars, g->nvars);
    if (s) {
        for (uint32_t i = g->nparts; i-- > 0;) pthread_mutex_unlock(&order[i]->dev->lock);
        return base_err_prefix(s, "hcq_graph_replay");
    }
    /* after the user queues submitted before it, as every eager call */
    for (uint32_t i = 0; i < g->nparts && !s; i++) {
        g_part *pt = &g->part[i];
        s = q_fence_waits(pt->dev, (const bool[2]){pt->q[HCQ_QUEUE_COMPUTE] != NULL, pt->q[HCQ_QUEUE_COPY] != NULL});
        for (int e = HCQ_QUEUE_COPY; e >= 0 && !s; e--)
            if (pt->q[e]) s = q_submit(pt->q[e], g->vars, g->nvars, false);
    }
    if (s) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        /* part of the replay may be on the engines, waiting for the rest:
         * no timeline of the graph is trustworthy any more */
        for (uint32_t i = 0; i < g->nparts; i++) drv_set_fault(g->part[i].dev, s, "a graph replay failed: %s", msg);
        for (uint32_t i = g->nparts; i-- > 0;) pthread_mutex_unlock(&order[i]->dev->lock);
        return base_err(s, "hcq_graph_replay: %s", msg);
    }
    for (uint32_t i = 0; i < g->nparts; i++) {
        g_part *pt = &g->part[i];
        mem_tl_advance(pt->dev);
        pt->last_tl = iv[IV_TL(i, IV_TL_SIG)];
        q_status_update(pt->dev, Q_STATUS_SYNC, HCQ_QUEUE_COMPUTE, pt->last_tl);
    }
    for (uint32_t i = g->nparts; i-- > 0;) pthread_mutex_unlock(&order[i]->dev->lock);
    for (uint32_t i = 0; i < g->nparts; i++) {
        if (!g->part[i].prof.n) continue;
        char name[64];
        snprintf(name, sizeof name, "graph replay (%u nodes)", g->nodes);
        q_prof_points_submitted(g->part[i].dev, &g->part[i].prof, name, h0, hcq_now_ns());
    }
    return HCQ_OK;
}

uint32_t hcq_graph_node_count(const hcq_graph *g)
{
    return Q_CHECK_GRAPH(g, "hcq_graph_node_count") ? 0 : g->nodes;
}

/* Off its device's list, and off the other parts' devices' dependents. */
void q_graph_own(hcq_graph *g, hcq_buffer *b)
{
    for (uint32_t i = 0; i < g->nbufs; i++)
        if (g->bufs[i].orig == b) g->bufs[i].owned = true;
}

static void graph_unlist(hcq_graph *g)
{
    struct queue_dev *qd = g->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    if (g->prev) g->prev->next = g->next;
    else qd->graphs = g->next;
    if (g->next) g->next->prev = g->prev;
    g->next = g->prev = NULL;
    pthread_mutex_unlock(&qd->list_lock);
    for (uint32_t i = 1; i < g->nparts; i++) base_dependent_remove(g->part[i].dev, g);
}

static void graph_delete(hcq_graph *g)
{
    graph_unlist(g);
    for (uint32_t i = 0; i < g->nparts; i++) {
        for (int e = 0; e < 2; e++)
            if (g->part[i].q[e]) q_free(g->part[i].q[e]);
        q_prof_points_free(&g->part[i].prof);
    }
    if (g->sync) mem_signal_delete(g->sync);
    for (uint32_t i = 0; i < g->nbufs; i++)
        if (g->bufs[i].repl) mem_buffer_release(g->bufs[i].repl);
    q_holds_release(&g->holds);
    free(g->bufs);
    free(g->vars);
    free(g);
}

hcq_status hcq_graph_destroy(hcq_graph *g)
{
    if (!g) return HCQ_OK;
    if (!base_handle_live(g, BASE_H_GRAPH))
        return base_err(HCQ_ESTATE, "hcq_graph_destroy: %p is not a live graph (destroyed twice, or its device was "
                        "closed?)", (void *)g);
    hcq_status s = HCQ_OK;
    for (uint32_t i = 0; i < g->nparts && !s; i++)
        if (g->part[i].last_tl) s = mem_tl_wait(g->part[i].dev, g->part[i].last_tl, 0);
    if (!base_handle_remove(g, BASE_H_GRAPH))
        return base_err(HCQ_ESTATE, "hcq_graph_destroy: %p was destroyed meanwhile (by another thread?)", (void *)g);
    if (s) {
        /* its last replay may still run (the device faulted or hung): what
         * the graph holds stays with the device until close */
        BASE_LOG(1, "hcq_graph_destroy: %s; the graph's memory stays until the device is closed", hcq_error_message());
        return HCQ_OK;
    }
    for (uint32_t i = 0; i < g->nparts; i++)
        if (g->part[i].last_tl) q_prof_points_harvest(g->part[i].dev, &g->part[i].prof);
    graph_delete(g);
    return HCQ_OK;
}

/* A graph going with a closing device (its own, or another part's): the
 * closing device's engines are stopped (its waits return at once), but
 * the other parts' engines may still run the last replay, so it is waited
 * for there first. Where that wait fails (those parts waited on a signal
 * the stopped device no longer writes, and timed out), the graph's memory
 * stays with those devices until they close, as after a failed
 * hcq_graph_destroy. */
static void graph_close_delete(hcq_graph *g)
{
    bool busy = false;
    for (uint32_t i = 0; i < g->nparts; i++) {
        g_part *pt = &g->part[i];
        if (!pt->last_tl) continue;
        if (drv_fault_status(pt->dev)) continue; /* closing (or lost): nothing of it runs any more */
        if (mem_tl_wait(pt->dev, pt->last_tl, 0)) {
            busy = true;
            BASE_LOG(1, "a graph spanning %s: %s; its memory stays until that device closes", pt->dev->props.id,
                     hcq_error_message());
        }
    }
    for (uint32_t i = 0; i < g->nparts && !busy; i++) {
        g_part *pt = &g->part[i];
        uint64_t done = atomic_load_explicit((_Atomic uint64_t *)pt->dev->mem->timeline->cpu, memory_order_acquire);
        if (pt->last_tl && done >= pt->last_tl) q_prof_points_harvest(pt->dev, &pt->prof);
    }
    if (busy) graph_unlist(g);
    else graph_delete(g);
}

static void graph_gone_with_part(void *arg)
{
    hcq_graph *g = arg;
    if (!base_handle_remove(g, BASE_H_GRAPH)) return;
    BASE_LOG(1, "a graph of %s spans a device being closed; freed it", g->dev->props.id);
    graph_close_delete(g);
}

void q_graph_destroy_all(hcq_device *dev)
{
    unsigned n = 0;
    while (dev->qd && dev->qd->graphs) {
        hcq_graph *g = dev->qd->graphs;
        if (base_handle_remove(g, BASE_H_GRAPH)) n++;
        graph_close_delete(g);
    }
    if (n) BASE_LOG(1, "%s closed with %u graphs still alive; freed them", dev->props.id, n);
}
