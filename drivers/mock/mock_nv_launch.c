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
 * Hardware limits: 65536 32-bit registers per SM, allocated per warp in
 * units of 256 (the CUDA occupancy calculator's allocation granularity);
 * the first KiB of shared memory is the system's on sm_8x/9x (ptxas's
 * .nv.shared.reserved section); a bar.sync beyond the QMD's
 * BARRIER_COUNT is an illegal instruction parameter (the loader writes
 * the cubin's EIATTR_NUM_BARRIERS there). */
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>

#define SM_REGISTERS 65536u
#define REG_ALLOC_UNIT 256u
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
    uint32_t threads = block[0] * block[1] * block[2], rc = Q(REGISTER_COUNT);
    if (rc < ki->regs)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD REGISTER_COUNT %u is below the %u registers its "
                              "SASS uses", ki->name, rc, ki->regs);
    uint64_t per_warp = base_align_up((uint64_t)rc * 32, REG_ALLOC_UNIT), need = per_warp * ((threads + 31) / 32);
    if (need > SM_REGISTERS)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD REGISTER_COUNT %u x %u threads per block needs "
                              "%llu registers; the SM's register file has %u", ki->name, rc, threads,
                              (unsigned long long)need, SM_REGISTERS);
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
    if ((hi - 1) * 4 > m->shared_kib)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD MAX_SM_CONFIG_SHARED_MEM_SIZE %u asks for %u KiB "
                              "of shared memory; the %s SM has %u", ki->name, hi, (hi - 1) * 4, m->name, m->shared_kib);
    if (shared > (tgt - 1) * 4096)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD SHARED_MEMORY_SIZE %u exceeds the %u KiB "
                              "TARGET_SM_CONFIG_SHARED_MEM_SIZE %u configures", ki->name, shared, (tgt - 1) * 4, tgt);
    /* BARRIER_COUNT is checked where hardware checks it: at the bar.sync */
    uint64_t params_end = (uint64_t)ki->param_base + ki->param_bytes;
    if (cb0_size < params_end)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: constant bank 0 is %llu bytes "
                              "(CONSTANT_BUFFER_SIZE_SHIFTED4); its parameters reach 0x%llx", ki->name,
                              (unsigned long long)cb0_size, (unsigned long long)params_end);
    if (ki->stack) {
        uint32_t slm = (uint32_t)nv_qmd_get(q, ver, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0);
        uint64_t buf = (uint64_t)regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A / 4] << 32 |
                       regs[NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B / 4];
        if (slm < ki->stack)
            return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s`: QMD SHADER_LOCAL_MEMORY_HIGH_SIZE %u is below its "
                                  "%u bytes of stack", ki->name, slm, ki->stack);
        if (!buf)
            return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "kernel `%s` uses %u bytes of stack, but no local-memory "
                                  "buffer is set (SET_SHADER_LOCAL_MEMORY_A/B)", ki->name, ki->stack);
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
    if (cb0_size < g->m->param_base)
        return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "constant bank 0 is %llu bytes, below the parameter base 0x%x",
                              (unsigned long long)cb0_size, g->m->param_base);
    mock_fault f;
    hcq_status s = mock_shader_run(g->g, prog, cb0 + g->m->param_base, grid, block, &f);
    if (s == HCQ_ESTATE) return mnv_chan_cancelled(c); /* the channel is being freed */
    if (s == HCQ_EFAULT) return mnv_chan_mmu_fault(c, f.va, f.write, f.what);
    if (s) return mnv_chan_error(c, NV_RC_GR_EXCEPTION, "the kernel at 0x%llx: %s", (unsigned long long)prog,
                                 hcq_error_message());
    return 0;
}
