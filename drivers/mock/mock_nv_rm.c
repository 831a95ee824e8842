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
static void free_tree(mnv_obj *o)
{
    for (bool again = true; again;) {
        again = false;
        for (mnv_obj *c = objs; c; c = c->next) {
            if (c != o && c->client == o->client && c->parent == o->handle && c->kind != O_CLIENT) {
                free_tree(c);
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
static bool in_list(const uint32_t *l, size_t n, uint32_t cls)
{
    for (size_t i = 0; i < n && l[i]; i++)
        if (l[i] == cls) return true;
    return false;
}

/* ** RM_ALLOC */
static uint32_t alloc_memory(mnv_obj *parent, uint32_t cls, nv_memory_alloc *m, uint32_t client, uint32_t handle,
                             mnv_obj **out)
{
    /* stdmemValidateParams (mem_mgr/standard_mem.c): no internal flags, a
     * size, an owner that is not RM's (0, ~0, its scratch owners), a range
     * only with USE_BEGIN_END; then the class's location, never VIRTUAL
     * (video_mem.c vidmemConstruct_IMPL, system_mem.c sysmemConstruct_IMPL) */
    (void)client;
    if (m->internalflags || !m->size) return NV_ERR_INVALID_ARGUMENT;
    if (!m->owner || m->owner == ~0u || (m->owner >= 0xDEAF0000u && m->owner <= 0xDEAF0003u))
        return NV_ERR_INVALID_OWNER;
    if (!(m->flags & NVOS32_ALLOC_FLAGS_USE_BEGIN_END) && (m->rangeLo || m->rangeHi)) return NV_ERR_INVALID_ARGUMENT;
    bool vidmem_loc = ((m->attr >> 25) & 3) == 0;
    if ((m->flags & NVOS32_ALLOC_FLAGS_VIRTUAL) || vidmem_loc != (cls == NV01_MEMORY_LOCAL_USER))
        return NV_ERR_INVALID_ARGUMENT;
    if (m->size > (1ull << 48)) return NV_ERR_NO_MEMORY; /* no heap has it */
    uint64_t size = base_align_up(m->size, 4096);
    int err = 0;
    mock_bo *bo = mock_bo_new(cls == NV01_MEMORY_LOCAL_USER ? parent->gpu->g : NULL, size, &err);
    if (!bo) return NV_ERR_NO_MEMORY;
    mnv_obj *o = mnv_obj_new(client, parent->handle, handle, cls, O_MEMORY, parent->gpu);
    if (!o) {
        mock_bo_unref(bo);
        return NV_ERR_NO_MEMORY;
    }
    o->bo = bo;
    o->size = size;
    m->size = size; /* RM writes back the size it allocated (video_mem.c vidmemConstruct: sizeOut) */
    *out = o;
    return NV_OK;
}

/* kchannelConstruct_IMPL (src/nvidia/src/kernel/gpu/fifo/kernel_channel.c)
 * for a channel under a channel group: a vaspace only without a context
 * share; every channel of a group with a context share or none (RM's
 * legacy mode, where it makes the group's context shares); the share one
 * of this group's; an engine type, when valid, the group's; the error
 * notifier optional, else memory (kchannelGetNotifierInfo; on a GSP
 * client anything else is NV_ERR_INVALID_STATE); USERD memory of the
 * client (kchannelCreateUserdMemDesc_GV100: NV_ERR_OBJECT_NOT_FOUND). */
static uint32_t alloc_channel(mnv_obj *parent, uint32_t cls, const nv_channel_alloc *a, uint32_t client, uint32_t handle,
                              mnv_obj **out)
{
    const nv_family *fam = parent->gpu->f;
    /* a bare channel (under the device): RM makes a group for it; *model limit* */
    if (parent->kind != O_TSG) return NV_ERR_NOT_SUPPORTED;
    mnv_tsg *tsg = parent->tsg;
    if (a->hContextShare && a->hVASpace) return NV_ERR_INVALID_ARGUMENT;
    if (a->hVASpace) return NV_ERR_INVALID_ARGUMENT; /* a group's channel takes the group's vaspace */
    if (a->engineType && a->engineType < NV2080_ENGINE_TYPE_LAST && a->engineType != NV2080_ENGINE_TYPE_GRAPHICS)
        return NV_ERR_INVALID_ARGUMENT; /* not the group's engine */
    mnv_obj *err = a->hObjectError ? mnv_find(client, a->hObjectError) : NULL;
    if (a->hObjectError && (!err || err->kind != O_MEMORY)) return NV_ERR_INVALID_STATE;
    if (tsg->nchan && tsg->legacy != !a->hContextShare) return NV_ERR_INVALID_ARGUMENT;
    uint32_t vs_flags = 0; /* the channel's vaspace's: its context share's, or the group's */
    if (a->hContextShare) {
        mnv_obj *ctx = mnv_find(client, a->hContextShare);
        if (!ctx) return NV_ERR_OBJECT_NOT_FOUND;
        if (ctx->kind != O_CTXSHARE) return NV_ERR_INVALID_OBJECT_HANDLE;
        if (ctx->parent != parent->handle) return NV_ERR_INVALID_OBJECT_PARENT;
        vs_flags = ctx->flags;
    } else if (tsg->hvaspace) {
        mnv_obj *vs = mnv_find(client, tsg->hvaspace);
        vs_flags = vs && vs->kind == O_VASPACE ? vs->flags : 0;
    }
    /* USERD RM allocates itself (no hUserdMemory), mapped through the
     * channel: *model limit* */
    if (!a->hUserdMemory[0]) return NV_ERR_NOT_SUPPORTED;
    mnv_obj *userd = mnv_find(client, a->hUserdMemory[0]);
    if (!userd || userd->kind != O_MEMORY) return NV_ERR_OBJECT_NOT_FOUND;
    if (!userd->bo || (err && !err->bo)) return NV_ERR_NOT_SUPPORTED; /* memory the mock keeps no pages of */
    /* the ring and USERD checks below are the physical RM's (GSP), whose
     * source is not public: the mock refuses what could not work */
    if (a->gpFifoEntries < 2 || (a->gpFifoEntries & (a->gpFifoEntries - 1))) return NV_ERR_INVALID_ARGUMENT;
    if (a->userdOffset[0] % NV_USERD_SIZE || a->userdOffset[0] + NV_USERD_SIZE > userd->size)
        return NV_ERR_INVALID_OFFSET;
    if (a->gpFifoOffset & 7 || !a->gpFifoOffset) return NV_ERR_INVALID_ADDRESS;
    /* kfifoCheckChannelAllocAddrSpaces_GH100: USERD in system memory with
     * the ring in video memory is refused on Hopper */
    mnv_obj *ring = mnv_find(client, a->hObjectBuffer);
    if (fam->sm_version >= 0x900 && ring && ring->kind == O_MEMORY && ring->bo && ring->bo->vram_of && !userd->bo->vram_of)
        return NV_ERR_INVALID_ARGUMENT;
    mnv_obj *o = mnv_obj_new(client, parent->handle, handle, cls, O_CHANNEL, parent->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->chid = next_chid++;
    o->flags = vs_flags;
    mnv_chan_args ca = {.gpu = parent->gpu, .cls = cls, .chid = o->chid, .gpfifo_va = a->gpFifoOffset,
                        .entries = a->gpFifoEntries, .userd_bo = userd->bo, .userd_off = a->userdOffset[0],
                        .notifier_bo = err ? err->bo : NULL, .scheduled = &tsg->scheduled,
                        .gr_faults = &tsg->gr_faults};
    o->chan = mnv_chan_create(&ca);
    if (!o->chan) {
        free_tree(o);
        return NV_ERR_NO_MEMORY;
    }
    if (!tsg->nchan++) tsg->legacy = !a->hContextShare;
    *out = o;
    return NV_OK;
}

/* the vaspace hvaspace of client for device dev, as
 * vaspaceGetByHandleOrDeviceDefault (src/nvidia/src/kernel/mem_mgr/
 * vaspace.c) finds it: 0 is the device's default, which a device of vaMode
 * MULTIPLE_VASPACES lacks (NV_ERR_INVALID_STATE); a handle that is not
 * there NV_ERR_OBJECT_NOT_FOUND, not a vaspace NV_ERR_INVALID_OBJECT_HANDLE */
static uint32_t find_vaspace(uint32_t client, const mnv_obj *dev, uint32_t hvaspace, mnv_obj **out)
{
    *out = NULL;
    if (!hvaspace) return dev && dev->flags == NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES ? NV_ERR_INVALID_STATE : NV_OK;
    mnv_obj *v = mnv_find(client, hvaspace);
    if (!v) return NV_ERR_OBJECT_NOT_FOUND;
    if (v->kind != O_VASPACE) return NV_ERR_INVALID_OBJECT_HANDLE;
    *out = v;
    return NV_OK;
}

/* kctxshareapiConstruct_IMPL, kctxshareInitCommon_IMPL (src/nvidia/src/
 * kernel/gpu/fifo/kernel_ctxshare.c): the vaspace (the group's device's
 * default when 0); one RM lets UVM own must have had its page directory
 * set (UVM_REGISTER_GPU_VASPACE) first, NV_ERR_INVALID_STATE; the
 * subcontext flag exactly one of SYNC (id 0), ASYNC (the highest free),
 * SPECIFIED (subctxId), ASYNC_PREFER_LOWER (the lowest free above 0, bit 31
 * saying whether it got one), else NV_ERR_INVALID_ARGUMENT; the id
 * written back. A group has 64 ids (the GR's MAX_SUBCONTEXT_COUNT on
 * GA100 and GH100); none free, or a taken one, is the id heap's
 * NV_ERR_NO_MEMORY. */
static uint32_t alloc_ctxshare(mnv_obj *tsg, uint32_t client, uint32_t handle, nv_ctxshare_alloc *c, mnv_obj **out)
{
    mnv_obj *vs, *dev = mnv_find(client, tsg->parent);
    uint32_t st = find_vaspace(client, dev, c->hVASpace, &vs);
    if (st) return st;
    if (vs && ((vs->flags & NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED) ? !vs->uvm_pdb : vs->gpu != tsg->gpu))
        return NV_ERR_INVALID_STATE;
    uint64_t used = tsg->tsg->subctx;
    uint32_t id = 64;
    switch (c->flags) {
    case NV_CTXSHARE_FLAGS_SUBCONTEXT_SYNC: id = 0; break;
    case NV_CTXSHARE_FLAGS_SUBCONTEXT_SPECIFIED: id = c->subctxId; break;
    case NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC:
        for (int i = 63; i >= 0 && id == 64; i--)
            if (!(used >> i & 1)) id = (uint32_t)i;
        break;
    case NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC_PREFER_LOWER:
        for (uint32_t i = 1; i < 64 && id == 64; i++)
            if (!(used >> i & 1)) id = i;
        if (id == 64 && !(used & 1)) id = 0;
        break;
    default: return NV_ERR_INVALID_ARGUMENT;
    }
    if (id >= 64 || (used >> id & 1)) return NV_ERR_NO_MEMORY;
    mnv_obj *o = mnv_obj_new(client, tsg->handle, handle, FERMI_CONTEXT_SHARE_A, O_CTXSHARE, tsg->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->subctx = id;
    o->flags = vs ? vs->flags : 0;
    tsg->tsg->subctx |= 1ull << id;
    c->subctxId = id;
    if (c->flags == NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC_PREFER_LOWER && id > 0) c->subctxId |= NV_CTXSHARE_SUBCTXID_PREFER_LOWER_SUCCESS;
    *out = o;
    return NV_OK;
}

/* whether the parent's GPU has class cls (g_gpu_class_list.c): the GPU
 * family's channel, usermode, compute and copy classes; the others
 * every GPU has */
static bool gpu_has_class(const mnv_gpu *g, uint32_t cls)
{
    const nv_family *f = g->f;
    const nv_class_desc *d = nv_class_desc_of(cls);
    if (d->parents & NV_RS_CHANNEL) return cls == f->compute_cls || cls == f->copy_cls;
    bool channel = false, usermode = false;
    for (size_t i = 0; i < nv_family_count; i++) {
        channel |= in_list(nv_families[i].channel_classes, 4, cls);
        usermode |= in_list(nv_families[i].usermode_classes, 4, cls);
    }
    if (channel) return in_list(f->channel_classes, 4, cls);
    if (usermode) return in_list(f->usermode_classes, 4, cls);
    return true;
}

static uint32_t rs_kind(const mnv_obj *o)
{
    switch (o->kind) {
    case O_CLIENT: return NV_RS_CLIENT;
    case O_DEVICE: return NV_RS_DEVICE;
    case O_SUBDEVICE: return NV_RS_SUBDEVICE;
    case O_TSG: return NV_RS_CHANNEL_GROUP;
    case O_CHANNEL: return NV_RS_CHANNEL;
    default: return 0;
    }
}

/* What every class meets before its constructor, in RM's order
 * (serverAllocResourceUnderLock in src/nvidia/src/kernel/rmapi/
 * alloc_free.c, then the resource factory resservResourceFactory): a new
 * handle that is the client's own (only the client class may have it:
 * NV_ERR_INVALID_OBJECT_PARENT), the parent (clientGetResourceRef:
 * NV_ERR_OBJECT_NOT_FOUND), the parent's class against resource_list.h's
 * list (NV_ERR_INVALID_OBJECT_PARENT), the handle
 * (clientValidateNewResourceHandle: NV_ERR_INSERT_DUPLICATE_NAME), a
 * device's parameters (the factory reads them: NULL or a deviceId of
 * NV_MAX_DEVICES or more is NV_ERR_INVALID_ARGUMENT), the class against
 * the parent's GPU (NV_ERR_NOT_SUPPORTED). */
static uint32_t alloc_prologue(uint32_t client, uint32_t hparent, uint32_t hnew, uint32_t cls, const void *p,
                               mnv_obj **parent)
{
    const nv_class_desc *d = nv_class_desc_of(cls);
    if (hnew == client) return NV_ERR_INVALID_OBJECT_PARENT;
    mnv_obj *par = mnv_find(client, hparent);
    if (!par) return NV_ERR_OBJECT_NOT_FOUND;
    if (!(d->parents & rs_kind(par))) return NV_ERR_INVALID_OBJECT_PARENT;
    if (hnew && mnv_find(client, hnew)) return NV_ERR_INSERT_DUPLICATE_NAME;
    if (cls == NV01_DEVICE_0 && (!p || ((const nv_device_alloc *)p)->deviceId >= 32)) return NV_ERR_INVALID_ARGUMENT;
    if (par->gpu && !gpu_has_class(par->gpu, cls)) return NV_ERR_NOT_SUPPORTED;
    *parent = par;
    return NV_OK;
}

/* ** RM_ALLOC: the parameters are copied as RM copies them
 * (serverAllocApiCopyIn: the class's own size from resource_list.h
 * whatever paramsSize says, after the class lookup; a required pointer
 * that is NULL is NV_ERR_INVALID_ARGUMENT, rmapiParamsCopyInit) and back
 * only on success (serverAllocApiCopyOut). */
static uint32_t alloc_class(mnv_fd *f, nv_rm_alloc *a, uint32_t cls, void *p)
{
    mnv_obj *client = mnv_find_client(a->hRoot, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    mnv_obj *parent = NULL;
    uint32_t st = alloc_prologue(client->handle, a->hObjectParent, a->hObjectNew, cls, p, &parent);
    if (st) return st;
    mnv_gpu *gpu = parent->gpu;
    mnv_obj *o = NULL;
    switch (cls) {
    case NV01_DEVICE_0: {
        /* deviceConstruct_IMPL (src/nvidia/src/kernel/gpu/device.c): the
         * reserved VA limits, a device instance RM has (else
         * NV_ERR_INVALID_CLASS), a VA size when the flag asks for one
         * (deviceSetClientShare_IMPL); hClientShare is kept, not checked
         * (device_share.c resolves it when the VA space is first used) */
        nv_device_alloc *d = p;
        if ((d->flags & NV_DEVICE_ALLOCATION_FLAGS_RESTRICT_RESERVED_VALIMITS) &&
            (d->vaLimitInternal < d->vaStartInternal || !d->vaLimitInternal))
            return NV_ERR_INVALID_ARGUMENT;
        mnv_gpu *g = mnv_gpu_by_index(d->deviceId);
        if (!g) return NV_ERR_INVALID_CLASS;
        if ((d->flags & NV_DEVICE_ALLOCATION_FLAGS_VASPACE_SIZE) && !d->vaSpaceSize) return NV_ERR_INVALID_ARGUMENT;
        o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_DEVICE, g);
        if (o) o->flags = d->vaMode;
        break;
    }
    case NV20_SUBDEVICE_0: {
        /* subdeviceConstruct_IMPL (subdevice/subdevice.c): an instance
         * the device's GPU group has (one GPU: 0; else NV_ERR_INVALID_CLASS),
         * once per device (NV_ERR_INSUFFICIENT_RESOURCES) */
        if (p && ((nv_subdevice_alloc *)p)->subDeviceId != 0) return NV_ERR_INVALID_CLASS;
        for (mnv_obj *c = objs; c; c = c->next)
            if (c->kind == O_SUBDEVICE && c->client == client->handle && c->parent == parent->handle)
                return NV_ERR_INSUFFICIENT_RESOURCES;
        o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_SUBDEVICE, gpu);
        break;
    }
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM: st = alloc_memory(parent, cls, p, client->handle, a->hObjectNew, &o); break;
    case NV01_MEMORY_VIRTUAL: st = mnv_vmm_alloc(parent, client->handle, a->hObjectNew, p, &o); break;
    case NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: {
        /* osdescConstruct_IMPL (mem_mgr/os_desc_mem.c) and
         * osCreateMemFromOsDescriptor (arch/nvalloc/unix/src/osmemdesc.c):
         * a physical address needs a kernel client; no descriptor or a
         * limit of 0 is NV_ERR_INVALID_PARAM_STRUCT; a user's virtual
         * address is NV_ERR_NOT_SUPPORTED on Linux (NV_ESC_RM_ALLOC_MEMORY
         * turns one into a page array first: alloc_os_memory); the other
         * types carry kernel pointers or need a kernel client
         * (NV_ERR_NOT_SUPPORTED); an unknown type NV_ERR_INVALID_ARGUMENT */
        const nv_os_desc_alloc *d = p;
        if (d->descriptorType == 3) return NV_ERR_NOT_SUPPORTED; /* OS_PHYS_ADDR */
        if (!d->descriptor || !d->limit) return NV_ERR_INVALID_PARAM_STRUCT;
        return d->descriptorType > 6 ? NV_ERR_INVALID_ARGUMENT : NV_ERR_NOT_SUPPORTED;
    }
    case FERMI_VASPACE_A: {
        const nv_vaspace_alloc *v = p;
        o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_VASPACE, gpu);
        if (!o) break;
        o->flags = v->flags;
        /* the range NV01_MEMORY_VIRTUAL objects take from: vaBase + vaSize (0: 49 bits) */
        o->va_lo = v->vaBase;
        o->va_hi = v->vaSize ? v->vaBase + v->vaSize - 1 : (1ull << 49) - 1;
        break;
    }
    case KEPLER_CHANNEL_GROUP_A: {
        /* kchangrpapiConstruct_IMPL (gpu/fifo/kernel_channel_group_api.c):
         * a valid engine type (NV_ERR_INVALID_ARGUMENT), GR0 only without
         * MIG, then a vaspace named (find_vaspace). *Model limit*: groups of
         * engines other than graphics are NV_ERR_NOT_SUPPORTED */
        nv_tsg_alloc *t = p;
        if (!t->engineType || t->engineType >= NV2080_ENGINE_TYPE_LAST ||
            (t->engineType > NV2080_ENGINE_TYPE_GRAPHICS && t->engineType <= NV2080_ENGINE_TYPE_GR7))
            return NV_ERR_INVALID_ARGUMENT;
        mnv_obj *vs; /* a device of vaMode MULTIPLE_VASPACES lends a group none */
        if (t->hVASpace && (st = find_vaspace(client->handle, parent, t->hVASpace, &vs))) return st;
        if (t->engineType != NV2080_ENGINE_TYPE_GRAPHICS) return NV_ERR_NOT_SUPPORTED;
        o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_TSG, gpu);
        if (o && !(o->tsg = calloc(1, sizeof *o->tsg))) {
            free_tree(o);
            return NV_ERR_NO_MEMORY;
        }
        if (o) o->tsg->hvaspace = t->hVASpace;
        break;
    }
    case FERMI_CONTEXT_SHARE_A: st = alloc_ctxshare(parent, client->handle, a->hObjectNew, p, &o); break;
    case GT200_DEBUGGER: {
        /* ksmdbgssnConstruct_IMPL (gpu/gr/kernel_sm_debugger_session.c):
         * the obsolete debugger client 0 (NV_ERR_INVALID_ARGUMENT), the
         * application client (0: the caller), its hClass3dObject there
         * (NV_ERR_INVALID_OBJECT_PARENT), a graphics (compute) object
         * (NV_ERR_INVALID_OBJECT) of this device's GPU
         * (NV_ERR_INVALID_ARGUMENT) */
        nv_debugger_alloc *d = p;
        if (d->hDebuggerClient_Obsolete) return NV_ERR_INVALID_ARGUMENT;
        uint32_t app = d->hAppClient ? d->hAppClient : client->handle;
        if (!mnv_find_client(app, NULL)) return NV_ERR_INVALID_CLIENT;
        mnv_obj *target = mnv_find(app, d->hClass3dObject);
        if (!target || target->kind == O_CLIENT) return NV_ERR_INVALID_OBJECT_PARENT;
        if (target->kind != O_ENGINE || target->cls != target->gpu->f->compute_cls) return NV_ERR_INVALID_OBJECT;
        if (target->gpu != gpu) return NV_ERR_INVALID_ARGUMENT;
        o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_DEBUGGER, gpu);
        if (o) o->target_client = app, o->target = target->handle;
        break;
    }
    default:
        if (nv_class_desc_of(cls)->parents & NV_RS_DEVICE) { /* the channels */
            st = alloc_channel(parent, cls, p, client->handle, a->hObjectNew, &o);
        } else if (nv_class_desc_of(cls)->parents & NV_RS_SUBDEVICE) { /* usermode */
            /* usrmodeConstruct_IMPL (gpu/fifo/usermode_api.c): Hopper's
             * parameters; a privileged mapping only through BAR1
             * (NV_ERR_INVALID_PARAMETER) and for a kernel client
             * (NV_ERR_INSUFFICIENT_PERMISSIONS); a BAR1 mapping is memory
             * of class NV01_MEMORY_SYSTEM (the same page for the CPU here) */
            const uint8_t *up = p; /* {bBar1Mapping, bPriv} */
            bool bar1 = up && up[0], priv = up && up[1];
            if (priv && !bar1) return NV_ERR_INVALID_PARAMETER;
            if (priv) return NV_ERR_INSUFFICIENT_PERMISSIONS;
            int err = 0;
            mock_bo *bo = mock_bo_new(NULL, NV_USERMODE_SIZE, &err);
            if (!bo) return NV_ERR_NO_MEMORY;
            o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_USERMODE, gpu);
            if (o) {
                o->bo = bo;
                o->size = NV_USERMODE_SIZE;
                o->flags = bar1;
            } else {
                mock_bo_unref(bo);
            }
        } else { /* compute and copy: one engine object a channel (*model limit*) */
            if (mnv_chan_has_engine(parent->chan)) return NV_ERR_STATE_IN_USE;
            o = mnv_obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_ENGINE, gpu);
            if (o && mnv_chan_bind(parent->chan, cls)) {
                free_tree(o);
                return NV_ERR_NO_MEMORY;
            }
            if (o && gpu->usermode) mnv_chan_set_doorbell(parent->chan, gpu->usermode);
        }
        break;
    }
    if (st) return st;
    if (!o) return NV_ERR_NO_MEMORY;
    a->hObjectNew = o->handle;
    return NV_OK;
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
    uint32_t st = alloc_class(f, a, cls, n ? buf : NULL);
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
                free_tree(o);
                o = objs;
            } else {
                o = o->next;
            }
        }
        free_tree(client);
        return NV_OK;
    }
    mnv_obj *o = mnv_find(a->hRoot, a->hObjectOld);
    /* clientGetResourceRef (rs_client.c): NV_ERR_OBJECT_NOT_FOUND */
    if (!o || o->kind == O_CLIENT) return NV_ERR_OBJECT_NOT_FOUND;
    free_tree(o);
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
    uint32_t st = alloc_prologue(client->handle, a->hObjectParent, a->hObjectNew, a->hClass, NULL, &parent);
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
        free_tree(o ? o : objs);
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

