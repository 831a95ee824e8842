/* NVIDIA targets: one per family of compiler/nv_chips.c (sm_80, sm_86,
 * sm_87, sm_89, sm_90) and sm_90a build cubins from the
 * CUDA the GPU renderer writes, with clang (>= 19) -> PTX -> ptxas, or with
 * nvcc -cubin where no recent clang is installed; mock-sm_* targets wrap
 * the kernel's serialized IR in an ELF shaped like a cubin for the mock
 * GPU; sm_100 and sm_120 (Blackwell) are refused by name.
 *
 * The cache key is target + source + flags (render_gpu.h), so cubins carry
 * between machines whatever compiler each has. Tools: HCQ_CLANG (or the
 * newest clang-NN), HCQ_PTXAS (or ptxas on PATH, or /usr/local/cuda/bin),
 * nvcc on PATH or beside ptxas; sin/exp2/log2 come from libdevice
 * (<cuda>/nvvm/libdevice) when a kernel uses them. */
#include "compiler/target_nv.h"

#include "compiler/elf.h"
#include "compiler/nv_chips.h"
#include "compiler/render_gpu.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the family's row (compiler/nv_chips.c) gives the parameter base; the
 * rows here add what the tools are told */
typedef struct nv_arch {
    uint32_t sm;         /* 90: its family's number */
    const char *isa;     /* "sm_90a": what the tools are told */
    int kind;            /* 0 real, 1 mock, 2 unsupported (Blackwell) */
    uint32_t param_base; /* only for unsupported rows (no family): EIATTR_PARAM_CBANK */
} nv_arch;

static const nv_arch a80 = {80, "sm_80", 0, 0}, a86 = {86, "sm_86", 0, 0}, a87 = {87, "sm_87", 0, 0},
                     a89 = {89, "sm_89", 0, 0}, a90 = {90, "sm_90", 0, 0}, a90a = {90, "sm_90a", 0, 0};
static const nv_arch m80 = {80, "sm_80", 1, 0}, m86 = {86, "sm_86", 1, 0}, m87 = {87, "sm_87", 1, 0},
                     m89 = {89, "sm_89", 1, 0}, m90 = {90, "sm_90", 1, 0};
static const nv_arch b100 = {100, "sm_100", 2, 0x380}, b120 = {120, "sm_120", 2, 0x380};

static hcq_status nv_render(const cc_target *t, const hcq_kernel *k, char **source_out);
static hcq_status nv_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);
static hcq_status mock_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out);

const cc_target cc_nv_targets[] = {
    {"sm_80", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a80},
    {"sm_86", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a86},
    {"sm_87", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a87},
    {"sm_89", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a89},
    {"sm_90", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a90},
    {"sm_90a", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &a90a},
    {"mock-sm_80", CC_BIN_CUBIN, "ir listing", cc_ir_render, mock_compile, &m80},
    {"mock-sm_86", CC_BIN_CUBIN, "ir listing", cc_ir_render, mock_compile, &m86},
    {"mock-sm_87", CC_BIN_CUBIN, "ir listing", cc_ir_render, mock_compile, &m87},
    {"mock-sm_89", CC_BIN_CUBIN, "ir listing", cc_ir_render, mock_compile, &m89},
    {"mock-sm_90", CC_BIN_CUBIN, "ir listing", cc_ir_render, mock_compile, &m90},
    {"sm_100", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &b100},
    {"sm_120", CC_BIN_CUBIN, "cuda", nv_render, nv_compile, &b120},
};
const size_t cc_nv_target_count = sizeof cc_nv_targets / sizeof cc_nv_targets[0];

bool cc_nv_target_abi(const char *target, uint32_t *sm, uint32_t *param_base)
{
    for (size_t i = 0; i < cc_nv_target_count; i++) {
        if (strcmp(cc_nv_targets[i].name, target)) continue;
        const nv_arch *a = cc_nv_targets[i].arch;
        const nv_family *f = nv_family_for_target(a->sm);
        *sm = a->sm;
        *param_base = f ? f->param_base : a->param_base;
        return true;
    }
    return false;
}

static hcq_status blackwell(const cc_target *t)
{
    return base_err(HCQ_ENOTSUP, "target %s (Blackwell) is not supported yet: it needs QMD V05 and the Blackwell "
                    "classes; hcq targets %s, and sm_90a", t->name, nv_families_driven());
}

