/* The AMD mock's shader core running machine code (mock_amd_isa.h): the
 * dispatch as the hardware takes it from the registers the command
 * processor collected, waves with the initial state of llvm-project
 * llvm/docs/AMDGPUUsage.rst "Initial Kernel Execution State" (user SGPRs
 * from COMPUTE_USER_DATA, then the work-group ids, the work-group info and,
 * without architected flat scratch (gfx90a), the private segment wave
 * offset, as COMPUTE_PGM_RSRC2 enables them; v0 the packed work-item ids
 * as TIDIG_COMP_CNT enables them), work-groups spread over the GPU's worker
 * pool (a split dispatch: this XCC's share), the waves of a work-group run
 * round-robin between barriers, and the control flow (SOPP branches,
 * s_setpc/s_swappc/s_call, s_endpgm). A bad access is the KFD memory
 * exception it is on hardware; an instruction the decoder or executor does
 * not know, an illegal-instruction exception naming it; a wave that runs
 * past the watchdog, a queue reset. */
#include "drivers/mock/mock_amd_isa.h"

#include "base/base.h"
#include "compiler/code_names.h"
#include "compiler/isa.h"
#include "drivers/amd/amd.h"
#include "drivers/pool.h"

#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ================================================================ programs */
static bool is_pacing(amdi_op op)
{
    switch (op) {
    case AMDI_S_NOP: case AMDI_S_WAITCNT: case AMDI_S_CLAUSE: case AMDI_S_DELAY_ALU: case AMDI_S_WAITCNT_DEPCTR:
    case AMDI_S_WAITCNT_VSCNT: case AMDI_S_WAITCNT_VMCNT: case AMDI_S_WAITCNT_EXPCNT: case AMDI_S_WAITCNT_LGKMCNT:
        return true;
    default: return false;
    }
}
typedef struct rec {
    uint64_t va;
    uint8_t half; /* VOPD: 0 X, 1 Y */
    uint8_t bad;
    amdi_inst in;
} rec;

typedef struct builder {
    rec *r;
    size_t n, cap;
    uint64_t *work;
    size_t nwork, capwork;
    uint64_t wlo, whi; /* the window explored: [wlo, whi) */
    uint8_t *seen;     /* bit per dword of the window */
} builder;

static bool push_rec(builder *b, const rec *r)
{
    if (b->n == b->cap) {
        size_t c = b->cap ? 2 * b->cap : 256;
        rec *nr = realloc(b->r, c * sizeof *nr);
        if (!nr) return false;
        b->r = nr;
        b->cap = c;
    }
    b->r[b->n++] = *r;
    return true;
}

static bool push_work(builder *b, uint64_t va)
{
    if (va < b->wlo || va >= b->whi || (va & 3)) return true; /* outside: reaching it is an exception then */
    if (b->nwork == b->capwork) {
        size_t c = b->capwork ? 2 * b->capwork : 64;
        uint64_t *nw = realloc(b->work, c * sizeof *nw);
        if (!nw) return false;
        b->work = nw;
        b->capwork = c;
    }
    b->work[b->nwork++] = va;
    return true;
}

static bool seen(builder *b, uint64_t va)
{
    uint64_t i = (va - b->wlo) >> 2;
    return b->seen[i >> 3] >> (i & 7) & 1;
}
static void mark(builder *b, uint64_t va)
{
    uint64_t i = (va - b->wlo) >> 2;
    b->seen[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* decodes a straight run from va until a terminator; the targets of its
 * branches (and of s_getpc-relative calls) join the work list */
static bool run_from(builder *b, const amdi_target *t, uint64_t va)
{
    /* s_getpc_b64 s[k:k+1]; s_add_u32 sk, sk, lo; s_addc_u32 sk+1, sk+1, hi:
     * the address clang forms for calls and jumps it cannot reach with a
     * branch */
    int pc_reg = -1;
    uint64_t pc_val = 0;
    while (va >= b->wlo && va < b->whi && !seen(b, va)) {
        amdi_inst in[2];
        int r = amdi_decode(t, (const uint8_t *)(uintptr_t)va, (size_t)(b->whi - va), in);
        mark(b, va);
        rec x = {.va = va, .bad = r != 0, .in = in[0]};
        if (r) {
            x.in.enc = AMDI_E_NONE;
            return push_rec(b, &x);
        }
        if (!push_rec(b, &x)) return false;
        if (in[0].enc == AMDI_E_VOPD) {
            rec y = {.va = va, .half = 1, .in = in[1]};
            if (!push_rec(b, &y)) return false;
        }
        amdi_op op = (amdi_op)in[0].op;
        uint64_t next = va + in[0].len;
        if (in[0].flags & AMDI_F_BRANCH) {
            if (!push_work(b, next + (uint64_t)((int64_t)in[0].simm * 4))) return false;
        }
        if (op == AMDI_S_GETPC_B64 && in[0].d[0].kind == AMDI_O_SGPR) {
            pc_reg = in[0].d[0].reg;
            pc_val = next;
        } else if (op == AMDI_S_ADD_U32 && pc_reg >= 0 && in[0].d[0].reg == pc_reg && in[0].s[1].kind == AMDI_O_CONST) {
            uint64_t lo = (uint64_t)(uint32_t)pc_val + (uint32_t)in[0].s[1].imm;
            pc_val = (pc_val & ~0xffffffffull) + lo;
        } else if (op == AMDI_S_ADDC_U32 && pc_reg >= 0 && in[0].d[0].reg == pc_reg + 1 &&
                   in[0].s[1].kind == AMDI_O_CONST) {
            pc_val += (uint64_t)(uint32_t)in[0].s[1].imm << 32;
        } else if ((op == AMDI_S_SWAPPC_B64 || op == AMDI_S_SETPC_B64) && pc_reg >= 0 &&
                   in[0].s[0].kind == AMDI_O_SGPR && in[0].s[0].reg == pc_reg) {
            if (!push_work(b, pc_val)) return false;
        }
        if (op == AMDI_S_ENDPGM || op == AMDI_S_BRANCH || op == AMDI_S_SETPC_B64 || op == AMDI_S_CODE_END ||
            op == AMDI_S_TRAP)
            return true;
        va = next;
    }
    return true;
}

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->va != y->va) return x->va < y->va ? -1 : 1;
    return (int)x->half - (int)y->half;
}

uint32_t mai_prog_index(const mai_prog *p, uint64_t va)
{
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (p->va[m] < va) lo = m + 1;
        else hi = m;
    }
    return lo < p->n && p->va[lo] == va ? lo : UINT32_MAX;
}

