/* tfuzz: the differential tensor fuzzer.
 *
 * A program is a short list of tensor API calls in SSA form (value i is
 * what instruction i returns), over random shapes (rank 0-5, sizes 0, 1
 * and primes), dtypes and views, with inputs drawn from special values.
 * The driver (main.c) generates programs from seeds (gen.c), evaluates
 * each with the C reference (ref.c: every op written from tensor.h's
 * definitions, with an error bound per element, never from the lowering),
 * runs it on every device in worker processes (exec.c: one per device, so
 * each can have its own HCQ_MOCK / HCQ_CPU_TARGET / HCQ_MOCK_CONFIG), and
 * compares. A disagreement is shrunk (main.c) to a few API calls and
 * printed as C and as a program file that --replay runs again. */
#ifndef HCQ_TESTS_TFUZZ_H
#define HCQ_TESTS_TFUZZ_H

#include <hcq/hcq.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TF_MAX_DIMS 8
#define TF_MAX_IV 16
#define TF_MAX_LIST 8
#define TF_MAX_OUT 4

/* The ops: one per API call the fuzzer makes. */
#define TF_OPS(X)                                                                                                     \
    X(IN, "input") X(FULL, "full") X(SCALAR, "scalar") X(ARANGE, "arange") X(EYE, "eye")                              \
    X(NEG, "neg") X(EXP, "exp") X(LOG, "log") X(EXP2, "exp2") X(LOG2, "log2") X(SQRT, "sqrt") X(RSQRT, "rsqrt")        \
    X(RECIP, "recip") X(SIN, "sin") X(COS, "cos") X(ABS, "abs") X(SIGN, "sign") X(TRUNC, "trunc") X(RELU, "relu")      \
    X(SIGMOID, "sigmoid") X(TANH, "tanh") X(GELU, "gelu") X(SILU, "silu") X(NOT, "logical_not") X(CAST, "cast")       \
    X(BITCAST, "bitcast")                                                                                             \
    X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(DIV, "div") X(IDIV, "idiv") X(MOD, "mod") X(POW, "pow")              \
    X(MAXIMUM, "maximum") X(MINIMUM, "minimum") X(LT, "lt") X(LE, "le") X(GT, "gt") X(GE, "ge") X(EQ, "eq")         \
    X(NE, "ne") X(AND, "logical_and") X(OR, "logical_or") X(XOR, "logical_xor")                                       \
    X(BNOT, "bitwise_not") X(SHL, "shl") X(SHR, "shr")                                                                \
    X(ADD_S, "add_s") X(SUB_S, "sub_s") X(MUL_S, "mul_s") X(DIV_S, "div_s") X(POW_S, "pow_s")                         \
    X(MAXIMUM_S, "maximum_s") X(MINIMUM_S, "minimum_s") X(WHERE, "where")                                             \
    X(SUM, "sum") X(PROD, "prod") X(MAX, "max") X(MIN, "min") X(MEAN, "mean") X(VAR, "var") X(STD, "std")            \
    X(ARGMAX, "argmax") X(ARGMIN, "argmin")                                                                           \
    X(RESHAPE, "reshape") X(PERMUTE, "permute") X(TRANSPOSE, "transpose") X(EXPAND, "expand") X(PAD, "pad")           \
    X(SHRINK, "shrink") X(SLICE, "slice") X(FLIP, "flip") X(CAT, "cat") X(STACK, "stack") X(REPEAT, "repeat")        \
    X(SQUEEZE, "squeeze") X(UNSQUEEZE, "unsqueeze") X(FLATTEN, "flatten") X(CONTIGUOUS, "contiguous")                 \
    X(MATMUL, "matmul") X(LINEAR, "linear") X(CONV2D, "conv2d") X(AVGPOOL, "avg_pool2d") X(MAXPOOL, "max_pool2d")    \
    X(SOFTMAX, "softmax") X(LOGSOFTMAX, "log_softmax") X(LAYERNORM, "layernorm") X(XENT, "cross_entropy")             \
    X(EMBEDDING, "embedding") X(GATHER, "gather")

