/* What the AMD mock's files share: the emulated amdkfd process (GPUs,
 * buffer objects, events, queues) in mock_amd.c, and the engines that run
 * the queues: the command processor (PM4 and the XCCs of multi-XCC parts in
 * mock_amd_cp.c, its AQL packet processor in mock_amd_aql.c) and the SDMA
 * engine in mock_amd_sdma.c. */
#ifndef HCQ_DRIVERS_MOCK_AMD_H
#define HCQ_DRIVERS_MOCK_AMD_H

#include "drivers/amd/amd_abi.h"
#include "drivers/amd/amd_regs.h"
#include "drivers/mock/mock.h"

#include <pthread.h>

#define MOCK_AMD_MAX_XCC 8
/* the GWS entries of a GPU (the properties' num_gws): amdgpu's
 * gds.gws_size, 64 on every generation (linux amdgpu gfx_v9_0.c,
 * gfx_v10_0.c, gfx_v11_0.c: *_set_gds_init) */
#define MOCK_AMD_NUM_GWS 64u

/* One emulated part: a row of mock_amd.c's model table (designated
 * initializers), naming its chip in the AMD chip table
 * (compiler/amd_chips.h), which gives the chip's own facts; the row gives
 * what the board adds (its size, its sysfs). */
typedef struct mock_amd_model {
    const char *name; /* the chip: "gfx1100" */
    /* KFD topology properties */
    uint32_t device_id;
    uint32_t simd_count, simd_per_cu, max_waves_per_simd, array_count, simd_arrays_per_engine;
    uint32_t num_xcc;
    uint64_t vram_bytes;
    bool publishes_queue_sizes; /* a kernel new enough to show cwsr_size, ctl_stack_size */
    uint32_t clock_mhz;         /* max_engine_clk_fcompute */
    /* amdgpu sysfs (mock_amd_sysfs.c) */
    mock_sensor_model sensors;
    uint16_t revision, subsys_vendor, subsys_device;
    const char *link_speed; /* current_link_speed as the PCI core prints it */
    double power_cap_w;
    uint32_t mclk_mhz;
    uint8_t metrics_minor;  /* gpu_metrics v1.<minor> */
    bool edge_sensor, power_average, ras;
    /* amdgpu DRM (mock_amd_drm.c) */
    uint32_t gb_addr_config; /* what AMDGPU_INFO_READ_MMR_REG reads of GB_ADDR_CONFIG */
    /* filled from the chip's row when the mock starts */
    uint32_t gfx_version, lds_kib, wave_front_size;
} mock_amd_model;
/* Adds a model row (it must live as long as the mock uses it), for the
 * test that shows a new chip takes one row; its chip must be in the chip
 * table. false if the name is taken or there is no room. */
bool mock_amd_add_model(const mock_amd_model *m);

typedef struct mock_amd_gpu {
    mock_gpu *g;
    const mock_amd_model *model; /* &model_row, the row with the chip's facts filled */
    mock_amd_model model_row;
    const amd_chip *chip;
    const amd_arch *arch;
    uint32_t index;    /* among AMD GPUs */
    uint32_t node;     /* KFD topology node */
    uint32_t gpu_id;
    uint32_t render_minor;
    /* what KFD checks queue buffers against (kfd_queue.c) */
    uint32_t eop_size, ctl_stack_size, cwsr_size, debug_memory_size;
    char properties[2048];
    /* the process's binding: which render file ACQUIRE_VM used (0: none) */
    uint64_t acquired_file;
    /* the doorbell slice: the mock's own view and the process's mapping */
    mock_bo *doorbells;
    uint8_t *doorbell_cpu;
    _Atomic(uint8_t *) doorbell_user; /* the process's mapping of the doorbells */
    /* slots of live queues; KFD hands out the lowest free one */
    uint64_t doorbell_used[KFD_DOORBELL_SLICE_BYTES / 8 / 64];
    uint32_t next_logical_xcc; /* KFD rotates the first logical XCC per queue */
    atomic_uint faults;        /* GPU memory faults (kfd's per-process fault counter) */
    char last_error[1024];     /* the last fault or hang, as the kernel log would say it */
} mock_amd_gpu;

