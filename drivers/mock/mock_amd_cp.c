/* The mock GPU's compute command processor: it executes the PM4 we emit,
 * one XCC per engine thread, reading only what hardware reads: the ring
 * between its read position and the doorbell's write pointer, packets and
 * indirect buffers from GPU memory (MMU-checked), SET_SH_REG writes into a
 * register file, and at DISPATCH_DIRECT the program address, user SGPRs,
 * work-group size, LDS size and initiator from those registers. At the
 * program address is either the machine code of a code object the
 * process loaded (mock_amd_launch.c runs its host twin) or mock code
 * (compiler/mock_amd_code.h), which says which user SGPRs hold its
 * kernarg pointer, as real code does. Waits park the engine; releases
 * write memory and wake waiters; cache operations are checked for shape
 * and otherwise do nothing. Anything the hardware would choke on stops the
 * queue with the reason (mock_amd_hang).
 *
 * Multi-XCC parts (gfx942): KFD loads a compute queue's MQD on every XCC
 * (kfd_mqd_manager_v9.c init_mqd_v9_4_3). For an AQL queue every XCC runs
 * every packet, and a dispatch is split between them by
 * COMPUTE_TG_CHUNK_SIZE 1 and a rotation of COMPUTE_CURRENT_LOGIC_XCC_ID;
 * a PM4 queue's MQDs carry pm4_target_xcc (CREATE_QUEUE queue_percentage
 * bits 15:8) with chunk 0, and only that XCC runs it, whole grids
 * included. PRED_EXEC selects XCCs inside indirect buffers only. An AQL
 * packet with the barrier bit starts only once every XCC has finished the
 * packets before it. docs/amd-xcc.md says why the backend relies on
 * exactly this. Opcodes a family lacks (WAIT_REG_MEM64 on gfx9:
 * pm4_op_exists) stop the queue, as the CP would hang on them. */
#include "drivers/mock/mock_amd.h"

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/amd/amd_pm4.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum ex { EX_DONE, EX_BLOCKED, EX_STOP, EX_IB } ex;

#define REG(cp, id) ((cp)->regs[amd_regs[id].off[(cp)->q->gpu->arch->family] - AMD_SH_REG_BASE])

