/* Graphs across devices (issue 23 item 2): one graph holds launches and
 * copies on several GPUs of one process and replays as one unit. The
 * order between devices runs on the GPUs (a graph-private signal mapped
 * for every device, and each device's timeline), on 2 and 4 mock GPUs of
 * both vendors, with peer links and without; results are checked against
 * a host model of the same steps, replay after replay. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void) { sys_set(mock_sys()); }
static void teardown(void) { mock_configure(""); }
TestSuite(mgraph, .init = setup, .fini = teardown, .timeout = 240);

enum { N = 256, MAXD = 4 };

static hcq_device *open_dev(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "%s: %s", name, hcq_error_message());
    return d;
}

static hcq_dims dims(void) { return hcq_dims_1d(N / 64, 64); }

/* a = a * k + c on the program's device (k, c: values or graph variables) */
static hcq_status muladd(hcq_graph *g, hcq_program *p, hcq_buffer *a, hcq_val k, uint32_t c)
{
    hcq_arg args[4] = {hcq_arg_buffer(a), hcq_arg_scalar(4, k), hcq_arg_u32(c), hcq_arg_u32(N)};
    return hcq_graph_launch(g, p, args, 4, dims());
}

static void model_muladd(uint32_t *a, uint32_t k, uint32_t c)
{
    for (int i = 0; i < N; i++) a[i] = a[i] * k + c;
}

/* A chain through nd devices: on each device d, buf[d] = buf[d] * k + d + 1
 * and a copy of it into buf[d+1] on d's copy engine (a peer copy); then
 * device 0 runs muladd on the last device's buffer (a peer argument), and
 * the last device copies it back into buf[0]. muladd does not commute, so
 * any step out of order shows in the bytes. Replayed with k = 3, then 5
 * (each replay starting from the last one's bytes), then with buf[1]
 * replaced by another buffer of device 1. */
static void chain(const char *spec, const char *kind, int nd)
{
    T_OK(mock_configure(spec));
    hcq_device *dev[MAXD];
    hcq_program *p[MAXD];
    hcq_buffer *buf[MAXD];
    static uint32_t model[MAXD][N], out[N];
    memset(model, 0, sizeof model);
    for (int i = 0; i < N; i++) model[0][i] = (uint32_t)i * 7 + 1;
    for (int d = 0; d < nd; d++) {
        char name[16];
        snprintf(name, sizeof name, "%s:%d", kind, d);
        dev[d] = open_dev(name);
        p[d] = t_load(dev[d], t_k_muladd());
        buf[d] = t_buffer_from(dev[d], model[d], sizeof model[d]);
    }
    for (int d = 0; d < nd; d++) T_OK(hcq_device_synchronize(dev[d]));

    hcq_graph *g = T_NONNULL(hcq_graph_create(dev[0]));
    for (int d = 0; d < nd; d++) {
        T_OK(muladd(g, p[d], buf[d], HCQ_VAR(0), (uint32_t)d + 1));
        if (d + 1 < nd) T_OK(hcq_graph_copy(g, buf[d + 1], 0, buf[d], 0, sizeof model[0]));
    }
    T_OK(muladd(g, p[0], buf[nd - 1], HCQ_IMM(1), 7)); /* device 0 on the last device's memory */
    T_OK(hcq_graph_copy(g, buf[0], 0, buf[nd - 1], 0, sizeof model[0]));
    cr_assert_eq(hcq_graph_node_count(g), (uint32_t)(2 * nd + 1));

    hcq_buffer *alt = NULL;
    for (int r = 0; r < 3; r++) {
        uint32_t k = r == 0 ? 3 : 5;
        if (r == 2) {
            alt = t_buffer_from(dev[1], model[1], sizeof model[1]);
            T_OK(hcq_graph_set_buffer(g, buf[1], alt));
        }
        uint64_t before[MAXD];
        for (int d = 0; d < nd; d++) before[d] = hcq_device_timeline_value(dev[d]);
        T_OK(hcq_graph_replay(g, (const uint64_t[]){k}, 1));
        /* one replay is one value on every device's timeline */
        for (int d = 0; d < nd; d++)
            cr_assert_eq(hcq_device_timeline_value(dev[d]), before[d] + 1, "%s: %s:%d's timeline", spec, kind, d);
        for (int d = 0; d < nd; d++) {
            model_muladd(model[d], k, (uint32_t)d + 1);
            if (d + 1 < nd) memcpy(model[d + 1], model[d], sizeof model[d]);
        }
        model_muladd(model[nd - 1], 1, 7);
        memcpy(model[0], model[nd - 1], sizeof model[0]);
        /* the last device's synchronize waits for the whole graph; the
         * reads below are eager calls, ordered after it on each device */
        T_OK(hcq_device_synchronize(dev[nd - 1]));
        for (int d = 0; d < nd; d++) {
            t_read(d == 1 && alt ? alt : buf[d], out, sizeof out);
            for (int i = 0; i < N; i++)
                cr_assert_eq(out[i], model[d][i], "%s: replay %d, device %d, element %d: %u, not %u", spec, r, d, i,
                             out[i], model[d][i]);
        }
    }
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_buffer_free(alt));
    for (int d = nd; d-- > 0;) {
        T_OK(hcq_buffer_free(buf[d]));
        T_OK(hcq_program_free(p[d]));
    }
    for (int d = nd; d-- > 0;) T_OK(hcq_device_close(dev[d]));
}

