/* The nn layer's file formats without a device: the safetensors header
 * parser (valid headers, escapes, every malformation it must refuse, with
 * what the message says) and IDX files (gzip and plain, every element
 * type, truncation, bad magic, trailing bytes), and the installed
 * Fashion-MNIST files when dataset-fashion-mnist is there. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "hcqtest.h"
#include "nn/nn.h"

TestSuite(nn_files, .timeout = 120);

static hcq_status parse(const char *json, nn_st_header *h) { return nn_st_parse(json, strlen(json), h); }

Test(nn_files, safetensors_header)
{
    nn_st_header h;
    T_OK(parse("{\"__metadata__\":{\"format\":\"pt\"},"
               " \"b\":{\"shape\":[3],\"dtype\":\"F32\",\"data_offsets\":[24,36]},\n"
               " \"a\":{\"dtype\":\"F16\",\"shape\":[3,4],\"data_offsets\":[0,24],\"extra\":[1,{\"x\":null}]}}",
               &h));
    cr_assert_eq(h.n, 2);
    cr_assert_str_eq(h.e[0].name, "b");
    cr_assert_eq(h.e[0].dtype, HCQ_F32);
    cr_assert(h.e[0].ndim == 1 && h.e[0].shape[0] == 3 && h.e[0].begin == 24 && h.e[0].end == 36);
    cr_assert(h.e[1].dtype == HCQ_F16 && h.e[1].ndim == 2 && h.e[1].shape[1] == 4);
    cr_assert_eq(h.data_size, 36);
    nn_st_header_free(&h);
    /* escapes in names, a 0-d tensor, an empty one, no tensors at all */
    T_OK(parse("{\"l\\u00e9\\\"x\\\\\\ud83d\\ude00\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]},"
               "\"e\":{\"dtype\":\"BOOL\",\"shape\":[0,5],\"data_offsets\":[4,4]}}",
               &h));
    cr_assert_str_eq(h.e[0].name, "l\xc3\xa9\"x\\\xf0\x9f\x98\x80");
    cr_assert_eq(h.e[0].ndim, 0);
    nn_st_header_free(&h);
    T_OK(parse("{}", &h));
    cr_assert_eq(h.n, 0);
    nn_st_header_free(&h);
}

/* every dtype tag the tensor layer holds, with its element size (a range
 * of 3 elements must match it exactly) */
Test(nn_files, safetensors_dtype_tags)
{
    static const struct {
        const char *tag;
        hcq_dtype dt;
        int size;
    } tags[] = {{"F64", HCQ_F64, 8}, {"F32", HCQ_F32, 4},   {"F16", HCQ_F16, 2}, {"BF16", HCQ_BF16, 2},
                {"I64", HCQ_I64, 8}, {"U64", HCQ_U64, 8},   {"I32", HCQ_I32, 4}, {"U32", HCQ_U32, 4},
                {"I16", HCQ_I16, 2}, {"U16", HCQ_U16, 2},   {"I8", HCQ_I8, 1},   {"U8", HCQ_U8, 1},
                {"BOOL", HCQ_BOOL, 1}};
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        char json[160];
        nn_st_header h;
        snprintf(json, sizeof json, "{\"t\":{\"dtype\":\"%s\",\"shape\":[3],\"data_offsets\":[0,%d]}}", tags[i].tag,
                 3 * tags[i].size);
        T_OK(parse(json, &h));
        cr_assert_eq(h.e[0].dtype, tags[i].dt, "%s", tags[i].tag);
        nn_st_header_free(&h);
        snprintf(json, sizeof json, "{\"t\":{\"dtype\":\"%s\",\"shape\":[3],\"data_offsets\":[0,%d]}}", tags[i].tag,
                 3 * tags[i].size + 1);
        cr_assert_eq(parse(json, &h), HCQ_EFORMAT, "%s with a range one byte long", tags[i].tag);
    }
}

