/* hcq/queue.h: devices, queues, programs, graphs and the eager calls.
 *
 * ** Model
 * A device has one compute engine and one copy engine, and owns a timeline:
 * a signal whose value only grows. Every eager call (copyin, a one-off
 * launch, a graph replay) is submitted as
 *     wait(timeline, n - 1) -> work -> signal(timeline, n)
 * so eager work on a device runs in order across its engines, and the host
 * waits for "everything so far" with hcq_device_synchronize().
 *
 * A queue (hcq_queue) is a recorded list of commands for one engine. Nothing
 * reaches the device before hcq_queue_submit(). Commands within one queue run
 * in order, each finishing before the next starts. Any argument may be a
 * variable (HCQ_VAR(k), see base.h); a recorded queue can be submitted again
 * and again with new variable values without being re-encoded. A queue whose
 * commands use kernarg memory (exec) may be in flight once: submitting it
 * again waits for its previous submission first.
 *
 * Recorded queues and eager calls run in the order they are submitted, as
 * CUDA's legacy default stream does with its device's other streams: an
 * eager call (a copyout, a launch, a graph replay) starts after the queues
 * submitted before it have completed, and a submitted queue starts after
 * the eager calls before it. So hcq_buffer_copyout right after
 * hcq_queue_submit reads what the queue wrote. Queues among themselves are
 * not ordered (signals order them), and hcq_device_synchronize waits for
 * the timeline: for a queue submitted after the last eager call, wait for
 * a signal it writes. A queue that waits for something only a later eager
 * call would provide waits forever (until HCQ_TIMEOUT_MS hangs the device):
 * hand it a signal the host sets instead.
 *
 * ** Threads
 * What may be shared between threads:
 *   - a device: every call that takes a device, a buffer, a program or a
 *     signal may come from any thread at any time (eager calls, allocations,
 *     views, program loads, hcq_device_timeline_value, hcq_signal_*), and
 *     eager work from several threads is ordered on the timeline in the
 *     order the calls take it;
 *   - a queue or a graph: one thread at a time (recording, submitting,
 *     replaying, destroying); different queues and graphs of one device may
 *     be used by different threads at once;
 *   - destroying or freeing an object while another thread still uses it,
 *     and closing a device while another thread calls into it, are the
 *     caller's race: hcq_device_close must be the last call on the device.
 *
 * ** Lifetimes
 * Every object belongs to its device, and every call checks the handles it
 * is given: a freed or destroyed object, or one of a closed device, is
 * HCQ_ESTATE (NULL or 0 where a pointer or a value is returned), never a
 * crash. (A freed object's memory may later hold a new object; a stale
 * pointer then names the new one.) What a recorded queue or a graph uses
 * stays alive as long as the recording does: a program, buffer, view or
 * signal of its device freed by the user while a queue or graph names it
 * loses its handle at once, and is released when the queue is reset or
 * destroyed, or the graph destroyed (after their last submission
 * completed). Another device's buffer reached through a peer mapping goes
 * with its own device: keep that device open, and the buffer alive, while
 * recordings that use it run. On a device
 * that faulted or hung, frees and destroys always succeed; what the engines
 * might still touch is released when the device is closed. */
#ifndef HCQ_QUEUE_H
#define HCQ_QUEUE_H

