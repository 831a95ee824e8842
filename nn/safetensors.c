/* safetensors files: the reader (a bounds-checked parser of the JSON
 * header, fuzzed by tests/fuzz/fuzz_safetensors.c) and the writer.
 *
 * A file is an 8-byte little-endian header length N, N bytes of JSON, then
 * the data. The header maps each tensor's name to its dtype, shape and
 * [begin, end) byte range in the data; "__metadata__" maps strings to
 * strings. We accept what the format allows and check what it requires:
 * every range inside the data, its size matching dtype and shape, the
 * ranges covering the data without overlaps or holes, names unique. */
#include "nn/nn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_MAX_HEADER (100u << 20) /* the format's own limit */
#define ST_MAX_DEPTH 64

/* ** the JSON header */
typedef struct jp {
    const char *s;
    size_t n, i;
    hcq_status err;
} jp;

static hcq_status jerr(jp *p, const char *what)
{
    if (!p->err) p->err = base_err(HCQ_EFORMAT, "safetensors header: at byte %zu: %s", p->i, what);
    return p->err;
}

static void ws(jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool eat(jp *p, char c)
{
    ws(p);
    if (p->i < p->n && p->s[p->i] == c) {
        p->i++;
        return true;
    }
    return false;
}

static bool expect(jp *p, char c)
{
    if (eat(p, c)) return true;
    char m[32];
    snprintf(m, sizeof m, "expected '%c'", c);
    jerr(p, m);
    return false;
}

static int hexv(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void put_utf8(char *o, size_t *k, uint32_t cp)
{
    if (cp < 0x80) o[(*k)++] = (char)cp;
    else if (cp < 0x800) {
        o[(*k)++] = (char)(0xc0 | (cp >> 6));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*k)++] = (char)(0xe0 | (cp >> 12));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*k)++] = (char)(0xf0 | (cp >> 18));
        o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static bool hex4(jp *p, uint32_t *v)
{
    if (p->n - p->i < 4) return false;
    uint32_t x = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexv(p->s[p->i + (size_t)k]);
        if (h < 0) return false;
        x = x << 4 | (uint32_t)h;
    }
    p->i += 4;
    *v = x;
    return true;
}

/* a string, decoded into a new NUL-terminated buffer (out NULL: skipped) */
static bool str(jp *p, char **out)
{
    if (!expect(p, '"')) return false;
    size_t start = p->i, k = 0;
    /* the decoded form is never longer than the escaped one */
    size_t end = start;
    while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->n) return jerr(p, "a string runs past the header"), false;
    char *o = out ? malloc(end - start + 1) : NULL;
    if (out && !o) return p->err = base_err(HCQ_ENOMEM, "safetensors header: out of memory"), false;
    while (p->s[p->i] != '"') {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c < 0x20) {
            free(o);
            return jerr(p, "a control character in a string"), false;
        }
        if (c != '\\') {
            if (o) o[k++] = (char)c;
            continue;
        }
        char e = p->s[p->i++];
        uint32_t cp = 0;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!hex4(p, &cp)) {
                free(o);
                return jerr(p, "a bad \\u escape"), false;
            }
            if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
                uint32_t lo;
                if (p->n - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' || (p->i += 2, !hex4(p, &lo)) ||
                    lo < 0xdc00 || lo >= 0xe000) {
                    free(o);
                    return jerr(p, "an unpaired surrogate in a \\u escape"), false;
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                free(o);
                return jerr(p, "an unpaired surrogate in a \\u escape"), false;
            }
            if (!cp) {
                free(o);
                return jerr(p, "a NUL character in a string"), false;
            }
            break;
        default: free(o); return jerr(p, "an unknown escape"), false;
        }
        if (o) put_utf8(o, &k, cp);
    }
    p->i++; /* the closing quote */
    if (o) {
        o[k] = 0;
        *out = o;
    }
    return true;
}

