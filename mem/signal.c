#include "base/base.h"
#include "mem/mem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Signals are 16-byte slots carved from 4 KiB pages of uncached, CPU-mapped
 * host memory that every engine of the device can address. */

#define SIG_PAGE_BYTES 4096u
#define SIG_SLOTS (SIG_PAGE_BYTES / 16u)

struct mem_sigpage {
    drv_mem mem;
    uint64_t used[SIG_SLOTS / 64];
    uint32_t nused;
    mem_sigpage *next;
};

static inline uint64_t load_value(const uint64_t *p)
{
    return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_acquire);
}

hcq_signal *mem_signal_new(hcq_device *dev, uint64_t initial)
{
    struct mem_dev *m = dev->mem;
    hcq_signal *s = base_calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_lock(&m->alloc_lock);
    mem_sigpage *pg = m->pages;
    while (pg && pg->nused == SIG_SLOTS) pg = pg->next;
    pthread_mutex_unlock(&m->alloc_lock);
    if (!pg) {
        pg = base_calloc(1, sizeof *pg);
        if (!pg) {
            free(s);
            return NULL;
        }
        hcq_status st = mem_raw_alloc(dev, SIG_PAGE_BYTES, DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_UNCACHED, &pg->mem);
        if (st) {
            base_err_prefix(st, "%s: allocating a signal page", dev->props.id);
            free(pg);
            free(s);
            return NULL;
        }
        pthread_mutex_lock(&m->alloc_lock);
        pg->next = m->pages;
        m->pages = pg;
        m->fixed_bytes += pg->mem.size;
        pthread_mutex_unlock(&m->alloc_lock);
    }
    pthread_mutex_lock(&m->alloc_lock);
    uint32_t slot = 0;
    while (pg->used[slot / 64] & (1ull << (slot % 64))) slot++;
    pg->used[slot / 64] |= 1ull << (slot % 64);
    pg->nused++;
    s->dev = dev;
    s->page = pg;
    s->slot = slot;
    s->va = pg->mem.va + slot * 16u;
    s->cpu = (uint64_t *)((uint8_t *)pg->mem.cpu + slot * 16u);
    s->cpu[1] = 0;
    atomic_store_explicit((_Atomic uint64_t *)s->cpu, initial, memory_order_release);
    s->next = m->signals;
    if (m->signals) m->signals->prev = s;
    m->signals = s;
    pthread_mutex_unlock(&m->alloc_lock);
    return s;
}

void mem_signal_delete(hcq_signal *s)
{
    struct mem_dev *m = s->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    s->page->used[s->slot / 64] &= ~(1ull << (s->slot % 64));
    s->page->nused--;
    if (s->prev) s->prev->next = s->next;
    else m->signals = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&m->alloc_lock);
    free(s);
}

hcq_signal *hcq_signal_create(hcq_device *dev, uint64_t initial)
{
    if (base_handle_check(dev, BASE_H_DEVICE, "hcq_signal_create", "device")) return NULL;
    hcq_signal *s = mem_signal_new(dev, initial);
    if (s) base_handle_add(s, BASE_H_SIGNAL);
    return s;
}

void mem_signal_hold(hcq_signal *s)
{
    struct mem_dev *m = s->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    s->holds++;
    pthread_mutex_unlock(&m->alloc_lock);
}

void mem_signal_release(hcq_signal *s)
{
    struct mem_dev *m = s->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    bool last = --s->holds == 0 && s->freed;
    pthread_mutex_unlock(&m->alloc_lock);
    if (last) mem_signal_delete(s);
}

hcq_status hcq_signal_destroy(hcq_signal *sig)
{
    if (!sig) return HCQ_OK;
    if (!base_handle_live(sig, BASE_H_SIGNAL))
        return base_err(HCQ_ESTATE, "hcq_signal_destroy: %p is not a live signal (destroyed twice, or its device "
                        "was closed?)", (void *)sig);
    if (sig == sig->dev->mem->timeline)
        return base_err(HCQ_ESTATE, "hcq_signal_destroy: that is %s's timeline; it goes with the device",
                        sig->dev->props.id);
    if (!base_handle_remove(sig, BASE_H_SIGNAL))
        return base_err(HCQ_ESTATE, "hcq_signal_destroy: %p was destroyed meanwhile (by another thread?)", (void *)sig);
    /* a recorded queue that waits on it or writes it keeps its slot */
    struct mem_dev *m = sig->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    sig->freed = true;
    bool now = sig->holds == 0;
    pthread_mutex_unlock(&m->alloc_lock);
    if (now) mem_signal_delete(sig);
    return HCQ_OK;
}

#define SIGNAL_CHECK(fn, fail)                                                                                  \
    if (base_handle_check(sig, BASE_H_SIGNAL, fn, "signal")) return fail

uint64_t hcq_signal_va(const hcq_signal *sig)
{
    SIGNAL_CHECK("hcq_signal_va", 0);
    return sig->va;
}

hcq_device *hcq_signal_device(const hcq_signal *sig)
{
    SIGNAL_CHECK("hcq_signal_device", NULL);
    return sig->dev;
}

uint64_t hcq_signal_value(const hcq_signal *sig)
{
    SIGNAL_CHECK("hcq_signal_value", 0);
    return load_value(sig->cpu);
}

void mem_signal_set(hcq_signal *sig, uint64_t value)
{
    atomic_store_explicit((_Atomic uint64_t *)sig->cpu, value, memory_order_release);
    if (sig->dev->be->signal_written) sig->dev->be->signal_written(sig->dev, sig->va);
}

