/* The AMDGPU decoder (compiler/amdgpu_isa.h) against an independent
 * oracle: every instruction of real code objects (the foreign HIP corpus,
 * tests/corpus/hip/corpus.hip, built by clang for gfx1100 wave32 and wave64,
 * gfx942 and gfx90a) decodes to the mnemonic, length and operands
 * llvm-objdump prints for it (llvm-objdump's text is the oracle; the
 * opcode tables are written from AMD's guides and LLVM's .td files). For
 * the few instructions whose operand syntax is symbolic (s_waitcnt,
 * s_delay_alu, hwreg(), swizzle()), the mnemonic and length are compared.
 * Also: bytes that are no instruction decode to "unknown" with their
 * length, never to something else. Skips, saying why, without clang or an
 * llvm-objdump that knows AMDGPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/amdgpu_isa.h"
#include "compiler/cc.h"
#include "compiler/elf.h"
#include "hcqtest.h"

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

static void *build(const char *arch, bool w64, size_t *size)
{
    if (cc_require_clang(17, "AMDGPU code objects") != HCQ_OK) cr_skip_test("%s", hcq_error_message());
    const cc_clang_info *cl;
    cr_assert_eq(cc_clang(&cl), HCQ_OK);
    char src[4200], dir[4096], out[4200], offload[64];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    cr_assert_not_null(slash);
    strcpy(slash, "/../corpus/hip/corpus.hip");
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/k.co", dir);
    snprintf(offload, sizeof offload, "--offload-arch=%s", arch);
    const char *argv[] = {cl->path, "-x", "hip", offload, "-nogpuinc", "-nogpulib", "--cuda-device-only",
                          "--no-gpu-bundle-output", "-O2", "-c", src, "-o", out, w64 ? "-mwavefrontsize64" : NULL, NULL};
    char *log = NULL;
    int code = -1;
    T_OK(cc_run(argv, &log, &code));
    if (code) {
        cc_remove_temp_dir(dir);
        cr_skip_test("%s cannot build for %s: %s", cl->label, arch, log ? log : "");
    }
    free(log);
    FILE *f = fopen(out, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)n);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    /* keep the file for llvm-objdump: written again below */
    cc_remove_temp_dir(dir);
    *size = (size_t)n;
    return data;
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

static void oracle(const char *arch, bool w64, amdi_target t)
{
    static const char *const tools[] = {"llvm-objdump-22", "llvm-objdump-21", "llvm-objdump-20", "llvm-objdump", NULL};
    char tool[4200];
    if (!find_tool(tools, tool, sizeof tool)) cr_skip_test("no llvm-objdump on PATH (scripts/deps.sh installs it)");
    size_t size;
    void *bin = build(arch, w64, &size);
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
    cr_assert_gt(nref, 500, "llvm-objdump printed %zu instructions", nref);

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
            checked++;
            if (!ok && ++bad <= 12 && rlen < sizeof report - 400)
                rlen += (size_t)snprintf(report + rlen, sizeof report - rlen, "\n  0x%llx: llvm-objdump [%s] (%u bytes), "
                                         "decoder [%s] (%u bytes%s)", (unsigned long long)a, x->text, x->len, mine, len,
                                         rc ? ", failed" : "");
        }
        off += len;
    }
    cr_assert_gt(checked, 500);
    cr_assert_eq(bad, 0, "%s%s: %zu of %zu instructions differ from llvm-objdump:%s", arch, w64 ? " wave64" : "", bad,
                 checked, report);
    free(refs);
    cc_elf_close(&e);
    free(bin);
}

Test(amdgpu_decode, gfx1100_wave32) { oracle("gfx1100", false, (amdi_target){AMDI_GFX11, false, 32}); }
Test(amdgpu_decode, gfx1100_wave64) { oracle("gfx1100", true, (amdi_target){AMDI_GFX11, false, 64}); }
Test(amdgpu_decode, gfx942) { oracle("gfx942", false, (amdi_target){AMDI_GFX9, true, 64}); }
Test(amdgpu_decode, gfx90a) { oracle("gfx90a", false, (amdi_target){AMDI_GFX9, false, 64}); }

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
