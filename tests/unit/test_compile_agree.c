/* The agreement corpus: every kernel here runs on the interpreter (the
 * reference), as a C-rendered cpu build, and as the host twins of its
 * CUDA and HIP texts (compiler/twin.h: the GPU renderer's own code) on
 * the same random inputs, and every buffer must come out the same: bit for bit for integers and exact
 * float ops (NaN matching NaN), within HCQ_IR_TRANSCENDENTAL_ULP for exp2,
 * log2 and sin. Buffers end at a PROT_NONE guard page, so an access past
 * the end (say, a gated load that was not gated) crashes instead of
 * passing silently. */
#include <sys/mman.h>
#include <unistd.h>

#include "compiler/interp.h"
#include "compiler/twin.h"
#include "test_ir_util.h"

#define AG_MAX 64

typedef struct ag_param {
    bool buffer;
    hcq_dtype dt;
    size_t count; /* elements */
    bool input;   /* random contents; else starts zeroed */
    int ulp;      /* float tolerance */
    uint64_t scalar;
    char label[32];
    uint8_t *mem[4]; /* interpreter, cpu, twin of the CUDA text, twin of the HIP text */
    size_t map_len;
} ag_param;

typedef struct ag {
    hcq_kernel *k;
    ag_param p[AG_MAX];
    uint32_t n;
    tu_dims d;
    uint64_t seed;
} ag;

static void ag_init(ag *g, const char *name, tu_dims d, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->k = hcq_kernel_create(name);
    cr_assert_not_null(g->k);
    g->d = d;
    g->seed = seed;
}

static hcq_ir_ref ag_buf(ag *g, hcq_dtype dt, size_t count, bool input, int ulp, const char *label)
{
    cr_assert(g->n < AG_MAX);
    ag_param *p = &g->p[g->n++];
    *p = (ag_param){.buffer = true, .dt = dt, .count = count, .input = input, .ulp = ulp};
    snprintf(p->label, sizeof p->label, "%s", label);
    return hcq_ir_param_buffer(g->k, dt);
}

static hcq_ir_ref ag_scalar(ag *g, hcq_dtype dt, uint64_t bits)
{
    cr_assert(g->n < AG_MAX);
    ag_param *p = &g->p[g->n++];
    *p = (ag_param){.dt = dt, .scalar = bits};
    return hcq_ir_param_scalar(g->k, dt);
}

/* ** random values that hit the corners */
static uint64_t rand_int(uint64_t *s, hcq_dtype t)
{
    unsigned bits = (unsigned)hcq_dtype_size(t) * 8;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, r = tu_rand(s);
    uint64_t min = hcq_dtype_is_signed(t) ? 1ull << (bits - 1) : 0;
    switch (r % 8) {
    case 0: return (uint64_t[]){0, 1, mask, min, min - 1, 2, 3, mask - 1}[(r >> 8) % 8] & mask;
    case 1:
    case 2: return (uint64_t)((int64_t)(r >> 8) % 9 - 4) & mask; /* small, for shifts and division */
    case 3: return (uint64_t)((int64_t)(r >> 8) % 201 - 100) & mask;
    default: return (r >> 3) & mask;
    }
}

static double rand_real(uint64_t *s)
{
    uint64_t r = tu_rand(s);
    double u = (double)(r >> 11) * 0x1p-53;
    switch (r % 4) {
    case 0: return (u - 0.5) * 8;
    case 1: return (u - 0.5) * 2000;
    case 2: return ldexp(u + 0.5, (int)(r % 80) - 40) * ((r >> 7) & 1 ? -1 : 1);
    default: return (double)((int64_t)(r >> 20) % 64 - 32) * 0.5; /* halves: ties for trunc/round */
    }
}

static void fill_elem(uint64_t *s, hcq_dtype t, void *dst)
{
    uint64_t r = tu_rand(s);
    if (t == HCQ_BOOL) {
        *(uint8_t *)dst = (uint8_t)(r % 3 == 0);
        return;
    }
    if (!hcq_dtype_is_float(t)) {
        uint64_t v = rand_int(s, t);
        memcpy(dst, &v, hcq_dtype_size(t));
        return;
    }
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, 65504.0, 65520.0,
                                     0x1p-14, 0x1p-24, 0x1p-126, 0x1p-149, 3.4028234663852886e38, 1e300, 0x1p-1074};
    double v;
    bool raw = false;
    if (r % 8 == 0) v = special[(r >> 8) % (sizeof special / sizeof special[0])];
    else if (r % 8 == 1) raw = true;
    else v = rand_real(s);
    uint64_t bits = tu_rand(s);
    switch (t) {
    case HCQ_F64: if (!raw) bits = ir_f64_bits(v); memcpy(dst, &bits, 8); break;
    case HCQ_F32: { uint32_t b = raw ? (uint32_t)bits : ir_f32_bits((float)v); memcpy(dst, &b, 4); break; }
    case HCQ_F16: { uint16_t b = raw ? (uint16_t)bits : ir_f32_to_f16((float)v); memcpy(dst, &b, 2); break; }
    default: { uint16_t b = raw ? (uint16_t)bits : ir_f32_to_bf16((float)v); memcpy(dst, &b, 2); break; }
    }
}

/* ** buffers that end at a guard page */
static uint8_t *guarded(size_t size, size_t *map_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size + page - 1) / page * page + page;
    uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(m != MAP_FAILED);
    mprotect(m + len - page, page, PROT_NONE);
    *map_len = len;
    return m + len - page - size;
}

