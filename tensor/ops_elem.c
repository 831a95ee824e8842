/* Elementwise operations: dtype promotion, broadcasting, and the
 * composite functions (exp, sigmoid, gelu, pow, ...) built from the
 * primitive node ops the lowering knows. */
#include "tensor/tt.h"

#include <math.h>
#include <string.h>

/* ** node-level helpers */
/* operands of one shape: the result's variable dims are theirs */
static void alu_sym(tt_node *n, tt_node *const *s)
{
    for (int i = 0; i < 3 && s[i]; i++)
        if (s[i]->ndim == n->ndim)
            for (int d = 0; d < n->ndim; d++)
                if (s[i]->sym[d]) n->sym[d] = s[i]->sym[d];
}

tt_node *tt_alu(hcq_ctx *ctx, tt_op op, hcq_dtype dt, tt_node *a, tt_node *b, tt_node *c)
{
    tt_node *s[3] = {a, b, c};
    tt_node *f = tt_fold_alu(op, dt, a, b, c);
    if (f) {
        if (f->op == TT_CONST) alu_sym(f, s); /* a folded constant of the operands' shape */
        return f;
    }
    tt_node *n = tt_node_new(ctx, op, dt, a->shape, a->ndim);
    if (!n) return NULL;
    for (int i = 0; i < 3 && s[i]; i++) {
        tt_node_ref(s[i]);
        n->src[n->nsrc++] = s[i];
    }
    alu_sym(n, s);
    return n;
}

tt_node *tt_cast_node(tt_node *a, hcq_dtype dt)
{
    if (a->dtype == dt) {
        tt_node_ref(a);
        return a;
    }
    if (a->op == TT_CONST) { /* fold: a cast constant is a constant */
        tt_node *c = tt_const_node(NULL, dt, tt_val_cast(a->cv, (hcq_dtype)a->dtype, dt), a->shape, a->ndim);
        if (c) memcpy(c->sym, a->sym, sizeof c->sym);
        return c;
    }
    tt_node *n = tt_alu(NULL, TT_CAST, dt, a, NULL, NULL);
    return n;
}

tt_node *tt_flip_order(tt_node *a)
{
    hcq_dtype dt = (hcq_dtype)a->dtype;
    return tt_alu(NULL, hcq_dtype_is_float(dt) ? TT_NEG : TT_NOT, dt, a, NULL, NULL);
}

static int kind(hcq_dtype t) { return t == HCQ_BOOL ? 0 : hcq_dtype_is_float(t) ? 2 : 1; }

static unsigned bits_of(hcq_dtype t) { return (unsigned)hcq_dtype_size(t) * 8; }

static hcq_dtype int_of(unsigned bits, bool sgn)
{
    switch (bits) {
    case 8: return sgn ? HCQ_I8 : HCQ_U8;
    case 16: return sgn ? HCQ_I16 : HCQ_U16;
    case 32: return sgn ? HCQ_I32 : HCQ_U32;
    default: return sgn ? HCQ_I64 : HCQ_U64;
    }
}

hcq_dtype tt_float_of(hcq_dtype dt)
{
    if (hcq_dtype_is_float(dt)) return dt;
    return dt == HCQ_I64 || dt == HCQ_U64 ? HCQ_F64 : HCQ_F32;
}

hcq_dtype tt_calc_float(hcq_dtype dt) { return tt_float_of(dt) == HCQ_F64 ? HCQ_F64 : HCQ_F32; }

hcq_dtype tt_sum_dtype(hcq_dtype dt)
{
    switch (dt) {
    case HCQ_BOOL:
    case HCQ_I8:
    case HCQ_I16: return HCQ_I32;
    case HCQ_U8:
    case HCQ_U16: return HCQ_U32;
    default: return dt;
    }
}

/* tensor.h's lattice: bool below every dtype; integers of one signedness
 * take the wider; a signed and an unsigned one the narrowest signed dtype
 * holding both (u8 with i8 is i16, u32 with i32 is i64, u64 with any
 * signed one f64, as in NumPy); an integer with a float the float; floats
 * the wider (f16 with bf16 f32). */
static hcq_dtype join(hcq_dtype x, hcq_dtype y)
{
    if (x == y) return x;
    if (kind(x) == 0) return y;
    if (kind(y) == 0) return x;
    if (kind(x) == 2 && kind(y) == 2) {
        if (x == HCQ_F64 || y == HCQ_F64) return HCQ_F64;
        return HCQ_F32; /* f32 with a half, or f16 with bf16 */
    }
    if (kind(x) == 2) return x;
    if (kind(y) == 2) return y;
    bool sx = hcq_dtype_is_signed(x), sy = hcq_dtype_is_signed(y);
    unsigned bx = bits_of(x), by = bits_of(y);
    if (sx == sy) return bx >= by ? x : y;
    unsigned bs = sx ? bx : by, bu = sx ? by : bx; /* the signed one's width, the unsigned one's */
    if (bs > bu) return int_of(bs, true);
    return bu == 64 ? HCQ_F64 : int_of(bu * 2, true);
}

