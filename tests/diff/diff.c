/* The differential runner (diff.h): buffers, engines, comparison and the
 * shrinker. */
#include "tests/diff/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/cc.h"
#include "compiler/cpu_abi.h"
#include "compiler/interp.h"
#include "compiler/ir.h"
#include "compiler/ir_float.h"
#include "compiler/sass.h"
#include "compiler/twin.h"
#include "compiler/verify.h"
#include "drivers/mock/mock.h"
#include "hcq/hcq.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"

/* ** buffers: [guard][slack | elements][guard], mapped shared so a child
 * process's writes come back. The slack (the page's bytes before the
 * elements) starts as the same bytes everywhere and is compared too, so a
 * write just before a buffer shows. */
#define GUARD_BYTES (64u << 10)

typedef struct dbuf {
    uint8_t *map;
    size_t map_len;
    uint8_t *rw;    /* the accessible part */
    size_t rw_len;
    uint8_t *start; /* first element (index -bias) */
    uint8_t *ptr;   /* element 0: what the kernel gets */
    size_t bytes;   /* (bias + count) elements */
} dbuf;

typedef struct dset {
    dbuf b[IRG_MAX_PARAMS];
    uint8_t kernargs[1024];
    uint32_t kernarg_size;
    const irg_case *c;
} dset;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static void dset_free(dset *d)
{
    for (uint32_t i = 0; i < IRG_MAX_PARAMS; i++)
        if (d->b[i].map) munmap(d->b[i].map, d->b[i].map_len);
    memset(d, 0, sizeof *d);
}

/* Fills every buffer from the case's data seed: each param's own stream,
 * so the contents of one never depend on which others exist. */
static hcq_status dset_alloc(dset *d, const irg_case *c)
{
    memset(d, 0, sizeof *d);
    d->c = c;
    size_t pg = page_size();
    hcq_param_info info[IRG_MAX_PARAMS];
    if (hcq_kernel_param_count(c->k) != c->np)
        return base_err(HCQ_EINVAL, "difftest: the kernel has %u params, the case %u", hcq_kernel_param_count(c->k), c->np);
    d->kernarg_size = hcq_kernel_param_layout(c->k, info);
    if (d->kernarg_size > sizeof d->kernargs) return base_err(HCQ_ELIMIT, "difftest: kernargs of %u bytes", d->kernarg_size);
    for (uint32_t i = 0; i < c->np; i++) {
        const irg_param *p = &c->p[i];
        uint64_t s = c->data_seed ^ ((uint64_t)(p->id + 1) * 0xD1B54A32D192ED03ull);
        if (p->role == IRG_SCALAR) {
            memcpy(d->kernargs + info[i].offset, &p->bits, info[i].size);
            continue;
        }
        dbuf *b = &d->b[i];
        size_t es = hcq_dtype_size(p->dt);
        b->bytes = ((size_t)p->bias + p->count) * es;
        b->rw_len = (b->bytes + pg - 1) / pg * pg;
        if (!b->rw_len) b->rw_len = pg;
        b->map_len = b->rw_len + 2 * GUARD_BYTES;
        void *m = mmap(NULL, b->map_len, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            dset_free(d);
            return base_err(HCQ_ENOMEM, "difftest: mmap of %zu bytes: %s", b->map_len, strerror(errno));
        }
        b->map = m;
        b->rw = b->map + GUARD_BYTES;
        if (mprotect(b->rw, b->rw_len, PROT_READ | PROT_WRITE) != 0) {
            dset_free(d);
            return base_err(HCQ_ENOMEM, "difftest: mprotect: %s", strerror(errno));
        }
        b->start = b->rw + b->rw_len - b->bytes;
        b->ptr = b->start + (size_t)p->bias * es;
        memset(b->rw, 0xa5, b->rw_len - b->bytes);
        for (size_t e = 0; e < (size_t)p->bias + p->count; e++) irg_fill_elem(&s, p->dt, b->start + e * es);
        uint64_t addr = (uint64_t)(uintptr_t)b->ptr;
        memcpy(d->kernargs + info[i].offset, &addr, 8);
    }
    return HCQ_OK;
}

/* ** the interpreter, with every global access checked against the case's
 * buffers (the compiled engines have the guard regions instead) */
static bool check_access(void *ctx, const hcq_interp_access *a, char *why, size_t why_size)
{
    const dset *d = ctx;
    if (a->param >= d->c->np || d->c->p[a->param].role == IRG_SCALAR) {
        snprintf(why, why_size, "param %u is not a buffer of the case", a->param);
        return false;
    }
    const dbuf *b = &d->b[a->param];
    uint64_t lo = (uint64_t)(uintptr_t)b->start, hi = lo + b->bytes;
    if (a->addr >= lo && a->addr <= hi && a->size <= hi - a->addr) return true;
    snprintf(why, why_size, "buffer %s holds [%" PRId64 ", %u)", d->c->p[a->param].label,
             -(int64_t)d->c->p[a->param].bias, d->c->p[a->param].count);
    return false;
}

