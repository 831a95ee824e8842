/* The NVIDIA device files, for the tracer: RM escapes on /dev/nvidiactl and
 * /dev/nvidiaN and UVM commands on /dev/nvidia-uvm, by name, with their
 * handles, classes, control commands and RM status by name, from the NV
 * backend's ABI definitions (drivers/nv/nv_abi.h, nv_names.c).
 *
 * The tracer hands decoders a copy of the argument; what it points to
 * (allocation and control parameters) is read with trace_read, and only
 * after RM accepted the call. An RM status is printed only for calls the
 * kernel completed: when the ioctl itself failed, the status field holds
 * whatever the program left there, not RM's answer. An escape whose size
 * is not the one we know is an ABI we do not speak: it prints raw.
 *
 * With stream capture on, the allocations and mappings that locate a
 * channel's GPFIFO ring and USERD go to trace_streams.c. */
#include "drivers/trace.h"

#include "drivers/nv/nv_abi.h"

#include <ctype.h>
#include <string.h>

static bool is_ctl(const char *p) { return !strcmp(p, "/dev/nvidiactl"); }
static bool is_uvm(const char *p) { return !strncmp(p, "/dev/nvidia-uvm", 15); }
static bool is_gpu(const char *p)
{
    if (strncmp(p, "/dev/nvidia", 11) || !p[11]) return false;
    for (p += 11; *p; p++)
        if (!isdigit((unsigned char)*p)) return false;
    return true;
}

/* ** RM escapes: sizes from nv_names.c's escape table (the one the mock
 * checks and the backend's ioctl numbers are asserted against) */
static size_t escape_size(uint32_t nr)
{
    const nv_escape_desc *d = nv_escape_desc_of(nr);
    return d ? d->size : 0; /* 0: CARD_INFO (a multiple), CHECK_VERSION_STR (raw), unknown */
}

/* the escape a request is, if it is one of ours with the size we know */
static bool escape_of(unsigned long req, uint32_t *nr)
{
    if (((req >> 8) & 0xffu) != 0x46u) return false; /* type 'F' */
    *nr = NV_IOC_NR(req);
    size_t want = escape_size(*nr);
    const nv_escape_desc *d = nv_escape_desc_of(*nr);
    /* RM_ALLOC's NVOS64 form: named, decoded as NVOS21 where they agree */
    if (d && d->size2 && NV_IOC_SIZE(req) == d->size2) return true;
    return !want || NV_IOC_SIZE(req) == want;
}

static const char *rm_name(unsigned long req)
{
    uint32_t nr;
    return escape_of(req, &nr) ? nv_escape_name(nr) : NULL;
}

static void put_class(trace_line *l, const char *key, uint32_t cls)
{
    const char *n = nv_class_name(cls);
    if (n) trace_str(l, key, n);
    else trace_hex(l, key, cls);
}

static void put_status(trace_line *l, uint32_t status) { trace_str(l, "status", nv_status_name(status)); }

/* the parameters' size for the classes whose parameters we decode: what
 * RM copies (the 580 layouts alloc_params reads) */
static size_t alloc_params_size(uint32_t cls)
{
    switch (cls) {
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM:
    case NV01_MEMORY_VIRTUAL:
    case FERMI_VASPACE_A:
    case KEPLER_CHANNEL_GROUP_A:
    case FERMI_CONTEXT_SHARE_A:
    case VOLTA_CHANNEL_GPFIFO_A:
    case TURING_CHANNEL_GPFIFO_A:
    case AMPERE_CHANNEL_GPFIFO_A:
    case HOPPER_CHANNEL_GPFIFO_A:
    case NV01_DEVICE_0:
    case NV20_SUBDEVICE_0: return nv_class_params(cls, 580);
    }
    return 0;
}

