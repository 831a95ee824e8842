/* The IR interpreter: the reference meaning of every op and the mock GPU's
 * shader core.
 *
 * A work-group runs in lock-step, SIMT style: each op executes once for all
 * work-items of the group (a vector of lanes, interp.h), with an active-mask
 * stack for divergent IF/RANGE. Loops repeat while any lane is active. This
 * makes BARRIER a no-op (every lane is always at the same op, and barriers
 * sit only under uniform control flow, so no lane is masked off at one) and
 * pays the dispatch cost once per op per group instead of per work-item.
 *
 * Side effects respect the mask (loads, stores, assigns); pure ALU ops run
 * on every lane, since their results in inactive lanes are never read
 * (values are visible only inside their block, the verifier makes sure).
 *
 * Re-entrant: all state lives in an ir_run on the caller's stack and heap,
 * so several threads may run different groups of one launch at once. */
#include "compiler/interp.h"
#include "compiler/ir_float.h"
#include "compiler/mma.h"
#include "compiler/verify.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct ir_run {
    const hcq_kernel *k;
    const hcq_interp_launch *l;
    uint32_t W;              /* work-items per group */
    ir_slot *vals;           /* nslots x W */
    uint32_t *slot;          /* op -> slot row, UINT32_MAX for ops without a value */
    hcq_ir_ref *match;       /* block partners */
    uint8_t *masks;          /* (max depth + 1) x W */
    uint64_t *off;           /* W: byte offsets of the current load/store */
    uint8_t *gated;          /* W: lanes a gated load/store touches */
    bool *full;              /* per depth: every lane active */
    uint32_t depth;
    uint8_t *local;          /* this group's local memory */
    uint32_t local_bytes;
    uint64_t *local_off;     /* op -> byte offset of a define_local */
    uint64_t *param_addr;    /* param index -> buffer address */
    hcq_param_info *params;  /* the kernarg layout */
    uint32_t gid[3];
    uint64_t used;           /* work-item ops so far, against op_budget */
} ir_run;

static ir_slot *lanes(ir_run *r, hcq_ir_ref i) { return r->vals + (size_t)r->slot[i] * r->W; }
static uint8_t *mask_at(ir_run *r, uint32_t depth) { return r->masks + (size_t)depth * r->W; }

static void lane_coords(const ir_run *r, uint32_t lane, uint32_t c[3])
{
    const uint32_t *ls = r->l->local_size;
    c[0] = lane % ls[0];
    c[1] = lane / ls[0] % ls[1];
    c[2] = lane / ls[0] / ls[1];
}

/* ** launch checks and set-up */
static hcq_status check_launch(const hcq_kernel *k, const hcq_interp_launch *l, uint64_t *groups)
{
    uint64_t w = 1, g = 1;
    for (int i = 0; i < 3; i++) {
        if (!l->local_size[i] || !l->num_groups[i])
            return base_err(HCQ_EINVAL, "kernel '%s': launch has %s[%d] = 0; every dimension needs at least 1",
                            k->name, l->local_size[i] ? "num_groups" : "local_size", i);
        w *= l->local_size[i];
        g *= l->num_groups[i];
    }
    if (w > IR_MAX_GROUP_SIZE)
        return base_err(HCQ_ELIMIT, "kernel '%s': work-group of %u x %u x %u = %" PRIu64
                        " work-items; the limit is %u", k->name, l->local_size[0], l->local_size[1],
                        l->local_size[2], w, IR_MAX_GROUP_SIZE);
    uint64_t end = l->group_end ? l->group_end : g;
    if (l->group_begin > end || end > g)
        return base_err(HCQ_EINVAL, "kernel '%s': groups [%" PRIu64 ", %" PRIu64 ") are outside the grid of %" PRIu64
                        " groups", k->name, l->group_begin, end, g);
    /* an MMA runs on whole warps (compiler.h "Matrix multiply-accumulate") */
    for (uint32_t i = 0; i < k->nops; i++) {
        const cc_mma_kind *m = k->ops[i].op == HCQ_OP_MMA ? cc_mma_kind_of((unsigned)k->ops[i].arg) : NULL;
        if (m && w % m->info.warp)
            return base_err(HCQ_EINVAL, "kernel '%s': op %u (mma %s) runs on warps of %u work-items, but the work-group "
                            "of %u x %u x %u = %" PRIu64 " is not a multiple of %u", k->name, i, m->info.name,
                            m->info.warp, l->local_size[0], l->local_size[1], l->local_size[2], w, m->info.warp);
    }
    uint32_t need = hcq_kernel_param_layout(k, NULL);
    if (need && (!l->kernargs || l->kernarg_size < need))
        return base_err(HCQ_EINVAL, "kernel '%s': needs %u bytes of kernargs, got %zu%s", k->name, need,
                        l->kernarg_size, l->kernargs ? "" : " (kernargs is NULL)");
    *groups = end;
    return HCQ_OK;
}

