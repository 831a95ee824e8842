/* compiler/cc.h: the compiler layer's internal API for other layers and
 * for targets: the toolchain (clang, run with posix_spawn), the on-disk
 * cache, the "ir" binary format, and a few entry points tests use.
 *
 * Environment (read in base/env.c): HCQ_CLANG, HCQ_CACHE_DIR, HCQ_DEBUG
 * (1: which compiler and whether the cache hit; 3: generated source). */
#ifndef HCQ_COMPILER_CC_H
#define HCQ_COMPILER_CC_H

#include "compiler/ir.h"
#include "compiler/sha256.h"
#include "compiler/target.h"

/* ** toolchain */
typedef struct cc_clang_info {
    const char *path;    /* absolute, or as given in HCQ_CLANG */
    int major;           /* 22 */
    const char *version; /* first line of `clang --version` */
    const char *label;   /* "clang 22.1.8" */
} cc_clang_info;

/* The clang hcq uses (see hcq_toolchain_clang), found once per process. */
hcq_status cc_clang(const cc_clang_info **out);
/* HCQ_ENOTSUP saying so when the clang found is older than min_major;
 * `why` says what needs it ("the sm_90 target (CUDA 12 PTX)"). */
hcq_status cc_require_clang(int min_major, const char *why);

/* Runs argv[0] with argv (no shell, posix_spawn), stdin from /dev/null,
 * stdout and stderr captured together into *output (malloc'd, NUL-ended,
 * at most 1 MiB kept). *exit_code is the exit status, or 128 + signal.
 * Fails when the program cannot be started (HCQ_ENODEV), or when it runs
 * past HCQ_COMPILE_TIMEOUT_S: it is killed with everything it started (its
 * process group) and the result is HCQ_ECOMPILE saying so. */
hcq_status cc_run(const char *const *argv, char **output, int *exit_code);
/* cc_run for a compiler step: a non-zero exit is HCQ_ECOMPILE with the
 * tool's output and the command line in the message. `what` names the job
 * ("kernel 'matmul' for cpu"). */
hcq_status cc_run_tool(const char *const *argv, const char *what);

/* ** cache: <hcq_cache_dir()>/<sha256 hex>.bin, written atomically */
typedef struct cc_cache_key {
    uint8_t digest[32];
    char hex[65];
} cc_cache_key;

/* Keys are SHA-256 over length-prefixed parts, so ("ab","c") != ("a","bc"). */
void cc_key_begin(cc_sha256_ctx *s);
void cc_key_add(cc_sha256_ctx *s, const void *data, size_t size);
void cc_key_add_str(cc_sha256_ctx *s, const char *str); /* NULL adds a distinct marker */
void cc_key_end(cc_sha256_ctx *s, cc_cache_key *key);

/* true and a malloc'd copy on a hit; false on a miss, a corrupt entry
 * (which is ignored, to be overwritten by the next put), anything but a
 * regular file at the entry's name, or a cache directory that cannot be
 * made or trusted. */
bool cc_cache_get(const cc_cache_key *key, void **data_out, size_t *size_out);
/* Writes to a temp file in the cache directory and renames it into place,
 * so concurrent writers of one key (threads or processes) are safe. */
hcq_status cc_cache_put(const cc_cache_key *key, const void *data, size_t size);
/* The same for entries that are no kernel binary, named <key hex><ext>
 * (".probe": what a compiler said about itself, see toolchain.c), so that
 * tools and tests counting kernels (*.bin) do not count them. */
bool cc_cache_get_ext(const cc_cache_key *key, const char *ext, void **data_out, size_t *size_out);
hcq_status cc_cache_put_ext(const cc_cache_key *key, const char *ext, const void *data, size_t size);
/* HCQ_OK when a cache miss may run a compiler; under HCQ_CACHE_ONLY=1 an
 * error naming the kernel, the target and the cache directory (the
 * hardware kit runs where no compiler is, and must say what it lacks). */
hcq_status cc_cache_miss_allowed(const char *kernel, const char *target);
/* Whether code in dir may be trusted: dir is a directory of ours that
 * nobody else can write, and every component of its path (and of where its
 * symlinks lead) is ours or root's and, if others can write it, sticky.
 * On false, why says which component and what is wrong. cc_cache_get and
 * cc_cache_put use no directory that fails this. */
bool cc_cache_dir_trusted(const char *dir, char *why, size_t n);
/* Path of the entry for key (for tests and messages). */
void cc_cache_path(const cc_cache_key *key, char *buf, size_t size);
/* A fresh private directory (mode 700) for a compile job's files, under
 * $TMPDIR or /tmp: never in the cache directory, whose filesystem may be
 * full. Remove it with cc_remove_temp_dir (which deletes it and all in it)
 * on every path: until then the tools cc_run starts on this thread get it
 * as their TMPDIR (cc_build_dir), so their own temporary files go with it. */
hcq_status cc_make_temp_dir(char *buf, size_t size);
void cc_remove_temp_dir(const char *dir);
/* The directory this thread's cc_make_temp_dir made and cc_remove_temp_dir
 * has not removed, or NULL. */
const char *cc_build_dir(void);

/* The host CPU's identity ("model name" + "flags" of /proc/cpuinfo), for
 * keys of binaries built with -march=native. */
const char *cc_host_cpu_id(void);

/* ** compiling with clang (for targets) */
typedef struct cc_compile_job {
    const cc_target *target;
    const hcq_kernel *kernel;  /* for messages */
    const char *source;
    const char *source_ext;    /* ".c", ".cu", ".hip" */
    const char *const *args;   /* NULL-terminated; before the input */
    const char *const *post_args; /* NULL-terminated or NULL; after the input and -o (libraries) */
    const char *extra_key;     /* more cache key material (host CPU), or NULL */
} cc_compile_job;

/* Looks the job up in the cache; on a miss writes the source to a temp
 * directory, runs `clang args... src -o out`, caches and returns the
 * output. HCQ_DEBUG=1 logs the compiler and the cache result, 3 the source. */
hcq_status cc_compile_with_clang(const cc_compile_job *job, hcq_binary **out);

/* Allocates an hcq_binary owning a copy of data. */
hcq_binary *cc_binary_new(const void *data, size_t size, const char *target, const char *compiler);

/* ** the cpu target's C (tests inject source through here) */
hcq_status cc_cpu_compile_source(const hcq_kernel *k, const char *source, hcq_binary **out);

/* ** "ir" binaries: ELF, e_machine EM_NONE, e_type ET_REL, the serialized
 * kernel in section .hcq.ir, a symbol with the kernel's name over it. */
#define CC_IR_SECTION ".hcq.ir"
hcq_status cc_ir_binary_make(const hcq_kernel *k, void **out, size_t *out_size);
/* Loads an ir binary; anything else is HCQ_EFORMAT naming what the file
 * looks like ("an x86-64 shared object", "a CUDA cubin (e_machine 190)"). */
hcq_status cc_ir_binary_load(const void *elf, size_t size, hcq_kernel **out);

#endif