static ex hang(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static ex hang(mock_amd_cp *cp, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char msg[600];
    snprintf(msg, sizeof msg, "xcc %u: %s", cp->xcc, why);
    mock_amd_hang(cp->q, msg);
    return EX_STOP;
}

/* HCQ_MOCK_CONFIG refuse=NAME: the encoding hangs the queue, saying so */
static bool refused(mock_amd_cp *cp, const char *name)
{
    if (!mock_refused(name)) return false;
    const char *what = name;
    for (unsigned i = 0; i < mock_refusal_count; i++)
        if (!strcmp(mock_refusals[i].name, name)) what = mock_refusals[i].what;
    hang(cp, "refuse=%s: the mock hangs on %s, as asked (HCQ_MOCK_CONFIG)", name, what);
    return true;
}

static bool compare(uint32_t func, uint64_t v, uint64_t ref)
{
    switch (func) {
    case PM4_FUNC_ALWAYS: return true;
    case PM4_FUNC_LT: return v < ref;
    case PM4_FUNC_LE: return v <= ref;
    case PM4_FUNC_EQ: return v == ref;
    case PM4_FUNC_NE: return v != ref;
    case PM4_FUNC_GE: return v >= ref;
    case PM4_FUNC_GT: return v > ref;
    }
    return false;
}

static ex dispatch(mock_amd_cp *cp, const uint32_t *p)
{
    mock_amd_queue *q = cp->q;
    const amd_arch *a = q->gpu->arch;
    mock_amd_dispatch d = {.via = "DISPATCH_DIRECT", .initiator = p[4], .split = {0, 1, 0}};
    d.entry = (uint64_t)REG(cp, AMD_REG_PGM_HI) << 40 | (uint64_t)REG(cp, AMD_REG_PGM_LO) << 8;
    if (!amd_fget(AMD_INIT_COMPUTE_SHADER_EN, d.initiator)) return hang(cp, "DISPATCH_DIRECT: COMPUTE_SHADER_EN is off");
    if (REG(cp, AMD_REG_START_X) || REG(cp, AMD_REG_START_Y) || REG(cp, AMD_REG_START_Z))
        return hang(cp, "DISPATCH_DIRECT: COMPUTE_START_X/Y/Z are not 0");
    if (a->family == AMD_FAMILY_GFX11 &&
        refused(cp, amd_fget(AMD_RSRC1_PRIV, REG(cp, AMD_REG_PGM_RSRC1)) ? "priv-1" : "priv-0"))
        return EX_STOP;
    if (a->family == AMD_FAMILY_GFX9 && q->type == KFD_QUEUE_COMPUTE_AQL && refused(cp, "dispatch-pm4")) return EX_STOP;
    for (int i = 0; i < 3; i++) {
        d.grid[i] = p[1 + i];
        d.block[i] = (&REG(cp, AMD_REG_NUM_THREAD_X))[i] & 0xffff; /* NUM_THREAD_FULL */
        if (!d.block[i]) return hang(cp, "DISPATCH_DIRECT: COMPUTE_NUM_THREAD_%c is 0", "XYZ"[i]);
    }
    if (a->family == AMD_FAMILY_GFX9 && q->ncp > 1) {
        d.split.nparts = q->ncp;
        d.split.chunk = REG(cp, AMD_REG_TG_CHUNK_SIZE);
        d.split.part = REG(cp, AMD_REG_CURRENT_LOGIC_XCC_ID) % q->ncp;
    }
    return mock_amd_launch(cp, &d) ? EX_STOP : EX_DONE;
}

static ex set_sh_reg(mock_amd_cp *cp, const uint32_t *p, uint32_t n)
{
    amd_family fam = cp->q->gpu->arch->family;
    if (n < 3) return hang(cp, "SET_SH_REG with no value");
    for (uint32_t i = 0; i < n - 2; i++) {
        uint32_t reg = AMD_SH_REG_BASE + p[1] + i;
        if (reg >= AMD_SH_REG_END || !amd_reg_name(fam, reg))
            return hang(cp, "SET_SH_REG of register 0x%x, which the mock does not model for this GPU (0x2E2D is "
                        "COMPUTE_PGM_RSRC3 on gfx9 but COMPUTE_STATIC_THREAD_MGMT_SE6 on gfx11)", reg);
        cp->regs[reg - AMD_SH_REG_BASE] = p[2 + i];
    }
    return EX_DONE;
}

static ex release_mem(mock_amd_cp *cp, const uint32_t *p)
{
    mock_amd_queue *q = cp->q;
    if (amd_fget(PM4_EVENT_TYPE, p[1]) != PM4_EV_CACHE_FLUSH_AND_INV_TS || amd_fget(PM4_EVENT_INDEX, p[1]) != 5)
        return hang(cp, "RELEASE_MEM with event 0x%x index %u (the mock knows end-of-pipe 0x14/5)",
                    amd_fget(PM4_EVENT_TYPE, p[1]), amd_fget(PM4_EVENT_INDEX, p[1]));
    uint32_t sel = amd_fget(PM4_REL_DATA_SEL, p[2]);
    uint64_t addr = p[3] | (uint64_t)p[4] << 32, data = p[5] | (uint64_t)p[6] << 32;
    if (sel == PM4_DATA_NONE) {
        if (amd_fget(PM4_REL_INT_SEL, p[2])) mock_amd_interrupt(q->gpu, p[7]);
        return EX_DONE;
    }
    if (sel > PM4_DATA_CLOCK) return hang(cp, "RELEASE_MEM data_sel %u", sel);
    uint32_t size = sel == PM4_DATA_32 ? 4 : 8;
    if (addr % size) return hang(cp, "RELEASE_MEM to 0x%llx, not %u-byte aligned", (unsigned long long)addr, size);
    if (!mock_amd_access(q, addr, size, true, "RELEASE_MEM")) return EX_STOP;
    if (sel == PM4_DATA_CLOCK) data = mock_amd_clock();
    if (size == 4) atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)addr, (uint32_t)data, memory_order_release);
    else atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)addr, data, memory_order_release);
    /* INT_SEL: the interrupt after the write, its context id the KFD
     * event it signals (kfd_int_process_v9.c: a CP end-of-pipe interrupt
     * with a context id signals that event) */
    if (amd_fget(PM4_REL_INT_SEL, p[2])) mock_amd_interrupt(q->gpu, p[7]);
    mock_progress();
    return EX_DONE;
}

