/* drivers/decode.h: decoding command streams into text, for `hcq decode`
 * and for HCQ_DEBUG=4. One decoder per stream format (drivers/dump.h names
 * them: "cpu", "nv-gpfifo", "amd-pm4", "amd-sdma"). Decoders read the same
 * packet tables the encoders and engines use, never a copy of them, and
 * print anything they do not know as numbers, never dropping it. */
#ifndef HCQ_DRIVERS_DECODE_H
#define HCQ_DRIVERS_DECODE_H

#include <hcq/base.h>
#include <stdio.h>

typedef struct drv_decoder {
    const char *format;
    /* Decodes dw[0..ndw) (at device address va) to out, one packet per
     * line. Returns HCQ_OK, or HCQ_EFORMAT after printing what it could
     * when the stream is malformed (it never reads past ndw). */
    hcq_status (*decode)(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out);
} drv_decoder;

/* The decoder for a format, or NULL. */
const drv_decoder *drv_decoder_find(const char *format);
/* Decoder i, or NULL past the last (fuzzing walks them all). */
const drv_decoder *drv_decoder_at(size_t i);
/* Every format a decoder exists for, comma-separated (for messages). */
const char *drv_decoder_formats(void);

extern const drv_decoder drv_cpu_decoder;
extern const drv_decoder drv_nv_gpfifo_decoder; /* drivers/nv/nv_decode.c */
extern const drv_decoder drv_nv_qmd_decoder;
extern const drv_decoder drv_amd_pm4_decoder;  /* drivers/amd/amd_decode.c */
extern const drv_decoder drv_amd_sdma_decoder; /* drivers/amd/amd_decode.c */

#endif
