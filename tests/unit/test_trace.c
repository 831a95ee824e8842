/* The tracer: through the syscall seam (HCQ_TRACE's wrapper), through its
 * API with arguments a driver would refuse, and through LD_PRELOAD on small
 * programs that are not hcq's (hcq trace): ones that fork, thread, pass bad
 * pointers, make raw system calls, are static. /dev/null stands in for a
 * driver file (HCQ_TRACE_PATHS), so unknown requests print as numbers with
 * their raw argument, as they must. The NV, kfd and DRM decoders are held
 * to their names and fields, and stream capture to the streams the mock
 * GPU (preloaded, libhcqmock.so) executed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drivers/amd/amd_abi.h"
#include "drivers/amd/amd_drm.h"
#include "drivers/dump.h"
#include "drivers/mock/mock.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/sys.h"
#include "drivers/trace.h"
#include <hcq/hcq.h>

#include "proctest.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++) n++;
    return n;
}

Test(trace, the_seam_wrapper_decodes_calls_on_driver_files)
{
    char out[T_TMP_PATH];
    int ofd = t_tmpfile(out, sizeof out, "hcq-trace");
    cr_assert_geq(ofd, 0);
    close(ofd);
    setenv("HCQ_TRACE_FILE", out, 1);
    setenv("HCQ_TRACE_PATHS", "/dev/null", 1);
    const hcq_sys *prev = sys_set(trace_sys(sys_libc()));
    int fd = sys_open("/dev/null", O_RDWR);
    cr_assert_geq(fd, 0);
    struct { uint32_t a, b, c, status; } arg = {0x41, 7, 8, 0};
    int r = sys_ioctl(fd, _IOWR('F', 0x2b, arg), &arg);
    cr_assert_lt(r, 0, "/dev/null refuses the request");
    int err = 0;
    sys_mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0, &err);
    cr_assert_eq(sys_close(fd), 0);
    int other = sys_open("/proc/self/stat", O_RDONLY); /* not a driver file: not traced */
    sys_close(other);
    sys_set(prev);
    char *text = slurp(out);
    unlink(out);
    char who[64];
    snprintf(who, sizeof who, "] %d/%d", getpid(), gettid());
    cr_assert(strstr(text, who), "pid/tid on the lines: %s", text);
    cr_assert(strstr(text, "open   path=/dev/null flags=O_RDWR fd="), "%s", text);
    cr_assert(strstr(text, "ioctl  file=/dev/null") && strstr(text, "request=0xc010462b nr=0x2b size=16"), "%s", text);
    cr_assert(strstr(text, "in=41000000_07000000_08000000_00000000"), "raw argument bytes: %s", text);
    cr_assert_null(strstr(text, "out="), "a failed call filled nothing: %s", text);
    cr_assert(strstr(text, "error=ENOTTY (Inappropriate ioctl for device)"), "%s", text);
    cr_assert(strstr(text, "mmap   file=/dev/null") && strstr(text, "prot=PROT_READ flags=MAP_PRIVATE"), "%s", text);
    cr_assert(strstr(text, "close  file=/dev/null"), "%s", text);
    cr_assert_null(strstr(text, "/proc/self/stat"), "only driver files are traced: %s", text);
    free(text);
}

/* ** the decoders, fed through the tracer's API: arguments a driver would
 * refuse, statuses, outputs */
/* The tracer's own descriptor for HCQ_TRACE_FILE, closed by the program
 * (a close loop) and its number taken by the program's own file: the trace
 * never goes into the program's file; the tracer opens its file again and
 * goes on. */
static int fd_of(const char *path)
{
    for (int fd = 3; fd < 1024; fd++) {
        char link[64], target[512];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (!strcmp(target, path)) return fd;
    }
    return -1;
}

Test(trace, a_trace_file_closed_behind_its_back_is_opened_again)
{
    char out[T_TMP_PATH], own[T_TMP_PATH];
    int ofd = t_tmpfile(out, sizeof out, "hcq-trace");
    cr_assert_geq(ofd, 0);
    close(ofd);
    setenv("HCQ_TRACE_FILE", out, 1);
    setenv("HCQ_TRACE_PATHS", "/dev/null", 1);
    const hcq_sys *prev = sys_set(trace_sys(sys_libc()));
    int fd = sys_open("/dev/null", O_RDWR);
    cr_assert_geq(fd, 0);
    sys_close(fd);
    int tfd = fd_of(out);
    cr_assert_geq(tfd, 0, "the tracer's descriptor of %s", out);
    close(tfd); /* the program closes what it did not open... */
    int mine = t_tmpfile(own, sizeof own, "hcq-own"); /* ...and the number is its own file's */
    cr_assert_geq(mine, 0);
    if (mine != tfd) {
        cr_assert_eq(dup2(mine, tfd), tfd);
        close(mine);
        mine = tfd;
    }
    fd = sys_open("/dev/null", O_RDWR);
    sys_close(fd);
    sys_set(prev);
    char *o = slurp(own), *t = slurp(out);
    cr_assert_eq(strlen(o), 0, "the trace went into the program's file: %s", o);
    cr_assert_eq(count(t, "open   path=/dev/null"), 2, "both opens in the trace file: %s", t);
    free(o);
    free(t);
    close(mine);
    unlink(own);
    unlink(out);
}

static tracer *api_tracer(char *path, bool json)
{
    int fd = t_tmpfile(path, T_TMP_PATH, "hcq-trace-api");
    cr_assert_geq(fd, 0);
    tracer_opts o = {.out_fd = fd, .json = json, .lines = true};
    tracer *t = tracer_create(&o);
    cr_assert_not_null(t);
    return t;
}

static char *api_done(tracer *t, char *path)
{
    close(tracer_out_fd(t));
    tracer_destroy(t);
    char *text = slurp(path);
    unlink(path);
    return text;
}

