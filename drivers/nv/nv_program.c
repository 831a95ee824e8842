/* The cubin loader (nv-facts §5): finds the kernel, reads its attributes
 * from .nv.info (registers, stack, the parameter block in constant bank
 * 0), lays the loadable sections out in one image, applies relocations,
 * uploads the image with the copy engine, checks launch limits, and builds
 * the program's QMD template and constant-bank-0 prefix.
 *
 * .nv.info records are `u8 format, u8 attribute, u16 value`; format 4
 * (EIFMT_SVAL) has `value` bytes of payload. Layouts checked against cubins
 * from ptxas 13.0 (clang-22 PTX) and nvcc 13.0:
 *   REGCOUNT (0x2f)        u32 function symbol, u32 registers
 *   MIN_STACK_SIZE (0x12)  u32 function symbol, u32 bytes
 *   PARAM_CBANK (0x0a)     u32 constant-bank symbol, u16 parameter base, u16 bytes
 *   CBANK_PARAM_SIZE (0x19) value = parameter bytes
 *   KPARAM_INFO (0x17)     u32 index, u16 ordinal, u16 offset, u32 flags (size = flags >> 18)
 *   NUM_BARRIERS (0x4c)    value = the barriers the kernel uses (format 2, absent when none); the
 *                          name is public cubin tools' (EIATTR tables of cuobjdump-like dumpers) */
#include "drivers/nv/nv.h"

#include "base/base.h"
#include "compiler/elf.h"
#include "compiler/ir.h"
#include "compiler/sass.h"
#include "compiler/twin.h"

#include <stdlib.h>
#include <string.h>

enum {
    EIFMT_SVAL = 4,
    EIATTR_PARAM_CBANK = 0x0a,
    EIATTR_MIN_STACK_SIZE = 0x12,
    EIATTR_KPARAM_INFO = 0x17,
    EIATTR_CBANK_PARAM_SIZE = 0x19,
    EIATTR_REGCOUNT = 0x2f,
    EIATTR_NUM_BARRIERS = 0x4c,
};
#define SHT_CUDA_INFO 0x70000000u
#define R_CUDA_32 1u
#define R_CUDA_64 2u
#define R_CUDA_ABS32_LO_32 0x38u
#define R_CUDA_ABS32_HI_32 0x39u
#define SHARED_RESERVED 0x400u /* the first KiB of shared memory belongs to the system on sm_8x/9x */

typedef struct kinfo {
    uint32_t regs, stack, param_base, param_bytes, barriers;
    bool have_cbank;
    uint32_t nparams;
    hcq_param_info params[256];
} kinfo;

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Walks the records of an .nv.info section; sym filters per-symbol
 * attributes of the global section (UINT32_MAX: every record). */
static hcq_status parse_info(const cc_elf_section *s, uint32_t sym, kinfo *ki, const char *id)
{
    const uint8_t *b = s->data, *end = s->data + s->size;
    while (b + 4 <= end) {
        uint8_t fmt = b[0], attr = b[1];
        uint16_t v = rd16(b + 2);
        const uint8_t *pl = b + 4;
        uint32_t len = fmt == EIFMT_SVAL ? v : 0;
        if (pl + len > end) return base_err(HCQ_EFORMAT, "%s: cubin section %s: record 0x%02x runs past its end", id,
                                            s->name, attr);
        if (fmt == EIFMT_SVAL) {
            if (attr == EIATTR_REGCOUNT && len >= 8 && (sym == UINT32_MAX || rd32(pl) == sym)) ki->regs = rd32(pl + 4);
            if (attr == EIATTR_MIN_STACK_SIZE && len >= 8 && (sym == UINT32_MAX || rd32(pl) == sym))
                ki->stack = rd32(pl + 4);
            if (attr == EIATTR_PARAM_CBANK && len >= 8) {
                ki->param_base = rd16(pl + 4);
                ki->param_bytes = rd16(pl + 6);
                ki->have_cbank = true;
            }
            if (attr == EIATTR_KPARAM_INFO && len >= 12) {
                uint32_t ord = rd16(pl + 4), off = rd16(pl + 6), size = rd32(pl + 8) >> 18;
                if (ord >= BASE_ARRAY_LEN(ki->params))
                    return base_err(HCQ_ELIMIT, "%s: the kernel has more than %zu parameters", id,
                                    BASE_ARRAY_LEN(ki->params));
                ki->params[ord].offset = off;
                ki->params[ord].size = size;
                ki->params[ord].dtype = HCQ_VOID; /* a cubin does not say */
                if (ord + 1 > ki->nparams) ki->nparams = ord + 1;
            }
        } else if (attr == EIATTR_CBANK_PARAM_SIZE && !ki->have_cbank) {
            ki->param_bytes = v;
        } else if (attr == EIATTR_NUM_BARRIERS) {
            ki->barriers = v;
        }
        b = pl + len;
    }
    return HCQ_OK;
}

