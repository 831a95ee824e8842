/* Data-parallel training (nn.h): one replica of a model per device, each
 * replica's gradients and float buffers packed into one f32 vector of its
 * own (a tensor made by hcq_empty, so its buffer is stable and JIT
 * replays write it), the vectors averaged with hcq_allreduce, and the
 * mean unpacked into each replica's gradients and buffers before its
 * optimizer step. Across processes the vectors go through host memory
 * and the caller's gather hook (MPI in the examples), reduced here in
 * hcq_allreduce's stated order so one process with every device and
 * several processes sharing them get the same bits. */
#include "nn/nn.h"

#include <stdlib.h>
#include <string.h>

#define DP_MAX 64

typedef struct dp_item {
    int entry;       /* index in each replica's parameter list */
    bool trainable;  /* a gradient, else a buffer's value */
    int64_t off, n;  /* where it lies in the vector, elements */
} dp_item;

struct hcq_dp {
    int n;
    hcq_params *rep[DP_MAX];
    hcq_optim *opt[DP_MAX];
    hcq_tensor *vec[DP_MAX]; /* [count] f32 in replica i's context */
    dp_item *item;
    int nitem;
    int64_t count;
    /* across processes */
    int rank, nranks;
    hcq_dp_gather_fn gather;
    void *user;
    float *host; /* nranks * n * count: every rank's vectors */
};

static bool live(const hcq_dp *dp) { return dp && base_handle_live(dp, NN_H_DP); }

static bool is_float(hcq_dtype dt) { return dt == HCQ_F16 || dt == HCQ_BF16 || dt == HCQ_F32 || dt == HCQ_F64; }

hcq_status hcq_dp_destroy(hcq_dp *dp)
{
    if (!dp) return HCQ_OK;
    if (!live(dp)) return base_err(HCQ_ESTATE, "hcq_dp_destroy: not a live data-parallel set (destroyed twice?)");
    base_handle_remove(dp, NN_H_DP);
    for (int i = 0; i < dp->n; i++)
        if (dp->vec[i] && hcq_tensor_ctx(dp->vec[i])) hcq_tensor_free(dp->vec[i]);
    free(dp->item);
    free(dp->host);
    free(dp);
    return HCQ_OK;
}

/* replica i's list against replica 0's: names, shapes, dtypes, kinds */
static hcq_status same_model(const hcq_params *a, const hcq_params *b, int i, const char *fn)
{
    if (a->n != b->n)
        return base_err(HCQ_EINVAL, "%s: replica %d has %d parameters and buffers, replica 0 %d", fn, i, b->n, a->n);
    for (int k = 0; k < a->n; k++) {
        const nn_entry *x = &a->e[k], *y = &b->e[k];
        int64_t sx[HCQ_MAX_DIMS], sy[HCQ_MAX_DIMS];
        int nx = hcq_tensor_shape(x->t, sx), ny = hcq_tensor_shape(y->t, sy);
        if (strcmp(x->name, y->name) || x->trainable != y->trainable || nx != ny || memcmp(sx, sy, (size_t)nx * sizeof *sx) ||
            hcq_tensor_dtype(x->t) != hcq_tensor_dtype(y->t))
            return base_err(HCQ_EINVAL, "%s: replica %d's entry %d (\"%s\") differs from replica 0's (\"%s\") in its name, kind, "
                            "shape or dtype: build every replica alike",
                            fn, i, k, y->name, x->name);
    }
    return HCQ_OK;
}

/* replica 0's values (parameters, buffers, optimizer state) into replica i's */
static hcq_status copy_from_first(hcq_dp *dp, int i)
{
    int ns0 = nn_optim_state(dp->opt[0], NULL, 0), nsi = nn_optim_state(dp->opt[i], NULL, 0);
    if (ns0 != nsi) return base_err(HCQ_EINVAL, "hcq_dp_create: replica %d's optimizer state differs from replica 0's", i);
    hcq_tensor **s0 = base_calloc((size_t)ns0, sizeof *s0), **si = base_calloc((size_t)ns0, sizeof *si);
    if (!s0 || !si) {
        free(s0);
        free(si);
        return hcq_error_status();
    }
    nn_optim_state(dp->opt[0], s0, ns0);
    nn_optim_state(dp->opt[i], si, ns0);
    hcq_ctx *ctx = dp->rep[i]->ctx;
    size_t mark = hcq_ctx_mark(ctx);
    bool prev = hcq_set_grad_enabled(false);
    hcq_status s = HCQ_OK;
    for (int k = 0; k < dp->rep[0]->n && !s; k++) {
        hcq_tensor *v = hcq_tensor_to(ctx, dp->rep[0]->e[k].t);
        s = v ? hcq_assign(dp->rep[i]->e[k].t, v) : hcq_error_status();
    }
    for (int k = 0; k < ns0 && !s; k++) {
        hcq_tensor *v = hcq_tensor_to(ctx, s0[k]);
        s = v ? hcq_assign(si[k], v) : hcq_error_status();
    }
    hcq_set_grad_enabled(prev);
    hcq_ctx_release(ctx, mark);
    free(s0);
    free(si);
    return s;
}

