/* Queues and submission. Each device has a compute queue and an SDMA copy
 * queue that KFD creates over buffers we allocate: the ring, a control page
 * holding the write and read pointers, and for compute the end-of-pipe and
 * context-save areas, each its own buffer of exactly the size KFD checks
 * (amdkfd kfd_queue.c: kfd_queue_acquire_buffers). Submitting copies a
 * recorded stream into the ring, stores the new write pointer, then the
 * 64-bit doorbell. The engine's read pointer is the only backpressure: a
 * slot is written only once the engine is past it, and a ring that stays
 * full times out with both positions named.
 *
 * PM4 rings take packets across the ring end (the CP wraps); SDMA packets
 * must not straddle it, so the tail is padded with NOPs. The AQL queue of
 * multi-XCC parts (docs/amd-xcc.md) holds one vendor packet per command,
 * each pointing at the command's PM4 in an indirect-buffer area, and its
 * pointers count packets. */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/amd/amd_sdma.h"
#include "drivers/sys.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* held from CREATE_QUEUE until its id is known, and while a queue is
 * destroyed, tries and all (queue_halt) */
static pthread_mutex_t queue_ids = PTHREAD_MUTEX_INITIALIZER;

static uint32_t ring_bytes_for(enum amd_queue_kind k)
{
    uint32_t shift = base_env_get()->ring_shift;
    /* every accepted shift (5 to 24) means 2^N dwords; below KFD's
     * smallest ring it is that smallest */
    if (shift) return BASE_MAX(4u << shift, AMD_MIN_RING_BYTES);
    return k == AMD_QUEUE_PM4 ? AMD_PM4_RING_BYTES : k == AMD_QUEUE_SDMA ? AMD_SDMA_RING_BYTES : AMD_AQL_RING_BYTES;
}

/* the unit the queue's pointers count, and the ring's size in it */
static uint64_t unit_bytes(const amd_queue *q)
{
    return q->kind == AMD_QUEUE_PM4 ? 4 : q->kind == AMD_QUEUE_SDMA ? 1 : AQL_PACKET_BYTES;
}
static uint64_t ring_units(const amd_queue *q) { return q->ring_bytes / unit_bytes(q); }

/* What the engine has consumed, as a monotonic count. PM4 and SDMA engines
 * report a position (treated modulo the ring, which is never filled
 * completely); the AQL read dispatch id is monotonic already. */
static uint64_t consumed(const amd_queue *q)
{
    uint64_t raw = atomic_load_explicit((_Atomic uint64_t *)q->rptr, memory_order_acquire);
    if (q->kind == AMD_QUEUE_AQL) return raw <= q->put ? raw : q->put;
    uint64_t n = ring_units(q), pos = raw % n, in_flight = (q->put % n + n - pos) % n;
    return q->put - in_flight;
}

bool amd_queue_busy(amd_queue *q) { return q->created && consumed(q) != q->put; }

static void publish(amd_queue *q)
{
    if (q->kind == AMD_QUEUE_AQL && !q->put) return; /* no packet yet */
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store_explicit((_Atomic uint64_t *)q->wptr, q->put, memory_order_release);
    /* AQL doorbells take the index of the last packet written */
    sys_doorbell64(q->doorbell, q->kind == AMD_QUEUE_AQL ? q->put - 1 : q->put);
}

/* One round of waiting for the engine: publishes what is written so far
 * (so the engine can make room), checks for faults and the timeout, sleeps
 * briefly. `what` says what is awaited, for the timeout message. */
typedef struct waiting {
    uint64_t start;
    unsigned rounds;
} waiting;

