/* The mock GPU's AQL packet processor (HSA Platform System Architecture
 * spec, "Architected Queuing Language"; ROCR amd_hsa_queue.h for the queue
 * page and the AMD vendor formats), one XCC per engine thread beside the
 * PM4 command processor of mock_amd_cp.c, whose indirect buffers it runs
 * for the AMD PM4-IB vendor packet. It takes packets up to the write index
 * the MQD points at (amd_queue_t.write_dispatch_id, which the producer
 * bumps to reserve slots before it writes them), not the doorbell: the
 * doorbell only wakes it, and an untouched one (0) says nothing. A
 * reserved slot whose header still says INVALID is waited for. Kernel
 * dispatches reach the shader core through mock_amd_launch(), as
 * DISPATCH_DIRECT does. */
#include "drivers/mock/mock_amd.h"
#include "drivers/mock/mock_amd_cp.h"

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/amd/amd_pm4.h"

#include <stdarg.h>
#include <string.h>

static mock_step aql_stop(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static mock_step aql_stop(mock_amd_cp *cp, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    mock_amd_cp_hang(cp, "AQL packet %llu: %s", (unsigned long long)cp->rptr, why);
    return MOCK_STEP_STOPPED;
}

/* amd_queue_t's address: the packet processor knows where it reports the
 * read dispatch id (the MQD's read pointer address), and amd_queue_t says
 * how far into it that field is (read_dispatch_id_field_base_byte_offset,
 * the dword after it: ROCR amd_hsa_queue.h). 0 with the queue stopped when
 * that cannot be read or is nonsense. */
static uint64_t queue_t_of(mock_amd_cp *cp)
{
    mock_amd_queue *q = cp->q;
    if (!mock_amd_access(q, q->rptr_va + 8, 4, false, "reading amd_queue_t")) return 0;
    uint32_t off = *(const volatile uint32_t *)(uintptr_t)(q->rptr_va + 8);
    if (!off || off > q->rptr_va || off % 8) {
        aql_stop(cp, "amd_queue_t's read_dispatch_id_field_base_byte_offset is %u: the packet processor cannot "
                 "find amd_queue_t (ROCR and hcq set it to 0x%x)", off, AMD_QUEUE_RPTR_OFF);
        return 0;
    }
    uint64_t qa = q->rptr_va - off;
    return mock_amd_access(q, qa, AMD_QUEUE_PROPERTIES_OFF + 4, false, "reading amd_queue_t") ? qa : 0;
}

/* the value of the amd_signal_t at handle, or false (a fault, reported) */
static bool signal_value(mock_amd_cp *cp, uint64_t handle, int64_t *v, const char *what)
{
    uint64_t at = handle + AMD_SIGNAL_VALUE_OFFSET;
    if (at % 8) {
        aql_stop(cp, "%s 0x%llx: its value is not 8-byte aligned", what, (unsigned long long)handle);
        return false;
    }
    if (!mock_amd_access(cp->q, at, 8, false, what)) return false;
    *v = atomic_load_explicit((_Atomic int64_t *)(uintptr_t)at, memory_order_acquire);
    return true;
}

/* After a signal's value changed: a signal with an event mailbox gets its
 * event id there and raises the interrupt that signals that KFD event
 * (ROCR's interrupt signals sleep on it); then waiters are woken. */
static bool signal_event(mock_amd_queue *q, uint8_t *s, const char *what)
{
    uint64_t mailbox;
    uint32_t event;
    memcpy(&mailbox, s + AMD_SIGNAL_MAILBOX_OFF, 8);
    memcpy(&event, s + AMD_SIGNAL_EVENT_ID_OFF, 4);
    if (mailbox) {
        if (!mock_amd_access(q, mailbox, 8, true, what)) return false;
        atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)mailbox, event, memory_order_release);
        mock_amd_interrupt(q->gpu, event);
    }
    mock_progress();
    return true;
}

/* A packet is complete on this XCC; the last XCC to finish it completes
 * it for the queue: the completion signal's value drops by one (with the
 * queue's profiling on, its start and end times are written first), and
 * a signal with an event mailbox gets its event id there and raises the
 * interrupt that signals that KFD event. */