/* whether the weak scalar w holds an integer that integer dtype t holds
 * (hcq_scalar makes one beyond i32 an f32 scalar holding the double, so
 * its value decides, not its dtype; -0.0 is not an integer here) */
static bool weak_fits(const tt_node *w, hcq_dtype t)
{
    if (w->op != TT_CONST) return kind((hcq_dtype)w->dtype) != 2;
    double lo = hcq_dtype_is_signed(t) ? -ldexp(1.0, (int)bits_of(t) - 1) : 0.0;
    double hi = ldexp(1.0, (int)bits_of(t) - (hcq_dtype_is_signed(t) ? 1 : 0));
    if (kind((hcq_dtype)w->dtype) != 2) return (double)w->cv.i >= lo && (double)w->cv.i < hi;
    double v = w->cv.f;
    return v == trunc(v) && v >= lo && v < hi && !(v == 0 && signbit(v));
}

/* A weak scalar yields to the tensor's dtype: a float tensor's dtype; with
 * an integer (bool: i32) tensor, that integer dtype when the scalar is an
 * integer it holds, else the float of that dtype (f32; f64 for i64 and
 * u64): u8 + 300 is 300 more in f32, never a wrapped sum, and i64 + 3e12
 * stays i64 */
static hcq_dtype weak_with(const tt_node *w, hcq_dtype t)
{
    if (kind(t) == 2) return t;
    hcq_dtype it = kind(t) == 0 ? HCQ_I32 : t;
    return weak_fits(w, it) ? it : tt_float_of(it);
}

hcq_dtype tt_promote(const tt_node *a, const tt_node *b)
{
    if (a->weak && !b->weak) return weak_with(a, (hcq_dtype)b->dtype);
    if (b->weak && !a->weak) return weak_with(b, (hcq_dtype)a->dtype);
    return join((hcq_dtype)a->dtype, (hcq_dtype)b->dtype);
}

static bool bshape(const tt_node *a, const tt_node *b, int64_t *out, int *nd, const char *fn)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char da[TT_DESC_MAX], db[TT_DESC_MAX];
            base_err(HCQ_EINVAL, "%s: %s and %s do not broadcast: dim %d from the end is %lld in one and %lld in the "
                     "other (each pair of dims must be equal, or one of them 1)", fn, tt_desc(a, da, sizeof da),
                     tt_desc(b, db, sizeof db), n - i, (long long)sa, (long long)sb);
            return false;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nd = n;
    return true;
}

tt_node *tt_broadcast_to(tt_node *a, const int64_t *shape, int ndim)
{
    int64_t s1[TT_MAX_DIMS];
    int pre = ndim - a->ndim;
    for (int d = 0; d < ndim; d++) s1[d] = d < pre ? 1 : a->shape[d - pre];
    tt_node *r = pre ? tt_mv_reshape(a, s1, ndim) : (tt_node_ref(a), a);
    if (!r) return NULL;
    if (!memcmp(s1, shape, ndim * sizeof *shape)) return r;
    tt_node *e = tt_mv_expand(r, shape, ndim);
    tt_node_unref(r);
    return e;
}

/* Promotes (or takes `dt` if not VOID), broadcasts and casts the operands;
 * out[i] are new references. */
