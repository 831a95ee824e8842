/* AMD targets. The gfx rows compile HIP rendered from the IR with clang
 * (--offload-arch, no ROCm headers or libraries: render_hip.c); the mock rows wrap the
 * serialized IR in an ELF shaped like a real code object (EM_AMDGPU,
 * OSABI AMDGPU_HSA, PT_LOAD segments, an NT_AMDGPU_METADATA note in
 * MessagePack, a 64-byte kernel descriptor at `<name>.kd` whose entry
 * offset leads to the code), so the AMD loader loads it like any other.
 * Formats: llvm-project llvm/docs/AMDGPUUsage.rst (ELF header, note
 * records, code object metadata, kernel descriptor). */
#include "compiler/cc.h"
#include "compiler/elf.h"
#include "compiler/mock_amd_code.h"
#include "compiler/strbuf.h"
#include "compiler/target_amd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELFOSABI_AMDGPU_HSA 64
#define ELFABIVERSION_AMDGPU_HSA_V6 4 /* what clang 22 writes */
#define EF_AMDGPU_FEATURE_XNACK_ANY 0x100u
#define EF_AMDGPU_FEATURE_SRAMECC_ANY 0x400u
#define NT_AMDGPU_METADATA 32u

/* ** MessagePack, just what the metadata needs */
typedef struct mpw {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} mpw;

static void mpw_bytes(mpw *w, const void *d, size_t n)
{
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t cap = (w->len + n) * 2 + 64;
        uint8_t *q = realloc(w->p, cap);
        if (!q) {
            w->oom = true;
            return;
        }
        w->p = q;
        w->cap = cap;
    }
    memcpy(w->p + w->len, d, n);
    w->len += n;
}

