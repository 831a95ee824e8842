/* Memory of the mock GPUs: buffer objects of shared memory that keep no
 * descriptor (sys_shm_create: a program's close loop cannot touch them),
 * and one process-wide
 * map of virtual address ranges. A range is host memory exactly while the
 * CPU or some GPU maps it, at the same address for all of them, so engines
 * and kernels dereference GPU addresses directly, after asking
 * mock_gpu_access whether that GPU may. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ** GPUs */
static mock_gpu *gpus[31];
static uint32_t ngpus;

mock_gpu *mock_gpu_add(const char *name, const char *model, uint64_t vram_bytes)
{
    if (ngpus >= BASE_ARRAY_LEN(gpus)) return NULL;
    mock_gpu *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->index = ngpus;
    snprintf(g->name, sizeof g->name, "%s", name);
    snprintf(g->model, sizeof g->model, "%s", model);
    g->vram_bytes = mock_cfg()->vram_bytes ? mock_cfg()->vram_bytes : vram_bytes;
    pthread_mutex_init(&g->pool_lock, NULL);
    pthread_mutex_init(&g->sensor_lock, NULL);
    gpus[ngpus++] = g;
    return g;
}

void mock_pools_stop(void)
{
    for (uint32_t i = 0; i < ngpus; i++) {
        mock_gpu *g = gpus[i];
        /* a launch under way keeps its pool (the process is exiting under it) */
        if (!g || pthread_mutex_trylock(&g->pool_lock)) continue;
        drv_pool_destroy(g->pool);
        g->pool = NULL;
        pthread_mutex_unlock(&g->pool_lock);
    }
}

void mock_gpus_free(void)
{
    for (uint32_t i = 0; i < ngpus; i++) {
        mock_twin_forget_gpu(gpus[i]);
        drv_pool_destroy(gpus[i]->pool);
        pthread_mutex_destroy(&gpus[i]->pool_lock);
        pthread_mutex_destroy(&gpus[i]->sensor_lock);
        free(gpus[i]);
        gpus[i] = NULL;
    }
    ngpus = 0;
}

/* ** buffer objects */
mock_bo *mock_bo_new(mock_gpu *gpu, uint64_t size, int *err)
{
    if (gpu) {
        uint64_t used = atomic_fetch_add(&gpu->vram_used, size);
        if (used + size > gpu->vram_bytes) {
            atomic_fetch_sub(&gpu->vram_used, size);
            *err = ENOMEM;
            return NULL;
        }
    }
    mock_bo *bo = calloc(1, sizeof *bo);
    int e = ENOMEM;
    void *anchor = bo ? sys_shm_create("hcq-mock-bo", size, &e) : NULL;
    if (!anchor) {
        *err = e ? e : ENOMEM;
        free(bo);
        if (gpu) atomic_fetch_sub(&gpu->vram_used, size);
        return NULL;
    }
    bo->anchor = anchor;
    bo->size = size;
    bo->vram_of = gpu;
    atomic_init(&bo->refs, 1);
    return bo;
}

mock_bo *mock_bo_adopt(uint64_t host, uint64_t size, int *err)
{
    if (host % 4096 || size % 4096 || !size) {
        *err = EINVAL;
        return NULL;
    }
    mock_bo *bo = mock_bo_new(NULL, size, err);
    if (!bo) return NULL;
    /* the pages are read as the kernel reads a user's (EFAULT where they
     * are not readable, as pinning them would fail), into a view of the
     * new pages, which then take the program's address */
    void *view = mock_bo_map(bo, NULL, 0, size, PROT_READ | PROT_WRITE, err);
    if (!view) {
        mock_bo_unref(bo);
        return NULL;
    }
    bool readable = mock_copy_from_user(view, (const void *)(uintptr_t)host, size);
    sys_libc()->munmap(NULL, view, size);
    if (!readable) {
        *err = EFAULT;
        mock_bo_unref(bo);
        return NULL;
    }
    if (!mock_bo_map(bo, (void *)(uintptr_t)host, 0, size, PROT_READ | PROT_WRITE, err)) {
        mock_bo_unref(bo);
        return NULL;
    }
    return bo;
}

void mock_bo_ref(mock_bo *bo) { atomic_fetch_add(&bo->refs, 1); }

void mock_bo_unref(mock_bo *bo)
{
    if (!bo || atomic_fetch_sub(&bo->refs, 1) != 1) return;
    sys_shm_destroy(bo->anchor, bo->size);
    if (bo->vram_of) atomic_fetch_sub(&bo->vram_of->vram_used, bo->size);
    free(bo);
}

/* ** the address map: sorted, non-overlapping ranges */
typedef struct va_range {
    uint64_t va, size;
    mock_bo *bo; /* NULL: userptr */
    uint64_t bo_offset;
    uint32_t who;   /* MOCK_MAP_CPU | GPU bits */
    uint32_t wmask; /* the who bits whose mapping is writable: a buffer the runtime maps
                     * read-only for the CPU (libhsakmt's scratch, for a debugger) is
                     * still its GPU's writable memory */
} va_range;

