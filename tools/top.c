/* hcq top: the devices' telemetry (hcq_device_telemetry) refreshed every
 * interval, with the processes the drivers show on each device, and the
 * progress of every process using hcq on them, read from the status pages
 * open devices publish (queue/status.h). --json prints one JSON object per
 * refresh (JSON Lines). */
#include "tools/tools.h"

#include "queue/status.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq top [--json] [-n COUNT] [-d SECONDS] [DEVICE...]\n\n"
               "Refreshes, every SECONDS (default 1), what `hcq info` reports about the devices (the GPUs\n"
               "present, else the CPU, or the DEVICEs named): utilization, temperature, power, clocks and\n"
               "memory, the processes the driver shows on each, and the progress of every process using\n"
               "hcq (its timeline: submitted, completed, in flight; launches, copies; its fault). A reading\n"
               "a driver does not give shows as \"-\" (`hcq info` and --json say why). -n stops after\n"
               "COUNT refreshes. --json prints one JSON object per refresh, one per line. Each device top\n"
               "watches is opened, so it holds that device's fixed memory while it runs.\n");
}

/* ** the status pages of hcq processes */
typedef struct peer {
    q_status_page p;
    char file[300];
} peer;

static bool alive(uint32_t pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static int peer_cmp(const void *a, const void *b)
{
    const peer *x = a, *y = b;
    return x->p.pid != y->p.pid ? (x->p.pid < y->p.pid ? -1 : 1) : strcmp(x->p.device, y->p.device);
}

/* reads the pages of other live processes into out (at most max); removes
 * the pages of processes that are gone */
static uint32_t read_peers(peer *out, uint32_t max)
{
    char buf[64];
    const char *dir = q_status_dir(buf, sizeof buf);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return 0;
    uint32_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 7, ".status")) continue;
        peer *p = &out[n];
        snprintf(p->file, sizeof p->file, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p->file, "rb");
        if (!f) continue;
        size_t got = fread(&p->p, 1, sizeof p->p, f);
        fclose(f);
        if (got != sizeof p->p || memcmp(p->p.magic, Q_STATUS_MAGIC, sizeof Q_STATUS_MAGIC) ||
            p->p.version != Q_STATUS_VERSION)
            continue;
        p->p.device[sizeof p->p.device - 1] = p->p.name[sizeof p->p.name - 1] = 0;
        p->p.comm[sizeof p->p.comm - 1] = p->p.fault[sizeof p->p.fault - 1] = 0;
        for (char *c = p->p.comm; *c; c++) /* a process names itself */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        if (p->p.pid == (uint32_t)getpid()) continue;
        if (!alive(p->p.pid)) {
            unlink(p->file); /* its process died without closing the device */
            continue;
        }
        n++;
    }
    closedir(d);
    qsort(out, n, sizeof *out, peer_cmp);
    return n;
}

/* ** one refresh */
typedef struct watched {
    hcq_device *dev;
    hcq_telemetry t;
} watched;

static void cell(const hcq_telemetry *t, const char *name, char *out, size_t n)
{
    const hcq_reading *r = hcq_telemetry_find(t, name);
    if (!r || !r->available) snprintf(out, n, "-");
    else if (!strcmp(r->unit, "W")) snprintf(out, n, "%.1f W", r->value);
    else snprintf(out, n, "%.0f %s", r->value, r->unit);
}

