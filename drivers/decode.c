#include "drivers/decode.h"

#include "base/base.h"

#include <string.h>

/* Decoders built in; the NV and AMD backends add theirs here. */
static const drv_decoder *const decoders[] = {&drv_cpu_decoder, &drv_nv_gpfifo_decoder, &drv_nv_qmd_decoder,
                                              &drv_amd_pm4_decoder, &drv_amd_sdma_decoder};

const drv_decoder *drv_decoder_find(const char *format)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(decoders); i++)
        if (!strcmp(decoders[i]->format, format)) return decoders[i];
    return NULL;
}

const drv_decoder *drv_decoder_at(size_t i) { return i < BASE_ARRAY_LEN(decoders) ? decoders[i] : NULL; }

const char *drv_decoder_formats(void)
{
    static char list[256];
    size_t off = 0;
    for (size_t i = 0; i < BASE_ARRAY_LEN(decoders) && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", decoders[i]->format);
    return list;
}