typedef enum tf_op {
#define TF_ENUM(e, s) TF_##e,
    TF_OPS(TF_ENUM)
#undef TF_ENUM
        TF_OP_COUNT
} tf_op;

const char *tf_op_name(int op);
int tf_op_from_name(const char *s); /* -1 if unknown */

/* One call. Operands are earlier values; which fields an op reads is in
 * its writer in prog.c (tf_write_c). */
typedef struct tf_inst {
    int op;
    hcq_dtype dt;        /* input/full/arange/eye/cast/bitcast: the dtype */
    int nsrc;
    int src[TF_MAX_LIST]; /* operands (cat/stack: the parts; -1: a NULL optional) */
    int niv;
    int64_t iv[TF_MAX_IV]; /* shape, axes, pads, options ... */
    double fv;             /* scalar value, pad value, eps */
    int ia, ib;            /* axis, keepdim, correction ... */
    void *data;            /* input: numel * dtype size bytes */
    size_t nbytes;
} tf_inst;

typedef struct tf_prog {
    tf_inst *ins;
    int n, cap;
    int out[TF_MAX_OUT];
    int nout;
    uint64_t seed; /* the seed that made it (0: replayed or shrunk) */
} tf_prog;

void tf_prog_free(tf_prog *p);
void tf_prog_copy(tf_prog *dst, const tf_prog *src);
tf_inst *tf_prog_add(tf_prog *p); /* zeroed; NULL on OOM */
/* The text form workers read and --replay loads: one instruction a line. */
void tf_write_text(FILE *f, const tf_prog *p);
/* Reads instructions up to a line "end" or EOF; false with *err on a bad line. */
bool tf_read_text(FILE *f, tf_prog *p, char *err, size_t errsz);
/* The program as C API calls, for a repro. */
void tf_write_c(FILE *f, const tf_prog *p);

/* ** the reference (ref.c) */
enum { RV_DC = 1, RV_MOVED = 2 };
/* One element: the value (rounded to the dtype), an absolute bound on how
 * far a correct device may be from it (0: exact), the bits in the dtype,
 * and flags: RV_DC (any result is right: the value depends on an order
 * of evaluation the API leaves open, as an overflowing sum), RV_MOVED (the
 * bits came through movement and selects only: NaN payloads must match). */
typedef struct tf_rv {
    double v, e;
    uint32_t b;
    uint8_t f;
} tf_rv;

typedef struct tf_tensor {
    hcq_dtype dt;
    int ndim;
    int64_t shape[TF_MAX_DIMS];
    bool weak;
    int64_t n;
    tf_rv *x;
} tf_tensor;

typedef struct tf_ref {
    tf_tensor *t; /* per value */
    int n, cap;
} tf_ref;

/* Evaluates instruction i of p (values before it already evaluated).
 * false with a reason when the call is invalid (the generator then drops
 * it): the reference is the judge of what the API accepts. */
bool tf_ref_step(tf_ref *r, const tf_prog *p, int i, char *why, size_t whysz);
bool tf_ref_run(tf_ref *r, const tf_prog *p, char *why, size_t whysz);
void tf_ref_free(tf_ref *r);

/* dtype helpers shared by the driver */
double tf_round(hcq_dtype dt, double x);
uint32_t tf_bits(hcq_dtype dt, double x);   /* x already in the dtype */
double tf_from_bits(hcq_dtype dt, uint32_t b);
double tf_ulp(hcq_dtype dt, double x);

/* ** the generator (gen.c) */
void tf_generate(uint64_t seed, tf_prog *p, int max_ops);

/* ** workers (exec.c): serve programs on one device from in to out */
int tf_worker(const char *device, FILE *in, FILE *out);

/* random numbers */
static inline uint64_t tf_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline int tf_below(uint64_t *s, int n) { return n > 0 ? (int)(tf_rand(s) % (uint64_t)n) : 0; }

#endif
