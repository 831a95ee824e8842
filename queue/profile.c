/* HCQ_PROFILE=trace.json: a Chrome / Perfetto trace of everything the
 * timeline runs. Each eager kernel, copy and graph node is bracketed by two
 * timestamp commands on its engine; the host's submit calls are recorded
 * too. Spans are read back once their end timestamp has landed (at
 * synchronize, at the next replay of a graph, at close) and the whole trace
 * is rewritten at every device close and at exit, so a crash loses only the
 * spans since the last close.
 *
 * Tracks: a process per device, threads "compute", "copy" and "host".
 * Device timestamps are put in the host's clock by an offset measured at
 * open (from the shortest of a few submit/timestamp round trips); on the CPU device
 * and the mock they are the host clock already.
 *
 * Each GPU span carries args (kernel: grid, block, registers, local bytes;
 * copy: bytes; both: queue, device) and ends a flow event ("s" on the host
 * slice of the call that submitted it, "f" bound to the span), so a viewer
 * draws an arrow from each submit to the work it caused. The trace's
 * otherData names hcq's version and revision, and each device process its
 * driver and target (labels). */
#include "base/base.h"
#include "queue/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct prof_event {
    uint32_t pid, tid; /* device index + 1; 1 compute, 2 copy, 3 host */
    char name[64];
    uint64_t ts_ns, dur_ns;
    uint64_t flow;  /* GPU spans: the flow they end; host events: the first flow they start */
    uint32_t nflow; /* host events: flows started */
    char args[200]; /* JSON members, "" for none */
} prof_event;

static struct {
    pthread_mutex_t lock;
    prof_event *ev;
    size_t n, cap;
    char devices[16][192]; /* process names */
    char labels[16][128];  /* process labels: driver, target, mock */
    bool atexit_set;
    bool said; /* a failure to write was said */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct q_prof_span {
    hcq_signal *t0, *t1;
    uint32_t tid;
    char name[64];
    char args[200];
    uint64_t flow;
    q_prof_span *next;
};

static atomic_uint_fast64_t next_flow = 1;

uint64_t q_prof_flows(uint32_t n) { return atomic_fetch_add(&next_flow, n ? n : 1); }

uint64_t q_prof_span_flow(const q_prof_span *sp) { return sp ? sp->flow : 0; }

/* a dimension of a launch: its value, or "var N" (a recorded queue's or
 * graph's variable, patched at each submission) */
static int dim_json(char *out, size_t n, hcq_val v)
{
    return hcq_val_is_var(v) ? snprintf(out, n, "\"var %u\"", hcq_val_var_index(v))
                             : snprintf(out, n, "%llu", (unsigned long long)v.imm);
}

void q_prof_launch_args(char *out, size_t size, const hcq_device *dev, const hcq_program *p, const hcq_dims *dims,
                        const char *queue)
{
    char g[3][32], b[3][32];
    for (int i = 0; i < 3; i++) {
        dim_json(g[i], sizeof g[i], dims->grid[i]);
        dim_json(b[i], sizeof b[i], dims->block[i]);
    }
    snprintf(out, size,
             "\"grid\": [%s, %s, %s], \"block\": [%s, %s, %s], \"registers\": %u, \"local_bytes\": %u, "
             "\"queue\": \"%s\", \"device\": \"%s\"",
             g[0], g[1], g[2], b[0], b[1], b[2], p->info.registers, p->info.local_bytes, queue, dev->props.id);
}

void q_prof_copy_args(char *out, size_t size, const hcq_device *dev, hcq_val bytes, const char *queue)
{
    char n[32];
    dim_json(n, sizeof n, bytes);
    snprintf(out, size, "\"bytes\": %s, \"queue\": \"%s\", \"device\": \"%s\"", n, queue, dev->props.id);
}

bool q_prof_on(void) { return base_env_get()->profile != NULL; }

static void add_event(uint32_t pid, uint32_t tid, const char *name, uint64_t ts, uint64_t dur, uint64_t flow,
                      uint32_t nflow, const char *args)
{
    pthread_mutex_lock(&P.lock);
    if (P.n == P.cap) {
        size_t cap = P.cap ? P.cap * 2 : 1024;
        prof_event *e = realloc(P.ev, cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&P.lock);
            return; /* a profile with a gap beats no program */
        }
        P.ev = e;
        P.cap = cap;
    }
    prof_event *e = &P.ev[P.n++];
    e->pid = pid;
    e->tid = tid;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ts_ns = ts;
    e->dur_ns = dur;
    e->flow = flow;
    e->nflow = nflow;
    snprintf(e->args, sizeof e->args, "%s", args ? args : "");
    pthread_mutex_unlock(&P.lock);
}

