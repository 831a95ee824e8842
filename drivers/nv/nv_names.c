/* The NVIDIA driver's numbers as tables, for the backend, the mock and the
 * tracer: RM status codes, classes (with their allocation parameters),
 * control commands (with their sizes), escapes (sizes, device files, the
 * status field) and UVM commands. The numbers are nv_abi.h's; one table
 * each, looked up by value. Unknown values get NULL from the lookups that
 * the tracer uses (it then prints the number) and a phrase from
 * nv_status_name (messages read on). */
#include "drivers/nv/nv_abi.h"

#include "base/base.h"

#include <stddef.h>

typedef struct nv_name {
    uint32_t v;
    const char *name;
} nv_name;

#define NV_NAME(x) {x, #x}

static const char *lookup(const nv_name *t, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].v == v) return t[i].name;
    return NULL;
}

/* (kernel-open/common/inc/nvstatuscodes.h) */
static const nv_name status_names[] = {
    NV_NAME(NV_OK),
    NV_NAME(NV_ERR_GPU_UUID_NOT_FOUND),
    NV_NAME(NV_ERR_ILLEGAL_ACTION),
    NV_NAME(NV_ERR_IN_USE),
    NV_NAME(NV_ERR_INSERT_DUPLICATE_NAME),
    NV_NAME(NV_ERR_INSUFFICIENT_RESOURCES),
    NV_NAME(NV_ERR_INSUFFICIENT_PERMISSIONS),
    NV_NAME(NV_ERR_INVALID_ADDRESS),
    NV_NAME(NV_ERR_INVALID_ARGUMENT),
    NV_NAME(NV_ERR_INVALID_BASE),
    NV_NAME(NV_ERR_INVALID_CHANNEL),
    NV_NAME(NV_ERR_INVALID_CLASS),
    NV_NAME(NV_ERR_INVALID_CLIENT),
    NV_NAME(NV_ERR_INVALID_COMMAND),
    NV_NAME(NV_ERR_INVALID_DEVICE),
    NV_NAME(NV_ERR_INVALID_FLAGS),
    NV_NAME(NV_ERR_INVALID_LIMIT),
    NV_NAME(NV_ERR_INVALID_OBJECT),
    NV_NAME(NV_ERR_INVALID_OBJECT_HANDLE),
    NV_NAME(NV_ERR_INVALID_OBJECT_NEW),
    NV_NAME(NV_ERR_INVALID_OBJECT_PARENT),
    NV_NAME(NV_ERR_INVALID_OFFSET),
    NV_NAME(NV_ERR_INVALID_OWNER),
    NV_NAME(NV_ERR_INVALID_PARAM_STRUCT),
    NV_NAME(NV_ERR_INVALID_PARAMETER),
    NV_NAME(NV_ERR_INVALID_STATE),
    NV_NAME(NV_ERR_NO_MEMORY),
    NV_NAME(NV_ERR_NOT_SUPPORTED),
    NV_NAME(NV_ERR_OBJECT_NOT_FOUND),
    NV_NAME(NV_ERR_OTHER_DEVICE_FOUND),
    NV_NAME(NV_ERR_OPERATING_SYSTEM),
    NV_NAME(NV_ERR_STATE_IN_USE),
    NV_NAME(NV_ERR_UVM_ADDRESS_IN_USE),
    NV_NAME(NV_ERR_GENERIC),
    NV_NAME(NV_WARN_NOTHING_TO_DO),
};

const char *nv_status_name(uint32_t status)
{
    const char *n = lookup(status_names, BASE_ARRAY_LEN(status_names), status);
    return n ? n : "an unknown RM status";
}

/* ** classes: the allocation parameters and the parents resource_list.h
 * declares for each (open-gpu-kernel-modules 580.95.05 src/nvidia/src/
 * kernel/rmapi/resource_list.h: RS_REQUIRED / RS_OPTIONAL / RS_NONE, sizes
 * from the structs in nvos.h and class/cl*.h; the RS_LIST of parents). RM
 * copies that size whatever paramsSize says (serverAllocApiCopyIn,
 * rmapiParamsCopyInit). Every class here is multi-instance. */
