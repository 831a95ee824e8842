/* What the files of the mock core share among themselves. */
#ifndef HCQ_DRIVERS_MOCK_INTERNAL_H
#define HCQ_DRIVERS_MOCK_INTERNAL_H

#include "drivers/mock/mock.h"

void mock_gpus_free(void);
/* the GPUs' worker pools stopped (their threads joined), where no launch holds one */
void mock_pools_stop(void);
/* mock_va_unmap that also says whether host memory of a buffer object was
 * dropped there (nobody maps the range any more) */
int mock_va_unmap_released(uint64_t va, uint64_t size, uint32_t who, bool *released);
void mock_injection_reset(void);
/* The process maps over [va, va + size) (MAP_FIXED): true when a GPU still
 * maps some of it. Those pages must stay (a GPU's view is separate from
 * the CPU's on hardware, but one host mapping here), so the CPU's share is
 * dropped and the caller leaves the pages alone. */
bool mock_va_cpu_overlay(uint64_t va, uint64_t size);

/* An ioctl through the vendor's call, on a kernel-side copy of its
 * argument (mock_uaccess.c): -EFAULT where the program's argument cannot
 * be read, or written back. */
int mock_ioctl_copied(int (*call)(void *priv, unsigned long req, void *arg), void *priv, const char *path,
                      unsigned long req, void *arg);
/* the bytes the driver behind path copies in and out for req */
void mock_ioctl_arg_sizes(const char *path, unsigned long req, size_t *in, size_t *out);

/* fork (mock_fork.c): engines held between steps (true: all are, within
 * max_ns), and each part's locks made new in a child */
bool mock_engines_hold(bool on, uint64_t max_ns);
void mock_engine_atfork_child(void);
void mock_mem_atfork_child(void);
void mock_twin_atfork_child(void);
void mock_shader_atfork_child(void);
void mock_core_atfork_child(void);
/* every call into the mock from outside (the syscall table, the path
 * queries) runs inside the gate, which a fork closes: no thread is inside
 * the mock when the child's copy is made. Re-entrant per thread. */
void mock_gate_enter(void);
void mock_gate_leave(void);
void mock_fork_setup(void);

/* syscall-table hooks (mock_engine.c) */
void mock_sys_doorbell(void *ctx, volatile void *addr);
void mock_sys_notify(void *ctx, uint64_t va);
uint64_t mock_sys_progress_seq(void *ctx);
void mock_sys_progress_wait(void *ctx, uint64_t seq, uint64_t max_ns);

#endif