static hcq_status run_interp(const irg_case *c, dset *d)
{
    hcq_interp_mem mem = {.check = check_access, .ctx = d};
    hcq_interp_launch l = {.kernargs = d->kernargs, .kernarg_size = d->kernarg_size, .mem = &mem,
                           .op_budget = 2000000000ull};
    memcpy(l.num_groups, c->ng, sizeof l.num_groups);
    memcpy(l.local_size, c->ls, sizeof l.local_size);
    return hcq_interp_run(c->k, &l);
}

/* ** engines: prepare (compile) in this process, exec in a child */
#define MSG_SIZE 2048

typedef struct engine {
    const char *name;
    const char *target; /* the twins' target name */
    /* builds what exec runs; HCQ_ENOTSUP: this engine cannot run the case */
    hcq_status (*prepare)(const struct engine *e, const irg_case *c, void **prog);
    /* runs every group, in a child process (so it may crash); a failure
     * it can describe goes to msg and exit status 5 */
    void (*exec)(const struct engine *e, void *prog, const irg_case *c, dset *d, char *msg);
    void (*release)(void *prog);
    /* ops the engine's renderer refuses (their outputs are left out) */
    bool (*refuses)(const hcq_ir_op *o);
} engine;

static hcq_status cpu_prepare(const engine *e, const irg_case *c, void **prog)
{
    (void)e;
    hcq_binary *b = NULL;
    hcq_status st = hcq_compile(c->k, "cpu", &b);
    if (st) return st;
    *prog = b;
    return HCQ_OK;
}

static void cpu_exec(const engine *e, void *prog, const irg_case *c, dset *d, char *msg)
{
    (void)e;
    hcq_binary *b = prog;
    cc_cpu_module m;
    if (cc_cpu_module_load(b->data, b->size, &m) != HCQ_OK) {
        snprintf(msg, MSG_SIZE, "cannot load the cpu object: %s", hcq_error_message());
        _exit(5);
    }
    hcq_cpu_dims dims;
    memcpy(dims.num_groups, c->ng, sizeof c->ng);
    memcpy(dims.local_size, c->ls, sizeof c->ls);
    uint64_t groups = (uint64_t)c->ng[0] * c->ng[1] * c->ng[2], half = groups / 2;
    /* two calls, as the CPU device's workers split a launch */
    if (half) m.entry(d->kernargs, &dims, 0, half);
    m.entry(d->kernargs, &dims, half, groups);
    cc_cpu_module_unload(&m);
}

static void cpu_release(void *prog) { hcq_binary_free(prog); }

/* host twins: compiled here (into the kernel cache), run in the child by
 * cc_twin_run, which finds them there */
static hcq_status twin_prepare(const engine *e, const irg_case *c, void **prog)
{
    hcq_binary *b = NULL;
    hcq_status st = cc_twin_compile(c->k, cc_twin_origin_of(e->target), e->target, &b);
    if (st) return st;
    hcq_binary_free(b);
    *prog = NULL;
    return HCQ_OK;
}

static bool check_access(void *ctx, const hcq_interp_access *a, char *why, size_t why_size);

static void twin_exec(const engine *e, void *prog, const irg_case *c, dset *d, char *msg)
{
    (void)prog;
    hcq_interp_mem mem = {.check = check_access, .ctx = d};
    hcq_interp_launch l = {.kernargs = d->kernargs, .kernarg_size = d->kernarg_size, .mem = &mem};
    memcpy(l.num_groups, c->ng, sizeof l.num_groups);
    memcpy(l.local_size, c->ls, sizeof l.local_size);
    hcq_status st = cc_twin_run(c->k, e->target, &l);
    if (st) {
        snprintf(msg, MSG_SIZE, "%s: %s", hcq_status_name(st), hcq_error_message());
        _exit(5);
    }
}

static void no_release(void *prog) { (void)prog; }

/* the mock AMD GPU's ISA executor: the code object clang makes for the
 * target (compiled here, into the kernel cache), run in the child on the
 * mock (HCQ_MOCK_SHADER=isa) through the public API: buffers copied in,
 * launched at the case's element 0, copied back */
static hcq_status isa_prepare(const engine *e, const irg_case *c, void **prog)
{
    /* the NV executor decodes with nvdisasm (or a cache filled where it is):
     * without it the engine cannot run anything, which is a skip */
    char why[600];
    if (e->target[0] == 's' && !sass_nvdisasm(why, sizeof why)) return HCQ_ENOTSUP;
    hcq_binary *b = NULL;
    hcq_status st = hcq_compile(c->k, e->target, &b);
    if (st) return st;
    *prog = b;
    return HCQ_OK;
}

