#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

/* Eager calls: each is one submission wait(timeline, n-1) -> work ->
 * signal(timeline, n), recorded into the device's scratch recording for the
 * engine, with kernargs from the timeline-tracked ring. dev->lock is held
 * from taking n to submitting, so timeline values reach the engines in
 * order. */

static hcq_status eager_kernarg(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    hcq_device *dev = r->dev;
    return mem_kernarg_alloc(dev, size, align, dev->qd->eager_tag, cpu, va);
}

hcq_status q_dev_init(hcq_device *dev)
{
    struct queue_dev *qd = base_calloc(1, sizeof *qd);
    if (!qd) return HCQ_ENOMEM;
    pthread_mutex_init(&qd->list_lock, NULL);
    for (int t = 0; t < 2; t++) {
        drv_rec_init(&qd->eager[t], dev, (hcq_queue_type)t);
        qd->eager[t].aux_alloc = eager_kernarg;
        drv_rec_init(&qd->fence_rec[t], dev, (hcq_queue_type)t);
        drv_rec_init(&qd->tl_rec[t], dev, (hcq_queue_type)t);
    }
    dev->qd = qd;
    return HCQ_OK;
}

void q_dev_fini(hcq_device *dev)
{
    struct queue_dev *qd = dev->qd;
    if (!qd) return;
    unsigned nq = 0;
    while (qd->queues) {
        hcq_queue *q = qd->queues;
        if (base_handle_remove(q, BASE_H_QUEUE)) nq++;
        q_free(q);
    }
    if (nq) BASE_LOG(1, "%s closed with %u queues still alive; freed them", dev->props.id, nq);
    q_programs_free_all(dev);
    for (int t = 0; t < 2; t++) {
        drv_rec_fini(&qd->eager[t]);
        drv_rec_fini(&qd->fence_rec[t]);
        drv_rec_fini(&qd->tl_rec[t]);
        if (qd->fence[t]) mem_signal_delete(qd->fence[t]);
    }
    for (int i = 0; i < 2; i++)
        if (qd->dbg_t[i]) mem_signal_delete(qd->dbg_t[i]);
    pthread_mutex_destroy(&qd->list_lock);
    free(qd);
    dev->qd = NULL;
}

/* Eager calls and recorded queues are ordered in the order they are
 * submitted, as CUDA's legacy default stream is with the other (blocking)
 * streams of its device: a copyout after hcq_queue_submit reads what the
 * queue wrote, a launch after it sees its results, and a queue submitted
 * after a copyin reads what it wrote, without a wait the user must think
 * of (issue 26: a copyout after a submit read stale data in most runs).
 *   - Each engine's fence is written behind every user queue submitted to
 *     it; values grow in ring order because the queue's commands and its
 *     fence go to the engine under dev->lock. An eager call waits for the
 *     fences that moved since an eager call last waited for them; the
 *     timeline then orders every later eager call after that one.
 *   - A user queue is preceded on its engine by a wait for the timeline's
 *     last submitted value, when it moved since that engine last waited.
 * Queues among themselves stay unordered (each engine runs its ring in
 * order; across engines, signals say what the user needs). Graphs' internal
 * queues are replayed as eager work and need neither. A queue that waits
 * for something only a later eager call provides would now wait forever,
 * as behind CUDA's legacy stream: wait for a signal the host sets. */
static hcq_status fence_after(hcq_device *dev, hcq_queue_type type)
{
    struct queue_dev *qd = dev->qd;
    if (!qd->fence[type]) {
        if (!(qd->fence[type] = mem_signal_new(dev, 0))) return hcq_error_status();
        hcq_status s = dev->be->rec_signal(&qd->fence_rec[type], HCQ_IMM(qd->fence[type]->va), HCQ_VAR(0));
        if (s) return s;
    }
    uint64_t v = qd->fence_next[type] + 1;
    drv_rec_apply(&qd->fence_rec[type], &v, NULL);
    hcq_status s = drv_submit(dev, &qd->fence_rec[type]);
    if (!s) qd->fence_next[type] = v;
    return s;
}

hcq_status q_submit_ordered(hcq_device *dev, drv_rec *rec)
{
    struct queue_dev *qd = dev->qd;
    hcq_queue_type type = rec->type;
    uint64_t last = mem_tl_next(dev) - 1;
    hcq_status s = HCQ_OK;
    if (last > qd->tl_waited[type]) {
        drv_rec *w = &qd->tl_rec[type];
        if (!w->ndw) s = dev->be->rec_wait(w, HCQ_IMM(mem_tl_va(dev)), HCQ_VAR(0));
        drv_rec_apply(w, &last, NULL);
        if (!s) s = drv_submit(dev, w);
        if (s) return s;
        qd->tl_waited[type] = last;
    }
    if ((s = drv_submit(dev, rec))) return s;
    return fence_after(dev, type);
}