static hcq_status wait_round(amd_queue *q, waiting *w, bool *published, const char *what)
{
    hcq_device *dev = q->ad->dev;
    if (!*published) {
        publish(q);
        *published = true;
    }
    if (atomic_load(&dev->faulted)) return drv_fault_status(dev);
    uint64_t now = hcq_now_ns();
    uint64_t *start = &w->start;
    if (!*start) *start = now;
    if (++w->rounds % 64 == 0) amd_poll(dev); /* a fault may be why it stopped */
    if (now - *start > base_env_get()->timeout_ns)
        return base_err(HCQ_ETIMEDOUT, "%s: waited %llu ms for %s on the %s queue: submitted %llu %s, the engine has "
                        "consumed %llu (read pointer 0x%llx, ring of %llu); it is not consuming (hung, or waiting on "
                        "something that never comes)",
                        dev->props.id, (unsigned long long)((now - *start) / 1000000), what, q->name,
                        (unsigned long long)q->put,
                        q->kind == AMD_QUEUE_PM4 ? "dwords" : q->kind == AMD_QUEUE_SDMA ? "bytes" : "packets",
                        (unsigned long long)consumed(q), (unsigned long long)*q->rptr,
                        (unsigned long long)ring_units(q));
    drv_waiter_sleep(dev, drv_waiter_seq(dev), 20000);
    return HCQ_OK;
}

/* Waits until `need` more units fit (the ring never fills completely). */
static hcq_status wait_space(amd_queue *q, uint64_t need, bool *published)
{
    waiting w = {0};
    while (q->put - consumed(q) + need > ring_units(q) - 1) {
        hcq_status s = wait_round(q, &w, published, "ring space");
        if (s) return s;
    }
    return HCQ_OK;
}

static void note_exec(amd_queue *q, uint64_t pos, uint32_t id)
{
    amd_hist *h = &q->hist[q->nhist++ % AMD_HIST];
    h->pos = pos;
    h->prog_id = id;
}

/* the program id if dw[0..n) is our exec marker NOP */
static bool exec_marker(const uint32_t *dw, uint32_t n, uint32_t *id)
{
    if (n < 3 || dw[0] != PM4_HDR(PM4_NOP, 2) || dw[1] != AMD_MARK_EXEC) return false;
    *id = dw[2];
    return true;
}

static hcq_status malformed(amd_queue *q, uint32_t at, uint32_t word)
{
    return base_err(HCQ_EFORMAT, "%s: %s stream is malformed at dword %u (0x%08x): an encoder bug", q->ad->dev->props.id,
                    q->name, at, word);
}

static hcq_status submit_pm4(amd_queue *q, const uint32_t *dw, uint32_t ndw)
{
    uint32_t *ring = q->ring.cpu;
    uint64_t n = ring_units(q);
    bool published = false;
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], len = PM4_HDR_BODY(h) + 1, id;
        if (PM4_HDR_TYPE(h) != 3 || i + len > ndw || len > n - 1) return malformed(q, i, h);
        if (exec_marker(dw + i, len, &id)) note_exec(q, q->put, id);
        hcq_status s = wait_space(q, len, &published);
        if (s) return s;
        for (uint32_t k = 0; k < len; k++) ring[(q->put + k) % n] = dw[i + k];
        q->put += len;
        i += len;
        published = false;
    }
    publish(q);
    return HCQ_OK;
}

static hcq_status submit_sdma(amd_queue *q, const uint32_t *dw, uint32_t ndw)
{
    uint32_t *ring = q->ring.cpu;
    uint64_t ring_dw = q->ring_bytes / 4;
    bool published = false;
    const amd_arch *a = q->ad->arch;
    for (uint32_t i = 0; i < ndw;) {
        uint32_t len = sdma_packet_ndw(dw + i, ndw - i);
        if (!len || len > ring_dw / 2) return malformed(q, i, dw[i]);
        uint64_t pos = (q->put / 4) % ring_dw, pad = pos + len > ring_dw ? ring_dw - pos : 0;
        hcq_status s = wait_space(q, (pad + len) * 4, &published);
        if (s) return s;
        /* never split a packet across the ring end: NOPs to the end first */
        for (uint64_t k = 0; k < pad; k++) ring[pos + k] = 0;
        q->put += pad * 4;
        pos = (q->put / 4) % ring_dw;
        bool empty = amd_fget(SDMA_HDR_OP, dw[i]) == SDMA_OP_COPY && sdma_copy_is_empty(dw + i, a->sdma_count_bits);
        for (uint32_t k = 0; k < len; k++) ring[pos + k] = empty ? 0 : dw[i + k];
        q->put += len * 4ull;
        i += len;
        published = false;
    }
    publish(q);
    return HCQ_OK;
}