Test(nn_files, safetensors_refuses_malformed_headers)
{
    static const struct {
        const char *json, *says;
        hcq_status s;
    } bad[] = {
        {"", "expected '{'", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", "expected '}'", HCQ_EFORMAT},
        {"{\"a", "runs past the header", HCQ_EFORMAT},
        {"{\"a\\q\":{}}", "unknown escape", HCQ_EFORMAT},
        {"{\"a\\ud800\":{}}", "unpaired surrogate", HCQ_EFORMAT},
        {"{\"a\\u0000\":{}}", "NUL", HCQ_EFORMAT},
        {"{\"a\x01\":{}}", "control character", HCQ_EFORMAT},
        {"{\"a\":{}}", "without dtype", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", "leading zero", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", "not a fraction", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", "non-negative integer", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999],\"data_offsets\":[0,4]}}", "too large", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", "more than 8 dims", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", "do not match", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", "end before", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", "twice", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         "name given twice", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}",
         "overlapping", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", "a hole", HCQ_EFORMAT},
        {"{} x", "text after", HCQ_EFORMAT},
        {"{\"__metadata__\":{\"k\":1}}", "expected '\"'", HCQ_EFORMAT},
        {"{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", "F8_E4M3", HCQ_ENOTSUP},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nn_st_header h;
        hcq_status s = parse(bad[i].json, &h);
        cr_assert_eq(s, bad[i].s, "case %zu (%s): %s", i, bad[i].json, hcq_error_message());
        cr_assert(strstr(hcq_error_message(), bad[i].says), "case %zu: \"%s\" does not say \"%s\"", i, hcq_error_message(),
                  bad[i].says);
    }
    /* nesting in an unknown key is bounded */
    char deep[600] = "{\"a\":{\"x\":";
    for (int i = 0; i < 100; i++) strcat(deep, "[");
    nn_st_header h;
    cr_assert_eq(parse(deep, &h), HCQ_EFORMAT);
    T_MSG_HAS("nested too deeply");
}

Test(nn_files, safetensors_file_checks)
{
    uint8_t f[128] = {0};
    const char *hdr = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    size_t n = strlen(hdr);
    f[0] = (uint8_t)n;
    memcpy(f + 8, hdr, n);
    nn_st_header h;
    T_OK(nn_st_check_file(f, 8 + n + 8, &h));
    nn_st_header_free(&h);
    cr_assert_eq(nn_st_check_file(f, 8 + n + 4, &h), HCQ_EFORMAT); /* data cut short */
    T_MSG_HAS("describes 8 bytes of data");
    cr_assert_eq(nn_st_check_file(f, 5, &h), HCQ_EFORMAT);
    f[5] = 1; /* a header longer than the file */
    cr_assert_eq(nn_st_check_file(f, sizeof f, &h), HCQ_EFORMAT);
    T_MSG_HAS("a header of");
}

/* A zero-size tensor at [b, b] beside one that starts at b loads wherever
 * either stands in the header, as in the format's reference implementation
 * (which orders ranges by (begin, end)); inside another range it is still
 * an overlap. */
Test(nn_files, safetensors_zero_size_tensors_anywhere)
{
    static const char *const ok[] = {
        "{\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},"
        "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},"
        "\"z\":{\"dtype\":\"F32\",\"shape\":[2,0],\"data_offsets\":[24,24]}}",
        "{\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
        "\"y\":{\"dtype\":\"I32\",\"shape\":[0,3],\"data_offsets\":[0,0]}}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        nn_st_header h;
        cr_assert_eq(parse(ok[i], &h), HCQ_OK, "case %zu: %s", i, hcq_error_message());
        cr_assert_eq(h.n, 2);
        nn_st_header_free(&h);
    }
    nn_st_header h;
    cr_assert_eq(parse("{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]},"
                       "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}",
                       &h),
                 HCQ_EFORMAT);
    T_MSG_HAS("overlapping");
}

/* The duplicate-name check is n log n: 400,000 names (about 28 MB of
 * header, a quarter of what the format allows) parse in about a second,
 * where comparing each name with all before it takes minutes and hits the
 * suite's timeout. The last name repeats the first, so the check must look
 * at all of them. */
Test(nn_files, safetensors_many_names_are_checked_in_n_log_n)
{
    enum { N = 400000 };
    size_t cap = (size_t)N * 80 + 64, n = 0;
    char *json = malloc(cap);
    cr_assert(json);
    json[n++] = '{';
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(json + n, cap - n, "%s\"w%07d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
                              i ? "," : "", (int)((long long)i * 7919 % N));
    json[n++] = '}';
    nn_st_header h;
    T_OK(nn_st_parse(json, n, &h));
    cr_assert_eq(h.n, N);
    cr_assert(nn_st_find(&h, "w0000042") && !strcmp(nn_st_find(&h, "w0000042")->name, "w0000042"));
    cr_assert_null(nn_st_find(&h, "w9999999"));
    nn_st_header_free(&h);
    /* one name twice, far apart */
    n--;
    n += (size_t)snprintf(json + n, cap - n, ",\"w0000000\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}");
    cr_assert_eq(nn_st_parse(json, n, &h), HCQ_EFORMAT);
    T_MSG_HAS("name given twice: \"w0000000\"");
    free(json);
}

/* Address space capped a little above what the process uses: an
 * allocation a header merely claims then fails instead of succeeding
 * lazily. Not under ASan, whose shadow memory needs the space. */
static bool cap_address_space(size_t extra)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)extra;
    return false;
