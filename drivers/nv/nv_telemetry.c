/* NV telemetry (hcq info, hcq top) from the subdevice's non-privileged RM
 * controls, the ones nvidia-smi's numbers come from where the open driver
 * has them (nv_abi.h, "monitoring controls"): UUID, PCI identity and link,
 * P-state, temperatures, utilization, memory and the processes holding it,
 * ECC and Xid counts. Each control that RM refuses becomes an unavailable
 * reading naming the status; clocks and power draw have no control in the
 * open interface and say so. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/telemetry.h"

#include <stdlib.h>
#include <string.h>

/* RM_CONTROL on the subdevice; the RM status, or ~0u when the ioctl itself
 * failed (why then holds the errno's words) */
static uint32_t ctrl(nv_dev *nv, uint32_t cmd, void *p, uint32_t size, char *why, size_t why_size)
{
    uint32_t st = 0;
    hcq_status s = nv_control_status(nv->proc, nv->hsubdevice, cmd, p, size, &st, "telemetry");
    if (s) {
        snprintf(why, why_size, "%s", hcq_error_message());
        return ~0u;
    }
    if (st) snprintf(why, why_size, "RM answered %s", nv_status_name(st));
    return st;
}

#define CTRL(nv, cmd, p, why) ctrl(nv, cmd, p, sizeof *(p), why, sizeof why)