#include "base.h"
#include "compiler.h"
#include "mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ** devices */
typedef struct hcq_device_props {
    char name[96];           /* "NVIDIA H100 80GB HBM3", "CPU (2 cores, ...)" */
    char kind[8];            /* "CPU", "NV", "AMD" */
    char id[16];             /* the open name: "CPU", "NV:0", "AMD:1" */
    char arch[32];           /* the hardware: "x86_64", "sm_90", "gfx1100" */
    char target[32];         /* what kernels compile for: "cpu", "sm_90", "gfx1100" (the mock GPU
                                too, where clang and ptxas are), or a mock target ("mock-sm_90")
                                whose binaries carry IR */
    char driver_version[32]; /* kernel driver version, "" for the CPU */
    char pci_address[32];    /* "0000:01:00.0", "" if none */
    uint32_t index;
    uint32_t compute_units;  /* SMs, CUs, or CPU worker threads */
    uint64_t memory_bytes;   /* device memory */
    uint64_t memory_free_bytes; /* free when the device was opened; 0 if the driver does not say */
    uint32_t clock_mhz;      /* maximum shader clock; 0 if the driver does not say */
    char engines[160];       /* the engines in words: classes (NV), gfx target, XCCs, SDMA (AMD) */
    uint32_t max_threads_per_group;
    uint32_t max_block[3];
    uint32_t max_grid[3];
    uint32_t max_local_bytes;     /* shared memory per work-group */
    uint64_t fixed_memory_bytes;  /* what an open device holds: rings, staging, signals, kernargs */
    uint64_t staging_bytes;       /* host staging memory for copyin/out (chunk x slots) */
    uint64_t staging_chunk_bytes; /* one staging slot: copies larger than this are split */
    bool is_mock;                 /* an emulated device (HCQ_MOCK=1) */
    char shader[192];             /* how an emulated device runs kernels, and why: "host twins of sm_90
                                     cubins (clang + ptxas)", "kernel IR on the interpreter: ptxas was not
                                     found ..."; "" on hardware and the CPU */
    /* since 0.2 (fields are only ever added here, at the end: see base.h, ABI) */
    uint64_t cache_bytes;         /* the last-level cache the cores share (CPU: from sysfs); 0: not known */
    char paths[384];              /* the first-run paths in use where the hardware's own sources leave a
                                     choice ("semaphore acquire: ACQ_CIRC_GEQ 64-bit; QMD: V04; ...") and
                                     what the self-test at open found ("(probed at open: ... hung)"); ""
                                     where there is nothing to choose (the CPU) */
} hcq_device_props;

/* Opens a device by name: "CPU", "NV:0", "AMD:1" (":N" defaults to 0), or
 * NULL for $HCQ_DEVICE, else the best present (NV, then AMD, then CPU).
 * HCQ_MOCK=1 makes NV and AMD the mock GPU. */
HCQ_API hcq_device *hcq_device_open(const char *name);
/* Stops the device and releases everything it holds; NULL is fine. Work
 * already submitted gets a short grace to finish (up to 1 s, or
 * HCQ_TIMEOUT_MS if that is less, and only while the timeline moves: not
 * once it stood still for 100 ms; none on a device that faulted or hung).
 * Then the engines are stopped: queued work is dropped, waits end, running
 * kernels are cancelled (at their next work-group or barrier; inside a
 * work-group's loops when interpreted), and work not done by then is lost.
 * Only then is memory freed. Tensor contexts, graphs, queues, programs, buffers
 * and signals still alive are freed too (reported at HCQ_DEBUG=1). Close
 * returns within the grace plus the engines' halt limit (1 s for the CPU
 * device; the driver's queue teardown on GPUs) plus the time to free what
 * the device holds. A compiled CPU kernel whose one work-group runs past
 * the halt limit is abandoned: close returns, and the device's memory is
 * freed when the kernel ends. (On the mock GPU a host twin's work-group in
 * progress is waited for.) A later open of the device works. */
HCQ_API hcq_status hcq_device_close(hcq_device *dev);
/* NULL (HCQ_ESTATE or HCQ_EINVAL) when dev is not an open device. The
 * properties are the library's, valid while the device is open. (Version
 * HCQ_0.2 of the symbol: the struct grew in 0.2; programs built against
 * 0.1 bind HCQ_0.1, the same call, and read the fields they know.) */
HCQ_API const hcq_device_props *hcq_device_get_props(const hcq_device *dev);

/* Names of devices present ("CPU", "NV:0", ...), written into names[i]
 * (up to max); returns the count found. */
HCQ_API uint32_t hcq_device_list(char names[][16], uint32_t max);
/* Devices of one kind present ("CPU", "NV", "AMD"). When there are none
 * and why is not NULL, why says why in one sentence: the path, the errno or
 * driver status, and the fix (a module to load, a group to join). */
HCQ_API uint32_t hcq_device_count(const char *kind, char *why, size_t why_size);

/* Waits until all work submitted on the timeline so far has completed. A
 * wait on the timeline (this one, or inside any call) that passes
 * HCQ_TIMEOUT_MS without completing marks the device hung: HCQ_ETIMEDOUT
 * with the engines' state, sticky like a fault. */
HCQ_API hcq_status hcq_device_synchronize(hcq_device *dev);
/* HCQ_OK, or the sticky fault once the device has faulted (HCQ_EFAULT with
 * its message) or hung (HCQ_ETIMEDOUT): later calls that would need the
 * device return it too, at once. Close the device; the next open works. */
