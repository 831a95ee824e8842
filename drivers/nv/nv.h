/* drivers/nv: the NVIDIA backend (Ampere, Ada, Hopper) by raw ioctls to
 * nvidia.ko and nvidia-uvm.ko, no libcuda. Files:
 *   nv_abi.h     our definitions of the driver's structs (+ _Static_assert)
 *   nv_hw.h/.c   GPFIFO, methods, QMD field table, packet builders
 *   nv_rm.c      RM / UVM calls with messages naming the step and the status;
 *                driver version check; the supported driver families
 *   nv_names.c   the escapes, classes and controls as tables (sizes per
 *                driver version), shared with the mock and the tracer
 *   nv_va.c      the process-wide GPU virtual address allocator
 *   nv_mem.c     video and pinned host memory, GPU (UVM) and CPU mappings
 *   nv_bringup.c open/close: client, device, channels, ... (nv-facts §2)
 *   nv_queue.c   encoders, submission (GPFIFO + doorbell), faults, describe
 *   nv_program.c the cubin loader and per-program QMD templates
 *   nv_selftest.c the first-run paths and the self-test at open
 *   nv_telemetry.c temperatures, utilization, processes... (hcq info, top)
 *   nv.c         the backend table */
#ifndef HCQ_DRIVERS_NV_NV_H
#define HCQ_DRIVERS_NV_NV_H

#include "compiler/elf.h"
#include "drivers/backend.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/nv/nv_hw.h"

#include <pthread.h>

/* ** the supported driver families; what differs between them in struct
 * sizes is in the class and control tables (nv_class_params,
 * nv_ctrl_params in nv_names.c), read with the driver's major */
typedef struct nv_abi_rev {
    const char *family;       /* "570", "575", "580" */
    uint32_t major_lo, major_hi; /* driver majors this row covers */
} nv_abi_rev;
/* The row for a driver version string ("580.95.05"), or NULL. */
const nv_abi_rev *nv_abi_for_version(const char *version);
/* "570.x to 589.x": the range nv_abi_for_version accepts, for messages */
const char *nv_abi_supported_range(void);

/* ** the family of a GPU (compiler/nv_chips.h: classes, QMD, launch ABI,
 * register file), picked from the SM version the GPU reports */
typedef nv_family nv_gen;
/* The family of SM version sm (0x900 = sm_90); NULL and a message
 * naming the GPU for unsupported ones (Blackwell, pre-Ampere). */
const nv_gen *nv_gen_for_sm(uint32_t sm_version, const char *gpu_name);

/* ** the paths a first run chooses between (issue 22; docs/architecture.md
 * "First-run paths"): where hcq's choice differs from the one proven on
 * hardware and no vendor source settles it, the proven one is the
 * default and hcq's the alternative; the self-test at open (nv_selftest.c)
 * moves to the alternative where a default hangs or faults. */
enum nv_acq_path {
    NV_ACQ_CIRC_GEQ64,   /* ACQ_CIRC_GEQ, 64-bit payload: the proven stack's wait, in clc86f.h */
    NV_ACQ_STRICT_GEQ64, /* ACQ_STRICT_GEQ, 64-bit: documented for the Ampere channel (clc56f.h) only */
};
enum nv_local_path {
    NV_LOCAL_MIN,  /* every launch has >= 0x240 bytes of local memory per thread (the proven stack) */
    NV_LOCAL_LAZY, /* none until a kernel has a stack (hcq's first choice) */
};
enum nv_ce_path {
    NV_CE_REL32, /* two one-word releases: the value's low word with the timestamp, then its high word (UVM's form) */
    NV_CE_REL64, /* one release with SEMAPHORE_PAYLOAD_SIZE 64-bit and the timestamp (layout undocumented) */
};
typedef struct nv_paths {
    uint8_t acquire; /* nv_acq_path (families without ACQ_STRICT_GEQ documented choose; others use STRICT_GEQ) */
    uint8_t qmd;     /* NV_QMD_V03 / NV_QMD_V04, among the versions the compute class documents */
    uint8_t local;   /* nv_local_path */
    uint8_t ce;      /* nv_ce_path (copy classes with 64-bit semaphores) */
} nv_paths;
struct nv_dev;
/* the defaults for d's family (d->gen set) */
void nv_paths_default(struct nv_dev *d);

/* ** process-wide state: /dev/nvidiactl, the root client, UVM, the card
 * list. Shared by every open NV device, made by the first open and torn
 * down by the last close (so nothing stays open between uses). */