Test(mgraph, nv_two_gpus_nvlink) { chain("nv=H100x2,nv_peer=nvlink", "NV", 2); }
Test(mgraph, nv_four_gpus_pcie) { chain("nv=H100x4,nv_peer=pcie", "NV", 4); }
Test(mgraph, amd_two_gpus_pcie) { chain("amd=gfx1100x2,amd_peer=pcie", "AMD", 2); }
Test(mgraph, amd_four_gpus_xgmi) { chain("amd=gfx942x4,amd_peer=xgmi", "AMD", 4); }

/* The order across devices is the GPUs': device 0's share of the graph is
 * held back by a gate only the host opens (a queue submitted before the
 * replay, which the replay follows); the replay returns at once, device
 * 1's node (after device 0's first in capture order) does not run, and
 * device 1's timeline stands, until the gate opens. No link is needed for
 * launches on each device's own memory. Then the results, in order. */
static void gated(const char *spec, const char *kind, int nd)
{
    T_OK(mock_configure(spec));
    hcq_device *dev[MAXD];
    hcq_program *p[MAXD];
    hcq_buffer *buf[MAXD];
    static uint32_t model[MAXD][N], out[N];
    for (int d = 0; d < nd; d++) {
        char name[16];
        snprintf(name, sizeof name, "%s:%d", kind, d);
        dev[d] = open_dev(name);
        p[d] = t_load(dev[d], t_k_muladd());
        for (int i = 0; i < N; i++) model[d][i] = (uint32_t)(i + d);
        buf[d] = t_buffer_from(dev[d], model[d], sizeof model[d]);
    }
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev[0]));
    /* 0, 1, ..., nd-1, then 0 again */
    for (int d = 0; d < nd; d++) T_OK(muladd(g, p[d], buf[d], HCQ_IMM(3), (uint32_t)d + 1));
    T_OK(muladd(g, p[0], buf[0], HCQ_IMM(2), 9));
    for (int d = 0; d < nd; d++) T_OK(hcq_device_synchronize(dev[d]));

    hcq_signal *gate = T_NONNULL(hcq_signal_create(dev[0], 0));
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev[0], HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_graph_replay(g, NULL, 0)); /* returns with device 0 gated: no host wait */
    for (int d = 1; d < nd; d++)
        cr_assert_lt(hcq_signal_value(hcq_device_timeline(dev[d])), hcq_device_timeline_value(dev[d]),
                     "%s: %s:%d finished its share before %s:0 could start", spec, kind, d, kind);
    hcq_signal_set(gate, 1);
    T_OK(hcq_device_synchronize(dev[nd - 1]));
    for (int d = 0; d < nd; d++) model_muladd(model[d], 3, (uint32_t)d + 1);
    model_muladd(model[0], 2, 9);
    for (int d = 0; d < nd; d++) {
        t_read(buf[d], out, sizeof out);
        for (int i = 0; i < N; i++) cr_assert_eq(out[i], model[d][i], "%s: device %d, element %d", spec, d, i);
    }
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(gate));
    T_OK(hcq_graph_destroy(g));
    for (int d = nd; d-- > 0;) {
        T_OK(hcq_buffer_free(buf[d]));
        T_OK(hcq_program_free(p[d]));
        T_OK(hcq_device_close(dev[d]));
    }
}

Test(mgraph, nv_order_runs_on_the_gpus_without_links) { gated("nv=H100x2,nv_peer=none", "NV", 2); }
Test(mgraph, nv_order_runs_on_the_gpus_four) { gated("nv=H100x4", "NV", 4); }
Test(mgraph, amd_order_runs_on_the_gpus_without_links) { gated("amd=gfx1100x2,amd_peer=none", "AMD", 2); }
Test(mgraph, amd_order_runs_on_the_gpus_four_xgmi) { gated("amd=gfx942x4,amd_peer=xgmi", "AMD", 4); }

