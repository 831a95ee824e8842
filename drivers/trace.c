/* The tracer: which descriptor is which driver file, one line per event
 * (time, pid, tid, the call decoded), summary records for `hcq trace -c`,
 * fork handling, and the syscall table HCQ_TRACE=1 installs. Lines go out
 * with one write(2) each: no stdio buffer that a fork would duplicate, and
 * a line is never split between processes sharing the output. */
#include "drivers/trace.h"

#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ** decoders by path */
static const char *raw_name(unsigned long req)
{
    (void)req;
    return NULL;
}

/* the argument's bytes: inputs before (unless the driver only fills it),
 * outputs after (when it does) */
static void raw_fields(trace_line *l, const trace_call *c)
{
    unsigned dir = _IOC_DIR(c->req);
    if (c->before && dir == _IOC_READ) return;
    if (!c->before && (!(dir & _IOC_READ) || c->ret < 0)) return; /* a failed call filled nothing */
    if (c->arg && c->arg_size) trace_bytes(l, c->before ? "in" : "out", c->arg, c->arg_size);
}

static bool match_never(const char *path)
{
    (void)path;
    return false;
}

const trace_decoder trace_raw_decoder = {"raw", match_never, raw_name, NULL, raw_fields};

/* Driver files and the decoder of each; the backends provide theirs. */
extern const trace_decoder trace_nvidiactl_decoder, trace_nvidia_uvm_decoder, trace_nvidia_gpu_decoder,
    trace_kfd_decoder, trace_dri_decoder;
static const trace_decoder *const decoders[] = {
    &trace_nvidiactl_decoder, &trace_nvidia_uvm_decoder, &trace_nvidia_gpu_decoder,
    &trace_kfd_decoder,       &trace_dri_decoder,
};

const trace_decoder *trace_decoder_for(const char *path)
{
    if (!path) return NULL;
    for (size_t i = 0; i < BASE_ARRAY_LEN(decoders); i++)
        if (decoders[i]->match(path)) return decoders[i];
    const char *extra = getenv("HCQ_TRACE_PATHS"); /* read here: the preload library has no base_env */
    while (extra && *extra) {
        size_t n = strcspn(extra, ":");
        if (n && !strncmp(path, extra, n)) return &trace_raw_decoder;
        extra += n + (extra[n] == ':');
    }
    return NULL;
}

/* ** the tracer */
typedef struct fd_entry {
    int fd;       /* -1 empty */
    uint64_t gen; /* which open of fd this is (tracer_close_begin) */
    const trace_decoder *dec;
    char path[64];
    char driver[16]; /* DRM: the driver's name, once known */
} fd_entry;

#define NFDS 1024
#define SEEN_WORDS (NFDS / 64)

struct tracer {
    tracer_opts o;
    pthread_mutex_t lock; /* the fd table */
    uint64_t next_gen;    /* under lock */
    pthread_mutex_t out_lock;
    fd_entry fds[NFDS];
    uint64_t warned[SEEN_WORDS]; /* descriptors tracer_check_unseen warned about */
    bool out_failed;
    char out_path[4096];      /* the output file's (o.out_path), "" for none */
    uint64_t out_dev, out_ino; /* which file out_fd must be */
    int (*reconnect)(void *arg);
    void *reconnect_arg;
    trace_streams *streams;
    char pre_event[16], pre_text[512];
    bool pre_pending;
    uint64_t pre_ns;
};

/* which file fd is now (0, 0 when it is not open). A raw statx: in the
 * preload, the libc stat family is interposed. */
static void fd_file(int fd, uint64_t *dev, uint64_t *ino)
{
    struct statx sx;
    *dev = *ino = 0;
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_INO, &sx)) return;
    *dev = (uint64_t)sx.stx_dev_major << 32 | sx.stx_dev_minor;
    *ino = sx.stx_ino;
}

/* the output is the file it was opened on, or is made so again (the
 * output lock is held) */
