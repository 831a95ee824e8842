/* Host twins (twin.h): the host dialect of the GPU renderer, the twin's
 * entry points, building through the portable cache, loading, and the
 * one-call runner for tests. */
#include "compiler/twin.h"
#include "compiler/isa.h"

#include "compiler/cpu_abi.h"
#include "compiler/render_expr.h"
#include "compiler/render_gpu.h"
#include "compiler/strbuf.h"
#include "compiler/target_amd.h"
#include "compiler/target_nv.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ** the host dialect. Work-item state comes from hcq_item, the calling
 * thread's current work-item (set by the runtime before each work-item
 * runs or resumes); math is the host's (libm: within the IR's bounds,
 * as the GPUs' libraries are). */
#define HOST_COMMON                                                                                          \
    "#define HCQ_KERNEL\n"                                                                                   \
    "#define HCQ_SHARED thread_local\n"                                                                      \
    "#define HCQ_DEV\n"                                                                                      \
    "#define HCQ_GID_X ((i32)hcq_item->gid[0])\n#define HCQ_GID_Y ((i32)hcq_item->gid[1])\n"                 \
    "#define HCQ_GID_Z ((i32)hcq_item->gid[2])\n"                                                           \
    "#define HCQ_LID_X ((i32)hcq_item->lid[0])\n#define HCQ_LID_Y ((i32)hcq_item->lid[1])\n"                 \
    "#define HCQ_LID_Z ((i32)hcq_item->lid[2])\n"                                                           \
    "#define HCQ_BARRIER() hcq_barrier()\n"                                                                  \
    "#define HCQ_SINF(x) __builtin_sinf(x)\n#define HCQ_SIN(x) __builtin_sin(x)\n"                            \
    "#define HCQ_EXP2F(x) __builtin_exp2f(x)\n#define HCQ_EXP2(x) __builtin_exp2(x)\n"                        \
    "#define HCQ_LOG2F(x) __builtin_log2f(x)\n#define HCQ_LOG2(x) __builtin_log2(x)\n"                        \
    "#define HCQ_SQRTF(x) __builtin_sqrtf(x)\n#define HCQ_SQRT(x) __builtin_sqrt(x)\n"                        \
    "#define HCQ_TRUNCF(x) __builtin_truncf(x)\n#define HCQ_TRUNC(x) __builtin_trunc(x)\n"                    \
    "#define HCQ_FMAF(a, b, c) __builtin_fmaf(a, b, c)\n#define HCQ_FMA(a, b, c) __builtin_fma(a, b, c)\n"   \
    "#define HCQ_FABS(x) __builtin_fabs(x)\n#define HCQ_SIGNBIT(x) __builtin_signbit(x)\n"                   \
    "#define HCQ_ISINF(x) __builtin_isinf(x)\n#define HCQ_CLZLL(x) __builtin_clzll(x)\n"                     \
    "#define HCQ_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)\n"                                                \
    "#define HCQ_GLOBAL(T) hcq_gptr<T>\n"                                                                    \
    "#define HCQ_LOCAL(T, name, n) static thread_local hcq_local<T, n> name\n"                               \
    "#define HCQ_VLD(tag, b, i) hcq_vld<hcq_m##tag>(b, i)\n"                                                 \
    "#define HCQ_VST(tag, b, i, m) hcq_vst<hcq_m##tag>(b, i, m)\n"

/* HCQ_VALIGN: whether a misaligned vector access faults, as on the
 * hardware the twin stands for: NVIDIA faults (Xid 13); AMD queues run in
 * SH_MEM_CONFIG's unaligned mode (Linux amdkfd,
 * kfd_device_queue_manager_v9.c/_v10.c/_v11.c), so the access completes */
static const char host_cuda_header[] =
    HOST_COMMON
    "#define HCQ_VALIGN 1\n"
    /* the special registers %nctaid and %ntid: the launch's own */
    "#define HCQ_NGRP_X ((i32)hcq_item->grp->ngrp[0])\n#define HCQ_NGRP_Y ((i32)hcq_item->grp->ngrp[1])\n"
    "#define HCQ_NGRP_Z ((i32)hcq_item->grp->ngrp[2])\n"
    "#define HCQ_LSIZE_X ((i32)hcq_item->grp->lsize[0])\n#define HCQ_LSIZE_Y ((i32)hcq_item->grp->lsize[1])\n"
    "#define HCQ_LSIZE_Z ((i32)hcq_item->grp->lsize[2])\n";

