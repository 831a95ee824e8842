/* drivers/cpu: the CPU device. It is built like a GPU so that everything
 * above the backend table behaves the same on it: memory is host memory (the
 * "device address" is the host address), each engine (compute, copy) is a
 * host thread that consumes a ring of packets in its own small format, sees
 * work only through its write pointer, and reports only through signals in
 * memory. Kernels run on a pool of worker threads, one work-group range per
 * task: compiled shared objects for the "cpu" target, or the IR interpreter
 * (bounds-checked) for "ir" binaries. */
#ifndef HCQ_DRIVERS_CPU_H
#define HCQ_DRIVERS_CPU_H

#include "compiler/cpu_abi.h"
#include "drivers/backend.h"
#include "drivers/pool.h"

#include <hcq/compiler.h>
#include <pthread.h>
#include <stdatomic.h>

/* ** packets: header = opcode | total dwords << 16, then the payload */
enum cpu_opcode {
    CPU_OP_NOP = 0,
    CPU_OP_WAIT = 1,      /* addr lo, hi, value lo, hi: stall until *addr >= value */
    CPU_OP_SIGNAL = 2,    /* addr lo, hi, value lo, hi: timestamp, then value */
    CPU_OP_TIMESTAMP = 3, /* addr lo, hi: clock to addr + 8 */
    CPU_OP_BARRIER = 4,   /* memory fence */
    CPU_OP_EXEC = 5,      /* prog lo, hi, kernargs lo, hi, grid x y z, block x y z */
    CPU_OP_COPY = 6,      /* dst lo, hi, src lo, hi, size lo, hi */
    CPU_OP_COUNT
};
#define CPU_PKT(op, ndw) ((uint32_t)(op) | ((uint32_t)(ndw) << 16))
#define CPU_PKT_OP(h) ((h) & 0xffu)
#define CPU_PKT_NDW(h) ((h) >> 16)
#define CPU_MAX_PKT_DW 16u

/* the packet format as data: name and size, shared by the engine and the
 * decoder */
typedef struct cpu_op_info {
    const char *name;
    uint32_t ndw; /* including the header */
} cpu_op_info;
extern const cpu_op_info cpu_ops[CPU_OP_COUNT];

/* ** engines */
#define CPU_RING_SHIFT 16 /* default: 64 Ki dwords; HCQ_RING_SHIFT overrides */
typedef struct cpu_engine {
    hcq_device *dev;
    const char *name; /* "compute", "copy" */
    uint32_t *ring;   /* ring_dw dwords */
    uint32_t ring_dw; /* a power of two, at least CPU_MAX_PKT_DW */
    atomic_uint_fast64_t wptr, rptr; /* dword counters, position = counter % size */
    pthread_mutex_t submit_lock;     /* one submitter at a time */
    pthread_mutex_t lock;            /* doorbell sleep */
    pthread_cond_t doorbell;
    atomic_int sleeping;
    atomic_int stop;
    atomic_uint_fast64_t executed;   /* packets executed */
    atomic_int state;                /* what it does now, for describe() */
    uint64_t rng;                    /* HCQ_MOCK_SCHED=random: pauses between packets */
    uint32_t sched_max_us;
    uint64_t state_arg;
    pthread_t thread;
    bool started;
    bool exited; /* the thread left its loop (under lock; signalled on doorbell) */
} cpu_engine;

/* ** allocations, for the interpreter's bounds checks */
typedef struct cpu_alloc {
    uint64_t va, size;
} cpu_alloc;

/* what an abandoned device frees only after its engines have stopped */
typedef struct cpu_grave {
    void *cpu;         /* a mapping, or NULL */
    uint64_t size;
    struct cpu_prog *prog; /* a program, or NULL */
    struct cpu_grave *next;
} cpu_grave;

typedef struct cpu_dev {
    cpu_engine eng[2]; /* HCQ_QUEUE_COMPUTE, HCQ_QUEUE_COPY */
    /* halting: running kernels stop at their next work-group (compiled) or
     * loop iteration (interpreted) once cancel is raised */
    atomic_int cancel;
    /* an engine did not stop in time (a compiled work-group that runs on):
     * memory and programs are not freed but buried, and a reaper thread
     * frees them, the engines and the device record once it has finished */
    bool abandoned;
    cpu_grave *graves;
    drv_pool *pool;
    pthread_rwlock_t alloc_lock;
    cpu_alloc *allocs; /* sorted by va */
    size_t nallocs, acap;
    bool interp_target; /* programs from kernels are compiled for "ir" */
} cpu_dev;

