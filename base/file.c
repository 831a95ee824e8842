/* Files replaced whole. A checkpoint or report written in place is gone the
 * moment its first write fails (a full disk, a kill, a crash): the old
 * contents are truncated and the new ones incomplete. Here the new version
 * goes to a temporary file beside the target (the same directory, so the
 * same file system), is flushed and fsync'ed, and only then renamed over
 * the target, which rename(2) does atomically: a reader, or the next run
 * after a crash, sees the old file or the new one, never a mix. The
 * directory is synced after the rename so the new name itself survives a
 * power cut. A path that is not a regular file (a device, a FIFO) is written
 * in place. */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path that is not a regular file (a device such as /dev/full or
 * /dev/stdout, a FIFO) is written in place: there is no old version to
 * keep, and renaming over it would replace the device node itself. A
 * symbolic link is followed, so the file it names is replaced and the link
 * stays. */
static hcq_status open_in_place(base_outfile *o, const char *path, const char *fn)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return base_err(HCQ_EINVAL, "%s: cannot open %s: %s", fn, path, strerror(errno));
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        return base_err(HCQ_ENOMEM, "%s: %s: out of memory", fn, path);
    }
    o->tmp[0] = 0;
    snprintf(o->path, sizeof o->path, "%s", path);
    return HCQ_OK;
}

hcq_status base_outfile_open(base_outfile *o, const char *path, const char *fn)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path) return base_err(HCQ_EINVAL, "%s: the path is empty", fn);
    if (strlen(path) >= sizeof o->path) return base_err(HCQ_EINVAL, "%s: %s: path too long", fn, path);
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return base_err(HCQ_EINVAL, "%s: %s is a directory", fn, path);
        return open_in_place(o, path, fn);
    }
    char target[sizeof o->path];
    snprintf(target, sizeof target, "%s", path);
    struct stat lst;
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real || strlen(real) >= sizeof target) {
            free(real);
            return open_in_place(o, path, fn);
        }
        snprintf(target, sizeof target, "%s", real);
        free(real);
    }
    /* the temporary: a hidden name beside the target, unique in this
     * process (a counter) and among processes (the pid); O_EXCL refuses
     * anything already there, a link planted by someone else included */
    static atomic_uint serial;
    const char *slash = strrchr(target, '/');
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp-%d-%u", (int)dir_len, target, target + dir_len, (int)getpid(),
                 atomic_fetch_add(&serial, 1));
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return base_err(HCQ_EINVAL, "%s: cannot create a temporary file beside %s (%s): %s", fn, target, o->tmp,
                        strerror(errno));
    /* a file replaced keeps its permissions (a private checkpoint stays private) */
    if (exists) (void)fchmod(fd, st.st_mode & 07777);
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return base_err(HCQ_ENOMEM, "%s: %s: %s", fn, path, strerror(e));
    }
    snprintf(o->path, sizeof o->path, "%s", target);
    return HCQ_OK;
}

void base_outfile_abort(base_outfile *o)
{
    if (!o->f) return;
    fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
}

hcq_status base_outfile_commit(base_outfile *o, const char *fn)
{
    if (!o->f) return base_err(HCQ_ESTATE, "%s: the file is not open", fn);
    /* every step can be where a full disk shows: the buffer's last write,
     * the sync that allocates delayed blocks, the close */
    int e = 0;
    bool in_place = !o->tmp[0];
    if (ferror(o->f)) e = errno ? errno : EIO;
    if (!e && fflush(o->f)) e = errno;
    /* a device or pipe written in place may not sync (EINVAL): nothing to keep */
    if (!e && fsync(fileno(o->f)) && !(in_place && (errno == EINVAL || errno == EROFS))) e = errno;
    if (fclose(o->f) && !e) e = errno;
    o->f = NULL;
    if (in_place) {
        if (e) return base_err(HCQ_EIO, "%s: writing %s: %s", fn, o->path, strerror(e));
        return HCQ_OK;
    }
    if (!e && rename(o->tmp, o->path)) e = errno;
    if (e) {
        unlink(o->tmp);
        return base_err(HCQ_EIO, "%s: writing %s: %s; the file there before (if any) is unchanged", fn, o->path,
                        strerror(e));
    }
    /* the rename made durable: sync the directory (where that is allowed) */
    char dir[sizeof o->path];
    snprintf(dir, sizeof dir, "%s", o->path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir] = 0;
    else snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return HCQ_OK;
}