HCQ_API hcq_status hcq_device_status(hcq_device *dev);
/* The timeline signal and the last value submitted on it. */
HCQ_API hcq_signal *hcq_device_timeline(hcq_device *dev);
HCQ_API uint64_t hcq_device_timeline_value(const hcq_device *dev);
/* Whether from's engines and kernels reach to's device memory through a
 * peer mapping (NVIDIA: UVM peer access over NVLink or PCIe; AMD: kfd
 * peer mappings over xGMI or PCIe), so hcq_buffer_copy between the two
 * runs on a copy engine and kernels on `from` may take to's buffers.
 * HCQ_OK, or HCQ_ENOTSUP with the reason (copies then go through host
 * memory). It asks the drivers: a 4 KiB buffer of `to` is mapped for
 * `from`, then freed. Signals need no peer path (they are host memory):
 * any two GPUs of one kind wait on each other's. `hcq info` prints the
 * matrix. */
HCQ_API hcq_status hcq_device_peer_access(hcq_device *from, hcq_device *to);

/* ** telemetry: what the kernel driver tells about a device without vendor
 * libraries (NVML, ROCm SMI): temperatures, power, clocks, utilization,
 * memory in use and by which processes, ECC and fault counts, and this
 * process's own progress on the device. `hcq info` and `hcq top` print it.
 *
 * Every reading names its source (the RM control, the sysfs file). A reading
 * the driver refuses or does not have is not available, and its text says
 * why (the RM status or errno); hcq never fills in a number of its own. */
typedef struct hcq_reading {
    char name[32];     /* "temperature.gpu", "power.draw", "clocks.sm", "utilization.gpu", ... */
    char unit[8];      /* "C", "W", "MHz", "%", "B", or "" (counts, text) */
    bool available;
    bool is_text;      /* the value is text (uuid, pstate, PCIe link) */
    double value;      /* when available and not text */
    char text[104];    /* the text value; when unavailable, why */
    char source[72];   /* "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2", "hwmon temp1_input", ... */
} hcq_reading;

typedef struct hcq_device_process {
    uint32_t pid;
    char name[32];          /* its command name, "" when it cannot be read */
    bool memory_known;
    uint64_t memory_bytes;  /* device memory it holds */
} hcq_device_process;

#define HCQ_TELEMETRY_READINGS 40
#define HCQ_TELEMETRY_PROCESSES 32
#define HCQ_TELEMETRY_EVENTS 8
typedef struct hcq_telemetry {
    uint64_t time_ns;       /* hcq_now_ns() at the sample */
    uint32_t nreadings;
    hcq_reading readings[HCQ_TELEMETRY_READINGS];
    /* processes using the device (all the driver shows; when it shows
     * none, processes_why says why) */
    uint32_t nprocesses;
    bool processes_known;
    char processes_why[104];
    hcq_device_process processes[HCQ_TELEMETRY_PROCESSES];
    /* recent faults (Xids, memory exceptions) seen on the device, oldest first */
    uint32_t nevents;
    char events[HCQ_TELEMETRY_EVENTS][200];
    /* this process on the device: the timeline's last submitted and
     * completed values, and each engine's ring positions */
    uint64_t timeline_submitted, timeline_completed;
    char engines[512];
} hcq_telemetry;

/* Samples the device's telemetry into *out. Readings a driver refuses are
 * in *out as unavailable; the call fails only on a bad handle. */
HCQ_API hcq_status hcq_device_telemetry(hcq_device *dev, hcq_telemetry *out);
/* A reading of t by name, or NULL. */
HCQ_API const hcq_reading *hcq_telemetry_find(const hcq_telemetry *t, const char *name);

/* ** programs */
typedef struct hcq_program_info {
    char name[64];
    char target[32];
    uint32_t nparams;
    uint32_t kernarg_bytes;
    uint32_t max_threads;  /* per work-group, given registers and the device */
    uint32_t local_bytes;  /* static shared memory */
    uint32_t registers;    /* per thread, 0 if unknown */
    uint32_t code_bytes;
} hcq_program_info;

/* Loads a binary for the device's target (cubin, code object, shared object,
 * or an "ir" binary where the device runs the interpreter). A binary for
 * another target is HCQ_EFORMAT naming both targets. */