#else
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    cr_assert(f && fscanf(f, "%lu", &pages) == 1);
    fclose(f);
    struct rlimit r = {.rlim_cur = pages * 4096 + extra, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_AS, &r), 0);
    return true;
#endif
}

static void uncap_address_space(void)
{
    struct rlimit r = {.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &r);
}

/* ** IDX */
static void write_idx(const char *path, bool gz, uint8_t type, int ndim, const uint32_t *dims, const void *be, size_t bytes,
                      size_t cut, bool extra)
{
    uint8_t head[4 + 4 * 8] = {0, 0, type, (uint8_t)ndim};
    for (int d = 0; d < ndim; d++) {
        head[4 + 4 * d] = (uint8_t)(dims[d] >> 24);
        head[5 + 4 * d] = (uint8_t)(dims[d] >> 16);
        head[6 + 4 * d] = (uint8_t)(dims[d] >> 8);
        head[7 + 4 * d] = (uint8_t)dims[d];
    }
    size_t hn = 4 + 4 * (size_t)ndim;
    uint8_t *all = malloc(hn + bytes + 1);
    memcpy(all, head, hn);
    memcpy(all + hn, be, bytes);
    all[hn + bytes] = 0x5a;
    size_t total = hn + bytes - cut + (extra ? 1 : 0);
    if (gz) {
        gzFile g = gzopen(path, "wb");
        cr_assert(g);
        cr_assert_eq(gzwrite(g, all, (unsigned)total), (int)total);
        gzclose(g);
    } else {
        FILE *o = fopen(path, "wb");
        cr_assert(o);
        fwrite(all, 1, total, o);
        fclose(o);
    }
    free(all);
}

Test(nn_files, idx_types_gzip_and_plain)
{
    char path[T_TMP_PATH];
    int fd = t_tmpfile(path, sizeof path, "hcq_idx");
    cr_assert(fd >= 0);
    close(fd);
    /* i32 [2, 3], big-endian */
    uint8_t be[24];
    for (int i = 0; i < 6; i++) {
        uint32_t v = (uint32_t)(i * 1000 - 2500);
        be[4 * i] = (uint8_t)(v >> 24), be[4 * i + 1] = (uint8_t)(v >> 16), be[4 * i + 2] = (uint8_t)(v >> 8), be[4 * i + 3] = (uint8_t)v;
    }
    for (int gz = 0; gz < 2; gz++) {
        write_idx(path, gz, 0x0c, 2, (uint32_t[]){2, 3}, be, sizeof be, 0, false);
        hcq_idx x;
        T_OK(hcq_idx_read(path, &x));
        cr_assert(x.type == 0x0c && x.ndim == 2 && x.shape[0] == 2 && x.shape[1] == 3 && x.size_B == 24);
        for (int i = 0; i < 6; i++) cr_assert_eq(hcq_idx_get(&x, i), i * 1000 - 2500, "%s element %d", gz ? "gzip" : "plain", i);
        hcq_idx_free(&x);
    }
    /* f32 and i16 */
    float fv = -1.25f;
    uint32_t fb;
    memcpy(&fb, &fv, 4);
    uint8_t fbe[4] = {(uint8_t)(fb >> 24), (uint8_t)(fb >> 16), (uint8_t)(fb >> 8), (uint8_t)fb};
    write_idx(path, true, 0x0d, 1, (uint32_t[]){1}, fbe, 4, 0, false);
    hcq_idx x;
    T_OK(hcq_idx_read(path, &x));
    cr_assert_eq(hcq_idx_get(&x, 0), -1.25);
    hcq_idx_free(&x);
    write_idx(path, true, 0x0b, 1, (uint32_t[]){2}, (uint8_t[]){0xff, 0xfe, 0x01, 0x02}, 4, 0, false);
    T_OK(hcq_idx_read(path, &x));
    cr_assert(hcq_idx_get(&x, 0) == -2 && hcq_idx_get(&x, 1) == 258);
    hcq_idx_free(&x);
    /* what it refuses */
    write_idx(path, true, 0x0c, 2, (uint32_t[]){2, 3}, be, sizeof be, 5, false);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EFORMAT);
    T_MSG_HAS("ends in the data");
    write_idx(path, true, 0x0c, 2, (uint32_t[]){2, 3}, be, sizeof be, 0, true);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EFORMAT);
    T_MSG_HAS("bytes after");
    write_idx(path, false, 0x07, 1, (uint32_t[]){1}, be, 1, 0, false);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EFORMAT);
    T_MSG_HAS("not an IDX file");
    unlink(path);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EINVAL);
    T_MSG_HAS("cannot open");
}

