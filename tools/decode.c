/* hcq decode: command streams as text. Input is a dump written by the mock
 * (HCQ_MOCK_DUMP) or the backends (HCQ_DUMP), a directory of them, or a raw
 * file of dwords with --format (binary little-endian, or --hex text).
 *
 * Bad input gets a clear error and bounded memory: only regular files are
 * read (never /dev/zero), none larger than a dump can be, and every name
 * or string that comes from the input is printed without control bytes. */
#include "tools/tools.h"

#include "drivers/amd/amd_regs.h"
#include "drivers/decode.h"
#include "drivers/dump.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the largest file decode reads: a dump holds one stream segment (the
 * pushbuffer is 2^21 dwords at most on NV, rings are smaller) */
#define DECODE_MAX_BYTES (64ull << 20)

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq decode [--nv | --amd | --sdma | --format F] [--arch A] [--hex] FILE|DIR...\n\n"
               "Decodes command streams: the .hcqdump files HCQ_MOCK_DUMP=dir (the mock GPU) and\n"
               "HCQ_DUMP=dir (the real backends) write, a directory of them (in order: program names\n"
               "recorded there name the launches that follow), or a raw file of dwords, whose format\n"
               "--nv (nv-gpfifo), --amd (amd-pm4), --sdma (amd-sdma) or --format names: binary\n"
               "little-endian, or with --hex text of 32-bit hex words (0x optional; a word ending in ':'\n"
               "is an address and skipped; # starts a comment). --arch says the engine of a raw\n"
               "stream: the class for NV (0xcbc0, 0xc8b5, ...), the gfx target for AMD (gfx1100,\n"
               "gfx942, gfx90a, or 110000 ...). Formats known: %s.\n",
            drv_decoder_formats());
}

typedef struct opts {
    const char *format;
    uint32_t arch;
    bool have_arch, hex;
    int errors;
} opts;

/* a string from the input, printable */
static const char *safe(const char *s, size_t n, char *buf, size_t size)
{
    drv_printable(buf, size, s, n);
    return buf;
}

/* the whole file, if it is a regular file no larger than DECODE_MAX_BYTES */
static uint8_t *read_all(const char *path, size_t *size)
{
    char p[512];
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "hcq decode: cannot read %s: %s\n", safe(path, strlen(path), p, sizeof p), strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "hcq decode: %s is not a regular file (a dump, a directory of dumps, or a raw stream)\n",
                safe(path, strlen(path), p, sizeof p));
        return NULL;
    }
    if ((uint64_t)st.st_size > DECODE_MAX_BYTES) {
        fprintf(stderr, "hcq decode: %s is %lld bytes; a stream dump is at most %llu MiB\n",
                safe(path, strlen(path), p, sizeof p), (long long)st.st_size, DECODE_MAX_BYTES >> 20);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    uint8_t *buf = f ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (!buf) {
        fprintf(stderr, "hcq decode: cannot read %s: %s\n", safe(path, strlen(path), p, sizeof p),
                f ? "out of memory" : strerror(errno));
        return NULL;
    }
    *size = n;
    return buf;
}

/* hex text to dwords in place; false with a message on a bad word */
static bool parse_hex(const char *path, uint8_t *buf, size_t size, uint32_t **dw, uint32_t *ndw)
{
    buf[size] = 0;
    uint32_t *out = malloc((size / 2 + 1) * sizeof *out), n = 0;
    if (!out) return false;
    char *s = (char *)buf;
    unsigned line = 1;
    while (*s) {
        if (*s == '\n') line++;
        if (*s == '#') { /* comment to the end of the line */
            while (*s && *s != '\n') s++;
            continue;
        }
        if (isspace((unsigned char)*s) || *s == ',') {
            s++;
            continue;
        }
        char *start = s;
        while (*s && !isspace((unsigned char)*s) && *s != ',' && *s != '#') s++;
        size_t len = (size_t)(s - start);
        if (len && start[len - 1] == ':') continue; /* an address column */
        const char *d = start;
        if (len > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) d += 2;
        size_t dl = len - (size_t)(d - start);
        bool ok = dl && dl <= 8;
        for (size_t k = 0; ok && k < dl; k++) ok = isxdigit((unsigned char)d[k]);
        if (!ok) {
            char w[32], p[512];
            fprintf(stderr, "hcq decode: %s line %u: `%s` is not a 32-bit hex word\n",
                    safe(path, strlen(path), p, sizeof p), line, safe(start, len < 24 ? len : 24, w, sizeof w));
            free(out);
            return false;
        }
        out[n++] = (uint32_t)strtoul(d, NULL, 16);
    }
    *dw = out;
    *ndw = n;
    return true;
}

