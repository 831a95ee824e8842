/* Stream capture (`hcq trace --streams`): the command streams a program
 * submits, read from its own memory and decoded, between its ioctls.
 *
 * What a channel or queue is, and where its memory lies in the process, is
 * learnt from the driver calls the tracer decodes:
 *   NV: RM_ALLOC of a channel class gives the GPFIFO ring's GPU address,
 *       its entry count and USERD (memory handle + offset); the object
 *       allocated on the channel gives the engine class (the decoders'
 *       dialect); GPU addresses become CPU addresses through UVM's
 *       MAP_EXTERNAL_ALLOCATION (GPU VA -> memory handle) and RM_MAP_MEMORY
 *       + the mmap of its fd, or an OS-descriptor allocation (memory handle
 *       -> CPU address); unresolved, a GPU address is read where it is, as
 *       CUDA's unified addressing and hcq both map it.
 *   AMD: kfd CREATE_QUEUE gives the ring, its size, the write pointer's
 *       address and the queue type; KFD gives CPU and GPU one address.
 *
 * When a submission happens is not a call the tracer sees: the program
 * writes GP_PUT (NV, in USERD) or the write pointer (AMD) and rings a
 * doorbell with a plain store. The tracer reads those pointers at every
 * driver call it traces and from a poller thread in between (every
 * poll_us, backing off to 5 ms while nothing moves), and prints what lies
 * between the last position seen and the new one: each GPFIFO entry with
 * its pushbuffer segment and the QMDs its SEND_PCAS_A methods point at;
 * the PM4, SDMA or AQL packets of AMD rings, with the indirect buffers
 * they call. docs/architecture.md says why polling and not a trapped
 * doorbell page. Every read goes through trace_read, so memory the
 * program unmapped is skipped, never faulted on. */
#include "drivers/trace.h"

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/decode.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/nv/nv_hw.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SEGMENT_DW (1u << 16) /* a GPFIFO entry or ring region printed at most */

typedef struct nv_obj { /* every RM object: its class and parent */
    uint32_t client, handle, parent, cls;
} nv_obj;

typedef struct nv_cpu_map { /* [offset, offset + length) of memory handle at cpu */
    uint32_t client, hmem;
    uint64_t offset, length, cpu;
} nv_cpu_map;

typedef struct nv_pending_map { /* RM_MAP_MEMORY whose mmap has not come yet */
    int fd;
    uint32_t client, hmem;
    uint64_t offset, length;
} nv_pending_map;

typedef struct nv_gpu_map { /* GPU [va, va + length) is memory handle at offset */
    uint32_t client, hmem;
    uint64_t va, length, offset;
} nv_gpu_map;

typedef struct nv_channel {
    uint32_t client, handle, chan_cls, engine_cls;
    uint64_t gpfifo_va;
    uint32_t entries;
    uint32_t userd_hmem;
    uint64_t userd_offset;
    uint32_t last_put;
    uint64_t seen; /* entries printed */
} nv_channel;

typedef struct amd_q {
    uint32_t id, type, gpu_id, arch;
    uint64_t ring, ring_size, wptr_addr, rptr_addr;
    uint64_t last; /* write pointer seen, in the queue's unit */
} amd_q;

#define VEC(T)                                                                                                         \
    struct {                                                                                                           \
        T *v;                                                                                                          \
        size_t n, cap;                                                                                                 \
    }

struct trace_streams {
    tracer *t;
    pthread_mutex_t lock;
    VEC(nv_obj) objs;
    VEC(nv_cpu_map) cpu_maps;
    VEC(nv_pending_map) pending;
    VEC(nv_gpu_map) gpu_maps;
    VEC(nv_channel) chans;
    VEC(amd_q) queues;
    uint32_t poll_us;
    pthread_t thread;
    bool thread_running;
    atomic_int stop;
    atomic_uint_fast64_t activity; /* bumped when a poll found something */
};

#define VEC_PUSH(vec, item)                                                                                            \
    do {                                                                                                               \
        if ((vec).n == (vec).cap) {                                                                                    \
            size_t c_ = (vec).cap ? (vec).cap * 2 : 16;                                                                \
            void *p_ = realloc((vec).v, c_ * sizeof *(vec).v);                                                         \
            if (!p_) break;                                                                                            \
            (vec).v = p_;                                                                                              \
            (vec).cap = c_;                                                                                            \
        }                                                                                                              \
        (vec).v[(vec).n++] = (item);                                                                                   \
    } while (0)