/* the mock model of each target, and the device it is */
static const struct {
    const char *target, *config, *device;
} isa_models[] = {
    {"gfx1100", "amd=gfx1100", "AMD:0"}, {"gfx942", "amd=gfx942", "AMD:0"}, {"gfx90a", "amd=gfx90a", "AMD:0"},
    {"sm_90", "nv=H100", "NV:0"},        {"sm_80", "nv=A100", "NV:0"},
};

static void isa_fail(const char *what, char *msg)
{
    char detail[1024] = "";
    mock_amd_last_error(0, detail, sizeof detail); /* the AMD mock's last hang or fault; "" on NV */
    snprintf(msg, MSG_SIZE, "%s: %s%s%s", what, hcq_error_message(), detail[0] ? "; the mock: " : "", detail);
    _exit(5);
}

static void isa_exec(const engine *e, void *prog, const irg_case *c, dset *d, char *msg)
{
    hcq_binary *b = prog;
    const char *cfg = NULL, *name = NULL;
    for (size_t i = 0; i < sizeof isa_models / sizeof isa_models[0]; i++)
        if (!strcmp(isa_models[i].target, e->target)) cfg = isa_models[i].config, name = isa_models[i].device;
    if (!cfg) isa_fail("no mock model for the target", msg);
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "isa", 1);
    base_env_reload();
    sys_set(mock_sys());
    if (mock_configure(cfg)) isa_fail("mock_configure", msg);
    hcq_device *dev = hcq_device_open(name);
    if (!dev) isa_fail("opening the mock GPU", msg);
    hcq_program *p = hcq_program_load(dev, b->data, b->size);
    if (!p) isa_fail("loading the binary", msg);
    hcq_param_info info[IRG_MAX_PARAMS];
    hcq_kernel_param_layout(c->k, info);
    hcq_arg args[IRG_MAX_PARAMS];
    hcq_buffer *bufs[IRG_MAX_PARAMS] = {0};
    for (uint32_t i = 0; i < c->np; i++) {
        const irg_param *pa = &c->p[i];
        if (pa->role == IRG_SCALAR) {
            args[i] = hcq_arg_scalar(info[i].size, HCQ_IMM(pa->bits));
            continue;
        }
        dbuf *db = &d->b[i];
        bufs[i] = hcq_buffer_alloc(dev, db->bytes ? db->bytes : 4, HCQ_MEM_DEVICE);
        if (!bufs[i] || (db->bytes && hcq_buffer_copyin(bufs[i], 0, db->start, db->bytes))) isa_fail("a buffer", msg);
        args[i] = hcq_arg_addr(HCQ_IMM(hcq_buffer_va(bufs[i]) + (uint64_t)(db->ptr - db->start)));
    }
    hcq_dims dims = hcq_dims_3d(c->ng[0], c->ng[1], c->ng[2], c->ls[0], c->ls[1], c->ls[2]);
    if (hcq_launch(p, args, c->np, dims) || hcq_device_synchronize(dev)) isa_fail("the launch", msg);
    for (uint32_t i = 0; i < c->np; i++)
        if (bufs[i] && d->b[i].bytes && hcq_buffer_copyout(d->b[i].start, bufs[i], 0, d->b[i].bytes))
            isa_fail("reading back", msg);
    _exit(0); /* the child's mock goes with it */
}

static void isa_release(void *prog) { hcq_binary_free(prog); }

/* what the HIP renderer refuses: no ROCm device library (render_hip.c) */
static bool hip_refuses(const hcq_ir_op *o)
{
    return o->op == HCQ_OP_SIN || (o->dtype == HCQ_F64 && (o->op == HCQ_OP_EXP2 || o->op == HCQ_OP_LOG2));
}

static const engine engines[] = {
    {"cpu", NULL, cpu_prepare, cpu_exec, cpu_release, NULL},
    {"cuda-twin", "cuda", twin_prepare, twin_exec, no_release, NULL},
    {"hip-twin", "hip", twin_prepare, twin_exec, no_release, hip_refuses},
    {"gfx1100-isa", "gfx1100", isa_prepare, isa_exec, isa_release, hip_refuses},
    {"gfx942-isa", "gfx942", isa_prepare, isa_exec, isa_release, hip_refuses},
    {"gfx90a-isa", "gfx90a", isa_prepare, isa_exec, isa_release, hip_refuses},
    /* the cubin ptxas makes of the CUDA text, run on the NV mock's SASS executor */
    {"sm90-sass", "sm_90", isa_prepare, isa_exec, isa_release, NULL},
    {"sm80-sass", "sm_80", isa_prepare, isa_exec, isa_release, NULL},
};
#define NENGINES (sizeof engines / sizeof engines[0])
_Static_assert(NENGINES <= DIFF_MAX_ENGINES, "diff_stats holds DIFF_MAX_ENGINES engines");

unsigned diff_engines(const char **names, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < NENGINES && n < max; i++) names[n++] = engines[i].name;
    return n;
}

