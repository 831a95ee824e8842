/* The random kernel generator (irgen.h). The kernel is built with the
 * public builder; the generator keeps a pool of the values visible where
 * it is, each with two facts: uniform (the same for every work-item of a
 * group, as the verifier judges it: no local_id, no load, no acc) and
 * exact (bits fully defined: anything but a float an op computed, whose
 * NaN payload is unspecified). */
#include "tests/diff/irgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir.h"
#include "compiler/ir_float.h"

enum { VF_UNIFORM = 1, VF_EXACT = 2 };

typedef struct gval {
    hcq_ir_ref r;
    uint8_t t;
    uint8_t f;
} gval;

typedef struct ginput {
    hcq_ir_ref r;
    hcq_dtype t;
    uint32_t total, bias; /* elements allocated, and before the pointer */
} ginput;

typedef struct glocal {
    hcq_ir_ref r;
    hcq_dtype t;
    uint32_t count, per; /* elements; per work-item in an exchange (count = per x W) */
    bool exact;          /* holds only exact values (exchanges store exact ones) */
    bool readable;       /* every element written, and a barrier since */
} glocal;

#define POOL 320
#define MAX_DEPTH 5
#define MAX_IN 5
#define MAX_LOCAL 3

typedef struct gen {
    irg_case *c;
    hcq_kernel *k;
    const irg_options *opt;
    uint64_t s;
    gval pool[POOL];
    int n;
    int depth;
    bool ctl_uniform; /* every enclosing block's operands are uniform: barriers allowed */
    uint32_t T, W;    /* work-items in the launch and in a group */
    hcq_ir_ref gid, lid, wsize;
    hcq_ir_ref out[HCQ_DTYPE_COUNT], trans[HCQ_DTYPE_COUNT];
    uint32_t out_param[HCQ_DTYPE_COUNT], trans_param[HCQ_DTYPE_COUNT];
    uint32_t out_slots[HCQ_DTYPE_COUNT], trans_slots[HCQ_DTYPE_COUNT];
    ginput in[MAX_IN];
    int nin;
    glocal loc[MAX_LOCAL];
    int nloc;
    uint32_t max_ops;
    uint32_t mult; /* product of the trip bounds of the enclosing loops */
} gen;

static uint64_t R(gen *g) { return irg_rand(&g->s); }
static uint64_t RN(gen *g, uint64_t n) { return n ? R(g) % n : 0; }
static bool chance(gen *g, unsigned percent) { return RN(g, 100) < percent; }

static const hcq_dtype all_dt[] = {HCQ_BOOL, HCQ_I8,  HCQ_U8,  HCQ_I16,  HCQ_U16, HCQ_I32, HCQ_U32,
                                   HCQ_I64,  HCQ_U64, HCQ_F16, HCQ_BF16, HCQ_F32, HCQ_F64};
static const hcq_dtype int_dt[] = {HCQ_I8, HCQ_U8, HCQ_I16, HCQ_U16, HCQ_I32, HCQ_U32, HCQ_I64, HCQ_U64};
static const hcq_dtype float_dt[] = {HCQ_F16, HCQ_BF16, HCQ_F32, HCQ_F64};

static hcq_dtype any_dt(gen *g) { return all_dt[RN(g, BASE_ARRAY_LEN(all_dt))]; }
static hcq_dtype any_int(gen *g) { return int_dt[RN(g, BASE_ARRAY_LEN(int_dt))]; }
static hcq_dtype any_float(gen *g) { return float_dt[RN(g, BASE_ARRAY_LEN(float_dt))]; }
static bool is_float(hcq_dtype t) { return hcq_dtype_is_float(t); }
static bool is_int(hcq_dtype t) { return hcq_dtype_is_int(t); }

static void push(gen *g, hcq_ir_ref r, hcq_dtype t, unsigned f)
{
    if (r == HCQ_IR_NONE) return; /* a builder error: the verifier reports it */
    if (!is_float(t)) f |= VF_EXACT;
    if (g->n < POOL) g->pool[g->n++] = (gval){r, (uint8_t)t, (uint8_t)f};
    else g->pool[RN(g, POOL)] = (gval){r, (uint8_t)t, (uint8_t)f}; /* keep the pool fresh */
}

/* ** constants */
static int64_t int_special(gen *g, hcq_dtype t)
{
    unsigned w = ir_dt_bits(t);
    bool sgn = hcq_dtype_is_signed(t);
    int64_t min = sgn ? (int64_t)(0 - (1ull << (w - 1))) : 0;
    int64_t max = sgn ? (int64_t)((1ull << (w - 1)) - 1) : (int64_t)(w == 64 ? ~0ull : (1ull << w) - 1);
    int64_t tab[] = {0, 1, -1, min, max, min + 1, max - 1, 2, 3, 7, (int64_t)w - 1, (int64_t)w, (int64_t)w + 1,
                     (int64_t)0x5555555555555555ll, -100, 100};
    return tab[RN(g, BASE_ARRAY_LEN(tab))];
}

static hcq_ir_ref gen_const(gen *g, hcq_dtype t)
{
    hcq_kernel *k = g->k;
    if (t == HCQ_BOOL) return hcq_ir_const_bool(k, R(g) & 1);
    if (is_int(t)) {
        if (chance(g, 50)) return hcq_ir_const_int(k, t, int_special(g, t));
        return hcq_ir_const_int(k, t, (int64_t)RN(g, 41) - 20);
    }
    static const double tab[] = {0.0,     -0.0,    1.0,      -1.0,    0.5,     -2.5,    1.5,     INFINITY,
                                 -INFINITY, NAN,    -NAN,     65504.0, 65520.0, -0x1p-24, 0x1p-149, 0x1p-1074,
                                 3.4e38,  1e300,   0x1p-126, 2147483648.0, -2147483649.0, 1e-40, 3.14159265358979,
                                 -7.0,    1.00390625, 18446744073709551616.0, 0x1.000000001p0};
    if (chance(g, 70)) return hcq_ir_const_float(k, t, tab[RN(g, BASE_ARRAY_LEN(tab))]);
    return hcq_ir_const_float(k, t, ((double)RN(g, 2001) - 1000.0) / 16.0);
}

static void push_const(gen *g)
{
    hcq_dtype t = any_dt(g);
    push(g, gen_const(g, t), t, VF_UNIFORM | VF_EXACT);
}

/* ** picking values */
static int pick(gen *g) { return (int)RN(g, (uint64_t)g->n); }

/* a pool entry of dtype t whose flags include `need`, or -1 */
static int find(gen *g, hcq_dtype t, unsigned need)
{
    int start = pick(g);
    for (int j = 0; j < g->n; j++) {
        int i = (start + j) % g->n;
        if (g->pool[i].t == t && (g->pool[i].f & need) == need) return i;
    }
    return -1;
}

