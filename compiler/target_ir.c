/* The "ir" target: the serialized kernel in an ELF (e_machine EM_NONE,
 * section .hcq.ir), run by an interpreter (the CPU device's fallback, and
 * the model the mock GPU targets follow with cubin- and code-object-shaped
 * ELFs). */
#include "compiler/cc.h"
#include "compiler/elf.h"

#include <stdlib.h>

hcq_status cc_ir_render(const cc_target *t, const hcq_kernel *k, char **source_out)
{
    (void)t;
    char *s = hcq_kernel_dump(k);
    if (!s) return hcq_error_status();
    *source_out = s;
    return HCQ_OK;
}

hcq_status cc_ir_binary_make(const hcq_kernel *k, void **out, size_t *out_size)
{
    void *blob = NULL;
    size_t size = 0;
    hcq_status st = hcq_kernel_serialize(k, &blob, &size);
    if (st) return st;
    cc_elf_builder *b = cc_elf_builder_create(EM_NONE, ET_REL, 0);
    if (!b) {
        free(blob);
        return HCQ_ENOMEM;
    }
    cc_elf_section_spec s = {.name = CC_IR_SECTION, .type = SHT_PROGBITS, .align = 8, .data = blob, .size = size};
    uint32_t idx = cc_elf_add_section(b, &s);
    cc_elf_add_symbol(b, k->name, 0, size, ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), STV_DEFAULT, (uint16_t)idx);
    st = cc_elf_builder_finish(b, out, out_size);
    cc_elf_builder_destroy(b);
    free(blob);
    return st;
}

hcq_status cc_ir_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    void *elf = NULL;
    size_t size = 0;
    hcq_status st = cc_ir_binary_make(k, &elf, &size);
    if (st) return st;
    hcq_binary *b = cc_binary_new(elf, size, t->name, "hcq ir v1");
    free(elf);
    if (!b) return HCQ_ENOMEM;
    *out = b;
    return HCQ_OK;
}

hcq_status cc_ir_binary_load(const void *data, size_t size, hcq_kernel **out)
{
    if (!out) return base_err(HCQ_EINVAL, "cc_ir_binary_load: out is NULL");
    cc_elf e;
    hcq_status st = cc_elf_open(&e, data, size);
    if (st) return base_err_prefix(st, "not an hcq ir binary");
    char what[128];
    cc_elf_describe(e.machine, e.type, what, sizeof what);
    const cc_elf_section *s = cc_elf_find_section(&e, CC_IR_SECTION);
    if (e.machine != EM_NONE || !s || !s->data) {
        st = base_err(HCQ_EFORMAT,
                      "this is %s%s, not an hcq ir binary (an ELF with e_machine 0 and a " CC_IR_SECTION
                      " section); compile the kernel for the target of the device that loads it", what,
                      e.machine == EM_NONE ? " without a " CC_IR_SECTION " section" : "");
    } else {
        st = hcq_kernel_deserialize(s->data, s->size, out);
        if (st) st = base_err_prefix(st, "hcq ir binary, section " CC_IR_SECTION);
    }
    cc_elf_close(&e);
    return st;
}
