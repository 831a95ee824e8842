#include "drivers/cpu/cpu.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ** the allocation registry: sorted, non-overlapping [va, va + size) */

static size_t alloc_find(const cpu_dev *c, uint64_t va)
{
    /* first index whose va > the given va */
    size_t lo = 0, hi = c->nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->allocs[mid].va <= va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void cpu_alloc_add(cpu_dev *c, uint64_t va, uint64_t size)
{
    pthread_rwlock_wrlock(&c->alloc_lock);
    if (c->nallocs == c->acap) {
        size_t cap = c->acap ? c->acap * 2 : 64;
        cpu_alloc *a = realloc(c->allocs, cap * sizeof *a);
        if (!a) {
            /* without an entry the interpreter refuses accesses to this
             * memory: an error, never a silent wrong access */
            pthread_rwlock_unlock(&c->alloc_lock);
            return;
        }
        c->allocs = a;
        c->acap = cap;
    }
    size_t i = alloc_find(c, va);
    memmove(&c->allocs[i + 1], &c->allocs[i], (c->nallocs - i) * sizeof *c->allocs);
    c->allocs[i] = (cpu_alloc){va, size};
    c->nallocs++;
    pthread_rwlock_unlock(&c->alloc_lock);
}

void cpu_alloc_remove(cpu_dev *c, uint64_t va)
{
    pthread_rwlock_wrlock(&c->alloc_lock);
    size_t i = alloc_find(c, va);
    if (i > 0 && c->allocs[i - 1].va == va) {
        memmove(&c->allocs[i - 1], &c->allocs[i], (c->nallocs - i) * sizeof *c->allocs);
        c->nallocs--;
    }
    pthread_rwlock_unlock(&c->alloc_lock);
}

bool cpu_alloc_check(cpu_dev *c, uint64_t va, uint64_t size, char *why, size_t why_size)
{
    pthread_rwlock_rdlock(&c->alloc_lock);
    size_t i = alloc_find(c, va);
    bool ok = false;
    if (i > 0) {
        const cpu_alloc *a = &c->allocs[i - 1];
        if (va - a->va < a->size && size <= a->size - (va - a->va)) ok = true;
        else if (va - a->va < a->size)
            snprintf(why, why_size, "runs past the end of the %llu-byte allocation at 0x%llx",
                     (unsigned long long)a->size, (unsigned long long)a->va);
        else
            snprintf(why, why_size, "not inside any allocation (the nearest below ends at 0x%llx)",
                     (unsigned long long)(a->va + a->size));
    } else {
        snprintf(why, why_size, "not inside any allocation");
    }
    pthread_rwlock_unlock(&c->alloc_lock);
    return ok;
}

bool cpu_alloc_check_in(cpu_dev *c, uint64_t base, uint64_t va, uint64_t size, char *why, size_t why_size)
{
    pthread_rwlock_rdlock(&c->alloc_lock);
    size_t i = alloc_find(c, base);
    bool ok = false;
    if (i > 0 && base - c->allocs[i - 1].va < c->allocs[i - 1].size) {
        const cpu_alloc *a = &c->allocs[i - 1];
        ok = va >= a->va && va - a->va < a->size && size <= a->size - (va - a->va);
        if (!ok)
            snprintf(why, why_size, "address 0x%llx is outside the %llu-byte allocation at 0x%llx that holds the buffer",
                     (unsigned long long)va, (unsigned long long)a->size, (unsigned long long)a->va);
    } else {
        snprintf(why, why_size, "the buffer address 0x%llx is not inside any allocation", (unsigned long long)base);
    }
    pthread_rwlock_unlock(&c->alloc_lock);
    return ok;
}

/* ** memory */

static hcq_status cpu_mem_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out)
{
    if (size > dev->props.memory_bytes) {
        char a[32], b[32];
        return base_err(HCQ_ENOMEM, "%s: cannot allocate %s: the machine has %s of memory", dev->props.id,
                        base_fmt_bytes(a, sizeof a, size), base_fmt_bytes(b, sizeof b, dev->props.memory_bytes));
    }
    uint64_t rounded = base_align_up(size, 4096);
    int err = 0;
    void *p = sys_anon_map(rounded, &err);
    if (!p) {
        char a[32];
        return base_err(HCQ_ENOMEM, "%s: cannot allocate %s of host memory (mmap: %s)", dev->props.id,
                        base_fmt_bytes(a, sizeof a, size), strerror(err));
    }
    memset(out, 0, sizeof *out);
    out->va = (uint64_t)(uintptr_t)p;
    out->cpu = p;
    out->size = rounded;
    out->flags = flags;
    cpu_alloc_add(cpu_of(dev), out->va, rounded);
    return HCQ_OK;
}

