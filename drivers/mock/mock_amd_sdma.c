/* The mock GPU's SDMA engine: it walks the copy ring between its read
 * pointer and the doorbell's write pointer (bytes), packet by packet, and
 * refuses a packet that straddles the ring end (hardware reads past it).
 * Copies move memory after checking both ranges against the GPU's
 * mappings; FENCE writes 32 bits; TRAP raises the interrupt of its
 * context (the KFD event of that id); POLL_REGMEM of memory parks the
 * engine until its condition holds, of a register passes for ALWAYS and
 * the HDP flush pair and stops the queue otherwise; TIMESTAMP writes the
 * clock; GCR_REQ is checked and otherwise a no-op; ATOMIC (ADD64) and
 * CONST_FILL (dwords), which hcq does not emit, are what ROCm's runtime
 * uses beside them. */
#include "drivers/mock/mock_amd.h"

#include "base/base.h"
#include "drivers/amd/amd_sdma.h"

#include <string.h>

typedef enum { S_DONE, S_BLOCKED, S_STOP } sres;

static sres shang(mock_amd_queue *q, const char *fmt, ...) HCQ_PRINTF(2, 3);
static sres shang(mock_amd_queue *q, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    mock_amd_hang(q, why);
    return S_STOP;
}

static bool cmp(uint32_t func, uint32_t v, uint32_t ref)
{
    switch (func) {
    case 0: return true;
    case 1: return v < ref;
    case 2: return v <= ref;
    case 3: return v == ref;
    case 4: return v != ref;
    case 5: return v >= ref;
    case 6: return v > ref;
    }
    return false;
}

