/* tensor/tt.h: the tensor layer's internals.
 *
 * A tensor handle (hcq_tensor) points at a node of the lazy graph (tt_node).
 * Nodes are reference counted and shared: handles, other nodes, JITs and the
 * scheduler hold references. A node is either realized (TT_BUF: a device
 * buffer holding its elements row-major), a constant, a view of another node
 * (TT_VIEW: one strided, offset, optionally masked view; chains of VIEW nodes
 * are the stacked views of the shape tracker), or an operation on its
 * sources. Realizing a node turns it into TT_BUF in place, so every handle
 * and every node that shares it sees the result, and drops its sources.
 *
 * Files: tensor.c (nodes, handles, contexts), data.c (creation, host
 * data, random numbers), ops_elem.c,
 * ops_move.c, ops_reduce.c, ops_nn.c (op builders), view.c (views),
 * sym.c (symbolic index arithmetic), irb.c (IR building with CSE),
 * schedule.c (what to materialize), group.c (which materialized nodes
 * one kernel writes, in which order), symdim.c (variable dims of a
 * JIT's inputs), emit.c (node -> IR
 * values), lower.c (kernel skeletons and per-device plans), cache.c
 * (kernels by AST, programs by IR), realize.c (buffers, launches), jit.c
 * (capture and replay), grad.c and grad_rules.c (autodiff records and the
 * backward pass), assign.c (writing results into existing buffers),
 * layout.c (weights' re-laid-out copies, kept until written). */
#ifndef HCQ_TENSOR_TT_H
#define HCQ_TENSOR_TT_H

#include <hcq/hcq.h>
#include <hcq/tensor.h>

#include "base/base.h"

#define TT_MAX_DIMS HCQ_MAX_DIMS
/* handle-registry kind of JITs (base.h's kinds end well below it) */
#define TT_H_JIT 0x7e01u
/* Element counts stay below 2^31 so i32 index arithmetic is exact. */
#define TT_MAX_NUMEL ((int64_t)INT32_MAX)

typedef enum tt_op {
    TT_BUF = 0, /* realized: buf */
    TT_CONST,   /* every element is cv */
    TT_VIEW,    /* src[0] seen through view; masked-out elements are cv */
    /* unary */
    TT_NEG,
    TT_EXP2,
    TT_LOG2,
    TT_SIN,
    TT_SQRT,
    TT_RECIP,
    TT_TRUNC,
    TT_NOT, /* bool: logical not; i32: bitwise not */
    TT_CAST,
    TT_BITCAST,
    /* binary (operands of the node's dtype, except comparisons) */
    TT_ADD,
    TT_SUB,
    TT_MUL,
    TT_FDIV,
    TT_IDIV,
    TT_MOD,
    TT_MAX, /* maxNum for floats, OR for bool */
    TT_CMPLT,
    TT_CMPNE,
    TT_AND,
    TT_OR,
    TT_XOR,
    TT_SHL, /* integers: shift count taken modulo the width (the IR's) */
    TT_SHR, /* arithmetic for signed dtypes, logical for unsigned */
    /* ternary */
    TT_WHERE,
    /* others */
    TT_REDUCE, /* rop over the axes in `axes` (bitmask); shape keeps them as 1 */
    TT_GATHER, /* src[0] table, src[1] i32 indexes; axis in `axes` */
    TT_INDEX,  /* i32: the element's index along axis `axes` */
    TT_RAND,   /* u32: hash of (seed, linear element index) */
    TT_SYMVAL, /* i32: every element is the value of symbolic variable `axes` (symdim.c) */
    TT_OP_COUNT
} tt_op;

typedef enum tt_rop { TT_R_SUM = 0, TT_R_PROD, TT_R_MAX } tt_rop;

/* A device buffer, shared by the nodes and JITs that use it. */
typedef struct tt_buf {
    hcq_buffer *hb; /* NULL when size_B is 0 */
    uint64_t size_B;
    uint32_t refs;
    hcq_ctx *ctx;
    struct tt_buf *next_free;
    /* bumped by every write (tt_buf_written): a copy made from the buffer
     * holds its contents while the generation it was made at is current */
    uint64_t gen;
    struct tt_layout *layout; /* a cached re-laid-out copy of it (layout.c), or NULL */
} tt_buf;

/* One view: element i (a multi-index over shape) of the view is element
 * offset + sum(i[d] * strides[d]) of its source, laid out row-major, when
 * lo[d] <= i[d] < hi[d] for every d (or there is no mask); else padding. */
typedef struct tt_view {
    uint8_t ndim;
    bool mask;
    int64_t shape[TT_MAX_DIMS], strides[TT_MAX_DIMS], offset;
    int64_t lo[TT_MAX_DIMS], hi[TT_MAX_DIMS];
} tt_view;

typedef union tt_val {
    double f;  /* float dtypes */
    int64_t i; /* ints and bool */
} tt_val;

typedef struct tt_node {
    uint64_t id; /* creation order: sources are always older than their users */
    uint32_t refs;
    uint8_t op, dtype, ndim, nsrc;
    uint8_t rop;
    bool weak;   /* a scalar whose dtype yields to the other operand's */
    bool contig; /* must be materialized when realized (hcq_contiguous) */
    uint32_t axes;
    int64_t shape[TT_MAX_DIMS];
    /* 0, or 1 + the context's symbolic variable that dim d is (its shape
     * entry then holds the value bound at trace time; symdim.c) */
    uint8_t sym[TT_MAX_DIMS];
    struct tt_node *src[3];
    tt_val cv;   /* CONST value, VIEW padding value */
    uint64_t seed;
    uint64_t rstream; /* TT_RAND: the context's random stream it took (seed comes from it) */
    tt_buf *buf;
    tt_view view;
    /* scheduler scratch: mat for one epoch, the rest for one round of it */
    uint32_t epoch, round, cost[2], walked, counted;
    bool mat;
    uint8_t owner_viewed;
    const struct tt_node *owner; /* the kernel root that first fused it */
    struct tt_node *mnext; /* the kernel list */
    /* grouping scratch (group.c): the node's place among the scheduled
     * nodes, then the kernel that writes it; a walk's visit stamp */
    uint32_t gidx, gstamp;
    uint8_t gseen;
    /* the first grouping's kernel (its first node) when grep_epoch is the
     * schedule's second pass (schedule.c) */
    const struct tt_node *grep;
    uint32_t grep_epoch;
    /* lowering scratch (lower.c): on a path from a root to the main
     * reduction, valid when lstamp is the lowering's */
    uint32_t lstamp, sstamp; /* sstamp: symdim.c's walks */
    bool lpath;
    /* autodiff (grad.c): ad_state is a tt_ad_state; ad the record of how
     * the node was made, kept when it is realized (NULL unless needed) */
    uint8_t ad_state, ad_block;
    struct tt_ad *ad;
    tt_buf *assign; /* realize into this buffer, not a new one (assign.c; referenced) */
    /* a contig copy of a view of a buffer that may come from, and is kept
     * in, that buffer's layout cache (layout.c; hcq_matmul's weights) */
    bool relayout;
} tt_node;

