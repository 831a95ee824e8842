/* The NV backend against the NV mock: every bring-up ioctl failing in turn
 * (a clear error naming the step and the driver's answer, nothing left
 * behind, the next open working), driver versions, the class lists of the
 * GPU models as RM enforces them, two GPUs with copies between them, MMU
 * faults that name the address and the kernel, hangs, dumps, VRAM
 * exhaustion, and the mock cubins the real loader reads. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "compiler/isa.h"
#include "compiler/twin.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"

static void setup(void)
{
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(nv_mock, .init = setup, .timeout = 240);

static hcq_device *open_nv(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "opening %s: %s", name, hcq_error_message());
    return d;
}

static uint64_t vram_used(uint32_t gpu) { return atomic_load(&mnv_gpu_by_index(gpu)->g->vram_used); }

Test(nv_mock, every_bringup_ioctl_failing_is_a_clear_error_and_frees_everything)
{
    uint64_t c0 = mock_ioctl_count();
    hcq_device *d = open_nv("NV:0");
    uint64_t n_open = mock_ioctl_count() - c0;
    T_OK(hcq_device_close(d));
    cr_assert_gt(n_open, 30, "a bring-up of %llu ioctls", (unsigned long long)n_open);
    unsigned failed = 0;
    for (uint64_t n = 1; n <= n_open; n++) {
        T_OK(mock_configure("")); /* refuses while any mock fd is still open */
        bool as_errno = n % 5 == 0;
        mock_fail_ioctl(n, as_errno ? EIO : 0, as_errno ? 0 : NV_ERR_INVALID_ARGUMENT);
        d = hcq_device_open("NV:0");
        if (d) { /* an ioctl whose failure bring-up tolerates (UVM_MM_INITIALIZE) */
            T_OK(hcq_device_close(d));
            continue;
        }
        failed++;
        const char *msg = hcq_error_message();
        cr_assert_neq(hcq_error_status(), HCQ_OK);
        if (!strstr(msg, "no NV device")) { /* else the device count's own CARD_INFO */
            /* the backend's steps, or the device memory mem/ sets up after it */
            cr_assert(strstr(msg, "bring-up") || strstr(msg, "allocating"), "ioctl %llu: the message names no step: %s",
                      (unsigned long long)n, msg);
            /* (escapes without a status field fail with EIO either way) */
            cr_assert(strstr(msg, "EIO") || (!as_errno && strstr(msg, "NV_ERR_INVALID_ARGUMENT")),
                      "ioctl %llu: the message lacks the driver's answer: %s", (unsigned long long)n, msg);
        }
        cr_assert_eq(mock_nv_live_objects(), 0, "ioctl %llu: %u RM objects left after: %s", (unsigned long long)n,
                     mock_nv_live_objects(), msg);
        cr_assert_eq(vram_used(0), 0, "ioctl %llu: video memory left allocated", (unsigned long long)n);
    }
    /* tolerated: UVM_MM_INITIALIZE, the floorsweeping masks (GPC, then the
     * TPCs of H100's 8 GPCs), whose refusal leaves the die's SM count, and
     * the frees of what the self-test used (its program and memory: a
     * failed free is logged, the addresses stay reserved) */
    cr_assert_geq(failed, n_open - 16, "%u of %llu failures were fatal", failed, (unsigned long long)n_open);
    T_OK(mock_configure(""));
    d = open_nv("NV:0");
    T_OK(hcq_device_close(d));
    cr_assert_eq(mock_nv_live_objects(), 0);
}

static void run_add1(hcq_device *d)
{
    enum { N = 300 };
    hcq_program *p = t_load(d, t_k_add1());
    uint32_t host[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3;
    hcq_buffer *b = t_buffer_from(d, host, sizeof host);
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_u32(N)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d((N + 63) / 64, 64)));
    uint32_t out[N];
    t_read(b, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i * 3 + 1, "element %d", i);
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_program_free(p));
}

Test(nv_mock, driver_versions_within_and_outside_the_supported_range)
{
    /* 570 takes the smaller vaspace and scheduling structs: the mock checks */
    T_OK(mock_configure("nv_driver=570.86.16"));
    hcq_device *d = open_nv("NV:0");
    cr_assert_str_eq(hcq_device_get_props(d)->driver_version, "570.86.16");
    run_add1(d);
    T_OK(hcq_device_close(d));
    const char *bad[] = {"535.104.05", "610.43.03"};
    for (int i = 0; i < 2; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "nv_driver=%s", bad[i]);
        T_OK(mock_configure(cfg));
        cr_assert_null(hcq_device_open("NV:0"));
        cr_assert_eq(hcq_error_status(), HCQ_ENOTSUP, "%s", hcq_error_message());
        T_MSG_HAS(bad[i]);
        T_MSG_HAS("570.x to 589.x");
        cr_assert_eq(mock_nv_live_objects(), 0);
    }
}

