/* Optimizers. A step is tensor operations: the update of every parameter
 * and of the optimizer's state is one lazy graph over the gradients,
 * realized in place with hcq_assign_all (parameters first, then the
 * state, the step count last, so every value reads the old state). The
 * step count t and the base learning rate are device tensors and the
 * schedules are computed from them on the device, so a JIT that captured
 * a step replays the right learning rate and bias corrections forever. */
#include "nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OPT_SGD, OPT_ADAM, OPT_ADAMW } opt_kind;
typedef enum { SCHED_CONST, SCHED_STEP, SCHED_COSINE } sched_kind;

struct hcq_optim {
    hcq_params *params;
    hcq_ctx *ctx;
    opt_kind kind;
    double momentum, wd, b1, b2, eps, clip;
    bool nesterov;
    int n;
    hcq_tensor **p, **s1, **s2; /* parameters; momentum or first moments; second moments */
    hcq_tensor *t, *lr;         /* 0-d f32: steps taken, base learning rate */
    sched_kind sched;
    int64_t step_size, total;
    double gamma, lr_min;
};

static bool live(const hcq_optim *o) { return o && base_handle_live(o, NN_H_OPTIM); }

static hcq_tensor *scalar_buf(hcq_ctx *ctx, double v)
{
    float f = (float)v;
    return hcq_from_data(ctx, HCQ_F32, NULL, 0, &f);
}

static hcq_optim *make(hcq_params *p, opt_kind kind, double lr, const char *fn)
{
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (!(lr >= 0) || !isfinite(lr)) return base_err(HCQ_EINVAL, "%s: learning rate %g", fn, lr), NULL;
    hcq_optim *o = base_calloc(1, sizeof *o);
    if (!o) return NULL;
    o->params = p;
    o->ctx = p->ctx;
    o->kind = kind;
    int n = 0;
    for (int i = 0; i < p->n; i++) n += p->e[i].trainable;
    o->p = base_calloc((size_t)(n ? n : 1), sizeof *o->p);
    o->s1 = base_calloc((size_t)(n ? n : 1), sizeof *o->s1);
    o->s2 = base_calloc((size_t)(n ? n : 1), sizeof *o->s2);
    o->t = scalar_buf(o->ctx, 0);
    o->lr = scalar_buf(o->ctx, lr);
    if (!o->p || !o->s1 || !o->s2 || !o->t || !o->lr) goto fail;
    for (int i = 0; i < p->n; i++)
        if (p->e[i].trainable) o->p[o->n++] = p->e[i].t;
    base_handle_add(o, NN_H_OPTIM);
    return o;
fail:
    hcq_tensor_free(o->t);
    hcq_tensor_free(o->lr);
    free(o->p);
    free(o->s1);
    free(o->s2);
    free(o);
    return NULL;
}

/* zeros like each parameter, in f32 (half parameters keep f32 state) */
static hcq_status state(hcq_optim *o, hcq_tensor **s)
{
    for (int i = 0; i < o->n; i++) {
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(o->p[i], shape);
        if (!(s[i] = hcq_init_tensor(o->ctx, HCQ_INIT_ZEROS, shape, nd, 0, 0))) return hcq_error_status();
    }
    return HCQ_OK;
}

static hcq_optim *finish(hcq_optim *o, int nstate)
{
    if (!o) return NULL;
    hcq_status s = nstate > 0 ? state(o, o->s1) : HCQ_OK;
    if (!s && nstate > 1) s = state(o, o->s2);
    if (s) {
        hcq_optim_destroy(o);
        return NULL;
    }
    return o;
}

hcq_optim *hcq_sgd(hcq_params *p, double lr, double momentum, double weight_decay, bool nesterov)
{
    const char *fn = "hcq_sgd";
    if (!(momentum >= 0) || !(weight_decay >= 0) || (nesterov && momentum == 0))
        return base_err(HCQ_EINVAL, "%s: momentum %g, weight decay %g%s", fn, momentum, weight_decay,
                        nesterov && momentum == 0 ? " (Nesterov needs momentum)" : ""),
               NULL;
    hcq_optim *o = make(p, OPT_SGD, lr, fn);
    if (!o) return NULL;
    o->momentum = momentum;
    o->wd = weight_decay;
    o->nesterov = nesterov;
    return finish(o, momentum > 0 ? 1 : 0);
}

