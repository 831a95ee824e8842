/* compiler/twin.h: host twins of GPU kernels.
 *
 * A host twin is the GPU renderer's own text for a kernel (render_gpu.c:
 * the same helpers, the same kernel body, byte for byte) under the host
 * dialect's header instead of CUDA's or HIP's, built by clang into a host
 * shared object (twin_abi.h). The mock GPU runs it where hardware would run
 * the cubin or code object; tests run it beside the interpreter. What the
 * host dialect supplies:
 *   - ids and sizes from the launch (CUDA: grid and block as the special
 *     registers give them; HIP: grid and block sizes read from the implicit
 *     kernel arguments, as the HIP code reads them);
 *   - buffers as checked pointers: every global access is asked about
 *     (range-cached per parameter), a refused one is a fault;
 *   - local (shared) memory per work-group, bounds-checked;
 *   - barriers: the work-items of a group run as fibers (fiber.h) that
 *     switch at each barrier, so the body runs unchanged: the work-item
 *     loop splitting of the C renderer would run another text.
 *
 * Internal to hcq. The differential tests and the mock use it. */
#ifndef HCQ_COMPILER_TWIN_H
#define HCQ_COMPILER_TWIN_H

#include <stdatomic.h>

#include "compiler/cc.h"
#include "compiler/twin_abi.h"

/* ** the one-call entry point for tests (differential testing against the
 * interpreter): renders the host twin of k as `target` would render it
 * ("sm_80".."sm_90a" or "cuda": the CUDA text; "gfx1100", "gfx90a",
 * "gfx942", ... or "hip": the HIP text), compiles it (cached on disk by
 * source, and in the process), and runs launch l exactly as
 * hcq_interp_run() does: the same kernarg layout (buffer params are host
 * addresses), grid, block, group range and access check (l->mem, asked
 * about every global access; NULL: no checks). Groups run in order on the
 * calling thread. HCQ_EFAULT names the kernel, the param or local buffer,
 * the address and index, the work-item and group; HCQ_ENOTSUP when the
 * target's renderer refuses the kernel (HIP: SIN, f64 EXP2/LOG2) or clang
 * is missing. l->op_budget is not supported (ignored). Thread-safe. */
hcq_status cc_twin_run(const hcq_kernel *k, const char *target, const hcq_interp_launch *l);

/* Whether the mock GPU can run `target`'s real binaries through host
 * twins here: the tools that build them (sm_*: clang >= 19 and ptxas;
 * gfx*: a clang that knows the processor) and no HCQ_MOCK_SHADER=ir.
 * false with the reason in why. HCQ_MOCK_SHADER=twin says yes without
 * looking (binaries and twins then must come from the kernel cache). */
bool cc_twin_available(const char *target, char *why, size_t why_size);

/* ** rendering and building */
/* CC_TWIN_CUDA or CC_TWIN_HIP for a target name (sm_*, gfx*, "cuda",
 * "hip"); 0 if the target has no GPU text. */
int cc_twin_origin_of(const char *target);
/* The twin's source: *source_out malloc'd. */
hcq_status cc_twin_render(const hcq_kernel *k, int origin, const char *target, char **source_out);
/* The twin shared object, through the kernel cache (key: the host's
 * architecture, the source and the flags; never the local clang's path
 * or version, so a filled cache serves another machine of the same
 * architecture). *out is an hcq_binary whose target is "host-twin". */
hcq_status cc_twin_compile(const hcq_kernel *k, int origin, const char *target, hcq_binary **out);

#if defined(__x86_64__)
#define CC_TWIN_HOST_ARCH "x86_64-linux"
#elif defined(__aarch64__)
#define CC_TWIN_HOST_ARCH "aarch64-linux"
#else
#define CC_TWIN_HOST_ARCH "unknown-linux"
#endif
/* what decides a twin besides its source (part of its cache keys) */
#define CC_TWIN_FLAGS                                                                                         \
    "host twin v3 " CC_TWIN_HOST_ARCH ": -x c++ -std=c++17 -O2 -shared -fno-exceptions -ffp-contract=off "     \
    "-fno-math-errno -lm"

/* ** loaded twins */
typedef struct cc_twin_module {
    void *dl;
    int fd;
    void (*call)(void);
    const hcq_twin_item **(*slot)(void);
    const char *name;
    const uint32_t *meta;
    uint32_t nparams, local_bytes, origin;
    bool barriers;  /* runs its work-items as fibers */
    bool warp_sync; /* has warp rendezvous (mma): fibers scheduled by barrier and warp (twin_run.c) */
} cc_twin_module;

/* Loads a twin shared object from memory (HCQ_EFORMAT if it is not one). */
hcq_status cc_twin_module_load(const void *so, size_t size, cc_twin_module *out);
void cc_twin_module_unload(cc_twin_module *m); /* zeroed is fine */

/* ** the twins of the GPU binaries this process loaded (twin_table.c).
 * The mock GPU finds a launch's twin by the machine code at its program
 * address. */