static bool prepare(hcq_ctx *ctx, tt_node **in, int n, hcq_dtype dt, tt_node **out, const char *fn)
{
    (void)ctx;
    int64_t shape[TT_MAX_DIMS];
    int nd = in[0]->ndim;
    memcpy(shape, in[0]->shape, sizeof shape);
    tt_node tmp;
    for (int i = 1; i < n; i++) {
        memset(&tmp, 0, sizeof tmp);
        tmp.ndim = (uint8_t)nd;
        tmp.dtype = in[i - 1]->dtype; /* for the message: the shape so far, in the dtype of the operand before */
        memcpy(tmp.shape, shape, sizeof shape);
        if (!bshape(&tmp, in[i], shape, &nd, fn)) return false;
    }
    uint8_t sym[TT_MAX_DIMS] = {0};
    bool marked = false;
    for (int i = 0; i < n; i++) marked = marked || tt_has_sym(in[i]);
    if (marked && tt_sym_join(in, n, shape, nd, sym, fn)) return false;
    tt_node *adopt[3] = {0}; /* size-free operands marked as the result (symdim.c) */
    if (marked && tt_sym_adopt(in, n, shape, nd, sym, adopt)) return false;
    for (int i = 0; i < n; i++) out[i] = NULL;
    for (int i = 0; i < n; i++) {
        tt_node *a = adopt[i] ? adopt[i] : in[i];
        tt_node *c = dt == HCQ_VOID ? (tt_node_ref(a), a) : tt_cast_node(a, dt);
        out[i] = c ? tt_broadcast_to(c, shape, nd) : NULL;
        tt_node_unref(c);
        if (!out[i]) {
            for (int j = 0; j < i; j++) tt_node_unref(out[j]);
            for (int j = 0; j < n; j++) tt_node_unref(adopt[j]);
            return false;
        }
        /* a broadcast (or a constant) takes the variable dims it meets */
        if (marked && (out[i]->op == TT_CONST || out[i] != in[i])) memcpy(out[i]->sym, sym, sizeof sym);
    }
    for (int j = 0; j < n; j++) tt_node_unref(adopt[j]);
    return true;
}

/* ** handle-level plumbing */
static hcq_tensor *mk(hcq_ctx *ctx, tt_op op, hcq_dtype dt, tt_node *a, tt_node *b, tt_node *c)
{
    return tt_wrap(ctx, tt_alu(ctx, op, dt, a, b, c));
}

typedef enum { P_ANY, P_FLOAT, P_INT, P_LOGIC, P_CMP } prule;

/* dtype of a binary op's computation (not its result for comparisons) */
static hcq_dtype op_dtype(const tt_node *a, const tt_node *b, prule r, const char *fn)
{
    hcq_dtype t = tt_promote(a, b);
    switch (r) {
    case P_ANY: return t == HCQ_BOOL ? HCQ_I32 : t;
    case P_FLOAT: return tt_float_of(t);
    case P_INT:
    case P_LOGIC:
        if (kind(t) == 2)
            return base_err(HCQ_EINVAL, "%s: takes integer or bool operands; a is %s and b is %s, which promote to %s",
                            fn, hcq_dtype_name((hcq_dtype)a->dtype), hcq_dtype_name((hcq_dtype)b->dtype),
                            hcq_dtype_name(t)),
                   HCQ_VOID;
        return r == P_INT && t == HCQ_BOOL ? HCQ_I32 : t;
    case P_CMP: return t;
    }
    return t;
}

static hcq_tensor *binary(hcq_tensor *ta, hcq_tensor *tb, tt_op op, prule r, const char *fn)
{
    tt_node *a = tt_arg(ta, fn), *b = a ? tt_arg(tb, fn) : NULL;
    if (!a || !b) return NULL;
    if (ta->ctx != tb->ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
    hcq_dtype dt = op_dtype(a, b, r, fn);
    if (dt == HCQ_VOID) return NULL;
    /* bool operands compare as i32 (CMPLT is not defined on bool) */
    if (op == TT_CMPLT && dt == HCQ_BOOL) dt = HCQ_I32;
    tt_node *in[2] = {a, b}, *o[2];
    if (!prepare(ta->ctx, in, 2, dt, o, fn)) return NULL;
    hcq_dtype res = (op == TT_CMPLT || op == TT_CMPNE) ? HCQ_BOOL : dt;
    if (op == TT_MAX && dt == HCQ_BOOL) op = TT_OR;
    hcq_tensor *t = mk(ta->ctx, op, res, o[0], o[1], NULL);
    tt_node_unref(o[0]);
    tt_node_unref(o[1]);
    return t;
}

static hcq_tensor *unary_node(hcq_tensor *ta, tt_op op, hcq_dtype dt, const char *fn)
{
    tt_node *a = tt_arg(ta, fn);
    if (!a) return NULL;
    tt_node *c = tt_cast_node(a, dt);
    hcq_tensor *t = c ? mk(ta->ctx, op, dt, c, NULL, NULL) : NULL;
    tt_node_unref(c);
    return t;
}

#define CTX_OF(t, fn) hcq_ctx *ctx = tt_arg((t), (fn)) ? (t)->ctx : NULL; if (!ctx) return NULL

static hcq_dtype float_dt(hcq_tensor *t) { return tt_float_of((hcq_dtype)t->n->dtype); }

/* Whether the device's target compiles f64 exp2, log2 and sin (some do
 * not: AMD targets built without ROCm's device library). Asked of the
 * compiler once per context, with a kernel of the three, so a float
 * function of f64 is refused when it is called, naming the call, rather
 * than when a kernel holding it is compiled. */
static bool f64_math_ok(hcq_ctx *ctx, const char *fn)
{
    if (!ctx->f64_math) {
        hcq_kernel *k = hcq_kernel_create("f64_math_probe");
        if (!k) return base_err(HCQ_ENOMEM, "%s: no memory for a kernel", fn), false; /* asked again next time */
        hcq_ir_ref p = hcq_ir_param_buffer(k, HCQ_F64), i = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
        hcq_ir_ref x = hcq_ir_load(k, p, i);
        hcq_ir_ref y = hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_unary(k, HCQ_OP_EXP2, x), hcq_ir_unary(k, HCQ_OP_LOG2, x));
        hcq_ir_store(k, p, i, hcq_ir_binary(k, HCQ_OP_ADD, y, hcq_ir_unary(k, HCQ_OP_SIN, x)));
        hcq_binary *bin = NULL;
        hcq_status s = hcq_compile(k, ctx->props.target, &bin);
        hcq_binary_free(bin);
        hcq_kernel_destroy(k);
        if (s && s != HCQ_ENOTSUP) /* a failed compile (no toolchain, a timeout) is not an answer: asked again */
            return base_err_prefix(s, "%s: compiling a probe of f64 exp2, log2 and sin for %s", fn, ctx->props.id), false;
        ctx->f64_math = s == HCQ_OK ? 1 : -1;
        if (s) snprintf(ctx->f64_math_why, sizeof ctx->f64_math_why, "%s", hcq_error_message());
    }
    if (ctx->f64_math > 0) return true;
    base_err(HCQ_ENOTSUP, "%s: f64 exp2, log2 and sin do not compile for %s (target %s): %s; cast to f32 first, or use "
             "another device", fn, ctx->props.id, ctx->props.target, ctx->f64_math_why);
    return false;
}

