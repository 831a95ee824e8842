#include "drivers/cpu/cpu.h"

#include "base/base.h"
#include "compiler/cc.h"
#include "compiler/cpu_abi.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Programs of the CPU device: a "cpu" shared object (our C renderer's ABI,
 * compiler/cpu_abi.h) loaded with dlopen from an anonymous file, or an "ir"
 * binary run by the interpreter with every access checked against the
 * device's allocations. */

static hcq_status load_so(hcq_device *dev, const void *bin, size_t size, cpu_prog *cp, hcq_program *p)
{
    hcq_status s = cc_cpu_module_load(bin, size, &cp->mod);
    if (s) return base_err_prefix(s, "%s", dev->props.id);
    cp->entry = cp->mod.entry;
    snprintf(cp->name, sizeof cp->name, "%s", cp->mod.name);
    uint32_t nparams = cp->mod.nparams;
    if (nparams > 4096) return base_err(HCQ_EFORMAT, "%s: cpu kernel claims %u params", dev->props.id, nparams);
    p->info.nparams = nparams;
    p->info.kernarg_bytes = cp->mod.kernarg_size;
    p->info.local_bytes = cp->mod.local_bytes;
    p->params = base_calloc(nparams ? nparams : 1, sizeof *p->params);
    if (!p->params) return HCQ_ENOMEM;
    const uint32_t *meta = cp->mod.meta + HCQ_CPU_META_PARAMS;
    for (uint32_t i = 0; i < nparams; i++) {
        uint32_t off = meta[2 * i], w = meta[2 * i + 1];
        hcq_param_info *pi = &p->params[i];
        pi->offset = off;
        pi->size = w & 0xffff;
        pi->is_buffer = (w >> 16) & 1;
        pi->dtype = (uint8_t)(w >> 24);
        if ((pi->size != 1 && pi->size != 2 && pi->size != 4 && pi->size != 8) ||
            off + pi->size > p->info.kernarg_bytes)
            return base_err(HCQ_EFORMAT, "%s: cpu kernel `%s` param %u has offset %u size %u outside its "
                            "%u kernarg bytes", dev->props.id, cp->name, i, off, pi->size, p->info.kernarg_bytes);
    }
    snprintf(p->info.target, sizeof p->info.target, "cpu");
    p->info.code_bytes = (uint32_t)BASE_MIN(size, UINT32_MAX);
    return HCQ_OK;
}

static hcq_status load_ir(hcq_device *dev, const void *bin, size_t size, cpu_prog *cp, hcq_program *p)
{
    hcq_status s = cc_ir_binary_load(bin, size, &cp->ir);
    if (s)
        return base_err_prefix(s, "%s: cannot load the program (the CPU device runs targets \"cpu\" and \"ir\")",
                               dev->props.id);
    snprintf(cp->name, sizeof cp->name, "%s", hcq_kernel_name(cp->ir));
    uint32_t n = hcq_kernel_param_count(cp->ir);
    p->params = base_calloc(n ? n : 1, sizeof *p->params);
    if (!p->params) return HCQ_ENOMEM;
    p->info.nparams = n;
    p->info.kernarg_bytes = hcq_kernel_param_layout(cp->ir, p->params);
    cp->kernarg_bytes = p->info.kernarg_bytes;
    cp->params = p->params;
    cp->nparams = n;
    p->info.local_bytes = hcq_kernel_local_bytes(cp->ir);
    snprintf(p->info.target, sizeof p->info.target, "ir");
    p->info.code_bytes = (uint32_t)BASE_MIN(size, UINT32_MAX);
    return HCQ_OK;
}

static bool is_host_so(const uint8_t *b, size_t size)
{
    if (size < 64 || memcmp(b, "\x7f" "ELF", 4) || b[4] != 2 /* 64-bit */) return false;
    uint16_t type, machine;
    memcpy(&type, b + 16, 2);
    memcpy(&machine, b + 18, 2);
    return type == 3 /* ET_DYN */ && machine == 62 /* EM_X86_64 */;
}

