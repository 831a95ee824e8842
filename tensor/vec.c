/* Vector loads and stores: the `vector` choice (plan.c) as IR vector
 * accesses (include/hcq/compiler.h, "Vector values").
 *
 * The lowering keeps computing lane by lane; only memory accesses change.
 * A load or store of n lanes (a work-item's upcast outputs, a register
 * tile's rows, an smem copy's share) is scanned for runs of w lanes whose
 * element indexes are i, i+1, .. i+w-1 under one gate: such a run is one
 * w-lane access (one LDG.E.128 / global_load_b128 at 16 bytes), its lanes
 * read back with VGET or put together with VSPLAT and VSET.
 *
 * Alignment. A vector access must start at a multiple of its size (a
 * misaligned one faults on NVIDIA; compiler.h). The buffers a kernel
 * reads and writes are whole allocations: tensor data lives in
 * tt_buf_alloc's hcq_buffer_alloc buffers (realize.c; the tensor layer
 * makes no hcq_buffer_view sub-buffers, which may start anywhere), and
 * those start on a page: drivers/nv/nv_mem.c takes their VA at the page
 * size (nv_va_alloc), drivers/amd/amd_mem.c at 4 KiB or the big page
 * (va_reserve), drivers/cpu/cpu.c from an anonymous mmap. DEFINE_LOCAL
 * arrays start 16-byte aligned (compiler.h). So an access is aligned
 * when its element index is a multiple of w for every work-item. The index
 * is a tt_sx, constant c plus sum k_j x atom_j, each atom an integer: when
 * w divides c and every k_j, it divides the index. That is where a view's
 * element offset (c) and the strides of the other dims (the k_j) show: a
 * slice x[:, 1:] or a row length that is not a multiple of w leaves the
 * run scalar (or, for vector(..,all), refuses the list). A run is never
 * formed across a gate change, so a masked (padded) view's lanes stay
 * scalar too. */
#include "tensor/lower.h"

#include <stdio.h>

unsigned tt_vec_width(const tt_plan *P, hcq_dtype dt)
{
    int64_t w = P->vec;
    size_t sz = hcq_dtype_size(dt);
    if (w < 2 || dt == HCQ_BOOL || !sz) return 0; /* bool lanes do not exist */
    while (w >= 2 && (uint64_t)w * sz > HCQ_IR_MAX_ACCESS_BYTES) w /= 2;
    return w >= 2 ? (unsigned)w : 0;
}

/* idx[l + i] is idx[l] + i for i < w, and one gate covers them */
static bool run_at(const tt_sx *const *idx, const hcq_ir_ref *gate, int l, unsigned w)
{
    const tt_sx *a = idx[l];
    if (!a) return false;
    for (unsigned i = 1; i < w; i++) {
        const tt_sx *x = idx[l + (int)i];
        if (!x || x->n != a->n || x->c != a->c + (int64_t)i || (gate && gate[l + (int)i] != gate[l])) return false;
        for (uint32_t j = 0; j < a->n; j++)
            if (x->t[j].k != a->t[j].k || x->t[j].at != a->t[j].at) return false;
    }
    return true;
}

static bool multiple_of(const tt_sx *x, unsigned w)
{
    if (x->c % (int64_t)w) return false;
    for (uint32_t j = 0; j < x->n; j++)
        if (x->t[j].k % (int64_t)w) return false;
    return true;
}

/* The width of the access at lane l: w where a run starts there and is
 * aligned, else 1; a misaligned run under vec_all is the kernel's error. */
static unsigned access_at(tt_lw *L, const tt_sx *const *idx, const hcq_ir_ref *gate, int n, int l, unsigned w,
                          const char *what, bool store)
{
    if (!w || l + (int)w > n || !run_at(idx, gate, l, w)) return 1;
    if (multiple_of(idx[l], w)) return w;
    if (L->plan.vec_all && !L->err) {
        char at[96];
        tt_sx_print(idx[l], at, sizeof at);
        L->err = base_err(HCQ_EINVAL,
                          "kernel plan: vector(d%d,%lld,all): %s %s %u consecutive elements at a time from element %s, which is not a "
                          "multiple of %u for every work-item (a view at an element offset, or a stride of another dim that is not a "
                          "multiple of it); without ',all' such accesses stay scalar",
                          L->plan.up_dim[1], (long long)L->plan.vec, what, store ? "is written" : "is read", w, at, w);
    }
    return 1;
}

void tt_vec_load(tt_lw *L, hcq_ir_ref buf, int n, const tt_sx *const *idx, const hcq_ir_ref *gate, hcq_ir_ref alt, hcq_ir_ref *out,
                 const char *what)
{
    tt_irb *b = &L->b;
    unsigned w = tt_vec_width(&L->plan, tt_irb_dtype(b, buf));
    for (int l = 0; l < n;) {
        unsigned a = access_at(L, idx, gate, n, l, w, what, false);
        hcq_ir_ref g = gate ? gate[l] : HCQ_IR_NONE;
        if (a == 1) {
            out[l] = tt_irb_load(b, buf, tt_em_sx(L, idx[l]), g, alt);
            l++;
            continue;
        }
        hcq_ir_ref valt = g == HCQ_IR_NONE ? HCQ_IR_NONE : tt_irb_vsplat(b, alt, a);
        hcq_ir_ref v = tt_irb_load_vec(b, buf, tt_em_sx(L, idx[l]), a, g, valt);
        for (unsigned i = 0; i < a; i++) out[l + (int)i] = tt_irb_vget(b, v, i);
        l += (int)a;
    }
}

void tt_vec_store(tt_lw *L, hcq_ir_ref buf, int n, const tt_sx *const *idx, const hcq_ir_ref *val, const hcq_ir_ref *gate,
                  const char *what)
{
    tt_irb *b = &L->b;
    unsigned w = tt_vec_width(&L->plan, tt_irb_dtype(b, buf));
    for (int l = 0; l < n;) {
        unsigned a = access_at(L, idx, gate, n, l, w, what, true);
        hcq_ir_ref g = gate ? gate[l] : HCQ_IR_NONE, v = val[l];
        if (a > 1) {
            v = tt_irb_vsplat(b, val[l], a);
            for (unsigned i = 1; i < a; i++) v = tt_irb_vset(b, v, i, val[l + (int)i]);
        }
        tt_irb_store(b, buf, tt_em_sx(L, idx[l]), v, g);
        l += (int)a;
    }
}