static va_range *ranges;
static size_t nranges, rcap;
static pthread_rwlock_t map_lock = PTHREAD_RWLOCK_INITIALIZER;

/* index of the first range whose end is > va */
static size_t find(uint64_t va)
{
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].va + ranges[mid].size <= va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int host_map(const va_range *r)
{
    if (!r->bo) return 0; /* userptr: the process's own memory is there */
    int err = 0;
    void *p = sys_shm_map(r->bo->anchor, r->bo_offset, r->size, (void *)(uintptr_t)r->va, PROT_READ | PROT_WRITE, &err);
    return p ? 0 : -err;
}

void *mock_bo_map(mock_bo *bo, void *addr, uint64_t off, size_t len, int prot, int *err)
{
    if (off > bo->size || len > bo->size - off) {
        *err = EINVAL;
        return NULL;
    }
    return sys_shm_map(bo->anchor, off, len, addr, prot, err);
}

static void host_unmap(const va_range *r)
{
    if (!r->bo) return;
    /* keep the address reserved (the runtime may have reserved it) but
     * drop the pages */
    int err;
    sys_libc()->mmap(NULL, (void *)(uintptr_t)r->va, r->size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0, &err);
}

uint64_t mock_va_reserve(uint64_t size)
{
    int err;
    void *p = sys_libc()->mmap(NULL, NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &err);
    return (uint64_t)(uintptr_t)p;
}

int mock_va_map(uint64_t va, uint64_t size, mock_bo *bo, uint64_t bo_offset, uint32_t who, bool writable)
{
    if (!size || va + size < va) return -EINVAL;
    if (bo && bo_offset + size > bo->size) return -EINVAL;
    pthread_rwlock_wrlock(&map_lock);
    size_t i = find(va);
    int rc = 0;
    if (i < nranges && ranges[i].va < va + size) {
        va_range *r = &ranges[i];
        if (r->va == va && r->size == size && r->bo == bo && r->bo_offset == bo_offset) {
            r->who |= who;
            r->wmask = (r->wmask & ~who) | (writable ? who : 0);
        }
        else rc = -EEXIST;
        goto out;
    }
    if (nranges == rcap) {
        size_t cap = rcap ? rcap * 2 : 64;
        va_range *n = realloc(ranges, cap * sizeof *n);
        if (!n) {
            rc = -ENOMEM;
            goto out;
        }
        ranges = n;
        rcap = cap;
    }
    va_range r = {va, size, bo, bo_offset, who, writable ? who : 0};
    if ((rc = host_map(&r))) goto out;
    if (bo) mock_bo_ref(bo);
    memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof *ranges);
    ranges[i] = r;
    nranges++;
out:
    pthread_rwlock_unlock(&map_lock);
    return rc;
}

int mock_va_unmap(uint64_t va, uint64_t size, uint32_t who)
{
    bool released;
    return mock_va_unmap_released(va, size, who, &released);
}

/* writers first: a stream of launches must not starve an unmap */
static pthread_rwlock_t kernel_lock;
static pthread_once_t kernel_lock_once = PTHREAD_ONCE_INIT;

static bool kernel_lock_ready;

static void kernel_lock_init(void)
{
    kernel_lock_ready = true;
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&kernel_lock, &a);
    pthread_rwlockattr_destroy(&a);
}

void mock_kernels_begin(void)
{
    pthread_once(&kernel_lock_once, kernel_lock_init);
    pthread_rwlock_rdlock(&kernel_lock);
}

void mock_kernels_end(void) { pthread_rwlock_unlock(&kernel_lock); }

int mock_va_unmap_released(uint64_t va, uint64_t size, uint32_t who, bool *released)
{
    *released = false;
    /* before the map lock: a running kernel's checks take that one */
    pthread_once(&kernel_lock_once, kernel_lock_init);
    pthread_rwlock_wrlock(&kernel_lock);
    pthread_rwlock_wrlock(&map_lock);
    size_t i = find(va);
    int rc = -ENOENT;
    while (i < nranges && ranges[i].va < va + size) {
        va_range *r = &ranges[i];
        if (r->va < va || r->va + r->size > va + size) {
            rc = -EINVAL; /* only whole ranges are unmapped */
            break;
        }
        rc = 0;
        r->who &= ~who;
        r->wmask &= ~who;
        if (r->who) {
            i++;
            continue;
        }
        if (r->bo) *released = true;
        host_unmap(r);
        mock_bo_unref(r->bo);
        memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
        nranges--;
    }
    pthread_rwlock_unlock(&map_lock);
    pthread_rwlock_unlock(&kernel_lock);
    return rc;
}

