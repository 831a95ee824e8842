/* drivers/mock/mock_nv*: the NVIDIA part of the mock GPU.
 *   mock_nv.c      models, the device files and their ioctl dispatch,
 *                  mmaps, UVM (nvidia-uvm.ko)
 *   mock_nv_rm.c   the RM object tree: allocations, frees, memory
 *                  mappings, the escapes (nvidia.ko's resource server);
 *   mock_nv_ctrl.c RM_CONTROL; mock_nv_vmm.c NV01_MEMORY_VIRTUAL and
 *                  RM_MAP_MEMORY_DMA (mock_nv_obj.h: their shared tree)
 *   mock_nv_gpu.c  the GPU: a thread per channel that fetches GPFIFO
 *                  entries through GPPut, decodes the pushbuffer, runs host
 *                  semaphores, QMD launches and copy-engine work, and
 *                  reports through semaphores and the channel's error
 *                  notifier;
 *   mock_nv_launch.c the SM's side of a launch: a cubin's SASS checked
 *                  against the QMD and run as its host twin or on the SASS
 *                  executor (mock_sass*.c; the default, compiler/isa.h), or kernel IR.
 * The ABI structs and command formats are the backend's own definitions
 * (drivers/nv/nv_abi.h, nv_hw.h): the mock checks what it receives against
 * the same layouts the driver defines. Internal to drivers/mock, except the
 * test hooks at the end. */
#ifndef HCQ_DRIVERS_MOCK_NV_H
#define HCQ_DRIVERS_MOCK_NV_H

#include "drivers/mock/mock.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/nv/nv_hw.h"

#include <stdatomic.h>

/* ** GPU models: one row per part (mock_nv.c), naming its family (the
 * classes, QMD, register file, carve-outs: compiler/nv_chips.c) by SM
 * version, and what the part has beyond its family: the die's counts and
 * what floorsweeping left, memory, and what the monitoring controls read */
typedef struct mnv_model {
    const char *name;      /* the config name: "H100" */
    const char *full_name; /* what the name-string control reports */
    uint16_t pci_device;
    uint32_t sm_version;   /* GR SM_VERSION, which names the family: 0x900 */
    uint32_t gpcs, tpcs_per_gpc, sms_per_tpc, max_warps_per_sm; /* the die's ("litter") counts */
    uint32_t enabled_tpcs;  /* what floorsweeping left (GR GET_GPC_MASK / GET_TPC_MASK) */
    uint64_t vram_bytes;
    /* monitoring (mock_nv_mon.c): sensors, PCIe link, board ids, ECC */
    mock_sensor_model sensors;
    uint8_t link_speed, link_width; /* NV2080 codes: speed 4 = Gen4, 5 = Gen5 */
    uint16_t subsys_vendor, subsys_device;
    uint8_t revision;
    bool ecc, datacenter;           /* datacenter parts stay in P0 */
} mnv_model;

/* ** one emulated GPU */
typedef struct mnv_gpu {
    mock_gpu *g;
    const mnv_model *m;
    const nv_family *f; /* m's family */
    uint32_t index, gpu_id, minor;
    uint8_t uuid[16];
    atomic_int opened;  /* /dev/nvidiaN fds open (RM needs one before GET_ID_INFO) */
    atomic_bool paused; /* test hook: engines take no work */
    pthread_mutex_t fault_lock; /* last_error, the groups' fault rings and icache */
    /* the SMs' instruction cache, as far as stale code goes: programs
     * launched since the last QMD that invalidated it, by code address,
     * with a digest of the code seen there */
    struct {
        uint64_t va, digest;
    } icache[16];
    uint32_t icache_n;
    char last_error[1024]; /* the last channel error, as the kernel log would say it */
    volatile uint8_t *usermode; /* CPU mapping of the usermode page, doorbell at +0x90 */
    _Atomic uint64_t boost_until_ns; /* NV2080_CTRL_CMD_PERF_BOOST holds P0 until then (UINT64_MAX: cleared by hand) */
    atomic_uint cache_flushes;       /* NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE calls RM accepted */
} mnv_gpu;

