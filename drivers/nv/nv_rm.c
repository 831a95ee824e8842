/* RM and UVM calls, the process-wide driver state and the driver version
 * check. Every call goes through the syscall seam; every failure names the
 * step it was part of, the call and the driver's status by name. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

hcq_status nv_status_err(uint32_t status) { return status == NV_ERR_NO_MEMORY ? HCQ_ENOMEM : HCQ_EIO; }

static const char *errno_name(int e)
{
    switch (e) {
    case EINVAL: return "EINVAL";
    case EIO: return "EIO";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case EBUSY: return "EBUSY";
    case ENODEV: return "ENODEV";
    case ENOTTY: return "ENOTTY";
    default: return "errno";
    }
}

hcq_status nv_ioctl_err(int rc, const char *what, const char *call)
{
    return base_err(rc == -ENOMEM ? HCQ_ENOMEM : HCQ_EIO, "%s: ioctl %s failed: %s (%s %d)", what, call,
                    strerror(-rc), errno_name(-rc), -rc);
}

hcq_status nv_status_fail(uint32_t status, const char *what, const char *call)
{
    return base_err(nv_status_err(status), "%s: %s returned RM status %s (0x%x)", what, call, nv_status_name(status),
                    status);
}

/* ** the per-version ABI table (nv-facts §1 "ABI changes that matter") */
static const nv_abi_rev abi_revs[] = {
    {"570", 570, 574},
    {"575", 575, 579},
    {"580", 580, 589},
};

const char *nv_abi_supported_range(void) { return "570.x to 589.x"; }

const nv_abi_rev *nv_abi_for_version(const char *version)
{
    char *end;
    unsigned long major = strtoul(version, &end, 10);
    if (end == version || (*end && *end != '.')) return NULL;
    for (size_t i = 0; i < BASE_ARRAY_LEN(abi_revs); i++)
        if (major >= abi_revs[i].major_lo && major <= abi_revs[i].major_hi) return &abi_revs[i];
    return NULL;
}

/* ** RM escapes */
hcq_status nv_alloc_object(nv_proc *p, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *handle,
                       const char *what)
{
    nv_rm_alloc a = {.hRoot = p->hclient,
                     .hObjectParent = parent,
                     .hClass = cls,
                     .pAllocParms = (uint64_t)(uintptr_t)params,
                     .paramsSize = size};
    int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_ALLOC, &a);
    char call[64];
    snprintf(call, sizeof call, "RM_ALLOC of class 0x%04x", cls);
    if (rc < 0) return nv_ioctl_err(rc, what, call);
    if (a.status) return nv_status_fail(a.status, what, call);
    *handle = a.hObjectNew;
    return HCQ_OK;
}

hcq_status nv_control_status(nv_proc *p, uint32_t object, uint32_t cmd, void *params, uint32_t size,
                                uint32_t *status, const char *what)
{
    nv_rm_control c = {.hClient = p->hclient,
                       .hObject = object,
                       .cmd = cmd,
                       .params = (uint64_t)(uintptr_t)params,
                       .paramsSize = size};
    int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_CONTROL, &c);
    if (rc < 0) {
        char call[64];
        snprintf(call, sizeof call, "RM_CONTROL 0x%08x", cmd);
        return nv_ioctl_err(rc, what, call);
    }
    *status = c.status;
    return HCQ_OK;
}

hcq_status nv_control(nv_proc *p, uint32_t object, uint32_t cmd, void *params, uint32_t size, const char *what)
{
    uint32_t status = 0;
    hcq_status s = nv_control_status(p, object, cmd, params, size, &status, what);
    if (s) return s;
    if (status) {
        char call[64];
        snprintf(call, sizeof call, "RM_CONTROL 0x%08x", cmd);
        return nv_status_fail(status, what, call);
    }
    return HCQ_OK;
}

void nv_free_object(nv_proc *p, uint32_t parent, uint32_t handle)
{
    if (!handle) return;
    nv_rm_free f = {.hRoot = p->hclient, .hObjectParent = parent, .hObjectOld = handle};
    int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_FREE, &f);
    if (rc < 0 || f.status)
        BASE_LOG(1, "NV: RM_FREE of handle 0x%x: %s", handle,
                 rc < 0 ? strerror(-rc) : nv_status_name(f.status));
}

