/* The generator: a seeded random program of a few API calls. Each call is
 * proposed with random arguments fitted to the values at hand and kept
 * only if the reference accepts it (it is the judge of validity), so the
 * programs are valid by construction. Shapes have rank 0-5 with sizes 0,
 * 1 and small primes; dtypes are bool, i8, u8, i16, u16, i32, u32, f16,
 * bf16 and f32 (i64, u64 and f64 not yet: see ref.h); inputs mix ordinary numbers
 * with special values (NaN and signalling NaN bit patterns, +-inf, +-0,
 * denormals, the f16/bf16 extremes, INT_MIN, -1). */
#include "tfuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GEN_MAX_NUMEL 2048
/* now and then a big input, for the plans of large reductions: a work-group
 * per output on GPUs (256 or more elements), two kernels (16384 or more) */
#define GEN_MAX_BIG 45000

typedef struct gen {
    uint64_t s;
    tf_prog *p;
    tf_ref ref;
    hcq_dtype focus; /* HCQ_VOID, or a narrow integer half the dtype picks give */
} gen;

static int below(gen *g, int n) { return tf_below(&g->s, n); }
static bool chance(gen *g, int pct) { return below(g, 100) < pct; }
static double unit(gen *g) { return (double)(tf_rand(&g->s) >> 11) * 0x1p-53; }

static const tf_tensor *val(gen *g, int v) { return &g->ref.t[v]; }

/* ** dtypes and values */
static const hcq_dtype narrow_dt[] = {HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_U32};

static hcq_dtype rand_dt(gen *g)
{
    /* one slot in twelve: one of the narrower integers (and u32); a graph
     * in five (g->focus) draws half its dtypes from one of them, so
     * their ops meet their own dtype often, while most graphs keep the
     * older dtypes' mix */
    static const hcq_dtype w[] = {HCQ_F32, HCQ_F32, HCQ_F32, HCQ_F32, HCQ_F16, HCQ_F16, HCQ_BF16,
                                  HCQ_BF16, HCQ_I32, HCQ_I32, HCQ_BOOL, HCQ_VOID};
    if (g->focus != HCQ_VOID && chance(g, 50)) return g->focus;
    hcq_dtype t = w[below(g, (int)(sizeof w / sizeof *w))];
    return t != HCQ_VOID ? t : narrow_dt[below(g, (int)(sizeof narrow_dt / sizeof *narrow_dt))];
}

static uint32_t special_bits(gen *g, hcq_dtype dt)
{
    static const uint32_t f32[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u, 0xff800000u,
                                   0x7fc00000u, 0x7f800001u, 0xffc12345u, 0x00000001u, 0x807fffffu, 0x7f7fffffu,
                                   0xff7fffffu, 0x00800000u, 0x477fe000u, 0x477ff000u, 0x3f000000u, 0x40400000u,
                                   0xc0200000u, 0x4b800001u};
    static const uint32_t f16[] = {0x0000u, 0x8000u, 0x3c00u, 0xbc00u, 0x7c00u, 0xfc00u, 0x7e00u, 0x7c01u, 0xfe3fu,
                                   0x0001u, 0x83ffu, 0x7bffu, 0xfbffu, 0x0400u, 0x3800u, 0x4200u, 0xc100u};
    static const uint32_t bf16[] = {0x0000u, 0x8000u, 0x3f80u, 0xbf80u, 0x7f80u, 0xff80u, 0x7fc0u, 0x7f81u, 0xffc1u,
                                    0x0001u, 0x807fu, 0x7f7fu, 0xff7fu, 0x0080u, 0x3f00u, 0x4040u, 0xc020u};
    static const uint32_t i32[] = {0u, 1u, 0xffffffffu, 2u, 0x80000000u, 0x7fffffffu, 0x80000001u, 3u, 0xfffffffeu, 7u};
    switch (dt) {
    case HCQ_F32: return f32[below(g, (int)(sizeof f32 / sizeof *f32))];
    case HCQ_F16: return f16[below(g, (int)(sizeof f16 / sizeof *f16))];
    case HCQ_BF16: return bf16[below(g, (int)(sizeof bf16 / sizeof *bf16))];
    case HCQ_I32: return i32[below(g, (int)(sizeof i32 / sizeof *i32))];
    case HCQ_BOOL: return (uint32_t)below(g, 2);
    default: { /* the narrow integers: 0, 1, -1 / the top, the extremes and their neighbours */
        int w = (int)hcq_dtype_size(dt) * 8;
        uint32_t m = w == 32 ? 0xffffffffu : (1u << w) - 1, top = 1u << (w - 1);
        const uint32_t v[] = {0u, 1u, m, 2u, top, top - 1, top + 1, m - 1, 7u, 3u};
        return v[below(g, (int)(sizeof v / sizeof *v))];
    }
    }
}

