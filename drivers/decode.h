/* drivers/decode.h: decoding command streams into text, for `hcq decode`
 * and for HCQ_DEBUG=4. One decoder per stream format (drivers/dump.h names
 * them: "cpu", "nv-gpfifo", "nv-qmd", "amd-pm4", "amd-sdma", "amd-aql",
 * "hcq-names").
 * Decoders read the same packet tables the encoders and engines use, never
 * a copy of them, and print anything they do not know as numbers, never
 * dropping it. Text that comes from the input (kernel names) is printed
 * with control bytes replaced, so no terminal escape reaches the output.
 *
 * The entry points (drv_decoder.decode, drv_decoder_find/at) are stable:
 * `hcq trace --streams` calls them on streams captured from any program. */
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
    /* Whether arch is one this format knows (false with why: the values it
     * takes), for `hcq decode --arch`; NULL takes any. */
    bool (*arch_ok)(uint32_t arch, char *why, size_t why_size);
} drv_decoder;

/* The decoder for a format, or NULL. */
const drv_decoder *drv_decoder_find(const char *format);
/* Decoder i, or NULL past the last (fuzzing walks them all). */
const drv_decoder *drv_decoder_at(size_t i);
/* Every format a decoder exists for, comma-separated (for messages). */
const char *drv_decoder_formats(void);

/* ** kernel names: decoders print the name of the program a launch starts
 * instead of its address. The queue layer adds every program it loads
 * (hcq_program.launch_addr) and writes them into dumps as "hcq-names"
 * records; decoding such a record adds it too, so `hcq decode DIR` names
 * the kernels of launches that follow in the directory. Process-wide;
 * the oldest entries go past a few thousand. */
void drv_symbol_add(uint64_t addr, uint64_t size, const char *name);
void drv_symbol_remove(uint64_t addr);
/* Copies the name of the symbol at addr (addr inside [start, start+size),
 * or exactly start when size is 0) into out, printable; false if none. */
bool drv_symbol_name(uint64_t addr, char *out, size_t size);
/* Writes src into out with control bytes and DEL as '?' (always terminated). */
void drv_printable(char *out, size_t size, const char *src, size_t len);

extern const drv_decoder drv_cpu_decoder;
extern const drv_decoder drv_nv_gpfifo_decoder; /* drivers/nv/nv_decode.c */
extern const drv_decoder drv_nv_qmd_decoder;
extern const drv_decoder drv_amd_pm4_decoder;  /* drivers/amd/amd_decode.c */
extern const drv_decoder drv_amd_sdma_decoder; /* drivers/amd/amd_decode.c */
extern const drv_decoder drv_names_decoder;    /* drivers/decode.c: "hcq-names" */
extern const drv_decoder drv_amd_aql_decoder;  /* drivers/amd/amd_decode_aql.c */

#endif