/* the parameters of an allocation RM accepted, for the classes we allocate */
static void alloc_params(trace_line *l, uint32_t cls, const void *p)
{
    switch (cls) {
    case NV01_MEMORY_LOCAL_USER:
    case NV01_MEMORY_SYSTEM: {
        const nv_memory_alloc *m = p;
        trace_u64(l, "size", m->size);
        trace_u64(l, "type", m->type);
        trace_hex(l, "flags", m->flags);
        trace_hex(l, "attr", m->attr);
        trace_hex(l, "attr2", m->attr2);
        trace_hex(l, "offset", m->offset);
        break;
    }
    case FERMI_VASPACE_A: {
        const nv_vaspace_alloc *v = p;
        trace_hex(l, "vaBase", v->vaBase);
        trace_hex(l, "vaSize", v->vaSize);
        trace_hex(l, "vaFlags", v->flags);
        break;
    }
    case KEPLER_CHANNEL_GROUP_A:
        trace_u64(l, "engineType", ((const nv_tsg_alloc *)p)->engineType);
        break;
    case FERMI_CONTEXT_SHARE_A: {
        const nv_ctxshare_alloc *c = p;
        trace_hex(l, "hVASpace", c->hVASpace);
        trace_u64(l, "subctxId", c->subctxId);
        break;
    }
    case VOLTA_CHANNEL_GPFIFO_A:
    case TURING_CHANNEL_GPFIFO_A:
    case AMPERE_CHANNEL_GPFIFO_A:
    case HOPPER_CHANNEL_GPFIFO_A: {
        const nv_channel_alloc *c = p;
        trace_hex(l, "gpFifoOffset", c->gpFifoOffset);
        trace_u64(l, "gpFifoEntries", c->gpFifoEntries);
        trace_hex(l, "hUserd", c->hUserdMemory[0]);
        trace_hex(l, "userdOffset", c->userdOffset[0]);
        trace_u64(l, "engineType", c->engineType);
        break;
    }
    case NV01_DEVICE_0:
        trace_u64(l, "deviceId", ((const nv_device_alloc *)p)->deviceId);
        break;
    case NV20_SUBDEVICE_0:
        trace_u64(l, "subDeviceId", ((const nv_subdevice_alloc *)p)->subDeviceId);
        break;
    case NV01_MEMORY_VIRTUAL: {
        const nv_memory_virtual_alloc *v = p;
        trace_hex(l, "offset", v->offset);
        trace_hex(l, "limit", v->limit);
        trace_hex(l, "hVASpace", v->hVASpace);
        break;
    }
    }
}

/* the results of a control RM accepted, for the commands we send; a size
 * other than ours (another driver's layout) is left alone */
static void control_params(trace_line *l, uint32_t cmd, const void *p, uint32_t size)
{
    switch (cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2:
        if (size == sizeof(nv_build_version) || size == NV_BUILD_VERSION_OLD_SIZE) {
            char v[NV_BUILD_VERSION_STRING];
            memcpy(v, ((const nv_build_version *)p)->driverVersionBuffer, sizeof v);
            v[sizeof v - 1] = 0;
            trace_str(l, "version", v);
        }
        break;
    case NV0080_CTRL_CMD_GPU_GET_CLASSLIST:
        if (size == sizeof(nv_classlist)) trace_u64(l, "numClasses", ((const nv_classlist *)p)->numClasses);
        break;
    case NV2080_CTRL_CMD_GPU_GET_NAME_STRING:
        if (size == sizeof(nv_name_string)) {
            char n[sizeof(((nv_name_string *)0)->gpuNameString.ascii) + 1];
            memcpy(n, ((const nv_name_string *)p)->gpuNameString.ascii, sizeof n - 1);
            n[sizeof n - 1] = 0;
            trace_str(l, "name", n);
        }
        break;
    case NV2080_CTRL_CMD_GR_GET_INFO:
        if (size == sizeof(nv_gr_get_info)) trace_u64(l, "entries", ((const nv_gr_get_info *)p)->grInfoListSize);
        break;
    case NV2080_CTRL_CMD_FB_GET_INFO:
        if (size == sizeof(nv_fb_get_info)) trace_u64(l, "entries", ((const nv_fb_get_info *)p)->fbInfoListSize);
        break;
    case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN:
        if (size == sizeof(nv_work_submit_token))
            trace_hex(l, "token", ((const nv_work_submit_token *)p)->workSubmitToken);
        break;
    case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
        if (size >= 1) trace_u64(l, "enable", ((const nv_gpfifo_schedule *)p)->bEnable);
        break;
    case NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO:
        if (size == sizeof(nv_mmu_fault_info)) {
            const nv_mmu_fault_info *f = p;
            trace_u64(l, "faults", f->count);
            if (f->count) trace_hex(l, "faultAddress", f->mmuFaultInfoList[0].faultAddress);
        }
        break;
    }
}