/* Without a link: a copy or a launch reaching the other device's memory
 * is refused when captured, saying why, and the graph stays usable. */
static void refusals(const char *spec, const char *kind)
{
    T_OK(mock_configure(spec));
    char n0[16], n1[16];
    snprintf(n0, sizeof n0, "%s:0", kind);
    snprintf(n1, sizeof n1, "%s:1", kind);
    hcq_device *a = open_dev(n0), *b = open_dev(n1);
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_program *pb = t_load(b, t_k_muladd());
    hcq_buffer *ba = t_buffer_from(a, host, sizeof host), *bb = t_buffer_from(b, host, sizeof host);
    hcq_graph *g = T_NONNULL(hcq_graph_create(a));
    T_FAILS(hcq_graph_copy(g, bb, 0, ba, 0, sizeof host), HCQ_ENOTSUP);
    T_MSG_HAS("peer mapping");
    T_FAILS(muladd(g, pb, ba, HCQ_IMM(2), 1), HCQ_EINVAL);
    T_MSG_HAS("is a buffer on");
    T_OK(muladd(g, pb, bb, HCQ_IMM(2), 1));
    T_OK(hcq_graph_replay(g, NULL, 0));
    /* a's share ends after the whole graph; b's timeline release is the
     * packet after b's last node, so it may land just after a's: wait for
     * it (bounded) rather than read it at once */
    T_OK(hcq_device_synchronize(a));
    T_OK(hcq_signal_wait(hcq_device_timeline(b), hcq_device_timeline_value(b), 5000000000ull));
    t_read(bb, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], host[i] * 2 + 1, "%s: element %d", spec, i);
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_buffer_free(ba));
    T_OK(hcq_buffer_free(bb));
    T_OK(hcq_program_free(pb));
    T_OK(hcq_device_close(b));
    T_OK(hcq_device_close(a));
}

Test(mgraph, nv_without_links_refuses_what_needs_one) { refusals("nv=H100x2,nv_peer=none", "NV"); }
Test(mgraph, amd_without_links_refuses_what_needs_one) { refusals("amd=gfx1100x2,amd_peer=none", "AMD"); }

/* Devices of different kinds share no memory: refused at capture. */
Test(mgraph, kinds_do_not_mix)
{
    T_OK(mock_configure("nv=H100x1,amd=gfx1100x1"));
    hcq_device *nv = open_dev("NV:0"), *amd = open_dev("AMD:0");
    hcq_program *pa = t_load(amd, t_k_muladd());
    static uint32_t host[N];
    hcq_buffer *b = t_buffer_from(amd, host, sizeof host);
    hcq_graph *g = T_NONNULL(hcq_graph_create(nv));
    T_FAILS(muladd(g, pa, b, HCQ_IMM(2), 1), HCQ_EINVAL);
    T_MSG_HAS("different kinds");
    T_OK(hcq_graph_replay(g, NULL, 0)); /* empty, and still fine */
    T_OK(hcq_graph_destroy(g));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(pa));
    T_OK(hcq_device_close(amd));
    T_OK(hcq_device_close(nv));
}

/* A graph goes with any of its devices: closing another part's device
 * frees it (its queues there were that device's memory), leaving a stale
 * handle; closing the graph's own device with the others open frees it
 * too, and the others go on working. */
static void closes(const char *spec, const char *kind, bool own_first)
{
    T_OK(mock_configure(spec));
    char n0[16], n1[16];
    snprintf(n0, sizeof n0, "%s:0", kind);
    snprintf(n1, sizeof n1, "%s:1", kind);
    hcq_device *a = open_dev(n0), *b = open_dev(n1);
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_program *pa = t_load(a, t_k_muladd()), *pb = t_load(b, t_k_muladd());
    hcq_buffer *ba = t_buffer_from(a, host, sizeof host), *bb = t_buffer_from(b, host, sizeof host);
    hcq_graph *g = T_NONNULL(hcq_graph_create(a));
    T_OK(muladd(g, pa, ba, HCQ_IMM(2), 1));
    T_OK(muladd(g, pb, bb, HCQ_IMM(3), 1));
    T_OK(hcq_graph_replay(g, NULL, 0));
    hcq_device *stays = own_first ? b : a;
    hcq_buffer *sb = own_first ? bb : ba;
    hcq_program *sp = own_first ? pb : pa;
    T_OK(hcq_device_close(own_first ? a : b));
    T_FAILS(hcq_graph_replay(g, NULL, 0), HCQ_ESTATE);
    T_FAILS(hcq_graph_destroy(g), HCQ_ESTATE);
    /* the device left open works: a launch, and its earlier results */
    hcq_arg args[4] = {hcq_arg_buffer(sb), hcq_arg_u32(1), hcq_arg_u32(5), hcq_arg_u32(N)};
    T_OK(hcq_launch(sp, args, 4, dims()));
    t_read(sb, out, sizeof out);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], host[i] * (own_first ? 3 : 2) + 1 + 5, "%s: element %d", spec, i);
    T_OK(hcq_buffer_free(sb));
    T_OK(hcq_program_free(sp));
    T_OK(hcq_device_close(stays));
}

