#include "drivers/dump.h"

#include "base/base.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

static atomic_uint_fast64_t dump_seq;

void drv_dump_write(const char *dir, const char *engine, const char *format, uint32_t arch, uint64_t va,
                    const uint32_t *dw, uint32_t ndw)
{
    if (!dir) return;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        BASE_LOG(1, "dump: cannot create %s: %s", dir, strerror(errno));
        return;
    }
    drv_dump_header h = {.version = DRV_DUMP_VERSION, .arch = arch, .ndw = ndw, .va = va};
    memcpy(h.magic, DRV_DUMP_MAGIC, 4);
    /* NUL-padded fields that may be full: copy at most their size */
    memcpy(h.format, format, BASE_MIN(strlen(format), sizeof h.format));
    memcpy(h.engine, engine, BASE_MIN(strlen(engine), sizeof h.engine));
    char path[4096];
    snprintf(path, sizeof path, "%s/%08llu-%s.hcqdump", dir, (unsigned long long)atomic_fetch_add(&dump_seq, 1),
             engine);
    FILE *f = fopen(path, "wb");
    if (!f) {
        BASE_LOG(1, "dump: cannot write %s: %s", path, strerror(errno));
        return;
    }
    if (fwrite(&h, sizeof h, 1, f) != 1 || fwrite(dw, 4, ndw, f) != ndw)
        BASE_LOG(1, "dump: short write to %s", path);
    fclose(f);
}

void drv_dump_name(const char *dir, const char *engine, uint64_t launch_addr, uint32_t code_bytes, const char *name)
{
    uint32_t dw[16] = {0}; /* 63 bytes of name at most, NUL-padded */
    size_t n = strlen(name);
    if (n > sizeof dw - 1) n = sizeof dw - 1;
    memcpy(dw, name, n);
    drv_dump_write(dir, engine, "hcq-names", code_bytes, launch_addr, dw, (uint32_t)(n / 4 + 1));
}