static hcq_status alloc_run(ir_run *r)
{
    const hcq_kernel *k = r->k;
    uint32_t nslots = 0, depth = 0, maxdepth = 0, nparams = hcq_kernel_param_count(k);
    r->slot = malloc(k->nops * sizeof *r->slot);
    r->match = malloc(k->nops * sizeof *r->match);
    r->local_off = calloc(k->nops, sizeof *r->local_off);
    r->param_addr = calloc(nparams ? nparams : 1, sizeof *r->param_addr);
    r->params = calloc(nparams ? nparams : 1, sizeof *r->params);
    if (!r->slot || !r->match || !r->local_off || !r->param_addr || !r->params) goto oom;
    hcq_kernel_param_layout(k, r->params);
    uint64_t local = 0;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        /* a vector takes one row per lane, lane j at row slot + j */
        if (ir_op_has_value(o) && !(o->flags & HCQ_IR_FLAG_PTR)) {
            r->slot[i] = nslots;
            nslots += ir_lanes(o);
        } else {
            r->slot[i] = UINT32_MAX;
        }
        if (o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) maxdepth = BASE_MAX(maxdepth, ++depth);
        if (o->op == HCQ_OP_ENDRANGE || o->op == HCQ_OP_ENDIF) depth--;
        if (o->op == HCQ_OP_DEFINE_LOCAL) { /* same layout as hcq_kernel_local_bytes */
            local = base_align_up(local, 16);
            r->local_off[i] = local;
            local += o->arg * hcq_dtype_size((hcq_dtype)o->dtype);
        }
    }
    ir_match_blocks(k, r->match);
    r->local_bytes = (uint32_t)local;
    r->vals = calloc((size_t)(nslots ? nslots : 1) * r->W, sizeof *r->vals);
    r->masks = malloc((size_t)(maxdepth + 1) * r->W);
    r->full = malloc(maxdepth + 1);
    r->local = calloc(1, local ? local : 1);
    r->off = malloc(r->W * sizeof *r->off);
    r->gated = malloc(r->W);
    if (!r->vals || !r->masks || !r->full || !r->local || !r->off || !r->gated) goto oom;
    return HCQ_OK;
oom:
    return base_err(HCQ_ENOMEM, "kernel '%s': out of host memory for the interpreter (%u ops x %u work-items)", k->name,
                    k->nops, r->W);
}

static void free_run(ir_run *r)
{
    free(r->slot);
    free(r->match);
    free(r->local_off);
    free(r->param_addr);
    free(r->params);
    free(r->vals);
    free(r->masks);
    free(r->full);
    free(r->local);
    free(r->off);
    free(r->gated);
}

static void fill(ir_slot *d, uint64_t v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) d[i].u = v;
}

/* Values that do not change during the launch are computed once: consts,
 * params, ids other than the group id. They are skipped when executed. */