/* f16/bf16 transcendentals are computed in f32 and rounded once; f64
 * (and 64-bit integers) in f64, where the target has them */
typedef hcq_tensor *(*f32_body)(hcq_ctx *ctx, hcq_tensor *x);
static hcq_tensor *via_f32(hcq_tensor *a, f32_body f, const char *fn)
{
    CTX_OF(a, fn);
    hcq_dtype out = float_dt(a);
    if (out == HCQ_F64 && !f64_math_ok(ctx, fn)) return NULL;
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *r = hcq_cast(f(ctx, hcq_cast(a, tt_calc_float(out))), out);
    return tt_scope_end(ctx, m, fn, r);
}

/* ** unary */
hcq_tensor *hcq_neg(hcq_tensor *a)
{
    tt_node *n = tt_arg(a, "hcq_neg");
    if (!n) return NULL;
    hcq_dtype dt = n->dtype == HCQ_BOOL ? HCQ_I32 : (hcq_dtype)n->dtype;
    return unary_node(a, TT_NEG, dt, "hcq_neg");
}

static hcq_tensor *f_exp2(hcq_ctx *ctx, hcq_tensor *x) { (void)ctx; return unary_node(x, TT_EXP2, tt_calc_float((hcq_dtype)x->n->dtype), "hcq_exp2"); }
static hcq_tensor *f_log2(hcq_ctx *ctx, hcq_tensor *x) { (void)ctx; return unary_node(x, TT_LOG2, tt_calc_float((hcq_dtype)x->n->dtype), "hcq_log2"); }
static hcq_tensor *f_sin(hcq_ctx *ctx, hcq_tensor *x) { (void)ctx; return unary_node(x, TT_SIN, tt_calc_float((hcq_dtype)x->n->dtype), "hcq_sin"); }
static hcq_tensor *f_exp(hcq_ctx *ctx, hcq_tensor *x) { return f_exp2(ctx, hcq_mul_s(x, M_LOG2E)); }
static hcq_tensor *f_log(hcq_ctx *ctx, hcq_tensor *x) { return hcq_mul_s(f_log2(ctx, x), M_LN2); }
static hcq_tensor *f_cos(hcq_ctx *ctx, hcq_tensor *x) { return f_sin(ctx, hcq_add_s(x, M_PI_2)); }
static hcq_tensor *f_sigmoid(hcq_ctx *ctx, hcq_tensor *x)
{
    return hcq_recip(hcq_add_s(f_exp2(ctx, hcq_mul_s(x, -M_LOG2E)), 1.0));
}
static hcq_tensor *f_tanh(hcq_ctx *ctx, hcq_tensor *x) { return hcq_sub_s(hcq_mul_s(f_sigmoid(ctx, hcq_mul_s(x, 2.0)), 2.0), 1.0); }
static hcq_tensor *f_gelu(hcq_ctx *ctx, hcq_tensor *x)
{
    hcq_tensor *inner = hcq_mul_s(hcq_add(x, hcq_mul_s(hcq_mul(x, hcq_mul(x, x)), 0.044715)), sqrt(2.0 / M_PI));
    return hcq_mul(hcq_mul_s(x, 0.5), hcq_add_s(f_tanh(ctx, inner), 1.0));
}
static hcq_tensor *f_silu(hcq_ctx *ctx, hcq_tensor *x) { return hcq_mul(x, f_sigmoid(ctx, x)); }

