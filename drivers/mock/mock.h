/* drivers/mock: the mock GPU. It emulates the kernel drivers and the
 * hardware behind the syscall seam, never our own driver: the NV and AMD
 * backends run unchanged on it (HCQ_MOCK=1).
 *
 * This header is the core every vendor mock builds on:
 *   - the syscall table: file descriptors of emulated device files, their
 *     ioctls and mmaps, and virtual files (sysfs) dispatched to the vendor
 *     mock that claims the path; everything else passes to libc;
 *   - memory: buffer objects of shared memory that keep no descriptor, and one process-wide map of
 *     virtual address ranges. An emulated GPU dereferences its virtual
 *     addresses directly (the drivers give the CPU and the GPU one address
 *     space), so a range exists as host memory exactly while it is mapped
 *     for the CPU or for some GPU; every engine and kernel access is checked
 *     against the GPU's mappings (an MMU), and a bad one is a fault the
 *     vendor mock reports through the driver's own path;
 *   - engines: a thread per engine that sees work only through the ring
 *     pointers in memory, woken by doorbells and by host writes, reporting
 *     progress so host waiters sleep instead of spinning;
 *   - the shader core: at a launch's program address, either serialized IR
 *     (mock-sm_* / mock-gfx* binaries: the IR interpreter runs it) or the
 *     machine code of a real cubin or code object, which runs itself on
 *     the vendor mock's executor (by default where one runs the target,
 *     compiler/isa.h; NV: mock_sass.h, AMD: mock_amd_isa.h), or with
 *     HCQ_MOCK_SHADER=twin as its host twin (compiler/twin.h: the GPU
 *     renderer's own text built for the host);
 *   - configuration and fault injection (HCQ_MOCK_CONFIG, or mock_configure
 *     in tests), random scheduling (HCQ_MOCK_SCHED), dumps (HCQ_MOCK_DUMP).
 *
 * Vendor mocks (mock_nv*.c, mock_amd*.c) fill a mock_driver table each. */
#ifndef HCQ_DRIVERS_MOCK_H
#define HCQ_DRIVERS_MOCK_H

#include "compiler/ir.h"
#include "compiler/twin.h"
#include "drivers/pool.h"
#include "drivers/sys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ** configuration: HCQ_MOCK_CONFIG="key=value,key=value"
 *   nv=MODEL[xN]        NVIDIA GPUs (default H100x1; models in mock_nv)
 *   nv_driver=VERSION   the NVIDIA driver version reported (default 580.95.05)
 *   amd=TARGET[xN]      AMD GPUs (default gfx1100x1; gfx942)
 *   vram=BYTES[K|M|G|T] device memory of every mock GPU (default: the model's)
 *   fail_ioctl=N[:E]    the N-th mock ioctl from now fails: E is an errno name
 *                       (ENOMEM) or number, or 0x.. a driver status (NV RM);
 *                       default EIO
 *   open_fail=PATH[:E]  opening PATH fails with errno E (default EACCES):
 *                       a device node the user may not open
 *   mmu_fault=VA        any GPU access to the page holding VA faults
 *   hang=ENGINE         that engine (e.g. nv0.compute, amd0.sdma) never runs
 *   ring_shift=N        vendor mocks that size rings from config use 2^N
 *   kfd_minor=N         the KFD ioctl ABI 1.N the AMD mock reports (default 15)
 *   nv_peer=LINK        between NV GPUs: pcie (default: peer access on
 *                       request), nvlink (always on) or none (refused)
 *   amd_peer=LINK       between AMD GPUs: pcie (default: peer-to-peer over
 *                       PCIe), xgmi (one hive) or none (a GPU's device
 *                       memory cannot be mapped for another; host memory
 *                       still can: every GPU reaches it)
 *   nv_gpget=WHEN       when an NV channel writes GP_GET back to USERD: idle
 *                       (default: once it runs out of work), eager (as it
 *                       begins each segment) or never (writeback disabled)
 *   refuse=NAME[+NAME]  the GPU hangs on the named encoding, one of two a
 *                       driver may choose between where no vendor source
 *                       settles which the hardware takes (mock_refusals
 *                       lists them), so a driver's fallback is tested; the
 *                       key may repeat
 *   watchdog_ms=N       a kernel the machine-code executor runs ends with the
 *                       channel watchdog's error after N ms of work (CPU time
 *                       of one of its workers; default 30000; 0: never)
 * HCQ_MOCK_SCHED=random:SEED[:MAX_US] makes engines pause at random points
 * (up to MAX_US, default 200 µs). HCQ_MOCK_DUMP=DIR writes every executed
 * stream segment (drivers/dump.h). Every value is checked: a bad one is an
 * error naming it, and from the environment it stops the process. */