static void prog_free(mai_prog *p)
{
    if (!p) return;
    free(p->bytes);
    free(p->ins);
    free(p->va);
    free(p->target);
    free(p->next);
    free(p);
}

static mai_prog *decode(mock_gpu *gpu, const amdi_target *t, uint64_t entry, char *why, size_t why_size)
{
    uint64_t lo, hi;
    bool w;
    if (!mock_gpu_range(gpu, entry, 4, false, &lo, &hi, &w, why, why_size)) return NULL;
    /* a window around the entry: code objects keep a kernel's code and its
     * callees together */
    builder b = {.wlo = entry - BASE_MIN(entry - lo, (uint64_t)1 << 20), .whi = entry + BASE_MIN(hi - entry, (uint64_t)4 << 20)};
    b.wlo &= ~3ull;
    mai_prog *p = calloc(1, sizeof *p);
    b.seen = calloc((size_t)((b.whi - b.wlo) / 32 + 1), 1);
    bool ok = p && b.seen && push_work(&b, entry);
    while (ok && b.nwork) ok = run_from(&b, t, b.work[--b.nwork]);
    if (!ok || !b.n) {
        snprintf(why, why_size, "out of host memory decoding the program");
        free(b.r), free(b.work), free(b.seen), free(p);
        return NULL;
    }
    qsort(b.r, b.n, sizeof *b.r, rec_cmp);
    p->gpu = gpu;
    p->entry = entry;
    p->t = *t;
    p->n = (uint32_t)b.n;
    p->ins = malloc(b.n * sizeof *p->ins);
    p->va = malloc(b.n * sizeof *p->va);
    p->target = malloc(b.n * sizeof *p->target);
    p->next = malloc(b.n * sizeof *p->next);
    p->lo = b.r[0].va;
    p->hi = b.r[b.n - 1].va + BASE_MAX(b.r[b.n - 1].in.len, 4u);
    p->bytes = malloc((size_t)(p->hi - p->lo));
    if (!p->ins || !p->va || !p->target || !p->next || !p->bytes) {
        snprintf(why, why_size, "out of host memory decoding the program");
        free(b.r), free(b.work), free(b.seen);
        prog_free(p);
        return NULL;
    }
    memcpy(p->bytes, (const void *)(uintptr_t)p->lo, (size_t)(p->hi - p->lo));
    for (uint32_t i = 0; i < p->n; i++) {
        p->ins[i] = b.r[i].in;
        p->va[i] = b.r[i].va;
        p->bad += b.r[i].bad;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        const amdi_inst *in = &p->ins[i];
        uint32_t j = i + 1;
        if (in->enc == AMDI_E_VOPD && (in->flags & AMDI_F_VOPD_X)) j = i + 2;
        uint64_t nva = p->va[i] + in->len;
        p->next[i] = j < p->n && p->va[j] == nva ? j : UINT32_MAX;
        p->target[i] = UINT32_MAX;
        if (in->flags & AMDI_F_BRANCH) p->target[i] = mai_prog_index(p, nva + (uint64_t)((int64_t)in->simm * 4));
    }
    /* the instructions that only pace the hardware (waits, clauses, ALU
     * delays, nops) do nothing on an executor that completes each
     * instruction in order: the one before steps over them (a quarter of
     * what clang's gfx11 code runs), and only a branch landing on one runs
     * it, as nothing */
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t j = p->next[i];
        while (j != UINT32_MAX && is_pacing(p->ins[j].op)) j = p->next[j];
        p->next[i] = j;
    }
    free(b.r), free(b.work), free(b.seen);
    return p;
}

/* the cache: per GPU by entry address, checked against the bytes there */
#define SLOTS 64
typedef struct slot {
    mai_prog *p;
    unsigned refs;
    bool dead;
} slot;
static slot slots[SLOTS];
static unsigned slot_next;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static bool still_there(const mai_prog *p)
{
    char why[256];
    if (!mock_gpu_access(p->gpu, p->lo, p->hi - p->lo, false, why, sizeof why)) return false;
    return !memcmp(p->bytes, (const void *)(uintptr_t)p->lo, (size_t)(p->hi - p->lo));
}

mai_prog *mai_prog_get(mock_gpu *gpu, const amdi_target *t, uint64_t entry, char *why, size_t why_size)
{
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS; i++) {
        slot *s = &slots[i];
        if (s->p && !s->dead && s->p->gpu == gpu && s->p->entry == entry && s->p->t.fam == t->fam &&
            s->p->t.wave == t->wave && s->p->t.gfx940 == t->gfx940 && still_there(s->p)) {
            s->refs++;
            pthread_mutex_unlock(&slot_lock);
            return s->p;
        }
    }
    pthread_mutex_unlock(&slot_lock);
    mai_prog *p = decode(gpu, t, entry, why, why_size);
    if (!p) return NULL;
    if (getenv("HCQ_MOCK_ISA_DUMP")) { /* the decoded program, as the executor sees it */
        flockfile(stderr);
        fprintf(stderr, "hcq mock: the program at 0x%" PRIx64 " (%u instructions, %u undecodable):\n", entry, p->n, p->bad);
        for (uint32_t i = 0; i < p->n; i++) {
            char text[200];
            if (p->ins[i].flags & AMDI_F_VOPD_Y) continue;
            amdi_print(t, &p->ins[i], p->ins[i].enc == AMDI_E_VOPD ? &p->ins[i + 1] : NULL, text, sizeof text);
            fprintf(stderr, "  %6" PRIx64 ": %s\n", p->va[i] - entry, text);
        }
        funlockfile(stderr);
    }
    pthread_mutex_lock(&slot_lock);
    slot *s = NULL;
    for (unsigned k = 0; k < SLOTS && !s; k++) {
        slot *c = &slots[slot_next++ % SLOTS];
        if (!c->refs) s = c;
    }
    if (s) {
        prog_free(s->p);
        *s = (slot){p, 1, false};
    }
    pthread_mutex_unlock(&slot_lock);
    if (!s) p->entry |= 1ull << 63; /* every slot busy: the caller's own, freed by put */
    return p;
}

void mai_prog_put(mai_prog *p)
{
    if (!p) return;
    if (p->entry >> 63) {
        prog_free(p);
        return;
    }
    pthread_mutex_lock(&slot_lock);
    for (unsigned i = 0; i < SLOTS; i++)
        if (slots[i].p == p && slots[i].refs) slots[i].refs--;
    pthread_mutex_unlock(&slot_lock);
}

