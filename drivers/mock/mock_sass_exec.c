/* The NV mock's SM running SASS (mock_sass.h): a launch's CTAs spread
 * over the GPU's worker pool; in a CTA, warps run round-robin, each for a
 * slice or until its lanes wait at a barrier or exit; in a warp, the
 * runnable lanes at the lowest PC run the next instruction together.
 *
 * Divergence: lanes that branch apart keep their own PCs and the lowest
 * runs first, so paths of an if/else run one after the other and meet
 * where their PCs meet again (the BSYNC after them) - the reconvergence
 * BSSY/BSYNC mark on hardware, reached without tracking the barrier
 * masks (BSSY records them for BMOV; BSYNC and WARPSYNC then find their
 * lanes together). What this does not model: Volta's independent thread
 * scheduling's promise that a lane spinning on a lock held by a lane of
 * its own warp at a higher PC makes progress (here it spins until the
 * watchdog ends the kernel).
 *
 * The watchdog: the executor counts the instructions it runs and every
 * few thousand looks at its worker's CPU time and the engine's stop flag,
 * so a kernel that works past the watchdog ends with its error (whatever
 * the host's load) and a closing device stops a running kernel promptly. */
#include "drivers/mock/mock_sass.h"

#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOCAL_SPACE (1u << 24) /* per thread: 16 MiB of local addresses (the stack starts below its top) */
#define SLICE 4096u            /* instructions a warp runs before the next warp of its CTA gets a turn */
#define CHECK_EVERY 8192u      /* instructions between looks at the clock and the stop flag */

static _Atomic uint64_t total_warp_insns, total_thread_insns;

void mock_sass_counters(uint64_t *warp_insns, uint64_t *thread_insns)
{
    *warp_insns = atomic_load(&total_warp_insns);
    *thread_insns = atomic_load(&total_thread_insns);
}

typedef struct msass_job {
    const msass_launch *l;
    atomic_bool stop;
    pthread_mutex_t lock;
    pthread_cond_t slot_free;
    msass_fault fault; /* the first */
    int status;
    uint64_t groups;
    uint32_t nslots;
    uint64_t slots_used; /* bit per slot */
} msass_job;

/* ** operands */
static const uint32_t zero_row[32];

/* rows per warp: the registers, 4 rows of slack (a pair or quad at the
 * last register), and a sink for writes to RZ */
#define ROWS(regs) ((size_t)(regs) + 5)
static uint32_t *sink(msass_warp *w, uint32_t regs) { return w->r + ((size_t)regs + 4) * 32; }

/* a row of one value: every lane, not only the active ones (a loop the compiler makes a few vector stores;
 * the lanes outside the instruction's mask are never read as its operands) */
static inline const uint32_t *fill(uint32_t *t, uint32_t v)
{
    for (int i = 0; i < 32; i++) t[i] = v;
    return t;
}

/* constant bank words at the operand's offset + extra, per lane (the
 * program is shared by every worker: nothing here may write it) */
const uint32_t *msass_cbank(msass_op *o, unsigned k, unsigned slot, uint32_t extra)
{
    const sass_opnd *x = &o->in->o[k];
    const msass_launch *l = o->wk->l;
    uint32_t *t = o->tmp[slot], bank = x->reg;
    if (!(x->flags & SASS_F_IDX_R)) { /* the same word for every lane */
        uint64_t off = (uint32_t)((uint32_t)x->imm + extra);
        if (x->flags & SASS_F_IDX_UR) off += o->w->ur[x->reg2];
        uint32_t v = 0;
        if (bank < 18 && l->cb[bank] && off + 4 <= l->cb_size[bank]) memcpy(&v, l->cb[bank] + off, 4);
        return fill(t, v);
    }
    for (int i = 0; i < 32; i++) {
        uint64_t off = (uint32_t)((uint32_t)x->imm + extra);
        if (x->flags & SASS_F_IDX_R) off += x->reg2 == 255 ? 0 : o->w->r[(size_t)x->reg2 * 32 + i];
        if (x->flags & SASS_F_IDX_UR) off += o->w->ur[x->reg2];
        uint32_t v = 0;
        if (bank < 18 && l->cb[bank] && off + 4 <= l->cb_size[bank]) memcpy(&v, l->cb[bank] + off, 4);
        t[i] = v; /* outside the bank: 0, as hardware reads unbound constant memory */
    }
    return t;
}

const uint32_t *msass_src(msass_op *o, unsigned k, unsigned slot)
{
    const sass_opnd *x = &o->in->o[k];
    uint32_t *t = o->tmp[slot];
    switch (x->kind) {
    case SASS_K_R:
        if (x->reg == 255) return zero_row;
        return o->w->r + (size_t)x->reg * 32;
    case SASS_K_UR: return fill(t, o->w->ur[x->reg]); /* broadcast */
    case SASS_K_IMM: return fill(t, (uint32_t)x->imm);
    case SASS_K_CBANK: return msass_cbank(o, k, slot, 0);
    case SASS_K_P: { /* a predicate as a value (SEL's, IADD3.X's carry): 1 or 0 */
        uint32_t m = msass_pred(o, k);
        for (int i = 0; i < 32; i++) t[i] = (m >> i) & 1;
        return t;
    }
    default:
        for (int i = 0; i < 32; i++) t[i] = 0;
        return t;
    }
}

