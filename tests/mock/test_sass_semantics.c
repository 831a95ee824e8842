/* The SASS executor on what is easy to get wrong (kernels in
 * sass_semantics.cu, built by nvcc for sm_90 and run on the H100 mock
 * under HCQ_MOCK_SHADER=isa), each checked against C written from the
 * operations' meaning: 64-bit carries, every LOP3 truth table,
 * divergence and reconvergence with shuffles and votes, shuffles over
 * segments, atomics' return values, an unknown instruction's exception
 * and an out-of-bounds store's fault, both naming the instruction. Also
 * the decoder on nvdisasm text and its serialized form. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/sass.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "nvcc_build.h"

static hcq_device *dev;
static void *bin;
static size_t bin_size;

static void setup(void)
{
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
}
static void teardown(void)
{
    if (dev) hcq_device_close(dev);
    dev = NULL;
    free(bin);
    bin = NULL;
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}
TestSuite(sass_semantics, .init = setup, .fini = teardown, .timeout = 300);

static hcq_program *load(const char *kernel)
{
    t_need_nvdisasm();
    if (!bin) bin = t_nvcc_cubin("tests/mock/sass_semantics.cu", 90, &bin_size);
    if (!dev) {
        T_OK(mock_configure("nv=H100"));
        dev = T_NONNULL(hcq_device_open("NV:0"));
    }
    hcq_program *p = hcq_program_load_kernel(dev, bin, bin_size, kernel);
    cr_assert_not_null(p, "%s: %s", kernel, hcq_error_message());
    return p;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

Test(sass_semantics, carries_of_64_bit_arithmetic)
{
    hcq_program *p = load("carry64");
    enum { N = 64 };
    uint64_t a[N], b[N], out[4 * N], s = 88172645463325252ull;
    static const uint64_t edge[] = {0, 1, 0xffffffffull, 0x100000000ull, 0xffffffffffffffffull, 0x8000000000000000ull,
                                    0x7fffffffffffffffull, 0xfffffffe00000001ull};
    for (int i = 0; i < N; i++) {
        a[i] = i < 64 && i / 8 < 8 ? edge[i / 8] : rnd(&s);
        b[i] = edge[i % 8];
        if (i >= 48) a[i] = rnd(&s), b[i] = rnd(&s);
    }
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b),
               *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bo), hcq_arg_i32(N)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(2, 32)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < N; i++) {
        unsigned __int128 w = (unsigned __int128)a[i] * b[i];
        cr_assert_eq(out[4 * i], a[i] + b[i], "%d: 0x%llx + 0x%llx", i, (unsigned long long)a[i], (unsigned long long)b[i]);
        cr_assert_eq(out[4 * i + 1], a[i] - b[i], "%d: 0x%llx - 0x%llx", i, (unsigned long long)a[i], (unsigned long long)b[i]);
        cr_assert_eq(out[4 * i + 2], (uint64_t)w, "%d: low product", i);
        cr_assert_eq(out[4 * i + 3], (uint64_t)(w >> 64), "%d: high product of 0x%llx and 0x%llx", i,
                     (unsigned long long)a[i], (unsigned long long)b[i]);
    }
}

Test(sass_semantics, signed_64_bit_division_negates_through_imad_x_with_a_not)
{
    hcq_program *p = load("divrem64");
    enum { N = 64 };
    int64_t a[N], b[N], out[3 * N];
    uint64_t s = 4242;
    static const int64_t edge[] = {7, -7, 100, -1, INT64_MAX, INT64_MIN + 1, 0x100000000ll, -0x100000001ll};
    for (int i = 0; i < N; i++) {
        a[i] = i < 8 ? edge[i] : (int64_t)rnd(&s) >> (i % 40);
        b[i] = i < 8 ? edge[(i + 3) % 8] : (int64_t)rnd(&s) >> (i % 60);
        if (b[i] == 0) b[i] = 3;
    }
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b),
               *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bo), hcq_arg_i32(N)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(2, 32)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(out[3 * i], a[i] / b[i], "%d: %lld / %lld gave %lld", i, (long long)a[i], (long long)b[i],
                     (long long)out[3 * i]);
        cr_assert_eq(out[3 * i + 1], a[i] % b[i], "%d: %lld %% %lld gave %lld", i, (long long)a[i], (long long)b[i],
                     (long long)out[3 * i + 1]);
        cr_assert_eq(out[3 * i + 2], -a[i], "%d: -%lld", i, (long long)a[i]);
    }
}

static uint32_t mm16(uint32_t x, uint32_t y, bool sgn, bool mn)
{
    uint32_t r = 0;
    for (int h = 0; h < 32; h += 16) {
        int32_t u = sgn ? (int16_t)(x >> h) : (int32_t)((x >> h) & 0xffff), v = sgn ? (int16_t)(y >> h) : (int32_t)((y >> h) & 0xffff);
        r |= (uint32_t)(uint16_t)(mn ? (u < v ? u : v) : (u > v ? u : v)) << h;
    }
    return r;
}

Test(sass_semantics, paired_16_bit_min_and_max)
{
    hcq_program *p = load("minmax16x2");
    uint32_t a[32], b[32], c[32], out[6 * 32];
    uint64_t s = 77;
    for (int i = 0; i < 32; i++) a[i] = (uint32_t)rnd(&s), b[i] = (uint32_t)rnd(&s), c[i] = (uint32_t)rnd(&s);
    a[0] = 0x80007fff, b[0] = 0x7fff8000, c[0] = 0x00010001; /* the halves' extremes, both orders */
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b), *bc = t_buffer_from(dev, c, sizeof c),
               *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(1, 32)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < 32; i++) {
        uint32_t want[6] = {mm16(a[i], b[i], true, true),  mm16(a[i], b[i], true, false),
                            mm16(a[i], b[i], false, true), mm16(a[i], b[i], false, false),
                            mm16(mm16(a[i], b[i], true, true), c[i], true, true),
                            mm16(mm16(a[i], b[i], false, false), c[i], false, false)};
        for (int k = 0; k < 6; k++)
            cr_assert_eq(out[6 * i + k], want[k], "%d: op %d of 0x%08x, 0x%08x, 0x%08x: 0x%08x, want 0x%08x", i, k, a[i], b[i], c[i],
                         out[6 * i + k], want[k]);
    }
}

