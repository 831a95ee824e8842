/* drivers/trace.h: decoding driver traffic as it happens.
 *
 * Two users, one set of decoders:
 *   - HCQ_TRACE=1 wraps the active syscall table (libc or the mock), so
 *     hcq's own calls are printed as they go through the seam;
 *   - libhcqtrace.so (tools/trace_preload.c, run by `hcq trace -- PROG`)
 *     interposes open/ioctl/mmap/munmap/close in any program, CUDA's and
 *     PyTorch's included, and feeds the same tracer.
 *
 * The tracer remembers which file each descriptor is, prints opens, mmaps
 * and closes of driver files, and each ioctl with its name, key fields in
 * and out, status by name and time taken. An ioctl decoder per device file
 * kind knows the names and fields (NV escapes and UVM commands, kfd);
 * anything it does not know prints as numbers with the raw argument in hex,
 * never dropped. */
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

/* Decodes the ioctls of one kind of device file. */
typedef struct trace_decoder {
    const char *kind; /* "nvidiactl", "nvidia-uvm", "nvidiaN", "kfd", "dri" */
    bool (*match)(const char *path);
    /* the request's name ("NV_ESC_RM_ALLOC"), or NULL if unknown */
    const char *(*name)(unsigned long request, const void *arg);
    /* fields worth showing: before = inputs, !before = outputs and status
     * (ret is the ioctl's result, -errno on failure) */
    void (*fields)(trace_line *l, unsigned long request, const void *arg, bool before, int ret);
} trace_decoder;

/* The decoder for a path, or NULL when it is not a driver file. Files that
 * HCQ_TRACE_PATHS names (colon-separated prefixes) are traced too, with
 * the raw decoder: tests trace /dev/null that way. */
const trace_decoder *trace_decoder_for(const char *path);

/* ** the tracer */
typedef struct tracer tracer;
/* Writes to out (NULL: stderr), one line per event, JSON lines when json. */
tracer *tracer_create(FILE *out, bool json);
void tracer_destroy(tracer *t);

/* Events; calls with fds the tracer does not know are ignored (cheap). */
void tracer_open(tracer *t, const char *path, int flags, int fd_or_err, uint64_t ns);
void tracer_close(tracer *t, int fd, int ret);
/* before: prints nothing, remembers the inputs; after: prints the line */
void tracer_ioctl_before(tracer *t, int fd, unsigned long request, const void *arg, void **token);
void tracer_ioctl_after(tracer *t, int fd, unsigned long request, const void *arg, int ret, uint64_t ns,
                        void *token);
void tracer_mmap(tracer *t, void *addr, size_t len, int prot, int flags, int fd, off_t offset, void *ret, int err,
                 uint64_t ns);
void tracer_munmap(tracer *t, void *addr, size_t len, int ret);
bool tracer_knows_fd(tracer *t, int fd);

/* The syscall table that traces inner (HCQ_TRACE=1). */
const hcq_sys *trace_sys(const hcq_sys *inner);

/* Decoders of ioctls, by device file kind; the NV and AMD backends add
 * theirs (trace_nv.c, trace_amd.c). */
extern const trace_decoder trace_raw_decoder;

#endif
