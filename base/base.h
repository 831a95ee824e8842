/* base/: what every layer of hcq uses: error recording, the environment
 * (read once, in one place), debug logging, the live-handle registry and a
 * few arithmetic helpers. Internal; public names live in include/hcq/base.h. */
#ifndef HCQ_BASE_BASE_H
#define HCQ_BASE_BASE_H

#include <hcq/base.h>
#include <stdarg.h>
#include <stdio.h>

/* ** errors */
/* Records status + message for hcq_error_message() and returns status, so
 * call sites read `return base_err(HCQ_EINVAL, "...", ...)`. */
hcq_status base_err(hcq_status s, const char *fmt, ...) HCQ_PRINTF(2, 3);
hcq_status base_verr(hcq_status s, const char *fmt, va_list ap);
/* Prepends "context: " to the current message (keeps the status). */
hcq_status base_err_prefix(hcq_status s, const char *fmt, ...) HCQ_PRINTF(2, 3);
/* The symbolic name of an errno value ("ENOENT"; either sign), "E?" if unknown. */
const char *base_errno_name(int e);

/* ** symbol versions (scripts/libhcq.map; include/hcq/base.h, ABI): the
 * C function `impl` is exported as `name` at version `node`: BASE_SYMVER
 * the default one programs link against now, BASE_SYMVER_OLD a version
 * that programs built against older headers bind. impl is HCQ_API and not
 * hcq_-prefixed, so the version script keeps its own name local. A static
 * link sees `name` itself (the default version). */
#define BASE_SYMVER(impl, name, node) __asm__(".symver " #impl ", " #name "@@" #node)
#define BASE_SYMVER_OLD(impl, name, node) __asm__(".symver " #impl ", " #name "@" #node)

/* ** environment, read once per process (tests may re-read) */
/* HCQ_MOCK_SHADER's values (base_env.mock_shader_kind) */
enum { BASE_MOCK_SHADER_DEFAULT, BASE_MOCK_SHADER_IR, BASE_MOCK_SHADER_TWIN, BASE_MOCK_SHADER_ISA, BASE_MOCK_SHADER_NONE };

typedef struct base_env {
    int debug;               /* HCQ_DEBUG */
    const char *device;      /* HCQ_DEVICE */
    int mock;                /* HCQ_MOCK */
    int trace;               /* HCQ_TRACE */
    const char *cache_dir;   /* HCQ_CACHE_DIR */
    int cache_only;          /* HCQ_CACHE_ONLY: a kernel missing from the cache is an error, never compiled */
    const char *clang;       /* HCQ_CLANG */
    const char *ptxas;       /* HCQ_PTXAS */
    const char *nvdisasm;    /* HCQ_NVDISASM: the SASS decoder of the mock's executor (compiler/sass.h) */
    uint64_t timeout_ns;     /* HCQ_TIMEOUT_MS */
    uint64_t compile_timeout_ns; /* HCQ_COMPILE_TIMEOUT_S (default BASE_DEFAULT_COMPILE_TIMEOUT_S) */
    const char *mock_dump;   /* HCQ_MOCK_DUMP */
    const char *mock_sched;  /* HCQ_MOCK_SCHED */
    const char *mock_config; /* HCQ_MOCK_CONFIG */
    const char *dump;        /* HCQ_DUMP */
    const char *profile;     /* HCQ_PROFILE */
    int cpu_threads;         /* HCQ_CPU_THREADS: 0 = one per core */
    int beam;                /* HCQ_BEAM: kernel plan search width (0: off; tensor/beam.c) */
    uint32_t beam_budget_ms; /* HCQ_BEAM_BUDGET_MS: a kernel's search time at most */
    const char *cpu_target;  /* HCQ_CPU_TARGET: "cpu" (default) or "ir" */
    const char *mock_shader; /* HCQ_MOCK_SHADER: "ir" runs the mock GPUs on kernel IR, "twin" on host
                                twins of real binaries even without the tools (from the kernel cache),
                                "isa" on the vendor mock's executor of the machine code itself;
                                default: twins where clang (and ptxas) are, else IR */
    int mock_shader_kind;    /* HCQ_MOCK_SHADER as BASE_MOCK_SHADER_* */
    const char *mock_shader_nv, *mock_shader_amd; /* HCQ_MOCK_SHADER_NV / _AMD: the same words, for one kind */
    int mock_shader_nv_kind, mock_shader_amd_kind; /* what each kind runs: its own variable, else HCQ_MOCK_SHADER's */
    bool mock_memcheck;      /* HCQ_MOCK_CHECK=memcheck: the mock executors check shared memory and bounds */
    int alloc_cache;         /* HCQ_ALLOC_CACHE: 0 frees device memory at once */
    uint32_t kernarg_ring_kib; /* HCQ_KERNARG_RING_KIB (default 4096) */
    uint32_t staging_chunk_kib; /* HCQ_STAGING_CHUNK_KIB (default 2048) */
    uint32_t staging_slots;  /* HCQ_STAGING_SLOTS (default 8) */
    uint64_t timeline_start; /* HCQ_TIMELINE_START: first timeline value (tests of wrap) */
    uint32_t ring_shift;     /* HCQ_RING_SHIFT: command rings of 2^N entries/dwords (0: the backend's) */
    uint64_t spin_ns;        /* HCQ_SPIN_US: how long a waiting thread spins before it sleeps (host waits,
                                idle CPU-device engines); default BASE_DEFAULT_SPIN_US */
    const char *status_dir;  /* HCQ_STATUS_DIR: where open devices publish their progress for `hcq top`
                                (default /dev/shm/hcq-<uid>; "off" publishes nothing); absolute */
    int trace_json;          /* HCQ_TRACE_JSON: with HCQ_TRACE=1, JSON Lines */
    int trace_streams;       /* HCQ_TRACE_STREAMS: with HCQ_TRACE=1, stream capture too */
    /* not ours, read for defaults (compiler/): */
    const char *path;           /* PATH: where clang-NN is looked for */
    const char *home;           /* HOME: ~/.cache/hcq */
    const char *xdg_cache_home; /* XDG_CACHE_HOME: $XDG_CACHE_HOME/hcq */
    const char *tmpdir;         /* TMPDIR: where compile jobs build (else /tmp) */
} base_env;

