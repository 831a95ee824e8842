/* The status page of an open device (queue/status.h), for `hcq top`. A
 * device that cannot publish (no /dev/shm, HCQ_STATUS_DIR=off) works the
 * same; HCQ_DEBUG=2 says why it did not. */
#include "queue/status.h"

#include "base/base.h"
#include "drivers/sys.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *q_status_dir(char *buf, size_t size)
{
    const char *d = base_env_get()->status_dir;
    if (d && !strcmp(d, "off")) return NULL;
    if (d) return d;
    if (sys_libc()->exists(NULL, "/dev/shm") != 0) return NULL;
    snprintf(buf, size, "/dev/shm/hcq-%u", (unsigned)geteuid());
    return buf;
}

void q_status_open(hcq_device *dev)
{
    struct queue_dev *qd = dev->qd;
    char dirbuf[64];
    const char *dir = q_status_dir(dirbuf, sizeof dirbuf);
    if (!dir) return;
    char id[16];
    snprintf(id, sizeof id, "%s", dev->props.id);
    for (char *c = id; *c; c++)
        if (*c == ':') *c = '-';
    snprintf(qd->status_path, sizeof qd->status_path, "%s/%d-%s.status", dir, (int)getpid(), id);
    int err = 0;
    q_status_page *p = sys_status_map(dir, qd->status_path, sizeof *p, &err);
    if (!p) {
        BASE_LOG(2, "%s: no status page for hcq top at %s: %s", dev->props.id, qd->status_path, strerror(err));
        qd->status_path[0] = 0;
        return;
    }
    memcpy(p->magic, Q_STATUS_MAGIC, sizeof Q_STATUS_MAGIC);
    p->version = Q_STATUS_VERSION;
    p->pid = (uint32_t)getpid();
    snprintf(p->device, sizeof p->device, "%s", dev->props.id);
    snprintf(p->name, sizeof p->name, "%s", dev->props.name);
    char comm[64] = "";
    if (sys_libc()->read_file(NULL, "/proc/self/comm", comm, sizeof comm) > 0) comm[strcspn(comm, "\n")] = 0;
    snprintf(p->comm, sizeof p->comm, "%.31s", comm);
    p->open_ns = hcq_now_ns();
    atomic_store(&p->update_ns, p->open_ns);
    qd->status = p;
}

void q_status_update(hcq_device *dev, int what, hcq_queue_type engine, uint64_t tl_submitted)
{
    q_status_page *p = dev->qd ? dev->qd->status : NULL;
    if (!p) return;
    if (what == Q_STATUS_LAUNCH) atomic_fetch_add_explicit(&p->launches, 1, memory_order_relaxed);
    if (what == Q_STATUS_COPY) atomic_fetch_add_explicit(&p->copies, 1, memory_order_relaxed);
    if (what != Q_STATUS_SYNC) /* every kind but a sync is a stream submitted */
        atomic_fetch_add_explicit(&p->submits[engine == HCQ_QUEUE_COPY], 1, memory_order_relaxed);
    if (tl_submitted) atomic_store_explicit(&p->timeline_submitted, tl_submitted, memory_order_relaxed);
    atomic_store_explicit(&p->timeline_completed, hcq_signal_value(dev->mem->timeline), memory_order_relaxed);
    uint32_t none = 0; /* the first thread to see the fault writes it: 1 writing, 2 written */
    if (atomic_load(&dev->faulted) && atomic_compare_exchange_strong(&p->faulted, &none, 1)) {
        pthread_mutex_lock(&dev->fault_lock);
        snprintf(p->fault, sizeof p->fault, "%.439s", dev->fault_msg);
        pthread_mutex_unlock(&dev->fault_lock);
        atomic_store_explicit(&p->faulted, 2, memory_order_release);
    }
    atomic_store_explicit(&p->update_ns, hcq_now_ns(), memory_order_release);
}

void q_status_close(hcq_device *dev)
{
    struct queue_dev *qd = dev->qd;
    if (!qd || !qd->status) return;
    sys_status_unmap(qd->status, sizeof *qd->status, qd->status_path);
    qd->status = NULL;
}
