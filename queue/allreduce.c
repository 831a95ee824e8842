/* hcq_allreduce: a ring all-reduce over the devices' own engines (issue 23
 * item 4). Reduce-scatter, then all-gather, each step a peer copy between
 * neighbours (hcq_buffer_copy: on the copy engines, ordered on the GPUs
 * where the devices have a peer link, staged through host memory where
 * they have none) and, in the reduce-scatter, a small IR kernel on the
 * receiving device that folds the received chunk into its own. Every step
 * is an eager call, so each device's timeline orders its part: a copy
 * waits (on the GPU) for the destination's work so far, and the
 * destination's later launch waits for the copy.
 *
 * The order is fixed (queue.h states it): chunk c's reduction starts on
 * device c and takes in c+1, c+2, ... (mod n); its last device writes the
 * result (divided by n for a mean) and the all-gather copies those bytes
 * to everyone, so every device ends with the same bits.
 *
 * hcq_graph_allreduce records the same ring, copy for copy and fold for
 * fold, into a graph (g non-NULL below): its copies are graph copies (a
 * peer path is needed between ring neighbours, checked before any node
 * is recorded), and its scratch is held by the graph until it goes. */
#include "base/base.h"
#include "queue/internal.h"

#include <stdlib.h>
#include <string.h>

#define AR_THREADS 256u
#define AR_MAX_GROUPS 1024u
#define AR_MAX_DEVICES 64u

enum ar_kind { AR_ADD, AR_MAX, AR_ADD_DIV };

static hcq_ir_ref bin(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, op, a, b); }

/* dst[off + i] = recv[i] (op) dst[off + i] for i < count, a grid-stride
 * loop of `iters` rounds. AR_ADD_DIV divides the sum by the f32 scalar
 * `div` in f32 (HCQ_OP_FDIV, correctly rounded), the sum of two f16/bf16
 * values taken in f32 first, then rounds to the dtype: one rounding to
 * the narrow type, as queue.h states. */
static hcq_kernel *ar_kernel(hcq_dtype dt, enum ar_kind kind)
{
    static const char *const names[] = {"allreduce_add", "allreduce_max", "allreduce_add_div"};
    hcq_kernel *k = hcq_kernel_create(names[kind]);
    if (!k) return NULL;
    hcq_ir_ref dst = hcq_ir_param_buffer(k, dt), recv = hcq_ir_param_buffer(k, dt);
    hcq_ir_ref off = hcq_ir_param_scalar(k, HCQ_I32), count = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref iters = hcq_ir_param_scalar(k, HCQ_I32);
    hcq_ir_ref div = kind == AR_ADD_DIV ? hcq_ir_param_scalar(k, HCQ_F32) : HCQ_IR_NONE;
    hcq_ir_ref ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref gid = bin(k, HCQ_OP_ADD, bin(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls),
                         hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0));
    hcq_ir_ref total = bin(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, 0), ls);
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_I32, 0), iters);
    hcq_ir_ref i = bin(k, HCQ_OP_ADD, gid, bin(k, HCQ_OP_MUL, r, total));
    hcq_ir_ref iff = hcq_ir_if(k, bin(k, HCQ_OP_CMPLT, i, count));
    hcq_ir_ref d = bin(k, HCQ_OP_ADD, off, i);
    hcq_ir_ref a = hcq_ir_load(k, recv, i), b = hcq_ir_load(k, dst, d), v;
    if (kind == AR_ADD_DIV) {
        bool narrow = dt != HCQ_F32;
        if (narrow) {
            a = hcq_ir_cast(k, HCQ_F32, a);
            b = hcq_ir_cast(k, HCQ_F32, b);
        }
        v = bin(k, HCQ_OP_FDIV, bin(k, HCQ_OP_ADD, a, b), div);
        if (narrow) v = hcq_ir_cast(k, dt, v);
    } else {
        v = bin(k, kind == AR_MAX ? HCQ_OP_MAX : HCQ_OP_ADD, a, b);
    }
    hcq_ir_store(k, dst, d, v);
    hcq_ir_endif(k, iff);
    hcq_ir_endrange(k, r);
    return k;
}

/* the dtypes it reduces, and their index in queue_dev.allreduce */
static int ar_dtype_index(hcq_dtype dt)
{
    return dt == HCQ_F32 ? 0 : dt == HCQ_I32 ? 1 : dt == HCQ_F16 ? 2 : dt == HCQ_BF16 ? 3 : -1;
}

