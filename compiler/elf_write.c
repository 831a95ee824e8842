/* ELF64 writer: the program headers (when segments were added) right after
 * the ELF header, user sections next (indexes 1..n, in the order added),
 * then .symtab/.strtab when there are symbols, then .shstrtab; section
 * headers last. Enough for the "ir" target and for mock binaries shaped
 * like cubins and code objects; real linking is clang's job. */
#include "compiler/elf.h"

#include <stdlib.h>
#include <string.h>

typedef struct wsec {
    cc_elf_section_spec spec; /* name and data point into the builder's copies */
    char *name;
    uint8_t *data;
} wsec;

typedef struct wseg {
    uint32_t type, flags;
    uint32_t first, last; /* section indexes it covers */
} wseg;

typedef struct wsym {
    char *name;
    uint64_t value, size;
    uint16_t shndx;
    uint8_t info, other;
} wsym;

struct cc_elf_builder {
    uint16_t machine, type;
    uint32_t flags;
    uint8_t osabi, abiversion;
    wsec *secs;
    uint32_t nsecs;
    wsym *syms;
    uint32_t nsyms;
    wseg *segs;
    uint32_t nsegs;
    hcq_status err;
    char msg[512];
};

static void fail(cc_elf_builder *b, hcq_status s, const char *fmt, ...) HCQ_PRINTF(3, 4);
static void fail(cc_elf_builder *b, hcq_status s, const char *fmt, ...)
{
    if (b->err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof b->msg, fmt, ap);
    va_end(ap);
    b->err = s;
}

cc_elf_builder *cc_elf_builder_create(uint16_t machine, uint16_t type, uint32_t flags)
{
    cc_elf_builder *b = base_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->machine = machine;
    b->type = type;
    b->flags = flags;
    return b;
}

void cc_elf_builder_set_osabi(cc_elf_builder *b, uint8_t osabi, uint8_t abiversion)
{
    b->osabi = osabi;
    b->abiversion = abiversion;
}

uint32_t cc_elf_add_section(cc_elf_builder *b, const cc_elf_section_spec *s)
{
    if (b->err) return 0;
    if (!s->name || (s->size && s->type != SHT_NOBITS && !s->data)) {
        fail(b, HCQ_EINVAL, "section %s: NULL name or data", s->name ? s->name : "(null)");
        return 0;
    }
    if (s->align && !base_is_pow2(s->align)) {
        fail(b, HCQ_EINVAL, "section %s: alignment %llu is not a power of two", s->name, (unsigned long long)s->align);
        return 0;
    }
    if (b->nsecs >= 0xfe00) {
        fail(b, HCQ_ELIMIT, "more than %u sections", 0xfe00);
        return 0;
    }
    wsec *n = base_realloc_array(b->secs, b->nsecs + 1, sizeof *n);
    if (!n) {
        fail(b, HCQ_ENOMEM, "out of memory adding section %s", s->name);
        return 0;
    }
    b->secs = n;
    wsec *w = &b->secs[b->nsecs];
    memset(w, 0, sizeof *w);
    w->spec = *s;
    w->name = strdup(s->name);
    if (s->type != SHT_NOBITS && s->size) {
        w->data = malloc(s->size);
        if (w->data) memcpy(w->data, s->data, s->size);
    }
    if (!w->name || (s->type != SHT_NOBITS && s->size && !w->data)) {
        free(w->name);
        free(w->data);
        fail(b, HCQ_ENOMEM, "out of memory copying section %s (%llu bytes)", s->name, (unsigned long long)s->size);
        return 0;
    }
    return ++b->nsecs;
}

