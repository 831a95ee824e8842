/* A kernel's plan as a list of explicit choices (lower.h, tt_opt), and the
 * one function that turns a list into the tt_plan the lowering follows.
 *
 * lower.c's choose() runs the heuristics and records what they decided as
 * the default list (tt_opts_from_plan); tt_lower then applies the list, and
 * checks that the default applies back to the heuristics' own plan, so the
 * default kernels are exactly those the heuristics made. A search (beam.c)
 * applies other lists; every rule a list must obey to give a correct kernel
 * is checked here, so a list from a file or a search is refused with a
 * message rather than lowered wrong. */
#include "tensor/lower.h"

#include <stdio.h>
#include <string.h>

static const char *const opt_names[TT_OPT_KINDS] = {
    [TT_OPT_UPCAST] = "upcast", [TT_OPT_PADTO] = "pad",    [TT_OPT_UNROLL] = "unroll",
    [TT_OPT_LOCAL] = "local",   [TT_OPT_GROUP] = "group",  [TT_OPT_BLOCK] = "block",
    [TT_OPT_VECTOR] = "vector", [TT_OPT_SMEM] = "smem",    [TT_OPT_TC] = "tc",
};

const char *tt_opt_name(tt_opt_kind k) { return (unsigned)k < TT_OPT_KINDS ? opt_names[k] : "?"; }

void tt_opts_format(const tt_opts *o, char *buf, size_t size)
{
    size_t pos = 0;
    if (size) buf[0] = 0;
    if (!o->n) snprintf(buf, size, "(none)");
    for (uint32_t i = 0; i < o->n && i < TT_MAX_OPTS && pos + 1 < size; i++) {
        const tt_opt *p = &o->o[i];
        const char *sp = i ? " " : "";
        int w;
        if (p->kind == TT_OPT_TC && p->slot >= 2)
            w = snprintf(buf + pos, size - pos, "%stc.%s(%lld)", sp, p->slot == 2 ? "wm" : p->slot == 3 ? "kind" : "smem", (long long)p->amt);
        else if (p->kind == TT_OPT_TC)
            w = snprintf(buf + pos, size - pos, "%stc.%s(d%d,%lld)", sp, p->slot ? "n" : "m", p->dim, (long long)p->amt);
        else if (p->kind == TT_OPT_SMEM)
            w = snprintf(buf + pos, size - pos, "%s%s(k%lld,c%d)", sp, tt_opt_name(p->kind), (long long)p->amt, p->slot);
        else if (p->kind == TT_OPT_UPCAST)
            w = snprintf(buf + pos, size - pos, "%s%s%d(d%d,%lld)", sp, tt_opt_name(p->kind), p->slot, p->dim, (long long)p->amt);
        else if (p->kind == TT_OPT_VECTOR)
            w = snprintf(buf + pos, size - pos, "%s%s(d%d,%lld%s)", sp, tt_opt_name(p->kind), p->dim, (long long)p->amt,
                         p->slot == 1 ? ",all" : "");
        else if (p->dim >= 0)
            w = snprintf(buf + pos, size - pos, "%s%s(d%d,%lld)", sp, tt_opt_name(p->kind), p->dim, (long long)p->amt);
        else
            w = snprintf(buf + pos, size - pos, "%s%s(%lld)", sp, tt_opt_name(p->kind), (long long)p->amt);
        if (w < 0) break;
        pos += (size_t)w;
    }
}

static void put(tt_opts *o, tt_opt_kind k, int slot, int dim, int64_t amt)
{
    if (o->n < TT_MAX_OPTS) o->o[o->n++] = (tt_opt){(uint8_t)k, (int8_t)slot, (int8_t)dim, amt};
}