typedef struct mock_config {
    char nv_model[32];
    uint32_t nv_count;
    char nv_driver[32];
    char amd_model[32];
    uint32_t amd_count;
    uint64_t vram_bytes; /* 0: the model's */
    uint32_t ring_shift; /* 0: the vendor's default */
    int nv_gpget;        /* MOCK_GPGET_* */
    int nv_peer;         /* MOCK_PEER_* */
    int amd_peer;        /* MOCK_PEER_* */
    uint32_t kfd_minor;  /* 0: 15 */
    uint32_t watchdog_ms; /* with watchdog_set; else the default */
    bool watchdog_set;
    /* fault injection */
    uint64_t fail_ioctl_at; /* absolute ioctl number that fails; 0 none */
    int fail_errno;
    uint32_t fail_status;   /* nonzero: a driver status instead of errno */
    uint64_t mmu_fault_va;  /* 0: none */
    char hang_engine[32];
    char open_fail_path[64]; /* opening this path fails with open_fail_errno */
    int open_fail_errno;
    uint64_t refuse;        /* bit i: mock_refusals[i].name is refused */
    /* scheduling and dumps */
    bool sched_random;
    uint64_t sched_seed;
    uint32_t sched_max_us;
    char dump_dir[512];
} mock_config;

enum { MOCK_GPGET_IDLE, MOCK_GPGET_EAGER, MOCK_GPGET_NEVER };
enum { MOCK_PEER_PCIE, MOCK_PEER_NVLINK, MOCK_PEER_NONE, MOCK_PEER_XGMI };

/* The active configuration (parsed from the environment on first use). */
const mock_config *mock_cfg(void);
/* Tears the mock down and sets it up again from spec (NULL: the
 * environment). Every device on the mock must be closed. For tests. */
hcq_status mock_configure(const char *spec);
/* The syscall table of the mock (drivers/sys.c asks for it under HCQ_MOCK). */
const hcq_sys *mock_sys(void);

/* ** refusable paths: each names an encoding whose hardware behaviour no
 * vendor source settles; with refuse=NAME the mock GPU hangs where it meets
 * it (the vendor mock says so, naming the switch), as the hardware would
 * if that encoding were wrong. One row per name; vendor mocks check with
 * mock_refused where they execute the encoding. */
typedef struct mock_refusal {
    const char *name;   /* "dispatch-aql" */
    const char *vendor; /* "amd", "nv" */
    const char *what;   /* the encoding, in words */
} mock_refusal;
extern const mock_refusal mock_refusals[];
extern const unsigned mock_refusal_count;
/* Is the path refused in the active configuration? (name must be a row) */
bool mock_refused(const char *name);

/* ** fault injection */
/* The injected failure for the ioctl now being made, if it is the one:
 * true with *err (errno, positive) or *status (driver status) set. Vendor
 * mocks call this once per ioctl, first thing. */
bool mock_ioctl_inject(int *err, uint32_t *status);
/* Makes the n-th ioctl from now (1 = the next) fail as described. */
void mock_fail_ioctl(uint64_t n, int err, uint32_t status);
/* Ioctls made through the mock so far. */
uint64_t mock_ioctl_count(void);

/* ** memory */
typedef struct mock_gpu mock_gpu;
typedef struct mock_bo {
    void *anchor; /* the pages, mapped PROT_NONE: no descriptor (sys_shm_create) */
    uint64_t size;
    mock_gpu *vram_of; /* device memory of that GPU (counted against it), or NULL for system memory */
    atomic_int refs;
} mock_bo;

/* A buffer object of size bytes; device memory of gpu when gpu != NULL.
 * NULL with *err = ENOMEM when the GPU's memory is used up. */
mock_bo *mock_bo_new(mock_gpu *gpu, uint64_t size, int *err);
/* A buffer object holding the process's own pages at [host, host + size)
 * (page-aligned): their contents are copied into it and it is mapped over
 * them, shared, so the CPU sees the same bytes at host as the GPU at any
 * other address the object is mapped at (a userptr a runtime maps at a GPU
 * address of its choosing, as KFD lets it). Writes other threads make to
 * the range while it is adopted may be lost. NULL with *err (EFAULT: the
 * range is not readable). */
mock_bo *mock_bo_adopt(uint64_t host, uint64_t size, int *err);
void mock_bo_ref(mock_bo *bo);
void mock_bo_unref(mock_bo *bo);
/* A CPU mapping of [off, off + len) of bo with prot, at addr (MAP_FIXED: replacing
 * what is there) or where the kernel chooses (addr NULL); NULL + *err */
