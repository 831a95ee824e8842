/* Realizing: schedule, lower, find or build the program, allocate the
 * output, launch (eagerly, timed at HCQ_DEBUG >= 2, or into a JIT's graph)
 * and turn the node into a buffer.
 *
 * Buffers come from a per-context pool of released buffers of the same
 * size. Reusing one at once is safe: everything a context runs goes
 * through its device's timeline in order, so a kernel that still reads the
 * old contents runs before the kernel that overwrites them. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

static tt_launch_hook_fn launch_hook;
void tt_set_launch_hook(tt_launch_hook_fn fn) { launch_hook = fn; }

/* ** buffers */
static uint64_t pool_limit(const hcq_ctx *ctx)
{
    uint64_t lim = 1ull << 30, mem = ctx->props.memory_bytes;
    return mem && mem / 4 < lim ? mem / 4 : lim;
}

static void buf_release(tt_buf *b)
{
    if (b->hb) {
        b->ctx->stats.buffer_bytes -= b->size_B;
        hcq_buffer_free(b->hb); /* waits for the timeline to pass its last use */
    }
    free(b);
}

void tt_buf_pool_trim(hcq_ctx *ctx)
{
    for (tt_buf *b = ctx->free_bufs, *n; b; b = n) {
        n = b->next_free;
        buf_release(b);
    }
    ctx->free_bufs = NULL;
    ctx->free_bytes = 0;
}

tt_buf *tt_buf_alloc(hcq_ctx *ctx, uint64_t size_B)
{
    for (tt_buf **p = &ctx->free_bufs; *p; p = &(*p)->next_free) {
        tt_buf *b = *p;
        if (b->size_B != size_B) continue;
        *p = b->next_free;
        ctx->free_bytes -= size_B;
        b->next_free = NULL;
        b->refs = 1;
        return b;
    }
    tt_buf *b = base_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->ctx = ctx;
    b->size_B = size_B;
    b->refs = 1;
    if (size_B) {
        b->hb = hcq_buffer_alloc(ctx->dev, size_B, HCQ_MEM_DEVICE);
        if (!b->hb && ctx->free_bufs) { /* give the pool back to the device and try again */
            tt_buf_pool_trim(ctx);
            b->hb = hcq_buffer_alloc(ctx->dev, size_B, HCQ_MEM_DEVICE);
        }
        if (!b->hb) {
            free(b);
            return NULL;
        }
        ctx->stats.buffer_bytes += size_B;
    }
    return b;
}

void tt_buf_ref(tt_buf *b)
{
    if (b) b->refs++;
}

void tt_buf_unref(tt_buf *b)
{
    if (!b || --b->refs) return;
    hcq_ctx *ctx = b->ctx;
    tt_layout_drop(b); /* a copy of contents nobody holds any more */
    if (!b->hb || ctx->free_bytes + b->size_B > pool_limit(ctx)) {
        buf_release(b);
        return;
    }
    b->next_free = ctx->free_bufs;
    ctx->free_bufs = b;
    ctx->free_bytes += b->size_B;
}

/* ** launching */
void tt_debug_free(hcq_ctx *ctx)
{
    hcq_queue_destroy(ctx->dbg_q);
    hcq_signal_destroy(ctx->dbg_t[0]);
    hcq_signal_destroy(ctx->dbg_t[1]);
    hcq_signal_destroy(ctx->dbg_done);
    ctx->dbg_q = NULL;
    ctx->dbg_t[0] = ctx->dbg_t[1] = ctx->dbg_done = NULL;
}

/* The launch through a recorded queue with device timestamps around it,
 * waited for: its time on the device in us (HCQ_DEBUG >= 2's lines, and
 * the plan search's timings, beam.c). */
