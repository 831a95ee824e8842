#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>

/* An open-addressing set of (pointer, kind). Freeing an object twice, or
 * passing a pointer that is not an hcq object, is then a clear HCQ_ESTATE
 * instead of heap corruption. One process-wide table, behind one mutex: the
 * calls that touch it (create/destroy) are not on any hot path. */
typedef struct {
    uintptr_t p; /* 0 empty, 1 tombstone */
    uint32_t kind;
} slot;

/* readers (every public call checks its handles) share the lock */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static slot *slots;
static size_t cap, used, live;

static size_t hash(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull); }

static void grow(void)
{
    size_t ncap = cap ? cap * 2 : 1024;
    slot *n = calloc(ncap, sizeof *n);
    if (!n) return; /* keep the old table; inserts fail open below */
    for (size_t i = 0; i < cap; i++) {
        if (slots[i].p > 1) {
            size_t j = hash(slots[i].p) & (ncap - 1);
            while (n[j].p) j = (j + 1) & (ncap - 1);
            n[j] = slots[i];
        }
    }
    free(slots);
    slots = n;
    cap = ncap;
    used = live;
}

static slot *find(uintptr_t p)
{
    if (!cap) return NULL;
    for (size_t j = hash(p) & (cap - 1), n = 0; n < cap; j = (j + 1) & (cap - 1), n++) {
        if (slots[j].p == p) return &slots[j];
        if (slots[j].p == 0) return NULL;
    }
    return NULL;
}

void base_handle_add(const void *ptr, uint32_t kind)
{
    uintptr_t p = (uintptr_t)ptr;
    pthread_rwlock_wrlock(&lock);
    if ((used + 1) * 2 > cap) grow();
    if (cap && (used + 1) * 2 <= cap) {
        size_t j = hash(p) & (cap - 1);
        while (slots[j].p > 1) j = (j + 1) & (cap - 1);
        if (slots[j].p == 0) used++;
        slots[j].p = p;
        slots[j].kind = kind;
        live++;
    }
    pthread_rwlock_unlock(&lock);
}

bool base_handle_remove(const void *ptr, uint32_t kind)
{
    pthread_rwlock_wrlock(&lock);
    slot *s = find((uintptr_t)ptr);
    bool ok = s && s->kind == kind;
    if (ok) {
        s->p = 1;
        live--;
    }
    pthread_rwlock_unlock(&lock);
    return ok;
}

bool base_handle_live(const void *ptr, uint32_t kind)
{
    if (!ptr) return false;
    pthread_rwlock_rdlock(&lock);
    slot *s = find((uintptr_t)ptr);
    bool ok = s && s->kind == kind;
    pthread_rwlock_unlock(&lock);
    return ok;
}

static const char *const kind_names[] = {
    [BASE_H_DEVICE] = "open device", [BASE_H_BUFFER] = "live buffer", [BASE_H_SIGNAL] = "live signal",
    [BASE_H_QUEUE] = "live queue",   [BASE_H_PROGRAM] = "live program", [BASE_H_GRAPH] = "live graph",
    [BASE_H_TENSOR] = "live tensor", [BASE_H_CTX] = "live context",
    [BASE_H_SHARDED] = "live sharded tensor",
};

hcq_status base_handle_check(const void *p, uint32_t kind, const char *fn, const char *what)
{
    if (base_handle_live(p, kind)) return HCQ_OK;
    const char *k = kind < BASE_ARRAY_LEN(kind_names) && kind_names[kind] ? kind_names[kind] : "live object";
    if (!p) return base_err(HCQ_EINVAL, "%s: %s is NULL", fn, what);
    return base_err(HCQ_ESTATE, "%s: %s %p is not a%s %s (freed or destroyed already, or its device was closed)", fn,
                    what, p, kind == BASE_H_DEVICE ? "n" : "", k);
}

/* ** dependents: objects of a higher layer that live on an object of a lower
 * one (a tensor context on a device) and must go before it does */
typedef struct dependent {
    const void *owner;
    base_dependent_fn fn;
    void *arg;
    struct dependent *next;
} dependent;

static pthread_mutex_t dep_lock = PTHREAD_MUTEX_INITIALIZER;
static dependent *deps;

bool base_dependent_add(const void *owner, base_dependent_fn fn, void *arg)
{
    dependent *d = malloc(sizeof *d);
    if (!d) return false;
    *d = (dependent){owner, fn, arg, NULL};
    pthread_mutex_lock(&dep_lock);
    d->next = deps;
    deps = d;
    pthread_mutex_unlock(&dep_lock);
    return true;
}

void base_dependent_remove(const void *owner, void *arg)
{
    pthread_mutex_lock(&dep_lock);
    for (dependent **p = &deps; *p; p = &(*p)->next) {
        if ((*p)->owner == owner && (*p)->arg == arg) {
            dependent *d = *p;
            *p = d->next;
            free(d);
            break;
        }
    }
    pthread_mutex_unlock(&dep_lock);
}

unsigned base_dependents_run(const void *owner)
{
    unsigned n = 0;
    for (;;) {
        dependent *d = NULL;
        pthread_mutex_lock(&dep_lock);
        for (dependent **p = &deps; *p; p = &(*p)->next) {
            if ((*p)->owner == owner) {
                d = *p;
                *p = d->next;
                break;
            }
        }
        pthread_mutex_unlock(&dep_lock);
        if (!d) return n;
        d->fn(d->arg); /* unlocked: it may remove others or itself */
        free(d);
        n++;
    }
}
