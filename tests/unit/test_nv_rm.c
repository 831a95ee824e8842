/* The NV mock's RM against what RM's own handlers do (open-gpu-kernel-
 * modules 580.95.05, the version the mock reports), one test per handler
 * the mock implements: what each checks, what it copies back and what it
 * answers. The expectations are written from RM's sources (named at each
 * test), not from the backend: a client that is not hcq meets the same
 * answers. docs/mock-interfaces.md lists each interface with its source
 * and the test here that holds it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
TestSuite(nv_rm, .init = setup, .timeout = 120);

/* ** NV_ESC_RM_ALLOC: serverAllocApiCopyIn (src/nvidia/src/kernel/rmapi/
 * alloc_free.c) sizes the copy with rmapiParamsCopyInit from the class's
 * resource_list.h entry and never reads paramsSize; a NULL pointer for a
 * class whose parameters are RS_REQUIRED is NV_ERR_INVALID_ARGUMENT; the
 * class is looked up before anything else (NV_ERR_INVALID_CLASS); the
 * parameters go back only on success (serverAllocApiCopyOut). */
Test(nv_rm, alloc_copies_the_class_size_whatever_params_size_says)
{
    raw r;
    raw_open(&r);
    /* issue 21 item 1: paramsSize 0 (what a client that leaves it unset sends) */
    nv_device_alloc da = {.deviceId = 0, .hClientShare = r.client};
    uint32_t h = 0;
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, 0, &h), NV_OK);
    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED};
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, 0, NULL), NV_OK);
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, 7, NULL), NV_OK);
    /* RS_REQUIRED without a pointer; RS_OPTIONAL without one is fine */
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, NULL, sizeof va, NULL), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(alloc_p(&r, h, NV20_SUBDEVICE_0, NULL, 0, NULL), NV_OK);
    /* a class RM does not know at all, before the parent is even looked at */
    cr_assert_eq(alloc_p(&r, 0x1234, 0x7777, NULL, 0, NULL), NV_ERR_INVALID_CLASS);
    /* copied back on success only: the limit RM fills in */
    nv_memory_virtual_alloc v = {.offset = 1ull << 32};
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_VIRTUAL, &v, 0, NULL), NV_OK);
    cr_assert_eq(v.limit, (1ull << 49) - 1);
    nv_memory_virtual_alloc bad = {.offset = 1ull << 40, .limit = 1ull << 39};
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_VIRTUAL, &bad, sizeof bad, NULL), NV_ERR_INVALID_LIMIT);
    cr_assert_eq(bad.limit, 1ull << 39, "nothing is copied back on failure");
    raw_close(&r);
}

/* ** what every allocation meets before the class's constructor, in the
 * resource server's order (serverAllocResourceUnderLock in src/nvidia/src/
 * kernel/rmapi/alloc_free.c, then resservResourceFactory): a new handle
 * that is the client's, the parent (clientGetResourceRef), the parent's
 * class against resource_list.h's list, the new handle, a device's
 * parameters, the class against the parent's GPU (g_gpu_class_list.c);
 * then the constructors of the device (gpu/device.c deviceConstruct_IMPL,
 * device_share.c deviceSetClientShare_IMPL) and subdevice
 * (subdevice/subdevice.c subdeviceConstruct_IMPL). */
