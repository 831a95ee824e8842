/* Building kernel IR with common-subexpression elimination and a little
 * folding. Every pure op (consts, ids, ALU, casts, loads from kernel
 * parameters, which the tensor layer never writes while reading) is
 * looked up before it is appended; a hit is reused only while the block
 * that made it is still open, because a value is not visible after its
 * RANGE or IF closes. Ops that read an accumulator are never shared: the
 * accumulator changes between them. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

#define NONE HCQ_IR_NONE

static bool ensure(tt_irb *b)
{
    uint32_t n = hcq_kernel_op_count(b->k) + 8;
    if (n <= b->opcap) return true;
    uint32_t cap = b->opcap ? b->opcap : 256;
    while (cap < n) cap *= 2;
    uint32_t *blk = realloc(b->blk, cap * sizeof *blk);
    if (blk) b->blk = blk;
    bool *open = realloc(b->open, cap * sizeof *open);
    if (open) b->open = open;
    if (!blk || !open) return (b->oom = true, false);
    memset(b->open + b->opcap, 0, (cap - b->opcap) * sizeof *open);
    b->opcap = cap;
    return true;
}

hcq_status tt_irb_init(tt_irb *b, const char *name)
{
    hcq_kernel_destroy(b->k);
    b->k = hcq_kernel_create(name);
    if (!b->k) return hcq_error_status() ? hcq_error_status() : HCQ_ENOMEM;
    if (!b->tab) {
        b->tcap = 1024;
        b->tab = malloc(b->tcap * sizeof *b->tab);
    }
    if (!b->stack) {
        b->scap = 16;
        b->stack = malloc(b->scap * sizeof *b->stack);
    }
    b->depth = 0;
    b->tcount = 0;
    b->oom = false;
    if (!b->tab || !b->stack || !ensure(b)) {
        tt_irb_free(b);
        return base_err(HCQ_ENOMEM, "lowering: out of memory");
    }
    memset(b->tab, 0xff, b->tcap * sizeof *b->tab);
    memset(b->open, 0, b->opcap * sizeof *b->open);
    return HCQ_OK;
}

void tt_irb_free(tt_irb *b)
{
    hcq_kernel_destroy(b->k);
    free(b->blk);
    free(b->open);
    free(b->tab);
    free(b->stack);
    memset(b, 0, sizeof *b);
}

hcq_kernel *tt_irb_take(tt_irb *b)
{
    hcq_kernel *k = b->k;
    b->k = NULL;
    return k;
}

bool tt_irb_visible(const tt_irb *b, hcq_ir_ref r)
{
    if (r == NONE || r >= b->opcap) return false;
    uint32_t blk = b->blk[r];
    return blk == NONE || b->open[blk];
}

static const hcq_ir_op *op_at(const tt_irb *b, hcq_ir_ref r) { return &hcq_kernel_ops(b->k)[r]; }

hcq_dtype tt_irb_dtype(const tt_irb *b, hcq_ir_ref r) { return r == NONE ? HCQ_VOID : (hcq_dtype)op_at(b, r)->dtype; }

bool tt_irb_const_int(const tt_irb *b, hcq_ir_ref r, int64_t *v)
{
    if (r == NONE) return false;
    const hcq_ir_op *o = op_at(b, r);
    if (o->op != HCQ_OP_CONST || hcq_dtype_is_float((hcq_dtype)o->dtype)) return false;
    *v = (int64_t)o->arg;
    return true;
}

static uint32_t hash_op(const hcq_ir_op *o)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint64_t p = 0x100000001b3ull;
    h = (h ^ o->op) * p;
    h = (h ^ o->dtype) * p;
    h = (h ^ o->flags) * p;
    for (int i = 0; i < o->nsrc; i++) h = (h ^ o->src[i]) * p;
    h = (h ^ o->arg) * p;
    return (uint32_t)(h ^ (h >> 29));
}

static bool same_op(const hcq_ir_op *a, const hcq_ir_op *b)
{
    if (a->op != b->op || a->dtype != b->dtype || a->flags != b->flags || a->nsrc != b->nsrc || a->arg != b->arg)
        return false;
    for (int i = 0; i < a->nsrc; i++)
        if (a->src[i] != b->src[i]) return false;
    return true;
}

static void tab_insert(tt_irb *b, hcq_ir_ref r);

static void tab_grow(tt_irb *b)
{
    uint32_t old = b->tcap;
    hcq_ir_ref *ot = b->tab;
    hcq_ir_ref *nt = malloc(old * 2 * sizeof *nt);
    if (!nt) return; /* keep working without growing: CSE is an optimisation */
    memset(nt, 0xff, old * 2 * sizeof *nt);
    b->tab = nt;
    b->tcap = old * 2;
    b->tcount = 0;
    for (uint32_t i = 0; i < old; i++)
        if (ot[i] != NONE && tt_irb_visible(b, ot[i])) tab_insert(b, ot[i]);
    free(ot);
}

