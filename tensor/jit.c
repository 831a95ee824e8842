/* The JIT: run 0 executes the function (compiling its kernels), run 1
 * executes it again with every launch recorded into an hcq graph, and
 * later runs only swap buffers and replay (hcq_graph_set_buffer): the
 * inputs' buffers for the captured inputs', fresh buffers for the
 * outputs'. The graph's intermediates are the capture run's own buffers,
 * which the JIT keeps. Outputs are always written by a kernel of the graph
 * (a copy where the function returns an input or a view), so every run's
 * outputs are new buffers. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

#define JIT_MAX_IO 64
#define JIT_MAX_VDIMS 16

typedef struct io_meta {
    hcq_dtype dt;
    int ndim;
    int64_t shape[TT_MAX_DIMS];
    uint8_t sym[TT_MAX_DIMS]; /* outputs: variable dims (their size is the variable's value) */
    tt_buf *buf;              /* the captured buffer (referenced) */
    uint8_t ci;               /* its context: the JIT's ctxs[ci] */
} io_meta;

/* hcq_jit_dim: dim `axis` of input `input` is the context's variable `var` */
typedef struct jit_vdim {
    int input, axis;
    uint8_t var;
} jit_vdim;

struct hcq_jit {
    hcq_ctx *ctx; /* ctxs[0], the home context: fn's ctx, variable dims and random streams */
    /* every context the JIT captures (hcq_jit_create_multi; 1 for
     * hcq_jit_create): each one's launches and copies go into the one
     * graph, and the JIT is on each one's list (link[k]: the next JIT on
     * ctxs[k]'s), so destroying any of them frees it */
    int nctx;
    hcq_ctx *ctxs[HCQ_SHARD_MAX];
    struct hcq_jit *link[HCQ_SHARD_MAX];
    hcq_jit_fn fn;
    void *user;
    uint32_t runs, captures;
    tt_capture cap;
    uint64_t streams[HCQ_SHARD_MAX]; /* random streams one call of the function takes, per context */
    int nin, nout;
    io_meta in[JIT_MAX_IO], out[JIT_MAX_IO];
    jit_vdim vdims[JIT_MAX_VDIMS];
    int nvdims;
};

static bool live(const hcq_jit *j) { return j && base_handle_live(j, TT_H_JIT); }

/* the index of c among the JIT's contexts, or -1 */
static int ctx_index(const hcq_jit *j, const hcq_ctx *c)
{
    for (int k = 0; k < j->nctx; k++)
        if (j->ctxs[k] == c) return k;
    return -1;
}

/* the next JIT on c's list after j (j is on it) */
static hcq_jit **next_on(hcq_jit *j, const hcq_ctx *c) { return &j->link[ctx_index(j, c)]; }

static void unlink_all(hcq_jit *j)
{
    for (int k = 0; k < j->nctx; k++)
        for (hcq_jit **p = &j->ctxs[k]->jits; *p; p = next_on(*p, j->ctxs[k]))
            if (*p == j) {
                *p = j->link[k];
                break;
            }
}

static hcq_jit *create(const char *fn_name, hcq_ctx *const *ctxs, int n, hcq_jit_fn fn, void *user)
{
    if (n < 1 || n > HCQ_SHARD_MAX || !ctxs)
        return base_err(HCQ_EINVAL, "%s: %d contexts (1 to %d)", fn_name, n, HCQ_SHARD_MAX), NULL;
    for (int k = 0; k < n; k++) {
        if (!ctxs[k] || !base_handle_live(ctxs[k], BASE_H_CTX))
            return base_err(HCQ_ESTATE, "%s: context %d is not a live context", fn_name, k), NULL;
        for (int i = 0; i < k; i++)
            if (ctxs[i] == ctxs[k]) return base_err(HCQ_EINVAL, "%s: context %d is given twice", fn_name, k), NULL;
    }
    if (!fn) return base_err(HCQ_EINVAL, "%s: fn is NULL", fn_name), NULL;
    hcq_jit *j = base_calloc(1, sizeof *j);
    if (!j) return NULL;
    j->ctx = ctxs[0];
    j->nctx = n;
    memcpy(j->ctxs, ctxs, (size_t)n * sizeof *ctxs);
    j->fn = fn;
    j->user = user;
    for (int k = 0; k < n; k++) {
        j->link[k] = ctxs[k]->jits;
        ctxs[k]->jits = j;
    }
    base_handle_add(j, TT_H_JIT);
    return j;
}