static ex acquire_mem(mock_amd_cp *cp, const uint32_t *p, uint32_t n)
{
    const amd_arch *a = cp->q->gpu->arch;
    if (n - 1 != a->acquire_body_dw)
        return hang(cp, "ACQUIRE_MEM of %u body dwords; %s takes %u", n - 1, a->name, a->acquire_body_dw);
    /* COHER_SIZE_HI is 8 bits (COHER_SIZE_HI_256B: the size in 256-byte
     * units is 40 bits); the kernel driver writes 0xffffff there for
     * "everything" (gfx_v9_0.c emit_mem_sync), tinygrad 0xffffffff. The
     * drivers do not say whether the CP masks the extra bits; it most
     * likely does, and all-ones means the whole address space either way */
    if (p[3] > 0xffffff) {
        if (p[3] != 0xffffffffu) return hang(cp, "ACQUIRE_MEM with COHER_SIZE_HI 0x%x (8 bits of size)", p[3]);
        mock_amd_doubt("acquire-size-hi", "ACQUIRE_MEM with COHER_SIZE_HI 0x%x: the field holds the size's high bits "
                       "(the kernel driver writes 0xffffff for the whole address space); the drivers' sources do not "
                       "say whether the CP ignores the bits above it. The mock takes it as the whole address space, "
                       "as the CP most likely does", p[3]);
    }
    if (p[5] > 0xffffff) return hang(cp, "ACQUIRE_MEM with COHER_BASE_HI 0x%x (the base is 56 bits)", p[5]);
    if (a->family == AMD_FAMILY_GFX11 && (p[1] || (p[7] & ~(uint32_t)AMD_GCR_KNOWN)))
        return hang(cp, "ACQUIRE_MEM: COHER_CNTL 0x%x (must be 0 on gfx11) or GCR_CNTL 0x%x with undefined bits", p[1],
                    p[7]);
    return EX_DONE; /* the mock has no caches to act on */
}