hcq_dp *hcq_dp_create(hcq_params *const *replicas, hcq_optim *const *optims, int n)
{
    const char *fn = "hcq_dp_create";
    if (!replicas || !optims || n < 1 || n > DP_MAX)
        return base_err(HCQ_EINVAL, "%s: %d replicas (1 to %d, with an optimizer each)", fn, n, DP_MAX), NULL;
    for (int i = 0; i < n; i++) {
        if (!nn_params_live(replicas[i])) return base_err(HCQ_ESTATE, "%s: replica %d is not a live parameter list", fn, i), NULL;
        if (nn_optim_params(optims[i]) != replicas[i])
            return base_err(HCQ_EINVAL, "%s: optimizer %d is not a live optimizer made on replica %d's parameters", fn, i, i),
                   NULL;
        if (i && !nn_optim_alike(optims[0], optims[i]))
            return base_err(HCQ_EINVAL, "%s: optimizer %d's kind or settings differ from optimizer 0's", fn, i), NULL;
        hcq_device *d = hcq_ctx_device(replicas[i]->ctx);
        for (int j = 0; j < i; j++) /* (two opens of one GPU are two handles: its name says) */
            if (!strcmp(hcq_device_get_props(hcq_ctx_device(replicas[j]->ctx))->id, hcq_device_get_props(d)->id))
                return base_err(HCQ_EINVAL, "%s: replicas %d and %d are on one device (one replica per device)", fn, j, i), NULL;
        if (i && strcmp(hcq_device_get_props(d)->kind, hcq_device_get_props(hcq_ctx_device(replicas[0]->ctx))->kind))
            return base_err(HCQ_EINVAL, "%s: replica %d is on %s, replica 0 on %s: the replicas' devices must be of one kind "
                            "(hcq_allreduce shares memory only between those)",
                            fn, i, hcq_device_get_props(d)->id, hcq_device_get_props(hcq_ctx_device(replicas[0]->ctx))->id),
                   NULL;
        if (i && same_model(replicas[0], replicas[i], i, fn)) return NULL;
    }
    const hcq_params *p0 = replicas[0];
    bool any = false;
    for (int k = 0; k < p0->n; k++) {
        any |= p0->e[k].trainable;
        if (!is_float(hcq_tensor_dtype(p0->e[k].t)))
            return base_err(HCQ_EINVAL, "%s: \"%s\" is not a float tensor: only float parameters and buffers are averaged", fn,
                            p0->e[k].name),
                   NULL;
    }
    if (!any) return base_err(HCQ_EINVAL, "%s: the model has no trainable parameter", fn), NULL;

    hcq_dp *dp = base_calloc(1, sizeof *dp);
    if (!dp) return NULL;
    dp->n = n;
    dp->nranks = 1;
    dp->item = base_calloc((size_t)p0->n, sizeof *dp->item);
    if (!dp->item) return free(dp), NULL;
    /* the gradients first, then the buffers, each in the list's order */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < p0->n; k++) {
            if (p0->e[k].trainable != (pass == 0)) continue;
            int64_t m = hcq_tensor_numel(p0->e[k].t);
            dp->item[dp->nitem++] = (dp_item){.entry = k, .trainable = pass == 0, .off = dp->count, .n = m};
            dp->count += m;
        }
    base_handle_add(dp, NN_H_DP);
    hcq_status s = HCQ_OK;
    if (dp->count >= (int64_t)1 << 31)
        s = base_err(HCQ_ELIMIT, "%s: %lld elements to average; a tensor holds fewer than 2^31", fn, (long long)dp->count);
    for (int i = 0; i < n && !s; i++) {
        dp->rep[i] = replicas[i];
        dp->opt[i] = optims[i];
        dp->vec[i] = hcq_empty(replicas[i]->ctx, HCQ_F32, &dp->count, 1);
        if (!dp->vec[i]) s = hcq_error_status();
        else if (i) s = copy_from_first(dp, i);
    }
    for (int i = 0; i < n && !s; i++) s = hcq_device_synchronize(hcq_ctx_device(replicas[i]->ctx));
    if (s) {
        hcq_dp_destroy(dp);
        return NULL;
    }
    return dp;
}