Test(sass_semantics, every_lop3_truth_table)
{
    hcq_program *p = load("lop3_all");
    uint32_t a[64], b[64], c[64];
    uint64_t s = 99;
    for (int i = 0; i < 64; i++) a[i] = (uint32_t)rnd(&s), b[i] = (uint32_t)rnd(&s), c[i] = (uint32_t)rnd(&s);
    a[0] = 0xf0f0f0f0, b[0] = 0xcccccccc, c[0] = 0xaaaaaaaa; /* bit i of lop3 is then the lut's bit */
    uint32_t *out = calloc(256 * 64, 4);
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b),
               *bc = t_buffer_from(dev, c, sizeof c), *bo = T_NONNULL(hcq_buffer_alloc(dev, 256 * 64 * 4, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(1, 64)));
    t_read(bo, out, 256 * 64 * 4);
    for (uint32_t lut = 0; lut < 256; lut++)
        for (int i = 0; i < 64; i++) {
            uint32_t want = 0;
            for (int bit = 0; bit < 32; bit++) {
                uint32_t idx = ((a[i] >> bit) & 1) << 2 | ((b[i] >> bit) & 1) << 1 | ((c[i] >> bit) & 1);
                want |= ((lut >> idx) & 1) << bit;
            }
            cr_assert_eq(out[lut * 64 + i], want, "lut 0x%02x lane %d: got 0x%08x, want 0x%08x", lut, i,
                         out[lut * 64 + i], want);
        }
    free(out);
}

Test(sass_semantics, divergence_and_reconvergence)
{
    hcq_program *p = load("diverge");
    int in[32], out[32], want[32], r[32];
    for (int t = 0; t < 32; t++) in[t] = (t * 37) % 101;
    in[5] = 77;
    hcq_buffer *bi = t_buffer_from(dev, in, sizeof in), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    t_read(bo, out, sizeof out);
    /* the three paths, each with the lanes that take it active */
    uint32_t even_low = 0;
    for (int t = 0; t < 32; t++)
        if (!(t & 1) && !(t & 2) && in[t] > 50) even_low |= 1u << t;
    for (int t = 0; t < 32; t++) {
        int v = in[t];
        if (t & 1) {
            r[t] = 0;
            for (int k = 0; k < (t & 7); k++) r[t] += v * k;
            r[t] += 16 * 1000 + in[(t + 2) & 31] * 7;
        } else if (t & 2) {
            r[t] = -v;
            while (r[t] < 100) r[t] += t + 1;
        } else {
            r[t] = (int)(even_low & 0xffff);
        }
    }
    bool all = true, any = false;
    for (int t = 0; t < 32; t++) all &= in[t] >= 0, any |= in[t] == 77;
    for (int t = 0; t < 32; t++) {
        want[t] = r[t] + r[t ^ 16] + (all ? 1 : 0) + 2 * (any ? 1 : 0);
        cr_assert_eq(out[t], want[t], "lane %d: got %d, want %d", t, out[t], want[t]);
    }
}

Test(sass_semantics, shuffles_over_lanes_and_segments)
{
    hcq_program *p = load("shuffles");
    int in[32], out[5 * 32];
    for (int t = 0; t < 32; t++) in[t] = 1000 + t * 3;
    hcq_buffer *bi = t_buffer_from(dev, in, sizeof in), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    t_read(bo, out, sizeof out);
    for (int t = 0; t < 32; t++) {
        int want[5] = {in[(t * 7) & 31], t >= 3 ? in[t - 3] : in[t], t + 5 < 32 ? in[t + 5] : in[t], in[t ^ 9],
                       in[(t & ~7) + 3]};
        for (int k = 0; k < 5; k++) cr_assert_eq(out[5 * t + k], want[k], "lane %d, shuffle %d", t, k);
    }
}

