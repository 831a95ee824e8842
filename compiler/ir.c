/* The kernel object and its builder. Builder calls check their operands
 * (through the verifier's per-op rule, so there is one definition of what
 * fits) and record the first failure as the kernel's sticky error instead
 * of failing loudly: call sites stay straight-line, and every consumer
 * reports the first real mistake rather than its consequences. */
#include "compiler/ir.h"
#include "compiler/ir_float.h"
#include "compiler/mma.h"
#include "compiler/verify.h"

#include <stdlib.h>
#include <string.h>

/* The op record is part of the public API (hcq_kernel_ops); keep it 32 bytes. */
_Static_assert(sizeof(hcq_ir_op) == 32, "hcq_ir_op must stay 32 bytes");

hcq_kernel *hcq_kernel_create(const char *name)
{
    if (!name) name = "kernel";
    size_t len = strlen(name);
    if (len == 0 || len > IR_NAME_MAX) {
        base_err(HCQ_EINVAL, "hcq_kernel_create: kernel name has %zu characters; give 1 to %d", len,
                 IR_NAME_MAX);
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c > 0x7e) {
            base_err(HCQ_EINVAL,
                     "hcq_kernel_create: kernel name has byte 0x%02x at %zu; use printable ASCII", c, i);
            return NULL;
        }
    }
    hcq_kernel *k = base_calloc(1, sizeof *k);
    if (!k) return NULL;
    k->name = strdup(name);
    if (!k->name) {
        free(k);
        base_err(HCQ_ENOMEM, "hcq_kernel_create: out of memory");
        return NULL;
    }
    return k;
}

void hcq_kernel_destroy(hcq_kernel *k)
{
    if (!k) return;
    free(k->name);
    free(k->ops);
    free(k->build_msg);
    free(k);
}

hcq_kernel *hcq_kernel_clone(const hcq_kernel *k)
{
    if (!k) {
        base_err(HCQ_EINVAL, "hcq_kernel_clone: kernel is NULL");
        return NULL;
    }
    hcq_kernel *c = hcq_kernel_create(k->name);
    if (!c) return NULL;
    if (k->nops) {
        c->ops = base_calloc(k->nops, sizeof *c->ops);
        if (!c->ops) {
            hcq_kernel_destroy(c);
            return NULL;
        }
        memcpy(c->ops, k->ops, k->nops * sizeof *c->ops);
        c->nops = c->cap = k->nops;
    }
    c->build_err = k->build_err;
    if (k->build_msg && !(c->build_msg = strdup(k->build_msg))) {
        hcq_kernel_destroy(c);
        base_err(HCQ_ENOMEM, "hcq_kernel_clone: out of memory");
        return NULL;
    }
    return c;
}

const char *hcq_kernel_name(const hcq_kernel *k) { return k ? k->name : "?"; }
uint32_t hcq_kernel_op_count(const hcq_kernel *k) { return k ? k->nops : 0; }
const hcq_ir_op *hcq_kernel_ops(const hcq_kernel *k) { return k ? k->ops : NULL; }

void ir_build_fail(hcq_kernel *k, const char *fmt, ...)
{
    if (k->build_err) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    k->build_err = HCQ_EINVAL;
    k->build_msg = strdup(msg); /* NULL is survivable: verify then says so generically */
}

hcq_ir_ref ir_append(hcq_kernel *k, const hcq_ir_op *o)
{
    if (k->nops == k->cap) {
        if (k->cap >= IR_MAX_OPS) {
            ir_build_fail(k, "kernel has %u ops, the most a kernel may have", IR_MAX_OPS);
            return HCQ_IR_NONE;
        }
        uint32_t ncap = k->cap ? k->cap * 2 : 64;
        hcq_ir_op *n = base_realloc_array(k->ops, ncap, sizeof *n);
        if (!n) {
            ir_build_fail(k, "out of memory growing the op array to %u ops", ncap);
            return HCQ_IR_NONE;
        }
        k->ops = n;
        k->cap = ncap;
    }
    k->ops[k->nops] = *o;
    return k->nops++;
}