const uint32_t *msass_src_hi(msass_op *o, unsigned k, unsigned slot)
{
    const sass_opnd *x = &o->in->o[k];
    uint32_t *t = o->tmp[slot];
    switch (x->kind) {
    case SASS_K_R:
        if (x->reg == 255) return zero_row;
        return o->w->r + (size_t)(x->reg + 1) * 32;
    case SASS_K_UR: return fill(t, x->reg == 63 ? 0 : o->w->ur[x->reg + 1]);
    case SASS_K_IMM: return fill(t, (uint32_t)(x->imm >> 32));
    case SASS_K_CBANK: return msass_cbank(o, k, slot, 4);
    default:
        for (int i = 0; i < 32; i++) t[i] = 0;
        return t;
    }
}

static uint32_t *udst(msass_op *o, uint32_t reg)
{
    uint32_t *t = o->tmp[4 + o->nud];
    o->ud[o->nud].reg = reg;
    o->ud[o->nud].row = t;
    o->nud++;
    return t;
}

uint32_t *msass_dst(msass_op *o, unsigned k)
{
    const sass_opnd *x = &o->in->o[k];
    uint32_t regs = o->wk->l->regs;
    if (x->kind == SASS_K_UR) return udst(o, x->reg);
    if (x->kind != SASS_K_R || x->reg == 255) return sink(o->w, regs);
    return o->w->r + (size_t)x->reg * 32;
}

uint32_t *msass_dst_hi(msass_op *o, unsigned k)
{
    const sass_opnd *x = &o->in->o[k];
    uint32_t regs = o->wk->l->regs;
    if (x->kind == SASS_K_UR) return udst(o, x->reg == 63 ? 63 : x->reg + 1);
    if (x->kind != SASS_K_R || x->reg == 255) return sink(o->w, regs);
    return o->w->r + (size_t)(x->reg + 1) * 32;
}

uint32_t msass_pred(msass_op *o, unsigned k)
{
    const sass_opnd *x = &o->in->o[k];
    uint32_t m;
    if (x->kind == SASS_K_P) m = o->w->p[x->reg & 7];
    else if (x->kind == SASS_K_UP) m = (o->w->up >> (x->reg & 7)) & 1 ? 0xffffffffu : 0;
    else return 0;
    return x->flags & SASS_F_NOT ? ~m : m;
}

void msass_pred_set(msass_op *o, unsigned k, uint32_t mask)
{
    const sass_opnd *x = &o->in->o[k];
    if (x->kind == SASS_K_P && x->reg < 7) o->w->p[x->reg] = (o->w->p[x->reg] & ~o->exec) | (mask & o->exec);
    else if (x->kind == SASS_K_UP && x->reg < 7 && o->exec) {
        uint32_t lane = (uint32_t)__builtin_ctz(o->exec);
        o->w->up = (o->w->up & ~(1u << x->reg)) | (((mask >> lane) & 1) << x->reg);
    }
}

bool msass_uniform(const sass_insn *in)
{
    switch (in->op) {
    case SASS_OP_UMOV: case SASS_OP_USEL: case SASS_OP_S2UR: case SASS_OP_ULDC: case SASS_OP_UPLOP3:
    case SASS_OP_UIADD3: case SASS_OP_UIMAD: case SASS_OP_ULEA: case SASS_OP_ULOP3: case SASS_OP_USHF:
    case SASS_OP_USHL: case SASS_OP_USHR: case SASS_OP_UPRMT: case SASS_OP_UISETP: case SASS_OP_UIMNMX:
    case SASS_OP_UPOPC: case SASS_OP_UFLO: case SASS_OP_UBREV: case SASS_OP_UBMSK: case SASS_OP_USGXT:
    case SASS_OP_UP2UR: return true;
    default: return false;
    }
}

/* ** faults */
void msass_where(const msass_op *o, uint32_t lane, char *buf, size_t size)
{
    const msass_worker *wk = o->wk;
    uint32_t t = o->w->first_thread + lane, bx = wk->l->block[0], by = wk->l->block[1];
    snprintf(buf, size, "kernel `%s`, instruction `%s` at 0x%llx (code offset 0x%x), thread (%u,%u,%u) of block "
             "(%u,%u,%u)", wk->l->kernel, wk->l->p->strings + o->in->text,
             (unsigned long long)(wk->l->code_va + (uint64_t)o->pc * 16), o->pc * 16, t % bx, t / bx % by, t / bx / by,
             wk->ctaid[0], wk->ctaid[1], wk->ctaid[2]);
}

static void where(const msass_op *o, char *buf, size_t size)
{
    msass_where(o, o->exec ? (uint32_t)__builtin_ctz(o->exec) : o->active ? (uint32_t)__builtin_ctz(o->active) : 0,
                buf, size);
}

