#include "base/base.h"
#include "mem/mem.h"

#include <stdlib.h>
#include <string.h>

static void link_buffer(struct mem_dev *m, hcq_buffer *b)
{
    pthread_mutex_lock(&m->alloc_lock);
    b->next = m->buffers;
    if (m->buffers) m->buffers->prev = b;
    m->buffers = b;
    pthread_mutex_unlock(&m->alloc_lock);
}

static void unlink_buffer(struct mem_dev *m, hcq_buffer *b)
{
    pthread_mutex_lock(&m->alloc_lock);
    if (b->prev) b->prev->next = b->next;
    else m->buffers = b->next;
    if (b->next) b->next->prev = b->prev;
    pthread_mutex_unlock(&m->alloc_lock);
}

hcq_buffer *hcq_buffer_alloc(hcq_device *dev, uint64_t size, hcq_mem_kind kind)
{
    if (base_handle_check(dev, BASE_H_DEVICE, "hcq_buffer_alloc", "device")) return NULL;
    if (size == 0) {
        base_err(HCQ_EINVAL, "hcq_buffer_alloc: size 0 on %s; a buffer must hold at least one byte", dev->props.id);
        return NULL;
    }
    if (kind != HCQ_MEM_DEVICE && kind != HCQ_MEM_HOST) {
        base_err(HCQ_EINVAL, "hcq_buffer_alloc: unknown memory kind %d (use HCQ_MEM_DEVICE or HCQ_MEM_HOST)", (int)kind);
        return NULL;
    }
    if (drv_fault_status(dev)) return NULL;
    if (size > dev->props.memory_bytes || size > (1ull << 56)) {
        char a[32], b[32];
        base_err(HCQ_ENOMEM, "hcq_buffer_alloc: %s asked on %s, which has %s of memory",
                 base_fmt_bytes(a, sizeof a, size), dev->props.id, base_fmt_bytes(b, sizeof b, dev->props.memory_bytes));
        return NULL;
    }
    hcq_buffer *buf = base_calloc(1, sizeof *buf);
    if (!buf) return NULL;
    uint32_t flags = kind == HCQ_MEM_HOST ? DRV_MEM_HOST | DRV_MEM_CPU : DRV_MEM_DEVICE;
    hcq_status s = mem_raw_alloc(dev, size, flags, &buf->mem);
    if (s) {
        char a[32], b[32], c[32];
        pthread_mutex_lock(&dev->mem->alloc_lock);
        uint64_t live = dev->mem->live_bytes;
        pthread_mutex_unlock(&dev->mem->alloc_lock);
        base_err(s, "hcq_buffer_alloc: %s of %s memory on %s: %s (%s in use by buffers; device has %s)",
                 base_fmt_bytes(a, sizeof a, size), kind == HCQ_MEM_HOST ? "host" : "device", dev->props.id,
                 hcq_error_message(), base_fmt_bytes(b, sizeof b, live),
                 base_fmt_bytes(c, sizeof c, dev->props.memory_bytes));
        free(buf);
        return NULL;
    }
    buf->dev = dev;
    buf->size = size;
    buf->va = buf->mem.va;
    buf->cpu = buf->mem.cpu;
    buf->kind = kind;
    pthread_mutex_lock(&dev->mem->alloc_lock);
    dev->mem->live_bytes += buf->mem.size;
    pthread_mutex_unlock(&dev->mem->alloc_lock);
    link_buffer(dev->mem, buf);
    base_handle_add(buf, BASE_H_BUFFER);
    return buf;
}

hcq_buffer *hcq_buffer_view(hcq_buffer *parent, uint64_t offset, uint64_t size)
{
    if (base_handle_check(parent, BASE_H_BUFFER, "hcq_buffer_view", "the parent buffer")) return NULL;
    if (size == 0 || offset > parent->size || size > parent->size - offset) {
        base_err(HCQ_EINVAL, "hcq_buffer_view: [%llu, +%llu) does not fit in a %llu-byte buffer (and size must be > 0)",
                 (unsigned long long)offset, (unsigned long long)size, (unsigned long long)parent->size);
        return NULL;
    }
    hcq_buffer *v = base_calloc(1, sizeof *v);
    if (!v) return NULL;
    hcq_buffer *root = parent->parent ? parent->parent : parent;
    struct mem_dev *m = parent->dev->mem;
    v->dev = parent->dev;
    v->parent = root;
    v->offset = parent->offset + offset;
    v->size = size;
    v->va = parent->va + offset;
    v->cpu = parent->cpu ? (uint8_t *)parent->cpu + offset : NULL;
    v->kind = parent->kind;
    /* threads may make views of one buffer at once */
    pthread_mutex_lock(&m->alloc_lock);
    root->nviews++;
    root->holds++; /* the view's memory is the root's */
    pthread_mutex_unlock(&m->alloc_lock);
    link_buffer(m, v);
    base_handle_add(v, BASE_H_BUFFER);
    return v;
}

