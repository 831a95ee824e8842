#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

/* Recorded queues. Commands go through the backend's encoders into q->rec;
 * the kernarg blocks (and QMDs) they need come from chunks of GPU-visible
 * memory the queue owns, so a resubmission finds them where the recorded
 * commands point. */

#define CHUNK_MIN (64u * 1024)

static hcq_status aux_alloc(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    hcq_queue *q = r->aux_ctx;
    q_chunk *c = q->chunks;
    uint64_t off = c ? base_align_up(c->used, align) : 0;
    if (!c || off + size > c->mem.size) {
        c = base_calloc(1, sizeof *c);
        if (!c) return HCQ_ENOMEM;
        hcq_status s = mem_raw_alloc(q->dev, BASE_MAX(CHUNK_MIN, base_align_up(size, 4096)),
                                     DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_LOW, &c->mem);
        if (s) {
            free(c);
            return base_err_prefix(s, "%s: kernarg memory for a queue", q->dev->props.id);
        }
        c->next = q->chunks;
        q->chunks = c;
        off = 0;
    }
    c->used = (uint32_t)(off + size);
    *cpu = (uint8_t *)c->mem.cpu + off;
    *va = c->mem.va + off;
    return HCQ_OK;
}

hcq_queue *q_create(hcq_device *dev, hcq_queue_type type, bool internal)
{
    hcq_queue *q = base_calloc(1, sizeof *q);
    if (!q) return NULL;
    q->dev = dev;
    q->type = type;
    q->internal = internal;
    drv_rec_init(&q->rec, dev, type);
    q->rec.aux_alloc = aux_alloc;
    q->rec.aux_ctx = q;
    drv_rec_init(&q->done_rec, dev, type);
    if (!internal) {
        struct queue_dev *qd = dev->qd;
        pthread_mutex_lock(&qd->list_lock);
        q->next = qd->queues;
        if (qd->queues) qd->queues->prev = q;
        qd->queues = q;
        pthread_mutex_unlock(&qd->list_lock);
    }
    return q;
}

hcq_queue *hcq_queue_create(hcq_device *dev, hcq_queue_type type)
{
    if (Q_CHECK_DEV(dev, "hcq_queue_create")) return NULL;
    if (type != HCQ_QUEUE_COMPUTE && type != HCQ_QUEUE_COPY) {
        base_err(HCQ_EINVAL, "hcq_queue_create: unknown queue type %d", (int)type);
        return NULL;
    }
    hcq_queue *q = q_create(dev, type, false);
    if (q) base_handle_add(q, BASE_H_QUEUE);
    return q;
}

/* Waits until the queue's submissions that use aux memory have completed. */
static bool q_idle(const hcq_queue *q)
{
    return !q->done || atomic_load_explicit((_Atomic uint64_t *)q->done->cpu, memory_order_acquire) >= q->done_value;
}

/* Waits until the queue's tracked submissions have completed. A whole
 * timeout without completion makes the device hung (sticky), as a timeline
 * wait does. */
static hcq_status q_drain(hcq_queue *q)
{
    if (q_idle(q)) return HCQ_OK;
    hcq_status s = mem_wait(q->dev, q->done->cpu, q->done->va, q->done_value, 0, "a queue's completion signal");
    if (s == HCQ_ETIMEDOUT) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        drv_set_fault(q->dev, HCQ_ETIMEDOUT, "%s", msg);
        return drv_fault_status(q->dev);
    }
    return s;
}

static void free_chunks(hcq_queue *q)
{
    while (q->chunks) {
        q_chunk *c = q->chunks;
        q->chunks = c->next;
        mem_raw_free(q->dev, &c->mem, true);
        free(c);
    }
}

void q_free(hcq_queue *q)
{
    if (!q->internal) {
        struct queue_dev *qd = q->dev->qd;
        pthread_mutex_lock(&qd->list_lock);
        if (q->prev) q->prev->next = q->next;
        else qd->queues = q->next;
        if (q->next) q->next->prev = q->prev;
        pthread_mutex_unlock(&qd->list_lock);
    }
    free_chunks(q);
    q_holds_release(&q->holds);
    q_prof_points_free(&q->prof);
    drv_rec_fini(&q->rec);
    drv_rec_fini(&q->done_rec);
    if (q->done) mem_signal_delete(q->done);
    free(q->last_vars);
    free(q->sizechecks);
    free(q);
}