static ex wait_reg_mem(mock_amd_cp *cp, const uint32_t *p, bool is64)
{
    const amd_arch *a = cp->q->gpu->arch;
    uint32_t func = amd_fget(PM4_WAIT_FUNCTION, p[1]), space = amd_fget(PM4_WAIT_MEM_SPACE, p[1]),
             op = amd_fget(PM4_WAIT_OPERATION, p[1]);
    if (func > PM4_FUNC_GT) return hang(cp, "WAIT_REG_MEM function %u", func);
    if (!is64 && space == PM4_SPACE_REG && op == PM4_OP_WRITE_WAIT) {
        /* the HDP flush handshake: the flush is done at once */
        if (p[2] != a->hdp_flush_req || p[3] != a->hdp_flush_done)
            return hang(cp, "WAIT_REG_MEM writes register 0x%x and polls 0x%x, not the HDP flush pair 0x%x/0x%x: "
                        "on hardware it would poll a register that never changes", p[2], p[3], a->hdp_flush_req,
                        a->hdp_flush_done);
        /* the kernel driver's form: one MEC1 client bit, waited for with
         * EQUAL under itself as the mask (amdgpu gfx_v9_0.c / gfx_v11_0.c
         * ring_emit_hdp_flush: ref_and_mask_cp2 << pipe) */
        uint32_t ref = p[4], mask = p[5];
        if (func == PM4_FUNC_EQ && ref == mask && __builtin_popcount(ref) == 1 && (ref & AMD_HDP_FLUSH_MEC1_BITS))
            return refused(cp, "hdp-one-bit") ? EX_STOP : EX_DONE;
        /* every request bit written and every done bit awaited (>= or ==
         * against all ones): what tinygrad's stack runs on gfx11 and
         * gfx942. No source says what the HDP does with request bits of
         * clients that do not exist; most likely it flushes once and sets
         * the done bits, as that stack's runs show */
        if (ref == mask && (ref & AMD_HDP_FLUSH_MEC1_BITS) == AMD_HDP_FLUSH_MEC1_BITS &&
            (func == PM4_FUNC_GE || func == PM4_FUNC_EQ)) {
            if (refused(cp, "hdp-all-bits")) return EX_STOP;
            mock_amd_doubt("hdp-all-bits", "the HDP flush handshake writes 0x%x to GPU_HDP_FLUSH_REQ and waits for "
                           "(DONE & 0x%x) %s 0x%x: every client's bit, where the kernel driver writes its own pipe's "
                           "one bit (CP2 << pipe, 0x%x for pipe 0) and waits for it with EQUAL; the drivers' sources "
                           "do not say whether bits of absent clients ever read back as done. The mock takes the "
                           "flush as done, as the GPU most likely does (a public stack runs this form on gfx11 and "
                           "gfx942)", ref, mask, func == PM4_FUNC_GE ? ">=" : "==", ref, AMD_HDP_FLUSH_CP2);
            return EX_DONE;
        }
        return hang(cp, "the HDP flush handshake writes 0x%x and waits for (done & 0x%x) function %u: on hardware "
                    "it waits for bits no client set; write one MEC1 client bit (0x%x..0x%x) and wait for it "
                    "to equal itself", ref, mask, func, AMD_HDP_FLUSH_CP2, AMD_HDP_FLUSH_CP2 << 3);
    }
    if (space != PM4_SPACE_MEM || op != PM4_OP_WAIT)
        return hang(cp, "WAIT_REG_MEM%s on space %u operation %u", is64 ? "64" : "", space, op);
    if (a->family == AMD_FAMILY_GFX11 && refused(cp, is64 ? "wait-reg-mem64" : "wait-reg-mem32")) return EX_STOP;
    uint64_t addr = p[2] | (uint64_t)p[3] << 32;
    uint32_t size = is64 ? 8 : 4;
    if (addr % size) return hang(cp, "WAIT_REG_MEM%s on 0x%llx, not %u-byte aligned", is64 ? "64" : "",
                                 (unsigned long long)addr, size);
    if (!mock_amd_access(cp->q, addr, size, false, "WAIT_REG_MEM")) return EX_STOP;
    uint64_t v, ref, mask;
    if (is64) {
        v = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)addr, memory_order_acquire);
        ref = p[4] | (uint64_t)p[5] << 32;
        mask = p[6] | (uint64_t)p[7] << 32;
    } else {
        v = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)addr, memory_order_acquire);
        ref = p[4];
        mask = p[5];
    }
    return compare(func, v & mask, ref) ? EX_DONE : EX_BLOCKED;
}

