#include "drivers/cpu/cpu.h"

#include "base/base.h"
#include "drivers/sys.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* A compiled kernel's bad memory access, turned into a device fault.
 *
 * A "cpu" kernel is native code: a store through a wild pointer is a
 * SIGSEGV (or SIGBUS) of the host program, where every other device (the
 * interpreter, the mock GPUs' MMUs, a real GPU) reports a fault and carries
 * on. So the kernel workers run each work-group with a per-thread marker
 * armed (a jump buffer on the worker's stack, reached through a
 * thread-local pointer), and one process-wide handler for SIGSEGV and
 * SIGBUS acts only when the faulting thread has its marker armed and the
 * signal is a fault the CPU raised (si_code > 0, not a kill()): it records
 * the address and the instruction and jumps back to the worker, which
 * reports them as the kernel's fault. Every other signal goes to the handler
 * installed before ours (the program's, ASan's, libFuzzer's) or, where that
 * was the default, is raised again with the default action, so the
 * program's own crashes still end it with its core dump.
 *
 * The handler runs on an alternate signal stack (SA_ONSTACK): each worker
 * gets one the first time it runs a kernel (sigaltstack; freed when the
 * thread exits), unless the thread already has one (ASan gives its threads
 * their own), so a kernel that overflowed its stack is a fault too.
 *
 * Jumping out of a kernel abandons its frames. That is safe because kernel
 * code takes no locks and calls nothing that does (the C renderer emits
 * arithmetic, loads, stores and libm calls), and the worker holds none
 * while it runs: the pool's lock is released before a chunk runs
 * (drivers/pool.c), the engine thread holds no lock while it executes a
 * packet (cpu_engine.c), and the allocation registry's lock is taken only
 * around lookups, never around a kernel call. A handler installed later than
 * ours (sigaction by the program after the CPU device opened) takes
 * precedence; kernel faults then reach it instead. */

/* x86-64 trap numbers and page-fault error-code bits, as the kernel puts
 * them in the signal frame's REG_TRAPNO and REG_ERR: Linux
 * arch/x86/include/asm/trapnr.h (X86_TRAP_GP, X86_TRAP_PF) and
 * arch/x86/include/asm/trap_pf.h (X86_PF_WRITE, X86_PF_INSTR). */
enum {
    X86_TRAP_GP_ = 13, /* general protection: a non-canonical address; the kernel reports no address */
    X86_TRAP_PF_ = 14, /* page fault: REG_ERR holds the error code */
    X86_PF_WRITE_ = 1 << 1,
    X86_PF_INSTR_ = 1 << 4,
};

/* what the handler records, read by the worker after the jump; volatile:
 * written in the handler, read after siglongjmp in the frame that called
 * sigsetjmp */
typedef struct fault_frame {
    sigjmp_buf jb;
    volatile sig_atomic_t armed; /* a kernel runs on this thread now */
    volatile int sig, code;
    volatile uint64_t addr, pc, trapno, err;
    volatile int have_regs;
    sigset_t mask; /* the thread's mask when it faulted, restored after the jump */
} fault_frame;

/* initial-exec: the handler reads it on any thread, and a TLS access of the
 * general model in a library loaded with dlopen may allocate the thread's
 * block on first use, which a signal handler must not do */
static _Thread_local fault_frame *volatile cur_frame __attribute__((tls_model("initial-exec")));

static struct sigaction old_segv, old_bus;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;
static pthread_key_t stack_key;

static size_t sigstack_bytes(void)
{
    /* our handler needs little; a chained one (a crash reporter, ASan on a
     * thread we gave the stack) may need much more */
    long min = sysconf(_SC_SIGSTKSZ);
    size_t n = 256u << 10;
    return min > 0 && (size_t)min * 4 > n ? (size_t)min * 4 : n;
}

/* The default action for sig: the handler reset to SIG_DFL, then the
 * signal again. A fault the CPU raised recurs when the handler returns to
 * the instruction (so the core dump shows where); a sent one is raised
 * again here (blocked inside the handler, it arrives on the return). */
static void reset_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

static void default_action(int sig, const siginfo_t *si)
{
    reset_default(sig);
    if (si->si_code <= 0) raise(sig);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
    int saved = errno;
    if (old->sa_flags & SA_SIGINFO) {
        void (*fn)(int, siginfo_t *, void *) = old->sa_sigaction;
        if (old->sa_flags & SA_RESETHAND) reset_default(sig);
        if (fn) fn(sig, si, uc);
        else default_action(sig, si);
    } else if (old->sa_handler == SIG_IGN) {
        /* the kernel does not let a fault be ignored: it kills the
         * process; a sent signal is ignored as asked */
        if (si->si_code > 0) default_action(sig, si);
    } else if (old->sa_handler == SIG_DFL) {
        default_action(sig, si);
    } else {
        void (*fn)(int) = old->sa_handler;
        if (old->sa_flags & SA_RESETHAND) reset_default(sig);
        fn(sig);
    }
    errno = saved;
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    fault_frame *f = cur_frame;
    if (f && f->armed && si->si_code > 0) {
        f->armed = 0;
        f->sig = sig;
        f->code = si->si_code;
        f->addr = (uint64_t)(uintptr_t)si->si_addr;
        const ucontext_t *uc = ucv;
        f->mask = uc->uc_sigmask;
#if defined(__x86_64__)
        f->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        f->trapno = (uint64_t)uc->uc_mcontext.gregs[REG_TRAPNO];
        f->err = (uint64_t)uc->uc_mcontext.gregs[REG_ERR];
        f->have_regs = 1;
#elif defined(__aarch64__)
        f->pc = (uint64_t)uc->uc_mcontext.pc;
#endif
        siglongjmp(f->jb, 1);
    }
    chain(sig, si, ucv);
}

static void stack_free(void *p)
{
    /* runs on the exiting thread: its alternate stack is still ours */
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == p) {
        stack_t off;
        memset(&off, 0, sizeof off);
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, NULL);
    }
    sys_sigstack_unmap(p, sigstack_bytes());
}

