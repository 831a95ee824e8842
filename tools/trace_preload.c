/* libhcqtrace.so: loaded with LD_PRELOAD by `hcq trace -- PROGRAM`, it sits
 * between any program (CUDA's and PyTorch's included) and libc, in the
 * program and in every child it forks or execs (LD_PRELOAD is inherited),
 * and hands every open, stat/access probe, ioctl, mmap, dup and close of a
 * driver file to the tracer of drivers/trace.c, which decodes them with
 * the same tables hcq's own backends use.
 *
 * Where lines go (HCQ_TRACE_SOCK, set by `hcq trace`): a SOCK_SEQPACKET
 * connection to the hcq trace process, opened by each process image (the
 * descriptor is close-on-exec, sits high, and the program's close, dup2 and
 * close_range are steered around it), so the lines never mix into the
 * program's own stderr, a line is one message, and a reader that is gone is
 * an error (MSG_NOSIGNAL), not a SIGPIPE in the program. Without it:
 * HCQ_TRACE_OUT (a file), else a duplicate of stderr taken at load.
 * HCQ_TRACE_JSON: JSON Lines; HCQ_TRACE_SUMMARY=only|both: summary records
 * for `hcq trace -c`; HCQ_TRACE_STREAMS: stream capture; HCQ_TRACE_T0: the
 * CLOCK_MONOTONIC time that is zero, shared by a whole process tree.
 *
 * Fork-safe: pthread_atfork takes the tracer's locks around fork, so a
 * child never inherits one held by a thread it does not have. A static
 * program, or code that makes raw system calls, bypasses any preload:
 * `hcq trace` warns about static programs before running them, syscall()
 * itself is interposed, and descriptors of driver files that appear without
 * an open the tracer saw are reported (at the first ioctl on them and at
 * exit). */
#include "drivers/trace.h"
#include "tools/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "one stat layout (64-bit)");
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define EXPORT PRELOAD_EXPORT

static tracer *T;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Thread_local int inside; /* our own calls are not traced */
static int out_fd = -1;          /* the output descriptor the program must not touch */
static const char *out_path;     /* HCQ_TRACE_OUT's file, when out_fd is one */
static bool to_socket;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static long (*real_syscall)(long, ...);
static int (*real_close_range)(unsigned, unsigned, int);
static int (*real_stat)(const char *, struct stat *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_fstatat)(int, const char *, struct stat *, int);
static int (*real_statx)(int, const char *, int, unsigned, struct statx *);
static int (*real_access)(const char *, int);
static int (*real_faccessat)(int, const char *, int, int);
static int (*real_xstat)(int, const char *, struct stat *);
static int (*real_lxstat)(int, const char *, struct stat *);
static int (*real_fxstatat)(int, int, const char *, struct stat *, int);

#define REAL PRELOAD_REAL

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ** the output */
#define OUT_FD_MIN 900 /* high, out of the way of the program's own descriptors */

static int high_fd(int fd)
{
    if (fd < 0 || fd >= OUT_FD_MIN) return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, OUT_FD_MIN);
    if (h >= 0) {
        real_close(fd);
        return h;
    }
    return fd;
}

static int connect_socket(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        real_close(fd);
        return -1;
    }
    return high_fd(fd);
}

/* the tracer lost its output (the program closed it behind our back, with
 * a raw syscall): connect again */
static int reconnect(void *arg)
{
    (void)arg;
    const char *sock = getenv("HCQ_TRACE_SOCK");
    int fd = sock ? connect_socket(sock) : -1;
    if (fd >= 0) out_fd = fd;
    return fd;
}

static int open_output(void)
{
    const char *sock = getenv("HCQ_TRACE_SOCK");
    if (sock && *sock) {
        int fd = connect_socket(sock);
        if (fd >= 0) {
            to_socket = true;
            return fd;
        }
        /* hcq trace is gone or not ours: say so where the program can see */
        static const char msg[] = "libhcqtrace: cannot reach hcq trace (HCQ_TRACE_SOCK); tracing to stderr\n";
        if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    }
    const char *path = getenv("HCQ_TRACE_OUT");
    if (path && *path) {
        int fd = real_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            out_path = path;
            return high_fd(fd);
        }
    }
    return fcntl(2, F_DUPFD_CLOEXEC, OUT_FD_MIN);
}