Test(nv_mock, models_report_their_arch_and_run_kernels)
{
    const struct {
        const char *cfg, *arch;
        uint32_t sms;
    } m[] = {{"nv=H100", "sm_90", 132}, {"nv=A100", "sm_80", 108}, {"nv=RTX4090", "sm_89", 128},
             {"nv=RTX3090", "sm_86", 82}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(m); i++) {
        T_OK(mock_configure(m[i].cfg));
        hcq_device *d = open_nv("NV:0");
        const hcq_device_props *pr = hcq_device_get_props(d);
        cr_assert_str_eq(pr->arch, m[i].arch);
        /* real cubins where clang and ptxas are (run on the SASS executor where nvdisasm is, else as their
         * host twins), else kernel IR */
        char why[256], target[32];
        bool twins = cc_twin_available(m[i].arch, why, sizeof why), isa = twins && cc_isa_on(m[i].arch, why, sizeof why);
        snprintf(target, sizeof target, "%s%s", twins ? "" : "mock-", m[i].arch);
        cr_assert_str_eq(pr->target, target);
        cr_assert(strstr(pr->shader, isa ? "SASS executor" : twins ? "host twins" : "kernel IR"), "%s", pr->shader);
        cr_assert_eq(pr->compute_units, m[i].sms);
        cr_assert(pr->is_mock);
        cr_assert_lt(pr->fixed_memory_bytes, 128ull << 20, "fixed memory %llu", (unsigned long long)pr->fixed_memory_bytes);
        run_add1(d); /* QMD V04 on Hopper, V03 on the others */
        T_OK(hcq_device_close(d));
    }
}

/* ** raw RM calls, to see what the driver accepts */
typedef struct raw {
    int ctl, dev;
    uint32_t client, device;
} raw;

static uint32_t rm_alloc(raw *r, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *h)
{
    nv_rm_alloc a = {.hRoot = r->client, .hObjectParent = parent, .hClass = cls,
                     .pAllocParms = (uint64_t)(uintptr_t)params, .paramsSize = size};
    cr_assert_eq(sys_ioctl(r->ctl, NV_IOCTL_RM_ALLOC, &a), 0);
    if (h) *h = a.hObjectNew;
    return a.status;
}

static void raw_open(raw *r)
{
    r->ctl = sys_open("/dev/nvidiactl", O_RDWR);
    r->dev = sys_open("/dev/nvidia0", O_RDWR);
    cr_assert(r->ctl >= 0 && r->dev >= 0);
    nv_register_fd reg = {r->ctl};
    cr_assert_eq(sys_ioctl(r->dev, NV_IOCTL_REGISTER_FD, &reg), 0);
    nv_rm_alloc a = {.hClass = NV01_ROOT_CLIENT};
    cr_assert_eq(sys_ioctl(r->ctl, NV_IOCTL_RM_ALLOC, &a), 0);
    cr_assert_eq(a.status, NV_OK);
    r->client = a.hObjectNew;
    nv_device_alloc da = {.deviceId = 0, .hClientShare = r->client};
    cr_assert_eq(rm_alloc(r, r->client, NV01_DEVICE_0, &da, sizeof da, &r->device), NV_OK);
}

static void raw_close(raw *r)
{
    sys_close(r->dev);
    sys_close(r->ctl); /* RM frees the fd's clients */
    cr_assert_eq(mock_nv_live_objects(), 0);
}

