#include "tensortest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/mock/mock.h"
#include "hcqtest.h"
#include "tensor/tt.h" /* the launch hook (internal) */

hcq_device *tx_dev;
hcq_ctx *tx_ctx;
static uint64_t agreed;

/* ** host conversions, round to nearest even like the IR */
static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f2h(float f)
{
    uint32_t x = fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) {
        uint32_t m = ax - 0x38000000u;
        return (uint16_t)(sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13));
    }
    if (ax < 0x33000000u) return (uint16_t)sign;
    uint32_t e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;
    uint32_t q = mant >> sh, rem = mant & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

static float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return bitsf(sign | 0x7f800000u | (m << 13));
    if (e == 0) return bitsf(sign | fbits((float)m * 0x1p-24f));
    return bitsf(sign | ((e + 112u) << 23) | (m << 13));
}

static uint16_t f2b(float f)
{
    uint32_t x = fbits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static float b2f(uint16_t b) { return bitsf((uint32_t)b << 16); }

double tx_round(hcq_dtype dt, double v)
{
    switch (dt) {
    case HCQ_F32: return (float)v;
    case HCQ_F16: return h2f(f2h((float)v));
    case HCQ_BF16: return b2f(f2b((float)v));
    case HCQ_I32: return v != v ? 0 : v <= -2147483648.0 ? -2147483648.0 : v >= 2147483647.0 ? 2147483647.0 : trunc(v);
    case HCQ_BOOL: return v != 0;
    default: return v;
    }
}

static void pack(hcq_dtype dt, const double *v, int64_t n, void *out)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case HCQ_F32: ((float *)out)[i] = (float)v[i]; break;
        case HCQ_F16: ((uint16_t *)out)[i] = f2h((float)v[i]); break;
        case HCQ_BF16: ((uint16_t *)out)[i] = f2b((float)v[i]); break;
        case HCQ_I32: ((int32_t *)out)[i] = (int32_t)tx_round(dt, v[i]); break;
        case HCQ_BOOL: ((uint8_t *)out)[i] = v[i] != 0; break;
        default: cr_assert_fail("dtype %s in a tensor test", hcq_dtype_name(dt));
        }
    }
}

static void unpack(hcq_dtype dt, const void *in, int64_t n, double *v)
{
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case HCQ_F32: v[i] = ((const float *)in)[i]; break;
        case HCQ_F16: v[i] = h2f(((const uint16_t *)in)[i]); break;
        case HCQ_BF16: v[i] = b2f(((const uint16_t *)in)[i]); break;
        case HCQ_I32: v[i] = ((const int32_t *)in)[i]; break;
        case HCQ_BOOL: v[i] = ((const uint8_t *)in)[i] != 0; break;
        default: cr_assert_fail("dtype %s in a tensor test", hcq_dtype_name(dt));
        }
    }
}

int64_t tx_numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

hcq_tensor *tx_from(hcq_dtype dt, const int64_t *shape, int ndim, const double *vals)
{
    int64_t n = tx_numel(shape, ndim);
    void *raw = malloc((size_t)(n ? n : 1) * 4);
    pack(dt, vals, n, raw);
    hcq_tensor *t = hcq_from_data(tx_ctx, dt, shape, ndim, raw);
    free(raw);
    cr_assert_not_null(t, "hcq_from_data: %s", hcq_error_message());
    return t;
}

hcq_tensor *tx_rand(hcq_dtype dt, const int64_t *shape, int ndim, double lo, double hi, uint32_t seed, double *host)
{
    int64_t n = tx_numel(shape, ndim);
    double *v = host ? host : calloc((size_t)(n ? n : 1), sizeof *v);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) * 0x1p-53;
        double x = lo + (hi - lo) * u;
        if (dt == HCQ_I32) x = floor(x);
        if (dt == HCQ_BOOL) x = u < 0.5;
        v[i] = tx_round(dt, x);
    }
    hcq_tensor *t = tx_from(dt, shape, ndim, v);
    if (!host) free(v);
    return t;
}

