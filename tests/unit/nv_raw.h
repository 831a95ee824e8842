/* tests/unit/nv_raw.h: raw RM calls on fds and a client of a test's own,
 * for the suites that hold the NV mock to RM's and UVM's handlers
 * (test_nv_rm.c, test_nv_uvm.c). Criterion asserts; header-only. */
#ifndef HCQ_TESTS_NV_RAW_H
#define HCQ_TESTS_NV_RAW_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>

#include "drivers/mock/mock_nv.h"
#include "drivers/nv/nv.h"
#include "drivers/sys.h"

/* ** raw RM calls on fds of our own (a client of our own) */
typedef struct raw {
    int ctl, dev;
    uint32_t client, device, subdevice;
} raw;

static inline uint32_t alloc_p(raw *r, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *h)
{
    nv_rm_alloc a = {.hRoot = r->client, .hObjectParent = parent, .hObjectNew = h ? *h : 0, .hClass = cls,
                     .pAllocParms = (uint64_t)(uintptr_t)params, .paramsSize = size};
    cr_assert_eq(sys_ioctl(r->ctl, NV_IOCTL_RM_ALLOC, &a), 0);
    if (h && a.status == NV_OK) *h = a.hObjectNew;
    return a.status;
}

static inline uint32_t ctrl(raw *r, uint32_t obj, uint32_t cmd, void *params, uint32_t size)
{
    nv_rm_control c = {.hClient = r->client, .hObject = obj, .cmd = cmd, .params = (uint64_t)(uintptr_t)params,
                       .paramsSize = size};
    cr_assert_eq(sys_ioctl(r->ctl, NV_IOCTL_RM_CONTROL, &c), 0);
    return c.status;
}

static inline void raw_open(raw *r)
{
    memset(r, 0, sizeof *r);
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
    cr_assert_eq(alloc_p(r, r->client, NV01_DEVICE_0, &da, sizeof da, &r->device), NV_OK);
    nv_subdevice_alloc sa = {0};
    cr_assert_eq(alloc_p(r, r->device, NV20_SUBDEVICE_0, &sa, sizeof sa, &r->subdevice), NV_OK);
}

static inline void raw_close(raw *r)
{
    sys_close(r->dev);
    sys_close(r->ctl); /* RM frees the fd's clients */
    cr_assert_eq(mock_nv_live_objects(), 0);
}

static inline uint32_t vidmem(raw *r, uint64_t size)
{
    nv_memory_alloc m = {.owner = r->client, .flags = NVOS32_ALLOC_FLAGS_VIDMEM, .size = size};
    uint32_t h = 0;
    cr_assert_eq(alloc_p(r, r->device, NV01_MEMORY_LOCAL_USER, &m, sizeof m, &h), NV_OK);
    return h;
}

/* a channel's parameters with what they name: USERD and a notifier in
 * system memory, a ring address, the context share given */
static inline nv_channel_alloc chan_params(raw *r, uint32_t ctxshare)
{
    nv_memory_alloc m = {.owner = r->client, .flags = NVOS32_ALLOC_FLAGS_SYSMEM, .attr = NVOS32_ATTR_LOCATION_PCI,
                         .size = 4096};
    uint32_t userd = 0, notifier = 0;
    cr_assert_eq(alloc_p(r, r->device, NV01_MEMORY_SYSTEM, &m, sizeof m, &userd), NV_OK);
    cr_assert_eq(alloc_p(r, r->device, NV01_MEMORY_SYSTEM, &m, sizeof m, &notifier), NV_OK);
    return (nv_channel_alloc){.hObjectError = notifier, .gpFifoOffset = 0x7f0000000000ull, .gpFifoEntries = 64,
                              .hContextShare = ctxshare, .hUserdMemory = {userd}};
}

#endif
