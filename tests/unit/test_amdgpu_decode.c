/* The AMDGPU decoder (compiler/amdgpu_isa.h) against an independent
 * oracle: every instruction of real code objects (the foreign HIP corpus,
 * tests/corpus/hip/corpus.hip, built by clang for gfx1100 wave32 and wave64,
 * gfx942 and gfx90a) decodes to the mnemonic, length and operands
 * llvm-objdump prints for it (llvm-objdump's text is the oracle; the
 * opcode tables are written from AMD's guides and LLVM's .td files). For
 * the few instructions whose operand syntax is symbolic (s_waitcnt,
 * s_delay_alu, hwreg(), swizzle()), the mnemonic and length are compared.
 * Every opcode of the tables, built into an instruction with plain
 * operands, is named as LLVM's disassembler names it (llvm-mc -disassemble),
 * so a table entry no corpus exercises is checked too. Also: bytes that are
 * no instruction decode to "unknown" with their length, never to something
 * else. Skips, saying why, without clang or an
 * llvm-objdump that knows AMDGPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/amdgpu_isa.h"
#include "compiler/cc.h"
#include "compiler/elf.h"
#include "hcqtest.h"
#include "hiptest.h"

static const char *find_tool(const char *const *names, char *buf, size_t size)
{
    const char *path = getenv("PATH");
    for (const char *const *n = names; *n; n++) {
        const char *p = path ? path : "/usr/bin";
        while (*p) {
            const char *e = strchr(p, ':');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            snprintf(buf, size, "%.*s/%s", (int)len, p, *n);
            if (!access(buf, X_OK)) return buf;
            p += len + (e ? 1 : 0);
        }
    }
    return NULL;
}

/* llvm-objdump's lines: "\t<text>  // <ADDR>: <HEX> <HEX>..." */
typedef struct ref {
    uint64_t addr;
    unsigned len;
    char text[200];
} ref;

static size_t parse_objdump(char *out, ref **refs)
{
    size_t n = 0, cap = 1024;
    *refs = malloc(cap * sizeof **refs);
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char *c = strstr(line, "// ");
        if (line[0] != '\t' || !c) continue;
        char *colon = strchr(c, ':');
        if (!colon) continue;
        unsigned long long a = strtoull(c + 3, NULL, 16);
        unsigned words = 0;
        for (char *p = colon + 1; *p;) {
            while (*p == ' ') p++;
            size_t k = strspn(p, "0123456789ABCDEF");
            if (k != 8) break;
            words++;
            p += k;
        }
        /* the text: whitespace collapsed */
        ref r = {.addr = a, .len = words * 4};
        size_t j = 0;
        bool sp = false;
        for (char *p = line + 1; p < c && j + 1 < sizeof r.text; p++) {
            if (*p == ' ' || *p == '\t') {
                sp = true;
                continue;
            }
            if (sp && j) r.text[j++] = ' ';
            sp = false;
            r.text[j++] = *p;
        }
        r.text[j] = 0;
        if (n == cap) *refs = realloc(*refs, (cap *= 2) * sizeof **refs);
        (*refs)[n++] = r;
    }
    return n;
}

static bool symbolic(const char *mn)
{
    static const char *const names[] = {"s_waitcnt", "s_delay_alu", "s_waitcnt_depctr", "s_sendmsg", "s_getreg_b32",
                                        "s_setreg_b32", "s_setreg_imm32_b32", "s_set_inst_prefetch_distance",
                                        "ds_swizzle_b32", "s_waitcnt_vscnt", "s_waitcnt_lgkmcnt", "s_waitcnt_vmcnt",
                                        NULL};
    for (const char *const *n = names; *n; n++)
        if (!strcmp(mn, *n)) return true;
    return false;
}