Test(mgraph, nv_closing_another_part_frees_the_graph) { closes("nv=H100x2", "NV", false); }
Test(mgraph, nv_closing_the_graphs_device_first) { closes("nv=H100x2,nv_peer=none", "NV", true); }
Test(mgraph, amd_closing_another_part_frees_the_graph) { closes("amd=gfx1100x2", "AMD", false); }
Test(mgraph, amd_closing_the_graphs_device_first) { closes("amd=gfx942x2,amd_peer=xgmi", "AMD", true); }

/* Two threads replay two graphs over the same two devices, created on
 * different ones (so their parts come in opposite orders), with eager
 * work of a third thread on both devices between them: the replays lock
 * the devices in one order, so none deadlocks, and every result is the
 * count of replays. */
typedef struct rep_arg {
    hcq_graph *g;
    int times;
    hcq_status s;
} rep_arg;

static void *replayer(void *p)
{
    rep_arg *r = p;
    for (int i = 0; i < r->times && !r->s; i++) r->s = hcq_graph_replay(r->g, NULL, 0);
    return NULL;
}

static void two_threads(const char *spec, const char *kind)
{
    T_OK(mock_configure(spec));
    char n0[16], n1[16];
    snprintf(n0, sizeof n0, "%s:0", kind);
    snprintf(n1, sizeof n1, "%s:1", kind);
    hcq_device *d[2] = {open_dev(n0), open_dev(n1)};
    hcq_program *p[2];
    hcq_buffer *b[2][2], *scratch[2];
    static uint32_t zero[N], out[N];
    for (int i = 0; i < 2; i++) {
        p[i] = t_load(d[i], t_k_muladd());
        scratch[i] = t_buffer_from(d[i], zero, sizeof zero);
        for (int k = 0; k < 2; k++) b[i][k] = t_buffer_from(d[i], zero, sizeof zero);
    }
    /* graph k (made on device k) adds 1 to buffer k of each device, its own device last */
    hcq_graph *g[2];
    for (int k = 0; k < 2; k++) {
        g[k] = T_NONNULL(hcq_graph_create(d[k]));
        T_OK(muladd(g[k], p[1 - k], b[1 - k][k], HCQ_IMM(1), 1));
        T_OK(muladd(g[k], p[k], b[k][k], HCQ_IMM(1), 1));
    }
    enum { TIMES = 25 };
    rep_arg ra[2] = {{g[0], TIMES, HCQ_OK}, {g[1], TIMES, HCQ_OK}};
    pthread_t th[2];
    for (int k = 0; k < 2; k++) cr_assert_eq(pthread_create(&th[k], NULL, replayer, &ra[k]), 0);
    for (int i = 0; i < TIMES; i++) /* eager work between the replays, on both devices */
        for (int k = 0; k < 2; k++) T_OK(hcq_buffer_copyin(scratch[k], 0, zero, sizeof zero));
    for (int k = 0; k < 2; k++) {
        pthread_join(th[k], NULL);
        cr_assert_eq(ra[k].s, HCQ_OK, "%s: graph %d: %s", spec, k, hcq_status_name(ra[k].s));
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            t_read(b[i][k], out, sizeof out);
            for (int e = 0; e < N; e++) cr_assert_eq(out[e], (uint32_t)TIMES, "%s: device %d buffer %d", spec, i, k);
        }
    for (int k = 0; k < 2; k++) T_OK(hcq_graph_destroy(g[k]));
    for (int i = 1; i >= 0; i--) {
        for (int k = 0; k < 2; k++) T_OK(hcq_buffer_free(b[i][k]));
        T_OK(hcq_buffer_free(scratch[i]));
        T_OK(hcq_program_free(p[i]));
        T_OK(hcq_device_close(d[i]));
    }
}

Test(mgraph, nv_two_threads_replay_graphs_over_the_same_gpus) { two_threads("nv=H100x2", "NV"); }
Test(mgraph, amd_two_threads_replay_graphs_over_the_same_gpus) { two_threads("amd=gfx1100x2,amd_peer=none", "AMD"); }
