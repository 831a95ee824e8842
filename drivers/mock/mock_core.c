/* The mock's syscall table, its file descriptors, configuration and ioctl
 * fault injection. The mock's own real syscalls (mmap of memfds, munmap)
 * go through the libc table of drivers/sys.c, like every other. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const mock_driver *const drivers[] = {&mock_nv_driver, &mock_amd_driver};

/* ** file descriptors. In the process's own mock (HCQ_MOCK=1) they are
 * numbers from MOCK_FD_BASE, far above real ones; preloaded
 * (libhcqmock.so) each is a real descriptor of a memfd named after the
 * emulated file, so the program may poll, dup, pass and close it as any.
 * A table keyed by number points at the open file, which counts the
 * descriptors (dups) and the calls in flight that use it: the vendor's
 * close runs when the last of them is done. */
#define MOCK_FD_BASE (1 << 29)
#define MOCK_FD_MAX 4096

typedef struct mock_file {
    const mock_driver *drv;
    void *priv;
    int refs; /* descriptors + calls in flight; under fd_lock */
    char path[64]; /* the emulated file's */
} mock_file;

/* which file a real descriptor is: its device and inode */
typedef struct fd_id {
    uint64_t dev, ino;
} fd_id;

typedef struct mock_fd {
    int fd; /* -1: empty */
    mock_file *file;
    fd_id id; /* preloaded: the memfd's, checked before each use */
} mock_fd;

static mock_fd fds[MOCK_FD_MAX];
static bool fds_init;
static uint64_t fake_used[MOCK_FD_MAX / 64]; /* MOCK_FD_BASE + k in use */
static bool real_fds;
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;

static mock_fd *fd_slot(int fd, bool create)
{
    if (!fds_init) {
        for (int i = 0; i < MOCK_FD_MAX; i++) fds[i].fd = -1;
        fds_init = true;
    }
    size_t h = ((unsigned)fd * 2654435761u) % MOCK_FD_MAX;
    for (size_t i = 0; i < MOCK_FD_MAX; i++, h = (h + 1) % MOCK_FD_MAX) {
        if (fds[h].fd == fd) return &fds[h];
        if (fds[h].fd == -1) return create ? &fds[h] : NULL;
    }
    return NULL;
}

static void fd_unslot(mock_fd *e)
{
    e->fd = -1;
    e->file = NULL;
    size_t h = (size_t)(e - fds);
    for (size_t i = (h + 1) % MOCK_FD_MAX; fds[i].fd != -1; i = (i + 1) % MOCK_FD_MAX) {
        mock_fd moved = fds[i];
        fds[i].fd = -1;
        *fd_slot(moved.fd, true) = moved;
    }
}

/* The identity of what fd is now (0, 0 when it is not open). A raw
 * statx: preloaded, the fstat family of libc is the mock's own. */
static fd_id fd_identity(int fd)
{
    struct statx sx;
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_INO, &sx)) return (fd_id){0, 0};
    return (fd_id){(uint64_t)sx.stx_dev_major << 32 | sx.stx_dev_minor, sx.stx_ino};
}

static int file_put(mock_file *f);

/* Preloaded, a program may close an emulated file's descriptor behind the
 * mock's back (close_range or closefrom through a raw syscall, a dup2 made
 * the same way) and get the number again for a file of its own: the entry
 * for fd then names another file, and the program's ioctls, mmaps and
 * closes on it must reach the kernel, not the mock. So the entry counts
 * only while fd is still the memfd it was made for; a stale one is dropped
 * (and its file released, as the kernel releases a file whose last
 * descriptor is closed). true: fd is the mock's. */
static bool fd_current(int fd)
{
    if (!real_fds) return true;
    pthread_mutex_lock(&fd_lock);
    mock_fd *e = fd_slot(fd, false);
    fd_id want = e ? e->id : (fd_id){0, 0};
    pthread_mutex_unlock(&fd_lock);
    if (!e) return false;
    fd_id now = fd_identity(fd);
    if (now.dev == want.dev && now.ino == want.ino) return true;
    pthread_mutex_lock(&fd_lock);
    e = fd_slot(fd, false);
    mock_file *f = NULL;
    if (e && e->id.dev == want.dev && e->id.ino == want.ino) {
        f = e->file;
        fd_unslot(e);
    }
    pthread_mutex_unlock(&fd_lock);
    if (f) {
        BASE_LOG(1, "mock: fd %d (%s) was closed behind the mock's back; it is another file now", fd, f->path);
        file_put(f);
    }
    return false;
}

/* the file behind fd with a reference for the caller, or NULL */
static mock_file *file_get(int fd)
{
    if (!fd_current(fd)) return NULL;
    pthread_mutex_lock(&fd_lock);
    mock_fd *e = fd_slot(fd, false);
    mock_file *f = e ? e->file : NULL;
    if (f) f->refs++;
    pthread_mutex_unlock(&fd_lock);
    return f;
}