struct nv_gpu;
typedef struct nv_proc {
    int refs;
    int fd_ctl, fd_uvm, fd_uvm2;
    uint32_t hclient;
    char version[64];
    bool is_mock;             /* the driver says it is hcq's emulation */
    const nv_abi_rev *abi;
    uint32_t major;           /* the driver's major version: 580 */
    nv_card_info cards[NV_CARD_INFO_MAX];
    uint32_t ncards;
    uint32_t next_handle; /* client-chosen handles (RM_ALLOC_MEMORY) */
    struct nv_gpu *gpus[NV_CARD_INFO_MAX]; /* per card, while some device uses it */
    /* UVM_ENABLE_PEER_ACCESS asked (once per pair of cards) and its answer */
    bool peer_asked[NV_CARD_INFO_MAX][NV_CARD_INFO_MAX];
    uint32_t peer_status[NV_CARD_INFO_MAX][NV_CARD_INFO_MAX];
    /* GPUs unregistered from UVM so far: each took its peer access and its
     * mappings of every range with it, so peer bits older than this are
     * stale (under the peer lock) */
    uint32_t peer_epoch;
    uint32_t card_gone_epoch[NV_CARD_INFO_MAX]; /* peer_epoch when each card last left */
} nv_proc;

/* ** what every open device of one GPU shares: the RM device and
 * subdevice, the usermode page, the vaspace and UVM's registrations (UVM
 * takes a GPU, and one vaspace for it, once per process) */
typedef struct nv_gpu {
    int refs;
    const nv_card_info *card;
    int fd_dev;
    uint32_t hdevice, hsubdevice, husermode, hvaspace;
    uint8_t uuid[16];
    bool uvm_gpu, uvm_vaspace;
    volatile uint8_t *usermode;
    const nv_gen *gen;
    char name[128];
    uint32_t sm_version, num_sms, max_warps_per_sm, gpcs, tpcs_per_gpc, sms_per_tpc;
    uint64_t vram_bytes, vram_free_bytes;
} nv_gpu;

/* ** channels (one compute, one copy) */
enum { NV_CH_COMPUTE = HCQ_QUEUE_COMPUTE, NV_CH_COPY = HCQ_QUEUE_COPY };

typedef struct nv_chan {
    const char *name;          /* "compute", "copy" */
    uint32_t hchannel, hobject, token;
    uint32_t cls;              /* engine object class */
    /* GPFIFO ring + USERD in video memory (a slice of nv_dev.gpfifo_area) */
    volatile uint64_t *ring;
    uint64_t ring_va;
    uint32_t entries;
    volatile uint8_t *userd;
    /* pushbuffer: a dword ring in host memory, filled in order */
    drv_mem pb;
    uint32_t *pb_cpu;
    uint32_t pb_dw;
    uint64_t pb_head;          /* dword counter */
    uint64_t put;              /* entries submitted (counter) */
    uint64_t *pb_end;          /* per entry slot: pb_head after that entry */
    /* Progress: entry k ends with a host semaphore release (WFI disabled)
     * of k + 1 here, so the value is the number of entries whose words the
     * channel has consumed. Space is reclaimed from it alone: GP_GET moves
     * when a segment *begins*, and USERD's copy of it is written back late
     * or not at all (open-gpu-doc manuals/ampere/ga100/dev_pbdma.ref.txt
     * "GP_GET", dev_ram.ref.txt "RAMUSERD", which recommends exactly this). */
    volatile uint64_t *progress; /* in nv_dev.sync */
    uint64_t progress_va;
    const char **what;         /* per entry slot: the first kernel it launches (a program's name), for
                                * fault messages: a program outlives its launches (freeing it syncs) */
    uint8_t *more;             /* per entry slot: it launches more than that one */
    drv_mem notifier;          /* error notifier (system memory, CPU-mapped) */
    uint64_t uvm_base;         /* the channel's UVM range (context buffers) */
    bool uvm_registered;
    pthread_mutex_t lock;      /* one submitter at a time */
    bool lock_init;
} nv_chan;

