/* tensor/lower.h: what lower.c (kernel skeletons, per-device plans) and
 * emit.c (node values as IR) share. */
#ifndef HCQ_TENSOR_LOWER_H
#define HCQ_TENSOR_LOWER_H

#include "tensor/tt.h"

/* One output element a kernel work-item computes: its index along each
 * dim of the node being emitted, and the condition under which the value
 * is needed (NONE: always). Several lanes are emitted together so a
 * reduction runs one loop for all of them. */
typedef struct tt_lane {
    const tt_sx *idx[TT_MAX_DIMS];
    hcq_ir_ref gate;
} tt_lane;

/* How a kernel is laid out on the device. */
typedef struct tt_plan {
    int up_dim[2];   /* output dims computed several per work-item (-1: none) */
    int64_t up[2];   /* ... and how many */
    bool ragged;     /* up[0] need not divide its dim: rows past the edge read
                        the last row (clamped) and are not stored */
    tt_node *main;   /* the reduction the plan is about (on the root's own index), or NULL */
    int64_t red_up;  /* CPU: accumulators over the main reduction's innermost axis */
    bool group;      /* GPU: a work-group per output, reducing through local memory */
    uint32_t L;      /* work-items per group */
    uint64_t items;  /* work-items with work */
    int64_t cblock;  /* CPU register tile: consecutive work-items walk dr within
                        blocks of cblock tiles along dv (0: the plain order) */
    int64_t smem_bk; /* register tile staged through shared memory: the reduction
                        runs in slices of smem_bk, each slice of both operands
                        copied to local memory by the whole group (0: none) */
    uint32_t smem_gv; /* ... the group is L / smem_gv tile rows by smem_gv tile
                         columns; work-item lid is tile row lid / smem_gv */
    int64_t vec;      /* loads and stores of up to vec consecutive elements as one
                         vector access where aligned (vec.c; 0: none) */
    bool vec_all;     /* ... every such access, the list refused where one is not */
    struct {             /* tensor cores (tc.c; kind HCQ_MMA_NONE: not used): each
                            warp runs bm x bn MMA blocks of output dims dm x dn, the
                            group wm x (L / warp / wm) warps */
        hcq_mma_kind kind;
        int dm, dn;
        int64_t bm, bn, wm;
        int64_t ki; /* kind is the space's tc_kinds[ki] */
        int64_t sk; /* staged: slices of sk k-steps copied to local memory by the group (0: none) */
    } tc;
} tt_plan;

/* ** the optimization space (plan.c)
 *
 * A kernel's plan is a list of explicit choices over its dims; tt_plan_apply
 * is the one place a list becomes the tt_plan the lowering follows. The
 * heuristics of lower.c's choose() produce the default list (tt_opts_from_plan
 * of their plan), which applies back to exactly that plan; a search
 * (beam.c) lowers other lists. The choices themselves (tt_opt) are in
 * tt.h: the kernel cache and the search keep them. */
/* What a plan is chosen over: fixed by the kernel, whatever the choices. */
typedef struct tt_space {
    int ndim;
    int64_t shape[TT_MAX_DIMS];
    uint8_t sym[TT_MAX_DIMS]; /* variable dims are never upcast */
    tt_node *main;            /* the main reduction, or NULL */
    uint64_t rsize;           /* its reduced elements */
    int64_t rin;              /* its innermost reduced axis' size */
    bool main_sym;            /* it runs over a variable dim */
    bool cpu;                 /* a CPU-style target */
    uint32_t maxl;            /* work-items per group at most */
    uint32_t max_local_bytes;
    uint32_t acc_bytes;       /* an accumulator of the main reduction */
    /* shared-memory staging (smem): the main reduction is a sum of products
     * reached from the root through elementwise ops and reshapes only, and
     * each factor's value depends on the output dims in dep[i] (bits) */
    const char *smem_why; /* why not (NULL: it is) */
    uint32_t dep[2];
    uint32_t op_bytes[2]; /* an element of each factor */
    bool kfast[2];        /* ... read contiguously along the reduction (copied in that order) */
    uint32_t out_bytes;   /* an element of the (first) output: vector(N) takes N x it <= 16 */
    /* tensor cores (tc.c): the target's kind for the product's input dtype
     * (HCQ_MMA_NONE with tc_why saying why not), and the default dims */
    hcq_mma_kind tc_kind;
    hcq_mma_kind tc_kinds[4]; /* every kind for it the target writes, best first (tc_kinds[0] = tc_kind) */
    uint32_t tc_nkinds;
    int tc_dm, tc_dn;
    hcq_status tc_st; /* the refusal's status: HCQ_ENOTSUP where the target lacks a kind */
    char tc_why[256];
} tt_space;