hcq_status nv_uvm(nv_proc *p, int fd, uint32_t cmd, void *params, size_t size, uint32_t *status_field,
                  const char *what)
{
    (void)p;
    (void)size;
    int rc = sys_ioctl(fd, cmd, params);
    char call[48];
    snprintf(call, sizeof call, "UVM ioctl %u", cmd);
    if (rc < 0) return nv_ioctl_err(rc, what, call);
    if (*status_field) return nv_status_fail(*status_field, what, call);
    return HCQ_OK;
}

hcq_status nv_open_dev_fd(nv_proc *p, uint32_t minor, int *fd_out, const char *what)
{
    char path[32];
    snprintf(path, sizeof path, "/dev/nvidia%u", minor);
    int fd = sys_open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        char hint[512];
        sys_open_hint(path, fd, "video", hint, sizeof hint);
        return base_err(HCQ_ENODEV, "%s: cannot open %s: %s (%s)%s", what, path, base_errno_name(fd), strerror(-fd),
                        hint);
    }
    nv_register_fd r = {.ctl_fd = p->fd_ctl};
    int rc = sys_ioctl(fd, NV_IOCTL_REGISTER_FD, &r);
    if (rc < 0) {
        sys_close(fd);
        return nv_ioctl_err(rc, what, "REGISTER_FD");
    }
    *fd_out = fd;
    return HCQ_OK;
}

/* ** process-wide state */
static nv_proc *proc;
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;

static void proc_destroy(nv_proc *p)
{
    if (p->hclient) {
        nv_rm_free f = {.hRoot = p->hclient, .hObjectParent = 0, .hObjectOld = p->hclient};
        sys_ioctl(p->fd_ctl, NV_IOCTL_RM_FREE, &f);
    }
    if (p->fd_uvm2 >= 0) sys_close(p->fd_uvm2);
    if (p->fd_uvm >= 0) sys_close(p->fd_uvm);
    if (p->fd_ctl >= 0) sys_close(p->fd_ctl);
    free(p);
}

/* The build version, first thing after the client: the layouts of later
 * calls depend on it. */
static hcq_status check_version(nv_proc *p)
{
    nv_build_version *v = calloc(1, sizeof *v);
    if (!v) return HCQ_ENOMEM;
    const char *what = "NV bring-up: querying the driver version (NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2)";
    uint32_t status = 0;
    hcq_status s = nv_control_status(p, p->hclient, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, v, sizeof *v,
                                        &status, what);
    /* a driver without driverBranch: RM refuses another size with
     * NV_ERR_INVALID_ARGUMENT (rmControl) or, past that check,
     * NV_ERR_INVALID_PARAM_STRUCT (resControlLookup) */
    if (!s && (status == NV_ERR_INVALID_ARGUMENT || status == NV_ERR_INVALID_PARAM_STRUCT))
        s = nv_control(p, p->hclient, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, v, NV_BUILD_VERSION_OLD_SIZE,
                          what);
    else if (!s && status)
        s = nv_status_fail(status, what, "RM_CONTROL 0x0000013e");
    if (!s) {
        snprintf(p->version, sizeof p->version, "%.63s", v->driverVersionBuffer);
        p->is_mock = strstr(v->titleBuffer, "hcq mock") != NULL;
        p->abi = nv_abi_for_version(p->version);
        p->major = (uint32_t)strtoul(p->version, NULL, 10);
        if (!p->abi)
            s = base_err(HCQ_ENOTSUP,
                         "NVIDIA driver %s is not supported: hcq speaks the RM interface of drivers %s (struct "
                         "layouts change between driver versions); install a driver in that range",
                         p->version[0] ? p->version : "(no version string)", nv_abi_supported_range());
        else
            BASE_LOG(1, "NV: driver %s (ABI family %s)", p->version, p->abi->family);
    }
    free(v);
    return s;
}