static void oracle_of(const char *file, size_t min_insns, const char *arch, bool w64, amdi_target t)
{
    static const char *const tools[] = {"llvm-objdump-22", "llvm-objdump-21", "llvm-objdump-20", "llvm-objdump", NULL};
    char tool[4200];
    if (!find_tool(tools, tool, sizeof tool)) cr_skip_test("no llvm-objdump on PATH (scripts/deps.sh installs it)");
    size_t size;
    void *bin = t_build_hip(file, arch, w64, &size);
    char dir[4096], path[4200], mcpu[64];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(path, sizeof path, "%s/k.co", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bin, 1, size, f), size);
    fclose(f);
    snprintf(mcpu, sizeof mcpu, "--mcpu=%s", arch);
    const char *argv[] = {tool, "-d", mcpu, w64 ? "--mattr=+wavefrontsize64" : path, w64 ? path : NULL, NULL};
    char *out = NULL;
    int code = -1;
    T_OK(cc_run(argv, &out, &code));
    cc_remove_temp_dir(dir);
    if (code || !strstr(out, "s_endpgm")) cr_skip_test("%s does not disassemble %s: %.300s", tool, arch, out);
    ref *refs;
    size_t nref = parse_objdump(out, &refs);
    free(out);
    cr_assert_gt(nref, min_insns, "llvm-objdump printed %zu instructions", nref);

    cc_elf e;
    T_OK(cc_elf_open(&e, bin, size));
    const cc_elf_section *text = cc_elf_find_section(&e, ".text");
    cr_assert_not_null(text);
    size_t checked = 0, bad = 0, r = 0;
    char report[4096] = "";
    size_t rlen = 0;
    for (uint64_t off = 0; off < text->size;) {
        uint64_t a = text->addr + off;
        amdi_inst in[2];
        int rc = amdi_decode(&t, text->data + off, (size_t)(text->size - off), in);
        while (r < nref && refs[r].addr < a) r++;
        unsigned len = in[0].len ? in[0].len : 4;
        if (r < nref && refs[r].addr == a) {
            char mine[256], mn[96];
            amdi_print(&t, in, &in[1], mine, sizeof mine);
            amdi_mnemonic(&t, in, mn, sizeof mn);
            const ref *x = &refs[r];
            char rmn[96];
            snprintf(rmn, sizeof rmn, "%.*s", (int)strcspn(x->text, " "), x->text);
            bool ok = !rc && x->len == len && !strcmp(rmn, mn) && (symbolic(rmn) || !strcmp(x->text, mine));
            if (rc && !strcmp(rmn, ".long")) ok = true; /* neither knows the word (semantics.hip plants one) */
            checked++;
            if (!ok && ++bad <= 12 && rlen < sizeof report - 400)
                rlen += (size_t)snprintf(report + rlen, sizeof report - rlen, "\n  0x%llx: llvm-objdump [%s] (%u bytes), "
                                         "decoder [%s] (%u bytes%s)", (unsigned long long)a, x->text, x->len, mine, len,
                                         rc ? ", failed" : "");
        }
        off += len;
    }
    cr_assert_gt(checked, min_insns);
    cr_assert_eq(bad, 0, "%s%s: %zu of %zu instructions differ from llvm-objdump:%s", arch, w64 ? " wave64" : "", bad,
                 checked, report);
    free(refs);
    cc_elf_close(&e);
    free(bin);
}

static void oracle(const char *arch, bool w64, amdi_target t) { oracle_of("corpus.hip", 500, arch, w64, t); }

Test(amdgpu_decode, gfx1100_wave32) { oracle("gfx1100", false, (amdi_target){AMDI_GFX11, false, 32}); }
Test(amdgpu_decode, gfx1100_wave64) { oracle("gfx1100", true, (amdi_target){AMDI_GFX11, false, 64}); }
Test(amdgpu_decode, gfx942) { oracle("gfx942", false, (amdi_target){AMDI_GFX9, true, 64}); }
Test(amdgpu_decode, gfx90a) { oracle("gfx90a", false, (amdi_target){AMDI_GFX9, false, 64}); }
/* the executor's semantics kernels: the dot products (VOP3P iu signedness,
 * gfx9's dot*c, gfx11's VOPD dot2acc) and the division sequences */
Test(amdgpu_decode, semantics_gfx1100) { oracle_of("semantics.hip", 200, "gfx1100", false, (amdi_target){AMDI_GFX11, false, 32}); }
/* the matrix cores: WMMA (gfx1100 wave32 and wave64), MFMA with VGPRs and with AGPRs (gfx90a, gfx942) */
Test(amdgpu_decode, mma_gfx1100) { oracle_of("mma.hip", 100, "gfx1100", false, (amdi_target){AMDI_GFX11, false, 32}); }
Test(amdgpu_decode, mma_gfx1100_wave64) { oracle_of("mma_w64.hip", 20, "gfx1100", true, (amdi_target){AMDI_GFX11, false, 64}); }
Test(amdgpu_decode, mma_gfx90a) { oracle_of("mma.hip", 100, "gfx90a", false, (amdi_target){AMDI_GFX9, false, 64}); }
Test(amdgpu_decode, mma_gfx942) { oracle_of("mma.hip", 100, "gfx942", false, (amdi_target){AMDI_GFX9, true, 64}); }
Test(amdgpu_decode, semantics_gfx942) { oracle_of("semantics.hip", 200, "gfx942", false, (amdi_target){AMDI_GFX9, true, 64}); }