static bool aql_complete(mock_amd_cp *cp, uint64_t idx, uint64_t signal)
{
    mock_amd_queue *q = cp->q;
    uint64_t slots = q->ring_size / AQL_PACKET_BYTES;
    atomic_uint *done = &q->aql_done[idx % slots];
    if (atomic_fetch_add(done, 1) + 1 < q->ncp) return true;
    atomic_store(done, 0);
    if (!signal) return true;
    if (signal % 8)
        return mock_amd_cp_hang(cp, "AQL packet %llu: completion signal 0x%llx is not 8-byte aligned",
                                (unsigned long long)idx, (unsigned long long)signal),
               false;
    if (!mock_amd_access(q, signal, AMD_SIGNAL_BYTES, true, "the completion signal")) return false;
    uint8_t *s = (uint8_t *)(uintptr_t)signal;
    uint64_t qa = queue_t_of(cp);
    if (!qa) return false;
    uint32_t props = *(const uint32_t *)(uintptr_t)(qa + AMD_QUEUE_PROPERTIES_OFF);
    if (props & AMD_QUEUE_PROP_ENABLE_PROFILING) {
        uint64_t now = mock_amd_clock();
        memcpy(s + AMD_SIGNAL_START_TS_OFF, &now, 8);
        memcpy(s + AMD_SIGNAL_END_TS_OFF, &now, 8);
    }
    atomic_fetch_sub_explicit((_Atomic int64_t *)(s + AMD_SIGNAL_VALUE_OFFSET), 1, memory_order_acq_rel);
    return signal_event(q, s, "the completion signal's event mailbox");
}

/* The packet is done on this XCC: the read dispatch id moves past it
 * first (the slot is free once its work is), then its completion signal;
 * a waiter that sees the signal sees the read index past the packet. */
static mock_step aql_next(mock_amd_cp *cp, uint64_t signal)
{
    uint64_t idx = cp->rptr;
    mock_amd_cp_advance(cp, 1);
    if (!mock_amd_cp_report_rptr(cp)) return MOCK_STEP_STOPPED;
    return aql_complete(cp, idx, signal) ? MOCK_STEP_PROGRESS : MOCK_STEP_STOPPED;
}

/* A dispatch needs more scratch than the queue has: the packet processor
 * stops the queue before it, sets queue_inactive_signal to error code 1
 * (insufficient scratch) and raises that signal's event; the runtime
 * (ROCR amd_aql_queue.cpp DynamicScratchHandler, reading the packet at
 * read_dispatch_id) fills amd_queue_t's scratch fields and stores 0,
 * which restarts the queue at the same packet; a value it leaves nonzero
 * (-1 after an error it could not recover) keeps the queue stopped. XCC 0
 * asks, every XCC then blocks until the value is 0 again. With no
 * queue_inactive_signal there is nobody to ask: the queue hangs, saying
 * so. PROGRESS: asked. */
static mock_step ask_for_scratch(mock_amd_cp *cp, uint64_t qa, uint32_t lane, uint32_t tmpring, uint32_t have)
{
    mock_amd_queue *q = cp->q;
    uint64_t sig;
    memcpy(&sig, (const void *)(uintptr_t)(qa + AMD_QUEUE_INACTIVE_SIGNAL_OFF), 8);
    if (!sig)
        return aql_stop(cp, "the kernel has a %u-byte private segment and the queue %u bytes a lane (amd_queue_t "
                        "compute_tmpring_size 0x%x), and no queue_inactive_signal to ask the runtime for more "
                        "through: set the queue's scratch fields first", lane, have, tmpring);
    int64_t v;
    if (!signal_value(cp, sig, &v, "queue_inactive_signal")) return MOCK_STEP_STOPPED;
    if (v != 0) return MOCK_STEP_BLOCKED; /* asked (or stopped for good): the runtime's turn */
    /* (XCC 0 asks; an answer of 0 with too little scratch is asked again) */
    if (cp->xcc != 0) return MOCK_STEP_BLOCKED;
    uint8_t *s = (uint8_t *)(uintptr_t)sig;
    if (!mock_amd_access(q, sig, AMD_SIGNAL_BYTES, true, "queue_inactive_signal")) return MOCK_STEP_STOPPED;
    atomic_store_explicit((_Atomic int64_t *)(s + AMD_SIGNAL_VALUE_OFFSET), AMD_QUEUE_ERROR_SCRATCH,
                          memory_order_release);
    return signal_event(q, s, "queue_inactive_signal's event mailbox") ? MOCK_STEP_PROGRESS : MOCK_STEP_STOPPED;
}

