/* drivers/nv/nv_hw.h: the NVIDIA command formats, written once and shared
 * by the backend's encoders, the mock GPU that executes them and (later) a
 * decoder:
 *   - GPFIFO entries and USERD offsets;
 *   - pushbuffer method headers and the methods we use, per class, with
 *     their names (nv_method_name);
 *   - the QMD (compute launch descriptor) as a field table covering V03
 *     (Ampere, Ada) and V04 (Hopper), with a setter and a getter;
 *   - packet builders: small static inline functions over a drv_rec, named
 *     after the packet, whose arguments may be patchable hcq_vals.
 * Every encoding is shift/mask, never C bitfields.
 *
 * Sources (facts in ../shared/reference/nv-facts.md §3, §4): open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/class/clc56f.h, clc86f.h (host methods, GP_ENTRY,
 * USERD), clc6b5.h and open-gpu-doc classes/dma-copy/clc8b5.h (copy engine),
 * open-gpu-doc classes/compute/clc6c0qmd.h (QMD V03) and clcbc0qmd.h (V04),
 * clcbc0.h / clc6c0.h (compute methods). */
#ifndef HCQ_DRIVERS_NV_HW_H
#define HCQ_DRIVERS_NV_HW_H

#include "drivers/record.h"

/* ** GPFIFO entry (GP_ENTRY0/1 as one u64): FETCH 0, GET (VA bits 39:2),
 * LEVEL 41 (1 = subroutine), LENGTH 62:42 in dwords, SYNC 63 */
#define NV_GP_ENTRY_LEVEL_SUBROUTINE (1ull << 41)
#define NV_GP_ENTRY_MAX_DW ((1u << 21) - 1)
static inline uint64_t nv_gp_entry(uint64_t pb_va, uint32_t ndw)
{
    return (pb_va & 0xFFFFFFFFFCull) | NV_GP_ENTRY_LEVEL_SUBROUTINE | ((uint64_t)ndw << 42);
}
static inline uint64_t nv_gp_entry_va(uint64_t e) { return e & 0xFFFFFFFFFCull; }
static inline uint32_t nv_gp_entry_len(uint64_t e) { return (uint32_t)(e >> 42) & NV_GP_ENTRY_MAX_DW; }

/* ** USERD (AmpereAControlGPFifo / HopperAControlGPFifo, 512 bytes) */
#define NV_USERD_SIZE 512u
#define NV_USERD_GP_GET 0x88u /* read-only for the host: the next entry the GPU fetches */
#define NV_USERD_GP_PUT 0x8Cu

/* ** method headers (NVC56F_DMA_*): SEC_OP 31:29, COUNT 28:16, SUBCH 15:13,
 * ADDRESS 11:0 in dwords */
enum nv_sec_op {
    NV_SEC_OP_INC = 1,     /* data to mthd, mthd + 4, ... */
    NV_SEC_OP_NON_INC = 3, /* every word to the same method */
    NV_SEC_OP_IMMD = 4,    /* 13-bit value in COUNT, no data */
    NV_SEC_OP_ONE_INC = 5, /* first word to mthd, the rest to mthd + 4 */
};
#define NV_MTHD_MAX_COUNT 0x1FFFu
static inline uint32_t nv_mthd_header(uint32_t sec_op, uint32_t subch, uint32_t mthd, uint32_t count)
{
    return (sec_op << 29) | ((count & NV_MTHD_MAX_COUNT) << 16) | ((subch & 7u) << 13) | ((mthd >> 2) & 0xFFFu);
}
static inline uint32_t nv_mthd_sec_op(uint32_t h) { return h >> 29; }
static inline uint32_t nv_mthd_count(uint32_t h) { return (h >> 16) & NV_MTHD_MAX_COUNT; }
static inline uint32_t nv_mthd_subch(uint32_t h) { return (h >> 13) & 7u; }
static inline uint32_t nv_mthd_addr(uint32_t h) { return (h & 0xFFFu) << 2; }
/* dwords a packet takes, header included */
static inline uint32_t nv_mthd_packet_dw(uint32_t h)
{
    return nv_mthd_sec_op(h) == NV_SEC_OP_IMMD ? 1u : 1u + nv_mthd_count(h);
}

/* subchannels the backend binds (SET_OBJECT): host methods work on any */
enum { NV_SUBCH_HOST = 0, NV_SUBCH_COMPUTE = 1, NV_SUBCH_COPY = 4 };

