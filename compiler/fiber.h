/* compiler/fiber.h: cooperative fibers on one thread, for running a
 * work-group's work-items of a host twin across barriers (twin_run.c).
 *
 * A scheduler (the thread's own stack) resumes a fiber; the fiber runs
 * until it yields or returns, and control comes back to the scheduler.
 * Fibers never migrate between threads. On x86-64 the switch is a few
 * instructions (the callee-saved general registers; fiber.c says why not
 * MXCSR and the x87 control word);
 * elsewhere it is ucontext. Under AddressSanitizer and ThreadSanitizer the
 * switches are announced to the sanitizer, as their fiber APIs ask.
 *
 * Stacks come from malloc (the project keeps mmap in drivers/sys.c): no
 * guard page, so they are sized far beyond what a kernel body and the
 * runtime calls it makes (access checks, messages) use. */
#ifndef HCQ_COMPILER_FIBER_H
#define HCQ_COMPILER_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#define CC_FIBER_STACK (256u * 1024u)

typedef struct cc_fiber cc_fiber;
typedef struct cc_fiber_sched cc_fiber_sched;
typedef void (*cc_fiber_fn)(void *arg);

/* A scheduler for the calling thread (zeroed memory is one). */
struct cc_fiber_sched {
    void *sp;           /* where the scheduler's context was saved */
    cc_fiber *cur;      /* the fiber running, or NULL */
    void *san_stack;    /* the scheduler's stack as the sanitizers know it */
    size_t san_size;
    void *tsan_fiber;
    void *uc;           /* ucontext_t of the scheduler (fallback switch) */
};

struct cc_fiber {
    void *sp;
    unsigned char *stack; /* CC_FIBER_STACK bytes */
    cc_fiber_fn fn;
    void *arg;
    bool done;
    cc_fiber_sched *sched;
    void *asan_fake;
    void *tsan_fiber;
    void *uc; /* ucontext_t (fallback switch) */
};

/* Allocates a fiber's stack (false on out of memory). */
bool cc_fiber_create(cc_fiber *f);
void cc_fiber_destroy(cc_fiber *f); /* zeroed is fine */
/* Makes f run fn(arg) from the start at its next resume. */
void cc_fiber_reset(cc_fiber *f, cc_fiber_sched *s, cc_fiber_fn fn, void *arg);
/* Runs f until it yields or returns (f->done). */
void cc_fiber_resume(cc_fiber_sched *s, cc_fiber *f);
/* From inside a fiber: back to the scheduler. */
void cc_fiber_yield(cc_fiber_sched *s);
/* From inside a fiber: straight on to fiber `to` of the same scheduler
 * (fresh or yielded), without a round trip through the scheduler; true if
 * switched (the caller runs on when something switches back to it). False
 * where the switch must go through the scheduler (ucontext, and under the
 * sanitizers, whose fiber APIs track one scheduler stack): yield instead. */
bool cc_fiber_switch(cc_fiber_sched *s, cc_fiber *to);
/* The fallback's per-scheduler state: call once before the first resume
 * and cc_fiber_sched_fini after the last. */
bool cc_fiber_sched_init(cc_fiber_sched *s);
void cc_fiber_sched_fini(cc_fiber_sched *s);

#endif
