#include "drivers/cpu/cpu.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CPU device's engines. Each one is a thread that consumes packets from
 * its ring between rptr and wptr, exactly as a GPU's command processor does:
 * the host writes packets, publishes wptr and rings the doorbell; the engine
 * reports only by writing signals. */

const cpu_op_info cpu_ops[CPU_OP_COUNT] = {
    [CPU_OP_NOP] = {"nop", 1},
    [CPU_OP_WAIT] = {"wait", 5},
    [CPU_OP_SIGNAL] = {"signal", 5},
    [CPU_OP_TIMESTAMP] = {"timestamp", 3},
    [CPU_OP_BARRIER] = {"barrier", 1},
    [CPU_OP_EXEC] = {"exec", 11},
    [CPU_OP_COPY] = {"copy", 7},
};

enum { ST_IDLE, ST_WAIT, ST_EXEC, ST_COPY, ST_FAULT };
static const char *state_names[] = {"idle", "waiting", "running a kernel", "copying", "stopped by a fault"};

static inline uint64_t u64_of(const uint32_t *p) { return (uint64_t)p[0] | ((uint64_t)p[1] << 32); }

/* Signal memory is written by engines and read by the host concurrently:
 * 64-bit atomics, release on the value so the timestamp is seen first. */
static inline uint64_t sig_load(uint64_t addr)
{
    return atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)addr, memory_order_acquire);
}

static void sig_store(hcq_device *dev, uint64_t addr, uint64_t value, bool value_too)
{
    /* release: a reader that sees the time (a profile harvest, which then
     * frees the signal's slot) sees everything the engine did before it */
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)(addr + 8), hcq_now_ns(), memory_order_release);
    if (value_too)
        atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)addr, value, memory_order_release);
    drv_progress_notify(dev);
}

static bool check_addr(hcq_device *dev, cpu_engine *e, uint64_t addr, uint64_t size, const char *what)
{
    char why[256];
    if (cpu_alloc_check(cpu_of(dev), addr, size, why, sizeof why)) return true;
    drv_set_fault(dev, HCQ_EFAULT, "%s %s engine: %s at 0x%llx (%llu bytes): %s", dev->props.id, e->name,
                  what, (unsigned long long)addr, (unsigned long long)size, why);
    return false;
}

/* Parks on a wait until the value arrives, the device faults or the engine
 * is stopped. Spins for HCQ_SPIN_US first: most waits are satisfied within
 * microseconds by the other engine. */
static bool engine_wait(hcq_device *dev, cpu_engine *e, uint64_t addr, uint64_t value)
{
    atomic_store(&e->state, ST_WAIT);
    e->state_arg = addr;
    base_spin sp;
    base_spin_begin(&sp);
    for (bool spin = true;;) {
        uint64_t seq = drv_progress_seq(dev);
        if (sig_load(addr) >= value) return true;
        if (atomic_load(&e->stop) || atomic_load(&dev->faulted)) return false;
        if (spin && (spin = base_spin_step(&sp))) continue;
        /* signals written by other devices or the host do not notify this
         * device, so sleep in short steps */
        drv_progress_wait(dev, seq, 200000);
    }
}

static void engine_fault(hcq_device *dev, cpu_engine *e, hcq_status s, const char *fmt, const char *detail)
{
    atomic_store(&e->state, ST_FAULT);
    drv_set_fault(dev, s, fmt, dev->props.id, e->name, detail);
}

