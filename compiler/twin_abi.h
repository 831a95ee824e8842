/* compiler/twin_abi.h: the ABI between a host twin (the GPU renderer's
 * CUDA or HIP text with the host dialect's header, built by clang into a
 * shared object: twin.c) and the runtime that runs it (twin_run.c).
 *
 * The structs are written once, in CC_TWIN_ABI_STRUCTS, which this header
 * compiles as C and twin.c pastes into every twin's source as text, so
 * both sides see the same layout.
 *
 * A twin exports:
 *   const unsigned hcq_twin_meta[];   {MAGIC, VERSION, nparams, barriers
 *                                     (CC_TWIN_HAS_BARRIERS: the kernel has
 *                                     BARRIER ops; CC_TWIN_HAS_WARP_SYNC: it
 *                                     has warp rendezvous), local_bytes,
 *                                     origin (CC_TWIN_CUDA / CC_TWIN_HIP),
 *                                     then per param: size | is_buffer << 16
 *                                     | dtype << 24}
 *   const char hcq_twin_name[];       the kernel's name
 *   const hcq_twin_item **hcq_twin_slot(void);
 *                                     the calling thread's "current
 *                                     work-item" pointer, which the kernel
 *                                     body's ids (HCQ_LID_X ...) read
 *   void hcq_twin_call(void);         runs the kernel body once, for the
 *                                     work-item *hcq_twin_slot() points at,
 *                                     with the parameters its group holds
 *
 * Global accesses go through hcq_twin_range: a param's cached range
 * [lo, hi) known accessible (w: writable too). An access outside it calls
 * rt->check, which either widens the range or refuses; a refused access
 * reads 0 and writes nothing, and the runtime stops the launch. Local
 * (shared) accesses are bounds-checked against the array; barriers call
 * rt->barrier, which switches fibers. Every loop of the kernel body looks
 * at grp->cancel first and ends when it is raised (the twin's header
 * defines `for` so), so a launch whose engine is stopped ends promptly
 * even inside a runaway loop. */
#ifndef HCQ_COMPILER_TWIN_ABI_H
#define HCQ_COMPILER_TWIN_ABI_H

#define CC_TWIN_MAGIC 0x54514348u /* "HCQT" */
#define CC_TWIN_VERSION 3u /* 3: rt->misaligned (vector accesses) */

/* the barriers word of the meta */
#define CC_TWIN_HAS_BARRIERS 1u
#define CC_TWIN_HAS_WARP_SYNC 2u
/* rt->barrier's id for a warp rendezvous (a warp-collective op: mma):
 * this bit | the warp size. The runtime resumes the caller when every
 * work-item of its warp (warp-size consecutive linear local ids) has
 * called it; a barrier id without the bit is bar.sync's. */
#define CC_TWIN_WARP_SYNC 0x80000000u

/* what the twin's ids and sizes are read from, as the GPU code would */
enum { CC_TWIN_CUDA = 1, /* the launch's grid and block (special registers) */
       CC_TWIN_HIP = 2   /* NGRP/LSIZE from the implicit kernel arguments */ };

enum {
    CC_TWIN_META_MAGIC = 0,
    CC_TWIN_META_VERSION,
    CC_TWIN_META_NPARAMS,
    CC_TWIN_META_BARRIERS,
    CC_TWIN_META_LOCAL_BYTES,
    CC_TWIN_META_ORIGIN,
    CC_TWIN_META_PARAMS, /* one word per param from here */
};

/* clang-format off */
#define CC_TWIN_ABI_STRUCTS                                                                             \
    typedef struct hcq_twin_range { unsigned long long lo, hi; int w; int pad; } hcq_twin_range;        \
    typedef struct hcq_twin_rt {                                                                        \
        /* an access outside its param's range: true if allowed (r widened) */                          \
        int (*check)(void *ctx, unsigned long long addr, unsigned size, unsigned param, int write,       \
                     long long index, hcq_twin_range *r);                                               \
        /* a local-memory index outside its array: the access is dropped */                             \
        void (*local_fault)(void *ctx, unsigned long long index, unsigned long long count, int write);  \
        /* bar.sync id */                                                                               \
        void (*barrier)(void *ctx, unsigned id);                                                        \
        /* a vector access whose address (local: offset) is not a multiple of its size; param is        \
         * ~0u for local memory: the access is dropped */                                               \
        void (*misaligned)(void *ctx, unsigned long long addr, unsigned size, unsigned param, int write, \
                           long long index);                                                            \
    } hcq_twin_rt;                                                                                      \
    typedef struct hcq_twin_group {                                                                     \
        const void *const *args;       /* per param: its bytes */                                       \
        hcq_twin_range *ranges;        /* per param */                                                  \
        const hcq_twin_rt *rt;                                                                          \
        void *ctx;                                                                                      \
        const unsigned char *implicit; /* HIP: the implicit (hidden) kernel arguments */                \
        int ngrp[3], lsize[3];                                                                          \
        const volatile int *cancel;    /* NULL, or raised to stop the launch: every loop looks */      \
    } hcq_twin_group;                                                                                   \
    typedef struct hcq_twin_item {                                                                      \
        const hcq_twin_group *grp;                                                                      \
        int gid[3], lid[3];                                                                             \
    } hcq_twin_item;
/* clang-format on */

#define CC_TWIN_STR_(...) #__VA_ARGS__
#define CC_TWIN_STR(...) CC_TWIN_STR_(__VA_ARGS__)

CC_TWIN_ABI_STRUCTS

#endif
