#include "base/base.h"
#include "queue/internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ** names: "CPU", "NV:0", "amd:1" */

static const drv_backend *find_backend(const char *kind, size_t len)
{
    for (const drv_backend *const *b = drv_backends(); *b; b++)
        if (strlen((*b)->kind) == len && !strncasecmp((*b)->kind, kind, len)) return *b;
    return NULL;
}

uint32_t hcq_device_list(char names[][16], uint32_t max)
{
    uint32_t n = 0;
    for (const drv_backend *const *b = drv_backends(); *b; b++) {
        uint32_t c = (*b)->count();
        for (uint32_t i = 0; i < c; i++, n++) {
            if (n >= max) continue;
            if (!strcmp((*b)->kind, "CPU")) snprintf(names[n], 16, "CPU");
            else snprintf(names[n], 16, "%s:%u", (*b)->kind, i);
        }
    }
    return n;
}

uint32_t hcq_device_count(const char *kind, char *why, size_t why_size)
{
    if (why && why_size) why[0] = 0;
    const drv_backend *be = kind ? find_backend(kind, strlen(kind)) : NULL;
    if (!be) {
        if (why && why_size) snprintf(why, why_size, "unknown device kind `%s`: kinds are CPU, NV and AMD", kind);
        return 0;
    }
    uint32_t n = be->count();
    if (!n && why && why_size) {
        if (be->why_absent) be->why_absent(why, why_size);
        else snprintf(why, why_size, "its driver is not present");
    }
    return n;
}

static void present_list(char *out, size_t size)
{
    char names[32][16];
    uint32_t n = hcq_device_list(names, 32);
    size_t off = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < n && i < 32 && off < size; i++) {
        int k = snprintf(out + off, size - off, "%s%s", i ? ", " : "", names[i]);
        if (k < 0) break;
        off += (size_t)k;
    }
}

static hcq_status parse_name(const char *name, const drv_backend **be, uint32_t *index)
{
    size_t klen = strcspn(name, ":");
    *be = find_backend(name, klen);
    char present[256];
    if (!*be) {
        present_list(present, sizeof present);
        return base_err(HCQ_ENODEV, "unknown device `%s`: kinds are CPU, NV and AMD (present here: %s)", name,
                        present[0] ? present : "none");
    }
    *index = 0;
    if (name[klen] == ':') {
        const char *d = name + klen + 1;
        char *end;
        unsigned long v = strtoul(d, &end, 10);
        if (!*d || *end || !isdigit((unsigned char)*d) || v > 1024)
            return base_err(HCQ_ENODEV, "bad device index in `%s`: write KIND or KIND:N, e.g. NV:0", name);
        *index = (uint32_t)v;
    }
    uint32_t count = (*be)->count();
    if (*index >= count) {
        present_list(present, sizeof present);
        if (!count) {
            char why[1024];
            hcq_device_count((*be)->kind, why, sizeof why);
            return base_err(HCQ_ENODEV, "no %s device: %s%s (present here: %s)", (*be)->kind, why,
                            base_env_get()->mock ? "" : ". Without a GPU, HCQ_MOCK=1 emulates one",
                            present[0] ? present : "none");
        }
        return base_err(HCQ_ENODEV, "%s does not exist: %u %s device%s present (present here: %s)", name, count,
                        (*be)->kind, count == 1 ? "" : "s", present);
    }
    return HCQ_OK;
}

static const drv_backend *best_backend(void)
{
    for (const drv_backend *const *b = drv_backends(); *b; b++)
        if ((*b)->count()) return *b;
    return NULL;
}

