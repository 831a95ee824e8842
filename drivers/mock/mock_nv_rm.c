/* The RM of the NV mock: a tree of objects (client, device, subdevice,
 * memory, usermode, vaspace, channel group, context share, channels and
 * their engine objects, debugger) under handles, with the checks RM makes:
 * the parent's kind, the class against the GPU model's class list, the
 * parameters' size (for the driver version configured) and sense, client
 * ownership by fd. Failures are RM status codes, as nvidia.ko returns them.
 * Controls answer what the backend asks (version, ids, class list, GR and
 * FB info, name, UUID, work-submit token, scheduling, MMU fault info). */
#include "drivers/mock/mock_nv.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef enum okind {
    O_CLIENT = 1,
    O_DEVICE,
    O_SUBDEVICE,
    O_MEMORY,
    O_USERMODE,
    O_VASPACE,
    O_TSG,
    O_CTXSHARE,
    O_CHANNEL,
    O_ENGINE,
    O_DEBUGGER,
} okind;

typedef struct tsg_state {
    atomic_bool scheduled;
} tsg_state;

typedef struct obj {
    uint32_t handle, parent, client, cls;
    okind kind;
    mnv_gpu *gpu;
    mnv_fd *owner;     /* clients: the ctl fd that made them */
    mock_bo *bo;       /* memory, usermode */
    uint64_t size;     /* memory */
    uint64_t host_va;  /* memory described by address (no bo) */
    uint32_t flags;    /* vaspace flags */
    tsg_state *tsg;    /* channel groups */
    mnv_chan *chan;    /* channels */
    uint32_t chid;
    struct obj *next;
} obj;

static obj *objs;
static uint32_t nobjs, next_handle, next_chid;
static pthread_mutex_t rm_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t mnv_rm_objects(void)
{
    pthread_mutex_lock(&rm_lock);
    uint32_t n = nobjs;
    pthread_mutex_unlock(&rm_lock);
    return n;
}

static obj *find(uint32_t client, uint32_t h)
{
    for (obj *o = objs; o; o = o->next)
        if (o->handle == h && (o->client == client || (o->kind == O_CLIENT && h == client))) return o;
    return NULL;
}

static obj *find_client(uint32_t h, const mnv_fd *owner)
{
    obj *o = find(h, h);
    return o && o->kind == O_CLIENT && (!owner || o->owner == owner) ? o : NULL;
}

/* the parameter size RM expects for class cls under the configured driver */
static uint32_t version_major(void) { return (uint32_t)strtoul(mnv_driver_version(), NULL, 10); }

static void obj_destroy(obj *o)
{
    if (o->chan) mnv_chan_destroy(o->chan);
    if (o->bo) mock_bo_unref(o->bo);
    free(o->tsg);
    free(o);
    nobjs--;
}

/* frees o and everything below it (children first) */
static void free_tree(obj *o)
{
    for (bool again = true; again;) {
        again = false;
        for (obj *c = objs; c; c = c->next) {
            if (c != o && c->client == o->client && c->parent == o->handle && c->kind != O_CLIENT) {
                free_tree(c);
                again = true;
                break;
            }
        }
    }
    for (obj **p = &objs; *p; p = &(*p)->next)
        if (*p == o) {
            *p = o->next;
            break;
        }
    obj_destroy(o);
}