static hcq_status nv_render(const cc_target *t, const hcq_kernel *k, char **source_out)
{
    if (((const nv_arch *)t->arch)->kind == 2) return blackwell(t);
    return cc_render_gpu(&cc_gpu_cuda, k, source_out, NULL);
}

/* ** finding the tools (once per process) */
typedef struct tools {
    char ptxas[PATH_MAX], nvcc[PATH_MAX], libdevice[PATH_MAX];
    char ptxas_label[64], nvcc_label[64];
} tools;
static tools found;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

static bool executable(const char *p) { return p[0] && access(p, X_OK) == 0; }

static bool in_path(const char *name, char *out, size_t size)
{
    out[0] = 0;
    if (!name || !*name) return false;
    if (strchr(name, '/')) {
        snprintf(out, size, "%s", name);
        if (executable(out)) return true;
        out[0] = 0;
        return false;
    }
    const char *path = base_env_get()->path;
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (n && n + strlen(name) + 2 <= size) {
            snprintf(out, size, "%.*s/%s", (int)n, p, name);
            if (executable(out)) return true;
        }
        p += n + (p[n] == ':');
    }
    out[0] = 0;
    return false;
}

/* "Cuda compilation tools, release 13.0, V13.0.88" -> "<tool> 13.0" */
static void tool_label(const char *path, const char *tool, char *out, size_t size)
{
    const char *argv[] = {path, "--version", NULL};
    char *o = NULL;
    int code = 0;
    snprintf(out, size, "%s", tool);
    if (cc_run(argv, &o, &code) != HCQ_OK) return;
    const char *r = strstr(o, "release ");
    if (r) snprintf(out, size, "%s %.*s", tool, (int)strcspn(r + 8, ", \n"), r + 8);
    free(o);
}

static void find_tools(void)
{
    const char *env = base_env_get()->ptxas;
    if (env) in_path(env, found.ptxas, sizeof found.ptxas);
    else if (!in_path("ptxas", found.ptxas, sizeof found.ptxas)) in_path("/usr/local/cuda/bin/ptxas", found.ptxas, sizeof found.ptxas);
    if (!in_path("nvcc", found.nvcc, sizeof found.nvcc)) {
        char beside[PATH_MAX + 8];
        const char *slash = strrchr(found.ptxas, '/');
        if (slash) snprintf(beside, sizeof beside, "%.*s/nvcc", (int)(slash - found.ptxas), found.ptxas);
        if (!slash || !in_path(beside, found.nvcc, sizeof found.nvcc))
            in_path("/usr/local/cuda/bin/nvcc", found.nvcc, sizeof found.nvcc);
    }
    /* libdevice: <toolkit>/nvvm/libdevice beside bin/ptxas or bin/nvcc */
    const char *bins[2] = {found.ptxas, found.nvcc};
    for (int i = 0; i < 2 && !found.libdevice[0]; i++) {
        const char *slash = strrchr(bins[i], '/');
        if (!slash) continue;
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%.*s/../nvvm/libdevice/libdevice.10.bc", (int)(slash - bins[i]), bins[i]);
        size_t n = strlen(cand);
        if (access(cand, R_OK) == 0 && n < sizeof found.libdevice) memcpy(found.libdevice, cand, n + 1);
    }
    if (!found.libdevice[0] && access("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", R_OK) == 0)
        snprintf(found.libdevice, sizeof found.libdevice, "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
    if (found.ptxas[0]) tool_label(found.ptxas, "ptxas", found.ptxas_label, sizeof found.ptxas_label);
    if (found.nvcc[0]) tool_label(found.nvcc, "nvcc", found.nvcc_label, sizeof found.nvcc_label);
}

static const tools *get_tools(void)
{
    pthread_once(&found_once, find_tools);
    return &found;
}

#define CLANG_MIN 19

bool cc_nv_have(cc_nv_compiler which, char *why, size_t why_size)
{
    const tools *t = get_tools();
    const cc_clang_info *cl = NULL;
    bool clang_ok = cc_clang(&cl) == HCQ_OK && cl->major >= CLANG_MIN;
    if (which == CC_NV_NVCC || (which == CC_NV_AUTO && !(clang_ok && t->ptxas[0]))) {
        if (t->nvcc[0]) return true;
        if (which == CC_NV_NVCC) {
            snprintf(why, why_size, "nvcc was not found (not on PATH, beside ptxas, or in /usr/local/cuda/bin)");
            return false;
        }
    }
    if (!clang_ok) {
        if (cl)
            snprintf(why, why_size, "the clang found (%s, %s) is older than %d and no nvcc was found: install clang-%d "
                     "or newer (HCQ_CLANG) or the CUDA toolkit", cl->path, cl->label, CLANG_MIN, CLANG_MIN);
        else
            snprintf(why, why_size, "no clang runs and no nvcc was found: install clang-%d or newer, or the CUDA "
                     "toolkit", CLANG_MIN);
        return false;
    }
    if (!t->ptxas[0]) {
        snprintf(why, why_size, "ptxas (the CUDA toolkit's PTX assembler) was not found%s%s, nor on PATH or in "
                 "/usr/local/cuda/bin: install the CUDA toolkit or point HCQ_PTXAS at a ptxas",
                 base_env_get()->ptxas ? ": HCQ_PTXAS=" : "", base_env_get()->ptxas ? base_env_get()->ptxas : "");
        return false;
    }
    return true;
}

/* ** building */
static hcq_status write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "we");
    if (!f) return base_err(HCQ_EIO, "cannot write %s", path);
    bool ok = fputs(s, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok ? HCQ_OK : base_err(HCQ_EIO, "cannot write %s", path);
}

