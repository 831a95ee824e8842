/* The HIP dialect of the GPU renderer (render_gpu.h) and the AMD targets'
 * compile: HIP that needs no ROCm headers or device library, built by
 * clang (-x hip --offload-arch=gfxNNNN -nogpuinc -nogpulib
 * --cuda-device-only --no-gpu-bundle-output) into a linked code object.
 *
 * Work-item and work-group ids are the amdgcn builtins; the grid and
 * work-group sizes come from the implicit kernel arguments (code object v5+:
 * hidden_block_count_x/y/z at +0/4/8, hidden_group_size_x/y/z at +12/14/16
 * from the implicit-argument pointer, llvm-project AMDGPUUsage.rst "Code
 * Object V5 Metadata"), which the AMD backend fills and patches. Barriers
 * are s_barrier between work-group fences, as HIP's __syncthreads.
 *
 * Semantics (include/hcq/compiler.h): -ffp-contract=off, correctly rounded
 * f32 division and square root (clang's HIP default, asked for by name),
 * denormals kept. EXP2 and LOG2 on f32 use the hardware's v_exp_f32 and
 * v_log_f32 (1 ulp in AMD's ISA manuals; not measured here: no AMD GPU is
 * available to this project). SIN on f32 is hcq's own routine, carried in
 * the text (CC_HIP_SINF, correctly rounded against glibc for every f32).
 * SIN, EXP2 and LOG2 on f64 would need ROCm's device library (ocml); hcq
 * does not use it and has no routine of its own within the IR's 2-ulp
 * bound yet, so kernels with them are refused by name (the mock-gfx*
 * targets run them). */
#include "compiler/render_gpu.h"
#include "compiler/target_amd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char hip_header[] =
    "#define HCQ_KERNEL __attribute__((global))\n"
    "#define HCQ_SHARED __attribute__((shared))\n"
    "#define HCQ_DEV __attribute__((device))\n"
    "#define HCQ_GID_X ((i32)__builtin_amdgcn_workgroup_id_x())\n"
    "#define HCQ_GID_Y ((i32)__builtin_amdgcn_workgroup_id_y())\n"
    "#define HCQ_GID_Z ((i32)__builtin_amdgcn_workgroup_id_z())\n"
    "#define HCQ_LID_X ((i32)__builtin_amdgcn_workitem_id_x())\n"
    "#define HCQ_LID_Y ((i32)__builtin_amdgcn_workitem_id_y())\n"
    "#define HCQ_LID_Z ((i32)__builtin_amdgcn_workitem_id_z())\n"
    "#define HCQ_IMPLICIT_U32(i) (((const __attribute__((address_space(4))) unsigned *)__builtin_amdgcn_implicitarg_ptr())[i])\n"
    "#define HCQ_IMPLICIT_U16(i) (((const __attribute__((address_space(4))) unsigned short *)__builtin_amdgcn_implicitarg_ptr())[i])\n"
    CC_HIP_SIZES
    "#define HCQ_BARRIER() (__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"workgroup\"), __builtin_amdgcn_s_barrier(), "
    "__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"workgroup\"))\n"
    /* no device library: sin on f32 is hcq's own (CC_HIP_SINF); these
     * name what is missing if ever used */
    "#define HCQ_SINF(x) hcq_sinf(x)\n"
    "#define HCQ_CTABLE __attribute__((constant)) static const\n"
    "#define HCQ_SIN(x) hcq_f64_sin_needs_the_rocm_device_library(x)\n"
    "#define HCQ_EXP2(x) hcq_f64_exp2_needs_the_rocm_device_library(x)\n"
    "#define HCQ_LOG2(x) hcq_f64_log2_needs_the_rocm_device_library(x)\n"
    "#define HCQ_EXP2F(x) __builtin_exp2f(x)\n#define HCQ_LOG2F(x) __builtin_log2f(x)\n"
    "#define HCQ_SQRTF(x) __builtin_sqrtf(x)\n#define HCQ_SQRT(x) __builtin_sqrt(x)\n"
    "#define HCQ_TRUNCF(x) __builtin_truncf(x)\n#define HCQ_TRUNC(x) __builtin_trunc(x)\n"
    "#define HCQ_FMAF(a, b, c) __builtin_fmaf(a, b, c)\n#define HCQ_FMA(a, b, c) __builtin_fma(a, b, c)\n"
    "#define HCQ_FABS(x) __builtin_fabs(x)\n#define HCQ_SIGNBIT(x) __builtin_signbit(x)\n"
    "#define HCQ_ISINF(x) __builtin_isinf(x)\n#define HCQ_CLZLL(x) __builtin_clzll(x)\n"
    "#define HCQ_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)\n";

const cc_gpu_dialect cc_gpu_hip = {"hip", hip_header, "extern \"C\" ", CC_HIP_SINF, CC_MMA_AMDGCN};