static void cpu_mem_free(hcq_device *dev, drv_mem *m)
{
    if (!m->cpu) return;
    cpu_dev *c = cpu_of(dev);
    if (c->abandoned) {
        /* an engine still runs and may touch it: the reaper unmaps it */
        cpu_grave *g = calloc(1, sizeof *g);
        if (g) {
            g->cpu = m->cpu;
            g->size = m->size;
            g->next = c->graves;
            c->graves = g;
        } /* else it stays mapped: a leak, never a crash */
        m->cpu = NULL;
        return;
    }
    cpu_alloc_remove(c, m->va);
    sys_anon_unmap(m->cpu, m->size);
    m->cpu = NULL;
}

/* ** bring-up */

static uint32_t cpu_count(void) { return 1; }

static unsigned cpu_pool_threads_or(const cpu_dev *c) { return c->pool ? drv_pool_threads(c->pool) : 1; }

static void read_model(char *out, size_t size)
{
    char buf[8192];
    out[0] = 0;
    if (sys_read_file("/proc/cpuinfo", buf, sizeof buf) <= 0) return;
    char *m = strstr(buf, "model name");
    if (!m) return;
    m = strchr(m, ':');
    if (!m) return;
    m += 1 + strspn(m + 1, " \t");
    size_t n = strcspn(m, "\n");
    if (n >= size) n = size - 1;
    memcpy(out, m, n);
    out[n] = 0;
}

/* The size of the first core's last-level cache (the highest level
 * sysfs lists, cpu0/cache/indexN/{level,type,size} with size as "32768K"),
 * for the tensor layer's cache blocking; 0 where sysfs does not say
 * (some containers and VMs), and the plans assume a common size. */
static uint64_t read_cache_bytes(void)
{
    uint64_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (sys_read_file(path, level, sizeof level) <= 0) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (sys_read_file(path, type, sizeof type) <= 0 || !strncmp(type, "Instruction", 11)) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (sys_read_file(path, size, sizeof size) <= 0) continue;
        char *end;
        uint64_t v = strtoull(size, &end, 10);
        if (*end == 'K') v <<= 10;
        else if (*end == 'M') v <<= 20;
        else if (*end == 'G') v <<= 30;
        int lv = atoi(level);
        if (v && v <= (1ull << 34) && lv > best_level) {
            best = v;
            best_level = lv;
        }
    }
    return best;
}

/* MemAvailable (what the kernel could give without swapping) and the
 * first core's clock, for hcq info */
static void read_free_and_clock(uint64_t *free_bytes, uint32_t *mhz)
{
    char buf[8192];
    *free_bytes = 0;
    *mhz = 0;
    if (sys_read_file("/proc/meminfo", buf, sizeof buf) > 0) {
        char *m = strstr(buf, "MemAvailable:");
        if (m) *free_bytes = strtoull(m + 13, NULL, 10) * 1024ull;
    }
    if (sys_read_file("/proc/cpuinfo", buf, sizeof buf) > 0) {
        char *m = strstr(buf, "cpu MHz");
        if (m && (m = strchr(m, ':'))) *mhz = (uint32_t)strtod(m + 1, NULL);
    }
}

static uint64_t read_memtotal(void)
{
    char buf[4096];
    if (sys_read_file("/proc/meminfo", buf, sizeof buf) > 0) {
        char *m = strstr(buf, "MemTotal:");
        if (m) return strtoull(m + 9, NULL, 10) * 1024ull;
    }
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void cpu_free(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    cpu_engines_stop(dev);
    drv_pool_destroy(c->pool);
    while (c->graves) {
        cpu_grave *g = c->graves;
        c->graves = g->next;
        if (g->cpu) sys_anon_unmap(g->cpu, g->size);
        if (g->prog) cpu_prog_destroy(g->prog);
        free(g);
    }
    pthread_rwlock_destroy(&c->alloc_lock);
    free(c->allocs);
    free(c);
    dev->priv = NULL;
}

static atomic_uint abandoned_devices;

unsigned cpu_abandoned_devices(void) { return atomic_load(&abandoned_devices); }

/* An abandoned device's last act: once its engines are done, free what
 * they might have used, then the device record itself. */
static void *reaper(void *arg)
{
    hcq_device *dev = arg;
    cpu_dev *c = cpu_of(dev);
    for (int i = 0; i < 2; i++) {
        if (!c->eng[i].started) continue;
        pthread_join(c->eng[i].thread, NULL);
        c->eng[i].started = false;
    }
    char id[16];
    snprintf(id, sizeof id, "%s", dev->props.id);
    cpu_free(dev);
    drv_device_fini(dev);
    free(dev);
    BASE_LOG(1, "%s: the abandoned kernel finished; the closed device's memory is freed", id);
    atomic_fetch_sub(&abandoned_devices, 1);
    return NULL;
}

static bool cpu_halt(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    if (!c) return true;
    cpu_engines_halt(dev);
    return !c->abandoned;
}

static void cpu_close(hcq_device *dev)
{
    cpu_dev *c = cpu_of(dev);
    if (!c) return;
    if (c->abandoned) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&abandoned_devices, 1);
        int rc = pthread_create(&t, &a, reaper, dev);
        pthread_attr_destroy(&a);
        /* without a reaper the record and the buried memory stay: a leak,
         * never a crash under a running kernel */
        if (rc) BASE_LOG(1, "%s: cannot start the thread that frees the closed device (error %d)", dev->props.id, rc);
        return;
    }
    cpu_free(dev);
}

