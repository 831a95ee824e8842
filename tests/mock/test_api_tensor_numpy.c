/* hcq against NumPy over the integer and f64 dtypes: the device computes
 * binary ops on every integer dtype and f64 (edge values included: 0, -1,
 * the dtype's least and greatest), mixed-dtype promotion, casts, sums and
 * matmuls; tests/support/numpy_diff.py recomputes each case in NumPy, with
 * tensor.h's stated differences applied (C division, accumulation dtypes,
 * an integer with a float), and compares bit for bit. Skips where python3
 * or numpy is missing (scripts/deps.sh installs numpy from PyPI). Runs
 * where the composite suites do (run-tests.sh): what it checks is the
 * rules, which test_api_tensor_dtypes holds every device to. */
#include "proctest.h"
#include "tensortest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(api_tensor_numpy, .init = tx_setup, .fini = tx_teardown, .timeout = 240);

static char dir[T_TMP_PATH];
static FILE *manifest;
static int ncase;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void save(const char *name, const char *ext, hcq_tensor *t)
{
    cr_assert_not_null(t, "%s: %s", name, hcq_error_message());
    size_t sz = (size_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
    void *buf = malloc(sz + 1);
    T_OK(hcq_tensor_read(t, buf, sz));
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(buf, 1, sz, f), sz);
    fclose(f);
    free(buf);
}

static void shape_str(hcq_tensor *t, char *out, size_t n)
{
    int64_t s[HCQ_MAX_DIMS];
    int nd = hcq_tensor_shape(t, s);
    out[0] = 0;
    if (!nd) snprintf(out, n, "-");
    for (int d = 0; d < nd; d++) snprintf(out + strlen(out), n - strlen(out), "%s%lld", d ? "x" : "", (long long)s[d]);
}

/* one case: op(a[, b]) = r computed in ct (comparisons) */
static void add_case(const char *op, hcq_tensor *a, hcq_tensor *b, hcq_tensor *r, hcq_dtype ct)
{
    char name[32], sa[64], sb[64], sr[64];
    snprintf(name, sizeof name, "c%d", ncase++);
    cr_assert_not_null(r, "%s(%s, %s): %s", op, hcq_dtype_name(hcq_tensor_dtype(a)),
                       b ? hcq_dtype_name(hcq_tensor_dtype(b)) : "-", hcq_error_message());
    save(name, "a", a);
    if (b) save(name, "b", b);
    save(name, "out", r);
    shape_str(a, sa, sizeof sa);
    shape_str(r, sr, sizeof sr);
    if (b) shape_str(b, sb, sizeof sb);
    fprintf(manifest, "%s %s %s %s %s %s %s %s %s\n", name, op, hcq_dtype_name(hcq_tensor_dtype(a)), sa,
            b ? hcq_dtype_name(hcq_tensor_dtype(b)) : "-", b ? sb : "-", hcq_dtype_name(hcq_tensor_dtype(r)),
            hcq_dtype_name(ct), sr);
}

/* n values of dt: edges (0, 1, -1, least, greatest) then random bits */
static hcq_tensor *values(hcq_dtype dt, int64_t n, bool small)
{
    size_t es = hcq_dtype_size(dt);
    uint8_t *raw = calloc((size_t)n, es);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = next();
        if (dt == HCQ_F64) {
            double d = small ? (double)((int64_t)(v % 64) - 32) : ldexp((double)(v >> 11) - 0x1p52, (int)(v % 40) - 20);
            memcpy(raw + i * es, &d, 8);
            continue;
        }
        if (small) v %= 100;
        else if (i < 6) {
            bool sg = hcq_dtype_is_signed(dt);
            uint64_t top = 1ull << (es * 8 - 1);
            const uint64_t edge[6] = {0, 1, ~0ull, sg ? top : 0, sg ? top - 1 : ~0ull, 2};
            v = edge[i];
        }
        memcpy(raw + i * es, &v, es);
    }
    hcq_tensor *t = hcq_from_data(tx_ctx, dt, &n, 1, raw);
    free(raw);
    cr_assert_not_null(t, "%s", hcq_error_message());
    return t;
}

static void setup_dir(void)
{
    t_tmpdir(dir, sizeof dir, "hcq-numpy");
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/manifest", dir);
    manifest = fopen(path, "w");
    cr_assert_not_null(manifest);
}

static void run_numpy(void)
{
    fclose(manifest);
    char src[512];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    cr_assert_not_null(slash);
    snprintf(slash, sizeof src - (size_t)(slash - src), "/../support/numpy_diff.py");
    char out[T_TMP_PATH + 16];
    snprintf(out, sizeof out, "%s/log", dir);
    int rc = t_sh("timeout 120 python3 %s %s > %s 2>&1", src, dir, out);
    char *log = t_slurp(out, 1 << 16);
    t_sh("rm -rf %s", dir);
    if (rc == 77 || rc == 127) {
        free(log);
        cr_skip_test("no python3 with numpy (scripts/deps.sh installs it): %d", rc);
    }
    cr_assert_eq(rc, 0, "NumPy disagrees (exit %d):\n%s", rc, log);
    cr_log_info("%s", log); /* the case count */
    free(log);
}

