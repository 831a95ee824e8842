/* The AMD stages of the self-test at device open (issue 22 part 1; the
 * search over paths, the resets and the report are drivers/selftest.c's):
 * the first run on a GPU takes the publicly proven encodings (amd_paths),
 * and these stages run each once on the queues just made, under a short
 * timeout, so a wrong one costs seconds, not the session: a signal
 * (RELEASE_MEM), a wait (on a value already there), a barrier (the HDP
 * flush handshake and ACQUIRE_MEM), a kernel writing a known value, and an
 * SDMA copy, each followed by a signal the host watches. A stage that
 * hangs or faults has the paths it exercises switched to hcq's
 * alternative; the queues are destroyed and made again (KFD evicts a hung
 * queue) and the stage runs again. The open fails only when a stage fails
 * on every combination of its paths (a stage with none: the signal, the
 * copy), naming it.
 *
 * The kernel: on hardware, six instructions assembled by hand for the
 * family (encodings from llvm-mc of llvm-project, checked in
 * tests/mock/test_amd_paths.c against the assembler), behind a kernel
 * descriptor built here, so no compiler is needed; on the mock, the
 * vendor-neutral stage kernel (drv_selftest_program: a code object run as
 * its host twin, or IR), as the mock's shader core runs no machine code it
 * has no host twin for. */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/amd/amd_sdma.h"
#include "drivers/selftest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_VALUE 0x600df00du
/* the probe buffer's layout */
enum { SLOTS = 0, OUT = 256, SRC = 512, DST = 1024, KARGS = 2048, CODE = 4096, KD = CODE, ENTRY = CODE + 256,
       PROBE_BYTES = 8192 };
#define STEP_TIMEOUT_NS (3ull * 1000000000ull)

/* s_load_dwordx2 s[2:3], s[0:1], 0; v_mov_b32 v0, 0; v_mov_b32 v1, MAGIC;
 * s_waitcnt lgkmcnt(0); global_store_dword v0, v1, s[2:3]; s_endpgm */
static const uint8_t code_gfx9[] = {0x80, 0x00, 0x06, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x80, 0x02, 0x00, 0x7e,
                                    0xff, 0x02, 0x02, 0x7e, 0x0d, 0xf0, 0x0d, 0x60, 0x7f, 0xc0, 0x8c, 0xbf,
                                    0x00, 0x80, 0x70, 0xdc, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x81, 0xbf};
static const uint8_t code_gfx11[] = {0x80, 0x00, 0x04, 0xf4, 0x00, 0x00, 0x00, 0xf8, 0x80, 0x02, 0x00, 0x7e,
                                     0xff, 0x02, 0x02, 0x7e, 0x0d, 0xf0, 0x0d, 0x60, 0x07, 0xfc, 0x89, 0xbf,
                                     0x00, 0x00, 0x6a, 0xdc, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0xb0, 0xbf};

const uint8_t *amd_selftest_code(amd_family fam, size_t *size)
{
    *size = fam == AMD_FAMILY_GFX11 ? sizeof code_gfx11 : sizeof code_gfx9;
    return fam == AMD_FAMILY_GFX11 ? code_gfx11 : code_gfx9;
}

typedef struct probe {
    amd_dev *ad;
    drv_mem mem;       /* ad->probe */
    uint8_t *cpu;
    hcq_program *prog; /* ad->probe_prog */
    amd_prog *hand;    /* the hand-made program (hardware), its priv */
    uint32_t aux_used;
    uint64_t timeout_ns;
    char no_kernel[256]; /* why there is no stage kernel, or "" */
} probe;

static hcq_status aux_alloc(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    probe *p = r->aux_ctx;
    uint32_t at = (uint32_t)base_align_up(KARGS + p->aux_used, align);
    if (at + size > CODE) return base_err(HCQ_ENOMEM, "self-test: kernarg space");
    p->aux_used = at + size - KARGS;
    *cpu = p->cpu + at;
    *va = p->mem.va + at;
    return HCQ_OK;
}

