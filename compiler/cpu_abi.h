/* compiler/cpu_abi.h: the ABI between a "cpu"-target shared object (C
 * rendered by render_c.c, built by clang) and whoever runs it (the CPU
 * device, tests, benchmarks).
 *
 * A cpu-target shared object exports:
 *   void hcq_entry(const uint8_t *kernargs, const hcq_cpu_dims *dims,
 *                  uint64_t group_begin, uint64_t group_end);
 *       runs work-groups [group_begin, group_end) (linear index, x fastest)
 *       with the kernargs laid out as hcq_kernel_param_layout() says;
 *       re-entrant: threads may run disjoint group ranges at once. Work-
 *       items of a group run on the calling thread; local memory and the
 *       per-work-item arrays of barrier kernels live on its stack (about
 *       local_bytes + 8 to 64 bytes (a vector) x work-items x values
 *       crossing a barrier), so run it on threads with a few MiB of stack.
 *   const char hcq_name[];      the kernel name
 *   const uint32_t hcq_meta[];  {MAGIC, VERSION, nparams, kernarg_size,
 *                                local_bytes, then per param: offset,
 *                                size | is_buffer << 16 | dtype << 24}
 *
 * Float semantics match the interpreter bit for bit (no contraction, no
 * fast-math), transcendental ops within HCQ_IR_TRANSCENDENTAL_ULP. */
#ifndef HCQ_COMPILER_CPU_ABI_H
#define HCQ_COMPILER_CPU_ABI_H

#include <stdint.h>

#include "base/base.h"

#define HCQ_CPU_ABI_MAGIC 0x31514348u /* "HCQ1" */
#define HCQ_CPU_ABI_VERSION 1u

typedef struct hcq_cpu_dims {
    uint32_t num_groups[3];
    uint32_t local_size[3];
} hcq_cpu_dims;

/* runs work-groups [group_begin, group_end) (linear index, x fastest) */
typedef void (*hcq_cpu_entry_fn)(const uint8_t *kernargs, const hcq_cpu_dims *dims, uint64_t group_begin,
                                 uint64_t group_end);

/* hcq_meta indexes */
enum {
    HCQ_CPU_META_MAGIC = 0,
    HCQ_CPU_META_VERSION,
    HCQ_CPU_META_NPARAMS,
    HCQ_CPU_META_KERNARG_SIZE,
    HCQ_CPU_META_LOCAL_BYTES,
    HCQ_CPU_META_PARAMS, /* 2 words per param from here */
};

/* ** loading (for the CPU device, tests and benchmarks) */
typedef struct cc_cpu_module {
    void *dl;               /* dlopen handle */
    int fd;                 /* the memfd it was loaded from, open while loaded */
    hcq_cpu_entry_fn entry;
    const char *name;       /* hcq_name, inside the module */
    const uint32_t *meta;   /* hcq_meta, inside the module */
    uint32_t nparams, kernarg_size, local_bytes;
} cc_cpu_module;

/* Loads a cpu-target shared object from memory (through an anonymous
 * memfd, so nothing is left on disk), finds its symbols and checks the ABI
 * magic and version. HCQ_EFORMAT names what the bytes look like when they
 * are not a cpu-target object. */
hcq_status cc_cpu_module_load(const void *so, size_t size, cc_cpu_module *out);
void cc_cpu_module_unload(cc_cpu_module *m); /* zeroed is fine */

/* The loader under both: checks that so is a shared object for this host
 * (`what` names the kind expected, `fix` says what to do when it is not),
 * writes it to a memfd and dlopens it. Close with cc_host_so_close. */
hcq_status cc_host_so_open(const void *so, size_t size, const char *what, const char *fix, void **dl_out, int *fd_out);
void cc_host_so_close(void *dl, int fd);

#endif