static void mpw_be(mpw *w, uint8_t tag, uint64_t v, unsigned n)
{
    uint8_t b[9] = {tag};
    for (unsigned i = 0; i < n; i++) b[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    mpw_bytes(w, b, 1 + n);
}

static void mpw_uint(mpw *w, uint64_t v)
{
    if (v <= 0x7f) mpw_be(w, (uint8_t)v, 0, 0);
    else if (v <= 0xff) mpw_be(w, 0xcc, v, 1);
    else if (v <= 0xffff) mpw_be(w, 0xcd, v, 2);
    else if (v <= 0xffffffffu) mpw_be(w, 0xce, v, 4);
    else mpw_be(w, 0xcf, v, 8);
}

static void mpw_str(mpw *w, const char *s)
{
    size_t n = strlen(s);
    if (n <= 31) mpw_be(w, (uint8_t)(0xa0 | n), 0, 0);
    else if (n <= 0xff) mpw_be(w, 0xd9, n, 1);
    else mpw_be(w, 0xda, n, 2);
    mpw_bytes(w, s, n);
}

static void mpw_map(mpw *w, unsigned n) { n <= 15 ? mpw_be(w, (uint8_t)(0x80 | n), 0, 0) : mpw_be(w, 0xde, n, 2); }
static void mpw_arr(mpw *w, unsigned n) { n <= 15 ? mpw_be(w, (uint8_t)(0x90 | n), 0, 0) : mpw_be(w, 0xdc, n, 2); }
static void mpw_kv_uint(mpw *w, const char *k, uint64_t v) { mpw_str(w, k); mpw_uint(w, v); }
static void mpw_kv_str(mpw *w, const char *k, const char *v) { mpw_str(w, k); mpw_str(w, v); }

static void metadata(mpw *w, const amd_target_arch *a, const hcq_kernel *k, const hcq_param_info *pi, uint32_t np,
                     uint32_t kernarg_bytes, uint32_t local_bytes)
{
    char sym[128], target[64];
    snprintf(sym, sizeof sym, "%s.kd", hcq_kernel_name(k));
    snprintf(target, sizeof target, "amdgcn-amd-amdhsa--%s", a->name);
    mpw_map(w, 3);
    mpw_str(w, "amdhsa.kernels");
    mpw_arr(w, 1);
    mpw_map(w, 11);
    mpw_str(w, ".args");
    mpw_arr(w, np);
    for (uint32_t i = 0; i < np; i++) {
        mpw_map(w, pi[i].is_buffer ? 4 : 3);
        mpw_kv_uint(w, ".offset", pi[i].offset);
        mpw_kv_uint(w, ".size", pi[i].size);
        mpw_kv_str(w, ".value_kind", pi[i].is_buffer ? "global_buffer" : "by_value");
        if (pi[i].is_buffer) mpw_kv_str(w, ".address_space", "global");
    }
    mpw_kv_uint(w, ".group_segment_fixed_size", local_bytes);
    mpw_kv_uint(w, ".kernarg_segment_align", 8);
    mpw_kv_uint(w, ".kernarg_segment_size", kernarg_bytes);
    mpw_kv_uint(w, ".max_flat_workgroup_size", 1024);
    mpw_kv_str(w, ".name", hcq_kernel_name(k));
    mpw_kv_uint(w, ".private_segment_fixed_size", 0);
    mpw_kv_uint(w, ".sgpr_count", 0);
    mpw_kv_str(w, ".symbol", sym);
    mpw_kv_uint(w, ".vgpr_count", 0);
    mpw_kv_uint(w, ".wavefront_size", a->wave32 ? 32 : 64);
    mpw_kv_str(w, "amdhsa.target", target);
    mpw_str(w, "amdhsa.version");
    mpw_arr(w, 2);
    mpw_uint(w, 1);
    mpw_uint(w, 2);
}

/* the note record: namesz, descsz, type, "AMDGPU\0" padded, the payload padded */
static uint8_t *note_record(const mpw *m, size_t *size)
{
    size_t n = 12 + 8 + base_align_up(m->len, 4);
    uint8_t *p = calloc(1, n);
    if (!p) return NULL;
    uint32_t hdr[3] = {7, (uint32_t)m->len, NT_AMDGPU_METADATA};
    memcpy(p, hdr, 12);
    memcpy(p + 12, "AMDGPU", 7);
    memcpy(p + 20, m->p, m->len);
    *size = n;
    return p;
}

/* layout of a mock code object: note and descriptor in a read-only segment,
 * the code (header + IR) page-aligned in an executable one */
#define NOTE_ADDR 0x200u
#define TEXT_ALIGN 0x1000u

static hcq_status mock_build(const amd_target_arch *a, const hcq_kernel *k, void **out, size_t *out_size)
{
    void *ir = NULL;
    size_t ir_size = 0;
    hcq_status st = hcq_kernel_serialize(k, &ir, &ir_size);
    if (st) return st;
    uint32_t np = hcq_kernel_param_count(k);
    hcq_param_info *pi = calloc(np ? np : 1, sizeof *pi);
    mpw m = {0};
    uint8_t *note = NULL, *text = NULL;
    cc_elf_builder *b = NULL;
    if (!pi) {
        st = HCQ_ENOMEM;
        goto out;
    }
    uint32_t kb = hcq_kernel_param_layout(k, pi), lb = hcq_kernel_local_bytes(k);
    metadata(&m, a, k, pi, np, kb, lb);
    size_t note_size = 0;
    if (m.oom || !(note = note_record(&m, &note_size))) {
        st = base_err(HCQ_ENOMEM, "out of memory writing code object metadata");
        goto out;
    }
    uint64_t kd_addr = base_align_up(NOTE_ADDR + note_size, 64), text_addr = base_align_up(kd_addr + 64, TEXT_ALIGN);

    /* the descriptor: what a compiler would say about a kernel that takes
     * its kernarg pointer in s[0:1] and its work-group ids in SGPRs */
    uint8_t kd[64] = {0};
    uint32_t rsrc2 = 2u << 1 /* USER_SGPR */ | 7u << 7 /* TGID_X/Y/Z_EN */ | 2u << 11 /* TIDIG_COMP_CNT */;
    uint16_t kcp = 1u << 3 /* KERNARG_SEGMENT_PTR */ | (a->wave32 ? 1u << 10 : 0) /* WAVEFRONT_SIZE32 */;
    int64_t entry = (int64_t)(text_addr - kd_addr);
    memcpy(kd + 0, &lb, 4);
    memcpy(kd + 8, &kb, 4);
    memcpy(kd + 16, &entry, 8);
    memcpy(kd + 52, &rsrc2, 4);
    memcpy(kd + 56, &kcp, 2);

    cc_mock_amd_code h = {.kernarg_sgpr = 0, .flags = a->wave32 ? CC_MOCK_AMD_WAVE32 : 0, .local_bytes = lb,
                          .ir_offset = sizeof h, .ir_size = (uint32_t)ir_size};
    memcpy(h.magic, CC_MOCK_AMD_MAGIC, 8);
    size_t text_size = sizeof h + ir_size;
    if (!(text = malloc(text_size))) {
        st = HCQ_ENOMEM;
        goto out;
    }
    memcpy(text, &h, sizeof h);
    memcpy(text + sizeof h, ir, ir_size);

    uint32_t flags = a->elf_mach | (a->xnack_sramecc ? EF_AMDGPU_FEATURE_XNACK_ANY | EF_AMDGPU_FEATURE_SRAMECC_ANY : 0);
    if (!(b = cc_elf_builder_create(EM_AMDGPU, ET_DYN, flags))) {
        st = HCQ_ENOMEM;
        goto out;
    }
    cc_elf_builder_set_osabi(b, ELFOSABI_AMDGPU_HSA, ELFABIVERSION_AMDGPU_HSA_V6);
    cc_elf_section_spec ns = {.name = ".note", .type = SHT_NOTE, .flags = SHF_ALLOC, .addr = NOTE_ADDR, .align = 4,
                              .data = note, .size = note_size};
    cc_elf_section_spec rs = {.name = ".rodata", .type = SHT_PROGBITS, .flags = SHF_ALLOC, .addr = kd_addr,
                              .align = 64, .data = kd, .size = sizeof kd};
    cc_elf_section_spec ts = {.name = ".text", .type = SHT_PROGBITS, .flags = SHF_ALLOC | SHF_EXECINSTR,
                              .addr = text_addr, .align = 256, .data = text, .size = text_size};
    uint32_t in = cc_elf_add_section(b, &ns), ir_ = cc_elf_add_section(b, &rs), it = cc_elf_add_section(b, &ts);
    (void)in;
    cc_elf_add_segment(b, PT_LOAD, PF_R, 1, ir_);
    cc_elf_add_segment(b, PT_LOAD, PF_R | PF_X, it, it);
    char sym[128];
    snprintf(sym, sizeof sym, "%s.kd", hcq_kernel_name(k));
    cc_elf_add_symbol(b, hcq_kernel_name(k), text_addr, text_size, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), STV_PROTECTED,
                      (uint16_t)it);
    cc_elf_add_symbol(b, sym, kd_addr, 64, ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), STV_PROTECTED, (uint16_t)ir_);
    st = cc_elf_builder_finish(b, out, out_size);