void cc_elf_add_symbol(cc_elf_builder *b, const char *name, uint64_t value, uint64_t size, uint8_t info,
                       uint8_t other, uint16_t shndx)
{
    if (b->err) return;
    if (!name) {
        fail(b, HCQ_EINVAL, "symbol with a NULL name");
        return;
    }
    if (shndx != SHN_UNDEF && shndx != SHN_ABS && shndx > b->nsecs) {
        fail(b, HCQ_EINVAL, "symbol %s: section index %u does not exist (%u sections added)", name, shndx, b->nsecs);
        return;
    }
    wsym *n = base_realloc_array(b->syms, b->nsyms + 1, sizeof *n);
    if (!n) {
        fail(b, HCQ_ENOMEM, "out of memory adding symbol %s", name);
        return;
    }
    b->syms = n;
    wsym *w = &b->syms[b->nsyms];
    *w = (wsym){strdup(name), value, size, shndx, info, other};
    if (!w->name) {
        fail(b, HCQ_ENOMEM, "out of memory adding symbol %s", name);
        return;
    }
    b->nsyms++;
}

void cc_elf_add_segment(cc_elf_builder *b, uint32_t type, uint32_t flags, uint32_t first, uint32_t last)
{
    if (b->err) return;
    if (!first || first > last || last > b->nsecs) {
        fail(b, HCQ_EINVAL, "segment over sections %u..%u: %u sections added", first, last, b->nsecs);
        return;
    }
    for (uint32_t i = first; i < last; i++)
        if (b->secs[i].spec.addr < b->secs[i - 1].spec.addr + b->secs[i - 1].spec.size) {
            fail(b, HCQ_EINVAL, "segment: section %s overlaps or precedes %s", b->secs[i].name, b->secs[i - 1].name);
            return;
        }
    wseg *n = base_realloc_array(b->segs, b->nsegs + 1, sizeof *n);
    if (!n) {
        fail(b, HCQ_ENOMEM, "out of memory adding a segment");
        return;
    }
    b->segs = n;
    b->segs[b->nsegs++] = (wseg){type, flags, first, last};
}

void cc_elf_builder_destroy(cc_elf_builder *b)
{
    if (!b) return;
    free(b->segs);
    for (uint32_t i = 0; i < b->nsecs; i++) {
        free(b->secs[i].name);
        free(b->secs[i].data);
    }
    for (uint32_t i = 0; i < b->nsyms; i++) free(b->syms[i].name);
    free(b->secs);
    free(b->syms);
    free(b);
}

/* ** layout */
typedef struct strtab {
    uint8_t *p;
    size_t len, cap;
} strtab;

static uint32_t strtab_add(strtab *t, const char *s, bool *oom)
{
    size_t n = strlen(s) + 1;
    if (t->len + n > t->cap) {
        size_t ncap = (t->len + n) * 2 + 64;
        uint8_t *q = realloc(t->p, ncap);
        if (!q) {
            *oom = true;
            return 0;
        }
        t->p = q;
        t->cap = ncap;
    }
    memcpy(t->p + t->len, s, n);
    uint32_t off = (uint32_t)t->len;
    t->len += n;
    return off;
}

typedef struct layout {
    uint32_t nshdr, symtab_idx, strtab_idx, shstrtab_idx;
    strtab shstr, str;
    uint8_t *symtab;
    size_t symtab_size;
    uint32_t first_global;
    uint32_t *name_off; /* per section header */
    uint64_t *offset;   /* per section header */
} layout;

static void put_sym(uint8_t *dst, uint32_t name, const wsym *s)
{
    Elf64_Sym e = {.st_name = name, .st_info = s->info, .st_other = s->other, .st_shndx = s->shndx,
                   .st_value = s->value, .st_size = s->size};
    memcpy(dst, &e, sizeof e);
}

static bool build_symtab(const cc_elf_builder *b, layout *L, bool *oom)
{
    L->symtab_size = (size_t)(b->nsyms + 1) * sizeof(Elf64_Sym);
    L->symtab = calloc(1, L->symtab_size);
    if (!L->symtab) return false;
    strtab_add(&L->str, "", oom);
    uint32_t k = 1;
    for (int globals = 0; globals < 2; globals++) { /* locals first, as ELF requires */
        if (globals) L->first_global = k;
        for (uint32_t i = 0; i < b->nsyms; i++) {
            bool local = ELF64_ST_BIND(b->syms[i].info) == STB_LOCAL;
            if (local == (globals != 0)) continue;
            put_sym(L->symtab + (size_t)k++ * sizeof(Elf64_Sym), strtab_add(&L->str, b->syms[i].name, oom), &b->syms[i]);
        }
    }
    return !*oom;
}

