/* The self-test at device open (issue 22 part 1): the first run on a GPU
 * takes the publicly proven encodings (amd_paths), and this test runs each
 * of them once on the queues just made, under a short timeout, so a wrong
 * one costs seconds, not the session: a signal (RELEASE_MEM), a wait (on a
 * value already there), a barrier (the HDP flush handshake and
 * ACQUIRE_MEM), a kernel writing a known value, and an SDMA copy, each
 * followed by a signal the host watches. A step that hangs or faults has
 * the path it exercises switched to hcq's alternative; the queues are
 * destroyed and made again (KFD evicts a hung queue) and the test starts
 * over. It fails only when a step fails on both of its paths, or one that
 * has no alternative fails (then the device is unusable anyway, and the
 * message says which step).
 *
 * The kernel: on hardware, six instructions assembled by hand for the
 * family (encodings from llvm-mc of llvm-project, checked in
 * tests/unit/test_amd_pm4.c against the assembler), behind a kernel
 * descriptor built here; on the mock, the same kernel as IR in a mock code
 * object, as the mock's shader core runs no machine code it has no host
 * twin for (once it does, the machine code serves both). */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "drivers/amd/amd_sdma.h"
#include "hcq/compiler.h"

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

/* the kernel, as a program the encoders take */
static hcq_status make_kernel(probe *p)
{
    amd_dev *ad = p->ad;
    p->prog->dev = ad->dev;
    if (ad->node.is_mock) {
        hcq_kernel *k = hcq_kernel_create("hcq_selftest");
        if (!k) return HCQ_ENOMEM;
        hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
        hcq_ir_store(k, out, hcq_ir_const_int(k, HCQ_U32, 0), hcq_ir_const_int(k, HCQ_U32, MAGIC_VALUE));
        char target[48];
        snprintf(target, sizeof target, "mock-%s", ad->arch->name);
        hcq_binary *bin = NULL;
        hcq_status s = hcq_compile(k, target, &bin);
        hcq_kernel_destroy(k);
        if (s) return base_err_prefix(s, "self-test kernel");
        s = amd_program_load(ad->dev, bin->data, bin->size, p->prog);
        hcq_binary_free(bin);
        return s;
    }
    size_t n;
    const uint8_t *code = amd_selftest_code(ad->arch->family, &n);
    memcpy(p->cpu + ENTRY, code, n);
    amd_prog *ap = base_calloc(1, sizeof *ap);
    hcq_param_info *param = base_calloc(1, sizeof *param);
    if (!ap || !param) {
        free(ap);
        free(param);
        return HCQ_ENOMEM;
    }
    ap->magic = AMD_PROG_MAGIC;
    snprintf(ap->co.name, sizeof ap->co.name, "hcq_selftest");
    amd_kernel_descriptor *kd = &ap->co.kd;
    kd->kernarg_size = 8;
    kd->kernel_code_entry_byte_offset = ENTRY - KD;
    /* 2 VGPRs and 4 SGPRs fit the smallest granules (field 0); SGPRS 1
     * on gfx9 gives 16, which gfx11 ignores */
    kd->compute_pgm_rsrc1 = amd_fset(AMD_RSRC1_SGPRS, 1);
    kd->compute_pgm_rsrc2 = amd_fset(AMD_RSRC2_USER_SGPR, 2) | amd_fset(AMD_RSRC2_TGID_X_EN, 1);
    bool w32 = ad->arch->family == AMD_FAMILY_GFX11;
    kd->kernel_code_properties = AMD_KCP_KERNARG_SEGMENT_PTR | (w32 ? AMD_KCP_WAVEFRONT_SIZE32 : 0);
    memcpy(p->cpu + KD, kd, sizeof *kd);
    ap->co.nparams = 1;
    ap->co.kernarg_bytes = 8;
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
    *param = (hcq_param_info){.offset = 0, .size = 8, .is_buffer = 1};
    p->prog->params = param;
    p->prog->info.nparams = 1;
    p->prog->info.kernarg_bytes = 8;
    p->prog->priv = ap;
    p->hand = ap;
    return HCQ_OK;
}

typedef enum step { STEP_SIGNAL, STEP_WAIT, STEP_BARRIER, STEP_KERNEL, STEP_COPY, STEP_COUNT } step;
static const char *const step_names[] = {"a signal", "a wait", "a barrier (HDP flush, ACQUIRE_MEM)",
                                         "a kernel writing a known value", "an SDMA copy"};