hcq_tensor *hcq_exp(hcq_tensor *a) { return via_f32(a, f_exp, "hcq_exp"); }
hcq_tensor *hcq_log(hcq_tensor *a) { return via_f32(a, f_log, "hcq_log"); }
hcq_tensor *hcq_exp2(hcq_tensor *a) { return via_f32(a, f_exp2, "hcq_exp2"); }
hcq_tensor *hcq_log2(hcq_tensor *a) { return via_f32(a, f_log2, "hcq_log2"); }
hcq_tensor *hcq_sin(hcq_tensor *a) { return via_f32(a, f_sin, "hcq_sin"); }
hcq_tensor *hcq_cos(hcq_tensor *a) { return via_f32(a, f_cos, "hcq_cos"); }
hcq_tensor *hcq_sigmoid(hcq_tensor *a) { return via_f32(a, f_sigmoid, "hcq_sigmoid"); }
hcq_tensor *hcq_tanh(hcq_tensor *a) { return via_f32(a, f_tanh, "hcq_tanh"); }
hcq_tensor *hcq_gelu(hcq_tensor *a) { return via_f32(a, f_gelu, "hcq_gelu"); }
hcq_tensor *hcq_silu(hcq_tensor *a) { return via_f32(a, f_silu, "hcq_silu"); }

hcq_tensor *hcq_sqrt(hcq_tensor *a)
{
    tt_node *n = tt_arg(a, "hcq_sqrt");
    return n ? unary_node(a, TT_SQRT, float_dt(a), "hcq_sqrt") : NULL;
}

hcq_tensor *hcq_recip(hcq_tensor *a)
{
    tt_node *n = tt_arg(a, "hcq_recip");
    return n ? unary_node(a, TT_RECIP, float_dt(a), "hcq_recip") : NULL;
}

hcq_tensor *hcq_rsqrt(hcq_tensor *a)
{
    CTX_OF(a, "hcq_rsqrt");
    size_t m = hcq_ctx_mark(ctx);
    return tt_scope_end(ctx, m, "hcq_rsqrt", hcq_recip(hcq_sqrt(a)));
}

hcq_tensor *hcq_trunc(hcq_tensor *a)
{
    tt_node *n = tt_arg(a, "hcq_trunc");
    if (!n) return NULL;
    if (kind((hcq_dtype)n->dtype) != 2) return tt_wrap(a->ctx, (tt_node_ref(n), n));
    return unary_node(a, TT_TRUNC, (hcq_dtype)n->dtype, "hcq_trunc");
}

hcq_tensor *hcq_abs(hcq_tensor *a)
{
    CTX_OF(a, "hcq_abs");
    hcq_dtype dt = (hcq_dtype)a->n->dtype;
    if (dt == HCQ_BOOL) return tt_wrap(ctx, (tt_node_ref(a->n), a->n));
    size_t m = hcq_ctx_mark(ctx);
    /* floats: max(x, -x) makes abs(-0) = +0 and keeps NaN */
    hcq_tensor *r = kind(dt) == 2 ? hcq_maximum(a, hcq_neg(a)) : hcq_where(hcq_lt(a, hcq_scalar(ctx, 0)), hcq_neg(a), a);
    return tt_scope_end(ctx, m, "hcq_abs", r);
}

hcq_tensor *hcq_sign(hcq_tensor *a)
{
    CTX_OF(a, "hcq_sign");
    hcq_dtype dt = (hcq_dtype)a->n->dtype;
    if (dt == HCQ_BOOL) return tt_wrap(ctx, (tt_node_ref(a->n), a->n));
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *z = hcq_scalar(ctx, 0);
    hcq_tensor *s = hcq_sub(hcq_cast(hcq_gt(a, z), dt), hcq_cast(hcq_lt(a, z), dt));
    if (kind(dt) == 2) s = hcq_where(hcq_ne(a, a), a, s);
    return tt_scope_end(ctx, m, "hcq_sign", s);
}

hcq_tensor *hcq_relu(hcq_tensor *a)
{
    CTX_OF(a, "hcq_relu");
    size_t m = hcq_ctx_mark(ctx);
    hcq_tensor *z = hcq_scalar(ctx, 0);
    return tt_scope_end(ctx, m, "hcq_relu", hcq_where(hcq_lt(a, z), z, a));
}