/* The SM a cubin is for: e_flags bits 15:8 (ELF ABI version 8 and later),
 * 7:0 before */
static uint32_t cubin_sm(const cc_elf *e) { return e->abiversion >= 8 ? (e->flags >> 8) & 0xff : e->flags & 0xff; }

/* bounds of a cubin's loadable image: far above what ptxas emits for one
 * kernel (kilobytes to a few MiB), far below what would exhaust memory */
#define NV_IMAGE_MAX (64u << 20)
#define NV_IMAGE_ALIGN_MAX 65536u

static bool loadable(const cc_elf_section *s)
{
    if (!(s->flags & SHF_ALLOC) || (s->type != SHT_PROGBITS && s->type != SHT_NOBITS)) return false;
    return strncmp(s->name, ".nv.shared", 10) != 0 && strncmp(s->name, ".nv.constant0", 13) != 0;
}

static hcq_status relocate(const cc_elf *e, uint8_t *image, const uint64_t *sec_off, uint64_t base_va, const char *id)
{
    for (uint32_t i = 1; i < e->nsections; i++) {
        const cc_elf_section *rs = &e->sections[i];
        if (rs->type != SHT_REL && rs->type != SHT_RELA) continue;
        if (rs->info >= e->nsections || sec_off[rs->info] == UINT64_MAX || !rs->size) continue;
        size_t ent = rs->type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
        for (uint64_t k = 0; k + ent <= rs->size; k += ent) {
            Elf64_Rela rel = {0};
            memcpy(&rel, rs->data + k, ent);
            uint32_t type = (uint32_t)ELF64_R_TYPE(rel.r_info), si = (uint32_t)ELF64_R_SYM(rel.r_info);
            const cc_elf_section *target = &e->sections[rs->info];
            if (si >= e->nsymbols || e->symbols[si].shndx >= e->nsections || sec_off[e->symbols[si].shndx] == UINT64_MAX)
                return base_err(HCQ_EFORMAT, "%s: relocation %llu of %s names symbol %u, which is not in a loaded "
                                "section", id, (unsigned long long)(k / ent), rs->name, si);
            uint64_t s = base_va + sec_off[e->symbols[si].shndx] + e->symbols[si].value + (uint64_t)rel.r_addend;
            uint64_t at = rel.r_offset;
            uint8_t *dst = image + sec_off[rs->info];
            uint32_t lo = (uint32_t)s, hi = (uint32_t)(s >> 32);
            if ((type == R_CUDA_64 && at + 8 > target->size) || (type != R_CUDA_64 && at + 8 > target->size &&
                                                                 at + 4 > target->size))
                return base_err(HCQ_EFORMAT, "%s: relocation at 0x%llx lies outside %s", id, (unsigned long long)at,
                                target->name);
            switch (type) {
            case R_CUDA_32: memcpy(dst + at, &lo, 4); break;
            case R_CUDA_64: memcpy(dst + at, &s, 8); break;
            case R_CUDA_ABS32_LO_32: memcpy(dst + at + 4, &lo, 4); break;
            case R_CUDA_ABS32_HI_32: memcpy(dst + at + 4, &hi, 4); break;
            default:
                return base_err(HCQ_ENOTSUP, "%s: cubin relocation type 0x%x in %s is not supported (hcq applies "
                                "R_CUDA_32, R_CUDA_64, R_CUDA_ABS32_LO_32/HI_32)", id, type, rs->name);
            }
        }
    }
    return HCQ_OK;
}