static void unguard(uint8_t *p, size_t size, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *end = p + size + page;
    munmap(end - len, len);
}

/* ** comparison */
static int64_t ordered(hcq_dtype t, uint64_t bits)
{
    unsigned w = (unsigned)hcq_dtype_size(t) * 8;
    uint64_t sign = 1ull << (w - 1), mag = bits & (sign - 1);
    return bits & sign ? -(int64_t)mag : (int64_t)mag; /* monotonic in the float's value, -0 == +0 */
}

static double as_double(hcq_dtype t, uint64_t bits)
{
    switch (t) {
    case HCQ_F64: return ir_bits_f64(bits);
    case HCQ_F32: return ir_bits_f32((uint32_t)bits);
    case HCQ_F16: return ir_f16_to_f32((uint16_t)bits);
    default: return ir_bf16_to_f32((uint16_t)bits);
    }
}

static bool same(const ag_param *p, uint64_t x, uint64_t y)
{
    if (x == y) return true;
    if (!hcq_dtype_is_float(p->dt)) return p->dt == HCQ_BOOL && (x != 0) == (y != 0);
    double a = as_double(p->dt, x), b = as_double(p->dt, y);
    if (a != a && b != b) return true;
    if (a != a || b != b || !p->ulp) return false;
    int64_t d = ordered(p->dt, x) - ordered(p->dt, y);
    return (d < 0 ? -d : d) <= p->ulp;
}

static const char *const copy_name[4] = {"interpreter", "cpu", "twin of CUDA", "twin of HIP"};

static void compare(const ag *g, const ag_param *p, uint32_t idx, int c)
{
    size_t es = hcq_dtype_size(p->dt);
    for (size_t i = 0; i < p->count; i++) {
        uint64_t x = 0, y = 0;
        memcpy(&x, p->mem[0] + i * es, es);
        memcpy(&y, p->mem[c] + i * es, es);
        if (same(p, x, y)) continue;
        char ins[256] = "";
        for (uint32_t j = 0, len = 0; j < g->n && len < sizeof ins; j++) { /* the inputs at that index */
            const ag_param *q = &g->p[j];
            if (!q->buffer || !q->input || i >= q->count) continue;
            uint64_t v = 0;
            memcpy(&v, q->mem[0] + i * hcq_dtype_size(q->dt), hcq_dtype_size(q->dt));
            len += (uint32_t)snprintf(ins + len, sizeof ins - len, " %s=0x%llx", q->label, (unsigned long long)v);
        }
        cr_assert_fail("kernel '%s' param %u (%s, %s) element %zu: interpreter 0x%llx (%.9g), %s 0x%llx (%.9g);"
                       " inputs:%s", hcq_kernel_name(g->k), idx, p->label, hcq_dtype_name(p->dt), i,
                       (unsigned long long)x, hcq_dtype_is_float(p->dt) ? as_double(p->dt, x) : (double)(int64_t)x,
                       copy_name[c], (unsigned long long)y, hcq_dtype_is_float(p->dt) ? as_double(p->dt, y) : (double)(int64_t)y,
                       ins);
    }
}

/* The host twin of the kernel's GPU text (target "cuda" or "hip") on
 * args; false when that renderer refuses the kernel (HIP: SIN). */
static bool twin(const ag *g, const char *target, const tu_args *a)
{
    hcq_interp_launch l = {.kernargs = a->buf, .kernarg_size = a->size};
    memcpy(l.num_groups, g->d.ng, sizeof g->d.ng);
    memcpy(l.local_size, g->d.ls, sizeof g->d.ls);
    hcq_status st = cc_twin_run(g->k, target, &l);
    if (st == HCQ_ENOTSUP && strstr(hcq_error_message(), "device library")) return false;
    cr_assert_eq(st, HCQ_OK, "twin of %s: %s", target, hcq_error_message());
    return true;
}

static void ag_run(ag *g)
{
    tu_verify(g->k);
    tu_args a[4];
    for (int c = 0; c < 4; c++) tu_args_init(&a[c], g->k);
    uint64_t s = g->seed;
    for (uint32_t i = 0; i < g->n; i++) {
        ag_param *p = &g->p[i];
        if (!p->buffer) {
            for (int c = 0; c < 4; c++) tu_arg_bytes(&a[c], i, &p->scalar);
            continue;
        }
        size_t es = hcq_dtype_size(p->dt), size = p->count * es;
        for (int c = 0; c < 4; c++) p->mem[c] = guarded(size, &p->map_len);
        for (size_t e = 0; p->input && e < p->count; e++) fill_elem(&s, p->dt, p->mem[0] + e * es);
        for (int c = 1; c < 4; c++) memcpy(p->mem[c], p->mem[0], size);
        for (int c = 0; c < 4; c++) tu_arg_ptr(&a[c], i, p->mem[c]);
    }
    tu_interp(g->k, &a[0], g->d);
    tu_cpu(g->k, &a[1], g->d);
    bool ran[4] = {true, true, twin(g, "cuda", &a[2]), twin(g, "hip", &a[3])};
    for (int c = 1; c < 4; c++)
        for (uint32_t i = 0; i < g->n && ran[c]; i++)
            if (g->p[i].buffer) compare(g, &g->p[i], i, c);
    for (uint32_t i = 0; i < g->n; i++)
        if (g->p[i].buffer)
            for (int c = 0; c < 4; c++) unguard(g->p[i].mem[c], g->p[i].count * hcq_dtype_size(g->p[i].dt), g->p[i].map_len);
    hcq_kernel_destroy(g->k);
}