static obj *obj_new(uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls, okind kind, mnv_gpu *gpu)
{
    obj *o = calloc(1, sizeof *o);
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
static uint32_t alloc_memory(obj *parent, uint32_t cls, const nv_memory_alloc *m, uint32_t client, obj **out)
{
    if (parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
    if (m->owner != client) return NV_ERR_INVALID_OWNER;
    if (!m->size || m->size > (1ull << 48)) return NV_ERR_INVALID_LIMIT;
    uint64_t size = base_align_up(m->size, 4096);
    int err = 0;
    mock_bo *bo = mock_bo_new(cls == NV01_MEMORY_LOCAL_USER ? parent->gpu->g : NULL, size, &err);
    if (!bo) return NV_ERR_NO_MEMORY;
    obj *o = obj_new(client, parent->handle, 0, cls, O_MEMORY, parent->gpu);
    if (!o) {
        mock_bo_unref(bo);
        return NV_ERR_NO_MEMORY;
    }
    o->bo = bo;
    o->size = size;
    *out = o;
    return NV_OK;
}

static uint32_t alloc_channel(obj *parent, uint32_t cls, const nv_channel_alloc *a, uint32_t client, obj **out)
{
    const mnv_model *m = parent->gpu ? parent->gpu->m : NULL;
    if (parent->kind != O_TSG) return NV_ERR_INVALID_OBJECT_PARENT;
    if (!in_list(m->channel_cls, 4, cls)) return NV_ERR_INVALID_CLASS;
    obj *err = find(client, a->hObjectError), *userd = find(client, a->hUserdMemory[0]);
    obj *ctx = find(client, a->hContextShare);
    if (!err || err->kind != O_MEMORY || err->size < sizeof(nv_notification)) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!userd || userd->kind != O_MEMORY || !userd->bo) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!ctx || ctx->kind != O_CTXSHARE || ctx->parent != parent->handle) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!err->bo) return NV_ERR_INVALID_ARGUMENT;
    if (a->gpFifoEntries < 2 || (a->gpFifoEntries & (a->gpFifoEntries - 1))) return NV_ERR_INVALID_ARGUMENT;
    if (a->userdOffset[0] % NV_USERD_SIZE || a->userdOffset[0] + NV_USERD_SIZE > userd->size)
        return NV_ERR_INVALID_OFFSET;
    if (a->gpFifoOffset & 7 || !a->gpFifoOffset) return NV_ERR_INVALID_ADDRESS;
    /* kfifoCheckChannelAllocAddrSpaces_GH100: USERD in system memory with
     * the ring in video memory is refused on Hopper */
    obj *ring = find(client, a->hObjectBuffer);
    if (m->qmd_major >= 4 && ring && ring->kind == O_MEMORY && ring->bo && ring->bo->vram_of && !userd->bo->vram_of)
        return NV_ERR_INVALID_ARGUMENT;
    obj *o = obj_new(client, parent->handle, 0, cls, O_CHANNEL, parent->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->chid = next_chid++;
    mnv_chan_args ca = {.gpu = parent->gpu, .cls = cls, .chid = o->chid, .gpfifo_va = a->gpFifoOffset,
                        .entries = a->gpFifoEntries, .userd_bo = userd->bo, .userd_off = a->userdOffset[0],
                        .notifier_bo = err->bo, .scheduled = &parent->tsg->scheduled};
    o->chan = mnv_chan_create(&ca);
    if (!o->chan) {
        free_tree(o);
        return NV_ERR_NO_MEMORY;
    }
    *out = o;
    return NV_OK;
}

static uint32_t expected_params(uint32_t cls)
{
    switch (cls) {
    case NV01_DEVICE_0: return sizeof(nv_device_alloc);
    case NV20_SUBDEVICE_0: return sizeof(nv_subdevice_alloc);
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM: return sizeof(nv_memory_alloc);
    case FERMI_VASPACE_A: return version_major() >= 580 ? sizeof(nv_vaspace_alloc) : 48;
    case KEPLER_CHANNEL_GROUP_A: return sizeof(nv_tsg_alloc);
    case FERMI_CONTEXT_SHARE_A: return sizeof(nv_ctxshare_alloc);
    case GT200_DEBUGGER: return sizeof(nv_debugger_alloc);
    case VOLTA_CHANNEL_GPFIFO_A:
    case TURING_CHANNEL_GPFIFO_A:
    case AMPERE_CHANNEL_GPFIFO_A:
    case HOPPER_CHANNEL_GPFIFO_A: return sizeof(nv_channel_alloc);
    default: return 0; /* no parameters (usermode without params, engine objects) */
    }
}