static const hcq_dtype INTS[] = {HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_I32, HCQ_U32, HCQ_I64, HCQ_U64};

Test(api_tensor_numpy, integer_and_f64_ops_agree_with_numpy)
{
    if (t_sh("timeout 60 python3 -c 'import numpy' >/dev/null 2>&1")) cr_skip_test("no python3 with numpy");
    setup_dir();
    enum { N = 48 };
    for (size_t k = 0; k < sizeof INTS / sizeof *INTS; k++) {
        hcq_dtype t = INTS[k];
        size_t m = hcq_ctx_mark(tx_ctx);
        hcq_tensor *a = values(t, N, false), *b = values(t, N, false);
        static const char *ops[] = {"add", "sub", "mul", "maximum", "minimum", "idiv", "mod", "and", "or", "xor", "lt", "eq"};
        hcq_tensor *r[12] = {hcq_add(a, b),  hcq_sub(a, b),         hcq_mul(a, b),        hcq_maximum(a, b),
                             hcq_minimum(a, b), hcq_idiv(a, b),     hcq_mod(a, b),        hcq_logical_and(a, b),
                             hcq_logical_or(a, b), hcq_logical_xor(a, b), hcq_lt(a, b), hcq_eq(a, b)};
        T_OK(hcq_realize_all(r, 12));
        for (int i = 0; i < 12; i++) add_case(ops[i], a, b, r[i], t);
        /* a sum (in the stated accumulation dtype) and a cast to f64 */
        /* and shifts by counts below and beyond the width (taken modulo it) */
        hcq_tensor *c = values(t, N, true);
        hcq_tensor *rs[4] = {hcq_sum(a, HCQ_AXES(-1), false), hcq_cast(a, HCQ_F64), hcq_shl(a, c), hcq_shr(a, c)};
        T_OK(hcq_realize_all(rs, 4));
        add_case("sum", a, NULL, rs[0], t);
        add_case("cast", a, NULL, rs[1], t);
        add_case("shl", a, c, rs[2], t);
        add_case("shr", a, c, rs[3], t);
        T_OK(hcq_ctx_release(tx_ctx, m));
    }
    /* f64: exact ops, bit for bit */
    {
        hcq_tensor *a = values(HCQ_F64, N, false), *b = values(HCQ_F64, N, false);
        static const char *ops[] = {"add", "sub", "mul", "div", "maximum", "minimum", "lt"};
        hcq_tensor *r[8] = {hcq_add(a, b),     hcq_sub(a, b),     hcq_mul(a, b), hcq_div(a, b),
                            hcq_maximum(a, b), hcq_minimum(a, b), hcq_lt(a, b),  hcq_sqrt(hcq_maximum(a, b))};
        T_OK(hcq_realize_all(r, 8));
        for (int i = 0; i < 7; i++) add_case(ops[i], a, b, r[i], HCQ_F64);
        /* f64 -> integer casts of values every dtype holds (NumPy leaves the rest undefined) */
        hcq_tensor *s = values(HCQ_F64, N, true), *c[8];
        for (int k = 0; k < 8; k++) c[k] = hcq_cast(hcq_abs(s), INTS[k]);
        T_OK(hcq_realize_all(c, 8));
        for (int k = 0; k < 8; k++) add_case("cast", hcq_abs(s), NULL, c[k], HCQ_F64);
    }
    /* mixed dtypes: the result dtype is NumPy's (u8 + i8 is i16, u64 + i64 f64) */
    static const hcq_dtype pairs[][2] = {{HCQ_U8, HCQ_I8},   {HCQ_U16, HCQ_I16}, {HCQ_U32, HCQ_I32}, {HCQ_U64, HCQ_I64},
                                         {HCQ_I8, HCQ_U32},  {HCQ_BOOL, HCQ_U16}, {HCQ_U8, HCQ_F32}, {HCQ_I64, HCQ_F64},
                                         {HCQ_U16, HCQ_F64}, {HCQ_I16, HCQ_I64}};
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
        size_t m = hcq_ctx_mark(tx_ctx);
        hcq_tensor *a = pairs[p][0] == HCQ_BOOL ? hcq_cast(values(HCQ_U8, N, true), HCQ_BOOL) : values(pairs[p][0], N, true);
        /* floats: small integers and halves' multiples, from f64 */
        hcq_tensor *b = hcq_dtype_is_float(pairs[p][1]) ? hcq_cast(hcq_mul_s(values(HCQ_F64, N, true), 0.5), pairs[p][1])
                                                        : values(pairs[p][1], N, true);
        hcq_tensor *r[3] = {hcq_add(a, b), hcq_mul(a, b), hcq_lt(a, b)};
        T_OK(hcq_realize_all(r, 3));
        hcq_dtype ct = hcq_tensor_dtype(r[0]);
        add_case("add", a, b, r[0], ct);
        add_case("mul", a, b, r[1], ct);
        add_case("lt", a, b, r[2], ct);
        T_OK(hcq_ctx_release(tx_ctx, m));
    }
    /* matmuls: i8 (in i32), u8 (in u32), i64 and integer-valued f64 (exact in any order) */
    static const hcq_dtype mm[] = {HCQ_I8, HCQ_U8, HCQ_I64, HCQ_F64};
    for (size_t i = 0; i < sizeof mm / sizeof *mm; i++) {
        hcq_tensor *a = hcq_reshape(values(mm[i], 12, true), HCQ_SHAPE(3, 4));
        hcq_tensor *b = hcq_reshape(values(mm[i], 8, true), HCQ_SHAPE(4, 2));
        add_case("matmul", a, b, hcq_matmul(a, b), mm[i]);
    }
    run_numpy();
}