static int file_put(mock_file *f)
{
    pthread_mutex_lock(&fd_lock);
    bool last = --f->refs == 0;
    pthread_mutex_unlock(&fd_lock);
    if (!last) return 0;
    mock_gate_enter(); /* also from the preload's dup2 and close_range paths */
    int rc = f->drv->close ? f->drv->close(f->priv) : 0;
    mock_gate_leave();
    free(f);
    return rc;
}

void *mock_fd_priv(int fd, const mock_driver *drv)
{
    pthread_mutex_lock(&fd_lock);
    mock_fd *e = fd_slot(fd, false);
    void *p = e && e->file->drv == drv ? e->file->priv : NULL;
    pthread_mutex_unlock(&fd_lock);
    return p;
}

void mock_use_real_fds(void) { real_fds = true; }

bool mock_fd_is_mock(int fd)
{
    pthread_mutex_lock(&fd_lock);
    bool is = fd_slot(fd, false) != NULL;
    pthread_mutex_unlock(&fd_lock);
    return is && fd_current(fd);
}

bool mock_fd_path(int fd, char *path, size_t size)
{
    mock_file *f = file_get(fd);
    if (!f) return false;
    snprintf(path, size, "%s", f->path);
    file_put(f);
    return true;
}

void mock_fd_forget_range(unsigned first, unsigned last)
{
    for (;;) {
        mock_file *f = NULL;
        pthread_mutex_lock(&fd_lock);
        for (int i = 0; fds_init && i < MOCK_FD_MAX && !f; i++)
            if (fds[i].fd >= 0 && (unsigned)fds[i].fd >= first && (unsigned)fds[i].fd <= last) {
                f = fds[i].file;
                fd_unslot(&fds[i]);
            }
        pthread_mutex_unlock(&fd_lock);
        if (!f) return;
        file_put(f);
    }
}

void mock_fd_forget(int fd)
{
    pthread_mutex_lock(&fd_lock);
    mock_fd *e = fd_slot(fd, false);
    mock_file *f = e ? e->file : NULL;
    if (e) fd_unslot(e);
    pthread_mutex_unlock(&fd_lock);
    if (f) file_put(f);
}

bool mock_fd_dup(int oldfd, int newfd)
{
    if (oldfd == newfd || !fd_current(oldfd)) return false;
    pthread_mutex_lock(&fd_lock);
    mock_fd *o = fd_slot(oldfd, false);
    mock_file *f = o ? o->file : NULL;
    fd_id id = o ? o->id : (fd_id){0, 0};
    mock_fd *n = f ? fd_slot(newfd, true) : NULL;
    if (n && n->fd == -1) {
        *n = (mock_fd){newfd, f, id}; /* a duplicate is the same memfd */
        f->refs++;
    }
    pthread_mutex_unlock(&fd_lock);
    return n != NULL;
}

/* a descriptor for a new open file: a fake number, or a memfd named after
 * the path; -errno on failure */
static int fd_new(const mock_driver *drv, void *priv, const char *path, int flags)
{
    mock_file *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    *f = (mock_file){drv, priv, 1, ""};
    snprintf(f->path, sizeof f->path, "%s", path);
    int fd = -EMFILE;
    fd_id id = {0, 0};
    if (real_fds) {
        char name[96];
        snprintf(name, sizeof name, "hcq-mock:%s", path);
        fd = memfd_create(name, flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
        if (fd < 0) fd = -errno;
        else id = fd_identity(fd);
    }
    pthread_mutex_lock(&fd_lock);
    if (!real_fds) {
        for (int k = 0; k < MOCK_FD_MAX; k++)
            if (!(fake_used[k / 64] & (1ull << (k % 64)))) {
                fake_used[k / 64] |= 1ull << (k % 64);
                fd = MOCK_FD_BASE + k;
                break;
            }
    }
    mock_fd *e = fd >= 0 ? fd_slot(fd, true) : NULL;
    if (e) *e = (mock_fd){fd, f, id};
    pthread_mutex_unlock(&fd_lock);
    if (!e) {
        if (fd >= 0 && real_fds) sys_libc()->close(NULL, fd);
        if (fd >= 0) fd = -EMFILE;
        drv->close(priv);
        free(f);
    }
    return fd;
}

/* the fd table's lock as new in a forked child (mock_fork.c) */
static void fds_atfork_child(void) { pthread_mutex_init(&fd_lock, NULL); }

/* ** configuration *//* ** configuration */
static mock_config cfg;
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static bool up;

/* Every value is checked: a typo is an error naming the key, the value and
 * what is accepted, never a default that lets a fault test pass without the
 * fault (issue: HCQ_MOCK_CONFIG=vram=1T once meant 1 byte). */
static bool parse_u64(const char *v, uint64_t *out)
{
    if (!*v || *v == '-' || *v == '+' || *v == ' ') return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    if (errno || *end) return false;
    *out = n;
    return true;
}

static hcq_status bad_value(const char *key, const char *v, const char *want)
{
    return base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: %s=`%s`: %s", key, v, want);
}

static hcq_status parse_size(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!*v || *v == '-' || *v == '+') return bad_value("vram", v, "write BYTES[K|M|G|T], e.g. vram=1G");
    unsigned long long n = strtoull(v, &end, 0);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B"))) end += strlen(end);
    if (errno || *end || end == v) return bad_value("vram", v, "write BYTES[K|M|G|T], e.g. vram=1G");
    if (!n || n > (UINT64_MAX >> shift)) return bad_value("vram", v, "the size must be above 0 and fit 64 bits");
    if ((n << shift) < (1ull << 20))
        return bad_value("vram", v, "a mock GPU needs at least 1M of memory (did you mean a suffix: K, M, G, T?)");
    *out = n << shift;
    return HCQ_OK;
}

