/* Tensor-suite support: a device and context per suite, random host data
 * in any tensor dtype (rounded exactly as the device stores it), reading
 * tensors back as doubles, tolerant comparisons, and the agreement check:
 * on the CPU device (target cpu), every kernel the tensor layer launches
 * is also run on the IR interpreter with the same inputs, and the two
 * outputs must agree (bit for bit, or within a few ulp where the kernel
 * uses transcendental ops). */
#ifndef HCQ_TESTS_TENSORTEST_H
#define HCQ_TESTS_TENSORTEST_H

#include "hcqtest.h"

extern hcq_device *tx_dev;
extern hcq_ctx *tx_ctx;

/* suite init/fini: opens the device under test and a context; installs
 * the interpreter agreement check on the cpu target */
void tx_setup(void);
void tx_teardown(void);
/* kernels checked against the interpreter so far (0 when not on cpu) */
uint64_t tx_agreed_kernels(void);

/* numel of a shape */
int64_t tx_numel(const int64_t *shape, int ndim);
/* n random values in [lo, hi) (integers for i32, 0/1 for bool), rounded to
 * dt; host[] gets the values as the device will hold them */
hcq_tensor *tx_rand(hcq_dtype dt, const int64_t *shape, int ndim, double lo, double hi, uint32_t seed, double *host);
/* a tensor from doubles (rounded to dt) */
hcq_tensor *tx_from(hcq_dtype dt, const int64_t *shape, int ndim, const double *vals);
/* the tensor's elements as doubles (asserts success and numel == n) */
void tx_read(hcq_tensor *t, double *out, int64_t n);
/* value as stored in dt (f16/bf16 rounding, i32 truncation, bool) */
double tx_round(hcq_dtype dt, double v);

/* Default tolerance (relative, absolute at zero) per dtype:
 *   f32 1e-5 / 1e-6, f16 2e-3 / 1e-4, bf16 1.6e-2 / 1e-3, i32 and bool exact.
 * Suites scale it up where an op compounds rounding (transcendentals,
 * long sums). */
double tx_rtol(hcq_dtype dt);
/* asserts |got - want| <= atol + rtol * |want| elementwise (NaNs must
 * match NaNs, infinities must match in sign) */
void tx_close(const double *got, const double *want, int64_t n, double rtol, double atol, const char *what);
/* asserts got[i] == want[i] for every element (a NaN never equals) */
void tx_same(const double *got, const double *want, int64_t n, const char *what);

/* multi-index <-> linear, row-major */
void tx_unravel(int64_t i, const int64_t *shape, int ndim, int64_t *idx);
int64_t tx_ravel(const int64_t *idx, const int64_t *shape, int ndim);

/* n mock GPUs of one kind configured by spec (HCQ_MOCK_CONFIG's form,
 * e.g. "nv=H100x4,nv_peer=none"), each opened ("NV:0", ...) with a
 * context; close frees what is left (a context already destroyed is
 * NULL) and closes the devices in reverse order */
#define TX_MDEV_MAX 8
typedef struct tx_mdev {
    int n;
    hcq_device *dev[TX_MDEV_MAX];
    hcq_ctx *ctx[TX_MDEV_MAX];
} tx_mdev;
void tx_mdev_open(tx_mdev *e, const char *spec, const char *kind, int n);
void tx_mdev_close(tx_mdev *e);

#define TX_SHAPE(...) ((const int64_t[]){__VA_ARGS__}), ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

#endif
