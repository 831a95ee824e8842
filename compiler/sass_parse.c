/* nvdisasm's raw-mode text -> sass_insn (compiler/sass.h). Runs once per
 * code blob; the executor reads only what this produces.
 *
 * A line is `/\*OFFSET*\/ [@[!]P|UP] OPCODE[.MOD...] [operand, ...] ;`.
 * Operands: R/UR/P/UP/B registers with prefixes - | ! ~ and suffixes
 * (.reuse dropped, .64, .H0_H0, .H1, .F32, .B0-3, .X4...), hex integers,
 * decimal floats (+INF, QNAN), c[bank][offset | R+off | UR+off],
 * [desc[UR]][base(.64) + UR + offset], special registers, PR, and code
 * addresses (the branch targets of BRA, BSSY, CALL, BRA.DIV, ...). */
#include "compiler/sass.h"

#include "base/base.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_STR(n) #n,
static const char *const op_names[] = {SASS_OPCODES(NAME_STR)};
static const char *const mod_names[] = {SASS_MODS(NAME_STR)};
static const char *const sr_names[] = {SASS_SRS(NAME_STR)};
#undef NAME_STR

const char *sass_op_name(unsigned op) { return op < SASS_OP_COUNT ? op_names[op] : "?"; }
const char *sass_mod_name(unsigned mod) { return mod < SASS_MOD_COUNT ? mod_names[mod] : "?"; }

/* modifiers spelled otherwise than their enum names */
static int mod_lookup(const char *s, size_t n)
{
    static const struct {
        const char *text;
        int mod;
    } alias[] = {{"64", SASS_M_M64}, {"128", SASS_M_M128}, {"32", SASS_M_B32}, {"8", SASS_M_M8}, {"16", SASS_M_U16},
                   /* LDSM.16.M88.2 / .4: how many 8x8 matrices (ldmatrix's .x2 / .x4) */
                   {"2", SASS_M_MAT2}, {"4", SASS_M_MAT4}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(alias); i++)
        if (strlen(alias[i].text) == n && !memcmp(alias[i].text, s, n)) return alias[i].mod;
    for (int i = 0; i < SASS_MOD_COUNT; i++)
        if (strlen(mod_names[i]) == n && !memcmp(mod_names[i], s, n)) return i;
    return -1;
}

static bool is_type(int m)
{
    switch (m) {
    case SASS_M_U32: case SASS_M_S32: case SASS_M_U64: case SASS_M_S64: case SASS_M_U16: case SASS_M_S16:
    case SASS_M_U8: case SASS_M_S8: case SASS_M_F16: case SASS_M_BF16: case SASS_M_F32: case SASS_M_F64:
    case SASS_M_B32: case SASS_M_B64: case SASS_M_M64: case SASS_M_M128: case SASS_M_BF16_V2: return true;
    default: return false;
    }
}

