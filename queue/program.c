#include "base/base.h"
#include "compiler/twin.h"
#include "drivers/decode.h"
#include "drivers/dump.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

hcq_program *hcq_program_load(hcq_device *dev, const void *binary, size_t size)
{
    return hcq_program_load_kernel(dev, binary, size, NULL);
}

hcq_program *hcq_program_load_kernel(hcq_device *dev, const void *binary, size_t size, const char *kernel)
{
    const char *fn = kernel ? "hcq_program_load_kernel" : "hcq_program_load";
    if (Q_CHECK_DEV(dev, fn)) return NULL;
    if (!binary || !size) {
        base_err(HCQ_EINVAL, "%s: empty binary", fn);
        return NULL;
    }
    if (kernel && !*kernel) {
        base_err(HCQ_EINVAL, "%s: the kernel name is empty (NULL loads a binary's only kernel)", fn);
        return NULL;
    }
    if (drv_fault_status(dev)) return NULL;
    hcq_program *p = base_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->dev = dev;
    hcq_status s = dev->be->program_load(dev, binary, size, kernel, p);
    if (s) {
        free(p);
        return NULL;
    }
    struct queue_dev *qd = dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    p->next = qd->programs;
    if (qd->programs) qd->programs->prev = p;
    qd->programs = p;
    pthread_mutex_unlock(&qd->list_lock);
    base_handle_add(p, BASE_H_PROGRAM);
    /* decoders name its launches (HCQ_DEBUG=4 here; hcq decode from dumps) */
    drv_symbol_add(p->launch_addr, p->info.code_bytes, p->info.name);
    const base_env *e = base_env_get();
    if (e->dump || e->mock_dump) {
        char engine[16];
        size_t n = 0;
        for (const char *c = dev->props.id; *c && n + 1 < sizeof engine; c++)
            if (*c != ':') engine[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        engine[n] = 0;
        if (e->dump) drv_dump_name(e->dump, engine, p->launch_addr, p->info.code_bytes, p->info.name);
        if (e->mock_dump && dev->props.is_mock)
            drv_dump_name(e->mock_dump, engine, p->launch_addr, p->info.code_bytes, p->info.name);
    }
    BASE_LOG(1, "%s: loaded `%s` (%s): %u params, %u kernarg bytes, %u local bytes, %u registers, max %u threads",
             dev->props.id, p->info.name, p->info.target, p->info.nparams, p->info.kernarg_bytes,
             p->info.local_bytes, p->info.registers, p->info.max_threads);
    return p;
}

hcq_program *hcq_program_from_kernel(hcq_device *dev, const hcq_kernel *k)
{
    if (Q_CHECK_DEV(dev, "hcq_program_from_kernel")) return NULL;
    const base_env *e = base_env_get();
    if (k && e->dump) { /* the IR too, for `hcq compile --target T DIR` */
        void *ir = NULL;
        size_t n = 0;
        if (hcq_kernel_serialize(k, &ir, &n) == HCQ_OK) drv_dump_ir(e->dump, hcq_kernel_name(k), ir, n);
        free(ir);
    }
    /* local (shared) memory the device cannot give a work-group is refused
     * here, on every device alike, before a compiler sees it: ptxas and
     * clang would refuse it too, in their own words, after seconds */
    uint32_t local = k ? hcq_kernel_local_bytes(k) : 0;
    if (local > dev->props.max_local_bytes) {
        base_err(HCQ_ELIMIT, "%s: kernel `%s` needs %u bytes of local (shared) memory; the device has %u per group "
                 "(max_local_bytes)", dev->props.id, hcq_kernel_name(k), local, dev->props.max_local_bytes);
        return NULL;
    }
    hcq_binary *bin = NULL;
    if (hcq_compile(k, dev->props.target, &bin)) return NULL;
    /* an emulated GPU runs a real binary's machine code as its host twin
     * (compiler/twin.h), made here while the kernel is at hand, unless its
     * executor runs the machine code itself */
    bool twin = dev->props.is_mock && dev->mock_shader != DRV_SHADER_ISA && dev->mock_shader != DRV_SHADER_NONE;
    hcq_status st = twin ? cc_twin_prepare(k, dev->props.target, bin->data, bin->size) : HCQ_OK;
    if (st) {
        base_err_prefix(st, "%s: the host twin of kernel '%s'", dev->props.id, hcq_kernel_name(k));
        hcq_binary_free(bin);
        return NULL;
    }
    hcq_program *p = hcq_program_load(dev, bin->data, bin->size);
    hcq_binary_free(bin);
    return p;
}

static void program_delete(hcq_program *p)
{
    struct queue_dev *qd = p->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    if (p->prev) p->prev->next = p->next;
    else qd->programs = p->next;
    if (p->next) p->next->prev = p->prev;
    pthread_mutex_unlock(&qd->list_lock);
    drv_symbol_remove(p->launch_addr);
    p->dev->be->program_free(p->dev, p);
    free(p);
}

void q_program_hold(hcq_program *p)
{
    struct queue_dev *qd = p->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    p->holds++;
    pthread_mutex_unlock(&qd->list_lock);
}

void q_program_release(hcq_program *p)
{
    struct queue_dev *qd = p->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    bool last = --p->holds == 0 && p->freed;
    pthread_mutex_unlock(&qd->list_lock);
    /* its recordings have completed (they are drained before they let go) */
    if (last) program_delete(p);
}

hcq_status hcq_program_free(hcq_program *p)
{
    if (!p) return HCQ_OK;
    if (!base_handle_live(p, BASE_H_PROGRAM))
        return base_err(HCQ_ESTATE, "hcq_program_free: %p is not a live program (freed twice, or its device was "
                        "closed?)", (void *)p);
    /* eager launches of it may still be in flight on the timeline. On a
     * device that faulted or hung they may never end (or still run): the
     * program then stays loaded until the device is closed. */
    bool idle = hcq_device_synchronize(p->dev) == HCQ_OK;
    if (!base_handle_remove(p, BASE_H_PROGRAM))
        return base_err(HCQ_ESTATE, "hcq_program_free: %p was freed meanwhile (by another thread?)", (void *)p);
    if (!idle) BASE_LOG(1, "freeing program `%s`: %s; it stays loaded until the device is closed", p->info.name,
                        hcq_error_message());
    struct queue_dev *qd = p->dev->qd;
    pthread_mutex_lock(&qd->list_lock);
    p->freed = true;
    if (!idle) p->holds++; /* the device's, let go only by close */
    bool now = p->holds == 0;
    pthread_mutex_unlock(&qd->list_lock);
    if (now) program_delete(p);
    return HCQ_OK;
}

void q_programs_free_all(hcq_device *dev)
{
    unsigned n = 0;
    while (dev->qd->programs) {
        hcq_program *p = dev->qd->programs;
        if (base_handle_remove(p, BASE_H_PROGRAM) && !p->internal) n++;
        program_delete(p);
    }
    if (n) BASE_LOG(1, "%s closed with %u programs still loaded; freed them", dev->props.id, n);
}

const hcq_program_info *hcq_program_get_info(const hcq_program *p)
{
    if (Q_CHECK_PROGRAM(p, "hcq_program_get_info")) return NULL;
    return &p->info;
}

hcq_status hcq_program_param(const hcq_program *p, uint32_t i, hcq_param_info *out)
{
    hcq_status s = Q_CHECK_PROGRAM(p, "hcq_program_param");
    if (s) return s;
    if (!out) return base_err(HCQ_EINVAL, "hcq_program_param: out is NULL");
    if (i >= p->info.nparams)
        return base_err(HCQ_EINVAL, "kernel `%s` has %u params; there is no param %u", p->info.name, p->info.nparams, i);
    *out = p->params[i];
    return HCQ_OK;
}

/* ** argument and dimension checks shared by queues, graphs and launches */

hcq_status q_resolve_args(hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_val *params,
                          q_buffer_val_fn buffer_val, void *ctx, bool peer_wait, const char *fn)
{
    if (nargs != p->info.nparams)
        return base_err(HCQ_EINVAL, "%s: kernel `%s` takes %u arguments, got %u", fn, p->info.name, p->info.nparams,
                        nargs);
    if (nargs && !args) return base_err(HCQ_EINVAL, "%s: args is NULL", fn);
    for (uint32_t i = 0; i < nargs; i++) {
        const hcq_arg *a = &args[i];
        const hcq_param_info *pi = &p->params[i];
        switch (a->kind) {
        case HCQ_ARG_BUFFER:
            if (!a->buffer) return base_err(HCQ_EINVAL, "%s: argument %u of `%s` is a NULL buffer", fn, i, p->info.name);
            if (!base_handle_live(a->buffer, BASE_H_BUFFER))
                return base_err(HCQ_ESTATE, "%s: argument %u of `%s` is not a live buffer (freed, or its device was "
                                "closed)", fn, i, p->info.name);
            /* another device's buffer: where a peer mapping lets this
             * device reach it (graphs order the two devices themselves) */
            if (a->buffer->dev != p->dev) {
                hcq_status ps = peer_wait && !buffer_val ? q_peer_use(p->dev, a->buffer) : q_peer_map(p->dev, a->buffer);
                if (ps && ps != HCQ_ENOTSUP) return ps;
                if (ps) {
                    char why[512] = "";
                    snprintf(why, sizeof why, ": %s", hcq_error_message());
                    return base_err(HCQ_EINVAL, "%s: argument %u of `%s` is a buffer on %s, but the program is on %s%s",
                                    fn, i, p->info.name, a->buffer->dev->props.id, p->dev->props.id, why);
                }
                BASE_LOG(1, "%s: `%s` reads %s's buffer at 0x%llx through a peer mapping", fn, p->info.name,
                         a->buffer->dev->props.id, (unsigned long long)a->buffer->va);
            }
            /* a buffer is an 8-byte address: the checks below apply */
            __attribute__((fallthrough));
        case HCQ_ARG_ADDR:
            /* a param of unknown kind (dtype void, e.g. from a cubin) takes either */
            if (pi->size != 8 || (!pi->is_buffer && pi->dtype != HCQ_VOID))
                return base_err(HCQ_EINVAL, "%s: argument %u of `%s` is an address, but the parameter is a %u-byte %s",
                                fn, i, p->info.name, pi->size, pi->is_buffer ? "buffer" : "scalar");
            if (a->kind == HCQ_ARG_BUFFER) {
                if (buffer_val) {
                    hcq_status s = buffer_val(ctx, a->buffer, &params[i]);
                    if (s) return s;
                } else {
                    params[i] = HCQ_IMM(a->buffer->va);
                }
            } else {
                params[i] = a->val;
            }
            break;
        case HCQ_ARG_SCALAR:
            if (pi->is_buffer)
                return base_err(HCQ_EINVAL, "%s: argument %u of `%s` is a scalar, but the parameter is a buffer", fn, i,
                                p->info.name);
            if (a->size && a->size != pi->size)
                return base_err(HCQ_EINVAL, "%s: argument %u of `%s` is a %u-byte scalar, but the parameter is %u bytes",
                                fn, i, p->info.name, a->size, pi->size);
            params[i] = a->val;
            break;
        default:
            return base_err(HCQ_EINVAL, "%s: argument %u of `%s` has unknown kind %u", fn, i, p->info.name, a->kind);
        }
    }
    return HCQ_OK;
}

hcq_status q_hold_launch(q_holds *h, hcq_program *p, const hcq_arg *args, uint32_t nargs)
{
    hcq_status s = q_hold(h, BASE_H_PROGRAM, p);
    /* only the device's own buffers: another device's (a peer mapping)
     * goes with its device, which this recording cannot keep open */
    for (uint32_t i = 0; !s && i < nargs; i++)
        if (args[i].kind == HCQ_ARG_BUFFER && args[i].buffer->dev == p->dev) s = q_hold(h, BASE_H_BUFFER, args[i].buffer);
    return s;
}

hcq_status q_check_dims(const hcq_program *p, const hcq_dims *d, const uint64_t *vars, const char *fn)
{
    const hcq_device_props *pr = &p->dev->props;
    uint64_t threads = 1;
    bool all = true;
    for (int i = 0; i < 3; i++) {
        if ((hcq_val_is_var(d->block[i]) || hcq_val_is_var(d->grid[i])) && !vars) {
            all = false;
            continue;
        }
        uint64_t b = drv_val(d->block[i], vars), g = drv_val(d->grid[i], vars);
        if (b == 0 || g == 0)
            return base_err(HCQ_EINVAL, "%s: launch of `%s` with a zero %s dimension %c", fn, p->info.name,
                            b == 0 ? "block" : "grid", "xyz"[i]);
        if (b > pr->max_block[i])
            return base_err(HCQ_ELIMIT, "%s: block dimension %c of `%s` is %llu; %s allows at most %u", fn, "xyz"[i],
                            p->info.name, (unsigned long long)b, pr->id, pr->max_block[i]);
        if (g > pr->max_grid[i])
            return base_err(HCQ_ELIMIT, "%s: grid dimension %c of `%s` is %llu; %s allows at most %u", fn, "xyz"[i],
                            p->info.name, (unsigned long long)g, pr->id, pr->max_grid[i]);
        threads *= b;
    }
    if (all) {
        uint32_t limit = BASE_MIN(p->info.max_threads ? p->info.max_threads : pr->max_threads_per_group,
                                  pr->max_threads_per_group);
        if (threads > limit)
            return base_err(HCQ_ELIMIT, "%s: `%s` launched with %llu threads per group; it can run at most %u on %s%s",
                            fn, p->info.name, (unsigned long long)threads, limit, pr->id,
                            p->info.registers ? " with its register use" : "");
    }
    return HCQ_OK;
}