/* A compiler run longer than this is killed (generous: an -O3 build of a
 * large fused kernel takes seconds; one running for minutes is stuck). */
#define BASE_DEFAULT_COMPILE_TIMEOUT_S 300

/* Long enough to cover a tiny kernel's round trip and the host's own work
 * between two launches, so neither side needs a syscall to wake the other;
 * short enough that an idle process stops burning a core at once. */
#define BASE_DEFAULT_SPIN_US 50

/* The LIBDIR the build was configured with (where `make install` puts the
 * libraries; base/version.c from $(B)/revision.h). */
const char *base_install_libdir(void);

const base_env *base_env_get(void);
/* Re-reads the environment (tests that setenv() call this). */
void base_env_reload(void);
/* HCQ_OK, or HCQ_EINVAL naming the first variable whose value was refused
 * (not a number, or out of its range: the default was used instead) and
 * what it may hold; fn prefixes the message. Entry points that depend on
 * the knobs (hcq_device_open, hcq_compile) call it. */
hcq_status base_env_check(const char *fn);

/* ** logging to stderr, gated by HCQ_DEBUG */
void base_log(int level, const char *fmt, ...) HCQ_PRINTF(2, 3);
#define BASE_LOG(level, ...)                                                                       \
    do {                                                                                           \
        if (hcq_debug_level() >= (level)) base_log((level), __VA_ARGS__);                          \
    } while (0)

/* ** memcheck (HCQ_MOCK_CHECK=memcheck; base/memcheck.c): the allocations
 * hcq's allocator handed out, with the bytes each was asked for, which the
 * mock GPUs' executors check every global access against, and the reports
 * of bad accesses. A "span" is the mapping an allocation got (rounding and
 * memcheck's padding included); bytes of a span past the requested size,
 * and spans of freed allocations the allocator keeps for reuse, are bad. */
typedef struct base_memcheck_alloc {
    uint64_t va, size, span; /* span 0: no allocation */
    bool live;
} base_memcheck_alloc;
/* mem/: an allocation handed out (new, or reused from the cache) */
void base_memcheck_note(uint64_t va, uint64_t span, uint64_t size);
/* mem/: freed by its user (the allocator may keep the mapping) */
void base_memcheck_freed(uint64_t va);
/* mem/: given back to the driver */
void base_memcheck_gone(uint64_t va);
/* The allocation whose span holds va (true), else false with [*lo, *hi)
 * the bytes around va that no span covers. */
bool base_memcheck_find(uint64_t va, base_memcheck_alloc *a, uint64_t *lo, uint64_t *hi);
/* Whether an access of n bytes at va is allowed: inside a live
 * allocation's requested bytes, or wholly outside every span (memory hcq's
 * allocator did not hand out: the mappings decide). [*lo, *hi): the range
 * the same answer holds for (an executor may cache it); *a the allocation
 * (a->span 0: none). */
bool base_memcheck_allows(uint64_t va, uint64_t n, base_memcheck_alloc *a, uint64_t *lo, uint64_t *hi);
/* Says where a refused access lies relative to its allocation. */
void base_memcheck_explain(uint64_t va, uint64_t n, const base_memcheck_alloc *a, char *buf, size_t size);
/* base_memcheck_allows for executors that stop at the first refused
 * access (host twins, the IR interpreter): false with why saying
 * "memcheck: invalid global write of N bytes at 0x.. (where)". */
