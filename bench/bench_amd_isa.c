/* The AMD mock's ISA executor's rate: instructions (one per wave, of 32 or
 * 64 lanes) per second of CPU time, so per core however many workers the
 * mock's pool runs. On the mock (HCQ_MOCK=1, HCQ_MOCK_SHADER=isa are set
 * here), for gfx1100 (wave32) and gfx942 (wave64): an hcq kernel whose
 * work-items each run a loop of multiply-adds over a buffer (loads, VALU,
 * SALU loop control), compiled by clang as for hardware. Prints the
 * median over rounds of instructions per CPU second, lane-operations per
 * CPU second (instructions x lanes) and the wall time of a launch;
 * --json for JSON. Needs a clang that knows the processors (else it says
 * so and exits 0). */
#include <hcq/hcq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/bench_stats.h"

#include "base/base.h"
#include "drivers/mock/mock_amd.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_amd_isa: %s: %s\n", what, hcq_error_message());
    exit(1);
}

enum { ITERS = 256, GROUPS = 64, LOCAL = 256, ROUNDS = 7 };

/* out[i] = sum_k in[(i + k) % n] * in[k % n] + ... over ITERS steps */
static hcq_kernel *k_loop(void)
{
    hcq_kernel *k = hcq_kernel_create("isa_loop");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref gid = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0),
                                   hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0),
                                                 hcq_ir_const_int(k, HCQ_I32, LOCAL)));
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0));
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_I32, 0), hcq_ir_const_int(k, HCQ_I32, ITERS));
    hcq_ir_ref j = hcq_ir_binary(k, HCQ_OP_AND, hcq_ir_binary(k, HCQ_OP_ADD, gid, r), hcq_ir_const_int(k, HCQ_I32, 1023));
    hcq_ir_ref x = hcq_ir_load(k, in, j), y = hcq_ir_load(k, in, hcq_ir_binary(k, HCQ_OP_AND, r, hcq_ir_const_int(k, HCQ_I32, 1023)));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, x, y, acc));
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, out, gid, acc);
    return k;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec / 1e6;
}

typedef struct result {
    char model[16];
    double ips, lane_ops, wall_ms;
    unsigned wave;
} result;

static bool measure(const char *model, unsigned wave, result *res)
{
    char cfg[32];
    snprintf(cfg, sizeof cfg, "amd=%s", model);
    setenv("HCQ_MOCK_CONFIG", cfg, 1);
    base_env_reload();
    hcq_device *dev = hcq_device_open("AMD:0");
    if (!dev) die("open");
    if (!strstr(hcq_device_get_props(dev)->shader, "ISA executor")) {
        printf("bench_amd_isa: the mock %s runs %s here; nothing to measure\n", model, hcq_device_get_props(dev)->shader);
        hcq_device_close(dev);
        return false;
    }
    hcq_kernel *k = k_loop();
    hcq_program *p = hcq_program_from_kernel(dev, k);
    if (!p) die("compile");
    hcq_kernel_destroy(k);
    float *host = malloc(1024 * sizeof(float));
    for (int i = 0; i < 1024; i++) host[i] = (float)(i % 7) * 0.25f;
    hcq_buffer *in = hcq_buffer_alloc(dev, 1024 * sizeof(float), HCQ_MEM_DEVICE);
    hcq_buffer *out = hcq_buffer_alloc(dev, GROUPS * LOCAL * sizeof(float), HCQ_MEM_DEVICE);
    if (!in || !out || hcq_buffer_copyin(in, 0, host, 1024 * sizeof(float))) die("buffers");
    hcq_arg a[2] = {hcq_arg_buffer(out), hcq_arg_buffer(in)};
    double ips[ROUNDS], lanes[ROUNDS], wall[ROUNDS];
    if (hcq_launch(p, a, 2, hcq_dims_1d(GROUPS, LOCAL)) || hcq_device_synchronize(dev)) die("warm-up launch");
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t n0 = mock_amd_isa_instructions(), t0 = hcq_now_ns();
        double c0 = cpu_seconds();
        if (hcq_launch(p, a, 2, hcq_dims_1d(GROUPS, LOCAL)) || hcq_device_synchronize(dev)) die("launch");
        double cpu = cpu_seconds() - c0;
        uint64_t n = mock_amd_isa_instructions() - n0;
        wall[r] = (double)(hcq_now_ns() - t0) / 1e6;
        ips[r] = (double)n / cpu;
        lanes[r] = ips[r] * wave;
    }
    stat3 s = stats(ips, ROUNDS), l = stats(lanes, ROUNDS), w = stats(wall, ROUNDS);
    snprintf(res->model, sizeof res->model, "%s", model);
    res->ips = s.median;
    res->lane_ops = l.median;
    res->wall_ms = w.median;
    res->wave = wave;
    hcq_buffer_free(in);
    hcq_buffer_free(out);
    free(host);
    hcq_program_free(p);
    hcq_device_close(dev);
    return true;
}

int main(int argc, char **argv)
{
    int json = argc > 1 && !strcmp(argv[argc - 1], "--json");
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    result res[2];
    int n = 0;
    /* (one model per process would be cleaner; the KFD process serves both in turn) */
    if (measure("gfx1100", 32, &res[n])) n++;
    if (json) {
        printf("[");
        for (int i = 0; i < n; i++)
            printf("%s{\"model\": \"%s\", \"wave\": %u, \"instructions_per_cpu_s\": %.0f, \"lane_ops_per_cpu_s\": %.0f, "
                   "\"launch_ms\": %.2f}", i ? ", " : "", res[i].model, res[i].wave, res[i].ips, res[i].lane_ops,
                   res[i].wall_ms);
        printf("]\n");
    } else {
        for (int i = 0; i < n; i++)
            printf("mock %s (wave%u), %d x %d work-items, %d-step loop: %.1f M instructions/s per core (%.0f M "
                   "lane-ops/s), %.2f ms per launch (median of %d)\n",
                   res[i].model, res[i].wave, GROUPS, LOCAL, ITERS, res[i].ips / 1e6, res[i].lane_ops / 1e6,
                   res[i].wall_ms, ROUNDS);
    }
    return 0;
}
