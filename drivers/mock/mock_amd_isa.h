/* The AMD mock's shader core for machine code: a code object's gfx11 or
 * gfx9 ISA executed instruction by instruction (HCQ_MOCK_SHADER=isa). What
 * the files share:
 *   mock_amd_isa.c       programs (decoded once per GPU by address and
 *                        content), the dispatch (registers -> waves),
 *                        work-groups on the worker pool, the wave loop and
 *                        its control flow, faults and exceptions;
 *   mock_amd_isa_salu.c  SOP1/SOP2/SOPK/SOPC and SMEM;
 *   mock_amd_isa_valu.c  VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD with DPP and SDWA;
 *   mock_amd_isa_mem.c   DS (LDS), FLAT/GLOBAL/SCRATCH and MUBUF;
 *   mock_amd_isa_mma.c   the matrix cores (gfx9 MFMA, gfx11 WMMA).
 * docs/architecture.md ("The mock's shader cores") says what is covered. */
#ifndef HCQ_DRIVERS_MOCK_AMD_ISA_H
#define HCQ_DRIVERS_MOCK_AMD_ISA_H

#include "compiler/amdgpu_isa.h"
#include "drivers/mock/mock_amd.h"

#include <stdint.h>

/* ** a decoded program: every instruction reachable from the entry */
typedef struct mai_prog {
    const mock_gpu *gpu;
    uint64_t entry;
    uint64_t lo, hi;       /* the bytes decoded: [lo, hi) */
    uint8_t *bytes;        /* their copy, checked against memory at each dispatch */
    amdi_target t;
    uint32_t n;
    amdi_inst *ins;        /* in address order; a VOPD is two at one address */
    uint64_t *va;          /* per instruction */
    uint32_t *target;      /* per instruction: a branch's target index (UINT32_MAX: none) */
    uint32_t *next;        /* per instruction: the index that follows (UINT32_MAX: none decoded) */
    uint32_t bad;          /* instructions that did not decode (executing one is an exception) */
} mai_prog;

/* Decodes (or finds in the GPU's cache) the program at entry. NULL with
 * why filled when the code cannot be read. The result stays valid while
 * the caller holds it (mai_prog_put). */
mai_prog *mai_prog_get(mock_gpu *gpu, const amdi_target *t, uint64_t entry, char *why, size_t why_size);
void mai_prog_put(mai_prog *p);
/* The instruction index at va, or UINT32_MAX. */
uint32_t mai_prog_index(const mai_prog *p, uint64_t va);

/* ** a dispatch */
typedef struct mai_dispatch {
    mock_gpu *gpu;
    mock_amd_gpu *agpu;
    const mai_prog *prog;
    const char *kernel;      /* for messages: the code object's kernel name where known, else "0x<entry>" */
    amdi_target t;
    unsigned wave;           /* 32 or 64 */
    uint32_t grid[3], block[3];
    uint32_t user_sgprs, ud[16];
    uint32_t rsrc1, rsrc2, rsrc3;
    bool tgid_en[3], tg_size_en, scratch_en, packed_tid;
    unsigned tidig;          /* TIDIG_COMP_CNT: work-item ids enabled (0: x, 1: x y, 2: x y z) */
    uint32_t lds_bytes;
    uint64_t scratch_base;   /* COMPUTE_DISPATCH_SCRATCH_BASE */
    uint64_t scratch_wave;   /* bytes of scratch per wave (TMPRING WAVESIZE) */
    uint32_t scratch_waves;  /* TMPRING WAVES */
    bool ieee;               /* RSRC1.IEEE_MODE */
    uint32_t mode;           /* the MODE register's start value (denormals, rounding) */
    uint64_t watchdog_ns;    /* CPU time a work-group may take before the watchdog ends the dispatch (0: none) */
    bool memcheck;           /* HCQ_MOCK_CHECK=memcheck: LDS reads of unwritten bytes and races between barriers,
                                global accesses outside the bytes allocated (base/memcheck.c) */
    const volatile int *cancel;
} mai_dispatch;

/* why a wave stopped (mai_wave.stop) */
typedef enum mai_stop {
    MAI_RUN = 0, MAI_ENDED, MAI_BARRIER, MAI_FAULT, MAI_ILLEGAL, MAI_CANCELLED, MAI_WATCHDOG, MAI_TRAP, MAI_CHECK,
} mai_stop;

/* a wave's state */
typedef struct mai_wave {
    uint32_t s[AMDI_SREG_COUNT]; /* the scalar file (amdgpu_isa.h's AMDI_SREG_* layout) */
    uint8_t scc;
    uint8_t stop;        /* mai_stop */
    uint16_t id;         /* wave in its work-group */
    uint32_t pc;         /* instruction index */
    uint64_t mask;       /* the lanes the wave has (32 or 64 ones) */
    uint32_t *v;         /* VGPRs: v[r * 64 + lane] */
    uint32_t *a;         /* AGPRs (gfx90a, gfx940) */
    uint64_t scratch;    /* this wave's private segment (the flat scratch base) */
    uint64_t executed;
    uint32_t mode;
    struct mai_group *g;
} mai_wave;