/* the kernel, as a program the encoders take: out[0] = MAGIC_VALUE
 * (params: the buffer, the value) */
static hcq_status make_kernel(probe *p)
{
    amd_dev *ad = p->ad;
    if (ad->node.is_mock) return drv_selftest_program(ad->dev, p->prog);
    p->prog->dev = ad->dev;
    size_t n;
    const uint8_t *code = amd_selftest_code(ad->arch->family, &n);
    memcpy(p->cpu + ENTRY, code, n);
    amd_prog *ap = base_calloc(1, sizeof *ap);
    hcq_param_info *param = base_calloc(2, sizeof *param);
    if (!ap || !param) {
        free(ap);
        free(param);
        return HCQ_ENOMEM;
    }
    ap->magic = AMD_PROG_MAGIC;
    snprintf(ap->co.name, sizeof ap->co.name, "hcq_selftest");
    amd_kernel_descriptor *kd = &ap->co.kd;
    kd->kernarg_size = 16;
    kd->kernel_code_entry_byte_offset = ENTRY - KD;
    /* 2 VGPRs and 4 SGPRs fit the smallest granules (field 0); SGPRS 1
     * on gfx9 gives 16, which gfx11 ignores */
    kd->compute_pgm_rsrc1 = amd_fset(AMD_RSRC1_SGPRS, 1);
    kd->compute_pgm_rsrc2 = amd_fset(AMD_RSRC2_USER_SGPR, 2) | amd_fset(AMD_RSRC2_TGID_X_EN, 1);
    bool w32 = ad->arch->family == AMD_FAMILY_GFX11;
    kd->kernel_code_properties = AMD_KCP_KERNARG_SEGMENT_PTR | (w32 ? AMD_KCP_WAVEFRONT_SIZE32 : 0);
    memcpy(p->cpu + KD, kd, sizeof *kd);
    ap->co.nparams = 2;
    ap->co.kernarg_bytes = 16;
    ap->co.kernarg_align = 8;
    ap->co.wavefront_size = w32 ? 32 : 64;
    ap->kd_va = p->mem.va + KD;
    ap->entry_va = p->mem.va + ENTRY;
    ap->rsrc1 = kd->compute_pgm_rsrc1;
    ap->rsrc2 = kd->compute_pgm_rsrc2;
    ap->initiator = amd_fset(AMD_INIT_COMPUTE_SHADER_EN, 1) | amd_fset(AMD_INIT_FORCE_START_AT_000, 1) |
                    (w32 ? amd_fset(AMD_INIT_CS_W32_EN, 1) : 0);
    amd_sgpr_layout_of(kd->kernel_code_properties, &ap->sgprs);
    ap->id = UINT32_MAX;
    param[0] = (hcq_param_info){.offset = 0, .size = 8, .is_buffer = 1};
    param[1] = (hcq_param_info){.offset = 8, .size = 4};
    p->prog->params = param;
    p->prog->info.nparams = 2;
    p->prog->info.kernarg_bytes = 16;
    p->prog->priv = ap;
    p->hand = ap;
    return HCQ_OK;
}

typedef enum step { STEP_SIGNAL, STEP_WAIT, STEP_BARRIER, STEP_KERNEL, STEP_COPY, STEP_COUNT } step;
static const char *const step_names[] = {"a signal", "a wait", "a barrier (HDP flush, ACQUIRE_MEM)",
                                         "a kernel writing a known value", "an SDMA copy"};

/* a hang or fault the driver was told of: the mock and KFD report through
 * events (a real hang may only show as the timeout). 1, 0, or -errno when
 * KFD refused the wait. */
static int faulted(amd_dev *ad)
{
    kfd_event_data ev[2];
    memset(ev, 0, sizeof ev);
    ev[0].event_id = ad->mem_event;
    ev[1].event_id = ad->hw_event;
    kfd_wait_events_args w = {.events_ptr = (uint64_t)(uintptr_t)ev, .num_events = 2, .timeout = 0};
    int rc = amd_kfd_ioctl(KFD_IOC_WAIT_EVENTS, &w);
    if (rc < 0) return rc;
    if (w.wait_result != KFD_WAIT_COMPLETE) return 0;
    return ev[0].memory_exception_data.gpu_id == ad->node.gpu_id || ev[1].hw_exception_data.gpu_id == ad->node.gpu_id;
}