Test(nv_rm, allocations_meet_the_resource_servers_checks_in_order)
{
    raw r;
    raw_open(&r);
    nv_vaspace_alloc va = {0};
    uint32_t h = r.client;
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &h), NV_ERR_INVALID_OBJECT_PARENT,
                 "only the client class may take the client's handle");
    cr_assert_eq(alloc_p(&r, 0xbad0bad0, FERMI_VASPACE_A, &va, sizeof va, NULL), NV_ERR_OBJECT_NOT_FOUND);
    cr_assert_eq(alloc_p(&r, r.client, FERMI_VASPACE_A, &va, sizeof va, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    h = r.subdevice; /* the parent is checked before the handle */
    cr_assert_eq(alloc_p(&r, r.client, FERMI_VASPACE_A, &va, sizeof va, &h), NV_ERR_INVALID_OBJECT_PARENT);
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &h), NV_ERR_INSERT_DUPLICATE_NAME);
    /* compute classes live under a channel; one of another GPU is refused
     * after the parent check, by the factory */
    cr_assert_eq(alloc_p(&r, r.device, ADA_COMPUTE_A, NULL, 0, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    cr_assert_eq(alloc_p(&r, r.subdevice, HOPPER_USERMODE_A, NULL, 0, NULL), NV_OK);
    /* usermode (gpu/fifo/usermode_api.c usrmodeConstruct_IMPL): a
     * privileged page only through BAR1 and for a kernel client */
    uint8_t um[2] = {0, 1};
    cr_assert_eq(alloc_p(&r, r.subdevice, HOPPER_USERMODE_A, um, 2, NULL), NV_ERR_INVALID_PARAMETER);
    um[0] = 1;
    cr_assert_eq(alloc_p(&r, r.subdevice, HOPPER_USERMODE_A, um, 2, NULL), NV_ERR_INSUFFICIENT_PERMISSIONS);
    um[1] = 0;
    cr_assert_eq(alloc_p(&r, r.subdevice, HOPPER_USERMODE_A, um, 2, NULL), NV_OK);
    /* the device: the factory reads its parameters (NULL, or an instance
     * of NV_MAX_DEVICES or more: NV_ERR_INVALID_ARGUMENT); an instance RM
     * does not have is NV_ERR_INVALID_CLASS; a VA size when the flags ask
     * for one; the share client is kept, not checked */
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, NULL, 0, NULL), NV_ERR_INVALID_ARGUMENT);
    nv_device_alloc da = {.deviceId = 32};
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, sizeof da, NULL), NV_ERR_INVALID_ARGUMENT);
    da.deviceId = 5;
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, sizeof da, NULL), NV_ERR_INVALID_CLASS);
    da = (nv_device_alloc){.flags = NV_DEVICE_ALLOCATION_FLAGS_VASPACE_SIZE};
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, sizeof da, NULL), NV_ERR_INVALID_ARGUMENT);
    da = (nv_device_alloc){.flags = NV_DEVICE_ALLOCATION_FLAGS_RESTRICT_RESERVED_VALIMITS, .vaStartInternal = 8,
                           .vaLimitInternal = 4};
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, sizeof da, NULL), NV_ERR_INVALID_ARGUMENT);
    uint32_t dev2 = 0;
    da = (nv_device_alloc){.hClientShare = 0x12345678};
    cr_assert_eq(alloc_p(&r, r.client, NV01_DEVICE_0, &da, sizeof da, &dev2), NV_OK);
    /* the subdevice: an instance the device has (NV_ERR_INVALID_CLASS),
     * once per device (NV_ERR_INSUFFICIENT_RESOURCES) */
    nv_subdevice_alloc sa = {.subDeviceId = 1};
    cr_assert_eq(alloc_p(&r, dev2, NV20_SUBDEVICE_0, &sa, sizeof sa, NULL), NV_ERR_INVALID_CLASS);
    cr_assert_eq(alloc_p(&r, r.device, NV20_SUBDEVICE_0, NULL, 0, NULL), NV_ERR_INSUFFICIENT_RESOURCES);
    cr_assert_eq(alloc_p(&r, dev2, NV20_SUBDEVICE_0, NULL, 0, NULL), NV_OK);
    /* memory (mem_mgr/standard_mem.c stdmemValidateParams, video_mem.c
     * vidmemConstruct_IMPL, system_mem.c sysmemConstruct_IMPL): no internal
     * flags, a size, an owner RM does not keep for itself (any other value
     * will do), a range only with USE_BEGIN_END, the class's location */
    struct {
        nv_memory_alloc m;
        uint32_t cls, want;
    } mem[] = {
        {{.owner = 0x1234, .size = 4096}, NV01_MEMORY_LOCAL_USER, NV_OK},
        {{.owner = 0x1234, .size = 4096, .internalflags = 1}, NV01_MEMORY_LOCAL_USER, NV_ERR_INVALID_ARGUMENT},
        {{.owner = 0x1234, .size = 0}, NV01_MEMORY_LOCAL_USER, NV_ERR_INVALID_ARGUMENT},
        {{.owner = 0, .size = 4096}, NV01_MEMORY_LOCAL_USER, NV_ERR_INVALID_OWNER},
        {{.owner = 0xDEAF0001, .size = 4096}, NV01_MEMORY_LOCAL_USER, NV_ERR_INVALID_OWNER},
        {{.owner = 0x1234, .size = 4096, .rangeHi = 1 << 20}, NV01_MEMORY_LOCAL_USER, NV_ERR_INVALID_ARGUMENT},
        {{.owner = 0x1234, .size = 4096, .attr = NVOS32_ATTR_LOCATION_PCI}, NV01_MEMORY_LOCAL_USER,
         NV_ERR_INVALID_ARGUMENT},
        {{.owner = 0x1234, .size = 4096, .flags = NVOS32_ALLOC_FLAGS_VIRTUAL}, NV01_MEMORY_LOCAL_USER,
         NV_ERR_INVALID_ARGUMENT},
        {{.owner = 0x1234, .size = 4096}, NV01_MEMORY_SYSTEM, NV_ERR_INVALID_ARGUMENT}, /* video location */
        {{.owner = 0x1234, .size = 100, .attr = NVOS32_ATTR_LOCATION_PCI}, NV01_MEMORY_SYSTEM, NV_OK},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(mem); i++)
        cr_assert_eq(alloc_p(&r, r.device, mem[i].cls, &mem[i].m, sizeof mem[i].m, NULL), mem[i].want, "case %zu: %s",
                     i, nv_status_name(alloc_p(&r, r.device, mem[i].cls, &mem[i].m, sizeof mem[i].m, NULL)));
    /* host memory by RM_ALLOC (mem_mgr/os_desc_mem.c osdescConstruct_IMPL,
     * arch/nvalloc/unix/src/osmemdesc.c osCreateMemFromOsDescriptor): a
     * user's virtual address is not taken this way on Linux (the
     * RM_ALLOC_MEMORY escape turns it into a page array first) */
    static uint8_t page[4096] __attribute__((aligned(4096)));
    nv_os_desc_alloc od = {.descriptor = (uintptr_t)page, .limit = sizeof page - 1};
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, &od, sizeof od, NULL), NV_ERR_NOT_SUPPORTED);
    od.limit = 0;
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, &od, sizeof od, NULL),
                 NV_ERR_INVALID_PARAM_STRUCT);
    od = (nv_os_desc_alloc){.descriptor = (uintptr_t)page, .limit = 4095, .descriptorType = 3}; /* OS_PHYS_ADDR */
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, &od, sizeof od, NULL), NV_ERR_NOT_SUPPORTED);
    od.descriptorType = 9;
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, &od, sizeof od, NULL),
                 NV_ERR_INVALID_ARGUMENT);
    raw_close(&r);
}

/* ** the channel classes' constructors: the group (kernel_channel_group_api.c
 * kchangrpapiConstruct_IMPL: a valid engine, GR0 only without MIG, a vaspace
 * named that is one), the context share (kernel_ctxshare.c
 * kctxshareapiConstruct_IMPL, kctxshareInitCommon_IMPL: the vaspace, a
 * UVM-owned one only once UVM set its page directory, the subcontext flag
 * and the id written back) and the channel (kernel_channel.c
 * kchannelConstruct_IMPL: a vaspace only without a context share, a share
 * of this group, every channel of a group with one or none, the error
 * notifier optional, USERD memory of the client, arch/volta/
 * kernel_channel_gv100.c kchannelCreateUserdMemDescBc_GV100). */
