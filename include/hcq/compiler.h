/* hcq/compiler.h: dtypes, the kernel IR (builder, verifier, interpreter),
 * renderers and the compile path with its on-disk cache.
 *
 * The compiler is a leaf library: it never calls into devices. Drivers use
 * its ELF reader and its interpreter (the mock GPU's shader core); the queue
 * layer calls hcq_compile() for hcq_program_from_kernel().
 *
 * ** The IR
 * A kernel is a flat list of typed SSA operations. A value is named by its
 * index in that list (hcq_ir_ref). Operands always refer to earlier ops.
 * Structure is given by RANGE/ENDRANGE and IF/ENDIF pairs that nest like
 * braces. A value is visible only inside the block that defines it (as in
 * C): an op may not use a value defined inside a RANGE or IF that has
 * already closed; carry results out with a DEFINE_ACC made outside. The
 * kernel body runs once per work-item ("thread"); work-items are grouped
 * into work-groups of launch-time size (at most 1024 work-items); SPECIAL
 * ops read the ids (i32).
 *
 * Semantics (the interpreter is the reference; renderers must agree):
 *   - Integer arithmetic wraps at the dtype's width (two's complement).
 *   - IDIV truncates toward zero; MOD takes the sign of the dividend. x/0 and
 *     x%0 are 0; INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0.
 *   - SHL/SHR use the shift count modulo the bit width; SHR is arithmetic on
 *     signed dtypes and logical on unsigned ones.
 *   - Float ops are IEEE-754 in the dtype, round to nearest even, no
 *     contraction: only MULACC is fused (a*b+c rounded once). f16 and bf16
 *     ops behave as if computed in f32 and rounded to the dtype; NaN
 *     results are quiet NaNs. Denormals are kept (no flush to zero).
 *   - f16/bf16 loads, stores and bitcasts move bits exactly (signalling
 *     NaNs and payloads included); only ops and casts round.
 *   - MAX is IEEE maxNum for floats (a NaN operand loses to a number), and
 *     max(-0, +0) is +0 in either order.
 *   - EXP2, LOG2, SIN, SQRT, RECIP on floats: correctly rounded for SQRT and
 *     RECIP; EXP2, LOG2, SIN within HCQ_IR_TRANSCENDENTAL_ULP ulp of the exact
 *     result.
 *   - CAST float->int truncates toward zero and saturates; NaN gives 0.
 *     CAST int->float rounds to nearest even. CAST to bool is x != 0.
 *     CAST between floats rounds to nearest even, once (f64 -> bf16 is not
 *     rounded through f32 first). CAST from bool gives 0 or 1.
 *   - CONST: ints are truncated to the dtype's width; a float CONST's double
 *     is rounded once to the dtype (the builder stores the rounded value).
 *   - BITCAST reinterprets bits between dtypes of the same size (not bool).
 *   - CMPLT, CMPNE give bool; float comparisons with NaN follow IEEE
 *     (CMPNE(NaN, x) is true, CMPLT with NaN is false).
 *   - bool arithmetic: AND, OR, XOR, CMPNE, WHERE and CAST are defined on
 *     bool; ADD etc. are not.
 *   - LOAD and STORE take a buffer (a PARAM buffer or DEFINE_LOCAL) and an
 *     element index (any integer dtype; signed indexes may be negative).
 *     A gated LOAD whose gate is false returns its alt value and touches no
 *     memory; a gated STORE with a false gate stores nothing. A bool in
 *     memory is one byte; any non-zero byte loads as true.
 *   - DEFINE_LOCAL sits at the top level (not inside a RANGE or IF): one
 *     buffer per work-group, each 16-byte aligned. The interpreter and the
 *     cpu target start it zeroed; GPUs do not, so kernels must not read
 *     local memory before writing it.
 *   - RANGE runs its counter from start while counter < end, reading end
 *     again at every iteration (which matters only when end is an acc).
 *   - DEFINE_ACC makes a per-work-item variable initialised to its operand;
 *     using the acc as an operand reads its current value; ASSIGN writes it.
 *   - BARRIER waits for every work-item of the work-group and makes local
 *     memory writes before it visible to reads after it. A BARRIER may only
 *     sit inside RANGEs and IFs whose operands are the same for every
 *     work-item of a group (they do not depend on LOCAL_ID or on loads).

 *
 * Vector values. An op's lanes (HCQ_IR_FLAG_LANES in its flags; read
 * them with hcq_ir_lanes) are 0 for a scalar, else 2, 4, 8 or 16; the
 * dtype is the lanes' dtype (any value dtype but bool), and a vector holds
 * at most 64 bytes (16 x f32: the widest matrix-core accumulator fragment,
 * so MMA ops can take and make fragments as vectors: m16n8k16's A fragment
 * is 8 x f16, its C 4 x f32).
 *   - Made by a vector LOAD, VSPLAT (every lane one scalar) and VSET (a copy
 *     of a vector with one lane replaced); read by VGET (one lane) and a
 *     vector STORE; DEFINE_ACC and ASSIGN carry vectors (equal lanes).
 *   - Elementwise: unary and binary ALU ops, MULACC, CAST and BITCAST take
 *     vectors whose lanes all match (vsplat a scalar operand) and give one,
 *     each lane exactly the scalar op on that lane. Compares and WHERE do
 *     not (bool lanes do not exist), nor do indexes, gates, conditions or
 *     range bounds: work lane by lane through VGET and VSET there.
 *   - A vector LOAD of N lanes reads elements idx .. idx+N-1 of its buffer
 *     in one access; a STORE whose value is a vector of N lanes writes
 *     them. N x element size must be at most 16 bytes (one memory
 *     instruction: LDG.E.128 / global_load_b128 at 16). A gated vector LOAD
 *     takes a scalar bool gate and an alt vector of the same lanes; a gated
 *     vector STORE a scalar gate.
 *   - Alignment: the address of element idx must be a multiple of the
 *     access size (N x element size), as NVIDIA requires of a vector access
 *     (a misaligned LDG.E.128 is an Xid 13 exception). hcq's buffers start
 *     page-aligned and DEFINE_LOCAL arrays 16-byte aligned, so from a
 *     buffer's start an idx that is a multiple of N is aligned (a buffer at
 *     an offset, such as a view, must keep the rule itself). The verifier
 *     cannot know addresses, so: the interpreter faults (HCQ_EFAULT,
 *     "misaligned vector access", with the address, size and work-item);
 *     NVIDIA GPUs fault, and so do the mock's SASS executor and the host
 *     twins of CUDA code; AMD GPUs run it (amdkfd sets SH_MEM_CONFIG's
 *     alignment mode to UNALIGNED: Linux drivers/gpu/drm/amd/amdkfd/
 *     kfd_device_queue_manager_v9.c, _v10.c, _v11.c), and so do the mock's
 *     AMD executor and the host twins of HIP code; the cpu target does not
 *     check (nor bounds). A kernel that breaks the rule is wrong even where
 *     it runs.
 *
 * Matrix multiply-accumulate (HCQ_OP_MMA; hcq_ir_mma). One tensor-core /
 * matrix-core operation D[m][n] = C[m][n] + sum_k A[m][k] * B[k][n] of a
 * fixed shape, executed by a whole warp together: each work-item holds
 * fragments of A, B and C as vectors (an hcq_mma_kind fixes the shape, the
 * dtypes, the warp size and which matrix element each fragment lane is:
 * hcq_mma_info, hcq_mma_coord), and gets its fragment of D.
 *   - Warps are consecutive runs of `warp` work-items of a work-group in
 *     linear local-id order (x fastest): a work-item's lane in its warp is
 *     linear_local_id % warp. A kernel with an MMA needs a work-group size
 *     that is a multiple of the warp of each kind it uses.
 *   - Every work-item of a warp executes an MMA together, none masked off
 *     (control flow uniform across the warp). Hardware leaves anything
 *     else undefined; the interpreter and the host twins fault naming the
 *     lanes, and so do the mock's executors.
 *   - Where several lanes hold one element (gfx11 WMMA: lanes 16.. repeat
 *     lanes 0-15's A and B), the hardware reads the lowest lane's; so do
 *     the interpreter and the twins. Kernels should fill every lane alike.
 *   - Arithmetic: inputs widened exactly to f32; D = C; for k in order,
 *     D = fma(A[m][k], B[k][n], D) rounded to f32 (denormals kept), so a
 *     chain of MMAs over k equals a scalar f32 fma loop over k in order.
 *     Hardware sums a block of products with its own (undocumented)
 *     alignment and rounding; the mock GPUs follow this model exactly.
 *     A NaN result is a quiet NaN (its payload unspecified).
 *   - Compiling an MMA for a target that lacks its kind
 *     (hcq_target_mma_kinds) is HCQ_ENOTSUP naming both; the cpu target has
 *     none; the ir and mock-* targets run every kind.
 */