static hcq_optim *adam(hcq_params *p, opt_kind kind, double lr, double b1, double b2, double eps, double wd, const char *fn)
{
    if (!(b1 >= 0 && b1 < 1) || !(b2 >= 0 && b2 < 1) || !(eps > 0) || !(wd >= 0))
        return base_err(HCQ_EINVAL, "%s: betas %g and %g must be in [0, 1), eps %g above 0, weight decay %g at least 0", fn, b1,
                        b2, eps, wd),
               NULL;
    hcq_optim *o = make(p, kind, lr, fn);
    if (!o) return NULL;
    o->b1 = b1;
    o->b2 = b2;
    o->eps = eps;
    o->wd = wd;
    return finish(o, 2);
}

hcq_optim *hcq_adam(hcq_params *p, double lr, double beta1, double beta2, double eps, double weight_decay)
{
    return adam(p, OPT_ADAM, lr, beta1, beta2, eps, weight_decay, "hcq_adam");
}

hcq_optim *hcq_adamw(hcq_params *p, double lr, double beta1, double beta2, double eps, double weight_decay)
{
    return adam(p, OPT_ADAMW, lr, beta1, beta2, eps, weight_decay, "hcq_adamw");
}

hcq_status hcq_optim_destroy(hcq_optim *o)
{
    if (!o) return HCQ_OK;
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_destroy: not a live optimizer (destroyed twice?)");
    base_handle_remove(o, NN_H_OPTIM);
    /* the state tensors go back now if their context is still there */
    for (int i = 0; i < o->n; i++) {
        if (o->s1[i] && hcq_tensor_ctx(o->s1[i])) hcq_tensor_free(o->s1[i]);
        if (o->s2[i] && hcq_tensor_ctx(o->s2[i])) hcq_tensor_free(o->s2[i]);
    }
    if (hcq_tensor_ctx(o->t)) hcq_tensor_free(o->t);
    if (hcq_tensor_ctx(o->lr)) hcq_tensor_free(o->lr);
    free(o->p);
    free(o->s1);
    free(o->s2);
    free(o);
    return HCQ_OK;
}

hcq_status hcq_optim_set_lr(hcq_optim *o, double lr)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_set_lr: not a live optimizer");
    if (!(lr >= 0) || !isfinite(lr)) return base_err(HCQ_EINVAL, "hcq_optim_set_lr: learning rate %g", lr);
    float f = (float)lr;
    return hcq_tensor_write(o->lr, &f, sizeof f);
}

hcq_status hcq_optim_schedule_step(hcq_optim *o, int64_t step_size, double gamma)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_schedule_step: not a live optimizer");
    if (step_size < 1 || !(gamma > 0))
        return base_err(HCQ_EINVAL, "hcq_optim_schedule_step: step size %lld and gamma %g (at least 1, above 0)",
                        (long long)step_size, gamma);
    o->sched = SCHED_STEP;
    o->step_size = step_size;
    o->gamma = gamma;
    return HCQ_OK;
}

hcq_status hcq_optim_schedule_cosine(hcq_optim *o, int64_t total, double lr_min)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_schedule_cosine: not a live optimizer");
    if (total < 1 || !(lr_min >= 0))
        return base_err(HCQ_EINVAL, "hcq_optim_schedule_cosine: %lld steps, lr_min %g", (long long)total, lr_min);
    o->sched = SCHED_COSINE;
    o->total = total;
    o->lr_min = lr_min;
    return HCQ_OK;
}

hcq_status hcq_optim_clip(hcq_optim *o, double max_norm)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_clip: not a live optimizer");
    if (!(max_norm >= 0)) return base_err(HCQ_EINVAL, "hcq_optim_clip: max_norm %g", max_norm);
    o->clip = max_norm;
    return HCQ_OK;
}

uint64_t hcq_optim_state_bytes(const hcq_optim *o)
{
    if (!live(o)) return 0;
    uint64_t b = 8;
    for (int i = 0; i < o->n; i++) {
        if (o->s1[i]) b += (uint64_t)hcq_tensor_numel(o->s1[i]) * 4;
        if (o->s2[i]) b += (uint64_t)hcq_tensor_numel(o->s2[i]) * 4;
    }
    return b;
}

