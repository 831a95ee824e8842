/* The vector memory of the AMD ISA executor: DS (the work-group's LDS,
 * with ds_swizzle/ds_permute/ds_bpermute and the atomics' returned old
 * values), FLAT (global, or the LDS and private apertures by address),
 * GLOBAL, SCRATCH (the private segment, architected flat scratch: gfx11 and
 * gfx940+) and MUBUF (gfx90a's scratch through the private segment
 * buffer). Lanes run in order, so atomics to one address return the values
 * lane order gives; global atomics are host atomics (other work-groups run
 * on other threads). Every global access goes through mai_mem (the GPU's
 * mappings); LDS accesses outside the work-group's allocation read 0 and
 * drop writes, as the hardware's LDS bounds check does. Semantics and
 * operand roles: the ISA guides ("Data Share Operations", "Flat, Scratch
 * and Global Instructions", "Buffer Instructions"). */
#include "drivers/mock/mock_amd_isa.h"

#include <inttypes.h>
#include <string.h>

static uint32_t *vreg(mai_wave *w, const amdi_opnd *o, unsigned k)
{
    return (o->kind == AMDI_O_AGPR ? w->a : w->v) + (size_t)(o->reg + k) * 64;
}

/* ** the private segment: dword k of a lane's private memory lives at
 * base + (k * wave + lane) * 4 (the swizzle architected flat scratch and
 * the gfx9 scratch buffer resource's INDEX_STRIDE give) */
static void *priv(mai_wave *w, const amdi_inst *in, unsigned l, uint64_t off, unsigned size, bool write)
{
    const mai_dispatch *d = w->g->d;
    uint64_t lane_bytes = d->scratch_wave / d->wave;
    /* gfx90a has no architected flat scratch: the kernel's prologue sets
     * FLAT_SCRATCH (s[102:103]) from FLAT_SCRATCH_INIT and its wave offset */
    uint64_t base = d->t.fam == AMDI_GFX9 && !d->t.gfx940 ? mai_sreg64(w, 102) : w->scratch;
    if (!d->scratch_en || !base) {
        mai_fault(w, MAI_PRIVATE_BASE + off, write, "a private (scratch) access, but the dispatch set up no scratch "
                  "(COMPUTE_PGM_RSRC2.SCRATCH_EN 0)");
        return NULL;
    }
    if (off + size > lane_bytes || (off & 3) + size > 4) {
        if (off + size > lane_bytes) {
            mai_fault(w, MAI_PRIVATE_BASE + off, write, "private offset 0x%" PRIx64 " (+%u) beyond the %" PRIu64
                      " bytes per lane COMPUTE_TMPRING_SIZE gives", off, size, lane_bytes);
            return NULL;
        }
    }
    uint64_t va = base + ((off >> 2) * d->wave + l) * 4 + (off & 3);
    return mai_mem(w, in, l, va, size, write);
}

/* ** DS */
static bool lds_ok(const mai_wave *w, uint64_t a, unsigned n) { return a + n <= w->g->d->lds_bytes; }

static uint64_t ld(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    memcpy(&v, p, n);
    return v;
}
static void st(uint8_t *p, uint64_t v, unsigned n) { memcpy(p, &v, n); }

