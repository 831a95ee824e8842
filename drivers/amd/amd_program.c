/* Programs: a code object parsed (amd_co.c), its image placed in
 * CPU-visible device memory as linked, and the dispatch registers worked
 * out once from the kernel descriptor. Scratch for kernels with a private
 * segment is sized as tinygrad does (ops_amd.py _ensure_has_local_memory,
 * ../shared/reference/amd-facts.md §2.6). */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "compiler/code_names.h"
#include "compiler/twin.h"

#include <stdlib.h>
#include <string.h>

/* Mock code objects carry this at their entry instead of machine code
 * (compiler/target_amd.c writes it): the loader refuses them on real GPUs;
 * the mock runs either (machine code as the code object's host twin). */
#define MOCK_CODE_MAGIC "HCQMOCK1"

static uint32_t register_name(amd_dev *ad, const char *name)
{
    pthread_mutex_lock(&ad->names_lock);
    uint32_t id = ad->nprog_names;
    if (id == ad->cap_prog_names) {
        uint32_t cap = ad->cap_prog_names ? ad->cap_prog_names * 2 : 32;
        char(*n)[64] = realloc(ad->prog_names, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&ad->names_lock);
            return UINT32_MAX;
        }
        ad->prog_names = n;
        ad->cap_prog_names = cap;
    }
    snprintf(ad->prog_names[id], 64, "%s", name);
    ad->nprog_names++;
    pthread_mutex_unlock(&ad->names_lock);
    return id;
}

const char *amd_prog_name(amd_dev *ad, uint32_t id, char *buf, size_t size)
{
    pthread_mutex_lock(&ad->names_lock);
    const char *r = NULL;
    if (id < ad->nprog_names) {
        snprintf(buf, size, "%s", ad->prog_names[id]);
        r = buf;
    }
    pthread_mutex_unlock(&ad->names_lock);
    return r;
}

static hcq_status check(amd_dev *ad, amd_prog *ap, const void *image, const void *bin, size_t size)
{
    const amd_co *co = &ap->co;
    const hcq_device_props *pr = &ad->dev->props;
    const char *want = amd_co_mach_name(co->mach);
    if (co->mach != ad->arch->elf_mach)
        return base_err(HCQ_EFORMAT, "`%s` is a code object for %s (EF_AMDGPU_MACH 0x%02x); %s is %s: compile the "
                        "kernel for target %s", co->name, want ? want : "another GPU", co->mach, pr->id, pr->arch,
                        pr->target);
    bool mock_code = !memcmp((const uint8_t *)image + co->entry_offset, MOCK_CODE_MAGIC, 8);
    if (mock_code && !pr->is_mock)
        return base_err(HCQ_EFORMAT, "`%s` is a mock code object (IR for the mock GPU, target mock-%s); %s runs "
                        "machine code: compile the kernel for target %s", co->name, pr->arch, pr->id, pr->target);
    /* the mock GPU runs machine code on its ISA executor, or as the code
     * object's host twin */
    hcq_status s;
    if (!mock_code && pr->is_mock && ad->dev->mock_shader != DRV_SHADER_ISA && ad->dev->mock_shader != DRV_SHADER_NONE &&
        (s = cc_twin_attach(bin, size, pr->id)))
        return s;
    if (co->kd.group_segment_fixed_size > pr->max_local_bytes)
        return base_err(HCQ_ELIMIT, "kernel `%s` needs %u bytes of LDS; %s has %u per work-group", co->name,
                        co->kd.group_segment_fixed_size, pr->id, pr->max_local_bytes);
    uint32_t user = amd_fget(AMD_RSRC2_USER_SGPR, co->kd.compute_pgm_rsrc2);
    if (ap->sgprs.count > user || ap->sgprs.count > AMD_USER_DATA_COUNT)
        return base_err(HCQ_EFORMAT, "kernel `%s`: its descriptor asks for %u user SGPRs but RSRC2 sets %u",
                        co->name, ap->sgprs.count, user);
    bool scratch = co->kd.private_segment_fixed_size || (co->kd.kernel_code_properties & AMD_KCP_USES_DYNAMIC_STACK);
    if (scratch && ap->sgprs.first[AMD_SGPR_FLAT_SCRATCH_INIT] >= 0)
        return base_err(HCQ_ENOTSUP, "kernel `%s` uses scratch through FLAT_SCRATCH_INIT (pre-gfx940 flat "
                        "scratch), which hcq does not set up; keep its private segment empty", co->name);
    return HCQ_OK;
}

