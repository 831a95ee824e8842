/* What a review against NVIDIA's own sources found (issue 11), each held
 * by the NV mock behaving as the hardware does: pushbuffer space reclaimed
 * from semaphore progress, not GP_GET. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void)
{
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(nv_ready, .init = setup, .timeout = 120);

static hcq_device *open_nv(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "opening %s: %s", name, hcq_error_message());
    return d;
}

/* ** NV 1: pushbuffer and GPFIFO reuse. The channel blocks on an acquire
 * in the first segment; the host then submits many more segments than a
 * tiny ring holds, and opens the gate from another thread. GP_GET has
 * passed the blocked segment (it moves when a segment begins) while its
 * remaining words are still to be read: reusing them on GP_GET's word
 * runs rewritten methods (the release after the acquire never comes), and
 * with USERD writeback off GP_GET never moves at all. */
static void *open_gate_later(void *gate)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hcq_signal_set(gate, 1);
    return NULL;
}

static void tiny_ring_behind_a_blocked_acquire(const char *gpget)
{
    setenv("HCQ_RING_SHIFT", "6", 1); /* 64 pushbuffer dwords, 64 GPFIFO entries */
    setenv("HCQ_TIMEOUT_MS", "4000", 1);
    base_env_reload();
    char spec[64];
    snprintf(spec, sizeof spec, "nv_gpget=%s", gpget);
    T_OK(mock_configure(spec));
    hcq_device *d = open_nv("NV:0");
    hcq_signal *gate = T_NONNULL(hcq_signal_create(d, 0)), *after = T_NONNULL(hcq_signal_create(d, 0));
    hcq_signal *count = T_NONNULL(hcq_signal_create(d, 0));
    hcq_queue *qa = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    hcq_queue *qb = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(qa, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_signal(qa, after, HCQ_IMM(7)));
    T_OK(hcq_queue_signal(qb, count, HCQ_VAR(0)));
    T_OK(hcq_queue_submit(qa, NULL, 0));
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, open_gate_later, gate), 0);
    enum { N = 80 }; /* segments: more than either ring holds */
    for (uint64_t i = 1; i <= N; i++) T_OK(hcq_queue_submit(qb, &i, 1));
    pthread_join(th, NULL);
    T_OK(hcq_signal_wait(count, N, 2000000000ull));
    T_OK(hcq_signal_wait(after, 7, 2000000000ull));
    cr_assert_eq(hcq_signal_value(after), 7);
    T_OK(hcq_device_status(d));
    hcq_queue_destroy(qa);
    hcq_queue_destroy(qb);
    hcq_signal_destroy(gate);
    hcq_signal_destroy(after);
    hcq_signal_destroy(count);
    T_OK(hcq_device_close(d));
}

Test(nv_ready, pushbuffer_reuse_waits_for_progress_when_gpget_runs_ahead)
{
    tiny_ring_behind_a_blocked_acquire("eager");
}

Test(nv_ready, pushbuffer_reuse_needs_no_gpget_writeback)
{
    tiny_ring_behind_a_blocked_acquire("never");
}