static void out_check(tracer *t)
{
    if (!t->out_path[0]) return;
    uint64_t dev, ino;
    fd_file(t->o.out_fd, &dev, &ino);
    if (dev == t->out_dev && ino == t->out_ino) return;
    /* the number is another file now (or none): never write there */
    int fd = open(t->out_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 900); /* out of the program's way, as the preload keeps it */
        if (high >= 0) {
            close(fd);
            fd = high;
        }
        t->o.out_fd = fd;
        fd_file(fd, &t->out_dev, &t->out_ino);
        return;
    }
    t->out_failed = true;
    char msg[4300];
    int k = snprintf(msg, sizeof msg, "hcq trace: the trace's descriptor for %s was closed behind its back and the file "
                     "cannot be opened again: %s; nothing more is traced\n", t->out_path, strerror(errno));
    if (k > 0 && write(2, msg, (size_t)BASE_MIN((size_t)k, sizeof msg - 1)) < 0) { /* nowhere left to say it */ }
}

tracer *tracer_create(const tracer_opts *o)
{
    tracer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->o = *o;
    if (o->out_path && *o->out_path && strlen(o->out_path) < sizeof t->out_path) {
        snprintf(t->out_path, sizeof t->out_path, "%s", o->out_path);
        fd_file(o->out_fd, &t->out_dev, &t->out_ino);
    }
    t->o.out_path = NULL; /* the copy above is the tracer's */
    if (!t->o.t0) t->o.t0 = hcq_now_ns();
    if (!t->o.files) t->o.files = sys_libc();
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->out_lock, NULL);
    for (size_t i = 0; i < NFDS; i++) t->fds[i].fd = -1;
    if (o->streams) t->streams = trace_streams_create(t);
    return t;
}

void tracer_destroy(tracer *t)
{
    if (!t) return;
    trace_streams_destroy(t->streams);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->out_lock);
    free(t);
}

void tracer_set_out(tracer *t, int fd)
{
    pthread_mutex_lock(&t->out_lock);
    t->o.out_fd = fd;
    if (t->out_path[0]) fd_file(fd, &t->out_dev, &t->out_ino); /* a duplicate of the same file */
    t->out_failed = false;
    pthread_mutex_unlock(&t->out_lock);
}

int tracer_out_fd(const tracer *t) { return t->o.out_fd; }

void tracer_set_reconnect(tracer *t, int (*fn)(void *), void *arg)
{
    t->reconnect = fn;
    t->reconnect_arg = arg;
}

trace_streams *tracer_streams(tracer *t) { return t->streams; }
const hcq_sys *tracer_files(tracer *t) { return t->o.files; }

static fd_entry *slot(tracer *t, int fd, bool create)
{
    size_t h = ((unsigned)fd * 2654435761u) % NFDS;
    for (size_t i = 0; i < NFDS; i++, h = (h + 1) % NFDS) {
        if (t->fds[h].fd == fd) return &t->fds[h];
        if (t->fds[h].fd == -1) return create ? &t->fds[h] : NULL;
    }
    return NULL;
}

/* removes an entry; open addressing: the rest of its cluster is rehashed */
static void unslot(tracer *t, fd_entry *e)
{
    e->fd = -1;
    size_t h = (size_t)(e - t->fds);
    for (size_t i = (h + 1) % NFDS; t->fds[i].fd != -1; i = (i + 1) % NFDS) {
        fd_entry moved = t->fds[i];
        t->fds[i].fd = -1;
        *slot(t, moved.fd, true) = moved;
    }
}

bool tracer_knows_fd(tracer *t, int fd)
{
    pthread_mutex_lock(&t->lock);
    bool k = slot(t, fd, false) != NULL;
    pthread_mutex_unlock(&t->lock);
    return k;
}

static bool lookup(tracer *t, int fd, fd_entry *out)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    if (e) *out = *e;
    pthread_mutex_unlock(&t->lock);
    return e != NULL;
}

void tracer_fd_set_driver(tracer *t, int fd, const char *driver)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    if (e) snprintf(e->driver, sizeof e->driver, "%s", driver);
    pthread_mutex_unlock(&t->lock);
}

void tracer_fd_driver(tracer *t, int fd, char *out, size_t size)
{
    fd_entry e;
    snprintf(out, size, "%s", lookup(t, fd, &e) ? e.driver : "");
}

