/* What the NV mock's SM does with a QMD launch once the compute engine has
 * read it: run the kernel at the program address. Under HCQ_MOCK_SHADER=isa
 * any machine code there runs on the SASS executor (mock_sass.h), checked
 * first as below; otherwise two kinds of code can sit there:
 *   - serialized IR (mock-sm_* cubins, the fallback where ptxas or clang
 *     is missing): the IR interpreter runs it, kernargs at constant bank 0
 *     + the model's parameter base;
 *   - SASS of a real cubin the process loaded: the launch is checked
 *     against the cubin as the hardware would fail it (register file,
 *     shared memory configuration, barriers, constant bank 0, local
 *     memory), each parameter is read from constant bank 0 at the cubin's
 *     own parameter base and offsets (what the SASS would read), and the
 *     cubin's host twin runs. A bad access is an MMU fault; the rest are
 *     graphics exceptions naming the QMD field.
 * Hardware limits (the family's row, compiler/nv_chips.c): 65536 32-bit
 * registers per SM in four sub-partitions, allocated per warp in units of
 * 256 (the CUDA occupancy calculator's allocation granularity), the warps
 * of a CTA spread over the sub-partitions; a thread's local memory holds
 * its stack below the initial stack pointer and the 0x240 bytes the ABI
 * keeps above it (NV_LOCAL_RESERVE); the pri_sked SKEDCHECK list
 * (open-gpu-doc manuals/ampere/ga100/pri_sked.ref.txt) names what the
 * scheduler checks; the first KiB of shared memory is the system's on sm_8x/9x (ptxas's
 * .nv.shared.reserved section); a bar.sync beyond the QMD's
 * BARRIER_COUNT is an illegal instruction parameter (the loader writes
 * the cubin's EIATTR_NUM_BARRIERS there). */
#include "drivers/mock/mock_nv.h"
#include "drivers/mock/mock_sass.h"
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "compiler/isa.h"

#include <stdlib.h>
#include <string.h>

#define SHARED_RESERVED 1024u

/* what the SASS of a cubin needs, parsed once per registered binary */
typedef struct kinfo {
    uint32_t sm, regs, stack, param_base, param_bytes, shared, barriers, nparams;
    hcq_param_info params[256];
    char name[64];
} kinfo;

/* the kernel `kernel` (NULL: the only one) of a cubin, parsed once and
 * kept in *slot */
static const kinfo *info_of_cubin(const void *bin, size_t size, const char *kernel, void *_Atomic *slot, char *err,
                                  size_t err_size)
{
    kinfo *ki = atomic_load(slot);
    if (ki) return ki;
    nv_cubin c;
    if (nv_cubin_parse(bin, size, "mock", kernel, &c)) {
        snprintf(err, err_size, "%s", hcq_error_message());
        return NULL;
    }
    if (!(ki = calloc(1, sizeof *ki))) {
        nv_cubin_free(&c);
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    *ki = (kinfo){c.sm, c.regs, c.stack, c.have_cbank ? c.param_base : 0, c.param_bytes, c.shared_user, c.barriers,
                  c.nparams};
    memcpy(ki->params, c.params, sizeof ki->params);
    snprintf(ki->name, sizeof ki->name, "%s", c.name);
    nv_cubin_free(&c);
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, ki)) {
        free(ki);
        ki = expected;
    }
    return ki;
}

static const kinfo *info_of(const cc_twin_entry *e, char *err, size_t err_size)
{
    return info_of_cubin(e->binary, e->binary_size, NULL, &((cc_twin_entry *)e)->mock_info, err, err_size);
}

/* whether e's parameters end within the constant bank of *ctx bytes (a
 * binary that cannot be read is left to the launch to report) */
static bool params_fit(const cc_twin_entry *e, void *ctx)
{
    char err[512];
    const kinfo *ki = info_of(e, err, sizeof err);
    return !ki || (uint64_t)ki->param_base + ki->param_bytes <= *(const uint64_t *)ctx;
}

#define Q(f) ((uint32_t)nv_qmd_get(q, ver, NV_QMD_##f, 0))

/* the launch as the SM would check it against the code; 0 or the
 * channel's error */