Test(nv_rm, channel_groups_context_shares_and_channels_as_rm_builds_them)
{
    raw r;
    raw_open(&r);
    nv_tsg_alloc ta = {.engineType = 0};
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, NULL), NV_ERR_INVALID_ARGUMENT);
    ta.engineType = 2; /* GR1: MIG's */
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, NULL), NV_ERR_INVALID_ARGUMENT);
    ta.engineType = NV2080_ENGINE_TYPE_LAST;
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, NULL), NV_ERR_INVALID_ARGUMENT);
    ta = (nv_tsg_alloc){.engineType = NV2080_ENGINE_TYPE_GRAPHICS, .hVASpace = 0xbad0bad0};
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, NULL), NV_ERR_OBJECT_NOT_FOUND);
    ta.hVASpace = r.subdevice;
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, NULL), NV_ERR_INVALID_OBJECT_HANDLE);
    ta.hVASpace = 0;
    uint32_t tsg = 0, tsg2 = 0;
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, &tsg), NV_OK);
    cr_assert_eq(alloc_p(&r, r.device, KEPLER_CHANNEL_GROUP_A, &ta, sizeof ta, &tsg2), NV_OK);

    /* context shares: a vaspace UVM owns needs its page directory first */
    nv_vaspace_alloc va = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED};
    uint32_t uvm_vs = 0, vs = 0;
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &uvm_vs), NV_OK);
    va.flags = 0;
    cr_assert_eq(alloc_p(&r, r.device, FERMI_VASPACE_A, &va, sizeof va, &vs), NV_OK);
    nv_ctxshare_alloc cs = {.hVASpace = uvm_vs, .flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_INVALID_STATE);
    cs = (nv_ctxshare_alloc){.hVASpace = vs, .flags = 4};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_INVALID_ARGUMENT);
    cs.hVASpace = tsg2;
    cs.flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC;
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_INVALID_OBJECT_HANDLE);
    cr_assert_eq(alloc_p(&r, r.device, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    /* the subcontext ids: ASYNC the highest free, SYNC 0, SPECIFIED the
     * one asked for (taken: the id heap's NV_ERR_NO_MEMORY), PREFER_LOWER
     * the lowest above 0 with bit 31 saying it got one */
    uint32_t share = 0, share0 = 0;
    cs = (nv_ctxshare_alloc){.hVASpace = vs, .flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC, .subctxId = 77};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &share), NV_OK);
    cr_assert_eq(cs.subctxId, 63);
    cs = (nv_ctxshare_alloc){.flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_SYNC}; /* the device's vaspace */
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &share0), NV_OK);
    cr_assert_eq(cs.subctxId, 0);
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_NO_MEMORY);
    cs = (nv_ctxshare_alloc){.flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_SPECIFIED, .subctxId = 63};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_NO_MEMORY);
    cs.subctxId = 64;
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_ERR_NO_MEMORY);
    cs = (nv_ctxshare_alloc){.flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC_PREFER_LOWER};
    uint32_t share1 = 0;
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &share1), NV_OK);
    cr_assert_eq(cs.subctxId, NV_CTXSHARE_SUBCTXID_PREFER_LOWER_SUCCESS | 1);
    nv_rm_free fr = {.hRoot = r.client, .hObjectParent = tsg, .hObjectOld = share1};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &fr), 0);
    cs = (nv_ctxshare_alloc){.flags = NV_CTXSHARE_FLAGS_SUBCONTEXT_SPECIFIED, .subctxId = 1};
    cr_assert_eq(alloc_p(&r, tsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, NULL), NV_OK, "freed ids come back");

    /* channels */
    nv_channel_alloc ca = chan_params(&r, share);
    nv_channel_alloc bad = ca;
    bad.hVASpace = vs;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_INVALID_ARGUMENT);
    bad = ca;
    bad.hContextShare = 0xbad0bad0;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_OBJECT_NOT_FOUND);
    bad.hContextShare = vs;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_INVALID_OBJECT_HANDLE);
    cr_assert_eq(alloc_p(&r, tsg2, HOPPER_CHANNEL_GPFIFO_A, &ca, sizeof ca, NULL), NV_ERR_INVALID_OBJECT_PARENT,
                 "another group's context share");
    bad = ca;
    bad.hUserdMemory[0] = vs;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_OBJECT_NOT_FOUND);
    bad = ca;
    bad.hObjectError = vs;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_INVALID_STATE);
    bad = ca;
    bad.engineType = 9; /* COPY0: not the group's */
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &bad, sizeof bad, NULL), NV_ERR_INVALID_ARGUMENT);
    uint32_t chan = 0;
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &ca, sizeof ca, &chan), NV_OK);
    /* the H100's compute class; another GPU's is refused by the factory
     * (g_gpu_class_list.c), after the parent check */
    cr_assert_eq(alloc_p(&r, chan, ADA_COMPUTE_A, NULL, 0, NULL), NV_ERR_NOT_SUPPORTED);
    uint32_t compute = 0;
    cr_assert_eq(alloc_p(&r, chan, HOPPER_COMPUTE_A, NULL, 0, &compute), NV_OK);
    /* a group's channels all name a context share, or none do */
    nv_channel_alloc legacy = chan_params(&r, 0);
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &legacy, sizeof legacy, NULL), NV_ERR_INVALID_ARGUMENT);
    legacy.hObjectError = 0; /* no error notifier */
    cr_assert_eq(alloc_p(&r, tsg2, HOPPER_CHANNEL_GPFIFO_A, &legacy, sizeof legacy, NULL), NV_OK);
    nv_channel_alloc share_later = chan_params(&r, share);
    cr_assert_eq(alloc_p(&r, tsg2, HOPPER_CHANNEL_GPFIFO_A, &share_later, sizeof share_later, NULL),
                 NV_ERR_INVALID_ARGUMENT);

    /* GT200_DEBUGGER (gpu/gr/kernel_sm_debugger_session.c
     * ksmdbgssnConstruct_IMPL): the obsolete client field 0, the
     * application client (0: the caller), its object there, a graphics
     * object; READ_MMU_FAULT_INFO then reads that object's graphics
     * context (kernel_graphics_context.c kgrctxLookupMmuFaultInfo_IMPL) */
    uint32_t copy_chan = 0, copy_obj = 0, dbg = 0;
    nv_channel_alloc cc = chan_params(&r, share);
    cr_assert_eq(alloc_p(&r, tsg, HOPPER_CHANNEL_GPFIFO_A, &cc, sizeof cc, &copy_chan), NV_OK);
    cr_assert_eq(alloc_p(&r, copy_chan, HOPPER_DMA_COPY_A, NULL, 0, &copy_obj), NV_OK);
    nv_debugger_alloc da = {.hDebuggerClient_Obsolete = r.client, .hClass3dObject = copy_obj};
    cr_assert_eq(alloc_p(&r, r.device, GT200_DEBUGGER, &da, sizeof da, NULL), NV_ERR_INVALID_ARGUMENT);
    da = (nv_debugger_alloc){.hAppClient = 0xc1d0beef, .hClass3dObject = copy_obj};
    cr_assert_eq(alloc_p(&r, r.device, GT200_DEBUGGER, &da, sizeof da, NULL), NV_ERR_INVALID_CLIENT);
    da = (nv_debugger_alloc){.hClass3dObject = 0xbad0bad0};
    cr_assert_eq(alloc_p(&r, r.device, GT200_DEBUGGER, &da, sizeof da, NULL), NV_ERR_INVALID_OBJECT_PARENT);
    da.hClass3dObject = copy_obj;
    cr_assert_eq(alloc_p(&r, r.device, GT200_DEBUGGER, &da, sizeof da, NULL), NV_ERR_INVALID_OBJECT,
                 "a copy object is not a graphics object");
    da.hClass3dObject = compute;
    cr_assert_eq(alloc_p(&r, r.device, GT200_DEBUGGER, &da, sizeof da, &dbg), NV_OK);
    nv_mmu_fault_info fi = {.count = 9};
    cr_assert_eq(ctrl(&r, dbg, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, &fi, sizeof fi), NV_OK);
    cr_assert_eq(fi.count, 0, "no faults yet");
    raw_close(&r);
}

