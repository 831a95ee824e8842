/* Symbolic index arithmetic: interned linear combinations of atoms with
 * value ranges, and floor division / modulo by constants that simplify
 * whenever the ranges allow. Index expressions built from views (linearize
 * a multi-index, decompose it again for the next view, add offsets) fold
 * back to plain sums this way, so a contiguous kernel indexes with `gid`
 * and no divisions at all. */
#include "tensor/tt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ** arena: a list of chunks, kept across resets so steady-state lowering
 * does not touch the allocator (or fault in fresh pages) */
struct tt_chunk {
    struct tt_chunk *next;
    size_t cap;
    _Alignas(16) unsigned char data[];
};

void *tt_arena_alloc(tt_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    while (!a->cur || a->used + size > a->cur->cap) {
        if (a->cur && a->cur->next) { /* a kept chunk */
            a->cur = a->cur->next;
            a->used = 0;
            continue;
        }
        size_t cap = size > 65536 ? size : 65536;
        struct tt_chunk *c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = NULL;
        c->cap = cap;
        if (a->cur) a->cur->next = c;
        else a->first = c;
        a->cur = c;
        a->used = 0;
    }
    void *p = a->cur->data + a->used;
    a->used += size;
    memset(p, 0, size);
    return p;
}

void tt_arena_reset(tt_arena *a)
{
    a->cur = a->first;
    a->used = 0;
}

void tt_arena_free(tt_arena *a)
{
    for (struct tt_chunk *c = a->first, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    memset(a, 0, sizeof *a);
}

/* ** exact helpers */
#define SAT (INT64_MAX / 4)
static int64_t sat(int64_t v) { return v > SAT ? SAT : v < -SAT ? -SAT : v; }
static int64_t smul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? -SAT : SAT) : sat(r);
}
static int64_t sadd(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (a < 0 ? -SAT : SAT) : sat(r);
}
static int64_t fdiv(int64_t x, int64_t d)
{
    int64_t q = x / d;
    return (x % d != 0 && ((x < 0) != (d < 0))) ? q - 1 : q;
}
static int64_t fmodp(int64_t x, int64_t m)
{
    int64_t r = x % m;
    return r < 0 ? r + m : r;
}
static int64_t gcd(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void tt_sym_init(tt_sym *s, tt_arena *ar)
{
    memset(s, 0, sizeof *s);
    s->ar = ar;
}

void tt_sym_reset(tt_sym *s)
{
    if (s->atab) memset(s->atab, 0, s->acap * sizeof *s->atab);
    if (s->xtab) memset(s->xtab, 0, s->xcap * sizeof *s->xtab);
    s->acount = s->xcount = 0;
    s->next_id = 0;
    s->oom = false;
}

void tt_sym_free(tt_sym *s)
{
    free(s->atab);
    free(s->xtab);
    tt_sym_init(s, s->ar);
}

static uint32_t hmix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return (uint32_t)(h ^ (h >> 32));
}

static bool grow_tab(tt_sym *s, void ***tab, uint32_t *cap, uint32_t count, size_t next_off, bool atoms)
{
    if (count * 2 < *cap) return true;
    uint32_t ncap = *cap ? *cap * 2 : 256;
    void **n = calloc(ncap, sizeof *n);
    if (!n) return (s->oom = true, false);
    for (uint32_t i = 0; i < *cap; i++) {
        for (void *e = (*tab)[i], *next; e; e = next) {
            next = *(void **)((char *)e + next_off);
            uint32_t h = atoms ? hmix(hmix((uintptr_t)((tt_atom *)e)->x, (uint64_t)((tt_atom *)e)->a),
                                      (uint64_t)((tt_atom *)e)->b)
                               : ((tt_sx *)e)->hash;
            *(void **)((char *)e + next_off) = n[h & (ncap - 1)];
            n[h & (ncap - 1)] = e;
        }
    }
    free(*tab);
    *tab = n;
    *cap = ncap;
    return true;
}

/* ** building expressions */
#define MAXT 48

