/* drivers/telemetry.h: how backends fill an hcq_telemetry (hcq/queue.h).
 * A reading is a number with its unit, a text, or unavailable with the
 * reason; each names its source. Names are shared across vendors so the
 * tools print them without knowing which driver answered:
 *
 *   uuid, pci.bus_id, pci.device, pcie.link, pstate                  (text)
 *   temperature.gpu, temperature.hotspot, temperature.memory         C
 *   power.draw, power.limit                                          W
 *   clocks.sm, clocks.memory                                         MHz
 *   utilization.gpu, utilization.memory                              %
 *   memory.used, memory.total                                        B
 *   ecc.corrected, ecc.uncorrected, errors.xid, faults.retry         counts
 *   throttle                                                         (text)
 */
#ifndef HCQ_DRIVERS_TELEMETRY_H
#define HCQ_DRIVERS_TELEMETRY_H

#include <hcq/queue.h>

/* Each returns the reading (NULL when t is full: later ones are dropped). */
hcq_reading *drv_reading_num(hcq_telemetry *t, const char *name, const char *unit, const char *source,
                             double value);
hcq_reading *drv_reading_text(hcq_telemetry *t, const char *name, const char *source, const char *fmt, ...)
    HCQ_PRINTF(4, 5);
/* unavailable: why says what the driver answered ("NV_ERR_NOT_SUPPORTED",
 * "no such file") */
hcq_reading *drv_reading_none(hcq_telemetry *t, const char *name, const char *unit, const char *source,
                              const char *why, ...) HCQ_PRINTF(5, 6);
/* a process using the device (its name read from /proc when it can be) */
void drv_telemetry_process(hcq_telemetry *t, uint32_t pid, bool memory_known, uint64_t memory_bytes);
/* an event (a fault, an Xid): the oldest goes when the list is full */
void drv_telemetry_event(hcq_telemetry *t, const char *fmt, ...) HCQ_PRINTF(2, 3);

#endif
