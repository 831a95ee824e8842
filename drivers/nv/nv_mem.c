/* Memory of an NV device (nv-facts §2 "Memory recipe"):
 *   device memory   RM_ALLOC NV01_MEMORY_LOCAL_USER, GPU-mapped through a
 *                   UVM external range; CPU-mapped (BAR1) when asked by an
 *                   RM_MAP_MEMORY + mmap of a fresh /dev/nvidiaN;
 *   host memory     anonymous pages at the VA, described to RM
 *                   (NV01_MEMORY_SYSTEM_OS_DESCRIPTOR), GPU-mapped the same way;
 *   RM's own memory error notifiers: NV01_MEMORY_SYSTEM, CPU-mapped through
 *                   a fresh /dev/nvidiactl, never on the GPU.
 * CPU and GPU use one address for a buffer (nv_va.c). Freeing undoes each
 * step in reverse and leaves the address reserved again. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE_4K 4096ull
#define PAGE_2M (2ull << 20)

/* ** RM memory objects */
static hcq_status rm_memory(nv_dev *nv, uint32_t cls, uint64_t size, uint64_t page, bool contiguous,
                            uint32_t *h, const char *what)
{
    nv_memory_alloc m = {.owner = nv->proc->hclient,
                         .format = NV_MMU_PTE_KIND_GENERIC_MEMORY,
                         .size = size,
                         .alignment = page,
                         .limit = size - 1};
    if (cls == NV01_MEMORY_LOCAL_USER) {
        m.type = NVOS32_TYPE_IMAGE;
        m.flags = NVOS32_ALLOC_FLAGS_VIDMEM;
        m.attr = (contiguous ? 2u << 27 : NVOS32_ATTR_PHYSICALITY_NONCONTIG) |
                 (page == PAGE_2M ? NVOS32_ATTR_PAGE_SIZE_HUGE : 0);
        m.attr2 = NVOS32_ATTR2_ZBC_PREFER_NO | NVOS32_ATTR2_GPU_CACHEABLE_YES |
                  (page == PAGE_2M ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0);
    } else {
        m.type = NVOS32_TYPE_NOTIFIER;
        m.flags = NVOS32_ALLOC_FLAGS_SYSMEM;
        m.attr = NVOS32_ATTR_PHYSICALITY_NONCONTIG | NVOS32_ATTR_LOCATION_PCI;
        m.attr2 = NVOS32_ATTR2_ZBC_PREFER_NO | NVOS32_ATTR2_GPU_CACHEABLE_NO;
    }
    return nv_alloc_object(nv->proc, nv->hdevice, cls, &m, sizeof m, h, what);
}

/* ** GPU mappings through UVM
 * A range UVM would not free stays UVM's: its addresses are never handed
 * out again (they would collide with NV_ERR_UVM_ADDRESS_IN_USE), so the
 * free reports whether the addresses may be reused. */
static bool uvm_free(nv_dev *nv, uint64_t va, uint64_t size)
{
    nv_uvm_free f = {.base = va, .length = size};
    if (sys_ioctl(nv->proc->fd_uvm, NV_UVM_FREE, &f) < 0 || f.rmStatus) {
        BASE_LOG(0, "NV: UVM_FREE of [0x%llx, +0x%llx) failed (status %s); its addresses stay reserved",
                 (unsigned long long)va, (unsigned long long)size, nv_status_name(f.rmStatus));
        return false;
    }
    return true;
}

/* on failure, *va_free says whether the addresses may be reused */
static hcq_status uvm_map(nv_dev *nv, uint64_t va, uint64_t size, uint32_t hmem, const char *what, bool *va_free)
{
    *va_free = true;
    nv_proc *p = nv->proc;
    nv_uvm_create_external_range r = {.base = va, .length = size};
    hcq_status s = nv_uvm(p, p->fd_uvm, NV_UVM_CREATE_EXTERNAL_RANGE, &r, sizeof r, &r.rmStatus, what);
    if (s) return s;
    nv_uvm_map_external_allocation *m = calloc(1, sizeof *m);
    if (!m) {
        *va_free = uvm_free(nv, va, size);
        return base_err(HCQ_ENOMEM, "%s: out of host memory", what);
    }
    m->base = va;
    m->length = size;
    memcpy(m->perGpuAttributes[0].gpuUuid, nv->uuid, 16);
    m->perGpuAttributes[0].gpuMappingType = NV_UVM_MAPPING_READ_WRITE_ATOMIC;
    m->gpuAttributesCount = 1;
    m->rmCtrlFd = p->fd_ctl;
    m->hClient = p->hclient;
    m->hMemory = hmem;
    s = nv_uvm(p, p->fd_uvm, NV_UVM_MAP_EXTERNAL_ALLOCATION, m, sizeof *m, &m->rmStatus, what);
    free(m);
    if (s) *va_free = uvm_free(nv, va, size);
    return s;
}

