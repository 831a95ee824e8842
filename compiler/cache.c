/* The on-disk kernel cache.
 *
 * Trust: an entry is code hcq loads and runs, so the directory must be the
 * user's own and writable by nobody else, and so must be the path to it
 * (each parent the user's or root's, and writable by others only with the
 * sticky bit, as /tmp is): otherwise another user could plant a shared
 * object (the /tmp/hcq-cache-$UID fallback can be made by anyone first).
 * An untrusted directory is refused with a message, once, and not used:
 * kernels are still compiled, only not cached. Compiling happens in a
 * private directory under $TMPDIR (or /tmp), never in the cache, so a full
 * cache filesystem also only stops caching. An entry's name holding
 * anything but a regular file (a FIFO, a device) is a miss, never opened
 * for blocking.
 *
 * An entry is <dir>/<key hex>.bin:
 *   "HCQCACHE" | u32 version | u32 0 | u64 payload size | sha256(payload) | payload
 * Entries are written to a temp file in the same directory and renamed into
 * place, so readers never see a partial file and two processes writing one
 * key both succeed (the last rename wins; both wrote the same bytes). A
 * short or corrupt entry (a crash mid-write on a filesystem that reorders,
 * a disk error, a user's truncation) fails the checks and counts as a miss. */
#include "compiler/cc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENTRY_MAGIC "HCQCACHE"
#define ENTRY_VERSION 1u
#define ENTRY_HEADER (8 + 4 + 4 + 8 + 32)
#define ENTRY_MAX (1ull << 31) /* kernels are far smaller; guards the read */

/* ** the directory */
static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every directory string handed out, newest first. Old ones stay
 * allocated, since callers may still hold them (this happens only when
 * tests change the environment), and stay linked so they remain reachable
 * (LeakSanitizer counts a dropped one as a leak). */
typedef struct dir_name {
    struct dir_name *next;
    char path[];
} dir_name;
static dir_name *dir_names; /* process-wide */

const char *hcq_cache_dir(void)
{
    const base_env *e = base_env_get();
    char want[PATH_MAX];
    if (e->cache_dir)
        snprintf(want, sizeof want, "%s", e->cache_dir);
    else if (e->xdg_cache_home)
        snprintf(want, sizeof want, "%s/hcq", e->xdg_cache_home);
    else if (e->home)
        snprintf(want, sizeof want, "%s/.cache/hcq", e->home);
    else
        snprintf(want, sizeof want, "/tmp/hcq-cache-%u", (unsigned)getuid());
    pthread_mutex_lock(&dir_lock);
    if (!dir_names || strcmp(dir_names->path, want) != 0) {
        size_t len = strlen(want);
        dir_name *n = malloc(sizeof *n + len + 1);
        if (n) {
            memcpy(n->path, want, len + 1);
            n->next = dir_names;
            dir_names = n;
        }
    }
    const char *d = dir_names ? dir_names->path : "/tmp";
    pthread_mutex_unlock(&dir_lock);
    return d;
}

/* ** trust */

/* One path component (lstat: a symlink is judged itself): owned by root or
 * us, and, when writable by others, a sticky directory. */
static bool component_ok(const char *path, bool last, char *why, size_t n)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        snprintf(why, n, "%s: %s", path, strerror(errno));
        return false;
    }
    uid_t me = geteuid();
    if (S_ISLNK(sb.st_mode)) {
        if (sb.st_uid != me && sb.st_uid != 0) {
            snprintf(why, n, "%s is a symbolic link owned by uid %u, not by you (uid %u)", path, (unsigned)sb.st_uid,
                     (unsigned)me);
            return false;
        }
        return true; /* its target is checked on the resolved path */
    }
    if (last) {
        if (!S_ISDIR(sb.st_mode)) {
            snprintf(why, n, "%s is not a directory", path);
            return false;
        }
        if (sb.st_uid != me) {
            snprintf(why, n, "%s is owned by uid %u, not by you (uid %u)", path, (unsigned)sb.st_uid, (unsigned)me);
            return false;
        }
        if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
            snprintf(why, n, "%s is writable by %s (mode %03o)", path, sb.st_mode & S_IWOTH ? "others" : "its group",
                     (unsigned)(sb.st_mode & 0777));
            return false;
        }
        return true;
    }
    if (sb.st_uid != me && sb.st_uid != 0) {
        snprintf(why, n, "its parent %s is owned by uid %u, neither you nor root", path, (unsigned)sb.st_uid);
        return false;
    }
    if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX)) {
        snprintf(why, n, "its parent %s is writable by others without the sticky bit (mode %03o)", path,
                 (unsigned)(sb.st_mode & 07777));
        return false;
    }
    return true;
}