static hcq_status read_bin(const char *path, void **out, size_t *size)
{
    FILE *f = fopen(path, "re");
    if (!f) return base_err(HCQ_ECOMPILE, "the compiler reported success but wrote no %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = n > 0 ? malloc((size_t)n) : NULL;
    bool ok = p && fread(p, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(p);
        return base_err(HCQ_ECOMPILE, "cannot read %s", path);
    }
    *out = p;
    *size = (size_t)n;
    return HCQ_OK;
}

typedef struct build_ctx {
    const nv_arch *arch;
    cc_nv_compiler which;
    bool uses_math;
} build_ctx;

static hcq_status build(const cc_gpu_job *job, void **out, size_t *out_size, char *label, size_t label_size)
{
    const build_ctx *bc = job->ctx;
    const nv_arch *a = bc->arch;
    char what[400], why[512];
    snprintf(what, sizeof what, "compiling kernel '%s' for %s", job->kernel->name, job->target->name);
    if (!cc_nv_have(bc->which, why, sizeof why)) return base_err(HCQ_ENOTSUP, "%s: %s", what, why);
    const tools *t = get_tools();
    const cc_clang_info *cl = NULL;
    bool clang_ok = cc_clang(&cl) == HCQ_OK && cl->major >= CLANG_MIN;
    bool use_nvcc = bc->which == CC_NV_NVCC || (bc->which == CC_NV_AUTO && !(clang_ok && t->ptxas[0]));
    if (!use_nvcc && bc->uses_math && !t->libdevice[0])
        return base_err(HCQ_ENOTSUP, "%s: the kernel uses sin/exp2/log2, which come from the CUDA toolkit's libdevice "
                        "(nvvm/libdevice/libdevice.10.bc beside ptxas); none was found", what);
    char dir[4096], src[4200], ptx[4200], cubin[4200], arch[32];
    hcq_status st = cc_make_temp_dir(dir, sizeof dir);
    if (st) return base_err_prefix(st, "%s", what);
    snprintf(src, sizeof src, "%s/kernel.cu", dir);
    snprintf(ptx, sizeof ptx, "%s/kernel.ptx", dir);
    snprintf(cubin, sizeof cubin, "%s/kernel.cubin", dir);
    snprintf(arch, sizeof arch, "-arch=%s", a->isa);
    st = write_text(src, job->source);
    if (!st && use_nvcc) {
        /* nvcc: precise division and sqrt, no flush to zero by default */
        const char *argv[] = {t->nvcc, "-cubin", arch, "-O3", "--fmad=false", "-w", "-o", cubin, src, NULL};
        st = cc_run_tool(argv, what);
        snprintf(label, label_size, "%s", t->nvcc_label);
    } else if (!st) {
        char gpu[48];
        snprintf(gpu, sizeof gpu, "--cuda-gpu-arch=%s", a->isa);
        const char *argv[24] = {cl->path, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", gpu,
                                "-O3", "-ffp-contract=off", "-Wno-unknown-cuda-version", "-w", "-S"};
        int n = 12;
        if (bc->uses_math) {
            argv[n++] = "-Xclang";
            argv[n++] = "-mlink-builtin-bitcode";
            argv[n++] = "-Xclang";
            argv[n++] = t->libdevice;
        }
        argv[n++] = src;
        argv[n++] = "-o";
        argv[n++] = ptx;
        argv[n] = NULL;
        st = cc_run_tool(argv, what);
        if (!st) {
            const char *pargv[] = {t->ptxas, arch, "-O3", "--fmad=false", ptx, "-o", cubin, NULL};
            st = cc_run_tool(pargv, what);
        }
        snprintf(label, label_size, "%s + %s", cl->label, t->ptxas_label);
    }
    if (!st) st = read_bin(cubin, out, out_size);
    cc_remove_temp_dir(dir);
    return st;
}

/* what besides target and source decides the cubin: the options both
 * compilers are run with (any change here must change this string) */
#define NV_FLAGS "cuda->cubin v1: -O3, no FP contraction (fmad=false), IEEE div/sqrt, denormals kept"

static hcq_status nv_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    const nv_arch *a = t->arch;
    if (a->kind == 2) return blackwell(t);
    char *src = NULL;
    cc_gpu_render_info info;
    hcq_status st = cc_render_gpu(&cc_gpu_cuda, k, &src, &info);
    if (st) return st;
    build_ctx bc = {a, CC_NV_AUTO, info.uses_math};
    cc_gpu_job job = {.target = t, .kernel = k, .source = src, .flags = NV_FLAGS, .build = build, .ctx = &bc};
    st = cc_gpu_compile_cached(&job, out);
    free(src);
    return st;
}