void tt_opts_from_plan(const tt_plan *P, tt_opts *out)
{
    memset(out, 0, sizeof *out);
    for (int u = 0; u < 2; u++) {
        if (P->up_dim[u] < 0) continue;
        put(out, TT_OPT_UPCAST, u, P->up_dim[u], P->up[u]);
        if (u == 0 && P->ragged) put(out, TT_OPT_PADTO, -1, P->up_dim[0], P->up[0]);
    }
    if (P->vec > 1) put(out, TT_OPT_VECTOR, P->vec_all ? 1 : -1, P->up_dim[1], P->vec);
    if (P->red_up > 1) put(out, TT_OPT_UNROLL, -1, -1, P->red_up);
    if (P->group)
        put(out, TT_OPT_GROUP, -1, -1, P->L);
    else
        put(out, TT_OPT_LOCAL, -1, -1, P->L);
    if (P->smem_bk) put(out, TT_OPT_SMEM, (int)P->smem_gv, -1, P->smem_bk);
    if (P->cblock > 0) put(out, TT_OPT_BLOCK, -1, -1, P->cblock);
    if (P->tc.kind) {
        put(out, TT_OPT_TC, 0, P->tc.dm, P->tc.bm);
        put(out, TT_OPT_TC, 1, P->tc.dn, P->tc.bn);
        put(out, TT_OPT_TC, 2, -1, P->tc.wm);
        if (P->tc.ki) put(out, TT_OPT_TC, 3, -1, P->tc.ki);
        if (P->tc.sk) put(out, TT_OPT_TC, 4, -1, P->tc.sk);
    }
}

bool tt_plan_same(const tt_plan *a, const tt_plan *b)
{
    return a->up_dim[0] == b->up_dim[0] && a->up_dim[1] == b->up_dim[1] && a->up[0] == b->up[0] && a->up[1] == b->up[1] &&
           a->ragged == b->ragged && a->main == b->main && a->red_up == b->red_up && a->group == b->group && a->L == b->L &&
           a->items == b->items && a->cblock == b->cblock && a->smem_bk == b->smem_bk && a->smem_gv == b->smem_gv &&
           a->vec == b->vec && a->vec_all == b->vec_all && a->tc.kind == b->tc.kind && a->tc.dm == b->tc.dm &&
           a->tc.dn == b->tc.dn && a->tc.bm == b->tc.bm && a->tc.bn == b->tc.bn && a->tc.wm == b->tc.wm && a->tc.ki == b->tc.ki &&
           a->tc.sk == b->tc.sk;
}

#define REFUSE(st, ...) return base_err((st), "kernel plan: " __VA_ARGS__)

/* The factor of the main product staged as the tile's rows (A: independent
 * of the column dim) is 0 or 1; -1 when neither arrangement fits. */
int tt_smem_rows_factor(const tt_space *sp, int dr, int dv)
{
    if (!(sp->dep[0] & (1u << dv)) && !(sp->dep[1] & (1u << dr))) return 0;
    if (!(sp->dep[1] & (1u << dv)) && !(sp->dep[0] & (1u << dr))) return 1;
    return -1;
}

uint64_t tt_smem_bytes(const tt_space *sp, int a, uint64_t bm, uint64_t bn, uint64_t bk)
{
    return bk * ((bm + TT_SMEM_PAD) * sp->op_bytes[a] + (bn + TT_SMEM_PAD) * sp->op_bytes[1 - a]);
}

/* smem's rules, on the plan the other choices made (T: its tiles per
 * dim). A work-group is Gr x Gv register tiles (Gr = local / Gv), a block
 * of BM = Gr*ur rows by BN = Gv*uv columns; per slice of BK reduced
 * elements it copies the BM x BK values of the factor that does not move
 * with the columns and the BK x BN of the one that does not move with the
 * rows to local memory, waits, and each work-item runs its tile from
 * there. Blocks past the edges are clamped (rows and columns past the
 * edge read the last one and are not stored), a slice past the end of the
 * reduction is zero (0 * 0 adds nothing), so no shape is refused for
 * raggedness; the tiles' own upcasts divide as without smem. */