int msass_fail(msass_op *o, int kind, uint64_t va, bool write, const char *fmt, ...)
{
    msass_worker *wk = o->wk;
    if (wk->status) return wk->status;
    char what[480], at[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    where(o, at, sizeof at);
    snprintf(wk->fault.what, sizeof wk->fault.what, "%.400s: %.480s", at, what);
    wk->fault.kind = kind;
    wk->fault.va = va;
    wk->fault.write = write;
    wk->status = kind;
    if (kind == MSASS_MEMCHECK) base_memcheck_report("%s", wk->fault.what);
    return kind;
}

/* memcheck refused global accesses of the instruction's lanes (each
 * reported already): the kernel stops here, its fault the first of them */
static int memcheck_stop(msass_op *o)
{
    msass_worker *wk = o->wk;
    if (wk->status) return wk->status;
    if (o->mc_bad > 1)
        snprintf(wk->fault.what, sizeof wk->fault.what, "memcheck: %.780s (and %u more lanes of the instruction)",
                 o->mc_msg, o->mc_bad - 1);
    else
        snprintf(wk->fault.what, sizeof wk->fault.what, "memcheck: %.780s", o->mc_msg);
    wk->fault.kind = MSASS_MEMCHECK;
    wk->fault.va = o->mc_va;
    wk->fault.write = o->mc_write;
    return wk->status = MSASS_MEMCHECK;
}

/* ** control flow */
static uint32_t target_of(msass_op *o) { return o->in->target; }

/* lanes of exec go to pc t, the other active lanes to the next instruction */
static void branch(msass_op *o, uint32_t taken, uint32_t t)
{
    msass_warp *w = o->w;
    for (uint32_t m = o->active; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(m);
        w->pc[i] = (taken >> i) & 1 ? t : o->pc + 1;
    }
    if (taken && taken != o->active) w->diverged = true;
}

static int control(msass_op *o, bool *handled)
{
    msass_warp *w = o->w;
    const sass_insn *in = o->in;
    const msass_launch *l = o->wk->l;
    *handled = true;
    switch (in->op) {
    case SASS_OP_BRA: {
        uint32_t taken = o->exec;
        unsigned k = 0;
        if (in->nops >= 2 && (in->o[0].kind == SASS_K_P || in->o[0].kind == SASS_K_UP)) /* BRA P1, target */
            taken &= msass_pred(o, k++);
        if (sass_has(in, SASS_M_DIV)) { /* BRA.DIV URx: taken when lanes of the mask are not all here */
            uint32_t mask = in->o[0].kind == SASS_K_UR ? w->ur[in->o[0].reg] : 0xffffffffu;
            if (in->o[0].kind == SASS_K_UR && in->o[0].reg == 63) mask = 0;
            mask &= w->live;
            taken = (o->active & mask) != mask ? o->exec : 0;
        }
        if (target_of(o) >= l->p->ninsns && taken)
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: the branch leaves the kernel's %u "
                              "instructions", l->p->ninsns);
        branch(o, taken, target_of(o));
        return 0;
    }
    case SASS_OP_CALL:
        if (target_of(o) >= l->p->ninsns && o->exec)
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: the call leaves the kernel's code");
        branch(o, o->exec, target_of(o));
        return 0;
    case SASS_OP_RET:
    case SASS_OP_BRX:
    case SASS_OP_JMP: {
        /* RET.REL Rx base, BRX Rx base: to the code offset Rx + base, per lane */
        if (in->op == SASS_OP_JMP || in->nops < 1 || in->o[0].kind != SASS_K_R) break;
        int64_t base = in->nops > 1 && (in->o[1].kind == SASS_K_IMM || in->o[1].kind == SASS_K_TARGET)
                           ? (int64_t)in->o[1].imm : 0;
        const uint32_t *r = msass_src(o, 0, 0);
        for (uint32_t m = o->active; m; m &= m - 1) {
            uint32_t i = (uint32_t)__builtin_ctz(m);
            if (!((o->exec >> i) & 1)) {
                w->pc[i] = o->pc + 1;
                continue;
            }
            int64_t t = (int64_t)r[i] + base;
            if (t < 0 || t % 16 || (uint64_t)t / 16 >= l->p->ninsns)
                return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: %s to code offset 0x%llx, outside "
                                  "the kernel", sass_op_name(in->op), (unsigned long long)t);
            w->pc[i] = (uint32_t)(t / 16);
        }
        if (o->exec != o->active) w->diverged = true;
        else {
            uint32_t first = w->pc[__builtin_ctz(o->active)];
            for (uint32_t m = o->active; m; m &= m - 1)
                if (w->pc[__builtin_ctz(m)] != first) w->diverged = true;
        }
        return 0;
    }
    case SASS_OP_EXIT:
    case SASS_OP_KILL:
        w->live &= ~o->exec;
        for (uint32_t m = o->active & ~o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
        if (o->exec && w->live) w->diverged = true; /* the rest may be elsewhere */
        return 0;
    case SASS_OP_BSSY:
        if (in->nops >= 1 && in->o[0].kind == SASS_K_B) w->bmask[in->o[0].reg & 15] = o->active;
        break;
    case SASS_OP_BREAK:
        if (in->nops >= 1 && in->o[0].kind == SASS_K_B) w->bmask[in->o[0].reg & 15] &= ~o->exec;
        break;
    case SASS_OP_BSYNC: {
        /* BSYNC Bx: the lanes wait until every live lane BSSY put in Bx (less those that left by BREAK) is
         * here (CUDA Binary Utilities: "synchronize threads on a convergence barrier"). A lane may be behind
         * at a higher PC than this one (in a called function), which the lowest-PC rule alone would pass
         * by: then a uniform instruction after the BSYNC ran once per group of lanes (difftest seed 5040) */
        if (in->nops < 1 || in->o[0].kind != SASS_K_B || !o->exec) break;
        uint32_t b = in->o[0].reg & 15, at = o->exec;
        for (uint32_t m = w->blocked; m; m &= m - 1)
            if (w->pc[__builtin_ctz(m)] == o->pc) at |= 1u << __builtin_ctz(m);
        if (w->diverged && (w->bmask[b] & w->live & ~at)) {
            w->blocked |= o->exec;
            for (uint32_t m = o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc;
            for (uint32_t m = o->active & ~o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
            return 0;
        }
        for (uint32_t m = at & ~o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
        w->blocked &= ~at;
        break;
    }
    case SASS_OP_WARPSYNC:
        /* the lanes meet by the lowest-PC rule: nothing to wait for here */
        break;
    case SASS_OP_BMOV:
        if (in->nops == 2 && in->o[0].kind == SASS_K_R && in->o[1].kind == SASS_K_B) {
            uint32_t *d = msass_dst(o, 0), b = in->o[1].reg & 15;
            for (uint32_t m = o->exec; m; m &= m - 1) d[__builtin_ctz(m)] = w->bmask[b];
            if (sass_has(in, SASS_M_CLEAR) && o->exec) w->bmask[b] = 0;
        } else if (in->nops == 2 && in->o[0].kind == SASS_K_B) {
            const uint32_t *s = msass_src(o, 1, 0);
            if (o->exec) w->bmask[in->o[0].reg & 15] = s[__builtin_ctz(o->exec)];
        } else {
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: BMOV with these operands is not "
                              "implemented by the mock's SASS executor");
        }
        break;
    case SASS_OP_BAR: {
        if (!o->exec) break;
        bool red = sass_has(in, SASS_M_RED);
        if (!red && !sass_has(in, SASS_M_SYNC) && !sass_has(in, SASS_M_ARV))
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: this BAR form is not implemented by "
                              "the mock's SASS executor");
        uint32_t id = 0;
        if (in->nops >= 1) id = msass_src(o, 0, 0)[__builtin_ctz(o->exec)];
        if (in->nops >= 2 && !(red && in->nops == 2 && (in->o[1].kind == SASS_K_P || in->o[1].kind == SASS_K_UP)))
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: BAR with a thread count is not "
                              "implemented by the mock's SASS executor");
        if (red) { /* BAR.RED.{POPC,AND,OR} id, P: the CTA's reduction of P, read by B2R.RESULT after */
            msass_worker *wk = o->wk;
            int kind = sass_has(in, SASS_M_POPC) ? SASS_M_POPC : sass_has(in, SASS_M_AND) ? SASS_M_AND
                       : sass_has(in, SASS_M_OR)  ? SASS_M_OR : -1;
            if (kind < 0)
                return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: this BAR.RED is not implemented "
                                  "by the mock's SASS executor");
            uint32_t p = in->nops == 2 ? msass_pred(o, 1) & o->exec : o->exec;
            wk->red_kind = kind;
            wk->red_count += (uint32_t)__builtin_popcount(p);
            wk->red_all = wk->red_all && p == o->exec;
            wk->red_any = wk->red_any || p;
        }
        if (id >= 16 || id >= l->barriers)
            return msass_fail(o, MSASS_BARRIER, 0, false, "illegal instruction parameter: barrier %u with QMD "
                              "BARRIER_COUNT %u", id, l->barriers);
        if (sass_has(in, SASS_M_ARV)) break; /* arrives without waiting: the CTA's round-robin settles the rest */
        for (uint32_t m = o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
        for (uint32_t m = o->active & ~o->exec; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
        w->waiting |= o->exec;
        w->bar_id = id;
        if (o->exec != o->active) w->diverged = true;
        return 0;
    }
    case SASS_OP_BPT:
        if (o->exec)
            return msass_fail(o, MSASS_TRAP, 0, false, "the kernel trapped (BPT.TRAP: a device-side assert or trap)");
        break;
    case SASS_OP_NOP: case SASS_OP_MEMBAR: case SASS_OP_FENCE: case SASS_OP_ERRBAR: case SASS_OP_CCTL:
    case SASS_OP_DEPBAR: case SASS_OP_YIELD: case SASS_OP_NANOSLEEP:
        if (in->op == SASS_OP_MEMBAR || in->op == SASS_OP_FENCE) atomic_thread_fence(memory_order_seq_cst);
        break;
    default:
        *handled = false;
        return 0;
    }
    for (uint32_t m = o->active; m; m &= m - 1) w->pc[__builtin_ctz(m)] = o->pc + 1;
    return 0;
}

/* ** one instruction of a warp */
static bool is_control(int op)
{
    switch (op) {
    case SASS_OP_BRA: case SASS_OP_CALL: case SASS_OP_RET: case SASS_OP_BRX: case SASS_OP_JMP: case SASS_OP_EXIT:
    case SASS_OP_KILL: case SASS_OP_BSSY: case SASS_OP_BREAK: case SASS_OP_BSYNC: case SASS_OP_WARPSYNC:
    case SASS_OP_BMOV: case SASS_OP_BAR: case SASS_OP_BPT: case SASS_OP_NOP: case SASS_OP_MEMBAR: case SASS_OP_FENCE:
    case SASS_OP_ERRBAR: case SASS_OP_CCTL: case SASS_OP_DEPBAR: case SASS_OP_YIELD: case SASS_OP_NANOSLEEP: return true;
    default: return false;
    }
}

/* Lanes blocked at a BSYNC go on once every live lane of its barrier is there (the others may have exited);
 * `force`: regardless (no other lane of the warp can run: the ones awaited wait at a CTA barrier, and the
 * lowest-PC rule decides as it did before convergence barriers waited) */
static void bsync_release(const msass_launch *l, msass_warp *w, bool force)
{
    uint32_t left = w->blocked;
    while (left) {
        uint32_t pc = w->pc[__builtin_ctz(left)], at = 0;
        for (uint32_t m = left; m; m &= m - 1)
            if (w->pc[__builtin_ctz(m)] == pc) at |= 1u << __builtin_ctz(m);
        left &= ~at;
        uint32_t b = l->p->insns[pc].o[0].reg & 15;
        if (force || !(w->bmask[b] & w->live & ~at)) {
            w->blocked &= ~at;
            for (uint32_t m = at; m; m &= m - 1) w->pc[__builtin_ctz(m)] = pc + 1;
        }
    }
}

/* the lowest-PC group's lanes get their PC back (pc[] is then up to date for every lane) */
static void group_flush(msass_warp *w)
{
    for (uint32_t m = w->gmask; m; m &= m - 1) w->pc[__builtin_ctz(m)] = w->gpc;
    w->gmask = 0;
}

/* A diverged warp's lowest-PC group runs on alone, instruction after instruction, until a control
 * instruction, until it reaches the PC of a lane it could meet (gnext: every other live lane at a higher PC,
 * runnable or waiting), or until a lane's state changes: the search for the lowest PC then finds the same
 * lanes at the same PC, so it is done once per such stretch, not per instruction */
static void group_find(msass_warp *w, uint32_t pc, uint32_t active)
{
    uint32_t next = UINT32_MAX;
    for (uint32_t m = w->live & ~active; m; m &= m - 1) {
        uint32_t x = w->pc[__builtin_ctz(m)];
        if (x > pc && x < next) next = x;
    }
    w->gmask = active;
    w->gpc = pc;
    w->gnext = next;
    w->glive = w->live;
    w->gwait = w->waiting;
    w->gblock = w->blocked;
}

static int step(msass_worker *wk, msass_warp *w, msass_op *o)
{
    const msass_launch *l = wk->l;
    uint32_t pc;
    uint32_t active;
    if (w->gmask && w->live == w->glive && w->waiting == w->gwait && w->blocked == w->gblock) {
        /* diverged, the same lowest-PC group as the instruction before (nothing it could release or meet) */
        pc = w->gpc;
        active = w->gmask;
    } else {
    if (w->gmask) group_flush(w);
    if (w->blocked) {
        w->blocked &= w->live;
        bsync_release(l, w, false);
        if (!(w->live & ~w->waiting & ~w->blocked)) bsync_release(l, w, true);
    }
    uint32_t run = w->live & ~w->waiting & ~w->blocked;
    if (!w->diverged) { /* every runnable lane at w->cur: the per-lane PCs are not kept up to date */
        pc = w->cur;
        active = run;
    } else {
        pc = UINT32_MAX;
        for (uint32_t m = run; m; m &= m - 1) {
            uint32_t x = w->pc[__builtin_ctz(m)];
            if (x < pc) pc = x;
        }
        active = 0;
        for (uint32_t m = run; m; m &= m - 1) {
            uint32_t i = (uint32_t)__builtin_ctz(m);
            if (w->pc[i] == pc) active |= 1u << i;
        }
        /* converged again when every live lane is here, those waiting at a barrier (or BSYNC) included: a converged
         * warp keeps one PC for all of them (a lane that waits at BAR.SYNC while the others return from a
         * call is not at the RET, and making it so looped the RET forever: difftest seed 5014) */
        bool here = active == run;
        for (uint32_t m = w->live & ~run; here && m; m &= m - 1)
            if (w->pc[__builtin_ctz(m)] != pc) here = false;
        if (here) {
            w->diverged = false;
            w->cur = pc;
        } else if (active) {
            group_find(w, pc, active);
        }
    }
    }
    o->w = w;
    o->pc = pc;
    o->active = active;
    o->nud = 0;
    o->mc_bad = 0;
    if (pc >= l->p->ninsns) {
        o->in = &(sass_insn){.op = SASS_OP_UNKNOWN};
        return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: execution ran past the kernel's %u "
                          "decoded instructions", l->p->ninsns);
    }
    const sass_insn *in = o->in = &l->p->insns[pc];
    uint32_t g = in->guard & 7, exec;
    if (in->guard & 0x08) exec = (w->up >> g) & 1 ? active : 0;
    else exec = w->p[g] & active;
    if (in->guard & 0x10) exec = active & ~exec;
    o->exec = exec;
    wk->executed++;
    wk->lanes += (uint32_t)__builtin_popcount(active);
    if (in->op == SASS_OP_UNKNOWN)
        return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: the mock's SASS executor does not "
                          "implement `%s`", l->p->strings[in->text] ? l->p->strings + in->text : "(undecodable word)");
    bool handled, converged = !w->diverged;
    if (is_control(in->op)) { /* control works on lanes' PCs */
        if (converged)
            for (uint32_t m = w->live; m; m &= m - 1) w->pc[__builtin_ctz(m)] = pc;
        else if (w->gmask)
            group_flush(w);
    }
    int rc = control(o, &handled);
    if (handled) {
        if (!rc && !w->diverged && w->live) w->cur = w->pc[__builtin_ctz(w->live)]; /* waiting lanes: past the BAR */
        return rc;
    }
    if (exec) {
        if (msass_uniform(in)) o->exec = exec = 1u << __builtin_ctz(exec); /* one value for the warp */
        rc = msass_alu(o);
        if (rc < 0) rc = msass_mem(o);
        if (rc < 0) rc = msass_mma(o);
        if (rc < 0)
            return msass_fail(o, MSASS_ILLEGAL, 0, false, "illegal instruction: the mock's SASS executor does not "
                              "implement `%s`", l->p->strings + in->text);
        if (rc) return rc;
        if (o->mc_bad) return memcheck_stop(o);
        if (o->nud && exec) {
            uint32_t lane = (uint32_t)__builtin_ctz(exec);
            for (uint32_t i = 0; i < o->nud; i++)
                if (o->ud[i].reg < 63) w->ur[o->ud[i].reg] = o->ud[i].row[lane];
        }
    }
    if (converged) w->cur = pc + 1;
    else if (w->gmask) {
        if (++w->gpc >= w->gnext) group_flush(w); /* it meets other lanes: look again */
    } else
        for (uint32_t m = active; m; m &= m - 1) w->pc[__builtin_ctz(m)] = pc + 1;