static int term_cmp(const tt_term *a, const tt_term *b) { return a->at->id < b->at->id ? -1 : a->at->id > b->at->id; }

static tt_sx *intern(tt_sym *s, int64_t c, const tt_term *t, uint32_t n)
{
    uint32_t h = hmix(0x51ed27, (uint64_t)c);
    for (uint32_t i = 0; i < n; i++) h = hmix(hmix(h, (uint64_t)t[i].k), t[i].at->id);
    h = hmix(h, n);
    if (s->xcap) {
        for (tt_sx *e = s->xtab[h & (s->xcap - 1)]; e; e = e->hnext) {
            if (e->hash != h || e->c != c || e->n != n) continue;
            uint32_t i = 0;
            while (i < n && e->t[i].k == t[i].k && e->t[i].at == t[i].at) i++;
            if (i == n) return e;
        }
    }
    if (!grow_tab(s, (void ***)&s->xtab, &s->xcap, s->xcount, offsetof(tt_sx, hnext), false)) return NULL;
    tt_sx *x = tt_arena_alloc(s->ar, sizeof *x + n * sizeof(tt_term));
    if (!x) return (s->oom = true, NULL);
    x->c = c;
    x->n = n;
    x->hash = h;
    x->lo = x->hi = c;
    for (uint32_t i = 0; i < n; i++) {
        x->t[i] = t[i];
        int64_t a = smul(t[i].k, t[i].at->lo), b = smul(t[i].k, t[i].at->hi);
        x->lo = sadd(x->lo, a < b ? a : b);
        x->hi = sadd(x->hi, a < b ? b : a);
    }
    x->hnext = s->xtab[h & (s->xcap - 1)];
    s->xtab[h & (s->xcap - 1)] = x;
    s->xcount++;
    return x;
}

static tt_sx *dm(tt_sym *s, const tt_sx *x, int64_t a, int64_t b);

/* c + sum(t): sorts, merges equal atoms, drops zeros, recombines digit
 * pairs  k*(q mod b) + k*b*(q/b mod b2)  into  k*(q mod b*b2). */
static tt_sx *build(tt_sym *s, int64_t c, tt_term *t, uint32_t n)
{
    for (;;) {
        for (uint32_t i = 1; i < n; i++) /* insertion sort: n is small */
            for (uint32_t j = i; j > 0 && term_cmp(&t[j], &t[j - 1]) < 0; j--) {
                tt_term tmp = t[j];
                t[j] = t[j - 1];
                t[j - 1] = tmp;
            }
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (m && t[m - 1].at == t[i].at)
                t[m - 1].k = sadd(t[m - 1].k, t[i].k);
            else
                t[m++] = t[i];
            if (t[m - 1].k == 0) m--;
        }
        n = m;
        bool again = false;
        for (uint32_t i = 0; i < n && !again; i++) {
            const tt_atom *A = t[i].at;
            if (A->var || A->b == 0) continue;
            for (uint32_t j = 0; j < n; j++) {
                const tt_atom *B = t[j].at;
                if (j == i || B->var || B->x != A->x || B->a != smul(A->a, A->b) || t[j].k != smul(t[i].k, A->b))
                    continue;
                tt_sx *y = dm(s, A->x, A->a, B->b ? smul(A->b, B->b) : 0);
                if (!y) return NULL;
                int64_t k = t[i].k;
                uint32_t hi = i > j ? i : j, lo = i > j ? j : i;
                t[hi] = t[--n]; /* remove both */
                t[lo] = t[--n];
                if (n + y->n > MAXT) return (s->oom = true, NULL);
                for (uint32_t q = 0; q < y->n; q++) t[n++] = (tt_term){smul(k, y->t[q].k), y->t[q].at};
                c = sadd(c, smul(k, y->c));
                again = true;
                break;
            }
        }
        if (!again) return intern(s, c, t, n);
    }
}

tt_sx *tt_sx_const(tt_sym *s, int64_t c) { return intern(s, c, NULL, 0); }