hcq_status q_fence_waits(hcq_device *dev, const bool engines[2])
{
    struct queue_dev *qd = dev->qd;
    if (qd->fence_next[0] == qd->fence_waited[0] && qd->fence_next[1] == qd->fence_waited[1]) return HCQ_OK;
    for (int e = 0; e < 2; e++) {
        if (!engines[e]) continue;
        drv_rec *r = &qd->eager[e];
        drv_rec_reset(r);
        for (int t = 0; t < 2; t++)
            if (qd->fence_next[t] != qd->fence_waited[t])
                dev->be->rec_wait(r, HCQ_IMM(qd->fence[t]->va), HCQ_IMM(qd->fence_next[t]));
        hcq_status s = r->err ? r->err : drv_submit(dev, r);
        if (s) return s;
    }
    for (int t = 0; t < 2; t++) qd->fence_waited[t] = qd->fence_next[t];
    return HCQ_OK;
}

drv_rec *q_eager_begin(hcq_device *dev, hcq_queue_type type)
{
    struct queue_dev *qd = dev->qd;
    drv_rec *r = &qd->eager[type];
    drv_rec_reset(r);
    uint64_t n = mem_tl_next(dev);
    qd->eager_tag = n;
    dev->be->rec_wait(r, HCQ_IMM(mem_tl_va(dev)), HCQ_IMM(n - 1));
    for (int t = 0; t < 2; t++) {
        /* marked waited once the call is submitted (q_eager_end): a call
         * that fails before leaves the wait to the next one */
        qd->fence_pending[t] = qd->fence_next[t];
        if (qd->fence_next[t] != qd->fence_waited[t])
            dev->be->rec_wait(r, HCQ_IMM(qd->fence[t]->va), HCQ_IMM(qd->fence_next[t]));
    }
    return r;
}

hcq_status q_eager_end(hcq_device *dev, drv_rec *r)
{
    uint64_t n = mem_tl_next(dev);
    hcq_status s = dev->be->rec_signal(r, HCQ_IMM(mem_tl_va(dev)), HCQ_IMM(n));
    if (!s) s = r->err;
    if (s) return s;
    s = drv_submit(dev, r);
    if (s) {
        /* the engine may hold part of it; the timeline can no longer be
         * trusted, so the device stops here with the reason */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        drv_set_fault(dev, s, "a submission on the timeline failed: %s", msg);
        return base_err(s, "%s", msg);
    }
    mem_tl_advance(dev);
    for (int t = 0; t < 2; t++) dev->qd->fence_waited[t] = dev->qd->fence_pending[t];
    /* eager work on the compute engine is a launch, on the copy engine a copy */
    q_status_update(dev, r->type == HCQ_QUEUE_COPY ? Q_STATUS_COPY : Q_STATUS_LAUNCH, r->type, n);
    return HCQ_OK;
}

static hcq_status debug_signals(hcq_device *dev)
{
    struct queue_dev *qd = dev->qd;
    for (int i = 0; i < 2; i++)
        if (!qd->dbg_t[i] && !(qd->dbg_t[i] = mem_signal_new(dev, 0))) return hcq_error_status();
    return HCQ_OK;
}

static void debug_report(hcq_device *dev, const hcq_program *p, const hcq_dims *d, uint64_t n)
{
    if (mem_tl_wait(dev, n, 0)) {
        base_log(2, "%s: launch `%s`: %s", dev->props.id, p->info.name, hcq_error_message());
        return;
    }
    uint64_t t0 = mem_signal_timestamp_ns(dev->qd->dbg_t[0]), t1 = mem_signal_timestamp_ns(dev->qd->dbg_t[1]);
    base_log(2, "%s: launch `%s` grid %llux%llux%llu block %llux%llux%llu: %.1f us", dev->props.id, p->info.name,
             (unsigned long long)d->grid[0].imm, (unsigned long long)d->grid[1].imm, (unsigned long long)d->grid[2].imm,
             (unsigned long long)d->block[0].imm, (unsigned long long)d->block[1].imm,
             (unsigned long long)d->block[2].imm, (double)(t1 - t0) / 1000.0);
}

