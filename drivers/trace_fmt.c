/* The tracer's lines: key=value text or JSON fields, symbolic flags and
 * errno names, and reads of the traced program's memory that cannot fault. */
#include "drivers/trace.h"

#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

/* ** lines */
static void put(trace_line *l, const char *fmt, ...) HCQ_PRINTF(2, 3);
static void put(trace_line *l, const char *fmt, ...)
{
    if (l->len >= sizeof l->buf - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, sizeof l->buf - l->len, fmt, ap);
    va_end(ap);
    if (n > 0) l->len = BASE_MIN(l->len + (size_t)n, sizeof l->buf - 1);
}

static void key(trace_line *l, const char *k)
{
    if (l->json) put(l, "%s\"%s\": ", l->first_field ? "" : ", ", k);
    else put(l, " %s=", k);
    l->first_field = false;
}

static void json_escaped(trace_line *l, const char *s)
{
    put(l, "\"");
    for (; *s && l->len < sizeof l->buf - 8; s++) {
        if (*s == '"' || *s == '\\') put(l, "\\%c", *s);
        else if ((unsigned char)*s < 0x20 || *s == 0x7f) put(l, "\\u%04x", (unsigned char)*s);
        else put(l, "%c", *s);
    }
    put(l, "\"");
}

void trace_str(trace_line *l, const char *k, const char *v)
{
    key(l, k);
    if (l->json) {
        json_escaped(l, v);
        return;
    }
    /* a program's strings (paths) may hold anything: no raw control bytes */
    for (; *v && l->len < sizeof l->buf - 8; v++) {
        if ((unsigned char)*v < 0x20 || *v == 0x7f) put(l, "\\x%02x", (unsigned char)*v);
        else put(l, "%c", *v);
    }
}

void trace_u64(trace_line *l, const char *k, uint64_t v)
{
    key(l, k);
    put(l, "%llu", (unsigned long long)v);
}

void trace_i64(trace_line *l, const char *k, int64_t v)
{
    key(l, k);
    put(l, "%lld", (long long)v);
}

void trace_hex(trace_line *l, const char *k, uint64_t v)
{
    key(l, k);
    put(l, l->json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)v);
}

void trace_bytes(trace_line *l, const char *k, const void *p, size_t n)
{
    key(l, k);
    const uint8_t *b = p;
    size_t shown = BASE_MIN(n, 256);
    if (l->json) put(l, "\"");
    for (size_t i = 0; i < shown; i++) put(l, "%02x%s", b[i], (i % 4 == 3 && i + 1 < shown && !l->json) ? "_" : "");
    if (shown < n) put(l, "...(%zu bytes)", n);
    if (l->json) put(l, "\"");
}

/* ** symbolic flags */
typedef struct flag_name {
    unsigned long bit;
    const char *name;
} flag_name;

/* names the set bits of v from the table, the rest in hex: "A|B|0x40" */
static void put_flags(trace_line *l, const char *k, const char *first, unsigned long v, const flag_name *t, size_t n)
{
    char s[256];
    size_t off = 0;
    s[0] = 0;
    if (first) off += (size_t)snprintf(s, sizeof s, "%s", first);
    for (size_t i = 0; i < n; i++) {
        if (!(v & t[i].bit) || (v & t[i].bit) != t[i].bit) continue;
        v &= ~t[i].bit;
        off += (size_t)snprintf(s + off, sizeof s - BASE_MIN(off, sizeof s), "%s%s", off ? "|" : "", t[i].name);
        if (off >= sizeof s) break;
    }
    if (v && off < sizeof s) snprintf(s + off, sizeof s - off, "%s0x%lx", off ? "|" : "", v);
    else if (!off) snprintf(s, sizeof s, "0");
    trace_str(l, k, s);
}

void trace_open_flags(trace_line *l, const char *k, int flags)
{
    static const flag_name t[] = {
        {O_CREAT, "O_CREAT"},         {O_EXCL, "O_EXCL"},         {O_NOCTTY, "O_NOCTTY"},
        {O_TRUNC, "O_TRUNC"},         {O_APPEND, "O_APPEND"},     {O_NONBLOCK, "O_NONBLOCK"},
        {__O_TMPFILE, "O_TMPFILE"},   {O_SYNC, "O_SYNC"},         {O_DSYNC, "O_DSYNC"},
        {O_DIRECT, "O_DIRECT"},       {O_DIRECTORY, "O_DIRECTORY"}, {O_NOFOLLOW, "O_NOFOLLOW"},
        {O_NOATIME, "O_NOATIME"},     {O_CLOEXEC, "O_CLOEXEC"},   {O_PATH, "O_PATH"},
        {0100000, "O_LARGEFILE"}, /* the kernel's value; glibc's O_LARGEFILE is 0 on 64-bit */
    };
    int acc = flags & O_ACCMODE;
    const char *mode = acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : acc == O_RDWR ? "O_RDWR" : "O_ACCMODE";
    put_flags(l, k, mode, (unsigned long)(unsigned)flags & ~(unsigned long)O_ACCMODE, t, BASE_ARRAY_LEN(t));
}