static const char host_hip_header[] =
    HOST_COMMON
    "#define HCQ_VALIGN 0\n"
    /* as the HIP code reads them: from the implicit kernel arguments */
    "#define HCQ_IMPLICIT_U32(i) hcq_implicit_u32(i)\n#define HCQ_IMPLICIT_U16(i) hcq_implicit_u16(i)\n"
    CC_HIP_SIZES
    /* and its own sin (CC_HIP_SINF, after the helpers) */
    "#undef HCQ_SINF\n#define HCQ_SINF(x) hcq_sinf(x)\n#define HCQ_CTABLE static const\n";

/* after the helpers (their types): the ABI, checked pointers, local
 * arrays, barriers */
#define HOST_AFTER \
    "\n" CC_TWIN_STR(CC_TWIN_ABI_STRUCTS) "\n" \
    "static thread_local const hcq_twin_item *hcq_item;\n" \
    "H bool hcq_in(const hcq_twin_range *r, u64 a, u64 n, bool w) {\n" \
    "  return a >= r->lo && a < r->hi && r->hi - a >= n && (!w || r->w);\n" \
    "}\n" \
    /* a global access: inside the param's cached range, or asked about */ \
    "H bool hcq_ck(u64 a, u32 n, u32 param, bool w, i64 index) {\n" \
    "  const hcq_twin_group *g = hcq_item->grp;\n" \
    "  hcq_twin_range *r = &g->ranges[param];\n" \
    "  return hcq_in(r, a, n, w) || g->rt->check(g->ctx, a, n, param, w, index, r);\n" \
    "}\n" \
    "template <class T> struct hcq_gref {\n" \
    "  u64 a; i64 i; u32 param;\n" \
    "  operator T() const { T v; if (!hcq_ck(a, sizeof(T), param, false, i)) return T(); HCQ_MEMCPY(&v, (const void *)a, sizeof v); return v; }\n" \
    "  void operator=(T v) const { if (hcq_ck(a, sizeof(T), param, true, i)) HCQ_MEMCPY((void *)a, &v, sizeof v); }\n" \
    "  hcq_gref &operator=(const hcq_gref &) = delete;\n" \
    "};\n" \
    "template <class T> struct hcq_gptr {\n" \
    "  u64 a; u32 param;\n" \
    "  hcq_gref<T> operator[](i64 i) const { return hcq_gref<T>{a + (u64)i * sizeof(T), i, param}; }\n" \
    "  hcq_gref<T> operator[](u64 i) const { return hcq_gref<T>{a + i * sizeof(T), (i64)i, param}; }\n" \
    "};\n" \
    "template <class T> T &hcq_local_oob(u64 i, u64 n) {\n" \
    "  static thread_local T dummy;\n" \
    "  const hcq_twin_group *g = hcq_item->grp;\n" \
    "  g->rt->local_fault(g->ctx, i, n, 0);\n" \
    "  dummy = T();\n" \
    "  return dummy;\n" \
    "}\n" \
    "template <class T, u64 N> struct hcq_local {\n" \
    "  __attribute__((aligned(16))) T v[N];\n" \
    "  T &operator[](i64 i) { return (u64)i < N ? v[i] : hcq_local_oob<T>((u64)i, N); }\n" \
    "  T &operator[](u64 i) { return i < N ? v[i] : hcq_local_oob<T>(i, N); }\n" \
    "};\n" \
    /* vector accesses (HCQ_VLD/HCQ_VST): aligned to their size, as the GPUs require, and inside the \
     * buffer; a misaligned or refused one is dropped and faults the launch */ \
    "H void hcq_misaligned(u64 a, u32 n, u32 param, bool w, i64 i) {\n" \
    "  const hcq_twin_group *g = hcq_item->grp; g->rt->misaligned(g->ctx, a, n, param, w, i);\n" \
    "}\n" \
    "template <class M, class T, class I> M hcq_vld(const hcq_gptr<T> &p, I i) {\n" \
    "  u64 a = p.a + (u64)i * sizeof(T); M m = M();\n" \
    "  if (HCQ_VALIGN && a % sizeof(M)) hcq_misaligned(a, sizeof(M), p.param, false, (i64)i);\n" \
    "  else if (hcq_ck(a, sizeof(M), p.param, false, (i64)i)) HCQ_MEMCPY(&m, (const void *)a, sizeof m);\n" \
    "  return m;\n" \
    "}\n" \
    "template <class M, class T, class I> void hcq_vst(const hcq_gptr<T> &p, I i, M m) {\n" \
    "  u64 a = p.a + (u64)i * sizeof(T);\n" \
    "  if (HCQ_VALIGN && a % sizeof(M)) hcq_misaligned(a, sizeof(M), p.param, true, (i64)i);\n" \
    "  else if (hcq_ck(a, sizeof(M), p.param, true, (i64)i)) HCQ_MEMCPY((void *)a, &m, sizeof m);\n" \
    "}\n" \
    "template <class M, class T, u64 N, class I> T *hcq_vlocal(hcq_local<T, N> &l, I i, bool w) {\n" \
    "  const u64 lanes = sizeof(M) / sizeof(T);\n" \
    "  if ((u64)i >= N || N - (u64)i < lanes) { hcq_local_oob<T>((u64)i, N); return nullptr; }\n" \
    "  if (HCQ_VALIGN && (u64)i * sizeof(T) % sizeof(M)) { hcq_misaligned((u64)i * sizeof(T), sizeof(M), ~0u, w, (i64)i); return nullptr; }\n" \
    "  return &l.v[i];\n" \
    "}\n" \
    "template <class M, class T, u64 N, class I> M hcq_vld(hcq_local<T, N> &l, I i) {\n" \
    "  M m = M(); T *p = hcq_vlocal<M>(l, i, false); if (p) HCQ_MEMCPY(&m, p, sizeof m); return m;\n" \
    "}\n" \
    "template <class M, class T, u64 N, class I> void hcq_vst(hcq_local<T, N> &l, I i, M m) {\n" \
    "  T *p = hcq_vlocal<M>(l, i, true); if (p) HCQ_MEMCPY(p, &m, sizeof m);\n" \
    "}\n" \
    "H void hcq_barrier(void) { const hcq_twin_group *g = hcq_item->grp; g->rt->barrier(g->ctx, 0); }\n" \
    "H u32 hcq_implicit_u32(int i) { u32 v; HCQ_MEMCPY(&v, hcq_item->grp->implicit + 4 * i, 4); return v; }\n" \
    "H u16 hcq_implicit_u16(int i) { u16 v; HCQ_MEMCPY(&v, hcq_item->grp->implicit + 2 * i, 2); return v; }\n" \
    /* the kernel body's loops end when the launch is stopped (a closing device's engine): a runaway twin \
     * cannot hold its engine's thread, which the device's close joins */ \
    "H bool hcq_cancelled(void) { const volatile int *c = hcq_item->grp->cancel; return c && *c; }\n" \
    "#define for(...) for (__VA_ARGS__) if (__builtin_expect(hcq_cancelled(), 0)) break; else\n"