/* The enabled TPCs of GPC gpc of model m (a bit each), spread over the
 * GPCs as evenly as the part's count allows; 0 past the die's GPCs. */
uint32_t mnv_tpc_mask(const mnv_model *m, uint32_t gpc);

mnv_gpu *mnv_gpu_by_index(uint32_t i);
uint32_t mnv_gpu_count(void);
const char *mnv_driver_version(void);

/* ** channels (mock_nv_gpu.c) */
typedef struct mnv_chan mnv_chan;
/* the MMU faults a graphics context took, as RM's KernelGraphicsContext
 * keeps them (kernel_graphics_context.c kgrctxRecordMmuFault_IMPL): a
 * ring of 4 where head == tail is empty, so the last 3, oldest first;
 * only GR faults in a GPC (the compute engine's) are recorded. One per
 * channel group, under the GPU's fault_lock. */
typedef struct mnv_fault_ring {
    nv_mmu_fault_entry e[4];
    uint32_t head, tail;
} mnv_fault_ring;

typedef struct mnv_chan_args {
    mnv_gpu *gpu;
    uint32_t cls, chid;
    uint64_t gpfifo_va;
    uint32_t entries;
    mock_bo *userd_bo;
    uint64_t userd_off;
    mock_bo *notifier_bo;
    atomic_bool *scheduled; /* the channel group's */
    mnv_fault_ring *gr_faults; /* the channel group's graphics context's */
} mnv_chan_args;
/* NULL on out of memory */
mnv_chan *mnv_chan_create(const mnv_chan_args *a);
/* binds the engine object and starts the engine thread */
int mnv_chan_bind(mnv_chan *c, uint32_t engine_cls);
bool mnv_chan_has_engine(const mnv_chan *c);
void mnv_chan_destroy(mnv_chan *c);
/* a channel error (Xid `code`, the notifier, a stopped channel) and an MMU
 * fault, as the engine reports them; both return the engine's fault code */
int mnv_chan_error(mnv_chan *c, uint32_t code, const char *fmt, ...) HCQ_PRINTF(3, 4);
int mnv_chan_mmu_fault(mnv_chan *c, uint64_t va, bool write, const char *what);
/* the engine's stop code, reporting nothing: a kernel was cancelled because
 * the channel is being freed (its device is closing) */
int mnv_chan_cancelled(mnv_chan *c);
mnv_gpu *mnv_chan_gpu(const mnv_chan *c);
/* The SM error state RM keeps for c (NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES):
 * SMs v->startingSM.. (v->numSMsToRead of the GPU's sms), and whether c
 * took an MMU fault */
void mnv_chan_sm_errors(mnv_chan *c, nv_sm_error_states *v, uint32_t sms);
/* The SM's side of a QMD launch (mock_nv_launch.c): runs the kernel at
 * prog with constant bank 0 at cb0; regs are the compute subchannel's
 * method state. 0, or the channel's error. */
int mnv_run_kernel(mnv_chan *c, const uint32_t *q, int ver, const uint32_t *regs, uint64_t prog, uint64_t cb0,
                   uint64_t cb0_size, const uint32_t grid[3], const uint32_t block[3]);
/* the usermode page of c's GPU was mapped at addr (or moved): doorbells */
void mnv_chan_set_doorbell(mnv_chan *c, volatile uint8_t *usermode);
/* connects (or, paused, disconnects) the doorbells of g's channels */
void mnv_gpu_pause_doorbells(mnv_gpu *g, bool paused);

/* ** monitoring controls (mock_nv_mon.c): temperatures, utilization,
 * P-state, PCI, processes, ECC and RC error counts, answered from the
 * mock's sensors (mock_gpu_sensors) with RM's checks. True when cmd is one
 * of them (*status then holds RM's answer). */
