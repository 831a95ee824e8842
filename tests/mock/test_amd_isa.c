/* The AMD mock's ISA executor (HCQ_MOCK_SHADER=isa) on the semantics that
 * are easy to get wrong (tests/corpus/hip/semantics.hip): nested divergence
 * and reconvergence (EXEC, saveexec), 64-bit carries, DPP and ds_bpermute,
 * the values LDS atomics return, the integer and f16/bf16 dot products
 * (gfx11's iu signedness bits, gfx9's dot*c accumulators, clamp); and its failures: an unknown instruction
 * is an illegal-instruction exception naming it and its address, an access
 * outside the GPU's mappings a memory fault naming the instruction, a
 * kernel that never ends stops at the watchdog as a queue reset, and
 * hcq_device_close returns while one runs. Each on gfx1100 (wave32 and
 * wave64) and gfx942; skips where clang cannot build for them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "drivers/mock/mock_amd.h"
#include "hcqtest.h"
#include "hiptest.h"

TestSuite(amd_isa, .timeout = 120);

typedef struct model {
    const char *arch;
    bool w64;
    unsigned wave;
} model;
static const model models[] = {{"gfx1100", false, 32}, {"gfx1100", true, 64}, {"gfx942", false, 64}};

typedef struct run {
    hcq_device *d;
    void *bin;
    size_t size;
    unsigned wave;
} run;

static run start_cfg(const model *m, const char *extra)
{
    run r = {.wave = m->wave};
    r.bin = t_build_hip("semantics.hip", m->arch, m->w64, &r.size);
    r.d = t_open_amd_isa_cfg(m->arch, extra);
    return r;
}
static run start(const model *m) { return start_cfg(m, NULL); }
static void finish(run *r)
{
    T_OK(hcq_device_close(r->d));
    free(r->bin);
}

static hcq_program *prog(run *r, const char *name)
{
    hcq_program *p = hcq_program_load_kernel(r->d, r->bin, r->size, name);
    cr_assert_not_null(p, "%s: %s", name, hcq_error_message());
    return p;
}

static hcq_buffer *zeros(run *r, size_t size)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(r->d, size, HCQ_MEM_DEVICE));
    void *z = calloc(1, size);
    T_OK(hcq_buffer_copyin(b, 0, z, size));
    free(z);
    return b;
}

static void divergence(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "divergence");
    hcq_buffer *o = zeros(&r, 64 * sizeof(int));
    hcq_arg a[] = {hcq_arg_buffer(o)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(1, 64)));
    int out[64];
    t_read(o, out, sizeof out);
    for (int l = 0; l < 64; l++) {
        int v = l & 1 ? 10 + (l & 2 ? 100 : -3) : l * (l - 1) / 2;
        if (l > 40) v = -v;
        cr_assert_eq(out[l], v, "%s lane %d: %d, want %d", m->arch, l, out[l], v);
    }
    hcq_buffer_free(o);
    T_OK(hcq_program_free(p));
    finish(&r);
}

static void carries(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "carries");
    unsigned long long a[64], b[64], out[256];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 64; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = s;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = i & 1 ? s : ~a[i] + (unsigned)i; /* carries out of the low half on every other lane */
    }
    hcq_buffer *ba = t_buffer_from(r.d, a, sizeof a), *bb = t_buffer_from(r.d, b, sizeof b), *bo = zeros(&r, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 3, hcq_dims_1d(1, 64)));
    t_read(bo, out, sizeof out);
    for (int l = 0; l < 64; l++) {
        cr_assert_eq(out[4 * l], a[l] + b[l], "%s lane %d add", m->arch, l);
        cr_assert_eq(out[4 * l + 1], a[l] - b[l], "%s lane %d sub", m->arch, l);
        cr_assert_eq(out[4 * l + 2], a[l] * b[l], "%s lane %d mul", m->arch, l);
        cr_assert_eq(out[4 * l + 3], (unsigned long long)(unsigned)a[l] * (unsigned)b[l] + b[l], "%s lane %d mad", m->arch, l);
    }
    hcq_buffer_free(ba), hcq_buffer_free(bb), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
    finish(&r);
}