static hcq_status parse_gpus(const char *key, const char *v, char *model, size_t size, uint32_t *count)
{
    /* MODEL or MODELxN; the x of "gfx" is part of the model */
    const char *x = strlen(v) > 3 ? strrchr(v + 3, 'x') : NULL;
    bool counted = x && x[1] >= '0' && x[1] <= '9';
    size_t n = counted ? (size_t)(x - v) : strlen(v);
    if (!n || n >= size) return bad_value(key, v, "write MODEL or MODELxN");
    memcpy(model, v, n);
    model[n] = 0;
    uint64_t c = 1;
    if (counted && (!parse_u64(x + 1, &c) || c > 8)) return bad_value(key, v, "the count after x is 0 to 8");
    *count = (uint32_t)c;
    return HCQ_OK;
}

static const struct {
    const char *name;
    int v;
} errnos[] = {{"ENOMEM", ENOMEM}, {"EINVAL", EINVAL}, {"EIO", EIO},     {"EFAULT", EFAULT}, {"EBUSY", EBUSY},
              {"ENODEV", ENODEV}, {"EPERM", EPERM},   {"EAGAIN", EAGAIN}, {"ENOSPC", ENOSPC}, {"EACCES", EACCES},
              {"ENOENT", ENOENT}, {"ENXIO", ENXIO},   {"ENOTTY", ENOTTY}};

static bool parse_errno(const char *s, int *out)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(errnos); i++)
        if (!strcmp(s, errnos[i].name)) return *out = errnos[i].v, true;
    uint64_t n;
    if (!parse_u64(s, &n) || !n || n > 4095) return false;
    *out = (int)n;
    return true;
}