#ifdef MSASS_TRACE /* a developer's trace of warp 0 (make CPPFLAGS=-DMSASS_TRACE) */
    if (w->warp_id == 0) {
        fprintf(stderr, "%04x act %08x exec %08x %-40s", pc * 16, active, exec, l->p->strings + in->text);
        if (in->nops && in->o[0].kind == SASS_K_R && in->o[0].reg != 255)
            fprintf(stderr, " -> %08x %08x %08x", w->r[in->o[0].reg * 32], w->r[in->o[0].reg * 32 + 1], w->r[in->o[0].reg * 32 + 2]);
        if (in->nops > 1 && in->o[1].kind == SASS_K_R && in->o[1].reg != 255)
            fprintf(stderr, " | %08x %08x %08x", w->r[in->o[1].reg * 32], w->r[in->o[1].reg * 32 + 1], w->r[in->o[1].reg * 32 + 2]);
        fprintf(stderr, "\n");
    }
#endif
    return 0;
}

/* registers out of range would read other warps' state: refused before the
 * first instruction runs */
static int check_regs(msass_worker *wk)
{
    const msass_launch *l = wk->l;
    for (uint32_t i = 0; i < l->p->ninsns; i++) {
        const sass_insn *in = &l->p->insns[i];
        for (unsigned k = 0; k < in->nops; k++) {
            const sass_opnd *x = &in->o[k];
            uint32_t top = 0;
            if (x->kind == SASS_K_R && x->reg != 255) top = x->reg + 4; /* up to a 128-bit quad */
            if ((x->kind == SASS_K_MEM && !(x->flags & SASS_F_BASE_UR)) && x->reg != 255) top = x->reg + 2;
            if (x->kind == SASS_K_CBANK && (x->flags & SASS_F_IDX_R) && x->reg2 != 255) top = x->reg2 + 1u;
            /* quads and pairs may end at the last register: only the first must exist */
            uint32_t first = x->kind == SASS_K_CBANK ? x->reg2 : x->reg;
            if (top && first >= l->regs) {
                msass_op o = {.wk = wk, .w = &wk->warps[0], .in = in, .pc = i};
                return msass_fail(&o, MSASS_ILLEGAL, 0, false, "illegal instruction: register R%u beyond the QMD's "
                                  "REGISTER_COUNT %u", first, l->regs);
            }
        }
    }
    return 0;
}

