/* The NV first-run paths and their self-test (issue 22; docs/
 * architecture.md "First-run paths"). Where hcq's choice differs from the
 * one proven on hardware and no vendor source settles it, the proven one is
 * the default and hcq's the alternative:
 *   - the semaphore acquire on HOPPER_CHANNEL_GPFIFO_A: ACQ_CIRC_GEQ with a
 *     64-bit payload (the proven stack's wait; clc86f.h lists CIRC_GEQ and
 *     not STRICT_GEQ), else ACQ_STRICT_GEQ 64-bit (documented for the
 *     Ampere channel, clc56f.h, which keeps it: settled there);
 *   - the QMD on Hopper: V04 (the compute class's own, NVK's choice), else
 *     V03, which clcbc0qmd.h defines beside it (no proven Hopper launch
 *     settles it; the Ampere and Ada classes take V03 only, in hcq);
 *   - local memory: every launch gets at least the ABI's 0x240 bytes per
 *     thread above the stack pointer (the proven stack), else none until a
 *     kernel has a stack (hcq's first choice);
 *   - the copy engine's release: two one-word releases, the low word with
 *     the timestamp then the high word (UVM's form on every copy class),
 *     else one 64-bit release (fields in clc7b5.h/clc8b5.h, layout not
 *     documented).
 * At open three stages run under a short timeout (2 s): a semaphore release and
 * a wait, a kernel writing a known value, a copy with its release. One
 * that hangs or faults has its channels torn down and made again on the
 * next combination of its paths (drivers/selftest.c); what works is kept,
 * and hcq info (the device's `paths`), HCQ_DEBUG=1 and the hardware kit's
 * report say which. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/selftest.h"
#include "drivers/sys.h"

#include <string.h>

enum { P_ACQ, P_QMD, P_LOCAL, P_CE, NPATHS };

void nv_paths_default(nv_dev *d)
{
    const nv_family *f = d->gen;
    d->path.acquire = f->acquire_strict_geq ? NV_ACQ_STRICT_GEQ64 : NV_ACQ_CIRC_GEQ64;
    d->path.qmd = (uint8_t)nv_qmd_ver_of_major(f->qmd_major);
    d->path.local = NV_LOCAL_MIN;
    d->path.ce = NV_CE_REL32;
    d->qmd_ver = d->path.qmd;
}

/* the self-test's page of host memory: semaphores, the kernel's output,
 * the copy's destination, and the launch's constant bank and QMD */
enum {
    AT_WAIT = 0x000,    /* what the acquire waits on */
    AT_WAITED = 0x010,  /* released after it */
    AT_LAUNCHED = 0x020, /* the QMD's release */
    AT_COPIED = 0x030,  /* the copy engine's release */
    AT_OUT = 0x100,     /* the kernel's 32 words */
    AT_OUT2 = 0x200,    /* their copy */
    AT_AUX = 0x1000,    /* constant bank 0 and the QMD (aux memory of the launch) */
    PAGE_BYTES = 0x2000,
    THREADS = 32,
};

typedef struct st_ctx {
    nv_dev *nv;
    drv_mem page;
    uint8_t val[NPATHS][DRV_PATH_MAX_OPTIONS]; /* option -> the nv_paths value */
    hcq_program prog;
    int prog_qmd, prog_local;
    uint32_t aux_used;
    uint64_t seq;
} st_ctx;

static volatile uint64_t *slot(st_ctx *c, uint32_t at) { return (volatile uint64_t *)((uint8_t *)c->page.cpu + at); }
static uint64_t va(st_ctx *c, uint32_t at) { return c->page.va + at; }
/* zeroes a slot the GPU writes (an atomic store: the engine reads it) */
static void clear(st_ctx *c, uint32_t at)
{
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)slot(c, at), 0, memory_order_release);
}