static hcq_ir_ref cast_to(gen *g, hcq_dtype to, const gval *v, unsigned *f)
{
    bool from_float = is_float((hcq_dtype)v->t);
    /* a float -> float cast is an op: a NaN it makes has no defined payload */
    *f = (v->f & VF_UNIFORM) | (!is_float(to) || !from_float ? VF_EXACT : 0);
    return hcq_ir_cast(g->k, to, v->r);
}

/* A value of dtype t with the flags `need` (VF_EXACT, VF_UNIFORM): from
 * the pool, a cast of one, or a constant (exact and uniform). */
static hcq_ir_ref value_f(gen *g, hcq_dtype t, unsigned need, unsigned *f)
{
    int i = chance(g, 8) ? -1 : find(g, t, need);
    if (i >= 0) {
        *f = g->pool[i].f;
        return g->pool[i].r;
    }
    if (chance(g, 60)) {
        int j = pick(g);
        unsigned cf;
        if ((g->pool[j].f & need & VF_UNIFORM) == (need & VF_UNIFORM)) {
            hcq_ir_ref r = cast_to(g, t, &g->pool[j], &cf);
            if ((cf & need) == need) {
                *f = cf;
                return r;
            }
        }
    }
    *f = VF_EXACT | VF_UNIFORM;
    return gen_const(g, t);
}

static hcq_ir_ref value(gen *g, hcq_dtype t)
{
    unsigned f;
    return value_f(g, t, 0, &f);
}

/* An operand for a new op: its dtype drawn evenly (the pool is mostly
 * i32 ids and counters), from the pool where it has one, else a cast. */
static gval pick_balanced(gen *g)
{
    hcq_dtype t = any_dt(g);
    int i = find(g, t, 0);
    if (i >= 0) return g->pool[i];
    gval v = g->pool[pick(g)];
    unsigned f;
    hcq_ir_ref r = cast_to(g, t, &v, &f);
    push(g, r, t, f);
    return (gval){r, (uint8_t)t, (uint8_t)(is_float(t) ? f : f | VF_EXACT)};
}

static hcq_ir_ref ci32(gen *g, int64_t v) { return hcq_ir_const_int(g->k, HCQ_I32, v); }

/* ** outputs: element slot * T + gid of the dtype's output buffer */
static hcq_ir_ref out_index(gen *g, uint32_t slot)
{
    return hcq_ir_binary(g->k, HCQ_OP_ADD, ci32(g, (int64_t)slot * g->T), g->gid);
}

static void store_out(gen *g, hcq_ir_ref v, hcq_dtype t, bool allow_gate)
{
    hcq_kernel *k = g->k;
    hcq_ir_ref idx = out_index(g, g->out_slots[t]++);
    if (allow_gate && chance(g, 15)) hcq_ir_store_gated(k, g->out[t], idx, v, value(g, HCQ_BOOL));
    else hcq_ir_store(k, g->out[t], idx, v);
}

/* stores a pool value; exact floats also as their bits */
static void store_val(gen *g, const gval *v, bool allow_gate)
{
    hcq_dtype t = (hcq_dtype)v->t;
    store_out(g, v->r, t, allow_gate);
    if (is_float(t) && (v->f & VF_EXACT)) {
        hcq_dtype bits = hcq_dtype_size(t) == 2 ? (R(g) & 1 ? HCQ_U16 : HCQ_I16)
                         : hcq_dtype_size(t) == 4 ? HCQ_U32 : HCQ_U64;
        store_out(g, hcq_ir_bitcast(g->k, bits, v->r), bits, false);
    }
}

/* ** ALU steps */
static bool accepts(hcq_op op, hcq_dtype t)
{
    bool i = is_int(t), f = is_float(t), b = t == HCQ_BOOL;
    switch (op) {
    case HCQ_OP_NEG: case HCQ_OP_ADD: case HCQ_OP_SUB: case HCQ_OP_MUL: case HCQ_OP_MAX: case HCQ_OP_CMPLT:
    case HCQ_OP_MULACC: return i || f;
    case HCQ_OP_IDIV: case HCQ_OP_MOD: case HCQ_OP_SHL: case HCQ_OP_SHR: return i;
    case HCQ_OP_AND: case HCQ_OP_OR: case HCQ_OP_XOR: return i || b;
    case HCQ_OP_CMPNE: case HCQ_OP_WHERE: return true;
    default: return f;
    }
}

static const hcq_op binary_ops[] = {HCQ_OP_ADD, HCQ_OP_SUB, HCQ_OP_MUL,   HCQ_OP_IDIV,  HCQ_OP_MOD,
                                    HCQ_OP_FDIV, HCQ_OP_MAX, HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_AND,
                                    HCQ_OP_OR,  HCQ_OP_XOR, HCQ_OP_SHL,   HCQ_OP_SHR};
static const hcq_op unary_ops[] = {HCQ_OP_NEG, HCQ_OP_SQRT, HCQ_OP_RECIP, HCQ_OP_TRUNC};

static void step_binary(gen *g)
{
    const gval a = pick_balanced(g);
    hcq_dtype t = (hcq_dtype)a.t;
    hcq_op op = binary_ops[RN(g, BASE_ARRAY_LEN(binary_ops))];
    if (!accepts(op, t)) {
        if (t == HCQ_BOOL) op = (hcq_op[]){HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR, HCQ_OP_CMPNE}[RN(g, 4)];
        else if (is_float(t)) op = (hcq_op[]){HCQ_OP_ADD, HCQ_OP_MUL, HCQ_OP_FDIV, HCQ_OP_MAX}[RN(g, 4)];
        else op = (hcq_op[]){HCQ_OP_IDIV, HCQ_OP_MOD, HCQ_OP_SHL, HCQ_OP_SHR}[RN(g, 4)];
    }
    unsigned fb;
    hcq_ir_ref b;
    if ((op == HCQ_OP_SHL || op == HCQ_OP_SHR) && chance(g, 40)) { /* counts around the width */
        b = hcq_ir_const_int(g->k, t, (int64_t)RN(g, ir_dt_bits(t) + 3));
        fb = VF_UNIFORM | VF_EXACT;
    } else {
        b = value_f(g, t, 0, &fb);
    }
    bool swap = chance(g, 30);
    hcq_ir_ref r = hcq_ir_binary(g->k, op, swap ? b : a.r, swap ? a.r : b);
    bool cmp = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE;
    push(g, r, cmp ? HCQ_BOOL : t, a.f & fb & VF_UNIFORM);
}

static void step_unary(gen *g)
{
    const gval a = pick_balanced(g);
    hcq_dtype t = (hcq_dtype)a.t;
    if (t == HCQ_BOOL) return;
    hcq_op op = is_float(t) ? unary_ops[RN(g, BASE_ARRAY_LEN(unary_ops))] : HCQ_OP_NEG;
    push(g, hcq_ir_unary(g->k, op, a.r), t, a.f & VF_UNIFORM);
}

