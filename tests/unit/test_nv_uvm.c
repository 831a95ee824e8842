/* The NV mock's UVM (/dev/nvidia-uvm) against UVM's own handlers
 * (open-gpu-kernel-modules 580.95.05 kernel-open/nvidia-uvm, the version
 * the mock reports) and what RM makes of them, one test per handler: what
 * each checks and answers. Expectations come from those sources, named at
 * each test, not from the backend. docs/mock-interfaces.md lists each
 * command with its source and the test here. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"
#include "hcqtest.h"
#include "nv_raw.h"

static void setup(void)
{
    sys_set(mock_sys());
    T_OK(mock_configure(""));
}
TestSuite(nv_uvm, .init = setup, .timeout = 120);

/* ** UVM's first commands (kernel-open/nvidia-uvm/uvm.c uvm_api_initialize,
 * uvm_api_mm_initialize, __UVM_ROUTE_CMD_*; uvm_fd_type.c; uvm_test.c):
 * UVM_INITIALIZE again with the same flags is fine, with others not; a
 * command before it is NV_ERR_ILLEGAL_ACTION; the mm file names a UVM
 * file with a va_space, once; a command UVM lacks is ENOSYS */
Test(nv_uvm, uvm_initialize_and_mm_initialize_as_uvm_answers)
{
    int u = sys_open("/dev/nvidia-uvm", O_RDWR), mm = sys_open("/dev/nvidia-uvm", O_RDWR),
        ctl = sys_open("/dev/nvidiactl", O_RDWR);
    cr_assert(u >= 0 && mm >= 0 && ctl >= 0);
    nv_uvm_create_external_range er = {.base = 1ull << 40, .length = 1 << 20};
    cr_assert_eq(sys_ioctl(u, NV_UVM_CREATE_EXTERNAL_RANGE, &er), 0);
    cr_assert_eq(er.rmStatus, NV_ERR_ILLEGAL_ACTION);
    nv_uvm_initialize in = {.flags = 0};
    cr_assert_eq(sys_ioctl(u, NV_UVM_INITIALIZE, &in), 0);
    cr_assert_eq(in.rmStatus, NV_OK);
    cr_assert_eq(sys_ioctl(u, NV_UVM_INITIALIZE, &in), 0);
    cr_assert_eq(in.rmStatus, NV_OK, "again with the same flags");
    in.flags = 1;
    cr_assert_eq(sys_ioctl(u, NV_UVM_INITIALIZE, &in), 0);
    cr_assert_eq(in.rmStatus, NV_ERR_INVALID_ARGUMENT, "with other flags");
    nv_uvm_mm_initialize mi = {.uvmFd = ctl};
    cr_assert_eq(sys_ioctl(mm, NV_UVM_MM_INITIALIZE, &mi), 0);
    cr_assert_eq(mi.rmStatus, NV_ERR_INVALID_ARGUMENT, "not a UVM file");
    mi.uvmFd = u;
    cr_assert_eq(sys_ioctl(mm, NV_UVM_MM_INITIALIZE, &mi), 0);
    cr_assert_eq(mi.rmStatus, NV_OK);
    int mm2 = sys_open("/dev/nvidia-uvm", O_RDWR);
    cr_assert_eq(sys_ioctl(mm2, NV_UVM_MM_INITIALIZE, &mi), 0);
    cr_assert_eq(mi.rmStatus, NV_ERR_INVALID_STATE, "the va_space's mm is kept already");
    in.flags = 0;
    cr_assert_eq(sys_ioctl(mm, NV_UVM_INITIALIZE, &in), 0);
    cr_assert_eq(in.rmStatus, NV_ERR_INVALID_ARGUMENT, "an mm file is not a va_space");
    cr_assert_eq(sys_ioctl(u, 0x7777, &in), -ENOSYS);
    sys_close(mm2);
    sys_close(mm);
    sys_close(u);
    sys_close(ctl);
}

/* a raw UVM va space of our own with raw's GPU registered on it */
static int uvm_open_registered(raw *r, uint8_t uuid[16])
{
    int u = sys_open("/dev/nvidia-uvm", O_RDWR);
    cr_assert(u >= 0);
    nv_uvm_initialize in = {0};
    cr_assert_eq(sys_ioctl(u, NV_UVM_INITIALIZE, &in), 0);
    cr_assert_eq(in.rmStatus, NV_OK);
    nv_gid_info gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY};
    cr_assert_eq(ctrl(r, r->subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid), NV_OK);
    memcpy(uuid, gid.data, 16);
    nv_uvm_register_gpu rg = {.rmCtrlFd = -1};
    memcpy(rg.gpu_uuid, uuid, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_GPU, &rg), 0);
    cr_assert_eq(rg.rmStatus, NV_OK);
    return u;
}