static void precompute(ir_run *r)
{
    const hcq_kernel *k = r->k;
    const hcq_interp_launch *l = r->l;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_CONST) {
            fill(lanes(r, i), ir_const_lane((hcq_dtype)o->dtype, o->arg), r->W);
        } else if (o->op == HCQ_OP_PARAM) {
            const uint8_t *src = (const uint8_t *)l->kernargs + r->params[o->arg].offset;
            if (o->flags & HCQ_IR_FLAG_PTR)
                memcpy(&r->param_addr[o->arg], src, 8);
            else
                fill(lanes(r, i), ir_lane_from_mem((hcq_dtype)o->dtype, src), r->W);
        } else if (o->op == HCQ_OP_SPECIAL) {
            unsigned kind = o->arg & 0xff, dim = (unsigned)(o->arg >> 8);
            ir_slot *d = lanes(r, i);
            if (kind == HCQ_SPECIAL_NUM_GROUPS) fill(d, ir_canon(HCQ_I32, l->num_groups[dim]), r->W);
            if (kind == HCQ_SPECIAL_LOCAL_SIZE) fill(d, ir_canon(HCQ_I32, l->local_size[dim]), r->W);
            if (kind == HCQ_SPECIAL_LOCAL_ID)
                for (uint32_t j = 0; j < r->W; j++) {
                    uint32_t c[3];
                    lane_coords(r, j, c);
                    d[j].u = c[dim];
                }
        }
    }
}

static void start_group(ir_run *r, uint64_t g)
{
    const uint32_t *ng = r->l->num_groups;
    r->gid[0] = (uint32_t)(g % ng[0]);
    r->gid[1] = (uint32_t)(g / ng[0] % ng[1]);
    r->gid[2] = (uint32_t)(g / ng[0] / ng[1]);
    for (uint32_t i = 0; i < r->k->nops; i++) {
        const hcq_ir_op *o = &r->k->ops[i];
        if (o->op == HCQ_OP_SPECIAL && (o->arg & 0xff) == HCQ_SPECIAL_GROUP_ID)
            fill(lanes(r, i), ir_canon(HCQ_I32, r->gid[o->arg >> 8]), r->W); /* ids are i32 */
    }
    if (r->local_bytes) memset(r->local, 0, r->local_bytes); /* deterministic, unlike hardware */
    memset(mask_at(r, 0), 1, r->W);
    r->full[0] = true;
    r->depth = 0;
}

/* ** memory */
typedef struct access {
    const hcq_ir_op *o;
    hcq_ir_ref at;
    bool write, local;
    hcq_dtype t;
    uint32_t esize;
    uint32_t lanes;      /* elements per work-item: 1, or a vector's lanes */
    uint32_t bytes;      /* per work-item: esize x lanes */
    uint32_t param;      /* param index, or HCQ_IR_NONE for local */
    uint64_t base;       /* buffer address, as an integer: lanes may hold any index */
    uint64_t count;      /* local buffer elements */
    const ir_slot *idx;  /* index lanes */
    bool idx_signed;
    const uint8_t *mask; /* lanes that access memory (active and gate true) */
    const uint64_t *off; /* byte offset per lane */
} access;

static hcq_status fault(ir_run *r, const access *a, uint32_t lane, const char *what)
{
    uint32_t c[3];
    lane_coords(r, lane, c);
    char buf[128], idx[32];
    if (a->idx_signed)
        snprintf(idx, sizeof idx, "%" PRId64, a->idx[lane].i);
    else
        snprintf(idx, sizeof idx, "%" PRIu64, a->idx[lane].u);
    if (a->local)
        snprintf(buf, sizeof buf, "local buffer op %u (%s[%" PRIu64 "])", a->o->src[0], hcq_dtype_name(a->t), a->count);
    else
        snprintf(buf, sizeof buf, "param %u (%s buffer at 0x%" PRIx64 ")", a->param, hcq_dtype_name(a->t), a->base);
    return base_err(HCQ_EFAULT,
                    "kernel '%s': op %u (%s) %s %s element %s (%u bytes) in work-item (%u,%u,%u) of work-group "
                    "(%u,%u,%u): %s",
                    r->k->name, a->at, hcq_op_name((hcq_op)a->o->op), a->write ? "wrote" : "read", buf, idx, a->bytes,
                    c[0], c[1], c[2], r->gid[0], r->gid[1], r->gid[2], what);
}

static int64_t elem_index(const access *a, uint32_t i)
{
    return a->idx_signed ? a->idx[i].i : (int64_t)a->idx[i].u;
}

