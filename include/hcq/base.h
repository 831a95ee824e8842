/* hcq/base.h: status codes, error messages, patchable values and the
 * opaque handle types every layer shares.
 *
 * Error contract (the sqlite3_errmsg model):
 *   - fallible calls return hcq_status: HCQ_OK (0) or a negative HCQ_E* code;
 *   - constructors return NULL on failure;
 *   - either way a message saying what was seen and what to do is left in
 *     thread-local storage, read with hcq_error_message();
 *   - out-parameters are written only on success.
 */
#ifndef HCQ_BASE_H
#define HCQ_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HCQ_API __attribute__((visibility("default")))
#define HCQ_MUST_CHECK __attribute__((warn_unused_result))
#define HCQ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HCQ_API
#define HCQ_MUST_CHECK
#define HCQ_PRINTF(f, a)
#endif

#define HCQ_VERSION_MAJOR 0
#define HCQ_VERSION_MINOR 2
#define HCQ_VERSION_PATCH 0
#define HCQ_VERSION_STRING "0.2.0"

/* ** ABI
 * libhcq.so.0 keeps the struct layouts it shipped with (0.1.0) for every
 * program linked against it:
 *   - a public struct only grows at its end, never in the middle, and
 *     fields are never removed, retyped or reordered;
 *   - when a struct grows, every function that passes it gets a new symbol
 *     version (scripts/libhcq.map): a program built against the newer
 *     header binds the new one, so an older library refuses to load it (the
 *     loader names the missing version) instead of letting it read or write
 *     past the struct's old end; programs built against the older header
 *     keep binding the old version, which reads or writes only the old
 *     layout (for a struct the library fills and returns by pointer, such
 *     as hcq_device_props, that is the same call);
 *   - structs used in arrays (hcq_val, hcq_arg, hcq_dims, hcq_param_info,
 *     hcq_ir_op, hcq_reading, hcq_device_process, hcq_interp_access) never
 *     change: growing one would move every element after the first.
 * Nothing is asked of callers (no size field to set). A layout that has to
 * break takes a new soname, libhcq.so.1. scripts/check-install.sh checks
 * all of this against the layouts each release shipped (scripts/abi/). */

/* ** status codes */
typedef enum hcq_status {
    HCQ_OK = 0,         /* success */
    HCQ_EINVAL = -1,    /* an argument is wrong (named in the message) */
    HCQ_ENOMEM = -2,    /* out of host or device memory (sizes in the message) */
    HCQ_ENODEV = -3,    /* no such device, or its driver is absent */
    HCQ_ENOTSUP = -4,   /* not supported by this device or not implemented yet */
    HCQ_ETIMEDOUT = -5, /* a wait passed its timeout (observed value in the message) */
    HCQ_EFAULT = -6,    /* the device faulted (address, queue, kernel in the message) */
    HCQ_ECOMPILE = -7,  /* the compiler failed (its output in the message) */
    HCQ_EIO = -8,       /* a driver call failed (call and driver status in the message) */
    HCQ_EFORMAT = -9,   /* a binary or file is malformed or for another target */
    HCQ_ELIMIT = -10,   /* a launch or object exceeds a device or program limit */
    HCQ_ESTATE = -11,   /* an object is in the wrong state (freed, in use, faulted) */
} hcq_status;

/* The library's version ("0.1.0", the HCQ_VERSION_* of the build) and the
 * source revision it was built from ("3f2a9c1b7e04", "-dirty" appended for
 * uncommitted changes, "unknown" outside a git checkout). */
HCQ_API const char *hcq_version(void);
HCQ_API const char *hcq_build_revision(void);

/* The message of the last failing call on this thread. Owned by the library,
 * valid until the next hcq call on this thread; never NULL. */
HCQ_API const char *hcq_error_message(void);
/* The status of the last failing call on this thread (HCQ_OK if none). */
HCQ_API hcq_status hcq_error_status(void);
/* "HCQ_EINVAL" etc.; a static string, never NULL. */
HCQ_API const char *hcq_status_name(hcq_status s);
/* Forget the last error on this thread. */
HCQ_API void hcq_error_clear(void);

/* HCQ_DEBUG level (0-4), read once from the environment:
 *   1 devices and kernels, 2 every launch with its time, 3 generated source,
 *   4 every packet. */
HCQ_API int hcq_debug_level(void);

/* Monotonic host clock in nanoseconds. */
HCQ_API uint64_t hcq_now_ns(void);

/* ** opaque handles */
typedef struct hcq_device hcq_device;
typedef struct hcq_buffer hcq_buffer;
typedef struct hcq_signal hcq_signal;
typedef struct hcq_queue hcq_queue;
typedef struct hcq_program hcq_program;
typedef struct hcq_graph hcq_graph;
typedef struct hcq_kernel hcq_kernel; /* kernel IR, see compiler.h */

/* ** patchable values
 *
 * Every argument a queue command takes (a signal address or value, a kernarg,
 * a buffer address, a launch dimension, a copy address or size) is an
 * hcq_val: either an immediate or variable number k of the queue. A queue
 * records where each variable landed (a dword in the command stream, a field
 * in kernarg or QMD memory) and hcq_queue_submit() writes the values given
 * for that submission there, without re-encoding anything. */
typedef struct hcq_val {
    uint64_t imm; /* the value when var == 0 */
    uint32_t var; /* 0: immediate; k + 1: variable k */
    uint32_t _reserved;
} hcq_val;

#define HCQ_IMM(x) ((hcq_val){.imm = (uint64_t)(x), .var = 0, ._reserved = 0})
#define HCQ_VAR(k) ((hcq_val){.imm = 0, .var = (uint32_t)(k) + 1u, ._reserved = 0})
static inline bool hcq_val_is_var(hcq_val v) { return v.var != 0; }
static inline uint32_t hcq_val_var_index(hcq_val v) { return v.var - 1u; }

/* Default timeout of waits that take none (HCQ_TIMEOUT_MS overrides): 30 s. */
#define HCQ_DEFAULT_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)

#ifdef __cplusplus
}
#endif
#endif