/* ** UVM_REGISTER_GPU_VASPACE, UVM_REGISTER_CHANNEL / UNREGISTER_CHANNEL
 * (uvm_gpu.c, uvm_va_space.c, uvm_user_channel.c uvm_register_channel,
 * uvm_unregister_channel) and what RM makes of them: a context share on a
 * vaspace UVM owns only after UVM set its page directory
 * (kernel_ctxshare.c kctxshareInitCommon_IMPL), a group scheduled only
 * once each channel on such a vaspace is registered (kernel_channel_group_api.c
 * kchangrpapiCtrlCmdGpFifoSchedule_IMPL, kernel_channel.c
 * kchannelIsSchedulable_IMPL). rmCtrlFd is not looked at (Bug 1624521 in
 * UVM's sources): -1 works. */
Test(nv_uvm, uvm_binds_vaspaces_and_channels_as_rm_requires)
{
    raw r;
    raw_open(&r);
    uint8_t uuid[16];
    int u = uvm_open_registered(&r, uuid);
    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED};
    uint32_t vs = 0, tsg = 0, share = 0, chan = 0;
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &vs), NV_OK);
    nv_tsg_alloc ta = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, &tsg), NV_OK);
    nv_ctxshare_alloc cs = {.hVASpace = vs, .flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_INVALID_STATE);
    /* a GPU once a va space (uvm_va_space_register_gpu: NV_ERR_INVALID_DEVICE) */
    nv_uvm_register_gpu rg = {.rmCtrlFd = -1};
    memcpy(rg.gpu_uuid, uuid, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_GPU, &rg), 0);
    cr_assert_eq(rg.rmStatus, NV_ERR_INVALID_DEVICE);
    /* the vaspace RM dups for UVM (nv_gpu_ops.c nvGpuOpsDupAddressSpace):
     * there, a vaspace, one RM lets UVM own; one GPU va space a GPU
     * (uvm_va_space.c check_gpu_va_space) */
    uint32_t plain = 0;
    nv_vaspace_alloc pva = {0};
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &pva, sizeof pva, &plain), NV_OK);
    nv_uvm_register_gpu_vaspace rv = {.rmCtrlFd = -1, .hClient = r.client, .hVaSpace = 0xbad0bad0};
    memcpy(rv.gpuUuid, uuid, 16);
    uint32_t want[][2] = {{0xbad0bad0, NV_ERR_OBJECT_NOT_FOUND},
                          {0, NV_ERR_INVALID_OBJECT}, /* the subdevice */
                          {0, NV_ERR_INVALID_FLAGS},  /* plain */
                          {0, NV_OK},                 /* vs */
                          {0, NV_ERR_INVALID_DEVICE}};
    want[1][0] = r.subdevice, want[2][0] = plain, want[3][0] = vs, want[4][0] = vs;
    for (size_t i = 0; i < BASE_ARRAY_LEN(want); i++) {
        rv.hVaSpace = want[i][0];
        cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_GPU_VASPACE, &rv), 0);
        cr_assert_eq(rv.rmStatus, want[i][1], "case %zu: %s", i, nv_status_name(rv.rmStatus));
    }
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &share), NV_OK);
    nv_channel_alloc ca = chan_params(&r, share);
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &ca, sizeof ca, &chan), NV_OK);
    nv_uvm_register_channel rc = {.rmCtrlFd = -1, .hClient = r.client, .hChannel = chan, .base = 1ull << 41,
                                  .length = 1 << 20};
    memcpy(rc.gpuUuid, uuid, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_CHANNEL, &rc), 0);
    cr_assert_eq(rc.rmStatus, NV_ERR_INVALID_CHANNEL, "no engine object: no context for UVM to retain");
    cr_assert_eq(alloc_p(&r, chan, HOPPER_COMPUTE_A, NULL, 0, NULL), NV_OK);
    nv_gpfifo_schedule sched = {.bEnable = 1};
    cr_assert_eq(ctrl(&r, tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sched, sizeof sched), NV_ERR_INVALID_STATE,
                 "a channel on a UVM vaspace UVM does not know");
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_CHANNEL, &rc), 0);
    cr_assert_eq(rc.rmStatus, NV_OK);
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_CHANNEL, &rc), 0);
    cr_assert_eq(rc.rmStatus, NV_ERR_INVALID_CHANNEL, "registered already");
    cr_assert_eq(ctrl(&r, tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sched, sizeof sched), NV_OK);
    nv_uvm_unregister_channel uc = {.hClient = r.client, .hChannel = chan};
    memcpy(uc.gpuUuid, uuid, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_UNREGISTER_CHANNEL, &uc), 0);
    cr_assert_eq(uc.rmStatus, NV_OK);
    cr_assert_eq(sys_ioctl(u, NV_UVM_UNREGISTER_CHANNEL, &uc), 0);
    cr_assert_eq(uc.rmStatus, NV_ERR_INVALID_CHANNEL);
    sys_close(u);
    raw_close(&r);
}