hcq_status tt_timed_exec(hcq_ctx *ctx, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims, double *us_out)
{
    if (!ctx->dbg_q) {
        ctx->dbg_q = hcq_queue_create(ctx->dev, HCQ_QUEUE_COMPUTE);
        ctx->dbg_t[0] = hcq_signal_create(ctx->dev, 0);
        ctx->dbg_t[1] = hcq_signal_create(ctx->dev, 0);
        ctx->dbg_done = hcq_signal_create(ctx->dev, 0);
        if (!ctx->dbg_q || !ctx->dbg_t[0] || !ctx->dbg_t[1] || !ctx->dbg_done) {
            hcq_status s = hcq_error_status();
            tt_debug_free(ctx);
            return s ? s : HCQ_ENOMEM;
        }
    }
    hcq_queue *q = ctx->dbg_q;
    hcq_status s = hcq_queue_reset(q);
    if (!s) s = hcq_queue_wait(q, hcq_device_timeline(ctx->dev), HCQ_IMM(hcq_device_timeline_value(ctx->dev)));
    if (!s) s = hcq_queue_timestamp(q, ctx->dbg_t[0]);
    if (!s) s = hcq_queue_exec(q, p, args, nargs, dims);
    if (!s) s = hcq_queue_timestamp(q, ctx->dbg_t[1]);
    if (!s) s = hcq_queue_signal(q, ctx->dbg_done, HCQ_IMM(ctx->dbg_val + 1));
    if (!s) s = hcq_queue_submit(q, NULL, 0);
    if (!s) s = hcq_signal_wait(ctx->dbg_done, ++ctx->dbg_val, 0);
    if (s) return s;
    *us_out = (double)(hcq_signal_timestamp_ns(ctx->dbg_t[1]) - hcq_signal_timestamp_ns(ctx->dbg_t[0])) / 1000.0;
    return HCQ_OK;
}

/* HCQ_DEBUG >= 2: the launch timed, and one line about it. */
static hcq_status timed_launch(hcq_ctx *ctx, hcq_program *p, const hcq_arg *args, uint32_t nargs, hcq_dims dims,
                               const tt_kentry *ke, double bytes)
{
    double us = 0;
    hcq_status s = tt_timed_exec(ctx, p, args, nargs, dims, &us);
    if (s) return s;
    double sec = us > 0 ? us * 1e-6 : 1e-9;
    /* (a variable size's kernel: its flops are counted at the upper bound) */
    double flops = ke->flops * (ke->grid[0] ? (double)dims.grid[0].imm / ke->grid[0] : 1);
    base_log(2, "%s: kernel %-32s grid %6u block %4u  %9.1f us  %8.2f GB/s  %8.2f GFLOP/s", ctx->props.id, ke->name,
             (unsigned)dims.grid[0].imm, ke->block[0], us, bytes / sec * 1e-9, flops / sec * 1e-9);
    return HCQ_OK;
}

static hcq_status capture_buf(tt_capture *c, tt_buf *b)
{
    for (uint32_t i = 0; i < c->nbufs; i++)
        if (c->bufs[i] == b) return HCQ_OK;
    if (c->nbufs == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 16;
        tt_buf **nb = base_realloc_array(c->bufs, nc, sizeof *nb);
        if (!nb) return HCQ_ENOMEM;
        c->bufs = nb;
        c->cap = nc;
    }
    tt_buf_ref(b);
    c->bufs[c->nbufs++] = b;
    return HCQ_OK;
}

static hcq_status capture_written(tt_capture *c, tt_buf *b)
{
    for (uint32_t i = 0; i < c->nwritten; i++)
        if (c->written[i] == b) return HCQ_OK;
    if (c->nwritten == c->wcap) {
        uint32_t nc = c->wcap ? c->wcap * 2 : 16;
        tt_buf **nw = base_realloc_array(c->written, nc, sizeof *nw);
        if (!nw) return HCQ_ENOMEM;
        c->written = nw;
        c->wcap = nc;
    }
    c->written[c->nwritten++] = b;
    return HCQ_OK;
}

uint64_t tt_gvar_value(const hcq_ctx *ctx, const tt_gvar *v)
{
    switch (v->kind) {
    case TT_GV_SEED: return tt_rand_seed(ctx, v->stream);
    case TT_GV_DIM: return (uint64_t)ctx->syms[v->var - 1].val;
    case TT_GV_GRID: {
        uint64_t items = (uint64_t)ctx->syms[v->var - 1].val * v->per, g = (items + v->div - 1) / v->div;
        return g ? g : 1; /* a launch has a group at least; its items are gated off */
    }
    }
    return 0;
}