#define VEC_DEL(vec, i) ((vec).v[i] = (vec).v[--(vec).n])

trace_streams *trace_streams_create(tracer *t)
{
    trace_streams *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->t = t;
    pthread_mutex_init(&s->lock, NULL);
    const char *p = getenv("HCQ_TRACE_POLL_US"); /* the preload library has no base_env */
    s->poll_us = p && atoi(p) > 0 ? (uint32_t)atoi(p) : 200;
    return s;
}

void trace_streams_stop(trace_streams *s)
{
    if (!s || !s->thread_running) return;
    atomic_store(&s->stop, 1);
    /* the poller sleeps at most 5 ms; a program exiting from a signal
     * handler or with the lock held must not hang on it */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    if (pthread_timedjoin_np(s->thread, NULL, &ts) == 0) s->thread_running = false;
}

void trace_streams_destroy(trace_streams *s)
{
    if (!s) return;
    trace_streams_stop(s);
    if (s->thread_running) return; /* still inside: leak rather than free under it */
    free(s->objs.v), free(s->cpu_maps.v), free(s->pending.v), free(s->gpu_maps.v), free(s->chans.v), free(s->queues.v);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void trace_streams_fork_prepare(trace_streams *s) { pthread_mutex_lock(&s->lock); }
void trace_streams_fork_parent(trace_streams *s) { pthread_mutex_unlock(&s->lock); }

void trace_streams_fork_child(trace_streams *s)
{
    /* the parent's channels and queues are not the child's to report, and
     * its poller is gone */
    pthread_mutex_init(&s->lock, NULL);
    s->chans.n = 0;
    s->queues.n = 0;
    s->thread_running = false;
    atomic_store(&s->stop, 0);
}

static void *poller(void *arg);

/* the poller starts with the first channel or queue (lock held) */
static void start_poller(trace_streams *s)
{
    if (s->thread_running || atomic_load(&s->stop)) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are for its own threads */
    s->thread_running = pthread_create(&s->thread, NULL, poller, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ** NV bookkeeping */
/* classes by family (compiler/nv_chips.c) */
static bool is_channel_class(uint32_t c)
{
    for (size_t i = 0; i < nv_family_count; i++)
        for (int k = 0; k < 4 && nv_families[i].channel_classes[k]; k++)
            if (nv_families[i].channel_classes[k] == c) return true;
    return false;
}

static bool is_compute_class(uint32_t c)
{
    const nv_family *f = nv_family_for_class(c);
    return f && f->compute_cls == c;
}

static bool is_engine_class(uint32_t c)
{
    const nv_family *f = nv_family_for_class(c);
    return f && (f->compute_cls == c || f->copy_cls == c);
}

void trace_streams_nv_alloc(trace_streams *s, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                            const void *params, size_t size)
{
    pthread_mutex_lock(&s->lock);
    VEC_PUSH(s->objs, ((nv_obj){client, handle, parent, cls}));
    if (is_channel_class(cls) && params && size >= sizeof(nv_channel_alloc)) {
        const nv_channel_alloc *a = params;
        nv_channel c = {.client = client, .handle = handle, .chan_cls = cls, .gpfifo_va = a->gpFifoOffset,
                        .entries = a->gpFifoEntries, .userd_hmem = a->hUserdMemory[0],
                        .userd_offset = a->userdOffset[0]};
        if (c.entries) {
            VEC_PUSH(s->chans, c);
            start_poller(s);
        }
    } else if (is_engine_class(cls)) {
        for (size_t i = 0; i < s->chans.n; i++)
            if (s->chans.v[i].client == client && s->chans.v[i].handle == parent && !s->chans.v[i].engine_cls)
                s->chans.v[i].engine_cls = cls;
    }
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_nv_free(trace_streams *s, uint32_t client, uint32_t handle)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = s->chans.n; i-- > 0;)
        if (s->chans.v[i].client == client && s->chans.v[i].handle == handle) VEC_DEL(s->chans, i);
    for (size_t i = s->objs.n; i-- > 0;)
        if (s->objs.v[i].client == client && s->objs.v[i].handle == handle) VEC_DEL(s->objs, i);
    for (size_t i = s->cpu_maps.n; i-- > 0;)
        if (s->cpu_maps.v[i].client == client && s->cpu_maps.v[i].hmem == handle) VEC_DEL(s->cpu_maps, i);
    for (size_t i = s->gpu_maps.n; i-- > 0;)
        if (s->gpu_maps.v[i].client == client && s->gpu_maps.v[i].hmem == handle) VEC_DEL(s->gpu_maps, i);
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_nv_os_memory(trace_streams *s, uint32_t client, uint32_t hmem, uint64_t cpu, uint64_t size)
{
    pthread_mutex_lock(&s->lock);
    VEC_PUSH(s->cpu_maps, ((nv_cpu_map){client, hmem, 0, size, cpu}));
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_nv_map_memory(trace_streams *s, uint32_t client, uint32_t hmem, uint64_t offset, uint64_t length,
                                 int fd)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = s->pending.n; i-- > 0;)
        if (s->pending.v[i].fd == fd) VEC_DEL(s->pending, i);
    VEC_PUSH(s->pending, ((nv_pending_map){fd, client, hmem, offset, length}));
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_nv_uvm_map(trace_streams *s, uint32_t client, uint32_t hmem, uint64_t va, uint64_t length,
                              uint64_t offset)
{
    pthread_mutex_lock(&s->lock);
    VEC_PUSH(s->gpu_maps, ((nv_gpu_map){client, hmem, va, length, offset}));
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_mmap(trace_streams *s, int fd, uint64_t addr, uint64_t len, uint64_t offset)
{
    (void)offset;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->pending.n; i++) {
        nv_pending_map p = s->pending.v[i];
        if (p.fd != fd) continue;
        VEC_DEL(s->pending, i);
        VEC_PUSH(s->cpu_maps, ((nv_cpu_map){p.client, p.hmem, p.offset, BASE_MIN(p.length ? p.length : len, len), addr}));
        break;
    }
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_munmap(trace_streams *s, uint64_t addr, uint64_t len)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = s->cpu_maps.n; i-- > 0;) {
        nv_cpu_map *m = &s->cpu_maps.v[i];
        if (m->cpu < addr + len && addr < m->cpu + m->length) VEC_DEL(s->cpu_maps, i);
    }
    pthread_mutex_unlock(&s->lock);
}

/* the CPU address of memory handle + offset, if the process mapped it */
static bool hmem_cpu(trace_streams *s, uint32_t client, uint32_t hmem, uint64_t off, uint64_t *cpu)
{
    for (size_t i = 0; i < s->cpu_maps.n; i++) {
        const nv_cpu_map *m = &s->cpu_maps.v[i];
        if (m->client == client && m->hmem == hmem && off >= m->offset && off - m->offset < m->length) {
            *cpu = m->cpu + (off - m->offset);
            return true;
        }
    }
    return false;
}

/* the CPU address of a GPU address: through UVM's mapping and the memory's
 * CPU mapping; else the same address, when the process can read it there */
static bool gpu_cpu(trace_streams *s, uint32_t client, uint64_t va, uint64_t *cpu)
{
    for (size_t i = 0; i < s->gpu_maps.n; i++) {
        const nv_gpu_map *g = &s->gpu_maps.v[i];
        if (g->client == client && va >= g->va && va - g->va < g->length &&
            hmem_cpu(s, client, g->hmem, g->offset + (va - g->va), cpu))
            return true;
    }
    uint32_t probe;
    if (trace_read(&probe, va, sizeof probe)) {
        *cpu = va;
        return true;
    }
    return false;
}

/* ** output */
typedef struct memtext {
    char *buf;
    size_t size;
    FILE *f;
} memtext;

static FILE *text_open(memtext *m)
{
    m->buf = NULL;
    m->size = 0;
    m->f = open_memstream(&m->buf, &m->size);
    return m->f;
}

static const char *text_close(memtext *m)
{
    if (m->f) fclose(m->f);
    m->f = NULL;
    return m->buf ? m->buf : "";
}

/* decodes dw with the named decoder into the block after l's line */
static void emit_decoded(trace_streams *s, trace_line *l, const char *format, uint32_t arch, uint64_t va,
                         const uint32_t *dw, uint32_t ndw)
{
    memtext m;
    const drv_decoder *d = drv_decoder_find(format);
    if (text_open(&m)) {
        if (d) d->decode(arch, va, dw, ndw, m.f);
        else fprintf(m.f, "(no decoder for %s)", format);
    }
    tracer_emit_block(s->t, l, text_close(&m));
    free(m.buf);
}

static uint32_t *read_words(uint64_t cpu, uint32_t ndw)
{
    uint32_t *w = malloc((size_t)(ndw ? ndw : 1) * 4);
    if (w && !trace_read(w, cpu, (size_t)ndw * 4)) {
        free(w);
        return NULL;
    }
    return w;
}

/* the QMDs a compute pushbuffer segment launches (SEND_PCAS_A: QMD VA >> 8) */
static void nv_qmds(trace_streams *s, const nv_channel *c, const uint32_t *dw, uint32_t ndw)
{
    if (!is_compute_class(c->engine_cls)) return;
    /* as many words as the family's largest QMD; the decoder reads the
     * version from the QMD itself */
    int ver = nv_family_for_class(c->engine_cls)->qmd_documented & (1u << 4) ? NV_QMD_V04 : NV_QMD_V03;
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], op = nv_mthd_sec_op(h), count = nv_mthd_count(h), m = nv_mthd_addr(h);
        if (op == NV_SEC_OP_IMMD) {
            i++;
            continue;
        }
        if ((op != NV_SEC_OP_INC && op != NV_SEC_OP_NON_INC && op != NV_SEC_OP_ONE_INC) || count > ndw - i - 1) return;
        for (uint32_t k = 0; k < count; k++) {
            uint32_t mk = op == NV_SEC_OP_INC ? m + 4 * k : op == NV_SEC_OP_NON_INC ? m : m + (k ? 4 : 0);
            if (mk != NV_COMPUTE_SEND_PCAS_A || nv_mthd_subch(h) == NV_SUBCH_COPY) continue;
            uint64_t qva = (uint64_t)dw[i + 1 + k] << 8, cpu;
            uint32_t qdw = nv_qmd_bytes(ver) / 4;
            trace_line l;
            tracer_begin_stream(s->t, &l, "qmd");
            trace_hex(&l, "channel", c->handle);
            trace_hex(&l, "va", qva);
            uint32_t *q = gpu_cpu(s, c->client, qva, &cpu) ? read_words(cpu, qdw) : NULL;
            if (!q) {
                trace_str(&l, "memory", "unreadable");
                tracer_emit_block(s->t, &l, "");
                continue;
            }
            emit_decoded(s, &l, "nv-qmd", c->engine_cls, qva, q, qdw);
            free(q);
        }
        i += 1 + count;
    }
}