/* ================================================================ running */
typedef struct mai_run {
    mai_dispatch d;
    const mock_split *split;
    uint64_t groups, waves_per_group;
    atomic_bool stop;
    pthread_mutex_t lock;
    mai_stop why;      /* the first error */
    uint64_t va;
    bool write;
    char msg[900];
    /* scratch: work-group slots in the ring */
    uint32_t nslots;
    _Atomic uint64_t free_slots;
    uint64_t executed;
} mai_run;

/* instructions executed by every dispatch so far (bench/bench_amd_isa.c) */
static _Atomic uint64_t total_executed;
uint64_t mock_amd_isa_instructions(void) { return atomic_load(&total_executed); }

static void record(mai_wave *w, mai_stop why, uint64_t va, bool write, const char *msg)
{
    mai_run *r = w->g->run;
    w->stop = (uint8_t)why;
    pthread_mutex_lock(&r->lock);
    if (!r->why) {
        r->why = why;
        r->va = va;
        r->write = write;
        snprintf(r->msg, sizeof r->msg, "%s", msg);
    }
    pthread_mutex_unlock(&r->lock);
    atomic_store(&r->stop, true);
}

static void where(const mai_wave *w, char *buf, size_t size)
{
    const mai_group *g = w->g;
    snprintf(buf, size, "kernel %s, work-group (%u,%u,%u), wave %u", g->d->kernel, g->id[0], g->id[1], g->id[2],
             w->id);
}

void mai_describe(const mai_wave *w, const amdi_inst *in, char *buf, size_t size)
{
    const mai_prog *p = w->g->d->prog;
    char text[160];
    amdi_print(&p->t, in, in->enc == AMDI_E_VOPD && (in->flags & AMDI_F_VOPD_X) ? in + 1 : NULL, text, sizeof text);
    uint64_t va = w->pc < p->n ? p->va[w->pc] : 0;
    snprintf(buf, size, "pc 0x%" PRIx64 " (entry+0x%" PRIx64 "): %s", va, va - p->entry, text);
}

void mai_fault(mai_wave *w, uint64_t va, bool write, const char *fmt, ...)
{
    char why[400], at[160], inst[240], msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    where(w, at, sizeof at);
    const mai_prog *p = w->g->d->prog;
    mai_describe(w, &p->ins[BASE_MIN(w->pc, p->n - 1)], inst, sizeof inst);
    snprintf(msg, sizeof msg, "%s: %s at 0x%" PRIx64 " by %s: %s", at, write ? "write" : "read", va, inst, why);
    record(w, MAI_FAULT, va, write, msg);
}

void mai_illegal(mai_wave *w, const char *fmt, ...)
{
    char why[400], at[160], msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    where(w, at, sizeof at);
    snprintf(msg, sizeof msg, "illegal instruction: %s: %s", at, why);
    record(w, MAI_ILLEGAL, 0, false, msg);
}

/* ** memcheck on LDS */
bool mai_lds_check(mai_wave *w, const amdi_inst *in, unsigned l, uint64_t a, unsigned n, bool write, bool atomic)
{
    mai_group *g = w->g;
    uint32_t me = g->epoch << 8 | (uint32_t)(w->id + 1), cur = g->epoch;
    for (unsigned k = 0; k < n; k++) {
        uint64_t b = a + k;
        if (b >= g->d->lds_bytes) return true; /* out of range: reads 0, as the hardware's bounds check */
        const char *what = NULL;
        uint32_t other = 0;
        uint32_t wr = g->lds_writer[b], rd = g->lds_reader[b];
        if (!write && !atomic && !g->lds_init[b]) what = "reads LDS no wave of the work-group wrote (uninitialised)";
        else if (!atomic && wr && wr >> 8 == cur && (wr & 0xff) != (me & 0xff))
            what = write ? "writes LDS another wave wrote since the last barrier (a race)"
                         : "reads LDS another wave wrote since the last barrier (a race)", other = wr & 0xff;
        else if (!atomic && write && rd && rd >> 8 == cur && (rd & 0xff) != (me & 0xff))
            what = "writes LDS another wave read since the last barrier (a race)", other = rd & 0xff;
        if (what) {
            char at[160], inst[240], msg[900];
            const mai_dispatch *d = g->d;
            uint64_t t = (uint64_t)w->id * d->wave + l;
            uint32_t tx = (uint32_t)(t % d->block[0]), ty = (uint32_t)(t / d->block[0] % d->block[1]),
                     tz = (uint32_t)(t / ((uint64_t)d->block[0] * d->block[1]));
            where(w, at, sizeof at);
            mai_describe(w, in, inst, sizeof inst);
            char o[48] = "";
            if (other && other != 0xff) snprintf(o, sizeof o, " (wave %u)", other - 1);
            snprintf(msg, sizeof msg, "memcheck: %s, work-item (%u,%u,%u) lane %u, LDS byte 0x%llx: %s%s, by %s", at, tx,
                     ty, tz, l, (unsigned long long)b, what, o, inst);
            base_memcheck_report("%s", msg);
            record(w, MAI_CHECK, 0, write, msg);
            return false;
        }
        if (write || atomic) {
            g->lds_init[b] = 1;
            if (!atomic) g->lds_writer[b] = me;
        } else if (!rd || rd >> 8 != cur) {
            g->lds_reader[b] = me;
        } else if ((rd & 0xff) != (me & 0xff)) {
            g->lds_reader[b] = cur << 8 | 0xff; /* several readers: any other wave's write races */
        }
    }
    return true;
}

static void unknown(mai_wave *w, const amdi_inst *in)
{
    const mai_prog *p = w->g->d->prog;
    uint64_t va = p->va[w->pc];
    char mn[96];
    amdi_mnemonic(&p->t, in, mn, sizeof mn);
    if (in->op)
        mai_illegal(w, "pc 0x%" PRIx64 " (entry+0x%" PRIx64 "): %s (0x%08x 0x%08x) with an operand or control the %s "
                    "executor does not take", va, va - p->entry, mn, in->raw[0], in->raw[1],
                    p->t.fam == AMDI_GFX11 ? "gfx11 ISA" : "gfx9 ISA");
    else if (in->len >= 8)
        mai_illegal(w, "pc 0x%" PRIx64 " (entry+0x%" PRIx64 "): 0x%08x 0x%08x is no instruction the %s executor knows",
                    va, va - p->entry, in->raw[0], in->raw[1], p->t.fam == AMDI_GFX11 ? "gfx11 ISA" : "gfx9 ISA");
    else
        mai_illegal(w, "pc 0x%" PRIx64 " (entry+0x%" PRIx64 "): 0x%08x is no instruction the %s executor knows", va,
                    va - p->entry, in->raw[0], p->t.fam == AMDI_GFX11 ? "gfx11 ISA" : "gfx9 ISA");
}

