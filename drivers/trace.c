#include "drivers/trace.h"

#include "base/base.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

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
        else if ((unsigned char)*s < 0x20) put(l, "\\u%04x", (unsigned char)*s);
        else put(l, "%c", *s);
    }
    put(l, "\"");
}

void trace_str(trace_line *l, const char *k, const char *v)
{
    key(l, k);
    if (l->json) json_escaped(l, v);
    else put(l, "%s", v);
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

/* ** decoders by path */
static const char *raw_name(unsigned long req, const void *arg)
{
    (void)req;
    (void)arg;
    return NULL;
}

static void raw_fields(trace_line *l, unsigned long req, const void *arg, bool before, int ret)
{
    (void)ret;
    size_t size = _IOC_SIZE(req);
    if (!arg || !size || size > 4096) return;
    /* the argument of a _IOC_READ-only request is the driver's to fill */
    if (before && _IOC_DIR(req) == _IOC_READ) return;
    if (!before && !(_IOC_DIR(req) & _IOC_READ)) return;
    trace_bytes(l, before ? "in" : "out", arg, size);
}

static bool match_never(const char *path)
{
    (void)path;
    return false;
}

const trace_decoder trace_raw_decoder = {"raw", match_never, raw_name, raw_fields};

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

/* ** the tracer: an fd table and serialized output */
typedef struct fd_entry {
    int fd; /* -1 empty */
    const trace_decoder *dec;
    char path[64];
} fd_entry;

struct tracer {
    FILE *out;
    bool json;
    uint64_t t0;
    pthread_mutex_t lock;
    fd_entry fds[1024];
};

tracer *tracer_create(FILE *out, bool json)
{
    tracer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->out = out ? out : stderr;
    t->json = json;
    t->t0 = hcq_now_ns();
    pthread_mutex_init(&t->lock, NULL);
    for (size_t i = 0; i < BASE_ARRAY_LEN(t->fds); i++) t->fds[i].fd = -1;
    return t;
}

void tracer_destroy(tracer *t)
{
    if (!t) return;
    fflush(t->out);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static fd_entry *slot(tracer *t, int fd, bool create)
{
    size_t n = BASE_ARRAY_LEN(t->fds), h = ((unsigned)fd * 2654435761u) % n;
    for (size_t i = 0; i < n; i++, h = (h + 1) % n) {
        if (t->fds[h].fd == fd) return &t->fds[h];
        if (t->fds[h].fd == -1) return create ? &t->fds[h] : NULL;
    }
    return NULL;
}

bool tracer_knows_fd(tracer *t, int fd)
{
    pthread_mutex_lock(&t->lock);
    bool k = slot(t, fd, false) != NULL;
    pthread_mutex_unlock(&t->lock);
    return k;
}

static void begin(tracer *t, trace_line *l, const char *event, uint64_t now)
{
    l->len = 0;
    l->json = t->json;
    l->first_field = true;
    double s = (double)(now - t->t0) / 1e9;
    if (t->json) {
        put(l, "{\"t\": %.6f, ", s);
        l->first_field = false;
        put(l, "\"event\": \"%s\"", event);
    } else {
        put(l, "[%10.6f] %-6s", s, event);
    }
}

static void emit(tracer *t, trace_line *l)
{
    if (t->json) put(l, "}");
    fprintf(t->out, "%s\n", l->buf);
    fflush(t->out);
}

void tracer_open(tracer *t, const char *path, int flags, int fd_or_err, uint64_t ns)
{
    const trace_decoder *d = trace_decoder_for(path);
    if (!d) return;
    pthread_mutex_lock(&t->lock);
    if (fd_or_err >= 0) {
        fd_entry *e = slot(t, fd_or_err, true);
        if (e) {
            e->fd = fd_or_err;
            e->dec = d;
            snprintf(e->path, sizeof e->path, "%s", path);
        }
    }
    trace_line l;
    begin(t, &l, "open", hcq_now_ns());
    trace_str(&l, "path", path);
    trace_hex(&l, "flags", (uint64_t)(unsigned)flags);
    if (fd_or_err >= 0) trace_u64(&l, "fd", (uint64_t)fd_or_err);
    else trace_str(&l, "error", strerror(-fd_or_err));
    trace_u64(&l, "ns", ns);
    emit(t, &l);
    pthread_mutex_unlock(&t->lock);
}

void tracer_close(tracer *t, int fd, int ret)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    if (e) {
        trace_line l;
        begin(t, &l, "close", hcq_now_ns());
        trace_str(&l, "file", e->path);
        trace_u64(&l, "fd", (uint64_t)fd);
        if (ret < 0) trace_str(&l, "error", strerror(-ret));
        emit(t, &l);
        /* keep the table probing: a tombstone would be needed for deletion
         * with open addressing, so rehash the cluster instead */
        e->fd = -1;
        size_t n = BASE_ARRAY_LEN(t->fds), h = (size_t)(e - t->fds);
        for (size_t i = (h + 1) % n; t->fds[i].fd != -1; i = (i + 1) % n) {
            fd_entry moved = t->fds[i];
            t->fds[i].fd = -1;
            fd_entry *dst = slot(t, moved.fd, true);
            *dst = moved;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

typedef struct ioctl_token {
    trace_line l;
    uint64_t start;
} ioctl_token;

void tracer_ioctl_before(tracer *t, int fd, unsigned long req, const void *arg, void **token)
{
    *token = NULL;
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    fd_entry copy = e ? *e : (fd_entry){.fd = -1};
    pthread_mutex_unlock(&t->lock);
    if (!e) return;
    ioctl_token *k = malloc(sizeof *k);
    if (!k) return;
    k->start = hcq_now_ns();
    begin(t, &k->l, "ioctl", k->start);
    trace_str(&k->l, "file", copy.path);
    trace_u64(&k->l, "fd", (uint64_t)fd);
    const char *name = copy.dec->name ? copy.dec->name(req, arg) : NULL;
    if (name) {
        trace_str(&k->l, "cmd", name);
    } else {
        /* unknown: the request's parts as numbers, the argument in hex */
        trace_hex(&k->l, "request", (uint64_t)req);
        trace_hex(&k->l, "nr", _IOC_NR(req));
        trace_u64(&k->l, "size", _IOC_SIZE(req));
    }
    if (copy.dec->fields && name) copy.dec->fields(&k->l, req, arg, true, 0);
    else raw_fields(&k->l, req, arg, true, 0);
    *token = k;
}

void tracer_ioctl_after(tracer *t, int fd, unsigned long req, const void *arg, int ret, uint64_t ns, void *token)
{
    ioctl_token *k = token;
    if (!k) return;
    pthread_mutex_lock(&t->lock);
    fd_entry *e = slot(t, fd, false);
    const trace_decoder *d = e ? e->dec : &trace_raw_decoder;
    pthread_mutex_unlock(&t->lock);
    const char *name = d->name ? d->name(req, arg) : NULL;
    if (d->fields && name) d->fields(&k->l, req, arg, false, ret);
    else raw_fields(&k->l, req, arg, false, ret);
    if (ret < 0) trace_str(&k->l, "error", strerror(-ret));
    trace_u64(&k->l, "ns", ns);
    pthread_mutex_lock(&t->lock);
    emit(t, &k->l);
    pthread_mutex_unlock(&t->lock);
    free(k);
}

void tracer_mmap(tracer *t, void *addr, size_t len, int prot, int flags, int fd, off_t off, void *ret, int err,
                 uint64_t ns)
{
    pthread_mutex_lock(&t->lock);
    fd_entry *e = fd >= 0 ? slot(t, fd, false) : NULL;
    if (e) {
        trace_line l;
        begin(t, &l, "mmap", hcq_now_ns());
        trace_str(&l, "file", e->path);
        trace_u64(&l, "fd", (uint64_t)fd);
        trace_hex(&l, "addr", (uint64_t)(uintptr_t)addr);
        trace_hex(&l, "len", len);
        trace_hex(&l, "prot", (uint64_t)(unsigned)prot);
        trace_hex(&l, "flags", (uint64_t)(unsigned)flags);
        trace_hex(&l, "offset", (uint64_t)off);
        if (ret) trace_hex(&l, "mapped", (uint64_t)(uintptr_t)ret);
        else trace_str(&l, "error", strerror(err));
        trace_u64(&l, "ns", ns);
        emit(t, &l);
    }
    pthread_mutex_unlock(&t->lock);
}

void tracer_munmap(tracer *t, void *addr, size_t len, int ret)
{
    (void)t;
    (void)addr;
    (void)len;
    (void)ret;
    /* munmaps carry no fd: which mapping they end is not known without a
     * table of mappings, and most are the program's own memory; skipped */
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
    int r = INNER(c)->close(INNER(c)->ctx, fd);
    tracer_close(c->t, fd, r);
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
    return INNER(c)->munmap(INNER(c)->ctx, addr, len);
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
    return INNER(c)->exists(INNER(c)->ctx, path);
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

const hcq_sys *trace_sys(const hcq_sys *inner)
{
    /* one per process, for the life of the process: the active table must
     * stay valid while any thread may still be in a call through it */
    static trace_ctx *c;
    if (c && c->inner == inner) return &c->table;
    trace_ctx *n = calloc(1, sizeof *n);
    if (!n) return inner;
    const char *path = getenv("HCQ_TRACE_FILE");
    FILE *out = path ? fopen(path, "a") : NULL;
    n->inner = inner;
    n->t = tracer_create(out, getenv("HCQ_TRACE_JSON") != NULL);
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