hcq_status cpu_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p)
{
    cpu_prog *cp = base_calloc(1, sizeof *cp);
    if (!cp) return HCQ_ENOMEM;
    cp->magic = CPU_PROG_MAGIC;
    p->priv = cp;
    p->launch_addr = (uint64_t)(uintptr_t)cp; /* the exec packet's program word */
    hcq_status s = is_host_so(bin, size) ? load_so(dev, bin, size, cp, p) : load_ir(dev, bin, size, cp, p);
    if (s) {
        cpu_program_free(dev, p);
        return s;
    }
    if (kernel && strcmp(kernel, cp->name)) {
        /* a host shared object or an IR binary carries one kernel */
        s = base_err(HCQ_EINVAL, "%s: the binary has no kernel `%s`; it holds `%s`", dev->props.id, kernel, cp->name);
        cpu_program_free(dev, p);
        return s;
    }
    snprintf(p->info.name, sizeof p->info.name, "%s", cp->name);
    p->info.max_threads = dev->props.max_threads_per_group;
    if (p->info.local_bytes > dev->props.max_local_bytes) {
        s = base_err(HCQ_ELIMIT, "%s: kernel `%s` needs %u bytes of local memory; the device has %u per group",
                     dev->props.id, cp->name, p->info.local_bytes, dev->props.max_local_bytes);
        cpu_program_free(dev, p);
        return s;
    }
    return HCQ_OK;
}

void cpu_prog_destroy(cpu_prog *cp)
{
    cc_cpu_module_unload(&cp->mod);
    hcq_kernel_destroy(cp->ir);
    if (cp->owns_params) free((void *)cp->params);
    cp->magic = 0;
    free(cp);
}

void cpu_program_free(hcq_device *dev, hcq_program *p)
{
    cpu_prog *cp = p->priv;
    if (!cp) return;
    cpu_dev *c = cpu_of(dev);
    cpu_grave *g = c && c->abandoned ? calloc(1, sizeof *g) : NULL;
    if (g) {
        /* an abandoned engine may still run it: the reaper unloads it.
         * (Its params, copied into cp for the interpreter, go with it.) */
        if (cp->params) {
            hcq_param_info *copy = malloc((cp->nparams ? cp->nparams : 1) * sizeof *copy);
            if (copy) memcpy(copy, cp->params, cp->nparams * sizeof *copy);
            cp->params = copy;
            cp->owns_params = copy != NULL;
        }
        g->prog = cp;
        g->next = c->graves;
        c->graves = g;
    } else if (!c || !c->abandoned) {
        cpu_prog_destroy(cp);
    } /* else: no memory to bury it; it stays loaded (a leak, never a crash) */
    free(p->params);
    p->params = NULL;
    p->priv = NULL;
}

/* ** execution (on the compute engine thread and the pool) */

typedef struct exec_ctx {
    hcq_device *dev;
    cpu_prog *cp;
    const uint8_t *kernargs;
    hcq_cpu_dims dims;
    hcq_interp_launch il;
    hcq_interp_mem mem;
    uint64_t first; /* groups [0, first) already ran on the engine thread */
    pthread_mutex_t lock;
    char msg[1536];
} exec_ctx;

static bool mem_check(void *ctx, const hcq_interp_access *a, char *why, size_t why_size)
{
    exec_ctx *x = ctx;
    cpu_dev *c = cpu_of(x->dev);
    bool ok;
    if (a->param < x->cp->nparams && x->cp->params[a->param].size == 8) {
        uint64_t base;
        memcpy(&base, x->kernargs + x->cp->params[a->param].offset, 8);
        ok = cpu_alloc_check_in(c, base, a->addr, a->size, why, why_size);
    } else {
        ok = cpu_alloc_check(c, a->addr, a->size, why, why_size);
    }
    /* HCQ_MOCK_CHECK=memcheck: the interpreter (CPU+ir) checks the bytes
     * allocated too, not only the page-rounded allocation */
    uint64_t lo, hi;
    if (ok && base_env_get()->mock_memcheck)
        ok = base_memcheck_access(a->addr, a->size, a->write, &lo, &hi, why, why_size);
    return ok;
}

/* Where the faulting instruction is: in the kernel's own code, or in a
 * library it called (libm, memcpy) */
