/* hcq/tensor.h: lazy tensors on any hcq device.
 *
 * ** Model
 * Operations build a lazy graph; nothing runs until a tensor is realized
 * (hcq_realize, or hcq_tensor_read which realizes first). Realizing
 * schedules the graph into as few kernels as correctness allows (chains of
 * elementwise ops fuse into the reduction or the store that consumes them;
 * movement ops are views and cost nothing; results of one shape and loop
 * structure computed together, such as an optimizer's update of a
 * parameter and its moments, are written by one kernel), lowers each
 * kernel to the kernel IR with launch dimensions chosen for the device, compiles it
 * through the compiler's cache (and an in-memory one per context) and runs
 * it on the device's timeline.
 *
 * ** Ownership
 * A context (hcq_ctx) belongs to one device and owns every tensor created in
 * it: hcq_ctx_destroy() frees them all. Tensors never need freeing one by
 * one; for loops, take a mark and release back to it:
 *
 *     size_t m = hcq_ctx_mark(ctx);
 *     ... tensors created here ...
 *     hcq_ctx_release(ctx, m);   // frees every tensor created after the mark
 *
 * hcq_tensor_free() releases one tensor early. A freed tensor is a stale
 * handle: passing it to any call is HCQ_ESTATE, never a crash. Tensors
 * computed from a freed one stay valid (the graph keeps what it needs).
 * Destroy contexts before closing their device.
 *
 * ** Errors
 * Calls returning hcq_status follow base.h. Operations return a new tensor,
 * or NULL with hcq_error_message() set. An operation given a NULL tensor
 * returns NULL and keeps the first error's message, so a chain such as
 *     y = hcq_relu(hcq_add(hcq_matmul(x, w), b));
 * can be checked once at the end.
 *
 * ** dtypes and promotion
 * Tensors are HCQ_BOOL, HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_I32,
 * HCQ_U32, HCQ_I64, HCQ_U64, HCQ_F16, HCQ_BF16, HCQ_F32 or HCQ_F64 (others
 * are HCQ_ENOTSUP; bf16 needs a device that has it: not NVIDIA before
 * sm_80). Every op is defined on every dtype unless it says otherwise
 * below; a refusal is HCQ_EINVAL naming the call and the operands' dtypes.
 * Binary and ternary operations promote their operands to one dtype:
 *   - bool is below every dtype; two integers of one signedness give the
 *     wider; a signed and an unsigned one give the narrowest signed dtype
 *     holding both (u8 with i8: i16, u32 with i32: i64; u64 with any
 *     signed integer: f64); an integer with a float gives the float; two
 *     floats the wider (f16 with bf16: f32). Arithmetic (add, sub, mul,
 *     neg, idiv, mod) on two bools works in i32 (true + true is 2);
 *     maximum/minimum and logic on bools stay bool;
 *   - a scalar (hcq_scalar, the *_s helpers) is weak: it takes the other
 *     operand's dtype: a float tensor's; an integer tensor's (i32 for a
 *     bool tensor) when the scalar is an integer that dtype holds (i64 +
 *     3e12 is i64); else that dtype's float: f32, f64 for i64 and u64 (u8
 *     + 300 and u8 + -1 are f32, i32 + 0.5 is f32, i64 + 0.5 is f64);
 *   - hcq_div and the float functions (exp, log, sqrt, sin, sigmoid, ...)
 *     turn bool and integer operands into f32, i64 and u64 into f64;
 *   - comparisons and logical_not give bool; and/or/xor and bitwise_not
 *     take bool or integers (bitwise on integers) and refuse floats; idiv,
 *     mod, shl and shr take integers (bool works in i32) and refuse floats;
 *   - sum, prod and matmul accumulate in, and give, i32 for bool, i8 and
 *     i16, u32 for u8 and u16, and the dtype itself for i32, u32, i64,
 *     u64 (wrapping at its width); max and min keep the dtype; mean, var
 *     and std of integers give f32 (f64 for i64 and u64);
 *   - f16 and bf16 arithmetic rounds after every op (as the kernel IR
 *     does); their float functions (exp, sin, sigmoid, ...), reductions and
 *     matmuls compute in f32 and round once. f64 computes in f64
 *     throughout (its transcendentals too), with no contraction beyond
 *     the fused products of sums and matmuls: every device gives the
 *     same bits for its exact ops (add, sub, mul, div, sqrt, casts). Its
 *     float functions (exp, log, sin and what is built on them: pow,
 *     sigmoid, tanh, softmax, ...) need a target that compiles f64 exp2,
 *     log2 and sin: AMD targets do not (hcq builds without ROCm's device
 *     library), and there the call is HCQ_ENOTSUP, saying so;
 *   - casts (hcq_cast, as the kernel IR's CAST): float to integer
 *     truncates toward zero and saturates at the dtype's range, NaN gives
 *     0 (so f64 1e20 to u8 is 255, -1.5 to u32 is 0); integer to integer
 *     wraps (keeps the low bits); integer to float and float to float
 *     round once to nearest even (f64 to bf16 is not rounded through f32);
 *     to bool is x != 0. hcq_full and friends convert their double value
 *     the same way, so an i64 or u64 constant beyond 2^53 is the nearest
 *     double; hcq_tensor_item gives such an element rounded likewise.
 *   - gather, embedding and cross_entropy take indexes of any integer
 *     dtype (an index outside i32, like any out of range, gives 0).
 * Float max/min follow IEEE maxNum/minNum: a NaN operand loses to a number.
 * So hcq_max/hcq_min of a slice are NaN only when every element is NaN
 * (argmax/argmin then give 0, the first NaN), and max_pool2d likewise.
 *
 * ** Where results differ from NumPy, and why
 * Results are the same on every device, bit for bit where the operation is
 * exact (tests/tfuzz holds every device to a C reference). They differ
 * from NumPy here:
 *   - dtypes: Python numbers are weak i32/f32 scalars (an integral one
 *     beyond i32 still adds exactly to an i64 or u64 tensor), i32 / i32
 *     is f32 (NumPy: f64), mean of i32 is f32, and i32 sums and products
 *     wrap in i32; i8/i16 sums are i32 and u8/u16 sums u32
 *     (NumPy widens every integer sum to int64/uint64). An integer with a
 *     float gives that float (NumPy: i16 + f16 is f32, i32 + f32 is f64).
 *     A weak float scalar with an integer tensor gives f32 (NumPy: f64)
 *     but f64 with i64/u64; an integral scalar the integer dtype cannot
 *     hold gives that float too (NumPy 2 raises: u8 + 300). bf16 is ours.
 *     The rest of the integer lattice (u8 + i8 is i16, u64 + i64 is f64)
 *     is NumPy 2's.
 *   - bool: add, sub, mul, neg and sum/prod of bools work in i32 (True +
 *     True is 2; NumPy's add of bools is a logical or); matmul of bools
 *     is i32; relu of a bool is i32 (its 0 is an integer scalar).
 *   - idiv and mod are C's at every integer width: truncating, the
 *     remainder takes the dividend's sign (NumPy floors); x / 0 and x % 0
 *     are 0, INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0, for i8 to i64
 *     alike (the IR defines them; NumPy warns). They refuse floats.
 *   - logical_and/or/xor of integers are bitwise and give the promoted
 *     integer dtype (NumPy: bool). Shift counts are taken modulo the
 *     dtype's width, as GPUs' shifts do (NumPy: 0, or -1 for a negative
 *     x >> n, once n reaches the width).
 *   - maximum/minimum, max/min, argmax/argmin and max_pool2d ignore NaNs
 *     (IEEE maxNum: one instruction on GPUs; NumPy propagates NaN like
 *     np.max, we behave like np.nanmax). An empty max is -inf (or the
 *     integer dtype's least value) and an empty min +inf (or its greatest
 *     value); NumPy raises.
 *   - casts: float to an integer truncates and saturates, NaN gives 0
 *     (NumPy's result is undefined: it wraps or gives INT_MIN); every
 *     cast rounds once to nearest even.
 *   - f16/bf16 arithmetic rounds after every op, as their hardware does;
 *     their transcendentals, reductions, matmuls, var and std compute in
 *     f32 and round once (NumPy sums f16 in f16).
 *   - float sums are added in an order each device's plan chooses
 *     (blocked, split, tree; NumPy: pairwise), so they differ from NumPy
 *     and between devices in the last bits; sum(a * b) and matmuls fuse
 *     each product into the sum (one rounding). A sum of -0s is -0, an
 *     empty sum +0, as in NumPy.
 *   - transcendentals are within a few ulp (HCQ_IR_TRANSCENDENTAL_ULP on
 *     exp2, log2, sin), not correctly rounded: exp(x) is exp2(x log2 e),
 *     whose relative error grows with |x| (about |x| * 2^-24; 2^-53 in
 *     f64); cos(x) is sin(x + pi/2), off by up to |x| * 2^-24 (2^-53)
 *     absolute; sigmoid is
 *     1 / (1 + exp(-x)): 0 below about -88, where the true value is a
 *     denormal; tanh is 2 sigmoid(2x) - 1: about 2^-23 absolute error, so
 *     tanh of a tiny x is 0, not x; silu(-inf) and gelu(-inf) are NaN
 *     (their formulas' -inf * 0; NumPy has no gelu, torch agrees).
 *   - pow is computed in f32 (f64 for f64, i64, u64) with IEEE's special
 *     cases (see hcq_pow); an integer to an integer power is a float, not
 *     an integer, and 0 ** -1 is
 *     inf, not an error.
 *   - gather, embedding and cross_entropy give 0 for an out-of-range
 *     index (a kernel cannot raise); NumPy raises.
 *   - NaN payloads: movement ops (views, cat, stack, where, gather, pad)
 *     move bits, signalling NaNs included; arithmetic makes quiet NaNs
 *     whose payload and sign are unspecified (as on GPUs).
 *   - arange computes start + i * step in f32 (f16, bf16, f32), f64, i32
 *     (integers up to 32 bits) or i64 (i64, u64), then casts (NumPy
 *     computes in float64).
 *
 * ** Shapes
 * At most HCQ_MAX_DIMS dimensions; a dimension may be 0. Shapes and axes
 * are passed as (pointer, count); HCQ_SHAPE(...) and HCQ_AXES(...) build
 * both from a list: hcq_reshape(t, HCQ_SHAPE(2, -1)), and HCQ_PAIRS(...)
 * the (pointer, pair count) of hcq_pad and hcq_shrink. Negative axes count
 * from the end. Broadcasting follows NumPy: shapes align at the end and a
 * dimension of size 1 stretches. A tensor holds fewer than 2^31 elements.
 *
 * ** Threads
 * One context is used by one thread at a time; contexts are independent
 * (several contexts on one device may be used by several threads at once,
 * as the device allows: queue.h, Threads).
 *
 * ** Debugging
 * HCQ_DEBUG=2 prints one line per kernel run (name, launch dims, device
 * time, GB/s, GFLOP/s), timing each launch on the device (this serialises
 * launches), and which results share a kernel (and why one of the same
 * shape does not); HCQ_DEBUG=3 also prints the source the compiler generates for
 * each new kernel (targets built from C, CUDA or HIP). Kernel names say what
 * they are: E_ elementwise, R_ with a reduction, then the output dims, _rN
 * the reduction size, _uAxB a register tile, _aN accumulators per output,
 * _gN a work-group reduction, _oN N outputs; _vN a variable dim (hcq_jit_dim)
 * of upper bound N. */