/* ** output */
static void begin_at(tracer *t, trace_line *l, const char *event, bool tid, uint64_t ns)
{
    l->len = 0;
    l->json = t->o.json;
    l->first_field = true;
    double s = (double)(int64_t)(ns - t->o.t0) / 1e9;
    int pid = getpid();
    int len;
    if (t->o.json) {
        len = tid ? snprintf(l->buf, sizeof l->buf, "{\"t\": %.6f, \"pid\": %d, \"tid\": %d, \"event\": \"%s\"", s, pid,
                             gettid(), event)
                  : snprintf(l->buf, sizeof l->buf, "{\"t\": %.6f, \"pid\": %d, \"tid\": null, \"event\": \"%s\"", s,
                             pid, event);
        l->first_field = false;
    } else {
        char who[32];
        if (tid) snprintf(who, sizeof who, "%d/%d", pid, gettid());
        else snprintf(who, sizeof who, "%d/-", pid);
        len = snprintf(l->buf, sizeof l->buf, "[%10.6f] %-13s %-6s", s, who, event);
    }
    l->len = len > 0 ? (size_t)len : 0;
}

static void begin_as(tracer *t, trace_line *l, const char *event, bool tid)
{
    begin_at(t, l, event, tid, hcq_now_ns());
}

static void begin(tracer *t, trace_line *l, const char *event) { begin_as(t, l, event, true); }

void tracer_begin_stream(tracer *t, trace_line *l, const char *event) { begin_as(t, l, event, false); }

static void preamble(tracer *t);

/* writes everything or gives up on the output (once, saying so); the
 * output lock is held */
static void out_write(tracer *t, const char *buf, size_t n)
{
    if (!t->out_failed) out_check(t);
    if (t->pre_pending) preamble(t);
    while (n && !t->out_failed) {
        ssize_t w = t->o.out_is_socket ? send(t->o.out_fd, buf, n, MSG_NOSIGNAL) : write(t->o.out_fd, buf, n);
        if (w > 0) {
            buf += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        int err = w < 0 ? errno : EIO;
        int fd = t->reconnect && err != ENOSPC ? t->reconnect(t->reconnect_arg) : -1;
        if (fd >= 0) {
            t->o.out_fd = fd;
            continue;
        }
        t->out_failed = true;
        char msg[256];
        int k = snprintf(msg, sizeof msg, "hcq trace: writing the trace failed: %s (%s); nothing more is traced\n",
                         base_errno_name(err), strerror(err));
        if (k > 0 && write(2, msg, (size_t)k) < 0) { /* nowhere left to say it */ }
    }
}

static void finish(trace_line *l)
{
    if (l->len > sizeof l->buf - 3) l->len = sizeof l->buf - 3;
    if (l->json) l->buf[l->len++] = '}';
    l->buf[l->len++] = '\n';
}

static void emit(tracer *t, trace_line *l)
{
    if (!t->o.lines) return;
    finish(l);
    pthread_mutex_lock(&t->out_lock);
    out_write(t, l->buf, l->len);
    pthread_mutex_unlock(&t->out_lock);
}

/* "\x1eC\tNAME\tERRNO\tNS\n": one call, for `hcq trace -c` to add up */
static void summary(tracer *t, const char *name, int ret, uint64_t ns)
{
    if (!t->o.summary) return;
    char rec[160];
    int k = snprintf(rec, sizeof rec, "\x1e" "C\t%s\t%d\t%llu\n", name, ret < 0 ? -ret : 0, (unsigned long long)ns);
    if (k <= 0 || (size_t)k >= sizeof rec) return;
    pthread_mutex_lock(&t->out_lock);
    out_write(t, rec, (size_t)k);
    pthread_mutex_unlock(&t->out_lock);
}

void tracer_emit_block(tracer *t, trace_line *l, const char *text)
{
    if (!t->o.lines) return;
    finish(l);
    pthread_mutex_lock(&t->out_lock);
    out_write(t, l->buf, l->len);
    /* each line of text its own line of output: "  | text", or a JSON
     * object carrying it */
    char prefix[64];
    double s = (double)(hcq_now_ns() - t->o.t0) / 1e9;
    int pid = getpid();
    if (!t->o.json) snprintf(prefix, sizeof prefix, "[%10.6f] %d/-", s, pid);
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        trace_line x;
        if (t->o.json) {
            x = (trace_line){.json = true};
            int k = snprintf(x.buf, sizeof x.buf, "{\"t\": %.6f, \"pid\": %d, \"tid\": null, \"event\": \"text\"", s,
                             pid);
            x.len = k > 0 ? (size_t)k : 0;
            char one[2048];
            snprintf(one, sizeof one, "%.*s", (int)BASE_MIN(n, sizeof one - 1), p);
            trace_str(&x, "text", one);
        } else {
            x = (trace_line){.json = false};
            int k = snprintf(x.buf, sizeof x.buf, "%-26s |   %.*s", prefix, (int)BASE_MIN(n, 3900), p);
            x.len = k > 0 ? BASE_MIN((size_t)k, sizeof x.buf - 3) : 0;
        }
        finish(&x);
        out_write(t, x.buf, x.len);
        p += n + (p[n] == '\n');
    }
    pthread_mutex_unlock(&t->out_lock);
}