/* bytes that are no instruction: unknown, with the encoding's length
 * where the encoding is known, never another instruction */
Test(amdgpu_decode, unknown_words_are_unknown)
{
    amdi_target t11 = {AMDI_GFX11, false, 32}, t9 = {AMDI_GFX9, true, 64};
    amdi_inst in[2];
    /* gfx11 SOPP opcode 0x7f does not exist */
    const uint8_t sopp[] = {0x00, 0x00, 0xff, 0xbf};
    cr_assert_eq(amdi_decode(&t11, sopp, sizeof sopp, in), -1);
    cr_assert_eq(in[0].op, AMDI_OP_NONE);
    char buf[128];
    amdi_print(&t11, in, NULL, buf, sizeof buf);
    cr_assert(strstr(buf, "unknown"), "%s", buf);
    /* a VOP3 opcode with no op in gfx9's table: unknown, 8 bytes */
    const uint8_t vop3[] = {0x00, 0x00, 0xff, 0xd3, 0x00, 0x00, 0x00, 0x00};
    cr_assert_eq(amdi_decode(&t9, vop3, sizeof vop3, in), -1);
    cr_assert_eq(in[0].len, 8);
    /* truncated: a VOP3 cut after its first dword */
    cr_assert_eq(amdi_decode(&t9, vop3, 4, in), -1);
    /* a literal operand that is missing its dword (v_mov_b32 v0, lit) */
    const uint8_t lit[] = {0xff, 0x02, 0x00, 0x7e};
    cr_assert_eq(amdi_decode(&t11, lit, sizeof lit, in), -1);
    const uint8_t lit2[] = {0xff, 0x02, 0x00, 0x7e, 0x78, 0x56, 0x34, 0x12};
    cr_assert_eq(amdi_decode(&t11, lit2, sizeof lit2, in), 0);
    amdi_print(&t11, in, NULL, buf, sizeof buf);
    cr_assert_str_eq(buf, "v_mov_b32_e32 v0, 0x12345678");
}

/* gfx940's scratch instructions say with SVE (bit 13) whether the VGPR
 * address is used; gfx90a uses it exactly when saddr is off. Encodings
 * from llvm-mc -show-encoding (-mcpu=gfx942 and gfx90a). A stack slot at
 * offset 0 (`off, v1, off`) read as `v0, v1, off` sent a spill to the
 * address in v0. */
