/* fork with the mock in the process. The child is a copy of the parent with
 * one thread: every lock another thread held at the fork stays held in the
 * copy, by nobody, and the first call into the mock there waits forever
 * (six children in ten hung with four threads doing open/ioctl/close on
 * /dev/nvidiactl). What the real drivers give a child is its inherited
 * descriptors, working; here the child gets a mock that works:
 *
 *   - prepare closes the gate every outside call runs in (waiting for the
 *     calls under way, at most GATE_WAIT_NS: a thread blocked in a waiting
 *     ioctl must not stall the fork for long) and holds the engines between
 *     steps (at most HOLD_WAIT_NS: a step may be running a kernel), so no
 *     thread is inside the mock's state when the copy is made;
 *   - the child makes every lock of the mock's core new (whatever the waits
 *     above could not rule out), forgets the worker pools and engines whose
 *     threads stayed in the parent (its engines' copies are orphans:
 *     stopping one frees it, never joins), and reopens the gate.
 *
 * The child's copy of the emulated GPUs is its own from then on: work it
 * submits on inherited queues has no engine to run it (as a CUDA context
 * stays with the process that made it); devices it opens get new ones. */
#include "drivers/mock/mock_internal.h"

#include "base/base.h"

#include <time.h>

#define GATE_WAIT_NS 200000000ull
#define HOLD_WAIT_NS 1000000000ull

static pthread_rwlock_t gate;
static pthread_once_t gate_once = PTHREAD_ONCE_INIT;
static _Thread_local int depth;
static bool gate_closed; /* by prepare, for parent to open */

static void gate_init(void)
{
    /* writers first: a fork is not starved by a stream of calls */
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&gate, &a);
    pthread_rwlockattr_destroy(&a);
}

void mock_gate_enter(void)
{
    if (depth++) return;
    pthread_once(&gate_once, gate_init);
    pthread_rwlock_rdlock(&gate);
}

void mock_gate_leave(void)
{
    if (--depth) return;
    pthread_rwlock_unlock(&gate);
}

static void prepare(void)
{
    pthread_once(&gate_once, gate_init);
    gate_closed = false;
    if (!depth) { /* never from inside a call of this thread's */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + GATE_WAIT_NS;
        ts.tv_sec += (time_t)(ns / 1000000000ull);
        ts.tv_nsec = (long)(ns % 1000000000ull);
        gate_closed = pthread_rwlock_timedwrlock(&gate, &ts) == 0;
    }
    mock_engines_hold(true, HOLD_WAIT_NS);
}

static void parent(void)
{
    mock_engines_hold(false, 0);
    if (gate_closed) pthread_rwlock_unlock(&gate);
    gate_closed = false;
}

static void child(void)
{
    gate_init(); /* open, held by nobody */
    gate_closed = false;
    mock_core_atfork_child();
    mock_mem_atfork_child();
    mock_engine_atfork_child();
    mock_twin_atfork_child();
    mock_shader_atfork_child();
}

static void setup_once(void)
{
    pthread_once(&gate_once, gate_init);
    pthread_atfork(prepare, parent, child);
}

void mock_fork_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup_once);
}
