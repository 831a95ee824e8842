/* The first-run paths (issue 22 part 1): where hcq's encoding and the
 * publicly proven one differ and no vendor source settles which the
 * hardware takes, the proven one is the default and hcq's the
 * alternative, and the self-test at device open switches a path that
 * hangs. The mock hangs either encoding on request (HCQ_MOCK_CONFIG
 * refuse=NAME): with any one refused, the device opens on the other and
 * runs a kernel, copies and signals. HCQ_TEST_DEMO_REFUSALS=1 also runs
 * `hcq demo --quick` under each refusal (half a minute each: CI only). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(amd_paths, .timeout = 120);

typedef struct refusal {
    char spec[64];   /* HCQ_MOCK_CONFIG */
    char expect[32]; /* the path the device must end up on */
} refusal;

static void use_mock(const char *spec)
{
    setenv("HCQ_MOCK", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(spec));
}

/* a kernel, a copy each way and a signal: what every eager call needs */
static void workload(hcq_device *d)
{
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t v = 41, out = 0;
    hcq_buffer *b = t_buffer_from(d, &v, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 43);
    T_OK(hcq_program_free(p));
    T_OK(hcq_buffer_free(b));
}

ParameterizedTestParameters(amd_paths, one_refused_path_runs_on_the_other)
{
    static refusal r[] = {
        /* the proven default refused: the self-test switches to hcq's */
        {"amd=gfx1100,refuse=wait-reg-mem32", "wait-reg-mem64"},
        {"amd=gfx1100,refuse=hdp-all-bits", "hdp-one-bit"},
        {"amd=gfx942,refuse=hdp-all-bits", "hdp-one-bit"},
        {"amd=gfx1100,refuse=priv-1", "priv-0"},
        {"amd=gfx942,refuse=dispatch-aql", "dispatch-pm4"},
        {"amd=gfx90a,refuse=dispatch-aql", "dispatch-pm4"},
        /* hcq's alternative refused: the default never meets it */
        {"amd=gfx1100,refuse=wait-reg-mem64", "wait-reg-mem32"},
        {"amd=gfx1100,refuse=hdp-one-bit", "hdp-all-bits"},
        {"amd=gfx90a,refuse=hdp-one-bit", "hdp-all-bits"},
        {"amd=gfx1100,refuse=priv-0", "priv-1"},
        {"amd=gfx942,refuse=dispatch-pm4", "dispatch-aql"},
        {"amd=gfx90a,refuse=dispatch-pm4", "dispatch-aql"},
    };
    return cr_make_param_array(refusal, r, sizeof r / sizeof *r);
}

ParameterizedTest(refusal *r, amd_paths, one_refused_path_runs_on_the_other)
{
    t_stderr c = t_stderr_begin(); /* the mock says why it hangs a queue */
    use_mock(r->spec);
    hcq_device *d = hcq_device_open("AMD:0");
    char text[8192];
    t_stderr_end(c, text, sizeof text);
    cr_assert_not_null(d, "%s: %s", r->spec, hcq_error_message());
    const char *eng = hcq_device_get_props(d)->engines, *paths = hcq_device_get_props(d)->paths;
    cr_assert(strstr(eng, r->expect), "%s: %s", r->spec, eng);
    cr_assert(strstr(paths, r->expect), "%s: paths: %s", r->spec, paths);
    const char *refused = strstr(r->spec, "refuse=") + 7;
    cr_assert_null(strstr(eng, refused), "%s: still on the refused path: %s", r->spec, eng);
    workload(d);
    T_OK(hcq_device_close(d));
}

/* both encodings of a path refused: the open fails naming the step */
Test(amd_paths, both_refused_fails_the_open_naming_the_step)
{
    t_stderr c = t_stderr_begin();
    use_mock("amd=gfx942,refuse=dispatch-aql+dispatch-pm4");
    hcq_device *d = hcq_device_open("AMD:0");
    char text[8192];
    t_stderr_end(c, text, sizeof text);
    cr_assert_null(d);
    T_MSG_HAS("a kernel writing a known value fails on every path");
    T_MSG_HAS("dispatch-pm4");
}

/* a step with no alternative (the copy engine) that hangs fails the open */
Test(amd_paths, a_hung_copy_engine_fails_the_open)
{
    setenv("HCQ_TIMEOUT_MS", "300", 1);
    use_mock("amd=gfx1100,hang=amd0.sdma");
    cr_assert_null(hcq_device_open("AMD:0"));
    T_MSG_HAS("an SDMA copy fails on every path");
}

Test(amd_paths, an_unknown_refusal_is_refused_naming_the_known_ones)
{
    T_FAILS(mock_configure("amd=gfx1100,refuse=dispatch-sideways"), HCQ_EINVAL);
    T_MSG_HAS("dispatch-sideways");
    T_MSG_HAS("wait-reg-mem64, wait-reg-mem32");
}

static void same_dwords(const uint32_t *got, const uint32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++) cr_assert_eq(got[i], want[i], "dword %zu: 0x%08x, want 0x%08x", i, got[i], want[i]);
}

/* the encoders' two forms, dword for dword (PM4 as amdgpu's
 * gfx_v11_0.c/nvd.h and tinygrad's ops_amd.py encode them) */
