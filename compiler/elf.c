/* ELF64 reader: every offset, size and index read from the file is checked
 * against the buffer before use (with overflow-safe arithmetic), and every
 * header is copied out with memcpy, so unaligned or hostile input can only
 * produce HCQ_EFORMAT. */
#include "compiler/elf.h"

#include <stdlib.h>
#include <string.h>

static hcq_status bad(const char *fmt, ...) HCQ_PRINTF(1, 2);
static hcq_status bad(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_err(HCQ_EFORMAT, "malformed ELF file: %s", msg);
}

/* [off, off + len) lies inside a buffer of `size` bytes. */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

/* A NUL-terminated string at tab[off] inside tab[0..size). */
static const char *str_at(const uint8_t *tab, uint64_t size, uint64_t off)
{
    if (!tab || off >= size) return NULL;
    if (!memchr(tab + off, 0, size - off)) return NULL;
    return (const char *)tab + off;
}

static hcq_status read_ehdr(cc_elf *e, Elf64_Ehdr *h)
{
    if (e->size < EI_NIDENT || memcmp(e->data, ELFMAG, SELFMAG) != 0) {
        char buf[96];
        return base_err(HCQ_EFORMAT, "%s", cc_elf_describe_bytes(e->data, e->size, buf, sizeof buf));
    }
    if (e->data[EI_CLASS] != ELFCLASS64)
        return bad("class %u; only 64-bit ELF (ELFCLASS64) is supported", e->data[EI_CLASS]);
    if (e->data[EI_DATA] != ELFDATA2LSB)
        return bad("data encoding %u; only little-endian (ELFDATA2LSB) is supported", e->data[EI_DATA]);
    if (e->data[EI_VERSION] != EV_CURRENT) return bad("ident version %u, not EV_CURRENT", e->data[EI_VERSION]);
    if (e->size < sizeof *h) return bad("%zu bytes, shorter than the 64-byte ELF header", e->size);
    memcpy(h, e->data, sizeof *h);
    if (h->e_ehsize < sizeof *h) return bad("e_ehsize is %u, less than 64", h->e_ehsize);
    e->type = h->e_type;
    e->machine = h->e_machine;
    e->flags = h->e_flags;
    e->osabi = e->data[EI_OSABI];
    e->abiversion = e->data[EI_ABIVERSION];
    e->entry = h->e_entry;
    return HCQ_OK;
}

/* The caller has checked that the table holds header i. */
static void read_shdr(const cc_elf *e, const Elf64_Ehdr *h, uint32_t i, Elf64_Shdr *s)
{
    memcpy(s, e->data + h->e_shoff + (uint64_t)i * sizeof *s, sizeof *s);
}

/* Section count and string-table index, with ELF's escape values for files
 * with more than 0xff00 sections (kept in section 0). */
static hcq_status section_counts(const cc_elf *e, const Elf64_Ehdr *h, uint64_t *n, uint32_t *strndx)
{
    *n = h->e_shnum;
    *strndx = h->e_shstrndx;
    if (h->e_shoff == 0) {
        *n = 0;
        *strndx = SHN_UNDEF;
        return HCQ_OK;
    }
    if (h->e_shentsize != sizeof(Elf64_Shdr))
        return bad("e_shentsize is %u; ELF64 section headers are %zu bytes", h->e_shentsize, sizeof(Elf64_Shdr));
    if (!in_bounds(h->e_shoff, sizeof(Elf64_Shdr), e->size))
        return bad("section headers at offset %llu lie outside the %zu-byte file", (unsigned long long)h->e_shoff,
                   e->size);
    Elf64_Shdr s0;
    read_shdr(e, h, 0, &s0);
    if (*n == 0) *n = s0.sh_size;
    if (*strndx == SHN_XINDEX) *strndx = s0.sh_link;
    if (*n > e->size / sizeof(Elf64_Shdr) ||
        !in_bounds(h->e_shoff, *n * sizeof(Elf64_Shdr), e->size))
        return bad("%llu section headers at offset %llu do not fit in the %zu-byte file", (unsigned long long)*n,
                   (unsigned long long)h->e_shoff, e->size);
    if (*strndx != SHN_UNDEF && *strndx >= *n)
        return bad("section name table index %u is not below the section count %llu", *strndx,
                   (unsigned long long)*n);
    return HCQ_OK;
}

