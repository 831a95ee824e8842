/* Queues of an NV device: the encoders that turn queue commands into
 * methods (and QMDs in aux memory), submission through the GPFIFO ring
 * with backpressure, the error notifiers turned into device faults, and
 * the engines' positions for timeout messages. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/dump.h"
#include "drivers/sys.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ** encoders. Semaphore addresses: a 64-bit acquire needs 8-byte
 * alignment, a release that writes a timestamp 16-byte alignment (else
 * NV_PBDMA_INTR_0_SEMAPHORE: open-gpu-doc manuals/ampere/ga100/
 * dev_pbdma.ref.txt, SEM_EXECUTE); every signal hcq records writes one (the
 * QMD's four-word releases and the copy engine's are held to the same). */
#define NV_SEM_RELEASE_ALIGN 16u
#define NV_SEM_ACQUIRE_ALIGN 8u
static const char sig_what[] = "a signal (an NVIDIA semaphore release with a timestamp)";

hcq_status nv_rec_wait(drv_rec *r, hcq_val addr, hcq_val value)
{
    hcq_status s = drv_rec_need_align(r, addr, NV_SEM_ACQUIRE_ALIGN, "a wait (a 64-bit semaphore acquire)");
    if (s) return s;
    nv_sem_acquire(r, addr, value, nv_of(r->dev)->path.acquire == NV_ACQ_CIRC_GEQ64);
    r->be[NV_BE_LAST_EXEC] = 0;
    return r->err;
}

/* release semaphores a QMD has: three in V03 (RELEASE0..2) and V04 */
static unsigned release_slots(int ver) { return nv_qmd_fields[NV_QMD_RELEASE_ENABLE].v[ver].count; }

hcq_status nv_rec_signal(drv_rec *r, hcq_val addr, hcq_val value)
{
    nv_dev *nv = nv_of(r->dev);
    int ver = nv->qmd_ver;
    hcq_status s = drv_rec_need_align(r, addr, NV_SEM_RELEASE_ALIGN, sig_what);
    if (s) return s;
    if (r->type == HCQ_QUEUE_COMPUTE && r->be[NV_BE_LAST_EXEC] && r->be[NV_BE_RELEASES] < release_slots(ver)) {
        /* right after a launch: the QMD's own release semaphore writes the
         * value (and the timestamp) when the kernel completes; its fields
         * are patch slots like any other */
        uint32_t *qmd = (uint32_t *)(uintptr_t)r->be[NV_BE_LAST_EXEC];
        unsigned i = (unsigned)r->be[NV_BE_RELEASES]++;
        nv_qmd_set(qmd, ver, NV_QMD_RELEASE_ENABLE, i, 1);
        nv_qmd_set(qmd, ver, NV_QMD_RELEASE_STRUCTURE_SIZE, i, 0); /* four words: value, timestamp */
        nv_qmd_set(qmd, ver, NV_QMD_RELEASE_PAYLOAD64B, i, 1);
        nv_qmd_set(qmd, ver, NV_QMD_RELEASE_MEMBAR_TYPE, i, 1); /* the kernel's writes land first */
        nv_qmd_patch(r, qmd, ver, NV_QMD_RELEASE_ADDRESS_LOWER, i, addr, 0);
        nv_qmd_patch(r, qmd, ver, NV_QMD_RELEASE_ADDRESS_UPPER, i, addr, 32);
        nv_qmd_patch(r, qmd, ver, NV_QMD_RELEASE_PAYLOAD_LOWER, i, value, 0);
        nv_qmd_patch(r, qmd, ver, NV_QMD_RELEASE_PAYLOAD_UPPER, i, value, 32);
        return r->err;
    }
    if (r->type == HCQ_QUEUE_COPY && nv->gen->copy_sem64 && nv->path.ce == NV_CE_REL64)
        nv_ce_sem_release64(r, addr, value);
    else if (r->type == HCQ_QUEUE_COPY && nv->gen->copy_sem64)
        nv_ce_sem_release32(r, addr, value);
    else nv_sem_release(r, addr, value, true); /* AMPERE_DMA_COPY_A's payloads are 32-bit: host semaphore */
    r->be[NV_BE_LAST_EXEC] = 0;
    return r->err;
}

