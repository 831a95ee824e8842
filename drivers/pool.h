/* drivers/pool.h: a pool of worker threads that runs one job at a time,
 * split into chunks of a range. The CPU device runs work-groups on it; so
 * does the mock GPU's shader core. */
#ifndef HCQ_DRIVERS_POOL_H
#define HCQ_DRIVERS_POOL_H

#include <hcq/base.h>

typedef hcq_status (*drv_task_fn)(void *ctx, uint64_t begin, uint64_t end);
typedef struct drv_pool drv_pool;

/* nthreads counts the caller: nthreads - 1 workers are started (with 16 MiB
 * stacks: kernels keep local memory and per-work-item arrays there). */
drv_pool *drv_pool_create(unsigned nthreads);
void drv_pool_destroy(drv_pool *p); /* NULL is fine */
unsigned drv_pool_threads(const drv_pool *p);
/* Runs fn over [0, total) in chunks on every thread (the caller's too) and
 * returns the first error a chunk returned. One job at a time per pool. */
hcq_status drv_pool_run(drv_pool *p, uint64_t total, uint64_t chunk, drv_task_fn fn, void *ctx);

#endif