struct hcq_tensor {
    hcq_ctx *ctx;
    tt_node *n;
    uint64_t seq;
    struct hcq_tensor *prev, *next;
};

/* The in-memory program cache: kernel IR -> loaded program. */
typedef struct tt_prog {
    uint64_t hash;
    hcq_kernel *k;
    hcq_program *p;
} tt_prog;

/* A kernel's input after its output: a buffer, or a random node's seed
 * (a u64 scalar, so new seeds reuse the program). */
typedef struct tt_input {
    tt_buf *buf;
    const struct tt_node *rand;
    hcq_dtype dtype; /* the buffer's element dtype */
    uint8_t var;     /* 1 + a symbolic variable: its value (an i32 scalar) */
} tt_input;

#define TT_MAX_PARAMS 64

/* The AST key of a kernel (cache.c) and its inputs in param order. */
typedef struct tt_key {
    uint64_t *w;
    uint32_t n, cap;
    uint64_t hash;
    tt_input in[TT_MAX_PARAMS];
    uint32_t nin, nout; /* params: nout outputs, then in[0 .. nin) */
    const struct hcq_ctx *ctx; /* its variables' ranges (symbolic dims) */
} tt_key;

/* A kernel cached by key. */
typedef struct tt_kentry {
    uint64_t hash;
    uint64_t *w;
    uint32_t n;
    hcq_program *p;
    const hcq_kernel *k; /* owned by the program cache */
    uint32_t grid[3], block[3];
    char name[64];
    double flops;
    /* symbolic: the launch has (var's value) * per items, div to a group
     * (grid[0] is for the variable's upper bound) */
    uint8_t var;
    uint64_t per;
    uint32_t div;
} tt_kentry;

/* A graph variable of a JIT's capture: a random stream's seed, a
 * variable dim's value, or a launch's groups for it. */
typedef enum { TT_GV_SEED, TT_GV_DIM, TT_GV_GRID } tt_gv_kind;
typedef struct tt_gvar {
    uint8_t kind, var;
    uint8_t ci;      /* TT_GV_SEED: whose stream, the capture's ctxs[ci] */
    uint64_t stream; /* TT_GV_SEED: that context's stream (absolute) */
    uint64_t per;    /* TT_GV_GRID: ceil(value * per / div) groups */
    uint32_t div;
} tt_gvar;

/* Where launches go while a JIT captures. */
typedef struct tt_capture {
    hcq_graph *g;
    /* the JIT's contexts (ctxs[0] its home: variable dims are its alone;
     * every context's random streams are the graph's variables) */
    struct hcq_ctx *home;
    struct hcq_ctx *ctxs[HCQ_SHARD_MAX];
    uint32_t nctx;
    tt_buf **bufs; /* every buffer a captured launch names (referenced) */
    uint32_t nbufs, cap;
    uint32_t kernels;
    hcq_status err;
    /* graph variables, computed for each replay (tt_gvar_value): random
     * seeds, so a replay draws new numbers as calling the function again
     * would (streams counted from the one each context's capture started
     * at), and a variable dim's value with the launch sizes that follow it */
    uint64_t stream0[HCQ_SHARD_MAX];
    struct tt_gvar *vars;
    uint32_t nvars, vcap;
    /* the JIT's input buffers (replays swap them, so no layout copy of
     * them is baked into the graph) */
    tt_buf *const *inputs;
    uint32_t ninputs;
    /* every buffer a captured launch stores into (held through bufs):
     * a replay bumps their generations */
    tt_buf **written;
    uint32_t nwritten, wcap;
    /* layout copies the graph reads instead of copying (layout.c) */
    struct tt_layout_use *uses;
    uint32_t nuses, ucap;
} tt_capture;

/* A symbolic dimension: a named size in [lo, hi], bound to val while a
 * JIT that declared it runs (symdim.c). A derived one (base != 0) is the
 * size a movement makes of a variable dim, (mul * base + add) / div
 * (floor; exact: the division must leave no remainder), its value
 * computed from its base's when that is bound (tt_sym_bind_derived); it
 * is a slot, an argument and a key entry of its own like any variable. */
#define TT_MAX_SYMS 12
typedef struct tt_symvar {
    char name[32];
    int64_t lo, hi, val;
    uint32_t users; /* JIT dims declaring it (a derived one: 1 while its base is in use); a slot nobody uses takes a new variable */
    uint8_t base;   /* 0, or 1 + the variable it is derived from (itself not derived) */
    bool exact;
    int64_t mul, add, div;
} tt_symvar;

typedef struct tt_beam_stats {
    uint32_t searched;      /* kernels whose plans were timed */
    uint32_t cache_hits;    /* winners read from the disk cache */
    uint32_t cache_ignored; /* entries set aside: corrupt, foreign, not fitting */
    uint32_t timed;         /* candidates timed */
    uint32_t discarded;     /* candidates refused, failing to compile, or differing */
    uint32_t skipped;       /* kernels not searched (variable sizes) */
} tt_beam_stats;