/* ** scalar helpers the seams share */
uint64_t mai_ssrc(const mai_wave *w, const amdi_opnd *o)
{
    switch (o->kind) {
    case AMDI_O_SGPR: return o->n >= 2 ? mai_sreg64(w, o->reg) : w->s[o->reg];
    case AMDI_O_CONST: return o->imm;
    case AMDI_O_SCC: return w->scc;
    case AMDI_O_VCCZ: return (mai_sreg64(w, AMDI_SREG_VCC) & w->mask) == 0;
    case AMDI_O_EXECZ: return mai_exec(w) == 0;
    case AMDI_O_APERTURE: {
        /* 64-bit reads give the aperture's base or limit; 32-bit reads its high half */
        uint64_t base = o->reg <= 236 ? MAI_SHARED_BASE : MAI_PRIVATE_BASE;
        uint64_t v = o->reg == 235 || o->reg == 237 ? base : base + MAI_APERTURE_SIZE - 1;
        return o->n >= 2 ? v : v >> 32;
    }
    default: return 0;
    }
}

void mai_sdst(mai_wave *w, const amdi_opnd *o, uint64_t v, unsigned n)
{
    if (o->kind != AMDI_O_SGPR) return; /* null */
    w->s[o->reg] = (uint32_t)v;
    if (n >= 2) w->s[(o->reg + 1) & 127] = (uint32_t)(v >> 32);
}

void mai_write_mask(mai_wave *w, const amdi_opnd *o, uint64_t m)
{
    if (o->kind != AMDI_O_SGPR) return;
    m &= w->mask;
    w->s[o->reg] = (uint32_t)m;
    if (w->mask >> 32) w->s[(o->reg + 1) & 127] = (uint32_t)(m >> 32);
}

/* ** memory */
/* memcheck refused a global access: one report per access, as
 * compute-sanitizer's; the access goes to the sink and run_wave stops the
 * wave after the instruction */
static void *bad_global(mai_wave *w, const amdi_inst *in, unsigned lane, uint64_t va, uint32_t size, bool write,
                        const base_memcheck_alloc *al)
{
    mai_group *g = w->g;
    const mai_dispatch *d = g->d;
    char rel[200], at[160], inst[240], who[96], later[sizeof g->mc_msg];
    base_memcheck_explain(va, size, al, rel, sizeof rel);
    where(w, at, sizeof at);
    mai_describe(w, in, inst, sizeof inst);
    if (lane == MAI_SCALAR) {
        snprintf(who, sizeof who, "a scalar load");
    } else {
        uint64_t t = (uint64_t)w->id * d->wave + lane;
        snprintf(who, sizeof who, "work-item (%u,%u,%u) lane %u", (uint32_t)(t % d->block[0]),
                 (uint32_t)(t / d->block[0] % d->block[1]), (uint32_t)(t / ((uint64_t)d->block[0] * d->block[1])),
                 lane);
    }
    char *m = g->mc_bad ? later : g->mc_msg;
    snprintf(m, sizeof later, "invalid global %s of %u bytes at 0x%" PRIx64 " (%s) by %s, %s, %s",
             write ? "write" : "read", size, va, rel, who, at, inst);
    base_memcheck_report("%s", m);
    if (!g->mc_bad++) g->mc_va = va, g->mc_write = write;
    memset(g->mc_sink, 0, sizeof g->mc_sink);
    return g->mc_sink;
}

void *mai_mem(mai_wave *w, const amdi_inst *in, unsigned lane, uint64_t va, uint32_t size, bool write)
{
    mai_group *g = w->g;
    if (va >= g->rlo && va + size <= g->rhi && va + size >= va && (!write || g->rw)) return (void *)(uintptr_t)va;
    char why[256];
    uint64_t lo, hi;
    bool rw;
    if (!mock_gpu_range(g->d->gpu, va, size, write, &lo, &hi, &rw, why, sizeof why)) {
        mai_fault(w, va, write, "%s", why);
        return NULL;
    }
    if (g->d->memcheck && size <= sizeof g->mc_sink) {
        /* bounds of what was allocated, not of the page-rounded mapping;
         * the cached range shrinks to the bytes the same answer holds for */
        base_memcheck_alloc al;
        uint64_t mlo, mhi;
        if (!base_memcheck_allows(va, size, &al, &mlo, &mhi)) return bad_global(w, in, lane, va, size, write, &al);
        lo = BASE_MAX(lo, mlo), hi = BASE_MIN(hi, mhi);
    }
    g->rlo = lo;
    g->rhi = hi;
    g->rw = rw;
    return (void *)(uintptr_t)va;
}

/* ** the wave loop */
static void branch(mai_wave *w, uint32_t i)
{
    const mai_prog *p = w->g->d->prog;
    if (p->target[i] == UINT32_MAX) {
        const amdi_inst *in = &p->ins[i];
        uint64_t t = p->va[i] + in->len + (uint64_t)((int64_t)in->simm * 4);
        mai_illegal(w, "pc 0x%" PRIx64 ": a branch to 0x%" PRIx64 ", where no instruction was decoded", p->va[i], t);
        return;
    }
    w->pc = p->target[i];
}

static bool jump_to(mai_wave *w, uint64_t va)
{
    const mai_prog *p = w->g->d->prog;
    uint32_t j = mai_prog_index(p, va);
    if (j == UINT32_MAX) {
        mai_illegal(w, "pc 0x%" PRIx64 ": a jump to 0x%" PRIx64 ", outside the code decoded from the entry 0x%" PRIx64,
                    p->va[w->pc], va, p->entry);
        return false;
    }
    w->pc = j;
    return true;
}

/* SOPP and the SOP1/SOPK ops that change the program counter; true when
 * handled (the pc is set) */