/* Executes one packet; false stops the engine (fault or stop). */
static bool engine_exec(hcq_device *dev, cpu_engine *e, const uint32_t *pk)
{
    switch (CPU_PKT_OP(pk[0])) {
    case CPU_OP_NOP:
        return true;
    case CPU_OP_WAIT: {
        uint64_t addr = u64_of(pk + 1);
        if (!check_addr(dev, e, addr, 8, "wait on")) return false;
        return engine_wait(dev, e, addr, u64_of(pk + 3));
    }
    case CPU_OP_SIGNAL: {
        uint64_t addr = u64_of(pk + 1);
        if (!check_addr(dev, e, addr, 16, "signal")) return false;
        sig_store(dev, addr, u64_of(pk + 3), true);
        return true;
    }
    case CPU_OP_TIMESTAMP: {
        uint64_t addr = u64_of(pk + 1);
        if (!check_addr(dev, e, addr, 16, "timestamp")) return false;
        sig_store(dev, addr, 0, false);
        return true;
    }
    case CPU_OP_BARRIER:
        atomic_thread_fence(memory_order_seq_cst);
        return true;
    case CPU_OP_EXEC: {
        cpu_prog *cp = (cpu_prog *)(uintptr_t)u64_of(pk + 1);
        if (!cp || cp->magic != CPU_PROG_MAGIC) {
            char d[64];
            snprintf(d, sizeof d, "0x%llx", (unsigned long long)u64_of(pk + 1));
            engine_fault(dev, e, HCQ_EFAULT, "%s %s engine: exec of a program address that is no "
                         "loaded program: %s", d);
            return false;
        }
        atomic_store(&e->state, ST_EXEC);
        e->state_arg = (uint64_t)(uintptr_t)cp;
        hcq_status s = cpu_exec(dev, cp, (const uint8_t *)(uintptr_t)u64_of(pk + 3), pk + 5, pk + 8);
        if (s) {
            engine_fault(dev, e, s, "%s %s engine: %s", hcq_error_message());
            return false;
        }
        return true;
    }
    case CPU_OP_COPY: {
        uint64_t dst = u64_of(pk + 1), src = u64_of(pk + 3), size = u64_of(pk + 5);
        if (!size) return true;
        atomic_store(&e->state, ST_COPY);
        if (!check_addr(dev, e, src, size, "copy source") || !check_addr(dev, e, dst, size, "copy destination"))
            return false;
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
        return true;
    }
    }
    char d[64];
    snprintf(d, sizeof d, "0x%08x", pk[0]);
    engine_fault(dev, e, HCQ_EFAULT, "%s %s engine: invalid packet header %s", d);
    return false;
}

/* HCQ_MOCK_SCHED=random:SEED[:MAX_US] shakes the CPU device's engines like
 * the mock GPU's: a random pause at about one packet in four, so a missing
 * wait or an early reuse of memory shows up as a wrong result. */
static void sched_init(cpu_engine *e)
{
    const char *s = base_env_get()->mock_sched;
    if (!s || strncmp(s, "random:", 7)) return;
    char *end;
    uint64_t seed = strtoull(s + 7, &end, 0);
    e->sched_max_us = *end == ':' ? (uint32_t)atoi(end + 1) : 200;
    e->rng = (seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)e->name;
    if (!e->rng) e->rng = 1;
}

static void sched_point(cpu_engine *e)
{
    if (!e->sched_max_us) return;
    uint64_t x = e->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e->rng = x;
    if (x % 4 == 0) base_sleep_ns((x >> 8) % ((uint64_t)e->sched_max_us * 1000 + 1));
}

