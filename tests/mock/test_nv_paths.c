/* The NV first-run paths (issue 22 part 1): the proven path is the default
 * where no vendor source settles the choice, hcq's is the alternative, and
 * the self-test at open moves to the alternative where the mock's model
 * hangs on the default (HCQ_MOCK_CONFIG refuse=); with either path of each
 * pair refused the device opens, says which path runs, and runs work. Also:
 * Hopper launching the QMD V03 its class documents (issue 21 item 3), the
 * scheduler's zero-dimension check (item 4), and a new chip of a known
 * family as one model row (issue 22 part 2). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void)
{
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(nv_paths, .init = setup, .timeout = 240);

static hcq_device *open_nv(void)
{
    hcq_device *d = hcq_device_open("NV:0");
    cr_assert_not_null(d, "%s", hcq_error_message());
    return d;
}

/* a launch, copies both ways and the timeline's waits: every path at work */
static void run_add1(hcq_device *d)
{
    enum { N = 300 };
    hcq_program *p = t_load(d, t_k_add1());
    uint32_t host[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3;
    hcq_buffer *b = t_buffer_from(d, host, sizeof host);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d((N + 63) / 64, 64)));
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d((N + 63) / 64, 64)));
    uint32_t out[N];
    t_read(b, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i * 3 + 2, "element %d", i);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(p));
}

static void has(const char *text, const char *want) { cr_assert(strstr(text, want), "no \"%s\" in: %s", want, text); }

Test(nv_paths, the_defaults_are_the_proven_paths_and_hcq_info_says_so)
{
    hcq_device *d = open_nv();
    const char *paths = hcq_device_get_props(d)->paths;
    has(paths, "semaphore acquire: ACQ_CIRC_GEQ 64-bit");
    has(paths, "QMD: V04");
    has(paths, "local memory: always 0x240 bytes/thread");
    has(paths, "copy-engine release: two 32-bit releases");
    has(paths, "(probed at open)");
    nv_dev *nv = nv_of(d);
    cr_assert_eq(nv->path.acquire, NV_ACQ_CIRC_GEQ64);
    cr_assert_eq(nv->qmd_ver, NV_QMD_V04);
    cr_assert_eq(nv->path.local, NV_LOCAL_MIN);
    cr_assert_eq(nv->path.ce, NV_CE_REL32);
    /* a kernel without a stack still gets the ABI's reserve */
    hcq_program *p = t_load(d, t_k_add1());
    cr_assert_eq(nv_qmd_get(((nv_prog *)p->priv)->qmd, nv->qmd_ver, NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0),
                 NV_LOCAL_RESERVE);
    T_OK(hcq_program_free(p));
    run_add1(d);
    T_OK(hcq_device_close(d));

    /* the Ampere channel documents ACQ_STRICT_GEQ, and GA100's class takes
     * V03 only (in hcq's encoders): nothing to choose there */
    T_OK(mock_configure("nv=A100"));
    d = open_nv();
    paths = hcq_device_get_props(d)->paths;
    cr_assert_null(strstr(paths, "semaphore acquire"), "%s", paths);
    cr_assert_null(strstr(paths, "QMD"), "%s", paths);
    has(paths, "local memory: always 0x240 bytes/thread");
    cr_assert_eq(nv_of(d)->path.acquire, NV_ACQ_STRICT_GEQ64);
    T_OK(hcq_device_close(d));
}

/* with each path refused (it hangs on the mock's model), the device opens
 * on the other one and says so; work runs */
Test(nv_paths, with_either_path_of_a_pair_refused_the_other_runs)
{
    static const struct {
        const char *refuse, *runs;
        bool fell_back; /* the default hung */
    } cases[] = {
        {"acq-circ-geq", "semaphore acquire: ACQ_STRICT_GEQ 64-bit", true},
        {"acq-strict-geq", "semaphore acquire: ACQ_CIRC_GEQ 64-bit", false},
        {"qmd-v4", "QMD: V03", true},
        {"qmd-v3", "QMD: V04", false},
        {"local-min", "local memory: only for a stack", true},
        {"local-lazy", "local memory: always 0x240 bytes/thread", false},
        {"ce-release32", "copy-engine release: one 64-bit release", true},
        {"ce-release64", "copy-engine release: two 32-bit releases", false},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(cases); i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "refuse=%s", cases[i].refuse);
        T_OK(mock_configure(cfg));
        hcq_device *d = open_nv();
        const char *paths = hcq_device_get_props(d)->paths;
        has(paths, cases[i].runs);
        cr_assert_eq(strstr(paths, "hung") != NULL, cases[i].fell_back, "%s: %s", cfg, paths);
        run_add1(d);
        T_OK(hcq_device_close(d));
        cr_assert_eq(mock_nv_live_objects(), 0, "%s", cfg);
    }
}