static sres run(mock_amd_queue *q, const uint32_t *p)
{
    const amd_arch *a = q->gpu->arch;
    uint32_t op = amd_fget(SDMA_HDR_OP, p[0]);
    uint64_t addr;
    switch (op) {
    case SDMA_OP_NOP: return S_DONE;
    case SDMA_OP_COPY: {
        uint32_t mask = a->sdma_count_bits >= 32 ? 0xffffffffu : (1u << a->sdma_count_bits) - 1;
        if (p[1] & ~mask) return shang(q, "COPY_LINEAR count 0x%x has bits above its %u-bit field", p[1], a->sdma_count_bits);
        uint64_t n = (uint64_t)(p[1] & mask) + 1, src = p[3] | (uint64_t)p[4] << 32, dst = p[5] | (uint64_t)p[6] << 32;
        if (n > a->sdma_copy_max)
            return shang(q, "COPY_LINEAR of %llu bytes; SDMA %u copies at most %llu in one packet", (unsigned long long)n,
                         a->sdma_major, (unsigned long long)a->sdma_copy_max);
        if (!mock_amd_access(q, src, n, false, "COPY_LINEAR source") || !mock_amd_access(q, dst, n, true, "COPY_LINEAR destination"))
            return S_STOP;
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
        return S_DONE;
    }
    case SDMA_OP_FENCE:
        if (!a->sdma_fence_mtype && amd_fget(SDMA_FENCE_MTYPE, p[0]))
            return shang(q, "FENCE with an MTYPE, which SDMA %u does not have", a->sdma_major);
        addr = p[1] | (uint64_t)p[2] << 32;
        if (addr % 4) return shang(q, "FENCE to 0x%llx, not 4-byte aligned", (unsigned long long)addr);
        if (!mock_amd_access(q, addr, 4, true, "FENCE")) return S_STOP;
        atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)addr, p[3], memory_order_release);
        mock_progress();
        return S_DONE;
    case SDMA_OP_TRAP:
        /* the interrupt with its context id: the KFD event of that id
         * (sdma_v4_0.c sdma_v4_0_ring_emit_fence: TRAP after the fence) */
        mock_amd_interrupt(q->gpu, amd_fget(SDMA_TRAP_CONTEXT, p[1]));
        return S_DONE;
    case SDMA_OP_POLL_REGMEM: {
        uint32_t func = amd_fget(SDMA_POLL_FUNC, p[0]);
        if (func > 6) return shang(q, "POLL_REGMEM function %u", func);
        if (!amd_fget(SDMA_POLL_MEM, p[0])) {
            /* a register poll: ALWAYS passes without reading it (ROCm's
             * runtime emits one so); the HDP flush handshake (DW1/DW2 the
             * DONE/REQ registers' byte offsets, sdma_v4_0.c
             * sdma_v4_0_ring_emit_hdp_flush) completes at once; the mock has
             * no other registers */
            if (func == PM4_FUNC_ALWAYS) return S_DONE;
            if (amd_fget(SDMA_POLL_HDP_FLUSH, p[0]) && p[1] == a->hdp_flush_done * 4u && p[2] == a->hdp_flush_req * 4u)
                return S_DONE;
            return shang(q, "POLL_REGMEM of register 0x%x (function %u%s): the mock models no registers but the HDP "
                         "flush pair 0x%x/0x%x", p[1] / 4, func, amd_fget(SDMA_POLL_HDP_FLUSH, p[0]) ? ", HDP flush" : "",
                         a->hdp_flush_req, a->hdp_flush_done);
        }
        if (amd_fget(SDMA_POLL_HDP_FLUSH, p[0])) return shang(q, "POLL_REGMEM of memory with HDP flush set");
        addr = p[1] | (uint64_t)p[2] << 32;
        if (addr % 4) return shang(q, "POLL_REGMEM on 0x%llx, not 4-byte aligned", (unsigned long long)addr);
        if (!mock_amd_access(q, addr, 4, false, "POLL_REGMEM")) return S_STOP;
        uint32_t v = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)addr, memory_order_acquire);
        return cmp(func, v & p[4], p[3]) ? S_DONE : S_BLOCKED;
    }
    case SDMA_OP_ATOMIC: {
        /* (what ROCm's runtime emits: a signal's 64-bit decrement) */
        uint32_t aop = amd_fget(SDMA_ATOMIC_OP, p[0]);
        if (aop != SDMA_ATOMIC_ADD64 || amd_fget(SDMA_ATOMIC_LOOP, p[0]))
            return shang(q, "ATOMIC operation %u%s: the mock models ADD64 (47) only", aop,
                         amd_fget(SDMA_ATOMIC_LOOP, p[0]) ? " with LOOP" : "");
        addr = p[1] | (uint64_t)p[2] << 32;
        if (addr % 8) return shang(q, "ATOMIC on 0x%llx, not 8-byte aligned", (unsigned long long)addr);
        if (!mock_amd_access(q, addr, 8, true, "ATOMIC")) return S_STOP;
        atomic_fetch_add_explicit((_Atomic uint64_t *)(uintptr_t)addr, p[3] | (uint64_t)p[4] << 32, memory_order_acq_rel);
        mock_progress();
        return S_DONE;
    }
    case SDMA_OP_CONST_FILL: {
        uint32_t mask = a->sdma_count_bits >= 32 ? 0xffffffffu : (1u << a->sdma_count_bits) - 1;
        if (amd_fget(SDMA_FILL_SIZE, p[0]) != SDMA_FILL_DWORDS)
            return shang(q, "CONST_FILL of %u-byte units: the mock models dword fills (FILLSIZE 2) only",
                         1u << amd_fget(SDMA_FILL_SIZE, p[0]));
        if (p[4] & ~mask) return shang(q, "CONST_FILL count 0x%x has bits above its %u-bit field", p[4], a->sdma_count_bits);
        uint64_t n = (uint64_t)(p[4] & mask) + 1;
        addr = p[1] | (uint64_t)p[2] << 32;
        if (addr % 4 || n % 4)
            return shang(q, "CONST_FILL of %llu bytes at 0x%llx: dword fills take whole aligned dwords",
                         (unsigned long long)n, (unsigned long long)addr);
        if (!mock_amd_access(q, addr, n, true, "CONST_FILL")) return S_STOP;
        for (uint64_t i = 0; i < n; i += 4) memcpy((uint8_t *)(uintptr_t)addr + i, &p[3], 4);
        return S_DONE;
    }
    case SDMA_OP_TIMESTAMP:
        addr = p[1] | (uint64_t)p[2] << 32;
        if (addr % 8) return shang(q, "TIMESTAMP to 0x%llx, not 8-byte aligned", (unsigned long long)addr);
        if (!mock_amd_access(q, addr, 8, true, "TIMESTAMP")) return S_STOP;
        atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)addr, mock_amd_clock(), memory_order_release);
        return S_DONE;
    case SDMA_OP_GCR_REQ:
        if (!a->sdma_gcr) return shang(q, "GCR_REQ: SDMA %u has no such packet", a->sdma_major);
        if ((p[1] & 0x7f) || (p[3] & 0x78) || (p[2] & 0xffff) || (p[4] & 0x00ff0000))
            return shang(q, "GCR_REQ with reserved bits set (0x%08x 0x%08x 0x%08x 0x%08x)", p[1], p[2], p[3], p[4]);
        return S_DONE; /* no caches to act on */
    }
    return shang(q, "SDMA header 0x%08x", p[0]);
}