hcq_status nv_rec_timestamp(drv_rec *r, hcq_val addr)
{
    hcq_status s = drv_rec_need_align(r, addr, NV_SEM_RELEASE_ALIGN, "a timestamp (a semaphore release)");
    if (s) return s;
    /* a release after idle writes the timestamp at +8 (and 0 as the value) */
    nv_sem_release(r, addr, HCQ_IMM(0), true);
    r->be[NV_BE_LAST_EXEC] = 0;
    return r->err;
}

hcq_status nv_rec_barrier(drv_rec *r)
{
    nv_invalidate_shader_caches(r);
    r->be[NV_BE_LAST_EXEC] = 0;
    return r->err;
}

hcq_status nv_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims)
{
    nv_dev *nv = nv_of(r->dev);
    const nv_prog *np = p->priv;
    int ver = nv->qmd_ver;
    uint32_t qbytes = nv_qmd_bytes(ver), cb = (uint32_t)base_align_up(np->cbuf0_bytes, 256);
    void *cpu = NULL;
    uint64_t va = 0;
    /* constant bank 0 (driver words, then the kernargs) and the launch's own
     * copy of the QMD behind it: 256-aligned, below 2^40 */
    hcq_status s = r->aux_alloc(r, cb + qbytes, 256, &cpu, &va);
    if (s) return s;
    r->uses_aux = true;
    uint8_t *cbuf = cpu;
    memcpy(cbuf, np->cbuf0_prefix, np->param_base);
    for (int i = 0; i < 3; i++) { /* blockDim at 0x00, gridDim at 0x0c (as CUDA fills them) */
        drv_rec_mem_field(r, cbuf + 4 * i, dims->block[i], 32, 0, 0, 0);
        drv_rec_mem_field(r, cbuf + 12 + 4 * i, dims->grid[i], 32, 0, 0, 0);
    }
    drv_rec_params(r, cbuf + np->param_base, p, params);
    uint32_t *qmd = (uint32_t *)(cbuf + cb);
    memcpy(qmd, np->qmd, qbytes);
    nv_qmd_patch(r, qmd, ver, NV_QMD_GRID_WIDTH, 0, dims->grid[0], 0);
    nv_qmd_patch(r, qmd, ver, NV_QMD_GRID_HEIGHT, 0, dims->grid[1], 0);
    nv_qmd_patch(r, qmd, ver, NV_QMD_GRID_DEPTH, 0, dims->grid[2], 0);
    nv_qmd_patch(r, qmd, ver, NV_QMD_CTA_THREAD_DIMENSION0, 0, dims->block[0], 0);
    nv_qmd_patch(r, qmd, ver, NV_QMD_CTA_THREAD_DIMENSION1, 0, dims->block[1], 0);
    nv_qmd_patch(r, qmd, ver, NV_QMD_CTA_THREAD_DIMENSION2, 0, dims->block[2], 0);
    uint32_t sh = nv_qmd_cbuf_shift(ver);
    nv_qmd_set(qmd, ver, NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 0, va >> sh);
    nv_qmd_set(qmd, ver, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, va >> (32 + sh));
    /* launches in one stream must not overlap: each waits for the last */
    if (r->be[NV_BE_LAUNCHES]) nv_compute_wfi(r);
    nv_send_pcas(r, va + cb);
    r->be[NV_BE_LAST_EXEC] = (uintptr_t)qmd;
    r->be[NV_BE_RELEASES] = 0;
    if (!r->be[NV_BE_NAMES]) r->be[NV_BE_NAMES] = (uintptr_t)p->info.name;
    r->be[NV_BE_LAUNCHES]++;
    return r->err;
}

