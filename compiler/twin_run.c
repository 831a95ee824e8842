/* Running host twins (twin.h): work-groups in order on the calling
 * thread. A kernel without barriers runs its work-items one after the
 * other; a kernel with barriers runs each work-item as a fiber, and a
 * barrier switches to the next fiber of the group, so every work-item
 * reaches barrier n before any passes it (the IR keeps barriers in
 * uniform control flow, so all of them reach the same one; a work-item
 * that has returned counts as arrived, as exited threads do on the GPUs).
 *
 * A kernel with warp rendezvous (mma: CC_TWIN_WARP_SYNC) runs its fibers
 * under a stricter schedule (run_group_strict): each fiber waits where it
 * is, a barrier passes when every fiber that has not returned waits at one,
 * and a rendezvous when every lane of its warp waits there; when nothing
 * can run and some warp is only partly at its rendezvous, the launch
 * faults (CC_TWIN_FAULT_WARP) naming the lanes that are, as hardware
 * leaves that undefined and the interpreter and the executors refuse it.
 *
 * Each thread keeps its fibers (stacks) for its next launches and frees
 * them when it exits. */
#include "compiler/twin.h"

#include "compiler/fiber.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ** per-thread fibers */
typedef struct twin_tls {
    cc_fiber_sched sched;
    cc_fiber *fibers;
    uint32_t nfibers;
} twin_tls;

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void tls_free(void *p)
{
    twin_tls *t = p;
    if (!t) return;
    for (uint32_t i = 0; i < t->nfibers; i++) cc_fiber_destroy(&t->fibers[i]);
    free(t->fibers);
    cc_fiber_sched_fini(&t->sched);
    free(t);
}

static void tls_init(void) { pthread_key_create(&tls_key, tls_free); }

/* The thread's fibers, at least n of them; NULL on out of memory. */
static twin_tls *thread_fibers(uint32_t n)
{
    pthread_once(&tls_once, tls_init);
    twin_tls *t = pthread_getspecific(tls_key);
    if (!t) {
        if (!(t = calloc(1, sizeof *t))) return NULL;
        if (!cc_fiber_sched_init(&t->sched) || pthread_setspecific(tls_key, t)) {
            cc_fiber_sched_fini(&t->sched);
            free(t);
            return NULL;
        }
    }
    if (t->nfibers < n) {
        cc_fiber *f = realloc(t->fibers, n * sizeof *f);
        if (!f) return NULL;
        t->fibers = f;
        for (; t->nfibers < n; t->nfibers++)
            if (!cc_fiber_create(&t->fibers[t->nfibers])) return NULL;
    }
    return t;
}

/* ** one call's state */
typedef struct run {
    const cc_twin_launch *l;
    hcq_twin_group g;
    hcq_twin_item *items;
    const hcq_twin_item **slot;
    uint32_t W;
    atomic_bool *stop;
    bool faulted;
    cc_twin_fault *fault;
    twin_tls *t;  /* fiber mode */
    uint32_t cur; /* fiber mode: the work-item running */
    /* the strict schedule (warp rendezvous): per fiber what it waits at, per warp how many lanes wait */
    uint8_t *wait;     /* W: WAIT_* */
    uint32_t *arrived; /* W: per warp (index linear id / warp size) */
    uint32_t warp;     /* the warp size of the rendezvous seen (all of a kernel's kinds in one launch: 32 or 64) */
} run;

enum { WAIT_NONE = 0, WAIT_BARRIER, WAIT_WARP };

static bool cancelled(const run *r) { return r->l->cancel && __atomic_load_n(r->l->cancel, __ATOMIC_RELAXED); }
static bool stopped(const run *r)
{
    return r->faulted || (r->stop && atomic_load_explicit(r->stop, memory_order_relaxed)) || cancelled(r);
}

/* records the first fault of this call; the kernel goes on with dummy
 * values until the runtime gets control back and stops */
static cc_twin_fault *new_fault(run *r, int kind)
{
    if (r->faulted) return NULL;
    r->faulted = true;
    if (r->stop) atomic_store(r->stop, true);
    cc_twin_fault *f = r->fault;
    memset(f, 0, sizeof *f);
    f->kind = kind;
    const hcq_twin_item *it = *r->slot;
    for (int i = 0; i < 3 && it; i++) {
        f->gid[i] = (uint32_t)it->gid[i];
        f->lid[i] = (uint32_t)it->lid[i];
    }
    return f;
}