HCQ_API hcq_program *hcq_program_load(hcq_device *dev, const void *binary, size_t size);
/* hcq_program_load of the kernel named `kernel` in a binary that may hold
 * several (a cubin's global functions, a code object's amdhsa.kernels).
 * NULL: the binary's only kernel. A binary of several kernels given to
 * hcq_program_load, or a name the binary lacks, is HCQ_EINVAL listing the
 * kernels it holds. */
HCQ_API hcq_program *hcq_program_load_kernel(hcq_device *dev, const void *binary, size_t size, const char *kernel);
/* Compiles the kernel for the device's target (through the cache), loads it. */
HCQ_API hcq_program *hcq_program_from_kernel(hcq_device *dev, const hcq_kernel *k);
/* Waits for eager launches of it, then unloads it, or later: a queue or
 * graph that records a launch of it keeps it loaded until the recording
 * goes (see Lifetimes). NULL is fine. */
HCQ_API hcq_status hcq_program_free(hcq_program *prog);
HCQ_API const hcq_program_info *hcq_program_get_info(const hcq_program *prog);
HCQ_API hcq_status hcq_program_param(const hcq_program *prog, uint32_t i, hcq_param_info *out);

/* ** launch arguments */
typedef enum hcq_arg_kind {
    HCQ_ARG_BUFFER = 0, /* a buffer's address; in a graph, a replaceable input */
    HCQ_ARG_ADDR = 1,   /* a raw device address (patchable) */
    HCQ_ARG_SCALAR = 2, /* `size` bytes of val (1, 2, 4, 8; 0 = the param's size) */
} hcq_arg_kind;

typedef struct hcq_arg {
    uint32_t kind;
    uint32_t size;
    hcq_buffer *buffer;
    hcq_val val;
} hcq_arg;

static inline hcq_arg hcq_arg_buffer(hcq_buffer *b)
{
    hcq_arg a = {HCQ_ARG_BUFFER, 8, b, HCQ_IMM(0)};
    return a;
}
static inline hcq_arg hcq_arg_addr(hcq_val addr)
{
    hcq_arg a = {HCQ_ARG_ADDR, 8, NULL, addr};
    return a;
}
static inline hcq_arg hcq_arg_scalar(uint32_t size, hcq_val v)
{
    hcq_arg a = {HCQ_ARG_SCALAR, size, NULL, v};
    return a;
}
static inline hcq_arg hcq_arg_u32(uint32_t v) { return hcq_arg_scalar(4, HCQ_IMM(v)); }
static inline hcq_arg hcq_arg_i32(int32_t v) { return hcq_arg_scalar(4, HCQ_IMM((uint32_t)v)); }
static inline hcq_arg hcq_arg_u64(uint64_t v) { return hcq_arg_scalar(8, HCQ_IMM(v)); }
static inline hcq_arg hcq_arg_i64(int64_t v) { return hcq_arg_scalar(8, HCQ_IMM((uint64_t)v)); }
static inline hcq_arg hcq_arg_f32(float f)
{
    union { float f; uint32_t u; } c = {.f = f};
    return hcq_arg_scalar(4, HCQ_IMM(c.u));
}
static inline hcq_arg hcq_arg_f64(double f)
{
    union { double f; uint64_t u; } c = {.f = f};
    return hcq_arg_scalar(8, HCQ_IMM(c.u));
}

/* Launch dimensions: grid in work-groups, block in work-items per group. */
typedef struct hcq_dims {
    hcq_val grid[3];
    hcq_val block[3];
} hcq_dims;

static inline hcq_dims hcq_dims_3d(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                                   uint32_t by, uint32_t bz)
{
    hcq_dims d = {{HCQ_IMM(gx), HCQ_IMM(gy), HCQ_IMM(gz)}, {HCQ_IMM(bx), HCQ_IMM(by), HCQ_IMM(bz)}};
    return d;
}
static inline hcq_dims hcq_dims_1d(uint32_t groups, uint32_t threads)
{
    return hcq_dims_3d(groups, 1, 1, threads, 1, 1);
}

/* ** queues */
typedef enum hcq_queue_type {
    HCQ_QUEUE_COMPUTE = 0, /* exec, barrier, wait, signal, timestamp */
    HCQ_QUEUE_COPY = 1,    /* copy, wait, signal, timestamp */
} hcq_queue_type;

