/* AMDGPU code objects: the loadable image (PT_LOAD segments placed as
 * linked, or SHF_ALLOC sections at their addresses for relocatable
 * objects), the kernel descriptor at `<kernel>.kd`, and the kernel's
 * arguments from the NT_AMDGPU_METADATA note, a MessagePack map
 * (llvm-project llvm/docs/AMDGPUUsage.rst, "Code Object V4 Metadata" and
 * later; ELF note type 32, owner "AMDGPU"). Everything read from the file is
 * bounds-checked: malformed input is HCQ_EFORMAT. */
#include "drivers/amd/amd.h"

#include "base/base.h"
#include "compiler/elf.h"

#include <stdlib.h>
#include <string.h>

#define NT_AMDGPU_METADATA 32u
#define R_AMDGPU_RELATIVE64 13u

const char *amd_co_mach_name(uint8_t mach)
{
    const amd_chip *c = amd_chip_by_mach(mach);
    return c ? c->name : NULL;
}

/* ** a small MessagePack reader: every read checks the bounds */
typedef struct mp {
    const uint8_t *p, *end;
    bool bad;
} mp;

static uint64_t mp_be(mp *m, unsigned n)
{
    if ((size_t)(m->end - m->p) < n) {
        m->bad = true;
        m->p = m->end;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v = v << 8 | m->p[i];
    m->p += n;
    return v;
}

static uint8_t mp_byte(mp *m) { return (uint8_t)mp_be(m, 1); }

/* A string: true with s/len, else false (m unchanged unless bad). */
static bool mp_str(mp *m, const char **s, uint32_t *len)
{
    if (m->p >= m->end) return m->bad = true, false;
    uint8_t t = *m->p;
    uint64_t n;
    if (t >= 0xa0 && t <= 0xbf) {
        m->p++;
        n = t & 0x1f;
    } else if (t == 0xd9 || t == 0xda || t == 0xdb) {
        m->p++;
        n = mp_be(m, t == 0xd9 ? 1 : t == 0xda ? 2 : 4);
    } else {
        return false;
    }
    if ((uint64_t)(m->end - m->p) < n) return m->bad = true, false;
    *s = (const char *)m->p;
    *len = (uint32_t)n;
    m->p += n;
    return true;
}

static bool mp_uint(mp *m, uint64_t *v)
{
    if (m->p >= m->end) return m->bad = true, false;
    uint8_t t = *m->p;
    if (t <= 0x7f) {
        m->p++;
        *v = t;
    } else if (t >= 0xcc && t <= 0xcf) {
        m->p++;
        *v = mp_be(m, 1u << (t - 0xcc));
    } else if (t >= 0xd0 && t <= 0xd3) {
        m->p++;
        int64_t x = (int64_t)mp_be(m, 1u << (t - 0xd0));
        *v = (uint64_t)x;
    } else {
        return false;
    }
    return !m->bad;
}

/* map or array header: count of entries (pairs for maps) */
static bool mp_container(mp *m, bool map, uint64_t *n)
{
    if (m->p >= m->end) return m->bad = true, false;
    uint8_t t = *m->p;
    if (map && t >= 0x80 && t <= 0x8f) { m->p++; *n = t & 0xf; return true; }
    if (!map && t >= 0x90 && t <= 0x9f) { m->p++; *n = t & 0xf; return true; }
    if (t == (map ? 0xde : 0xdc)) { m->p++; *n = mp_be(m, 2); return !m->bad; }
    if (t == (map ? 0xdf : 0xdd)) { m->p++; *n = mp_be(m, 4); return !m->bad; }
    return false;
}

static void mp_skip(mp *m, int depth)
{
    if (depth > 32 || m->p >= m->end) {
        m->bad = true;
        return;
    }
    uint8_t t = mp_byte(m);
    uint64_t n = 0;
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) return;
    if (t >= 0xa0 && t <= 0xbf) n = t & 0x1f;
    else if (t >= 0x80 && t <= 0x9f) {
        uint64_t k = (t & 0xf) * (t < 0x90 ? 2u : 1u);
        for (uint64_t i = 0; i < k && !m->bad; i++) mp_skip(m, depth + 1);
        return;
    } else if (t == 0xc4 || t == 0xd9) n = mp_be(m, 1);
    else if (t == 0xc5 || t == 0xda) n = mp_be(m, 2);
    else if (t == 0xc6 || t == 0xdb) n = mp_be(m, 4);
    else if (t == 0xca) n = 4;
    else if (t == 0xcb) n = 8;
    else if (t >= 0xcc && t <= 0xcf) n = 1u << (t - 0xcc);
    else if (t >= 0xd0 && t <= 0xd3) n = 1u << (t - 0xd0);
    else if (t >= 0xd4 && t <= 0xd8) n = 1 + (1u << (t - 0xd4)); /* fixext: type + data */
    else if (t == 0xdc || t == 0xdd || t == 0xde || t == 0xdf) {
        uint64_t k = mp_be(m, t == 0xdc || t == 0xde ? 2 : 4) * (t >= 0xde ? 2u : 1u);
        for (uint64_t i = 0; i < k && !m->bad; i++) mp_skip(m, depth + 1);
        return;
    } else if (t >= 0xc7 && t <= 0xc9) n = mp_be(m, 1u << (t - 0xc7)) + 1; /* ext: type + data */
    else {
        m->bad = true;
        return;
    }
    if ((uint64_t)(m->end - m->p) < n) {
        m->bad = true;
        m->p = m->end;
        return;
    }
    m->p += n;
}