#define CC_TWIN_PREFIX 16u
typedef struct cc_twin_entry cc_twin_entry;
struct cc_twin_entry {
    uint8_t sha[32];         /* the binary's SHA-256 */
    void *binary;            /* the GPU binary (a copy): the mock parses it as the hardware would decode it */
    size_t binary_size;
    const uint8_t *code;     /* the kernel's machine code, inside binary */
    size_t code_off, code_size;
    uint8_t *skip;           /* NULL, or per code byte: 1 where the loader relocates (not compared) */
    cc_twin_module mod;
    char label[128];         /* the compiler that built the twin */
    void *_Atomic mock_info; /* the mock's parse of the binary, made on first use, kept */
    cc_twin_entry *next, *next_all;
};

/* Makes sure the twin of `bin` (compiled from k for target) is
 * registered: from the table, else from the kernel cache (keyed by the
 * binary's hash), else built from k and cached under that key. A no-op
 * for targets without GPU text. */
hcq_status cc_twin_prepare(const hcq_kernel *k, const char *target, const void *bin, size_t size);
/* The same without the kernel: the table or the cache, else HCQ_ENOTSUP
 * saying that the mock needs the twin hcq makes when it compiles. `id`
 * names the device for the message. */
hcq_status cc_twin_attach(const void *bin, size_t size, const char *id);
/* Registers the binary without a twin (mod zeroed), so the mock finds the
 * binary a launch's code comes from when its executor runs the machine
 * code itself (and checks the launch against the binary). */
hcq_status cc_twin_register(const void *bin, size_t size);
/* The entry whose kernel code is at va (host memory at that address,
 * read only where readable() allows), or NULL. */
typedef bool (*cc_twin_readable_fn)(void *ctx, uint64_t va, size_t size);
const cc_twin_entry *cc_twin_find(uint64_t va, cc_twin_readable_fn readable, void *ctx);
/* The same, among the entries accept() takes: binaries of the same code can
 * differ in what else they say (a kernel with an unused last parameter and
 * one without it compile to the same SASS), and the caller picks by that. */
typedef bool (*cc_twin_accept_fn)(const cc_twin_entry *e, void *ctx);
const cc_twin_entry *cc_twin_find_if(uint64_t va, cc_twin_readable_fn readable, void *ctx, cc_twin_accept_fn accept,
                                     void *actx);
/* Whether the code at va (readable, code_size bytes) is still e's. */
bool cc_twin_matches(const cc_twin_entry *e, uint64_t va);

/* ** running (twin_run.c) */
typedef struct cc_twin_fault {
    enum {
        CC_TWIN_FAULT_NONE,
        CC_TWIN_FAULT_GLOBAL,
        CC_TWIN_FAULT_LOCAL,
        CC_TWIN_FAULT_BARRIER,
        CC_TWIN_FAULT_MISALIGNED, /* a vector access not aligned to its size (param ~0u: local) */
        CC_TWIN_FAULT_WARP        /* a warp-collective op (mma) that not every lane of the warp reached */
    } kind;
    uint64_t addr;   /* global: the first byte; misaligned: the address (local: the offset) */
    uint32_t size;   /* bytes */
    bool write;
    uint32_t param;  /* global: the buffer's param index */
    int64_t index;   /* global or local: the element index */
    uint64_t count;  /* local: the array's elements */
    uint32_t barrier, barriers; /* barrier: the id used and those the launch has */
    uint32_t gid[3], lid[3];
    char why[512];   /* what the check said (the mapping seen) */
} cc_twin_fault;

typedef struct cc_twin_launch {
    const cc_twin_module *m;
    const void *const *args; /* per param: where its bytes are (read as the kernel starts) */
    uint32_t num_groups[3], local_size[3];
    const uint8_t *implicit; /* HIP origin: the implicit kernel arguments */
    uint32_t barriers;       /* bar.sync ids the launch provides; a kernel using id >= this faults */
    /* Asked about an access outside its param's cached range: true lets
     * it through and sets [*lo, *hi) to an accessible range around it
     * (*writable: writes too); false refuses it, with why. */
    bool (*check)(void *ctx, uint64_t addr, uint32_t size, uint32_t param, bool write, int64_t index, uint64_t *lo,
                  uint64_t *hi, bool *writable, char *why, size_t why_size);
    void *ctx;
    /* NULL, or a flag another thread raises to stop the launch (a mock
     * engine being stopped: its device is closing); read between
     * work-groups and at barriers, as hcq_interp_launch.cancel is */
    const volatile int *cancel;
} cc_twin_launch;

/* Runs groups [begin, end) (linear, x fastest) on the calling thread.
 * Threads may run disjoint ranges of one launch at once, each with its own
 * fault; `stop` (shared; may be NULL) is set by the first to fault and
 * ends the others early. HCQ_EFAULT with *fault filled; HCQ_ENOMEM;
 * HCQ_ESTATE when l->cancel was raised (the launch stopped part-way). */
hcq_status cc_twin_run_groups(const cc_twin_launch *l, uint64_t begin, uint64_t end, atomic_bool *stop,
                              cc_twin_fault *fault);
/* The fault as a message: "kernel `k`: ... in work-item (x,y,z) of
 * work-group (x,y,z): why". */
void cc_twin_fault_describe(const cc_twin_fault *f, const char *kernel, char *buf, size_t size);

#endif
