/* The KFD process, device bring-up and teardown, faults, and the backend
 * table. Bring-up (tinygrad/tinygrad tinygrad/runtime/ops_amd.py KFDIface,
 * ../shared/reference/amd-facts.md §2.2): open /dev/kfd, GET_VERSION, open
 * the GPU's render node and ACQUIRE_VM with it, RUNTIME_ENABLE (mode ENABLE) on ABI 1.13+,
 * the fault events, then the queues (amd_queue.c). */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ** the KFD process */
#define AMD_MAX_GPUS 64

static struct {
    pthread_mutex_t lock;
    int kfd_fd; /* -1 until opened */
    bool have_version;
    uint32_t major, minor;
    bool runtime_enabled;
    amd_proc_gpu gpus[AMD_MAX_GPUS];
    int ngpus;
    int compute_queue; /* amd_proc_set_compute_queue */
    amd_paths paths;   /* amd_proc_set_paths */
    bool no_selftest;
} proc = {.lock = PTHREAD_MUTEX_INITIALIZER, .kfd_fd = -1, .compute_queue = -1};

void amd_proc_set_paths(const amd_paths *p)
{
    pthread_mutex_lock(&proc.lock);
    proc.paths = p ? *p : AMD_PATHS_PROVEN;
    pthread_mutex_unlock(&proc.lock);
}

amd_paths amd_proc_paths(void)
{
    pthread_mutex_lock(&proc.lock);
    amd_paths p = proc.paths;
    pthread_mutex_unlock(&proc.lock);
    return p;
}

void amd_proc_set_selftest(bool on)
{
    pthread_mutex_lock(&proc.lock);
    proc.no_selftest = !on;
    pthread_mutex_unlock(&proc.lock);
}

bool amd_proc_selftest(void)
{
    pthread_mutex_lock(&proc.lock);
    bool on = !proc.no_selftest;
    pthread_mutex_unlock(&proc.lock);
    return on;
}

void amd_paths_describe(const amd_paths *p, const amd_arch *a, bool aql, char *buf, size_t size)
{
    /* the names HCQ_MOCK_CONFIG refuse= takes, so a report and a mock
     * switch say the same thing */
    bool gfx11 = a->family == AMD_FAMILY_GFX11;
    snprintf(buf, size, "%s %s%s%s", aql ? "barrier-value" : p->wait64 ? "wait-reg-mem64" : "wait-reg-mem32",
             p->hdp_one_bit ? "hdp-one-bit" : "hdp-all-bits", gfx11 ? (p->priv0 ? " priv-0" : " priv-1") : "",
             aql ? (p->dispatch_pm4 ? " dispatch-pm4" : " dispatch-aql") : "");
}

void amd_proc_set_compute_queue(int kind)
{
    pthread_mutex_lock(&proc.lock);
    proc.compute_queue = kind;
    pthread_mutex_unlock(&proc.lock);
}

int amd_proc_compute_queue(void)
{
    pthread_mutex_lock(&proc.lock);
    int k = proc.compute_queue;
    pthread_mutex_unlock(&proc.lock);
    return k;
}

int amd_proc_gpu_slot(uint32_t gpu_id)
{
    int slot = -1;
    pthread_mutex_lock(&proc.lock);
    for (int i = 0; i < proc.ngpus; i++)
        if (proc.gpus[i].gpu_id == gpu_id && proc.gpus[i].acquired) slot = i;
    pthread_mutex_unlock(&proc.lock);
    return slot;
}

uint32_t amd_proc_gpu_id(int slot)
{
    pthread_mutex_lock(&proc.lock);
    uint32_t id = slot >= 0 && slot < proc.ngpus ? proc.gpus[slot].gpu_id : 0;
    pthread_mutex_unlock(&proc.lock);
    return id;
}

const char *amd_kfd_ioctl_name(unsigned long cmd)
{
    const char *n = kfd_ioctl_name(cmd);
    return n ? n : "ioctl";
}

