#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>

/* What a recording uses: a set of (object, kind), each held once however
 * often the recording names it, let go together when the recording is
 * reset or destroyed (after its last submission completed). A freed
 * program, buffer, view or signal that a recording holds stays alive until
 * then; only its handle dies at once. */

static size_t slot_of(const void *p, uint32_t cap)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static void hold_obj(uint32_t kind, void *p)
{
    switch (kind) {
    case BASE_H_BUFFER: mem_buffer_hold(p); break;
    case BASE_H_SIGNAL: mem_signal_hold(p); break;
    case BASE_H_PROGRAM: q_program_hold(p); break;
    }
}

static void release_obj(uint32_t kind, void *p)
{
    switch (kind) {
    case BASE_H_BUFFER: mem_buffer_release(p); break;
    case BASE_H_SIGNAL: mem_signal_release(p); break;
    case BASE_H_PROGRAM: q_program_release(p); break;
    }
}

hcq_status q_hold(q_holds *h, uint32_t kind, void *p)
{
    if (h->cap && (size_t)(h->n + 1) * 2 <= h->cap) {
        for (size_t j = slot_of(p, h->cap);; j = (j + 1) & (h->cap - 1)) {
            if (h->v[j].p == p) return HCQ_OK;
            if (!h->v[j].p) break;
        }
    } else {
        uint32_t cap = h->cap ? h->cap * 2 : 16;
        q_hold_entry *v = base_calloc(cap, sizeof *v);
        if (!v) return HCQ_ENOMEM;
        for (uint32_t i = 0; i < h->cap; i++) {
            if (!h->v[i].p) continue;
            size_t j = slot_of(h->v[i].p, cap);
            while (v[j].p) j = (j + 1) & (cap - 1);
            v[j] = h->v[i];
        }
        free(h->v);
        h->v = v;
        h->cap = cap;
        for (size_t j = slot_of(p, cap);; j = (j + 1) & (cap - 1)) {
            if (h->v[j].p == p) return HCQ_OK;
            if (!h->v[j].p) break;
        }
    }
    size_t j = slot_of(p, h->cap);
    while (h->v[j].p) j = (j + 1) & (h->cap - 1);
    h->v[j] = (q_hold_entry){p, kind};
    h->n++;
    hold_obj(kind, p);
    return HCQ_OK;
}

void q_holds_release(q_holds *h)
{
    for (uint32_t i = 0; i < h->cap; i++)
        if (h->v[i].p) release_obj(h->v[i].kind, h->v[i].p);
    free(h->v);
    *h = (q_holds){0};
}