Test(sass_semantics, atomics_return_the_old_values)
{
    hcq_program *p = load("atomics_ret");
    enum { B = 4, T = 64, N = B * T };
    int g[6] = {0, 0, -1000, 1000, 0, 0}, oa[N], oc[N], os[N];
    uint32_t wrap[N];
    hcq_buffer *bg = t_buffer_from(dev, g, sizeof g), *ba = T_NONNULL(hcq_buffer_alloc(dev, sizeof oa, HCQ_MEM_DEVICE)),
               *bc = T_NONNULL(hcq_buffer_alloc(dev, sizeof oc, HCQ_MEM_DEVICE)),
               *bs = T_NONNULL(hcq_buffer_alloc(dev, sizeof os, HCQ_MEM_DEVICE)),
               *bw = T_NONNULL(hcq_buffer_alloc(dev, sizeof wrap, HCQ_MEM_DEVICE));
    hcq_arg args[5] = {hcq_arg_buffer(bg), hcq_arg_buffer(ba), hcq_arg_buffer(bc), hcq_arg_buffer(bs), hcq_arg_buffer(bw)};
    T_OK(hcq_launch(p, args, 5, hcq_dims_1d(B, T)));
    t_read(bg, g, sizeof g);
    t_read(ba, oa, sizeof oa);
    t_read(bc, oc, sizeof oc);
    t_read(bs, os, sizeof os);
    t_read(bw, wrap, sizeof wrap);
    cr_assert_eq(g[0], N);
    char seen[N] = {0};
    for (int i = 0; i < N; i++) {
        cr_assert(oa[i] >= 0 && oa[i] < N && !seen[oa[i]], "atomicAdd returned %d to thread %d", oa[i], i);
        seen[oa[i]] = 1;
    }
    int winners = 0;
    for (int i = 0; i < N; i++) {
        if (oc[i] == 0) winners++;
        else cr_assert_eq(oc[i], g[1], "a CAS that lost returns the winner's value");
    }
    cr_assert_eq(winners, 1, "one CAS saw 0");
    cr_assert(g[1] >= 1 && g[1] <= N);
    for (int b = 0; b < B; b++) { /* per block: shared atomics return 0, 2, 4, ... in some order */
        char s2[T] = {0};
        for (int t = 0; t < T; t++) {
            int v = os[b * T + t] - 1000 * b;
            cr_assert(v >= 0 && v < 2 * T && v % 2 == 0 && !s2[v / 2], "block %d thread %d: shared atomicAdd returned %d",
                      b, t, v);
            s2[v / 2] = 1;
        }
    }
    cr_assert_eq(g[2], (N - 1) * 3 - 50);
    cr_assert_eq(g[3], 100 - (N - 1));
    int counts[10] = {0};
    for (int i = 0; i < N; i++) {
        cr_assert(wrap[i] <= 9, "atomicInc(.., 9) returned %u", wrap[i]);
        counts[wrap[i]]++;
    }
    for (int v = 0; v < 10; v++) cr_assert(counts[v] >= N / 10 - 1 && counts[v] <= N / 10 + 1, "value %d: %d times", v, counts[v]);
    cr_assert_eq((uint32_t)g[4], (uint32_t)(N % 10));
    cr_assert_eq(g[5], 12345);
}

Test(sass_semantics, an_unknown_instruction_is_an_illegal_instruction)
{
    hcq_program *p = load("uses_hmma");
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 4096, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    T_MSG_HAS("Xid 13");
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "illegal instruction") && strstr(err, "HMMA") && strstr(err, "uses_hmma") &&
              strstr(err, "code offset 0x"), "%s", err);
    hcq_device_close(dev);
    dev = NULL;
}

Test(sass_semantics, an_out_of_bounds_store_faults_naming_the_instruction)
{
    hcq_program *p = load("store_far");
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(b), hcq_arg_u64(1ull << 36)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 32)));
    T_FAILS(hcq_device_synchronize(dev), HCQ_EFAULT);
    T_MSG_HAS("MMU fault");
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "STG") && strstr(err, "store_far") && strstr(err, "not mapped"), "%s", err);
    hcq_device_close(dev);
    dev = NULL;
}

