/* drivers/mock/mock_sass*: the NV mock's SM running a cubin's SASS
 * (compiler/sass.h decodes it once). Internal to drivers/mock.
 *   mock_sass_exec.c  launch: CTAs over the GPU's worker pool, warps of a
 *                     CTA round-robin until a barrier or exit, lanes of a
 *                     warp by the lowest PC, control flow, the watchdog
 *   mock_sass_alu.c   integer, float, half, double, conversion, predicate ops
 *   mock_sass_mem.c   constant banks, global/shared/local/generic loads,
 *                     stores and atomics, warp-wide ops (SHFL, VOTE, LDSM, ...)
 *   mock_sass_mma.c   the tensor cores (HMMA)
 *
 * Registers are stored per warp as rows of 32 lanes (r[reg * 32 + lane]),
 * predicates as lane masks, so an op is a loop over the active lanes with
 * its operands' rows resolved once. */
#ifndef HCQ_DRIVERS_MOCK_SASS_H
#define HCQ_DRIVERS_MOCK_SASS_H

#include "compiler/sass.h"
#include "drivers/mock/mock.h"

#include <stdatomic.h>

/* what a launch runs with (mock_nv_launch.c reads it from the QMD and the
 * compute class's method state) */
typedef struct msass_launch {
    mock_gpu *gpu;
    const sass_prog *p;
    const char *kernel;     /* for messages */
    uint64_t code_va;       /* the program address */
    uint32_t grid[3], block[3];
    uint32_t regs;          /* QMD REGISTER_COUNT: registers R0..regs-1 exist */
    uint32_t shared_bytes;  /* QMD SHARED_MEMORY_SIZE: per CTA */
    uint32_t barriers;      /* QMD BARRIER_COUNT: BAR ids below it exist */
    const uint8_t *cb[18];  /* the bound constant banks, as the launch starts (a copy) */
    uint32_t cb_size[18];
    uint64_t shared_window, local_window; /* generic addresses of shared and local memory */
    uint64_t local_buf;     /* SET_SHADER_LOCAL_MEMORY_A/B: the local-memory buffer */
    uint64_t local_buf_size;
    uint32_t local_low, local_high; /* QMD SHADER_LOCAL_MEMORY_LOW_SIZE / HIGH_SIZE: per thread, the local
                                       addresses [0, low) and [16 MiB - high, 16 MiB) exist */
    uint32_t sm_count;      /* for SR_SMID / SR_NSMID */
    uint64_t watchdog_ns;   /* a worker that spends this much CPU time on the launch ends it with the
                               watchdog's error (0: none) */
    const volatile int *cancel; /* the engine's stop flag */
    bool memcheck;          /* HCQ_MOCK_CHECK=memcheck: check shared-memory use and global bounds */
} msass_launch;

enum {
    MSASS_OK,
    MSASS_MMU,      /* a global access the GPU's mappings refuse (va, write) */
    MSASS_ILLEGAL,  /* an instruction or operand the SM cannot run */
    MSASS_SHARED,   /* a shared-memory address out of range */
    MSASS_LOCAL,    /* a local-memory address out of range */
    MSASS_MISALIGNED,
    MSASS_BARRIER,  /* a BAR id beyond BARRIER_COUNT */
    MSASS_TRAP,     /* BPT.TRAP (a device-side assert) */
    MSASS_WATCHDOG, /* ran past the watchdog */
    MSASS_CANCELLED,
    MSASS_NOMEM,
    MSASS_MEMCHECK, /* the memory checker found a bug */
};
typedef struct msass_fault {
    int kind;
    uint64_t va;
    bool write;
    char what[900];
} msass_fault;

/* Runs the launch. MSASS_OK, or the first fault with its message (the
 * instruction's address and text, the kernel, the thread and block). */
int msass_run(const msass_launch *l, msass_fault *f);

/* Instructions the executor has run in this process: warp-wide issues
 * and thread instructions (active lanes summed); for bench/bench_sass. */
void mock_sass_counters(uint64_t *warp_insns, uint64_t *thread_insns);

/* ** shared by the executor's files */
#define MSASS_RZ_ROW 0xffffffffu
typedef struct msass_warp {
    uint32_t *r;         /* [regs + 2][32]: the last two rows are RZ (always 0) and a sink for writes to RZ */
    uint32_t p[8];       /* P0..P6 as lane masks; p[7] = PT = all lanes */
    uint32_t ur[64];     /* UR0..UR62; ur[63] = URZ */
    uint32_t up;         /* UP0..UP6 as bits; bit 7 = UPT */
    uint32_t pc[32];     /* per lane: instruction index (while diverged; see cur) */
    uint32_t live;       /* lanes that exist and have not exited */
    uint32_t waiting;    /* lanes at a CTA barrier */
    uint32_t blocked;    /* lanes at a BSYNC waiting for the rest of its convergence barrier (pc[] is the BSYNC) */
    uint32_t bmask[16];  /* convergence barriers B0..B15 (BSSY) */
    uint32_t warp_id, first_thread;
    uint32_t bar_id;     /* the barrier its waiting lanes wait at */
    bool diverged;       /* some runnable lanes are at another PC */
    uint32_t cur;        /* not diverged: the PC of every runnable lane (pc[] is then stale) */
    /* diverged: the group of lanes at the lowest PC, kept from one instruction to the next so that the lanes'
     * PCs are not searched at each (mock_sass_exec.c, step()). Valid while gmask is set and live, waiting
     * and blocked are what they were when it was found: its lanes are at gpc (their pc[] stale), every
     * other live lane that could join them is at gnext or beyond */
    uint32_t gmask, gpc, gnext;
    uint32_t glive, gwait, gblock;
} msass_warp;

