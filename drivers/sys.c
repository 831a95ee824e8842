#include "drivers/sys.h"

#include "base/base.h"
#include "drivers/mock/mock.h"
#include "drivers/trace.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The only place in hcq that issues these syscalls. The libc table calls
 * them through `real`: libc's own functions, or, in a library that
 * interposes them (libhcqmock.so), the next definitions after it, so the
 * mock's own calls never come back into its interposers. */
static sys_libc_calls real = {open, close, ioctl, mmap, munmap, access, opendir};

void sys_libc_bind(const sys_libc_calls *calls) { real = *calls; }

static int libc_open(void *ctx, const char *path, int flags)
{
    (void)ctx;
    int fd;
    do fd = real.open(path, flags | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : fd;
}

static int libc_close(void *ctx, int fd)
{
    (void)ctx;
    return real.close(fd) < 0 ? -errno : 0;
}

/* EINTR: a signal arrived, call again at once. EAGAIN: the driver is busy
 * (an eviction, a full queue): call again after a pause that doubles from
 * 10 us to 1 ms, for at most HCQ_TIMEOUT_MS, then give EAGAIN to the caller,
 * whose message names the call. Never a spin at full speed, never forever. */
int sys_retry(int (*once)(void *arg), void *arg)
{
    uint64_t start = 0, pause = 10000;
    for (;;) {
        int r = once(arg);
        if (r == -EINTR) continue;
        if (r != -EAGAIN) return r;
        uint64_t now = hcq_now_ns();
        if (!start) start = now;
        uint64_t limit = base_env_get()->timeout_ns;
        if (now - start >= limit) {
            BASE_LOG(1, "a driver call kept answering EAGAIN for %llu ms; giving up",
                     (unsigned long long)((now - start) / 1000000));
            return r;
        }
        base_sleep_ns(BASE_MIN(pause, limit - (now - start)));
        pause = BASE_MIN(pause * 2, 1000000);
    }
}

typedef struct ioctl_call {
    int fd;
    unsigned long req;
    void *arg;
} ioctl_call;

static int ioctl_once(void *p)
{
    ioctl_call *c = p;
    int r = real.ioctl(c->fd, c->req, c->arg);
    return r < 0 ? -errno : r;
}

static int libc_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    (void)ctx;
    ioctl_call c = {fd, req, arg};
    return sys_retry(ioctl_once, &c);
}

static void *libc_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    (void)ctx;
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED) {
        if (err) *err = errno;
        return NULL;
    }
    return p;
}

static int libc_munmap(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    return real.munmap(addr, len) < 0 ? -errno : 0;
}

static ssize_t libc_read_file(void *ctx, const char *path, char *buf, size_t size)
{
    (void)ctx;
    if (!size) return -EINVAL;
    int fd = libc_open(NULL, path, O_RDONLY);
    if (fd < 0) return fd;
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(fd, buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            real.close(fd);
            return -e;
        }
        if (n == 0) break;
        got += (size_t)n;
    }
    real.close(fd);
    buf[got] = 0;
    return (ssize_t)got;
}

static int libc_list_dir(void *ctx, const char *path, void (*fn)(void *, const char *), void *arg)
{
    (void)ctx;
    DIR *d = real.opendir(path);
    if (!d) return -errno;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') fn(arg, e->d_name);
    closedir(d);
    return 0;
}

static int libc_exists(void *ctx, const char *path)
{
    (void)ctx;
    return real.access(path, F_OK) < 0 ? -errno : 0;
}

static const hcq_sys libc_table = {
    .name = "libc",
    .open = libc_open,
    .close = libc_close,
    .ioctl = libc_ioctl,
    .mmap = libc_mmap,
    .munmap = libc_munmap,
    .read_file = libc_read_file,
    .list_dir = libc_list_dir,
    .exists = libc_exists,
};

static _Atomic(const hcq_sys *) active;
static pthread_mutex_t choose_lock = PTHREAD_MUTEX_INITIALIZER;