static void tab_insert(tt_irb *b, hcq_ir_ref r)
{
    if ((b->tcount + 1) * 2 > b->tcap) tab_grow(b);
    if ((b->tcount + 1) * 2 > b->tcap) return;
    uint32_t m = b->tcap - 1, i = hash_op(op_at(b, r)) & m;
    while (b->tab[i] != NONE) {
        if (!tt_irb_visible(b, b->tab[i])) break; /* a dead entry: reuse the slot */
        i = (i + 1) & m;
    }
    if (b->tab[i] == NONE) b->tcount++;
    b->tab[i] = r;
}

static hcq_ir_ref tab_find(const tt_irb *b, const hcq_ir_op *o)
{
    uint32_t m = b->tcap - 1, i = hash_op(o) & m;
    for (uint32_t n = 0; n < b->tcap && b->tab[i] != NONE; n++, i = (i + 1) & m) {
        hcq_ir_ref r = b->tab[i];
        if (tt_irb_visible(b, r) && same_op(op_at(b, r), o)) return r;
    }
    return NONE;
}

static bool reads_acc(const tt_irb *b, const hcq_ir_op *o)
{
    for (int i = 0; i < o->nsrc; i++)
        if (o->src[i] != NONE && op_at(b, o->src[i])->op == HCQ_OP_DEFINE_ACC) return true;
    return false;
}

/* Appends (or finds) an op; the builder checks it (its sticky error
 * surfaces at verify time). */
static hcq_ir_ref add_f(tt_irb *b, hcq_op op, hcq_dtype dt, uint8_t flags, const hcq_ir_ref *src, uint8_t nsrc, uint64_t arg,
                        bool pure)
{
    if (!ensure(b)) return NONE;
    for (int i = 0; i < nsrc; i++)
        if (src[i] == NONE) return NONE;
    hcq_ir_op o;
    memset(&o, 0, sizeof o);
    o.op = (uint16_t)op;
    o.dtype = (uint8_t)dt;
    o.flags = flags;
    o.nsrc = nsrc;
    for (int i = 0; i < HCQ_IR_MAX_SRC; i++) o.src[i] = i < nsrc ? src[i] : NONE;
    o.arg = arg;
    pure = pure && !reads_acc(b, &o);
    if (pure) {
        hcq_ir_ref hit = tab_find(b, &o);
        if (hit != NONE) return hit;
    }
    hcq_ir_ref r = hcq_ir_emit(b->k, op, dt, flags, src, nsrc, arg);
    if (r == NONE) return NONE;
    b->blk[r] = b->depth ? b->stack[b->depth - 1] : NONE;
    b->open[r] = false;
    if (pure) tab_insert(b, r);
    return r;
}

static hcq_ir_ref add(tt_irb *b, hcq_op op, hcq_dtype dt, const hcq_ir_ref *src, uint8_t nsrc, uint64_t arg, bool pure)
{
    return add_f(b, op, dt, 0, src, nsrc, arg, pure);
}

/* a vector of `lanes` (2..16, a power of 2) in an op's flags */
static uint8_t lanes_flag(unsigned lanes) { return HCQ_IR_FLAG_LANES((unsigned)__builtin_ctz(lanes ? lanes : 1)); }

/* ** constants */
hcq_ir_ref tt_irb_int(tt_irb *b, hcq_dtype dt, int64_t v)
{
    if (dt == HCQ_BOOL) return tt_irb_bool(b, v != 0);
    /* the canonical arg the builder would store: sign- or zero-extended */
    unsigned bits = (unsigned)hcq_dtype_size(dt) * 8;
    uint64_t u = (uint64_t)v;
    if (bits < 64) {
        u &= (1ull << bits) - 1;
        if (hcq_dtype_is_signed(dt) && (u >> (bits - 1))) u |= ~0ull << bits;
    }
    return add(b, HCQ_OP_CONST, dt, NULL, 0, u, true);
}