/* The device's fold kernel of this kind and dtype, loaded once and kept
 * until the device closes (a load per call cost milliseconds: a cache
 * read and a code upload). NULL with the error recorded. */
static hcq_program *ar_program(hcq_device *dev, hcq_dtype dt, enum ar_kind kind)
{
    struct queue_dev *qd = dev->qd;
    int di = ar_dtype_index(dt);
    pthread_mutex_lock(&qd->list_lock);
    hcq_program *p = qd->allreduce[kind][di];
    pthread_mutex_unlock(&qd->list_lock);
    if (p) return p;
    hcq_kernel *k = ar_kernel(dt, kind);
    if (!k) {
        base_err(HCQ_ENOMEM, "hcq_allreduce: no memory for its kernel");
        return NULL;
    }
    p = hcq_program_from_kernel(dev, k);
    hcq_kernel_destroy(k);
    if (!p) return NULL;
    /* loaded outside the lock (the load takes it); a thread that got here
     * first keeps its program, and this one goes */
    pthread_mutex_lock(&qd->list_lock);
    hcq_program *had = qd->allreduce[kind][di];
    if (!had) {
        p->internal = true;
        qd->allreduce[kind][di] = p;
    }
    pthread_mutex_unlock(&qd->list_lock);
    if (had) {
        hcq_program_free(p);
        p = had;
    }
    return p;
}

static const char *op_name(hcq_reduce_op op)
{
    return op == HCQ_REDUCE_SUM ? "sum" : op == HCQ_REDUCE_MAX ? "max" : op == HCQ_REDUCE_MEAN ? "mean" : "?";
}

/* Everything checked before any work is submitted, so bad input changes
 * no buffer. */
static hcq_status ar_check(hcq_buffer *const *bufs, uint32_t n, hcq_dtype dt, hcq_reduce_op op, uint64_t *size_out)
{
    if (!bufs) return base_err(HCQ_EINVAL, "hcq_allreduce: bufs is NULL");
    if (n == 0) return base_err(HCQ_EINVAL, "hcq_allreduce: no buffers (n is 0)");
    if (n > AR_MAX_DEVICES)
        return base_err(HCQ_ELIMIT, "hcq_allreduce: %u buffers; at most %u (one per device)", n, AR_MAX_DEVICES);
    if (op != HCQ_REDUCE_SUM && op != HCQ_REDUCE_MAX && op != HCQ_REDUCE_MEAN)
        return base_err(HCQ_EINVAL, "hcq_allreduce: op %d is not HCQ_REDUCE_SUM, _MAX or _MEAN", (int)op);
    if (ar_dtype_index(dt) < 0)
        return base_err(dt > HCQ_VOID && dt < HCQ_DTYPE_COUNT ? HCQ_ENOTSUP : HCQ_EINVAL,
                        "hcq_allreduce: dtype %s: f32, f16, bf16 and i32 are implemented", hcq_dtype_name(dt));
    if (op == HCQ_REDUCE_MEAN && !hcq_dtype_is_float(dt))
        return base_err(HCQ_EINVAL, "hcq_allreduce: the mean of %s would truncate; sum, then divide as you need",
                        hcq_dtype_name(dt));
    size_t es = hcq_dtype_size(dt);
    const char *kind0 = NULL;
    uint64_t size = 0;
    for (uint32_t i = 0; i < n; i++) {
        hcq_device *d = bufs[i] ? hcq_buffer_device(bufs[i]) : NULL;
        if (!d) return base_err(HCQ_ESTATE, "hcq_allreduce: buffer %u is NULL, freed, or of a closed device", i);
        const hcq_device_props *p = hcq_device_get_props(d);
        uint64_t sz = hcq_buffer_size(bufs[i]);
        if (i == 0) {
            kind0 = p->kind;
            size = sz;
        } else {
            if (strcmp(p->kind, kind0))
                return base_err(HCQ_EINVAL,
                                "hcq_allreduce: buffer %u is on %s, buffer 0 on %s: devices of different kinds share "
                                "no memory (copy through the host, then all-reduce one kind)",
                                i, p->id, hcq_device_get_props(hcq_buffer_device(bufs[0]))->id);
            if (sz != size)
                return base_err(HCQ_EINVAL, "hcq_allreduce: buffer %u has %llu bytes, buffer 0 %llu: sizes must be equal",
                                i, (unsigned long long)sz, (unsigned long long)size);
        }
        for (uint32_t j = 0; j < i; j++)
            if (hcq_buffer_device(bufs[j]) == d)
                return base_err(HCQ_EINVAL, "hcq_allreduce: buffers %u and %u are both on %s: one buffer per device", j,
                                i, p->id);
    }
    if (size % es)
        return base_err(HCQ_EINVAL, "hcq_allreduce: %llu bytes is not a whole number of %s elements (%zu bytes each)",
                        (unsigned long long)size, hcq_dtype_name(dt), es);
    /* the fold's i32 index runs up to a grid's width past the count */
    uint64_t most = (uint64_t)INT32_MAX - (uint64_t)AR_MAX_GROUPS * AR_THREADS;
    if (size / es > most)
        return base_err(HCQ_ELIMIT, "hcq_allreduce: %llu elements; the kernels index with i32 (at most %llu)",
                        (unsigned long long)(size / es), (unsigned long long)most);
    *size_out = size;
    return HCQ_OK;
}