HCQ_API hcq_queue *hcq_queue_create(hcq_device *dev, hcq_queue_type type);
/* Waits for the queue's last submission, then frees it and lets go of what
 * it used. NULL is fine. A submission that does not complete within
 * HCQ_TIMEOUT_MS (it waits on a signal nobody sets) is abandoned: the
 * queue is destroyed all the same (its memory stays with the device until
 * it is closed), the device is hung from then on, and the call returns
 * HCQ_ETIMEDOUT saying so. On a device that had already faulted or hung
 * it returns HCQ_OK, as frees do there. */
HCQ_API hcq_status hcq_queue_destroy(hcq_queue *q);
/* Forgets the recorded commands (waits for the last submission first) and
 * lets go of what they used. */
HCQ_API hcq_status hcq_queue_reset(hcq_queue *q);

/* Stall the engine until the 64-bit value at the signal is >= value. The
 * queue keeps a signal of its own device alive, as the signal and
 * timestamp commands do.
 * Another device's signal (its timeline too: hcq_device_timeline) is
 * waited for on this queue's GPU: the signal's memory is mapped for this
 * device once (NVIDIA: a UVM mapping for each GPU; AMD: kfd
 * MAP_MEMORY_TO_GPU with this GPU's id), and the engine polls it while the
 * other device's engine writes it, with no host thread in between. Signals
 * are host memory, which every GPU of the process reaches, peer link or
 * not. Such a signal is not held: keep it, and its device, open while the
 * queue may run. Devices of different kinds (a GPU and the CPU device)
 * share no signal memory: HCQ_EINVAL, saying to order them on the host
 * (hcq_signal_wait, then hcq_signal_set). HCQ_DEBUG=1 logs each mapping. */
HCQ_API hcq_status hcq_queue_wait(hcq_queue *q, hcq_signal *sig, hcq_val value);
HCQ_API hcq_status hcq_queue_wait_at(hcq_queue *q, hcq_val signal_va, hcq_val value);
/* After all earlier commands complete, write value (and the timestamp).
 * The signal may be another device's, as for hcq_queue_wait; never a
 * device's timeline (HCQ_EINVAL: only the device's own calls move it). */
HCQ_API hcq_status hcq_queue_signal(hcq_queue *q, hcq_signal *sig, hcq_val value);
HCQ_API hcq_status hcq_queue_signal_at(hcq_queue *q, hcq_val signal_va, hcq_val value);
/* After earlier commands complete, write the device clock to the signal's
 * timestamp slot. Its value slot may be overwritten: use a signal of its own.
 * The signal must be of the queue's device, whose clock it is read in
 * (HCQ_EINVAL otherwise). */
HCQ_API hcq_status hcq_queue_timestamp(hcq_queue *q, hcq_signal *sig);
HCQ_API hcq_status hcq_queue_timestamp_at(hcq_queue *q, hcq_val signal_va);
/* Make CPU writes to device memory visible and invalidate caches (compute). */
HCQ_API hcq_status hcq_queue_barrier(hcq_queue *q);
/* Run a program (compute). Args are checked against the program's params and
 * dims against its and the device's limits (HCQ_ELIMIT) when recorded, or at
 * submit for variable dims. */
HCQ_API hcq_status hcq_queue_exec(hcq_queue *q, hcq_program *prog, const hcq_arg *args,
                                  uint32_t nargs, hcq_dims dims);
/* Copy size bytes between device addresses (copy). A variable size must stay
 * within the engine's single-command limit, checked at submit. */
HCQ_API hcq_status hcq_queue_copy(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size);
/* Hand the commands to the engine with vars[0..nvars) for HCQ_VAR(0..).
 * nvars must cover every variable the queue uses. */
HCQ_API hcq_status hcq_queue_submit(hcq_queue *q, const uint64_t *vars, uint32_t nvars);
/* How many variables the recorded commands use (max index + 1). */
HCQ_API uint32_t hcq_queue_var_count(const hcq_queue *q);
HCQ_API uint32_t hcq_queue_command_count(const hcq_queue *q);

/* ** eager calls, ordered on the device timeline */
/* One launch; immediates only. Returns once submitted. A buffer argument
 * may belong to another device of the same kind where the two have a peer
 * path (hcq_device_peer_access: NVIDIA GPUs with UVM peer access, AMD GPUs
 * with an xGMI or PCIe peer link): the launch is ordered on the GPUs after
 * the work that device submitted before the call, and that device's later
 * work after the launch (as hcq_buffer_copy between devices is), at most 8
 * other devices per launch. Without a path: HCQ_EINVAL saying why. (A
 * recorded queue given another device's buffer waits on the host, when the
 * command is recorded, for that device's work so far; a graph orders it
 * on the GPUs, see graphs.) */