/* Every component of path, from the top. */
static bool path_ok(const char *path, char *why, size_t n)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(why, n, "the path is too long");
        return false;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        bool last = !c || !p[1];
        if (*buf && !component_ok(buf, last, why, n)) return false;
        if (last) return true;
        *p = c;
    }
}

bool cc_cache_dir_trusted(const char *dir, char *why, size_t n)
{
    char real[PATH_MAX];
    if (!path_ok(dir, why, n)) return false; /* the symlinks on the way */
    if (!realpath(dir, real)) {
        snprintf(why, n, "%s: %s", dir, strerror(errno));
        return false;
    }
    return path_ok(real, why, n); /* where they lead */
}

static hcq_status mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return base_err(HCQ_EINVAL, "cache directory path is too long: %s", path);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return base_err(HCQ_EIO, "cannot create cache directory %s: %s (set HCQ_CACHE_DIR to a writable directory)",
                            buf, strerror(errno));
        if (!c) break;
        *p = c;
    }
    return HCQ_OK;
}

/* The cache directory, made if missing and checked whenever it is a new
 * path or a new directory at the old path (deleted and made again, maybe
 * by someone else): HCQ_OK, or the refusal (said on stderr when found,
 * then in messages). */
static char checked_dir[PATH_MAX];
static dev_t checked_dev;
static ino_t checked_ino;
static hcq_status checked_status;
static char checked_why[768];
static char unusable_dir[PATH_MAX]; /* the last directory that could not be made or read, said once */

static hcq_status usable_dir(const char **dir_out)
{
    const char *dir = hcq_cache_dir();
    *dir_out = dir;
    pthread_mutex_lock(&dir_lock);
    struct stat sb;
    hcq_status st = stat(dir, &sb) == 0 ? HCQ_OK : mkdir_p(dir);
    if (!st && stat(dir, &sb) != 0)
        st = base_err(HCQ_EIO, "cache directory %s: %s (set HCQ_CACHE_DIR to a writable directory)", dir,
                      strerror(errno));
    if (st) {
        /* nothing was checked: the next call tries again. Said once per
         * directory at the default level, as a refused directory is: every
         * kernel now compiles again in every process, which the user should
         * hear about without HCQ_DEBUG */
        checked_dir[0] = 0;
        if (strcmp(unusable_dir, dir) != 0) {
            snprintf(unusable_dir, sizeof unusable_dir, "%s", dir);
            base_log(0, "kernel cache unusable: %s. Kernels compile but are not cached", hcq_error_message());
        }
        pthread_mutex_unlock(&dir_lock);
        return st;
    }
    unusable_dir[0] = 0;
    if (strcmp(checked_dir, dir) != 0 || sb.st_dev != checked_dev || sb.st_ino != checked_ino) {
        char why[512];
        checked_status = HCQ_OK;
        if (!cc_cache_dir_trusted(dir, why, sizeof why)) {
            checked_status = HCQ_EIO;
            snprintf(checked_why, sizeof checked_why,
                     "kernel cache refused, not safe to load code from: %s. Kernels compile but are not cached; "
                     "make the directory yours and private (chmod 700), or set HCQ_CACHE_DIR", why);
            base_log(0, "%s", checked_why);
        }
        snprintf(checked_dir, sizeof checked_dir, "%s", dir);
        checked_dev = sb.st_dev;
        checked_ino = sb.st_ino;
    }
    st = checked_status;
    if (st) base_err(st, "%s", checked_why);
    pthread_mutex_unlock(&dir_lock);
    return st;
}

static void entry_path(const cc_cache_key *key, const char *ext, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s%s", hcq_cache_dir(), key->hex, ext);
}

void cc_cache_path(const cc_cache_key *key, char *buf, size_t size) { entry_path(key, ".bin", buf, size); }

/* The build directory this thread made last and has not removed yet: the
 * tools cc_run starts meanwhile get it as their TMPDIR, so that what they
 * keep there (clang's object before it links, nvcc's tmpxft files), and
 * all of it when a timeout kills them mid-build, goes with the directory. */
static _Thread_local char building_in[PATH_MAX];

const char *cc_build_dir(void) { return building_in[0] ? building_in : NULL; }

/* The build directories in use, for a process that exits while a thread
 * of it builds (a test's worker after a failed assertion, with an engine
 * thread decoding SASS; a program that returns from main mid-compile):
 * its exit removes them. Each names the process that made it, so that a
 * forked child's exit leaves its parent's alone. */
