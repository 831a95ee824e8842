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
        if (!count)
            return base_err(HCQ_ENODEV, "no %s device: its driver is not present%s (present here: %s)", (*be)->kind,
                            base_env_get()->mock ? "" : "; HCQ_MOCK=1 emulates one", present[0] ? present : "none");
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
    if (!name) name = base_env_get()->device;
    if (name) {
        if (parse_name(name, &be, &index)) return NULL;
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
    if ((s = mem_dev_init(dev)) || (s = q_dev_init(dev))) {
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
    q_prof_open(dev);
    q_status_open(dev);
    char fixed[32];
    BASE_LOG(1, "opened %s: %s, target %s, %u compute units, fixed memory %s", dev->props.id, dev->props.name,
             dev->props.target, dev->props.compute_units,
             base_fmt_bytes(fixed, sizeof fixed, dev->props.fixed_memory_bytes));
    return dev;
}

hcq_status hcq_device_close(hcq_device *dev)
{
    if (!dev) return HCQ_OK;
    if (!base_handle_remove(dev, BASE_H_DEVICE))
        return base_err(HCQ_ESTATE, "hcq_device_close: %p is not an open device (closed twice?)", (void *)dev);
    /* let submitted work finish; a faulted or hung device is torn down anyway */
    hcq_status s = hcq_device_synchronize(dev);
    if (s && s != HCQ_EFAULT) BASE_LOG(1, "closing %s: %s", dev->props.id, hcq_error_message());
    q_graph_destroy_all(dev);
    if (q_prof_on()) q_queues_harvest_all(dev);
    q_prof_close(dev);
    q_status_close(dev);
    q_dev_fini(dev);
    mem_dev_fini(dev);
    dev->be->close(dev);
    drv_device_fini(dev);
    free(dev);
    return HCQ_OK;
}

const hcq_device_props *hcq_device_get_props(const hcq_device *dev) { return &dev->props; }

hcq_status hcq_device_synchronize(hcq_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    uint64_t last = mem_tl_next(dev) - 1;
    pthread_mutex_unlock(&dev->lock);
    hcq_status s = mem_tl_wait(dev, last, 0);
    if (!s && dev->qd->prof_pending) q_prof_harvest(dev, false);
    q_status_update(dev, Q_STATUS_SYNC, HCQ_QUEUE_COMPUTE, 0);
    return s;
}

hcq_status hcq_device_status(hcq_device *dev)
{
    if (dev->be->poll) dev->be->poll(dev);
    return drv_fault_status(dev);
}

hcq_signal *hcq_device_timeline(hcq_device *dev) { return dev->mem->timeline; }

uint64_t hcq_device_timeline_value(const hcq_device *dev) { return dev->mem->tl_next - 1; }