/* exp2, log2, sin: straight to an output compared within the ulp bound */
static void step_transcendental(gen *g)
{
    hcq_dtype t = any_float(g);
    hcq_op ops[3] = {HCQ_OP_EXP2, HCQ_OP_LOG2, HCQ_OP_SIN};
    hcq_op op = ops[RN(g, g->opt->no_sin ? 2 : 3)];
    if (g->opt->no_sin && t == HCQ_F64) t = HCQ_F32;
    hcq_ir_ref a = value(g, t);
    if (chance(g, 50)) { /* a range where the functions are interesting, not just inf/0/NaN */
        hcq_ir_ref m = hcq_ir_const_float(g->k, t, op == HCQ_OP_SIN ? 0.25 : 0.0625);
        a = hcq_ir_binary(g->k, HCQ_OP_MUL, a, m);
    }
    hcq_ir_ref r = hcq_ir_unary(g->k, op, a);
    hcq_ir_store(g->k, g->trans[t], out_index(g, g->trans_slots[t]++), r);
}

static void step_where(gen *g)
{
    const gval a = pick_balanced(g);
    unsigned fc, fb;
    hcq_ir_ref c = value_f(g, HCQ_BOOL, 0, &fc), b = value_f(g, (hcq_dtype)a.t, 0, &fb);
    push(g, hcq_ir_where(g->k, c, a.r, b), (hcq_dtype)a.t, (a.f & fb & fc & VF_UNIFORM) | (a.f & fb & VF_EXACT));
}

static void step_mulacc(gen *g)
{
    const gval a = pick_balanced(g);
    hcq_dtype t = (hcq_dtype)a.t;
    if (!accepts(HCQ_OP_MULACC, t)) return;
    unsigned fb, fc;
    hcq_ir_ref b = value_f(g, t, 0, &fb), c = value_f(g, t, 0, &fc);
    push(g, hcq_ir_mulacc(g->k, a.r, b, c), t, a.f & fb & fc & VF_UNIFORM);
}

static void step_cast(gen *g)
{
    const gval a = pick_balanced(g);
    hcq_dtype to = any_dt(g);
    unsigned f;
    hcq_ir_ref r = cast_to(g, to, &a, &f);
    push(g, r, to, f);
}

static void step_bitcast(gen *g)
{
    const gval a = pick_balanced(g);
    hcq_dtype t = (hcq_dtype)a.t;
    if (t == HCQ_BOOL || !(a.f & VF_EXACT)) return; /* computed NaNs have no defined bits */
    static const hcq_dtype same[4][4] = {{HCQ_I8, HCQ_U8, HCQ_I8, HCQ_U8},
                                         {HCQ_I16, HCQ_U16, HCQ_F16, HCQ_BF16},
                                         {HCQ_I32, HCQ_U32, HCQ_F32, HCQ_I32},
                                         {HCQ_I64, HCQ_U64, HCQ_F64, HCQ_U64}};
    size_t sz = hcq_dtype_size(t), row = sz == 1 ? 0 : sz == 2 ? 1 : sz == 4 ? 2 : 3;
    hcq_dtype to = same[row][RN(g, 4)];
    push(g, hcq_ir_bitcast(g->k, to, a.r), to, a.f);
}

static void step_special(gen *g)
{
    hcq_special kind = (hcq_special)RN(g, 4);
    push(g, hcq_ir_special(g->k, kind, (unsigned)RN(g, 3)), HCQ_I32, kind == HCQ_SPECIAL_LOCAL_ID ? 0 : VF_UNIFORM);
}

/* ** global memory */
/* An index in [0, n) from any integer value: (u32)x % n. */
static hcq_ir_ref mod_index(gen *g, uint32_t n, unsigned *f)
{
    int i = -1;
    for (int tries = 0; tries < 4 && i < 0; tries++) {
        int j = pick(g);
        if (is_int((hcq_dtype)g->pool[j].t) || g->pool[j].t == HCQ_BOOL) i = j;
    }
    hcq_ir_ref x = i >= 0 ? g->pool[i].r : g->gid;
    *f = i >= 0 ? g->pool[i].f : 0;
    hcq_ir_ref u = hcq_ir_cast(g->k, HCQ_U32, x);
    return hcq_ir_binary(g->k, HCQ_OP_MOD, u, hcq_ir_const_int(g->k, HCQ_U32, n));
}

/* an integer dtype that holds [-bias, n) */
static hcq_dtype index_dt(gen *g, uint32_t n, uint32_t bias)
{
    for (;;) {
        hcq_dtype d = any_int(g);
        unsigned w = ir_dt_bits(d);
        bool sgn = hcq_dtype_is_signed(d);
        uint64_t max = sgn ? (1ull << (w - 1)) - 1 : (w == 64 ? ~0ull : (1ull << w) - 1);
        if (bias && !sgn) continue;
        if (bias && w < 64 && bias > (1ull << (w - 1))) continue;
        if (n - 1 <= max) return d;
    }
}

static void step_load(gen *g)
{
    if (!g->nin) return;
    hcq_kernel *k = g->k;
    const ginput *in = &g->in[RN(g, (uint64_t)g->nin)];
    hcq_ir_ref idx, gate = HCQ_IR_NONE;
    unsigned form = (unsigned)RN(g, 4), fi = 0, falt = VF_EXACT;
    int64_t bias = in->bias, count = (int64_t)in->total - bias;
    if (form == 0) { /* the work-item's own element */
        idx = hcq_ir_binary(k, HCQ_OP_SUB, g->gid, ci32(g, bias));
        if (!bias && chance(g, 50)) idx = hcq_ir_cast(k, chance(g, 50) ? HCQ_U32 : HCQ_U64, idx);
        else if (chance(g, 30)) idx = hcq_ir_cast(k, HCQ_I64, idx);
    } else if (form == 1 || form == 3) { /* data-dependent, of any index dtype */
        hcq_ir_ref m = mod_index(g, in->total, &fi);
        hcq_dtype d = index_dt(g, in->total, in->bias);
        idx = hcq_ir_cast(k, d, m);
        if (bias) idx = hcq_ir_binary(k, HCQ_OP_SUB, idx, hcq_ir_const_int(k, d, bias));
        if (form == 3) gate = value(g, HCQ_BOOL);
    } else { /* gated where the index would leave the buffer */
        int64_t off = (int64_t)RN(g, (uint64_t)in->total + 5);
        bool down = chance(g, 30);
        idx = hcq_ir_binary(k, down ? HCQ_OP_SUB : HCQ_OP_ADD, g->gid, ci32(g, off));
        if (bias) idx = hcq_ir_binary(k, HCQ_OP_SUB, idx, ci32(g, bias));
        gate = down ? hcq_ir_binary(k, HCQ_OP_CMPLT, ci32(g, -bias - 1), idx)
                    : hcq_ir_binary(k, HCQ_OP_CMPLT, idx, ci32(g, count));
        if (chance(g, 30)) gate = hcq_ir_binary(k, HCQ_OP_AND, gate, value(g, HCQ_BOOL));
    }
    hcq_ir_ref r;
    if (gate != HCQ_IR_NONE) {
        hcq_ir_ref alt = value_f(g, in->t, 0, &falt);
        r = hcq_ir_load_gated(k, in->r, idx, gate, alt);
    } else {
        r = hcq_ir_load(k, in->r, idx);
    }
    (void)fi;
    push(g, r, in->t, falt & VF_EXACT);
}