static int rt_check(void *ctx, unsigned long long addr, unsigned size, unsigned param, int write, long long index,
                    hcq_twin_range *rg)
{
    run *r = ctx;
    uint64_t lo = 0, hi = 0;
    bool w = false;
    char why[512] = "";
    if (r->l->check(r->l->ctx, addr, size, param, write, index, &lo, &hi, &w, why, sizeof why)) {
        if (hi > lo) {
            rg->lo = lo;
            rg->hi = hi;
            rg->w = w;
        }
        return 1;
    }
    cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_GLOBAL);
    if (f) {
        f->addr = addr;
        f->size = size;
        f->write = write;
        f->param = param;
        f->index = index;
        snprintf(f->why, sizeof f->why, "%s", why);
    }
    return 0;
}

static void rt_local_fault(void *ctx, unsigned long long index, unsigned long long count, int write)
{
    run *r = ctx;
    cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_LOCAL);
    if (f) {
        f->index = (int64_t)index;
        f->count = count;
        f->write = write;
    }
}

static void warp_fault(run *r, const char *why)
{
    cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_WARP);
    if (f) snprintf(f->why, sizeof f->why, "%s", why);
}

/* a warp rendezvous under the strict schedule: the last lane of the warp to come releases the others */
static void warp_sync(run *r, uint32_t warp)
{
    char why[256];
    if (!r->wait || r->W % warp || (r->warp && r->warp != warp)) {
        snprintf(why, sizeof why, "a warp-collective operation (mma) on warps of %u work-items, but the work-group has "
                 "%u%s", warp, r->W, r->warp && r->warp != warp ? " and another one used another warp size" :
                 " (not a multiple of the warp)");
        warp_fault(r, why);
        return;
    }
    r->warp = warp;
    uint32_t w = r->cur / warp, base = w * warp;
    if (++r->arrived[w] == warp) {
        r->arrived[w] = 0;
        for (uint32_t i = base; i < base + warp; i++)
            if (r->wait[i] == WAIT_WARP) r->wait[i] = WAIT_NONE;
        return; /* the last one goes on at once */
    }
    r->wait[r->cur] = WAIT_WARP;
    cc_fiber_yield(&r->t->sched); /* resumed once released (or to unwind after a fault) */
}

static void rt_barrier(void *ctx, unsigned id)
{
    run *r = ctx;
    if (id & CC_TWIN_WARP_SYNC) {
        warp_sync(r, id & 0xffffu);
        return;
    }
    if (id >= r->l->barriers) {
        cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_BARRIER);
        if (f) {
            f->barrier = id;
            f->barriers = r->l->barriers;
            snprintf(f->why, sizeof f->why, "the launch provides %u barrier%s", r->l->barriers,
                     r->l->barriers == 1 ? "" : "s");
        }
        return;
    }
    if (r->wait) { /* strict: wait here until every fiber that has not returned does */
        r->wait[r->cur] = WAIT_BARRIER;
        cc_fiber_yield(&r->t->sched);
        return;
    }
    if (r->t) {
        /* on to the next work-item of this round that has not returned, if
         * any (one switch instead of two through the scheduler: a group of
         * 256 switches 256 times a barrier); the round's last, or any after
         * a fault, goes back to the scheduler */
        twin_tls *t = r->t;
        uint32_t j = r->cur + 1;
        while (j < r->W && t->fibers[j].done) j++;
        if (j < r->W && !stopped(r)) {
            uint32_t from = r->cur;
            r->cur = j;
            *r->slot = &r->items[j];
            if (cc_fiber_switch(&t->sched, &t->fibers[j])) return;
            r->cur = from, *r->slot = &r->items[from];
        }
        cc_fiber_yield(&t->sched);
        return;
    }
    if (r->W > 1) { /* the twin said it has no barriers: the runtime cannot keep its word */
        cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_BARRIER);
        if (f) {
            f->barrier = id;
            f->barriers = r->l->barriers;
            snprintf(f->why, sizeof f->why, "the twin's metadata says the kernel has no barriers");
        }
    }
}

static void rt_misaligned(void *ctx, unsigned long long addr, unsigned size, unsigned param, int write,
                          long long index)
{
    run *r = ctx;
    cc_twin_fault *f = new_fault(r, CC_TWIN_FAULT_MISALIGNED);
    if (f) {
        f->addr = addr;
        f->size = size;
        f->param = param;
        f->write = write;
        f->index = index;
    }
}

static const hcq_twin_rt rt = {rt_check, rt_local_fault, rt_barrier, rt_misaligned};

static void fiber_main(void *arg)
{
    run *r = arg;
    r->l->m->call();
}