const hcq_sys *sys_libc(void) { return &libc_table; }

/* libhcqmock.so exports this name: the mock is there, preloaded, and the
 * program (hcq included) runs on it through plain libc */
bool sys_mock_preloaded(void) { return dlsym(RTLD_DEFAULT, "hcq_mock_preloaded") != NULL; }

static const hcq_sys *sys_default(void)
{
    const base_env *e = base_env_get();
    if (!e->mock && (e->mock_config || e->mock_sched) && !sys_mock_preloaded()) {
        /* the mock's knobs without the mock: a fault test would run on
         * whatever is present without its faults; stop instead */
        fprintf(stderr, "hcq: %s is set but HCQ_MOCK is not: the mock GPU is off, so what it configures would not "
                        "happen. Set HCQ_MOCK=1 (or preload libhcqmock.so), or unset it.\n",
                e->mock_config ? "HCQ_MOCK_CONFIG" : "HCQ_MOCK_SCHED");
        exit(2);
    }
    const hcq_sys *s = e->mock ? mock_sys() : &libc_table;
    return e->trace ? trace_sys(s) : s;
}

const hcq_sys *sys_get(void)
{
    const hcq_sys *s = atomic_load_explicit(&active, memory_order_acquire);
    if (s) return s;
    pthread_mutex_lock(&choose_lock);
    s = atomic_load(&active);
    if (!s) {
        s = sys_default();
        atomic_store(&active, s);
        BASE_LOG(1, "syscall seam: %s", s->name);
    }
    pthread_mutex_unlock(&choose_lock);
    return s;
}

const hcq_sys *sys_set(const hcq_sys *s)
{
    pthread_mutex_lock(&choose_lock);
    const hcq_sys *old = atomic_load(&active);
    atomic_store(&active, s ? s : sys_default());
    pthread_mutex_unlock(&choose_lock);
    return old;
}

int sys_open(const char *path, int flags) { const hcq_sys *s = sys_get(); return s->open(s->ctx, path, flags); }
int sys_close(int fd) { const hcq_sys *s = sys_get(); return s->close(s->ctx, fd); }
int sys_ioctl(int fd, unsigned long req, void *arg) { const hcq_sys *s = sys_get(); return s->ioctl(s->ctx, fd, req, arg); }
void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    const hcq_sys *s = sys_get();
    return s->mmap(s->ctx, addr, len, prot, flags, fd, off, err);
}
int sys_munmap(void *addr, size_t len) { const hcq_sys *s = sys_get(); return s->munmap(s->ctx, addr, len); }
ssize_t sys_read_file(const char *path, char *buf, size_t size)
{
    const hcq_sys *s = sys_get();
    return s->read_file(s->ctx, path, buf, size);
}
int sys_list_dir(const char *path, void (*fn)(void *, const char *), void *arg)
{
    const hcq_sys *s = sys_get();
    return s->list_dir(s->ctx, path, fn, arg);
}
int sys_exists(const char *path) { const hcq_sys *s = sys_get(); return s->exists(s->ctx, path); }

static atomic_uint_fast64_t doorbell_epoch;

void sys_doorbell_acquire(void) { (void)atomic_load_explicit(&doorbell_epoch, memory_order_acquire); }