/* ** the amdgpu sysfs files monitoring reads (mock_amd_sysfs.c): the render
 * node's device directory (hwmon, gpu_metrics, pp_dpm_*, mem_info_*, RAS,
 * PCI) and /sys/class/kfd/kfd/proc. Same contract as mock_driver's
 * read_file / list_dir / exists: 1 when the path is the mock's. */
int mock_amd_sysfs_read(const char *path, char *buf, size_t size, ssize_t *rc);
int mock_amd_sysfs_list(const char *path, void (*fn)(void *, const char *), void *arg, int *rc);
int mock_amd_sysfs_exists(const char *path);

typedef struct mock_amd_queue mock_amd_queue;

/* one XCC's command processor on a compute queue */
typedef struct mock_amd_cp {
    mock_amd_queue *q;
    uint32_t xcc;
    mock_engine *engine;  /* cleared (under the queue's xcc_lock) before it stops */
    mock_engine *running; /* the engine running this XCC, as its step saw it */
    uint32_t regs[AMD_SH_REG_END - AMD_SH_REG_BASE];
    uint64_t rptr;      /* next dword (PM4) or packet (AQL) */
    /* an indirect buffer being run (AQL packets, INDIRECT_BUFFER) */
    bool in_ib;
    uint64_t ib_va;
    uint32_t ib_ndw, ib_pos;
    uint32_t *ib;       /* a copy of the IB's dwords */
    uint64_t dumped;    /* ring dumped up to here (HCQ_MOCK_DUMP) */
} mock_amd_cp;

struct mock_amd_queue {
    uint32_t id;
    uint32_t type; /* KFD_QUEUE_* */
    mock_amd_gpu *gpu;
    uint64_t ring_va, ring_size, wptr_va, rptr_va;
    uint64_t eop_va, eop_size, cwsr_va, cwsr_size; /* compute queues */
    uint32_t doorbell; /* slot in the gpu's doorbell slice */
    uint32_t gws;      /* the GWS entries ALLOC_QUEUE_GWS gave it (one queue per GPU may hold them) */
    char name[32];
    atomic_int stopped; /* evicted after a fault, or destroyed */
    /* compute: one command processor per XCC that runs the queue (every
     * XCC for AQL; the target XCC alone for PM4) */
    uint32_t pm4_target_xcc; /* CREATE_QUEUE queue_percentage bits 15:8 */
    uint32_t ncp;
    mock_amd_cp cp[MOCK_AMD_MAX_XCC];
    pthread_mutex_t xcc_lock; /* the read pointer all XCCs agree on */
    /* AQL: per ring slot, how many XCCs have finished its packet; the
     * last one completes it (its completion signal, once) */
    atomic_uint *aql_done;
    /* sdma */
    mock_engine *sdma;
    uint64_t sdma_rptr, sdma_dumped;
    mock_amd_queue *next;
};


/* ** the emulated KFD process (mock_amd.c owns it, mock_amd_kfd.c answers
 * its ioctls); lock guards everything in it */
typedef struct mock_amd_bo {
    uint64_t handle, va, size, mmap_offset;
    uint32_t flags;
    mock_amd_gpu *gpu;
    mock_bo *bo; /* NULL for userptr */
    uint32_t mapped; /* GPU index bits */
} mock_amd_bo;

typedef struct mock_amd_event {
    uint32_t id, type;
    bool signaled;
    kfd_event_data data;
} mock_amd_event;

enum { MOCK_AMD_FILE_KFD = 1, MOCK_AMD_FILE_RENDER = 2 };
typedef struct mock_amd_file {
    int kind;
    uint64_t id;
    mock_amd_gpu *gpu;
} mock_amd_file;

