#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"

/* safetensors files: the whole-file check (header length, the JSON
 * header's parser, offsets against the data), and the parser alone on the
 * input as JSON, so the fuzzer need not find a valid length prefix to
 * reach it. Every entry found is read back to the end of its name. */
int hcq_fuzz_safetensors(const uint8_t *data, size_t size)
{
    nn_st_header h;
    if (!nn_st_check_file(data, size, &h)) {
        volatile size_t sink = 0;
        for (int i = 0; i < h.n; i++) sink += strlen(h.e[i].name) + (size_t)h.e[i].ndim + (size_t)h.e[i].end;
        (void)sink;
        nn_st_header_free(&h);
    }
    /* the parser reads exactly `size` bytes: give it a copy with no NUL after */
    char *json = malloc(size ? size : 1);
    if (!json) return 0;
    memcpy(json, data, size);
    if (!nn_st_parse(json, size, &h)) nn_st_header_free(&h);
    free(json);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_safetensors)
#endif
