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
    if (!base_handle_live(dev, BASE_H_DEVICE)) {
        base_err(HCQ_EINVAL, "hcq_buffer_alloc: %p is not an open device", (void *)dev);
        return NULL;
    }
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
        base_err(s, "hcq_buffer_alloc: %s of %s memory on %s: %s (%s in use by buffers; device has %s)",
                 base_fmt_bytes(a, sizeof a, size), kind == HCQ_MEM_HOST ? "host" : "device", dev->props.id,
                 hcq_error_message(), base_fmt_bytes(b, sizeof b, dev->mem->live_bytes),
                 base_fmt_bytes(c, sizeof c, dev->props.memory_bytes));
        free(buf);
        return NULL;
    }
    buf->dev = dev;
    buf->size = size;
    buf->va = buf->mem.va;
    buf->cpu = buf->mem.cpu;
    buf->kind = kind;
    dev->mem->live_bytes += buf->mem.size;
    link_buffer(dev->mem, buf);
    base_handle_add(buf, BASE_H_BUFFER);
    return buf;
}

hcq_buffer *hcq_buffer_view(hcq_buffer *parent, uint64_t offset, uint64_t size)
{
    if (!base_handle_live(parent, BASE_H_BUFFER)) {
        base_err(HCQ_EINVAL, "hcq_buffer_view: %p is not a live buffer", (void *)parent);
        return NULL;
    }
    if (size == 0 || offset > parent->size || size > parent->size - offset) {
        base_err(HCQ_EINVAL, "hcq_buffer_view: [%llu, +%llu) does not fit in a %llu-byte buffer (and size must be > 0)",
                 (unsigned long long)offset, (unsigned long long)size, (unsigned long long)parent->size);
        return NULL;
    }
    hcq_buffer *v = base_calloc(1, sizeof *v);
    if (!v) return NULL;
    hcq_buffer *root = parent->parent ? parent->parent : parent;
    v->dev = parent->dev;
    v->parent = root;
    v->offset = parent->offset + offset;
    v->size = size;
    v->va = parent->va + offset;
    v->cpu = parent->cpu ? (uint8_t *)parent->cpu + offset : NULL;
    v->kind = parent->kind;
    root->nviews++;
    link_buffer(parent->dev->mem, v);
    base_handle_add(v, BASE_H_BUFFER);
    return v;
}

void mem_buffer_delete(hcq_buffer *b)
{
    struct mem_dev *m = b->dev->mem;
    unlink_buffer(m, b);
    if (b->parent) {
        b->parent->nviews--;
    } else {
        m->live_bytes -= b->mem.size;
        mem_raw_free(b->dev, &b->mem, true);
    }
    free(b);
}

hcq_status hcq_buffer_free(hcq_buffer *b)
{
    if (!b) return HCQ_OK;
    if (!base_handle_live(b, BASE_H_BUFFER))
        return base_err(HCQ_ESTATE, "hcq_buffer_free: %p is not a live buffer (freed twice?)", (void *)b);
    if (b->nviews)
        return base_err(HCQ_ESTATE, "hcq_buffer_free: the buffer still has %u views; free them first", b->nviews);
    hcq_device *dev = b->dev;
    if (!b->parent) {
        /* the engines may still use it: wait for everything submitted. A
         * faulted device never completes, so free regardless then. */
        pthread_mutex_lock(&dev->lock);
        uint64_t last = mem_tl_next(dev) - 1;
        pthread_mutex_unlock(&dev->lock);
        hcq_status s = mem_tl_wait(dev, last, 0);
        if (s && s != HCQ_EFAULT) return base_err_prefix(s, "hcq_buffer_free");
    }
    base_handle_remove(b, BASE_H_BUFFER);
    mem_buffer_delete(b);
    return HCQ_OK;
}

uint64_t hcq_buffer_va(const hcq_buffer *b) { return b->va; }
uint64_t hcq_buffer_size(const hcq_buffer *b) { return b->size; }
hcq_device *hcq_buffer_device(const hcq_buffer *b) { return b->dev; }
hcq_mem_kind hcq_buffer_kind(const hcq_buffer *b) { return b->kind; }
void *hcq_buffer_cpu_ptr(const hcq_buffer *b) { return b->cpu; }