static inline cpu_dev *cpu_of(hcq_device *dev) { return (cpu_dev *)dev->priv; }

hcq_status cpu_engines_start(hcq_device *dev);
/* Stops the engines within CPU_HALT_NS: queued work is dropped, running
 * kernels are cancelled; an engine still running then is abandoned
 * (c->abandoned). */
#define CPU_HALT_NS 1000000000ull
void cpu_engines_halt(hcq_device *dev);
/* Closed devices whose abandoned engines have not finished yet (tests). */
unsigned cpu_abandoned_devices(void);
void cpu_engines_stop(hcq_device *dev);
hcq_status cpu_submit(hcq_device *dev, drv_rec *r);
void cpu_describe(hcq_device *dev, char *buf, size_t size);

/* programs */
typedef struct cpu_prog {
    uint32_t magic;
    hcq_kernel *ir;        /* interpreted program, or NULL */
    cc_cpu_module mod;     /* a compiled one */
    hcq_cpu_entry_fn entry;
    char name[64];
    uint32_t kernarg_bytes;
    const hcq_param_info *params; /* the program's (owned by the hcq_program) */
    uint32_t nparams;
    bool owns_params; /* params copied here (a buried program outlives its hcq_program) */
} cpu_prog;
#define CPU_PROG_MAGIC 0x43505247u
hcq_status cpu_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p);
void cpu_program_free(hcq_device *dev, hcq_program *p);
void cpu_prog_destroy(cpu_prog *cp);
/* Runs one launch on the pool (engine thread). */
hcq_status cpu_exec(hcq_device *dev, cpu_prog *cp, const uint8_t *kernargs, const uint32_t grid[3],
                    const uint32_t block[3]);

/* ** a compiled kernel's bad memory access (cpu_fault.c) */
enum { CPU_ACCESS_UNKNOWN, CPU_ACCESS_READ, CPU_ACCESS_WRITE, CPU_ACCESS_EXEC };
typedef struct cpu_kfault {
    int sig, code;     /* SIGSEGV or SIGBUS, and its si_code */
    uint64_t addr;     /* the address the CPU reported */
    bool addr_unknown; /* x86-64 reports none for a non-canonical address */
    uint64_t pc;       /* the faulting instruction, 0 where unknown */
    int access;        /* CPU_ACCESS_* (x86-64 says which; elsewhere unknown) */
    uint64_t group;    /* the linear work-group that faulted */
} cpu_kfault;
/* Installs the process's SIGSEGV/SIGBUS handler, once (the CPU device's
 * open); signals that are not a kernel's fault go on to the handler that was
 * there before. */
hcq_status cpu_fault_install(void);
/* Runs work-groups [begin, end) of a compiled kernel on this thread, one
 * call of entry per group, checking cancel before each: HCQ_OK, HCQ_ESTATE
 * (cancelled), or HCQ_EFAULT with *f saying what the kernel touched (the
 * thread and the program carry on). */
hcq_status cpu_fault_run(hcq_cpu_entry_fn entry, const uint8_t *kernargs, const hcq_cpu_dims *dims, uint64_t begin,
                         uint64_t end, const atomic_int *cancel, cpu_kfault *f);
/* "wrote address 0x... , which is not mapped (SIGSEGV)" */
void cpu_fault_describe(const cpu_kfault *f, char *buf, size_t size);

/* encoders */
hcq_status cpu_rec_wait(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status cpu_rec_signal(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status cpu_rec_timestamp(drv_rec *r, hcq_val addr);
hcq_status cpu_rec_barrier(drv_rec *r);
hcq_status cpu_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims);
hcq_status cpu_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size);

/* the allocation registry */
void cpu_alloc_add(cpu_dev *c, uint64_t va, uint64_t size);
void cpu_alloc_remove(cpu_dev *c, uint64_t va);
/* true if [va, va + size) lies in one allocation; else describes why */
bool cpu_alloc_check(cpu_dev *c, uint64_t va, uint64_t size, char *why, size_t why_size);
/* true if [va, va + size) lies in the allocation that holds base (an access
 * through a buffer must stay in that buffer's allocation, not run on into a
 * neighbouring one) */
bool cpu_alloc_check_in(cpu_dev *c, uint64_t base, uint64_t va, uint64_t size, char *why, size_t why_size);

#endif