static uint32_t ordinary_bits(gen *g, hcq_dtype dt, int scale)
{
    if (dt == HCQ_BOOL) return (uint32_t)below(g, 2);
    if (dt == HCQ_I32 || (!hcq_dtype_is_float(dt))) { /* any integer: its low bits (negative ones of the unsigned wrap) */
        int r = below(g, 10);
        if (r < 6) return (uint32_t)(below(g, 21) - 10);
        if (r < 9) return (uint32_t)(below(g, 2001) - 1000);
        return (uint32_t)tf_rand(&g->s);
    }
    double x;
    switch (scale) {
    case 0: x = (double)(below(g, 17) - 8) * 0.5; break; /* halves: ties, exact sums */
    case 1: x = (unit(g) - 0.5) * 8; break;
    default: x = ldexp(unit(g) + 0.5, below(g, 40) - 20) * (chance(g, 50) ? -1 : 1); break;
    }
    return tf_bits(dt, tf_round(dt, x));
}

/* host data for an input of dt and n elements */
static void *rand_data(gen *g, hcq_dtype dt, int64_t n, size_t *nbytes)
{
    size_t es = hcq_dtype_size(dt);
    uint8_t *d = malloc((size_t)(n ? n : 1) * es);
    if (!d) abort();
    int special = (int[]){3, 10, 30, 70}[below(g, 4)], scale = below(g, 3);
    for (int64_t i = 0; i < n; i++) {
        uint32_t b = chance(g, special) ? special_bits(g, dt) : ordinary_bits(g, dt, scale);
        memcpy(d + i * es, &b, es);
    }
    *nbytes = (size_t)n * es;
    return d;
}

static double rand_scalar(gen *g)
{
    static const double v[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, 1e-3, 1e10, INFINITY, -INFINITY,
                               NAN, 0.1, 65504.0, 1e-8, 7.0, -3.0, 0.25, 100.0,
                               16777217.0,                   /* not an f32: rounds before a cast to i32 */
                               0x1.002p0 + 0x1p-40,          /* rounds to an f16 tie in f32, above it in double */
                               -2147483649.0, 3e38, 1e39};
    return v[below(g, (int)(sizeof v / sizeof *v))];
}

/* ** shapes */
static int64_t rand_size(gen *g)
{
    static const int64_t sz[] = {1, 1, 2, 2, 3, 3, 5, 7, 11, 13, 0};
    int k = below(g, 100) < 4 ? 10 : below(g, 10);
    return sz[k];
}

static int rand_shape(gen *g, int64_t *s)
{
    if (chance(g, 4)) { /* big */
        static const int64_t big[] = {256, 257, 300, 1031, 4099, 16384, 16411, 40009};
        int nd = 1 + below(g, 2), k = below(g, 8);
        s[nd - 1] = big[k];
        if (nd == 2) s[0] = big[k] > 4099 ? 1 + below(g, 2) : 1 + below(g, 7);
        return nd;
    }
    int nd = (int[]){0, 1, 1, 2, 2, 2, 3, 3, 4, 5}[below(g, 10)];
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        s[d] = rand_size(g);
        if (n * s[d] > GEN_MAX_NUMEL) s[d] = 1;
        n *= s[d] ? s[d] : 1;
    }
    return nd;
}

