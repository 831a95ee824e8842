/* The memory checker's process-wide state (HCQ_MOCK_CHECK=memcheck):
 * the allocations hcq's allocator handed out, with the size each was asked
 * for, and the reports of bad accesses.
 *
 * Why here: the executors that see every access are the mock GPUs' shader
 * cores (drivers/mock), which model hardware and kernel drivers; neither
 * knows how many bytes a program asked for, only the page-rounded mappings.
 * compute-sanitizer learns the sizes by intercepting the runtime's
 * allocations; hcq's runtime (mem/) tells this registry instead, and only
 * while memcheck is on, so the driver interface stays what the real
 * drivers take. Reports are kept here too so that the fault a wait returns
 * can carry them (drivers/device.c drv_set_fault).
 *
 * The registry is a sorted array of spans (each a mapping the allocator
 * got: the requested bytes, the page rounding and memcheck's padding).
 * Lookups take a read lock; the executors cache what a lookup allowed per
 * instruction, so in-bounds kernels rarely come here. */
#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct mc_entry {
    uint64_t va, span, size;
    bool live;
} mc_entry;

static mc_entry *entries;
static size_t nentries, cap;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic bool used; /* something was ever noted: frees must look */

/* index of the first entry whose span ends after va */
static size_t find(uint64_t va)
{
    size_t lo = 0, hi = nentries;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (entries[mid].va + entries[mid].span <= va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* removes entries overlapping [va, va + span); write lock held */
static void drop(uint64_t va, uint64_t span)
{
    size_t i = find(va), j = i;
    while (j < nentries && entries[j].va < va + span) j++;
    if (j == i) return;
    memmove(&entries[i], &entries[j], (nentries - j) * sizeof *entries);
    nentries -= j - i;
}

void base_memcheck_note(uint64_t va, uint64_t span, uint64_t size)
{
    if (!span) return;
    pthread_rwlock_wrlock(&lock);
    atomic_store(&used, true);
    drop(va, span); /* a reused cache entry, or a stale one whose memory another allocation now holds */
    if (nentries == cap) {
        size_t ncap = cap ? cap * 2 : 256;
        mc_entry *n = realloc(entries, ncap * sizeof *n);
        if (!n) { /* the allocation goes unchecked (no false report), said once */
            pthread_rwlock_unlock(&lock);
            BASE_LOG(1, "memcheck: out of host memory; an allocation at 0x%llx goes unchecked",
                     (unsigned long long)va);
            return;
        }
        entries = n;
        cap = ncap;
    }
    size_t i = find(va);
    memmove(&entries[i + 1], &entries[i], (nentries - i) * sizeof *entries);
    entries[i] = (mc_entry){va, span, size, true};
    nentries++;
    pthread_rwlock_unlock(&lock);
}

static void set(uint64_t va, bool gone)
{
    if (!atomic_load(&used)) return;
    pthread_rwlock_wrlock(&lock);
    size_t i = find(va);
    if (i < nentries && entries[i].va == va) {
        if (gone) drop(va, entries[i].span);
        else entries[i].live = false;
    }
    pthread_rwlock_unlock(&lock);
}

void base_memcheck_freed(uint64_t va) { set(va, false); }
void base_memcheck_gone(uint64_t va) { set(va, true); }

bool base_memcheck_find(uint64_t va, base_memcheck_alloc *out, uint64_t *lo, uint64_t *hi)
{
    *lo = 0, *hi = UINT64_MAX;
    if (!atomic_load(&used)) return false;
    pthread_rwlock_rdlock(&lock);
    size_t i = find(va);
    bool found = i < nentries && entries[i].va <= va;
    if (found) {
        *out = (base_memcheck_alloc){entries[i].va, entries[i].size, entries[i].span, entries[i].live};
    } else {
        if (i > 0) *lo = entries[i - 1].va + entries[i - 1].span;
        if (i < nentries) *hi = entries[i].va;
    }
    pthread_rwlock_unlock(&lock);
    return found;
}

bool base_memcheck_allows(uint64_t va, uint64_t n, base_memcheck_alloc *a, uint64_t *lo, uint64_t *hi)
{
    if (!base_memcheck_find(va, a, lo, hi)) {
        /* memory no allocation of hcq's covers (the driver's own, a
         * program's own through the preloaded mock): the mappings decide */
        a->span = 0;
        return va + n <= *hi;
    }
    if (!a->live || va + n > a->va + a->size) return false;
    *lo = a->va, *hi = a->va + a->size;
    return true;
}

void base_memcheck_explain(uint64_t va, uint64_t n, const base_memcheck_alloc *a, char *buf, size_t size)
{
    if (!a->span) {
        snprintf(buf, size, "the access runs from memory no allocation covers into an allocation");
    } else if (!a->live) {
        snprintf(buf, size, "inside a %llu-byte allocation at 0x%llx that was freed", (unsigned long long)a->size,
                 (unsigned long long)a->va);
    } else if (va >= a->va + a->size) {
        snprintf(buf, size, "%llu bytes past the end of the %llu-byte allocation at 0x%llx",
                 (unsigned long long)(va - a->va - a->size), (unsigned long long)a->size, (unsigned long long)a->va);
    } else {
        snprintf(buf, size, "the last %llu of its bytes lie past the end of the %llu-byte allocation at 0x%llx",
                 (unsigned long long)(va + n - a->va - a->size), (unsigned long long)a->size,
                 (unsigned long long)a->va);
    }
}

bool base_memcheck_access(uint64_t va, uint64_t n, bool write, uint64_t *lo, uint64_t *hi, char *why, size_t why_size)
{
    base_memcheck_alloc a;
    if (base_memcheck_allows(va, n, &a, lo, hi)) return true;
    char rel[200];
    base_memcheck_explain(va, n, &a, rel, sizeof rel);
    snprintf(why, why_size, "memcheck: invalid global %s of %llu bytes at 0x%llx (%s)", write ? "write" : "read",
             (unsigned long long)n, (unsigned long long)va, rel);
    return false;
}

/* ** reports */
#define PRINT_LIMIT 100 /* printed to stderr, as compute-sanitizer's --print-limit default */
#define KEPT 4          /* carried by the next fault's message */

static pthread_mutex_t rlock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t printed, pending;
static char kept[KEPT][800];

void base_memcheck_report(const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&rlock);
    bool print = printed < PRINT_LIMIT;
    if (print) printed++;
    if (pending < KEPT) snprintf(kept[pending], sizeof kept[pending], "%s", msg);
    pending++;
    pthread_mutex_unlock(&rlock);
    if (print) fprintf(stderr, "hcq memcheck: %s\n", msg);
    if (print && printed == PRINT_LIMIT)
        fprintf(stderr, "hcq memcheck: %d reports printed; later ones are counted, not printed\n", PRINT_LIMIT);
}

size_t base_memcheck_take(const char *said, char *buf, size_t size)
{
    pthread_mutex_lock(&rlock);
    uint64_t n = pending;
    pending = 0;
    size_t off = 0;
    /* one report the fault's own message holds already (an executor that
     * stops at the first bad access says it there): nothing to add */
    if (n == 1 && said && strstr(said, kept[0])) n = 0;
    if (n && size) {
        int k = snprintf(buf, size, "memcheck found %llu bad access%s", (unsigned long long)n, n == 1 ? "" : "es");
        off = k > 0 ? BASE_MIN((size_t)k, size - 1) : 0;
        for (uint64_t i = 0; i < n && i < KEPT && off + 1 < size; i++) {
            k = snprintf(buf + off, size - off, "%s %s", i ? ";" : ":", kept[i]);
            off = k > 0 ? BASE_MIN(off + (size_t)k, size - 1) : off;
        }
        if (n > KEPT && off + 1 < size) {
            k = snprintf(buf + off, size - off, "; and %llu more", (unsigned long long)(n - KEPT));
            off = k > 0 ? BASE_MIN(off + (size_t)k, size - 1) : off;
        }
    }
    pthread_mutex_unlock(&rlock);
    return off;
}