static hcq_status fill_section(cc_elf *e, const Elf64_Ehdr *h, uint32_t i, cc_elf_section *d)
{
    Elf64_Shdr s;
    read_shdr(e, h, i, &s);
    *d = (cc_elf_section){"", i, s.sh_type, s.sh_flags, s.sh_addr, s.sh_offset, s.sh_size, NULL,
                          s.sh_link, s.sh_info, s.sh_addralign, s.sh_entsize};
    if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL) return HCQ_OK;
    if (!in_bounds(s.sh_offset, s.sh_size, e->size))
        return bad("section %u: %llu bytes at offset %llu reach past the end of the %zu-byte file", i,
                   (unsigned long long)s.sh_size, (unsigned long long)s.sh_offset, e->size);
    d->data = e->data + s.sh_offset;
    return HCQ_OK;
}

static hcq_status read_sections(cc_elf *e, const Elf64_Ehdr *h)
{
    uint64_t n;
    uint32_t strndx;
    hcq_status st = section_counts(e, h, &n, &strndx);
    if (st || n == 0) return st;
    e->sections = calloc(n, sizeof *e->sections);
    if (!e->sections) return base_err(HCQ_ENOMEM, "out of memory reading %llu ELF sections", (unsigned long long)n);
    e->nsections = (uint32_t)n;
    cc_elf_section names = {0};
    if (strndx != SHN_UNDEF) {
        if ((st = fill_section(e, h, strndx, &names))) return st;
        if (names.type != SHT_STRTAB)
            return bad("section name table (section %u) has type %u, not SHT_STRTAB", strndx, names.type);
    }
    for (uint32_t i = 0; i < n; i++) {
        if ((st = fill_section(e, h, i, &e->sections[i]))) return st;
        Elf64_Shdr s;
        read_shdr(e, h, i, &s);
        if (strndx == SHN_UNDEF) continue;
        e->sections[i].name = str_at(names.data, names.size, s.sh_name);
        if (!e->sections[i].name)
            return bad("section %u: name offset %u is outside the %llu-byte name table or unterminated", i, s.sh_name,
                       (unsigned long long)names.size);
    }
    return HCQ_OK;
}

static hcq_status read_segments(cc_elf *e, const Elf64_Ehdr *h)
{
    uint64_t n = h->e_phnum;
    if (h->e_phoff == 0 || n == 0) return HCQ_OK;
    if (n == PN_XNUM && e->nsections) n = e->sections[0].info;
    if (h->e_phentsize != sizeof(Elf64_Phdr))
        return bad("e_phentsize is %u; ELF64 program headers are %zu bytes", h->e_phentsize, sizeof(Elf64_Phdr));
    if (n > e->size / sizeof(Elf64_Phdr) || !in_bounds(h->e_phoff, n * sizeof(Elf64_Phdr), e->size))
        return bad("%llu program headers at offset %llu do not fit in the %zu-byte file", (unsigned long long)n,
                   (unsigned long long)h->e_phoff, e->size);
    e->segments = calloc(n, sizeof *e->segments);
    if (!e->segments) return base_err(HCQ_ENOMEM, "out of memory reading %llu ELF segments", (unsigned long long)n);
    e->nsegments = (uint32_t)n;
    for (uint32_t i = 0; i < n; i++) {
        Elf64_Phdr p;
        memcpy(&p, e->data + h->e_phoff + (uint64_t)i * sizeof p, sizeof p);
        if (!in_bounds(p.p_offset, p.p_filesz, e->size))
            return bad("segment %u: %llu bytes at offset %llu reach past the end of the %zu-byte file", i,
                       (unsigned long long)p.p_filesz, (unsigned long long)p.p_offset, e->size);
        if (p.p_type == PT_LOAD && p.p_memsz < p.p_filesz)
            return bad("segment %u: memory size %llu is smaller than its file size %llu", i,
                       (unsigned long long)p.p_memsz, (unsigned long long)p.p_filesz);
        e->segments[i] = (cc_elf_segment){p.p_type, p.p_flags, p.p_offset, p.p_vaddr, p.p_paddr,
                                          p.p_filesz,  p.p_memsz, p.p_align, e->data + p.p_offset};
    }
    return HCQ_OK;
}