static void lanes(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "lanes");
    unsigned W = r.wave;
    int in[64], out[256];
    for (int i = 0; i < 64; i++) in[i] = 1000 + i * 3;
    hcq_buffer *bi = t_buffer_from(r.d, in, sizeof in), *bo = zeros(&r, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(bi), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, W)));
    t_read(bo, out, sizeof out);
    for (unsigned l = 0; l < W; l++) {
        unsigned row = l & ~15u, q = l & 15;
        cr_assert_eq(out[4 * l], q ? in[l - 1] : -1, "%s lane %u row_shr:1", m->arch, l);
        cr_assert_eq(out[4 * l + 1], in[(l & ~3u) | (3 - (l & 3))], "%s lane %u quad_perm", m->arch, l);
        cr_assert_eq(out[4 * l + 2], in[(l * 7 + 3) % W], "%s lane %u ds_bpermute", m->arch, l);
        cr_assert_eq(out[4 * l + 3], in[row | (15 - q)], "%s lane %u row_mirror", m->arch, l);
    }
    hcq_buffer_free(bi), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
    finish(&r);
}

static void lds_atomics(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "lds_atomics");
    hcq_buffer *br = zeros(&r, 64 * 3 * sizeof(int)), *bf = zeros(&r, 3 * sizeof(int));
    hcq_arg args[] = {hcq_arg_buffer(br), hcq_arg_buffer(bf)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 64)));
    int ret[192], fin[3];
    t_read(br, ret, sizeof ret);
    t_read(bf, fin, sizeof fin);
    cr_assert_eq(fin[0], 64);
    cr_assert_eq(fin[1], 63);
    /* fetch_add returned each of 0..63 once; the exchanges returned 7 and
     * every value but the one left */
    int seen[64] = {0}, xs[65] = {0};
    for (int l = 0; l < 64; l++) {
        cr_assert(ret[3 * l] >= 0 && ret[3 * l] < 64, "%s lane %d got %d from the add", m->arch, l, ret[3 * l]);
        seen[ret[3 * l]]++;
        cr_assert(ret[3 * l + 1] >= -1 && ret[3 * l + 1] < 64);
        int x = ret[3 * l + 2];
        cr_assert(x >= 0 && x < 64, "%s lane %d exchanged out %d", m->arch, l, x);
        xs[x == 7 && !xs[64] ? 64 : x]++;
    }
    for (int i = 0; i < 64; i++) cr_assert_eq(seen[i], 1, "%s: the add returned %d %d times", m->arch, i, seen[i]);
    cr_assert(fin[2] >= 0 && fin[2] < 64);
    xs[fin[2]]++;
    cr_assert_eq(xs[64], 1, "%s: the first exchange returned the initial 7", m->arch);
    for (int i = 0; i < 64; i++) cr_assert_eq(xs[i], 1, "%s: %d was exchanged out %d times", m->arch, i, xs[i]);
    hcq_buffer_free(br), hcq_buffer_free(bf);
    T_OK(hcq_program_free(p));
    finish(&r);
}

static void unknown_instruction(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "unknown_instruction");
    hcq_buffer *o = zeros(&r, 64 * sizeof(int));
    hcq_arg a[] = {hcq_arg_buffer(o)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(1, 64)));
    cr_assert_neq(hcq_device_synchronize(r.d), HCQ_OK);
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "illegal instruction") && strstr(why, "0xbfff0000") && strstr(why, "pc 0x") &&
              strstr(why, "entry+0x") && strstr(why, "`unknown_instruction`"), "%s", why);
    T_OK(hcq_program_free(p));
    finish(&r);
}

static void out_of_bounds(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "out_of_bounds");
    hcq_buffer *o = zeros(&r, 256);
    hcq_arg a[] = {hcq_arg_buffer(o), hcq_arg_i32(64)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)));
    cr_assert_eq(hcq_device_synchronize(r.d), HCQ_EFAULT);
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "memory fault") && strstr(why, "write") && strstr(why, "store") &&
              strstr(why, "`out_of_bounds`"), "%s", why);
    T_OK(hcq_program_free(p));
    finish(&r);
}

/* a runaway kernel: the watchdog (mock config watchdog_ms: CPU time of a
 * work-group) ends it as a queue reset */
static void runaway_watchdog(const model *m)
{
    run r = start_cfg(m, "watchdog_ms=200");
    hcq_program *p = prog(&r, "runaway");
    hcq_buffer *f = zeros(&r, 64);
    hcq_arg a[] = {hcq_arg_buffer(f)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(2, 64)));
    cr_assert_neq(hcq_device_synchronize(r.d), HCQ_OK);
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "watchdog") && strstr(why, "reset"), "%s", why);
    T_OK(hcq_program_free(p));
    finish(&r);
}

/* without a watchdog the wait times out and close still returns: the
 * queue's destruction cancels the kernel */
