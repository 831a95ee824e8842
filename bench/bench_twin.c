/* What running a kernel as its host twin costs the mock GPU beyond the
 * kernel's own work (issue 10: under 5 us per launch of a cached kernel).
 * On the mock H100 (HCQ_MOCK=1 and HCQ_MOCK_SHADER=twin are set here), with a kernel whose body does
 * nothing but one store:
 *   core     the shader core's part of a launch, timed directly: finding
 *            the twin of the machine code at the program address (the
 *            per-GPU cache, re-checked against the bytes there), then
 *            mock_twin_run for one work-item (parameter ranges, the call
 *            into the twin, its checked store, fault collection);
 *   launch   an eager launch + synchronize through the whole stack (NV
 *            backend, GPFIFO, the mock's QMD decoding and the SM side's
 *            checks against the cubin), for the twin and, on the same
 *            device, for the same kernel as mock-sm_90 IR.
 * Prints medians (p10, p90) over rounds; --json for JSON. Needs clang and
 * ptxas (else it says so and exits 0). */
#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_stats.h"

#include "compiler/twin.h"
#include "drivers/backend.h"
#include "drivers/mock/mock_nv.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_twin: %s: %s\n", what, hcq_error_message());
    exit(1);
}

/* a[0] = 1: one store, so the twin's check path runs */
static hcq_kernel *k_one(void)
{
    hcq_kernel *k = hcq_kernel_create("one");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_store(k, a, hcq_ir_const_int(k, HCQ_I32, 0), hcq_ir_const_int(k, HCQ_U32, 1));
    return k;
}

enum { BATCH = 2000, ROUNDS = 25, LAUNCHES = 200 };

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "twin", 1); /* the twins (by default the mock runs the SASS on its executor) */
    char why[256];
    if (!cc_twin_available("sm_90", why, sizeof why)) {
        printf("bench_twin: no host twins here (%s); nothing to measure\n", why);
        return 0;
    }
    hcq_device *dev = hcq_device_open("NV:0");
    if (!dev) die("open");
    hcq_kernel *k = k_one();
    hcq_program *pt = hcq_program_from_kernel(dev, k);
    if (!pt) die("compile sm_90");
    hcq_binary *ir = NULL;
    if (hcq_compile(k, "mock-sm_90", &ir)) die("compile mock-sm_90");
    hcq_program *pi = hcq_program_load(dev, ir->data, ir->size);
    if (!pi) die("load mock-sm_90");
    hcq_binary_free(ir);
    hcq_kernel_destroy(k);
    hcq_buffer *b = hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE);
    if (!b) die("alloc");
    hcq_arg a = hcq_arg_buffer(b);

    /* the shader core alone */
    mock_gpu *g = mnv_gpu_by_index(0)->g;
    uint64_t va = hcq_buffer_va(b);
    const void *args[1] = {&va};
    double core[ROUNDS], lt[ROUNDS], li[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < BATCH; i++) {
            const cc_twin_entry *e = mock_twin_at(g, pt->launch_addr);
            if (!e) die("no twin at the program address");
            mock_twin_launch ml = {.e = e, .args = args, .grid = {1, 1, 1}, .block = {1, 1, 1}, .barriers = 1};
            mock_fault f;
            cc_twin_fault tf;
            if (mock_twin_run(g, &ml, &f, &tf)) die("twin run");
        }
        core[r] = (double)(hcq_now_ns() - t0) / BATCH / 1e3;
    }
    /* whole launches */
    for (int r = 0; r < ROUNDS; r++) {
        hcq_program *ps[2] = {pt, pi};
        double *out[2] = {&lt[r], &li[r]};
        for (int j = 0; j < 2; j++) {
            uint64_t t0 = hcq_now_ns();
            for (int i = 0; i < LAUNCHES; i++) {
                if (hcq_launch(ps[j], &a, 1, hcq_dims_1d(1, 1))) die("launch");
                if (hcq_device_synchronize(dev)) die("sync");
            }
            *out[j] = (double)(hcq_now_ns() - t0) / LAUNCHES / 1e3;
        }
    }
    stat3 c = stats(core, ROUNDS), t = stats(lt, ROUNDS), i = stats(li, ROUNDS);
    if (json) {
        printf("{\"device\": \"%s\", \"core_us\": %.3f, \"launch_twin_us\": %.2f, \"launch_ir_us\": %.2f}\n",
               hcq_device_get_props(dev)->name, c.median, t.median, i.median);
    } else {
        printf("mock %s, a one-store kernel (median, p10-p90 over %d rounds)\n", hcq_device_get_props(dev)->name,
               ROUNDS);
        printf("  shader core per launch (twin lookup + run)   %8.3f us  (%.3f - %.3f)\n", c.median, c.p10, c.p90);
        printf("  eager launch + sync, sm_90 cubin's twin      %8.2f us  (%.2f - %.2f)\n", t.median, t.p10, t.p90);
        printf("  eager launch + sync, mock-sm_90 kernel IR    %8.2f us  (%.2f - %.2f)\n", i.median, i.p10, i.p90);
    }
    hcq_buffer_free(b);
    hcq_program_free(pt);
    hcq_program_free(pi);
    hcq_device_close(dev);
    return 0;
}