/* ** elementwise: every applicable op and every cast of one dtype */
static const hcq_op int_ops[] = {HCQ_OP_NEG, HCQ_OP_ADD, HCQ_OP_SUB, HCQ_OP_MUL, HCQ_OP_IDIV, HCQ_OP_MOD,
                                 HCQ_OP_MAX, HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR,
                                 HCQ_OP_SHL, HCQ_OP_SHR, HCQ_OP_WHERE, HCQ_OP_MULACC};
static const hcq_op float_ops[] = {HCQ_OP_NEG, HCQ_OP_EXP2, HCQ_OP_LOG2, HCQ_OP_SIN, HCQ_OP_SQRT, HCQ_OP_RECIP,
                                   HCQ_OP_TRUNC, HCQ_OP_ADD, HCQ_OP_SUB, HCQ_OP_MUL, HCQ_OP_FDIV, HCQ_OP_MAX,
                                   HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_WHERE, HCQ_OP_MULACC};
static const hcq_op bool_ops[] = {HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR, HCQ_OP_CMPNE, HCQ_OP_WHERE};

static void elementwise(hcq_dtype t, uint64_t seed)
{
    enum { G = 4, L = 64, NE = G * L };
    char name[32];
    snprintf(name, sizeof name, "ew_%s", hcq_dtype_name(t));
    ag g;
    ag_init(&g, name, TU_DIMS1(G, L), seed);
    hcq_kernel *k = g.k;
    hcq_ir_ref pa = ag_buf(&g, t, NE, true, 0, "a"), pb = ag_buf(&g, t, NE, true, 0, "b");
    hcq_ir_ref pc = ag_buf(&g, t, NE, true, 0, "c"), pw = ag_buf(&g, HCQ_BOOL, NE, true, 0, "cond");
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_ref a = hcq_ir_load(k, pa, gid), b = hcq_ir_load(k, pb, gid), c = hcq_ir_load(k, pc, gid);
    hcq_ir_ref w = hcq_ir_load(k, pw, gid);
    const hcq_op *ops = hcq_dtype_is_float(t) ? float_ops : t == HCQ_BOOL ? bool_ops : int_ops;
    size_t nops = hcq_dtype_is_float(t) ? BASE_ARRAY_LEN(float_ops) : t == HCQ_BOOL ? BASE_ARRAY_LEN(bool_ops)
                                                                                      : BASE_ARRAY_LEN(int_ops);
    for (size_t i = 0; i < nops; i++) {
        hcq_op op = ops[i];
        bool cmp = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE;
        bool tr = op == HCQ_OP_EXP2 || op == HCQ_OP_LOG2 || op == HCQ_OP_SIN;
        hcq_ir_ref out = ag_buf(&g, cmp ? HCQ_BOOL : t, NE, false, tr ? HCQ_IR_TRANSCENDENTAL_ULP : 0, hcq_op_name(op)), r;
        switch (ir_op_class(op)) {
        case IR_C_UNARY: r = hcq_ir_unary(k, op, a); break;
        case IR_C_BINARY: r = hcq_ir_binary(k, op, a, b); break;
        default: r = op == HCQ_OP_WHERE ? hcq_ir_where(k, w, a, b) : hcq_ir_mulacc(k, a, b, c); break;
        }
        hcq_ir_store(k, out, gid, r);
    }
    for (int to = HCQ_BOOL; to < HCQ_DTYPE_COUNT; to++) {
        char label[32];
        snprintf(label, sizeof label, "cast->%s", hcq_dtype_name((hcq_dtype)to));
        hcq_ir_store(k, ag_buf(&g, (hcq_dtype)to, NE, false, 0, label), gid, hcq_ir_cast(k, (hcq_dtype)to, a));
        if (to == (int)t || to == HCQ_BOOL || t == HCQ_BOOL || hcq_dtype_size((hcq_dtype)to) != hcq_dtype_size(t))
            continue;
        snprintf(label, sizeof label, "bitcast->%s", hcq_dtype_name((hcq_dtype)to));
        hcq_ir_store(k, ag_buf(&g, (hcq_dtype)to, NE, false, 0, label), gid, hcq_ir_bitcast(k, (hcq_dtype)to, a));
    }
    ag_run(&g);
}

Test(compile_agree, elementwise_bool) { elementwise(HCQ_BOOL, 11); }
Test(compile_agree, elementwise_i8) { elementwise(HCQ_I8, 12); }
Test(compile_agree, elementwise_u8) { elementwise(HCQ_U8, 13); }
Test(compile_agree, elementwise_i16) { elementwise(HCQ_I16, 14); }
Test(compile_agree, elementwise_u16) { elementwise(HCQ_U16, 15); }
Test(compile_agree, elementwise_i32) { elementwise(HCQ_I32, 16); }
Test(compile_agree, elementwise_u32) { elementwise(HCQ_U32, 17); }
Test(compile_agree, elementwise_i64) { elementwise(HCQ_I64, 18); }
Test(compile_agree, elementwise_u64) { elementwise(HCQ_U64, 19); }
Test(compile_agree, elementwise_f16) { elementwise(HCQ_F16, 20); }
Test(compile_agree, elementwise_bf16) { elementwise(HCQ_BF16, 21); }
Test(compile_agree, elementwise_f32) { elementwise(HCQ_F32, 22); }
Test(compile_agree, elementwise_f64) { elementwise(HCQ_F64, 23); }

