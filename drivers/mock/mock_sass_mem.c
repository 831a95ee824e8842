/* The SASS executor's memory and warp-wide operations (mock_sass.h).
 *
 * Address spaces: global (through the GPU's mappings, the range a check
 * allowed cached per instruction as a hint), shared (the CTA's QMD
 * SHARED_MEMORY_SIZE bytes, addresses from 0; on sm_90 the CTA's rank in
 * its cluster sits in bits 24 and up, always 0 here), local (per thread:
 * addresses [0, LOW_SIZE) and [16 MiB - HIGH_SIZE, 16 MiB), the stack
 * starting below the top as c[0x0][0x28] says, kept in this worker's part
 * of the local-memory buffer the channel set, so it goes through the
 * mappings too), generic (the shared and local windows of the compute
 * class's SET_SHADER_{SHARED,LOCAL}_MEMORY_WINDOW, else global), and the
 * constant banks the QMD binds (a copy taken as the launch starts).
 * Global atomics are host atomics (CTAs run on several threads at once);
 * a CTA's own shared memory is one thread's. */
#include "drivers/mock/mock_sass.h"

#include "base/base.h"

#include <math.h>
#include <string.h>

#define LANES(o, i) for (uint32_t _m = (o)->exec, i; _m && ((i = (uint32_t)__builtin_ctz(_m)), 1); _m &= _m - 1)
#define LOCAL_SPACE (1ull << 24)
#define SHARED_SPAN (1ull << 32)

enum { SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_GENERIC };

/* bytes an access moves and whether the loaded value is sign-extended */
static uint32_t access_size(const sass_insn *in, bool *sgn)
{
    *sgn = sass_has(in, SASS_M_S8) || sass_has(in, SASS_M_S16);
    if (sass_has(in, SASS_M_U8) || sass_has(in, SASS_M_S8)) return 1;
    if (sass_has(in, SASS_M_U16) || sass_has(in, SASS_M_S16)) return 2;
    if (sass_has(in, SASS_M_M128)) return 16;
    if (sass_has(in, SASS_M_M64) || sass_has(in, SASS_M_U64) || sass_has(in, SASS_M_S64) || sass_has(in, SASS_M_F64))
        return 8;
    return 4;
}

static int space_of(int op)
{
    switch (op) {
    case SASS_OP_LDS: case SASS_OP_STS: case SASS_OP_ATOMS: return SP_SHARED;
    case SASS_OP_LDL: case SASS_OP_STL: return SP_LOCAL;
    case SASS_OP_LD: case SASS_OP_ST: case SASS_OP_ATOM: return SP_GENERIC;
    default: return SP_GLOBAL;
    }
}

/* the address of a memory operand in each lane */
static void addresses(msass_op *o, unsigned k, bool wide, uint64_t *addr)
{
    const sass_opnd *x = &o->in->o[k];
    const msass_warp *w = o->w;
    uint64_t ur = 0;
    if ((x->flags & SASS_F_IDX_UR) && x->reg2 < 63) {
        ur = w->ur[x->reg2];
        if (wide && x->reg2 < 62) ur |= (uint64_t)w->ur[x->reg2 + 1] << 32;
    }
    uint32_t scale = x->sel == SASS_SEL_X4 ? 4 : x->sel == SASS_SEL_X8 ? 8 : x->sel == SASS_SEL_X16 ? 16 : 1;
    if (x->flags & SASS_F_BASE_UR) {
        uint64_t b = x->reg < 63 ? w->ur[x->reg] : 0;
        if (wide && x->reg < 62) b |= (uint64_t)w->ur[x->reg + 1] << 32;
        LANES(o, i) addr[i] = b * scale + ur + x->imm;
        return;
    }
    LANES(o, i) {
        uint64_t b = 0;
        if (x->reg != 255) {
            b = w->r[(size_t)x->reg * 32 + i];
            if (wide) b |= (uint64_t)w->r[(size_t)(x->reg + 1) * 32 + i] << 32;
        }
        addr[i] = b * scale + ur + x->imm;
        if (!wide) addr[i] &= 0xffffffffu;
    }
}

