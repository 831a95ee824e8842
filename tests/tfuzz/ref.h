/* The reference's internals (ref.c, ref_elem.c, ref_red.c, ref_nn.c):
 * one element at a time (ref_elem.c: dtypes, IEEE ops with their error
 * bounds), reductions (ref_red.c), composites (ref_nn.c), and the tensors,
 * promotion, movement and the dispatcher (ref.c). */
#ifndef HCQ_TESTS_TFUZZ_REF_H
#define HCQ_TESTS_TFUZZ_REF_H

#include "tfuzz.h"

#define EPS32 0x1p-24 /* half an ulp of 1 in f32: the unit roundoff */
#define TRANS_ULP 2   /* HCQ_IR_TRANSCENDENTAL_ULP */
#define TF_MAX_NUMEL (1 << 20)

/* evaluating one instruction */
typedef struct ctx {
    tf_ref *r;
    const tf_prog *p;
    const tf_inst *in;
    int at; /* the value being computed */
    char *why;
    size_t whysz;
} ctx;

static inline bool is_float(hcq_dtype t) { return t == HCQ_F16 || t == HCQ_BF16 || t == HCQ_F32 || t == HCQ_F64; }
/* The integers the reference models: every value of these fits a double
 * exactly and their bits fit tf_rv.b. i64, u64 and f64 need a 64-bit
 * value beside the double and are not modeled yet: the reference refuses
 * any op that would make one (ref_modeled), so the generator keeps them
 * out of its programs. */
static inline bool is_int(hcq_dtype t)
{
    return t == HCQ_I8 || t == HCQ_U8 || t == HCQ_I16 || t == HCQ_U16 || t == HCQ_I32 || t == HCQ_U32;
}
static inline bool is_unsigned(hcq_dtype t) { return t == HCQ_U8 || t == HCQ_U16 || t == HCQ_U32; }
/* sum, prod and matmul accumulate in, and give: i32 for bool, i8, i16;
 * u32 for u8, u16; the dtype itself otherwise (tensor.h) */
static inline hcq_dtype ref_sum_dt(hcq_dtype t)
{
    return t == HCQ_BOOL || t == HCQ_I8 || t == HCQ_I16 ? HCQ_I32 : t == HCQ_U8 || t == HCQ_U16 ? HCQ_U32 : t;
}
static inline bool ref_modeled(hcq_dtype t) { return t == HCQ_BOOL || is_int(t) || t == HCQ_F16 || t == HCQ_BF16 || t == HCQ_F32; }
static inline hcq_dtype float_dt(hcq_dtype t) { return is_float(t) ? t : HCQ_F32; }
static inline int kind(hcq_dtype t) { return t == HCQ_BOOL ? 0 : is_float(t) ? 2 : 1; }
static inline bool dc(tf_rv a) { return a.f & RV_DC; }
static inline int axis_of(int axis, int nd) { return axis < 0 ? axis + nd : axis; }

/* ** elements (ref_elem.c) */
double ref_max_finite(hcq_dtype dt);
double ref_sat_i32(double v);
double ref_int_lo(hcq_dtype dt);
double ref_int_hi(hcq_dtype dt);
/* v's low bits as a value of integer dtype dt (integer casts wrap) */
double ref_wrap(hcq_dtype dt, int64_t v);
/* an f32 computation's result stored in dt (halfs: rounded from f32) */
double ref_op_round(hcq_dtype dt, double x);
tf_rv ref_rv_dc(void);
tf_rv ref_rv_exact(hcq_dtype dt, double x);
/* x within e before rounding to dt (don't care where no bound holds) */
tf_rv ref_rv_approx(hcq_dtype dt, double x, double e);
tf_rv ref_cast_rv(hcq_dtype from, hcq_dtype to, tf_rv a);
double ref_maxnum(double x, double y);
enum { F_ADD, F_SUB, F_MUL, F_DIV, F_MAX, F_LT, F_NE, F_NEG, F_SQRT, F_RECIP, F_TRUNC, F_EXP2, F_LOG2, F_SIN };
tf_rv ref_fop(hcq_dtype dt, int op, tf_rv a, tf_rv b);
tf_rv ref_bin_el(hcq_dtype dt, int op, tf_rv a, tf_rv b); /* op: TF_ADD, ... on the op dtype */
tf_rv ref_not_el(hcq_dtype dt, tf_rv a);
tf_rv ref_min_el(hcq_dtype dt, tf_rv a, tf_rv b);
tf_rv ref_pow_el(tf_rv a, tf_rv b);
enum { U_EXP, U_LOG, U_COS, U_SIGMOID, U_TANH, U_GELU, U_SILU };
tf_rv ref_func_el(int fn, tf_rv a);
/* unary ops by element: a's dtype in, odt out */
tf_rv ref_u_simple(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op);
tf_rv ref_u_cast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op);
tf_rv ref_u_bitcast(const tf_tensor *a, hcq_dtype odt, tf_rv x, int op);

/* ** tensors (ref.c) */
int64_t ref_numel(const int64_t *s, int nd);
void ref_unravel(int64_t i, const int64_t *s, int nd, int64_t *idx);
int64_t ref_ravel(const int64_t *idx, const int64_t *s, int nd);
bool ref_fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
tf_tensor *ref_out_tensor(ctx *c, hcq_dtype dt, const int64_t *shape, int nd);
const tf_tensor *ref_arg(ctx *c, int j);
bool ref_shape_ok(ctx *c, const int64_t *s, int nd);
hcq_dtype ref_join(hcq_dtype x, hcq_dtype y);
hcq_dtype ref_promote(const tf_tensor *a, const tf_tensor *b);
bool ref_bshape(ctx *c, const tf_tensor *const *in, int n, int64_t *out, int *nd);
int64_t ref_bidx(const tf_tensor *t, const int64_t *idx, int nd);
tf_rv ref_const_rv(hcq_dtype dt, double v);

/* ** reductions (ref_red.c) */
typedef struct red_u {
    tf_tensor *o;
    int op;
    hcq_dtype acc, odt;
    int corr;
} red_u;
tf_rv ref_fsum(const tf_rv *x, int64_t n, hcq_dtype acc, hcq_dtype odt);
/* output o of u->o reduced from x[0..n) */
void ref_red_visit_fn(void *u, int64_t o, const tf_rv *x, const int64_t *pos, int64_t n);
bool ref_reduce_op(ctx *c, const tf_tensor *a, int op);
bool ref_mean_var(ctx *c, const tf_tensor *a, int op);
bool ref_argext(ctx *c, const tf_tensor *a, bool is_min);

/* ** composites (ref_nn.c) */
bool ref_matmul_op(ctx *c, const tf_tensor *a, const tf_tensor *b, bool b_transposed, const tf_tensor *bias);
bool ref_pool_op(ctx *c, const tf_tensor *a, bool is_max);
bool ref_conv_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *bias);
bool ref_softmax_op(ctx *c, const tf_tensor *a, int axis, bool lg);
bool ref_layernorm_op(ctx *c, const tf_tensor *x, const tf_tensor *w, const tf_tensor *b);
bool ref_gather_op(ctx *c, const tf_tensor *a, int axis, const tf_tensor *idx);

#endif