Test(nv_mock, each_model_accepts_only_its_classes_and_layouts)
{
    raw r;
    raw_open(&r);
    /* compute classes live on a channel (the parent is checked first);
     * an H100 has Hopper's usermode class, an A100 not */
    cr_assert_eq(rm_alloc(&r, r.device, ADA_COMPUTE_A, NULL, 0, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    cr_assert_eq(rm_alloc(&r, r.device, HOPPER_COMPUTE_A, NULL, 0, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    uint32_t sub = 0;
    cr_assert_eq(rm_alloc(&r, r.device, NV20_SUBDEVICE_0, NULL, 0, &sub), NV_OK);
    cr_assert_eq(rm_alloc(&r, sub, HOPPER_USERMODE_A, NULL, 0, NULL), NV_OK);
    /* RM copies the vaspace struct's 580 size whatever paramsSize says;
     * a required struct that is missing, a control of the wrong size */
    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED};
    cr_assert_eq(rm_alloc(&r, r.device, FERMI_VASPACE_A, NULL, sizeof va, NULL), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(rm_alloc(&r, r.device, FERMI_VASPACE_A, &va, 48, NULL), NV_OK);
    cr_assert_eq(rm_alloc(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, NULL), NV_OK);
    nv_classlist cl = {0};
    nv_rm_control c = {.hClient = r.client, .hObject = r.device, .cmd = NV0080_CTRL_CMD_GPU_GET_CLASSLIST,
                       .params = (uint64_t)(uintptr_t)&cl, .paramsSize = sizeof cl - 4};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_CONTROL, &c), 0);
    cr_assert_eq(c.status, NV_ERR_INVALID_ARGUMENT);
    /* escapes with the wrong struct size (RM_ALLOC takes NVOS21 or NVOS64:
     * 32 or 48 bytes), or on the wrong fd, are EINVAL */
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOWR(NV_ESC_RM_ALLOC, 40), &c), -EINVAL);
    nv_rm_alloc_memory am = {0};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_ALLOC_MEMORY, &am), -EINVAL);
    raw_close(&r);

    T_OK(mock_configure("nv=A100"));
    raw_open(&r);
    cr_assert_eq(rm_alloc(&r, r.device, NV20_SUBDEVICE_0, NULL, 0, &sub), NV_OK);
    cr_assert_eq(rm_alloc(&r, sub, HOPPER_USERMODE_A, NULL, 0, NULL), NV_ERR_NOT_SUPPORTED);
    cr_assert_eq(rm_alloc(&r, sub, AMPERE_USERMODE_A, NULL, 0, NULL), NV_OK);
    raw_close(&r);
}

Test(nv_mock, two_gpus_copy_between_them_on_both_timelines)
{
    T_OK(mock_configure("nv=H100x2"));
    hcq_device *d0 = open_nv("NV:0"), *d1 = open_nv("NV:1");
    enum { N = 4096 };
    hcq_program *p0 = t_load(d0, t_k_add1()), *p1 = t_load(d1, t_k_add1());
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 7;
    hcq_buffer *b0 = t_buffer_from(d0, host, sizeof host);
    hcq_buffer *b1 = T_NONNULL(hcq_buffer_alloc(d1, sizeof host, HCQ_MEM_DEVICE));
    cr_assert_neq(hcq_buffer_va(b0), hcq_buffer_va(b1), "one VA allocator for the process");
    uint64_t t0 = hcq_device_timeline_value(d0), t1 = hcq_device_timeline_value(d1);
    /* the copy must wait for the launch on GPU 0 and come before the one on GPU 1 */
    hcq_arg a0[2] = {hcq_arg_buffer(b0), hcq_arg_u32(N)}, a1[2] = {hcq_arg_buffer(b1), hcq_arg_u32(N)};
    T_OK(hcq_launch(p0, a0, 2, hcq_dims_1d(N / 64, 64)));
    T_OK(hcq_buffer_copy(b1, 0, b0, 0, sizeof host));
    T_OK(hcq_launch(p1, a1, 2, hcq_dims_1d(N / 64, 64)));
    t_read(b1, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], (uint32_t)i * 7 + 2, "element %d", i);
    cr_assert_gt(hcq_device_timeline_value(d0), t0);
    cr_assert_gt(hcq_device_timeline_value(d1), t1);
    T_OK(hcq_device_close(d0));
    T_OK(hcq_device_close(d1));
    cr_assert_eq(mock_nv_live_objects(), 0);
}