static void compute_offsets(const access *a, uint64_t *off, uint32_t n)
{
    uint64_t es = a->esize;
    if (a->idx_signed)
        for (uint32_t i = 0; i < n; i++) off[i] = (uint64_t)a->idx[i].i * es; /* wraps like address arithmetic */
    else
        for (uint32_t i = 0; i < n; i++) off[i] = a->idx[i].u * es;
}

static bool ask(const hcq_interp_mem *m, const access *a, uint64_t addr, uint64_t size, uint64_t index, char *why,
                size_t why_size)
{
    hcq_interp_access q = {.addr = addr, .size = (uint32_t)size, .write = a->write, .param = a->param,
                           .index = index, .op = a->at};
    why[0] = 0;
    return m->check(m->ctx, &q, why, why_size);
}

/* Asks the checker about the whole span the group touches first (one call
 * per op per group in the common case); only when that is refused does it
 * go lane by lane to find and report the first refused work-item. */
static hcq_status check_global(ir_run *r, const access *a)
{
    const hcq_interp_mem *m = r->l->mem;
    if (!m || !m->check) return HCQ_OK;
    uint64_t lo = UINT64_MAX, hi = 0;
    uint32_t first = UINT32_MAX;
    for (uint32_t i = 0; i < r->W; i++) {
        if (!a->mask[i]) continue;
        uint64_t p = a->base + a->off[i];
        if (first == UINT32_MAX) first = i;
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
    }
    if (first == UINT32_MAX) return HCQ_OK;
    char why[256];
    uint64_t span = hi - lo + a->bytes;
    if (span >= a->bytes && span <= UINT32_MAX && ask(m, a, lo, span, (uint64_t)elem_index(a, first), why, sizeof why))
        return HCQ_OK;
    for (uint32_t i = 0; i < r->W; i++) {
        if (!a->mask[i]) continue;
        if (!ask(m, a, a->base + a->off[i], a->bytes, (uint64_t)elem_index(a, i), why, sizeof why)) {
            char what[400];
            snprintf(what, sizeof what, "refused by the memory checker%s%s", why[0] ? ": " : "", why);
            return fault(r, a, i, what);
        }
    }
    return HCQ_OK;
}

/* A vector access must be aligned to its size (compiler.h), as the GPUs
 * require: checked on the address for global memory and on the offset in
 * the group's local memory (whose buffers are 16-byte aligned) for local
 * memory, so the answer does not depend on where the host put it. */
static hcq_status check_aligned(ir_run *r, const access *a, uint64_t base)
{
    for (uint32_t i = 0; i < r->W; i++) {
        if (!a->mask[i]) continue;
        uint64_t at = base + a->off[i];
        if (at % a->bytes) {
            char what[160];
            snprintf(what, sizeof what,
                     "misaligned vector access: %s 0x%" PRIx64 " is not a multiple of the access size %u "
                     "(use an index that is a multiple of %u)",
                     a->local ? "local offset" : "address", at, a->bytes, a->lanes);
            return fault(r, a, i, what);
        }
    }
    return HCQ_OK;
}

static hcq_status check_local(ir_run *r, const access *a)
{
    for (uint32_t i = 0; i < r->W; i++) {
        if (!a->mask[i]) continue;
        int64_t e = elem_index(a, i);
        if (e < 0 || (uint64_t)e >= a->count || a->count - (uint64_t)e < a->lanes) {
            char what[96];
            snprintf(what, sizeof what, "out of bounds (the buffer has %" PRIu64 " elements)", a->count);
            return fault(r, a, i, what);
        }
    }
    return HCQ_OK;
}

/* One loop per element type, so the conversion is decided once per op. */
#define LOAD_LOOP(CT, EXPR)                                                                                        \
    for (uint32_t i = 0; i < n; i++) {                                                                             \
        if (!m[i]) continue;                                                                                       \
        CT v;                                                                                                      \
        memcpy(&v, (const void *)(uintptr_t)(base + off[i]), sizeof v);                                           \
        d[i].u = (EXPR);                                                                                           \
    }