static void put_shdr(uint8_t *dst, const Elf64_Shdr *s) { memcpy(dst, s, sizeof *s); }

static hcq_status emit(const cc_elf_builder *b, layout *L, void **out, size_t *out_size)
{
    /* offsets: header, program headers, user sections, symtab, strtab,
     * shstrtab, section headers. A section that starts a segment lands at a
     * file offset congruent to its address modulo the page, as loaders that
     * map files expect. */
    uint64_t off = sizeof(Elf64_Ehdr) + (uint64_t)b->nsegs * sizeof(Elf64_Phdr);
    for (uint32_t i = 0; i < b->nsecs; i++) {
        const cc_elf_section_spec *s = &b->secs[i].spec;
        off = base_align_up(off, s->align ? s->align : 1);
        for (uint32_t g = 0; g < b->nsegs; g++)
            if (b->segs[g].first == i + 1) off += (s->addr - off) % CC_ELF_SEGMENT_ALIGN;
        L->offset[i + 1] = off;
        if (s->type != SHT_NOBITS) off += s->size;
    }
    if (L->symtab_idx) {
        off = base_align_up(off, 8);
        L->offset[L->symtab_idx] = off;
        off += L->symtab_size;
        L->offset[L->strtab_idx] = off;
        off += L->str.len;
    }
    L->offset[L->shstrtab_idx] = off;
    off += L->shstr.len;
    uint64_t shoff = base_align_up(off, 8), total = shoff + (uint64_t)L->nshdr * sizeof(Elf64_Shdr);
    uint8_t *f = calloc(1, total);
    if (!f) return base_err(HCQ_ENOMEM, "out of memory writing a %llu-byte ELF file", (unsigned long long)total);

    Elf64_Ehdr h = {0};
    memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    h.e_ident[EI_OSABI] = b->osabi;
    h.e_ident[EI_ABIVERSION] = b->abiversion;
    h.e_type = b->type;
    h.e_machine = b->machine;
    h.e_version = EV_CURRENT;
    h.e_flags = b->flags;
    h.e_ehsize = sizeof h;
    if (b->nsegs) {
        h.e_phoff = sizeof h;
        h.e_phentsize = sizeof(Elf64_Phdr);
        h.e_phnum = (uint16_t)b->nsegs;
    }
    h.e_shoff = shoff;
    h.e_shentsize = sizeof(Elf64_Shdr);
    h.e_shnum = (uint16_t)L->nshdr;
    h.e_shstrndx = (uint16_t)L->shstrtab_idx;
    memcpy(f, &h, sizeof h);
    for (uint32_t g = 0; g < b->nsegs; g++) {
        const wseg *w = &b->segs[g];
        const cc_elf_section_spec *first = &b->secs[w->first - 1].spec, *last = &b->secs[w->last - 1].spec;
        uint64_t file_end = L->offset[w->last] + (last->type == SHT_NOBITS ? 0 : last->size);
        Elf64_Phdr p = {.p_type = w->type, .p_flags = w->flags, .p_offset = L->offset[w->first],
                        .p_vaddr = first->addr, .p_paddr = first->addr, .p_filesz = file_end - L->offset[w->first],
                        .p_memsz = last->addr + last->size - first->addr, .p_align = CC_ELF_SEGMENT_ALIGN};
        memcpy(f + sizeof h + g * sizeof p, &p, sizeof p);
    }

    uint8_t *sh = f + shoff;
    for (uint32_t i = 0; i < b->nsecs; i++) {
        const cc_elf_section_spec *s = &b->secs[i].spec;
        if (s->type != SHT_NOBITS && s->size) memcpy(f + L->offset[i + 1], b->secs[i].data, s->size);
        Elf64_Shdr d = {.sh_name = L->name_off[i + 1], .sh_type = s->type, .sh_flags = s->flags, .sh_addr = s->addr,
                        .sh_offset = L->offset[i + 1], .sh_size = s->size,
                        .sh_link = s->link == CC_ELF_LINK_SYMTAB ? L->symtab_idx : s->link, .sh_info = s->info,
                        .sh_addralign = s->align, .sh_entsize = s->entsize};
        put_shdr(sh + (size_t)(i + 1) * sizeof d, &d);
    }
    if (L->symtab_idx) {
        memcpy(f + L->offset[L->symtab_idx], L->symtab, L->symtab_size);
        memcpy(f + L->offset[L->strtab_idx], L->str.p, L->str.len);
        Elf64_Shdr d = {.sh_name = L->name_off[L->symtab_idx], .sh_type = SHT_SYMTAB, .sh_offset = L->offset[L->symtab_idx],
                        .sh_size = L->symtab_size, .sh_link = L->strtab_idx, .sh_info = L->first_global,
                        .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)};
        put_shdr(sh + (size_t)L->symtab_idx * sizeof d, &d);
        Elf64_Shdr t = {.sh_name = L->name_off[L->strtab_idx], .sh_type = SHT_STRTAB,
                        .sh_offset = L->offset[L->strtab_idx], .sh_size = L->str.len, .sh_addralign = 1};
        put_shdr(sh + (size_t)L->strtab_idx * sizeof t, &t);
    }
    memcpy(f + L->offset[L->shstrtab_idx], L->shstr.p, L->shstr.len);
    Elf64_Shdr d = {.sh_name = L->name_off[L->shstrtab_idx], .sh_type = SHT_STRTAB,
                    .sh_offset = L->offset[L->shstrtab_idx], .sh_size = L->shstr.len, .sh_addralign = 1};
    put_shdr(sh + (size_t)L->shstrtab_idx * sizeof d, &d);
    *out = f;
    *out_size = total;
    return HCQ_OK;
}