/* The packet processor's side of a kernel-dispatch packet: it programs the
 * compute registers from the packet and the kernel descriptor it points at
 * (the program address, RSRC1-3 with LDS_SIZE from the packet's group
 * segment, the user SGPRs the descriptor enables in their ABI order, the
 * queue's scratch from amd_queue_t) and starts the work-groups, as
 * DISPATCH_DIRECT does after SET_SH_REGs. Layouts: llvm-project
 * llvm/docs/AMDGPUUsage.rst "Initial Kernel Execution State". */
static mock_step aql_kernel_dispatch(mock_amd_cp *cp, uint64_t va, const aql_dispatch *k)
{
    mock_amd_queue *q = cp->q;
    const amd_arch *a = q->gpu->arch;
    if (a->family == AMD_FAMILY_GFX9 && mock_amd_cp_refused(cp, "dispatch-aql")) return MOCK_STEP_STOPPED;
    uint32_t dims = k->setup & AQL_SETUP_DIMS_MASK;
    if (!dims) return aql_stop(cp, "a kernel dispatch with setup.dimensions 0 (1, 2 or 3)");
    mock_amd_dispatch d = {.via = "AQL kernel dispatch", .kernargs = k->kernarg_address, .split = {0, 1, 0}};
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t wg = k->workgroup_size[i], gs = k->grid_size[i];
        if (!wg || !gs)
            return aql_stop(cp, "a kernel dispatch with workgroup_size_%c %u and grid_size_%c %u", "xyz"[i], wg,
                            "xyz"[i], gs);
        if (i >= dims && (wg != 1 || gs != 1))
            return aql_stop(cp, "a %u-dimensional kernel dispatch with workgroup_size_%c %u, grid_size_%c %u (unused "
                            "dimensions are 1)", dims, "xyz"[i], wg, "xyz"[i], gs);
        if (gs % wg)
            return aql_stop(cp, "grid_size_%c %u is not a multiple of workgroup_size_%c %u: the hardware runs a "
                            "partial last work-group, which the mock's shader core does not model", "xyz"[i], gs,
                            "xyz"[i], wg);
        d.grid[i] = gs / wg;
        d.block[i] = wg;
    }
    if (k->kernel_object % 64)
        return aql_stop(cp, "kernel_object 0x%llx is not a 64-byte aligned kernel descriptor",
                        (unsigned long long)k->kernel_object);
    if (k->kernarg_address % AQL_KERNARG_ALIGN)
        return aql_stop(cp, "kernarg_address 0x%llx is not 16-byte aligned", (unsigned long long)k->kernarg_address);
    if (!mock_amd_access(q, k->kernel_object, sizeof(amd_kernel_descriptor), false, "reading the kernel descriptor"))
        return MOCK_STEP_STOPPED;
    amd_kernel_descriptor kd;
    memcpy(&kd, (const void *)(uintptr_t)k->kernel_object, sizeof kd);
    d.entry = k->kernel_object + (uint64_t)kd.kernel_code_entry_byte_offset;
    if (d.entry % 256)
        return aql_stop(cp, "the kernel descriptor at 0x%llx puts the code at 0x%llx, not 256-byte aligned",
                        (unsigned long long)k->kernel_object, (unsigned long long)d.entry);
    uint32_t lds_blocks = (k->group_segment_size + AMD_LDS_BLOCK_BYTES - 1) / AMD_LDS_BLOCK_BYTES;
    if (!amd_ffits(AMD_RSRC2_LDS_SIZE, lds_blocks) || k->group_segment_size > q->gpu->model->lds_kib * 1024)
        return aql_stop(cp, "group_segment_size %u is more LDS than a %s work-group has (%u KiB)", k->group_segment_size,
                        q->gpu->model->name, q->gpu->model->lds_kib);
    /* the queue's scratch, as the runtime set it in amd_queue_t */
    uint64_t qa = queue_t_of(cp);
    if (!qa) return MOCK_STEP_STOPPED;
    /* field by field: the runtime may be updating them (it writes them so) */
    uint8_t *aq = (uint8_t *)(uintptr_t)qa;
    uint32_t tmpring = atomic_load_explicit((_Atomic uint32_t *)(aq + AMD_QUEUE_TMPRING_OFF), memory_order_acquire);
    uint32_t srd[4];
    for (int i = 0; i < 4; i++)
        srd[i] = atomic_load_explicit((_Atomic uint32_t *)(aq + AMD_QUEUE_SCRATCH_SRD_OFF + 4 * i), memory_order_relaxed);
    uint64_t sbase = atomic_load_explicit((_Atomic uint64_t *)(aq + AMD_QUEUE_SCRATCH_BASE_OFF), memory_order_relaxed);
    uint64_t sbytes = atomic_load_explicit((_Atomic uint64_t *)(aq + AMD_QUEUE_SCRATCH_BYTES_OFF), memory_order_relaxed);
    uint32_t lane = BASE_MAX(k->private_segment_size, kd.private_segment_fixed_size);
    uint32_t have = atomic_load_explicit((_Atomic uint32_t *)(aq + AMD_QUEUE_SCRATCH_LANE_OFF), memory_order_relaxed);
    if (lane && (!amd_fget(AMD_TMPRING_WAVES, tmpring) || lane > have)) {
        mock_step r = ask_for_scratch(cp, qa, lane, tmpring, have);
        if (r != MOCK_STEP_PROGRESS) return r;
        return MOCK_STEP_BLOCKED; /* (the fields are read again on the retry) */
    }
    if (q->ncp > 1) sbase += cp->xcc * (sbytes / q->ncp); /* each XCC its slice */
    /* the registers, as SET_SH_REG would have set them */
    REG(cp, AMD_REG_PGM_LO) = (uint32_t)(d.entry >> 8);
    REG(cp, AMD_REG_PGM_HI) = (uint32_t)(d.entry >> 40);
    REG(cp, AMD_REG_PGM_RSRC1) = kd.compute_pgm_rsrc1;
    REG(cp, AMD_REG_PGM_RSRC2) =
        (kd.compute_pgm_rsrc2 & ~amd_fmask(AMD_RSRC2_LDS_SIZE)) | amd_fset(AMD_RSRC2_LDS_SIZE, lds_blocks);
    REG(cp, AMD_REG_PGM_RSRC3) = kd.compute_pgm_rsrc3;
    REG(cp, AMD_REG_TMPRING_SIZE) = tmpring;
    REG(cp, AMD_REG_DISPATCH_SCRATCH_BASE_LO) = (uint32_t)(sbase >> 8);
    REG(cp, AMD_REG_DISPATCH_SCRATCH_BASE_HI) = (uint32_t)(sbase >> 40);
    REG(cp, AMD_REG_START_X) = REG(cp, AMD_REG_START_Y) = REG(cp, AMD_REG_START_Z) = 0;
    for (int i = 0; i < 3; i++) (&REG(cp, AMD_REG_NUM_THREAD_X))[i] = d.block[i];
    amd_sgpr_layout L;
    amd_sgpr_layout_of(kd.kernel_code_properties, &L);
    if (L.count > AMD_USER_DATA_COUNT)
        return aql_stop(cp, "the kernel descriptor enables %u user SGPRs, more than the %u the hardware loads", L.count,
                        AMD_USER_DATA_COUNT);
    uint32_t *ud = &REG(cp, AMD_REG_USER_DATA_0);
    int8_t f;
    if ((f = L.first[AMD_SGPR_PRIVATE_SEGMENT_BUFFER]) >= 0) memcpy(&ud[f], srd, 16);
    uint64_t two[AMD_SGPR_KIND_COUNT] = {
        [AMD_SGPR_DISPATCH_PTR] = va, [AMD_SGPR_QUEUE_PTR] = qa,
        [AMD_SGPR_KERNARG_PTR] = k->kernarg_address, [AMD_SGPR_DISPATCH_ID] = cp->rptr,
        [AMD_SGPR_FLAT_SCRATCH_INIT] = sbase};
    for (int kind = AMD_SGPR_DISPATCH_PTR; kind <= AMD_SGPR_FLAT_SCRATCH_INIT; kind++)
        if ((f = L.first[kind]) >= 0) {
            ud[f] = (uint32_t)two[kind];
            ud[f + 1] = (uint32_t)(two[kind] >> 32);
        }
    if ((f = L.first[AMD_SGPR_PRIVATE_SEGMENT_SIZE]) >= 0) ud[f] = k->private_segment_size;
    d.initiator = amd_fset(AMD_INIT_COMPUTE_SHADER_EN, 1) | amd_fset(AMD_INIT_FORCE_START_AT_000, 1);
    if (a->family == AMD_FAMILY_GFX11 && (kd.kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32))
        d.initiator |= amd_fset(AMD_INIT_CS_W32_EN, 1);
    if (a->family == AMD_FAMILY_GFX9 && q->ncp > 1) {
        d.split.nparts = q->ncp;
        d.split.chunk = REG(cp, AMD_REG_TG_CHUNK_SIZE);
        d.split.part = REG(cp, AMD_REG_CURRENT_LOGIC_XCC_ID) % q->ncp;
    }
    if (cp->xcc == 0)
        mock_dump(cp->running, "amd-aql", a->gfx_version, va, (const uint32_t *)k, AQL_PACKET_BYTES / 4);
    if (mock_amd_launch(cp, &d)) return MOCK_STEP_STOPPED;
    return aql_next(cp, k->completion_signal);
}

