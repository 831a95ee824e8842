/* drivers/trace.h: decoding driver traffic as it happens.
 *
 * Two users, one tracer and one set of decoders:
 *   - HCQ_TRACE=1 wraps the active syscall table (libc or the mock), so
 *     hcq's own calls are printed as they go through the seam;
 *   - libhcqtrace.so (tools/trace_preload.c, run by `hcq trace -- PROG`)
 *     interposes libc in any program, CUDA's and PyTorch's included, and in
 *     its children across fork and exec, and feeds the same tracer.
 *
 * The tracer remembers which file each descriptor is and prints opens,
 * stat/access probes, mmaps and closes of driver files, and each ioctl with
 * its name, key fields in and out, status by name and time taken; every
 * line carries the time, pid and tid. An ioctl decoder per device file kind
 * knows the names and fields (NV escapes and UVM commands, kfd, DRM core and
 * amdgpu); anything it does not know prints as numbers with the raw
 * argument in hex, never dropped.
 *
 * The tracer never crashes the traced program: an argument is copied with
 * trace_read (process_vm_readv on the process itself, which fails with
 * EFAULT instead of faulting) before the call and again after it, and the
 * decoders read only the copies. A pointer the driver will refuse prints as
 * bad; the call is made all the same, so the program sees the driver's own
 * error.
 *
 * With streams on (`hcq trace --streams`, trace_streams.c) it also follows
 * the channels and queues the program creates and prints the command
 * streams it submits, decoded, between the ioctls in time order. */
#ifndef HCQ_DRIVERS_TRACE_H
#define HCQ_DRIVERS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "drivers/sys.h"

/* A line being built: decoders append key=value fields to it. */
typedef struct trace_line {
    char buf[4096];
    size_t len;
    bool json;
    bool first_field;
} trace_line;

void trace_str(trace_line *l, const char *key, const char *value);
void trace_u64(trace_line *l, const char *key, uint64_t value);  /* decimal */
void trace_i64(trace_line *l, const char *key, int64_t value);   /* decimal, signed: fds */
void trace_hex(trace_line *l, const char *key, uint64_t value);  /* 0x... */
void trace_bytes(trace_line *l, const char *key, const void *p, size_t n); /* hex dump, up to 256 bytes */
/* symbolic: "O_RDWR|O_CLOEXEC", "PROT_READ|PROT_WRITE", "MAP_SHARED|MAP_FIXED",
 * "R_OK|W_OK"; bits without a name follow in hex */
void trace_open_flags(trace_line *l, const char *key, int flags);
void trace_prot(trace_line *l, const char *key, int prot);
void trace_map_flags(trace_line *l, const char *key, int flags);
void trace_access_mode(trace_line *l, const char *key, int mode);
/* error=ENOENT (No such file or directory); err is -errno or errno */
void trace_errno(trace_line *l, int err);

/* Copies n bytes at addr of this process into dst without faulting: false
 * (and dst untouched beyond what was read) when any byte is unmapped. */
bool trace_read(void *dst, uint64_t addr, size_t n);

typedef struct tracer tracer;

/* One ioctl as a decoder sees it. arg is the tracer's copy of the argument
 * (NULL when the program's pointer could not be read), never the program's
 * memory; nested pointers are read with trace_read. */
typedef struct trace_call {
    tracer *t;
    int fd;
    unsigned long req;
    const void *arg;
    const void *in; /* after: the copy made before the call (the driver may overwrite inputs) */
    size_t arg_size;
    uint64_t arg_addr; /* the program's pointer */
    bool before;       /* inputs (before the call) or outputs (after) */
    int ret;           /* after: the result, -errno on failure */
} trace_call;

/* Decodes the ioctls of one kind of device file. */
typedef struct trace_decoder {
    const char *kind; /* "nvidiactl", "nvidia-uvm", "nvidiaN", "kfd", "dri" */
    bool (*match)(const char *path);
    /* the request's name ("NV_ESC_RM_ALLOC"), or NULL if unknown */
    const char *(*name)(unsigned long request);
    /* bytes the argument points to (NULL: the size the request encodes) */
    size_t (*arg_size)(unsigned long request);
    /* fields worth showing: before = inputs, after = outputs and status */
    void (*fields)(trace_line *l, const trace_call *c);
} trace_decoder;