hcq_jit *hcq_jit_create(hcq_ctx *ctx, hcq_jit_fn fn, void *user)
{
    if (!ctx || !base_handle_live(ctx, BASE_H_CTX)) return base_err(HCQ_ESTATE, "hcq_jit_create: not a live context"), NULL;
    return create("hcq_jit_create", &ctx, 1, fn, user);
}

hcq_jit *hcq_jit_create_multi(hcq_ctx *const *ctxs, int n, hcq_jit_fn fn, void *user)
{
    return create("hcq_jit_create_multi", ctxs, n, fn, user);
}

/* the graph and everything it holds; the JIT captures again next run */
static void capture_drop(hcq_jit *j)
{
    tt_capture *c = &j->cap;
    if (c->g) hcq_graph_destroy(c->g);
    for (uint32_t i = 0; i < c->nbufs; i++) tt_buf_unref(c->bufs[i]);
    for (uint32_t i = 0; i < c->nuses; i++) tt_layout_use_release(&c->uses[i]);
    free(c->bufs);
    free(c->vars);
    free(c->written);
    free(c->uses);
    memset(c, 0, sizeof *c);
    for (int i = 0; i < j->nin; i++) tt_buf_unref(j->in[i].buf), j->in[i].buf = NULL;
    for (int i = 0; i < j->nout; i++) tt_buf_unref(j->out[i].buf), j->out[i].buf = NULL;
    j->nin = j->nout = 0;
}

static void jit_free(hcq_jit *j)
{
    capture_drop(j);
    for (int k = 0; k < j->nvdims; k++) j->ctx->syms[j->vdims[k].var - 1].users--;
    tt_sym_release(j->ctx);
    base_handle_remove(j, TT_H_JIT);
    free(j);
}

hcq_status hcq_jit_destroy(hcq_jit *j)
{
    if (!j) return HCQ_OK;
    if (!live(j)) return base_err(HCQ_ESTATE, "hcq_jit_destroy: not a live JIT (destroyed twice?)");
    unlink_all(j);
    jit_free(j);
    return HCQ_OK;
}

void tt_jits_free(hcq_ctx *ctx)
{
    while (ctx->jits) {
        hcq_jit *j = ctx->jits;
        unlink_all(j);
        jit_free(j);
    }
}

uint32_t hcq_jit_kernel_count(const hcq_jit *j) { return live(j) ? j->cap.kernels : 0; }
uint32_t hcq_jit_capture_count(const hcq_jit *j) { return live(j) ? j->captures : 0; }

/* Inputs must be buffers of their own (so a replay can swap them). */
static hcq_status prepare_inputs(hcq_jit *j, hcq_tensor *const *in, int nin)
{
    for (int i = 0; i < nin; i++) {
        tt_node *n = tt_arg(in[i], "hcq_jit_run");
        if (!n) return hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
        if (ctx_index(j, in[i]->ctx) < 0)
            return base_err(HCQ_EINVAL, "hcq_jit_run: input %d is from a context the JIT does not capture", i);
        hcq_status s = tt_realize_nodes(in[i]->ctx, &n, 1);
        if (!s && n->op != TT_BUF) s = tt_realize_contiguous(in[i]->ctx, n);
        if (s) return s;
    }
    return HCQ_OK;
}

static const jit_vdim *vdim_of(const hcq_jit *j, int input, int axis)
{
    for (int k = 0; k < j->nvdims; k++)
        if (j->vdims[k].input == input && j->vdims[k].axis == axis) return &j->vdims[k];
    return NULL;
}

/* input i's context, shape and dtype as captured, its variable dims in range (bind) */
static bool same_meta(const hcq_jit *j, int i, const hcq_tensor *t)
{
    const io_meta *m = &j->in[i];
    const tt_node *n = t->n;
    if (j->ctxs[m->ci] != t->ctx || m->dt != n->dtype || m->ndim != n->ndim) return false;
    for (int d = 0; d < n->ndim; d++)
        if (m->shape[d] != n->shape[d] && !vdim_of(j, i, d)) return false;
    return true;
}

