/* libhcqmock.so: the mock GPU (drivers/mock) behind libc, for any program.
 * Preloaded (LD_PRELOAD, or `hcq trace --mock`), it emulates /dev/nvidiactl,
 * /dev/nvidia-uvm, /dev/nvidiaN, /dev/kfd, the render nodes and KFD's sysfs
 * topology for a program that knows nothing of hcq, exactly as HCQ_MOCK=1
 * does inside hcq: same RM object tree, kfd, engines and checks, configured
 * by HCQ_MOCK_CONFIG. hcq itself run this way takes the libc path, as it
 * would on hardware, and finds the mock by its driver's answers.
 *
 * What it interposes, and how:
 *   - open/openat (and fopen for sysfs): an emulated device file becomes a
 *     real descriptor, a memfd named "hcq-mock:PATH" the mock keys its
 *     state by (mock_use_real_fds), so poll, dup, fork and fd numbers
 *     passed inside ioctl arguments (RM_MAP_MEMORY's fd, UVM's rmCtrlFd,
 *     kfd's drm_fd) all work; a virtual sysfs file is a memfd holding its
 *     contents; the real device files and KFD sysfs are hidden (ENOENT);
 *   - opendir, and open/openat, of a virtual sysfs directory: a private
 *     directory made for it under $TMPDIR, with an entry per name (a
 *     directory for a directory, else an empty file), removed at closedir
 *     or close; openat, fstatat and faccessat relative to such a
 *     descriptor reach the mock's paths below it, as sysfs does;
 *   - stat/access of those paths: the mock's answer (character devices for
 *     device files, read-only files and directories for sysfs), and fstat
 *     (and AT_EMPTY_PATH stats) of their descriptors the same;
 *   - ioctl, mmap, munmap, close, close_range, closefrom, dup*,
 *     fcntl(F_DUPFD*) on emulated files.
 * The mock keeps no descriptor of its own (buffer objects are mappings
 * without one), and an emulated file's number closed behind its back is
 * the program's again (mock_core.c checks each is still its memfd).
 * Its own calls through hcq's libc table go to the next library's
 * functions (sys_libc_bind), never back into these. A program rings
 * doorbells with plain stores, so the engines poll their rings while idle
 * (mock_engines_poll). The name hcq_mock_preloaded tells hcq code in the
 * program that HCQ_MOCK_CONFIG is meant for this mock. After fork the child
 * has a working mock of its own (drivers/mock/mock_fork.c), and only the
 * parent has the engines its GPUs had then (as a CUDA context stays with
 * the process that made it). */
#include "drivers/mock/mock.h"

#include "base/base.h"
#include "tools/preload.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define EXPORT PRELOAD_EXPORT

/* hcq code in the program looks this name up (sys_mock_preloaded) */
EXPORT const int hcq_mock_preloaded = 1;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_access)(const char *, int);
static int (*real_faccessat)(int, const char *, int, int);
static DIR *(*real_opendir)(const char *);
static int (*real_closedir)(DIR *);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static FILE *(*real_fopen)(const char *, const char *);
static int (*real_stat)(const char *, struct stat *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_fstatat)(int, const char *, struct stat *, int);
static int (*real_statx)(int, const char *, int, unsigned, struct statx *);
static int (*real_fstat)(int, struct stat *);
static int (*real_fxstat)(int, int, struct stat *);
static int (*real_close_range)(unsigned, unsigned, int);
static void (*real_closefrom)(int);