/* chunk c of count elements split n ways: [c*count/n, (c+1)*count/n) */
static uint64_t chunk_start(uint64_t count, uint32_t n, uint32_t c) { return count * c / n; }

/* a step of the ring: eager (g NULL) or a node of graph g */
static hcq_status ar_copy(hcq_graph *g, hcq_buffer *dst, uint64_t doff, hcq_buffer *src, uint64_t soff, uint64_t size)
{
    return g ? hcq_graph_copy(g, dst, doff, src, soff, size) : hcq_buffer_copy(dst, doff, src, soff, size);
}

static hcq_status ar_reduce(hcq_graph *g, hcq_program *prog, hcq_buffer *dst, hcq_buffer *recv, uint64_t off,
                            uint64_t cnt, uint32_t n)
{
    const hcq_program_info *info = hcq_program_get_info(prog);
    uint64_t threads = BASE_MIN(AR_THREADS, BASE_MAX(info->max_threads, 1u));
    uint64_t groups = BASE_MIN((cnt + threads - 1) / threads, (uint64_t)AR_MAX_GROUPS);
    uint64_t iters = (cnt + groups * threads - 1) / (groups * threads);
    hcq_arg args[6] = {hcq_arg_buffer(dst), hcq_arg_buffer(recv), hcq_arg_i32((int32_t)off),
                       hcq_arg_i32((int32_t)cnt), hcq_arg_i32((int32_t)iters)};
    uint32_t nargs = 5;
    if (info->nparams == 6) args[nargs++] = hcq_arg_f32((float)n);
    hcq_dims dims = hcq_dims_1d((uint32_t)groups, (uint32_t)threads);
    return g ? hcq_graph_launch(g, prog, args, nargs, dims) : hcq_launch(prog, args, nargs, dims);
}