typedef struct mock_amd_proc {
    pthread_mutex_t lock;
    pthread_cond_t events_cond;
    bool up;
    mock_amd_gpu *gpus[8];
    uint32_t ngpus;
    bool runtime_enabled;
    int32_t xnack; /* SET_XNACK_MODE: the process's mode (0 off) */
    bool kfd_process; /* /dev/kfd was opened: KFD made the process (sysfs proc/<pid>) */
    uint64_t next_file, next_handle, next_offset;
    uint32_t next_event, next_queue;
    mock_amd_bo *bos;
    size_t nbos, cbos;
    mock_amd_event *events;
    size_t nevents, cevents;
    uint64_t event_page; /* the BO handle CREATE_EVENT was given for the signal page (0: none yet) */
    mock_amd_queue *queues;
    /* the process is under a debugger (a test's switch): KFD will not
     * destroy its queues then (kfd_device_queue_manager.c
     * destroy_queue_cpsch: qpd->is_debug, -EBUSY, the queue stays) */
    bool debugged;
} mock_amd_proc;

extern mock_amd_proc mock_amd_P;

mock_amd_gpu *mock_amd_gpu_by_id(uint32_t id);
void mock_amd_queue_free(mock_amd_queue *q);
/* /dev/kfd's ioctls (mock_amd_kfd.c) */
int mock_amd_ioctl(void *priv, unsigned long req, void *arg);
/* the render node's DRM and amdgpu ioctls (mock_amd_drm.c) */
int mock_amd_drm_ioctl(mock_amd_gpu *g, unsigned long req, void *arg);

/* ** the process (mock_amd.c) */
/* The GPU with index i among AMD GPUs, or NULL. */
mock_amd_gpu *mock_amd_gpu_at(uint32_t i);
/* 64-bit value of the queue's doorbell. */
uint64_t mock_amd_doorbell(const mock_amd_queue *q);
/* The engine stopped on a fault: records KFD's memory exception (va,
 * whether a write to read-only memory), stops every queue of the GPU (KFD
 * evicts them) and wakes event waiters. */
void mock_amd_memory_fault(mock_amd_gpu *gpu, uint64_t va, bool read_only, const char *what);
/* A hang-class error (a malformed packet): the queue stops, KFD would
 * reset the GPU; reported as a HW exception. why is printed. */
void mock_amd_hang(mock_amd_queue *q, const char *why);
/* An interrupt with a context id (RELEASE_MEM INT_SEL, a completion
 * signal's mailbox): signals the KFD event of that id, if the process has
 * one, waking its waiters. */
void mock_amd_interrupt(mock_amd_gpu *gpu, uint32_t ctxid);
/* GPU access check with the fault path: false after reporting a fault. */
bool mock_amd_access(mock_amd_queue *q, uint64_t va, uint64_t size, bool write, const char *what);
/* Test hook: what the last fault or hang of AMD GPU `index` was about
 * (the detail the kernel's log has and the events do not); "" if none. */
void mock_amd_last_error(uint32_t index, char *buf, size_t size);
/* The GPU clock (100 MHz). */
uint64_t mock_amd_clock(void);

/* The scratch buffer resource a gfx9 dispatch hands its code in the
 * PRIVATE_SEGMENT_BUFFER user SGPRs, checked as gfx9 reads word 3 (ROCR
 * amd_aql_queue.cpp FillBufRsrcWord3): swizzled, a lane index added, one
 * element per lane of the 64-lane wave, a valid DATA_FORMAT. gfx10/11's
 * layout read as gfx9's has an INDEX_STRIDE of 32: lanes 32-63 would share
 * lanes 0-31's scratch. false with the reason, or true. */
bool mock_amd_scratch_srd_ok(amd_family fam, const uint32_t w[4], char *why, size_t size);