void trace_prot(trace_line *l, const char *k, int prot)
{
    static const flag_name t[] = {{PROT_READ, "PROT_READ"}, {PROT_WRITE, "PROT_WRITE"}, {PROT_EXEC, "PROT_EXEC"},
                                  {PROT_GROWSDOWN, "PROT_GROWSDOWN"}, {PROT_GROWSUP, "PROT_GROWSUP"}};
    if (!prot) trace_str(l, k, "PROT_NONE");
    else put_flags(l, k, NULL, (unsigned)prot, t, BASE_ARRAY_LEN(t));
}

void trace_map_flags(trace_line *l, const char *k, int flags)
{
    static const flag_name t[] = {
        {MAP_FIXED, "MAP_FIXED"},         {MAP_ANONYMOUS, "MAP_ANONYMOUS"}, {MAP_32BIT, "MAP_32BIT"},
        {MAP_GROWSDOWN, "MAP_GROWSDOWN"}, {MAP_DENYWRITE, "MAP_DENYWRITE"}, {MAP_EXECUTABLE, "MAP_EXECUTABLE"},
        {MAP_LOCKED, "MAP_LOCKED"},       {MAP_NORESERVE, "MAP_NORESERVE"}, {MAP_POPULATE, "MAP_POPULATE"},
        {MAP_NONBLOCK, "MAP_NONBLOCK"},   {MAP_STACK, "MAP_STACK"},         {MAP_HUGETLB, "MAP_HUGETLB"},
        {MAP_SYNC, "MAP_SYNC"},           {MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"},
    };
    unsigned type = (unsigned)flags & 0x0f;
    const char *ty = type == MAP_SHARED ? "MAP_SHARED" : type == MAP_PRIVATE ? "MAP_PRIVATE"
                   : type == MAP_SHARED_VALIDATE ? "MAP_SHARED_VALIDATE" : NULL;
    unsigned long rest = (unsigned)flags & ~0x0fu;
    if (!ty) rest |= type;
    put_flags(l, k, ty, rest, t, BASE_ARRAY_LEN(t));
}

void trace_access_mode(trace_line *l, const char *k, int mode)
{
    static const flag_name t[] = {{R_OK, "R_OK"}, {W_OK, "W_OK"}, {X_OK, "X_OK"}};
    if (!mode) trace_str(l, k, "F_OK");
    else put_flags(l, k, NULL, (unsigned)mode, t, BASE_ARRAY_LEN(t));
}

void trace_errno(trace_line *l, int err)
{
    if (err < 0) err = -err;
    key(l, "error");
    if (l->json) {
        put(l, "\"%s\", \"errno\": %d", base_errno_name(err), err);
    } else {
        char s[160];
        snprintf(s, sizeof s, "%s (%s)", base_errno_name(err), strerror(err));
        put(l, "%s", s);
    }
}

/* ** reads that cannot fault */
/* Without process_vm_readv (a seccomp filter may refuse it): a write into a
 * pipe reports EFAULT for memory it cannot read, and reading it back
 * copies. A pipe per read, closed at once: a pipe kept open was a
 * descriptor of the tracer's in the program's table, which a close loop
 * would close and a later open would reuse, and the tracer would then
 * write the program's memory into the program's file. */
static bool read_by_pipe(void *dst, uint64_t addr, size_t n)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) return false;
    bool ok = true;
    size_t done = 0;
    while (ok && done < n) {
        size_t chunk = BASE_MIN(n - done, 4096);
        ssize_t w = write(p[1], (const void *)(uintptr_t)(addr + done), chunk);
        if (w <= 0) {
            ok = false;
            break;
        }
        ssize_t r = read(p[0], (uint8_t *)dst + done, (size_t)w);
        if (r != w) ok = false;
        done += (size_t)w;
    }
    close(p[0]);
    close(p[1]);
    return ok;
}

bool trace_read(void *dst, uint64_t addr, size_t n)
{
    if (!n) return true;
    if (!addr || addr + n < addr) return false;
    static int no_vm_readv;
    if (!__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED)) {
        struct iovec local = {dst, n}, remote = {(void *)(uintptr_t)addr, n};
        ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (r == (ssize_t)n) return true;
        if (r >= 0 || errno == EFAULT) return false;
        __atomic_store_n(&no_vm_readv, 1, __ATOMIC_RELAXED); /* ENOSYS, EPERM: use the pipe from now */
    }
    return read_by_pipe(dst, addr, n);
}
