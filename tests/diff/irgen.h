/* tests/diff/irgen.h: a seeded random generator of valid IR kernels, for
 * the differential test (diff.h).
 *
 * One seed gives one case: a kernel, its launch dimensions and its
 * parameters (buffers with sizes and roles, scalars with values). Every
 * kernel verifies and is valid for every device: no access outside a
 * buffer except under a false gate, no data race (a work-item writes only
 * its own output elements; local memory is written at a work-item's own
 * slots between barriers and read after them), no read of local memory
 * before it is written, loops of bounded trip counts.
 *
 * What it draws from: every op and dtype of include/hcq/compiler.h; all
 * four kinds of special in three dimensions; loops with uniform, varying
 * and accumulator bounds (re-read every iteration) over every integer
 * dtype; if/endif on uniform and varying conditions; define_acc carrying
 * values out of blocks; reductions over buffers in loops; local memory
 * exchanged between work-items through barriers; work-group reductions
 * through local memory (tree and linear); gated loads whose false lanes
 * would read outside the buffer; gated stores; indexes of every integer
 * dtype, negative ones into buffers passed at an offset; constants and
 * scalar parameters of every dtype, special values included; with
 * irg_options.vectors, vector values too (aligned vector loads, gated or
 * not, vsplat, vset, vget, elementwise ops, vector accumulators).
 *
 * Exactness: transcendental results (exp2, log2, sin) go straight to
 * outputs compared within HCQ_IR_TRANSCENDENTAL_ULP and feed nothing else
 * (their slack would grow through later ops). NaN payloads are not part of
 * the semantics of computed values, so float outputs compare NaN to any
 * NaN; values that were only moved (loads, where, gated-load alts,
 * bitcasts, local memory) are also stored bitcast to integers, where
 * signalling NaNs and payloads must survive bit for bit. */
#ifndef HCQ_TESTS_DIFF_IRGEN_H
#define HCQ_TESTS_DIFF_IRGEN_H

#include <hcq/compiler.h>
#include <stdbool.h>
#include <stdint.h>

#define IRG_MAX_PARAMS 40

typedef enum irg_role {
    IRG_SCALAR = 0,
    IRG_INPUT,  /* read only (compared afterwards all the same: nothing may write it) */
    IRG_OUTPUT, /* starts as random bytes too, so unwritten elements are compared */
} irg_role;

typedef struct irg_param {
    irg_role role;
    hcq_dtype dt;
    uint32_t count; /* buffer elements from the pointer on */
    uint32_t bias;  /* buffer elements before the pointer (negative indexes reach them) */
    int ulp;        /* float tolerance of an output; 0 = exact (NaN matches NaN) */
    uint64_t bits;  /* a scalar's value (the dtype's bits) */
    uint32_t id;    /* seeds its contents, so dropping another param changes nothing here */
    char label[24];
} irg_param;

typedef struct irg_case {
    hcq_kernel *k;
    uint32_t ng[3], ls[3];
    irg_param p[IRG_MAX_PARAMS];
    uint32_t np;
    uint64_t seed;      /* the kernel's seed */
    bool by_hand;       /* made by a test, not the generator (no seed to report) */
    uint64_t data_seed; /* the buffers' contents */
} irg_case;

typedef struct irg_options {
    uint32_t max_ops;   /* no more steps once the kernel has this many ops (0: 400) */
    uint32_t steps;     /* top-level generation steps, at most (0: 30 to 90, drawn per seed) */
    bool no_sin;        /* leave out SIN and f64 EXP2/LOG2 (targets without them) */
    bool vectors;       /* also vector values: aligned vector loads (gated too), vsplat, vset, vget and
                         * vector accumulators (off: the same kernels as before vectors existed) */
} irg_options;

/* Generates the case for seed (deterministic). The kernel always verifies;
 * a generator bug that breaks that returns HCQ_EINVAL with the verifier's
 * message. Free with irg_case_free. */
hcq_status irg_generate(uint64_t seed, const irg_options *opt, irg_case *out);
void irg_case_free(irg_case *c);
/* A deep copy (the kernel is cloned). */
hcq_status irg_case_copy(const irg_case *c, irg_case *out);

/* Deterministic pseudo-random numbers (splitmix64). */
static inline uint64_t irg_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One element of dtype t for a buffer or scalar, rich in special values:
 * NaNs (quiet and signalling, both signs, payloads), infinities, zeros of
 * both signs, denormals, the largest finite values, integer extremes, -1,
 * small integers, halves (ties). Writes hcq_dtype_size(t) bytes. */
void irg_fill_elem(uint64_t *s, hcq_dtype t, void *dst);

#endif
