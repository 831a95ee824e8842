/* Encoders: one command of the hcq queue API as PM4 (compute) or SDMA
 * (copy) packets, every argument patchable (drivers/record.h).
 *
 * Compute (../shared/reference/amd-facts.md §3.8-3.9, tinygrad ops_amd.py):
 *   wait       WAIT_REG_MEM64 >= on the 64-bit value (gfx11); on gfx9, which
 *              has no WAIT_REG_MEM64, an AQL barrier-value packet (GTE, 64-bit)
 *   signal     RELEASE_MEM at end of pipe with the cache write-back, 64-bit data
 *   timestamp  CS_PARTIAL_FLUSH, RELEASE_MEM of the GPU clock to the slot at +8
 *   barrier    HDP flush, then ACQUIRE_MEM invalidating every cache
 *   exec       barrier, SET_SH_REGs from the kernel descriptor, user SGPRs,
 *              DISPATCH_DIRECT, CS_PARTIAL_FLUSH (kernels never overlap)
 * On AQL queues (multi-XCC parts, docs/amd-xcc.md) each command is framed
 * as one packet's PM4 and memory writes run on XCC 0 only (PRED_EXEC).
 *
 * Copy (SDMA): the engine compares and writes 32 bits, so a signal is two
 * FENCEs (low half first: a waiter never sees a value above the one
 * written) and a wait polls the high half, then the low half. That wait is
 * exact while the value reaches the target from below; a value that has
 * already moved into a higher 2^32 block with a smaller low half when the
 * second poll runs stalls it until the low half catches up. hcq's own
 * timeline waits never meet that (a copy waits for the value just before
 * its own signal); a user queue waiting on a value another engine passed
 * long ago across a 2^32 boundary could. */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/amd/amd_sdma.h"

#include <string.h>

static const amd_arch *arch_of(const drv_rec *r) { return amd_of(r->dev)->arch; }
/* the first-run paths: the device's, else (tests encoding for an arch
 * alone) the proven defaults */
static amd_paths paths_of(const drv_rec *r)
{
    return r->dev && r->dev->priv ? amd_of(r->dev)->paths : AMD_PATHS_PROVEN;
}
/* compute commands are framed as AQL packets on AQL queues: the device's
 * queue decides; without a device (tests), the arch's default */
static bool aql(const amd_arch *a, const drv_rec *r)
{
    if (r->type != HCQ_QUEUE_COMPUTE) return false;
    return r->dev && r->dev->priv ? amd_of(r->dev)->compute.kind == AMD_QUEUE_AQL : a->aql_compute;
}

/* ** command framing on AQL queues */
static uint32_t cmd_begin(const amd_arch *a, drv_rec *r)
{
    if (!aql(a, r) || !drv_rec_reserve(r, 2)) return UINT32_MAX;
    uint32_t at = r->ndw;
    drv_rec_dw(r, AMD_CMD_BOUNDARY);
    drv_rec_dw(r, 0);
    return at;
}

static hcq_status cmd_end(drv_rec *r, uint32_t at)
{
    if (at != UINT32_MAX && !r->err) r->dw[at + 1] = r->ndw - at - 2;
    return r->err;
}

/* memory writes: once, by XCC 0, on multi-XCC queues (every XCC runs the
 * packet; PRED_EXEC works inside the packet's indirect buffer) */
static void xcc0_only(const amd_arch *a, drv_rec *r, uint32_t ndw)
{
    if (aql(a, r)) pm4_pred_exec(r, 1, ndw);
}

#define POLL_INTERVAL 4 /* as tinygrad and amdgpu: short, the CP re-reads memory */

/* WAIT_REG_MEM >= on the 32-bit word at addr + off against (value >> shift) */
static void amd_wait32(drv_rec *r, hcq_val addr, int64_t off, hcq_val value, uint8_t shift)
{
    if (!pm4_begin(r, PM4_WAIT_REG_MEM, 6)) return;
    drv_rec_dw(r, amd_fset(PM4_WAIT_FUNCTION, PM4_FUNC_GE) | amd_fset(PM4_WAIT_MEM_SPACE, PM4_SPACE_MEM));
    amd_emit_addr(r, addr, off);
    drv_rec_val32(r, value, shift);
    drv_rec_dw(r, 0xffffffffu);
    drv_rec_dw(r, POLL_INTERVAL);
}