static bool engine_wanted(const diff_config *cfg, const char *name)
{
    if (!cfg->engines) return true;
    size_t len = strlen(name);
    for (const char *p = cfg->engines; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == len && !strncmp(p, name, n)) return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* ** outcomes */
typedef enum fkind { F_NONE, F_COMPILE, F_CRASH, F_HANG, F_VALUE, F_INVALID } fkind;

typedef struct outcome {
    fkind kind;
    char msg[2048];
    uint32_t param;   /* F_VALUE: the first differing buffer and element */
    int64_t elem;
} outcome;

static hcq_status exec_child(const engine *e, void *prog, const irg_case *c, dset *d, unsigned seconds, outcome *o)
{
    char *msg = mmap(NULL, MSG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (msg == MAP_FAILED) return base_err(HCQ_ENOMEM, "difftest: mmap: %s", strerror(errno));
    msg[0] = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(msg, MSG_SIZE);
        return base_err(HCQ_ENOMEM, "difftest: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        alarm(seconds);
        e->exec(e, prog, c, d, msg);
        _exit(0);
    }
    int status = 0;
    hcq_status st = HCQ_OK;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            st = base_err(HCQ_EIO, "difftest: waitpid: %s", strerror(errno));
            goto out;
        }
    msg[MSG_SIZE - 1] = 0;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        o->kind = sig == SIGALRM ? F_HANG : F_CRASH;
        if (sig == SIGALRM) snprintf(o->msg, sizeof o->msg, "%s did not finish within %u s", e->name, seconds);
        else snprintf(o->msg, sizeof o->msg, "%s crashed: signal %d (%s)", e->name, sig, strsignal(sig));
    } else if (WEXITSTATUS(status)) {
        o->kind = F_CRASH;
        snprintf(o->msg, sizeof o->msg, "%s failed (exit status %d)%s%s", e->name, WEXITSTATUS(status),
                 msg[0] ? ": " : "", msg);
    }
out:
    munmap(msg, MSG_SIZE);
    return st;
}

/* ** comparison */
static int64_t ordered(hcq_dtype t, uint64_t bits)
{
    unsigned w = (unsigned)hcq_dtype_size(t) * 8;
    uint64_t sign = 1ull << (w - 1), mag = bits & (sign - 1);
    return bits & sign ? -(int64_t)mag : (int64_t)mag; /* monotonic in the value; -0 and +0 are neighbours */
}

static double as_double(hcq_dtype t, uint64_t bits)
{
    switch (t) {
    case HCQ_F64: return ir_bits_f64(bits);
    case HCQ_F32: return ir_bits_f32((uint32_t)bits);
    case HCQ_F16: return ir_f16_to_f32((uint16_t)bits);
    case HCQ_BF16: return ir_bf16_to_f32((uint16_t)bits);
    default: return hcq_dtype_is_signed(t) ? (double)ir_canon(t, bits) : (double)bits;
    }
}

static bool same(const irg_param *p, uint64_t x, uint64_t y)
{
    if (x == y) return true;
    if (!hcq_dtype_is_float(p->dt)) return false;
    double a = as_double(p->dt, x), b = as_double(p->dt, y);
    if (a != a && b != b) return true;
    if (a != a || b != b || !p->ulp) return false;
    int64_t dd = ordered(p->dt, x) - ordered(p->dt, y);
    return (dd < 0 ? -dd : dd) <= p->ulp;
}

static void describe_value(char *buf, size_t size, hcq_dtype t, uint64_t bits)
{
    if (hcq_dtype_is_float(t)) snprintf(buf, size, "0x%0*" PRIx64 " (%.9g)", (int)hcq_dtype_size(t) * 2, bits, as_double(t, bits));
    else if (hcq_dtype_is_signed(t)) snprintf(buf, size, "%" PRId64, (int64_t)ir_canon(t, bits));
    else snprintf(buf, size, "%" PRIu64, bits);
}

