/* Creating tensors (constants, ranges, host data, counter-based random
 * numbers) and moving data in and out. */
#include "tensor/tt.h"

#include "compiler/interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ** creation */
static hcq_status check_new(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, const char *fn)
{
    if (!tt_live_ctx(ctx)) return base_err(HCQ_ESTATE, "%s: not a live context", fn);
    if (!tt_dtype_ok(ctx, dt, fn)) return hcq_error_status();
    return tt_check_shape(shape, ndim, fn);
}

hcq_tensor *hcq_empty(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    if (check_new(ctx, dt, shape, ndim, "hcq_empty")) return NULL;
    tt_buf *b = tt_buf_alloc(ctx, (uint64_t)tt_numel(shape, ndim) * hcq_dtype_size(dt));
    if (!b) return NULL;
    tt_node *n = tt_node_new(ctx, TT_BUF, dt, shape, ndim);
    if (!n) {
        tt_buf_unref(b);
        return NULL;
    }
    n->buf = b;
    return tt_wrap(ctx, n);
}

/* the messages name the call the user made */
static hcq_tensor *full(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, double value, const char *fn)
{
    if (check_new(ctx, dt, shape, ndim, fn)) return NULL;
    return tt_wrap(ctx, tt_const_node(ctx, dt, tt_val_from_double(dt, value), shape, ndim));
}

hcq_tensor *hcq_full(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, double value)
{
    return full(ctx, dt, shape, ndim, value, "hcq_full");
}

hcq_tensor *hcq_zeros(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    return full(ctx, dt, shape, ndim, 0, "hcq_zeros");
}

hcq_tensor *hcq_ones(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    return full(ctx, dt, shape, ndim, 1, "hcq_ones");
}

hcq_tensor *hcq_scalar(hcq_ctx *ctx, double value)
{
    if (!tt_live_ctx(ctx)) {
        base_err(HCQ_ESTATE, "hcq_scalar: not a live context");
        return NULL;
    }
    /* -0.0 is a float: x * -0.0 must keep its sign */
    bool integral = value == trunc(value) && fabs(value) <= 2147483647.0 && !(value == 0 && signbit(value));
    hcq_dtype dt = integral ? HCQ_I32 : HCQ_F32;
    /* the unrounded double: it rounds once, to the dtype it meets */
    tt_node *n = tt_const_node(ctx, dt, integral ? tt_val_from_double(dt, value) : (tt_val){.f = value}, NULL, 0);
    if (n) n->weak = true;
    return tt_wrap(ctx, n);
}

static tt_node *index_node(hcq_ctx *ctx, const int64_t *shape, int ndim, int axis)
{
    tt_node *n = tt_node_new(ctx, TT_INDEX, HCQ_I32, shape, ndim);
    if (n) n->axes = (uint32_t)axis;
    return n;
}

hcq_tensor *hcq_arange(hcq_ctx *ctx, hcq_dtype dt, double start, double stop, double step)
{
    const char *fn = "hcq_arange";
    if (!tt_live_ctx(ctx)) return base_err(HCQ_ESTATE, "%s: not a live context", fn), NULL;
    if (!tt_dtype_ok(ctx, dt, fn)) return NULL;
    if (step == 0 || step != step || start != start || stop != stop)
        return base_err(HCQ_EINVAL, "%s: step is %g (start %g, stop %g)", fn, step, start, stop), NULL;
    double cnt = ceil((stop - start) / step);
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    if (cnt > (double)TT_MAX_NUMEL) return base_err(HCQ_ELIMIT, "%s: %g elements", fn, cnt), NULL;
    tt_node *idx = index_node(ctx, &n, 1, 0);
    if (!idx) return NULL;
    /* in f32 (f64 for f64), i32 (i64 for 64-bit integers) */
    hcq_dtype cdt = hcq_dtype_is_float(dt) ? tt_calc_float(dt)
                  : dt == HCQ_I64 || dt == HCQ_U64 ? HCQ_I64 : HCQ_I32;
    tt_node *x = cdt == HCQ_I32 ? (tt_node_ref(idx), idx) : tt_cast_node(idx, cdt);
    tt_node_unref(idx);
    tt_node *k = tt_const_node(ctx, cdt, tt_val_from_double(cdt, step), NULL, 0);
    tt_node *c = tt_const_node(ctx, cdt, tt_val_from_double(cdt, start), NULL, 0);
    tt_node *kx = x && k ? tt_broadcast_to(k, &n, 1) : NULL, *cx = x && c ? tt_broadcast_to(c, &n, 1) : NULL;
    tt_node *m = kx ? tt_alu(ctx, TT_MUL, cdt, x, kx, NULL) : NULL;
    tt_node *r = m && cx ? tt_alu(ctx, TT_ADD, cdt, m, cx, NULL) : NULL;
    tt_node *out = r ? tt_cast_node(r, dt) : NULL;
    tt_node *tmp[] = {x, k, c, kx, cx, m, r};
    for (size_t i = 0; i < BASE_ARRAY_LEN(tmp); i++) tt_node_unref(tmp[i]);
    return tt_wrap(ctx, out);
}