int amd_kfd_ioctl(unsigned long cmd, void *arg)
{
    pthread_mutex_lock(&proc.lock);
    int fd = proc.kfd_fd;
    pthread_mutex_unlock(&proc.lock);
    return fd < 0 ? -EBADF : sys_ioctl(fd, cmd, arg);
}

static hcq_status kfd_err(int rc, unsigned long cmd, const char *what)
{
    return base_err(rc == -ENOMEM ? HCQ_ENOMEM : HCQ_EIO, "amdkfd %s failed (%s) %s", amd_kfd_ioctl_name(cmd),
                    strerror(-rc), what);
}

hcq_status amd_proc_acquire(const amd_node *n, int *kfd_fd, int *render_fd, uint32_t *major, uint32_t *minor)
{
    hcq_status s = HCQ_OK;
    pthread_mutex_lock(&proc.lock);
    if (proc.kfd_fd < 0) {
        int fd = sys_open("/dev/kfd", O_RDWR);
        if (fd < 0) {
            char hint[512];
            sys_open_hint("/dev/kfd", fd, "render", hint, sizeof hint);
            s = base_err(HCQ_ENODEV, "cannot open /dev/kfd: %s (%s)%s", base_errno_name(fd), strerror(-fd),
                         hint[0] ? hint : fd == -ENOENT ? "; amdgpu is loaded without KFD (CONFIG_HSA_AMD)" : "");
            goto out;
        }
        proc.kfd_fd = fd;
    }
    if (!proc.have_version) {
        kfd_get_version_args v = {0};
        int rc = sys_ioctl(proc.kfd_fd, KFD_IOC_GET_VERSION, &v);
        if (rc < 0) {
            s = kfd_err(rc, KFD_IOC_GET_VERSION, "on /dev/kfd: is amdgpu loaded with KFD support?");
            goto out;
        }
        if (v.major_version != 1) {
            s = base_err(HCQ_ENOTSUP, "amdkfd reports ABI %u.%u; hcq speaks ABI 1.x", v.major_version,
                         v.minor_version);
            goto out;
        }
        proc.major = v.major_version;
        proc.minor = v.minor_version;
        proc.have_version = true;
    }
    amd_proc_gpu *g = NULL;
    for (int i = 0; i < proc.ngpus; i++)
        if (proc.gpus[i].gpu_id == n->gpu_id) g = &proc.gpus[i];
    if (!g) {
        if (proc.ngpus == AMD_MAX_GPUS) {
            s = base_err(HCQ_ELIMIT, "more than %d AMD GPUs", AMD_MAX_GPUS);
            goto out;
        }
        char path[64];
        snprintf(path, sizeof path, "/dev/dri/renderD%u", n->render_minor);
        int fd = sys_open(path, O_RDWR);
        if (fd < 0) {
            char hint[512];
            sys_open_hint(path, fd, "render", hint, sizeof hint);
            s = base_err(HCQ_ENODEV, "cannot open %s (GPU %s, node %u): %s (%s)%s", path, n->arch_name, n->node,
                         base_errno_name(fd), strerror(-fd), hint);
            goto out;
        }
        g = &proc.gpus[proc.ngpus++];
        *g = (amd_proc_gpu){.gpu_id = n->gpu_id, .render_fd = fd};
    }
    if (!g->acquired) {
        kfd_acquire_vm_args a = {.drm_fd = (uint32_t)g->render_fd, .gpu_id = n->gpu_id};
        int rc = sys_ioctl(proc.kfd_fd, KFD_IOC_ACQUIRE_VM, &a);
        if (rc < 0) {
            s = kfd_err(rc, KFD_IOC_ACQUIRE_VM, rc == -EBUSY ? "(the GPU's VM is bound to another render file of this "
                        "process)" : "binding the render node's VM to the KFD process");
            goto out;
        }
        g->acquired = true;
    }
    /* RUNTIME_ENABLE must come before the process's first queue on any GPU
     * (EEXIST after); a second call is EBUSY, which means it is on */
    if (proc.minor >= KFD_VERSION_RUNTIME_ENABLE && !proc.runtime_enabled) {
        kfd_runtime_enable_args r = {.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK};
        int rc = sys_ioctl(proc.kfd_fd, KFD_IOC_RUNTIME_ENABLE, &r);
        if (rc < 0 && rc != -EBUSY) {
            s = kfd_err(rc, KFD_IOC_RUNTIME_ENABLE, "enabling the KFD runtime for this process");
            goto out;
        }
        proc.runtime_enabled = true;
    }
    *kfd_fd = proc.kfd_fd;
    *render_fd = g->render_fd;
    *major = proc.major;
    *minor = proc.minor;
out:
    pthread_mutex_unlock(&proc.lock);
    return s;
}