tt_sx *tt_sx_var(tt_sym *s, int64_t lo, int64_t hi, hcq_ir_ref ir)
{
    tt_atom *at = tt_arena_alloc(s->ar, sizeof *at);
    if (!at) return (s->oom = true, NULL);
    at->id = s->next_id++;
    at->var = true;
    at->lo = lo;
    at->hi = hi;
    at->ir = ir;
    tt_term t = {1, at};
    return intern(s, 0, &t, 1);
}

static tt_atom *atom(tt_sym *s, const tt_sx *x, int64_t a, int64_t b)
{
    uint32_t h = hmix(hmix((uintptr_t)x, (uint64_t)a), (uint64_t)b);
    if (s->acap)
        for (tt_atom *e = s->atab[h & (s->acap - 1)]; e; e = e->hnext)
            if (e->x == x && e->a == a && e->b == b && !e->by) return e;
    if (!grow_tab(s, (void ***)&s->atab, &s->acap, s->acount, offsetof(tt_atom, hnext), true)) return NULL;
    tt_atom *at = tt_arena_alloc(s->ar, sizeof *at);
    if (!at) return (s->oom = true, NULL);
    at->id = s->next_id++;
    at->x = x;
    at->a = a;
    at->b = b;
    at->ir = HCQ_IR_NONE;
    int64_t qlo = fdiv(x->lo, a), qhi = fdiv(x->hi, a);
    if (b && (qhi - qlo >= b || fmodp(qlo, b) > fmodp(qhi, b))) {
        qlo = 0;
        qhi = b - 1;
    } else if (b) {
        qlo = fmodp(qlo, b);
        qhi = fmodp(qhi, b);
    }
    at->lo = qlo;
    at->hi = qhi;
    at->hnext = s->atab[h & (s->acap - 1)];
    s->atab[h & (s->acap - 1)] = at;
    s->acount++;
    return at;
}

/* the atom at * v (v a variable atom): interned with the division atoms,
 * told apart by `by`; var, so no simplification looks inside it */
static tt_atom *prod_atom(tt_sym *s, tt_atom *at, const tt_atom *v)
{
    tt_term one = {1, at};
    const tt_sx *x = intern(s, 0, &one, 1);
    if (!x) return NULL;
    uint32_t h = hmix(hmix((uintptr_t)x, 1), 0);
    if (s->acap)
        for (tt_atom *e = s->atab[h & (s->acap - 1)]; e; e = e->hnext)
            if (e->x == x && e->by == v) return e;
    if (!grow_tab(s, (void ***)&s->atab, &s->acap, s->acount, offsetof(tt_atom, hnext), true)) return NULL;
    tt_atom *p = tt_arena_alloc(s->ar, sizeof *p);
    if (!p) return (s->oom = true, NULL);
    p->id = s->next_id++;
    p->var = true;
    p->x = x;
    p->a = 1;
    p->by = v;
    p->ir = HCQ_IR_NONE;
    int64_t c[4] = {smul(at->lo, v->lo), smul(at->lo, v->hi), smul(at->hi, v->lo), smul(at->hi, v->hi)};
    p->lo = p->hi = c[0];
    for (int i = 1; i < 4; i++) {
        if (c[i] < p->lo) p->lo = c[i];
        if (c[i] > p->hi) p->hi = c[i];
    }
    p->hnext = s->atab[h & (s->acap - 1)];
    s->atab[h & (s->acap - 1)] = p;
    s->acount++;
    return p;
}

tt_sx *tt_sx_mulv(tt_sym *s, const tt_sx *a, const tt_sx *v)
{
    if (!a || !v) return NULL;
    if (v->n != 1 || v->c != 0 || v->t[0].k != 1 || !v->t[0].at->var) return (s->oom = true, NULL); /* not a variable */
    if (a->n + 1 > MAXT) return (s->oom = true, NULL);
    tt_term t[MAXT];
    uint32_t n = 0;
    if (a->c) t[n++] = (tt_term){a->c, v->t[0].at};
    for (uint32_t i = 0; i < a->n; i++) {
        tt_atom *p = prod_atom(s, a->t[i].at, v->t[0].at);
        if (!p) return NULL;
        t[n++] = (tt_term){a->t[i].k, p};
    }
    return build(s, 0, t, n);
}