static void field(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void decode_file(const char *path, opts *o)
{
    char pp[512];
    const char *shown = safe(path, strlen(path), pp, sizeof pp);
    size_t size = 0;
    uint8_t *buf = read_all(path, &size);
    if (!buf) {
        o->errors++;
        return;
    }
    char format[17] = "", engine[17] = "", sfmt[17], seng[17];
    uint32_t arch = o->arch;
    uint64_t va = 0;
    const uint32_t *dw;
    uint32_t ndw;
    uint32_t *hexdw = NULL;
    drv_dump_header h;
    if (!o->hex && size >= 4 && !memcmp(buf, DRV_DUMP_MAGIC, 4)) {
        if (size < sizeof h) {
            fprintf(stderr, "hcq decode: %s: a truncated dump: %zu bytes, a dump header alone is %u\n", shown, size,
                    DRV_DUMP_HEADER);
            o->errors++;
            free(buf);
            return;
        }
        memcpy(&h, buf, sizeof h);
        field(format, h.format, sizeof h.format);
        field(engine, h.engine, sizeof h.engine);
        if (h.version != DRV_DUMP_VERSION || (size - sizeof h) / 4 < h.ndw) {
            fprintf(stderr, "hcq decode: %s: dump version %u with %u dwords, file holds %zu bytes after the header\n",
                    shown, h.version, h.ndw, size - sizeof h);
            o->errors++;
            free(buf);
            return;
        }
        arch = o->have_arch ? o->arch : h.arch;
        va = h.va;
        ndw = h.ndw;
        dw = (const uint32_t *)(buf + sizeof h);
    } else {
        if (!o->format) {
            fprintf(stderr, "hcq decode: %s is not an .hcqdump file; say its format (--nv, --amd, --sdma, --format)\n",
                    shown);
            o->errors++;
            free(buf);
            return;
        }
        snprintf(format, sizeof format, "%s", o->format);
        if (o->hex) {
            if (!parse_hex(shown, buf, size, &hexdw, &ndw)) {
                o->errors++;
                free(buf);
                return;
            }
            dw = hexdw;
        } else {
            if (size % 4) fprintf(stderr, "hcq decode: %s: %zu bytes is not whole dwords; the last %zu ignored\n",
                                  shown, size, size % 4);
            ndw = (uint32_t)(size / 4);
            dw = (const uint32_t *)buf;
        }
    }
    const drv_decoder *d = drv_decoder_find(format);
    printf("== %s: %s%s%s, arch 0x%x, %u dwords at 0x%llx\n", shown, safe(format, strlen(format), sfmt, sizeof sfmt),
           engine[0] ? " on " : "", safe(engine, strlen(engine), seng, sizeof seng), arch, ndw, (unsigned long long)va);
    if (!d) {
        printf("   no decoder for format `%s` (known: %s); words:\n", sfmt, drv_decoder_formats());
        for (uint32_t i = 0; i < ndw; i++) printf("0x%08llx  word 0x%08x\n", (unsigned long long)(va + 4ull * i), dw[i]);
        o->errors++;
    } else if (d->decode(arch, va, dw, ndw, stdout)) {
        o->errors++;
    }
    free(hexdw);
    free(buf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void decode_dir(const char *dir, opts *o)
{
    char pp[512];
    const char *shown = safe(dir, strlen(dir), pp, sizeof pp);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hcq decode: cannot open directory %s: %s\n", shown, strerror(errno));
        o->errors++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".hcqdump")) continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str); /* the sequence number leads the name; names is NULL when none */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        decode_file(path, o);
        free(names[i]);
    }
    free(names);
    if (!n) {
        fprintf(stderr, "hcq decode: no .hcqdump files in %s (HCQ_DUMP=DIR or HCQ_MOCK_DUMP=DIR writes them)\n", shown);
        o->errors++;
    }
}

/* --arch: a number, or an AMD target's name */
static bool parse_arch(const char *v, uint32_t *out)
{
    if (!strncmp(v, "gfx", 3)) {
        const amd_arch *a = amd_arch_by_name(v);
        if (a) *out = a->gfx_version;
        return a != NULL;
    }
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 0);
    if (!*v || *end || errno || x > 0xffffffffu) return false;
    *out = (uint32_t)x;
    return true;
}

int tool_decode(int argc, char **argv)
{
    opts o = {0};
    const char *arch_text = NULL;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    int ninputs = 0;
    if (!inputs) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (tool_is_help(a)) {
            usage(stdout);
            free(inputs);
            return 0;
        } else if (!strcmp(a, "--nv")) {
            o.format = "nv-gpfifo";
        } else if (!strcmp(a, "--amd")) {
            o.format = "amd-pm4";
        } else if (!strcmp(a, "--sdma")) {
            o.format = "amd-sdma";
        } else if (!strcmp(a, "--hex")) {
            o.hex = true;
        } else if ((!strcmp(a, "--format") || !strcmp(a, "--arch")) && i + 1 < argc) {
            if (a[2] == 'f') o.format = argv[++i];
            else arch_text = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            free(inputs);
            if (strcmp(a, "--format") && strcmp(a, "--arch")) return tool_bad_arg("decode", a);
            fprintf(stderr, "hcq decode: %s takes a value; see `hcq decode --help`\n", a);
            return 2;
        } else {
            inputs[ninputs++] = argv[i];
        }
    }
    int rc = 2;
    if (!ninputs) {
        usage(stderr);
        goto out;
    }
    const drv_decoder *fd = o.format ? drv_decoder_find(o.format) : NULL;
    if (o.format && !fd) {
        fprintf(stderr, "hcq decode: no format `%s`; formats known: %s\n", o.format, drv_decoder_formats());
        goto out;
    }
    if (o.hex && !o.format) {
        fprintf(stderr, "hcq decode: --hex reads raw words: say their format (--nv, --amd, --sdma, --format)\n");
        goto out;
    }
    if (arch_text) {
        char why[200];
        if (!parse_arch(arch_text, &o.arch)) {
            fprintf(stderr, "hcq decode: --arch `%s` is not a number or a gfx target hcq knows\n", arch_text);
            goto out;
        }
        if (fd && fd->arch_ok && !fd->arch_ok(o.arch, why, sizeof why)) {
            fprintf(stderr, "hcq decode: --arch %s is not an engine of %s streams; it takes %s\n", arch_text, o.format,
                    why);
            goto out;
        }
        o.have_arch = true;
    }
    for (int i = 0; i < ninputs; i++) {
        struct stat st;
        if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) decode_dir(inputs[i], &o);
        else decode_file(inputs[i], &o);
    }
    rc = o.errors ? 1 : 0;
out:
    free(inputs);
    return rc;
}