hcq_tensor *hcq_eye(hcq_ctx *ctx, hcq_dtype dt, int64_t n, int64_t m)
{
    int64_t shape[2] = {n, m};
    if (check_new(ctx, dt, shape, 2, "hcq_eye")) return NULL;
    tt_node *r = index_node(ctx, shape, 2, 0), *c = index_node(ctx, shape, 2, 1);
    tt_node *ne = r && c ? tt_alu(ctx, TT_CMPNE, HCQ_BOOL, r, c, NULL) : NULL;
    tt_node *eq = ne ? tt_alu(ctx, TT_NOT, HCQ_BOOL, ne, NULL, NULL) : NULL;
    tt_node *out = eq ? tt_cast_node(eq, dt) : NULL;
    tt_node_unref(r);
    tt_node_unref(c);
    tt_node_unref(ne);
    tt_node_unref(eq);
    return tt_wrap(ctx, out);
}

hcq_tensor *hcq_from_data(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, const void *data)
{
    if (check_new(ctx, dt, shape, ndim, "hcq_from_data")) return NULL;
    uint64_t size = (uint64_t)tt_numel(shape, ndim) * hcq_dtype_size(dt);
    if (size && !data) return base_err(HCQ_EINVAL, "hcq_from_data: data is NULL"), NULL;
    hcq_tensor *t = hcq_empty(ctx, dt, shape, ndim);
    if (t && size && hcq_buffer_copyin(t->n->buf->hb, 0, data, size)) {
        hcq_status s = hcq_error_status();
        hcq_tensor_free(t);
        base_err_prefix(s, "hcq_from_data");
        return NULL;
    }
    return t;
}

/* ** random numbers: a bijective 32-bit mix of (key, element index) */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t tt_rand_seed(const hcq_ctx *ctx, uint64_t stream) { return mix64(ctx->seed * 0x9e3779b97f4a7c15ull + stream); }

static tt_node *rand_node(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    tt_node *n = tt_node_new(ctx, TT_RAND, dt, shape, ndim);
    if (n) {
        n->rstream = ++ctx->rand_stream;
        n->seed = tt_rand_seed(ctx, n->rstream);
    }
    return n;
}

hcq_tensor *hcq_rand(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    if (check_new(ctx, dt, shape, ndim, "hcq_rand")) return NULL;
    if (!hcq_dtype_is_float(dt)) return base_err(HCQ_EINVAL, "hcq_rand: dtype %s; rand makes floats", hcq_dtype_name(dt)), NULL;
    tt_node *u = rand_node(ctx, HCQ_F32, shape, ndim);
    tt_node *out = u ? tt_cast_node(u, dt) : NULL;
    tt_node_unref(u);
    return tt_wrap(ctx, out);
}

/* randn is built from exactly rounded f32 operations only (+, -, *, /,
 * sqrt, integer and bit operations, selects), never the devices' log and
 * cos: those are approximate on GPUs (MUFU, v_log_f32) and differ between
 * devices, while each exactly rounded operation gives the same bits
 * everywhere, so the header's "the same on every device" holds. The
 * polynomials below are accurate to a few ulp of f32, far below what a
 * normal sample's use can tell. */

/* ln(x) for x in (0, 1], finite and normal (1 - u for a uniform u, which
 * is at least 2^-24): x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln(m) =
 * 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, whose series to s^9
 * leaves under 2e-9 relative; e ln 2 with ln 2 split so e * hi is exact. */
