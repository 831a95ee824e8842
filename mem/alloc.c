#include "base/base.h"
#include "mem/mem.h"

#include <stdlib.h>

/* Device memory goes through a small cache of freed allocations, reused when
 * a request has the same rounded size and flags: allocations on real drivers
 * cost ioctls and page-table updates. Out of memory empties the cache and
 * tries once more before failing.
 *
 * Under HCQ_MOCK_CHECK=memcheck every allocation also gets MEMCHECK_PAD
 * bytes after its rounded size (as compute-sanitizer's --padding), so that
 * an access a little past the end lands in memory the checker knows is no
 * allocation's rather than in the next one; and the checker's registry
 * (base/memcheck.c) learns each allocation's requested size as it is
 * handed out, that it was freed while the cache keeps it, and that it went
 * back to the driver. */

#define CACHE_MAX_BYTES (256ull << 20)
#define CACHE_MAX_ENTRY (64ull << 20)

#define MEMCHECK_PAD 4096ull

static uint64_t round_size(uint64_t size)
{
    return base_align_up(size ? size : 1, 4096) + (base_env_get()->mock_memcheck ? MEMCHECK_PAD : 0);
}

static hcq_status handed_out(const drv_mem *m, uint64_t size)
{
    if (base_env_get()->mock_memcheck) base_memcheck_note(m->va, m->size, size ? size : 1);
    else base_memcheck_gone(m->va); /* memcheck was turned off meanwhile (tests): unchecked now */
    return HCQ_OK;
}

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
                return handed_out(out, size);
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
    return s ? s : handed_out(out, size);
}

void mem_raw_free(hcq_device *dev, drv_mem *mem, bool cacheable)
{
    struct mem_dev *m = dev->mem;
    base_memcheck_freed(mem->va);
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
    base_memcheck_gone(mem->va);
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
        base_memcheck_gone(e->mem.va);
        dev->be->mem_free(dev, &e->mem);
        free(e);
        e = n;
    }
}