static void json_name(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

/* A trace that cannot be written is said once per process at the default
 * level, with the errno (the trace is rewritten at every close and at exit:
 * the same failure would repeat, and exit has no caller to tell). Its status
 * goes to the close that met it; an open that finds the path unusable only
 * returns it (its caller says it). */
static hcq_status write_failed(const char *path, const char *what, int err, bool log)
{
    char msg[PATH_MAX + 256];
    snprintf(msg, sizeof msg, "HCQ_PROFILE=%s: cannot %s it: %s (%s); no profile is written. Fix the path or unset "
             "HCQ_PROFILE", path, what, base_errno_name(-err), strerror(err));
    if (log && !P.said) base_log(0, "%s", msg);
    P.said = P.said || log;
    return base_err(HCQ_EIO, "%s", msg);
}

static hcq_status write_trace(void)
{
    const char *path = base_env_get()->profile;
    if (!path) return HCQ_OK;
    pthread_mutex_lock(&P.lock);
    FILE *f = fopen(path, "w");
    if (!f) {
        hcq_status st = write_failed(path, "create", errno, true);
        pthread_mutex_unlock(&P.lock);
        return st;
    }
    fprintf(f, "{\"displayTimeUnit\": \"ns\",\n \"otherData\": {\"hcq_version\": ");
    json_name(f, hcq_version());
    fprintf(f, ", \"hcq_revision\": ");
    json_name(f, hcq_build_revision());
    fprintf(f, "},\n \"traceEvents\": [\n");
    static const char *threads[] = {"", "compute", "copy", "host"};
    bool first = true;
    for (uint32_t d = 0; d < 16; d++) {
        if (!P.devices[d][0]) continue;
        fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %u, \"args\": {\"name\": ", first ? "" : ",\n",
                d + 1);
        json_name(f, P.devices[d]);
        fprintf(f, "}},\n{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": %u, \"args\": {\"labels\": ", d + 1);
        json_name(f, P.labels[d]);
        fprintf(f, "}}");
        first = false;
        for (uint32_t t = 1; t <= 3; t++)
            fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %u, \"tid\": %u, \"args\": {\"name\": \"%s\"}}",
                    d + 1, t, threads[t]);
    }
    for (size_t i = 0; i < P.n; i++) {
        const prof_event *e = &P.ev[i];
        double ts = (double)e->ts_ns / 1000.0;
        fprintf(f, "%s{\"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, \"name\": ", first ? "" : ",\n",
                e->pid, e->tid, ts, (double)e->dur_ns / 1000.0);
        json_name(f, e->name);
        if (e->args[0]) fprintf(f, ", \"args\": {%s}", e->args);
        fprintf(f, "}");
        first = false;
        /* flows: starts inside the host slice, ends bound to the GPU slice */
        for (uint32_t k = 0; e->tid == 3 && k < e->nflow; k++)
            fprintf(f, ",\n{\"ph\": \"s\", \"cat\": \"submit\", \"name\": \"submit\", \"id\": %llu, \"pid\": %u, "
                       "\"tid\": 3, \"ts\": %.3f}",
                    (unsigned long long)(e->flow + k), e->pid, ts);
        if (e->tid != 3 && e->flow)
            fprintf(f, ",\n{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"submit\", \"name\": \"submit\", \"id\": %llu, "
                       "\"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
                    (unsigned long long)e->flow, e->pid, e->tid, ts);
    }
    fprintf(f, "\n]}\n");
    int err = ferror(f) ? errno : 0;
    if (fclose(f) != 0 && !err) err = errno;
    hcq_status st = err ? write_failed(path, "write", err, true) : HCQ_OK;
    pthread_mutex_unlock(&P.lock);
    return st;
}

static void write_at_exit(void) { (void)write_trace(); }

static uint32_t pid_of(hcq_device *dev) { return (dev->qd->prof_slot % 16) + 1; }