static void compare(const irg_case *c, const dset *ref, const dset *got, const char *name, outcome *o)
{
    uint32_t T = c->ng[0] * c->ng[1] * c->ng[2] * c->ls[0] * c->ls[1] * c->ls[2];
    for (uint32_t i = 0; i < c->np; i++) {
        const irg_param *p = &c->p[i];
        if (p->role == IRG_SCALAR) continue;
        const dbuf *a = &ref->b[i], *b = &got->b[i];
        size_t slack = a->rw_len - a->bytes, es = hcq_dtype_size(p->dt);
        if (memcmp(a->rw, b->rw, slack)) {
            o->kind = F_VALUE;
            o->param = i;
            o->elem = INT64_MIN;
            snprintf(o->msg, sizeof o->msg, "%s wrote before buffer %u (%s): bytes below element %" PRId64 " changed", name,
                     i, p->label, -(int64_t)p->bias);
            return;
        }
        for (size_t e = 0; e < (size_t)p->bias + p->count; e++) {
            uint64_t x = 0, y = 0;
            memcpy(&x, a->start + e * es, es);
            memcpy(&y, b->start + e * es, es);
            if (same(p, x, y)) continue;
            char vx[64], vy[64], who[96] = "";
            describe_value(vx, sizeof vx, p->dt, x);
            describe_value(vy, sizeof vy, p->dt, y);
            int64_t idx = (int64_t)e - p->bias;
            if (p->role == IRG_OUTPUT && T && idx >= 0) {
                uint64_t gid = (uint64_t)idx % T, W = (uint64_t)c->ls[0] * c->ls[1] * c->ls[2];
                snprintf(who, sizeof who, " (store slot %" PRIu64 " of work-item %" PRIu64 ": group %" PRIu64 ", local %" PRIu64 ")",
                         (uint64_t)idx / T, gid, gid / W, gid % W);
            }
            o->kind = F_VALUE;
            o->param = i;
            o->elem = idx;
            snprintf(o->msg, sizeof o->msg, "buffer %u (%s, %s%s) element %" PRId64 "%s: interpreter %s, %s %s%s", i,
                     p->label, hcq_dtype_name(p->dt), p->role == IRG_INPUT ? ", an input" : "", idx, who, vx, name,
                     vy, p->ulp ? " (beyond the ulp bound)" : "");
            return;
        }
    }
}

/* Runs c on the interpreter and engine e and compares. F_INVALID when the
 * interpreter refuses the case (the generator's or the shrinker's fault,
 * not the engine's); *skipped when the engine cannot run it. */
static hcq_status run_one(const irg_case *c, const engine *e, const diff_config *cfg, outcome *o, bool *skipped)
{
    memset(o, 0, sizeof *o);
    *skipped = false;
    dset ref, got;
    hcq_status st = dset_alloc(&ref, c);
    if (st) return st;
    if ((st = dset_alloc(&got, c))) {
        dset_free(&ref);
        return st;
    }
    hcq_status ist = run_interp(c, &ref);
    if (ist) {
        o->kind = F_INVALID;
        snprintf(o->msg, sizeof o->msg, "the interpreter refuses the case (%s): %s", hcq_status_name(ist),
                 hcq_error_message());
        goto out;
    }
    void *prog = NULL;
    hcq_status pst = e->prepare(e, c, &prog);
    if (pst == HCQ_ENOTSUP) {
        *skipped = true;
        goto out;
    }
    if (pst) {
        o->kind = F_COMPILE;
        snprintf(o->msg, sizeof o->msg, "%s cannot build the kernel (%s): %s", e->name, hcq_status_name(pst),
                 hcq_error_message());
        goto out;
    }
    st = exec_child(e, prog, c, &got, cfg->run_seconds ? cfg->run_seconds : 20, o);
    e->release(prog);
    if (!st && o->kind == F_NONE) compare(c, &ref, &got, e->name, o);
out:
    dset_free(&ref);
    dset_free(&got);
    return st;
}

/* ** shrinking: IR rewrites, each kept when the same engine still fails
 * the same way and the interpreter still accepts the case */
static bool is_value_op(const hcq_ir_op *o)
{
    switch (ir_op_class((hcq_op)o->op)) {
    case IR_C_UNARY:
    case IR_C_BINARY:
    case IR_C_TERNARY:
    case IR_C_CONVERT: return true;
    default: return o->op == HCQ_OP_LOAD || o->op == HCQ_OP_CONST || o->op == HCQ_OP_SPECIAL;
    }
}

/* Builds the case without the ops marked in drop, with each use of op i
 * replaced by subst[i] where that is not NONE; unused params go too and
 * the rest are renumbered. */
static hcq_status rebuild(const irg_case *c, const uint8_t *drop, const hcq_ir_ref *subst, irg_case *out)
{
    const hcq_kernel *k = c->k;
    hcq_ir_ref *map = malloc(k->nops * sizeof *map);
    hcq_kernel *nk = hcq_kernel_create(k->name);
    if (!map || !nk) {
        free(map);
        hcq_kernel_destroy(nk);
        return base_err(HCQ_ENOMEM, "difftest: out of memory shrinking");
    }
    *out = *c;
    out->np = 0;
    for (uint32_t i = 0; i < k->nops; i++) {
        map[i] = HCQ_IR_NONE;
        if (drop[i]) continue;
        hcq_ir_op o = k->ops[i];
        for (unsigned j = 0; j < o.nsrc; j++) {
            hcq_ir_ref s = o.src[j];
            while (subst && subst[s] != HCQ_IR_NONE) s = subst[s];
            o.src[j] = map[s];
        }
        if (o.op == HCQ_OP_PARAM) {
            out->p[out->np] = c->p[o.arg];
            o.arg = out->np++;
        }
        map[i] = hcq_ir_emit(nk, (hcq_op)o.op, (hcq_dtype)o.dtype, o.flags, o.src, o.nsrc, o.arg);
    }
    free(map);
    out->k = nk;
    return HCQ_OK;
}