hcq_status amd_enc_wait(const amd_arch *a, drv_rec *r, hcq_val addr, hcq_val value)
{
    amd_paths p = paths_of(r);
    return amd_enc_wait_with(a, &p, r, addr, value);
}

hcq_status amd_enc_wait_with(const amd_arch *a, const amd_paths *paths, drv_rec *r, hcq_val addr, hcq_val value)
{
    if (r->type == HCQ_QUEUE_COPY) {
        sdma_poll_regmem(r, PM4_FUNC_GE, addr, 4, value, 32, 0xffffffffu, POLL_INTERVAL, 0xfff);
        sdma_poll_regmem(r, PM4_FUNC_GE, addr, 0, value, 0, 0xffffffffu, POLL_INTERVAL, 0xfff);
        return r->err;
    }
    if (aql(a, r)) {
        /* the packet processor compares the 64 bits itself; the signal
         * handle is an amd_signal_t address, value at +8 */
        if (!drv_rec_reserve(r, 6)) return r->err;
        drv_rec_dw(r, AMD_CMD_BARRIER_VALUE);
        drv_rec_dw(r, AMD_CMD_BARRIER_VALUE_MAGIC);
        amd_emit_addr(r, addr, -(int64_t)AMD_SIGNAL_VALUE_OFFSET);
        drv_rec_val32(r, value, 0);
        drv_rec_val32(r, value, 32);
        return r->err;
    }
    uint32_t c = cmd_begin(a, r);
    if (paths->wait64 && pm4_op_exists(a->family, PM4_WAIT_REG_MEM64)) {
        /* hcq's alternative on gfx11: one 64-bit compare */
        pm4_wait_reg_mem64(r, PM4_FUNC_GE, addr, value, ~0ull, POLL_INTERVAL);
    } else {
        /* the proven form (32-bit WAIT_REG_MEM, which every family has):
         * the high half, then the low half; exact while the value reaches
         * the target from below, as the SDMA wait above */
        amd_wait32(r, addr, 4, value, 32);
        amd_wait32(r, addr, 0, value, 0);
    }
    return cmd_end(r, c);
}

hcq_status amd_enc_signal(const amd_arch *a, drv_rec *r, hcq_val addr, hcq_val value)
{
    if (r->type == HCQ_QUEUE_COPY) {
        sdma_fence(r, a->sdma_fence_mtype, addr, 0, value, 0);
        sdma_fence(r, a->sdma_fence_mtype, addr, 4, value, 32);
        return r->err;
    }
    uint32_t c = cmd_begin(a, r);
    xcc0_only(a, r, 8);
    pm4_release_mem(r, pm4_release_event(a->release_flush), pm4_release_data(PM4_DATA_64, 0), addr, 0, value, 0);
    return cmd_end(r, c);
}

hcq_status amd_enc_timestamp(const amd_arch *a, drv_rec *r, hcq_val addr)
{
    if (r->type == HCQ_QUEUE_COPY) {
        sdma_timestamp(r, addr, 8);
        return r->err;
    }
    uint32_t c = cmd_begin(a, r);
    /* after the work before it: the clock is sampled at end of pipe */
    pm4_event_write(r, PM4_EV_CS_PARTIAL_FLUSH, 4);
    xcc0_only(a, r, 8);
    pm4_release_mem(r, pm4_release_event(0), pm4_release_data(PM4_DATA_CLOCK, 0), addr, 8, HCQ_IMM(0), 0);
    return cmd_end(r, c);
}

/* CPU writes through the BAR reach VRAM only after an HDP flush; then
 * every GPU cache is invalidated (and written back). The flush handshake:
 * by default every request bit, waited for with >= (tinygrad's form, run
 * on gfx11 and gfx942); the alternative writes MEC1 pipe 0's client bit and
 * waits for it with EQUAL, as amdgpu does for its own ring's pipe (a user
 * queue's pipe is KFD's choice, unknown here) */
static void barrier_packets(const amd_arch *a, const amd_paths *p, drv_rec *r)
{
    if (p->hdp_one_bit)
        pm4_wait_reg_write(r, PM4_FUNC_EQ, a->hdp_flush_req, a->hdp_flush_done, AMD_HDP_FLUSH_CP2, AMD_HDP_FLUSH_CP2,
                           POLL_INTERVAL);
    else
        pm4_wait_reg_write(r, PM4_FUNC_GE, a->hdp_flush_req, a->hdp_flush_done, 0xffffffffu, 0xffffffffu,
                           POLL_INTERVAL);
    pm4_acquire_mem(r, a, a->acquire_full);
}