static hcq_tensor *exact_log(hcq_ctx *ctx, hcq_tensor *x)
{
    hcq_tensor *bits = hcq_bitcast(x, HCQ_I32);
    hcq_tensor *e = hcq_sub_s(hcq_idiv(bits, hcq_scalar(ctx, 8388608.0)), 127.0);
    hcq_tensor *mb = hcq_logical_or(hcq_logical_and(bits, hcq_scalar(ctx, 0x7fffff)), hcq_scalar(ctx, 0x3f800000));
    hcq_tensor *m = hcq_bitcast(mb, HCQ_F32);
    hcq_tensor *big = hcq_gt(m, hcq_scalar(ctx, 1.41421353816986083984375)); /* f32(sqrt 2) */
    m = hcq_where(big, hcq_mul_s(m, 0.5), m);
    hcq_tensor *ef = hcq_cast(hcq_add(e, hcq_cast(big, HCQ_I32)), HCQ_F32);
    hcq_tensor *sv = hcq_div(hcq_sub_s(m, 1.0), hcq_add_s(m, 1.0));
    hcq_tensor *z = hcq_mul(sv, sv);
    /* 1 + z/3 + z^2/5 + z^3/7 + z^4/9, Horner */
    hcq_tensor *p = hcq_add_s(hcq_mul_s(z, 1.0 / 9.0), 1.0 / 7.0);
    p = hcq_add_s(hcq_mul(p, z), 1.0 / 5.0);
    p = hcq_add_s(hcq_mul(p, z), 1.0 / 3.0);
    p = hcq_add_s(hcq_mul(p, z), 1.0);
    hcq_tensor *lnm = hcq_mul(hcq_mul_s(sv, 2.0), p);
    /* ln 2 = 45426 / 2^16 (16 significant bits: e * hi is exact for
     * |e| < 2^8) + 1.4286068202862268e-06 */
    return hcq_add(hcq_mul_s(ef, 0.693145751953125), hcq_add(hcq_mul_s(ef, 1.4286068202862268e-06), lnm));
}

/* cos(2 pi u) for u in [0, 1): t = 4u and its quadrant q are exact, f = t -
 * q in [0, 1) is exact; with g = min(f, 1 - f) <= 1/2 the angle pi/2 g is
 * at most pi/4, where the Taylor series of sin to x^9 and cos to x^10
 * leave under 2e-9; the quadrant and the swap pick sin or cos and the
 * sign. */
static hcq_tensor *exact_cos_2pi(hcq_ctx *ctx, hcq_tensor *u)
{
    hcq_tensor *t = hcq_mul_s(u, 4.0);
    hcq_tensor *q = hcq_trunc(t);
    hcq_tensor *f = hcq_sub(t, q);
    hcq_tensor *swap = hcq_gt(f, hcq_scalar(ctx, 0.5));
    hcq_tensor *g = hcq_where(swap, hcq_sub(hcq_scalar(ctx, 1.0), f), f);
    hcq_tensor *a = hcq_mul_s(g, 1.57079632679489661923);
    hcq_tensor *a2 = hcq_mul(a, a);
    /* sin a = a (1 - a2/3! + a2^2/5! - a2^3/7! + a2^4/9!) */
    hcq_tensor *sp = hcq_add_s(hcq_mul_s(a2, 1.0 / 362880.0), -1.0 / 5040.0);
    sp = hcq_add_s(hcq_mul(sp, a2), 1.0 / 120.0);
    sp = hcq_add_s(hcq_mul(sp, a2), -1.0 / 6.0);
    sp = hcq_add_s(hcq_mul(sp, a2), 1.0);
    hcq_tensor *sn = hcq_mul(a, sp);
    /* cos a = 1 - a2/2! + a2^2/4! - a2^3/6! + a2^4/8! - a2^5/10! */
    hcq_tensor *cp = hcq_add_s(hcq_mul_s(a2, -1.0 / 3628800.0), 1.0 / 40320.0);
    cp = hcq_add_s(hcq_mul(cp, a2), -1.0 / 720.0);
    cp = hcq_add_s(hcq_mul(cp, a2), 1.0 / 24.0);
    cp = hcq_add_s(hcq_mul(cp, a2), -0.5);
    hcq_tensor *cs = hcq_add_s(hcq_mul(cp, a2), 1.0);
    /* cos(q pi/2 + pi/2 f): q 0 -> cos, 1 -> -sin, 2 -> -cos, 3 -> sin (of
     * pi/2 f); with the swap, cos(pi/2 f) = sin(pi/2 g) and back */
    hcq_tensor *qi = hcq_cast(q, HCQ_I32);
    hcq_tensor *odd = hcq_ne(hcq_logical_and(qi, hcq_scalar(ctx, 1)), hcq_scalar(ctx, 0));
    hcq_tensor *use_sin = hcq_logical_xor(odd, swap); /* sin(pi/2 f) when odd, unless swapped */
    hcq_tensor *mag = hcq_where(use_sin, sn, cs);
    hcq_tensor *neg = hcq_logical_or(hcq_eq(qi, hcq_scalar(ctx, 1)), hcq_eq(qi, hcq_scalar(ctx, 2)));
    return hcq_where(neg, hcq_neg(mag), mag);
}