/* "upcast" ... */
const char *tt_opt_name(tt_opt_kind k);
/* The list in words: "upcast0(d1,8) pad(d1,8) upcast1(d2,64) local(4)". */
void tt_opts_format(const tt_opts *o, char *buf, size_t size);
/* The list that applies to plan P. */
void tt_opts_from_plan(const tt_plan *P, tt_opts *out);
/* The plan a list gives in space sp; HCQ_EINVAL (or HCQ_ENOTSUP for a
 * choice no target takes yet) saying which choice does not fit, P untouched. */
hcq_status tt_plan_apply(const tt_space *sp, const tt_opts *o, tt_plan *P);
/* Output tiles along dim d of shape S under plan P's upcasts. */
static inline int64_t tt_plan_tiles(const int64_t *S, const tt_plan *P, int d)
{
    int64_t t = S[d];
    for (int u = 0; u < 2; u++)
        if (P->up_dim[u] == d) t = (t + P->up[u] - 1) / P->up[u];
    return t;
}
/* smem.c: fills sp's smem fields for the kernel at root (L->plan.main
 * found); the GPU default plan P (its register tile chosen, items counted)
 * staged where it fits: true with smem_bk, smem_gv, L and items set. */
void tt_smem_space(struct tt_lw *L, tt_node *root, tt_space *sp, bool main_sym);
bool tt_smem_default(struct tt_lw *L, tt_plan *P, const int64_t *S, uint64_t rsize, uint32_t maxl);
/* smem: which factor of the main product is staged as the tile's rows
 * (0 or 1), -1 when neither fits dr and dv. */
int tt_smem_rows_factor(const tt_space *sp, int dr, int dv);
/* smem: a factor copied along the reduction (consecutive work-items
 * storing to one row of [k][row] local memory, a row apart) has its rows
 * TT_SMEM_PAD elements longer, so those stores fall in different banks and
 * a row still starts 16-byte aligned (the tile's reads stay vector loads). */
#define TT_SMEM_PAD 4
/* The local memory an smem plan takes (the pad counted for both factors). */
uint64_t tt_smem_bytes(const tt_space *sp, int rows_factor, uint64_t bm, uint64_t bn, uint64_t bk);
/* ** vector accesses (vec.c; the plan's vec)
 *
 * Element idx[l] of buffer buf (a param or a local array, elements of dt)
 * for lanes l < n under gate[l] (NONE: always): runs of lanes whose
 * indexes are idx[l] + 0, 1, .. w-1 under one gate, idx[l] a multiple of w
 * for every work-item, become one w-lane access (w: the plan's vec, halved
 * until w x |dt| <= 16 bytes); the rest stay scalar (or, vec_all, make the
 * kernel's error). alt: a gated load's value where its gate is false. With
 * no vec (CPU plans) they emit exactly the scalar loads and stores. */
void tt_vec_load(struct tt_lw *L, hcq_ir_ref buf, int n, const tt_sx *const *idx, const hcq_ir_ref *gate, hcq_ir_ref alt,
                 hcq_ir_ref *out, const char *what);
void tt_vec_store(struct tt_lw *L, hcq_ir_ref buf, int n, const tt_sx *const *idx, const hcq_ir_ref *val, const hcq_ir_ref *gate,
                  const char *what);
/* The lanes of one access of dt under plan P (0: scalar). */
unsigned tt_vec_width(const tt_plan *P, hcq_dtype dt);
/* beam.c: the lists one choice away from o in space sp, as the search
 * makes them (at most max; for tests). */
uint32_t tt_beam_neighbours(const tt_space *sp, const tt_opts *o, tt_opts *list, uint32_t max);
/* tc.c: fills sp's tc fields (after tt_smem_space); the tc rules of a
 * list (plan.c calls them for a list with tc choices: local given); the
 * GPU default (true with P's tc, L and items set, its upcasts dropped);
 * the kernel's skeleton under a tc plan (tt_lower_opts: ids, lanes,
 * values, stores); and the main reduction as MMAs (emit.c's em_reduce:
 * false, nothing emitted, when the lanes are not the skeleton's). */
void tt_tc_space(struct tt_lw *L, tt_node *root, tt_space *sp);
hcq_status tt_tc_rules(const tt_space *sp, tt_plan *P, int64_t local);
bool tt_tc_default(struct tt_lw *L, tt_plan *P, const int64_t *S, uint64_t rsize, uint32_t maxl);
hcq_status tt_tc_lower(struct tt_lw *L, tt_node *const *roots, uint32_t nroots, uint64_t grid);
bool tt_tc_reduce(struct tt_lw *L, tt_node *R, int nl, const tt_lane *lanes, hcq_ir_ref *out);
/* Whether two plans lay a kernel out alike. */
bool tt_plan_same(const tt_plan *a, const tt_plan *b);

