/* The emulated amdkfd's ioctls on /dev/kfd, with the kernel's checks
 * (torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_chardev.c, kfd_queue.c):
 * the argument copied at the caller's size and zero-extended, the VM
 * binding, memory flags and page granularity, address overlap, queue
 * buffers of exactly the sizes KFD validates, events and their waits. */
#include "drivers/mock/mock_amd.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ** ioctl helpers */
mock_amd_gpu *mock_amd_gpu_by_id(uint32_t id)
{
    for (uint32_t i = 0; i < mock_amd_P.ngpus; i++)
        if (mock_amd_P.gpus[i]->gpu_id == id) return mock_amd_P.gpus[i];
    return NULL;
}

static mock_amd_bo *bo_by_handle(uint64_t h)
{
    for (size_t i = 0; i < mock_amd_P.nbos; i++)
        if (mock_amd_P.bos[i].handle == h) return &mock_amd_P.bos[i];
    return NULL;
}

static int refuse(int err, const char *fmt, ...) HCQ_PRINTF(2, 3);
static int refuse(int err, const char *fmt, ...)
{
    if (hcq_debug_level() >= 1) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        base_log(1, "mock amdkfd: %s -> %s", msg, strerror(err));
    }
    return -err;
}

/* kfd_queue_buffer_get: the address must start a buffer mapped on the GPU
 * whose size is the expected one (when that is a page or more) */
static int queue_buffer(mock_amd_gpu *g, uint64_t addr, uint64_t expected, const char *what)
{
    uint64_t page = addr & ~4095ull;
    for (size_t i = 0; i < mock_amd_P.nbos; i++) {
        mock_amd_bo *b = &mock_amd_P.bos[i];
        if (page < b->va || page >= b->va + b->size) continue;
        if (!(b->mapped & (1u << g->g->index)))
            return refuse(EINVAL, "CREATE_QUEUE: the %s at 0x%llx is not mapped on gpu %u", what,
                          (unsigned long long)addr, g->gpu_id);
        if (b->va != page || (expected >= 4096 && b->size != base_align_up(expected, 4096)))
            return refuse(EINVAL, "CREATE_QUEUE: the %s at 0x%llx must start a buffer of %llu bytes; its buffer is "
                          "[0x%llx, +%llu)", what, (unsigned long long)addr, (unsigned long long)expected,
                          (unsigned long long)b->va, (unsigned long long)b->size);
        return 0;
    }
    return refuse(EINVAL, "CREATE_QUEUE: the %s at 0x%llx is in no buffer of this process", what,
                  (unsigned long long)addr);
}

