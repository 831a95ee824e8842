#include "base/base.h"
#include "mem/mem.h"

#include <stdlib.h>

/* The kernarg ring hands out slices in order. Each slice is remembered with
 * its start (as a byte counter) and the timeline value that retires it. A new
 * slice may overwrite old ones only once the timeline has passed their
 * values: the ring waits for the engines, it never outruns them. */

static hcq_status fifo_push(mem_ring *r, uint64_t start, uint64_t tag)
{
    if (r->fcount == r->fcap) {
        uint32_t cap = r->fcap ? r->fcap * 2 : 256;
        struct mem_ring_entry *f = base_calloc(cap, sizeof *f);
        if (!f) return HCQ_ENOMEM;
        for (uint32_t i = 0; i < r->fcount; i++) f[i] = r->fifo[(r->fhead + i) % r->fcap];
        free(r->fifo);
        r->fifo = f;
        r->fcap = cap;
        r->fhead = 0;
    }
    r->fifo[(r->fhead + r->fcount) % r->fcap] = (struct mem_ring_entry){start, tag};
    r->fcount++;
    return HCQ_OK;
}

static uint64_t tl_done(hcq_device *dev)
{
    return atomic_load_explicit((_Atomic uint64_t *)dev->mem->timeline->cpu, memory_order_acquire);
}

hcq_status mem_kernarg_alloc(hcq_device *dev, uint32_t size, uint32_t align, uint64_t tag, void **cpu,
                             uint64_t *va)
{
    mem_ring *r = &dev->mem->kernargs;
    if (size > r->size / 2)
        return base_err(HCQ_ELIMIT, "%s: %u bytes of kernargs do not fit the %llu-byte kernarg ring", dev->props.id,
                        size, (unsigned long long)r->size);
    uint64_t pos = base_align_up(r->head, align);
    if (pos / r->size != (pos + size - 1) / r->size) pos = base_align_up(pos, r->size); /* no straddling */
    /* the new slice lands on the previous lap's [pos - size_r, pos + size -
     * size_r): slices starting before its end must have retired. They are
     * the oldest ones, at the head of the FIFO. */
    uint64_t done = tl_done(dev);
    while (r->fcount) {
        struct mem_ring_entry *e = &r->fifo[r->fhead];
        if (e->tag > done && e->start + r->size < pos + size) {
            if (e->tag >= mem_tl_next(dev))
                return base_err(HCQ_ELIMIT, "%s: the kernarg ring is full of work not yet submitted", dev->props.id);
            hcq_status s = mem_tl_wait(dev, e->tag, 0);
            if (s) return base_err_prefix(s, "%s: waiting for kernarg ring space", dev->props.id);
            done = tl_done(dev);
            continue;
        }
        if (e->tag > done) break; /* in flight, but clear of the new slice */
        r->fhead = (r->fhead + 1) % r->fcap;
        r->fcount--;
    }
    hcq_status s = fifo_push(r, pos, tag);
    if (s) return s;
    r->head = pos + size;
    *cpu = (uint8_t *)r->mem.cpu + pos % r->size;
    *va = r->mem.va + pos % r->size;
    return HCQ_OK;
}

hcq_status mem_staging_acquire(hcq_device *dev, uint64_t tag, mem_stage *out)
{
    struct mem_dev *m = dev->mem;
    uint32_t i = m->stage_next;
    if (m->stage_tag[i] > tl_done(dev)) {
        hcq_status s = mem_tl_wait(dev, m->stage_tag[i], 0);
        if (s) return base_err_prefix(s, "%s: waiting for a free staging slot", dev->props.id);
    }
    m->stage_tag[i] = tag;
    m->stage_next = (i + 1) % m->stage_slots;
    out->cpu = (uint8_t *)m->staging.cpu + (uint64_t)i * m->stage_chunk;
    out->va = m->staging.va + (uint64_t)i * m->stage_chunk;
    out->size = m->stage_chunk;
    return HCQ_OK;
}