/* new GPFIFO entries of one channel */
static int nv_poll_channel(trace_streams *s, nv_channel *c)
{
    uint64_t userd, ring;
    if (!hmem_cpu(s, c->client, c->userd_hmem, c->userd_offset, &userd)) return 0;
    uint32_t put;
    if (!trace_read(&put, userd + NV_USERD_GP_PUT, 4) || put == c->last_put || put >= c->entries) return 0;
    if (!gpu_cpu(s, c->client, c->gpfifo_va, &ring)) return 0;
    const char *engine = c->engine_cls ? nv_class_name(c->engine_cls) : NULL;
    int found = 0;
    for (uint32_t e = c->last_put; e != put; e = (e + 1) % c->entries, found++) {
        uint64_t entry;
        trace_line l;
        tracer_begin_stream(s->t, &l, "gpfifo");
        trace_hex(&l, "channel", c->handle);
        if (engine) trace_str(&l, "engine", engine);
        trace_u64(&l, "entry", e);
        trace_u64(&l, "gp_put", put);
        if (!trace_read(&entry, ring + 8ull * e, 8)) {
            trace_str(&l, "memory", "unreadable");
            tracer_emit_block(s->t, &l, "");
            continue;
        }
        uint64_t va = nv_gp_entry_va(entry), cpu;
        uint32_t n = nv_gp_entry_len(entry), shown = BASE_MIN(n, MAX_SEGMENT_DW);
        trace_hex(&l, "va", va);
        trace_u64(&l, "dwords", n);
        uint32_t *dw = gpu_cpu(s, c->client, va, &cpu) ? read_words(cpu, shown) : NULL;
        if (!dw) {
            trace_str(&l, "memory", "unreadable");
            tracer_emit_block(s->t, &l, "");
            continue;
        }
        if (shown < n) trace_u64(&l, "printed", shown);
        emit_decoded(s, &l, "nv-gpfifo", c->engine_cls, va, dw, shown);
        nv_qmds(s, c, dw, shown);
        free(dw);
    }
    c->last_put = put;
    c->seen += (uint64_t)found;
    return found;
}