static int create_queue(kfd_create_queue_args *a)
{
    mock_amd_gpu *g = mock_amd_gpu_by_id(a->gpu_id);
    if (!g || !g->acquired_file) return refuse(EINVAL, "CREATE_QUEUE: gpu_id %u unknown or its VM not acquired", a->gpu_id);
    if (a->queue_type > KFD_QUEUE_COMPUTE_AQL)
        return refuse(EINVAL, "CREATE_QUEUE: queue type %u (the mock runs PM4, SDMA and AQL)", a->queue_type);
    if ((a->queue_percentage & 0xff) > KFD_MAX_QUEUE_PERCENTAGE || a->queue_priority > KFD_MAX_QUEUE_PRIORITY)
        return refuse(EINVAL, "CREATE_QUEUE: percentage %u / priority %u out of range", a->queue_percentage & 0xff,
                      a->queue_priority);
    if (a->ring_size && (a->ring_size & (a->ring_size - 1)))
        return refuse(EINVAL, "CREATE_QUEUE: ring size %u is not a power of two", a->ring_size);
    if (a->ring_size < 1024) a->ring_size = 1024; /* KFD_MIN_QUEUE_RING_SIZE: KFD clamps */
    int rc;
    if ((rc = queue_buffer(g, a->write_pointer_address, 4096, "write pointer")) ||
        (rc = queue_buffer(g, a->read_pointer_address, 4096, "read pointer")) ||
        (rc = queue_buffer(g, a->ring_base_address, a->ring_size, "ring")))
        return rc;
    bool compute = a->queue_type != KFD_QUEUE_SDMA;
    if (compute) {
        if (!a->eop_buffer_address || a->eop_buffer_size != g->eop_size)
            return refuse(EINVAL, "CREATE_QUEUE: EOP buffer of %llu bytes; the node's is %u",
                          (unsigned long long)a->eop_buffer_size, g->eop_size);
        if ((rc = queue_buffer(g, a->eop_buffer_address, a->eop_buffer_size, "EOP buffer"))) return rc;
        if (a->ctl_stack_size != g->ctl_stack_size)
            return refuse(EINVAL, "CREATE_QUEUE: ctl stack size 0x%x, the node's is 0x%x", a->ctl_stack_size,
                          g->ctl_stack_size);
        if (a->ctx_save_restore_size < g->cwsr_size)
            return refuse(EINVAL, "CREATE_QUEUE: context save size 0x%x, the node needs 0x%x",
                          a->ctx_save_restore_size, g->cwsr_size);
        uint64_t total = base_align_up(((uint64_t)a->ctx_save_restore_size + g->debug_memory_size) * g->model->num_xcc,
                                       4096);
        if ((rc = queue_buffer(g, a->ctx_save_restore_address, total, "context save area"))) return rc;
    }
    uint32_t pm4_xcc = (a->queue_percentage >> 8) & 0xff; /* kfd_chardev.c set_queue_properties_from_user */
    if (pm4_xcc >= g->model->num_xcc)
        return refuse(EINVAL, "CREATE_QUEUE: pm4_target_xcc %u (queue_percentage bits 15:8) on a GPU of %u XCCs",
                      pm4_xcc, g->model->num_xcc);
    /* the lowest free doorbell slot, as KFD's bitmap gives it; the slot
     * still holds what its previous queue last wrote there, and a new
     * queue starts at 0, so it is cleared first */
    uint32_t slot = 0, nslots = KFD_DOORBELL_SLICE_BYTES / 8;
    while (slot < nslots && (g->doorbell_used[slot / 64] >> (slot % 64) & 1)) slot++;
    if (slot == nslots) return refuse(ENOMEM, "CREATE_QUEUE: all %u doorbells of the process are in use", nslots);
    mock_amd_queue *q = calloc(1, sizeof *q);
    if (!q) return -ENOMEM;
    g->doorbell_used[slot / 64] |= 1ull << (slot % 64);
    atomic_store_explicit((_Atomic uint64_t *)(g->doorbell_cpu + 8ull * slot), 0, memory_order_release);
    q->id = ++mock_amd_P.next_queue;
    q->type = a->queue_type;
    q->gpu = g;
    q->ring_va = a->ring_base_address;
    q->ring_size = a->ring_size;
    q->wptr_va = a->write_pointer_address;
    q->rptr_va = a->read_pointer_address;
    if (compute) {
        q->eop_va = a->eop_buffer_address;
        q->eop_size = a->eop_buffer_size;
        q->cwsr_va = a->ctx_save_restore_address;
        q->cwsr_size = base_align_up(((uint64_t)a->ctx_save_restore_size + g->debug_memory_size) * g->model->num_xcc,
                                     4096);
    }
    q->doorbell = slot;
    q->pm4_target_xcc = pm4_xcc;
    pthread_mutex_init(&q->xcc_lock, NULL);
    snprintf(q->name, sizeof q->name, "amd%u.%s", g->index, compute ? "compute" : "sdma");
    hcq_status s = compute ? mock_amd_cp_start(q) : mock_amd_sdma_start(q);
    if (s) {
        g->doorbell_used[slot / 64] &= ~(1ull << (slot % 64));
        mock_amd_queue_free(q);
        return -ENOMEM;
    }
    q->next = mock_amd_P.queues;
    mock_amd_P.queues = q;
    mock_amd_queue_bell(q);
    a->queue_id = q->id;
    a->doorbell_offset = KFD_MMAP_TYPE_DOORBELL | (uint64_t)g->gpu_id << KFD_MMAP_GPU_ID_SHIFT | 8ull * q->doorbell;
    return 0;
}

/* As pqm_destroy_queue (kfd_process_queue_manager.c): an id the process
 * has no queue by is EINVAL; destroy_queue_cpsch (kfd_device_queue_manager.c)
 * refuses a debugged process's queue with EBUSY and keeps it running. */
static int destroy_queue(kfd_destroy_queue_args *a)
{
    for (mock_amd_queue **p = &mock_amd_P.queues; *p; p = &(*p)->next)
        if ((*p)->id == a->queue_id) {
            mock_amd_queue *q = *p;
            if (mock_amd_P.debugged)
                return refuse(EBUSY, "DESTROY_QUEUE %u: the process is being debugged", a->queue_id);
            *p = q->next;
            q->gpu->doorbell_used[q->doorbell / 64] &= ~(1ull << (q->doorbell % 64));
            pthread_mutex_unlock(&mock_amd_P.lock); /* engines may be reporting a fault */
            mock_amd_queue_free(q);
            pthread_mutex_lock(&mock_amd_P.lock);
            return 0;
        }
    return refuse(EINVAL, "DESTROY_QUEUE: no queue %u", a->queue_id);
}