/* a non-negative integer below 2^53 */
static bool juint(jp *p, uint64_t *v)
{
    ws(p);
    size_t start = p->i;
    uint64_t x = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        x = x * 10 + (uint64_t)(p->s[p->i++] - '0');
        if (x >= (1ull << 53)) return jerr(p, "a number too large"), false;
    }
    if (p->i == start) return jerr(p, "expected a non-negative integer"), false;
    if (p->i - start > 1 && p->s[start] == '0') return jerr(p, "a number with a leading zero"), false;
    if (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
        return jerr(p, "expected an integer, not a fraction"), false;
    *v = x;
    return true;
}

/* any JSON value, skipped (bounded nesting) */
static bool skip(jp *p, int depth)
{
    if (depth > ST_MAX_DEPTH) return jerr(p, "nested too deeply"), false;
    ws(p);
    if (p->i >= p->n) return jerr(p, "expected a value"), false;
    char c = p->s[p->i];
    if (c == '"') return str(p, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        p->i++;
        if (eat(p, close)) return true;
        do {
            if (c == '{' && (!str(p, NULL) || !expect(p, ':'))) return false;
            if (!skip(p, depth + 1)) return false;
        } while (eat(p, ','));
        return expect(p, close);
    }
    static const char *const words[] = {"true", "false", "null"};
    for (size_t k = 0; k < 3; k++) {
        size_t l = strlen(words[k]);
        if (p->n - p->i >= l && !memcmp(p->s + p->i, words[k], l)) {
            p->i += l;
            return true;
        }
    }
    /* a number: -?digits(.digits)?([eE][+-]?digits)? */
    size_t start = p->i;
    if (p->s[p->i] == '-') p->i++;
    size_t d0 = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    if (p->i == d0) return p->i = start, jerr(p, "expected a value"), false;
    if (p->i < p->n && p->s[p->i] == '.') {
        size_t f = ++p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == f) return jerr(p, "a number without digits after '.'"), false;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        size_t e = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == e) return jerr(p, "a number without exponent digits"), false;
    }
    return true;
}

static const struct {
    const char *name;
    hcq_dtype dt;
} st_dtypes[] = {{"F32", HCQ_F32}, {"F16", HCQ_F16}, {"BF16", HCQ_BF16}, {"I32", HCQ_I32}, {"BOOL", HCQ_BOOL}};

static const char *st_name(hcq_dtype dt)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(st_dtypes); i++)
        if (st_dtypes[i].dt == dt) return st_dtypes[i].name;
    return NULL;
}

/* {"dtype": .., "shape": [..], "data_offsets": [b, e]} in any order */
static bool tensor_info(jp *p, nn_st_entry *e)
{
    if (!expect(p, '{')) return false;
    bool have_dt = false, have_shape = false, have_off = false;
    if (eat(p, '}')) return jerr(p, "a tensor without dtype, shape and data_offsets"), false;
    do {
        size_t at = p->i;
        char *key = NULL;
        if (!str(p, &key) || !expect(p, ':')) {
            free(key);
            return false;
        }
        bool ok = true;
        if (!strcmp(key, "dtype")) {
            char *dt = NULL;
            ok = !have_dt && str(p, &dt);
            if (ok) {
                size_t k = 0;
                while (k < BASE_ARRAY_LEN(st_dtypes) && strcmp(dt, st_dtypes[k].name)) k++;
                if (k == BASE_ARRAY_LEN(st_dtypes)) {
                    if (!p->err)
                        p->err = base_err(HCQ_ENOTSUP,
                                          "safetensors header: tensor \"%s\" is %.16s; the tensor layer holds F32, F16, BF16, "
                                          "I32 and BOOL",
                                          e->name, dt);
                    ok = false;
                } else
                    e->dtype = st_dtypes[k].dt;
            } else if (have_dt)
                jerr(p, "dtype given twice");
            free(dt);
            have_dt = true;
        } else if (!strcmp(key, "shape")) {
            ok = !have_shape && expect(p, '[');
            if (have_shape) jerr(p, "shape given twice");
            if (ok && !eat(p, ']')) {
                do {
                    uint64_t v;
                    if (e->ndim == HCQ_MAX_DIMS) ok = (jerr(p, "more than 8 dims"), false);
                    else if ((ok = juint(p, &v))) e->shape[e->ndim++] = (int64_t)v;
                } while (ok && eat(p, ','));
                ok = ok && expect(p, ']');
            }
            have_shape = true;
        } else if (!strcmp(key, "data_offsets")) {
            ok = !have_off && expect(p, '[') && juint(p, &e->begin) && expect(p, ',') && juint(p, &e->end) && expect(p, ']');
            if (have_off) jerr(p, "data_offsets given twice");
            have_off = true;
        } else {
            ok = skip(p, 1); /* a key the format may add */
        }
        free(key);
        if (!ok) return false;
        (void)at;
    } while (eat(p, ','));
    if (!expect(p, '}')) return false;
    if (!have_dt || !have_shape || !have_off) return jerr(p, "a tensor without dtype, shape and data_offsets"), false;
    if (e->end < e->begin) return jerr(p, "data_offsets end before they begin"), false;
    /* the range holds exactly dtype * shape */
    uint64_t bytes = hcq_dtype_size(e->dtype);
    for (int d = 0; d < e->ndim; d++) {
        uint64_t s = (uint64_t)e->shape[d];
        if (s && bytes > (1ull << 53) / s) return jerr(p, "a shape too large"), false;
        bytes *= s;
    }
    if (bytes != e->end - e->begin) return jerr(p, "data_offsets do not match dtype and shape"), false;
    return true;
}