typedef struct msass_cta msass_cta;
/* per worker thread: what one CTA at a time uses */
typedef struct msass_worker {
    const msass_launch *l;
    struct msass_job *run;
    uint32_t slot;             /* which part of the local-memory buffer is this worker's */
    uint8_t *shared;           /* shared memory of the CTA being run */
    uint32_t ctaid[3];
    msass_warp *warps;
    uint32_t nwarps;
    uint32_t *regfile;
    /* per instruction: the global range the last access there was allowed (a hint, checked on use) */
    struct msass_range {
        uint64_t lo, hi;
        bool writable;
    } *ranges;
    uint64_t executed;         /* instructions run (warp-wide) */
    uint64_t lanes;            /* thread instructions: active lanes summed */
    uint64_t cpu_start;        /* the worker thread's CPU time when it took up the launch */
    /* BAR.RED: the predicates of the threads arrived (count, all, any), and the result B2R.RESULT reads */
    uint32_t red_count, red_result;
    bool red_all, red_any;
    int red_kind;
    /* memcheck: per shared byte, whether it was written, and since the last barrier the thread that wrote it
     * (+1; 0 none) and the warp that read it (+1; 0 none, ~0 several) */
    uint8_t *mc_init;
    uint32_t *mc_writer, *mc_reader;
    msass_fault fault;
    int status;
    /* memcheck: where a refused global access goes (loads read 0) while the
     * instruction's other lanes are checked */
    _Alignas(16) uint8_t mc_sink[16];
} msass_worker;

/* an instruction for a warp: exec = the active lanes whose guard holds */
typedef struct msass_op {
    msass_worker *wk;
    msass_warp *w;
    const sass_insn *in;
    uint32_t pc, exec, active;
    bool atomic;         /* the access being resolved is an atomic's */
    /* memcheck: lanes of this instruction whose global access was refused,
     * and the first one's address and report */
    uint32_t mc_bad;
    uint64_t mc_va;
    bool mc_write;
    char mc_msg[800];
    uint32_t tmp[8][32]; /* operand rows made for non-register operands */
    uint32_t nud;        /* uniform destinations written through tmp rows, committed after the op */
    struct {
        uint32_t reg;
        uint32_t *row;
    } ud[4];
} msass_op;

/* both return 0 or a fault kind (wk->fault filled) */
int msass_alu(msass_op *o);
int msass_mem(msass_op *o);
int msass_mma(msass_op *o); /* -1: not a tensor-core op this executor implements */
/* "kernel `k`, instruction `i` at 0x.. (code offset 0x..), thread (x,y,z)
 * of block (x,y,z)" for a lane of the instruction */
void msass_where(const msass_op *o, uint32_t lane, char *buf, size_t size);
/* a fault at this instruction: fills wk->fault, returns kind (memcheck's
 * are reported to base/memcheck.c too) */
int msass_fail(msass_op *o, int kind, uint64_t va, bool write, const char *fmt, ...) HCQ_PRINTF(5, 6);
/* operand rows */
const uint32_t *msass_cbank(msass_op *o, unsigned k, unsigned slot, uint32_t extra);
const uint32_t *msass_src(msass_op *o, unsigned k, unsigned slot);
const uint32_t *msass_src_hi(msass_op *o, unsigned k, unsigned slot); /* the next register (64-bit pairs) */
uint32_t *msass_dst(msass_op *o, unsigned k);
uint32_t *msass_dst_hi(msass_op *o, unsigned k);
uint32_t msass_pred(msass_op *o, unsigned k); /* a predicate operand as a lane mask (negation applied) */
void msass_pred_set(msass_op *o, unsigned k, uint32_t mask); /* writes exec lanes of a P or UP destination */
bool msass_uniform(const sass_insn *in); /* a U* op: one value for the warp */
/* a register operand's row without a call (the common case) */
static inline const uint32_t *msass_src_row(msass_op *o, unsigned k, unsigned slot)
{
    const sass_opnd *x = &o->in->o[k];
    if (x->kind == SASS_K_R && x->reg != 255) return o->w->r + (size_t)x->reg * 32;
    return msass_src(o, k, slot);
}
/* Runs the statement for each lane of the instruction's mask (i: the lane). A full warp's, the usual case, is a
 * counted loop (no bit search per lane; one the compiler may unroll), so the statement is expanded twice. Only
 * for statements whose lanes are independent (lane i reads and writes element i of the rows only) */
#define MSASS_LANES(o, i, ...)                                                                          \
    do {                                                                                                \
        uint32_t _x = (o)->exec;                                                                        \
        if (_x == 0xffffffffu) {                                                                        \
            for (uint32_t i = 0; i < 32; i++) { __VA_ARGS__; }                                          \
        } else {                                                                                        \
            for (uint32_t i; _x && ((i = (uint32_t)__builtin_ctz(_x)), 1); _x &= _x - 1) { __VA_ARGS__; } \
        }                                                                                               \
    } while (0)
/* lane mask helpers */
static inline uint32_t msass_lanes_of(uint32_t n) { return n >= 32 ? 0xffffffffu : (1u << n) - 1; }

#endif
