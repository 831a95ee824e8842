/* queue/status.h: the status page each open device publishes for `hcq top`
 * (queue/status.c writes it, tools/top.c reads it): a small file per device
 * and process in HCQ_STATUS_DIR (default /dev/shm/hcq-<uid>, mode 0700),
 * named <pid>-<device id with ':' as '-'>.status, mapped shared and updated
 * with plain atomic stores at each submission and synchronize. The file is
 * removed at close; one whose process is gone is stale (top skips it and
 * removes it). Counters only grow. */
#ifndef HCQ_QUEUE_STATUS_H
#define HCQ_QUEUE_STATUS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define Q_STATUS_MAGIC "HCQSTAT"
#define Q_STATUS_VERSION 1u

typedef struct q_status_page {
    char magic[8];          /* "HCQSTAT\0" */
    uint32_t version, pid;
    char device[16];        /* "NV:0" */
    char name[96];          /* the device's name */
    char comm[32];          /* the process's command name */
    uint64_t open_ns;       /* CLOCK_MONOTONIC, as hcq_now_ns() */
    _Atomic uint64_t update_ns;
    _Atomic uint64_t timeline_submitted; /* the last timeline value submitted */
    _Atomic uint64_t timeline_completed; /* the last value the process saw completed */
    _Atomic uint64_t submits[2];         /* streams submitted: compute, copy */
    _Atomic uint64_t launches, copies;   /* eager launches and copies */
    _Atomic uint32_t faulted;            /* 2: fault holds the device's fault message */
    char fault[440];
} q_status_page;
_Static_assert(sizeof(q_status_page) == 672, "status page layout (bump Q_STATUS_VERSION when it changes)");

/* The directory status pages go in (HCQ_STATUS_DIR, else /dev/shm/hcq-<uid>
 * when /dev/shm exists), written into buf when computed; NULL for none. */
const char *q_status_dir(char *buf, size_t size);

#endif