/* ** structure */
static hcq_ir_ref ci(hcq_kernel *k, int64_t v) { return hcq_ir_const_int(k, HCQ_I32, v); }

Test(compile_agree, loops_with_accumulators_and_divergence)
{
    enum { N = 300 };
    ag g;
    ag_init(&g, "loops", TU_DIMS1(5, 60), 31);
    hcq_kernel *k = g.k;
    hcq_ir_ref pa = ag_buf(&g, HCQ_F32, N, true, 0, "a"), pi = ag_buf(&g, HCQ_I32, N, true, 0, "ai");
    hcq_ir_ref of = ag_buf(&g, HCQ_F32, N, false, 0, "accf"), oi = ag_buf(&g, HCQ_I64, N, false, 0, "acci");
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_ref accf = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0));
    hcq_ir_ref acci = hcq_ir_define_acc(k, hcq_ir_const_int(k, HCQ_I64, 0));
    hcq_ir_ref r = hcq_ir_range(k, ci(k, 0), hcq_ir_binary(k, HCQ_OP_MOD, gid, ci(k, 7)));
    hcq_ir_ref idx = hcq_ir_binary(k, HCQ_OP_MOD, hcq_ir_binary(k, HCQ_OP_ADD, gid, r), ci(k, N));
    hcq_ir_ref x = hcq_ir_load(k, pa, hcq_ir_cast(k, HCQ_I64, idx));
    hcq_ir_assign(k, accf, hcq_ir_mulacc(k, accf, hcq_ir_const_float(k, HCQ_F32, 0.5), x));
    hcq_ir_ref r2 = hcq_ir_range(k, ci(k, 0), ci(k, 3));
    hcq_ir_ref c = hcq_ir_binary(k, HCQ_OP_CMPLT, r2, r);
    hcq_ir_ref iff = hcq_ir_if(k, c);
    hcq_ir_ref y = hcq_ir_cast(k, HCQ_I64, hcq_ir_load(k, pi, hcq_ir_cast(k, HCQ_U32, idx)));
    hcq_ir_assign(k, acci, hcq_ir_binary(k, HCQ_OP_XOR, hcq_ir_binary(k, HCQ_OP_MUL, acci, hcq_ir_const_int(k, HCQ_I64, 31)), y));
    hcq_ir_endif(k, iff);
    hcq_ir_endrange(k, r2);
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, of, gid, accf);
    hcq_ir_store(k, oi, gid, acci);
    ag_run(&g);
}

Test(compile_agree, gated_loads_and_stores)
{
    enum { N = 256, M = 200 };
    ag g;
    ag_init(&g, "gated", TU_DIMS1(4, 64), 32);
    hcq_kernel *k = g.k;
    hcq_ir_ref pin = ag_buf(&g, HCQ_F16, M, true, 0, "in"), pout = ag_buf(&g, HCQ_F16, N, false, 0, "out");
    hcq_ir_ref pst = ag_buf(&g, HCQ_I16, M, true, 0, "st");
    hcq_ir_ref lim = ag_scalar(&g, HCQ_U32, M);
    hcq_ir_ref gid = hcq_ir_cast(k, HCQ_U32, tu_gid(k));
    hcq_ir_ref gate = hcq_ir_binary(k, HCQ_OP_CMPLT, gid, lim);
    hcq_ir_ref v = hcq_ir_load_gated(k, pin, gid, gate, hcq_ir_const_float(k, HCQ_F16, -1.5));
    hcq_ir_store(k, pout, gid, v);
    hcq_ir_ref three = hcq_ir_const_int(k, HCQ_U32, 3);
    hcq_ir_ref g2 = hcq_ir_binary(k, HCQ_OP_AND, gate, hcq_ir_binary(k, HCQ_OP_CMPNE, hcq_ir_binary(k, HCQ_OP_MOD, gid, three),
                                                                       hcq_ir_const_int(k, HCQ_U32, 0)));
    hcq_ir_store_gated(k, pst, gid, hcq_ir_cast(k, HCQ_I16, v), g2);
    ag_run(&g);
}

Test(compile_agree, row_reductions)
{
    enum { ROWS = 96, COLS = 37 };
    ag g;
    ag_init(&g, "rows", TU_DIMS1(3, 32), 33);
    hcq_kernel *k = g.k;
    hcq_ir_ref pa = ag_buf(&g, HCQ_F32, ROWS * COLS, true, 0, "a"), ph = ag_buf(&g, HCQ_F16, ROWS * COLS, true, 0, "h");
    hcq_ir_ref pl = ag_buf(&g, HCQ_I64, ROWS * COLS, true, 0, "l");
    hcq_ir_ref os = ag_buf(&g, HCQ_F32, ROWS, false, 0, "sum"), om = ag_buf(&g, HCQ_F16, ROWS, false, 0, "max");
    hcq_ir_ref ol = ag_buf(&g, HCQ_I64, ROWS, false, 0, "lsum");
    hcq_ir_ref row = tu_gid(k);
    hcq_ir_ref sum = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0));
    hcq_ir_ref mx = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F16, -INFINITY));
    hcq_ir_ref ls = hcq_ir_define_acc(k, hcq_ir_const_int(k, HCQ_I64, 0));
    hcq_ir_ref j = hcq_ir_range(k, ci(k, 0), ci(k, COLS));
    hcq_ir_ref idx = hcq_ir_mulacc(k, row, ci(k, COLS), j);
    hcq_ir_assign(k, sum, hcq_ir_binary(k, HCQ_OP_ADD, sum, hcq_ir_load(k, pa, idx)));
    hcq_ir_assign(k, mx, hcq_ir_binary(k, HCQ_OP_MAX, mx, hcq_ir_load(k, ph, idx)));
    hcq_ir_assign(k, ls, hcq_ir_binary(k, HCQ_OP_ADD, ls, hcq_ir_load(k, pl, idx)));
    hcq_ir_endrange(k, j);
    hcq_ir_store(k, os, row, sum);
    hcq_ir_store(k, om, row, mx);
    hcq_ir_store(k, ol, row, ls);
    ag_run(&g);
}