#define REAL PRELOAD_REAL

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    REAL(real_open, "open");
    REAL(real_openat, "openat");
    REAL(real_close, "close");
    REAL(real_ioctl, "ioctl");
    REAL(real_mmap, "mmap");
    REAL(real_munmap, "munmap");
    REAL(real_access, "access");
    REAL(real_faccessat, "faccessat");
    REAL(real_opendir, "opendir");
    REAL(real_closedir, "closedir");
    REAL(real_dup, "dup");
    REAL(real_dup2, "dup2");
    REAL(real_dup3, "dup3");
    REAL(real_fcntl, "fcntl");
    REAL(real_fopen, "fopen");
    REAL(real_stat, "stat");
    REAL(real_lstat, "lstat");
    REAL(real_fstatat, "fstatat");
    REAL(real_statx, "statx");
    REAL(real_fstat, "fstat");
    /* the pre-2.33 entry point exists only as a versioned compat symbol */
    *(void **)&real_fxstat = dlvsym(RTLD_NEXT, "__fxstat", "GLIBC_2.2.5");
    REAL(real_close_range, "close_range"); /* glibc 2.34 */
    REAL(real_closefrom, "closefrom");
    sys_libc_calls calls = {real_open, real_close, real_ioctl, real_mmap, real_munmap, real_access,
                            (struct __dirstream * (*)(const char *)) real_opendir};
    sys_libc_bind(&calls);
    mock_use_real_fds();
    mock_engines_poll(true);
}

/* a forked child's copies of this file's locks, held by nobody now (the
 * mock's own are made new by its handler, mock_fork.c) */
static pthread_mutex_t vfile_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t vdir_lock;
static void atfork_child(void)
{
    pthread_mutex_init(&vfile_lock, NULL);
    pthread_mutex_init(&vdir_lock, NULL);
}

__attribute__((constructor)) static void preload_init(void)
{
    pthread_once(&once, init);
    pthread_atfork(NULL, NULL, atfork_child);
}

static void ready(void) { pthread_once(&once, init); }

static int fail(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return rc;
}

/* ** which paths are the mock's */
static bool device_path(const char *p)
{
    return p && (!strncmp(p, "/dev/nvidia", 11) || !strcmp(p, "/dev/kfd") || !strncmp(p, "/dev/dri/", 9));
}

/* ** descriptors of virtual sysfs directories (open, openat): a private
 * directory materialized for each (as opendir makes), removed when the
 * descriptor is closed; the virtual path is kept so that openat, fstatat
 * and faccessat relative to it reach the mock's files below it */
typedef struct vfd {
    int fd;
    char tmp[4096], path[4096];
} vfd;
static vfd vfds[256];
static pthread_mutex_t vfd_lock = PTHREAD_MUTEX_INITIALIZER;

static void remove_tree(const char *dir);

/* the virtual directory fd is open on, into path; false if it is none */
static bool vfd_path(int fd, char *path, size_t size)
{
    bool found = false;
    pthread_mutex_lock(&vfd_lock);
    for (size_t i = 0; i < sizeof vfds / sizeof *vfds && !found; i++)
        if (vfds[i].path[0] && vfds[i].fd == fd) {
            snprintf(path, size, "%s", vfds[i].path);
            found = true;
        }
    pthread_mutex_unlock(&vfd_lock);
    return found;
}

/* fd was closed: its materialized directory goes */
static void vfd_closed(int fd)
{
    char tmp[4096] = "";
    pthread_mutex_lock(&vfd_lock);
    for (size_t i = 0; i < sizeof vfds / sizeof *vfds; i++)
        if (vfds[i].path[0] && vfds[i].fd == fd) {
            snprintf(tmp, sizeof tmp, "%s", vfds[i].tmp);
            vfds[i].path[0] = 0;
        }
    pthread_mutex_unlock(&vfd_lock);
    if (tmp[0]) remove_tree(tmp);
}

/* The mock's files live at absolute paths. A path relative to a virtual
 * directory's descriptor is one of them too: the absolute path into buf,
 * and buf returned; otherwise the path itself when absolute, else NULL. */
static const char *mock_path_at(int dirfd, const char *p, char *buf, size_t size)
{
    if (!p) return NULL;
    if (p[0] == '/') return p;
    if (dirfd == AT_FDCWD || !vfd_path(dirfd, buf, size)) return NULL;
    size_t n = strlen(buf);
    if (p[0] && strcmp(p, ".")) snprintf(buf + n, size - n, "/%s", p);
    return buf;
}

