/* drivers/amd/amd_sdma.h: SDMA packets for the copy queue, one builder per
 * packet over a drv_rec (every address, size and value patchable), and the
 * packet-length rule the submitter and the mock share: a packet must never
 * straddle the end of the ring, so both walk the stream packet by packet.
 *
 * Layouts from torvalds/linux drivers/gpu/drm/amd/amdgpu/sdma_v6_0.c,
 * sdma_v4_4_2.c and the sdma*_pkt_open.h headers beside them, and
 * ../shared/reference/amd-facts.md §4. DW0 is op (bits 0-7) | sub_op
 * (bits 8-15) | packet-specific bits; a zero dword is a one-dword NOP. */
#ifndef HCQ_DRIVERS_AMD_SDMA_H
#define HCQ_DRIVERS_AMD_SDMA_H

#include "drivers/amd/amd_pm4.h"

enum {
    SDMA_OP_NOP = 0,
    SDMA_OP_COPY = 1, /* sub_op 0: linear */
    SDMA_OP_FENCE = 5,
    SDMA_OP_TRAP = 6,
    SDMA_OP_POLL_REGMEM = 8,
    SDMA_OP_ATOMIC = 10,     /* hcq emits none; ROCm's runtime decrements signals with it */
    SDMA_OP_CONST_FILL = 11, /* hcq emits none; ROCm's runtime fills memory with it */
    SDMA_OP_TIMESTAMP = 13,  /* sub_op 2: get global */
    SDMA_OP_GCR_REQ = 17,   /* SDMA 5+ */
};
#define SDMA_SUB_TIMESTAMP_GET_GLOBAL 2u

#define SDMA_HDR_OP ((amd_field){"OP", 0, 8})
#define SDMA_HDR_SUB_OP ((amd_field){"SUB_OP", 8, 8})
#define SDMA_NOP_COUNT ((amd_field){"COUNT", 16, 14})     /* dwords after the header */
#define SDMA_FENCE_MTYPE ((amd_field){"MTYPE", 16, 3})    /* SDMA 5+ */
#define SDMA_POLL_HDP_FLUSH ((amd_field){"HDP_FLUSH", 26, 1})
#define SDMA_POLL_FUNC ((amd_field){"FUNC", 28, 3})       /* as PM4_FUNC_* */
#define SDMA_POLL_MEM ((amd_field){"MEM_POLL", 31, 1})
#define SDMA_POLL_INTERVAL ((amd_field){"INTERVAL", 0, 16})
#define SDMA_POLL_RETRY ((amd_field){"RETRY_COUNT", 16, 12}) /* 0xfff: forever */
#define SDMA_TRAP_CONTEXT ((amd_field){"INT_CONTEXT", 0, 28})
/* ATOMIC (8 dwords: header, address, source data, compare data, loop
 * interval): the operation in TC atomic numbering, ADD64 = 47 as
 * ROCR-Runtime's blit_sdma.cpp (SDMA_ATOMIC_ADD64) uses it; LOOP repeats a
 * compare-swap until it succeeds. CONST_FILL (5 dwords: header, address,
 * data, count = bytes - 1 on SDMA 4+ as ROCr's BlitSdmaV4 writes it):
 * FILLSIZE 2 fills dwords. Layouts: linux amdgpu vega10_sdma_pkt_open.h
 * (SDMA_PKT_ATOMIC, SDMA_PKT_CONSTANT_FILL). */
#define SDMA_ATOMIC_LOOP ((amd_field){"LOOP", 16, 1})
#define SDMA_ATOMIC_OP ((amd_field){"ATOMIC_OP", 25, 7})
#define SDMA_ATOMIC_ADD64 47u
#define SDMA_FILL_SIZE ((amd_field){"FILLSIZE", 30, 2})
#define SDMA_FILL_DWORDS 2u
/* GCR_REQ: the range (0, 0 = everything) and GCR_CNTL split over DW2/DW3 */
#define SDMA_GCR_CNTL_LO ((amd_field){"GCR_CONTROL_15_0", 16, 16})
#define SDMA_GCR_CNTL_HI ((amd_field){"GCR_CONTROL_18_16", 0, 3})

/* MTYPE 3 (uncached) for fences, as amdgpu's sdma_v6_0_ring_emit_fence */
#define SDMA_FENCE_MTYPE_UC 3u

/* "COPY_LINEAR", ... or NULL */
const char *sdma_op_name(uint32_t dw0);

/* Dwords of the packet starting at p (avail dwords readable), or 0 when
 * p is not a packet we emit (or runs past avail). */
static inline uint32_t sdma_packet_ndw(const uint32_t *p, uint32_t avail)
{
    if (!avail) return 0;
    uint32_t op = amd_fget(SDMA_HDR_OP, p[0]), sub = amd_fget(SDMA_HDR_SUB_OP, p[0]), n = 0;
    switch (op) {
    case SDMA_OP_NOP: n = 1 + amd_fget(SDMA_NOP_COUNT, p[0]); break;
    case SDMA_OP_COPY: n = sub == 0 ? 7 : 0; break;
    case SDMA_OP_FENCE: n = 4; break;
    case SDMA_OP_TRAP: n = 2; break;
    case SDMA_OP_POLL_REGMEM: n = sub == 0 ? 6 : 0; break;
    case SDMA_OP_ATOMIC: n = sub == 0 ? 8 : 0; break;
    case SDMA_OP_CONST_FILL: n = sub == 0 ? 5 : 0; break;
    case SDMA_OP_TIMESTAMP: n = sub == SDMA_SUB_TIMESTAMP_GET_GLOBAL ? 3 : 0; break;
    case SDMA_OP_GCR_REQ: n = 5; break;
    }
    return n <= avail ? n : 0;
}

