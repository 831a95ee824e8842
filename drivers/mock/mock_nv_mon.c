/* The NV mock's monitoring controls (mock_nv.h: mnv_monitor_control), with
 * the checks RM makes on them (open-gpu-kernel-modules 580.142: exact
 * parameter sizes from the method table in
 * src/nvidia/generated/g_subdevice_nvoc.c; the thermal API version check in
 * src/nvidia/src/kernel/gpu/subdevice/subdevice_ctrl_gpu_kernel.c; the
 * administrator check of the RC error count in
 * src/nvidia/src/kernel/gpu/rc/kernel_rc_ctrl.c) and what the parts do:
 * GeForce boards have no ECC (NV_ERR_NOT_SUPPORTED); drivers before 575
 * have no THERMAL_SYSTEM_EXECUTE_V2 (NV_ERR_NOT_SUPPORTED). Readings come
 * from mock_gpu_sensors, so they follow the work the mock runs. */
#include "drivers/mock/mock_nv.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* per model (mnv_model's monitoring fields): sensors, PCIe link, board
 * ids, ECC */
typedef mnv_model mon_model;
static const mon_model *model_of(const mnv_gpu *g) { return g->m; }

/* RM's error journal is the system's: one count for all GPUs */
static atomic_uint rc_errors;

void mnv_rc_error_note(mnv_gpu *g, uint32_t xid, const char *what)
{
    (void)g;
    (void)xid;
    (void)what;
    atomic_fetch_add(&rc_errors, 1);
}

/* the perfmon sample ring RM keeps per GPU: the mock adds one sample per
 * query, covering the time since the previous one */
static struct {
    nv_util_sample ring[NV_UTIL_SAMPLES];
    uint32_t tracker, count;
} rings[8];
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t utilization(mnv_gpu *g, nv_util_samples *u)
{
    if (u->type != NV_GPUMON_SAMPLE_TYPE_PERFMON_UTIL || u->bufSize != sizeof u->samples) return NV_ERR_INVALID_ARGUMENT;
    mock_sensors s = mock_gpu_sensors(g->g, &model_of(g)->sensors);
    uint32_t i = g->index % 8;
    pthread_mutex_lock(&rings_lock);
    nv_util_sample *n = &rings[i].ring[rings[i].tracker];
    memset(n, 0, sizeof *n);
    n->timeStamp = hcq_now_ns();
    n->gr.util = (uint32_t)(s.util * 100);
    n->fb.util = (uint32_t)(s.util * 40); /* memory traffic: a share of the engines' time */
    n->gr.procId = n->fb.procId = s.util > 0 ? (uint32_t)getpid() : NV_GPUMON_PID_INVALID;
    n->nvenc.procId = n->nvdec.procId = n->nvjpg.procId = n->nvofa.procId = NV_GPUMON_PID_INVALID;
    rings[i].tracker = (rings[i].tracker + 1) % NV_UTIL_SAMPLES;
    if (rings[i].count < NV_UTIL_SAMPLES) rings[i].count++;
    memcpy(u->samples, rings[i].ring, sizeof u->samples);
    u->tracker = rings[i].tracker;
    u->count = rings[i].count;
    pthread_mutex_unlock(&rings_lock);
    return NV_OK;
}

static uint32_t thermal(mnv_gpu *g, nv_thermal_execute *x)
{
    if (x->instructionListSize > NV_THERMAL_MAX_INSTR) return NV_ERR_INVALID_ARGUMENT;
    if (x->clientAPIVersion != NV_THERMAL_API_VER || x->clientAPIRevision != NV_THERMAL_API_REV ||
        x->clientInstructionSizeOf != sizeof(nv_thermal_instr))
        return NV_ERR_INVALID_PARAM_STRUCT;
    const mon_model *mm = model_of(g);
    mock_sensors s = mock_gpu_sensors(g->g, &mm->sensors);
    /* sensor i reads target i: the GPU, then the memory (HBM parts) or the board */
    static const uint32_t types_hbm[] = {NV_THERMAL_TARGET_GPU, NV_THERMAL_TARGET_MEMORY};
    static const uint32_t types_gddr[] = {NV_THERMAL_TARGET_GPU, NV_THERMAL_TARGET_BOARD};
    const uint32_t *types = mm->datacenter ? types_hbm : types_gddr;
    const int32_t readings[2] = {(int32_t)(s.temp_c + 0.5), (int32_t)(s.temp_c + (mm->datacenter ? 4.5 : -5.5))};
    x->successfulInstructions = 0;
    for (uint32_t i = 0; i < x->instructionListSize; i++) {
        nv_thermal_instr *in = &x->instructionList[i];
        uint32_t idx = in->operands[0];
        in->executed = 1;
        in->result = NV_OK;
        switch (in->opcode) {
        case NV_THERMAL_GET_SENSORS_AVAILABLE: in->operands[0] = 2; break;
        case NV_THERMAL_GET_SENSOR_TARGET:
            if (idx < 2) in->operands[1] = idx;
            else in->result = NV_ERR_INVALID_ARGUMENT;
            break;
        case NV_THERMAL_GET_TARGET_TYPE:
            if (idx < 2) in->operands[1] = types[idx];
            else in->result = NV_ERR_INVALID_ARGUMENT;
            break;
        case NV_THERMAL_GET_SENSOR_READING:
            if (idx < 2) in->operands[1] = (uint32_t)readings[idx];
            else in->result = NV_ERR_INVALID_ARGUMENT;
            break;
        default: in->result = NV_ERR_INVALID_ARGUMENT; break;
        }
        if (in->result == NV_OK) {
            x->successfulInstructions++;
        } else if (!(x->executeFlags & NV_THERMAL_FLAGS_IGNORE_FAIL)) {
            for (uint32_t k = i + 1; k < x->instructionListSize; k++) x->instructionList[k].executed = 0;
            return in->result;
        }
    }
    return NV_OK;
}