int hcq_dp_count(const hcq_dp *dp) { return live(dp) ? dp->n : 0; }
int hcq_dp_part(const hcq_dp *dp, int i) { return live(dp) && i >= 0 && i < dp->n ? dp->rank * dp->n + i : -1; }
int hcq_dp_parts(const hcq_dp *dp) { return live(dp) ? dp->nranks * dp->n : -1; }

static hcq_status replica(hcq_dp *dp, int i, const char *fn)
{
    if (!live(dp)) return base_err(HCQ_ESTATE, "%s: not a live data-parallel set", fn);
    if (i < 0 || i >= dp->n) return base_err(HCQ_EINVAL, "%s: replica %d of %d", fn, i, dp->n);
    if (!nn_params_live(dp->rep[i]) || !hcq_tensor_ctx(dp->vec[i]))
        return base_err(HCQ_ESTATE, "%s: replica %d's parameters or context are gone", fn, i);
    return HCQ_OK;
}

hcq_status hcq_dp_grads(hcq_dp *dp, int i, hcq_tensor *const *also, int nalso)
{
    const char *fn = "hcq_dp_grads";
    hcq_status s = replica(dp, i, fn);
    if (s) return s;
    if (nalso < 0 || nalso > 64 || (nalso && !also)) return base_err(HCQ_EINVAL, "%s: %d tensors to realize (0 to 64)", fn, nalso);
    hcq_params *p = dp->rep[i];
    for (int k = 0; k < dp->nitem; k++) {
        const nn_entry *e = &p->e[dp->item[k].entry];
        if (dp->item[k].trainable && !hcq_has_grad(e->t))
            return base_err(HCQ_EINVAL, "%s: replica %d's \"%s\" has no gradient (call hcq_backward first; a parameter the "
                            "loss does not reach has none)",
                            fn, i, e->name);
    }
    hcq_tensor **parts = base_calloc((size_t)dp->nitem, sizeof *parts);
    if (!parts) return hcq_error_status();
    bool prev = hcq_set_grad_enabled(false);
    for (int k = 0; k < dp->nitem; k++) {
        const nn_entry *e = &p->e[dp->item[k].entry];
        hcq_tensor *v = dp->item[k].trainable ? hcq_grad(e->t) : hcq_detach(e->t);
        if (v && hcq_tensor_dtype(v) != HCQ_F32) v = hcq_cast(v, HCQ_F32);
        parts[k] = hcq_reshape(v, &dp->item[k].n, 1);
    }
    hcq_tensor *flat = dp->nitem == 1 ? parts[0] : hcq_cat(parts, dp->nitem, 0);
    free(parts);
    hcq_tensor *dst[65] = {dp->vec[i]}, *val[65] = {flat};
    for (int k = 0; k < nalso; k++) val[1 + k] = also[k]; /* dst NULL: realized in the same pass */
    s = flat ? hcq_assign_all(dst, val, 1 + nalso) : hcq_error_status();
    hcq_set_grad_enabled(prev);
    if (!s) s = hcq_params_zero_grad(p);
    return s;
}

hcq_status hcq_dp_apply(hcq_dp *dp, int i)
{
    const char *fn = "hcq_dp_apply";
    hcq_status s = replica(dp, i, fn);
    if (s) return s;
    hcq_params *p = dp->rep[i];
    int nbuf = 0;
    for (int k = 0; k < dp->nitem && !s; k++) {
        const dp_item *it = &dp->item[k];
        if (!it->trainable) {
            nbuf++;
            continue;
        }
        hcq_tensor *t = p->e[it->entry].t;
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        hcq_tensor *g = hcq_reshape(hcq_slice(dp->vec[i], 0, it->off, it->off + it->n, 1), shape, nd);
        s = g ? hcq_set_grad(t, g) : hcq_error_status();
    }
    if (!s) s = hcq_optim_step(dp->opt[i]);
    if (s || !nbuf) return s;
    hcq_tensor **dst = base_calloc((size_t)nbuf, sizeof *dst), **val = base_calloc((size_t)nbuf, sizeof *val);
    if (!dst || !val) {
        free(dst);
        free(val);
        return hcq_error_status();
    }
    bool prev = hcq_set_grad_enabled(false);
    int m = 0;
    for (int k = 0; k < dp->nitem; k++) {
        const dp_item *it = &dp->item[k];
        if (it->trainable) continue;
        hcq_tensor *t = p->e[it->entry].t;
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        dst[m] = t;
        val[m++] = hcq_reshape(hcq_slice(dp->vec[i], 0, it->off, it->off + it->n, 1), shape, nd);
    }
    bool ok = true;
    for (int k = 0; k < m; k++) ok &= val[k] != NULL;
    s = ok ? hcq_assign_all(dst, val, m) : hcq_error_status();
    hcq_set_grad_enabled(prev);
    free(dst);
    free(val);
    return s;
}