void *mock_bo_map(mock_bo *bo, void *addr, uint64_t off, size_t len, int prot, int *err);

enum { MOCK_MAP_CPU = 1u << 31 }; /* with bit g: mapped for mock GPU g */
/* Maps [va, va + size) to bo at bo_offset (bo NULL: host memory the process
 * already has there, a userptr) for the CPU (MOCK_MAP_CPU) and/or GPUs
 * (bit gpu->index). The host mapping is made when the range first becomes
 * mapped by anyone. Returns 0 or -errno (EEXIST: a different object is
 * already mapped there). */
int mock_va_map(uint64_t va, uint64_t size, mock_bo *bo, uint64_t bo_offset, uint32_t who, bool writable);
/* A free range of size bytes of address space (reserved, inaccessible), for
 * mmaps that let the kernel choose; 0 on failure. */
uint64_t mock_va_reserve(uint64_t size);
/* Removes `who` from the mappings in [va, va + size); the host memory goes
 * when nobody maps it any more. 0 or -errno. */
int mock_va_unmap(uint64_t va, uint64_t size, uint32_t who);
/* The address where bo's first byte is mapped (by anyone), or 0. Emulated
 * engines read what the host writes (USERD, doorbells) at the host's own
 * address, so the host's release stores pair with their acquire loads. */
uint64_t mock_bo_va(const mock_bo *bo);
/* Byte off of bo at the process's own address while the process still maps
 * bo there for the CPU (base: what mock_bo_va said), else NULL. The address
 * map stays read-locked until mock_bo_host_end, so the mapping cannot go
 * meanwhile: an engine reads what the host writes (USERD's GP_PUT) at the
 * host's address while there is one (its release stores pair with the
 * engine's acquire loads), and through its own mapping of bo once the
 * process has unmapped it (as hardware reaches that memory whatever the
 * CPU maps: a channel outlives a munmap when freeing it failed). */
volatile uint8_t *mock_bo_host_begin(const mock_bo *bo, uint64_t base, uint64_t off);
void mock_bo_host_end(void);
/* May gpu access [va, va + size)? On false, why describes the mapping seen. */
bool mock_gpu_access(const mock_gpu *gpu, uint64_t va, uint64_t size, bool write, char *why, size_t why_size);
/* mock_gpu_access that on success also gives the whole range around va
 * that gpu may access the same way ([*lo, *hi); *writable), for kernels
 * that check once per range */
bool mock_gpu_range(const mock_gpu *gpu, uint64_t va, uint64_t size, bool write, uint64_t *lo, uint64_t *hi,
                    bool *writable, char *why, size_t why_size);
/* Kernels run between these (any GPU, any thread): host memory a GPU
 * mapping goes away with waits for them, so a kernel that checked a range
 * once never touches pages unmapped under it. */
void mock_kernels_begin(void);
void mock_kernels_end(void);

/* ** GPUs */
struct mock_gpu {
    uint32_t index;      /* bit in mapping masks; 0..30 */
    char name[16];       /* "nv0", "amd1" */
    char model[32];
    uint64_t vram_bytes;
    atomic_uint_fast64_t vram_used;
    struct drv_pool *pool; /* runs kernels, made on first use */
    pthread_mutex_t pool_lock;
    void *vendor;        /* the vendor mock's state */
    /* time its engines spent doing work (steps that made progress), ns;
     * the sensors below follow it */
    atomic_uint_fast64_t busy_ns;
    pthread_mutex_t sensor_lock;
    uint64_t sensor_t, sensor_busy;
    double sensor_util; /* 0..1, smoothed over about a second */
};

/* What the emulated sensors read now (mock_sensors.c), from how busy the
 * GPU's engines have been: utilization smoothed over about a second, and a
 * temperature, power and clock that follow it between the part's idle and
 * loaded values. Plausible numbers for the monitoring paths to read, not a
 * thermal model. */
typedef struct mock_sensor_model {
    double idle_c, load_c;     /* temperature */
    double idle_w, load_w;     /* board power */
    double idle_mhz, boost_mhz; /* shader clock */
} mock_sensor_model;
typedef struct mock_sensors {
    double util;   /* 0..100 */
    double temp_c, power_w, clock_mhz;
} mock_sensors;
mock_sensors mock_gpu_sensors(mock_gpu *g, const mock_sensor_model *m);

/* Adds a GPU (vendor mocks at init). */
mock_gpu *mock_gpu_add(const char *name, const char *model, uint64_t vram_bytes);