static void apply(st_ctx *c, const drv_path *p)
{
    nv_dev *nv = c->nv;
    nv->path.acquire = c->val[P_ACQ][p[P_ACQ].chosen];
    nv->path.qmd = c->val[P_QMD][p[P_QMD].chosen];
    nv->path.local = c->val[P_LOCAL][p[P_LOCAL].chosen];
    nv->path.ce = c->val[P_CE][p[P_CE].chosen];
    nv->qmd_ver = nv->path.qmd;
}

/* an error notifier set: the channel faulted (read here, not reported as
 * the device's fault: the self-test resets the channels and goes on) */
static bool faulted(hcq_device *dev, void *ctx)
{
    (void)ctx;
    nv_dev *nv = nv_of(dev);
    for (int i = 0; i < 2; i++) {
        const nv_notification *n = nv->ch[i].notifier.cpu;
        if (n && atomic_load_explicit((_Atomic uint16_t *)(uintptr_t)&n->status, memory_order_acquire)) return true;
    }
    return false;
}

static hcq_status aux(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va_out)
{
    st_ctx *c = r->aux_ctx;
    uint32_t off = (uint32_t)base_align_up(c->aux_used, align);
    if (AT_AUX + off + size > PAGE_BYTES) return base_err(HCQ_ELIMIT, "self-test: the launch's memory does not fit");
    c->aux_used = off + size;
    *cpu = (uint8_t *)c->page.cpu + AT_AUX + off;
    *va_out = va(c, AT_AUX + off);
    return HCQ_OK;
}

static hcq_status submit(hcq_device *dev, drv_rec *r)
{
    hcq_status s = r->err ? r->err : nv_submit(dev, r);
    drv_rec_fini(r);
    return s;
}

/* a release and a wait: the compute channel waits for a 64-bit value the
 * host writes after submitting, then releases another */
static hcq_status stage_wait(hcq_device *dev, void *ctx, const drv_path *paths, uint64_t timeout_ns)
{
    st_ctx *c = ctx;
    apply(c, paths);
    uint64_t want = (1ull << 32) + ++c->seq; /* both halves matter */
    clear(c, AT_WAIT);
    clear(c, AT_WAITED);
    drv_rec r;
    drv_rec_init(&r, dev, HCQ_QUEUE_COMPUTE);
    hcq_status s = nv_rec_wait(&r, HCQ_IMM(va(c, AT_WAIT)), HCQ_IMM(want));
    if (!s) nv_sem_release(&r, HCQ_IMM(va(c, AT_WAITED)), HCQ_IMM(want), false);
    if (!s) s = submit(dev, &r);
    else drv_rec_fini(&r);
    if (s) return s;
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)slot(c, AT_WAIT), want, memory_order_release);
    nv_signal_written(dev, va(c, AT_WAIT));
    return drv_selftest_wait(dev, slot(c, AT_WAITED), want, timeout_ns, faulted, c,
                             "a semaphore acquire released by the host");
}