/* Frees b's record and (roots) its memory; alloc_lock not held. A view
 * lets go of its root, which goes too if it was freed and this was its
 * last hold. */
static void buffer_delete(hcq_buffer *b)
{
    struct mem_dev *m = b->dev->mem;
    hcq_buffer *root = b->parent;
    unlink_buffer(m, b);
    if (!root) {
        pthread_mutex_lock(&m->alloc_lock);
        m->live_bytes -= b->mem.size;
        pthread_mutex_unlock(&m->alloc_lock);
        mem_raw_free(b->dev, &b->mem, true);
    }
    free(b);
    if (root) mem_buffer_release(root);
}

void mem_buffer_hold(hcq_buffer *b)
{
    struct mem_dev *m = b->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    b->holds++;
    pthread_mutex_unlock(&m->alloc_lock);
}

void mem_buffer_release(hcq_buffer *b)
{
    struct mem_dev *m = b->dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    bool last = --b->holds == 0 && b->freed;
    pthread_mutex_unlock(&m->alloc_lock);
    if (last) buffer_delete(b);
}

hcq_status hcq_buffer_free(hcq_buffer *b)
{
    if (!b) return HCQ_OK;
    if (!base_handle_live(b, BASE_H_BUFFER))
        return base_err(HCQ_ESTATE, "hcq_buffer_free: %p is not a live buffer (freed twice, or its device was closed?)",
                        (void *)b);
    hcq_device *dev = b->dev;
    struct mem_dev *m = dev->mem;
    pthread_mutex_lock(&m->alloc_lock);
    uint32_t nviews = b->nviews;
    pthread_mutex_unlock(&m->alloc_lock);
    if (nviews)
        return base_err(HCQ_ESTATE, "hcq_buffer_free: the buffer still has %u views; free them first", nviews);
    /* the engines may still use it: wait for everything submitted. On a
     * device that faulted or hung, work may never complete (or still run):
     * the handle dies now and the memory stays with the device until it is
     * closed, which stops the engines first. */
    pthread_mutex_lock(&dev->lock);
    uint64_t last = mem_tl_next(dev) - 1;
    pthread_mutex_unlock(&dev->lock);
    bool idle = mem_tl_wait(dev, last, 0) == HCQ_OK;
    if (!base_handle_remove(b, BASE_H_BUFFER))
        return base_err(HCQ_ESTATE, "hcq_buffer_free: %p was freed meanwhile (by another thread?)", (void *)b);
    if (!idle) BASE_LOG(1, "%s: a buffer freed while the device is not idle (%s) stays until it is closed",
                        dev->props.id, hcq_error_message());
    pthread_mutex_lock(&m->alloc_lock);
    if (b->parent) b->parent->nviews--;
    b->freed = true;
    if (!idle) b->holds++; /* the device's, let go only by close */
    bool now = b->holds == 0;
    pthread_mutex_unlock(&m->alloc_lock);
    if (now) buffer_delete(b);
    return HCQ_OK;
}

/* Teardown (device close): views first, then roots, holds or not. */
void mem_buffers_free_all(hcq_device *dev, unsigned *n)
{
    struct mem_dev *m = dev->mem;
    for (int pass = 0; pass < 2; pass++) {
        for (hcq_buffer *b = m->buffers, *next; b; b = next) {
            next = b->next;
            if (pass == 0 && !b->parent) continue;
            if (base_handle_remove(b, BASE_H_BUFFER)) (*n)++;
            unlink_buffer(m, b);
            if (!b->parent) mem_raw_free(dev, &b->mem, false);
            free(b);
        }
    }
    m->live_bytes = 0;
}

#define BUFFER_GETTER(type, name, fail, expr)                                                                   \
    type hcq_buffer_##name(const hcq_buffer *b)                                                                 \
    {                                                                                                          \
        if (base_handle_check(b, BASE_H_BUFFER, "hcq_buffer_" #name, "buffer")) return fail;                    \
        return expr;                                                                                           \
    }
BUFFER_GETTER(uint64_t, va, 0, b->va)
BUFFER_GETTER(uint64_t, size, 0, b->size)
BUFFER_GETTER(hcq_device *, device, NULL, b->dev)
BUFFER_GETTER(hcq_mem_kind, kind, HCQ_MEM_DEVICE, b->kind)
BUFFER_GETTER(void *, cpu_ptr, NULL, b->cpu)