/* the learning rate of step t (t = 1 for the first) */
static hcq_tensor *lr_at(hcq_optim *o, hcq_tensor *t)
{
    switch (o->sched) {
    case SCHED_CONST: return o->lr;
    case SCHED_STEP: {
        hcq_tensor *k = hcq_trunc(hcq_div_s(hcq_sub_s(t, 1.0), (double)o->step_size));
        return hcq_mul(o->lr, hcq_exp2(hcq_mul_s(k, log2(o->gamma))));
    }
    case SCHED_COSINE: {
        hcq_tensor *done = hcq_minimum_s(hcq_sub_s(t, 1.0), (double)o->total);
        hcq_tensor *c = hcq_mul_s(hcq_add_s(hcq_cos(hcq_mul_s(done, M_PI / (double)o->total)), 1.0), 0.5);
        return hcq_add_s(hcq_mul(hcq_sub_s(o->lr, o->lr_min), c), o->lr_min);
    }
    }
    return NULL;
}

hcq_tensor *hcq_optim_lr(hcq_optim *o)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_lr: not a live optimizer"), NULL;
    bool prev = hcq_set_grad_enabled(false);
    hcq_tensor *r = lr_at(o, hcq_add_s(o->t, 1.0));
    if (r == o->lr) r = hcq_mul_s(r, 1.0); /* a tensor of its own */
    hcq_set_grad_enabled(prev);
    return r;
}

/* 1 - beta^t */
static hcq_tensor *bias_corr(hcq_tensor *t, double beta)
{
    if (beta == 0) return hcq_full(hcq_tensor_ctx(t), HCQ_F32, NULL, 0, 1.0);
    return hcq_sub(hcq_scalar(hcq_tensor_ctx(t), 1.0), hcq_exp2(hcq_mul_s(t, log2(beta))));
}

/* The values of one step: parameters first, then the state, the step
 * count last (hcq_assign_all computes them all before storing any). */
static hcq_status step(hcq_optim *o, hcq_tensor **dst, hcq_tensor **val, int *count)
{
    hcq_ctx *ctx = o->ctx;
    int np = 0, ns = 0;
    hcq_tensor **sdst = dst + o->n, **sval = val + o->n; /* the state's, moved after the parameters' */
    hcq_tensor *t1 = hcq_add_s(o->t, 1.0), *lr = lr_at(o, t1), *scale = NULL, *bc1 = NULL, *bc2 = NULL;
    if (o->clip > 0) {
        hcq_tensor *sq = hcq_zeros(ctx, HCQ_F32, NULL, 0);
        for (int i = 0; i < o->n; i++)
            if (hcq_has_grad(o->p[i])) {
                hcq_tensor *g = hcq_cast(hcq_grad(o->p[i]), HCQ_F32);
                sq = hcq_add(sq, hcq_sum(hcq_mul(g, g), HCQ_ALL_AXES, false));
            }
        scale = hcq_minimum_s(hcq_div(hcq_scalar(ctx, o->clip), hcq_add_s(hcq_sqrt(sq), 1e-6)), 1.0);
    }
    if (o->kind != OPT_SGD) {
        bc1 = bias_corr(t1, o->b1);
        bc2 = bias_corr(t1, o->b2);
    }
    /* scalars computed once, in kernels of their own, not by every element
     * of every update (a schedule's cos, the corrections' exp2 and log2) */
    if (o->sched != SCHED_CONST) lr = hcq_contiguous(lr);
    hcq_tensor *lr_bc1 = NULL, *inv_bc2 = NULL;
    if (o->kind != OPT_SGD) {
        lr_bc1 = hcq_contiguous(hcq_div(lr, bc1));
        inv_bc2 = hcq_contiguous(hcq_recip(bc2));
    }
    for (int i = 0; i < o->n; i++) {
        hcq_tensor *p = o->p[i];
        if (!hcq_has_grad(p)) continue;
        hcq_tensor *g = hcq_cast(hcq_grad(p), HCQ_F32), *pf = hcq_cast(p, HCQ_F32), *pn;
        if (scale) g = hcq_mul(g, scale);
        if (o->wd > 0 && o->kind != OPT_ADAMW) g = hcq_add(g, hcq_mul_s(pf, o->wd));
        if (o->kind == OPT_SGD) {
            if (o->momentum > 0) {
                hcq_tensor *b = hcq_add(hcq_mul_s(o->s1[i], o->momentum), g);
                sdst[ns] = o->s1[i];
                sval[ns++] = b;
                g = o->nesterov ? hcq_add(g, hcq_mul_s(b, o->momentum)) : b;
            }
            pn = hcq_sub(pf, hcq_mul(lr, g));
        } else {
            hcq_tensor *m = hcq_add(hcq_mul_s(o->s1[i], o->b1), hcq_mul_s(g, 1 - o->b1));
            hcq_tensor *v = hcq_add(hcq_mul_s(o->s2[i], o->b2), hcq_mul_s(hcq_mul(g, g), 1 - o->b2));
            sdst[ns] = o->s1[i];
            sval[ns++] = m;
            sdst[ns] = o->s2[i];
            sval[ns++] = v;
            hcq_tensor *den = hcq_add_s(hcq_sqrt(hcq_mul(v, inv_bc2)), o->eps);
            if (o->kind == OPT_ADAMW && o->wd > 0) pf = hcq_mul(pf, hcq_sub(hcq_scalar(ctx, 1.0), hcq_mul_s(lr, o->wd)));
            pn = hcq_sub(pf, hcq_div(hcq_mul(lr_bc1, m), den));
        }
        dst[np] = p;
        val[np++] = pn;
    }
    memmove(dst + np, sdst, (size_t)ns * sizeof *dst);
    memmove(val + np, sval, (size_t)ns * sizeof *val);
    dst[np + ns] = o->t;
    val[np + ns] = t1;
    *count = np + ns + 1;
    for (int i = 0; i < *count; i++)
        if (!val[i]) return hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
    return HCQ_OK;
}