void tx_read(hcq_tensor *t, double *out, int64_t n)
{
    cr_assert_not_null(t, "tensor is NULL: %s", hcq_error_message());
    cr_assert_eq(hcq_tensor_numel(t), n, "numel %lld, expected %lld", (long long)hcq_tensor_numel(t), (long long)n);
    hcq_dtype dt = hcq_tensor_dtype(t);
    void *raw = malloc((size_t)(n ? n : 1) * 4);
    T_OK(hcq_tensor_read(t, raw, (size_t)n * hcq_dtype_size(dt)));
    unpack(dt, raw, n, out);
    free(raw);
}

double tx_rtol(hcq_dtype dt)
{
    switch (dt) {
    case HCQ_F32: return 1e-5;
    case HCQ_F16: return 2e-3;
    case HCQ_BF16: return 1.6e-2;
    default: return 0;
    }
}

void tx_close(const double *got, const double *want, int64_t n, double rtol, double atol, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (isnan(w) || isnan(g)) {
            cr_assert(isnan(w) && isnan(g), "%s[%lld]: got %.9g, want %.9g", what, (long long)i, g, w);
            continue;
        }
        if (isinf(w) || isinf(g)) {
            cr_assert(g == w, "%s[%lld]: got %.9g, want %.9g", what, (long long)i, g, w);
            continue;
        }
        cr_assert(fabs(g - w) <= atol + rtol * fabs(w), "%s[%lld]: got %.9g, want %.9g (rtol %g, atol %g)", what,
                  (long long)i, g, w, rtol, atol);
    }
}

void tx_same(const double *got, const double *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        cr_assert(got[i] == want[i], "%s, element %lld: %.9g, want %.9g", what, (long long)i, got[i], want[i]);
}

void tx_unravel(int64_t i, const int64_t *shape, int ndim, int64_t *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
}

int64_t tx_ravel(const int64_t *idx, const int64_t *shape, int ndim)
{
    int64_t i = 0;
    for (int d = 0; d < ndim; d++) i = i * shape[d] + idx[d];
    return i;
}

/* ** agreement with the interpreter */
static bool has_transcendental(const hcq_kernel *k)
{
    const hcq_ir_op *ops = hcq_kernel_ops(k);
    for (uint32_t i = 0; i < hcq_kernel_op_count(k); i++)
        if (ops[i].op == HCQ_OP_EXP2 || ops[i].op == HCQ_OP_LOG2 || ops[i].op == HCQ_OP_SIN) return true;
    return false;
}