typedef struct nv_dev {
    nv_proc *proc;
    nv_gpu *gpu;              /* shared; the fields below up to usermode are its */
    const nv_card_info *card;
    const nv_gen *gen;
    int fd_dev;
    uint32_t hdevice, hsubdevice, husermode, hvaspace, htsg, hctxshare, hdebugger;
    uint8_t uuid[16];
    volatile uint8_t *usermode; /* the 64 KiB usermode page: doorbell at +0x90 */
    uint32_t sm_version, num_sms, max_warps_per_sm, gpcs, tpcs_per_gpc, sms_per_tpc;
    uint64_t vram_bytes, vram_free_bytes;
    nv_paths path;            /* the first-run paths in use */
    int qmd_ver;              /* NV_QMD_V03 / NV_QMD_V04: path.qmd */
    char path_note[256];      /* what the self-test found, for hcq info and HCQ_DEBUG=1 */
    nv_chan ch[2];
    uint32_t ring_entries;    /* GPFIFO entries per channel */
    drv_mem gpfifo_area;
    /* a host page engines release: internal completions at 16 * channel,
     * the channels' progress at NV_SYNC_PROGRESS + 16 * channel */
    drv_mem sync;
    uint64_t sync_value;
    pthread_mutex_t sync_lock;
    /* the local-memory (stack) buffer, grown when a program needs more */
    drv_mem local_mem;
    uint32_t local_per_thread;
    uint64_t fixed_bytes;      /* memory the backend itself holds */
    atomic_int fault_reported;
} nv_dev;

#define NV_SYNC_PROGRESS 64u

static inline nv_dev *nv_of(hcq_device *dev) { return (nv_dev *)dev->priv; }

/* ** RM and UVM calls (nv_rm.c). Each returns HCQ_OK, or an error whose
 * message names `what` (the step), the call and the RM status or errno. */
hcq_status nv_proc_get(nv_proc **out);
void nv_proc_put(nv_proc *p);
/* the cards the driver lists (valid entries), without keeping state */
uint32_t nv_card_count(void);
void nv_why_absent(char *buf, size_t size);

hcq_status nv_alloc_object(nv_proc *p, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *handle,
                       const char *what);
hcq_status nv_control(nv_proc *p, uint32_t object, uint32_t cmd, void *params, uint32_t size, const char *what);
/* status-returning variant for callers that handle some statuses */
hcq_status nv_control_status(nv_proc *p, uint32_t object, uint32_t cmd, void *params, uint32_t size,
                                uint32_t *status, const char *what);
void nv_free_object(nv_proc *p, uint32_t parent, uint32_t handle);
hcq_status nv_uvm(nv_proc *p, int fd, uint32_t cmd, void *params, size_t size, uint32_t *status_field,
                  const char *what);
/* errors of a failed ioctl (-errno) and of an RM status, naming `what` and the call */
hcq_status nv_ioctl_err(int rc, const char *what, const char *call);
hcq_status nv_status_fail(uint32_t status, const char *what, const char *call);
/* an RM status as an hcq_status (NO_MEMORY is HCQ_ENOMEM) */
hcq_status nv_status_err(uint32_t status);
/* opens /dev/nvidiaN and registers it with the control fd */
hcq_status nv_open_dev_fd(nv_proc *p, uint32_t minor, int *fd_out, const char *what);

/* ** virtual addresses (nv_va.c): one allocator for the process, so two
 * GPUs never hand out the same address. `low` ranges lie below 2^40
 * (pushbuffers, QMDs, semaphores on Ampere). Reserved with PROT_NONE. */
hcq_status nv_va_alloc(uint64_t size, uint64_t align, bool low, uint64_t *va_out);
void nv_va_free(uint64_t va, uint64_t size);

/* ** memory (nv_mem.c) */
hcq_status nv_mem_alloc(hcq_device *dev, uint64_t size, uint32_t flags, drv_mem *out);
void nv_mem_free(hcq_device *dev, drv_mem *m);
/* maps owner's memory m for dev's GPU too (UVM peer access for video
 * memory); HCQ_ENOTSUP with the drivers' answers where there is no path */
hcq_status nv_peer_map(hcq_device *dev, hcq_device *owner, drv_mem *m);
/* A GPU left UVM (its last device closed): forget its peer access and
 * every peer mapping made before (nv_mem.c). */
void nv_peer_gpu_gone(nv_proc *p, uint32_t card);
/* system memory for RM's own use (error notifiers), CPU-mapped, not on the GPU */
hcq_status nv_sysmem_alloc(hcq_device *dev, uint64_t size, drv_mem *out, const char *what);
void nv_sysmem_free(hcq_device *dev, drv_mem *m);

/* ** bring-up (nv_bringup.c) */
hcq_status nv_open(hcq_device *dev, uint32_t index);
void nv_close(hcq_device *dev);
bool nv_halt(hcq_device *dev);
/* Frees the channel group with its channels and makes them again (on
 * the paths now in nv_dev.path): the self-test's reset after a hang */
hcq_status nv_channels_reset(hcq_device *dev);
/* The first-run self-test (nv_selftest.c): probes the paths at open and
 * keeps the ones that work; fills the device's `paths` property */
