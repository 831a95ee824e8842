/* drivers/selftest.h: the vendor-neutral part of the first-run self-test
 * (issue 22): a backend opening a device runs a few short stages (a kernel
 * writing a known value, a semaphore release and a wait, a copy), each
 * under a short timeout, on the paths it chose; where a stage hangs or
 * faults, the backend tears its queues down, the next combination of the
 * paths that stage exercises is tried, and what worked (and what did not)
 * is reported. What is vendor-specific (the stages, the reset) stays in the
 * backend; this file offers:
 *   - drv_path: a choice between paths, the default first;
 *   - drv_selftest(): the search over the stages' paths with the resets,
 *     and the report (for hcq_device_props.paths and HCQ_DEBUG=1);
 *   - drv_selftest_program(): the stage kernel (out[i] = value + i, one
 *     work-group) compiled for the device's target and loaded by its
 *     backend, with its host twin on a mock device;
 *   - drv_selftest_wait(): waiting for a 64-bit value in host memory under
 *     a deadline, with a backend hook that says whether an engine faulted. */
#ifndef HCQ_DRIVERS_SELFTEST_H
#define HCQ_DRIVERS_SELFTEST_H

#include "drivers/backend.h"

#define DRV_PATH_MAX_OPTIONS 4

typedef struct drv_path {
    const char *item;                          /* "Hopper semaphore acquire" */
    const char *options[DRV_PATH_MAX_OPTIONS]; /* in order of preference: [0] the default */
    uint8_t n;                                 /* options offered on this device (1: nothing to choose) */
    uint8_t chosen;                            /* in: the one to start from; out: the one in use */
} drv_path;

/* A stage runs once on the current choices: HCQ_OK; HCQ_ETIMEDOUT (it hung)
 * or HCQ_EFAULT (an engine faulted), after which other paths are tried;
 * HCQ_ENOTSUP when it cannot run here (no compiler for its kernel, say):
 * its paths stay as chosen and the report says why; anything else ends the
 * self-test with that error. */
typedef struct drv_stage {
    const char *name;  /* "a kernel writing a known value" */
    uint32_t paths;    /* bit i: the stage exercises paths[i] */
    hcq_status (*run)(hcq_device *dev, void *ctx, const drv_path *paths, uint64_t timeout_ns);
} drv_stage;

typedef struct drv_selftest_ops {
    /* tears the device's queues down and makes them again on the paths
     * now chosen (called after a hang or fault, before the next try) */
    hcq_status (*reset)(hcq_device *dev, void *ctx, const drv_path *paths);
    void *ctx;
    uint64_t timeout_ns; /* per try of a stage */
} drv_selftest_ops;

/* Runs the stages in order. Each one's paths start from their chosen
 * options; a stage that hangs or faults is tried on the other combinations
 * of its paths (the first listed path varying fastest), after a reset
 * each. On return paths[].chosen hold what worked, and report (if given)
 * says, per path with a choice, which option runs and what failed before.
 * HCQ_EIO (with every try in the message) when no combination of some
 * stage works; another status when a stage or a reset fails otherwise. */
hcq_status drv_selftest(hcq_device *dev, drv_path *paths, uint32_t npaths, const drv_stage *stages, uint32_t nstages,
                        const drv_selftest_ops *ops, char *report, size_t report_size);

/* The stage kernel: threads 0..n-1 of one work-group write out[i] =
 * value + i (params: a u32 buffer, a u32 value). Compiled for dev's target
 * through the kernel cache and loaded with dev's backend into *p (a
 * zeroed hcq_program); free with drv_selftest_program_free. HCQ_ENOTSUP
 * when it cannot be built here (no compiler, nothing cached); a failure of
 * the backend's loader is its own status. */
hcq_status drv_selftest_program(hcq_device *dev, hcq_program *p);
void drv_selftest_program_free(hcq_device *dev, hcq_program *p);

/* Waits until the u64 at *at is `want` (HCQ_OK), or faulted(dev, ctx)
 * says an engine faulted (HCQ_EFAULT), or timeout_ns pass (HCQ_ETIMEDOUT).
 * Messages name `what`. */
hcq_status drv_selftest_wait(hcq_device *dev, const volatile uint64_t *at, uint64_t want, uint64_t timeout_ns,
                             bool (*faulted)(hcq_device *dev, void *ctx), void *ctx, const char *what);

#endif