static int alloc_memory(kfd_alloc_memory_args *a)
{
    mock_amd_gpu *g = mock_amd_gpu_by_id(a->gpu_id);
    if (!g || !g->acquired_file)
        return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: gpu_id %u unknown or its VM not acquired", a->gpu_id);
    uint32_t dom = a->flags & KFD_ALLOC_DOMAINS;
    if (dom != KFD_ALLOC_VRAM && dom != KFD_ALLOC_GTT && dom != KFD_ALLOC_USERPTR)
        return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: flags 0x%08x: one of VRAM, GTT, USERPTR (the mock has no doorbell "
                      "or MMIO buffers)", a->flags);
    /* kfd_ioctl_alloc_memory_of_gpu refuses size 0 only;
     * amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu allocates PAGE_ALIGN(size) */
    if (!a->size) return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: size 0");
    uint64_t size = base_align_up(a->size, 4096);
    /* The kernel keeps an unaligned address until MAP fails on it
     * (amdgpu_vm_bo_map), and lets VRAM have no address at all; the mock
     * places every buffer at its address, so it refuses both here */
    if (!a->va_addr || a->va_addr % 4096)
        return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: address 0x%llx: the mock places buffers at page-aligned "
                      "addresses (the kernel refuses an unaligned one at MAP_MEMORY_TO_GPU)",
                      (unsigned long long)a->va_addr);
    /* a userptr at a GPU address other than its own (ROCm's runtime puts
     * registered host memory in its GPUVM aperture): the pages are adopted
     * into a buffer object mapped at both addresses */
    bool alias = dom == KFD_ALLOC_USERPTR && a->mmap_offset != a->va_addr;
    if (alias && (!a->mmap_offset || a->mmap_offset % 4096))
        return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: userptr 0x%llx at GPU address 0x%llx: the mock aliases whole "
                      "pages only", (unsigned long long)a->mmap_offset, (unsigned long long)a->va_addr);
    for (size_t i = 0; i < mock_amd_P.nbos; i++)
        if (a->va_addr < mock_amd_P.bos[i].va + mock_amd_P.bos[i].size && mock_amd_P.bos[i].va < a->va_addr + size)
            return refuse(EINVAL, "ALLOC_MEMORY_OF_GPU: [0x%llx, +%llu) overlaps the buffer at 0x%llx",
                          (unsigned long long)a->va_addr, (unsigned long long)size, (unsigned long long)mock_amd_P.bos[i].va);
    int err = 0;
    mock_bo *bo = NULL;
    if (alias && !(bo = mock_bo_adopt(a->mmap_offset, size, &err)))
        return refuse(err, "ALLOC_MEMORY_OF_GPU: adopting the userptr pages at 0x%llx", (unsigned long long)a->mmap_offset);
    if (dom != KFD_ALLOC_USERPTR && !(bo = mock_bo_new(dom == KFD_ALLOC_VRAM ? g->g : NULL, size, &err)))
        return -err;
    if (mock_amd_P.nbos == mock_amd_P.cbos) {
        size_t cap = mock_amd_P.cbos ? mock_amd_P.cbos * 2 : 64;
        mock_amd_bo *n = realloc(mock_amd_P.bos, cap * sizeof *n);
        if (!n) {
            mock_bo_unref(bo);
            return -ENOMEM;
        }
        mock_amd_P.bos = n;
        mock_amd_P.cbos = cap;
    }
    mock_amd_bo *b = &mock_amd_P.bos[mock_amd_P.nbos++];
    *b = (mock_amd_bo){.handle = (uint64_t)g->gpu_id << 32 | ++mock_amd_P.next_handle, .va = a->va_addr, .size = size,
               .flags = a->flags, .gpu = g, .bo = bo};
    b->mmap_offset = dom == KFD_ALLOC_USERPTR ? a->mmap_offset : ++mock_amd_P.next_offset << 32;
    a->handle = b->handle;
    a->mmap_offset = b->mmap_offset;
    return 0;
}

static int free_memory(kfd_free_memory_args *a)
{
    mock_amd_bo *b = bo_by_handle(a->handle);
    if (!b) return refuse(EINVAL, "FREE_MEMORY_OF_GPU: no buffer 0x%llx", (unsigned long long)a->handle);
    if (b->mapped) return refuse(EBUSY, "FREE_MEMORY_OF_GPU: buffer 0x%llx is still mapped on a GPU", (unsigned long long)b->va);
    mock_bo_unref(b->bo); /* a CPU mapping keeps its own reference */
    *b = mock_amd_P.bos[--mock_amd_P.nbos];
    return 0;
}

/* The live queue whose buffers (ring, pointers, EOP, context save area)
 * lie in [va, va + size), or NULL. KFD counts a queue's references on
 * those buffers and refuses to unmap them from the GPU while it lives
 * (amdgpu_amdkfd_gpuvm.c, queue_refcount): the queue's engines keep
 * reading them, so they stay even when destroying the queue failed. */
static const mock_amd_queue *queue_using(uint64_t va, uint64_t size)
{
    for (const mock_amd_queue *q = mock_amd_P.queues; q; q = q->next) {
        const uint64_t r[4][2] = {{q->ring_va, q->ring_size}, {q->wptr_va, 4096}, {q->rptr_va, 4096},
                                  {q->eop_va, q->eop_size}};
        for (int i = 0; i < 4; i++)
            if (r[i][1] && r[i][0] < va + size && va < r[i][0] + r[i][1]) return q;
        if (q->cwsr_size && q->cwsr_va < va + size && va < q->cwsr_va + q->cwsr_size) return q;
    }
    return NULL;
}

