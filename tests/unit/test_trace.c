/* The tracer: through the syscall seam (HCQ_TRACE's wrapper) and through
 * LD_PRELOAD on a program that is not hcq's (hcq trace). /dev/null stands
 * in for a driver file (HCQ_TRACE_PATHS), so unknown requests print as
 * numbers with their raw argument, as they must. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drivers/sys.h"
#include "drivers/trace.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(trace, the_seam_wrapper_decodes_calls_on_driver_files)
{
    char out[] = "/tmp/hcq-trace-XXXXXX";
    int ofd = mkstemp(out);
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
    cr_assert(strstr(text, "open   path=/dev/null"), "%s", text);
    cr_assert(strstr(text, "ioctl  file=/dev/null") && strstr(text, "request=0xc010462b nr=0x2b size=16"), "%s", text);
    cr_assert(strstr(text, "in=41000000_07000000_08000000_00000000"), "raw argument bytes: %s", text);
    cr_assert(strstr(text, "error=Inappropriate ioctl for device"), "%s", text);
    cr_assert(strstr(text, "mmap   file=/dev/null"), "%s", text);
    cr_assert(strstr(text, "close  file=/dev/null"), "%s", text);
    cr_assert_null(strstr(text, "/proc/self/stat"), "only driver files are traced: %s", text);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

Test(trace, hcq_trace_preloads_into_any_program, .timeout = 60)
{
#ifdef SANITIZED
    cr_skip_test("a sanitizer build of libhcqtrace.so cannot load into an uninstrumented program "
                 "(its runtime must come first); the plain build tests this");
#endif
    const char *hcq = getenv("HCQ_TEST_HCQ_BIN");
    if (!hcq) hcq = "build/hcq";
    char dir[] = "/tmp/hcq-trace-prog-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char src[256], prog[256], out[256], cmd[2048];
    snprintf(src, sizeof src, "%s/p.c", dir);
    snprintf(prog, sizeof prog, "%s/p", dir);
    snprintf(out, sizeof out, "%s/trace.json", dir);
    FILE *f = fopen(src, "w");
    fprintf(f, "#include <fcntl.h>\n#include <sys/ioctl.h>\n#include <unistd.h>\n"
               "int main(void) { int fd = open(\"/dev/null\", O_RDWR); unsigned a[4] = {1, 2, 3, 4};\n"
               "  ioctl(fd, _IOWR('F', 0x2a, a), a); return close(fd); }\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -o %s %s", prog, src);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "HCQ_TRACE_PATHS=/dev/null %s trace --json -o %s -- %s", hcq, out, prog);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char *text = slurp(out);
    cr_assert(strstr(text, "{\"t\": ") && strstr(text, "\"event\": \"open\", \"path\": \"/dev/null\""), "%s", text);
    cr_assert(strstr(text, "\"event\": \"ioctl\"") && strstr(text, "\"nr\": \"0x2a\""), "%s", text);
    cr_assert(strstr(text, "\"in\": \"01000000020000000300000004000000\""), "%s", text);
    cr_assert(strstr(text, "\"event\": \"close\""), "%s", text);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s trace -- /nonexistent/program 2>/dev/null", hcq);
    cr_assert_neq(system(cmd), 0, "a program that cannot run is an error");
}

/* The NV and AMD decoders on their mocks: an open, a buffer and a close
 * print each call by name, with classes, controls and status by name. */
#include "drivers/mock/mock.h"
#include <hcq/hcq.h>

static char *trace_device(const char *dev_name, char *out)
{
    int ofd = mkstemp(out);
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
    char out[] = "/tmp/hcq-trace-nv-XXXXXX";
    char *text = trace_device("NV:0", out);
    cr_assert(strstr(text, "file=/dev/nvidiactl") && strstr(text, "cmd=NV_ESC_RM_ALLOC"), "%s", text);
    cr_assert(strstr(text, "hClass=NV01_ROOT_CLIENT"), "%s", text);
    cr_assert(strstr(text, "hClass=HOPPER_COMPUTE_A"), "the mock is an H100: %s", text);
    cr_assert(strstr(text, "control=NV2080_CTRL_CMD_GR_GET_INFO"), "%s", text);
    cr_assert(strstr(text, "control=NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN"), "%s", text);
    cr_assert(strstr(text, "token=0x"), "controls' results: %s", text);
    cr_assert(strstr(text, "status=NV_OK"), "%s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_MAP_MEMORY") && strstr(text, "pLinearAddress="), "%s", text);
    cr_assert(strstr(text, "file=/dev/nvidia-uvm") && strstr(text, "cmd=UVM_REGISTER_GPU"), "%s", text);
    cr_assert(strstr(text, "cmd=UVM_MAP_EXTERNAL_ALLOCATION"), "%s", text);
    cr_assert(strstr(text, "cmd=NV_ESC_RM_FREE"), "%s", text);
    cr_assert_null(strstr(text, "request=0x"), "every NV call the backend makes has a name: %s", text);
}

Test(trace, kfd_commands_by_name)
{
    char out[] = "/tmp/hcq-trace-amd-XXXXXX";
    char *text = trace_device("AMD:0", out);
    cr_assert(strstr(text, "file=/dev/kfd") && strstr(text, "cmd=AMDKFD_IOC_GET_VERSION"), "%s", text);
    cr_assert(strstr(text, "cmd=AMDKFD_IOC_CREATE_QUEUE") && strstr(text, "queue_id="), "%s", text);
    cr_assert(strstr(text, "cmd=AMDKFD_IOC_ALLOC_MEMORY_OF_GPU") && strstr(text, "domain=vram"), "%s", text);
    cr_assert_null(strstr(text, "request=0x"), "every kfd call the backend makes has a name: %s", text);
}