static void agree_hook(hcq_ctx *ctx, const hcq_kernel *k, const hcq_arg *args, uint32_t nargs, uint32_t nout,
                       const uint32_t grid[3], const uint32_t block[3])
{
    T_OK(hcq_device_synchronize(hcq_ctx_device(ctx)));
    uint32_t np = hcq_kernel_param_count(k);
    cr_assert_eq(np, nargs, "kernel `%s`: %u params, %u args", hcq_kernel_name(k), np, nargs);
    cr_assert(nout >= 1 && nout <= np, "kernel `%s`: %u outputs of %u params", hcq_kernel_name(k), nout, np);
    hcq_param_info info[TT_MAX_PARAMS];
    uint32_t ksize = hcq_kernel_param_layout(k, info);
    uint8_t ka[TT_MAX_PARAMS * 8] = {0};
    /* a kernel that stored into one of its inputs (hcq_assign in place)
     * cannot be replayed after the fact: its inputs are gone */
    for (uint32_t o = 0; o < nout; o++)
        for (uint32_t i = nout; i < nargs; i++)
            if (args[i].kind == HCQ_ARG_BUFFER && args[i].buffer == args[o].buffer) return;
    uint8_t *mine[TT_MAX_PARAMS] = {0};
    for (uint32_t o = 0; o < nout; o++) mine[o] = calloc(1, (size_t)hcq_buffer_size(args[o].buffer));
    for (uint32_t i = 0; i < np; i++) {
        if (!info[i].is_buffer) { /* a scalar (a random seed): its value, little-endian */
            memcpy(ka + info[i].offset, &args[i].val.imm, info[i].size);
            continue;
        }
        uint64_t addr = i < nout ? (uint64_t)(uintptr_t)mine[i] : (uint64_t)(uintptr_t)hcq_buffer_cpu_ptr(args[i].buffer);
        memcpy(ka + info[i].offset, &addr, 8);
    }
    hcq_interp_launch l = {.kernargs = ka, .kernarg_size = ksize};
    for (int i = 0; i < 3; i++) {
        l.num_groups[i] = grid[i];
        l.local_size[i] = block[i];
    }
    T_OK(hcq_interp_run(k, &l));
    for (uint32_t o = 0; o < nout; o++) { /* every output agrees */
        uint8_t *dev = hcq_buffer_cpu_ptr(args[o].buffer);
        cr_assert_not_null(dev);
        hcq_dtype dt = (hcq_dtype)info[o].dtype;
        size_t es = hcq_dtype_size(dt), n = (size_t)hcq_buffer_size(args[o].buffer) / es;
        bool exact = !has_transcendental(k) || !hcq_dtype_is_float(dt);
        for (size_t i = 0; i < n; i++) {
            if (!memcmp(mine[o] + i * es, dev + i * es, es)) continue;
            cr_assert(!exact, "kernel `%s` output %u element %zu: the cpu build and the interpreter differ (bits)",
                      hcq_kernel_name(k), o, i);
            double a, b;
            unpack(dt, mine[o] + i * es, 1, &a);
            unpack(dt, dev + i * es, 1, &b);
            bool both_nan = isnan(a) && isnan(b);
            cr_assert(both_nan || fabs(a - b) <= 1e-6 + 1e-5 * fabs(a), "kernel `%s` output %u element %zu: interpreter %.9g, cpu %.9g",
                      hcq_kernel_name(k), o, i, a, b);
        }
        free(mine[o]);
    }
    agreed++;
}

uint64_t tx_agreed_kernels(void) { return agreed; }

void tx_setup(void)
{
    tx_dev = t_open();
    tx_ctx = hcq_ctx_create(tx_dev);
    cr_assert_not_null(tx_ctx, "hcq_ctx_create: %s", hcq_error_message());
    bool cpu = !strcmp(hcq_device_get_props(tx_dev)->target, "cpu");
    tt_set_launch_hook(cpu ? agree_hook : NULL);
}

void tx_teardown(void)
{
    tt_set_launch_hook(NULL);
    T_OK(hcq_ctx_destroy(tx_ctx));
    T_OK(hcq_device_close(tx_dev));
    tx_ctx = NULL;
    tx_dev = NULL;
}

/* ** several mock GPUs */
void tx_mdev_open(tx_mdev *e, const char *spec, const char *kind, int n)
{
    cr_assert(n > 0 && n <= TX_MDEV_MAX, "%d devices", n);
    T_OK(mock_configure(spec));
    memset(e, 0, sizeof *e);
    e->n = n;
    for (int d = 0; d < n; d++) {
        char name[16];
        snprintf(name, sizeof name, "%s:%d", kind, d);
        e->dev[d] = hcq_device_open(name);
        cr_assert_not_null(e->dev[d], "%s: %s", name, hcq_error_message());
        e->ctx[d] = T_NONNULL(hcq_ctx_create(e->dev[d]));
    }
}

void tx_mdev_close(tx_mdev *e)
{
    for (int d = e->n; d-- > 0;) {
        if (e->ctx[d]) T_OK(hcq_ctx_destroy(e->ctx[d]));
        T_OK(hcq_device_close(e->dev[d]));
    }
}
