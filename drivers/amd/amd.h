/* drivers/amd: the AMD backend. It talks to amdkfd (/dev/kfd) and the DRM
 * render node with its own ioctls (amd_abi.h), allocates memory at virtual
 * addresses the CPU and the GPU share, and runs a PM4 compute queue (an AQL
 * queue carrying PM4 on multi-XCC parts, docs/amd-xcc.md) and an SDMA copy
 * queue whose rings it fills itself. Everything goes through the syscall
 * seam, so drivers/mock runs it unchanged.
 *
 * Files: amd_topology.c (sysfs), amd_dev.c (the KFD process, bring-up,
 * faults, the backend table), amd_mem.c (memory), amd_queue.c (queues,
 * rings, submission), amd_enc.c (the encoders), amd_co.c (code objects),
 * amd_program.c (loading programs, scratch). */
#ifndef HCQ_DRIVERS_AMD_H
#define HCQ_DRIVERS_AMD_H

#include "drivers/amd/amd_abi.h"
#include "drivers/amd/amd_pm4.h"
#include "drivers/amd/amd_regs.h"
#include "drivers/backend.h"

#include <pthread.h>
#include <stdatomic.h>

/* ** topology (amd_topology.c) */
#define AMD_KFD_TOPOLOGY "/sys/devices/virtual/kfd/kfd/topology/nodes"

typedef struct amd_node {
    uint32_t node;      /* sysfs node number */
    uint32_t gpu_id;    /* KFD's id for the GPU */
    uint32_t gfx_version;
    char arch_name[16]; /* "gfx1100", also for GPUs we do not drive */
    const amd_arch *arch; /* NULL: not one we drive */
    uint32_t render_minor;
    uint32_t vendor_id, device_id, domain, location_id;
    uint32_t simd_count, simd_per_cu, max_waves_per_simd, array_count, simd_arrays_per_engine;
    uint32_t num_xcc, lds_kib, wave_front_size, max_slots_scratch_cu;
    uint32_t clock_mhz; /* max_engine_clk_fcompute, 0 if absent */
    uint32_t cu_count;   /* all XCCs */
    uint32_t cu_per_xcc, se_per_xcc;
    uint64_t vram_bytes; /* from mem_banks */
    /* queue buffer sizes KFD checks (read from properties when the kernel
     * publishes them, else computed as KFD computes them) */
    uint32_t ctl_stack_size, cwsr_size, debug_memory_size, eop_size;
    uint32_t wave_num; /* per XCC, as KFD counts for CWSR */
    bool is_mock;      /* "hcq_mock 1": the driver is hcq's mock GPU */
} amd_node;

/* The GPU nodes in node order (at most max): their count, or -errno when
 * the topology is absent. */
int amd_topology_read(amd_node *out, int max);
/* GPU nodes the topology may show: 8 MI300X in CPX mode are 64 (KFD makes
 * a node per partition) */
#define AMD_MAX_NODES 128
/* Parses a node's properties text into n (fields it knows; the rest kept
 * at 0) and derives the counts and queue sizes. For tests. */
void amd_node_parse(amd_node *n, const char *properties);
void amd_node_derive(amd_node *n);
/* KFD's VGPR bytes per CU in its context-save sizing, from the chip table
 * (the mock sizes its checks with the same) */
uint32_t amd_cwsr_vgpr_bytes(uint32_t gfx_version);

/* ** the KFD process: one per OS process, shared by every AMD device. The
 * kernel keeps its state (the VM each render node was bound to, runtime
 * enable) until the process exits, so we keep /dev/kfd and the render nodes
 * open for as long: binding a GPU to a second render file is refused. */
typedef struct amd_proc_gpu {
    uint32_t gpu_id;
    int render_fd;
    bool acquired;
} amd_proc_gpu;

/* Opens /dev/kfd (once), checks the ABI version, opens and binds the GPU's
 * render node (once). On failure nothing half-made is kept: the next call
 * retries the step that failed. */
hcq_status amd_proc_acquire(const amd_node *n, int *kfd_fd, int *render_fd, uint32_t *ver_major,
                            uint32_t *ver_minor);
/* The GPU's slot among those the process acquired (0 ..), or -1; and the
 * gpu_id in a slot (0: none). Slots stay for the process's life, so they
 * name peers in drv_mem.peers. */
