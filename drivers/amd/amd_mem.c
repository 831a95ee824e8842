/* Memory: KFD buffer objects at virtual addresses the CPU and the GPU share
 * (../shared/reference/amd-facts.md §2.3, tinygrad ops_amd.py KFDIface.alloc).
 *
 * Addresses are process-wide: every buffer's address is first reserved with
 * an inaccessible anonymous mapping, so the kernel's mmap allocator hands
 * each buffer of every GPU a range no other mapping in the process has, and
 * two GPUs never collide. The buffer is then allocated at that address,
 * mapped for the GPU, and, when the CPU needs it, mapped over the
 * reservation from the render node (MAP_FIXED) at the same address.
 * Userptr memory is ordinary anonymous memory the GPU maps where it is.
 * Freeing goes the other way: unmap from the GPU, free, and only then give
 * the address back, so no other buffer can land on it while the GPU still
 * maps it.
 *
 * Every buffer but userptr memory is followed by an unmapped guard range
 * that stays reserved: a kernel running off the end of a buffer takes a
 * GPU page fault that names the address, instead of silently writing the
 * next buffer. Address space is plentiful (47 bits); the guard costs none
 * of memory. */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096ull
#define BIG_PAGE (2ull << 20)
#define GUARD (2ull << 20)

/* the guard behind a buffer of these KFD flags */
static uint64_t guard_of(uint32_t flags) { return flags & KFD_ALLOC_USERPTR ? 0 : GUARD; }

/* reserves size + guard bytes aligned to align; *va is the start */
static hcq_status va_reserve(uint64_t size, uint64_t guard, uint64_t align, uint64_t *va)
{
    int err = 0;
    size += guard;
    uint64_t span = size + align - PAGE;
    void *p = sys_mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &err);
    if (!p) {
        char b[32];
        return base_err(HCQ_ENOMEM, "cannot reserve %s of address space: %s", base_fmt_bytes(b, sizeof b, size),
                        strerror(err));
    }
    uint64_t a = (uint64_t)(uintptr_t)p, start = base_align_up(a, align);
    if (start > a) sys_munmap(p, start - a);
    if (start + size < a + span) sys_munmap((void *)(uintptr_t)(start + size), a + span - start - size);
    *va = start;
    return HCQ_OK;
}

/* Frees a kfd buffer and gives its addresses back to the process; if kfd
 * will not free it, it still holds the addresses, so they stay reserved
 * (PROT_NONE) and no later buffer is placed there. */
static void free_and_release(amd_dev *ad, uint64_t handle, uint64_t va, uint64_t span)
{
    kfd_free_memory_args f = {.handle = handle};
    int rc = amd_kfd_ioctl(KFD_IOC_FREE_MEMORY, &f);
    if (rc >= 0) {
        sys_munmap((void *)(uintptr_t)va, span);
        return;
    }
    BASE_LOG(0, "%s: amdkfd FREE_MEMORY_OF_GPU of 0x%llx failed (%s); its addresses stay reserved", ad->dev->props.id,
             (unsigned long long)va, strerror(-rc));
    int err;
    sys_mmap((void *)(uintptr_t)va, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0,
             &err);
}

static const char *domain_name(uint32_t f)
{
    return f & KFD_ALLOC_VRAM ? "device memory" : f & KFD_ALLOC_GTT ? "GTT system memory" : "pinned host memory";
}

/* (un)maps a buffer on the GPUs ids[0..n): one MAP/UNMAP_MEMORY_TO_GPU,
 * whose n_success says how far the kernel got */
static hcq_status map_gpus(uint64_t handle, const uint32_t *ids, uint32_t n, bool map)
{
    kfd_map_memory_args m = {.handle = handle, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids, .n_devices = n};
    unsigned long cmd = map ? KFD_IOC_MAP_MEMORY : KFD_IOC_UNMAP_MEMORY;
    int rc = amd_kfd_ioctl(cmd, &m);
    if (rc < 0 || m.n_success != n)
        return base_err(rc == -ENOMEM ? HCQ_ENOMEM : HCQ_EIO, "amdkfd %s failed (%s, %u of %u GPUs done)",
                        amd_kfd_ioctl_name(cmd), rc < 0 ? strerror(-rc) : "no error", m.n_success, n);
    return HCQ_OK;
}

static hcq_status map_gpu(amd_dev *ad, uint64_t handle, bool map)
{
    uint32_t ids[1] = {ad->node.gpu_id};
    return map_gpus(handle, ids, 1, map);
}