void tracer_set_preamble(tracer *t, const char *event, const char *text)
{
    pthread_mutex_lock(&t->out_lock);
    snprintf(t->pre_event, sizeof t->pre_event, "%s", event);
    snprintf(t->pre_text, sizeof t->pre_text, "%s", text);
    t->pre_pending = true;
    t->pre_ns = hcq_now_ns();
    pthread_mutex_unlock(&t->out_lock);
}

static void preamble(tracer *t)
{
    t->pre_pending = false;
    if (!t->o.lines) return;
    trace_line l;
    begin_at(t, &l, t->pre_event, true, t->pre_ns); /* when it happened */
    if (t->o.json) trace_str(&l, "message", t->pre_text);
    else snprintf(l.buf + l.len, sizeof l.buf - l.len, " %s", t->pre_text), l.len = strlen(l.buf);
    finish(&l);
    out_write(t, l.buf, l.len);
}

void tracer_note(tracer *t, const char *event, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    trace_line l;
    begin(t, &l, event);
    if (t->o.json) trace_str(&l, "message", msg);
    else snprintf(l.buf + l.len, sizeof l.buf - l.len, " %s", msg), l.len = strlen(l.buf);
    emit(t, &l);
}

static void poll_streams(tracer *t)
{
    if (t->streams) trace_streams_poll(t->streams);
}

/* ** events */
void tracer_open(tracer *t, const char *path, int flags, int fd_or_err, uint64_t ns)
{
    const trace_decoder *d = trace_decoder_for(path);
    if (!d) return;
    poll_streams(t);
    pthread_mutex_lock(&t->lock);
    if (fd_or_err >= 0) {
        fd_entry *e = slot(t, fd_or_err, true);
        if (e) {
            *e = (fd_entry){.fd = fd_or_err, .gen = ++t->next_gen, .dec = d};
            snprintf(e->path, sizeof e->path, "%s", path);
        }
    }
    pthread_mutex_unlock(&t->lock);
    trace_line l;
    begin(t, &l, "open");
    trace_str(&l, "path", path);
    trace_open_flags(&l, "flags", flags);
    if (fd_or_err >= 0) trace_i64(&l, "fd", fd_or_err);
    else trace_errno(&l, fd_or_err);
    trace_u64(&l, "ns", ns);
    emit(t, &l);
    summary(t, "open", fd_or_err < 0 ? fd_or_err : 0, ns);
}

/* A close is two steps around the real one. Between the kernel freeing
 * the number and the tracer forgetting it, another thread's open can get
 * the same number and be registered; forgetting fd after the close would
 * then drop that open's entry, and its ioctls and close would go untraced
 * (200 threads opening and closing lost a dozen events a run). So the
 * close remembers which open it closes (gen) before, and forgets the
 * number after only if it still is that open. */
bool tracer_close_begin(tracer *t, int fd, tracer_closing *c)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    if (e) {
        c->fd = fd;
        c->gen = e->gen;
        snprintf(c->path, sizeof c->path, "%s", e->path);
    }
    pthread_mutex_unlock(&t->lock);
    /* closing a driver's fd can free what it owns (a client's channels
     * and their USERD): read the streams while they are there */
    if (e) poll_streams(t);
    return e != NULL;
}