/* The decoder for a path, or NULL when it is not a driver file. Files that
 * HCQ_TRACE_PATHS names (colon-separated prefixes) are traced too, with
 * the raw decoder: tests trace /dev/null that way. */
const trace_decoder *trace_decoder_for(const char *path);

/* ** the tracer */
typedef struct tracer_opts {
    int out_fd;       /* lines go here, one write(2) each (fork-safe, no stdio) */
    bool json;        /* JSON Lines instead of text */
    bool lines;       /* print events (false: summary records only, `hcq trace -c`) */
    bool summary;     /* also emit a summary record per call for `hcq trace -c` */
    bool streams;     /* capture command streams (trace_streams.c) */
    uint64_t t0;      /* CLOCK_MONOTONIC ns that is time zero (0: now) */
    bool out_is_socket; /* send(MSG_NOSIGNAL): a reader that went away is an error, not SIGPIPE */
    /* the file out_fd was opened on (HCQ_TRACE_FILE, HCQ_TRACE_OUT), or NULL:
     * before each write the tracer checks that out_fd still is that file
     * (a program closing descriptors it did not open, then opening its
     * own, would otherwise get the trace in its file) and reopens it if not */
    const char *out_path;
    /* reads of sysfs for the decoders (the KFD topology): the table under
     * the tracer (HCQ_TRACE=1) or libc (the preload) */
    const hcq_sys *files;
} tracer_opts;

tracer *tracer_create(const tracer_opts *o);
void tracer_destroy(tracer *t);
/* A line printed once, before this process's first event (the preload:
 * "exec" with the command line, "fork" with the parent), so a child's lines
 * are labelled only when it does something worth tracing. */
void tracer_set_preamble(tracer *t, const char *event, const char *text);
/* Where lines go from now (the preload reconnects after fork or a lost fd). */
void tracer_set_out(tracer *t, int fd);
int tracer_out_fd(const tracer *t);
/* A write to the output failed (-errno): the preload's hook reconnects and
 * returns the new fd, or -1 to stop writing. */
void tracer_set_reconnect(tracer *t, int (*fn)(void *arg), void *arg);

/* Events; calls with fds the tracer does not know are ignored (cheap). */
void tracer_open(tracer *t, const char *path, int flags, int fd_or_err, uint64_t ns);
/* A close, around the real one: begin says whether fd is a traced file
 * (and remembers which open of it); end prints the event and forgets fd
 * unless another thread's open got the same number in between. */
typedef struct tracer_closing {
    int fd;
    uint64_t gen;
    char path[64];
} tracer_closing;
bool tracer_close_begin(tracer *t, int fd, tracer_closing *c);
void tracer_close_end(tracer *t, const tracer_closing *c, int ret);
/* close_range: begin for every traced fd in [first, last] (at most max);
 * returns how many, each to be ended */
int tracer_close_range_begin(tracer *t, unsigned first, unsigned last, tracer_closing *c, int max);
/* Driver files this process image started with (inherited across exec):
 * known from now on, each said in an "inherit" line. Returns how many. */
int tracer_adopt_inherited(tracer *t);
/* fd newfd is a duplicate of oldfd (dup, dup2, dup3) */
void tracer_dup(tracer *t, int oldfd, int newfd);
/* before: prints nothing, copies and remembers the inputs; after: prints
 * the line. via is NULL, or "syscall()" for a call made that way. */
void tracer_ioctl_before(tracer *t, int fd, unsigned long request, const void *arg, void **token);
void tracer_ioctl_after(tracer *t, int fd, unsigned long request, const void *arg, int ret, uint64_t ns,
                        void *token);
void tracer_mmap(tracer *t, void *addr, size_t len, int prot, int flags, int fd, off_t offset, void *ret, int err,
                 uint64_t ns);
/* before the munmap (streams read what is about to go away), then after */
void tracer_munmap_before(tracer *t, void *addr, size_t len);
void tracer_munmap(tracer *t, void *addr, size_t len, int ret);
/* stat/access probes: printed for driver paths only. st: the stat
 * result's mode and device (when ret == 0 and the call returns them) */
