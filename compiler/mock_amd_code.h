/* compiler/mock_amd_code.h: what a mock AMD code object carries where the
 * machine code would be. The mock targets (mock-gfx1100, mock-gfx942) write
 * it at the kernel's entry; the mock GPU's command processor reads it at
 * the program address a dispatch names, as hardware fetches instructions;
 * the AMD loader looks for the magic to refuse mock code on real GPUs and
 * machine code on the mock. Like real code, it says where it expects its
 * kernarg pointer (which user SGPRs) and how much LDS it needs, so the mock
 * can check the dispatch the backend built. */
#ifndef HCQ_COMPILER_MOCK_AMD_CODE_H
#define HCQ_COMPILER_MOCK_AMD_CODE_H

#include <stdint.h>

#define CC_MOCK_AMD_MAGIC "HCQMOCK1"
enum { CC_MOCK_AMD_WAVE32 = 1u << 0 };

typedef struct cc_mock_amd_code {
    char magic[8];         /* CC_MOCK_AMD_MAGIC */
    uint32_t kernarg_sgpr; /* first of the two user SGPRs holding the kernarg pointer */
    uint32_t flags;        /* CC_MOCK_AMD_* */
    uint32_t local_bytes;  /* LDS the kernel uses */
    uint32_t ir_offset;    /* from this header to the serialized IR */
    uint32_t ir_size;
    uint32_t reserved;
} cc_mock_amd_code;
_Static_assert(sizeof(cc_mock_amd_code) == 32, "mock code header");

#endif