static void print_text(const watched *w, uint32_t nw, const peer *peers, uint32_t np, double interval, bool tty)
{
    if (tty) printf("\033[H\033[2J");
    time_t now = time(NULL);
    struct tm tm;
    char clock[16];
    strftime(clock, sizeof clock, "%H:%M:%S", localtime_r(&now, &tm));
    printf("hcq top  %s  %u device%s, every %.1f s%s\n\n", clock, nw, nw == 1 ? "" : "s", interval,
           tty ? " (Ctrl-C quits)" : "");
    printf("%-7s %-30s %6s %6s %9s %9s %23s %5s\n", "DEVICE", "NAME", "UTIL", "TEMP", "POWER", "SM CLOCK", "MEMORY USED / TOTAL",
           "PROCS");
    for (uint32_t i = 0; i < nw; i++) {
        const hcq_device_props *p = hcq_device_get_props(w[i].dev);
        const hcq_telemetry *t = &w[i].t;
        char util[16], temp[16], power[16], clk[16], mem[64] = "-", procs[16] = "-";
        cell(t, "utilization.gpu", util, sizeof util);
        cell(t, "temperature.gpu", temp, sizeof temp);
        if (!strcmp(temp, "-")) cell(t, "temperature.hotspot", temp, sizeof temp);
        cell(t, "power.draw", power, sizeof power);
        cell(t, "clocks.sm", clk, sizeof clk);
        const hcq_reading *u = hcq_telemetry_find(t, "memory.used"), *tot = hcq_telemetry_find(t, "memory.total");
        if (u && u->available && tot && tot->available) {
            char a[24], b[24];
            tool_human_bytes(u->value, a, sizeof a);
            tool_human_bytes(tot->value, b, sizeof b);
            snprintf(mem, sizeof mem, "%s / %s", a, b);
        }
        if (t->processes_known) snprintf(procs, sizeof procs, "%u", t->nprocesses);
        printf("%-7s %-30.30s %6s %6s %9s %9s %23s %5s\n", p->id, p->name, util, temp, power, clk, mem, procs);
    }
    bool any = false;
    for (uint32_t i = 0; i < nw; i++)
        for (uint32_t k = 0; k < w[i].t.nprocesses; k++) {
            const hcq_device_process *pr = &w[i].t.processes[k];
            if (!any) printf("\n%-7s %-8s %-16s %12s\n", "DEVICE", "PID", "COMMAND", "MEMORY");
            any = true;
            char m[24] = "?";
            if (pr->memory_known) tool_human_bytes((double)pr->memory_bytes, m, sizeof m);
            printf("%-7s %-8u %-16s %12s\n", hcq_device_get_props(w[i].dev)->id, pr->pid, pr->name[0] ? pr->name : "?",
                   m);
        }
    char dbuf[64];
    const char *dir = q_status_dir(dbuf, sizeof dbuf);
    printf("\nhcq processes (status pages in %s)\n", dir ? dir : "nowhere: HCQ_STATUS_DIR=off or no /dev/shm");
    if (!np) {
        printf("  none besides this one\n");
    } else {
        printf("%-8s %-16s %-7s %10s %10s %9s %9s %8s %8s\n", "PID", "COMMAND", "DEVICE", "SUBMITTED", "COMPLETED",
               "IN FLIGHT", "LAUNCHES", "COPIES", "UPDATED");
        uint64_t t_now = hcq_now_ns();
        for (uint32_t i = 0; i < np; i++) {
            const q_status_page *p = &peers[i].p;
            uint64_t sub = atomic_load(&p->timeline_submitted), done = atomic_load(&p->timeline_completed);
            uint64_t up = atomic_load(&p->update_ns);
            printf("%-8u %-16s %-7s %10llu %10llu %9llu %9llu %8llu %6.1f s\n", p->pid, p->comm, p->device,
                   (unsigned long long)sub, (unsigned long long)done,
                   (unsigned long long)(sub > done ? sub - done : 0), (unsigned long long)atomic_load(&p->launches),
                   (unsigned long long)atomic_load(&p->copies), t_now > up ? (double)(t_now - up) / 1e9 : 0.0);
            if (atomic_load(&p->faulted) == 2) printf("         faulted: %s\n", p->fault);
        }
    }
    for (uint32_t i = 0; i < nw; i++)
        for (uint32_t k = 0; k < w[i].t.nevents; k++)
            printf("%s%-7s %s\n", k ? "" : "\n", hcq_device_get_props(w[i].dev)->id, w[i].t.events[k]);
    fflush(stdout);
}