/* Unary ops whose operand is a negative constant: the C renderer once wrote
 * NEG of -1.25 as "(--0x1.4p+0f)", which does not compile (issue 12, item 6). */
Test(compile_agree, negative_constants_as_operands)
{
    ag g;
    ag_init(&g, "negconst", TU_DIMS1(1, 4), 34);
    hcq_kernel *k = g.k;
    static const hcq_dtype fl[] = {HCQ_F16, HCQ_BF16, HCQ_F32, HCQ_F64};
    for (size_t i = 0; i < BASE_ARRAY_LEN(fl); i++) {
        hcq_ir_ref out = ag_buf(&g, fl[i], 4, false, 0, hcq_dtype_name(fl[i]));
        hcq_ir_ref c = hcq_ir_const_float(k, fl[i], -1.25), z = hcq_ir_const_float(k, fl[i], -0.0);
        hcq_ir_ref n = hcq_ir_unary(k, HCQ_OP_NEG, c);
        hcq_ir_ref v = hcq_ir_binary(k, HCQ_OP_ADD, n, hcq_ir_unary(k, HCQ_OP_NEG, z));
        v = hcq_ir_binary(k, HCQ_OP_SUB, v, hcq_ir_unary(k, HCQ_OP_NEG, hcq_ir_unary(k, HCQ_OP_NEG, c)));
        hcq_ir_store(k, out, tu_gid(k), v);
    }
    hcq_ir_ref oi = ag_buf(&g, HCQ_I32, 4, false, 0, "i32");
    hcq_ir_store(k, oi, tu_gid(k), hcq_ir_unary(k, HCQ_OP_NEG, hcq_ir_const_int(k, HCQ_I32, INT32_MIN)));
    ag_run(&g);
}

/* work-group tree reduction in local memory, with barriers in a uniform loop */
static void tree_reduction(hcq_dtype t, uint64_t seed)
{
    enum { L = 128, G = 6 };
    char name[32];
    snprintf(name, sizeof name, "tree_%s", hcq_dtype_name(t));
    ag g;
    ag_init(&g, name, TU_DIMS1(G, L), seed);
    hcq_kernel *k = g.k;
    hcq_ir_ref in = ag_buf(&g, t, G * L, true, 0, "in"), out = ag_buf(&g, t, G, false, 0, "out");
    hcq_ir_ref loc = hcq_ir_define_local(k, t, L);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_store(k, loc, lid, hcq_ir_load(k, in, gid));
    hcq_ir_barrier(k);
    hcq_ir_ref step = hcq_ir_range(k, ci(k, 0), ci(k, 7)); /* strides 64, 32, ..., 1 */
    hcq_ir_ref stride = hcq_ir_binary(k, HCQ_OP_SHR, ci(k, L / 2), step);
    hcq_ir_ref act = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lid, stride));
    hcq_ir_ref mine = hcq_ir_load(k, loc, lid);
    hcq_ir_ref other = hcq_ir_load(k, loc, hcq_ir_binary(k, HCQ_OP_ADD, lid, stride));
    hcq_ir_store(k, loc, lid, hcq_ir_binary(k, HCQ_OP_ADD, mine, other));
    hcq_ir_endif(k, act);
    hcq_ir_barrier(k);
    hcq_ir_endrange(k, step);
    hcq_ir_ref first = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lid, ci(k, 1)));
    hcq_ir_store(k, out, grp, hcq_ir_load(k, loc, ci(k, 0)));
    hcq_ir_endif(k, first);
    ag_run(&g);
}

Test(compile_agree, tree_reduction_f32) { tree_reduction(HCQ_F32, 41); }
Test(compile_agree, tree_reduction_i32) { tree_reduction(HCQ_I32, 42); }
Test(compile_agree, tree_reduction_f16) { tree_reduction(HCQ_F16, 43); }