static const char *errno_names(void)
{
    static char list[160];
    size_t off = 0;
    for (size_t i = 0; i < BASE_ARRAY_LEN(errnos) && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", errnos[i].name);
    return list;
}

static hcq_status parse_fail_ioctl(const char *v, mock_config *c)
{
    char n[32];
    size_t len = strcspn(v, ":");
    snprintf(n, sizeof n, "%.*s", (int)BASE_MIN(len, sizeof n - 1), v);
    if (len >= sizeof n || !parse_u64(n, &c->fail_ioctl_at) || !c->fail_ioctl_at)
        return bad_value("fail_ioctl", v, "write N[:E]: N >= 1 counts ioctls from the start");
    c->fail_errno = EIO;
    const char *e = v[len] == ':' ? v + len + 1 : NULL;
    if (!e) return HCQ_OK;
    if (!strncmp(e, "0x", 2) || !strncmp(e, "0X", 2)) {
        uint64_t st;
        if (!parse_u64(e, &st) || !st || st > UINT32_MAX)
            return bad_value("fail_ioctl", v, "a driver status is 0x1 to 0xffffffff");
        c->fail_status = (uint32_t)st;
        return HCQ_OK;
    }
    if (!parse_errno(e, &c->fail_errno)) {
        char want[256];
        snprintf(want, sizeof want, "E is an errno name (%s), a number, or a 0x.. driver status", errno_names());
        return bad_value("fail_ioctl", v, want);
    }
    return HCQ_OK;
}

static hcq_status parse_open_fail(const char *v, mock_config *c)
{
    const char *colon = strrchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    if (!len || v[0] != '/' || len >= sizeof c->open_fail_path)
        return bad_value("open_fail", v, "write PATH[:E], e.g. open_fail=/dev/nvidiactl:EACCES");
    memcpy(c->open_fail_path, v, len);
    c->open_fail_path[len] = 0;
    c->open_fail_errno = EACCES;
    if (colon && !parse_errno(colon + 1, &c->open_fail_errno)) {
        char want[256];
        snprintf(want, sizeof want, "E is an errno name (%s) or a number", errno_names());
        return bad_value("open_fail", v, want);
    }
    return HCQ_OK;
}

/* hang=ENGINE names an engine the configured GPUs will have: <vendor><N>.<kind> */
static hcq_status check_engine(const char *v, const mock_config *c)
{
    const char *known[][3] = {{"nv", "compute", "copy"}, {"amd", "compute", "sdma"}};
    uint32_t counts[2] = {c->nv_count, c->amd_count};
    for (size_t k = 0; k < 2; k++) {
        size_t n = strlen(known[k][0]);
        if (strncmp(v, known[k][0], n) || v[n] < '0' || v[n] > '9') continue;
        char *dot;
        unsigned long i = strtoul(v + n, &dot, 10);
        if (*dot == '.' && (!strcmp(dot + 1, known[k][1]) || !strcmp(dot + 1, known[k][2])) && i < counts[k])
            return HCQ_OK;
    }
    char want[256];
    snprintf(want, sizeof want, "no such engine with this configuration (%u NV, %u AMD GPUs); engines are "
             "nvN.compute, nvN.copy, amdN.compute, amdN.sdma", c->nv_count, c->amd_count);
    return bad_value("hang", v, want);
}

/* The refusable paths (mock.h). AMD: the first-run choices of issue 22
 * (drivers/amd/amd.h amd_paths), each pair one encoding and its
 * alternative. */
const mock_refusal mock_refusals[] = {
    {"wait-reg-mem64", "amd", "gfx11: a wait as one WAIT_REG_MEM64 on a compute queue"},
    {"wait-reg-mem32", "amd", "gfx11: a wait as 32-bit WAIT_REG_MEMs on memory"},
    {"hdp-all-bits", "amd", "the HDP flush handshake asking every client bit, waited for with >="},
    {"hdp-one-bit", "amd", "the HDP flush handshake asking one MEC1 client bit, waited for with EQUAL"},
    {"priv-1", "amd", "gfx11: a dispatch with COMPUTE_PGM_RSRC1.PRIV 1"},
    {"priv-0", "amd", "gfx11: a dispatch with COMPUTE_PGM_RSRC1.PRIV 0"},
    {"dispatch-aql", "amd", "gfx9 AQL queues: an AQL kernel-dispatch packet"},
    {"dispatch-pm4", "amd", "gfx9 AQL queues: DISPATCH_DIRECT inside a PM4 indirect buffer"},
    /* NV: drivers/nv/nv_selftest.c's pairs (mock_nv_gpu.c hangs on them) */
    {"acq-strict-geq", "nv", "Hopper channels: a SEM_EXECUTE ACQ_STRICT_GEQ acquire"},
    {"acq-circ-geq", "nv", "Hopper channels: a SEM_EXECUTE ACQ_CIRC_GEQ acquire"},
    {"qmd-v4", "nv", "Hopper: a launch of a QMD V04"},
    {"qmd-v3", "nv", "Hopper: a launch of a QMD V03"},
    {"local-lazy", "nv", "a launch without local memory"},
    {"local-min", "nv", "a launch with only the ABI's 0x240-byte local-memory reserve"},
    {"ce-release64", "nv", "a copy-engine semaphore release with a 64-bit payload"},
    {"ce-release32", "nv", "a one-word copy-engine semaphore release"},
};
const unsigned mock_refusal_count = sizeof mock_refusals / sizeof mock_refusals[0];
_Static_assert(sizeof mock_refusals / sizeof mock_refusals[0] <= 64, "mock_config.refuse holds 64 bits");

static hcq_status parse_refuse(const char *v, mock_config *c)
{
    char names[512] = "";
    for (unsigned i = 0; i < mock_refusal_count; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", mock_refusals[i].name);
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, "+");
        unsigned i = 0;
        while (i < mock_refusal_count && (strlen(mock_refusals[i].name) != n || strncmp(p, mock_refusals[i].name, n)))
            i++;
        if (i == mock_refusal_count) {
            char want[640];
            snprintf(want, sizeof want, "refusable paths are %s (join several with +)", names);
            return bad_value("refuse", v, want);
        }
        c->refuse |= 1ull << i;
        p += n + (p[n] == '+');
    }
    if (!*v) return bad_value("refuse", v, "name a path");
    return HCQ_OK;
}

bool mock_refused(const char *name)
{
    for (unsigned i = 0; i < mock_refusal_count; i++)
        if (!strcmp(mock_refusals[i].name, name)) return cfg.refuse >> i & 1;
    return false;
}

