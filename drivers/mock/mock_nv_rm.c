/* The RM of the NV mock: a tree of objects (client, device, subdevice,
 * memory, virtual memory, usermode, vaspace, channel group, context share,
 * channels and their engine objects, debugger) under handles, with the
 * checks RM makes in the order it makes them: the escape's size and device
 * file (nv_names.c's table), the class, the parameters copied as RM copies
 * them (the class's own size), the resource server's checks (the parent,
 * its class against resource_list.h's parents, the handle, the class
 * against the GPU's list: alloc_prologue), then each class's constructor
 * as RM's does it; client ownership by fd. Failures are RM status
 * codes, as nvidia.ko returns them. Controls are mock_nv_ctrl.c's, virtual
 * memory and its mappings mock_nv_vmm.c's; docs/mock-interfaces.md lists
 * each interface with the RM source it was checked against. */
#include "drivers/mock/mock_nv_obj.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

pthread_mutex_t mnv_rm_lock = PTHREAD_MUTEX_INITIALIZER;
static mnv_obj *objs;
static uint32_t nobjs, next_handle, next_chid;

uint32_t mnv_rm_objects(void)
{
    pthread_mutex_lock(&mnv_rm_lock);
    uint32_t n = nobjs;
    pthread_mutex_unlock(&mnv_rm_lock);
    return n;
}

mnv_obj *mnv_find(uint32_t client, uint32_t h)
{
    for (mnv_obj *o = objs; o; o = o->next)
        if (o->handle == h && (o->client == client || (o->kind == O_CLIENT && h == client))) return o;
    return NULL;
}

mnv_obj *mnv_find_client(uint32_t h, const mnv_fd *owner)
{
    mnv_obj *o = mnv_find(h, h);
    return o && o->kind == O_CLIENT && (!owner || o->owner == owner) ? o : NULL;
}

mnv_obj *mnv_obj_first(void) { return objs; }

uint32_t mnv_obj_next_chid(void) { return next_chid++; }

uint32_t mnv_major(void) { return (uint32_t)strtoul(mnv_driver_version(), NULL, 10); }

static void obj_destroy(mnv_obj *o)
{
    mnv_obj *group = o->kind == O_CHANNEL || o->kind == O_CTXSHARE ? mnv_find(o->client, o->parent) : NULL;
    if (group && group->tsg && o->kind == O_CHANNEL) group->tsg->nchan--;
    if (group && group->tsg && o->kind == O_CTXSHARE) group->tsg->subctx &= ~(1ull << o->subctx);
    if (o->kind == O_VIRTUAL) mnv_vmm_release(o);
    if (o->kind == O_MEMORY) mnv_vmm_memory_freed(o->client, o->handle);
    if (o->chan) mnv_chan_destroy(o->chan);
    if (o->bo) mock_bo_unref(o->bo);
    free(o->tsg);
    free(o);
    nobjs--;
}

/* frees o and everything below it (children first) */
void mnv_obj_free(mnv_obj *o)
{
    for (bool again = true; again;) {
        again = false;
        for (mnv_obj *c = objs; c; c = c->next) {
            if (c != o && c->client == o->client && c->parent == o->handle && c->kind != O_CLIENT) {
                mnv_obj_free(c);
                again = true;
                break;
            }
        }
    }
    for (mnv_obj **p = &objs; *p; p = &(*p)->next)
        if (*p == o) {
            *p = o->next;
            break;
        }
    obj_destroy(o);
}

