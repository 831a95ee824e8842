#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

/* Graphs. Capture records every node straight into internal queues, one per
 * engine, with variables where a replay may change something: the user's
 * variables, the address of each (buffer, offset) a node names, and the
 * timeline's address and values. A replay only patches those fields and
 * submits the recorded streams: nothing is encoded again.
 *
 * Order: nodes run in capture order, each finishing before the next starts.
 * Within an engine that is the queue's own order; where consecutive nodes
 * use different engines, the first engine signals a graph-private signal
 * with the node's sync number and the second waits for it. The private
 * signal is reset by the host before a replay, when no replay is in flight
 * (replays wait for the previous one: patching kernarg memory under a
 * running replay would change what it reads).
 *
 * Shape of a replay (n = the timeline value it takes):
 *   compute: wait(tl, n-1) ... nodes ... [wait(sync, last copy)] signal(tl, n)
 *   copy:    wait(tl, n-1) ... nodes ... signal(sync, last)
 */

/* Internal variables carry this bit while capturing; sealing renumbers them
 * after the user's. */
#define IVAR_BIT 0x80000000u
#define USER_VAR_MAX 0x10000000u
#define IVAR(i) HCQ_VAR(IVAR_BIT | (uint32_t)(i))

enum { IV_TL_ADDR, IV_TL_WAIT, IV_TL_SIG, IV_FIRST_BUF };

typedef struct g_buf {
    hcq_buffer *orig, *repl;
    uint64_t offset;
    uint64_t need; /* bytes a replacement needs (0: the original's size; hcq_graph_buffer_need) */
} g_buf;