/* ** engines */
typedef enum mock_step {
    MOCK_STEP_IDLE,     /* nothing to do: sleep until kicked */
    MOCK_STEP_PROGRESS, /* did something: step again */
    MOCK_STEP_BLOCKED,  /* waiting on memory: sleep until a write or a short timeout */
    MOCK_STEP_STOPPED,  /* faulted: do nothing more */
} mock_step;

typedef struct mock_engine mock_engine;
typedef mock_step (*mock_step_fn)(mock_engine *e, void *ctx);

/* Starts a thread that calls step until stopped; name is e.g. "nv0.copy". */
mock_engine *mock_engine_start(mock_gpu *gpu, const char *name, mock_step_fn step, void *ctx);
/* Joins; NULL is fine. A kernel the engine runs is cancelled (it stops at
 * its next work-group or loop iteration), so this returns promptly. */
void mock_engine_stop(mock_engine *e);
/* Raises e's stop flag without waiting (stop several, then join each). */
void mock_engine_request_stop(mock_engine *e);
/* On an engine's thread: its stop flag, raised when it is being stopped
 * (shader cores hand it to the kernels they run); NULL elsewhere.
 * Closing a device stops its engines (the backend's halt: NV frees the
 * channel group, AMD destroys the kfd queues; both join the engine threads
 * here) before any program or memory of it is freed. A shader core that
 * runs host code (the host twins) must check this flag at least between
 * work-groups, as the interpreter does inside them, so that stop returns
 * promptly, and must never unload code an engine thread may still run:
 * after mock_engine_stop returns, none does. */
const volatile int *mock_engine_cancel_flag(void);
void mock_engine_kick(mock_engine *e);
/* Doorbell stores into [addr, addr + size) kick this engine. */
void mock_engine_set_doorbell(mock_engine *e, const volatile void *addr, size_t size);
const char *mock_engine_name(const mock_engine *e);
/* Called by vendor mocks after every semaphore/fence write an engine makes:
 * wakes host waiters and blocked engines. */
void mock_progress(void);
/* A random pause under HCQ_MOCK_SCHED=random (engines call it between
 * packets). */
void mock_sched_point(mock_engine *e);

/* ** the shader core */
typedef struct mock_fault {
    uint64_t va;      /* the faulting address */
    bool write;
    bool mmu;         /* the GPU's mappings refused va; otherwise a fault of
                         the SM's own (a misaligned or out-of-range access) */
    char what[768];   /* kernel, op, buffer, index, mapping seen */
} mock_fault;

/* Runs the kernel whose serialized IR sits at code_va, with its kernargs at
 * kernarg_va, over grid x block, on gpu. HCQ_EFAULT fills *fault: an access
 * the GPU's mappings refuse, including reading the code or the kernargs
 * (fault->mmu), or one the interpreter refuses itself (a misaligned vector,
 * local memory out of range);
 * other errors (malformed code) are HCQ_EFORMAT / HCQ_ELIMIT with a message;
 * HCQ_ESTATE: the engine is being stopped and the kernel was cancelled
 * (report nothing: the queue is going away). */
hcq_status mock_shader_run(mock_gpu *gpu, uint64_t code_va, uint64_t kernarg_va, const uint32_t grid[3],
                           const uint32_t block[3], mock_fault *fault);

/* A share of a launch's work-groups, for GPUs whose dispatch is split over
 * several partitions (AMD XCCs): work-group g (linear, x fastest) runs in
 * part (g / chunk) % nparts. */
typedef struct mock_split {
    uint32_t part, nparts, chunk;
} mock_split;
/* mock_shader_run over the work-groups of one part only (split NULL: all). */
hcq_status mock_shader_run_split(mock_gpu *gpu, uint64_t code_va, uint64_t kernarg_va, const uint32_t grid[3],
                                 const uint32_t block[3], const mock_split *split, mock_fault *fault);

/* The registered GPU binary whose kernel code sits at va on gpu, or NULL
 * (unmapped, or code no registered binary has). */
const cc_twin_entry *mock_twin_at(mock_gpu *gpu, uint64_t va);
/* The same among the binaries of that code that accept() takes (NULL: none) */
const cc_twin_entry *mock_twin_at_if(mock_gpu *gpu, uint64_t va, cc_twin_accept_fn accept, void *actx);
/* gpu is going away: forget what mock_twin_at found on it (a GPU made
 * later may get its address, and its programs the same addresses) */
void mock_twin_forget_gpu(const mock_gpu *gpu);