hcq_tensor *hcq_logical_not(hcq_tensor *a)
{
    tt_node *n = tt_arg(a, "hcq_logical_not");
    if (!n) return NULL;
    return unary_node(a, TT_NOT, HCQ_BOOL, "hcq_logical_not"); /* the cast makes x != 0 first */
}

hcq_tensor *hcq_bitwise_not(hcq_tensor *a)
{
    const char *fn = "hcq_bitwise_not";
    tt_node *n = tt_arg(a, fn);
    if (!n) return NULL;
    hcq_dtype dt = (hcq_dtype)n->dtype;
    if (kind(dt) == 2) return base_err(HCQ_EINVAL, "%s: takes an integer or bool tensor, not %s", fn, hcq_dtype_name(dt)), NULL;
    return unary_node(a, TT_NOT, dt, fn);
}

hcq_tensor *hcq_cast(hcq_tensor *a, hcq_dtype dt)
{
    tt_node *n = tt_arg(a, "hcq_cast");
    if (!n || !tt_dtype_ok(a->ctx, dt, "hcq_cast")) return NULL;
    return tt_wrap(a->ctx, tt_cast_node(n, dt));
}

hcq_tensor *hcq_bitcast(hcq_tensor *a, hcq_dtype dt)
{
    tt_node *n = tt_arg(a, "hcq_bitcast");
    if (!n || !tt_dtype_ok(a->ctx, dt, "hcq_bitcast")) return NULL;
    if (dt == HCQ_BOOL || n->dtype == HCQ_BOOL || hcq_dtype_size(dt) != hcq_dtype_size((hcq_dtype)n->dtype))
        return base_err(HCQ_EINVAL, "hcq_bitcast: %s to %s; sizes must match and neither may be bool",
                        hcq_dtype_name((hcq_dtype)n->dtype), hcq_dtype_name(dt)),
               NULL;
    if (n->dtype == dt) return tt_wrap(a->ctx, (tt_node_ref(n), n));
    return mk(a->ctx, TT_BITCAST, dt, n, NULL, NULL);
}

/* ** binary */
hcq_tensor *hcq_add(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_ADD, P_ANY, "hcq_add"); }
hcq_tensor *hcq_sub(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_SUB, P_ANY, "hcq_sub"); }
hcq_tensor *hcq_mul(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_MUL, P_ANY, "hcq_mul"); }
hcq_tensor *hcq_div(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_FDIV, P_FLOAT, "hcq_div"); }
hcq_tensor *hcq_idiv(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_IDIV, P_INT, "hcq_idiv"); }
hcq_tensor *hcq_mod(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_MOD, P_INT, "hcq_mod"); }
hcq_tensor *hcq_maximum(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_MAX, P_CMP, "hcq_maximum"); }
hcq_tensor *hcq_lt(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_CMPLT, P_CMP, "hcq_lt"); }
hcq_tensor *hcq_gt(hcq_tensor *a, hcq_tensor *b) { return binary(b, a, TT_CMPLT, P_CMP, "hcq_gt"); }
hcq_tensor *hcq_ne(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_CMPNE, P_CMP, "hcq_ne"); }
hcq_tensor *hcq_logical_and(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_AND, P_LOGIC, "hcq_logical_and"); }
hcq_tensor *hcq_logical_or(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_OR, P_LOGIC, "hcq_logical_or"); }
hcq_tensor *hcq_logical_xor(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_XOR, P_LOGIC, "hcq_logical_xor"); }
hcq_tensor *hcq_shl(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_SHL, P_INT, "hcq_shl"); }
hcq_tensor *hcq_shr(hcq_tensor *a, hcq_tensor *b) { return binary(a, b, TT_SHR, P_INT, "hcq_shr"); }