Test(sass_semantics, barrier_reductions)
{
    hcq_program *p = load("bar_reductions");
    enum { T = 96 };
    int x[T], out[T];
    for (int t = 0; t < T; t++) x[t] = (t * 7919) % 23 - 4; /* -4..18: 7 appears, none below -4 */
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bo, out, sizeof out);
    int count = 0, all = 1, any = 0;
    for (int t = 0; t < T; t++) count += x[t] > 0, all &= x[t] > -5, any |= x[t] == 7;
    for (int t = 0; t < T; t++) {
        uint32_t v = (uint32_t)x[t], rev = 0;
        for (int k = 0; k < 32; k++) rev |= ((v >> k) & 1) << (31 - k);
        uint64_t pair = (uint64_t)(uint32_t)t << 32 | v;
        uint32_t perm = 0;
        for (int k = 0; k < 4; k++) perm |= (uint32_t)((pair >> (8 * ((0x4321 >> (4 * k)) & 7))) & 0xff) << (8 * k);
        int want = count * 100 + all * 10 + any + (t << 16) + (int)((uint32_t)x[t] << 3) + (x[t] >> 2) + (int)(rev % 3) + (int)perm;
        cr_assert_eq(out[t], want, "thread %d: got %d, want %d", t, out[t], want);
    }
}

/* libdevice's log2 on its special values, whose results ptxas builds from
 * immediates that are NaN patterns as f32 (difftest seed 5000 found -inf
 * read as -3.2e307); and on powers of two where its sequence is exact
 * (log2(8) is not: 3 - 1 ulp, inside libdevice's stated 1 ulp) */
Test(sass_semantics, log2_of_a_double_at_its_special_values)
{
    hcq_program *p = load("log2_f64");
    static const double x[] = {0.0, -0.0, -1.0, INFINITY, -INFINITY, NAN, 1.0, 0x1p-1074, 0x1p1023, 0.5, 0x1p-1022};
    static const double want[] = {-INFINITY, -INFINITY, NAN, INFINITY, NAN, NAN, 0.0, -1074.0, 1023.0, -1.0, -1022.0};
    enum { N = sizeof x / sizeof x[0] };
    double out[N];
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, N)));
    t_read(bo, out, sizeof out);
    for (int i = 0; i < N; i++) {
        if (isnan(want[i])) cr_assert(isnan(out[i]), "log2(%a): got %a, want NaN", x[i], out[i]);
        else cr_assert(out[i] == want[i] && signbit(out[i]) == signbit(want[i]), "log2(%a): got %a, want %a", x[i], out[i], want[i]);
    }
}

/* the min and max of each 16-bit half, signed and unsigned, and relu
 * (difftest seed 5001 found VIMNMX.S16x2 missing) */
static uint32_t halves(uint32_t x, uint32_t y, int kind)
{
    uint32_t r = 0;
    for (int h = 0; h < 2; h++) {
        int16_t sx = (int16_t)(x >> 16 * h), sy = (int16_t)(y >> 16 * h);
        uint16_t ux = (uint16_t)(x >> 16 * h), uy = (uint16_t)(y >> 16 * h);
        int v = kind == 0 ? (sx < sy ? sx : sy) : kind == 1 ? (sx > sy ? sx : sy) : kind == 2 ? (ux < uy ? ux : uy)
              : kind == 3 ? (ux > uy ? ux : uy) : (sx > sy ? sx : sy) > 0 ? (sx > sy ? sx : sy) : 0;
        r |= (uint32_t)(uint16_t)v << 16 * h;
    }
    return r;
}

Test(sass_semantics, packed_16_bit_min_and_max_with_relu)
{
    hcq_program *p = load("minmax16x2_relu");
    enum { T = 64 };
    uint32_t a[T], b[T], out[6 * T];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    static const uint32_t edge[] = {0, 0x80008000u, 0x7fff7fffu, 0xffff0001u, 0x0001ffffu, 0x80007fffu};
    for (int t = 0; t < T; t++) a[t] = t < 36 ? edge[t % 6] : (uint32_t)rnd(&s), b[t] = t < 36 ? edge[t / 6] : (uint32_t)rnd(&s);
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bb = t_buffer_from(dev, b, sizeof b),
               *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[3] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(1, T)));
    t_read(bo, out, sizeof out);
    for (int t = 0; t < T; t++) {
        for (int k = 0; k < 5; k++)
            cr_assert_eq(out[6 * t + k], halves(a[t], b[t], k), "thread %d, op %d: 0x%08x, 0x%08x gave 0x%08x, want 0x%08x",
                         t, k, a[t], b[t], out[6 * t + k], halves(a[t], b[t], k));
        int32_t m = (int32_t)a[t] < (int32_t)b[t] ? (int32_t)a[t] : (int32_t)b[t];
        cr_assert_eq(out[6 * t + 5], (uint32_t)(m > 0 ? m : 0), "thread %d: min.relu.s32", t);
    }
    /* three inputs: min/max of the first two, then with the third (difftest seed 5008: VIMNMX3.S16x2) */
    hcq_program *p3 = load("minmax3_16x2");
    uint32_t out3[3 * T];
    hcq_buffer *bo3 = T_NONNULL(hcq_buffer_alloc(dev, sizeof out3, HCQ_MEM_DEVICE));
    args[2] = hcq_arg_buffer(bo3);
    T_OK(hcq_launch(p3, args, 3, hcq_dims_1d(1, T)));
    t_read(bo3, out3, sizeof out3);
    for (int t = 0; t < T; t++) {
        uint32_t z = a[t] ^ b[(t + 5) % 64];
        cr_assert_eq(out3[3 * t], halves(halves(a[t], b[t], 0), z, 0), "thread %d: min3.s16x2", t);
        cr_assert_eq(out3[3 * t + 1], halves(halves(a[t], b[t], 3), z, 3), "thread %d: max3.u16x2", t);
        cr_assert_eq(out3[3 * t + 2], halves(halves(a[t], b[t], 1), z, 4), "thread %d: max3.relu.s16x2", t);
    }
}