void tracer_probe(tracer *t, const char *call, const char *path, int mode, int ret, const void *st);
bool tracer_knows_fd(tracer *t, int fd);
/* A line of its own: event names what it is ("fork", "exec", "warning"),
 * text the rest (key=value fields for text, "message" in JSON). */
void tracer_note(tracer *t, const char *event, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fork: prepare takes every lock, parent and child release them; the
 * child also drops what belongs to the parent (its tid cache, its streams) */
void tracer_fork_prepare(tracer *t);
void tracer_fork_parent(tracer *t);
void tracer_fork_child(tracer *t);

/* Device files open in the process that the tracer never saw opened (a raw
 * syscall, a static part of the program): warns once per descriptor.
 * Returns how many it warned about now. */
int tracer_check_unseen(tracer *t);
/* The program is exiting: captures the last streams, stops the poller. */
void tracer_exit(tracer *t);

/* The syscall table that traces inner (HCQ_TRACE=1). */
const hcq_sys *trace_sys(const hcq_sys *inner);

/* Decoders of ioctls, by device file kind; the NV and AMD backends add
 * theirs (trace_nv.c, trace_amd.c, trace_drm.c). */
extern const trace_decoder trace_raw_decoder;

/* ** stream capture (trace_streams.c), driven by the decoders */
typedef struct trace_streams trace_streams;
trace_streams *trace_streams_create(tracer *t);
void trace_streams_destroy(trace_streams *s);
trace_streams *tracer_streams(tracer *t); /* NULL when streams are off */
/* what the decoders saw succeed */
void trace_streams_nv_alloc(trace_streams *s, uint32_t hclient, uint32_t hparent, uint32_t hobject, uint32_t hclass,
                            const void *params, size_t params_size);
void trace_streams_nv_free(trace_streams *s, uint32_t hclient, uint32_t hobject);
void trace_streams_nv_os_memory(trace_streams *s, uint32_t hclient, uint32_t hmemory, uint64_t cpu, uint64_t size);
void trace_streams_nv_map_memory(trace_streams *s, uint32_t hclient, uint32_t hmemory, uint64_t offset,
                                 uint64_t length, int mmap_fd);
void trace_streams_nv_uvm_map(trace_streams *s, uint32_t hclient, uint32_t hmemory, uint64_t gpu_va, uint64_t length,
                              uint64_t offset);
void trace_streams_amd_queue(trace_streams *s, uint32_t queue_id, uint32_t type, uint32_t gpu_id, uint64_t ring,
                             uint64_t ring_size, uint64_t wptr, uint64_t rptr);
void trace_streams_amd_queue_gone(trace_streams *s, uint32_t queue_id);
/* from the tracer: mappings made and unmapped, and a chance to look */
void trace_streams_mmap(trace_streams *s, int fd, uint64_t addr, uint64_t len, uint64_t offset);
void trace_streams_munmap(trace_streams *s, uint64_t addr, uint64_t len);
/* reads every write pointer and prints what is new; the tracer calls it
 * before each event it prints, the poller thread in between */
void trace_streams_poll(trace_streams *s);
void trace_streams_fork_prepare(trace_streams *s);
void trace_streams_fork_parent(trace_streams *s);
void trace_streams_fork_child(trace_streams *s);
void trace_streams_stop(trace_streams *s);

/* for trace_streams.c: a line of event at the current time, with the pid
 * and no tid (the tracer saw it; no thread of the program made it) ... */
void tracer_begin_stream(tracer *t, trace_line *l, const char *event);
/* ... written with the lines of text after it (decoded streams, '\n'
 * between lines), nothing else in between */
void tracer_emit_block(tracer *t, trace_line *l, const char *text);
/* per descriptor: the DRM driver's name, learnt from DRM_IOCTL_VERSION */
void tracer_fd_set_driver(tracer *t, int fd, const char *driver);
void tracer_fd_driver(tracer *t, int fd, char *out, size_t size);
/* sysfs, for the decoders */
const hcq_sys *tracer_files(tracer *t);

#endif