/* reads back an element this work-item stored (or left as it was) */
static void step_reload(gen *g)
{
    hcq_dtype t = any_dt(g);
    if (!g->out_slots[t]) return;
    hcq_ir_ref idx = out_index(g, (uint32_t)RN(g, g->out_slots[t]));
    push(g, hcq_ir_load(g->k, g->out[t], idx), t, VF_EXACT);
}

static void step_store(gen *g)
{
    gval v = pick_balanced(g);
    store_val(g, &v, true);
}

/* ** local memory */
static glocal *readable_local(gen *g)
{
    int start = (int)RN(g, (uint64_t)(g->nloc ? g->nloc : 1));
    for (int j = 0; j < g->nloc; j++) {
        glocal *l = &g->loc[(start + j) % g->nloc];
        if (l->readable) return l;
    }
    return NULL;
}

static void step_local_load(gen *g)
{
    glocal *l = readable_local(g);
    if (!l) return;
    unsigned fi;
    hcq_ir_ref idx = mod_index(g, l->count, &fi);
    if (chance(g, 40)) idx = hcq_ir_cast(g->k, HCQ_I32, idx);
    hcq_ir_ref r;
    unsigned falt = VF_EXACT;
    if (chance(g, 25)) r = hcq_ir_load_gated(g->k, l->r, idx, value(g, HCQ_BOOL), value_f(g, l->t, 0, &falt));
    else r = hcq_ir_load(g->k, l->r, idx);
    push(g, r, l->t, l->exact ? falt & VF_EXACT : 0);
}

/* barrier; every work-item writes its own slots; barrier; then anyone may
 * read any element until the next exchange (whose first barrier keeps
 * those reads before its writes) */
static void step_exchange(gen *g)
{
    if (!g->ctl_uniform || !g->nloc) return;
    hcq_kernel *k = g->k;
    glocal *l = &g->loc[RN(g, (uint64_t)g->nloc)];
    bool was_readable = l->readable;
    hcq_ir_barrier(k);
    bool interleave = chance(g, 50);
    for (uint32_t c = 0; c < l->per; c++) {
        hcq_ir_ref idx = interleave ? hcq_ir_mulacc(k, g->lid, ci32(g, l->per), ci32(g, c))
                                    : hcq_ir_mulacc(k, ci32(g, c), g->wsize, g->lid);
        unsigned f;
        hcq_ir_ref v = value_f(g, l->t, l->exact ? VF_EXACT : 0, &f);
        if (was_readable && chance(g, 25)) hcq_ir_store_gated(k, l->r, idx, v, value(g, HCQ_BOOL));
        else hcq_ir_store(k, l->r, idx, v);
    }
    hcq_ir_barrier(k);
    l->readable = true;
    step_local_load(g);
}

static hcq_op reduce_op(gen *g, hcq_dtype t)
{
    if (t == HCQ_BOOL) return (hcq_op[]){HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR, HCQ_OP_CMPNE}[RN(g, 4)];
    if (is_float(t)) return (hcq_op[]){HCQ_OP_ADD, HCQ_OP_ADD, HCQ_OP_MUL, HCQ_OP_MAX, HCQ_OP_SUB}[RN(g, 5)];
    return (hcq_op[]){HCQ_OP_ADD, HCQ_OP_MUL, HCQ_OP_XOR, HCQ_OP_OR, HCQ_OP_AND, HCQ_OP_MAX, HCQ_OP_SUB}[RN(g, 7)];
}

/* a work-group reduction through local memory: a tree of barriers */
static void step_group_reduce(gen *g)
{
    if (!g->ctl_uniform) return;
    glocal *l = NULL;
    for (int j = 0; j < g->nloc; j++)
        if (!g->loc[j].exact && g->loc[j].count >= g->W) l = &g->loc[j];
    if (!l) return;
    hcq_kernel *k = g->k;
    hcq_op op = reduce_op(g, l->t);
    hcq_ir_barrier(k);
    hcq_ir_store(k, l->r, g->lid, value(g, l->t));
    hcq_ir_barrier(k);
    bool pow2 = (g->W & (g->W - 1)) == 0;
    if (pow2 && g->W > 1 && chance(g, 60)) { /* strides W/2, W/4, ..., 1 in a uniform loop */
        int log = 0;
        while ((1u << log) < g->W) log++;
        hcq_ir_ref step = hcq_ir_range(k, ci32(g, 0), ci32(g, log));
        hcq_ir_ref stride = hcq_ir_binary(k, HCQ_OP_SHR, ci32(g, g->W / 2), step);
        hcq_ir_ref act = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, g->lid, stride));
        hcq_ir_ref a = hcq_ir_load(k, l->r, g->lid);
        hcq_ir_ref b = hcq_ir_load(k, l->r, hcq_ir_binary(k, HCQ_OP_ADD, g->lid, stride));
        hcq_ir_store(k, l->r, g->lid, hcq_ir_binary(k, op, a, b));
        hcq_ir_endif(k, act);
        hcq_ir_barrier(k);
        hcq_ir_endrange(k, step);
    } else { /* any size: fold the top half onto the bottom, one level at a time */
        for (uint32_t n = g->W; n > 1;) {
            uint32_t half = (n + 1) / 2;
            hcq_ir_ref act = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, g->lid, ci32(g, n - half)));
            hcq_ir_ref a = hcq_ir_load(k, l->r, g->lid);
            hcq_ir_ref b = hcq_ir_load(k, l->r, hcq_ir_binary(k, HCQ_OP_ADD, g->lid, ci32(g, half)));
            hcq_ir_store(k, l->r, g->lid, hcq_ir_binary(k, op, a, b));
            hcq_ir_endif(k, act);
            hcq_ir_barrier(k);
            n = half;
        }
    }
    hcq_ir_ref r = hcq_ir_load(k, l->r, ci32(g, 0));
    push(g, r, l->t, 0);
    if (l->count == g->W) l->readable = true;
}

/* ** blocks */
static void steps(gen *g, int m);

static hcq_ir_ref combine(gen *g, hcq_ir_ref acc, hcq_dtype t, hcq_ir_ref v)
{
    hcq_op op = reduce_op(g, t);
    if (is_float(t) && chance(g, 20)) return hcq_ir_mulacc(g->k, v, hcq_ir_const_float(g->k, t, 0.5), acc);
    return hcq_ir_binary(g->k, op, acc, v);
}