void hcq_signal_set(hcq_signal *sig, uint64_t value)
{
    SIGNAL_CHECK("hcq_signal_set", );
    atomic_store_explicit((_Atomic uint64_t *)sig->cpu, value, memory_order_release);
    if (sig->dev->be->signal_written) sig->dev->be->signal_written(sig->dev, sig->va);
}

uint64_t mem_signal_timestamp_ns(const hcq_signal *sig)
{
    uint64_t t = atomic_load_explicit((_Atomic uint64_t *)&sig->cpu[1], memory_order_acquire);
    const hcq_device *d = sig->dev;
    return d->ts_mul == d->ts_div ? t : (uint64_t)((unsigned __int128)t * d->ts_mul / d->ts_div);
}

uint64_t hcq_signal_timestamp_ns(const hcq_signal *sig)
{
    SIGNAL_CHECK("hcq_signal_timestamp_ns", 0);
    return mem_signal_timestamp_ns(sig);
}

hcq_status hcq_signal_wait(const hcq_signal *sig, uint64_t target, uint64_t timeout_ns)
{
    hcq_status s = base_handle_check(sig, BASE_H_SIGNAL, "hcq_signal_wait", "signal");
    if (s) return s;
    return mem_wait(sig->dev, sig->cpu, sig->va, target, timeout_ns, "signal");
}

/* Spin for HCQ_SPIN_US (most waits end within microseconds, and an engine
 * that notifies progress makes no syscall while nobody sleeps), then sleep
 * on the device's progress notifications, or in short steps for devices
 * whose engines cannot notify. The fault flag is checked on every round,
 * so a faulted device ends the wait at once instead of at the timeout. */
hcq_status mem_wait(hcq_device *dev, const uint64_t *cpu, uint64_t va, uint64_t target, uint64_t timeout_ns,
                    const char *what)
{
    if (!timeout_ns) timeout_ns = base_env_get()->timeout_ns;
    base_spin sp;
    base_spin_begin(&sp);
    uint64_t start = 0;
    for (unsigned sleeps = 0;;) {
        uint64_t seq = drv_waiter_seq(dev);
        /* the fault first: a hung or faulted device stays so (sticky), even
         * when the engine moves again and the value arrives after all */
        if (atomic_load(&dev->faulted)) return drv_fault_status(dev);
        if (load_value(cpu) >= target) return HCQ_OK;
        if (!start && base_spin_step(&sp)) continue;
        uint64_t now = hcq_now_ns();
        if (!start) start = sp.start ? sp.start : now;
        if (dev->be->poll && sleeps++ % 8 == 0) dev->be->poll(dev);
        uint64_t spent = now - start;
        if (spent >= timeout_ns) {
            uint64_t v = load_value(cpu); /* a last look: it may have just arrived */
            if (v >= target) return HCQ_OK;
            char state[768] = "";
            if (dev->be->describe) dev->be->describe(dev, state, sizeof state);
            uint64_t tl = dev->mem && dev->mem->timeline ? load_value(dev->mem->timeline->cpu) : 0;
            uint64_t last = dev->mem ? mem_tl_next(dev) - 1 : 0;
            return base_err(HCQ_ETIMEDOUT,
                            "%s: timed out after %llu ms waiting for %s 0x%llx to reach %llu: its value is %llu "
                            "(timeline completed %llu of %llu submitted). %s",
                            dev->props.id, (unsigned long long)(spent / 1000000), what, (unsigned long long)va,
                            (unsigned long long)target, (unsigned long long)v, (unsigned long long)tl,
                            (unsigned long long)last, state);
        }
        drv_waiter_sleep(dev, seq, BASE_MIN(drv_waiter_step_ns(dev), timeout_ns - spent));
    }
}

hcq_status mem_tl_wait(hcq_device *dev, uint64_t value, uint64_t timeout_ns)
{
    hcq_signal *t = dev->mem->timeline;
    hcq_status s = mem_wait(dev, t->cpu, t->va, value, timeout_ns, "the timeline signal");
    if (s == HCQ_ETIMEDOUT) {
        /* The timeline did not move for a whole timeout: the device is hung.
         * Sticky, like a fault, so what follows fails at once with this
         * report instead of each call waiting out its own timeout. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        drv_set_fault(dev, HCQ_ETIMEDOUT, "%s", msg);
        return drv_fault_status(dev);
    }
    return s;
}

hcq_status mem_signal_map_for(hcq_device *dev, hcq_signal *sig)
{
    hcq_device *owner = sig->dev;
    if (owner == dev) return HCQ_OK;
    if (owner->be != dev->be || !dev->be->peer_map)
        return base_err(HCQ_ENOTSUP, "%s cannot reach %s's signal memory: %s", dev->props.id, owner->props.id,
                        owner->be != dev->be ? "they are devices of different kinds"
                                             : "its backend maps no other device's memory");
    /* the page's peer bits are the owner's: changed under its alloc_lock */
    pthread_mutex_lock(&owner->mem->alloc_lock);
    hcq_status s = dev->be->peer_map(dev, owner, &sig->page->mem);
    pthread_mutex_unlock(&owner->mem->alloc_lock);
    if (!s) BASE_LOG(2, "%s's signal page at 0x%llx is mapped for %s", owner->props.id,
                     (unsigned long long)sig->page->mem.va, dev->props.id);
    return s;
}

void mem_sigpages_free(hcq_device *dev)
{
    struct mem_dev *m = dev->mem;
    mem_sigpage *pg = m->pages;
    m->pages = NULL;
    while (pg) {
        mem_sigpage *n = pg->next;
        mem_raw_free(dev, &pg->mem, false);
        free(pg);
        pg = n;
    }
}
