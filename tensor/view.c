/* Views: how a movement op changes one strided, offset, masked view. Each
 * call either composes the op into the view (the common case: permute,
 * expand, pad, shrink, flip and steps always do; reshape does when the
 * dimensions it merges are laid out contiguously) or reports that it
 * cannot, and the caller stacks a new view on top (ops_move.c). Masks are
 * boxes lo[d] <= i[d] < hi[d]; outside them a view shows its padding. */
#include "tensor/tt.h"

#include <string.h>

void tt_view_init(tt_view *v, const int64_t *shape, int ndim)
{
    memset(v, 0, sizeof *v);
    v->ndim = (uint8_t)ndim;
    int64_t st = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v->shape[d] = shape[d];
        v->strides[d] = shape[d] == 1 ? 0 : st;
        v->hi[d] = shape[d];
        st *= shape[d];
    }
}

static bool full_mask(const tt_view *v)
{
    for (int d = 0; d < v->ndim; d++)
        if (v->lo[d] != 0 || v->hi[d] != v->shape[d]) return false;
    return true;
}

static void drop_full_mask(tt_view *v)
{
    if (v->mask && full_mask(v)) v->mask = false;
    if (!v->mask)
        for (int d = 0; d < v->ndim; d++) {
            v->lo[d] = 0;
            v->hi[d] = v->shape[d];
        }
}

bool tt_view_all_masked(const tt_view *v)
{
    if (!v->mask) return false;
    for (int d = 0; d < v->ndim; d++)
        if (v->lo[d] >= v->hi[d]) return true;
    return false;
}

bool tt_view_expands(const tt_view *v)
{
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] > 1 && v->strides[d] == 0 && (!v->mask || v->hi[d] - v->lo[d] > 1)) return true;
    return false;
}

/* The view is the source itself: same shape, row-major, no offset or mask. */
bool tt_view_is_identity(const tt_view *v, const int64_t *src_shape, int src_ndim)
{
    if (v->mask || v->offset || v->ndim != src_ndim) return false;
    int64_t st = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != src_shape[d]) return false;
        if (v->shape[d] != 1 && v->strides[d] != st) return false;
        st *= v->shape[d];
    }
    return true;
}

static bool row_major(const tt_view *v)
{
    int64_t st = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != st) return false;
        st *= v->shape[d];
    }
    return true;
}

/* Groups old dims and new dims with equal products; each group of old
 * dims must be contiguous among themselves to be re-split. A mask survives
 * where a group maps one dim to one dim of the same size, or where it does
 * not restrict the group. */
bool tt_view_reshape(const tt_view *v, const int64_t *shape, int ndim, tt_view *out)
{
    tt_view r;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    if (numel == 0 || (!v->mask && row_major(v))) {
        tt_view_init(&r, shape, ndim);
        r.offset = numel ? v->offset : 0;
        *out = r;
        return true;
    }
    memset(&r, 0, sizeof r);
    r.ndim = (uint8_t)ndim;
    r.offset = v->offset;
    r.mask = v->mask;
    for (int d = 0; d < ndim; d++) {
        r.shape[d] = shape[d];
        r.hi[d] = shape[d];
    }
    int i = 0, j = 0, on = v->ndim;
    while (i < on || j < ndim) {
        if (j < ndim && shape[j] == 1) { /* new size-1 dims: stride 0, mask [0, 1) */
            j++;
            continue;
        }
        if (i < on && v->shape[i] == 1) { /* old size-1 dims vanish (a mask [0,1) on them is full) */
            i++;
            continue;
        }
        if (i >= on || j >= ndim) return false;
        int i0 = i, j0 = j;
        int64_t po = v->shape[i], pn = shape[j];
        while (po != pn) {
            if (po < pn) {
                if (++i >= on) return false;
                po *= v->shape[i];
            } else {
                if (++j >= ndim) return false;
                pn *= shape[j];
            }
        }
        /* old dims i0..i must merge: stride[x] == stride[y] * shape[y] over non-1 dims */
        int last = -1;
        for (int x = i0; x <= i; x++) {
            if (v->shape[x] == 1) continue;
            if (last >= 0 && v->strides[last] != v->strides[x] * v->shape[x]) return false;
            last = x;
        }
        if (v->mask) {
            bool one_to_one = false;
            int oi = -1, nj = -1;
            for (int x = i0; x <= i; x++)
                if (v->shape[x] != 1) oi = oi < 0 ? x : 99;
            for (int y = j0; y <= j; y++)
                if (shape[y] != 1) nj = nj < 0 ? y : 99;
            if (oi >= 0 && oi != 99 && nj >= 0 && nj != 99) {
                one_to_one = true;
                r.lo[nj] = v->lo[oi];
                r.hi[nj] = v->hi[oi];
            }
            if (!one_to_one)
                for (int x = i0; x <= i; x++)
                    if (v->lo[x] != 0 || v->hi[x] != v->shape[x]) return false;
        }
        int64_t st = last >= 0 ? v->strides[last] : 0;
        for (int y = j; y >= j0; y--) {
            r.strides[y] = shape[y] == 1 ? 0 : st;
            st *= shape[y];
        }
        i++;
        j++;
    }
    drop_full_mask(&r);
    *out = r;
    return true;
}

