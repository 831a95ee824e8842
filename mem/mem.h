/* mem/: buffers, the allocator cache, signals and their pool, the device
 * timeline, the kernarg ring and the staging slots. Internal interface for
 * queue/; the public one is include/hcq/mem.h.
 *
 * Transient memory (kernarg slices, staging slots) is tagged with the
 * timeline value whose signal retires it, and is reused only after the
 * timeline passes that value: never by guessing that a ring is big enough. */
#ifndef HCQ_MEM_MEM_H
#define HCQ_MEM_MEM_H

#include "drivers/backend.h"

#include <hcq/mem.h>

struct hcq_buffer {
    hcq_device *dev;
    drv_mem mem;        /* the allocation (root buffers) */
    hcq_buffer *parent; /* views: the root they share */
    uint64_t offset;    /* in the root */
    uint64_t size, va;
    void *cpu;
    hcq_mem_kind kind;
    /* under the device's alloc_lock: */
    uint32_t nviews; /* views of this buffer the user has not freed */
    uint32_t holds;  /* recordings (queues, graphs) and views that use it */
    bool freed;      /* the user freed it: deleted when the last hold goes */
    hcq_buffer *next, *prev;
};

typedef struct mem_sigpage mem_sigpage;
struct hcq_signal {
    hcq_device *dev;
    mem_sigpage *page;
    uint32_t slot;
    uint64_t va;
    uint64_t *cpu; /* value at [0], timestamp at [1] */
    uint32_t holds; /* recordings that wait on or write it (alloc_lock) */
    bool freed;     /* the user destroyed it: deleted with the last hold */
    hcq_signal *next, *prev;
};

/* a ring of memory handed out in timeline-tagged slices */
typedef struct mem_ring {
    drv_mem mem;
    uint64_t size; /* bytes */
    uint64_t head; /* byte counter; position = head % size */
    struct mem_ring_entry {
        uint64_t start, tag;
    } *fifo;
    uint32_t fcap, fhead, fcount;
} mem_ring;

typedef struct mem_cache_entry {
    drv_mem mem;
    struct mem_cache_entry *next;
} mem_cache_entry;

struct mem_dev {
    hcq_signal *timeline;
    /* the value the next submission signals: written under dev->lock, read
     * by anyone (hcq_device_timeline_value) */
    _Atomic uint64_t tl_next;
    mem_sigpage *pages;
    hcq_buffer *buffers;
    hcq_signal *signals;
    mem_ring kernargs;
    drv_mem staging;
    uint32_t stage_slots;
    uint64_t stage_chunk;
    uint64_t *stage_tag;
    uint32_t stage_next;
    mem_cache_entry *cache; /* freed device allocations, reused by size */
    uint64_t cache_bytes;
    uint64_t fixed_bytes;
    uint64_t live_bytes; /* buffers allocated now (alloc_lock) */
    /* the buffer and signal lists, their counts and holds, the signal pages
     * and the allocation cache */
    pthread_mutex_t alloc_lock;
};

hcq_status mem_dev_init(hcq_device *dev);
/* Frees leftover buffers and signals (reported at HCQ_DEBUG=1), rings. */
void mem_dev_fini(hcq_device *dev);

/* ** raw device memory with the cache: retries once after emptying it */
hcq_status mem_raw_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out);
void mem_raw_free(hcq_device *dev, drv_mem *m, bool cacheable);
void mem_cache_flush(hcq_device *dev);

/* ** the timeline (callers hold dev->lock to take values) */
static inline uint64_t mem_tl_va(hcq_device *dev) { return dev->mem->timeline->va; }
static inline uint64_t mem_tl_next(const hcq_device *dev)
{
    return atomic_load_explicit(&dev->mem->tl_next, memory_order_relaxed);
}
static inline void mem_tl_advance(hcq_device *dev)
{
    atomic_fetch_add_explicit(&dev->mem->tl_next, 1, memory_order_relaxed);
}
/* Waits until the timeline reaches value (HCQ_ETIMEDOUT / HCQ_EFAULT). */
hcq_status mem_tl_wait(hcq_device *dev, uint64_t value, uint64_t timeout_ns);

/* Waits until the 64-bit value at cpu >= target; `what` names it in errors.
 * dev is the device whose engines write it (faults, progress, describe). */
hcq_status mem_wait(hcq_device *dev, const uint64_t *cpu, uint64_t va, uint64_t target, uint64_t timeout_ns,
                    const char *what);

/* ** kernarg ring: size bytes retired by timeline value tag (dev->lock held) */
hcq_status mem_kernarg_alloc(hcq_device *dev, uint32_t size, uint32_t align, uint64_t tag, void **cpu,
                             uint64_t *va);

/* ** staging: the next slot, free once the timeline passes its last tag;
 * then tagged with tag (dev->lock held) */
typedef struct mem_stage {
    void *cpu;
    uint64_t va;
    uint64_t size;
} mem_stage;
hcq_status mem_staging_acquire(hcq_device *dev, uint64_t tag, mem_stage *out);

/* ** signals without the public checks */
hcq_signal *mem_signal_new(hcq_device *dev, uint64_t initial);
void mem_signal_delete(hcq_signal *s);
void mem_signal_set(hcq_signal *s, uint64_t value);
uint64_t mem_signal_timestamp_ns(const hcq_signal *s);
void mem_sigpages_free(hcq_device *dev);
/* Makes sig, a signal of another device, reachable at its address by dev's
 * engines: its page is mapped for dev (the backend's peer_map), once, and
 * stays so until the owner frees the page. Signal pages are host memory,
 * which every GPU of the process reaches whatever the link between the
 * GPUs; HCQ_ENOTSUP saying why where the two cannot share memory at all
 * (devices of different kinds, a backend without peer mappings). */
hcq_status mem_signal_map_for(hcq_device *dev, hcq_signal *sig);

/* ** holds: what a recorded queue or graph uses stays alive until the
 * recording lets it go, even if the user frees it meanwhile (the handle dies
 * at once; the memory, or the signal's slot, when the last hold goes). */
void mem_buffer_hold(hcq_buffer *b);
void mem_buffer_release(hcq_buffer *b);
/* device close: every buffer, held or not; *n counts those still live */
void mem_buffers_free_all(hcq_device *dev, unsigned *n);
void mem_signal_hold(hcq_signal *s);
void mem_signal_release(hcq_signal *s);

#endif