/* memcheck (HCQ_MOCK_CHECK=memcheck): a read of shared bytes nothing
 * wrote, or an access racing with another warp's since the last barrier
 * (one of them a write; atomics race with nothing). Lanes of one warp run
 * together here, so only warps race, as compute-sanitizer's racecheck
 * reports shared-memory hazards between warps. */
static int shared_check(msass_op *o, uint32_t lane, uint64_t a, uint32_t size, bool write)
{
    msass_worker *wk = o->wk;
    uint32_t t = o->w->first_thread + lane, warp = o->w->warp_id;
    const msass_launch *l = wk->l;
    uint32_t bx = l->block[0], by = l->block[1];
    for (uint64_t b = a; b < a + size; b++) {
        uint32_t wr = wk->mc_writer[b], rd = wk->mc_reader[b];
        if (!o->atomic && wr && (wr - 1) / 32 != warp) {
            uint32_t ot = wr - 1;
            return msass_fail(o, MSASS_MEMCHECK, 0, write, "memcheck: shared-memory race: thread %u (%u,%u,%u) %s "
                              "shared byte 0x%llx, which thread %u (%u,%u,%u) wrote since the last barrier", t, t % bx,
                              t / bx % by, t / bx / by, write ? "writes" : "reads", (unsigned long long)b, ot, ot % bx,
                              ot / bx % by, ot / bx / by);
        }
        if (write && !o->atomic && rd && rd != warp + 1)
            return msass_fail(o, MSASS_MEMCHECK, 0, true, "memcheck: shared-memory race: thread %u (%u,%u,%u) writes "
                              "shared byte 0x%llx, which another warp read since the last barrier", t, t % bx,
                              t / bx % by, t / bx / by, (unsigned long long)b);
        if (!write && !o->atomic && !wk->mc_init[b])
            return msass_fail(o, MSASS_MEMCHECK, 0, false, "memcheck: thread %u (%u,%u,%u) reads shared byte 0x%llx, "
                              "which nothing wrote", t, t % bx, t / bx % by, t / bx / by, (unsigned long long)b);
        if (write) {
            wk->mc_init[b] = 1;
            if (!o->atomic) wk->mc_writer[b] = t + 1;
        } else if (!o->atomic) {
            wk->mc_reader[b] = rd == 0 || rd == warp + 1 ? warp + 1 : ~0u;
        }
    }
    return 0;
}

/* memcheck: a global access outside every live allocation's requested
 * bytes. Reported at once (one report per lane, as compute-sanitizer's);
 * the access goes to the worker's sink so the instruction's other lanes
 * are checked too, and step() stops the kernel after it. */
static uint8_t *bad_global(msass_op *o, uint64_t a, uint32_t size, bool write, uint32_t lane,
                           const base_memcheck_alloc *al)
{
    char rel[200], at[400], later[sizeof o->mc_msg];
    base_memcheck_explain(a, size, al, rel, sizeof rel);
    msass_where(o, lane, at, sizeof at);
    char *m = o->mc_bad ? later : o->mc_msg;
    snprintf(m, sizeof later, "invalid global %s of %u bytes at 0x%llx (%s) by %s",
             o->atomic ? "atomic" : write ? "write" : "read", size, (unsigned long long)a, rel, at);
    base_memcheck_report("%s", m);
    if (!o->mc_bad++) o->mc_va = a, o->mc_write = write;
    memset(o->wk->mc_sink, 0, sizeof o->wk->mc_sink);
    return o->wk->mc_sink;
}

/* a host pointer for an access of `size` bytes at `a` in space sp by lane
 * i, or NULL with the fault recorded */