static uint32_t pid_info(mnv_gpu *g, nv_get_pid_info *v)
{
    if (v->pidInfoListCount > NV_PID_INFO_MAX) return NV_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < v->pidInfoListCount; i++) {
        nv_pid_info *p = &v->pidInfoList[i];
        uint32_t pid = p->pid;
        memset(&p->memPrivate, 0, sizeof *p - offsetof(nv_pid_info, memPrivate));
        if (p->index != NV_PID_INFO_INDEX_VIDEO_MEMORY_USAGE) p->result = NV_ERR_INVALID_ARGUMENT;
        else if (pid != (uint32_t)getpid()) p->result = NV_ERR_INVALID_ARGUMENT; /* no client of that process */
        else {
            p->result = NV_OK;
            p->memPrivate = atomic_load(&g->g->vram_used);
        }
        p->computeInstanceId = p->gpuInstanceId = 0xffffffffu; /* no MIG partition */
    }
    return NV_OK;
}

bool mnv_monitor_control(mnv_gpu *g, uint32_t cmd, void *p, uint32_t size, uint32_t *status)
{
    uint32_t want;
    switch (cmd) {
    case NV2080_CTRL_CMD_GPU_GET_PIDS: want = sizeof(nv_get_pids); break;
    case NV2080_CTRL_CMD_GPU_GET_PID_INFO: want = sizeof(nv_get_pid_info); break;
    case NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2: want = sizeof(nv_thermal_execute); break;
    case NV2080_CTRL_CMD_BUS_GET_PCI_INFO: want = sizeof(nv_bus_pci_info); break;
    case NV2080_CTRL_CMD_BUS_GET_INFO_V2: want = sizeof(nv_bus_get_info_v2); break;
    case NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE: want = sizeof(nv_current_pstate); break;
    case NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2: want = sizeof(nv_util_samples); break;
    case NV2080_CTRL_CMD_RC_GET_ERROR_COUNT: want = sizeof(nv_rc_error_count); break;
    case NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS: want = sizeof(nv_ecc_volatile); break;
    default: return false;
    }
    /* the size and the driver version were checked against nv_names.c's
     * table before (mock_nv_ctrl.c) */
    if (size != want || !p) {
        *status = NV_ERR_INVALID_ARGUMENT;
        return true;
    }
    const mon_model *mm = model_of(g);
    *status = NV_OK;
    switch (cmd) {
    case NV2080_CTRL_CMD_GPU_GET_PIDS: {
        nv_get_pids *v = p;
        if (v->idType != NV_GET_PIDS_ID_TYPE_CLASS) {
            *status = NV_ERR_INVALID_ARGUMENT;
            break;
        }
        /* the processes with an object of that class on this GPU: here the
         * one process the mock lives in, which holds the querying subdevice */
        v->pidTblCount = 1;
        v->pidTbl[0] = (uint32_t)getpid();
        break;
    }
    case NV2080_CTRL_CMD_GPU_GET_PID_INFO: *status = pid_info(g, p); break;
    case NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2: *status = thermal(g, p); break;
    case NV2080_CTRL_CMD_BUS_GET_PCI_INFO: {
        nv_bus_pci_info *v = p;
        v->pciDeviceId = 0x10deu | (uint32_t)g->m->pci_device << 16;
        v->pciSubSystemId = mm->subsys_vendor | (uint32_t)mm->subsys_device << 16;
        v->pciRevisionId = mm->revision;
        v->pciExtDeviceId = g->m->pci_device;
        break;
    }
    case NV2080_CTRL_CMD_BUS_GET_INFO_V2: {
        nv_bus_get_info_v2 *v = p;
        if (v->busInfoListSize > NV_BUS_INFO_MAX) {
            *status = NV_ERR_INVALID_ARGUMENT;
            break;
        }
        for (uint32_t i = 0; i < v->busInfoListSize; i++)
            v->busInfoList[i].data = v->busInfoList[i].index == NV_BUS_INFO_PCIE_GPU_LINK_CTRL_STATUS
                                         ? (uint32_t)mm->link_speed << 16 | (uint32_t)mm->link_width << 20
                                         : 0;
        break;
    }
    case NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE: {
        /* GeForce boards drop to P8 when idle, unless a PERF_BOOST holds
         * the top P-state; data-center parts stay in P0 */
        mock_sensors s = mock_gpu_sensors(g->g, &mm->sensors);
        bool boosted = atomic_load(&g->boost_until_ns) > hcq_now_ns();
        ((nv_current_pstate *)p)->currPstate = mm->datacenter || boosted || s.util > 5 ? 1u : 1u << 8;
        break;
    }
    case NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2: *status = utilization(g, p); break;
    case NV2080_CTRL_CMD_RC_GET_ERROR_COUNT:
        /* rmclientIsAdmin: root (or CAP_SYS_ADMIN) only */
        if (geteuid() != 0) *status = NV_ERR_INSUFFICIENT_PERMISSIONS;
        else ((nv_rc_error_count *)p)->errorCount = atomic_load(&rc_errors);
        break;
    case NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS:
        if (!mm->ecc) *status = NV_ERR_NOT_SUPPORTED;
        else memset(p, 0, sizeof(nv_ecc_volatile)); /* a healthy part */
        break;
    }
    return true;
}