static void describe_pc(const cpu_prog *cp, uint64_t pc, char *buf, size_t size)
{
    Dl_info at, kernel;
    if (!pc) {
        buf[0] = 0;
        return;
    }
    if (!dladdr((void *)(uintptr_t)pc, &at) || !at.dli_fbase) {
        snprintf(buf, size, "; the instruction at 0x%llx is in no loaded object", (unsigned long long)pc);
        return;
    }
    bool own = dladdr((void *)(uintptr_t)cp->entry, &kernel) && kernel.dli_fbase == at.dli_fbase;
    const char *file = at.dli_fname ? strrchr(at.dli_fname, '/') : NULL;
    file = file ? file + 1 : at.dli_fname ? at.dli_fname : "?";
    if (at.dli_sname && at.dli_saddr)
        snprintf(buf, size, "; the instruction is at %s+0x%llx in %s", at.dli_sname,
                 (unsigned long long)(pc - (uint64_t)(uintptr_t)at.dli_saddr), own ? "the kernel's code" : file);
    else
        snprintf(buf, size, "; the instruction is at offset 0x%llx in %s",
                 (unsigned long long)(pc - (uint64_t)(uintptr_t)at.dli_fbase), own ? "the kernel's code" : file);
}

/* true if addr lies within a MiB below this thread's stack (its guard page
 * and what a runaway frame skips over) */
static bool below_own_stack(uint64_t addr)
{
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a)) return false;
    int rc = pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    uint64_t base = (uint64_t)(uintptr_t)lo;
    return !rc && addr < base + 4096 && addr + (1u << 20) >= base;
}

/* The fault message, composed on the worker after the jump back (nothing
 * here runs in the signal handler) */
static void kernel_fault_message(exec_ctx *x, const cpu_kfault *f)
{
    char what[192], pc[160], where[256] = "";
    cpu_fault_describe(f, what, sizeof what);
    describe_pc(x->cp, f->pc, pc, sizeof pc);
    const uint32_t *n = x->dims.num_groups;
    uint64_t g = f->group;
    uint32_t gx = (uint32_t)(g % n[0]), gy = (uint32_t)(g / n[0] % n[1]), gz = (uint32_t)(g / n[0] / n[1]);
    if (!f->addr_unknown) {
        char why[200];
        if (below_own_stack(f->addr))
            snprintf(where, sizeof where, "; the address is just below the worker's stack: the kernel overflowed "
                     "its %u MiB stack (local memory and per-work-item arrays live there)", 16u);
        else if (cpu_alloc_check(cpu_of(x->dev), f->addr, 1, why, sizeof why))
            snprintf(where, sizeof where, "; the address is inside a live allocation");
        else
            snprintf(where, sizeof where, "; the address is %s", why);
    }
    pthread_mutex_lock(&x->lock);
    if (!x->msg[0])
        snprintf(x->msg, sizeof x->msg,
                 "kernel `%s` faulted in work-group (%u,%u,%u): it %s%s%s. Compiled kernels are not "
                 "bounds-checked; HCQ_CPU_TARGET=ir runs them on the interpreter, which names the op, the buffer "
                 "and the index",
                 x->cp->name, gx, gy, gz, what, pc, where);
    pthread_mutex_unlock(&x->lock);
}

/* One work-group per call, so that a device being closed stops its
 * kernels at the next work-group; a bad access ends the chunk with
 * HCQ_EFAULT (cpu_fault.c) */
static hcq_status run_so(void *ctx, uint64_t b, uint64_t e)
{
    exec_ctx *x = ctx;
    cpu_kfault f;
    hcq_status s = cpu_fault_run(x->cp->entry, x->kernargs, &x->dims, x->first + b, x->first + e,
                                 &cpu_of(x->dev)->cancel, &f);
    if (s == HCQ_EFAULT) {
        kernel_fault_message(x, &f);
    } else if (s && s != HCQ_ESTATE) {
        /* the worker could not be prepared: its thread-local message */
        pthread_mutex_lock(&x->lock);
        if (!x->msg[0]) snprintf(x->msg, sizeof x->msg, "%s", hcq_error_message());
        pthread_mutex_unlock(&x->lock);
    }
    return s;
}