hcq_status hcq_queue_destroy(hcq_queue *q)
{
    if (!q) return HCQ_OK;
    if (!base_handle_live(q, BASE_H_QUEUE))
        return base_err(HCQ_ESTATE, "hcq_queue_destroy: %p is not a live queue (destroyed twice, or its device was "
                        "closed?)", (void *)q);
    bool was_lost = atomic_load(&q->dev->faulted);
    hcq_status s = q_drain(q);
    if (!base_handle_remove(q, BASE_H_QUEUE))
        return base_err(HCQ_ESTATE, "hcq_queue_destroy: %p was destroyed meanwhile (by another thread?)", (void *)q);
    if (s) {
        /* the engine may still read its commands, kernargs and what it
         * holds: they stay with the device, which frees them at close after
         * stopping its engines. The handle is gone either way. On a device
         * already lost the caller has had its error: the destroy is a free,
         * and frees succeed there. A wait that this destroy ran into (a
         * submission stuck on a signal nobody sets) is its own error: the
         * work is abandoned, which the caller must hear. */
        BASE_LOG(1, "hcq_queue_destroy: %s; the queue's memory stays until the device is closed", hcq_error_message());
        if (was_lost) return HCQ_OK;
        return base_err(s, "hcq_queue_destroy: the queue's last submission did not complete, and its work is abandoned "
                        "(the queue is destroyed; its memory stays with the device until hcq_device_close): %s",
                        hcq_error_message());
    }
    if (q->done_value) q_prof_points_harvest(q->dev, &q->prof);
    q_free(q);
    return HCQ_OK;
}

void q_queues_harvest_all(hcq_device *dev, uint64_t wait_ns)
{
    pthread_mutex_lock(&dev->qd->list_lock);
    /* a queue's last completion marker may be on its way: each gets a
     * short wait (close's grace), not a timeout */
    for (hcq_queue *q = dev->qd->queues; q; q = q->next) {
        if (!q->prof.n || !q->done_value) continue;
        if (!q_idle(q) && wait_ns && !atomic_load(&dev->faulted))
            mem_wait(dev, q->done->cpu, q->done->va, q->done_value, wait_ns, "a queue's completion signal");
        if (q_idle(q)) q_prof_points_harvest(dev, &q->prof);
    }
    pthread_mutex_unlock(&dev->qd->list_lock);
}

hcq_status hcq_queue_reset(hcq_queue *q)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_reset");
    if (s) return s;
    if ((s = q_drain(q))) return base_err_prefix(s, "hcq_queue_reset");
    if (q->done_value) q_prof_points_harvest(q->dev, &q->prof);
    q_prof_points_free(&q->prof);
    drv_rec_reset(&q->rec);
    free_chunks(q);
    q_holds_release(&q->holds);
    q->nsizechecks = 0;
    q->primed = false;
    return HCQ_OK;
}

static hcq_status need_type(hcq_queue *q, hcq_queue_type t, const char *fn)
{
    if (q->type != t)
        return base_err(HCQ_EINVAL, "%s: needs a %s queue; this is a %s queue", fn,
                        t == HCQ_QUEUE_COMPUTE ? "compute" : "copy", q->type == HCQ_QUEUE_COMPUTE ? "compute" : "copy");
    return HCQ_OK;
}

static hcq_status done_cmd(hcq_queue *q, hcq_status s)
{
    if (!s) q->rec.ncmds++;
    return s;
}

/* A signal handle in a recorded command: live, and held while the queue
 * uses it. Another device's signal (across=true: waits and writes) is
 * mapped for this device's engines, so a queue waits for work of another
 * GPU on its own GPU (the engine polls memory the other GPU's engine
 * writes); it is not held (its device may close first: the caller keeps
 * it and its device alive while the queue uses it, as with another
 * device's buffers). Timestamps stay with the signal's own device: they
 * are read in its clock. No queue writes a timeline. */
