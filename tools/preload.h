/* tools/preload.h: what the two LD_PRELOAD libraries (libhcqtrace.so,
 * libhcqmock.so) share: exported names, the next definition of a libc
 * function, and the family of open entry points, every one of which must
 * be interposed for an open not to slip past (open, open64, openat,
 * openat64 and _FORTIFY_SOURCE's __open_2 variants). */
#ifndef HCQ_TOOLS_PRELOAD_H
#define HCQ_TOOLS_PRELOAD_H

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

/* the interposed names must be visible (the build hides everything else) */
#define PRELOAD_EXPORT __attribute__((visibility("default")))
/* var = the definition of name after this library's (libc's, or the next preload's) */
#define PRELOAD_REAL(var, name) (*(void **)&var = dlsym(RTLD_NEXT, name))

/* open's third argument exists only with O_CREAT or O_TMPFILE */
static inline mode_t preload_mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* Defines the open family, each calling
 * int IMPL(int dirfd, const char *path, int flags, mode_t mode, bool at) */
#define PRELOAD_OPEN_FAMILY(IMPL)                                                                                      \
    PRELOAD_EXPORT int open(const char *path, int flags, ...)                                                          \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode_t m = preload_mode_arg(flags, ap);                                                                        \
        va_end(ap);                                                                                                    \
        return IMPL(AT_FDCWD, path, flags, m, false);                                                                  \
    }                                                                                                                  \
    PRELOAD_EXPORT int open64(const char *path, int flags, ...)                                                        \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode_t m = preload_mode_arg(flags, ap);                                                                        \
        va_end(ap);                                                                                                    \
        return IMPL(AT_FDCWD, path, flags, m, false);                                                                  \
    }                                                                                                                  \
    PRELOAD_EXPORT int openat(int dirfd, const char *path, int flags, ...)                                             \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode_t m = preload_mode_arg(flags, ap);                                                                        \
        va_end(ap);                                                                                                    \
        return IMPL(dirfd, path, flags, m, true);                                                                      \
    }                                                                                                                  \
    PRELOAD_EXPORT int openat64(int dirfd, const char *path, int flags, ...)                                           \
    {                                                                                                                  \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode_t m = preload_mode_arg(flags, ap);                                                                        \
        va_end(ap);                                                                                                    \
        return IMPL(dirfd, path, flags, m, true);                                                                      \
    }                                                                                                                  \
    int __open_2(const char *path, int flags);                                                                         \
    int __open64_2(const char *path, int flags);                                                                       \
    int __openat_2(int dirfd, const char *path, int flags);                                                            \
    int __openat64_2(int dirfd, const char *path, int flags);                                                          \
    PRELOAD_EXPORT int __open_2(const char *path, int flags) { return IMPL(AT_FDCWD, path, flags, 0, false); }         \
    PRELOAD_EXPORT int __open64_2(const char *path, int flags) { return IMPL(AT_FDCWD, path, flags, 0, false); }       \
    PRELOAD_EXPORT int __openat_2(int dirfd, const char *path, int flags) { return IMPL(dirfd, path, flags, 0, true); } \
    PRELOAD_EXPORT int __openat64_2(int dirfd, const char *path, int flags)                                            \
    {                                                                                                                  \
        return IMPL(dirfd, path, flags, 0, true);                                                                      \
    }

#endif
