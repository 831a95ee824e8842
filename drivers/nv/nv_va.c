/* GPU virtual addresses for every NV device of the process.
 *
 * NVIDIA's UVM gives the CPU and the GPUs one address space: a buffer's GPU
 * VA is also where its CPU mapping goes, so the VAs must be free in the
 * process and no two GPUs may hand out the same one (copies and peer
 * mappings name a buffer by one address). One allocator serves all devices,
 * over two windows reserved with PROT_NONE mmaps so nothing else in the
 * process lands there:
 *   low   below 2^40: pushbuffers, QMDs and kernargs (their methods carry
 *         VA bits 39:8), and semaphores (Ampere's SEM_ADDR_HI has 8 bits);
 *   high  device memory, which only kernels and copies address.
 * tinygrad's windows start at 0x10_0000_0000 and 0x20_0000_0000; where those
 * are taken (ASan's shadow covers them) smaller or kernel-chosen ones are
 * used. Freed ranges are reserved again, never unmapped. */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct va_free {
    uint64_t va, size;
} va_free;

typedef struct va_window {
    uint64_t base, size;
    va_free *free; /* sorted, coalesced */
    size_t nfree, cap;
    bool tried;
} va_window;

static va_window windows[2]; /* [0] high, [1] low */
static pthread_mutex_t va_lock = PTHREAD_MUTEX_INITIALIZER;

#define LOW_LIMIT (1ull << 40)

static bool try_reserve(uint64_t hint, uint64_t size, bool fixed, uint64_t limit, uint64_t *out)
{
    int err = 0;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED_NOREPLACE : 0);
    void *p = sys_mmap((void *)(uintptr_t)hint, size, PROT_NONE, flags, -1, 0, &err);
    if (!p) return false;
    uint64_t a = (uint64_t)(uintptr_t)p;
    if ((fixed && a != hint) || (limit && a + size > limit)) {
        sys_munmap(p, size);
        return false;
    }
    *out = a;
    return true;
}

static bool window_init(va_window *w, bool low)
{
    if (w->tried) return w->size != 0;
    w->tried = true;
    static const struct {
        uint64_t hint, size;
        bool fixed;
    } low_c[] = {{0x1000000000ull, 64ull << 30, true}, {0x10000000ull, 3ull << 29, true}, {0, 8ull << 30, false},
                 {0, 1ull << 30, false}},
      high_c[] = {{0x2000000000ull, 512ull << 30, true}, {0, 512ull << 30, false}, {0, 64ull << 30, false}};
    size_t n = low ? BASE_ARRAY_LEN(low_c) : BASE_ARRAY_LEN(high_c);
    for (size_t i = 0; i < n; i++) {
        uint64_t hint = low ? low_c[i].hint : high_c[i].hint, size = low ? low_c[i].size : high_c[i].size;
        bool fixed = low ? low_c[i].fixed : high_c[i].fixed;
        uint64_t base;
        if (!try_reserve(hint, size, fixed, low ? LOW_LIMIT : 0, &base)) continue;
        w->base = base;
        w->size = size;
        w->free = malloc(16 * sizeof *w->free);
        if (!w->free) {
            sys_munmap((void *)(uintptr_t)base, size);
            w->size = 0;
            return false;
        }
        w->cap = 16;
        w->free[0] = (va_free){base, size};
        w->nfree = 1;
        BASE_LOG(1, "NV: %s VA window [0x%llx, +%llu GiB)", low ? "low" : "high", (unsigned long long)base,
                 (unsigned long long)(size >> 30));
        return true;
    }
    return false;
}

static bool window_alloc(va_window *w, uint64_t size, uint64_t align, uint64_t *va)
{
    for (size_t i = 0; i < w->nfree; i++) {
        va_free *f = &w->free[i];
        uint64_t a = base_align_up(f->va, align);
        if (a < f->va || a + size > f->va + f->size || a + size < a) continue;
        uint64_t head = a - f->va, tail = f->va + f->size - (a + size);
        if (head && tail) { /* split in two */
            if (w->nfree == w->cap) {
                va_free *n = realloc(w->free, 2 * w->cap * sizeof *n);
                if (!n) return false;
                w->free = n;
                w->cap *= 2;
                f = &w->free[i];
            }
            memmove(&w->free[i + 2], &w->free[i + 1], (w->nfree - i - 1) * sizeof *f);
            w->free[i + 1] = (va_free){a + size, tail};
            f->size = head;
            w->nfree++;
        } else if (head) {
            f->size = head;
        } else if (tail) {
            *f = (va_free){a + size, tail};
        } else {
            memmove(&w->free[i], &w->free[i + 1], (w->nfree - i - 1) * sizeof *f);
            w->nfree--;
        }
        *va = a;
        return true;
    }
    return false;
}

static void window_free(va_window *w, uint64_t va, uint64_t size)
{
    size_t i = 0;
    while (i < w->nfree && w->free[i].va < va) i++;
    bool merge_prev = i > 0 && w->free[i - 1].va + w->free[i - 1].size == va;
    bool merge_next = i < w->nfree && va + size == w->free[i].va;
    if (merge_prev && merge_next) {
        w->free[i - 1].size += size + w->free[i].size;
        memmove(&w->free[i], &w->free[i + 1], (w->nfree - i - 1) * sizeof *w->free);
        w->nfree--;
    } else if (merge_prev) {
        w->free[i - 1].size += size;
    } else if (merge_next) {
        w->free[i].va = va;
        w->free[i].size += size;
    } else {
        if (w->nfree == w->cap) {
            va_free *n = realloc(w->free, 2 * w->cap * sizeof *n);
            if (!n) return; /* the range is lost to the allocator, never handed out twice */
            w->free = n;
            w->cap *= 2;
        }
        memmove(&w->free[i + 1], &w->free[i], (w->nfree - i) * sizeof *w->free);
        w->free[i] = (va_free){va, size};
        w->nfree++;
    }
}

hcq_status nv_va_alloc(uint64_t size, uint64_t align, bool low, uint64_t *va_out)
{
    pthread_mutex_lock(&va_lock);
    va_window *w = &windows[low ? 1 : 0];
    bool ok = window_init(w, low) && window_alloc(w, size, align, va_out);
    pthread_mutex_unlock(&va_lock);
    if (ok) return HCQ_OK;
    char a[32];
    return base_err(HCQ_ENOMEM, "NV: no %s of free GPU virtual address space in the %s window%s",
                    base_fmt_bytes(a, sizeof a, size), low ? "low (below 2^40)" : "high",
                    w->size ? "" : " (the window could not be reserved)");
}

void nv_va_free(uint64_t va, uint64_t size)
{
    if (!size) return;
    pthread_mutex_lock(&va_lock);
    for (int i = 0; i < 2; i++) {
        va_window *w = &windows[i];
        if (w->size && va >= w->base && va + size <= w->base + w->size) window_free(w, va, size);
    }
    pthread_mutex_unlock(&va_lock);
}