hcq_status amd_enc_barrier(const amd_arch *a, drv_rec *r)
{
    amd_paths p = paths_of(r);
    return amd_enc_barrier_with(a, &p, r);
}

hcq_status amd_enc_barrier_with(const amd_arch *a, const amd_paths *p, drv_rec *r)
{
    if (r->type == HCQ_QUEUE_COPY) {
        if (a->sdma_gcr) sdma_gcr(r, a->acquire_full & ~(uint32_t)AMD_GCR_GLI_INV);
        return r->err;
    }
    uint32_t c = cmd_begin(a, r);
    barrier_packets(a, p, r);
    return cmd_end(r, c);
}

hcq_status amd_enc_copy(const amd_arch *a, drv_rec *r, hcq_val dst, hcq_val src, hcq_val size)
{
    /* write back and invalidate what the copy engine reads through (SDMA 5+) */
    if (a->sdma_gcr) sdma_gcr(r, a->acquire_full & ~(uint32_t)AMD_GCR_GLI_INV);
    if (hcq_val_is_var(size)) {
        /* one packet: the queue layer holds variable sizes to AMD_COPY_VAR_MAX */
        sdma_copy_linear(r, a->sdma_count_bits, dst, src, 0, size);
        return r->err;
    }
    /* an all-ones count is kept to mean "empty" (a variable size of 0): on
     * SDMA 4 that is a 4 MiB copy, so chunks stop a page short of it */
    uint64_t chunk = BASE_MIN(a->sdma_copy_max, (1ull << a->sdma_count_bits) - 4096);
    for (uint64_t done = 0; done < size.imm && !r->err;) {
        uint64_t n = BASE_MIN(size.imm - done, chunk);
        sdma_copy_linear(r, a->sdma_count_bits, dst, src, (int64_t)done, HCQ_IMM(n));
        done += n;
    }
    return r->err;
}

/* ** exec */
/* hsa_kernel_dispatch_packet_t (HSA runtime spec), for kernels that read
 * the dispatch pointer */
enum { DP_WG_X = 4, DP_GRID_X = 12, DP_PRIVATE = 24, DP_GROUP = 28, DP_KERNEL_OBJECT = 32, DP_KERNARG = 40, DP_BYTES = 64 };

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static hcq_status hidden_args(drv_rec *r, const amd_co *co, uint8_t *kernargs, const hcq_dims *d)
{
    for (uint32_t i = 0; i < co->nhidden; i++) {
        const amd_hidden_arg *h = &co->hidden[i];
        uint8_t *at = kernargs + h->offset;
        uint8_t bits = (uint8_t)BASE_MIN(h->size * 8, 64u);
        switch (h->kind) {
        case AMD_HID_BLOCK_COUNT_X: case AMD_HID_BLOCK_COUNT_Y: case AMD_HID_BLOCK_COUNT_Z:
            drv_rec_mem_field(r, at, d->grid[h->kind - AMD_HID_BLOCK_COUNT_X], bits, 0, 0, 0);
            break;
        case AMD_HID_GROUP_SIZE_X: case AMD_HID_GROUP_SIZE_Y: case AMD_HID_GROUP_SIZE_Z:
            drv_rec_mem_field(r, at, d->block[h->kind - AMD_HID_GROUP_SIZE_X], bits, 0, 0, 0);
            break;
        case AMD_HID_GRID_DIMS:
            drv_rec_mem_field(r, at, HCQ_IMM(3), bits, 0, 0, 0);
            break;
        default: /* remainders are 0: grids are whole work-groups; the rest unused */
            break;
        }
    }
    return r->err;
}