hcq_status cc_hip_supported(const cc_target *t, const hcq_kernel *k)
{
    uint32_t n = hcq_kernel_op_count(k);
    const hcq_ir_op *ops = hcq_kernel_ops(k);
    for (uint32_t i = 0; i < n; i++) {
        const hcq_ir_op *o = &ops[i];
        bool f64 = o->dtype == HCQ_F64;
        if (f64 && (o->op == HCQ_OP_SIN || o->op == HCQ_OP_EXP2 || o->op == HCQ_OP_LOG2))
            return base_err(HCQ_ENOTSUP, "kernel '%s' op %u (%s %s): target %s has no %s within the IR's %d-ulp bound "
                            "(AMD targets compile without ROCm's device library); target mock-%s runs it",
                            hcq_kernel_name(k), i, hcq_op_name((hcq_op)o->op), hcq_dtype_name((hcq_dtype)o->dtype),
                            t->name, hcq_op_name((hcq_op)o->op), HCQ_IR_TRANSCENDENTAL_ULP,
                            ((const amd_target_arch *)t->arch)->name);
    }
    return HCQ_OK;
}

hcq_status cc_hip_render(const cc_target *t, const hcq_kernel *k, char **source_out)
{
    hcq_status st = hcq_kernel_verify(k);
    if (st) return st;
    if ((st = cc_hip_supported(t, k))) return st;
    return cc_render_gpu(&cc_gpu_hip, k, source_out, NULL);
}

/* ** compiling */
typedef struct hip_args {
    const char *argv[24];
    char offload[64];
    char flags[512]; /* the arguments as one string: part of the cache key */
} hip_args;

static void args_for(const amd_target_arch *a, hip_args *h)
{
    snprintf(h->offload, sizeof h->offload, "--offload-arch=%s", a->name);
    size_t n = 0;
    const char *fixed[] = {"-x", "hip", h->offload, "-nogpuinc", "-nogpulib", "--cuda-device-only",
                           "--no-gpu-bundle-output", "-O3", "-ffp-contract=off",
                           "-fhip-fp32-correctly-rounded-divide-sqrt", "-fno-gpu-flush-denormals-to-zero", "-w"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) h->argv[n++] = fixed[i];
    /* gfx10+: one work-group per CU, as tinygrad builds (RSRC1.WGP_MODE 0) */
    if (a->wave32) h->argv[n++] = "-mcumode";
    h->argv[n] = NULL;
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof h->flags; i++)
        len += (size_t)snprintf(h->flags + len, sizeof h->flags - len, "%s%s", i ? " " : "", h->argv[i]);
}

static hcq_status build(const cc_gpu_job *job, void **out, size_t *out_size, char *label, size_t label_size)
{
    const amd_target_arch *a = job->target->arch;
    char why[96];
    snprintf(why, sizeof why, "the %s target (HIP for AMDGPU)", a->name);
    hcq_status st = cc_require_clang(a->min_clang, why);
    if (st) return st;
    const cc_clang_info *cl;
    if ((st = cc_clang(&cl))) return st;
    char dir[4096], src[4200], obj[4200], what[160];
    if ((st = cc_make_temp_dir(dir, sizeof dir))) return st;
    snprintf(src, sizeof src, "%s/kernel.hip", dir);
    snprintf(obj, sizeof obj, "%s/kernel.co", dir);
    snprintf(what, sizeof what, "compiling kernel '%s' for %s", job->kernel->name, a->name);
    FILE *f = fopen(src, "we");
    if (!f || fputs(job->source, f) < 0) st = base_err(HCQ_EIO, "cannot write %s", src);
    if (f && fclose(f) != 0 && !st) st = base_err(HCQ_EIO, "cannot write %s", src);
    hip_args h;
    args_for(a, &h);
    const char *argv[32];
    size_t n = 0;
    argv[n++] = cl->path;
    for (size_t i = 0; h.argv[i]; i++) argv[n++] = h.argv[i];
    argv[n++] = "-c";
    argv[n++] = src;
    argv[n++] = "-o";
    argv[n++] = obj;
    argv[n] = NULL;
    if (!st) st = cc_run_tool(argv, what);
    if (!st) {
        f = fopen(obj, "re");
        if (!f) st = base_err(HCQ_ECOMPILE, "%s: clang wrote no %s", what, obj);
        else {
            fseek(f, 0, SEEK_END);
            long len = ftell(f);
            fseek(f, 0, SEEK_SET);
            void *data = len > 0 ? malloc((size_t)len) : NULL;
            if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) {
                free(data);
                st = base_err(HCQ_EIO, "%s: cannot read %s", what, obj);
            } else {
                *out = data;
                *out_size = (size_t)len;
            }
            fclose(f);
        }
    }
    cc_remove_temp_dir(dir);
    if (!st) snprintf(label, label_size, "%s", cl->label);
    return st;
}

hcq_status cc_hip_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    char *src = NULL;
    hcq_status st = cc_hip_render(t, k, &src);
    if (st) return st;
    hip_args h;
    args_for(t->arch, &h);
    cc_gpu_job job = {.target = t, .kernel = k, .source = src, .flags = h.flags, .build = build, .ctx = NULL};
    st = cc_gpu_compile_cached(&job, out);
    free(src);
    return st;
}