static int map_memory(kfd_map_memory_args *a, bool map)
{
    mock_amd_bo *b = bo_by_handle(a->handle);
    if (!b) return refuse(EINVAL, "%s: no buffer 0x%llx", map ? "MAP" : "UNMAP", (unsigned long long)a->handle);
    if (!a->n_devices || a->n_devices > mock_amd_P.ngpus || a->n_success > a->n_devices || !a->device_ids_array_ptr)
        return refuse(EINVAL, "%s: %u devices", map ? "MAP" : "UNMAP", a->n_devices);
    /* the array in the program's memory, copied in as kfd_ioctl_map_memory_to_gpu
     * does (an unmapped one is EFAULT: mock_copy_from_user) */
    uint32_t ids[32];
    if (a->n_devices > BASE_ARRAY_LEN(ids)) return refuse(EINVAL, "%s: %u devices", map ? "MAP" : "UNMAP", a->n_devices);
    if (!mock_copy_from_user(ids, (const void *)(uintptr_t)a->device_ids_array_ptr, a->n_devices * sizeof *ids))
        return -EFAULT;
    for (uint32_t i = a->n_success; i < a->n_devices; i++) {
        mock_amd_gpu *g = mock_amd_gpu_by_id(ids[i]);
        if (!g || !g->acquired_file) return refuse(EINVAL, "MAP: gpu_id %u unknown or not acquired", ids[i]);
        uint32_t bit = 1u << g->g->index;
        /* Another GPU's device memory reaches this one through a link: one
         * xGMI hive shares it, PCIe peer-to-peer DMA-maps it
         * (amdgpu_amdkfd_gpuvm.c kfd_mem_attach, amdgpu_dma_buf.c). *Model
         * limit*: without a link (HCQ_MOCK_CONFIG amd_peer=none) the mock
         * refuses; the kernel may instead move the buffer to system memory
         * (amdgpu_dma_buf_pin drops VRAM for an attachment without
         * peer2peer), which no source says KFD's pinned VRAM allows */
        if (map && !(b->mapped & bit) && (b->flags & KFD_ALLOC_VRAM) && b->gpu != g &&
            mock_cfg()->amd_peer == MOCK_PEER_NONE)
            return refuse(EINVAL, "MAP: device memory of gpu %u at 0x%llx onto gpu %u: no peer link between them "
                          "(HCQ_MOCK_CONFIG amd_peer=none)", b->gpu->gpu_id, (unsigned long long)b->va, ids[i]);
        if (map && !(b->mapped & bit)) {
            int rc = mock_va_map(b->va, b->size, b->bo, 0, bit, b->flags & KFD_ALLOC_WRITABLE);
            if (rc) return refuse(-rc == EEXIST ? EINVAL : -rc, "MAP: 0x%llx: %s", (unsigned long long)b->va,
                                  strerror(-rc));
            b->mapped |= bit;
        } else if (!map) {
            if (!(b->mapped & bit)) return refuse(EINVAL, "UNMAP: 0x%llx is not mapped on gpu %u",
                                                  (unsigned long long)b->va, ids[i]);
            const mock_amd_queue *user = queue_using(b->va, b->size);
            if (user)
                return refuse(EBUSY, "UNMAP: 0x%llx holds buffers of queue %u, which still exists",
                              (unsigned long long)b->va, user->id);
            mock_va_unmap(b->va, b->size, bit);
            b->mapped &= ~bit;
        }
        a->n_success = i + 1;
    }
    return 0;
}

static mock_amd_event *event_by_id(uint32_t id)
{
    for (size_t i = 0; i < mock_amd_P.nevents; i++)
        if (mock_amd_P.events[i].id == id) return &mock_amd_P.events[i];
    return NULL;
}

static int create_event(kfd_create_event_args *a)
{
    if (a->event_type != KFD_EVENT_SIGNAL && a->event_type != KFD_EVENT_MEMORY && a->event_type != KFD_EVENT_HW_EXCEPTION)
        return refuse(EINVAL, "CREATE_EVENT: type %u", a->event_type);
    if (mock_amd_P.nevents == mock_amd_P.cevents) {
        size_t cap = mock_amd_P.cevents ? mock_amd_P.cevents * 2 : 16;
        mock_amd_event *n = realloc(mock_amd_P.events, cap * sizeof *n);
        if (!n) return -ENOMEM;
        mock_amd_P.events = n;
        mock_amd_P.cevents = cap;
    }
    /* kfd_ioctl_create_event: a dGPU's signal page is the runtime's own
     * buffer, handed over once through event_page_offset (its handle:
     * kfd_kmap_event_page refuses a second, or a handle of no buffer) */
    if (a->event_page_offset) {
        if (mock_amd_P.event_page) return refuse(EINVAL, "CREATE_EVENT: the event page is already set");
        if (!bo_by_handle(a->event_page_offset))
            return refuse(EINVAL, "CREATE_EVENT: event_page_offset 0x%llx is no buffer's handle",
                          (unsigned long long)a->event_page_offset);
        mock_amd_P.event_page = a->event_page_offset;
    }
    mock_amd_event *e = &mock_amd_P.events[mock_amd_P.nevents++];
    memset(e, 0, sizeof *e);
    e->id = ++mock_amd_P.next_event;
    e->type = a->event_type;
    a->event_id = e->id;
    a->event_trigger_data = e->id;
    /* kfd_event_create: a signal event's slot in the page is its id, and
     * the offset to map the page at is KFD_MMAP_TYPE_EVENTS (kfd_priv.h:
     * 2 << KFD_MMAP_TYPE_SHIFT 62), which libhsakmt also takes as "the
     * event has a mailbox" (its HWData2, ROCr's event_mailbox_ptr) */
    if (a->event_type == KFD_EVENT_SIGNAL) {
        a->event_slot_index = e->id;
        a->event_page_offset = 2ull << 62;
    } else {
        a->event_slot_index = 0;
    }
    return 0;
}