/* an AQL vendor packet running ndw dwords of PM4 at ib_va */
static void aql_pm4_packet(uint32_t *pkt, uint64_t ib_va, uint32_t ndw)
{
    pkt[1] = PM4_HDR(PM4_INDIRECT_BUFFER, 3);
    pkt[2] = (uint32_t)ib_va;
    pkt[3] = (uint32_t)(ib_va >> 32);
    pkt[4] = amd_fset(PM4_IB_SIZE, ndw) | amd_fset(PM4_IB_VALID, 1);
    pkt[5] = AQL_PM4_IB_REMAIN;
    for (int k = 6; k < 16; k++) pkt[k] = 0;
    /* the header last: the packet processor may take a packet as soon as
     * its type is valid */
    uint32_t hdr = (AQL_TYPE_VENDOR << AQL_HDR_TYPE_SHIFT) | AQL_HDR_BARRIER | (AQL_SCOPE_SYSTEM << AQL_HDR_ACQUIRE_SHIFT) |
                   (AQL_SCOPE_SYSTEM << AQL_HDR_RELEASE_SHIFT) | (AQL_AMD_FORMAT_PM4_IB << 16);
    atomic_store_explicit((_Atomic uint32_t *)&pkt[0], hdr, memory_order_release);
}

/* an AMD barrier-value packet: the packet processor waits until the 64-bit
 * value of the signal at `signal` (an amd_signal_t: value at +8) is >= value */
static void aql_barrier_value_packet(void *slot, uint64_t signal, uint64_t value)
{
    aql_barrier_value *b = slot;
    memset((uint8_t *)b + 4, 0, AQL_PACKET_BYTES - 4);
    b->signal = signal;
    b->value = value;
    b->mask = ~0ull;
    b->cond = AQL_COND_GTE;
    uint32_t hdr = (AQL_TYPE_VENDOR << AQL_HDR_TYPE_SHIFT) | AQL_HDR_BARRIER | (AQL_SCOPE_SYSTEM << AQL_HDR_ACQUIRE_SHIFT) |
                   (AQL_SCOPE_SYSTEM << AQL_HDR_RELEASE_SHIFT) | (AQL_AMD_FORMAT_BARRIER_VALUE << 16);
    atomic_store_explicit((_Atomic uint32_t *)slot, hdr, memory_order_release);
}