static bool key_is(const char *k, uint32_t len, const char *want)
{
    return strlen(want) == len && !memcmp(k, want, len);
}

/* the value, when it is an unsigned integer; else skips it */
static uint64_t mp_uint_or_skip(mp *m)
{
    uint64_t v = 0;
    if (!mp_uint(m, &v)) mp_skip(m, 0);
    return v;
}

static const struct {
    const char *name;
    enum amd_hidden kind;
} hidden_kinds[] = {
    {"hidden_block_count_x", AMD_HID_BLOCK_COUNT_X}, {"hidden_block_count_y", AMD_HID_BLOCK_COUNT_Y},
    {"hidden_block_count_z", AMD_HID_BLOCK_COUNT_Z}, {"hidden_group_size_x", AMD_HID_GROUP_SIZE_X},
    {"hidden_group_size_y", AMD_HID_GROUP_SIZE_Y},   {"hidden_group_size_z", AMD_HID_GROUP_SIZE_Z},
    {"hidden_remainder_x", AMD_HID_REMAINDER_X},     {"hidden_remainder_y", AMD_HID_REMAINDER_Y},
    {"hidden_remainder_z", AMD_HID_REMAINDER_Z},     {"hidden_grid_dims", AMD_HID_GRID_DIMS},
};

static hcq_status parse_arg(mp *m, amd_co *co, uint32_t index)
{
    uint64_t n, offset = UINT64_MAX, size = 0;
    const char *kind = NULL;
    uint32_t kind_len = 0;
    if (!mp_container(m, true, &n)) return base_err(HCQ_EFORMAT, "code object metadata: argument %u is not a map", index);
    for (uint64_t i = 0; i < n && !m->bad; i++) {
        const char *k;
        uint32_t kl;
        if (!mp_str(m, &k, &kl)) return base_err(HCQ_EFORMAT, "code object metadata: a key of argument %u is not a string", index);
        if (key_is(k, kl, ".offset")) offset = mp_uint_or_skip(m);
        else if (key_is(k, kl, ".size")) size = mp_uint_or_skip(m);
        else if (key_is(k, kl, ".value_kind")) {
            if (!mp_str(m, &kind, &kind_len)) mp_skip(m, 0);
        } else mp_skip(m, 0);
    }
    if (m->bad || !kind || offset == UINT64_MAX || !size || size > 64 || offset > 0xffff)
        return base_err(HCQ_EFORMAT, "code object metadata: argument %u lacks a valid .offset, .size or .value_kind", index);
    if (kind_len > 7 && !memcmp(kind, "hidden_", 7)) {
        if (co->nhidden == BASE_ARRAY_LEN(co->hidden)) return HCQ_OK; /* the ones we fill come first */
        amd_hidden_arg *h = &co->hidden[co->nhidden++];
        h->offset = (uint32_t)offset;
        h->size = (uint32_t)size;
        h->kind = AMD_HID_OTHER;
        for (size_t i = 0; i < BASE_ARRAY_LEN(hidden_kinds); i++)
            if (key_is(kind, kind_len, hidden_kinds[i].name)) h->kind = hidden_kinds[i].kind;
        return HCQ_OK;
    }
    bool buffer = key_is(kind, kind_len, "global_buffer");
    if (!buffer && !key_is(kind, kind_len, "by_value"))
        return base_err(HCQ_ENOTSUP, "kernel `%s` argument %u is a %.*s; hcq passes buffers and values only", co->name,
                        index, (int)kind_len, kind);
    if (buffer && size != 8) return base_err(HCQ_EFORMAT, "kernel `%s` argument %u: a %llu-byte pointer", co->name,
                                             index, (unsigned long long)size);
    hcq_param_info *pi = base_realloc_array(co->params, co->nparams + 1, sizeof *pi);
    if (!pi) return HCQ_ENOMEM;
    co->params = pi;
    pi = &co->params[co->nparams++];
    memset(pi, 0, sizeof *pi);
    pi->offset = (uint32_t)offset;
    pi->size = (uint32_t)size;
    pi->is_buffer = buffer;
    pi->dtype = HCQ_VOID; /* the metadata does not say */
    return HCQ_OK;
}