static void *engine_main(void *arg)
{
    cpu_engine *e = arg;
    hcq_device *dev = e->dev;
    uint32_t pk[CPU_MAX_PKT_DW];
    /* Idle, the engine spins for HCQ_SPIN_US before it sleeps: work that
     * comes meanwhile (the host's next launch, typically microseconds
     * after it saw the last one finish) is taken without the submitter
     * making a syscall to wake it (ring_doorbell signals only a sleeper),
     * and the spin is bounded, so an idle device burns no core. */
    base_spin idle;
    base_spin_begin(&idle);
    while (!atomic_load(&e->stop)) {
        uint64_t r = atomic_load_explicit(&e->rptr, memory_order_relaxed);
        uint64_t w = atomic_load_explicit(&e->wptr, memory_order_acquire);
        if (r == w || atomic_load(&dev->faulted)) {
            atomic_store(&e->state, atomic_load(&dev->faulted) ? ST_FAULT : ST_IDLE);
            if (base_spin_step(&idle)) continue;
            base_spin_begin(&idle);
            /* sleep until the doorbell; `sleeping` is raised before wptr is
             * re-read, and the submitter reads it after publishing wptr */
            pthread_mutex_lock(&e->lock);
            atomic_store(&e->sleeping, 1);
            while (!atomic_load(&e->stop) &&
                   (atomic_load(&e->wptr) == r || atomic_load(&dev->faulted)))
                pthread_cond_wait(&e->doorbell, &e->lock);
            atomic_store(&e->sleeping, 0);
            pthread_mutex_unlock(&e->lock);
            continue;
        }
        base_spin_begin(&idle);
        uint32_t h = e->ring[r % e->ring_dw];
        uint32_t op = CPU_PKT_OP(h), n = CPU_PKT_NDW(h);
        if (op >= CPU_OP_COUNT || n != cpu_ops[op].ndw || r + n > w) {
            char d[96];
            snprintf(d, sizeof d, "0x%08x at dword %llu", h, (unsigned long long)r);
            engine_fault(dev, e, HCQ_EFAULT, "%s %s engine: invalid packet header %s", d);
            continue;
        }
        for (uint32_t i = 0; i < n; i++) pk[i] = e->ring[(r + i) % e->ring_dw];
        sched_point(e);
        if (!engine_exec(dev, e, pk)) continue;
        atomic_fetch_add(&e->executed, 1);
        atomic_store(&e->state, ST_IDLE);
        atomic_store_explicit(&e->rptr, r + n, memory_order_release);
    }
    /* cpu_engines_halt waits for this, with a deadline */
    pthread_mutex_lock(&e->lock);
    e->exited = true;
    pthread_cond_broadcast(&e->doorbell);
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

static void ring_doorbell(cpu_engine *e)
{
    if (atomic_load(&e->sleeping)) {
        pthread_mutex_lock(&e->lock);
        pthread_cond_signal(&e->doorbell);
        pthread_mutex_unlock(&e->lock);
    }
}

hcq_status cpu_submit(hcq_device *dev, drv_rec *r)
{
    cpu_engine *e = &cpu_of(dev)->eng[r->type];
    if (!r->ndw) return HCQ_OK;
    pthread_mutex_lock(&e->submit_lock);
    uint64_t w = atomic_load(&e->wptr);
    uint64_t deadline = 0;
    hcq_status s = HCQ_OK;
    for (uint32_t i = 0; i < r->ndw;) {
        uint32_t n = CPU_PKT_NDW(r->dw[i]);
        if (!n || i + n > r->ndw) {
            s = base_err(HCQ_EINVAL, "%s: malformed command stream at dword %u", dev->props.id, i);
            break;
        }
        /* backpressure: wait for the engine to free ring space, never
         * overwriting packets it has not read */
        while (w + n - atomic_load_explicit(&e->rptr, memory_order_acquire) > e->ring_dw) {
            atomic_store_explicit(&e->wptr, w, memory_order_release);
            ring_doorbell(e);
            if ((s = drv_fault_status(dev))) break;
            uint64_t now = hcq_now_ns();
            if (!deadline) deadline = now + base_env_get()->timeout_ns;
            if (now > deadline) {
                s = base_err(HCQ_ETIMEDOUT, "%s %s engine: ring full for %llu ms (rptr %llu, wptr %llu); "
                             "the engine is stuck", dev->props.id, e->name,
                             (unsigned long long)(base_env_get()->timeout_ns / 1000000),
                             (unsigned long long)atomic_load(&e->rptr), (unsigned long long)w);
                break;
            }
            base_sleep_ns(20000);
        }
        if (s) break;
        for (uint32_t k = 0; k < n; k++) e->ring[(w + k) % e->ring_dw] = r->dw[i + k];
        w += n;
        i += n;
    }
    /* seq_cst: the engine raises `sleeping` and then re-reads wptr; this
     * store and the read of `sleeping` in ring_doorbell must not reorder */
    atomic_store(&e->wptr, w);
    ring_doorbell(e);
    pthread_mutex_unlock(&e->submit_lock);
    return s;
}

hcq_status cpu_engines_start(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    static const char *names[2] = {"compute", "copy"};
    for (int i = 0; i < 2; i++) {
        cpu_engine *e = &c->eng[i];
        e->dev = dev;
        e->name = names[i];
        sched_init(e);
        uint32_t shift = base_env_get()->ring_shift ? base_env_get()->ring_shift : CPU_RING_SHIFT;
        shift = BASE_MAX(BASE_MIN(shift, 24u), 5u); /* a packet must fit */
        e->ring_dw = 1u << shift;
        e->ring = calloc(e->ring_dw, sizeof *e->ring);
        if (!e->ring) return base_err(HCQ_ENOMEM, "CPU: out of host memory for a %u-dword ring", e->ring_dw);
        pthread_mutex_init(&e->submit_lock, NULL);
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->doorbell, NULL);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 16u << 20); /* runs kernels itself */
        int rc = pthread_create(&e->thread, &attr, engine_main, e);
        pthread_attr_destroy(&attr);
        if (rc) return base_err(HCQ_ENOMEM, "CPU: cannot start the %s engine thread (error %d)", names[i], rc);
        e->started = true;
    }
    return HCQ_OK;
}