/* ** host (channel class) methods, below 0x100 on every subchannel */
enum nv_host_mthd {
    NV_HOST_SET_OBJECT = 0x000, /* class 15:0 */
    NV_HOST_NON_STALL_INTERRUPT = 0x020,
    NV_HOST_SEM_ADDR_LO = 0x05C, /* VA bits 31:2 */
    NV_HOST_SEM_ADDR_HI = 0x060, /* 7:0 on C56F (40-bit VAs), 24:0 on C86F */
    NV_HOST_SEM_PAYLOAD_LO = 0x064,
    NV_HOST_SEM_PAYLOAD_HI = 0x068,
    NV_HOST_SEM_EXECUTE = 0x06C,
    NV_HOST_WFI = 0x078,
};
#define NV_HOST_MTHD_LIMIT 0x100u
/* SEM_EXECUTE fields */
enum nv_sem_op {
    NV_SEM_OP_ACQUIRE = 0,
    NV_SEM_OP_RELEASE = 1,
    NV_SEM_OP_ACQ_STRICT_GEQ = 2,
    NV_SEM_OP_ACQ_CIRC_GEQ = 3,
    NV_SEM_OP_ACQ_AND = 4,
    NV_SEM_OP_ACQ_NOR = 5,
};
#define NV_SEM_EXECUTE_OPERATION(v) ((v) & 7u)
#define NV_SEM_EXECUTE_ACQUIRE_SWITCH_TSG (1u << 12)
#define NV_SEM_EXECUTE_RELEASE_WFI (1u << 20)
#define NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT (1u << 24)
#define NV_SEM_EXECUTE_RELEASE_TIMESTAMP (1u << 25)

/* ** compute class methods (same offsets in C6C0, C7C0, C9C0, CBC0) */
enum nv_compute_mthd {
    NV_COMPUTE_WAIT_FOR_IDLE = 0x0110,
    NV_COMPUTE_LINE_LENGTH_IN = 0x0180,
    NV_COMPUTE_LINE_COUNT = 0x0184,
    NV_COMPUTE_OFFSET_OUT_UPPER = 0x0188,
    NV_COMPUTE_OFFSET_OUT = 0x018C,
    NV_COMPUTE_LAUNCH_DMA = 0x01B0,
    NV_COMPUTE_LOAD_INLINE_DATA = 0x01B4,
    NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x02A0, /* hi 16:0 */
    NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x02A4,
    NV_COMPUTE_SEND_PCAS_A = 0x02B4,          /* QMD VA >> 8 */
    NV_COMPUTE_SEND_SIGNALING_PCAS2_B = 0x02C0, /* PCAS_ACTION 3:0 */
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A = 0x02E4,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B = 0x02E8,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C = 0x02EC,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A = 0x0790,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B = 0x0794,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x07B0,
    NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x07B4,
    NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698,
};
#define NV_PCAS_ACTION_PREFETCH_SCHEDULE 9u
#define NV_COMPUTE_LAUNCH_DMA_PITCH_NO_SYSMEMBAR 0x41u
/* INSTRUCTION | GLOBAL_DATA | CONSTANT */
#define NV_INVALIDATE_SHADER_CACHES_ALL 0x1011u

/* ** copy engine methods (C6B5, C7B5, C8B5) */
enum nv_copy_mthd {
    NV_COPY_SET_SEMAPHORE_A = 0x0240, /* upper address, 24:0 */
    NV_COPY_SET_SEMAPHORE_B = 0x0244,
    NV_COPY_SET_SEMAPHORE_PAYLOAD = 0x0248,
    NV_COPY_SET_SEMAPHORE_PAYLOAD_UPPER = 0x024C, /* C7B5, C8B5 */
    NV_COPY_LAUNCH_DMA = 0x0300,
    NV_COPY_OFFSET_IN_UPPER = 0x0400,
    NV_COPY_OFFSET_IN_LOWER = 0x0404,
    NV_COPY_OFFSET_OUT_UPPER = 0x0408,
    NV_COPY_OFFSET_OUT_LOWER = 0x040C,
    NV_COPY_PITCH_IN = 0x0410,
    NV_COPY_PITCH_OUT = 0x0414,
    NV_COPY_LINE_LENGTH_IN = 0x0418,
    NV_COPY_LINE_COUNT = 0x041C,
};
/* LAUNCH_DMA fields */
#define NV_COPY_DMA_TRANSFER_TYPE(v) ((v) & 3u) /* 0 none, 1 pipelined, 2 non-pipelined */
#define NV_COPY_DMA_FLUSH_ENABLE (1u << 2)
#define NV_COPY_DMA_SEMAPHORE_TYPE(v) (((v) >> 3) & 3u) /* 1 one word, 2 four words with timestamp */
#define NV_COPY_DMA_SRC_PITCH (1u << 7)
#define NV_COPY_DMA_DST_PITCH (1u << 8)
#define NV_COPY_DMA_MULTI_LINE (1u << 9)
#define NV_COPY_DMA_SEMAPHORE_PAYLOAD_64 (1u << 27) /* C7B5, C8B5 */
#define NV_COPY_DMA_COPY 0x182u               /* non-pipelined, pitch to pitch, one line */
#define NV_COPY_DMA_SEM_RELEASE_TS 0x14u      /* flush, four-word semaphore with timestamp */
/* one LINE_LENGTH_IN: copies larger than this are split (tinygrad's limit) */
#define NV_COPY_MAX_BYTES (1ull << 31)