/* ** AMD */
/* the gfx version (110000) of a KFD gpu_id, from the topology */
typedef struct topo_walk {
    const hcq_sys *files;
    uint32_t gpu_id, arch;
} topo_walk;

#define KFD_NODES "/sys/devices/virtual/kfd/kfd/topology/nodes"

static void topo_node(void *arg, const char *name)
{
    topo_walk *w = arg;
    char path[256], buf[4096];
    snprintf(path, sizeof path, KFD_NODES "/%s/gpu_id", name);
    if (w->arch || w->files->read_file(w->files->ctx, path, buf, sizeof buf) <= 0) return;
    if ((uint32_t)strtoul(buf, NULL, 10) != w->gpu_id) return;
    snprintf(path, sizeof path, KFD_NODES "/%s/properties", name);
    if (w->files->read_file(w->files->ctx, path, buf, sizeof buf) <= 0) return;
    const char *p = strstr(buf, "gfx_target_version ");
    if (p) w->arch = (uint32_t)strtoul(p + 19, NULL, 10);
}

static uint32_t gfx_of(trace_streams *s, uint32_t gpu_id)
{
    topo_walk w = {tracer_files(s->t), gpu_id, 0};
    w.files->list_dir(w.files->ctx, KFD_NODES, topo_node, &w);
    return w.arch;
}