static ex begin_ib(mock_amd_cp *cp, uint64_t va, uint32_t ndw)
{
    mock_amd_queue *q = cp->q;
    if (va % 4 || !ndw) return hang(cp, "INDIRECT_BUFFER at 0x%llx of %u dwords", (unsigned long long)va, ndw);
    if (!mock_amd_access(q, va, ndw * 4ull, false, "fetching an indirect buffer")) return EX_STOP;
    uint32_t *ib = realloc(cp->ib, ndw * 4ull);
    if (!ib) return hang(cp, "out of host memory for a %u-dword IB", ndw);
    memcpy(ib, (const void *)(uintptr_t)va, ndw * 4ull);
    cp->ib = ib;
    cp->ib_va = va;
    cp->ib_ndw = ndw;
    cp->ib_pos = 0;
    cp->in_ib = true;
    if (cp->xcc == 0) mock_dump(cp->running, "amd-pm4", q->gpu->arch->gfx_version, va, ib, ndw);
    return EX_IB;
}

/* one packet (n dwords at p) */
static ex packet(mock_amd_cp *cp, const uint32_t *p, uint32_t n, bool in_ib)
{
    uint32_t h = p[0], op = PM4_HDR_OP(h), body = n - 1;
    const amd_arch *a = cp->q->gpu->arch;
    if (!pm4_op_exists(a->family, op) && pm4_op_name(op))
        return hang(cp, "PM4 opcode 0x%02x (%s) does not exist on %s: its CP would not run it", op, pm4_op_name(op),
                    a->name);
    switch (op) {
    case PM4_NOP: return EX_DONE;
    case PM4_SET_SH_REG: return set_sh_reg(cp, p, n);
    case PM4_DISPATCH_DIRECT: return body == 4 ? dispatch(cp, p) : hang(cp, "DISPATCH_DIRECT of %u dwords", body);
    case PM4_RELEASE_MEM: return body == 7 ? release_mem(cp, p) : hang(cp, "RELEASE_MEM of %u dwords", body);
    case PM4_ACQUIRE_MEM: return acquire_mem(cp, p, n);
    case PM4_WAIT_REG_MEM: return body == 6 ? wait_reg_mem(cp, p, false) : hang(cp, "WAIT_REG_MEM of %u dwords", body);
    case PM4_WAIT_REG_MEM64: return body == 8 ? wait_reg_mem(cp, p, true) : hang(cp, "WAIT_REG_MEM64 of %u dwords", body);
    case PM4_EVENT_WRITE:
        /* dispatches finish before the next packet here: a partial flush
         * has nothing to wait for */
        if (body != 1 || amd_fget(PM4_EVENT_TYPE, p[1]) != PM4_EV_CS_PARTIAL_FLUSH)
            return hang(cp, "EVENT_WRITE 0x%x (the mock knows CS_PARTIAL_FLUSH)", p[1]);
        return EX_DONE;
    case PM4_INDIRECT_BUFFER:
        if (in_ib) return hang(cp, "INDIRECT_BUFFER inside an indirect buffer (chaining is not modelled)");
        if (body != 3 || !amd_fget(PM4_IB_VALID, p[3])) return hang(cp, "INDIRECT_BUFFER without VALID");
        return begin_ib(cp, p[1] | (uint64_t)p[2] << 32, amd_fget(PM4_IB_SIZE, p[3]));
    case PM4_PRED_EXEC:
        return hang(cp, "PRED_EXEC in the ring: the CP honours it only inside indirect buffers");
    }
    return hang(cp, "PM4 opcode 0x%02x (header 0x%08x)", op, h);
}

/* runs the current IB from where it stopped */
static ex run_ib(mock_amd_cp *cp)
{
    while (cp->ib_pos < cp->ib_ndw) {
        const uint32_t *p = cp->ib + cp->ib_pos;
        uint32_t h = p[0], n = PM4_HDR_BODY(h) + 1;
        if (PM4_HDR_TYPE(h) != 3 || cp->ib_pos + n > cp->ib_ndw)
            return hang(cp, "IB at 0x%llx, dword %u: header 0x%08x is not a type-3 packet that fits the IB",
                        (unsigned long long)cp->ib_va, cp->ib_pos, h);
        if (PM4_HDR_OP(h) == PM4_PRED_EXEC) {
            uint32_t devs = amd_fget(PM4_PRED_DEVICES, p[1]), count = amd_fget(PM4_PRED_COUNT, p[1]);
            cp->ib_pos += n + ((devs >> cp->xcc) & 1 ? 0 : count);
            continue;
        }
        ex r = packet(cp, p, n, true);
        if (r != EX_DONE) return r;
        cp->ib_pos += n;
    }
    cp->in_ib = false;
    return EX_DONE;
}