static hcq_status cpu_open(hcq_device *dev, uint32_t index)
{
    if (index != 0) return base_err(HCQ_ENODEV, "there is one CPU device, CPU:0; CPU:%u does not exist", index);
    cpu_dev *c = base_calloc(1, sizeof *c);
    if (!c) return HCQ_ENOMEM;
    dev->priv = c;
    pthread_rwlock_init(&c->alloc_lock, NULL);
    const base_env *env = base_env_get();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = env->cpu_threads > 0 ? (unsigned)env->cpu_threads : (unsigned)(cores > 0 ? cores : 1);
    c->pool = drv_pool_create(threads);
    if (!c->pool) {
        cpu_close(dev);
        return HCQ_ENOMEM;
    }
    c->interp_target = env->cpu_target && !strcmp(env->cpu_target, "ir");

    hcq_device_props *pr = &dev->props;
    char model[64];
    read_model(model, sizeof model);
    snprintf(pr->name, sizeof pr->name, "CPU (%s, %ld cores)", model[0] ? model : "unknown model", cores);
    strcpy(pr->kind, "CPU");
    strcpy(pr->id, "CPU");
    strcpy(pr->target, c->interp_target ? "ir" : "cpu");
#if defined(__x86_64__)
    strcpy(pr->arch, "x86_64");
#elif defined(__aarch64__)
    strcpy(pr->arch, "aarch64");
#else
    strcpy(pr->arch, "unknown");
#endif
    pr->index = 0;
    pr->compute_units = drv_pool_threads(c->pool);
    pr->memory_bytes = read_memtotal();
    read_free_and_clock(&pr->memory_free_bytes, &pr->clock_mhz);
    snprintf(pr->engines, sizeof pr->engines, "compute and copy engines on host threads, %u kernel workers, target %s",
             cpu_pool_threads_or(c), c->interp_target ? "ir (interpreted, bounds-checked)" : "cpu (C via clang)");
    pr->max_threads_per_group = 1024;
    pr->max_block[0] = 1024;
    pr->max_block[1] = 1024;
    pr->max_block[2] = 64;
    pr->max_grid[0] = 0x7fffffffu;
    pr->max_grid[1] = 65535;
    pr->max_grid[2] = 65535;
    pr->max_local_bytes = 64 * 1024;
    pr->cache_bytes = read_cache_bytes();
    dev->ts_mul = dev->ts_div = 1; /* timestamps are CLOCK_MONOTONIC ns */
    dev->stream_format[0] = dev->stream_format[1] = "cpu";

    /* a compiled kernel's bad access becomes this device's fault, not the
     * program's SIGSEGV (cpu_fault.c) */
    hcq_status s = cpu_fault_install();
    if (!s) s = cpu_engines_start(dev);
    if (s) {
        cpu_close(dev);
        return s;
    }
    return HCQ_OK;
}

static void cpu_signal_written(hcq_device *dev, uint64_t va)
{
    (void)va;
    drv_progress_notify(dev);
}

const drv_backend drv_cpu_backend = {
    .kind = "CPU",
    .count = cpu_count,
    .open = cpu_open,
    .close = cpu_close,
    .halt = cpu_halt,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .program_load = cpu_program_load,
    .program_free = cpu_program_free,
    .rec_wait = cpu_rec_wait,
    .rec_signal = cpu_rec_signal,
    .rec_timestamp = cpu_rec_timestamp,
    .rec_barrier = cpu_rec_barrier,
    .rec_exec = cpu_rec_exec,
    .rec_copy = cpu_rec_copy,
    .copy_max_bytes = UINT64_MAX,
    .submit = cpu_submit,
    .notifies_progress = true,
    .signal_written = cpu_signal_written,
    .describe = cpu_describe,
};
