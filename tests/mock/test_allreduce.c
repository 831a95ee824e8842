/* hcq_allreduce (issue 23 item 4) on the mocks' multi-GPU servers: 8 NV
 * GPUs with NVLink-like links, 4 AMD GPUs with xGMI-like links, and
 * servers without links (every copy staged through host memory). Every
 * element of every device is compared, bit for bit, with a C reference
 * that reduces in the order queue.h states (chunk c: device c first, then
 * c+1, ... mod n), written here from that statement, not from the ring's
 * code, for f32, f16, bf16 and i32. Sizes are odd and not divisible by n,
 * and smaller than n. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void) { mock_configure(""); }
TestSuite(allreduce, .init = setup, .fini = teardown, .timeout = 240);

#define MAXD 8

static hcq_device *open_dev(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "%s: %s", name, hcq_error_message());
    return d;
}

/* the mock configured as spec, and its first n GPUs of kind (KIND:0..n-1) */
static void open_devs(const char *spec, const char *kind, uint32_t n, hcq_device **devs)
{
    T_OK(mock_configure(spec));
    for (uint32_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%s:%u", kind, i);
        devs[i] = open_dev(name);
    }
}

/* values whose sums depend on the order they are added in: magnitudes
 * from 2^-10 to 2^10, both signs, no zeros (max(+0, -0) is either) */
static float fval(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    float m = 1.0f + (float)(*st >> 9) / (float)(1u << 23);
    int e = (int)((*st >> 3) % 21) - 10;
    return ((*st & 1) ? -1.0f : 1.0f) * ldexpf(m, e);
}

static int32_t ival(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    return (int32_t)(*st >> 4) - (1 << 27); /* 8 of them never overflow i32 */
}

/* f16 and bf16 by hand, round to nearest even (the rounding queue.h
 * states): from the formats' definitions, not from hcq's converters */
static float h2f(uint16_t h)
{
    uint32_t e = (h >> 10) & 31, m = h & 1023;
    float v = e ? ldexpf((float)(m | 1024), (int)e - 25) : ldexpf((float)m, -24);
    if (e == 31) v = m ? NAN : INFINITY;
    return (h & 0x8000) ? -v : v;
}

static uint16_t f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00 : 0x7c00);
    if (ax >= 0x477ff000u) return sign | 0x7c00; /* 65520 and up round to inf */
    if (ax < 0x38800000u) {                       /* below 2^-14: subnormal, steps of 2^-24 */
        float af;
        memcpy(&af, &ax, 4);
        return sign | (uint16_t)nearbyintf(af * 16777216.0f);
    }
    uint32_t t = ax - 0x38000000u; /* rebias 127 -> 15 */
    t += 0xfffu + ((t >> 13) & 1);
    return sign | (uint16_t)(t >> 13);
}