static hcq_status dispatch_packet(const amd_prog *ap, uint8_t *dp, uint64_t kernarg_va, const hcq_dims *d)
{
    for (int i = 0; i < 3; i++)
        if (hcq_val_is_var(d->grid[i]) || hcq_val_is_var(d->block[i]))
            return base_err(HCQ_ENOTSUP, "kernel `%s` reads the dispatch packet, whose grid size (groups x block) "
                            "cannot follow variable dims: launch it with immediate dims", ap->co.name);
    for (int i = 0; i < 3; i++) {
        uint16_t wg = (uint16_t)d->block[i].imm;
        memcpy(dp + DP_WG_X + 2 * i, &wg, 2);
        put32(dp + DP_GRID_X + 4 * i, (uint32_t)(d->grid[i].imm * d->block[i].imm));
    }
    uint16_t hdr = AQL_TYPE_KERNEL_DISPATCH, setup = 3;
    memcpy(dp, &hdr, 2);
    memcpy(dp + 2, &setup, 2);
    put32(dp + DP_PRIVATE, ap->co.kd.private_segment_fixed_size);
    put32(dp + DP_GROUP, ap->co.kd.group_segment_fixed_size);
    put64(dp + DP_KERNEL_OBJECT, ap->kd_va);
    put64(dp + DP_KERNARG, kernarg_va);
    return HCQ_OK;
}

/* The grid_size field of an AQL dispatch packet counts work-items: groups
 * x block. A patch writes (variable << shift), so a variable times an
 * immediate power of two is expressible, and two immediates are; the
 * other launches take the PM4 path on the same queue. */
static bool aql_grid_field(hcq_val g, hcq_val b, uint32_t *imm, hcq_val *var, uint8_t *shift)
{
    if (!hcq_val_is_var(g) && !hcq_val_is_var(b)) {
        uint64_t n = g.imm * b.imm;
        if (n > 0xffffffffu) return false;
        *imm = (uint32_t)n;
        var->var = 0;
        return true;
    }
    if (hcq_val_is_var(g) && hcq_val_is_var(b)) return false;
    hcq_val v = hcq_val_is_var(g) ? g : b;
    uint64_t k = hcq_val_is_var(g) ? b.imm : g.imm;
    if (!k || (k & (k - 1))) return false;
    *imm = 0;
    *var = v;
    *shift = (uint8_t)__builtin_ctzll(k);
    return true;
}

/* The proven dispatch on AQL queues: the barrier as a PM4 packet of its
 * own, then an HSA kernel-dispatch packet (barrier bit, system-scope
 * fences) naming the kernel descriptor and the kernargs; the packet
 * processor sets the registers from them and the queue's amd_queue_t
 * scratch (ROCR amd_hsa_queue.h; llvm AMDGPUUsage "Initial Kernel
 * Execution State"). false (nothing recorded) when the launch's dims
 * cannot be a packet's. */
static bool exec_aql(drv_rec *r, const amd_arch *a, const amd_paths *paths, const amd_prog *ap, uint64_t kernargs,
                     const hcq_dims *d, uint32_t private_bytes)
{
    uint32_t gimm[3] = {0};
    hcq_val gvar[3];
    uint8_t gshift[3] = {0};
    for (int i = 0; i < 3; i++) {
        if (!aql_grid_field(d->grid[i], d->block[i], &gimm[i], &gvar[i], &gshift[i])) return false;
        if (!hcq_val_is_var(d->block[i]) && d->block[i].imm > 0xffff) return false;
    }
    uint32_t c = cmd_begin(a, r);
    barrier_packets(a, paths, r);
    cmd_end(r, c);
    if (!drv_rec_reserve(r, 19)) return true;
    drv_rec_dw(r, AMD_CMD_DISPATCH);
    drv_rec_dw(r, AMD_CMD_DISPATCH_MAGIC);
    drv_rec_dw(r, ap->id);
    uint32_t at = r->ndw;
    for (int i = 0; i < 16; i++) drv_rec_dw(r, 0);
    uint32_t hdr = AQL_TYPE_KERNEL_DISPATCH | AQL_HDR_BARRIER | AQL_SCOPE_SYSTEM << AQL_HDR_ACQUIRE_SHIFT |
                   AQL_SCOPE_SYSTEM << AQL_HDR_RELEASE_SHIFT;
    r->dw[at] = hdr | 3u << 16; /* setup: 3 dimensions */
    /* workgroup_size_x/y/z: u16 at bytes 4, 6, 8 */
    for (int i = 0; i < 3; i++) {
        uint32_t byte = 4 + 2 * (uint32_t)i;
        drv_rec_field(r, at + byte / 4, d->block[i], 16, (uint8_t)(byte % 4 * 8), 0, 0);
    }
    for (int i = 0; i < 3; i++) {
        if (gvar[i].var) drv_rec_field(r, at + 3 + (uint32_t)i, gvar[i], (uint8_t)(32 - gshift[i]), gshift[i], 0, 0);
        else r->dw[at + 3 + i] = gimm[i];
    }
    r->dw[at + 6] = private_bytes;
    r->dw[at + 7] = ap->co.kd.group_segment_fixed_size;
    r->dw[at + 8] = (uint32_t)ap->kd_va;
    r->dw[at + 9] = (uint32_t)(ap->kd_va >> 32);
    r->dw[at + 10] = (uint32_t)kernargs;
    r->dw[at + 11] = (uint32_t)(kernargs >> 32);
    return true;
}

