/* The tensor layer's views and symbolic index arithmetic, without a
 * device: random chains of movement ops on a view against an explicit
 * element -> source map, the reshape merge rules, and random index
 * expressions against plain integer evaluation (floor division and modulo)
 * over every value of their variables. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tt.h"

/* ** views vs explicit maps */
typedef struct xmap {
    int nd;
    int64_t shape[TT_MAX_DIMS];
    int64_t *src; /* per element (row-major): source index, -1 padding */
} xmap;

static int64_t numel(const int64_t *s, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

static void unravel(int64_t i, const int64_t *s, int nd, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = i % s[d];
        i /= s[d];
    }
}

static int64_t ravel(const int64_t *idx, const int64_t *s, int nd)
{
    int64_t i = 0;
    for (int d = 0; d < nd; d++) i = i * s[d] + idx[d];
    return i;
}

/* the view's answer for element i: source index or -1 */
static int64_t view_at(const tt_view *v, int64_t i)
{
    int64_t idx[TT_MAX_DIMS], off = v->offset;
    unravel(i, v->shape, v->ndim, idx);
    for (int d = 0; d < v->ndim; d++) {
        if (v->mask && (idx[d] < v->lo[d] || idx[d] >= v->hi[d])) return -1;
        off += idx[d] * v->strides[d];
    }
    return off;
}