hcq_tensor *hcq_minimum(hcq_tensor *ta, hcq_tensor *tb)
{
    const char *fn = "hcq_minimum";
    tt_node *a = tt_arg(ta, fn), *b = a ? tt_arg(tb, fn) : NULL;
    if (!b) return NULL;
    if (ta->ctx != tb->ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
    hcq_dtype dt = tt_promote(a, b);
    tt_node *in[2] = {a, b}, *o[2];
    if (!prepare(ta->ctx, in, 2, dt, o, fn)) return NULL;
    /* min(a, b) = flip(max(flip a, flip b)): flip is exact and reverses the
     * order (neg for floats, bitwise not for i32 and bool) */
    tt_node *fa = tt_flip_order(o[0]), *fb = tt_flip_order(o[1]);
    tt_node *mm = fa && fb ? tt_alu(ta->ctx, dt == HCQ_BOOL ? TT_OR : TT_MAX, dt, fa, fb, NULL) : NULL;
    tt_node *r = mm ? tt_flip_order(mm) : NULL;
    tt_node *tmp[] = {o[0], o[1], fa, fb, mm};
    for (size_t i = 0; i < BASE_ARRAY_LEN(tmp); i++) tt_node_unref(tmp[i]);
    return tt_wrap(ta->ctx, r);
}

hcq_tensor *hcq_eq(hcq_tensor *a, hcq_tensor *b)
{
    CTX_OF(a, "hcq_eq");
    size_t m = hcq_ctx_mark(ctx);
    return tt_scope_end(ctx, m, "hcq_eq", hcq_logical_not(hcq_ne(a, b)));
}

static hcq_tensor *le(hcq_tensor *a, hcq_tensor *b, const char *fn)
{
    CTX_OF(a, fn);
    size_t m = hcq_ctx_mark(ctx);
    return tt_scope_end(ctx, m, fn, hcq_logical_or(hcq_lt(a, b), hcq_eq(a, b)));
}

hcq_tensor *hcq_le(hcq_tensor *a, hcq_tensor *b) { return le(a, b, "hcq_le"); }
hcq_tensor *hcq_ge(hcq_tensor *a, hcq_tensor *b) { return le(b, a, "hcq_ge"); }

/* |x|^n for the integer n = |y| < 2^POW_BITS by repeated squaring: exact
 * where the result is representable (3^15, 10^7), within a few roundings
 * elsewhere, so integral powers do not go through exp2/log2's ulps. */
enum { POW_BITS = 5 };
static hcq_tensor *pow_int(hcq_ctx *ctx, hcq_tensor *ax, hcq_tensor *ay)
{
    hcq_tensor *n = hcq_cast(hcq_minimum_s(ay, (1 << POW_BITS) - 1), HCQ_I32);
    hcq_tensor *acc = hcq_full(ctx, hcq_tensor_dtype(ax), NULL, 0, 1.0), *base = ax;
    for (int bit = 0; bit < POW_BITS; bit++) {
        hcq_tensor *set = hcq_ne(hcq_logical_and(n, hcq_scalar(ctx, 1 << bit)), hcq_scalar(ctx, 0));
        acc = hcq_where(set, hcq_mul(acc, base), acc);
        if (bit + 1 < POW_BITS) base = hcq_mul(base, base);
    }
    return acc;
}

/* IEEE 754's pow (C's Annex F) in f32 (f64 for f64 and 64-bit integers): |x|^y, then the sign and the
 * special cases:
 *   - pow(x, +-0) = 1 and pow(+1, y) = 1 for every x and y, NaN included;
 *     pow(-1, +-inf) = 1;
 *   - a negative sign bit (-0 and -inf included) makes the result negative
 *     for an odd integer y; a finite x < 0 with a finite non-integral y is
 *     NaN; -0 and -inf with any other y give the result for +0 and +inf.
 * |x|^y is pow_int's for integral |y| < 32 (its reciprocal for y < 0,
 * unless |x|^|y| overflows: the reciprocal may then be a denormal), else
 * exp2(y * log2|x|), which also gets |x| = 0 and inf, y = +-inf and NaNs
 * right by itself. */
hcq_tensor *hcq_pow(hcq_tensor *a, hcq_tensor *b)
{
    CTX_OF(a, "hcq_pow");
    if (!tt_arg(b, "hcq_pow")) return NULL;
    size_t m = hcq_ctx_mark(ctx);
    hcq_dtype dt = op_dtype(a->n, b->n, P_FLOAT, "hcq_pow");
    hcq_dtype cdt = tt_calc_float(dt); /* f32, or f64 for f64 */
    hcq_tensor *x = hcq_cast(a, cdt), *y = hcq_cast(b, cdt);
    int64_t bs[TT_MAX_DIMS];
    int bnd;
    if (!x || !y || !bshape(x->n, y->n, bs, &bnd, "hcq_pow")) return tt_scope_end(ctx, m, "hcq_pow", NULL);
    if (y->n->op == TT_CONST && y->n->cv.f == 1.0) /* x^1 is x for every x (NaN, -0, inf too): no kernel */
        return tt_scope_end(ctx, m, "hcq_pow", hcq_expand(hcq_cast(a, dt), bs, bnd));
    x = hcq_expand(x, bs, bnd); /* broadcast first: the sources of pow's gradient rule, older than its result */
    y = hcq_expand(y, bs, bnd);
    hcq_tensor *ax = hcq_abs(x), *ay = hcq_abs(y), *inf = hcq_scalar(ctx, INFINITY), *zero = hcq_scalar(ctx, 0);
    hcq_tensor *yint = hcq_eq(hcq_trunc(y), y); /* true for +-inf, false for NaN */
    hcq_tensor *r = hcq_exp2(hcq_mul(y, hcq_log2(ax)));
    hcq_tensor *pi = pow_int(ctx, ax, ay), *yneg = hcq_lt(y, zero);
    hcq_tensor *small = hcq_logical_and(yint, hcq_lt(ay, hcq_scalar(ctx, 1 << POW_BITS)));
    small = hcq_logical_and(small, hcq_logical_not(hcq_logical_and(yneg, hcq_logical_and(hcq_eq(pi, inf), hcq_lt(ax, inf)))));
    r = hcq_where(small, hcq_where(yneg, hcq_recip(pi), pi), r);
    hcq_tensor *half = hcq_mul_s(y, 0.5);
    hcq_tensor *odd = hcq_logical_and(yint, hcq_ne(hcq_trunc(half), half));
    hcq_tensor *sign = hcq_lt(hcq_bitcast(x, cdt == HCQ_F64 ? HCQ_I64 : HCQ_I32), zero);
    hcq_tensor *out = hcq_where(hcq_logical_and(sign, odd), hcq_neg(r), r);
    hcq_tensor *finite_neg = hcq_logical_and(hcq_lt(x, zero), hcq_lt(ax, inf));
    out = hcq_where(hcq_logical_and(finite_neg, hcq_logical_not(yint)), hcq_scalar(ctx, NAN), out);
    hcq_tensor *one = hcq_logical_or(hcq_eq(y, zero), hcq_eq(x, hcq_scalar(ctx, 1)));
    one = hcq_logical_or(one, hcq_logical_and(hcq_eq(x, hcq_scalar(ctx, -1)), hcq_eq(ay, inf)));
    out = hcq_where(one, hcq_scalar(ctx, 1), out);
    hcq_tensor *res = hcq_cast(out, dt);
    /* the gradient of pow itself, not of the branches selected above */
    tt_ad_custom(res, TT_AD_POW, (hcq_tensor *[]){x, y}, 2);
    return tt_scope_end(ctx, m, "hcq_pow", res);
}

hcq_tensor *hcq_where(hcq_tensor *tc, hcq_tensor *ta, hcq_tensor *tb)
{
    const char *fn = "hcq_where";
    tt_node *c = tt_arg(tc, fn), *a = c ? tt_arg(ta, fn) : NULL, *b = a ? tt_arg(tb, fn) : NULL;
    if (!b) return NULL;
    if (tc->ctx != ta->ctx || ta->ctx != tb->ctx) return base_err(HCQ_EINVAL, "%s: tensors from different contexts", fn), NULL;
    hcq_dtype dt = tt_promote(a, b);
    tt_node *in[3] = {c, a, b}, *o[3];
    if (!prepare(tc->ctx, in, 3, HCQ_VOID, o, fn)) return NULL;
    tt_node *cb = tt_cast_node(o[0], HCQ_BOOL), *x = tt_cast_node(o[1], dt), *y = tt_cast_node(o[2], dt);
    hcq_tensor *t = cb && x && y ? mk(tc->ctx, TT_WHERE, dt, cb, x, y) : NULL;
    tt_node *tmp[] = {o[0], o[1], o[2], cb, x, y};
    for (size_t i = 0; i < BASE_ARRAY_LEN(tmp); i++) tt_node_unref(tmp[i]);
    return t;
}

/* ** with scalars */
typedef hcq_tensor *(*bin_fn)(hcq_tensor *, hcq_tensor *);
static hcq_tensor *with_scalar(hcq_tensor *a, double v, bin_fn f, const char *fn)
{
    CTX_OF(a, fn);
    size_t m = hcq_ctx_mark(ctx);
    return tt_scope_end(ctx, m, fn, f(a, hcq_scalar(ctx, v)));
}

hcq_tensor *hcq_add_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_add, "hcq_add_s"); }
hcq_tensor *hcq_sub_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_sub, "hcq_sub_s"); }
hcq_tensor *hcq_mul_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_mul, "hcq_mul_s"); }
hcq_tensor *hcq_div_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_div, "hcq_div_s"); }
hcq_tensor *hcq_pow_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_pow, "hcq_pow_s"); }
hcq_tensor *hcq_maximum_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_maximum, "hcq_maximum_s"); }
hcq_tensor *hcq_minimum_s(hcq_tensor *a, double b) { return with_scalar(a, b, hcq_minimum, "hcq_minimum_s"); }