enum { USE_WAIT, USE_WRITE, USE_STAMP };
static hcq_status use_signal(hcq_queue *q, hcq_signal *sig, int use, const char *fn)
{
    hcq_status s = Q_CHECK_QUEUE(q, fn);
    if (!s) s = Q_CHECK_SIGNAL(sig, fn);
    if (s) return s;
    bool across = use != USE_STAMP;
    /* a device's timeline counts its own submissions: a queue's write
     * would make its eager calls and waits believe work done that is not */
    if (use != USE_WAIT && sig == sig->dev->mem->timeline)
        return base_err(HCQ_EINVAL, "%s: that is %s's timeline, which only %s's own calls write (a queue may wait on "
                        "it)", fn, sig->dev->props.id, sig->dev->props.id);
    if (sig->dev == q->dev) return q_hold(&q->holds, BASE_H_SIGNAL, sig);
    if (!across)
        return base_err(HCQ_EINVAL, "%s: the signal belongs to %s, the queue to %s; a timestamp is written by the "
                        "signal's own device, in its clock", fn, sig->dev->props.id, q->dev->props.id);
    if ((s = mem_signal_map_for(q->dev, sig)) == HCQ_OK) {
        BASE_LOG(1, "%s: %s's queue uses %s's signal at 0x%llx through a mapping of its page", fn, q->dev->props.id,
                 sig->dev->props.id, (unsigned long long)sig->va);
        return HCQ_OK;
    }
    if (s != HCQ_ENOTSUP) return base_err_prefix(s, "%s", fn);
    char why[512];
    snprintf(why, sizeof why, "%s", hcq_error_message());
    return base_err(HCQ_EINVAL, "%s: the signal belongs to %s, the queue to %s, and %s (order work across these "
                    "devices on the host: hcq_signal_wait, then hcq_signal_set)", fn, sig->dev->props.id,
                    q->dev->props.id, why);
}

hcq_status q_wait_at(hcq_queue *q, hcq_val addr, hcq_val value)
{
    return done_cmd(q, q->dev->be->rec_wait(&q->rec, addr, value));
}

hcq_status q_signal_at(hcq_queue *q, hcq_val addr, hcq_val value)
{
    return done_cmd(q, q->dev->be->rec_signal(&q->rec, addr, value));
}

hcq_status q_timestamp_at(hcq_queue *q, hcq_val addr)
{
    return done_cmd(q, q->dev->be->rec_timestamp(&q->rec, addr));
}

hcq_status hcq_queue_wait_at(hcq_queue *q, hcq_val addr, hcq_val value)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_wait_at");
    if (s) return s;
    return q_wait_at(q, addr, value);
}

hcq_status hcq_queue_wait(hcq_queue *q, hcq_signal *sig, hcq_val value)
{
    hcq_status s = use_signal(q, sig, USE_WAIT, "hcq_queue_wait");
    if (s) return s;
    return q_wait_at(q, HCQ_IMM(sig->va), value);
}

hcq_status hcq_queue_signal_at(hcq_queue *q, hcq_val addr, hcq_val value)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_signal_at");
    if (s) return s;
    return q_signal_at(q, addr, value);
}

hcq_status hcq_queue_signal(hcq_queue *q, hcq_signal *sig, hcq_val value)
{
    hcq_status s = use_signal(q, sig, USE_WRITE, "hcq_queue_signal");
    if (s) return s;
    return q_signal_at(q, HCQ_IMM(sig->va), value);
}

hcq_status hcq_queue_timestamp_at(hcq_queue *q, hcq_val addr)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_timestamp_at");
    if (s) return s;
    return q_timestamp_at(q, addr);
}

hcq_status hcq_queue_timestamp(hcq_queue *q, hcq_signal *sig)
{
    hcq_status s = use_signal(q, sig, USE_STAMP, "hcq_queue_timestamp");
    if (s) return s;
    return q_timestamp_at(q, HCQ_IMM(sig->va));
}