struct hcq_ctx {
    hcq_device *dev;
    hcq_device_props props;
    bool cpu_style; /* target cpu or ir: work-items loop over chunks */
    /* whether the target compiles f64 exp2/log2/sin (ops_elem.c: 0 not
     * asked yet, 1 yes, -1 no), and the compiler's reason when not */
    int8_t f64_math;
    char f64_math_why[200];
    hcq_tensor *head, *tail;
    uint64_t next_seq;
    uint64_t seed, rand_stream;
    tt_prog *progs;
    uint32_t nprogs, pcap;
    tt_kentry *kern;
    uint32_t nkern, kcap;
    tt_buf *free_bufs;
    uint64_t free_bytes;
    tt_buf *dummy; /* stands for zero-size buffers in launches */
    struct tt_lw *lw; /* lowering scratch, reused from kernel to kernel */
    hcq_ctx_stats stats;
    hcq_build_fn on_build; /* hcq_ctx_on_build */
    void *on_build_user;
    struct hcq_jit *jits;
    tt_capture *capture;
    uint32_t epoch;
    uint32_t count_stamp; /* the scheduler's input counts (tt_node.counted) */
    bool sched_quiet;     /* a schedule only looked at (assign.c): no HCQ_DEBUG lines */
    uint32_t grep_epoch;  /* the last second scheduling pass (tt_node.grep_epoch) */
    tt_symvar syms[TT_MAX_SYMS];
    uint32_t nsyms, sym_stamp;
    /* HCQ_DEBUG >= 2: timed launches (and the plan search's) */
    hcq_queue *dbg_q;
    hcq_signal *dbg_t[2], *dbg_done;
    uint64_t dbg_val;
    /* kernel plan search (beam.c): its width (0: off), what it did, and
     * its notes, one a line, newest last (why a candidate or a cache entry
     * was set aside) */
    uint32_t beam;
    uint32_t beam_max; /* plans timed per kernel at most, the default's included (0: beam.c's
                          BEAM_MAX); tests keep their searches small */
    tt_beam_stats beam_stats;
    char beam_note[1024];
};

/* ** nodes (tensor.c) */
bool tt_live_ctx(const hcq_ctx *ctx);
tt_node *tt_node_new(hcq_ctx *ctx, tt_op op, hcq_dtype dt, const int64_t *shape, int ndim);
void tt_node_ref(tt_node *n);
/* A TT_GATHER node along axis ax of table at idx (both referenced, not
 * consumed): idx's shape and variable dims, table's dtype. The one
 * constructor of hcq_gather and the symbolic movements (symdim.c); the
 * callers check the operands. NULL when memory runs out. */
tt_node *tt_gather_node(tt_node *table, int ax, tt_node *idx);
void tt_node_unref(tt_node *n); /* NULL is fine */
/* Turns n into TT_BUF over buf (taking the caller's reference to buf). */
void tt_node_set_buf(tt_node *n, tt_buf *buf);
/* A new handle owning the reference to n (dropped on failure). */
hcq_tensor *tt_wrap(hcq_ctx *ctx, tt_node *n);
/* NULL with the error already set (or a message for a NULL argument), or
 * the live tensor's node. */
tt_node *tt_arg(const hcq_tensor *t, const char *fn);
/* "f32 [2, 3]": n's dtype and shape, for messages */
const char *tt_desc(const tt_node *n, char *buf, size_t size);
#define TT_DESC_MAX 160
/* Ends a composite op's scope (hcq_ctx_mark): the helper tensors made
 * since mark are freed and out's node survives under a fresh handle. When
 * out is NULL (an op inside failed), the message is made to start with the
 * public call fn rather than the op inside that failed. */
hcq_tensor *tt_scope_end(hcq_ctx *ctx, size_t mark, const char *fn, hcq_tensor *out);
int64_t tt_numel(const int64_t *shape, int ndim);
bool tt_dtype_ok(hcq_ctx *ctx, hcq_dtype dt, const char *fn);
tt_node *tt_const_node(hcq_ctx *ctx, hcq_dtype dt, tt_val v, const int64_t *shape, int ndim);
tt_val tt_val_from_double(hcq_dtype dt, double v);
tt_val tt_val_cast(tt_val v, hcq_dtype from, hcq_dtype to);
double tt_val_to_double(tt_val v, hcq_dtype dt);
/* the value as an IR lane of dtype dt (compiler/interp.h) and back */
uint64_t tt_val_lane(tt_val v, hcq_dtype dt);
tt_val tt_val_of_lane(uint64_t lane, hcq_dtype dt);
/* dtype rules shared by the op builders (tensor.h, dtypes and promotion):
 * the float a true division or a float function of dt gives (dt itself
 * for floats, f64 for 64-bit integers, else f32); the dtype halfs and
 * integers compute such functions in (f64 for f64 and 64-bit integers,
 * else f32); the dtype a sum, product or matmul of dt accumulates in and
 * gives (bool, i8, i16: i32; u8, u16: u32; others: dt). */
hcq_dtype tt_float_of(hcq_dtype dt);
hcq_dtype tt_calc_float(hcq_dtype dt);
hcq_dtype tt_sum_dtype(hcq_dtype dt);
hcq_status tt_check_shape(const int64_t *shape, int ndim, const char *fn);
/* The node chain ends in a realized buffer (through views only). */
bool tt_is_buffer_view(const tt_node *n);

/* The seed of the context's random stream k (data.c). */
uint64_t tt_rand_seed(const hcq_ctx *ctx, uint64_t stream);

/* ** buffers (realize.c) */
tt_buf *tt_buf_alloc(hcq_ctx *ctx, uint64_t size_B);
void tt_buf_ref(tt_buf *b);
void tt_buf_unref(tt_buf *b);
void tt_buf_pool_trim(hcq_ctx *ctx);

/* ** layout copies (layout.c)
 * A constant operand stored in a layout a kernel reads badly (hcq_matmul's
 * K-major weight on CPU-style targets) is copied once into the layout it
 * wants, and the copy is kept with the source buffer until the buffer is
 * written (every write bumps tt_buf.gen and drops the copy) or freed. A
 * relayout node's run_item takes the kept copy instead of launching its
 * kernel. A JIT capture that takes one records it (tt_layout_use), and each
 * replay first copies again the sources written since (by anything:
 * eager kernels, host writes, the graph itself). */