static void call(tracer *t, int fd, unsigned long req, void *arg, int ret)
{
    void *tok;
    tracer_ioctl_before(t, fd, req, arg, &tok);
    tracer_ioctl_after(t, fd, req, arg, ret, 1000, tok);
}

Test(trace, bad_pointers_are_read_safely_and_said_to_be_bad)
{
    char out[T_TMP_PATH];
    tracer *t = api_tracer(out, false);
    tracer_open(t, "/dev/nvidiactl", O_RDWR, 40, 0);
    tracer_open(t, "/dev/kfd", O_RDWR, 41, 0);
    tracer_open(t, "/dev/dri/renderD128", O_RDWR, 42, 0);
    /* the argument itself unmapped */
    call(t, 40, NV_IOCTL_RM_ALLOC, (void *)(uintptr_t)0x10, -EFAULT);
    call(t, 41, KFD_IOC_WAIT_EVENTS, (void *)(uintptr_t)-4096, -EFAULT);
    /* pointers inside the argument unmapped, the calls "accepted" */
    nv_rm_alloc a = {.hRoot = 1, .hObjectParent = 2, .hObjectNew = 3, .hClass = AMPERE_CHANNEL_GPFIFO_A,
                     .pAllocParms = 0x18};
    call(t, 40, NV_IOCTL_RM_ALLOC, &a, 0);
    nv_rm_control c = {.hClient = 1, .hObject = 2, .cmd = NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, .params = 0x20,
                       .paramsSize = 4};
    call(t, 40, NV_IOCTL_RM_CONTROL, &c, 0);
    kfd_wait_events_args w = {.events_ptr = 0x30, .num_events = 4, .wait_result = KFD_WAIT_COMPLETE};
    call(t, 41, KFD_IOC_WAIT_EVENTS, &w, 0);
    amdgpu_cs_args cs = {.in = {.ctx_id = 1, .num_chunks = 2, .chunks = 0x40}};
    call(t, 42, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_CS, amdgpu_cs_args), &cs, 0);
    drm_version_args v = {.name_len = 6, .name = 0x50};
    call(t, 42, DRM_IOCTL_VERSION_NUM, &v, 0);
    char *text = api_done(t, out);
    cr_assert_eq(count(text, "arg_is=unreadable"), 2, "%s", text);
    cr_assert(strstr(text, "hClass=AMPERE_CHANNEL_GPFIFO_A") && strstr(text, "hObject=0x3"), "%s", text);
    cr_assert_null(strstr(text, "gpFifoOffset"), "parameters behind a bad pointer are not printed: %s", text);
    cr_assert(strstr(text, "control=NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN"), "%s", text);
    cr_assert(strstr(text, "cmd=AMDKFD_IOC_WAIT_EVENTS") && strstr(text, "result=complete"), "%s", text);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_AMDGPU_CS") && strstr(text, "chunks=2"), "%s", text);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_VERSION"), "%s", text);
    free(text);
}

Test(trace, failed_nv_calls_never_print_nv_ok)
{
    char out[T_TMP_PATH];
    tracer *t = api_tracer(out, false);
    tracer_open(t, "/dev/nvidiactl", O_RDWR, 40, 0);
    nv_rm_alloc a = {.hRoot = 1, .hClass = NV01_ROOT_CLIENT}; /* status 0 = NV_OK, as the program left it */
    call(t, 40, NV_IOCTL_RM_ALLOC, &a, -EIO);
    nv_rm_free f = {.hRoot = 1, .hObjectOld = 5, .status = 0x1f};
    call(t, 40, NV_IOCTL_RM_FREE, &f, 0);
    char *text = api_done(t, out);
    char *first = strstr(text, "NV_ESC_RM_ALLOC"), *nl = first ? strchr(first, '\n') : NULL;
    cr_assert(first && nl, "%s", text);
    *nl = 0;
    cr_assert_null(strstr(first, "status="), "the kernel failed the call: no RM status: %s", first);
    cr_assert(strstr(first, "error=EIO"), "%s", first);
    cr_assert(strstr(nl + 1, "cmd=NV_ESC_RM_FREE") && strstr(nl + 1, "status=NV_ERR_"), "RM's own failure: %s",
              nl + 1);
    free(text);
}

/* issue 21 item 5: every RM call shows its ioctl size, RM_ALLOC its
 * paramsSize and, where it differs, the size RM copies for the class */
Test(trace, rm_calls_show_params_size_and_ioctl_size)
{
    char out[T_TMP_PATH];
    tracer *t = api_tracer(out, false);
    tracer_open(t, "/dev/nvidiactl", O_RDWR, 40, 0);
    static nv_vaspace_alloc va;
    nv_rm_alloc a = {.hRoot = 1, .hObjectParent = 2, .hClass = FERMI_VASPACE_A, .pAllocParms = (uintptr_t)&va};
    call(t, 40, NV_IOCTL_RM_ALLOC, &a, 0);
    static nv_classlist cl;
    nv_rm_control c = {.hClient = 1, .hObject = 2, .cmd = NV0080_CTRL_CMD_GPU_GET_CLASSLIST,
                       .params = (uintptr_t)&cl, .paramsSize = sizeof cl};
    call(t, 40, NV_IOCTL_RM_CONTROL, &c, 0);
    nv_rm_free f = {.hRoot = 1, .hObjectOld = 3};
    call(t, 40, NV_IOCTL_RM_FREE, &f, 0);
    char *text = api_done(t, out);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_ALLOC size=32 ") && strstr(text, "paramsSize=0 rmCopies=56"), "%s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_CONTROL size=32 ") && strstr(text, "paramsSize=16"), "%s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_FREE size=16 "), "%s", text);
    free(text);
}

