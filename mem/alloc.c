#include "base/base.h"
#include "mem/mem.h"

#include <stdlib.h>

/* Device memory goes through a small cache of freed allocations, reused when
 * a request has the same rounded size and flags: allocations on real drivers
 * cost ioctls and page-table updates. Out of memory empties the cache and
 * tries once more before failing. */

#define CACHE_MAX_BYTES (256ull << 20)
#define CACHE_MAX_ENTRY (64ull << 20)

static uint64_t round_size(uint64_t size) { return base_align_up(size ? size : 1, 4096); }

hcq_status mem_raw_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out)
{
    struct mem_dev *m = dev->mem;
    uint64_t want = round_size(size);
    if (m) {
        pthread_mutex_lock(&m->alloc_lock);
        for (mem_cache_entry **pp = &m->cache; *pp; pp = &(*pp)->next) {
            mem_cache_entry *e = *pp;
            if (e->mem.size == want && e->mem.flags == flags) {
                *pp = e->next;
                m->cache_bytes -= e->mem.size;
                pthread_mutex_unlock(&m->alloc_lock);
                *out = e->mem;
                free(e);
                return HCQ_OK;
            }
        }
        pthread_mutex_unlock(&m->alloc_lock);
    }
    hcq_status s = dev->be->mem_alloc(dev, want, flags, out);
    if (s == HCQ_ENOMEM && m && m->cache) {
        BASE_LOG(1, "%s: out of memory for %llu bytes; emptying the allocation cache and retrying", dev->props.id,
                 (unsigned long long)want);
        mem_cache_flush(dev);
        s = dev->be->mem_alloc(dev, want, flags, out);
    }
    return s;
}

void mem_raw_free(hcq_device *dev, drv_mem *mem, bool cacheable)
{
    struct mem_dev *m = dev->mem;
    if (cacheable && m && base_env_get()->alloc_cache && mem->size <= CACHE_MAX_ENTRY) {
        pthread_mutex_lock(&m->alloc_lock);
        if (m->cache_bytes + mem->size <= CACHE_MAX_BYTES) {
            mem_cache_entry *e = malloc(sizeof *e);
            if (e) {
                e->mem = *mem;
                e->next = m->cache;
                m->cache = e;
                m->cache_bytes += mem->size;
                pthread_mutex_unlock(&m->alloc_lock);
                return;
            }
        }
        pthread_mutex_unlock(&m->alloc_lock);
    }
    dev->be->mem_free(dev, mem);
}

void mem_cache_flush(hcq_device *dev)
{
    struct mem_dev *m = dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    mem_cache_entry *e = m->cache;
    m->cache = NULL;
    m->cache_bytes = 0;
    pthread_mutex_unlock(&m->alloc_lock);
    while (e) {
        mem_cache_entry *n = e->next;
        dev->be->mem_free(dev, &e->mem);
        free(e);
        e = n;
    }
}