static hcq_ir_op make_op(hcq_op op, hcq_dtype dt, uint8_t flags, const hcq_ir_ref *src, uint8_t nsrc,
                         uint64_t arg)
{
    hcq_ir_op o;
    memset(&o, 0, sizeof o);
    o.op = (uint16_t)op;
    o.dtype = (uint8_t)dt;
    o.flags = flags;
    o.nsrc = nsrc;
    for (unsigned i = 0; i < HCQ_IR_MAX_SRC; i++) o.src[i] = i < nsrc ? src[i] : HCQ_IR_NONE;
    o.arg = arg;
    return o;
}

hcq_ir_ref hcq_ir_emit(hcq_kernel *k, hcq_op op, hcq_dtype dt, uint8_t flags, const hcq_ir_ref *src,
                       uint8_t nsrc, uint64_t arg)
{
    if (!k) return HCQ_IR_NONE;
    if (nsrc > HCQ_IR_MAX_SRC || (nsrc && !src)) {
        ir_build_fail(k, "hcq_ir_emit(%s) at op %u: %u operands%s; an op takes at most %d",
                      hcq_op_name(op), k->nops, nsrc, nsrc && !src ? " but src is NULL" : "",
                      HCQ_IR_MAX_SRC);
        return HCQ_IR_NONE;
    }
    hcq_ir_op o = make_op(op, dt, flags, src, nsrc, arg);
    return ir_append(k, &o);
}

/* The checked path of every typed builder call. */
static hcq_ir_ref build_vec(hcq_kernel *k, const char *fn, hcq_op op, hcq_dtype dt, unsigned vec, uint8_t flags,
                            const hcq_ir_ref *src, uint8_t nsrc, uint64_t arg)
{
    if (!k) return HCQ_IR_NONE;
    if (k->build_err) return HCQ_IR_NONE; /* the first error is the useful one */
    if (vec && (vec < 2 || vec > HCQ_IR_MAX_LANES || (vec & (vec - 1)))) {
        ir_build_fail(k, "%s(%s) at op %u: %u lanes; a vector has 2, 4, 8 or 16", fn, hcq_op_name(op), k->nops, vec);
        return HCQ_IR_NONE;
    }
    if (vec) flags |= HCQ_IR_FLAG_LANES((unsigned)__builtin_ctz(vec));
    hcq_ir_op o = make_op(op, dt, flags, src, nsrc, arg);
    char why[512];
    if (!ir_check_op(k, k->nops, &o, why, sizeof why)) {
        ir_build_fail(k, "%s(%s) at op %u: %s", fn, hcq_op_name(op), k->nops, why);
        return HCQ_IR_NONE;
    }
    return ir_append(k, &o);
}

static hcq_ir_ref build(hcq_kernel *k, const char *fn, hcq_op op, hcq_dtype dt, uint8_t flags,
                        const hcq_ir_ref *src, uint8_t nsrc, uint64_t arg)
{
    return build_vec(k, fn, op, dt, 0, flags, src, nsrc, arg);
}

/* The dtype of an operand for result-type inference; VOID when the ref is
 * bad (the check in build() then names the problem). */
static hcq_dtype dt_of(const hcq_kernel *k, hcq_ir_ref r)
{
    return k && r < k->nops ? (hcq_dtype)k->ops[r].dtype : HCQ_VOID;
}

static uint32_t next_param(const hcq_kernel *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->nops; i++)
        if (k->ops[i].op == HCQ_OP_PARAM) n++;
    return n;
}

hcq_ir_ref hcq_ir_param_buffer(hcq_kernel *k, hcq_dtype elem)
{
    if (!k) return HCQ_IR_NONE;
    return build(k, "hcq_ir_param_buffer", HCQ_OP_PARAM, elem, HCQ_IR_FLAG_PTR, NULL, 0, next_param(k));
}

hcq_ir_ref hcq_ir_param_scalar(hcq_kernel *k, hcq_dtype dt)
{
    if (!k) return HCQ_IR_NONE;
    return build(k, "hcq_ir_param_scalar", HCQ_OP_PARAM, dt, 0, NULL, 0, next_param(k));
}

hcq_ir_ref hcq_ir_special(hcq_kernel *k, hcq_special kind, unsigned dim)
{
    return build(k, "hcq_ir_special", HCQ_OP_SPECIAL, HCQ_I32, 0, NULL, 0,
                 (uint64_t)(unsigned)kind | (uint64_t)dim << 8);
}