/* ** devices */
static uint32_t amd_count(void)
{
    amd_node *nodes = calloc(AMD_MAX_NODES, sizeof *nodes);
    int n = nodes ? amd_topology_read(nodes, AMD_MAX_NODES) : 0, c = 0;
    for (int i = 0; i < n; i++) c += nodes[i].arch != NULL;
    free(nodes);
    return (uint32_t)c;
}

/* Why amd_count() is 0: no KFD topology (amdgpu not loaded, or built
 * without KFD), no GPU node in it, or only GPUs hcq does not drive. */
static void why_absent_in(amd_node *nodes, char *buf, size_t size);

static void amd_why_absent(char *buf, size_t size)
{
    amd_node *nodes = calloc(AMD_MAX_NODES, sizeof *nodes);
    if (!nodes) {
        snprintf(buf, size, "out of host memory reading the KFD topology");
        return;
    }
    why_absent_in(nodes, buf, size);
    free(nodes);
}

static void why_absent_in(amd_node *nodes, char *buf, size_t size)
{
    int n = amd_topology_read(nodes, AMD_MAX_NODES);
    if (n <= 0 && base_env_get()->mock) {
        snprintf(buf, size, "the KFD topology %s: %s: HCQ_MOCK=1 and the mock's configuration (HCQ_MOCK_CONFIG) "
                 "has no AMD GPU", AMD_KFD_TOPOLOGY, n < 0 ? base_errno_name(n) : "no GPU node");
        return;
    }
    if (n < 0) {
        snprintf(buf, size, "the KFD topology %s: %s (%s): the amdgpu kernel driver is not loaded, or has no KFD; "
                 "load it with `sudo modprobe amdgpu` and see `sudo dmesg | grep -i kfd`", AMD_KFD_TOPOLOGY,
                 base_errno_name(n), strerror(-n));
        return;
    }
    if (n == 0) {
        snprintf(buf, size, "the KFD topology (%s) lists no GPU node, only CPUs: see `sudo dmesg | grep -i amdgpu`",
                 AMD_KFD_TOPOLOGY);
        return;
    }
    char names[128] = "";
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", nodes[i].arch_name);
    }
    char driven[128];
    amd_chips_driven_list(driven, sizeof driven);
    snprintf(buf, size, "KFD lists %s, which hcq does not drive (it drives %s)", names, driven);
}

static hcq_status find_node_in(amd_node *nodes, uint32_t index, amd_node *out);
static hcq_status find_node(uint32_t index, amd_node *out)
{
    amd_node *nodes = calloc(AMD_MAX_NODES, sizeof *nodes);
    if (!nodes) return HCQ_ENOMEM;
    hcq_status s = find_node_in(nodes, index, out);
    free(nodes);
    return s;
}

