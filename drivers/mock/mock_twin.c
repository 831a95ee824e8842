/* The mock GPUs' shader core for machine code: what a launch's program
 * address holds is looked up among the GPU binaries the process loaded
 * (compiler/twin.h, by content: the bytes there must be the kernel's code,
 * as uploaded), and the binary's host twin runs in its place, on the GPU's
 * worker pool, with every global access checked against the GPU's
 * mappings (the range a check allows is cached per parameter). The vendor
 * mocks read the kernel's arguments where the machine code would (constant
 * bank 0, the kernarg segment) and check the launch against the binary
 * before calling here. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ** which twin a program address holds: cached per GPU by address and
 * checked against the bytes there at every launch (the address may now
 * hold other code) */
#define SLOTS 64
typedef struct slot {
    const mock_gpu *gpu;
    uint64_t va;
    const cc_twin_entry *e;
} slot;
static slot slots[SLOTS];
static unsigned slot_next;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static bool readable(void *ctx, uint64_t va, size_t size)
{
    char why[256];
    return mock_gpu_access(ctx, va, size, false, why, sizeof why);
}

const cc_twin_entry *mock_twin_at(mock_gpu *gpu, uint64_t va) { return mock_twin_at_if(gpu, va, NULL, NULL); }

const cc_twin_entry *mock_twin_at_if(mock_gpu *gpu, uint64_t va, cc_twin_accept_fn accept, void *actx)
{
    const cc_twin_entry *e = NULL;
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS && !e; i++)
        if (slots[i].e && slots[i].gpu == gpu && slots[i].va == va) e = slots[i].e;
    pthread_mutex_unlock(&slot_lock);
    if (e && readable(gpu, va, e->code_size) && cc_twin_matches(e, va) && (!accept || accept(e, actx))) return e;
    if (!(e = cc_twin_find_if(va, readable, gpu, accept, actx))) return NULL;
    pthread_mutex_lock(&slot_lock);
    slots[slot_next++ % SLOTS] = (slot){gpu, va, e};
    pthread_mutex_unlock(&slot_lock);
    return e;
}

void mock_twin_atfork_child(void) { pthread_mutex_init(&slot_lock, NULL); }

void mock_twin_forget_gpu(const mock_gpu *gpu)
{
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS; i++)
        if (slots[i].gpu == gpu) slots[i] = (slot){0};
    pthread_mutex_unlock(&slot_lock);
}

/* ** running */
typedef struct run_ctx {
    mock_gpu *gpu;
    const mock_twin_launch *ml;
    cc_twin_launch tl;
    uint64_t groups;
    atomic_bool stop;
    pthread_mutex_t lock;
    cc_twin_fault fault; /* the first */
    bool faulted;
    hcq_status err;
} run_ctx;

static bool check(void *ctx, uint64_t addr, uint32_t size, uint32_t param, bool write, int64_t index, uint64_t *lo,
                  uint64_t *hi, bool *writable, char *why, size_t why_size)
{
    run_ctx *x = ctx;
    (void)param, (void)index;
    if (!mock_gpu_range(x->gpu, addr, size, write, lo, hi, writable, why, why_size)) return false;
    if (!base_env_get()->mock_memcheck) return true;
    /* memcheck: the bytes allocated, not the mapping; the parameter's
     * cached range shrinks to the allocation */
    uint64_t mlo, mhi;
    if (!base_memcheck_access(addr, size, write, &mlo, &mhi, why, why_size)) return false;
    *lo = BASE_MAX(*lo, mlo), *hi = BASE_MIN(*hi, mhi);
    return true;
}

static hcq_status run_groups(void *ctx, uint64_t begin, uint64_t end)
{
    run_ctx *x = ctx;
    cc_twin_fault f;
    hcq_status s = cc_twin_run_groups(&x->tl, begin, end, &x->stop, &f);
    if (s) {
        pthread_mutex_lock(&x->lock);
        if (s == HCQ_EFAULT && !x->faulted) {
            x->faulted = true;
            x->fault = f;
        } else if (s != HCQ_EFAULT && !x->err) {
            x->err = s;
        }
        pthread_mutex_unlock(&x->lock);
    }
    return s;
}

