/* The preloaded mock (libhcqmock.so) inside programs hcq did not write, as
 * a hostile program uses it: one that closes every descriptor it did not
 * open and reuses the numbers (close_range, raw system calls), looks at
 * its descriptors with fstat, passes ioctl arguments that point nowhere,
 * and forks while its threads use the devices. Each program is built here
 * and run with the library preloaded; each prints what it saw and exits 0
 * only if everything was as the kernel drivers would have it. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctest.h"

TestSuite(mock_preload, .timeout = 120);

/* builds src and runs it with the mock preloaded; its stdout+stderr in *out */
static int run_prog(const char *name, const char *src, char **out)
{
    const char *lib = t_mock_preload_lib();
    char dir[T_TMP_PATH], path[600];
    t_tmpdir(dir, sizeof dir, "hcq-mockprog");
    snprintf(path, sizeof path, "%s/%s.c", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(src, f);
    fclose(f);
    cr_assert_eq(t_sh("cc -std=gnu11 -O1 -pthread -I. -Iinclude -o %s/%s %s", dir, name, path), 0, "%s does not build",
                 name);
    int rc = t_sh("cd %s && LD_PRELOAD=%s timeout 100 ./%s > out.txt 2>&1", dir, lib, name);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    *out = t_slurp(path, 1 << 16);
    t_sh("rm -rf %s", dir);
    return rc;
}

#define PROG_HEAD                                                                                                      \
    "#define _GNU_SOURCE\n#include <dirent.h>\n#include <errno.h>\n#include <fcntl.h>\n#include <pthread.h>\n"       \
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/ioctl.h>\n#include <sys/stat.h>\n"   \
    "#include <sys/syscall.h>\n#include <sys/sysmacros.h>\n#include <sys/wait.h>\n#include <unistd.h>\n"              \
    "#include \"drivers/nv/nv_abi.h\"\n#include \"drivers/amd/amd_abi.h\"\n#include \"drivers/amd/amd_drm.h\"\n"      \
    "#define FAIL(...) do { printf(__VA_ARGS__); printf(\"\\n\"); return 1; } while (0)\n"                          \
    "static nv_card_info cards[NV_CARD_INFO_MAX];\n"

/* The mock keeps no descriptor of its own (its buffer objects are
 * mappings without one: the first of them was fd 3, and a daemon that
 * closed everything and opened its own file had the emulated GPU write into
 * it); fstat of an emulated file says character device; an emulated file's
 * descriptor closed behind the mock's back (close_range, a raw close, a raw
 * dup2) is the program's own file when its number comes back, and ioctls on
 * it reach the kernel (ENOTTY), not the mock. */
static const char *fds_prog = PROG_HEAD
    "static int mock_fds(void) { int n = 0; DIR *d = opendir(\"/proc/self/fd\"); char p[64], l[256];\n"
    "  for (struct dirent *e; (e = readdir(d));) { snprintf(p, sizeof p, \"/proc/self/fd/%s\", e->d_name);\n"
    "    ssize_t k = readlink(p, l, sizeof l - 1); if (k <= 0) continue; l[k] = 0;\n"
    "    if (strstr(l, \"hcq-mock-bo\")) { printf(\"the mock's own fd %s: %s\\n\", e->d_name, l); n++; } }\n"
    "  closedir(d); return n; }\n"
    "static int own_file_at(int want) { int fd = open(\"own.txt\", O_RDWR | O_CREAT | O_TRUNC, 0644);\n"
    "  if (fd != want) { printf(\"own file at %d, not %d\\n\", fd, want); return -1; }\n"
    "  if (write(fd, \"ABCDEFGHIJKLMNOP\", 16) != 16) return -1; return fd; }\n"
    "static int is_kernel_file(int fd) { struct stat st; errno = 0;\n"
    "  int r = ioctl(fd, NV_IOCTL_CARD_INFO, cards); if (r != -1 || errno != ENOTTY) return 0;\n"
    "  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode); }\n"
    "int main(void) {\n"
    "  struct stat st; if (stat(\"/dev/kfd\", &st) || stat(\"/dev/nvidiactl\", &st)) FAIL(\"no emulated devices\");\n"
    "  int ctl = open(\"/dev/nvidiactl\", O_RDWR), kfd = open(\"/dev/kfd\", O_RDWR);\n"
    "  if (ctl < 0 || kfd < 0) FAIL(\"open\");\n"
    "  if (mock_fds()) FAIL(\"the mock holds descriptors\");\n"
    "  if (fstat(ctl, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 195 || minor(st.st_rdev) != 255)\n"
    "    FAIL(\"fstat of /dev/nvidiactl: mode 0%o rdev %u:%u\", st.st_mode, major(st.st_rdev), minor(st.st_rdev));\n"
    "  struct statx sx; if (statx(kfd, \"\", AT_EMPTY_PATH, STATX_TYPE, &sx) || !S_ISCHR(sx.stx_mode)) FAIL(\"statx of /dev/kfd\");\n"
    "  if (fstatat(kfd, \"\", &st, AT_EMPTY_PATH) || !S_ISCHR(st.st_mode)) FAIL(\"fstatat of /dev/kfd\");\n"
    "  /* a daemon closes everything, then opens its own file */\n"
    "  if (close_range(3, ~0u, 0)) FAIL(\"close_range\");\n"
    "  int own = own_file_at(3); if (own < 0 || !is_kernel_file(own)) FAIL(\"fd 3 is not the program's own file\");\n"
    "  close(own);\n"
    "  /* a raw close, then the number reused */\n"
    "  ctl = open(\"/dev/nvidiactl\", O_RDWR); if (ctl < 0) FAIL(\"open again\");\n"
    "  if (ioctl(ctl, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) FAIL(\"the emulated file works\");\n"
    "  syscall(SYS_close, ctl); own = own_file_at(ctl); if (own < 0 || !is_kernel_file(own)) FAIL(\"after a raw close\");\n"
    "  /* a raw dup2 over an emulated file */\n"
    "  ctl = open(\"/dev/nvidiactl\", O_RDWR); syscall(SYS_dup2, own, ctl);\n"
    "  if (!is_kernel_file(ctl)) FAIL(\"after a raw dup2\");\n"
    "  close(ctl); close(own);\n"
    "  /* a close loop over every number */\n"
    "  ctl = open(\"/dev/nvidiactl\", O_RDWR); for (int fd = 3; fd < 1024; fd++) close(fd);\n"
    "  own = own_file_at(ctl); if (own < 0 || !is_kernel_file(own)) FAIL(\"after a close loop\");\n"
    "  char back[17] = \"\"; pread(own, back, 16, 0); if (strcmp(back, \"ABCDEFGHIJKLMNOP\")) FAIL(\"the file changed: %s\", back);\n"
    "  ctl = open(\"/dev/nvidiactl\", O_RDWR); if (ioctl(ctl, NV_IOCTL_CARD_INFO, cards)) FAIL(\"the mock still works\");\n"
    "  printf(\"ok\\n\"); return 0; }\n";

Test(mock_preload, its_descriptors_are_out_of_the_programs_way)
{
    char *out;
    int rc = run_prog("fds", fds_prog, &out);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
    cr_assert(strstr(out, "ok"), "%s", out);
    free(out);
}

/* An ioctl whose argument points nowhere (or, for the way out, at
 * read-only memory) is EFAULT on every emulated file, as from the kernel
 * drivers, never a crash in the mock. */
static const char *efault_prog = PROG_HEAD
    "static const char ro[4096] = \"read-only\";\n"
    "static int efault(const char *what, int fd, unsigned long req, void *arg) {\n"
    "  errno = 0; int r = ioctl(fd, req, arg);\n"
    "  if (r != -1 || errno != EFAULT) { printf(\"%s: %d, errno %d (want EFAULT)\\n\", what, r, errno); return 1; }\n"
    "  return 0; }\n"
    "int main(void) {\n"
    "  int ctl = open(\"/dev/nvidiactl\", O_RDWR), gpu = open(\"/dev/nvidia0\", O_RDWR);\n"
    "  int uvm = open(\"/dev/nvidia-uvm\", O_RDWR), kfd = open(\"/dev/kfd\", O_RDWR);\n"
    "  int dri = open(\"/dev/dri/renderD128\", O_RDWR);\n"
    "  if (ctl < 0 || gpu < 0 || uvm < 0 || kfd < 0 || dri < 0) FAIL(\"open: %d %d %d %d %d\", ctl, gpu, uvm, kfd, dri);\n"
    "  int bad = 0; void *nowhere = (void *)0x10, *top = (void *)(long)-4096;\n"
    "  bad += efault(\"nvidiactl CARD_INFO\", ctl, NV_IOCTL_CARD_INFO, nowhere);\n"
    "  bad += efault(\"nvidiactl RM_ALLOC\", ctl, NV_IOCTL_RM_ALLOC, top);\n"
    "  bad += efault(\"nvidiactl RM_CONTROL\", ctl, NV_IOCTL_RM_CONTROL, NULL);\n"
    "  bad += efault(\"nvidiactl CARD_INFO into read-only memory\", ctl, NV_IOCTL_CARD_INFO, (void *)ro);\n"
    "  bad += efault(\"nvidia0 REGISTER_FD\", gpu, NV_IOCTL_REGISTER_FD, nowhere);\n"
    "  bad += efault(\"nvidia-uvm INITIALIZE\", uvm, NV_UVM_INITIALIZE, nowhere);\n"
    "  bad += efault(\"nvidia-uvm REGISTER_GPU\", uvm, NV_UVM_REGISTER_GPU, top);\n"
    "  bad += efault(\"kfd GET_VERSION\", kfd, KFD_IOC_GET_VERSION, nowhere);\n"
    "  bad += efault(\"kfd GET_VERSION into read-only memory\", kfd, KFD_IOC_GET_VERSION, (void *)ro);\n"
    "  bad += efault(\"kfd CREATE_QUEUE\", kfd, KFD_IOC_CREATE_QUEUE, top);\n"
    "  bad += efault(\"renderD128 DRM_IOCTL_VERSION\", dri, DRM_IOCTL_VERSION_NUM, nowhere);\n"
    "  /* a pointer inside the argument: kfd copies the events array in and out */\n"
    "  kfd_wait_events_args w = {.events_ptr = 0x10, .num_events = 1};\n"
    "  bad += efault(\"kfd WAIT_EVENTS with its events nowhere\", kfd, KFD_IOC_WAIT_EVENTS, &w);\n"
    "  /* RM's parameter blocks: copied in as rmapiParamsAcquire does, a bad one\n"
    "   * is NV_ERR_INVALID_ADDRESS in the struct and the ioctl succeeds */\n"
    "  nv_rm_alloc root = {.hClass = NV01_ROOT_CLIENT}; if (ioctl(ctl, NV_IOCTL_RM_ALLOC, &root) || root.status) FAIL(\"root\");\n"
    "  nv_rm_control c = {.hClient = root.hObjectNew, .hObject = root.hObjectNew,\n"
    "                     .cmd = NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, .params = 0x10, .paramsSize = sizeof(nv_build_version)};\n"
    "  if (ioctl(ctl, NV_IOCTL_RM_CONTROL, &c) || c.status != NV_ERR_INVALID_ADDRESS)\n"
    "    { printf(\"RM_CONTROL with its params nowhere: status 0x%x\\n\", c.status); bad++; }\n"
    "  nv_rm_alloc d = {.hRoot = root.hObjectNew, .hObjectParent = root.hObjectNew, .hClass = NV01_DEVICE_0,\n"
    "                   .pAllocParms = 0x10, .paramsSize = sizeof(nv_device_alloc)};\n"
    "  if (ioctl(ctl, NV_IOCTL_RM_ALLOC, &d) || d.status != NV_ERR_INVALID_ADDRESS)\n"
    "    { printf(\"RM_ALLOC with its params nowhere: status 0x%x\\n\", d.status); bad++; }\n"
    "  /* and good arguments still work */\n"
    "  kfd_get_version_args v = {0}; if (ioctl(kfd, KFD_IOC_GET_VERSION, &v) || v.major_version != 1) FAIL(\"GET_VERSION\");\n"
    "  if (ioctl(ctl, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) FAIL(\"CARD_INFO\");\n"
    "  if (bad) return 1;\n"
    "  printf(\"survived\\n\"); return 0; }\n";

Test(mock_preload, bad_argument_pointers_are_efault)
{
    char *out;
    int rc = run_prog("efault", efault_prog, &out);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
    cr_assert(strstr(out, "survived"), "%s", out);
    free(out);
}

/* Children forked while four threads open, ioctl and close /dev/nvidiactl
 * get a working mock: each opens the device and makes calls on its new
 * descriptor and on one it inherited, and exits. Before, children hung on
 * locks the threads held at the fork (six in ten); a child still stuck
 * after 20 s is killed by its alarm and fails the test. */
static const char *fork_prog = PROG_HEAD
    "static int stop;\n"
    "static void *busy(void *a) { (void)a; static __thread nv_card_info c[NV_CARD_INFO_MAX];\n"
    "  while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) { int fd = open(\"/dev/nvidiactl\", O_RDWR); if (fd < 0) continue;\n"
    "    ioctl(fd, NV_IOCTL_CARD_INFO, c); nv_rm_alloc a = {.hClass = NV01_ROOT_CLIENT}; ioctl(fd, NV_IOCTL_RM_ALLOC, &a);\n"
    "    close(fd); } return NULL; }\n"
    "static int child(int inherited) { alarm(20);\n"
    "  int fd = open(\"/dev/nvidiactl\", O_RDWR); if (fd < 0) return 2;\n"
    "  if (ioctl(fd, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) return 3;\n"
    "  nv_rm_alloc a = {.hClass = NV01_ROOT_CLIENT}; if (ioctl(fd, NV_IOCTL_RM_ALLOC, &a) || a.status) return 4;\n"
    "  nv_rm_free f = {.hRoot = a.hObjectNew, .hObjectOld = a.hObjectNew}; if (ioctl(fd, NV_IOCTL_RM_FREE, &f) || f.status) return 5;\n"
    "  if (ioctl(inherited, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) return 6;\n"
    "  struct stat st; if (fstat(inherited, &st) || !S_ISCHR(st.st_mode)) return 7;\n"
    "  if (close(fd) || close(inherited)) return 8;\n"
    "  int kfd = open(\"/dev/kfd\", O_RDWR); kfd_get_version_args v = {0};\n"
    "  if (kfd < 0 || ioctl(kfd, KFD_IOC_GET_VERSION, &v) || close(kfd)) return 9;\n"
    "  return 0; }\n"
    "int main(void) { int inherited = open(\"/dev/nvidiactl\", O_RDWR); if (inherited < 0) FAIL(\"open\");\n"
    "  pthread_t t[4]; for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, busy, NULL);\n"
    "  int bad = 0;\n"
    "  for (int i = 0; i < 30; i++) { pid_t p = fork(); if (p == 0) _exit(child(inherited));\n"
    "    int st; waitpid(p, &st, 0);\n"
    "    if (!WIFEXITED(st) || WEXITSTATUS(st)) { printf(\"child %d: %s %d\\n\", i, WIFSIGNALED(st) ? \"killed by signal\" : \"exit\",\n"
    "                                             WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)); bad++; } }\n"
    "  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED); for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);\n"
    "  if (ioctl(inherited, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) FAIL(\"the parent's mock after the forks\");\n"
    "  if (bad) FAIL(\"%d children of 30 failed\", bad);\n"
    "  printf(\"ok\\n\"); return 0; }\n";

Test(mock_preload, fork_leaves_a_working_mock_in_the_child)
{
    char *out;
    int rc = run_prog("forker", fork_prog, &out);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
    cr_assert(strstr(out, "ok"), "%s", out);
    free(out);
}