/* a chunk of a copy: addresses plus off, size n (all patchable) */
static void ce_copy_chunk(drv_rec *r, hcq_val dst, hcq_val src, uint64_t off, hcq_val size)
{
    if (!drv_rec_reserve(r, 9)) return;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_OFFSET_IN_UPPER, 4));
    const hcq_val *v[2] = {&src, &dst};
    for (int k = 0; k < 2; k++) {
        uint32_t at = r->ndw;
        drv_rec_dw(r, 0);
        drv_rec_field(r, at, *v[k], 32, 0, 32, (int64_t)off);
        at = r->ndw;
        drv_rec_dw(r, 0);
        drv_rec_field(r, at, *v[k], 32, 0, 0, (int64_t)off);
    }
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LINE_LENGTH_IN, 1));
    drv_rec_val32(r, size, 0);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(r, NV_COPY_DMA_COPY);
}

hcq_status nv_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size)
{
    r->be[NV_BE_LAST_EXEC] = 0;
    if (hcq_val_is_var(size)) { /* one command: the queue checks the limit at submit */
        nv_ce_copy(r, dst, src, size);
        return r->err;
    }
    for (uint64_t off = 0; off < size.imm && !r->err; off += NV_COPY_MAX_BYTES) {
        uint64_t n = BASE_MIN(NV_COPY_MAX_BYTES, size.imm - off);
        if (!hcq_val_is_var(dst) && !hcq_val_is_var(src))
            nv_ce_copy(r, HCQ_IMM(dst.imm + off), HCQ_IMM(src.imm + off), HCQ_IMM(n));
        else
            ce_copy_chunk(r, dst, src, off, HCQ_IMM(n));
    }
    return r->err;
}

/* ** submission */
static uint32_t gp_get(const nv_chan *c)
{
    return atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)(c->userd + NV_USERD_GP_GET), memory_order_acquire);
}

static void publish(nv_dev *nv, nv_chan *c)
{
    atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)(c->userd + NV_USERD_GP_PUT), (uint32_t)(c->put % c->entries),
                          memory_order_release);
    sys_doorbell32((volatile uint32_t *)(nv->usermode + NV_USERMODE_DOORBELL), c->token);
}

/* entries whose words the channel has consumed: their progress releases */
static uint64_t consumed(const nv_chan *c)
{
    uint64_t v = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)c->progress, memory_order_acquire);
    return v < c->put ? v : c->put;
}

/* Space for n contiguous pushbuffer dwords and one GPFIFO entry, waiting
 * for the channel to consume older entries. Never GP_GET: the PBDMA moves
 * it when it begins a segment, while it still reads that segment's words,
 * and USERD's copy may never be written back; the progress release at the
 * end of each segment says it is done with it. */
static hcq_status wait_space(hcq_device *dev, nv_dev *nv, nv_chan *c, uint32_t n, uint32_t *pos_out)
{
    uint64_t deadline = 0;
    for (;;) {
        uint64_t done = consumed(c), busy = c->put - done;
        uint64_t tail = done ? c->pb_end[(done - 1) % c->entries] : 0;
        uint32_t pos = (uint32_t)(c->pb_head % c->pb_dw);
        uint32_t pad = pos + n > c->pb_dw ? c->pb_dw - pos : 0; /* a segment never wraps */
        if (busy + 1 < c->entries && c->pb_head - tail + pad + n <= c->pb_dw) {
            c->pb_head += pad;
            *pos_out = (uint32_t)(c->pb_head % c->pb_dw);
            c->pb_head += n;
            return HCQ_OK;
        }
        publish(nv, c); /* what is written so far must reach the GPU to drain */
        nv_poll(dev);
        hcq_status s = drv_fault_status(dev);
        if (s) return s;
        uint64_t now = hcq_now_ns();
        if (!deadline) deadline = now + base_env_get()->timeout_ns;
        if (now > deadline)
            return base_err(HCQ_ETIMEDOUT, "%s %s channel: no room in its rings for %llu ms (rptr %llu, wptr %llu: "
                            "GPFIFO entries consumed, by its progress semaphore, and submitted; GPPut %u of %u entries; pushbuffer "
                            "%llu of %u dwords in use): the engine is not consuming work (waiting on a semaphore that "
                            "never comes?)", dev->props.id, c->name,
                            (unsigned long long)(base_env_get()->timeout_ns / 1000000), (unsigned long long)done,
                            (unsigned long long)c->put, (unsigned)(c->put % c->entries), c->entries,
                            (unsigned long long)(c->pb_head - tail), c->pb_dw);
        base_sleep_ns(20000);
    }
}