/* ** NV01_MEMORY_VIRTUAL (class/cl0070.h, resource_list.h: parent Device,
 * RS_REQUIRED) and NV_ESC_RM_MAP_MEMORY_DMA / UNMAP (escape.c, NVOS46,
 * NVOS47; serverInterMap_Prologue in src/nvidia/src/kernel/rmapi/
 * mapping.c): memory mapped into the range is the GPU's to reach, at the
 * address RM picks or a fixed one inside the range, and gone after the
 * unmap or the memory's free. */
Test(nv_rm, memory_virtual_and_map_memory_dma)
{
    raw r;
    raw_open(&r);
    mnv_gpu *g = mnv_gpu_by_index(0);
    nv_memory_virtual_alloc v = {0};
    uint32_t hv = 0;
    cr_assert_eq(alloc_p(&r, r.subdevice, NV01_MEMORY_VIRTUAL, &v, sizeof v, &hv), NV_ERR_INVALID_OBJECT_PARENT);
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_VIRTUAL, &v, sizeof v, &hv), NV_OK);
    uint32_t hm = vidmem(&r, 1 << 20);

    nv_rm_map_memory_dma m = {.hClient = r.client, .hDevice = r.device, .hDma = hv, .hMemory = hm, .length = 1 << 20};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &m), 0);
    cr_assert_eq(m.status, NV_OK);
    cr_assert_neq(m.dmaOffset, 0);
    cr_assert(mock_gpu_access(g->g, m.dmaOffset, 1 << 20, true, NULL, 0), "the GPU reaches the mapping");
    uint64_t at = m.dmaOffset;

    /* the checks: the escape on a GPU file, a length past the memory, an
     * hDevice that is not a device, an hDma that is not virtual memory */
    nv_rm_map_memory_dma bad = m;
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_MAP_MEMORY_DMA, &bad), -EINVAL);
    bad.length = (1 << 20) + 4096;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_LIMIT);
    bad = m;
    bad.hDevice = hm;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_OBJECT);
    bad = m;
    bad.hDma = hm;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_OBJECT_HANDLE);

    /* a fixed address must lie inside the virtual range */
    nv_memory_virtual_alloc small = {.offset = 1ull << 44, .limit = (1ull << 44) + (1 << 20) - 1};
    uint32_t hs = 0;
    cr_assert_eq(alloc_p(&r, r.device, NV01_MEMORY_VIRTUAL, &small, sizeof small, &hs), NV_OK);
    nv_rm_map_memory_dma fx = {.hClient = r.client, .hDevice = r.device, .hDma = hs, .hMemory = hm,
                               .length = 4096, .flags = NVOS46_FLAGS_DMA_OFFSET_FIXED, .dmaOffset = 1ull << 45};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &fx), 0);
    cr_assert_eq(fx.status, NV_ERR_INVALID_OFFSET);

    /* a read-only mapping refuses the GPU's writes */
    nv_rm_map_memory_dma ro = m;
    ro.flags = NVOS46_FLAGS_ACCESS_READ_ONLY;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY_DMA, &ro), 0);
    cr_assert_eq(ro.status, NV_OK);
    cr_assert(mock_gpu_access(g->g, ro.dmaOffset, 4096, false, NULL, 0));
    cr_assert_not(mock_gpu_access(g->g, ro.dmaOffset, 4096, true, NULL, 0));

    /* unmap: gone; a second unmap finds nothing */
    nv_rm_unmap_memory_dma u = {.hClient = r.client, .hDevice = r.device, .hDma = hv, .hMemory = hm, .dmaOffset = at};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_UNMAP_MEMORY_DMA, &u), 0);
    cr_assert_eq(u.status, NV_OK);
    cr_assert_not(mock_gpu_access(g->g, at, 4096, false, NULL, 0));
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_UNMAP_MEMORY_DMA, &u), 0);
    cr_assert_eq(u.status, NV_ERR_INVALID_OFFSET);

    /* freeing the memory takes its remaining mappings with it */
    nv_rm_free f = {.hRoot = r.client, .hObjectParent = r.device, .hObjectOld = hm};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_OK);
    cr_assert_not(mock_gpu_access(g->g, ro.dmaOffset, 4096, false, NULL, 0));
    raw_close(&r);
}

