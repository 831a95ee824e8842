#include "fuzz.h"

#include "compiler/cc.h"
#include "compiler/elf.h"

int hcq_fuzz_elf(const uint8_t *data, size_t size)
{
    char buf[128];
    cc_elf_describe_bytes(data, size, buf, sizeof buf);
    cc_elf e;
    if (!cc_elf_open(&e, data, size)) {
        volatile uint64_t sink = 0;
        for (uint32_t i = 0; i < e.nsections; i++) {
            const cc_elf_section *s = &e.sections[i];
            sink += s->size + (s->name ? (uint8_t)s->name[0] : 0);
            if (s->data && s->size) sink += s->data[0] + s->data[s->size - 1];
        }
        for (uint32_t i = 0; i < e.nsegments; i++)
            if (e.segments[i].data && e.segments[i].filesz) sink += e.segments[i].data[e.segments[i].filesz - 1];
        for (uint32_t i = 0; i < e.nsymbols; i++) {
            const uint8_t *d;
            if (!cc_elf_symbol_data(&e, &e.symbols[i], &d) && e.symbols[i].size) sink += d[e.symbols[i].size - 1];
        }
        cc_elf_find_section(&e, ".text");
        cc_elf_find_symbol(&e, "hcq_entry");
        (void)sink;
        cc_elf_close(&e);
    }
    hcq_kernel *k = NULL;
    if (!cc_ir_binary_load(data, size, &k)) hcq_kernel_destroy(k);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_elf)
#endif
