/* The GPU of the NV mock: one engine thread per channel. It sees work only
 * through GPPut in USERD, fetches GPFIFO entries through the GPU's MMU,
 * and reads each pushbuffer segment a packet at a time as it executes it,
 * the way a PBDMA does: GP_GET advances when a segment *begins*, so words
 * of the segment in progress are read after GP_GET has passed it, and
 * USERD's copy of GP_GET is written back when the channel runs out of work
 * (or as each segment begins, or never: HCQ_MOCK_CONFIG nv_gpget; see
 * open-gpu-doc manuals/ampere/ga100/dev_pbdma.ref.txt, dev_ram.ref.txt). A
 * host that reuses pushbuffer words on GP_GET's word gets them executed
 * rewritten. It decodes method headers and executes:
 *   host methods   SET_OBJECT, semaphore acquire (STRICT_GEQ, CIRC_GEQ,
 *                  AND, NOR, equal) and release (32/64-bit, timestamp);
 *   compute        QMD launches (SEND_SIGNALING_PCAS2_B): grid, block,
 *                  constant bank 0 and the program address read from the QMD
 *                  with the field table, the kernel run by the SM's side
 *                  (mock_nv_launch.c: a cubin's host twin, or IR), then the
 *                  QMD's release semaphores; inline uploads (LAUNCH_DMA +
 *                  LOAD_INLINE_DATA); window and local-memory state;
 *   copy engine    LAUNCH_DMA copies (pitch, lines) and semaphore releases.
 * A bad address is an MMU fault, a malformed stream or launch a channel
 * error: either writes the channel's error notifier (as RM does) and stops
 * the channel. Timestamps are CLOCK_MONOTONIC nanoseconds. */
#include "drivers/mock/mock_nv.h"

#include "base/base.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MTHD_REGS 0x800u /* dwords of method state per subchannel */

struct mnv_chan {
    mnv_gpu *gpu;
    uint32_t cls, chid, engine_cls;
    uint64_t gpfifo_va;
    uint32_t entries;
    mock_bo *userd_bo, *notifier_bo;
    uint8_t *userd_map, *notifier_map; /* the mock's own mappings of those objects */
    mnv_fault_ring *gr_faults;         /* the group's graphics context's (mnv_tsg) */
    uint64_t userd_va, userd_off; /* where the process mapped the USERD object (0: nowhere) */
    atomic_bool *scheduled;
    mock_engine *eng;
    char name[32];
    /* execution state (the engine thread's) */
    uint32_t get, get_written;
    uint32_t *seg;                /* the words of the segment read so far */
    uint32_t seg_n, seg_cap, seg_read, pos, sub;
    uint64_t seg_va;
    uint32_t subch_cls[8];
    uint32_t regs[8][MTHD_REGS];
    uint64_t inline_dst;
    uint32_t inline_left;
    uint64_t cur_prog; /* the program of the launch running, 0 between launches */
    /* what RM caches for the debugger's error-state controls: the SM
     * exception of this channel's last faulting launch, and its MMU fault */
    pthread_mutex_t err_lock;
    nv_sm_error_state sm_err;
    bool sm_err_valid, mmu_faulted;
    uint32_t mmu_fault_info;
    atomic_bool dead;
    bool hung; /* a refused path (HCQ_MOCK_CONFIG refuse=) stopped it without a word, as a hang does */
    mnv_chan *next_live;
};

/* every live channel, for doorbell changes (pauses) */
static mnv_chan *live;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

void mnv_gpu_pause_doorbells(mnv_gpu *g, bool paused)
{
    pthread_mutex_lock(&live_lock);
    for (mnv_chan *c = live; c; c = c->next_live)
        if (c->gpu == g && c->eng && g->usermode)
            mock_engine_set_doorbell(c->eng, paused ? NULL : g->usermode + NV_USERMODE_DOORBELL, paused ? 0 : 4);
    pthread_mutex_unlock(&live_lock);
}

enum { M_OK, M_BLOCKED, M_FAULT, M_HUNG };

/* ** memory the mock maps for itself (USERD, notifiers are RM's memory,
 * which it reaches physically, not through the GPU's MMU) */
static uint8_t *map_bo(mock_bo *bo)
{
    int err;
    return mock_bo_map(bo, NULL, 0, bo->size, PROT_READ | PROT_WRITE, &err);
}