/* ** NV2080_CTRL_CMD_PERF_BOOST (ctrl2080perf.h; kern_perf_boost.c hands it
 * to GSP): CMD 1:0 and a duration of at most 3600 s or 0xffffffff; a
 * boosted GeForce part reports P0 where it would idle in P8 */
Test(nv_rm, perf_boost_holds_the_top_pstate_until_cleared)
{
    T_OK(mock_configure("nv=RTX4090"));
    raw r;
    raw_open(&r);
    nv_current_pstate ps = {0};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, &ps, sizeof ps), NV_OK);
    cr_assert_eq(ps.currPstate, 1u << 8, "an idle GeForce part is in P8");
    nv_perf_boost b = {.flags = 2, .duration = 4000};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b), NV_ERR_INVALID_ARGUMENT);
    b = (nv_perf_boost){.flags = 3, .duration = 10};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b - 4), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ctrl(&r, r.device, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b), NV_ERR_NOT_SUPPORTED);
    b = (nv_perf_boost){.flags = 2, .duration = NV_PERF_BOOST_DURATION_INFINITE};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b), NV_OK);
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, &ps, sizeof ps), NV_OK);
    cr_assert_eq(ps.currPstate, 1u, "boosted: P0");
    b = (nv_perf_boost){.flags = 0};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_BOOST, &b, sizeof b), NV_OK);
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, &ps, sizeof ps), NV_OK);
    cr_assert_eq(ps.currPstate, 1u << 8, "cleared: P8 again");
    raw_close(&r);
}

/* ** NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE (kern_mem_sys_ctrl.c
 * kmemsysFlushGpuCache): a full-cache write-back or FB flush is done; an
 * address-array flush RM answers NV_ERR_GENERIC; malformed ones are
 * NV_ERR_INVALID_ARGUMENT */
Test(nv_rm, fb_flush_gpu_cache_as_rm_answers_it)
{
    raw r;
    raw_open(&r);
    mnv_gpu *g = mnv_gpu_by_index(0);
    nv_fb_flush_gpu_cache *f = calloc(1, sizeof *f);
    uint32_t before = atomic_load(&g->cache_flushes);
    f->flags = NV_FB_FLUSH_WRITE_BACK | NV_FB_FLUSH_INVALIDATE | NV_FB_FLUSH_FULL_CACHE | NV_FB_FLUSH_FB;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, f, sizeof *f), NV_OK);
    f->flags = NV_FB_FLUSH_FB;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, f, sizeof *f), NV_OK);
    cr_assert_eq(atomic_load(&g->cache_flushes), before + 2);
    f->flags = NV_FB_FLUSH_WRITE_BACK | 3u; /* aperture 3 */
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, f, sizeof *f), NV_ERR_INVALID_ARGUMENT);
    f->flags = NV_FB_FLUSH_WRITE_BACK; /* an address array of no entries */
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, f, sizeof *f), NV_ERR_INVALID_ARGUMENT);
    f->addressArraySize = 1;
    f->memBlockSizeBytes = 4096;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE, f, sizeof *f), NV_ERR_GENERIC);
    free(f);
    raw_close(&r);
}

/* ** NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES (ctrl83dedebug.h; GSP
 * answers it): after a kernel faults, the hang report reads the SM's
 * exception (with the program counter) and the channel's MMU fault */