/* ** UVM_MAP_EXTERNAL_ALLOCATION in uvm_api_map_external_allocation's
 * order (uvm_map_external.c): the range (4K-aligned, not 0, not empty:
 * NV_ERR_INVALID_ADDRESS), the attribute count (NV_ERR_INVALID_ARGUMENT),
 * inside one external range (NV_ERR_INVALID_ADDRESS), then per GPU the
 * mapping, caching and kind types (uvm_api_*_type_invalid:
 * NV_ERR_INVALID_ARGUMENT) and the GPU; mapping over the GPU's own mapping
 * replaces it (uvm_map_external_allocation_on_gpu unmaps the range
 * first) */
Test(nv_uvm, uvm_external_ranges_and_mappings_in_uvms_order)
{
    raw r;
    raw_open(&r);
    uint8_t uuid[16];
    int u = uvm_open_registered(&r, uuid);
    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED};
    uint32_t vs = 0;
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &vs), NV_OK);
    nv_uvm_register_gpu_vaspace rv = {.rmCtrlFd = -1, .hClient = r.client, .hVaSpace = vs};
    memcpy(rv.gpuUuid, uuid, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_GPU_VASPACE, &rv), 0);
    cr_assert_eq(rv.rmStatus, NV_OK);
    /* UVM_CREATE_EXTERNAL_RANGE (uvm_create_external_range): 4K-aligned,
     * not at 0, not empty, not over another range */
    uint64_t base = mock_va_reserve(1 << 21);
    nv_uvm_create_external_range er = {.base = 0, .length = 1 << 21};
    cr_assert_eq(sys_ioctl(u, NV_UVM_CREATE_EXTERNAL_RANGE, &er), 0);
    cr_assert_eq(er.rmStatus, NV_ERR_INVALID_ADDRESS);
    er = (nv_uvm_create_external_range){.base = base, .length = 1 << 21};
    cr_assert_eq(sys_ioctl(u, NV_UVM_CREATE_EXTERNAL_RANGE, &er), 0);
    cr_assert_eq(er.rmStatus, NV_OK);
    cr_assert_eq(sys_ioctl(u, NV_UVM_CREATE_EXTERNAL_RANGE, &er), 0);
    cr_assert_eq(er.rmStatus, NV_ERR_UVM_ADDRESS_IN_USE);
    uint32_t m1 = vidmem(&r, 1 << 20), m2 = vidmem(&r, 1 << 20);
    static nv_uvm_map_external_allocation m; /* 9 KiB: not on the stack */
    memset(&m, 0, sizeof m);
    m = (nv_uvm_map_external_allocation){.base = base, .length = 1 << 20, .gpuAttributesCount = 1, .rmCtrlFd = -1,
                                         .hClient = r.client, .hMemory = m1};
    memcpy(m.perGpuAttributes[0].gpuUuid, uuid, 16);
    m.perGpuAttributes[0].gpuMappingType = NV_UVM_MAPPING_READ_WRITE_ATOMIC;
    nv_uvm_map_external_allocation *b = malloc(sizeof *b);
#define MAP_WITH(change, want)                                                                                        \
    do {                                                                                                              \
        *b = m;                                                                                                       \
        change;                                                                                                       \
        cr_assert_eq(sys_ioctl(u, NV_UVM_MAP_EXTERNAL_ALLOCATION, b), 0);                                             \
        cr_assert_eq(b->rmStatus, want, "%s: %s", #change, nv_status_name(b->rmStatus));                              \
    } while (0)
    MAP_WITH(b->base = 0, NV_ERR_INVALID_ADDRESS);
    MAP_WITH(b->length = 100, NV_ERR_INVALID_ADDRESS);
    MAP_WITH((b->length = 0, b->gpuAttributesCount = 0), NV_ERR_INVALID_ADDRESS); /* the range first */
    MAP_WITH(b->gpuAttributesCount = 0, NV_ERR_INVALID_ARGUMENT);
    MAP_WITH(b->base = base + (2 << 20), NV_ERR_INVALID_ADDRESS);
    MAP_WITH((b->base = base + (3 << 19), b->gpuAttributesCount = 0), NV_ERR_INVALID_ARGUMENT); /* the count second */
    MAP_WITH(b->base = base + (3 << 19), NV_ERR_INVALID_ADDRESS);                                /* past the range */
    MAP_WITH(b->perGpuAttributes[0].gpuMappingType = 4, NV_ERR_INVALID_ARGUMENT);
    MAP_WITH(b->perGpuAttributes[0].gpuCachingType = 3, NV_ERR_INVALID_ARGUMENT);
    MAP_WITH(b->perGpuAttributes[0].gpuElementBits = 3, NV_ERR_INVALID_ARGUMENT); /* no 24-bit elements */
    MAP_WITH(b->perGpuAttributes[0].gpuFormatType = 1, NV_ERR_INVALID_ARGUMENT);  /* block linear needs bits */
    MAP_WITH((b->perGpuAttributes[0].gpuFormatType = 1, b->perGpuAttributes[0].gpuElementBits = 4), NV_OK);
    MAP_WITH(b->perGpuAttributes[0].gpuUuid[0] ^= 1, NV_ERR_INVALID_DEVICE);
    MAP_WITH(b->hMemory = vs, NV_ERR_OBJECT_NOT_FOUND);
    MAP_WITH((void)0, NV_OK);
    MAP_WITH(b->hMemory = m2, NV_OK); /* replaces the GPU's mapping */
#undef MAP_WITH
    free(b);
    /* UVM_FREE (uvm_free): exactly a range the va space has */
    nv_uvm_free fr = {.base = base, .length = 1 << 20};
    cr_assert_eq(sys_ioctl(u, NV_UVM_FREE, &fr), 0);
    cr_assert_eq(fr.rmStatus, NV_ERR_INVALID_ADDRESS, "a part of a range");
    fr.length = 1 << 21;
    cr_assert_eq(sys_ioctl(u, NV_UVM_FREE, &fr), 0);
    cr_assert_eq(fr.rmStatus, NV_OK);
    cr_assert_eq(sys_ioctl(u, NV_UVM_FREE, &fr), 0);
    cr_assert_eq(fr.rmStatus, NV_ERR_INVALID_ADDRESS);
    sys_close(u);
    raw_close(&r);
}

