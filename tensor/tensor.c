/* Nodes, handles, contexts and tensor facts. */
#include "tensor/tt.h"

#include "compiler/interp.h"
#include "compiler/ir_float.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ** nodes */
tt_node *tt_node_new(hcq_ctx *ctx, tt_op op, hcq_dtype dt, const int64_t *shape, int ndim)
{
    (void)ctx;
    tt_node *n = base_calloc(1, sizeof *n);
    if (!n) return NULL;
    static uint64_t next_id;
    n->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    n->refs = 1;
    n->op = (uint8_t)op;
    n->dtype = (uint8_t)dt;
    n->ndim = (uint8_t)ndim;
    for (int d = 0; d < ndim; d++) n->shape[d] = shape[d];
    return n;
}

void tt_node_ref(tt_node *n)
{
    if (n) n->refs++;
}

tt_node *tt_gather_node(tt_node *table, int ax, tt_node *idx)
{
    tt_node *g = tt_node_new(NULL, TT_GATHER, (hcq_dtype)table->dtype, idx->shape, idx->ndim);
    if (!g) return NULL;
    memcpy(g->sym, idx->sym, sizeof g->sym);
    g->axes = (uint32_t)ax;
    tt_node_ref(table);
    tt_node_ref(idx);
    g->src[0] = table;
    g->src[1] = idx;
    g->nsrc = 2;
    return g;
}

/* Iterative, so dropping a long chain of lazy ops cannot exhaust the stack. */
void tt_node_unref(tt_node *n)
{
    if (!n) return;
    tt_node *stack_small[64], **stack = stack_small;
    size_t top = 0, cap = 64;
    stack[top++] = n;
    while (top) {
        tt_node *x = stack[--top];
        if (--x->refs) continue;
        tt_node *more[3 + TT_AD_MAX_REFS];
        int nmore = x->nsrc;
        memcpy(more, x->src, sizeof x->src);
        if (x->ad) nmore += tt_ad_release(x, more + nmore);
        for (int i = 0; i < nmore; i++) {
            if (top == cap) {
                size_t ncap = cap * 2;
                tt_node **ns = malloc(ncap * sizeof *ns);
                if (!ns) { /* leak rather than corrupt: unreachable in practice */
                    x->nsrc = 0;
                    break;
                }
                memcpy(ns, stack, top * sizeof *ns);
                if (stack != stack_small) free(stack);
                stack = ns;
                cap = ncap;
            }
            stack[top++] = more[i];
        }
        tt_buf_unref(x->buf);
        tt_buf_unref(x->assign);
        free(x);
    }
    if (stack != stack_small) free(stack);
}

void tt_node_set_buf(tt_node *n, tt_buf *buf)
{
    tt_node *src[3];
    int nsrc = n->nsrc;
    memcpy(src, n->src, sizeof src);
    n->op = TT_BUF;
    n->nsrc = 0;
    memset(n->src, 0, sizeof n->src);
    n->buf = buf;
    n->contig = false;
    n->relayout = false;
    n->weak = false;
    for (int i = 0; i < nsrc; i++) tt_node_unref(src[i]);
}

bool tt_is_buffer_view(const tt_node *n)
{
    while (n->op == TT_VIEW) n = n->src[0];
    return n->op == TT_BUF;
}

int64_t tt_numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

hcq_status tt_check_shape(const int64_t *shape, int ndim, const char *fn)
{
    if (ndim < 0 || ndim > TT_MAX_DIMS) return base_err(HCQ_EINVAL, "%s: %d dims; tensors have 0 to %d", fn, ndim, TT_MAX_DIMS);
    if (ndim && !shape) return base_err(HCQ_EINVAL, "%s: shape is NULL for %d dims", fn, ndim);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return base_err(HCQ_EINVAL, "%s: dim %d has size %lld", fn, d, (long long)shape[d]);
        if (shape[d] && n > TT_MAX_NUMEL / shape[d])
            return base_err(HCQ_ELIMIT, "%s: more than 2^31-1 elements; tensors hold fewer", fn);
        n *= shape[d];
    }
    return HCQ_OK;
}

/* ** values
 * A constant's tt_val holds what an IR lane of its dtype holds
 * (compiler/interp.h): an integer sign- or zero-extended to 64 bits (a u64
 * as its bits), bool 0 or 1, a float as a double that the dtype represents
 * exactly. Casts and folding go through the interpreter's own conversions
 * and ALU (the reference every renderer is held to), so a folded constant
 * is the value a kernel would compute, bit for bit. */