typedef struct live_dir {
    struct live_dir *next;
    pid_t pid;
    char path[];
} live_dir;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static live_dir *live;
static pthread_once_t live_once = PTHREAD_ONCE_INIT;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0; /* on: what cannot go stays, the rest goes */
}

/* depth first, not following links: the tools may leave directories of
 * their own in it */
static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void remove_live_at_exit(void)
{
    pid_t me = getpid();
    pthread_mutex_lock(&live_lock);
    for (live_dir *d = live; d; d = d->next)
        if (d->pid == me) remove_tree(d->path);
    pthread_mutex_unlock(&live_lock);
}

static void live_at_exit(void) { atexit(remove_live_at_exit); }

static void live_add(const char *dir)
{
    pthread_once(&live_once, live_at_exit);
    size_t n = strlen(dir) + 1;
    live_dir *d = malloc(sizeof *d + n);
    if (!d) return; /* only its removal at an exit mid-build is lost */
    d->pid = getpid();
    memcpy(d->path, dir, n);
    pthread_mutex_lock(&live_lock);
    d->next = live;
    live = d;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(const char *dir)
{
    pthread_mutex_lock(&live_lock);
    for (live_dir **p = &live; *p; p = &(*p)->next) {
        if (strcmp((*p)->path, dir) != 0) continue;
        live_dir *d = *p;
        *p = d->next;
        free(d);
        break;
    }
    pthread_mutex_unlock(&live_lock);
}

/* Every caller removes the directory on each of its paths, a failed or
 * timed-out compile included, and a process that exits mid-build removes
 * those of its builds under way. What no code can remove is the directory
 * of a process killed mid-build (a test's timeout, ctrl-C, SIGKILL): it
 * stays under $TMPDIR, named hcq-build-*, for whoever cleans that. */
hcq_status cc_make_temp_dir(char *buf, size_t size)
{
    /* never in the cache directory: a full or unusable cache must not stop
     * compiling */
    const char *tmp = base_env_get()->tmpdir ? base_env_get()->tmpdir : "/tmp";
    bool made = snprintf(buf, size, "%s/hcq-build-XXXXXX", tmp) < (int)size && mkdtemp(buf);
    int e = errno;
    if (!made && strcmp(tmp, "/tmp") != 0)
        made = snprintf(buf, size, "/tmp/hcq-build-XXXXXX") < (int)size && mkdtemp(buf);
    if (!made)
        return base_err(HCQ_EIO, "cannot create a private build directory in %s: %s (set TMPDIR to a writable directory)",
                        tmp, strerror(e));
    if (strlen(buf) < sizeof building_in) snprintf(building_in, sizeof building_in, "%s", buf);
    live_add(buf);
    return HCQ_OK;
}

void cc_remove_temp_dir(const char *dir)
{
    remove_tree(dir);
    live_remove(dir);
    if (!strcmp(dir, building_in)) building_in[0] = 0;
}

/* ** keys */
void cc_key_begin(cc_sha256_ctx *s)
{
    cc_sha256_init(s);
    cc_key_add_str(s, "hcq-cache-key-v1");
}

void cc_key_add(cc_sha256_ctx *s, const void *data, size_t size)
{
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)size >> (8 * i));
    cc_sha256_update(s, len, 8);
    cc_sha256_update(s, data, size);
}

void cc_key_add_str(cc_sha256_ctx *s, const char *str)
{
    if (str)
        cc_key_add(s, str, strlen(str));
    else
        cc_key_add(s, "\xff(null)", 7);
}

void cc_key_end(cc_sha256_ctx *s, cc_cache_key *key)
{
    cc_sha256_final(s, key->digest);
    cc_sha256_hex(key->digest, key->hex);
}

