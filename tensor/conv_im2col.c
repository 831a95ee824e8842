/* Convolution as a matrix product on CPU-style targets: the input's
 * windows are copied into a [groups, N*OH*OW, C/groups*KH*KW] matrix (one
 * elementwise kernel; [groups, N, OH*OW, ...] when the batch is a
 * variable, hcq_jit_dim, which a reshape must not merge with the pixels)
 * and multiplied by the weights, so the product gets
 * the matmul's register tile: along the output channels, which the direct
 * form (the output's last dim is OW, rarely a multiple of 8) does not
 * offer. Its gradients are matmuls and the windows' fold (grad_rules.c),
 * so training a CNN gets the same tiles in the backward pass (both
 * matrices are hcq_contiguous, whose gradients are materialized in the
 * same layout). */
#include "tensor/tt.h"

#include <string.h>

/* x [N, C, H, W] and w [O, C/g, KH, KW] as f32 (or i32) already; NULL when
 * the direct form suits better (the caller falls back to it) */
hcq_tensor *tt_conv2d_im2col(hcq_tensor *x, hcq_tensor *w, const int stride[2], const int pad[2], const int dil[2], int g)
{
    hcq_ctx *ctx = x->ctx;
    const tt_node *nx = x->n, *nw = w->n;
    int64_t N = nx->shape[0], C = nx->shape[1], O = nw->shape[0], KH = nw->shape[2], KW = nw->shape[3];
    bool vbatch = nx->sym[0] != 0;
    int64_t K = C / g * KH * KW;
    int64_t pads[8] = {0, 0, 0, 0, pad[0], pad[0], pad[1], pad[1]};
    /* the matrix reads each input element KH*KW times: computed once
     * (a pooling or normalization before the convolution would otherwise
     * be recomputed for every window it falls in) */
    x = hcq_contiguous(x);
    hcq_tensor *p = hcq_pad(x, pads, 4, 0.0);
    if (!p) return NULL;
    tt_node *h = tt_mv_window(p->n, 2, KH, stride[0], dil[0]);       /* [N, C, OH, KH, W'] */
    tt_node *v = h ? tt_mv_window(h, 4, KW, stride[1], dil[1]) : NULL; /* [N, C, OH, KH, OW, KW] */
    tt_node_unref(h);
    hcq_tensor *win = tt_wrap(ctx, v);
    if (!win) return NULL;
    int64_t OH = win->n->shape[2], OW = win->n->shape[4], M = N * OH * OW;
    /* [g, N, OH, OW, C/g, KH, KW], copied row-major: the rows of the matrix */
    hcq_tensor *cols = hcq_reshape(win, HCQ_SHAPE(N, g, C / g, OH, KH, OW, KW));
    cols = hcq_permute(cols, HCQ_AXES(1, 0, 3, 5, 2, 4, 6));
    /* materialized in the matrix's own shape: the product then indexes a
     * [g, M, K] buffer directly (a view merging the dims of a 7-d one is
     * not seen as affine by the tile planner) */
    if (vbatch) { /* a variable batch (hcq_jit_dim) stays a dim of its own: [g, N, OH*OW, K] */
        cols = hcq_contiguous(hcq_reshape(cols, HCQ_SHAPE(g, N, OH * OW, K)));
        /* (the product's own gradients: the custom rule below sums no broadcast batch) */
        hcq_tensor *wv = hcq_unsqueeze(hcq_transpose(hcq_reshape(w, HCQ_SHAPE(g, O / g, K)), 1, 2), 1); /* [g, 1, K, O/g] */
        hcq_tensor *rv = hcq_contiguous(hcq_matmul(cols, wv)); /* [g, N, OH*OW, O/g] */
        rv = hcq_reshape(rv, HCQ_SHAPE(g, N, OH, OW, O / g));
        return hcq_reshape(hcq_permute(rv, HCQ_AXES(1, 0, 4, 2, 3)), HCQ_SHAPE(N, O, OH, OW));
    }
    cols = hcq_contiguous(hcq_reshape(cols, HCQ_SHAPE(g, M, K)));
    hcq_tensor *wm = hcq_reshape(w, HCQ_SHAPE(g, O / g, K));
    /* contiguous: no kernel more forward (the product is one), and the
     * output's gradient is materialized in this layout for the backward
     * products (grad_rules.c) instead of read through the permute */
    hcq_tensor *wt = hcq_transpose(wm, 1, 2), *prod = hcq_matmul(cols, wt); /* [g, M, O/g] */
    /* the backward products read w K-major as it is stored (d cols = g @ w
     * gets the register tile along K), not the N-major copy the forward
     * product makes of it */
    tt_ad_custom(prod, TT_AD_MATMUL, (hcq_tensor *[]){cols, wt}, 2);
    hcq_tensor *r = hcq_contiguous(prod);
    r = hcq_reshape(r, HCQ_SHAPE(g, N, OH, OW, O / g));
    return hcq_reshape(hcq_permute(r, HCQ_AXES(1, 0, 4, 2, 3)), HCQ_SHAPE(N, O, OH, OW));
}
