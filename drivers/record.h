/* drivers/record.h: recording commands for an engine.
 *
 * A drv_rec is what a backend's encoders write into: a growable dword stream
 * (the packets, in the engine's own format) plus a patch table. A patch says
 * "variable k, plus addend, shifted right by rshift, goes into the `bits`-wide
 * field at bit `lshift` of this place", where the place is a dword of the
 * stream or a byte address in memory the recording owns (kernarg blocks,
 * QMDs). Submitting with new variable values rewrites exactly those fields:
 * nothing is re-encoded. Encoders take hcq_val arguments and never look at
 * whether they are variables: the helpers below do that.
 *
 * Memory outside the stream ("aux": kernargs, QMDs) comes from the
 * recording's aux_alloc callback, which the queue layer points either at the
 * device's timeline-tracked kernarg ring (eager calls) or at memory the queue
 * owns (recorded queues, graphs). */
#ifndef HCQ_DRIVERS_RECORD_H
#define HCQ_DRIVERS_RECORD_H

#include <hcq/queue.h>
#include <string.h>

typedef struct drv_patch {
    uint32_t var;     /* variable index */
    uint8_t in_mem;   /* 0: stream (offset), 1: memory (mem) */
    uint8_t bits;     /* field width, 1..64 */
    uint8_t lshift;   /* field position in the little-endian window at the place */
    uint8_t rshift;   /* the value is (var + addend) >> rshift */
    uint32_t offset;  /* byte offset in the stream when in_mem == 0 */
    uint8_t *mem;     /* CPU address when in_mem == 1 */
    int64_t addend;
} drv_patch;

typedef struct drv_rec drv_rec;
typedef hcq_status (*drv_aux_alloc_fn)(drv_rec *r, uint32_t size, uint32_t align, void **cpu_out,
                                       uint64_t *va_out);

/* A launch whose dims are variables, checked at submit. */
typedef struct drv_dimcheck {
    hcq_program *prog;
    hcq_dims dims;
} drv_dimcheck;

/* An address the engine needs aligned that is a variable: checked at
 * submit (immediates are checked as they are recorded). */
typedef struct drv_aligncheck {
    hcq_val addr;
    uint32_t align;
    const char *what; /* "a signal (a semaphore release with a timestamp)" */
} drv_aligncheck;

struct drv_rec {
    hcq_device *dev;
    hcq_queue_type type;
    uint32_t *dw;
    uint32_t ndw, cap;
    drv_patch *patches;
    uint32_t npatches, pcap;
    drv_dimcheck *dimchecks;
    uint32_t ndimchecks, dcap;
    drv_aligncheck *alignchecks;
    uint32_t naligns, acap;
    uint32_t nvars;   /* highest variable index used + 1 */
    uint32_t ncmds;   /* commands recorded */
    uint32_t nmem_patches; /* patches into aux memory */
    bool uses_aux;    /* some command placed data through aux_alloc */
    hcq_status err;   /* sticky: a recording step ran out of memory */
    drv_aux_alloc_fn aux_alloc;
    void *aux_ctx;
    uint64_t be[8];   /* backend encoder state (e.g. last QMD), zeroed at reset */
};

void drv_rec_init(drv_rec *r, hcq_device *dev, hcq_queue_type type);
void drv_rec_reset(drv_rec *r);
void drv_rec_fini(drv_rec *r);

/* Makes room for n more dwords; false (and r->err set) when out of memory. */
bool drv_rec_grow(drv_rec *r, uint32_t n);
static inline bool drv_rec_reserve(drv_rec *r, uint32_t n)
{
    return r->ndw + n <= r->cap || drv_rec_grow(r, n);
}
/* Appends a dword (after drv_rec_reserve). */
static inline void drv_rec_dw(drv_rec *r, uint32_t v) { r->dw[r->ndw++] = v; }

/* Writes `bits` bits of value at bit lshift of the little-endian window at
 * p; the window is the smallest of 1, 2, 4 or 8 bytes that holds the field,
 * so a patch never touches bytes past the field's last one. */
static inline void drv_field_write(uint8_t *p, uint8_t bits, uint8_t lshift, uint64_t value)
{
    unsigned end = (unsigned)lshift + bits, n = end <= 8 ? 1 : end <= 16 ? 2 : end <= 32 ? 4 : 8;
    uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1), w = 0;
    memcpy(&w, p, n); /* little-endian host: the low n bytes of w */
    w = (w & ~(mask << lshift)) | ((value & mask) << lshift);
    memcpy(p, &w, n);
}

/* A field of the stream dword at index `dword`: written now for an
 * immediate, recorded as a patch for a variable. */
void drv_rec_field(drv_rec *r, uint32_t dword, hcq_val v, uint8_t bits, uint8_t lshift,
                   uint8_t rshift, int64_t addend);
/* Appends a whole dword holding (v >> rshift) & 0xffffffff. */
static inline void drv_rec_val32(drv_rec *r, hcq_val v, uint8_t rshift)
{
    uint32_t at = r->ndw;
    drv_rec_dw(r, 0);
    drv_rec_field(r, at, v, 32, 0, rshift, 0);
}
/* The same for a field in recording-owned memory at p. */
void drv_rec_mem_field(drv_rec *r, uint8_t *p, hcq_val v, uint8_t bits, uint8_t lshift,
                       uint8_t rshift, int64_t addend);

/* Writes a program's parameters at base (the kernarg block), each at its
 * offset and size, recording patches for variables. */
void drv_rec_params(drv_rec *r, uint8_t *base, const hcq_program *p, const hcq_val *params);

/* Records a variable-dims launch for the submit-time check. */
void drv_rec_dimcheck(drv_rec *r, hcq_program *p, const hcq_dims *dims);

/* An address that must be `align`-aligned (a power of two): an immediate
 * is checked now (HCQ_EINVAL naming `what` and the device), a variable is
 * recorded for the submit-time check. */
hcq_status drv_rec_need_align(drv_rec *r, hcq_val addr, uint32_t align, const char *what);
/* The submit-time check of the variables among them. */
hcq_status drv_rec_check_aligns(const drv_rec *r, const uint64_t *vars, const char *fn);

/* Applies every patch whose variable differs from last[] (all of them when
 * last is NULL). */
void drv_rec_apply(drv_rec *r, const uint64_t *vars, uint64_t *last);

/* Resolves an hcq_val against vars (submit-time checks). */
static inline uint64_t drv_val(hcq_val v, const uint64_t *vars)
{
    return v.var ? vars[v.var - 1] : v.imm;
}

#endif