static bool control(mai_wave *w, const amdi_inst *in, uint32_t i)
{
    const mai_prog *p = w->g->d->prog;
    uint64_t next = p->va[i] + in->len;
    switch ((amdi_op)in->op) {
    case AMDI_S_ENDPGM: w->stop = MAI_ENDED; return true;
    case AMDI_S_BARRIER:
        w->stop = MAI_BARRIER;
        w->pc = p->next[i];
        return true;
    case AMDI_S_BRANCH: branch(w, i); return true;
    case AMDI_S_CBRANCH_SCC0: if (!w->scc) { branch(w, i); return true; } return false;
    case AMDI_S_CBRANCH_SCC1: if (w->scc) { branch(w, i); return true; } return false;
    case AMDI_S_CBRANCH_VCCZ: if (!(mai_sreg64(w, AMDI_SREG_VCC) & w->mask)) { branch(w, i); return true; } return false;
    case AMDI_S_CBRANCH_VCCNZ: if (mai_sreg64(w, AMDI_SREG_VCC) & w->mask) { branch(w, i); return true; } return false;
    case AMDI_S_CBRANCH_EXECZ: if (!mai_exec(w)) { branch(w, i); return true; } return false;
    case AMDI_S_CBRANCH_EXECNZ: if (mai_exec(w)) { branch(w, i); return true; } return false;
    case AMDI_S_GETPC_B64: mai_sdst(w, &in->d[0], next, 2); return false;
    case AMDI_S_SETPC_B64: jump_to(w, mai_ssrc(w, &in->s[0])); return true;
    case AMDI_S_SWAPPC_B64: {
        uint64_t to = mai_ssrc(w, &in->s[0]);
        mai_sdst(w, &in->d[0], next, 2);
        jump_to(w, to);
        return true;
    }
    case AMDI_S_CALL_B64:
        mai_sdst(w, &in->d[0], next, 2);
        branch(w, i);
        return true;
    case AMDI_S_TRAP: {
        char at[160];
        where(w, at, sizeof at);
        mai_illegal(w, "pc 0x%" PRIx64 ": s_trap %d (no trap handler: the wave halts)", p->va[i], in->simm & 0xff);
        w->stop = MAI_TRAP;
        return true;
    }
    case AMDI_S_SETHALT:
        if (in->simm & 1) {
            mai_illegal(w, "pc 0x%" PRIx64 ": s_sethalt 1 (a halted wave never ends)", p->va[i]);
            return true;
        }
        return false;
    case AMDI_S_SENDMSG:
        /* MSG_INTERRUPT (1; the message id in SIMM16 3:0 on gfx9, 7:0 on gfx11): the SQ interrupt whose data
         * is M0's low 24 bits, which amdkfd takes as the event id (kfd_int_process_v9.c / _v11.c,
         * SOC15_INTSRC_SQ_INTERRUPT_MSG, kfd_signal_event_interrupt with 24 valid bits): how device code
         * (ROCm-Device-Libs ockl's hsa_signal update_mbox, hostcall) wakes a host waiting on a signal's
         * event. The other messages (GS, VGPR deallocation hints) have nothing to do here. */
        if (((uint32_t)in->simm & (w->g->d->t.fam == AMDI_GFX11 ? 0xffu : 0xfu)) == 1 && w->g->d->agpu)
            mock_amd_interrupt(w->g->d->agpu, w->s[AMDI_SREG_M0] & 0xffffffu);
        return false;
    case AMDI_S_DENORM_MODE: /* MODE's FP_DENORM, bits 7:4 */
        w->mode = (w->mode & ~0xf0u) | ((uint32_t)in->simm & 0xf) << 4;
        return false;
    case AMDI_S_ROUND_MODE: /* MODE's FP_ROUND, bits 3:0 */
        w->mode = (w->mode & ~0xfu) | ((uint32_t)in->simm & 0xf);
        return false;
    case AMDI_S_CODE_END:
        mai_illegal(w, "pc 0x%" PRIx64 ": s_code_end (padding after the code) executed", p->va[i]);
        return true;
    default: return false; /* waits, clauses, hints: the executor completes each instruction in order */
    }
}

/* the calling thread's CPU time: the watchdog counts the work a group did,
 * not the wall time of a loaded host */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void run_wave(mai_wave *w)
{
    const mai_dispatch *d = w->g->d;
    const mai_prog *p = d->prog;
    mai_run *r = w->g->run;
    while (w->stop == MAI_RUN) {
        if (!(++w->executed & 1023)) {
            if (atomic_load_explicit(&r->stop, memory_order_relaxed)) {
                w->stop = MAI_CANCELLED;
                return;
            }
            if (d->cancel && __atomic_load_n((const int *)d->cancel, __ATOMIC_RELAXED)) {
                record(w, MAI_CANCELLED, 0, false, "the queue is being destroyed");
                return;
            }
            if (d->watchdog_ns && !(w->executed & 8191) && thread_cpu_ns() - w->g->cpu_start > d->watchdog_ns) {
                char at[160], msg[400];
                where(w, at, sizeof at);
                snprintf(msg, sizeof msg, "%s ran past the %" PRIu64 " ms watchdog (mock config watchdog_ms; %" PRIu64
                         " instructions in this wave): a runaway kernel", at, d->watchdog_ns / 1000000, w->executed);
                record(w, MAI_WATCHDOG, 0, false, msg);
                return;
            }
        }
        uint32_t i = w->pc;
        if (i >= p->n) {
            mai_illegal(w, "the wave ran past the code decoded from the entry 0x%" PRIx64, p->entry);
            return;
        }
        const amdi_inst *in = &p->ins[i];
        bool ok = true;
        switch (in->enc) {
        case AMDI_E_SOPP:
            if (control(w, in, i)) continue;
            break;
        case AMDI_E_SOP1:
            if (in->op == AMDI_S_GETPC_B64 || in->op == AMDI_S_SETPC_B64 || in->op == AMDI_S_SWAPPC_B64) {
                if (control(w, in, i)) continue;
                break;
            }
            ok = mai_salu(w, in);
            break;
        case AMDI_E_SOPK:
            if (in->op == AMDI_S_CALL_B64) {
                control(w, in, i);
                continue;
            }
            ok = mai_salu(w, in);
            break;
        case AMDI_E_SOP2: case AMDI_E_SOPC: ok = mai_salu(w, in); break;
        case AMDI_E_SMEM: ok = mai_smem(w, in); break;
        case AMDI_E_VOP1: case AMDI_E_VOP2: case AMDI_E_VOPC: case AMDI_E_VOP3: case AMDI_E_VOP3P:
            ok = mai_valu(w, in);
            break;
        case AMDI_E_VOPD: ok = mai_vopd(w, in, in + 1); break;
        case AMDI_E_DS: ok = mai_ds(w, in); break;
        case AMDI_E_FLAT: case AMDI_E_GLOBAL: case AMDI_E_SCRATCH: case AMDI_E_MUBUF: ok = mai_vmem(w, in); break;
        default: unknown(w, in); return;
        }
        if (!ok || w->stop != MAI_RUN) return;
        if (w->g->mc_bad) {
            mai_group *g = w->g;
            char msg[900];
            if (g->mc_bad > 1)
                snprintf(msg, sizeof msg, "memcheck: %.780s (and %u more accesses of the instruction)", g->mc_msg,
                         g->mc_bad - 1);
            else
                snprintf(msg, sizeof msg, "memcheck: %.780s", g->mc_msg);
            /* the memory exception an access outside the mappings raises
             * (HCQ_EFAULT at the wait, as the NV mock's Xid 13) */
            record(w, MAI_FAULT, g->mc_va, g->mc_write, msg);
            return;
        }
        if (p->next[i] == UINT32_MAX) {
            mai_illegal(w, "pc 0x%" PRIx64 ": the code after this instruction was not decoded (no instruction there?)",
                        p->va[i]);
            return;
        }
        w->pc = p->next[i];
    }
}