mnv_chan *mnv_chan_create(const mnv_chan_args *a)
{
    mnv_chan *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->gpu = a->gpu;
    c->cls = a->cls;
    c->chid = a->chid;
    c->gpfifo_va = a->gpfifo_va;
    c->entries = a->entries;
    c->scheduled = a->scheduled;
    c->gr_faults = a->gr_faults;
    pthread_mutex_init(&c->err_lock, NULL);
    c->userd_bo = a->userd_bo;
    c->notifier_bo = a->notifier_bo;
    mock_bo_ref(c->userd_bo);
    if (c->notifier_bo) mock_bo_ref(c->notifier_bo); /* a channel may have no error notifier */
    c->userd_map = map_bo(c->userd_bo);
    c->notifier_map = c->notifier_bo ? map_bo(c->notifier_bo) : NULL;
    if (!c->userd_map || (c->notifier_bo && !c->notifier_map)) {
        mnv_chan_destroy(c);
        return NULL;
    }
    /* GPPut is read where the host writes it while the host maps it
     * (userd_load); the mock's own mapping once it does not */
    c->userd_va = mock_bo_va(c->userd_bo);
    c->userd_off = a->userd_off;
    pthread_mutex_lock(&live_lock);
    c->next_live = live;
    live = c;
    pthread_mutex_unlock(&live_lock);
    return c;
}

void mnv_chan_destroy(mnv_chan *c)
{
    if (!c) return;
    pthread_mutex_lock(&live_lock);
    for (mnv_chan **p = &live; *p; p = &(*p)->next_live)
        if (*p == c) {
            *p = c->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    mock_engine_stop(c->eng);
    if (c->userd_map) sys_libc()->munmap(NULL, c->userd_map, c->userd_bo->size);
    if (c->notifier_map) sys_libc()->munmap(NULL, c->notifier_map, c->notifier_bo->size);
    mock_bo_unref(c->userd_bo);
    mock_bo_unref(c->notifier_bo);
    free(c->seg);
    pthread_mutex_destroy(&c->err_lock);
    free(c);
}

bool mnv_chan_has_engine(const mnv_chan *c) { return c && c->engine_cls; }

void mnv_chan_set_doorbell(mnv_chan *c, volatile uint8_t *usermode)
{
    if (c->eng) mock_engine_set_doorbell(c->eng, usermode + NV_USERMODE_DOORBELL, 4);
}

/* ** errors: the notifier RM writes, then a stopped channel */
static int channel_error(mnv_chan *c, uint32_t code, const char *fmt, ...) HCQ_PRINTF(3, 4);
static int channel_error(mnv_chan *c, uint32_t code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    BASE_LOG(1, "mock %s: channel error (Xid %u): %s", c->name, code, msg);
    if (c->cur_prog && (code == NV_RC_GR_EXCEPTION || code == NV_RC_FIFO_ERROR_MMU_ERR_FLT)) {
        /* an SM took the exception, or a warp's access faulted (the mock
         * runs a launch as if on SM 0);
         * the ESR's encoding is not public: the mock sets the warp ESR to 1
         * and the PC to the program's first instruction */
        pthread_mutex_lock(&c->err_lock);
        c->sm_err = (nv_sm_error_state){.hwwWarpEsr = 1, .hwwWarpEsrPc = (uint32_t)c->cur_prog,
                                        .hwwWarpEsrPc64 = c->cur_prog};
        c->sm_err_valid = true;
        pthread_mutex_unlock(&c->err_lock);
    }
    mnv_rc_error_note(c->gpu, code, msg);
    pthread_mutex_lock(&c->gpu->fault_lock);
    snprintf(c->gpu->last_error, sizeof c->gpu->last_error, "%s: Xid %u: %.900s", c->name, code, msg);
    pthread_mutex_unlock(&c->gpu->fault_lock);
    nv_notification *n = (nv_notification *)(void *)c->notifier_map;
    if (n) {
        uint64_t now = hcq_now_ns();
        n->timestamp_ns[0] = (uint32_t)now;
        n->timestamp_ns[1] = (uint32_t)(now >> 32);
        n->info32 = code;
        n->info16 = (uint16_t)c->chid;
        atomic_store_explicit((_Atomic uint16_t *)&n->status, 0xffff, memory_order_release);
    }
    atomic_store(&c->dead, true);
    mock_progress();
    return M_FAULT;
}

static int mmu_fault(mnv_chan *c, uint64_t va, bool write, const char *what)
{
    mnv_gpu *g = c->gpu;
    /* a GR fault goes to the group's graphics context (kern_gmmu_gv100.c:
     * GR engines, faults in a GPC; the copy engine's are not recorded) */
    mnv_fault_ring *r = c->gr_faults;
    if (r && c->engine_cls == g->f->compute_cls) {
        pthread_mutex_lock(&g->fault_lock);
        r->e[r->head] = (nv_mmu_fault_entry){va, 2 /* unbound / invalid PTE */, write ? 1u : 0u};
        r->head = (r->head + 1) % 4;
        if (r->head == r->tail) r->tail = (r->tail + 1) % 4;
        pthread_mutex_unlock(&g->fault_lock);
    }
    pthread_mutex_lock(&c->err_lock);
    if (!c->mmu_faulted) { /* the first fault since the channel began */
        c->mmu_faulted = true;
        c->mmu_fault_info = 2u | (write ? 1u << 16 : 0u); /* fault type (unbound PTE), access type */
    }
    pthread_mutex_unlock(&c->err_lock);
    return channel_error(c, NV_RC_FIFO_ERROR_MMU_ERR_FLT, "MMU fault at 0x%llx (%s): %s", (unsigned long long)va,
                         write ? "write" : "read", what);
}

/* HCQ_MOCK_CONFIG refuse=: the hardware hangs on this path. The channel
 * stops where it is, writes nothing and reports nothing (its host sees a
 * timeout); freeing it stops it for good. */
static int hang(mnv_chan *c, const char *path, const char *what)
{
    if (!c->hung) BASE_LOG(1, "mock %s: hangs at %s (HCQ_MOCK_CONFIG refuse=%s)", c->name, what, path);
    c->hung = true;
    return M_HUNG;
}

/* for the SM's side of a launch (mock_nv_launch.c) */
int mnv_chan_cancelled(mnv_chan *c)
{
    (void)c;
    return M_FAULT;
}

int mnv_chan_error(mnv_chan *c, uint32_t code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return channel_error(c, code, "%s", msg);
}

int mnv_chan_mmu_fault(mnv_chan *c, uint64_t va, bool write, const char *what) { return mmu_fault(c, va, write, what); }

mnv_gpu *mnv_chan_gpu(const mnv_chan *c) { return c->gpu; }

void mnv_chan_sm_errors(mnv_chan *c, nv_sm_error_states *v, uint32_t sms)
{
    uint32_t n = v->numSMsToRead;
    if (v->startingSM + n > sms) n = sms - v->startingSM;
    memset(v->smErrorStateArray, 0, sizeof v->smErrorStateArray);
    pthread_mutex_lock(&c->err_lock);
    if (c->sm_err_valid && v->startingSM == 0 && n) v->smErrorStateArray[0] = c->sm_err;
    v->mmuFaultValid = c->mmu_faulted;
    v->mmuFaultFaultInfo = v->mmuFaultInfo = c->mmu_fault_info;
    pthread_mutex_unlock(&c->err_lock);
}

/* the GPU's MMU for an access of the engine itself */
static bool gpu_ok(mnv_chan *c, uint64_t va, uint64_t size, bool write, const char *what, int *rc)
{
    char why[256];
    if (mock_gpu_access(c->gpu->g, va, size, write, why, sizeof why)) return true;
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s", what, why);
    *rc = mmu_fault(c, va, write, msg);
    return false;
}

/* ** host semaphores */
static uint64_t sem_read(uint64_t va, bool b64)
{
    return b64 ? atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)va, memory_order_acquire)
               : atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)va, memory_order_acquire);
}