hcq_status cc_nv_build(const cc_target *t, const hcq_kernel *k, cc_nv_compiler which, void **out, size_t *out_size,
                       char *label, size_t label_size)
{
    const nv_arch *a = t->arch;
    if (a->kind == 2) return blackwell(t);
    if (a->kind == 1) return base_err(HCQ_EINVAL, "cc_nv_build: %s is a mock target", t->name);
    char *src = NULL;
    cc_gpu_render_info info;
    hcq_status st = cc_render_gpu(&cc_gpu_cuda, k, &src, &info);
    if (st) return st;
    build_ctx bc = {a, which, info.uses_math};
    cc_gpu_job job = {.target = t, .kernel = k, .source = src, .flags = NV_FLAGS, .build = build, .ctx = &bc};
    st = build(&job, out, out_size, label, label_size);
    free(src);
    return st;
}

/* ** mock targets: a cubin-shaped ELF whose .text.<name> holds the IR
 * (the mock GPU's shader core runs it), with the sections and .nv.info
 * records the real loader reads (nv_program.c) */
static void rec_sval(uint8_t *buf, size_t *n, uint8_t attr, const void *payload, uint16_t len)
{
    buf[(*n)++] = 4;
    buf[(*n)++] = attr;
    memcpy(buf + *n, &len, 2);
    *n += 2;
    memcpy(buf + *n, payload, len);
    *n += len;
}