static void load_lanes(hcq_dtype t, uint64_t base, const uint64_t *off, const uint8_t *m, ir_slot *restrict d,
                       uint32_t n)
{
    switch (t) {
    case HCQ_BOOL: LOAD_LOOP(uint8_t, v != 0); break;
    case HCQ_I8: LOAD_LOOP(int8_t, (uint64_t)(int64_t)v); break;
    case HCQ_U8: LOAD_LOOP(uint8_t, v); break;
    case HCQ_I16: LOAD_LOOP(int16_t, (uint64_t)(int64_t)v); break;
    case HCQ_U16: LOAD_LOOP(uint16_t, v); break;
    case HCQ_I32: LOAD_LOOP(int32_t, (uint64_t)(int64_t)v); break;
    case HCQ_U32:
    case HCQ_F32: LOAD_LOOP(uint32_t, v); break;
    case HCQ_F16: LOAD_LOOP(uint16_t, ir_f32_bits(ir_f16_to_f32(v))); break;
    case HCQ_BF16: LOAD_LOOP(uint16_t, (uint64_t)v << 16); break;
    default: LOAD_LOOP(uint64_t, v); break; /* i64, u64, f64 */
    }
}

#define STORE_LOOP(CT, EXPR)                                                                                       \
    for (uint32_t i = 0; i < n; i++) {                                                                             \
        if (!m[i]) continue;                                                                                       \
        uint64_t x = s[i].u;                                                                                       \
        CT v = (CT)(EXPR);                                                                                         \
        memcpy((void *)(uintptr_t)(base + off[i]), &v, sizeof v);                                                 \
    }

static void store_lanes(hcq_dtype t, uint64_t base, const uint64_t *off, const uint8_t *m, const ir_slot *s,
                        uint32_t n)
{
    switch (t) {
    case HCQ_BOOL:
    case HCQ_I8:
    case HCQ_U8: STORE_LOOP(uint8_t, x); break;
    case HCQ_I16:
    case HCQ_U16: STORE_LOOP(uint16_t, x); break;
    case HCQ_I32:
    case HCQ_U32:
    case HCQ_F32: STORE_LOOP(uint32_t, x); break;
    case HCQ_F16: STORE_LOOP(uint16_t, ir_f32_to_f16_bits(ir_bits_f32((uint32_t)x))); break;
    case HCQ_BF16: STORE_LOOP(uint16_t, ir_f32_to_bf16_bits(ir_bits_f32((uint32_t)x))); break;
    default: STORE_LOOP(uint64_t, x); break;
    }
}

static hcq_status exec_mem(ir_run *r, hcq_ir_ref at)
{
    const hcq_ir_op *o = &r->k->ops[at];
    const hcq_ir_op *b = &r->k->ops[o->src[0]];
    access a = {.o = o, .at = at, .write = o->op == HCQ_OP_STORE, .local = b->op == HCQ_OP_DEFINE_LOCAL,
                .t = (hcq_dtype)b->dtype, .idx = lanes(r, o->src[1]), .off = r->off,
                .idx_signed = hcq_dtype_is_signed((hcq_dtype)r->k->ops[o->src[1]].dtype)};
    a.esize = (uint32_t)hcq_dtype_size(a.t);
    a.param = a.local ? HCQ_IR_NONE : (uint32_t)b->arg;
    if (a.local) {
        a.base = (uint64_t)(uintptr_t)(r->local + r->local_off[o->src[0]]);
        a.count = b->arg;
    } else {
        a.base = r->param_addr[b->arg];
    }
    /* lanes that touch memory: active, and gate true when gated */
    const uint8_t *act = mask_at(r, r->depth);
    hcq_ir_ref gate = o->nsrc == 4 ? (a.write ? o->src[3] : o->src[2]) : HCQ_IR_NONE;
    a.mask = act;
    if (gate != HCQ_IR_NONE) {
        const ir_slot *g = lanes(r, gate);
        for (uint32_t i = 0; i < r->W; i++) r->gated[i] = act[i] && g[i].u;
        a.mask = r->gated;
    }
    a.lanes = ir_lanes(a.write ? &r->k->ops[o->src[2]] : o);
    a.bytes = a.esize * a.lanes;
    compute_offsets(&a, r->off, r->W);
    hcq_status st = a.lanes > 1 ? check_aligned(r, &a, a.local ? r->local_off[o->src[0]] : a.base) : HCQ_OK;
    if (!st) st = a.local ? check_local(r, &a) : check_global(r, &a);
    if (st) return st;
    size_t W = r->W;
    if (a.write) {
        const ir_slot *v = lanes(r, o->src[2]);
        for (uint32_t j = 0; j < a.lanes; j++) store_lanes(a.t, a.base + j * a.esize, r->off, a.mask, v + j * W, r->W);
        return HCQ_OK;
    }
    ir_slot *d = lanes(r, at);
    for (uint32_t j = 0; j < a.lanes; j++) load_lanes(a.t, a.base + j * a.esize, r->off, a.mask, d + j * W, r->W);
    if (gate != HCQ_IR_NONE) {
        const ir_slot *alt = lanes(r, o->src[3]);
        for (uint32_t j = 0; j < a.lanes; j++)
            for (uint32_t i = 0; i < r->W; i++)
                if (!a.mask[i]) d[j * W + i] = alt[j * W + i];
    }
    return HCQ_OK;
}