/* Marks what nothing observes: everything but global stores, barriers and
 * what they depend on (operands, the accs they read and the assigns to
 * those, local buffers they load and the stores to those, the blocks
 * around them). Uses go through subst. */
static void dead_code(const hcq_kernel *k, uint8_t *drop, const hcq_ir_ref *subst)
{
    uint32_t n = k->nops;
    uint8_t *live = calloc(n, 1);
    hcq_ir_ref *match = malloc(n * sizeof *match);
    if (!live || !match) goto out;
    ir_match_blocks(k, match);
    bool has_local = false; /* without local memory a barrier orders nothing */
    for (uint32_t i = 0; i < n; i++) has_local |= !drop[i] && k->ops[i].op == HCQ_OP_DEFINE_LOCAL;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = n; i-- > 0;) {
            const hcq_ir_op *o = &k->ops[i];
            if (drop[i]) continue;
            if (!live[i]) {
                bool root = false;
                if (o->op == HCQ_OP_BARRIER) root = has_local;
                else if (o->op == HCQ_OP_STORE) root = k->ops[o->src[0]].op == HCQ_OP_PARAM || live[o->src[0]];
                else if (o->op == HCQ_OP_ASSIGN) root = live[o->src[0]];
                else if (o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF)
                    for (uint32_t j = i + 1; j < match[i] && !root; j++) root = live[j];
                if (!root) continue;
                live[i] = 1;
                changed = true;
            }
            if ((o->op == HCQ_OP_RANGE || o->op == HCQ_OP_IF) && !live[match[i]]) live[match[i]] = changed = true;
            for (unsigned j = 0; j < o->nsrc; j++) {
                hcq_ir_ref src = o->src[j];
                while (subst && subst[src] != HCQ_IR_NONE) src = subst[src];
                /* a store does not make its local buffer live (loads do) */
                bool local_store = o->op == HCQ_OP_STORE && j == 0 && k->ops[src].op == HCQ_OP_DEFINE_LOCAL;
                if (!local_store && !live[src]) live[src] = changed = true;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++)
        if (!live[i]) drop[i] = 1;
out:
    free(live);
    free(match);
}

/* ops whose values reach an index: changing them could make work-items
 * write each other's elements or read what another writes (a race, not a
 * finding); an index out of bounds the interpreter would refuse anyway */
static void index_taint(const hcq_kernel *k, uint8_t *taint)
{
    memset(taint, 0, k->nops);
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_LOAD || o->op == HCQ_OP_STORE) taint[o->src[1]] = 1;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = k->nops; i-- > 0;) {
            const hcq_ir_op *o = &k->ops[i];
            if (o->op == HCQ_OP_ASSIGN && taint[o->src[0]] && !taint[o->src[1]]) taint[o->src[1]] = changed = true;
            if (!taint[i]) continue;
            for (unsigned j = 0; j < o->nsrc; j++)
                if (!taint[o->src[j]]) taint[o->src[j]] = changed = true;
        }
    }
}

typedef struct shrinker {
    const engine *e;
    const diff_config *cfg;
    irg_case best;
    outcome sig;
    unsigned tries, kept;
    double deadline;
} shrinker;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Keeps cand (and owns it) when it still fails like the original; else frees it. */
static bool try_case(shrinker *s, irg_case *cand)
{
    s->tries++;
    bool keep = false;
    outcome o;
    bool skipped;
    if (hcq_kernel_verify(cand->k) == HCQ_OK && run_one(cand, s->e, s->cfg, &o, &skipped) == HCQ_OK && !skipped)
        keep = o.kind == s->sig.kind;
    if (keep) {
        irg_case_free(&s->best);
        s->best = *cand;
        s->sig = o;
        s->kept++;
    } else {
        irg_case_free(cand);
    }
    return keep;
}

static bool try_edit(shrinker *s, uint8_t *drop, hcq_ir_ref *subst)
{
    irg_case cand;
    dead_code(s->best.k, drop, subst);
    if (rebuild(&s->best, drop, subst, &cand)) return false;
    return try_case(s, &cand);
}

static bool out_of_time(const shrinker *s) { return now() > s->deadline || s->tries > 2000; }