bool mnv_monitor_control(mnv_gpu *g, uint32_t cmd, void *params, uint32_t size, uint32_t *status);
/* a channel error (Xid) happened on g: RM's error journal counts it */
void mnv_rc_error_note(mnv_gpu *g, uint32_t xid, const char *what);

/* ** the RM side (mock_nv_rm.c); fd kinds for ioctls */
enum { MNV_FD_CTL = 1, MNV_FD_DEV, MNV_FD_UVM };
typedef struct mnv_fd mnv_fd;
struct mnv_fd {
    int kind;
    mnv_gpu *gpu;       /* MNV_FD_DEV */
    bool registered;    /* REGISTER_FD done (MNV_FD_DEV) */
    /* a pending CPU mapping set up by RM_MAP_MEMORY with this fd */
    mock_bo *map_bo;
    uint64_t map_off, map_len;
    bool map_usermode;
    mnv_gpu *map_gpu;
    /* UVM state (MNV_FD_UVM): a va_space (UVM_INITIALIZE, with its flags)
     * or the file that keeps a va_space's mm (UVM_MM_INITIALIZE) */
    bool uvm_init, uvm_mm;
    uint64_t uvm_flags;
    struct mnv_uvm *uvm;
};
int mnv_rm_ioctl(mnv_fd *f, unsigned long req, void *arg);
void mnv_rm_close_fd(mnv_fd *f);
void mnv_rm_fini(void);
/* live RM objects (tests check that a failed bring-up freed everything) */
uint32_t mnv_rm_objects(void);
/* a memory object of a client for UVM: its bo (NULL for host memory
 * described by address) and size; false if there is none */
bool mnv_rm_memory(uint32_t hclient, uint32_t hmem, mock_bo **bo, uint64_t *size, uint64_t *host_va);
/* the flags of the vaspace UVM dups for GPU g, or what RM answers UVM
 * (nvGpuOpsDupAddressSpace in src/nvidia/src/kernel/rmapi/nv_gpu_ops.c):
 * NV_ERR_INVALID_CLIENT, NV_ERR_OBJECT_NOT_FOUND, NV_ERR_INVALID_OBJECT (not
 * a vaspace), NV_ERR_OTHER_DEVICE_FOUND (another GPU's) */
uint32_t mnv_rm_vaspace(uint32_t hclient, uint32_t hvaspace, const mnv_gpu *g, uint32_t *flags);
/* UVM set (on) or unset the vaspace's page directory */
void mnv_rm_vaspace_pdb(uint32_t hclient, uint32_t hvaspace, bool on);
/* whether the channel exists with its engine object bound */
bool mnv_rm_channel_ready(uint32_t hclient, uint32_t hchannel);
/* UVM_REGISTER_CHANNEL bound (on) or UNREGISTER_CHANNEL unbound the channel */
void mnv_rm_channel_bind(uint32_t hclient, uint32_t hchannel, bool on);

/* ** UVM (mock_nv.c) */
int mnv_uvm_ioctl(mnv_fd *f, unsigned long cmd, void *arg);
void mnv_uvm_close_fd(mnv_fd *f);

/* the RM status field of an escape / UVM command (fault injection) */
uint32_t *mnv_status_field(int kind, unsigned long req, void *arg);

/* ** test hooks (tests and bench/ include this header) */
/* Adds a model (a part of a family hcq knows, as one row) that nv=NAME can
 * then name; the row must outlive the mock. false when the table is full. */
bool mock_nv_add_model(const mnv_model *m);
/* Engines of NV GPU `index` take no new work while paused (their doorbells
 * are disconnected too, so submitting costs what it costs on hardware). */
void mock_nv_pause(uint32_t index, bool paused);
/* RM objects alive in the emulated driver. */
uint32_t mock_nv_live_objects(void);
/* What the last channel error of NV GPU `index` was about (the detail the
 * kernel's log has and the error notifier does not: the QMD field, the
 * instruction); "" if none. */
void mock_nv_last_error(uint32_t index, char *buf, size_t size);

#endif