/* Headers that lie: dims whose product wraps (2^17 * 2^17 * 2^30 is 0 mod
 * 2^64) are refused, not read as an empty file; a header that claims 8 GiB
 * of a file with 10 bytes is refused before anything is allocated for it
 * (plain: by the file's size; gzip: the buffer grows with what arrives). */
Test(nn_files, idx_headers_that_lie)
{
    char path[T_TMP_PATH];
    int fd = t_tmpfile(path, sizeof path, "hcq_idx");
    cr_assert(fd >= 0);
    close(fd);
    uint8_t ten[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    hcq_idx x;
    for (int gz = 0; gz < 2; gz++) {
        write_idx(path, gz, 0x08, 3, (uint32_t[]){1u << 17, 1u << 17, 1u << 30}, ten, 0, 0, false);
        cr_assert_eq(hcq_idx_read(path, &x), HCQ_ELIMIT, "%s: %s", gz ? "gzip" : "plain", hcq_error_message());
        T_MSG_HAS("131072, 131072, 1073741824");
        write_idx(path, gz, 0x0e, 2, (uint32_t[]){1u << 30, 1u << 5}, ten, 0, 0, false);
        cr_assert_eq(hcq_idx_read(path, &x), HCQ_ELIMIT); /* 2^35 elements */
    }
    bool capped = cap_address_space(1ull << 30);
    write_idx(path, false, 0x08, 2, (uint32_t[]){1u << 20, 1u << 13}, ten, sizeof ten, 0, false);
    hcq_status s = hcq_idx_read(path, &x);
    const char *plain_says = strstr(hcq_error_message(), "header describes") ? "ok" : hcq_error_message();
    write_idx(path, true, 0x08, 2, (uint32_t[]){1u << 20, 1u << 13}, ten, sizeof ten, 0, false);
    hcq_status sg = hcq_idx_read(path, &x);
    const char *gz_says = strstr(hcq_error_message(), "ends in the data") ? "ok" : hcq_error_message();
    if (capped) uncap_address_space();
    cr_assert_eq(s, HCQ_EFORMAT, "plain 8 GiB claim -> %s", hcq_status_name(s));
    cr_assert_str_eq(plain_says, "ok");
    cr_assert_eq(sg, HCQ_EFORMAT, "gzip 8 GiB claim -> %s", hcq_status_name(sg));
    cr_assert_str_eq(gz_says, "ok");
    /* a plain file one byte short, or one byte long, says so before reading */
    write_idx(path, false, 0x08, 1, (uint32_t[]){10}, ten, sizeof ten, 1, false);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EFORMAT);
    T_MSG_HAS("the file has 9 bytes");
    write_idx(path, false, 0x08, 1, (uint32_t[]){10}, ten, sizeof ten, 0, true);
    cr_assert_eq(hcq_idx_read(path, &x), HCQ_EFORMAT);
    /* a zero dim anywhere is an empty, valid file */
    write_idx(path, false, 0x08, 3, (uint32_t[]){4, 0, 1u << 30}, ten, 0, 0, false);
    T_OK(hcq_idx_read(path, &x));
    cr_assert(x.size_B == 0 && x.shape[2] == 1 << 30);
    hcq_idx_free(&x);
    unlink(path);
}

Test(nn_files, fashion_mnist)
{
    const char *dir = "/usr/share/datasets/fashion-mnist";
    if (access("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz", R_OK))
        cr_skip_test("dataset-fashion-mnist is not installed (scripts/deps.sh installs it)");
    char p[256];
    snprintf(p, sizeof p, "%s/t10k-images-idx3-ubyte.gz", dir);
    hcq_idx x, y;
    T_OK(hcq_idx_read(p, &x));
    cr_assert(x.type == 0x08 && x.ndim == 3 && x.shape[0] == 10000 && x.shape[1] == 28 && x.shape[2] == 28);
    snprintf(p, sizeof p, "%s/t10k-labels-idx1-ubyte.gz", dir);
    T_OK(hcq_idx_read(p, &y));
    cr_assert(y.ndim == 1 && y.shape[0] == 10000);
    int count[10] = {0};
    for (int64_t i = 0; i < 10000; i++) {
        double v = hcq_idx_get(&y, i);
        cr_assert(v >= 0 && v <= 9);
        count[(int)v]++;
    }
    for (int c = 0; c < 10; c++) cr_assert_eq(count[c], 1000, "class %d", c); /* the test set is balanced */
    hcq_idx_free(&x);
    hcq_idx_free(&y);
}
