#include "drivers/record.h"

#include "base/base.h"
#include "drivers/backend.h"

#include <stdlib.h>

void drv_rec_init(drv_rec *r, hcq_device *dev, hcq_queue_type type)
{
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->type = type;
}

void drv_rec_reset(drv_rec *r)
{
    r->ndw = 0;
    r->npatches = 0;
    r->ndimchecks = 0;
    r->naligns = 0;
    r->nvars = 0;
    r->ncmds = 0;
    r->nmem_patches = 0;
    r->uses_aux = false;
    r->err = HCQ_OK;
    memset(r->be, 0, sizeof r->be);
}

void drv_rec_fini(drv_rec *r)
{
    free(r->dw);
    free(r->patches);
    free(r->dimchecks);
    free(r->alignchecks);
    r->dw = NULL;
    r->patches = NULL;
    r->dimchecks = NULL;
    r->alignchecks = NULL;
    r->cap = r->pcap = r->dcap = r->acap = 0;
}

bool drv_rec_grow(drv_rec *r, uint32_t n)
{
    uint64_t want = (uint64_t)r->ndw + n, cap = r->cap ? r->cap : 256;
    while (cap < want) cap *= 2;
    if (cap > UINT32_MAX / 4) {
        r->err = base_err(HCQ_ELIMIT, "command stream of %llu dwords is too long", (unsigned long long)want);
        return false;
    }
    uint32_t *dw = base_realloc_array(r->dw, cap, sizeof *dw);
    if (!dw) {
        r->err = HCQ_ENOMEM;
        return false;
    }
    r->dw = dw;
    r->cap = (uint32_t)cap;
    return true;
}

static drv_patch *patch_new(drv_rec *r, hcq_val v)
{
    if (r->npatches == r->pcap) {
        uint32_t cap = r->pcap ? r->pcap * 2 : 32;
        drv_patch *p = base_realloc_array(r->patches, cap, sizeof *p);
        if (!p) {
            r->err = HCQ_ENOMEM;
            return NULL;
        }
        r->patches = p;
        r->pcap = cap;
    }
    uint32_t k = hcq_val_var_index(v);
    if (k + 1 > r->nvars) r->nvars = k + 1;
    drv_patch *p = &r->patches[r->npatches++];
    memset(p, 0, sizeof *p);
    p->var = k;
    return p;
}

static void field(drv_rec *r, uint8_t *at, bool in_mem, uint32_t offset, hcq_val v, uint8_t bits,
                  uint8_t lshift, uint8_t rshift, int64_t addend)
{
    if (!hcq_val_is_var(v)) {
        drv_field_write(at, bits, lshift, (v.imm + (uint64_t)addend) >> rshift);
        return;
    }
    drv_field_write(at, bits, lshift, 0);
    drv_patch *p = patch_new(r, v);
    if (!p) return;
    p->in_mem = in_mem;
    if (in_mem) r->nmem_patches++;
    p->bits = bits;
    p->lshift = lshift;
    p->rshift = rshift;
    p->offset = offset;
    p->mem = in_mem ? at : NULL;
    p->addend = addend;
}

void drv_rec_field(drv_rec *r, uint32_t dword, hcq_val v, uint8_t bits, uint8_t lshift,
                   uint8_t rshift, int64_t addend)
{
    field(r, (uint8_t *)&r->dw[dword], false, dword * 4u, v, bits, lshift, rshift, addend);
}

void drv_rec_mem_field(drv_rec *r, uint8_t *p, hcq_val v, uint8_t bits, uint8_t lshift,
                       uint8_t rshift, int64_t addend)
{
    field(r, p, true, 0, v, bits, lshift, rshift, addend);
}

void drv_rec_params(drv_rec *r, uint8_t *base, const hcq_program *p, const hcq_val *params)
{
    for (uint32_t i = 0; i < p->info.nparams; i++) {
        const hcq_param_info *pi = &p->params[i];
        uint8_t *at = base + pi->offset;
        uint8_t bits = (uint8_t)(pi->size * 8);
        if (pi->size > 4 && !hcq_val_is_var(params[i])) {
            memcpy(at, &params[i].imm, pi->size > 8 ? 8 : pi->size);
            continue;
        }
        /* fields wider than 32 bits take an 8-byte window, which stays inside
         * the param since its size is 8 */
        drv_rec_mem_field(r, at, params[i], bits, 0, 0, 0);
    }
}

void drv_rec_dimcheck(drv_rec *r, hcq_program *p, const hcq_dims *dims)
{
    if (r->ndimchecks == r->dcap) {
        uint32_t cap = r->dcap ? r->dcap * 2 : 8;
        drv_dimcheck *d = base_realloc_array(r->dimchecks, cap, sizeof *d);
        if (!d) {
            r->err = HCQ_ENOMEM;
            return;
        }
        r->dimchecks = d;
        r->dcap = cap;
    }
    r->dimchecks[r->ndimchecks].prog = p;
    r->dimchecks[r->ndimchecks].dims = *dims;
    r->ndimchecks++;
}

void drv_rec_apply(drv_rec *r, const uint64_t *vars, uint64_t *last)
{
    uint8_t *stream = (uint8_t *)r->dw;
    for (uint32_t i = 0; i < r->npatches; i++) {
        const drv_patch *p = &r->patches[i];
        uint64_t v = vars[p->var];
        if (last && last[p->var] == v) continue;
        uint8_t *at = p->in_mem ? p->mem : stream + p->offset;
        drv_field_write(at, p->bits, p->lshift, (v + (uint64_t)p->addend) >> p->rshift);
    }
}

hcq_status drv_rec_need_align(drv_rec *r, hcq_val addr, uint32_t align, const char *what)
{
    if (!hcq_val_is_var(addr)) {
        if (!(addr.imm & (align - 1))) return HCQ_OK;
        return base_err(HCQ_EINVAL, "%s: %s at 0x%llx: the address must be %u-byte aligned (a hcq_signal's is)",
                        r->dev ? r->dev->props.id : "recording", what, (unsigned long long)addr.imm, align);
    }
    if (r->naligns == r->acap) {
        uint32_t cap = r->acap ? r->acap * 2 : 8;
        drv_aligncheck *a = base_realloc_array(r->alignchecks, cap, sizeof *a);
        if (!a) return r->err = HCQ_ENOMEM;
        r->alignchecks = a;
        r->acap = cap;
    }
    r->alignchecks[r->naligns++] = (drv_aligncheck){addr, align, what};
    return HCQ_OK;
}

hcq_status drv_rec_check_aligns(const drv_rec *r, const uint64_t *vars, const char *fn)
{
    for (uint32_t i = 0; i < r->naligns; i++) {
        const drv_aligncheck *a = &r->alignchecks[i];
        uint64_t va = drv_val(a->addr, vars);
        if (va & (a->align - 1))
            return base_err(HCQ_EINVAL, "%s: %s: %s at 0x%llx (variable %u): the address must be %u-byte aligned",
                            fn, r->dev ? r->dev->props.id : "recording", a->what, (unsigned long long)va,
                            hcq_val_var_index(a->addr), a->align);
    }
    return HCQ_OK;
}