/* bounds of a loop: [start, end) over counter dtype ct, few trips */
static hcq_ir_ref small_of(gen *g, hcq_dtype ct, unsigned need, unsigned mask, unsigned *f)
{
    int i = -1;
    for (int tries = 0; tries < 6 && i < 0; tries++) {
        int j = pick(g);
        if ((is_int((hcq_dtype)g->pool[j].t) || g->pool[j].t == HCQ_BOOL) && (g->pool[j].f & need) == need) i = j;
    }
    if (i < 0) {
        *f = VF_UNIFORM | VF_EXACT;
        return hcq_ir_const_int(g->k, ct, (int64_t)RN(g, mask + 1));
    }
    gval v = g->pool[i];
    *f = v.f;
    hcq_dtype t = (hcq_dtype)v.t;
    hcq_ir_ref x = v.r;
    if (t == HCQ_BOOL) return hcq_ir_cast(g->k, ct, x);
    x = hcq_ir_binary(g->k, HCQ_OP_AND, x, hcq_ir_const_int(g->k, t, mask));
    return t == ct ? x : hcq_ir_cast(g->k, ct, x);
}

static void step_block(gen *g)
{
    if (g->depth >= MAX_DEPTH || g->k->nops > g->max_ops) return;
    hcq_kernel *k = g->k;
    gval carry = pick_balanced(g);
    hcq_dtype t = (hcq_dtype)carry.t;
    hcq_ir_ref acc = hcq_ir_define_acc(k, carry.r);
    int saved = g->n;
    bool saved_ctl = g->ctl_uniform, readable[MAX_LOCAL];
    for (int j = 0; j < g->nloc; j++) readable[j] = g->loc[j].readable;
    bool loop = chance(g, 55) && g->mult <= 100, uniform;
    uint32_t saved_mult = g->mult;
    hcq_ir_ref open, end_acc = HCQ_IR_NONE;
    bool end_uniform = false;
    hcq_dtype ct = any_int(g);
    if (loop) {
        unsigned kind = (unsigned)RN(g, 5), fs = VF_UNIFORM, fe = VF_UNIFORM;
        hcq_ir_ref start, end;
        bool sgn = hcq_dtype_is_signed(ct);
        int64_t s0 = sgn ? (int64_t)RN(g, 7) - 3 : (int64_t)RN(g, 3);
        start = hcq_ir_const_int(k, ct, s0);
        if (kind == 0) {
            end = hcq_ir_const_int(k, ct, s0 + (int64_t)RN(g, 6));
        } else if (kind == 1) {
            end = small_of(g, ct, VF_UNIFORM, 7, &fe);
        } else if (kind == 2) {
            end = small_of(g, ct, 0, 7, &fe);
            if (chance(g, 40)) start = small_of(g, ct, 0, 3, &fs);
        } else if (kind == 4) { /* up to the dtype's largest value: the counter must not wrap */
            unsigned w = ir_dt_bits(ct);
            int64_t max = sgn ? (int64_t)((1ull << (w - 1)) - 1) : (int64_t)(w == 64 ? ~0ull : (1ull << w) - 1);
            start = hcq_ir_const_int(k, ct, (int64_t)((uint64_t)max - RN(g, 4)));
            end = hcq_ir_const_int(k, ct, max);
        } else { /* the end is an acc the body lowers: read again every iteration */
            end_acc = hcq_ir_define_acc(k, hcq_ir_const_int(k, ct, (int64_t)RN(g, 8)));
            end = end_acc;
            /* lowered by a uniform amount under uniform control it stays
             * uniform, and the loop may hold barriers */
            end_uniform = saved_ctl && chance(g, 50);
            fe = end_uniform ? VF_UNIFORM : 0;
        }
        open = hcq_ir_range(k, start, end);
        uniform = fs & fe & VF_UNIFORM;
        g->mult *= 10; /* at most 10 trips: ends are below 8, starts above -4 */
        push(g, open, ct, uniform ? VF_UNIFORM : 0);
    } else {
        unsigned fc;
        hcq_ir_ref c = value_f(g, HCQ_BOOL, 0, &fc);
        open = hcq_ir_if(k, c);
        uniform = fc & VF_UNIFORM;
    }
    g->ctl_uniform = saved_ctl && uniform;
    g->depth++;
    /* an acc made uniform and assigned uniform values under uniform
     * control stays uniform (the verifier's rule), usable where a barrier
     * needs uniform bounds */
    unsigned fa = (carry.f & VF_UNIFORM) && g->ctl_uniform && chance(g, 40) ? VF_UNIFORM : 0;
    push(g, acc, t, fa);
    steps(g, 2 + (int)RN(g, 7));
    unsigned fv;
    hcq_ir_ref v = value_f(g, t, fa, &fv);
    hcq_ir_assign(k, acc, combine(g, acc, t, v));
    if (end_acc != HCQ_IR_NONE) {
        unsigned fb;
        hcq_ir_ref b = value_f(g, HCQ_BOOL, end_uniform ? VF_UNIFORM : 0, &fb);
        hcq_ir_assign(k, end_acc, hcq_ir_binary(k, HCQ_OP_SUB, end_acc, hcq_ir_cast(k, ct, b)));
    }
    g->depth--;
    if (loop) hcq_ir_endrange(k, open);
    else hcq_ir_endif(k, open);
    g->n = saved;
    g->mult = saved_mult;
    g->ctl_uniform = saved_ctl;
    for (int j = 0; j < g->nloc; j++) g->loc[j].readable = readable[j];
    push(g, acc, t, fa);
    if (end_acc != HCQ_IR_NONE) push(g, end_acc, ct, end_uniform ? VF_UNIFORM : 0);
}

/* acc = op(acc, element j) over a loop: of an input, or of local memory */
static void step_reduce_loop(gen *g)
{
    if (g->depth >= MAX_DEPTH) return;
    hcq_kernel *k = g->k;
    glocal *l = chance(g, 40) ? readable_local(g) : NULL;
    if (!l && !g->nin) return;
    const ginput *in = l ? NULL : &g->in[RN(g, (uint64_t)g->nin)];
    hcq_dtype t = l ? l->t : in->t;
    hcq_ir_ref acc = hcq_ir_define_acc(k, value(g, t));
    uint32_t trips = l ? (chance(g, 50) ? l->count : 1 + (uint32_t)RN(g, l->count)) : 1 + (uint32_t)RN(g, 12);
    if ((uint64_t)trips * g->mult > 4096) trips = 4096 / g->mult ? 4096 / g->mult : 1;
    hcq_ir_ref j = hcq_ir_range(k, ci32(g, 0), ci32(g, trips));
    hcq_ir_ref x;
    if (l) {
        x = hcq_ir_load(k, l->r, j);
    } else { /* (gid + j * stride) % total - bias */
        hcq_ir_ref p = hcq_ir_mulacc(k, j, ci32(g, 1 + (int64_t)RN(g, 5)), g->gid);
        hcq_ir_ref m = hcq_ir_binary(k, HCQ_OP_MOD, p, ci32(g, in->total));
        x = hcq_ir_load(k, in->r, hcq_ir_binary(k, HCQ_OP_SUB, m, ci32(g, in->bias)));
    }
    hcq_ir_assign(k, acc, combine(g, acc, t, x));
    hcq_ir_endrange(k, j);
    push(g, acc, t, 0);
}