static hcq_status find_node_in(amd_node *nodes, uint32_t index, amd_node *out)
{
    int n = amd_topology_read(nodes, AMD_MAX_NODES);
    if (n < 0) return base_err(HCQ_ENODEV, "no AMD GPU: the KFD topology (%s) is absent: %s", AMD_KFD_TOPOLOGY,
                               strerror(-n));
    uint32_t k = 0;
    char others[128] = "";
    for (int i = 0; i < n; i++) {
        if (!nodes[i].arch) {
            size_t l = strlen(others);
            snprintf(others + l, sizeof others - l, "%s%s", l ? ", " : "", nodes[i].arch_name);
            continue;
        }
        if (k++ == index) {
            *out = nodes[i];
            return HCQ_OK;
        }
    }
    char driven[128];
    amd_chips_driven_list(driven, sizeof driven);
    return base_err(HCQ_ENODEV, "AMD:%u does not exist: %u AMD GPUs hcq drives (%s)%s%s", index, k, driven,
                    others[0] ? "; also present, not driven: " : "", others);
}

static hcq_status create_event(amd_dev *ad, uint32_t type, uint32_t *id)
{
    kfd_create_event_args e = {.event_type = type, .auto_reset = 1, .node_id = ad->node.node};
    int rc = amd_kfd_ioctl(KFD_IOC_CREATE_EVENT, &e);
    if (rc < 0) return kfd_err(rc, KFD_IOC_CREATE_EVENT, type == KFD_EVENT_MEMORY ? "for GPU memory faults"
                                                                                  : "for GPU resets");
    *id = e.event_id;
    return HCQ_OK;
}

static void destroy_event(uint32_t *id)
{
    if (!*id) return;
    kfd_destroy_event_args e = {.event_id = *id};
    amd_kfd_ioctl(KFD_IOC_DESTROY_EVENT, &e);
    *id = 0;
}

/* KFD preempts and unmaps a queue it destroys: the engines stop here, and
 * the rings and everything else go after (amd_close destroys the queues'
 * memory; destroying a destroyed queue is a no-op). */
static bool amd_halt(hcq_device *dev)
{
    amd_dev *ad = amd_of(dev);
    if (ad) amd_queues_halt(ad);
    return true;
}

static void amd_close(hcq_device *dev)
{
    amd_dev *ad = amd_of(dev);
    if (!ad) return;
    amd_queues_destroy(ad);
    amd_selftest_free(ad);
    if (ad->scratch.size) amd_bo_free(ad, &ad->scratch);
    for (uint32_t i = 0; i < ad->nold_scratch; i++) amd_bo_free(ad, &ad->old_scratch[i]);
    free(ad->old_scratch);
    if (ad->doorbells) sys_munmap(ad->doorbells, KFD_DOORBELL_SLICE_BYTES);
    destroy_event(&ad->mem_event);
    destroy_event(&ad->hw_event);
    pthread_mutex_destroy(&ad->scratch_lock);
    pthread_mutex_destroy(&ad->names_lock);
    free(ad->prog_names);
    free(ad);
    dev->priv = NULL;
}