void nn_st_header_free(nn_st_header *h)
{
    for (int i = 0; i < h->n; i++) free(h->e[i].name);
    free(h->e);
    memset(h, 0, sizeof *h);
}

static int by_begin(const void *a, const void *b)
{
    const nn_st_entry *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

hcq_status nn_st_parse(const char *json, size_t len, nn_st_header *out)
{
    memset(out, 0, sizeof *out);
    jp P = {.s = json, .n = len}, *p = &P;
    nn_st_header h = {0};
    int cap = 0;
    bool meta = false;
    if (!expect(p, '{')) goto fail;
    if (!eat(p, '}')) {
        do {
            char *name = NULL;
            if (!str(p, &name)) goto fail;
            if (!expect(p, ':')) {
                free(name);
                goto fail;
            }
            if (!strcmp(name, "__metadata__")) {
                free(name);
                if (meta) {
                    jerr(p, "__metadata__ given twice");
                    goto fail;
                }
                meta = true;
                /* string -> string */
                if (!expect(p, '{')) goto fail;
                if (!eat(p, '}')) {
                    do {
                        if (!str(p, NULL) || !expect(p, ':') || !str(p, NULL)) goto fail;
                    } while (eat(p, ','));
                    if (!expect(p, '}')) goto fail;
                }
                continue;
            }
            for (int i = 0; i < h.n; i++)
                if (!strcmp(h.e[i].name, name)) {
                    free(name);
                    jerr(p, "a tensor name given twice");
                    goto fail;
                }
            if (h.n == cap) {
                int nc = cap ? cap * 2 : 16;
                nn_st_entry *ne = realloc(h.e, (size_t)nc * sizeof *ne);
                if (!ne) {
                    free(name);
                    p->err = base_err(HCQ_ENOMEM, "safetensors header: out of memory");
                    goto fail;
                }
                h.e = ne;
                cap = nc;
            }
            nn_st_entry *e = &h.e[h.n++];
            memset(e, 0, sizeof *e);
            e->name = name;
            if (!tensor_info(p, e)) goto fail;
        } while (eat(p, ','));
        if (!expect(p, '}')) goto fail;
    }
    ws(p);
    if (p->i != p->n) {
        jerr(p, "text after the header's object");
        goto fail;
    }
    /* the ranges tile [0, data_size) */
    if (h.n) {
        nn_st_entry *sorted = malloc((size_t)h.n * sizeof *sorted);
        if (!sorted) {
            p->err = base_err(HCQ_ENOMEM, "safetensors header: out of memory");
            goto fail;
        }
        memcpy(sorted, h.e, (size_t)h.n * sizeof *sorted);
        qsort(sorted, (size_t)h.n, sizeof *sorted, by_begin);
        uint64_t at = 0;
        for (int i = 0; i < h.n && !p->err; i++) {
            if (sorted[i].begin != at)
                p->err = base_err(HCQ_EFORMAT, "safetensors header: tensor \"%s\" starts at %llu, not %llu: the data has %s",
                                  sorted[i].name, (unsigned long long)sorted[i].begin, (unsigned long long)at,
                                  sorted[i].begin < at ? "overlapping ranges" : "a hole");
            at = sorted[i].end;
        }
        free(sorted);
        if (p->err) goto fail;
        h.data_size = at;
    }
    *out = h;
    return HCQ_OK;
fail:
    nn_st_header_free(&h);
    return p->err ? p->err : base_err(HCQ_EFORMAT, "safetensors header: malformed");
}

hcq_status nn_st_check_file(const uint8_t *file, size_t size, nn_st_header *out)
{
    memset(out, 0, sizeof *out);
    if (size < 8) return base_err(HCQ_EFORMAT, "safetensors: %zu bytes; the header length alone takes 8", size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | file[i];
    if (n > ST_MAX_HEADER || n > size - 8)
        return base_err(HCQ_EFORMAT, "safetensors: a header of %llu bytes in a file of %zu", (unsigned long long)n, size);
    nn_st_header h;
    hcq_status s = nn_st_parse((const char *)file + 8, (size_t)n, &h);
    if (s) return s;
    uint64_t have = size - 8 - n;
    if (h.data_size != have) {
        uint64_t want = h.data_size;
        nn_st_header_free(&h);
        return base_err(HCQ_EFORMAT, "safetensors: the header describes %llu bytes of data; the file has %llu",
                        (unsigned long long)want, (unsigned long long)have);
    }
    *out = h;
    return HCQ_OK;
}

/* ** files */
static hcq_status read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return base_err(HCQ_EINVAL, "cannot open %s: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    hcq_status s = HCQ_OK;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) {
                s = base_err(HCQ_ENOMEM, "reading %s: out of memory at %zu bytes", path, n);
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) s = base_err(HCQ_EIO, "reading %s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (s) {
        free(buf);
        return s;
    }
    *data = buf;
    *size = n;
    return HCQ_OK;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

hcq_status hcq_params_save(const hcq_params *p, const char *path)
{
    const char *fn = "hcq_params_save";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn);
    if (!path) return base_err(HCQ_EINVAL, "%s: path is NULL", fn);
    for (int i = 0; i < p->n; i++)
        if (!st_name(hcq_tensor_dtype(p->e[i].t)))
            return base_err(HCQ_EINVAL, "%s: \"%s\" is not a live tensor of a dtype safetensors files hold", fn, p->e[i].name);
    /* the header, in memory first: its length comes first in the file */
    char *hdr = NULL;
    size_t hlen = 0;
    FILE *m = open_memstream(&hdr, &hlen);
    if (!m) return base_err(HCQ_ENOMEM, "%s: out of memory", fn);
    fputs("{\"__metadata__\":{\"format\":\"pt\",\"writer\":\"hcq\"}", m);
    uint64_t off = 0;
    for (int i = 0; i < p->n; i++) {
        hcq_tensor *t = p->e[i].t;
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        uint64_t bytes = (uint64_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
        fputc(',', m);
        json_str(m, p->e[i].name);
        fprintf(m, ":{\"dtype\":\"%s\",\"shape\":[", st_name(hcq_tensor_dtype(t)));
        for (int d = 0; d < nd; d++) fprintf(m, "%s%lld", d ? "," : "", (long long)shape[d]);
        fprintf(m, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + bytes));
        off += bytes;
    }
    fputc('}', m);
    while ((ftell(m) & 7) != 0) fputc(' ', m); /* data aligned to 8 bytes */
    if (fclose(m)) {
        free(hdr);
        return base_err(HCQ_ENOMEM, "%s: out of memory", fn);
    }
    hcq_status s = HCQ_OK;
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(hdr);
        return base_err(HCQ_EINVAL, "%s: cannot create %s: %s", fn, path, strerror(errno));
    }
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    if (fwrite(len, 1, 8, f) != 8 || fwrite(hdr, 1, hlen, f) != hlen) s = base_err(HCQ_EIO, "%s: writing %s: %s", fn, path, strerror(errno));
    free(hdr);
    for (int i = 0; i < p->n && !s; i++) {
        hcq_tensor *t = p->e[i].t;
        size_t bytes = (size_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf) s = base_err(HCQ_ENOMEM, "%s: %zu bytes for \"%s\"", fn, bytes, p->e[i].name);
        if (!s) s = hcq_tensor_read(t, buf, bytes);
        if (!s && fwrite(buf, 1, bytes, f) != bytes) s = base_err(HCQ_EIO, "%s: writing %s: %s", fn, path, strerror(errno));
        free(buf);
    }
    if (fclose(f) && !s) s = base_err(HCQ_EIO, "%s: writing %s: %s", fn, path, strerror(errno));
    if (s) remove(path);
    return s;
}