/* IMAD.X's ~ operand is a bitwise NOT (difftest seed 5013: -(i64)0 was
 * 2^32, the NOT ignored) */
Test(sass_semantics, negations_of_64_bit_values)
{
    hcq_program *p = load("neg64");
    enum { T = 32 };
    int x[4 * T];
    long long out[8 * T];
    static const int edge[] = {0, 1, -1, INT32_MIN, INT32_MAX, 2, -2, 1 << 16};
    uint64_t s = 0x853c49e6748fea9bull;
    for (int i = 64; i < 4 * T; i++) x[i] = i < 72 ? edge[i % 8] : (int)rnd(&s);
    for (int i = 0; i < 32; i++) x[i] = edge[i % 8], x[32 + i] = edge[i / 4 % 8];
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bo, out, sizeof out);
    for (int t = 0; t < T; t++) {
        long long a = x[t], b = x[t + 32], c = x[t + 64], d = x[t + 96];
        long long want[8] = {-a, -b, -c, -d, -(a ^ b), -(c | d), -(a + c), -(b - d)};
        for (int k = 0; k < 8; k++)
            cr_assert_eq(out[8 * t + k], want[k], "thread %d, value %d: got %lld, want %lld", t, k, out[8 * t + k], want[k]);
    }
}

/* lanes in a called function while the rest of the warp waits at
 * __syncthreads (difftest seed 5014 hung: the callers' RET took the waiting
 * lanes' PC for its own and returned to itself) */
static unsigned collatz_steps(unsigned v)
{
    unsigned n = 0;
    while (v > 1 && n < 1000) v = v & 1 ? 3 * v + 1 : v / 2, n++;
    return n;
}

Test(sass_semantics, a_call_while_other_lanes_wait_at_a_barrier)
{
    hcq_program *p = load("call_then_barrier");
    enum { T = 64 };
    unsigned x[T], out[T], v[T];
    for (int t = 0; t < T; t++) x[t] = (unsigned)(t * 7 + 3);
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bo, out, sizeof out);
    for (int t = 0; t < T; t++) v[t] = x[t] % 3 == 0 ? collatz_steps(x[t]) : x[t];
    for (int t = 0; t < T; t++) cr_assert_eq(out[t], v[T - 1 - t] + v[t], "thread %d: got %u, want %u", t, out[t], v[T - 1 - t] + v[t]);
}

/* BSYNC waits for the lanes still in a called function (difftest seed
 * 5040: the others went on, and a shuffle or uniform op after it ran once
 * per group of lanes) */
Test(sass_semantics, a_convergence_barrier_waits_for_lanes_in_a_call)
{
    hcq_program *p = load("call_then_shuffle");
    enum { T = 64 };
    unsigned x[T], out[T], v[T];
    for (int t = 0; t < T; t++) x[t] = (unsigned)(t * 5 + 1);
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof out, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bo, out, sizeof out);
    for (int t = 0; t < T; t++) v[t] = x[t] % 3 == 0 ? collatz_steps(x[t]) : x[t];
    for (int t = 0; t < T; t++)
        cr_assert_eq(out[t], v[t ^ 1] * 1000u + v[t], "thread %d: got %u, want %u", t, out[t], v[t ^ 1] * 1000u + v[t]);
}

/* single division bit for bit against the host's IEEE division (difftest
 * seeds 5045, 5046, 5053: -0 / x gave +0) */
