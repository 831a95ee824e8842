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
 * pm4_op_exists) stop the queue, as the CP would hang on them. AQL queues'
 * packets: mock_amd_aql.c, through the helpers of mock_amd_cp.h. */
#include "drivers/mock/mock_amd.h"
#include "drivers/mock/mock_amd_cp.h"

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/amd/amd_pm4.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static ex vhang(mock_amd_cp *cp, const char *fmt, va_list ap)
{
    char why[512];
    vsnprintf(why, sizeof why, fmt, ap);
    char msg[600];
    snprintf(msg, sizeof msg, "xcc %u: %s", cp->xcc, why);
    mock_amd_hang(cp->q, msg);
    return EX_STOP;
}

static ex hang(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static ex hang(mock_amd_cp *cp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ex r = vhang(cp, fmt, ap);
    va_end(ap);
    return r;
}

ex mock_amd_cp_hang(mock_amd_cp *cp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ex r = vhang(cp, fmt, ap);
    va_end(ap);
    return r;
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

/* the read pointer in memory: the slowest XCC's. The minimum is taken and
 * stored under one hold of the lock: XCCs finish the same packet at about
 * the same time, and one that took its minimum before a sibling advanced
 * but stored it after the sibling's store would move the read pointer
 * back, for good once the queue is idle (the read dispatch id the CP
 * reports never goes back). The random schedule (HCQ_MOCK_SCHED) may pause
 * between the two, so a test can show that this holds. */
static bool report_rptr(mock_amd_cp *cp)
{
    mock_amd_queue *q = cp->q;
    if (!mock_amd_access(q, q->rptr_va, 8, true, "writing the read pointer")) return false;
    pthread_mutex_lock(&q->xcc_lock);
    uint64_t r = cp->rptr;
    for (uint32_t i = 0; i < q->ncp; i++) r = BASE_MIN(r, q->cp[i].rptr);
    if (q->ncp > 1) mock_sched_point(cp->running);
    /* PM4 rings report a position in the ring, AQL a packet count */
    uint64_t v = q->type == KFD_QUEUE_COMPUTE_AQL ? r : r % (q->ring_size / 4);
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)q->rptr_va, v, memory_order_release);
    /* XCCs parked on a barrier packet look again; under the lock, as the
     * queue's teardown clears the engines there before freeing any */
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

/* ** what the AQL packet processor (mock_amd_aql.c) uses of the PM4 half */
bool mock_amd_cp_refused(mock_amd_cp *cp, const char *name) { return refused(cp, name); }
ex mock_amd_cp_begin_ib(mock_amd_cp *cp, uint64_t va, uint32_t ndw) { return begin_ib(cp, va, ndw); }
ex mock_amd_cp_run_ib(mock_amd_cp *cp) { return run_ib(cp); }
void mock_amd_cp_advance(mock_amd_cp *cp, uint64_t by) { advance(cp, by); }
bool mock_amd_cp_report_rptr(mock_amd_cp *cp) { return report_rptr(cp); }

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
        mock_engine *e = mock_engine_start(g->g, q->name, aql ? mock_amd_aql_step : pm4_step, &q->cp[x]);
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