hcq_status tt_capture_copy(tt_capture *c, tt_buf *dst, tt_buf *src, uint64_t src_off, uint64_t size)
{
    hcq_status s = c->err;
    if (!s) s = capture_buf(c, dst);
    if (!s) s = capture_buf(c, src);
    if (!s) s = capture_written(c, dst);
    tt_buf_written(dst);
    if (!s) s = hcq_graph_copy(c->g, dst->hb, 0, src->hb, src_off, size);
    if (s) c->err = s;
    return s;
}

hcq_status tt_capture_allreduce(tt_capture *c, tt_buf *const *bufs, int n, hcq_dtype dt, hcq_reduce_op op)
{
    hcq_status s = c->err;
    hcq_buffer *hb[HCQ_SHARD_MAX];
    for (int i = 0; i < n && !s; i++) {
        hb[i] = bufs[i]->hb;
        if (!(s = capture_buf(c, bufs[i]))) s = capture_written(c, bufs[i]);
        tt_buf_written(bufs[i]);
    }
    if (!s) s = hcq_graph_allreduce(c->g, hb, (uint32_t)n, dt, op);
    if (s) c->err = s;
    return s;
}

/* the graph variable for v (the same one for the same seed, dim or grid);
 * -1 with c->err set for a variable dim of a context other than the
 * capture's home (only the home's are the graph's variables) */
static int capture_gvar(const hcq_ctx *ctx, tt_capture *c, tt_gvar v)
{
    if (v.kind == TT_GV_SEED) {
        uint32_t ci = 0;
        while (ci < c->nctx && c->ctxs[ci] != ctx) ci++;
        if (ci == c->nctx) {
            c->err = base_err(HCQ_ESTATE, "hcq_jit_run: a launch of context %s, which the capture does not hold",
                              ctx->props.id);
            return -1;
        }
        v.ci = (uint8_t)ci;
    } else if (ctx != c->home) {
        c->err = base_err(HCQ_ENOTSUP,
                          "hcq_jit_run: a variable dim in a kernel of context %s, captured by a JIT over several "
                          "contexts whose home is %s: only the home context's variable dims are the graph's variables",
                          ctx->props.id, c->home->props.id);
        return -1;
    }
    for (uint32_t k = 0; k < c->nvars; k++) {
        const tt_gvar *o = &c->vars[k];
        if (o->kind == v.kind && o->ci == v.ci && o->stream == v.stream && o->var == v.var && o->per == v.per &&
            o->div == v.div)
            return (int)k;
    }
    if (c->nvars == c->vcap) {
        uint32_t nc = c->vcap ? c->vcap * 2 : 8;
        tt_gvar *nv = base_realloc_array(c->vars, nc, sizeof *nv);
        if (!nv) return -1;
        c->vars = nv;
        c->vcap = nc;
    }
    c->vars[c->nvars] = v;
    return (int)c->nvars++;
}