static void check(const tt_view *v, const xmap *m, const char *what)
{
    cr_assert_eq(v->ndim, m->nd, "%s: ndim", what);
    for (int d = 0; d < m->nd; d++) cr_assert_eq(v->shape[d], m->shape[d], "%s: dim %d", what, d);
    int64_t n = numel(m->shape, m->nd);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq(view_at(v, i), m->src[i], "%s: element %lld", what, (long long)i);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

Test(tensor_view, random_op_chains_match_explicit_maps)
{
    uint64_t seed = 12345;
    int merged = 0, refused = 0;
    for (int trial = 0; trial < 300; trial++) {
        xmap m = {.nd = 3, .shape = {2 + rnd(&seed) % 3, 1 + rnd(&seed) % 3, 2 + rnd(&seed) % 4}};
        int64_t n = numel(m.shape, m.nd);
        m.src = malloc(n * sizeof *m.src);
        for (int64_t i = 0; i < n; i++) m.src[i] = i;
        tt_view v;
        tt_view_init(&v, m.shape, m.nd);
        for (int step = 0; step < 6; step++) {
            tt_view r;
            xmap q = {.nd = m.nd};
            memcpy(q.shape, m.shape, sizeof q.shape);
            int64_t idx[TT_MAX_DIMS] = {0}, j[TT_MAX_DIMS] = {0};
            int op = (int)(rnd(&seed) % 6), a = (int)(rnd(&seed) % (unsigned)m.nd);
            if (op == 0) { /* pad dim a */
                int64_t b[TT_MAX_DIMS] = {0}, e[TT_MAX_DIMS] = {0};
                b[a] = rnd(&seed) % 3;
                e[a] = rnd(&seed) % 3;
                tt_view_pad(&v, b, e, &r);
                q.shape[a] += b[a] + e[a];
                q.src = malloc(numel(q.shape, q.nd) * sizeof *q.src);
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) {
                    unravel(i, q.shape, q.nd, idx);
                    memcpy(j, idx, sizeof j);
                    j[a] -= b[a];
                    q.src[i] = j[a] < 0 || j[a] >= m.shape[a] ? -1 : m.src[ravel(j, m.shape, m.nd)];
                }
            } else if (op == 1) { /* shrink dim a */
                int64_t b[TT_MAX_DIMS] = {0}, e[TT_MAX_DIMS];
                memcpy(e, m.shape, sizeof e);
                b[a] = rnd(&seed) % (m.shape[a] + 1);
                e[a] = b[a] + rnd(&seed) % (m.shape[a] - b[a] + 1);
                if (e[a] == b[a]) e[a] = b[a] < m.shape[a] ? b[a] + 1 : b[a];
                if (e[a] == b[a]) continue;
                tt_view_shrink(&v, b, e, &r);
                q.shape[a] = e[a] - b[a];
                q.src = malloc(numel(q.shape, q.nd) * sizeof *q.src);
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) {
                    unravel(i, q.shape, q.nd, idx);
                    idx[a] += b[a];
                    q.src[i] = m.src[ravel(idx, m.shape, m.nd)];
                }
            } else if (op == 2) { /* flip dim a */
                tt_view_flip(&v, 1u << a, &r);
                q.src = malloc(n * sizeof *q.src);
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) {
                    unravel(i, q.shape, q.nd, idx);
                    idx[a] = m.shape[a] - 1 - idx[a];
                    q.src[i] = m.src[ravel(idx, m.shape, m.nd)];
                }
            } else if (op == 3) { /* step dim a by 2 */
                int64_t st[TT_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
                st[a] = 2;
                tt_view_step(&v, st, &r);
                q.shape[a] = (m.shape[a] + 1) / 2;
                q.src = malloc(numel(q.shape, q.nd) * sizeof *q.src);
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) {
                    unravel(i, q.shape, q.nd, idx);
                    idx[a] *= 2;
                    q.src[i] = m.src[ravel(idx, m.shape, m.nd)];
                }
            } else if (op == 4) { /* permute: rotate */
                int perm[TT_MAX_DIMS];
                for (int d = 0; d < m.nd; d++) perm[d] = (d + 1) % m.nd;
                tt_view_permute(&v, perm, &r);
                for (int d = 0; d < m.nd; d++) q.shape[d] = m.shape[perm[d]];
                q.src = malloc(numel(q.shape, q.nd) * sizeof *q.src);
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) {
                    unravel(i, q.shape, q.nd, idx);
                    for (int d = 0; d < m.nd; d++) j[perm[d]] = idx[d];
                    q.src[i] = m.src[ravel(j, m.shape, m.nd)];
                }
            } else { /* reshape: merge the last two dims (may be refused) */
                if (m.nd < 2) continue;
                q.nd = m.nd - 1;
                q.shape[q.nd - 1] = m.shape[m.nd - 2] * m.shape[m.nd - 1];
                if (!tt_view_reshape(&v, q.shape, q.nd, &r)) {
                    refused++;
                    continue;
                }
                merged++;
                q.src = malloc(n * sizeof *q.src);
                memcpy(q.src, m.src, n * sizeof *q.src); /* row-major order is unchanged */
            }
            if (tt_view_all_masked(&r)) { /* becomes a constant in ops_move.c */
                for (int64_t i = 0; i < numel(q.shape, q.nd); i++) cr_assert_eq(q.src[i], -1);
                free(q.src);
                break;
            }
            free(m.src);
            m = q;
            n = numel(m.shape, m.nd);
            v = r;
            check(&v, &m, "after an op");
        }
        free(m.src);
    }
    cr_assert_gt(merged, 10);
    cr_assert_gt(refused, 10);
}

Test(tensor_view, reshape_rules)
{
    tt_view v, r, t;
    tt_view_init(&v, (const int64_t[]){4, 6}, 2);
    cr_assert(tt_view_reshape(&v, (const int64_t[]){2, 2, 3, 2}, 4, &r));
    cr_assert(tt_view_is_identity(&r, (const int64_t[]){2, 2, 3, 2}, 4) || r.offset == 0);
    tt_view_permute(&v, (const int[]){1, 0}, &t); /* [6, 4], strides (1, 6) */
    cr_assert(!tt_view_reshape(&t, (const int64_t[]){24}, 1, &r), "a transpose does not flatten");
    cr_assert(tt_view_reshape(&t, (const int64_t[]){2, 3, 4}, 3, &r), "but splits a dim");
    cr_assert_eq(r.strides[0], 3);
    cr_assert_eq(r.strides[1], 1);
    cr_assert_eq(r.strides[2], 6);
    cr_assert(tt_view_reshape(&t, (const int64_t[]){6, 1, 4}, 3, &r), "adds size-1 dims");
    /* a padded dim keeps its mask through a 1:1 reshape only */
    tt_view_pad(&v, (const int64_t[]){1, 0}, (const int64_t[]){0, 0}, &t); /* [5, 6] masked rows */
    cr_assert(tt_view_reshape(&t, (const int64_t[]){5, 1, 6}, 3, &r));
    cr_assert(r.mask && r.lo[0] == 1 && r.hi[0] == 5);
    cr_assert(!tt_view_reshape(&t, (const int64_t[]){30}, 1, &r), "a masked dim does not merge");
    cr_assert(tt_view_expands(&(tt_view){.ndim = 1, .shape = {3}, .strides = {0}}));
    tt_view_init(&v, (const int64_t[]){3}, 1);
    tt_view_shrink(&v, (const int64_t[]){1}, (const int64_t[]){1}, &r);
    cr_assert(!tt_view_all_masked(&r), "empty, but not masked");
}