/* ** the shader core's entry (mock_amd_launch.c). A dispatch reaches it the
 * same way from a PM4 DISPATCH_DIRECT and from an AQL kernel-dispatch
 * packet: the command processor has programmed the compute registers in
 * cp->regs (COMPUTE_PGM_LO/HI, RSRC1-3, USER_DATA_*, NUM_THREAD_*,
 * TMPRING_SIZE, DISPATCH_SCRATCH_BASE: from SET_SH_REG packets, or from
 * the AQL packet and its kernel descriptor as the packet processor does),
 * and hands over what the dispatch itself carries. The code finds its
 * kernarg pointer (and the rest of its initial state) in the user SGPRs,
 * as machine code does; kernargs repeats the pointer when the packet
 * names one (AQL), for messages and checks. */
typedef struct mock_amd_dispatch {
    const char *via;     /* "DISPATCH_DIRECT", "AQL kernel dispatch": for messages */
    uint64_t entry;      /* the program address, COMPUTE_PGM_LO/HI << 8 */
    uint64_t kernargs;   /* the AQL packet's kernarg_address; 0 from PM4 */
    uint32_t grid[3];    /* work-groups */
    uint32_t block[3];   /* work-items per work-group */
    uint32_t initiator;  /* COMPUTE_DISPATCH_INITIATOR (CS_W32_EN) */
    mock_split split;    /* this XCC's share of the work-groups */
} mock_amd_dispatch;
/* Runs the dispatch on the shader core: the machine code of a code object
 * the process loaded, or mock code. 0 when done, 1 once the queue has
 * stopped (a hang or fault, reported), also when the engine is being
 * stopped. */
int mock_amd_launch(mock_amd_cp *cp, const mock_amd_dispatch *d);

/* The compute unit's side of a dispatch whose program address holds a
 * registered code object's machine code (mock_amd_launch.c): checks the
 * registers against its kernel descriptor, reads the kernargs, runs its
 * host twin. 0, or 1 once the queue has stopped (hang or fault). */
int mock_amd_run_twin(mock_amd_cp *cp, const cc_twin_entry *e, const uint32_t grid[3], const uint32_t block[3],
                      uint32_t initiator, const mock_split *split);

/* ** doubts: where the drivers' sources do not settle what the hardware
 * does with a packet, the mock warns once per process (naming the doubt
 * and what the kernel driver writes instead) and goes on as the hardware
 * most likely would. key names the doubt; the warning is printed at most
 * once per key (at HCQ_DEBUG=1 under HCQ_MOCK=1, where hcq's driver takes
 * such forms knowingly; always for a program on the preloaded mock). */
void mock_amd_doubt(const char *key, const char *fmt, ...) HCQ_PRINTF(2, 3);

/* The shader core running the machine code at entry (mock_amd_isa.c,
 * by default and with HCQ_MOCK_SHADER=isa): the waves start from the registers the command
 * processor holds (COMPUTE_PGM_RSRC1/2/3, USER_DATA, TMPRING_SIZE and the
 * dispatch's scratch base), as the hardware starts them; kernel names the
 * kernel for messages (NULL: its address). 0 when done; 1 once the queue
 * has stopped (memory exception, illegal instruction, watchdog: reported),
 * also when the engine is being stopped. */
int mock_amd_isa_run(mock_amd_cp *cp, uint64_t entry, const uint32_t grid[3], const uint32_t block[3],
                     uint32_t initiator, const mock_split *split, const char *via, const char *kernel);
/* Whether machine code runs on the executor (compiler/isa.h, cc_isa_on: by default, or HCQ_MOCK_SHADER=isa). */
bool mock_amd_isa_on(const mock_amd_gpu *ag);
/* Instructions (per wave) the executor has run in this process. */
uint64_t mock_amd_isa_instructions(void);

/* ** engines */
hcq_status mock_amd_cp_start(mock_amd_queue *q);
hcq_status mock_amd_sdma_start(mock_amd_queue *q);
/* Stops the queue's engines (joins them). */
void mock_amd_queue_stop(mock_amd_queue *q);
/* Tells the engines where the process mapped the doorbell. */
void mock_amd_queue_bell(mock_amd_queue *q);

#endif