/* The name of a method of a class family ("SEM_EXECUTE", "SEND_PCAS_A"), or
 * NULL. kind: 0 host, 1 compute, 2 copy. */
const char *nv_method_name(int kind, uint32_t mthd);

/* ** the fields of the methods decoders split out: one row per field, in
 * bit order (open-gpu-kernel-modules 580.142 src/common/sdk/nvidia/inc/
 * class/clc56f.h, clc86f.h SEM_EXECUTE; clc6c0.h LAUNCH_DMA,
 * SEND_SIGNALING_PCAS2_B, INVALIDATE_SHADER_CACHES_NO_WFI, SET_OBJECT;
 * clc6b5.h, clc7b5.h, clc8b5.h LAUNCH_DMA). values names each value of an
 * enumerated field (NULL-terminated, index = value); a field without values
 * is a flag (printed when set) or a number. min_cls: the first class of
 * the family that has the field (0: all). */
typedef struct nv_mfield {
    uint8_t kind;        /* 0 host, 1 compute, 2 copy (as nv_method_name) */
    uint16_t mthd;
    const char *name;
    uint8_t lo, bits;
    const char *const *values;
    uint16_t min_cls, max_cls; /* the classes of the family that have it (0: no bound) */
} nv_mfield;
/* The fields of method mthd of family kind (n rows from *out), or 0. */
uint32_t nv_method_fields(int kind, uint32_t mthd, const nv_mfield **out);

/* ** QMD: one field table for V03 and V04. A field has a position per
 * version (bit offset, width; absent when width is 0); indexed fields
 * (constant buffers, release semaphores) add a stride per index. */
enum nv_qmd_ver { NV_QMD_V03 = 0, NV_QMD_V04 = 1 };
#define NV_QMD_V03_BYTES 256u
#define NV_QMD_V04_BYTES 384u
#define NV_QMD_MAX_DW 96u
static inline uint32_t nv_qmd_bytes(int ver) { return ver == NV_QMD_V04 ? NV_QMD_V04_BYTES : NV_QMD_V03_BYTES; }
/* V04 keeps constant-buffer addresses >> 6 (CONSTANT_BUFFER_ADDR_*_SHIFTED6 in clcbc0qmd.h) */
static inline unsigned nv_qmd_cbuf_shift(int ver) { return ver == NV_QMD_V04 ? 6u : 0u; }
/* the version a QMD says it is (QMD_MAJOR_VERSION sits at bits 583:580 in both layouts) */
static inline uint32_t nv_qmd_major_of(const uint32_t *qmd) { return (qmd[18] >> 4) & 0xfu; }
static inline int nv_qmd_ver_of_major(uint32_t major) { return major == 4 ? NV_QMD_V04 : NV_QMD_V03; }