enum { V_NONE, V_FILE, V_DIR, V_DEV };
static void no_entry(void *arg, const char *name)
{
    (void)arg;
    (void)name;
}
/* what the mock has at an absolute path: V_NONE (not its path), V_FILE,
 * V_DIR or V_DEV, or -errno (a path it hides) */
static int vkind(const char *path)
{
    static char buf[1 << 16];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int rc;
    if (!path || path[0] != '/' || !mock_path_exists(path, &rc)) return V_NONE;
    if (rc < 0) return rc;
    if (device_path(path)) return V_DEV;
    pthread_mutex_lock(&lock);
    ssize_t n = 0;
    int mine = mock_path_read(path, buf, sizeof buf, &n);
    pthread_mutex_unlock(&lock);
    if (mine && n >= 0) return V_FILE;
    int lrc = 0;
    if (mock_path_list(path, no_entry, NULL, &lrc) && lrc == 0) return V_DIR;
    return mine && n < 0 ? (int)n : -ENOENT;
}

/* a virtual file's contents as a memfd at offset 0, or -errno; 0 when the
 * path is not the mock's (*fd untouched) */
static int virtual_file(const char *path, int flags, int *fd)
{
    static char buf[1 << 16];
    pthread_mutex_t *lock = &vfile_lock;
    pthread_mutex_lock(lock);
    ssize_t rc;
    int mine = mock_path_read(path, buf, sizeof buf, &rc);
    if (mine && rc >= 0) {
        int m = memfd_create("hcq-mock-sysfs", flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
        if (m < 0 || write(m, buf, (size_t)rc) != rc || lseek(m, 0, SEEK_SET) != 0) {
            rc = -errno;
            if (m >= 0) real_close(m);
        } else {
            *fd = m;
        }
    }
    pthread_mutex_unlock(lock);
    return !mine ? 0 : rc < 0 ? (int)rc : 1;
}

static int open_vdir(const char *path, int flags);

static int mock_open(int dirfd, const char *path, int flags, mode_t mode, bool at)
{
    ready();
    char buf[4096];
    const char *p = mock_path_at(dirfd, path, buf, sizeof buf);
    if (p) {
        if (device_path(p)) return fail(mock_sys()->open(NULL, p, flags));
        int k = vkind(p);
        if (k == V_DIR) return open_vdir(p, flags);
        if (k == V_FILE && (flags & O_DIRECTORY)) return fail(-ENOTDIR);
        int fd = -1, r = k < 0 ? k : virtual_file(p, flags, &fd);
        if (r) return r < 0 ? fail(r) : fd;
    }
    return at ? real_openat(dirfd, path, flags, mode) : real_open(path, flags, mode);
}

PRELOAD_OPEN_FAMILY(mock_open)

/* fopen does not go through open: sysfs files the way ROCm reads them */
EXPORT FILE *fopen(const char *path, const char *mode)
{
    ready();
    int fd = -1, r = path && path[0] == '/' && mode && mode[0] == 'r' ? virtual_file(path, O_CLOEXEC, &fd) : 0;
    if (!r) return real_fopen(path, mode);
    if (r < 0) {
        errno = -r;
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) real_close(fd);
    return f;
}
EXPORT FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

/* ** virtual directories: materialized for opendir, removed at closedir */
typedef struct vdir {
    DIR *d;
    char path[4096];
} vdir;
static vdir vdirs[256];
static pthread_mutex_t vdir_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct fill {
    char dir[4096];
    int err;
} fill;

typedef struct fill_ctx {
    fill *f;
    const char *vpath; /* the virtual directory */
} fill_ctx;

/* an entry as readdir shows it: a directory for a virtual directory (its
 * d_type DT_DIR, as sysfs gives), else an empty file */
static void add_entry(void *arg, const char *name)
{
    fill_ctx *c = arg;
    char p[4200], v[4200];
    snprintf(p, sizeof p, "%s/%s", c->f->dir, name);
    snprintf(v, sizeof v, "%s/%s", c->vpath, name);
    if (vkind(v) == V_DIR) {
        if (mkdir(p, 0555)) c->f->err = errno;
        return;
    }
    int fd = real_open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
    if (fd < 0) c->f->err = errno;
    else real_close(fd);
}

/* a private directory holding path's entries in f->dir; 0 or -errno */
static int materialize(const char *path, fill *f)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/hcq-mock-dir-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) return -errno;
    fill_ctx c = {f, path};
    int rc;
    if (!mock_path_list(path, add_entry, &c, &rc)) rc = -ENOENT;
    if (rc < 0 || f->err) {
        remove_tree(f->dir);
        return rc < 0 ? rc : -f->err;
    }
    return 0;
}