static void sem_write(uint64_t va, uint64_t v, bool b64, bool timestamp)
{
    /* before the value: a waiter that sees the value sees the time; release,
     * as a reader of the time alone (a profile harvest) frees the slot after */
    if (timestamp) atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)(va + 8), hcq_now_ns(), memory_order_release);
    if (b64) atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)va, v, memory_order_release);
    else atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)va, (uint32_t)v, memory_order_release);
    mock_progress();
}

static int sem_execute(mnv_chan *c, uint32_t v)
{
    const uint32_t *r = c->regs[0];
    /* SEM_ADDR_HI is 8 bits on AMPERE_CHANNEL_GPFIFO_A, 25 on HOPPER_CHANNEL_GPFIFO_A */
    uint32_t hi_mask = c->cls == HOPPER_CHANNEL_GPFIFO_A ? 0x1FFFFFFu : 0xFFu;
    uint64_t va = (uint64_t)(r[NV_HOST_SEM_ADDR_HI / 4] & hi_mask) << 32 | (r[NV_HOST_SEM_ADDR_LO / 4] & ~3u);
    bool b64 = v & NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT;
    uint64_t payload = b64 ? (uint64_t)r[NV_HOST_SEM_PAYLOAD_HI / 4] << 32 | r[NV_HOST_SEM_PAYLOAD_LO / 4]
                           : r[NV_HOST_SEM_PAYLOAD_LO / 4];
    uint32_t op = NV_SEM_EXECUTE_OPERATION(v);
    bool release = op == NV_SEM_OP_RELEASE, ts = release && (v & NV_SEM_EXECUTE_RELEASE_TIMESTAMP);
    int rc;
    /* 4-byte, 8-byte for 64-bit payloads, 16-byte for a release with a
     * timestamp (dev_pbdma.ref.txt SEM_EXECUTE: NV_PBDMA_INTR_0_SEMAPHORE) */
    unsigned align = ts ? 16 : b64 ? 8 : 4;
    if ((va & (align - 1)) != 0)
        return channel_error(c, NV_RC_PBDMA_ERROR, "semaphore address 0x%llx is not %u-byte aligned%s",
                             (unsigned long long)va, align, ts ? " (a release with a timestamp)" : "");
    if (!gpu_ok(c, va, ts ? 16 : b64 ? 8 : 4, release, "host semaphore", &rc)) return rc;
    if (release) {
        sem_write(va, payload, b64, ts);
        return M_OK;
    }
    /* HOPPER_CHANNEL_GPFIFO_A lists ACQ_CIRC_GEQ and not ACQ_STRICT_GEQ
     * (clc86f.h): which of the two a Hopper PBDMA honours with a 64-bit
     * payload no source settles; the mock runs both, or hangs on the one
     * refuse= names */
    if (c->cls == HOPPER_CHANNEL_GPFIFO_A) {
        if (op == NV_SEM_OP_ACQ_STRICT_GEQ && mock_refused("acq-strict-geq"))
            return hang(c, "acq-strict-geq", "a SEM_EXECUTE ACQ_STRICT_GEQ");
        if (op == NV_SEM_OP_ACQ_CIRC_GEQ && mock_refused("acq-circ-geq"))
            return hang(c, "acq-circ-geq", "a SEM_EXECUTE ACQ_CIRC_GEQ");
    }
    uint64_t cur = sem_read(va, b64);
    bool ok;
    switch (op) {
    case NV_SEM_OP_ACQUIRE: ok = cur == payload; break;
    case NV_SEM_OP_ACQ_STRICT_GEQ: ok = cur >= payload; break;
    case NV_SEM_OP_ACQ_CIRC_GEQ: ok = b64 ? (int64_t)(cur - payload) >= 0 : (int32_t)(uint32_t)(cur - payload) >= 0; break;
    case NV_SEM_OP_ACQ_AND: ok = (cur & payload) != 0; break;
    case NV_SEM_OP_ACQ_NOR: ok = ~(cur | payload) != 0; break;
    default: return channel_error(c, NV_RC_PBDMA_ERROR, "SEM_EXECUTE operation %u is not emulated", op);
    }
    return ok ? M_OK : M_BLOCKED;
}