Test(trace, drm_and_amdgpu_ioctls_by_name)
{
    char out[T_TMP_PATH];
    tracer *t = api_tracer(out, false);
    tracer_open(t, "/dev/dri/renderD128", O_RDWR | O_CLOEXEC, 42, 0);
    static char name[] = "amdgpu", desc[] = "AMD GPU";
    drm_version_args v = {.major = 3, .minor = 57, .name_len = 6, .name = (uintptr_t)name, .desc_len = 7,
                          .desc = (uintptr_t)desc};
    call(t, 42, DRM_IOCTL_VERSION_NUM, &v, 0);
    amdgpu_info_args info = {.return_size = 64, .query = AMDGPU_INFO_DEV_INFO};
    call(t, 42, AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_INFO, amdgpu_info_args), &info, 0);
    amdgpu_gem_create_args g = {.in = {.bo_size = 1 << 20, .alignment = 4096, .domains = AMDGPU_DOMAIN_VRAM}};
    call(t, 42, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_GEM_CREATE, amdgpu_gem_create_args), &g, 0);
    static amdgpu_cs_chunk_ib ib = {.va_start = 0x400000, .ib_bytes = 256, .ip_type = AMDGPU_IP_COMPUTE};
    static amdgpu_cs_chunk chunk = {.chunk_id = AMDGPU_CHUNK_IB, .length_dw = 8};
    chunk.chunk_data = (uintptr_t)&ib;
    static uint64_t chunks[1];
    chunks[0] = (uintptr_t)&chunk;
    amdgpu_cs_args cs = {.in = {.ctx_id = 1, .num_chunks = 1, .chunks = (uintptr_t)chunks}};
    call(t, 42, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_CS, amdgpu_cs_args), &cs, 0);
    amdgpu_gem_va_args va = {.handle = 7, .operation = AMDGPU_VA_MAP, .va_address = 0x800000, .map_size = 4096};
    call(t, 42, AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_GEM_VA, amdgpu_gem_va_args), &va, 0);
    char *text = api_done(t, out);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_VERSION") && strstr(text, "driver=amdgpu version=3.57.0"), "%s", text);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_AMDGPU_INFO query=DEV_INFO"), "%s", text);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_AMDGPU_GEM_CREATE size=1048576") && strstr(text, "domains=VRAM"), "%s", text);
    cr_assert(strstr(text, "ib=COMPUTE ring 0: 0x400000, 256 bytes"), "%s", text);
    cr_assert(strstr(text, "cmd=DRM_IOCTL_AMDGPU_GEM_VA op=MAP handle=7 va=0x800000"), "%s", text);
    cr_assert_null(strstr(text, "request=0x"), "%s", text);
    free(text);
}

#if __has_include(<libdrm/amdgpu_drm.h>)
#include <libdrm/amdgpu_drm.h>
Test(trace, our_drm_definitions_match_libdrms)
{
    cr_assert_eq(DRM_IOCTL_VERSION, DRM_IOCTL_VERSION_NUM);
    cr_assert_eq(DRM_IOCTL_AMDGPU_GEM_CREATE, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_GEM_CREATE, amdgpu_gem_create_args));
    cr_assert_eq(DRM_IOCTL_AMDGPU_CS, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_CS, amdgpu_cs_args));
    cr_assert_eq(DRM_IOCTL_AMDGPU_INFO, AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_INFO, amdgpu_info_args));
    cr_assert_eq(DRM_IOCTL_AMDGPU_GEM_VA, AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_GEM_VA, amdgpu_gem_va_args));
    cr_assert_eq(DRM_IOCTL_AMDGPU_WAIT_CS, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_WAIT_CS, amdgpu_wait_cs_args));
    cr_assert_eq(DRM_IOCTL_AMDGPU_CTX, AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_CTX, amdgpu_ctx_args));
    cr_assert_eq(sizeof(struct drm_amdgpu_cs_chunk_ib), sizeof(amdgpu_cs_chunk_ib));
    cr_assert_eq(AMDGPU_INFO_DEV_INFO, 0x16);
    cr_assert_eq(AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_DOMAIN_VRAM);
}
#endif

Test(trace, json_lines_with_pid_tid_and_symbolic_flags)
{
    char out[T_TMP_PATH];
    tracer *t = api_tracer(out, true);
    tracer_open(t, "/dev/kfd", O_RDWR | O_CLOEXEC, 41, 0);
    tracer_open(t, "/dev/nvidiactl", O_RDWR, -EACCES, 0);
    int mapped;
    tracer_mmap(t, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, 41, 0, &mapped, 0, 0);
    char *text = api_done(t, out);
    char want[96];
    snprintf(want, sizeof want, "\"pid\": %d, \"tid\": %d, \"event\": \"open\"", getpid(), gettid());
    cr_assert(strstr(text, want), "%s", text);
    cr_assert(strstr(text, "\"flags\": \"O_RDWR|O_CLOEXEC\""), "%s", text);
    cr_assert(strstr(text, "\"error\": \"EACCES\", \"errno\": 13"), "%s", text);
    cr_assert(strstr(text, "\"prot\": \"PROT_READ|PROT_WRITE\", \"flags\": \"MAP_SHARED|MAP_FIXED\""), "%s", text);
    for (char *l = text; *l; l = strchr(l, '\n') + 1) cr_assert(l[0] == '{', "one object per line: %s", l);
    free(text);
}