#ifndef HCQ_TENSOR_H
#define HCQ_TENSOR_H

#include "base.h"
#include "compiler.h"
#include "queue.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCQ_MAX_DIMS 8

typedef struct hcq_ctx hcq_ctx;
typedef struct hcq_tensor hcq_tensor;

/* (pointer, count) argument pairs from a list of values. */
#define HCQ_SHAPE(...) ((const int64_t[]){__VA_ARGS__}), ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define HCQ_AXES(...) ((const int[]){__VA_ARGS__}), ((int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)))
/* (pointer, pair count) for hcq_pad and hcq_shrink from a list of
 * before/after (begin/end) values, dimension by dimension:
 * hcq_shrink(t, HCQ_PAIRS(1, 3, 0, 2)). An odd count does not compile. */
#define HCQ_PAIRS(...)                                                                                        \
    ((const int64_t[]){__VA_ARGS__}),                                                                         \
        ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t) / 2 +                                       \
               0 * sizeof(char[(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)) % 2 ? -1 : 1])))
/* every axis, for the reductions */
#define HCQ_ALL_AXES NULL, 0

/* ** contexts */
/* A context on an open device (not owned). Destroy it before closing the
 * device; a context still alive when its device closes is destroyed by the
 * close, and its handles (context, tensors) are stale from then on.
 * HCQ_EINVAL for a NULL device, HCQ_ESTATE for a closed one. */
HCQ_API hcq_ctx *hcq_ctx_create(hcq_device *dev);
/* Frees every tensor, JIT, buffer and program the context holds, after the
 * device finished using them. NULL is fine; a stale context is HCQ_ESTATE. */
