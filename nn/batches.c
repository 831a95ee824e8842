/* The batch iterator: samples in host memory (converted to f32 once),
 * an order per epoch from a seeded Fisher-Yates shuffle, and two device
 * tensors per batch size that each batch overwrites. */
#include "nn/nn.h"

#include <stdlib.h>
#include <string.h>

struct hcq_batches {
    hcq_ctx *ctx;
    int64_t n, batch, count;
    int64_t sample; /* elements per sample */
    int ndim;
    int64_t shape[HCQ_MAX_DIMS]; /* a sample's */
    float *x;
    int32_t *y;
    int64_t *order;
    uint64_t seed;
    int part, nparts; /* hcq_batches_split: each batch's part `part` of nparts */
    float *stage_x;
    int32_t *stage_y;
    hcq_tensor *bx[2], *by[2]; /* full batches; the last, smaller one */
};

static bool live(const hcq_batches *b) { return b && base_handle_live(b, NN_H_BATCHES); }

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

hcq_status hcq_batches_destroy(hcq_batches *b)
{
    if (!b) return HCQ_OK;
    if (!live(b)) return base_err(HCQ_ESTATE, "hcq_batches_destroy: not a live batch iterator (destroyed twice?)");
    base_handle_remove(b, NN_H_BATCHES);
    for (int i = 0; i < 2; i++) {
        if (b->bx[i] && hcq_tensor_ctx(b->bx[i])) hcq_tensor_free(b->bx[i]);
        if (b->by[i] && hcq_tensor_ctx(b->by[i])) hcq_tensor_free(b->by[i]);
    }
    free(b->x);
    free(b->y);
    free(b->order);
    free(b->stage_x);
    free(b->stage_y);
    free(b);
    return HCQ_OK;
}

static hcq_status pair(hcq_batches *b, int k, int64_t rows)
{
    int64_t xs[HCQ_MAX_DIMS + 1] = {rows};
    memcpy(xs + 1, b->shape, (size_t)b->ndim * sizeof *xs);
    b->bx[k] = hcq_empty(b->ctx, HCQ_F32, xs, b->ndim + 1);
    b->by[k] = hcq_empty(b->ctx, HCQ_I32, &rows, 1);
    return b->bx[k] && b->by[k] ? HCQ_OK : hcq_error_status();
}

hcq_batches *hcq_batches_create(hcq_ctx *ctx, const hcq_idx *x, const hcq_idx *y, int64_t batch, double scale,
                                uint64_t seed, bool keep_last)
{
    const char *fn = "hcq_batches_create";
    if (!hcq_ctx_device(ctx)) return base_err(HCQ_ESTATE, "%s: not a live context", fn), NULL;
    if (!x || !y || !x->data || !y->data) return base_err(HCQ_EINVAL, "%s: x or y is missing", fn), NULL;
    if (x->ndim < 1 || x->ndim > HCQ_MAX_DIMS - 1 || y->ndim != 1 || x->shape[0] != y->shape[0])
        return base_err(HCQ_EINVAL, "%s: x [n, ...] (up to %d dims) and y [n] must have the same n (x has %d dims, y %d)", fn,
                        HCQ_MAX_DIMS - 1, x->ndim, y->ndim),
               NULL;
    int64_t n = x->shape[0];
    if (batch < 1 || batch > n) return base_err(HCQ_EINVAL, "%s: batch %lld for %lld samples", fn, (long long)batch, (long long)n), NULL;
    /* the shapes against the data the two hold: an hcq_idx is a plain
     * struct anyone may fill in, and a shape whose product wraps would make
     * every read below run past its data */
    int64_t xnumel = 1;
    bool wraps = false;
    for (int d = 0; d < x->ndim; d++)
        wraps |= x->shape[d] < 0 || __builtin_mul_overflow(xnumel, x->shape[d], &xnumel);
    uint64_t xes = nn_idx_elem_size(x->type), yes = nn_idx_elem_size(y->type);
    if (wraps || !xes || !yes || (uint64_t)xnumel > x->size_B / xes || (uint64_t)n > y->size_B / yes ||
        (uint64_t)xnumel > (SIZE_MAX - 1) / sizeof(float))
        return base_err(HCQ_EINVAL, "%s: x's or y's shape does not match the data it holds (x: %zu bytes, y: %zu bytes)",
                        fn, x->size_B, y->size_B),
               NULL;
    hcq_batches *b = base_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->ctx = ctx;
    b->n = n;
    b->batch = batch;
    b->count = keep_last ? (n + batch - 1) / batch : n / batch;
    b->ndim = x->ndim - 1;
    b->sample = 1;
    for (int d = 1; d < x->ndim; d++) {
        b->shape[d - 1] = x->shape[d];
        b->sample *= x->shape[d];
    }
    b->seed = seed;
    b->nparts = 1;
    b->x = malloc((size_t)(n * b->sample + 1) * sizeof *b->x);
    b->y = malloc((size_t)n * sizeof *b->y);
    b->order = malloc((size_t)n * sizeof *b->order);
    b->stage_x = malloc((size_t)(batch * b->sample + 1) * sizeof *b->stage_x);
    b->stage_y = malloc((size_t)batch * sizeof *b->stage_y);
    hcq_status s = b->x && b->y && b->order && b->stage_x && b->stage_y ? HCQ_OK : base_err(HCQ_ENOMEM, "%s: host memory for %lld samples", fn, (long long)n);
    for (int64_t i = 0; !s && i < n * b->sample; i++) b->x[i] = (float)(hcq_idx_get(x, i) * scale);
    for (int64_t i = 0; !s && i < n; i++) {
        b->y[i] = (int32_t)hcq_idx_get(y, i);
        b->order[i] = i;
    }
    if (!s) s = pair(b, 0, batch);
    if (!s && n % batch && keep_last) s = pair(b, 1, n % batch);
    base_handle_add(b, NN_H_BATCHES);
    if (s) {
        hcq_batches_destroy(b);
        return NULL;
    }
    return b;
}

