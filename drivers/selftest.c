/* The vendor-neutral part of the first-run self-test (drivers/selftest.h):
 * the search over paths, the report, the stage kernel and the wait. */
#include "drivers/selftest.h"

#include "base/base.h"
#include "compiler/twin.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void appendf(char *buf, size_t size, const char *fmt, ...) HCQ_PRINTF(3, 4);
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    if (!buf || !size) return;
    size_t n = strlen(buf);
    if (n + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, size - n, fmt, ap);
    va_end(ap);
}

/* the stage's paths and how many combinations they have */
static uint32_t stage_paths(const drv_stage *st, const drv_path *paths, uint32_t npaths, uint32_t idx[32])
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < npaths && i < 32; i++)
        if (st->paths & (1u << i) && paths[i].n > 1) idx[k++] = i;
    return k;
}

hcq_status drv_selftest(hcq_device *dev, drv_path *paths, uint32_t npaths, const drv_stage *stages, uint32_t nstages,
                        const drv_selftest_ops *ops, char *report, size_t report_size)
{
    char failed[768] = ""; /* what did not work, for the report */
    char notrun[512] = "";  /* stages that could not run */
    for (uint32_t s = 0; s < nstages; s++) {
        const drv_stage *st = &stages[s];
        uint32_t idx[32], k = stage_paths(st, paths, npaths, idx), start[32], combos = 1;
        for (uint32_t j = 0; j < k; j++) {
            start[j] = paths[idx[j]].chosen;
            combos *= paths[idx[j]].n;
        }
        char tries[512] = "";
        hcq_status last = HCQ_OK;
        uint32_t c = 0;
        for (; c < combos; c++) {
            /* combination c: path idx[j] takes start + digit j, mod its options */
            for (uint32_t j = 0, rest = c; j < k; j++) {
                drv_path *p = &paths[idx[j]];
                p->chosen = (uint8_t)((start[j] + rest % p->n) % p->n);
                rest /= p->n;
            }
            hcq_status r = HCQ_OK;
            if (c && (r = ops->reset(dev, ops->ctx, paths))) return base_err_prefix(r, "%s self-test", dev->props.id);
            last = st->run(dev, ops->ctx, paths, ops->timeout_ns);
            if (last == HCQ_OK) break;
            if (last == HCQ_ENOTSUP) { /* the stage cannot run here: its paths stay as chosen */
                BASE_LOG(1, "%s self-test: %s not run: %s", dev->props.id, st->name, hcq_error_message());
                appendf(notrun, sizeof notrun, "%s%s: not run (%s)", notrun[0] ? "; " : "", st->name,
                        hcq_error_message());
                break;
            }
            if (last != HCQ_ETIMEDOUT && last != HCQ_EFAULT) return last;
            char on[256] = "";
            for (uint32_t j = 0; j < k; j++)
                appendf(on, sizeof on, "%s%s", j ? " + " : "", paths[idx[j]].options[paths[idx[j]].chosen]);
            appendf(tries, sizeof tries, "%s%s %s", tries[0] ? "; " : "", on[0] ? on : "the only path",
                    last == HCQ_ETIMEDOUT ? "hung" : "faulted");
            BASE_LOG(1, "%s self-test: %s %s on %s: %s", dev->props.id, st->name,
                     last == HCQ_ETIMEDOUT ? "hung" : "faulted", on[0] ? on : "the only path", hcq_error_message());
        }
        if (c == combos && last != HCQ_ENOTSUP)
            return base_err(HCQ_EIO, "%s self-test: %s fails on every path (%s); the device is not usable this way",
                            dev->props.id, st->name, tries);
        if (tries[0]) appendf(failed, sizeof failed, "%s%s", failed[0] ? "; " : "", tries);
    }
    if (report && report_size) {
        report[0] = 0;
        for (uint32_t i = 0; i < npaths; i++) {
            if (paths[i].n < 2) continue;
            appendf(report, report_size, "%s%s: %s", report[0] ? "; " : "", paths[i].item,
                    paths[i].options[paths[i].chosen]);
        }
        if (failed[0]) appendf(report, report_size, " (probed at open: %s)", failed);
        else if (report[0]) appendf(report, report_size, " (probed at open)");
        if (notrun[0]) appendf(report, report_size, "; %s", notrun);
    }
    return HCQ_OK;
}

/* ** the stage kernel */
static hcq_kernel *stage_kernel(void)
{
    hcq_kernel *k = hcq_kernel_create("hcq_selftest");
    if (!k) return NULL;
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref value = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref lane = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    hcq_ir_store(k, out, lane, hcq_ir_binary(k, HCQ_OP_ADD, value, lane));
    return k;
}

hcq_status drv_selftest_program(hcq_device *dev, hcq_program *p)
{
    if (dev->props.is_mock && dev->mock_shader == DRV_SHADER_NONE) /* a kernel's stores would never land */
        return base_err(HCQ_ENOTSUP, "%s self-test: HCQ_MOCK_SHADER=none runs no kernel", dev->props.id);
    hcq_kernel *k = stage_kernel();
    if (!k) return HCQ_ENOMEM;
    hcq_binary *bin = NULL;
    hcq_status s = hcq_compile(k, dev->props.target, &bin);
    if (!s && dev->props.is_mock) s = cc_twin_prepare(k, dev->props.target, bin->data, bin->size);
    hcq_kernel_destroy(k);
    /* no way to build it here (no compiler, nothing cached): the stage
     * cannot run, which is not the device's fault */
    if (s && s != HCQ_ENOMEM) {
        hcq_binary_free(bin);
        return base_err(HCQ_ENOTSUP, "%s self-test: the stage kernel cannot be built for %s: %s", dev->props.id,
                        dev->props.target, hcq_error_message());
    }
    if (!s) {
        memset(p, 0, sizeof *p);
        p->dev = dev;
        s = dev->be->program_load(dev, bin->data, bin->size, NULL, p);
    }
    hcq_binary_free(bin);
    return s ? base_err_prefix(s, "%s self-test: the stage kernel", dev->props.id) : HCQ_OK;
}

void drv_selftest_program_free(hcq_device *dev, hcq_program *p)
{
    if (p->priv) dev->be->program_free(dev, p);
}

hcq_status drv_selftest_wait(hcq_device *dev, const volatile uint64_t *at, uint64_t want, uint64_t timeout_ns,
                             bool (*faulted)(hcq_device *dev, void *ctx), void *ctx, const char *what)
{
    uint64_t deadline = hcq_now_ns() + timeout_ns;
    for (;;) {
        uint64_t v = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)at, memory_order_acquire);
        if (v == want) return HCQ_OK;
        if (faulted && faulted(dev, ctx))
            return base_err(HCQ_EFAULT, "%s self-test: %s: an engine faulted", dev->props.id, what);
        if (hcq_now_ns() > deadline)
            return base_err(HCQ_ETIMEDOUT, "%s self-test: %s: not done within %llu ms (the value is 0x%llx, want "
                            "0x%llx)", dev->props.id, what, (unsigned long long)(timeout_ns / 1000000),
                            (unsigned long long)v, (unsigned long long)want);
        uint64_t seq = drv_waiter_seq(dev);
        drv_waiter_sleep(dev, seq, 200000);
    }
}
