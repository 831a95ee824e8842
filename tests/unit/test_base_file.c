/* base_outfile, the writer of files replaced whole: a commit replaces the
 * file and keeps its mode, an abort or a failed write leaves the old one
 * and no temporary, a symbolic link stays a link to the new contents, and
 * a device is written in place, never renamed over (HCQ_PROFILE=/dev/full
 * once replaced the device node with a regular file). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "hcqtest.h"

TestSuite(base_file, .timeout = 30);

static char dir[T_TMP_PATH];

static void mkdir_tmp(void)
{
    t_tmpdir(dir, sizeof dir, "hcq_outfile");
}

static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static void contents(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s is gone", path);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = 0;
    fclose(f);
}

static hcq_status write_whole(const char *path, const char *text)
{
    base_outfile o;
    hcq_status s = base_outfile_open(&o, path, "test");
    if (s) return s;
    fputs(text, o.f);
    return base_outfile_commit(&o, "test");
}

Test(base_file, replaces_keeps_mode_and_leaves_nothing_behind)
{
    mkdir_tmp();
    char path[T_TMP_PATH + 32], buf[64];
    snprintf(path, sizeof path, "%s/f", dir);
    T_OK(write_whole(path, "one"));
    chmod(path, 0600);
    T_OK(write_whole(path, "two"));
    contents(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "two");
    struct stat st;
    cr_assert(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    base_outfile o;
    T_OK(base_outfile_open(&o, path, "test"));
    fputs("three", o.f);
    base_outfile_abort(&o);
    contents(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "two");
    cr_assert_eq(entries(), 1);
    /* a write that fails (the file size limit stands for a full disk) */
    struct rlimit old, lim = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    T_OK(base_outfile_open(&o, path, "test"));
    for (int i = 0; i < 2000; i++) fputs("0123456789", o.f);
    hcq_status s = base_outfile_commit(&o, "test");
    setrlimit(RLIMIT_FSIZE, &old);
    cr_assert_eq(s, HCQ_EIO);
    T_MSG_HAS("unchanged");
    contents(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "two");
    cr_assert_eq(entries(), 1);
    unlink(path);
    rmdir(dir);
}

Test(base_file, a_symlink_stays_a_link_to_the_new_contents)
{
    mkdir_tmp();
    char path[T_TMP_PATH + 32], link[T_TMP_PATH + 32], buf[64];
    snprintf(path, sizeof path, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    T_OK(write_whole(path, "old"));
    cr_assert_eq(symlink("real", link), 0);
    T_OK(write_whole(link, "new"));
    struct stat st;
    cr_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced by a file");
    contents(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "new");
    cr_assert_eq(entries(), 2);
    unlink(link);
    unlink(path);
    rmdir(dir);
}

Test(base_file, devices_are_written_in_place)
{
    struct stat st;
    T_OK(write_whole("/dev/null", "anything"));
    cr_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    if (stat("/dev/full", &st) || !S_ISCHR(st.st_mode)) cr_skip_test("no /dev/full device here");
    cr_assert_eq(write_whole("/dev/full", "anything"), HCQ_EIO, "a full device's error is reported");
    T_MSG_HAS("/dev/full");
    cr_assert(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is no longer a device");
}