hcq_status nv_selftest(hcq_device *dev);

/* ** queues (nv_queue.c) */
hcq_status nv_rec_wait(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status nv_rec_signal(drv_rec *r, hcq_val addr, hcq_val value);
hcq_status nv_rec_timestamp(drv_rec *r, hcq_val addr);
hcq_status nv_rec_barrier(drv_rec *r);
hcq_status nv_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims);
hcq_status nv_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size);
hcq_status nv_submit(hcq_device *dev, drv_rec *r);
void nv_poll(hcq_device *dev);
void nv_describe(hcq_device *dev, char *buf, size_t size);
void nv_signal_written(hcq_device *dev, uint64_t va);
/* the driver's readings for hcq_device_telemetry (nv_telemetry.c) */
void nv_telemetry(hcq_device *dev, hcq_telemetry *t);
/* Runs a stream the backend built itself on channel ch and waits for it
 * (bring-up, program uploads): appends a release of the sync page. */
hcq_status nv_run_internal(hcq_device *dev, drv_rec *r, const char *what);
/* the backend-state slots of drv_rec.be the NV encoders use */
enum {
    NV_BE_LAST_EXEC = 0, /* the last command was a launch: its QMD (CPU address) */
    NV_BE_RELEASES = 1,  /* release slots of that QMD already used */
    NV_BE_NAMES = 2,     /* the first launched program of the stream (for fault messages) */
    NV_BE_LAUNCHES = 3,  /* launches in the stream */
};

/* ** programs (nv_program.c) */
typedef struct nv_prog {
    uint32_t magic;
    drv_mem image;          /* code, constant banks, globals */
    uint64_t code_va;
    uint32_t code_bytes;
    uint32_t param_base;    /* kernargs' offset in constant bank 0 */
    uint32_t cbuf0_bytes;   /* param_base + parameters */
    uint32_t qmd[NV_QMD_MAX_DW]; /* the launch template: everything but dims, cbuf0, releases */
    uint8_t cbuf0_prefix[0x400]; /* the driver words below param_base */
} nv_prog;
#define NV_PROG_MAGIC 0x4E565052u
hcq_status nv_program_load(hcq_device *dev, const void *bin, size_t size, const char *kernel, hcq_program *p);

/* a parsed cubin, before a device is involved (tests use it on cubins
 * from ptxas and nvcc) */
typedef struct nv_cubin {
    cc_elf e;
    const char *name;          /* the kernel (points into the binary) */
    uint32_t sm;               /* 90 */
    uint32_t regs, stack, param_base, param_bytes, cbuf0_bytes, shared_user, nparams;
    uint32_t barriers;         /* EIATTR_NUM_BARRIERS: barriers the kernel uses */
    bool have_cbank;           /* the parameter base came from EIATTR_PARAM_CBANK */
    hcq_param_info params[256];
    const uint8_t *text;
    uint64_t text_bytes;
    uint32_t text_index;
    uint64_t *sec_off;         /* per section: its offset in the image, UINT64_MAX if not loaded */
    uint8_t *image;            /* the loadable sections laid out */
    uint64_t image_bytes;
} nv_cubin;
hcq_status nv_cubin_parse(const void *bin, size_t size, const char *id, const char *kernel, nv_cubin *out);
/* applies the relocations for an image loaded at base_va */
hcq_status nv_cubin_relocate(nv_cubin *c, uint64_t base_va, const char *id);
void nv_cubin_free(nv_cubin *c);
void nv_program_free(hcq_device *dev, hcq_program *p);

/* shared and local memory windows programmed at bring-up (facts §3:
 * tinygrad's values; the shared one is 4 GiB aligned as Hopper requires) */
#define NV_SHARED_WINDOW 0x729400000000ull
#define NV_LOCAL_WINDOW 0x729300000000ull
/* the initial stack pointer kernels load from cbuf0 + 0x28: 16 MiB (the
 * top of a thread's local window) less the 0x240 bytes the ABI keeps
 * above it, which a launch's local memory must include */
#define NV_CBUF0_STACK_INIT 0x00FFFDC0u
#define NV_LOCAL_RESERVE (0x01000000u - NV_CBUF0_STACK_INIT)
/* makes the local-memory buffer hold per_thread bytes for every thread the
 * GPU can have resident (programs SET_SHADER_LOCAL_MEMORY_*) */
hcq_status nv_local_ensure(hcq_device *dev, nv_dev *nv, uint32_t per_thread);

#endif
