/* Caches, per context:
 *   - kernels by their fused AST: a canonical serialization of the graph a
 *     kernel computes (the number of outputs, then each output's graph:
 *     ops, dtypes, shapes, views, constants; buffers and random seeds by
 *     position, not identity). A repeated graph, such as
 *     one training step after another, finds its program and launch dims
 *     without lowering again;
 *   - programs by their IR (hcq_program_from_kernel goes through the
 *     compiler's on-disk cache; this avoids even loading twice).
 * The key's traversal also fixes the order of the kernel's inputs (its
 * params after the output), so a hit binds the new graph's buffers and
 * seeds in the order the cached kernel expects. */
#include "tensor/tt.h"

#include <stdlib.h>
#include <string.h>

/* ** keys */
typedef struct seen_map {
    const tt_node **keys;
    uint32_t *ids;
    uint32_t cap, n;
} seen_map;

static bool key_put(tt_key *k, uint64_t w)
{
    if (k->n == k->cap) {
        uint32_t nc = k->cap ? k->cap * 2 : 256;
        uint64_t *nw = realloc(k->w, nc * sizeof *nw);
        if (!nw) return false;
        k->w = nw;
        k->cap = nc;
    }
    k->w[k->n++] = w;
    return true;
}

static uint32_t ptr_hash(const void *p) { return (uint32_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 32); }

/* the id of n if seen (else UINT32_MAX, and n gets the next id) */
static uint32_t seen_id(seen_map *m, const tt_node *n, bool *oom)
{
    if ((m->n + 1) * 2 > m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 64;
        const tt_node **nk = calloc(nc, sizeof *nk);
        uint32_t *ni = calloc(nc, sizeof *ni);
        if (!nk || !ni) {
            free(nk);
            free(ni);
            *oom = true;
            return 0;
        }
        for (uint32_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            uint32_t j = ptr_hash(m->keys[i]) & (nc - 1);
            while (nk[j]) j = (j + 1) & (nc - 1);
            nk[j] = m->keys[i];
            ni[j] = m->ids[i];
        }
        free(m->keys);
        free(m->ids);
        m->keys = nk;
        m->ids = ni;
        m->cap = nc;
    }
    uint32_t j = ptr_hash(n) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == n) return m->ids[j];
    m->keys[j] = n;
    m->ids[j] = m->n++;
    return UINT32_MAX;
}

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static bool add_input(tt_key *k, tt_buf *buf, const tt_node *rand, hcq_dtype dt, uint8_t var, uint32_t *slot)
{
    for (uint32_t i = 0; i < k->nin; i++)
        if ((buf && k->in[i].buf == buf) || (var && k->in[i].var == var)) return (*slot = i, true);
    if (k->nin + k->nout == TT_MAX_PARAMS) return false;
    k->in[k->nin] = (tt_input){buf, rand, dt, var};
    *slot = k->nin++;
    return true;
}

/* a shape entry: its size, or for a variable dim (hcq_jit_dim) the
 * variable (the kernel is the same for every value; it takes the value
 * as an argument) */
enum { K_SYM = 1u << 31 };
static bool put_dim(tt_key *k, const tt_node *n, int d, int64_t v)
{
    if (!n->sym[d]) return key_put(k, (uint64_t)v);
    uint32_t slot;
    /* the upper bound too: the plan is made for it, and a slot can hold
     * another variable once its JITs are gone */
    const tt_symvar *sv = n->sym[d] <= k->ctx->nsyms ? &k->ctx->syms[n->sym[d] - 1] : NULL;
    int64_t hi = sv ? sv->hi : 0;
    /* a derived variable (a movement's size of one): its derivation too */
    if (sv && sv->base &&
        !(key_put(k, (uint64_t)sv->base << 1 | sv->exact) && key_put(k, (uint64_t)sv->mul) && key_put(k, (uint64_t)sv->add) &&
          key_put(k, (uint64_t)sv->div)))
        return false;
    return add_input(k, NULL, NULL, HCQ_I32, n->sym[d], &slot) && key_put(k, (uint64_t)K_SYM << 32 | n->sym[d]) &&
           key_put(k, (uint64_t)hi);
}

enum { K_REF = 0xfffffff0u };

