/* Copies and buffers on the device under test: copyin/copyout through the
 * staging ring at sizes around its chunk boundaries, device-to-device
 * copies, views, host buffers, and the ordering of eager calls. */
#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>

static hcq_device *dev;
static void setup(void) { dev = t_open(); }
static void teardown(void) { T_OK(hcq_device_close(dev)); }
TestSuite(api_copy, .init = setup, .fini = teardown, .timeout = 180);

static uint64_t chunk(void) { return hcq_device_get_props(dev)->staging_chunk_bytes; }

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

static void roundtrip(uint64_t size, uint64_t offset)
{
    uint64_t bytes = size + offset + 16;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, bytes, HCQ_MEM_DEVICE));
    uint8_t *in = malloc(size + 1), *out = malloc(size + 1);
    cr_assert(in && out);
    fill(in, size, (unsigned)size);
    memset(out, 0xee, size + 1);
    T_OK(hcq_buffer_copyin(b, offset, in, size));
    T_OK(hcq_buffer_copyout(out, b, offset, size));
    cr_assert(memcmp(in, out, size) == 0, "copy of %llu bytes at offset %llu differs", (unsigned long long)size,
              (unsigned long long)offset);
    cr_assert_eq(out[size], 0xee, "copyout wrote past its end");
    free(in);
    free(out);
    T_OK(hcq_buffer_free(b));
}

Test(api_copy, zero_and_one_byte)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 16, HCQ_MEM_DEVICE));
    uint8_t x = 0x5a, y = 0;
    T_OK(hcq_buffer_copyin(b, 0, &x, 0));
    T_OK(hcq_buffer_copyout(&y, b, 0, 0));
    cr_assert_eq(y, 0, "a 0-byte copyout wrote");
    for (int i = 0; i < 16; i++) {
        x = (uint8_t)(i * 13 + 1);
        T_OK(hcq_buffer_copyin(b, (uint64_t)i, &x, 1));
    }
    for (int i = 0; i < 16; i++) {
        T_OK(hcq_buffer_copyout(&y, b, (uint64_t)i, 1));
        cr_assert_eq(y, (uint8_t)(i * 13 + 1), "byte %d", i);
    }
}

Test(api_copy, sizes_around_staging_chunks)
{
    uint64_t c = chunk();
    uint64_t sizes[] = {8, c - 1, c, c + 1, 3 * c, 3 * c + 5, 9 * c + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) roundtrip(sizes[i], i % 3 ? 7 : 0);
}

Test(api_copy, many_small_copies_fill_every_slot)
{
    /* more chunks in flight than staging slots: reuse must wait */
    enum { N = 64 * 1024 };
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    static uint8_t in[N], out[N];
    fill(in, N, 99);
    for (int i = 0; i < N; i += 256) T_OK(hcq_buffer_copyin(b, (uint64_t)i, in + i, 256));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
}

Test(api_copy, copyin_returns_before_completion_yet_kernel_sees_data)
{
    enum { N = 1 << 16 };
    hcq_program *add1 = t_load(dev, t_k_add1());
    static uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, host, sizeof host));
    memset(host, 0xff, sizeof host); /* the source may be reused at once */
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 256, 256)));
    t_read(b, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i * 3 + 1, "element %d", i);
}

Test(api_copy, device_to_device_and_views)
{
    enum { N = 10000 };
    uint8_t in[N], out[N];
    fill(in, N, 5);
    hcq_buffer *a = t_buffer_from(dev, in, N);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copy(b, 0, a, 0, N));
    t_read(b, out, N);
    cr_assert(memcmp(in, out, N) == 0);
    hcq_buffer *v = T_NONNULL(hcq_buffer_view(b, 1000, 500));
    cr_assert_eq(hcq_buffer_va(v), hcq_buffer_va(b) + 1000);
    cr_assert_eq(hcq_buffer_size(v), 500);
    uint8_t z[500] = {0};
    T_OK(hcq_buffer_copyin(v, 0, z, 500));
    t_read(b, out, N);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], i >= 1000 && i < 1500 ? 0 : in[i], "byte %d", i);
    T_FAILS(hcq_buffer_free(b), HCQ_ESTATE); /* it still has a view */
    T_OK(hcq_buffer_free(v));
    T_OK(hcq_buffer_free(b));
    cr_assert_null(hcq_buffer_view(a, N - 10, 11));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
}

Test(api_copy, host_buffer_is_cpu_visible)
{
    hcq_buffer *h = T_NONNULL(hcq_buffer_alloc(dev, 4096, HCQ_MEM_HOST));
    uint32_t *p = hcq_buffer_cpu_ptr(h);
    cr_assert_not_null(p, "a host buffer has a CPU mapping");
    for (int i = 0; i < 1024; i++) p[i] = (uint32_t)i;
    hcq_program *add1 = t_load(dev, t_k_add1());
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE));
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    hcq_arg a[2] = {hcq_arg_buffer(h), hcq_arg_u32(1024)};
    T_OK(hcq_queue_barrier(q)); /* CPU writes become visible */
    T_OK(hcq_queue_exec(q, add1, a, 2, hcq_dims_1d(4, 256)));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_OK(hcq_signal_wait(s, 1, 0));
    for (int i = 0; i < 1024; i++) cr_assert_eq(p[i], (uint32_t)i + 1, "element %d", i);
}

Test(api_copy, out_of_range_copies_are_refused)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 100, HCQ_MEM_DEVICE));
    uint8_t x[200] = {0};
    T_FAILS(hcq_buffer_copyin(b, 50, x, 51), HCQ_EINVAL);
    T_MSG_HAS("100-byte buffer");
    T_FAILS(hcq_buffer_copyout(x, b, 101, 0), HCQ_EINVAL);
    hcq_buffer *c = T_NONNULL(hcq_buffer_alloc(dev, 10, HCQ_MEM_DEVICE));
    T_FAILS(hcq_buffer_copy(c, 0, b, 0, 11), HCQ_EINVAL);
}

Test(api_copy, eager_calls_are_ordered_on_the_timeline)
{
    /* copyin, launches and copyouts interleaved: each sees the one before */
    enum { N = 4096 };
    hcq_program *add1 = t_load(dev, t_k_add1());
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    hcq_buffer *c = T_NONNULL(hcq_buffer_alloc(dev, sizeof host, HCQ_MEM_DEVICE));
    uint64_t before = hcq_device_timeline_value(dev);
    T_OK(hcq_buffer_copyin(b, 0, host, sizeof host));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    for (int i = 0; i < 10; i++) T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 128, 128)));
    T_OK(hcq_buffer_copy(c, 0, b, 0, sizeof host));
    T_OK(hcq_launch(add1, a, 2, hcq_dims_1d(N / 128, 128)));
    cr_assert_gt(hcq_device_timeline_value(dev), before);
    t_read(c, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i + 10, "c[%d]", i);
    t_read(b, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i + 11, "b[%d]", i);
    T_OK(hcq_device_synchronize(dev));
    cr_assert_eq(hcq_signal_value(hcq_device_timeline(dev)), hcq_device_timeline_value(dev));
}