static uint32_t atomic32(amdi_op op, uint32_t old, uint32_t x, uint32_t y, bool gfx11, uint32_t *ret)
{
    *ret = old;
    float f;
    switch (op) {
    case AMDI_DS_ADD_U32: case AMDI_DS_ADD_RTN_U32: case AMDI_M_ATOMIC_ADD: return old + x;
    case AMDI_DS_SUB_U32: case AMDI_DS_SUB_RTN_U32: case AMDI_M_ATOMIC_SUB: return old - x;
    case AMDI_DS_INC_U32: case AMDI_DS_INC_RTN_U32: case AMDI_M_ATOMIC_INC: return old >= x ? 0 : old + 1;
    case AMDI_DS_DEC_U32: case AMDI_DS_DEC_RTN_U32: case AMDI_M_ATOMIC_DEC: return old == 0 || old > x ? x : old - 1;
    case AMDI_DS_MIN_I32: case AMDI_DS_MIN_RTN_I32: case AMDI_M_ATOMIC_SMIN: return (int32_t)old < (int32_t)x ? old : x;
    case AMDI_DS_MAX_I32: case AMDI_DS_MAX_RTN_I32: case AMDI_M_ATOMIC_SMAX: return (int32_t)old > (int32_t)x ? old : x;
    case AMDI_DS_MIN_U32: case AMDI_DS_MIN_RTN_U32: case AMDI_M_ATOMIC_UMIN: return old < x ? old : x;
    case AMDI_DS_MAX_U32: case AMDI_DS_MAX_RTN_U32: case AMDI_M_ATOMIC_UMAX: return old > x ? old : x;
    case AMDI_DS_AND_B32: case AMDI_DS_AND_RTN_B32: case AMDI_M_ATOMIC_AND: return old & x;
    case AMDI_DS_OR_B32: case AMDI_DS_OR_RTN_B32: case AMDI_M_ATOMIC_OR: return old | x;
    case AMDI_DS_XOR_B32: case AMDI_DS_XOR_RTN_B32: case AMDI_M_ATOMIC_XOR: return old ^ x;
    case AMDI_DS_WRXCHG_RTN_B32: case AMDI_M_ATOMIC_SWAP: return x;
    case AMDI_DS_CMPST_RTN_B32:
        /* gfx9: DATA0 compares, DATA1 is stored; gfx10+ swapped them (ds_cmpstore) */
        return gfx11 ? (old == y ? x : old) : (old == x ? y : old);
    case AMDI_M_ATOMIC_CMPSWAP: return old == y ? x : old; /* DATA[0] the new value, DATA[1] the compare */
    case AMDI_DS_ADD_F32: case AMDI_DS_ADD_RTN_F32: case AMDI_M_ATOMIC_ADD_F32: {
        float a, b;
        memcpy(&a, &old, 4);
        memcpy(&b, &x, 4);
        f = a + b;
        uint32_t r;
        memcpy(&r, &f, 4);
        return r;
    }
    case AMDI_DS_MIN_F32: case AMDI_DS_MIN_RTN_F32: case AMDI_DS_MAX_F32: case AMDI_DS_MAX_RTN_F32:
    case AMDI_M_ATOMIC_MIN_F32: case AMDI_M_ATOMIC_MAX_F32: {
        float a, b;
        memcpy(&a, &old, 4);
        memcpy(&b, &x, 4);
        bool mx = op == AMDI_DS_MAX_F32 || op == AMDI_DS_MAX_RTN_F32 || op == AMDI_M_ATOMIC_MAX_F32;
        float r = a != a ? b : b != b ? a : mx ? (a > b ? a : b) : (a < b ? a : b);
        uint32_t u;
        memcpy(&u, &r, 4);
        return u;
    }
    default: return old;
    }
}

static bool ds_atomic(amdi_op op)
{
    return (op >= AMDI_DS_ADD_U32 && op <= AMDI_DS_ADD_F32) || (op >= AMDI_DS_ADD_RTN_U32 && op <= AMDI_DS_ADD_RTN_F32);
}

