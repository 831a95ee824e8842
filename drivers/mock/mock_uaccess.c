/* The program's memory as the kernel drivers reach it. A driver never
 * dereferences an ioctl's argument pointer: it copies the argument in
 * (copy_from_user), works on its copy, and copies it out (copy_to_user),
 * and a pointer into memory that is not mapped, or not writable for the
 * way out, makes the ioctl fail with EFAULT instead of killing the
 * program. The mock does the same at its one ioctl entry (mock_core.c),
 * so an unmapped argument on any emulated file is EFAULT whichever vendor
 * handler would have read it, and the handlers work on the copy.
 *
 * Sizes: nvidia.ko, amdkfd and DRM encode the argument's size and
 * direction in the request (_IOC_SIZE, _IOC_DIR; nvidia.ko copies its
 * escapes both ways: kernel-open/nvidia/nv.c, nvidia_ioctl), and copy out
 * even when the call failed (amdkfd: kfd_chardev.c, kfd_ioctl; DRM:
 * drm_ioctl.c, drm_ioctl). nvidia-uvm's commands are plain numbers whose
 * argument struct it copies in and out whole (kernel-open/nvidia-uvm/uvm.c,
 * UVM_ROUTE_CMD_*): their sizes are nv_uvm_arg_size's. RM's own second
 * level, the parameter blocks of RM_CONTROL and RM_ALLOC, is copied here
 * too (call_rm). */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/mock/mock_nv_obj.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

/* a copy through a pipe, for where process_vm_readv/writev are refused
 * (a seccomp filter): write(2) from the source and read(2) into the
 * destination fail with EFAULT on memory they cannot reach. A pipe per
 * copy, closed at once: the mock keeps no descriptor a program could
 * close or reuse. */
static bool copy_by_pipe(void *dst, const void *src, size_t n)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return false;
    bool ok = true;
    for (size_t done = 0; ok && done < n;) {
        size_t chunk = BASE_MIN(n - done, 4096);
        ssize_t w = write(p[1], (const uint8_t *)src + done, chunk);
        if (w <= 0) {
            ok = false;
            break;
        }
        ssize_t r = read(p[0], (uint8_t *)dst + done, (size_t)w);
        ok = r == w;
        done += (size_t)w;
    }
    close(p[0]);
    close(p[1]);
    return ok;
}

static atomic_int no_vm_rw; /* process_vm_* refused here: pipes from now */

static bool copy_vm(void *dst, const void *src, size_t n, bool to_user)
{
    if (!n) return true;
    if (!atomic_load(&no_vm_rw)) {
        struct iovec local = {to_user ? (void *)src : dst, n}, remote = {to_user ? dst : (void *)src, n};
        ssize_t r = to_user ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0)
                            : process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r == (ssize_t)n) return true;
        if (r >= 0 || errno == EFAULT) return false;
        atomic_store(&no_vm_rw, 1); /* ENOSYS, EPERM */
    }
    return copy_by_pipe(dst, src, n);
}

bool mock_copy_from_user(void *dst, const void *user, size_t n) { return copy_vm(dst, user, n, false); }

bool mock_copy_to_user(void *user, const void *src, size_t n) { return copy_vm(user, src, n, true); }

void mock_ioctl_arg_sizes(const char *path, unsigned long req, size_t *in, size_t *out)
{
    if (!strcmp(path, "/dev/nvidia-uvm")) {
        *in = *out = nv_uvm_arg_size(req);
        return;
    }
    size_t n = _IOC_SIZE(req);
    unsigned dir = _IOC_DIR(req);
    *in = dir & _IOC_WRITE ? n : 0;
    *out = dir & _IOC_READ ? n : 0;
}