static hcq_status wait_err(int rc)
{
    return base_err(rc == -ENOMEM ? HCQ_ENOMEM : HCQ_EIO, "self-test: amdkfd AMDKFD_IOC_WAIT_EVENTS failed (%s)",
                    strerror(-rc));
}

/* records and runs one step; HCQ_OK when its signal arrived (and the
 * kernel's value, the copy's bytes are right), HCQ_ETIMEDOUT on a hang,
 * another error when it could not be submitted */
static hcq_status run_step(probe *p, step st)
{
    amd_dev *ad = p->ad;
    const amd_arch *a = ad->arch;
    bool copy = st == STEP_COPY;
    drv_rec r;
    drv_rec_init(&r, ad->dev, copy ? HCQ_QUEUE_COPY : HCQ_QUEUE_COMPUTE);
    r.aux_alloc = aux_alloc;
    r.aux_ctx = p;
    p->aux_used = 0;
    uint64_t slot = p->mem.va + SLOTS + 8 * (uint64_t)st;
    volatile uint64_t *v = (volatile uint64_t *)(p->cpu + SLOTS + 8 * st);
    *v = 0;
    hcq_status s = HCQ_OK;
    switch (st) {
    case STEP_SIGNAL: break;
    case STEP_WAIT: s = amd_enc_wait(a, &r, HCQ_IMM(p->mem.va + SLOTS), HCQ_IMM(1)); break;
    case STEP_BARRIER: s = amd_enc_barrier(a, &r); break;
    case STEP_KERNEL: {
        if (!p->prog->priv) {
            drv_rec_fini(&r);
            return base_err(HCQ_ENOTSUP, "%s", p->no_kernel);
        }
        memset(p->cpu + OUT, 0, 4);
        hcq_val args[2] = {HCQ_IMM(p->mem.va + OUT), HCQ_IMM(MAGIC_VALUE)};
        hcq_dims d = {.grid = {HCQ_IMM(1), HCQ_IMM(1), HCQ_IMM(1)}, .block = {HCQ_IMM(1), HCQ_IMM(1), HCQ_IMM(1)}};
        s = amd_rec_exec(&r, p->prog, args, &d);
        break;
    }
    case STEP_COPY:
        for (int i = 0; i < 256; i++) p->cpu[SRC + i] = (uint8_t)(i * 7 + 1);
        memset(p->cpu + DST, 0, 256);
        s = amd_enc_copy(a, &r, HCQ_IMM(p->mem.va + DST), HCQ_IMM(p->mem.va + SRC), HCQ_IMM(256));
        break;
    default: break;
    }
    if (!s) s = amd_enc_signal(a, &r, HCQ_IMM(slot), HCQ_IMM(1));
    if (!s) s = amd_submit(ad->dev, &r);
    drv_rec_fini(&r);
    if (s) return s;
    uint64_t start = hcq_now_ns();
    for (unsigned round = 0; atomic_load_explicit((_Atomic uint64_t *)v, memory_order_acquire) != 1; round++) {
        int f = faulted(ad);
        if (f < 0) return wait_err(f);
        if (f) return base_err(HCQ_EFAULT, "%s self-test: %s: the GPU reported a hang or fault", ad->dev->props.id,
                               step_names[st]);
        if (hcq_now_ns() - start > p->timeout_ns)
            return base_err(HCQ_ETIMEDOUT, "%s self-test: %s: not done within %llu ms", ad->dev->props.id,
                            step_names[st], (unsigned long long)(p->timeout_ns / 1000000));
        drv_waiter_sleep(ad->dev, drv_waiter_seq(ad->dev), round < 100 ? 10000 : 1000000);
    }
    if (st == STEP_KERNEL && *(volatile uint32_t *)(p->cpu + OUT) != MAGIC_VALUE)
        return base_err(HCQ_EIO, "self-test: the kernel ran but wrote 0x%08x, not 0x%08x",
                        *(volatile uint32_t *)(p->cpu + OUT), MAGIC_VALUE);
    if (st == STEP_COPY)
        for (int i = 0; i < 256; i++)
            if (p->cpu[DST + i] != (uint8_t)(i * 7 + 1))
                return base_err(HCQ_EIO, "self-test: the SDMA copy's byte %d is 0x%02x, not 0x%02x", i, p->cpu[DST + i],
                                (uint8_t)(i * 7 + 1));
    return HCQ_OK;
}