/* C[M x N] = A[M x K] x B[K x N], 8x8 tiles in local memory; 2-D grid */
Test(compile_agree, tiled_matmul)
{
    enum { T = 8, M = 24, N = 32, K = 40 };
    ag g;
    ag_init(&g, "matmul", ((tu_dims){{N / T, M / T, 1}, {T, T, 1}}), 51);
    hcq_kernel *k = g.k;
    hcq_ir_ref pa = ag_buf(&g, HCQ_F32, M * K, true, 0, "A"), pb = ag_buf(&g, HCQ_F32, K * N, true, 0, "B");
    hcq_ir_ref pc = ag_buf(&g, HCQ_F32, M * N, false, 0, "C");
    hcq_ir_ref kk_ = ag_scalar(&g, HCQ_I32, K);
    hcq_ir_ref as = hcq_ir_define_local(k, HCQ_F32, T * T), bs = hcq_ir_define_local(k, HCQ_F32, T * T);
    hcq_ir_ref lx = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), ly = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 1);
    hcq_ir_ref gx = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), gy = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 1);
    hcq_ir_ref col = hcq_ir_mulacc(k, gx, ci(k, T), lx), row = hcq_ir_mulacc(k, gy, ci(k, T), ly);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, 0));
    hcq_ir_ref tiles = hcq_ir_binary(k, HCQ_OP_IDIV, kk_, ci(k, T));
    hcq_ir_ref t = hcq_ir_range(k, ci(k, 0), tiles);
    hcq_ir_ref k0 = hcq_ir_binary(k, HCQ_OP_MUL, t, ci(k, T));
    hcq_ir_ref lidx = hcq_ir_mulacc(k, ly, ci(k, T), lx);
    hcq_ir_store(k, as, lidx, hcq_ir_load(k, pa, hcq_ir_mulacc(k, row, kk_, hcq_ir_binary(k, HCQ_OP_ADD, k0, lx))));
    hcq_ir_store(k, bs, lidx, hcq_ir_load(k, pb, hcq_ir_mulacc(k, hcq_ir_binary(k, HCQ_OP_ADD, k0, ly), ci(k, N), col)));
    hcq_ir_barrier(k);
    hcq_ir_ref i = hcq_ir_range(k, ci(k, 0), ci(k, T));
    hcq_ir_ref av = hcq_ir_load(k, as, hcq_ir_mulacc(k, ly, ci(k, T), i));
    hcq_ir_ref bv = hcq_ir_load(k, bs, hcq_ir_mulacc(k, i, ci(k, T), lx));
    hcq_ir_assign(k, acc, hcq_ir_mulacc(k, av, bv, acc));
    hcq_ir_endrange(k, i);
    hcq_ir_barrier(k);
    hcq_ir_endrange(k, t);
    hcq_ir_store(k, pc, hcq_ir_mulacc(k, row, ci(k, N), col), acc);
    ag_run(&g);
}

Test(compile_agree, multi_dim_grid_and_block)
{
    tu_dims d = {{3, 2, 2}, {4, 2, 3}};
    enum { NX = 12, NY = 4, NZ = 6, NT = NX * NY * NZ };
    ag g;
    ag_init(&g, "dims", d, 61);
    hcq_kernel *k = g.k;
    hcq_ir_ref out = ag_buf(&g, HCQ_I32, NT, false, 0, "code"), in = ag_buf(&g, HCQ_BF16, NT, true, 0, "in");
    hcq_ir_ref outf = ag_buf(&g, HCQ_BF16, NT, false, 0, "scaled");
    hcq_ir_ref v[12];
    for (int kind = 0; kind < 4; kind++)
        for (unsigned dd = 0; dd < 3; dd++) v[kind * 3 + dd] = hcq_ir_special(k, (hcq_special)kind, dd);
    hcq_ir_ref gx = hcq_ir_mulacc(k, v[0], v[9], v[3]), gy = hcq_ir_mulacc(k, v[1], v[10], v[4]);
    hcq_ir_ref gz = hcq_ir_mulacc(k, v[2], v[11], v[5]);
    hcq_ir_ref nx = hcq_ir_binary(k, HCQ_OP_MUL, v[6], v[9]), ny = hcq_ir_binary(k, HCQ_OP_MUL, v[7], v[10]);
    hcq_ir_ref lin = hcq_ir_mulacc(k, hcq_ir_mulacc(k, gz, ny, gy), nx, gx);
    hcq_ir_ref code = hcq_ir_mulacc(k, gz, ci(k, 10000), hcq_ir_mulacc(k, gy, ci(k, 100), gx));
    hcq_ir_store(k, out, lin, hcq_ir_binary(k, HCQ_OP_ADD, code, hcq_ir_binary(k, HCQ_OP_MUL, v[8], v[11])));
    hcq_ir_ref x = hcq_ir_load(k, in, lin);
    hcq_ir_store(k, outf, lin, hcq_ir_mulacc(k, x, hcq_ir_cast(k, HCQ_BF16, code), x));
    ag_run(&g);
}

/* a barrier kernel whose values cross phases in every way: a value made
 * before a barrier and used after, an accumulator assigned in several
 * phases, a uniform if around a barrier, a loop counter used inside */
Test(compile_agree, values_across_barriers)
{
    enum { L = 16, G = 3 };
    ag g;
    ag_init(&g, "phases", TU_DIMS1(G, L), 71);
    hcq_kernel *k = g.k;
    hcq_ir_ref in = ag_buf(&g, HCQ_I32, G * L, true, 0, "in"), out = ag_buf(&g, HCQ_I32, G * L, false, 0, "out");
    hcq_ir_ref n = ag_scalar(&g, HCQ_I32, 3);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_I32, L);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref gid = tu_gid(k);
    hcq_ir_ref mine = hcq_ir_load(k, in, gid);
    hcq_ir_ref acc = hcq_ir_define_acc(k, mine);
    hcq_ir_ref r = hcq_ir_range(k, ci(k, 0), n);
    hcq_ir_store(k, loc, lid, acc);
    hcq_ir_barrier(k);
    hcq_ir_ref nb = hcq_ir_load(k, loc, hcq_ir_binary(k, HCQ_OP_MOD, hcq_ir_binary(k, HCQ_OP_ADD, lid, hcq_ir_binary(k, HCQ_OP_ADD, r, ci(k, 1))), ci(k, L)));
    hcq_ir_barrier(k);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_ADD, hcq_ir_binary(k, HCQ_OP_MUL, nb, ci(k, 3)), mine));
    hcq_ir_ref odd = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPNE, hcq_ir_binary(k, HCQ_OP_AND, grp, ci(k, 1)), ci(k, 0)));
    hcq_ir_store(k, loc, lid, r);
    hcq_ir_barrier(k);
    hcq_ir_assign(k, acc, hcq_ir_binary(k, HCQ_OP_XOR, acc, hcq_ir_load(k, loc, hcq_ir_binary(k, HCQ_OP_SUB, ci(k, L - 1), lid))));
    hcq_ir_barrier(k);
    hcq_ir_endif(k, odd);
    hcq_ir_endrange(k, r);
    hcq_ir_store(k, out, gid, acc);
    ag_run(&g);
}

