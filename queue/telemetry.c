/* hcq_device_telemetry: the backend's readings (RM controls, sysfs), then
 * what this process knows of its own work on the device: the memory it
 * holds through hcq, its timeline, each engine's ring and its fault. */
#include "base/base.h"
#include "drivers/telemetry.h"
#include "queue/internal.h"

#include <string.h>

hcq_status hcq_device_telemetry(hcq_device *dev, hcq_telemetry *out)
{
    if (!out) return base_err(HCQ_EINVAL, "hcq_device_telemetry: out is NULL");
    if (!base_handle_live(dev, BASE_H_DEVICE))
        return base_err(HCQ_ESTATE, "hcq_device_telemetry: %p is not an open device", (void *)dev);
    memset(out, 0, sizeof *out);
    out->time_ns = hcq_now_ns();
    if (dev->be->poll) dev->be->poll(dev); /* so a fault that happened is in the events */
    if (dev->be->telemetry) dev->be->telemetry(dev, out);
    if (!out->processes_known && !out->processes_why[0])
        snprintf(out->processes_why, sizeof out->processes_why, "the %s device has no driver that lists them",
                 dev->props.kind);
    if (atomic_load(&dev->faulted)) {
        pthread_mutex_lock(&dev->fault_lock);
        drv_telemetry_event(out, "this process: %s", dev->fault_msg);
        pthread_mutex_unlock(&dev->fault_lock);
    }
    pthread_mutex_lock(&dev->lock);
    out->timeline_submitted = mem_tl_next(dev) - 1;
    pthread_mutex_unlock(&dev->lock);
    out->timeline_completed = hcq_signal_value(dev->mem->timeline);
    if (dev->be->describe) dev->be->describe(dev, out->engines, sizeof out->engines);
    return HCQ_OK;
}

const hcq_reading *hcq_telemetry_find(const hcq_telemetry *t, const char *name)
{
    if (!t || !name) return NULL;
    for (uint32_t i = 0; i < t->nreadings && i < HCQ_TELEMETRY_READINGS; i++)
        if (!strcmp(t->readings[i].name, name)) return &t->readings[i];
    return NULL;
}
