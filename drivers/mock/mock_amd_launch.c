/* The AMD mock's side of a DISPATCH_DIRECT whose program address holds the
 * machine code of a real code object the process loaded: the registers
 * the command processor collected are checked against the code object's
 * kernel descriptor as the hardware would fail them (VGPR and SGPR
 * granules in COMPUTE_PGM_RSRC1, the user SGPRs and LDS in RSRC2, the wave
 * size, scratch set up where the kernel has a private segment), the
 * kernarg pointer is read from the user SGPR the descriptor puts it in,
 * the explicit arguments from the kernarg segment at the metadata's
 * offsets and the implicit ones after them, and the code object's host
 * twin (the HIP text) runs. Field layouts: llvm-project
 * llvm/docs/AMDGPUUsage.rst ("Kernel Descriptor", "Initial Kernel
 * Execution State"). */
#include "drivers/mock/mock_amd.h"

#include "base/base.h"
#include "compiler/mock_amd_code.h"
#include "drivers/amd/amd.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* what the code needs, parsed once per registered code object */
typedef struct kinfo {
    amd_co co;
    amd_sgpr_layout sgprs;
    uint32_t implicit_off; /* the first hidden argument: where implicitarg_ptr points */
    bool has_implicit;
    /* the image from its start to the code entry (the kernel descriptor,
     * the metadata note, constant tables) as the loader places it at
     * address 0, and the offsets in it of 8-byte words the loader
     * relocates (base address + addend): what tells apart code objects
     * whose machine code is the same */
    uint8_t *head;
    uint64_t *relocs;
    uint32_t nrelocs;
} kinfo;

/* (a kinfo lives as long as its twin: the twin table keeps entries) */
static bool parse_head(const cc_twin_entry *e, kinfo *ki)
{
    /* placed at two bases, a relocated word differs by exactly the bases'
     * difference read at its own offset (read a byte early or late, the
     * difference is shifted), and nothing else differs */
    const uint64_t other = 1ull << 40, n = ki->co.entry_offset, size = ki->co.image_size ? ki->co.image_size : 1;
    uint8_t *moved = malloc(size);
    if (!(ki->head = malloc(size)) || !moved || !(ki->relocs = malloc((n / 8 + 1) * sizeof *ki->relocs))) {
        free(moved);
        return false;
    }
    amd_co_place(e->binary, e->binary_size, ki->head, 0, ki->co.image_size);
    amd_co_place(e->binary, e->binary_size, moved, other, ki->co.image_size);
    for (uint64_t off = 0; off + 8 <= n; off++) {
        uint64_t a, b;
        memcpy(&a, ki->head + off, 8), memcpy(&b, moved + off, 8);
        if (b - a == other) ki->relocs[ki->nrelocs++] = off, off += 7;
    }
    free(moved);
    return true;
}

static const kinfo *info_of(const cc_twin_entry *e, char *err, size_t err_size)
{
    cc_twin_entry *me = (cc_twin_entry *)e;
    kinfo *ki = atomic_load(&me->mock_info);
    if (ki) return ki;
    if (!(ki = calloc(1, sizeof *ki))) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    if (amd_co_parse(e->binary, e->binary_size, NULL, &ki->co)) {
        snprintf(err, err_size, "%s", hcq_error_message());
        free(ki);
        return NULL;
    }
    amd_sgpr_layout_of(ki->co.kd.kernel_code_properties, &ki->sgprs);
    ki->implicit_off = UINT32_MAX;
    for (uint32_t i = 0; i < ki->co.nhidden; i++)
        if (ki->co.hidden[i].offset < ki->implicit_off) ki->implicit_off = ki->co.hidden[i].offset;
    ki->has_implicit = ki->co.nhidden > 0;
    if (!parse_head(e, ki)) {
        snprintf(err, err_size, "out of host memory");
        free(ki->head), free(ki->relocs), amd_co_free(&ki->co), free(ki);
        return NULL;
    }
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&me->mock_info, &expected, ki)) {
        amd_co_free(&ki->co);
        free(ki->head), free(ki->relocs);
        free(ki);
        ki = expected;
    }
    return ki;
}

static uint32_t reg(const mock_amd_cp *cp, amd_reg id)
{
    return cp->regs[amd_regs[id].off[cp->q->gpu->arch->family] - AMD_SH_REG_BASE];
}

static int stop(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static int stop(mock_amd_cp *cp, const char *fmt, ...)
{
    char why[768], msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "xcc %u: %s", cp->xcc, why);
    mock_amd_hang(cp->q, msg);
    return 1;
}