/* Copies the image into its device memory with the copy engine and waits. */
static hcq_status upload(hcq_device *dev, const uint8_t *image, uint64_t size, const drv_mem *dst)
{
    drv_mem stage;
    hcq_status s = nv_mem_alloc(dev, size, DRV_MEM_HOST | DRV_MEM_CPU, &stage);
    if (s) return s;
    memcpy(stage.cpu, image, size);
    drv_rec r;
    drv_rec_init(&r, dev, HCQ_QUEUE_COPY);
    nv_rec_copy(&r, HCQ_IMM(dst->va), HCQ_IMM(stage.va), HCQ_IMM(size));
    char what[96];
    snprintf(what, sizeof what, "%s: uploading a %llu-byte program", dev->props.id, (unsigned long long)size);
    s = r.err ? r.err : nv_run_internal(dev, &r, what);
    drv_rec_fini(&r);
    nv_mem_free(dev, &stage);
    return s;
}

/* Grows the device's local-memory (stack) buffer to per_thread bytes per
 * thread (nv-facts §5 "Local memory"). */
hcq_status nv_local_ensure(hcq_device *dev, nv_dev *nv, uint32_t per_thread)
{
    if (per_thread <= nv->local_per_thread) return HCQ_OK;
    uint64_t per_tpc = base_align_up(base_align_up((uint64_t)per_thread * 32, 0x200) * BASE_MAX(nv->max_warps_per_sm, 1) *
                                         BASE_MAX(nv->sms_per_tpc, 1), 0x8000);
    uint64_t total = base_align_up(per_tpc * BASE_MAX(nv->tpcs_per_gpc, 1) * BASE_MAX(nv->gpcs, 1), 0x20000);
    drv_mem m;
    hcq_status s = nv_mem_alloc(dev, total, DRV_MEM_DEVICE, &m);
    if (s) return base_err_prefix(s, "%s: local memory for %u bytes of stack per thread", dev->props.id, per_thread);
    drv_rec r;
    drv_rec_init(&r, dev, HCQ_QUEUE_COMPUTE);
    nv_set_local_memory(&r, m.va, per_tpc, nv->gen->local_upper_bits);
    s = r.err ? r.err : nv_run_internal(dev, &r, "programming local memory");
    drv_rec_fini(&r);
    if (s) {
        nv_mem_free(dev, &m);
        return s;
    }
    /* the release above waited for idle: nothing uses the old buffer */
    if (nv->local_mem.size) nv_mem_free(dev, &nv->local_mem);
    nv->local_mem = m;
    nv->local_per_thread = per_thread;
    return HCQ_OK;
}

static void build_template(nv_dev *nv, nv_prog *np, uint64_t code_va, uint32_t regs, uint32_t shared, uint32_t slm,
                           uint32_t barriers)
{
    int v = nv->qmd_ver;
    uint32_t *q = np->qmd;
    memset(q, 0, sizeof np->qmd);
    nv_qmd_set(q, v, NV_QMD_GROUP_ID, 0, 0x3f);
    nv_qmd_set(q, v, NV_QMD_SM_GLOBAL_CACHING_ENABLE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_INVALIDATE_TEXTURE_HEADER_CACHE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_INVALIDATE_TEXTURE_DATA_CACHE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_INVALIDATE_SHADER_DATA_CACHE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_INVALIDATE_INSTRUCTION_CACHE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_CWD_MEMBAR_TYPE, 0, 1); /* L1_SYSMEMBAR */
    nv_qmd_set(q, v, NV_QMD_API_VISIBLE_CALL_LIMIT, 0, 1); /* NO_CHECK */
    nv_qmd_set(q, v, NV_QMD_SAMPLER_INDEX, 0, 1);
    nv_qmd_set(q, v, NV_QMD_SHARED_MEMORY_SIZE, 0, shared);
    /* shared-memory carve-out: the smallest of 32/64/100 KiB that holds
     * the kernel's, encoded as KiB * 1024 / 4096 + 1 (tinygrad's choice) */
    uint32_t kib = shared <= 32 * 1024 ? 32 : shared <= 64 * 1024 ? 64 : 100;
    nv_qmd_set(q, v, NV_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE, 0, kib / 4 + 1);
    nv_qmd_set(q, v, NV_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE, 0, kib / 4 + 1);
    nv_qmd_set(q, v, NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE, 0, 100 / 4 + 1);
    nv_qmd_set(q, v, NV_QMD_VERSION, 0, 0);
    nv_qmd_set(q, v, NV_QMD_MAJOR_VERSION, 0, v == NV_QMD_V04 ? 4 : 3);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_VALID, 0, 1);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_INVALIDATE, 0, 1);
    nv_qmd_set(q, v, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, base_align_up(np->cbuf0_bytes, 16) >> 4);
    nv_qmd_set(q, v, NV_QMD_REGISTER_COUNT, 0, regs);
    /* the barriers the cubin declares: a bar.sync beyond the count is an
     * illegal instruction parameter */
    nv_qmd_set(q, v, NV_QMD_BARRIER_COUNT, 0, barriers);
    nv_qmd_set(q, v, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0, slm);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_ADDRESS_LOWER, 0, code_va);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_ADDRESS_UPPER, 0, code_va >> 32);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, 0, code_va >> 8);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 0, code_va >> 40);
    nv_qmd_set(q, v, NV_QMD_PROGRAM_PREFETCH_SIZE, 0, BASE_MIN(np->code_bytes >> 8, 0x1FFu));
    nv_qmd_set(q, v, NV_QMD_SASS_VERSION, 0, ((nv->sm_version & 0xf00) >> 4) | (nv->sm_version & 0xf));
}