bool mai_ds(mai_wave *w, const amdi_inst *in)
{
    const mai_dispatch *d = w->g->d;
    unsigned W = d->wave;
    amdi_op op = (amdi_op)in->op;
    uint64_t exec = mai_exec(w);
    uint8_t *lds = w->g->lds;
    bool g11 = d->t.fam == AMDI_GFX11;
    if (in->gds) {
        char text[200];
        mai_describe(w, in, text, sizeof text);
        mai_illegal(w, "%s: GDS (the global data share) is not emulated", text);
        return false;
    }
    const uint32_t *addr = vreg(w, &in->s[0], 0);
    uint32_t off = (uint32_t)in->offset | (uint32_t)in->offset1 << 8;
    /* lane movement: no LDS access */
    if (op == AMDI_DS_SWIZZLE_B32 || op == AMDI_DS_PERMUTE_B32 || op == AMDI_DS_BPERMUTE_B32) {
        uint32_t src[64], out[64];
        const uint32_t *data = op == AMDI_DS_SWIZZLE_B32 ? addr : vreg(w, &in->s[1], 0);
        for (unsigned l = 0; l < W; l++) src[l] = exec >> l & 1 ? data[l] : 0;
        memset(out, 0, sizeof out);
        for (unsigned l = 0; l < W; l++) {
            if (!(exec >> l & 1)) continue;
            if (op == AMDI_DS_BPERMUTE_B32) {
                out[l] = src[((addr[l] + off) >> 2) % W];
            } else if (op == AMDI_DS_PERMUTE_B32) {
                out[((addr[l] + off) >> 2) % W] = src[l];
            } else if (off & 0x8000) { /* quad permute */
                out[l] = src[(l & ~3u) | (off >> (2 * (l & 3)) & 3)];
            } else { /* bit masks within 32 lanes */
                unsigned and_m = off & 0x1f, or_m = off >> 5 & 0x1f, xor_m = off >> 10 & 0x1f;
                out[l] = src[(l & 0x20) | (((l & and_m) | or_m) ^ xor_m)];
            }
        }
        uint32_t *dst = vreg(w, &in->d[0], 0);
        for (unsigned l = 0; l < W; l++)
            if (exec >> l & 1) dst[l] = out[l];
        return true;
    }
    bool two = op == AMDI_DS_WRITE2_B32 || op == AMDI_DS_WRITE2ST64_B32 || op == AMDI_DS_READ2_B32 ||
               op == AMDI_DS_READ2ST64_B32 || op == AMDI_DS_WRITE2_B64 || op == AMDI_DS_WRITE2ST64_B64 ||
               op == AMDI_DS_READ2_B64 || op == AMDI_DS_READ2ST64_B64;
    bool st64 = op == AMDI_DS_WRITE2ST64_B32 || op == AMDI_DS_READ2ST64_B32 || op == AMDI_DS_WRITE2ST64_B64 ||
                op == AMDI_DS_READ2ST64_B64;
    unsigned size = in->mbytes;
    char kind = in->mkind;
    bool sx = kind == 's' || kind == 'x' || kind == 'X';
    bool d16 = kind == 'h' || kind == 'H' || kind == 'x' || kind == 'X', d16hi = kind == 'H' || kind == 'X';
    for (unsigned l = 0; l < W; l++) {
        if (!(exec >> l & 1)) continue;
        if (two) {
            unsigned stride = size * (st64 ? 64 : 1);
            uint64_t a0 = (uint64_t)addr[l] + (uint64_t)in->offset * stride, a1 = (uint64_t)addr[l] + (uint64_t)in->offset1 * stride;
            unsigned nd = size / 4;
            if (d->memcheck && (!mai_lds_check(w, in, l, a0, size, !in->nd, false) ||
                                !mai_lds_check(w, in, l, a1, size, !in->nd, false)))
                return false;
            if (in->nd) {
                uint32_t *dst = vreg(w, &in->d[0], 0);
                for (unsigned k = 0; k < nd; k++) {
                    dst[(size_t)k * 64 + l] = lds_ok(w, a0, size) ? (uint32_t)ld(lds + a0 + 4 * k, 4) : 0;
                    dst[(size_t)(nd + k) * 64 + l] = lds_ok(w, a1, size) ? (uint32_t)ld(lds + a1 + 4 * k, 4) : 0;
                }
            } else {
                for (unsigned k = 0; k < nd; k++) {
                    if (lds_ok(w, a0, size)) st(lds + a0 + 4 * k, vreg(w, &in->s[1], k)[l], 4);
                    if (lds_ok(w, a1, size)) st(lds + a1 + 4 * k, vreg(w, &in->s[2], k)[l], 4);
                }
            }
            continue;
        }
        uint64_t a = (uint64_t)addr[l] + off;
        bool ok = lds_ok(w, a, size);
        if (d->memcheck) {
            bool at = ds_atomic(op) || op == AMDI_DS_WRXCHG_RTN_B32 || op == AMDI_DS_CMPST_RTN_B32 ||
                      op == AMDI_DS_ADD_U64 || op == AMDI_DS_ADD_RTN_U64 || op == AMDI_DS_CMPST_RTN_B64;
            if (!mai_lds_check(w, in, l, a, size, !in->nd, at)) return false;
        }
        if (ds_atomic(op) || op == AMDI_DS_WRXCHG_RTN_B32 || op == AMDI_DS_CMPST_RTN_B32) {
            uint32_t x = vreg(w, &in->s[1], 0)[l], y = in->ns > 2 ? vreg(w, &in->s[2], 0)[l] : 0, old = 0, ret = 0;
            if (ok) {
                old = (uint32_t)ld(lds + a, 4);
                st(lds + a, atomic32(op, old, x, y, g11, &ret), 4);
            }
            if (in->nd) vreg(w, &in->d[0], 0)[l] = ok ? ret : 0;
            continue;
        }
        if (op == AMDI_DS_ADD_U64 || op == AMDI_DS_ADD_RTN_U64 || op == AMDI_DS_CMPST_RTN_B64) {
            uint64_t x = vreg(w, &in->s[1], 0)[l] | (uint64_t)vreg(w, &in->s[1], 1)[l] << 32, old = 0;
            uint64_t y = in->ns > 2 ? vreg(w, &in->s[2], 0)[l] | (uint64_t)vreg(w, &in->s[2], 1)[l] << 32 : 0;
            if (ok) {
                old = ld(lds + a, 8);
                uint64_t nv = op == AMDI_DS_CMPST_RTN_B64 ? (g11 ? (old == y ? x : old) : (old == x ? y : old)) : old + x;
                st(lds + a, nv, 8);
            }
            if (in->nd) {
                vreg(w, &in->d[0], 0)[l] = (uint32_t)old;
                vreg(w, &in->d[0], 1)[l] = (uint32_t)(old >> 32);
            }
            continue;
        }
        if (in->nd) { /* loads */
            uint32_t *dst = vreg(w, &in->d[0], 0);
            if (d16) {
                uint32_t v = ok ? (uint32_t)ld(lds + a, size) : 0;
                if (size == 1) v = sx ? (uint16_t)(int16_t)(int8_t)v : v & 0xff;
                dst[l] = d16hi ? (dst[l] & 0xffffu) | v << 16 : (dst[l] & 0xffff0000u) | (v & 0xffff);
            } else if (size < 4) {
                uint32_t v = ok ? (uint32_t)ld(lds + a, size) : 0;
                if (sx) v = size == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
                dst[l] = v;
            } else {
                for (unsigned k = 0; k < size / 4; k++) dst[(size_t)k * 64 + l] = ok ? (uint32_t)ld(lds + a + 4 * k, 4) : 0;
            }
        } else { /* stores */
            if (!ok) continue;
            if (op == AMDI_DS_WRITE_B8_D16_HI || op == AMDI_DS_WRITE_B16_D16_HI)
                st(lds + a, vreg(w, &in->s[1], 0)[l] >> 16, size);
            else if (size < 4)
                st(lds + a, vreg(w, &in->s[1], 0)[l], size);
            else
                for (unsigned k = 0; k < size / 4; k++) st(lds + a + 4 * k, vreg(w, &in->s[1], k)[l], 4);
        }
    }
    return true;
}