static void runaway_close(const model *m)
{
    setenv("HCQ_TIMEOUT_MS", "500", 1);
    run r = start_cfg(m, "watchdog_ms=0");
    hcq_program *p = prog(&r, "runaway");
    hcq_buffer *f = zeros(&r, 64);
    hcq_arg a[] = {hcq_arg_buffer(f)};
    T_OK(hcq_launch(p, a, 1, hcq_dims_1d(2, 64)));
    cr_assert_eq(hcq_device_synchronize(r.d), HCQ_ETIMEDOUT);
    hcq_program_free(p);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hcq_device_close(r.d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(r.bin);
    /* (no timed assertion: the suite's timeout catches a close that hangs) */
    (void)t0, (void)t1;
    unsetenv("HCQ_TIMEOUT_MS");
}

/* memcheck: planted LDS bugs are reported with the instruction, the
 * work-item, the work-group and the byte; the clean kernels report nothing */
static void memcheck(const model *m)
{
    setenv("HCQ_MOCK_CHECK", "memcheck", 1);
    run r = start(m);
    unsigned W = r.wave;
    struct { const char *kernel, *want; } cases[] = {
        {"lds_uninitialised", "uninitialised"},
        {"lds_race", "race"},
    };
    for (unsigned i = 0; i < 2; i++) {
        hcq_program *p = prog(&r, cases[i].kernel);
        hcq_buffer *o = zeros(&r, 128 * sizeof(int));
        hcq_arg a[] = {hcq_arg_buffer(o)};
        T_OK(hcq_launch(p, a, 1, hcq_dims_1d(1, 2 * W)));
        cr_assert_neq(hcq_device_synchronize(r.d), HCQ_OK, "%s: memcheck saw nothing", cases[i].kernel);
        char why[1024];
        mock_amd_last_error(0, why, sizeof why);
        cr_assert(strstr(why, "memcheck") && strstr(why, cases[i].want) && strstr(why, "work-item (") &&
                  strstr(why, "LDS byte") && strstr(why, "ds_"), "%s", why);
        T_OK(hcq_program_free(p));
        /* the device is faulted: open it again for the next case */
        T_OK(hcq_device_close(r.d));
        r.d = T_NONNULL(hcq_device_open("AMD:0"));
    }
    /* clean: LDS atomics, exchanges and barriers */
    hcq_program *p = prog(&r, "lds_atomics");
    hcq_buffer *br = zeros(&r, 64 * 3 * sizeof(int)), *bf = zeros(&r, 3 * sizeof(int));
    hcq_arg args[] = {hcq_arg_buffer(br), hcq_arg_buffer(bf)};
    T_OK(hcq_launch(p, args, 2, hcq_dims_1d(1, 64)));
    T_OK(hcq_device_synchronize(r.d));
    T_OK(hcq_program_free(p));
    finish(&r);
    unsetenv("HCQ_MOCK_CHECK");
}

/* division at the ends of the range, bit for bit against the host's IEEE
 * division (clang's sequence is correctly rounded): huge denominators whose
 * reciprocal is subnormal (difftest seeds 1795804521, 1795804502: 1/DBL_MAX
 * was inf; tfuzz seed 1795850685: 4 / -FLT_MAX, a normal quotient, was an
 * ulp low), subnormal quotients, operands and overflow */
static void division(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "division");
    enum { N = 64 };
    double n[N], d[N], q[N];
    float nf[N], df[N], qf[N];
    static const double en[] = {1.0, 1.0, 3.0, -1.0, 0x1p-1022, 1.0, 0x1.8p-1000, 0x1p1023, 0x1.fffffffffffffp1023, 5e-324,
                                1.0, 7.0, 0x1p-1074, 2.5, 1e300, 1.0};
    static const double ed[] = {0x1.fffffffffffffp1023, 0x1p1023, 0x1.3p1022, 0x1.8p1022, 3.0, 0x1p-1074, 0x1.2p50, 0.5, 0x1p-2,
                                3.0, 0x1.ffffp-1023, 0x1.5p1021, 0.75, 0x1p-1060, 1e-300, 0x1.0000000000001p1022};
    static const float enf[] = {1.0f, 1.0f, 3.0f, 0x1p-126f, 1.0f, 0x1p-149f, 0x1.fffffep127f, 2.5f, 4.0f, 0x1.8p3f};
    static const float edf[] = {0x1.fffffep127f, 0x1p127f, 0x1.3p126f, 3.0f, 0x1p-149f, 0.75f, 0.25f, 0x1p-140f, -0x1.fffffep127f, 0x1.000002p126f};
    uint64_t s = 0x243f6a8885a308d3ull;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* past the edge cases: quotients of random magnitudes, many of them subnormal */
        n[i] = i < 16 ? en[i] : ldexp(1.0 + (double)(s >> 12) * 0x1p-52, (int)(s % 2000) - 1000);
        d[i] = i < 16 ? ed[i] : ldexp(1.0 + (double)(s >> 20 & 0xffffffff) * 0x1p-32, (int)(s >> 8 % 2000) % 2000 - 1000 + 1020 * (i & 1));
        nf[i] = i < 10 ? enf[i] : ldexpf(1.0f + (float)(s >> 41) * 0x1p-23f, (int)(s % 250) - 125);
        df[i] = i < 10 ? edf[i] : ldexpf(1.0f + (float)(s >> 9 & 0x7fffff) * 0x1p-23f, (int)(s >> 32) % 250 - 125 + 100 * (i & 1));
    }
    hcq_buffer *bn = t_buffer_from(r.d, n, sizeof n), *bd = t_buffer_from(r.d, d, sizeof d), *bq = zeros(&r, sizeof q);
    hcq_buffer *bnf = t_buffer_from(r.d, nf, sizeof nf), *bdf = t_buffer_from(r.d, df, sizeof df), *bqf = zeros(&r, sizeof qf);
    hcq_arg args[] = {hcq_arg_buffer(bn), hcq_arg_buffer(bd), hcq_arg_buffer(bq), hcq_arg_buffer(bnf), hcq_arg_buffer(bdf), hcq_arg_buffer(bqf)};
    T_OK(hcq_launch(p, args, 6, hcq_dims_1d(1, N)));
    t_read(bq, q, sizeof q);
    t_read(bqf, qf, sizeof qf);
    for (int i = 0; i < N; i++) {
        double want = n[i] / d[i];
        cr_assert(!memcmp(&q[i], &want, 8), "%s lane %d: %a / %a = %a, want %a", m->arch, i, n[i], d[i], q[i], want);
        float wf = nf[i] / df[i];
        cr_assert(!memcmp(&qf[i], &wf, 4), "%s lane %d: %a / %a = %a, want %a (f32)", m->arch, i, nf[i], df[i], qf[i], wf);
    }
    hcq_buffer_free(bn), hcq_buffer_free(bd), hcq_buffer_free(bq);
    hcq_buffer_free(bnf), hcq_buffer_free(bdf), hcq_buffer_free(bqf);
    T_OK(hcq_program_free(p));
    finish(&r);
}

