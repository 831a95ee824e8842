/* NV01_MEMORY_VIRTUAL and RM_MAP_MEMORY_DMA in the NV mock: a range of a
 * vaspace, and memory objects mapped into it for the GPU, as a client that
 * manages its own GPU addresses through RM (not UVM) does it.
 *
 * What RM does, and the mock with it (open-gpu-kernel-modules 580.95.05):
 *   - the object's parent is a device; hVASpace 0 is the device's default
 *     vaspace, else a FERMI_VASPACE_A of the client; limit 0 asks for the
 *     vaspace's own, which is written back (class/cl0070.h);
 *   - RM_MAP_MEMORY_DMA (escape.c, NVOS46): hDevice a device or subdevice
 *     (else NV_ERR_INVALID_OBJECT, serverInterMap_Prologue in
 *     src/nvidia/src/kernel/rmapi/mapping.c), offset + length within the
 *     memory (else NV_ERR_INVALID_LIMIT, same place), a DMA_OFFSET_FIXED
 *     address inside the virtual range and page-aligned (nvos.h on
 *     NVOS46_FLAGS_DMA_OFFSET_FIXED), else RM picks the address and
 *     returns it in dmaOffset; ACCESS_READ_ONLY maps read-only;
 *   - RM_UNMAP_MEMORY_DMA (NVOS47) removes the mapping at dmaOffset;
 *     freeing the virtual object or the memory removes its mappings.
 * The mock's GPU addresses are the process's (its engines reach memory at
 * the address they are given), so an address RM picks is one the mock
 * reserves in the process, and host memory described by address
 * (NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) maps only at its own address
 * (NV_ERR_NOT_SUPPORTED elsewhere). A length of 0 and partial unmaps,
 * which the sources do not settle, are refused (NV_ERR_INVALID_LIMIT,
 * NV_ERR_NOT_SUPPORTED); peer GPUs' memory is not mapped this way
 * (NV_ERR_NOT_SUPPORTED: hcq and UVM clients map it through UVM). */
#include "drivers/mock/mock_nv_obj.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <stdlib.h>
#include <string.h>

/* the default vaspace's extent: 49-bit GPU virtual addresses */
#define MNV_VA_LIMIT ((1ull << 49) - 1)

