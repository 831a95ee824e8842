/* queue/: devices, queues, programs, eager calls and graphs, over the backend
 * table and mem/. Internal interface shared by the files of this layer. */
#ifndef HCQ_QUEUE_INTERNAL_H
#define HCQ_QUEUE_INTERNAL_H

#include "drivers/backend.h"
#include "mem/mem.h"

#include <hcq/queue.h>

/* memory a recorded queue owns for its kernargs / QMDs */
typedef struct q_chunk {
    drv_mem mem;
    uint32_t used;
    struct q_chunk *next;
} q_chunk;

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
    hcq_queue *next, *prev;
};

struct queue_dev {
    drv_rec eager[2]; /* scratch recordings for eager calls, by engine */
    uint64_t eager_tag; /* the timeline value the eager recording retires with */
    hcq_queue *queues;
    hcq_graph *graphs;
    hcq_program *programs;
    hcq_signal *dbg_t[2]; /* HCQ_DEBUG=2 launch timestamps */
    pthread_mutex_t list_lock;
};

hcq_status q_dev_init(hcq_device *dev);
void q_dev_fini(hcq_device *dev);

/* Checks args against the program and turns them into parameter values.
 * buffer_val, when given, maps a buffer arg to its value (graphs make it a
 * variable); otherwise it is the buffer's address. */
typedef hcq_status (*q_buffer_val_fn)(void *ctx, hcq_buffer *b, hcq_val *out);
hcq_status q_resolve_args(hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_val *params,
                          q_buffer_val_fn buffer_val, void *ctx, const char *fn);
/* Checks launch dims: immediates now; variables are resolved with vars
 * (NULL: skip variables). */
hcq_status q_check_dims(const hcq_program *p, const hcq_dims *d, const uint64_t *vars, const char *fn);

/* internal queues (graphs): created without a device-list entry */
hcq_queue *q_create(hcq_device *dev, hcq_queue_type type, bool internal);
void q_free(hcq_queue *q);
/* Submits with patches applied; `track` adds the completion signal used to
 * keep aux memory alive and to serialise re-patching. */
hcq_status q_submit(hcq_queue *q, const uint64_t *vars, uint32_t nvars, bool track);
hcq_status q_exec(hcq_queue *q, hcq_program *p, const hcq_val *params, const hcq_dims *dims, const char *fn);
hcq_status q_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size, const char *fn);

/* eager: fills qd->eager[type] between begin and end (dev->lock held) */
drv_rec *q_eager_begin(hcq_device *dev, hcq_queue_type type);
hcq_status q_eager_end(hcq_device *dev, drv_rec *r);

void q_graph_destroy_all(hcq_device *dev);
void q_programs_free_all(hcq_device *dev);

#endif