/* ** matrix multiply-accumulate: one operation per warp, gathering A, B and
 * C from the warp's fragments by the kind's layout (lanes from the last to
 * the first, so where lanes repeat an element the lowest one's is used),
 * computing D with the model of compiler/mma.h and scattering it back */
static hcq_status mma_fault(ir_run *r, hcq_ir_ref at, const cc_mma_kind *m, uint32_t base, uint64_t on)
{
    uint32_t c[3];
    lane_coords(r, base, c);
    return base_err(HCQ_EFAULT,
                    "kernel '%s': op %u (mma %s): only lanes 0x%0*" PRIx64 " of the warp of work-items %u..%u (the first "
                    "at (%u,%u,%u)) of work-group (%u,%u,%u) execute it; an MMA is one operation of the whole warp, "
                    "so the control flow around it must be the same for every work-item of a warp",
                    r->k->name, at, m->info.name, (int)(m->info.warp / 4), on, base, base + m->info.warp - 1, c[0], c[1],
                    c[2], r->gid[0], r->gid[1], r->gid[2]);
}

static hcq_status exec_mma(ir_run *r, hcq_ir_ref at)
{
    const hcq_ir_op *o = &r->k->ops[at];
    const cc_mma_kind *m = cc_mma_kind_of((unsigned)o->arg);
    const hcq_mma_info *in = &m->info;
    const uint8_t *act = mask_at(r, r->depth);
    const ir_slot *src[3] = {lanes(r, o->src[0]), lanes(r, o->src[1]), lanes(r, o->src[2])};
    unsigned nfrag[3] = {in->a_lanes, in->b_lanes, in->c_lanes};
    ir_slot *d = lanes(r, at);
    size_t W = r->W;
    float a[32 * 16], b[16 * 32], c[32 * 32]; /* A[m][k] at m * 16 + k, B[k][n] at k * 32 + n, C[m][n] at m * 32 + n */
    for (uint32_t base = 0; base < r->W; base += in->warp) {
        uint64_t on = 0;
        for (uint32_t l = 0; l < in->warp; l++) on |= (uint64_t)(act[base + l] != 0) << l;
        if (!on) continue;
        if (on != (in->warp == 64 ? ~0ull : (1ull << in->warp) - 1)) return mma_fault(r, at, m, base, on);
        for (uint32_t l = in->warp; l-- > 0;)
            for (unsigned op = 0; op < 3; op++)
                for (unsigned e = 0; e < nfrag[op]; e++) {
                    unsigned row = cc_mma_eval(m->frag[op].row, l, e), col = cc_mma_eval(m->frag[op].col, l, e);
                    float v = src[op][e * W + base + l].f; /* f16/bf16 lanes hold their exact f32 value */
                    if (op == 0) a[row * 16 + col] = v;
                    else if (op == 1) b[row * 32 + col] = v;
                    else c[row * 32 + col] = v;
                }
        for (uint32_t l = 0; l < in->warp; l++)
            for (unsigned e = 0; e < in->c_lanes; e++) {
                unsigned row = cc_mma_eval(m->frag[2].row, l, e), col = cc_mma_eval(m->frag[2].col, l, e);
                float v = cc_mma_dot(&a[row * 16], 1, &b[col], 32, in->k, c[row * 32 + col]);
                d[e * W + base + l].u = ir_f32_bits(v);
            }
    }
    return HCQ_OK;
}

