/* Engines of the mock GPUs: a thread each, stepping the vendor's command
 * processor. An engine sleeps when idle until a doorbell kicks it; when
 * blocked on a semaphore it sleeps until some engine or the host writes
 * memory (or a short timeout: writes by other means still get seen). Every
 * semaphore release bumps a progress counter that host waiters sleep on. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"
#include "drivers/dump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mock_engine {
    mock_gpu *gpu;
    char name[32];
    mock_step_fn step;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool kicked;
    atomic_int stop;
    bool hung;
    const volatile uint8_t *bell;
    size_t bell_size;
    uint64_t rng;
    bool orphan; /* a copy in a forked child: its thread stayed in the parent */
    mock_engine *next;
};

static mock_engine *engines;
static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;

/* progress, for host waiters */
static atomic_uint_fast64_t progress;
static atomic_int progress_waiters;
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress_cond;
static pthread_once_t progress_once = PTHREAD_ONCE_INIT;

static void progress_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&progress_cond, &a);
    pthread_condattr_destroy(&a);
}

static void deadline(struct timespec *ts, uint64_t ns)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ns += (uint64_t)ts->tv_nsec;
    ts->tv_sec += (time_t)(ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* ** fork: engines are held between steps while a fork is made (no lock
 * of theirs, or of a vendor's step, held in the copy), and a child's
 * copies are orphans: their threads stayed in the parent. */
static atomic_int hold, in_step;
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;

bool mock_engines_hold(bool on, uint64_t max_ns)
{
    if (!on) {
        pthread_mutex_lock(&hold_lock);
        atomic_store(&hold, 0);
        pthread_cond_broadcast(&hold_cond);
        pthread_mutex_unlock(&hold_lock);
        return true;
    }
    atomic_store(&hold, 1);
    /* a step is short, unless it runs a kernel: wait that long at most */
    uint64_t t0 = hcq_now_ns();
    while (atomic_load(&in_step))
        if (hcq_now_ns() - t0 > max_ns) return false;
        else base_sleep_ns(20000);
    return true;
}

/* the engine thread: true when it may step (counted in in_step until
 * step_done), false after waiting out a hold */
static bool step_begin(void)
{
    atomic_fetch_add(&in_step, 1);
    if (!atomic_load(&hold)) return true;
    atomic_fetch_sub(&in_step, 1);
    pthread_mutex_lock(&hold_lock);
    while (atomic_load(&hold)) pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    return false;
}

static void step_done(void) { atomic_fetch_sub(&in_step, 1); }

void mock_engine_atfork_child(void)
{
    pthread_mutex_init(&engines_lock, NULL);
    for (mock_engine *e = engines; e; e = e->next) e->orphan = true;
    pthread_mutex_init(&progress_lock, NULL);
    progress_once = (pthread_once_t)PTHREAD_ONCE_INIT; /* a fresh condition variable */
    atomic_store(&progress_waiters, 0);
    pthread_mutex_init(&hold_lock, NULL);
    pthread_cond_init(&hold_cond, NULL);
    atomic_store(&hold, 0);
    atomic_store(&in_step, 0);
}

void mock_engine_kick(mock_engine *e)
{
    if (e->orphan) return; /* nobody to wake; its lock may be a dead thread's */
    pthread_mutex_lock(&e->lock);
    e->kicked = true;
    pthread_cond_signal(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

static void kick_all(void)
{
    pthread_mutex_lock(&engines_lock);
    for (mock_engine *e = engines; e; e = e->next) mock_engine_kick(e);
    pthread_mutex_unlock(&engines_lock);
}

void mock_progress(void)
{
    pthread_once(&progress_once, progress_init);
    atomic_fetch_add(&progress, 1);
    if (atomic_load(&progress_waiters)) {
        pthread_mutex_lock(&progress_lock);
        pthread_cond_broadcast(&progress_cond);
        pthread_mutex_unlock(&progress_lock);
    }
    kick_all(); /* engines blocked on this write */
}

uint64_t mock_sys_progress_seq(void *ctx)
{
    (void)ctx;
    return atomic_load(&progress);
}

void mock_sys_progress_wait(void *ctx, uint64_t seq, uint64_t max_ns)
{
    (void)ctx;
    pthread_once(&progress_once, progress_init);
    struct timespec ts;
    deadline(&ts, max_ns);
    pthread_mutex_lock(&progress_lock);
    atomic_fetch_add(&progress_waiters, 1);
    while (atomic_load(&progress) == seq)
        if (pthread_cond_timedwait(&progress_cond, &progress_lock, &ts) == ETIMEDOUT) break;
    atomic_fetch_sub(&progress_waiters, 1);
    pthread_mutex_unlock(&progress_lock);
}

void mock_sys_notify(void *ctx, uint64_t va)
{
    (void)ctx;
    (void)va;
    kick_all();
}

void mock_sys_doorbell(void *ctx, volatile void *addr)
{
    (void)ctx;
    const volatile uint8_t *a = addr;
    pthread_mutex_lock(&engines_lock);
    for (mock_engine *e = engines; e; e = e->next)
        if (e->bell && a >= e->bell && a < e->bell + e->bell_size) mock_engine_kick(e);
    pthread_mutex_unlock(&engines_lock);
}

/* ** random scheduling: xorshift per engine, seeded from the config seed
 * and the engine's name, so a seed replays the same pauses */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

void mock_sched_point(mock_engine *e)
{
    const mock_config *c = mock_cfg();
    if (!c->sched_random || !c->sched_max_us) return;
    uint64_t r = next_rand(&e->rng);
    if (r % 4) return; /* pause at about one point in four */
    base_sleep_ns((r >> 8) % ((uint64_t)c->sched_max_us * 1000 + 1));
}

/* the engine this thread runs, for its kernels' cancel flag */
static _Thread_local mock_engine *current;

const volatile int *mock_engine_cancel_flag(void)
{
    return current ? (const volatile int *)&current->stop : NULL;
}

static atomic_bool engines_poll;

void mock_engines_poll(bool on) { atomic_store(&engines_poll, on); }

/* how long an idle engine sleeps when nobody rings (a forgotten doorbell) */
static _Atomic uint64_t idle_poll_ns = 20000000;

uint64_t mock_engines_idle_poll(uint64_t ns)
{
    return atomic_exchange(&idle_poll_ns, ns ? ns : 20000000);
}

static void *engine_main(void *arg)
{
    mock_engine *e = arg;
    current = e;
    uint64_t idle_ns = 20000; /* polling: from 20 us, doubling to 1 ms while idle */
    while (!atomic_load(&e->stop)) {
        uint64_t t0 = hcq_now_ns();
        if (!step_begin()) continue;
        mock_step r = e->hung ? MOCK_STEP_STOPPED : e->step(e, e->ctx);
        step_done();
        if (r == MOCK_STEP_PROGRESS) {
            atomic_fetch_add(&e->gpu->busy_ns, hcq_now_ns() - t0); /* the utilization sensors read */
            idle_ns = 20000;
            mock_sched_point(e);
            continue;
        }
        struct timespec ts;
        /* idle: doorbells wake us; the timeout only covers a doorbell the
         * runtime forgot, as hardware that polls would. Preloaded, nothing
         * kicks us: look again soon. */
        uint64_t idle = atomic_load(&idle_poll_ns);
        if (atomic_load(&engines_poll)) {
            idle = idle_ns;
            idle_ns = BASE_MIN(idle_ns * 2, 1000000);
        }
        deadline(&ts, r == MOCK_STEP_BLOCKED ? 200000 : r == MOCK_STEP_IDLE ? idle : 1000000000);
        pthread_mutex_lock(&e->lock);
        while (!e->kicked && !atomic_load(&e->stop))
            if (pthread_cond_timedwait(&e->cond, &e->lock, &ts) == ETIMEDOUT) break;
        e->kicked = false;
        pthread_mutex_unlock(&e->lock);
    }
    return NULL;
}

mock_engine *mock_engine_start(mock_gpu *gpu, const char *name, mock_step_fn step, void *ctx)
{
    mock_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->gpu = gpu;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->step = step;
    e->ctx = ctx;
    e->hung = !strcmp(mock_cfg()->hang_engine, name);
    e->rng = mock_cfg()->sched_seed * 0x9E3779B97F4A7C15ull + 1;
    for (const char *p = name; *p; p++) e->rng = (e->rng ^ (uint8_t)*p) * 0x100000001B3ull;
    if (!e->rng) e->rng = 1;
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cond, &a);
    pthread_condattr_destroy(&a);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 16u << 20); /* it runs kernels */
    int rc = pthread_create(&e->thread, &attr, engine_main, e);
    pthread_attr_destroy(&attr);
    if (rc) {
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        free(e);
        return NULL;
    }
    if (e->hung) BASE_LOG(1, "mock: engine %s hangs, as configured", name);
    pthread_mutex_lock(&engines_lock);
    e->next = engines;
    engines = e;
    pthread_mutex_unlock(&engines_lock);
    return e;
}

void mock_engine_request_stop(mock_engine *e)
{
    if (!e) return;
    atomic_store(&e->stop, 1);
    mock_engine_kick(e);
}

void mock_engine_stop(mock_engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&engines_lock);
    for (mock_engine **p = &engines; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    pthread_mutex_unlock(&engines_lock);
    atomic_store(&e->stop, 1);
    if (e->orphan) { /* a forked child's copy: no thread to join, its lock may be a dead thread's */
        free(e);
        return;
    }
    mock_engine_kick(e);
    pthread_join(e->thread, NULL);
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->cond);
    free(e);
}

void mock_engine_set_doorbell(mock_engine *e, const volatile void *addr, size_t size)
{
    pthread_mutex_lock(&engines_lock);
    e->bell = addr;
    e->bell_size = size;
    pthread_mutex_unlock(&engines_lock);
}

const char *mock_engine_name(const mock_engine *e) { return e->name; }

void mock_dump(const mock_engine *e, const char *format, uint32_t arch, uint64_t va, const uint32_t *dw,
               uint32_t ndw)
{
    const mock_config *c = mock_cfg();
    if (c->dump_dir[0]) drv_dump_write(c->dump_dir, e->name, format, arch, va, dw, ndw);
}