typedef struct tt_layout_key {
    hcq_dtype src_dt, dt; /* the source buffer's elements, the copy's */
    int src_ndim;
    int64_t src_shape[TT_MAX_DIMS];
    tt_view view; /* of the source tensor; the copy holds its elements row-major */
} tt_layout_key;
typedef struct tt_layout {
    tt_layout_key key;
    tt_buf *copy; /* referenced */
    uint64_t gen; /* the source's generation the copy holds */
} tt_layout;
typedef struct tt_layout_use {
    tt_buf *src; /* referenced */
    tt_layout l;
} tt_layout_use;
/* b was (or is about to be) written: a new generation, no kept copy */
void tt_buf_written(tt_buf *b);
void tt_layout_drop(tt_buf *b);
/* The kept copy for relayout node x (referenced), or NULL: none, stale,
 * or not to be used here (a JIT input during a capture). */
tt_buf *tt_layout_find(hcq_ctx *ctx, const tt_node *x);
/* Keeps copy (just launched for relayout node x) with x's source buffer. */
void tt_layout_keep(hcq_ctx *ctx, const tt_node *x, tt_buf *copy);
/* Copies u's source into u's copy again if the source was written since. */
hcq_status tt_layout_refresh(hcq_ctx *ctx, tt_layout_use *u);
void tt_layout_use_release(tt_layout_use *u);

/* ** op builders shared between files (ops_*.c); they take node
 * references from the caller's arguments only where noted */
tt_node *tt_alu(hcq_ctx *ctx, tt_op op, hcq_dtype dt, tt_node *a, tt_node *b, tt_node *c); /* borrows */
/* fold.c: op(a, b, c) as an existing node or a constant when constants
 * settle it (a new reference), else NULL; tt_alu asks it first */
tt_node *tt_fold_alu(tt_op op, hcq_dtype dt, tt_node *a, tt_node *b, tt_node *c);
/* a reduction of n elements of the constant a, accumulated in acc, as a
 * constant of out_dt and the given shape; NULL if a is not constant */
tt_node *tt_fold_reduce(const tt_node *a, tt_rop rop, int64_t n, hcq_dtype acc, hcq_dtype out_dt, const int64_t *shape,
                        int ndim);
tt_node *tt_cast_node(tt_node *a, hcq_dtype dt); /* borrows; new ref */
tt_node *tt_mv_reshape(tt_node *a, const int64_t *shape, int ndim);
tt_node *tt_mv_permute(tt_node *a, const int *perm);
tt_node *tt_mv_expand(tt_node *a, const int64_t *shape, int ndim);
tt_node *tt_mv_pad(tt_node *a, const int64_t *before, const int64_t *after, tt_val padval);
tt_node *tt_mv_shrink(tt_node *a, const int64_t *begin, const int64_t *end);
tt_node *tt_mv_flip(tt_node *a, uint32_t axes);
tt_node *tt_mv_step(tt_node *a, const int64_t *steps);
/* dim `axis` of size s becomes (o, k): element (j, w) is j*stride + w*dil */
tt_node *tt_mv_window(tt_node *a, int axis, int64_t k, int64_t stride, int64_t dil);
tt_node *tt_broadcast_to(tt_node *a, const int64_t *shape, int ndim);
tt_node *tt_reduce_node(tt_node *a, tt_rop rop, uint32_t axes, hcq_dtype out_dt);
/* The value an accumulator starts from and padding takes: leaves every
 * reduction unchanged (NaN for a float max: maxNum drops it). */
tt_val tt_reduce_neutral(tt_rop rop, hcq_dtype dt);
/* min/max/neg in the right form for the dtype */
tt_node *tt_flip_order(tt_node *a);
/* the weak-scalar promotion rules of tensor.h */
hcq_dtype tt_promote(const tt_node *a, const tt_node *b);
int tt_axis(int axis, int ndim, const char *fn); /* -1 with the error set */
hcq_status tt_axes_mask(const int *axes, int naxes, int ndim, uint32_t *mask, const char *fn);

/* The movement ops' arguments (ops_move.c), as the autodiff records keep
 * them (grad.c). */
typedef enum tt_mv_kind { TT_MV_RESHAPE, TT_MV_PERMUTE, TT_MV_EXPAND, TT_MV_PAD, TT_MV_SHRINK, TT_MV_FLIP, TT_MV_STEP, TT_MV_WINDOW } tt_mv_kind;
typedef struct tt_mv_args {
    const int64_t *shape, *a, *b;
    int ndim;
    const int *perm;
    uint32_t axes;
    tt_val pad;
    int axis;
    int64_t k, stride, dil;
} tt_mv_args;

/* ** autodiff (grad.c)
 * Every node gets a state once, when it is first wrapped in a handle (or,
 * for views, when the movement op makes it): whether it depends on a
 * tensor that requires gradients, and if so a record (tt_ad) of its op and
 * sources that outlives realization. */
typedef enum tt_ad_state {
    TT_AD_UNKNOWN = 0, /* not decided yet (fresh node) */
    TT_AD_NONE,        /* no tensor that requires gradients is behind it */
    TT_AD_REC,         /* differentiable: n->ad says how it was made */
    TT_AD_BLOCKED,     /* behind a non-differentiable op (ad_block says which) */
} tt_ad_state;
/* Decides the state of n and of every undecided node below it. */
void tt_ad_resolve(tt_node *n);
/* r = movement of a: records it when a needs gradients. */
void tt_ad_move(tt_node *r, tt_node *a, tt_mv_kind kind, const tt_mv_args *x);
/* Frees n's record; writes the nodes it referenced (at most
 * TT_AD_MAX_REFS) to refs for the caller to unreference; returns how many. */
#define TT_AD_MAX_REFS 6
int tt_ad_release(tt_node *n, tt_node **refs);
/* The thread's grad mode (hcq_set_grad_enabled). */
bool tt_ad_enabled(void);
/* A composite op whose gradient has a rule of its own (grad_rules.c):
 * replaces out's record with one of `kind` over srcs (made before out: the
 * backward visits newest first), when out needs gradients. TT_AD_POW:
 * pow(srcs[0], srcs[1]), both f32 of out's shape; TT_AD_MATMUL:
 * srcs[0] @ srcs[1], 2-d or 3-d with one batch, float, its gradients
 * matmuls of the operands as given (not of the copies hcq_matmul may make
 * of them). */
enum { TT_AD_POW = TT_OP_COUNT + 1, TT_AD_MATMUL };
void tt_ad_custom(hcq_tensor *out, int kind, hcq_tensor *const *srcs, int n);