/* open(2) of a virtual directory: a descriptor of its materialized copy
 * (sysfs directories open O_RDONLY; writing one is EISDIR) */
static int open_vdir(const char *path, int flags)
{
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) return fail(-EISDIR);
    fill f = {.err = 0};
    int rc = materialize(path, &f);
    if (rc) return fail(rc);
    int fd = real_open(f.dir, (flags & (O_CLOEXEC | O_NONBLOCK)) | O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        int e = errno;
        remove_tree(f.dir);
        errno = e;
        return -1;
    }
    pthread_mutex_lock(&vfd_lock);
    size_t i = 0;
    while (i < sizeof vfds / sizeof *vfds && vfds[i].path[0]) i++;
    if (i < sizeof vfds / sizeof *vfds) {
        vfds[i].fd = fd;
        snprintf(vfds[i].tmp, sizeof vfds[i].tmp, "%s", f.dir);
        snprintf(vfds[i].path, sizeof vfds[i].path, "%s", path);
    }
    pthread_mutex_unlock(&vfd_lock);
    /* with more than 256 open at once, this one stays on disk (small, and
     * named for whose it is) and relative lookups under it see its copy */
    return fd;
}

static void remove_tree(const char *dir)
{
    DIR *d = real_opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char p[4200];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p)) rmdir(p); /* the entries' directories are empty */
        }
        real_closedir(d);
    }
    rmdir(dir);
}

EXPORT DIR *opendir(const char *path)
{
    ready();
    fill f = {.err = 0};
    int k = vkind(path);
    if (k == V_NONE) return real_opendir(path);
    if (k != V_DIR) {
        errno = k < 0 ? -k : ENOTDIR;
        return NULL;
    }
    int rc = materialize(path, &f);
    DIR *d = rc ? NULL : real_opendir(f.dir);
    if (!d) {
        if (!rc) remove_tree(f.dir);
        errno = rc ? -rc : ENOTDIR;
        return NULL;
    }
    pthread_mutex_lock(&vdir_lock);
    size_t i = 0;
    while (i < sizeof vdirs / sizeof *vdirs && vdirs[i].d) i++;
    if (i < sizeof vdirs / sizeof *vdirs) {
        vdirs[i].d = d;
        snprintf(vdirs[i].path, sizeof vdirs[i].path, "%s", f.dir);
    }
    pthread_mutex_unlock(&vdir_lock);
    /* with more than 256 open at once, this one stays on disk: small, and
     * under a name that says whose it is */
    return d;
}

EXPORT int closedir(DIR *d)
{
    ready();
    char path[4096] = "";
    pthread_mutex_lock(&vdir_lock);
    for (size_t i = 0; i < sizeof vdirs / sizeof *vdirs; i++)
        if (vdirs[i].d && vdirs[i].d == d) {
            snprintf(path, sizeof path, "%s", vdirs[i].path);
            vdirs[i].d = NULL;
        }
    pthread_mutex_unlock(&vdir_lock);
    /* fdopendir of a virtual directory's descriptor: closedir closes it */
    int fd = dirfd(d);
    int r = real_closedir(d);
    if (path[0]) remove_tree(path);
    if (fd >= 0) vfd_closed(fd);
    return r;
}