static tt_sx *scaled(tt_sym *s, const tt_sx *x, int64_t k, int64_t div, int64_t c_add)
{
    tt_term t[MAXT];
    uint32_t n = 0;
    for (uint32_t i = 0; i < x->n; i++) t[n++] = (tt_term){smul(x->t[i].k, k) / div, x->t[i].at};
    return build(s, sadd(smul(x->c, k) / div, c_add), t, n);
}

static bool single_atom(const tt_sx *x) { return x->n == 1 && x->t[0].k == 1 && x->c == 0 && !x->t[0].at->var; }

/* floor(x / a) mod b, b == 0 meaning no modulo */
static tt_sx *dm(tt_sym *s, const tt_sx *x, int64_t a, int64_t b)
{
    if (!x) return NULL;
    if (a == 1 && b == 0) return (tt_sx *)x;
    if (x->n == 0) {
        int64_t v = fdiv(x->c, a);
        return tt_sx_const(s, b ? fmodp(v, b) : v);
    }
    if (a > 1) {
        int64_t qlo = fdiv(x->lo, a), qhi = fdiv(x->hi, a);
        if (qlo == qhi) return tt_sx_const(s, b ? fmodp(qlo, b) : qlo);
        int64_t g = a;
        for (uint32_t i = 0; i < x->n && g > 1; i++) g = gcd(g, x->t[i].k);
        if (g > 1) g = gcd(g, x->c);
        if (g > 1) /* floor(g*y / (g*a')) = floor(y / a') */
            return dm(s, scaled(s, x, 1, g, 0), a / g, b);
        if (single_atom(x)) { /* nested: floor(floor(y/a1)/a) = floor(y/(a1*a)) */
            const tt_atom *in = x->t[0].at;
            if (in->b == 0) return dm(s, dm(s, in->x, smul(in->a, a), 0), 1, b);
            if (in->b % a == 0) return dm(s, dm(s, in->x, smul(in->a, a), in->b / a), 1, b);
        }
        /* x = Q + R with every coefficient of Q a multiple of a:
         * floor(x / a) = Q / a + floor(R / a), for any sign of R */
        tt_term q[MAXT], r[MAXT];
        uint32_t nq = 0, nr = 0;
        for (uint32_t i = 0; i < x->n; i++) {
            if (x->t[i].k % a == 0)
                q[nq++] = (tt_term){x->t[i].k / a, x->t[i].at};
            else
                r[nr++] = x->t[i];
        }
        if (nq) {
            tt_sx *Q = build(s, fdiv(x->c, a), q, nq), *R = build(s, fmodp(x->c, a), r, nr);
            return dm(s, tt_sx_add(s, Q, dm(s, R, a, 0)), 1, b);
        }
        tt_atom *at = atom(s, x, a, 0);
        if (!at) return NULL;
        tt_term t = {1, at};
        return dm(s, intern(s, 0, &t, 1), 1, b);
    }
    /* a == 1: x mod b */
    int64_t qlo = fdiv(x->lo, b), qhi = fdiv(x->hi, b);
    if (qlo == qhi) return qlo ? tt_sx_addc(s, x, -smul(qlo, b)) : (tt_sx *)x;
    tt_term t[MAXT];
    uint32_t n = 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->t[i].k % b != 0) t[n++] = x->t[i];
    if (n != x->n || x->c != fmodp(x->c, b)) return dm(s, build(s, fmodp(x->c, b), t, n), 1, b);
    int64_t g = b;
    for (uint32_t i = 0; i < x->n && g > 1; i++) g = gcd(g, x->t[i].k);
    if (g > 1) g = gcd(g, x->c);
    if (g > 1) /* (g*y) mod (g*b') = g * (y mod b') */
        return tt_sx_mulc(s, dm(s, scaled(s, x, 1, g, 0), 1, b / g), g);
    if (single_atom(x)) { /* keep atoms in the form floor(y / a) mod b, so digits recombine */
        const tt_atom *in = x->t[0].at;
        if (in->b && in->b % b == 0) return dm(s, in->x, in->a, b);
        if (!in->b) {
            tt_atom *at = atom(s, in->x, in->a, b);
            if (!at) return NULL;
            tt_term one = {1, at};
            return intern(s, 0, &one, 1);
        }
    }
    tt_atom *at = atom(s, x, 1, b);
    if (!at) return NULL;
    tt_term one = {1, at};
    return intern(s, 0, &one, 1);
}