static uint32_t rm_alloc(mnv_fd *f, nv_rm_alloc *a)
{
    uint32_t cls = a->hClass;
    if (cls == 0 || cls == 1) cls = NV01_ROOT_CLIENT; /* escape.c rewrites these */
    if (cls == NV01_ROOT_CLIENT) {
        obj *o = obj_new(0, 0, 0, cls, O_CLIENT, NULL);
        if (!o) return NV_ERR_NO_MEMORY;
        o->handle = o->client = 0xc1d00000u | (next_handle & 0xfffffu);
        o->owner = f;
        a->hObjectNew = o->handle;
        return NV_OK;
    }
    obj *client = find_client(a->hRoot, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    obj *parent = find(a->hRoot, a->hObjectParent);
    if (!parent) return NV_ERR_INVALID_OBJECT_PARENT;
    if (a->hObjectNew && find(a->hRoot, a->hObjectNew)) return NV_ERR_INSERT_DUPLICATE_NAME;
    uint32_t want = expected_params(cls);
    /* RM copies its own size from pAllocParms whatever paramsSize says; a
     * caller with an older layout makes it read past its struct. The mock
     * makes that mistake an error instead of garbage. */
    if (want && (!a->pAllocParms || a->paramsSize != want)) return NV_ERR_INVALID_PARAM_STRUCT;
    void *p = (void *)(uintptr_t)a->pAllocParms;
    mnv_gpu *gpu = parent->gpu;
    obj *o = NULL;
    uint32_t st = NV_OK;
    switch (cls) {
    case NV01_DEVICE_0: {
        nv_device_alloc *d = p;
        if (parent->kind != O_CLIENT) return NV_ERR_INVALID_OBJECT_PARENT;
        mnv_gpu *g = mnv_gpu_by_index(d->deviceId);
        if (!g) return NV_ERR_INVALID_ARGUMENT;
        if (d->hClientShare && d->hClientShare != client->handle) return NV_ERR_INVALID_OBJECT_HANDLE;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_DEVICE, g);
        break;
    }
    case NV20_SUBDEVICE_0:
        if (parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
        if (((nv_subdevice_alloc *)p)->subDeviceId != 0) return NV_ERR_INVALID_ARGUMENT;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_SUBDEVICE, gpu);
        break;
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM: st = alloc_memory(parent, cls, p, client->handle, &o); break;
    case FERMI_VASPACE_A:
        if (parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_VASPACE, gpu);
        if (o) o->flags = ((nv_vaspace_alloc *)p)->flags;
        break;
    case KEPLER_CHANNEL_GROUP_A:
        if (parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
        if (((nv_tsg_alloc *)p)->engineType != NV2080_ENGINE_TYPE_GRAPHICS) return NV_ERR_NOT_SUPPORTED;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_TSG, gpu);
        if (o && !(o->tsg = calloc(1, sizeof *o->tsg))) {
            free_tree(o);
            return NV_ERR_NO_MEMORY;
        }
        break;
    case FERMI_CONTEXT_SHARE_A: {
        nv_ctxshare_alloc *c = p;
        obj *vs = find(client->handle, c->hVASpace);
        if (parent->kind != O_TSG) return NV_ERR_INVALID_OBJECT_PARENT;
        if (!vs || vs->kind != O_VASPACE || vs->gpu != gpu) return NV_ERR_INVALID_OBJECT_HANDLE;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_CTXSHARE, gpu);
        break;
    }
    case GT200_DEBUGGER: {
        nv_debugger_alloc *d = p;
        if (parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
        if (d->hAppClient != client->handle) return NV_ERR_INVALID_CLIENT;
        o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_DEBUGGER, gpu);
        break;
    }
    case VOLTA_CHANNEL_GPFIFO_A:
    case TURING_CHANNEL_GPFIFO_A:
    case AMPERE_CHANNEL_GPFIFO_A:
    case HOPPER_CHANNEL_GPFIFO_A: st = alloc_channel(parent, cls, p, client->handle, &o); break;
    default:
        if (gpu && in_list(gpu->m->usermode_cls, 4, cls)) {
            if (parent->kind != O_SUBDEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
            int err = 0;
            mock_bo *bo = mock_bo_new(NULL, NV_USERMODE_SIZE, &err);
            if (!bo) return NV_ERR_NO_MEMORY;
            o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_USERMODE, gpu);
            if (o) {
                o->bo = bo;
                o->size = NV_USERMODE_SIZE;
            } else {
                mock_bo_unref(bo);
            }
        } else if (gpu && (cls == gpu->m->compute_cls || cls == gpu->m->copy_cls)) {
            if (parent->kind != O_CHANNEL) return NV_ERR_INVALID_OBJECT_PARENT;
            if (mnv_chan_has_engine(parent->chan)) return NV_ERR_STATE_IN_USE;
            o = obj_new(client->handle, parent->handle, a->hObjectNew, cls, O_ENGINE, gpu);
            if (o && mnv_chan_bind(parent->chan, cls)) {
                free_tree(o);
                return NV_ERR_NO_MEMORY;
            }
            if (o && gpu->usermode) mnv_chan_set_doorbell(parent->chan, gpu->usermode);
        } else {
            /* not a class of this GPU (e.g. ADA_COMPUTE_A on an H100) */
            return NV_ERR_INVALID_CLASS;
        }
        break;
    }
    if (st) return st;
    if (!o) return NV_ERR_NO_MEMORY;
    a->hObjectNew = o->handle;
    return NV_OK;
}

