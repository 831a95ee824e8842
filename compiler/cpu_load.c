/* Loading host shared objects (cpu-target kernels, host twins) from memory: an anonymous memfd and
 * dlopen of its /proc/self/fd path, so nothing is written to disk and the
 * object disappears with its last reference. No descriptor stays open for
 * a loaded module (see cc_host_so_open). */
#include "compiler/cpu_abi.h"
#include "compiler/elf.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_NONE
#endif

static hcq_status check_elf(const void *so, size_t size, const char *what, const char *fix)
{
    cc_elf e;
    hcq_status st = cc_elf_open(&e, so, size);
    if (st) return base_err_prefix(HCQ_EFORMAT, "not a %s", what);
    bool ok = e.machine == HOST_MACHINE && e.type == ET_DYN;
    char seen[128];
    cc_elf_describe(e.machine, e.type, seen, sizeof seen);
    cc_elf_close(&e);
    if (!ok)
        return base_err(HCQ_EFORMAT, "this is %s, not a %s for this host (%s); %s", seen, what,
                        cc_elf_describe(HOST_MACHINE, ET_DYN, (char[96]){0}, 96), fix);
    return HCQ_OK;
}

static hcq_status write_memfd(const void *so, size_t size, int *fd_out)
{
    int fd = memfd_create("hcq-kernel", MFD_CLOEXEC);
    if (fd < 0) return base_err(HCQ_EIO, "memfd_create for a kernel object: %s", strerror(errno));
    const uint8_t *p = so;
    for (size_t left = size; left;) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return base_err(HCQ_EIO, "writing a kernel object to a memfd: %s", strerror(errno));
        }
        p += w;
        left -= (size_t)w;
    }
    *fd_out = fd;
    return HCQ_OK;
}

/* The handles this process loaded and has not closed. dlopen finds an
 * object already loaded by its path's string, and /proc/self/fd/N names
 * another object as soon as N is reused. Keeping each memfd open for the
 * module's life avoided that only while the program left the descriptor
 * alone (a daemon's close-everything loop did not: the next module loaded
 * through the same number came back as the older one). So the descriptor
 * is closed at once and every load spells the path its own way: the load's
 * serial number in binary as "/." (1) and "//" (0) path segments, which
 * resolve to the same file ("/proc/self/./////fd/N" is serial 4). A handle
 * that is still live all the same (a serial that wrapped) is refused. */
static void **live;
static size_t nlive, live_cap;
static uint64_t serial;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_live(void *dl)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == dl) return true;
    return false;
}

static void spell(char *path, size_t size, uint64_t n, int fd)
{
    size_t k = (size_t)snprintf(path, size, "/proc/self");
    int top = 63;
    while (top > 0 && !(n >> top & 1)) top--;
    for (int b = top; n && b >= 0 && k + 3 < size; b--) {
        path[k++] = '/';
        path[k++] = (n >> b & 1) ? '.' : '/';
    }
    snprintf(path + k, size - k, "/fd/%d", fd);
}

hcq_status cc_host_so_open(const void *so, size_t size, const char *what, const char *fix, void **dl_out, int *fd_out)
{
    hcq_status st = check_elf(so, size, what, fix);
    int fd = -1;
    if (st || (st = write_memfd(so, size, &fd))) return st;
    pthread_mutex_lock(&live_lock);
    void *dl = NULL;
    const char *err = NULL;
    if (nlive == live_cap) {
        size_t cap = live_cap ? live_cap * 2 : 64;
        void **n = realloc(live, cap * sizeof *n);
        if (n) live = n, live_cap = cap;
    }
    if (nlive == live_cap) {
        err = "out of memory";
    } else {
        char path[224];
        spell(path, sizeof path, ++serial, fd);
        dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            err = dlerror();
        } else if (is_live(dl)) {
            dlclose(dl); /* an older module under the same name: never run it in this one's place */
            dl = NULL;
            err = "its name was an older module's";
        }
    }
    if (dl) live[nlive++] = dl;
    pthread_mutex_unlock(&live_lock);
    close(fd); /* the mapping keeps the object */
    if (!dl) return base_err(HCQ_EFORMAT, "dlopen of a %s failed: %s", what, err);
    *dl_out = dl;
    *fd_out = -1;
    return HCQ_OK;
}

void cc_host_so_close(void *dl, int fd)
{
    if (!dl) return;
    pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == dl) {
            live[i] = live[--nlive];
            break;
        }
    dlclose(dl);
    pthread_mutex_unlock(&live_lock);
    if (fd >= 0) close(fd);
}

hcq_status cc_cpu_module_load(const void *so, size_t size, cc_cpu_module *out)
{
    if (!so || !out) return base_err(HCQ_EINVAL, "cc_cpu_module_load: NULL argument");
    cc_cpu_module m = {0};
    hcq_status st = cc_host_so_open(so, size, "cpu-target shared object", "compile the kernel for the \"cpu\" target",
                                    &m.dl, &m.fd);
    if (st) return st;
    void *entry = dlsym(m.dl, "hcq_entry");
    memcpy(&m.entry, &entry, sizeof entry); /* object pointer -> function pointer, as POSIX allows */
    m.name = dlsym(m.dl, "hcq_name");
    m.meta = dlsym(m.dl, "hcq_meta");
    if (!m.entry || !m.name || !m.meta) {
        cc_host_so_close(m.dl, m.fd);
        return base_err(HCQ_EFORMAT, "shared object lacks hcq_entry, hcq_name or hcq_meta: not a cpu-target kernel");
    }
    if (m.meta[HCQ_CPU_META_MAGIC] != HCQ_CPU_ABI_MAGIC || m.meta[HCQ_CPU_META_VERSION] != HCQ_CPU_ABI_VERSION) {
        st = base_err(HCQ_EFORMAT, "cpu-target object '%s' has ABI magic 0x%08x version %u; this build needs 0x%08x "
                      "version %u (recompile it)", m.name, m.meta[HCQ_CPU_META_MAGIC], m.meta[HCQ_CPU_META_VERSION],
                      HCQ_CPU_ABI_MAGIC, HCQ_CPU_ABI_VERSION);
        cc_host_so_close(m.dl, m.fd);
        return st;
    }
    m.nparams = m.meta[HCQ_CPU_META_NPARAMS];
    m.kernarg_size = m.meta[HCQ_CPU_META_KERNARG_SIZE];
    m.local_bytes = m.meta[HCQ_CPU_META_LOCAL_BYTES];
    *out = m;
    return HCQ_OK;
}

void cc_cpu_module_unload(cc_cpu_module *m)
{
    if (!m) return;
    cc_host_so_close(m->dl, m->fd);
    memset(m, 0, sizeof *m);
}