static hcq_status submit_aql(amd_queue *q, const uint32_t *dw, uint32_t ndw)
{
    uint64_t slots = ring_units(q), ib_size = q->ib.size;
    bool published = false;
    for (uint32_t i = 0; i < ndw;) {
        if (i + 6 <= ndw && dw[i] == AMD_CMD_BARRIER_VALUE && dw[i + 1] == AMD_CMD_BARRIER_VALUE_MAGIC) {
            hcq_status s = wait_space(q, 1, &published);
            if (s) return s;
            q->ib_start[q->put % slots] = q->ib_put; /* no IB: the area's tail stays where it was */
            aql_barrier_value_packet((uint8_t *)q->ring.cpu + (q->put % slots) * AQL_PACKET_BYTES,
                                     dw[i + 2] | (uint64_t)dw[i + 3] << 32, dw[i + 4] | (uint64_t)dw[i + 5] << 32);
            q->put++;
            i += 6;
            published = false;
            continue;
        }
        if (i + 19 <= ndw && dw[i] == AMD_CMD_DISPATCH && dw[i + 1] == AMD_CMD_DISPATCH_MAGIC) {
            /* a kernel-dispatch packet: the body, then the header */
            hcq_status s = wait_space(q, 1, &published);
            if (s) return s;
            q->ib_start[q->put % slots] = q->ib_put;
            note_exec(q, q->put, dw[i + 2]);
            uint32_t *slot = (uint32_t *)((uint8_t *)q->ring.cpu + (q->put % slots) * AQL_PACKET_BYTES);
            memcpy(slot + 1, dw + i + 4, 15 * 4);
            atomic_store_explicit((_Atomic uint32_t *)slot, dw[i + 3], memory_order_release);
            q->put++;
            i += 19;
            published = false;
            continue;
        }
        if (i + 2 > ndw || dw[i] != AMD_CMD_BOUNDARY || dw[i + 1] > ndw - i - 2) return malformed(q, i, dw[i]);
        uint32_t len = dw[i + 1];
        const uint32_t *cmd = dw + i + 2;
        uint64_t bytes = base_align_up(len * 4ull, 64);
        if (bytes > ib_size / 2) return malformed(q, i, dw[i]);
        hcq_status s = wait_space(q, 1, &published);
        if (s) return s;
        /* the command's PM4 contiguous in the IB area, behind what packets
         * still in flight point at */
        uint64_t at = q->ib_put;
        waiting w = {0};
        if (at % ib_size + bytes > ib_size) at += ib_size - at % ib_size;
        for (;;) {
            uint64_t done = consumed(q), tail = done == q->put ? at : q->ib_start[done % slots];
            if (at + bytes - tail <= ib_size) break;
            if ((s = wait_round(q, &w, &published, "indirect-buffer space"))) return s;
        }
        uint32_t id;
        for (uint32_t k = 0; k < len;) {
            uint32_t h = cmd[k], plen = PM4_HDR_BODY(h) + 1;
            if (PM4_HDR_TYPE(h) != 3 || k + plen > len) return malformed(q, i + 2 + k, h);
            if (exec_marker(cmd + k, plen, &id)) note_exec(q, q->put, id);
            k += plen;
        }
        memcpy((uint8_t *)q->ib.cpu + at % ib_size, cmd, len * 4ull);
        q->ib_start[q->put % slots] = at;
        q->ib_put = at + bytes;
        aql_pm4_packet((uint32_t *)((uint8_t *)q->ring.cpu + (q->put % slots) * AQL_PACKET_BYTES),
                       q->ib.va + at % ib_size, len);
        q->put++;
        i += 2 + len;
        published = false;
    }
    publish(q);
    return HCQ_OK;
}

hcq_status amd_submit(hcq_device *dev, drv_rec *r)
{
    amd_dev *ad = amd_of(dev);
    if (!r->ndw) return HCQ_OK;
    hcq_status s = drv_fault_status(dev);
    if (s) return s;
    amd_queue *q = r->type == HCQ_QUEUE_COPY ? &ad->sdma : &ad->compute;
    if (!atomic_load(&q->created)) return base_err(HCQ_ESTATE, "%s: its %s queue is gone", dev->props.id, q->name);
    pthread_mutex_lock(&q->lock);
    s = q->kind == AMD_QUEUE_SDMA ? submit_sdma(q, r->dw, r->ndw)
        : q->kind == AMD_QUEUE_AQL ? submit_aql(q, r->dw, r->ndw)
                                   : submit_pm4(q, r->dw, r->ndw);
    q->submits++;
    pthread_mutex_unlock(&q->lock);
    return s;
}

const char *amd_queue_kernel_at_fault(amd_queue *q, char *buf, size_t size)
{
    uint64_t done = consumed(q);
    const amd_hist *best = NULL;
    uint32_t n = BASE_MIN(q->nhist, (uint32_t)AMD_HIST);
    for (uint32_t i = 0; i < n; i++) {
        const amd_hist *h = &q->hist[i];
        /* PM4: the CP stops past the dispatch it faulted in; AQL: the
         * faulting packet is the one not yet consumed */
        bool before = q->kind == AMD_QUEUE_AQL ? h->pos <= done : h->pos < done;
        if (before && (!best || h->pos > best->pos)) best = h;
    }
    return best ? amd_prog_name(q->ad, best->prog_id, buf, size) : NULL;
}

static const char *unit_name(const amd_queue *q)
{
    return q->kind == AMD_QUEUE_PM4 ? "dwords" : q->kind == AMD_QUEUE_SDMA ? "bytes" : "packets";
}