/* the worker's CPU time: the watchdog counts the work a launch did, not
 * the time a loaded host took to give it the cores */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ** a CTA */
static int run_cta(msass_worker *wk, msass_job *run)
{
    const msass_launch *l = wk->l;
    uint32_t threads = l->block[0] * l->block[1] * l->block[2];
    size_t rows = ROWS(l->regs);
    memset(wk->regfile, 0, rows * 32 * 4 * wk->nwarps);
    memset(wk->shared, 0, l->shared_bytes); /* hardware leaves it undefined; zero keeps runs repeatable */
    wk->red_count = wk->red_result = 0;
    wk->red_all = true;
    wk->red_any = false;
    wk->red_kind = -1;
    if (l->memcheck) {
        memset(wk->mc_init, 0, l->shared_bytes);
        memset(wk->mc_writer, 0, (size_t)l->shared_bytes * 4);
        memset(wk->mc_reader, 0, (size_t)l->shared_bytes * 4);
    }
    for (uint32_t i = 0; i < wk->nwarps; i++) {
        msass_warp *w = &wk->warps[i];
        memset(w, 0, sizeof *w);
        w->r = wk->regfile + rows * 32 * i;
        w->warp_id = i;
        w->first_thread = i * 32;
        w->live = msass_lanes_of(threads - i * 32);
        w->p[7] = 0xffffffffu;
        w->up = 0x80;
        w->cur = 0;
    }
    msass_op o = {.wk = wk};
    for (;;) {
        bool ran = false, all_done = true;
        for (uint32_t i = 0; i < wk->nwarps; i++) {
            msass_warp *w = &wk->warps[i];
            if (!w->live) continue;
            all_done = false;
            for (uint32_t n = 0; n < SLICE && (w->live & ~w->waiting); n++) {
                int rc = step(wk, w, &o);
                if (rc) return rc;
                ran = true;
                if ((wk->executed & (CHECK_EVERY - 1)) == 0) {
                    if (atomic_load_explicit(&run->stop, memory_order_relaxed)) return MSASS_CANCELLED;
                    if (l->cancel && __atomic_load_n((const int *)l->cancel, __ATOMIC_RELAXED)) return MSASS_CANCELLED;
                    if (l->watchdog_ns && thread_cpu_ns() - wk->cpu_start > l->watchdog_ns)
                        return msass_fail(&o, MSASS_WATCHDOG, 0, false, "the kernel ran past the %llu ms watchdog "
                                          "and was stopped",
                                          (unsigned long long)(l->watchdog_ns / 1000000));
                }
            }
        }
        if (all_done) return 0;
        /* everyone left is at a barrier: release it */
        bool all_wait = true;
        for (uint32_t i = 0; i < wk->nwarps; i++)
            if (wk->warps[i].live & ~wk->warps[i].waiting) all_wait = false;
        if (all_wait) {
            for (uint32_t i = 0; i < wk->nwarps; i++) wk->warps[i].waiting = 0;
            /* a BAR.RED's result, for every thread's B2R.RESULT */
            wk->red_result = wk->red_kind == SASS_M_POPC ? wk->red_count
                           : wk->red_kind == SASS_M_AND  ? (uint32_t)wk->red_all
                                                         : (uint32_t)wk->red_any;
            wk->red_count = 0;
            wk->red_all = true;
            wk->red_any = false;
            if (l->memcheck) { /* a new epoch: what was done before the barrier races with nothing after it */
                memset(wk->mc_writer, 0, (size_t)l->shared_bytes * 4);
                memset(wk->mc_reader, 0, (size_t)l->shared_bytes * 4);
            }
            continue;
        }
        if (!ran) return 0; /* unreachable: someone could run */
    }
}