static uint8_t *resolve(msass_op *o, int sp, uint64_t a, uint32_t size, bool write, uint32_t lane, int *rc)
{
    msass_worker *wk = o->wk;
    const msass_launch *l = wk->l;
    if (a % size) {
        *rc = msass_fail(o, MSASS_MISALIGNED, a, write, "misaligned address 0x%llx for a %u-byte %s",
                         (unsigned long long)a, size, write ? "store" : "load");
        return NULL;
    }
    if (sp == SP_GENERIC) {
        if (a - l->shared_window < SHARED_SPAN) sp = SP_SHARED, a -= l->shared_window;
        else if (a - l->local_window < LOCAL_SPACE) sp = SP_LOCAL, a -= l->local_window;
        else sp = SP_GLOBAL;
    }
    if (sp == SP_SHARED) {
        if (a + size > l->shared_bytes) {
            *rc = msass_fail(o, MSASS_SHARED, 0, write, "shared memory address 0x%llx (%u bytes) out of range: the "
                             "QMD's SHARED_MEMORY_SIZE is %u", (unsigned long long)a, size, l->shared_bytes);
            return NULL;
        }
        if (l->memcheck && (*rc = shared_check(o, lane, a, size, write))) return NULL;
        return wk->shared + a;
    }
    if (sp == SP_LOCAL) {
        uint64_t off;
        if (a + size <= l->local_low) off = a;
        else if (a >= LOCAL_SPACE - l->local_high && a + size <= LOCAL_SPACE) off = l->local_low + a - (LOCAL_SPACE - l->local_high);
        else {
            *rc = msass_fail(o, MSASS_LOCAL, 0, write, "local memory address 0x%llx (%u bytes) out of range: the QMD "
                             "gives each thread [0, 0x%x) and [0x%llx, 0x%llx)", (unsigned long long)a, size,
                             l->local_low, (unsigned long long)(LOCAL_SPACE - l->local_high),
                             (unsigned long long)LOCAL_SPACE);
            return NULL;
        }
        uint32_t threads = l->block[0] * l->block[1] * l->block[2];
        uint64_t per = (uint64_t)l->local_low + l->local_high;
        a = l->local_buf + ((uint64_t)wk->slot * threads + o->w->first_thread + lane) * per + off;
    }
    /* global (and the local-memory buffer): the GPU's mappings */
    struct msass_range *r = &wk->ranges[o->pc];
    if (a >= r->lo && a + size <= r->hi && a + size > a && (!write || r->writable)) return (uint8_t *)(uintptr_t)a;
    char why[300];
    uint64_t lo, hi;
    bool writable;
    if (!mock_gpu_range(l->gpu, a, size, write, &lo, &hi, &writable, why, sizeof why)) {
        *rc = msass_fail(o, MSASS_MMU, a, write, "%s of %u bytes at 0x%llx: %s", write ? "store" : "load", size,
                         (unsigned long long)a, why);
        return NULL;
    }
    if (l->memcheck && sp == SP_GLOBAL) {
        /* bounds of what was allocated, not of the page-rounded mapping;
         * the cached range shrinks to the bytes the same answer holds for */
        base_memcheck_alloc al;
        uint64_t mlo, mhi;
        if (!base_memcheck_allows(a, size, &al, &mlo, &mhi)) return bad_global(o, a, size, write, lane, &al);
        lo = BASE_MAX(lo, mlo), hi = BASE_MIN(hi, mhi);
    }
    *r = (struct msass_range){lo, hi, writable};
    return (uint8_t *)(uintptr_t)a;
}

static int ldc(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2 || in->o[1].kind != SASS_K_CBANK) return -1;
    bool sgn;
    uint32_t size = access_size(in, &sgn);
    const uint32_t *a = msass_src_row(o, 1, 0);
    if (size < 4) { /* a byte or half of the word */
        uint32_t *d = msass_dst(o, 0), sh = 8 * ((uint32_t)in->o[1].imm & 3);
        a = msass_cbank(o, 1, 0, (uint32_t)-(in->o[1].imm & 3)); /* the aligned word holding it */
        LANES(o, i) {
            uint32_t v = a[i] >> sh;
            v = size == 1 ? (sgn ? (uint32_t)(int8_t)v : v & 0xff) : (sgn ? (uint32_t)(int16_t)v : v & 0xffff);
            d[i] = v;
        }
        return 0;
    }
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) d[i] = a[i];
    if (size >= 8) {
        const uint32_t *h = msass_src_hi(o, 1, 1);
        uint32_t *dh = msass_dst_hi(o, 0);
        LANES(o, i) dh[i] = h[i];
    }
    return 0;
}