static int64_t numel(const int64_t *s, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

/* ** adding instructions */
static tf_inst *add(gen *g, int op)
{
    tf_inst *in = tf_prog_add(g->p);
    if (!in) abort();
    in->op = op;
    return in;
}

/* keeps the last instruction if the reference accepts it; returns its
 * value or -1 */
static int commit(gen *g)
{
    char why[256];
    int i = g->p->n - 1;
    if (tf_ref_step(&g->ref, g->p, i, why, sizeof why) && g->ref.t[i].n <= GEN_MAX_BIG) return i;
    free(g->p->ins[i].data);
    g->p->n--;
    return -1;
}

static int input(gen *g, hcq_dtype dt, const int64_t *s, int nd)
{
    tf_inst *in = add(g, TF_IN);
    in->dt = dt;
    in->niv = nd;
    memcpy(in->iv, s, (size_t)nd * sizeof *s);
    in->data = rand_data(g, dt, numel(s, nd), &in->nbytes);
    return commit(g);
}

static int index_input(gen *g, const int64_t *s, int nd, int64_t lim)
{
    tf_inst *in = add(g, TF_IN);
    in->dt = HCQ_I32;
    in->niv = nd;
    memcpy(in->iv, s, (size_t)nd * sizeof *s);
    int64_t n = numel(s, nd);
    int32_t *d = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) d[i] = chance(g, 8) ? (chance(g, 50) ? -1 : (int32_t)lim) : (int32_t)below(g, (int)(lim ? lim : 1));
    in->data = d;
    in->nbytes = (size_t)n * 4;
    return commit(g);
}

static int fresh(gen *g)
{
    int64_t s[TF_MAX_DIMS];
    int nd = rand_shape(g, s);
    return input(g, rand_dt(g), s, nd);
}

/* a value that is not a weak scalar, preferring recent ones */
static int pick(gen *g)
{
    for (int tries = 0; tries < 8; tries++) {
        int n = g->p->n;
        if (!n) break;
        int v = chance(g, 60) ? n - 1 - below(g, n < 3 ? n : 3) : below(g, n);
        if (!val(g, v)->weak) return v;
    }
    return fresh(g);
}

/* an operand for a binary op with a: its shape with dims dropped from the
 * front or set to 1, or a scalar, of a's dtype or another */
static int operand_like(gen *g, int a)
{
    const tf_tensor *t = val(g, a);
    int r = below(g, 100);
    if (r < 12) {
        tf_inst *in = add(g, TF_SCALAR);
        in->fv = rand_scalar(g);
        return commit(g);
    }
    if (r < 18) {
        tf_inst *in = add(g, TF_FULL);
        in->dt = chance(g, 60) ? t->dt : rand_dt(g);
        in->fv = rand_scalar(g);
        in->niv = t->ndim;
        memcpy(in->iv, t->shape, sizeof t->shape);
        return commit(g);
    }
    if (r < 35) { /* an existing value of the same shape */
        for (int v = g->p->n - 1; v >= 0; v--)
            if (v != a && !val(g, v)->weak && val(g, v)->ndim == t->ndim &&
                !memcmp(val(g, v)->shape, t->shape, (size_t)t->ndim * sizeof *t->shape))
                return v;
    }
    int64_t s[TF_MAX_DIMS];
    int drop = t->ndim && chance(g, 30) ? below(g, t->ndim + 1) : 0, nd = t->ndim - drop;
    for (int d = 0; d < nd; d++) s[d] = chance(g, 25) ? 1 : t->shape[d + drop];
    return input(g, chance(g, 60) ? t->dt : rand_dt(g), s, nd);
}

static int axis(gen *g, int nd) { return nd ? (chance(g, 25) ? below(g, nd) - nd : below(g, nd)) : 0; }