/* "[2, 3]" */
static void shape_text(char *buf, size_t size, const int64_t *shape, int nd)
{
    size_t off = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < nd && off < size; d++)
        off += (size_t)snprintf(buf + off, size - off, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (off < size) snprintf(buf + off, size - off, "]");
}

hcq_status hcq_params_load(hcq_params *p, const char *path)
{
    const char *fn = "hcq_params_load";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn);
    if (!path) return base_err(HCQ_EINVAL, "%s: path is NULL", fn);
    uint8_t *file = NULL;
    size_t size = 0;
    hcq_status s = read_file(path, &file, &size);
    if (s) return base_err_prefix(s, "%s", fn);
    nn_st_header h;
    s = nn_st_check_file(file, size, &h);
    if (s) {
        free(file);
        return base_err_prefix(s, "%s: %s", fn, path);
    }
    const uint8_t *data = file + size - h.data_size;
    hcq_tensor **dst = base_calloc((size_t)(p->n ? p->n : 1), sizeof *dst), **val = base_calloc((size_t)(p->n ? p->n : 1), sizeof *val);
    size_t mark = hcq_ctx_mark(p->ctx);
    if (!dst || !val) s = HCQ_ENOMEM;
    for (int i = 0; i < p->n && !s; i++) {
        hcq_tensor *t = p->e[i].t;
        const nn_st_entry *e = NULL;
        for (int k = 0; k < h.n && !e; k++)
            if (!strcmp(h.e[k].name, p->e[i].name)) e = &h.e[k];
        if (!e) {
            s = base_err(HCQ_EINVAL, "%s: %s has no tensor \"%s\"", fn, path, p->e[i].name);
            break;
        }
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        if (e->dtype != hcq_tensor_dtype(t) || e->ndim != nd || memcmp(e->shape, shape, (size_t)nd * sizeof *shape)) {
            char in_file[160], in_model[160];
            shape_text(in_file, sizeof in_file, e->shape, e->ndim);
            shape_text(in_model, sizeof in_model, shape, nd);
            bool dt_differs = e->dtype != hcq_tensor_dtype(t), shape_differs = strcmp(in_file, in_model) != 0;
            s = base_err(HCQ_EINVAL, "%s: \"%s\" in %s is %s %s (%s in the file), of another %s than the model's %s %s: "
                         "load a file saved from this model", fn, e->name, path, hcq_dtype_name(e->dtype), in_file,
                         st_name(e->dtype), dt_differs && shape_differs ? "dtype and shape" : dt_differs ? "dtype" : "shape",
                         hcq_dtype_name(hcq_tensor_dtype(t)), in_model);
            break;
        }
        dst[i] = t;
        val[i] = hcq_from_data(p->ctx, e->dtype, e->shape, e->ndim, data + e->begin);
        if (!val[i]) s = hcq_error_status();
    }
    if (!s) {
        bool prev = hcq_set_grad_enabled(false);
        s = hcq_assign_all(dst, val, p->n);
        hcq_set_grad_enabled(prev);
    }
    hcq_ctx_release(p->ctx, mark);
    free(dst);
    free(val);
    nn_st_header_free(&h);
    free(file);
    return s;
}