static int wait_copied(kfd_wait_events_args *a, kfd_event_data *d);

static int wait_events(kfd_wait_events_args *a)
{
    if (!a->num_events || a->num_events > 4096 || !a->events_ptr) return refuse(EINVAL, "WAIT_EVENTS: %u events", a->num_events);
    /* the events array in the program's memory, copied in and back out as
     * kfd_wait_on_events does (unmapped: EFAULT) */
    kfd_event_data *user = (kfd_event_data *)(uintptr_t)a->events_ptr;
    size_t bytes = a->num_events * sizeof *user;
    kfd_event_data *d = malloc(bytes);
    if (!d) return -ENOMEM;
    if (!mock_copy_from_user(d, user, bytes)) {
        free(d);
        return -EFAULT;
    }
    int rc = wait_copied(a, d);
    if (!rc && !mock_copy_to_user(user, d, bytes)) rc = -EFAULT;
    free(d);
    return rc;
}

static int wait_copied(kfd_wait_events_args *a, kfd_event_data *d)
{
    for (uint32_t i = 0; i < a->num_events; i++)
        if (!event_by_id(d[i].event_id)) return refuse(EINVAL, "WAIT_EVENTS: no event %u", d[i].event_id);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)a->timeout * 1000000ull;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    for (;;) {
        uint32_t hit = 0;
        for (uint32_t i = 0; i < a->num_events; i++) {
            mock_amd_event *e = event_by_id(d[i].event_id);
            if (!e || !e->signaled) continue;
            hit++;
            uint32_t id = d[i].event_id;
            d[i] = e->data;
            d[i].event_id = id;
            e->signaled = false; /* auto reset */
            memset(&e->data, 0, sizeof e->data);
        }
        if (hit && (!a->wait_for_all || hit == a->num_events)) {
            a->wait_result = KFD_WAIT_COMPLETE;
            return 0;
        }
        if (!a->timeout || pthread_cond_timedwait(&mock_amd_P.events_cond, &mock_amd_P.lock, &ts) == ETIMEDOUT) {
            a->wait_result = KFD_WAIT_TIMEOUT;
            return 0;
        }
    }
}

/* ** the handlers, one per row of the kfd ioctl table (amd_abi.h), under
 * the process lock, each on the kernel-sized copy of the argument */
static int h_get_version(void *p)
{
    kfd_get_version_args *a = p;
    a->major_version = 1;
    a->minor_version = mock_cfg()->kfd_minor ? mock_cfg()->kfd_minor : 15;
    return 0;
}
static int h_create_queue(void *p) { return create_queue(p); }
static int h_destroy_queue(void *p) { return destroy_queue(p); }
static int h_create_event(void *p) { return create_event(p); }
static int h_destroy_event(void *p)
{
    kfd_destroy_event_args *a = p;
    mock_amd_event *e = event_by_id(a->event_id);
    if (!e) return refuse(EINVAL, "DESTROY_EVENT: no event %u", a->event_id);
    *e = mock_amd_P.events[--mock_amd_P.nevents];
    return 0;
}
static int h_wait_events(void *p) { return wait_events(p); }
static int h_acquire_vm(void *p)
{
    kfd_acquire_vm_args *a = p;
    mock_amd_gpu *g = mock_amd_gpu_by_id(a->gpu_id);
    mock_amd_file *r = mock_fd_priv((int)a->drm_fd, &mock_amd_driver);
    if (!g || !r || r->kind != MOCK_AMD_FILE_RENDER || r->gpu != g)
        return refuse(EINVAL, "ACQUIRE_VM: fd %d is not gpu %u's render node", (int)a->drm_fd, a->gpu_id);
    /* kfd_ioctl_acquire_vm: the same file again is fine, another EBUSY */
    if (g->acquired_file && g->acquired_file != r->id)
        return refuse(EBUSY, "ACQUIRE_VM: gpu %u is bound to another render file", a->gpu_id);
    g->acquired_file = r->id;
    return 0;
}
static int h_alloc_memory(void *p) { return alloc_memory(p); }
static int h_free_memory(void *p) { return free_memory(p); }
static int h_map_memory(void *p) { return map_memory(p, true); }
static int h_unmap_memory(void *p) { return map_memory(p, false); }
static int h_available_memory(void *p)
{
    kfd_available_memory_args *a = p;
    mock_amd_gpu *g = mock_amd_gpu_by_id(a->gpu_id);
    if (!g) return refuse(EINVAL, "AVAILABLE_MEMORY: no gpu %u", a->gpu_id);
    a->available = g->g->vram_bytes - atomic_load(&g->g->vram_used);
    return 0;
}
static int h_runtime_enable(void *p)
{
    /* kfd_ioctl_runtime_enable: the ENABLE mode bit enables, its absence
     * disables (the debugger API of ABI 1.13) */
    kfd_runtime_enable_args *a = p;
    if ((mock_cfg()->kfd_minor ? mock_cfg()->kfd_minor : 15) < KFD_VERSION_RUNTIME_ENABLE)
        return refuse(EINVAL, "kfd ioctl 0x25 before ABI 1.13");
    if (!(a->mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)) mock_amd_P.runtime_enabled = false;
    else if (mock_amd_P.runtime_enabled) return -EBUSY;
    else if (mock_amd_P.queues) return refuse(EEXIST, "RUNTIME_ENABLE after queues were created");
    else mock_amd_P.runtime_enabled = true;
    return 0;
}