static inline bool sdma_begin(drv_rec *r, uint32_t n, uint32_t dw0)
{
    if (!drv_rec_reserve(r, n)) return false;
    drv_rec_dw(r, dw0);
    return true;
}

/* COPY_LINEAR of size bytes from src + offset to dst + offset (count =
 * size - 1 in a count_bits-wide field): a variable size of 0 patches the
 * field to all ones, which the submitter turns back into NOPs
 * (sdma_copy_is_empty). */
static inline void sdma_copy_linear(drv_rec *r, uint8_t count_bits, hcq_val dst, hcq_val src, int64_t offset,
                                    hcq_val size)
{
    if (!sdma_begin(r, 7, amd_fset(SDMA_HDR_OP, SDMA_OP_COPY))) return;
    uint32_t at = r->ndw;
    drv_rec_dw(r, 0);
    drv_rec_field(r, at, size, count_bits, 0, 0, -1);
    drv_rec_dw(r, 0); /* parameter: no swizzle */
    amd_emit_addr(r, src, offset);
    amd_emit_addr(r, dst, offset);
}
static inline bool sdma_copy_is_empty(const uint32_t *p, uint8_t count_bits)
{
    uint32_t mask = count_bits >= 32 ? 0xffffffffu : (1u << count_bits) - 1u;
    return (p[1] & mask) == mask;
}

/* FENCE: write 32 bits (value >> data_rshift) to addr + addend after earlier
 * packets' writes complete. */
static inline void sdma_fence(drv_rec *r, bool mtype, hcq_val addr, int64_t addend, hcq_val data, uint8_t data_rshift)
{
    uint32_t dw0 = amd_fset(SDMA_HDR_OP, SDMA_OP_FENCE) | (mtype ? amd_fset(SDMA_FENCE_MTYPE, SDMA_FENCE_MTYPE_UC) : 0);
    if (!sdma_begin(r, 4, dw0)) return;
    amd_emit_addr(r, addr, addend);
    drv_rec_val32(r, data, data_rshift);
}

/* TRAP: raise an interrupt with int_context (KFD matches it to an event). */
static inline void sdma_trap(drv_rec *r, uint32_t int_context)
{
    if (!sdma_begin(r, 2, amd_fset(SDMA_HDR_OP, SDMA_OP_TRAP))) return;
    drv_rec_dw(r, amd_fset(SDMA_TRAP_CONTEXT, int_context));
}

/* POLL_REGMEM on memory: until (*(addr + addend) & mask) func (ref >> ref_rshift). */
static inline void sdma_poll_regmem(drv_rec *r, uint32_t func, hcq_val addr, int64_t addend, hcq_val ref,
                                    uint8_t ref_rshift, uint32_t mask, uint32_t interval, uint32_t retry)
{
    uint32_t dw0 = amd_fset(SDMA_HDR_OP, SDMA_OP_POLL_REGMEM) | amd_fset(SDMA_POLL_FUNC, func) | amd_fset(SDMA_POLL_MEM, 1);
    if (!sdma_begin(r, 6, dw0)) return;
    amd_emit_addr(r, addr, addend);
    drv_rec_val32(r, ref, ref_rshift);
    drv_rec_dw(r, mask);
    drv_rec_dw(r, amd_fset(SDMA_POLL_INTERVAL, interval) | amd_fset(SDMA_POLL_RETRY, retry));
}

/* TIMESTAMP (get global): the 64-bit GPU clock to addr + addend (8-byte aligned). */
static inline void sdma_timestamp(drv_rec *r, hcq_val addr, int64_t addend)
{
    uint32_t dw0 = amd_fset(SDMA_HDR_OP, SDMA_OP_TIMESTAMP) | amd_fset(SDMA_HDR_SUB_OP, SDMA_SUB_TIMESTAMP_GET_GLOBAL);
    if (!sdma_begin(r, 3, dw0)) return;
    amd_emit_addr(r, addr, addend);
}

/* GCR_REQ over all memory: the GCR_CNTL actions (as ACQUIRE_MEM's) on
 * the caches the copy engine goes through. */
static inline void sdma_gcr(drv_rec *r, uint32_t gcr_cntl)
{
    if (!sdma_begin(r, 5, amd_fset(SDMA_HDR_OP, SDMA_OP_GCR_REQ))) return;
    drv_rec_dw(r, 0);                                             /* base VA [31:7] */
    drv_rec_dw(r, amd_fset(SDMA_GCR_CNTL_LO, gcr_cntl & 0xffff)); /* base VA [47:32] = 0 */
    drv_rec_dw(r, amd_fset(SDMA_GCR_CNTL_HI, gcr_cntl >> 16));   /* limit VA [31:7] = 0 */
    drv_rec_dw(r, 0);                                             /* limit VA [47:32], VMID */
}

#endif