hcq_tensor *hcq_randn(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim)
{
    if (check_new(ctx, dt, shape, ndim, "hcq_randn")) return NULL;
    if (!hcq_dtype_is_float(dt)) return base_err(HCQ_EINVAL, "hcq_randn: dtype %s; randn makes floats", hcq_dtype_name(dt)), NULL;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *u1 = tt_wrap(ctx, rand_node(ctx, HCQ_F32, shape, ndim));
    hcq_tensor *u2 = tt_wrap(ctx, rand_node(ctx, HCQ_F32, shape, ndim));
    /* Box-Muller: sqrt(-2 ln(1 - u1)) * cos(2 pi u2); 1 - u1 is in (0, 1],
     * so the log is finite */
    hcq_tensor *r = hcq_sqrt(hcq_mul_s(exact_log(ctx, hcq_sub(hcq_scalar(ctx, 1.0), u1)), -2.0));
    hcq_tensor *z = hcq_mul(r, exact_cos_2pi(ctx, u2));
    hcq_tensor *out = hcq_cast(z, dt);
    tt_node *n = out ? out->n : NULL;
    tt_node_ref(n);
    hcq_ctx_release(ctx, m);
    return tt_wrap(ctx, n);
}

hcq_tensor *hcq_randint(hcq_ctx *ctx, const int64_t *shape, int ndim, int64_t low, int64_t high)
{
    if (check_new(ctx, HCQ_I32, shape, ndim, "hcq_randint")) return NULL;
    if (low >= high || low < INT32_MIN || high - 1 > INT32_MAX)
        return base_err(HCQ_EINVAL, "hcq_randint: [%lld, %lld) is not a non-empty i32 range", (long long)low, (long long)high),
               NULL;
    tt_node *bits = rand_node(ctx, HCQ_U32, shape, ndim);
    tt_val span = {.i = (int64_t)(uint32_t)(high - low)}, lo = {.i = low};
    tt_node *sp = bits ? tt_const_node(ctx, HCQ_U32, span, shape, ndim) : NULL;
    /* span == 2^32 only when the range is all of i32: then modulo is not needed */
    tt_node *m = sp ? (high - low == 4294967296ll ? (tt_node_ref(bits), bits) : tt_alu(ctx, TT_MOD, HCQ_U32, bits, sp, NULL))
                    : NULL;
    tt_node *c = m ? tt_cast_node(m, HCQ_I32) : NULL;
    tt_node *l = c ? tt_const_node(ctx, HCQ_I32, lo, shape, ndim) : NULL;
    tt_node *out = l ? tt_alu(ctx, TT_ADD, HCQ_I32, c, l, NULL) : NULL;
    tt_node *tmp[] = {bits, sp, m, c, l};
    for (size_t i = 0; i < BASE_ARRAY_LEN(tmp); i++) tt_node_unref(tmp[i]);
    return tt_wrap(ctx, out);
}

/* ** data */
hcq_status hcq_realize(hcq_tensor *t) { return hcq_realize_all(&t, 1); }