void trace_streams_amd_queue(trace_streams *s, uint32_t id, uint32_t type, uint32_t gpu_id, uint64_t ring,
                             uint64_t ring_size, uint64_t wptr, uint64_t rptr)
{
    uint32_t arch = gfx_of(s, gpu_id); /* outside the lock: a file read */
    pthread_mutex_lock(&s->lock);
    VEC_PUSH(s->queues, ((amd_q){.id = id, .type = type, .gpu_id = gpu_id, .arch = arch, .ring = ring,
                                 .ring_size = ring_size, .wptr_addr = wptr, .rptr_addr = rptr}));
    start_poller(s);
    pthread_mutex_unlock(&s->lock);
}

void trace_streams_amd_queue_gone(trace_streams *s, uint32_t id)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = s->queues.n; i-- > 0;)
        if (s->queues.v[i].id == id) VEC_DEL(s->queues, i);
    pthread_mutex_unlock(&s->lock);
}

static bool is_sdma(uint32_t type) { return type == KFD_QUEUE_SDMA || type == 3 || type == 4; }

/* the indirect buffers a PM4 stream calls, each decoded after it */
static void amd_ibs(trace_streams *s, const amd_q *q, const uint32_t *dw, uint32_t ndw)
{
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], n = PM4_HDR_BODY(h) + 1;
        if (PM4_HDR_TYPE(h) != 3 || n > ndw - i) return;
        if (PM4_HDR_OP(h) == PM4_INDIRECT_BUFFER && n == 4) {
            uint64_t va = ((uint64_t)dw[i + 1] | (uint64_t)dw[i + 2] << 32) & ~3ull;
            uint32_t len = BASE_MIN(amd_fget(PM4_IB_SIZE, dw[i + 3]), MAX_SEGMENT_DW);
            trace_line l;
            tracer_begin_stream(s->t, &l, "ib");
            trace_u64(&l, "queue", q->id);
            trace_hex(&l, "va", va);
            trace_u64(&l, "dwords", len);
            uint32_t *ib = read_words(va, len);
            if (!ib) {
                trace_str(&l, "memory", "unreadable");
                tracer_emit_block(s->t, &l, "");
            } else {
                emit_decoded(s, &l, "amd-pm4", q->arch, va, ib, len);
                free(ib);
            }
        }
        i += n;
    }
}

