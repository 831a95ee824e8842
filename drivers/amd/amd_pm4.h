/* drivers/amd/amd_pm4.h: PM4 type-3 packets for the compute command
 * processor (MEC), one small builder per packet, writing into a drv_rec so
 * every address and value may be a patchable variable.
 *
 * Layouts from torvalds/linux drivers/gpu/drm/amd/amdgpu/nvd.h (gfx11) and
 * soc15d.h (gfx9), GPUOpen-Drivers/pal's PM4_MEC_* packet headers for
 * WAIT_REG_MEM64, and ../shared/reference/amd-facts.md §3. A packet is a
 * header (type 3 in bits 30-31, body dwords - 1 in bits 16-29, opcode in
 * bits 8-15) and its body. Builders reserve their own space; on out of
 * memory they write nothing and r->err says so. */
#ifndef HCQ_DRIVERS_AMD_PM4_H
#define HCQ_DRIVERS_AMD_PM4_H

#include "drivers/amd/amd_regs.h"
#include "drivers/record.h"

/* ** header */
#define PM4_HDR(op, body_dw) ((3u << 30) | ((((uint32_t)(body_dw) - 1u) & 0x3fffu) << 16) | (((uint32_t)(op) & 0xffu) << 8))
#define PM4_HDR_TYPE(h) ((h) >> 30)
#define PM4_HDR_BODY(h) ((((h) >> 16) & 0x3fffu) + 1u)
#define PM4_HDR_OP(h) (((h) >> 8) & 0xffu)
#define PM4_MAX_BODY 0x3fffu

enum {
    PM4_NOP = 0x10,
    PM4_DISPATCH_DIRECT = 0x15,
    PM4_PRED_EXEC = 0x23,
    PM4_WAIT_REG_MEM = 0x3C,
    PM4_INDIRECT_BUFFER = 0x3F,
    PM4_EVENT_WRITE = 0x46,
    PM4_RELEASE_MEM = 0x49,
    PM4_ACQUIRE_MEM = 0x58,
    PM4_SET_SH_REG = 0x76,
    PM4_WAIT_REG_MEM64 = 0x93,
};
/* "NOP", ... or NULL (for decoders and messages) */
const char *pm4_op_name(uint32_t op);
/* Whether family fam's MEC has opcode op: the encoders choose by it and
 * the mock refuses what a family lacks. WAIT_REG_MEM64 is gfx10+ only
 * (torvalds/linux drivers/gpu/drm/amd/amdgpu/nvd.h defines
 * PACKET3_WAIT_REG_MEM64; soc15d.h, gfx9's, and Mesa's sid.h do not). */
bool pm4_op_exists(amd_family fam, uint32_t op);

/* ** fields */
#define PM4_WAIT_FUNCTION ((amd_field){"FUNCTION", 0, 3})
#define PM4_WAIT_MEM_SPACE ((amd_field){"MEM_SPACE", 4, 2})
#define PM4_WAIT_OPERATION ((amd_field){"OPERATION", 6, 2})
#define PM4_WAIT_ENGINE ((amd_field){"ENGINE", 8, 2})
enum { PM4_FUNC_ALWAYS = 0, PM4_FUNC_LT = 1, PM4_FUNC_LE = 2, PM4_FUNC_EQ = 3, PM4_FUNC_NE = 4, PM4_FUNC_GE = 5, PM4_FUNC_GT = 6 };
enum { PM4_SPACE_REG = 0, PM4_SPACE_MEM = 1 };
enum { PM4_OP_WAIT = 0, PM4_OP_WRITE_WAIT = 1 }; /* write the reference to reg1, then poll reg2 */

#define PM4_EVENT_TYPE ((amd_field){"EVENT_TYPE", 0, 6})
#define PM4_EVENT_INDEX ((amd_field){"EVENT_INDEX", 8, 4})
enum {
    PM4_EV_CS_PARTIAL_FLUSH = 0x07, /* index 4: wait for earlier dispatches to finish */
    PM4_EV_CACHE_FLUSH_AND_INV_TS = 0x14, /* index 5: end of pipe */
};
#define PM4_REL_DST_SEL ((amd_field){"DST_SEL", 16, 2})
#define PM4_REL_INT_SEL ((amd_field){"INT_SEL", 24, 3})
#define PM4_REL_DATA_SEL ((amd_field){"DATA_SEL", 29, 3})
enum { PM4_DATA_NONE = 0, PM4_DATA_32 = 1, PM4_DATA_64 = 2, PM4_DATA_CLOCK = 3 };
#define PM4_PRED_COUNT ((amd_field){"EXEC_COUNT", 0, 14})
#define PM4_PRED_DEVICES ((amd_field){"DEVICE_SELECT", 24, 8})
#define PM4_IB_SIZE ((amd_field){"IB_SIZE", 0, 20})
#define PM4_IB_VALID ((amd_field){"VALID", 23, 1})