typedef enum nv_qmd_id {
    NV_QMD_GROUP_ID,
    NV_QMD_TYPE,
    NV_QMD_SM_GLOBAL_CACHING_ENABLE,
    NV_QMD_INVALIDATE_TEXTURE_HEADER_CACHE,
    NV_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE,
    NV_QMD_INVALIDATE_TEXTURE_DATA_CACHE,
    NV_QMD_INVALIDATE_SHADER_DATA_CACHE,
    NV_QMD_INVALIDATE_INSTRUCTION_CACHE,
    NV_QMD_INVALIDATE_SHADER_CONSTANT_CACHE,
    NV_QMD_CWD_MEMBAR_TYPE,
    NV_QMD_API_VISIBLE_CALL_LIMIT,
    NV_QMD_SAMPLER_INDEX,
    NV_QMD_GRID_WIDTH,
    NV_QMD_GRID_HEIGHT,
    NV_QMD_GRID_DEPTH,
    NV_QMD_CTA_THREAD_DIMENSION0,
    NV_QMD_CTA_THREAD_DIMENSION1,
    NV_QMD_CTA_THREAD_DIMENSION2,
    NV_QMD_SHARED_MEMORY_SIZE,
    NV_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE,
    NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE,
    NV_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE,
    NV_QMD_VERSION,
    NV_QMD_MAJOR_VERSION,
    NV_QMD_CONSTANT_BUFFER_VALID,          /* (i), i < 8 */
    NV_QMD_CONSTANT_BUFFER_INVALIDATE,     /* (i) */
    NV_QMD_CONSTANT_BUFFER_ADDR_LOWER,     /* (i): V04 holds addr >> 6 */
    NV_QMD_CONSTANT_BUFFER_ADDR_UPPER,     /* (i) */
    NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4,  /* (i) */
    NV_QMD_REGISTER_COUNT,
    NV_QMD_BARRIER_COUNT,
    NV_QMD_SHADER_LOCAL_MEMORY_LOW_SIZE,
    NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE,
    NV_QMD_PROGRAM_ADDRESS_LOWER,
    NV_QMD_PROGRAM_ADDRESS_UPPER,
    NV_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED,
    NV_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED,
    NV_QMD_PROGRAM_PREFETCH_SIZE,
    NV_QMD_SASS_VERSION,
    NV_QMD_RELEASE_ENABLE,          /* (i): 3 slots (V03's third at 1664, clc6c0qmd.h RELEASE2) */
    NV_QMD_RELEASE_STRUCTURE_SIZE,  /* (i): 0 four words (with timestamp), 1 one word */
    NV_QMD_RELEASE_MEMBAR_TYPE,     /* (i) */
    NV_QMD_RELEASE_PAYLOAD64B,      /* (i) */
    NV_QMD_RELEASE_ADDRESS_LOWER,   /* (i) */
    NV_QMD_RELEASE_ADDRESS_UPPER,   /* (i) */
    NV_QMD_RELEASE_PAYLOAD_LOWER,   /* (i) */
    NV_QMD_RELEASE_PAYLOAD_UPPER,   /* (i) */
    NV_QMD_NFIELDS
} nv_qmd_id;

typedef struct nv_qmd_pos {
    uint16_t lo;     /* first bit, counted from the start of the QMD */
    uint8_t bits;    /* width; 0: not in this version */
    uint8_t count;   /* indices (1 for plain fields) */
    uint16_t stride; /* bits between index i and i + 1 */
    uint8_t split;   /* indices from this one on (0: none) ... */
    uint16_t jump;   /* ... lie this many bits further (V03's RELEASE2 is not beside RELEASE1) */
} nv_qmd_pos;

typedef struct nv_qmd_field {
    const char *name;
    nv_qmd_pos v[2]; /* [NV_QMD_V03], [NV_QMD_V04] */
} nv_qmd_field;
extern const nv_qmd_field nv_qmd_fields[NV_QMD_NFIELDS];

/* Where field f(i) lives in version ver: false when it does not exist. */
static inline bool nv_qmd_where(int ver, nv_qmd_id f, unsigned i, unsigned *bit, unsigned *bits)
{
    const nv_qmd_pos *p = &nv_qmd_fields[f].v[ver];
    if (!p->bits || i >= p->count) return false;
    *bit = p->lo + i * p->stride + (p->split && i >= p->split ? p->jump : 0);
    *bits = p->bits;
    return true;
}
/* Writes / reads field f(i); writing a field the version lacks is a no-op,
 * reading one gives 0. Values are masked to the field's width. */
void nv_qmd_set(uint32_t *qmd, int ver, nv_qmd_id f, unsigned i, uint64_t v);
uint64_t nv_qmd_get(const uint32_t *qmd, int ver, nv_qmd_id f, unsigned i);
/* The same for a patchable value: (v >> rshift) into f(i) of the QMD at
 * qmd (aux memory of r), recording a patch for a variable. */
void nv_qmd_patch(drv_rec *r, uint32_t *qmd, int ver, nv_qmd_id f, unsigned i, hcq_val v, uint8_t rshift);

/* ** packet builders over a drv_rec. Each reserves what it writes; a
 * failed reservation leaves r->err set and writes nothing. */
static inline bool nv_mthd(drv_rec *r, uint32_t subch, uint32_t mthd, uint32_t count)
{
    if (!drv_rec_reserve(r, 1 + count)) return false;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, subch, mthd, count));
    return true;
}