/* An eager launch given other devices' buffers (peer mappings) is
 * ordered on the GPUs as a peer copy is: it waits, on its GPU, for the
 * work each owner had submitted, and each owner's copy engine then waits
 * for the launch, so the owner's later work follows it. Where a timeline
 * cannot be mapped across, the host waits instead. */
typedef struct peer_order {
    uint32_t n;
    struct {
        hcq_device *dev;
        uint64_t last;
        bool on_gpu;
    } o[8];
} peer_order;

static hcq_status peers_before(peer_order *po, hcq_device *dev, const hcq_arg *args, uint32_t nargs)
{
    for (uint32_t i = 0; i < nargs; i++) {
        if (args[i].kind != HCQ_ARG_BUFFER || args[i].buffer->dev == dev) continue;
        hcq_device *own = args[i].buffer->dev;
        bool seen = false;
        for (uint32_t k = 0; k < po->n; k++) seen |= po->o[k].dev == own;
        if (seen) continue;
        if (po->n == BASE_ARRAY_LEN(po->o))
            return base_err(HCQ_ELIMIT, "hcq_launch: buffers of more than %u other devices in one launch",
                            (unsigned)BASE_ARRAY_LEN(po->o));
        bool on_gpu = !mem_signal_map_for(dev, own->mem->timeline) && !mem_signal_map_for(own, dev->mem->timeline);
        pthread_mutex_lock(&own->lock);
        uint64_t last = mem_tl_next(own) - 1;
        pthread_mutex_unlock(&own->lock);
        if (!on_gpu) {
            hcq_status s = mem_tl_wait(own, last, 0);
            if (s) return s;
        }
        po->o[po->n].dev = own;
        po->o[po->n].last = last;
        po->o[po->n++].on_gpu = on_gpu;
    }
    return HCQ_OK;
}

static hcq_status peers_wait(const peer_order *po, drv_rec *r)
{
    hcq_status s = HCQ_OK;
    for (uint32_t k = 0; k < po->n && !s; k++)
        if (po->o[k].on_gpu) s = r->dev->be->rec_wait(r, HCQ_IMM(mem_tl_va(po->o[k].dev)), HCQ_IMM(po->o[k].last));
    return s;
}

static hcq_status peers_after(const peer_order *po, hcq_device *dev, uint64_t tag)
{
    hcq_status s = HCQ_OK;
    for (uint32_t k = 0; k < po->n && !s; k++) {
        hcq_device *own = po->o[k].dev;
        if (!po->o[k].on_gpu) continue; /* its later work is not ordered after the launch */
        if ((s = drv_fault_status(own))) break;
        pthread_mutex_lock(&own->lock);
        drv_rec *r = q_eager_begin(own, HCQ_QUEUE_COPY);
        s = own->be->rec_wait(r, HCQ_IMM(mem_tl_va(dev)), HCQ_IMM(tag));
        if (!s) s = q_eager_end(own, r);
        pthread_mutex_unlock(&own->lock);
    }
    return s;
}

hcq_status hcq_launch(hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims)
{
    hcq_status s = Q_CHECK_PROGRAM(p, "hcq_launch");
    if (s) return s;
    hcq_device *dev = p->dev;
    for (int i = 0; i < 3; i++)
        if (hcq_val_is_var(dims.grid[i]) || hcq_val_is_var(dims.block[i]))
            return base_err(HCQ_EINVAL, "hcq_launch: dims must be immediates (variables belong to queues and graphs)");
    hcq_val stack[32], *params = nargs <= 32 ? stack : base_calloc(nargs, sizeof *params);
    if (!params) return HCQ_ENOMEM;
    s = q_resolve_args(p, args, nargs, params, NULL, NULL, false, "hcq_launch");
    for (uint32_t i = 0; !s && i < nargs; i++)
        if (hcq_val_is_var(params[i]))
            s = base_err(HCQ_EINVAL, "hcq_launch: argument %u is a variable; use a queue or a graph for those", i);
    if (!s) s = q_check_dims(p, &dims, NULL, "hcq_launch");
    if (!s) s = drv_fault_status(dev);
    /* other devices whose buffers the launch uses: ordered on the GPUs */
    peer_order po = {0};
    if (!s) s = peers_before(&po, dev, args, nargs);
    if (!s) {
        /* HCQ_DEBUG=2: GPU timestamps around the launch, waited for and
         * printed (this serialises launches: it is a debugging mode) */
        bool timed = hcq_debug_level() >= 2 && (s = debug_signals(dev)) == HCQ_OK;
        bool prof = q_prof_on();
        uint64_t h0 = prof ? hcq_now_ns() : 0;
        pthread_mutex_lock(&dev->lock);
        drv_rec *r = q_eager_begin(dev, HCQ_QUEUE_COMPUTE);
        uint64_t n = mem_tl_next(dev);
        s = peers_wait(&po, r);
        if (timed) dev->be->rec_timestamp(r, HCQ_IMM(dev->qd->dbg_t[0]->va));
        char pargs[200] = "";
        if (prof) q_prof_launch_args(pargs, sizeof pargs, dev, p, &dims, "eager");
        q_prof_span *sp = prof ? q_prof_begin(dev, r, p->info.name, pargs) : NULL;
        if (!s) s = dev->be->rec_exec(r, p, params, &dims);
        uint64_t flow = q_prof_end(dev, r, sp); /* sp may be freed from here on */
        if (timed) dev->be->rec_timestamp(r, HCQ_IMM(dev->qd->dbg_t[1]->va));
        if (!s) s = q_eager_end(dev, r);
        pthread_mutex_unlock(&dev->lock);
        if (!s) s = peers_after(&po, dev, n);
        if (prof) q_prof_host(dev, p->info.name, h0, hcq_now_ns(), flow, flow ? 1 : 0, pargs);
        if (!s && timed) debug_report(dev, p, &dims, n);
    }
    if (params != stack) free(params);
    return s;
}