/* ** emitting helpers */
static inline bool pm4_begin(drv_rec *r, uint32_t op, uint32_t body)
{
    if (!drv_rec_reserve(r, body + 1)) return false;
    drv_rec_dw(r, PM4_HDR(op, body));
    return true;
}
/* A 64-bit address (plus addend) as two patchable dwords, low then high. */
static inline void amd_emit_addr(drv_rec *r, hcq_val v, int64_t addend)
{
    uint32_t at = r->ndw;
    drv_rec_dw(r, 0);
    drv_rec_dw(r, 0);
    drv_rec_field(r, at, v, 32, 0, 0, addend);
    drv_rec_field(r, at + 1, v, 32, 0, 32, addend);
}

/* ** the packets */
/* NOP of n body dwords carrying payload (NULL: zeros). */
static inline void pm4_nop(drv_rec *r, const uint32_t *payload, uint32_t n)
{
    if (!pm4_begin(r, PM4_NOP, n)) return;
    for (uint32_t i = 0; i < n; i++) drv_rec_dw(r, payload ? payload[i] : 0);
}

/* SET_SH_REG of n consecutive registers from reg (absolute offset), values
 * given; n must not run past the registers meant (it overwrites the next). */
static inline void pm4_set_sh_reg(drv_rec *r, uint32_t reg, const uint32_t *vals, uint32_t n)
{
    if (!pm4_begin(r, PM4_SET_SH_REG, n + 1)) return;
    drv_rec_dw(r, reg - AMD_SH_REG_BASE);
    for (uint32_t i = 0; i < n; i++) drv_rec_dw(r, vals[i]);
}
/* The same with patchable values (each the low 32 bits of (v >> rshift)). */
static inline void pm4_set_sh_reg_vals(drv_rec *r, uint32_t reg, const hcq_val *vals, const uint8_t *rshift,
                                       uint32_t n)
{
    if (!pm4_begin(r, PM4_SET_SH_REG, n + 1)) return;
    drv_rec_dw(r, reg - AMD_SH_REG_BASE);
    for (uint32_t i = 0; i < n; i++) drv_rec_val32(r, vals[i], rshift ? rshift[i] : 0);
}

/* DISPATCH_DIRECT: the grid in work-groups (the group size is in the
 * NUM_THREAD registers), and DISPATCH_INITIATOR. */
static inline void pm4_dispatch_direct(drv_rec *r, hcq_val gx, hcq_val gy, hcq_val gz, uint32_t initiator)
{
    if (!pm4_begin(r, PM4_DISPATCH_DIRECT, 4)) return;
    drv_rec_val32(r, gx, 0);
    drv_rec_val32(r, gy, 0);
    drv_rec_val32(r, gz, 0);
    drv_rec_dw(r, initiator);
}

/* ACQUIRE_MEM over all memory: gfx11 takes GCR_CNTL in its last dword
 * (COHER_CNTL 0), gfx9 takes CP_COHER_CNTL first and has no GCR dword. */
static inline void pm4_acquire_mem(drv_rec *r, const amd_arch *a, uint32_t cntl)
{
    bool gfx11 = a->acquire_body_dw == 7;
    if (!pm4_begin(r, PM4_ACQUIRE_MEM, a->acquire_body_dw)) return;
    drv_rec_dw(r, gfx11 ? 0 : cntl); /* CP_COHER_CNTL */
    drv_rec_dw(r, 0xffffffffu);      /* CP_COHER_SIZE */
    drv_rec_dw(r, 0x00ffffffu);      /* CP_COHER_SIZE_HI */
    drv_rec_dw(r, 0);                /* CP_COHER_BASE */
    drv_rec_dw(r, 0);                /* CP_COHER_BASE_HI */
    drv_rec_dw(r, 0x0000000au);      /* POLL_INTERVAL */
    if (gfx11) drv_rec_dw(r, cntl);  /* GCR_CNTL */
}

/* RELEASE_MEM: after earlier work reaches the end of the pipe, do the
 * cache actions in event_cntl, then write data (data_sel) to addr. */
