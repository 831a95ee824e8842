#include "base/base.h"
#include "compiler/isa.h"
#include "compiler/twin.h"
#include "drivers/backend.h"
#include "drivers/decode.h"
#include "drivers/dump.h"
#include "drivers/sys.h"

#include <errno.h>
#include <string.h>
#include <time.h>

void drv_device_init(hcq_device *dev)
{
    pthread_mutex_init(&dev->lock, NULL);
    pthread_mutex_init(&dev->fault_lock, NULL);
    pthread_mutex_init(&dev->progress_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&dev->progress_cond, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&dev->faulted, 0);
    atomic_init(&dev->progress_seq, 0);
    atomic_init(&dev->progress_waiters, 0);
    dev->ts_mul = dev->ts_div = 1;
}

void drv_device_fini(hcq_device *dev)
{
    pthread_mutex_destroy(&dev->lock);
    pthread_mutex_destroy(&dev->fault_lock);
    pthread_mutex_destroy(&dev->progress_lock);
    pthread_cond_destroy(&dev->progress_cond);
}

hcq_status drv_set_fault(hcq_device *dev, hcq_status s, const char *fmt, ...)
{
    pthread_mutex_lock(&dev->fault_lock);
    if (!atomic_load(&dev->faulted)) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(dev->fault_msg, sizeof dev->fault_msg, fmt, ap);
        va_end(ap);
        /* what the memory checker found (the reports of the bad accesses
         * that stopped the kernel) goes with the fault they caused */
        size_t off = n < 0 ? 0 : BASE_MIN((size_t)n, sizeof dev->fault_msg - 1);
        if (base_env_get()->mock_memcheck && off + 3 < sizeof dev->fault_msg) {
            char mc[2048];
            if (base_memcheck_take(dev->fault_msg, mc, sizeof mc))
                snprintf(dev->fault_msg + off, sizeof dev->fault_msg - off, "; %s", mc);
        }
        dev->fault_status = s;
        atomic_store(&dev->faulted, 1);
        /* HCQ_ESTATE is the close's own mark (every wait ends at once), not a
         * fault: a normal close logs none */
        if (s != HCQ_ESTATE)
            BASE_LOG(1, "%s %s: %s", dev->props.id, s == HCQ_ETIMEDOUT ? "hung" : "faulted", dev->fault_msg);
    }
    pthread_mutex_unlock(&dev->fault_lock);
    /* wake everybody who sleeps on this device so they see the fault */
    drv_progress_notify(dev);
    return s;
}

hcq_status drv_fault_status(hcq_device *dev)
{
    if (!atomic_load(&dev->faulted)) return HCQ_OK;
    pthread_mutex_lock(&dev->fault_lock);
    hcq_status s = dev->fault_status == HCQ_ESTATE
                       ? base_err(HCQ_ESTATE, "%s: %s; work submitted to it is lost", dev->props.id, dev->fault_msg)
                       : base_err(dev->fault_status, "%s: device %s earlier: %s. Close the device; work submitted to "
                                  "it is lost", dev->props.id, dev->fault_status == HCQ_ETIMEDOUT ? "hung" : "faulted",
                                  dev->fault_msg);
    pthread_mutex_unlock(&dev->fault_lock);
    return s;
}

void drv_progress_notify(hcq_device *dev)
{
    atomic_fetch_add(&dev->progress_seq, 1);
    if (atomic_load(&dev->progress_waiters) > 0) {
        pthread_mutex_lock(&dev->progress_lock);
        pthread_cond_broadcast(&dev->progress_cond);
        pthread_mutex_unlock(&dev->progress_lock);
    }
}

void drv_progress_wait(hcq_device *dev, uint64_t seq, uint64_t max_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + max_ns;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&dev->progress_lock);
    /* waiters is raised before seq is read again, and notify bumps seq
     * before it reads waiters: one of the two sees the other (both seq_cst) */
    atomic_fetch_add(&dev->progress_waiters, 1);
    while (atomic_load(&dev->progress_seq) == seq) {
        if (pthread_cond_timedwait(&dev->progress_cond, &dev->progress_lock, &ts) == ETIMEDOUT) break;
    }
    atomic_fetch_sub(&dev->progress_waiters, 1);
    pthread_mutex_unlock(&dev->progress_lock);
}

uint64_t drv_waiter_seq(hcq_device *dev)
{
    if (dev->be->notifies_progress) return drv_progress_seq(dev);
    const hcq_sys *s = sys_get();
    return s->progress_seq ? s->progress_seq(s->ctx) : 0;
}

uint64_t drv_waiter_step_ns(hcq_device *dev)
{
    return dev->be->notifies_progress || sys_get()->progress_wait ? 1000000 : 20000;
}

