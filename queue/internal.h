/* queue/: devices, queues, programs, eager calls and graphs, over the backend
 * table and mem/. Internal interface shared by the files of this layer. */
#ifndef HCQ_QUEUE_INTERNAL_H
#define HCQ_QUEUE_INTERNAL_H

#include "drivers/backend.h"
#include "mem/mem.h"

#include <hcq/queue.h>

typedef struct q_prof_span q_prof_span;

/* HCQ_PROFILE in recorded queues and graphs: a timestamp pair around a
 * command, read back once a submission completes and cleared for the next */
typedef struct q_prof_point {
    hcq_signal *t0, *t1;
    uint32_t tid;
    char name[64];
    char args[200]; /* JSON members (q_prof_launch_args) */
} q_prof_point;

typedef struct q_prof_points {
    q_prof_point *p;
    uint32_t n, cap;
    uint64_t flow_base; /* flows from the last submission's host event: point i ends flow_base + i */
} q_prof_points;

/* memory a recorded queue owns for its kernargs / QMDs */
typedef struct q_chunk {
    drv_mem mem;
    uint32_t used;
    struct q_chunk *next;
} q_chunk;

/* what a recording holds alive (holds.c) */
typedef struct q_hold_entry {
    void *p;
    uint32_t kind; /* BASE_H_BUFFER, _SIGNAL, _PROGRAM */
} q_hold_entry;
typedef struct q_holds {
    q_hold_entry *v; /* open addressing by pointer */
    uint32_t n, cap;
} q_holds;
/* Holds p (once per set) until q_holds_release. */
hcq_status q_hold(q_holds *h, uint32_t kind, void *p);
void q_holds_release(q_holds *h);
/* programs' own holds (program.c): a freed program stays loaded while held */
void q_program_hold(hcq_program *p);
void q_program_release(hcq_program *p);

/* a variable-size copy, checked against the engine's limit at submit */
typedef struct q_sizecheck {
    hcq_val size;
} q_sizecheck;

struct hcq_queue {
    hcq_device *dev;
    hcq_queue_type type;
    drv_rec rec;
    q_chunk *chunks;
    uint64_t *last_vars; /* values of the last submission (patch only changes) */
    uint32_t last_cap;
    bool primed;         /* last_vars holds a submission's values */
    uint32_t primed_npatches; /* patches that existed at that submission */
    hcq_val *sizechecks;
    uint32_t nsizechecks, scap;
    /* completion of submissions that use aux memory: done reaches done_value */
    hcq_signal *done;
    uint64_t done_value;
    drv_rec done_rec;
    bool internal; /* owned by a graph: not in the device's list */
    q_holds holds; /* programs, buffers and signals the commands use */
    q_prof_points prof; /* HCQ_PROFILE: around each exec of a user queue */
    hcq_queue *next, *prev;
};

struct queue_dev {
    drv_rec eager[2]; /* scratch recordings for eager calls, by engine */
    uint64_t eager_tag; /* the timeline value the eager recording retires with */
    /* Eager calls run after the recorded queues submitted before them
     * (queue/eager.c): each engine's fence signal is written behind every
     * user queue submitted to it, with values that grow in ring order
     * (under dev->lock); the first eager call after new submissions waits
     * for the last value, and the timeline orders every later one. */
    hcq_signal *fence[2];
    drv_rec fence_rec[2];
    uint64_t fence_next[2];   /* the last value a fence write carries */
    uint64_t fence_waited[2]; /* the last value an eager call waited for */
    uint64_t fence_pending[2]; /* what the eager call being recorded waits for */
    /* and the other way: a user queue runs after the eager calls submitted
     * before it (a wait for the timeline ahead of it, when it moved since
     * the engine last waited) */
    drv_rec tl_rec[2];
    uint64_t tl_waited[2];
    hcq_queue *queues;
    hcq_graph *graphs;
    hcq_program *programs;
    /* hcq_allreduce's fold kernels (queue/allreduce.c), by kind and dtype
     * (f32, i32, f16, bf16),
     * loaded on first use and kept until close; under list_lock */
    hcq_program *allreduce[3][4];
    hcq_signal *dbg_t[2]; /* HCQ_DEBUG=2 launch timestamps */
    /* HCQ_PROFILE */
    uint32_t prof_slot;      /* this device's process in the trace */
    int64_t prof_offset;     /* device clock - host clock, ns */
    q_prof_span *prof_pending; /* spans whose end may not have landed; under list_lock */
    pthread_mutex_t list_lock;
    /* the status page hcq top reads (queue/status.c), or NULL */
    struct q_status_page *status;
    char status_path[160];
};

