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

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
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
    pthread_mutex_lock(&lock);
    if ((used + 1) * 2 > cap) grow();
    if (cap && (used + 1) * 2 <= cap) {
        size_t j = hash(p) & (cap - 1);
        while (slots[j].p > 1) j = (j + 1) & (cap - 1);
        if (slots[j].p == 0) used++;
        slots[j].p = p;
        slots[j].kind = kind;
        live++;
    }
    pthread_mutex_unlock(&lock);
}

bool base_handle_remove(const void *ptr, uint32_t kind)
{
    pthread_mutex_lock(&lock);
    slot *s = find((uintptr_t)ptr);
    bool ok = s && s->kind == kind;
    if (ok) {
        s->p = 1;
        live--;
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

bool base_handle_live(const void *ptr, uint32_t kind)
{
    pthread_mutex_lock(&lock);
    slot *s = find((uintptr_t)ptr);
    bool ok = s && s->kind == kind;
    pthread_mutex_unlock(&lock);
    return ok;
}