#ifndef HCQ_COMPILER_H
#define HCQ_COMPILER_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ** dtypes */
typedef enum hcq_dtype {
    HCQ_VOID = 0,
    HCQ_BOOL,
    HCQ_I8,
    HCQ_U8,
    HCQ_I16,
    HCQ_U16,
    HCQ_I32,
    HCQ_U32,
    HCQ_I64,
    HCQ_U64,
    HCQ_F16,
    HCQ_BF16,
    HCQ_F32,
    HCQ_F64,
    HCQ_DTYPE_COUNT
} hcq_dtype;

HCQ_API size_t hcq_dtype_size(hcq_dtype t);      /* bytes; bool is 1, void 0 */
HCQ_API const char *hcq_dtype_name(hcq_dtype t); /* "f32", ...; "?" if bad */
HCQ_API bool hcq_dtype_is_float(hcq_dtype t);
HCQ_API bool hcq_dtype_is_int(hcq_dtype t); /* integer, not bool */
HCQ_API bool hcq_dtype_is_signed(hcq_dtype t);
/* v as a CONST of float dtype t holds it: rounded once to nearest even (a
 * NaN stays a NaN, zeros keep their sign). Other dtypes: v unchanged. */
HCQ_API double hcq_dtype_round(hcq_dtype t, double v);

