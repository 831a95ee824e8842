#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#include "drivers/decode.h"

/* The first byte picks a decoder, the next four the arch; the rest is the
 * stream. Decoding goes to /dev/null: only crashes and hangs matter. */
int hcq_fuzz_decode(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    size_t n = 0;
    while (drv_decoder_at(n)) n++;
    const drv_decoder *d = drv_decoder_at(data[0] % n);
    uint32_t arch;
    memcpy(&arch, data + 1, 4);
    size_t ndw = (size - 5) / 4;
    uint32_t dw[4096];
    if (ndw > 4096) ndw = 4096;
    memcpy(dw, data + 5, ndw * 4);
    FILE *out = fopen("/dev/null", "w");
    if (!out) return 0;
    d->decode(arch, 0x1000, dw, (uint32_t)ndw, out);
    fclose(out);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_decode)
#endif