/* ** hcq trace on programs that are not hcq's */
/* compiles src into dir/name; false when the compiler refuses (static libc missing) */
static bool build_prog(const char *dir, const char *name, const char *src, const char *flags)
{
    char path[512], cmd[1024];
    snprintf(path, sizeof path, "%s/%s.c", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(src, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O1 -pthread -I. -Iinclude %s -o %s/%s %s 2>/dev/null", flags, dir, name,
             path);
    return system(cmd) == 0;
}

static void rm_rf(const char *dir) { t_sh("rm -rf %s", dir); }

Test(trace, hcq_trace_preloads_into_any_program, .timeout = 60)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-prog");
    cr_assert(build_prog(dir, "p",
                         "#include <fcntl.h>\n#include <sys/ioctl.h>\n#include <unistd.h>\n"
                         "int main(void) { int fd = open(\"/dev/null\", O_RDWR); unsigned a[4] = {1, 2, 3, 4};\n"
                         "  ioctl(fd, _IOWR('F', 0x2a, a), a); return close(fd); }\n",
                         ""));
    cr_assert_eq(t_sh("HCQ_TRACE_PATHS=/dev/null %s trace --json -o %s/trace.json -- %s/p", hcq, dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    char *text = slurp(path);
    cr_assert(strstr(text, "{\"t\": ") && strstr(text, "\"event\": \"open\", \"path\": \"/dev/null\""), "%s", text);
    cr_assert(strstr(text, "\"event\": \"ioctl\"") && strstr(text, "\"nr\": \"0x2a\""), "%s", text);
    cr_assert(strstr(text, "\"in\": \"01000000020000000300000004000000\""), "%s", text);
    cr_assert(strstr(text, "\"event\": \"close\"") && strstr(text, "\"event\": \"exec\""), "%s", text);
    free(text);
    /* children that exec are followed and labelled with their parent and
     * command line (an argument's escape byte never reaches the reader) */
    cr_assert_eq(t_sh("HCQ_TRACE_PATHS=/dev/null %s trace -o %s/t.txt -- sh -c '%s/p; %s/p \"$(printf \"a\\033b\")\"'",
                        hcq, dir, dir, dir), 0);
    snprintf(path, sizeof path, "%s/t.txt", dir);
    text = slurp(path);
    char want[600];
    snprintf(want, sizeof want, " argv=%s/p\n", dir);
    cr_assert(strstr(text, want), "the first child's exec label: %s", text);
    snprintf(want, sizeof want, " argv=%s/p a?b\n", dir);
    cr_assert(strstr(text, want), "the second child's, its escape byte replaced: %s", text);
    cr_assert_eq(count(text, "nr=0x2a"), 2, "both children's ioctls: %s", text);
    cr_assert_null(strchr(text, '\033'), "no raw escape byte");
    free(text);
    cr_assert_neq(t_sh("%s trace -- /nonexistent/program 2>/dev/null", hcq), 0, "a program that cannot run");
    cr_assert_eq(t_sh("%s trace -- sh -c 'exit 7' 2>/dev/null", hcq), 7, "the program's exit status");
    rm_rf(dir);
}

/* threads doing ioctls while the main thread forks children that trace
 * too: before pthread_atfork, a few children in a hundred deadlocked on a
 * lock a thread held at the fork */
static const char *fork_prog =
    "#include <fcntl.h>\n#include <pthread.h>\n#include <stdio.h>\n#include <sys/ioctl.h>\n#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "static volatile int stop;\n"
    "static void *spin(void *a) { (void)a; int fd = open(\"/dev/null\", O_RDWR); unsigned v[2] = {0};\n"
    "  while (!stop) ioctl(fd, _IOWR('F', 0x30, v), v); close(fd); return NULL; }\n"
    "int main(void) { pthread_t t[3]; for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, spin, NULL);\n"
    "  for (int i = 0; i < 40; i++) { pid_t p = fork(); if (p == 0) { int fd = open(\"/dev/null\", O_RDWR);\n"
    "      unsigned v[2] = {1, 2}; ioctl(fd, _IOWR('F', 0x31, v), v); close(fd); _exit(0); }\n"
    "    int st; waitpid(p, &st, 0); if (!WIFEXITED(st) || WEXITSTATUS(st)) return 1; }\n"
    "  stop = 1; for (int i = 0; i < 3; i++) pthread_join(t[i], NULL); return 0; }\n";

Test(trace, children_are_followed_and_labelled_and_forks_never_deadlock, .timeout = 120)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-fork");
    cr_assert(build_prog(dir, "forker", fork_prog, ""));
    int rc = t_sh("HCQ_TRACE_PATHS=/dev/null timeout 90 %s trace -o %s/t.txt -- %s/forker", hcq, dir, dir);
    cr_assert_eq(rc, 0, "exit %d (124: a child deadlocked)", rc);
    char path[512];
    snprintf(path, sizeof path, "%s/t.txt", dir);
    char *text = slurp(path);
    cr_assert_eq(count(text, " fork   parent="), 40, "each child labelled once");
    cr_assert_geq(count(text, "nr=0x31"), 40, "every child's ioctl traced");
    /* every line: [time] pid/tid event */
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n');
        int pid, tid;
        double t;
        cr_assert(sscanf(l, "[%lf] %d/%d", &t, &pid, &tid) == 3, "a line without pid/tid: %.120s", l);
        l = nl ? nl + 1 : l + strlen(l);
    }
    free(text);
    rm_rf(dir);
}

static const char *bad_prog =
    "#include <fcntl.h>\n#include <stdio.h>\n#include <sys/ioctl.h>\n#include <unistd.h>\n"
    "int main(void) { int fd = open(\"/dev/null\", O_RDWR);\n"
    "  int a = ioctl(fd, _IOWR('F', 0x2a, char[16]), (void *)0x10);\n"
    "  int b = ioctl(fd, _IOWR('F', 0x2b, char[64]), (void *)(long)-4096);\n"
    "  int c = ioctl(fd, 0xc020462b /* an NV escape's number */, (void *)0x1000);\n"
    "  printf(\"survived %d %d %d\\n\", a, b, c); return close(fd); }\n";