HCQ_API hcq_status hcq_ctx_destroy(hcq_ctx *ctx);
HCQ_API hcq_device *hcq_ctx_device(const hcq_ctx *ctx);
/* A position in the context's tensor list, for hcq_ctx_release. */
HCQ_API size_t hcq_ctx_mark(const hcq_ctx *ctx);
/* Frees every tensor created after `mark` that is still alive (outputs of a
 * JIT included). HCQ_EINVAL for a mark from the future. */
HCQ_API hcq_status hcq_ctx_release(hcq_ctx *ctx, size_t mark);
/* Seeds the random generator: the same seed gives the same sequence of
 * hcq_rand* tensors on every device. A new context is seeded with 0. */
HCQ_API void hcq_ctx_seed(hcq_ctx *ctx, uint64_t seed);

typedef struct hcq_ctx_stats {
    uint64_t kernels;       /* kernels run (launched or replayed in a JIT graph) */
    uint64_t schedules;     /* hcq_realize* calls that had something to compute */
    uint64_t programs;      /* programs built (not found in the context's cache) */
    uint64_t graph_replays; /* JIT replays */
    uint64_t tensors;       /* live tensors */
    uint64_t buffer_bytes;  /* device memory the context holds (live and cached) */
} hcq_ctx_stats;
HCQ_API hcq_status hcq_ctx_get_stats(const hcq_ctx *ctx, hcq_ctx_stats *out);
/* Called after each kernel the context builds (compiled, or found in the
 * kernel cache, and loaded: the first run of a model builds dozens, each
 * taking up to seconds), on the thread using the context, with the
 * kernel's name and how many the context has built: a program can say
 * what a long first step is doing. NULL removes it. (Since 0.2.) */
typedef void (*hcq_build_fn)(void *user, const char *kernel, uint64_t built);
HCQ_API hcq_status hcq_ctx_on_build(hcq_ctx *ctx, hcq_build_fn fn, void *user);
/* Kernel plan search (also HCQ_BEAM=N, read when the context is made):
 * with width > 0, each kernel the context builds for the first time has
 * its plan searched on the device itself: candidate plans (register tile,
 * unroll, work-group size, ...) near the default one are compiled and
 * timed (medians of repeats, at most HCQ_BEAM_BUDGET_MS per kernel, default
 * 10 s), the `width` fastest are expanded again, and the fastest whose
 * output equals the default plan's (within the dtype's rounding) is used
 * and kept in the kernel cache directory, keyed by the kernel, the device
 * model and the compiler, so later processes use it without searching.
 * Candidates that fail to compile or give other results are discarded
 * (HCQ_DEBUG=1 says which and why). 0 turns the search off (cached winners
 * are then not read either). HCQ_ENOTSUP on an emulated device (its
 * timings are not a GPU's); HCQ_EINVAL for a width over 64. (Since 0.2.) */
HCQ_API hcq_status hcq_ctx_set_beam(hcq_ctx *ctx, uint32_t width);

/* ** tensor facts (valid for live tensors; a stale one gives 0 / NULL) */
HCQ_API hcq_ctx *hcq_tensor_ctx(const hcq_tensor *t);
HCQ_API hcq_dtype hcq_tensor_dtype(const hcq_tensor *t);
HCQ_API int hcq_tensor_ndim(const hcq_tensor *t);
/* Size of dimension `axis` (negative counts from the end); -1 if out of range. */
HCQ_API int64_t hcq_tensor_dim(const hcq_tensor *t, int axis);
/* Copies the shape into shape[0..ndim) (room for HCQ_MAX_DIMS) and returns ndim. */
HCQ_API int hcq_tensor_shape(const hcq_tensor *t, int64_t *shape);
HCQ_API int64_t hcq_tensor_numel(const hcq_tensor *t);
/* True when the tensor's data sits in device memory (a buffer or a view of one). */
HCQ_API bool hcq_tensor_is_realized(const hcq_tensor *t);
/* Releases the tensor now (see Ownership). NULL is fine. */
HCQ_API hcq_status hcq_tensor_free(hcq_tensor *t);