int tracer_close_range_begin(tracer *t, unsigned first, unsigned last, tracer_closing *c, int max)
{
    int n = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < NFDS && n < max; i++) {
        const fd_entry *e = &t->fds[i];
        if (e->fd < 0 || (unsigned)e->fd < first || (unsigned)e->fd > last) continue;
        c[n].fd = e->fd;
        c[n].gen = e->gen;
        snprintf(c[n].path, sizeof c[n].path, "%s", e->path);
        n++;
    }
    pthread_mutex_unlock(&t->lock);
    if (n) poll_streams(t);
    return n;
}

void tracer_close_end(tracer *t, const tracer_closing *c, int ret)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, c->fd, false);
    if (e && e->gen == c->gen && ret == 0) unslot(t, e);
    pthread_mutex_unlock(&t->lock);
    poll_streams(t);
    trace_line l;
    begin(t, &l, "close");
    trace_str(&l, "file", c->path);
    trace_i64(&l, "fd", c->fd);
    if (ret < 0) trace_errno(&l, ret);
    emit(t, &l);
    summary(t, "close", ret, 0);
}

void tracer_dup(tracer *t, int oldfd, int newfd)
{
    if (oldfd == newfd || newfd < 0) return;
    pthread_mutex_lock(&t->lock);
    fd_entry *gone = slot(t, newfd, false); /* dup2 over a traced fd closes it */
    if (gone) unslot(t, gone);
    fd_entry *o = slot(t, oldfd, false);
    fd_entry copy = o ? *o : (fd_entry){.fd = -1};
    if (o) {
        fd_entry *n = slot(t, newfd, true);
        if (n) {
            *n = copy;
            n->fd = newfd;
            n->gen = ++t->next_gen;
        }
    }
    pthread_mutex_unlock(&t->lock);
    if (!o) return;
    trace_line l;
    begin(t, &l, "dup");
    trace_str(&l, "file", copy.path);
    trace_i64(&l, "fd", oldfd);
    trace_i64(&l, "newfd", newfd);
    emit(t, &l);
}

typedef struct ioctl_token {
    trace_line l;
    uint64_t start;
    size_t size;
    uint8_t arg[];
} ioctl_token;

#define ARG_MAX_COPY 16384u

static size_t arg_size_of(const trace_decoder *d, unsigned long req)
{
    size_t n = d->arg_size ? d->arg_size(req) : _IOC_SIZE(req);
    return BASE_MIN(n, ARG_MAX_COPY);
}

static void ioctl_head(tracer *t, trace_line *l, const fd_entry *e, unsigned long req, const char *name)
{
    begin(t, l, "ioctl");
    trace_str(l, "file", e->path);
    trace_i64(l, "fd", e->fd);
    if (name) {
        trace_str(l, "cmd", name);
    } else {
        /* unknown: the request's parts as numbers, the argument in hex */
        trace_hex(l, "request", (uint64_t)req);
        trace_hex(l, "nr", _IOC_NR(req));
        trace_u64(l, "size", _IOC_SIZE(req));
    }
}

void tracer_ioctl_before(tracer *t, int fd, unsigned long req, const void *arg, void **token)
{
    *token = NULL;
    fd_entry e;
    if (!lookup(t, fd, &e)) return;
    poll_streams(t);
    const char *name = e.dec->name ? e.dec->name(req) : NULL;
    size_t size = arg_size_of(name ? e.dec : &trace_raw_decoder, req);
    ioctl_token *k = malloc(sizeof *k + 2 * size); /* the inputs, then the outputs */
    if (!k) return;
    k->start = hcq_now_ns();
    k->size = size;
    ioctl_head(t, &k->l, &e, req, name);
    bool readable = !size || trace_read(k->arg, (uint64_t)(uintptr_t)arg, size);
    trace_call c = {.t = t, .fd = fd, .req = req, .arg = readable ? k->arg : NULL, .arg_size = size,
                    .arg_addr = (uint64_t)(uintptr_t)arg, .before = true};
    if (!readable) {
        trace_hex(&k->l, "arg", (uint64_t)(uintptr_t)arg);
        trace_str(&k->l, "arg_is", "unreadable");
    } else if (name && e.dec->fields) {
        e.dec->fields(&k->l, &c);
    } else {
        raw_fields(&k->l, &c);
    }
    *token = k;
}

