/* Fibers (fiber.h). The x86-64 switch saves the registers the SysV ABI
 * asks a callee to keep (rbx, rbp, r12-r15) on the old stack, stores the
 * stack pointer, loads the other one and returns into it. The ABI also
 * has a callee keep MXCSR's and the x87 control word's control bits; the
 * switch leaves them alone, as every fiber of a thread and its scheduler
 * share them: no twin changes the floating-point environment (the IR has
 * no rounding-mode or exception control), so they hold the thread's values
 * throughout. Saving and loading them (stmxcsr/ldmxcsr, fnstcw/fldcw) was
 * most of a switch's cost (perf's samples of the switch, hcq demo on the
 * mock), and a barrier-heavy work-group switches once per work-item per
 * barrier. A fresh fiber's stack holds a frame that "returns" into
 * fiber_boot with the fiber in rbx. Other architectures use ucontext,
 * whose switch also saves the signal mask (a system call): slower, same
 * behaviour. */
#include "compiler/fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FIBER_ASAN)
#define FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(FIBER_TSAN)
#define FIBER_TSAN 1
#endif

#ifdef FIBER_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif
#ifdef FIBER_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

#if defined(__x86_64__) && !defined(HCQ_FIBER_UCONTEXT)
#define FIBER_X64 1
void cc_fiber_swap_x64(void **save_sp, void *load_sp);
void cc_fiber_boot_x64(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl cc_fiber_swap_x64\n"
        ".hidden cc_fiber_swap_x64\n"
        ".type cc_fiber_swap_x64,@function\n"
        "cc_fiber_swap_x64:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size cc_fiber_swap_x64, .-cc_fiber_swap_x64\n"
        ".p2align 4\n"
        ".globl cc_fiber_boot_x64\n"
        ".hidden cc_fiber_boot_x64\n"
        ".type cc_fiber_boot_x64,@function\n"
        "cc_fiber_boot_x64:\n"
        "  movq %rbx, %rdi\n"
        "  call cc_fiber_main\n"
        "  ud2\n"
        ".size cc_fiber_boot_x64, .-cc_fiber_boot_x64\n");
#else
#include <ucontext.h>
#endif

void cc_fiber_main(cc_fiber *f) __attribute__((visibility("hidden"), noreturn));

bool cc_fiber_create(cc_fiber *f)
{
    memset(f, 0, sizeof *f);
    f->stack = malloc(CC_FIBER_STACK);
#ifndef FIBER_X64
    f->uc = calloc(1, sizeof(ucontext_t));
    if (!f->uc) {
        free(f->stack);
        f->stack = NULL;
    }
#endif
    if (!f->stack) return false;
#ifdef FIBER_TSAN
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
    return true;
}

void cc_fiber_destroy(cc_fiber *f)
{
    if (!f || !f->stack) return;
#ifdef FIBER_TSAN
    if (f->tsan_fiber) __tsan_destroy_fiber(f->tsan_fiber);
#endif
    free(f->uc);
    free(f->stack);
    memset(f, 0, sizeof *f);
}

bool cc_fiber_sched_init(cc_fiber_sched *s)
{
    memset(s, 0, sizeof *s);
#ifndef FIBER_X64
    s->uc = calloc(1, sizeof(ucontext_t));
    if (!s->uc) return false;
#endif
    return true;
}

void cc_fiber_sched_fini(cc_fiber_sched *s)
{
    free(s->uc);
    s->uc = NULL;
}

static void swap_to_fiber(cc_fiber_sched *s, cc_fiber *f)
{
#ifdef FIBER_X64
    cc_fiber_swap_x64(&s->sp, f->sp);
#else
    swapcontext(s->uc, f->uc);
#endif
}

static void swap_to_sched(cc_fiber_sched *s, cc_fiber *f)
{
#ifdef FIBER_X64
    cc_fiber_swap_x64(&f->sp, s->sp);
#else
    swapcontext(f->uc, s->uc);
#endif
}

void cc_fiber_main(cc_fiber *f)
{
    cc_fiber_sched *s = f->sched;
#ifdef FIBER_ASAN
    const void *bottom = NULL;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &s->san_size);
    s->san_stack = (void *)bottom;
#endif
    f->fn(f->arg);
    f->done = true;
    cc_fiber_yield(s);
    abort(); /* a finished fiber is never resumed */
}

#ifndef FIBER_X64
static void uc_entry(unsigned lo, unsigned hi)
{
    cc_fiber_main((cc_fiber *)(uintptr_t)((uint64_t)hi << 32 | lo));
}
#endif

void cc_fiber_reset(cc_fiber *f, cc_fiber_sched *s, cc_fiber_fn fn, void *arg)
{
    f->fn = fn;
    f->arg = arg;
    f->done = false;
    f->sched = s;
#ifdef FIBER_ASAN
    /* frames a previous run left (a finished fiber's last yield, an
     * abandoned one's) keep their redzones poisoned */
    __asan_unpoison_memory_region(f->stack, CC_FIBER_STACK);
#endif
#ifdef FIBER_X64
    uintptr_t top = ((uintptr_t)f->stack + CC_FIBER_STACK) & ~(uintptr_t)15;
    /* r15 r14 r13 r12 rbx rbp, then the return address: fiber_boot starts
     * with rsp 16-byte aligned, as after a call's return */
    uint64_t *sp = (uint64_t *)(top - 72);
    memset(sp, 0, 72);
    sp[4] = (uint64_t)(uintptr_t)f; /* rbx */
    sp[6] = (uint64_t)(uintptr_t)cc_fiber_boot_x64;
    f->sp = sp;
#else
    ucontext_t *uc = f->uc;
    getcontext(uc);
    uc->uc_stack.ss_sp = f->stack;
    uc->uc_stack.ss_size = CC_FIBER_STACK;
    uc->uc_link = NULL;
    uint64_t p = (uint64_t)(uintptr_t)f;
    makecontext(uc, (void (*)(void))uc_entry, 2, (unsigned)p, (unsigned)(p >> 32));
#endif
}

void cc_fiber_resume(cc_fiber_sched *s, cc_fiber *f)
{
    s->cur = f;
#ifdef FIBER_TSAN
    if (!s->tsan_fiber) s->tsan_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
#ifdef FIBER_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, f->stack, CC_FIBER_STACK);
#endif
    swap_to_fiber(s, f);
#ifdef FIBER_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    s->cur = NULL;
}

bool cc_fiber_switch(cc_fiber_sched *s, cc_fiber *to)
{
#if defined(FIBER_X64) && !defined(FIBER_ASAN) && !defined(FIBER_TSAN)
    cc_fiber *f = s->cur;
    s->cur = to;
    cc_fiber_swap_x64(&f->sp, to->sp);
    return true;
#else
    (void)s, (void)to;
    return false;
#endif
}

void cc_fiber_yield(cc_fiber_sched *s)
{
    cc_fiber *f = s->cur;
#ifdef FIBER_TSAN
    __tsan_switch_to_fiber(s->tsan_fiber, 0);
#endif
#ifdef FIBER_ASAN
    __sanitizer_start_switch_fiber(f->done ? NULL : &f->asan_fake, s->san_stack, s->san_size);
#endif
    swap_to_sched(s, f);
#ifdef FIBER_ASAN
    const void *bottom = NULL;
    __sanitizer_finish_switch_fiber(f->asan_fake, &bottom, &s->san_size);
    s->san_stack = (void *)bottom;
#endif
}