Test(trace, a_bad_ioctl_pointer_never_crashes_the_program, .timeout = 60)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-bad");
    cr_assert(build_prog(dir, "bad", bad_prog, ""));
    cr_assert_eq(t_sh("HCQ_TRACE_PATHS=/dev/null %s trace -o %s/t.txt -- %s/bad > %s/out.txt", hcq, dir, dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = slurp(path);
    cr_assert(strstr(out, "survived -1 -1 -1"), "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/t.txt", dir);
    char *text = slurp(path);
    cr_assert_eq(count(text, "arg_is=unreadable"), 3, "%s", text);
    cr_assert(strstr(text, "arg=0x10 "), "%s", text);
    free(text);
    rm_rf(dir);
}

static const char *probe_prog =
    "#include <fcntl.h>\n#include <stdio.h>\n#include <sys/ioctl.h>\n#include <sys/mman.h>\n#include <sys/stat.h>\n"
    "#include <sys/syscall.h>\n#include <unistd.h>\n"
    "int main(void) { struct stat st; dup2(open(\"/dev/null\", O_WRONLY), 2); /* its own stderr gone */\n"
    "  stat(\"/dev/null\", &st); access(\"/dev/null\", R_OK | W_OK); open(\"/dev/null/nothing\", O_RDONLY);\n"
    "  int fd = open(\"/dev/null\", O_RDWR | O_CLOEXEC); unsigned v[2] = {0};\n"
    "  syscall(SYS_ioctl, fd, _IOWR('F', 0x33, v), v); /* through syscall(): traced all the same */\n"
    "  mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);\n"
    "  close(fd);\n"
#ifdef __x86_64__
    "  long raw; __asm__ volatile(\"syscall\" : \"=a\"(raw) : \"0\"(257L), \"D\"(-100L), \"S\"(\"/dev/null\"), \"d\"(2L)\n"
    "                             : \"rcx\", \"r11\", \"memory\"); /* openat with no libc at all */\n"
    "  ioctl((int)raw, _IOWR('F', 0x34, v), v);\n"
#endif
    "  return 0; }\n";

Test(trace, probes_flags_errnos_syscall_and_unseen_descriptors, .timeout = 60)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-probe");
    cr_assert(build_prog(dir, "probe", probe_prog, ""));
    /* no -o: the trace is on hcq trace's stderr, though the program's own is gone */
    cr_assert_eq(t_sh("HCQ_TRACE_PATHS=/dev/null %s trace -- %s/probe 2> %s/t.txt", hcq, dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/t.txt", dir);
    char *text = slurp(path);
    cr_assert(strstr(text, "stat   path=/dev/null type=char mode=0666 rdev=1:3"), "%s", text);
    cr_assert(strstr(text, "access path=/dev/null mode=R_OK|W_OK result=ok"), "%s", text);
    cr_assert(strstr(text, "path=/dev/null/nothing flags=O_RDONLY error=ENOTDIR"), "%s", text);
    cr_assert(strstr(text, "flags=O_RDWR|O_CLOEXEC"), "%s", text);
    cr_assert(strstr(text, "nr=0x33"), "syscall(SYS_ioctl) is traced: %s", text);
    cr_assert(strstr(text, "prot=PROT_READ|PROT_WRITE flags=MAP_SHARED"), "%s", text);
#ifdef __x86_64__
    cr_assert(strstr(text, "warning") && strstr(text, "opened without going through libc's open"), "%s", text);
#endif
    free(text);
    rm_rf(dir);
}

Test(trace, summary_counts_calls_errors_and_time, .timeout = 60)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-sum");
    cr_assert(build_prog(dir, "p",
                         "#include <fcntl.h>\n#include <sys/ioctl.h>\n#include <unistd.h>\n"
                         "int main(void) { int fd = open(\"/dev/null\", O_RDWR); unsigned a[2] = {0};\n"
                         "  for (int i = 0; i < 5; i++) ioctl(fd, _IOWR('F', 0x2a, a), a);\n"
                         "  if (fork() == 0) { ioctl(fd, _IOWR('F', 0x2a, a), a); _exit(0); }\n"
                         "  return close(fd); }\n",
                         ""));
    cr_assert_eq(t_sh("HCQ_TRACE_PATHS=/dev/null %s trace -c -o %s/s.txt -- %s/p", hcq, dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/s.txt", dir);
    char *text = slurp(path);
    cr_assert(strstr(text, "% time     seconds  usecs/call     calls    errors call"), "%s", text);
    cr_assert_null(strstr(text, "ioctl  file="), "-c prints only the summary: %s", text);
    char *row = strstr(text, "ioctl 0xc008462a");
    cr_assert_not_null(row, "%s", text);
    while (row > text && row[-1] != '\n') row--;
    unsigned long long calls = 0, errors = 0;
    double pct, secs, us;
    cr_assert_eq(sscanf(row, "%lf %lf %lf %llu %llu", &pct, &secs, &us, &calls, &errors), 5, "%s", row);
    cr_assert_eq(calls, 6, "5 calls, and the child's: %s", text);
    cr_assert_eq(errors, 6, "/dev/null refuses each: %s", text);
    cr_assert(strstr(text, " total"), "%s", text);
    free(text);
    rm_rf(dir);
}

/* 200 threads each opening, ioctl'ing and closing /dev/nvidiactl 20 times on
 * the preloaded mock: every event is in the trace. A close that forgot its
 * descriptor after another thread's open had reused the number lost that
 * open's ioctl and close (a dozen of each per run). close_range's closes of
 * traced files are events too. */
static const char *threads_prog =
    "#define _GNU_SOURCE\n#include <fcntl.h>\n#include <pthread.h>\n#include <stdio.h>\n#include <sys/ioctl.h>\n"
    "#include <unistd.h>\n#include \"drivers/nv/nv_abi.h\"\n"
    "static void *run(void *a) { (void)a; static __thread nv_card_info cards[NV_CARD_INFO_MAX];\n"
    "  for (int i = 0; i < 20; i++) { int fd = open(\"/dev/nvidiactl\", O_RDWR); if (fd < 0) return (void *)1;\n"
    "    ioctl(fd, NV_IOCTL_CARD_INFO, cards); close(fd); } return NULL; }\n"
    "int main(void) { pthread_t t[200]; for (int i = 0; i < 200; i++) pthread_create(&t[i], NULL, run, NULL);\n"
    "  int bad = 0; for (int i = 0; i < 200; i++) { void *r; pthread_join(t[i], &r); bad += r != NULL; }\n"
    "  for (int i = 0; i < 3; i++) open(\"/dev/nvidiactl\", O_RDWR);\n"
    "  close_range(3, ~0u, 0); return bad; }\n";

Test(trace, two_hundred_threads_lose_no_event, .timeout = 120)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-threads");
    cr_assert(build_prog(dir, "threads", threads_prog, ""));
    for (int run = 0; run < 3; run++) {
        int rc = t_sh("timeout 100 %s trace --mock -o %s/t.txt -- %s/threads", hcq, dir, dir);
        cr_assert_eq(rc, 0, "exit %d", rc);
        char path[512];
        snprintf(path, sizeof path, "%s/t.txt", dir);
        char *text = slurp(path);
        cr_assert_eq(count(text, " open   path=/dev/nvidiactl"), 4003, "run %d: opens", run);
        cr_assert_eq(count(text, " ioctl  file=/dev/nvidiactl"), 4000, "run %d: ioctls", run);
        cr_assert_eq(count(text, " close  file=/dev/nvidiactl"), 4003, "run %d: closes (3 by close_range)", run);
        free(text);
    }
    rm_rf(dir);
}

/* A trace output that fails (a full disk; here /dev/full and a file size
 * limit) is said on stderr, naming the file and the error, and the run
 * exits non-zero though the program succeeded. */
Test(trace, an_output_that_fails_is_said_and_fails_the_run, .timeout = 120)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-full");
    cr_assert(build_prog(dir, "threads", threads_prog, ""));
    char path[512];
    struct stat st;
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        int rc = t_sh("%s trace --mock -o /dev/full -- %s/threads 2> %s/err.txt", hcq, dir, dir);
        cr_assert_neq(rc, 0, "-o /dev/full exited 0");
        snprintf(path, sizeof path, "%s/err.txt", dir);
        char *err = slurp(path);
        cr_assert(strstr(err, "writing the trace to /dev/full failed: No space left on device"), "%s", err);
        free(err);
    }
    int rc = t_sh("(trap '' XFSZ; ulimit -f 16; %s trace --mock -o %s/t.txt -- %s/threads) 2> %s/err.txt", hcq, dir,
                    dir, dir);
    cr_assert_neq(rc, 0, "a trace cut short by the file size limit exited 0");
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *err = slurp(path);
    cr_assert(strstr(err, "/t.txt failed: File too large"), "%s", err);
    free(err);
    rm_rf(dir);
}