/* ** process labels: printed before a process's first line */
static void label_exec(void)
{
    char cmd[400] = "";
    int fd = real_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, cmd, sizeof cmd - 1);
        real_close(fd);
        /* the arguments' NULs become spaces (the last one goes), and no
         * control byte of an argument reaches the reader's terminal */
        if (n > 0 && !cmd[n - 1]) n--;
        for (ssize_t i = 0; i < n; i++)
            if (!cmd[i]) cmd[i] = ' ';
            else if ((unsigned char)cmd[i] < 0x20 || cmd[i] == 0x7f) cmd[i] = '?';
        cmd[n > 0 ? n : 0] = 0;
    }
    char text[512];
    snprintf(text, sizeof text, "ppid=%d argv=%s", getppid(), cmd);
    tracer_set_preamble(T, "exec", text);
}

static void atfork_prepare(void)
{
    if (T) tracer_fork_prepare(T);
}

static void atfork_parent(void)
{
    if (T) tracer_fork_parent(T);
}

static void atfork_child(void)
{
    if (!T) return;
    tracer_fork_child(T);
    char text[64];
    snprintf(text, sizeof text, "parent=%d", getppid());
    tracer_set_preamble(T, "fork", text);
}

static void init(void)
{
    REAL(real_open, "open");
    REAL(real_openat, "openat");
    REAL(real_close, "close");
    REAL(real_ioctl, "ioctl");
    REAL(real_mmap, "mmap");
    REAL(real_munmap, "munmap");
    REAL(real_dup, "dup");
    REAL(real_dup2, "dup2");
    REAL(real_dup3, "dup3");
    REAL(real_syscall, "syscall");
    REAL(real_close_range, "close_range"); /* glibc 2.34; the next preload's (the mock's) when there is one */
    REAL(real_stat, "stat");
    REAL(real_lstat, "lstat");
    REAL(real_fstatat, "fstatat");
    REAL(real_statx, "statx");
    REAL(real_access, "access");
    REAL(real_faccessat, "faccessat");
    /* the pre-2.33 stat entry points exist only as versioned compat symbols */
    *(void **)&real_xstat = dlvsym(RTLD_NEXT, "__xstat", "GLIBC_2.2.5");
    *(void **)&real_lxstat = dlvsym(RTLD_NEXT, "__lxstat", "GLIBC_2.2.5");
    *(void **)&real_fxstatat = dlvsym(RTLD_NEXT, "__fxstatat", "GLIBC_2.4");
    inside++;
    out_fd = open_output();
    const char *summary = getenv("HCQ_TRACE_SUMMARY"), *t0 = getenv("HCQ_TRACE_T0");
    tracer_opts o = {.out_fd = out_fd,
                     .out_is_socket = to_socket,
                     .out_path = out_path,
                     .json = getenv("HCQ_TRACE_JSON") != NULL,
                     .lines = !summary || strcmp(summary, "only"),
                     .summary = summary != NULL,
                     .streams = getenv("HCQ_TRACE_STREAMS") != NULL,
                     .t0 = t0 ? strtoull(t0, NULL, 10) : 0,
                     .files = sys_libc()};
    T = tracer_create(&o);
    if (T) {
        if (to_socket) tracer_set_reconnect(T, reconnect, NULL);
        label_exec();
        tracer_adopt_inherited(T); /* what an ancestor opened: known, not "unseen" */
    }
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    inside--;
}

__attribute__((constructor)) static void preload_init(void) { pthread_once(&once, init); }

__attribute__((destructor)) static void preload_fini(void)
{
    if (!T || inside) return;
    inside++;
    tracer_exit(T); /* the last streams */
    tracer_check_unseen(T);
    inside--;
}

static tracer *tr(void)
{
    pthread_once(&once, init);
    return inside ? NULL : T;
}

/* ** opens */
static int traced_open(int dirfd, const char *path, int flags, mode_t mode, bool at)
{
    tracer *t = tr();
    uint64_t t0 = now();
    int fd = at ? real_openat(dirfd, path, flags, mode) : real_open(path, flags, mode);
    int e = errno;
    if (t) tracer_open(t, path, flags, fd >= 0 ? fd : -e, now() - t0);
    errno = e;
    return fd;
}

PRELOAD_OPEN_FAMILY(traced_open)

/* descriptors whose file an unknown-fd ioctl made us look at (once each,
 * until closed): a driver file the tracer never saw opened is reported */
static _Atomic uint64_t looked[1024 / 64];

static void forget_look(int fd)
{
    if (fd >= 0 && fd < 1024) atomic_fetch_and(&looked[fd / 64], ~(1ull << (fd % 64)));
}