/* ** the mean */

/* The mean of w vectors of count f32 elements (x[v * count + k]) into out,
 * in hcq_allreduce's order for w devices (queue.h): chunk c, elements
 * [c*count/w, (c+1)*count/w), starts from vector c and adds vectors c+1,
 * ... mod w, the last addition divided by w; each operation rounds to f32
 * (no contraction: an addition, then a division). */
static void host_mean(const float *x, int w, int64_t count, float *out)
{
    for (int c = 0; c < w; c++) {
        int64_t lo = count * c / w, hi = count * (c + 1) / w;
        for (int64_t k = lo; k < hi; k++) {
            float acc = x[(int64_t)c * count + k];
            for (int m = 1; m < w; m++) {
                float v = x[(int64_t)((c + m) % w) * count + k];
                acc = m == w - 1 ? (acc + v) / (float)w : acc + v;
            }
            out[k] = acc;
        }
    }
}

static hcq_status reduce_ranks(hcq_dp *dp)
{
    const char *fn = "hcq_dp_reduce";
    size_t one = (size_t)dp->count * sizeof(float);
    float *mine = dp->host + (size_t)dp->rank * (size_t)dp->n * (size_t)dp->count;
    hcq_status s = HCQ_OK;
    for (int i = 0; i < dp->n && !s; i++) s = hcq_tensor_read(dp->vec[i], mine + (size_t)i * (size_t)dp->count, one);
    /* the gather reads `mine` and writes every rank's part of host, its own too */
    float *send = s ? NULL : malloc(one * (size_t)dp->n);
    if (!s && !send) s = base_err(HCQ_ENOMEM, "%s: %zu bytes of host memory", fn, one * (size_t)dp->n);
    if (!s) {
        memcpy(send, mine, one * (size_t)dp->n);
        s = dp->gather(dp->user, send, one * (size_t)dp->n, dp->host);
        if (s) base_err_prefix(s, "hcq_dp_reduce: the gather across ranks");
    }
    free(send);
    float *mean = s ? NULL : malloc(one ? one : 1);
    if (!s && !mean) s = base_err(HCQ_ENOMEM, "%s: %zu bytes of host memory", fn, one);
    if (!s) host_mean(dp->host, dp->nranks * dp->n, dp->count, mean);
    for (int i = 0; i < dp->n && !s; i++) s = hcq_tensor_write(dp->vec[i], mean, one);
    free(mean);
    return s;
}

hcq_status hcq_dp_reduce(hcq_dp *dp)
{
    const char *fn = "hcq_dp_reduce";
    if (!live(dp)) return base_err(HCQ_ESTATE, "%s: not a live data-parallel set", fn);
    for (int i = 0; i < dp->n; i++)
        if (!hcq_tensor_ctx(dp->vec[i])) return base_err(HCQ_ESTATE, "%s: replica %d's context is gone", fn, i);
    bool capturing = false;
    for (int i = 0; i < dp->n; i++) capturing |= hcq_ctx_capturing(hcq_tensor_ctx(dp->vec[i]));
    if (capturing && dp->nranks > 1)
        return base_err(HCQ_ENOTSUP, "%s: across ranks the mean goes through host memory and the caller's gather, "
                        "which a JIT's graph cannot replay; run hcq_dp_reduce outside the JIT", fn);
    if (dp->nranks > 1) return reduce_ranks(dp);
    if (dp->n == 1) return HCQ_OK;
    /* up to HCQ_SHARD_MAX replicas, through the tensor layer, so a JIT
     * over every replica's context (hcq_jit_create_multi) records the
     * all-reduce into its graph: the whole step is one replay */
    if (dp->n <= HCQ_SHARD_MAX) {
        hcq_status s = hcq_tensors_allreduce(dp->vec, dp->n, HCQ_REDUCE_MEAN);
        if (s) base_err_prefix(s, "%s", fn);
        return s;
    }
    if (capturing)
        return base_err(HCQ_ENOTSUP, "%s: %d replicas; a JIT captures the all-reduce of up to %d", fn, dp->n, HCQ_SHARD_MAX);
    hcq_buffer *b[DP_MAX];
    for (int i = 0; i < dp->n; i++)
        if (!(b[i] = hcq_tensor_buffer(dp->vec[i]))) return hcq_error_status();
    hcq_status s = hcq_allreduce(b, (uint32_t)dp->n, HCQ_F32, HCQ_REDUCE_MEAN);
    if (s) base_err_prefix(s, "%s", fn);
    return s;
}