Test(nv_rm, read_all_sm_error_states_after_a_fault)
{
    hcq_device *d = T_NONNULL(hcq_device_open("NV:0"));
    nv_dev *nv = nv_of(d);
    nv_sm_error_states *e = calloc(1, sizeof *e);
    e->hTargetChannel = nv->ch[NV_CH_COMPUTE].hchannel;
    e->numSMsToRead = 4;
    const char *what = "test";
    T_OK(nv_control(nv->proc, nv->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, e, sizeof *e, what));
    cr_assert_eq(e->mmuFaultValid, 0);
    cr_assert_eq(e->smErrorStateArray[0].hwwWarpEsr, 0);
    /* a bad target channel, too many SMs */
    uint32_t st = 0;
    e->hTargetChannel = nv->hdebugger;
    T_OK(nv_control_status(nv->proc, nv->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, e, sizeof *e,
                           &st, what));
    cr_assert_eq(st, NV_ERR_INVALID_OBJECT_HANDLE);
    e->hTargetChannel = nv->ch[NV_CH_COMPUTE].hchannel;
    e->numSMsToRead = NV83DE_MAX_SMS_PER_CALL + 1;
    T_OK(nv_control_status(nv->proc, nv->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, e, sizeof *e,
                           &st, what));
    cr_assert_eq(st, NV_ERR_INVALID_ARGUMENT);

    hcq_program *p = t_load(d, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    e->numSMsToRead = 4;
    T_OK(nv_control(nv->proc, nv->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, e, sizeof *e, what));
    cr_assert_eq(e->mmuFaultValid, 1);
    cr_assert_neq(e->smErrorStateArray[0].hwwWarpEsr, 0);
    cr_assert_eq(e->smErrorStateArray[0].hwwWarpEsrPc64, p->launch_addr);
    free(e);
    T_OK(hcq_device_close(d));
}

/* ** the escapes themselves (src/nvidia/arch/nvalloc/unix/src/escape.c
 * RmIoctl; kernel-open/nvidia/nv.c nvidia_ioctl): each takes its struct's
 * size exactly (RM_ALLOC: NVOS21 or NVOS64) and only on the device files
 * NV_CTL_DEVICE_ONLY / NV_ACTUAL_DEVICE_ONLY allow; otherwise EINVAL */
Test(nv_rm, escapes_take_their_size_on_their_device_file)
{
    raw r;
    raw_open(&r);
    static const struct {
        uint32_t nr, size;
        bool ctl, gpu;
    } esc[] = {
        {0x2B, 32, true, false}, /* RM_ALLOC (NVOS21) */
        {0x2B, 48, true, false}, /* RM_ALLOC (NVOS64) */
        {0x2A, 32, true, false}, /* RM_CONTROL (NVOS54) */
        {0x29, 16, true, false}, /* RM_FREE (NVOS00) */
        {0x4E, 56, true, false}, /* RM_MAP_MEMORY (nvos33 with fd) */
        {0x57, 64, true, false}, /* RM_MAP_MEMORY_DMA (NVOS46) */
        {0x58, 48, true, false}, /* RM_UNMAP_MEMORY_DMA (NVOS47) */
        {0x27, 56, false, true}, /* RM_ALLOC_MEMORY (nvos02 with fd) */
    };
    uint8_t buf[64];
    for (size_t i = 0; i < BASE_ARRAY_LEN(esc); i++) {
        memset(buf, 0, sizeof buf);
        int on_ctl = sys_ioctl(r.ctl, NV_IOWR(esc[i].nr, esc[i].size), buf);
        memset(buf, 0, sizeof buf);
        int on_gpu = sys_ioctl(r.dev, NV_IOWR(esc[i].nr, esc[i].size), buf);
        cr_assert_eq(on_ctl, esc[i].ctl ? 0 : -EINVAL, "escape 0x%x on nvidiactl: %d", esc[i].nr, on_ctl);
        cr_assert_eq(on_gpu, esc[i].gpu ? 0 : -EINVAL, "escape 0x%x on nvidia0: %d", esc[i].nr, on_gpu);
        int fd = esc[i].ctl ? r.ctl : r.dev;
        cr_assert_eq(sys_ioctl(fd, NV_IOWR(esc[i].nr, esc[i].size - 8), buf), -EINVAL, "escape 0x%x short",
                     esc[i].nr);
    }
    /* NVOS64's status is at +40: an allocation through it works */
    nv_device_alloc da = {.deviceId = 0};
    nv_rm_alloc64 a64 = {.hRoot = r.client, .hObjectParent = r.client, .hClass = NV01_DEVICE_0,
                         .pAllocParms = (uint64_t)(uintptr_t)&da};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOWR(NV_ESC_RM_ALLOC, sizeof a64), &a64), 0);
    cr_assert_eq(a64.status, NV_OK);
    cr_assert_neq(a64.hObjectNew, 0);
    /* CARD_INFO: any multiple of the entry, on nvidiactl (nv.c) */
    nv_card_info ci[2];
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOWR(NV_ESC_CARD_INFO, sizeof ci), ci), 0);
    cr_assert(ci[0].valid && !ci[1].valid);
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOWR(NV_ESC_CARD_INFO, sizeof ci - 4), ci), -EINVAL);
    cr_assert_eq(sys_ioctl(r.dev, NV_IOWR(NV_ESC_CARD_INFO, sizeof ci), ci), -EINVAL);
    /* REGISTER_FD: once per file, naming a control file that has no link
     * of its own, never itself (escape.c NV_ESC_REGISTER_FD) */
    nv_register_fd reg = {r.ctl};
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_REGISTER_FD, &reg), -EINVAL, "registered already");
    int dev2 = sys_open("/dev/nvidia0", O_RDWR);
    reg.ctl_fd = r.dev;
    cr_assert_eq(sys_ioctl(dev2, NV_IOCTL_REGISTER_FD, &reg), -EINVAL, "not a control file");
    reg.ctl_fd = r.ctl;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_REGISTER_FD, &reg), -EINVAL, "itself");
    cr_assert_eq(sys_ioctl(dev2, NV_IOCTL_REGISTER_FD, &reg), 0);
    sys_close(dev2);
    /* an escape nvidia.ko does not have */
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOWR(0x99, 16), buf), -EINVAL);
    raw_close(&r);
}

/* ** NV_ESC_RM_FREE (alloc_free.c rmapiFreeWithSecInfo, rs_server.c
 * serverFreeResourceTree, rs_client.c clientGetResourceRef): an object
 * goes with its descendants; one that does not exist is
 * NV_ERR_OBJECT_NOT_FOUND; another file's client NV_ERR_INVALID_CLIENT;
 * the client's own handle frees the client */
Test(nv_rm, rm_free_as_the_resource_server_frees)
{
    raw r;
    raw_open(&r);
    uint32_t live = mock_nv_live_objects();
    nv_rm_free f = {.hRoot = r.client, .hObjectParent = r.client, .hObjectOld = 0x7777};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_ERR_OBJECT_NOT_FOUND);
    /* the device takes its subdevice with it */
    f.hObjectOld = r.device;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_OK);
    cr_assert_eq(mock_nv_live_objects(), live - 2);
    f.hObjectOld = r.subdevice;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_ERR_OBJECT_NOT_FOUND);
    /* a client this file did not make */
    int ctl2 = sys_open("/dev/nvidiactl", O_RDWR);
    f = (nv_rm_free){.hRoot = r.client, .hObjectOld = r.client};
    cr_assert_eq(sys_ioctl(ctl2, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_ERR_INVALID_CLIENT);
    sys_close(ctl2);
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_FREE, &f), 0);
    cr_assert_eq(f.status, NV_OK);
    cr_assert_eq(mock_nv_live_objects(), live - 3);
    raw_close(&r);
}