hcq_status hcq_queue_barrier(hcq_queue *q)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_barrier");
    if (!s) s = need_type(q, HCQ_QUEUE_COMPUTE, "hcq_queue_barrier");
    if (s) return s;
    return done_cmd(q, q->dev->be->rec_barrier(&q->rec));
}

hcq_status q_exec(hcq_queue *q, hcq_program *p, const hcq_val *params, const hcq_dims *dims, const char *fn)
{
    hcq_status s = need_type(q, HCQ_QUEUE_COMPUTE, fn);
    if (s) return s;
    if ((s = q_check_dims(p, dims, NULL, fn))) return s;
    for (int i = 0; i < 3; i++) {
        if (hcq_val_is_var(dims->grid[i]) || hcq_val_is_var(dims->block[i])) {
            drv_rec_dimcheck(&q->rec, p, dims);
            break;
        }
    }
    return done_cmd(q, q->dev->be->rec_exec(&q->rec, p, params, dims));
}

hcq_status hcq_queue_exec(hcq_queue *q, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_exec");
    if (!s) s = Q_CHECK_PROGRAM(p, "hcq_queue_exec");
    if (s) return s;
    if (p->dev != q->dev)
        return base_err(HCQ_EINVAL, "hcq_queue_exec: the program is loaded on %s, the queue is on %s", p->dev->props.id,
                        q->dev->props.id);
    hcq_val stack[32], *params = nargs <= 32 ? stack : base_calloc(nargs, sizeof *params);
    if (!params) return HCQ_ENOMEM;
    s = q_resolve_args(p, args, nargs, params, NULL, NULL, true, "hcq_queue_exec");
    /* what the command runs and touches lives as long as the recording */
    if (!s) s = q_hold_launch(&q->holds, p, args, nargs);
    q_prof_point *pr = NULL;
    char pargs[200] = "";
    if (!s && q->type == HCQ_QUEUE_COMPUTE && q_prof_on()) {
        q_prof_launch_args(pargs, sizeof pargs, q->dev, p, &dims, "recorded queue");
        s = q_prof_point_begin(&q->prof, q, p->info.name, pargs, &pr);
    }
    if (!s) s = q_exec(q, p, params, &dims, "hcq_queue_exec");
    if (!s) s = q_prof_point_end(q, pr);
    if (params != stack) free(params);
    return s;
}

hcq_status q_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size, const char *fn)
{
    hcq_status s = need_type(q, HCQ_QUEUE_COPY, fn);
    if (s) return s;
    if (hcq_val_is_var(size)) {
        if (q->nsizechecks == q->scap) {
            uint32_t cap = q->scap ? q->scap * 2 : 8;
            hcq_val *c = base_realloc_array(q->sizechecks, cap, sizeof *c);
            if (!c) return HCQ_ENOMEM;
            q->sizechecks = c;
            q->scap = cap;
        }
        q->sizechecks[q->nsizechecks++] = size;
    }
    return done_cmd(q, q->dev->be->rec_copy(&q->rec, dst, src, size));
}

hcq_status hcq_queue_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_copy");
    if (s) return s;
    return q_copy(q, dst, src, size, "hcq_queue_copy");
}

uint32_t hcq_queue_var_count(const hcq_queue *q)
{
    return Q_CHECK_QUEUE(q, "hcq_queue_var_count") ? 0 : q->rec.nvars;
}

uint32_t hcq_queue_command_count(const hcq_queue *q)
{
    return Q_CHECK_QUEUE(q, "hcq_queue_command_count") ? 0 : q->rec.ncmds;
}

