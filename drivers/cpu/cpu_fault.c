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
 * armed (a jump buffer on the worker's stack, found through the worker's
 * slot in a registry keyed by thread id), and one process-wide handler for
 * SIGSEGV and SIGBUS acts only when the faulting thread has its marker
 * armed and the signal is a fault the CPU raised (si_code > 0, not a
 * kill()): it records
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

/* The threads that run kernels, by thread id. Not a thread-local variable:
 * in a library loaded with dlopen (libhcq.so from Python) those are
 * allocated on a thread's first access, with malloc, which a handler must
 * not call on a thread that faulted anywhere (inside malloc, say), and the
 * initial-exec model that avoids it makes the whole library refuse to
 * dlopen. A slot is claimed the first time a thread runs a kernel and freed
 * when it exits; the handler finds its thread's with gettid and a scan (a
 * fault is rare; the workers' own path never scans). */
#define FAULT_SLOTS 4096
typedef struct fault_slot {
    _Atomic pid_t tid;           /* 0: free */
    fault_frame *_Atomic frame;  /* while the thread is inside cpu_fault_run */
    void *stack;                 /* the alternate stack we gave it, or NULL */
} fault_slot;
static fault_slot slots[FAULT_SLOTS];
static atomic_uint slots_used; /* slots at or above it were never claimed */
static _Thread_local fault_slot *my_slot;

static fault_frame *frame_of(pid_t tid)
{
    unsigned n = atomic_load_explicit(&slots_used, memory_order_relaxed);
    for (unsigned i = 0; i < n && i < FAULT_SLOTS; i++)
        if (atomic_load_explicit(&slots[i].tid, memory_order_relaxed) == tid)
            return atomic_load_explicit(&slots[i].frame, memory_order_relaxed);
    return NULL;
}

static struct sigaction old_segv, old_bus;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;
static pthread_key_t slot_key;

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

/* The mask the previous handler asked for while it runs: its sa_mask on
 * top of what is blocked now, and the signal itself unless SA_NODEFER (the
 * kernel restores the interrupted mask when our handler returns) */