/* ** probes */
/* the mock's stat of one of its paths: 1 (with *st or errno), 0 when not its */
static int mock_stat(const char *path, struct stat *st)
{
    int k = vkind(path);
    if (k == V_NONE) return 0;
    if (k < 0) {
        errno = -k;
        return -1;
    }
    memset(st, 0, sizeof *st);
    st->st_nlink = 1;
    st->st_blksize = 4096;
    if (device_path(path)) {
        /* the numbers the drivers register: nvidia 195 (ctl minor 255),
         * nvidia-uvm a dynamic major, kfd a dynamic major, DRM 226 */
        unsigned minor = 0, maj = 195;
        if (!strcmp(path, "/dev/nvidiactl")) minor = 255;
        else if (!strncmp(path, "/dev/nvidia-uvm", 15)) maj = 511;
        else if (!strcmp(path, "/dev/kfd")) maj = 510;
        else if (!strncmp(path, "/dev/dri/", 9)) maj = 226, minor = (unsigned)atoi(path + 16);
        else minor = (unsigned)atoi(path + 11);
        st->st_mode = S_IFCHR | 0666;
        st->st_rdev = makedev(maj, minor);
        return 1;
    }
    static char buf[1 << 16];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    ssize_t n = 0;
    if (k == V_FILE) {
        pthread_mutex_lock(&lock);
        mock_path_read(path, buf, sizeof buf, &n);
        pthread_mutex_unlock(&lock);
        st->st_mode = S_IFREG | 0444;
        st->st_size = n < 0 ? 0 : n;
    } else {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
    }
    return 1;
}

EXPORT int stat(const char *path, struct stat *st)
{
    ready();
    int r = mock_stat(path, st);
    return r ? (r < 0 ? -1 : 0) : real_stat(path, st);
}
EXPORT int stat64(const char *path, struct stat64 *st) { return stat(path, (struct stat *)st); }

EXPORT int lstat(const char *path, struct stat *st)
{
    ready();
    int r = mock_stat(path, st);
    return r ? (r < 0 ? -1 : 0) : real_lstat(path, st);
}
EXPORT int lstat64(const char *path, struct stat64 *st) { return lstat(path, (struct stat *)st); }

/* fstat of an emulated file's descriptor: what stat of its path says (a
 * character device), not the memfd standing for it; 0 when fd is none */
static int mock_fstat(int fd, struct stat *st)
{
    char path[64];
    return mock_fd_path(fd, path, sizeof path) ? mock_stat(path, st) : 0;
}

/* an *at call about dirfd itself: an empty path with AT_EMPTY_PATH (the
 * path may be NULL for statx, though glibc declares it nonnull) */
__attribute__((noinline)) static bool fd_itself(const char *path, int flags)
{
    return (flags & AT_EMPTY_PATH) && (!path || !path[0]);
}

EXPORT int fstat(int fd, struct stat *st)
{
    ready();
    int r = mock_fstat(fd, st);
    return r ? (r < 0 ? -1 : 0) : real_fstat(fd, st);
}
EXPORT int fstat64(int fd, struct stat64 *st) { return fstat(fd, (struct stat *)st); }

/* programs built against glibc before 2.33 call these */
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
    ready();
    int r = mock_fstat(fd, st);
    if (r) return r < 0 ? -1 : 0;
    return real_fxstat ? real_fxstat(ver, fd, st) : real_fstat(fd, st);
}
EXPORT int __fxstat64(int ver, int fd, struct stat64 *st) { return __fxstat(ver, fd, (struct stat *)st); }

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    ready();
    char buf[4096];
    const char *p = !fd_itself(path, AT_EMPTY_PATH) ? mock_path_at(dirfd, path, buf, sizeof buf) : NULL;
    int r = p ? mock_stat(p, st) : 0;
    if (!r && !p && fd_itself(path, flags)) r = mock_fstat(dirfd, st);
    return r ? (r < 0 ? -1 : 0) : real_fstatat(dirfd, path, st, flags);
}
EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    return fstatat(dirfd, path, (struct stat *)st, flags);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *buf)
{
    ready();
    struct stat st;
    char pbuf[4096];
    const char *p = !fd_itself(path, AT_EMPTY_PATH) ? mock_path_at(dirfd, path, pbuf, sizeof pbuf) : NULL;
    int r = p ? mock_stat(p, &st) : 0;
    if (!r && !p && fd_itself(path, flags)) r = mock_fstat(dirfd, &st);
    if (!r) return real_statx ? real_statx(dirfd, path, flags, mask, buf) : (errno = ENOSYS, -1);
    if (r < 0) return -1;
    memset(buf, 0, sizeof *buf);
    buf->stx_mask = STATX_TYPE | STATX_MODE | STATX_SIZE | STATX_NLINK;
    buf->stx_mode = (uint16_t)st.st_mode;
    buf->stx_nlink = (uint32_t)st.st_nlink;
    buf->stx_size = (uint64_t)st.st_size;
    buf->stx_blksize = 4096;
    buf->stx_rdev_major = major(st.st_rdev);
    buf->stx_rdev_minor = minor(st.st_rdev);
    return 0;
}