void sys_doorbell32(volatile uint32_t *addr, uint32_t value)
{
    const hcq_sys *s = sys_get();
    atomic_fetch_add_explicit(&doorbell_epoch, 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    /* an atomic release store: a plain mov on x86, and it lets ThreadSanitizer
     * pair it with the emulated engine's acquire load under the mock */
    atomic_store_explicit((_Atomic uint32_t *)addr, value, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (s->doorbell) s->doorbell(s->ctx, addr);
}

void sys_doorbell64(volatile uint64_t *addr, uint64_t value)
{
    const hcq_sys *s = sys_get();
    atomic_fetch_add_explicit(&doorbell_epoch, 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store_explicit((_Atomic uint64_t *)addr, value, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (s->doorbell) s->doorbell(s->ctx, addr);
}

void sys_notify(uint64_t va)
{
    const hcq_sys *s = sys_get();
    if (s->notify) s->notify(s->ctx, va);
}

void *sys_anon_map(size_t len, int *err)
{
    return sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, err);
}

int sys_anon_unmap(void *p, size_t len) { return sys_munmap(p, len); }

void *sys_shm_create(const char *name, size_t len, int *err)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
        *err = errno;
        if (fd >= 0) real.close(fd);
        return NULL;
    }
    void *p = real.mmap(NULL, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    *err = p == MAP_FAILED ? errno : 0;
    real.close(fd); /* the mapping keeps the object */
    return p == MAP_FAILED ? NULL : p;
}

void *sys_shm_map(void *anchor, uint64_t off, size_t len, void *addr, int prot, int *err)
{
    void *p = mremap((uint8_t *)anchor + off, 0, len, MREMAP_MAYMOVE | (addr ? MREMAP_FIXED : 0), addr);
    if (p == MAP_FAILED) {
        *err = errno;
        return NULL;
    }
    if (prot != PROT_NONE && mprotect(p, len, prot)) {
        *err = errno;
        real.munmap(p, len);
        return NULL;
    }
    return p;
}

void sys_shm_destroy(void *anchor, size_t len)
{
    if (anchor) real.munmap(anchor, len);
}

void *sys_status_map(const char *dir, const char *path, size_t len, int *err)
{
    struct stat st;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) return *err = errno, NULL;
    if (stat(dir, &st) < 0) return *err = errno, NULL;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) return *err = EPERM, NULL;
    unlink(path); /* a stale page of a pid that was reused */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return *err = errno, NULL;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        unlink(path);
        return *err = e, NULL;
    }
    return p;
}

void sys_status_unmap(void *p, size_t len, const char *path)
{
    if (p) munmap(p, len);
    if (path) unlink(path);
}

void *sys_sigstack_map(size_t len, int *err)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *p = mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return *err = errno, NULL;
    if (mprotect(p, page, PROT_NONE) < 0) {
        int e = errno;
        munmap(p, len + page);
        return *err = e, NULL;
    }
    return p + page;
}

void sys_sigstack_unmap(void *p, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (p) munmap((uint8_t *)p - page, len + page);
}

void sys_open_hint(const char *path, int err, const char *group, char *buf, size_t size)
{
    if (err < 0) err = -err;
    if (!size) return;
    buf[0] = 0;
    if (err != EACCES && err != EPERM) return;
    /* the node's mode and group, and whether this user is in it */
    struct stat st;
    char grname[64] = "";
    bool member = false;
    if (stat(path, &st) == 0) {
        struct group g, *res = NULL;
        char tmp[4096];
        if (getgrgid_r(st.st_gid, &g, tmp, sizeof tmp, &res) == 0 && res)
            snprintf(grname, sizeof grname, "%s", res->gr_name);
        gid_t groups[256];
        int n = getgroups(256, groups);
        member = getegid() == st.st_gid;
        for (int i = 0; i < n; i++) member |= groups[i] == st.st_gid;
        int k = snprintf(buf, size, "; it is mode %04o, group %s", (unsigned)(st.st_mode & 07777),
                         grname[0] ? grname : "?");
        if (k < 0 || (size_t)k >= size) return;
        buf += k;
        size -= (size_t)k;
    }
    const char *want = grname[0] && strcmp(grname, "root") ? grname : group;
    if (member)
        snprintf(buf, size, "; you are in group `%s` but the node does not let the group read and write it: ask "
                            "the administrator for mode 0660 (a udev rule)", want);
    else
        snprintf(buf, size, "; add your user to the `%s` group (`sudo usermod -aG %s $USER`, then log in again)%s",
                 want, want, grname[0] && !strcmp(grname, "root") ? ", or have a udev rule give the node to it" : "");
}