hcq_status q_submit_checks(hcq_queue *q, const uint64_t *vars, uint32_t nvars)
{
    if (q->rec.err) return base_err(q->rec.err, "hcq_queue_submit: recording the queue failed earlier (%s)",
                                    hcq_status_name(q->rec.err));
    if (nvars < q->rec.nvars)
        return base_err(HCQ_EINVAL, "hcq_queue_submit: the queue uses %u variables, %u given", q->rec.nvars, nvars);
    if (q->rec.nvars && !vars) return base_err(HCQ_EINVAL, "hcq_queue_submit: vars is NULL");
    for (uint32_t i = 0; i < q->rec.ndimchecks; i++) {
        const drv_dimcheck *d = &q->rec.dimchecks[i];
        hcq_status s = q_check_dims(d->prog, &d->dims, vars, "hcq_queue_submit");
        if (s) return s;
    }
    hcq_status as = drv_rec_check_aligns(&q->rec, vars, "hcq_queue_submit");
    if (as) return as;
    for (uint32_t i = 0; i < q->nsizechecks; i++) {
        uint64_t sz = drv_val(q->sizechecks[i], vars);
        if (sz > q->dev->be->copy_max_bytes)
            return base_err(HCQ_ELIMIT, "hcq_queue_submit: a copy of variable size is %llu bytes; %s copies at most "
                            "%llu bytes in one command", (unsigned long long)sz, q->dev->props.id,
                            (unsigned long long)q->dev->be->copy_max_bytes);
    }
    return HCQ_OK;
}

hcq_status q_submit(hcq_queue *q, const uint64_t *vars, uint32_t nvars, bool track)
{
    hcq_device *dev = q->dev;
    hcq_status s = q_submit_checks(q, vars, nvars);
    if (s) return s;
    if ((s = drv_fault_status(dev))) return s;
    /* patching kernarg/QMD memory under a running submission would change
     * what it reads: wait for it. Profiled queues wait too, to read their
     * timestamps before this submission overwrites them. */
    if ((q->rec.nmem_patches || q->prof.n) && (s = q_drain(q))) return base_err_prefix(s, "hcq_queue_submit");
    if (q->prof.n && q->done_value) q_prof_points_harvest(dev, &q->prof);
    if (q->rec.nvars > q->last_cap) {
        uint64_t *l = base_realloc_array(q->last_vars, q->rec.nvars, sizeof *l);
        if (!l) return HCQ_ENOMEM;
        q->last_vars = l;
        q->last_cap = q->rec.nvars;
        q->primed = false;
    }
    /* patches recorded since the last submission hold placeholders */
    bool all = !q->primed || q->primed_npatches != q->rec.npatches;
    drv_rec_apply(&q->rec, vars, all ? NULL : q->last_vars);
    if (q->rec.nvars) memcpy(q->last_vars, vars, q->rec.nvars * sizeof *vars);
    q->primed = true;
    q->primed_npatches = q->rec.npatches;
    if (track) {
        /* a user queue: ordered with the eager calls both ways */
        pthread_mutex_lock(&dev->lock);
        s = q_submit_ordered(dev, &q->rec);
        pthread_mutex_unlock(&dev->lock);
    } else {
        s = drv_submit(dev, &q->rec); /* a graph's: replayed under dev->lock, on the timeline */
    }
    if (s) return s;
    q_status_update(dev, Q_STATUS_SUBMIT, q->type, 0);
    /* a queue whose memory or held objects the engine uses reports its
     * completion, so that nothing it uses goes while it runs */
    if (!track || (!q->rec.uses_aux && !q->holds.n)) return HCQ_OK;

    /* completion marker behind the commands, on the same engine */
    if (!q->done) {
        if (!(q->done = mem_signal_new(dev, 0))) return hcq_error_status();
        if ((s = dev->be->rec_signal(&q->done_rec, HCQ_IMM(q->done->va), HCQ_VAR(0)))) return s;
    }
    uint64_t v = q->done_value + 1;
    drv_rec_apply(&q->done_rec, &v, NULL);
    if ((s = drv_submit(dev, &q->done_rec))) return s;
    q->done_value = v;
    return HCQ_OK;
}

hcq_status hcq_queue_submit(hcq_queue *q, const uint64_t *vars, uint32_t nvars)
{
    hcq_status s = Q_CHECK_QUEUE(q, "hcq_queue_submit");
    if (s) return s;
    uint64_t h0 = q->prof.n ? hcq_now_ns() : 0;
    s = q_submit(q, vars, nvars, true);
    if (!s && h0) q_prof_points_submitted(q->dev, &q->prof, "queue submit", h0, hcq_now_ns());
    return s;
}