static void old_mask(int sig, const struct sigaction *old)
{
    sigset_t m = old->sa_mask;
    if (!(old->sa_flags & SA_NODEFER)) sigaddset(&m, sig);
    pthread_sigmask(SIG_BLOCK, &m, NULL);
    if (old->sa_flags & SA_NODEFER) {
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    }
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
    int saved = errno;
    bool handler = (old->sa_flags & SA_SIGINFO) ? old->sa_sigaction != NULL
                                                : old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN;
    if (handler) old_mask(sig, old);
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
    fault_frame *f = si->si_code > 0 ? frame_of(gettid()) : NULL;
    if (f && f->armed) {
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

/* Runs on the exiting thread: its alternate stack (if ours) goes, and its
 * slot is freed */
static void slot_free(void *p)
{
    fault_slot *sl = p;
    if (sl->stack) {
        stack_t cur;
        if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == sl->stack) {
            stack_t off;
            memset(&off, 0, sizeof off);
            off.ss_flags = SS_DISABLE;
            sigaltstack(&off, NULL);
        }
        sys_sigstack_unmap(sl->stack, sigstack_bytes());
        sl->stack = NULL;
    }
    atomic_store(&sl->frame, NULL);
    pid_t me = gettid();
    atomic_compare_exchange_strong(&sl->tid, &me, 0);
    my_slot = NULL;
}

/* A forked child has only the thread that forked: the others' slots (with
 * thread ids the child may hand out again) are dropped */
static void after_fork_child(void)
{
    for (unsigned i = 0; i < FAULT_SLOTS; i++) {
        atomic_store(&slots[i].frame, NULL);
        atomic_store(&slots[i].tid, 0);
        slots[i].stack = NULL;
    }
    my_slot = NULL;
}

static void install(void)
{
    if ((install_errno = pthread_key_create(&slot_key, slot_free))) return;
    if ((install_errno = pthread_atfork(NULL, NULL, after_fork_child))) return;
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

/* This thread's slot, and its alternate signal stack: its own where it has
 * one, else ours, made once per thread and freed when it exits. */
static hcq_status thread_prepare(void)
{
    if (my_slot) return HCQ_OK;
    pid_t me = gettid();
    fault_slot *sl = NULL;
    for (unsigned i = 0; i < FAULT_SLOTS && !sl; i++) {
        pid_t free_tid = 0;
        if (atomic_compare_exchange_strong(&slots[i].tid, &free_tid, me)) {
            sl = &slots[i];
            unsigned used = atomic_load(&slots_used);
            while (used < i + 1 && !atomic_compare_exchange_weak(&slots_used, &used, i + 1)) {}
        }
    }
    if (!sl)
        return base_err(HCQ_ELIMIT, "CPU: more than %u threads run kernels at once; close CPU devices or lower "
                        "HCQ_CPU_THREADS", FAULT_SLOTS);
    sl->stack = NULL;
    stack_t cur;
    hcq_status s = HCQ_OK;
    if (sigaltstack(NULL, &cur) < 0 || (cur.ss_flags & SS_DISABLE) || cur.ss_size < (size_t)MINSIGSTKSZ) {
        int err = 0;
        size_t n = sigstack_bytes();
        void *p = sys_sigstack_map(n, &err);
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = p;
        ss.ss_size = n;
        if (!p)
            s = base_err(HCQ_ENOMEM, "CPU: cannot map a %zu-byte signal stack for a kernel worker (%s)", n,
                         strerror(err));
        else if (sigaltstack(&ss, NULL) < 0)
            s = base_err(HCQ_EIO, "CPU: cannot give a kernel worker its signal stack (%s)", strerror(errno));
        if (s && p) sys_sigstack_unmap(p, n);
        if (!s) sl->stack = p;
    }
    if (!s && pthread_setspecific(slot_key, sl))
        s = base_err(HCQ_ENOMEM, "CPU: cannot register a kernel worker's exit handler");
    if (s) {
        slot_free(sl);
        return s;
    }
    /* a thread inherits its creator's mask: where the program blocked
     * SIGSEGV or SIGBUS before the device opened, a fault with it blocked
     * would kill the process without reaching the handler. Kernel threads
     * are ours; they take these two. */
    sigset_t faults;
    sigemptyset(&faults);
    sigaddset(&faults, SIGSEGV);
    sigaddset(&faults, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &faults, NULL);
    my_slot = sl;
    return HCQ_OK;
}

hcq_status cpu_fault_run(hcq_cpu_entry_fn entry, const uint8_t *kernargs, const hcq_cpu_dims *dims, uint64_t begin,
                         uint64_t end, const atomic_int *cancel, cpu_kfault *out)
{
    hcq_status ps = thread_prepare();
    if (ps) return ps;
    fault_frame f;
    f.armed = 0;
    f.have_regs = 0;
    f.pc = f.trapno = f.err = 0;
    fault_frame *prev = atomic_load_explicit(&my_slot->frame, memory_order_relaxed);
    volatile uint64_t g = begin;
    atomic_store_explicit(&my_slot->frame, &f, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    /* no mask saved here (that would be a syscall per chunk): the handler
     * keeps the mask the thread had when it faulted */
    if (sigsetjmp(f.jb, 0)) {
        atomic_signal_fence(memory_order_seq_cst);
        atomic_store_explicit(&my_slot->frame, prev, memory_order_relaxed);
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
    bool cancelled = false;
    for (; g < end && !cancelled; g++) {
        if ((cancelled = atomic_load_explicit(cancel, memory_order_relaxed))) break;
        f.armed = 1;
        atomic_signal_fence(memory_order_seq_cst);
        entry(kernargs, dims, g, g + 1);
        atomic_signal_fence(memory_order_seq_cst);
        f.armed = 0;
    }
    atomic_store_explicit(&my_slot->frame, prev, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    return cancelled ? HCQ_ESTATE : HCQ_OK;
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