static void group_ids(run *r, uint64_t g)
{
    const uint32_t *ng = r->l->num_groups;
    int gid[3] = {(int)(g % ng[0]), (int)(g / ng[0] % ng[1]), (int)(g / ng[0] / ng[1])};
    for (uint32_t i = 0; i < (r->t ? r->W : 1); i++) memcpy(r->items[i].gid, gid, sizeof gid);
}

static void run_group_flat(run *r)
{
    const uint32_t *ls = r->l->local_size;
    hcq_twin_item *it = &r->items[0];
    for (uint32_t z = 0; z < ls[2]; z++)
        for (uint32_t y = 0; y < ls[1]; y++)
            for (uint32_t x = 0; x < ls[0]; x++) {
                it->lid[0] = (int)x, it->lid[1] = (int)y, it->lid[2] = (int)z;
                *r->slot = it;
                r->l->m->call();
                if (stopped(r)) return;
            }
}

/* A round runs every work-item not yet returned to its next barrier (or
 * its end), in order; a barrier passes control straight to the next one
 * (rt_barrier), so control comes back here when one returns, when the
 * round's last reaches the barrier, or after a fault. */
static void run_group_fibers(run *r)
{
    twin_tls *t = r->t;
    for (uint32_t i = 0; i < r->W; i++) cc_fiber_reset(&t->fibers[i], &t->sched, fiber_main, r);
    uint32_t left = r->W;
    while (left && !stopped(r)) {
        for (uint32_t i = 0; i < r->W && !stopped(r); i++) {
            if (t->fibers[i].done) continue;
            r->cur = i;
            *r->slot = &r->items[i];
            cc_fiber_resume(&t->sched, &t->fibers[i]);
            i = r->cur; /* the work-item that gave control back */
            if (t->fibers[i].done) left--;
        }
    }
    /* fibers left behind after a fault are simply reset by the next group */
}

/* The strict schedule: rounds run every fiber that waits at nothing; when
 * none could run, a barrier everyone waits at passes, else some warp waits
 * for lanes that will not come. */
static void run_group_strict(run *r)
{
    twin_tls *t = r->t;
    for (uint32_t i = 0; i < r->W; i++) cc_fiber_reset(&t->fibers[i], &t->sched, fiber_main, r);
    memset(r->wait, 0, r->W);
    memset(r->arrived, 0, r->W * sizeof *r->arrived);
    uint32_t left = r->W;
    while (left && !stopped(r)) {
        bool ran = false;
        for (uint32_t i = 0; i < r->W && !stopped(r); i++) {
            if (t->fibers[i].done || r->wait[i]) continue;
            r->cur = i;
            *r->slot = &r->items[i];
            cc_fiber_resume(&t->sched, &t->fibers[i]);
            if (t->fibers[i].done) left--;
            ran = true;
        }
        if (ran || !left || stopped(r)) continue;
        uint32_t stuck = UINT32_MAX;
        for (uint32_t i = 0; i < r->W && stuck == UINT32_MAX; i++)
            if (!t->fibers[i].done && r->wait[i] == WAIT_WARP) stuck = i;
        if (stuck == UINT32_MAX) { /* every fiber left waits at a barrier: it passes */
            memset(r->wait, WAIT_NONE, r->W);
            continue;
        }
        uint32_t base = stuck - stuck % r->warp;
        uint64_t at = 0;
        for (uint32_t l = 0; l < r->warp; l++) at |= (uint64_t)(!t->fibers[base + l].done && r->wait[base + l] == WAIT_WARP) << l;
        char why[256];
        snprintf(why, sizeof why, "only lanes 0x%0*llx of the warp of work-items %u..%u reach a warp-collective operation "
                 "(mma) and the others never do; it is one operation of the whole warp, so the control flow around it "
                 "must be the same for every work-item of a warp", (int)(r->warp / 4), (unsigned long long)at, base,
                 base + r->warp - 1);
        r->cur = stuck;
        *r->slot = &r->items[stuck];
        warp_fault(r, why);
    }
}