Test(trace, a_static_program_is_said_to_be_untraceable, .timeout = 60)
{
    const char *hcq = t_hcq_bin();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-trace-static");
    if (!build_prog(dir, "s", "int main(void) { return 0; }\n", "-static")) {
        rm_rf(dir);
        cr_skip_test("no static libc here (libc6-dev's libc.a) to build a static program");
    }
    cr_assert_eq(t_sh("%s trace -- %s/s 2> %s/err.txt", hcq, dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *text = slurp(path);
    cr_assert(strstr(text, "statically linked") && strstr(text, "nothing it does will be traced"), "%s", text);
    free(text);
    rm_rf(dir);
}

/* ** the NV and AMD decoders on their mocks (HCQ_TRACE=1's wrapper): an
 * open, a buffer and a close print each call by name, with classes,
 * controls and status by name */
static char *trace_device(const char *dev_name, char *out)
{
    int ofd = t_tmpfile(out, T_TMP_PATH, "hcq-trace-dev");
    cr_assert_geq(ofd, 0);
    close(ofd);
    setenv("HCQ_TRACE_FILE", out, 1);
    sys_set(trace_sys(mock_sys()));
    cr_assert_eq(mock_configure(""), HCQ_OK, "%s", hcq_error_message());
    hcq_device *d = hcq_device_open(dev_name);
    cr_assert_not_null(d, "%s: %s", dev_name, hcq_error_message());
    hcq_buffer *b = hcq_buffer_alloc(d, 1 << 20, HCQ_MEM_DEVICE);
    cr_assert_not_null(b, "%s", hcq_error_message());
    hcq_buffer_free(b);
    cr_assert_eq(hcq_device_close(d), HCQ_OK, "%s", hcq_error_message());
    char *text = slurp(out);
    unlink(out);
    return text;
}

Test(trace, nv_escapes_and_uvm_commands_by_name)
{
    char out[T_TMP_PATH];
    char *text = trace_device("NV:0", out);
    cr_assert(strstr(text, "file=/dev/nvidiactl") && strstr(text, "cmd=NV_ESC_RM_ALLOC"), "%s", text);
    cr_assert(strstr(text, "hClass=NV01_ROOT_CLIENT"), "%s", text);
    cr_assert(strstr(text, "hClass=HOPPER_COMPUTE_A"), "the mock is an H100: %s", text);
    cr_assert(strstr(text, "control=NV2080_CTRL_CMD_GR_GET_INFO"), "%s", text);
    cr_assert(strstr(text, "control=NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN"), "%s", text);
    cr_assert(strstr(text, "token=0x"), "controls' results: %s", text);
    cr_assert(strstr(text, "status=NV_OK"), "%s", text);
    cr_assert(strstr(text, "gpFifoOffset=0x") && strstr(text, "gpFifoEntries="), "channel parameters: %s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_MAP_MEMORY") && strstr(text, "pLinearAddress="), "%s", text);
    cr_assert(strstr(text, "file=/dev/nvidia-uvm") && strstr(text, "cmd=UVM_REGISTER_GPU"), "%s", text);
    cr_assert(strstr(text, "cmd=UVM_MAP_EXTERNAL_ALLOCATION"), "%s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_FREE"), "%s", text);
    cr_assert(strstr(text, "access path=/dev/nvidiactl"), "probes of device nodes: %s", text);
    cr_assert_null(strstr(text, "request=0x"), "every NV call the backend makes has a name: %s", text);
    free(text);
}