static hcq_status parse_kernel(mp *m, amd_co *co, char *symbol, size_t symbol_size)
{
    uint64_t n;
    if (!mp_container(m, true, &n)) return base_err(HCQ_EFORMAT, "code object metadata: a kernel entry is not a map");
    hcq_status s = HCQ_OK;
    for (uint64_t i = 0; i < n && !m->bad && !s; i++) {
        const char *k, *v;
        uint32_t kl, vl;
        if (!mp_str(m, &k, &kl)) return base_err(HCQ_EFORMAT, "code object metadata: a kernel key is not a string");
        if (key_is(k, kl, ".name") && mp_str(m, &v, &vl)) snprintf(co->name, sizeof co->name, "%.*s", (int)vl, v);
        else if (key_is(k, kl, ".symbol") && mp_str(m, &v, &vl)) snprintf(symbol, symbol_size, "%.*s", (int)vl, v);
        else if (key_is(k, kl, ".kernarg_segment_size")) co->kernarg_bytes = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".kernarg_segment_align")) co->kernarg_align = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".wavefront_size")) co->wavefront_size = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".max_flat_workgroup_size")) co->max_flat_workgroup_size = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".sgpr_count")) co->sgprs = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".vgpr_count")) co->vgprs = (uint32_t)mp_uint_or_skip(m);
        else if (key_is(k, kl, ".args")) {
            uint64_t na;
            if (!mp_container(m, false, &na) || na > 1024)
                return base_err(HCQ_EFORMAT, "code object metadata: .args is not an array");
            for (uint64_t a = 0; a < na && !s; a++) s = parse_arg(m, co, (uint32_t)a);
        } else mp_skip(m, 0);
    }
    if (s) return s;
    return m->bad ? base_err(HCQ_EFORMAT, "code object metadata: truncated kernel entry") : HCQ_OK;
}

/* The kernel named want (NULL: the only one) among amdhsa.kernels; the
 * others are parsed for their names and dropped. */