/* the binary UUID of GPU index i: a device and subdevice of raw's client */
static void gpu_uuid(raw *r, uint32_t i, uint8_t uuid[16])
{
    nv_device_alloc da = {.deviceId = i};
    uint32_t dev = 0, sub = 0;
    cr_assert_eq(alloc_p(r, r->client, NV01_DEVICE_0, &da, sizeof da, &dev), NV_OK);
    cr_assert_eq(alloc_p(r, dev, NV20_SUBDEVICE_0, NULL, 0, &sub), NV_OK);
    nv_gid_info gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY};
    cr_assert_eq(ctrl(r, sub, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid), NV_OK);
    memcpy(uuid, gid.data, 16);
}

static uint32_t enable_peers(int u, const uint8_t a[16], const uint8_t b[16])
{
    nv_uvm_enable_peer_access e = {0};
    memcpy(e.gpuUuidA, a, 16);
    memcpy(e.gpuUuidB, b, 16);
    cr_assert_eq(sys_ioctl(u, NV_UVM_ENABLE_PEER_ACCESS, &e), 0);
    return e.rmStatus;
}

/* ** UVM_ENABLE_PEER_ACCESS (uvm_va_space.c uvm_api_enable_peer_access,
 * retain_pcie_peers_from_uuids; uvm_gpu.c uvm_gpu_retain_pcie_peer_access):
 * two distinct GPUs of the va space that are peers over PCIe, not enabled
 * already; everything else, NVLink pairs and GPUs with no peer path
 * included, is NV_ERR_INVALID_DEVICE */
Test(nv_uvm, uvm_enable_peer_access_only_for_pcie_peers)
{
    const char *cfg[] = {"nv=H100x2", "nv=H100x2,nv_peer=nvlink", "nv=H100x2,nv_peer=none"};
    for (int c = 0; c < 3; c++) {
        T_OK(mock_configure(cfg[c]));
        raw r;
        raw_open(&r);
        int dev1 = sys_open("/dev/nvidia1", O_RDWR);
        nv_register_fd reg = {r.ctl};
        cr_assert_eq(sys_ioctl(dev1, NV_IOCTL_REGISTER_FD, &reg), 0);
        uint8_t a[16], b[16];
        int u = uvm_open_registered(&r, a);
        gpu_uuid(&r, 1, b);
        cr_assert_eq(enable_peers(u, a, b), NV_ERR_INVALID_DEVICE, "GPU 1 is not registered");
        nv_uvm_register_gpu rg = {.rmCtrlFd = -1};
        memcpy(rg.gpu_uuid, b, 16);
        cr_assert_eq(sys_ioctl(u, NV_UVM_REGISTER_GPU, &rg), 0);
        cr_assert_eq(rg.rmStatus, NV_OK);
        cr_assert_eq(enable_peers(u, a, a), NV_ERR_INVALID_DEVICE, "the same GPU");
        cr_assert_eq(enable_peers(u, a, b), c == 0 ? NV_OK : NV_ERR_INVALID_DEVICE, "%s", cfg[c]);
        cr_assert_eq(enable_peers(u, b, a), NV_ERR_INVALID_DEVICE, "enabled already, or never");
        sys_close(u);
        sys_close(dev1);
        raw_close(&r);
    }
}