static const cc_gpu_dialect host_cuda = {"host twin of the CUDA", host_cuda_header, "extern \"C\" ", HOST_AFTER,
                                         CC_MMA_HOST};
static const cc_gpu_dialect host_hip = {"host twin of the HIP", host_hip_header, "extern \"C\" ",
                                        HOST_AFTER CC_HIP_SINF, CC_MMA_HOST};

int cc_twin_origin_of(const char *target)
{
    if (!target) return 0;
    if (!strcmp(target, "cuda") || !strncmp(target, "sm_", 3)) return CC_TWIN_CUDA;
    if (!strcmp(target, "hip") || !strncmp(target, "gfx", 3)) return CC_TWIN_HIP;
    return 0;
}

static bool kernel_has_barrier(const hcq_kernel *k)
{
    for (uint32_t i = 0; i < k->nops; i++)
        if (k->ops[i].op == HCQ_OP_BARRIER) return true;
    return false;
}

/* the twin's exports, after the kernel */
static void emit_entry(cc_sb *b, const hcq_kernel *k, int origin)
{
    uint32_t n = hcq_kernel_param_count(k);
    hcq_param_info *pi = calloc(n ? n : 1, sizeof *pi);
    if (!pi) {
        b->oom = true;
        return;
    }
    hcq_kernel_param_layout(k, pi);
    const char *ex = "extern \"C\" __attribute__((visibility(\"default\")))";
    cc_sb_printf(b, "\n%s const unsigned hcq_twin_meta[] = {0x%08xu, %uu, %uu, %uu, %uu, %uu", ex, CC_TWIN_MAGIC,
                 CC_TWIN_VERSION, n,
                 (kernel_has_barrier(k) ? CC_TWIN_HAS_BARRIERS : 0u) | (cc_mma_used(k) ? CC_TWIN_HAS_WARP_SYNC : 0u),
                 hcq_kernel_local_bytes(k), (unsigned)origin);
    for (uint32_t p = 0; p < n; p++)
        cc_sb_printf(b, ", 0x%xu", pi[p].size | (uint32_t)pi[p].is_buffer << 16 | (uint32_t)pi[p].dtype << 24);
    cc_sb_printf(b, "};\n%s const char hcq_twin_name[] = \"%s\";\n", ex, k->name);
    cc_sb_printf(b, "%s const hcq_twin_item **hcq_twin_slot(void) { return &hcq_item; }\n", ex);
    cc_sb_printf(b, "%s void hcq_twin_call(void)\n{\n  const void *const *a = hcq_item->grp->args;\n", ex);
    for (uint32_t p = 0; p < n; p++) {
        const char *st = cc_expr_stype((hcq_dtype)pi[p].dtype, true);
        if (pi[p].is_buffer)
            cc_sb_printf(b, "  u64 a%u; HCQ_MEMCPY(&a%u, a[%u], 8);\n", p, p, p);
        else
            cc_sb_printf(b, "  %s a%u; HCQ_MEMCPY(&a%u, a[%u], %u);\n", st, p, p, p, pi[p].size);
    }
    cc_sb_printf(b, "  %s(", k->name);
    for (uint32_t p = 0; p < n; p++) {
        if (pi[p].is_buffer)
            cc_sb_printf(b, "%shcq_gptr<%s>{a%u, %uu}", p ? ", " : "", cc_expr_stype((hcq_dtype)pi[p].dtype, true), p, p);
        else
            cc_sb_printf(b, "%sa%u", p ? ", " : "", p);
    }
    cc_sb_printf(b, ");\n}\n");
    free(pi);
}