hcq_status amd_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p)
{
    amd_dev *ad = amd_of(dev);
    amd_prog *ap = base_calloc(1, sizeof *ap);
    if (!ap) return HCQ_ENOMEM;
    ap->magic = AMD_PROG_MAGIC;
    p->priv = ap;
    hcq_status s = amd_co_parse(bin, size, kernel, &ap->co);
    if (s) {
        s = base_err_prefix(s, "%s", dev->props.id);
        goto fail;
    }
    amd_co *co = &ap->co;
    amd_sgpr_layout_of(co->kd.kernel_code_properties, &ap->sgprs);
    s = amd_mem_alloc(dev, co->image_size, DRV_MEM_DEVICE | DRV_MEM_CODE, &ap->code);
    if (s) {
        s = base_err_prefix(s, "loading `%s`", co->name);
        goto fail;
    }
    amd_co_place(bin, size, ap->code.cpu, ap->code.va, co->image_size);
    if ((s = check(ad, ap, ap->code.cpu, bin, size))) goto fail;
    ap->kd_va = ap->code.va + co->kd_offset;
    ap->entry_va = ap->code.va + co->entry_offset;
    p->launch_addr = ap->entry_va; /* COMPUTE_PGM_LO/HI << 8 */
    cc_code_name_add(ap->entry_va, co->name); /* (the mock's messages name it) */
    ap->id = register_name(ad, co->name);
    if (ap->id == UINT32_MAX) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    const amd_kernel_descriptor *kd = &co->kd;
    /* PRIV is the device's first-run path (amd_rec_exec) */
    ap->rsrc1 = kd->compute_pgm_rsrc1;
    /* the compiler leaves LDS_SIZE 0: the dispatcher fills it */
    uint32_t lds_blocks = (kd->group_segment_fixed_size + AMD_LDS_BLOCK_BYTES - 1) / AMD_LDS_BLOCK_BYTES;
    ap->rsrc2 = (kd->compute_pgm_rsrc2 & ~amd_fmask(AMD_RSRC2_LDS_SIZE)) | amd_fset(AMD_RSRC2_LDS_SIZE, lds_blocks);
    ap->rsrc3 = kd->compute_pgm_rsrc3;
    bool w32 = kd->kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32;
    ap->initiator = amd_fset(AMD_INIT_COMPUTE_SHADER_EN, 1) | amd_fset(AMD_INIT_FORCE_START_AT_000, 1) |
                    (w32 && ad->arch->family == AMD_FAMILY_GFX11 ? amd_fset(AMD_INIT_CS_W32_EN, 1) : 0);

    hcq_program_info *in = &p->info;
    snprintf(in->name, sizeof in->name, "%s", co->name);
    snprintf(in->target, sizeof in->target, "%s", dev->props.target);
    in->nparams = co->nparams;
    in->kernarg_bytes = co->kernarg_bytes;
    in->max_threads = co->max_flat_workgroup_size ? BASE_MIN(co->max_flat_workgroup_size, 1024u) : 1024;
    in->local_bytes = kd->group_segment_fixed_size;
    in->registers = co->vgprs;
    in->code_bytes = (uint32_t)BASE_MIN(co->image_size, UINT32_MAX);
    p->params = co->params; /* the program owns them now */
    co->params = NULL;
    if (!p->params && !(p->params = base_calloc(1, sizeof *p->params))) {
        s = HCQ_ENOMEM;
        goto fail;
    }
    return HCQ_OK;
fail:
    amd_program_free(dev, p);
    return s;
}