void amd_selftest_free(amd_dev *ad)
{
    hcq_program *pr = &ad->probe_prog;
    amd_prog *ap = pr->priv;
    if (ap && !ap->code.size) {
        /* the hand-made program: its code is in the probe buffer */
        free(ap);
        free(pr->params);
    } else if (ap) {
        amd_program_free(ad->dev, pr);
    }
    memset(pr, 0, sizeof *pr);
    if (ad->probe.size) amd_bo_free(ad, &ad->probe);
}

/* the paths, in drv_path form: their options named as HCQ_MOCK_CONFIG
 * refuse= names them, [0] the proven default */
enum { P_WAIT, P_HDP, P_PRIV, P_DISPATCH, P_COUNT };

static void apply(amd_dev *ad, const drv_path *paths)
{
    ad->paths.wait64 = paths[P_WAIT].chosen == 1;
    ad->paths.hdp_one_bit = paths[P_HDP].chosen == 1;
    ad->paths.priv0 = paths[P_PRIV].chosen == 1;
    ad->paths.dispatch_pm4 = paths[P_DISPATCH].chosen == 1;
}

static hcq_status run_stage(hcq_device *dev, void *ctx, const drv_path *paths, uint64_t timeout_ns, step st)
{
    probe *p = ctx;
    (void)dev;
    apply(p->ad, paths);
    p->timeout_ns = timeout_ns;
    return run_step(p, st);
}
static hcq_status st_signal(hcq_device *d, void *c, const drv_path *p, uint64_t t)
{
    return run_stage(d, c, p, t, STEP_SIGNAL);
}
static hcq_status st_wait(hcq_device *d, void *c, const drv_path *p, uint64_t t) { return run_stage(d, c, p, t, STEP_WAIT); }
static hcq_status st_barrier(hcq_device *d, void *c, const drv_path *p, uint64_t t)
{
    return run_stage(d, c, p, t, STEP_BARRIER);
}
static hcq_status st_kernel(hcq_device *d, void *c, const drv_path *p, uint64_t t)
{
    return run_stage(d, c, p, t, STEP_KERNEL);
}
static hcq_status st_copy(hcq_device *d, void *c, const drv_path *p, uint64_t t) { return run_stage(d, c, p, t, STEP_COPY); }

/* after a hang or fault: the queues go (KFD evicts a hung queue), the
 * events it raised are read, and new queues come on the paths now chosen */
static hcq_status reset(hcq_device *dev, void *ctx, const drv_path *paths)
{
    (void)dev;
    probe *p = ctx;
    amd_dev *ad = p->ad;
    apply(ad, paths);
    amd_queues_halt(ad);
    amd_queues_destroy(ad);
    int f;
    while ((f = faulted(ad)) > 0) {
    }
    if (f < 0) return wait_err(f);
    return amd_queues_create(ad);
}

/* the queues that did not go idle after the stages, with their pointers:
 * which engine stopped, and where */
