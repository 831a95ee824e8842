/* libhcqtrace.so: loaded with LD_PRELOAD by `hcq trace -- PROGRAM`, it sits
 * between any program (CUDA's and PyTorch's included) and libc, and hands
 * every open, ioctl, mmap and close of a driver file to the tracer of
 * drivers/trace.c, which decodes them with the same tables hcq's own
 * backends use. Output: HCQ_TRACE_OUT (a file; default stderr), as JSON
 * lines when HCQ_TRACE_JSON is set. */
#include "drivers/trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* the interposed names must be visible (the build hides everything else) */
#define EXPORT __attribute__((visibility("default")))

static tracer *T;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Thread_local int inside; /* our own calls (fopen of the output) are not traced */

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

#define REAL(var, name) (*(void **)&var = dlsym(RTLD_NEXT, name))

static void init(void)
{
    REAL(real_open, "open");
    REAL(real_openat, "openat");
    REAL(real_close, "close");
    REAL(real_ioctl, "ioctl");
    REAL(real_mmap, "mmap");
    REAL(real_munmap, "munmap");
    inside++;
    const char *path = getenv("HCQ_TRACE_OUT");
    FILE *out = path ? fopen(path, "a") : NULL;
    T = tracer_create(out, getenv("HCQ_TRACE_JSON") != NULL);
    inside--;
}

static tracer *tr(void)
{
    pthread_once(&once, init);
    return inside ? NULL : T;
}

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name)                                                                         \
    EXPORT int name(const char *path, int flags, ...)                                                     \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode_t m = mode_arg(flags, ap);                                                            \
        va_end(ap);                                                                                \
        tr();                                                                                      \
        return traced_open(AT_FDCWD, path, flags, m, false);                                       \
    }
#define OPENAT_WRAPPER(name)                                                                       \
    EXPORT int name(int dirfd, const char *path, int flags, ...)                                          \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, flags);                                                                       \
        mode_t m = mode_arg(flags, ap);                                                            \
        va_end(ap);                                                                                \
        tr();                                                                                      \
        return traced_open(dirfd, path, flags, m, true);                                           \
    }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

/* the _FORTIFY_SOURCE entry points */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
EXPORT int __open64_2(const char *path, int flags) { return open(path, flags); }

EXPORT int close(int fd)
{
    tracer *t = tr();
    int r = real_close(fd);
    int e = errno;
    if (t && tracer_knows_fd(t, fd)) tracer_close(t, fd, r < 0 ? -e : 0);
    errno = e;
    return r;
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    tracer *t = tr();
    if (!t || !tracer_knows_fd(t, fd)) return real_ioctl(fd, request, arg);
    void *tok;
    tracer_ioctl_before(t, fd, request, arg, &tok);
    uint64_t t0 = now();
    int r = real_ioctl(fd, request, arg);
    int e = errno;
    tracer_ioctl_after(t, fd, request, arg, r < 0 ? -e : r, now() - t0, tok);
    errno = e;
    return r;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    tracer *t = tr();
    uint64_t t0 = now();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    int e = errno;
    if (t && fd >= 0) tracer_mmap(t, addr, len, prot, flags, fd, off, p == MAP_FAILED ? NULL : p, e, now() - t0);
    errno = e;
    return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    tr();
    return real_munmap(addr, len);
}