struct hcq_graph {
    hcq_device *dev;
    hcq_queue *q[2];
    g_buf *bufs; /* internal var IV_FIRST_BUF + i */
    uint32_t nbufs, bcap;
    uint32_t nuser; /* user variables used: max index + 1 */
    int last_engine;
    bool engine_used[2];
    uint32_t nsync;
    hcq_signal *sync;
    uint32_t nodes;
    bool sealed;
    uint64_t last_tl; /* the timeline value of the last replay, 0 if none */
    uint64_t *vars;
    uint32_t nvars;
    q_prof_points prof; /* HCQ_PROFILE: around each node */
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

static hcq_status buf_var(hcq_graph *g, hcq_buffer *b, uint64_t offset, hcq_val *out)
{
    for (uint32_t i = 0; i < g->nbufs; i++) {
        if (g->bufs[i].orig == b && g->bufs[i].offset == offset) {
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
    hcq_status s = q_hold(&g->holds, BASE_H_BUFFER, b);
    if (s) return s;
    g->bufs[g->nbufs] = (g_buf){b, NULL, offset, 0};
    *out = IVAR(IV_FIRST_BUF + g->nbufs);
    g->nbufs++;
    return HCQ_OK;
}

static hcq_status arg_buf_var(void *ctx, hcq_buffer *b, hcq_val *out) { return buf_var(ctx, b, 0, out); }

static hcq_queue *engine_queue(hcq_graph *g, int e)
{
    if (!g->q[e]) {
        hcq_queue *q = q_create(g->dev, (hcq_queue_type)e, true);
        if (!q) return NULL;
        if (q_wait_at(q, IVAR(IV_TL_ADDR), IVAR(IV_TL_WAIT))) {
            q_free(q);
            return NULL;
        }
        g->q[e] = q;
    }
    return g->q[e];
}

/* Orders the next node, on engine e, after the previous node. */
static hcq_status switch_engine(hcq_graph *g, int e)
{
    if (!engine_queue(g, e)) return hcq_error_status();
    if (g->last_engine >= 0 && g->last_engine != e) {
        if (!g->sync && !(g->sync = mem_signal_new(g->dev, 0))) return hcq_error_status();
        g->nsync++;
        hcq_status s = q_signal_at(g->q[g->last_engine], HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync));
        if (!s) s = q_wait_at(g->q[e], HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync));
        if (s) return s;
    }
    g->last_engine = e;
    g->engine_used[e] = true;
    return HCQ_OK;
}

hcq_graph *hcq_graph_create(hcq_device *dev)
{
    if (Q_CHECK_DEV(dev, "hcq_graph_create")) return NULL;
    hcq_graph *g = base_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->dev = dev;
    g->last_engine = -1;
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
    if (p->dev != g->dev)
        return base_err(HCQ_EINVAL, "%s: the program is not loaded on the graph's device %s", fn, g->dev->props.id);
    for (uint32_t i = 0; i < nargs && args; i++)
        if ((s = note_user_val(g, args[i].val, fn))) return s;
    for (int i = 0; i < 3; i++)
        if ((s = note_user_val(g, dims.grid[i], fn)) || (s = note_user_val(g, dims.block[i], fn))) return s;
    hcq_val stack[32], *params = nargs <= 32 ? stack : base_calloc(nargs, sizeof *params);
    if (!params) return HCQ_ENOMEM;
    s = q_resolve_args(p, args, nargs, params, arg_buf_var, g, true, fn);
    if (!s) s = q_hold(&g->holds, BASE_H_PROGRAM, p);
    if (!s) s = switch_engine(g, HCQ_QUEUE_COMPUTE);
    q_prof_point *pr = NULL;
    char pargs[200] = "";
    if (q_prof_on()) q_prof_launch_args(pargs, sizeof pargs, g->dev, p, &dims, "graph");
    if (!s) s = q_prof_point_begin(&g->prof, g->q[HCQ_QUEUE_COMPUTE], p->info.name, pargs, &pr);
    if (!s) s = q_exec(g->q[HCQ_QUEUE_COMPUTE], p, params, &dims, fn);
    if (!s) s = q_prof_point_end(g->q[HCQ_QUEUE_COMPUTE], pr);
    if (params != stack) free(params);
    if (!s) g->nodes++;
    return s;
}

hcq_status hcq_graph_copy(hcq_graph *g, hcq_buffer *dst, uint64_t doff, hcq_buffer *src, uint64_t soff, uint64_t size)
{
    const char *fn = "hcq_graph_copy";
    hcq_status s = capture_check(g, fn);
    if (s) return s;
    hcq_buffer *b[2] = {dst, src};
    uint64_t off[2] = {doff, soff};
    for (int i = 0; i < 2; i++) {
        if ((s = Q_CHECK_BUFFER(b[i], fn, i ? "the source" : "the destination"))) return s;
        if (b[i]->dev != g->dev)
            return base_err(HCQ_EINVAL, "%s: the %s buffer is on %s, the graph on %s", fn, i ? "source" : "destination",
                            b[i]->dev->props.id, g->dev->props.id);
        if (off[i] > b[i]->size || size > b[i]->size - off[i])
            return base_err(HCQ_EINVAL, "%s: [%llu, +%llu) is outside the %llu-byte %s buffer", fn,
                            (unsigned long long)off[i], (unsigned long long)size, (unsigned long long)b[i]->size,
                            i ? "source" : "destination");
    }
    hcq_val vd, vs;
    if ((s = buf_var(g, dst, doff, &vd)) || (s = buf_var(g, src, soff, &vs))) return s;
    if ((s = switch_engine(g, HCQ_QUEUE_COPY))) return s;
    q_prof_point *pr = NULL;
    char pargs[200] = "";
    if (q_prof_on()) q_prof_copy_args(pargs, sizeof pargs, g->dev, HCQ_IMM(size), "graph");
    if ((s = q_prof_point_begin(&g->prof, g->q[HCQ_QUEUE_COPY], "graph copy", pargs, &pr))) return s;
    if ((s = q_copy(g->q[HCQ_QUEUE_COPY], vd, vs, HCQ_IMM(size), fn))) return s;
    if ((s = q_prof_point_end(g->q[HCQ_QUEUE_COPY], pr))) return s;
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

/* Closes the capture: the copy engine reports its end, the compute engine
 * waits for it and releases the timeline value. */
static hcq_status seal(hcq_graph *g)
{
    hcq_status s;
    if (!engine_queue(g, HCQ_QUEUE_COMPUTE)) return hcq_error_status();
    if (g->engine_used[HCQ_QUEUE_COPY]) {
        if (!g->sync && !(g->sync = mem_signal_new(g->dev, 0))) return hcq_error_status();
        g->nsync++;
        if ((s = q_signal_at(g->q[HCQ_QUEUE_COPY], HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync))) ||
            (s = q_wait_at(g->q[HCQ_QUEUE_COMPUTE], HCQ_IMM(g->sync->va), HCQ_IMM(g->nsync))))
            return s;
    }
    if ((s = q_signal_at(g->q[HCQ_QUEUE_COMPUTE], IVAR(IV_TL_ADDR), IVAR(IV_TL_SIG)))) return s;
    for (int e = 0; e < 2; e++)
        if (g->q[e]) remap_queue(g, g->q[e]);
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
    if (!found) return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the graph does not use that buffer");
    if (!need) need = orig->size;
    if (repl) {
        if ((s = Q_CHECK_BUFFER(repl, "hcq_graph_set_buffer", "the replacement"))) return s;
        if (repl->dev != g->dev)
            return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the replacement is on %s, the graph on %s",
                            repl->dev->props.id, g->dev->props.id);
        if (repl->size < need)
            return base_err(HCQ_EINVAL, "hcq_graph_set_buffer: the replacement has %llu bytes, the graph needs %llu",
                            (unsigned long long)repl->size, (unsigned long long)need);
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

hcq_status hcq_graph_replay(hcq_graph *g, const uint64_t *vars, uint32_t nvars)
{
    hcq_status s = Q_CHECK_GRAPH(g, "hcq_graph_replay");
    if (s) return s;
    hcq_device *dev = g->dev;
    if (!g->sealed && (s = seal(g))) return base_err_prefix(s, "hcq_graph_replay: closing the capture");
    if (nvars < g->nuser)
        return base_err(HCQ_EINVAL, "hcq_graph_replay: the graph uses %u variables, %u given", g->nuser, nvars);
    if (g->nuser && !vars) return base_err(HCQ_EINVAL, "hcq_graph_replay: vars is NULL");
    if (g->nuser) memcpy(g->vars, vars, g->nuser * sizeof *vars);
    uint64_t *iv = g->vars + g->nuser;
    for (uint32_t i = 0; i < g->nbufs; i++) {
        hcq_buffer *b = g->bufs[i].repl ? g->bufs[i].repl : g->bufs[i].orig;
        if (!base_handle_live(b, BASE_H_BUFFER))
            return base_err(HCQ_ESTATE, "hcq_graph_replay: a captured buffer was freed; give it a replacement with "
                            "hcq_graph_set_buffer");
        iv[IV_FIRST_BUF + i] = b->va + g->bufs[i].offset;
    }
    if ((s = drv_fault_status(dev))) return s;

    uint64_t h0 = hcq_now_ns();
    pthread_mutex_lock(&dev->lock);
    if (g->last_tl && (s = mem_tl_wait(dev, g->last_tl, 0))) {
        pthread_mutex_unlock(&dev->lock);
        return base_err_prefix(s, "hcq_graph_replay: waiting for the previous replay");
    }
    if (g->last_tl) q_prof_points_harvest(dev, &g->prof);
    if (g->sync) mem_signal_set(g->sync, 0);
    uint64_t n = mem_tl_next(dev);
    iv[IV_TL_ADDR] = mem_tl_va(dev);
    iv[IV_TL_WAIT] = n - 1;
    iv[IV_TL_SIG] = n;
    /* what the values can break (a block dimension of 0 or 5000, a copy
     * too big) is refused before either engine gets anything: the device
     * stays usable, as after a refused hcq_queue_submit */
    for (int e = 0; e < 2; e++) {
        if (g->q[e] && (s = q_submit_checks(g->q[e], g->vars, g->nvars))) {
            pthread_mutex_unlock(&dev->lock);
            return base_err_prefix(s, "hcq_graph_replay");
        }
    }
    /* after the user queues submitted before it, as every eager call */
    s = q_fence_waits(dev, (const bool[2]){g->q[HCQ_QUEUE_COMPUTE] != NULL, g->q[HCQ_QUEUE_COPY] != NULL});
    for (int e = HCQ_QUEUE_COPY; e >= 0 && !s; e--)
        if (g->q[e]) s = q_submit(g->q[e], g->vars, g->nvars, false);
    if (s) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        /* part of the replay may be on the engines: the timeline is no longer
         * trustworthy */
        drv_set_fault(dev, s, "a graph replay failed: %s", msg);
        pthread_mutex_unlock(&dev->lock);
        return base_err(s, "hcq_graph_replay: %s", msg);
    }
    mem_tl_advance(dev);
    g->last_tl = n;
    q_status_update(dev, Q_STATUS_SYNC, HCQ_QUEUE_COMPUTE, n);
    pthread_mutex_unlock(&dev->lock);
    if (g->prof.n) {
        char name[64];
        snprintf(name, sizeof name, "graph replay (%u nodes)", g->nodes);
        q_prof_points_submitted(dev, &g->prof, name, h0, hcq_now_ns());
    }
    return HCQ_OK;
}

uint32_t hcq_graph_node_count(const hcq_graph *g)
{
    return Q_CHECK_GRAPH(g, "hcq_graph_node_count") ? 0 : g->nodes;
}

static void graph_delete(hcq_graph *g)
{
    struct queue_dev *qd = g->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    if (g->prev) g->prev->next = g->next;
    else qd->graphs = g->next;
    if (g->next) g->next->prev = g->prev;
    pthread_mutex_unlock(&qd->list_lock);
    for (int e = 0; e < 2; e++)
        if (g->q[e]) q_free(g->q[e]);
    if (g->sync) mem_signal_delete(g->sync);
    for (uint32_t i = 0; i < g->nbufs; i++)
        if (g->bufs[i].repl) mem_buffer_release(g->bufs[i].repl);
    q_holds_release(&g->holds);
    q_prof_points_free(&g->prof);
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
    hcq_status s = g->last_tl ? mem_tl_wait(g->dev, g->last_tl, 0) : HCQ_OK;
    if (!base_handle_remove(g, BASE_H_GRAPH))
        return base_err(HCQ_ESTATE, "hcq_graph_destroy: %p was destroyed meanwhile (by another thread?)", (void *)g);
    if (s) {
        /* its last replay may still run (the device faulted or hung): what
         * the graph holds stays with the device until close */
        BASE_LOG(1, "hcq_graph_destroy: %s; the graph's memory stays until the device is closed", hcq_error_message());
        return HCQ_OK;
    }
    if (g->last_tl) q_prof_points_harvest(g->dev, &g->prof);
    graph_delete(g);
    return HCQ_OK;
}

void q_graph_destroy_all(hcq_device *dev)
{
    unsigned n = 0;
    while (dev->qd && dev->qd->graphs) {
        hcq_graph *g = dev->qd->graphs;
        if (base_handle_remove(g, BASE_H_GRAPH)) n++;
        uint64_t done = atomic_load_explicit((_Atomic uint64_t *)dev->mem->timeline->cpu, memory_order_acquire);
        if (g->last_tl && done >= g->last_tl) q_prof_points_harvest(dev, &g->prof);
        graph_delete(g);
    }
    if (n) BASE_LOG(1, "%s closed with %u graphs still alive; freed them", dev->props.id, n);
}