/* ** control flow */
static inline bool lane_lt(bool sgn, uint64_t a, uint64_t b) { return sgn ? (int64_t)a < (int64_t)b : a < b; }

/* Opens a block: the child mask is parent & cond. Returns whether any lane
 * is active (otherwise the caller jumps past the block without opening). */
static bool open_block(ir_run *r, hcq_ir_ref at)
{
    const hcq_ir_op *o = &r->k->ops[at];
    const uint8_t *parent = mask_at(r, r->depth);
    uint8_t *child = mask_at(r, r->depth + 1);
    uint32_t n = 0;
    if (o->op == HCQ_OP_IF) {
        const ir_slot *c = lanes(r, o->src[0]);
        for (uint32_t i = 0; i < r->W; i++) n += child[i] = parent[i] && c[i].u;
    } else {
        bool sgn = hcq_dtype_is_signed((hcq_dtype)o->dtype);
        const ir_slot *s = lanes(r, o->src[0]), *e = lanes(r, o->src[1]);
        ir_slot *cnt = lanes(r, at);
        for (uint32_t i = 0; i < r->W; i++) {
            cnt[i].u = s[i].u;
            n += child[i] = parent[i] && lane_lt(sgn, s[i].u, e[i].u);
        }
    }
    if (!n) return false;
    r->depth++;
    r->full[r->depth] = n == r->W;
    return true;
}

/* Steps the loop whose ENDRANGE is at `at`; returns whether it goes on. */
static bool step_range(ir_run *r, hcq_ir_ref range)
{
    const hcq_ir_op *o = &r->k->ops[range];
    bool sgn = hcq_dtype_is_signed((hcq_dtype)o->dtype);
    uint8_t *m = mask_at(r, r->depth);
    ir_slot *cnt = lanes(r, range);
    const ir_slot *e = lanes(r, o->src[1]);
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->W; i++) {
        if (!m[i]) continue;
        cnt[i].u++; /* counter < end <= the dtype's max: no wrap, still canonical */
        n += m[i] = lane_lt(sgn, cnt[i].u, e[i].u);
    }
    r->full[r->depth] = n == r->W;
    if (n) return true;
    r->depth--;
    return false;
}

static void exec_assign(ir_run *r, const hcq_ir_op *o)
{
    ir_slot *acc = lanes(r, o->src[0]);
    const ir_slot *v = lanes(r, o->src[1]);
    size_t n = (size_t)ir_lanes(&r->k->ops[o->src[0]]) * r->W; /* a vector's rows follow each other */
    if (r->full[r->depth]) {
        memcpy(acc, v, n * sizeof *acc);
        return;
    }
    const uint8_t *m = mask_at(r, r->depth);
    for (size_t i = 0; i < n; i++)
        if (m[i % r->W]) acc[i] = v[i];
}

static hcq_status over_budget(ir_run *r, hcq_ir_ref at)
{
    return base_err(HCQ_ETIMEDOUT,
                    "kernel '%s': stopped after %" PRIu64 " work-item ops (op_budget %" PRIu64 ") at op %u (%s) in "
                    "work-group (%u,%u,%u); it runs longer than the budget allows (an endless loop?)",
                    r->k->name, r->used, r->l->op_budget, at, hcq_op_name((hcq_op)r->k->ops[at].op), r->gid[0],
                    r->gid[1], r->gid[2]);
}

static bool cancelled(const ir_run *r)
{
    return r->l->cancel && __atomic_load_n(r->l->cancel, __ATOMIC_RELAXED);
}

static hcq_status cancel_err(const ir_run *r)
{
    return base_err(HCQ_ESTATE, "kernel '%s': cancelled in work-group (%u,%u,%u) (its device is being closed)",
                    r->k->name, r->gid[0], r->gid[1], r->gid[2]);
}

