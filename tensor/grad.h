/* tensor/grad.h: the autodiff records and the backward pass's builder,
 * shared by grad.c (records, hcq_backward) and grad_rules.c (each op's
 * vector-Jacobian product). */
#ifndef HCQ_TENSOR_GRAD_H
#define HCQ_TENSOR_GRAD_H

#include "tensor/tt.h"

/* How a node that needs gradients was made. It holds its own references to
 * the sources, so it survives the node's realization (which drops n->src):
 * a backward pass after the forward was realized reads the realized values. */
typedef struct tt_ad {
    uint8_t op;   /* the node's op when it was made */
    uint8_t rop;  /* TT_REDUCE */
    uint8_t nsrc;
    uint8_t mv;   /* TT_VIEW made by a movement op: its tt_mv_kind; TT_AD_MV_COPY for an identity copy */
    bool leaf;    /* hcq_requires_grad: the gradient is kept in `grad` */
    uint32_t axes; /* TT_REDUCE: the reduced axes; TT_GATHER: the axis; flips: the axes */
    tt_node *src[3]; /* TT_VIEW: src[0] is the movement's argument */
    int64_t arg[TT_MAX_DIMS]; /* pad: elements before; shrink: begin; step: steps */
    uint8_t perm[TT_MAX_DIMS];
    int axis;
    int64_t k, stride, dil; /* window */
    tt_node *grad; /* a leaf's accumulated gradient (referenced) */
    /* hcq_backward's scratch */
    tt_node *pending; /* the gradient summed so far (owned by the pass's builder) */
    uint64_t walk;
} tt_ad;

#define TT_AD_MV_COPY 0xff   /* an identity view (hcq_detach-like copies) */
#define TT_AD_MV_CONTIG 0xfe /* hcq_contiguous: its gradient is materialized too */

/* The backward pass's builder: owns a reference to every node it makes,
 * so a failed pass frees everything and a finished one keeps only what
 * the leaves' gradients reference. Builders borrow their arguments and
 * return NULL (with oom or err set) after any failure, so chains are
 * checked once. */
typedef struct tt_gb {
    hcq_ctx *ctx; /* for rules written with the public ops */
    tt_node **nodes;
    uint32_t n, cap;
    hcq_status err;
} tt_gb;

tt_node *tt_gb_own(tt_gb *B, tt_node *x); /* takes the reference; NULL sets err */
void tt_gb_free(tt_gb *B);

/* The contributions of g (the gradient of x) to x's sources: c[i] gets a
 * node of src[i]'s shape and dtype, or NULL where src i needs none. */
hcq_status tt_ad_vjp(tt_gb *B, tt_node *x, tt_node *g, tt_node *c[3]);

#endif