mnv_obj *mnv_obj_new(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, mnv_okind kind, mnv_gpu *gpu)
{
    mnv_obj *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->handle = handle ? handle : (0xcaf00000u | (++next_handle & 0xfffffu));
    o->client = kind == O_CLIENT ? o->handle : client;
    o->parent = parent;
    o->cls = cls;
    o->kind = kind;
    o->gpu = gpu;
    o->next = objs;
    objs = o;
    nobjs++;
    return o;
}
static uint32_t rm_alloc(mnv_fd *f, nv_rm_alloc *a)
{
    uint32_t cls = a->hClass;
    if (cls == 0 || cls == 1) cls = NV01_ROOT_CLIENT; /* escape.c rewrites these */
    const nv_class_desc *d = nv_class_desc_of(cls);
    if (!d) return NV_ERR_INVALID_CLASS; /* rmapiGetClassAllocParamSize: not in resource_list.h */
    if (cls == NV01_ROOT_CLIENT) {
        mnv_obj *o = mnv_obj_new(0, 0, 0, cls, O_CLIENT, NULL);
        if (!o) return NV_ERR_NO_MEMORY;
        o->handle = o->client = 0xc1d00000u | (next_handle & 0xfffffu);
        o->owner = f;
        a->hObjectNew = o->handle;
        return NV_OK;
    }
    uint32_t n = d->rule == NV_PARAMS_REQUIRED || (d->rule == NV_PARAMS_OPTIONAL && a->pAllocParms)
                     ? nv_class_params(cls, mnv_major())
                     : 0;
    if (d->rule == NV_PARAMS_REQUIRED && !a->pAllocParms) return NV_ERR_INVALID_ARGUMENT;
    uint8_t buf[512];
    _Static_assert(sizeof(nv_channel_alloc) <= sizeof buf, "the largest parameters we copy");
    if (n > sizeof buf) return NV_ERR_NOT_SUPPORTED; /* a class the table sizes but the mock does not serve */
    if (n) memcpy(buf, (const void *)(uintptr_t)a->pAllocParms, n);
    uint32_t st = mnv_alloc_class(f, a, cls, n ? buf : NULL);
    if (st == NV_OK && n) memcpy((void *)(uintptr_t)a->pAllocParms, buf, n);
    return st;
}