static void shrink(shrinker *s)
{
    /* fewer work-groups */
    for (int d = 0; d < 3; d++) {
        while (s->best.ng[d] > 1 && !out_of_time(s)) {
            irg_case cand;
            if (irg_case_copy(&s->best, &cand)) return;
            cand.ng[d] = s->best.ng[d] / 2;
            if (!try_case(s, &cand)) break;
        }
    }
    for (bool progress = true; progress && !out_of_time(s);) {
        progress = false;
        for (uint32_t i = s->best.k->nops; i-- > 0 && !out_of_time(s);) {
            const hcq_kernel *k = s->best.k;
            if (i >= k->nops) continue;
            uint32_t n = k->nops;
            uint8_t *drop = calloc(n, 1), *taint = calloc(n, 1);
            hcq_ir_ref *subst = malloc(n * sizeof *subst);
            if (!drop || !taint || !subst) {
                free(drop), free(taint), free(subst);
                return;
            }
            for (uint32_t j = 0; j < n; j++) subst[j] = HCQ_IR_NONE;
            index_taint(k, taint);
            const hcq_ir_op *o = &k->ops[i];
            bool done = false;
            if (o->op == HCQ_OP_STORE && k->ops[o->src[0]].op == HCQ_OP_PARAM) { /* drop a global store */
                drop[i] = 1;
                done = try_edit(s, drop, subst);
            } else if (o->op == HCQ_OP_ENDIF || o->op == HCQ_OP_ENDRANGE) { /* unwrap a block */
                hcq_ir_ref open = o->src[0];
                bool local_store = false;
                for (uint32_t j = open; j < i; j++)
                    local_store |= k->ops[j].op == HCQ_OP_STORE && k->ops[k->ops[j].src[0]].op == HCQ_OP_DEFINE_LOCAL;
                if (o->op == HCQ_OP_ENDRANGE || !local_store) {
                    drop[i] = drop[open] = 1;
                    if (o->op == HCQ_OP_ENDRANGE) subst[open] = k->ops[open].src[0]; /* the counter becomes its start */
                    done = try_edit(s, drop, subst);
                }
            } else if (is_value_op(o) && o->op != HCQ_OP_CONST && !taint[i]) {
                /* a value becomes one of its operands of the same dtype, or zero */
                for (unsigned j = 0; j < o->nsrc && !done && !out_of_time(s); j++) {
                    const hcq_ir_op *src = &s->best.k->ops[o->src[j]];
                    if (src->dtype != o->dtype || (src->flags & HCQ_IR_FLAG_PTR)) continue;
                    memset(drop, 0, n);
                    for (uint32_t m = 0; m < n; m++) subst[m] = HCQ_IR_NONE;
                    drop[i] = 1;
                    subst[i] = o->src[j];
                    done = try_edit(s, drop, subst);
                }
                if (!done && !out_of_time(s)) {
                    irg_case cand;
                    if (!irg_case_copy(&s->best, &cand)) {
                        hcq_ir_op *z = &cand.k->ops[i];
                        hcq_dtype t = (hcq_dtype)z->dtype;
                        *z = (hcq_ir_op){.op = HCQ_OP_CONST, .dtype = (uint8_t)t,
                                         .src = {HCQ_IR_NONE, HCQ_IR_NONE, HCQ_IR_NONE, HCQ_IR_NONE},
                                         .arg = hcq_dtype_is_float(t) ? ir_f64_bits(0.0) : 0};
                        memset(drop, 0, n);
                        irg_case next;
                        dead_code(cand.k, drop, NULL);
                        if (!rebuild(&cand, drop, NULL, &next)) done = try_case(s, &next);
                        irg_case_free(&cand);
                    }
                }
            }
            progress |= done;
            free(drop), free(taint), free(subst);
        }
    }
}

/* ** reports */
static void dims_text(char *buf, size_t size, const irg_case *c)
{
    snprintf(buf, size, "%u x %u x %u work-groups of %u x %u x %u", c->ng[0], c->ng[1], c->ng[2], c->ls[0], c->ls[1],
             c->ls[2]);
}

static char *report_text(const irg_case *orig, const irg_case *c, const engine *e, const outcome *o,
                         const shrinker *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    char dims[128];
    dims_text(dims, sizeof dims, c);
    if (orig->by_hand) fprintf(f, "difftest kernel '%s' (made by hand)", hcq_kernel_name(orig->k));
    else fprintf(f, "difftest seed %" PRIu64, orig->seed);
    fprintf(f, ": %s\n  %s\n", e ? "disagrees with the interpreter" : "is not a valid case", o->msg);
    if (e) fprintf(f, "  engine: %s\n", e->name);
    fprintf(f, "  launch: %s\n", dims);
    if (s)
        fprintf(f, "  shrunk from %u ops to %u (%u tries, %u kept)\n", hcq_kernel_op_count(orig->k),
                hcq_kernel_op_count(c->k), s->tries, s->kept);
    if (!orig->by_hand)
        fprintf(f, "  again: make difftest SEED=%" PRIu64 " KERNELS=1 (or build/tests/diff/difftest --seed %" PRIu64 " -n 1)\n",
                orig->seed, orig->seed);
    for (uint32_t i = 0; i < c->np; i++) {
        const irg_param *p = &c->p[i];
        if (p->role == IRG_SCALAR) {
            char v[64];
            describe_value(v, sizeof v, p->dt, p->bits & (hcq_dtype_size(p->dt) == 8 ? ~0ull : (1ull << (8 * hcq_dtype_size(p->dt))) - 1));
            fprintf(f, "  param %u %s: %s scalar = %s\n", i, p->label, hcq_dtype_name(p->dt), v);
        } else {
            fprintf(f, "  param %u %s: %s buffer of %u elements%s", i, p->label, hcq_dtype_name(p->dt), p->count,
                    p->role == IRG_INPUT ? " (random input)" : "");
            if (p->bias) fprintf(f, ", %u more before element 0", p->bias);
            fprintf(f, "\n");
        }
    }
    char *dump = hcq_kernel_dump(c->k);
    fprintf(f, "%s", dump ? dump : "(no dump)\n");
    free(dump);
    fclose(f);
    return text;
}