int amd_proc_gpu_slot(uint32_t gpu_id);
uint32_t amd_proc_gpu_id(int slot);
/* Which compute queue devices opened from now on use: AMD_QUEUE_PM4 or
 * AMD_QUEUE_AQL, or -1 (the default) for the arch's choice (amd_arch
 * aql_compute). For tests that show why multi-XCC parts need AQL
 * (docs/amd-xcc.md), and for bring-up on new parts. */
void amd_proc_set_compute_queue(int kind);
int amd_proc_compute_queue(void);
/* ** first-run paths (issue 22): where hcq's encoding and the one a public
 * runtime-free stack has run on these GPUs (tinygrad) differ and no vendor
 * source settles which the hardware takes, the proven one is the default
 * and hcq's the alternative. The self-test at device open (amd_selftest.c)
 * runs each on the queues just made; a hang or fault switches that path
 * and retries. docs/amd-xcc.md and docs/architecture.md say why each. */
typedef struct amd_paths {
    bool wait64;       /* gfx11 PM4 waits: one WAIT_REG_MEM64 (hcq's), not two 32-bit WAIT_REG_MEMs (proven) */
    bool hdp_one_bit;  /* HDP flush: MEC1 pipe 0's client bit, EQUAL (hcq's, the kernel driver's form for its own
                        * pipe), not every request bit waited for with >= (proven) */
    bool priv0;        /* gfx11 COMPUTE_PGM_RSRC1.PRIV 0 (as LLVM's descriptor has it), not 1 (proven) */
    bool dispatch_pm4; /* AQL queues (gfx9): DISPATCH_DIRECT inside a PM4 IB (hcq's), not the AQL kernel-dispatch
                        * packet (proven) */
} amd_paths;
#define AMD_PATHS_PROVEN ((amd_paths){0})
/* The paths devices opened from now on start from (tests, bring-up);
 * NULL: the proven defaults. The self-test may still switch them. */
void amd_proc_set_paths(const amd_paths *p);
amd_paths amd_proc_paths(void);
/* Whether devices opened from now on run the self-test (default on). */
void amd_proc_set_selftest(bool on);
bool amd_proc_selftest(void);
/* "waits: two 32-bit WAIT_REG_MEMs; HDP flush: every bit, >=; ..." for
 * the arch (the parts that apply to it) */
void amd_paths_describe(const amd_paths *p, const amd_arch *a, bool aql, char *buf, size_t size);

/* Calls an ioctl on /dev/kfd: 0 or -errno. */
int amd_kfd_ioctl(unsigned long cmd, void *arg);
/* "CREATE_QUEUE", ... for messages */
const char *amd_kfd_ioctl_name(unsigned long cmd);

/* ** the device */
typedef struct amd_dev amd_dev;

enum amd_queue_kind { AMD_QUEUE_PM4, AMD_QUEUE_AQL, AMD_QUEUE_SDMA };

/* recent dispatches, to name the kernel a fault hit */
#define AMD_HIST 64
typedef struct amd_hist {
    uint64_t pos; /* ring position (PM4 dwords, AQL packets) where its command started */
    uint32_t prog_id;
} amd_hist;

typedef struct amd_queue {
    amd_dev *ad;
    const char *name;  /* "compute", "sdma" */
    enum amd_queue_kind kind;
    drv_mem ring, ctl, eop, cwsr, ib; /* ib: AQL only, the PM4 the packets point at */
    uint32_t ring_bytes;
    uint32_t queue_id;
    atomic_bool created; /* KFD has the queue (cleared by a halt) */
    volatile uint64_t *wptr, *rptr; /* in the ctl page */
    volatile uint64_t *doorbell;
    uint64_t put;      /* monotonic: dwords (PM4), bytes (SDMA), packets (AQL) */
    uint64_t ib_put;   /* AQL: monotonic byte offset into ib */
    uint64_t *ib_start; /* AQL: where each ring slot's packet's PM4 starts in ib */
    uint64_t submits;
    pthread_mutex_t lock; /* one submitter at a time */
    amd_hist hist[AMD_HIST];
    uint32_t nhist;
} amd_queue;

