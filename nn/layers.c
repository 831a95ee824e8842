/* Layers whose behaviour depends on the model's mode: batch norm and
 * dropout. */
#include "nn/nn.h"

#include <stdio.h>
#include <string.h>

static hcq_tensor *part(const hcq_params *p, const char *name, const char *what)
{
    char full[NN_NAME_MAX + 32];
    snprintf(full, sizeof full, "%s.%s", name, what);
    return hcq_params_find(p, full);
}

hcq_status hcq_batchnorm_add(hcq_params *p, const char *name, int64_t channels)
{
    const char *fn = "hcq_batchnorm_add";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn);
    if (!name || strlen(name) + 16 > NN_NAME_MAX) return base_err(HCQ_EINVAL, "%s: the name is missing or too long", fn);
    if (channels < 1) return base_err(HCQ_EINVAL, "%s: %lld channels", fn, (long long)channels);
    static const struct {
        const char *what;
        hcq_init init;
        bool trained;
    } parts[] = {{"weight", HCQ_INIT_ONES, true},
                 {"bias", HCQ_INIT_ZEROS, true},
                 {"running_mean", HCQ_INIT_ZEROS, false},
                 {"running_var", HCQ_INIT_ONES, false}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(parts); i++) {
        char full[NN_NAME_MAX + 1];
        snprintf(full, sizeof full, "%s.%s", name, parts[i].what);
        hcq_tensor *t = hcq_init_tensor(p->ctx, parts[i].init, &channels, 1, 0, 0);
        if (!t) return hcq_error_status();
        if (!(parts[i].trained ? hcq_params_add(p, full, t) : hcq_params_add_buffer(p, full, t))) {
            hcq_status s = hcq_error_status();
            hcq_tensor_free(t);
            return s;
        }
    }
    return HCQ_OK;
}

hcq_tensor *hcq_batchnorm(hcq_params *p, const char *name, hcq_tensor *x, double momentum, double eps)
{
    const char *fn = "hcq_batchnorm";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (!x) return NULL;
    int64_t shape[HCQ_MAX_DIMS];
    int nd = hcq_tensor_shape(x, shape);
    if (nd < 2) return base_err(HCQ_EINVAL, "%s: x needs dims [N, C, ...], it has %d", fn, nd), NULL;
    if (!(momentum >= 0 && momentum <= 1) || !(eps >= 0)) return base_err(HCQ_EINVAL, "%s: momentum %g, eps %g", fn, momentum, eps), NULL;
    hcq_tensor *w = part(p, name, "weight"), *b = part(p, name, "bias"), *rm = part(p, name, "running_mean"),
               *rv = part(p, name, "running_var");
    if (!w || !b || !rm || !rv) return base_err_prefix(hcq_error_status(), "%s (hcq_batchnorm_add first)", fn), NULL;
    int64_t C = shape[1];
    if (hcq_tensor_numel(w) != C)
        return base_err(HCQ_EINVAL, "%s: x has %lld channels, \"%s\" %lld", fn, (long long)C, name, (long long)hcq_tensor_numel(w)),
               NULL;
    int axes[HCQ_MAX_DIMS], na = 0;
    int64_t bshape[HCQ_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        bshape[d] = d == 1 ? C : 1;
        if (d != 1) axes[na++] = d;
    }
    hcq_dtype dt = hcq_tensor_dtype(x);
    hcq_tensor *xf = hcq_cast(x, HCQ_F32), *mean, *var;
    if (hcq_params_training(p)) {
        mean = hcq_mean(xf, axes, na, true);
        var = hcq_var(xf, axes, na, true, 0);
        if (hcq_realize_all((hcq_tensor *[]){mean, var}, 2)) return NULL;
        double n = (double)hcq_tensor_numel(x) / (double)C;
        bool prev = hcq_set_grad_enabled(false);
        hcq_tensor *dm = hcq_reshape(hcq_detach(mean), &C, 1), *dv = hcq_reshape(hcq_detach(var), &C, 1);
        hcq_tensor *nm = hcq_add(hcq_mul_s(rm, 1 - momentum), hcq_mul_s(dm, momentum));
        hcq_tensor *nv = hcq_add(hcq_mul_s(rv, 1 - momentum), hcq_mul_s(dv, momentum * (n > 1 ? n / (n - 1) : 1.0)));
        hcq_status s = nm && nv ? hcq_assign_all((hcq_tensor *[]){rm, rv}, (hcq_tensor *[]){nm, nv}, 2) : hcq_error_status();
        hcq_set_grad_enabled(prev);
        if (s) return NULL;
    } else {
        mean = hcq_reshape(rm, bshape, nd);
        var = hcq_reshape(rv, bshape, nd);
    }
    hcq_tensor *y = hcq_mul(hcq_sub(xf, mean), hcq_rsqrt(hcq_add_s(var, eps)));
    y = hcq_add(hcq_mul(y, hcq_reshape(w, bshape, nd)), hcq_reshape(b, bshape, nd));
    return hcq_cast(y, hcq_dtype_is_float(dt) ? dt : HCQ_F32);
}

hcq_tensor *hcq_dropout(hcq_params *p, hcq_tensor *x, double prob)
{
    const char *fn = "hcq_dropout";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn), NULL;
    if (!x) return NULL;
    if (!(prob >= 0 && prob <= 1)) return base_err(HCQ_EINVAL, "%s: probability %g", fn, prob), NULL;
    if (!hcq_params_training(p) || prob == 0) return hcq_mul_s(x, 1.0);
    if (prob == 1) return hcq_mul_s(x, 0.0);
    int64_t shape[HCQ_MAX_DIMS];
    int nd = hcq_tensor_shape(x, shape);
    hcq_tensor *keep = hcq_ge(hcq_rand(hcq_tensor_ctx(x), HCQ_F32, shape, nd), hcq_scalar(hcq_tensor_ctx(x), prob));
    return hcq_where(keep, hcq_mul_s(x, 1.0 / (1.0 - prob)), hcq_scalar(hcq_tensor_ctx(x), 0.0));
}