static int check(mnv_chan *c, const uint32_t *q, int ver, const uint32_t *regs, const kinfo *ki, const uint32_t block[3],
                 uint64_t cb0_size)
{
    const mnv_model *m = mnv_chan_gpu(c)->m;
    uint32_t dev_major = m->sm_version >> 8, dev_minor = m->sm_version & 0xf;
    if (ki->sm / 10 != dev_major || ki->sm % 10 > dev_minor)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: illegal instruction: the program is SASS for sm_%u; "
                              "%s is sm_%u%u", ki->name, ki->sm, m->name, dev_major, dev_minor);
    const nv_family *f = mnv_chan_gpu(c)->f;
    uint32_t threads = block[0] * block[1] * block[2], rc = Q(REGISTER_COUNT);
    if (rc < ki->regs)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD REGISTER_COUNT %u is below the %u registers its "
                              "SASS uses", ki->name, rc, ki->regs);
    if (rc > f->max_regs_per_thread) /* SKEDCHECK06_REGISTER_COUNT */
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD REGISTER_COUNT %u is above the %u a thread can "
                              "have (SKEDCHECK06_REGISTER_COUNT)", ki->name, rc, f->max_regs_per_thread);
    /* SKEDCHECK19_CTA_REGISTER_CONSUMPTION: each warp takes its registers in
     * allocation units from one sub-partition's quarter of the file, and
     * the CTA's warps spread over the sub-partitions, so the fullest holds
     * ceil(warps / 4) of them */
    uint32_t warps = (threads + 31) / 32, per_part = (warps + f->sm_partitions - 1) / f->sm_partitions;
    uint64_t per_warp = base_align_up((uint64_t)rc * 32, f->reg_unit), need = per_warp * per_part;
    if (need > f->regs_per_sm / f->sm_partitions)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD REGISTER_COUNT %u x %u threads per block needs "
                              "%llu registers in one of the SM's %u sub-partitions (%u warps of %llu, in units of %u); "
                              "each has %u of the register file's %u (SKEDCHECK19_CTA_REGISTER_CONSUMPTION)", ki->name,
                              rc, threads, (unsigned long long)need, f->sm_partitions, per_part,
                              (unsigned long long)per_warp, f->reg_unit, f->regs_per_sm / f->sm_partitions,
                              f->regs_per_sm);
    uint32_t shared = Q(SHARED_MEMORY_SIZE), want = ki->shared + SHARED_RESERVED;
    if (shared < want)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD SHARED_MEMORY_SIZE %u is below the %u bytes it "
                              "uses (%u of .nv.shared + the system's %u)", ki->name, shared, want, ki->shared,
                              SHARED_RESERVED);
    /* the carve-out: SM_CONFIG values encode KiB / 4 + 1 */
    uint32_t lo = Q(MIN_SM_CONFIG_SHARED_MEM_SIZE), tgt = Q(TARGET_SM_CONFIG_SHARED_MEM_SIZE),
             hi = Q(MAX_SM_CONFIG_SHARED_MEM_SIZE);
    if (!lo || lo > tgt || tgt > hi)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: the QMD's shared-memory configuration is not ordered "
                              "(MIN_SM_CONFIG_SHARED_MEM_SIZE %u, TARGET %u, MAX %u)", ki->name, lo, tgt, hi);
    if ((hi - 1) * 4 > nv_family_shared_kib(f))
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD MAX_SM_CONFIG_SHARED_MEM_SIZE %u asks for %u KiB "
                              "of shared memory; the %s SM has %u", ki->name, hi, (hi - 1) * 4, m->name,
                              nv_family_shared_kib(f));
    if (shared > (tgt - 1) * 4096)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD SHARED_MEMORY_SIZE %u exceeds the %u KiB "
                              "TARGET_SM_CONFIG_SHARED_MEM_SIZE %u configures", ki->name, shared, (tgt - 1) * 4, tgt);
    /* BARRIER_COUNT is checked where hardware checks it: at the bar.sync */
    uint64_t params_end = (uint64_t)ki->param_base + ki->param_bytes;
    if (cb0_size < params_end)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: constant bank 0 is %llu bytes "
                              "(CONSTANT_BUFFER_SIZE_SHIFTED4); its parameters reach 0x%llx", ki->name,
                              (unsigned long long)cb0_size, (unsigned long long)params_end);
    /* local memory (SKEDCHECK03_LOCAL_MEMORY_HIGH_SIZE, 05_..._TOTAL_SIZE):
     * the stack and the ABI's reserve above the initial stack pointer per
     * thread, and a buffer holding that for every warp the TPCs can run */
    uint32_t slm = (uint32_t)nv_qmd_get(q, ver, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0);
    if (ki->stack && slm < ki->stack + NV_LOCAL_RESERVE)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD SHADER_LOCAL_MEMORY_HIGH_SIZE %u is below its %u "
                              "bytes of stack + the 0x%x the ABI reserves above the stack pointer", ki->name, slm,
                              ki->stack, NV_LOCAL_RESERVE);
    if (slm) {
        const mnv_model *mm = mnv_chan_gpu(c)->m;
        uint64_t buf = (uint64_t)regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A / 4] << 32 |
                       regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B / 4];
        uint64_t per_tpc = (uint64_t)(regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A / 4] & 0xffu) << 32 |
                           regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B / 4];
        uint64_t want_tpc = base_align_up((uint64_t)slm * 32, 0x200) * mm->max_warps_per_sm * mm->sms_per_tpc;
        if (!buf)
            return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: a launch with %u bytes of local memory per "
                                  "thread, but no local-memory buffer is set (SET_SHADER_LOCAL_MEMORY_A/B)", ki->name,
                                  slm);
        if (per_tpc < want_tpc)
            return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: %u bytes of local memory per thread need %llu "
                                  "per TPC (%u warps per SM x %u SMs); SET_SHADER_LOCAL_MEMORY_NON_THROTTLED gives %llu",
                                  ki->name, slm, (unsigned long long)want_tpc, mm->max_warps_per_sm, mm->sms_per_tpc,
                                  (unsigned long long)per_tpc);
        uint64_t total = per_tpc * mm->gpcs * mm->tpcs_per_gpc;
        char why[256];
        if (!mock_gpu_access(mnv_chan_gpu(c)->g, buf, total, true, why, sizeof why))
            return mnv_chan_mmu_fault(c, buf, true, "the local-memory buffer (per TPC x the die's TPCs)");
    }
    return 0;
}

