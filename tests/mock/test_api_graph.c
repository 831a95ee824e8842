/* Graphs on the device under test: capture once, replay with new buffers,
 * scalars and launch dims; kernels and copies mixed; ordering against eager
 * work; many replays. */
#include "hcqtest.h"

#include <string.h>

static hcq_device *dev;
static void setup(void) { dev = t_open(); }
static void teardown(void) { T_OK(hcq_device_close(dev)); }
TestSuite(api_graph, .init = setup, .fini = teardown, .timeout = 180);

enum { N = 512 };

static hcq_buffer *iota(uint32_t mul)
{
    uint32_t h[N];
    for (int i = 0; i < N; i++) h[i] = (uint32_t)i * mul;
    return t_buffer_from(dev, h, sizeof h);
}

static void expect(hcq_buffer *b, uint32_t mul, uint32_t add, const char *what)
{
    uint32_t h[N];
    t_read(b, h, sizeof h);
    for (int i = 0; i < N; i++) cr_assert_eq(h[i], (uint32_t)i * mul + add, "%s[%d]", what, i);
}

Test(api_graph, replay_with_new_buffers_gives_new_outputs)
{
    hcq_program *vadd = t_load(dev, t_k_vadd());
    (void)vadd;
    hcq_program *add1 = t_load(dev, t_k_add1());
    hcq_program *cp = t_load(dev, t_k_copy());
    hcq_buffer *in = iota(1), *out = T_NONNULL(hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg c[3] = {hcq_arg_buffer(out), hcq_arg_buffer(in), hcq_arg_u32(N)};
    hcq_arg a[2] = {hcq_arg_buffer(out), hcq_arg_u32(N)};
    T_OK(hcq_graph_launch(g, cp, c, 3, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_launch(g, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_launch(g, add1, a, 2, hcq_dims_1d(N / 64, 64)));
    cr_assert_eq(hcq_graph_node_count(g), 3);
    T_OK(hcq_graph_replay(g, NULL, 0));
    expect(out, 1, 2, "first replay");
    for (uint32_t m = 2; m < 6; m++) {
        hcq_buffer *in2 = iota(m), *out2 = T_NONNULL(hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE));
        T_OK(hcq_graph_set_buffer(g, in, in2));
        T_OK(hcq_graph_set_buffer(g, out, out2));
        T_OK(hcq_graph_replay(g, NULL, 0));
        expect(out2, m, 2, "replay output");
        T_OK(hcq_graph_set_buffer(g, in, NULL));
        T_OK(hcq_graph_set_buffer(g, out, NULL));
        T_OK(hcq_device_synchronize(dev));
        T_OK(hcq_buffer_free(in2));
        T_OK(hcq_buffer_free(out2));
    }
    expect(out, 1, 2, "original output untouched by later replays");
    T_OK(hcq_graph_destroy(g));
}

Test(api_graph, replay_with_new_scalars_and_dims)
{
    hcq_program *p = t_load(dev, t_k_muladd());
    hcq_buffer *b = iota(1);
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a[4] = {hcq_arg_buffer(b), hcq_arg_scalar(4, HCQ_VAR(0)), hcq_arg_scalar(4, HCQ_VAR(1)), hcq_arg_u32(N)};
    hcq_dims d = hcq_dims_1d(1, 64);
    d.grid[0] = HCQ_VAR(2);
    T_OK(hcq_graph_launch(g, p, a, 4, d));
    uint64_t v1[3] = {1, 5, N / 64}; /* all elements: +5 */
    T_OK(hcq_graph_replay(g, v1, 3));
    expect(b, 1, 5, "after +5");
    uint64_t v2[3] = {2, 0, 1}; /* only the first 64 doubled */
    T_OK(hcq_graph_replay(g, v2, 3));
    uint32_t h[N];
    t_read(b, h, sizeof h);
    for (int i = 0; i < N; i++) cr_assert_eq(h[i], i < 64 ? ((uint32_t)i + 5) * 2 : (uint32_t)i + 5, "b[%d]", i);
    T_FAILS(hcq_graph_replay(g, v2, 2), HCQ_EINVAL);
    T_FAILS(hcq_graph_launch(g, p, a, 4, d), HCQ_ESTATE); /* closed after its first replay */
}

Test(api_graph, kernels_and_copies_run_in_capture_order)
{
    hcq_program *add1 = t_load(dev, t_k_add1());
    hcq_buffer *a = iota(1), *b = T_NONNULL(hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg ka[2] = {hcq_arg_buffer(a), hcq_arg_u32(N)}, kb[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    /* a += 1; b = a; b += 1; a = b (half); a += 1 */
    T_OK(hcq_graph_launch(g, add1, ka, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_copy(g, b, 0, a, 0, N * 4));
    T_OK(hcq_graph_launch(g, add1, kb, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_graph_copy(g, a, 0, b, 0, N * 2));
    T_OK(hcq_graph_launch(g, add1, ka, 2, hcq_dims_1d(N / 64, 64)));
    for (int r = 1; r <= 5; r++) {
        hcq_buffer *fresh = iota(1);
        T_OK(hcq_graph_set_buffer(g, a, fresh));
        T_OK(hcq_graph_replay(g, NULL, 0));
        uint32_t h[N], hb[N];
        t_read(fresh, h, sizeof h);
        t_read(b, hb, sizeof hb);
        for (int i = 0; i < N; i++) {
            cr_assert_eq(hb[i], (uint32_t)i + 2, "run %d b[%d]", r, i);
            cr_assert_eq(h[i], i < N / 2 ? (uint32_t)i + 3 : (uint32_t)i + 2, "run %d a[%d]", r, i);
        }
        T_OK(hcq_graph_set_buffer(g, a, NULL));
        T_OK(hcq_buffer_free(fresh));
    }
}

Test(api_graph, replays_back_to_back_and_interleaved_with_eager_work)
{
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a = hcq_arg_buffer(c);
    for (int i = 0; i < 10; i++) T_OK(hcq_graph_launch(g, inc, &a, 1, hcq_dims_1d(1, 1)));
    for (int i = 0; i < 50; i++) {
        T_OK(hcq_graph_replay(g, NULL, 0)); /* no host wait between replays */
        T_OK(hcq_launch(inc, &a, 1, hcq_dims_1d(1, 1)));
    }
    t_read(c, &out, 4);
    cr_assert_eq(out, 50 * 11);
}

Test(api_graph, thousand_node_graph)
{
    hcq_program *inc = t_load(dev, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *c = t_buffer_from(dev, &zero, 4);
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg a = hcq_arg_buffer(c);
    for (int i = 0; i < 1000; i++) T_OK(hcq_graph_launch(g, inc, &a, 1, hcq_dims_1d(1, 1)));
    for (int i = 0; i < 3; i++) T_OK(hcq_graph_replay(g, NULL, 0));
    t_read(c, &out, 4);
    cr_assert_eq(out, 3000);
}

Test(api_graph, bad_replacements_are_refused)
{
    hcq_program *add1 = t_load(dev, t_k_add1());
    hcq_buffer *a = iota(1), *small = T_NONNULL(hcq_buffer_alloc(dev, 16, HCQ_MEM_DEVICE));
    hcq_buffer *unused = T_NONNULL(hcq_buffer_alloc(dev, N * 4, HCQ_MEM_DEVICE));
    hcq_graph *g = T_NONNULL(hcq_graph_create(dev));
    hcq_arg ka[2] = {hcq_arg_buffer(a), hcq_arg_u32(N)};
    T_OK(hcq_graph_launch(g, add1, ka, 2, hcq_dims_1d(N / 64, 64)));
    T_FAILS(hcq_graph_set_buffer(g, a, small), HCQ_EINVAL);
    T_FAILS(hcq_graph_set_buffer(g, unused, a), HCQ_EINVAL);
    T_OK(hcq_graph_replay(g, NULL, 0));
    T_OK(hcq_device_synchronize(dev));
    T_OK(hcq_buffer_free(a));
    T_FAILS(hcq_graph_replay(g, NULL, 0), HCQ_ESTATE);
    T_MSG_HAS("freed");
    T_OK(hcq_graph_destroy(g));
    T_FAILS(hcq_graph_destroy(g), HCQ_ESTATE);
}