typedef struct memo_ent memo_ent;

typedef struct tt_lw {
    hcq_ctx *ctx;
    tt_irb b;
    tt_arena ar;
    tt_sym sym;
    tt_plan plan;
    tt_space space; /* the kernel's optimization space (choose) */
    tt_opts opts;   /* the choices plan was applied from */
    const tt_key *key;              /* inputs: param nout + i is key->in[i] */
    uint32_t nout;
    hcq_ir_ref pref[TT_MAX_PARAMS]; /* param refs, the outputs first */
    memo_ent *memo;
    uint32_t mcap, mcount, mgen; /* entries of older generations are empty */
    hcq_ir_ref lid, lds; /* group mode: local id, local memory */
    /* smem mode (tt_lower -> em_reduce): the tile lanes in the root's index,
     * the group's first row and column (base[dr], base[dv]) and the other
     * dims' indexes, and the work-item's tile row and column in the group */
    struct {
        const tt_lane *tile;
        const tt_node *root;
        const tt_sx *base[TT_MAX_DIMS];
        const tt_sx *tr, *tc;
        hcq_ir_ref lid;
    } sm;
    bool lds_used;       /* ... which an earlier reduction of the kernel used */
    int8_t tc_writes[HCQ_MMA_KINDS]; /* the target's compiler writes the kind's MMA: 1, -1 not, 0 not known yet (tc.c) */
    /* tc mode (tt_tc_lower -> tt_tc_reduce): the lanes of the work-item's D
     * fragments, the warp's first row and column, the other dims' indexes
     * and the lane in the warp */
    struct {
        const tt_lane *tile;
        const tt_node *root;
        const tt_sx *row0, *col0, *base[TT_MAX_DIMS];
        const tt_sx *grow0, *gcol0, *wrow, *wcol, *lid; /* the group's first row and column, the warp's
                                                            offsets from them, the local id */
        hcq_ir_ref lane;
    } tc;
    /* the other outputs' main reductions (the plan's structure: run as it) */
    const tt_node *mains[TT_MAX_PARAMS];
    uint32_t nmains;
    uint32_t pstamp; /* tt_node.lstamp of this lowering */
    const tt_sx *vsx[TT_MAX_SYMS]; /* the variables' values as index atoms (tt_mem_linear) */
    double mult, flops;  /* loop trip product where ops are emitted; float ops per work-item */
    hcq_status err;
} tt_lw;

/* n lies on a path from a root to a main reduction: its sources on such
 * a path are emitted first, so the reduction's loop comes before the
 * loads of the values combined with its result (they are not live across
 * the loop: an optimizer update fused after a gradient's matmul tile). */
static inline bool tt_on_main_path(const tt_lw *L, const tt_node *n) { return n->lstamp == L->pstamp && n->lpath; }
/* Values of node n at each lane (out[nl]). */
void tt_em(tt_lw *L, tt_node *n, int nl, const tt_lane *lanes, hcq_ir_ref *out);
/* An index expression as an i32 IR value. */
hcq_ir_ref tt_em_sx(tt_lw *L, const tt_sx *x);
/* sum(idx[d] * row-major stride[d]) over a shape */
const tt_sx *tt_linear(tt_lw *L, const tt_sx *const *idx, const int64_t *shape, int ndim);
/* The element of n's memory at idx, an index of its shape in the
 * lowering's space (variable dims at their upper bound): row-major at the
 * variables' bound values, so a stride with a variable dim inside it is a
 * symbolic coefficient (tt_sx_mulv); tt_linear when n has none. */
const tt_sx *tt_mem_linear(tt_lw *L, const tt_node *n, const tt_sx *const *idx);
/* A linear index as the per-dim indexes of a row-major shape. */
void tt_decompose(tt_lw *L, const tt_sx *lin, const int64_t *shape, int ndim, const tt_sx **out);
/* The i32 param holding the value of variable `var` (1-based). */
hcq_ir_ref tt_var_param(tt_lw *L, int var);
/* The param holding buf, or rand's seed (registered before emission). */
hcq_ir_ref tt_param_of(tt_lw *L, const tt_buf *buf, const tt_node *rand);
/* The index a view maps lane idx to in its source, and the validity of
 * the lane: 1 always valid, 0 never, -1 when *valid (an IR bool) says. */
int tt_view_apply(tt_lw *L, const tt_node *v, const tt_sx *const *idx, const tt_sx **src_idx, hcq_ir_ref *valid);
void tt_memo_reset(tt_lw *L);
void tt_memo_free(tt_lw *L);

#endif