hcq_ir_ref tt_irb_float(tt_irb *b, hcq_dtype dt, double v)
{
    /* f32: round here and share by the stored bits */
    double r = v;
    if (dt == HCQ_F32) r = (double)(float)v;
    uint64_t bits;
    if (dt == HCQ_F16 || dt == HCQ_BF16) {
        /* let the builder round (it knows the narrow formats), then dedupe */
        hcq_ir_ref c = hcq_ir_const_float(b->k, dt, v);
        if (c == NONE || !ensure(b)) return NONE;
        b->blk[c] = b->depth ? b->stack[b->depth - 1] : NONE;
        b->open[c] = false;
        hcq_ir_op o = *op_at(b, c);
        hcq_ir_ref hit = tab_find(b, &o);
        if (hit != NONE && hit != c) return hit; /* the extra const is dead, harmless */
        tab_insert(b, c);
        return c;
    }
    memcpy(&bits, &r, 8);
    return add(b, HCQ_OP_CONST, dt, NULL, 0, bits, true);
}

hcq_ir_ref tt_irb_bool(tt_irb *b, bool v) { return add(b, HCQ_OP_CONST, HCQ_BOOL, NULL, 0, v, true); }

hcq_ir_ref tt_irb_val(tt_irb *b, hcq_dtype dt, tt_val v)
{
    return hcq_dtype_is_float(dt) ? tt_irb_float(b, dt, v.f) : tt_irb_int(b, dt, v.i);
}

hcq_ir_ref tt_irb_special(tt_irb *b, hcq_special kind, unsigned dim)
{
    return add(b, HCQ_OP_SPECIAL, HCQ_I32, NULL, 0, (uint64_t)kind | (uint64_t)dim << 8, true);
}

/* ** ALU */
static bool is_const(const tt_irb *b, hcq_ir_ref r, uint64_t *arg)
{
    if (r == NONE) return false;
    const hcq_ir_op *o = op_at(b, r);
    if (o->op != HCQ_OP_CONST) return false;
    *arg = o->arg;
    return true;
}

hcq_ir_ref tt_irb_unary(tt_irb *b, hcq_op op, hcq_ir_ref a)
{
    return add(b, op, tt_irb_dtype(b, a), &a, 1, 0, true);
}

hcq_ir_ref tt_irb_binary(tt_irb *b, hcq_op op, hcq_ir_ref x, hcq_ir_ref y)
{
    hcq_dtype dt = tt_irb_dtype(b, x);
    bool is_int = hcq_dtype_is_int(dt);
    int64_t cx = 0, cy = 0;
    bool kx = is_int && tt_irb_const_int(b, x, &cx), ky = is_int && tt_irb_const_int(b, y, &cy);
    if (is_int) { /* integer folding is exact; float folding is left to the kernel */
        if (kx && ky) {
            int64_t r;
            switch (op) {
            case HCQ_OP_ADD: return tt_irb_int(b, dt, (int64_t)((uint64_t)cx + (uint64_t)cy));
            case HCQ_OP_SUB: return tt_irb_int(b, dt, (int64_t)((uint64_t)cx - (uint64_t)cy));
            case HCQ_OP_MUL: return tt_irb_int(b, dt, (int64_t)((uint64_t)cx * (uint64_t)cy));
            /* (constants are canonical: unsigned ones compare as their bits) */
            case HCQ_OP_CMPLT: return tt_irb_bool(b, hcq_dtype_is_signed(dt) ? cx < cy : (uint64_t)cx < (uint64_t)cy);
            case HCQ_OP_CMPNE: return tt_irb_bool(b, cx != cy);
            case HCQ_OP_MAX:
                r = (hcq_dtype_is_signed(dt) ? cx > cy : (uint64_t)cx > (uint64_t)cy) ? cx : cy;
                return tt_irb_int(b, dt, r);
            default: break;
            }
        }
        if (op == HCQ_OP_ADD && ky && cy == 0) return x;
        if (op == HCQ_OP_ADD && kx && cx == 0) return y;
        if (op == HCQ_OP_SUB && ky && cy == 0) return x;
        if (op == HCQ_OP_MUL && ky && cy == 1) return x;
        if (op == HCQ_OP_MUL && kx && cx == 1) return y;
        if (op == HCQ_OP_MUL && ((ky && cy == 0) || (kx && cx == 0))) return tt_irb_int(b, dt, 0);
        if ((op == HCQ_OP_IDIV) && ky && cy == 1) return x;
    }
    uint64_t ax, ay;
    if (dt == HCQ_BOOL && (op == HCQ_OP_AND || op == HCQ_OP_OR)) {
        if (is_const(b, x, &ax)) return (ax != 0) == (op == HCQ_OP_AND) ? y : x;
        if (is_const(b, y, &ay)) return (ay != 0) == (op == HCQ_OP_AND) ? x : y;
    }
    if (x == y && (op == HCQ_OP_AND || op == HCQ_OP_OR || op == HCQ_OP_MAX)) return x;
    hcq_dtype rdt = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE ? HCQ_BOOL : dt;
    hcq_ir_ref s[2] = {x, y};
    return add(b, op, rdt, s, 2, 0, true);
}

