/* Test support: temporary files removed at the exit of their maker (tmptest.h). */
#include "tmptest.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct t_tmp_entry {
    struct t_tmp_entry *next;
    pid_t pid; /* the process that made it: a forked child leaves it alone */
    char path[];
} t_tmp_entry;

static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static t_tmp_entry *tmp_list;
static pthread_once_t tmp_once = PTHREAD_ONCE_INIT;

/* Removes path and, for a directory, what it holds, without following
 * links; a directory a test made unreadable or read-only (to see a refusal)
 * is given back its owner's rights first. */
static void rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    if ((st.st_mode & S_IRWXU) != S_IRWXU) chmod(path, (st.st_mode & 07777) | S_IRWXU);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            size_t n = strlen(path) + strlen(e->d_name) + 2;
            char *child = malloc(n);
            if (!child) break;
            snprintf(child, n, "%s/%s", path, e->d_name);
            rm_tree(child);
            free(child);
        }
        closedir(d);
    }
    rmdir(path);
}

void t_tmp_cleanup(void)
{
    pid_t me = getpid();
    pthread_mutex_lock(&tmp_lock);
    t_tmp_entry *e = tmp_list, *keep = NULL;
    tmp_list = NULL;
    while (e) {
        t_tmp_entry *next = e->next;
        if (e->pid == me) {
            rm_tree(e->path);
            free(e);
        } else { /* the parent's (a fork's copy of its list): its own exit removes it */
            e->next = keep;
            keep = e;
        }
        e = next;
    }
    tmp_list = keep;
    pthread_mutex_unlock(&tmp_lock);
}

static void tmp_register_atexit(void) { atexit(t_tmp_cleanup); }

void t_tmp_remove_at_exit(const char *path)
{
    pthread_once(&tmp_once, tmp_register_atexit);
    size_t n = strlen(path) + 1;
    t_tmp_entry *e = malloc(sizeof *e + n);
    cr_assert_not_null(e);
    e->pid = getpid();
    memcpy(e->path, path, n);
    pthread_mutex_lock(&tmp_lock);
    e->next = tmp_list;
    tmp_list = e;
    pthread_mutex_unlock(&tmp_lock);
}

const char *t_tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

static void tmp_template(char *buf, size_t size, const char *name)
{
    int n = snprintf(buf, size, "%s/%s-XXXXXX", t_tmp_root(), name);
    cr_assert(n > 0 && (size_t)n < size, "a temporary path under %s for %s does not fit %zu bytes", t_tmp_root(),
              name, size);
}

char *t_tmpdir(char *buf, size_t size, const char *name)
{
    tmp_template(buf, size, name);
    cr_assert_not_null(mkdtemp(buf), "mkdtemp %s: %s", buf, strerror(errno));
    t_tmp_remove_at_exit(buf);
    return buf;
}

int t_tmpfile(char *buf, size_t size, const char *name)
{
    tmp_template(buf, size, name);
    int fd = mkstemp(buf);
    cr_assert(fd >= 0, "mkstemp %s: %s", buf, strerror(errno));
    t_tmp_remove_at_exit(buf);
    return fd;
}