/* HCQ_DUMP: the segment, then the QMD of each launch in it (its SEND_PCAS_A
 * holds the QMD's address >> 8: memory this process wrote and maps at that
 * address), so hcq decode shows what was launched, as the mock's dumps do */
static void dump_segment(hcq_device *dev, nv_dev *nv, nv_chan *c, const char *dir, uint64_t pb_va, const uint32_t *dw,
                         uint32_t n)
{
    char eng[16];
    snprintf(eng, sizeof eng, "nv%u.%s", dev->props.index, c->name);
    drv_dump_write(dir, eng, "nv-gpfifo", c->cls, pb_va, dw, n);
    if (c != &nv->ch[NV_CH_COMPUTE]) return;
    uint32_t qdw = nv_qmd_bytes(nv->qmd_ver) / 4;
    for (uint32_t i = 0; i < n;) {
        uint32_t h = dw[i], len = nv_mthd_packet_dw(h);
        if (nv_mthd_sec_op(h) == NV_SEC_OP_INC && nv_mthd_addr(h) == NV_COMPUTE_SEND_PCAS_A &&
            nv_mthd_subch(h) == NV_SUBCH_COMPUTE && nv_mthd_count(h) >= 1 && i + 1 < n && dw[i + 1]) {
            uint64_t qva = (uint64_t)dw[i + 1] << 8;
            drv_dump_write(dir, eng, "nv-qmd", c->cls, qva, (const uint32_t *)(uintptr_t)qva, qdw);
        }
        i += len ? len : 1;
    }
}

hcq_status nv_submit(hcq_device *dev, drv_rec *r)
{
    nv_dev *nv = nv_of(dev);
    nv_chan *c = &nv->ch[r->type];
    if (!r->ndw) return HCQ_OK;
    const char *what = r->be[NV_BE_NAMES] ? (const char *)(uintptr_t)r->be[NV_BE_NAMES] : NULL;
    /* each segment is cut at a packet boundary and ends with its progress release */
    uint32_t maxseg = BASE_MIN(c->pb_dw / 2, NV_GP_ENTRY_MAX_DW) - NV_SEM_PROGRESS_DW;
    const char *dump = base_env_get()->dump;
    hcq_status s = HCQ_OK;
    pthread_mutex_lock(&c->lock);
    for (uint32_t i = 0; i < r->ndw;) {
        uint32_t n = r->ndw - i;
        if (n > maxseg) {
            uint32_t k = i;
            while (k < r->ndw && k + nv_mthd_packet_dw(r->dw[k]) - i <= maxseg) k += nv_mthd_packet_dw(r->dw[k]);
            n = k - i;
            if (!n) {
                s = base_err(HCQ_ELIMIT, "%s %s channel: a %u-dword packet does not fit the %u-dword pushbuffer",
                             dev->props.id, c->name, nv_mthd_packet_dw(r->dw[i]), c->pb_dw);
                break;
            }
        }
        uint32_t pos = 0, seg = n + NV_SEM_PROGRESS_DW;
        if ((s = wait_space(dev, nv, c, seg, &pos))) break;
        memcpy(c->pb_cpu + pos, r->dw + i, (size_t)n * 4);
        nv_sem_progress_words(c->pb_cpu + pos + n, c->progress_va, c->put + 1);
        uint32_t slot = (uint32_t)(c->put % c->entries);
        uint64_t pb_va = c->pb.va + (uint64_t)pos * 4;
        c->ring[slot] = nv_gp_entry(pb_va, seg);
        c->pb_end[slot] = c->pb_head;
        c->what[slot] = what;
        c->more[slot] = r->be[NV_BE_LAUNCHES] > 1;
        c->put++;
        if (dump) dump_segment(dev, nv, c, dump, pb_va, c->pb_cpu + pos, seg); /* with its progress release */
        i += n;
    }
    if (c->put) publish(nv, c);
    pthread_mutex_unlock(&c->lock);
    return s;
}