static void rm_fields(trace_line *l, const trace_call *call)
{
    uint32_t nr;
    const void *arg = call->arg;
    bool before = call->before;
    if (!arg || !escape_of(call->req, &nr)) return;
    /* after: the kernel ran the escape (ret >= 0), so the status is RM's */
    bool ran = !before && call->ret >= 0;
    /* the ioctl's own argument size, on every escape: a program built
     * against another layout shows here first */
    if (before) trace_u64(l, "size", NV_IOC_SIZE(call->req));
    trace_streams *st = tracer_streams(call->t);
    switch (nr) {
    case NV_ESC_RM_ALLOC: {
        const nv_rm_alloc *a = arg;
        nv_rm_alloc view;
        if (NV_IOC_SIZE(call->req) == sizeof(nv_rm_alloc64)) { /* the NVOS64 form */
            const nv_rm_alloc64 *a64 = arg;
            view = (nv_rm_alloc){a64->hRoot, a64->hObjectParent, a64->hObjectNew, a64->hClass, a64->pAllocParms,
                                 a64->paramsSize, a64->status};
            a = &view;
        }
        if (before) {
            trace_hex(l, "hRoot", a->hRoot);
            trace_hex(l, "hParent", a->hObjectParent);
            trace_hex(l, "hNew", a->hObjectNew);
            put_class(l, "hClass", a->hClass);
            /* RM ignores paramsSize and copies the class's own size: both
             * are shown, so a caller that disagrees with RM is visible */
            trace_u64(l, "paramsSize", a->paramsSize);
            const nv_class_desc *cd = nv_class_desc_of(a->hClass);
            if (cd) {
                uint32_t n = cd->rule == NV_PARAMS_REQUIRED || (cd->rule == NV_PARAMS_OPTIONAL && a->pAllocParms)
                                 ? nv_class_params(a->hClass, 580)
                                 : 0;
                if (n != a->paramsSize) trace_u64(l, "rmCopies", n);
            }
        } else if (ran) {
            put_status(l, a->status);
            if (a->status == NV_OK) {
                trace_hex(l, "hObject", a->hObjectNew);
                uint8_t params[512];
                size_t n = alloc_params_size(a->hClass);
                bool have = n && n <= sizeof params && a->pAllocParms && trace_read(params, a->pAllocParms, n);
                if (have) alloc_params(l, a->hClass, params);
                if (st)
                    trace_streams_nv_alloc(st, a->hRoot, a->hObjectParent, a->hObjectNew, a->hClass,
                                           have ? params : NULL, have ? n : 0);
            }
        }
        break;
    }
    case NV_ESC_RM_CONTROL: {
        const nv_rm_control *c = arg;
        if (before) {
            trace_hex(l, "hClient", c->hClient);
            trace_hex(l, "hObject", c->hObject);
            const char *n = nv_ctrl_name(c->cmd);
            if (n) trace_str(l, "control", n);
            else trace_hex(l, "control", c->cmd);
            trace_u64(l, "paramsSize", c->paramsSize);
        } else if (ran) {
            put_status(l, c->status);
            uint8_t params[4096];
            if (c->status == NV_OK && c->params && c->paramsSize <= sizeof params &&
                trace_read(params, c->params, c->paramsSize))
                control_params(l, c->cmd, params, c->paramsSize);
        }
        break;
    }
    case NV_ESC_RM_FREE: {
        const nv_rm_free *f = arg;
        if (before) {
            trace_hex(l, "hRoot", f->hRoot);
            trace_hex(l, "hParent", f->hObjectParent);
            trace_hex(l, "hObject", f->hObjectOld);
        } else if (ran) {
            put_status(l, f->status);
            if (f->status == NV_OK && st) trace_streams_nv_free(st, f->hRoot, f->hObjectOld);
        }
        break;
    }
    case NV_ESC_RM_ALLOC_MEMORY: {
        const nv_rm_alloc_memory *m = arg;
        if (before) {
            trace_hex(l, "hRoot", m->hRoot);
            trace_hex(l, "hParent", m->hObjectParent);
            trace_hex(l, "hNew", m->hObjectNew);
            put_class(l, "hClass", m->hClass);
            trace_hex(l, "flags", m->flags);
            trace_hex(l, "pMemory", m->pMemory);
            trace_hex(l, "limit", m->limit);
        } else if (ran) {
            put_status(l, m->status);
            /* memory RM describes from the process's own pages: its CPU address */
            if (m->status == NV_OK && st && m->hClass == NV01_MEMORY_SYSTEM_OS_DESCRIPTOR)
                trace_streams_nv_os_memory(st, m->hRoot, m->hObjectNew, m->pMemory, m->limit + 1);
        }
        break;
    }
    case NV_ESC_RM_MAP_MEMORY: {
        const nv_rm_map_memory *m = arg;
        if (before) {
            trace_hex(l, "hClient", m->hClient);
            trace_hex(l, "hDevice", m->hDevice);
            trace_hex(l, "hMemory", m->hMemory);
            trace_hex(l, "offset", m->offset);
            trace_hex(l, "length", m->length);
            trace_hex(l, "flags", m->flags);
            trace_i64(l, "mmap_fd", m->fd);
        } else if (ran) {
            put_status(l, m->status);
            if (m->status == NV_OK) {
                trace_hex(l, "pLinearAddress", m->pLinearAddress);
                /* the mmap of m->fd that follows maps this memory */
                if (st) trace_streams_nv_map_memory(st, m->hClient, m->hMemory, m->offset, m->length, m->fd);
            }
        }
        break;
    }
    case NV_ESC_RM_MAP_MEMORY_DMA: {
        const nv_rm_map_memory_dma *m = arg;
        if (before) {
            trace_hex(l, "hClient", m->hClient);
            trace_hex(l, "hDevice", m->hDevice);
            trace_hex(l, "hDma", m->hDma);
            trace_hex(l, "hMemory", m->hMemory);
            trace_hex(l, "offset", m->offset);
            trace_hex(l, "length", m->length);
            trace_hex(l, "flags", m->flags);
        } else if (ran) {
            put_status(l, m->status);
            if (m->status == NV_OK) trace_hex(l, "dmaOffset", m->dmaOffset);
        }
        break;
    }
    case NV_ESC_RM_UNMAP_MEMORY_DMA: {
        const nv_rm_unmap_memory_dma *m = arg;
        if (before) {
            trace_hex(l, "hDma", m->hDma);
            trace_hex(l, "hMemory", m->hMemory);
            trace_hex(l, "dmaOffset", m->dmaOffset);
        } else if (ran) {
            put_status(l, m->status);
        }
        break;
    }
    case NV_ESC_CARD_INFO:
        if (ran) {
            const nv_card_info *c = arg;
            unsigned n = 0;
            for (unsigned i = 0; i < NV_CARD_INFO_MAX; i++)
                if (c[i].valid) {
                    if (!n) {
                        trace_hex(l, "gpu_id", c[i].gpu_id);
                        trace_hex(l, "pci_device", c[i].pci_device_id);
                        trace_u64(l, "minor", c[i].minor_number);
                    }
                    n++;
                }
            trace_u64(l, "gpus", n);
        }
        break;
    case NV_ESC_REGISTER_FD:
        if (before) trace_i64(l, "ctl_fd", ((const nv_register_fd *)arg)->ctl_fd);
        break;
    default: /* named, fields not decoded: the bytes both ways */
        if (call->arg_size <= 4096 && (before || ran)) trace_bytes(l, before ? "in" : "out", arg, call->arg_size);
        break;
    }
}