static hcq_status parse_metadata(const uint8_t *d, size_t size, const char *want, amd_co *co, char *symbol,
                                 size_t symbol_size)
{
    mp m = {d, d + size, false};
    uint64_t n;
    if (!mp_container(&m, true, &n)) return base_err(HCQ_EFORMAT, "code object metadata is not a MessagePack map");
    bool found = false, picked = false;
    uint64_t nk = 0;
    char names[512] = "";
    size_t nl = 0;
    for (uint64_t i = 0; i < n && !m.bad; i++) {
        const char *k;
        uint32_t kl;
        if (!mp_str(&m, &k, &kl)) return base_err(HCQ_EFORMAT, "code object metadata: a key is not a string");
        if (!key_is(k, kl, "amdhsa.kernels") || found) {
            mp_skip(&m, 0);
            continue;
        }
        if (!mp_container(&m, false, &nk)) return base_err(HCQ_EFORMAT, "code object metadata: amdhsa.kernels is not an array");
        found = true;
        for (uint64_t j = 0; j < nk; j++) {
            amd_co one = {0};
            char sym[sizeof((amd_co *)0)->name + 16] = "";
            hcq_status s = parse_kernel(&m, &one, sym, sizeof sym);
            if (s) {
                amd_co_free(&one);
                if (picked) amd_co_free(co);
                return s;
            }
            if (nl < sizeof names - 1)
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s`%s`", j ? ", " : "", one.name);
            if (!picked && (want ? !strcmp(one.name, want) : nk == 1)) {
                *co = one;
                snprintf(symbol, symbol_size, "%s", sym);
                picked = true;
            } else {
                amd_co_free(&one);
            }
        }
    }
    if (m.bad) {
        if (picked) amd_co_free(co);
        return base_err(HCQ_EFORMAT, "code object metadata is truncated");
    }
    if (!found) return base_err(HCQ_EFORMAT, "code object metadata has no amdhsa.kernels");
    if (picked) return HCQ_OK;
    if (!nk) return base_err(HCQ_EFORMAT, "the code object's amdhsa.kernels is empty: it holds no kernel");
    if (want)
        return base_err(HCQ_EINVAL, "the code object has no kernel `%s`; it holds %s", want, names);
    return base_err(HCQ_EINVAL, "the code object holds %llu kernels (%s): name the one to load "
                    "(hcq_program_load_kernel)", (unsigned long long)nk, names);
}

/* the NT_AMDGPU_METADATA note's payload, from SHT_NOTE sections */
static bool find_note(const cc_elf *e, const uint8_t **desc, size_t *desc_size)
{
    for (uint32_t i = 1; i < e->nsections; i++) {
        const cc_elf_section *s = &e->sections[i];
        if (s->type != SHT_NOTE || !s->data) continue;
        for (uint64_t off = 0; off + 12 <= s->size;) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, s->data + off, 4);
            memcpy(&descsz, s->data + off + 4, 4);
            memcpy(&type, s->data + off + 8, 4);
            uint64_t name_off = off + 12, desc_off = name_off + base_align_up(namesz, 4);
            if (desc_off > s->size || descsz > s->size - desc_off) break;
            if (type == NT_AMDGPU_METADATA && namesz == 7 && !memcmp(s->data + name_off, "AMDGPU", 7)) {
                *desc = s->data + desc_off;
                *desc_size = descsz;
                return true;
            }
            off = desc_off + base_align_up(descsz, 4);
        }
    }
    return false;
}

static hcq_status check_relocations(const cc_elf *e)
{
    for (uint32_t i = 1; i < e->nsections; i++) {
        const cc_elf_section *s = &e->sections[i];
        if ((s->type != SHT_RELA && s->type != SHT_REL) || !s->data) continue;
        if (s->type == SHT_REL || s->entsize != sizeof(Elf64_Rela) || s->size % sizeof(Elf64_Rela))
            return base_err(HCQ_ENOTSUP, "code object section %s: only RELA relocations are supported", s->name);
        for (uint64_t off = 0; off < s->size; off += sizeof(Elf64_Rela)) {
            Elf64_Rela r;
            memcpy(&r, s->data + off, sizeof r);
            if (ELF64_R_TYPE(r.r_info) != R_AMDGPU_RELATIVE64)
                return base_err(HCQ_ENOTSUP, "code object section %s: relocation type %u (hcq applies "
                                "R_AMDGPU_RELATIVE64 only; link the code object)", s->name,
                                (unsigned)ELF64_R_TYPE(r.r_info));
        }
    }
    return HCQ_OK;
}