static hcq_status mock_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    const nv_arch *a = t->arch;
    uint32_t sm = 0, param_base = 0;
    cc_nv_target_abi(t->name, &sm, &param_base);
    void *blob = NULL;
    size_t blob_size = 0;
    hcq_status st = hcq_kernel_serialize(k, &blob, &blob_size);
    if (st) return st;
    uint32_t np = hcq_kernel_param_count(k);
    hcq_param_info *pi = calloc(np ? np : 1, sizeof *pi);
    uint8_t *info = calloc(1, 68 + (size_t)np * 16);
    uint8_t *cb0 = NULL;
    cc_elf_builder *b = NULL;
    if (!pi || !info) {
        st = HCQ_ENOMEM;
        goto out;
    }
    uint32_t kb = hcq_kernel_param_layout(k, pi), local = hcq_kernel_local_bytes(k);
    uint32_t cb0_size = param_base + kb;
    if (!(cb0 = calloc(1, cb0_size))) {
        st = HCQ_ENOMEM;
        goto out;
    }
    /* ABI version 8 cubins keep the SM in e_flags bits 15:8 */
    b = cc_elf_builder_create(EM_CUDA, ET_EXEC, 0x06000004u | (a->sm << 8));
    if (!b) {
        st = HCQ_ENOMEM;
        goto out;
    }
    cc_elf_builder_set_osabi(b, 0x41, 8);
    char name[300];
    /* symbols are numbered in the order added (locals first): 1 is the
     * constant bank's section symbol, 2 the kernel */
    const uint32_t sym_cb0 = 1, sym_fn = 2;
    snprintf(name, sizeof name, ".text.%s", k->name);
    cc_elf_section_spec text = {.name = name, .type = SHT_PROGBITS, .flags = SHF_ALLOC | SHF_EXECINSTR, .align = 128,
                                .data = blob, .size = blob_size, .link = CC_ELF_LINK_SYMTAB, .info = 32u << 24};
    uint32_t text_idx = cc_elf_add_section(b, &text);
    snprintf(name, sizeof name, ".nv.constant0.%s", k->name);
    cc_elf_section_spec c0 = {.name = name, .type = SHT_PROGBITS, .flags = SHF_ALLOC, .align = 4, .data = cb0,
                              .size = cb0_size, .info = text_idx};
    uint32_t cb0_idx = cc_elf_add_section(b, &c0);
    if (local) {
        snprintf(name, sizeof name, ".nv.shared.%s", k->name);
        cc_elf_section_spec sh = {.name = name, .type = SHT_NOBITS, .flags = SHF_ALLOC | SHF_WRITE, .align = 16,
                                  .size = local, .info = text_idx};
        cc_elf_add_section(b, &sh);
    }
    uint8_t g[32];
    size_t gn = 0;
    uint32_t regcount[2] = {sym_fn, 32}, stack[2] = {sym_fn, 0};
    rec_sval(g, &gn, 0x2f, regcount, 8); /* REGCOUNT */
    rec_sval(g, &gn, 0x12, stack, 8);    /* MIN_STACK_SIZE */
    cc_elf_section_spec gi = {.name = ".nv.info", .type = 0x70000000u, .align = 4, .data = g, .size = gn,
                              .link = CC_ELF_LINK_SYMTAB};
    cc_elf_add_section(b, &gi);
    size_t in = 0;
    for (uint32_t i = 0; i < np; i++) { /* KPARAM_INFO: index, ordinal, offset, size << 18 */
        uint8_t kp[12] = {0};
        uint16_t ord = (uint16_t)i, off = (uint16_t)pi[i].offset;
        uint32_t flags = (pi[i].size << 18) | 0x1f000u;
        memcpy(kp + 4, &ord, 2);
        memcpy(kp + 6, &off, 2);
        memcpy(kp + 8, &flags, 4);
        rec_sval(info, &in, 0x17, kp, 12);
    }
    for (uint32_t i = 0; i < k->nops; i++)
        if (k->ops[i].op == HCQ_OP_BARRIER) { /* NUM_BARRIERS, BVAL 1: the loader sizes BARRIER_COUNT by it */
            uint8_t nb[4] = {2, 0x4c, 1, 0};
            memcpy(info + in, nb, 4);
            in += 4;
            break;
        }
    info[in++] = 3; /* CBANK_PARAM_SIZE, HVAL */
    info[in++] = 0x19;
    uint16_t kb16 = (uint16_t)kb, base16 = (uint16_t)param_base;
    memcpy(info + in, &kb16, 2);
    in += 2;
    uint8_t cbank[8];
    memcpy(cbank, &sym_cb0, 4);
    memcpy(cbank + 4, &base16, 2);
    memcpy(cbank + 6, &kb16, 2);
    rec_sval(info, &in, 0x0a, cbank, 8); /* PARAM_CBANK */
    snprintf(name, sizeof name, ".nv.info.%s", k->name);
    cc_elf_section_spec ki = {.name = name, .type = 0x70000000u, .flags = SHF_INFO_LINK, .align = 4, .data = info,
                              .size = in, .link = CC_ELF_LINK_SYMTAB, .info = text_idx};
    cc_elf_add_section(b, &ki);
    cc_elf_add_symbol(b, "", 0, 0, ELF64_ST_INFO(STB_LOCAL, STT_SECTION), STV_DEFAULT, (uint16_t)cb0_idx);
    cc_elf_add_symbol(b, k->name, 0, blob_size, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), STV_DEFAULT, (uint16_t)text_idx);
    void *elf = NULL;
    size_t elf_size = 0;
    if (!(st = cc_elf_builder_finish(b, &elf, &elf_size))) {
        *out = cc_binary_new(elf, elf_size, t->name, "hcq mock cubin v1 (kernel IR)");
        if (!*out) st = HCQ_ENOMEM;
        free(elf);
    }
out:
    cc_elf_builder_destroy(b);
    free(blob);
    free(pi);
    free(info);
    free(cb0);
    return st;
}