int64_t hcq_batches_count(const hcq_batches *b) { return live(b) ? b->count : 0; }

hcq_status hcq_batches_shuffle(hcq_batches *b, uint64_t epoch)
{
    if (!live(b)) return base_err(HCQ_ESTATE, "hcq_batches_shuffle: not a live batch iterator");
    uint64_t st = b->seed * 0x9e3779b97f4a7c15ull ^ (epoch + 1) * 0xd1b54a32d192ed03ull;
    for (int64_t i = 0; i < b->n; i++) b->order[i] = i;
    for (int64_t i = b->n - 1; i > 0; i--) {
        int64_t j = (int64_t)(splitmix(&st) % (uint64_t)(i + 1));
        int64_t t = b->order[i];
        b->order[i] = b->order[j];
        b->order[j] = t;
    }
    return HCQ_OK;
}

hcq_status hcq_batches_split(hcq_batches *b, int part, int nparts)
{
    const char *fn = "hcq_batches_split";
    if (!live(b)) return base_err(HCQ_ESTATE, "%s: not a live batch iterator", fn);
    int64_t last = b->by[1] ? b->n % b->batch : 0;
    if (nparts < 1 || part < 0 || part >= nparts || b->batch % nparts || last % nparts)
        return base_err(HCQ_EINVAL, "%s: part %d of %d for batches of %lld%s%lld (the parts must be equal: a batch size "
                        "divisible by the parts)",
                        fn, part, nparts, (long long)b->batch, last ? " and a last batch of " : "", (long long)last);
    hcq_tensor *old[4] = {b->bx[0], b->by[0], b->bx[1], b->by[1]};
    b->bx[0] = b->by[0] = b->bx[1] = b->by[1] = NULL;
    hcq_status s = pair(b, 0, b->batch / nparts);
    if (!s && last) s = pair(b, 1, last / nparts);
    if (s) { /* the iterator as it was */
        for (int k = 0; k < 2; k++) {
            if (b->bx[k]) hcq_tensor_free(b->bx[k]);
            if (b->by[k]) hcq_tensor_free(b->by[k]);
        }
        b->bx[0] = old[0], b->by[0] = old[1], b->bx[1] = old[2], b->by[1] = old[3];
        return s;
    }
    for (int k = 0; k < 4; k++)
        if (old[k] && hcq_tensor_ctx(old[k])) hcq_tensor_free(old[k]);
    b->part = part;
    b->nparts = nparts;
    return HCQ_OK;
}

hcq_status hcq_batches_get(hcq_batches *b, int64_t i, hcq_tensor **x, hcq_tensor **y)
{
    const char *fn = "hcq_batches_get";
    if (!live(b)) return base_err(HCQ_ESTATE, "%s: not a live batch iterator", fn);
    if (!x || !y) return base_err(HCQ_EINVAL, "%s: x or y is NULL", fn);
    if (i < 0 || i >= b->count) return base_err(HCQ_EINVAL, "%s: batch %lld of %lld", fn, (long long)i, (long long)b->count);
    int64_t first = i * b->batch, rows = b->n - first < b->batch ? b->n - first : b->batch;
    int k = rows < b->batch;
    rows /= b->nparts; /* the part's rows (the parts are equal: hcq_batches_split) */
    first += b->part * rows;
    for (int64_t r = 0; r < rows; r++) {
        int64_t s = b->order[first + r];
        memcpy(b->stage_x + r * b->sample, b->x + s * b->sample, (size_t)b->sample * sizeof *b->x);
        b->stage_y[r] = b->y[s];
    }
    hcq_status s = hcq_tensor_write(b->bx[k], b->stage_x, (size_t)(rows * b->sample) * sizeof *b->stage_x);
    if (!s) s = hcq_tensor_write(b->by[k], b->stage_y, (size_t)rows * sizeof *b->stage_y);
    if (s) return s;
    *x = b->bx[k];
    *y = b->by[k];
    return HCQ_OK;
}