static hcq_status parse(const char *spec, mock_config *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->nv_model, "H100");
    c->nv_count = 1;
    strcpy(c->nv_driver, "580.95.05");
    strcpy(c->amd_model, "gfx1100");
    c->amd_count = 1;
    char *copy = strdup(spec ? spec : "");
    if (!copy) return base_err(HCQ_ENOMEM, "mock: out of memory");
    hcq_status s = HCQ_OK;
    char hang[sizeof c->hang_engine] = ""; /* longer values are refused below */
    for (char *save = NULL, *kv = strtok_r(copy, ",", &save); kv && !s; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v) {
            s = base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: `%s` is not key=value", kv);
            break;
        }
        *v++ = 0;
        uint64_t n;
        if (!strcmp(kv, "nv")) {
            s = parse_gpus(kv, v, c->nv_model, sizeof c->nv_model, &c->nv_count);
        } else if (!strcmp(kv, "amd")) {
            s = parse_gpus(kv, v, c->amd_model, sizeof c->amd_model, &c->amd_count);
        } else if (!strcmp(kv, "nv_driver")) {
            if (!*v || strspn(v, "0123456789.") != strlen(v) || strlen(v) >= sizeof c->nv_driver)
                s = bad_value(kv, v, "write the version as the driver does, e.g. 580.95.05");
            else snprintf(c->nv_driver, sizeof c->nv_driver, "%s", v);
        } else if (!strcmp(kv, "vram")) {
            s = parse_size(v, &c->vram_bytes);
        } else if (!strcmp(kv, "ring_shift")) {
            if (!parse_u64(v, &n) || n < 5 || n > 22) s = bad_value(kv, v, "rings of 2^N entries: N is 5 to 22");
            else c->ring_shift = (uint32_t)n;
        } else if (!strcmp(kv, "kfd_minor")) {
            if (!parse_u64(v, &n) || n < 1 || n > 99) s = bad_value(kv, v, "the KFD ABI minor version, 1 to 99");
            else c->kfd_minor = (uint32_t)n;
        } else if (!strcmp(kv, "watchdog_ms")) {
            if (!parse_u64(v, &n) || n > 86400000) s = bad_value(kv, v, "milliseconds, 0 (none) to 86400000");
            else c->watchdog_ms = (uint32_t)n, c->watchdog_set = true;
        } else if (!strcmp(kv, "nv_peer")) {
            c->nv_peer = !strcmp(v, "pcie") ? MOCK_PEER_PCIE : !strcmp(v, "nvlink") ? MOCK_PEER_NVLINK
                       : !strcmp(v, "none") ? MOCK_PEER_NONE : -1;
            if (c->nv_peer < 0) s = bad_value(kv, v, "use pcie, nvlink or none");
        } else if (!strcmp(kv, "amd_peer")) {
            c->amd_peer = !strcmp(v, "pcie") ? MOCK_PEER_PCIE : !strcmp(v, "xgmi") ? MOCK_PEER_XGMI
                        : !strcmp(v, "none") ? MOCK_PEER_NONE : -1;
            if (c->amd_peer < 0) s = bad_value(kv, v, "use pcie, xgmi or none");
        } else if (!strcmp(kv, "nv_gpget")) {
            c->nv_gpget = !strcmp(v, "idle") ? MOCK_GPGET_IDLE : !strcmp(v, "eager") ? MOCK_GPGET_EAGER
                        : !strcmp(v, "never") ? MOCK_GPGET_NEVER : -1;
            if (c->nv_gpget < 0) s = bad_value(kv, v, "use idle, eager or never");
        } else if (!strcmp(kv, "mmu_fault")) {
            if (!parse_u64(v, &c->mmu_fault_va) || !c->mmu_fault_va)
                s = bad_value(kv, v, "write the GPU virtual address, e.g. mmu_fault=0x7f0000001000");
        } else if (!strcmp(kv, "hang")) {
            if (strlen(v) >= sizeof c->hang_engine) s = bad_value(kv, v, "no engine has so long a name");
            else snprintf(hang, sizeof hang, "%s", v);
        } else if (!strcmp(kv, "fail_ioctl")) {
            s = parse_fail_ioctl(v, c);
        } else if (!strcmp(kv, "open_fail")) {
            s = parse_open_fail(v, c);
        } else if (!strcmp(kv, "refuse")) {
            s = parse_refuse(v, c);
        } else {
            s = base_err(HCQ_EINVAL, "HCQ_MOCK_CONFIG: unknown key `%s` (known: nv, nv_driver, amd, vram, "
                         "fail_ioctl, open_fail, mmu_fault, hang, ring_shift, nv_gpget, nv_peer, amd_peer, kfd_minor, refuse, "
                         "watchdog_ms)", kv);
        }
    }
    free(copy);
    if (s) return s;
    if (hang[0]) {
        if ((s = check_engine(hang, c))) return s;
        snprintf(c->hang_engine, sizeof c->hang_engine, "%s", hang);
    }
    const base_env *env = base_env_get();
    if (env->mock_dump) snprintf(c->dump_dir, sizeof c->dump_dir, "%s", env->mock_dump);
    return HCQ_OK;
}

