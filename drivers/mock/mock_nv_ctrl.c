/* RM_CONTROL in the NV mock, in the order RM takes a control (open-gpu-
 * kernel-modules 580.95.05 src/nvidia/src/kernel/rmapi/control.c rmControl,
 * src/nvidia/src/libraries/resserv/src/rs_resource.c resControl):
 *   1. a NULL command (class, category and index 0) is NV_OK at once;
 *   2. the client must exist (and be this file's): NV_ERR_INVALID_CLIENT;
 *   3. params and paramsSize must be both set or both 0, and for a control
 *      the driver has, paramsSize must be its size: NV_ERR_INVALID_ARGUMENT;
 *   4. the object must exist: NV_ERR_INVALID_OBJECT_HANDLE;
 *   5. the object's class must export the control: NV_ERR_NOT_SUPPORTED;
 *   6. the parameters are copied in, the handler runs on the copy, and the
 *      copy goes back only on success.
 * Sizes and which drivers have a control: nv_names.c's table. */
#include "drivers/mock/mock_nv_obj.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

/* the object kind whose class exports cmd (its class is cmd's 31:16) */
static int exporter(uint32_t cmd)
{
    switch (cmd >> 16) {
    case 0x0000: return O_CLIENT;
    case 0x0080: return O_DEVICE;
    case 0x2080: return O_SUBDEVICE;
    case 0xA06C: return O_TSG;
    case 0xC36F: return O_CHANNEL; /* KernelChannel exports the C36F controls for every channel class */
    case 0x83DE: return O_DEBUGGER;
    default: return 0;
    }
}

/* NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES: the target channel's SM
 * exceptions and MMU fault (GSP answers it: ROUTE_TO_PHYSICAL in
 * g_kernel_sm_debugger_session_nvoc.c; the checks are ctrl83dedebug.h's) */
static uint32_t sm_error_states(mnv_obj *dbg, nv_sm_error_states *v)
{
    mnv_obj *ch = mnv_find(dbg->client, v->hTargetChannel);
    if (!ch || ch->kind != O_CHANNEL || ch->gpu != dbg->gpu) return NV_ERR_INVALID_OBJECT_HANDLE;
    uint32_t sms = dbg->gpu->m->enabled_tpcs * dbg->gpu->m->sms_per_tpc;
    if (v->numSMsToRead > NV83DE_MAX_SMS_PER_CALL || v->startingSM >= sms) return NV_ERR_INVALID_ARGUMENT;
    mnv_chan_sm_errors(ch->chan, v, sms);
    return NV_OK;
}

/* NV2080_CTRL_CMD_PERF_BOOST (ctrl2080perf.h; kern_perf_boost.c passes it
 * to GSP): CMD 0 clears, 1 and 2 hold the highest P-state for `duration`
 * seconds (at most 3600, or until cleared) */
static uint32_t perf_boost(mnv_gpu *g, const nv_perf_boost *v)
{
    uint32_t cmd = NV_PERF_BOOST_CMD(v->flags);
    if (cmd > 2) return NV_ERR_INVALID_ARGUMENT;
    if (cmd && v->duration > NV_PERF_BOOST_DURATION_MAX && v->duration != NV_PERF_BOOST_DURATION_INFINITE)
        return NV_ERR_INVALID_ARGUMENT;
    uint64_t until = !cmd ? 0
                     : v->duration == NV_PERF_BOOST_DURATION_INFINITE ? UINT64_MAX
                                                                       : hcq_now_ns() + v->duration * 1000000000ull;
    atomic_store(&g->boost_until_ns, until);
    return NV_OK;
}

/* NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE (kern_mem_sys_ctrl.c
 * kmemsysFlushGpuCache): the mock's memory is coherent, so a flush has
 * nothing to write back; what RM refuses, it refuses, and an address-array
 * flush RM answers NV_ERR_GENERIC, as RM does */
static uint32_t flush_gpu_cache(mnv_gpu *g, const nv_fb_flush_gpu_cache *v)
{
    uint32_t st = NV_OK;
    if (v->flags & (NV_FB_FLUSH_WRITE_BACK | NV_FB_FLUSH_INVALIDATE)) {
        if (NV_FB_FLUSH_APERTURE(v->flags) > 2) return NV_ERR_INVALID_ARGUMENT;
        if (!(v->flags & NV_FB_FLUSH_FULL_CACHE)) {
            if (!v->addressArraySize || v->addressArraySize > NV_FB_FLUSH_MAX_ADDRESSES || !v->memBlockSizeBytes)
                st = NV_ERR_INVALID_ARGUMENT;
            else st = NV_ERR_GENERIC;
        }
    }
    if (st == NV_OK) atomic_fetch_add(&g->cache_flushes, 1);
    return st;
}