/* a kernel writing a known value, its QMD releasing a semaphore */
static hcq_status stage_launch(hcq_device *dev, void *ctx, const drv_path *paths, uint64_t timeout_ns)
{
    st_ctx *c = ctx;
    nv_dev *nv = c->nv;
    apply(c, paths);
    hcq_status s;
    if (c->prog.priv && (c->prog_qmd != nv->path.qmd || c->prog_local != nv->path.local))
        drv_selftest_program_free(dev, &c->prog); /* its QMD template is of the other path */
    if (!c->prog.priv) {
        /* without a way to build the kernel (no compiler, nothing cached)
         * the launch paths stay the defaults, and the report says so */
        if ((s = drv_selftest_program(dev, &c->prog))) return s;
        c->prog_qmd = nv->path.qmd;
        c->prog_local = nv->path.local;
    }
    uint64_t seq = ++c->seq;
    uint32_t value = 0x5e1f0000u + (uint32_t)(seq << 8);
    memset((uint8_t *)c->page.cpu + AT_OUT, 0, THREADS * 4);
    clear(c, AT_LAUNCHED);
    c->aux_used = 0;
    drv_rec r;
    drv_rec_init(&r, dev, HCQ_QUEUE_COMPUTE);
    r.aux_alloc = aux;
    r.aux_ctx = c;
    hcq_val params[2] = {HCQ_IMM(va(c, AT_OUT)), HCQ_IMM(value)};
    hcq_dims d = hcq_dims_3d(1, 1, 1, THREADS, 1, 1);
    s = nv_rec_exec(&r, &c->prog, params, &d);
    if (!s) s = nv_rec_signal(&r, HCQ_IMM(va(c, AT_LAUNCHED)), HCQ_IMM(seq));
    if (!s) s = submit(dev, &r);
    else drv_rec_fini(&r);
    if (!s) s = drv_selftest_wait(dev, slot(c, AT_LAUNCHED), seq, timeout_ns, faulted, c, "a kernel's launch");
    if (s) return s;
    const uint32_t *out = (const uint32_t *)((const uint8_t *)c->page.cpu + AT_OUT);
    for (uint32_t i = 0; i < THREADS; i++)
        if (out[i] != value + i)
            return base_err(HCQ_EFAULT, "%s self-test: the kernel ran, but thread %u wrote 0x%x, not 0x%x",
                            dev->props.id, i, out[i], value + i);
    return HCQ_OK;
}

/* a copy of the kernel's words, the copy engine releasing a 64-bit value */
static hcq_status stage_copy(hcq_device *dev, void *ctx, const drv_path *paths, uint64_t timeout_ns)
{
    st_ctx *c = ctx;
    apply(c, paths);
    uint64_t want = (2ull << 32) + ++c->seq;
    memset((uint8_t *)c->page.cpu + AT_OUT2, 0, THREADS * 4);
    clear(c, AT_COPIED);
    drv_rec r;
    drv_rec_init(&r, dev, HCQ_QUEUE_COPY);
    hcq_status s = nv_rec_copy(&r, HCQ_IMM(va(c, AT_OUT2)), HCQ_IMM(va(c, AT_OUT)), HCQ_IMM(THREADS * 4));
    if (!s) s = nv_rec_signal(&r, HCQ_IMM(va(c, AT_COPIED)), HCQ_IMM(want));
    if (!s) s = submit(dev, &r);
    else drv_rec_fini(&r);
    if (!s) s = drv_selftest_wait(dev, slot(c, AT_COPIED), want, timeout_ns, faulted, c, "a copy and its release");
    if (s) return s;
    if (memcmp((uint8_t *)c->page.cpu + AT_OUT2, (uint8_t *)c->page.cpu + AT_OUT, THREADS * 4))
        return base_err(HCQ_EFAULT, "%s self-test: the copy engine released its semaphore, but the copy differs",
                        dev->props.id);
    return HCQ_OK;
}

static hcq_status reset(hcq_device *dev, void *ctx, const drv_path *paths)
{
    apply(ctx, paths);
    return nv_channels_reset(dev);
}