/* ** NV_ESC_RM_MAP_MEMORY (escape.c, mapping_cpu.c memMap_IMPL): an offset
 * at or past the end is NV_ERR_INVALID_BASE, a length of 0 or past the end
 * NV_ERR_INVALID_LIMIT; the mapping is then made by mmap of the fd named */
Test(nv_rm, rm_map_memory_checks_offset_and_length)
{
    raw r;
    raw_open(&r);
    uint32_t hm = vidmem(&r, 1 << 20);
    int fd = sys_open("/dev/nvidia0", O_RDWR);
    nv_register_fd reg = {r.ctl};
    cr_assert_eq(sys_ioctl(fd, NV_IOCTL_REGISTER_FD, &reg), 0);
    nv_rm_map_memory m = {.hClient = r.client, .hDevice = r.device, .hMemory = hm, .offset = 1 << 20,
                          .length = 4096, .fd = fd};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_ERR_INVALID_BASE);
    m.offset = 0;
    m.length = 0;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_ERR_INVALID_LIMIT);
    m.length = (1 << 20) + 4096;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_ERR_INVALID_LIMIT);
    m.length = 1 << 20;
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_MAP_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_OK);
    int err = 0;
    void *p = sys_mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &err);
    cr_assert_not_null(p, "mmap: %s", strerror(err));
    memset(p, 0x5a, 4096);
    sys_munmap(p, 1 << 20);
    sys_close(fd);
    raw_close(&r);
}

/* ** NV_ESC_RM_ALLOC_MEMORY of NV01_MEMORY_SYSTEM_OS_DESCRIPTOR (escape.c
 * RmAllocOsDescriptor, RmCreateOsDescriptor): PCI, not mapped by RM, a
 * known coherency (else NV_ERR_INVALID_FLAGS); a page-aligned address
 * (NV_ERR_NOT_SUPPORTED); a limit that does not wrap (NV_ERR_INVALID_LIMIT);
 * the size need not be whole pages */
Test(nv_rm, rm_alloc_memory_takes_host_pages_as_rm_does)
{
    raw r;
    raw_open(&r);
    void *host = NULL;
    cr_assert_eq(posix_memalign(&host, 4096, 3 * 4096), 0);
    nv_rm_alloc_memory m = {.hRoot = r.client, .hObjectParent = r.device, .hObjectNew = 0x4c000001,
                            .hClass = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, .flags = NVOS02_FLAGS_OS_DESCRIPTOR,
                            .pMemory = (uintptr_t)host, .limit = 3 * 4096 - 1 - 100, .fd = -1};
    nv_rm_alloc_memory bad = m;
    bad.flags = NVOS02_FLAGS_OS_DESCRIPTOR & ~(3u << 30); /* MAPPING_DEFAULT */
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_FLAGS);
    bad = m;
    bad.flags |= 2u << 8; /* LOCATION_VIDMEM */
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_FLAGS);
    bad = m;
    bad.pMemory += 64;
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_NOT_SUPPORTED);
    bad = m;
    bad.limit = ~0ull;
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &bad), 0);
    cr_assert_eq(bad.status, NV_ERR_INVALID_LIMIT);
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_OK, "a size that is not whole pages: %s", nv_status_name(m.status));
    cr_assert_eq(sys_ioctl(r.dev, NV_IOCTL_RM_ALLOC_MEMORY, &m), 0);
    cr_assert_eq(m.status, NV_ERR_INSERT_DUPLICATE_NAME);
    raw_close(&r);
    free(host);
}

/* ** NV_ESC_RM_CONTROL in rmControl's order (control.c; rs_resource.c
 * resControlLookup): the NULL command first, then the client, then the
 * parameters (both or neither; the control's own size for a control the
 * driver has: NV_ERR_INVALID_ARGUMENT), then the object, then whether its
 * class exports the control (NV_ERR_NOT_SUPPORTED); a failed control's
 * parameters are not copied back */
Test(nv_rm, controls_are_checked_in_rms_order)
{
    raw r;
    raw_open(&r);
    nv_classlist cl = {0};
    cr_assert_eq(ctrl(&r, 0x1234, 0x00800000, NULL, 0), NV_OK, "a NULL command, whatever the object");
    nv_rm_control c = {.hClient = 0x999, .hObject = r.device, .cmd = NV0080_CTRL_CMD_GPU_GET_CLASSLIST};
    cr_assert_eq(sys_ioctl(r.ctl, NV_IOCTL_RM_CONTROL, &c), 0);
    cr_assert_eq(c.status, NV_ERR_INVALID_CLIENT, "the client before the parameters");
    cr_assert_eq(ctrl(&r, 0x1234, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, 8), NV_ERR_INVALID_ARGUMENT,
                 "the size before the object");
    cr_assert_eq(ctrl(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, NULL, sizeof cl), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ctrl(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, 0), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ctrl(&r, 0x1234, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl), NV_ERR_INVALID_OBJECT_HANDLE);
    cr_assert_eq(ctrl(&r, r.subdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl), NV_ERR_NOT_SUPPORTED,
                 "a device control on a subdevice");
    cr_assert_eq(ctrl(&r, r.subdevice, 0x20801377, &cl, sizeof cl), NV_ERR_NOT_SUPPORTED, "a control RM lacks");
    /* not copied back on failure: a name string of another format */
    nv_name_string ns;
    memset(&ns, 0x11, sizeof ns);
    ns.gpuNameStringFlags = 7;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, &ns, sizeof ns), NV_ERR_INVALID_ARGUMENT);
    cr_assert_eq(ns.gpuNameString.ascii[0], 0x11);
    raw_close(&r);

    /* the driver's version decides sizes and what exists: 570 has the
     * 2-byte GPFIFO_SCHEDULE and no THERMAL_SYSTEM_EXECUTE_V2 */
    T_OK(mock_configure("nv_driver=570.86.16"));
    raw_open(&r);
    nv_thermal_execute *th = calloc(1, sizeof *th);
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, th, sizeof *th),
                 NV_ERR_NOT_SUPPORTED);
    free(th);
    raw_close(&r);
}