/* ** the op families */
static int g_unary(gen *g)
{
    static const int ops[] = {TF_NEG, TF_EXP, TF_LOG, TF_EXP2, TF_LOG2, TF_SQRT, TF_RSQRT, TF_RECIP, TF_SIN,
                              TF_COS, TF_ABS, TF_SIGN, TF_TRUNC, TF_RELU, TF_SIGMOID, TF_TANH, TF_GELU, TF_SILU,
                              TF_NOT, TF_CAST, TF_CAST, TF_BITCAST, TF_BNOT};
    int a = pick(g);
    if (a < 0) return -1;
    tf_inst *in = add(g, ops[below(g, (int)(sizeof ops / sizeof *ops))]);
    in->nsrc = 1;
    in->src[0] = a;
    if (in->op == TF_CAST) in->dt = rand_dt(g);
    if (in->op == TF_BITCAST) {
        hcq_dtype t = val(g, a)->dt;
        static const hcq_dtype to[][2] = {[HCQ_F32] = {HCQ_I32, HCQ_U32}, [HCQ_I32] = {HCQ_F32, HCQ_U32}, [HCQ_U32] = {HCQ_F32, HCQ_I32},
                                          [HCQ_F16] = {HCQ_BF16, HCQ_I16}, [HCQ_BF16] = {HCQ_F16, HCQ_U16}, [HCQ_I16] = {HCQ_F16, HCQ_U16},
                                          [HCQ_U16] = {HCQ_BF16, HCQ_I16}, [HCQ_I8] = {HCQ_U8, HCQ_U8}, [HCQ_U8] = {HCQ_I8, HCQ_I8},
                                          [HCQ_BOOL] = {HCQ_F16, HCQ_F16}};
        in->dt = (size_t)t < sizeof to / sizeof *to && to[t][0] ? to[t][below(g, 2)] : HCQ_F16; /* bool: refused */
    }
    return commit(g);
}

static int g_binary(gen *g)
{
    static const int ops[] = {TF_ADD, TF_SUB, TF_MUL, TF_DIV, TF_IDIV, TF_MOD, TF_POW, TF_MAXIMUM, TF_MINIMUM,
                              TF_LT, TF_LE, TF_GT, TF_GE, TF_EQ, TF_NE, TF_AND, TF_OR, TF_XOR, TF_ADD, TF_MUL,
                              TF_MAXIMUM, TF_POW};
    static const int sops[] = {TF_ADD_S, TF_SUB_S, TF_MUL_S, TF_DIV_S, TF_POW_S, TF_MAXIMUM_S, TF_MINIMUM_S};
    int a = pick(g);
    if (a < 0) return -1;
    if (chance(g, 20)) {
        tf_inst *in = add(g, sops[below(g, (int)(sizeof sops / sizeof *sops))]);
        in->nsrc = 1;
        in->src[0] = a;
        in->fv = rand_scalar(g);
        return commit(g);
    }
    int b = operand_like(g, a);
    if (b < 0) return -1;
    /* an integer a often meets the integer ops (division's and the bitwise
     * ones' rules differ per width and signedness), mostly with its own dtype */
    static const int iops[] = {TF_IDIV, TF_MOD, TF_AND, TF_OR, TF_XOR, TF_SHL, TF_SHR, TF_ADD, TF_SUB, TF_MUL};
    hcq_dtype adt = val(g, a)->dt;
    bool int_a = !hcq_dtype_is_float(adt) && adt != HCQ_BOOL && chance(g, 40);
    tf_inst *in = add(g, int_a ? iops[below(g, (int)(sizeof iops / sizeof *iops))] : ops[below(g, (int)(sizeof ops / sizeof *ops))]);
    in->nsrc = 2;
    bool swap = chance(g, 30);
    in->src[0] = swap ? b : a;
    in->src[1] = swap ? a : b;
    return commit(g);
}

static int g_where(gen *g)
{
    int a = pick(g);
    if (a < 0) return -1;
    int c = chance(g, 50) ? operand_like(g, a) : a;
    int b = operand_like(g, a);
    if (c < 0 || b < 0) return -1;
    tf_inst *in = add(g, TF_WHERE);
    in->nsrc = 3;
    in->src[0] = c;
    in->src[1] = chance(g, 50) ? a : b;
    in->src[2] = in->src[1] == a ? b : a;
    return commit(g);
}