hcq_status cc_elf_builder_finish(cc_elf_builder *b, void **out, size_t *out_size)
{
    if (!b || !out || !out_size) return base_err(HCQ_EINVAL, "cc_elf_builder_finish: NULL argument");
    if (b->err) return base_err(b->err, "ELF writer: %s", b->msg);
    layout L;
    memset(&L, 0, sizeof L);
    uint32_t n = b->nsecs + 1;
    if (b->nsyms) {
        L.symtab_idx = n++;
        L.strtab_idx = n++;
    }
    L.shstrtab_idx = n++;
    L.nshdr = n;
    L.name_off = calloc(n, sizeof *L.name_off);
    L.offset = calloc(n, sizeof *L.offset);
    bool oom = !L.name_off || !L.offset;
    if (!oom) {
        strtab_add(&L.shstr, "", &oom);
        for (uint32_t i = 0; i < b->nsecs; i++) L.name_off[i + 1] = strtab_add(&L.shstr, b->secs[i].name, &oom);
        if (L.symtab_idx) {
            L.name_off[L.symtab_idx] = strtab_add(&L.shstr, ".symtab", &oom);
            L.name_off[L.strtab_idx] = strtab_add(&L.shstr, ".strtab", &oom);
            if (!oom && !build_symtab(b, &L, &oom)) oom = true;
        }
        L.name_off[L.shstrtab_idx] = strtab_add(&L.shstr, ".shstrtab", &oom);
    }
    hcq_status st = oom ? base_err(HCQ_ENOMEM, "out of memory laying out an ELF file") : emit(b, &L, out, out_size);
    free(L.name_off);
    free(L.offset);
    free(L.shstr.p);
    free(L.str.p);
    free(L.symtab);
    return st;
}
