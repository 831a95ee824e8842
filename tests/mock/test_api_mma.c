/* The IR's matrix multiply-accumulate (include/hcq/compiler.h "Matrix
 * multiply-accumulate") on the mock GPUs, compiled for each model's target
 * and run every way the mock runs kernels: as kernel IR on the interpreter
 * (HCQ_MOCK_SHADER=ir), as host twins (twin) and as machine code on the
 * executors (isa: the SASS executor runs what ptxas made of the mma.sync,
 * the AMD ISA executor the v_wmma / v_mfma clang made). Each kind the
 * target offers: tiles D = A * B + C, two warps per work-group, two
 * chained MMAs over k, every work-item loading its fragments from the
 * places hcq_ir_mma_coord gives; every element of D compared bit for bit
 * with a scalar reference (tests/support/mma_ref.h: an f32 fma loop in k
 * order on random f16/bf16 of many magnitudes and both signs, subnormals
 * among them). On the executors this checks the kinds' table against the
 * vendors' layouts independently: the executors place fragments as the
 * ISA documents do (drivers/mock/mock_sass_mma.c, mock_amd_isa_mma.c),
 * so a wrong coordinate would put an element in the wrong place of D.
 * Also: a partial warp at the MMA stops the kernel; a kind the target
 * lacks and the CPU device are refused. On a real GPU (the hardware kit)
 * the kinds run as they are and D is held to the reference within a few
 * ulps of the magnitudes summed: tensor cores sum in their own,
 * undocumented order and rounding (compiler/mma.h). */
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "compiler/twin.h"
#include "hcqtest.h"
#include "mma_ref.h"
#include "nvcc_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void teardown(void)
{
    unsetenv("HCQ_MOCK_SHADER");
    base_env_reload();
}
TestSuite(api_mma, .fini = teardown, .timeout = 300);

static bool on_mock(void)
{
    const char *m = getenv("HCQ_MOCK");
    return m && *m && strcmp(m, "0") != 0 && strncmp(t_device_name(), "CPU", 3) != 0;
}

/* the device under test, its kernels run as `shader` says (HCQ_MOCK_SHADER; NULL: as it would) */
static hcq_device *open_dev(const char *shader)
{
    if (shader) {
        if (!on_mock()) cr_skip_test("%s is not a mock GPU: HCQ_MOCK_SHADER=%s does not apply", t_device_name(), shader);
        bool nv = !strncmp(t_device_name(), "NV", 2);
        if (!strcmp(shader, "isa") && nv) t_need_nvdisasm();
        if (!strcmp(shader, "twin")) {
            char why[256];
            const char *target = nv ? "sm_90" : "gfx1100";
            if (!cc_twin_available(target, why, sizeof why)) cr_skip_test("no host twins for %s here: %s", target, why);
        }
        setenv("HCQ_MOCK_SHADER", shader, 1);
        base_env_reload();
    }
    return t_open();
}

/* the kinds the device's target runs: its own, or every kind for the ir target (the interpreter) */
static unsigned device_kinds(hcq_device *d, hcq_mma_kind *kinds)
{
    const char *target = hcq_device_get_props(d)->target;
    if (strcmp(target, "ir")) return hcq_target_mma_kinds(target, kinds, 8);
    for (unsigned i = 1; i < HCQ_MMA_KINDS; i++) kinds[i - 1] = (hcq_mma_kind)i;
    return HCQ_MMA_KINDS - 1;
}

enum { KSTEPS = 2, WPG = 2, GROUPS = 2, TILES = WPG * GROUPS };