hcq_status hcq_realize_all(hcq_tensor *const *ts, int n)
{
    if (n < 0 || (n && !ts)) return base_err(HCQ_EINVAL, "hcq_realize_all: %d tensors at %p", n, (const void *)ts);
    if (!n) return HCQ_OK;
    tt_node *small[16], **nodes = n <= 16 ? small : base_calloc((size_t)n, sizeof *nodes);
    if (!nodes) return HCQ_ENOMEM;
    hcq_status s = HCQ_OK;
    for (int i = 0; i < n && !s; i++) {
        nodes[i] = tt_arg(ts[i], "hcq_realize");
        if (!nodes[i]) s = hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
        else if (ts[i]->ctx != ts[0]->ctx) s = base_err(HCQ_EINVAL, "hcq_realize_all: tensors from different contexts");
    }
    if (!s) s = tt_realize_nodes(ts[0]->ctx, nodes, (uint32_t)n);
    if (nodes != small) free(nodes);
    return s;
}

/* The buffer and byte offset holding a node's elements row-major, if any. */
static bool contiguous_storage(const tt_node *n, tt_buf **buf, uint64_t *off_B)
{
    size_t es = hcq_dtype_size((hcq_dtype)n->dtype);
    if (n->op == TT_BUF) {
        *buf = n->buf;
        *off_B = 0;
        return true;
    }
    if (n->op != TT_VIEW || n->src[0]->op != TT_BUF || n->view.mask) return false;
    int64_t st = 1;
    for (int d = n->ndim - 1; d >= 0; d--) {
        if (n->shape[d] != 1 && n->view.strides[d] != st) return false;
        st *= n->shape[d];
    }
    *buf = n->src[0]->buf;
    *off_B = (uint64_t)n->view.offset * es;
    return true;
}

/* Realizes t so its elements sit row-major in a buffer. */
static hcq_status storage_of(hcq_tensor *t, tt_buf **buf, uint64_t *off_B, const char *fn)
{
    tt_node *n = tt_arg(t, fn);
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    hcq_status s = tt_realize_nodes(t->ctx, &n, 1);
    if (!s && !contiguous_storage(n, buf, off_B)) s = tt_realize_contiguous(t->ctx, n);
    if (!s && !contiguous_storage(n, buf, off_B)) s = base_err(HCQ_ESTATE, "%s: no contiguous storage after realizing", fn);
    return s;
}

/* the element bytes of a constant (its value is exact in its dtype) */
static void const_bytes(hcq_dtype dt, tt_val v, unsigned char out[8])
{
    ir_lane_to_mem(dt, tt_val_lane(v, dt), out);
}

hcq_status hcq_tensor_read(hcq_tensor *t, void *dst, size_t size_B)
{
    tt_node *n = tt_arg(t, "hcq_tensor_read");
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    uint64_t want = (uint64_t)tt_numel(n->shape, n->ndim) * hcq_dtype_size((hcq_dtype)n->dtype);
    if (size_B != want)
        return base_err(HCQ_EINVAL, "hcq_tensor_read: %zu bytes given; the tensor has %llu", size_B, (unsigned long long)want);
    if (want && !dst) return base_err(HCQ_EINVAL, "hcq_tensor_read: dst is NULL");
    if (!want) return HCQ_OK;
    if (n->op == TT_CONST) { /* a constant is read without a kernel */
        unsigned char e[8];
        size_t es = hcq_dtype_size((hcq_dtype)n->dtype);
        const_bytes((hcq_dtype)n->dtype, n->cv, e);
        for (uint64_t i = 0; i < want; i += es) memcpy((unsigned char *)dst + i, e, es);
        return HCQ_OK;
    }
    tt_buf *b;
    uint64_t off;
    hcq_status s = storage_of(t, &b, &off, "hcq_tensor_read");
    if (!s) s = hcq_buffer_copyout(dst, b->hb, off, want);
    return s;
}