/* ** FLAT, GLOBAL, SCRATCH, MUBUF */
typedef enum space { SP_GLOBAL, SP_LDS, SP_PRIVATE } space;

/* host pointer for one lane's access, or NULL (fault reported, or LDS
 * out of range: *lds_oob) */
static uint8_t *lane_ptr(mai_wave *w, const amdi_inst *in, unsigned l, space sp, uint64_t a, unsigned size, bool write,
                         bool *lds_oob)
{
    *lds_oob = false;
    if (sp == SP_LDS) {
        if (w->g->d->memcheck && !mai_lds_check(w, in, l, a, size, write, false)) return NULL;
        if (!lds_ok(w, a, size)) {
            *lds_oob = true;
            return NULL;
        }
        return w->g->lds + a;
    }
    if (sp == SP_PRIVATE) return priv(w, in, l, a, size, write);
    return mai_mem(w, in, l, a, size, write);
}

static bool srd_swizzled(const mai_wave *w, const amdi_inst *in) { return w->s[(in->s[2].reg + 1) & 127] >> 31 & 1; }

static bool vmem_atomic(amdi_op op) { return op >= AMDI_M_ATOMIC_SWAP && op <= AMDI_M_ATOMIC_ADD_F64; }

/* MUBUF: the byte address of lane l (gfx9 buffer resource, swizzled as its
 * word 3 says: ISA guide "Buffer Addressing") */