Test(trace, kfd_commands_by_name)
{
    char out[T_TMP_PATH];
    char *text = trace_device("AMD:0", out);
    cr_assert(strstr(text, "file=/dev/kfd") && strstr(text, "cmd=AMDKFD_IOC_GET_VERSION"), "%s", text);
    cr_assert(strstr(text, "cmd=AMDKFD_IOC_CREATE_QUEUE") && strstr(text, "queue_id="), "%s", text);
    cr_assert(strstr(text, "cmd=AMDKFD_IOC_ALLOC_MEMORY_OF_GPU") && strstr(text, "domain=vram"), "%s", text);
    cr_assert_null(strstr(text, "request=0x"), "every kfd call the backend makes has a name: %s", text);
    free(text);
}

/* ** the mock GPU preloaded (libhcqmock.so) into a program that knows
 * nothing of hcq, and stream capture on it */
static void mock_lib(char *out, size_t size)
{
    const char *hcq = t_hcq_bin();
    snprintf(out, size, "%s", hcq);
    char *slash = strrchr(out, '/');
    snprintf(slash ? slash + 1 : out, size - (size_t)(slash ? slash + 1 - out : 0), "libhcqmock.so");
    cr_assert_eq(access(out, R_OK), 0, "%s is built beside hcq", out);
}

static const char *foreign_prog =
    "#include <dirent.h>\n#include <fcntl.h>\n#include <stdio.h>\n#include <string.h>\n#include <sys/ioctl.h>\n"
    "#include <sys/stat.h>\n#include <unistd.h>\n#include \"drivers/nv/nv_abi.h\"\n"
    "int main(void) {\n"
    "  struct stat st; if (stat(\"/dev/nvidiactl\", &st) || !S_ISCHR(st.st_mode)) return 1;\n"
    "  int ctl = open(\"/dev/nvidiactl\", O_RDWR); if (ctl < 0) return 2;\n"
    "  static nv_card_info cards[NV_CARD_INFO_MAX];\n"
    "  if (ioctl(ctl, NV_IOCTL_CARD_INFO, cards) || !cards[0].valid) return 3;\n"
    "  nv_rm_alloc a = {.hClass = NV01_ROOT_CLIENT};\n"
    "  if (ioctl(ctl, NV_IOCTL_RM_ALLOC, &a) || a.status || !a.hObjectNew) return 4;\n"
    "  int d = dup(ctl); nv_rm_free f = {.hRoot = a.hObjectNew, .hObjectOld = a.hObjectNew};\n"
    "  if (ioctl(d, NV_IOCTL_RM_FREE, &f) || f.status) return 5; /* a dup is the same file */\n"
    "  close(d); close(ctl);\n"
    "  DIR *dir = opendir(\"/sys/devices/virtual/kfd/kfd/topology/nodes\"); if (!dir) return 6;\n"
    "  int nodes = 0; for (struct dirent *e; (e = readdir(dir));) nodes += e->d_name[0] != '.'; closedir(dir);\n"
    "  FILE *p = fopen(\"/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties\", \"r\"); if (!p) return 7;\n"
    "  char line[128]; unsigned gfx = 0;\n"
    "  while (fgets(line, sizeof line, p)) sscanf(line, \"gfx_target_version %u\", &gfx); fclose(p);\n"
    "  printf(\"gpu %04x, %d kfd nodes, gfx %u, %s\\n\", cards[0].pci_device_id, nodes, gfx,\n"
    "         access(\"/dev/kfd\", R_OK | W_OK) == 0 ? \"kfd\" : \"no kfd\");\n"
    "  return 0; }\n";

Test(trace, the_preloaded_mock_emulates_the_drivers_for_any_program, .timeout = 60)
{
    char lib[512], dir[T_TMP_PATH];
    mock_lib(lib, sizeof lib);
    t_tmpdir(dir, sizeof dir, "hcq-mockpre");
    cr_assert(build_prog(dir, "foreign", foreign_prog, ""));
    int rc = t_sh("LD_PRELOAD=%s %s/foreign > %s/out.txt", lib, dir, dir);
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = slurp(path);
    cr_assert_eq(rc, 0, "step %d failed: %s", rc, out);
    cr_assert(strstr(out, "gpu 2330, 2 kfd nodes, gfx 110000, kfd"), "an H100 and a gfx1100: %s", out);
    free(out);
    /* a typo in its configuration stops the program, as in hcq's own mock */
    cr_assert_eq(t_sh("HCQ_MOCK_CONFIG=nv=B200 LD_PRELOAD=%s %s/foreign >/dev/null 2>&1", lib, dir), 2);
    /* hcq on it runs real binaries on the machine-code executors, which
     * need no host twin (the preloaded mock's own copy of hcq cannot see
     * the twins this process makes), or, where a tool is missing, kernel
     * IR, saying why */
    cr_assert_eq(t_sh("LD_PRELOAD=%s %s info > %s/info.txt 2>&1", lib, t_hcq_bin(), dir), 0);
    snprintf(path, sizeof path, "%s/info.txt", dir);
    out = slurp(path);
    const char *nv = strstr(out, "SASS executor for sm_90");
    if (!nv) nv = strstr(out, "kernel IR on the interpreter (mock-sm_90): ");
    cr_assert(nv, "%s", out);
    cr_assert(strstr(nv, "gfx11 ISA executor for gfx1100") || strstr(nv, "kernel IR on the interpreter (mock-gfx1100): "),
              "%s", out);
    free(out);
    rm_rf(dir);
}