/* ** RM_FREE, RM_MAP_MEMORY, RM_ALLOC_MEMORY */
static uint32_t rm_free(mnv_fd *f, nv_rm_free *a)
{
    mnv_obj *client = mnv_find_client(a->hRoot, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    if (a->hObjectOld == a->hRoot) {
        for (mnv_obj *o = objs; o;) { /* every object of the client, then the client */
            if (o->client == client->handle && o != client) {
                mnv_obj_free(o);
                o = objs;
            } else {
                o = o->next;
            }
        }
        mnv_obj_free(client);
        return NV_OK;
    }
    mnv_obj *o = mnv_find(a->hRoot, a->hObjectOld);
    /* clientGetResourceRef (rs_client.c): NV_ERR_OBJECT_NOT_FOUND */
    if (!o || o->kind == O_CLIENT) return NV_ERR_OBJECT_NOT_FOUND;
    mnv_obj_free(o);
    return NV_OK;
}

static uint32_t map_memory(mnv_fd *f, nv_rm_map_memory *a)
{
    if (!mnv_find_client(a->hClient, f)) return NV_ERR_INVALID_CLIENT;
    mnv_obj *o = mnv_find(a->hClient, a->hMemory);
    if (!o || (o->kind != O_MEMORY && o->kind != O_USERMODE) || !o->bo) return NV_ERR_INVALID_OBJECT_HANDLE;
    /* memMap_IMPL (src/nvidia/src/kernel/rmapi/mapping_cpu.c) */
    if (a->offset >= o->size) return NV_ERR_INVALID_BASE;
    if (!a->length || a->offset + a->length < a->offset || a->offset + a->length > o->size) return NV_ERR_INVALID_LIMIT;
    if (a->offset & 4095) return NV_ERR_NOT_SUPPORTED; /* the mock maps whole pages from a page boundary */
    mnv_fd *t = mock_fd_priv(a->fd, &mock_nv_driver);
    if (!t) return NV_ERR_INVALID_ARGUMENT;
    /* video memory and registers through a registered /dev/nvidiaN of the
     * same GPU; system memory through a /dev/nvidiactl */
    bool sysmem = (o->kind == O_MEMORY && !o->bo->vram_of) || (o->kind == O_USERMODE && o->flags);
    if (sysmem ? t->kind != MNV_FD_CTL && t->kind != MNV_FD_DEV
               : t->kind != MNV_FD_DEV || !t->registered || t->gpu != o->gpu)
        return NV_ERR_INVALID_ARGUMENT;
    if (t->map_bo) return NV_ERR_STATE_IN_USE; /* one mmap context per fd */
    mock_bo_ref(o->bo);
    t->map_bo = o->bo;
    t->map_off = a->offset;
    t->map_len = a->length;
    t->map_usermode = o->kind == O_USERMODE;
    t->map_gpu = o->gpu;
    a->pLinearAddress = 0;
    return NV_OK;
}

static uint32_t alloc_os_memory(mnv_fd *f, nv_rm_alloc_memory *a)
{
    if (f->kind != MNV_FD_DEV || !f->registered) return NV_ERR_INVALID_ARGUMENT;
    /* *model limit*: the escape's other classes (Nv01AllocMemory) */
    if (a->hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_INVALID_CLASS;
    /* RmAllocOsDescriptor, RmCreateOsDescriptor (escape.c): PCI memory
     * that is not mapped by RM, a known coherency, a page-aligned address,
     * a limit that does not wrap; the pages must be the process's; then
     * the allocation RM makes of it */
    uint32_t loc = (a->flags >> 8) & 0xf, coh = (a->flags >> 12) & 0xf, mapping = a->flags >> 30;
    if (loc != 0 || mapping != 1 || (coh != 0 && coh != 1 && coh != 5)) return NV_ERR_INVALID_FLAGS;
    if (a->pMemory & 4095) return NV_ERR_NOT_SUPPORTED;
    if (a->limit + 1 == 0) return NV_ERR_INVALID_LIMIT;
    if (!a->pMemory) return NV_ERR_INVALID_ADDRESS;
    mnv_obj *client = mnv_find_client(a->hRoot, NULL), *parent = NULL;
    if (!client) return NV_ERR_INVALID_CLIENT;
    /* a handle of 0 has RM make one, which NVOS02 does not return
     * (_nvos32FunctionAllocOsDesc in interface/deprecated/
     * rmapi_deprecated_vidheapctrl.c) */
    uint32_t st = mnv_alloc_prologue(client->handle, a->hObjectParent, a->hObjectNew, a->hClass, NULL, &parent);
    if (st) return st;
    mnv_obj *o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, a->hClass, O_MEMORY, parent->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->host_va = a->pMemory;
    o->size = base_align_up(a->limit + 1, 4096); /* RM locks whole pages */
    return NV_OK;
}

/* Escapes as nvidia.ko takes them (nv_names.c's table): the number, the
 * argument's size exactly (CARD_INFO: a multiple of its entry) and the
 * kind of file; anything else is EINVAL before RM looks at it. */
int mnv_rm_ioctl(mnv_fd *f, unsigned long req, void *arg)
{
    uint32_t nr = NV_IOC_NR(req), size = NV_IOC_SIZE(req);
    const nv_escape_desc *d = nv_escape_desc_of(nr);
    if (!d || d->nr == NV_ESC_CHECK_VERSION_STR) return -EINVAL; /* not served by the mock */
    bool second = d->size2 && size == d->size2;
    if (!second && (d->size ? size != d->size : !size || size % d->unit)) return -EINVAL;
    if (!(d->on & (f->kind == MNV_FD_CTL ? NV_ESC_ON_CTL : NV_ESC_ON_GPU))) return -EINVAL;
    if (nr == NV_ESC_REGISTER_FD) {
        /* escape.c: a file links to one control file (NV_ERR_INVALID_STATE
         * twice), not itself, and not one that has a link of its own */
        mnv_fd *t = mock_fd_priv(((nv_register_fd *)arg)->ctl_fd, &mock_nv_driver);
        if (f->registered || !t || t->kind != MNV_FD_CTL || t == f || t->registered) return -EINVAL;
        f->registered = true;
        return 0;
    }
    if (nr == NV_ESC_CARD_INFO) {
        nv_card_info *c = arg;
        memset(c, 0, size);
        for (uint32_t i = 0; i < mnv_gpu_count() && i < size / sizeof *c; i++) {
            mnv_gpu *g = mnv_gpu_by_index(i);
            c[i].valid = 1;
            c[i].pci_bus = (uint8_t)(0x41 + i);
            c[i].pci_vendor_id = 0x10de;
            c[i].pci_device_id = g->m->pci_device;
            c[i].gpu_id = g->gpu_id;
            c[i].fb_size = g->g->vram_bytes;
            c[i].minor_number = g->minor;
            snprintf(c[i].dev_name, sizeof c[i].dev_name, "nvidia%u", g->minor);
        }
        return 0;
    }
    pthread_mutex_lock(&mnv_rm_lock);
    uint32_t *status = (uint32_t *)((uint8_t *)arg + (second ? d->status_at2 : d->status_at));
    if (second) { /* NVOS64: NVOS21's fields, the rights asked for, FINN flags */
        nv_rm_alloc64 *a64 = arg;
        nv_rm_alloc a = {a64->hRoot, a64->hObjectParent, a64->hObjectNew, a64->hClass, a64->pAllocParms,
                         a64->paramsSize, 0};
        /* FINN-serialized parameters are for RM's own kernel clients */
        *status = a64->flags ? NV_ERR_NOT_SUPPORTED : rm_alloc(f, &a);
        if (*status == NV_OK) a64->hObjectNew = a.hObjectNew;
        pthread_mutex_unlock(&mnv_rm_lock);
        return 0;
    }
    switch (nr) {
    case NV_ESC_RM_ALLOC: *status = rm_alloc(f, arg); break;
    case NV_ESC_RM_CONTROL: *status = mnv_rm_control(f, arg); break;
    case NV_ESC_RM_FREE: *status = rm_free(f, arg); break;
    case NV_ESC_RM_MAP_MEMORY: *status = map_memory(f, arg); break;
    case NV_ESC_RM_ALLOC_MEMORY: *status = alloc_os_memory(f, arg); break;
    case NV_ESC_RM_MAP_MEMORY_DMA: *status = mnv_vmm_map(f, arg); break;
    case NV_ESC_RM_UNMAP_MEMORY_DMA: *status = mnv_vmm_unmap(f, arg); break;
    }
    pthread_mutex_unlock(&mnv_rm_lock);
    return 0;
}

void mnv_rm_close_fd(mnv_fd *f)
{
    pthread_mutex_lock(&mnv_rm_lock);
    if (f->map_bo) mock_bo_unref(f->map_bo);
    f->map_bo = NULL;
    if (f->kind == MNV_FD_CTL) /* RM frees the clients of a closing fd */
        for (mnv_obj *o = objs; o;) {
            if (o->kind == O_CLIENT && o->owner == f) {
                nv_rm_free fr = {.hRoot = o->handle, .hObjectOld = o->handle};
                rm_free(f, &fr);
                o = objs;
            } else {
                o = o->next;
            }
        }
    pthread_mutex_unlock(&mnv_rm_lock);
}

void mnv_rm_fini(void)
{
    pthread_mutex_lock(&mnv_rm_lock);
    while (objs) {
        mnv_obj *o = objs;
        while (o && o->kind != O_CLIENT) o = o->next;
        mnv_obj_free(o ? o : objs);
    }
    next_chid = 0;
    pthread_mutex_unlock(&mnv_rm_lock);
}

/* ** for UVM */
bool mnv_rm_memory(uint32_t hclient, uint32_t hmem, mock_bo **bo, uint64_t *size, uint64_t *host_va)
{
    pthread_mutex_lock(&mnv_rm_lock);
    mnv_obj *o = mnv_find(hclient, hmem);
    bool ok = o && o->kind == O_MEMORY;
    if (ok) {
        *bo = o->bo;
        if (o->bo) mock_bo_ref(o->bo);
        *size = o->size;
        *host_va = o->host_va;
    }
    pthread_mutex_unlock(&mnv_rm_lock);
    return ok;
}

uint32_t mnv_rm_vaspace(uint32_t hclient, uint32_t h, const mnv_gpu *g, uint32_t *flags)
{
    pthread_mutex_lock(&mnv_rm_lock);
    mnv_obj *o = mnv_find(hclient, h);
    uint32_t st = !mnv_find_client(hclient, NULL) ? NV_ERR_INVALID_CLIENT
                  : !o                            ? NV_ERR_OBJECT_NOT_FOUND
                  : o->kind != O_VASPACE          ? NV_ERR_INVALID_OBJECT
                  : o->gpu != g                   ? NV_ERR_OTHER_DEVICE_FOUND
                                                  : NV_OK;
    if (!st) *flags = o->flags;
    pthread_mutex_unlock(&mnv_rm_lock);
    return st;
}

void mnv_rm_vaspace_pdb(uint32_t hclient, uint32_t h, bool on)
{
    pthread_mutex_lock(&mnv_rm_lock);
    mnv_obj *o = mnv_find(hclient, h);
    if (o && o->kind == O_VASPACE) {
        if (on) o->uvm_pdb++;
        else if (o->uvm_pdb) o->uvm_pdb--;
    }
    pthread_mutex_unlock(&mnv_rm_lock);
}

void mnv_rm_channel_bind(uint32_t hclient, uint32_t h, bool on)
{
    pthread_mutex_lock(&mnv_rm_lock);
    mnv_obj *o = mnv_find(hclient, h);
    if (o && o->kind == O_CHANNEL) o->uvm_bound = on;
    pthread_mutex_unlock(&mnv_rm_lock);
}

bool mnv_rm_channel_ready(uint32_t hclient, uint32_t h)
{
    pthread_mutex_lock(&mnv_rm_lock);
    mnv_obj *o = mnv_find(hclient, h);
    bool ok = o && o->kind == O_CHANNEL && mnv_chan_has_engine(o->chan);
    pthread_mutex_unlock(&mnv_rm_lock);
    return ok;
}