/* kfd_ioctl_get_process_apertures_new: with num_of_nodes 0, the count of
 * the process's GPUs; else up to that many entries and the count filled.
 * The apertures are kfd_flat_memory.c's for gfx9+ (kfd_init_apertures_v9:
 * LDS at 1 << 48, scratch at 2 << 48, each 4 GiB; GPUVM from a page up to
 * the 47-bit hole) */
static int h_get_apertures_new(void *p)
{
    kfd_get_apertures_new_args *a = p;
    if (!a->num_of_nodes) {
        a->num_of_nodes = mock_amd_P.ngpus;
        return 0;
    }
    uint32_t n = BASE_MIN(a->num_of_nodes, mock_amd_P.ngpus);
    kfd_apertures *out = (kfd_apertures *)(uintptr_t)a->kfd_process_device_apertures_ptr;
    for (uint32_t i = 0; i < n; i++)
        out[i] = (kfd_apertures){.lds_base = 1ull << 48, .lds_limit = (1ull << 48) + 0xffffffffull,
                                 .scratch_base = 2ull << 48, .scratch_limit = (2ull << 48) + 0xffffffffull,
                                 .gpuvm_base = 4096, .gpuvm_limit = (1ull << 47) - 1,
                                 .gpu_id = mock_amd_P.gpus[i]->gpu_id};
    a->num_of_nodes = n;
    return 0;
}

/* kfd_ioctl_set_memory_policy: the policies are COHERENT or NONCOHERENT;
 * the mock's caches are coherent either way, so it checks and keeps
 * nothing more */
static int h_set_memory_policy(void *p)
{
    kfd_set_memory_policy_args *a = p;
    if ((a->default_policy != KFD_CACHE_POLICY_COHERENT && a->default_policy != KFD_CACHE_POLICY_NONCOHERENT) ||
        (a->alternate_policy != KFD_CACHE_POLICY_COHERENT && a->alternate_policy != KFD_CACHE_POLICY_NONCOHERENT))
        return refuse(EINVAL, "SET_MEMORY_POLICY: policies %u/%u", a->default_policy, a->alternate_policy);
    if (!mock_amd_gpu_by_id(a->gpu_id)) return refuse(EINVAL, "SET_MEMORY_POLICY: no gpu %u", a->gpu_id);
    return 0;
}

/* kfd_ioctl_get_clock_counters: the GPU's 100 MHz counter (0 for a
 * gpu_id the process has no GPU of: the kernel does not refuse it),
 * CLOCK_MONOTONIC_RAW and CLOCK_BOOTTIME in ns, the system clock's
 * frequency 1 GHz */
static int h_get_clock_counters(void *p)
{
    kfd_get_clock_counters_args *a = p;
    struct timespec raw, boot;
    clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    a->gpu_clock_counter = mock_amd_gpu_by_id(a->gpu_id) ? mock_amd_clock() : 0;
    a->cpu_clock_counter = (uint64_t)raw.tv_sec * 1000000000ull + (uint64_t)raw.tv_nsec;
    a->system_clock_counter = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec;
    a->system_clock_freq = 1000000000ull;
    return 0;
}