void q_prof_host(hcq_device *dev, const char *name, uint64_t t0, uint64_t t1, uint64_t flow, uint32_t nflow,
                 const char *args)
{
    add_event(pid_of(dev), 3, name, t0, t1 > t0 ? t1 - t0 : 0, flow, nflow, args);
}

/* The device clock minus the host clock, from round trips of a timestamp
 * command (dev->lock held by nobody): the stamp lands somewhere between the
 * submit and the wait's return, so the round trip with the shortest time
 * bounds the error best (to half of it); a loaded machine stretches most. */
static int64_t calibrate(hcq_device *dev)
{
    enum { N = 5 };
    int64_t best = 0;
    uint64_t best_rtt = UINT64_MAX;
    hcq_signal *s = mem_signal_new(dev, 0);
    if (!s) return 0;
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&dev->lock);
        drv_rec *r = q_eager_begin(dev, HCQ_QUEUE_COMPUTE);
        dev->be->rec_timestamp(r, HCQ_IMM(s->va));
        uint64_t n = mem_tl_next(dev), h0 = hcq_now_ns();
        hcq_status st = q_eager_end(dev, r);
        pthread_mutex_unlock(&dev->lock);
        if (st || mem_tl_wait(dev, n, 0)) break;
        uint64_t h1 = hcq_now_ns();
        if (h1 - h0 < best_rtt) {
            best_rtt = h1 - h0;
            best = (int64_t)mem_signal_timestamp_ns(s) - (int64_t)((h0 + h1) / 2);
        }
    }
    mem_signal_delete(s);
    return best;
}

hcq_status q_prof_open(hcq_device *dev)
{
    if (!q_prof_on()) return HCQ_OK;
    /* A path that cannot be created is found now, not at exit: the open
     * fails (so does the program that needed the profile, with the reason)
     * instead of a run whose profile is silently lost */
    const char *path = base_env_get()->profile;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        pthread_mutex_lock(&P.lock);
        hcq_status st = write_failed(path, "create", errno, false);
        pthread_mutex_unlock(&P.lock);
        return st;
    }
    close(fd);
    static atomic_uint next_slot;
    struct queue_dev *qd = dev->qd;
    qd->prof_slot = atomic_fetch_add(&next_slot, 1);
    pthread_mutex_lock(&P.lock);
    snprintf(P.devices[qd->prof_slot % 16], sizeof P.devices[0], "%s %s", dev->props.id, dev->props.name);
    snprintf(P.labels[qd->prof_slot % 16], sizeof P.labels[0], "%s%s%s, target %s%s", dev->props.kind,
             dev->props.driver_version[0] ? " driver " : "", dev->props.driver_version, dev->props.target,
             dev->props.is_mock ? ", emulated (mock GPU)" : "");
    if (!P.atexit_set) P.atexit_set = atexit(write_at_exit) == 0;
    pthread_mutex_unlock(&P.lock);
    /* the CPU device and the mock stamp with the host clock already (the
     * AMD mock in 10 ns ticks of it, which ts_mul scales back): measuring
     * would only add the error of a round trip on a loaded machine */
    qd->prof_offset = !strcmp(dev->props.kind, "CPU") || dev->props.is_mock ? 0 : calibrate(dev);
    return HCQ_OK;
}

q_prof_span *q_prof_begin(hcq_device *dev, drv_rec *r, const char *name, const char *args)
{
    q_prof_span *sp = calloc(1, sizeof *sp);
    if (!sp) return NULL;
    sp->t0 = mem_signal_new(dev, 0);
    sp->t1 = mem_signal_new(dev, 0);
    if (!sp->t0 || !sp->t1) {
        if (sp->t0) mem_signal_delete(sp->t0);
        if (sp->t1) mem_signal_delete(sp->t1);
        free(sp);
        return NULL;
    }
    sp->tid = r->type == HCQ_QUEUE_COPY ? 2 : 1;
    snprintf(sp->name, sizeof sp->name, "%s", name);
    snprintf(sp->args, sizeof sp->args, "%s", args ? args : "");
    sp->flow = q_prof_flows(1);
    dev->be->rec_timestamp(r, HCQ_IMM(sp->t0->va));
    return sp;
}