uint64_t tt_val_lane(tt_val v, hcq_dtype dt)
{
    switch (dt) {
    case HCQ_F64: return ir_f64_bits(v.f);
    case HCQ_F32:
    case HCQ_F16:
    case HCQ_BF16: return ir_f32_bits((float)v.f);
    default: return ir_canon(dt, (uint64_t)v.i);
    }
}

tt_val tt_val_of_lane(uint64_t lane, hcq_dtype dt)
{
    tt_val r;
    switch (dt) {
    case HCQ_F64: r.f = ir_bits_f64(lane); break;
    case HCQ_F32:
    case HCQ_F16:
    case HCQ_BF16: r.f = (double)ir_bits_f32((uint32_t)lane); break;
    default: r.i = (int64_t)ir_canon(dt, lane); break;
    }
    return r;
}

/* A constant holds its value as its dtype does (rounded once), so a
 * cast of it, folded or not, sees what the tensor holds: hcq_full(f32,
 * 16777217) cast to i32 is 16777216. Weak scalars are the exception:
 * hcq_scalar keeps the double, which rounds once to the dtype it meets.
 * For an integer dtype v converts as the IR's CAST from f64 does
 * (truncated, saturated, NaN 0). */
tt_val tt_val_from_double(hcq_dtype dt, double v)
{
    return tt_val_of_lane(ir_cast_lane(HCQ_F64, dt, ir_f64_bits(v)), dt);
}

double tt_val_to_double(tt_val v, hcq_dtype dt)
{
    if (hcq_dtype_is_float(dt)) return v.f;
    return hcq_dtype_is_signed(dt) ? (double)v.i : (double)(uint64_t)v.i;
}

tt_val tt_val_cast(tt_val v, hcq_dtype from, hcq_dtype to)
{
    /* a float converts from its double: exact in `from`, so the same as
     * from `from`, except for a weak scalar's unrounded double, which
     * rounds once, to `to` */
    if (hcq_dtype_is_float(from)) return tt_val_of_lane(ir_cast_lane(HCQ_F64, to, ir_f64_bits(v.f)), to);
    return tt_val_of_lane(ir_cast_lane(from, to, tt_val_lane(v, from)), to);
}

tt_node *tt_const_node(hcq_ctx *ctx, hcq_dtype dt, tt_val v, const int64_t *shape, int ndim)
{
    tt_node *n = tt_node_new(ctx, TT_CONST, dt, shape, ndim);
    if (n) n->cv = v;
    return n;
}

bool tt_dtype_ok(hcq_ctx *ctx, hcq_dtype dt, const char *fn)
{
    switch (dt) {
    case HCQ_BOOL:
    case HCQ_I8:
    case HCQ_U8:
    case HCQ_I16:
    case HCQ_U16:
    case HCQ_I32:
    case HCQ_U32:
    case HCQ_I64:
    case HCQ_U64:
    case HCQ_F16:
    case HCQ_F32:
    case HCQ_F64: return true;
    case HCQ_BF16: {
        const char *t = ctx->props.target;
        const char *sm = strstr(t, "sm_");
        if (sm && atoi(sm + 3) < 80) {
            base_err(HCQ_ENOTSUP, "%s: bf16 is not supported on %s (target %s); NVIDIA has it from sm_80", fn,
                     ctx->props.id, t);
            return false;
        }
        return true;
    }
    default:
        base_err(HCQ_ENOTSUP, "%s: dtype %s (%d) is not a tensor dtype (bool, i8, u8, i16, u16, i32, u32, i64, u64, "
                 "f16, bf16, f32, f64)", fn, hcq_dtype_name(dt), (int)dt);
        return false;
    }
}

/* ** handles */
hcq_tensor *tt_wrap(hcq_ctx *ctx, tt_node *n)
{
    if (!n) return NULL;
    tt_ad_resolve(n); /* whether it needs gradients is decided while its sources are known */
    hcq_tensor *t = base_calloc(1, sizeof *t);
    if (!t) {
        tt_node_unref(n);
        return NULL;
    }
    t->ctx = ctx;
    t->n = n;
    t->seq = ctx->next_seq++;
    t->prev = ctx->tail;
    if (ctx->tail)
        ctx->tail->next = t;
    else
        ctx->head = t;
    ctx->tail = t;
    ctx->stats.tensors++;
    base_handle_add(t, BASE_H_TENSOR);
    return t;
}

