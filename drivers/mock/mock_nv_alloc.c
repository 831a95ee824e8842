/* RM_ALLOC's classes in the NV mock: what the resource server checks
 * before any constructor (mnv_alloc_prologue: serverAllocResourceUnderLock
 * and the resource factory in open-gpu-kernel-modules 580.95.05
 * src/nvidia/src/kernel/rmapi/alloc_free.c), then each class's
 * constructor as RM's does it, cited at each. The escape itself (the copy
 * of the parameters, the status) is mock_nv_rm.c's; docs/mock-interfaces.md
 * lists every class with its source and test. Called with mnv_rm_lock
 * held. */
#include "drivers/mock/mock_nv_obj.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

static bool in_list(const uint32_t *l, size_t n, uint32_t cls)
{
    for (size_t i = 0; i < n && l[i]; i++)
        if (l[i] == cls) return true;
    return false;
}

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
    o->chid = mnv_obj_next_chid();
    o->flags = vs_flags;
    mnv_chan_args ca = {.gpu = parent->gpu, .cls = cls, .chid = o->chid, .gpfifo_va = a->gpFifoOffset,
                        .entries = a->gpFifoEntries, .userd_bo = userd->bo, .userd_off = a->userdOffset[0],
                        .notifier_bo = err ? err->bo : NULL, .scheduled = &tsg->scheduled,
                        .gr_faults = &tsg->gr_faults};
    o->chan = mnv_chan_create(&ca);
    if (!o->chan) {
        mnv_obj_free(o);
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
uint32_t mnv_alloc_prologue(uint32_t client, uint32_t hparent, uint32_t hnew, uint32_t cls, const void *p,
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
uint32_t mnv_alloc_class(mnv_fd *f, nv_rm_alloc *a, uint32_t cls, void *p)
{
    mnv_obj *client = mnv_find_client(a->hRoot, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    mnv_obj *parent = NULL;
    uint32_t st = mnv_alloc_prologue(client->handle, a->hObjectParent, a->hObjectNew, cls, p, &parent);
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
        for (mnv_obj *c = mnv_obj_first(); c; c = c->next)
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
            mnv_obj_free(o);
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
                mnv_obj_free(o);
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