/* The GPU row whose renderer the twin follows: for HIP its checks. */
static hcq_status origin_checks(const hcq_kernel *k, int origin, const char *target)
{
    if (origin != CC_TWIN_HIP) return HCQ_OK;
    const cc_target *t = cc_target_find(target && strncmp(target, "gfx", 3) == 0 ? target : "gfx1100");
    return t ? cc_hip_supported(t, k) : HCQ_OK;
}

hcq_status cc_twin_render(const hcq_kernel *k, int origin, const char *target, char **source_out)
{
    if (origin != CC_TWIN_CUDA && origin != CC_TWIN_HIP)
        return base_err(HCQ_EINVAL, "host twin: target '%s' has no GPU source", target ? target : "(null)");
    hcq_status st = hcq_kernel_verify(k);
    if (st || (st = origin_checks(k, origin, target))) return st;
    char *body = NULL;
    if ((st = cc_render_gpu(origin == CC_TWIN_CUDA ? &host_cuda : &host_hip, k, &body, NULL))) return st;
    cc_sb b = {0};
    cc_sb_puts(&b, body);
    free(body);
    emit_entry(&b, k, origin);
    char *src = cc_sb_take(&b, "host twin source");
    if (!src) return HCQ_ENOMEM;
    *source_out = src;
    return HCQ_OK;
}

/* ** building. Portable flags only: the twin must behave as the GPU code
 * would on any host of the architecture (no -march=native). */
static const char *const twin_args[] = {"-x", "c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-fno-exceptions",
                                        "-fno-rtti", "-ffp-contract=off", "-fno-math-errno", "-fvisibility=hidden",
                                        "-w", NULL};

static const cc_target twin_rows[2] = {
    {"host-twin-cuda", CC_BIN_HOST_SO, "c++", NULL, NULL, NULL},
    {"host-twin-hip", CC_BIN_HOST_SO, "c++", NULL, NULL, NULL},
};

static hcq_status build(const cc_gpu_job *job, void **out, size_t *out_size, char *label, size_t label_size)
{
    const cc_clang_info *cl;
    char what[400];
    snprintf(what, sizeof what, "compiling the host twin of kernel '%s'", job->kernel->name);
    hcq_status st = cc_clang(&cl);
    if (st) return base_err_prefix(st, "%s", what);
    size_t n = 0;
    const char *argv[32];
    argv[n++] = cl->path;
    for (size_t i = 0; twin_args[i]; i++) argv[n++] = twin_args[i];
    const char *post[] = {"-lm", NULL};
    argv[n] = NULL;
    st = cc_build_in_temp(job->source, ".cc", argv, post, what, out, out_size);
    if (!st) snprintf(label, label_size, "%s", cl->label);
    return st;
}