static uint32_t handle(mnv_obj *o, nv_rm_control *c, void *p, uint32_t sz)
{
    mnv_gpu *g = o->gpu;
    switch (c->cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
        nv_build_version *v = p;
        memset(v, 0, sizeof *v);
        snprintf(v->driverVersionBuffer, sizeof v->driverVersionBuffer, "%s", mnv_driver_version());
        snprintf(v->versionBuffer, sizeof v->versionBuffer, "%s", mnv_driver_version());
        snprintf(v->driverBranch, sizeof v->driverBranch, "r%u_00", mnv_major());
        snprintf(v->titleBuffer, sizeof v->titleBuffer, "hcq mock GPU (an emulated nvidia.ko)");
        return NV_OK;
    }
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
        nv_gpu_id_info_v2 *v = p;
        mnv_gpu *hit = NULL;
        for (uint32_t i = 0; i < mnv_gpu_count(); i++)
            if (mnv_gpu_by_index(i)->gpu_id == v->gpuId) hit = mnv_gpu_by_index(i);
        /* RM answers only for a GPU some /dev/nvidiaN fd keeps initialized */
        if (!hit || !atomic_load(&hit->opened)) return NV_ERR_INVALID_ARGUMENT;
        /* gpumgrGetGpuIdInfoV2 (gpu_mgr.c): the flags rebuilt, IN_USE
         * (bit 0) when some client has a device on it; *model*: the board
         * id is the GPU's index */
        v->deviceInstance = hit->index;
        v->subDeviceInstance = 0;
        v->gpuInstance = hit->index;
        v->boardId = hit->index;
        v->numaId = -1;
        v->gpuFlags = 0;
        for (mnv_obj *d = mnv_obj_first(); d; d = d->next)
            if (d->kind == O_DEVICE && d->gpu == hit) v->gpuFlags = 1;
        return NV_OK;
    }
    case NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
        nv_classlist *v = p;
        uint32_t list[32], n = 0;
        static const uint32_t common[] = {NV01_DEVICE_0, NV20_SUBDEVICE_0, NV01_MEMORY_SYSTEM, NV01_MEMORY_LOCAL_USER, NV01_MEMORY_VIRTUAL,
                                          NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, FERMI_VASPACE_A, FERMI_CONTEXT_SHARE_A,
                                          KEPLER_CHANNEL_GROUP_A, GT200_DEBUGGER};
        for (size_t i = 0; i < BASE_ARRAY_LEN(common); i++) list[n++] = common[i];
        for (int i = 0; i < 4 && g->f->channel_classes[i]; i++) list[n++] = g->f->channel_classes[i];
        for (int i = 0; i < 4 && g->f->usermode_classes[i]; i++) list[n++] = g->f->usermode_classes[i];
        list[n++] = g->f->compute_cls;
        list[n++] = g->f->copy_cls;
        if (v->classList) {
            if (v->numClasses < n) return NV_ERR_INVALID_PARAM_STRUCT;
            memcpy((void *)(uintptr_t)v->classList, list, n * sizeof *list);
        }
        v->numClasses = n;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
        nv_name_string *v = p;
        if (v->gpuNameStringFlags != 0) return NV_ERR_INVALID_ARGUMENT;
        /* the ASCII member of the union is 64 bytes; what lies past it is
         * not the name (RM leaves the rest of the union as it was) */
        memset(&v->gpuNameString, 0xA5, sizeof v->gpuNameString);
        snprintf((char *)v->gpuNameString.ascii, sizeof v->gpuNameString.ascii, "%s", g->m->full_name);
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
        /* gpuGetGidInfo (gpu.c): TYPE (bit 2) must be SHA1; FORMAT BINARY
         * gives the 16 bytes, else the "GPU-" string with its NUL (41
         * bytes, nvGetUuidString in gpu_uuid.c) */
        nv_gid_info *v = p;
        if (v->flags & 4u) return NV_ERR_INVALID_FLAGS;
        if ((v->flags & 3u) == NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY) {
            memcpy(v->data, g->uuid, 16);
            v->length = 16;
        } else {
            const uint8_t *u = g->uuid;
            snprintf((char *)v->data, sizeof v->data,
                     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                     u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
            v->length = 41;
        }
        return NV_OK;
    }
    /* subdeviceCtrlCmdKGrGetGpcMask_IMPL, ..TpcMask_IMPL (kernel_graphics.c):
     * without MIG the route is not looked at; a GPC past the GPU's count
     * reads 0 (kgrmgrGetLegacyTpcMask_IMPL) */
    case NV2080_CTRL_CMD_GR_GET_GPC_MASK: {
        nv_gr_gpc_mask *v = p;
        v->gpcMask = 0;
        for (uint32_t i = 0; i < g->m->gpcs; i++)
            if (mnv_tpc_mask(g->m, i)) v->gpcMask |= 1u << i;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_TPC_MASK: {
        nv_gr_tpc_mask *v = p;
        v->tpcMask = mnv_tpc_mask(g->m, v->gpcId); /* 0 for a GPC that is not enabled */
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_INFO: {
        /* subdeviceCtrlCmdKGrGetInfo (kernel_graphics.c): the list is
         * required, its size clamped to NV2080_CTRL_GR_INFO_MAX_SIZE (0x3a),
         * 0 refused, and each index below that */
        nv_gr_get_info *v = p;
        uint32_t n = BASE_MIN(v->grInfoListSize, NV_GR_INFO_MAX);
        if (!v->grInfoList || !n) return NV_ERR_INVALID_ARGUMENT;
        nv_info_entry *e = (nv_info_entry *)(uintptr_t)v->grInfoList;
        for (uint32_t i = 0; i < n; i++)
            if (e[i].index >= NV_GR_INFO_MAX) return NV_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 0; i < n; i++) {
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
        /* converted to FB_GET_INFO_V2 (interface/deprecated/
         * rmapi_deprecated_control.c), which refuses a size of 0 or past
         * NV2080_CTRL_FB_INFO_MAX_LIST_SIZE (kern_mem_sys_ctrl.c) */
        nv_fb_get_info *v = p;
        if (!v->fbInfoList || !v->fbInfoListSize || v->fbInfoListSize > NV_FB_INFO_MAX_LIST) return NV_ERR_INVALID_ARGUMENT;
        nv_info_entry *e = (nv_info_entry *)(uintptr_t)v->fbInfoList;
        for (uint32_t i = 0; i < v->fbInfoListSize; i++)
            e[i].data = e[i].index == NV_FB_INFO_RAM_SIZE || e[i].index == 8 ? (uint32_t)(g->g->vram_bytes >> 10)
                        : e[i].index == NV_FB_INFO_HEAP_FREE
                            ? (uint32_t)((g->g->vram_bytes - atomic_load(&g->g->vram_used)) >> 10)
                            : 0;
        return NV_OK;
    }
    case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: {
        /* kchangrpapiCtrlCmdGpFifoSchedule_IMPL (kernel_channel_group_api.c):
         * every channel on a vaspace UVM owns must have been registered
         * with UVM first (kchannelIsSchedulable_IMPL: NV_ERR_INVALID_STATE) */
        for (mnv_obj *ch = mnv_obj_first(); ch; ch = ch->next)
            if (ch->kind == O_CHANNEL && ch->client == o->client && ch->parent == o->handle &&
                (ch->flags & NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED) && !ch->uvm_bound)
                return NV_ERR_INVALID_STATE;
        atomic_store(&o->tsg->scheduled, ((uint8_t *)p)[0] != 0);
        mock_progress(); /* engines with pending work look again */
        return NV_OK;
    }
    case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: {
        ((nv_work_submit_token *)p)->workSubmitToken = o->chid;
        return NV_OK;
    }
    case NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: {
        /* ksmdbgssnCtrlCmdDebugReadMMUFaultInfo_IMPL,
         * kgrctxLookupMmuFaultInfo_IMPL (kernel_graphics_context.c): the
         * debugged object's graphics context's faults, tail to head
         * (oldest first). *Model*: an object freed since is
         * NV_ERR_INVALID_OBJECT */
        nv_mmu_fault_info *v = p;
        mnv_obj *t = mnv_find(o->target_client, o->target);
        mnv_obj *ch = t ? mnv_find(t->client, t->parent) : NULL;
        mnv_obj *grp = ch ? mnv_find(ch->client, ch->parent) : NULL;
        if (!grp || !grp->tsg) return NV_ERR_INVALID_OBJECT;
        memset(v, 0, sizeof *v);
        pthread_mutex_lock(&g->fault_lock);
        const mnv_fault_ring *r = &grp->tsg->gr_faults;
        for (uint32_t i = r->tail; i != r->head; i = (i + 1) % 4) v->mmuFaultInfoList[v->count++] = r->e[i];
        pthread_mutex_unlock(&g->fault_lock);
        return NV_OK;
    }
    case NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES: return sm_error_states(o, p);
    case NV2080_CTRL_CMD_PERF_BOOST: return perf_boost(g, p);
    case NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE: return flush_gpu_cache(g, p);
    default: {
        uint32_t st = NV_ERR_NOT_SUPPORTED;
        if (mnv_monitor_control(g, c->cmd, p, sz, &st)) return st;
        return NV_ERR_NOT_SUPPORTED;
    }
    }
    return NV_ERR_NOT_SUPPORTED;
}

uint32_t mnv_rm_control(mnv_fd *f, nv_rm_control *c)
{
    if (!(c->cmd & 0xffffu)) return NV_OK; /* NVXXXX_CTRL_CMD_NULL */
    if (!mnv_find_client(c->hClient, f)) return NV_ERR_INVALID_CLIENT;
    uint32_t sz = c->paramsSize, want = nv_ctrl_params(c->cmd, mnv_major());
    if ((sz != 0) != (c->params != 0) || (want && sz != want)) return NV_ERR_INVALID_ARGUMENT;
    mnv_obj *o = mnv_find(c->hClient, c->hObject);
    if (!o) return NV_ERR_INVALID_OBJECT_HANDLE;
    /* a control the object's class does not export, or this driver lacks */
    if (!want || (int)o->kind != exporter(c->cmd)) return NV_ERR_NOT_SUPPORTED;
    void *p = malloc(sz);
    if (!p) return NV_ERR_NO_MEMORY;
    memcpy(p, (const void *)(uintptr_t)c->params, sz);
    uint32_t st = handle(o, c, p, sz);
    if (st == NV_OK) memcpy((void *)(uintptr_t)c->params, p, sz);
    free(p);
    return st;
}