void q_prof_end(hcq_device *dev, drv_rec *r, q_prof_span *sp)
{
    if (!sp) return;
    dev->be->rec_timestamp(r, HCQ_IMM(sp->t1->va));
    pthread_mutex_lock(&dev->qd->list_lock);
    sp->next = dev->qd->prof_pending;
    dev->qd->prof_pending = sp;
    pthread_mutex_unlock(&dev->qd->list_lock);
}

void q_prof_discard(q_prof_span *sp)
{
    if (!sp) return;
    mem_signal_delete(sp->t0);
    mem_signal_delete(sp->t1);
    free(sp);
}

/* Turns a finished span into an event; false while its end has not landed. */
bool q_prof_resolve(hcq_device *dev, hcq_signal *t0, hcq_signal *t1, uint32_t tid, const char *name, uint64_t flow,
                    const char *args)
{
    uint64_t a = mem_signal_timestamp_ns(t0), b = mem_signal_timestamp_ns(t1);
    if (!b) return false;
    int64_t off = dev->qd->prof_offset;
    add_event(pid_of(dev), tid, name, (uint64_t)((int64_t)a - off), b > a ? b - a : 0, flow, 0, args);
    return true;
}

hcq_status q_prof_point_begin(q_prof_points *pts, hcq_queue *q, const char *name, const char *args,
                              q_prof_point **out)
{
    *out = NULL;
    if (!q_prof_on()) return HCQ_OK;
    if (pts->n == pts->cap) {
        uint32_t cap = pts->cap ? pts->cap * 2 : 64;
        q_prof_point *p = base_realloc_array(pts->p, cap, sizeof *p);
        if (!p) return HCQ_ENOMEM;
        pts->p = p;
        pts->cap = cap;
    }
    q_prof_point *p = &pts->p[pts->n];
    memset(p, 0, sizeof *p);
    if (!(p->t0 = mem_signal_new(q->dev, 0)) || !(p->t1 = mem_signal_new(q->dev, 0))) {
        if (p->t0) mem_signal_delete(p->t0);
        return hcq_error_status();
    }
    pts->n++;
    p->tid = q->type == HCQ_QUEUE_COPY ? 2 : 1;
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->args, sizeof p->args, "%s", args ? args : "");
    *out = p;
    return q_timestamp_at(q, HCQ_IMM(p->t0->va));
}

hcq_status q_prof_point_end(hcq_queue *q, q_prof_point *p) { return p ? q_timestamp_at(q, HCQ_IMM(p->t1->va)) : HCQ_OK; }

void q_prof_points_harvest(hcq_device *dev, q_prof_points *pts)
{
    for (uint32_t i = 0; i < pts->n; i++) {
        q_prof_point *p = &pts->p[i];
        q_prof_resolve(dev, p->t0, p->t1, p->tid, p->name, pts->flow_base ? pts->flow_base + i : 0, p->args);
        p->t0->cpu[1] = p->t1->cpu[1] = 0;
    }
}

void q_prof_points_submitted(hcq_device *dev, q_prof_points *pts, const char *name, uint64_t t0, uint64_t t1)
{
    if (!pts->n) return;
    pts->flow_base = q_prof_flows(pts->n);
    char args[96];
    snprintf(args, sizeof args, "\"commands\": %u, \"device\": \"%s\"", pts->n, dev->props.id);
    q_prof_host(dev, name, t0, t1, pts->flow_base, pts->n, args);
}

void q_prof_points_free(q_prof_points *pts)
{
    for (uint32_t i = 0; i < pts->n; i++) {
        mem_signal_delete(pts->p[i].t0);
        mem_signal_delete(pts->p[i].t1);
    }
    free(pts->p);
    memset(pts, 0, sizeof *pts);
}

void q_prof_harvest(hcq_device *dev, bool all)
{
    struct queue_dev *qd = dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    q_prof_span **pp = &qd->prof_pending;
    while (*pp) {
        q_prof_span *sp = *pp;
        if (q_prof_resolve(dev, sp->t0, sp->t1, sp->tid, sp->name, sp->flow, sp->args) || all) {
            *pp = sp->next;
            q_prof_discard(sp);
        } else {
            pp = &sp->next;
        }
    }
    pthread_mutex_unlock(&qd->list_lock);
}

hcq_status q_prof_close(hcq_device *dev)
{
    if (!q_prof_on() || !dev->qd) return HCQ_OK;
    q_prof_harvest(dev, true);
    return write_trace();
}