static void print_json(const watched *w, uint32_t nw, const peer *peers, uint32_t np)
{
    printf("{");
    tool_json_hcq(stdout);
    printf(", \"time_ns\": %llu, \"devices\": [", (unsigned long long)hcq_now_ns());
    for (uint32_t i = 0; i < nw; i++) {
        const hcq_device_props *p = hcq_device_get_props(w[i].dev);
        printf("%s{\"id\": ", i ? ", " : "");
        tool_json_str(stdout, p->id);
        printf(", \"name\": ");
        tool_json_str(stdout, p->name);
        printf(", \"telemetry\": ");
        tool_telemetry_json(stdout, &w[i].t, false);
        printf("}");
    }
    printf("], \"hcq_processes\": [");
    for (uint32_t i = 0; i < np; i++) {
        const q_status_page *p = &peers[i].p;
        printf("%s{\"pid\": %u, \"command\": ", i ? ", " : "", p->pid);
        tool_json_str(stdout, p->comm);
        printf(", \"device\": ");
        tool_json_str(stdout, p->device);
        printf(", \"timeline_submitted\": %llu, \"timeline_completed\": %llu, \"submits\": [%llu, %llu], "
               "\"launches\": %llu, \"copies\": %llu, \"update_ns\": %llu, \"fault\": ",
               (unsigned long long)atomic_load(&p->timeline_submitted),
               (unsigned long long)atomic_load(&p->timeline_completed), (unsigned long long)atomic_load(&p->submits[0]),
               (unsigned long long)atomic_load(&p->submits[1]), (unsigned long long)atomic_load(&p->launches),
               (unsigned long long)atomic_load(&p->copies), (unsigned long long)atomic_load(&p->update_ns));
        if (atomic_load(&p->faulted) == 2) tool_json_str(stdout, p->fault);
        else printf("null");
        printf("}");
    }
    printf("]}\n");
    fflush(stdout);
}

static int parse_count(const char *opt, const char *v, long *out)
{
    char *end;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < 1) {
        fprintf(stderr, "hcq top: %s takes a positive whole number, not `%s`\n", opt, v ? v : "");
        return 2;
    }
    *out = x;
    return 0;
}

int tool_top(int argc, char **argv)
{
    bool json = false;
    long count = 0;
    double interval = 1.0;
    char names[16][16];
    uint32_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (tool_is_help(a)) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--count")) {
            if (parse_count(a, i + 1 < argc ? argv[++i] : NULL, &count)) return 2;
        } else if (!strcmp(a, "-d") || !strcmp(a, "--interval")) {
            char *end;
            const char *v = i + 1 < argc ? argv[++i] : "";
            interval = strtod(v, &end);
            if (!*v || *end || !(interval >= 0.05 && interval <= 3600)) {
                fprintf(stderr, "hcq top: %s takes seconds between 0.05 and 3600, not `%s`\n", a, v);
                return 2;
            }
        } else if (a[0] == '-') {
            return tool_bad_arg("top", a);
        } else if (n < 16) {
            snprintf(names[n++], sizeof names[0], "%s", a);
        } else {
            fprintf(stderr, "hcq top: at most 16 devices, not `%s` too\n", a);
            return 2;
        }
    }
    if (!n) { /* the GPUs; the CPU only when there is none */
        char all[32][16];
        uint32_t m = hcq_device_list(all, 32);
        for (uint32_t i = 0; i < m && i < 32 && n < 16; i++)
            if (strcmp(all[i], "CPU")) snprintf(names[n++], sizeof names[0], "%.15s", all[i]);
        if (!n) snprintf(names[n++], sizeof names[0], "CPU");
    }
    watched *w = calloc(n, sizeof *w);
    peer *peers = calloc(64, sizeof *peers);
    if (!w || !peers) {
        free(w);
        free(peers);
        fprintf(stderr, "hcq top: out of memory\n");
        return 1;
    }
    int rc = 0;
    uint32_t nw = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(w[nw].dev = hcq_device_open(names[i]))) {
            rc = tool_fail(names[i]);
            continue;
        }
        nw++;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bool tty = !json && isatty(STDOUT_FILENO);
    for (long k = 0; nw && !stop && (!count || k < count); k++) {
        if (k) {
            struct timespec ts = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop) {
            }
            if (stop) break;
        }
        for (uint32_t i = 0; i < nw; i++) hcq_device_telemetry(w[i].dev, &w[i].t);
        uint32_t np = read_peers(peers, 64);
        if (json) print_json(w, nw, peers, np);
        else print_text(w, nw, peers, np, interval, tty);
    }
    for (uint32_t i = 0; i < nw; i++) hcq_device_close(w[i].dev);
    free(w);
    free(peers);
    return nw ? rc : 1;
}