/* Stores an integer constant sign- or zero-extended at its width, so the
 * arg reads the same in a dump as the value the kernel computes with. */
hcq_ir_ref hcq_ir_const_int(hcq_kernel *k, hcq_dtype dt, int64_t v)
{
    if (hcq_dtype_is_float(dt)) return hcq_ir_const_float(k, dt, (double)v);
    if (dt == HCQ_BOOL) return hcq_ir_const_bool(k, v != 0);
    uint64_t arg = hcq_dtype_is_int(dt) ? ir_const_lane(dt, (uint64_t)v) : (uint64_t)v;
    return build(k, "hcq_ir_const_int", HCQ_OP_CONST, dt, 0, NULL, 0, arg);
}

double hcq_dtype_round(hcq_dtype t, double v)
{
    if (t == HCQ_F32 || t == HCQ_F16 || t == HCQ_BF16) return (double)ir_bits_f32((uint32_t)ir_const_lane(t, ir_f64_bits(v)));
    return v;
}

hcq_ir_ref hcq_ir_const_float(hcq_kernel *k, hcq_dtype dt, double v)
{
    /* Round once here so the arg is the exact value the kernel uses. */
    return build(k, "hcq_ir_const_float", HCQ_OP_CONST, dt, 0, NULL, 0, ir_f64_bits(hcq_dtype_round(dt, v)));
}

hcq_ir_ref hcq_ir_const_bool(hcq_kernel *k, bool v)
{
    return build(k, "hcq_ir_const_bool", HCQ_OP_CONST, HCQ_BOOL, 0, NULL, 0, v ? 1 : 0);
}

hcq_ir_ref hcq_ir_unary(hcq_kernel *k, hcq_op op, hcq_ir_ref a)
{
    return build_vec(k, "hcq_ir_unary", op, dt_of(k, a), hcq_ir_lanes(k, a), 0, &a, 1, 0);
}

hcq_ir_ref hcq_ir_binary(hcq_kernel *k, hcq_op op, hcq_ir_ref a, hcq_ir_ref b)
{
    hcq_ir_ref s[2] = {a, b};
    hcq_dtype dt = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE ? HCQ_BOOL : dt_of(k, a);
    return build_vec(k, "hcq_ir_binary", op, dt, hcq_ir_lanes(k, a), 0, s, 2, 0);
}

hcq_ir_ref hcq_ir_where(hcq_kernel *k, hcq_ir_ref c, hcq_ir_ref a, hcq_ir_ref b)
{
    hcq_ir_ref s[3] = {c, a, b};
    return build(k, "hcq_ir_where", HCQ_OP_WHERE, dt_of(k, a), 0, s, 3, 0);
}

hcq_ir_ref hcq_ir_mulacc(hcq_kernel *k, hcq_ir_ref a, hcq_ir_ref b, hcq_ir_ref c)
{
    hcq_ir_ref s[3] = {a, b, c};
    return build_vec(k, "hcq_ir_mulacc", HCQ_OP_MULACC, dt_of(k, a), hcq_ir_lanes(k, a), 0, s, 3, 0);
}

hcq_ir_ref hcq_ir_cast(hcq_kernel *k, hcq_dtype to, hcq_ir_ref a)
{
    return build_vec(k, "hcq_ir_cast", HCQ_OP_CAST, to, hcq_ir_lanes(k, a), 0, &a, 1, 0);
}

hcq_ir_ref hcq_ir_bitcast(hcq_kernel *k, hcq_dtype to, hcq_ir_ref a)
{
    return build_vec(k, "hcq_ir_bitcast", HCQ_OP_BITCAST, to, hcq_ir_lanes(k, a), 0, &a, 1, 0);
}

hcq_ir_ref hcq_ir_load(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx)
{
    hcq_ir_ref s[2] = {buf, idx};
    return build(k, "hcq_ir_load", HCQ_OP_LOAD, dt_of(k, buf), 0, s, 2, 0);
}