static hcq_status check_range(const hcq_buffer *b, uint64_t off, uint64_t size, const char *fn)
{
    hcq_status s = Q_CHECK_BUFFER(b, fn, "buffer");
    if (s) return s;
    if (off > b->size || size > b->size - off)
        return base_err(HCQ_EINVAL, "%s: [%llu, +%llu) is outside the %llu-byte buffer", fn, (unsigned long long)off,
                        (unsigned long long)size, (unsigned long long)b->size);
    return HCQ_OK;
}

hcq_status hcq_buffer_copyin(hcq_buffer *dst, uint64_t off, const void *src, uint64_t size)
{
    hcq_status s = check_range(dst, off, size, "hcq_buffer_copyin");
    if (s || !size) return s;
    if (!src) return base_err(HCQ_EINVAL, "hcq_buffer_copyin: src is NULL");
    hcq_device *dev = dst->dev;
    if ((s = drv_fault_status(dev))) return s;
    pthread_mutex_lock(&dev->lock);
    for (uint64_t done = 0; done < size && !s;) {
        mem_stage st;
        if ((s = mem_staging_acquire(dev, mem_tl_next(dev), &st))) break;
        uint64_t n = BASE_MIN(st.size, size - done);
        memcpy(st.cpu, (const uint8_t *)src + done, n);
        drv_rec *r = q_eager_begin(dev, HCQ_QUEUE_COPY);
        char pargs[200] = "";
        uint64_t ph0 = q_prof_on() ? hcq_now_ns() : 0;
        if (ph0) q_prof_copy_args(pargs, sizeof pargs, dev, HCQ_IMM(n), "eager");
        q_prof_span *sp = ph0 ? q_prof_begin(dev, r, "copyin", pargs) : NULL;
        s = dev->be->rec_copy(r, HCQ_IMM(dst->va + off + done), HCQ_IMM(st.va), HCQ_IMM(n));
        uint64_t flow = q_prof_end(dev, r, sp);
        if (!s) s = q_eager_end(dev, r);
        if (flow) q_prof_host(dev, "copyin", ph0, hcq_now_ns(), flow, 1, pargs);
        done += n;
    }
    pthread_mutex_unlock(&dev->lock);
    return s;
}

