/* IDX files (the MNIST family's format): two zero bytes, a type byte, the
 * number of dims, each dim as a big-endian u32, then the elements
 * big-endian. Read through zlib's gz* functions, which read gzip files and
 * plain ones alike, so the Debian data sets are read as installed. */
#include "nn/nn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int type_size(uint8_t t)
{
    switch (t) {
    case 0x08:
    case 0x09: return 1;
    case 0x0b: return 2;
    case 0x0c:
    case 0x0d: return 4;
    case 0x0e: return 8;
    default: return 0;
    }
}

/* exactly n bytes, or an error naming what was being read */
static hcq_status gz_read(gzFile f, void *dst, size_t n, const char *path, const char *what)
{
    uint8_t *p = dst;
    while (n) {
        unsigned chunk = n > (1u << 30) ? 1u << 30 : (unsigned)n;
        int r = gzread(f, p, chunk);
        if (r <= 0) {
            int zerr = 0;
            const char *msg = gzerror(f, &zerr);
            if (r < 0 || zerr)
                return base_err(HCQ_EFORMAT, "%s: reading %s: %s", path, what, zerr == Z_ERRNO ? strerror(errno) : msg);
            return base_err(HCQ_EFORMAT, "%s: the file ends in the %s", path, what);
        }
        p += r;
        n -= (size_t)r;
    }
    return HCQ_OK;
}

hcq_status hcq_idx_read(const char *path, hcq_idx *out)
{
    const char *fn = "hcq_idx_read";
    if (!path || !out) return base_err(HCQ_EINVAL, "%s: path or out is NULL", fn);
    gzFile f = gzopen(path, "rb");
    if (!f) return base_err(HCQ_EINVAL, "%s: cannot open %s: %s", fn, path, errno ? strerror(errno) : "out of memory");
    hcq_idx x = {0};
    uint8_t magic[4];
    hcq_status s = gz_read(f, magic, 4, path, "magic number");
    int es = s ? 0 : type_size(magic[2]);
    if (!s && (magic[0] || magic[1] || !es || magic[3] < 1 || magic[3] > HCQ_MAX_DIMS))
        s = base_err(HCQ_EFORMAT, "%s: %s is not an IDX file: magic %02x %02x %02x %02x (want 00 00, a type 08 09 0b 0c 0d 0e, "
                                  "1 to %d dims)",
                     fn, path, magic[0], magic[1], magic[2], magic[3], HCQ_MAX_DIMS);
    uint64_t numel = 1;
    for (int d = 0; !s && d < magic[3]; d++) {
        uint8_t b[4];
        s = gz_read(f, b, 4, path, "dimensions");
        if (s) break;
        uint64_t v = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
        x.shape[d] = (int64_t)v;
        numel *= v;
        if (numel > (1ull << 34))
            s = base_err(HCQ_ELIMIT, "%s: %s: more than 2^34 elements", fn, path);
    }
    if (!s) {
        x.type = magic[2];
        x.ndim = magic[3];
        x.size_B = (size_t)numel * (size_t)es;
        x.data = malloc(x.size_B ? x.size_B : 1);
        if (!x.data) s = base_err(HCQ_ENOMEM, "%s: %zu bytes for %s", fn, x.size_B, path);
    }
    if (!s) s = gz_read(f, x.data, x.size_B, path, "data");
    if (!s) { /* nothing may follow */
        uint8_t extra;
        if (gzread(f, &extra, 1) > 0) s = base_err(HCQ_EFORMAT, "%s: %s has bytes after its %llu elements", fn, path, (unsigned long long)numel);
    }
    gzclose(f);
    if (s) {
        free(x.data);
        return s;
    }
    /* big-endian to native */
    uint8_t *d = x.data;
    for (uint64_t i = 0; es > 1 && i < numel; i++) {
        uint8_t *e = d + i * (uint64_t)es;
        for (int a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = e[a];
            e[a] = e[b];
            e[b] = t;
        }
    }
    *out = x;
    return HCQ_OK;
}

void hcq_idx_free(hcq_idx *x)
{
    if (!x) return;
    free(x->data);
    memset(x, 0, sizeof *x);
}

double hcq_idx_get(const hcq_idx *x, int64_t i)
{
    const uint8_t *p = (const uint8_t *)x->data + (size_t)i * (size_t)type_size(x->type);
    switch (x->type) {
    case 0x08: return *p;
    case 0x09: return (int8_t)*p;
    case 0x0b: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 0x0c: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case 0x0d: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    case 0x0e: {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    }
    return 0;
}