bool mock_va_cpu_overlay(uint64_t va, uint64_t size)
{
    bool gpu = false;
    pthread_rwlock_wrlock(&map_lock);
    for (size_t i = find(va); i < nranges && ranges[i].va < va + size; i++) {
        if (!(ranges[i].who & ~(uint32_t)MOCK_MAP_CPU)) continue;
        gpu = true;
        ranges[i].who &= ~(uint32_t)MOCK_MAP_CPU; /* the CPU's view is the new mapping now */
        ranges[i].wmask &= ~(uint32_t)MOCK_MAP_CPU;
    }
    pthread_rwlock_unlock(&map_lock);
    return gpu;
}

uint64_t mock_bo_va(const mock_bo *bo)
{
    uint64_t va = 0;
    pthread_rwlock_rdlock(&map_lock);
    for (size_t i = 0; i < nranges && !va; i++)
        if (ranges[i].bo == bo) va = ranges[i].va - ranges[i].bo_offset;
    pthread_rwlock_unlock(&map_lock);
    return va;
}

volatile uint8_t *mock_bo_host_begin(const mock_bo *bo, uint64_t base, uint64_t off)
{
    pthread_rwlock_rdlock(&map_lock);
    if (!base) return NULL;
    uint64_t a = base + off;
    size_t i = find(a);
    if (i == nranges) return NULL;
    const va_range *r = &ranges[i];
    /* the CPU's share: after an overlay (mock_va_cpu_overlay) the address
     * holds the process's own pages, not bo's */
    if (r->va > a || r->bo != bo || r->va - r->bo_offset != base || !(r->who & MOCK_MAP_CPU)) return NULL;
    return (volatile uint8_t *)(uintptr_t)a;
}

void mock_bo_host_end(void) { pthread_rwlock_unlock(&map_lock); }

bool mock_gpu_access(const mock_gpu *gpu, uint64_t va, uint64_t size, bool write, char *why, size_t why_size)
{
    uint64_t inj = mock_cfg()->mmu_fault_va;
    if (inj && va <= (inj | 4095) && (inj & ~4095ull) < va + size) {
        snprintf(why, why_size, "page 0x%llx faults by injection (HCQ_MOCK_CONFIG mmu_fault)",
                 (unsigned long long)(inj & ~4095ull));
        return false;
    }
    uint32_t bit = 1u << gpu->index;
    pthread_rwlock_rdlock(&map_lock);
    size_t i = find(va);
    bool ok = false;
    if (i == nranges || ranges[i].va > va) {
        snprintf(why, why_size, "0x%llx is not mapped for %s", (unsigned long long)va, gpu->name);
    } else {
        const va_range *r = &ranges[i];
        if (!(r->who & bit))
            snprintf(why, why_size, "0x%llx lies in [0x%llx, +0x%llx), which is not mapped for %s",
                     (unsigned long long)va, (unsigned long long)r->va, (unsigned long long)r->size, gpu->name);
        else if (va + size > r->va + r->size)
            snprintf(why, why_size, "the access runs past the end of the mapping [0x%llx, +0x%llx)",
                     (unsigned long long)r->va, (unsigned long long)r->size);
        else if (write && !(r->wmask & bit))
            snprintf(why, why_size, "write to the read-only mapping [0x%llx, +0x%llx)", (unsigned long long)r->va,
                     (unsigned long long)r->size);
        else
            ok = true;
    }
    pthread_rwlock_unlock(&map_lock);
    return ok;
}

bool mock_gpu_range(const mock_gpu *gpu, uint64_t va, uint64_t size, bool write, uint64_t *lo, uint64_t *hi,
                    bool *writable, char *why, size_t why_size)
{
    if (!mock_gpu_access(gpu, va, size, write, why, why_size)) return false;
    *lo = va, *hi = va + size, *writable = write;
    pthread_rwlock_rdlock(&map_lock);
    size_t i = find(va);
    if (i < nranges && ranges[i].va <= va && ranges[i].va + ranges[i].size >= va + size) {
        *lo = ranges[i].va;
        *hi = ranges[i].va + ranges[i].size;
        *writable = (ranges[i].wmask & 1u << gpu->index) != 0;
    }
    pthread_rwlock_unlock(&map_lock);
    /* the page an injected fault sits on stays outside */
    uint64_t inj = mock_cfg()->mmu_fault_va, page = inj & ~4095ull;
    if (inj && page < *hi && page + 4096 > *lo) {
        if (va >= page + 4096) *lo = page + 4096;
        else *hi = page;
    }
    return true;
}

/* a forked child's copy: the locks as new (no thread of the child holds
 * them), no pool */
void mock_mem_atfork_child(void)
{
    for (uint32_t i = 0; i < ngpus; i++) {
        pthread_mutex_init(&gpus[i]->pool_lock, NULL);
        pthread_mutex_init(&gpus[i]->sensor_lock, NULL);
        gpus[i]->pool = NULL; /* its workers stayed in the parent: a new pool on first use */
    }
    pthread_rwlock_init(&map_lock, NULL);
    if (kernel_lock_ready) kernel_lock_init();
}