static int amd_poll_queue(trace_streams *s, amd_q *q)
{
    uint64_t w;
    if (!q->ring_size || !trace_read(&w, q->wptr_addr, 8) || w == q->last) return 0;
    bool aql = q->type == KFD_QUEUE_COMPUTE_AQL, sdma = is_sdma(q->type);
    uint64_t unit = aql ? AQL_PACKET_BYTES : sdma ? 1 : 4, units = q->ring_size / unit;
    if (w < q->last) q->last = w > units ? w - units : 0; /* the pointer went back: a reset queue */
    uint64_t count = w - q->last, lost = 0;
    if (count > units) {
        lost = count - units;
        count = units;
    }
    uint64_t from = (w - count) % units, bytes = count * unit;
    uint32_t ndw = (uint32_t)BASE_MIN(bytes / 4, MAX_SEGMENT_DW);
    uint32_t *dw = malloc((size_t)(ndw ? ndw : 1) * 4);
    /* the region in order, across the ring's end */
    uint64_t first = BASE_MIN((uint64_t)ndw * 4, q->ring_size - from * unit);
    bool ok = dw && trace_read(dw, q->ring + from * unit, first) &&
              trace_read((uint8_t *)dw + first, q->ring, (uint64_t)ndw * 4 - first);
    trace_line l;
    const char *fmt = aql ? "amd-aql" : sdma ? "amd-sdma" : "amd-pm4";
    tracer_begin_stream(s->t, &l, aql ? "aql" : sdma ? "sdma" : "pm4");
    trace_u64(&l, "queue", q->id);
    trace_u64(&l, "gpu_id", q->gpu_id);
    trace_u64(&l, "wptr_from", w - count);
    trace_u64(&l, "wptr", w);
    trace_hex(&l, "va", q->ring + from * unit);
    trace_u64(&l, "dwords", ndw);
    if (lost) trace_u64(&l, "overwritten_units", lost);
    if (!ok) {
        trace_str(&l, "memory", "unreadable");
        tracer_emit_block(s->t, &l, "");
    } else {
        emit_decoded(s, &l, fmt, q->arch, q->ring + from * unit, dw, ndw);
        if (aql) {
            for (uint32_t i = 0; i + 16 <= ndw; i += 16) {
                uint64_t ib;
                uint32_t n;
                uint32_t pkt[16];
                memcpy(pkt, dw + i, sizeof pkt);
                if (!amd_aql_pm4_ib(pkt, &ib, &n)) continue;
                uint32_t call[4] = {PM4_HDR(PM4_INDIRECT_BUFFER, 3), (uint32_t)ib, (uint32_t)(ib >> 32),
                                    amd_fset(PM4_IB_SIZE, n) | amd_fset(PM4_IB_VALID, 1)};
                amd_ibs(s, q, call, 4);
            }
        } else if (!sdma) {
            amd_ibs(s, q, dw, ndw);
        }
    }
    free(dw);
    q->last = w;
    return 1;
}

/* ** polling */
void trace_streams_poll(trace_streams *s)
{
    if (!s) return;
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->chans.n; i++) found += nv_poll_channel(s, &s->chans.v[i]);
    for (size_t i = 0; i < s->queues.n; i++) found += amd_poll_queue(s, &s->queues.v[i]);
    pthread_mutex_unlock(&s->lock);
    if (found) atomic_fetch_add(&s->activity, 1);
}

static void *poller(void *arg)
{
    trace_streams *s = arg;
    uint64_t wait = s->poll_us, seen = 0;
    while (!atomic_load(&s->stop)) {
        base_sleep_ns(wait * 1000);
        trace_streams_poll(s);
        uint64_t a = atomic_load(&s->activity);
        wait = a != seen ? s->poll_us : BASE_MIN(wait * 2, 5000);
        seen = a;
    }
    return NULL;
}