Test(amdgpu_decode, scratch_vgpr_address_as_each_gfx9_encodes_it)
{
    static const struct {
        bool gfx940;
        uint8_t bytes[8];
        const char *text;
    } cases[] = {
        {true, {0x38, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x7f, 0x00}, "scratch_store_dword off, v1, off offset:56"},
        {true, {0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x7f, 0x00}, "scratch_store_dword off, v1, off"},
        {true, {0x00, 0x60, 0x70, 0xdc, 0x00, 0x01, 0x7f, 0x00}, "scratch_store_dword v0, v1, off"},
        {true, {0x08, 0x60, 0x70, 0xdc, 0x00, 0x01, 0x02, 0x00}, "scratch_store_dword v0, v1, s2 offset:8"},
        {true, {0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x02, 0x00}, "scratch_store_dword off, v1, s2"},
        {false, {0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x7f, 0x00}, "scratch_store_dword v0, v1, off"},
        {false, {0x00, 0x40, 0x70, 0xdc, 0x00, 0x01, 0x02, 0x00}, "scratch_store_dword off, v1, s2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        amdi_target t = {AMDI_GFX9, cases[i].gfx940, 64};
        amdi_inst in[2];
        char buf[128];
        cr_assert_eq(amdi_decode(&t, cases[i].bytes, 8, in), 0, "case %zu", i);
        amdi_print(&t, in, NULL, buf, sizeof buf);
        cr_assert_str_eq(buf, cases[i].text, "%s: [%s], llvm-mc: [%s]", cases[i].gfx940 ? "gfx942" : "gfx90a", buf,
                         cases[i].text);
    }
}

/* Every opcode of the tables: an instruction built from the table's opcode
 * with plain operands (aligned register tuples, no literal unless the op
 * needs one), named by the decoder and by LLVM's disassembler (llvm-mc
 * -disassemble, the oracle), one per line. */
static size_t put32(uint8_t *p, uint32_t w)
{
    memcpy(p, &w, 4);
    return 4;
}

static size_t encode(const amdi_target *t, const char *enc, unsigned opc, uint8_t *p, bool *skip)
{
    bool g11 = t->fam == AMDI_GFX11;
    *skip = false;
    if (!strcmp(enc, "sop1")) return put32(p, 0xbe800000u | 4u << 16 | opc << 8 | 6u);
    if (!strcmp(enc, "sop2")) return put32(p, 0x80000000u | opc << 23 | 4u << 16 | 8u << 8 | 6u);
    if (!strcmp(enc, "sopk")) return put32(p, 0xb0000000u | opc << 23 | 4u << 16 | 0x10u);
    if (!strcmp(enc, "sopc")) return put32(p, 0xbf000000u | opc << 16 | 8u << 8 | 6u);
    if (!strcmp(enc, "sopp")) return put32(p, 0xbf800000u | opc << 16);
    amdi_op top = AMDI_OP_NONE;
    const amdi_tables *tb = amdi_tables_of(t);
    if (!strcmp(enc, "smem")) top = (amdi_op)tb->smem[opc];
    if (!strcmp(enc, "vop1")) top = (amdi_op)tb->vop1[opc];
    if (top == AMDI_V_NOP) return put32(p, 0x7e000000u);
    if (top == AMDI_S_DCACHE_INV || top == AMDI_S_GL1_INV)
        return put32(p, (g11 ? 0xf4000000u : 0xc0000000u) | opc << 18) + put32(p + 4, g11 ? 124u << 25 : 0);
    if (top == AMDI_S_MEMTIME || top == AMDI_S_MEMREALTIME) return put32(p, 0xc0000000u | opc << 18 | 4u << 6) + put32(p + 4, 0);
    if (!strcmp(enc, "smem")) {
        if (g11) return put32(p, 0xf4000000u | opc << 18 | 4u << 6 | 1u) + put32(p + 4, 124u << 25 | 0x10u);
        return put32(p, 0xc0000000u | opc << 18 | 1u << 17 | 4u << 6 | 1u) + put32(p + 4, 0x10u);
    }
    if (!strcmp(enc, "vop1")) return put32(p, 0x7e000000u | 4u << 17 | opc << 9 | (256u + 2));
    if (!strcmp(enc, "vop2")) {
        size_t n = put32(p, opc << 25 | 4u << 17 | 6u << 9 | (256u + 2));
        amdi_inst in[2];
        amdi_decode(t, p, 4, in); /* fmamk/fmaak/madmk/madak take a literal */
        amdi_op op = (amdi_op)amdi_tables_of(t)->vop2[opc];
        if (op == AMDI_V_FMAMK_F32 || op == AMDI_V_FMAAK_F32 || op == AMDI_V_MADMK_F32 || op == AMDI_V_MADAK_F32)
            n += put32(p + 4, 0x3f800000u);
        return n;
    }
    if (!strcmp(enc, "vopc")) return put32(p, 0x7c000000u | opc << 17 | 6u << 9 | (256u + 2));
    if (!strcmp(enc, "vop3")) {
        amdi_op op = (amdi_op)tb->vop3[opc];
        bool vop3b = op == AMDI_V_ADD_CO_U32 || op == AMDI_V_SUB_CO_U32 || op == AMDI_V_SUBREV_CO_U32 ||
                     op == AMDI_V_DIV_SCALE_F32 || op == AMDI_V_DIV_SCALE_F64 || op == AMDI_V_MAD_U64_U32 ||
                     op == AMDI_V_MAD_I64_I32;
        return put32(p, (g11 ? 0xd4000000u : 0xd0000000u) | opc << 16 | (vop3b ? 10u << 8 : 0) | 4u) +
               put32(p + 4, (256u + 8) << 18 | (256u + 6) << 9 | (256u + 2));
    }
    if (!strcmp(enc, "vop3p"))
        return put32(p, (g11 ? 0xcc000000u : 0xd3800000u) | opc << 16 | 1u << 14 | 4u) +
               put32(p + 4, 3u << 27 | (256u + 8) << 18 | (256u + 6) << 9 | (256u + 2));
    if (!strcmp(enc, "ds")) { /* the fields the op has: first find out which */
        put32(p, 0xd8000000u | opc << (g11 ? 18 : 17));
        put32(p + 4, 2u);
        amdi_inst in[2];
        amdi_decode(t, p, 8, in);
        return 4 + put32(p + 4, (in[0].nd ? 4u : 0) << 24 | (in[0].ns > 2 ? 8u : 0) << 16 | (in[0].ns > 1 ? 6u : 0) << 8 | 2u);
    }
    if (!strcmp(enc, "flat"))
        return put32(p, 0xdc000000u | opc << 18 | 2u << (g11 ? 16 : 14)) +
               put32(p + 4, 4u << 24 | (g11 ? 124u : 0x7fu) << 16 | 6u << 8 | 2u);
    if (!strcmp(enc, "mubuf")) {
        if (g11) {
            *skip = opc != 0x2b && opc != 0x2c; /* only the cache invalidates are decoded on gfx11 */
            return put32(p, 0xe0000000u | opc << 18) + put32(p + 4, 0);
        }
        amdi_op mop = (amdi_op)tb->mubuf[opc];
        if (mop == AMDI_B_WBL2 || mop == AMDI_B_INV || mop == AMDI_B_WBINVL1 || mop == AMDI_B_WBINVL1_VOL)
            return put32(p, 0xe0000000u | opc << 18) + put32(p + 4, 0);
        return put32(p, 0xe0000000u | opc << 18 | 1u << 12) + put32(p + 4, 0x80u << 24 | 2u << 16 | 4u << 8 | 2u);
    }
    *skip = true;
    return 4;
}

static void tables(amdi_target t, const char *mcpu)
{
    static const char *const tools[] = {"llvm-mc-22", "llvm-mc-21", "llvm-mc-20", "llvm-mc", NULL};
    char tool[4200];
    if (!find_tool(tools, tool, sizeof tool)) cr_skip_test("no llvm-mc on PATH (scripts/deps.sh installs it)");
    const amdi_tables *tb = amdi_tables_of(&t);
    struct { const char *name; const uint16_t *tab; unsigned n; } encs[] = {
        {"sop1", tb->sop1, tb->nsop1}, {"sop2", tb->sop2, tb->nsop2}, {"sopk", tb->sopk, tb->nsopk},
        {"sopc", tb->sopc, tb->nsopc}, {"sopp", tb->sopp, tb->nsopp}, {"smem", tb->smem, tb->nsmem},
        {"vop1", tb->vop1, tb->nvop1}, {"vop2", tb->vop2, tb->nvop2}, {"vopc", tb->vopc, tb->nvopc},
        {"vop3", tb->vop3, tb->nvop3}, {"vop3p", tb->vop3p, tb->nvop3p}, {"ds", tb->ds, tb->nds},
        {"flat", tb->flat, tb->nflat}, {"mubuf", tb->mubuf, tb->nmubuf},
    };
    size_t cap = 1 << 16, len = 0, n = 0;
    char *hex = malloc(cap), (*mine)[96] = malloc(2048 * sizeof *mine);
    for (size_t e = 0; e < sizeof encs / sizeof encs[0]; e++)
        for (unsigned opc = 0; opc < encs[e].n; opc++) {
            if (!encs[e].tab[opc]) continue;
            uint8_t b[16];
            bool skip;
            size_t bytes = encode(&t, encs[e].name, opc, b, &skip);
            if (skip) continue;
            amdi_inst in[2];
            int r = amdi_decode(&t, b, bytes, in);
            if (r && in[0].len > bytes && in[0].len <= sizeof b) { /* an op with a literal dword after it */
                memset(b + bytes, 0, in[0].len - bytes);
                bytes = in[0].len;
                r = amdi_decode(&t, b, bytes, in);
            }
            /* the gfx9 family's per-target gaps (amdgpu_decode.c for_target) */
            amdi_op top = (amdi_op)encs[e].tab[opc];
            bool gap = t.fam == AMDI_GFX9 &&
                       (t.gfx940 ? top == AMDI_V_MAC_F32 || top == AMDI_V_MAD_F32 || top == AMDI_B_WBINVL1 ||
                                       top == AMDI_B_WBINVL1_VOL || top == AMDI_V_MFMA_F32_16X16X16BF16_1K
                                 : top == AMDI_V_MOV_B64 || top == AMDI_V_LSHL_ADD_U64 ||
                                       top == AMDI_V_MFMA_F32_16X16X16_BF16);
            if (gap) {
                cr_assert_neq(r, 0, "%s: %s decodes where the target lacks it", mcpu, amdi_op_name(t.fam, top));
                continue;
            }
            cr_assert_eq(r, 0, "%s opcode 0x%x: the decoder refuses its own table's op (0x%08x)", encs[e].name, opc,
                         in[0].raw[0]);
            amdi_mnemonic(&t, in, mine[n], sizeof mine[n]);
            for (size_t k = 0; k < bytes; k++) len += (size_t)snprintf(hex + len, cap - len, "%s0x%02x", k ? "," : "", b[k]);
            /* each entry followed by s_nop 7, so one LLVM refuses (or reads
             * as two) cannot shift the ones after it */
            len += (size_t)snprintf(hex + len, cap - len, "\n0x07,0x00,0x80,0xbf\n");
            cr_assert_lt(++n, 2048);
        }
    char dir[4096], path[4200], cpu[64];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(hex, 1, len, f);
    fclose(f);
    snprintf(cpu, sizeof cpu, "-mcpu=%s", mcpu);
    char opath[4200];
    snprintf(opath, sizeof opath, "%s/out.s", dir);
    const char *argv[] = {tool, "-disassemble", "-triple=amdgcn", cpu, "-o", opath,
                          t.wave == 64 ? "-mattr=+wavefrontsize64" : path, t.wave == 64 ? path : NULL, NULL};
    char *log = NULL;
    int code = -1;
    T_OK(cc_run(argv, &log, &code));
    free(log);
    /* stdout alone (the warnings went to the log) */
    f = fopen(opath, "rb");
    cr_assert_not_null(f, "llvm-mc wrote no %s", opath);
    fseek(f, 0, SEEK_END);
    long osz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *out = calloc(1, (size_t)osz + 1);
    cr_assert_eq(fread(out, 1, (size_t)osz, f), (size_t)osz);
    fclose(f);
    cc_remove_temp_dir(dir);
    /* the lines LLVM printed between the markers: one per entry */
    size_t k = 0, bad = 0, rlen = 0, got = 0;
    char report[4096] = "", theirs[96] = "";
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line && k < n; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] != '\t') continue;
        if (!strncmp(line + 1, "s_nop 7", 7)) {
            const char *why = got == 0 ? "LLVM has no such encoding" : got > 1 ? "LLVM reads it as several" : NULL;
            if (!why && strcmp(theirs, mine[k])) why = theirs;
            if (why && ++bad <= 12 && rlen < sizeof report - 200)
                rlen += (size_t)snprintf(report + rlen, sizeof report - rlen, "\n  the decoder's %s: %s%s", mine[k],
                                         why == theirs ? "LLVM's " : "", why);
            k++;
            got = 0;
            continue;
        }
        if (!got++) snprintf(theirs, sizeof theirs, "%.*s", (int)strcspn(line + 1, " \t"), line + 1);
    }
    cr_assert_gt(n, 300);
    cr_assert_eq(bad, 0, "%s: %zu of %zu table entries differ from LLVM's names:%s", mcpu, bad, n, report);
    cr_assert_eq(k, n, "%s: LLVM printed %zu instructions for %zu entries", mcpu, k, n);
    free(out);
    free(hex);
    free(mine);
}

Test(amdgpu_decode, gfx11_tables_name_what_llvm_names) { tables((amdi_target){AMDI_GFX11, false, 32}, "gfx1100"); }
Test(amdgpu_decode, gfx942_tables_name_what_llvm_names) { tables((amdi_target){AMDI_GFX9, true, 64}, "gfx942"); }
Test(amdgpu_decode, gfx90a_tables_name_what_llvm_names) { tables((amdi_target){AMDI_GFX9, false, 64}, "gfx90a"); }