/* Binds constant banks 1..7 that the cubin carries (`__constant__` data). */
static void bind_cbanks(nv_dev *nv, nv_prog *np, const cc_elf *e, const uint64_t *sec_off)
{
    int v = nv->qmd_ver;
    for (uint32_t i = 1; i < e->nsections; i++) {
        const char *n = e->sections[i].name;
        if (strncmp(n, ".nv.constant", 12) || n[12] < '1' || n[12] > '7' || sec_off[i] == UINT64_MAX) continue;
        unsigned bank = (unsigned)(n[12] - '0');
        uint64_t va = np->image.va + sec_off[i];
        nv_qmd_set(np->qmd, v, NV_QMD_CONSTANT_BUFFER_VALID, bank, 1);
        nv_qmd_set(np->qmd, v, NV_QMD_CONSTANT_BUFFER_INVALIDATE, bank, 1);
        nv_qmd_set(np->qmd, v, NV_QMD_CONSTANT_BUFFER_ADDR_LOWER, bank, va >> nv_qmd_cbuf_shift(v));
        nv_qmd_set(np->qmd, v, NV_QMD_CONSTANT_BUFFER_ADDR_UPPER, bank, va >> (32 + nv_qmd_cbuf_shift(v)));
        nv_qmd_set(np->qmd, v, NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, bank, base_align_up(e->sections[i].size, 16) >> 4);
    }
}

/* ** parsing: everything that needs no device */
void nv_cubin_free(nv_cubin *c)
{
    free(c->sec_off);
    free(c->image);
    cc_elf_close(&c->e);
    memset(c, 0, sizeof *c);
}