hcq_status cc_twin_compile(const hcq_kernel *k, int origin, const char *target, hcq_binary **out)
{
    char *src = NULL;
    hcq_status st = cc_twin_render(k, origin, target, &src);
    if (st) return st;
    cc_gpu_job job = {.target = &twin_rows[origin == CC_TWIN_HIP], .kernel = k, .source = src, .flags = CC_TWIN_FLAGS,
                      .build = build};
    st = cc_gpu_compile_cached(&job, out);
    free(src);
    return st;
}

/* ** whether twins can be made here */
bool cc_twin_available(const char *target, char *why, size_t why_size)
{
    const char *var;
    int ms = cc_mock_shader(target, &var);
    if (ms == BASE_MOCK_SHADER_IR) {
        snprintf(why, why_size, "%s=ir", var);
        return false;
    }
    if (ms == BASE_MOCK_SHADER_TWIN) { /* binaries and twins from the kernel cache where the tools are missing */
        snprintf(why, why_size, "%s=twin", var);
        return true;
    }
    const cc_target *t = cc_target_find(target);
    int origin = cc_twin_origin_of(target);
    if (!t || !origin || t->kind == CC_BIN_IR_ELF) {
        snprintf(why, why_size, "target %s has no GPU source", target ? target : "(null)");
        return false;
    }
    if (origin == CC_TWIN_CUDA) return cc_nv_have(CC_NV_CLANG, why, why_size);
    char need[96];
    snprintf(need, sizeof need, "the %s target (HIP for AMDGPU)", target);
    if (cc_require_clang(((const amd_target_arch *)t->arch)->min_clang, need)) {
        snprintf(why, why_size, "%s", hcq_error_message());
        return false;
    }
    return true;
}

/* ** loading */
hcq_status cc_twin_module_load(const void *so, size_t size, cc_twin_module *out)
{
    cc_twin_module m = {0};
    hcq_status st = cc_host_so_open(so, size, "host twin", "host twins are built by cc_twin_compile", &m.dl, &m.fd);
    if (st) return st;
    void *call = dlsym(m.dl, "hcq_twin_call"), *slot = dlsym(m.dl, "hcq_twin_slot");
    memcpy(&m.call, &call, sizeof call); /* object pointer -> function pointer, as POSIX allows */
    memcpy(&m.slot, &slot, sizeof slot);
    m.name = dlsym(m.dl, "hcq_twin_name");
    m.meta = dlsym(m.dl, "hcq_twin_meta");
    if (!m.call || !m.slot || !m.name || !m.meta) {
        cc_host_so_close(m.dl, m.fd);
        return base_err(HCQ_EFORMAT, "shared object lacks hcq_twin_call, hcq_twin_slot, hcq_twin_name or "
                        "hcq_twin_meta: not a host twin");
    }
    if (m.meta[CC_TWIN_META_MAGIC] != CC_TWIN_MAGIC || m.meta[CC_TWIN_META_VERSION] != CC_TWIN_VERSION) {
        st = base_err(HCQ_EFORMAT, "host twin '%s' has ABI magic 0x%08x version %u; this build needs 0x%08x version "
                      "%u (rebuild it)", m.name, m.meta[CC_TWIN_META_MAGIC], m.meta[CC_TWIN_META_VERSION],
                      CC_TWIN_MAGIC, CC_TWIN_VERSION);
        cc_host_so_close(m.dl, m.fd);
        return st;
    }
    m.nparams = m.meta[CC_TWIN_META_NPARAMS];
    m.local_bytes = m.meta[CC_TWIN_META_LOCAL_BYTES];
    m.origin = m.meta[CC_TWIN_META_ORIGIN];
    m.barriers = m.meta[CC_TWIN_META_BARRIERS] != 0;
    m.warp_sync = (m.meta[CC_TWIN_META_BARRIERS] & CC_TWIN_HAS_WARP_SYNC) != 0;
    *out = m;
    return HCQ_OK;
}

void cc_twin_module_unload(cc_twin_module *m)
{
    if (!m) return;
    cc_host_so_close(m->dl, m->fd);
    memset(m, 0, sizeof *m);
}

/* ** the one-call runner */
typedef struct run_ctx {
    const hcq_kernel *k;
    const hcq_interp_launch *l;
    const hcq_param_info *pi;
} run_ctx;

/* Asks the launch's interp-style check about one access (no range is
 * cached: every access is asked, as the interpreter asks). */
