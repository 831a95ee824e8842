/* What the NV mock's SM does with a QMD launch once the compute engine has
 * read it: run the kernel at the program address. Two kinds of code can
 * sit there:
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
#include "drivers/nv/nv.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

#define SHARED_RESERVED 1024u

/* what the SASS of a cubin needs, parsed once per registered binary */
typedef struct kinfo {
    uint32_t sm, regs, stack, param_base, param_bytes, shared, barriers, nparams;
    hcq_param_info params[256];
    char name[64];
} kinfo;

static const kinfo *info_of(const cc_twin_entry *e, char *err, size_t err_size)
{
    cc_twin_entry *me = (cc_twin_entry *)e;
    kinfo *ki = atomic_load(&me->mock_info);
    if (ki) return ki;
    nv_cubin c;
    if (nv_cubin_parse(e->binary, e->binary_size, "mock", NULL, &c)) {
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
    if (!atomic_compare_exchange_strong(&me->mock_info, &expected, ki)) {
        free(ki);
        ki = expected;
    }
    return ki;
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
    if (s == HCQ_EFAULT)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "shared memory address out of range: %s", f.what);
    if (s) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the kernel at the launch: %s", hcq_error_message());
    return 0;
}

int mnv_run_kernel(mnv_chan *c, const uint32_t *q, int ver, const uint32_t *regs, uint64_t prog, uint64_t cb0,
                   uint64_t cb0_size, const uint32_t grid[3], const uint32_t block[3])
{
    mnv_gpu *g = mnv_chan_gpu(c);
    const cc_twin_entry *e = mock_twin_at(g->g, prog);
    if (e) return run_twin(c, e, q, ver, regs, cb0, cb0_size, grid, block);
    if (cb0_size < g->f->param_base)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "constant bank 0 is %llu bytes, below the parameter base 0x%x",
                              (unsigned long long)cb0_size, g->f->param_base);
    mock_fault f;
    hcq_status s = mock_shader_run(g->g, prog, cb0 + g->f->param_base, grid, block, &f);
    if (s == HCQ_ESTATE) return mnv_chan_cancelled(c); /* the channel is being freed */
    if (s == HCQ_EFAULT) return mnv_chan_mmu_fault(c, f.va, f.write, f.what);
    if (s) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the kernel at 0x%llx: %s", (unsigned long long)prog,
                                 hcq_error_message());
    return 0;
}