/* ** vectors (opt->vectors): an N-lane load from an input at an aligned
 * element, gated or not: the host engines' buffers end at a page boundary
 * and the mock devices' start at one (diff.c), so the generator takes
 * inputs whose bias + count elements are a multiple of N and elements e
 * with (count - e) a multiple of N, aligned either way. Lanes
 * replaced with vset, an elementwise op, sometimes through a vector
 * accumulator assigned under a branch; lanes come back to the pool as
 * scalars. */
static void step_vector(gen *g)
{
    hcq_kernel *k = g->k;
    if (!g->nin) return;
    const ginput *in = &g->in[RN(g, (uint64_t)g->nin)];
    hcq_dtype t = in->t;
    if (t == HCQ_BOOL) return;
    unsigned es = (unsigned)hcq_dtype_size(t), steps = es == 1 ? 4 : es == 2 ? 3 : es == 4 ? 2 : 1;
    unsigned n = 2u << RN(g, steps); /* lanes: n x es <= 16 bytes, one access */
    uint32_t count = in->total - in->bias;
    if (count < n || in->total % n) return;
    hcq_ir_ref blk = hcq_ir_binary(k, HCQ_OP_MOD, g->gid, ci32(g, count / n));
    hcq_ir_ref idx = hcq_ir_binary(k, HCQ_OP_SUB, ci32(g, count - n), hcq_ir_binary(k, HCQ_OP_MUL, blk, ci32(g, n)));
    unsigned f = VF_EXACT, fx;
    hcq_ir_ref v;
    if (chance(g, 30)) {
        hcq_ir_ref alt = hcq_ir_vsplat(k, value_f(g, t, 0, &fx), n);
        f &= fx;
        v = hcq_ir_load_vec_gated(k, in->r, idx, n, value(g, HCQ_BOOL), alt);
    } else {
        v = hcq_ir_load_vec(k, in->r, idx, n);
    }
    if (chance(g, 50)) {
        v = hcq_ir_vset(k, v, (unsigned)RN(g, n), value_f(g, t, 0, &fx));
        f &= fx;
    }
    if (chance(g, 40)) { /* an elementwise op with a splat or a unary op: lane for lane the scalar op */
        hcq_op op = binary_ops[RN(g, BASE_ARRAY_LEN(binary_ops))];
        if (op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE || !accepts(op, t)) op = is_float(t) ? HCQ_OP_MUL : HCQ_OP_ADD;
        if (chance(g, 25)) v = hcq_ir_unary(k, is_float(t) ? unary_ops[RN(g, BASE_ARRAY_LEN(unary_ops))] : HCQ_OP_NEG, v);
        else if (chance(g, 30)) v = hcq_ir_mulacc(k, v, v, hcq_ir_vsplat(k, value_f(g, t, 0, &fx), n));
        else v = hcq_ir_binary(k, op, v, hcq_ir_vsplat(k, value_f(g, t, 0, &fx), n));
        if (is_float(t)) f = 0; /* a computed NaN's payload is unspecified */
    }
    if (chance(g, 40) && g->depth < MAX_DEPTH) {
        hcq_ir_ref acc = hcq_ir_define_acc(k, v);
        hcq_ir_ref iff = hcq_ir_if(k, value(g, HCQ_BOOL));
        hcq_ir_assign(k, acc, hcq_ir_vset(k, acc, (unsigned)RN(g, n), value_f(g, t, 0, &fx)));
        f &= fx;
        hcq_ir_endif(k, iff);
        v = acc;
    }
    unsigned first = (unsigned)RN(g, n);
    for (unsigned j = 0; j < n; j++)
        if (j == first || chance(g, 30)) push(g, hcq_ir_vget(k, v, j), t, f & VF_EXACT);
}

static void step(gen *g)
{
    if (g->opt->vectors && chance(g, 6)) { /* draws nothing when off: the other kernels stay as they were */
        step_vector(g);
        return;
    }
    unsigned r = (unsigned)RN(g, 100);
    if (r < 24) step_binary(g);
    else if (r < 32) step_unary(g);
    else if (r < 35) step_transcendental(g);
    else if (r < 40) step_where(g);
    else if (r < 44) step_mulacc(g);
    else if (r < 53) step_cast(g);
    else if (r < 57) step_bitcast(g);
    else if (r < 60) push_const(g);
    else if (r < 68) step_load(g);
    else if (r < 72) step_local_load(g);
    else if (r < 77) step_store(g);
    else if (r < 78) step_reload(g);
    else if (r < 85) step_block(g);
    else if (r < 88) step_reduce_loop(g);
    else if (r < 92) step_exchange(g);
    else if (r < 94) step_group_reduce(g);
    else if (r < 95 && g->ctl_uniform) hcq_ir_barrier(g->k);
    else if (r < 96) hcq_ir_emit(g->k, HCQ_OP_NOOP, HCQ_VOID, 0, NULL, 0, 0);
    else step_special(g);
}

static void steps(gen *g, int m)
{
    for (int j = 0; j < m && g->k->nops < g->max_ops; j++) step(g);
}

/* ** the launch and the parameters */
static void pick_dims(gen *g)
{
    static const uint32_t ls[][3] = {{1, 1, 1},  {2, 1, 1},  {7, 1, 1},  {32, 1, 1}, {64, 1, 1}, {96, 1, 1},
                                     {128, 1, 1}, {256, 1, 1}, {8, 4, 1},  {4, 2, 3},  {3, 3, 3},  {5, 1, 2},
                                     {16, 2, 2}, {1, 8, 1},  {2, 2, 2},  {33, 1, 1}, {1, 1, 4}};
    irg_case *c = g->c;
    const uint32_t *l = ls[RN(g, BASE_ARRAY_LEN(ls))];
    static const uint32_t big[3] = {1024, 1, 1};
    if (chance(g, 2)) l = big;
    memcpy(c->ls, l, sizeof c->ls);
    g->W = l[0] * l[1] * l[2];
    uint32_t ng[3] = {1 + (uint32_t)RN(g, 4), chance(g, 30) ? 2 : 1, chance(g, 20) ? 2 : 1};
    uint32_t limit = 1024;
    if (chance(g, 5)) { /* many small groups: group ids beyond a byte, grids in y and z */
        static const uint32_t tiny[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 3, 1}};
        l = tiny[RN(g, 3)];
        memcpy(c->ls, l, sizeof c->ls);
        g->W = l[0] * l[1] * l[2];
        ng[0] = 100 + (uint32_t)RN(g, 500), ng[1] = 1 + (uint32_t)RN(g, 3), ng[2] = 1 + (uint32_t)RN(g, 2);
        limit = 2048;
    }
    while ((uint64_t)g->W * ng[0] * ng[1] * ng[2] > limit) { /* keep the interpreter quick */
        if (ng[0] > 1) ng[0]--;
        else if (ng[1] > 1) ng[1]--;
        else ng[2]--;
    }
    memcpy(c->ng, ng, sizeof c->ng);
    g->T = g->W * ng[0] * ng[1] * ng[2];
}