static hcq_status read_symbols(cc_elf *e)
{
    const cc_elf_section *tab = NULL;
    for (uint32_t i = 1; i < e->nsections && !tab; i++)
        if (e->sections[i].type == SHT_SYMTAB) tab = &e->sections[i];
    for (uint32_t i = 1; i < e->nsections && !tab; i++)
        if (e->sections[i].type == SHT_DYNSYM) tab = &e->sections[i];
    if (!tab) return HCQ_OK;
    if (tab->entsize != sizeof(Elf64_Sym) || tab->size % sizeof(Elf64_Sym))
        return bad("symbol table '%s' has entry size %llu and size %llu; ELF64 symbols are %zu bytes", tab->name,
                   (unsigned long long)tab->entsize, (unsigned long long)tab->size, sizeof(Elf64_Sym));
    if (tab->link == 0 || tab->link >= e->nsections || e->sections[tab->link].type != SHT_STRTAB)
        return bad("symbol table '%s' links to section %u, which is not a string table", tab->name, tab->link);
    const cc_elf_section *str = &e->sections[tab->link];
    uint64_t n = tab->size / sizeof(Elf64_Sym);
    if (!n) return HCQ_OK;
    e->symbols = calloc(n, sizeof *e->symbols);
    if (!e->symbols) return base_err(HCQ_ENOMEM, "out of memory reading %llu ELF symbols", (unsigned long long)n);
    e->nsymbols = (uint32_t)n;
    for (uint32_t i = 0; i < n; i++) {
        Elf64_Sym s;
        memcpy(&s, tab->data + (uint64_t)i * sizeof s, sizeof s);
        cc_elf_symbol *d = &e->symbols[i];
        d->name = str_at(str->data, str->size, s.st_name);
        if (!d->name)
            return bad("symbol %u: name offset %u is outside the %llu-byte string table or unterminated", i,
                       s.st_name, (unsigned long long)str->size);
        d->value = s.st_value;
        d->size = s.st_size;
        d->shndx = s.st_shndx;
        d->info = s.st_info;
        d->other = s.st_other;
    }
    return HCQ_OK;
}

hcq_status cc_elf_open(cc_elf *e, const void *data, size_t size)
{
    if (!e || (!data && size)) return base_err(HCQ_EINVAL, "cc_elf_open: NULL argument");
    cc_elf t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.size = size;
    Elf64_Ehdr h;
    hcq_status st = read_ehdr(&t, &h);
    if (!st) st = read_sections(&t, &h);
    if (!st) st = read_segments(&t, &h);
    if (!st) st = read_symbols(&t);
    if (st) {
        cc_elf_close(&t);
        return st;
    }
    *e = t;
    return HCQ_OK;
}

void cc_elf_close(cc_elf *e)
{
    if (!e) return;
    free(e->sections);
    free(e->segments);
    free(e->symbols);
    memset(e, 0, sizeof *e);
}

const cc_elf_section *cc_elf_find_section(const cc_elf *e, const char *name)
{
    for (uint32_t i = 1; e && i < e->nsections; i++)
        if (strcmp(e->sections[i].name, name) == 0) return &e->sections[i];
    return NULL;
}