static bool run_check(void *ctx, uint64_t addr, uint32_t size, uint32_t param, bool write, int64_t index,
                      uint64_t *lo, uint64_t *hi, bool *writable, char *why, size_t why_size)
{
    run_ctx *x = ctx;
    (void)lo, (void)hi, (void)writable;
    if (!x->l->mem || !x->l->mem->check) {
        /* no checks asked for: the whole address space */
        *lo = 0;
        *hi = UINT64_MAX;
        *writable = true;
        return true;
    }
    hcq_interp_access a = {.addr = addr, .size = size, .write = write, .param = param, .index = (uint64_t)index,
                           .op = HCQ_IR_NONE};
    return x->l->mem->check(x->l->mem->ctx, &a, why, why_size);
}

hcq_status cc_twin_run(const hcq_kernel *k, const char *target, const hcq_interp_launch *l)
{
    if (!k || !l) return base_err(HCQ_EINVAL, "cc_twin_run: NULL %s", k ? "launch" : "kernel");
    int origin = cc_twin_origin_of(target);
    hcq_status st = hcq_kernel_verify(k);
    if (st) return base_err_prefix(st, "cc_twin_run");
    uint64_t groups = 1, items = 1;
    for (int i = 0; i < 3; i++) {
        if (!l->local_size[i] || !l->num_groups[i])
            return base_err(HCQ_EINVAL, "kernel '%s': launch has %s[%d] = 0; every dimension needs at least 1",
                            k->name, l->local_size[i] ? "num_groups" : "local_size", i);
        groups *= l->num_groups[i];
        items *= l->local_size[i];
    }
    if (items > IR_MAX_GROUP_SIZE)
        return base_err(HCQ_ELIMIT, "kernel '%s': work-group of %" PRIu64 " work-items; the limit is %u", k->name,
                        items, IR_MAX_GROUP_SIZE);
    uint64_t end = l->group_end ? l->group_end : groups;
    if (l->group_begin > end || end > groups)
        return base_err(HCQ_EINVAL, "kernel '%s': groups [%" PRIu64 ", %" PRIu64 ") are outside the grid of %" PRIu64
                        " groups", k->name, l->group_begin, end, groups);
    uint32_t n = hcq_kernel_param_count(k);
    hcq_param_info *pi = calloc(n ? n : 1, sizeof *pi);
    const void **args = calloc(n ? n : 1, sizeof *args);
    if (!pi || !args) {
        free(pi);
        free(args);
        return base_err(HCQ_ENOMEM, "cc_twin_run: out of memory");
    }
    uint32_t need = hcq_kernel_param_layout(k, pi);
    if (need && (!l->kernargs || l->kernarg_size < need)) {
        free(pi);
        free(args);
        return base_err(HCQ_EINVAL, "kernel '%s': needs %u bytes of kernargs, got %zu", k->name, need, l->kernarg_size);
    }
    for (uint32_t p = 0; p < n; p++) args[p] = (const uint8_t *)l->kernargs + pi[p].offset;
    hcq_binary *so = NULL;
    cc_twin_module m = {0};
    if (!(st = cc_twin_compile(k, origin, target, &so))) st = cc_twin_module_load(so->data, so->size, &m);
    hcq_binary_free(so);
    if (!st) {
        /* the implicit arguments HIP code reads its sizes from (code object
         * v5: block counts u32 at 0, 4, 8; group sizes u16 at 12, 14, 16) */
        uint8_t implicit[64] = {0};
        for (int i = 0; i < 3; i++) {
            uint16_t ls = (uint16_t)l->local_size[i];
            memcpy(implicit + 4 * i, &l->num_groups[i], 4);
            memcpy(implicit + 12 + 2 * i, &ls, 2);
        }
        run_ctx x = {k, l, pi};
        cc_twin_launch tl = {.m = &m, .args = args, .implicit = implicit, .barriers = 16, .check = run_check, .ctx = &x};
        memcpy(tl.num_groups, l->num_groups, sizeof tl.num_groups);
        memcpy(tl.local_size, l->local_size, sizeof tl.local_size);
        cc_twin_fault f;
        st = cc_twin_run_groups(&tl, l->group_begin, end, NULL, &f);
        if (st == HCQ_EFAULT) {
            char msg[1024];
            cc_twin_fault_describe(&f, k->name, msg, sizeof msg);
            st = base_err(HCQ_EFAULT, "%s (host twin of the %s text)", msg, origin == CC_TWIN_HIP ? "HIP" : "CUDA");
        }
    }
    cc_twin_module_unload(&m);
    free(pi);
    free(args);
    return st;
}
