/* IDX files (the MNIST family's format): two zero bytes, a type byte, the
 * number of dims, each dim as a big-endian u32, then the elements
 * big-endian. Read through zlib's gz* functions, which read gzip files and
 * plain ones alike, so the Debian data sets are read as installed. */
#include "nn/nn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int nn_idx_elem_size(uint8_t t)
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

/* The data, bytes of it as the header says, into a new buffer. A plain
 * file's size was checked against the header before this; a gzip file's
 * uncompressed size is known only by reading it, so the buffer grows with
 * what arrives (doubling, never past bytes): a header that claims 128 GiB
 * of a 1 KiB file fails at its end having allocated kilobytes. */
static hcq_status read_data(gzFile f, size_t bytes, bool plain, void **out, const char *path, const char *fn)
{
    size_t cap = plain ? bytes : BASE_MIN(bytes, (size_t)1 << 20), have = 0;
    uint8_t *buf = malloc(cap ? cap : 1);
    hcq_status s = buf ? HCQ_OK : base_err(HCQ_ENOMEM, "%s: %zu bytes for %s", fn, cap, path);
    while (!s && have < bytes) {
        if (have == cap) {
            size_t nc = cap > bytes / 2 ? bytes : cap * 2;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) {
                s = base_err(HCQ_ENOMEM, "%s: %zu bytes for %s", fn, nc, path);
                break;
            }
            buf = nb, cap = nc;
        }
        s = gz_read(f, buf + have, cap - have, path, "data");
        have = cap;
    }
    if (s) {
        free(buf);
        return s;
    }
    *out = buf;
    return HCQ_OK;
}

hcq_status hcq_idx_read(const char *path, hcq_idx *out)
{
    const char *fn = "hcq_idx_read";
    if (!path || !out) return base_err(HCQ_EINVAL, "%s: path or out is NULL", fn);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int e = errno;
        if (fd >= 0) close(fd);
        return base_err(HCQ_EINVAL, "%s: cannot open %s: %s", fn, path, strerror(e));
    }
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        close(fd);
        return base_err(HCQ_ENOMEM, "%s: %s: out of memory", fn, path);
    }
    hcq_idx x = {0};
    uint8_t magic[4];
    hcq_status s = gz_read(f, magic, 4, path, "magic number");
    int es = s ? 0 : nn_idx_elem_size(magic[2]);
    if (!s && (magic[0] || magic[1] || !es || magic[3] < 1 || magic[3] > HCQ_MAX_DIMS))
        s = base_err(HCQ_EFORMAT, "%s: %s is not an IDX file: magic %02x %02x %02x %02x (want 00 00, a type 08 09 0b 0c 0d 0e, "
                                  "1 to %d dims)",
                     fn, path, magic[0], magic[1], magic[2], magic[3], HCQ_MAX_DIMS);
    /* the element count with every product checked: dims of 2^17, 2^17
     * and 2^30 must not wrap to 0 and pass for an empty file */
    uint64_t numel = 1;
    bool big = false;
    for (int d = 0; !s && d < magic[3]; d++) {
        uint8_t b[4];
        s = gz_read(f, b, 4, path, "dimensions");
        if (s) break;
        uint64_t v = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
        x.shape[d] = (int64_t)v;
        if (__builtin_mul_overflow(numel, v, &numel)) big = true;
    }
    if (!s && (big || numel > (1ull << 34))) {
        char dims[128] = "";
        for (int d = 0, k = 0; d < magic[3] && k < (int)sizeof dims; d++)
            k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%lld", d ? ", " : "", (long long)x.shape[d]);
        s = base_err(HCQ_ELIMIT, "%s: %s: dims [%s] make more than 2^34 elements", fn, path, dims);
    }
    size_t hdr = 4 + 4 * (size_t)(s ? 0 : magic[3]);
    uint64_t bytes = numel * (uint64_t)es; /* below 2^37 */
    bool plain = !s && gzdirect(f);
    /* a plain file's size says at once whether the header is true */
    if (plain && (uint64_t)st.st_size != hdr + bytes)
        s = base_err(HCQ_EFORMAT, "%s: %s: the header describes %llu elements (%llu bytes of data); the file has %llu "
                                  "bytes after its %zu-byte header",
                     fn, path, (unsigned long long)numel, (unsigned long long)bytes,
                     (unsigned long long)((uint64_t)st.st_size > hdr ? (uint64_t)st.st_size - hdr : 0), hdr);
    if (!s) {
        x.type = magic[2];
        x.ndim = magic[3];
        x.size_B = (size_t)bytes;
        s = read_data(f, x.size_B, plain, &x.data, path, fn);
    }
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

hcq_tensor *hcq_idx_tensor(hcq_ctx *ctx, const hcq_idx *x)
{
    const char *fn = "hcq_idx_tensor";
    if (!x || !x->data || !x->size_B)
        return base_err(HCQ_EINVAL, "%s: x is NULL or holds no data (hcq_idx_read first)", fn), NULL;
    hcq_dtype dt;
    switch (x->type) { /* the IDX type codes (nn.h) */
    case 0x08: dt = HCQ_U8; break;
    case 0x09: dt = HCQ_I8; break;
    case 0x0b: dt = HCQ_I16; break;
    case 0x0c: dt = HCQ_I32; break;
    case 0x0d: dt = HCQ_F32; break;
    case 0x0e: dt = HCQ_F64; break;
    default: return base_err(HCQ_EINVAL, "%s: IDX type 0x%02x is not one of the format's", fn, x->type), NULL;
    }
    if (x->ndim < 0 || x->ndim > HCQ_MAX_DIMS) return base_err(HCQ_EINVAL, "%s: %d dims", fn, x->ndim), NULL;
    uint64_t n = 1;
    for (int d = 0; d < x->ndim; d++) n *= (uint64_t)x->shape[d];
    if (n * hcq_dtype_size(dt) != x->size_B)
        return base_err(HCQ_EINVAL, "%s: %zu bytes of data for %llu elements of %s", fn, x->size_B, (unsigned long long)n,
                        hcq_dtype_name(dt)),
               NULL;
    hcq_tensor *t = hcq_from_data(ctx, dt, x->shape, x->ndim, x->data);
    if (!t) base_err_prefix(hcq_error_status(), "%s", fn);
    return t;
}

double hcq_idx_get(const hcq_idx *x, int64_t i)
{
    const uint8_t *p = (const uint8_t *)x->data + (size_t)i * (size_t)nn_idx_elem_size(x->type);
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