/* 64-bit value v as two dwords, low then high (each a patch field) */
static inline void nv_val_lo(drv_rec *r, hcq_val v) { drv_rec_val32(r, v, 0); }
static inline void nv_val_hi(drv_rec *r, hcq_val v) { drv_rec_val32(r, v, 32); }

static inline void nv_set_object(drv_rec *r, uint32_t subch, uint32_t cls)
{
    if (!nv_mthd(r, subch, NV_HOST_SET_OBJECT, 1)) return;
    drv_rec_dw(r, cls & 0xFFFFu);
}

/* host semaphore: SEM_ADDR_LO .. SEM_EXECUTE in one INC packet */
static inline void nv_sem(drv_rec *r, hcq_val addr, hcq_val payload, uint32_t execute)
{
    if (!nv_mthd(r, NV_SUBCH_HOST, NV_HOST_SEM_ADDR_LO, 5)) return;
    nv_val_lo(r, addr);
    nv_val_hi(r, addr);
    nv_val_lo(r, payload);
    nv_val_hi(r, payload);
    drv_rec_dw(r, execute);
}
/* wait until the 64-bit value at addr >= value: ACQ_CIRC_GEQ (the
 * proven stack's wait, and the only GEQ form clc86f.h lists) compares
 * (value_at - value) as signed, so it orders values less than 2^63 apart,
 * which hcq's never-wrapping timelines are; ACQ_STRICT_GEQ (clc56f.h)
 * compares unsigned */
static inline void nv_sem_acquire(drv_rec *r, hcq_val addr, hcq_val value, bool circ)
{
    nv_sem(r, addr, value,
           (circ ? NV_SEM_OP_ACQ_CIRC_GEQ : NV_SEM_OP_ACQ_STRICT_GEQ) | NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT);
}
/* after the engine is idle, write the 64-bit value (and the timestamp at +8) */
static inline void nv_sem_release(drv_rec *r, hcq_val addr, hcq_val value, bool timestamp)
{
    nv_sem(r, addr, value,
           NV_SEM_OP_RELEASE | NV_SEM_EXECUTE_RELEASE_WFI | NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT |
               (timestamp ? NV_SEM_EXECUTE_RELEASE_TIMESTAMP : 0));
}

/* The words of a host semaphore release with WFI disabled: the PBDMA
 * writes value when it reaches the method, after consuming every word
 * before it, without waiting for the engine. The backend ends every
 * GPFIFO segment with one to learn which pushbuffer words and entries are
 * free (written into the pushbuffer directly, not through a drv_rec). */
#define NV_SEM_PROGRESS_DW 6u
static inline void nv_sem_progress_words(uint32_t *w, uint64_t va, uint64_t value)
{
    w[0] = nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_HOST, NV_HOST_SEM_ADDR_LO, 5);
    w[1] = (uint32_t)va;
    w[2] = (uint32_t)(va >> 32);
    w[3] = (uint32_t)value;
    w[4] = (uint32_t)(value >> 32);
    w[5] = NV_SEM_OP_RELEASE | NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT;
}

static inline void nv_compute_wfi(drv_rec *r)
{
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_WAIT_FOR_IDLE, 1)) return;
    drv_rec_dw(r, 0);
}

static inline void nv_invalidate_shader_caches(drv_rec *r)
{
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, 1)) return;
    drv_rec_dw(r, NV_INVALIDATE_SHADER_CACHES_ALL);
}

/* launch the QMD at qmd_va (256-byte aligned, below 2^40): two packets, the
 * methods are not adjacent */
static inline void nv_send_pcas(drv_rec *r, uint64_t qmd_va)
{
    if (!drv_rec_reserve(r, 4)) return;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COMPUTE, NV_COMPUTE_SEND_PCAS_A, 1));
    drv_rec_dw(r, (uint32_t)(qmd_va >> 8));
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COMPUTE, NV_COMPUTE_SEND_SIGNALING_PCAS2_B, 1));
    drv_rec_dw(r, NV_PCAS_ACTION_PREFETCH_SCHEDULE);
}

static inline void nv_set_shared_window(drv_rec *r, uint64_t va)
{
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A, 2)) return;
    drv_rec_dw(r, (uint32_t)(va >> 32) & 0x1FFFFu);
    drv_rec_dw(r, (uint32_t)va);
}