/* the read pointer in memory: the slowest XCC's */
static bool report_rptr(mock_amd_cp *cp)
{
    mock_amd_queue *q = cp->q;
    pthread_mutex_lock(&q->xcc_lock);
    uint64_t r = cp->rptr;
    for (uint32_t i = 0; i < q->ncp; i++) r = BASE_MIN(r, q->cp[i].rptr);
    pthread_mutex_unlock(&q->xcc_lock);
    if (!mock_amd_access(q, q->rptr_va, 8, true, "writing the read pointer")) return false;
    /* PM4 rings report a position in the ring, AQL a packet count */
    uint64_t v = q->type == KFD_QUEUE_COMPUTE_AQL ? r : r % (q->ring_size / 4);
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)q->rptr_va, v, memory_order_release);
    /* XCCs parked on a barrier packet look again; under the lock, as the
     * queue's teardown clears the engines there before freeing any */
    pthread_mutex_lock(&q->xcc_lock);
    for (uint32_t i = 0; i < q->ncp; i++)
        if (&q->cp[i] != cp && q->cp[i].engine) mock_engine_kick(q->cp[i].engine);
    pthread_mutex_unlock(&q->xcc_lock);
    return true;
}

static void advance(mock_amd_cp *cp, uint64_t by)
{
    pthread_mutex_lock(&cp->q->xcc_lock);
    cp->rptr += by;
    pthread_mutex_unlock(&cp->q->xcc_lock);
}

static mock_step pm4_step(mock_engine *e, void *ctx)
{
    mock_amd_cp *cp = ctx;
    cp->running = e;
    mock_amd_queue *q = cp->q;
    if (atomic_load(&q->stopped)) return MOCK_STEP_STOPPED;
    uint64_t ring_dw = q->ring_size / 4;
    if (cp->in_ib) {
        ex r = run_ib(cp);
        if (r == EX_BLOCKED) return MOCK_STEP_BLOCKED;
        if (r == EX_STOP) return MOCK_STEP_STOPPED;
        advance(cp, 4); /* past the INDIRECT_BUFFER packet */
        return report_rptr(cp) ? MOCK_STEP_PROGRESS : MOCK_STEP_STOPPED;
    }
    uint64_t wptr = mock_amd_doorbell(q);
    if (cp->rptr >= wptr) return MOCK_STEP_IDLE;
    if (!mock_amd_access(q, q->ring_va, q->ring_size, false, "fetching the ring")) return MOCK_STEP_STOPPED;
    const uint32_t *ring = (const uint32_t *)(uintptr_t)q->ring_va;
    if (cp->xcc == 0 && cp->dumped < wptr) {
        for (uint64_t d = BASE_MAX(cp->dumped, cp->rptr); d < wptr;) {
            uint64_t pos = d % ring_dw, n = BASE_MIN(wptr - d, ring_dw - pos);
            mock_dump(e, "amd-pm4", q->gpu->arch->gfx_version, q->ring_va + pos * 4, ring + pos, (uint32_t)n);
            d += n;
        }
        cp->dumped = wptr;
    }
    uint32_t h = ring[cp->rptr % ring_dw], n = PM4_HDR_BODY(h) + 1;
    if (PM4_HDR_TYPE(h) != 3 || n > ring_dw)
        return hang(cp, "ring dword %llu: header 0x%08x is not a type-3 packet", (unsigned long long)cp->rptr, h),
               MOCK_STEP_STOPPED;
    if (cp->rptr + n > wptr) return MOCK_STEP_IDLE; /* the rest is not published yet */
    uint32_t local[64], *p = n <= 64 ? local : malloc(n * 4ull);
    if (!p) return hang(cp, "out of host memory"), MOCK_STEP_STOPPED;
    for (uint32_t k = 0; k < n; k++) p[k] = ring[(cp->rptr + k) % ring_dw]; /* packets may wrap */
    ex r = packet(cp, p, n, false);
    if (p != local) free(p);
    switch (r) {
    case EX_BLOCKED: return MOCK_STEP_BLOCKED;
    case EX_STOP: return MOCK_STEP_STOPPED;
    case EX_IB: return MOCK_STEP_PROGRESS; /* the ring moves past it when the IB is done */
    case EX_DONE: break;
    }
    advance(cp, n);
    return report_rptr(cp) ? MOCK_STEP_PROGRESS : MOCK_STEP_STOPPED;
}