/* ** work-groups */
typedef struct worker {
    mai_wave *waves;
    uint32_t *vgprs;
    uint8_t *lds, *lds_init;
    uint32_t *lds_writer, *lds_reader;
    uint32_t nwaves;
} worker;

static size_t vgpr_words(const mai_dispatch *d) { return (size_t)(256 + 8) * 64 * (d->t.fam == AMDI_GFX9 ? 2 : 1); }

static bool worker_init(worker *k, const mai_run *r)
{
    const mai_dispatch *d = &r->d;
    *k = (worker){0};
    k->nwaves = (uint32_t)r->waves_per_group;
    k->waves = calloc(k->nwaves, sizeof *k->waves);
    k->vgprs = malloc(vgpr_words(d) * k->nwaves * sizeof(uint32_t));
    k->lds = malloc(BASE_MAX(d->lds_bytes, 16u));
    if (d->memcheck) {
        k->lds_init = malloc(BASE_MAX(d->lds_bytes, 16u));
        k->lds_writer = malloc(BASE_MAX(d->lds_bytes, 16u) * sizeof(uint32_t));
        k->lds_reader = malloc(BASE_MAX(d->lds_bytes, 16u) * sizeof(uint32_t));
        if (!k->lds_init || !k->lds_writer || !k->lds_reader) return false;
    }
    return k->waves && k->vgprs && k->lds;
}
static void worker_free(worker *k)
{
    free(k->waves);
    free(k->vgprs);
    free(k->lds);
    free(k->lds_init);
    free(k->lds_writer);
    free(k->lds_reader);
}

static uint32_t slot_take(mai_run *r)
{
    for (;;) {
        uint64_t f = atomic_load(&r->free_slots);
        if (f) {
            uint32_t b = (uint32_t)__builtin_ctzll(f);
            if (atomic_compare_exchange_weak(&r->free_slots, &f, f & ~(1ull << b))) return b;
            continue;
        }
        if (atomic_load(&r->stop)) return UINT32_MAX;
        sched_yield();
    }
}
static void slot_give(mai_run *r, uint32_t b) { atomic_fetch_or(&r->free_slots, 1ull << b); }

static void wave_init(mai_wave *w, mai_group *g, uint32_t id, uint32_t *vgprs)
{
    const mai_dispatch *d = g->d;
    unsigned W = d->wave;
    memset(w->s, 0, sizeof w->s);
    w->scc = 0;
    w->stop = MAI_RUN;
    w->id = (uint16_t)id;
    w->pc = 0;
    w->g = g;
    w->mask = W == 64 ? ~0ull : 0xffffffffull;
    w->v = vgprs;
    w->a = d->t.fam == AMDI_GFX9 ? vgprs + (size_t)(256 + 8) * 64 : NULL;
    w->executed = 0;
    w->mode = d->mode;
    /* SGPRs: user data, then the system values RSRC2 enables */
    unsigned s = 0;
    for (; s < d->user_sgprs && s < 16; s++) w->s[s] = d->ud[s];
    s = d->user_sgprs;
    for (int k = 0; k < 3; k++)
        if (d->tgid_en[k]) w->s[s++] = g->id[k];
    if (d->tg_size_en) w->s[s++] = g->nwaves; /* work-group info: the waves in the group */
    uint64_t slot_va = d->scratch_base + (uint64_t)(g->scratch_slot + id) * d->scratch_wave;
    w->scratch = d->scratch_en ? slot_va : 0;
    if (d->scratch_en && d->t.fam == AMDI_GFX9 && !d->t.gfx940)
        w->s[s++] = (uint32_t)(slot_va - d->scratch_base); /* the private segment wave byte offset */
    /* EXEC: this wave's work-items; v0 their ids */
    uint64_t items = (uint64_t)d->block[0] * d->block[1] * d->block[2];
    uint64_t first = (uint64_t)id * W;
    uint64_t n = items - first < W ? items - first : W;
    uint64_t exec = n >= 64 ? ~0ull : (1ull << n) - 1;
    w->s[AMDI_SREG_EXEC] = (uint32_t)exec;
    w->s[AMDI_SREG_EXEC + 1] = (uint32_t)(exec >> 32);
    memset(w->v, 0, 3 * 64 * sizeof(uint32_t));
    for (unsigned l = 0; l < n; l++) {
        uint64_t t = first + l;
        uint32_t x = (uint32_t)(t % d->block[0]), y = (uint32_t)(t / d->block[0] % d->block[1]),
                 z = (uint32_t)(t / ((uint64_t)d->block[0] * d->block[1]));
        if (d->tidig < 1) y = 0;
        if (d->tidig < 2) z = 0;
        if (d->packed_tid) {
            w->v[l] = x | y << 10 | z << 20;
        } else {
            w->v[l] = x;
            w->v[64 + l] = y;
            w->v[128 + l] = z;
        }
    }
}