/* barrier-AND: complete once every dependency signal is 0; barrier-OR:
 * once any is (a zero handle is no dependency) */
static mock_step aql_barrier_andor(mock_amd_cp *cp, const aql_barrier *b, bool is_and)
{
    bool any = false, all = true, none = true;
    for (int i = 0; i < 5; i++) {
        if (!b->dep_signal[i]) continue;
        none = false;
        int64_t v;
        if (!signal_value(cp, b->dep_signal[i], &v, is_and ? "a barrier-AND dependency signal"
                                                            : "a barrier-OR dependency signal"))
            return MOCK_STEP_STOPPED;
        any = any || v == 0;
        all = all && v == 0;
    }
    if (!(is_and ? all : any || none)) return MOCK_STEP_BLOCKED;
    return aql_next(cp, b->completion_signal);
}

mock_step mock_amd_aql_step(mock_engine *e, void *ctx)
{
    mock_amd_cp *cp = ctx;
    cp->running = e;
    mock_amd_queue *q = cp->q;
    if (atomic_load(&q->stopped)) return MOCK_STEP_STOPPED;
    uint64_t slots = q->ring_size / AQL_PACKET_BYTES;
    if (cp->in_ib) {
        ex r = mock_amd_cp_run_ib(cp);
        if (r == EX_BLOCKED) return MOCK_STEP_BLOCKED;
        if (r == EX_STOP) return MOCK_STEP_STOPPED;
        /* the vendor packet is done on this XCC: its completion signal */
        uint64_t sig;
        memcpy(&sig, (const uint8_t *)(uintptr_t)(q->ring_va + (cp->rptr % slots) * AQL_PACKET_BYTES) + 56, 8);
        return aql_next(cp, sig);
    }
    /* the write index in amd_queue_t, where the MQD points; the doorbell
     * only woke us */
    if (!mock_amd_access(q, q->wptr_va, 8, false, "reading the write index")) return MOCK_STEP_STOPPED;
    uint64_t avail = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)q->wptr_va, memory_order_acquire);
    if (cp->rptr >= avail) return MOCK_STEP_IDLE;
    uint64_t va = q->ring_va + (cp->rptr % slots) * AQL_PACKET_BYTES;
    if (!mock_amd_access(q, va, AQL_PACKET_BYTES, false, "fetching an AQL packet")) return MOCK_STEP_STOPPED;
    const uint32_t *pkt = (const uint32_t *)(uintptr_t)va;
    uint32_t hdr = atomic_load_explicit((_Atomic uint32_t *)pkt, memory_order_acquire);
    uint32_t type = hdr & 0xff;
    if (type == AQL_TYPE_INVALID) return MOCK_STEP_IDLE; /* reserved, not written yet */
    if ((hdr >> AQL_HDR_ACQUIRE_SHIFT & 3) == AQL_SCOPE_RESERVED || (hdr >> AQL_HDR_RELEASE_SHIFT & 3) == AQL_SCOPE_RESERVED)
        return aql_stop(cp, "header 0x%04x has a reserved fence scope (3)", hdr & 0xffff);
    if (hdr & AQL_HDR_BARRIER) {
        /* every XCC done with the packets before this one */
        pthread_mutex_lock(&q->xcc_lock);
        bool ready = true;
        for (uint32_t i = 0; i < q->ncp; i++) ready = ready && q->cp[i].rptr >= cp->rptr;
        pthread_mutex_unlock(&q->xcc_lock);
        if (!ready) return MOCK_STEP_BLOCKED;
    }
    /* the acquire and release fences order memory; the mock's engines see
     * memory as the host writes it, so they have nothing more to do */
    uint8_t copy[AQL_PACKET_BYTES];
    memcpy(copy, pkt, sizeof copy);
    switch (type) {
    case AQL_TYPE_KERNEL_DISPATCH: {
        aql_dispatch k;
        memcpy(&k, copy, sizeof k);
        return aql_kernel_dispatch(cp, va, &k);
    }
    case AQL_TYPE_BARRIER_AND:
    case AQL_TYPE_BARRIER_OR: {
        aql_barrier b;
        memcpy(&b, copy, sizeof b);
        return aql_barrier_andor(cp, &b, type == AQL_TYPE_BARRIER_AND);
    }
    case AQL_TYPE_AGENT_DISPATCH:
        return aql_stop(cp, "an agent-dispatch packet on a GPU queue (they are for agents that are not GPUs)");
    case AQL_TYPE_VENDOR: break;
    default: return aql_stop(cp, "header 0x%04x: packet type %u is no AQL packet type", hdr & 0xffff, type);
    }
    uint32_t fmt = hdr >> 16 & 0xff;
    if (fmt == AQL_AMD_FORMAT_BARRIER_VALUE) {
        aql_barrier_value b;
        memcpy(&b, copy, sizeof b);
        int64_t v;
        if (b.cond != AQL_COND_GTE)
            return aql_stop(cp, "a barrier-value packet with condition %u (the mock runs GTE)", b.cond);
        if (!signal_value(cp, b.signal, &v, "a barrier-value packet's signal")) return MOCK_STEP_STOPPED;
        if (((uint64_t)v & b.mask) < b.value) return MOCK_STEP_BLOCKED;
        return aql_next(cp, b.completion_signal);
    }
    if (fmt != AQL_AMD_FORMAT_PM4_IB)
        return aql_stop(cp, "header 0x%08x: AMD vendor format %u (the mock runs PM4-IB 1 and barrier-value 2)", hdr, fmt);
    if (pkt[1] != PM4_HDR(PM4_INDIRECT_BUFFER, 3) || !amd_fget(PM4_IB_VALID, pkt[4]) || pkt[5] != AQL_PM4_IB_REMAIN)
        return aql_stop(cp, "not an INDIRECT_BUFFER with VALID and dw_cnt_remain %u", AQL_PM4_IB_REMAIN);
    ex r = mock_amd_cp_begin_ib(cp, pkt[2] | (uint64_t)pkt[3] << 32, amd_fget(PM4_IB_SIZE, pkt[4]));
    return r == EX_STOP ? MOCK_STEP_STOPPED : MOCK_STEP_PROGRESS;
}