static void set_meta(io_meta *m, const tt_node *n)
{
    m->dt = (hcq_dtype)n->dtype;
    m->ndim = n->ndim;
    memcpy(m->shape, n->shape, sizeof m->shape);
    memcpy(m->sym, n->sym, sizeof m->sym);
}

hcq_status hcq_jit_dim(hcq_jit *j, int input, int axis, const char *name, int64_t lo, int64_t hi)
{
    const char *fn = "hcq_jit_dim";
    if (!live(j)) return base_err(HCQ_ESTATE, "%s: not a live JIT", fn);
    if (j->runs) return base_err(HCQ_ESTATE, "%s: the JIT has run; declare its variable dims before the first run", fn);
    if (j->nctx > 1)
        return base_err(HCQ_ENOTSUP, "%s: variable dims in a JIT over several contexts (hcq_jit_create_multi) are not "
                        "supported yet; use a JIT of fixed shapes", fn);
    if (input < 0 || input >= JIT_MAX_IO || axis < 0 || axis >= TT_MAX_DIMS)
        return base_err(HCQ_EINVAL, "%s: input %d, axis %d (inputs 0 to %d, axes 0 to %d)", fn, input, axis, JIT_MAX_IO - 1,
                        TT_MAX_DIMS - 1);
    if (!name || !*name || strlen(name) >= sizeof j->ctx->syms[0].name)
        return base_err(HCQ_EINVAL, "%s: a name of 1 to %zu characters", fn, sizeof j->ctx->syms[0].name - 1);
    if (lo < 1 || hi < lo || hi > TT_MAX_NUMEL)
        return base_err(HCQ_EINVAL, "%s: '%s' ranges over [%lld, %lld]; a range within [1, %lld]", fn, name, (long long)lo,
                        (long long)hi, (long long)TT_MAX_NUMEL);
    if (vdim_of(j, input, axis)) return base_err(HCQ_EINVAL, "%s: input %d's dim %d is a variable already", fn, input, axis);
    if (j->nvdims == JIT_MAX_VDIMS) return base_err(HCQ_ELIMIT, "%s: at most %d variable dims per JIT", fn, JIT_MAX_VDIMS);
    hcq_ctx *ctx = j->ctx;
    uint32_t k = 0;
    while (k < ctx->nsyms && !(ctx->syms[k].users && !ctx->syms[k].base && !strcmp(ctx->syms[k].name, name))) k++;
    if (k < ctx->nsyms && (ctx->syms[k].lo != lo || ctx->syms[k].hi != hi))
        return base_err(HCQ_EINVAL, "%s: '%s' is declared over [%lld, %lld] by a live JIT of this context; one name, one range", fn,
                        name, (long long)ctx->syms[k].lo, (long long)ctx->syms[k].hi);
    if (k == ctx->nsyms) { /* a new variable: a slot no live JIT uses (kernel keys name its range too) */
        k = 0;
        while (k < ctx->nsyms && ctx->syms[k].users) k++;
        if (k == TT_MAX_SYMS)
            return base_err(HCQ_ELIMIT, "%s: at most %d variables in use per context (destroy JITs you no longer need)", fn,
                            TT_MAX_SYMS);
        if (k == ctx->nsyms) ctx->nsyms++;
        tt_symvar *v = &ctx->syms[k];
        *v = (tt_symvar){0};
        snprintf(v->name, sizeof v->name, "%s", name);
        v->lo = lo;
        v->hi = hi;
        v->val = lo;
    }
    ctx->syms[k].users++;
    j->vdims[j->nvdims++] = (jit_vdim){input, axis, (uint8_t)(k + 1)};
    return HCQ_OK;
}

/* Binds each variable to its inputs' size (checked against its range;
 * every input of one variable agrees). While tracing (runs 0 and 1), a
 * size of 1 is refused: it would broadcast where the variable does not. */