/* The ring over bufs (checked), eager or into g. */
static hcq_status ar_ring(hcq_graph *g, hcq_buffer *const *bufs, uint32_t n, hcq_dtype dt, hcq_reduce_op op,
                          uint64_t size)
{
    hcq_status s = HCQ_OK;
    size_t es = hcq_dtype_size(dt);
    uint64_t count = size / es, maxchunk = 0;
    for (uint32_t c = 0; c < n; c++)
        maxchunk = BASE_MAX(maxchunk, chunk_start(count, n, c + 1) - chunk_start(count, n, c));

    hcq_buffer *scratch[AR_MAX_DEVICES] = {0};
    hcq_program *fold[AR_MAX_DEVICES] = {0}, *last[AR_MAX_DEVICES] = {0};
    enum ar_kind k_fold = op == HCQ_REDUCE_MAX ? AR_MAX : AR_ADD;
    for (uint32_t i = 0; i < n && !s && maxchunk; i++) {
        hcq_device *d = hcq_buffer_device(bufs[i]);
        if (!(scratch[i] = hcq_buffer_alloc(d, maxchunk * es, HCQ_MEM_DEVICE)) || !(fold[i] = ar_program(d, dt, k_fold)) ||
            (op == HCQ_REDUCE_MEAN && !(last[i] = ar_program(d, dt, AR_ADD_DIV))))
            s = base_err_prefix(hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM, "hcq_allreduce on %s: ",
                                hcq_device_get_props(d)->id);
    }

    /* reduce-scatter: at step t, device i sends chunk (i - t) mod n to
     * device i+1, which folds it into its own copy of that chunk; after
     * n-1 steps device (c + n - 1) mod n holds chunk c reduced in the
     * order c, c+1, ..., c+n-1. All of a step's copies are submitted
     * before its launches so the copy engines of the ring run together. */
    for (uint32_t t = 0; t + 1 < n && !s; t++) {
        for (uint32_t i = 0; i < n && !s; i++) {
            uint32_t c = (i + n - t) % n, j = (i + 1) % n;
            uint64_t c0 = chunk_start(count, n, c), cn = chunk_start(count, n, c + 1) - c0;
            if (cn) s = ar_copy(g, scratch[j], 0, bufs[i], c0 * es, cn * es);
        }
        for (uint32_t i = 0; i < n && !s; i++) {
            uint32_t c = (i + n - t) % n, j = (i + 1) % n;
            uint64_t c0 = chunk_start(count, n, c), cn = chunk_start(count, n, c + 1) - c0;
            hcq_program *p = t + 2 == n && last[j] ? last[j] : fold[j];
            if (cn) s = ar_reduce(g, p, bufs[j], scratch[j], c0, cn, n);
        }
    }
    /* all-gather: at step t, device i passes chunk (i + 1 - t) mod n (the
     * reduced one it holds or has just received) on to device i+1, the
     * same bytes at the same offset */
    for (uint32_t t = 0; t + 1 < n && !s; t++)
        for (uint32_t i = 0; i < n && !s; i++) {
            uint32_t c = (i + 1 + n - t) % n, j = (i + 1) % n;
            uint64_t c0 = chunk_start(count, n, c), cn = chunk_start(count, n, c + 1) - c0;
            if (cn) s = ar_copy(g, bufs[j], c0 * es, bufs[i], c0 * es, cn * es);
        }

    /* eager: the scratch goes once each device's timeline has passed the
     * work above (this is where the call waits); a graph holds what its
     * nodes name, so only the handle goes */
    for (uint32_t i = 0; i < n; i++) {
        if (g && scratch[i]) q_graph_own(g, scratch[i]);
        hcq_status f = hcq_buffer_free(scratch[i]);
        if (!s) s = f;
    }
    return s;
}

hcq_status hcq_allreduce(hcq_buffer *const *bufs, uint32_t n, hcq_dtype dt, hcq_reduce_op op)
{
    uint64_t size = 0;
    hcq_status s = ar_check(bufs, n, dt, op, &size);
    if (s || n == 1 || size == 0) return s;
    if ((s = ar_ring(NULL, bufs, n, dt, op, size)))
        return base_err_prefix(s, "hcq_allreduce (%s of %u x %llu bytes of %s): ", op_name(op), n,
                               (unsigned long long)size, hcq_dtype_name(dt));
    return HCQ_OK;
}

hcq_status hcq_graph_allreduce(hcq_graph *g, hcq_buffer *const *bufs, uint32_t n, hcq_dtype dt, hcq_reduce_op op)
{
    const char *fn = "hcq_graph_allreduce";
    hcq_status s = Q_CHECK_GRAPH(g, fn);
    uint64_t size = 0;
    if (!s) s = ar_check(bufs, n, dt, op, &size);
    if (s || n == 1 || size == 0) return s;
    /* every copy of the ring goes from device i to device i+1: each needs
     * a peer path, asked before a node is recorded, so a refusal leaves
     * the graph as it was */
    for (uint32_t i = 0; i < n; i++) {
        hcq_device *a = hcq_buffer_device(bufs[i]), *b = hcq_buffer_device(bufs[(i + 1) % n]);
        if ((s = hcq_device_peer_access(a, b)))
            return base_err_prefix(s, "%s: %s -> %s, neighbours in the ring: a graph copies between devices only "
                                   "through a peer mapping (use hcq_allreduce outside the graph, which stages "
                                   "through host memory)", fn, a->props.id, b->props.id);
    }
    if ((s = ar_ring(g, bufs, n, dt, op, size)))
        return base_err_prefix(s, "%s (%s of %u x %llu bytes of %s): the graph holds part of the ring; destroy it", fn,
                               op_name(op), n, (unsigned long long)size, hcq_dtype_name(dt));
    return HCQ_OK;
}