/* ** ops */
typedef enum hcq_op {
    HCQ_OP_NOOP = 0,
    /* sources and storage */
    HCQ_OP_SPECIAL,      /* arg = hcq_special kind | dim << 8; dtype i32 */
    HCQ_OP_PARAM,        /* arg = param index; flags PTR for a buffer (dtype = element) */
    HCQ_OP_CONST,        /* arg = value bits (ints sign-extended, f32/f16/bf16 as double bits) */
    HCQ_OP_DEFINE_LOCAL, /* arg = element count; flags PTR; dtype = element */
    HCQ_OP_DEFINE_ACC,   /* src0 = initial value */
    HCQ_OP_ASSIGN,       /* src0 = acc, src1 = value; dtype void */
    HCQ_OP_LOAD,         /* src0 = buffer, src1 = index, [src2 = gate, src3 = alt] */
    HCQ_OP_STORE,        /* src0 = buffer, src1 = index, src2 = value, [src3 = gate]; void */
    /* unary ALU */
    HCQ_OP_NEG,
    HCQ_OP_EXP2,
    HCQ_OP_LOG2,
    HCQ_OP_SIN,
    HCQ_OP_SQRT,
    HCQ_OP_RECIP,
    HCQ_OP_TRUNC, /* float: round toward zero, stays float */
    /* binary ALU (operands of one dtype) */
    HCQ_OP_ADD,
    HCQ_OP_SUB,
    HCQ_OP_MUL,
    HCQ_OP_IDIV, /* integers only */
    HCQ_OP_MOD,  /* integers only */
    HCQ_OP_FDIV, /* floats only, correctly rounded */
    HCQ_OP_MAX,
    HCQ_OP_CMPLT, /* result bool */
    HCQ_OP_CMPNE, /* result bool */
    HCQ_OP_AND,
    HCQ_OP_OR,
    HCQ_OP_XOR,
    HCQ_OP_SHL,
    HCQ_OP_SHR,
    /* ternary */
    HCQ_OP_WHERE,  /* src0 bool cond, src1, src2 */
    HCQ_OP_MULACC, /* src0 * src1 + src2, fused for floats */
    /* conversions */
    HCQ_OP_CAST,
    HCQ_OP_BITCAST,
    /* structure */
    HCQ_OP_RANGE,    /* src0 = start, src1 = end (exclusive); value = loop counter */
    HCQ_OP_ENDRANGE, /* src0 = the RANGE */
    HCQ_OP_IF,       /* src0 = bool condition */
    HCQ_OP_ENDIF,    /* src0 = the IF */
    HCQ_OP_BARRIER,
    /* vectors (see "Vector values" above) */
    HCQ_OP_VSPLAT, /* src0 = scalar; vec = lanes: every lane is src0 */
    HCQ_OP_VGET,   /* src0 = vector, arg = lane; the lane's value (a scalar) */
    HCQ_OP_VSET,   /* src0 = vector, src1 = scalar, arg = lane; src0 with that lane replaced */
    /* matrix multiply-accumulate (see "Matrix multiply-accumulate" above) */
    HCQ_OP_MMA, /* src0 = A, src1 = B, src2 = C fragments, arg = hcq_mma_kind; the value is D (like C) */
    HCQ_OP_COUNT
} hcq_op;