struct amd_dev {
    hcq_device *dev;
    amd_node node;
    const amd_arch *arch;
    amd_paths paths;       /* the first-run paths in use (the self-test may have switched some) */
    char selftest[384];    /* what the self-test found (drv_selftest's report): hcq_device_props.paths */
    /* the self-test's buffer and kernel, kept until close: freeing them
     * at open would leave an open that ignored a failed free */
    drv_mem probe;
    hcq_program probe_prog;
    int kfd_fd, render_fd;
    uint32_t kfd_major, kfd_minor;
    uint32_t mem_event, hw_event; /* KFD event ids (0: none) */
    void *doorbells;      /* the /dev/kfd doorbell slice, mapped once */
    uint64_t doorbell_off;
    amd_queue compute, sdma;
    /* a queue KFD would not destroy may still run, reading and writing any
     * of this device's memory: from then on nothing of it is freed
     * (amd_queue.c queue_halt, amd_mem.c amd_bo_free) */
    atomic_bool queue_kept;
    /* scratch (private segment) for kernels that use it, grown on demand;
     * outgrown buffers stay until close (work in flight may use them) */
    pthread_mutex_t scratch_lock;
    drv_mem scratch;
    uint32_t scratch_lane_bytes;   /* per work-item bytes it was sized for */
    uint32_t scratch_tmpring;      /* COMPUTE_TMPRING_SIZE for it */
    uint64_t scratch_per_xcc;
    drv_mem *old_scratch;
    uint32_t nold_scratch;
    /* names of the programs loaded, by id (for fault messages); kept until
     * close so a late fault still names its kernel */
    pthread_mutex_t names_lock;
    char (*prog_names)[64];
    uint32_t nprog_names, cap_prog_names;
};

static inline amd_dev *amd_of(hcq_device *dev) { return (amd_dev *)dev->priv; }

/* the driver's readings for hcq_device_telemetry, from sysfs (amd_telemetry.c) */
void amd_telemetry(hcq_device *dev, hcq_telemetry *t);

/* ** memory (amd_mem.c) */
/* Allocates size bytes with KFD flags, maps it for this GPU, and for the
 * CPU at the same address when cpu is set (userptr memory always is). */
hcq_status amd_bo_alloc(amd_dev *ad, uint64_t size, uint32_t kfd_flags, bool cpu, drv_mem *out);
/* Unmaps and frees the buffer; keeps it (allocated, mapped, its addresses
 * reserved) once a queue of the device could not be destroyed. */
void amd_bo_free(amd_dev *ad, drv_mem *m);
hcq_status amd_mem_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out);
void amd_mem_free(hcq_device *dev, drv_mem *m);
/* The backend's peer_map: m, memory of owner, mapped for dev's GPU too. */
hcq_status amd_peer_map(hcq_device *dev, hcq_device *owner, drv_mem *m);

/* ** queues (amd_queue.c) */
hcq_status amd_queues_create(amd_dev *ad);
/* Destroys the KFD queues (their memory stays until close): after a fault
 * KFD has evicted them, and nothing of ours may run on. A queue KFD still
 * has after asking again sets queue_kept. */
void amd_queues_halt(amd_dev *ad);
void amd_queues_destroy(amd_dev *ad);
hcq_status amd_submit(hcq_device *dev, drv_rec *r);
void amd_describe(hcq_device *dev, char *buf, size_t size);
/* The engine has not consumed everything submitted to it. */
bool amd_queue_busy(amd_queue *q);
/* One line on where the queue stands, for a message: its name, id and
 * ring, what was submitted, the write pointer published and the read
 * pointer the engine wrote back (raw, and as consumed). */
void amd_queue_state(const amd_queue *q, char *buf, size_t size);
/* The name of the kernel the queue was most likely running when it
 * stopped (its last dispatch before the read pointer), or NULL. */
const char *amd_queue_kernel_at_fault(amd_queue *q, char *buf, size_t size);
/* ring sizes (bytes): HCQ_RING_SHIFT, else these */
#define AMD_PM4_RING_BYTES (256u << 10)
#define AMD_SDMA_RING_BYTES (256u << 10)
#define AMD_AQL_RING_BYTES (64u << 10)
#define AMD_MIN_RING_BYTES 1024u /* KFD clamps smaller rings to this */

