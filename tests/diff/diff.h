/* tests/diff/diff.h: the differential test. A case (irgen.h) runs on the
 * interpreter, the reference, and on every other implementation of the IR
 * that this build has ("engines"): the cpu target's compiled C ("cpu"), the
 * host twins of the CUDA and HIP renderings ("cuda-twin", "hip-twin",
 * compiler/twin.h; HIP without the outputs of the ops its renderer refuses,
 * SIN and f64 EXP2/LOG2, whose results feed nothing else), and the code
 * objects clang makes of the HIP text run on the mock AMD GPU's ISA
 * executor ("gfx1100-isa", "gfx942-isa", "gfx90a-isa", with HIP's refusals),
 * and the cubins ptxas makes of the CUDA text run on the mock NV GPU's SASS
 * executor ("sm90-sass" on the H100 model, "sm80-sass" on the A100; skipped
 * where no nvdisasm decodes). Every buffer
 * must come out the same as the interpreter's: bit for bit, except that
 * any NaN matches any NaN in float buffers (computed NaNs have no defined
 * payload; values that were only moved are also stored as integers, which
 * compare exactly) and transcendental outputs match within their ulp bound.
 *
 * Buffers are mapped shared, with an inaccessible guard region on both
 * sides, and compiled engines run in a child process with a time limit: an
 * access outside a buffer, a crash or a hang is a failure like a wrong
 * value. A compile error is a failure too.
 *
 * A failure is reported with its seed, the engine, the first differing
 * element (which work-item stored it) and the kernel's IR after shrinking:
 * fewer work-groups, stores dropped, blocks unwrapped, values replaced by
 * their operands or zero, dead code removed, for as long as the same
 * engine still fails the same way. */
#ifndef HCQ_TESTS_DIFF_DIFF_H
#define HCQ_TESTS_DIFF_DIFF_H

#include <stdio.h>

#include "tests/diff/irgen.h"

#define DIFF_MAX_ENGINES 8

typedef struct diff_config {
    const char *engines;     /* comma-separated names to run ("cpu,hip-twin"); NULL: every one */
    bool no_shrink;          /* report failures as generated */
    double shrink_seconds;   /* time limit for shrinking one failure (0: 60) */
    unsigned run_seconds;    /* time limit of one compiled run (0: 20) */
    irg_options gen;
} diff_config;

typedef struct diff_stats {
    uint64_t kernels;  /* cases run */
    uint64_t ops;      /* IR ops in them */
    uint64_t failures;
    uint64_t runs[DIFF_MAX_ENGINES];    /* per engine: cases compared */
    uint64_t skipped[DIFF_MAX_ENGINES]; /* per engine: cases it cannot run (HCQ_ENOTSUP) */
} diff_stats;

/* The engines this build knows, in order (the interpreter is not one: it
 * is the reference). names[i] matches the stats' index i. */
unsigned diff_engines(const char **names, unsigned max);

/* Generates the case for seed and runs it. HCQ_OK when every engine
 * agrees with the interpreter; otherwise a status and *report (malloc'd)
 * holding the repro. *report is NULL on success. */
hcq_status diff_run_seed(uint64_t seed, const diff_config *cfg, diff_stats *st, char **report);
/* The same for a case made by hand (regression tests); c is not changed. */
hcq_status diff_run_case(const irg_case *c, const diff_config *cfg, diff_stats *st, char **report);

#endif
