/* compiler/elf.h: our own ELF64 little-endian reader and a small writer.
 *
 * Reader: cc_elf_open() checks the whole file up front (header, every
 * section and program header, every name, the symbol table) against the
 * buffer's bounds, so the accessors below cannot fail and never read out
 * of bounds. Malformed input is HCQ_EFORMAT saying what was wrong; the
 * reader is fuzzed. It copies nothing but the header tables: section data
 * pointers and names point into the caller's buffer, which must outlive the
 * cc_elf. Loaders (NV cubins, AMD code objects, the CPU device's ir
 * binaries) use it; it never interprets machine code.
 *
 * Writer: cc_elf_builder collects sections and symbols and lays out a file
 * (header, section data, .symtab/.strtab/.shstrtab, section headers) with
 * the e_machine / e_type / e_flags / OSABI the caller picks. The mock
 * targets use it to make IR-carrying ELFs shaped like a cubin or an AMD
 * code object, with program headers for the segments the caller adds.
 *
 * Locking: none; a cc_elf is read-only after open and may be shared. */
#ifndef HCQ_COMPILER_ELF_H
#define HCQ_COMPILER_ELF_H

#include <elf.h>

#include "base/base.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif
#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

typedef struct cc_elf_section {
    const char *name;    /* "" when the file has no section names */
    uint32_t index;      /* its index in the section header table */
    uint32_t type;       /* SHT_* */
    uint64_t flags;      /* SHF_* */
    uint64_t addr;
    uint64_t offset;     /* in the file */
    uint64_t size;       /* bytes (in memory, for SHT_NOBITS) */
    const uint8_t *data; /* size bytes in the file; NULL for SHT_NOBITS */
    uint32_t link, info;
    uint64_t align, entsize;
} cc_elf_section;

typedef struct cc_elf_segment {
    uint32_t type, flags; /* PT_*, PF_* */
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
    const uint8_t *data; /* filesz bytes in the file */
} cc_elf_segment;

typedef struct cc_elf_symbol {
    const char *name;
    uint64_t value, size;
    uint16_t shndx;
    uint8_t info;  /* ELF64_ST_BIND(info), ELF64_ST_TYPE(info) */
    uint8_t other; /* visibility */
} cc_elf_symbol;

typedef struct cc_elf {
    const uint8_t *data;
    size_t size;
    uint16_t type;    /* e_type: ET_REL, ET_EXEC, ET_DYN */
    uint16_t machine; /* e_machine: EM_X86_64, EM_CUDA, EM_AMDGPU, EM_NONE */
    uint32_t flags;   /* e_flags (the SM / gfx target lives here) */
    uint8_t osabi, abiversion;
    uint64_t entry;
    uint32_t nsections; /* including the null section 0 */
    cc_elf_section *sections;
    uint32_t nsegments;
    cc_elf_segment *segments;
    uint32_t nsymbols; /* of .symtab, else .dynsym; including the null symbol 0 */
    cc_elf_symbol *symbols;
} cc_elf;

/* Parses and checks data[0..size). On success fills *e (free with
 * cc_elf_close). */
hcq_status cc_elf_open(cc_elf *e, const void *data, size_t size);
void cc_elf_close(cc_elf *e); /* zeroed or NULL is fine */

/* The first section with that name, or NULL. */
const cc_elf_section *cc_elf_find_section(const cc_elf *e, const char *name);
/* The first defined symbol with that name, or NULL. */
const cc_elf_symbol *cc_elf_find_symbol(const cc_elf *e, const char *name);
/* The symbol's bytes inside its section: HCQ_EFORMAT when the symbol is not
 * in a section with file data or reaches past it. `value` is taken as an
 * offset into the section for ET_REL files and as an address otherwise. */
hcq_status cc_elf_symbol_data(const cc_elf *e, const cc_elf_symbol *s, const uint8_t **data_out);

/* "an x86-64 shared object", "a CUDA cubin (e_machine 190)", "an AMDGPU
 * code object (e_machine 224)", ...: for messages about the wrong file. */
const char *cc_elf_describe(uint16_t machine, uint16_t type, char *buf, size_t size);
/* The same for arbitrary bytes: "not an ELF file (starts with 7f 45 4c 00)". */
const char *cc_elf_describe_bytes(const void *data, size_t size, char *buf, size_t buf_size);

/* ** writer */
typedef struct cc_elf_builder cc_elf_builder;

typedef struct cc_elf_section_spec {
    const char *name;
    uint32_t type;  /* SHT_PROGBITS, SHT_NOBITS, SHT_NOTE, ... */
    uint64_t flags; /* SHF_* */
    uint64_t addr, align, entsize;
    uint32_t link, info; /* link may be CC_ELF_LINK_SYMTAB */
    const void *data;    /* size bytes, copied; ignored for SHT_NOBITS */
    uint64_t size;
} cc_elf_section_spec;

/* sh_link value that the writer replaces with .symtab's index (for
 * relocation sections and the like, whose symtab index is known only when
 * the file is laid out). */
#define CC_ELF_LINK_SYMTAB 0xfffffff0u

/* Builder calls record the first failure (sticky) and report it from
 * cc_elf_builder_finish(). NULL on out of memory. */
cc_elf_builder *cc_elf_builder_create(uint16_t machine, uint16_t type, uint32_t flags);
void cc_elf_builder_set_osabi(cc_elf_builder *b, uint8_t osabi, uint8_t abiversion);
/* Returns the new section's index (1, 2, ...), or 0 after a failure. */
uint32_t cc_elf_add_section(cc_elf_builder *b, const cc_elf_section_spec *s);
/* shndx is a section index from cc_elf_add_section, or SHN_UNDEF/SHN_ABS.
 * Local symbols are written first, as ELF requires; order is otherwise kept. */
void cc_elf_add_symbol(cc_elf_builder *b, const char *name, uint64_t value, uint64_t size, uint8_t info,
                       uint8_t other, uint16_t shndx);
/* A segment (PT_LOAD etc.; PF_* flags) over sections first..last (indexes
 * from cc_elf_add_section, addresses increasing). Its file offset is made
 * congruent to its address modulo CC_ELF_SEGMENT_ALIGN. */
#define CC_ELF_SEGMENT_ALIGN 4096u
void cc_elf_add_segment(cc_elf_builder *b, uint32_t type, uint32_t flags, uint32_t first, uint32_t last);
/* Lays out the file into a malloc'd buffer. The builder stays usable (and
 * must still be destroyed). */
hcq_status cc_elf_builder_finish(cc_elf_builder *b, void **out, size_t *out_size);
void cc_elf_builder_destroy(cc_elf_builder *b);

#endif