static void fill_props(amd_dev *ad, hcq_device_props *pr, bool mock)
{
    const amd_node *n = &ad->node;
    char mem[32];
    char xcc[24] = "";
    if (n->num_xcc > 1) snprintf(xcc, sizeof xcc, " in %u XCCs", n->num_xcc);
    snprintf(pr->name, sizeof pr->name, "AMD %s [%04x:%04x], %u CUs%s, %s", n->arch_name, n->vendor_id, n->device_id,
             n->cu_count, xcc, base_fmt_bytes(mem, sizeof mem, n->vram_bytes));
    strcpy(pr->kind, "AMD");
    snprintf(pr->arch, sizeof pr->arch, "%s", n->arch_name);
    snprintf(pr->target, sizeof pr->target, "%s", n->arch_name);
    if (mock) {
        /* the mock runs real code objects on its ISA executor (by default,
         * HCQ_MOCK_SHADER=isa; compiler/isa.h) or as their host twins where
         * clang knows the processor, else IR in a code object shaped like one */
        ad->dev->mock_shader = drv_mock_shader(n->arch_name, "code objects (HIP -> clang)", pr->target, sizeof pr->target,
                                          pr->shader, sizeof pr->shader);
        BASE_LOG(1, "AMD (mock %s): target %s; kernels run as %s", n->arch_name, pr->target, pr->shader);
    }
    snprintf(pr->driver_version, sizeof pr->driver_version, "amdkfd %u.%u", ad->kfd_major, ad->kfd_minor);
    snprintf(pr->pci_address, sizeof pr->pci_address, "%04x:%02x:%02x.%x", n->domain, (n->location_id >> 8) & 0xff,
             (n->location_id >> 3) & 0x1f, n->location_id & 7);
    pr->compute_units = n->cu_count;
    pr->memory_bytes = n->vram_bytes;
    pr->clock_mhz = n->clock_mhz;
    bool aql = ad->compute.kind == AMD_QUEUE_AQL;
    char paths[64];
    amd_paths_describe(&ad->paths, ad->arch, aql, paths, sizeof paths);
    snprintf(pr->engines, sizeof pr->engines, "%s (gfx_target_version %u), %u XCC%s, compute: %s queue (%s), "
             "copy: SDMA", n->arch_name, n->gfx_version, n->num_xcc ? n->num_xcc : 1, n->num_xcc > 1 ? "s" : "",
             aql ? "AQL" : "PM4", paths);
    /* the self-test's report where it ran, else the paths as chosen */
    snprintf(pr->paths, sizeof pr->paths, "%s", ad->selftest[0] ? ad->selftest : paths);
    pr->max_threads_per_group = 1024;
    pr->max_block[0] = pr->max_block[1] = pr->max_block[2] = 1024;
    /* DISPATCH_DIRECT's dims are 32-bit work-group counts */
    pr->max_grid[0] = pr->max_grid[1] = pr->max_grid[2] = 0x7fffffffu;
    pr->max_local_bytes = (n->lds_kib ? n->lds_kib : 64) * 1024;
    pr->is_mock = mock;
}

static hcq_status amd_open(hcq_device *dev, uint32_t index)
{
    amd_node node;
    hcq_status s = find_node(index, &node);
    if (s) return s;
    amd_dev *ad = base_calloc(1, sizeof *ad);
    if (!ad) return HCQ_ENOMEM;
    dev->priv = ad;
    ad->dev = dev;
    ad->node = node;
    ad->arch = node.arch;
    pthread_mutex_init(&ad->scratch_lock, NULL);
    pthread_mutex_init(&ad->names_lock, NULL);
    if ((s = amd_proc_acquire(&node, &ad->kfd_fd, &ad->render_fd, &ad->kfd_major, &ad->kfd_minor))) goto fail;
    if ((s = create_event(ad, KFD_EVENT_MEMORY, &ad->mem_event))) goto fail;
    if ((s = create_event(ad, KFD_EVENT_HW_EXCEPTION, &ad->hw_event))) goto fail;
    fill_props(ad, &dev->props, node.is_mock); /* the driver says it is hcq's mock */
    /* free VRAM, for hcq info: KFD 1.9 has the ioctl; an older one refuses
     * it (EINVAL / ENOTTY) and the figure stays unknown */
    if (ad->kfd_major > 1 || ad->kfd_minor >= 9) {
        kfd_available_memory_args am = {.gpu_id = node.gpu_id};
        int rc = amd_kfd_ioctl(KFD_IOC_AVAILABLE_MEMORY, &am);
        if (!rc) dev->props.memory_free_bytes = am.available;
        else if (rc != -EINVAL && rc != -ENOTTY) {
            s = kfd_err(rc, KFD_IOC_AVAILABLE_MEMORY, "asking for the free memory");
            goto fail;
        }
    }
    /* PM4 and SDMA timestamps count a 100 MHz clock (10 ns ticks) */
    dev->ts_mul = 10;
    dev->ts_div = 1;
    dev->stream_format[HCQ_QUEUE_COMPUTE] = "amd-pm4";
    dev->stream_format[HCQ_QUEUE_COPY] = "amd-sdma";
    dev->stream_arch[0] = dev->stream_arch[1] = node.gfx_version;
    ad->paths = amd_proc_paths();
    if ((s = amd_queues_create(ad))) goto fail;
    if (amd_proc_selftest() && (s = amd_selftest(ad))) goto fail;
    fill_props(ad, &dev->props, node.is_mock); /* again: the paths the self-test settled on */
    BASE_LOG(1, "%s: %s; paths: %s", dev->props.id, dev->props.engines, dev->props.paths);
    return HCQ_OK;
fail:
    base_err_prefix(s, "%s (%s, gpu_id %u)", dev->props.id, node.arch_name, node.gpu_id);
    amd_close(dev);
    return s;
}