/* ** symbolic expressions against direct evaluation */
static int64_t floor_div(int64_t x, int64_t d) { return x / d - (x % d != 0 && (x < 0) != (d < 0)); }
static int64_t fmodp(int64_t x, int64_t m) { return ((x % m) + m) % m; }

static int64_t eval(const tt_sx *x, tt_atom *const *vars, const int64_t *vals, int nv);

static int64_t eval_atom(const tt_atom *at, tt_atom *const *vars, const int64_t *vals, int nv)
{
    int64_t v = 0;
    if (at->by) { /* a product with a variable (tt_sx_mulv) */
        v = eval(at->x, vars, vals, nv) * eval_atom(at->by, vars, vals, nv);
    } else if (at->var) {
        for (int k = 0; k < nv; k++)
            if (vars[k] == at) v = vals[k];
    } else {
        v = floor_div(eval(at->x, vars, vals, nv), at->a);
        if (at->b) v = fmodp(v, at->b);
    }
    return v;
}

static int64_t eval(const tt_sx *x, tt_atom *const *vars, const int64_t *vals, int nv)
{
    int64_t r = x->c;
    for (uint32_t i = 0; i < x->n; i++) r += x->t[i].k * eval_atom(x->t[i].at, vars, vals, nv);
    return r;
}

typedef struct expr {
    const tt_sx *s;
    int kind; /* 0 var, 1 const, 2 add, 3 mul, 4 div, 5 mod, 6 times variable b (tt_sx_mulv) */
    int a, b;
    int64_t c;
} expr;

static int64_t direct(const expr *e, int i, const int64_t *vals)
{
    const expr *x = &e[i];
    switch (x->kind) {
    case 0: return vals[x->a];
    case 1: return x->c;
    case 2: return direct(e, x->a, vals) + direct(e, x->b, vals);
    case 3: return direct(e, x->a, vals) * x->c;
    case 4: return floor_div(direct(e, x->a, vals), x->c);
    case 6: return direct(e, x->a, vals) * vals[x->b];
    default: return fmodp(direct(e, x->a, vals), x->c);
    }
}