hcq_device *hcq_device_open(const char *name)
{
    const drv_backend *be = NULL;
    uint32_t index = 0;
    if (base_env_check("hcq_device_open")) return NULL;
    bool from_env = !name && base_env_get()->device;
    if (!name) name = base_env_get()->device;
    if (name) {
        hcq_status ps = parse_name(name, &be, &index);
        if (ps && from_env) base_err_prefix(ps, "HCQ_DEVICE=%s", name); /* the name came from the environment */
        if (ps) return NULL;
    } else if (!(be = best_backend())) {
        base_err(HCQ_ENODEV, "no device present");
        return NULL;
    }
    hcq_device *dev = base_calloc(1, sizeof *dev);
    if (!dev) return NULL;
    drv_device_init(dev);
    dev->be = be;
    dev->props.index = index;
    snprintf(dev->props.id, sizeof dev->props.id, "%s:%u", be->kind, index);
    hcq_status s = be->open(dev, index);
    if (s) {
        base_err_prefix(s, "opening %s:%u", be->kind, index);
        drv_device_fini(dev);
        free(dev);
        return NULL;
    }
    if ((s = mem_dev_init(dev)) || (s = q_dev_init(dev)) || (s = q_prof_open(dev))) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        q_dev_fini(dev);
        mem_dev_fini(dev);
        be->close(dev);
        drv_device_fini(dev);
        free(dev);
        base_err(s, "%s", msg);
        return NULL;
    }
    base_handle_add(dev, BASE_H_DEVICE);
    q_status_open(dev);
    char fixed[32];
    BASE_LOG(1, "opened %s: %s, target %s, %u compute units, fixed memory %s", dev->props.id, dev->props.name,
             dev->props.target, dev->props.compute_units,
             base_fmt_bytes(fixed, sizeof fixed, dev->props.fixed_memory_bytes));
    return dev;
}

/* How long close lets submitted work run before it stops the engines
 * (bounded by HCQ_TIMEOUT_MS), and how long the timeline may stand still
 * meanwhile: work that completes on its own spares the engines a cancel,
 * but a parked queue or a long kernel is not waited for. (What the work
 * would produce is lost with the device's memory either way.) */
#define Q_CLOSE_GRACE_NS 1000000000ull
#define Q_CLOSE_STALL_NS 100000000ull

/* Waits for the timeline to reach last while it keeps moving; false when
 * it stood still for Q_CLOSE_STALL_NS or the grace ran out first. */
static bool close_grace(hcq_device *dev, uint64_t last)
{
    hcq_signal *t = dev->mem->timeline;
    uint64_t grace = BASE_MIN(Q_CLOSE_GRACE_NS, base_env_get()->timeout_ns), start = hcq_now_ns();
    for (;;) {
        uint64_t seen = atomic_load_explicit((_Atomic uint64_t *)t->cpu, memory_order_acquire);
        uint64_t spent = hcq_now_ns() - start;
        if (spent >= grace) return false;
        hcq_status s = mem_wait(dev, t->cpu, t->va, last, BASE_MIN(Q_CLOSE_STALL_NS, grace - spent),
                                "the timeline signal");
        if (s != HCQ_ETIMEDOUT) return s == HCQ_OK;
        if (atomic_load_explicit((_Atomic uint64_t *)t->cpu, memory_order_acquire) == seen) return false;
    }
}

hcq_status hcq_device_close(hcq_device *dev)
{
    if (!dev) return HCQ_OK;
    if (!base_handle_remove(dev, BASE_H_DEVICE))
        return base_err(HCQ_ESTATE, "hcq_device_close: %p is not an open device (closed twice?)", (void *)dev);
    uint64_t t0 = hcq_now_ns();
    /* 1. submitted work may finish for a short while (not on a device that
     * faulted or hung: its work will not) */
    if (!atomic_load(&dev->faulted)) {
        pthread_mutex_lock(&dev->lock);
        uint64_t last = mem_tl_next(dev) - 1;
        pthread_mutex_unlock(&dev->lock);
        if (!close_grace(dev, last)) BASE_LOG(1, "closing %s with work in flight", dev->props.id);
    }
    /* HCQ_PROFILE: the recorded queues' last spans, given a moment to land */
    if (q_prof_on()) q_queues_harvest_all(dev, Q_CLOSE_STALL_NS);
    /* 2. the device is lost from here: every wait below returns at once */
    drv_set_fault(dev, HCQ_ESTATE, "the device was closed");
    /* 3. the engines stop before anything they might touch is freed */
    bool stopped = dev->be->halt ? dev->be->halt(dev) : true;
    /* 4. what lives on the device, from the top: tensor contexts, graphs,
     * queues, programs, buffers and signals */
    unsigned nctx = base_dependents_run(dev);
    if (nctx)
        BASE_LOG(1, "%s closed with %u tensor contexts (or other devices' graphs spanning it) still alive; destroyed "
                 "them", dev->props.id, nctx);
    q_graph_destroy_all(dev);
    /* a profile that cannot be written is this close's error (the device
     * closes all the same) */
    hcq_status prof = q_prof_close(dev);
    char prof_msg[1024] = "";
    if (prof) snprintf(prof_msg, sizeof prof_msg, "%s", hcq_error_message());
    q_status_close(dev);
    q_dev_fini(dev);
    mem_dev_fini(dev);
    dev->be->close(dev);
    BASE_LOG(1, "%s closed in %.1f ms", dev->props.id, (double)(hcq_now_ns() - t0) / 1e6);
    if (stopped) {
        drv_device_fini(dev);
        free(dev);
    } /* else the backend frees the record once its engines are done */
    return prof ? base_err(prof, "%s", prof_msg) : HCQ_OK;
}