static void install(void)
{
    if ((install_errno = pthread_key_create(&stack_key, stack_free))) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old_segv) < 0 || sigaction(SIGBUS, &sa, &old_bus) < 0) install_errno = errno;
}

hcq_status cpu_fault_install(void)
{
    pthread_once(&install_once, install);
    if (install_errno)
        return base_err(HCQ_EIO, "CPU: cannot install the handler that turns a kernel's bad memory access into a "
                        "device fault (%s)", strerror(install_errno));
    return HCQ_OK;
}

/* This thread's alternate signal stack: its own where it has one, else
 * ours, made once per thread and freed when it exits. */
static _Thread_local bool thread_ready;

static hcq_status thread_prepare(void)
{
    if (thread_ready) return HCQ_OK;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) && cur.ss_size >= (size_t)MINSIGSTKSZ) {
        thread_ready = true;
        return HCQ_OK;
    }
    int err = 0;
    size_t n = sigstack_bytes();
    void *p = sys_sigstack_map(n, &err);
    if (!p)
        return base_err(HCQ_ENOMEM, "CPU: cannot map a %zu-byte signal stack for a kernel worker (%s)", n,
                        strerror(err));
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = p;
    ss.ss_size = n;
    if (sigaltstack(&ss, NULL) < 0 || pthread_setspecific(stack_key, p)) {
        int e = errno;
        stack_t off;
        memset(&off, 0, sizeof off);
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, NULL);
        sys_sigstack_unmap(p, n);
        return base_err(HCQ_EIO, "CPU: cannot give a kernel worker its signal stack (%s)", strerror(e));
    }
    thread_ready = true;
    return HCQ_OK;
}

hcq_status cpu_fault_run(hcq_cpu_entry_fn entry, const uint8_t *kernargs, const hcq_cpu_dims *dims, uint64_t begin,
                         uint64_t end, const atomic_int *cancel, cpu_kfault *out)
{
    hcq_status s = thread_prepare();
    if (s) return s;
    fault_frame f;
    f.armed = 0;
    f.have_regs = 0;
    f.pc = f.trapno = f.err = 0;
    fault_frame *prev = cur_frame;
    volatile uint64_t g = begin;
    cur_frame = &f;
    atomic_signal_fence(memory_order_seq_cst);
    /* no mask saved here (that would be a syscall per chunk): the handler
     * keeps the mask the thread had when it faulted */
    if (sigsetjmp(f.jb, 0)) {
        atomic_signal_fence(memory_order_seq_cst);
        cur_frame = prev;
        pthread_sigmask(SIG_SETMASK, &f.mask, NULL);
        memset(out, 0, sizeof *out);
        out->sig = f.sig;
        out->code = f.code;
        out->addr = f.addr;
        out->pc = f.pc;
        out->group = g;
        out->access = CPU_ACCESS_UNKNOWN;
        if (f.have_regs && f.trapno == X86_TRAP_PF_)
            out->access = f.err & X86_PF_INSTR_ ? CPU_ACCESS_EXEC : f.err & X86_PF_WRITE_ ? CPU_ACCESS_WRITE
                                                                                          : CPU_ACCESS_READ;
        out->addr_unknown = f.have_regs && f.trapno == X86_TRAP_GP_;
        return HCQ_EFAULT;
    }
    for (; g < end; g++) {
        if (atomic_load_explicit(cancel, memory_order_relaxed)) {
            s = HCQ_ESTATE;
            break;
        }
        f.armed = 1;
        atomic_signal_fence(memory_order_seq_cst);
        entry(kernargs, dims, g, g + 1);
        atomic_signal_fence(memory_order_seq_cst);
        f.armed = 0;
    }
    cur_frame = prev;
    atomic_signal_fence(memory_order_seq_cst);
    return s;
}

void cpu_fault_describe(const cpu_kfault *f, char *buf, size_t size)
{
    static const char *verbs[] = {
        [CPU_ACCESS_UNKNOWN] = "accessed", [CPU_ACCESS_READ] = "read", [CPU_ACCESS_WRITE] = "wrote",
        [CPU_ACCESS_EXEC] = "jumped to"};
    const char *why = "";
    if (f->sig == SIGSEGV)
        why = f->code == SEGV_MAPERR ? ", which is not mapped"
              : f->code == SEGV_ACCERR ? ", which is mapped without that permission"
                                       : "";
    else if (f->sig == SIGBUS)
        why = f->code == BUS_ADRALN ? ", which is misaligned"
              : f->code == BUS_ADRERR ? ", which has no backing (past the end of a mapped file)"
                                      : ", a hardware memory error";
    if (f->addr_unknown)
        snprintf(buf, size, "%s a non-canonical address (x86-64 reports no address for it; %s)",
                 verbs[f->access], f->sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
    else
        snprintf(buf, size, "%s address 0x%llx%s (%s)", verbs[f->access], (unsigned long long)f->addr, why,
                 f->sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
}