static inline void pm4_release_mem(drv_rec *r, uint32_t event_cntl, uint32_t data_cntl, hcq_val addr,
                                   int64_t addr_addend, hcq_val data, uint32_t int_ctxid)
{
    if (!pm4_begin(r, PM4_RELEASE_MEM, 7)) return;
    drv_rec_dw(r, event_cntl);
    drv_rec_dw(r, data_cntl);
    amd_emit_addr(r, addr, addr_addend);
    drv_rec_val32(r, data, 0);
    drv_rec_val32(r, data, 32);
    drv_rec_dw(r, int_ctxid);
}
static inline uint32_t pm4_release_event(uint32_t cache_bits)
{
    return amd_fset(PM4_EVENT_TYPE, PM4_EV_CACHE_FLUSH_AND_INV_TS) | amd_fset(PM4_EVENT_INDEX, 5) | cache_bits;
}
static inline uint32_t pm4_release_data(uint32_t data_sel, uint32_t int_sel)
{
    return amd_fset(PM4_REL_DATA_SEL, data_sel) | amd_fset(PM4_REL_INT_SEL, int_sel);
}

/* WAIT_REG_MEM on a 32-bit word in memory: (*addr & mask) func ref. */
static inline void pm4_wait_reg_mem(drv_rec *r, uint32_t func, hcq_val addr, hcq_val ref, uint32_t mask,
                                    uint32_t poll)
{
    if (!pm4_begin(r, PM4_WAIT_REG_MEM, 6)) return;
    drv_rec_dw(r, amd_fset(PM4_WAIT_FUNCTION, func) | amd_fset(PM4_WAIT_MEM_SPACE, PM4_SPACE_MEM));
    amd_emit_addr(r, addr, 0);
    drv_rec_val32(r, ref, 0);
    drv_rec_dw(r, mask);
    drv_rec_dw(r, poll);
}
/* WAIT_REG_MEM writing ref to register req, then polling register done
 * until (done & mask) func ref: the HDP flush handshake. */
static inline void pm4_wait_reg_write(drv_rec *r, uint32_t func, uint32_t req, uint32_t done, uint32_t ref,
                                      uint32_t mask, uint32_t poll)
{
    if (!pm4_begin(r, PM4_WAIT_REG_MEM, 6)) return;
    drv_rec_dw(r, amd_fset(PM4_WAIT_FUNCTION, func) | amd_fset(PM4_WAIT_MEM_SPACE, PM4_SPACE_REG) |
                      amd_fset(PM4_WAIT_OPERATION, PM4_OP_WRITE_WAIT));
    drv_rec_dw(r, req);
    drv_rec_dw(r, done);
    drv_rec_dw(r, ref);
    drv_rec_dw(r, mask);
    drv_rec_dw(r, poll);
}
/* WAIT_REG_MEM64 on a 64-bit word in memory (8-byte aligned): a 64-bit
 * reference and mask, so signals past 2^32 compare exactly. gfx10+ only
 * (pm4_op_exists). */
static inline void pm4_wait_reg_mem64(drv_rec *r, uint32_t func, hcq_val addr, hcq_val ref, uint64_t mask,
                                      uint32_t poll)
{
    if (!pm4_begin(r, PM4_WAIT_REG_MEM64, 8)) return;
    drv_rec_dw(r, amd_fset(PM4_WAIT_FUNCTION, func) | amd_fset(PM4_WAIT_MEM_SPACE, PM4_SPACE_MEM));
    amd_emit_addr(r, addr, 0);
    drv_rec_val32(r, ref, 0);
    drv_rec_val32(r, ref, 32);
    drv_rec_dw(r, (uint32_t)mask);
    drv_rec_dw(r, (uint32_t)(mask >> 32));
    drv_rec_dw(r, poll);
}

static inline void pm4_event_write(drv_rec *r, uint32_t type, uint32_t index)
{
    if (!pm4_begin(r, PM4_EVENT_WRITE, 1)) return;
    drv_rec_dw(r, amd_fset(PM4_EVENT_TYPE, type) | amd_fset(PM4_EVENT_INDEX, index));
}

/* INDIRECT_BUFFER: run ndw dwords at addr (4-byte aligned), then return. */
static inline void pm4_indirect_buffer(drv_rec *r, hcq_val addr, uint32_t ndw)
{
    if (!pm4_begin(r, PM4_INDIRECT_BUFFER, 3)) return;
    amd_emit_addr(r, addr, 0);
    drv_rec_dw(r, amd_fset(PM4_IB_SIZE, ndw) | amd_fset(PM4_IB_VALID, 1));
}

/* PRED_EXEC: the next ndw dwords run only on the XCCs in xcc_mask. The CP
 * honours it inside indirect buffers only. */
static inline void pm4_pred_exec(drv_rec *r, uint32_t xcc_mask, uint32_t ndw)
{
    if (!pm4_begin(r, PM4_PRED_EXEC, 1)) return;
    drv_rec_dw(r, amd_fset(PM4_PRED_DEVICES, xcc_mask) | amd_fset(PM4_PRED_COUNT, ndw));
}

#endif