/* ** compute: the instruction cache. Code the SMs fetched stays cached
 * until a launch invalidates it (QMD INVALIDATE_INSTRUCTION_CACHE): a
 * program loaded where another ran, launched without invalidating, would
 * run the old instructions. The mock cannot run stale code, so it stops
 * the channel, saying so. */
static uint64_t code_digest(uint64_t va)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint8_t *p = (const uint8_t *)(uintptr_t)va;
    for (int i = 0; i < 256; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static int icache_fetch(mnv_chan *c, uint64_t prog, bool invalidate)
{
    mnv_gpu *g = c->gpu;
    if (!mock_gpu_access(g->g, prog, 256, false, NULL, 0)) return M_OK; /* the launch reports the fault */
    uint64_t d = code_digest(prog);
    bool stale = false;
    pthread_mutex_lock(&g->fault_lock);
    if (invalidate) g->icache_n = 0;
    uint32_t i = 0;
    while (i < g->icache_n && g->icache[i].va != prog) i++;
    if (i < g->icache_n) {
        stale = g->icache[i].digest != d;
    } else {
        if (g->icache_n < BASE_ARRAY_LEN(g->icache)) g->icache_n++;
        else i = (uint32_t)(d % BASE_ARRAY_LEN(g->icache)); /* full: an entry is evicted */
        g->icache[i].va = prog;
        g->icache[i].digest = d;
    }
    pthread_mutex_unlock(&g->fault_lock);
    if (stale)
        return channel_error(c, NV_RC_GR_EXCEPTION, "the code at 0x%llx changed since the SMs cached it and the QMD "
                             "does not set INVALIDATE_INSTRUCTION_CACHE: the kernel would run stale instructions",
                             (unsigned long long)prog);
    return M_OK;
}

/* ** compute: QMD launches */
static int launch(mnv_chan *c, uint32_t subch, uint64_t qmd_va)
{
    const nv_family *f = c->gpu->f;
    int rc;
    /* the version is in the QMD itself (QMD_MAJOR_VERSION sits at the same
     * bits in every layout); the class takes the ones its QMD header
     * documents (open-gpu-doc classes/compute/cl*c0qmd.h) */
    if (!gpu_ok(c, qmd_va, NV_QMD_V03_BYTES, false, "fetching a QMD", &rc)) return rc;
    uint32_t major = nv_qmd_major_of((const uint32_t *)(uintptr_t)qmd_va);
    if (major >= 32 || !(f->qmd_documented & (1u << major)))
        return channel_error(c, NV_RC_GR_EXCEPTION, "QMD at 0x%llx has major version %u; %s (class 0x%04x) documents "
                             "versions%s%s%s", (unsigned long long)qmd_va, major, c->gpu->m->name, c->engine_cls,
                             f->qmd_documented & 4 ? " 2" : "", f->qmd_documented & 8 ? " 3" : "",
                             f->qmd_documented & 16 ? " 4" : "");
    if (major != 3 && major != 4)
        return channel_error(c, NV_RC_GR_EXCEPTION, "QMD at 0x%llx has major version %u, which class 0x%04x documents "
                             "but the mock does not emulate (it reads V03 and V04)", (unsigned long long)qmd_va, major,
                             c->engine_cls);
    int ver = nv_qmd_ver_of_major(major);
    uint32_t bytes = nv_qmd_bytes(ver), q[NV_QMD_MAX_DW];
    if (!gpu_ok(c, qmd_va, bytes, false, "fetching a QMD", &rc)) return rc;
    memcpy(q, (const void *)(uintptr_t)qmd_va, bytes);
    mock_dump(c->eng, "nv-qmd", c->engine_cls, qmd_va, q, bytes / 4);
    /* refuse=: the two versions Hopper's class documents, one hanging */
    if (f->qmd_documented == (1u << 3 | 1u << 4)) {
        if (major == 4 && mock_refused("qmd-v4")) return hang(c, "qmd-v4", "a QMD V04 launch");
        if (major == 3 && mock_refused("qmd-v3")) return hang(c, "qmd-v3", "a QMD V03 launch");
    }
    /* refuse=: launches without local memory, or with only the ABI's
     * reserve (what every launch of a kernel without a stack gets under
     * the proven path) */
    uint32_t slm = (uint32_t)nv_qmd_get(q, ver, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0);
    if (!slm && mock_refused("local-lazy")) return hang(c, "local-lazy", "a launch without local memory");
    if (slm && slm <= 0x240 && mock_refused("local-min"))
        return hang(c, "local-min", "a launch with only the 0x240-byte local-memory reserve");
    uint64_t prog = nv_qmd_get(q, ver, NV_QMD_PROGRAM_ADDRESS_LOWER, 0) |
                    nv_qmd_get(q, ver, NV_QMD_PROGRAM_ADDRESS_UPPER, 0) << 32;
    uint32_t grid[3] = {(uint32_t)nv_qmd_get(q, ver, NV_QMD_GRID_WIDTH, 0),
                        (uint32_t)nv_qmd_get(q, ver, NV_QMD_GRID_HEIGHT, 0),
                        (uint32_t)nv_qmd_get(q, ver, NV_QMD_GRID_DEPTH, 0)};
    uint32_t block[3] = {(uint32_t)nv_qmd_get(q, ver, NV_QMD_CTA_THREAD_DIMENSION0, 0),
                         (uint32_t)nv_qmd_get(q, ver, NV_QMD_CTA_THREAD_DIMENSION1, 0),
                         (uint32_t)nv_qmd_get(q, ver, NV_QMD_CTA_THREAD_DIMENSION2, 0)};
    if (!nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_VALID, 0))
        return channel_error(c, NV_RC_GR_EXCEPTION, "QMD at 0x%llx launches without constant bank 0",
                             (unsigned long long)qmd_va);
    unsigned shift = ver == NV_QMD_V04 ? 6 : 0;
    uint64_t cb0 = (nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, 0) |
                    nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0) << 32)
                   << shift;
    uint64_t cb0_size = nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0) << 4;
    /* pri_sked.ref.txt SKEDCHECK16_CTA_THREAD_DIMENSION_ZERO, SKEDCHECK11_TOTAL_THREADS */
    for (int i = 0; i < 3; i++)
        if (!block[i])
            return channel_error(c, NV_RC_GR_EXCEPTION, "SKEDCHECK16_CTA_THREAD_DIMENSION_ZERO: QMD at 0x%llx has "
                                 "CTA_THREAD_DIMENSION%d 0 (a block of %ux%ux%u threads)", (unsigned long long)qmd_va,
                                 i, block[0], block[1], block[2]);
    if ((uint64_t)block[0] * block[1] * block[2] > 1024)
        return channel_error(c, NV_RC_GR_EXCEPTION, "a block of %ux%ux%u threads", block[0], block[1], block[2]);
    if ((rc = icache_fetch(c, prog, nv_qmd_get(q, ver, NV_QMD_INVALIDATE_INSTRUCTION_CACHE, 0))) != M_OK) return rc;
    c->cur_prog = prog;
    rc = mnv_run_kernel(c, q, ver, c->regs[subch], prog, cb0, cb0_size, grid, block);
    c->cur_prog = 0;
    if (rc) return rc;
    for (unsigned i = 0; i < nv_qmd_fields[NV_QMD_RELEASE_ENABLE].v[ver].count; i++) {
        if (!nv_qmd_get(q, ver, NV_QMD_RELEASE_ENABLE, i)) continue;
        uint64_t va = nv_qmd_get(q, ver, NV_QMD_RELEASE_ADDRESS_LOWER, i) |
                      nv_qmd_get(q, ver, NV_QMD_RELEASE_ADDRESS_UPPER, i) << 32;
        bool b64 = nv_qmd_get(q, ver, NV_QMD_RELEASE_PAYLOAD64B, i);
        bool ts = nv_qmd_get(q, ver, NV_QMD_RELEASE_STRUCTURE_SIZE, i) == 0; /* four words */
        uint64_t v = nv_qmd_get(q, ver, NV_QMD_RELEASE_PAYLOAD_LOWER, i) |
                     (b64 ? nv_qmd_get(q, ver, NV_QMD_RELEASE_PAYLOAD_UPPER, i) << 32 : 0);
        if (ts && (va & 15))
            return channel_error(c, NV_RC_GR_EXCEPTION, "QMD release %u at 0x%llx: a four-word release must be "
                                 "16-byte aligned", i, (unsigned long long)va);
        if (!gpu_ok(c, va, ts ? 16 : b64 ? 8 : 4, true, "a QMD release semaphore", &rc)) return rc;
        sem_write(va, v, b64, ts);
    }
    return M_OK;
}