/* sums the dwords= of lines of one event kind (and counts them) */
static uint64_t stream_dwords(const char *text, const char *event, const char *with, int *lines)
{
    uint64_t sum = 0;
    *lines = 0;
    char key[32];
    snprintf(key, sizeof key, " %s ", event);
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
        const char *k = strstr(l, key), *w = with ? strstr(l, with) : l, *d = strstr(l, " dwords=");
        if (k && k < end && k - l < 40 && w && w < end && d && d < end) {
            (*lines)++;
            sum += strtoull(d + 8, NULL, 10);
        }
        l = nl ? nl + 1 : end;
    }
    return sum;
}

/* what the mock executed, from its dumps: segments and dwords per engine */
static void mock_ran(const char *dir, const char *engine, const char *format, int *segments, uint64_t *dwords)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s", dir);
    FILE *ls = popen(cmd, "r");
    char name[256];
    *segments = 0;
    *dwords = 0;
    while (fgets(name, sizeof name, ls)) {
        name[strcspn(name, "\n")] = 0;
        if (!strstr(name, engine)) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        drv_dump_header h;
        if (f && fread(&h, sizeof h, 1, f) == 1 && !strncmp(h.format, format, sizeof h.format)) {
            (*segments)++;
            *dwords += h.ndw;
        }
        if (f) fclose(f);
    }
    pclose(ls);
}

static char *capture(const char *dir, const char *config)
{
    const char *hcq = t_hcq_bin();
    /* the demo's launches, copies and graphs, without its training (the
     * same packets again for seconds of CPU) */
    int rc = t_sh("HCQ_MOCK_CONFIG=%s HCQ_MOCK_DUMP=%s/dump timeout 150 %s trace --streams --mock -o %s/t.txt -- %s demo "
                  "--no-train > %s/demo.txt 2>&1", config, dir, hcq, dir, hcq, dir);
    char path[512];
    snprintf(path, sizeof path, "%s/demo.txt", dir);
    char *demo = slurp(path);
    cr_assert_eq(rc, 0, "%s", demo);
    cr_assert(strstr(demo, "[mock GPU: emulated") && strstr(demo, "all results match"), "%s", demo);
    cr_assert(!strstr(demo, "training:"), "--no-train trains nothing: %s", demo);
    free(demo);
    snprintf(path, sizeof path, "%s/t.txt", dir);
    return slurp(path);
}

Test(trace, streams_of_a_program_on_the_preloaded_mock_are_what_the_mock_ran, .timeout = 200)
{
    char dir[T_TMP_PATH], dump[600];
    t_tmpdir(dir, sizeof dir, "hcq-streams");
    snprintf(dump, sizeof dump, "%s/dump", dir);
    char *text = capture(dir, "nv=H100,amd=gfx1100");
    int segs, lines, qmds;
    uint64_t dws;
    /* NV: every GPFIFO entry, decoded, and the QMDs it launches (the mock
     * dumps both per engine) */
    mock_ran(dump, "nv0.compute", "nv-gpfifo", &segs, &dws);
    cr_assert_gt(segs, 10);
    uint64_t seen = stream_dwords(text, "gpfifo", "engine=HOPPER_COMPUTE_A", &lines);
    cr_assert_eq(seen, dws, "pushbuffer dwords: traced %llu in %d entries, the mock ran %llu in %d (%s)",
                 (unsigned long long)seen, lines, (unsigned long long)dws, segs, dir);
    cr_assert_eq(lines, segs, "one gpfifo event per entry the compute engine ran");
    mock_ran(dump, "nv0.compute", "nv-qmd", &qmds, &dws);
    cr_assert_eq(count(text, " qmd    channel="), qmds, "a qmd event per launch");
    mock_ran(dump, "nv0.copy", "nv-gpfifo", &segs, &dws);
    cr_assert_eq(stream_dwords(text, "gpfifo", "engine=HOPPER_DMA_COPY_A", &lines), dws);
    cr_assert(strstr(text, "SEND_PCAS_A") && strstr(text, "QMD V04 at") && strstr(text, "LAUNCH_DMA"), "decoded");
    /* AMD: the PM4 and SDMA rings behind every write-pointer update */
    mock_ran(dump, "amd0.compute", "amd-pm4", &segs, &dws);
    cr_assert_gt(segs, 5);
    cr_assert_eq(stream_dwords(text, "pm4", NULL, &lines), dws, "PM4 dwords the CP ran");
    mock_ran(dump, "amd0.sdma", "amd-sdma", &segs, &dws);
    cr_assert_eq(stream_dwords(text, "sdma", NULL, &lines), dws, "SDMA dwords");
    cr_assert(strstr(text, "DISPATCH_DIRECT") && strstr(text, "COPY_LINEAR"), "decoded");
    /* interleaved with the ioctls, in one trace */
    char *first_stream = strstr(text, " gpfifo "), *later_ioctl = first_stream ? strstr(first_stream, " ioctl ") : NULL;
    cr_assert(first_stream && later_ioctl, "ioctls after the first submission");
    free(text);
    rm_rf(dir);
}

Test(trace, streams_of_an_aql_queue_follow_its_indirect_buffers, .timeout = 200)
{
    char dir[T_TMP_PATH], dump[600];
    t_tmpdir(dir, sizeof dir, "hcq-streams-aql");
    snprintf(dump, sizeof dump, "%s/dump", dir);
    char *text = capture(dir, "nv=H100x0,amd=gfx942");
    int segs, lines;
    uint64_t dws;
    mock_ran(dump, "amd0.compute", "amd-pm4", &segs, &dws);
    cr_assert_eq(stream_dwords(text, "ib", NULL, &lines), dws, "the PM4 the AQL packets point at");
    cr_assert_eq(lines, segs);
    cr_assert(strstr(text, "VENDOR") && strstr(text, "AMD PM4_IB: INDIRECT_BUFFER"), "AQL decoded");
    free(text);
    rm_rf(dir);
}