/* Symbolic shapes: one JIT whose rows are a variable (hcq_jit_dim),
 * captured once and compiled once, replayed at several sizes; each run's
 * outputs (elementwise, sums and maxima over the variable rows and across
 * them, a product with a fixed matrix, a flip of the rows) against NumPy
 * at that size; and the movements that make sizes of the value (a
 * slice to the end, padding, a step, a merging reshape). i64 and
 * integer-valued f64: exact in any order. */
static hcq_status sym_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)ctx, (void)nin, (void)nout;
    hcq_tensor *a = in[0], *w = user;
    out[0] = hcq_add_s(hcq_mul_s(a, 3), 1);
    out[1] = hcq_sum(a, HCQ_AXES(0), false);
    out[2] = hcq_sum(a, HCQ_AXES(-1), false);
    out[3] = hcq_max(a, HCQ_AXES(0), false);
    out[4] = hcq_matmul(a, hcq_cast(w, hcq_tensor_dtype(a)));
    out[5] = hcq_flip(a, HCQ_AXES(0));
    out[6] = hcq_slice(a, 0, 1, INT64_MAX, 1);              /* a[1:] (empty at 1 row) */
    out[7] = hcq_pad(a, HCQ_PAIRS(1, 2, 0, 0), 7.0);         /* rows padded */
    out[8] = hcq_slice(a, 0, 0, INT64_MAX, 2);               /* a[::2] */
    out[9] = hcq_reshape(a, HCQ_SHAPE(-1));                  /* rows merged with the columns */
    out[10] = hcq_slice(a, 0, -1, INT64_MIN, -2);            /* a[::-2] */
    for (int i = 0; i < 11; i++)
        if (!out[i]) return hcq_error_status();
    return HCQ_OK;
}

Test(api_tensor_numpy, symbolic_shapes_agree_with_numpy)
{
    if (t_sh("timeout 60 python3 -c 'import numpy' >/dev/null 2>&1")) cr_skip_test("no python3 with numpy");
    setup_dir();
    static const char *ops[11] = {"mul3add1", "sum0", "sum", "max0", "matmul", "flip0", "slice1", "pad12", "step2", "flat", "rstep2"};
    static const int64_t sizes[] = {6, 4, 1, 17, 9}; /* traced at the first two */
    static const hcq_dtype dts[] = {HCQ_I64, HCQ_F64};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        hcq_tensor *w = hcq_reshape(values(HCQ_I32, 15, true), HCQ_SHAPE(5, 3));
        T_OK(hcq_realize(w));
        hcq_jit *j = T_NONNULL(hcq_jit_create(tx_ctx, sym_fn, w));
        T_OK(hcq_jit_dim(j, 0, 0, "rows", 1, 32));
        hcq_ctx_stats st;
        uint64_t built = 0;
        for (size_t r = 0; r < sizeof sizes / sizeof *sizes; r++) {
            int64_t n = sizes[r];
            hcq_tensor *a = hcq_contiguous(hcq_reshape(values(dts[k], n * 5, true), HCQ_SHAPE(n, 5))), *o[11]; /* a buffer of its own: the run copies no view */
            T_OK(hcq_realize(a));
            T_OK(hcq_ctx_get_stats(tx_ctx, &st));
            uint64_t before = st.programs;
            T_OK(hcq_jit_run(j, &a, 1, o, 11));
            T_OK(hcq_ctx_get_stats(tx_ctx, &st));
            if (r >= 2) built += st.programs - before;
            cr_assert_eq(hcq_tensor_dim(o[0], 0), n, "the run's size");
            for (int i = 0; i < 11; i++) add_case(ops[i], a, i == 4 ? w : NULL, o[i], dts[k]);
        }
        cr_assert_eq(built, 0, "%s: no kernel compiled after the capture", hcq_dtype_name(dts[k]));
        cr_assert_eq(hcq_jit_capture_count(j), 1, "one capture");
        T_OK(hcq_jit_destroy(j));
    }
    run_numpy();
}
