#include "base/base.h"
#include "mem/mem.h"

#include <stdlib.h>
#include <string.h>

/* What every open device holds: the timeline signal (and its page), the
 * kernarg ring and the staging slots. Sizes come from the environment
 * (HCQ_KERNARG_RING_KIB, HCQ_STAGING_CHUNK_KIB, HCQ_STAGING_SLOTS) so tests
 * can make them small enough to wrap. */

hcq_status mem_dev_init(hcq_device *dev)
{
    const base_env *env = base_env_get();
    struct mem_dev *m = base_calloc(1, sizeof *m);
    if (!m) return HCQ_ENOMEM;
    pthread_mutex_init(&m->alloc_lock, NULL);
    dev->mem = m;
    /* HCQ_TIMELINE_START lets tests begin near 2^32 or 2^64 - 2^16 to prove
     * every field the engines write holds the whole value */
    uint64_t start = env->timeline_start; /* base/env.c bounds it */
    atomic_init(&m->tl_next, start + 1);

    hcq_status s;
    m->timeline = mem_signal_new(dev, start);
    if (!m->timeline) {
        s = base_err_prefix(hcq_error_status(), "%s: creating the timeline signal", dev->props.id);
        goto fail;
    }
    base_handle_add(m->timeline, BASE_H_SIGNAL); /* users wait on it (hcq_device_timeline) */

    uint64_t kr = (uint64_t)BASE_MAX(env->kernarg_ring_kib, 64u) * 1024;
    s = mem_raw_alloc(dev, kr, DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_LOW, &m->kernargs.mem);
    if (s) {
        base_err_prefix(s, "%s: allocating the %llu-byte kernarg ring", dev->props.id, (unsigned long long)kr);
        goto fail;
    }
    m->kernargs.size = kr;

    m->stage_chunk = (uint64_t)BASE_MAX(env->staging_chunk_kib, 4u) * 1024;
    m->stage_slots = BASE_MAX(env->staging_slots, 2u);
    m->stage_tag = base_calloc(m->stage_slots, sizeof *m->stage_tag);
    if (!m->stage_tag) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    s = mem_raw_alloc(dev, m->stage_chunk * m->stage_slots, DRV_MEM_HOST | DRV_MEM_CPU, &m->staging);
    if (s) {
        base_err_prefix(s, "%s: allocating %u staging slots of %llu bytes", dev->props.id, m->stage_slots,
                        (unsigned long long)m->stage_chunk);
        goto fail;
    }
    m->fixed_bytes += m->kernargs.mem.size + m->staging.size;
    dev->props.fixed_memory_bytes += m->fixed_bytes; /* the backend may have counted its own */
    dev->props.staging_bytes = m->staging.size;
    dev->props.staging_chunk_bytes = m->stage_chunk;
    return HCQ_OK;

fail:
    mem_dev_fini(dev);
    return s;
}

void mem_dev_fini(hcq_device *dev)
{
    struct mem_dev *m = dev->mem;
    if (!m) return;
    unsigned nb = 0, ns = 0;
    mem_buffers_free_all(dev, &nb);
    while (m->signals) {
        hcq_signal *s = m->signals;
        if (base_handle_remove(s, BASE_H_SIGNAL) && s != m->timeline) ns++;
        mem_signal_delete(s);
    }
    m->timeline = NULL;
    if (nb || ns) BASE_LOG(1, "%s closed with %u buffers and %u signals still alive; freed them", dev->props.id, nb, ns);
    if (m->kernargs.mem.cpu || m->kernargs.mem.size) mem_raw_free(dev, &m->kernargs.mem, false);
    if (m->staging.cpu || m->staging.size) mem_raw_free(dev, &m->staging, false);
    free(m->kernargs.fifo);
    free(m->stage_tag);
    mem_sigpages_free(dev);
    mem_cache_flush(dev);
    pthread_mutex_destroy(&m->alloc_lock);
    free(m);
    dev->mem = NULL;
}