hcq_status amd_bo_alloc(amd_dev *ad, uint64_t size, uint32_t flags, bool cpu, drv_mem *out)
{
    char b[32];
    size = base_align_up(size ? size : 1, PAGE);
    bool userptr = flags & KFD_ALLOC_USERPTR;
    uint64_t va = 0;
    int err = 0;
    hcq_status s;
    if (userptr) {
        void *p = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0, &err);
        if (!p) return base_err(HCQ_ENOMEM, "cannot allocate %s of host memory: %s", base_fmt_bytes(b, sizeof b, size),
                                strerror(err));
        va = (uint64_t)(uintptr_t)p;
    } else if ((s = va_reserve(size, guard_of(flags), size >= BIG_PAGE ? BIG_PAGE : PAGE, &va))) {
        return s;
    }
    kfd_alloc_memory_args a = {.va_addr = va, .size = size, .gpu_id = ad->node.gpu_id, .flags = flags,
                               .mmap_offset = userptr ? va : 0};
    uint64_t span = size + guard_of(flags);
    int rc = amd_kfd_ioctl(KFD_IOC_ALLOC_MEMORY, &a);
    if (rc < 0) {
        sys_munmap((void *)(uintptr_t)va, span);
        if (rc == -ENOMEM) {
            char t[32];
            return base_err(HCQ_ENOMEM, "cannot allocate %s of %s: out of memory (the GPU has %s of device memory)",
                            base_fmt_bytes(b, sizeof b, size), domain_name(flags),
                            base_fmt_bytes(t, sizeof t, ad->node.vram_bytes));
        }
        if (rc == -EINVAL && (flags & KFD_ALLOC_VRAM) && (flags & KFD_ALLOC_PUBLIC))
            return base_err(HCQ_ENOTSUP, "cannot allocate %s of CPU-visible device memory: amdkfd refused (EINVAL); "
                            "enable Resizable BAR (Above 4G decoding) in the firmware setup",
                            base_fmt_bytes(b, sizeof b, size));
        return base_err(HCQ_EIO, "amdkfd ALLOC_MEMORY_OF_GPU of %s of %s (flags 0x%08x) failed: %s",
                        base_fmt_bytes(b, sizeof b, size), domain_name(flags), flags, strerror(-rc));
    }
    if ((s = map_gpu(ad, a.handle, true))) {
        free_and_release(ad, a.handle, va, span);
        return base_err_prefix(s, "mapping %s of %s for the GPU", base_fmt_bytes(b, sizeof b, size), domain_name(flags));
    }
    void *cpu_ptr = userptr ? (void *)(uintptr_t)va : NULL;
    if (cpu && !userptr) {
        /* the offset is a DRM fake offset: it belongs to the render node
         * ACQUIRE_VM bound, not to /dev/kfd */
        cpu_ptr = sys_mmap((void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ad->render_fd,
                           (off_t)a.mmap_offset, &err);
        if (!cpu_ptr || cpu_ptr != (void *)(uintptr_t)va) {
            map_gpu(ad, a.handle, false);
            free_and_release(ad, a.handle, va, span);
            return base_err(HCQ_EIO, "mapping %s of %s for the CPU at 0x%llx (render node offset 0x%llx): %s",
                            base_fmt_bytes(b, sizeof b, size), domain_name(flags), (unsigned long long)va,
                            (unsigned long long)a.mmap_offset, strerror(err ? err : EINVAL));
        }
    }
    memset(out, 0, sizeof *out);
    out->va = va;
    out->cpu = cpu_ptr;
    out->size = size;
    out->handle = a.handle;
    out->priv = (void *)(uintptr_t)flags;
    return HCQ_OK;
}

void amd_bo_free(amd_dev *ad, drv_mem *m)
{
    if (!m->size) return;
    if (atomic_load(&ad->queue_kept)) {
        /* a queue that may still run could be reading or writing it: freed
         * under it, the queue would fault, and KFD reports a fault to every
         * memory event of the process and evicts all its queues on the GPU
         * (kfd_int_process_v9.c event_interrupt_wq_v9: kfd_dqm_evict_pasid,
         * kfd_events.c kfd_signal_vm_fault_event), a later device's too.
         * So it stays as it is until the process exits: allocated, mapped,
         * its addresses reserved. */
        memset(m, 0, sizeof *m);
        return;
    }
    /* the GPU's own mapping and its peers' (amd_peer_map) go before the
     * free: KFD refuses to free a buffer still mapped on any GPU */
    uint32_t ids[33] = {ad->node.gpu_id}, n = 1;
    for (int i = 0; i < 32; i++)
        if ((m->peers & (1u << i)) && (ids[n] = amd_proc_gpu_id(i))) n++;
    map_gpus(m->handle, ids, n, false);
    free_and_release(ad, m->handle, m->va, m->size + guard_of((uint32_t)(uintptr_t)m->priv));
    memset(m, 0, sizeof *m);
}