/* the queue's scratch, where an AQL dispatch's packet processor finds it
 * (amd_queue_t: compute_tmpring_size, scratch_resource_descriptor,
 * scratch_backing_memory_location/_byte_size, scratch_wave64_lane_byte_size,
 * filled as ROCR's AqlQueue::InitScratchSRD does). Scratch only grows and an
 * outgrown buffer stays until close, so a packet already queued that reads
 * the new fields gets a larger scratch, never a freed one. */
static void aql_queue_scratch(amd_dev *ad, uint64_t va, uint64_t per_xcc, uint32_t tmpring, uint32_t lane)
{
    /* field by field, as the packet processor may be reading them (each
     * aligned; the mock reads them the same way) */
    uint8_t *c = ad->compute.ctl.cpu;
    uint32_t srd[4];
    amd_scratch_srd(ad->arch->family, va, srd);
    uint64_t bytes = per_xcc * BASE_MAX(ad->node.num_xcc, 1u);
    for (int i = 0; i < 4; i++)
        atomic_store_explicit((_Atomic uint32_t *)(c + AMD_QUEUE_SCRATCH_SRD_OFF + 4 * i), srd[i], memory_order_relaxed);
    atomic_store_explicit((_Atomic uint64_t *)(c + AMD_QUEUE_SCRATCH_BASE_OFF), va, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint64_t *)(c + AMD_QUEUE_SCRATCH_BYTES_OFF), bytes, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint32_t *)(c + AMD_QUEUE_SCRATCH_LANE_OFF), lane, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint32_t *)(c + AMD_QUEUE_TMPRING_OFF), tmpring, memory_order_release);
}