static hcq_status bind(hcq_jit *j, hcq_tensor *const *in, int nin, bool trace)
{
    hcq_ctx *ctx = j->ctx;
    bool set[TT_MAX_SYMS] = {0};
    for (int k = 0; k < j->nvdims; k++) {
        const jit_vdim *v = &j->vdims[k];
        tt_symvar *sv = &ctx->syms[v->var - 1];
        if (v->input >= nin || v->axis >= in[v->input]->n->ndim)
            return base_err(HCQ_EINVAL, "hcq_jit_run: '%s' is dim %d of input %d, which has %d dims (%d inputs)", sv->name, v->axis,
                            v->input, v->input < nin ? in[v->input]->n->ndim : 0, nin);
        int64_t size = in[v->input]->n->shape[v->axis];
        if (size < sv->lo || size > sv->hi)
            return base_err(HCQ_EINVAL, "hcq_jit_run: input %d's dim %d is %lld, outside the range of '%s', [%lld, %lld]", v->input,
                            v->axis, (long long)size, sv->name, (long long)sv->lo, (long long)sv->hi);
        if (trace && size < 2)
            return base_err(HCQ_EINVAL,
                            "hcq_jit_run: '%s' is 1 on run %u, which traces the function: a size of 1 broadcasts where a variable "
                            "does not; run the first two calls with at least 2",
                            sv->name, j->runs);
        if (set[v->var - 1] && sv->val != size)
            return base_err(HCQ_EINVAL, "hcq_jit_run: '%s' is %lld in one input and %lld in input %d", sv->name, (long long)sv->val,
                            (long long)size, v->input);
        set[v->var - 1] = true;
        sv->val = size;
    }
    return tt_sym_bind_derived(ctx, set); /* the sizes movements made of them */
}

/* the inputs' nodes carry their variable dims while fn runs (on), and no
 * longer after (they are the caller's tensors) */
static void mark_inputs(hcq_jit *j, hcq_tensor *const *in, bool on)
{
    tt_sym_tracing(on && j->nvdims ? j->ctx : NULL);
    for (int k = 0; k < j->nvdims; k++) {
        const jit_vdim *v = &j->vdims[k];
        in[v->input]->n->sym[v->axis] = on ? v->var : 0;
    }
}

/* The captured graph, replayed with each context k's random streams from
 * base[k] on (the capture's own streams for the capture run, the
 * contexts' next ones after that, as calling the function again would
 * take them). HCQ_DEBUG >= 2: waited for, with one line (the kernels' own
 * lines were printed when run 0 ran them eagerly). */
static hcq_status replay_graph(hcq_jit *j, const uint64_t *base)
{
    hcq_ctx *ctx = j->ctx;
    uint64_t small[16], *vars = j->cap.nvars <= 16 ? small : base_calloc(j->cap.nvars, sizeof *vars);
    if (!vars) return HCQ_ENOMEM;
    for (uint32_t k = 0; k < j->cap.nvars; k++) {
        const tt_gvar *v = &j->cap.vars[k];
        vars[k] = v->kind == TT_GV_SEED ? tt_rand_seed(j->ctxs[v->ci], base[v->ci] + (v->stream - j->cap.stream0[v->ci]))
                                        : tt_gvar_value(ctx, v);
    }
    uint64_t t0 = hcq_now_ns();
    hcq_status s = hcq_graph_replay(j->cap.g, vars, j->cap.nvars);
    if (vars != small) free(vars);
    if (hcq_debug_level() < 2) return s;
    if (!s) s = hcq_device_synchronize(ctx->dev);
    if (!s)
        base_log(2, "%s: jit replay: %u kernels in one graph  %9.1f us (submit to completion, host clock)",
                 ctx->props.id, j->cap.kernels, (double)(hcq_now_ns() - t0) / 1000.0);
    return s;
}

static bool written_by_graph(const hcq_jit *j, const tt_buf *b)
{
    for (uint32_t i = 0; i < j->cap.nwritten; i++)
        if (j->cap.written[i] == b) return true;
    return false;
}

static bool in_graph(const hcq_jit *j, const tt_buf *b)
{
    for (uint32_t i = 0; i < j->cap.nbufs; i++)
        if (j->cap.bufs[i] == b) return true;
    return false;
}