hcq_status cc_twin_run_groups(const cc_twin_launch *l, uint64_t begin, uint64_t end, atomic_bool *stop,
                              cc_twin_fault *fault)
{
    memset(fault, 0, sizeof *fault);
    run r = {.l = l, .stop = stop, .fault = fault};
    r.W = l->local_size[0] * l->local_size[1] * l->local_size[2];
    if (!r.W || r.W > 1024)
        return base_err(HCQ_ELIMIT, "host twin `%s`: work-group of %u x %u x %u work-items", l->m->name,
                        l->local_size[0], l->local_size[1], l->local_size[2]);
    uint32_t np = l->m->nparams;
    hcq_twin_range *ranges = calloc(np ? np : 1, sizeof *ranges);
    r.items = calloc(l->m->barriers ? r.W : 1, sizeof *r.items);
    if (!ranges || !r.items) {
        free(ranges);
        free(r.items);
        return base_err(HCQ_ENOMEM, "host twin `%s`: out of memory for a work-group", l->m->name);
    }
    r.g = (hcq_twin_group){.args = l->args, .ranges = ranges, .rt = &rt, .ctx = &r, .implicit = l->implicit,
                           .cancel = l->cancel};
    for (int i = 0; i < 3; i++) {
        r.g.ngrp[i] = (int)l->num_groups[i];
        r.g.lsize[i] = (int)l->local_size[i];
    }
    hcq_status st = HCQ_OK;
    if (l->m->warp_sync && (!(r.wait = calloc(r.W, 1)) || !(r.arrived = calloc(r.W, sizeof *r.arrived))))
        st = base_err(HCQ_ENOMEM, "host twin `%s`: out of memory for a work-group", l->m->name);
    if (!st && l->m->barriers && (r.W > 1 || l->m->warp_sync) && !(r.t = thread_fibers(r.W)))
        st = base_err(HCQ_ENOMEM, "host twin `%s`: out of memory for %u fibers", l->m->name, r.W);
    if (!st) {
        const hcq_twin_item **slot = l->m->slot();
        const hcq_twin_item *saved = *slot; /* a twin may run inside another's check (tests) */
        r.slot = slot;
        const uint32_t *ls = l->local_size;
        if (r.t)
            for (uint32_t i = 0; i < r.W; i++) {
                r.items[i].grp = &r.g;
                r.items[i].lid[0] = (int)(i % ls[0]);
                r.items[i].lid[1] = (int)(i / ls[0] % ls[1]);
                r.items[i].lid[2] = (int)(i / ls[0] / ls[1]);
            }
        else
            r.items[0].grp = &r.g;
        for (uint64_t g = begin; g < end && !stopped(&r); g++) {
            group_ids(&r, g);
            if (r.wait) run_group_strict(&r);
            else if (r.t) run_group_fibers(&r);
            else run_group_flat(&r);
        }
        *slot = saved;
        if (r.faulted) st = HCQ_EFAULT;
        else if (cancelled(&r))
            st = base_err(HCQ_ESTATE, "host twin `%s`: cancelled (its device is being closed)", l->m->name);
    }
    free(ranges);
    free(r.items);
    free(r.wait);
    free(r.arrived);
    return st;
}

void cc_twin_fault_describe(const cc_twin_fault *f, const char *kernel, char *buf, size_t size)
{
    char where[160];
    snprintf(where, sizeof where, "in work-item (%u,%u,%u) of work-group (%u,%u,%u)", f->lid[0], f->lid[1], f->lid[2],
             f->gid[0], f->gid[1], f->gid[2]);
    switch (f->kind) {
    case CC_TWIN_FAULT_GLOBAL:
        snprintf(buf, size, "kernel `%s` %s %u bytes at 0x%" PRIx64 " (param %u, element %" PRId64 ") %s: %s", kernel,
                 f->write ? "wrote" : "read", f->size, f->addr, f->param, f->index, where, f->why);
        break;
    case CC_TWIN_FAULT_LOCAL:
        snprintf(buf, size, "kernel `%s` accessed element %" PRId64 " of a local (shared) array of %" PRIu64
                 " elements %s", kernel, f->index, f->count, where);
        break;
    case CC_TWIN_FAULT_BARRIER:
        snprintf(buf, size, "kernel `%s` waits on barrier %u %s: %s", kernel, f->barrier, where, f->why);
        break;
    case CC_TWIN_FAULT_MISALIGNED:
        if (f->param == ~0u)
            snprintf(buf, size, "kernel `%s` %s %u bytes at local offset 0x%" PRIx64 " (element %" PRId64
                     ") %s: misaligned vector access (the offset is not a multiple of the access size)", kernel,
                     f->write ? "wrote" : "read", f->size, f->addr, f->index, where);
        else
            snprintf(buf, size, "kernel `%s` %s %u bytes at 0x%" PRIx64 " (param %u, element %" PRId64
                     ") %s: misaligned vector access (the address is not a multiple of the access size)", kernel,
                     f->write ? "wrote" : "read", f->size, f->addr, f->param, f->index, where);
        break;
    case CC_TWIN_FAULT_WARP: snprintf(buf, size, "kernel `%s` %s: %s", kernel, where, f->why); break;
    default: snprintf(buf, size, "kernel `%s`: no fault", kernel); break;
    }
}