hcq_status hcq_optim_step_with(hcq_optim *o, hcq_tensor *const *also, int nalso)
{
    if (!live(o)) return base_err(HCQ_ESTATE, "hcq_optim_step: not a live optimizer");
    if (nalso < 0 || (nalso && !also)) return base_err(HCQ_EINVAL, "hcq_optim_step_with: %d tensors", nalso);
    size_t cap = 3 * (size_t)o->n + 1 + (size_t)nalso;
    hcq_tensor **dst = base_calloc(cap, sizeof *dst), **val = base_calloc(cap, sizeof *val);
    if (!dst || !val) {
        free(dst);
        free(val);
        return HCQ_ENOMEM;
    }
    size_t m = hcq_ctx_mark(o->ctx);
    bool prev = hcq_set_grad_enabled(false);
    int k = 0;
    hcq_status s = step(o, dst + nalso, val + nalso, &k);
    for (int i = 0; i < nalso; i++) val[i] = also[i]; /* realized in the same pass (dst NULL) */
    if (!s) s = hcq_assign_all(dst, val, k + nalso);
    hcq_set_grad_enabled(prev);
    free(dst);
    free(val);
    hcq_ctx_release(o->ctx, m);
    /* the gradients are consumed (and their graphs freed) */
    for (int i = 0; i < o->n && !s; i++) s = hcq_zero_grad(o->p[i]);
    return s ? base_err_prefix(s, "hcq_optim_step") : HCQ_OK;
}

hcq_status hcq_optim_step(hcq_optim *o) { return hcq_optim_step_with(o, NULL, 0); }

/* ** for data parallelism (dp.c) */
hcq_params *nn_optim_params(const hcq_optim *o) { return live(o) ? o->params : NULL; }

bool nn_optim_alike(const hcq_optim *a, const hcq_optim *b)
{
    return live(a) && live(b) && a->kind == b->kind && a->momentum == b->momentum && a->wd == b->wd && a->b1 == b->b1 &&
           a->b2 == b->b2 && a->eps == b->eps && a->clip == b->clip && a->nesterov == b->nesterov && a->n == b->n &&
           a->sched == b->sched && a->step_size == b->step_size && a->total == b->total && a->gamma == b->gamma &&
           a->lr_min == b->lr_min;
}

int nn_optim_state(const hcq_optim *o, hcq_tensor **out, int cap)
{
    if (!live(o)) return 0;
    int k = 0;
#define PUT(x) (k < cap ? (void)(out[k] = (x)) : (void)0, k++)
    PUT(o->t);
    PUT(o->lr);
    for (int i = 0; i < o->n; i++) {
        if (o->s1[i]) PUT(o->s1[i]);
        if (o->s2[i]) PUT(o->s2[i]);
    }
#undef PUT
    return k;
}