void tracer_ioctl_after(tracer *t, int fd, unsigned long req, const void *arg, int ret, uint64_t ns, void *token)
{
    ioctl_token *k = token;
    if (!k) return;
    fd_entry e;
    const trace_decoder *d = lookup(t, fd, &e) ? e.dec : &trace_raw_decoder;
    const char *name = d->name ? d->name(req) : NULL;
    bool readable = !k->size || trace_read(k->arg + k->size, (uint64_t)(uintptr_t)arg, k->size);
    trace_call c = {.t = t, .fd = fd, .req = req, .arg = readable ? k->arg + k->size : NULL, .in = k->arg,
                    .arg_size = k->size, .arg_addr = (uint64_t)(uintptr_t)arg, .before = false, .ret = ret};
    if (readable) {
        if (name && d->fields) d->fields(&k->l, &c);
        else raw_fields(&k->l, &c);
    }
    if (ret < 0) trace_errno(&k->l, ret);
    trace_u64(&k->l, "ns", ns);
    emit(t, &k->l);
    char call[64];
    if (name) snprintf(call, sizeof call, "%s", name);
    else snprintf(call, sizeof call, "ioctl 0x%lx", req);
    summary(t, call, ret, ns);
    free(k);
}

void tracer_mmap(tracer *t, void *addr, size_t len, int prot, int flags, int fd, off_t off, void *ret, int err,
                 uint64_t ns)
{
    fd_entry e;
    if (fd < 0 || !lookup(t, fd, &e)) return;
    if (ret && t->streams)
        trace_streams_mmap(t->streams, fd, (uint64_t)(uintptr_t)ret, len, (uint64_t)off);
    poll_streams(t);
    trace_line l;
    begin(t, &l, "mmap");
    trace_str(&l, "file", e.path);
    trace_i64(&l, "fd", fd);
    trace_hex(&l, "addr", (uint64_t)(uintptr_t)addr);
    trace_hex(&l, "len", len);
    trace_prot(&l, "prot", prot);
    trace_map_flags(&l, "flags", flags);
    trace_hex(&l, "offset", (uint64_t)off);
    if (ret) trace_hex(&l, "mapped", (uint64_t)(uintptr_t)ret);
    else trace_errno(&l, err);
    trace_u64(&l, "ns", ns);
    emit(t, &l);
    summary(t, "mmap", ret ? 0 : -err, ns);
}

void tracer_munmap_before(tracer *t, void *addr, size_t len)
{
    (void)addr, (void)len;
    poll_streams(t); /* what the mapping holds, before it goes */
}

void tracer_munmap(tracer *t, void *addr, size_t len, int ret)
{
    /* munmaps carry no fd; most are the program's own memory, so they are
     * not printed, but streams forget what they read there */
    if (ret == 0 && t->streams) trace_streams_munmap(t->streams, (uint64_t)(uintptr_t)addr, len);
}

void tracer_probe(tracer *t, const char *call, const char *path, int mode, int ret, const void *stp)
{
    if (!path || !trace_decoder_for(path)) return;
    poll_streams(t);
    trace_line l;
    begin(t, &l, call);
    trace_str(&l, "path", path);
    if (!strncmp(call, "access", 6) || !strcmp(call, "faccessat")) trace_access_mode(&l, "mode", mode);
    if (ret < 0) {
        trace_errno(&l, ret);
    } else if (stp) {
        const struct stat *st = stp;
        char m[16];
        snprintf(m, sizeof m, "0%o", (unsigned)(st->st_mode & 07777));
        trace_str(&l, "type", S_ISCHR(st->st_mode) ? "char" : S_ISDIR(st->st_mode) ? "dir" : S_ISREG(st->st_mode) ? "file" : "other");
        trace_str(&l, "mode", m);
        if (S_ISCHR(st->st_mode)) {
            char dev[32];
            snprintf(dev, sizeof dev, "%u:%u", major(st->st_rdev), minor(st->st_rdev));
            trace_str(&l, "rdev", dev);
        }
    } else {
        trace_str(&l, "result", "ok");
    }
    emit(t, &l);
    summary(t, call, ret, 0);
}