/* ** the status page (queue/status.h): made at open, updated after each
 * submission and synchronize, removed at close */
enum { Q_STATUS_SUBMIT, Q_STATUS_LAUNCH, Q_STATUS_COPY, Q_STATUS_SYNC };
void q_status_open(hcq_device *dev);
/* what: Q_STATUS_*; engine: the engine a submission went to; tl_submitted:
 * the timeline's last submitted value, read under dev->lock (0: unchanged) */
void q_status_update(hcq_device *dev, int what, hcq_queue_type engine, uint64_t tl_submitted);
void q_status_close(hcq_device *dev);

hcq_status q_dev_init(hcq_device *dev);
void q_dev_fini(hcq_device *dev);
/* A user queue's submission, ordered with eager calls both ways (dev->lock
 * held): a wait for the timeline's last value ahead of the queue's commands
 * where it moved, the commands, then the engine's fence behind them. */
hcq_status q_submit_ordered(hcq_device *dev, drv_rec *rec);
/* Eager work that is not begun with q_eager_begin (a graph replay): waits
 * for the fences that moved, submitted on each engine it uses ahead of
 * its own commands (dev->lock held). */
hcq_status q_fence_waits(hcq_device *dev, const bool engines[2]);

/* the handle checks every public call starts with */
#define Q_CHECK_DEV(d, fn) base_handle_check((d), BASE_H_DEVICE, (fn), "device")
#define Q_CHECK_QUEUE(q, fn) base_handle_check((q), BASE_H_QUEUE, (fn), "queue")
#define Q_CHECK_PROGRAM(p, fn) base_handle_check((p), BASE_H_PROGRAM, (fn), "program")
#define Q_CHECK_GRAPH(g, fn) base_handle_check((g), BASE_H_GRAPH, (fn), "graph")
#define Q_CHECK_BUFFER(b, fn, what) base_handle_check((b), BASE_H_BUFFER, (fn), (what))
#define Q_CHECK_SIGNAL(s, fn) base_handle_check((s), BASE_H_SIGNAL, (fn), "signal")

/* Checks args against the program and turns them into parameter values.
 * buffer_val, when given, maps a buffer arg to its value (graphs make it a
 * variable); otherwise it is the buffer's address. Another device's buffer
 * is mapped for the program's device (peer mapping); with peer_wait and no
 * buffer_val the host also waits for the work its device submitted (else
 * the caller, an eager launch or a graph, orders the two on the GPUs). */
typedef hcq_status (*q_buffer_val_fn)(void *ctx, hcq_buffer *b, hcq_val *out);
hcq_status q_resolve_args(hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_val *params,
                          q_buffer_val_fn buffer_val, void *ctx, bool peer_wait, const char *fn);
/* Holds the program and every buffer argument in h (after q_resolve_args). */
hcq_status q_hold_launch(q_holds *h, hcq_program *p, const hcq_arg *args, uint32_t nargs);
/* Checks launch dims: immediates now; variables are resolved with vars
 * (NULL: skip variables). */
hcq_status q_check_dims(const hcq_program *p, const hcq_dims *d, const uint64_t *vars, const char *fn);

/* internal queues (graphs): created without a device-list entry */
hcq_queue *q_create(hcq_device *dev, hcq_queue_type type, bool internal);
void q_free(hcq_queue *q);
/* Submits with patches applied; `track` adds the completion signal used to
 * keep aux memory alive and to serialise re-patching. */
hcq_status q_submit(hcq_queue *q, const uint64_t *vars, uint32_t nvars, bool track);
/* What q_submit checks before anything reaches an engine (recording
 * errors, variable count, variable dims and copy sizes): a failure here
 * leaves the device as it was. */
hcq_status q_submit_checks(hcq_queue *q, const uint64_t *vars, uint32_t nvars);
hcq_status q_exec(hcq_queue *q, hcq_program *p, const hcq_val *params, const hcq_dims *dims, const char *fn);
hcq_status q_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size, const char *fn);
/* the recording calls without the public handle checks (internal queues) */
hcq_status q_wait_at(hcq_queue *q, hcq_val addr, hcq_val value);
hcq_status q_signal_at(hcq_queue *q, hcq_val addr, hcq_val value);
hcq_status q_timestamp_at(hcq_queue *q, hcq_val addr);

