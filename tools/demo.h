/* tools/demo.h: what the parts of `hcq demo` share. The demo runs one job
 * on a device under test and, for reference, on the CPU device; each part
 * (demo.c's matmul and MLP, and parts in files of their own, called from
 * demo_job) computes on both sides with identical inputs, prints what it
 * measured and checked, and returns 0, or 1 after printing its first error:
 * the demo stops at the first error. */
#ifndef HCQ_TOOLS_DEMO_H
#define HCQ_TOOLS_DEMO_H

#include "tools/tools.h"

typedef struct demo_side {
    hcq_device *dev;
    hcq_ctx *ctx;
    const hcq_device_props *props;
} demo_side;

typedef struct demo_run {
    demo_side dv;  /* the device under test */
    demo_side ref; /* the CPU device (the same as dv when testing the CPU) */
    bool small;    /* kernels run on the interpreter (mock GPUs, the ir target): small sizes */
} demo_run;

/* "hcq: what: message (status)" on stderr; returns 1 */
int demo_fail(const char *what);
/* prints "max error E (tolerance T)  ok|WRONG"; returns 1 when WRONG */
int demo_verdict(double err, double tol);

#endif