static int load_store(msass_op *o, bool store)
{
    const sass_insn *in = o->in;
    int sp = space_of(in->op);
    unsigned m = store ? 0 : 1, v = store ? 1 : 0;
    if (in->nops < 2 || in->o[m].kind != SASS_K_MEM || (in->o[v].kind != SASS_K_R)) return -1;
    bool sgn;
    uint32_t size = access_size(in, &sgn), nregs = size <= 4 ? 1 : size / 4;
    bool wide = (in->o[m].flags & SASS_F_WIDE) || sass_has(in, SASS_M_E);
    uint64_t addr[32];
    addresses(o, m, wide, addr);
    const sass_opnd *r = &in->o[v];
    uint32_t regs = o->wk->l->regs;
    int rc = 0;
    const struct msass_range *cache = &o->wk->ranges[o->pc];
    LANES(o, i) {
        /* a global access inside the range this instruction was last allowed, aligned: straight there */
        uint64_t a = addr[i];
        uint8_t *p = sp == SP_GLOBAL && !(a & (size - 1)) && a >= cache->lo && a + size <= cache->hi &&
                             (!store || cache->writable)
                         ? (uint8_t *)(uintptr_t)a
                         : resolve(o, sp, a, size, store, i, &rc);
        if (!p) return rc;
        if (store) {
            uint32_t buf[4];
            for (uint32_t k = 0; k < nregs; k++)
                buf[k] = r->reg == 255 ? 0 : o->w->r[(size_t)(r->reg + k) * 32 + i];
            if (sp == SP_SHARED) memcpy(p, buf, size);
            else if (size == 4) __atomic_store_n((uint32_t *)p, buf[0], __ATOMIC_RELAXED);
            else if (size == 8) {
                uint64_t x = (uint64_t)buf[1] << 32 | buf[0];
                __atomic_store_n((uint64_t *)p, x, __ATOMIC_RELAXED);
            } else memcpy(p, buf, size);
        } else {
            uint32_t buf[4] = {0};
            if (sp == SP_SHARED || (size != 4 && size != 8)) memcpy(buf, p, size);
            else if (size == 4) buf[0] = __atomic_load_n((uint32_t *)p, __ATOMIC_RELAXED);
            else {
                uint64_t x = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
                buf[0] = (uint32_t)x;
                buf[1] = (uint32_t)(x >> 32);
            }
            if (size == 1) buf[0] = sgn ? (uint32_t)(int8_t)buf[0] : buf[0] & 0xff;
            if (size == 2) buf[0] = sgn ? (uint32_t)(int16_t)buf[0] : buf[0] & 0xffff;
            if (r->reg == 255) continue;
            for (uint32_t k = 0; k < nregs && r->reg + k < regs + 4; k++) o->w->r[(size_t)(r->reg + k) * 32 + i] = buf[k];
        }
    }
    return 0;
}

/* ** atomics */
static int atom_kind(const sass_insn *in)
{
    static const int ops[] = {SASS_M_CAST, SASS_M_CAS, SASS_M_EXCH, SASS_M_ADD, SASS_M_MIN, SASS_M_MAX, SASS_M_INC,
                              SASS_M_DEC, SASS_M_AND, SASS_M_OR, SASS_M_XOR};
    for (size_t i = 0; i < BASE_ARRAY_LEN(ops); i++)
        if (sass_has(in, (sass_mod)ops[i])) return ops[i];
    return -1;
}

