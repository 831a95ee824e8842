/* drivers/backend.h: the one table every backend (cpu, nv, amd) fills, and
 * the device, program and memory records the layers share.
 *
 * The device-independent layers (mem/, queue/) call only through this table
 * and never branch on the vendor. A backend owns bring-up, memory, program
 * loading, the encoders for each queue command (into a drv_rec, see
 * record.h), submission into its engines' rings, and the sources of faults. */
#ifndef HCQ_DRIVERS_BACKEND_H
#define HCQ_DRIVERS_BACKEND_H

#include <hcq/queue.h>
#include <pthread.h>
#include <stdatomic.h>

#include "drivers/record.h"

/* ** memory */
enum {
    DRV_MEM_DEVICE = 1u << 0,   /* device-local memory */
    DRV_MEM_HOST = 1u << 1,     /* pinned system memory mapped to the device */
    DRV_MEM_CPU = 1u << 2,      /* must be mapped for the CPU (cpu != NULL) */
    DRV_MEM_UNCACHED = 1u << 3, /* CPU mapping uncached / coherent (signals) */
    DRV_MEM_LOW = 1u << 4,      /* VA below 2^40 (pushbuffers, QMDs) */
    DRV_MEM_CODE = 1u << 5,     /* holds kernel code */
};

typedef struct drv_mem {
    uint64_t va;    /* device virtual address */
    void *cpu;      /* CPU mapping, or NULL */
    uint64_t size;  /* bytes, as allocated (rounded up) */
    uint32_t flags; /* DRV_MEM_* */
    uint64_t handle;
    void *priv;
    uint32_t peers; /* devices (backend-defined bits) that map it as peers (peer_map) */
    uint32_t peer_epoch; /* the backend's: when `peers` was last known true (NV: GPUs leaving drop mappings) */
} drv_mem;

/* ** programs (the backend fills info, params and priv at load) */
struct hcq_program {
    hcq_device *dev;
    hcq_program_info info;
    /* what the backend's launch packets name the program by (NV: the code's
     * VA in the QMD; AMD: the kernel entry, COMPUTE_PGM_LO/HI; CPU: its
     * record), so decoders print its name (drivers/decode.h symbols) */
    uint64_t launch_addr;
    hcq_param_info *params; /* info.nparams entries, malloc'd by the backend */
    void *priv;
    /* queue/, under the device's list lock: recordings that use it, and
     * whether the user freed it (it is unloaded when both are done) */
    uint32_t holds;
    bool freed;
    bool internal; /* loaded by the library for itself (hcq_allreduce's kernels), freed at close unreported */
    struct hcq_program *next, *prev; /* the device's list */
};

/* ** devices */
struct mem_dev;   /* mem/: timeline, signal pool, staging, kernarg ring */
struct queue_dev; /* queue/: eager recordings, live objects */

struct hcq_device {
    const struct drv_backend *be;
    void *priv; /* backend state */
    hcq_device_props props;
    /* device timestamp ticks -> ns: ns = ticks * ts_mul / ts_div */
    uint64_t ts_mul, ts_div;
    pthread_mutex_t lock; /* serialises eager submissions and the timeline */
    /* sticky fault: set once by whoever sees it (engine, poll), read by all */
    atomic_int faulted;
    hcq_status fault_status;
    char fault_msg[3072]; /* room for memcheck's reports (drv_set_fault) */
    pthread_mutex_t fault_lock;
    /* engine progress: engines bump progress_seq after every signal write
     * they make; host waiters sleep on it instead of spinning */
    atomic_uint_fast64_t progress_seq;
    atomic_int progress_waiters;
    pthread_mutex_t progress_lock;
    pthread_cond_t progress_cond;
    /* what the engines' streams are, for HCQ_DUMP and HCQ_DEBUG=4
     * (drivers/dump.h formats; arch: class id or gfx version), by engine */
    const char *stream_format[2];
    uint32_t stream_arch[2];
    struct mem_dev *mem;
    struct queue_dev *qd;
    int mock_shader; /* mock GPUs: DRV_SHADER_* (what runs a launch's machine code) */
};

/* Engines that run on host threads (the CPU device) call this after
 * writing signal memory. */
void drv_progress_notify(hcq_device *dev);
/* Sleeps until progress_seq moves past seq (read before the caller checked
 * its condition) or max_ns passes. */
void drv_progress_wait(hcq_device *dev, uint64_t seq, uint64_t max_ns);
static inline uint64_t drv_progress_seq(hcq_device *dev)
{
    return atomic_load(&dev->progress_seq);
}
/* For waiters on any device: the progress counter that covers its engines
 * (its own, else the syscall table's for emulated hardware, else none: 0),
 * and a sleep until it moves or max_ns passes (without a counter, a short
 * sleep). Returns how long a sleep the caller may choose: long when some
 * notification exists, short when it must poll. */
uint64_t drv_waiter_seq(hcq_device *dev);
void drv_waiter_sleep(hcq_device *dev, uint64_t seq, uint64_t max_ns);
uint64_t drv_waiter_step_ns(hcq_device *dev);
/* Initialises/destroys the generic parts of a device record. */
void drv_device_init(hcq_device *dev);
void drv_device_fini(hcq_device *dev);

/* Whether a mock GPU of this arch runs real binaries as their host twins
 * (the tools that make both are here and the mock is this process's own,
 * not libhcqmock.so preloaded); if not, why, for the device's shader line. */