/* runs kind on d; false (why filled) if the kernel stopped */
static bool run_kind(hcq_device *d, hcq_mma_kind kind, bool gate_half, uint64_t seed, char *why, size_t wsize)
{
    hcq_mma_info in;
    T_OK(hcq_mma_info_get(kind, &in));
    int bf16 = in.ab == HCQ_BF16;
    unsigned kt = KSTEPS * in.k, na = TILES * in.m * kt, nb = TILES * kt * in.n, nc = TILES * in.m * in.n;
    uint16_t *a = malloc(2 * na), *b = malloc(2 * nb);
    float *c = malloc(4 * nc), *out = malloc(4 * nc);
    uint64_t s = seed;
    for (unsigned i = 0; i < na; i++) a[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < nb; i++) b[i] = tref_rnd16(&s, bf16);
    for (unsigned i = 0; i < nc; i++) c[i] = tref_rnd_c(&s);
    hcq_program *p = t_load(d, tref_mma_kernel_gated(kind, KSTEPS, WPG, gate_half));
    hcq_buffer *ba = t_buffer_from(d, a, 2 * na), *bb = t_buffer_from(d, b, 2 * nb), *bc = t_buffer_from(d, c, 4 * nc),
               *bd = T_NONNULL(hcq_buffer_alloc(d, 4 * nc, HCQ_MEM_DEVICE));
    hcq_arg args[4] = {hcq_arg_buffer(ba), hcq_arg_buffer(bb), hcq_arg_buffer(bc), hcq_arg_buffer(bd)};
    T_OK(hcq_launch(p, args, 4, hcq_dims_1d(GROUPS, WPG * in.warp)));
    bool ok = hcq_device_synchronize(d) == HCQ_OK;
    snprintf(why, wsize, "%s", ok ? "" : hcq_error_message());
    if (ok) {
        t_read(bd, out, 4 * nc);
        const char *target = hcq_device_get_props(d)->target;
        /* exact on the mock GPUs and the interpreter (the model is theirs); hardware sums in its own way */
        bool hw = !on_mock() && strcmp(target, "ir") != 0;
        for (unsigned t = 0; t < TILES; t++)
            for (unsigned m = 0; m < in.m; m++)
                for (unsigned n = 0; n < in.n; n++) {
                    const uint16_t *ta = a + t * in.m * kt, *tb = b + t * kt * in.n;
                    const float *tc = c + t * in.m * in.n;
                    float want = tref_mma_elem(ta, tb, tc, bf16, in.n, kt, m, n, 0),
                          got = out[t * in.m * in.n + m * in.n + n];
                    uint32_t w = tref_f32_raw(want), g = tref_f32_raw(got);
                    if (hw) { /* the hardware's own order and rounding: within a few ulps of the magnitudes summed */
                        double mag = fabs(tc[m * in.n + n]);
                        for (unsigned kk = 0; kk < kt; kk++)
                            mag += fabs((double)tref_ab_val(ta[m * kt + kk], bf16) * tref_ab_val(tb[kk * in.n + n], bf16));
                        cr_assert(fabs((double)got - want) <= 0x1p-19 * mag + 0x1p-126,
                                  "%s on %s: tile %u D[%u][%u] = %a, want %a (within %a)", in.name, target, t, m, n,
                                  got, want, 0x1p-19 * mag + 0x1p-126);
                    } else {
                        cr_assert_eq(g, w, "%s on %s (%s): tile %u D[%u][%u] = 0x%08x, want 0x%08x", in.name, target,
                                     hcq_device_get_props(d)->shader, t, m, n, g, w);
                    }
                }
    }
    hcq_buffer_free(ba), hcq_buffer_free(bb), hcq_buffer_free(bc), hcq_buffer_free(bd);
    hcq_program_free(p);
    free(a), free(b), free(c), free(out);
    return ok;
}

static const char *kind_name(hcq_mma_kind kind)
{
    hcq_mma_info in;
    return hcq_mma_info_get(kind, &in) ? "?" : in.name;
}

static void every_kind(const char *shader)
{
    hcq_device *d = open_dev(shader);
    char target[32]; /* (a copy: the skip below reports it after the device is closed) */
    snprintf(target, sizeof target, "%s", hcq_device_get_props(d)->target);
    hcq_mma_kind kinds[HCQ_MMA_KINDS];
    unsigned n = device_kinds(d, kinds);
    if (!n) {
        T_OK(hcq_device_close(d));
        cr_skip_test("target %s has no matrix multiply-accumulate", target);
    }
    char why[1024];
    for (unsigned i = 0; i < n; i++)
        cr_assert(run_kind(d, kinds[i], false, 0x9e3779b97f4a7c15ull * (i + 1), why, sizeof why), "%s on %s (%s): %s",
                  kind_name(kinds[i]), target, hcq_device_get_props(d)->shader, why);
    /* a partial warp at the MMA: the kernel stops (hardware leaves it undefined) */
    if (shader)
        cr_assert(!run_kind(d, kinds[0], true, 1, why, sizeof why), "a partial warp's mma ran on %s (%s)", target,
                  hcq_device_get_props(d)->shader);
    T_OK(hcq_device_close(d));
}

Test(api_mma, every_kind_on_the_interpreter) { every_kind("ir"); }
Test(api_mma, every_kind_as_host_twins) { every_kind("twin"); }
Test(api_mma, every_kind_as_machine_code_on_the_executors) { every_kind("isa"); }
/* a device that is not a mock GPU as it is (the CPU device interpreting kernels: every kind; hardware) */
Test(api_mma, every_kind_on_a_device_as_it_runs)
{
    if (on_mock()) cr_skip_test("the mock GPUs run the three tests above");
    every_kind(NULL);
}

/* a kind the device's target lacks, and the CPU device: refused when the kernel is compiled */
Test(api_mma, a_kind_the_target_lacks_is_refused)
{
    hcq_device *d = t_open();
    const char *target = hcq_device_get_props(d)->target;
    if (!strcmp(target, "ir")) {
        T_OK(hcq_device_close(d));
        cr_skip_test("the interpreter runs every kind");
    }
    hcq_mma_kind have[8];
    unsigned n = hcq_target_mma_kinds(target, have, 8);
    hcq_mma_kind lack = n && have[0] == HCQ_MMA_NV_M16N8K16_F16 ? HCQ_MMA_MFMA_16X16X16_F16 : HCQ_MMA_NV_M16N8K16_F16;
    hcq_kernel *k = tref_mma_kernel(lack, 1, 1);
    cr_assert_null(hcq_program_from_kernel(d, k));
    cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP);
    char want[160];
    snprintf(want, sizeof want, "(mma %s): target %s has no such matrix operation (%s", kind_name(lack), target,
             n ? "it has: " : "it has none");
    T_MSG_HAS(want);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
}