bool tt_view_is_reshape(const tt_view *v, const int64_t *src_shape, int src_ndim)
{
    int64_t a = 1, b = 1;
    for (int d = 0; d < v->ndim; d++) a *= v->shape[d];
    for (int d = 0; d < src_ndim; d++) b *= src_shape[d];
    return !v->mask && !v->offset && a == b && row_major(v);
}

void tt_view_permute(const tt_view *v, const int *perm, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        r.shape[d] = v->shape[perm[d]];
        r.strides[d] = v->strides[perm[d]];
        r.lo[d] = v->lo[perm[d]];
        r.hi[d] = v->hi[perm[d]];
    }
    *out = r;
}

void tt_view_expand(const tt_view *v, const int64_t *shape, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == shape[d]) continue;
        r.shape[d] = shape[d];
        r.strides[d] = 0;
        r.lo[d] = 0; /* a size-1 dim's mask is [0,1) or empty (all-masked views become consts) */
        r.hi[d] = shape[d];
    }
    *out = r;
}

void tt_view_pad(const tt_view *v, const int64_t *before, const int64_t *after, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        if (!before[d] && !after[d]) continue;
        r.shape[d] = v->shape[d] + before[d] + after[d];
        r.offset -= before[d] * v->strides[d];
        r.lo[d] = v->lo[d] + before[d];
        r.hi[d] = v->hi[d] + before[d];
        r.mask = true;
    }
    drop_full_mask(&r);
    *out = r;
}

void tt_view_shrink(const tt_view *v, const int64_t *begin, const int64_t *end, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        r.shape[d] = end[d] - begin[d];
        r.offset += begin[d] * v->strides[d];
        int64_t lo = v->lo[d] - begin[d], hi = v->hi[d] - begin[d];
        r.lo[d] = lo < 0 ? 0 : lo > r.shape[d] ? r.shape[d] : lo;
        r.hi[d] = hi < 0 ? 0 : hi > r.shape[d] ? r.shape[d] : hi;
    }
    drop_full_mask(&r);
    *out = r;
}

void tt_view_flip(const tt_view *v, uint32_t axes, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        if (!(axes & (1u << d)) || v->shape[d] <= 1) continue;
        r.offset += (v->shape[d] - 1) * v->strides[d];
        r.strides[d] = -v->strides[d];
        r.lo[d] = v->shape[d] - v->hi[d];
        r.hi[d] = v->shape[d] - v->lo[d];
    }
    *out = r;
}

static int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

/* Every steps[d]-th element, from the first: i -> i * step. */
void tt_view_step(const tt_view *v, const int64_t *steps, tt_view *out)
{
    tt_view r = *v;
    for (int d = 0; d < v->ndim; d++) {
        int64_t s = steps[d];
        if (s == 1) continue;
        r.shape[d] = ceil_div(v->shape[d], s);
        r.strides[d] = v->shape[d] == 0 ? 0 : v->strides[d] * s;
        r.lo[d] = ceil_div(v->lo[d], s);
        r.hi[d] = ceil_div(v->hi[d], s);
        if (r.hi[d] > r.shape[d]) r.hi[d] = r.shape[d];
    }
    drop_full_mask(&r);
    *out = r;
}

/* Dim `axis` (size s) becomes (o, k): o = (s - dil*(k-1) - 1) / stride + 1
 * windows of k elements dil apart. Only where the dim has no mask: a mask
 * on it is not a box in (o, k). */
bool tt_view_window(const tt_view *v, int axis, int64_t k, int64_t stride, int64_t dil, tt_view *out)
{
    if (v->ndim >= TT_MAX_DIMS) return false;
    if (v->mask && (v->lo[axis] != 0 || v->hi[axis] != v->shape[axis])) return false;
    int64_t s = v->shape[axis], span = dil * (k - 1) + 1;
    int64_t o = s >= span ? (s - span) / stride + 1 : 0;
    tt_view r;
    memset(&r, 0, sizeof r);
    r.ndim = (uint8_t)(v->ndim + 1);
    r.offset = v->offset;
    r.mask = v->mask;
    for (int d = 0, e = 0; d < v->ndim; d++, e++) {
        if (d == axis) {
            r.shape[e] = o;
            r.strides[e] = v->strides[d] * stride;
            r.hi[e] = o;
            e++;
            r.shape[e] = k;
            r.strides[e] = v->strides[d] * dil;
            r.hi[e] = k;
            continue;
        }
        r.shape[e] = v->shape[d];
        r.strides[e] = v->strides[d];
        r.lo[e] = v->lo[d];
        r.hi[e] = v->hi[d];
    }
    drop_full_mask(&r);
    *out = r;
    return true;
}