/* the dot products (semantics.hip's dots): each lane's expected values,
 * from the ISA guides' definition (a sum of element products plus the
 * addend, saturating with clamp) computed here independently */
static int64_t dot_ref(uint32_t a, uint32_t b, int64_t c, unsigned bits, bool sa, bool sb)
{
    int64_t s = c;
    uint32_t m = (1u << bits) - 1;
    for (unsigned k = 0; k < 32 / bits; k++) {
        int64_t x = a >> (k * bits) & m, y = b >> (k * bits) & m;
        if (sa && x >> (bits - 1)) x -= 1ll << bits;
        if (sb && y >> (bits - 1)) y -= 1ll << bits;
        s += x * y;
    }
    return s;
}
static int32_t sat_i32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }
static uint32_t sat_u32(int64_t v) { return v > (int64_t)UINT32_MAX ? UINT32_MAX : v < 0 ? 0 : (uint32_t)v; }
static double h2d_ref(uint32_t h)
{
    int e = (int)(h >> 10 & 31);
    double m = (double)(h & 1023);
    if (e == 31) return m ? NAN : h & 0x8000 ? -INFINITY : INFINITY;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}
static float u2f_ref(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void dots(const model *m)
{
    run r = start(m);
    hcq_program *p = prog(&r, "dots");
    enum { N = 64 };
    uint32_t a[N], b[N], c[N];
    int32_t out[8 * N];
    uint64_t s = 0x452821e638d01377ull;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (uint32_t)(s >> 32);
        b[i] = (uint32_t)s;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        c[i] = (uint32_t)(s >> 32);
        if (i < 8) { /* extremes: every element -128 / 255, addends at the range's ends (clamp saturates) */
            a[i] = i & 1 ? 0x80808080u : 0xffffffffu;
            b[i] = i & 2 ? 0x80808080u : 0x7f7f7f7fu;
            c[i] = i & 4 ? 0x7fffff00u : 0x80000100u;
        }
        if (i >= 8 && i < 16) { /* finite f16 / bf16 halves for the float dots: clear each half's exponent top bit */
            a[i] &= 0xbfffbfffu;
            b[i] &= 0xbfffbfffu;
            c[i] = 0x3f800000u; /* 1.0f */
        }
    }
    hcq_buffer *ba = t_buffer_from(r.d, a, sizeof a), *bb = t_buffer_from(r.d, b, sizeof b);
    hcq_buffer *bc = t_buffer_from(r.d, c, sizeof c), *bo = zeros(&r, sizeof out);
    hcq_arg args[] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bo)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(1, N)));
    t_read(bo, out, sizeof out);
    bool gfx11 = !strcmp(m->arch, "gfx1100");
    for (int l = 0; l < N; l++) {
        int32_t *o = out + 8 * l, ci = (int32_t)c[l];
        int32_t want[6];
        if (gfx11) {
            want[0] = (int32_t)dot_ref(a[l], b[l], ci, 8, true, true);
            want[1] = (int32_t)dot_ref(a[l], b[l], ci, 8, true, false);
            want[2] = sat_i32(dot_ref(a[l], b[l], ci, 8, false, true));
            want[3] = (int32_t)dot_ref(a[l], b[l], ci, 4, true, true);
            want[4] = sat_i32(dot_ref(a[l], b[l], ci, 4, false, true));
        } else {
            want[0] = (int32_t)dot_ref(a[l], b[l], ci, 8, true, true);
            want[1] = (int32_t)dot_ref(a[l], b[l], ci, 16, true, true);
            want[2] = sat_i32(dot_ref(a[l], b[l], ci, 8, true, true));
            want[3] = (int32_t)dot_ref(a[l], b[l], ci, 4, true, true);
            want[4] = sat_i32(dot_ref(a[l], b[l], ci, 4, true, true));
        }
        int64_t u = dot_ref(a[l], b[l], c[l], 8, false, false);
        want[5] = (int32_t)(l & 1 ? sat_u32(u) : (uint32_t)u);
        for (int k = 0; k < 6; k++)
            cr_assert_eq(o[k], want[k], "%s lane %d dot %d: %d, want %d (a 0x%08x b 0x%08x c 0x%08x)", m->arch, l, k, o[k],
                         want[k], a[l], b[l], c[l]);
        /* f16 dot: exact products, one rounding of the sum */
        float f = (float)(h2d_ref(a[l] & 0xffff) * h2d_ref(b[l] & 0xffff) + h2d_ref(a[l] >> 16) * h2d_ref(b[l] >> 16) +
                          (double)u2f_ref(c[l]));
        if (!isnan(f)) cr_assert_eq(u2f_ref((uint32_t)o[6]), f, "%s lane %d fdot2: %a, want %a", m->arch, l, u2f_ref((uint32_t)o[6]), f);
        if (gfx11) {
            float g = (float)((double)u2f_ref(a[l] << 16) * u2f_ref(b[l] << 16) +
                              (double)u2f_ref(a[l] & 0xffff0000u) * u2f_ref(b[l] & 0xffff0000u) + (double)u2f_ref(c[l]));
            if (!isnan(g)) cr_assert_eq(u2f_ref((uint32_t)o[7]), g, "%s lane %d bf16 dot2: %a, want %a", m->arch, l, u2f_ref((uint32_t)o[7]), g);
        } else {
            int64_t ud = dot_ref(a[l], b[l], c[l], 16, false, false);
            cr_assert_eq((uint32_t)o[7], sat_u32(ud), "%s lane %d udot2 clamp", m->arch, l);
        }
    }
    hcq_buffer_free(ba), hcq_buffer_free(bb), hcq_buffer_free(bc), hcq_buffer_free(bo);
    T_OK(hcq_program_free(p));
    finish(&r);
}

#define EACH(name)                                                                                             \
    Test(amd_isa, name##_gfx1100_wave32) { name(&models[0]); }                                                \
    Test(amd_isa, name##_gfx1100_wave64) { name(&models[1]); }                                                \
    Test(amd_isa, name##_gfx942) { name(&models[2]); }

EACH(divergence)
EACH(carries)
EACH(lanes)
EACH(lds_atomics)
EACH(unknown_instruction)
EACH(out_of_bounds)
EACH(runaway_watchdog)
EACH(memcheck)
EACH(division)
EACH(dots)
Test(amd_isa, dots_gfx90a) { dots(&(model){"gfx90a", false, 64}); }
Test(amd_isa, runaway_close_returns_gfx1100) { runaway_close(&models[0]); }
Test(amd_isa, runaway_close_returns_gfx942) { runaway_close(&models[2]); }