/* a + n, saturated: a hostile header's address plus size must not wrap
 * to a small end that passes the bounds checks */
static uint64_t end_of(uint64_t a, uint64_t n) { return n > UINT64_MAX - a ? UINT64_MAX : a + n; }

/* [a, a + n) lies inside an image of size bytes */
static bool inside(uint64_t a, uint64_t n, uint64_t size) { return a <= size && n <= size - a; }

static uint64_t image_end(const cc_elf *e, bool *segments)
{
    uint64_t end = 0;
    *segments = false;
    for (uint32_t i = 0; i < e->nsegments; i++)
        if (e->segments[i].type == PT_LOAD) {
            *segments = true;
            end = BASE_MAX(end, end_of(e->segments[i].vaddr, e->segments[i].memsz));
        }
    if (*segments) return end;
    for (uint32_t i = 1; i < e->nsections; i++)
        if (e->sections[i].flags & SHF_ALLOC) end = BASE_MAX(end, end_of(e->sections[i].addr, e->sections[i].size));
    return end;
}

void amd_sgpr_layout_of(uint16_t kcp, amd_sgpr_layout *out)
{
    static const struct {
        uint16_t bit;
        uint8_t n;
    } order[AMD_SGPR_KIND_COUNT] = {
        {AMD_KCP_PRIVATE_SEGMENT_BUFFER, 4}, {AMD_KCP_DISPATCH_PTR, 2}, {AMD_KCP_QUEUE_PTR, 2},
        {AMD_KCP_KERNARG_SEGMENT_PTR, 2},    {AMD_KCP_DISPATCH_ID, 2},  {AMD_KCP_FLAT_SCRATCH_INIT, 2},
        {AMD_KCP_PRIVATE_SEGMENT_SIZE, 1},
    };
    out->count = 0;
    for (int i = 0; i < AMD_SGPR_KIND_COUNT; i++) {
        out->first[i] = -1;
        if (kcp & order[i].bit) {
            out->first[i] = (int8_t)out->count;
            out->count += order[i].n;
        }
    }
}