typedef struct mock_twin_launch {
    const cc_twin_entry *e;
    const void *const *args;  /* per param: its bytes, read where the machine code would, as the launch starts */
    uint32_t grid[3], block[3];
    const uint8_t *implicit;  /* AMD: the implicit kernel arguments */
    uint32_t barriers;        /* barrier ids the launch provides (NV: BARRIER_COUNT) */
    const mock_split *split;  /* NULL: every work-group */
} mock_twin_launch;
/* Runs e's host twin over the launch on gpu's worker pool. HCQ_EFAULT
 * fills *fault (va 0 unless a global access was refused) and *tf (what
 * kind: a refused access, a local index out of its array, a barrier the
 * launch lacks). */
hcq_status mock_twin_run(mock_gpu *gpu, const mock_twin_launch *l, mock_fault *fault, cc_twin_fault *tf);

/* ** dumps: writes a segment when HCQ_MOCK_DUMP is set */
void mock_dump(const mock_engine *e, const char *format, uint32_t arch, uint64_t va, const uint32_t *dw,
               uint32_t ndw);

/* ** vendor mocks */
typedef struct mock_driver {
    const char *name; /* "nv", "amd" */
    /* creates its GPUs from the config; 0 or -errno */
    int (*init)(const mock_config *cfg);
    /* stops its engines and frees everything */
    void (*fini)(void);
    /* 1 and *priv when the path is one of its device files, 0 if not its
     * path, -errno if it is but cannot be opened */
    int (*open)(const char *path, int flags, void **priv);
    int (*close)(void *priv);
    int (*ioctl)(void *priv, unsigned long request, void *arg);
    /* NULL with *err on failure */
    void *(*mmap)(void *priv, void *addr, size_t len, int prot, int flags, off_t offset, int *err);
    /* virtual files: 1 = handled (result in *rc), 0 = not its path */
    int (*read_file)(const char *path, char *buf, size_t size, ssize_t *rc);
    int (*list_dir)(const char *path, void (*fn)(void *, const char *), void *arg, int *rc);
    int (*exists)(const char *path);
} mock_driver;

extern const mock_driver mock_nv_driver;
extern const mock_driver mock_amd_driver;

/* The program's memory as a kernel driver reaches it (copy_from_user,
 * copy_to_user): false where the range is not mapped (or, out, not
 * writable), never a fault. The mock's ioctl entry copies every argument
 * this way; handlers use them for pointers inside arguments. */
bool mock_copy_from_user(void *dst, const void *user, size_t n);
bool mock_copy_to_user(void *user, const void *src, size_t n);

/* The private state of a mock fd opened by drv (NULL if fd is not one). */
void *mock_fd_priv(int fd, const mock_driver *drv);

/* ** preloaded (libhcqmock.so, tools/mock_preload.c): the mock behind libc
 * for any program */
/* Descriptors of emulated files are real ones from now on: a memfd each,
 * named "hcq-mock:PATH". */
void mock_use_real_fds(void);
/* Is fd an emulated file's? */
bool mock_fd_is_mock(int fd);
/* newfd is a duplicate of oldfd (dup, dup2, dup3, F_DUPFD): the same
 * emulated file, closed when the last of them is. False if oldfd is not an
 * emulated file's. */
bool mock_fd_dup(int oldfd, int newfd);
/* fd was closed behind the mock's back (dup2 over it): forget it, without
 * closing the descriptor (it is the new file's now). */
void mock_fd_forget(int fd);
/* The same for every emulated file's descriptor in [first, last], which
 * the caller is about to close (close_range, closefrom). */
void mock_fd_forget_range(unsigned first, unsigned last);
/* The emulated file's path behind fd (for fstat); false if fd is none. */
bool mock_fd_path(int fd, char *path, size_t size);
/* The mock's answer for a path when it is the mock's business (an emulated
 * device file, a virtual sysfs file or directory, or a real one it hides):
 * 1 with the result in *rc (bytes read, 0, or -errno); 0 when the path is
 * not the mock's. */
int mock_path_read(const char *path, char *buf, size_t size, ssize_t *rc);
int mock_path_list(const char *path, void (*fn)(void *, const char *), void *arg, int *rc);
int mock_path_exists(const char *path, int *rc);
/* Engines look at their rings every so often while idle, as hardware
 * would, instead of sleeping until a doorbell hook kicks them: a program
 * that is not hcq rings doorbells with plain stores the mock cannot see. */
void mock_engines_poll(bool on);
/* Sets how long an idle engine sleeps before looking again without a
 * doorbell (0: the default, 20 ms); returns the previous value. Tests make
 * it long to tell a doorbell's wake from the poll under any load. */
uint64_t mock_engines_idle_poll(uint64_t ns);

#endif
