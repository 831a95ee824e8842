/* Fuzz targets. Each is an entry taking arbitrary bytes; it must never
 * crash, hang or leak, whatever the input. Built two ways:
 *   - with -DHCQ_LIBFUZZER into a libFuzzer binary (make fuzz / fuzz-run);
 *   - into the normal test build, where tests/unit/test_fuzz_regressions.c
 *     replays tests/fuzz/seeds/NAME/ and tests/fuzz/regressions/NAME/ (every
 *     crash a fuzzer ever found stays there as a regression test). */
#ifndef HCQ_TESTS_FUZZ_H
#define HCQ_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

typedef int (*hcq_fuzz_fn)(const uint8_t *data, size_t size);

/* serialized IR: deserialize, verify, dump, render C, interpret (all
 * accesses refused, bounded op budget) */
int hcq_fuzz_ir(const uint8_t *data, size_t size);
/* ELF files: parse, walk sections/segments/symbols, describe, load as an
 * "ir" binary */
int hcq_fuzz_elf(const uint8_t *data, size_t size);

/* command streams: every registered decoder (the first byte picks it) */
int hcq_fuzz_decode(const uint8_t *data, size_t size);
/* NVIDIA cubins: parse, lay out and relocate as the NV loader does */
int hcq_fuzz_cubin(const uint8_t *data, size_t size);
/* AMDGPU code objects: parse (descriptor, metadata), place and relocate */
int hcq_fuzz_codeobj(const uint8_t *data, size_t size);

/* safetensors files: the header's JSON parser and the file checks */
int hcq_fuzz_safetensors(const uint8_t *data, size_t size);

#define HCQ_FUZZ_MAIN(fn)                                                                          \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fn(data, size); }

#endif