void amd_queue_state(const amd_queue *q, char *buf, size_t size)
{
    if (!q->created) {
        snprintf(buf, size, "%s queue: not created", q->name ? q->name : "a");
        return;
    }
    /* the pointers as the engine sees them in memory: a read pointer that
     * stays short of the write pointer names the engine that stopped */
    uint64_t wp = atomic_load_explicit((_Atomic uint64_t *)q->wptr, memory_order_acquire);
    uint64_t rp = atomic_load_explicit((_Atomic uint64_t *)q->rptr, memory_order_acquire);
    snprintf(buf, size, "%s queue %u (%s ring of %llu %s): submitted %llu, write pointer %llu, read pointer %llu "
             "(consumed %llu)", q->name, q->queue_id,
             q->kind == AMD_QUEUE_AQL ? "AQL" : q->kind == AMD_QUEUE_PM4 ? "PM4" : "SDMA",
             (unsigned long long)ring_units(q), unit_name(q), (unsigned long long)q->put, (unsigned long long)wp,
             (unsigned long long)rp, (unsigned long long)consumed(q));
}

void amd_describe(hcq_device *dev, char *buf, size_t size)
{
    amd_dev *ad = amd_of(dev);
    size_t off = 0;
    const amd_queue *qs[2] = {&ad->compute, &ad->sdma};
    for (int i = 0; i < 2 && off < size; i++) {
        const amd_queue *q = qs[i];
        if (!q->created) continue;
        int k = snprintf(buf + off, size - off, "%s%s queue %u (%s ring of %llu %s): wptr %llu, rptr %llu",
                         off ? "; " : "", q->name, q->queue_id,
                         q->kind == AMD_QUEUE_AQL ? "AQL" : q->kind == AMD_QUEUE_PM4 ? "PM4" : "SDMA",
                         (unsigned long long)ring_units(q), unit_name(q), (unsigned long long)q->put,
                         (unsigned long long)consumed(q));
        if (k < 0) break;
        off += (size_t)k;
    }
}

/* ** creation */
static hcq_status alloc(amd_dev *ad, drv_mem *m, uint64_t size, uint32_t domain, bool cpu, const char *what)
{
    uint32_t f = KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE | KFD_ALLOC_NO_SUBSTITUTE | domain;
    if (domain == KFD_ALLOC_GTT) f |= KFD_ALLOC_COHERENT | KFD_ALLOC_UNCACHED;
    hcq_status s = amd_bo_alloc(ad, size, f, cpu, m);
    return s ? base_err_prefix(s, "the %s", what) : HCQ_OK;
}

static hcq_status map_doorbells(amd_dev *ad, uint64_t doorbell_offset)
{
    uint64_t base = doorbell_offset & ~(uint64_t)(KFD_DOORBELL_SLICE_BYTES - 1);
    if (ad->doorbells) {
        if (base != ad->doorbell_off)
            return base_err(HCQ_EIO, "KFD put the queues' doorbells in different slices (0x%llx, 0x%llx)",
                            (unsigned long long)ad->doorbell_off, (unsigned long long)base);
        return HCQ_OK;
    }
    int err = 0;
    void *p = sys_mmap(NULL, KFD_DOORBELL_SLICE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, ad->kfd_fd, (off_t)base, &err);
    if (!p) return base_err(HCQ_EIO, "mapping the doorbell slice (/dev/kfd offset 0x%llx): %s", (unsigned long long)base,
                            strerror(err));
    ad->doorbells = p;
    ad->doorbell_off = base;
    return HCQ_OK;
}