static hcq_status smem_rules(const tt_space *sp, tt_plan *P, const int64_t *T, int64_t local)
{
    int dr = P->up_dim[0], dv = P->up_dim[1];
    if (dr < 0 || dv < 0) REFUSE(HCQ_EINVAL, "smem: only a register tile (both upcasts) is staged");
    if (P->group || P->red_up > 1 || P->cblock)
        REFUSE(HCQ_EINVAL, "smem: takes no group, unroll or block (the group is the tile block)");
    for (int d = 0; d < sp->ndim; d++)
        if (sp->sym[d]) REFUSE(HCQ_EINVAL, "smem: the output has a variable dim (%d): the blocks are fixed at lowering", d);
    int a = tt_smem_rows_factor(sp, dr, dv);
    if (a < 0)
        REFUSE(HCQ_EINVAL, "smem: neither factor of the product is independent of dim %d (the tile's rows) while the other is of dim %d", dr, dv);
    if (!local || local % P->smem_gv)
        REFUSE(HCQ_EINVAL, "smem(k%lld,c%u): local (%lld) must be a multiple of the %u column tiles", (long long)P->smem_bk, P->smem_gv,
               (long long)local, P->smem_gv);
    uint64_t gv = P->smem_gv, gr = (uint64_t)local / gv, bm = gr * (uint64_t)P->up[0], bn = gv * (uint64_t)P->up[1];
    uint64_t bk = (uint64_t)P->smem_bk;
    uint64_t bytes = tt_smem_bytes(sp, a, bm, bn, bk);
    if (bytes > sp->max_local_bytes)
        REFUSE(HCQ_EINVAL, "smem(k%llu,c%llu) with local(%lld): %llu bytes of local memory, the device has %u", (unsigned long long)bk,
               (unsigned long long)gv, (long long)local, (unsigned long long)bytes, sp->max_local_bytes);
    /* each work-item copies its share of a slice in straight-line code */
    uint64_t per = (bm * bk + (uint64_t)local - 1) / (uint64_t)local + (bn * bk + (uint64_t)local - 1) / (uint64_t)local;
    if (per > 64)
        REFUSE(HCQ_EINVAL, "smem(k%llu,c%llu) with local(%lld): %llu copies per work-item per slice, at most 64", (unsigned long long)bk,
               (unsigned long long)gv, (long long)local, (unsigned long long)per);
    uint64_t groups = ((uint64_t)T[dr] + gr - 1) / gr * (((uint64_t)T[dv] + gv - 1) / gv);
    for (int d = 0; d < sp->ndim; d++)
        if (d != dr && d != dv) groups *= (uint64_t)T[d];
    P->L = (uint32_t)local;
    P->items = groups * (uint64_t)local; /* every work-item of a block runs (clamped) */
    return HCQ_OK;
}

