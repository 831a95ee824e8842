/* Serialized IR: the payload of "ir" and mock-target binaries. Explicit
 * little-endian, byte by byte, so the blob means the same on every host.
 *
 *   0  u32 magic "HCIR"      4  u32 version (3)
 *   8  u32 op count          12 u32 name length (1..255)
 *   16 name bytes (no NUL)
 *   then per op 32 bytes: u16 op, u8 dtype, u8 nsrc, u8 flags, u8 pad[3] = 0,
 *        u32 src[4], u64 arg
 *   last u32: CRC-32 (IEEE) of everything before it
 *
 * Versions: 1 had no vectors (no HCQ_IR_FLAG_LANES bits, no vsplat, vget
 * or vset ops); 2 adds them; 3 adds mma. All are read (an older blob is a
 * newer one without the newer ops); 3 is written.
 *
 * The reader trusts nothing: every length is checked before use, every
 * field is range-checked, the checksum catches flips that would still make
 * a valid kernel, and the result must pass the verifier. Any failure is
 * HCQ_EFORMAT saying what was wrong. */
#include "compiler/ir.h"

#include <stdlib.h>
#include <string.h>

#define SER_MAGIC 0x52494348u /* "HCIR" */
#define SER_VERSION 3u
#define SER_VERSION_MIN 1u /* the oldest this build reads */
#define SER_HEADER 16u
#define SER_OP 32u

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

hcq_status ir_blob_size(const void *header, size_t *size_out)
{
    const uint8_t *h = header;
    if (get32(h) != SER_MAGIC || get32(h + 4) < SER_VERSION_MIN || get32(h + 4) > SER_VERSION)
        return base_err(HCQ_EFORMAT, "not serialized IR (magic 0x%08x version %u)", get32(h), get32(h + 4));
    uint32_t nops = get32(h + 8), name_len = get32(h + 12);
    if (name_len < 1 || name_len > 255 || nops > (1u << 24))
        return base_err(HCQ_EFORMAT, "serialized IR header claims %u ops and a %u-byte name", nops, name_len);
    *size_out = SER_HEADER + name_len + (size_t)nops * SER_OP + 4;
    return HCQ_OK;
}

hcq_status hcq_kernel_serialize(const hcq_kernel *k, void **out, size_t *out_size)
{
    if (!k || !out || !out_size) return base_err(HCQ_EINVAL, "hcq_kernel_serialize: NULL argument");
    hcq_status st = hcq_kernel_verify(k);
    if (st) return base_err_prefix(st, "hcq_kernel_serialize");
    size_t name_len = strlen(k->name);
    size_t size = SER_HEADER + name_len + (size_t)k->nops * SER_OP + 4;
    uint8_t *b = base_calloc(1, size);
    if (!b) return HCQ_ENOMEM;
    put32(b, SER_MAGIC);
    put32(b + 4, SER_VERSION);
    put32(b + 8, k->nops);
    put32(b + 12, (uint32_t)name_len);
    memcpy(b + SER_HEADER, k->name, name_len);
    uint8_t *p = b + SER_HEADER + name_len;
    for (uint32_t i = 0; i < k->nops; i++, p += SER_OP) {
        const hcq_ir_op *o = &k->ops[i];
        put16(p, o->op);
        p[2] = o->dtype;
        p[3] = o->nsrc;
        p[4] = o->flags;
        for (int j = 0; j < HCQ_IR_MAX_SRC; j++) put32(p + 8 + 4 * j, o->src[j]);
        put64(p + 24, o->arg);
    }
    put32(p, crc32_ieee(b, size - 4));
    *out = b;
    *out_size = size;
    return HCQ_OK;
}

static hcq_status bad(const char *fmt, ...) HCQ_PRINTF(1, 2);
static hcq_status bad(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_err(HCQ_EFORMAT, "malformed hcq IR blob: %s", msg);
}