/* set_event / reset_event: a signal event's state (kfd_events.c) */
static int h_set_event(void *p)
{
    mock_amd_event *e = event_by_id(((kfd_event_id_args *)p)->event_id);
    if (!e) return refuse(EINVAL, "SET_EVENT: no event %u", ((kfd_event_id_args *)p)->event_id);
    if (e->type != KFD_EVENT_SIGNAL) return refuse(EINVAL, "SET_EVENT: event %u is not a signal event", e->id);
    e->signaled = true;
    pthread_cond_broadcast(&mock_amd_P.events_cond);
    return 0;
}
static int h_reset_event(void *p)
{
    mock_amd_event *e = event_by_id(((kfd_event_id_args *)p)->event_id);
    if (!e) return refuse(EINVAL, "RESET_EVENT: no event %u", ((kfd_event_id_args *)p)->event_id);
    if (e->type != KFD_EVENT_SIGNAL) return refuse(EINVAL, "RESET_EVENT: event %u is not a signal event", e->id);
    e->signaled = false;
    return 0;
}

/* set_scratch_backing_va (a gfx8-era scratch aperture; no-op state for
 * the mock's GPUs, whose scratch comes from the dispatch) and
 * set_trap_handler (the mock runs no trap handler): the GPU must exist */
static int h_set_scratch_backing_va(void *p)
{
    kfd_set_scratch_backing_va_args *a = p;
    return mock_amd_gpu_by_id(a->gpu_id) ? 0 : refuse(EINVAL, "SET_SCRATCH_BACKING_VA: no gpu %u", a->gpu_id);
}
static int h_set_trap_handler(void *p)
{
    kfd_set_trap_handler_args *a = p;
    return mock_amd_gpu_by_id(a->gpu_id) ? 0 : refuse(EINVAL, "SET_TRAP_HANDLER: no gpu %u", a->gpu_id);
}

/* kfd_ioctl_set_xnack_mode: < 0 asks; >= 0 sets, EBUSY while the process
 * has queues, EPERM to enable it where a GPU cannot retry faults (the
 * mock's GPUs do not: gfx90a's XNACK is a per-process choice KFD allows
 * only when every GPU supports it; the mock keeps it off) */
static int h_set_xnack_mode(void *p)
{
    kfd_set_xnack_mode_args *a = p;
    if (a->xnack_enabled < 0) {
        a->xnack_enabled = mock_amd_P.xnack;
        return 0;
    }
    if (mock_amd_P.queues) return refuse(EBUSY, "SET_XNACK_MODE while queues exist"); /* checked first */
    if (a->xnack_enabled == mock_amd_P.xnack) return 0;
    return refuse(EPERM, "SET_XNACK_MODE %d: the mock's GPUs do not retry page faults", a->xnack_enabled);
}

/* kfd_ioctl_get_tile_config (amdgpu_amdkfd_get_tile_config): the GPU's
 * GB_ADDR_CONFIG, and up to 32 tile and 16 macro-tile modes, all zero on
 * gfx9+, which has no tile-mode tables; bank and rank counts 0 (gfx9+
 * has no MC_ARB_RAMCFG) */
static int h_get_tile_config(void *p)
{
    kfd_get_tile_config_args *a = p;
    mock_amd_gpu *g = mock_amd_gpu_by_id(a->gpu_id);
    if (!g) return refuse(EINVAL, "GET_TILE_CONFIG: no gpu %u", a->gpu_id);
    a->gb_addr_config = g->model->gb_addr_config;
    a->num_banks = a->num_ranks = 0;
    a->num_tile_configs = BASE_MIN(a->num_tile_configs, 32u);
    a->num_macro_tile_configs = BASE_MIN(a->num_macro_tile_configs, 16u);
    if (a->num_tile_configs && a->tile_config_ptr)
        memset((void *)(uintptr_t)a->tile_config_ptr, 0, a->num_tile_configs * 4ull);
    if (a->num_macro_tile_configs && a->macro_tile_config_ptr)
        memset((void *)(uintptr_t)a->macro_tile_config_ptr, 0, a->num_macro_tile_configs * 4ull);
    return 0;
}

/* kfd_ioctl_alloc_queue_gws and pqm_set_gws (kfd_chardev.c,
 * kfd_process_queue_manager.c): the queue must be the process's; every
 * mock GPU has GWS and hardware scheduling (num_gws in its properties);
 * one queue of the process per GPU holds the GPU's whole GWS (EBUSY for a
 * second), releasing what none holds is EINVAL (and, here, through a
 * queue that does not hold it); destroying the queue
 * releases it; first_gws is 0 */