/* the dispatch as the hardware would take it; 0 or stopped */
static int check(mock_amd_cp *cp, const kinfo *ki, uint32_t initiator)
{
    const mock_amd_gpu *g = cp->q->gpu;
    const amd_arch *a = g->arch;
    const amd_co *co = &ki->co;
    const amd_kernel_descriptor *kd = &co->kd;
    const char *n = co->name;
    if (co->mach != a->elf_mach) {
        const char *m = amd_co_mach_name(co->mach);
        return stop(cp, "kernel `%s`: illegal instruction: the program is %s code; the GPU is %s", n,
                    m ? m : "another GPU's", g->model->name);
    }
    uint32_t r1 = reg(cp, AMD_REG_PGM_RSRC1), r2 = reg(cp, AMD_REG_PGM_RSRC2);
    uint32_t v = amd_fget(AMD_RSRC1_VGPRS, r1), vk = amd_fget(AMD_RSRC1_VGPRS, kd->compute_pgm_rsrc1);
    if (v < vk)
        return stop(cp, "kernel `%s`: COMPUTE_PGM_RSRC1.VGPRS allocates %u VGPR granules; its descriptor needs %u", n, v,
                    vk);
    uint32_t s = amd_fget(AMD_RSRC1_SGPRS, r1), sk = amd_fget(AMD_RSRC1_SGPRS, kd->compute_pgm_rsrc1);
    if (s < sk)
        return stop(cp, "kernel `%s`: COMPUTE_PGM_RSRC1.SGPRS allocates %u SGPR granules; its descriptor needs %u", n, s,
                    sk);
    /* the code finds the work-group ids in the SGPRs after the user ones:
     * the count it was compiled for is the descriptor's */
    uint32_t user = amd_fget(AMD_RSRC2_USER_SGPR, r2), uk = amd_fget(AMD_RSRC2_USER_SGPR, kd->compute_pgm_rsrc2);
    if (user != uk || user < ki->sgprs.count)
        return stop(cp, "kernel `%s`: COMPUTE_PGM_RSRC2.USER_SGPR loads %u user SGPRs; its descriptor says %u (%u of "
                    "them laid out)", n, user, uk, ki->sgprs.count);
    uint32_t lds = amd_fget(AMD_RSRC2_LDS_SIZE, r2) * AMD_LDS_BLOCK_BYTES;
    if (lds < kd->group_segment_fixed_size)
        return stop(cp, "kernel `%s`: COMPUTE_PGM_RSRC2.LDS_SIZE allocates %u bytes of LDS; it uses %u", n, lds,
                    kd->group_segment_fixed_size);
    if (lds > g->model->lds_kib * 1024)
        return stop(cp, "kernel `%s`: COMPUTE_PGM_RSRC2.LDS_SIZE allocates %u bytes of LDS; a %s work-group has %u KiB",
                    n, lds, g->model->name, g->model->lds_kib);
    bool w32 = amd_fget(AMD_INIT_CS_W32_EN, initiator), kw32 = kd->kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32;
    if (a->family == AMD_FAMILY_GFX11 ? w32 != kw32 : w32)
        return stop(cp, "kernel `%s`: DISPATCH_INITIATOR.CS_W32_EN is %d for a wave%d kernel", n, w32, kw32 ? 32 : 64);
    uint32_t lane = kd->private_segment_fixed_size;
    if (kd->kernel_code_properties & AMD_KCP_USES_DYNAMIC_STACK) lane = BASE_MAX(lane, 1u);
    if (lane) {
        uint32_t tmp = reg(cp, AMD_REG_TMPRING_SIZE);
        amd_field wsf = a->family == AMD_FAMILY_GFX11 ? AMD_TMPRING_WAVESIZE_GFX11 : AMD_TMPRING_WAVESIZE_GFX9;
        uint64_t wave_bytes = (uint64_t)amd_fget(wsf, tmp) * a->scratch_unit;
        uint64_t need = (uint64_t)kd->private_segment_fixed_size * (kw32 ? 32 : 64);
        uint64_t base = (uint64_t)reg(cp, AMD_REG_DISPATCH_SCRATCH_BASE_LO) << 8 |
                        (uint64_t)reg(cp, AMD_REG_DISPATCH_SCRATCH_BASE_HI) << 40;
        if (!amd_fget(AMD_RSRC2_SCRATCH_EN, r2))
            return stop(cp, "kernel `%s` has a %u-byte private segment, but COMPUTE_PGM_RSRC2.SCRATCH_EN is 0", n,
                        kd->private_segment_fixed_size);
        if (!amd_fget(AMD_TMPRING_WAVES, tmp) || wave_bytes < need)
            return stop(cp, "kernel `%s` needs %llu bytes of scratch per wave; COMPUTE_TMPRING_SIZE (0x%x) gives %llu "
                        "bytes to %u waves", n, (unsigned long long)need, tmp, (unsigned long long)wave_bytes,
                        amd_fget(AMD_TMPRING_WAVES, tmp));
        char why[256];
        if (!base || !mock_gpu_access(g->g, base, need, true, why, sizeof why))
            return stop(cp, "kernel `%s`: COMPUTE_DISPATCH_SCRATCH_BASE 0x%llx is no scratch the GPU may write%s%s", n,
                        (unsigned long long)base, base ? ": " : "", base ? why : "");
        int8_t fs = ki->sgprs.first[AMD_SGPR_PRIVATE_SEGMENT_BUFFER];
        if (fs >= 0) {
            const uint32_t *ud = &cp->regs[amd_regs[AMD_REG_USER_DATA_0].off[a->family] - AMD_SH_REG_BASE];
            if (!mock_amd_scratch_srd_ok(a->family, &ud[fs], why, sizeof why))
                return stop(cp, "kernel `%s`: the scratch buffer resource in user SGPRs %d-%d: %s", n, fs, fs + 3, why);
        }
    }
    return 0;
}