static hcq_status read_header(const uint8_t *b, size_t size, uint32_t *nops, char *name)
{
    if (size < SER_HEADER + 4)
        return bad("%zu bytes, shorter than the %u-byte header and checksum", size, SER_HEADER + 4);
    if (get32(b) != SER_MAGIC) return bad("magic is 0x%08x, not 0x%08x (\"HCIR\"): not serialized IR", get32(b), SER_MAGIC);
    uint32_t ver = get32(b + 4);
    if (ver < SER_VERSION_MIN || ver > SER_VERSION)
        return bad("version %u; this build reads versions %u to %u (recompile the kernel)", ver, SER_VERSION_MIN,
                   SER_VERSION);
    uint32_t n = get32(b + 8), name_len = get32(b + 12);
    if (name_len == 0 || name_len > IR_NAME_MAX) return bad("name length %u is not 1..%d", name_len, IR_NAME_MAX);
    if (n > IR_MAX_OPS) return bad("%u ops, more than the %u a kernel may have", n, IR_MAX_OPS);
    uint64_t want = (uint64_t)SER_HEADER + name_len + (uint64_t)n * SER_OP + 4;
    if (want != size) return bad("%zu bytes, but the header (%u ops, %u-byte name) says %llu", size, n, name_len,
                                 (unsigned long long)want);
    for (uint32_t i = 0; i < name_len; i++) {
        uint8_t c = b[SER_HEADER + i];
        if (c < 0x20 || c > 0x7e) return bad("name byte %u is 0x%02x, not printable ASCII", i, c);
    }
    memcpy(name, b + SER_HEADER, name_len);
    name[name_len] = 0;
    *nops = n;
    return HCQ_OK;
}

static hcq_status read_op(const uint8_t *p, uint32_t i, uint32_t ver, hcq_ir_op *o)
{
    memset(o, 0, sizeof *o);
    o->op = get16(p);
    o->dtype = p[2];
    o->nsrc = p[3];
    o->flags = p[4];
    if (p[5] | p[6] | p[7]) return bad("op %u: padding bytes are not zero", i);
    if (ver < 2 && (o->flags & HCQ_IR_FLAG_LANES_MASK))
        return bad("op %u: flags 0x%x hold vector lanes, which version 1 blobs do not have", i, o->flags);
    if (ver < 2 && o->op >= HCQ_OP_VSPLAT && o->op <= HCQ_OP_VSET)
        return bad("op %u: op code %u (%s) is a version 2 op in a version 1 blob", i, o->op, hcq_op_name((hcq_op)o->op));
    if (ver < 3 && o->op == HCQ_OP_MMA)
        return bad("op %u: op code %u (%s) is a version 3 op in a version %u blob", i, o->op, hcq_op_name((hcq_op)o->op), ver);
    if (o->op >= HCQ_OP_COUNT) return bad("op %u: unknown op code %u", i, o->op);
    if (o->dtype >= HCQ_DTYPE_COUNT) return bad("op %u: unknown dtype code %u", i, o->dtype);
    if (o->nsrc > HCQ_IR_MAX_SRC) return bad("op %u: %u operands (at most %d)", i, o->nsrc, HCQ_IR_MAX_SRC);
    for (int j = 0; j < HCQ_IR_MAX_SRC; j++) o->src[j] = get32(p + 8 + 4 * j);
    o->arg = get64(p + 24);
    return HCQ_OK;
}

hcq_status ir_deserialize(const void *data, size_t size, bool check_sum, hcq_kernel **out)
{
    if (!data || !out) return base_err(HCQ_EINVAL, "hcq_kernel_deserialize: NULL argument");
    const uint8_t *b = data;
    uint32_t n = 0;
    char name[IR_NAME_MAX + 1];
    hcq_status st = read_header(b, size, &n, name);
    if (st) return st;
    uint32_t sum = get32(b + size - 4), calc = crc32_ieee(b, size - 4);
    if (check_sum && sum != calc)
        return bad("checksum 0x%08x does not match the contents (0x%08x): the blob is corrupt", sum, calc);
    hcq_kernel *k = hcq_kernel_create(name);
    if (!k) return hcq_error_status();
    if (n && !(k->ops = base_calloc(n, sizeof *k->ops))) {
        hcq_kernel_destroy(k);
        return HCQ_ENOMEM;
    }
    k->cap = n;
    const uint8_t *p = b + SER_HEADER + strlen(name);
    for (uint32_t i = 0; i < n; i++, p += SER_OP) {
        if ((st = read_op(p, i, get32(b + 4), &k->ops[i]))) {
            hcq_kernel_destroy(k);
            return st;
        }
        k->nops = i + 1;
    }
    if ((st = hcq_kernel_verify(k))) {
        hcq_kernel_destroy(k);
        return base_err_prefix(HCQ_EFORMAT, "malformed hcq IR blob: the kernel does not verify");
    }
    *out = k;
    return HCQ_OK;
}

hcq_status hcq_kernel_deserialize(const void *data, size_t size, hcq_kernel **out)
{
    return ir_deserialize(data, size, true, out);
}
