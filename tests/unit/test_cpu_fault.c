/* The CPU device's fault handler (drivers/cpu/cpu_fault.c) takes only a
 * kernel's faults: a SIGBUS in a kernel is a device fault too, and once the
 * device is open (its handler installed, its workers given signal stacks)
 * a crash of the program outside a kernel still ends it (on the main
 * thread, on a thread of its own, a SIGSEGV it raises itself), and a
 * handler the program installed before goes on getting its crashes. Each
 * case runs in a forked child, which opens the device itself, and a child
 * forked from a process whose kernels ran gets its own kernels' faults,
 * as does a program that blocked SIGSEGV (the device's threads inherit
 * its mask). */
#include "hcqtest.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"

/* A sanitizer's own SEGV handler reports and exits (status 1) where the
 * default action would kill (gcc says __SANITIZE_*__, clang __has_feature) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

TestSuite(cpu_fault, .timeout = 120);

/* the child's exit codes other than a crash's */
enum { SURVIVED = 0, SETUP_FAILED = 3, WRONG_FAULT = 4, HANDLER_RAN = 77, HANDLER_RAN_EARLY = 78 };

/* p[0] = 1 through a raw address.  params: u32 *p */
static hcq_kernel *k_store(void)
{
    hcq_kernel *k = hcq_kernel_create("store");
    hcq_ir_ref p = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_store(k, p, hcq_ir_const_int(k, HCQ_U32, 0), hcq_ir_const_int(k, HCQ_U32, 1));
    return k;
}

static char child_msg[2048];

/* In the child: opens the CPU device (compiled target), runs k_store at
 * addr (and waits) and returns the status with its message on stderr; or
 * exits SETUP_FAILED. */
static void child_exit(int code)
{
    fprintf(stderr, "child: %s\n", child_msg);
    _exit(code);
}

static hcq_status child_launch(uint64_t addr)
{
    unsetenv("HCQ_CPU_TARGET");
    base_env_reload();
    hcq_device *d = hcq_device_open("CPU");
    hcq_kernel *k = k_store();
    hcq_program *p = d ? hcq_program_from_kernel(d, k) : NULL;
    hcq_kernel_destroy(k);
    if (!p) {
        fprintf(stderr, "child: %s\n", hcq_error_message());
        _exit(SETUP_FAILED);
    }
    hcq_arg a[1] = {hcq_arg_addr(HCQ_IMM(addr))};
    hcq_status s = hcq_launch(p, a, 1, hcq_dims_1d(4, 64));
    if (!s) s = hcq_device_synchronize(d);
    snprintf(child_msg, sizeof child_msg, "%s: %s", hcq_status_name(s), s ? hcq_error_message() : "");
    hcq_device_close(d);
    return s;
}

/* In the child: a kernel faults first, so the handler is installed and
 * the workers have their signal stacks, then the next device runs a
 * kernel right. */
static void child_kernel_faults(void)
{
    if (child_launch(0x10) != HCQ_EFAULT) child_exit(WRONG_FAULT);
    void *ok = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ok == MAP_FAILED || child_launch((uint64_t)(uintptr_t)ok) != HCQ_OK || *(uint32_t *)ok != 1)
        child_exit(SETUP_FAILED);
}

/* a store to address 16 (read from a volatile, so the compiler neither
 * warns nor assumes) */
static volatile uintptr_t wild = 16;
static void crash(void) { *(volatile int *)wild = 1; }

/* Before a crash we want: a sanitizer's report of it would read as a
 * failure of the suite (scripts/run-tests.sh fails a suite whose output
 * holds one) */
static void quiet_stderr(void)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 2);
}

static void *crash_thread(void *arg)
{
    (void)arg;
    crash();
    return NULL;
}

static int run_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* no core files from the crashes we want */
        fn();
        _exit(SURVIVED);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return st;
}