static void look_at(tracer *t, int fd)
{
    if (fd < 0 || fd >= 1024) return;
    uint64_t bit = 1ull << (fd % 64);
    if (atomic_fetch_or(&looked[fd / 64], bit) & bit) return;
    char link[64], path[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    if (trace_decoder_for(path)) tracer_check_unseen(t);
}

/* ** descriptors: the program's closes and dups, steered around ours */
static bool is_ours(int fd) { return fd >= 0 && fd == out_fd; }

/* ours is about to be replaced (dup2 onto it): move it first */
static void move_ours(void)
{
    int n = fcntl(out_fd, F_DUPFD_CLOEXEC, out_fd + 1);
    if (n < 0) return;
    out_fd = n;
    if (T) tracer_set_out(T, n);
}

EXPORT int close(int fd)
{
    tracer *t = tr();
    if (is_ours(fd)) return 0; /* a close-everything loop: the trace stays */
    forget_look(fd);
    tracer_closing c;
    bool known = t && tracer_close_begin(t, fd, &c);
    int r = real_close(fd);
    int e = errno;
    if (known) tracer_close_end(t, &c, r < 0 ? -e : 0);
    errno = e;
    return r;
}

EXPORT int dup(int fd)
{
    tracer *t = tr();
    int r = real_dup(fd);
    int e = errno;
    if (t && r >= 0) tracer_dup(t, fd, r);
    errno = e;
    return r;
}

EXPORT int dup2(int fd, int fd2)
{
    tracer *t = tr();
    forget_look(fd2);
    if (is_ours(fd2) && fd != fd2) move_ours();
    int r = real_dup2(fd, fd2);
    int e = errno;
    if (t && r >= 0) tracer_dup(t, fd, r);
    errno = e;
    return r;
}

EXPORT int dup3(int fd, int fd2, int flags)
{
    tracer *t = tr();
    forget_look(fd2);
    if (is_ours(fd2) && fd != fd2) move_ours();
    int r = real_dup3(fd, fd2, flags);
    int e = errno;
    if (t && r >= 0) tracer_dup(t, fd, r);
    errno = e;
    return r;
}

int close_range(unsigned first, unsigned last, int flags);
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif
/* the next library's close_range (the preloaded mock's, which releases its
 * emulated files), else the system call */
static long next_close_range(unsigned first, unsigned last, int flags)
{
    return real_close_range ? real_close_range(first, last, flags) : real_syscall(SYS_close_range, first, last, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    tracer *t = tr();
    /* the traced files it closes are said to be closed, as close says it */
    enum { MAXC = 256 };
    tracer_closing *c = NULL;
    int nc = 0;
    if (t && !(flags & CLOSE_RANGE_CLOEXEC) && (c = malloc(MAXC * sizeof *c)))
        nc = tracer_close_range_begin(t, first, last, c, MAXC);
    unsigned o = (unsigned)out_fd;
    long r = 0;
    if (out_fd < 0 || o < first || o > last) {
        r = next_close_range(first, last, flags);
    } else { /* around ours */
        if (o > first) r = next_close_range(first, o - 1, flags);
        if (r == 0 && o < last) r = next_close_range(o + 1, last, flags);
    }
    int e = errno;
    for (int i = 0; i < nc; i++) tracer_close_end(t, &c[i], r < 0 ? -e : 0);
    free(c);
    errno = e;
    return (int)r;
}

void closefrom(int lowfd);
EXPORT void closefrom(int lowfd) { close_range((unsigned)(lowfd < 0 ? 0 : lowfd), ~0u, 0); }

/* ** ioctls */
static int traced_ioctl(tracer *t, int fd, unsigned long request, void *arg, bool raw)
{
    if (!t || !tracer_knows_fd(t, fd)) {
        int r = raw ? (int)real_syscall(SYS_ioctl, fd, request, arg) : real_ioctl(fd, request, arg);
        if (t) {
            int e = errno;
            inside++;
            look_at(t, fd);
            inside--;
            errno = e;
        }
        return r;
    }
    void *tok;
    tracer_ioctl_before(t, fd, request, arg, &tok);
    uint64_t t0 = now();
    int r = raw ? (int)real_syscall(SYS_ioctl, fd, request, arg) : real_ioctl(fd, request, arg);
    int e = errno;
    tracer_ioctl_after(t, fd, request, arg, r < 0 ? -e : r, now() - t0, tok);
    errno = e;
    return r;
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return traced_ioctl(tr(), fd, request, arg, false);
}

/* ** memory */
static void *traced_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, bool raw)
{
    tracer *t = tr();
    uint64_t t0 = now();
    void *p = raw ? (void *)real_syscall(SYS_mmap, addr, len, prot, flags, fd, off)
                  : real_mmap(addr, len, prot, flags, fd, off);
    int e = errno;
    if (t && fd >= 0) tracer_mmap(t, addr, len, prot, flags, fd, off, p == MAP_FAILED ? NULL : p, e, now() - t0);
    errno = e;
    return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return traced_mmap(addr, len, prot, flags, fd, off, false);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return traced_mmap(addr, len, prot, flags, fd, off, false);
}

EXPORT int munmap(void *addr, size_t len)
{
    tracer *t = tr();
    if (t) tracer_munmap_before(t, addr, len);
    int r = real_munmap(addr, len);
    int e = errno;
    if (t) tracer_munmap(t, addr, len, r < 0 ? -e : 0);
    errno = e;
    return r;
}

/* ** probes: stat and access of device paths */
static int probed(const char *call, const char *path, int mode, int r, const struct stat *st)
{
    tracer *t = tr();
    int e = errno;
    if (t) tracer_probe(t, call, path, mode, r < 0 ? -e : 0, r == 0 ? st : NULL);
    errno = e;
    return r;
}

EXPORT int stat(const char *path, struct stat *st)
{
    tr();
    return probed("stat", path, 0, real_stat(path, st), st);
}
EXPORT int stat64(const char *path, struct stat64 *st) { return stat(path, (struct stat *)st); }

EXPORT int lstat(const char *path, struct stat *st)
{
    tr();
    return probed("lstat", path, 0, real_lstat(path, st), st);
}
EXPORT int lstat64(const char *path, struct stat64 *st) { return lstat(path, (struct stat *)st); }

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    tr();
    return probed("fstatat", path, 0, real_fstatat(dirfd, path, st, flags), st);
}
EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    return fstatat(dirfd, path, (struct stat *)st, flags); /* the same layout on 64-bit */
}

