/* Filling an hcq_telemetry (drivers/telemetry.h). */
#include "drivers/telemetry.h"

#include "drivers/sys.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static hcq_reading *add(hcq_telemetry *t, const char *name, const char *unit, const char *source)
{
    if (t->nreadings >= HCQ_TELEMETRY_READINGS) return NULL;
    hcq_reading *r = &t->readings[t->nreadings++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->unit, sizeof r->unit, "%s", unit ? unit : "");
    snprintf(r->source, sizeof r->source, "%s", source ? source : "");
    return r;
}

hcq_reading *drv_reading_num(hcq_telemetry *t, const char *name, const char *unit, const char *source,
                             double value)
{
    hcq_reading *r = add(t, name, unit, source);
    if (r) {
        r->available = true;
        r->value = value;
    }
    return r;
}

hcq_reading *drv_reading_text(hcq_telemetry *t, const char *name, const char *source, const char *fmt, ...)
{
    hcq_reading *r = add(t, name, "", source);
    if (r) {
        r->available = r->is_text = true;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->text, sizeof r->text, fmt, ap);
        va_end(ap);
    }
    return r;
}

hcq_reading *drv_reading_none(hcq_telemetry *t, const char *name, const char *unit, const char *source,
                              const char *why, ...)
{
    hcq_reading *r = add(t, name, unit, source);
    if (r) {
        va_list ap;
        va_start(ap, why);
        vsnprintf(r->text, sizeof r->text, why, ap);
        va_end(ap);
    }
    return r;
}

void drv_telemetry_process(hcq_telemetry *t, uint32_t pid, bool memory_known, uint64_t memory_bytes)
{
    t->processes_known = true;
    if (t->nprocesses >= HCQ_TELEMETRY_PROCESSES) return;
    hcq_device_process *p = &t->processes[t->nprocesses++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->memory_known = memory_known;
    p->memory_bytes = memory_bytes;
    char path[64], comm[64];
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    if (sys_read_file(path, comm, sizeof comm) > 0) {
        comm[strcspn(comm, "\n")] = 0;
        for (char *c = comm; *c; c++) /* a process names itself: keep it printable */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        snprintf(p->name, sizeof p->name, "%.31s", comm);
    }
}

void drv_telemetry_event(hcq_telemetry *t, const char *fmt, ...)
{
    if (t->nevents == HCQ_TELEMETRY_EVENTS) {
        memmove(t->events[0], t->events[1], sizeof t->events[0] * (HCQ_TELEMETRY_EVENTS - 1));
        t->nevents--;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->events[t->nevents++], sizeof t->events[0], fmt, ap);
    va_end(ap);
}