/* the bytes of an input or output the graph reaches when its variable
 * dims are at their lower bound: replays swap in buffers of the bound
 * value's size, smaller than the captured ones */
static uint64_t low_bytes(const hcq_jit *j, const io_meta *m, int input)
{
    int64_t n = 1;
    for (int d = 0; d < m->ndim; d++) {
        const jit_vdim *v = input >= 0 ? vdim_of(j, input, d) : NULL;
        int var = v ? v->var : input < 0 ? m->sym[d] : 0;
        /* (a derived variable may be 0 at its lower bound: a replay's
         * nonempty buffer has at least 1 of each) */
        n *= var ? (j->ctx->syms[var - 1].lo > 0 ? j->ctx->syms[var - 1].lo : 1) : m->shape[d];
    }
    return (uint64_t)n * hcq_dtype_size(m->dt);
}

static hcq_status need_sizes(hcq_jit *j)
{
    hcq_status s = HCQ_OK;
    for (int i = 0; i < j->nin && !s && j->nvdims; i++) {
        uint64_t b = low_bytes(j, &j->in[i], i);
        if (j->in[i].buf->hb && in_graph(j, j->in[i].buf) && b && b < j->in[i].buf->size_B)
            s = hcq_graph_buffer_need(j->cap.g, j->in[i].buf->hb, b);
    }
    for (int i = 0; i < j->nout && !s; i++) {
        uint64_t b = low_bytes(j, &j->out[i], -1);
        if (j->out[i].buf->hb && in_graph(j, j->out[i].buf) && b && b < j->out[i].buf->size_B)
            s = hcq_graph_buffer_need(j->cap.g, j->out[i].buf->hb, b);
    }
    return s;
}

/* Every context of the JIT captures into c, or none (c NULL). */
static void set_capture(hcq_jit *j, tt_capture *c)
{
    for (int k = 0; k < j->nctx; k++) j->ctxs[k]->capture = c;
}

/* Runs fn; outputs become copies made by kernels (captured when capturing).
 * Several contexts: each realizes its own outputs' copies, and every
 * context's launches and copies go into the one graph. */