hcq_status nv_run_internal(hcq_device *dev, drv_rec *r, const char *what)
{
    nv_dev *nv = nv_of(dev);
    pthread_mutex_lock(&nv->sync_lock);
    uint64_t v = ++nv->sync_value, va = nv->sync.va + 16u * r->type;
    volatile uint64_t *slot = (volatile uint64_t *)((uint8_t *)nv->sync.cpu + 16u * r->type);
    nv_sem_release(r, HCQ_IMM(va), HCQ_IMM(v), false);
    hcq_status s = r->err ? r->err : nv_submit(dev, r);
    uint64_t deadline = hcq_now_ns() + base_env_get()->timeout_ns;
    while (!s && atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)slot, memory_order_acquire) < v) {
        uint64_t seq = drv_waiter_seq(dev);
        nv_poll(dev);
        if ((s = drv_fault_status(dev))) break;
        if (hcq_now_ns() > deadline) {
            char state[512];
            nv_describe(dev, state, sizeof state);
            s = base_err(HCQ_ETIMEDOUT, "%s: the %s channel did not complete it within %llu ms. %s", what,
                         nv->ch[r->type].name, (unsigned long long)(base_env_get()->timeout_ns / 1000000), state);
            break;
        }
        drv_waiter_sleep(dev, seq, 1000000);
    }
    pthread_mutex_unlock(&nv->sync_lock);
    if (s && s != HCQ_ETIMEDOUT && !strstr(hcq_error_message(), what)) base_err_prefix(s, "%s", what);
    return s;
}