/* Convolution as a matrix product (conv_im2col.c): x [N, C, H, W] and
 * w [O, C/g, KH, KW] of one dtype; [N, O, OH, OW]. */
hcq_tensor *tt_conv2d_im2col(hcq_tensor *x, hcq_tensor *w, const int stride[2], const int pad[2], const int dil[2], int g);

/* ** views (view.c) */
void tt_view_init(tt_view *v, const int64_t *shape, int ndim);
bool tt_view_is_identity(const tt_view *v, const int64_t *src_shape, int src_ndim);
/* The view only regroups its source's elements in order (a reshape). */
bool tt_view_is_reshape(const tt_view *v, const int64_t *src_shape, int src_ndim);
bool tt_view_reshape(const tt_view *v, const int64_t *shape, int ndim, tt_view *out);
void tt_view_permute(const tt_view *v, const int *perm, tt_view *out);
void tt_view_expand(const tt_view *v, const int64_t *shape, tt_view *out);
void tt_view_pad(const tt_view *v, const int64_t *before, const int64_t *after, tt_view *out);
void tt_view_shrink(const tt_view *v, const int64_t *begin, const int64_t *end, tt_view *out);
void tt_view_flip(const tt_view *v, uint32_t axes, tt_view *out);
void tt_view_step(const tt_view *v, const int64_t *steps, tt_view *out);
bool tt_view_window(const tt_view *v, int axis, int64_t k, int64_t stride, int64_t dil, tt_view *out);
/* Some mask dimension is empty: nothing is visible. */
bool tt_view_all_masked(const tt_view *v);
/* Some dimension of size > 1 has stride 0: source elements repeat. */
bool tt_view_expands(const tt_view *v);

/* ** arenas */
typedef struct tt_arena {
    struct tt_chunk *first, *cur; /* chunks stay allocated across resets */
    size_t used;
} tt_arena;
void *tt_arena_alloc(tt_arena *a, size_t size); /* zeroed; NULL on OOM */
void tt_arena_reset(tt_arena *a);                /* forget everything, keep the memory */
void tt_arena_free(tt_arena *a);

/* ** symbolic index arithmetic (sym.c)
 * An expression is c + sum(k_i * atom_i): a linear combination of atoms,
 * each a variable (a loop counter, a work-item id, a loaded index) or
 * floor(x / a) mod b of another expression. Expressions are interned, so
 * equal expressions are the same pointer, and carry their value range.
 * Division and modulo are floor operations; the rules that simplify them
 * (split off multiples, drop ranges that cannot reach the divisor, fold
 * nested divisions, recombine x/a%b * a + x%a into x%(a*b)) are exact for
 * every value, so no rule depends on a mask being true. */
typedef struct tt_atom tt_atom;
typedef struct tt_term {
    int64_t k;
    tt_atom *at;
} tt_term;
typedef struct tt_sx {
    int64_t c, lo, hi;
    uint32_t n, hash;
    struct tt_sx *hnext;
    tt_term t[];
} tt_sx;
struct tt_atom {
    uint32_t id;
    bool var;
    int64_t lo, hi;
    const tt_sx *x; /* floor(x / a) mod b (b == 0: no mod) */
    int64_t a, b;
    hcq_ir_ref ir; /* a variable's IR value */
    /* a product x * by, by a variable known at launch (a symbolic dim's
     * value, or a product of them): var is set (no rule looks inside),
     * x is one atom, a = 1, b = 0 (tt_sx_mulv) */
    const tt_atom *by;
    tt_atom *hnext;
};
typedef struct tt_sym {
    tt_arena *ar;
    uint32_t next_id;
    tt_atom **atab;
    tt_sx **xtab;
    uint32_t acap, acount, xcap, xcount;
    bool oom;
} tt_sym;

void tt_sym_init(tt_sym *s, tt_arena *ar);
/* empties the tables (keeping their memory) for a new kernel */
void tt_sym_reset(tt_sym *s);
void tt_sym_free(tt_sym *s);
tt_sx *tt_sx_const(tt_sym *s, int64_t c);
tt_sx *tt_sx_var(tt_sym *s, int64_t lo, int64_t hi, hcq_ir_ref ir);
tt_sx *tt_sx_add(tt_sym *s, const tt_sx *a, const tt_sx *b);
tt_sx *tt_sx_addc(tt_sym *s, const tt_sx *a, int64_t c);
tt_sx *tt_sx_mulc(tt_sym *s, const tt_sx *a, int64_t k);
tt_sx *tt_sx_div(tt_sym *s, const tt_sx *a, int64_t d); /* floor, d > 0 */
tt_sx *tt_sx_mod(tt_sym *s, const tt_sx *a, int64_t m); /* floor, m > 0 */
/* a * v, v a variable (one term, coefficient 1, no constant): c*v plus
 * k*(atom*v) per term of a, each product an atom of its own. A symbolic
 * coefficient: a row-major stride that multiplies a variable dim's value
 * (symdim.c), which divisions never see (only memory indexes use it). */
tt_sx *tt_sx_mulv(tt_sym *s, const tt_sx *a, const tt_sx *v);
static inline bool tt_sx_is_const(const tt_sx *x) { return x->n == 0; }
/* Coefficient of variable v in x; false when v also appears inside a
 * div/mod atom (x is then not affine in v). */
bool tt_sx_coef(const tt_sx *x, const tt_atom *v, int64_t *k);
/* "i4*12 + (i2/3)%4 + 5" for tests and debugging */
void tt_sx_print(const tt_sx *x, char *buf, size_t size);

/* ** IR building with common-subexpression elimination (irb.c) */
typedef struct tt_irb {
    hcq_kernel *k;
    uint32_t *blk;    /* per op: the innermost RANGE/IF open when it was made (NONE: top) */
    bool *open;       /* per op: a RANGE/IF still open */
    uint32_t opcap;
    hcq_ir_ref *stack; /* open blocks */
    uint32_t depth, scap;
    hcq_ir_ref *tab;  /* CSE table (op refs, NONE empty) */
    uint32_t tcap, tcount;
    bool oom;
} tt_irb;