static uint32_t add_param(gen *g, irg_role role, hcq_dtype t, const char *label)
{
    irg_case *c = g->c;
    irg_param *p = &c->p[c->np];
    *p = (irg_param){.role = role, .dt = t, .count = 1, .id = c->np};
    snprintf(p->label, sizeof p->label, "%s", label);
    return c->np++;
}

static void make_ids(gen *g)
{
    hcq_kernel *k = g->k;
    hcq_ir_ref lx = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), ly = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 1);
    hcq_ir_ref lz = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 2);
    hcq_ir_ref sx = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0), sy = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 1);
    hcq_ir_ref sz = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 2);
    hcq_ir_ref gx = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), gy = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 1);
    hcq_ir_ref gz = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 2);
    hcq_ir_ref nx = hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, 0), ny = hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, 1);
    g->lid = hcq_ir_mulacc(k, hcq_ir_mulacc(k, lz, sy, ly), sx, lx);
    g->wsize = hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_binary(k, HCQ_OP_MUL, sx, sy), sz);
    hcq_ir_ref grp = hcq_ir_mulacc(k, hcq_ir_mulacc(k, gz, ny, gy), nx, gx);
    g->gid = hcq_ir_mulacc(k, grp, g->wsize, g->lid);
    push(g, g->lid, HCQ_I32, 0);
    push(g, g->gid, HCQ_I32, 0);
    push(g, grp, HCQ_I32, VF_UNIFORM);
    push(g, lx, HCQ_I32, 0);
    push(g, gx, HCQ_I32, VF_UNIFORM);
}

/* Inputs, scalars and outputs in a shuffled order, so the kernarg layout
 * mixes sizes and alignments (a bool scalar before an f64 one, ...). */
static void make_params(gen *g)
{
    irg_case *c = g->c;
    hcq_kernel *k = g->k;
    char label[24];
    enum { P_IN, P_SCALAR, P_OUT, P_MATH };
    uint8_t kind[IRG_MAX_PARAMS], idx[IRG_MAX_PARAMS];
    unsigned n = 0, nin = 1 + (unsigned)RN(g, MAX_IN), ns = (unsigned)RN(g, 9);
    for (unsigned i = 0; i < nin; i++) kind[n] = P_IN, idx[n++] = (uint8_t)i;
    for (unsigned i = 0; i < ns; i++) kind[n] = P_SCALAR, idx[n++] = (uint8_t)i;
    for (unsigned i = 0; i < BASE_ARRAY_LEN(all_dt); i++) kind[n] = P_OUT, idx[n++] = (uint8_t)all_dt[i];
    for (unsigned i = 0; i < BASE_ARRAY_LEN(float_dt); i++) kind[n] = P_MATH, idx[n++] = (uint8_t)float_dt[i];
    for (unsigned i = n - 1; i > 0; i--) { /* Fisher-Yates */
        unsigned j = (unsigned)RN(g, i + 1);
        uint8_t tk = kind[i], ti = idx[i];
        kind[i] = kind[j], idx[i] = idx[j];
        kind[j] = tk, idx[j] = ti;
    }
    g->nin = (int)nin;
    for (unsigned q = 0; q < n; q++) {
        if (kind[q] == P_IN) {
            ginput *in = &g->in[idx[q]];
            in->t = any_dt(g);
            in->total = g->T + (uint32_t)RN(g, 17);
            in->bias = chance(g, 30) ? 1 + (uint32_t)RN(g, in->total < 64 ? in->total - 1 : 64) : 0;
            if (in->bias >= in->total) in->bias = 0;
            snprintf(label, sizeof label, "in%u", idx[q]);
            uint32_t p = add_param(g, IRG_INPUT, in->t, label);
            c->p[p].count = in->total - in->bias;
            c->p[p].bias = in->bias;
            in->r = hcq_ir_param_buffer(k, in->t);
        } else if (kind[q] == P_SCALAR) {
            hcq_dtype t = any_dt(g);
            snprintf(label, sizeof label, "s%u", idx[q]);
            uint32_t p = add_param(g, IRG_SCALAR, t, label);
            irg_fill_elem(&g->s, t, &c->p[p].bits);
            push(g, hcq_ir_param_scalar(k, t), t, VF_UNIFORM | VF_EXACT);
        } else if (kind[q] == P_OUT) {
            hcq_dtype t = (hcq_dtype)idx[q];
            snprintf(label, sizeof label, "out_%s", hcq_dtype_name(t));
            g->out_param[t] = add_param(g, IRG_OUTPUT, t, label);
            g->out[t] = hcq_ir_param_buffer(k, t);
        } else {
            hcq_dtype t = (hcq_dtype)idx[q];
            snprintf(label, sizeof label, "math_%s", hcq_dtype_name(t));
            g->trans_param[t] = add_param(g, IRG_OUTPUT, t, label);
            c->p[g->trans_param[t]].ulp = HCQ_IR_TRANSCENDENTAL_ULP;
            g->trans[t] = hcq_ir_param_buffer(k, t);
        }
    }
}

static void make_locals(gen *g)
{
    g->nloc = (int)RN(g, MAX_LOCAL + 1);
    for (int i = 0; i < g->nloc; i++) {
        glocal *l = &g->loc[i];
        l->t = any_dt(g);
        l->per = 1 + (uint32_t)RN(g, 3);
        l->count = l->per * g->W;
        l->exact = chance(g, 50);
        l->readable = false;
        l->r = hcq_ir_define_local(g->k, l->t, l->count);
    }
}