static int compute_method(mnv_chan *c, uint32_t subch, uint32_t mthd, uint32_t v)
{
    const uint32_t *r = c->regs[subch];
    int rc;
    switch (mthd) {
    case NV_COMPUTE_SEND_SIGNALING_PCAS2_B:
        return launch(c, subch, (uint64_t)r[NV_COMPUTE_SEND_PCAS_A / 4] << 8);
    case NV_COMPUTE_LAUNCH_DMA: {
        uint64_t bytes = (uint64_t)r[NV_COMPUTE_LINE_LENGTH_IN / 4] * BASE_MAX(r[NV_COMPUTE_LINE_COUNT / 4], 1u);
        c->inline_dst = (uint64_t)r[NV_COMPUTE_OFFSET_OUT_UPPER / 4] << 32 | r[NV_COMPUTE_OFFSET_OUT / 4];
        c->inline_left = (uint32_t)((bytes + 3) / 4);
        return M_OK;
    }
    case NV_COMPUTE_LOAD_INLINE_DATA:
        if (!c->inline_left)
            return channel_error(c, NV_RC_GR_EXCEPTION, "LOAD_INLINE_DATA without a LAUNCH_DMA expecting it");
        if (!gpu_ok(c, c->inline_dst, 4, true, "an inline upload", &rc)) return rc;
        memcpy((void *)(uintptr_t)c->inline_dst, &v, 4);
        c->inline_dst += 4;
        c->inline_left--;
        return M_OK;
    case NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B:
        /* Hopper's shared window must be 4 GiB aligned */
        if (c->gpu->f->sm_version >= 0x900 && v != 0)
            return channel_error(c, NV_RC_GR_EXCEPTION, "shared memory window 0x%x%08x is not 4 GiB aligned",
                                 r[NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A / 4], v);
        return M_OK;
    default: return M_OK; /* state methods: kept in regs */
    }
}