static hcq_status run_group(ir_run *r)
{
    const hcq_kernel *k = r->k;
    uint64_t budget = r->l->op_budget;
    for (hcq_ir_ref pc = 0; pc < k->nops; pc++) {
        const hcq_ir_op *o = &k->ops[pc];
        r->used += r->W;
        switch (o->op) {
        case HCQ_OP_NOOP:
        case HCQ_OP_SPECIAL:
        case HCQ_OP_PARAM:
        case HCQ_OP_CONST:
        case HCQ_OP_DEFINE_LOCAL:
        case HCQ_OP_BARRIER: /* lock-step: every lane is here already */
            break;
        case HCQ_OP_DEFINE_ACC: memcpy(lanes(r, pc), lanes(r, o->src[0]), ir_lanes(o) * r->W * sizeof(ir_slot)); break;
        case HCQ_OP_VSPLAT:
            for (unsigned j = 0; j < ir_vec(o); j++) memcpy(lanes(r, pc) + j * r->W, lanes(r, o->src[0]), r->W * sizeof(ir_slot));
            break;
        case HCQ_OP_VGET: memcpy(lanes(r, pc), lanes(r, o->src[0]) + o->arg * r->W, r->W * sizeof(ir_slot)); break;
        case HCQ_OP_VSET:
            memcpy(lanes(r, pc), lanes(r, o->src[0]), ir_vec(o) * r->W * sizeof(ir_slot));
            memcpy(lanes(r, pc) + o->arg * r->W, lanes(r, o->src[1]), r->W * sizeof(ir_slot));
            break;
        case HCQ_OP_ASSIGN: exec_assign(r, o); break;
        case HCQ_OP_LOAD:
        case HCQ_OP_STORE: {
            hcq_status st = exec_mem(r, pc);
            if (st) return st;
            break;
        }
        case HCQ_OP_MMA: {
            hcq_status st = exec_mma(r, pc);
            if (st) return st;
            break;
        }
        case HCQ_OP_IF:
        case HCQ_OP_RANGE:
            if (!open_block(r, pc)) pc = r->match[pc]; /* skip the block, its end included */
            break;
        case HCQ_OP_ENDIF: r->depth--; break;
        case HCQ_OP_ENDRANGE:
            if (budget && r->used > budget) return over_budget(r, pc);
            if (cancelled(r)) return cancel_err(r);
            if (step_range(r, r->match[pc])) pc = r->match[pc];
            break;
        default: { /* ALU, conversions, where; a vector's lanes one row at a time */
            hcq_dtype from = (hcq_dtype)k->ops[o->src[o->op == HCQ_OP_WHERE ? 1 : 0]].dtype;
            for (size_t j = 0, n = ir_lanes(o); j < n; j++) {
                size_t at = j * r->W;
                ir_slot *s0 = lanes(r, o->src[0]) + at;
                ir_alu(o, from, lanes(r, pc) + at, s0, o->nsrc > 1 ? lanes(r, o->src[1]) + at : s0,
                       o->nsrc > 2 ? lanes(r, o->src[2]) + at : s0, r->W);
            }
        }
        }
    }
    if (budget && r->used > budget) return over_budget(r, k->nops - 1);
    return HCQ_OK;
}

hcq_status hcq_interp_run(const hcq_kernel *k, const hcq_interp_launch *l)
{
    if (!k || !l) return base_err(HCQ_EINVAL, "hcq_interp_run: NULL %s", k ? "launch" : "kernel");
    hcq_status st = hcq_kernel_verify(k);
    if (st) return base_err_prefix(st, "hcq_interp_run");
    uint64_t end = 0;
    if ((st = check_launch(k, l, &end))) return st;
    if (l->group_begin == end || !k->nops) return HCQ_OK;
    ir_run r;
    memset(&r, 0, sizeof r);
    r.k = k;
    r.l = l;
    r.W = l->local_size[0] * l->local_size[1] * l->local_size[2];
    if (!(st = alloc_run(&r))) {
        precompute(&r);
        for (uint64_t g = l->group_begin; g < end && !st; g++) {
            start_group(&r, g);
            st = cancelled(&r) ? cancel_err(&r) : run_group(&r);
        }
    }
    free_run(&r);
    return st;
}