hcq_status irg_generate(uint64_t seed, const irg_options *opt, irg_case *out)
{
    static const irg_options defaults = {0};
    if (!opt) opt = &defaults;
    memset(out, 0, sizeof *out);
    gen *g = calloc(1, sizeof *g);
    if (!g) return base_err(HCQ_ENOMEM, "irg_generate: out of memory");
    char name[48];
    snprintf(name, sizeof name, "diff_%llu", (unsigned long long)seed);
    g->c = out;
    g->opt = opt;
    g->s = seed;
    g->max_ops = opt->max_ops ? opt->max_ops : 400;
    g->k = out->k = hcq_kernel_create(name);
    out->seed = seed;
    out->data_seed = seed * 0x2545F4914F6CDD1Dull + 0x1234567;
    g->ctl_uniform = true;
    g->mult = 1;
    if (!g->k) {
        free(g);
        return base_err(HCQ_ENOMEM, "irg_generate: out of memory");
    }
    pick_dims(g);
    make_params(g);
    make_ids(g);
    make_locals(g);
    for (int j = 0; j < 3; j++) push_const(g);
    for (int j = 0; j < 4; j++) step_load(g);
    int m = 30 + (int)RN(g, 61);
    if (opt->steps) m = (int)opt->steps / 3 + (int)RN(g, opt->steps - opt->steps / 3 + 1);
    for (int j = 0; j < m && g->k->nops < g->max_ops; j++) step(g);
    /* what is still in scope goes out */
    for (int j = 0; j < g->n; j++)
        if (chance(g, 60)) store_val(g, &g->pool[j], false);
    for (size_t i = 0; i < BASE_ARRAY_LEN(all_dt); i++) {
        hcq_dtype t = all_dt[i];
        out->p[g->out_param[t]].count = g->out_slots[t] ? g->out_slots[t] * g->T : 1;
    }
    for (size_t i = 0; i < BASE_ARRAY_LEN(float_dt); i++) {
        hcq_dtype t = float_dt[i];
        out->p[g->trans_param[t]].count = g->trans_slots[t] ? g->trans_slots[t] * g->T : 1;
    }
    free(g);
    hcq_status st = hcq_kernel_verify(out->k);
    if (st) {
        char *d = hcq_kernel_dump(out->k);
        fprintf(stderr, "irgen: seed %llu made a kernel that does not verify:\n%s\n", (unsigned long long)seed, d ? d : "");
        free(d);
        st = base_err(HCQ_EINVAL, "irgen seed %llu: %s", (unsigned long long)seed, hcq_error_message());
        irg_case_free(out);
    }
    return st;
}

void irg_case_free(irg_case *c)
{
    if (!c) return;
    hcq_kernel_destroy(c->k);
    c->k = NULL;
}

hcq_status irg_case_copy(const irg_case *c, irg_case *out)
{
    *out = *c;
    out->k = hcq_kernel_clone(c->k);
    if (!out->k) return base_err(HCQ_ENOMEM, "irg_case_copy: out of memory");
    return HCQ_OK;
}

/* ** data */
static void store_bits(void *dst, uint64_t bits, size_t size) { memcpy(dst, &bits, size); }

void irg_fill_elem(uint64_t *s, hcq_dtype t, void *dst)
{
    uint64_t r = irg_rand(s);
    size_t size = hcq_dtype_size(t);
    if (t == HCQ_BOOL) {
        static const uint8_t b[] = {0, 0, 0, 0, 1, 1, 1, 2, 0x80, 0xff};
        *(uint8_t *)dst = b[r % sizeof b];
        return;
    }
    if (is_int(t)) {
        unsigned w = ir_dt_bits(t);
        uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1, min = hcq_dtype_is_signed(t) ? 1ull << (w - 1) : 0;
        uint64_t v;
        switch (r % 8) {
        case 0: v = (uint64_t[]){0, 1, ~0ull, min, min - 1, 2, 3, min + 1, w - 1, w, w + 1, 0x55}[(r >> 8) % 12]; break;
        case 1:
        case 2: v = (uint64_t)((int64_t)((r >> 8) % 17) - 8); break;
        case 3: v = (uint64_t)((int64_t)((r >> 8) % 401) - 200); break;
        default: v = irg_rand(s); break;
        }
        store_bits(dst, v & mask, size);
        return;
    }
    static const uint32_t f32s[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                                    0x7f800001, 0xff800001, 0x7fa00000, 0x7fffffff, 0x00000001, 0x807fffff,
                                    0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x3f000000,
                                    0x4f000000, 0xcf000000, 0x4f800000, 0x5f000000, 0xdf000000, 0x5f800000,
                                    0x4effffff, 0x477fe000, 0x477ff000, 0xc0200000, 0x3fc00000, 0x4b000000};
    static const uint16_t f16s[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd00,
                                    0x7fff, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00,
                                    0x3800, 0x3e00, 0x4100, 0x7800, 0xf800, 0x5bff};
    static const uint16_t bf16s[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xff81,
                                     0x7fff, 0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80,
                                     0x4f00, 0xcf00, 0x5f80, 0x3fc0, 0x5f00, 0xdf00};
    static const uint64_t f64s[] = {0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull,
                                    0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000000ull,
                                    0x7ff0000000000001ull, 0xfff0000000000001ull, 0x7ff4000000000000ull,
                                    0x0000000000000001ull, 0x800fffffffffffffull, 0x0010000000000000ull,
                                    0x7fefffffffffffffull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
                                    0x43e0000000000000ull, 0xc3e0000000000000ull, 0x43f0000000000000ull,
                                    0x41e0000000000000ull, 0xc1e0000000200000ull, 0x41dfffffffe00000ull,
                                    0x3fe0000000000000ull, 0x4004000000000000ull, 0x7e37e43c8800759cull,
                                    0x47efffffe0000000ull, 0x40effe0000000000ull, 0x3ff0100000400000ull,
                                    0x380fffffffffffffull, 0x36a0000000000000ull};
    unsigned kind = (unsigned)(r % 10);
    if (kind < 3) { /* a special value of the dtype */
        uint64_t i = r >> 8;
        switch (t) {
        case HCQ_F32: store_bits(dst, f32s[i % BASE_ARRAY_LEN(f32s)], 4); return;
        case HCQ_F16: store_bits(dst, f16s[i % BASE_ARRAY_LEN(f16s)], 2); return;
        case HCQ_BF16: store_bits(dst, bf16s[i % BASE_ARRAY_LEN(bf16s)], 2); return;
        default: store_bits(dst, f64s[i % BASE_ARRAY_LEN(f64s)], 8); return;
        }
    }
    if (kind == 3) { /* any bits */
        store_bits(dst, irg_rand(s), size);
        return;
    }
    uint64_t q = irg_rand(s);
    double u = (double)(q >> 11) * 0x1p-53, v;
    switch (q % 5) {
    case 0: v = (u - 0.5) * 8; break;
    case 1: v = (u - 0.5) * 2000; break;
    case 2: v = ldexp(u + 0.5, (int)(q % 90) - 45) * ((q >> 7) & 1 ? -1 : 1); break;
    case 3: v = ldexp(u + 0.5, (int)(q % 2100) - 1075) * ((q >> 7) & 1 ? -1 : 1); break; /* f64's whole range */
    default: v = (double)((int64_t)((q >> 20) % 64) - 32) * 0.5; break;               /* halves: ties */
    }
    switch (t) {
    case HCQ_F64: store_bits(dst, ir_f64_bits(v), 8); return;
    case HCQ_F32: store_bits(dst, ir_f32_bits((float)v), 4); return;
    case HCQ_F16: store_bits(dst, ir_f32_to_f16((float)v), 2); return;
    default: store_bits(dst, ir_f32_to_bf16((float)v), 2); return;
    }
}
