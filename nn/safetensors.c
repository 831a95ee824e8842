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
#include <sys/stat.h>
#include <unistd.h>

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
} st_dtypes[] = {
    /* the format's dtype tags (huggingface/safetensors, README's format
     * section); F8 and the other tags have no tensor dtype here */
    {"F64", HCQ_F64}, {"F32", HCQ_F32}, {"F16", HCQ_F16}, {"BF16", HCQ_BF16}, {"I64", HCQ_I64}, {"U64", HCQ_U64},
    {"I32", HCQ_I32}, {"U32", HCQ_U32}, {"I16", HCQ_I16}, {"U16", HCQ_U16},   {"I8", HCQ_I8},   {"U8", HCQ_U8},
    {"BOOL", HCQ_BOOL},
};

const char *nn_st_dtype_name(hcq_dtype dt)
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
                                          "safetensors header: tensor \"%s\" is %.16s; the tensor layer holds F64, F32, F16, "
                                          "BF16, I64, U64, I32, U32, I16, U16, I8, U8 and BOOL",
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
    free(h->by_name);
    memset(h, 0, sizeof *h);
}

/* by (begin, end), as the format's reference implementation orders them
 * (huggingface/safetensors, safetensors/src/tensor.rs: data_offsets
 * compared as a pair), so a zero-size tensor at [b, b] sorts before one
 * that starts at b, wherever either stands in the header */
static int by_range(const void *a, const void *b)
{
    const nn_st_entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static int by_name(const void *a, const void *b, void *entries)
{
    const nn_st_entry *e = entries;
    return strcmp(e[*(const int *)a].name, e[*(const int *)b].name);
}

const nn_st_entry *nn_st_find(const nn_st_header *h, const char *name)
{
    int lo = 0, hi = h->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(h->e[h->by_name[mid]].name, name);
        if (!c) return &h->e[h->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
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
    /* names unique: sorted, so a header of n names costs n log n, not the
     * n^2 of comparing each with all before it (a 100 MB header would take
     * hours) */
    if (h.n > 0) {
        h.by_name = malloc((size_t)(unsigned)h.n * sizeof *h.by_name);
        if (!h.by_name) {
            p->err = base_err(HCQ_ENOMEM, "safetensors header: out of memory");
            goto fail;
        }
        for (int i = 0; i < h.n; i++) h.by_name[i] = i;
        qsort_r(h.by_name, (size_t)(unsigned)h.n, sizeof *h.by_name, by_name, h.e);
        for (int i = 1; i < h.n; i++)
            if (!strcmp(h.e[h.by_name[i - 1]].name, h.e[h.by_name[i]].name)) {
                p->err = base_err(HCQ_EFORMAT, "safetensors header: a tensor name given twice: \"%s\"",
                                  h.e[h.by_name[i]].name);
                goto fail;
            }
    }
    /* the ranges tile [0, data_size) */
    if (h.n > 0) {
        size_t n = (size_t)(unsigned)h.n;
        nn_st_entry *sorted = malloc(n * sizeof *sorted);
        if (!sorted) {
            p->err = base_err(HCQ_ENOMEM, "safetensors header: out of memory");
            goto fail;
        }
        memcpy(sorted, h.e, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, by_range);
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

/* the header length n against a file of size bytes */
static hcq_status check_header_len(uint64_t n, uint64_t size)
{
    if (size < 8) return base_err(HCQ_EFORMAT, "safetensors: %llu bytes; the header length alone takes 8", (unsigned long long)size);
    if (n > ST_MAX_HEADER || n > size - 8)
        return base_err(HCQ_EFORMAT, "safetensors: a header of %llu bytes in a file of %llu", (unsigned long long)n,
                        (unsigned long long)size);
    return HCQ_OK;
}

/* the data the header describes against the bytes after it */
static hcq_status check_data_len(nn_st_header *h, uint64_t have)
{
    if (h->data_size == have) return HCQ_OK;
    uint64_t want = h->data_size;
    nn_st_header_free(h);
    return base_err(HCQ_EFORMAT, "safetensors: the header describes %llu bytes of data; the file has %llu",
                    (unsigned long long)want, (unsigned long long)have);
}

static uint64_t le64(const uint8_t *b)
{
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | b[i];
    return n;
}

hcq_status nn_st_check_file(const uint8_t *file, size_t size, nn_st_header *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n = size >= 8 ? le64(file) : 0;
    hcq_status s = check_header_len(n, size);
    if (s) return s;
    nn_st_header h;
    if ((s = nn_st_parse((const char *)file + 8, (size_t)n, &h))) return s;
    if ((s = check_data_len(&h, size - 8 - n))) return s;
    *out = h;
    return HCQ_OK;
}

/* exactly n bytes at off, or an error */
static hcq_status read_at(int fd, void *dst, size_t n, uint64_t off, const char *path)
{
    uint8_t *p = dst;
    while (n) {
        ssize_t r = pread(fd, p, n > (1u << 30) ? 1u << 30 : n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return base_err(HCQ_EIO, "reading %s: %s", path, strerror(errno));
        if (r == 0) return base_err(HCQ_EFORMAT, "%s: the file ends early (it shrank while being read?)", path);
        p += r, off += (uint64_t)r, n -= (size_t)r;
    }
    return HCQ_OK;
}

hcq_status nn_st_read_header(int fd, const char *path, nn_st_header *out, uint64_t *data_at)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(fd, &st)) return base_err(HCQ_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return base_err(HCQ_EINVAL, "%s is not a regular file", path);
    uint64_t size = (uint64_t)st.st_size;
    uint8_t len[8];
    hcq_status s = size >= 8 ? read_at(fd, len, 8, 0, path) : HCQ_OK;
    uint64_t n = size >= 8 ? le64(len) : 0;
    if (s || (s = check_header_len(n, size))) return s;
    /* at most ST_MAX_HEADER, and no more than the file holds */
    char *json = malloc(n ? n : 1);
    if (!json) return base_err(HCQ_ENOMEM, "safetensors: %llu bytes for the header of %s", (unsigned long long)n, path);
    s = read_at(fd, json, n, 8, path);
    nn_st_header h;
    if (!s) s = nn_st_parse(json, n, &h);
    free(json);
    if (s || (s = check_data_len(&h, size - 8 - n))) return s;
    *out = h;
    *data_at = 8 + n;
    return HCQ_OK;
}