/* HCQ_MOCK_SCHED, a variable of its own: an error in it is blamed on it */
static hcq_status parse_sched(mock_config *c)
{
    const base_env *env = base_env_get();
    if (env->mock_sched && !strncmp(env->mock_sched, "random:", 7)) {
        c->sched_random = true;
        char *end;
        errno = 0;
        c->sched_seed = strtoull(env->mock_sched + 7, &end, 0);
        uint64_t us = 200;
        if (errno || end == env->mock_sched + 7 || (*end && *end != ':') || (*end == ':' && (!parse_u64(end + 1, &us) || us > 1000000)))
            return base_err(HCQ_EINVAL, "HCQ_MOCK_SCHED: `%s`: use random:SEED[:MAX_US] (MAX_US up to 1000000)",
                            env->mock_sched);
        c->sched_max_us = (uint32_t)us;
    } else if (env->mock_sched) {
        return base_err(HCQ_EINVAL, "HCQ_MOCK_SCHED: `%s`: use random:SEED[:MAX_US]", env->mock_sched);
    }
    return HCQ_OK;
}

const mock_config *mock_cfg(void) { return &cfg; }

static void teardown(void)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++)
        if (drivers[i]->fini) drivers[i]->fini();
    mock_gpus_free();
    up = false;
}

/* the variable a configuration that did not parse came from */
static const char *bad_var = "HCQ_MOCK_CONFIG";

static hcq_status setup(const char *spec)
{
    mock_config c;
    hcq_status s = parse(spec, &c);
    bad_var = "HCQ_MOCK_CONFIG";
    if (!s && (s = parse_sched(&c))) bad_var = "HCQ_MOCK_SCHED";
    if (s) return s;
    cfg = c;
    mock_injection_reset();
    if (cfg.fail_ioctl_at) mock_fail_ioctl(cfg.fail_ioctl_at, cfg.fail_errno, cfg.fail_status);
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++) {
        hcq_error_clear();
        int rc = drivers[i]->init ? drivers[i]->init(&cfg) : 0;
        if (rc < 0) {
            teardown();
            /* a vendor mock that refuses its configuration says why */
            if (rc == -EINVAL && hcq_error_status() == HCQ_EINVAL) return HCQ_EINVAL;
            return base_err(HCQ_EINVAL, "mock: the %s mock did not start: %s", drivers[i]->name, strerror(-rc));
        }
    }
    up = true;
    return HCQ_OK;
}

hcq_status mock_configure(const char *spec)
{
    pthread_mutex_lock(&cfg_lock);
    pthread_mutex_lock(&fd_lock);
    int open_fds = 0;
    for (int i = 0; i < MOCK_FD_MAX; i++) open_fds += fds_init && fds[i].fd != -1;
    pthread_mutex_unlock(&fd_lock);
    hcq_status s = HCQ_OK;
    if (open_fds) {
        s = base_err(HCQ_ESTATE, "mock_configure: %d mock device files are still open; close the devices first",
                     open_fds);
    } else {
        if (up) teardown();
        s = setup(spec ? spec : base_env_get()->mock_config);
    }
    pthread_mutex_unlock(&cfg_lock);
    return s;
}

/* A configuration from the environment that does not parse stops the
 * process: running on without the GPUs or faults it asks for would let a CI
 * job that injects faults pass without injecting anything. */
static void ensure_up(void)
{
    pthread_mutex_lock(&cfg_lock);
    if (!up && setup(base_env_get()->mock_config)) {
        const char *v = !strcmp(bad_var, "HCQ_MOCK_SCHED") ? base_env_get()->mock_sched : base_env_get()->mock_config;
        fprintf(stderr, "hcq: %s\nhcq: stopping: the mock GPU's configuration is wrong (%s=%s)\n", hcq_error_message(),
                bad_var, v ? v : "");
        exit(2);
    }
    up = true;
    /* At exit the GPUs' worker threads are joined. They ran host twins,
     * whose thread-locals are dynamic TLS the sanitizers track per thread;
     * left alive after the twins were unloaded, they made LeakSanitizer's
     * exit scan read a stale range and die ("Tracer caught signal 11") in
     * every ASan program that ran kernels here. Registered after the
     * sanitizer's own handler, this one runs before it. */
    static bool at_exit_set;
    if (!at_exit_set) at_exit_set = atexit(mock_pools_stop) == 0;
    mock_fork_setup();
    pthread_mutex_unlock(&cfg_lock);
}

/* ** ioctl fault injection */
static atomic_uint_fast64_t ioctl_count;
static struct {
    uint64_t at; /* absolute ioctl number to fail; 0 none */
    int err;
    uint32_t status;
} inject;
static pthread_mutex_t inject_lock = PTHREAD_MUTEX_INITIALIZER;

void mock_core_atfork_child(void)
{
    fds_atfork_child();
    pthread_mutex_init(&cfg_lock, NULL);
    pthread_mutex_init(&inject_lock, NULL);
}

void mock_injection_reset(void)
{
    pthread_mutex_lock(&inject_lock);
    inject.at = 0;
    pthread_mutex_unlock(&inject_lock);
}

void mock_fail_ioctl(uint64_t n, int err, uint32_t status)
{
    pthread_mutex_lock(&inject_lock);
    inject.at = n ? atomic_load(&ioctl_count) + n : 0;
    inject.err = err ? err : EIO;
    inject.status = status;
    pthread_mutex_unlock(&inject_lock);
}

