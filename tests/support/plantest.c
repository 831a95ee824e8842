/* Plan-suite support (plantest.h). */
#include "plantest.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include "hcqtest.h"
#include "tensortest.h"

tt_opts tp_list(int n, ...)
{
    tt_opts o;
    memset(&o, 0, sizeof o);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && o.n < TT_MAX_OPTS; i++) o.o[o.n++] = va_arg(ap, tt_opt);
    va_end(ap);
    return o;
}

hcq_status tp_run_plan(hcq_ctx *c, tt_node *n, const tt_opts *o, void *out, tt_lowered *meta, const hcq_kernel **kernel)
{
    uint64_t bytes = (uint64_t)tt_numel(n->shape, n->ndim) * hcq_dtype_size((hcq_dtype)n->dtype);
    tt_key key = {0};
    tt_lowered lw;
    hcq_status s = tt_key_make(c, &n, 1, &key);
    if (!s) s = tt_lower_opts(c, &n, 1, &key, o, &lw);
    if (s) {
        tt_key_free(&key);
        return s;
    }
    if (meta) *meta = lw, meta->k = NULL;
    const hcq_kernel *kept = NULL;
    hcq_program *p = tt_get_program(c, lw.k, &kept);
    cr_assert_not_null(p, "building %s: %s", lw.name, hcq_error_message());
    if (kernel) *kernel = T_NONNULL(kept);
    tt_buf *ob = T_NONNULL(tt_buf_alloc(c, bytes));
    hcq_arg args[TT_MAX_PARAMS];
    args[0] = hcq_arg_buffer(ob->hb);
    for (uint32_t i = 0; i < key.nin; i++) {
        cr_assert_not_null(key.in[i].buf, "input %u is a buffer", i);
        args[1 + i] = hcq_arg_buffer(key.in[i].buf->hb);
    }
    T_OK(hcq_launch(p, args, 1 + key.nin, hcq_dims_3d(lw.grid[0], lw.grid[1], lw.grid[2], lw.block[0], lw.block[1], lw.block[2])));
    T_OK(hcq_buffer_copyout(out, ob->hb, 0, bytes));
    tt_buf_unref(ob);
    tt_key_free(&key);
    return HCQ_OK;
}

tp_mm tp_make_mm(hcq_dtype dt, int64_t B, int64_t M, int64_t K, int64_t N, uint32_t seed, bool wt)
{
    int64_t nb = B ? B : 1;
    double *a = malloc(sizeof *a * (size_t)(nb * M * K)), *b = malloc(sizeof *b * (size_t)(nb * K * N));
    cr_assert(a && b);
    hcq_tensor *ta, *tb;
    if (B) {
        ta = tx_rand(dt, TX_SHAPE(B, M, K), -1, 1, seed, a);
        tb = tx_rand(dt, TX_SHAPE(B, K, N), -1, 1, seed + 1, b);
    } else {
        ta = tx_rand(dt, TX_SHAPE(M, K), -1, 1, seed, a);
        tb = wt ? tx_rand(dt, TX_SHAPE(N, K), -1, 1, seed + 1, b) : tx_rand(dt, TX_SHAPE(K, N), -1, 1, seed + 1, b);
    }
    T_OK(hcq_realize(ta));
    T_OK(hcq_realize(tb));
    if (wt) tb = hcq_transpose(tb, 0, 1);
    tp_mm r = {.count = nb * M * N};
    r.want = malloc(sizeof *r.want * (size_t)r.count);
    cr_assert(r.want);
    for (int64_t z = 0; z < nb; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float s = 0;
                for (int64_t k = 0; k < K; k++)
                    s = fmaf((float)a[(z * M + i) * K + k], (float)(wt ? b[j * K + k] : b[(z * K + k) * N + j]), s);
                r.want[(z * M + i) * N + j] = (float)tx_round(dt, s);
            }
    hcq_tensor *p = hcq_matmul(ta, tb);
    if (dt != HCQ_F32) p = hcq_cast(p, HCQ_F32);
    r.n = p->n;
    while (r.n->op == TT_VIEW) r.n = r.n->src[0]; /* the f32 reduction's own [.., M, N, 1] */
    free(a);
    free(b);
    return r;
}

void tp_check_exact(const tp_mm *m, const float *got, const char *what)
{
    for (int64_t i = 0; i < m->count; i++)
        cr_assert(!memcmp(&got[i], &m->want[i], sizeof got[i]) || (isnan(got[i]) && isnan(m->want[i])),
                  "%s: %s: element %lld is %.9g, want %.9g (%a vs %a)", tx_ctx->props.id, what, (long long)i, got[i], m->want[i],
                  got[i], m->want[i]);
}