hcq_status hcq_buffer_copyout(void *dst, hcq_buffer *src, uint64_t off, uint64_t size)
{
    hcq_status s = check_range(src, off, size, "hcq_buffer_copyout");
    if (s || !size) return s;
    if (!dst) return base_err(HCQ_EINVAL, "hcq_buffer_copyout: dst is NULL");
    hcq_device *dev = src->dev;
    if ((s = drv_fault_status(dev))) return s;
    /* chunks in flight, copied out in order; fewer than the slots, so the
     * slot being acquired is never one still waiting to be read */
    struct pend {
        uint64_t tag, n;
        void *cpu;
        uint8_t *to;
    } pend[16];
    uint32_t npend = 0, head = 0, window = BASE_MIN(dev->mem->stage_slots - 1, 16u);
    pthread_mutex_lock(&dev->lock);
    for (uint64_t done = 0; (done < size || npend) && !s;) {
        if (done < size && npend < window) {
            mem_stage st;
            if ((s = mem_staging_acquire(dev, mem_tl_next(dev), &st))) break;
            uint64_t n = BASE_MIN(st.size, size - done);
            drv_rec *r = q_eager_begin(dev, HCQ_QUEUE_COPY);
            uint64_t tag = mem_tl_next(dev);
            char pargs[200] = "";
            uint64_t ph0 = q_prof_on() ? hcq_now_ns() : 0;
            if (ph0) q_prof_copy_args(pargs, sizeof pargs, dev, HCQ_IMM(n), "eager");
            q_prof_span *sp = ph0 ? q_prof_begin(dev, r, "copyout", pargs) : NULL;
            s = dev->be->rec_copy(r, HCQ_IMM(st.va), HCQ_IMM(src->va + off + done), HCQ_IMM(n));
            uint64_t flow = q_prof_end(dev, r, sp);
            if (!s) s = q_eager_end(dev, r);
            if (flow) q_prof_host(dev, "copyout", ph0, hcq_now_ns(), flow, 1, pargs);
            if (s) break;
            pend[(head + npend++) % 16] = (struct pend){tag, n, st.cpu, (uint8_t *)dst + done};
            done += n;
            continue;
        }
        struct pend *p = &pend[head];
        if ((s = mem_tl_wait(dev, p->tag, 0))) break;
        memcpy(p->to, p->cpu, p->n);
        head = (head + 1) % 16;
        npend--;
    }
    pthread_mutex_unlock(&dev->lock);
    return s;
}

/* A copy between devices through a peer mapping, ordered on the GPUs:
 * the source's copy engine first waits (on the GPU) for the work the
 * destination had submitted, copies, and moves the source's timeline;
 * then the destination's copy engine waits (on the GPU) for that value
 * and moves the destination's timeline, so its later work comes after
 * the copy. Each waits only for values already submitted, so no two
 * devices can wait for each other. The locks are taken one at a time.
 * Where the timelines cannot be mapped across (they are host memory: only
 * when a backend maps nothing), the host waits instead. */
static hcq_status peer_copy(hcq_buffer *dst, uint64_t doff, hcq_buffer *src, uint64_t soff, uint64_t size)
{
    hcq_device *sd = src->dev, *dd = dst->dev;
    hcq_status s;
    if ((s = drv_fault_status(sd)) || (s = drv_fault_status(dd))) return s;
    bool on_gpu = !mem_signal_map_for(sd, dd->mem->timeline) && !mem_signal_map_for(dd, sd->mem->timeline);
    pthread_mutex_lock(&dd->lock);
    uint64_t dlast = mem_tl_next(dd) - 1;
    pthread_mutex_unlock(&dd->lock);
    if (!on_gpu && (s = mem_tl_wait(dd, dlast, 0))) return s;
    pthread_mutex_lock(&sd->lock);
    drv_rec *r = q_eager_begin(sd, HCQ_QUEUE_COPY);
    uint64_t tag = mem_tl_next(sd);
    char pargs[200] = "";
    uint64_t ph0 = q_prof_on() ? hcq_now_ns() : 0;
    if (ph0) q_prof_copy_args(pargs, sizeof pargs, sd, HCQ_IMM(size), "eager");
    if (on_gpu) s = sd->be->rec_wait(r, HCQ_IMM(mem_tl_va(dd)), HCQ_IMM(dlast));
    q_prof_span *sp = ph0 ? q_prof_begin(sd, r, "peer copy", pargs) : NULL;
    if (!s) s = sd->be->rec_copy(r, HCQ_IMM(dst->va + doff), HCQ_IMM(src->va + soff), HCQ_IMM(size));
    uint64_t flow = q_prof_end(sd, r, sp);
    if (!s) s = q_eager_end(sd, r);
    pthread_mutex_unlock(&sd->lock);
    if (flow) q_prof_host(sd, "peer copy", ph0, hcq_now_ns(), flow, 1, pargs);
    if (!s && on_gpu) {
        if ((s = drv_fault_status(dd))) return s;
        pthread_mutex_lock(&dd->lock);
        r = q_eager_begin(dd, HCQ_QUEUE_COPY);
        s = dd->be->rec_wait(r, HCQ_IMM(mem_tl_va(sd)), HCQ_IMM(tag));
        if (!s) s = q_eager_end(dd, r);
        pthread_mutex_unlock(&dd->lock);
    } else if (!s) {
        s = mem_tl_wait(sd, tag, 0); /* the destination's later work is ordered on its own timeline only */
    }
    BASE_LOG(1, "hcq_buffer_copy %s -> %s: %llu bytes on %s's copy engine through a peer mapping, ordered %s%s",
             sd->props.id, dd->props.id, (unsigned long long)size, sd->props.id,
             on_gpu ? "on the GPUs (each waits for the other's timeline)" : "by the host", s ? " (failed)" : "");
    return s;
}