const char *tt_desc(const tt_node *n, char *buf, size_t size)
{
    size_t off = (size_t)snprintf(buf, size, "%s [", hcq_dtype_name((hcq_dtype)n->dtype));
    for (int d = 0; d < n->ndim && off < size; d++)
        off += (size_t)snprintf(buf + off, size - off, "%s%lld", d ? ", " : "", (long long)n->shape[d]);
    if (off < size) snprintf(buf + off, size - off, "]");
    return buf;
}

hcq_tensor *tt_scope_end(hcq_ctx *ctx, size_t mark, const char *fn, hcq_tensor *out)
{
    tt_node *n = out ? out->n : NULL;
    tt_node_ref(n);
    if (!n) {
        /* an op inside failed and named itself: the caller called fn, so
         * the message starts with fn instead (what follows names the
         * operands, which composites pass on as they were given, or the
         * composite checked its own arguments before starting) */
        const char *msg = hcq_error_message();
        size_t len = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (!strncmp(msg, "hcq_", 4) && !strncmp(msg + len, ": ", 2) && (strlen(fn) != len || strncmp(msg, fn, len))) {
            char rest[2048];
            snprintf(rest, sizeof rest, "%s", msg + len + 2);
            base_err(hcq_error_status(), "%s: %s", fn, rest);
        }
    }
    hcq_ctx_release(ctx, mark);
    return tt_wrap(ctx, n);
}

tt_node *tt_arg(const hcq_tensor *t, const char *fn)
{
    if (!t) {
        if (hcq_error_status() == HCQ_OK) base_err(HCQ_EINVAL, "%s: tensor is NULL", fn);
        return NULL;
    }
    if (!base_handle_live(t, BASE_H_TENSOR)) {
        base_err(HCQ_ESTATE, "%s: the tensor is not live (freed, or its context destroyed)", fn);
        return NULL;
    }
    return t->n;
}

static void handle_free(hcq_tensor *t)
{
    hcq_ctx *ctx = t->ctx;
    base_handle_remove(t, BASE_H_TENSOR);
    if (t->prev)
        t->prev->next = t->next;
    else
        ctx->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        ctx->tail = t->prev;
    ctx->stats.tensors--;
    tt_node_unref(t->n);
    free(t);
}

hcq_status hcq_tensor_free(hcq_tensor *t)
{
    if (!t) return HCQ_OK;
    if (!base_handle_live(t, BASE_H_TENSOR))
        return base_err(HCQ_ESTATE, "hcq_tensor_free: the tensor is not live (freed twice, or its context destroyed)");
    handle_free(t);
    return HCQ_OK;
}

/* ** contexts */
bool tt_live_ctx(const hcq_ctx *ctx) { return ctx && base_handle_live(ctx, BASE_H_CTX); }

static void ctx_destroy_with_device(void *ctx) { hcq_ctx_destroy(ctx); }

hcq_ctx *hcq_ctx_create(hcq_device *dev)
{
    if (base_handle_check(dev, BASE_H_DEVICE, "hcq_ctx_create", "device")) return NULL;
    const hcq_device_props *p = hcq_device_get_props(dev);
    hcq_ctx *ctx = base_calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    /* closing the device destroys the context first */
    if (!base_dependent_add(dev, ctx_destroy_with_device, ctx)) {
        free(ctx);
        base_err(HCQ_ENOMEM, "hcq_ctx_create: out of host memory");
        return NULL;
    }
    ctx->dev = dev;
    ctx->props = *p;
    ctx->cpu_style = !strcmp(p->target, "cpu") || !strcmp(p->target, "ir");
    ctx->next_seq = 1;
    ctx->beam = (uint32_t)base_env_get()->beam; /* HCQ_BEAM */
    if (ctx->beam && p->is_mock) { /* said once per context, whatever HCQ_DEBUG */
        base_log(0, "HCQ_BEAM=%u ignored on %s: an emulated device's timings are not a GPU's (kernels keep their default plans)",
                 ctx->beam, p->id);
        ctx->beam = 0;
    }
    base_handle_add(ctx, BASE_H_CTX);
    return ctx;
}