/* ** fork */
/* the order every path takes them in: streams, fd table, output */
void tracer_fork_prepare(tracer *t)
{
    if (t->streams) trace_streams_fork_prepare(t->streams);
    pthread_mutex_lock(&t->lock);
    pthread_mutex_lock(&t->out_lock);
}

void tracer_fork_parent(tracer *t)
{
    pthread_mutex_unlock(&t->out_lock);
    pthread_mutex_unlock(&t->lock);
    if (t->streams) trace_streams_fork_parent(t->streams);
}

void tracer_fork_child(tracer *t)
{
    /* the child's copies of the locks may be held by threads it does not
     * have: make them anew */
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->out_lock, NULL);
    if (t->streams) trace_streams_fork_child(t->streams);
}

int tracer_adopt_inherited(tracer *t)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int dfd = dirfd(d), n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || fd < 0 || fd == dfd || fd == t->o.out_fd) continue;
        char link[64], path[256];
        snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        ssize_t len = readlink(link, path, sizeof path - 1);
        if (len <= 0) continue;
        path[len] = 0;
        const trace_decoder *dec = trace_decoder_for(path);
        if (!dec) continue;
        pthread_mutex_lock(&t->lock);
        fd_entry *e = slot(t, (int)fd, true);
        if (e) {
            *e = (fd_entry){.fd = (int)fd, .gen = ++t->next_gen, .dec = dec};
            snprintf(e->path, sizeof e->path, "%.63s", path);
        }
        pthread_mutex_unlock(&t->lock);
        trace_line l;
        begin(t, &l, "inherit");
        trace_str(&l, "path", path);
        trace_i64(&l, "fd", fd);
        emit(t, &l);
        n++;
    }
    closedir(d);
    return n;
}

/* ** device files nobody told us about */
int tracer_check_unseen(tracer *t)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int dfd = dirfd(d), warned = 0;
    for (struct dirent *de; (de = readdir(d));) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || fd < 0 || fd == dfd || fd >= NFDS) continue;
        char link[64], path[256];
        snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        if (n <= 0) continue;
        path[n] = 0;
        if (!trace_decoder_for(path) || tracer_knows_fd(t, (int)fd)) continue;
        uint64_t bit = 1ull << (fd % 64);
        if (t->warned[fd / 64] & bit) continue;
        t->warned[fd / 64] |= bit;
        tracer_note(t, "warning", "fd %ld is %s, opened without going through libc's open (a raw syscall, or a "
                    "statically linked part of the program): its calls are not traced", fd, path);
        warned++;
    }
    closedir(d);
    return warned;
}

void tracer_exit(tracer *t)
{
    if (!t->streams) return;
    trace_streams_stop(t->streams);
    trace_streams_poll(t->streams);
}

/* ** the tracing syscall table (HCQ_TRACE=1) */
typedef struct trace_ctx {
    hcq_sys table;
    const hcq_sys *inner;
    tracer *t;
} trace_ctx;

#define INNER(c) ((c)->inner)

static int t_open(void *ctx, const char *path, int flags)
{
    trace_ctx *c = ctx;
    uint64_t t0 = hcq_now_ns();
    int fd = INNER(c)->open(INNER(c)->ctx, path, flags);
    tracer_open(c->t, path, flags, fd, hcq_now_ns() - t0);
    return fd;
}

static int t_close(void *ctx, int fd)
{
    trace_ctx *c = ctx;
    tracer_closing cl;
    bool known = tracer_close_begin(c->t, fd, &cl);
    int r = INNER(c)->close(INNER(c)->ctx, fd);
    if (known) tracer_close_end(c->t, &cl, r);
    return r;
}

static int t_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    trace_ctx *c = ctx;
    void *tok;
    tracer_ioctl_before(c->t, fd, req, arg, &tok);
    uint64_t t0 = hcq_now_ns();
    int r = INNER(c)->ioctl(INNER(c)->ctx, fd, req, arg);
    tracer_ioctl_after(c->t, fd, req, arg, r, hcq_now_ns() - t0, tok);
    return r;
}