tt_sx *tt_sx_add(tt_sym *s, const tt_sx *a, const tt_sx *b)
{
    if (!a || !b) return NULL;
    if (a->n + b->n > MAXT) return (s->oom = true, NULL);
    tt_term t[MAXT];
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->n; i++) t[n++] = a->t[i];
    for (uint32_t i = 0; i < b->n; i++) t[n++] = b->t[i];
    return build(s, sadd(a->c, b->c), t, n);
}

tt_sx *tt_sx_addc(tt_sym *s, const tt_sx *a, int64_t c)
{
    if (!a) return NULL;
    if (c == 0) return (tt_sx *)a;
    return intern(s, sadd(a->c, c), a->t, a->n); /* terms stay normalized */
}

tt_sx *tt_sx_mulc(tt_sym *s, const tt_sx *a, int64_t k)
{
    if (!a) return NULL;
    if (k == 1) return (tt_sx *)a;
    if (k == 0) return tt_sx_const(s, 0);
    return scaled(s, a, k, 1, 0);
}

tt_sx *tt_sx_div(tt_sym *s, const tt_sx *a, int64_t d) { return dm(s, a, d, 0); }
tt_sx *tt_sx_mod(tt_sym *s, const tt_sx *a, int64_t m) { return dm(s, a, 1, m); }

static bool contains(const tt_sx *x, const tt_atom *v)
{
    for (uint32_t i = 0; i < x->n; i++) {
        const tt_atom *at = x->t[i].at;
        if (at == v || ((!at->var || at->by) && contains(at->x, v)) || (at->by && at->by == v)) return true;
    }
    return false;
}

bool tt_sx_coef(const tt_sx *x, const tt_atom *v, int64_t *k)
{
    *k = 0;
    for (uint32_t i = 0; i < x->n; i++) {
        const tt_atom *at = x->t[i].at;
        if (at == v)
            *k = x->t[i].k;
        else if ((!at->var || at->by) && (contains(at->x, v) || at->by == v))
            return false;
    }
    return true;
}

static void print_rec(const tt_sx *x, char *buf, size_t size, size_t *pos)
{
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (*pos < size) *pos += (size_t)snprintf(buf + *pos, size - *pos, __VA_ARGS__);            \
    } while (0)
    for (uint32_t i = 0; i < x->n; i++) {
        const tt_atom *at = x->t[i].at;
        if (i) OUT(" + ");
        if (at->by) {
            OUT("(");
            print_rec(at->x, buf, size, pos);
            OUT(")*v%u", at->by->id);
        } else if (at->var) {
            OUT("v%u", at->id);
        } else {
            OUT("(");
            print_rec(at->x, buf, size, pos);
            OUT(")");
            if (at->a != 1) OUT("/%lld", (long long)at->a);
            if (at->b) OUT("%%%lld", (long long)at->b);
        }
        if (x->t[i].k != 1) OUT("*%lld", (long long)x->t[i].k);
    }
    if (x->c || !x->n) OUT("%s%lld", x->n ? " + " : "", (long long)x->c);
#undef OUT
}

void tt_sx_print(const tt_sx *x, char *buf, size_t size)
{
    size_t pos = 0;
    if (size) buf[0] = 0;
    if (!x) {
        snprintf(buf, size, "(null)");
        return;
    }
    print_rec(x, buf, size, &pos);
}