uint64_t mock_ioctl_count(void) { return atomic_load(&ioctl_count); }

bool mock_ioctl_inject(int *err, uint32_t *status)
{
    uint64_t n = atomic_fetch_add(&ioctl_count, 1) + 1;
    pthread_mutex_lock(&inject_lock);
    bool hit = inject.at && n == inject.at;
    if (hit) {
        *err = inject.status ? 0 : inject.err;
        *status = inject.status;
        inject.at = 0;
        BASE_LOG(1, "mock: failing ioctl #%llu as injected (%s %d / status 0x%x)", (unsigned long long)n,
                 *status ? "status" : "errno", *err, *status);
    }
    pthread_mutex_unlock(&inject_lock);
    return hit;
}

/* ** the syscall table */
static const hcq_sys *libc(void) { return sys_libc(); }

/* Paths the mock owns even when no emulated GPU answers there: the real
 * device files and KFD's sysfs are hidden, so a GPU is emulated or absent,
 * never half real. */
static bool hidden(const char *path)
{
    return !strncmp(path, "/dev/nvidia", 11) || !strcmp(path, "/dev/kfd") || !strncmp(path, "/dev/dri/", 9) ||
           !strncmp(path, "/sys/devices/virtual/kfd", 24) || !strncmp(path, "/sys/class/kfd", 14);
}

static int m_open_in(void *ctx, const char *path, int flags)
{
    (void)ctx;
    ensure_up();
    if (cfg.open_fail_path[0] && !strcmp(path, cfg.open_fail_path)) return -cfg.open_fail_errno;
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++) {
        if (!drivers[i]->open) continue;
        void *priv = NULL;
        int rc = drivers[i]->open(path, flags, &priv);
        if (rc < 0) return rc;
        if (rc == 0) continue;
        return fd_new(drivers[i], priv, path, flags);
    }
    if (hidden(path)) return -ENOENT;
    return libc()->open(libc()->ctx, path, flags);
}

/* a descriptor that is no mock file: a real one passes to libc, a fake
 * number nobody has is EBADF */
static bool passes(int fd) { return real_fds || fd < MOCK_FD_BASE; }

static int m_close_in(void *ctx, int fd)
{
    (void)ctx;
    if (real_fds && !fd_current(fd)) return libc()->close(libc()->ctx, fd);
    pthread_mutex_lock(&fd_lock);
    mock_fd *e = fd_slot(fd, false);
    mock_file *f = e ? e->file : NULL;
    if (e) {
        fd_unslot(e);
        if (!real_fds) fake_used[(fd - MOCK_FD_BASE) / 64] &= ~(1ull << ((fd - MOCK_FD_BASE) % 64));
    }
    pthread_mutex_unlock(&fd_lock);
    if (!f) return passes(fd) ? libc()->close(libc()->ctx, fd) : -EBADF;
    int rc = file_put(f);
    if (real_fds) libc()->close(libc()->ctx, fd); /* the memfd standing for it */
    return rc;
}

static int m_ioctl_in(void *ctx, int fd, unsigned long req, void *arg)
{
    (void)ctx;
    mock_file *f = file_get(fd);
    if (!f) return passes(fd) ? libc()->ioctl(libc()->ctx, fd, req, arg) : -EBADF;
    /* on a copy of the argument, as the kernel's drivers work (mock_uaccess.c) */
    int rc = f->drv->ioctl ? mock_ioctl_copied(f->drv->ioctl, f->priv, f->path, req, arg) : -ENOTTY;
    file_put(f);
    return rc;
}

static void *m_mmap_in(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    (void)ctx;
    /* anonymous memory over a range a GPU still maps (a runtime keeping the
     * addresses of memory the driver would not free): on hardware the CPU
     * mapping changes and the GPU's does not; here both are one, so the
     * GPU's pages stay and the CPU is taken to have what it asked for */
    if (fd < 0 && (flags & MAP_FIXED) && addr && mock_va_cpu_overlay((uint64_t)(uintptr_t)addr, len)) {
        BASE_LOG(1, "mock: mmap over [%p, +0x%zx), which a GPU still maps: the GPU keeps its pages", addr, len);
        return addr;
    }
    mock_file *f = fd >= 0 ? file_get(fd) : NULL;
    if (!f) {
        if (fd < 0 || passes(fd)) return libc()->mmap(libc()->ctx, addr, len, prot, flags, fd, off, err);
        if (err) *err = EBADF;
        return NULL;
    }
    void *p = NULL;
    if (!f->drv->mmap) {
        if (err) *err = ENODEV;
    } else {
        p = f->drv->mmap(f->priv, addr, len, prot, flags, off, err);
    }
    file_put(f);
    return p;
}