static float bf2f(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t f2bf(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* f16/bf16 element k of chunk c, in the stated order: each op's result
 * rounded to the dtype (a sum of two narrow values taken in f32 first
 * rounds the same: f32 holds more than twice their precision); the mean's
 * last step in f32, rounded once */
static uint16_t ref_narrow(uint16_t *const *x, uint32_t n, uint64_t count, uint64_t k, hcq_reduce_op op, bool bf)
{
    uint32_t c = 0;
    while (!(k >= count * c / n && k < count * (c + 1) / n)) c++;
    uint16_t acc = x[c][k];
    for (uint32_t m = 1; m < n; m++) {
        float a = bf ? bf2f(acc) : h2f(acc), v = bf ? bf2f(x[(c + m) % n][k]) : h2f(x[(c + m) % n][k]), r;
        if (op == HCQ_REDUCE_MAX) r = v > a ? v : a;
        else if (op == HCQ_REDUCE_MEAN && m == n - 1) r = (a + v) / (float)n;
        else r = a + v;
        acc = bf ? f2bf(r) : f2h(r);
    }
    return acc;
}

/* the order queue.h states, element k of chunk c */
static float ref_f32(float *const *x, uint32_t n, uint64_t count, uint64_t k, hcq_reduce_op op)
{
    uint32_t c = 0;
    while (!(k >= count * c / n && k < count * (c + 1) / n)) c++;
    float acc = x[c][k];
    for (uint32_t m = 1; m < n; m++) {
        float v = x[(c + m) % n][k];
        if (op == HCQ_REDUCE_MAX) acc = v > acc ? v : acc;
        else if (op == HCQ_REDUCE_MEAN && m == n - 1) acc = (acc + v) / (float)n;
        else acc = acc + v;
    }
    return acc;
}

static int32_t ref_i32(int32_t *const *x, uint32_t n, uint64_t count, uint64_t k, hcq_reduce_op op)
{
    uint32_t c = 0;
    while (!(k >= count * c / n && k < count * (c + 1) / n)) c++;
    int32_t acc = x[c][k];
    for (uint32_t m = 1; m < n; m++) {
        int32_t v = x[(c + m) % n][k];
        acc = op == HCQ_REDUCE_MAX ? (v > acc ? v : acc) : acc + v;
    }
    return acc;
}

/* all-reduce `count` elements of dt with op over devs[0..n), checked
 * element by element on every device */
static const char *op_str(hcq_reduce_op op)
{
    return op == HCQ_REDUCE_SUM ? "sum" : op == HCQ_REDUCE_MAX ? "max" : "mean";
}

/* check() records the ring into a graph (hcq_graph_allreduce) instead,
 * replays it, writes the inputs again and replays it once more: the
 * second replay's bits are checked */
static bool graph_mode;

static void sync_all(hcq_device **devs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) T_OK(hcq_device_synchronize(devs[i]));
}

/* all-reduce `count` elements of dt with op over devs[0..n), checked
 * element by element on every device */
static void check(hcq_device **devs, uint32_t n, uint64_t count, hcq_dtype dt, hcq_reduce_op op, uint32_t seed,
                  const char *what)
{
    hcq_buffer *bufs[MAXD];
    void *in[MAXD];
    size_t es = hcq_dtype_size(dt), bytes = count * es;
    for (uint32_t i = 0; i < n; i++) {
        in[i] = malloc(bytes);
        uint32_t st = seed * 977u + i * 131u + 7u;
        for (uint64_t k = 0; k < count; k++) {
            if (dt == HCQ_F32) ((float *)in[i])[k] = fval(&st);
            else if (dt == HCQ_F16) ((uint16_t *)in[i])[k] = f2h(fval(&st));
            else if (dt == HCQ_BF16) ((uint16_t *)in[i])[k] = f2bf(fval(&st));
            else ((int32_t *)in[i])[k] = ival(&st);
        }
        bufs[i] = t_buffer_from(devs[i], in[i], bytes);
    }
    if (!graph_mode) {
        T_OK(hcq_allreduce(bufs, n, dt, op));
    } else {
        hcq_graph *g = T_NONNULL(hcq_graph_create(devs[0]));
        T_OK(hcq_graph_allreduce(g, bufs, n, dt, op));
        cr_assert_gt(hcq_graph_node_count(g), 0);
        T_OK(hcq_graph_replay(g, NULL, 0));
        sync_all(devs, n);
        for (uint32_t i = 0; i < n; i++) T_OK(hcq_buffer_copyin(bufs[i], 0, in[i], bytes));
        T_OK(hcq_graph_replay(g, NULL, 0));
        sync_all(devs, n);
        T_OK(hcq_graph_destroy(g));
    }
    void *out = malloc(bytes);
    for (uint32_t i = 0; i < n; i++) {
        t_read(bufs[i], out, bytes);
        for (uint64_t k = 0; k < count; k++) {
            if (dt == HCQ_F32) {
                float want = ref_f32((float *const *)in, n, count, k, op), got = ((float *)out)[k];
                cr_assert(!memcmp(&want, &got, 4), "%s: f32 %s of %llu on %u devices: device %u element %llu is %a, want %a",
                          what, op_str(op), (unsigned long long)count, n, i, (unsigned long long)k, (double)got,
                          (double)want);
            } else if (dt == HCQ_F16 || dt == HCQ_BF16) {
                uint16_t want = ref_narrow((uint16_t *const *)in, n, count, k, op, dt == HCQ_BF16);
                uint16_t got = ((uint16_t *)out)[k];
                cr_assert_eq(got, want, "%s: %s %s of %llu on %u devices: device %u element %llu is 0x%04x, want 0x%04x",
                             what, hcq_dtype_name(dt), op_str(op), (unsigned long long)count, n, i,
                             (unsigned long long)k, got, want);
            } else {
                int32_t want = ref_i32((int32_t *const *)in, n, count, k, op), got = ((int32_t *)out)[k];
                cr_assert_eq(got, want, "%s: i32 %s of %llu on %u devices: device %u element %llu is %d, want %d", what,
                             op_str(op), (unsigned long long)count, n, i, (unsigned long long)k, got, want);
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        T_OK(hcq_buffer_free(bufs[i]));
        free(in[i]);
    }
    free(out);
}

static void ring(const char *spec, const char *kind, uint32_t n, const char *what)
{
    hcq_device *devs[MAXD];
    open_devs(spec, kind, n, devs);
    static const uint64_t counts[] = {1001, 3};
    for (uint32_t s = 0; s < 2; s++) {
        uint64_t c = counts[s];
        check(devs, n, c, HCQ_F32, HCQ_REDUCE_SUM, 1 + s, what);
        if (s) continue; /* fewer elements than devices: the sum's chunks, some empty, are enough */
        check(devs, n, c, HCQ_F32, HCQ_REDUCE_MAX, 2, what);
        check(devs, n, c, HCQ_F32, HCQ_REDUCE_MEAN, 3, what);
        check(devs, n, c, HCQ_I32, HCQ_REDUCE_SUM, 4, what);
        check(devs, n, c, HCQ_I32, HCQ_REDUCE_MAX, 5, what);
        for (int h = 0; h < 2; h++)
            for (int o = 0; o < 3; o++) check(devs, n, c, h ? HCQ_BF16 : HCQ_F16, (hcq_reduce_op)o, 10 + 3 * h + o, what);
    }
    /* a sub-ring of the first two */
    check(devs, 2, 777, HCQ_F32, HCQ_REDUCE_SUM, 6, what);
    for (uint32_t i = n; i-- > 0;) T_OK(hcq_device_close(devs[i]));
}

Test(allreduce, nv_eight_gpus_with_links) { ring("nv=H100x8,nv_peer=nvlink", "NV", 8, "NV x8 nvlink"); }
Test(allreduce, amd_four_gpus_over_xgmi) { ring("amd=gfx942x4,amd_peer=xgmi", "AMD", 4, "AMD x4 xgmi"); }
Test(allreduce, nv_four_gpus_without_links_stage_through_the_host)
{
    ring("nv=H100x4,nv_peer=none", "NV", 4, "NV x4 no links");
}
Test(allreduce, amd_two_gpus_without_links_stage_through_the_host)
{
    ring("amd=gfx942x2,amd_peer=none", "AMD", 2, "AMD x2 no links");
}

/* hcq_graph_allreduce: the same ring as graph nodes, replayed twice, the
 * same bits (the reference of the stated order); without links it is
 * refused before any node is recorded */
static void graph_ring(const char *spec, const char *kind, uint32_t n, bool all, const char *what)
{
    hcq_device *devs[MAXD];
    open_devs(spec, kind, n, devs);
    graph_mode = true;
    check(devs, n, 1001, HCQ_F32, HCQ_REDUCE_SUM, 21, what);
    check(devs, n, 3, HCQ_F32, HCQ_REDUCE_SUM, 22, what);
    if (all) {
        check(devs, n, 1001, HCQ_F32, HCQ_REDUCE_MEAN, 23, what);
        check(devs, n, 1001, HCQ_I32, HCQ_REDUCE_MAX, 24, what);
        check(devs, n, 1001, HCQ_BF16, HCQ_REDUCE_MEAN, 25, what);
    }
    graph_mode = false;
    for (uint32_t i = n; i-- > 0;) T_OK(hcq_device_close(devs[i]));
}

Test(allreduce, in_a_graph_amd_four_gpus_over_xgmi) { graph_ring("amd=gfx942x4,amd_peer=xgmi", "AMD", 4, true, "graph, AMD x4"); }
Test(allreduce, in_a_graph_nv_two_gpus_with_links) { graph_ring("nv=H100x2,nv_peer=nvlink", "NV", 2, false, "graph, NV x2"); }

Test(allreduce, in_a_graph_without_links_is_refused)
{
    T_OK(mock_configure("nv=H100x2,nv_peer=none"));
    hcq_device *d[2] = {open_dev("NV:0"), open_dev("NV:1")};
    float v[4] = {1, 2, 3, 4};
    hcq_buffer *b[2] = {t_buffer_from(d[0], v, sizeof v), t_buffer_from(d[1], v, sizeof v)};
    hcq_graph *g = T_NONNULL(hcq_graph_create(d[0]));
    T_FAILS(hcq_graph_allreduce(g, b, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_ENOTSUP);
    T_MSG_HAS("peer");
    cr_assert_eq(hcq_graph_node_count(g), 0, "nothing recorded");
    T_FAILS(hcq_graph_allreduce(NULL, b, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_FAILS(hcq_graph_allreduce(g, b, 2, HCQ_F64, HCQ_REDUCE_SUM), HCQ_ENOTSUP);
    T_OK(hcq_graph_allreduce(g, b, 1, HCQ_F32, HCQ_REDUCE_SUM)); /* one buffer: nothing to do */
    cr_assert_eq(hcq_graph_node_count(g), 0);
    T_OK(hcq_graph_destroy(g));
    for (int i = 2; i-- > 0;) {
        T_OK(hcq_buffer_free(b[i]));
        T_OK(hcq_device_close(d[i]));
    }
}

/* the order is the stated one, not another: in f32, 1 + 1 + 2^24 is
 * 2^24 + 2, while 2^24 + 1 + 1 (or 1 + 2^24 + 1) is 2^24. Element k (chunk
 * k of three) is 2^24 on device k+2 and 1 on the others, so only the
 * order c, c+1, c+2 gives 2^24 + 2 for every element. */
Test(allreduce, the_reduction_order_is_the_stated_one)
{
    T_OK(mock_configure("nv=H100x3"));
    hcq_device *d[3] = {open_dev("NV:0"), open_dev("NV:1"), open_dev("NV:2")};
    hcq_buffer *b[3];
    for (int i = 0; i < 3; i++) {
        float v[3];
        for (int k = 0; k < 3; k++) v[k] = i == (k + 2) % 3 ? 16777216.0f : 1.0f;
        b[i] = t_buffer_from(d[i], v, sizeof v);
    }
    T_OK(hcq_allreduce(b, 3, HCQ_F32, HCQ_REDUCE_SUM));
    for (int i = 0; i < 3; i++) {
        float out[3];
        t_read(b[i], out, sizeof out);
        for (int k = 0; k < 3; k++)
            cr_assert_eq(out[k], 16777218.0f, "device %d element %d is %a, want 2^24 + 2", i, k, (double)out[k]);
        T_OK(hcq_buffer_free(b[i]));
    }
    for (int i = 3; i-- > 0;) T_OK(hcq_device_close(d[i]));
}

Test(allreduce, one_buffer_is_a_no_op)
{
    T_OK(mock_configure("nv=H100x2"));
    hcq_device *d = open_dev("NV:0");
    float v[5] = {1, 2, 3, 4, 5}, out[5];
    hcq_buffer *b = t_buffer_from(d, v, sizeof v);
    T_OK(hcq_allreduce(&b, 1, HCQ_F32, HCQ_REDUCE_MEAN));
    t_read(b, out, sizeof out);
    cr_assert(!memcmp(v, out, sizeof v));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
}

Test(allreduce, bad_input_is_refused_and_changes_nothing)
{
    T_OK(mock_configure("nv=H100x2,amd=gfx942x2"));
    hcq_device *n0 = open_dev("NV:0"), *n1 = open_dev("NV:1"), *a0 = open_dev("AMD:0");
    float v[4] = {1, 2, 3, 4}, out[4];
    hcq_buffer *b0 = t_buffer_from(n0, v, sizeof v), *b1 = t_buffer_from(n1, v, sizeof v);
    hcq_buffer *bsame = t_buffer_from(n0, v, sizeof v), *bshort = t_buffer_from(n1, v, 12);
    hcq_buffer *bodd = t_buffer_from(n0, v, 6), *bodd1 = t_buffer_from(n1, v, 6);
    hcq_buffer *ba = t_buffer_from(a0, v, sizeof v);

    hcq_buffer *kinds[2] = {b0, ba};
    cr_assert_eq(hcq_allreduce(kinds, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_MSG_HAS("different kinds");
    hcq_buffer *dup[2] = {b0, bsame};
    cr_assert_eq(hcq_allreduce(dup, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_MSG_HAS("one buffer per device");
    hcq_buffer *twice[2] = {b0, b0};
    cr_assert_eq(hcq_allreduce(twice, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    hcq_buffer *uneq[2] = {b0, bshort};
    cr_assert_eq(hcq_allreduce(uneq, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_MSG_HAS("sizes must be equal");
    hcq_buffer *odd[2] = {bodd, bodd1};
    cr_assert_eq(hcq_allreduce(odd, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    T_MSG_HAS("whole number");
    hcq_buffer *ok[2] = {b0, b1};
    cr_assert_eq(hcq_allreduce(ok, 2, HCQ_I32, HCQ_REDUCE_MEAN), HCQ_EINVAL);
    T_MSG_HAS("truncate");
    cr_assert_eq(hcq_allreduce(ok, 2, HCQ_F64, HCQ_REDUCE_SUM), HCQ_ENOTSUP);
    cr_assert_eq(hcq_allreduce(ok, 2, HCQ_F32, (hcq_reduce_op)7), HCQ_EINVAL);
    cr_assert_eq(hcq_allreduce(ok, 0, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    cr_assert_eq(hcq_allreduce(NULL, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_EINVAL);
    hcq_buffer *nul[2] = {b0, NULL};
    cr_assert_eq(hcq_allreduce(nul, 2, HCQ_F32, HCQ_REDUCE_SUM), HCQ_ESTATE);
    /* nothing moved */
    hcq_buffer *all[] = {b0, b1, bsame, ba};
    for (int i = 0; i < 4; i++) {
        t_read(all[i], out, sizeof out);
        cr_assert(!memcmp(v, out, sizeof v), "buffer %d changed", i);
    }
    hcq_buffer *fr[] = {b0, b1, bsame, bshort, bodd, bodd1, ba};
    for (int i = 0; i < 7; i++) T_OK(hcq_buffer_free(fr[i]));
    T_OK(hcq_device_close(a0));
    T_OK(hcq_device_close(n1));
    T_OK(hcq_device_close(n0));
}

/* hcq bench --only allreduce: every device count and size it promises,
 * and the mock's caveat; one device of the kind measures nothing and
 * says why */
Test(allreduce, bench_prints_latency_and_bus_bandwidth)
{
    int st;
    char *out = t_run_hcq("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x4 HCQ_DEVICE=NV:0", "bench --quick --only allreduce", &st);
    cr_assert_eq(st, 0, "%s", out);
    static const char *const want[] = {"allreduce x2 4 KiB: latency", "allreduce x2 4 KiB: bus bandwidth",
                                       "allreduce x4 1 MiB: latency", "allreduce x4 1 MiB: bus bandwidth",
                                       "the form of the figures only"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no `%s` in:\n%s", want[i], out);
    cr_assert(!strstr(out, "x8"), "%s", out);
    free(out);
    out = t_run_hcq("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x1 HCQ_DEVICE=NV:0", "bench --quick --only allreduce", &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "needs two or more devices") && strstr(out, "nv=H100x8"), "%s", out);
    free(out);
}

/* calls from several threads at once on the same devices, each with its
 * own buffers (the first calls load the fold kernels concurrently): every
 * result is still the stated order's. The threads assert nothing (the
 * main thread does, from what they return). */
struct ar_thread {
    hcq_device **devs;
    uint32_t n, seed;
    char err[256];
};

static void *ar_thread_main(void *arg)
{
    struct ar_thread *a = arg;
    enum { COUNT = 301 };
    hcq_reduce_op op = a->seed % 2 ? HCQ_REDUCE_MEAN : HCQ_REDUCE_SUM;
    float *in[MAXD], out[COUNT];
    hcq_buffer *bufs[MAXD] = {0};
    for (uint32_t i = 0; i < a->n; i++) {
        in[i] = malloc(sizeof out);
        uint32_t st = a->seed * 977u + i * 131u + 7u;
        for (int k = 0; k < COUNT; k++) in[i][k] = fval(&st);
        if (!(bufs[i] = hcq_buffer_alloc(a->devs[i], sizeof out, HCQ_MEM_DEVICE)) ||
            hcq_buffer_copyin(bufs[i], 0, in[i], sizeof out))
            snprintf(a->err, sizeof a->err, "setup on device %u: %s", i, hcq_error_message());
    }
    if (!a->err[0] && hcq_allreduce(bufs, a->n, HCQ_F32, op))
        snprintf(a->err, sizeof a->err, "hcq_allreduce: %s", hcq_error_message());
    for (uint32_t i = 0; i < a->n && !a->err[0]; i++) {
        if (hcq_buffer_copyout(out, bufs[i], 0, sizeof out)) {
            snprintf(a->err, sizeof a->err, "copyout: %s", hcq_error_message());
            break;
        }
        for (int k = 0; k < COUNT && !a->err[0]; k++) {
            float want = ref_f32((float *const *)in, a->n, COUNT, (uint64_t)k, op);
            if (memcmp(&want, &out[k], 4))
                snprintf(a->err, sizeof a->err, "device %u element %d is %a, want %a", i, k, (double)out[k],
                         (double)want);
        }
    }
    for (uint32_t i = 0; i < a->n; i++) {
        hcq_buffer_free(bufs[i]);
        free(in[i]);
    }
    return NULL;
}

Test(allreduce, calls_from_several_threads_at_once)
{
    hcq_device *devs[4];
    open_devs("nv=H100x4", "NV", 4, devs);
    pthread_t th[4];
    struct ar_thread args[4];
    for (uint32_t t = 0; t < 4; t++) {
        args[t] = (struct ar_thread){.devs = devs, .n = 4, .seed = 40 + t};
        cr_assert_eq(pthread_create(&th[t], NULL, ar_thread_main, &args[t]), 0);
    }
    for (uint32_t t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (uint32_t t = 0; t < 4; t++) cr_assert(!args[t].err[0], "thread %u: %s", t, args[t].err);
    for (uint32_t i = 4; i-- > 0;) T_OK(hcq_device_close(devs[i]));
}