/* the new value for an old one; false when a CAS does not store */
static bool atom_new(int kind, const sass_insn *in, bool b64, uint64_t old, uint64_t b, uint64_t c, uint64_t *out)
{
    bool sgn = sass_has(in, SASS_M_S32) || sass_has(in, SASS_M_S64);
    bool f32 = sass_has(in, SASS_M_F32), f64 = sass_has(in, SASS_M_F64);
    uint64_t mask = b64 ? ~0ull : 0xffffffffull;
    old &= mask;
    b &= mask;
    switch (kind) {
    case SASS_M_ADD:
        if (f32) {
            float x, y;
            uint32_t xo = (uint32_t)old, yb = (uint32_t)b;
            memcpy(&x, &xo, 4);
            memcpy(&y, &yb, 4);
            float r = x + y;
            if (sass_has(in, SASS_M_FTZ) && fpclassify(r) == FP_SUBNORMAL) r = copysignf(0.0f, r);
            uint32_t rb;
            memcpy(&rb, &r, 4);
            *out = isnan(r) ? 0x7fffffffu : rb;
        } else if (f64) {
            double x, y;
            memcpy(&x, &old, 8);
            memcpy(&y, &b, 8);
            double r = x + y;
            memcpy(out, &r, 8);
        } else {
            *out = (old + b) & mask;
        }
        return true;
    case SASS_M_MIN: case SASS_M_MAX: {
        bool mn = kind == SASS_M_MIN, less;
        if (sgn) less = b64 ? (int64_t)b < (int64_t)old : (int32_t)b < (int32_t)old;
        else less = b < old;
        *out = (mn ? less : (!less && b != old)) ? b : old;
        return true;
    }
    case SASS_M_INC: *out = old >= b ? 0 : old + 1; return true;
    case SASS_M_DEC: *out = (old == 0 || old > b) ? b : old - 1; return true;
    case SASS_M_AND: *out = old & b; return true;
    case SASS_M_OR: *out = old | b; return true;
    case SASS_M_XOR: *out = old ^ b; return true;
    case SASS_M_EXCH: *out = b; return true;
    case SASS_M_CAS: case SASS_M_CAST: *out = c & mask; return old == b;
    default: return false;
    }
}