static hcq_status launch(hcq_ctx *ctx, const tt_kentry *ke, tt_buf *const *outs, const tt_key *key)
{
    hcq_arg args[TT_MAX_PARAMS];
    tt_buf *bufs[TT_MAX_PARAMS] = {0};
    uint32_t no = key->nout, nargs = key->nin + no;
    double bytes = 0;
    for (uint32_t o = 0; o < no; o++) {
        bufs[o] = outs[o];
        bytes += (double)outs[o]->size_B;
    }
    for (uint32_t i = 0; i < key->nin; i++) {
        const tt_input *in = &key->in[i];
        if (in->var) { /* a variable size's value: a graph variable when capturing */
            bufs[no + i] = NULL;
            args[no + i] = hcq_arg_i32((int32_t)ctx->syms[in->var - 1].val);
            if (ctx->capture) {
                int k = capture_gvar(ctx, ctx->capture, (tt_gvar){.kind = TT_GV_DIM, .var = in->var});
                if (k < 0) return ctx->capture->err ? ctx->capture->err : HCQ_ENOMEM;
                args[no + i] = hcq_arg_scalar(4, HCQ_VAR(k));
            }
            continue;
        }
        if (in->rand) {
            bufs[no + i] = NULL;
            args[no + i] = hcq_arg_u64(in->rand->seed);
            if (ctx->capture) { /* a graph variable, so replays draw new numbers */
                int k = capture_gvar(ctx, ctx->capture, (tt_gvar){.kind = TT_GV_SEED, .stream = in->rand->rstream});
                if (k < 0) return ctx->capture->err ? ctx->capture->err : HCQ_ENOMEM;
                args[no + i] = hcq_arg_scalar(8, HCQ_VAR(k));
            }
            continue;
        }
        bufs[no + i] = in->buf;
        bytes += (double)in->buf->size_B;
        if (!in->buf->hb) { /* a zero-size input is never read; any buffer stands in */
            if (!ctx->dummy && !(ctx->dummy = tt_buf_alloc(ctx, 64))) return hcq_error_status();
            bufs[no + i] = ctx->dummy;
        }
    }
    for (uint32_t i = 0; i < nargs; i++)
        if (bufs[i]) args[i] = hcq_arg_buffer(bufs[i]->hb);
    uint32_t grid[3] = {ke->grid[0], ke->grid[1], ke->grid[2]};
    hcq_dims dims = hcq_dims_3d(grid[0], grid[1], grid[2], ke->block[0], ke->block[1], ke->block[2]);
    if (ke->var) { /* as many groups as the variable's value needs; a graph variable when capturing */
        tt_gvar gv = {.kind = TT_GV_GRID, .var = ke->var, .per = ke->per, .div = ke->div};
        grid[0] = (uint32_t)tt_gvar_value(ctx, &gv);
        dims.grid[0] = HCQ_IMM(grid[0]);
        if (ctx->capture) {
            int k = capture_gvar(ctx, ctx->capture, gv);
            if (k < 0) return ctx->capture->err ? ctx->capture->err : HCQ_ENOMEM;
            dims.grid[0] = HCQ_VAR(k);
        }
    }
    hcq_status s;
    for (uint32_t o = 0; o < no; o++) tt_buf_written(outs[o]); /* in device order: a capture's graph runs as soon as it is made */
    if (ctx->capture) {
        tt_capture *c = ctx->capture;
        for (uint32_t i = 0; i < nargs && !c->err; i++)
            if (bufs[i]) c->err = capture_buf(c, bufs[i]);
        for (uint32_t o = 0; o < no && !c->err; o++) c->err = capture_written(c, outs[o]);
        s = c->err ? c->err : hcq_graph_launch(c->g, ke->p, args, nargs, dims);
        if (!s) c->kernels++;
    } else {
        s = hcq_debug_level() >= 2 ? timed_launch(ctx, ke->p, args, nargs, dims, ke, bytes) : hcq_launch(ke->p, args, nargs, dims);
        if (!s) ctx->stats.kernels++;
    }
    if (!s && launch_hook && !ctx->capture) launch_hook(ctx, ke->k, args, nargs, no, grid, ke->block);
    return s;
}

/* The cached kernel for the key (a copy), lowering and building it on a miss. */
static hcq_status kernel_for(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, const tt_key *key, tt_kentry *out)
{
    const tt_kentry *hit = tt_kcache_find(ctx, key);
    if (hit) {
        *out = *hit;
        return HCQ_OK;
    }
    if (ctx->beam) { /* HCQ_BEAM: the plan a search found (beam.c) */
        bool done = false;
        hcq_status bs = tt_beam_kernel(ctx, xs, nx, key, out, &done);
        if (bs || done) {
            if (!bs) tt_kcache_add(ctx, key, out); /* on failure the next realize lowers again */
            return bs;
        }
    }
    tt_lowered lw;
    hcq_status s = tt_lower(ctx, xs, nx, key, &lw);
    if (s) return s;
    tt_kentry e = {0};
    e.p = tt_get_program(ctx, lw.k, &e.k); /* takes lw.k */
    if (!e.p) return hcq_error_status();
    memcpy(e.grid, lw.grid, sizeof e.grid);
    memcpy(e.block, lw.block, sizeof e.block);
    memcpy(e.name, lw.name, sizeof e.name);
    e.flops = lw.flops;
    e.var = lw.var;
    e.per = lw.per;
    e.div = lw.div;
    tt_kcache_add(ctx, key, &e); /* on failure the next realize lowers again */
    *out = e;
    return HCQ_OK;
}