Test(nv_mock, mmu_fault_names_the_address_and_the_kernel)
{
    hcq_device *d = open_nv("NV:0");
    hcq_program *p = t_load(d, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("MMU fault");
    T_MSG_HAS("0xdead0000");
    T_MSG_HAS("add1");
    T_MSG_HAS("compute channel");
    T_OK(hcq_device_close(d));

    /* a copy engine fault names its channel; RM records only GR faults
     * for the debugger (kern_gmmu_gv100.c), so the address is the kernel
     * log's */
    d = open_nv("NV:0");
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 4096, HCQ_MEM_DEVICE));
    hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COPY));
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
    T_OK(hcq_queue_copy(q, HCQ_IMM(0xbad000ull), HCQ_IMM(hcq_buffer_va(b)), HCQ_IMM(64)));
    T_OK(hcq_queue_signal(q, s, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    T_FAILS(hcq_signal_wait(s, 1, 0), HCQ_EFAULT);
    T_MSG_HAS("copy channel");
    T_MSG_HAS("kernel log");
    T_OK(hcq_device_close(d));
}

Test(nv_mock, a_hung_engine_makes_bringup_time_out_with_positions)
{
    setenv("HCQ_TIMEOUT_MS", "200", 1);
    base_env_reload();
    T_OK(mock_configure("hang=nv0.copy"));
    cr_assert_null(hcq_device_open("NV:0"));
    cr_assert_eq(hcq_error_status(), HCQ_ETIMEDOUT, "%s", hcq_error_message());
    T_MSG_HAS("copy channel");
    T_MSG_HAS("rptr 0, wptr 1");
    cr_assert_eq(mock_nv_live_objects(), 0);
}

Test(nv_mock, paused_engines_take_no_work_until_resumed)
{
    hcq_device *d = open_nv("NV:0");
    hcq_program *p = t_load(d, t_k_inc());
    uint32_t zero = 0, out = 0;
    hcq_buffer *b = t_buffer_from(d, &zero, 4);
    T_OK(hcq_device_synchronize(d));
    mock_nv_pause(0, true);
    hcq_arg a = hcq_arg_buffer(b);
    for (int i = 0; i < 10; i++) T_OK(hcq_launch(p, &a, 1, hcq_dims_1d(1, 1)));
    T_FAILS(hcq_signal_wait(hcq_device_timeline(d), hcq_device_timeline_value(d), 50 * 1000 * 1000), HCQ_ETIMEDOUT);
    mock_nv_pause(0, false);
    T_OK(hcq_device_synchronize(d));
    t_read(b, &out, 4);
    cr_assert_eq(out, 10);
    T_OK(hcq_device_close(d));
}

Test(nv_mock, video_memory_runs_out_as_the_driver_says)
{
    T_OK(mock_configure("vram=64M"));
    hcq_device *d = open_nv("NV:0");
    hcq_buffer *a = T_NONNULL(hcq_buffer_alloc(d, 40 << 20, HCQ_MEM_DEVICE));
    cr_assert_null(hcq_buffer_alloc(d, 40 << 20, HCQ_MEM_DEVICE));
    cr_assert_eq(hcq_error_status(), HCQ_ENOMEM, "%s", hcq_error_message());
    T_MSG_HAS("NV_ERR_NO_MEMORY");
    T_OK(hcq_buffer_free(a));
    hcq_buffer *again = T_NONNULL(hcq_buffer_alloc(d, 40 << 20, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_free(again));
    T_OK(hcq_device_close(d));
    cr_assert_eq(vram_used(0), 0);
}

static unsigned count_dumps(const char *dir, const char *engine)
{
    DIR *dd = opendir(dir);
    unsigned n = 0;
    for (struct dirent *e; dd && (e = readdir(dd));)
        if (strstr(e->d_name, engine)) n++;
    if (dd) closedir(dd);
    return n;
}

Test(nv_mock, dumps_every_executed_pushbuffer)
{
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-nv-dump");
    setenv("HCQ_MOCK_DUMP", dir, 1);
    base_env_reload();
    T_OK(mock_configure(""));
    hcq_device *d = open_nv("NV:0");
    run_add1(d);
    T_OK(hcq_device_close(d));
    cr_assert_gt(count_dumps(dir, "nv0.compute"), 1);
    cr_assert_gt(count_dumps(dir, "nv0.copy"), 1);
    char cmd[T_TMP_PATH + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(nv_mock, mock_cubins_are_shaped_like_real_ones)
{
    hcq_kernel *k = t_k_vadd();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "mock-sm_90", &b));
    nv_cubin c;
    T_OK(nv_cubin_parse(b->data, b->size, "test", NULL, &c));
    cr_assert_str_eq(c.name, "vadd");
    cr_assert_eq(c.e.machine, EM_CUDA);
    cr_assert_eq(c.sm, 90);
    cr_assert(c.have_cbank);
    cr_assert_eq(c.param_base, 0x210);
    hcq_param_info want[4];
    uint32_t kb = hcq_kernel_param_layout(k, want);
    cr_assert_eq(c.nparams, 4);
    cr_assert_eq(c.param_bytes, kb);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(c.params[i].offset, want[i].offset, "param %d", i);
        cr_assert_eq(c.params[i].size, want[i].size, "param %d", i);
    }
    cr_assert_eq(c.cbuf0_bytes, 0x210 + kb);
    cr_assert_eq(c.regs, 32);
    size_t blob = 0;
    T_OK(ir_blob_size(c.text, &blob));
    cr_assert_eq(blob, c.text_bytes);
    nv_cubin_free(&c);
    hcq_binary_free(b);
    T_OK(hcq_compile(k, "mock-sm_80", &b));
    T_OK(nv_cubin_parse(b->data, b->size, "test", NULL, &c));
    cr_assert_eq(c.sm, 80);
    cr_assert_eq(c.param_base, 0x160);
    nv_cubin_free(&c);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(nv_mock, programs_for_another_arch_are_refused_by_name)
{
    hcq_device *d = open_nv("NV:0");
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "mock-sm_80", &b)); /* SASS of another major version */
    cr_assert_null(hcq_program_load(d, b->data, b->size));
    cr_assert_eq(hcq_error_status(), HCQ_EFORMAT);
    T_MSG_HAS("sm_80");
    T_MSG_HAS(hcq_device_get_props(d)->target);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    T_OK(hcq_device_close(d));
}