/* ** AQL: the packet processor (HSA Platform System Architecture spec,
 * "Architected Queuing Language"; ROCR amd_hsa_queue.h for the queue page
 * and the AMD vendor formats). It takes packets up to the write index the
 * MQD points at (amd_queue_t.write_dispatch_id, which the producer bumps
 * to reserve slots before it writes them), not the doorbell: the doorbell
 * only wakes it, and an untouched one (0) says nothing. A reserved slot
 * whose header still says INVALID is waited for. */

static mock_step aql_stop(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static mock_step aql_stop(mock_amd_cp *cp, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    hang(cp, "AQL packet %llu: %s", (unsigned long long)cp->rptr, why);
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
        hang(cp, "AQL packet %llu: amd_queue_t's read_dispatch_id_field_base_byte_offset is %u: the packet "
             "processor cannot find amd_queue_t (ROCR and hcq set it to 0x%x)", (unsigned long long)cp->rptr, off,
             AMD_QUEUE_RPTR_OFF);
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
        return hang(cp, "AQL packet %llu: completion signal 0x%llx is not 8-byte aligned", (unsigned long long)idx,
                    (unsigned long long)signal),
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
    uint64_t mailbox;
    uint32_t event;
    memcpy(&mailbox, s + AMD_SIGNAL_MAILBOX_OFF, 8);
    memcpy(&event, s + AMD_SIGNAL_EVENT_ID_OFF, 4);
    if (mailbox) {
        if (!mock_amd_access(q, mailbox, 8, true, "the completion signal's event mailbox")) return false;
        atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)mailbox, event, memory_order_release);
        mock_amd_interrupt(q->gpu, event);
    }
    mock_progress();
    return true;
}

/* The packet is done on this XCC: the read dispatch id moves past it
 * first (the slot is free once its work is), then its completion signal;
 * a waiter that sees the signal sees the read index past the packet. */