Test(nv_paths, with_both_paths_refused_the_open_fails_naming_each_try)
{
    T_OK(mock_configure("refuse=acq-circ-geq,refuse=acq-strict-geq"));
    cr_assert_null(hcq_device_open("NV:0"));
    cr_assert_eq(hcq_error_status(), HCQ_EIO, "%s", hcq_error_message());
    T_MSG_HAS("a semaphore release and a wait fails on every path");
    T_MSG_HAS("ACQ_CIRC_GEQ 64-bit hung");
    T_MSG_HAS("ACQ_STRICT_GEQ 64-bit hung");
    cr_assert_eq(mock_nv_live_objects(), 0);
    /* and a name the mock does not know is refused with the list */
    cr_assert_neq(mock_configure("refuse=acq-geq"), HCQ_OK);
    T_MSG_HAS("acq-strict-geq");
    T_MSG_HAS("ce-release32");
}

/* issue 21 item 3: clcbc0qmd.h defines V03 beside V04 for HOPPER_COMPUTE_A;
 * the H100 model runs either (the mock reads the version from the QMD) */
Test(nv_paths, hopper_runs_the_qmd_v03_its_class_documents)
{
    T_OK(mock_configure("refuse=qmd-v4")); /* the self-test then launches with V03 */
    hcq_device *d = open_nv();
    cr_assert_eq(nv_of(d)->qmd_ver, NV_QMD_V03);
    cr_assert(strstr(hcq_device_get_props(d)->engines, "QMD V03"), "%s", hcq_device_get_props(d)->engines);
    run_add1(d);
    T_OK(hcq_device_close(d));
}

/* the last SEND_PCAS_A in the compute channel's pushbuffer: the QMD of the
 * launch just submitted */
static uint32_t *last_qmd(nv_dev *nv)
{
    nv_chan *c = &nv->ch[NV_CH_COMPUTE];
    uint32_t *qmd = NULL;
    for (uint64_t i = 0; i + 1 < c->pb_head && i + 1 < c->pb_dw; i++) {
        uint32_t h = c->pb_cpu[i];
        if (nv_mthd_sec_op(h) == NV_SEC_OP_INC && nv_mthd_subch(h) == NV_SUBCH_COMPUTE &&
            nv_mthd_addr(h) == NV_COMPUTE_SEND_PCAS_A && nv_mthd_count(h) == 1)
            qmd = (uint32_t *)(uintptr_t)((uint64_t)c->pb_cpu[i + 1] << 8);
    }
    return qmd;
}

/* issue 21 item 4: the scheduler refuses a CTA with a zero dimension
 * (pri_sked.ref.txt SKEDCHECK16_CTA_THREAD_DIMENSION_ZERO); hcq's queue
 * layer never sends one, so the QMD is changed on its way */
Test(nv_paths, a_zero_cta_dimension_is_a_scheduler_error)
{
    hcq_device *d = open_nv();
    hcq_program *p = t_load(d, t_k_add1());
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4096, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(64)};
    mock_nv_pause(0, true);
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 64)));
    uint32_t *q = last_qmd(nv_of(d));
    cr_assert_not_null(q);
    nv_qmd_set(q, nv_of(d)->qmd_ver, NV_QMD_CTA_THREAD_DIMENSION1, 0, 0);
    mock_nv_pause(0, false);
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    char why[1024];
    mock_nv_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "SKEDCHECK16_CTA_THREAD_DIMENSION_ZERO") && strstr(why, "CTA_THREAD_DIMENSION1 0"), "%s",
              why);
    T_OK(hcq_device_close(d));
}

/* issue 22 part 2: a GPU of a family hcq knows is one model row; bring-up,
 * the classes, the QMD and the target follow from its SM version */
Test(nv_paths, a_new_chip_of_a_known_family_is_one_row)
{
    static const mnv_model l40s = {
        .name = "L40S",
        .full_name = "NVIDIA L40S",
        .pci_device = 0x26B9,
        .sm_version = 0x809, /* Ada: AD102 */
        .gpcs = 12,
        .tpcs_per_gpc = 6,
        .sms_per_tpc = 2,
        .max_warps_per_sm = 48,
        .enabled_tpcs = 71,
        .vram_bytes = 48ull << 30,
        .sensors = {30, 70, 35, 350, 210, 2520},
        .link_speed = 4,
        .link_width = 16,
        .subsys_vendor = 0x10de,
        .subsys_device = 0x1851,
        .revision = 0xa1,
        .ecc = true,
        .datacenter = true,
    };
    cr_assert(mock_nv_add_model(&l40s));
    T_OK(mock_configure("nv=L40S"));
    hcq_device *d = open_nv();
    const hcq_device_props *pr = hcq_device_get_props(d);
    cr_assert_str_eq(pr->name, "NVIDIA L40S");
    cr_assert_str_eq(pr->arch, "sm_89");
    cr_assert_eq(pr->compute_units, 142);
    cr_assert(strstr(pr->engines, "ADA_COMPUTE_A") && strstr(pr->engines, "QMD V03"), "%s", pr->engines);
    run_add1(d);
    T_OK(hcq_device_close(d));
}