/* ** creation (all lazy except hcq_from_data) */
HCQ_API hcq_tensor *hcq_empty(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_zeros(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_ones(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_full(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, double value);
/* A 0-d weak scalar (see promotion): i32 if value is an integer within
 * i32's range (-0.0 is not), else f32 holding the double unrounded: it
 * rounds once, to the dtype it meets (x_f16 * 0.1 multiplies by f16(0.1),
 * not f16(f32(0.1)); x_i64 + 3e12 adds 3000000000000 exactly). */
HCQ_API hcq_tensor *hcq_scalar(hcq_ctx *ctx, double value);
/* start, start + step, ... below stop (above it for a negative step). */
HCQ_API hcq_tensor *hcq_arange(hcq_ctx *ctx, hcq_dtype dt, double start, double stop, double step);
/* n x m with ones on the diagonal. */
HCQ_API hcq_tensor *hcq_eye(hcq_ctx *ctx, hcq_dtype dt, int64_t n, int64_t m);
/* Copies numel * dtype size bytes of host data (row-major; bool is one byte,
 * f16/bf16 are their 16-bit patterns) into a new device buffer now. */
HCQ_API hcq_tensor *hcq_from_data(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim, const void *data);
/* Counter-based random numbers: element i of the k-th random tensor since
 * hcq_ctx_seed is a hash of (seed, k, i), the same on every device.
 * rand: uniform [0, 1); randn: standard normal (Box-Muller, its log and
 * cos computed from exactly rounded operations, not the devices'
 * approximate ones, so the bits too are the same everywhere; within 1e-5
 * relative of Box-Muller in double); randint: uniform integers in [low,
 * high), i32. Float dtypes only for rand/randn (f64 gets the f32 values,
 * widened: 24 random bits, as for f32). */
HCQ_API hcq_tensor *hcq_rand(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_randn(hcq_ctx *ctx, hcq_dtype dt, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_randint(hcq_ctx *ctx, const int64_t *shape, int ndim, int64_t low, int64_t high);
/* The tensor's value in another context (and so possibly another device):
 * realizes t and copies it. */
HCQ_API hcq_tensor *hcq_tensor_to(hcq_ctx *dst, hcq_tensor *t);

/* ** running and data */
/* Computes the tensor (or several, scheduled together so shared work runs
 * once). Returns when the kernels are submitted; reads wait for them. */
HCQ_API hcq_status hcq_realize(hcq_tensor *t);
HCQ_API hcq_status hcq_realize_all(hcq_tensor *const *ts, int n);
/* Realizes t and copies its elements, row-major, into dst (size_B must be
 * numel * dtype size). Waits for the device. */
HCQ_API hcq_status hcq_tensor_read(hcq_tensor *t, void *dst, size_t size_B);
/* Element 0 of a one-element tensor, converted to double. */
HCQ_API hcq_status hcq_tensor_item(hcq_tensor *t, double *out);
/* Overwrites the data of a tensor made by hcq_from_data or hcq_empty (or a
 * JIT output). Lazy tensors computed from it that are not realized yet will
 * read the new data. HCQ_EINVAL for other tensors or a wrong size. */
HCQ_API hcq_status hcq_tensor_write(hcq_tensor *t, const void *src, size_t size_B);
/* The device buffer holding the data of a tensor made by hcq_from_data
 * or hcq_empty (or a JIT output), for work on it outside the tensor layer
 * (hcq_allreduce of a model's gradients across devices: nn.h's data
 * parallelism). The call counts as a write, as hcq_tensor_write does:
 * copies the tensor layer keeps of the data (re-laid-out matmul operands)
 * are dropped, so take the buffer anew before each outside write, after
 * the last tensor operation that read the old data was submitted. The
 * buffer stays the tensor's (do not free it) and lives while the tensor
 * does. NULL with HCQ_EINVAL for other tensors (computed ones, views) and
 * empty ones. (Since 0.2.) */
HCQ_API hcq_buffer *hcq_tensor_buffer(hcq_tensor *t);

/* ** elementwise: unary */
HCQ_API hcq_tensor *hcq_neg(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_exp(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_log(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_exp2(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_log2(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_sqrt(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_rsqrt(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_recip(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_sin(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_cos(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_abs(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_sign(hcq_tensor *a);   /* -1, 0 or 1 (NaN stays NaN) */
HCQ_API hcq_tensor *hcq_trunc(hcq_tensor *a);  /* toward zero; ints unchanged */
HCQ_API hcq_tensor *hcq_relu(hcq_tensor *a);   /* x < 0 ? 0 : x */
HCQ_API hcq_tensor *hcq_sigmoid(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_tanh(hcq_tensor *a);
/* The tanh approximation: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))). */
HCQ_API hcq_tensor *hcq_gelu(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_silu(hcq_tensor *a);   /* x * sigmoid(x) */
HCQ_API hcq_tensor *hcq_logical_not(hcq_tensor *a);
/* ~x for integers, not x for bool; floats are refused. (Since 0.2.) */
HCQ_API hcq_tensor *hcq_bitwise_not(hcq_tensor *a);
HCQ_API hcq_tensor *hcq_cast(hcq_tensor *a, hcq_dtype dt); /* as the kernel IR's CAST */
HCQ_API hcq_tensor *hcq_bitcast(hcq_tensor *a, hcq_dtype dt); /* same size, not bool */

/* ** elementwise: binary (broadcasting, promoting) */
HCQ_API hcq_tensor *hcq_add(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_sub(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_mul(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_div(hcq_tensor *a, hcq_tensor *b);  /* true division, float result */
HCQ_API hcq_tensor *hcq_idiv(hcq_tensor *a, hcq_tensor *b); /* integers: truncating, x/0 = 0 */
HCQ_API hcq_tensor *hcq_mod(hcq_tensor *a, hcq_tensor *b);  /* integers: sign of a, x%0 = 0 */
/* a^b in f32 (f64 for f64, i64 and u64 operands; a float result, rounded
 * once to a half dtype), with IEEE
 * 754's special cases (as C's pow): x^0 = 1 and 1^y = 1 even for NaN,
 * (-1)^(+-inf) = 1, 0^y = +inf for y < 0, -0 and -inf keep their sign for
 * an odd integer y, and a finite negative base with a non-integral y is
 * NaN. Not correctly rounded: an integral |b| < 32 multiplies by repeated
 * squaring (exact where the result is representable: 3^15 is 14348907),
 * other exponents go through exp2(b * log2|a|), within a few ulp for
 * moderate results and up to about |b log2 a| * 2^-24 relative error. */
HCQ_API hcq_tensor *hcq_pow(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_maximum(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_minimum(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_lt(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_le(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_gt(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_ge(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_eq(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_ne(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_logical_and(hcq_tensor *a, hcq_tensor *b); /* bitwise on integers */
HCQ_API hcq_tensor *hcq_logical_or(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_logical_xor(hcq_tensor *a, hcq_tensor *b);
/* a << b and a >> b on integers (bool works in i32; floats are refused):
 * both operands promote to one integer dtype, the count is taken modulo
 * its width (the kernel IR's rule: x << 33 on i32 is x << 1; NumPy gives 0
 * for counts of the width or more), and >> is arithmetic on signed dtypes,
 * logical on unsigned ones. (Since 0.2.) */
HCQ_API hcq_tensor *hcq_shl(hcq_tensor *a, hcq_tensor *b);
HCQ_API hcq_tensor *hcq_shr(hcq_tensor *a, hcq_tensor *b);
/* cond ? a : b, elementwise; cond is cast to bool. */
HCQ_API hcq_tensor *hcq_where(hcq_tensor *cond, hcq_tensor *a, hcq_tensor *b);
/* with a weak scalar as the second operand */
HCQ_API hcq_tensor *hcq_add_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_sub_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_mul_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_div_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_pow_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_maximum_s(hcq_tensor *a, double b);
HCQ_API hcq_tensor *hcq_minimum_s(hcq_tensor *a, double b);

/* ** reductions over axes (NULL, 0 or HCQ_ALL_AXES: every axis). keepdim
 * keeps the reduced axes with size 1. An empty reduction gives the
 * identity (0 for sum, 1 for prod, -inf / +inf (or the integer dtype's
 * least / greatest value) for max / min; NaN for mean). Accumulation
 * dtypes: see dtypes and promotion. */
HCQ_API hcq_tensor *hcq_sum(hcq_tensor *a, const int *axes, int naxes, bool keepdim);
HCQ_API hcq_tensor *hcq_prod(hcq_tensor *a, const int *axes, int naxes, bool keepdim);
HCQ_API hcq_tensor *hcq_max(hcq_tensor *a, const int *axes, int naxes, bool keepdim);
HCQ_API hcq_tensor *hcq_min(hcq_tensor *a, const int *axes, int naxes, bool keepdim);
HCQ_API hcq_tensor *hcq_mean(hcq_tensor *a, const int *axes, int naxes, bool keepdim);
/* sum((x - mean)^2) / (n - correction); correction 1 is the sample variance. */
HCQ_API hcq_tensor *hcq_var(hcq_tensor *a, const int *axes, int naxes, bool keepdim, int correction);
HCQ_API hcq_tensor *hcq_std(hcq_tensor *a, const int *axes, int naxes, bool keepdim, int correction);
/* Index (i32) of the first maximum / minimum along one axis. */
HCQ_API hcq_tensor *hcq_argmax(hcq_tensor *a, int axis, bool keepdim);
HCQ_API hcq_tensor *hcq_argmin(hcq_tensor *a, int axis, bool keepdim);

/* ** movement: views, no copy until a kernel needs one */
/* One dimension may be -1 (inferred). */
HCQ_API hcq_tensor *hcq_reshape(hcq_tensor *a, const int64_t *shape, int ndim);
HCQ_API hcq_tensor *hcq_permute(hcq_tensor *a, const int *perm, int ndim);
HCQ_API hcq_tensor *hcq_transpose(hcq_tensor *a, int axis0, int axis1);
/* Size-1 dimensions stretch; -1 keeps a size; new leading dimensions may be added. */
HCQ_API hcq_tensor *hcq_expand(hcq_tensor *a, const int64_t *shape, int ndim);
/* Broadcasts to b's shape. */
HCQ_API hcq_tensor *hcq_expand_as(hcq_tensor *a, const hcq_tensor *b);
/* pads[2*i], pads[2*i+1]: elements before and after dimension i (>= 0),
 * for the first npairs dimensions; new elements are `value`.
 * hcq_pad(t, HCQ_PAIRS(1, 1, 0, 2), 0.0) pads dim 0 by 1 on each side and
 * dim 1 by 2 after. */
HCQ_API hcq_tensor *hcq_pad(hcq_tensor *a, const int64_t *pads, int npairs, double value);
/* ranges[2*i] .. ranges[2*i+1] (0 <= begin <= end <= size) of each of the
 * first npairs dimensions: hcq_shrink(t, HCQ_PAIRS(1, 3, 0, 2)). */
HCQ_API hcq_tensor *hcq_shrink(hcq_tensor *a, const int64_t *ranges, int npairs);
/* Python's a[start:stop:step] along one axis (negative indices count from
 * the end and are clamped; step != 0, negative steps walk backwards). */
HCQ_API hcq_tensor *hcq_slice(hcq_tensor *a, int axis, int64_t start, int64_t stop, int64_t step);
HCQ_API hcq_tensor *hcq_flip(hcq_tensor *a, const int *axes, int naxes);
/* Movement ops move bits: signalling NaNs and payloads come through (cat
 * and stack of differing dtypes cast to the promoted one first). Any count
 * of parts works; kernels reading many of them are split. */
HCQ_API hcq_tensor *hcq_cat(hcq_tensor *const *ts, int n, int axis);
HCQ_API hcq_tensor *hcq_stack(hcq_tensor *const *ts, int n, int axis);
/* Tiles the tensor reps[i] times along dimension i (reps may add leading
 * dims, up to HCQ_MAX_DIMS in all). */
HCQ_API hcq_tensor *hcq_repeat(hcq_tensor *a, const int64_t *reps, int nreps);
/* Removes one size-1 axis, or every size-1 axis with HCQ_ALL_DIMS. */
#define HCQ_ALL_DIMS 0x7fffffff
HCQ_API hcq_tensor *hcq_squeeze(hcq_tensor *a, int axis);
HCQ_API hcq_tensor *hcq_unsqueeze(hcq_tensor *a, int axis);
/* Merges axes start..end (inclusive) into one. */
HCQ_API hcq_tensor *hcq_flatten(hcq_tensor *a, int start, int end);
/* A tensor with the same values whose data will be a contiguous buffer of
 * its own once realized (ends fusion at this point). */
HCQ_API hcq_tensor *hcq_contiguous(hcq_tensor *a);

/* ** composite operations */
/* Matrix product with NumPy semantics: 1-D operands are vectors, leading
 * (batch) dimensions broadcast. */
HCQ_API hcq_tensor *hcq_matmul(hcq_tensor *a, hcq_tensor *b);
/* x @ w^T + bias, w is [out, in]; bias may be NULL. */
HCQ_API hcq_tensor *hcq_linear(hcq_tensor *x, hcq_tensor *w, hcq_tensor *bias);

/* Zero fields take the defaults: stride 1, padding 0, dilation 1, groups 1. */
typedef struct hcq_conv2d_opts {
    int stride[2], padding[2], dilation[2];
    int groups;
} hcq_conv2d_opts;
/* x [N, Cin, H, W], w [Cout, Cin/groups, KH, KW], bias [Cout] or NULL;
 * opts may be NULL. */
HCQ_API hcq_tensor *hcq_conv2d(hcq_tensor *x, hcq_tensor *w, hcq_tensor *bias, const hcq_conv2d_opts *opts);

/* kernel is required; stride 0 means the kernel size. */
typedef struct hcq_pool2d_opts {
    int kernel[2], stride[2], padding[2];
} hcq_pool2d_opts;
/* Over the last two dims. avg counts padding as zeros in the mean. The
 * padding of max never wins: it is NaN for floats (maxNum drops it; a
 * window of padding and NaNs is NaN), false for bool, the dtype's least
 * value for integers (INT_MIN; 0 unsigned). */
HCQ_API hcq_tensor *hcq_avg_pool2d(hcq_tensor *x, const hcq_pool2d_opts *opts);
HCQ_API hcq_tensor *hcq_max_pool2d(hcq_tensor *x, const hcq_pool2d_opts *opts);

HCQ_API hcq_tensor *hcq_softmax(hcq_tensor *a, int axis);
HCQ_API hcq_tensor *hcq_log_softmax(hcq_tensor *a, int axis);
/* Normalizes over the last `naxes` dims: (x - mean) / sqrt(var + eps) * w + b
 * (biased variance); w and b may be NULL. */
HCQ_API hcq_tensor *hcq_layernorm(hcq_tensor *x, int naxes, hcq_tensor *w, hcq_tensor *b, double eps);
/* Mean over the batch of -log_softmax(logits)[n, target[n]]; logits
 * [N, C] float, target [N] of an integer dtype (an out-of-range class contributes 0). */
HCQ_API hcq_tensor *hcq_cross_entropy(hcq_tensor *logits, hcq_tensor *target);
/* out[i..., :] = weight[idx[i...], :]; weight [V, D], idx of any integer dtype and shape;
 * an out-of-range index gives a row of zeros. */
HCQ_API hcq_tensor *hcq_embedding(hcq_tensor *weight, hcq_tensor *idx);
/* torch.gather: out[i][j][k] = a[idx[i][j][k]][j][k] for axis 0, and so on;
 * idx is of an integer dtype with a's ndim and no dim larger than a's (other than `axis`). */
HCQ_API hcq_tensor *hcq_gather(hcq_tensor *a, int axis, hcq_tensor *idx);

/* ** writing into existing storage
 * Computes value (broadcast and cast to dst's shape and dtype) into dst's
 * own buffer: the tensor keeps its handle, node and storage, and every
 * tensor that shares them (views of it, lazy tensors computed from it that
 * are not realized yet) reads the new values from then on, as after
 * hcq_tensor_write. This is how optimizers update parameters in place, and
 * inside a JIT the captured kernels store into the same buffers every
 * replay. A dst that is lazy or a view gets a buffer of its own first.
 * hcq_assign_all computes every value before it overwrites anything (a
 * value may read any destination's old contents); a NULL destination
 * realizes its value in the same pass (a loss computed from parameters
 * the pass updates, scheduled with the update). HCQ_EINVAL for two
 * destinations sharing storage, or for a destination computed from tensors
 * that require gradients (its old value may be needed by a backward pass). */
HCQ_API hcq_status hcq_assign(hcq_tensor *dst, hcq_tensor *value);
HCQ_API hcq_status hcq_assign_all(hcq_tensor *const *dst, hcq_tensor *const *values, int n);

/* ** autodiff: reverse mode over the lazy graph
 *
 *     hcq_requires_grad(w, true);               // w's gradient is wanted
 *     hcq_tensor *loss = hcq_cross_entropy(hcq_linear(x, w, b), y);
 *     hcq_backward(loss);                       // adds d loss / d w to w's gradient
 *     hcq_tensor *gw = hcq_grad(w);             // a lazy tensor like any other
 *
 * Operations on tensors that require gradients record how their result
 * was made (the record lives as long as the result, realized or not).
 * hcq_backward walks the records from the output and builds every
 * gradient as lazy tensor operations on the forward graph: nothing runs
 * until the gradients are realized, and then the backward pass fuses and
 * schedules like any other graph (realize the gradients together with the
 * loss, or let an optimizer, nn.h, do it). Gradients accumulate across
 * hcq_backward calls until hcq_zero_grad (optimizers consume them).
 *
 * Only float tensors take gradients. Every float operation of this header
 * has one, with these conventions: max and min (hcq_max/min, maximum,
 * minimum, max pooling, relu, abs) send the gradient to every element equal
 * to the result, split evenly among ties (a NaN result equals nothing, so a
 * slice of NaNs gets none); trunc's and sign's gradient is 0; a product with
 * one zero gives that element the product of the others; pow follows torch:
 * d/dx = y x^(y-1) (0 where y is 0), d/dy = x^y ln x (0 where x is 0 and
 * y >= 0, NaN for x < 0). Comparisons,
 * argmax/argmin, integer arithmetic, bitcasts and casts to i32 or bool have
 * none: gradients stop there, and hcq_backward of an output that depends on
 * the wanted tensors only through them is HCQ_EINVAL naming the op. Copies
 * between contexts (hcq_tensor_to) and hcq_detach carry no history. */
/* Marks t as a tensor whose gradient is kept (a leaf, or an intermediate
 * whose gradient is also wanted); false drops the mark and its gradient.
 * HCQ_EINVAL for non-float tensors. A constant (hcq_zeros, hcq_full, ...)
 * is given storage first. */
HCQ_API hcq_status hcq_requires_grad(hcq_tensor *t, bool on);
/* True when gradients flow to t: it is marked, or computed from a marked
 * tensor with gradients enabled. */
HCQ_API bool hcq_tensor_requires_grad(const hcq_tensor *t);
/* d loss / d (every marked tensor loss depends on), added to their
 * gradients. loss must have one element. */
HCQ_API hcq_status hcq_backward(hcq_tensor *loss);
/* The same for any output, seeded with grad (out's shape): the gradients
 * of sum(out * grad). */
HCQ_API hcq_status hcq_backward_with(hcq_tensor *out, hcq_tensor *grad);
/* A new tensor holding t's accumulated gradient (lazy, t's shape and
 * dtype). NULL with HCQ_EINVAL if t is not marked, HCQ_ESTATE if no
 * backward pass has reached it since its last zero_grad. */
HCQ_API hcq_tensor *hcq_grad(hcq_tensor *t);
HCQ_API bool hcq_has_grad(const hcq_tensor *t);
/* Drops t's accumulated gradient. */
HCQ_API hcq_status hcq_zero_grad(hcq_tensor *t);
/* Replaces t's accumulated gradient with grad (t's shape; cast to its
 * dtype), e.g. a clipped one. */
HCQ_API hcq_status hcq_set_grad(hcq_tensor *t, hcq_tensor *grad);
/* t's values without its history: gradients do not flow through. */
HCQ_API hcq_tensor *hcq_detach(hcq_tensor *t);
/* Turns recording on or off for the calling thread (like torch.no_grad:
 * tensors made while off have no history) and returns the previous state:
 *     bool prev = hcq_set_grad_enabled(false); ...; hcq_set_grad_enabled(prev); */
HCQ_API bool hcq_set_grad_enabled(bool on);
HCQ_API bool hcq_grad_enabled(void);

/* ** JIT: capture once, replay with new inputs
 * fn builds outputs from inputs with tensor operations (it must not read
 * tensors back to the host). The first run executes it as usual; the
 * second runs it again, capturing every kernel it launches into an hcq
 * graph; later runs only replay that graph with the new inputs' buffers,
 * without calling fn. Inputs must keep their shapes and dtypes between
 * runs (else HCQ_EINVAL). Each run's outputs are new tensors in the JIT's
 * context, owned like any other (a later run never overwrites them).
 * Tensors created inside fn are freed when it returns. Random tensors made
 * in fn (hcq_rand, dropout) draw new numbers on every replay, the same ones
 * calling fn again would draw (their seeds are the graph's variables). */
typedef struct hcq_jit hcq_jit;
typedef hcq_status (*hcq_jit_fn)(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout,
                                 void *user);
HCQ_API hcq_jit *hcq_jit_create(hcq_ctx *ctx, hcq_jit_fn fn, void *user);
/* A JIT over several contexts (ctxs[0..n), distinct, n up to 8, devices
 * of one kind): a sharded step (hcq_sharded_* calls on those contexts)
 * captured as one multi-device graph (queue.h, "Several devices"): each
 * shard's kernels on its device, hcq_tensor_to between the contexts as
 * the graph's peer copies, the folds of a reduction or contraction over
 * the split axis as kernels on the first shard's device, all replayed as
 * one unit, with results bit-equal to the same calls run eagerly. fn gets
 * ctxs[0]; inputs and outputs may be tensors of any of the contexts (the
 * pieces of sharded tensors: hcq_sharded_wrap and hcq_sharded_unwrap);
 * a replay's outputs are new tensors of the context each output had.
 * Inside the capture a copy between two devices needs a peer path
 * (hcq_device_peer_access): without one the capture is refused
 * (HCQ_ENOTSUP: a replay has no host thread to stage through; run such a
 * step eagerly). Random tensors on any of the contexts draw new numbers
 * on every replay, the ones calling fn again would (each context's own
 * streams). Not yet (HCQ_ENOTSUP): variable dims (hcq_jit_dim).
 * Destroying any of the contexts frees the JIT. */
HCQ_API hcq_jit *hcq_jit_create_multi(hcq_ctx *const *ctxs, int n, hcq_jit_fn fn, void *user);
/* NULL is fine. The context's destruction frees its JITs too. */
HCQ_API hcq_status hcq_jit_destroy(hcq_jit *j);
/* Runs the function on `in` (realized first if lazy); writes nout new
 * tensors to out. */
HCQ_API hcq_status hcq_jit_run(hcq_jit *j, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout);
/* Kernels in the captured graph; 0 before the capture. */
HCQ_API uint32_t hcq_jit_kernel_count(const hcq_jit *j);
/* Graphs the JIT has captured: 1 once captured (a failed capture is
 * dropped and made again on the next run, counting again). */
HCQ_API uint32_t hcq_jit_capture_count(const hcq_jit *j);
/* Symbolic dimensions: dim `axis` of input `input` is the variable `name`,
 * any size in [lo, hi] (1 <= lo <= hi), bound to the input's size on each
 * run. The JIT then captures once and replays for every size in range;
 * each kernel is compiled once for the variable, not per size (it takes
 * the value as an argument: loop bounds, launch sizes and the divisors
 * of means follow it), and outputs with that dim have the run's size.
 * Several inputs may share a variable (a batch of images and its labels:
 * their sizes must agree); one name has one range in a context. Declare
 * before the first run. The first two runs trace the function, and need
 * a size of at least 2 (a size of 1 would broadcast); later runs take any
 * size in range, and one outside it is HCQ_EINVAL. Supported: several
 * variables (12 in use per context, with the sizes movements derive) at any dims, a batch and a sequence
 * (an input of shape (batch, seq, d) with both declared): linear layers,
 * matmul, convolutions, softmax, layernorm, sums, means and maxima over any dims,
 * cross-entropy, elementwise ops, permutes and reshapes keeping each
 * variable dim a dim of its own, attention scores masked by an input mask
 * or a causal one, dropout, and the backward pass with an optimizer step
 * (training with a variable batch; gradients over batch and sequence),
 * and movements of a variable dim with their gradients: gathers along it
 * (an index at or past the run's size reads zero), flips, slices of a
 * fixed size (ending at most at the variable's lower bound: HCQ_EINVAL
 * otherwise) and slices to the end (a bound equal to the traced size is
 * read as the end: x[1:] is the value minus 1; hcq_slice's bounds as
 * written: a start of 0 or more, a stop at a fixed place or the end, or
 * the whole dim backwards; others, from the end, are HCQ_ENOTSUP),
 * concatenations along it (parts over one variable), padding, steps, windows
 * (pooling; the count follows the value), and reshapes merging it with
 * the fixed dims inside it or splitting it ([b, s, d] <-> [b*s, d] with
 * s fixed; the variable goes to the outermost dim of its group, a split
 * must divide the value at every run: HCQ_EINVAL otherwise). These sizes
 * are variables of their own (derived, counted in a context's 12). They
 * run as gathers, slower than views. A tensor made in fn whose values
 * do not depend on its size (constants, hcq_arange, hcq_rand of the
 * traced size, and elementwise ops and views of them) takes the variable
 * where it meets one; random tensors then draw what eager ones of the
 * run's size draw. Results match the eager ops up to the order of sums
 * (the kernels' plans are made for the upper bounds). Not yet
 * (HCQ_ENOTSUP, saying where): a reshape merging two variable dims or a
 * variable dim inside a fixed one, a concatenation of parts of different
 * variables, a view stepping across a variable dim, a variable dim
 * meeting a tensor of a fixed size in memory. Tensors made inside fn with a
 * variable dim must not be kept past the run. */
HCQ_API hcq_status hcq_jit_dim(hcq_jit *j, int input, int axis, const char *name, int64_t lo, int64_t hi);

/* ** sharded tensors: one tensor over several devices
 * A sharded tensor (hcq_sharded) is n tensors, one per context (a context
 * is one device; up to HCQ_SHARD_MAX, each context once), holding either
 * the pieces of one logical tensor split along `axis` (shard i holds
 * indices [i*D/n, (i+1)*D/n) of that axis, D its size, integer division;
 * D >= n) or, with axis HCQ_REPLICATED, a whole copy on each. Operations
 * on it run per shard on each shard's device, as lazy tensor ops of its
 * context; the calls below combine across devices where the math needs
 * it. Results are new sharded tensors the caller frees with
 * hcq_sharded_free, which frees their shard tensors too (a context the
 * sharded tensor uses, destroyed first, makes it stale: calls give
 * HCQ_ESTATE, and it still needs freeing).
 *
 * Exactness against the same op on one device:
 *   - shard, gather, reshard and elementwise ops (hcq_sharded_map1/2)
 *     compute every element by the same op: bit-exact;
 *   - reductions over axes other than the sharded one, and row-sharded
 *     matmuls (A split on its rows, B replicated; or B split on its
 *     columns), run the single-device kernel's reduction on each shard:
 *     bit-exact where its reduction order is the same for the shard's
 *     shape (it is on the mocks, tests/mock/test_tensor_shard.c), else
 *     within the bound below;
 *   - a reduction over the sharded axis, and a matmul split on its
 *     contraction axis, reduce each shard on its device (partial results),
 *     then fold the partials on the first shard's device in a fixed order
 *     (p_0 op p_1 op ... op p_(n-1), so results are deterministic) and
 *     copy the result to every device (replicated). max, min and integer
 *     sums are exact (integer sums wrap as on one device). A float sum of
 *     m terms (m: the elements each result sums, the contraction length
 *     for matmul) satisfies, to first order,
 *         |result - exact| <= (m - 1 + n) * u * sum |x_i|
 *     with u = 2^-24 for f32, 2^-53 for f64, 2^-11 for f16, 2^-8 for bf16
 *     (m-1 additions as on one device, plus one rounding of each shard's
 *     partial to the dtype); the single-device result is within
 *     (m - 1) * u * sum |x_i| of the same exact value, so the two differ by
 *     at most (2m - 2 + n) * u * sum |x_i|. A mean is that sum divided
 *     once by the count (one more rounding, u of the result).
 * Not yet (HCQ_ENOTSUP, saying so): ops whose result is not elementwise
 * in hcq_sharded_map1/2 (a shape change), a binary op between split
 * tensors of different shapes (a broadcast), matmul of 1-dim operands or
 * with the splits not listed at hcq_sharded_matmul, gradients through
 * sharded ops (hcq_tensor_to carries no history), and a sharded call while some of its
 * contexts are capturing a JIT and others are not (a JIT made with
 * hcq_jit_create_multi over all of them captures the step as one
 * multi-device graph). */
#define HCQ_SHARD_MAX 8
#define HCQ_REPLICATED (-0x7fffffff - 1) /* not an axis: -1 is the last axis */
typedef struct hcq_sharded hcq_sharded;
/* Splits t along axis (negative counts from the end; HCQ_REPLICATED:
 * copies it whole) over ctxs[0..n): each shard is copied to its context's
 * device (hcq_tensor_to: a peer copy where the devices have a path). t
 * stays as it was. HCQ_EINVAL for an axis out of range, a dim smaller than
 * n, a context given twice, n outside [1, HCQ_SHARD_MAX]. */
HCQ_API hcq_sharded *hcq_shard(hcq_tensor *t, hcq_ctx *const *ctxs, int n, int axis);
/* The logical tensor, gathered into dst (any context): the shards copied
 * to dst's device and concatenated along the axis (a replicated tensor:
 * the first shard's copy). */
HCQ_API hcq_tensor *hcq_sharded_gather(hcq_sharded *s, hcq_ctx *dst);
/* The same values split along another axis (or replicated), on the same
 * contexts: gathered on the first context's device, then split again. */
HCQ_API hcq_sharded *hcq_reshard(hcq_sharded *s, int axis);
HCQ_API hcq_status hcq_sharded_free(hcq_sharded *s); /* NULL is fine */
HCQ_API int hcq_sharded_count(const hcq_sharded *s);  /* n; 0 for a stale handle */
HCQ_API int hcq_sharded_axis(const hcq_sharded *s);   /* the axis, or HCQ_REPLICATED */
/* The logical shape (returns ndim; shape may be NULL). */
HCQ_API int hcq_sharded_shape(const hcq_sharded *s, int64_t *shape);
/* Shard i (a tensor of context i, owned by s). */
HCQ_API hcq_tensor *hcq_sharded_piece(const hcq_sharded *s, int i);
/* A sharded tensor made of pieces[0..n), one per context (their
 * contexts, in that order, each once): split along axis (piece i must
 * have the size of shard i of the concatenation along it, as hcq_shard
 * makes them, and the other dims alike) or HCQ_REPLICATED (the pieces
 * alike in shape; the caller answers for their values being equal). The
 * shards are new handles to the pieces' values (the caller still frees
 * its own). For a JIT over several contexts: fn wraps the pieces it is
 * given. HCQ_EINVAL for pieces that do not fit the split. */
HCQ_API hcq_sharded *hcq_sharded_wrap(hcq_tensor *const *pieces, int n, int axis);
/* Frees s and hands its shard tensors to the caller (pieces[0..n), n
 * from hcq_sharded_count): fn of a JIT over several contexts returns
 * them as its outputs. */
HCQ_API hcq_status hcq_sharded_unwrap(hcq_sharded *s, hcq_tensor **pieces);
/* Realizes every shard (each on its device). */
HCQ_API hcq_status hcq_sharded_realize(hcq_sharded *s);
/* Elementwise ops per shard: fn (hcq_relu, hcq_exp, a cast wrapper, ...)
 * must keep each shard's shape, else HCQ_ENOTSUP. Two operands on the
 * same contexts: split alike (same axis and shape), or both replicated,
 * or one split and the other replicated and broadcasting against it (its
 * piece of the split axis is taken where it has that axis in full, the
 * whole where the axis is 1 or absent); the result is split like the
 * split operand. Both split, of one shape, on different axes: b is
 * resharded on a's axis first (hcq_reshard: exact, through the first
 * device), and the result is split like a. */
HCQ_API hcq_sharded *hcq_sharded_map1(hcq_sharded *a, hcq_tensor *(*fn)(hcq_tensor *));
HCQ_API hcq_sharded *hcq_sharded_map2(hcq_sharded *a, hcq_sharded *b, hcq_tensor *(*fn)(hcq_tensor *, hcq_tensor *));
/* Sum, max or mean over axes (as hcq_sum/hcq_max/hcq_mean). Over the
 * split axis: partials folded in a fixed order (bound above), the result
 * replicated; over other axes: per shard, the result split on the same
 * logical axis (renumbered when keepdim is false). Mean needs a float
 * dtype (HCQ_ENOTSUP otherwise, over the split axis). */
HCQ_API hcq_sharded *hcq_sharded_reduce(hcq_sharded *a, hcq_reduce_op op, const int *axes, int naxes, bool keepdim);
/* a [..., M, K] x b [..., K, N] (2 dims or more each; batch dims
 * broadcast as hcq_matmul's, right-aligned):
 *   a split on M, b replicated          -> split on M (rows);
 *   a replicated, b split on N          -> split on N (columns);
 *   one split on a batch axis, the other replicated
 *                                       -> split on that batch axis of the
 *                                          result (the replicated one's
 *                                          matching batch dim sliced, or
 *                                          whole where it broadcasts);
 *   both split on the same batch axis (of one size)
 *                                       -> split on it;
 *   a split on K and b split on K alike, or one of them split on K and the
 *   other replicated                    -> partial products folded in a
 *                                          fixed order, replicated;
 *   both replicated                     -> replicated.
 * Other splits: HCQ_ENOTSUP (gather or reshard first). */
HCQ_API hcq_sharded *hcq_sharded_matmul(hcq_sharded *a, hcq_sharded *b);
/* In place: ts[0..n) (one per context, devices of one kind, n up to
 * HCQ_SHARD_MAX), each a buffer of its own (hcq_empty, hcq_from_data, a
 * realized result: not a view), of one dtype and size, each replaced by
 * the op over all (hcq_allreduce on their buffers: queue.h's order, bound
 * and dtypes). Inside a JIT over all their contexts
 * (hcq_jit_create_multi) it is recorded into the JIT's graph
 * (hcq_graph_allreduce, replayed with the rest of the step: a ring
 * neighbour without a peer path is HCQ_ENOTSUP); contexts capturing
 * unalike are HCQ_ENOTSUP. hcq_dp_reduce is this on the replicas'
 * vectors. */
HCQ_API hcq_status hcq_tensors_allreduce(hcq_tensor *const *ts, int n, hcq_reduce_op op);
/* Whether a JIT is capturing on ctx now (inside the capture run of
 * hcq_jit_run, where host reads would see nothing the graph computes). */
HCQ_API bool hcq_ctx_capturing(const hcq_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