void drv_waiter_sleep(hcq_device *dev, uint64_t seq, uint64_t max_ns)
{
    if (dev->be->notifies_progress) {
        drv_progress_wait(dev, seq, max_ns);
        return;
    }
    const hcq_sys *s = sys_get();
    if (s->progress_wait) s->progress_wait(s->ctx, seq, max_ns);
    else base_sleep_ns(max_ns);
}

hcq_status drv_submit(hcq_device *dev, drv_rec *r)
{
    const base_env *e = base_env_get();
    const char *fmt = dev->stream_format[r->type];
    if ((e->dump || e->debug >= 4) && fmt && r->ndw) {
        /* "NV:0" -> "nv0.compute", like the mock's engine names */
        char engine[32];
        size_t n = 0;
        for (const char *p = dev->props.id; *p && n < 16; p++)
            if (*p != ':') engine[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        snprintf(engine + n, sizeof engine - n, ".%s", r->type == HCQ_QUEUE_COPY ? "copy" : "compute");
        if (e->dump && !dev->be->dumps_streams)
            drv_dump_write(e->dump, engine, fmt, dev->stream_arch[r->type], 0, r->dw, r->ndw);
        const drv_decoder *d = e->debug >= 4 ? drv_decoder_find(fmt) : NULL;
        if (d) {
            flockfile(stderr);
            fprintf(stderr, "hcq[4] %s: submit %u dwords\n", engine, r->ndw);
            d->decode(dev->stream_arch[r->type], 0, r->dw, r->ndw, stderr);
            funlockfile(stderr);
        }
    }
    return dev->be->submit(dev, r);
}

/* Backends linked in, best first. NV and AMD register here when built. */
static const drv_backend *const backends[] = {
    &drv_nv_backend,
    &drv_amd_backend,
    &drv_cpu_backend,
    NULL,
};

const drv_backend *const *drv_backends(void) { return backends; }

bool drv_mock_twins(const char *arch, char *why, size_t why_size)
{
    if (!cc_twin_available(arch, why, why_size)) return false;
    if (sys_mock_preloaded()) {
        /* the mock's own copy of hcq (libhcqmock.so) finds a launch's twin
         * among the binaries registered with it, and this process registers
         * them with its own copy: it runs IR, which the mock can */
        snprintf(why, why_size, "the mock is preloaded (libhcqmock.so) and cannot see this process's host twins");
        return false;
    }
    return true;
}

int drv_mock_shader(const char *arch, const char *binaries, char *target, size_t target_size, char *what,
                    size_t what_size)
{
    char why[480], note[520] = "";
    const char *var;
    int ms = cc_mock_shader(arch, &var);
    if (ms == BASE_MOCK_SHADER_NONE) {
        /* nothing runs: the kernels are still built as the device would
         * build them (the real target where its tools are), so a kernel
         * cache can be filled for sizes no emulator could run in time */
        bool real = cc_twin_available(arch, why, sizeof why);
        snprintf(target, target_size, "%s%s", real ? "" : "mock-", arch);
        snprintf(what, what_size, "nothing (%s=none): launches complete without running their kernels and leave "
                 "memory as it was; kernels are built for %s%s%s%s", var, target, real ? "" : " (", real ? "" : why,
                 real ? "" : ")");
        return DRV_SHADER_NONE;
    }
    if (ms == BASE_MOCK_SHADER_ISA || ms == BASE_MOCK_SHADER_DEFAULT) { /* machine code, where it can run */
        if (cc_isa_on(arch, why, sizeof why)) {
            /* by default only where the tools that build the real binaries are (else IR, below, says why) */
            if (ms == BASE_MOCK_SHADER_ISA || cc_twin_available(arch, why, sizeof why)) {
                snprintf(target, target_size, "%s", arch);
                snprintf(what, what_size, "%s for %s %s", cc_isa_executor(arch, why, sizeof why), arch, binaries);
                return DRV_SHADER_ISA;
            }
        } else { /* twins or IR, saying why not the executor */
            snprintf(note, sizeof note, " (%s%s%s)", ms == BASE_MOCK_SHADER_ISA ? var : "",
                     ms == BASE_MOCK_SHADER_ISA ? "=isa: " : "", why);
        }
    }
    if (drv_mock_twins(arch, why, sizeof why)) {
        snprintf(target, target_size, "%s", arch);
        snprintf(what, what_size, "host twins of %s %s%s", arch, binaries, note);
        return DRV_SHADER_TWIN;
    }
    snprintf(target, target_size, "mock-%s", arch);
    snprintf(what, what_size, "kernel IR on the interpreter (mock-%s): %s%s", arch, why, note);
    return DRV_SHADER_IR;
}