hcq_ir_ref tt_irb_where(tt_irb *b, hcq_ir_ref c, hcq_ir_ref x, hcq_ir_ref y)
{
    uint64_t a;
    if (is_const(b, c, &a)) return a ? x : y;
    if (x == y) return x;
    hcq_ir_ref s[3] = {c, x, y};
    return add(b, HCQ_OP_WHERE, tt_irb_dtype(b, x), s, 3, 0, true);
}

hcq_ir_ref tt_irb_mulacc(tt_irb *b, hcq_ir_ref x, hcq_ir_ref y, hcq_ir_ref z)
{
    hcq_ir_ref s[3] = {x, y, z};
    return add(b, HCQ_OP_MULACC, tt_irb_dtype(b, x), s, 3, 0, true);
}

hcq_ir_ref tt_irb_cast(tt_irb *b, hcq_dtype dt, hcq_ir_ref a)
{
    if (a == NONE) return NONE;
    if (tt_irb_dtype(b, a) == dt) return a;
    int64_t v;
    if (tt_irb_const_int(b, a, &v) && hcq_dtype_is_int(dt) && hcq_dtype_is_int(tt_irb_dtype(b, a)))
        return tt_irb_int(b, dt, v);
    return add(b, HCQ_OP_CAST, dt, &a, 1, 0, true);
}

hcq_ir_ref tt_irb_bitcast(tt_irb *b, hcq_dtype dt, hcq_ir_ref a) { return add(b, HCQ_OP_BITCAST, dt, &a, 1, 0, true); }

hcq_ir_ref tt_irb_and(tt_irb *b, hcq_ir_ref g1, hcq_ir_ref g2)
{
    if (g1 == NONE) return g2;
    if (g2 == NONE) return g1;
    return tt_irb_binary(b, HCQ_OP_AND, g1, g2);
}

/* ** memory */
hcq_ir_ref tt_irb_load(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref gate, hcq_ir_ref alt)
{
    return tt_irb_load_vec(b, buf, idx, 0, gate, alt); /* 0 lanes: a scalar */
}

void tt_irb_store(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, hcq_ir_ref val, hcq_ir_ref gate)
{
    uint64_t g;
    if (gate != NONE && is_const(b, gate, &g)) {
        if (!g) return;
        gate = NONE;
    }
    hcq_ir_ref s[4] = {buf, idx, val, gate};
    add(b, HCQ_OP_STORE, HCQ_VOID, s, gate == NONE ? 3 : 4, 0, false);
}

hcq_ir_ref tt_irb_load_vec(tt_irb *b, hcq_ir_ref buf, hcq_ir_ref idx, unsigned lanes, hcq_ir_ref gate, hcq_ir_ref alt)
{
    hcq_dtype dt = tt_irb_dtype(b, buf);
    uint64_t g;
    bool pure = op_at(b, buf)->op == HCQ_OP_PARAM;
    if (gate != NONE && is_const(b, gate, &g)) {
        if (!g) return alt;
        gate = NONE;
    }
    hcq_ir_ref s[4] = {buf, idx, gate, alt};
    return add_f(b, HCQ_OP_LOAD, dt, lanes_flag(lanes), s, gate == NONE ? 2 : 4, 0, pure);
}

hcq_ir_ref tt_irb_vsplat(tt_irb *b, hcq_ir_ref scalar, unsigned lanes)
{
    return add_f(b, HCQ_OP_VSPLAT, tt_irb_dtype(b, scalar), lanes_flag(lanes), &scalar, 1, 0, true);
}

hcq_ir_ref tt_irb_vget(tt_irb *b, hcq_ir_ref vec, unsigned lane) { return add(b, HCQ_OP_VGET, tt_irb_dtype(b, vec), &vec, 1, lane, true); }