bool drv_mock_twins(const char *arch, char *why, size_t why_size);
/* How a mock GPU runs kernels: the machine code itself on the vendor
 * mock's executor (by default and with HCQ_MOCK_SHADER=isa, where one runs
 * arch's code: cc_isa_on; preloaded or not, since it needs nothing from
 * this process), host twins
 * (drv_mock_twins), else kernel IR. `what` gets the device's shader line
 * ("SASS executor (sm_90 cubins ...)", "host twins of ...", "kernel IR on
 * the interpreter ...: why"), *target the target kernels compile for. */
enum { DRV_SHADER_IR, DRV_SHADER_TWIN, DRV_SHADER_ISA, DRV_SHADER_NONE /* HCQ_MOCK_SHADER=none: nothing runs */ };
int drv_mock_shader(const char *arch, const char *binaries, char *target, size_t target_size, char *what,
                    size_t what_size);

/* Records the device's sticky fault (first one wins) and returns it. */
hcq_status drv_set_fault(hcq_device *dev, hcq_status s, const char *fmt, ...) HCQ_PRINTF(3, 4);
/* HCQ_OK or the sticky fault, with its message set again for this thread. */
hcq_status drv_fault_status(hcq_device *dev);

typedef struct drv_backend {
    const char *kind; /* "CPU", "NV", "AMD" */
    /* devices of this kind present (0 if the driver is absent) */
    uint32_t (*count)(void);
    /* when count() is 0: why, as one sentence naming the path, the errno or
     * driver status and the fix (a module to load, a group to join) */
    void (*why_absent)(char *buf, size_t size);
    /* brings device `index` up: props, priv, ts_mul/div, engines */
    hcq_status (*open)(hcq_device *dev, uint32_t index);
    /* Stops the engines (optional; hcq_device_close calls it first, before
     * anything is freed): queued work is dropped, waits and running kernels
     * end. Returns within a bounded time (the backend's halt limit, 1 s for
     * the CPU device). Returns false when an engine could not be stopped:
     * it is abandoned to finish on its own, and the backend's close then
     * takes over the device record (frees it, after drv_device_fini, once
     * the engines are done) and must free no memory an engine may touch
     * before that. */
    bool (*halt)(hcq_device *dev);
    /* tears down what open made; every allocation is already freed */
    void (*close)(hcq_device *dev);

    hcq_status (*mem_alloc)(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out);
    void (*mem_free)(hcq_device *dev, drv_mem *m);

    /* parses and uploads the kernel named `kernel` (NULL: the binary's only
     * kernel; several without a name is HCQ_EINVAL listing them); fills
     * p->info (name, target, nparams, kernarg_bytes, max_threads,
     * local_bytes, registers, code_bytes), p->params, p->priv */
    hcq_status (*program_load)(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p);
    void (*program_free)(hcq_device *dev, hcq_program *p);

    /* encoders: append one command to r */
    hcq_status (*rec_wait)(drv_rec *r, hcq_val addr, hcq_val value);
    hcq_status (*rec_signal)(drv_rec *r, hcq_val addr, hcq_val value);
    hcq_status (*rec_timestamp)(drv_rec *r, hcq_val addr);
    hcq_status (*rec_barrier)(drv_rec *r);
    /* params[i] is the value of parameter i (a buffer's address or a scalar) */
    hcq_status (*rec_exec)(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims);
    hcq_status (*rec_copy)(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size);
    /* largest copy one command can do (a variable size must fit) */
    uint64_t copy_max_bytes;

    /* hands r's patched stream to the engine of r->type; may wait (with a
     * timeout) for ring space */
    hcq_status (*submit)(hcq_device *dev, drv_rec *r);

    /* makes memory m of device `owner` (of this backend) reachable at its
     * address by dev's engines and kernels: a peer mapping, kept until m is
     * freed (the owner's mem_free undoes every peer's too). Host memory
     * (signal pages) needs no link between the GPUs; device memory does.
     * HCQ_ENOTSUP, saying why, where the drivers or the link between the
     * two refuse (the caller then goes through host memory); optional */
    hcq_status (*peer_map)(hcq_device *dev, hcq_device *owner, drv_mem *m);

    /* checks fault sources; records a fault with drv_set_fault (optional) */
    void (*poll)(hcq_device *dev);
    /* true when the engines call drv_progress_notify after every signal
     * write (emulated engines), so host waiters may sleep long */
    bool notifies_progress;
    /* true when submit writes HCQ_DUMP itself (with the ring addresses the
     * stream lands at), so drv_submit only decodes for HCQ_DEBUG=4 */
    bool dumps_streams;
    /* the host wrote signal memory at va: wake engines waiting on it */
    void (*signal_written)(hcq_device *dev, uint64_t va);
    /* one line per engine: read/write positions, what it is doing */
    void (*describe)(hcq_device *dev, char *buf, size_t size);
    /* adds the driver's readings, processes and events to t with the
     * drv_telemetry_* helpers (telemetry.h); optional */
    void (*telemetry)(hcq_device *dev, hcq_telemetry *t);
} drv_backend;

/* Hands r to the backend's submit, first dumping the stream (HCQ_DUMP=dir)
 * and printing it decoded (HCQ_DEBUG=4) when asked. */
hcq_status drv_submit(hcq_device *dev, drv_rec *r);

/* The backends linked in, best first (NV, AMD, CPU). */
const drv_backend *const *drv_backends(void);
extern const drv_backend drv_cpu_backend;
extern const drv_backend drv_nv_backend;
extern const drv_backend drv_amd_backend;

#endif