hcq_status amd_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims)
{
    amd_dev *ad = amd_of(r->dev);
    const amd_arch *a = ad->arch;
    const amd_prog *ap = p->priv;
    const amd_co *co = &ap->co;
    const amd_sgpr_layout *L = &ap->sgprs;

    /* kernargs (explicit and hidden), then the dispatch packet if asked */
    bool want_dp = L->first[AMD_SGPR_DISPATCH_PTR] >= 0;
    uint32_t kb = (uint32_t)base_align_up(BASE_MAX(co->kernarg_bytes, 16u), 64);
    void *cpu = NULL;
    uint64_t va = 0;
    hcq_status s = r->aux_alloc(r, kb + (want_dp ? DP_BYTES : 0), 64, &cpu, &va);
    if (s) return s;
    r->uses_aux = true;
    memset(cpu, 0, kb + (want_dp ? DP_BYTES : 0));
    drv_rec_params(r, cpu, p, params);
    if ((s = hidden_args(r, co, cpu, dims))) return s;
    if (want_dp && (s = dispatch_packet(ap, (uint8_t *)cpu + kb, va, dims))) return s;

    uint64_t scratch = 0, per_xcc = 0;
    uint32_t tmpring = 0, lane = co->kd.private_segment_fixed_size;
    if (co->kd.kernel_code_properties & AMD_KCP_USES_DYNAMIC_STACK) lane = BASE_MAX(lane, 1024u);
    if (lane && (s = amd_scratch_ensure(ad, lane, &scratch, &per_xcc, &tmpring))) return s;

    /* user SGPRs in the order the descriptor enables them */
    uint32_t user[AMD_USER_DATA_COUNT] = {0};
    int8_t f;
    if ((f = L->first[AMD_SGPR_PRIVATE_SEGMENT_BUFFER]) >= 0 && scratch)
        amd_scratch_srd(a->family, scratch, &user[f]); /* word 3's layout is the family's */
    if ((f = L->first[AMD_SGPR_DISPATCH_PTR]) >= 0) {
        user[f] = (uint32_t)(va + kb);
        user[f + 1] = (uint32_t)((va + kb) >> 32);
    }
    uint64_t qp = ad->compute.ctl.va;
    if ((f = L->first[AMD_SGPR_QUEUE_PTR]) >= 0) {
        user[f] = (uint32_t)qp;
        user[f + 1] = (uint32_t)(qp >> 32);
    }
    if ((f = L->first[AMD_SGPR_KERNARG_PTR]) >= 0) {
        user[f] = (uint32_t)va;
        user[f + 1] = (uint32_t)(va >> 32);
    }
    if ((f = L->first[AMD_SGPR_PRIVATE_SEGMENT_SIZE]) >= 0) user[f] = co->kd.private_segment_fixed_size;

    amd_paths paths = paths_of(r);
    if (aql(a, r) && !paths.dispatch_pm4) {
        if (lane) aql_queue_scratch(ad, scratch, per_xcc, tmpring, ad->scratch_lane_bytes);
        if (exec_aql(r, a, &paths, ap, va, dims, lane)) return r->err;
    }

    uint32_t c = cmd_begin(a, r);
    uint32_t mark[2] = {AMD_MARK_EXEC, ap->id};
    pm4_nop(r, mark, 2);
    barrier_packets(a, &paths, r);
    uint32_t pgm[2] = {(uint32_t)(ap->entry_va >> 8), (uint32_t)(ap->entry_va >> 40)};
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_PGM_LO), pgm, 2);
    /* gfx11: PRIV 1 by default, as tinygrad sets it (its CWSR workaround);
     * LLVM's descriptor has 0, the alternative */
    uint32_t rsrc1 = ap->rsrc1 | (a->family == AMD_FAMILY_GFX11 && !paths.priv0 ? amd_fset(AMD_RSRC1_PRIV, 1) : 0);
    uint32_t rsrc[2] = {rsrc1, ap->rsrc2};
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_PGM_RSRC1), rsrc, 2);
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_PGM_RSRC3), &ap->rsrc3, 1);
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_TMPRING_SIZE), &tmpring, 1);
    /* each XCC its own slice of the scratch (without scratch, one write
     * for all) */
    bool per_xcc_scratch = scratch && aql(a, r) && ad->node.num_xcc > 1;
    for (uint32_t x = 0; x < (per_xcc_scratch ? ad->node.num_xcc : 1); x++) {
        uint64_t base = scratch ? scratch + x * per_xcc : 0;
        uint32_t sb[2] = {(uint32_t)(base >> 8), (uint32_t)(base >> 40)};
        if (per_xcc_scratch) pm4_pred_exec(r, 1u << x, 4);
        pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_DISPATCH_SCRATCH_BASE_LO), sb, 2);
    }
    uint32_t zero3[3] = {0, 0, 0};
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_RESTART_X), zero3, 3);
    if (L->count) pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_USER_DATA_0), user, L->count);
    pm4_set_sh_reg(r, amd_reg_off(a, AMD_REG_RESOURCE_LIMITS), zero3, 1);
    /* START_X..Z = 0, NUM_THREAD_X..Z = the block, PIPELINESTAT and
     * PERFCOUNT off: eight consecutive registers */
    hcq_val v[8] = {HCQ_IMM(0), HCQ_IMM(0), HCQ_IMM(0), dims->block[0], dims->block[1], dims->block[2], HCQ_IMM(0),
                    HCQ_IMM(0)};
    pm4_set_sh_reg_vals(r, amd_reg_off(a, AMD_REG_START_X), v, NULL, 8);
    pm4_dispatch_direct(r, dims->grid[0], dims->grid[1], dims->grid[2], ap->initiator);
    pm4_event_write(r, PM4_EV_CS_PARTIAL_FLUSH, 4);
    return cmd_end(r, c);
}

/* ** the backend table's entry points: the arch from the recording's device */
hcq_status amd_rec_wait(drv_rec *r, hcq_val addr, hcq_val value) { return amd_enc_wait(arch_of(r), r, addr, value); }
hcq_status amd_rec_signal(drv_rec *r, hcq_val addr, hcq_val value) { return amd_enc_signal(arch_of(r), r, addr, value); }
hcq_status amd_rec_timestamp(drv_rec *r, hcq_val addr) { return amd_enc_timestamp(arch_of(r), r, addr); }
hcq_status amd_rec_barrier(drv_rec *r) { return amd_enc_barrier(arch_of(r), r); }
hcq_status amd_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size)
{
    return amd_enc_copy(arch_of(r), r, dst, src, size);
}