static void run_group(mai_run *r, worker *k, uint64_t gi)
{
    const mai_dispatch *d = &r->d;
    mai_group g = {.d = d, .run = r, .nwaves = k->nwaves, .waves = k->waves, .lds = k->lds, .lds_init = k->lds_init,
                   .lds_writer = k->lds_writer, .lds_reader = k->lds_reader};
    g.id[0] = (uint32_t)(gi % d->grid[0]);
    g.id[1] = (uint32_t)(gi / d->grid[0] % d->grid[1]);
    g.id[2] = (uint32_t)(gi / ((uint64_t)d->grid[0] * d->grid[1]));
    uint32_t ring = UINT32_MAX;
    if (d->scratch_en) {
        ring = slot_take(r);
        if (ring == UINT32_MAX) return;
        g.scratch_slot = ring * g.nwaves;
    }
    memset(g.lds, 0, d->lds_bytes);
    if (d->memcheck) {
        memset(g.lds_init, 0, d->lds_bytes);
        memset(g.lds_writer, 0, d->lds_bytes * sizeof(uint32_t));
        memset(g.lds_reader, 0, d->lds_bytes * sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < g.nwaves; i++) wave_init(&g.waves[i], &g, i, k->vgprs + vgpr_words(d) * i);
    if (d->watchdog_ns) g.cpu_start = thread_cpu_ns();
    for (;;) {
        bool any = false;
        for (uint32_t i = 0; i < g.nwaves; i++) {
            mai_wave *w = &g.waves[i];
            if (w->stop != MAI_RUN) continue;
            run_wave(w);
            any = true;
            if (w->stop != MAI_ENDED && w->stop != MAI_BARRIER) goto out;
        }
        /* every wave ended or waits at the barrier: release them */
        bool waiting = false;
        for (uint32_t i = 0; i < g.nwaves; i++)
            if (g.waves[i].stop == MAI_BARRIER) {
                g.waves[i].stop = MAI_RUN;
                waiting = true;
            }
        g.epoch++;
        if (!waiting || !any) break;
    }
out:;
    uint64_t n = 0;
    for (uint32_t i = 0; i < g.nwaves; i++) n += g.waves[i].executed;
    __atomic_fetch_add(&r->executed, n, __ATOMIC_RELAXED);
    atomic_fetch_add_explicit(&total_executed, n, memory_order_relaxed);
    if (ring != UINT32_MAX) slot_give(r, ring);
}

static hcq_status run_groups(void *ctx, uint64_t begin, uint64_t end)
{
    mai_run *r = ctx;
    worker k;
    if (!worker_init(&k, r)) {
        worker_free(&k);
        pthread_mutex_lock(&r->lock);
        if (!r->why) {
            r->why = MAI_ILLEGAL;
            snprintf(r->msg, sizeof r->msg, "the mock ran out of host memory for a work-group's registers");
        }
        pthread_mutex_unlock(&r->lock);
        return HCQ_ENOMEM;
    }
    for (uint64_t gi = begin; gi < end && !atomic_load_explicit(&r->stop, memory_order_relaxed); gi++)
        run_group(r, &k, gi);
    worker_free(&k);
    return atomic_load(&r->stop) ? HCQ_EFAULT : HCQ_OK;
}

static hcq_status run_rounds(void *ctx, uint64_t begin, uint64_t end)
{
    mai_run *r = ctx;
    const mock_split *sp = r->split;
    uint64_t stride = (uint64_t)sp->chunk * sp->nparts;
    for (uint64_t i = begin; i < end; i++) {
        uint64_t gb = i * stride + (uint64_t)sp->part * sp->chunk;
        if (gb >= r->groups) continue;
        hcq_status s = run_groups(ctx, gb, BASE_MIN(gb + sp->chunk, r->groups));
        if (s) return s;
    }
    return HCQ_OK;
}

/* ================================================================ dispatch */
#define REG(cp, id) ((cp)->regs[amd_regs[id].off[(cp)->q->gpu->arch->family] - AMD_SH_REG_BASE])

static int stop_queue(mock_amd_cp *cp, const char *fmt, ...) HCQ_PRINTF(2, 3);
static int stop_queue(mock_amd_cp *cp, const char *fmt, ...)
{
    char why[960], msg[1000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "xcc %u: %s", cp->xcc, why);
    mock_amd_hang(cp->q, msg);
    return 1;
}

/* the CPU time a work-group may take before the watchdog ends the
 * dispatch: the mock config's watchdog_ms (0 turns it off), else 30 s, as
 * the SASS executor's (amdgpu's compute lockup_timeout is 60 s of wall
 * time; the mock runs far slower than the hardware) */
#define WATCHDOG_DEFAULT_MS 30000u
static uint64_t watchdog_ns(void)
{
    const mock_config *c = mock_cfg();
    return (uint64_t)(c->watchdog_set ? c->watchdog_ms : WATCHDOG_DEFAULT_MS) * 1000000ull;
}

/* a dispatch the hardware would not run: the queue stops with the reason */
#define REFUSE(...)                                                                                            \
    do {                                                                                                       \
        char refuse_[960];                                                                                     \
        snprintf(refuse_, sizeof refuse_, __VA_ARGS__);                                                        \
        free(r);                                                                                               \
        return stop_queue(cp, "%s", refuse_);                                                                  \
    } while (0)

int mock_amd_isa_run(mock_amd_cp *cp, uint64_t entry, const uint32_t grid[3], const uint32_t block[3],
                     uint32_t initiator, const mock_split *split, const char *via, const char *kernel)
{
    mock_amd_queue *q = cp->q;
    mock_amd_gpu *ag = q->gpu;
    const amd_arch *a = ag->arch;
    mai_run *r = calloc(1, sizeof *r);
    if (!r) return stop_queue(cp, "%s: the mock ran out of host memory", via);
    mai_dispatch *d = &r->d;
    d->gpu = ag->g;
    d->agpu = ag;
    d->t.fam = a->family == AMD_FAMILY_GFX11 ? AMDI_GFX11 : AMDI_GFX9;
    d->t.gfx940 = a->family == AMD_FAMILY_GFX9 && a->elf_mach >= 0x40 && a->elf_mach != 0x3f;
    d->wave = a->family == AMD_FAMILY_GFX11 && amd_fget(AMD_INIT_CS_W32_EN, initiator) ? 32 : 64;
    d->t.wave = (uint8_t)d->wave;
    memcpy(d->grid, grid, sizeof d->grid);
    memcpy(d->block, block, sizeof d->block);
    d->rsrc1 = REG(cp, AMD_REG_PGM_RSRC1);
    d->rsrc2 = REG(cp, AMD_REG_PGM_RSRC2);
    d->rsrc3 = REG(cp, AMD_REG_PGM_RSRC3);
    d->user_sgprs = amd_fget(AMD_RSRC2_USER_SGPR, d->rsrc2);
    const uint32_t *ud = &REG(cp, AMD_REG_USER_DATA_0);
    for (unsigned i = 0; i < AMD_USER_DATA_COUNT; i++) d->ud[i] = ud[i];
    d->tgid_en[0] = amd_fget(AMD_RSRC2_TGID_X_EN, d->rsrc2);
    d->tgid_en[1] = amd_fget(AMD_RSRC2_TGID_Y_EN, d->rsrc2);
    d->tgid_en[2] = amd_fget(AMD_RSRC2_TGID_Z_EN, d->rsrc2);
    d->tg_size_en = amd_fget(AMD_RSRC2_TG_SIZE_EN, d->rsrc2);
    d->tidig = amd_fget(AMD_RSRC2_TIDIG_COMP_CNT, d->rsrc2);
    d->scratch_en = amd_fget(AMD_RSRC2_SCRATCH_EN, d->rsrc2);
    d->packed_tid = true; /* gfx90a, gfx940+ and gfx11 pack the work-item ids into v0 (AMDGPUUsage) */
    d->lds_bytes = amd_fget(AMD_RSRC2_LDS_SIZE, d->rsrc2) * AMD_LDS_BLOCK_BYTES;
    d->ieee = d->rsrc1 >> 23 & 1;
    /* MODE: round modes and denormal controls from RSRC1.FLOAT_MODE (19:12) */
    d->mode = (d->rsrc1 >> 12) & 0xff;
    d->cancel = mock_engine_cancel_flag();
    d->watchdog_ns = watchdog_ns();
    d->memcheck = base_env_get()->mock_memcheck; /* HCQ_MOCK_CHECK=memcheck, checked with the other variables */
    char name[96], known[64];
    if (!kernel && cc_code_name_find(entry, known, sizeof known)) kernel = known;
    if (kernel) snprintf(name, sizeof name, "`%.64s` at 0x%" PRIx64, kernel, entry);
    else snprintf(name, sizeof name, "at 0x%" PRIx64, entry);
    d->kernel = name;
    if (d->user_sgprs > AMD_USER_DATA_COUNT)
        REFUSE("%s: kernel %s: COMPUTE_PGM_RSRC2.USER_SGPR is %u; the mock keeps %u user "
                                   "data registers", via, d->kernel, d->user_sgprs, AMD_USER_DATA_COUNT);
    if (d->lds_bytes > ag->model->lds_kib * 1024)
        REFUSE("%s: kernel %s: COMPUTE_PGM_RSRC2.LDS_SIZE allocates %u bytes of LDS; a %s "
                                   "work-group has %u KiB", via, d->kernel, d->lds_bytes, ag->model->name,
                                   ag->model->lds_kib);
    uint64_t items = (uint64_t)block[0] * block[1] * block[2];
    r->groups = (uint64_t)grid[0] * grid[1] * grid[2];
    r->waves_per_group = (items + d->wave - 1) / d->wave;
    if (items > 1024)
        REFUSE("%s: kernel %s: %llu work-items per work-group; the hardware runs at most "
                                   "1024", via, d->kernel, (unsigned long long)items);
    if (d->scratch_en) {
        uint32_t tmp = REG(cp, AMD_REG_TMPRING_SIZE);
        amd_field wsf = a->family == AMD_FAMILY_GFX11 ? AMD_TMPRING_WAVESIZE_GFX11 : AMD_TMPRING_WAVESIZE_GFX9;
        d->scratch_wave = (uint64_t)amd_fget(wsf, tmp) * a->scratch_unit;
        d->scratch_waves = amd_fget(AMD_TMPRING_WAVES, tmp);
        d->scratch_base = (uint64_t)REG(cp, AMD_REG_DISPATCH_SCRATCH_BASE_LO) << 8 |
                          (uint64_t)REG(cp, AMD_REG_DISPATCH_SCRATCH_BASE_HI) << 40;
        if (d->scratch_waves < r->waves_per_group)
            REFUSE("%s: kernel %s: COMPUTE_TMPRING_SIZE.WAVES is %u; a work-group has %llu "
                                       "waves, each needing a scratch slot", via, d->kernel, d->scratch_waves,
                                       (unsigned long long)r->waves_per_group);
        r->nslots = (uint32_t)BASE_MIN(d->scratch_waves / r->waves_per_group, 64u);
        r->free_slots = r->nslots >= 64 ? ~0ull : (1ull << r->nslots) - 1;
    }
    if (!r->groups || !items) {
        free(r);
        return 0;
    }
    char why[256];
    mai_prog *p = mai_prog_get(ag->g, &d->t, entry, why, sizeof why);
    if (!p) {
        char what[600];
        snprintf(what, sizeof what, "%s xcc %u: %s: fetching the program of kernel %s at 0x%" PRIx64 ": %s", q->name,
                 cp->xcc, via, d->kernel, entry, why);
        mock_amd_memory_fault(ag, entry, false, what);
        free(r);
        return 1;
    }
    d->prog = p;
    r->split = split && split->nparts > 1 && split->chunk ? split : NULL;
    pthread_mutex_init(&r->lock, NULL);

    mock_gpu *gpu = ag->g;
    mock_kernels_begin();
    pthread_mutex_lock(&gpu->pool_lock); /* one launch at a time per GPU's pool */
    if (!gpu->pool) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        gpu->pool = drv_pool_create(n > 0 ? (unsigned)n : 1);
    }
    unsigned threads = gpu->pool ? drv_pool_threads(gpu->pool) : 1;
    uint64_t work = r->groups * items;
    if (r->split) {
        const mock_split *sp = r->split;
        uint64_t stride = (uint64_t)sp->chunk * sp->nparts, rounds = (r->groups + stride - 1) / stride;
        uint64_t chunk = work < 4096 || !gpu->pool ? rounds : BASE_MAX(1, rounds / (4 * threads));
        if (gpu->pool) drv_pool_run(gpu->pool, rounds, chunk, run_rounds, r);
        else run_rounds(r, 0, rounds);
    } else {
        uint64_t chunk = work < 4096 || !gpu->pool ? r->groups : BASE_MAX(1, r->groups / (4 * threads));
        if (gpu->pool) drv_pool_run(gpu->pool, r->groups, chunk, run_groups, r);
        else run_groups(r, 0, r->groups);
    }
    pthread_mutex_unlock(&gpu->pool_lock);
    mock_kernels_end();
    mai_prog_put(p);

    int rc = 0;
    char what[1000];
    switch (r->why) {
    case MAI_RUN: case MAI_ENDED: case MAI_BARRIER: break;
    case MAI_CANCELLED: rc = 1; break; /* the queue is being destroyed: nothing to report */
    case MAI_FAULT:
        snprintf(what, sizeof what, "%s xcc %u: %s", q->name, cp->xcc, r->msg);
        mock_amd_memory_fault(ag, r->va, strstr(r->msg, "read-only") != NULL, what);
        rc = 1;
        break;
    case MAI_WATCHDOG:
        /* what amdkfd does with a queue that will not preempt: its hang
         * detection resets the queue ("queue id 0x.. at pasid 0x.. is
         * reset": kfd_device_queue_manager.c set_queue_as_reset) and
         * signals the process's HW exception events ("Queues reset on
         * process ...": kfd_events.c kfd_signal_reset_event) */
        rc = stop_queue(cp, "%s: %s; the queue is reset (KFD: \"queue id %u is reset\")", via, r->msg, q->id);
        break;
    default: rc = stop_queue(cp, "%s: %s", via, r->msg); break;
    }
    pthread_mutex_destroy(&r->lock);
    free(r);
    return rc;
}

bool mock_amd_isa_on(const mock_amd_gpu *ag)
{
    char why[480];
    return cc_isa_on(ag->arch->name, why, sizeof why);
}