#define CLS(c, rule, size, parents) {c, #c, NV_PARAMS_##rule, size, 0, parents}
#define DEV NV_RS_DEVICE
#define SUBDEV NV_RS_SUBDEVICE
static const nv_class_desc classes[] = {
    CLS(NV01_ROOT_CLIENT, OPTIONAL, 4, 0), /* NvHandle: the handle asked for; RS_ROOT_OBJECT */
    CLS(NV01_DEVICE_0, OPTIONAL, sizeof(nv_device_alloc), NV_RS_CLIENT),
    CLS(NV20_SUBDEVICE_0, OPTIONAL, sizeof(nv_subdevice_alloc), DEV),
    CLS(NV01_MEMORY_SYSTEM, REQUIRED, sizeof(nv_memory_alloc), DEV),
    CLS(NV01_MEMORY_LOCAL_USER, REQUIRED, sizeof(nv_memory_alloc), DEV | SUBDEV),
    CLS(NV01_MEMORY_VIRTUAL, REQUIRED, sizeof(nv_memory_virtual_alloc), DEV),
    CLS(NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, REQUIRED, sizeof(nv_os_desc_alloc), DEV),
    /* NV_VASPACE_ALLOCATION_PARAMETERS gained pasid in 580 */
    {FERMI_VASPACE_A, "FERMI_VASPACE_A", NV_PARAMS_REQUIRED, sizeof(nv_vaspace_alloc), 48, DEV | SUBDEV},
    CLS(FERMI_CONTEXT_SHARE_A, REQUIRED, sizeof(nv_ctxshare_alloc), NV_RS_CHANNEL_GROUP),
    CLS(KEPLER_CHANNEL_GROUP_A, REQUIRED, sizeof(nv_tsg_alloc), DEV),
    CLS(GT200_DEBUGGER, REQUIRED, sizeof(nv_debugger_alloc), DEV),
    CLS(VOLTA_USERMODE_A, NONE, 0, SUBDEV),
    CLS(TURING_USERMODE_A, NONE, 0, SUBDEV),
    CLS(AMPERE_USERMODE_A, NONE, 0, SUBDEV),
    CLS(HOPPER_USERMODE_A, OPTIONAL, 2, SUBDEV), /* NV_HOPPER_USERMODE_A_PARAMS {bBar1Mapping, bPriv} */
    /* channels: under a channel group, or bare under a device */
    CLS(VOLTA_CHANNEL_GPFIFO_A, REQUIRED, sizeof(nv_channel_alloc), DEV | NV_RS_CHANNEL_GROUP),
    CLS(TURING_CHANNEL_GPFIFO_A, REQUIRED, sizeof(nv_channel_alloc), DEV | NV_RS_CHANNEL_GROUP),
    CLS(AMPERE_CHANNEL_GPFIFO_A, REQUIRED, sizeof(nv_channel_alloc), DEV | NV_RS_CHANNEL_GROUP),
    CLS(HOPPER_CHANNEL_GPFIFO_A, REQUIRED, sizeof(nv_channel_alloc), DEV | NV_RS_CHANNEL_GROUP),
    CLS(AMPERE_COMPUTE_A, OPTIONAL, 16, NV_RS_CHANNEL), /* NV_GR_ALLOCATION_PARAMETERS */
    CLS(AMPERE_COMPUTE_B, OPTIONAL, 16, NV_RS_CHANNEL),
    CLS(ADA_COMPUTE_A, OPTIONAL, 16, NV_RS_CHANNEL),
    CLS(HOPPER_COMPUTE_A, OPTIONAL, 16, NV_RS_CHANNEL),
    CLS(BLACKWELL_COMPUTE_A, OPTIONAL, 16, NV_RS_CHANNEL),
    CLS(AMPERE_DMA_COPY_A, OPTIONAL, 8, NV_RS_CHANNEL), /* NVB0B5_ALLOCATION_PARAMETERS */
    CLS(AMPERE_DMA_COPY_B, OPTIONAL, 8, NV_RS_CHANNEL),
    CLS(HOPPER_DMA_COPY_A, OPTIONAL, 8, NV_RS_CHANNEL),
};
#undef DEV
#undef SUBDEV

const nv_class_desc *nv_class_desc_of(uint32_t cls)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(classes); i++)
        if (classes[i].cls == cls) return &classes[i];
    return NULL;
}

uint32_t nv_class_params(uint32_t cls, uint32_t major)
{
    const nv_class_desc *d = nv_class_desc_of(cls);
    if (!d) return 0;
    return d->params_old && major < 580 ? d->params_old : d->params;
}

const char *nv_class_name(uint32_t cls)
{
    const nv_class_desc *d = nv_class_desc_of(cls);
    return d ? d->name : NULL;
}