hcq_status hcq_tensor_item(hcq_tensor *t, double *out)
{
    tt_node *n = tt_arg(t, "hcq_tensor_item");
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (tt_numel(n->shape, n->ndim) != 1)
        return base_err(HCQ_EINVAL, "hcq_tensor_item: the tensor has %lld elements, not 1",
                        (long long)tt_numel(n->shape, n->ndim));
    if (!out) return base_err(HCQ_EINVAL, "hcq_tensor_item: out is NULL");
    unsigned char raw[8] = {0};
    hcq_dtype dt = (hcq_dtype)n->dtype;
    hcq_status s = hcq_tensor_read(t, raw, hcq_dtype_size(dt));
    if (s) return s;
    /* exact for every dtype but 64-bit integers beyond 2^53 (rounded to nearest) */
    tt_val v = tt_val_of_lane(ir_lane_from_mem(dt, raw), dt);
    *out = tt_val_to_double(v, dt);
    return HCQ_OK;
}

hcq_status hcq_tensor_write(hcq_tensor *t, const void *src, size_t size_B)
{
    tt_node *n = tt_arg(t, "hcq_tensor_write");
    if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    if (n->op != TT_BUF)
        return base_err(HCQ_EINVAL, "hcq_tensor_write: the tensor is %s, not a buffer (hcq_from_data, hcq_empty)",
                        n->op == TT_VIEW ? "a view" : "computed");
    uint64_t want = (uint64_t)tt_numel(n->shape, n->ndim) * hcq_dtype_size((hcq_dtype)n->dtype);
    if (size_B != want)
        return base_err(HCQ_EINVAL, "hcq_tensor_write: %zu bytes given; the tensor has %llu", size_B, (unsigned long long)want);
    if (!want) return HCQ_OK;
    if (!src) return base_err(HCQ_EINVAL, "hcq_tensor_write: src is NULL");
    tt_buf_written(n->buf);
    return hcq_buffer_copyin(n->buf->hb, 0, src, want);
}

hcq_buffer *hcq_tensor_buffer(hcq_tensor *t)
{
    tt_node *n = tt_arg(t, "hcq_tensor_buffer");
    if (!n) return NULL;
    if (n->op != TT_BUF)
        return base_err(HCQ_EINVAL, "hcq_tensor_buffer: the tensor is %s, not a buffer (hcq_from_data, hcq_empty)",
                        n->op == TT_VIEW ? "a view" : "computed"),
               NULL;
    if (!n->buf || !n->buf->hb) return base_err(HCQ_EINVAL, "hcq_tensor_buffer: the tensor is empty (0 elements)"), NULL;
    tt_buf_written(n->buf); /* the caller writes it: drop the copies made from it */
    return n->buf->hb;
}

hcq_tensor *hcq_tensor_to(hcq_ctx *dst, hcq_tensor *t)
{
    tt_node *n = tt_arg(t, "hcq_tensor_to");
    if (!n) return NULL;
    if (!tt_live_ctx(dst)) return base_err(HCQ_ESTATE, "hcq_tensor_to: not a live context"), NULL;
    hcq_dtype dt = (hcq_dtype)n->dtype;
    if (!tt_dtype_ok(dst, dt, "hcq_tensor_to")) return NULL;
    /* inside a JIT capture the copy is a node of its graph, so both
     * contexts must be the JIT's (hcq_jit_create_multi) */
    tt_capture *cap = t->ctx->capture;
    if (cap != dst->capture)
        return base_err(HCQ_ENOTSUP,
                        "hcq_tensor_to: context %s is %scapturing a JIT and context %s is %s: a JIT captures a copy "
                        "between contexts only when it was created over both (hcq_jit_create_multi)",
                        t->ctx->props.id, cap ? "" : "not ", dst->props.id,
                        dst->capture ? "capturing another" : "not capturing"),
               NULL;
    int64_t shape[TT_MAX_DIMS];
    int nd = n->ndim;
    memcpy(shape, n->shape, sizeof shape);
    uint64_t size = (uint64_t)tt_numel(shape, nd) * hcq_dtype_size(dt);
    tt_buf *b = NULL;
    uint64_t off = 0;
    if (size && storage_of(t, &b, &off, "hcq_tensor_to")) return NULL;
    hcq_tensor *out = hcq_empty(dst, dt, shape, nd);
    if (out && size && (cap ? tt_capture_copy(cap, out->n->buf, b, off, size) : hcq_buffer_copy(out->n->buf->hb, 0, b->hb, off, size))) {
        hcq_status s = hcq_error_status();
        hcq_tensor_free(out);
        base_err_prefix(s, "hcq_tensor_to");
        return NULL;
    }
    return out;
}