static void *t_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    trace_ctx *c = ctx;
    int e = 0;
    uint64_t t0 = hcq_now_ns();
    void *p = INNER(c)->mmap(INNER(c)->ctx, addr, len, prot, flags, fd, off, &e);
    tracer_mmap(c->t, addr, len, prot, flags, fd, off, p, e, hcq_now_ns() - t0);
    if (!p && err) *err = e;
    return p;
}

static int t_munmap(void *ctx, void *addr, size_t len)
{
    trace_ctx *c = ctx;
    tracer_munmap_before(c->t, addr, len);
    int r = INNER(c)->munmap(INNER(c)->ctx, addr, len);
    tracer_munmap(c->t, addr, len, r);
    return r;
}

static ssize_t t_read_file(void *ctx, const char *path, char *buf, size_t size)
{
    trace_ctx *c = ctx;
    return INNER(c)->read_file(INNER(c)->ctx, path, buf, size);
}

static int t_list_dir(void *ctx, const char *path, void (*fn)(void *, const char *), void *arg)
{
    trace_ctx *c = ctx;
    return INNER(c)->list_dir(INNER(c)->ctx, path, fn, arg);
}

static int t_exists(void *ctx, const char *path)
{
    trace_ctx *c = ctx;
    int r = INNER(c)->exists(INNER(c)->ctx, path);
    tracer_probe(c->t, "access", path, F_OK, r, NULL);
    return r;
}

static void t_doorbell(void *ctx, volatile void *addr)
{
    trace_ctx *c = ctx;
    if (INNER(c)->doorbell) INNER(c)->doorbell(INNER(c)->ctx, addr);
}

static void t_notify(void *ctx, uint64_t va)
{
    trace_ctx *c = ctx;
    if (INNER(c)->notify) INNER(c)->notify(INNER(c)->ctx, va);
}

static uint64_t t_progress_seq(void *ctx)
{
    trace_ctx *c = ctx;
    return INNER(c)->progress_seq(INNER(c)->ctx);
}

static void t_progress_wait(void *ctx, uint64_t seq, uint64_t max_ns)
{
    trace_ctx *c = ctx;
    INNER(c)->progress_wait(INNER(c)->ctx, seq, max_ns);
}

/* HCQ_TRACE_FILE, appended to; a file that cannot be opened is said at the
 * default log level, and the trace goes to stderr */
static int trace_file_fd(void)
{
    const char *path = getenv("HCQ_TRACE_FILE");
    if (!path || !*path) return 2;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    base_log(0, "HCQ_TRACE_FILE=%s: cannot open it: %s (%s); tracing to stderr", path, base_errno_name(errno),
             strerror(errno));
    return 2;
}

const hcq_sys *trace_sys(const hcq_sys *inner)
{
    /* one per process, for the life of the process: the active table must
     * stay valid while any thread may still be in a call through it */
    static trace_ctx *c;
    if (c && c->inner == inner) return &c->table;
    trace_ctx *n = calloc(1, sizeof *n);
    if (!n) return inner;
    n->inner = inner;
    const char *file = getenv("HCQ_TRACE_FILE");
    int out = trace_file_fd();
    tracer_opts o = {.out_fd = out,
                     .out_path = out != 2 ? file : NULL,
                     .json = base_env_get()->trace_json,
                     .lines = true,
                     .streams = base_env_get()->trace_streams,
                     .files = inner};
    n->t = tracer_create(&o);
    if (!n->t) {
        free(n);
        return inner;
    }
    static char name[64];
    snprintf(name, sizeof name, "trace(%s)", inner->name);
    n->table = (hcq_sys){.name = name, .open = t_open, .close = t_close, .ioctl = t_ioctl, .mmap = t_mmap,
                         .munmap = t_munmap, .read_file = t_read_file, .list_dir = t_list_dir, .exists = t_exists,
                         .doorbell = inner->doorbell ? t_doorbell : NULL, .notify = inner->notify ? t_notify : NULL,
                         .progress_seq = inner->progress_seq ? t_progress_seq : NULL,
                         .progress_wait = inner->progress_wait ? t_progress_wait : NULL, .ctx = n};
    c = n;
    return &c->table;
}