/* ** copy engine */
static int copy_launch(mnv_chan *c, uint32_t subch, uint32_t v)
{
    const uint32_t *r = c->regs[subch];
    int rc;
    if (NV_COPY_DMA_TRANSFER_TYPE(v)) {
        uint64_t src = (uint64_t)(r[NV_COPY_OFFSET_IN_UPPER / 4] & 0x1FFFFFFu) << 32 | r[NV_COPY_OFFSET_IN_LOWER / 4];
        uint64_t dst = (uint64_t)(r[NV_COPY_OFFSET_OUT_UPPER / 4] & 0x1FFFFFFu) << 32 | r[NV_COPY_OFFSET_OUT_LOWER / 4];
        uint64_t len = r[NV_COPY_LINE_LENGTH_IN / 4];
        uint32_t lines = (v & NV_COPY_DMA_MULTI_LINE) ? r[NV_COPY_LINE_COUNT / 4] : 1;
        uint64_t pin = (v & NV_COPY_DMA_MULTI_LINE) ? r[NV_COPY_PITCH_IN / 4] : len;
        uint64_t pout = (v & NV_COPY_DMA_MULTI_LINE) ? r[NV_COPY_PITCH_OUT / 4] : len;
        if (!(v & NV_COPY_DMA_SRC_PITCH) || !(v & NV_COPY_DMA_DST_PITCH))
            return channel_error(c, NV_RC_CE2_ERROR, "block-linear copies are not emulated (LAUNCH_DMA 0x%x)", v);
        for (uint32_t l = 0; l < lines && len; l++) {
            if (!gpu_ok(c, src + l * pin, len, false, "copy engine source", &rc)) return rc;
            if (!gpu_ok(c, dst + l * pout, len, true, "copy engine destination", &rc)) return rc;
            memmove((void *)(uintptr_t)(dst + l * pout), (const void *)(uintptr_t)(src + l * pin), len);
        }
    }
    uint32_t st = NV_COPY_DMA_SEMAPHORE_TYPE(v);
    if (st) {
        uint64_t va = (uint64_t)(r[NV_COPY_SET_SEMAPHORE_A / 4] & 0x1FFFFFFu) << 32 | r[NV_COPY_SET_SEMAPHORE_B / 4];
        /* the 64-bit payload exists from AMPERE_DMA_COPY_B on (clc7b5.h);
         * AMPERE_DMA_COPY_A ignores bit 27 and writes 32 bits */
        bool b64 = (v & NV_COPY_DMA_SEMAPHORE_PAYLOAD_64) && c->engine_cls >= AMPERE_DMA_COPY_B;
        uint64_t payload = r[NV_COPY_SET_SEMAPHORE_PAYLOAD / 4] |
                           (b64 ? (uint64_t)r[NV_COPY_SET_SEMAPHORE_PAYLOAD_UPPER / 4] << 32 : 0);
        bool ts = st == 2;
        if (b64 && mock_refused("ce-release64"))
            return hang(c, "ce-release64", "a copy-engine release with a 64-bit payload");
        if (!b64 && c->engine_cls >= AMPERE_DMA_COPY_B && mock_refused("ce-release32"))
            return hang(c, "ce-release32", "a one-word copy-engine release");
        if (ts && (va & 15))
            return channel_error(c, NV_RC_CE2_ERROR, "copy engine semaphore at 0x%llx: a four-word release must be "
                                 "16-byte aligned", (unsigned long long)va);
        if (!gpu_ok(c, va, ts ? 16 : b64 ? 8 : 4, true, "copy engine semaphore", &rc)) return rc;
        if (ts && !b64) { /* four words: payload, 0, timestamp */
            sem_write(va, payload, true, true);
        } else {
            sem_write(va, payload, b64, ts);
        }
    }
    return M_OK;
}

