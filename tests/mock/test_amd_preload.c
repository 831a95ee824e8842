/* The AMD mock preloaded (libhcqmock.so) into programs that know nothing
 * of hcq: sysfs paths behave as sysfs does for open, openat, read, stat,
 * readdir and access, directories included; the amdgpu IP-discovery tree
 * is there for each model. Each check is a small C program built here and
 * run under LD_PRELOAD; it prints what it saw, or the step that failed. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hcqtest.h"
#include "proctest.h"

TestSuite(amd_preload, .timeout = 120);

/* runs src (built in a private directory) under the preloaded mock with
 * config; its output, and *rc its exit status. The private TMPDIR must be
 * empty again afterwards: every materialized directory removed. */
static char *run_prog(const char *src, const char *config, int *rc)
{
    static char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-amdpre");
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/p.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(src, f);
    fclose(f);
    cr_assert_eq(t_sh("cc -std=gnu11 -O1 -o %s/p %s", dir, path), 0, "building the client");
    cr_assert_eq(t_sh("mkdir %s/tmp", dir), 0);
    *rc = t_sh("TMPDIR=%s/tmp HCQ_MOCK_CONFIG=%s LD_PRELOAD=%s %s/p > %s/out.txt 2>&1", dir, config, t_mock_preload_lib(), dir, dir);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = t_slurp(path, 1 << 16);
    cr_assert_eq(t_sh("rmdir %s/tmp", dir), 0, "materialized directories left behind: %s", out);
    t_sh("rm -rf %s", dir);
    return out;
}