/* a split launch: task r runs this part's groups of round r */
static hcq_status run_rounds(void *ctx, uint64_t begin, uint64_t end)
{
    run_ctx *x = ctx;
    const mock_split *sp = x->ml->split;
    uint64_t stride = (uint64_t)sp->chunk * sp->nparts;
    for (uint64_t r = begin; r < end; r++) {
        uint64_t gb = r * stride + (uint64_t)sp->part * sp->chunk;
        if (gb >= x->groups) continue;
        hcq_status s = run_groups(ctx, gb, BASE_MIN(gb + sp->chunk, x->groups));
        if (s) return s;
    }
    return HCQ_OK;
}

hcq_status mock_twin_run(mock_gpu *gpu, const mock_twin_launch *ml, mock_fault *fault, cc_twin_fault *tf)
{
    memset(fault, 0, sizeof *fault);
    memset(tf, 0, sizeof *tf);
    const cc_twin_entry *e = ml->e;
    uint64_t groups = (uint64_t)ml->grid[0] * ml->grid[1] * ml->grid[2];
    uint64_t items = (uint64_t)ml->block[0] * ml->block[1] * ml->block[2];
    if (!groups || !items) return HCQ_OK;
    run_ctx x = {.gpu = gpu, .ml = ml, .groups = groups};
    x.tl = (cc_twin_launch){.m = &e->mod, .args = ml->args, .implicit = ml->implicit, .barriers = ml->barriers,
                            .check = check, .ctx = &x,
                            /* read by the pool's workers too: the engine's own */
                            .cancel = mock_engine_cancel_flag()};
    memcpy(x.tl.num_groups, ml->grid, sizeof x.tl.num_groups);
    memcpy(x.tl.local_size, ml->block, sizeof x.tl.local_size);
    pthread_mutex_init(&x.lock, NULL);
    const mock_split *sp = ml->split && ml->split->nparts > 1 && ml->split->chunk ? ml->split : NULL;
    mock_twin_launch local = *ml;
    local.split = sp;
    x.ml = &local;

    mock_kernels_begin();
    pthread_mutex_lock(&gpu->pool_lock); /* one launch at a time per GPU's pool */
    if (!gpu->pool) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        gpu->pool = drv_pool_create(n > 0 ? (unsigned)n : 1);
    }
    unsigned threads = gpu->pool ? drv_pool_threads(gpu->pool) : 1;
    hcq_status s;
    if (sp) {
        uint64_t stride = (uint64_t)sp->chunk * sp->nparts, rounds = (groups + stride - 1) / stride;
        uint64_t chunk = rounds * items < 4096 || !gpu->pool ? rounds : BASE_MAX(1, rounds / (4 * threads));
        s = gpu->pool ? drv_pool_run(gpu->pool, rounds, chunk, run_rounds, &x) : run_rounds(&x, 0, rounds);
    } else {
        uint64_t chunk = groups * items < 4096 || !gpu->pool ? groups : BASE_MAX(1, groups / (4 * threads));
        s = gpu->pool ? drv_pool_run(gpu->pool, groups, chunk, run_groups, &x) : run_groups(&x, 0, groups);
    }
    pthread_mutex_unlock(&gpu->pool_lock);
    mock_kernels_end();

    if (x.faulted) {
        *tf = x.fault;
        s = HCQ_EFAULT;
        cc_twin_fault_describe(&x.fault, e->mod.name, fault->what, sizeof fault->what);
        fault->va = x.fault.kind == CC_TWIN_FAULT_GLOBAL ? x.fault.addr : 0;
        fault->write = x.fault.write;
        /* the twin stops at the first bad access: its one report */
        if (!strncmp(x.fault.why, "memcheck:", 9)) base_memcheck_report("%s", fault->what);
    } else if (s) {
        s = x.err ? x.err : s;
        base_err(s, "%s: the host twin of `%s`: %s", gpu->name, e->mod.name, hcq_error_message());
    }
    pthread_mutex_destroy(&x.lock);
    return s;
}