static int m_munmap_in(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    /* a CPU mapping of a mock object: drop the CPU's share; the memory
     * stays while a GPU still maps it. Once nobody does, the address is
     * free again, as after munmap of any mapping (the range was kept
     * reserved only while a GPU used it). */
    bool released;
    int rc = mock_va_unmap_released((uint64_t)(uintptr_t)addr, len, MOCK_MAP_CPU, &released);
    if (rc == 0 && released) return libc()->munmap(libc()->ctx, addr, len);
    if (rc != -ENOENT) return rc;
    return libc()->munmap(libc()->ctx, addr, len);
}

static int mock_path_read_in(const char *path, char *buf, size_t size, ssize_t *rc)
{
    ensure_up();
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++)
        if (drivers[i]->read_file && drivers[i]->read_file(path, buf, size, rc)) return 1;
    if (!hidden(path)) return 0;
    *rc = -ENOENT;
    return 1;
}

int mock_path_read(const char *path, char *buf, size_t size, ssize_t *rc)
{
    mock_gate_enter();
    int r = mock_path_read_in(path, buf, size, rc);
    mock_gate_leave();
    return r;
}


static int mock_path_list_in(const char *path, void (*fn)(void *, const char *), void *arg, int *rc)
{
    ensure_up();
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++)
        if (drivers[i]->list_dir && drivers[i]->list_dir(path, fn, arg, rc)) return 1;
    if (!hidden(path)) return 0;
    *rc = -ENOENT;
    return 1;
}

int mock_path_list(const char *path, void (*fn)(void *, const char *), void *arg, int *rc)
{
    mock_gate_enter();
    int r = mock_path_list_in(path, fn, arg, rc);
    mock_gate_leave();
    return r;
}


static int mock_path_exists_in(const char *path, int *rc)
{
    ensure_up();
    for (size_t i = 0; i < BASE_ARRAY_LEN(drivers); i++)
        if (drivers[i]->exists && drivers[i]->exists(path)) return *rc = 0, 1;
    if (!hidden(path)) return 0;
    *rc = -ENOENT;
    return 1;
}

int mock_path_exists(const char *path, int *rc)
{
    mock_gate_enter();
    int r = mock_path_exists_in(path, rc);
    mock_gate_leave();
    return r;
}


static ssize_t m_read_file_in(void *ctx, const char *path, char *buf, size_t size)
{
    (void)ctx;
    ssize_t rc;
    return mock_path_read(path, buf, size, &rc) ? rc : libc()->read_file(libc()->ctx, path, buf, size);
}

static int m_list_dir_in(void *ctx, const char *path, void (*fn)(void *, const char *), void *arg)
{
    (void)ctx;
    int rc;
    return mock_path_list(path, fn, arg, &rc) ? rc : libc()->list_dir(libc()->ctx, path, fn, arg);
}

static int m_exists_in(void *ctx, const char *path)
{
    (void)ctx;
    int rc;
    return mock_path_exists(path, &rc) ? rc : libc()->exists(libc()->ctx, path);
}

static int m_open(void *ctx, const char *path, int flags)
{
    mock_gate_enter();
    int r = m_open_in(ctx, path, flags);
    mock_gate_leave();
    return r;
}

static int m_close(void *ctx, int fd)
{
    mock_gate_enter();
    int r = m_close_in(ctx, fd);
    mock_gate_leave();
    return r;
}

static int m_ioctl(void *ctx, int fd, unsigned long req, void *arg)
{
    mock_gate_enter();
    int r = m_ioctl_in(ctx, fd, req, arg);
    mock_gate_leave();
    return r;
}

static void *m_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off, int *err)
{
    mock_gate_enter();
    void * r = m_mmap_in(ctx, addr, len, prot, flags, fd, off, err);
    mock_gate_leave();
    return r;
}

static int m_munmap(void *ctx, void *addr, size_t len)
{
    mock_gate_enter();
    int r = m_munmap_in(ctx, addr, len);
    mock_gate_leave();
    return r;
}

static ssize_t m_read_file(void *ctx, const char *path, char *buf, size_t size)
{
    mock_gate_enter();
    ssize_t r = m_read_file_in(ctx, path, buf, size);
    mock_gate_leave();
    return r;
}

static int m_list_dir(void *ctx, const char *path, void (*fn)(void *, const char *), void *arg)
{
    mock_gate_enter();
    int r = m_list_dir_in(ctx, path, fn, arg);
    mock_gate_leave();
    return r;
}

static int m_exists(void *ctx, const char *path)
{
    mock_gate_enter();
    int r = m_exists_in(ctx, path);
    mock_gate_leave();
    return r;
}

static const hcq_sys mock_table = {
    .name = "mock",
    .open = m_open,
    .close = m_close,
    .ioctl = m_ioctl,
    .mmap = m_mmap,
    .munmap = m_munmap,
    .read_file = m_read_file,
    .list_dir = m_list_dir,
    .exists = m_exists,
    .doorbell = mock_sys_doorbell,
    .notify = mock_sys_notify,
    .progress_seq = mock_sys_progress_seq,
    .progress_wait = mock_sys_progress_wait,
};

const hcq_sys *mock_sys(void) { return &mock_table; }