static hcq_status run_ir(void *ctx, uint64_t b, uint64_t e)
{
    exec_ctx *x = ctx;
    hcq_interp_launch il = x->il;
    il.group_begin = x->first + b;
    il.group_end = x->first + e;
    hcq_status s = hcq_interp_run(x->cp->ir, &il);
    if (s) {
        /* the message is thread-local to this worker: hand it over */
        pthread_mutex_lock(&x->lock);
        if (!x->msg[0]) snprintf(x->msg, sizeof x->msg, "%s", hcq_error_message());
        pthread_mutex_unlock(&x->lock);
    }
    return s;
}

/* How a launch's groups go to the pool. Work-items are a poor measure of
 * work: a matmul's 2048 work-items each run a whole 8 x 64 x K tile, an
 * elementwise kernel's one element. So a launch too small to be worth
 * waking the pool by its count (under 4096 work-items) starts on the
 * engine thread, one group at a time, and only hands the rest to the pool
 * once it has run SPLIT_NS: a tiny launch never pays a wake-up, a long one
 * loses at most SPLIT_NS of parallel time. (A wake-up of the pool's
 * sleeping workers costs some microseconds; SPLIT_NS is several times
 * that, so splitting wins when it happens.) */
#define SPLIT_NS 20000u

/* Chunks per thread: the pool's threads claim chunks in order, so at the
 * end the others wait up to one chunk for the last. With 4, a thread that
 * ran a little slower (the cache it shares with the other core, a
 * descheduled moment) could hold a launch up by an eighth of it on two
 * cores (a 2048^3 matmul: up to ~13 ms of ~105); 16 bounds that by a
 * thirty-second, for a few dozen more atomic claims per launch. */
#define CHUNKS_PER_THREAD 16ull

static hcq_status exec_split(drv_pool *pool, exec_ctx *x, uint64_t groups, uint64_t items)
{
    drv_task_fn fn = x->cp->entry ? run_so : run_ir;
    unsigned threads = drv_pool_threads(pool);
    if (groups * items >= 4096 || threads < 2)
        return drv_pool_run(pool, groups, BASE_MAX(1, groups / (threads * CHUNKS_PER_THREAD)), fn, x);
    uint64_t t0 = hcq_now_ns(), g = 0;
    while (g < groups) {
        hcq_status s = fn(x, g, g + 1);
        g++;
        if (s) return s;
        if (g < groups - 1 && hcq_now_ns() - t0 >= SPLIT_NS) break;
    }
    if (g == groups) return HCQ_OK;
    uint64_t rest = groups - g;
    x->first = g;
    return drv_pool_run(pool, rest, BASE_MAX(1, rest / (threads * CHUNKS_PER_THREAD)), fn, x);
}

hcq_status cpu_exec(hcq_device *dev, cpu_prog *cp, const uint8_t *kernargs, const uint32_t grid[3],
                    const uint32_t block[3])
{
    exec_ctx x = {.dev = dev, .cp = cp, .kernargs = kernargs};
    uint64_t groups = 1, items = 1;
    for (int i = 0; i < 3; i++) {
        x.dims.num_groups[i] = grid[i];
        x.dims.local_size[i] = block[i];
        groups *= grid[i];
        items *= block[i];
    }
    if (!groups || !items) return HCQ_OK;
    cpu_dev *c = cpu_of(dev);
    pthread_mutex_init(&x.lock, NULL);
    if (!cp->entry) {
        x.mem.check = mem_check;
        x.mem.ctx = &x;
        x.il.kernargs = kernargs;
        x.il.kernarg_size = cp->kernarg_bytes;
        for (int i = 0; i < 3; i++) {
            x.il.num_groups[i] = grid[i];
            x.il.local_size[i] = block[i];
        }
        x.il.mem = &x.mem;
        x.il.cancel = (const volatile int *)&c->cancel;
    }
    hcq_status s = exec_split(c->pool, &x, groups, items);
    pthread_mutex_destroy(&x.lock);
    if (!s) return HCQ_OK;
    if (x.msg[0]) {
        /* the interpreter stops at the first bad access: its one report */
        if (strstr(x.msg, "memcheck: invalid global")) base_memcheck_report("%s", x.msg);
        return base_err(s, "%s", x.msg);
    }
    if (cp->entry && s == HCQ_ESTATE) return base_err(s, "kernel `%s` cancelled: its device is being closed", cp->name);
    return base_err(s, "%s", hcq_error_message());
}