static hcq_status queue_create(amd_dev *ad, amd_queue *q, enum amd_queue_kind kind, const char *name)
{
    const amd_node *n = &ad->node;
    q->ad = ad;
    q->kind = kind;
    q->name = name;
    q->ring_bytes = ring_bytes_for(kind);
    pthread_mutex_init(&q->lock, NULL);
    hcq_status s;
    if ((s = alloc(ad, &q->ring, q->ring_bytes, KFD_ALLOC_GTT, true, "ring"))) return s;
    if ((s = alloc(ad, &q->ctl, AMD_QUEUE_PAGE_BYTES, KFD_ALLOC_GTT, true, "pointer page"))) return s;
    q->wptr = (volatile uint64_t *)((uint8_t *)q->ctl.cpu + AMD_QUEUE_WPTR_OFF);
    q->rptr = (volatile uint64_t *)((uint8_t *)q->ctl.cpu + AMD_QUEUE_RPTR_OFF);
    kfd_create_queue_args a = {
        .ring_base_address = q->ring.va,
        .write_pointer_address = q->ctl.va + AMD_QUEUE_WPTR_OFF,
        .read_pointer_address = q->ctl.va + AMD_QUEUE_RPTR_OFF,
        .ring_size = q->ring_bytes,
        .gpu_id = n->gpu_id,
        .queue_type = kind == AMD_QUEUE_SDMA ? KFD_QUEUE_SDMA : kind == AMD_QUEUE_AQL ? KFD_QUEUE_COMPUTE_AQL
                                                                                    : KFD_QUEUE_COMPUTE,
        .queue_percentage = KFD_MAX_QUEUE_PERCENTAGE,
        .queue_priority = 7,
    };
    if (kind != AMD_QUEUE_SDMA) {
        /* the CP writes end-of-pipe events there (RELEASE_MEM needs it) */
        if ((s = alloc(ad, &q->eop, n->eop_size, KFD_ALLOC_VRAM, false, "end-of-pipe buffer"))) return s;
        /* context save/restore: one area per XCC plus the debugger's */
        uint64_t cwsr = base_align_up(((uint64_t)n->cwsr_size + n->debug_memory_size) * n->num_xcc, 4096);
        if ((s = alloc(ad, &q->cwsr, cwsr, KFD_ALLOC_VRAM, false, "context save area"))) return s;
        a.eop_buffer_address = q->eop.va;
        a.eop_buffer_size = n->eop_size;
        a.ctx_save_restore_address = q->cwsr.va;
        a.ctx_save_restore_size = n->cwsr_size;
        a.ctl_stack_size = n->ctl_stack_size;
    }
    if (kind == AMD_QUEUE_AQL) {
        uint64_t slots = ring_units(q);
        uint32_t *ring = q->ring.cpu;
        for (uint64_t i = 0; i < slots; i++) ring[i * 16] = AQL_TYPE_INVALID; /* not ready */
        if ((s = alloc(ad, &q->ib, BASE_MAX(64u << 10, 16ull * q->ring_bytes), KFD_ALLOC_GTT, true, "IB area")))
            return s;
        q->ib_start = base_calloc(slots, sizeof *q->ib_start);
        if (!q->ib_start) return HCQ_ENOMEM;
        /* amd_queue_t fields the CP reads on AQL queues (ROCR amd_hsa_queue.h) */
        uint8_t *c = q->ctl.cpu;
        uint32_t max_cu = n->cu_count ? n->cu_count - 1 : 0, off128 = AMD_QUEUE_RPTR_OFF, props = 0xA;
        uint32_t waves = n->max_waves_per_simd * BASE_MAX(n->simd_per_cu, 1u), max_wave = waves ? waves - 1 : 0;
        memcpy(c + AMD_QUEUE_MAX_CU_ID_OFF, &max_cu, 4);
        memcpy(c + AMD_QUEUE_MAX_WAVE_ID_OFF, &max_wave, 4);
        memcpy(c + AMD_QUEUE_RPTR_BASE_OFF, &off128, 4);
        memcpy(c + AMD_QUEUE_PROPERTIES_OFF, &props, 4); /* IS_PTR64 | ENABLE_PROFILING */
    }
    pthread_mutex_lock(&queue_ids);
    int rc = amd_kfd_ioctl(KFD_IOC_CREATE_QUEUE, &a);
    pthread_mutex_unlock(&queue_ids);
    if (rc < 0)
        return base_err(rc == -ENOMEM ? HCQ_ENOMEM : HCQ_EIO, "amdkfd CREATE_QUEUE (%s, %u-byte ring) failed: %s%s",
                        name, q->ring_bytes, strerror(-rc),
                        rc == -EINVAL ? " (KFD refused a queue buffer's address or size)" : "");
    q->queue_id = a.queue_id;
    atomic_store(&q->created, true);
    if ((s = map_doorbells(ad, a.doorbell_offset))) return s;
    q->doorbell = (volatile uint64_t *)((uint8_t *)ad->doorbells + (a.doorbell_offset - ad->doorbell_off));
    return HCQ_OK;
}