/* ** RM_CONTROL */
static uint32_t control(mnv_fd *f, nv_rm_control *c)
{
    obj *client = find_client(c->hClient, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    obj *o = find(c->hClient, c->hObject);
    if (!o) return NV_ERR_INVALID_OBJECT_HANDLE;
    void *p = (void *)(uintptr_t)c->params;
    uint32_t sz = c->paramsSize;
#define NEED(kind_, type_)                                                                                     \
    do {                                                                                                       \
        if (o->kind != (kind_)) return NV_ERR_NOT_SUPPORTED;                                                   \
        if (sz != sizeof(type_) || !p) return NV_ERR_INVALID_PARAM_STRUCT;                                     \
    } while (0)
    mnv_gpu *g = o->gpu;
    switch (c->cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
        NEED(O_CLIENT, nv_build_version);
        nv_build_version *v = p;
        memset(v, 0, sizeof *v);
        snprintf(v->driverVersionBuffer, sizeof v->driverVersionBuffer, "%s", mnv_driver_version());
        snprintf(v->versionBuffer, sizeof v->versionBuffer, "%s", mnv_driver_version());
        snprintf(v->driverBranch, sizeof v->driverBranch, "r%u_00", version_major());
        snprintf(v->titleBuffer, sizeof v->titleBuffer, "hcq mock GPU (an emulated nvidia.ko)");
        return NV_OK;
    }
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
        NEED(O_CLIENT, nv_gpu_id_info_v2);
        nv_gpu_id_info_v2 *v = p;
        mnv_gpu *hit = NULL;
        for (uint32_t i = 0; i < mnv_gpu_count(); i++)
            if (mnv_gpu_by_index(i)->gpu_id == v->gpuId) hit = mnv_gpu_by_index(i);
        /* RM answers only for a GPU some /dev/nvidiaN fd keeps initialized */
        if (!hit || !atomic_load(&hit->opened)) return NV_ERR_INVALID_ARGUMENT;
        v->deviceInstance = hit->index;
        v->subDeviceInstance = 0;
        v->gpuInstance = hit->index;
        v->numaId = -1;
        return NV_OK;
    }
    case NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
        NEED(O_DEVICE, nv_classlist);
        nv_classlist *v = p;
        uint32_t list[32], n = 0;
        static const uint32_t common[] = {NV01_DEVICE_0, NV20_SUBDEVICE_0, NV01_MEMORY_SYSTEM, NV01_MEMORY_LOCAL_USER,
                                          NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, FERMI_VASPACE_A, FERMI_CONTEXT_SHARE_A,
                                          KEPLER_CHANNEL_GROUP_A, GT200_DEBUGGER};
        for (size_t i = 0; i < BASE_ARRAY_LEN(common); i++) list[n++] = common[i];
        for (int i = 0; i < 4 && g->m->channel_cls[i]; i++) list[n++] = g->m->channel_cls[i];
        for (int i = 0; i < 4 && g->m->usermode_cls[i]; i++) list[n++] = g->m->usermode_cls[i];
        list[n++] = g->m->compute_cls;
        list[n++] = g->m->copy_cls;
        if (v->classList) {
            if (v->numClasses < n) return NV_ERR_INVALID_PARAM_STRUCT;
            memcpy((void *)(uintptr_t)v->classList, list, n * sizeof *list);
        }
        v->numClasses = n;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
        NEED(O_SUBDEVICE, nv_name_string);
        nv_name_string *v = p;
        if (v->gpuNameStringFlags != 0) return NV_ERR_INVALID_ARGUMENT;
        /* the ASCII member of the union is 64 bytes; what lies past it is
         * not the name (RM leaves the rest of the union as it was) */
        memset(&v->gpuNameString, 0xA5, sizeof v->gpuNameString);
        snprintf((char *)v->gpuNameString.ascii, sizeof v->gpuNameString.ascii, "%s", g->m->full_name);
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
        NEED(O_SUBDEVICE, nv_gid_info);
        nv_gid_info *v = p;
        if (v->flags != NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY) return NV_ERR_NOT_SUPPORTED;
        memcpy(v->data, g->uuid, 16);
        v->length = 16;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_GPC_MASK: {
        NEED(O_SUBDEVICE, nv_gr_gpc_mask);
        nv_gr_gpc_mask *v = p;
        if (v->grRouteInfo.flags || v->grRouteInfo.route) return NV_ERR_INVALID_ARGUMENT;
        v->gpcMask = 0;
        for (uint32_t i = 0; i < g->m->gpcs; i++)
            if (mnv_tpc_mask(g->m, i)) v->gpcMask |= 1u << i;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_TPC_MASK: {
        NEED(O_SUBDEVICE, nv_gr_tpc_mask);
        nv_gr_tpc_mask *v = p;
        if (v->grRouteInfo.flags || v->grRouteInfo.route) return NV_ERR_INVALID_ARGUMENT;
        v->tpcMask = mnv_tpc_mask(g->m, v->gpcId); /* 0 for a GPC that is not enabled */
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_INFO: {
        NEED(O_SUBDEVICE, nv_gr_get_info);
        nv_gr_get_info *v = p;
        if (!v->grInfoList || !v->grInfoListSize || v->grInfoListSize > 0x3f) return NV_ERR_INVALID_ARGUMENT;
        nv_info_entry *e = (nv_info_entry *)(uintptr_t)v->grInfoList;
        for (uint32_t i = 0; i < v->grInfoListSize; i++) {
            switch (e[i].index) {
            case NV_GR_INFO_SM_VERSION: e[i].data = g->m->sm_version; break;
            case NV_GR_INFO_MAX_WARPS_PER_SM: e[i].data = g->m->max_warps_per_sm; break;
            case NV_GR_INFO_LITTER_NUM_GPCS: e[i].data = g->m->gpcs; break;
            case NV_GR_INFO_LITTER_NUM_TPC_PER_GPC: e[i].data = g->m->tpcs_per_gpc; break;
            case NV_GR_INFO_LITTER_NUM_SM_PER_TPC: e[i].data = g->m->sms_per_tpc; break;
            default: e[i].data = 0; break;
            }
        }
        return NV_OK;
    }
    case NV2080_CTRL_CMD_FB_GET_INFO: {
        NEED(O_SUBDEVICE, nv_fb_get_info);
        nv_fb_get_info *v = p;
        if (!v->fbInfoList || !v->fbInfoListSize || v->fbInfoListSize > 0x39) return NV_ERR_INVALID_ARGUMENT;
        nv_info_entry *e = (nv_info_entry *)(uintptr_t)v->fbInfoList;
        for (uint32_t i = 0; i < v->fbInfoListSize; i++)
            e[i].data = e[i].index == NV_FB_INFO_RAM_SIZE || e[i].index == 8 ? (uint32_t)(g->g->vram_bytes >> 10)
                        : e[i].index == NV_FB_INFO_HEAP_FREE
                            ? (uint32_t)((g->g->vram_bytes - atomic_load(&g->g->vram_used)) >> 10)
                            : 0;
        return NV_OK;
    }
    case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: {
        if (o->kind != O_TSG) return NV_ERR_NOT_SUPPORTED;
        if (sz != (version_major() >= 575 ? 3u : 2u) || !p) return NV_ERR_INVALID_PARAM_STRUCT;
        atomic_store(&o->tsg->scheduled, ((uint8_t *)p)[0] != 0);
        mock_progress(); /* engines with pending work look again */
        return NV_OK;
    }
    case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: {
        NEED(O_CHANNEL, nv_work_submit_token);
        ((nv_work_submit_token *)p)->workSubmitToken = o->chid;
        return NV_OK;
    }
    case NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: {
        NEED(O_DEBUGGER, nv_mmu_fault_info);
        nv_mmu_fault_info *v = p;
        memset(v, 0, sizeof *v);
        pthread_mutex_lock(&g->fault_lock);
        v->count = g->nfaults;
        memcpy(v->mmuFaultInfoList, g->faults, sizeof v->mmuFaultInfoList);
        pthread_mutex_unlock(&g->fault_lock);
        return NV_OK;
    }
    default: {
        uint32_t st = NV_ERR_NOT_SUPPORTED;
        if (o->kind == O_SUBDEVICE && mnv_monitor_control(g, c->cmd, p, sz, &st)) return st;
        return NV_ERR_NOT_SUPPORTED; /* RM: a command not in the object's method table */
    }
    }
#undef NEED
}

/* ** RM_FREE, RM_MAP_MEMORY, RM_ALLOC_MEMORY */
static uint32_t rm_free(mnv_fd *f, nv_rm_free *a)
{
    obj *client = find_client(a->hRoot, f);
    if (!client) return NV_ERR_INVALID_CLIENT;
    if (a->hObjectOld == a->hRoot) {
        for (obj *o = objs; o;) { /* every object of the client, then the client */
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
    obj *o = find(a->hRoot, a->hObjectOld);
    if (!o || o->kind == O_CLIENT) return NV_ERR_INVALID_OBJECT_HANDLE;
    free_tree(o);
    return NV_OK;
}

static uint32_t map_memory(mnv_fd *f, nv_rm_map_memory *a)
{
    if (!find_client(a->hClient, f)) return NV_ERR_INVALID_CLIENT;
    obj *o = find(a->hClient, a->hMemory);
    if (!o || (o->kind != O_MEMORY && o->kind != O_USERMODE) || !o->bo) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!a->length || a->offset + a->length > o->size || (a->offset & 4095)) return NV_ERR_INVALID_LIMIT;
    mnv_fd *t = mock_fd_priv(a->fd, &mock_nv_driver);
    if (!t) return NV_ERR_INVALID_ARGUMENT;
    /* video memory and registers through a registered /dev/nvidiaN of the
     * same GPU; system memory through a /dev/nvidiactl */
    bool sysmem = o->kind == O_MEMORY && !o->bo->vram_of;
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
    obj *client = find_client(a->hRoot, NULL);
    if (!client) return NV_ERR_INVALID_CLIENT;
    obj *parent = find(a->hRoot, a->hObjectParent);
    if (!parent || parent->kind != O_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
    if (a->hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_INVALID_CLASS;
    if (!a->hObjectNew || find(a->hRoot, a->hObjectNew)) return NV_ERR_INSERT_DUPLICATE_NAME;
    if (!a->pMemory || (a->pMemory & 4095) || ((a->limit + 1) & 4095)) return NV_ERR_INVALID_ARGUMENT;
    obj *o = obj_new(client->handle, parent->handle, a->hObjectNew, a->hClass, O_MEMORY, parent->gpu);
    if (!o) return NV_ERR_NO_MEMORY;
    o->host_va = a->pMemory;
    o->size = a->limit + 1;
    return NV_OK;
}

int mnv_rm_ioctl(mnv_fd *f, unsigned long req, void *arg)
{
    uint32_t nr = NV_IOC_NR(req), size = NV_IOC_SIZE(req);
    bool ctl = f->kind == MNV_FD_CTL;
    if (nr == NV_ESC_REGISTER_FD) {
        if (size != sizeof(nv_register_fd)) return -EINVAL;
        if (!mnv_is_ctl_fd(((nv_register_fd *)arg)->ctl_fd)) return -EINVAL;
        f->registered = true;
        return 0;
    }
    if (nr == NV_ESC_CARD_INFO && ctl) {
        if (size % sizeof(nv_card_info) || !size) return -EINVAL;
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
    /* escapes check their struct size exactly, and which fd they come on */
    static const struct {
        uint32_t nr, size;
        bool on_ctl;
    } esc[] = {{NV_ESC_RM_ALLOC, sizeof(nv_rm_alloc), true},
               {NV_ESC_RM_CONTROL, sizeof(nv_rm_control), true},
               {NV_ESC_RM_FREE, sizeof(nv_rm_free), true},
               {NV_ESC_RM_MAP_MEMORY, sizeof(nv_rm_map_memory), true},
               {NV_ESC_RM_ALLOC_MEMORY, sizeof(nv_rm_alloc_memory), false}};
    size_t k = 0;
    while (k < BASE_ARRAY_LEN(esc) && esc[k].nr != nr) k++;
    if (k == BASE_ARRAY_LEN(esc) || esc[k].size != size || esc[k].on_ctl != ctl) return -EINVAL;
    pthread_mutex_lock(&rm_lock);
    uint32_t *status = mnv_status_field(f->kind, req, arg);
    switch (nr) {
    case NV_ESC_RM_ALLOC: *status = rm_alloc(f, arg); break;
    case NV_ESC_RM_CONTROL: *status = control(f, arg); break;
    case NV_ESC_RM_FREE: *status = rm_free(f, arg); break;
    case NV_ESC_RM_MAP_MEMORY: *status = map_memory(f, arg); break;
    case NV_ESC_RM_ALLOC_MEMORY: *status = alloc_os_memory(f, arg); break;
    }
    pthread_mutex_unlock(&rm_lock);
    return 0;
}

void mnv_rm_close_fd(mnv_fd *f)
{
    pthread_mutex_lock(&rm_lock);
    if (f->map_bo) mock_bo_unref(f->map_bo);
    f->map_bo = NULL;
    if (f->kind == MNV_FD_CTL) /* RM frees the clients of a closing fd */
        for (obj *o = objs; o;) {
            if (o->kind == O_CLIENT && o->owner == f) {
                nv_rm_free fr = {.hRoot = o->handle, .hObjectOld = o->handle};
                rm_free(f, &fr);
                o = objs;
            } else {
                o = o->next;
            }
        }
    pthread_mutex_unlock(&rm_lock);
}

void mnv_rm_fini(void)
{
    pthread_mutex_lock(&rm_lock);
    while (objs) {
        obj *o = objs;
        while (o && o->kind != O_CLIENT) o = o->next;
        free_tree(o ? o : objs);
    }
    next_chid = 0;
    pthread_mutex_unlock(&rm_lock);
}

/* ** for UVM */
bool mnv_rm_memory(uint32_t hclient, uint32_t hmem, mock_bo **bo, uint64_t *size, uint64_t *host_va)
{
    pthread_mutex_lock(&rm_lock);
    obj *o = find(hclient, hmem);
    bool ok = o && o->kind == O_MEMORY;
    if (ok) {
        *bo = o->bo;
        if (o->bo) mock_bo_ref(o->bo);
        *size = o->size;
        *host_va = o->host_va;
    }
    pthread_mutex_unlock(&rm_lock);
    return ok;
}

bool mnv_rm_vaspace(uint32_t hclient, uint32_t h, uint32_t *flags)
{
    pthread_mutex_lock(&rm_lock);
    obj *o = find(hclient, h);
    bool ok = o && o->kind == O_VASPACE;
    if (ok) *flags = o->flags;
    pthread_mutex_unlock(&rm_lock);
    return ok;
}

bool mnv_rm_channel_ready(uint32_t hclient, uint32_t h)
{
    pthread_mutex_lock(&rm_lock);
    obj *o = find(hclient, h);
    bool ok = o && o->kind == O_CHANNEL && mnv_chan_has_engine(o->chan);
    pthread_mutex_unlock(&rm_lock);
    return ok;
}

bool mnv_is_ctl_fd(int fd)
{
    mnv_fd *f = mock_fd_priv(fd, &mock_nv_driver);
    return f && f->kind == MNV_FD_CTL;
}
