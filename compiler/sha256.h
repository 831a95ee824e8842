/* compiler/sha256.h: SHA-256 (FIPS 180-4) for cache keys and cache entry
 * checksums. Incremental, no allocation. */
#ifndef HCQ_COMPILER_SHA256_H
#define HCQ_COMPILER_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct cc_sha256_ctx {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    uint8_t buf[64];
    uint32_t nbuf;
} cc_sha256_ctx;

void cc_sha256_init(cc_sha256_ctx *s);
void cc_sha256_update(cc_sha256_ctx *s, const void *data, size_t size);
void cc_sha256_final(cc_sha256_ctx *s, uint8_t out[32]);
/* One-shot helper. */
void cc_sha256_once(const void *data, size_t size, uint8_t out[32]);
/* 64 lowercase hex digits and a NUL. */
void cc_sha256_hex(const uint8_t digest[32], char out[65]);

#endif