hcq_status amd_mem_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out)
{
    amd_dev *ad = amd_of(dev);
    uint32_t kf = KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE | KFD_ALLOC_NO_SUBSTITUTE;
    bool cpu = flags & (DRV_MEM_CPU | DRV_MEM_HOST | DRV_MEM_CODE);
    if (flags & DRV_MEM_HOST) {
        /* signals and the like: uncached GTT, coherent with the CPU without
         * flushes; the rest (staging, kernargs): plain pinned user memory */
        kf |= flags & DRV_MEM_UNCACHED ? KFD_ALLOC_GTT | KFD_ALLOC_COHERENT | KFD_ALLOC_UNCACHED : KFD_ALLOC_USERPTR;
    } else {
        kf |= KFD_ALLOC_VRAM | (cpu ? KFD_ALLOC_PUBLIC : 0);
    }
    hcq_status s = amd_bo_alloc(ad, size, kf, cpu, out);
    if (s == HCQ_ENOTSUP && (flags & DRV_MEM_CODE)) {
        /* no large BAR: code runs from system memory instead */
        kf = (kf & ~(KFD_ALLOC_VRAM | KFD_ALLOC_PUBLIC)) | KFD_ALLOC_GTT;
        s = amd_bo_alloc(ad, size, kf, true, out);
    }
    if (s) return base_err_prefix(s, "%s", dev->props.id);
    out->flags = flags;
    return HCQ_OK;
}

void amd_mem_free(hcq_device *dev, drv_mem *m) { amd_bo_free(amd_of(dev), m); }

/* ** peer mappings: another GPU of the process maps a buffer at the same
 * address, by MAP_MEMORY_TO_GPU with that GPU's id (kfd_chardev.c
 * kfd_ioctl_map_memory_to_gpu: every id in the array must be a GPU whose
 * VM the process acquired, else EINVAL). System memory (GTT, userptr) is
 * reachable by every GPU over PCIe: the kernel attaches it to the peer's
 * VM as shared or DMA-mapped memory (amdgpu_amdkfd_gpuvm.c kfd_mem_attach),
 * whatever links the GPUs have. Device memory of another GPU needs a link:
 * one xGMI hive shares it, PCIe peer-to-peer DMA-maps it through a
 * DMA-buf. Where the kernel refuses, HCQ_ENOTSUP: the caller goes through
 * host memory. (hcq does not read the topology's io_links first, as ROCr
 * does: a kernel that maps without a link by moving the buffer to system
 * memory would run such copies slower, not wrongly.) */
hcq_status amd_peer_map(hcq_device *dev, hcq_device *owner, drv_mem *m)
{
    amd_dev *ad = amd_of(dev), *own = amd_of(owner);
    if (ad->node.gpu_id == own->node.gpu_id) return HCQ_OK; /* one VM per GPU: mapped there already */
    uint32_t kf = (uint32_t)(uintptr_t)m->priv;
    int slot = amd_proc_gpu_slot(ad->node.gpu_id);
    if (slot < 0 || slot >= 32)
        return base_err(HCQ_ENOTSUP, "%s cannot map %s's memory: its GPU (gpu_id %u) is %s", dev->props.id,
                        owner->props.id, ad->node.gpu_id, slot < 0 ? "not acquired by this process"
                                                                   : "past the 32 GPUs hcq tracks peers of");
    if (m->peers & (1u << slot)) return HCQ_OK;
    uint32_t ids[1] = {ad->node.gpu_id};
    hcq_status s = map_gpus(m->handle, ids, 1, true);
    if (s) {
        char why[256];
        snprintf(why, sizeof why, "%s", hcq_error_message());
        return base_err(s == HCQ_ENOMEM ? s : HCQ_ENOTSUP, "%s cannot map %s's %s at 0x%llx: %s%s", dev->props.id,
                        owner->props.id, domain_name(kf), (unsigned long long)m->va, why,
                        kf & KFD_ALLOC_VRAM ? ": no peer path between the GPUs" : "");
    }
    m->peers |= 1u << slot;
    return HCQ_OK;
}