static mock_step aql_next(mock_amd_cp *cp, uint64_t signal)
{
    uint64_t idx = cp->rptr;
    advance(cp, 1);
    if (!report_rptr(cp)) return MOCK_STEP_STOPPED;
    return aql_complete(cp, idx, signal) ? MOCK_STEP_PROGRESS : MOCK_STEP_STOPPED;
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
    if (a->family == AMD_FAMILY_GFX9 && refused(cp, "dispatch-aql")) return MOCK_STEP_STOPPED;
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
    if (lane && !amd_fget(AMD_TMPRING_WAVES, tmpring))
        return aql_stop(cp, "the kernel has a %u-byte private segment and the queue no scratch (amd_queue_t "
                        "compute_tmpring_size 0x%x): the packet processor would stop and ask the runtime for scratch, "
                        "which the mock does not model; set the queue's scratch fields first", lane, tmpring);
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

static mock_step aql_step(mock_engine *e, void *ctx)
{
    mock_amd_cp *cp = ctx;
    cp->running = e;
    mock_amd_queue *q = cp->q;
    if (atomic_load(&q->stopped)) return MOCK_STEP_STOPPED;
    uint64_t slots = q->ring_size / AQL_PACKET_BYTES;
    if (cp->in_ib) {
        ex r = run_ib(cp);
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
    ex r = begin_ib(cp, pkt[2] | (uint64_t)pkt[3] << 32, amd_fget(PM4_IB_SIZE, pkt[4]));
    return r == EX_STOP ? MOCK_STEP_STOPPED : MOCK_STEP_PROGRESS;
}

hcq_status mock_amd_cp_start(mock_amd_queue *q)
{
    mock_amd_gpu *g = q->gpu;
    bool aql = q->type == KFD_QUEUE_COMPUTE_AQL;
    /* AQL: every XCC; PM4: the target XCC alone (its MQDs' pm4_target_xcc) */
    q->ncp = aql ? BASE_MIN(g->model->num_xcc, (uint32_t)MOCK_AMD_MAX_XCC) : 1;
    if (aql && !(q->aql_done = calloc(q->ring_size / AQL_PACKET_BYTES, sizeof *q->aql_done))) return HCQ_ENOMEM;
    uint32_t first = g->next_logical_xcc++;
    for (uint32_t x = 0; x < q->ncp; x++) {
        mock_amd_cp *cp = &q->cp[x];
        cp->q = q;
        cp->xcc = aql ? x : q->pm4_target_xcc;
        if (g->arch->family == AMD_FAMILY_GFX9) {
            /* what KFD's MQD loads (init_mqd_v9_4_3) */
            REG(cp, AMD_REG_TG_CHUNK_SIZE) = aql && q->ncp > 1 ? 1 : 0;
            REG(cp, AMD_REG_CURRENT_LOGIC_XCC_ID) = aql ? (first + x) % q->ncp : 0;
        }
    }
    for (uint32_t x = 0; x < q->ncp; x++) {
        mock_engine *e = mock_engine_start(g->g, q->name, aql ? aql_step : pm4_step, &q->cp[x]);
        if (!e) return HCQ_ENOMEM;
        pthread_mutex_lock(&q->xcc_lock);
        q->cp[x].engine = e;
        pthread_mutex_unlock(&q->xcc_lock);
    }
    return HCQ_OK;
}

void mock_amd_queue_stop(mock_amd_queue *q)
{
    atomic_store(&q->stopped, 1);
    /* an XCC still finishing a packet kicks its siblings: none may be
     * freed while another can reach it */
    mock_engine *e[MOCK_AMD_MAX_XCC];
    pthread_mutex_lock(&q->xcc_lock);
    for (uint32_t x = 0; x < q->ncp; x++) {
        e[x] = q->cp[x].engine;
        q->cp[x].engine = NULL;
    }
    pthread_mutex_unlock(&q->xcc_lock);
    /* every XCC is told first: one waiting for the GPU's shader pool must
     * not wait behind a sibling's kernel that nobody cancelled yet */
    for (uint32_t x = 0; x < q->ncp; x++) mock_engine_request_stop(e[x]);
    for (uint32_t x = 0; x < q->ncp; x++) mock_engine_stop(e[x]);
    mock_engine_stop(q->sdma);
    q->sdma = NULL;
}

void mock_amd_queue_bell(mock_amd_queue *q)
{
    uint8_t *u = atomic_load(&q->gpu->doorbell_user);
    if (!u) return;
    pthread_mutex_lock(&q->xcc_lock);
    for (uint32_t x = 0; x < q->ncp; x++)
        if (q->cp[x].engine) mock_engine_set_doorbell(q->cp[x].engine, u + 8ull * q->doorbell, 8);
    pthread_mutex_unlock(&q->xcc_lock);
    if (q->sdma) mock_engine_set_doorbell(q->sdma, u + 8ull * q->doorbell, 8);
}