HCQ_API hcq_status hcq_launch(hcq_program *prog, const hcq_arg *args, uint32_t nargs,
                              hcq_dims dims);
/* Host -> device through the staging ring. Returns once the data is copied
 * out of src (src may be reused at once) and the copies are submitted. */
HCQ_API hcq_status hcq_buffer_copyin(hcq_buffer *dst, uint64_t dst_offset, const void *src,
                                     uint64_t size);
/* Device -> host. Waits for earlier work on the timeline and for the copy. */
HCQ_API hcq_status hcq_buffer_copyout(void *dst, hcq_buffer *src, uint64_t src_offset,
                                      uint64_t size);
/* Device -> device, on the same device or between two (both timelines are
 * respected: the copy waits for the work submitted to both, and the work
 * submitted to either after it waits for the copy). Between two devices
 * with a peer path (hcq_device_peer_access) it runs on the source's copy
 * engine and returns once submitted: the ordering runs on the GPUs (the
 * source's copy engine waits for the destination's timeline, then the
 * destination's copy engine for the source's). Without one it goes through
 * host memory and returns once done. HCQ_DEBUG=1 logs which path ran. */
HCQ_API hcq_status hcq_buffer_copy(hcq_buffer *dst, uint64_t dst_offset, hcq_buffer *src,
                                   uint64_t src_offset, uint64_t size);

/* ** all-reduce across devices */
typedef enum hcq_reduce_op {
    HCQ_REDUCE_SUM = 0,
    HCQ_REDUCE_MAX = 1,
    HCQ_REDUCE_MEAN = 2, /* the sum divided by n (floats only) */
} hcq_reduce_op;

/* Replaces each of bufs[0..n) (one buffer per device, devices of one kind
 * and process, equal sizes, a whole number of dtype elements) with the
 * elementwise op over all n, in place. dtypes: f32, f16 and bf16 (sum,
 * max, mean) and i32 (sum, max; wrapping); others are HCQ_ENOTSUP.
 *
 * A ring: the elements are split into n chunks, chunk c being elements
 * [c*count/n, (c+1)*count/n) (chunks may differ by one; some are empty
 * when count < n). Reduce-scatter: in n-1 steps each device sends a chunk
 * to the next device, bufs[(i+1) % n], whose compute engine folds it into
 * its own (a small IR kernel, compiled through the cache); then an
 * all-gather passes each finished chunk around the ring. Every copy is
 * hcq_buffer_copy, so it is ordered on the GPUs and runs on the copy
 * engines where the devices have a peer path (hcq_device_peer_access),
 * and is staged through host memory (the host waiting for each such copy)
 * where they have none. The call returns once every buffer holds the
 * result: it waits, at its end, for the scratch it allocated (one chunk
 * per device) to be free.
 *
 * Order (fixed, so results are deterministic and every device's bytes are
 * equal): chunk c is reduced as
 *     acc = x_c;  acc = acc op x_(c+1);  ...;  acc = acc op x_(c+n-1)
 * with device indices mod n (x_i is bufs[i]'s element), and for the mean
 * the last step is (acc + x_(c+n-1)) / n: for f16/bf16 the two are
 * widened to f32, added and divided there, and the quotient rounded to
 * the dtype. Each op rounds to the dtype (round to nearest even). Bound,
 * sum: each of the n-1 additions rounds once, so against the exact sum
 * |result - sum| <= (n-1) * u * sum |x_i| (to first order; u = 2^-24 for
 * f32, 2^-11 for f16, 2^-8 for bf16), the same bound as any sequential
 * single-device sum of the n values; a single-device sum in another order
 * may differ from it by up to twice that. Max and integer sums are exact.
 * The mean adds at most two roundings (u of the result each).
 *
 * Errors, before any work is submitted (no buffer changes): HCQ_EINVAL for
 * NULL or empty bufs, devices of different kinds, two buffers on one
 * device, unequal sizes, a size not a multiple of the element size, the
 * mean of an integer dtype; HCQ_ESTATE for a freed buffer; HCQ_ELIMIT
 * past about 2^31 elements or 64 buffers. n == 1 is a no-op. A device
 * that faults midway leaves the buffers partly reduced, and the call
 * returns its fault. The fold kernels stay loaded on each device until it
 * closes. */