static hcq_status proc_create(nv_proc **out)
{
    nv_proc *p = base_calloc(1, sizeof *p);
    if (!p) return HCQ_ENOMEM;
    p->fd_ctl = p->fd_uvm = p->fd_uvm2 = -1;
    p->next_handle = 0x4c000001u;
    hcq_status s = HCQ_OK;
    int fd = sys_open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        char why[768];
        nv_why_absent(why, sizeof why);
        s = base_err(HCQ_ENODEV, "NV bring-up: cannot open /dev/nvidiactl: %s", why);
        goto fail;
    }
    p->fd_ctl = fd;
    nv_rm_alloc a = {.hClass = NV01_ROOT_CLIENT};
    int rc = sys_ioctl(p->fd_ctl, NV_IOCTL_RM_ALLOC, &a);
    if (rc < 0 || a.status) {
        s = rc < 0 ? nv_ioctl_err(rc, "NV bring-up: allocating the root client", "RM_ALLOC of NV01_ROOT_CLIENT")
                   : nv_status_fail(a.status, "NV bring-up: allocating the root client", "RM_ALLOC of NV01_ROOT_CLIENT");
        goto fail;
    }
    p->hclient = a.hObjectNew;
    if ((s = check_version(p))) goto fail;

    for (int i = 0; i < 2; i++) {
        fd = sys_open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            char hint[512];
            sys_open_hint("/dev/nvidia-uvm", fd, "video", hint, sizeof hint);
            s = base_err(HCQ_ENODEV, "NV bring-up: cannot open /dev/nvidia-uvm: %s (%s)%s", base_errno_name(fd),
                         strerror(-fd), hint[0] ? hint : "; load nvidia-uvm (`sudo nvidia-modprobe -u -c 0`)");
            goto fail;
        }
        if (i == 0) p->fd_uvm = fd;
        else p->fd_uvm2 = fd;
    }
    nv_uvm_initialize ui = {0};
    if ((s = nv_uvm(p, p->fd_uvm, NV_UVM_INITIALIZE, &ui, sizeof ui, &ui.rmStatus,
                    "NV bring-up: initializing UVM (UVM_INITIALIZE)")))
        goto fail;
    /* keeps the process's mm alive for UVM's teardown; CUDA ignores its
     * failure too (some platforms answer NV_WARN_NOTHING_TO_DO) */
    nv_uvm_mm_initialize mi = {.uvmFd = p->fd_uvm};
    if (sys_ioctl(p->fd_uvm2, NV_UVM_MM_INITIALIZE, &mi) < 0 || mi.rmStatus)
        BASE_LOG(1, "NV: UVM_MM_INITIALIZE: status 0x%x (ignored)", mi.rmStatus);

    rc = sys_ioctl(p->fd_ctl, NV_IOCTL_CARD_INFO, p->cards);
    if (rc < 0) {
        s = nv_ioctl_err(rc, "NV bring-up: listing the GPUs", "CARD_INFO");
        goto fail;
    }
    *out = p;
    return HCQ_OK;
fail:
    {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hcq_error_message());
        proc_destroy(p);
        base_err(s, "%s", msg);
    }
    return s;
}

hcq_status nv_proc_get(nv_proc **out)
{
    pthread_mutex_lock(&proc_lock);
    hcq_status s = HCQ_OK;
    if (!proc) s = proc_create(&proc);
    if (!s) {
        proc->refs++;
        *out = proc;
    }
    pthread_mutex_unlock(&proc_lock);
    return s;
}

void nv_proc_put(nv_proc *p)
{
    if (!p) return;
    pthread_mutex_lock(&proc_lock);
    if (--p->refs == 0) {
        proc_destroy(p);
        proc = NULL;
    }
    pthread_mutex_unlock(&proc_lock);
}

/* A card counts when it is valid and its device file exists (containers
 * list every host GPU in CARD_INFO but expose only some). */
static uint32_t count_cards(const nv_card_info *cards)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < NV_CARD_INFO_MAX; i++) {
        if (!cards[i].valid) continue;
        char path[32];
        snprintf(path, sizeof path, "/dev/nvidia%u", cards[i].minor_number);
        if (sys_exists(path) == 0) n++;
    }
    return n;
}