Test(sass_semantics, single_division_keeps_signed_zeros)
{
    hcq_program *p = load("fdiv32");
    enum { T = 32 };
    static const float n[T] = {-0.0f, 0.0f, -0.0f, 0.0f, 1.0f, -1.0f, 3.0f, 0x1p-149f, 0x1.fffffep127f, 1e-30f, -5.0f, 7.0f,
                               -0.0f, 0x1p-126f, 2.0f, -2.0f, 1.0f, 6.0f, -0.0f, 1.5f, 0x1p100f, 0x1p-100f, 9.0f, -9.0f,
                               1.0f, -1.0f, 0.0f, 10.0f, 0.1f, -0.1f, 100.0f, 1e30f};
    static const float d[T] = {3.0f, -3.0f, -7.5f, 0.25f, 3.0f, 7.0f, 0x1p-149f, 3.0f, 0.5f, 1e30f, -0.0f, 0.0f,
                               INFINITY, 3.0f, 0x1p127f, 0x1.fffffep127f, -INFINITY, 1e-38f, 1e-38f, -0.0f, 0x1p-100f,
                               0x1p100f, 3.0f, 3.0f, 49.0f, 10.0f, NAN, 3.0f, 3.0f, 7.0f, 0.3f, 1e-10f};
    float q[T];
    hcq_buffer *bn = t_buffer_from(dev, n, sizeof n), *bd = t_buffer_from(dev, d, sizeof d),
               *bq = T_NONNULL(hcq_buffer_alloc(dev, sizeof q, HCQ_MEM_DEVICE));
    hcq_arg args[3] = {hcq_arg_buffer(bn), hcq_arg_buffer(bd), hcq_arg_buffer(bq)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(1, T)));
    t_read(bq, q, sizeof q);
    for (int t = 0; t < T; t++) {
        float want = n[t] / d[t];
        if (isnan(want)) cr_assert(isnan(q[t]), "%a / %a: got %a, want NaN", n[t], d[t], q[t]);
        else cr_assert(!memcmp(&q[t], &want, 4), "%a / %a: got %a, want %a", n[t], d[t], q[t], want);
    }
}

/* difftest seed 5199: FRND.F64 with a negated (and |..|) operand */
Test(sass_semantics, rounding_a_negated_double_keeps_the_sign)
{
    hcq_program *p = load("round_negated");
    enum { T = 32 };
    double x[T], o[4 * T];
    static const double edge[] = {0x1.fffffe0000000p127, -0x1.fffffe0000000p127, 2.5, -2.5, 0.0, -0.0, 0.5, -1.5,
                                  0x1p52 + 1, INFINITY, -INFINITY, 1e-300};
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < T; t++)
        x[t] = t < 12 ? edge[t] : ldexp((double)(rnd(&s) >> 11) * 0x1p-53 - 0.5, (int)(rnd(&s) % 80) - 20);
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof o, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bo, o, sizeof o);
    for (int t = 0; t < T; t++) {
        double want[4] = {trunc(-x[t]), floor(-x[t]), ceil(-fabs(x[t])), rint(-x[t])};
        for (int k = 0; k < 4; k++)
            cr_assert(!memcmp(&o[4 * t + k], &want[k], 8), "x %a, rounding %d: got %a, want %a", x[t], k, o[4 * t + k], want[k]);
    }
}

/* difftest seeds 5072 (VIADD.16x2) and 5078 (DSETP.MAX): illegal
 * instructions; min/max of doubles with NaNs, zeros and infinities */
Test(sass_semantics, packed_add_and_double_min_max)
{
    hcq_program *p = load("add16x2_minmax64");
    enum { T = 32 };
    unsigned a[2 * T], o[T];
    double x[2 * T], m[3 * T];
    static const double ev[] = {1.0, -1.0, NAN, -0.0, 0.0, INFINITY, -INFINITY, -2.5, -3.0, 1e300};
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < 2 * T; i++) {
        a[i] = (uint32_t)rnd(&s);
        x[i] = i < T ? ev[i % 10] : ev[(i / 3) % 10];
    }
    a[0] = 0xffff8000u, a[T] = 0x00018000u; /* both halves wrap */
    hcq_buffer *ba = t_buffer_from(dev, a, sizeof a), *bx = t_buffer_from(dev, x, sizeof x),
               *bo = T_NONNULL(hcq_buffer_alloc(dev, sizeof o, HCQ_MEM_DEVICE)),
               *bm = T_NONNULL(hcq_buffer_alloc(dev, sizeof m, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bx), hcq_arg_buffer(bo), hcq_arg_buffer(bm)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(1, T)));
    t_read(bo, o, sizeof o);
    t_read(bm, m, sizeof m);
    for (int t = 0; t < T; t++) {
        uint32_t want = ((a[t] >> 16) + (a[t + T] >> 16)) << 16 | ((a[t] + a[t + T]) & 0xffff);
        cr_assert_eq(o[t], want, "thread %d: 0x%08x +16x2 0x%08x = 0x%08x, want 0x%08x", t, a[t], a[t + T], o[t], want);
        double u = x[t], v = x[t + T];
        double w[3] = {fmax(u, v), fmin(u, v), fmax(u, -2.5)};
        for (int k = 0; k < 3; k++) {
            if (isnan(w[k])) cr_assert(isnan(m[3 * t + k]), "thread %d op %d: %a, %a gave %a, want NaN", t, k, u, v, m[3 * t + k]);
            else cr_assert(m[3 * t + k] == w[k], "thread %d op %d: %a, %a gave %a, want %a", t, k, u, v, m[3 * t + k], w[k]);
        }
    }
}