/* ** the controls' own handlers */
Test(nv_rm, control_handlers_answer_as_rm_does)
{
    raw r;
    raw_open(&r);
    /* NV0080_CTRL_CMD_GPU_GET_CLASSLIST (device_ctrl.c, gpu_resource_desc.c
     * gpuGetClassList): the count without a list; a list too short is
     * NV_ERR_INVALID_PARAM_STRUCT */
    nv_classlist cl = {0};
    cr_assert_eq(ctrl(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl), NV_OK);
    cr_assert_geq(cl.numClasses, 10);
    uint32_t list[64];
    uint32_t n = cl.numClasses;
    cl.classList = (uintptr_t)list;
    cl.numClasses = 2;
    cr_assert_eq(ctrl(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl), NV_ERR_INVALID_PARAM_STRUCT);
    cl.numClasses = n;
    cr_assert_eq(ctrl(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl), NV_OK);
    bool virt = false;
    for (uint32_t i = 0; i < n; i++) virt |= list[i] == NV01_MEMORY_VIRTUAL;
    cr_assert(virt, "NV01_MEMORY_VIRTUAL is listed");
    /* NV2080_CTRL_CMD_GPU_GET_GID_INFO (subdevice_ctrl_gpu_kernel.c, gpu.c
     * gpuGetGidInfo, gpu_uuid.c): binary, or the "GPU-" string with its NUL;
     * a type other than SHA1 is NV_ERR_INVALID_FLAGS */
    nv_gid_info gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid), NV_OK);
    cr_assert_eq(gid.length, 16);
    gid = (nv_gid_info){.flags = 0};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid), NV_OK);
    cr_assert_eq(gid.length, 41);
    cr_assert(!strncmp((char *)gid.data, "GPU-", 4) && strlen((char *)gid.data) == 40, "%s", gid.data);
    gid.flags = 4;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid), NV_ERR_INVALID_FLAGS);
    /* NV2080_CTRL_CMD_GR_GET_GPC_MASK / _TPC_MASK (kernel_graphics.c):
     * without MIG the route is not looked at; a GPC past the count reads 0 */
    nv_gr_gpc_mask gm = {.grRouteInfo = {.flags = 1, .route = 7}};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm), NV_OK);
    cr_assert_neq(gm.gpcMask, 0);
    nv_gr_tpc_mask tm = {.grRouteInfo = {.flags = 1}, .gpcId = 0};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_TPC_MASK, &tm, sizeof tm), NV_OK);
    cr_assert_neq(tm.tpcMask, 0);
    tm.gpcId = 99;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_TPC_MASK, &tm, sizeof tm), NV_OK);
    cr_assert_eq(tm.tpcMask, 0);
    /* NV2080_CTRL_CMD_GR_GET_INFO (kernel_graphics.c): the list required,
     * its size clamped to 0x3a, 0 refused, each index below 0x3a */
    nv_info_entry e[0x40];
    memset(e, 0, sizeof e);
    e[0].index = NV_GR_INFO_SM_VERSION;
    nv_gr_get_info gi = {.grInfoListSize = 0x40, .grInfoList = (uintptr_t)e};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi), NV_OK, "clamped, not refused");
    cr_assert_eq(e[0].data, 0x900);
    gi.grInfoListSize = 0;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi), NV_ERR_INVALID_ARGUMENT);
    gi.grInfoListSize = 1;
    e[0].index = 0x3a;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi), NV_ERR_INVALID_ARGUMENT);
    gi.grInfoList = 0;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi), NV_ERR_INVALID_ARGUMENT);
    /* NV2080_CTRL_CMD_FB_GET_INFO, converted to V2 (rmapi_deprecated_control.c,
     * kern_mem_sys_ctrl.c): 1..0x80 entries */
    e[0].index = NV_FB_INFO_RAM_SIZE;
    nv_fb_get_info fi = {.fbInfoListSize = 0x40, .fbInfoList = (uintptr_t)e};
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_GET_INFO, &fi, sizeof fi), NV_OK);
    cr_assert_eq((uint64_t)e[0].data << 10, mnv_gpu_by_index(0)->g->vram_bytes);
    fi.fbInfoListSize = 0x81;
    cr_assert_eq(ctrl(&r, r.subdevice, NV2080_CTRL_CMD_FB_GET_INFO, &fi, sizeof fi), NV_ERR_INVALID_ARGUMENT);
    /* NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 (client_resource.c, gpu_mgr.c
     * gpumgrGetGpuIdInfoV2): a GPU id RM does not have is
     * NV_ERR_INVALID_ARGUMENT */
    nv_gpu_id_info_v2 id = {.gpuId = 0xdead};
    cr_assert_eq(ctrl(&r, r.client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id, sizeof id), NV_ERR_INVALID_ARGUMENT);
    /* the flags rebuilt: IN_USE while a client has a device on the GPU */
    id = (nv_gpu_id_info_v2){.gpuId = mnv_gpu_by_index(0)->gpu_id, .gpuFlags = 0xfff0};
    cr_assert_eq(ctrl(&r, r.client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id, sizeof id), NV_OK);
    cr_assert_eq(id.gpuFlags, 1);
    cr_assert_eq(id.deviceInstance, 0);
    raw_close(&r);
}