hcq_status nv_cubin_parse(const void *bin, size_t size, const char *id, const char *kernel, nv_cubin *c)
{
    memset(c, 0, sizeof *c);
    if (cc_elf_open(&c->e, bin, size)) return base_err_prefix(HCQ_EFORMAT, "%s: not a cubin", id);
    const cc_elf *e = &c->e;
    char what[128];
    cc_elf_describe(e->machine, e->type, what, sizeof what);
    hcq_status s = HCQ_OK;
    if (e->machine != EM_CUDA) {
        s = base_err(HCQ_EFORMAT, "%s: this is %s, not a CUDA cubin", id, what);
        goto fail;
    }
    c->sm = cubin_sm(e);
    /* the kernel: a global function in its .text.<name> section; kernel
     * names it among several (NULL: the only one) */
    const cc_elf_symbol *fn = NULL;
    uint32_t fn_index = 0, nfn = 0;
    char names[512] = "";
    size_t nl = 0;
    for (uint32_t i = 1; i < e->nsymbols; i++) {
        const cc_elf_symbol *sy = &e->symbols[i];
        if (ELF64_ST_TYPE(sy->info) != STT_FUNC || ELF64_ST_BIND(sy->info) != STB_GLOBAL || !sy->shndx ||
            sy->shndx >= e->nsections || strncmp(e->sections[sy->shndx].name, ".text.", 6))
            continue;
        if (nl < sizeof names - 1)
            nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s`%s`", nfn ? ", " : "", sy->name);
        nfn++;
        if (!fn && (!kernel || !strcmp(sy->name, kernel))) {
            fn = sy;
            fn_index = i;
        }
    }
    if (!nfn) {
        s = base_err(HCQ_EFORMAT, "%s: the cubin has no kernel (no global function in a .text.* section)", id);
        goto fail;
    }
    if (!fn) {
        s = base_err(HCQ_EINVAL, "%s: the cubin has no kernel `%s`; it holds %s", id, kernel, names);
        goto fail;
    }
    if (!kernel && nfn > 1) {
        s = base_err(HCQ_EINVAL, "%s: the cubin holds %u kernels (%s): name the one to load "
                     "(hcq_program_load_kernel)", id, nfn, names);
        goto fail;
    }
    c->name = fn->name;
    c->text_index = fn->shndx;
    const cc_elf_section *text = &e->sections[fn->shndx];
    c->text = text->data;
    c->text_bytes = text->size;
    char sec[300];
    kinfo *ki = calloc(1, sizeof *ki);
    if (!ki) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    const cc_elf_section *info = cc_elf_find_section(e, ".nv.info");
    if (info && info->data) s = parse_info(info, fn_index, ki, id);
    snprintf(sec, sizeof sec, ".nv.info.%s", c->name);
    const cc_elf_section *kinf = cc_elf_find_section(e, sec);
    if (!s && kinf && kinf->data) s = parse_info(kinf, UINT32_MAX, ki, id);
    snprintf(sec, sizeof sec, ".nv.constant0.%s", c->name);
    const cc_elf_section *cb0 = cc_elf_find_section(e, sec);
    snprintf(sec, sizeof sec, ".nv.shared.%s", c->name);
    const cc_elf_section *shs = cc_elf_find_section(e, sec);
    bool reserved = false;
    for (uint32_t i = 1; i < e->nsections; i++) reserved |= !strncmp(e->sections[i].name, ".nv.shared.reserved", 19);
    if (!s) {
        c->have_cbank = ki->have_cbank;
        c->param_base = ki->param_base;
        c->param_bytes = ki->param_bytes;
        c->regs = ki->regs ? ki->regs : text->info >> 24; /* older toolchains keep it in sh_info */
        c->stack = ki->stack;
        c->nparams = ki->nparams;
        c->barriers = ki->barriers;
        memcpy(c->params, ki->params, sizeof c->params);
        c->cbuf0_bytes = BASE_MAX(cb0 ? (uint32_t)cb0->size : 0, ki->param_base + ki->param_bytes);
        c->shared_user = shs ? (uint32_t)shs->size : 0;
        /* ptxas for sm_90 counts the system's first KiB into the section */
        if (reserved && c->shared_user >= SHARED_RESERVED) c->shared_user -= SHARED_RESERVED;
        for (uint32_t i = 0; i < ki->nparams && !s; i++)
            if (ki->params[i].offset + ki->params[i].size > ki->param_bytes || !ki->params[i].size)
                s = base_err(HCQ_EFORMAT, "%s: kernel `%s` parameter %u (offset %u, %u bytes) lies outside its %u "
                             "parameter bytes", id, c->name, i, ki->params[i].offset, ki->params[i].size,
                             ki->param_bytes);
    }
    free(ki);
    if (s) goto fail;
    /* the image: loadable sections, 128-byte aligned, plus a page so
     * instruction prefetch past the end stays mapped */
    if (!(c->sec_off = malloc(e->nsections * sizeof *c->sec_off))) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < e->nsections; i++) {
        c->sec_off[i] = UINT64_MAX;
        if (i == 0 || !loadable(&e->sections[i])) continue;
        const cc_elf_section *ls = &e->sections[i];
        /* sizes of SHT_NOBITS sections are not bounded by the file: bound
         * the image by what any kernel's code and data could need */
        if ((ls->align & (ls->align - 1)) || ls->align > NV_IMAGE_ALIGN_MAX || ls->size > NV_IMAGE_MAX ||
            total + ls->size > NV_IMAGE_MAX) {
            s = base_err(HCQ_EFORMAT, "%s: cubin section %s (%llu bytes, aligned to %llu) does not fit a kernel image "
                         "of at most %u MiB", id, ls->name, (unsigned long long)ls->size,
                         (unsigned long long)ls->align, NV_IMAGE_MAX >> 20);
            goto fail;
        }
        total = base_align_up(total, BASE_MAX(128u, ls->align));
        c->sec_off[i] = total;
        total += ls->size;
    }
    c->image_bytes = base_align_up(total, 4096) + 4096;
    if (!(c->image = calloc(1, c->image_bytes))) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    for (uint32_t i = 1; i < e->nsections; i++)
        if (c->sec_off[i] != UINT64_MAX && e->sections[i].data)
            memcpy(c->image + c->sec_off[i], e->sections[i].data, e->sections[i].size);
    return HCQ_OK;