int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
/* programs built against glibc before 2.33 call these */
EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    tr();
    int r = real_xstat ? real_xstat(ver, path, st) : real_stat(path, st);
    return probed("stat", path, 0, r, st);
}
EXPORT int __xstat64(int ver, const char *path, struct stat64 *st) { return __xstat(ver, path, (struct stat *)st); }
EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    tr();
    int r = real_lxstat ? real_lxstat(ver, path, st) : real_lstat(path, st);
    return probed("lstat", path, 0, r, st);
}
EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st) { return __lxstat(ver, path, (struct stat *)st); }
EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
    tr();
    int r = real_fxstatat ? real_fxstatat(ver, dirfd, path, st, flags) : real_fstatat(dirfd, path, st, flags);
    return probed("fstatat", path, 0, r, st);
}
EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
    return __fxstatat(ver, dirfd, path, (struct stat *)st, flags);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *buf)
{
    tr();
    int r = real_statx ? real_statx(dirfd, path, flags, mask, buf) : (errno = ENOSYS, -1);
    struct stat st = {0};
    if (r == 0) {
        st.st_mode = buf->stx_mode;
        st.st_rdev = makedev(buf->stx_rdev_major, buf->stx_rdev_minor);
    }
    return probed("statx", path, 0, r, &st);
}

EXPORT int access(const char *path, int mode)
{
    tr();
    return probed("access", path, mode, real_access(path, mode), NULL);
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
    tr();
    return probed("faccessat", path, mode, real_faccessat(dirfd, path, mode, flags), NULL);
}

/* ** syscall(): the driver calls a program makes through it are traced as
 * if made through libc; the rest pass through untouched */
EXPORT long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    tracer *t = tr();
    if (t) {
        switch (nr) {
        case SYS_ioctl: return traced_ioctl(t, (int)a[0], (unsigned long)a[1], (void *)a[2], true);
        case SYS_mmap:
            return (long)traced_mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5], true);
        case SYS_openat: {
            uint64_t t0 = now();
            long fd = real_syscall(nr, a[0], a[1], a[2], a[3]);
            int e = errno;
            tracer_open(t, (const char *)a[1], (int)a[2], fd >= 0 ? (int)fd : -e, now() - t0);
            errno = e;
            return fd;
        }
        case SYS_open: {
            uint64_t t0 = now();
            long fd = real_syscall(nr, a[0], a[1], a[2]);
            int e = errno;
            tracer_open(t, (const char *)a[0], (int)a[1], fd >= 0 ? (int)fd : -e, now() - t0);
            errno = e;
            return fd;
        }
        case SYS_close: {
            int fd = (int)a[0];
            if (is_ours(fd)) return 0;
            forget_look(fd);
            tracer_closing c;
            bool known = tracer_close_begin(t, fd, &c);
            long r = real_syscall(nr, fd);
            int e = errno;
            if (known) tracer_close_end(t, &c, r < 0 ? -e : 0);
            errno = e;
            return r;
        }
        }
    }
    return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