/* ** random kernels: straight-line code over random dtypes with random ops,
 * casts, ifs and loops carrying accumulators, stored out at the end. The
 * transcendental ops are left out (their ulp slack would propagate) and so
 * are bitcasts from floats (NaN payloads are not part of the semantics). */
typedef struct rk {
    ag *g;
    hcq_kernel *k;
    uint64_t s;
    hcq_ir_ref ref[512];
    hcq_dtype dt[512];
    int n;
} rk;

static void rk_push(rk *r, hcq_ir_ref ref, hcq_dtype t)
{
    cr_assert_neq(ref, HCQ_IR_NONE, "builder: %s", hcq_error_message());
    if (r->n < 512) {
        r->ref[r->n] = ref;
        r->dt[r->n++] = t;
    }
}

static int rk_pick(rk *r) { return (int)(tu_rand(&r->s) % (uint64_t)r->n); }

static int rk_pick_dt(rk *r, hcq_dtype t)
{
    int start = rk_pick(r);
    for (int j = 0; j < r->n; j++)
        if (r->dt[(start + j) % r->n] == t) return (start + j) % r->n;
    return -1;
}

/* a value of dtype t: one from the pool, else a cast of a random one */
static hcq_ir_ref rk_value(rk *r, hcq_dtype t)
{
    int j = rk_pick_dt(r, t);
    return j >= 0 ? r->ref[j] : hcq_ir_cast(r->k, t, r->ref[rk_pick(r)]);
}

static const hcq_op rk_unary[] = {HCQ_OP_NEG, HCQ_OP_SQRT, HCQ_OP_RECIP, HCQ_OP_TRUNC};
static const hcq_op rk_binary[] = {HCQ_OP_ADD, HCQ_OP_SUB, HCQ_OP_MUL, HCQ_OP_IDIV, HCQ_OP_MOD, HCQ_OP_FDIV,
                                   HCQ_OP_MAX, HCQ_OP_CMPLT, HCQ_OP_CMPNE, HCQ_OP_AND, HCQ_OP_OR, HCQ_OP_XOR,
                                   HCQ_OP_SHL, HCQ_OP_SHR};

static bool rk_accepts(hcq_op op, hcq_dtype t)
{
    bool i = hcq_dtype_is_int(t), f = hcq_dtype_is_float(t), b = t == HCQ_BOOL;
    switch (op) {
    case HCQ_OP_NEG: case HCQ_OP_ADD: case HCQ_OP_SUB: case HCQ_OP_MUL: case HCQ_OP_MAX: case HCQ_OP_CMPLT:
    case HCQ_OP_MULACC: return i || f;
    case HCQ_OP_IDIV: case HCQ_OP_MOD: case HCQ_OP_SHL: case HCQ_OP_SHR: return i;
    case HCQ_OP_AND: case HCQ_OP_OR: case HCQ_OP_XOR: return i || b;
    case HCQ_OP_CMPNE: return true;
    default: return f;
    }
}

static void rk_step(rk *r)
{
    hcq_kernel *k = r->k;
    int i = rk_pick(r);
    hcq_dtype t = r->dt[i];
    hcq_ir_ref a = r->ref[i];
    uint64_t c = tu_rand(&r->s) % 12;
    if (c < 3) {
        hcq_op op = rk_unary[tu_rand(&r->s) % BASE_ARRAY_LEN(rk_unary)];
        if (rk_accepts(op, t)) rk_push(r, hcq_ir_unary(k, op, a), t);
    } else if (c < 7) {
        hcq_op op = rk_binary[tu_rand(&r->s) % BASE_ARRAY_LEN(rk_binary)];
        if (!rk_accepts(op, t)) return;
        bool cmp = op == HCQ_OP_CMPLT || op == HCQ_OP_CMPNE;
        rk_push(r, hcq_ir_binary(k, op, a, rk_value(r, t)), cmp ? HCQ_BOOL : t);
    } else if (c == 7) {
        rk_push(r, hcq_ir_where(k, rk_value(r, HCQ_BOOL), a, rk_value(r, t)), t);
    } else if (c == 8 && rk_accepts(HCQ_OP_MULACC, t)) {
        rk_push(r, hcq_ir_mulacc(k, a, rk_value(r, t), rk_value(r, t)), t);
    } else if (c == 9 || c == 10) {
        hcq_dtype to = (hcq_dtype)(HCQ_BOOL + tu_rand(&r->s) % (HCQ_DTYPE_COUNT - HCQ_BOOL));
        rk_push(r, hcq_ir_cast(k, to, a), to);
    } else if (hcq_dtype_is_int(t)) {
        static const hcq_dtype same[][3] = {{HCQ_I8, HCQ_U8, HCQ_U8}, {HCQ_I16, HCQ_U16, HCQ_F16},
                                            {HCQ_I32, HCQ_U32, HCQ_F32}, {HCQ_I64, HCQ_U64, HCQ_F64}};
        size_t row = hcq_dtype_size(t) == 1 ? 0 : hcq_dtype_size(t) == 2 ? 1 : hcq_dtype_size(t) == 4 ? 2 : 3;
        hcq_dtype to = same[row][tu_rand(&r->s) % 3];
        if (row == 1 && to == HCQ_F16 && (tu_rand(&r->s) & 1)) to = HCQ_BF16;
        rk_push(r, hcq_ir_bitcast(k, to, a), to);
    }
}