/* eager: fills qd->eager[type] between begin and end (dev->lock held) */
drv_rec *q_eager_begin(hcq_device *dev, hcq_queue_type type);
hcq_status q_eager_end(hcq_device *dev, drv_rec *r);

/* Peer access (eager.c): maps buffer b, of another device, for dev's
 * engines and kernels where the backends can (HCQ_OK), and waits for the
 * work b's device had submitted; HCQ_ENOTSUP, saying why, where they
 * cannot (different kinds, no peer path). */
hcq_status q_peer_use(hcq_device *dev, hcq_buffer *b);
/* The mapping alone: no wait (the caller orders the work itself). */
hcq_status q_peer_map(hcq_device *dev, hcq_buffer *b);

void q_graph_destroy_all(hcq_device *dev);
/* b, which nodes of g name, is g's own from now on (hcq_graph_allreduce's
 * scratch): its handle may go at once (g's holds keep its memory until g
 * goes) and replays take it as it is; no replacement is accepted for it. */
void q_graph_own(hcq_graph *g, hcq_buffer *b);

/* ** HCQ_PROFILE (profile.c). Every span carries args (grid, block,
 * registers, bytes, queue, device) and is the end of a flow that starts at
 * the host call that submitted it. */
bool q_prof_on(void);
/* HCQ_EIO when HCQ_PROFILE names a file that cannot be created (open) or
 * written (close): said once per process at the default level */
hcq_status q_prof_open(hcq_device *dev);
hcq_status q_prof_close(hcq_device *dev);
/* JSON members describing a launch / a copy, for args */
void q_prof_launch_args(char *out, size_t size, const hcq_device *dev, const hcq_program *p, const hcq_dims *dims,
                        const char *queue);
void q_prof_copy_args(char *out, size_t size, const hcq_device *dev, hcq_val bytes, const char *queue);
/* n fresh flow ids (the first; ids are never 0) */
uint64_t q_prof_flows(uint32_t n);
/* a timestamp into r now; q_prof_end puts the closing one and queues the
 * span, returning the flow it ends (0 for NULL). From then on the span
 * belongs to the pending list: another thread's synchronize may resolve
 * and free it at once, so the caller keeps the flow, never the span. */
q_prof_span *q_prof_begin(hcq_device *dev, drv_rec *r, const char *name, const char *args);
uint64_t q_prof_end(hcq_device *dev, drv_rec *r, q_prof_span *sp);
/* a host-side event [t0, t1] on the device's host track, starting flows
 * flow .. flow + nflow - 1 (nflow 0: none) */
void q_prof_host(hcq_device *dev, const char *name, uint64_t t0, uint64_t t1, uint64_t flow, uint32_t nflow,
                 const char *args);
/* turns finished spans into events (all: drop unfinished ones too) */
void q_prof_harvest(hcq_device *dev, bool all);
/* records the opening timestamp of a command about to be recorded on q
 * (and *out for the closing one); nothing when profiling is off */
hcq_status q_prof_point_begin(q_prof_points *pts, hcq_queue *q, const char *name, const char *args,
                              q_prof_point **out);
hcq_status q_prof_point_end(hcq_queue *q, q_prof_point *p);
/* reads every point's span (after the submission completed) and clears it */
void q_prof_points_harvest(hcq_device *dev, q_prof_points *pts);
void q_prof_points_free(q_prof_points *pts);
/* a submission of pts's points now [t0, t1]: a host event with a flow to each */
void q_prof_points_submitted(hcq_device *dev, q_prof_points *pts, const char *name, uint64_t t0, uint64_t t1);
/* reads the points of every user queue whose submissions completed */
void q_queues_harvest_all(hcq_device *dev, uint64_t wait_ns);
/* one span from two timestamp signals; false if the end has not landed */
bool q_prof_resolve(hcq_device *dev, hcq_signal *t0, hcq_signal *t1, uint32_t tid, const char *name, uint64_t flow,
                    const char *args);
void q_programs_free_all(hcq_device *dev);

#endif
