#include "fuzz.h"

#include "drivers/amd/amd.h"

#include <stdlib.h>

/* the AMD program loader's device-free half: parse the code object (ELF,
 * kernel descriptor, msgpack metadata with the kernargs), then place its
 * segments into an image at a GPU address as the loader does */
int hcq_fuzz_codeobj(const uint8_t *data, size_t size)
{
    amd_co co;
    if (amd_co_parse(data, size, NULL, &co)) return 0;
    volatile uint64_t sink = co.entry_offset + co.kernarg_bytes + co.nparams;
    amd_sgpr_layout lay;
    amd_sgpr_layout_of(co.kd.kernel_code_properties, &lay);
    (void)lay;
    /* the parser bounds image_size; an image the loader would refuse for
     * its size is not placed here either */
    if (co.image_size && co.image_size <= (64u << 20)) {
        uint8_t *img = calloc(1, co.image_size);
        if (img) {
            amd_co_place(data, size, img, 0x7f0000000000ull, co.image_size);
            sink += img[co.image_size - 1];
            free(img);
        }
    }
    (void)sink;
    amd_co_free(&co);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_codeobj)
#endif