HCQ_API hcq_status hcq_allreduce(hcq_buffer *const *bufs, uint32_t n, hcq_dtype dtype, hcq_reduce_op op);
/* The same ring, recorded into graph g (queue.h's graphs, "Several
 * devices") instead of run: its copies and fold kernels become nodes, in
 * the order above, so every replay of g all-reduces bufs (or the buffers
 * hcq_graph_set_buffer swaps in for them) with the same bits as
 * hcq_allreduce, ordered with g's other nodes on the GPUs. Its scratch
 * (one chunk per device) is held by the graph until it goes. Every ring
 * neighbour needs a peer path from bufs[i]'s device to bufs[(i+1) % n]'s
 * (a replay has no host thread to stage through): without one,
 * HCQ_ENOTSUP before any node is recorded. Other errors as hcq_allreduce;
 * one while recording (out of memory) leaves part of the ring in g,
 * which the message says: destroy it. */
HCQ_API hcq_status hcq_graph_allreduce(hcq_graph *g, hcq_buffer *const *bufs, uint32_t n, hcq_dtype dtype,
                                       hcq_reduce_op op);

/* ** graphs: capture launches and copies once, replay them with new inputs.
 * Replays are ordered on the device timeline like eager calls. Variables
 * HCQ_VAR(k) in args and dims are the graph's; every buffer an arg or copy
 * names can be swapped for another of at least its size (on the same
 * device) before a replay. One replay is in flight at a time: a replay
 * waits for the previous one before patching.
 *
 * Several devices: a graph may hold launches and copies on any GPUs of
 * the kind of the device it was created on (up to 8 devices): a launch
 * runs on its program's device, a copy on its source's copy engine. Nodes
 * run in capture order on every device: between devices the order runs on
 * the GPUs (each waits for a graph-private signal the previous node's
 * engine writes; signals are host memory, which every GPU of the process
 * reaches, link or not), never on the host. A launch taking another
 * device's buffer, and a copy between two devices, need a peer path
 * (hcq_device_peer_access): without one the capture refuses them
 * (HCQ_EINVAL for the launch, HCQ_ENOTSUP for the copy: a replay has no
 * host thread to stage through; use hcq_buffer_copy outside the graph).
 * A replay submits to every device's engines at once and returns (it
 * waits on the host only for the graph's previous replay); it takes one
 * value of each device's timeline, reached once the whole graph has run,
 * so later work on any of the devices follows the replay, and
 * hcq_device_synchronize on any one of them waits for all of it. Each
 * device's work before the replay comes before the graph's first node
 * that involves that device. Closing any of a graph's devices destroys
 * the graph (its handle goes stale), after waiting for its last replay on
 * the devices that stay open. */
HCQ_API hcq_graph *hcq_graph_create(hcq_device *dev);
HCQ_API hcq_status hcq_graph_destroy(hcq_graph *g); /* waits for the last replay; NULL is fine */
HCQ_API hcq_status hcq_graph_launch(hcq_graph *g, hcq_program *prog, const hcq_arg *args,
                                    uint32_t nargs, hcq_dims dims);
HCQ_API hcq_status hcq_graph_copy(hcq_graph *g, hcq_buffer *dst, uint64_t dst_offset,
                                  hcq_buffer *src, uint64_t src_offset, uint64_t size);
/* From the next replay on, `original` (as captured) stands for
 * `replacement`; NULL replacement restores the original. */
HCQ_API hcq_status hcq_graph_set_buffer(hcq_graph *g, hcq_buffer *original, hcq_buffer *replacement);
/* The graph's commands reach only the first `bytes` of `original` (its
 * launches take their sizes from graph variables, as a JIT with variable
 * dims records them): a replacement needs that many bytes, not the
 * original's size. The caller answers for every replay's commands
 * staying within the replacement. */
HCQ_API hcq_status hcq_graph_buffer_need(hcq_graph *g, hcq_buffer *original, uint64_t bytes);
HCQ_API hcq_status hcq_graph_replay(hcq_graph *g, const uint64_t *vars, uint32_t nvars);
HCQ_API uint32_t hcq_graph_node_count(const hcq_graph *g);

#ifdef __cplusplus
}
#endif
#endif