hcq_status hcq_buffer_copy(hcq_buffer *dst, uint64_t doff, hcq_buffer *src, uint64_t soff, uint64_t size)
{
    hcq_status s = check_range(dst, doff, size, "hcq_buffer_copy");
    if (!s) s = check_range(src, soff, size, "hcq_buffer_copy");
    if (s || !size) return s;
    hcq_device *dev = dst->dev;
    if (src->dev == dev) {
        if ((s = drv_fault_status(dev))) return s;
        pthread_mutex_lock(&dev->lock);
        drv_rec *r = q_eager_begin(dev, HCQ_QUEUE_COPY);
        char pargs[200] = "";
        uint64_t ph0 = q_prof_on() ? hcq_now_ns() : 0;
        if (ph0) q_prof_copy_args(pargs, sizeof pargs, dev, HCQ_IMM(size), "eager");
        q_prof_span *sp = ph0 ? q_prof_begin(dev, r, "copy", pargs) : NULL;
        s = dev->be->rec_copy(r, HCQ_IMM(dst->va + doff), HCQ_IMM(src->va + soff), HCQ_IMM(size));
        uint64_t flow = q_prof_end(dev, r, sp);
        if (!s) s = q_eager_end(dev, r);
        pthread_mutex_unlock(&dev->lock);
        if (flow) q_prof_host(dev, "copy", ph0, hcq_now_ns(), flow, 1, pargs);
        return s;
    }
    /* Between devices: on the source's copy engine into a peer mapping of
     * the destination where the backends make one, else through host
     * memory (copyout waits for the source's timeline, copyin is ordered
     * on the destination's). HCQ_DEBUG=1 says which path ran. */
    if ((s = q_peer_map(src->dev, dst)) == HCQ_OK) return peer_copy(dst, doff, src, soff, size);
    if (s != HCQ_ENOTSUP) return s;
    BASE_LOG(1, "hcq_buffer_copy %s -> %s: %llu bytes through host memory: %s", src->dev->props.id, dev->props.id,
             (unsigned long long)size, hcq_error_message());
    s = HCQ_OK;
    uint64_t chunk = BASE_MIN(size, 8ull << 20);
    uint8_t *tmp = malloc(chunk);
    if (!tmp) return base_err(HCQ_ENOMEM, "hcq_buffer_copy: no host memory for a %llu-byte bounce buffer",
                              (unsigned long long)chunk);
    for (uint64_t done = 0; done < size && !s; done += chunk) {
        uint64_t n = BASE_MIN(chunk, size - done);
        s = hcq_buffer_copyout(tmp, src, soff + done, n);
        if (!s) s = hcq_buffer_copyin(dst, doff + done, tmp, n);
    }
    free(tmp);
    return s;
}

hcq_status q_peer_map(hcq_device *dev, hcq_buffer *b)
{
    hcq_device *owner = b->dev;
    if (owner == dev) return HCQ_OK;
    if (owner->be != dev->be || !dev->be->peer_map)
        return base_err(HCQ_ENOTSUP, "%s cannot map %s's memory: %s", dev->props.id, owner->props.id,
                        owner->be != dev->be ? "they are devices of different kinds" : "its backend has no peer mappings");
    hcq_buffer *root = b->parent ? b->parent : b;
    /* the mapping is the allocation's: serialised by its owner's lock */
    pthread_mutex_lock(&owner->lock);
    hcq_status s = dev->be->peer_map(dev, owner, &root->mem);
    pthread_mutex_unlock(&owner->lock);
    return s;
}

hcq_status q_peer_use(hcq_device *dev, hcq_buffer *b)
{
    hcq_device *owner = b->dev;
    if (owner == dev) return HCQ_OK;
    hcq_status s = q_peer_map(dev, b);
    if (s) return s;
    pthread_mutex_lock(&owner->lock);
    uint64_t last = mem_tl_next(owner) - 1;
    pthread_mutex_unlock(&owner->lock);
    return mem_tl_wait(owner, last, 0);
}