static hcq_status call(hcq_jit *j, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, bool capture)
{
    hcq_ctx *ctx = j->ctx;
    size_t marks[HCQ_SHARD_MAX];
    for (int k = 0; k < j->nctx; k++) marks[k] = hcq_ctx_mark(j->ctxs[k]);
    hcq_tensor *res[JIT_MAX_IO] = {0};
    tt_node *copies[JIT_MAX_IO] = {0};
    uint8_t oci[JIT_MAX_IO] = {0};
    hcq_status s = HCQ_OK;
    tt_buf *inbufs[JIT_MAX_IO];
    if (capture) {
        for (int k = 0; k < j->nctx; k++)
            if (j->ctxs[k]->capture)
                return base_err(HCQ_ESTATE, "hcq_jit_run: context %d (%s) is capturing another JIT already", k,
                                j->ctxs[k]->props.id);
        memset(&j->cap, 0, sizeof j->cap);
        j->cap.home = ctx;
        j->cap.nctx = (uint32_t)j->nctx;
        for (int k = 0; k < j->nctx; k++) {
            j->cap.ctxs[k] = j->ctxs[k];
            j->cap.stream0[k] = j->ctxs[k]->rand_stream;
        }
        if (!(j->cap.g = hcq_graph_create(ctx->dev))) return hcq_error_status();
        for (int i = 0; i < nin; i++) inbufs[i] = in[i]->n->buf;
        j->cap.inputs = inbufs;
        j->cap.ninputs = (uint32_t)nin;
        set_capture(j, &j->cap);
    }
    s = j->fn(ctx, in, nin, res, nout, j->user);
    for (int i = 0; i < nout && !s; i++) {
        tt_node *n = tt_arg(res[i], "hcq_jit_run (an output of the function)");
        int ci = n ? ctx_index(j, res[i]->ctx) : -1;
        if (!n) s = hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
        else if (ci < 0) s = base_err(HCQ_EINVAL, "hcq_jit_run: output %d is from a context the JIT does not capture", i);
        else if (!(copies[i] = tt_node_new(res[i]->ctx, TT_VIEW, (hcq_dtype)n->dtype, n->shape, n->ndim))) s = HCQ_ENOMEM;
        else {
            oci[i] = (uint8_t)ci;
            memcpy(copies[i]->sym, n->sym, sizeof copies[i]->sym);
            tt_view_init(&copies[i]->view, n->shape, n->ndim);
            copies[i]->contig = true;
            tt_node_ref(n);
            copies[i]->src[0] = n;
            copies[i]->nsrc = 1;
        }
    }
    for (int k = 0; k < j->nctx && !s; k++) { /* each context's outputs, in one realize */
        tt_node *mine[JIT_MAX_IO];
        uint32_t nm = 0;
        for (int i = 0; i < nout; i++)
            if (oci[i] == k) mine[nm++] = copies[i];
        if (nm) s = tt_realize_nodes(j->ctxs[k], mine, nm);
    }
    mark_inputs(j, in, false);
    set_capture(j, NULL);
    j->cap.inputs = NULL;
    j->cap.ninputs = 0;
    if (!s && capture && j->cap.err) s = j->cap.err;
    /* a layout copy the graph reads was current when taken; only a host
     * write inside fn (the graph's own writes come after the read) makes
     * it stale before the first replay */
    for (uint32_t i = 0; capture && !s && i < j->cap.nuses; i++)
        if (!written_by_graph(j, j->cap.uses[i].src)) s = tt_layout_refresh(j->cap.uses[i].src->ctx, &j->cap.uses[i]);
    if (!s && capture) {
        j->nin = nin;
        j->nout = nout;
        for (int i = 0; i < nin; i++) {
            set_meta(&j->in[i], in[i]->n);
            j->in[i].ci = (uint8_t)ctx_index(j, in[i]->ctx);
            j->in[i].buf = in[i]->n->buf;
            tt_buf_ref(j->in[i].buf);
            for (int k = 0; k < i && !s; k++)
                if (j->in[k].buf == j->in[i].buf && j->in[i].buf->hb)
                    s = base_err(HCQ_EINVAL, "hcq_jit_run: inputs %d and %d share a buffer; pass distinct tensors", k, i);
        }
        for (int i = 0; i < nout; i++) {
            set_meta(&j->out[i], copies[i]);
            j->out[i].ci = oci[i];
            j->out[i].buf = copies[i]->buf;
            tt_buf_ref(j->out[i].buf);
        }
        if (!s) j->captures++;
        for (int k = 0; k < j->nctx; k++) j->streams[k] = j->ctxs[k]->rand_stream - j->cap.stream0[k];
        if (!s) s = need_sizes(j);
        if (!s) s = replay_graph(j, j->cap.stream0);
        if (!s) {
            ctx->stats.graph_replays++;
            ctx->stats.kernels += j->cap.kernels;
        }
    }
    for (int k = 0; k < j->nctx; k++) hcq_ctx_release(j->ctxs[k], marks[k]);
    for (int i = 0; i < nout; i++) {
        hcq_ctx *oc = j->ctxs[oci[i]];
        if (copies[i]) memset(copies[i]->sym, 0, sizeof copies[i]->sym); /* the caller's tensors, of the traced size */
        out[i] = s ? NULL : tt_wrap(oc, copies[i]);
        if (s) tt_node_unref(copies[i]);
        else if (!out[i]) s = HCQ_ENOMEM;
    }
    return s;
}