HCQ_API const char *hcq_op_name(hcq_op op); /* "add", ...; "?" if bad */

typedef enum hcq_special {
    HCQ_SPECIAL_GROUP_ID = 0,   /* work-group id in dim 0..2 */
    HCQ_SPECIAL_LOCAL_ID = 1,   /* work-item id inside its group */
    HCQ_SPECIAL_NUM_GROUPS = 2, /* launch grid size in groups */
    HCQ_SPECIAL_LOCAL_SIZE = 3, /* work-group size in work-items */
} hcq_special;

#define HCQ_IR_FLAG_PTR 0x01u /* PARAM / DEFINE_LOCAL: the value is a buffer */
/* A vector value's lanes, in flags bits 1..3 as log2: 0 for a scalar, 1..4
 * for 2, 4, 8, 16 lanes (the op record keeps its 0.1 layout). */
#define HCQ_IR_FLAG_LANES_SHIFT 1
#define HCQ_IR_FLAG_LANES_MASK 0x0eu
#define HCQ_IR_FLAG_LANES(log2_lanes) ((uint8_t)((log2_lanes) << HCQ_IR_FLAG_LANES_SHIFT))
#define HCQ_IR_MAX_SRC 4
#define HCQ_IR_NONE UINT32_MAX
#define HCQ_IR_TRANSCENDENTAL_ULP 2

typedef uint32_t hcq_ir_ref; /* index of an op in its kernel */

typedef struct hcq_ir_op {
    uint16_t op;    /* hcq_op */
    uint8_t dtype;  /* hcq_dtype of the result (element dtype for buffers) */
    uint8_t nsrc;   /* used entries of src */
    uint8_t flags;  /* HCQ_IR_FLAG_* (and a vector's lanes: HCQ_IR_FLAG_LANES) */
    uint8_t _pad[3];
    hcq_ir_ref src[HCQ_IR_MAX_SRC];
    uint64_t arg;
} hcq_ir_op;

/* ** building kernels
 * Builder calls never fail loudly: a bad operand (a ref that does not exist,
 * a dtype that does not fit) makes the kernel's sticky error, which
 * hcq_kernel_verify() and every consumer report. The returned ref is then
 * HCQ_IR_NONE. */