hcq_ir_ref tt_irb_vset(tt_irb *b, hcq_ir_ref vec, unsigned lane, hcq_ir_ref scalar)
{
    if (vec == NONE) return NONE;
    hcq_ir_ref s[2] = {vec, scalar};
    return add_f(b, HCQ_OP_VSET, tt_irb_dtype(b, vec), op_at(b, vec)->flags & HCQ_IR_FLAG_LANES_MASK, s, 2, lane, true);
}

/* ** structure */
static void push(tt_irb *b, hcq_ir_ref r)
{
    if (r == NONE) return;
    if (b->depth == b->scap) {
        hcq_ir_ref *ns = realloc(b->stack, b->scap * 2 * sizeof *ns);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->stack = ns;
        b->scap *= 2;
    }
    b->stack[b->depth++] = r;
    b->open[r] = true;
}

static void pop(tt_irb *b, hcq_ir_ref r)
{
    if (b->depth && b->stack[b->depth - 1] == r) {
        b->depth--;
        b->open[r] = false;
    }
}

hcq_ir_ref tt_irb_range(tt_irb *b, hcq_ir_ref start, hcq_ir_ref end)
{
    hcq_ir_ref s[2] = {start, end};
    hcq_ir_ref r = add(b, HCQ_OP_RANGE, tt_irb_dtype(b, start), s, 2, 0, false);
    push(b, r);
    return r;
}

void tt_irb_endrange(tt_irb *b, hcq_ir_ref r)
{
    pop(b, r);
    add(b, HCQ_OP_ENDRANGE, HCQ_VOID, &r, 1, 0, false);
}

hcq_ir_ref tt_irb_if(tt_irb *b, hcq_ir_ref cond)
{
    hcq_ir_ref r = add(b, HCQ_OP_IF, HCQ_VOID, &cond, 1, 0, false);
    push(b, r);
    return r;
}

void tt_irb_endif(tt_irb *b, hcq_ir_ref r)
{
    pop(b, r);
    add(b, HCQ_OP_ENDIF, HCQ_VOID, &r, 1, 0, false);
}

hcq_ir_ref tt_irb_acc(tt_irb *b, hcq_ir_ref init)
{
    return add(b, HCQ_OP_DEFINE_ACC, tt_irb_dtype(b, init), &init, 1, 0, false);
}

void tt_irb_assign(tt_irb *b, hcq_ir_ref acc, hcq_ir_ref v)
{
    hcq_ir_ref s[2] = {acc, v};
    add(b, HCQ_OP_ASSIGN, HCQ_VOID, s, 2, 0, false);
}

hcq_ir_ref tt_irb_param(tt_irb *b, hcq_dtype elem)
{
    if (!ensure(b)) return NONE;
    hcq_ir_ref r = hcq_ir_param_buffer(b->k, elem);
    if (r != NONE) {
        b->blk[r] = NONE;
        b->open[r] = false;
    }
    return r;
}

hcq_ir_ref tt_irb_param_scalar(tt_irb *b, hcq_dtype dt)
{
    if (!ensure(b)) return NONE;
    hcq_ir_ref r = hcq_ir_param_scalar(b->k, dt);
    if (r != NONE) {
        b->blk[r] = NONE;
        b->open[r] = false;
    }
    return r;
}

hcq_ir_ref tt_irb_local(tt_irb *b, hcq_dtype elem, uint32_t count)
{
    if (!ensure(b)) return NONE;
    hcq_ir_ref r = hcq_ir_define_local(b->k, elem, count);
    if (r != NONE) {
        b->blk[r] = NONE;
        b->open[r] = false;
    }
    return r;
}

void tt_irb_barrier(tt_irb *b)
{
    if (!ensure(b)) return;
    hcq_ir_ref r = hcq_ir_emit(b->k, HCQ_OP_BARRIER, HCQ_VOID, 0, NULL, 0, 0);
    if (r != NONE) {
        b->blk[r] = b->depth ? b->stack[b->depth - 1] : NONE;
        b->open[r] = false;
    }
}

/* Ops appended straight through the hcq_ir API since `from` (vector and
 * MMA ops, hcq_ir_mma_coord's index arithmetic: tc.c) belong to the open
 * block, so values made in a RANGE are not reused after it; CSE does not
 * see them (they are made once each). */
void tt_irb_adopt(tt_irb *b, hcq_ir_ref from)
{
    if (!ensure(b)) return;
    uint32_t n = hcq_kernel_op_count(b->k);
    for (hcq_ir_ref r = from; r < n; r++) {
        b->blk[r] = b->depth ? b->stack[b->depth - 1] : NONE;
        b->open[r] = false;
    }
}