/* ** across processes */

hcq_status hcq_dp_gather(hcq_dp *dp, const void *mine, size_t bytes, void *all)
{
    if (!live(dp)) return base_err(HCQ_ESTATE, "hcq_dp_gather: not a live data-parallel set");
    if (bytes && (!mine || !all)) return base_err(HCQ_EINVAL, "hcq_dp_gather: mine or all is NULL");
    if (dp->nranks == 1) {
        if (bytes) memmove(all, mine, bytes);
        return HCQ_OK;
    }
    hcq_status s = dp->gather(dp->user, mine, bytes, all);
    if (s) base_err_prefix(s, "hcq_dp_gather");
    return s;
}

/* FNV-1a over replica 0's parameters' and buffers' bytes */
static hcq_status values_hash(hcq_dp *dp, uint64_t *out)
{
    uint64_t h = 0xcbf29ce484222325ull;
    hcq_status s = HCQ_OK;
    for (int k = 0; k < dp->rep[0]->n && !s; k++) {
        hcq_tensor *t = dp->rep[0]->e[k].t;
        size_t size = (size_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
        unsigned char *b = malloc(size ? size : 1);
        if (!b) return base_err(HCQ_ENOMEM, "hcq_dp_set_ranks: %zu bytes of host memory", size);
        s = hcq_tensor_read(t, b, size);
        for (size_t j = 0; j < size && !s; j++) h = (h ^ b[j]) * 0x100000001b3ull;
        free(b);
    }
    if (!s) *out = h;
    return s;
}

hcq_status hcq_dp_set_ranks(hcq_dp *dp, int rank, int nranks, hcq_dp_gather_fn gather, void *user)
{
    const char *fn = "hcq_dp_set_ranks";
    if (!live(dp)) return base_err(HCQ_ESTATE, "%s: not a live data-parallel set", fn);
    if (nranks < 1 || rank < 0 || rank >= nranks || (nranks > 1 && !gather) || (int64_t)nranks * dp->n > DP_MAX * 1024)
        return base_err(HCQ_EINVAL, "%s: rank %d of %d%s", fn, rank, nranks, nranks > 1 && !gather ? " without a gather" : "");
    float *host = NULL;
    if (nranks > 1) {
        size_t want = (size_t)nranks * (size_t)dp->n * (size_t)dp->count;
        if (!(host = malloc((want ? want : 1) * sizeof *host)))
            return base_err(HCQ_ENOMEM, "%s: %zu bytes of host memory for %d ranks' vectors", fn, want * sizeof *host, nranks);
        /* every rank must have the same replicas and model: one gather of
         * (replicas, elements, entries) says */
        int64_t me[4] = {dp->n, dp->count, dp->nitem, 0}, *all = calloc((size_t)nranks * 4, sizeof *all);
        hcq_status s = all ? values_hash(dp, (uint64_t *)&me[3]) : base_err(HCQ_ENOMEM, "%s: host memory", fn);
        if (!s && (s = gather(user, me, sizeof me, all))) base_err_prefix(s, "hcq_dp_set_ranks: the gather across ranks");
        for (int r = 0; r < nranks && !s; r++)
            if (!memcmp(all + 4 * r, me, 3 * sizeof *me) && all[4 * r + 3] != me[3])
                s = base_err(HCQ_EINVAL, "%s: rank %d's parameters and buffers differ from rank %d's: start every rank "
                             "from the same values (the same seed, hcq_ctx_seed, or the same file)",
                             fn, r, rank);
            else if (memcmp(all + 4 * r, me, 3 * sizeof *me))
                s = base_err(HCQ_EINVAL, "%s: rank %d has %lld replicas of a model of %lld elements in %lld tensors; rank %d has "
                             "%lld, %lld and %lld: every rank needs as many devices and the same model",
                             fn, r, (long long)all[3 * r], (long long)all[3 * r + 1], (long long)all[3 * r + 2], rank,
                             (long long)me[0], (long long)me[1], (long long)me[2]);
        free(all);
        if (s) {
            free(host);
            return s;
        }
    }
    free(dp->host);
    dp->host = host;
    dp->rank = rank;
    dp->nranks = nranks;
    dp->gather = gather;
    dp->user = user;
    return HCQ_OK;
}