static void engine_wake(hcq_device *dev, cpu_engine *e)
{
    atomic_store(&e->stop, 1);
    pthread_mutex_lock(&e->lock);
    pthread_cond_broadcast(&e->doorbell);
    pthread_mutex_unlock(&e->lock);
    drv_progress_notify(dev); /* wakes a parked wait */
}

void cpu_engines_halt(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    atomic_store(&c->cancel, 1);
    for (int i = 0; i < 2; i++)
        if (c->eng[i].started) engine_wake(dev, &c->eng[i]);
    /* a parked wait and an interpreted kernel stop at once; a compiled
     * kernel at its next work-group. One that runs on is abandoned. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + CPU_HALT_NS;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    for (int i = 0; i < 2; i++) {
        cpu_engine *e = &c->eng[i];
        if (!e->started) continue;
        pthread_mutex_lock(&e->lock);
        while (!e->exited)
            if (pthread_cond_timedwait(&e->doorbell, &e->lock, &ts) == ETIMEDOUT) break;
        bool out = e->exited;
        pthread_mutex_unlock(&e->lock);
        if (!out) {
            c->abandoned = true;
            continue;
        }
        pthread_join(e->thread, NULL);
        e->started = false;
    }
    if (c->abandoned)
        BASE_LOG(1, "%s: a kernel did not stop within %llu ms of the close; it is left to finish on its own, and "
                 "the device's memory is freed after it", dev->props.id, CPU_HALT_NS / 1000000);
}

void cpu_engines_stop(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    for (int i = 0; i < 2; i++) {
        cpu_engine *e = &c->eng[i];
        if (e->started) {
            engine_wake(dev, e);
            pthread_join(e->thread, NULL);
            e->started = false;
        }
        if (e->ring) {
            pthread_mutex_destroy(&e->submit_lock);
            pthread_mutex_destroy(&e->lock);
            pthread_cond_destroy(&e->doorbell);
            free(e->ring);
            e->ring = NULL;
        }
    }
}

void cpu_describe(hcq_device *dev, char *buf, size_t size)
{
    cpu_dev *c = cpu_of(dev);
    size_t off = 0;
    for (int i = 0; i < 2 && off < size; i++) {
        cpu_engine *e = &c->eng[i];
        int st = atomic_load(&e->state);
        int n = snprintf(buf + off, size - off, "%s%s engine: rptr %llu, wptr %llu, %llu packets done, %s",
                         i ? "; " : "", e->name, (unsigned long long)atomic_load(&e->rptr),
                         (unsigned long long)atomic_load(&e->wptr), (unsigned long long)atomic_load(&e->executed),
                         state_names[st]);
        if (n < 0) break;
        off += (size_t)n;
        if (st == ST_WAIT && off < size) {
            uint64_t a = e->state_arg;
            n = snprintf(buf + off, size - off, " on signal 0x%llx (value %llu)", (unsigned long long)a,
                         (unsigned long long)sig_load(a));
            if (n > 0) off += (size_t)n;
        }
    }
}
