#include "drivers/dump.h"

#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_uint_fast64_t dump_seq;

/* One directory holds one run: the first write of this process to a
 * directory checks that it holds no dumps of another process yet (two
 * runs' files would interleave by sequence number and decode as one); a
 * .hcqrun file in it names the process whose run it holds. The verdict is kept per
 * directory; failures are reported once each, at the default log level: a
 * dump that silently is not there is worse than none asked for. */
typedef struct dump_dir {
    char path[512];
    bool ok;
    bool write_failed;
} dump_dir;

static dump_dir dirs[4];
static int ndirs;
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;

static int count_dumps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 8 && !strcmp(e->d_name + len - 8, ".hcqdump");
    }
    closedir(d);
    return n;
}

/* the directory's record, checked on first use; NULL: do not write there */
static dump_dir *dir_for(const char *dir)
{
    for (int i = 0; i < ndirs; i++)
        if (!strcmp(dirs[i].path, dir)) return dirs[i].ok ? &dirs[i] : NULL;
    if (ndirs == (int)BASE_ARRAY_LEN(dirs)) return NULL;
    dump_dir *d = &dirs[ndirs++];
    snprintf(d->path, sizeof d->path, "%s", dir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        base_log(0, "dump: cannot create the dump directory %s: %s; nothing is dumped", dir, strerror(errno));
        return NULL;
    }
    /* which process's run the directory holds: the hcq code of a program
     * and a mock preloaded into it (libhcqmock.so) are two writers of one
     * run, each with its own copy of this table */
    char marker[600], owner[32] = "", mine[32];
    snprintf(marker, sizeof marker, "%s/.hcqrun", dir);
    snprintf(mine, sizeof mine, "%d\n", (int)getpid());
    FILE *m = fopen(marker, "r");
    if (m) {
        if (!fgets(owner, sizeof owner, m)) owner[0] = 0;
        fclose(m);
    }
    int n = strcmp(owner, mine) ? count_dumps(dir) : 0;
    if (n) {
        base_log(0, "dump: %s already holds %d .hcqdump file%s of an earlier run, and a directory holds one run; "
                 "empty it or name another one. Nothing is dumped", dir, n, n == 1 ? "" : "s");
        return NULL;
    }
    if (strcmp(owner, mine) && (m = fopen(marker, "w"))) {
        fputs(mine, m);
        fclose(m);
    }
    d->ok = true;
    return d;
}

void drv_dump_write(const char *dir, const char *engine, const char *format, uint32_t arch, uint64_t va,
                    const uint32_t *dw, uint32_t ndw)
{
    if (!dir) return;
    pthread_mutex_lock(&dirs_lock);
    dump_dir *dd = dir_for(dir);
    pthread_mutex_unlock(&dirs_lock);
    if (!dd) return;
    drv_dump_header h = {.version = DRV_DUMP_VERSION, .arch = arch, .ndw = ndw, .va = va};
    memcpy(h.magic, DRV_DUMP_MAGIC, 4);
    /* NUL-padded fields that may be full: copy at most their size */
    memcpy(h.format, format, BASE_MIN(strlen(format), sizeof h.format));
    memcpy(h.engine, engine, BASE_MIN(strlen(engine), sizeof h.engine));
    char path[4096];
    snprintf(path, sizeof path, "%s/%08llu-%s.hcqdump", dir, (unsigned long long)atomic_fetch_add(&dump_seq, 1),
             engine);
    FILE *f = fopen(path, "wb");
    int err = f ? 0 : errno;
    if (f && (fwrite(&h, sizeof h, 1, f) != 1 || fwrite(dw, 4, ndw, f) != ndw)) err = errno ? errno : EIO;
    if (f && fclose(f) && !err) err = errno;
    if (!err) return;
    if (f) unlink(path); /* no truncated record for a reader to stumble on */
    pthread_mutex_lock(&dirs_lock);
    bool first = !dd->write_failed;
    dd->write_failed = true;
    pthread_mutex_unlock(&dirs_lock);
    if (first)
        base_log(0, "dump: cannot write %s: %s; this dump is incomplete (further failures are not reported)", path,
                 strerror(err));
}

void drv_dump_name(const char *dir, const char *engine, uint64_t launch_addr, uint32_t code_bytes, const char *name)
{
    uint32_t dw[16] = {0}; /* 63 bytes of name at most, NUL-padded */
    size_t n = strlen(name);
    if (n > sizeof dw - 1) n = sizeof dw - 1;
    memcpy(dw, name, n);
    drv_dump_write(dir, engine, "hcq-names", code_bytes, launch_addr, dw, (uint32_t)(n / 4 + 1));
}

void drv_dump_ir(const char *dir, const char *name, const void *data, size_t size)
{
    if (!dir) return;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        BASE_LOG(0, "dump: cannot create %s: %s", dir, strerror(errno));
        return;
    }
    char path[4096], safe_name[64];
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < sizeof safe_name; c++) /* a file name: no '/' or control bytes */
        safe_name[n++] = (*c == '/' || (unsigned char)*c < 0x20) ? '_' : *c;
    safe_name[n] = 0;
    snprintf(path, sizeof path, "%s/%08llu-%s.hcqir", dir, (unsigned long long)atomic_fetch_add(&dump_seq, 1),
             safe_name);
    FILE *f = fopen(path, "wb");
    int err = f ? 0 : errno;
    if (f && fwrite(data, 1, size, f) != size) err = errno ? errno : EIO;
    if (f && fclose(f) && !err) err = errno;
    if (!err) return;
    if (f) unlink(path); /* no truncated record for a reader to stumble on */
    BASE_LOG(0, "dump: cannot write %s: %s", path, strerror(err));
}