HCQ_API hcq_kernel *hcq_kernel_create(const char *name);
HCQ_API void hcq_kernel_destroy(hcq_kernel *k); /* NULL is fine */
HCQ_API hcq_kernel *hcq_kernel_clone(const hcq_kernel *k);
HCQ_API const char *hcq_kernel_name(const hcq_kernel *k);
HCQ_API uint32_t hcq_kernel_op_count(const hcq_kernel *k);
HCQ_API const hcq_ir_op *hcq_kernel_ops(const hcq_kernel *k);

/* Appends any op as given, unchecked (the verifier checks). */
HCQ_API hcq_ir_ref hcq_ir_emit(hcq_kernel *k, hcq_op op, hcq_dtype dt, uint8_t flags,
                               const hcq_ir_ref *src, uint8_t nsrc, uint64_t arg);

HCQ_API hcq_ir_ref hcq_ir_param_buffer(hcq_kernel *k, hcq_dtype elem);
HCQ_API hcq_ir_ref hcq_ir_param_scalar(hcq_kernel *k, hcq_dtype dt);
HCQ_API hcq_ir_ref hcq_ir_special(hcq_kernel *k, hcq_special kind, unsigned dim);
HCQ_API hcq_ir_ref hcq_ir_const_int(hcq_kernel *k, hcq_dtype dt, int64_t v);
HCQ_API hcq_ir_ref hcq_ir_const_float(hcq_kernel *k, hcq_dtype dt, double v);
HCQ_API hcq_ir_ref hcq_ir_const_bool(hcq_kernel *k, bool v);
HCQ_API hcq_ir_ref hcq_ir_unary(hcq_kernel *k, hcq_op op, hcq_ir_ref a);
HCQ_API hcq_ir_ref hcq_ir_binary(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b);
HCQ_API hcq_ir_ref hcq_ir_where(hcq_kernel *k, hcq_ir_ref c, hcq_ir_ref a, hcq_ir_ref b);
HCQ_API hcq_ir_ref hcq_ir_mulacc(hcq_kernel *k, hcq_ir_ref a, hcq_ir_ref b, hcq_ir_ref c);
HCQ_API hcq_ir_ref hcq_ir_cast(hcq_kernel *k, hcq_dtype to, hcq_ir_ref a);
HCQ_API hcq_ir_ref hcq_ir_bitcast(hcq_kernel *k, hcq_dtype to, hcq_ir_ref a);
HCQ_API hcq_ir_ref hcq_ir_load(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx);
HCQ_API hcq_ir_ref hcq_ir_load_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx,
                                     hcq_ir_ref gate, hcq_ir_ref alt);
HCQ_API void hcq_ir_store(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val);
HCQ_API void hcq_ir_store_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val,
                                hcq_ir_ref gate);
/* Vectors: a load of `lanes` consecutive elements starting at idx (one
 * access; idx's address aligned to the access size), its gated form (alt
 * a vector of the same lanes), and the lane ops. A vector is stored with
 * hcq_ir_store / hcq_ir_store_gated (the value decides the width). */
#define HCQ_IR_MAX_LANES 16
#define HCQ_IR_MAX_VEC_BYTES 64    /* a vector value */
#define HCQ_IR_MAX_ACCESS_BYTES 16 /* a vector load or store */
HCQ_API hcq_ir_ref hcq_ir_load_vec(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes);
HCQ_API hcq_ir_ref hcq_ir_load_vec_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes,
                                         hcq_ir_ref gate, hcq_ir_ref alt);
