/* Parameter lists, initialisation, the train/eval mode and gradient
 * clipping. */
#include "nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool nn_params_live(const hcq_params *p) { return p && base_handle_live(p, NN_H_PARAMS); }

hcq_params *hcq_params_create(hcq_ctx *ctx)
{
    if (!hcq_ctx_device(ctx)) return base_err(HCQ_ESTATE, "hcq_params_create: not a live context"), NULL;
    hcq_params *p = base_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->ctx = ctx;
    base_handle_add(p, NN_H_PARAMS);
    return p;
}

hcq_status hcq_params_destroy(hcq_params *p)
{
    if (!p) return HCQ_OK;
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "hcq_params_destroy: not a live parameter list (destroyed twice?)");
    base_handle_remove(p, NN_H_PARAMS);
    free(p->e);
    free(p);
    return HCQ_OK;
}

const nn_entry *nn_params_entry(const hcq_params *p, int i, const char *fn)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (i < 0 || i >= p->n) return base_err(HCQ_EINVAL, "%s: index %d of %d tensors", fn, i, p->n), NULL;
    return &p->e[i];
}

static hcq_tensor *add(hcq_params *p, const char *name, hcq_tensor *t, bool trainable, const char *fn)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (!t) {
        if (!hcq_error_status()) base_err(HCQ_EINVAL, "%s: tensor is NULL", fn);
        return NULL;
    }
    if (hcq_tensor_ctx(t) != p->ctx) return base_err(HCQ_EINVAL, "%s: the tensor is not live or from another context", fn), NULL;
    size_t len = name ? strlen(name) : 0;
    if (!len || len > NN_NAME_MAX) return base_err(HCQ_EINVAL, "%s: names have 1 to %d characters", fn, NN_NAME_MAX), NULL;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->e[i].name, name)) return base_err(HCQ_EINVAL, "%s: \"%s\" is in the list already", fn, name), NULL;
    if (trainable && !hcq_dtype_is_float(hcq_tensor_dtype(t)))
        return base_err(HCQ_EINVAL, "%s: \"%s\" is %s; trained parameters are float", fn, name,
                        hcq_dtype_name(hcq_tensor_dtype(t))),
               NULL;
    if (!hcq_tensor_is_realized(t) && hcq_realize(t)) return NULL;
    if (trainable && hcq_requires_grad(t, true)) return NULL;
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 16;
        nn_entry *ne = base_realloc_array(p->e, (size_t)nc, sizeof *ne);
        if (!ne) return NULL;
        p->e = ne;
        p->cap = nc;
    }
    nn_entry *e = &p->e[p->n++];
    memcpy(e->name, name, len + 1);
    e->t = t;
    e->trainable = trainable;
    return t;
}

hcq_tensor *hcq_params_add(hcq_params *p, const char *name, hcq_tensor *t) { return add(p, name, t, true, "hcq_params_add"); }
hcq_tensor *hcq_params_add_buffer(hcq_params *p, const char *name, hcq_tensor *t)
{
    return add(p, name, t, false, "hcq_params_add_buffer");
}

int hcq_params_count(const hcq_params *p) { return nn_params_live(p) ? p->n : 0; }

hcq_tensor *hcq_params_at(const hcq_params *p, int i)
{
    const nn_entry *e = nn_params_entry(p, i, "hcq_params_at");
    return e ? e->t : NULL;
}

const char *hcq_params_name(const hcq_params *p, int i)
{
    const nn_entry *e = nn_params_entry(p, i, "hcq_params_name");
    return e ? e->name : NULL;
}

bool hcq_params_trainable(const hcq_params *p, int i)
{
    const nn_entry *e = nn_params_entry(p, i, "hcq_params_trainable");
    return e && e->trainable;
}

hcq_tensor *hcq_params_find(const hcq_params *p, const char *name)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "hcq_params_find: not a live parameter list"), NULL;
    for (int i = 0; name && i < p->n; i++)
        if (!strcmp(p->e[i].name, name)) return p->e[i].t;
    return base_err(HCQ_EINVAL, "hcq_params_find: no tensor named \"%s\"", name ? name : "(null)"), NULL;
}

int64_t hcq_params_numel(const hcq_params *p)
{
    int64_t n = 0;
    for (int i = 0; nn_params_live(p) && i < p->n; i++)
        if (p->e[i].trainable) n += hcq_tensor_numel(p->e[i].t);
    return n;
}

void hcq_params_train(hcq_params *p, bool training)
{
    if (nn_params_live(p)) p->eval = !training;
}

bool hcq_params_training(const hcq_params *p) { return nn_params_live(p) && !p->eval; }

hcq_status hcq_params_zero_grad(hcq_params *p)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "hcq_params_zero_grad: not a live parameter list");
    for (int i = 0; i < p->n; i++) {
        if (!p->e[i].trainable) continue;
        hcq_status s = hcq_zero_grad(p->e[i].t);
        if (s) return s;
    }
    return HCQ_OK;
}

/* ** initialisation */
static void fans(const int64_t *shape, int ndim, double *fan_in, double *fan_out)
{
    if (ndim < 2) {
        *fan_in = *fan_out = ndim ? (double)shape[0] : 1;
        return;
    }
    double rf = 1;
    for (int d = 2; d < ndim; d++) rf *= (double)shape[d];
    *fan_in = (double)shape[1] * rf;
    *fan_out = (double)shape[0] * rf;
}