hcq_status hcq_ctx_set_beam(hcq_ctx *ctx, uint32_t width)
{
    if (!tt_live_ctx(ctx)) return base_err(HCQ_EINVAL, "hcq_ctx_set_beam: not a live context");
    if (width > 64) return base_err(HCQ_EINVAL, "hcq_ctx_set_beam: width %u, at most 64", width);
    if (width && ctx->props.is_mock)
        return base_err(HCQ_ENOTSUP, "hcq_ctx_set_beam: %s is emulated: its timings are not a GPU's, so no plan search runs there",
                        ctx->props.id);
    ctx->beam = width;
    return HCQ_OK;
}

hcq_status hcq_ctx_destroy(hcq_ctx *ctx)
{
    if (!ctx) return HCQ_OK;
    if (!tt_live_ctx(ctx))
        return base_err(HCQ_ESTATE, "hcq_ctx_destroy: not a live context (destroyed twice, or its device was closed?)");
    base_dependent_remove(ctx->dev, ctx);
    tt_jits_free(ctx);
    while (ctx->tail) handle_free(ctx->tail);
    hcq_status s = hcq_device_synchronize(ctx->dev);
    tt_buf_unref(ctx->dummy);
    tt_buf_pool_trim(ctx);
    tt_caches_free(ctx);
    tt_debug_free(ctx);
    tt_lower_scratch_free(ctx);
    base_handle_remove(ctx, BASE_H_CTX);
    free(ctx);
    return s;
}

hcq_device *hcq_ctx_device(const hcq_ctx *ctx) { return tt_live_ctx(ctx) ? ctx->dev : NULL; }

size_t hcq_ctx_mark(const hcq_ctx *ctx) { return tt_live_ctx(ctx) ? (size_t)ctx->next_seq : 0; }

hcq_status hcq_ctx_release(hcq_ctx *ctx, size_t mark)
{
    if (!tt_live_ctx(ctx)) return base_err(HCQ_ESTATE, "hcq_ctx_release: not a live context");
    if (mark > ctx->next_seq)
        return base_err(HCQ_EINVAL, "hcq_ctx_release: mark %zu is later than the context's last tensor", mark);
    while (ctx->tail && ctx->tail->seq >= mark) handle_free(ctx->tail);
    return HCQ_OK;
}

void hcq_ctx_seed(hcq_ctx *ctx, uint64_t seed)
{
    if (!tt_live_ctx(ctx)) return;
    ctx->seed = seed;
    ctx->rand_stream = 0;
}

hcq_status hcq_ctx_get_stats(const hcq_ctx *ctx, hcq_ctx_stats *out)
{
    if (!tt_live_ctx(ctx)) return base_err(HCQ_ESTATE, "hcq_ctx_get_stats: not a live context");
    if (!out) return base_err(HCQ_EINVAL, "hcq_ctx_get_stats: out is NULL");
    *out = ctx->stats;
    return HCQ_OK;
}

hcq_status hcq_ctx_on_build(hcq_ctx *ctx, hcq_build_fn fn, void *user)
{
    if (!tt_live_ctx(ctx)) return base_err(HCQ_ESTATE, "hcq_ctx_on_build: not a live context");
    ctx->on_build = fn;
    ctx->on_build_user = fn ? user : NULL;
    return HCQ_OK;
}

/* ** facts */
static const tt_node *peek(const hcq_tensor *t)
{
    return t && base_handle_live(t, BASE_H_TENSOR) ? t->n : NULL;
}

hcq_ctx *hcq_tensor_ctx(const hcq_tensor *t) { return peek(t) ? t->ctx : NULL; }
hcq_dtype hcq_tensor_dtype(const hcq_tensor *t) { return peek(t) ? (hcq_dtype)t->n->dtype : HCQ_VOID; }
int hcq_tensor_ndim(const hcq_tensor *t) { return peek(t) ? t->n->ndim : 0; }
int64_t hcq_tensor_numel(const hcq_tensor *t) { return peek(t) ? tt_numel(t->n->shape, t->n->ndim) : 0; }
bool hcq_tensor_is_realized(const hcq_tensor *t) { return peek(t) && tt_is_buffer_view(t->n); }

int64_t hcq_tensor_dim(const hcq_tensor *t, int axis)
{
    const tt_node *n = peek(t);
    if (!n) return -1;
    if (axis < 0) axis += n->ndim;
    return axis >= 0 && axis < n->ndim ? n->shape[axis] : -1;
}

int hcq_tensor_shape(const hcq_tensor *t, int64_t *shape)
{
    const tt_node *n = peek(t);
    if (!n) return 0;
    if (shape) memcpy(shape, n->shape, n->ndim * sizeof *shape);
    return n->ndim;
}