/* Without the queue's lock: a fault may be found by a submitter waiting
 * for ring space, which holds it.
 *
 * A DESTROY_QUEUE that failed may or may not have removed the queue
 * (linux drivers/gpu/drm/amd/amdkfd/kfd_process_queue_manager.c,
 * pqm_destroy_queue): after -ETIME or -EIO (the scheduler hung, the GPU is
 * being reset) KFD removes it all the same (older kernels: after -ETIME
 * only); after any other error
 * (-ERESTARTSYS, -EBUSY for a process under a debugger, a failed copy) the
 * queue stays, and its engine goes on reading its ring and whatever the
 * work in it points at. So the driver asks again: KFD answers EINVAL for a
 * queue id it no longer has (pqm_destroy_queue: get_queue_by_qid finds
 * none). A queue still there after that may run on; the device's memory
 * then stays (queue_kept, amd_bo_free). KFD hands a freed queue id to the
 * next queue the process creates (the lowest free slot:
 * find_available_queue_slot), so no queue of ours is created between the
 * tries (queue_ids). */
static void queue_halt(amd_dev *ad, amd_queue *q)
{
    if (!atomic_exchange(&q->created, false)) return;
    pthread_mutex_lock(&queue_ids);
    int rc = 0;
    for (int tries = 0; tries < 3; tries++) {
        kfd_destroy_queue_args d = {.queue_id = q->queue_id};
        rc = amd_kfd_ioctl(KFD_IOC_DESTROY_QUEUE, &d);
        if (rc < 0) BASE_LOG(1, "%s: DESTROY_QUEUE %u (%s queue): %s", ad->dev->props.id, q->queue_id, q->name,
                             strerror(-rc));
        if (rc >= 0 || rc == -EINVAL) {
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&queue_ids);
    if (rc < 0 && !atomic_exchange(&ad->queue_kept, true))
        base_log(0, "%s: amdkfd would not destroy the %s queue (DESTROY_QUEUE %u: %s): it may still run, so the "
                 "device's memory stays allocated and mapped until the process exits", ad->dev->props.id, q->name,
                 q->queue_id, strerror(-rc));
}

void amd_queues_halt(amd_dev *ad)
{
    if (ad->compute.ad) queue_halt(ad, &ad->compute);
    if (ad->sdma.ad) queue_halt(ad, &ad->sdma);
}

static void queue_destroy(amd_dev *ad, amd_queue *q)
{
    if (!q->ad) return;
    queue_halt(ad, q);
    amd_bo_free(ad, &q->ring);
    amd_bo_free(ad, &q->ctl);
    amd_bo_free(ad, &q->eop);
    amd_bo_free(ad, &q->cwsr);
    amd_bo_free(ad, &q->ib);
    free(q->ib_start);
    q->ib_start = NULL;
    pthread_mutex_destroy(&q->lock);
    /* a queue made again (the self-test's retry) starts from nothing */
    memset(q, 0, sizeof *q);
}

hcq_status amd_queues_create(amd_dev *ad)
{
    int kind = amd_proc_compute_queue();
    if (kind != AMD_QUEUE_PM4 && kind != AMD_QUEUE_AQL) kind = ad->arch->aql_compute ? AMD_QUEUE_AQL : AMD_QUEUE_PM4;
    hcq_status s = queue_create(ad, &ad->compute, (enum amd_queue_kind)kind, "compute");
    if (!s) s = queue_create(ad, &ad->sdma, AMD_QUEUE_SDMA, "sdma");
    return s ? base_err_prefix(s, "creating the %s queue", ad->sdma.ad ? "sdma" : "compute") : HCQ_OK;
}

void amd_queues_destroy(amd_dev *ad)
{
    queue_destroy(ad, &ad->compute);
    queue_destroy(ad, &ad->sdma);
}