EXPORT int access(const char *path, int mode)
{
    ready();
    int rc;
    if (path[0] == '/' && mock_path_exists(path, &rc)) return fail(rc);
    return real_access(path, mode);
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    ready();
    int rc;
    char buf[4096];
    const char *p = mock_path_at(dirfd, path, buf, sizeof buf);
    if (p && mock_path_exists(p, &rc)) return fail(rc);
    return real_faccessat(dirfd, path, mode, flags);
}

/* ** emulated files */
EXPORT int close(int fd)
{
    ready();
    if (mock_fd_is_mock(fd)) return fail(mock_sys()->close(NULL, fd));
    int r = real_close(fd);
    if (r == 0) vfd_closed(fd);
    return r;
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    ready();
    if (mock_fd_is_mock(fd)) return fail(mock_sys()->ioctl(NULL, fd, request, arg));
    return real_ioctl(fd, request, arg);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    ready();
    if (fd < 0 || !mock_fd_is_mock(fd)) return real_mmap(addr, len, prot, flags, fd, off);
    int err = 0;
    void *p = mock_sys()->mmap(NULL, addr, len, prot, flags, fd, off, &err);
    if (!p) {
        errno = err ? err : ENOMEM;
        return MAP_FAILED;
    }
    return p;
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    ready();
    /* the mock's munmap keeps memory a GPU still maps and passes the rest on */
    return fail(mock_sys()->munmap(NULL, addr, len));
}

/* close_range and closefrom close emulated files too: each is released
 * as its close would (the numbers go to the real call, which closes the
 * memfds standing for them). CLOSE_RANGE_CLOEXEC only marks them. */
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif
int close_range(unsigned first, unsigned last, int flags);
EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    ready();
    if (!(flags & CLOSE_RANGE_CLOEXEC) && first <= last) mock_fd_forget_range(first, last);
    return real_close_range ? real_close_range(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
}

void closefrom(int lowfd);
EXPORT void closefrom(int lowfd)
{
    ready();
    unsigned first = (unsigned)(lowfd < 0 ? 0 : lowfd);
    mock_fd_forget_range(first, ~0u);
    if (real_closefrom) real_closefrom(lowfd);
    else syscall(SYS_close_range, first, ~0u, 0);
}

EXPORT int dup(int fd)
{
    ready();
    int r = real_dup(fd);
    if (r >= 0) mock_fd_dup(fd, r);
    return r;
}

EXPORT int dup2(int fd, int fd2)
{
    ready();
    if (fd != fd2 && mock_fd_is_mock(fd2)) mock_fd_forget(fd2);
    int r = real_dup2(fd, fd2);
    if (r >= 0) mock_fd_dup(fd, r);
    return r;
}

EXPORT int dup3(int fd, int fd2, int flags)
{
    ready();
    if (fd != fd2 && mock_fd_is_mock(fd2)) mock_fd_forget(fd2);
    int r = real_dup3(fd, fd2, flags);
    if (r >= 0) mock_fd_dup(fd, r);
    return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long); /* an int or a pointer: one register either way */
    va_end(ap);
    ready();
    int r = real_fcntl(fd, cmd, arg);
    if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) mock_fd_dup(fd, r);
    return r;
}
EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    return fcntl(fd, cmd, arg);
}
