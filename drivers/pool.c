#include "drivers/pool.h"

#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>

#include <stdlib.h>

/* A fixed pool of worker threads that run one job at a time: an engine
 * thread (of the CPU device or of the mock GPU) posts a job (total, chunk, fn), joins in, and returns when every
 * chunk is done. Chunks are claimed with an atomic counter, so uneven work
 * balances itself. */
struct drv_pool {
    unsigned nthreads; /* workers, not counting the caller */
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    uint64_t gen;  /* bumped per job */
    bool stop;
    /* the current job */
    drv_task_fn fn;
    void *ctx;
    uint64_t total, chunk;
    atomic_uint_fast64_t next;
    unsigned busy; /* workers still in the job */
    atomic_int err;
};

static void run_chunks(drv_pool *p)
{
    for (;;) {
        uint64_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->total) return;
        if (atomic_load(&p->err)) continue; /* drain: an error stops the job */
        uint64_t e = BASE_MIN(b + p->chunk, p->total);
        hcq_status s = p->fn(p->ctx, b, e);
        if (s) {
            int zero = 0;
            atomic_compare_exchange_strong(&p->err, &zero, (int)s);
        }
    }
}

static void *worker(void *arg)
{
    drv_pool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->gen == seen) pthread_cond_wait(&p->work, &p->lock);
        if (p->stop) break;
        seen = p->gen;
        pthread_mutex_unlock(&p->lock);
        run_chunks(p);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

drv_pool *drv_pool_create(unsigned nthreads)
{
    drv_pool *p = base_calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    unsigned workers = nthreads > 1 ? nthreads - 1 : 0;
    p->threads = base_calloc(workers ? workers : 1, sizeof *p->threads);
    if (!p->threads) {
        drv_pool_destroy(p);
        return NULL;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* kernels with barriers keep per-work-item arrays on the stack */
    pthread_attr_setstacksize(&attr, 16u << 20);
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], &attr, worker, p)) break;
        p->nthreads++;
    }
    pthread_attr_destroy(&attr);
    return p;
}

void drv_pool_destroy(drv_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}

unsigned drv_pool_threads(const drv_pool *p) { return p->nthreads + 1; }

hcq_status drv_pool_run(drv_pool *p, uint64_t total, uint64_t chunk, drv_task_fn fn, void *ctx)
{
    if (!total) return HCQ_OK;
    if (!chunk) chunk = 1;
    if (p->nthreads == 0 || total <= chunk) return fn(ctx, 0, total);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->total = total;
    p->chunk = chunk;
    atomic_store(&p->next, 0);
    atomic_store(&p->err, 0);
    p->busy = p->nthreads;
    p->gen++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    run_chunks(p);
    pthread_mutex_lock(&p->lock);
    while (p->busy) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return (hcq_status)atomic_load(&p->err);
}