/* ** method dispatch */
static int method(mnv_chan *c, uint32_t subch, uint32_t mthd, uint32_t v)
{
    if (mthd < NV_HOST_MTHD_LIMIT) {
        c->regs[0][mthd / 4] = v;
        if (mthd == NV_HOST_SET_OBJECT) {
            if ((v & 0xFFFFu) != c->engine_cls)
                return channel_error(c, NV_RC_GR_EXCEPTION, "SET_OBJECT of class 0x%04x on subchannel %u, but the "
                                     "channel's object is class 0x%04x", v & 0xFFFFu, subch, c->engine_cls);
            c->subch_cls[subch] = v & 0xFFFFu;
            return M_OK;
        }
        if (mthd == NV_HOST_SEM_EXECUTE) return sem_execute(c, v);
        return M_OK;
    }
    uint32_t cls = c->subch_cls[subch];
    if (!cls) {
        const char *n = nv_method_name(c->engine_cls == c->gpu->f->compute_cls ? 1 : 2, mthd);
        return channel_error(c, NV_RC_GR_EXCEPTION, "method 0x%04x (%s) on subchannel %u, which has no object (no "
                             "SET_OBJECT)", mthd, n ? n : "unknown", subch);
    }
    if (mthd / 4 < MTHD_REGS) c->regs[subch][mthd / 4] = v;
    if (cls == c->gpu->f->compute_cls) return compute_method(c, subch, mthd, v);
    if (mthd == NV_COPY_LAUNCH_DMA) return copy_launch(c, subch, v);
    return M_OK;
}

/* Runs the current segment from (pos, sub) on; M_BLOCKED leaves the
 * position at the blocked method so it runs again. */
/* reads the segment's words up to `upto` from memory (once each) */
static bool seg_read(mnv_chan *c, uint32_t upto, int *rc)
{
    if (upto <= c->seg_read) return true;
    uint64_t va = c->seg_va + 4ull * c->seg_read;
    if (!gpu_ok(c, va, 4ull * (upto - c->seg_read), false, "fetching pushbuffer words", rc)) return false;
    memcpy(c->seg + c->seg_read, (const void *)(uintptr_t)va, 4ull * (upto - c->seg_read));
    c->seg_read = upto;
    return true;
}

static int run_segment(mnv_chan *c)
{
    int rc;
    while (c->pos < c->seg_n) {
        if (!seg_read(c, c->pos + 1, &rc)) return rc;
        uint32_t h = c->seg[c->pos], op = nv_mthd_sec_op(h), count = nv_mthd_count(h);
        uint32_t subch = nv_mthd_subch(h), addr = nv_mthd_addr(h);
        if (op == NV_SEC_OP_IMMD) {
            rc = method(c, subch, addr, count);
            if (rc != M_OK) return rc;
            c->pos++;
            continue;
        }
        if (op != NV_SEC_OP_INC && op != NV_SEC_OP_NON_INC && op != NV_SEC_OP_ONE_INC)
            return channel_error(c, NV_RC_PBDMA_ERROR, "pushbuffer at 0x%llx: header 0x%08x has SEC_OP %u",
                                 (unsigned long long)(c->seg_va + 4ull * c->pos), h, op);
        if (c->pos + 1 + count > c->seg_n)
            return channel_error(c, NV_RC_PBDMA_ERROR, "pushbuffer at 0x%llx: header 0x%08x wants %u data words; the "
                                 "segment has %u", (unsigned long long)(c->seg_va + 4ull * c->pos), h, count,
                                 c->seg_n - c->pos - 1);
        if (!seg_read(c, c->pos + 1 + count, &rc)) return rc;
        for (; c->sub < count; c->sub++) {
            uint32_t m = op == NV_SEC_OP_INC ? addr + 4 * c->sub
                         : op == NV_SEC_OP_NON_INC ? addr
                         : addr + (c->sub ? 4 : 0);
            rc = method(c, subch, m, c->seg[c->pos + 1 + c->sub]);
            if (rc != M_OK) return rc;
        }
        c->pos += 1 + count;
        c->sub = 0;
    }
    return M_OK;
}