static mock_step sdma_step(mock_engine *e, void *ctx)
{
    mock_amd_queue *q = ctx;
    if (atomic_load(&q->stopped)) return MOCK_STEP_STOPPED;
    uint64_t wptr = mock_amd_doorbell(q), ring_dw = q->ring_size / 4;
    if (q->sdma_rptr >= wptr) return MOCK_STEP_IDLE;
    if (!mock_amd_access(q, q->ring_va, q->ring_size, false, "fetching the ring")) return MOCK_STEP_STOPPED;
    const uint32_t *ring = (const uint32_t *)(uintptr_t)q->ring_va;
    if (q->sdma_dumped < wptr) {
        for (uint64_t d = BASE_MAX(q->sdma_dumped, q->sdma_rptr) / 4; d < wptr / 4;) {
            uint64_t pos = d % ring_dw, n = BASE_MIN(wptr / 4 - d, ring_dw - pos);
            mock_dump(e, "amd-sdma", q->gpu->arch->gfx_version, q->ring_va + pos * 4, ring + pos, (uint32_t)n);
            d += n;
        }
        q->sdma_dumped = wptr;
    }
    uint64_t pos = (q->sdma_rptr / 4) % ring_dw;
    uint32_t n = sdma_packet_ndw(ring + pos, (uint32_t)(ring_dw - pos));
    if (!n) {
        const char *name = sdma_op_name(ring[pos]);
        char why[160];
        snprintf(why, sizeof why, "%s: header 0x%08x (op %u, sub-op %u) at ring offset 0x%llx",
                 name ? "an SDMA packet runs past the end of the ring (packets must not wrap)"
                      : "an SDMA packet the mock does not model",
                 ring[pos], ring[pos] & 0xffu, ring[pos] >> 8 & 0xffu, (unsigned long long)pos * 4);
        mock_amd_hang(q, why);
        return MOCK_STEP_STOPPED;
    }
    if (q->sdma_rptr + n * 4ull > wptr) return MOCK_STEP_IDLE;
    sres r = run(q, ring + pos);
    if (r == S_BLOCKED) return MOCK_STEP_BLOCKED;
    if (r == S_STOP) return MOCK_STEP_STOPPED;
    q->sdma_rptr += n * 4ull;
    if (!mock_amd_access(q, q->rptr_va, 8, true, "writing the read pointer")) return MOCK_STEP_STOPPED;
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)q->rptr_va, q->sdma_rptr, memory_order_release);
    return MOCK_STEP_PROGRESS;
}

hcq_status mock_amd_sdma_start(mock_amd_queue *q)
{
    q->sdma = mock_engine_start(q->gpu->g, q->name, sdma_step, q);
    return q->sdma ? HCQ_OK : HCQ_ENOMEM;
}