static uint64_t buf_addr(mai_wave *w, const amdi_inst *in, unsigned l, uint64_t *extra_out)
{
    const uint32_t *srd = &w->s[in->s[2].reg];
    uint64_t base = srd[0] | (uint64_t)(srd[1] & 0xffff) << 32;
    uint32_t stride = srd[1] >> 16 & 0x3fff;
    bool swz = srd[1] >> 31 & 1, add_tid = srd[3] >> 23 & 1;
    uint32_t idx_stride = 8u << (srd[3] >> 21 & 3), elem = 2u << (srd[3] >> 19 & 3);
    uint32_t soff = (uint32_t)mai_ssrc(w, &in->s[3]);
    uint64_t index = add_tid ? l : 0, offset = (uint32_t)in->offset;
    const uint32_t *va = in->s[0].kind == AMDI_O_VGPR ? vreg(w, &in->s[0], 0) : NULL;
    if (in->idxen && va) index += va[l];
    if (in->offen && va) offset += in->idxen ? vreg(w, &in->s[0], 1)[l] : va[l];
    *extra_out = elem;
    if (!swz) return base + soff + offset + index * stride;
    return base + soff + (index / idx_stride) * stride * idx_stride + (offset / elem) * elem * idx_stride +
           (index % idx_stride) * elem + offset % elem;
}