/* ** entries */
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get_u64(const uint8_t *p) { return get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

static bool read_file(const char *path, uint8_t **data, size_t *size)
{
    /* O_NONBLOCK: a FIFO at the entry's name opens at once (and is then no
     * regular file); O_NOFOLLOW: an entry is a file, not a link elsewhere */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return false;
    struct stat sb;
    bool ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= ENTRY_MAX;
    uint8_t *buf = ok ? malloc(sb.st_size ? (size_t)sb.st_size : 1) : NULL;
    size_t got = 0;
    while (buf && got < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != (size_t)sb.st_size) {
        free(buf);
        return false;
    }
    *data = buf;
    *size = got;
    return true;
}

static const char *entry_problem(const uint8_t *f, size_t size)
{
    if (size < ENTRY_HEADER) return "shorter than its header";
    if (memcmp(f, ENTRY_MAGIC, 8) != 0) return "bad magic";
    if (get_u32(f + 8) != ENTRY_VERSION) return "another cache format version";
    if (get_u64(f + 16) != size - ENTRY_HEADER) return "truncated or padded";
    uint8_t sum[32];
    cc_sha256_once(f + ENTRY_HEADER, size - ENTRY_HEADER, sum);
    if (memcmp(sum, f + 24, 32) != 0) return "checksum mismatch";
    return NULL;
}

bool cc_cache_get_ext(const cc_cache_key *key, const char *ext, void **data_out, size_t *size_out)
{
    const char *dir;
    if (usable_dir(&dir)) return false;
    char path[PATH_MAX];
    entry_path(key, ext, path, sizeof path);
    uint8_t *f;
    size_t size;
    if (!read_file(path, &f, &size)) return false;
    const char *bad = entry_problem(f, size);
    if (bad) {
        BASE_LOG(1, "cache: ignoring corrupt entry %s (%s); it will be rebuilt", path, bad);
        free(f);
        return false;
    }
    size_t n = size - ENTRY_HEADER;
    memmove(f, f + ENTRY_HEADER, n);
    *data_out = f;
    *size_out = n;
    return true;
}

bool cc_cache_get(const cc_cache_key *key, void **data_out, size_t *size_out)
{
    return cc_cache_get_ext(key, ".bin", data_out, size_out);
}

static hcq_status write_all(int fd, const uint8_t *p, size_t n, const char *path)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return base_err(HCQ_EIO, "cache: writing %s: %s", path, w < 0 ? strerror(errno) : "short write");
        p += w;
        n -= (size_t)w;
    }
    return HCQ_OK;
}

hcq_status cc_cache_miss_allowed(const char *kernel, const char *target)
{
    if (!base_env_get()->cache_only) return HCQ_OK;
    return base_err(HCQ_ECOMPILE, "kernel '%s' for %s is not in the kernel cache %s, and HCQ_CACHE_ONLY=1 forbids "
                    "compiling it: fill the cache where the compilers are (`hcq compile --target %s --cache-dir DIR`, "
                    "or `make hw-kit`), or unset HCQ_CACHE_ONLY", kernel, target, hcq_cache_dir(), target);
}

hcq_status cc_cache_put_ext(const cc_cache_key *key, const char *ext, const void *data, size_t size)
{
    const char *dir;
    hcq_status st = usable_dir(&dir);
    if (st) return st;
    static atomic_uint seq; /* distinct temp names for threads of one process */
    char final[PATH_MAX], tmp[PATH_MAX + 64];
    entry_path(key, ext, final, sizeof final);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", final, (long)getpid(), atomic_fetch_add(&seq, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return base_err(HCQ_EIO, "cache: cannot create %s: %s", tmp, strerror(errno));
    uint8_t h[ENTRY_HEADER];
    memcpy(h, ENTRY_MAGIC, 8);
    put_u32(h + 8, ENTRY_VERSION);
    put_u32(h + 12, 0);
    put_u64(h + 16, size);
    cc_sha256_once(data, size, h + 24);
    st = write_all(fd, h, sizeof h, tmp);
    if (!st) st = write_all(fd, data, size, tmp);
    if (close(fd) != 0 && !st) st = base_err(HCQ_EIO, "cache: closing %s: %s", tmp, strerror(errno));
    if (!st && rename(tmp, final) != 0) st = base_err(HCQ_EIO, "cache: renaming %s to %s: %s", tmp, final, strerror(errno));
    if (st) unlink(tmp);
    return st;
}

hcq_status cc_cache_put(const cc_cache_key *key, const void *data, size_t size)
{
    return cc_cache_put_ext(key, ".bin", data, size);
}

/* ** host identity */
static char host_id[4096];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void read_host_id(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char model[512] = "", line[4096];
    char *flags = NULL;
    while (f && fgets(line, sizeof line, f) && (!model[0] || !flags)) {
        line[strcspn(line, "\n")] = 0;
        if (!model[0] && strncmp(line, "model name", 10) == 0) snprintf(model, sizeof model, "%.500s", line);
        if (!flags && (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) flags = strdup(line);
    }
    if (f) fclose(f);
    snprintf(host_id, sizeof host_id, "%s|%s", model[0] ? model : "unknown model", flags ? flags : "unknown flags");
    free(flags);
}

const char *cc_host_cpu_id(void)
{
    pthread_once(&host_once, read_host_id);
    return host_id;
}
