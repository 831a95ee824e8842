/* The mock GPUs' shader core: the IR interpreter running the serialized
 * kernel found at a program's code address, with every access checked
 * against the GPU's mappings. Mock binaries (a cubin or code object shaped
 * ELF) carry serialized IR where the machine code would be, so the real
 * loaders upload it and the real launch path hands its address over. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ** decoded kernels, cached per GPU by code address and checked against
 * the bytes there (an address may be reused for other code) */
#define CACHE_SLOTS 64

typedef struct code_entry {
    const mock_gpu *gpu;
    uint64_t va;
    void *bytes;
    size_t size;
    hcq_kernel *k;
    uint32_t kernarg_bytes;
} code_entry;

static code_entry cache[CACHE_SLOTS];
static unsigned cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void mock_shader_atfork_child(void) { pthread_mutex_init(&cache_lock, NULL); }

/* Returns a clone the caller owns (the cache may drop its copy meanwhile). */
static hcq_status code_at(mock_gpu *gpu, uint64_t va, hcq_kernel **out, uint32_t *kernarg_bytes, mock_fault *f)
{
    char why[256];
    if (!mock_gpu_access(gpu, va, IR_BLOB_HEADER, false, why, sizeof why)) {
        f->va = va;
        f->write = false;
        f->mmu = true;
        snprintf(f->what, sizeof f->what, "fetching kernel code at 0x%llx: %s", (unsigned long long)va, why);
        return HCQ_EFAULT;
    }
    size_t size;
    hcq_status s = ir_blob_size((const void *)(uintptr_t)va, &size);
    if (s) return base_err_prefix(HCQ_EFORMAT, "%s: the code at 0x%llx is not a mock kernel", gpu->name,
                                  (unsigned long long)va);
    if (!mock_gpu_access(gpu, va, size, false, why, sizeof why)) {
        f->va = va;
        f->write = false;
        f->mmu = true;
        snprintf(f->what, sizeof f->what, "fetching %zu bytes of kernel code at 0x%llx: %s", size,
                 (unsigned long long)va, why);
        return HCQ_EFAULT;
    }
    const void *bytes = (const void *)(uintptr_t)va;
    pthread_mutex_lock(&cache_lock);
    for (unsigned i = 0; i < CACHE_SLOTS; i++) {
        code_entry *c = &cache[i];
        if (c->k && c->gpu == gpu && c->va == va && c->size == size && !memcmp(c->bytes, bytes, size)) {
            *out = hcq_kernel_clone(c->k);
            *kernarg_bytes = c->kernarg_bytes;
            pthread_mutex_unlock(&cache_lock);
            return *out ? HCQ_OK : HCQ_ENOMEM;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    hcq_kernel *k = NULL;
    if ((s = ir_deserialize(bytes, size, true, &k)))
        return base_err_prefix(s, "%s: the kernel code at 0x%llx", gpu->name, (unsigned long long)va);
    uint32_t n = hcq_kernel_param_count(k);
    hcq_param_info *info = calloc(n ? n : 1, sizeof *info);
    uint32_t kb = info ? hcq_kernel_param_layout(k, info) : 0;
    free(info);
    code_entry e = {gpu, va, malloc(size), size, hcq_kernel_clone(k), kb};
    if (e.bytes && e.k) {
        memcpy(e.bytes, bytes, size);
        pthread_mutex_lock(&cache_lock);
        code_entry *c = &cache[cache_next++ % CACHE_SLOTS];
        free(c->bytes);
        hcq_kernel_destroy(c->k);
        *c = e;
        pthread_mutex_unlock(&cache_lock);
    } else {
        free(e.bytes);
        hcq_kernel_destroy(e.k);
    }
    *out = k;
    *kernarg_bytes = kb;
    return HCQ_OK;
}

/* ** running */
typedef struct run_ctx {
    mock_gpu *gpu;
    const mock_split *split;
    uint64_t groups;
    hcq_kernel *k;
    hcq_interp_launch il;
    hcq_interp_mem mem;
    pthread_mutex_t lock;
    hcq_status err;
    mock_fault fault;
} run_ctx;

/* the access this thread's interpreter was last refused: the interpreter
 * asks about a group's whole span first and then lane by lane, stopping at
 * the first refused lane, so the last refusal is the faulting lane's */
static _Thread_local struct {
    uint64_t va;
    bool write, set;
} refused;

static bool check(void *ctx, const hcq_interp_access *a, char *why, size_t why_size)
{
    run_ctx *x = ctx;
    uint64_t lo, hi;
    if (mock_gpu_access(x->gpu, a->addr, a->size, a->write, why, why_size) &&
        (!base_env_get()->mock_memcheck || base_memcheck_access(a->addr, a->size, a->write, &lo, &hi, why, why_size)))
        return true;
    refused.va = a->addr;
    refused.write = a->write;
    refused.set = true;
    return false;
}

static hcq_status run_groups(void *ctx, uint64_t begin, uint64_t end)
{
    run_ctx *x = ctx;
    hcq_interp_launch il = x->il;
    il.group_begin = begin;
    il.group_end = end;
    refused.va = 0;
    refused.set = false;
    hcq_status s = hcq_interp_run(x->k, &il);
    if (s) {
        pthread_mutex_lock(&x->lock);
        if (!x->err) {
            x->err = s;
            snprintf(x->fault.what, sizeof x->fault.what, "%s", hcq_error_message());
            if (s == HCQ_EFAULT) x->fault.va = refused.va, x->fault.write = refused.write, x->fault.mmu = refused.set;
        }
        pthread_mutex_unlock(&x->lock);
    }
    return s;
}

/* a split launch: task r runs this part's groups of round r */
static hcq_status run_rounds(void *ctx, uint64_t begin, uint64_t end)
{
    run_ctx *x = ctx;
    const mock_split *sp = x->split;
    uint64_t stride = (uint64_t)sp->chunk * sp->nparts;
    for (uint64_t r = begin; r < end; r++) {
        uint64_t gb = r * stride + (uint64_t)sp->part * sp->chunk;
        if (gb >= x->groups) continue;
        hcq_status s = run_groups(ctx, gb, BASE_MIN(gb + sp->chunk, x->groups));
        if (s) return s;
    }
    return HCQ_OK;
}

hcq_status mock_shader_run(mock_gpu *gpu, uint64_t code_va, uint64_t kernarg_va, const uint32_t grid[3],
                           const uint32_t block[3], mock_fault *fault)
{
    return mock_shader_run_split(gpu, code_va, kernarg_va, grid, block, NULL, fault);
}

hcq_status mock_shader_run_split(mock_gpu *gpu, uint64_t code_va, uint64_t kernarg_va, const uint32_t grid[3],
                                 const uint32_t block[3], const mock_split *split, mock_fault *fault)
{
    memset(fault, 0, sizeof *fault);
    run_ctx x = {.gpu = gpu, .split = split && split->nparts > 1 && split->chunk ? split : NULL};
    uint32_t kb = 0;
    hcq_status s = code_at(gpu, code_va, &x.k, &kb, fault);
    if (s) return s;
    char why[256];
    if (kb && !mock_gpu_access(gpu, kernarg_va, kb, false, why, sizeof why)) {
        fault->va = kernarg_va;
        fault->mmu = true;
        snprintf(fault->what, sizeof fault->what, "kernel `%s` reading its %u kernarg bytes at 0x%llx: %s",
                 hcq_kernel_name(x.k), kb, (unsigned long long)kernarg_va, why);
        hcq_kernel_destroy(x.k);
        return HCQ_EFAULT;
    }
    uint64_t groups = (uint64_t)grid[0] * grid[1] * grid[2];
    uint64_t items = (uint64_t)block[0] * block[1] * block[2];
    if (!groups || !items) {
        hcq_kernel_destroy(x.k);
        return HCQ_OK;
    }
    /* the kernargs as the launch starts (checked just above): the
     * interpreter reads them directly, so a range unmapped while the launch
     * runs (a faulted device torn down) must not be read again */
    void *args = malloc(kb ? kb : 1);
    if (!args) {
        hcq_kernel_destroy(x.k);
        return base_err(HCQ_ENOMEM, "%s: no host memory for %u kernarg bytes", gpu->name, kb);
    }
    if (kb) memcpy(args, (const void *)(uintptr_t)kernarg_va, kb);
    pthread_mutex_init(&x.lock, NULL);
    x.mem.check = check;
    x.mem.ctx = &x;
    x.il.kernargs = args;
    x.il.kernarg_size = kb;
    for (int i = 0; i < 3; i++) {
        x.il.num_groups[i] = grid[i];
        x.il.local_size[i] = block[i];
    }
    x.il.mem = &x.mem;
    x.il.cancel = mock_engine_cancel_flag(); /* pool workers read the engine's */

    pthread_mutex_lock(&gpu->pool_lock); /* one launch at a time per GPU's pool */
    if (!gpu->pool) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        gpu->pool = drv_pool_create(n > 0 ? (unsigned)n : 1);
    }
    x.groups = groups;
    if (x.split) {
        uint64_t stride = (uint64_t)x.split->chunk * x.split->nparts, rounds = (groups + stride - 1) / stride;
        uint64_t chunk = rounds * items < 4096 || !gpu->pool ? rounds : BASE_MAX(1, rounds / 8);
        if (gpu->pool) s = drv_pool_run(gpu->pool, rounds, chunk, run_rounds, &x);
        else s = run_rounds(&x, 0, rounds);
    } else {
        uint64_t chunk = groups * items < 4096 || !gpu->pool ? groups : BASE_MAX(1, groups / 8);
        if (gpu->pool) s = drv_pool_run(gpu->pool, groups, chunk, run_groups, &x);
        else s = run_groups(&x, 0, groups);
    }
    pthread_mutex_unlock(&gpu->pool_lock);

    if (s) {
        s = x.err ? x.err : s;
        *fault = x.fault;
        if (s != HCQ_EFAULT) base_err(s, "%s: %s", gpu->name, x.fault.what);
        /* the interpreter stops at the first bad access: its one report */
        else if (strstr(x.fault.what, "memcheck: invalid global")) base_memcheck_report("%s", x.fault.what);
    }
    pthread_mutex_destroy(&x.lock);
    hcq_kernel_destroy(x.k);
    free(args);
    return s;
}