static const char *sysfs_prog =
    "#define _GNU_SOURCE\n#include <dirent.h>\n#include <errno.h>\n#include <fcntl.h>\n#include <stdio.h>\n"
    "#include <stdlib.h>\n#include <string.h>\n#include <sys/stat.h>\n#include <unistd.h>\n"
    "#define T \"/sys/devices/virtual/kfd/kfd/topology\"\n"
    "#define FAIL(n) do { printf(\"step %d failed: %s\\n\", n, strerror(errno)); return n; } while (0)\n"
    "int main(void) {\n"
    "  struct stat st; char b[4096]; ssize_t n;\n"
    /* a directory: open, fstat, read (EISDIR), readdir through fdopendir */
    "  int d = open(T \"/nodes\", O_RDONLY); if (d < 0) FAIL(1);\n"
    "  if (fstat(d, &st) || !S_ISDIR(st.st_mode)) FAIL(2);\n"
    "  if (read(d, b, sizeof b) != -1 || errno != EISDIR) FAIL(3);\n"
    /* openat, fstatat, faccessat relative to it */
    "  int p = openat(d, \"1/properties\", O_RDONLY); if (p < 0) FAIL(4);\n"
    "  n = read(p, b, sizeof b - 1); if (n <= 0) FAIL(5); b[n] = 0; close(p);\n"
    "  unsigned gfx = 0; const char *g = strstr(b, \"gfx_target_version \"); if (!g) FAIL(6);\n"
    "  sscanf(g, \"gfx_target_version %u\", &gfx);\n"
    "  if (fstatat(d, \"1\", &st, 0) || !S_ISDIR(st.st_mode)) FAIL(7);\n"
    "  if (fstatat(d, \"1/gpu_id\", &st, 0) || !S_ISREG(st.st_mode)) FAIL(8);\n"
    "  if (faccessat(d, \"1/mem_banks/0/properties\", R_OK, 0)) FAIL(9);\n"
    "  if (faccessat(d, \"7\", F_OK, 0) == 0 || errno != ENOENT) FAIL(10);\n"
    "  DIR *dir = fdopendir(d); if (!dir) FAIL(11);\n"
    "  int nodes = 0, dirs = 0;\n"
    "  for (struct dirent *e; (e = readdir(dir));) if (e->d_name[0] != '.') { nodes++; dirs += e->d_type == DT_DIR; }\n"
    "  closedir(dir);\n"
    "  if (nodes != 2 || dirs != 2) { printf(\"%d nodes, %d directories\\n\", nodes, dirs); return 12; }\n"
    /* open(2) refusals a directory and a file give */
    "  if (open(T \"/nodes\", O_WRONLY) != -1 || errno != EISDIR) FAIL(13);\n"
    "  if (open(T \"/nodes/1/gpu_id\", O_RDONLY | O_DIRECTORY) != -1 || errno != ENOTDIR) FAIL(14);\n"
    "  if (stat(T \"/nodes/1/mem_banks\", &st) || !S_ISDIR(st.st_mode)) FAIL(15);\n"
    "  if (access(T \"/nodes/9\", F_OK) == 0 || errno != ENOENT) FAIL(16);\n"
    "  if (access(T \"/generation_id\", R_OK)) FAIL(17);\n"
    /* the IP-discovery tree of the render node's device */
    "  char ip[160], v[3][16]; const char *f[3] = {\"major\", \"minor\", \"revision\"};\n"
    "  for (int i = 0; i < 3; i++) {\n"
    "    snprintf(ip, sizeof ip, \"/sys/class/drm/renderD128/device/ip_discovery/die/0/11/0/%s\", f[i]);\n"
    "    int fd = open(ip, O_RDONLY); if (fd < 0) FAIL(18);\n"
    "    n = read(fd, v[i], sizeof v[i] - 1); close(fd); if (n <= 0) FAIL(19); v[i][n - 1] = 0; }\n"
    "  dir = opendir(\"/sys/class/drm/renderD128/device/ip_discovery/die/0/11\"); if (!dir) FAIL(20);\n"
    "  int xcc = 0; for (struct dirent *e; (e = readdir(dir));) xcc += e->d_name[0] != '.' && e->d_type == DT_DIR;\n"
    "  closedir(dir);\n"
    "  int sd = open(\"/sys/class/drm/renderD128/device/ip_discovery/die/0\", O_RDONLY | O_DIRECTORY);\n"
    "  if (sd < 0) FAIL(21);\n"
    "  int fd = openat(sd, \"num_ips\", O_RDONLY); if (fd < 0) FAIL(22);\n"
    "  n = read(fd, b, sizeof b - 1); close(fd); close(sd); if (n <= 0) FAIL(23); b[n] = 0;\n"
    /* by the names amdgpu links beside the numbers */
    "  char m[3][16]; const char *nf[3] = {\"MP1/0/major\", \"MP1/0/minor\", \"HDP/0/minor\"};\n"
    "  for (int i = 0; i < 3; i++) {\n"
    "    snprintf(ip, sizeof ip, \"/sys/class/drm/renderD128/device/ip_discovery/die/0/%s\", nf[i]);\n"
    "    int nfd = open(ip, O_RDONLY); if (nfd < 0) FAIL(24);\n"
    "    n = read(nfd, m[i], sizeof m[i] - 1); close(nfd); if (n <= 0) FAIL(25); m[i][n - 1] = 0; }\n"
    "  dir = opendir(\"/sys/class/drm/renderD128/device/ip_discovery/die/0/GC\"); if (!dir) FAIL(26);\n"
    "  closedir(dir);\n"
    "  printf(\"gfx %u, GC %s.%s.%s, %d GC instances, %u IPs, MP1 %s.%s, HDP .%s\\n\", gfx, v[0], v[1], v[2], xcc,\n"
    "         (unsigned)atoi(b), m[0], m[1], m[2]);\n"
    "  return 0; }\n";

static void sysfs_as_sysfs(const char *config, const char *expect)
{
    int rc;
    char *out = run_prog(sysfs_prog, config, &rc);
    cr_assert_eq(rc, 0, "%s: %s", config, out);
    cr_assert(strstr(out, expect), "%s: %s", config, out);
}
Test(amd_preload, sysfs_behaves_as_sysfs_gfx90a)
{
    sysfs_as_sysfs("amd=gfx90a", "gfx 90010, GC 9.4.2, 1 GC instances, 7 IPs, MP1 13.0, HDP .4");
}
Test(amd_preload, sysfs_behaves_as_sysfs_gfx942)
{
    sysfs_as_sysfs("amd=gfx942", "gfx 90402, GC 9.4.3, 8 GC instances, 14 IPs, MP1 13.0, HDP .4");
}
Test(amd_preload, sysfs_behaves_as_sysfs_gfx1100)
{
    sysfs_as_sysfs("amd=gfx1100", "gfx 110000, GC 11.0.0, 1 GC instances, 7 IPs, MP1 13.0, HDP .0");
}
