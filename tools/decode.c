/* hcq decode: command streams as text. Input is a dump written by the mock
 * (HCQ_MOCK_DUMP) or the backends (HCQ_DUMP), a directory of them, or a raw
 * file of dwords with --format. */
#include "tools/tools.h"

#include "drivers/decode.h"
#include "drivers/dump.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq decode [--nv | --amd | --sdma | --format F] [--arch N] FILE|DIR...\n\n"
               "Decodes command streams: the .hcqdump files HCQ_MOCK_DUMP=dir (the mock GPU) and\n"
               "HCQ_DUMP=dir (the real backends) write, a directory of them (in order), or a raw\n"
               "file of little-endian dwords, whose format --nv (nv-gpfifo), --amd (amd-pm4),\n"
               "--sdma (amd-sdma) or --format names. Formats known: %s.\n",
            drv_decoder_formats());
}

typedef struct opts {
    const char *format;
    uint32_t arch;
    int errors;
} opts;

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *b = realloc(buf, cap *= 2);
        if (!b) free(buf);
        buf = b;
    }
    fclose(f);
    *size = n;
    return buf;
}

static void field(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void decode_file(const char *path, opts *o)
{
    size_t size = 0;
    uint8_t *buf = read_all(path, &size);
    if (!buf) {
        fprintf(stderr, "hcq decode: cannot read %s\n", path);
        o->errors++;
        return;
    }
    char format[17] = "", engine[17] = "";
    uint32_t arch = o->arch;
    uint64_t va = 0;
    const uint32_t *dw;
    uint32_t ndw;
    drv_dump_header h;
    if (size >= sizeof h && !memcmp(buf, DRV_DUMP_MAGIC, 4)) {
        memcpy(&h, buf, sizeof h);
        field(format, h.format, sizeof h.format);
        field(engine, h.engine, sizeof h.engine);
        if (h.version != DRV_DUMP_VERSION || (size - sizeof h) / 4 < h.ndw) {
            fprintf(stderr, "hcq decode: %s: dump version %u with %u dwords, file holds %zu bytes after the header\n",
                    path, h.version, h.ndw, size - sizeof h);
            o->errors++;
            free(buf);
            return;
        }
        arch = h.arch;
        va = h.va;
        ndw = h.ndw;
        dw = (const uint32_t *)(buf + sizeof h);
    } else {
        if (!o->format) {
            fprintf(stderr, "hcq decode: %s is not an .hcqdump file; say its format (--nv, --amd, --sdma, --format)\n",
                    path);
            o->errors++;
            free(buf);
            return;
        }
        snprintf(format, sizeof format, "%s", o->format);
        ndw = (uint32_t)(size / 4);
        dw = (const uint32_t *)buf;
    }
    const drv_decoder *d = drv_decoder_find(format);
    printf("== %s: %s%s%s, arch 0x%x, %u dwords at 0x%llx\n", path, format, engine[0] ? " on " : "", engine, arch,
           ndw, (unsigned long long)va);
    if (!d) {
        printf("   no decoder for format `%s` (known: %s); words:\n", format, drv_decoder_formats());
        for (uint32_t i = 0; i < ndw; i++) printf("0x%08llx  word 0x%08x\n", (unsigned long long)(va + 4ull * i), dw[i]);
        o->errors++;
    } else if (d->decode(arch, va, dw, ndw, stdout)) {
        o->errors++;
    }
    free(buf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void decode_dir(const char *dir, opts *o)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hcq decode: cannot open directory %s\n", dir);
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
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str); /* the sequence number leads the name */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        decode_file(path, o);
        free(names[i]);
    }
    free(names);
    if (!n) fprintf(stderr, "hcq decode: no .hcqdump files in %s\n", dir);
}

int tool_decode(int argc, char **argv)
{
    opts o = {0};
    int inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--nv")) {
            o.format = "nv-gpfifo";
        } else if (!strcmp(a, "--amd")) {
            o.format = "amd-pm4";
        } else if (!strcmp(a, "--sdma")) {
            o.format = "amd-sdma";
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            o.format = argv[++i];
        } else if (!strcmp(a, "--arch") && i + 1 < argc) {
            o.arch = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else if (a[0] == '-') {
            fprintf(stderr, "hcq decode: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else {
            struct stat st;
            inputs++;
            if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) decode_dir(a, &o);
            else decode_file(a, &o);
        }
    }
    if (!inputs) {
        usage(stderr);
        return 2;
    }
    return o.errors ? 1 : 0;
}