hcq_ir_ref hcq_ir_load_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref gate,
                             hcq_ir_ref alt)
{
    hcq_ir_ref s[4] = {buf, idx, gate, alt};
    return build(k, "hcq_ir_load_gated", HCQ_OP_LOAD, dt_of(k, buf), 0, s, 4, 0);
}

void hcq_ir_store(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val)
{
    hcq_ir_ref s[3] = {buf, idx, val};
    build(k, "hcq_ir_store", HCQ_OP_STORE, HCQ_VOID, 0, s, 3, 0);
}

void hcq_ir_store_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val, hcq_ir_ref gate)
{
    hcq_ir_ref s[4] = {buf, idx, val, gate};
    build(k, "hcq_ir_store_gated", HCQ_OP_STORE, HCQ_VOID, 0, s, 4, 0);
}

/* ** vectors */
unsigned hcq_ir_lanes(const hcq_kernel *k, hcq_ir_ref r) { return k && r < k->nops ? ir_vec(&k->ops[r]) : 0; }

hcq_ir_ref hcq_ir_load_vec(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes)
{
    hcq_ir_ref s[2] = {buf, idx};
    return build_vec(k, "hcq_ir_load_vec", HCQ_OP_LOAD, dt_of(k, buf), lanes, 0, s, 2, 0);
}

hcq_ir_ref hcq_ir_load_vec_gated(hcq_kernel *k, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes, hcq_ir_ref gate,
                                 hcq_ir_ref alt)
{
    hcq_ir_ref s[4] = {buf, idx, gate, alt};
    return build_vec(k, "hcq_ir_load_vec_gated", HCQ_OP_LOAD, dt_of(k, buf), lanes, 0, s, 4, 0);
}

hcq_ir_ref hcq_ir_vsplat(hcq_kernel *k, hcq_ir_ref scalar, unsigned lanes)
{
    return build_vec(k, "hcq_ir_vsplat", HCQ_OP_VSPLAT, dt_of(k, scalar), lanes, 0, &scalar, 1, 0);
}

hcq_ir_ref hcq_ir_vget(hcq_kernel *k, hcq_ir_ref vec, unsigned lane)
{
    return build(k, "hcq_ir_vget", HCQ_OP_VGET, dt_of(k, vec), 0, &vec, 1, lane);
}

hcq_ir_ref hcq_ir_vset(hcq_kernel *k, hcq_ir_ref vec, unsigned lane, hcq_ir_ref scalar)
{
    hcq_ir_ref s[2] = {vec, scalar};
    return build_vec(k, "hcq_ir_vset", HCQ_OP_VSET, dt_of(k, vec), hcq_ir_lanes(k, vec), 0, s, 2, lane);
}

/* ** matrix multiply-accumulate (the kinds' table and the coordinates: mma.c) */
hcq_ir_ref hcq_ir_mma(hcq_kernel *k, hcq_mma_kind kind, hcq_ir_ref a, hcq_ir_ref b, hcq_ir_ref c)
{
    hcq_ir_ref s[3] = {a, b, c};
    const cc_mma_kind *m = cc_mma_kind_of(kind);
    /* an unknown kind still goes through the check, which names it */
    return build_vec(k, "hcq_ir_mma", HCQ_OP_MMA, m ? m->info.acc : dt_of(k, c), m ? m->info.c_lanes : hcq_ir_lanes(k, c),
                     0, s, 3, (uint64_t)kind);
}

hcq_ir_ref hcq_ir_range(hcq_kernel *k, hcq_ir_ref start, hcq_ir_ref end)
{
    hcq_ir_ref s[2] = {start, end};
    return build(k, "hcq_ir_range", HCQ_OP_RANGE, dt_of(k, start), 0, s, 2, 0);
}

void hcq_ir_endrange(hcq_kernel *k, hcq_ir_ref range)
{
    build(k, "hcq_ir_endrange", HCQ_OP_ENDRANGE, HCQ_VOID, 0, &range, 1, 0);
}

hcq_ir_ref hcq_ir_if(hcq_kernel *k, hcq_ir_ref cond)
{
    return build(k, "hcq_ir_if", HCQ_OP_IF, HCQ_VOID, 0, &cond, 1, 0);
}