static bool walk(tt_key *k, seen_map *m, const tt_node *n, bool *oom, int depth)
{
    if (depth > 4 * 1024) return false; /* the scheduler cuts fused chains at 1024 */
    uint32_t id = seen_id(m, n, oom);
    if (*oom) return false;
    if (id != UINT32_MAX) return key_put(k, (uint64_t)K_REF << 32 | id);
    bool ok = key_put(k, (uint64_t)n->op | (uint64_t)n->dtype << 8 | (uint64_t)n->ndim << 16 | (uint64_t)n->nsrc << 24 |
                             (uint64_t)n->rop << 32 | (uint64_t)n->axes << 40);
    for (int d = 0; d < n->ndim && ok; d++) ok = put_dim(k, n, d, n->shape[d]);
    uint32_t slot;
    switch ((tt_op)n->op) {
    case TT_BUF:
        ok = ok && add_input(k, n->buf, NULL, (hcq_dtype)n->dtype, 0, &slot) && key_put(k, slot);
        if (!ok) return false;
        return true;
    case TT_RAND: return ok && add_input(k, NULL, n, HCQ_U64, 0, &slot) && key_put(k, slot);
    case TT_SYMVAL: return ok && add_input(k, NULL, NULL, HCQ_I32, (uint8_t)n->axes, &slot) && key_put(k, slot);
    case TT_CONST: ok = ok && key_put(k, hcq_dtype_is_float((hcq_dtype)n->dtype) ? bits(n->cv.f) : (uint64_t)n->cv.i); break;
    case TT_VIEW: {
        /* with variable dims, the view as the kernel sees it (at the upper
         * bounds): its strides then do not depend on the values */
        tt_view pv;
        const tt_view *v = &n->view;
        if ((tt_has_sym(n) || tt_has_sym(n->src[0])) && !tt_sym_view_padded(k->ctx, n, &pv)) v = &pv;
        ok = ok && key_put(k, (uint64_t)v->offset) && key_put(k, v->mask) &&
             key_put(k, hcq_dtype_is_float((hcq_dtype)n->dtype) ? bits(n->cv.f) : (uint64_t)n->cv.i);
        for (int d = 0; d < v->ndim && ok; d++)
            ok = key_put(k, (uint64_t)v->strides[d]) && (!v->mask || (key_put(k, (uint64_t)v->lo[d]) && put_dim(k, n, d, v->hi[d])));
        break;
    }
    default: break;
    }
    for (int i = 0; i < n->nsrc && ok; i++) ok = walk(k, m, n->src[i], oom, depth + 1);
    return ok;
}

hcq_status tt_key_make(const hcq_ctx *ctx, tt_node *const *roots, uint32_t nroots, tt_key *k)
{
    k->ctx = ctx;
    k->n = 0;
    k->nin = 0;
    k->nout = nroots;
    seen_map m = {0};
    /* one walk over every output, so what they share is serialized once
     * (and lowered once) and their inputs get one numbering */
    bool oom = false, ok = key_put(k, (uint64_t)nroots);
    for (uint32_t i = 0; i < nroots && ok; i++) ok = walk(k, &m, roots[i], &oom, 0);
    free(m.keys);
    free(m.ids);
    if (!ok)
        return oom ? base_err(HCQ_ENOMEM, "kernel key: out of memory")
                   : base_err(HCQ_ELIMIT, "a kernel writing %u outputs would read more than %u buffers or nest too deep",
                              nroots, TT_MAX_PARAMS - nroots);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < k->n; i++) h = (h ^ k->w[i]) * 0x100000001b3ull, h ^= h >> 29;
    k->hash = h ? h : 1;
    return HCQ_OK;
}

void tt_key_free(tt_key *k)
{
    free(k->w);
    memset(k, 0, sizeof *k);
}

/* ** kernels by key */
static bool kgrow(hcq_ctx *ctx)
{
    uint32_t nc = ctx->kcap ? ctx->kcap * 2 : 64;
    tt_kentry *nk = calloc(nc, sizeof *nk);
    if (!nk) return false;
    for (uint32_t i = 0; i < ctx->kcap; i++) {
        if (!ctx->kern[i].hash) continue;
        uint32_t j = (uint32_t)ctx->kern[i].hash & (nc - 1);
        while (nk[j].hash) j = (j + 1) & (nc - 1);
        nk[j] = ctx->kern[i];
    }
    free(ctx->kern);
    ctx->kern = nk;
    ctx->kcap = nc;
    return true;
}

const tt_kentry *tt_kcache_find(const hcq_ctx *ctx, const tt_key *k)
{
    if (!ctx->kcap) return NULL;
    for (uint32_t j = (uint32_t)k->hash & (ctx->kcap - 1); ctx->kern[j].hash; j = (j + 1) & (ctx->kcap - 1)) {
        const tt_kentry *e = &ctx->kern[j];
        if (e->hash == k->hash && e->n == k->n && !memcmp(e->w, k->w, k->n * sizeof *k->w)) return e;
    }
    return NULL;
}

