/* Telemetry (hcq_device_telemetry) as text and JSON, for `hcq info` and
 * `hcq top`. Units come with the readings; nothing here knows a vendor. */
#include "tools/tools.h"

#include <string.h>

void tool_human_bytes(double bytes, char *out, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (bytes >= 1024 && i < 4) {
        bytes /= 1024;
        i++;
    }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", bytes, u[i]);
}

static void value_text(const hcq_reading *r, char *out, size_t n)
{
    if (!r->available) snprintf(out, n, "unavailable");
    else if (r->is_text) snprintf(out, n, "%s", r->text);
    else if (!strcmp(r->unit, "B")) tool_human_bytes(r->value, out, n);
    else if (!strcmp(r->unit, "W")) snprintf(out, n, "%.1f W", r->value);
    else if (r->unit[0]) snprintf(out, n, "%.0f %s", r->value, r->unit);
    else snprintf(out, n, "%.0f", r->value);
}

void tool_telemetry_text(FILE *f, const hcq_telemetry *t, const char *indent)
{
    if (!t->nreadings) fprintf(f, "%s%-20s none (no driver sensors to read)\n", indent, "readings");
    for (uint32_t i = 0; i < t->nreadings; i++) {
        const hcq_reading *r = &t->readings[i];
        char v[128];
        value_text(r, v, sizeof v);
        if (r->available)
            fprintf(f, "%s%-20s %-40s %s\n", indent, r->name, v, r->source);
        else
            fprintf(f, "%s%-20s unavailable: %s%s%s%s\n", indent, r->name, r->text, r->source[0] ? " (" : "",
                    r->source, r->source[0] ? ")" : "");
    }
    if (!t->processes_known) {
        fprintf(f, "%s%-20s unavailable: %s\n", indent, "processes", t->processes_why);
    } else {
        fprintf(f, "%s%-20s %u\n", indent, "processes", t->nprocesses);
        for (uint32_t i = 0; i < t->nprocesses; i++) {
            const hcq_device_process *p = &t->processes[i];
            char m[32] = "memory unknown";
            if (p->memory_known) tool_human_bytes((double)p->memory_bytes, m, sizeof m);
            fprintf(f, "%s  pid %-8u %-16s %s\n", indent, p->pid, p->name[0] ? p->name : "?", m);
        }
    }
    for (uint32_t i = 0; i < t->nevents; i++) fprintf(f, "%s%-20s %s\n", indent, i ? "" : "recent faults", t->events[i]);
}

void tool_telemetry_json(FILE *f, const hcq_telemetry *t, bool lines)
{
    const char *nl = lines ? "\n      " : " ", *nl2 = lines ? "\n    " : " ";
    fprintf(f, "{\"time_ns\": %llu, \"readings\": {", (unsigned long long)t->time_ns);
    for (uint32_t i = 0; i < t->nreadings; i++) {
        const hcq_reading *r = &t->readings[i];
        fprintf(f, "%s%s", i ? "," : "", nl);
        tool_json_str(f, r->name);
        fprintf(f, ": {\"available\": %s", r->available ? "true" : "false");
        if (r->available && r->is_text) {
            fprintf(f, ", \"value\": ");
            tool_json_str(f, r->text);
        } else if (r->available) {
            fprintf(f, ", \"value\": %.6g", r->value);
        } else {
            fprintf(f, ", \"why\": ");
            tool_json_str(f, r->text);
        }
        if (r->unit[0]) {
            fprintf(f, ", \"unit\": ");
            tool_json_str(f, r->unit);
        }
        fprintf(f, ", \"source\": ");
        tool_json_str(f, r->source);
        fprintf(f, "}");
    }
    fprintf(f, "},%s\"processes\": ", nl2);
    if (!t->processes_known) {
        fprintf(f, "null, \"processes_why\": ");
        tool_json_str(f, t->processes_why);
    } else {
        fprintf(f, "[");
        for (uint32_t i = 0; i < t->nprocesses; i++) {
            const hcq_device_process *p = &t->processes[i];
            fprintf(f, "%s{\"pid\": %u, \"name\": ", i ? ", " : "", p->pid);
            tool_json_str(f, p->name);
            if (p->memory_known) fprintf(f, ", \"memory_bytes\": %llu", (unsigned long long)p->memory_bytes);
            else fprintf(f, ", \"memory_bytes\": null");
            fprintf(f, "}");
        }
        fprintf(f, "]");
    }
    fprintf(f, ",%s\"events\": [", nl2);
    for (uint32_t i = 0; i < t->nevents; i++) {
        fprintf(f, "%s", i ? ", " : "");
        tool_json_str(f, t->events[i]);
    }
    fprintf(f, "],%s\"this_process\": {\"timeline_submitted\": %llu, \"timeline_completed\": %llu, \"engines\": ",
            nl2, (unsigned long long)t->timeline_submitted, (unsigned long long)t->timeline_completed);
    tool_json_str(f, t->engines);
    fprintf(f, "}}");
}