/* ** faults: KFD reports GPU page faults through memory events and resets
 * through hw exception events; polled without blocking by waiters */
void amd_poll(hcq_device *dev)
{
    amd_dev *ad = amd_of(dev);
    if (!ad || !ad->mem_event || atomic_load(&dev->faulted)) return;
    kfd_event_data ev[2];
    memset(ev, 0, sizeof ev);
    ev[0].event_id = ad->mem_event;
    ev[1].event_id = ad->hw_event;
    kfd_wait_events_args w = {.events_ptr = (uint64_t)(uintptr_t)ev, .num_events = 2, .timeout = 0};
    if (amd_kfd_ioctl(KFD_IOC_WAIT_EVENTS, &w) < 0 || w.wait_result != KFD_WAIT_COMPLETE) return;
    const kfd_memory_exception_data *m = &ev[0].memory_exception_data;
    if (m->gpu_id == ad->node.gpu_id) {
        /* KFD does not say which queue: the one stopped short of its work is */
        amd_queue *q = !amd_queue_busy(&ad->compute) && amd_queue_busy(&ad->sdma) ? &ad->sdma : &ad->compute;
        char kname[96];
        const char *k = q == &ad->compute ? amd_queue_kernel_at_fault(q, kname, sizeof kname) : NULL;
        amd_queues_halt(ad);
        drv_set_fault(dev, HCQ_EFAULT,
                      "GPU memory fault at 0x%llx (%s%s) on %s's %s queue%s%s%s; KFD stopped the device's queues",
                      (unsigned long long)m->va,
                      m->failure.read_only ? "write to a read-only page" : m->failure.no_execute ? "execute of a no-execute page"
                                                                                                : "page not present",
                      m->failure.imprecise ? ", address imprecise" : "", dev->props.id, q->name,
                      k ? " running kernel `" : "", k ? k : "", k ? "`" : "");
        return;
    }
    const kfd_hw_exception_data *h = &ev[1].hw_exception_data;
    if (h->gpu_id == ad->node.gpu_id) {
        amd_queues_halt(ad);
        drv_set_fault(dev, HCQ_EIO, "%s was reset (%s%s): the work on it is lost", dev->props.id,
                      h->reset_cause ? "ECC error" : "GPU hang", h->memory_lost ? ", memory lost" : "");
    }
}

static void amd_signal_written(hcq_device *dev, uint64_t va)
{
    (void)dev;
    sys_notify(va); /* emulated engines parked on this memory look again */
}

const drv_backend drv_amd_backend = {
    .kind = "AMD",
    .count = amd_count,
    .why_absent = amd_why_absent,
    .open = amd_open,
    .close = amd_close,
    .halt = amd_halt,
    .mem_alloc = amd_mem_alloc,
    .mem_free = amd_mem_free,
    .peer_map = amd_peer_map,
    .program_load = amd_program_load,
    .program_free = amd_program_free,
    .rec_wait = amd_rec_wait,
    .rec_signal = amd_rec_signal,
    .rec_timestamp = amd_rec_timestamp,
    .rec_barrier = amd_rec_barrier,
    .rec_exec = amd_rec_exec,
    .rec_copy = amd_rec_copy,
    .copy_max_bytes = AMD_COPY_VAR_MAX,
    .submit = amd_submit,
    .poll = amd_poll,
    .notifies_progress = false,
    .signal_written = amd_signal_written,
    .describe = amd_describe,
    .telemetry = amd_telemetry,
};