bool mock_amd_scratch_srd_ok(amd_family fam, const uint32_t w[4], char *why, size_t size)
{
    if (fam != AMD_FAMILY_GFX9) return true; /* gfx10/11's word 3 is tinygrad's value, not checked here */
    const char *bad = NULL;
    if (!(w[1] >> 31)) bad = "SWIZZLE_ENABLE (word 1 bit 31) is 0";
    else if (!amd_fget(AMD_BUF3_ADD_TID_ENABLE, w[3])) bad = "ADD_TID_ENABLE is 0";
    else if (amd_fget(AMD_BUF3_GFX9_INDEX_STRIDE, w[3]) != AMD_BUF_INDEX_STRIDE_64) bad = "INDEX_STRIDE is not 64";
    else if (!amd_fget(AMD_BUF3_GFX9_DATA_FORMAT, w[3])) bad = "DATA_FORMAT is INVALID (0)";
    if (!bad) return true;
    snprintf(why, size, "word 3 0x%08x read in gfx9's layout: %s (INDEX_STRIDE %u lanes, DATA_FORMAT %u)", w[3], bad,
             8u << amd_fget(AMD_BUF3_GFX9_INDEX_STRIDE, w[3]), amd_fget(AMD_BUF3_GFX9_DATA_FORMAT, w[3]));
    return false;
}