HCQ_API hcq_ir_ref hcq_ir_vsplat(hcq_kernel *k, hcq_ir_ref scalar, unsigned lanes);
HCQ_API hcq_ir_ref hcq_ir_vget(hcq_kernel *k, hcq_ir_ref vec, unsigned lane);
HCQ_API hcq_ir_ref hcq_ir_vset(hcq_kernel *k, hcq_ir_ref vec, unsigned lane, hcq_ir_ref scalar);
/* The lanes of op r's value: 0 for a scalar (or a bad ref). */
HCQ_API unsigned hcq_ir_lanes(const hcq_kernel *k, hcq_ir_ref r);
HCQ_API hcq_ir_ref hcq_ir_range(hcq_kernel *k, hcq_ir_ref start, hcq_ir_ref end);
HCQ_API void hcq_ir_endrange(hcq_kernel *k, hcq_ir_ref range);
HCQ_API hcq_ir_ref hcq_ir_if(hcq_kernel *k, hcq_ir_ref cond);
HCQ_API void hcq_ir_endif(hcq_kernel *k, hcq_ir_ref iff);
HCQ_API hcq_ir_ref hcq_ir_define_local(hcq_kernel *k, hcq_dtype elem, uint32_t count);
HCQ_API void hcq_ir_barrier(hcq_kernel *k);
HCQ_API hcq_ir_ref hcq_ir_define_acc(hcq_kernel *k, hcq_ir_ref init);
HCQ_API void hcq_ir_assign(hcq_kernel *k, hcq_ir_ref acc, hcq_ir_ref val);

/* ** matrix multiply-accumulate (see "Matrix multiply-accumulate" above) */
typedef enum hcq_mma_kind {
    HCQ_MMA_NONE = 0,
    HCQ_MMA_NV_M16N8K16_F16,    /* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 (sm_80+): warp 32;
                                   A 8 x f16, B 4 x f16, C/D 4 x f32 per lane */
    HCQ_MMA_NV_M16N8K16_BF16,   /* the same with bf16 inputs */
    HCQ_MMA_WMMA_F16_W32,       /* gfx11 v_wmma_f32_16x16x16_f16, wave32: A 16 x f16, B 16 x f16, C/D 8 x f32 */
    HCQ_MMA_WMMA_BF16_W32,      /* v_wmma_f32_16x16x16_bf16, wave32 */
    HCQ_MMA_WMMA_F16_W64,       /* wave64: A 16, B 16, C/D 4 x f32 */
    HCQ_MMA_WMMA_BF16_W64,
    HCQ_MMA_MFMA_16X16X16_F16,  /* gfx90a/gfx942 v_mfma_f32_16x16x16f16, wave64: A 4, B 4, C/D 4 x f32 */
    HCQ_MMA_MFMA_32X32X8_F16,   /* v_mfma_f32_32x32x8f16: A 4, B 4, C/D 16 x f32 */
    HCQ_MMA_MFMA_16X16X16_BF16, /* gfx90a v_mfma_f32_16x16x16bf16_1k, gfx942 v_mfma_f32_16x16x16_bf16: A 4, B 4, C/D 4 */
    HCQ_MMA_KINDS
} hcq_mma_kind;

typedef struct hcq_mma_info {
    const char *name;                   /* "nv_m16n8k16_f16", ... */
    unsigned m, n, k;                   /* D[m][n] += A[m][k] * B[k][n] */
    unsigned warp;                      /* work-items that execute one operation together: 32 or 64 */
    hcq_dtype ab, acc;                  /* input dtype (f16 or bf16), accumulator dtype (f32) */
    unsigned a_lanes, b_lanes, c_lanes; /* each work-item's vector lanes of A, B and C/D */
} hcq_mma_info;
/* HCQ_EINVAL for HCQ_MMA_NONE or an unknown kind. */
HCQ_API hcq_status hcq_mma_info_get(hcq_mma_kind kind, hcq_mma_info *out);
/* The matrix element that fragment lane e of work-item `lane` (0..warp-1)
 * holds: operand 0 = A (row m, col k), 1 = B (row k, col n), 2 = C and D
 * (row m, col n). HCQ_EINVAL for a bad kind, operand, lane or e. */
HCQ_API hcq_status hcq_mma_coord(hcq_mma_kind kind, unsigned operand, unsigned lane, unsigned e, unsigned *row,
                                 unsigned *col);