/* USERD's words: at the host's address while the process maps the object
 * (mock_bo_host_begin), else through the mock's own mapping, as the GPU
 * reaches USERD whatever the CPU maps (hcq unmaps it at close even when
 * freeing the channel failed, and the channel runs on) */
static uint32_t userd_load(mnv_chan *c, uint32_t off)
{
    volatile uint8_t *h = mock_bo_host_begin(c->userd_bo, c->userd_va, c->userd_off + off);
    volatile uint8_t *p = h ? h : c->userd_map + c->userd_off + off;
    uint32_t v = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)p, memory_order_acquire);
    mock_bo_host_end();
    if (!h) sys_doorbell_acquire(); /* orders what the host wrote before its doorbell */
    return v;
}

static void userd_store(mnv_chan *c, uint32_t off, uint32_t v)
{
    volatile uint8_t *h = mock_bo_host_begin(c->userd_bo, c->userd_va, c->userd_off + off);
    volatile uint8_t *p = h ? h : c->userd_map + c->userd_off + off;
    atomic_store_explicit((_Atomic uint32_t *)(uintptr_t)p, v, memory_order_release);
    mock_bo_host_end();
}

static mock_step step(mock_engine *e, void *ctx)
{
    mnv_chan *c = ctx;
    (void)e;
    if (atomic_load(&c->dead) || c->hung) return MOCK_STEP_STOPPED;
    if (!atomic_load(c->scheduled) || atomic_load(&c->gpu->paused)) return MOCK_STEP_IDLE;
    if (c->pos >= c->seg_n) {
        uint32_t put = userd_load(c, NV_USERD_GP_PUT);
        if (put == c->get) {
            /* out of work: USERD gets GP_GET now (unless writeback is off) */
            if (mock_cfg()->nv_gpget == MOCK_GPGET_IDLE && c->get_written != c->get) {
                c->get_written = c->get;
                userd_store(c, NV_USERD_GP_GET, c->get);
            }
            return MOCK_STEP_IDLE;
        }
        int rc;
        if (put >= c->entries) {
            channel_error(c, NV_RC_PBDMA_ERROR, "GPPut %u is past the ring's %u entries", put, c->entries);
            return MOCK_STEP_STOPPED;
        }
        uint64_t eva = c->gpfifo_va + 8ull * c->get;
        if (!gpu_ok(c, eva, 8, false, "fetching a GPFIFO entry", &rc)) return MOCK_STEP_STOPPED;
        uint64_t entry = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)eva, memory_order_acquire);
        uint64_t va = nv_gp_entry_va(entry);
        uint32_t n = nv_gp_entry_len(entry);
        if (n && !gpu_ok(c, va, 4ull * n, false, "fetching a pushbuffer segment", &rc)) return MOCK_STEP_STOPPED;
        if (n > c->seg_cap) {
            uint32_t *s = realloc(c->seg, (size_t)n * 4);
            if (!s) {
                channel_error(c, NV_RC_PBDMA_ERROR, "the mock ran out of memory for a %u-dword segment", n);
                return MOCK_STEP_STOPPED;
            }
            c->seg = s;
            c->seg_cap = n;
        }
        c->seg_n = n;
        c->seg_va = va;
        c->pos = c->sub = c->seg_read = 0;
        mock_dump(c->eng, "nv-gpfifo", c->engine_cls, va, (const uint32_t *)(uintptr_t)va, n);
        /* the segment begins: GP_GET moves past its entry, though its words
         * are read only as it runs */
        c->get = (c->get + 1) % c->entries;
        if (mock_cfg()->nv_gpget == MOCK_GPGET_EAGER) {
            c->get_written = c->get;
            userd_store(c, NV_USERD_GP_GET, c->get);
        }
    }
    int rc = run_segment(c);
    return rc == M_BLOCKED ? MOCK_STEP_BLOCKED : rc == M_FAULT || rc == M_HUNG ? MOCK_STEP_STOPPED : MOCK_STEP_PROGRESS;
}

int mnv_chan_bind(mnv_chan *c, uint32_t engine_cls)
{
    c->engine_cls = engine_cls;
    snprintf(c->name, sizeof c->name, "nv%u.%s", c->gpu->index, engine_cls == c->gpu->f->compute_cls ? "compute" : "copy");
    c->eng = mock_engine_start(c->gpu->g, c->name, step, c);
    return c->eng ? 0 : -1;
}