static void uuid_and_pci(nv_dev *nv, hcq_device *dev, hcq_telemetry *t)
{
    const uint8_t *u = nv->uuid;
    drv_reading_text(t, "uuid", "NV2080_CTRL_CMD_GPU_GET_GID_INFO",
                     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                     u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    drv_reading_text(t, "pci.bus_id", "NV_ESC_CARD_INFO", "%s", dev->props.pci_address);
    char why[160];
    nv_bus_pci_info pci = {0};
    if (!CTRL(nv, NV2080_CTRL_CMD_BUS_GET_PCI_INFO, &pci, why))
        drv_reading_text(t, "pci.device", "NV2080_CTRL_CMD_BUS_GET_PCI_INFO", "%04x:%04x rev %02x, subsystem %04x:%04x",
                         pci.pciDeviceId & 0xffff, pci.pciDeviceId >> 16, pci.pciRevisionId & 0xff,
                         pci.pciSubSystemId & 0xffff, pci.pciSubSystemId >> 16);
    else
        drv_reading_none(t, "pci.device", "", "NV2080_CTRL_CMD_BUS_GET_PCI_INFO", "%s", why);
    nv_bus_get_info_v2 *bus = calloc(1, sizeof *bus);
    if (!bus) return;
    bus->busInfoListSize = 1;
    bus->busInfoList[0].index = NV_BUS_INFO_PCIE_GPU_LINK_CTRL_STATUS;
    if (!CTRL(nv, NV2080_CTRL_CMD_BUS_GET_INFO_V2, bus, why)) {
        uint32_t v = bus->busInfoList[0].data, speed = NV_BUS_LINK_SPEED(v), width = NV_BUS_LINK_WIDTH(v);
        /* speed codes 1..6 are PCIe generations 1..6 (2.5 to 64 GT/s) */
        if (speed >= 1 && speed <= 6 && width)
            drv_reading_text(t, "pcie.link", "NV2080_CTRL_CMD_BUS_GET_INFO_V2", "Gen%u x%u", speed, width);
        else
            drv_reading_none(t, "pcie.link", "", "NV2080_CTRL_CMD_BUS_GET_INFO_V2",
                             "RM reported link status 0x%08x (no speed or width in it)", v);
    } else {
        drv_reading_none(t, "pcie.link", "", "NV2080_CTRL_CMD_BUS_GET_INFO_V2", "%s", why);
    }
    free(bus);
}

static void pstate(nv_dev *nv, hcq_telemetry *t)
{
    char why[160];
    nv_current_pstate ps = {0};
    if (CTRL(nv, NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, &ps, why)) {
        drv_reading_none(t, "pstate", "", "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE", "%s", why);
    } else if (!ps.currPstate || (ps.currPstate & (ps.currPstate - 1)) || ps.currPstate > 0x8000) {
        drv_reading_none(t, "pstate", "", "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE",
                         "RM reported 0x%x, not one P-state", ps.currPstate);
    } else {
        drv_reading_text(t, "pstate", "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE", "P%d", __builtin_ctz(ps.currPstate));
    }
}

/* Temperatures: how many sensors, each sensor's target, each target's type,
 * each sensor's reading; the first sensor on a GPU (memory) target is
 * temperature.gpu (.memory). */
static void temperatures(nv_dev *nv, hcq_telemetry *t)
{
    static const char *src = "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2";
    nv_thermal_execute *x = calloc(1, sizeof *x);
    if (!x) return;
    char why[160] = "";
    uint32_t st;
    int gpu = -1, mem = -1;
    x->clientAPIVersion = NV_THERMAL_API_VER;
    x->clientAPIRevision = NV_THERMAL_API_REV;
    x->clientInstructionSizeOf = sizeof(nv_thermal_instr);
    x->executeFlags = NV_THERMAL_FLAGS_IGNORE_FAIL;
    x->instructionListSize = 1;
    x->instructionList[0].opcode = NV_THERMAL_GET_SENSORS_AVAILABLE;
    if ((st = CTRL(nv, NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, x, why))) goto out;
    if (!x->instructionList[0].executed || x->instructionList[0].result) {
        snprintf(why, sizeof why, "the sensor count instruction returned %s",
                 nv_status_name(x->instructionList[0].result));
        goto out;
    }
    uint32_t n = BASE_MIN(x->instructionList[0].operands[0], NV_THERMAL_MAX_INSTR / 2);
    /* per sensor: its target, its reading */
    x->instructionListSize = 2 * n;
    for (uint32_t i = 0; i < n; i++) {
        nv_thermal_instr *a = &x->instructionList[2 * i], *b = a + 1;
        memset(a, 0, 2 * sizeof *a);
        a->opcode = NV_THERMAL_GET_SENSOR_TARGET;
        a->operands[0] = i;
        b->opcode = NV_THERMAL_GET_SENSOR_READING;
        b->operands[0] = i;
    }
    if (n && (st = CTRL(nv, NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, x, why))) goto out;
    uint32_t target[NV_THERMAL_MAX_INSTR / 2];
    int32_t reading[NV_THERMAL_MAX_INSTR / 2];
    bool ok[NV_THERMAL_MAX_INSTR / 2];
    for (uint32_t i = 0; i < n; i++) {
        const nv_thermal_instr *a = &x->instructionList[2 * i], *b = a + 1;
        ok[i] = a->executed && !a->result && b->executed && !b->result;
        target[i] = a->operands[1];
        reading[i] = (int32_t)b->operands[1];
    }
    /* the targets' types */
    x->instructionListSize = n;
    for (uint32_t i = 0; i < n; i++) {
        memset(&x->instructionList[i], 0, sizeof x->instructionList[i]);
        x->instructionList[i].opcode = NV_THERMAL_GET_TARGET_TYPE;
        x->instructionList[i].operands[0] = target[i];
    }
    if (n && (st = CTRL(nv, NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, x, why))) goto out;
    for (uint32_t i = 0; i < n; i++) {
        const nv_thermal_instr *a = &x->instructionList[i];
        if (!ok[i] || !a->executed || a->result) continue;
        if (a->operands[1] == NV_THERMAL_TARGET_GPU && gpu < 0) gpu = (int)i;
        if (a->operands[1] == NV_THERMAL_TARGET_MEMORY && mem < 0) mem = (int)i;
    }
    if (gpu < 0) snprintf(why, sizeof why, "none of the %u sensors RM lists reads the GPU", n);
out:
    if (gpu >= 0) drv_reading_num(t, "temperature.gpu", "C", src, reading[gpu]);
    else drv_reading_none(t, "temperature.gpu", "C", src, "%s", why);
    if (mem >= 0) drv_reading_num(t, "temperature.memory", "C", src, reading[mem]);
    free(x);
}

static void utilization(nv_dev *nv, hcq_telemetry *t)
{
    static const char *src = "NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2";
    nv_util_samples *u = calloc(1, sizeof *u);
    if (!u) return;
    char why[160];
    u->type = NV_GPUMON_SAMPLE_TYPE_PERFMON_UTIL;
    u->bufSize = sizeof u->samples;
    if (CTRL(nv, NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, u, why)) {
        drv_reading_none(t, "utilization.gpu", "%", src, "%s", why);
        drv_reading_none(t, "utilization.memory", "%", src, "%s", why);
    } else {
        /* the newest sample sits just before tracker (the oldest); a ring
         * that has not wrapped yet ends at tracker too */
        uint32_t newest = (u->tracker + NV_UTIL_SAMPLES - 1) % NV_UTIL_SAMPLES;
        const nv_util_sample *s = &u->samples[newest];
        if (!s->timeStamp) {
            drv_reading_none(t, "utilization.gpu", "%", src, "RM has taken no sample yet");
            drv_reading_none(t, "utilization.memory", "%", src, "RM has taken no sample yet");
        } else {
            drv_reading_num(t, "utilization.gpu", "%", src, s->gr.util / 100.0);
            drv_reading_num(t, "utilization.memory", "%", src, s->fb.util / 100.0);
        }
    }
    free(u);
}

static void memory_and_processes(nv_dev *nv, hcq_telemetry *t)
{
    char why[160];
    nv_info_entry fb[2] = {{NV_FB_INFO_RAM_SIZE, 0}, {NV_FB_INFO_HEAP_FREE, 0}};
    nv_fb_get_info fi = {.fbInfoListSize = 2, .fbInfoList = (uint64_t)(uintptr_t)fb};
    if (!CTRL(nv, NV2080_CTRL_CMD_FB_GET_INFO, &fi, why)) {
        uint64_t total = (uint64_t)fb[0].data << 10, avail = (uint64_t)fb[1].data << 10;
        drv_reading_num(t, "memory.used", "B", "NV2080_CTRL_CMD_FB_GET_INFO", (double)(total - BASE_MIN(avail, total)));
        drv_reading_num(t, "memory.total", "B", "NV2080_CTRL_CMD_FB_GET_INFO", (double)total);
    } else {
        drv_reading_none(t, "memory.used", "B", "NV2080_CTRL_CMD_FB_GET_INFO", "%s", why);
    }
    nv_get_pids *pids = calloc(1, sizeof *pids);
    nv_get_pid_info *info = calloc(1, sizeof *info);
    if (!pids || !info) goto out;
    /* the subdevice class: every process with a client on this GPU */
    pids->idType = NV_GET_PIDS_ID_TYPE_CLASS;
    pids->id = NV20_SUBDEVICE_0;
    if (CTRL(nv, NV2080_CTRL_CMD_GPU_GET_PIDS, pids, why)) {
        snprintf(t->processes_why, sizeof t->processes_why, "NV2080_CTRL_CMD_GPU_GET_PIDS: %.70s", why);
        goto out;
    }
    uint32_t n = BASE_MIN(pids->pidTblCount, NV_PID_INFO_MAX);
    info->pidInfoListCount = n;
    for (uint32_t i = 0; i < n; i++) {
        info->pidInfoList[i].pid = pids->pidTbl[i];
        info->pidInfoList[i].index = NV_PID_INFO_INDEX_VIDEO_MEMORY_USAGE;
    }
    bool have_mem = !n || !CTRL(nv, NV2080_CTRL_CMD_GPU_GET_PID_INFO, info, why);
    t->processes_known = true;
    for (uint32_t i = 0; i < n; i++) {
        const nv_pid_info *p = &info->pidInfoList[i];
        bool known = have_mem && p->result == NV_OK;
        drv_telemetry_process(t, pids->pidTbl[i], known, known ? p->memPrivate + p->memSharedOwned : 0);
    }
out:
    free(pids);
    free(info);
}

static void errors(nv_dev *nv, hcq_telemetry *t)
{
    char why[160];
    nv_ecc_volatile e = {0};
    static const char *esrc = "NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS";
    if (!CTRL(nv, NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS, &e, why)) {
        drv_reading_num(t, "ecc.corrected", "", esrc, (double)(e.sramCorUni + e.dramCorTot));
        drv_reading_num(t, "ecc.uncorrected", "", esrc,
                        (double)(e.sramUncParityUni + e.sramUncSecDedUni + e.dramUncTot));
    } else {
        drv_reading_none(t, "ecc.corrected", "", esrc, "%s", why);
        drv_reading_none(t, "ecc.uncorrected", "", esrc, "%s", why);
    }
    nv_rc_error_count rc = {0};
    if (!CTRL(nv, NV2080_CTRL_CMD_RC_GET_ERROR_COUNT, &rc, why))
        drv_reading_num(t, "errors.xid", "", "NV2080_CTRL_CMD_RC_GET_ERROR_COUNT", rc.errorCount);
    else
        drv_reading_none(t, "errors.xid", "", "NV2080_CTRL_CMD_RC_GET_ERROR_COUNT", "%s%s", why,
                         strstr(why, "PERMISSIONS") ? " (RM tells administrators only)" : "");
}

void nv_telemetry(hcq_device *dev, hcq_telemetry *t)
{
    nv_dev *nv = nv_of(dev);
    uuid_and_pci(nv, dev, t);
    pstate(nv, t);
    temperatures(nv, t);
    static const char *none = "no RM control reports it in the open driver's interface (NVML uses private ones)";
    drv_reading_none(t, "power.draw", "W", "", "%s", none);
    drv_reading_none(t, "clocks.sm", "MHz", "", "%s", none);
    utilization(nv, t);
    memory_and_processes(nv, t);
    errors(nv, t);
}
