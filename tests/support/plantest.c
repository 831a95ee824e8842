/* Plan-suite support (plantest.h). */
#include "plantest.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>
#include "hcqtest.h"

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