bool base_memcheck_access(uint64_t va, uint64_t n, bool write, uint64_t *lo, uint64_t *hi, char *why, size_t why_size);
/* One bad access: printed to stderr ("hcq memcheck: ...", the first 100
 * of the process) and kept for the next fault. */
void base_memcheck_report(const char *fmt, ...) HCQ_PRINTF(1, 2);
/* The reports since the last take as one message ("memcheck found N bad
 * accesses: r1; ...; and M more"; the first 4 in full); its length, 0 if
 * none or if the one report is already in `said` (the fault's message). */
size_t base_memcheck_take(const char *said, char *buf, size_t size);

/* ** live handles: catches use of freed or foreign objects (double free).
 * Every public object registers itself at creation and leaves at destroy. */
void base_handle_add(const void *p, uint32_t kind);
/* Removes p; false if p was not a live handle of that kind. */
bool base_handle_remove(const void *p, uint32_t kind);
bool base_handle_live(const void *p, uint32_t kind);
/* HCQ_OK when p is a live handle of kind; else HCQ_EINVAL for NULL or
 * HCQ_ESTATE for a stale pointer (freed, destroyed, or its device closed),
 * with "fn: what ..." in the message. Every public call checks its handles
 * with this before touching them. */
hcq_status base_handle_check(const void *p, uint32_t kind, const char *fn, const char *what);
/* Dependents: fn(arg) must run before owner goes away (a tensor context
 * is destroyed when its device is closed). The layer that owns `owner`
 * runs them; the dependent removes itself when it goes first. */
typedef void (*base_dependent_fn)(void *arg);
bool base_dependent_add(const void *owner, base_dependent_fn fn, void *arg);
void base_dependent_remove(const void *owner, void *arg);
/* Runs (and forgets) every dependent of owner; returns how many ran. */
unsigned base_dependents_run(const void *owner);
enum {
    BASE_H_DEVICE = 1,
    BASE_H_BUFFER,
    BASE_H_SIGNAL,
    BASE_H_QUEUE,
    BASE_H_PROGRAM,
    BASE_H_GRAPH,
    BASE_H_TENSOR,
    BASE_H_CTX,
    BASE_H_SHARDED,
};

/* ** helpers */
static inline uint64_t base_align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
static inline bool base_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
#define BASE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BASE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define BASE_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Sleeps, for backoff in waits. */
void base_sleep_ns(uint64_t ns);
/* A bounded spin-wait, for a thread that expects what it waits for within
 * microseconds and would otherwise sleep and need a syscall to be woken:
 *
 *     base_spin sp;
 *     base_spin_begin(&sp);
 *     while (!ready()) if (!base_spin_step(&sp)) { sleep until woken; base_spin_begin(&sp); }
 *
 * A step returns false once HCQ_SPIN_US have passed since the first step
 * (then sleep). The first BASE_SPIN_PAUSE_NS of a spin pause the core; later
 * steps yield it (sched_yield), so on a machine with more runnable threads
 * than cores the thread being waited for gets to run instead of the
 * spinner eating its time slice. */
typedef struct base_spin {
    uint64_t start, budget_ns;
} base_spin;
#define BASE_SPIN_PAUSE_NS 3000u
void base_spin_begin(base_spin *sp);
/* HCQ_SPIN_US in ns, read atomically (safe against base_env_reload) */
uint64_t base_env_spin_ns(void);
bool base_spin_step(base_spin *sp);

/* Formats a byte count as "1.5 MiB" into buf. */
const char *base_fmt_bytes(char *buf, size_t size, uint64_t bytes);

/* checked allocation: record HCQ_ENOMEM with the size on failure */
void *base_calloc(size_t n, size_t size);
void *base_realloc_array(void *p, size_t n, size_t size);

/* ** files replaced whole (file.c): the new contents go to a temporary
 * beside path; commit flushes, fsyncs and renames it over path, so a
 * failure at any point (a full disk, a kill) leaves the old file as it was.
 * A symbolic link is followed (the file it names is replaced); a path that
 * is not a regular file (/dev/full, /dev/stdout, a FIFO) is written in
 * place, never renamed over.
 *
 *     base_outfile o;
 *     if ((s = base_outfile_open(&o, path, fn))) return s;
 *     fwrite(.., o.f);  (failed writes need no check: commit sees them)
 *     return base_outfile_commit(&o, fn);  (or base_outfile_abort(&o)) */
typedef struct base_outfile {
    FILE *f;
    char path[4096], tmp[4096 + 64];
} base_outfile;
hcq_status base_outfile_open(base_outfile *o, const char *path, const char *fn);
hcq_status base_outfile_commit(base_outfile *o, const char *fn);
void base_outfile_abort(base_outfile *o);

#endif