void hcq_ir_endif(hcq_kernel *k, hcq_ir_ref iff)
{
    build(k, "hcq_ir_endif", HCQ_OP_ENDIF, HCQ_VOID, 0, &iff, 1, 0);
}

hcq_ir_ref hcq_ir_define_local(hcq_kernel *k, hcq_dtype elem, uint32_t count)
{
    return build(k, "hcq_ir_define_local", HCQ_OP_DEFINE_LOCAL, elem, HCQ_IR_FLAG_PTR, NULL, 0, count);
}

void hcq_ir_barrier(hcq_kernel *k) { build(k, "hcq_ir_barrier", HCQ_OP_BARRIER, HCQ_VOID, 0, NULL, 0, 0); }

hcq_ir_ref hcq_ir_define_acc(hcq_kernel *k, hcq_ir_ref init)
{
    return build_vec(k, "hcq_ir_define_acc", HCQ_OP_DEFINE_ACC, dt_of(k, init), hcq_ir_lanes(k, init), 0, &init, 1,
                     0);
}

void hcq_ir_assign(hcq_kernel *k, hcq_ir_ref acc, hcq_ir_ref val)
{
    hcq_ir_ref s[2] = {acc, val};
    build(k, "hcq_ir_assign", HCQ_OP_ASSIGN, HCQ_VOID, 0, s, 2, 0);
}

/* ** constants */
uint64_t ir_const_lane(hcq_dtype dt, uint64_t arg)
{
    unsigned bits = ir_dt_bits(dt);
    switch (dt) {
    case HCQ_BOOL: return arg != 0;
    case HCQ_F64: return arg;
    case HCQ_F32: return ir_f32_bits((float)ir_bits_f64(arg));
    case HCQ_F16: return ir_f32_bits(ir_round_f16(ir_f64_to_f32_odd(ir_bits_f64(arg))));
    case HCQ_BF16: return ir_f32_bits(ir_round_bf16(ir_f64_to_f32_odd(ir_bits_f64(arg))));
    default: break;
    }
    if (bits == 0 || bits >= 64) return arg;
    if (hcq_dtype_is_signed(dt)) return (uint64_t)((int64_t)(arg << (64 - bits)) >> (64 - bits));
    return arg & ((1ull << bits) - 1);
}

/* ** parameters and local memory */
uint32_t hcq_kernel_param_count(const hcq_kernel *k)
{
    return k ? next_param(k) : 0;
}

uint32_t hcq_kernel_param_layout(const hcq_kernel *k, hcq_param_info *info)
{
    uint32_t n = hcq_kernel_param_count(k), off = 0;
    /* In index order, like a C argument list; n is small, so the search
     * per index costs nothing next to what callers do with the layout. */
    for (uint32_t idx = 0; idx < n; idx++) {
        const hcq_ir_op *p = NULL;
        for (uint32_t i = 0; i < k->nops && !p; i++)
            if (k->ops[i].op == HCQ_OP_PARAM && k->ops[i].arg == idx) p = &k->ops[i];
        hcq_param_info d;
        memset(&d, 0, sizeof d);
        bool buf = p && (p->flags & HCQ_IR_FLAG_PTR);
        uint32_t size = !p ? 0 : buf ? 8 : (uint32_t)hcq_dtype_size((hcq_dtype)p->dtype);
        if (size) { /* size 0 only in an unverified kernel with a gap */
            off = (uint32_t)base_align_up(off, size);
            d.offset = off;
            d.size = size;
            d.is_buffer = buf;
            d.dtype = p->dtype;
            off += size;
        }
        if (info) info[idx] = d;
    }
    return (uint32_t)base_align_up(off, 8);
}

uint32_t hcq_kernel_local_bytes(const hcq_kernel *k)
{
    uint64_t total = 0;
    for (uint32_t i = 0; k && i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op != HCQ_OP_DEFINE_LOCAL) continue;
        if (o->arg > IR_MAX_LOCAL_BYTES) return UINT32_MAX; /* fails verify anyway */
        total = base_align_up(total, 16) + o->arg * hcq_dtype_size((hcq_dtype)o->dtype);
        if (total > IR_MAX_LOCAL_BYTES) return UINT32_MAX; /* fails verify anyway */
    }
    return (uint32_t)total;
}