hcq_tensor *hcq_init_tensor(hcq_ctx *ctx, hcq_init init, const int64_t *shape, int ndim, double a, double b)
{
    const char *fn = "hcq_init_tensor";
    if (!hcq_ctx_device(ctx)) return base_err(HCQ_ESTATE, "%s: not a live context", fn), NULL;
    double fi, fo;
    if (ndim < 0 || ndim > HCQ_MAX_DIMS || (ndim && !shape)) return base_err(HCQ_EINVAL, "%s: %d dims", fn, ndim), NULL;
    fans(shape, ndim, &fi, &fo);
    if (fi <= 0) fi = 1;
    if (fi + fo <= 0) fo = 1;
    double lo = 0, hi = 0, mean = 0, std = -1; /* uniform [lo, hi) unless std >= 0 */
    switch (init) {
    case HCQ_INIT_ZEROS: break;
    case HCQ_INIT_ONES: lo = hi = 1; break;
    case HCQ_INIT_UNIFORM:
        lo = a;
        hi = b;
        break;
    case HCQ_INIT_NORMAL:
        mean = a;
        std = b;
        break;
    case HCQ_INIT_KAIMING_UNIFORM: hi = (a ? a : sqrt(2.0)) * sqrt(3.0 / fi), lo = -hi; break;
    case HCQ_INIT_KAIMING_NORMAL: std = (a ? a : sqrt(2.0)) / sqrt(fi); break;
    case HCQ_INIT_XAVIER_UNIFORM: hi = (a ? a : 1.0) * sqrt(6.0 / (fi + fo)), lo = -hi; break;
    case HCQ_INIT_XAVIER_NORMAL: std = (a ? a : 1.0) * sqrt(2.0 / (fi + fo)); break;
    default: return base_err(HCQ_EINVAL, "%s: unknown initialisation %d", fn, (int)init), NULL;
    }
    if (std < 0 && hi < lo) return base_err(HCQ_EINVAL, "%s: uniform over [%g, %g)", fn, lo, hi), NULL;
    if (init == HCQ_INIT_NORMAL && b < 0) return base_err(HCQ_EINVAL, "%s: standard deviation %g", fn, b), NULL;
    /* the result is made first so releasing the helpers keeps it */
    hcq_tensor *out = hcq_empty(ctx, HCQ_F32, shape, ndim);
    if (!out) return NULL;
    size_t m = hcq_ctx_mark(ctx);
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *v;
    if (std >= 0)
        v = hcq_add_s(hcq_mul_s(hcq_randn(ctx, HCQ_F32, shape, ndim), std), mean);
    else if (hi == lo)
        v = hcq_full(ctx, HCQ_F32, shape, ndim, lo);
    else
        v = hcq_add_s(hcq_mul_s(hcq_rand(ctx, HCQ_F32, shape, ndim), hi - lo), lo);
    hcq_status s = v ? hcq_assign(out, v) : (hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM);
    hcq_set_grad_enabled(prev);
    hcq_ctx_release(ctx, m);
    if (s) {
        hcq_tensor_free(out);
        return NULL;
    }
    return out;
}

hcq_tensor *hcq_param(hcq_params *p, const char *name, hcq_init init, const int64_t *shape, int ndim, double a, double b)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "hcq_param: not a live parameter list"), NULL;
    hcq_tensor *t = hcq_init_tensor(p->ctx, init, shape, ndim, a, b);
    if (!t) return NULL;
    if (!hcq_params_add(p, name, t)) {
        hcq_status s = hcq_error_status();
        hcq_tensor_free(t);
        base_err_prefix(s, "hcq_param");
        return NULL;
    }
    return t;
}

/* ** clipping */
hcq_tensor *hcq_clip_grad_norm(hcq_params *p, double max_norm)
{
    const char *fn = "hcq_clip_grad_norm";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (!(max_norm > 0)) return base_err(HCQ_EINVAL, "%s: max_norm %g", fn, max_norm), NULL;
    hcq_ctx *ctx = p->ctx;
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *sq = hcq_zeros(ctx, HCQ_F32, NULL, 0);
    for (int i = 0; i < p->n; i++)
        if (p->e[i].trainable && hcq_has_grad(p->e[i].t)) {
            hcq_tensor *g = hcq_cast(hcq_grad(p->e[i].t), HCQ_F32);
            sq = hcq_add(sq, hcq_sum(hcq_mul(g, g), HCQ_ALL_AXES, false));
        }
    hcq_tensor *norm = hcq_sqrt(sq);
    /* min(1, max_norm / (norm + 1e-6)) */
    hcq_tensor *scale = hcq_minimum_s(hcq_div(hcq_scalar(ctx, max_norm), hcq_add_s(norm, 1e-6)), 1.0);
    hcq_status s = scale ? HCQ_OK : (hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM);
    for (int i = 0; i < p->n && !s; i++)
        if (p->e[i].trainable && hcq_has_grad(p->e[i].t))
            s = hcq_set_grad(p->e[i].t, hcq_mul(hcq_grad(p->e[i].t), scale));
    hcq_set_grad_enabled(prev);
    return s ? NULL : norm;
}