fail:
    nv_cubin_free(c);
    return s;
}

hcq_status nv_cubin_relocate(nv_cubin *c, uint64_t base_va, const char *id)
{
    return relocate(&c->e, c->image, c->sec_off, base_va, id);
}

static hcq_status load(hcq_device *dev, nv_dev *nv, nv_cubin *c, nv_prog *np, hcq_program *p, const void *bin,
                       size_t size)
{
    const char *id = dev->props.id;
    uint32_t dev_major = (nv->sm_version >> 8) & 0xf, dev_minor = nv->sm_version & 0xf;
    snprintf(p->info.name, sizeof p->info.name, "%s", c->name);
    /* SASS runs on its own major version at the same or a later minor */
    if (c->sm / 10 != dev_major || c->sm % 10 > dev_minor)
        return base_err(HCQ_EFORMAT, "%s: the cubin is for sm_%u, the device is %s: compile the kernel for %s", id,
                        c->sm, dev->props.arch, dev->props.target);
    /* the mock GPU runs SASS on its executor or as the cubin's host twin,
     * kernel IR as is; a cubin without a twin (built outside hcq) goes to
     * the executor where its decoder is */
    hcq_status s;
    bool sass = dev->props.is_mock && dev->mock_shader == DRV_SHADER_ISA;
    if (dev->props.is_mock && !sass && dev->mock_shader != DRV_SHADER_NONE && ir_blob_size(c->text, &(size_t){0}) != HCQ_OK &&
        (s = cc_twin_attach(bin, size, id))) {
        /* by default (not HCQ_MOCK_SHADER=twin) */
        char why[600];
        if (s != HCQ_ENOTSUP || base_env_get()->mock_shader_nv_kind != BASE_MOCK_SHADER_DEFAULT) return s;
        if (!sass_nvdisasm(why, sizeof why))
            return base_err(HCQ_ENOTSUP, "%s; nor can the mock's SASS executor run it: %s", hcq_error_message(), why);
        BASE_LOG(1, "%s: kernel `%s` has no host twin: the mock's SASS executor runs it", id, c->name);
        sass = true;
    }
    if (!c->have_cbank) c->param_base = nv->gen->param_base, c->cbuf0_bytes = BASE_MAX(c->cbuf0_bytes, c->param_base);
    if (c->shared_user > dev->props.max_local_bytes)
        return base_err(HCQ_ELIMIT, "%s: kernel `%s` needs %u bytes of shared memory; %s has %u per block", id,
                        c->name, c->shared_user, id, dev->props.max_local_bytes);
    np->param_base = c->param_base;
    np->cbuf0_bytes = c->cbuf0_bytes;
    if (np->param_base > sizeof np->cbuf0_prefix || np->cbuf0_bytes > 0x10000)
        return base_err(HCQ_EFORMAT, "%s: kernel `%s` puts its parameters at constant bank offset 0x%x (%u bytes)",
                        id, c->name, np->param_base, c->param_bytes);
    /* the device address first: relocations need it */
    s = nv_mem_alloc(dev, c->image_bytes, DRV_MEM_DEVICE | DRV_MEM_CODE, &np->image);
    if (!s) s = nv_cubin_relocate(c, np->image.va, id);
    /* the mock's executor runs the SASS as it lies in memory: decoded now
     * (once per code blob; an error here rather than at the launch), and
     * the cubin registered so the launch is checked against it */
    if (!s && sass && ir_blob_size(c->text, &(size_t){0}) != HCQ_OK) {
        const sass_prog *sp;
        s = sass_decode(c->image + c->sec_off[c->text_index], c->text_bytes, c->sm, c->name, &sp);
        if (!s) s = sass_attach(sp, bin, size, c->name);
        if (s) base_err_prefix(s, "%s: kernel `%s` for the mock's SASS executor", id, c->name);
    }
    if (!s) s = upload(dev, c->image, c->image_bytes, &np->image);
    if (s) return s;
    np->code_va = np->image.va + c->sec_off[c->text_index];
    np->code_bytes = (uint32_t)c->text_bytes;
    /* local memory per thread: the stack below the initial stack pointer
     * plus the ABI's reserve above it; under NV_LOCAL_MIN every launch has
     * the reserve, stack or not */
    uint32_t slm = c->stack || nv->path.local == NV_LOCAL_MIN
                       ? (uint32_t)base_align_up(c->stack + NV_LOCAL_RESERVE, 32)
                       : 0;
    if (slm && (s = nv_local_ensure(dev, nv, slm))) return s;
    build_template(nv, np, np->code_va, c->regs, (uint32_t)base_align_up(SHARED_RESERVED + c->shared_user, 128), slm,
                   c->barriers);
    bind_cbanks(nv, np, &c->e, c->sec_off);
    memset(np->cbuf0_prefix, 0, sizeof np->cbuf0_prefix);
    if (np->param_base >= 0x30) { /* the windows the SASS reads, and the initial stack pointer */
        uint64_t w[2] = {NV_SHARED_WINDOW, NV_LOCAL_WINDOW};
        uint32_t sp = NV_CBUF0_STACK_INIT;
        memcpy(np->cbuf0_prefix + 0x18, w, 16);
        memcpy(np->cbuf0_prefix + 0x28, &sp, 4);
    }
    p->params = base_calloc(c->nparams ? c->nparams : 1, sizeof *p->params);
    if (!p->params) return HCQ_ENOMEM;
    memcpy(p->params, c->params, c->nparams * sizeof *p->params);
    p->info.nparams = c->nparams;
    p->info.kernarg_bytes = c->param_bytes;
    p->info.registers = c->regs;
    p->info.local_bytes = c->shared_user;
    p->info.code_bytes = np->code_bytes;
    snprintf(p->info.target, sizeof p->info.target, "%s", dev->props.target);
    uint32_t per_warp = (uint32_t)base_align_up(BASE_MAX(c->regs, 1u) * 32, 256);
    uint32_t limit = 65536 / per_warp / 4 * 4 * 32;
    p->info.max_threads = BASE_MIN(limit, dev->props.max_threads_per_group);
    return HCQ_OK;
}

hcq_status nv_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p)
{
    nv_dev *nv = nv_of(dev);
    nv_cubin c;
    hcq_status s = nv_cubin_parse(bin, size, dev->props.id, kernel, &c);
    if (s) {
        if (s == HCQ_EFORMAT && !strstr(hcq_error_message(), "compile the kernel"))
            base_err_prefix(s, "%s: compile the kernel for %s", dev->props.id, dev->props.target);
        return s;
    }
    nv_prog *np = base_calloc(1, sizeof *np);
    if (!np) {
        nv_cubin_free(&c);
        return HCQ_ENOMEM;
    }
    np->magic = NV_PROG_MAGIC;
    p->priv = np;
    s = load(dev, nv, &c, np, p, bin, size);
    p->launch_addr = np->code_va; /* the QMD's PROGRAM_ADDRESS */
    nv_cubin_free(&c);
    if (s) nv_program_free(dev, p);
    return s;
}

void nv_program_free(hcq_device *dev, hcq_program *p)
{
    nv_prog *np = p->priv;
    if (!np) return;
    if (np->image.size) nv_mem_free(dev, &np->image);
    np->magic = 0;
    free(np);
    free(p->params);
    p->params = NULL;
    p->priv = NULL;
}