/* ** CPU mappings: one fresh fd per mapping (each fd holds one mmap
 * context), closed once mapped */
static hcq_status cpu_map(nv_dev *nv, uint32_t hmem, uint64_t va, uint64_t size, bool sysmem, void **cpu_out,
                          const char *what)
{
    nv_proc *p = nv->proc;
    int fd = -1;
    hcq_status s;
    if (sysmem) {
        fd = sys_open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
        if (fd < 0) return base_err(HCQ_EIO, "%s: cannot open /dev/nvidiactl: %s", what, strerror(-fd));
    } else if ((s = nv_open_dev_fd(p, nv->card->minor_number, &fd, what))) {
        return s;
    }
    nv_rm_map_memory mm = {.hClient = p->hclient, .hDevice = nv->hdevice, .hMemory = hmem, .length = size, .fd = fd};
    int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_MAP_MEMORY, &mm);
    if (rc < 0 || mm.status) {
        sys_close(fd);
        return rc < 0 ? nv_ioctl_err(rc, what, "RM_MAP_MEMORY") : nv_status_fail(mm.status, what, "RM_MAP_MEMORY");
    }
    int err = 0;
    void *at = sys_mmap((void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | (va ? MAP_FIXED : 0), fd, 0,
                        &err);
    sys_close(fd);
    if (!at) return base_err(HCQ_EIO, "%s: mmap of %llu bytes failed: %s", what, (unsigned long long)size,
                             strerror(err));
    *cpu_out = at;
    return HCQ_OK;
}

/* puts the PROT_NONE reservation back over [va, va + size) */
static void re_reserve(uint64_t va, uint64_t size)
{
    int err;
    sys_mmap((void *)(uintptr_t)va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0,
             &err);
}