/* the path a step exercises on this queue, or NULL when it has no choice */
static bool *choice_of(amd_dev *ad, step s, const char **name, const char **alt)
{
    bool aql = ad->compute.kind == AMD_QUEUE_AQL, gfx11 = ad->arch->family == AMD_FAMILY_GFX11;
    amd_paths *p = &ad->paths;
    switch (s) {
    case STEP_WAIT:
        if (aql || !gfx11) return NULL;
        *name = "wait-reg-mem32";
        *alt = "wait-reg-mem64";
        return &p->wait64;
    case STEP_BARRIER:
        *name = "hdp-all-bits";
        *alt = "hdp-one-bit";
        return &p->hdp_one_bit;
    case STEP_KERNEL:
        if (aql) {
            *name = "dispatch-aql";
            *alt = "dispatch-pm4";
            return &p->dispatch_pm4;
        }
        if (!gfx11) return NULL;
        *name = "priv-1";
        *alt = "priv-0";
        return &p->priv0;
    default: return NULL;
    }
}

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
        memset(p->cpu + OUT, 0, 4);
        hcq_val arg = HCQ_IMM(p->mem.va + OUT);
        hcq_dims d = {.grid = {HCQ_IMM(1), HCQ_IMM(1), HCQ_IMM(1)}, .block = {HCQ_IMM(1), HCQ_IMM(1), HCQ_IMM(1)}};
        s = amd_rec_exec(&r, p->prog, &arg, &d);
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
        if (f || hcq_now_ns() - start > STEP_TIMEOUT_NS) return HCQ_ETIMEDOUT;
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

hcq_status amd_selftest(amd_dev *ad)
{
    probe p = {.ad = ad, .prog = &ad->probe_prog};
    hcq_status s = amd_bo_alloc(ad, PROBE_BYTES, KFD_ALLOC_GTT | KFD_ALLOC_COHERENT | KFD_ALLOC_UNCACHED |
                                                     KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE | KFD_ALLOC_NO_SUBSTITUTE,
                                true, &ad->probe);
    if (s) return base_err_prefix(s, "self-test buffer");
    p.mem = ad->probe;
    p.cpu = p.mem.cpu;
    if ((s = make_kernel(&p))) goto out;
    char switched[160] = "";
    for (step st = 0; st < STEP_COUNT;) {
        s = run_step(&p, st);
        if (!s) {
            st++;
            continue;
        }
        if (s != HCQ_ETIMEDOUT) goto out;
        const char *name = NULL, *alt = NULL;
        bool *choice = choice_of(ad, st, &name, &alt);
        if (!choice || *choice) {
            s = base_err(HCQ_EIO, "the self-test at open hangs on %s%s%s%s: the device cannot run hcq's queues",
                         step_names[st], choice ? " with both " : "", choice ? name : "",
                         choice ? " and its alternative" : "");
            goto out;
        }
        BASE_LOG(0, "%s: the self-test hangs on %s with %s: switching to %s", ad->dev->props.id, step_names[st], name,
                 alt);
        size_t l = strlen(switched);
        snprintf(switched + l, sizeof switched - l, "%s%s hung, took %s", l ? ", " : "", name, alt);
        *choice = true;
        /* the hung queues go (KFD evicts them); the test starts over on new ones */
        amd_queues_halt(ad);
        amd_queues_destroy(ad);
        int f;
        while ((f = faulted(ad)) > 0) {
        }
        if (f < 0) {
            s = wait_err(f);
            goto out;
        }
        if ((s = amd_queues_create(ad))) goto out;
        st = STEP_SIGNAL;
    }
    snprintf(ad->selftest, sizeof ad->selftest, "%s", switched[0] ? switched : "every proven path ran");
out:
    /* the device starts idle: a signal's value can arrive before the
     * packet that wrote it is consumed (SDMA writes the high half after
     * the low) */
    for (uint64_t start = hcq_now_ns(); !s && (amd_queue_busy(&ad->compute) || amd_queue_busy(&ad->sdma));) {
        int f = faulted(ad);
        if (f < 0) s = wait_err(f);
        else if (f || hcq_now_ns() - start > STEP_TIMEOUT_NS)
            s = base_err(HCQ_EIO, "the self-test's last packets %s", f ? "faulted" : "were not consumed in time");
        else drv_waiter_sleep(ad->dev, drv_waiter_seq(ad->dev), 10000);
    }
    return s ? base_err_prefix(s, "%s", ad->dev->props.id) : HCQ_OK;
}