uint32_t mnv_vmm_alloc(mnv_obj *parent, uint32_t client, uint32_t handle, nv_memory_virtual_alloc *p, mnv_obj **out)
{
    uint64_t lo = 0, hi = MNV_VA_LIMIT;
    if (p->hVASpace) {
        mnv_obj *vs = mnv_find(client, p->hVASpace);
        if (p->hVASpace == 0xffffffffu) return NV_ERR_NOT_SUPPORTED; /* SYSMEM_DYNAMIC emulation: not modelled */
        if (!vs || vs->kind != O_VASPACE || vs->gpu != parent->gpu) return NV_ERR_INVALID_OBJECT_HANDLE;
        lo = vs->va_lo;
        hi = vs->va_hi;
    }
    uint64_t limit = p->limit ? p->limit : hi;
    if (p->offset < lo || limit > hi || limit <= p->offset) return NV_ERR_INVALID_LIMIT;
    mnv_obj *o = mnv_obj_new(client, parent->handle, handle, NV01_MEMORY_VIRTUAL, O_VIRTUAL, parent->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->va_lo = p->offset;
    o->va_hi = limit;
    p->limit = limit;
    *out = o;
    return NV_OK;
}

static void unmap_one(mnv_obj *v, mnv_dma_map *m)
{
    mock_va_unmap(m->va, m->size, 1u << v->gpu->g->index);
    if (m->reserved) sys_libc()->munmap(NULL, (void *)(uintptr_t)m->va, m->size);
    free(m);
}

void mnv_vmm_release(mnv_obj *o)
{
    while (o->maps) {
        mnv_dma_map *m = o->maps;
        o->maps = m->next;
        unmap_one(o, m);
    }
}

void mnv_vmm_memory_freed(uint32_t client, uint32_t hmem)
{
    for (mnv_obj *v = mnv_obj_first(); v; v = v->next) {
        if (v->kind != O_VIRTUAL || v->client != client) continue;
        for (mnv_dma_map **p = &v->maps; *p;) {
            mnv_dma_map *m = *p;
            if (m->hmemory == hmem) {
                *p = m->next;
                unmap_one(v, m);
            } else {
                p = &m->next;
            }
        }
    }
}

uint32_t mnv_vmm_map(mnv_fd *f, nv_rm_map_memory_dma *a)
{
    if (!mnv_find_client(a->hClient, f)) return NV_ERR_INVALID_CLIENT;
    mnv_obj *dev = mnv_find(a->hClient, a->hDevice);
    if (!dev) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (dev->kind != O_DEVICE && dev->kind != O_SUBDEVICE) return NV_ERR_INVALID_OBJECT;
    mnv_obj *v = mnv_find(a->hClient, a->hDma), *mem = mnv_find(a->hClient, a->hMemory);
    if (!v || v->kind != O_VIRTUAL || v->gpu != dev->gpu) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!mem || mem->kind != O_MEMORY) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!a->length || a->offset + a->length < a->offset || a->offset + a->length > mem->size)
        return NV_ERR_INVALID_LIMIT;
    if (mem->bo && mem->bo->vram_of && mem->bo->vram_of != v->gpu->g) return NV_ERR_NOT_SUPPORTED;
    uint64_t size = base_align_up(a->length, 4096), va;
    bool fixed = a->flags & NVOS46_FLAGS_DMA_OFFSET_FIXED, reserved = false;
    if (!mem->bo) { /* host memory described by address: where it lives */
        va = mem->host_va + a->offset;
        if ((fixed && a->dmaOffset != va) || (va & 4095)) return NV_ERR_NOT_SUPPORTED;
    } else if (fixed) {
        va = a->dmaOffset;
        if (va & 4095) return NV_ERR_INVALID_OFFSET;
    } else {
        if (a->offset & 4095) return NV_ERR_INVALID_OFFSET; /* the mock maps whole pages of the object */
        if (!(va = mock_va_reserve(size))) return NV_ERR_NO_MEMORY;
        reserved = true;
    }
    if (va < v->va_lo || va + size - 1 > v->va_hi || va + size < va) {
        if (reserved) sys_libc()->munmap(NULL, (void *)(uintptr_t)va, size);
        return fixed ? NV_ERR_INVALID_OFFSET : NV_ERR_NO_MEMORY;
    }
    mnv_dma_map *m = calloc(1, sizeof *m);
    int rc = m ? mock_va_map(va, size, mem->bo, mem->bo ? a->offset : 0, 1u << v->gpu->g->index,
                             (a->flags & 3u) != NVOS46_FLAGS_ACCESS_READ_ONLY)
               : -1;
    if (rc) {
        free(m);
        if (reserved) sys_libc()->munmap(NULL, (void *)(uintptr_t)va, size);
        return rc == -1 ? NV_ERR_NO_MEMORY : NV_ERR_INVALID_OFFSET; /* another object is mapped there */
    }
    *m = (mnv_dma_map){a->hMemory, va, size, reserved, v->maps};
    v->maps = m;
    a->dmaOffset = va;
    return NV_OK;
}

uint32_t mnv_vmm_unmap(mnv_fd *f, nv_rm_unmap_memory_dma *a)
{
    if (!mnv_find_client(a->hClient, f)) return NV_ERR_INVALID_CLIENT;
    mnv_obj *dev = mnv_find(a->hClient, a->hDevice);
    if (!dev) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (dev->kind != O_DEVICE && dev->kind != O_SUBDEVICE) return NV_ERR_INVALID_OBJECT;
    mnv_obj *v = mnv_find(a->hClient, a->hDma);
    if (!v || v->kind != O_VIRTUAL) return NV_ERR_INVALID_OBJECT_HANDLE;
    for (mnv_dma_map **p = &v->maps; *p; p = &(*p)->next) {
        mnv_dma_map *m = *p;
        if (m->va != a->dmaOffset || m->hmemory != a->hMemory) continue;
        if (a->size && a->size != m->size) return NV_ERR_NOT_SUPPORTED;
        *p = m->next;
        unmap_one(v, m);
        return NV_OK;
    }
    return NV_ERR_INVALID_OFFSET;
}