/* ** the backend's mem_alloc / mem_free */
hcq_status nv_mem_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out)
{
    nv_dev *nv = nv_of(dev);
    bool device = flags & DRV_MEM_DEVICE;
    char a[32], b[32];
    if (device && size > nv->vram_bytes)
        return base_err(HCQ_ENOMEM, "%s: cannot allocate %s of device memory: the GPU has %s", dev->props.id,
                        base_fmt_bytes(a, sizeof a, size), base_fmt_bytes(b, sizeof b, nv->vram_bytes));
    uint64_t page = device && size >= (8ull << 20) ? PAGE_2M : PAGE_4K;
    if (size > UINT64_MAX - page)
        return base_err(HCQ_ENOMEM, "%s: cannot allocate %s", dev->props.id, base_fmt_bytes(a, sizeof a, size));
    size = base_align_up(size ? size : 1, page);
    /* everything but plain device memory stays below 2^40 (nv_va.c) */
    bool low = !device || (flags & (DRV_MEM_LOW | DRV_MEM_CPU));
    uint64_t va = 0;
    hcq_status s = nv_va_alloc(size, page, low, &va);
    if (s) return base_err_prefix(s, "%s", dev->props.id);
    char what[96];
    snprintf(what, sizeof what, "%s: allocating %s of %s memory", dev->props.id, base_fmt_bytes(a, sizeof a, size),
             device ? "device" : "host");
    uint32_t h = 0;
    void *cpu = NULL;
    bool mapped = false, va_free = true;
    if (device) {
        if ((s = rm_memory(nv, NV01_MEMORY_LOCAL_USER, size, page, false, &h, what))) goto fail;
        if ((s = uvm_map(nv, va, size, h, what, &va_free))) goto fail;
        mapped = true;
        if ((flags & DRV_MEM_CPU) && (s = cpu_map(nv, h, va, size, false, &cpu, what))) goto fail;
    } else {
        int err = 0;
        cpu = sys_mmap((void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0, &err);
        if (!cpu) {
            s = base_err(HCQ_ENOMEM, "%s: mmap: %s", what, strerror(err));
            goto fail;
        }
        nv_rm_alloc_memory am = {.hRoot = nv->proc->hclient,
                                 .hObjectParent = nv->hdevice,
                                 .hObjectNew = __atomic_fetch_add(&nv->proc->next_handle, 1, __ATOMIC_RELAXED),
                                 .hClass = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
                                 .flags = NVOS02_FLAGS_OS_DESCRIPTOR,
                                 .pMemory = va,
                                 .limit = size - 1,
                                 .fd = -1};
        int rc = sys_ioctl(nv->fd_dev, NV_IOCTL_RM_ALLOC_MEMORY, &am);
        if (rc < 0 || am.status) {
            s = rc < 0 ? nv_ioctl_err(rc, what, "RM_ALLOC_MEMORY") : nv_status_fail(am.status, what, "RM_ALLOC_MEMORY");
            goto fail;
        }
        h = am.hObjectNew;
        if ((s = uvm_map(nv, va, size, h, what, &va_free))) goto fail;
        mapped = true;
    }
    memset(out, 0, sizeof *out);
    out->va = va;
    out->cpu = cpu;
    out->size = size;
    out->flags = flags;
    out->handle = h;
    return HCQ_OK;
fail:
    if (device && cpu) sys_munmap(cpu, size);
    if (mapped) va_free = uvm_free(nv, va, size);
    if (h) nv_free_object(nv->proc, nv->hdevice, h);
    re_reserve(va, size);
    if (va_free) nv_va_free(va, size);
    return s;
}

void nv_mem_free(hcq_device *dev, drv_mem *m)
{
    nv_dev *nv = nv_of(dev);
    if (!m->size) return;
    bool device = m->flags & DRV_MEM_DEVICE;
    /* the CPU's share first: the mock keeps memory while anyone maps it */
    if (device && m->cpu) sys_munmap(m->cpu, m->size);
    bool va_free = uvm_free(nv, m->va, m->size);
    nv_free_object(nv->proc, nv->hdevice, (uint32_t)m->handle);
    re_reserve(m->va, m->size);
    if (va_free) nv_va_free(m->va, m->size);
    memset(m, 0, sizeof *m);
}

/* ** peer mappings. Another GPU maps an allocation in the same external
 * range (one address for every GPU): UVM dups the memory for it, and for
 * video memory needs peer access between the two GPUs, which PCIe peers
 * get from UVM_ENABLE_PEER_ACCESS and NVLink peers have from registration
 * (uvm_va_space.c, uvm_map_external.c). A refusal is HCQ_ENOTSUP: the
 * caller copies through host memory instead. */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

hcq_status nv_peer_map(hcq_device *dev, hcq_device *owner, drv_mem *m)
{
    nv_dev *nv = nv_of(dev), *own = nv_of(owner);
    nv_proc *p = nv->proc;
    if (nv->gpu == own->gpu) return HCQ_OK; /* one vaspace per GPU: it is mapped there already */
    if (m->priv == (void *)1)
        return base_err(HCQ_ENOTSUP, "%s's memory at 0x%llx is RM's own, never on a GPU", owner->props.id,
                        (unsigned long long)m->va);
    uint32_t a = (uint32_t)(nv->card - p->cards), b = (uint32_t)(own->card - p->cards);
    pthread_mutex_lock(&peer_lock);
    if (m->peer_epoch != p->peer_epoch) { /* a GPU left since: its mappings went with it, the others' stay */
        for (uint32_t k = 0; k < 32 && k < NV_CARD_INFO_MAX; k++)
            if (p->card_gone_epoch[k] > m->peer_epoch) m->peers &= ~(1u << k);
        m->peer_epoch = p->peer_epoch;
    }
    if (m->peers & (1u << a)) {
        pthread_mutex_unlock(&peer_lock);
        return HCQ_OK;
    }
    if ((m->flags & DRV_MEM_DEVICE) && !p->peer_asked[a][b]) {
        nv_uvm_enable_peer_access e = {0};
        memcpy(e.gpuUuidA, nv->uuid, 16);
        memcpy(e.gpuUuidB, own->uuid, 16);
        int rc = sys_ioctl(p->fd_uvm, NV_UVM_ENABLE_PEER_ACCESS, &e);
        p->peer_status[a][b] = p->peer_status[b][a] = rc < 0 ? NV_ERR_GENERIC : e.rmStatus;
        p->peer_asked[a][b] = p->peer_asked[b][a] = true;
        BASE_LOG(1, "NV: UVM_ENABLE_PEER_ACCESS %s <-> %s: %s", dev->props.id, owner->props.id,
                 nv_status_name(p->peer_status[a][b]));
    }
    uint32_t peer_st = p->peer_status[a][b];
    pthread_mutex_unlock(&peer_lock);
    nv_uvm_map_external_allocation *mp = calloc(1, sizeof *mp);
    if (!mp) return base_err(HCQ_ENOMEM, "%s: out of host memory", dev->props.id);
    mp->base = m->va;
    mp->length = m->size;
    memcpy(mp->perGpuAttributes[0].gpuUuid, nv->uuid, 16);
    mp->perGpuAttributes[0].gpuMappingType = NV_UVM_MAPPING_READ_WRITE_ATOMIC;
    mp->gpuAttributesCount = 1;
    mp->rmCtrlFd = p->fd_ctl;
    mp->hClient = p->hclient;
    mp->hMemory = (uint32_t)m->handle;
    int rc = sys_ioctl(p->fd_uvm, NV_UVM_MAP_EXTERNAL_ALLOCATION, mp);
    uint32_t st = rc < 0 ? NV_ERR_GENERIC : mp->rmStatus;
    free(mp);
    if (st != NV_OK)
        return base_err(HCQ_ENOTSUP, "%s cannot map %s's %s memory at 0x%llx: UVM_MAP_EXTERNAL_ALLOCATION answered %s "
                        "(UVM_ENABLE_PEER_ACCESS between them: %s): no peer path between the GPUs", dev->props.id,
                        owner->props.id, m->flags & DRV_MEM_DEVICE ? "device" : "host", (unsigned long long)m->va,
                        nv_status_name(st), (m->flags & DRV_MEM_DEVICE) ? nv_status_name(peer_st) : "not needed");
    m->peers |= 1u << a;
    return HCQ_OK;
}

void nv_peer_gpu_gone(nv_proc *p, uint32_t card)
{
    pthread_mutex_lock(&peer_lock);
    for (uint32_t k = 0; k < NV_CARD_INFO_MAX && card < NV_CARD_INFO_MAX; k++)
        p->peer_asked[card][k] = p->peer_asked[k][card] = false;
    p->peer_epoch++;
    if (card < NV_CARD_INFO_MAX) p->card_gone_epoch[card] = p->peer_epoch;
    pthread_mutex_unlock(&peer_lock);
}

hcq_status nv_sysmem_alloc(hcq_device *dev, uint64_t size, drv_mem *out, const char *what)
{
    nv_dev *nv = nv_of(dev);
    size = base_align_up(size, PAGE_4K);
    uint64_t va;
    hcq_status s = nv_va_alloc(size, PAGE_4K, true, &va);
    if (s) return base_err_prefix(s, "%s", what);
    uint32_t h = 0;
    void *cpu = NULL;
    if ((s = rm_memory(nv, NV01_MEMORY_SYSTEM, size, PAGE_4K, false, &h, what)) ||
        (s = cpu_map(nv, h, va, size, true, &cpu, what))) {
        nv_free_object(nv->proc, nv->hdevice, h);
        nv_va_free(va, size);
        return s;
    }
    memset(out, 0, sizeof *out);
    out->va = va;
    out->cpu = cpu;
    out->size = size;
    out->handle = h;
    out->flags = DRV_MEM_HOST | DRV_MEM_CPU;
    out->priv = (void *)1; /* RM's memory: not on the GPU (no UVM range) */
    return HCQ_OK;
}

void nv_sysmem_free(hcq_device *dev, drv_mem *m)
{
    nv_dev *nv = nv_of(dev);
    if (!m->size) return;
    sys_munmap(m->cpu, m->size);
    nv_free_object(nv->proc, nv->hdevice, (uint32_t)m->handle);
    re_reserve(m->va, m->size);
    nv_va_free(m->va, m->size);
    memset(m, 0, sizeof *m);
}