/* ** controls: each one's NVOC paramSize (src/nvidia/generated/g_*_nvoc.c
 * of 580.95.05; what changed in 575 from the 570.86.15 tables). RM
 * refuses another size with NV_ERR_INVALID_ARGUMENT before it looks at
 * the object (rmControl in src/nvidia/src/kernel/rmapi/control.c). */
#define CTRL(c, size) {c, #c, size, 0, 0, 0}
static const nv_ctrl_desc ctrls[] = {
    CTRL(NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, sizeof(nv_build_version)),
    CTRL(NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, sizeof(nv_gpu_id_info_v2)),
    CTRL(NV0080_CTRL_CMD_GPU_GET_CLASSLIST, sizeof(nv_classlist)),
    CTRL(NV2080_CTRL_CMD_GPU_GET_NAME_STRING, sizeof(nv_name_string)),
    CTRL(NV2080_CTRL_CMD_GPU_GET_GID_INFO, sizeof(nv_gid_info)),
    CTRL(NV2080_CTRL_CMD_GR_GET_INFO, sizeof(nv_gr_get_info)),
    CTRL(NV2080_CTRL_CMD_GR_GET_GPC_MASK, sizeof(nv_gr_gpc_mask)),
    CTRL(NV2080_CTRL_CMD_GR_GET_TPC_MASK, sizeof(nv_gr_tpc_mask)),
    CTRL(NV2080_CTRL_CMD_FB_GET_INFO, sizeof(nv_fb_get_info)),
    /* bSkipEnable added in 575 */
    {NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", sizeof(nv_gpfifo_schedule), 2, 575, 0},
    CTRL(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, sizeof(nv_work_submit_token)),
    CTRL(NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, sizeof(nv_mmu_fault_info)),
    CTRL(NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, sizeof(nv_sm_error_states)),
    CTRL(NV2080_CTRL_CMD_PERF_BOOST, sizeof(nv_perf_boost)),
    CTRL(NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, sizeof(nv_fb_flush_gpu_cache)),
    CTRL(NV2080_CTRL_CMD_GPU_GET_PIDS, sizeof(nv_get_pids)),
    CTRL(NV2080_CTRL_CMD_GPU_GET_PID_INFO, sizeof(nv_get_pid_info)),
    /* 575+: 570's g_subdevice_nvoc.c has no entry for it */
    {NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2", sizeof(nv_thermal_execute),
     0, 0, 575},
    CTRL(NV2080_CTRL_CMD_BUS_GET_PCI_INFO, sizeof(nv_bus_pci_info)),
    CTRL(NV2080_CTRL_CMD_BUS_GET_INFO_V2, sizeof(nv_bus_get_info_v2)),
    CTRL(NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, sizeof(nv_current_pstate)),
    CTRL(NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, sizeof(nv_util_samples)),
    CTRL(NV2080_CTRL_CMD_RC_GET_ERROR_COUNT, sizeof(nv_rc_error_count)),
    CTRL(NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS, sizeof(nv_ecc_volatile)),
};

const nv_ctrl_desc *nv_ctrl_desc_of(uint32_t cmd)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(ctrls); i++)
        if (ctrls[i].cmd == cmd) return &ctrls[i];
    return NULL;
}

uint32_t nv_ctrl_params(uint32_t cmd, uint32_t major)
{
    const nv_ctrl_desc *d = nv_ctrl_desc_of(cmd);
    if (!d || (d->since && major < d->since)) return 0;
    return d->size_old && major < d->size_since ? d->size_old : d->size;
}

const char *nv_ctrl_name(uint32_t cmd)
{
    const nv_ctrl_desc *d = nv_ctrl_desc_of(cmd);
    return d ? d->name : NULL;
}

/* ** escapes: the argument sizes and device files nvidia.ko serves each on
 * (src/nvidia/arch/nvalloc/unix/src/escape.c RmIoctl; kernel-open/nvidia/
 * nv.c nvidia_ioctl for CARD_INFO and CHECK_VERSION_STR); a size other
 * than the row's is EINVAL */