/* a new kernel; the tables are kept from earlier kernels when there were any */
hcq_status tt_irb_init(tt_irb *b, const char *name);
void tt_irb_free(tt_irb *b); /* the tables and the kernel unless taken */
hcq_kernel *tt_irb_take(tt_irb *b);
bool tt_irb_visible(const tt_irb *b, hcq_ir_ref r);
hcq_dtype tt_irb_dtype(const tt_irb *b, hcq_ir_ref r);
bool tt_irb_const_int(const tt_irb *b, hcq_ir_ref r, int64_t *v);
hcq_ir_ref tt_irb_int(tt_irb *b, hcq_dtype dt, int64_t v);
hcq_ir_ref tt_irb_float(tt_irb *b, hcq_dtype dt, double v);
hcq_ir_ref tt_irb_bool(tt_irb *b, bool v);
hcq_ir_ref tt_irb_val(tt_irb *b, hcq_dtype dt, tt_val v);
hcq_ir_ref tt_irb_special(tt_irb *b, hcq_special kind, unsigned dim);
hcq_ir_ref tt_irb_unary(tt_irb *b, hcq_op op, hcq_ir_ref a);
hcq_ir_ref tt_irb_binary(tt_irb *b, hcq_op op, hcq_ir_ref a, hcq_ir_ref c);
hcq_ir_ref tt_irb_where(tt_irb *b, hcq_ir_ref c, hcq_ir_ref x, hcq_ir_ref y);
hcq_ir_ref tt_irb_mulacc(tt_irb *b, hcq_ir_ref x, hcq_ir_ref y, hcq_ir_ref z);
hcq_ir_ref tt_irb_cast(tt_irb *b, hcq_dtype dt, hcq_ir_ref a);
hcq_ir_ref tt_irb_bitcast(tt_irb *b, hcq_dtype dt, hcq_ir_ref a);
/* gate NONE: an ungated load; a const true gate is dropped, a false one
 * gives alt without a load */
hcq_ir_ref tt_irb_load(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref gate, hcq_ir_ref alt);
void tt_irb_store(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val, hcq_ir_ref gate);
/* Vectors (compiler.h "Vector values"): a load of `lanes` consecutive
 * elements (gated as tt_irb_load; alt a vector of those lanes), a splat,
 * one lane read and one lane replaced. tt_irb_store stores a vector. */
hcq_ir_ref tt_irb_load_vec(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes, hcq_ir_ref gate,
                           hcq_ir_ref alt); /* lanes 0: a scalar load (tt_irb_load) */
hcq_ir_ref tt_irb_vsplat(tt_irb *b, hcq_ir_ref scalar, unsigned lanes);
hcq_ir_ref tt_irb_vget(tt_irb *b, hcq_ir_ref vec, unsigned lane);
hcq_ir_ref tt_irb_vset(tt_irb *b, hcq_ir_ref vec, unsigned lane, hcq_ir_ref scalar);
hcq_ir_ref tt_irb_and(tt_irb *b, hcq_ir_ref g1, hcq_ir_ref g2); /* NONE is true */
hcq_ir_ref tt_irb_range(tt_irb *b, hcq_ir_ref start, hcq_ir_ref end);
void tt_irb_endrange(tt_irb *b, hcq_ir_ref r);
hcq_ir_ref tt_irb_if(tt_irb *b, hcq_ir_ref cond);
void tt_irb_endif(tt_irb *b, hcq_ir_ref r);
hcq_ir_ref tt_irb_acc(tt_irb *b, hcq_ir_ref init);
void tt_irb_assign(tt_irb *b, hcq_ir_ref acc, hcq_ir_ref v);
hcq_ir_ref tt_irb_param(tt_irb *b, hcq_dtype elem);
hcq_ir_ref tt_irb_param_scalar(tt_irb *b, hcq_dtype dt);
hcq_ir_ref tt_irb_local(tt_irb *b, hcq_dtype elem, uint32_t count);
void tt_irb_barrier(tt_irb *b);
/* ops appended through the hcq_ir API since `from` belong to the open block (irb.c) */
void tt_irb_adopt(tt_irb *b, hcq_ir_ref from);

/* ** scheduling (schedule.c) */
typedef struct tt_sched {
    tt_node **items; /* the nodes that become buffers, in run order, each referenced */
    uint32_t n, cap;
    /* kernel k writes items[kfirst[k] .. kfirst[k + 1]) (group.c) */
    uint32_t *kfirst;
    uint32_t nk;
} tt_sched;
/* Decides which nodes reachable from roots become buffers, which of them
 * one kernel writes together, and the kernels' run order. After it, a
 * scheduled node's gidx is its kernel (until the next schedule). */
hcq_status tt_schedule(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_sched *out);
void tt_sched_free(tt_sched *s);
/* HCQ_DEBUG lines about a grouping, printed once its schedule is chosen */
typedef struct tt_glog {
    char *s;
    size_t n, cap;
} tt_glog;
void tt_glog_flush(const hcq_ctx *ctx, const tt_glog *log);
void tt_glog_free(tt_glog *log);
/* group.c: mats (the scheduled nodes in creation order, referenced)
 * reordered into kernels; fills out (taking mats, also on failure); what
 * it decided and why goes to log if given */
hcq_status tt_group(hcq_ctx *ctx, tt_node **mats, uint32_t n, tt_sched *out, tt_glog *log);
/* a and b reduce the same shape over the same axes with the same op and
 * dtype: one kernel can run them with one plan */
bool tt_same_reduce(const tt_node *a, const tt_node *b);