static int h_alloc_queue_gws(void *p)
{
    kfd_alloc_queue_gws_args *a = p;
    mock_amd_queue *q = mock_amd_P.queues;
    while (q && q->id != a->queue_id) q = q->next;
    if (!q) return refuse(EINVAL, "ALLOC_QUEUE_GWS: no queue %u", a->queue_id);
    mock_amd_queue *holder = mock_amd_P.queues;
    while (holder && !(holder->gpu == q->gpu && holder->gws)) holder = holder->next;
    if (a->num_gws && holder)
        return refuse(EBUSY, "ALLOC_QUEUE_GWS: queue %u of gpu %u already holds the GPU's GWS", holder->id,
                      q->gpu->gpu_id);
    if (!a->num_gws && !holder) return refuse(EINVAL, "ALLOC_QUEUE_GWS: no queue of gpu %u holds GWS to release", q->gpu->gpu_id);
    /* (the driver releases the named queue's GWS object: a queue without
     * one would be a NULL dereference in amdgpu_amdkfd_remove_gws_from_process) */
    if (!a->num_gws && holder != q)
        return refuse(EINVAL, "ALLOC_QUEUE_GWS: releasing through queue %u, which holds no GWS (queue %u does)", q->id,
                      holder->id);
    q->gws = a->num_gws ? MOCK_AMD_NUM_GWS : 0;
    a->first_gws = 0;
    return 0;
}

typedef int (*kfd_handler)(void *arg);
#define HANDLER_(nr, name, dir, type) [nr] = HANDLER_##name,
#define HANDLER_GET_VERSION h_get_version
#define HANDLER_SET_MEMORY_POLICY h_set_memory_policy
#define HANDLER_GET_CLOCK_COUNTERS h_get_clock_counters
#define HANDLER_SET_EVENT h_set_event
#define HANDLER_RESET_EVENT h_reset_event
#define HANDLER_SET_SCRATCH_BACKING_VA h_set_scratch_backing_va
#define HANDLER_SET_TRAP_HANDLER h_set_trap_handler
#define HANDLER_GET_TILE_CONFIG h_get_tile_config
#define HANDLER_SET_XNACK_MODE h_set_xnack_mode
#define HANDLER_CREATE_QUEUE h_create_queue
#define HANDLER_DESTROY_QUEUE h_destroy_queue
#define HANDLER_CREATE_EVENT h_create_event
#define HANDLER_DESTROY_EVENT h_destroy_event
#define HANDLER_WAIT_EVENTS h_wait_events
#define HANDLER_ACQUIRE_VM h_acquire_vm
#define HANDLER_GET_PROCESS_APERTURES_NEW h_get_apertures_new
#define HANDLER_ALLOC_MEMORY_OF_GPU h_alloc_memory
#define HANDLER_FREE_MEMORY_OF_GPU h_free_memory
#define HANDLER_MAP_MEMORY_TO_GPU h_map_memory
#define HANDLER_UNMAP_MEMORY_FROM_GPU h_unmap_memory
#define HANDLER_AVAILABLE_MEMORY h_available_memory
#define HANDLER_RUNTIME_ENABLE h_runtime_enable
#define HANDLER_ALLOC_QUEUE_GWS h_alloc_queue_gws
/* every row of the table with an argument struct has its handler: a row
 * added there without one here does not build */
static const kfd_handler handlers[AMD_KFD_NR_COUNT] = {AMD_KFD_IOCTLS(HANDLER_)};

int mock_amd_ioctl(void *priv, unsigned long req, void *arg)
{
    int err;
    uint32_t status;
    if (mock_ioctl_inject(&err, &status)) return -(err ? err : EIO);
    mock_amd_file *f = priv;
    if (f->kind != MOCK_AMD_FILE_KFD) return mock_amd_drm_ioctl(f->gpu, req, arg);
    /* as kfd_ioctl (kfd_chardev.c): the row by number; the caller's size
     * is copied in (when the kernel's command reads) and zero-extended to
     * the kernel's struct, the handler runs, and the caller's size is
     * copied back (when the kernel's command writes); the direction is
     * the kernel's, not the caller's. An unknown number, or one without a
     * handler, is EINVAL. */
    unsigned nr = AMD_IOC_NR(req); /* kfd_ioctl looks at the number only, not the type */
    const amd_kfd_ioctl_def *d = nr < AMD_KFD_NR_COUNT && amd_kfd_ioctls[nr].name ? &amd_kfd_ioctls[nr] : NULL;
    if (!d || !handlers[nr]) return refuse(EINVAL, "kfd ioctl 0x%02x%s%s", nr, d ? " " : "", d ? d->name : "");
    uint8_t buf[128] __attribute__((aligned(8)));
    unsigned usize = AMD_IOC_SIZE(req), ksize = d->size, dir = (unsigned)(d->cmd >> 30);
    if (ksize > sizeof buf || usize > 4096) return -EINVAL;
    unsigned asize = BASE_MAX(usize, ksize);
    uint8_t *k = asize <= sizeof buf ? buf : calloc(1, asize);
    if (!k) return -ENOMEM;
    memset(k, 0, asize);
    if (dir & AMD_IOC_W) memcpy(k, arg, usize);
    pthread_mutex_lock(&mock_amd_P.lock);
    int rc = handlers[nr](k);
    pthread_mutex_unlock(&mock_amd_P.lock);
    /* kfd_ioctl copies back even when the handler failed, as it does */
    if (dir & AMD_IOC_R) memcpy(arg, k, usize);
    if (k != buf) free(k);
    return rc;
}