/* a work-group in flight */
typedef struct mai_group {
    const mai_dispatch *d;
    struct mai_run *run;
    uint32_t id[3];
    uint32_t nwaves;
    mai_wave *waves;
    uint8_t *lds;
    /* memcheck's shadow of each LDS byte: written since the group began;
     * the last writer and the readers since the last barrier (epoch << 8 |
     * wave + 1; a reader of 0xff: several waves) */
    uint8_t *lds_init;
    uint32_t *lds_writer, *lds_reader;
    uint32_t epoch;          /* barriers passed */
    uint32_t scratch_slot;  /* first wave slot in the scratch ring */
    uint64_t cpu_start;      /* the worker thread's CPU time as the group began (the watchdog's) */
    /* the allowed-range cache (one per group; accesses check it first) */
    uint64_t rlo, rhi;
    bool rw;
    /* memcheck: accesses of the current instruction refused (each
     * reported), the first one's address and report; refused accesses go
     * to the sink (loads read 0) so every lane is checked before the wave
     * stops */
    uint32_t mc_bad;
    uint64_t mc_va;
    bool mc_write;
    char mc_msg[800];
    _Alignas(16) uint8_t mc_sink[64];
} mai_group;

/* the dispatch's outcome, first error wins (mock_amd_isa.c) */
void mai_fault(mai_wave *w, uint64_t va, bool write, const char *fmt, ...) HCQ_PRINTF(4, 5);
void mai_illegal(mai_wave *w, const char *fmt, ...) HCQ_PRINTF(2, 3);
/* memcheck: lane l's LDS access of n bytes at a (atomic: no race check);
 * false after reporting */
bool mai_lds_check(mai_wave *w, const amdi_inst *in, unsigned l, uint64_t a, unsigned n, bool write, bool atomic);

/* instruction text for messages: "pc 0x...: mnemonic operands" */
void mai_describe(const mai_wave *w, const amdi_inst *in, char *buf, size_t size);

/* ** the seams: each executes one instruction of its kind; false when the
 * wave stopped (fault, illegal) */
bool mai_salu(mai_wave *w, const amdi_inst *in);
bool mai_smem(mai_wave *w, const amdi_inst *in);
bool mai_valu(mai_wave *w, const amdi_inst *in);
bool mai_vopd(mai_wave *w, const amdi_inst *x, const amdi_inst *y);
bool mai_mma(mai_wave *w, const amdi_inst *in); /* MFMA, WMMA (mock_amd_isa_mma.c) */
bool mai_ds(mai_wave *w, const amdi_inst *in);
bool mai_vmem(mai_wave *w, const amdi_inst *in);

/* memory the wave may touch: host pointer for [va, va + size), checked
 * against the GPU's mappings (the group caches the last allowed range) and
 * under memcheck against the allocations' sizes; NULL after reporting the
 * fault. lane: the lane's (MAI_SCALAR: a scalar load's) */
#define MAI_SCALAR 0xffu
void *mai_mem(mai_wave *w, const amdi_inst *in, unsigned lane, uint64_t va, uint32_t size, bool write);

/* ** helpers the seams share */
static inline uint64_t mai_exec(const mai_wave *w)
{
    return ((uint64_t)w->s[AMDI_SREG_EXEC] | (uint64_t)w->s[AMDI_SREG_EXEC + 1] << 32) & w->mask;
}
static inline uint64_t mai_sreg64(const mai_wave *w, unsigned r)
{
    return (uint64_t)w->s[r] | (uint64_t)w->s[(r + 1) & 127] << 32;
}
/* a lane mask as the wave keeps it in an SGPR (pair in wave64) */
static inline uint64_t mai_mask_of(const mai_wave *w, const amdi_opnd *o)
{
    if (o->kind != AMDI_O_SGPR) return o->kind == AMDI_O_CONST ? o->imm & w->mask : 0;
    uint64_t v = w->s[o->reg];
    if (w->mask >> 32) v |= (uint64_t)w->s[(o->reg + 1) & 127] << 32;
    return v & w->mask;
}
void mai_write_mask(mai_wave *w, const amdi_opnd *o, uint64_t m);
/* a scalar source (32 or 64 bits) */
uint64_t mai_ssrc(const mai_wave *w, const amdi_opnd *o);
void mai_sdst(mai_wave *w, const amdi_opnd *o, uint64_t v, unsigned n);

/* the apertures flat addresses fall in (KFD's gfx9+ layout:
 * kfd_flat_memory.c MAKE_LDS_APP_BASE_V9 / MAKE_SCRATCH_APP_BASE_V9) */
#define MAI_SHARED_BASE 0x1000000000000ull
#define MAI_PRIVATE_BASE 0x2000000000000ull
#define MAI_APERTURE_SIZE 0x100000000ull

#endif