/* ** faults: the channels' error notifiers */
/* what an error notifier's Xid means (open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/nverror.h) */
static void rc_error_name(uint32_t code, char *buf, size_t size)
{
    static const struct {
        uint32_t xid;
        const char *name;
    } names[] = {
        {NV_RC_GR_EXCEPTION, "ROBUST_CHANNEL_GR_EXCEPTION (a graphics/compute engine exception)"},
        {NV_RC_FIFO_ERROR_MMU_ERR_FLT, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT (an MMU fault)"},
        {NV_RC_PBDMA_ERROR, "ROBUST_CHANNEL_PBDMA_ERROR (a malformed pushbuffer)"},
        {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR (the channel was reset)"},
        {44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW (a fault during a context switch)"},
        {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL (the channel was removed, e.g. another channel's error)"},
        {48, "ROBUST_CHANNEL_GPU_ECC_DBE (an uncorrectable ECC error)"},
        {69, "ROBUST_CHANNEL_GR_CLASS_ERROR (a bad method or class state)"},
        {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"},
        {94, "ROBUST_CHANNEL_CONTAINED_ERROR (a contained memory error)"},
        {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR (an uncontained memory error)"},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(names); i++)
        if (names[i].xid == code) {
            snprintf(buf, size, "%s", names[i].name);
            return;
        }
    int ce = nv_xid_ce_index(code);
    if (ce >= 0) snprintf(buf, size, "ROBUST_CHANNEL_CE%d_ERROR (a copy engine error)", ce);
    else snprintf(buf, size, "a channel error");
}

static void report(hcq_device *dev, nv_dev *nv, nv_chan *c, const nv_notification *n)
{
    uint32_t code = n->info32;
    char where[160] = "";
    /* the entry in flight: the first one the channel has not consumed */
    uint64_t done = consumed(c);
    uint32_t slot = (uint32_t)((done < c->put ? done : c->put - 1) % c->entries);
    const char *kernel = c->put && c->what[slot] ? c->what[slot] : "";
    char fault[256] = "";
    /* the debugger reads the compute channel's graphics context: RM records
     * GR faults there, not the copy engine's (kern_gmmu_gv100.c) */
    if (code == NV_RC_FIFO_ERROR_MMU_ERR_FLT && nv->hdebugger && c == &nv->ch[NV_CH_COMPUTE]) {
        nv_mmu_fault_info fi = {0};
        uint32_t status = 0;
        if (nv_control_status(nv->proc, nv->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, &fi, sizeof fi,
                                 &status, "reading the MMU fault") == HCQ_OK && status == NV_OK && fi.count &&
            fi.count <= 4) {
            /* oldest first (kgrctxLookupMmuFaultInfo_IMPL): the newest is last */
            const nv_mmu_fault_entry *e = &fi.mmuFaultInfoList[fi.count - 1];
            snprintf(fault, sizeof fault, " at address 0x%llx (%s access, fault type %u)",
                     (unsigned long long)e->faultAddress, e->accessType ? "write" : "read", e->faultType);
        }
    } else if (code == NV_RC_FIFO_ERROR_MMU_ERR_FLT) {
        snprintf(fault, sizeof fault, " (RM reports no address for a copy-engine fault; the kernel log has it)");
    }
    if (c == &nv->ch[NV_CH_COMPUTE] && kernel[0])
        snprintf(where, sizeof where, " while running kernel `%.64s`%s", kernel, c->more[slot] ? " (or a later one of its submission)" : "");
    char name[128];
    rc_error_name(code, name, sizeof name);
    drv_set_fault(dev, HCQ_EFAULT, "%s %s channel: %s (Xid %u)%s%s; GPFIFO entries consumed rptr %llu, submitted "
                  "wptr %llu, GPGet %u (USERD), GPPut %u. The channel is dead: close the device", dev->props.id, c->name,
                  name, code, fault, where, (unsigned long long)done, (unsigned long long)c->put,
                  gp_get(c) % c->entries, (unsigned)(c->put % c->entries));
}

void nv_poll(hcq_device *dev)
{
    nv_dev *nv = nv_of(dev);
    if (!nv || atomic_load(&nv->fault_reported)) return;
    for (int i = 0; i < 2; i++) {
        nv_chan *c = &nv->ch[i];
        if (!c->notifier.cpu) continue;
        const nv_notification *n = c->notifier.cpu;
        if (!atomic_load_explicit((_Atomic uint16_t *)(uintptr_t)&n->status, memory_order_acquire)) continue;
        if (atomic_exchange(&nv->fault_reported, 1)) return;
        report(dev, nv, c, n);
        return;
    }
}

void nv_describe(hcq_device *dev, char *buf, size_t size)
{
    nv_dev *nv = nv_of(dev);
    size_t off = 0;
    for (int i = 0; i < 2 && off < size; i++) {
        nv_chan *c = &nv->ch[i];
        if (!c->entries) continue;
        const nv_notification *n = c->notifier.cpu;
        uint64_t done = consumed(c);
        int k = snprintf(buf + off, size - off, "%s%s channel: rptr %llu, wptr %llu (GPFIFO entries consumed, by its "
                         "progress semaphore, and submitted; %llu waiting), GPGet %u (USERD, may lag), GPPut %u of %u "
                         "entries%s", off ? "; " : "", c->name,
                         (unsigned long long)done, (unsigned long long)c->put, (unsigned long long)(c->put - done),
                         gp_get(c) % c->entries, (unsigned)(c->put % c->entries), c->entries,
                         n && n->status ? ", error notifier set" : "");
        if (k < 0) break;
        off += (size_t)k;
    }
}

void nv_signal_written(hcq_device *dev, uint64_t va)
{
    (void)dev;
    sys_notify(va); /* hardware polls semaphores itself; the mock's engines sleep */
}
