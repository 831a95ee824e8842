/* Names of the NVIDIA driver's numbers, for messages and the tracer: RM
 * status codes, classes, control commands, escapes and UVM commands. The
 * numbers are nv_abi.h's; one table each, looked up by value. Unknown
 * values get NULL from the lookups that the tracer uses (it then prints the
 * number) and a phrase from nv_status_name (messages read on). */
#include "drivers/nv/nv_abi.h"

#include "base/base.h"

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
    NV_NAME(NV_ERR_INVALID_STATE),
    NV_NAME(NV_ERR_NO_MEMORY),
    NV_NAME(NV_ERR_NOT_SUPPORTED),
    NV_NAME(NV_ERR_OBJECT_NOT_FOUND),
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

static const nv_name class_names[] = {
    NV_NAME(NV01_ROOT_CLIENT),
    NV_NAME(NV01_DEVICE_0),
    NV_NAME(NV20_SUBDEVICE_0),
    NV_NAME(NV01_MEMORY_SYSTEM),
    NV_NAME(NV01_MEMORY_LOCAL_USER),
    NV_NAME(NV01_MEMORY_SYSTEM_OS_DESCRIPTOR),
    NV_NAME(FERMI_VASPACE_A),
    NV_NAME(FERMI_CONTEXT_SHARE_A),
    NV_NAME(KEPLER_CHANNEL_GROUP_A),
    NV_NAME(GT200_DEBUGGER),
    NV_NAME(VOLTA_USERMODE_A),
    NV_NAME(TURING_USERMODE_A),
    NV_NAME(AMPERE_USERMODE_A),
    NV_NAME(HOPPER_USERMODE_A),
    NV_NAME(VOLTA_CHANNEL_GPFIFO_A),
    NV_NAME(TURING_CHANNEL_GPFIFO_A),
    NV_NAME(AMPERE_CHANNEL_GPFIFO_A),
    NV_NAME(HOPPER_CHANNEL_GPFIFO_A),
    NV_NAME(AMPERE_COMPUTE_A),
    NV_NAME(AMPERE_COMPUTE_B),
    NV_NAME(ADA_COMPUTE_A),
    NV_NAME(HOPPER_COMPUTE_A),
    NV_NAME(BLACKWELL_COMPUTE_A),
    NV_NAME(AMPERE_DMA_COPY_A),
    NV_NAME(AMPERE_DMA_COPY_B),
    NV_NAME(HOPPER_DMA_COPY_A),
};

const char *nv_class_name(uint32_t cls) { return lookup(class_names, BASE_ARRAY_LEN(class_names), cls); }

static const nv_name ctrl_names[] = {
    NV_NAME(NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2),
    NV_NAME(NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2),
    NV_NAME(NV0080_CTRL_CMD_GPU_GET_CLASSLIST),
    NV_NAME(NV2080_CTRL_CMD_GPU_GET_NAME_STRING),
    NV_NAME(NV2080_CTRL_CMD_GPU_GET_GID_INFO),
    NV_NAME(NV2080_CTRL_CMD_GR_GET_INFO),
    NV_NAME(NV2080_CTRL_CMD_GR_GET_GPC_MASK),
    NV_NAME(NV2080_CTRL_CMD_GR_GET_TPC_MASK),
    NV_NAME(NV2080_CTRL_CMD_FB_GET_INFO),
    NV_NAME(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
    NV_NAME(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN),
    NV_NAME(NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO),
    NV_NAME(NV2080_CTRL_CMD_GPU_GET_PIDS),
    NV_NAME(NV2080_CTRL_CMD_GPU_GET_PID_INFO),
    NV_NAME(NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2),
    NV_NAME(NV2080_CTRL_CMD_BUS_GET_PCI_INFO),
    NV_NAME(NV2080_CTRL_CMD_BUS_GET_INFO_V2),
    NV_NAME(NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE),
    NV_NAME(NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2),
    NV_NAME(NV2080_CTRL_CMD_RC_GET_ERROR_COUNT),
    NV_NAME(NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS),
};

const char *nv_ctrl_name(uint32_t cmd) { return lookup(ctrl_names, BASE_ARRAY_LEN(ctrl_names), cmd); }

static const nv_name escape_names[] = {
    NV_NAME(NV_ESC_RM_ALLOC_MEMORY),
    NV_NAME(NV_ESC_RM_FREE),
    NV_NAME(NV_ESC_RM_CONTROL),
    NV_NAME(NV_ESC_RM_ALLOC),
    NV_NAME(NV_ESC_RM_MAP_MEMORY),
    NV_NAME(NV_ESC_CARD_INFO),
    NV_NAME(NV_ESC_REGISTER_FD),
    NV_NAME(NV_ESC_CHECK_VERSION_STR),
};

const char *nv_escape_name(uint32_t nr) { return lookup(escape_names, BASE_ARRAY_LEN(escape_names), nr); }

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