/* The kernel writing xs[0 .. nx) (one node, or several of one loop
 * structure: group.c), launched into new buffers or hcq_assign's
 * destinations; the nodes become those buffers. */
static hcq_status run_kernel(hcq_ctx *ctx, tt_node *const *xs, uint32_t nx, tt_key *key)
{
    tt_node *x = xs[0];
    if (nx == 1 && x->relayout) { /* a weight's copy made before, still current */
        tt_buf *kept = tt_layout_find(ctx, x);
        if (kept) {
            tt_node_set_buf(x, kept);
            return HCQ_OK;
        }
    }
    tt_buf *bufs[TT_MAX_PARAMS] = {0};
    hcq_status s = HCQ_OK;
    for (uint32_t i = 0; i < nx && !s; i++) {
        bufs[i] = xs[i]->assign; /* hcq_assign's destination (the reference moves to bufs[i]) */
        xs[i]->assign = NULL;
        /* a capture's buffers serve every value of a variable dim: its upper bound */
        int64_t numel = tt_numel_sym(ctx, xs[i], ctx->capture != NULL);
        if (!bufs[i]) bufs[i] = tt_buf_alloc(ctx, (uint64_t)numel * hcq_dtype_size((hcq_dtype)xs[i]->dtype));
        if (!bufs[i]) s = hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
    }
    if (!s && tt_numel(x->shape, x->ndim)) { /* (a group's nodes share their shape) */
        tt_kentry ke;
        s = tt_key_make(ctx, xs, nx, key);
        if (!s) s = kernel_for(ctx, xs, nx, key, &ke);
        if (!s) s = launch(ctx, &ke, bufs, key);
    }
    if (s) {
        for (uint32_t i = 0; i < nx; i++) tt_buf_unref(bufs[i]);
        if (nx > 1) return base_err_prefix(s, "realizing %u %d-d tensors in one kernel", nx, x->ndim);
        return base_err_prefix(s, "realizing a %d-d %s tensor", x->ndim, hcq_dtype_name((hcq_dtype)x->dtype));
    }
    if (nx == 1 && x->relayout) tt_layout_keep(ctx, x, bufs[0]);
    for (uint32_t i = 0; i < nx; i++) tt_node_set_buf(xs[i], bufs[i]);
    return HCQ_OK;
}

hcq_status tt_realize_nodes(hcq_ctx *ctx, tt_node *const *nodes, uint32_t n)
{
    tt_sched sc;
    hcq_status s = tt_schedule(ctx, nodes, n, &sc);
    if (s) return s;
    if (sc.n) ctx->stats.schedules++;
    tt_key key = {0};
    for (uint32_t k = 0; k < sc.nk && !s; k++)
        s = run_kernel(ctx, sc.items + sc.kfirst[k], sc.kfirst[k + 1] - sc.kfirst[k], &key);
    tt_key_free(&key);
    tt_sched_free(&sc);
    return s;
}

hcq_status tt_realize_contiguous(hcq_ctx *ctx, tt_node *n)
{
    tt_node *c = tt_node_new(ctx, TT_VIEW, (hcq_dtype)n->dtype, n->shape, n->ndim);
    if (!c) return HCQ_ENOMEM;
    memcpy(c->sym, n->sym, sizeof c->sym);
    tt_view_init(&c->view, n->shape, n->ndim);
    c->contig = true;
    tt_node_ref(n);
    c->src[0] = n;
    c->nsrc = 1;
    hcq_status s = tt_realize_nodes(ctx, &c, 1);
    if (!s) { /* n now is that copy: same values, contiguous storage */
        tt_buf_ref(c->buf);
        tt_node_set_buf(n, c->buf);
        n->view = (tt_view){0};
    }
    tt_node_unref(c);
    return s;
}