out:
    cc_elf_builder_destroy(b);
    free(text);
    free(note);
    free(m.p);
    free(pi);
    free(ir);
    return st;
}

static hcq_status mock_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    void *elf = NULL;
    size_t size = 0;
    hcq_status st = mock_build(t->arch, k, &elf, &size);
    if (st) return base_err_prefix(st, "compiling kernel '%s' for %s", hcq_kernel_name(k), t->name);
    hcq_binary *b = cc_binary_new(elf, size, t->name, "hcq mock code object v1");
    free(elf);
    if (!b) return HCQ_ENOMEM;
    *out = b;
    return HCQ_OK;
}

/* the rows, made from the chip table as chips appear: two per chip at
 * most, kept where they were made so pointers to them stay valid */
#define MAX_ROWS 64
static cc_target rows[MAX_ROWS];
static char mock_names[MAX_ROWS][40];
static size_t nrows;
static unsigned chips_seen;
static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_rows(const amd_chip *c)
{
    if (c->min_clang && nrows < MAX_ROWS)
        rows[nrows++] = (cc_target){c->name, CC_BIN_AMD_CO, "hip", cc_hip_render, cc_hip_compile, c};
    if (c->family != AMD_FAMILY_NONE && nrows < MAX_ROWS) {
        snprintf(mock_names[nrows], sizeof mock_names[nrows], "mock-%s", c->name);
        rows[nrows] = (cc_target){mock_names[nrows], CC_BIN_AMD_CO, "ir listing", cc_ir_render, mock_compile, c};
        nrows++;
    }
}

const cc_target *cc_amd_target_at(size_t i)
{
    pthread_mutex_lock(&rows_lock);
    const amd_chip *c;
    for (; (c = amd_chip_at(chips_seen)); chips_seen++) add_rows(c);
    const cc_target *t = i < nrows ? &rows[i] : NULL;
    pthread_mutex_unlock(&rows_lock);
    return t;
}