/* ** lowering (lower.c, emit.c) */
/* ** a kernel's plan as explicit choices (plan.c, lower.h) */
typedef enum tt_opt_kind {
    TT_OPT_UPCAST, /* slot, dim, amt: amt outputs along dim per work-item. Slot 0 is
                      the row dim of a register tile (at most 8; may be padded),
                      slot 1 the contiguous one (at most 256) */
    TT_OPT_PADTO,  /* dim, amt: slot 0's dim padded to a multiple of its upcast amt:
                      rows past the edge read the last row and are not stored */
    TT_OPT_UNROLL, /* amt accumulators along the main reduction's innermost axis */
    TT_OPT_LOCAL,  /* amt work-items per work-group (absent: 1) */
    TT_OPT_GROUP,  /* grouped reduction: a work-group of amt per output, combining
                      through local memory (a power of 2) */
    TT_OPT_BLOCK,  /* a register tile's walk in column blocks of amt tiles */
    TT_OPT_VECTOR, /* dim, amt (slot): loads and stores of amt consecutive elements
                      along slot 1's upcast dim as one vector access (vec.c) where
                      aligned; slot 1 (",all"): every such access, else refused */
    TT_OPT_SMEM,   /* slot, amt: shared-memory staging of a register tile's operands
                      (plan.c): the work-group is local / slot tile rows by slot tile
                      columns, and stages amt-long slices of the reduction */
    TT_OPT_TC,     /* tensor cores (tc.c): slot 0 (tc.m) dim = the MMA's m dim,
                      amt = blocks per warp along it; slot 1 (tc.n) the same for
                      n; slot 2 (tc.wm) amt = warps along m (local / warp / wm
                      along n); optional: slot 3 (tc.kind) amt = which of the
                      target's kinds for the inputs (0: the first), slot 4
                      (tc.smem) amt = k-steps a slice staged through local
                      memory (0: not staged) */
    TT_OPT_KINDS
} tt_opt_kind;

typedef struct tt_opt {
    uint8_t kind; /* tt_opt_kind */
    int8_t slot;  /* UPCAST: 0 or 1; SMEM: the group's column tiles; VECTOR: 1 for ",all"; TC: 0 to 4 (m, n, wm, kind, smem); else -1 */
    int8_t dim;   /* an output dim, or -1 */
    int64_t amt;
} tt_opt;

#define TT_MAX_OPTS 12
typedef struct tt_opts {
    uint32_t n;
    tt_opt o[TT_MAX_OPTS];
} tt_opts;

typedef struct tt_lowered {
    hcq_kernel *k;
    char name[64];
    uint32_t grid[3], block[3];
    double flops;
    uint8_t var; /* see tt_kentry */
    uint64_t per;
    uint32_t div;
    tt_opts opts; /* the plan's choices */
} tt_lowered;
/* Lowers the nodes (one shape and loop structure; their sources realized
 * or fused) to a kernel that stores root i's elements row-major in param
 * i; params nroots.. are key->in. */
hcq_status tt_lower(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, const tt_key *key, tt_lowered *out);
/* tt_lower with the plan's choices given (NULL: the default ones);
 * a list that does not fit the kernel fails (tt_plan_apply's message). */
hcq_status tt_lower_opts(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, const tt_key *key, const tt_opts *force,
                         tt_lowered *out);
void tt_lowered_free(tt_lowered *l);
void tt_lower_scratch_free(hcq_ctx *ctx);

/* ** kernel plan search (beam.c) */
/* The kernel for xs from the plan search (or its disk cache): *done false
 * when the search does not apply (the caller lowers the default plan). */
hcq_status tt_beam_kernel(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, const tt_key *key, tt_kentry *out, bool *done);
/* A disk cache entry's choices: HCQ_OK, or HCQ_EFORMAT with why (corrupt,
 * or written for another kernel, device or compiler: want_id differs). */
hcq_status tt_beam_entry_parse(const char *text, size_t size, const char *want_id, tt_opts *out, char *why, size_t wn);
/* Where the disk cache keeps the search's winner for xs (the default
 * plan is lowered to find its key). */
hcq_status tt_beam_entry_path(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, char *path, size_t size);
/* The timed launch (realize.c): its device time in us. */
hcq_status tt_timed_exec(hcq_ctx *ctx, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims, double *us_out);

/* ** caches (cache.c) */
/* the key of the kernel writing roots (in order) */
hcq_status tt_key_make(const hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_key *k);
void tt_key_free(tt_key *k);
const tt_kentry *tt_kcache_find(const hcq_ctx *ctx, const tt_key *k);
void tt_kcache_add(hcq_ctx *ctx, const tt_key *k, const tt_kentry *e);
/* The program for k (taking k); *kept is the cached copy of the IR. */
hcq_program *tt_get_program(hcq_ctx *ctx, hcq_kernel *k, const hcq_kernel **kept);
void tt_caches_free(hcq_ctx *ctx);

/* ** realizing (realize.c) */
hcq_status tt_realize_nodes(hcq_ctx *ctx, tt_node *const *nodes, uint32_t n);
/* Realizes n into a contiguous buffer of its own (copying views). */
hcq_status tt_realize_contiguous(hcq_ctx *ctx, tt_node *n);
void tt_debug_free(hcq_ctx *ctx);

/* A test hook, called after every kernel launch with what was launched
 * (NULL: none); args[0 .. nout) are the kernel's outputs. Not for
 * production use. */
typedef void (*tt_launch_hook_fn)(hcq_ctx *ctx, const hcq_kernel *k, const hcq_arg *args, uint32_t nargs, uint32_t nout,
                                  const uint32_t grid[3], const uint32_t block[3]);
void tt_set_launch_hook(tt_launch_hook_fn fn);

/* An identity view of v materialized on its own, into `into` if given
 * (assign.c; new reference, taking none) */
tt_node *tt_copy_node(tt_node *v, tt_buf *into);

/* ** symbolic dimensions (symdim.c)
 * A JIT input's dim can be a variable (hcq_jit_dim): the input's node
 * carries the mark while the function is traced, every op propagates it
 * (tt_sym_*), kernels take the variable's value as an i32 argument and
 * their launch size follows it, so one kernel and one capture serve every
 * value in range. The shape entry of a marked dim holds the traced value;
 * keys name the variable instead, and the lowering sees its upper bound.
 * What would bake the value into a kernel is refused with HCQ_ENOTSUP. */
static inline bool tt_has_sym(const tt_node *n)
{
    for (int d = 0; d < n->ndim; d++)
        if (n->sym[d]) return true;
    return false;
}
/* the marks of the op's result from its (broadcast) operands; an error
 * (HCQ_ENOTSUP) when a fixed size meets a variable or two variables meet */
hcq_status tt_sym_join(tt_node *const *in, int n, const int64_t *shape, int ndim, uint8_t *out, const char *fn);
/* After tt_sym_join: out[i] a copy of operand i marked with the result's
 * variable dims where it is a fixed-size tensor of constants, aranges or
 * random numbers of that size (its values do not depend on the size), or
 * NULL to use in[i] as it is; new references. */