/* difftest seed 9076: DSETP.MAX/.MIN with a negated operand (an illegal
 * instruction before) */
Test(sass_semantics, double_min_max_of_negated_operands)
{
    hcq_program *p = load("minmax64_neg");
    enum { T = 32 };
    double x[2 * T], m[2 * T];
    static const double ev[] = {1.0, -1.0, NAN, -0.0, 0.0, INFINITY, -INFINITY, -2.5, 3.0, 1e300, -1e-300};
    for (int i = 0; i < 2 * T; i++) x[i] = i < T ? ev[i % 11] : ev[(i / 3) % 11];
    hcq_buffer *bx = t_buffer_from(dev, x, sizeof x), *bm = T_NONNULL(hcq_buffer_alloc(dev, sizeof m, HCQ_MEM_DEVICE));
    hcq_arg args[2] = {hcq_arg_buffer(bx), hcq_arg_buffer(bm)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, T)));
    t_read(bm, m, sizeof m);
    for (int t = 0; t < T; t++) {
        double u = x[t], v = x[t + T];
        double w[2] = {fmax(u, -v), fmin(-u, v)};
        for (int k = 0; k < 2; k++) {
            if (isnan(w[k])) cr_assert(isnan(m[2 * t + k]), "thread %d op %d: %a, %a gave %a, want NaN", t, k, u, v, m[2 * t + k]);
            else cr_assert(m[2 * t + k] == w[k], "thread %d op %d: %a, %a gave %a, want %a", t, k, u, v, m[2 * t + k], w[k]);
        }
    }
}

/* ** memcheck (HCQ_MOCK_CHECK=memcheck) */
static hcq_status run_mc(const char *kernel, int *out)
{
    setenv("HCQ_MOCK_CHECK", "memcheck", 1);
    base_env_reload();
    hcq_program *p = load(kernel);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64 * 4, HCQ_MEM_DEVICE));
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 64)));
    hcq_status s = hcq_device_synchronize(dev);
    if (!s) t_read(b, out, 64 * 4);
    unsetenv("HCQ_MOCK_CHECK");
    base_env_reload();
    return s;
}

Test(sass_semantics, memcheck_finds_a_read_of_unwritten_shared_memory)
{
    int out[64];
    T_FAILS(run_mc("mc_uninit", out), HCQ_EFAULT);
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "memcheck") && strstr(err, "which nothing wrote") && strstr(err, "thread 32") &&
              strstr(err, "mc_uninit") && strstr(err, "LDS"), "%s", err);
    hcq_device_close(dev);
    dev = NULL;
}

Test(sass_semantics, memcheck_finds_a_shared_memory_race)
{
    int out[64];
    T_FAILS(run_mc("mc_race", out), HCQ_EFAULT);
    char err[1024];
    mock_nv_last_error(0, err, sizeof err);
    cr_assert(strstr(err, "memcheck: shared-memory race") && strstr(err, "since the last barrier") &&
              strstr(err, "mc_race"), "%s", err);
    hcq_device_close(dev);
    dev = NULL;
}

Test(sass_semantics, memcheck_passes_a_correct_kernel)
{
    int out[64];
    T_OK(run_mc("mc_clean", out));
    for (int t = 0; t < 64; t++) cr_assert_eq(out[t], (t ^ 32) + 1);
}

/* ** the decoder */
static const char text[] =
    "\t.headerflags\t@\"EF_CUDA_SM90\"\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/               @!P0 BRA 0x40 ;\n"
    "        /*0020*/                   IADD3 R2, P2, -R3, 0x80, RZ ;\n"
    "        /*0030*/                   HFMA2.MMA R7, -RZ, RZ, 0, 5.9604644775390625e-08 ;\n"
    "        /*0040*/                   FSETP.GEU.AND P1, PT, |R9|.reuse, 1.5, PT ;\n"
    "        /*0050*/                   LDG.E.64 R4, desc[UR4][R2.64+-0x10] ;\n"
    "        /*0060*/                   FROB.X R1, R2 ;\n"
    "        /*0070*/                   IADD3.WOBBLE R1, R2, R3, RZ ;\n"
    "        /*0080*/                   LDC R5, c[0x3][R2+0x10] ;\n"
    "        /*0090*/                   BRA 0x90;\n";