const cc_elf_symbol *cc_elf_find_symbol(const cc_elf *e, const char *name)
{
    for (uint32_t i = 1; e && i < e->nsymbols; i++)
        if (e->symbols[i].shndx != SHN_UNDEF && strcmp(e->symbols[i].name, name) == 0) return &e->symbols[i];
    return NULL;
}

hcq_status cc_elf_symbol_data(const cc_elf *e, const cc_elf_symbol *s, const uint8_t **data_out)
{
    if (s->shndx == SHN_UNDEF || s->shndx >= e->nsections)
        return bad("symbol '%s' has section index %u, not a section of this file", s->name, s->shndx);
    const cc_elf_section *sec = &e->sections[s->shndx];
    if (!sec->data) return bad("symbol '%s' is in section '%s', which has no file data", s->name, sec->name);
    uint64_t off = e->type == ET_REL ? s->value : s->value - sec->addr;
    if (e->type != ET_REL && s->value < sec->addr) off = UINT64_MAX;
    if (!in_bounds(off, s->size, sec->size))
        return bad("symbol '%s' (%llu bytes at 0x%llx) reaches outside its section '%s' (%llu bytes)", s->name,
                   (unsigned long long)s->size, (unsigned long long)s->value, sec->name,
                   (unsigned long long)sec->size);
    *data_out = sec->data + off;
    return HCQ_OK;
}

static const char *type_noun(uint16_t type)
{
    switch (type) {
    case ET_REL: return "relocatable object";
    case ET_EXEC: return "executable";
    case ET_DYN: return "shared object";
    case ET_CORE: return "core dump";
    default: return "ELF file";
    }
}

const char *cc_elf_describe(uint16_t machine, uint16_t type, char *buf, size_t size)
{
    switch (machine) {
    case EM_CUDA: snprintf(buf, size, "a CUDA cubin (e_machine %u)", machine); break;
    case EM_AMDGPU: snprintf(buf, size, "an AMDGPU code object (e_machine %u)", machine); break;
    case EM_X86_64: snprintf(buf, size, "an x86-64 %s", type_noun(type)); break;
    case EM_AARCH64: snprintf(buf, size, "an AArch64 %s", type_noun(type)); break;
    case EM_386: snprintf(buf, size, "an i386 %s", type_noun(type)); break;
    case EM_RISCV: snprintf(buf, size, "a RISC-V %s", type_noun(type)); break;
    case EM_NONE: snprintf(buf, size, "an ELF %s with no machine (e_machine 0)", type_noun(type)); break;
    default: snprintf(buf, size, "an ELF %s for e_machine %u", type_noun(type), machine); break;
    }
    return buf;
}

const char *cc_elf_describe_bytes(const void *data, size_t size, char *buf, size_t buf_size)
{
    const uint8_t *p = data;
    if (!p || size == 0) {
        snprintf(buf, buf_size, "an empty file (0 bytes)");
        return buf;
    }
    if (size >= sizeof(Elf64_Ehdr) && memcmp(p, ELFMAG, SELFMAG) == 0) {
        uint16_t type = (uint16_t)(p[16] | p[17] << 8), machine = (uint16_t)(p[18] | p[19] << 8);
        if (p[EI_CLASS] == ELFCLASS64 && p[EI_DATA] == ELFDATA2LSB) return cc_elf_describe(machine, type, buf, buf_size);
        snprintf(buf, buf_size, "an ELF file of class %u, data encoding %u (not 64-bit little-endian)", p[EI_CLASS],
                 p[EI_DATA]);
        return buf;
    }
    char hex[4 * 3 + 1] = "";
    size_t n = size < 4 ? size : 4, len = 0;
    for (size_t i = 0; i < n; i++) len += (size_t)snprintf(hex + len, sizeof hex - len, "%s%02x", i ? " " : "", p[i]);
    snprintf(buf, buf_size, "not an ELF file (%zu bytes, starting %s)", size, hex);
    return buf;
}