static hcq_status not_idle(amd_dev *ad, bool fault, uint64_t waited_ns)
{
    char what[2][320];
    amd_queue *qs[2] = {&ad->compute, &ad->sdma};
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (amd_queue_busy(qs[i])) amd_queue_state(qs[i], what[n++], sizeof what[0]);
    if (fault)
        return base_err(HCQ_EIO, "the self-test's last packets faulted (%s%s%s)", n ? what[0] : "no queue busy",
                        n > 1 ? "; " : "", n > 1 ? what[1] : "");
    return base_err(HCQ_EIO, "the self-test's last packets were not consumed within %llu ms: %s%s%s (every stage's "
                    "signal came, so the packets ran: the read pointer written back stays short of the write pointer)",
                    (unsigned long long)(waited_ns / 1000000), n ? what[0] : "no queue busy now", n > 1 ? "; " : "",
                    n > 1 ? what[1] : "");
}

hcq_status amd_selftest(amd_dev *ad)
{
    probe p = {.ad = ad, .prog = &ad->probe_prog};
    hcq_status s = amd_bo_alloc(ad, PROBE_BYTES, KFD_ALLOC_GTT | KFD_ALLOC_COHERENT | KFD_ALLOC_UNCACHED |
                                                     KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE | KFD_ALLOC_NO_SUBSTITUTE,
                                true, &ad->probe);
    if (s) return base_err_prefix(s, "self-test buffer");
    p.mem = ad->probe;
    p.cpu = p.mem.cpu;
    bool aql = ad->compute.kind == AMD_QUEUE_AQL, gfx11 = ad->arch->family == AMD_FAMILY_GFX11;
    const amd_paths *cur = &ad->paths;
    drv_path paths[P_COUNT] = {
        [P_WAIT] = {"waits", {"wait-reg-mem32", "wait-reg-mem64"}, gfx11 && !aql ? 2 : 1, cur->wait64},
        [P_HDP] = {"HDP flush", {"hdp-all-bits", "hdp-one-bit"}, 2, cur->hdp_one_bit},
        [P_PRIV] = {"RSRC1.PRIV", {"priv-1", "priv-0"}, gfx11 ? 2 : 1, cur->priv0},
        [P_DISPATCH] = {"dispatch", {"dispatch-aql", "dispatch-pm4"}, aql ? 2 : 1, cur->dispatch_pm4},
    };
    if ((s = make_kernel(&p))) {
        if (s != HCQ_ENOTSUP) goto out;
        /* the kernel stage says it could not run, and why */
        snprintf(p.no_kernel, sizeof p.no_kernel, "%s", hcq_error_message());
        s = HCQ_OK;
    }
    const drv_stage stages[] = {
        {step_names[STEP_SIGNAL], 0, st_signal},
        {step_names[STEP_WAIT], 1u << P_WAIT, st_wait},
        {step_names[STEP_BARRIER], 1u << P_HDP, st_barrier},
        {step_names[STEP_KERNEL], 1u << P_PRIV | 1u << P_DISPATCH, st_kernel},
        {step_names[STEP_COPY], 0, st_copy},
    };
    /* the mock reports a hang it makes (a HW exception event) at once:
     * there the bound is HCQ_TIMEOUT_MS's, so a loaded host does not pass
     * for a hung GPU (an engine held by hang= then takes that long) */
    drv_selftest_ops ops = {.reset = reset, .ctx = &p,
                            .timeout_ns = ad->node.is_mock ? base_env_get()->timeout_ns : STEP_TIMEOUT_NS};
    s = drv_selftest(ad->dev, paths, P_COUNT, stages, 5, &ops, ad->selftest, sizeof ad->selftest);
    apply(ad, paths);
out:
    /* the device starts idle: a signal's value can arrive before the
     * packet that wrote it is consumed (SDMA writes the high half after
     * the low) */
    for (uint64_t start = hcq_now_ns(); !s && (amd_queue_busy(&ad->compute) || amd_queue_busy(&ad->sdma));) {
        int f = faulted(ad);
        if (f < 0) s = wait_err(f);
        else if (f || hcq_now_ns() - start > base_env_get()->timeout_ns) s = not_idle(ad, f, hcq_now_ns() - start);
        else drv_waiter_sleep(ad->dev, drv_waiter_seq(ad->dev), 10000);
    }
    return s ? base_err_prefix(s, "%s", ad->dev->props.id) : HCQ_OK;
}