hcq_status tt_plan_apply(const tt_space *sp, const tt_opts *o, tt_plan *out)
{
    tt_plan P;
    memset(&P, 0, sizeof P);
    P.up_dim[0] = P.up_dim[1] = -1;
    P.up[0] = P.up[1] = 1;
    P.red_up = 1;
    P.main = sp->main;
    bool pad = false;
    int64_t local = 0;
    int vdim = -1;
    unsigned tcs = 0; /* the tc slots given */
    if (o->n > TT_MAX_OPTS) REFUSE(HCQ_EINVAL, "%u choices, at most %d", o->n, TT_MAX_OPTS);
    for (uint32_t i = 0; i < o->n; i++) {
        const tt_opt *c = &o->o[i];
        const char *nm = tt_opt_name((tt_opt_kind)c->kind);
        int d = c->dim;
        switch ((tt_opt_kind)c->kind) {
        case TT_OPT_UPCAST: {
            int u = c->slot;
            if (u != 0 && u != 1) REFUSE(HCQ_EINVAL, "upcast slot %d: 0 (rows) or 1 (the contiguous dim)", u);
            if (d < 0 || d >= sp->ndim) REFUSE(HCQ_EINVAL, "upcast%d of dim %d: the output has %d dims", u, d, sp->ndim);
            if (sp->sym[d]) REFUSE(HCQ_EINVAL, "upcast%d of dim %d: a variable dim (its size is known at launch only)", u, d);
            int64_t max = u == 0 ? 8 : 256;
            if (c->amt < 2 || c->amt > max) REFUSE(HCQ_EINVAL, "upcast%d(d%d,%lld): 2 to %lld", u, d, (long long)c->amt, (long long)max);
            if (P.up_dim[u] >= 0) REFUSE(HCQ_EINVAL, "upcast%d given twice", u);
            if (P.up_dim[1 - u] == d) REFUSE(HCQ_EINVAL, "dim %d upcast in both slots", d);
            P.up_dim[u] = d;
            P.up[u] = c->amt;
            break;
        }
        case TT_OPT_PADTO:
            if (P.up_dim[0] != d || P.up[0] != c->amt)
                REFUSE(HCQ_EINVAL, "pad(d%d,%lld): only slot 0's upcast dim pads, to its amount, after it", d, (long long)c->amt);
            if (sp->shape[d] % c->amt == 0) REFUSE(HCQ_EINVAL, "pad(d%d,%lld): %lld is a multiple already", d, (long long)c->amt, (long long)sp->shape[d]);
            pad = true;
            break;
        case TT_OPT_UNROLL:
            if (!sp->main || sp->main_sym) REFUSE(HCQ_EINVAL, "unroll(%lld): no main reduction of a fixed size", (long long)c->amt);
            /* at most 16: emit.c's em_reduce keeps 16 index slots per reduced axis */
            if (c->amt < 2 || c->amt > 16 || sp->rin % c->amt)
                REFUSE(HCQ_EINVAL, "unroll(%lld): 2 to 16 dividing the innermost reduced axis (%lld)", (long long)c->amt, (long long)sp->rin);
            P.red_up = c->amt;
            break;
        case TT_OPT_LOCAL:
            if (c->amt < 1 || c->amt > sp->maxl) REFUSE(HCQ_EINVAL, "local(%lld): 1 to %u work-items", (long long)c->amt, sp->maxl);
            local = c->amt;
            break;
        case TT_OPT_GROUP:
            if (!sp->main || sp->main_sym) REFUSE(HCQ_EINVAL, "group(%lld): no main reduction of a fixed size", (long long)c->amt);
            if (c->amt < 2 || c->amt > sp->maxl || (c->amt & (c->amt - 1)))
                REFUSE(HCQ_EINVAL, "group(%lld): a power of 2 from 2 to %u", (long long)c->amt, sp->maxl);
            if ((uint64_t)c->amt * sp->acc_bytes > sp->max_local_bytes)
                REFUSE(HCQ_EINVAL, "group(%lld): %llu bytes of local memory, the device has %u", (long long)c->amt,
                       (unsigned long long)c->amt * sp->acc_bytes, sp->max_local_bytes);
            P.group = true;
            P.L = (uint32_t)c->amt;
            break;
        case TT_OPT_BLOCK:
            if (c->amt < 1) REFUSE(HCQ_EINVAL, "block(%lld): at least 1", (long long)c->amt);
            P.cblock = c->amt;
            break;
        case TT_OPT_VECTOR:
            /* one access is at most 16 bytes (HCQ_IR_MAX_ACCESS_BYTES); wider
             * inputs than the output split theirs (vec.c) */
            if (c->amt < 2 || c->amt > HCQ_IR_MAX_LANES || (c->amt & (c->amt - 1)))
                REFUSE(HCQ_EINVAL, "%s(d%d,%lld): 2, 4, 8 or 16 lanes", nm, d, (long long)c->amt);
            if ((uint64_t)c->amt * sp->out_bytes > HCQ_IR_MAX_ACCESS_BYTES)
                REFUSE(HCQ_EINVAL, "%s(d%d,%lld): %lld lanes of the output's %u-byte elements are %llu bytes; an access is at most %d", nm, d,
                       (long long)c->amt, (long long)c->amt, sp->out_bytes, (unsigned long long)c->amt * sp->out_bytes,
                       HCQ_IR_MAX_ACCESS_BYTES);
            if (c->slot != -1 && c->slot != 1)
                REFUSE(HCQ_EINVAL, "%s(d%d,%lld): slot %d: -1 (where aligned) or 1 (all)", nm, d, (long long)c->amt, c->slot);
            if (P.vec) REFUSE(HCQ_EINVAL, "%s given twice", nm);
            P.vec = c->amt;
            P.vec_all = c->slot == 1;
            vdim = d;
            break;
        case TT_OPT_SMEM:
            if (sp->smem_why) REFUSE(HCQ_EINVAL, "%s: %s", nm, sp->smem_why);
            if (c->amt < 1 || c->amt > 64 || (uint64_t)c->amt > sp->rsize)
                REFUSE(HCQ_EINVAL, "%s(k%lld,c%d): a slice of 1 to 64 reduced elements, at most the reduction's %llu", nm,
                       (long long)c->amt, c->slot, (unsigned long long)sp->rsize);
            if (c->slot < 1) REFUSE(HCQ_EINVAL, "%s(k%lld,c%d): at least one column tile per group", nm, (long long)c->amt, c->slot);
            if (P.smem_bk) REFUSE(HCQ_EINVAL, "%s given twice", nm);
            P.smem_bk = c->amt;
            P.smem_gv = (uint32_t)c->slot;
            break;
        case TT_OPT_TC: /* tc.m(dm, bm), tc.n(dn, bn), tc.wm(wm), tc.kind(ki): tc.c's tt_tc_rules check them together */
            if (c->slot < 0 || c->slot > 4 || tcs & (1u << c->slot))
                REFUSE(HCQ_EINVAL, "%s slot %d: slots 0 (tc.m), 1 (tc.n), 2 (tc.wm), 3 (tc.kind) and 4 (tc.smem), each once", nm, c->slot);
            tcs |= 1u << c->slot;
            if (c->slot == 0) P.tc.dm = d, P.tc.bm = c->amt;
            else if (c->slot == 1) P.tc.dn = d, P.tc.bn = c->amt;
            else if (c->slot == 2) P.tc.wm = c->amt;
            else if (c->slot == 3) P.tc.ki = c->amt;
            else P.tc.sk = c->amt;
            break;
        default: REFUSE(HCQ_EINVAL, "choice %u: unknown kind %u", i, c->kind);
        }
    }
    if (tcs) { /* tensor cores: a plan of their own */
        if ((tcs & 7) != 7) REFUSE(HCQ_EINVAL, "tc: needs tc.m, tc.n and tc.wm together");
        if (pad || P.up_dim[0] >= 0 || P.up_dim[1] >= 0 || P.red_up > 1 || P.group || P.cblock || P.smem_bk || P.vec)
            REFUSE(HCQ_EINVAL, "tc: takes only local (no upcast, pad, unroll, group, block, smem or vector)");
        hcq_status st = tt_tc_rules(sp, &P, local);
        if (st) return st;
        *out = P;
        return HCQ_OK;
    }
    for (int u = 0; u < 2; u++) {
        int d = P.up_dim[u];
        if (d < 0 || sp->shape[d] % P.up[u] == 0) continue;
        if (u == 1 || !pad)
            REFUSE(HCQ_EINVAL, "upcast%d(d%d,%lld) does not divide %lld%s", u, d, (long long)P.up[u], (long long)sp->shape[d],
                   u == 0 ? " (and no pad)" : "");
        P.ragged = true;
    }
    /* vector lanes are consecutive outputs of one work-item along the
     * contiguous dim, so whole vectors fit its upcast */
    if (P.vec && P.up_dim[1] < 0)
        REFUSE(HCQ_EINVAL, "vector(d%d,%lld): a vector is slot 1's upcast outputs, and there is no upcast1", vdim, (long long)P.vec);
    if (P.vec && vdim != P.up_dim[1])
        REFUSE(HCQ_EINVAL, "vector(d%d,%lld): a vector is slot 1's upcast outputs, along d%d", vdim, (long long)P.vec, P.up_dim[1]);
    if (P.vec && P.up[1] % P.vec)
        REFUSE(HCQ_EINVAL, "vector(d%d,%lld) does not divide upcast1's %lld outputs", vdim, (long long)P.vec, (long long)P.up[1]);
    if (P.up[0] * P.up[1] > 512) REFUSE(HCQ_EINVAL, "a tile of %lld outputs per work-item, at most 512", (long long)(P.up[0] * P.up[1]));
    if (P.group && (P.up_dim[0] >= 0 || P.up_dim[1] >= 0 || P.red_up > 1 || local || P.cblock))
        REFUSE(HCQ_EINVAL, "group: a work-group per output takes no upcast, unroll, local or block");
    uint64_t items = 1;
    int64_t T[TT_MAX_DIMS];
    for (int d = 0; d < sp->ndim; d++) {
        T[d] = sp->shape[d];
        for (int u = 0; u < 2; u++)
            if (P.up_dim[u] == d) T[d] = (T[d] + P.up[u] - 1) / P.up[u];
        items *= (uint64_t)T[d];
    }
    P.items = items;
    if (P.smem_bk) {
        hcq_status st = smem_rules(sp, &P, T, local);
        if (st) return st;
    }
    if (P.cblock) {
        if (P.up_dim[0] < 0 || P.up_dim[1] < 0) REFUSE(HCQ_EINVAL, "block(%lld): only a register tile (both upcasts) walks in blocks", (long long)P.cblock);
        if (T[P.up_dim[1]] % P.cblock)
            REFUSE(HCQ_EINVAL, "block(%lld) does not divide the %lld column tiles", (long long)P.cblock, (long long)T[P.up_dim[1]]);
    }
    if (!P.group && !P.smem_bk) {
        if (local && (uint64_t)local > (items ? items : 1))
            REFUSE(HCQ_EINVAL, "local(%lld): the kernel has %llu work-items", (long long)local, (unsigned long long)items);
        P.L = local ? (uint32_t)local : 1;
    }
    *out = P;
    return HCQ_OK;
}