hcq_status amd_co_parse(const void *bin, size_t size, const char *kernel, amd_co *co)
{
    memset(co, 0, sizeof *co);
    cc_elf e;
    hcq_status s = cc_elf_open(&e, bin, size);
    if (s) return base_err_prefix(s, "not an AMDGPU code object");
    char what[128], symbol[80] = "";
    if (e.machine != EM_AMDGPU) {
        cc_elf_describe(e.machine, e.type, what, sizeof what);
        s = base_err(HCQ_EFORMAT, "this is %s, not an AMDGPU code object (e_machine 224)", what);
        goto out;
    }
    if (e.type != ET_DYN && e.type != ET_EXEC) {
        s = base_err(HCQ_ENOTSUP, "the AMDGPU code object is not linked (e_type %u): link it into a shared object "
                     "(clang does when it writes the code object)", e.type);
        goto out;
    }
    const uint8_t *note;
    size_t note_size;
    if (!find_note(&e, &note, &note_size)) {
        s = base_err(HCQ_EFORMAT, "the AMDGPU code object has no NT_AMDGPU_METADATA note (code object v2/v3 are not "
                     "supported; build with code object v4 or later)");
        goto out;
    }
    if ((s = parse_metadata(note, note_size, kernel, co, symbol, sizeof symbol))) goto out;
    co->mach = (uint8_t)(e.flags & 0xff);
    if (!co->name[0]) {
        s = base_err(HCQ_EFORMAT, "code object metadata: the kernel has no .name");
        goto out;
    }
    if (!symbol[0]) snprintf(symbol, sizeof symbol, "%s.kd", co->name);
    const cc_elf_symbol *kd = cc_elf_find_symbol(&e, symbol);
    const uint8_t *kdp;
    if (!kd || kd->size != sizeof(amd_kernel_descriptor)) {
        s = base_err(HCQ_EFORMAT, "kernel `%s`: no 64-byte kernel descriptor symbol `%s`", co->name, symbol);
        goto out;
    }
    if ((s = cc_elf_symbol_data(&e, kd, &kdp))) goto out;
    memcpy(&co->kd, kdp, sizeof co->kd);
    bool segments;
    co->image_size = image_end(&e, &segments);
    co->kd_offset = kd->value;
    co->entry_offset = co->kd_offset + (uint64_t)co->kd.kernel_code_entry_byte_offset;
    if (!inside(co->kd_offset, 64, co->image_size) || co->entry_offset >= co->image_size || co->entry_offset % 256 ||
        co->image_size > (1ull << 30)) {
        s = base_err(HCQ_EFORMAT, "kernel `%s`: descriptor at 0x%llx, entry at 0x%llx (must be 256-byte aligned) "
                     "outside the %llu-byte image", co->name, (unsigned long long)co->kd_offset,
                     (unsigned long long)co->entry_offset, (unsigned long long)co->image_size);
        goto out;
    }
    if ((s = check_relocations(&e))) goto out;
    if (!co->kernarg_bytes) co->kernarg_bytes = co->kd.kernarg_size;
    for (uint32_t i = 0; i < co->nparams; i++)
        if (co->params[i].offset + co->params[i].size > co->kernarg_bytes) {
            s = base_err(HCQ_EFORMAT, "kernel `%s` argument %u at %u+%u runs past the %u kernarg bytes", co->name, i,
                         co->params[i].offset, co->params[i].size, co->kernarg_bytes);
            goto out;
        }
    for (uint32_t i = 0; i < co->nhidden; i++)
        if (co->hidden[i].offset + co->hidden[i].size > co->kernarg_bytes) {
            s = base_err(HCQ_EFORMAT, "kernel `%s`: a hidden argument runs past the %u kernarg bytes", co->name,
                         co->kernarg_bytes);
            goto out;
        }
out:
    cc_elf_close(&e);
    if (s) amd_co_free(co);
    return s;
}

void amd_co_place(const void *bin, size_t size, uint8_t *dst, uint64_t base_va, uint64_t image_size)
{
    cc_elf e;
    if (cc_elf_open(&e, bin, size)) return; /* parsed before: cannot fail */
    memset(dst, 0, image_size);
    bool segments = false;
    for (uint32_t i = 0; i < e.nsegments; i++) {
        const cc_elf_segment *g = &e.segments[i];
        if (g->type != PT_LOAD) continue;
        segments = true;
        if (inside(g->vaddr, g->filesz, image_size)) memcpy(dst + g->vaddr, g->data, g->filesz);
    }
    for (uint32_t i = 1; !segments && i < e.nsections; i++) {
        const cc_elf_section *s = &e.sections[i];
        if ((s->flags & SHF_ALLOC) && s->type != SHT_NOBITS && s->data && inside(s->addr, s->size, image_size))
            memcpy(dst + s->addr, s->data, s->size);
    }
    /* position-independent pointers in the image (rare in kernels) */
    for (uint32_t i = 1; i < e.nsections; i++) {
        const cc_elf_section *s = &e.sections[i];
        if (s->type != SHT_RELA || !s->data) continue;
        for (uint64_t off = 0; off + sizeof(Elf64_Rela) <= s->size; off += sizeof(Elf64_Rela)) {
            Elf64_Rela r;
            memcpy(&r, s->data + off, sizeof r);
            if (ELF64_R_TYPE(r.r_info) != R_AMDGPU_RELATIVE64 || !inside(r.r_offset, 8, image_size)) continue;
            uint64_t v = base_va + (uint64_t)r.r_addend;
            memcpy(dst + r.r_offset, &v, 8);
        }
    }
    cc_elf_close(&e);
}

void amd_co_free(amd_co *co)
{
    free(co->params);
    co->params = NULL;
    co->nparams = 0;
}