/* ** running cases */
static hcq_status failure(const irg_case *orig, const irg_case *c, const engine *e, const diff_config *cfg,
                          diff_stats *st, const outcome *fo, char **report);

/* The case without the outputs of ops engine e refuses (HIP's SIN...):
 * the generator stores transcendental results and uses them nowhere else,
 * so dropping those stores leaves the rest to compare. *stripped says
 * whether *out was made (free it then). */
static hcq_status without_refused(const irg_case *c, const engine *e, irg_case *out, bool *stripped)
{
    *stripped = false;
    if (!e->refuses) return HCQ_OK;
    const hcq_kernel *k = c->k;
    uint8_t *drop = calloc(k->nops ? k->nops : 1, 1);
    if (!drop) return base_err(HCQ_ENOMEM, "difftest: out of memory");
    bool any = false;
    for (uint32_t i = 0; i < k->nops; i++) {
        const hcq_ir_op *o = &k->ops[i];
        if (o->op == HCQ_OP_STORE && e->refuses(&k->ops[o->src[2]])) drop[i] = any = true;
    }
    hcq_status st = HCQ_OK;
    if (any) {
        dead_code(k, drop, NULL);
        st = rebuild(c, drop, NULL, out);
        *stripped = !st;
    }
    free(drop);
    return st;
}

static hcq_status run_case(const irg_case *c, const diff_config *cfg, diff_stats *st, char **report)
{
    *report = NULL;
    st->kernels++;
    st->ops += hcq_kernel_op_count(c->k);
    for (unsigned i = 0; i < NENGINES; i++) {
        const engine *e = &engines[i];
        if (!engine_wanted(cfg, e->name)) continue;
        irg_case own;
        bool stripped = false;
        hcq_status rs = without_refused(c, e, &own, &stripped);
        if (rs) return rs;
        const irg_case *use = stripped ? &own : c;
        outcome o;
        bool skipped;
        rs = run_one(use, e, cfg, &o, &skipped);
        if (!rs && !skipped && o.kind != F_NONE) rs = failure(c, use, e, cfg, st, &o, report);
        if (stripped) irg_case_free(&own);
        if (rs || skipped) {
            if (skipped) st->skipped[i]++;
            if (rs) return rs;
            continue;
        }
        st->runs[i]++;
    }
    return HCQ_OK;
}

/* Reports a failure of engine e on case c (derived from orig), shrunk. */
static hcq_status failure(const irg_case *orig, const irg_case *c, const engine *e, const diff_config *cfg,
                          diff_stats *st, const outcome *o, char **report)
{
    st->failures++;
    if (o->kind == F_INVALID) { /* the generator's bug: nothing to shrink against */
        *report = report_text(orig, c, NULL, o, NULL);
        return HCQ_EINVAL;
    }
    shrinker s = {.e = e, .cfg = cfg, .sig = *o};
    if (!cfg->no_shrink && !irg_case_copy(c, &s.best)) {
        s.deadline = now() + (cfg->shrink_seconds > 0 ? cfg->shrink_seconds : 60);
        shrink(&s);
        *report = report_text(orig, &s.best, e, &s.sig, &s);
        irg_case_free(&s.best);
    } else {
        *report = report_text(orig, c, e, o, NULL);
    }
    return o->kind == F_COMPILE ? HCQ_ECOMPILE : HCQ_EFAULT;
}

hcq_status diff_run_case(const irg_case *c, const diff_config *cfg, diff_stats *st, char **report)
{
    return run_case(c, cfg, st, report);
}

hcq_status diff_run_seed(uint64_t seed, const diff_config *cfg, diff_stats *st, char **report)
{
    irg_case c;
    *report = NULL;
    hcq_status s = irg_generate(seed, &cfg->gen, &c);
    if (s) {
        st->failures++;
        if (asprintf(report, "difftest seed %" PRIu64 ": the generator made an invalid kernel: %s\n", seed,
                     hcq_error_message()) < 0)
            *report = NULL;
        return s;
    }
    s = run_case(&c, cfg, st, report);
    irg_case_free(&c);
    return s;
}