Test(tensor_view, symbolic_matches_integer_arithmetic)
{
    uint64_t seed = 777;
    for (int trial = 0; trial < 200; trial++) {
        tt_arena ar = {0};
        tt_sym S;
        tt_sym_init(&S, &ar);
        enum { NV = 3, NE = 24 };
        int64_t lo[NV], hi[NV];
        tt_atom *vars[NV];
        expr e[NE];
        int ne = 0;
        for (int v = 0; v < NV; v++) {
            lo[v] = (int64_t)(rnd(&seed) % 3) - 1; /* some ranges dip below 0 */
            hi[v] = lo[v] + 1 + rnd(&seed) % 6;
            e[ne] = (expr){tt_sx_var(&S, lo[v], hi[v], HCQ_IR_NONE), 0, v, 0, 0};
            vars[v] = e[ne].s->t[0].at;
            ne++;
        }
        while (ne < NE) {
            int k = 1 + (int)(rnd(&seed) % 6), a = (int)(rnd(&seed) % (unsigned)ne), b = (int)(rnd(&seed) % (unsigned)ne);
            int64_t c = 1 + rnd(&seed) % 6;
            expr x = {NULL, k, a, b, c};
            if (k == 1) x.c = (int64_t)(rnd(&seed) % 13) - 6, x.s = tt_sx_const(&S, x.c);
            if (k == 2) x.s = tt_sx_add(&S, e[a].s, e[b].s);
            if (k == 3) x.c = (int64_t)(rnd(&seed) % 9) - 4, x.s = tt_sx_mulc(&S, e[a].s, x.c);
            if (k == 4) x.s = tt_sx_div(&S, e[a].s, c);
            if (k == 5) x.s = tt_sx_mod(&S, e[a].s, c);
            if (k == 6) x.b = b % NV, x.s = tt_sx_mulv(&S, e[a].s, e[x.b].s); /* then divided, added, ... as an atom */
            cr_assert_not_null(x.s);
            e[ne++] = x;
        }
        int64_t vals[NV];
        for (vals[0] = lo[0]; vals[0] <= hi[0]; vals[0]++)
            for (vals[1] = lo[1]; vals[1] <= hi[1]; vals[1]++)
                for (vals[2] = lo[2]; vals[2] <= hi[2]; vals[2]++)
                    for (int i = 0; i < NE; i++) {
                        int64_t want = direct(e, i, vals), got = eval(e[i].s, vars, vals, NV);
                        char buf[256];
                        tt_sx_print(e[i].s, buf, sizeof buf);
                        cr_assert_eq(got, want, "trial %d expr %d (%s) at (%lld, %lld, %lld): %lld, want %lld", trial, i, buf,
                                     (long long)vals[0], (long long)vals[1], (long long)vals[2], (long long)got, (long long)want);
                        cr_assert(want >= e[i].s->lo && want <= e[i].s->hi, "trial %d expr %d: %lld outside its range", trial,
                                  i, (long long)want);
                    }
        free(S.atab);
        free(S.xtab);
        tt_arena_free(&ar);
    }
}

Test(tensor_view, row_major_round_trip_folds_to_the_id)
{
    tt_arena ar = {0};
    tt_sym S;
    tt_sym_init(&S, &ar);
    const int64_t shape[4] = {3, 1, 4, 5};
    const tt_sx *g = tt_sx_var(&S, 0, 59, HCQ_IR_NONE);
    /* decompose the id into dims, then linearize again */
    const tt_sx *idx[4], *lin = tt_sx_const(&S, 0);
    int64_t st = 1;
    for (int d = 3; d >= 0; d--) {
        idx[d] = tt_sx_mod(&S, tt_sx_div(&S, g, st), shape[d]);
        st *= shape[d];
    }
    st = 1;
    for (int d = 3; d >= 0; d--) {
        lin = tt_sx_add(&S, lin, tt_sx_mulc(&S, idx[d], st));
        st *= shape[d];
    }
    cr_assert_eq(lin, g, "x/20*20 + x/5%%4*5 + x%%5 folds back to x");
    /* a window's index decomposes to plain sums: (o*2 + k) in a dim of 9 */
    const tt_sx *o = tt_sx_var(&S, 0, 3, HCQ_IR_NONE), *k = tt_sx_var(&S, 0, 2, HCQ_IR_NONE);
    const tt_sx *row = tt_sx_var(&S, 0, 6, HCQ_IR_NONE);
    const tt_sx *l2 = tt_sx_add(&S, tt_sx_mulc(&S, row, 9), tt_sx_add(&S, tt_sx_mulc(&S, o, 2), k));
    const tt_sx *col = tt_sx_mod(&S, l2, 9), *r2 = tt_sx_div(&S, l2, 9);
    cr_assert_eq(r2, row);
    cr_assert_eq(col, tt_sx_add(&S, tt_sx_mulc(&S, o, 2), k));
    free(S.atab);
    free(S.xtab);
    tt_arena_free(&ar);
}