Test(sass_semantics, the_decoder_reads_nvdisasm_text)
{
    sass_prog *p;
    T_OK(sass_parse(text, 90, 10, NULL, &p));
    const sass_insn *i = p->insns;
    cr_assert_eq(i[0].op, SASS_OP_LDC);
    cr_assert_eq(i[0].o[1].kind, SASS_K_CBANK);
    cr_assert_eq(i[0].o[1].imm, 0x28);
    cr_assert_eq(i[1].op, SASS_OP_BRA);
    cr_assert_eq(i[1].guard, 0x10 | 0, "@!P0");
    cr_assert_eq(i[1].target, 4, "0x40 is instruction 4");
    cr_assert_eq(i[2].op, SASS_OP_IADD3);
    cr_assert_eq(i[2].o[1].kind, SASS_K_P);
    cr_assert_eq(i[2].o[2].flags & SASS_F_NEG, SASS_F_NEG);
    cr_assert_eq(i[3].nops, 4, "the two halves are one operand");
    cr_assert_eq(i[3].o[3].imm, 0x00000001u, "nvdisasm prints the high half first");
    cr_assert_eq(i[4].o[2].flags & SASS_F_ABS, SASS_F_ABS);
    cr_assert_eq(i[4].o[3].imm, 0x3fc00000u, "1.5 as f32");
    cr_assert(sass_has(&i[4], SASS_M_GEU) && sass_has(&i[4], SASS_M_AND));
    cr_assert_eq(i[5].op, SASS_OP_LDG);
    cr_assert(sass_has(&i[5], SASS_M_M64) && sass_has(&i[5], SASS_M_E));
    cr_assert_eq(i[5].o[1].kind, SASS_K_MEM);
    cr_assert_eq(i[5].o[1].flags & SASS_F_WIDE, SASS_F_WIDE);
    cr_assert_eq((int64_t)i[5].o[1].imm, -16);
    cr_assert_eq(i[6].op, SASS_OP_UNKNOWN, "an opcode the executor does not know");
    cr_assert_str_eq(p->strings + i[6].text, "FROB.X R1, R2");
    cr_assert_eq(i[7].op, SASS_OP_UNKNOWN, "a modifier it does not know");
    cr_assert_eq(i[8].o[1].flags & SASS_F_IDX_R, SASS_F_IDX_R);
    cr_assert_eq(i[8].o[1].reg, 3);
    cr_assert_eq(i[8].o[1].reg2, 2);
    cr_assert_eq(i[9].target, 9);
    /* the serialized form round-trips and refuses damage */
    void *ser;
    size_t n;
    T_OK(sass_serialize(p, &ser, &n));
    sass_prog *q;
    T_OK(sass_deserialize(ser, n, &q));
    cr_assert_eq(q->ninsns, p->ninsns);
    cr_assert(!memcmp(q->insns, p->insns, p->ninsns * sizeof *p->insns));
    cr_assert_str_eq(q->strings + q->insns[6].text, "FROB.X R1, R2");
    ((uint8_t *)ser)[32 + 0] = 0xff; /* the first instruction's opcode */
    ((uint8_t *)ser)[32 + 1] = 0xff;
    T_FAILS(sass_deserialize(ser, n, &q), HCQ_EFORMAT);
    T_FAILS(sass_deserialize(ser, n - 1, &q), HCQ_EFORMAT);
    free(ser);
    sass_prog_free(q);
    sass_prog_free(p);
}

/* nvdisasm prints any NaN immediate as QNAN; with the code bytes the
 * decoder takes the immediate's own bits (bits 32..63 of the word) */
Test(sass_semantics, the_decoder_reads_nan_immediates_from_the_code)
{
    static const char nan_text[] = "        /*0000*/                   FSEL R5, R3, -QNAN , P0 ;\n"
                                   "        /*0010*/                   DADD R2, R4, QNAN ;\n"
                                   "        /*0020*/                   FADD R2, R4, 1.5 ;\n";
    /* the low 64 bits of each word as ptxas encoded them (the FSEL from libdevice's log2; the DADD and FADD made
     * up around their immediates, which are all the decoder reads of them) */
    uint64_t code[6] = {0xfff0000003057808ull, 0, 0x7ff8000104027429ull, 0, 0x3fc0000004027421ull, 0};
    sass_prog *p;
    T_OK(sass_parse(nan_text, 90, 3, code, &p));
    cr_assert_eq(p->insns[0].o[2].imm, 0xfff00000u, "-inf's high word, not the canonical NaN");
    cr_assert_eq(p->insns[1].o[2].imm, 0x7ff8000100000000ull, "a double op's immediate is the high word");
    cr_assert_eq(p->insns[2].o[2].imm, 0x3fc00000u, "a number is read from the text");
    sass_prog_free(p);
    /* UPR, the uniform predicates as bits (difftest seed 6017: UP2UR was an illegal instruction) */
    T_OK(sass_parse("        /*0000*/                   UP2UR UR17, UPR, URZ, 0x2 ;\n", 90, 1, NULL, &p));
    cr_assert_eq(p->insns[0].op, SASS_OP_UP2UR);
    cr_assert_eq(p->insns[0].o[1].kind, SASS_K_PR);
    cr_assert_eq(p->insns[0].o[1].reg, 1, "UPR, not PR");
    sass_prog_free(p);
    T_OK(sass_parse(nan_text, 90, 3, NULL, &p));
    cr_assert_eq(p->insns[0].o[2].imm, 0xffc00000u, "without the code: the canonical NaN, negated");
    sass_prog_free(p);
}