static int g_reduce(gen *g)
{
    static const int ops[] = {TF_SUM, TF_PROD, TF_MAX, TF_MIN, TF_MEAN, TF_VAR, TF_STD, TF_ARGMAX, TF_ARGMIN,
                              TF_SUM, TF_MAX};
    int a = pick(g);
    if (a < 0) return -1;
    const tf_tensor *t = val(g, a);
    tf_inst *in = add(g, ops[below(g, (int)(sizeof ops / sizeof *ops))]);
    in->nsrc = 1;
    in->src[0] = a;
    if (in->op == TF_ARGMAX || in->op == TF_ARGMIN) {
        in->ia = axis(g, t->ndim);
        in->ib = chance(g, 50);
        return commit(g);
    }
    if (t->ndim && chance(g, 70)) {
        uint32_t m = 0;
        for (int d = 0; d < t->ndim; d++)
            if (chance(g, 50)) m |= 1u << d;
        if (!m) m = 1u << below(g, t->ndim);
        for (int d = 0; d < t->ndim; d++)
            if (m & (1u << d)) in->iv[in->niv++] = chance(g, 20) ? d - t->ndim : d;
    }
    in->ia = chance(g, 40);
    if (in->op == TF_VAR || in->op == TF_STD) in->ib = below(g, 3) == 2 ? 0 : 1;
    return commit(g);
}

/* a shape of n elements in 1-4 dims (-1 for one of them sometimes) */
static int reshape_to(gen *g, int64_t n, int64_t *s)
{
    int nd = 1 + below(g, 4);
    if (n == 0) {
        for (int d = 0; d < nd; d++) s[d] = d == 0 ? 0 : rand_size(g);
        return nd;
    }
    int64_t rest = n;
    for (int d = 0; d < nd - 1; d++) {
        int64_t f = 1;
        for (int64_t k = 2; k <= rest && k < 16; k++)
            if (rest % k == 0 && chance(g, 40)) {
                f = k;
                break;
            }
        s[d] = f;
        rest /= f;
    }
    s[nd - 1] = rest;
    if (chance(g, 25)) s[below(g, nd)] = -1;
    return nd;
}