/* ** the launch */
static uint32_t take_slot(msass_job *run)
{
    pthread_mutex_lock(&run->lock);
    for (;;) {
        for (uint32_t i = 0; i < run->nslots; i++)
            if (!(run->slots_used >> i & 1)) {
                run->slots_used |= 1ull << i;
                pthread_mutex_unlock(&run->lock);
                return i;
            }
        pthread_cond_wait(&run->slot_free, &run->lock);
    }
}

static void give_slot(msass_job *run, uint32_t s)
{
    pthread_mutex_lock(&run->lock);
    run->slots_used &= ~(1ull << s);
    pthread_cond_signal(&run->slot_free);
    pthread_mutex_unlock(&run->lock);
}

static void record(msass_job *run, msass_worker *wk, int rc)
{
    pthread_mutex_lock(&run->lock);
    if (!run->status || (run->status == MSASS_CANCELLED && rc != MSASS_CANCELLED)) {
        run->status = rc;
        if (rc != MSASS_CANCELLED) run->fault = wk->fault;
    }
    pthread_mutex_unlock(&run->lock);
    atomic_store(&run->stop, true);
}

static hcq_status run_groups(void *ctx, uint64_t begin, uint64_t end)
{
    msass_job *run = ctx;
    const msass_launch *l = run->l;
    if (atomic_load(&run->stop)) return HCQ_EFAULT;
    uint32_t threads = l->block[0] * l->block[1] * l->block[2];
    msass_worker wk = {.l = l, .run = run, .nwarps = (threads + 31) / 32, .cpu_start = thread_cpu_ns()};
    size_t rows = ROWS(l->regs);
    wk.regfile = malloc(rows * 32 * 4 * wk.nwarps);
    wk.warps = calloc(wk.nwarps, sizeof *wk.warps);
    wk.shared = malloc(l->shared_bytes ? l->shared_bytes : 1);
    wk.ranges = calloc(l->p->ninsns, sizeof *wk.ranges);
    size_t sb = l->shared_bytes ? l->shared_bytes : 1;
    if (l->memcheck) {
        wk.mc_init = malloc(sb);
        wk.mc_writer = malloc(sb * 4);
        wk.mc_reader = malloc(sb * 4);
    }
    int rc = 0;
    if (!wk.regfile || !wk.warps || !wk.shared || !wk.ranges ||
        (l->memcheck && (!wk.mc_init || !wk.mc_writer || !wk.mc_reader))) {
        snprintf(wk.fault.what, sizeof wk.fault.what, "the mock ran out of host memory for a CTA of kernel `%s`",
                 l->kernel);
        rc = MSASS_NOMEM;
    }
    bool slot = !rc;
    if (slot) wk.slot = take_slot(run);
    for (uint64_t g = begin; g < end && !rc; g++) {
        if (atomic_load_explicit(&run->stop, memory_order_relaxed)) break;
        if (l->cancel && __atomic_load_n((const int *)l->cancel, __ATOMIC_RELAXED)) { /* (the engine's stop flag, an atomic) */
            rc = MSASS_CANCELLED;
            break;
        }
        wk.ctaid[0] = (uint32_t)(g % l->grid[0]);
        wk.ctaid[1] = (uint32_t)(g / l->grid[0] % l->grid[1]);
        wk.ctaid[2] = (uint32_t)(g / l->grid[0] / l->grid[1]);
        if (g == begin && (rc = check_regs(&wk))) break;
        rc = run_cta(&wk, run);
    }
    if (slot) give_slot(run, wk.slot);
    atomic_fetch_add_explicit(&total_warp_insns, wk.executed, memory_order_relaxed);
    atomic_fetch_add_explicit(&total_thread_insns, wk.lanes, memory_order_relaxed);
    if (rc) record(run, &wk, rc);
    free(wk.regfile);
    free(wk.warps);
    free(wk.shared);
    free(wk.ranges);
    free(wk.mc_init);
    free(wk.mc_writer);
    free(wk.mc_reader);
    return rc ? HCQ_EFAULT : HCQ_OK;
}