/* Remembers the lowered kernel for key k (the kernel IR is the program
 * cache's; the entry only points at it). Failure only costs a later miss. */
void tt_kcache_add(hcq_ctx *ctx, const tt_key *k, const tt_kentry *e)
{
    if ((ctx->nkern + 1) * 2 > ctx->kcap && !kgrow(ctx)) return;
    uint64_t *w = malloc(k->n * sizeof *w);
    if (!w) return;
    memcpy(w, k->w, k->n * sizeof *w);
    uint32_t j = (uint32_t)k->hash & (ctx->kcap - 1);
    while (ctx->kern[j].hash) j = (j + 1) & (ctx->kcap - 1);
    ctx->kern[j] = *e;
    ctx->kern[j].hash = k->hash;
    ctx->kern[j].w = w;
    ctx->kern[j].n = k->n;
    ctx->nkern++;
}

/* ** programs by IR */
static uint64_t kernel_hash(const hcq_kernel *k)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)hcq_kernel_ops(k);
    size_t n = hcq_kernel_op_count(k) * sizeof(hcq_ir_op);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    for (const char *s = hcq_kernel_name(k); *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h ? h : 1;
}

static bool same_kernel(const hcq_kernel *a, const hcq_kernel *b)
{
    uint32_t n = hcq_kernel_op_count(a);
    return n == hcq_kernel_op_count(b) && !strcmp(hcq_kernel_name(a), hcq_kernel_name(b)) &&
           !memcmp(hcq_kernel_ops(a), hcq_kernel_ops(b), n * sizeof(hcq_ir_op));
}

static bool pgrow(hcq_ctx *ctx)
{
    uint32_t ncap = ctx->pcap ? ctx->pcap * 2 : 64;
    tt_prog *np = calloc(ncap, sizeof *np);
    if (!np) return false;
    for (uint32_t i = 0; i < ctx->pcap; i++) {
        if (!ctx->progs[i].hash) continue;
        uint32_t j = (uint32_t)ctx->progs[i].hash & (ncap - 1);
        while (np[j].hash) j = (j + 1) & (ncap - 1);
        np[j] = ctx->progs[i];
    }
    free(ctx->progs);
    ctx->progs = np;
    ctx->pcap = ncap;
    return true;
}

hcq_program *tt_get_program(hcq_ctx *ctx, hcq_kernel *k, const hcq_kernel **kept)
{
    uint64_t h = kernel_hash(k);
    *kept = NULL;
    if (ctx->pcap) {
        for (uint32_t j = (uint32_t)h & (ctx->pcap - 1); ctx->progs[j].hash; j = (j + 1) & (ctx->pcap - 1)) {
            tt_prog *e = &ctx->progs[j];
            if (e->hash == h && same_kernel(e->k, k)) {
                hcq_kernel_destroy(k);
                *kept = e->k;
                return e->p;
            }
        }
    }
    hcq_program *p = hcq_program_from_kernel(ctx->dev, k);
    if (!p) {
        hcq_kernel_destroy(k);
        return NULL;
    }
    ctx->stats.programs++;
    if (ctx->on_build) ctx->on_build(ctx->on_build_user, hcq_kernel_name(k), ctx->stats.programs);
    if ((ctx->nprogs + 1) * 2 > ctx->pcap && !pgrow(ctx)) {
        hcq_kernel_destroy(k); /* usable, not cached: the device frees the program when it closes */
        return p;
    }
    uint32_t j = (uint32_t)h & (ctx->pcap - 1);
    while (ctx->progs[j].hash) j = (j + 1) & (ctx->pcap - 1);
    ctx->progs[j] = (tt_prog){h, k, p};
    ctx->nprogs++;
    *kept = k;
    return p;
}

void tt_caches_free(hcq_ctx *ctx)
{
    for (uint32_t i = 0; i < ctx->kcap; i++) free(ctx->kern[i].w);
    free(ctx->kern);
    ctx->kern = NULL;
    ctx->kcap = ctx->nkern = 0;
    for (uint32_t i = 0; i < ctx->pcap; i++) {
        if (!ctx->progs[i].hash) continue;
        hcq_program_free(ctx->progs[i].p);
        hcq_kernel_destroy(ctx->progs[i].k);
    }
    free(ctx->progs);
    ctx->progs = NULL;
    ctx->pcap = ctx->nprogs = 0;
}