static int run_twin(mnv_chan *c, const cc_twin_entry *e, const uint32_t *q, int ver, const uint32_t *regs,
                    uint64_t cb0, uint64_t cb0_size, const uint32_t grid[3], const uint32_t block[3])
{
    char err[512];
    const kinfo *ki = info_of(e, err, sizeof err);
    if (!ki) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the cubin of the code at a launch: %s", err);
    int rc = check(c, q, ver, regs, ki, block, cb0_size);
    if (rc) return rc;
    const cc_twin_module *mod = &e->mod;
    if (!mod->call)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s` was loaded for the mock's SASS executor "
                              "(HCQ_MOCK_SHADER=isa) and has no host twin to run", ki->name);
    if (mod->nparams != ki->nparams)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: its host twin takes %u parameters, its cubin %u",
                              ki->name, mod->nparams, ki->nparams);
    for (uint32_t i = 0; i < ki->nparams; i++)
        if ((mod->meta[CC_TWIN_META_PARAMS + i] & 0xffffu) != ki->params[i].size)
            return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: parameter %u is %u bytes in its cubin, %u in its "
                                  "host twin", ki->name, i, ki->params[i].size, mod->meta[CC_TWIN_META_PARAMS + i] & 0xffffu);
    /* the parameters as the launch starts, from where the SASS reads them */
    uint64_t at = cb0 + ki->param_base;
    char why[256];
    if (ki->param_bytes && !mock_gpu_access(mnv_chan_gpu(c)->g, at, ki->param_bytes, false, why, sizeof why)) {
        char msg[512];
        snprintf(msg, sizeof msg, "kernel `%s` reading its %u parameter bytes in constant bank 0: %s", ki->name,
                 ki->param_bytes, why);
        return mnv_chan_mmu_fault(c, at, false, msg);
    }
    uint8_t *snap = malloc(ki->param_bytes ? ki->param_bytes : 1);
    const void **args = calloc(ki->nparams ? ki->nparams : 1, sizeof *args);
    if (!snap || !args) {
        free(snap);
        free(args);
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the mock ran out of host memory for a launch");
    }
    memcpy(snap, (const void *)(uintptr_t)at, ki->param_bytes);
    for (uint32_t i = 0; i < ki->nparams; i++) args[i] = snap + ki->params[i].offset;
    mock_twin_launch ml = {.e = e, .args = args, .barriers = (uint32_t)nv_qmd_get(q, ver, NV_QMD_BARRIER_COUNT, 0)};
    memcpy(ml.grid, grid, sizeof ml.grid);
    memcpy(ml.block, block, sizeof ml.block);
    mock_fault f;
    cc_twin_fault tf;
    hcq_status s = mock_twin_run(mnv_chan_gpu(c)->g, &ml, &f, &tf);
    free(snap);
    free(args);
    if (s == HCQ_ESTATE) return mnv_chan_cancelled(c); /* the channel is being freed */
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_GLOBAL) return mnv_chan_mmu_fault(c, f.va, f.write, f.what);
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_BARRIER)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "illegal instruction parameter: bar.sync %u with QMD BARRIER_COUNT "
                              "%u: %s", tf.barrier, tf.barriers, f.what);
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_WARP) /* as the SASS executor reports HMMA by part of a warp */
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "illegal instruction: %s", f.what);
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_MISALIGNED)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "misaligned address: %s", f.what);
    if (s == HCQ_EFAULT)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "shared memory address out of range: %s", f.what);
    if (s) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the kernel at the launch: %s", hcq_error_message());
    return 0;
}

/* ** the SASS executor (HCQ_MOCK_SHADER=isa) */
#define WATCHDOG_DEFAULT_MS 30000u

/* what check() needs, from the decoded SASS where no cubin is known (a
 * program that uploaded its own code): the registers and barriers it
 * names; nothing of shared memory, parameters or stack is known */
static void info_of_sass(const sass_prog *p, uint32_t sm, uint64_t prog, kinfo *ki)
{
    memset(ki, 0, sizeof *ki);
    ki->sm = sm;
    for (uint32_t i = 0; i < p->ninsns; i++) {
        const sass_insn *in = &p->insns[i];
        for (unsigned k = 0; k < in->nops; k++)
            if (in->o[k].kind == SASS_K_R && in->o[k].reg != 255) ki->regs = BASE_MAX(ki->regs, in->o[k].reg + 1);
        if (in->op == SASS_OP_BAR && in->nops && in->o[0].kind == SASS_K_IMM)
            ki->barriers = BASE_MAX(ki->barriers, (uint32_t)in->o[0].imm + 1);
    }
    snprintf(ki->name, sizeof ki->name, "at 0x%llx", (unsigned long long)prog);
}

/* a constant bank the QMD binds, copied as the launch starts */
static int bank_copy(mnv_chan *c, uint64_t va, uint64_t size, unsigned bank, const char *kernel, uint8_t **out)
{
    char why[256];
    *out = NULL;
    if (!size) return 0;
    if (!mock_gpu_access(mnv_chan_gpu(c)->g, va, size, false, why, sizeof why)) {
        char msg[512];
        snprintf(msg, sizeof msg, "kernel `%s` reading constant bank %u (%llu bytes): %s", kernel, bank,
                 (unsigned long long)size, why);
        return mnv_chan_mmu_fault(c, va, false, msg);
    }
    if (!(*out = malloc(size))) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the mock ran out of host memory");
    memcpy(*out, (const void *)(uintptr_t)va, size);
    return 0;
}

/* which decoded program a code address held last, per GPU: checked
 * against the bytes there at every launch (the address may hold other
 * code now); saves looking through every decoded program */
#define SLOTS 64
static struct {
    const mnv_gpu *gpu;
    uint64_t va;
    const sass_prog *p;
} slots[SLOTS];
static unsigned slot_next;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static const sass_prog *recall(const mnv_gpu *g, uint64_t va, uint64_t avail)
{
    const sass_prog *p = NULL;
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS && !p; i++)
        if (slots[i].p && slots[i].gpu == g && slots[i].va == va) p = slots[i].p;
    pthread_mutex_unlock(&slot_lock);
    if (p && (p->code_size > avail || memcmp(p->code, (const void *)(uintptr_t)va, p->code_size))) p = NULL;
    return p;
}

static void remember(const mnv_gpu *g, uint64_t va, const sass_prog *p)
{
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS; i++)
        if (slots[i].gpu == g && slots[i].va == va) {
            slots[i].p = p;
            pthread_mutex_unlock(&slot_lock);
            return;
        }
    unsigned i = slot_next++ % SLOTS;
    slots[i].gpu = g;
    slots[i].va = va;
    slots[i].p = p;
    pthread_mutex_unlock(&slot_lock);
}

static int run_sass(mnv_chan *c, const uint32_t *q, int ver, const uint32_t *regs,
                    uint64_t prog, uint64_t cb0, uint64_t cb0_size, const uint32_t grid[3], const uint32_t block[3])
{
    mnv_gpu *g = mnv_chan_gpu(c);
    const mnv_model *m = g->m;
    uint32_t sm = (m->sm_version >> 8) * 10 + (m->sm_version & 0xf);
    char why[256], err[512];
    uint64_t lo, hi;
    bool writable;
    if (!mock_gpu_range(g->g, prog, 16, false, &lo, &hi, &writable, why, sizeof why)) {
        snprintf(err, sizeof err, "fetching the kernel's code at 0x%llx: %s", (unsigned long long)prog, why);
        return mnv_chan_mmu_fault(c, prog, false, err);
    }
    const sass_prog *p = recall(g, prog, hi - prog);
    size_t code_size;
    if (!p && sass_decode_extent((const void *)(uintptr_t)prog, hi - prog, sm, &p, &code_size))
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "illegal instruction at 0x%llx: %s", (unsigned long long)prog,
                              hcq_error_message());
    /* the cubin the loader had, else what the code itself says */
    remember(g, prog, p);
    kinfo derived;
    const kinfo *ki = NULL;
    const void *bin = atomic_load_explicit(&((sass_prog *)p)->binary, memory_order_acquire);
    if (bin) {
        ki = info_of_cubin(bin, p->binary_size, p->kernel, &((sass_prog *)p)->mock_info, err, sizeof err);
        if (!ki) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the cubin of the code at a launch: %s", err);
    }
    if (!ki) {
        info_of_sass(p, sm, prog, &derived);
        ki = &derived;
    }
    int rc = check(c, q, ver, regs, ki, block, cb0_size);
    if (rc) return rc;
    msass_launch l = {
        .gpu = g->g, .p = p, .kernel = ki->name, .code_va = prog,
        .regs = Q(REGISTER_COUNT), .shared_bytes = Q(SHARED_MEMORY_SIZE), .barriers = Q(BARRIER_COUNT),
        .shared_window = (uint64_t)regs[NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A / 4] << 32 |
                         regs[NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B / 4],
        .local_window = (uint64_t)regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A / 4] << 32 |
                        regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B / 4],
        .local_buf = (uint64_t)regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A / 4] << 32 |
                     regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B / 4],
        .local_low = Q(SHADER_LOCAL_MEMORY_LOW_SIZE), .local_high = Q(SHADER_LOCAL_MEMORY_HIGH_SIZE),
        .sm_count = m->enabled_tpcs * m->sms_per_tpc,
        .cancel = mock_engine_cancel_flag(),
        .memcheck = base_env_get()->mock_memcheck,
    };
    const mock_config *cfg = mock_cfg();
    l.watchdog_ns = (uint64_t)(cfg->watchdog_set ? cfg->watchdog_ms : WATCHDOG_DEFAULT_MS) * 1000000ull;
    memcpy(l.grid, grid, sizeof l.grid);
    memcpy(l.block, block, sizeof l.block);
    if (l.local_buf && (l.local_low || l.local_high) &&
        mock_gpu_range(g->g, l.local_buf, 1, true, &lo, &hi, &writable, why, sizeof why))
        l.local_buf_size = hi - l.local_buf;
    uint8_t *banks[8] = {0};
    unsigned shift = ver == NV_QMD_V04 ? 6 : 0;
    rc = bank_copy(c, cb0, cb0_size, 0, ki->name, &banks[0]);
    for (unsigned b = 1; b < 8 && !rc; b++) {
        if (!nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_VALID, b)) continue;
        uint64_t va = (nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, b) |
                       nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, b) << 32) << shift;
        uint64_t size = nv_qmd_get(q, ver, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, b) << 4;
        rc = bank_copy(c, va, size, b, ki->name, &banks[b]);
        l.cb_size[b] = (uint32_t)size;
    }
    l.cb_size[0] = (uint32_t)cb0_size;
    for (unsigned b = 0; b < 8; b++) l.cb[b] = banks[b];
    msass_fault f;
    if (!rc) {
        int k = msass_run(&l, &f);
        switch (k) {
        case MSASS_OK: break;
        case MSASS_CANCELLED: rc = mnv_chan_cancelled(c); break; /* the channel is being freed */
        case MSASS_MMU: rc = mnv_chan_mmu_fault(c, f.va, f.write, f.what); break;
        case MSASS_WATCHDOG: rc = mnv_chan_error(c, NV_RC_FIFO_IDLE_TIMEOUT, "%s", f.what); break;
        case MSASS_BARRIER: rc = mnv_chan_error(c, NV_RC_GR_EXCEPTION, "%s", f.what); break;
        default: rc = mnv_chan_error(c, NV_RC_GR_EXCEPTION, "%s", f.what); break;
        }
    }
    for (unsigned b = 0; b < 8; b++) free(banks[b]);
    return rc;
}

/* whether the code at prog is serialized kernel IR (a mock-sm_* cubin's) */
static bool code_is_ir(mnv_gpu *g, uint64_t prog)
{
    char why[128];
    return mock_gpu_access(g->g, prog, IR_BLOB_HEADER, false, why, sizeof why) &&
           !memcmp((const void *)(uintptr_t)prog, "HCIR", 4); /* serialize.c's magic; ir_blob_size says the rest */
}

/* machine code runs on the SASS executor (compiler/isa.h: HCQ_MOCK_SHADER=isa, or by default) */
static bool isa_on(const mnv_gpu *g)
{
    char target[16], why[480];
    uint32_t v = g->m->sm_version;
    snprintf(target, sizeof target, "sm_%u%u", v >> 8, v & 0xf);
    return cc_isa_on(target, why, sizeof why);
}

int mnv_run_kernel(mnv_chan *c, const uint32_t *q, int ver, const uint32_t *regs, uint64_t prog, uint64_t cb0,
                   uint64_t cb0_size, const uint32_t grid[3], const uint32_t block[3])
{
    mnv_gpu *g = mnv_chan_gpu(c);
    if (isa_on(g) && !code_is_ir(g, prog)) return run_sass(c, q, ver, regs, prog, cb0, cb0_size, grid, block);
    /* of the binaries with this code, one whose parameters fit the launch's
     * constant bank (kernels that differ only in an unused last parameter
     * share their SASS, and so their code's entry); none: the first, whose
     * check says what does not fit */
    const cc_twin_entry *e = mock_twin_at_if(g->g, prog, params_fit, &cb0_size);
    if (!e) e = mock_twin_at(g->g, prog);
    if (e) return run_twin(c, e, q, ver, regs, cb0, cb0_size, grid, block);
    /* machine code no twin was made for (a program's own cubin, through the
     * preloaded mock): the executor runs it where the decoder is */
    char why[600];
    if (base_env_get()->mock_shader_nv_kind == BASE_MOCK_SHADER_DEFAULT && !code_is_ir(g, prog) &&
        sass_nvdisasm(why, sizeof why))
        return run_sass(c, q, ver, regs, prog, cb0, cb0_size, grid, block);
    if (cb0_size < g->f->param_base)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "constant bank 0 is %llu bytes, below the parameter base 0x%x",
                              (unsigned long long)cb0_size, g->f->param_base);
    mock_fault f;
    hcq_status s = mock_shader_run(g->g, prog, cb0 + g->f->param_base, grid, block, &f);
    if (s == HCQ_ESTATE) return mnv_chan_cancelled(c); /* the channel is being freed */
    if (s == HCQ_EFAULT && f.mmu) return mnv_chan_mmu_fault(c, f.va, f.write, f.what);
    if (s == HCQ_EFAULT) /* the SM's own: a misaligned address, local memory out of range */
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "%s", f.what);
    if (s) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the kernel at 0x%llx: %s", (unsigned long long)prog,
                                 hcq_error_message());
    return 0;
}