/* RM_CONTROL's params and RM_ALLOC's pAllocParms point at a second block
 * that RM copies in before it dispatches and out after
 * (src/nvidia/src/kernel/rmapi/param_copy.c, rmapiParamsAcquire and
 * rmapiParamsRelease): a block that cannot be read is a status in the
 * struct, the ioctl itself succeeding. Done here for every handler: the
 * handler sees a pointer to the copy. The block's size is the one the
 * caller gives for a control (the handler checks it against the
 * command's) and the class's for an allocation; blocks over
 * RM's 1 MiB limit, and missing ones, go to the handler as they are. */
#define RM_PARAMS_MAX (1u << 20)

static bool rm_nested(const char *path, unsigned long req, uint8_t *k, uint64_t **ptr, uint32_t *size,
                      uint32_t **status)
{
    if (strncmp(path, "/dev/nvidia", 11) || !strcmp(path, "/dev/nvidia-uvm") || ((req >> 8) & 0xffu) != 'F')
        return false;
    if (req == NV_IOCTL_RM_CONTROL) {
        nv_rm_control *c = (nv_rm_control *)k;
        *ptr = &c->params, *size = c->paramsSize, *status = &c->status;
    } else if (req == NV_IOCTL_RM_ALLOC || req == NV_IOWR(NV_ESC_RM_ALLOC, sizeof(nv_rm_alloc64))) {
        /* an allocation's block is as long as its class's parameters,
         * whatever paramsSize says (escape.c takes the size from
         * rmapiGetClassAllocParamSize): a class RM does not know, or one
         * without parameters, goes to the handler as it is */
        uint32_t cls;
        if (req == NV_IOCTL_RM_ALLOC) {
            nv_rm_alloc *a = (nv_rm_alloc *)k;
            *ptr = &a->pAllocParms, *status = &a->status, cls = a->hClass;
        } else {
            nv_rm_alloc64 *a = (nv_rm_alloc64 *)k;
            *ptr = &a->pAllocParms, *status = &a->status, cls = a->hClass;
        }
        if (cls == 0 || cls == 1) cls = NV01_ROOT_CLIENT;
        *size = nv_class_desc_of(cls) ? nv_class_params(cls, mnv_major()) : 0;
    } else {
        return false;
    }
    return **ptr && *size && *size <= RM_PARAMS_MAX;
}

static int call_rm(int (*call)(void *priv, unsigned long req, void *arg), void *priv, const char *path,
                   unsigned long req, uint8_t *k)
{
    uint64_t *ptr;
    uint32_t size, *status;
    if (!rm_nested(path, req, k, &ptr, &size, &status)) return call(priv, req, k);
    uint64_t user = *ptr;
    void *params = calloc(1, size);
    if (!params) {
        *status = NV_ERR_NO_MEMORY;
        return 0;
    }
    int rc = 0;
    if (!mock_copy_from_user(params, (const void *)(uintptr_t)user, size)) {
        *status = NV_ERR_INVALID_ADDRESS;
    } else {
        *ptr = (uint64_t)(uintptr_t)params;
        rc = call(priv, req, k);
        *ptr = user; /* the caller's pointer goes back out, as it came in */
        if (!mock_copy_to_user((void *)(uintptr_t)user, params, size) && !*status) *status = NV_ERR_INVALID_ADDRESS;
    }
    free(params);
    return rc;
}

int mock_ioctl_copied(int (*call)(void *priv, unsigned long req, void *arg), void *priv, const char *path,
                      unsigned long req, void *arg)
{
    size_t in, out;
    mock_ioctl_arg_sizes(path, req, &in, &out);
    size_t n = BASE_MAX(in, out);
    if (!n) return call(priv, req, arg); /* no argument the driver copies */
    uint8_t stack[1024], *k = n <= sizeof stack ? stack : calloc(1, n);
    if (!k) return -ENOMEM;
    memset(k, 0, n);
    int rc;
    if (!mock_copy_from_user(k, arg, in)) {
        rc = -EFAULT;
    } else {
        rc = call_rm(call, priv, path, req, k);
        if (out && !mock_copy_to_user(arg, k, out)) rc = -EFAULT;
    }
    if (k != stack) free(k);
    return rc;
}