uint32_t nv_card_count(void)
{
    pthread_mutex_lock(&proc_lock);
    uint32_t n = 0;
    if (proc) {
        n = count_cards(proc->cards);
    } else if (sys_exists("/dev/nvidiactl") == 0) {
        int fd = sys_open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
        nv_card_info *cards = fd >= 0 ? calloc(NV_CARD_INFO_MAX, sizeof *cards) : NULL;
        if (cards && sys_ioctl(fd, NV_IOCTL_CARD_INFO, cards) == 0) n = count_cards(cards);
        free(cards);
        if (fd >= 0) sys_close(fd);
    }
    pthread_mutex_unlock(&proc_lock);
    return n;
}

/* Why nv_card_count() is 0, each way it can be: no node (is the module
 * loaded?), a node this user may not open, a CARD_INFO the driver refuses,
 * no GPU listed, a GPU listed without its /dev/nvidiaN. */
void nv_why_absent(char *buf, size_t size)
{
    const char *ctl = "/dev/nvidiactl";
    int rc = sys_exists(ctl);
    if (rc < 0) {
        char v[256];
        if (base_env_get()->mock)
            snprintf(buf, size, "%s: %s: HCQ_MOCK=1 and the mock's configuration (HCQ_MOCK_CONFIG) has no NVIDIA "
                     "GPU", ctl, base_errno_name(rc));
        else if (sys_read_file("/proc/driver/nvidia/version", v, sizeof v) > 0)
            snprintf(buf, size, "%s: %s (%s): the nvidia module is loaded but its device nodes are missing; make "
                     "them with `sudo nvidia-modprobe -c 0 -u`", ctl, base_errno_name(rc), strerror(-rc));
        else
            snprintf(buf, size, "%s: %s (%s): the NVIDIA kernel driver is not loaded; load it with `sudo modprobe "
                     "nvidia nvidia-uvm` (hcq speaks drivers 570 to 589)", ctl, base_errno_name(rc), strerror(-rc));
        return;
    }
    int fd = sys_open(ctl, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        char hint[512];
        sys_open_hint(ctl, fd, "video", hint, sizeof hint);
        snprintf(buf, size, "%s: %s (%s)%s", ctl, base_errno_name(fd), strerror(-fd),
                 hint[0] ? hint : ": the NVIDIA driver refuses this process");
        return;
    }
    nv_card_info *cards = calloc(NV_CARD_INFO_MAX, sizeof *cards);
    rc = cards ? sys_ioctl(fd, NV_IOCTL_CARD_INFO, cards) : -ENOMEM;
    sys_close(fd);
    if (rc < 0) {
        snprintf(buf, size, "%s: NV_ESC_CARD_INFO failed: %s (%s): the driver does not speak the ABI hcq knows "
                 "(drivers 570 to 589); see `cat /proc/driver/nvidia/version`", ctl, base_errno_name(rc),
                 strerror(-rc));
        free(cards);
        return;
    }
    snprintf(buf, size, "the NVIDIA driver lists no GPU (NV_ESC_CARD_INFO on %s has no valid entry): see "
             "`nvidia-smi` and `sudo dmesg | grep -i nvrm`", ctl);
    for (uint32_t i = 0; i < NV_CARD_INFO_MAX; i++) {
        if (!cards[i].valid) continue;
        char path[32], hint[512];
        snprintf(path, sizeof path, "/dev/nvidia%u", cards[i].minor_number);
        rc = sys_exists(path);
        if (rc < 0) {
            snprintf(buf, size, "the driver lists GPU %u but %s: %s (%s): make the node with `sudo nvidia-modprobe "
                     "-c %u` (in a container, pass the device in)", i, path, base_errno_name(rc), strerror(-rc),
                     cards[i].minor_number);
            break;
        }
        fd = sys_open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            sys_close(fd);
            continue;
        }
        sys_open_hint(path, fd, "video", hint, sizeof hint);
        snprintf(buf, size, "%s: %s (%s)%s", path, base_errno_name(fd), strerror(-fd), hint);
        break;
    }
    free(cards);
}