static void expect_crash(int st, int sig)
{
    cr_assert(!(WIFEXITED(st) && (WEXITSTATUS(st) == SETUP_FAILED || WEXITSTATUS(st) == WRONG_FAULT)),
              "the child's kernel did not run or did not fault as expected (exit %d)", WEXITSTATUS(st));
    if (WIFSIGNALED(st)) {
        cr_assert_eq(WTERMSIG(st), sig, "killed by signal %d, expected %d", WTERMSIG(st), sig);
        return;
    }
    /* a sanitizer's handler reports the crash and exits non-zero */
    cr_assert(SANITIZED && WIFEXITED(st) && WEXITSTATUS(st) != SURVIVED,
              "the program survived a crash outside a kernel (exit %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void main_thread_crash(void)
{
    child_kernel_faults();
    quiet_stderr();
    crash();
}

Test(cpu_fault, a_crash_on_the_main_thread_outside_a_kernel_still_kills_the_program)
{
    expect_crash(run_child(main_thread_crash), SIGSEGV);
}

static void other_thread_crash(void)
{
    child_kernel_faults();
    quiet_stderr();
    pthread_t t;
    if (pthread_create(&t, NULL, crash_thread, NULL)) _exit(SETUP_FAILED);
    pthread_join(t, NULL);
}

Test(cpu_fault, a_crash_on_a_thread_of_the_program_still_kills_it)
{
    expect_crash(run_child(other_thread_crash), SIGSEGV);
}

static void raised_segv(void)
{
    child_kernel_faults();
    quiet_stderr();
    raise(SIGSEGV); /* sent, not a fault: default action */
}

Test(cpu_fault, a_sigsegv_the_program_raises_still_kills_it)
{
    expect_crash(run_child(raised_segv), SIGSEGV);
}

static volatile sig_atomic_t crash_expected;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (!crash_expected) _exit(HANDLER_RAN_EARLY);
    _exit(sig == SIGSEGV && si->si_addr == (void *)16 ? HANDLER_RAN : WRONG_FAULT);
}

static void own_handler_first(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL)) _exit(SETUP_FAILED);
    child_kernel_faults(); /* a kernel's fault does not reach it */
    crash_expected = 1;
    crash();
}

Test(cpu_fault, a_handler_the_program_installed_before_gets_its_crashes)
{
    int st = run_child(own_handler_first);
    cr_assert(WIFEXITED(st), "the child was killed by signal %d instead of its handler exiting",
              WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    cr_assert_neq(WEXITSTATUS(st), HANDLER_RAN_EARLY, "the program's handler saw the kernel's fault");
    cr_assert_eq(WEXITSTATUS(st), HANDLER_RAN, "exit %d: the program's handler did not get its own crash",
                 WEXITSTATUS(st));
}

/* A mapping of a file past its end: a SIGBUS on access */
static void *past_eof(void)
{
    FILE *f = tmpfile();
    void *p = f ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0) : MAP_FAILED;
    cr_assert(p != MAP_FAILED, "cannot map an empty file");
    return p;
}

static void plain_bus_handler(int sig)
{
    (void)sig;
    _exit(crash_expected ? HANDLER_RAN : HANDLER_RAN_EARLY);
}

static void bus_in_kernel_then_program(void)
{
    void *p = past_eof();
    /* a plain (non-SA_SIGINFO) handler of the program's, installed first */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = plain_bus_handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, NULL)) _exit(SETUP_FAILED);
    if (child_launch((uint64_t)(uintptr_t)p) != HCQ_EFAULT || !strstr(child_msg, "SIGBUS") ||
        !strstr(child_msg, "kernel `store`"))
        child_exit(WRONG_FAULT);
    crash_expected = 1;
    *(volatile uint32_t *)p = 1;
}

Test(cpu_fault, a_sigbus_in_a_kernel_is_a_device_fault_and_the_programs_own_goes_to_its_handler)
{
    int st = run_child(bus_in_kernel_then_program);
    cr_assert(WIFEXITED(st), "the child was killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    cr_assert_neq(WEXITSTATUS(st), WRONG_FAULT, "the kernel's SIGBUS was not a device fault naming it");
    cr_assert_neq(WEXITSTATUS(st), HANDLER_RAN_EARLY, "the program's handler saw the kernel's fault");
    cr_assert_eq(WEXITSTATUS(st), HANDLER_RAN, "exit %d", WEXITSTATUS(st));
}

static void fault_in_child(void)
{
    if (child_launch(0x10) != HCQ_EFAULT) child_exit(WRONG_FAULT);
}

Test(cpu_fault, a_forked_child_gets_its_kernels_faults_as_device_faults)
{
    /* the parent's kernel threads, registered with the handler and alive
     * at the fork, are not in the child, whose threads may reuse their ids */
#ifdef T_UNDER_TSAN
    cr_skip_test("ThreadSanitizer refuses to start threads in the child of a multi-threaded fork");
#endif
    unsetenv("HCQ_CPU_TARGET");
    base_env_reload();
    hcq_device *d = T_NONNULL(hcq_device_open("CPU"));
    hcq_program *p = t_load(d, k_store());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64, HCQ_MEM_DEVICE));
    hcq_arg a[1] = {hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(4096, 64))); /* on every worker */
    T_OK(hcq_device_synchronize(d));
    int st = run_child(fault_in_child);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == SURVIVED, "the child %s %d",
              WIFEXITED(st) ? "exited" : "was killed by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    T_OK(hcq_device_close(d));
}

static void blocked_then_fault(void)
{
    /* the device's threads inherit this mask */
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGSEGV);
    sigaddset(&m, SIGBUS);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    if (child_launch(0x10) != HCQ_EFAULT) child_exit(WRONG_FAULT);
}

Test(cpu_fault, a_program_that_blocks_sigsegv_still_gets_a_device_fault)
{
    int st = run_child(blocked_then_fault);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == SURVIVED, "the child %s %d",
              WIFEXITED(st) ? "exited" : "was killed by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}