static int atomic(msass_op *o)
{
    const sass_insn *in = o->in;
    int sp = space_of(in->op), kind = atom_kind(in);
    bool popc_inc = sass_has(in, SASS_M_POPC) && sass_has(in, SASS_M_INC);
    if (popc_inc) kind = SASS_M_ADD;
    if (kind < 0) return -1;
    unsigned m = 0;
    while (m < in->nops && in->o[m].kind != SASS_K_MEM) m++;
    if (m == in->nops) return -1;
    int pd = -1, rd = -1;
    for (unsigned k = 0; k < m; k++) {
        if (in->o[k].kind == SASS_K_P) pd = (int)k;
        else if (in->o[k].kind == SASS_K_R) rd = (int)k;
    }
    bool cas = kind == SASS_M_CAS || kind == SASS_M_CAST;
    if (!popc_inc && in->nops < m + (cas ? 3 : 2)) return -1;
    bool b64 = sass_has(in, SASS_M_M64) || sass_has(in, SASS_M_U64) || sass_has(in, SASS_M_S64) ||
               sass_has(in, SASS_M_F64);
    if (sass_has(in, SASS_M_F16) || sass_has(in, SASS_M_BF16) || sass_has(in, SASS_M_M128)) return -1;
    uint32_t size = b64 ? 8 : 4;
    bool wide = (in->o[m].flags & SASS_F_WIDE) || sass_has(in, SASS_M_E);
    uint64_t addr[32];
    addresses(o, m, wide, addr);
    const uint32_t *b = popc_inc ? NULL : msass_src_row(o, m + 1, 0), *bh = b64 && !popc_inc ? msass_src_hi(o, m + 1, 1) : NULL;
    const uint32_t *c = cas ? msass_src_row(o, m + 2, 2) : NULL, *ch = cas && b64 ? msass_src_hi(o, m + 2, 3) : NULL;
    uint32_t *d = rd >= 0 ? msass_dst(o, (unsigned)rd) : NULL, *dh = rd >= 0 && b64 ? msass_dst_hi(o, (unsigned)rd) : NULL;
    uint32_t stored = 0;
    int rc = 0;
    o->atomic = true;
    LANES(o, i) {
        uint8_t *p = resolve(o, sp, addr[i], size, true, i, &rc);
        if (!p) {
            o->atomic = false;
            return rc;
        }
        uint64_t bv = popc_inc ? 1 : (b64 ? ((uint64_t)bh[i] << 32 | b[i]) : b[i]);
        uint64_t cv = cas ? (b64 ? ((uint64_t)ch[i] << 32 | c[i]) : c[i]) : 0;
        uint64_t old, nv;
        bool st;
        if (sp == SP_SHARED || (sp == SP_GENERIC && addr[i] - o->wk->l->shared_window < SHARED_SPAN)) {
            old = 0;
            memcpy(&old, p, size);
            if ((st = atom_new(kind, in, b64, old, bv, cv, &nv))) memcpy(p, &nv, size);
        } else if (b64) {
            uint64_t *q = (uint64_t *)p;
            old = __atomic_load_n(q, __ATOMIC_RELAXED);
            for (;;) {
                st = atom_new(kind, in, true, old, bv, cv, &nv);
                if (!st || __atomic_compare_exchange_n(q, &old, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
            }
        } else {
            uint32_t *q = (uint32_t *)p, o32 = __atomic_load_n(q, __ATOMIC_RELAXED);
            for (;;) {
                st = atom_new(kind, in, false, o32, bv, cv, &nv);
                uint32_t n32 = (uint32_t)nv;
                if (!st || __atomic_compare_exchange_n(q, &o32, n32, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
            }
            old = o32;
        }
        stored |= (uint32_t)st << i;
        if (d) d[i] = (uint32_t)old;
        if (dh) dh[i] = (uint32_t)(old >> 32);
    }
    o->atomic = false;
    if (pd >= 0) msass_pred_set(o, (unsigned)pd, kind == SASS_M_CAST ? stored : o->exec);
    return 0;
}

/* ** warp-wide */
static int shfl(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 5) return -1;
    const uint32_t *a = msass_src_row(o, 2, 0), *b = msass_src_row(o, 3, 1), *c = msass_src_row(o, 4, 2);
    uint32_t vals[32], ok = 0;
    memcpy(vals, a, sizeof vals);
    uint32_t *d = msass_dst(o, 1);
    bool up = sass_has(in, SASS_M_UP), down = sass_has(in, SASS_M_DOWN), bfly = sass_has(in, SASS_M_BFLY);
    LANES(o, i) {
        uint32_t bv = b[i] & 31, cval = c[i] & 31, seg = (c[i] >> 8) & 31;
        int32_t maxl = (int32_t)((i & seg) | (cval & ~seg)), minl = (int32_t)(i & seg), j;
        bool p;
        if (up) j = (int32_t)i - (int32_t)bv, p = j >= maxl;
        else if (down) j = (int32_t)i + (int32_t)bv, p = j <= maxl;
        else if (bfly) j = (int32_t)(i ^ bv), p = j <= maxl;
        else j = minl | (int32_t)(bv & ~seg), p = j <= maxl;
        if (!p) j = (int32_t)i;
        d[i] = vals[j & 31];
        ok |= (uint32_t)p << i;
    }
    msass_pred_set(o, 0, ok);
    return 0;
}

static int vote(msass_op *o)
{
    const sass_insn *in = o->in;
    unsigned n = in->nops;
    if (n < 2) return -1;
    uint32_t pa = msass_pred(o, n - 1) & o->exec;
    bool any = pa != 0, all = pa == o->exec, eq = !pa || pa == o->exec, r;
    if (sass_has(in, SASS_M_ANY)) r = any;
    else if (sass_has(in, SASS_M_ALL)) r = all;
    else if (sass_has(in, SASS_M_EQ)) r = eq;
    else return -1;
    unsigned k = 0;
    if (in->o[0].kind == SASS_K_R || in->o[0].kind == SASS_K_UR) {
        uint32_t *d = msass_dst(o, 0);
        if (in->o[0].kind == SASS_K_UR) {
            uint32_t lane = (uint32_t)__builtin_ctz(o->exec);
            d[lane] = pa;
        } else {
            LANES(o, i) d[i] = pa;
        }
        k = 1;
    }
    if (k < n - 1) {
        const sass_opnd *p = &in->o[k];
        if (p->kind == SASS_K_UP) {
            if (p->reg < 7) o->w->up = (o->w->up & ~(1u << p->reg)) | (uint32_t)r << p->reg;
        } else {
            msass_pred_set(o, k, r ? 0xffffffffu : 0);
        }
    }
    return 0;
}

static int match(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2) return -1;
    bool all = sass_has(in, SASS_M_ALL), b64 = sass_has(in, SASS_M_U64) || sass_has(in, SASS_M_M64);
    unsigned s = in->nops - 1, dk = all && in->nops >= 3 ? 1 : 0;
    const uint32_t *a = msass_src_row(o, s, 0), *ah = b64 ? msass_src_hi(o, s, 1) : NULL;
    uint32_t *d = msass_dst(o, dk), same_all = 0;
    bool every = true;
    LANES(o, i) {
        uint32_t m = 0;
        for (uint32_t n = o->exec; n; n &= n - 1) {
            uint32_t j = (uint32_t)__builtin_ctz(n);
            if (a[j] == a[i] && (!ah || ah[j] == ah[i])) m |= 1u << j;
        }
        if (m != o->exec) every = false;
        d[i] = m;
    }
    if (all) {
        same_all = every ? 0xffffffffu : 0;
        LANES(o, i) d[i] = every ? o->exec : 0;
        if (dk) msass_pred_set(o, 0, same_all);
    }
    return 0;
}

static int redux(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 2) return -1;
    const uint32_t *a = msass_src_row(o, 1, 0);
    bool sgn = sass_has(in, SASS_M_S32);
    uint32_t r = 0;
    bool first = true;
    LANES(o, i) {
        uint32_t v = a[i];
        if (first) r = v, first = false;
        else if (sass_has(in, SASS_M_SUM)) r += v;
        else if (sass_has(in, SASS_M_MIN)) r = sgn ? (uint32_t)BASE_MIN((int32_t)r, (int32_t)v) : BASE_MIN(r, v);
        else if (sass_has(in, SASS_M_MAX)) r = sgn ? (uint32_t)BASE_MAX((int32_t)r, (int32_t)v) : BASE_MAX(r, v);
        else if (sass_has(in, SASS_M_AND)) r &= v;
        else if (sass_has(in, SASS_M_OR)) r |= v;
        else if (sass_has(in, SASS_M_XOR)) r ^= v;
        else return -1;
    }
    uint32_t *d = msass_dst(o, 0);
    LANES(o, i) d[i] = r;
    return 0;
}

static int elect(msass_op *o)
{
    const sass_insn *in = o->in;
    if (in->nops < 3) return -1;
    uint32_t m = o->exec & msass_pred(o, 2);
    uint32_t leader = m ? (uint32_t)__builtin_ctz(m) : 0;
    msass_pred_set(o, 0, m ? 1u << leader : 0);
    if (in->o[1].kind == SASS_K_UR && o->exec) {
        uint32_t *d = msass_dst(o, 1);
        d[__builtin_ctz(o->exec)] = leader;
    }
    return 0;
}

/* ** LDSM.16.{M88,MT88}[.2|.4] Rd, [addr]: PTX's ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{,.trans}.shared.b16
 * (PTX ISA "Warp-level matrix load instruction: ldmatrix"). Matrix j (of 1, 2 or 4) is 8 rows of eight 16-bit
 * values; lane 8 * j + r gives the shared address of its row r (16 bytes, 16-byte aligned; the other lanes'
 * addresses are not read). Every lane then gets one register per matrix, in the fragment layout of mma:
 * lane 4 * g + t holds row g, columns 2t and 2t + 1 (low half first); .trans (MT88) the transposed matrix's,
 * i.e. rows 2t and 2t + 1 of column g. One operation of the whole warp, like HMMA: every lane must run it. */
static int ldsm(msass_op *o)
{
    const sass_insn *in = o->in;
    bool trans = sass_has(in, SASS_M_MT88);
    if (in->nops != 2 || in->o[0].kind != SASS_K_R || in->o[0].sel || in->o[1].kind != SASS_K_MEM ||
        !sass_has(in, SASS_M_U16) || trans == sass_has(in, SASS_M_M88) ||
        (sass_has(in, SASS_M_MAT2) && sass_has(in, SASS_M_MAT4)))
        return -1;
    for (int m = 0; m < SASS_MOD_COUNT; m++)
        if (sass_has(in, (sass_mod)m) && m != SASS_M_U16 && m != SASS_M_M88 && m != SASS_M_MT88 &&
            m != SASS_M_MAT2 && m != SASS_M_MAT4)
            return -1;
    if (o->exec != 0xffffffffu)
        return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: LDSM is one operation of the whole warp "
                          "(PTX ldmatrix.sync.aligned), but only lanes 0x%08x of it execute it (the warp is diverged, "
                          "predicated off in part, or has fewer than 32 threads): the PTX ISA leaves that undefined",
                          o->exec);
    uint32_t nmat = sass_has(in, SASS_M_MAT4) ? 4 : sass_has(in, SASS_M_MAT2) ? 2 : 1;
    uint64_t addr[32];
    addresses(o, 1, false, addr);
    uint16_t rows[4][8][8];
    int rc = 0;
    for (uint32_t j = 0; j < nmat; j++)
        for (uint32_t r = 0; r < 8; r++) {
            uint32_t lane = 8 * j + r;
            const uint8_t *p = resolve(o, SP_SHARED, addr[lane], 16, false, lane, &rc);
            if (!p) return rc;
            memcpy(rows[j][r], p, 16);
        }
    uint32_t rd = in->o[0].reg;
    if (rd == 255) return 0;
    for (uint32_t j = 0; j < nmat; j++)
        for (uint32_t lane = 0; lane < 32; lane++) {
            uint32_t g = lane >> 2, t = lane & 3, lo, hi;
            if (trans) lo = rows[j][2 * t][g], hi = rows[j][2 * t + 1][g];
            else lo = rows[j][g][2 * t], hi = rows[j][g][2 * t + 1];
            o->w->r[(size_t)(rd + j) * 32 + lane] = lo | hi << 16;
        }
    return 0;
}

int msass_mem(msass_op *o)
{
    switch (o->in->op) {
    case SASS_OP_LDSM: return ldsm(o);
    case SASS_OP_LDC: case SASS_OP_ULDC: return ldc(o);
    case SASS_OP_LDG: case SASS_OP_LD: case SASS_OP_LDS: case SASS_OP_LDL: return load_store(o, false);
    case SASS_OP_STG: case SASS_OP_ST: case SASS_OP_STS: case SASS_OP_STL: return load_store(o, true);
    case SASS_OP_ATOMG: case SASS_OP_ATOM: case SASS_OP_ATOMS: case SASS_OP_RED: case SASS_OP_REDG: return atomic(o);
    case SASS_OP_SHFL: return shfl(o);
    case SASS_OP_VOTE: case SASS_OP_VOTEU: return vote(o);
    case SASS_OP_MATCH: return match(o);
    case SASS_OP_REDUX: return redux(o);
    case SASS_OP_ELECT: return elect(o);
    default: return -1;
    }
}