hcq_status nv_selftest(hcq_device *dev)
{
    nv_dev *nv = nv_of(dev);
    const nv_family *f = nv->gen;
    st_ctx c = {.nv = nv};
    drv_path p[NPATHS] = {
        [P_ACQ] = {.item = "semaphore acquire"},
        [P_QMD] = {.item = "QMD"},
        [P_LOCAL] = {.item = "local memory"},
        [P_CE] = {.item = "copy-engine release"},
    };
    /* what each family offers; [0] the default */
    if (f->acquire_strict_geq) {
        p[P_ACQ].options[0] = "ACQ_STRICT_GEQ 64-bit";
        c.val[P_ACQ][0] = NV_ACQ_STRICT_GEQ64;
        p[P_ACQ].n = 1;
    } else {
        p[P_ACQ].options[0] = "ACQ_CIRC_GEQ 64-bit";
        p[P_ACQ].options[1] = "ACQ_STRICT_GEQ 64-bit";
        c.val[P_ACQ][0] = NV_ACQ_CIRC_GEQ64;
        c.val[P_ACQ][1] = NV_ACQ_STRICT_GEQ64;
        p[P_ACQ].n = 2;
    }
    static const char *const qmd_names[] = {[NV_QMD_V03] = "V03", [NV_QMD_V04] = "V04"};
    int qdef = nv_qmd_ver_of_major(f->qmd_major), qalt = qdef == NV_QMD_V04 ? NV_QMD_V03 : NV_QMD_V04;
    p[P_QMD].options[0] = qmd_names[qdef];
    c.val[P_QMD][0] = (uint8_t)qdef;
    p[P_QMD].n = 1;
    if (f->qmd_documented & (1u << (qalt == NV_QMD_V04 ? 4 : 3))) { /* hcq encodes V03 and V04 */
        p[P_QMD].options[1] = qmd_names[qalt];
        c.val[P_QMD][1] = (uint8_t)qalt;
        p[P_QMD].n = 2;
    }
    p[P_LOCAL].options[0] = "always 0x240 bytes/thread";
    p[P_LOCAL].options[1] = "only for a stack";
    c.val[P_LOCAL][0] = NV_LOCAL_MIN;
    c.val[P_LOCAL][1] = NV_LOCAL_LAZY;
    p[P_LOCAL].n = 2;
    if (f->copy_sem64) {
        p[P_CE].options[0] = "two 32-bit releases";
        p[P_CE].options[1] = "one 64-bit release";
        c.val[P_CE][0] = NV_CE_REL32;
        c.val[P_CE][1] = NV_CE_REL64;
        p[P_CE].n = 2;
    } else {
        p[P_CE].options[0] = "a host semaphore release (32-bit copy payloads)";
        c.val[P_CE][0] = NV_CE_REL32;
        p[P_CE].n = 1;
    }
    /* start from the paths in use (the defaults, or what bring-up had to take) */
    const uint8_t now[NPATHS] = {[P_ACQ] = nv->path.acquire, [P_QMD] = nv->path.qmd, [P_LOCAL] = nv->path.local,
                                 [P_CE] = nv->path.ce};
    for (int i = 0; i < NPATHS; i++)
        for (uint8_t o = 0; o < p[i].n; o++)
            if (c.val[i][o] == now[i]) p[i].chosen = o;
    static const drv_stage stages[] = {
        {"a semaphore release and a wait", 1u << P_ACQ, stage_wait},
        {"a kernel writing a known value", 1u << P_QMD | 1u << P_LOCAL, stage_launch},
        {"a copy and its release", 1u << P_CE, stage_copy},
    };
    /* long enough that a loaded host does not pass for a hung GPU, short
     * enough for the hardware kit's minutes (HCQ_TIMEOUT_MS, if less) */
    uint64_t timeout = BASE_MIN(base_env_get()->timeout_ns, 2000000000ull);
    drv_selftest_ops ops = {.reset = reset, .ctx = &c, .timeout_ns = timeout};
    hcq_status s = nv_mem_alloc(dev, PAGE_BYTES, DRV_MEM_HOST | DRV_MEM_CPU | DRV_MEM_UNCACHED | DRV_MEM_LOW, &c.page);
    if (s) return base_err_prefix(s, "%s self-test: its memory", dev->props.id);
    memset(c.page.cpu, 0, PAGE_BYTES);
    uint64_t t0 = hcq_now_ns();
    s = drv_selftest(dev, p, NPATHS, stages, BASE_ARRAY_LEN(stages), &ops, dev->props.paths, sizeof dev->props.paths);
    drv_selftest_program_free(dev, &c.prog);
    nv_mem_free(dev, &c.page);
    if (s) return s;
    apply(&c, p);
    BASE_LOG(1, "%s self-test (%.1f ms): %s", dev->props.id, (double)(hcq_now_ns() - t0) / 1e6, dev->props.paths);
    return HCQ_OK;
}