#define ESC(e, size, on, st) {e, #e, size, 0, 0, -1, NV_ESC_ON_##on, st}
static const nv_escape_desc escapes[] = {
    ESC(NV_ESC_RM_ALLOC_MEMORY, sizeof(nv_rm_alloc_memory), GPU, offsetof(nv_rm_alloc_memory, status)),
    ESC(NV_ESC_RM_FREE, sizeof(nv_rm_free), CTL, offsetof(nv_rm_free, status)),
    ESC(NV_ESC_RM_CONTROL, sizeof(nv_rm_control), CTL, offsetof(nv_rm_control, status)),
    /* NVOS21 or NVOS64 */
    {NV_ESC_RM_ALLOC, "NV_ESC_RM_ALLOC", sizeof(nv_rm_alloc), 0, sizeof(nv_rm_alloc64), offsetof(nv_rm_alloc64, status),
     NV_ESC_ON_CTL, offsetof(nv_rm_alloc, status)},
    ESC(NV_ESC_RM_MAP_MEMORY, sizeof(nv_rm_map_memory), CTL, offsetof(nv_rm_map_memory, status)),
    ESC(NV_ESC_RM_MAP_MEMORY_DMA, sizeof(nv_rm_map_memory_dma), CTL, offsetof(nv_rm_map_memory_dma, status)),
    ESC(NV_ESC_RM_UNMAP_MEMORY_DMA, sizeof(nv_rm_unmap_memory_dma), CTL, offsetof(nv_rm_unmap_memory_dma, status)),
    {NV_ESC_CARD_INFO, "NV_ESC_CARD_INFO", 0, sizeof(nv_card_info), 0, -1, NV_ESC_ON_CTL, -1},
    /* valid on both kinds of file; the ctl fd it names must be a control device's */
    ESC(NV_ESC_REGISTER_FD, sizeof(nv_register_fd), ANY, -1),
    {NV_ESC_CHECK_VERSION_STR, "NV_ESC_CHECK_VERSION_STR", 0, 1, 0, -1, NV_ESC_ON_CTL, -1},
};

const nv_escape_desc *nv_escape_desc_of(uint32_t nr)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(escapes); i++)
        if (escapes[i].nr == nr) return &escapes[i];
    return NULL;
}

const char *nv_escape_name(uint32_t nr)
{
    const nv_escape_desc *d = nv_escape_desc_of(nr);
    return d ? d->name : NULL;
}

/* as uvm_ioctl.h names them, without our NV_ prefix */
#define UVM_NAME(x) {NV_##x, #x}
static const nv_name uvm_names[] = {
    UVM_NAME(UVM_INITIALIZE),
    UVM_NAME(UVM_REGISTER_GPU_VASPACE),
    UVM_NAME(UVM_UNREGISTER_GPU_VASPACE),
    UVM_NAME(UVM_REGISTER_CHANNEL),
    UVM_NAME(UVM_UNREGISTER_CHANNEL),
    UVM_NAME(UVM_ENABLE_PEER_ACCESS),
    UVM_NAME(UVM_MAP_EXTERNAL_ALLOCATION),
    UVM_NAME(UVM_FREE),
    UVM_NAME(UVM_REGISTER_GPU),
    UVM_NAME(UVM_UNREGISTER_GPU),
    UVM_NAME(UVM_CREATE_EXTERNAL_RANGE),
    UVM_NAME(UVM_MM_INITIALIZE),
};

const char *nv_uvm_name(uint32_t cmd) { return lookup(uvm_names, BASE_ARRAY_LEN(uvm_names), cmd); }

size_t nv_uvm_arg_size(unsigned long cmd)
{
    switch (cmd) {
    case NV_UVM_INITIALIZE: return sizeof(nv_uvm_initialize);
    case NV_UVM_MM_INITIALIZE: return sizeof(nv_uvm_mm_initialize);
    case NV_UVM_REGISTER_GPU: return sizeof(nv_uvm_register_gpu);
    case NV_UVM_UNREGISTER_GPU:
    case NV_UVM_UNREGISTER_GPU_VASPACE: return sizeof(nv_uvm_unregister_gpu);
    case NV_UVM_REGISTER_GPU_VASPACE: return sizeof(nv_uvm_register_gpu_vaspace);
    case NV_UVM_REGISTER_CHANNEL: return sizeof(nv_uvm_register_channel);
    case NV_UVM_UNREGISTER_CHANNEL: return sizeof(nv_uvm_unregister_channel);
    case NV_UVM_CREATE_EXTERNAL_RANGE: return sizeof(nv_uvm_create_external_range);
    case NV_UVM_MAP_EXTERNAL_ALLOCATION: return sizeof(nv_uvm_map_external_allocation);
    case NV_UVM_ENABLE_PEER_ACCESS: return sizeof(nv_uvm_enable_peer_access);
    case NV_UVM_FREE: return sizeof(nv_uvm_free);
    }
    return 0;
}