/* ** commands on AQL queues: each command is one packet, marked in the
 * stream by a boundary NOP [NOP header, command dwords] (amd_enc.c) */
#define AMD_CMD_BOUNDARY PM4_HDR(0x10, 1)
/* a wait on an AQL queue is a barrier-value packet of its own, recorded as
 * [AMD_CMD_BARRIER_VALUE, magic, address lo, hi, value lo, hi] (a NOP with
 * five body dwords, all patchable but the magic) */
#define AMD_CMD_BARRIER_VALUE PM4_HDR(0x10, 5)
#define AMD_CMD_BARRIER_VALUE_MAGIC 0x56524142u /* "BARV" */
/* an AQL kernel-dispatch packet on an AQL queue, recorded as
 * [AMD_CMD_DISPATCH, magic, program id, the packet's 16 dwords] (a NOP
 * with 18 body dwords; the packet's fields are patchable) */
#define AMD_CMD_DISPATCH PM4_HDR(0x10, 18)
#define AMD_CMD_DISPATCH_MAGIC 0x50534944u /* "DISP" */
/* a NOP naming the program a dispatch runs: [NOP(2) header, magic, id] */
#define AMD_MARK_EXEC 0x48435145u /* "EQCH" */

/* ** encoders (amd_enc.c) */
hcq_status amd_rec_wait(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status amd_rec_signal(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status amd_rec_timestamp(drv_rec *r, hcq_val addr);
hcq_status amd_rec_barrier(drv_rec *r);
hcq_status amd_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims);
hcq_status amd_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size);
/* The encoders above pick the arch from r->dev; tests encode for an arch
 * without a device through these. */
hcq_status amd_enc_wait(const amd_arch *a, drv_rec *r, hcq_val addr, hcq_val value);
hcq_status amd_enc_signal(const amd_arch *a, drv_rec *r, hcq_val addr, hcq_val value);
hcq_status amd_enc_timestamp(const amd_arch *a, drv_rec *r, hcq_val addr);
hcq_status amd_enc_barrier(const amd_arch *a, drv_rec *r);
hcq_status amd_enc_copy(const amd_arch *a, drv_rec *r, hcq_val dst, hcq_val src, hcq_val size);
/* The same with the first-run paths given (tests; the ones above take the
 * device's, or the proven defaults without a device) */
hcq_status amd_enc_wait_with(const amd_arch *a, const amd_paths *p, drv_rec *r, hcq_val addr, hcq_val value);
hcq_status amd_enc_barrier_with(const amd_arch *a, const amd_paths *p, drv_rec *r);
/* largest size a variable-size copy may have (see sdma_copy_linear) */
#define AMD_COPY_VAR_MAX (2ull << 20)

/* ** code objects (amd_co.c) */
enum amd_hidden {
    AMD_HID_NONE = 0,
    AMD_HID_BLOCK_COUNT_X, AMD_HID_BLOCK_COUNT_Y, AMD_HID_BLOCK_COUNT_Z,
    AMD_HID_GROUP_SIZE_X, AMD_HID_GROUP_SIZE_Y, AMD_HID_GROUP_SIZE_Z,
    AMD_HID_REMAINDER_X, AMD_HID_REMAINDER_Y, AMD_HID_REMAINDER_Z,
    AMD_HID_GRID_DIMS,
    AMD_HID_OTHER, /* known to exist, left zero */
};
typedef struct amd_hidden_arg {
    uint32_t offset, size;
    enum amd_hidden kind;
} amd_hidden_arg;

/* What the loader needs from a code object, parsed without a device. */
typedef struct amd_co {
    char name[64];
    uint8_t mach;            /* e_flags & 0xff: EF_AMDGPU_MACH */
    uint64_t image_size;     /* bytes from address 0 to the end of the last segment */
    uint64_t kd_offset;      /* the kernel descriptor, from the image start */
    uint64_t entry_offset;   /* the code entry, from the image start (256-byte aligned) */
    amd_kernel_descriptor kd;
    uint32_t nparams;        /* explicit arguments */
    hcq_param_info *params;  /* malloc'd */
    uint32_t nhidden;
    amd_hidden_arg hidden[16];
    uint32_t kernarg_bytes;  /* kernarg segment size (explicit + hidden) */
    uint32_t kernarg_align;
    uint32_t wavefront_size;
    uint32_t max_flat_workgroup_size;
    uint32_t sgprs, vgprs;
} amd_co;