bool mai_vmem(mai_wave *w, const amdi_inst *in)
{
    const mai_dispatch *d = w->g->d;
    unsigned W = d->wave;
    amdi_op op = (amdi_op)in->op;
    uint64_t exec = mai_exec(w);
    if (op == AMDI_B_GL0_INV || op == AMDI_B_GL1_INV || op == AMDI_B_WBL2 || op == AMDI_B_INV || op == AMDI_B_WBINVL1 ||
        op == AMDI_B_WBINVL1_VOL)
        return true; /* caches: the mock's memory is coherent */
    unsigned size = in->mbytes;
    char kind = in->mkind;
    bool sx = kind == 's' || kind == 'x' || kind == 'X';
    bool d16 = in->nd && (kind == 'h' || kind == 'H' || kind == 'x' || kind == 'X');
    bool hi = kind == 'H' || kind == 'X';
    bool store = !in->nd && !vmem_atomic(op), atomic = vmem_atomic(op);
    bool whole = kind == '4' && !(size & 3) && !atomic && in->enc != AMDI_E_MUBUF;
    /* the common case on a fast path: whole dwords of global memory whose
     * lanes' span lies in one mapping (one check for the wave) */
    if (whole && in->enc == AMDI_E_GLOBAL && exec) {
        uint64_t va[64], span_lo = UINT64_MAX, span_hi = 0;
        const uint32_t *v0 = vreg(w, &in->s[0], 0);
        uint64_t base = in->s[2].kind == AMDI_O_SGPR ? mai_sreg64(w, in->s[2].reg) : 0;
        const uint32_t *v1 = in->s[2].kind == AMDI_O_SGPR ? NULL : vreg(w, &in->s[0], 1);
        for (unsigned l = 0; l < W; l++) {
            if (!(exec >> l & 1)) continue;
            uint64_t a = (v1 ? v0[l] | (uint64_t)v1[l] << 32 : base + v0[l]) + (uint64_t)(int64_t)in->offset;
            va[l] = a;
            span_lo = a < span_lo ? a : span_lo;
            span_hi = a > span_hi ? a : span_hi;
        }
        mai_group *g = w->g;
        if (span_hi - span_lo < (1ull << 32) && span_lo >= g->rlo && span_hi + size <= g->rhi && (!store || g->rw)) {
            for (unsigned l = 0; l < W; l++) {
                if (!(exec >> l & 1)) continue;
                uint8_t *p = (uint8_t *)(uintptr_t)va[l];
                if (store)
                    for (unsigned k = 0; k < size / 4; k++) memcpy(p + 4 * k, &vreg(w, &in->s[1], k)[l], 4);
                else
                    for (unsigned k = 0; k < size / 4; k++) memcpy(&vreg(w, &in->d[0], k)[l], p + 4 * k, 4);
            }
            return true;
        }
    }
    bool x2 = op == AMDI_M_ATOMIC_SWAP_X2 || op == AMDI_M_ATOMIC_CMPSWAP_X2 || op == AMDI_M_ATOMIC_ADD_X2 ||
              op == AMDI_M_ATOMIC_ADD_F64;
    for (unsigned l = 0; l < W; l++) {
        if (!(exec >> l & 1)) continue;
        space sp = SP_GLOBAL;
        uint64_t a;
        uint64_t elem = 4;
        if (in->enc == AMDI_E_MUBUF) {
            a = buf_addr(w, in, l, &elem);
        } else if (in->enc == AMDI_E_SCRATCH) {
            a = (uint64_t)(int64_t)in->offset;
            if (in->s[0].kind == AMDI_O_VGPR) a += vreg(w, &in->s[0], 0)[l];
            if (in->s[2].kind == AMDI_O_SGPR) a += w->s[in->s[2].reg];
            a &= 0xffffffffu;
            sp = SP_PRIVATE;
        } else {
            if (in->s[2].kind == AMDI_O_SGPR) /* saddr + a 32-bit VGPR offset */
                a = mai_sreg64(w, in->s[2].reg) + vreg(w, &in->s[0], 0)[l];
            else
                a = vreg(w, &in->s[0], 0)[l] | (uint64_t)vreg(w, &in->s[0], 1)[l] << 32;
            a += (uint64_t)(int64_t)in->offset;
            if (in->enc == AMDI_E_FLAT) {
                if (a >= MAI_SHARED_BASE && a < MAI_SHARED_BASE + MAI_APERTURE_SIZE) {
                    sp = SP_LDS;
                    a -= MAI_SHARED_BASE;
                } else if (a >= MAI_PRIVATE_BASE && a < MAI_PRIVATE_BASE + MAI_APERTURE_SIZE) {
                    sp = SP_PRIVATE;
                    a -= MAI_PRIVATE_BASE;
                }
            }
        }
        if (whole && sp == SP_GLOBAL) { /* the common case: whole dwords of global memory */
            uint8_t *p = mai_mem(w, in, l, a, size, store);
            if (!p) return false;
            if (store)
                for (unsigned k = 0; k < size / 4; k++) memcpy(p + 4 * k, &vreg(w, &in->s[1], k)[l], 4);
            else
                for (unsigned k = 0; k < size / 4; k++) memcpy(&vreg(w, &in->d[0], k)[l], p + 4 * k, 4);
            continue;
        }
        /* one lane's access, dword by dword where it goes to the private
         * segment (its dwords are not contiguous there) */
        unsigned chunk = sp == SP_PRIVATE ? 4 : size;
        if (in->enc == AMDI_E_MUBUF && (srd_swizzled(w, in))) chunk = (unsigned)elem;
        if (atomic) {
            unsigned n = x2 ? 8 : 4;
            bool oob;
            uint8_t *p = lane_ptr(w, in, l, sp, a, n, true, &oob);
            if (!p && !oob) return false;
            if ((a & (n - 1)) && sp == SP_GLOBAL) {
                mai_fault(w, a, true, "a misaligned %u-byte atomic", n);
                return false;
            }
            const uint32_t *dv0 = vreg(w, &in->s[1], 0);
            if (!x2) {
                uint32_t x = dv0[l], y = op == AMDI_M_ATOMIC_CMPSWAP ? vreg(w, &in->s[1], 1)[l] : 0, old = 0, ret = 0;
                if (p) {
                    uint32_t *q = (uint32_t *)p;
                    old = __atomic_load_n(q, __ATOMIC_RELAXED);
                    for (;;) {
                        uint32_t nv = atomic32(op, old, x, y, false, &ret);
                        if (__atomic_compare_exchange_n(q, &old, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
                    }
                }
                if (in->nd) vreg(w, &in->d[0], 0)[l] = ret;
            } else {
                uint64_t x = dv0[l] | (uint64_t)vreg(w, &in->s[1], 1)[l] << 32, y = 0, old = 0;
                if (op == AMDI_M_ATOMIC_CMPSWAP_X2) y = vreg(w, &in->s[1], 2)[l] | (uint64_t)vreg(w, &in->s[1], 3)[l] << 32;
                if (p) {
                    uint64_t *q = (uint64_t *)p;
                    old = __atomic_load_n(q, __ATOMIC_RELAXED);
                    for (;;) {
                        uint64_t nv;
                        if (op == AMDI_M_ATOMIC_SWAP_X2) nv = x;
                        else if (op == AMDI_M_ATOMIC_CMPSWAP_X2) nv = old == y ? x : old;
                        else if (op == AMDI_M_ATOMIC_ADD_X2) nv = old + x;
                        else {
                            double a0, b0;
                            memcpy(&a0, &old, 8);
                            memcpy(&b0, &x, 8);
                            a0 += b0;
                            memcpy(&nv, &a0, 8);
                        }
                        if (__atomic_compare_exchange_n(q, &old, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
                    }
                }
                if (in->nd) {
                    vreg(w, &in->d[0], 0)[l] = (uint32_t)old;
                    vreg(w, &in->d[0], 1)[l] = (uint32_t)(old >> 32);
                }
            }
            continue;
        }
        /* loads and stores, chunk by chunk */
        uint8_t buf[16] = {0};
        if (store) {
            const amdi_opnd *s = &in->s[1];
            if (size < 4) {
                uint32_t v = vreg(w, s, 0)[l];
                if (hi) v >>= 16;
                memcpy(buf, &v, size);
            } else {
                for (unsigned k = 0; k < size / 4; k++) memcpy(buf + 4 * k, &vreg(w, s, k)[l], 4);
            }
        }
        for (unsigned c = 0; c < size; c += chunk) {
            unsigned n = size - c < chunk ? size - c : chunk;
            uint64_t ca = a + c;
            if (in->enc == AMDI_E_MUBUF && c) {
                /* the next element of a swizzled buffer: recompute with the offset moved */
                amdi_inst t = *in;
                t.offset += (int32_t)c;
                uint64_t e2;
                ca = buf_addr(w, &t, l, &e2);
            }
            bool oob;
            uint8_t *p = lane_ptr(w, in, l, sp, ca, n, store, &oob);
            if (!p && !oob) return false;
            if (store) {
                if (p) memcpy(p, buf + c, n);
            } else {
                if (p) memcpy(buf + c, p, n);
                else memset(buf + c, 0, n);
            }
        }
        if (store) continue;
        uint32_t *dst = vreg(w, &in->d[0], 0);
        if (d16) {
            uint32_t v = size == 1 ? (sx ? (uint16_t)(int16_t)(int8_t)buf[0] : buf[0]) : (uint32_t)buf[0] | (uint32_t)buf[1] << 8;
            dst[l] = hi ? (dst[l] & 0xffffu) | v << 16 : (dst[l] & 0xffff0000u) | (v & 0xffff);
        } else if (size < 4) {
            uint32_t v = size == 1 ? buf[0] : (uint32_t)buf[0] | (uint32_t)buf[1] << 8;
            if (sx) v = size == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
            dst[l] = v;
        } else {
            for (unsigned k = 0; k < size / 4; k++) memcpy(&vreg(w, &in->d[0], k)[l], buf + 4 * k, 4);
        }
    }
    return true;
}
