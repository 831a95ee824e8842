/* hcq/mem.h: device buffers and signals.
 *
 * A buffer is memory a device's engines can address (its GPU virtual address,
 * hcq_buffer_va()). Device-local buffers live in the device's own memory;
 * host buffers are pinned system memory the device reaches over the bus and
 * the CPU can map. On the CPU device both are host memory.
 *
 * A signal is a 16-byte slot in GPU-visible memory: a 64-bit value at +0 and
 * a 64-bit timestamp at +8. Queues wait for value >= v and write values and
 * timestamps; the host does the same through these calls. */
#ifndef HCQ_MEM_H
#define HCQ_MEM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hcq_mem_kind {
    HCQ_MEM_DEVICE = 0, /* device-local; the CPU may not map it */
    HCQ_MEM_HOST = 1,   /* pinned host memory, mapped for the CPU */
} hcq_mem_kind;

/* ** buffers */
/* Allocates size bytes (> 0). HCQ_ENOMEM says how much was asked and how
 * much the device has; the allocator's caches are released and the
 * allocation retried once before it fails. */
HCQ_API hcq_buffer *hcq_buffer_alloc(hcq_device *dev, uint64_t size, hcq_mem_kind kind);
/* Waits for the device's timeline to pass its last submitted value, then
 * frees. A view frees only itself. Freeing a buffer that still has views, or
 * one that is not live (freed twice, or its device closed), is HCQ_ESTATE.
 * A recorded queue or graph that uses the buffer (or a view of it) keeps
 * its memory until the recording goes; on a device that faulted or hung
 * the memory is kept until the device is closed (queue.h, Lifetimes). NULL
 * is fine. */
HCQ_API hcq_status hcq_buffer_free(hcq_buffer *buf);
/* A sub-buffer [offset, offset + size) that shares the parent's memory. */
HCQ_API hcq_buffer *hcq_buffer_view(hcq_buffer *parent, uint64_t offset, uint64_t size);

HCQ_API uint64_t hcq_buffer_va(const hcq_buffer *buf);
HCQ_API uint64_t hcq_buffer_size(const hcq_buffer *buf);
HCQ_API hcq_device *hcq_buffer_device(const hcq_buffer *buf);
HCQ_API hcq_mem_kind hcq_buffer_kind(const hcq_buffer *buf);
/* The CPU mapping of a host buffer (or any buffer on the CPU device); NULL
 * if the buffer is not CPU-visible. */
HCQ_API void *hcq_buffer_cpu_ptr(const hcq_buffer *buf);

/* ** signals */
/* A signal in the device's signal pool, with value = initial. */
HCQ_API hcq_signal *hcq_signal_create(hcq_device *dev, uint64_t initial);
/* A recorded queue that waits on or writes the signal keeps its slot until
 * the recording goes. The device's timeline is not destroyed this way
 * (HCQ_ESTATE). NULL is fine. */
HCQ_API hcq_status hcq_signal_destroy(hcq_signal *sig);
HCQ_API uint64_t hcq_signal_va(const hcq_signal *sig);  /* GPU address of the value */
HCQ_API hcq_device *hcq_signal_device(const hcq_signal *sig);
HCQ_API uint64_t hcq_signal_value(const hcq_signal *sig);
/* Writes the value from the CPU; engines waiting on it see it. */
HCQ_API void hcq_signal_set(hcq_signal *sig, uint64_t value);
/* The timestamp slot converted to nanoseconds of the device clock. */
HCQ_API uint64_t hcq_signal_timestamp_ns(const hcq_signal *sig);
/* Waits until value >= target. HCQ_ETIMEDOUT after timeout_ns (0 means the
 * default, HCQ_TIMEOUT_MS or 30 s) names the value seen; HCQ_EFAULT if the
 * device faulted meanwhile. */
HCQ_API hcq_status hcq_signal_wait(const hcq_signal *sig, uint64_t target, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif
#endif