/* The same as IR: appends i32 ops computing row and col from `lane` (an
 * i32 value: the work-item's lane in its warp). On a bad argument the
 * kernel's sticky error is set and the refs are HCQ_IR_NONE. */
HCQ_API hcq_status hcq_ir_mma_coord(hcq_kernel *k, hcq_mma_kind kind, unsigned operand, hcq_ir_ref lane, unsigned e,
                                    hcq_ir_ref *row, hcq_ir_ref *col);
/* D = A * B + C: a, b, c vectors of the kind's lanes and dtypes; the value
 * is D, a vector like c. */
HCQ_API hcq_ir_ref hcq_ir_mma(hcq_kernel *k, hcq_mma_kind kind, hcq_ir_ref a, hcq_ir_ref b, hcq_ir_ref c);
/* The kinds a target compiles ("sm_80", "sm_90", "gfx1100", "gfx90a",
 * "gfx942", their "mock-..." forms), best first; 0 for "cpu", "ir" (which
 * runs every kind but has no hardware to prefer) and targets without
 * matrix cores. Returns how many there are; writes at most max to out. */
HCQ_API unsigned hcq_target_mma_kinds(const char *target, hcq_mma_kind *out, unsigned max);

/* Checks every op (operand refs, dtypes, nesting, value visibility, params
 * numbered 0..n-1, barrier placement). On failure returns HCQ_EINVAL with a
 * message naming the op index and kind ("op 7 (add): operand 1 is op 9,
 * which comes later"); a builder error is reported first. */
HCQ_API hcq_status hcq_kernel_verify(const hcq_kernel *k);

/* Writes a readable listing (one op per line) to a malloc'd string. */
HCQ_API char *hcq_kernel_dump(const hcq_kernel *k);

/* ** parameters and the kernarg layout
 * Parameters are laid out in order at their natural alignment, the way a C,
 * CUDA or HIP compiler lays out the arguments of a kernel: a buffer is an
 * 8-byte device address; a scalar takes its dtype's size and alignment. */
typedef struct hcq_param_info {
    uint32_t offset; /* byte offset in the kernarg block */
    uint32_t size;   /* bytes: 8 for buffers, dtype size for scalars */
    uint8_t is_buffer;
    uint8_t dtype; /* element dtype for buffers */
    uint8_t _pad[2];
} hcq_param_info;

HCQ_API uint32_t hcq_kernel_param_count(const hcq_kernel *k);
/* Fills info[0..count) and returns the total kernarg bytes (8-aligned). */
HCQ_API uint32_t hcq_kernel_param_layout(const hcq_kernel *k, hcq_param_info *info);
/* Bytes of local (work-group shared) memory the kernel defines, each
 * buffer 16-byte aligned. */
HCQ_API uint32_t hcq_kernel_local_bytes(const hcq_kernel *k);

/* ** serialized IR (the payload of "ir" and mock-target binaries) */
/* The kernel must verify; *out is malloc'd. */
HCQ_API hcq_status hcq_kernel_serialize(const hcq_kernel *k, void **out, size_t *out_size);
/* Validates everything it reads (lengths, fields, a CRC-32 of the whole
 * blob) and then runs the verifier; a malformed blob gives HCQ_EFORMAT. */
HCQ_API hcq_status hcq_kernel_deserialize(const void *data, size_t size, hcq_kernel **out);

/* ** the interpreter: the reference meaning of every op.
 * Runs work-groups [group_begin, group_end) of a launch (linear group index,
 * x fastest); all work-items of a group run in lock-step, op by op.
 * Kernargs are read from `kernargs` at the layout above; buffer params are
 * addresses that the interpreter dereferences directly, after asking
 * `check` (when given) whether the access is allowed. */
typedef struct hcq_interp_access {
    uint64_t addr;      /* first byte accessed */
    uint32_t size;      /* bytes */
    bool write;
    uint32_t param;     /* param index of the buffer, or HCQ_IR_NONE for local */
    uint64_t index;     /* element index */
    hcq_ir_ref op;      /* the LOAD/STORE */
} hcq_interp_access;