static hcq_status replay(hcq_jit *j, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout)
{
    hcq_ctx *ctx = j->ctx;
    if (nin != j->nin || nout != j->nout)
        return base_err(HCQ_EINVAL, "hcq_jit_run: %d inputs and %d outputs; the JIT was captured with %d and %d", nin,
                        nout, j->nin, j->nout);
    for (int i = 0; i < nin; i++)
        if (!same_meta(j, i, in[i]))
            return base_err(HCQ_EINVAL, "hcq_jit_run: input %d changed its shape or dtype since the capture%s", i,
                            j->nvdims ? " (beyond its variable dims)" : "");
    hcq_status s = bind(j, in, nin, false);
    if (s) return s;
    for (int i = 0; i < nin && !s; i++) {
        hcq_buffer *orig = j->in[i].buf->hb, *now = in[i]->n->buf->hb;
        /* (an input no kernel reads is not the graph's) */
        if (orig && in_graph(j, j->in[i].buf)) s = hcq_graph_set_buffer(j->cap.g, orig, now == orig ? NULL : now);
    }
    tt_buf *fresh[JIT_MAX_IO] = {0};
    int64_t oshape[JIT_MAX_IO][TT_MAX_DIMS];
    for (int i = 0; i < nout; i++) /* variable dims at their value now */
        for (int d = 0; d < TT_MAX_DIMS; d++) oshape[i][d] = j->out[i].sym[d] ? ctx->syms[j->out[i].sym[d] - 1].val : j->out[i].shape[d];
    for (int i = 0; i < nout && !s; i++) {
        const io_meta *m = &j->out[i];
        fresh[i] = tt_buf_alloc(j->ctxs[m->ci], (uint64_t)tt_numel(oshape[i], m->ndim) * hcq_dtype_size(m->dt));
        if (!fresh[i]) s = hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
        else if (m->buf->hb) s = hcq_graph_set_buffer(j->cap.g, m->buf->hb, fresh[i]->hb);
    }
    /* layout copies the graph reads, of weights written since */
    for (uint32_t i = 0; i < j->cap.nuses && !s; i++) s = tt_layout_refresh(j->cap.uses[i].src->ctx, &j->cap.uses[i]);
    uint64_t base[HCQ_SHARD_MAX];
    for (int k = 0; k < j->nctx; k++) base[k] = j->ctxs[k]->rand_stream;
    if (!s) s = replay_graph(j, base);
    if (!s) /* what the graph stores into holds new contents */
        for (uint32_t k = 0; k < j->cap.nwritten; k++) {
            tt_buf *b = j->cap.written[k];
            for (int i = 0; i < nin; i++)
                if (b == j->in[i].buf) b = in[i]->n->buf;
            for (int i = 0; i < nout; i++)
                if (b == j->out[i].buf) b = fresh[i];
            tt_buf_written(b);
        }
    if (!s) {
        for (int k = 0; k < j->nctx; k++) j->ctxs[k]->rand_stream = base[k] + j->streams[k];
        ctx->stats.graph_replays++;
        ctx->stats.kernels += j->cap.kernels;
    }
    for (int i = 0; i < nout; i++) {
        out[i] = NULL;
        if (s || !fresh[i]) {
            tt_buf_unref(fresh[i]);
            continue;
        }
        hcq_ctx *oc = j->ctxs[j->out[i].ci];
        tt_node *n = tt_node_new(oc, TT_BUF, j->out[i].dt, oshape[i], j->out[i].ndim);
        if (!n) {
            tt_buf_unref(fresh[i]);
            s = HCQ_ENOMEM;
            continue;
        }
        n->buf = fresh[i];
        if (!(out[i] = tt_wrap(oc, n))) s = HCQ_ENOMEM;
    }
    return s;
}

hcq_status hcq_jit_run(hcq_jit *j, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout)
{
    if (!live(j)) return base_err(HCQ_ESTATE, "hcq_jit_run: not a live JIT");
    if (nin < 0 || nin > JIT_MAX_IO || nout < 1 || nout > JIT_MAX_IO || (nin && !in) || !out)
        return base_err(HCQ_EINVAL, "hcq_jit_run: %d inputs and %d outputs (1 to %d outputs, up to %d inputs)", nin, nout,
                        JIT_MAX_IO, JIT_MAX_IO);
    for (int i = 0; i < nout; i++) out[i] = NULL;
    hcq_status s = prepare_inputs(j, in, nin);
    if (s) return s;
    if (j->runs >= 2) return replay(j, in, nin, out, nout);
    if ((s = bind(j, in, nin, true))) return s;
    mark_inputs(j, in, true);
    s = call(j, in, nin, out, nout, j->runs == 1);
    mark_inputs(j, in, false); /* (call clears them too, before its last kernels' bookkeeping) */
    if (!s) j->runs++;
    else if (j->cap.g) capture_drop(j); /* a failed capture is dropped; the next run captures again */
    return s;
}
