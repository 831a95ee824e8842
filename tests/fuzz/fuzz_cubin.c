#include "fuzz.h"

#include "drivers/nv/nv.h"

/* the NV program loader's device-free half: parse the cubin (ELF, .nv.info
 * attributes, parameters, constant bank, shared memory), lay out its image
 * and apply its relocations at a GPU address */
int hcq_fuzz_cubin(const uint8_t *data, size_t size)
{
    nv_cubin c;
    if (nv_cubin_parse(data, size, "fuzz", NULL, &c)) return 0;
    volatile uint64_t sink = c.image_bytes + c.regs + c.param_bytes + c.nparams;
    if (c.image_bytes) sink += c.image[c.image_bytes - 1];
    (void)sink;
    nv_cubin_relocate(&c, 0x2000000000ull, "fuzz");
    nv_cubin_free(&c);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_cubin)
#endif