int mock_amd_run_twin(mock_amd_cp *cp, const cc_twin_entry *e, const uint32_t grid[3], const uint32_t block[3],
                      uint32_t initiator, const mock_split *split)
{
    mock_amd_queue *q = cp->q;
    char err[512];
    const kinfo *ki = info_of(e, err, sizeof err);
    if (!ki) return stop(cp, "DISPATCH_DIRECT: the code object of the program: %s", err);
    if (check(cp, ki, initiator)) return 1;
    const amd_co *co = &ki->co;
    const cc_twin_module *mod = &e->mod;
    if (mod->nparams != co->nparams)
        return stop(cp, "kernel `%s`: its host twin takes %u arguments, its code object %u", co->name, mod->nparams,
                    co->nparams);
    for (uint32_t i = 0; i < co->nparams; i++)
        if ((mod->meta[CC_TWIN_META_PARAMS + i] & 0xffffu) != co->params[i].size)
            return stop(cp, "kernel `%s`: argument %u is %u bytes in its code object, %u in its host twin", co->name, i,
                        co->params[i].size, mod->meta[CC_TWIN_META_PARAMS + i] & 0xffffu);
    /* the kernarg pointer, where the descriptor has the code look for it */
    int8_t f = ki->sgprs.first[AMD_SGPR_KERNARG_PTR];
    const uint32_t *ud = &cp->regs[amd_regs[AMD_REG_USER_DATA_0].off[q->gpu->arch->family] - AMD_SH_REG_BASE];
    uint64_t ka = f >= 0 ? ud[f] | (uint64_t)ud[f + 1] << 32 : 0;
    uint32_t kb = co->kernarg_bytes;
    if (kb && f < 0) return stop(cp, "kernel `%s` has %u kernarg bytes and no kernarg pointer", co->name, kb);
    if (kb && !mock_amd_access(q, ka, kb, false, "reading the kernarg segment")) return 1;
    /* the arguments as the dispatch starts; the implicit ones beyond the
     * segment (a code object without them) read as zero */
    size_t snap_size = (size_t)BASE_MAX(kb, (ki->has_implicit ? ki->implicit_off : kb) + 256u);
    uint8_t *snap = calloc(1, snap_size);
    const void **args = calloc(co->nparams ? co->nparams : 1, sizeof *args);
    if (!snap || !args) {
        free(snap);
        free(args);
        return stop(cp, "the mock ran out of host memory for a dispatch");
    }
    if (kb) memcpy(snap, (const void *)(uintptr_t)ka, kb);
    for (uint32_t i = 0; i < co->nparams; i++) args[i] = snap + co->params[i].offset;
    mock_twin_launch ml = {.e = e, .args = args, .implicit = snap + (ki->has_implicit ? ki->implicit_off : kb),
                           .barriers = 16 /* s_barrier has no count to exceed */, .split = split};
    memcpy(ml.grid, grid, sizeof ml.grid);
    memcpy(ml.block, block, sizeof ml.block);
    mock_fault mf;
    cc_twin_fault tf;
    hcq_status s = mock_twin_run(q->gpu->g, &ml, &mf, &tf);
    free(snap);
    free(args);
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_GLOBAL) {
        char what[900];
        snprintf(what, sizeof what, "%s xcc %u: %s", q->name, cp->xcc, mf.what);
        mock_amd_memory_fault(q->gpu, mf.va, strstr(mf.what, "read-only") != NULL, what);
        return 1;
    }
    if (s == HCQ_ESTATE) return 1; /* cancelled: the queue is being destroyed; nothing to report */
    if (s == HCQ_EFAULT && tf.kind == CC_TWIN_FAULT_WARP) /* as the ISA executor reports WMMA/MFMA by part of EXEC */
        return stop(cp, "DISPATCH_DIRECT: illegal instruction: %s", mf.what);
    if (s == HCQ_EFAULT) return stop(cp, "DISPATCH_DIRECT: memory violation: %s", mf.what);
    if (s) return stop(cp, "DISPATCH_DIRECT: %s", hcq_error_message());
    return 0;
}

/* mock code: a header saying how the IR after it wants to run
 * (compiler/mock_amd_code.h), checked against the registers as real code
 * would find them */
static int run_mock_code(mock_amd_cp *cp, const mock_amd_dispatch *d)
{
    mock_amd_queue *q = cp->q;
    const amd_arch *a = q->gpu->arch;
    if (!mock_amd_access(q, d->entry, sizeof(cc_mock_amd_code), false, "fetching the program")) return 1;
    cc_mock_amd_code h;
    memcpy(&h, (const void *)(uintptr_t)d->entry, sizeof h);
    if (memcmp(h.magic, CC_MOCK_AMD_MAGIC, 8))
        return stop(cp, "%s: COMPUTE_PGM_LO/HI point at 0x%llx, which holds neither mock code nor the machine code of a "
                    "code object the process loaded (a wrong program address?)", d->via, (unsigned long long)d->entry);
    uint32_t rsrc2 = reg(cp, AMD_REG_PGM_RSRC2), user = amd_fget(AMD_RSRC2_USER_SGPR, rsrc2);
    if (h.kernarg_sgpr + 2 > user || h.kernarg_sgpr + 2 > AMD_USER_DATA_COUNT)
        return stop(cp, "%s: the kernel reads its kernarg pointer from s[%u:%u], but RSRC2.USER_SGPR loads %u user SGPRs",
                    d->via, h.kernarg_sgpr, h.kernarg_sgpr + 1, user);
    uint32_t lds = amd_fget(AMD_RSRC2_LDS_SIZE, rsrc2) * AMD_LDS_BLOCK_BYTES;
    if (lds < h.local_bytes)
        return stop(cp, "%s: RSRC2.LDS_SIZE allocates %u bytes of LDS; the kernel uses %u", d->via, lds, h.local_bytes);
    bool w32 = amd_fget(AMD_INIT_CS_W32_EN, d->initiator);
    if (a->family == AMD_FAMILY_GFX11 ? w32 != !!(h.flags & CC_MOCK_AMD_WAVE32) : w32)
        return stop(cp, "%s: CS_W32_EN is %d for a wave%d kernel", d->via, w32, h.flags & CC_MOCK_AMD_WAVE32 ? 32 : 64);
    const uint32_t *ud = &cp->regs[amd_regs[AMD_REG_USER_DATA_0].off[a->family] - AMD_SH_REG_BASE];
    uint64_t kernargs = ud[h.kernarg_sgpr] | (uint64_t)ud[h.kernarg_sgpr + 1] << 32;
    mock_fault f;
    hcq_status s = mock_shader_run_split(q->gpu->g, d->entry + h.ir_offset, kernargs, d->grid, d->block, &d->split, &f);
    if (s == HCQ_ESTATE) return 1; /* cancelled: the queue is being destroyed */
    if (s == HCQ_EFAULT) { /* (!f.mmu: the interpreter's own refusal, e.g. a misaligned vector the hardware's
                              unaligned mode would run: the IR's rule is stricter, and a memory violation is the
                              nearest thing the driver reports) */
        char what[900];
        snprintf(what, sizeof what, "%s xcc %u: %s", q->name, cp->xcc, f.what);
        mock_amd_memory_fault(q->gpu, f.va, strstr(f.what, "read-only") != NULL, what);
        return 1;
    }
    if (s) return stop(cp, "%s: %s", d->via, hcq_error_message());
    return 0;
}