Test(amd_paths, the_encodings_of_each_path)
{
    const amd_arch *a = amd_arch_by_name("gfx1100");
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
    amd_paths p = AMD_PATHS_PROVEN;
    T_OK(amd_enc_wait_with(a, &p, &r, HCQ_IMM(0x1000), HCQ_IMM(0x200000003ull)));
    /* two WAIT_REG_MEMs, >= on memory: the high half at +4, then the low */
    const uint32_t w32[] = {0xC0053C00, 0x15, 0x1004, 0, 2, 0xffffffff, 4, 0xC0053C00, 0x15, 0x1000, 0, 3, 0xffffffff, 4};
    cr_assert_eq(r.ndw, 14);
    same_dwords(r.dw, w32, BASE_ARRAY_LEN(w32));
    drv_rec_reset(&r);
    p.wait64 = true;
    T_OK(amd_enc_wait_with(a, &p, &r, HCQ_IMM(0x1000), HCQ_IMM(0x200000003ull)));
    cr_assert_eq(r.dw[0] >> 8 & 0xff, 0x93, "WAIT_REG_MEM64");
    drv_rec_reset(&r);
    /* the HDP flush: REQ 0xE26, DONE 0xE27; proven: all ones, >= (DW1 0x45:
     * function 5, register space, write-then-wait); alternative: CP2 (bit
     * 2), EQUAL (0x43) */
    p = AMD_PATHS_PROVEN;
    T_OK(amd_enc_barrier_with(a, &p, &r));
    const uint32_t hdp_all[] = {0xC0053C00, 0x45, 0xE26, 0xE27, 0xffffffff, 0xffffffff, 4};
    same_dwords(r.dw, hdp_all, BASE_ARRAY_LEN(hdp_all));
    drv_rec_reset(&r);
    p.hdp_one_bit = true;
    T_OK(amd_enc_barrier_with(a, &p, &r));
    const uint32_t hdp_one[] = {0xC0053C00, 0x43, 0xE26, 0xE27, 4, 4, 4};
    same_dwords(r.dw, hdp_one, BASE_ARRAY_LEN(hdp_one));
    drv_rec_fini(&r);
}

/* the self-test kernel's machine code is what LLVM's assembler makes of
 * its six instructions (skipped where llvm-mc is absent) */
Test(amd_paths, the_self_test_kernel_is_what_the_assembler_makes)
{
    static const char *const cpus[] = {"gfx90a", "gfx942", "gfx1100"};
    for (int i = 0; i < 3; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "printf 's_load_dwordx2 s[2:3], s[0:1], 0x0\\nv_mov_b32 v0, 0\\nv_mov_b32 v1, 0x600df00d\\n"
                 "s_waitcnt lgkmcnt(0)\\nglobal_store_dword v0, v1, s[2:3]\\ns_endpgm\\n' | "
                 "llvm-mc-22 -arch=amdgcn -mcpu=%s -show-encoding 2>/dev/null", cpus[i]);
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        uint8_t bytes[64];
        size_t n = 0;
        char line[512];
        while (fgets(line, sizeof line, f)) {
            const char *e = strstr(line, "encoding: [");
            for (e = e ? e + 11 : NULL; e && *e && *e != ']' && n < sizeof bytes;) {
                bytes[n++] = (uint8_t)strtoul(e, (char **)&e, 16);
                if (*e == ',') e++;
            }
        }
        int st = pclose(f);
        if (st != 0 || !n) cr_skip_test("llvm-mc-22 is not installed (scripts/deps.sh installs llvm-22)");
        size_t want;
        const uint8_t *code = amd_selftest_code(amd_arch_by_name(cpus[i])->family, &want);
        cr_assert_eq(n, want, "%s: %zu bytes assembled, %zu in the table", cpus[i], n, want);
        cr_assert(!memcmp(code, bytes, n), "%s", cpus[i]);
    }
}

/* the demo under each refusal (long: HCQ_TEST_DEMO_REFUSALS=1) */
ParameterizedTestParameters(amd_paths, demo_passes_with_one_path_refused)
{
    static refusal r[] = {
        {"amd=gfx1100,refuse=wait-reg-mem64", ""}, {"amd=gfx1100,refuse=wait-reg-mem32", ""},
        {"amd=gfx1100,refuse=hdp-all-bits", ""},   {"amd=gfx1100,refuse=hdp-one-bit", ""},
        {"amd=gfx1100,refuse=priv-1", ""},         {"amd=gfx1100,refuse=priv-0", ""},
        {"amd=gfx942,refuse=dispatch-aql", ""},    {"amd=gfx942,refuse=dispatch-pm4", ""},
        {"amd=gfx90a,refuse=dispatch-aql", ""},    {"amd=gfx90a,refuse=dispatch-pm4", ""},
    };
    return cr_make_param_array(refusal, r, sizeof r / sizeof *r);
}

ParameterizedTest(refusal *r, amd_paths, demo_passes_with_one_path_refused, .timeout = 300)
{
    if (!getenv("HCQ_TEST_DEMO_REFUSALS")) cr_skip_test("HCQ_TEST_DEMO_REFUSALS=1 runs hcq demo under each refusal");
    char env[160];
    snprintf(env, sizeof env, "HCQ_MOCK=1 HCQ_MOCK_CONFIG=%s HCQ_DEVICE=AMD:0", r->spec);
    int st;
    char *out = t_run_hcq(env, "demo --quick", &st);
    cr_assert_eq(st, 0, "%s: %s", r->spec, out);
    cr_assert(strstr(out, "all results match"), "%s: %s", r->spec, out);
    free(out);
}