static int g_move(gen *g)
{
    int a = pick(g);
    if (a < 0) return -1;
    const tf_tensor *t = val(g, a);
    static const int ops[] = {TF_RESHAPE, TF_PERMUTE, TF_TRANSPOSE, TF_EXPAND, TF_PAD, TF_SHRINK, TF_SLICE, TF_FLIP,
                              TF_CAT, TF_STACK, TF_REPEAT, TF_SQUEEZE, TF_UNSQUEEZE, TF_FLATTEN, TF_CONTIGUOUS,
                              TF_PAD, TF_SLICE, TF_CAT};
    int op = ops[below(g, (int)(sizeof ops / sizeof *ops))];
    int nd = t->ndim;
    int64_t shape[TF_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    int parts[TF_MAX_LIST], np = 0;
    if (op == TF_CAT || op == TF_STACK) { /* the other parts first: inputs fitted to a */
        if (!nd && op == TF_CAT) return -1;
        int ax = op == TF_CAT ? below(g, nd) : 0;
        np = 1 + below(g, 3);
        parts[0] = a;
        for (int i = 1; i < np; i++) {
            int64_t s[TF_MAX_DIMS];
            memcpy(s, shape, sizeof s);
            if (op == TF_CAT) s[ax] = rand_size(g);
            parts[i] = chance(g, 20) ? a : input(g, chance(g, 70) ? t->dt : rand_dt(g), s, nd);
            if (parts[i] < 0) return -1;
        }
        if (chance(g, 30)) { /* shuffle */
            int j = below(g, np), tmp = parts[0];
            parts[0] = parts[j], parts[j] = tmp;
        }
        tf_inst *in = add(g, op);
        in->nsrc = np;
        memcpy(in->src, parts, (size_t)np * sizeof *parts);
        in->ia = op == TF_CAT ? (chance(g, 20) ? ax - nd : ax) : axis(g, nd + 1);
        return commit(g);
    }
    tf_inst *in = add(g, op);
    in->nsrc = 1;
    in->src[0] = a;
    switch (op) {
    case TF_RESHAPE: in->niv = reshape_to(g, t->n, in->iv); break;
    case TF_PERMUTE:
        in->niv = nd;
        for (int d = 0; d < nd; d++) in->iv[d] = d;
        for (int d = nd - 1; d > 0; d--) {
            int j = below(g, d + 1);
            int64_t x = in->iv[d];
            in->iv[d] = in->iv[j], in->iv[j] = x;
        }
        break;
    case TF_TRANSPOSE:
        in->ia = axis(g, nd);
        in->ib = axis(g, nd);
        break;
    case TF_EXPAND: {
        int pre = below(g, 3);
        if (nd + pre > 6) pre = 0;
        in->niv = nd + pre;
        for (int d = 0; d < pre; d++) in->iv[d] = 1 + below(g, 3);
        for (int d = 0; d < nd; d++) in->iv[pre + d] = shape[d] == 1 ? (chance(g, 60) ? rand_size(g) : 1) : (chance(g, 30) ? -1 : shape[d]);
        break;
    }
    case TF_PAD: {
        int k = nd ? 1 + below(g, nd) : 0;
        in->niv = 2 * k;
        for (int i = 0; i < 2 * k; i++) in->iv[i] = below(g, 3);
        in->fv = chance(g, 40) ? 0.0 : rand_scalar(g);
        break;
    }
    case TF_SHRINK: {
        int k = nd ? 1 + below(g, nd) : 0;
        in->niv = 2 * k;
        for (int d = 0; d < k; d++) {
            int64_t b = shape[d] ? below(g, (int)shape[d] + 1) : 0;
            int64_t e = b + (shape[d] - b ? below(g, (int)(shape[d] - b) + 1) : 0);
            in->iv[2 * d] = b, in->iv[2 * d + 1] = e;
        }
        break;
    }
    case TF_SLICE: {
        if (!nd) return commit(g);
        in->ia = axis(g, nd);
        int64_t sz = shape[in->ia < 0 ? in->ia + nd : in->ia];
        static const int64_t steps[] = {1, 1, 2, 3, -1, -2};
        in->niv = 3;
        in->iv[0] = below(g, (int)sz + 5) - (int)sz / 2 - 2;
        in->iv[1] = chance(g, 20) ? (chance(g, 50) ? INT64_MAX : INT64_MIN) : below(g, (int)sz + 5) - 2;
        in->iv[2] = steps[below(g, 6)];
        break;
    }
    case TF_FLIP:
        for (int d = 0; d < nd; d++)
            if (chance(g, 50)) in->iv[in->niv++] = d;
        break;
    case TF_REPEAT: {
        int pre = below(g, 2);
        in->niv = nd + pre;
        if (in->niv > TF_MAX_DIMS) return commit(g);
        for (int d = 0; d < in->niv; d++) in->iv[d] = (int64_t[]){1, 1, 2, 3, 0}[below(g, chance(g, 5) ? 5 : 4)];
        break;
    }
    case TF_SQUEEZE: {
        in->ia = 0x7fffffff;
        for (int d = 0; d < nd; d++)
            if (shape[d] == 1 && chance(g, 50)) in->ia = d;
        break;
    }
    case TF_UNSQUEEZE: in->ia = below(g, nd + 1); break;
    case TF_FLATTEN:
        in->ia = nd ? below(g, nd) : 0;
        in->ib = nd ? in->ia + below(g, nd - in->ia) : 0;
        break;
    default: break;
    }
    return commit(g);
}

static int g_composite(gen *g)
{
    static const int ops[] = {TF_MATMUL, TF_MATMUL, TF_LINEAR, TF_CONV2D, TF_AVGPOOL, TF_MAXPOOL, TF_MAXPOOL,
                              TF_SOFTMAX, TF_LOGSOFTMAX, TF_LAYERNORM, TF_XENT, TF_EMBEDDING, TF_GATHER};
    int op = ops[below(g, (int)(sizeof ops / sizeof *ops))];
    int a = pick(g);
    if (a < 0) return -1;
    const tf_tensor *t = val(g, a);
    int nd = t->ndim;
    int64_t s[TF_MAX_DIMS];
    switch (op) {
    case TF_MATMUL: {
        if (!nd || nd > 4) return -1;
        int64_t K = t->shape[nd - 1], N = rand_size(g);
        int bnd = 1 + below(g, 3);
        for (int d = 0; d < bnd; d++) s[d] = d == bnd - 2 || bnd == 1 ? K : d == bnd - 1 ? N : (chance(g, 50) ? 1 : 2);
        if (bnd == 1) s[0] = K;
        int b = input(g, chance(g, 60) ? t->dt : rand_dt(g), s, bnd);
        if (b < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 2;
        in->src[0] = a, in->src[1] = b;
        return commit(g);
    }
    case TF_LINEAR: {
        if (!nd || nd > 4) return -1;
        int64_t K = t->shape[nd - 1], N = rand_size(g);
        int w = input(g, chance(g, 60) ? t->dt : rand_dt(g), (int64_t[]){N, K}, 2);
        int b = chance(g, 50) ? input(g, chance(g, 60) ? t->dt : rand_dt(g), (int64_t[]){N}, 1) : -1;
        if (w < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 3;
        in->src[0] = a, in->src[1] = w, in->src[2] = b;
        return commit(g);
    }
    case TF_CONV2D: {
        int64_t G = 1 + below(g, 2), C = G * (1 + below(g, 2)), O = G * (1 + below(g, 2));
        int64_t xs[4] = {1 + below(g, 2), C, 1 + below(g, 6), 1 + below(g, 6)};
        int64_t ws[4] = {O, C / G, 1 + below(g, 3), 1 + below(g, 3)};
        hcq_dtype dt = chance(g, 70) ? HCQ_F32 : rand_dt(g);
        int x = chance(g, 30) && nd == 4 && t->shape[1] == C ? a : input(g, dt, xs, 4);
        int w = input(g, chance(g, 70) ? dt : rand_dt(g), ws, 4);
        int b = chance(g, 50) ? input(g, dt, (int64_t[]){O}, 1) : -1;
        if (x < 0 || w < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 3;
        in->src[0] = x, in->src[1] = w, in->src[2] = b;
        in->niv = 7;
        int64_t opt[7] = {below(g, 3), below(g, 3), below(g, 2), below(g, 2), below(g, 3), below(g, 2), G};
        memcpy(in->iv, opt, sizeof opt);
        return commit(g);
    }
    case TF_AVGPOOL:
    case TF_MAXPOOL: {
        int x = a;
        if (nd < 2) {
            int64_t xs[4] = {1, 1 + below(g, 2), 1 + below(g, 7), 1 + below(g, 7)};
            x = input(g, rand_dt(g), xs, 4);
            if (x < 0) return -1;
        }
        tf_inst *in = add(g, op);
        in->nsrc = 1;
        in->src[0] = x;
        in->niv = 6;
        int64_t opt[6] = {1 + below(g, 3), 1 + below(g, 3), below(g, 3), below(g, 3), below(g, 2), below(g, 2)};
        memcpy(in->iv, opt, sizeof opt);
        return commit(g);
    }
    case TF_SOFTMAX:
    case TF_LOGSOFTMAX: {
        if (!nd) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 1;
        in->src[0] = a;
        in->ia = axis(g, nd);
        return commit(g);
    }
    case TF_LAYERNORM: {
        if (!nd) return -1;
        int na = 1 + below(g, nd < 2 ? nd : 2);
        int64_t ws[TF_MAX_DIMS];
        for (int d = 0; d < na; d++) ws[d] = t->shape[nd - na + d];
        int w = chance(g, 50) ? input(g, chance(g, 70) ? HCQ_F32 : rand_dt(g), ws, na) : -1;
        int b = chance(g, 50) ? input(g, chance(g, 70) ? HCQ_F32 : rand_dt(g), ws, na) : -1;
        tf_inst *in = add(g, op);
        in->nsrc = 3;
        in->src[0] = a, in->src[1] = w, in->src[2] = b;
        in->ia = na;
        in->fv = (double[]){1e-5, 1e-5, 0.0, 0.5, 1e-3}[below(g, 5)];
        return commit(g);
    }
    case TF_XENT: {
        int64_t N = 1 + below(g, 5), C = 1 + below(g, 6);
        int l = nd == 2 && chance(g, 40) ? a : input(g, chance(g, 70) ? HCQ_F32 : rand_dt(g), (int64_t[]){N, C}, 2);
        if (l < 0) return -1;
        N = val(g, l)->shape[0], C = val(g, l)->shape[1];
        int tg = index_input(g, (int64_t[]){N}, 1, C);
        if (tg < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 2;
        in->src[0] = l, in->src[1] = tg;
        return commit(g);
    }
    case TF_EMBEDDING: {
        int64_t V = 1 + below(g, 6), D = 1 + below(g, 5);
        int w = nd == 2 && chance(g, 40) ? a : input(g, rand_dt(g), (int64_t[]){V, D}, 2);
        if (w < 0) return -1;
        V = val(g, w)->shape[0];
        int64_t is[TF_MAX_DIMS];
        int ind = below(g, 3);
        for (int d = 0; d < ind; d++) is[d] = 1 + below(g, 4);
        int idx = index_input(g, is, ind, V);
        if (idx < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 2;
        in->src[0] = w, in->src[1] = idx;
        return commit(g);
    }
    case TF_GATHER: {
        if (!nd) return -1;
        int ax = below(g, nd);
        int64_t is[TF_MAX_DIMS];
        for (int d = 0; d < nd; d++) is[d] = d == ax ? 1 + below(g, 4) : (t->shape[d] ? below(g, (int)t->shape[d] + 1) : 0);
        int idx = index_input(g, is, nd, t->shape[ax]);
        if (idx < 0) return -1;
        tf_inst *in = add(g, op);
        in->nsrc = 2;
        in->src[0] = a, in->src[1] = idx;
        in->ia = chance(g, 20) ? ax - nd : ax;
        return commit(g);
    }
    default: return -1;
    }
}

static int g_create(gen *g)
{
    int r = below(g, 4);
    tf_inst *in = add(g, r == 0 ? TF_ARANGE : r == 1 ? TF_EYE : TF_FULL);
    in->dt = rand_dt(g);
    if (in->op == TF_ARANGE) {
        in->niv = 3;
        in->iv[0] = below(g, 11) - 5;
        in->iv[1] = below(g, 21) - 5;
        in->iv[2] = (int64_t[]){1, 2, 3, -1, -2}[below(g, 5)];
    } else if (in->op == TF_EYE) {
        in->niv = 2;
        in->iv[0] = rand_size(g), in->iv[1] = rand_size(g);
    } else {
        in->niv = rand_shape(g, in->iv);
        in->fv = rand_scalar(g);
    }
    return commit(g);
}

void tf_generate(uint64_t seed, tf_prog *p, int max_ops)
{
    memset(p, 0, sizeof *p);
    gen g = {.s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull, .p = p};
    p->seed = seed;
    uint64_t fs = seed ^ 0x5bd1e995u; /* its own stream: the other graphs keep theirs */
    if (tf_below(&fs, 5) == 0) g.focus = narrow_dt[tf_below(&fs, (int)(sizeof narrow_dt / sizeof *narrow_dt))];
    int nops = 1 + below(&g, max_ops), made = 0;
    fresh(&g);
    for (int tries = 0; made < nops && tries < nops * 8; tries++) {
        int r = below(&g, 100), v;
        if (r < 22) v = g_unary(&g);
        else if (r < 48) v = g_binary(&g);
        else if (r < 53) v = g_where(&g);
        else if (r < 66) v = g_reduce(&g);
        else if (r < 88) v = g_move(&g);
        else if (r < 97) v = g_composite(&g);
        else v = g_create(&g);
        if (v >= 0 && p->ins[v].op != TF_IN && p->ins[v].op != TF_SCALAR) made++;
    }
    /* outputs: the last computed value and up to two others nothing reads */
    bool *used = calloc((size_t)p->n + 1, 1);
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->ins[i].nsrc; j++)
            if (p->ins[i].src[j] >= 0) used[p->ins[i].src[j]] = true;
    for (int i = p->n - 1; i >= 0 && p->nout < 3; i--) {
        int op = p->ins[i].op;
        if (op == TF_IN || op == TF_SCALAR || (p->nout && used[i])) continue;
        p->out[p->nout++] = i;
    }
    free(used);
    tf_ref_free(&g.ref);
}