/* ** operands */
static bool hex_num(const char *s, const char *end, uint64_t *v)
{
    bool neg = false;
    if (s < end && (*s == '-' || *s == '+')) neg = *s++ == '-';
    if (end - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
    uint64_t x = 0;
    for (s += 2; s < end; s++) {
        int d = isdigit((unsigned char)*s) ? *s - '0' : isxdigit((unsigned char)*s) ? (tolower(*s) - 'a' + 10) : -1;
        if (d < 0) return false;
        x = x << 4 | (uint64_t)d;
    }
    *v = neg ? (uint64_t)-(int64_t)x : x;
    return true;
}

/* a register name at s: kind, number; length or 0 */
static size_t reg_name(const char *s, const char *end, uint8_t *kind, uint32_t *reg)
{
    size_t n = (size_t)(end - s);
    const char *p = s;
    uint8_t k;
    uint32_t zero;
    if (n >= 3 && !strncmp(p, "UPR", 3) && (n == 3 || !isalnum((unsigned char)p[3]))) {
        *kind = SASS_K_PR; /* UPR: the uniform predicates as bits (reg 1) */
        *reg = 1;
        return 3;
    }
    if (n >= 2 && !strncmp(p, "UR", 2)) k = SASS_K_UR, p += 2, zero = 63;
    else if (n >= 2 && !strncmp(p, "UP", 2)) k = SASS_K_UP, p += 2, zero = 7;
    else if (n >= 2 && !strncmp(p, "PR", 2) && (n == 2 || !isalnum((unsigned char)p[2]))) {
        *kind = SASS_K_PR;
        *reg = 0;
        return 2;
    } else if (*p == 'R') k = SASS_K_R, p += 1, zero = 255;
    else if (*p == 'P') k = SASS_K_P, p += 1, zero = 7;
    else if (*p == 'B' && n >= 2 && isdigit((unsigned char)p[1])) k = SASS_K_B, p += 1, zero = 0;
    else return 0;
    if (p < end && (*p == 'Z' || *p == 'T') && (k != SASS_K_B)) {
        if ((*p == 'Z') != (k == SASS_K_R || k == SASS_K_UR)) return 0;
        p++;
        if (p < end && isalnum((unsigned char)*p)) return 0;
        *kind = k;
        *reg = zero;
        return (size_t)(p - s);
    }
    if (p >= end || !isdigit((unsigned char)*p)) return 0;
    uint32_t v = 0;
    while (p < end && isdigit((unsigned char)*p)) v = v * 10 + (uint32_t)(*p++ - '0');
    if (p < end && isalnum((unsigned char)*p)) return 0;
    if (v >= zero && k != SASS_K_B) return 0;
    if (k == SASS_K_B && v > 15) return 0;
    *kind = k;
    *reg = v;
    return (size_t)(p - s);
}

static bool suffix(const char *s, const char *end, sass_opnd *o)
{
    static const struct {
        const char *text;
        uint8_t sel;
        uint8_t flag;
    } sx[] = {{".reuse", 0, 0},
              {".64", 0, SASS_F_WIDE},
              {".H0_H0", SASS_SEL_H0_H0, 0},
              {".H1_H1", SASS_SEL_H1_H1, 0},
              {".H1_H0", SASS_SEL_H1_H0, 0},
              {".H0", SASS_SEL_H0, 0},
              {".H1", SASS_SEL_H1, 0},
              {".F32", SASS_SEL_F32, 0},
              {".B0", SASS_SEL_B0, 0},
              {".B1", SASS_SEL_B1, 0},
              {".B2", SASS_SEL_B2, 0},
              {".B3", SASS_SEL_B3, 0},
              {".BF16_V2", SASS_SEL_BF16_V2, 0},
              {".X4", SASS_SEL_X4, 0},
              {".X8", SASS_SEL_X8, 0},
              {".X16", SASS_SEL_X16, 0},
              {".U32", 0, 0}}; /* an address register's 32-bit zero extension: what R alone means */
    while (s < end) {
        size_t best = 0, which = 0;
        for (size_t i = 0; i < BASE_ARRAY_LEN(sx); i++) {
            size_t n = strlen(sx[i].text);
            if (n <= (size_t)(end - s) && !memcmp(s, sx[i].text, n) && (s + n == end || s[n] == '.') && n > best)
                best = n, which = i;
        }
        if (!best) return false;
        if (sx[which].sel) o->sel = sx[which].sel;
        o->flags |= sx[which].flag;
        s += best;
    }
    return true;
}

static bool float_num(const char *s, const char *end, double *v)
{
    char buf[64];
    size_t n = (size_t)(end - s);
    if (!n || n >= sizeof buf) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *p = buf;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    if (!strcmp(p, "INF")) *v = INFINITY;
    else if (!strcmp(p, "QNAN") || !strcmp(p, "NAN")) *v = NAN;
    else {
        char *e;
        if (!isdigit((unsigned char)*p) && *p != '.') return false;
        *v = strtod(p, &e);
        if (*e) return false;
    }
    if (neg) *v = -*v;
    return true;
}

/* [base + UR + off] (s..end inside the brackets) */
static bool mem_terms(const char *s, const char *end, sass_opnd *o)
{
    o->kind = SASS_K_MEM;
    o->reg = 255;
    o->reg2 = 63;
    o->imm = 0;
    bool base = false;
    while (s < end) {
        const char *t = s;
        while (t < end && *t != '+') t++;
        /* a negative offset prints as "+-0x10" */
        uint64_t v;
        uint8_t k;
        uint32_t r;
        size_t n;
        if (hex_num(s, t, &v)) o->imm += v;
        else if ((n = reg_name(s, t, &k, &r)) && (k == SASS_K_R || k == SASS_K_UR)) {
            sass_opnd tmp = {0};
            if (!suffix(s + n, t, &tmp)) return false;
            if (k == SASS_K_R && !base) {
                o->reg = r;
                o->flags |= tmp.flags & SASS_F_WIDE;
                o->sel = tmp.sel;
                base = true;
            } else if (k == SASS_K_UR && !base) {
                /* [UR4] or [UR4+0x10]: a uniform base */
                o->reg = r;
                o->flags |= SASS_F_BASE_UR | (tmp.flags & SASS_F_WIDE);
                base = true;
            } else if (k == SASS_K_UR && o->reg2 == 63) {
                o->reg2 = (uint8_t)r;
                o->flags |= SASS_F_IDX_UR;
            } else {
                return false;
            }
        } else {
            return false;
        }
        s = t < end ? t + 1 : t;
    }
    return true;
}

/* one operand, s..end trimmed; false if it is none of the forms above */
static bool operand(const char *s, const char *end, bool target_ok, sass_opnd *o)
{
    memset(o, 0, sizeof *o);
    o->reg2 = 255;
    /* "|R0|.reuse": the reuse flag is a scheduling hint */
    if (end - s > 6 && !memcmp(end - 6, ".reuse", 6)) end -= 6;
    /* prefixes */
    for (;;) {
        if (s < end && *s == '-' && end - s > 1 && !isdigit((unsigned char)s[1]) && s[1] != '.' && strncmp(s, "-INF", 4) &&
            strncmp(s, "-QNAN", 5)) {
            o->flags |= SASS_F_NEG;
            s++;
        } else if (s < end && (*s == '!' || *s == '~')) {
            o->flags |= SASS_F_NOT;
            s++;
        } else if (s < end && *s == '|' && end - s > 2 && end[-1] == '|') {
            o->flags |= SASS_F_ABS;
            s++;
            end--;
        } else {
            break;
        }
    }
    if (s >= end) return false;
    uint64_t v;
    if (hex_num(s, end, &v)) {
        o->kind = target_ok ? SASS_K_TARGET : SASS_K_IMM;
        o->imm = v;
        return true;
    }
    double d;
    if (float_num(s, end, &d)) {
        o->kind = SASS_K_IMM;
        o->flags |= SASS_F_FLOAT;
        memcpy(&o->imm, &d, 8);
        return true;
    }
    if (end - s >= 3 && !strncmp(s, "SR", 2) && (s[2] == '_' || s[2] == 'Z')) {
        char name[40];
        size_t n = (size_t)(end - s);
        if (n >= sizeof name) return false;
        for (size_t i = 0; i < n; i++) name[i] = s[i] == '.' ? '_' : s[i];
        name[n] = 0;
        for (int i = 0; i < SASS_SR_COUNT; i++)
            if (!strcmp(name, sr_names[i])) {
                o->kind = SASS_K_SR;
                o->reg = (uint32_t)i;
                return true;
            }
        return false;
    }
    if (s[0] == 'c' && s[1] == '[') { /* c[bank][...] */
        const char *b = s + 2, *be = memchr(b, ']', (size_t)(end - b));
        if (!be || !hex_num(b, be, &v) || v > 17 || be + 1 >= end || be[1] != '[' || end[-1] != ']') return false;
        sass_opnd m = {0};
        if (!mem_terms(be + 2, end - 1, &m)) return false;
        o->kind = SASS_K_CBANK;
        o->reg = (uint32_t)v;
        o->imm = m.imm;
        if (m.reg != 255 && !(m.flags & SASS_F_BASE_UR)) o->flags |= SASS_F_IDX_R, o->reg2 = (uint8_t)m.reg;
        else if (m.flags & SASS_F_BASE_UR) o->flags |= SASS_F_IDX_UR, o->reg2 = (uint8_t)m.reg;
        return true;
    }
    const char *m = s;
    if (end - s > 5 && !strncmp(s, "desc[", 5)) { /* a memory descriptor: the mock's MMU checks every access itself */
        m = memchr(s, ']', (size_t)(end - s));
        if (!m) return false;
        m++;
    }
    if (*m == '[' && end[-1] == ']') return mem_terms(m + 1, end - 1, o);
    uint8_t k;
    uint32_t r;
    size_t n = reg_name(s, end, &k, &r);
    if (!n) return false;
    o->kind = k;
    o->reg = r;
    return suffix(s + n, end, o);
}

static bool is_branch(int op)
{
    return op == SASS_OP_BRA || op == SASS_OP_BSSY || op == SASS_OP_CALL || op == SASS_OP_JMP || op == SASS_OP_BREAK;
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    int ee = (int)e - 127 + 15;
    if (ee >= 31) return (uint16_t)(sign | 0x7c00);
    if (ee <= 0) {
        if (ee < -10) return (uint16_t)sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - ee), h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = (uint32_t)ee << 10 | m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

/* immediates as the op reads them: f32 bits for single-precision ops, the
 * double's bits (or its high word) for double ops, two packed halves for
 * the paired-half ops.
 * nvdisasm prints every NaN immediate as "QNAN" (sign aside), losing its
 * payload, and ptxas uses NaN patterns as plain bits: libdevice's log2(0)
 * ends in `FSEL R5, R3, -QNAN, P0` whose immediate is 0xfff00000, the high
 * word of -inf. So a NaN immediate is read from the instruction word
 * itself (`raw`, its low 64 bits; NULL: none): on sm_70 and later an
 * ALU op's 32-bit immediate is bits 32..63 (for a double op the high word
 * of the double, for the paired-half ops both halves), as nvdisasm -hex
 * shows (`FSEL R5, R3, -QNAN , P0 ; 0xfff0000003057808`); the layout is
 * not documented by NVIDIA, so this one rule is used only for NaNs. */
static void finish_imms(sass_insn *in, const uint64_t *raw)
{
    int op = in->op;
    bool half2 = op == SASS_OP_HADD2 || op == SASS_OP_HMUL2 || op == SASS_OP_HFMA2 || op == SASS_OP_HSETP2 ||
                 op == SASS_OP_HMNMX2 || op == SASS_OP_HSET2;
    bool dbl = op == SASS_OP_DADD || op == SASS_OP_DMUL || op == SASS_OP_DFMA || op == SASS_OP_DSETP ||
               op == SASS_OP_DMNMX;
    bool hi64 = op == SASS_OP_MUFU && (sass_has(in, SASS_M_RCP64H) || sass_has(in, SASS_M_RSQ64H));
    for (unsigned i = 0; i < in->nops; i++) {
        sass_opnd *o = &in->o[i];
        if (o->kind != SASS_K_IMM || !(o->flags & SASS_F_FLOAT)) continue;
        double d;
        memcpy(&d, &o->imm, 8);
        bool nan_imm = raw && isnan(d);
        if (half2 && i + 1 < in->nops && in->o[i + 1].kind == SASS_K_IMM && (in->o[i + 1].flags & SASS_F_FLOAT)) {
            double d2;
            memcpy(&d2, &in->o[i + 1].imm, 8);
            /* nvdisasm prints the high half first: "0, 5.9604644775390625e-08" is 0x00000001 */
            o->imm = (uint64_t)f32_to_f16((float)d2) | (uint64_t)f32_to_f16((float)d) << 16;
            if (raw && (isnan(d) || isnan(d2))) o->imm = *raw >> 32;
            o->flags &= (uint8_t)~SASS_F_FLOAT;
            memmove(&in->o[i + 1], &in->o[i + 2], (in->nops - i - 2) * sizeof *o);
            in->nops--;
            continue;
        }
        if (nan_imm) {
            o->imm = dbl ? *raw >> 32 << 32 : *raw >> 32;
        } else if (dbl) {
            memcpy(&o->imm, &d, 8);
        } else if (hi64) {
            uint64_t b;
            memcpy(&b, &d, 8);
            o->imm = b >> 32;
        } else {
            float f = (float)d;
            uint32_t b;
            memcpy(&b, &f, 4);
            o->imm = b;
        }
        o->flags &= (uint8_t)~SASS_F_FLOAT;
    }
}

static int op_lookup(const char *s, size_t n)
{
    for (int i = 1; i < SASS_OP_COUNT; i++)
        if (strlen(op_names[i]) == n && !memcmp(op_names[i], s, n)) return i;
    return SASS_OP_UNKNOWN;
}

/* splits at top-level commas (none inside brackets); also at the space of
 * "RET.REL.NODEC R20 0x0" */
static unsigned split(const char *s, const char *end, const char **b, const char **e, unsigned max)
{
    unsigned n = 0;
    int depth = 0;
    const char *start = s;
    for (const char *p = s; p <= end; p++) {
        bool cut = p == end || (*p == ',' && !depth);
        if (p < end && (*p == '[')) depth++;
        if (p < end && (*p == ']')) depth--;
        if (p < end && *p == ' ' && !depth && p > start) {
            const char *q = p;
            while (q < end && *q == ' ') q++;
            if (q < end && *q != ',' && p[-1] != ',' && *q != '|') cut = true; /* "R20 0x0" */
        }
        if (!cut) continue;
        const char *a = start, *z = p;
        while (a < z && isspace((unsigned char)*a)) a++;
        while (z > a && isspace((unsigned char)z[-1])) z--;
        if (a < z) {
            if (n == max) return max + 1;
            b[n] = a;
            e[n] = z;
            n++;
        }
        start = p + 1;
        if (p < end && *p == ' ') {
            while (start < end && *start == ' ') start++;
            p = start - 1;
        }
    }
    return n;
}

/* one instruction's text (after the offset comment, without ';') */
static void parse_insn(const char *s, const char *end, const uint64_t *raw, sass_insn *in)
{
    memset(in, 0, sizeof *in);
    in->guard = 7;
    in->target = UINT32_MAX;
    while (s < end && isspace((unsigned char)*s)) s++;
    if (s < end && *s == '@') {
        s++;
        bool neg = s < end && *s == '!';
        if (neg) s++;
        uint8_t k;
        uint32_t r;
        size_t n = reg_name(s, end, &k, &r);
        if (!n || (k != SASS_K_P && k != SASS_K_UP)) return; /* UNKNOWN */
        in->guard = (uint8_t)(r | (k == SASS_K_UP ? 0x08 : 0) | (neg ? 0x10 : 0));
        s += n;
        while (s < end && isspace((unsigned char)*s)) s++;
    }
    const char *w = s;
    while (w < end && !isspace((unsigned char)*w)) w++;
    const char *dot = memchr(s, '.', (size_t)(w - s));
    const char *name_end = dot ? dot : w;
    int op = op_lookup(s, (size_t)(name_end - s));
    if (op == SASS_OP_UNKNOWN) return;
    for (const char *m = dot; m && m < w;) {
        const char *me = m + 1;
        while (me < w && *me != '.') me++;
        int id = mod_lookup(m + 1, (size_t)(me - m - 1));
        if (id < 0) return; /* an unknown modifier: UNKNOWN, so running it is an illegal instruction */
        in->mods[id / 64] |= 1ull << (id % 64);
        if (is_type(id) && in->ntypes < 3) in->types[in->ntypes++] = (uint8_t)id;
        m = me;
    }
    /* the tensor-core modifiers mean something only on HMMA and LDSM: on any other op they make it unknown (an
     * illegal instruction when run) rather than a modifier its executor would ignore */
    if (op != SASS_OP_HMMA && op != SASS_OP_LDSM &&
        (sass_has(in, SASS_M_16816) || sass_has(in, SASS_M_M88) || sass_has(in, SASS_M_MT88) ||
         sass_has(in, SASS_M_MAT2) || sass_has(in, SASS_M_MAT4)))
        return;
    const char *b[SASS_MAX_OPNDS + 1], *e[SASS_MAX_OPNDS + 1];
    unsigned n = split(w, end, b, e, SASS_MAX_OPNDS);
    if (n > SASS_MAX_OPNDS) return;
    for (unsigned i = 0; i < n; i++) {
        bool tgt = is_branch(op) || (op == SASS_OP_BRA);
        if (!operand(b[i], e[i], tgt, &in->o[i])) {
            /* scoreboard operands of DEPBAR ("SB0") mean nothing here */
            if (op == SASS_OP_DEPBAR) {
                n = i;
                break;
            }
            return;
        }
    }
    in->nops = (uint8_t)n;
    in->op = (uint16_t)op;
    finish_imms(in, raw);
}

hcq_status sass_parse(const char *text, uint32_t sm, uint32_t ninsns, const void *code, sass_prog **out)
{
    sass_prog *p = calloc(1, sizeof *p);
    size_t cap = 4096;
    if (!p || !(p->insns = calloc(ninsns ? ninsns : 1, sizeof *p->insns)) || !(p->strings = malloc(cap))) {
        sass_prog_free(p);
        return base_err(HCQ_ENOMEM, "decoding SASS: out of memory");
    }
    p->sm = sm;
    p->ninsns = ninsns;
    p->strings[0] = 0; /* offset 0: "" (an instruction the text lacks) */
    size_t used = 1;
    for (uint32_t i = 0; i < ninsns; i++) {
        p->insns[i].target = UINT32_MAX;
        p->insns[i].guard = 7;
    }
    uint32_t line_no = 0;
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n'), *le = nl ? nl : l + strlen(l);
        line_no++;
        const char *s = l;
        l = nl ? nl + 1 : NULL;
        while (s < le && isspace((unsigned char)*s)) s++;
        if (le - s < 4 || s[0] != '/' || s[1] != '*') continue;
        const char *ce = strstr(s, "*/");
        uint64_t off = 0;
        char hex[24];
        size_t hn = ce ? (size_t)(ce - s - 2) : 0;
        if (!ce || ce > le || hn == 0 || hn > 16) continue;
        snprintf(hex, sizeof hex, "0x%.*s", (int)hn, s + 2);
        if (!hex_num(hex, hex + strlen(hex), &off)) continue;
        if (off % 16 || off / 16 >= ninsns) {
            sass_prog_free(p);
            return base_err(HCQ_EFORMAT, "decoding SASS: line %u is at offset 0x%llx, outside the %u instructions "
                            "decoded", line_no, (unsigned long long)off, ninsns);
        }
        s = ce + 2;
        const char *semi = memchr(s, ';', (size_t)(le - s));
        const char *ie = semi ? semi : le;
        while (s < ie && isspace((unsigned char)*s)) s++;
        while (ie > s && isspace((unsigned char)ie[-1])) ie--;
        sass_insn *in = &p->insns[off / 16];
        uint64_t word;
        if (code) memcpy(&word, (const uint8_t *)code + off, 8);
        parse_insn(s, ie, code ? &word : NULL, in);
        size_t len = (size_t)(ie - s);
        if (used + len + 1 > cap) {
            while (used + len + 1 > cap) cap *= 2;
            char *ns = realloc(p->strings, cap);
            if (!ns) {
                sass_prog_free(p);
                return base_err(HCQ_ENOMEM, "decoding SASS: out of memory");
            }
            p->strings = ns;
        }
        memcpy(p->strings + used, s, len);
        p->strings[used + len] = 0;
        in->text = (uint32_t)used;
        used += len + 1;
    }
    /* branch targets: bytes -> instruction indices */
    for (uint32_t i = 0; i < ninsns; i++) {
        sass_insn *in = &p->insns[i];
        for (unsigned k = 0; k < in->nops; k++) {
            if (in->o[k].kind != SASS_K_TARGET) continue;
            uint64_t t = in->o[k].imm;
            in->target = t % 16 == 0 && t / 16 < ninsns ? (uint32_t)(t / 16) : UINT32_MAX - 1;
        }
    }
    p->strings_size = (uint32_t)used;
    *out = p;
    return HCQ_OK;
}

void sass_prog_free(sass_prog *p)
{
    if (!p) return;
    free(p->insns);
    free(p->strings);
    free(p);
}