/* whether the program address holds mock code (its header's magic); an
 * address the GPU cannot read is left to run_mock_code's fault */
static bool is_mock_code(mock_amd_cp *cp, uint64_t entry)
{
    char magic[8] = {0}, why[256];
    if (!mock_gpu_access(cp->q->gpu->g, entry, sizeof magic, false, why, sizeof why)) return true;
    memcpy(magic, (const void *)(uintptr_t)entry, sizeof magic);
    return !memcmp(magic, CC_MOCK_AMD_MAGIC, 8);
}

/* whether the image around the program address is the twin's code
 * object's: several code objects can hold the same machine code (a
 * kernel whose result does not depend on some of its parameters drops
 * their loads), and their twins differ in the arguments they read, so a
 * launch runs the twin of the code object the loader placed there */
typedef struct head_ctx {
    mock_gpu *gpu;
    uint64_t entry;
} head_ctx;

static bool same_head(const cc_twin_entry *e, void *ctx)
{
    const head_ctx *h = ctx;
    char err[512];
    const kinfo *ki = info_of(e, err, sizeof err);
    if (!ki) return false;
    uint64_t n = ki->co.entry_offset, base = h->entry - n;
    if (h->entry < n || !mock_gpu_access(h->gpu, base, n, false, err, sizeof err)) return false;
    const uint8_t *at = (const uint8_t *)(uintptr_t)base;
    uint64_t from = 0;
    for (uint32_t i = 0; i <= ki->nrelocs; i++) {
        uint64_t to = i < ki->nrelocs ? ki->relocs[i] : n;
        if (memcmp(at + from, ki->head + from, to - from)) return false;
        if (i == ki->nrelocs) break;
        uint64_t placed, want;
        memcpy(&placed, at + to, 8), memcpy(&want, ki->head + to, 8);
        if (placed - base != want) return false;
        from = to + 8;
    }
    return true;
}

int mock_amd_launch(mock_amd_cp *cp, const mock_amd_dispatch *d)
{
    /* by default (compiler/isa.h) and with HCQ_MOCK_SHADER=isa: all machine code on the ISA executor */
    if (mock_amd_isa_on(cp->q->gpu) && !is_mock_code(cp, d->entry))
        return mock_amd_isa_run(cp, d->entry, d->grid, d->block, d->initiator, &d->split, d->via, NULL);
    /* the machine code of a code object the process loaded: its host twin */
    head_ctx hc = {cp->q->gpu->g, d->entry};
    const cc_twin_entry *e = mock_twin_at_if(cp->q->gpu->g, d->entry, same_head, &hc);
    /* (pinned to twins, machine code placed otherwise, e.g. by another
     * loader, still runs a twin of its code) */
    if (!e && base_env_get()->mock_shader_amd_kind != BASE_MOCK_SHADER_DEFAULT) e = mock_twin_at(cp->q->gpu->g, d->entry);
    if (e) return mock_amd_run_twin(cp, e, d->grid, d->block, d->initiator, &d->split);
    /* machine code no twin was made for (a program's own code object on
     * the preloaded mock, hipcc's): the ISA executor runs it, as the
     * hardware would, unless the shader was pinned to twins or IR */
    if (!is_mock_code(cp, d->entry) && base_env_get()->mock_shader_amd_kind == BASE_MOCK_SHADER_DEFAULT)
        return mock_amd_isa_run(cp, d->entry, d->grid, d->block, d->initiator, &d->split, d->via, NULL);
    return run_mock_code(cp, d);
}