/* hcq_device_get_props@@HCQ_0.2: hcq_device_props grew in 0.2
 * (cache_bytes and paths, at its end). The library owns the struct, so the 0.1
 * version is the same function: its callers read the fields they know. */
HCQ_API const hcq_device_props *q_device_get_props(const hcq_device *dev);
HCQ_API const hcq_device_props *q_device_get_props_0_1(const hcq_device *dev) __attribute__((alias("q_device_get_props")));
BASE_SYMVER(q_device_get_props, hcq_device_get_props, HCQ_0.2);
BASE_SYMVER_OLD(q_device_get_props_0_1, hcq_device_get_props, HCQ_0.1);
const hcq_device_props *q_device_get_props(const hcq_device *dev)
{
    if (Q_CHECK_DEV(dev, "hcq_device_get_props")) return NULL;
    return &dev->props;
}

hcq_status hcq_device_synchronize(hcq_device *dev)
{
    hcq_status s = Q_CHECK_DEV(dev, "hcq_device_synchronize");
    if (s) return s;
    pthread_mutex_lock(&dev->lock);
    uint64_t last = mem_tl_next(dev) - 1;
    pthread_mutex_unlock(&dev->lock);
    s = mem_tl_wait(dev, last, 0);
    /* the pending list is read under its lock (q_prof_harvest): another
     * thread's launch may be adding to it now */
    if (!s && q_prof_on()) q_prof_harvest(dev, false);
    q_status_update(dev, Q_STATUS_SYNC, HCQ_QUEUE_COMPUTE, 0);
    return s;
}

hcq_status hcq_device_status(hcq_device *dev)
{
    hcq_status s = Q_CHECK_DEV(dev, "hcq_device_status");
    if (s) return s;
    if (dev->be->poll) dev->be->poll(dev);
    return drv_fault_status(dev);
}

hcq_signal *hcq_device_timeline(hcq_device *dev)
{
    if (Q_CHECK_DEV(dev, "hcq_device_timeline")) return NULL;
    return dev->mem->timeline;
}

uint64_t hcq_device_timeline_value(const hcq_device *dev)
{
    if (Q_CHECK_DEV(dev, "hcq_device_timeline_value")) return 0;
    return mem_tl_next(dev) - 1;
}

hcq_status hcq_device_peer_access(hcq_device *from, hcq_device *to)
{
    hcq_status s = Q_CHECK_DEV(from, "hcq_device_peer_access");
    if (!s) s = Q_CHECK_DEV(to, "hcq_device_peer_access");
    if (s || from == to) return s;
    hcq_buffer *probe = hcq_buffer_alloc(to, 4096, HCQ_MEM_DEVICE);
    if (!probe) return base_err_prefix(hcq_error_status(), "hcq_device_peer_access: a probe buffer on %s",
                                       to->props.id);
    s = q_peer_map(from, probe);
    char why[768] = "";
    if (s) snprintf(why, sizeof why, "%s", hcq_error_message());
    hcq_buffer_free(probe);
    if (s) return base_err(s, "%s", why);
    return HCQ_OK;
}