int msass_run(const msass_launch *l, msass_fault *f)
{
    memset(f, 0, sizeof *f);
    uint64_t groups = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    uint32_t threads = l->block[0] * l->block[1] * l->block[2];
    if (!groups || !threads) return MSASS_OK;
    mock_gpu *gpu = l->gpu;
    msass_job run = {.l = l, .groups = groups};
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.slot_free, NULL);

    mock_kernels_begin();
    pthread_mutex_lock(&gpu->pool_lock); /* one launch at a time per GPU's pool */
    if (!gpu->pool) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        gpu->pool = drv_pool_create(n > 0 ? (unsigned)n : 1);
    }
    unsigned nthreads = gpu->pool ? drv_pool_threads(gpu->pool) : 1;
    /* each worker runs its CTAs in its own part of the local-memory buffer */
    uint64_t per_cta = (uint64_t)threads * (l->local_low + l->local_high);
    uint64_t fit = per_cta ? l->local_buf_size / per_cta : 64;
    run.nslots = (uint32_t)BASE_MIN(BASE_MIN((uint64_t)nthreads, 64), fit);
    int status;
    if (!run.nslots) {
        status = MSASS_LOCAL;
        snprintf(run.fault.what, sizeof run.fault.what, "kernel `%s`: the local-memory buffer (%llu bytes) cannot hold "
                 "the %u bytes per thread of one block of %u threads", l->kernel,
                 (unsigned long long)l->local_buf_size, l->local_low + l->local_high, threads);
        run.fault.va = l->local_buf;
    } else {
        uint64_t chunk = groups < 4 * (uint64_t)nthreads || !gpu->pool ? groups : BASE_MAX(1, groups / (4 * nthreads));
        if (gpu->pool) drv_pool_run(gpu->pool, groups, chunk, run_groups, &run);
        else run_groups(&run, 0, groups);
        status = run.status;
    }
    pthread_mutex_unlock(&gpu->pool_lock);
    mock_kernels_end();
    *f = run.fault;
    f->kind = status;
    pthread_cond_destroy(&run.slot_free);
    pthread_mutex_destroy(&run.lock);
    return status;
}