/* an if or a loop: steps inside, an accumulator made before carries a
 * value out, and the block's own values go out of scope at its end */
static void rk_block(rk *r)
{
    hcq_kernel *k = r->k;
    int i = rk_pick(r);
    hcq_dtype t = r->dt[i];
    hcq_ir_ref acc = hcq_ir_define_acc(k, r->ref[i]);
    int saved = r->n;
    bool loop = tu_rand(&r->s) & 1;
    hcq_ir_ref open;
    if (loop) {
        hcq_ir_ref lo = hcq_ir_const_int(k, HCQ_I32, 0), hi = hcq_ir_binary(k, HCQ_OP_AND, rk_value(r, HCQ_I32),
                                                                          hcq_ir_const_int(k, HCQ_I32, 3));
        open = hcq_ir_range(k, lo, hi); /* 0..3 trips, varying per work-item */
        rk_push(r, open, HCQ_I32);
    } else {
        open = hcq_ir_if(k, rk_value(r, HCQ_BOOL));
    }
    rk_push(r, acc, t);
    for (int j = 0, m = 2 + (int)(tu_rand(&r->s) % 6); j < m; j++) rk_step(r);
    hcq_ir_ref v = rk_value(r, t);
    hcq_ir_assign(k, acc, rk_accepts(HCQ_OP_ADD, t) ? hcq_ir_binary(k, HCQ_OP_ADD, acc, v)
                                                     : hcq_ir_binary(k, HCQ_OP_XOR, acc, v));
    if (loop) hcq_ir_endrange(k, open);
    else hcq_ir_endif(k, open);
    r->n = saved;
    rk_push(r, acc, t);
}

static void random_kernel(uint64_t seed)
{
    enum { G = 3, L = 32, NE = G * L };
    char name[32];
    snprintf(name, sizeof name, "random_%llu", (unsigned long long)seed);
    ag g;
    ag_init(&g, name, TU_DIMS1(G, L), seed);
    rk r = {.g = &g, .k = g.k, .s = seed * 0x9E3779B97F4A7C15ull + 1};
    hcq_ir_ref gid = tu_gid(g.k);
    rk_push(&r, gid, HCQ_I32);
    for (int j = 0; j < 5; j++) {
        hcq_dtype t = (hcq_dtype)(HCQ_BOOL + tu_rand(&r.s) % (HCQ_DTYPE_COUNT - HCQ_BOOL));
        char label[16];
        snprintf(label, sizeof label, "in%d", j);
        rk_push(&r, hcq_ir_load(g.k, ag_buf(&g, t, NE, true, 0, label), gid), t);
    }
    for (int j = 0; j < 60; j++) {
        if (tu_rand(&r.s) % 10 == 0) rk_block(&r);
        else rk_step(&r);
    }
    /* every value still in scope goes out, one output buffer per dtype */
    for (int t = HCQ_BOOL; t < HCQ_DTYPE_COUNT; t++) {
        int count = 0;
        for (int j = 0; j < r.n; j++) count += r.dt[j] == (hcq_dtype)t;
        if (!count) continue;
        char label[16];
        snprintf(label, sizeof label, "out_%s", hcq_dtype_name((hcq_dtype)t));
        hcq_ir_ref out = ag_buf(&g, (hcq_dtype)t, (size_t)NE * count, false, 0, label);
        for (int j = 0, slot = 0; j < r.n; j++) {
            if (r.dt[j] != (hcq_dtype)t) continue;
            hcq_ir_ref idx = hcq_ir_mulacc(g.k, gid, hcq_ir_const_int(g.k, HCQ_I32, count),
                                           hcq_ir_const_int(g.k, HCQ_I32, slot++));
            hcq_ir_store(g.k, out, idx, r.ref[j]);
        }
    }
    ag_run(&g);
}

/* seeds 4-9 in CI (HCQ_TEST_LONG=1): make test's budget, and random
 * kernels on every engine are make difftest's */
static void long_only(void)
{
    if (!getenv("HCQ_TEST_LONG")) cr_skip_test("HCQ_TEST_LONG=1 (CI) runs random kernels 4-9 too");
}
Test(compile_agree, random_kernels_1) { for (uint64_t s = 1; s <= 3; s++) random_kernel(s); }
Test(compile_agree, random_kernels_2)
{
    long_only();
    for (uint64_t s = 4; s <= 6; s++) random_kernel(s);
}
Test(compile_agree, random_kernels_3)
{
    long_only();
    for (uint64_t s = 7; s <= 9; s++) random_kernel(s);
}