typedef struct hcq_interp_mem {
    /* Returns true when the access may go ahead. On false it may write a
     * description of the allocation it was checked against into why. */
    bool (*check)(void *ctx, const hcq_interp_access *a, char *why, size_t why_size);
    void *ctx;
} hcq_interp_mem;

typedef struct hcq_interp_launch {
    const void *kernargs;
    size_t kernarg_size;
    uint32_t num_groups[3];
    uint32_t local_size[3];
    uint64_t group_begin, group_end; /* end 0 = every group */
    const hcq_interp_mem *mem;       /* NULL: no checks */
    uint64_t op_budget;              /* 0 = unlimited; a kernel running longer is stopped */
    const volatile int *cancel;      /* NULL, or a flag another thread may raise to stop the run */
} hcq_interp_launch;

/* HCQ_EFAULT names the kernel, the op, the param or local buffer and the
 * index when an access is refused or out of a local buffer's bounds;
 * HCQ_ETIMEDOUT when op_budget runs out; HCQ_ESTATE when *cancel became
 * nonzero (read, atomically, before each work-group and at the end of each
 * loop iteration: a device being closed stops its kernels part-way). The
 * kernel must verify (the verifier's HCQ_EINVAL otherwise).
 *   - check may first be asked about the whole span one op touches in a
 *     group (size > one element, index of the first active work-item);
 *     only if it refuses that is it asked element by element, to find and
 *     report the first refused work-item.
 *   - op_budget counts work-item ops: every op executed in a group counts
 *     the group's work-item count, across all groups of the call.
 *   - HCQ_ELIMIT for work-groups over 1024 work-items; HCQ_EINVAL for a zero
 *     dimension, a group range outside the grid, or kernargs shorter than
 *     the layout.
 *   - Re-entrant: threads may run disjoint group ranges of one launch at
 *     once (the kernel is only read). */
HCQ_API hcq_status hcq_interp_run(const hcq_kernel *k, const hcq_interp_launch *l);

/* ** targets and compilation
 * Targets: "cpu" (C via clang to a host shared object), "ir" (serialized IR
 * in an ELF, run by an interpreter). GPU targets (sm_*, gfx*) are added by
 * their backends. */
typedef struct hcq_binary {
    void *data;
    size_t size;
    char target[32];
    char compiler[128]; /* what built it ("clang 22.1.8", "hcq ir") */
    bool from_cache;
    /* "" unless the binary should have gone into the on-disk cache and did
     * not: why (the directory cannot be written or is not trusted, the disk
     * is full). Compiling succeeded either way. */
    char cache_note[512];
} hcq_binary;

HCQ_API bool hcq_target_known(const char *target);
/* Renders the kernel as source for the target (C, CUDA, HIP); malloc'd. */
HCQ_API hcq_status hcq_render(const hcq_kernel *k, const char *target, char **source_out);
/* Verifies, renders, compiles (or finds in the cache) and returns the
 * binary. A compiler error is HCQ_ECOMPILE with its output and the command
 * line in the message. Thread-safe; concurrent compiles of one kernel (in
 * threads or processes) share one cache entry safely. */
HCQ_API hcq_status hcq_compile(const hcq_kernel *k, const char *target, hcq_binary **out);
HCQ_API void hcq_binary_free(hcq_binary *b);

/* The C compiler hcq uses: HCQ_CLANG, else the newest clang-NN on PATH, else
 * clang. Found once per process. Returns HCQ_ENODEV if none runs. */
HCQ_API hcq_status hcq_toolchain_clang(const char **path_out, int *major_out);
/* The kernel cache directory: HCQ_CACHE_DIR, else $XDG_CACHE_HOME/hcq, else
 * ~/.cache/hcq. */
HCQ_API const char *hcq_cache_dir(void);

#ifdef __cplusplus
}
#endif
#endif