static inline void nv_set_local_window(drv_rec *r, uint64_t va)
{
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A, 2)) return;
    drv_rec_dw(r, (uint32_t)(va >> 32) & 0x1FFFFu);
    drv_rec_dw(r, (uint32_t)va);
}

/* SET_SHADER_LOCAL_MEMORY_A ADDRESS_UPPER: 16:0 on AMPERE_COMPUTE_A/B and
 * ADA_COMPUTE_A (open-gpu-kernel-modules .../class/clc6c0.h, clc7c0.h),
 * 24:0 on HOPPER_COMPUTE_A (open-gpu-doc classes/compute/clcbc0.h) */
#define NV_LOCAL_MEMORY_UPPER_BITS_AMPERE 17u
#define NV_LOCAL_MEMORY_UPPER_BITS_HOPPER 25u
/* the local-memory (stack) buffer and its size per TPC; upper_bits: the
 * class's ADDRESS_UPPER width */
static inline void nv_set_local_memory(drv_rec *r, uint64_t va, uint64_t bytes_per_tpc, uint32_t upper_bits)
{
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A, 2)) return;
    drv_rec_dw(r, (uint32_t)(va >> 32) & ((1u << upper_bits) - 1));
    drv_rec_dw(r, (uint32_t)va);
    if (!nv_mthd(r, NV_SUBCH_COMPUTE, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, 3)) return;
    drv_rec_dw(r, (uint32_t)(bytes_per_tpc >> 32) & 0xFFu);
    drv_rec_dw(r, (uint32_t)bytes_per_tpc);
    drv_rec_dw(r, 0xFFu);
}

/* copy engine: size bytes (one line, pitch layouts) from src to dst */
static inline void nv_ce_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size)
{
    if (!drv_rec_reserve(r, 9)) return;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_OFFSET_IN_UPPER, 4));
    nv_val_hi(r, src);
    nv_val_lo(r, src);
    nv_val_hi(r, dst);
    nv_val_lo(r, dst);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LINE_LENGTH_IN, 1));
    nv_val_lo(r, size);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(r, NV_COPY_DMA_COPY);
}

/* copy engine semaphore release with a 64-bit payload and the timestamp
 * (AMPERE_DMA_COPY_B and later; AMPERE_DMA_COPY_A has 32-bit payloads):
 * the fields exist (clc7b5.h, clc8b5.h SEMAPHORE_PAYLOAD_SIZE), where the
 * four words put the upper payload is not documented */
static inline void nv_ce_sem_release64(drv_rec *r, hcq_val addr, hcq_val value)
{
    if (!drv_rec_reserve(r, 7)) return;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_SET_SEMAPHORE_A, 4));
    nv_val_hi(r, addr);
    nv_val_lo(r, addr);
    nv_val_lo(r, value);
    nv_val_hi(r, value);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(r, NV_COPY_DMA_SEM_RELEASE_TS | NV_COPY_DMA_SEMAPHORE_PAYLOAD_64);
}

/* The same value with one-word releases only, as NVIDIA's UVM releases on
 * every copy class (kernel-open/nvidia-uvm/uvm_hopper_ce.c: PAYLOAD_SIZE
 * ONE_WORD, RELEASE_SEMAPHORE_WITH_TIMESTAMP): first the low word with the
 * timestamp (four words: the payload, a word the engine may zero, the
 * timestamp at +8), then the high word at +4 alone. A reader of the 64-bit
 * value between the two sees at most the new value (the high word of a
 * rising counter only grows), so a >= wait never passes early. */
#define NV_COPY_DMA_SEM_RELEASE_ONE_WORD 0xCu /* flush, SEMAPHORE_TYPE 1: the payload only */
static inline void nv_ce_sem_release32(drv_rec *r, hcq_val addr, hcq_val value)
{
    if (!drv_rec_reserve(r, 12)) return;
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_SET_SEMAPHORE_A, 3));
    nv_val_hi(r, addr);
    nv_val_lo(r, addr);
    nv_val_lo(r, value);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(r, NV_COPY_DMA_SEM_RELEASE_TS);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_SET_SEMAPHORE_A, 3));
    uint32_t at = r->ndw;
    drv_rec_dw(r, 0);
    drv_rec_field(r, at, addr, 32, 0, 32, 4);
    at = r->ndw;
    drv_rec_dw(r, 0);
    drv_rec_field(r, at, addr, 32, 0, 0, 4);
    nv_val_hi(r, value);
    drv_rec_dw(r, nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(r, NV_COPY_DMA_SEM_RELEASE_ONE_WORD);
}

#endif