hcq_status tt_sym_adopt(tt_node **in, int n, const int64_t *shape, int ndim, const uint8_t *sym, tt_node **out);
/* r = movement of a: r's marks, or HCQ_ENOTSUP where the movement would
 * need the variable's value (pad, shrink, flip, step or window along it,
 * a reshape merging or splitting it) */
hcq_status tt_sym_move(tt_node *r, const tt_node *a, tt_mv_kind kind, const tt_mv_args *x);
/* The context whose JIT this thread traces (movements of a variable dim
 * make derived variables in it; NULL: none), set around the traced call. */
void tt_sym_tracing(hcq_ctx *ctx);
hcq_ctx *tt_sym_tracing_ctx(void);
/* 1 + the variable (mul * var + add) / div, derived from var's base and
 * made or found in ctx; 0 with the error set (what names the movement)
 * where it cannot be stated so or its range would hold a negative size. */
int tt_sym_derive(hcq_ctx *ctx, int var, int64_t mul, int64_t add, int64_t div, bool exact, const char *what);
/* After the base variables marked in bound[] are bound: the value of
 * each one derived from them (HCQ_EINVAL where an exact division has a
 * remainder). */
hcq_status tt_sym_bind_derived(hcq_ctx *ctx, const bool *bound);
/* After a JIT dropped its variables: derived ones whose base nobody uses
 * free their slots. */
void tt_sym_release(hcq_ctx *ctx);
/* Movements of a variable dim made as gathers along it (symdim.c), each
 * on a's variable dims the movement changes (the caller moves the fixed
 * ones): a flip of those in `axes`; a slice [begin, end) (of a fixed size
 * ending below the traced size, or to the end: the value minus begin);
 * padding (the value plus before and after); steps (ceil(value / step));
 * windows along `axis` (floor((value - span) / stride) + 1 of them, a
 * dim of k after). tt_sym_unmove is the gradient of a slice or padding:
 * g put back into p's variable dims, element i reading g's i + off[d],
 * zero outside g. Each returns a new reference (NULL with the error set). */
tt_node *tt_sym_flip(tt_node *a, uint32_t axes);
tt_node *tt_sym_slice(tt_node *a, const int64_t *begin, const int64_t *end);
tt_node *tt_sym_pad(tt_node *a, const int64_t *before, const int64_t *after, tt_val padval);
tt_node *tt_sym_step(tt_node *a, const int64_t *steps);
tt_node *tt_sym_window(tt_node *a, int axis, int64_t k, int64_t stride, int64_t dil);
tt_node *tt_sym_unmove(tt_node *g, const tt_node *p, const int64_t *off);
/* A step's gradient along p's variable dims: g's i / k where k divides i,
 * zero elsewhere. */
tt_node *tt_sym_unstep(tt_node *g, const tt_node *p, const int64_t *steps);
/* A reshape that merges or splits a variable dim (outermost in its group
 * of dims, the others fixed): [.., v, F, ..] -> [.., v*F, ..] and back to
 * [.., v*F/G, G, ..] (v*F/G exact, checked at each run) through gathers. */
tt_node *tt_sym_reshape(tt_node *a, const int64_t *shape, int ndim);
/* A concatenation along ax of parts (of one dtype) some of which are
 * variable there (sizes over one variable): each part gathered at its
 * offset, a multiple of the value plus a constant. */
tt_node *tt_sym_cat(tt_node *const *parts, int count, int ax);
/* the context's variable k (1-based), or NULL */
tt_symvar *tt_symvar_get(hcq_ctx *ctx, int k);
/* elements of n with variable dims at their upper bound (buffers a
 * capture allocates serve every value) or their bound value */
int64_t tt_numel_sym(const hcq_ctx *ctx, const tt_node *n, bool upper);
/* dim d's size, or a variable's upper bound: what a choice of graph
 * (a copy, a split) that must not depend on the traced value looks at */
int64_t tt_dim_upper(const hcq_ctx *ctx, const tt_node *n, int d);
/* i32 node: the product of the sizes of a's dims in mask, variables
 * included (a mean's count); NULL with an error */
tt_node *tt_sym_count(hcq_ctx *ctx, const tt_node *a, uint32_t mask);
/* The lowering of kernels over nodes with variable dims: for the kernel
 * writing roots, each marked shape entry (nodes and views) is set to the
 * variable's upper bound and each view over a marked source restated at
 * the upper bounds (tt_sym_view_padded) until tt_sym_restore; HCQ_ENOTSUP
 * (nothing changed) where a view or a gather would need a variable's
 * value in a division. *var is the variable of the roots' outermost dim
 * (0: none), which the launch size follows. */
typedef struct tt_symsave tt_symsave;
hcq_status tt_sym_substitute(hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_symsave **save, int *var);
void tt_sym_restore(tt_symsave *save);
/* View n (a TT_VIEW) restated where every variable dim is at its upper
 * bound: shape, mask and, where the source has a variable dim inside a
 * stride, strides and offset (symdim.c says how); HCQ_ENOTSUP where the
 * view steps across a variable dim. The kernel key names views so. */
hcq_status tt_sym_view_padded(const hcq_ctx *ctx, const tt_node *n, tt_view *out);

/* ** JIT (jit.c) */
void tt_jits_free(hcq_ctx *ctx);
/* Records a copy of size bytes from src (at src_off) to the start of dst
 * into the capture both buffers' contexts take part in (a JIT over
 * several contexts: hcq_tensor_to between two of them); the graph refuses
 * a copy between devices without a peer path (realize.c). */
hcq_status tt_capture_copy(tt_capture *c, tt_buf *dst, tt_buf *src, uint64_t src_off, uint64_t size);
/* Records hcq_graph_allreduce over bufs[0..n) (one per context of the
 * capture) into it: the buffers are captured and written (realize.c). */
hcq_status tt_capture_allreduce(tt_capture *c, tt_buf *const *bufs, int n, hcq_dtype dt, hcq_reduce_op op);
/* a capture's graph variable now (realize.c); a seed's stream as given */
uint64_t tt_gvar_value(const hcq_ctx *ctx, const tt_gvar *v);

#endif