/* ** UVM: the command is the plain number; every struct ends in rmStatus */
static const char *uvm_name(unsigned long req) { return req >> 32 ? NULL : nv_uvm_name((uint32_t)req); }

/* UVM commands are plain numbers: the argument's size is the command's */
static size_t uvm_arg_size(unsigned long req) { return nv_uvm_arg_size(req); /* 0: unknown, not read */ }

static void put_uuid(trace_line *l, const uint8_t *u) { trace_bytes(l, "gpu_uuid", u, 16); }

static void uvm_fields(trace_line *l, const trace_call *c)
{
    const void *arg = c->arg;
    bool before = c->before;
    if (!arg) return;
    uint32_t status = NV_OK;
    switch ((uint32_t)c->req) {
    case NV_UVM_INITIALIZE: {
        const nv_uvm_initialize *a = arg;
        if (before) trace_hex(l, "flags", a->flags);
        status = a->rmStatus;
        break;
    }
    case NV_UVM_MM_INITIALIZE: {
        const nv_uvm_mm_initialize *a = arg;
        if (before) trace_i64(l, "uvm_fd", a->uvmFd);
        status = a->rmStatus;
        break;
    }
    case NV_UVM_REGISTER_GPU: {
        const nv_uvm_register_gpu *a = arg;
        if (before) {
            put_uuid(l, a->gpu_uuid);
            trace_i64(l, "ctl_fd", a->rmCtrlFd);
            trace_hex(l, "hClient", a->hClient);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_UNREGISTER_GPU:
    case NV_UVM_UNREGISTER_GPU_VASPACE: {
        const nv_uvm_unregister_gpu *a = arg;
        if (before) put_uuid(l, a->gpu_uuid);
        status = a->rmStatus;
        break;
    }
    case NV_UVM_REGISTER_GPU_VASPACE: {
        const nv_uvm_register_gpu_vaspace *a = arg;
        if (before) {
            put_uuid(l, a->gpuUuid);
            trace_hex(l, "hClient", a->hClient);
            trace_hex(l, "hVaSpace", a->hVaSpace);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_REGISTER_CHANNEL: {
        const nv_uvm_register_channel *a = arg;
        if (before) {
            trace_hex(l, "hClient", a->hClient);
            trace_hex(l, "hChannel", a->hChannel);
            trace_hex(l, "base", a->base);
            trace_hex(l, "length", a->length);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_UNREGISTER_CHANNEL: {
        const nv_uvm_unregister_channel *a = arg;
        if (before) {
            trace_hex(l, "hClient", a->hClient);
            trace_hex(l, "hChannel", a->hChannel);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_CREATE_EXTERNAL_RANGE: {
        const nv_uvm_create_external_range *a = arg;
        if (before) {
            trace_hex(l, "base", a->base);
            trace_hex(l, "length", a->length);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_MAP_EXTERNAL_ALLOCATION: {
        const nv_uvm_map_external_allocation *a = arg;
        if (before) {
            trace_hex(l, "base", a->base);
            trace_hex(l, "length", a->length);
            trace_hex(l, "offset", a->offset);
            trace_hex(l, "hClient", a->hClient);
            trace_hex(l, "hMemory", a->hMemory);
            trace_u64(l, "gpus", a->gpuAttributesCount);
        } else if (c->ret >= 0 && a->rmStatus == NV_OK && tracer_streams(c->t)) {
            trace_streams_nv_uvm_map(tracer_streams(c->t), a->hClient, a->hMemory, a->base, a->length, a->offset);
        }
        status = a->rmStatus;
        break;
    }
    case NV_UVM_FREE: {
        const nv_uvm_free *a = arg;
        if (before) {
            trace_hex(l, "base", a->base);
            trace_hex(l, "length", a->length);
        }
        status = a->rmStatus;
        break;
    }
    }
    if (!before && c->ret >= 0 && uvm_arg_size(c->req)) put_status(l, status);
}

const trace_decoder trace_nvidiactl_decoder = {"nvidiactl", is_ctl, rm_name, NULL, rm_fields};
const trace_decoder trace_nvidia_uvm_decoder = {"nvidia-uvm", is_uvm, uvm_name, uvm_arg_size, uvm_fields};
const trace_decoder trace_nvidia_gpu_decoder = {"nvidiaN", is_gpu, rm_name, NULL, rm_fields};