void amd_program_free(hcq_device *dev, hcq_program *p)
{
    amd_prog *ap = p->priv;
    if (!ap) return;
    if (ap->entry_va) cc_code_name_remove(ap->entry_va);
    if (ap->code.size) amd_mem_free(dev, &ap->code);
    amd_co_free(&ap->co);
    ap->magic = 0;
    free(ap);
    free(p->params);
    p->params = NULL;
    p->priv = NULL;
}

hcq_status amd_scratch_ensure(amd_dev *ad, uint32_t lane_bytes, uint64_t *va, uint64_t *per_xcc_out,
                              uint32_t *tmpring)
{
    const amd_arch *a = ad->arch;
    const amd_node *n = &ad->node;
    /* per work-item size in units of 1/64 of the wave-size unit, rounded to
     * a power of two so the buffer regrows rarely */
    uint32_t unit = a->scratch_unit / 64, lane = unit;
    while (lane < lane_bytes) lane *= 2;
    pthread_mutex_lock(&ad->scratch_lock);
    hcq_status s = HCQ_OK;
    if (ad->scratch_lane_bytes < lane) {
        uint32_t slots = n->max_slots_scratch_cu ? n->max_slots_scratch_cu : 32;
        uint64_t per_xcc = (uint64_t)lane * 64 * slots * BASE_MAX(n->cu_per_xcc, 1u);
        uint32_t wavesize = (64 * lane + a->scratch_unit - 1) / a->scratch_unit;
        amd_field wsf = a->family == AMD_FAMILY_GFX11 ? AMD_TMPRING_WAVESIZE_GFX11 : AMD_TMPRING_WAVESIZE_GFX9;
        /* gfx11 counts waves per shader engine, gfx9 per device */
        uint64_t waves = per_xcc / ((uint64_t)wavesize * a->scratch_unit) /
                         (a->family == AMD_FAMILY_GFX11 ? BASE_MAX(n->se_per_xcc, 1u) : 1u);
        waves = BASE_MIN(waves, (uint64_t)BASE_MAX(n->cu_count, 1u) * slots);
        waves = BASE_MIN(waves, 0xfffu);
        if (!amd_ffits(wsf, wavesize)) {
            s = base_err(HCQ_ELIMIT, "%s: a kernel needs %u bytes of scratch per work-item, more than the hardware "
                         "addresses", ad->dev->props.id, lane_bytes);
            goto out;
        }
        drv_mem m;
        s = amd_bo_alloc(ad, per_xcc * n->num_xcc,
                         KFD_ALLOC_VRAM | KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE | KFD_ALLOC_NO_SUBSTITUTE, false, &m);
        if (s) {
            s = base_err_prefix(s, "%s: scratch for %u bytes per work-item", ad->dev->props.id, lane);
            goto out;
        }
        if (ad->scratch.size) {
            /* dispatches in flight may still use it: keep it until close */
            drv_mem *o = base_realloc_array(ad->old_scratch, ad->nold_scratch + 1, sizeof *o);
            if (!o) {
                amd_bo_free(ad, &m);
                s = HCQ_ENOMEM;
                goto out;
            }
            ad->old_scratch = o;
            o[ad->nold_scratch++] = ad->scratch;
        }
        ad->scratch = m;
        ad->scratch_lane_bytes = lane;
        ad->scratch_per_xcc = per_xcc;
        ad->scratch_tmpring = amd_fset(AMD_TMPRING_WAVES, (uint32_t)waves) | amd_fset(wsf, wavesize);
    }
    *va = ad->scratch.va;
    *per_xcc_out = ad->scratch_per_xcc;
    *tmpring = ad->scratch_tmpring;
out:
    pthread_mutex_unlock(&ad->scratch_lock);
    return s;
}