/* Parses a linked AMDGPU code object (ET_DYN/ET_EXEC, PT_LOAD segments, or
 * SHF_ALLOC sections at their addresses when it has no program headers):
 * the kernel named `kernel` (NULL: the object's only kernel; with several
 * the error lists them), found through its `<name>.kd` symbol, its
 * arguments from the NT_AMDGPU_METADATA note. */
hcq_status amd_co_parse(const void *bin, size_t size, const char *kernel, amd_co *out);
/* Copies the loadable image (segments placed as linked, zero-filled) into
 * dst (image_size bytes), relocated for address base_va. */
void amd_co_place(const void *bin, size_t size, uint8_t *dst, uint64_t base_va, uint64_t image_size);
void amd_co_free(amd_co *co);
/* "gfx1100" for an EF_AMDGPU_MACH value, or NULL */
const char *amd_co_mach_name(uint8_t mach);

/* ** decoding (amd_decode_aql.c): an AMD vendor AQL packet carrying a PM4
 * indirect buffer: its address and dwords (false for other packets) */
bool amd_aql_pm4_ib(const uint32_t *pkt, uint64_t *va, uint32_t *ndw);

/* User SGPRs the kernel descriptor asks for, in ABI order: each entry's
 * first SGPR and count; the total in *count. */
enum amd_sgpr_kind {
    AMD_SGPR_PRIVATE_SEGMENT_BUFFER, AMD_SGPR_DISPATCH_PTR, AMD_SGPR_QUEUE_PTR, AMD_SGPR_KERNARG_PTR,
    AMD_SGPR_DISPATCH_ID, AMD_SGPR_FLAT_SCRATCH_INIT, AMD_SGPR_PRIVATE_SEGMENT_SIZE, AMD_SGPR_KIND_COUNT
};
typedef struct amd_sgpr_layout {
    int8_t first[AMD_SGPR_KIND_COUNT]; /* -1: absent */
    uint32_t count;
} amd_sgpr_layout;
void amd_sgpr_layout_of(uint16_t kernel_code_properties, amd_sgpr_layout *out);

/* ** programs (amd_program.c) */
typedef struct amd_prog {
    uint32_t magic;
    uint32_t id;           /* index into amd_dev.prog_names */
    amd_co co;
    drv_mem code;          /* the placed image */
    uint64_t kd_va, entry_va;
    uint32_t rsrc1, rsrc2, rsrc3; /* as dispatched: LDS size folded in (PRIV is the device's path) */
    uint32_t initiator;
    amd_sgpr_layout sgprs;
} amd_prog;
#define AMD_PROG_MAGIC 0x414d4450u
hcq_status amd_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p);
void amd_program_free(hcq_device *dev, hcq_program *p);
/* Scratch for kernels needing lane_bytes of private memory per work-item:
 * grows the device's scratch if needed; *va and *tmpring describe it. */
hcq_status amd_scratch_ensure(amd_dev *ad, uint32_t lane_bytes, uint64_t *va, uint64_t *per_xcc, uint32_t *tmpring);
/* The program name for id (for fault messages), into buf. */
const char *amd_prog_name(amd_dev *ad, uint32_t id, char *buf, size_t size);

/* ** faults (amd_dev.c) */
void amd_poll(hcq_device *dev);

/* ** the self-test at device open (amd_selftest.c, on drivers/selftest.c):
 * on the queues just made, a signal, a wait, a barrier, a kernel writing a
 * known value and a copy, each under a short timeout; a stage that hangs
 * or faults switches its first-run paths, recreates the queues and runs
 * again. HCQ_OK with ad->paths and ad->selftest saying what works; an
 * error when a stage fails on every combination of its paths. */
hcq_status amd_selftest(amd_dev *ad);
/* frees what the self-test kept (at close, after the queues) */
void amd_selftest_free(amd_dev *ad);
/* the self-test kernel's machine code for the family (for its test) */
const uint8_t *amd_selftest_code(amd_family fam, size_t *size);

#endif
