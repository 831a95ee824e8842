/* The AMD mock's kfd and DRM handlers one by one against the real ones
 * (torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_chardev.c for each
 * kfd_ioctl_*, kfd_events.c, kfd_process_queue_manager.c; amdgpu_kms.c
 * amdgpu_info_ioctl and drm_ioctl.c drm_version): for each, the argument
 * checks, what is copied back and the errors the kernel gives, as a kfd
 * client sees them. docs/mock-interfaces.md lists each with its test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "amdclient.h"
#include "base/base.h"
#include "drivers/amd/amd_drm.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(amd_handlers, .timeout = 60);

/* kfd_ioctl_get_version: 1.N, N the configured ABI */
Test(amd_handlers, get_version)
{
    kc c;
    kc_open(&c, "amd=gfx90a,kfd_minor=12");
    kfd_get_version_args v = {0};
    cr_assert_eq(kio(&c, KFD_IOC_GET_VERSION, &v), 0);
    cr_assert(v.major_version == 1 && v.minor_version == 12);
}

/* set_queue_properties_from_user: percentage (low byte) <= 100, priority
 * <= 15, a power-of-two ring (0 allowed) or EINVAL; an unknown queue type
 * EINVAL; a GPU whose VM is not acquired EINVAL */
Test(amd_handlers, create_queue_checks_as_set_queue_properties_from_user)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_create_queue_args a = {.gpu_id = c.node.gpu_id, .queue_type = KFD_QUEUE_SDMA, .queue_percentage = 101,
                               .ring_size = 4096};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), -EINVAL);
    a.queue_percentage = 100;
    a.queue_priority = 16;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), -EINVAL);
    a.queue_priority = 7;
    a.ring_size = 3000;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), -EINVAL);
    a.ring_size = 4096;
    a.queue_type = 9;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), -EINVAL);
    a.queue_type = KFD_QUEUE_SDMA;
    a.gpu_id = c.node.gpu_id + 1;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), -EINVAL);
    /* a good SDMA queue over buffers of the checked sizes; destroyed once */
    a.gpu_id = c.node.gpu_id;
    a.ring_base_address = kc_gtt(&c, 4096);
    uint64_t ctl = kc_gtt(&c, 4096);
    a.write_pointer_address = ctl;
    a.read_pointer_address = ctl + 8;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &a), 0);
    kfd_destroy_queue_args d = {.queue_id = a.queue_id};
    cr_assert_eq(kio(&c, KFD_IOC_DESTROY_QUEUE, &d), 0);
    cr_assert_eq(kio(&c, KFD_IOC_DESTROY_QUEUE, &d), -EINVAL, "pqm_destroy_queue: no such queue");
}

/* kfd_event_create / kfd_event_destroy / kfd_set_event / kfd_reset_event:
 * an unknown type or id EINVAL; set and reset only on signal events */
Test(amd_handlers, events_as_kfd_events_handles_them)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_create_event_args e = {.event_type = 5};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &e), -EINVAL);
    e.event_type = KFD_EVENT_SIGNAL;
    e.auto_reset = 1;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &e), 0);
    kfd_create_event_args m = {.event_type = KFD_EVENT_MEMORY};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &m), 0);
    kfd_event_id_args s = {.event_id = e.event_id};
    cr_assert_eq(kio(&c, KFD_IOC(SET_EVENT), &s), 0);
    kfd_event_data ev[1] = {{.event_id = e.event_id}};
    kfd_wait_events_args w = {.events_ptr = (uint64_t)(uintptr_t)ev, .num_events = 1, .timeout = 0};
    cr_assert_eq(kio(&c, KFD_IOC_WAIT_EVENTS, &w), 0);
    cr_assert_eq(w.wait_result, KFD_WAIT_COMPLETE, "a set signal event is seen");
    cr_assert_eq(kio(&c, KFD_IOC_WAIT_EVENTS, &w), 0);
    cr_assert_eq(w.wait_result, KFD_WAIT_TIMEOUT, "auto reset: seen once");
    cr_assert_eq(kio(&c, KFD_IOC(SET_EVENT), &s), 0);
    cr_assert_eq(kio(&c, KFD_IOC(RESET_EVENT), &s), 0);
    cr_assert_eq(kio(&c, KFD_IOC_WAIT_EVENTS, &w), 0);
    cr_assert_eq(w.wait_result, KFD_WAIT_TIMEOUT, "reset");
    s.event_id = m.event_id;
    cr_assert_eq(kio(&c, KFD_IOC(SET_EVENT), &s), -EINVAL, "not a signal event");
    ev[0].event_id = 999;
    cr_assert_eq(kio(&c, KFD_IOC_WAIT_EVENTS, &w), -EINVAL);
    kfd_destroy_event_args d = {.event_id = e.event_id};
    cr_assert_eq(kio(&c, KFD_IOC_DESTROY_EVENT, &d), 0);
    cr_assert_eq(kio(&c, KFD_IOC_DESTROY_EVENT, &d), -EINVAL);
}

/* kfd_ioctl_acquire_vm: the GPU's render node; the same file again is 0,
 * another file of it EBUSY; a file that is not a render node EINVAL */
Test(amd_handlers, acquire_vm)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_acquire_vm_args a = {.drm_fd = (uint32_t)c.drm, .gpu_id = c.node.gpu_id};
    cr_assert_eq(kio(&c, KFD_IOC_ACQUIRE_VM, &a), 0);
    a.drm_fd = (uint32_t)c.kfd;
    cr_assert_eq(kio(&c, KFD_IOC_ACQUIRE_VM, &a), -EINVAL);
    char path[64];
    snprintf(path, sizeof path, "/dev/dri/renderD%u", c.node.render_minor);
    int other = sys_open(path, O_RDWR);
    cr_assert_geq(other, 0);
    a.drm_fd = (uint32_t)other;
    cr_assert_eq(kio(&c, KFD_IOC_ACQUIRE_VM, &a), -EBUSY);
}

/* amdgpu_amdkfd_gpuvm_free_memory_of_gpu: a buffer still mapped is EBUSY;
 * map/unmap: n_devices 0 or n_success past it EINVAL; a buffer a queue
 * uses cannot be unmapped (queue_refcount: EBUSY); an unknown handle EINVAL */
Test(amd_handlers, free_map_and_unmap)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint64_t h;
    kc_alloc_h(&c, 8192, KFD_ALLOC_VRAM, false, &h);
    kfd_free_memory_args f = {.handle = h};
    cr_assert_eq(kio(&c, KFD_IOC_FREE_MEMORY, &f), -EBUSY);
    uint32_t ids[1] = {c.node.gpu_id};
    kfd_map_memory_args m = {.handle = h, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids, .n_devices = 0};
    cr_assert_eq(kio(&c, KFD_IOC_UNMAP_MEMORY, &m), -EINVAL);
    m.n_devices = 1;
    m.n_success = 2;
    cr_assert_eq(kio(&c, KFD_IOC_UNMAP_MEMORY, &m), -EINVAL);
    m.n_success = 0;
    cr_assert_eq(kio(&c, KFD_IOC_UNMAP_MEMORY, &m), 0);
    cr_assert_eq(m.n_success, 1);
    cr_assert_eq(kio(&c, KFD_IOC_FREE_MEMORY, &f), 0);
    cr_assert_eq(kio(&c, KFD_IOC_FREE_MEMORY, &f), -EINVAL);
    /* a queue's ring stays mapped while the queue lives */
    uint64_t rh;
    kfd_create_queue_args q = {.gpu_id = c.node.gpu_id, .queue_type = KFD_QUEUE_SDMA, .queue_percentage = 100,
                               .ring_size = 4096};
    q.ring_base_address = kc_alloc_h(&c, 4096, KFD_ALLOC_GTT, true, &rh);
    uint64_t ctl = kc_gtt(&c, 4096);
    q.write_pointer_address = ctl;
    q.read_pointer_address = ctl + 8;
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_QUEUE, &q), 0);
    kfd_map_memory_args u = {.handle = rh, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids, .n_devices = 1};
    cr_assert_eq(kio(&c, KFD_IOC_UNMAP_MEMORY, &u), -EBUSY);
}

/* kfd_ioctl_get_available_memory: the GPU's free VRAM (less after an
 * allocation); an unknown gpu_id EINVAL */
Test(amd_handlers, available_memory)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_available_memory_args a = {.gpu_id = c.node.gpu_id};
    cr_assert_eq(kio(&c, KFD_IOC_AVAILABLE_MEMORY, &a), 0);
    uint64_t before = a.available;
    kc_alloc(&c, 1 << 20, KFD_ALLOC_VRAM, false);
    cr_assert_eq(kio(&c, KFD_IOC_AVAILABLE_MEMORY, &a), 0);
    cr_assert_eq(a.available, before - (1 << 20));
    a.gpu_id = 1;
    cr_assert_eq(kio(&c, KFD_IOC_AVAILABLE_MEMORY, &a), -EINVAL);
}

/* kfd_ioctl_get_process_apertures_new: 0 nodes asks the count; then
 * gfx9's flat apertures (kfd_flat_memory.c kfd_init_apertures_v9) */
Test(amd_handlers, get_process_apertures_new)
{
    kc c;
    kc_open(&c, "amd=gfx942x2");
    kfd_get_apertures_new_args a = {0};
    cr_assert_eq(kio(&c, KFD_IOC(GET_PROCESS_APERTURES_NEW), &a), 0);
    cr_assert_eq(a.num_of_nodes, 2);
    kfd_apertures ap[2];
    memset(ap, 0, sizeof ap);
    a.kfd_process_device_apertures_ptr = (uint64_t)(uintptr_t)ap;
    a.num_of_nodes = 1;
    cr_assert_eq(kio(&c, KFD_IOC(GET_PROCESS_APERTURES_NEW), &a), 0);
    cr_assert_eq(a.num_of_nodes, 1);
    cr_assert_eq(ap[0].gpu_id, c.node.gpu_id);
    cr_assert_eq(ap[0].lds_base, 1ull << 48);
    cr_assert_eq(ap[0].scratch_base, 2ull << 48);
    cr_assert_eq(ap[1].gpu_id, 0, "one entry asked, one written");
}

/* set_memory_policy (policies COHERENT/NONCOHERENT, else EINVAL),
 * get_clock_counters (a 1 GHz system clock; an unknown gpu_id is no
 * error, its GPU counter 0), set_scratch_backing_va and set_trap_handler
 * (the GPU must exist), get_tile_config (counts clamped to 32 and 16) */
Test(amd_handlers, runtime_setup_calls)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_set_memory_policy_args mp = {.gpu_id = c.node.gpu_id, .default_policy = 2};
    cr_assert_eq(kio(&c, KFD_IOC(SET_MEMORY_POLICY), &mp), -EINVAL);
    mp.default_policy = KFD_CACHE_POLICY_NONCOHERENT;
    cr_assert_eq(kio(&c, KFD_IOC(SET_MEMORY_POLICY), &mp), 0);
    kfd_get_clock_counters_args cc = {.gpu_id = 12345};
    cr_assert_eq(kio(&c, KFD_IOC(GET_CLOCK_COUNTERS), &cc), 0);
    cr_assert(cc.system_clock_freq == 1000000000ull && cc.gpu_clock_counter == 0 && cc.cpu_clock_counter);
    kfd_set_scratch_backing_va_args sb = {.va_addr = 1ull << 40, .gpu_id = 7};
    cr_assert_eq(kio(&c, KFD_IOC(SET_SCRATCH_BACKING_VA), &sb), -EINVAL);
    sb.gpu_id = c.node.gpu_id;
    cr_assert_eq(kio(&c, KFD_IOC(SET_SCRATCH_BACKING_VA), &sb), 0);
    kfd_set_trap_handler_args th = {.gpu_id = 7};
    cr_assert_eq(kio(&c, KFD_IOC(SET_TRAP_HANDLER), &th), -EINVAL);
    uint32_t tiles[64], macro[64];
    kfd_get_tile_config_args tc = {.tile_config_ptr = (uint64_t)(uintptr_t)tiles,
                                   .macro_tile_config_ptr = (uint64_t)(uintptr_t)macro, .num_tile_configs = 64,
                                   .num_macro_tile_configs = 64, .gpu_id = c.node.gpu_id};
    cr_assert_eq(kio(&c, KFD_IOC(GET_TILE_CONFIG), &tc), 0);
    cr_assert(tc.num_tile_configs == 32 && tc.num_macro_tile_configs == 16 && tc.gb_addr_config);
}

/* kfd_ioctl_set_xnack_mode: < 0 asks; with queues EBUSY before anything
 * else; enabling where the GPUs do not retry faults EPERM (the mock's
 * model: it retries none) */
Test(amd_handlers, set_xnack_mode)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_set_xnack_mode_args x = {.xnack_enabled = -1};
    cr_assert_eq(kio(&c, KFD_IOC(SET_XNACK_MODE), &x), 0);
    cr_assert_eq(x.xnack_enabled, 0);
    x.xnack_enabled = 0;
    cr_assert_eq(kio(&c, KFD_IOC(SET_XNACK_MODE), &x), 0);
    x.xnack_enabled = 1;
    cr_assert_eq(kio(&c, KFD_IOC(SET_XNACK_MODE), &x), -EPERM);
}

/* drm_version: each string up to the caller's length, the full lengths
 * back; amdgpu_info_ioctl: answers up to return_size, an unknown query
 * EINVAL */
Test(amd_handlers, drm_version_and_amdgpu_info)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    char name[3] = "xx";
    drm_version_args v = {.name_len = 3, .name = (uint64_t)(uintptr_t)name};
    cr_assert_eq(kdrm(&c, DRM_IOCTL_VERSION_NUM, &v), 0);
    cr_assert_eq(v.major, 3);
    cr_assert_eq(v.name_len, 6, "amdgpu's length");
    cr_assert(!memcmp(name, "amd", 3), "three bytes copied");
    amdgpu_info_device dev;
    memset(&dev, 0xee, sizeof dev);
    amdgpu_info_args q = {.return_pointer = (uint64_t)(uintptr_t)&dev, .return_size = 8,
                          .query = AMDGPU_INFO_DEV_INFO};
    unsigned long info = AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_INFO, amdgpu_info_args);
    cr_assert_eq(kdrm(&c, info, &q), 0);
    cr_assert_eq(dev.device_id, 0x740f);
    cr_assert_eq(dev.family, 0xeeeeeeeeu, "return_size 8: nothing past it");
    q.return_size = sizeof dev;
    cr_assert_eq(kdrm(&c, info, &q), 0);
    cr_assert(dev.family == AMDGPU_FAMILY_AI && dev.cu_active_number == 104 && dev.wave_front_size == 64);
    q.query = 0x7f;
    cr_assert_eq(kdrm(&c, info, &q), -EINVAL);
}

/* amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu with USERPTR: the host pages at
 * mmap_offset mapped for the GPU at va_addr, which need not be the same
 * address (ROCm's runtime puts registered host memory in its GPUVM
 * aperture): the GPU's address and the CPU's show the same bytes */
Test(amd_handlers, userptr_at_another_gpu_address)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    int err = 0;
    uint8_t *host = sys_mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &err);
    cr_assert_not_null(host);
    memset(host, 0x5a, 8192);
    void *gva = sys_mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &err);
    cr_assert_not_null(gva);
    kfd_alloc_memory_args a = {.va_addr = (uint64_t)(uintptr_t)gva, .size = 8192, .gpu_id = c.node.gpu_id,
                               .flags = KFD_ALLOC_USERPTR | KFD_ALLOC_WRITABLE,
                               .mmap_offset = (uint64_t)(uintptr_t)host};
    cr_assert_eq(kio(&c, KFD_IOC_ALLOC_MEMORY, &a), 0);
    cr_assert_eq(a.mmap_offset, (uint64_t)(uintptr_t)host, "a userptr's offset is its address");
    uint32_t ids[1] = {c.node.gpu_id};
    kfd_map_memory_args m = {.handle = a.handle, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids, .n_devices = 1};
    cr_assert_eq(kio(&c, KFD_IOC_MAP_MEMORY, &m), 0);
    /* the mock's GPU reads its addresses directly: what it sees at gva */
    const volatile uint8_t *g = gva;
    cr_assert_eq(g[0], 0x5a);
    cr_assert_eq(g[8191], 0x5a);
    host[100] = 7;
    cr_assert_eq(g[100], 7, "the CPU's write is the GPU's");
    char why[128];
    cr_assert(mock_gpu_access(mock_amd_gpu_at(0)->g, (uint64_t)(uintptr_t)gva, 8192, true, why, sizeof why), "%s",
              why);
    /* an unaligned host address cannot be aliased */
    a.va_addr += 1ull << 30;
    a.mmap_offset = (uint64_t)(uintptr_t)host + 16;
    cr_assert_eq(kio(&c, KFD_IOC_ALLOC_MEMORY, &a), -EINVAL);
}

/* an SDMA queue of one 4 KiB ring at ring, its write and read pointers at
 * ctl and ctl + 8 */
static kfd_create_queue_args sdma_queue(kc *c, uint64_t ring, uint64_t ctl)
{
    kfd_create_queue_args a = {.gpu_id = c->node.gpu_id, .queue_type = KFD_QUEUE_SDMA, .queue_percentage = 100,
                               .queue_priority = 7, .ring_base_address = ring, .ring_size = 4096,
                               .write_pointer_address = ctl, .read_pointer_address = ctl + 8};
    cr_assert_eq(kio(c, KFD_IOC_CREATE_QUEUE, &a), 0);
    return a;
}

/* packets p at the ring's start, the write pointer (bytes) past them, and
 * the queue's doorbell rung through the doorbell page kfd maps */
static void sdma_submit(kc *c, const kfd_create_queue_args *a, uint64_t ring, uint64_t ctl, const uint32_t *p,
                        size_t bytes)
{
    memcpy((void *)(uintptr_t)ring, p, bytes);
    int err = 0;
    uint64_t base = a->doorbell_offset & ~(uint64_t)(KFD_DOORBELL_SLICE_BYTES - 1);
    uint8_t *db = sys_mmap(NULL, KFD_DOORBELL_SLICE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, c->kfd, (off_t)base, &err);
    cr_assert_not_null(db);
    atomic_store((_Atomic uint64_t *)(uintptr_t)ctl, bytes);
    sys_doorbell64((volatile uint64_t *)(db + (a->doorbell_offset - base)), bytes);
}

/* an SDMA queue as amdgpu's and ROCm's rings use it (sdma_v4_0.c
 * sdma_v4_0_ring_emit_fence and _emit_hdp_flush; kfd_int_process_v9.c
 * signals the event named by a TRAP's 28-bit context): a register
 * POLL_REGMEM of function ALWAYS passes, FENCE writes its dword, TRAP
 * signals the KFD event its context names; the write pointer is in bytes */
Test(amd_handlers, sdma_poll_always_fence_and_trap_signal_an_event)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kfd_create_event_args e = {.event_type = KFD_EVENT_SIGNAL, .auto_reset = 1};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &e), 0);
    uint64_t ring = kc_gtt(&c, 4096), ctl = kc_gtt(&c, 4096), fence = kc_gtt(&c, 4096);
    kfd_create_queue_args a = sdma_queue(&c, ring, ctl);
    uint32_t p[] = {
        8u | 0u << 28,                     /* POLL_REGMEM, a register, function ALWAYS */
        0x1234 * 4, 0, 0, 0, 0x00fa000a,   /* register byte offset, -, ref, mask, interval/retry */
        5u,                                /* FENCE */
        (uint32_t)fence, (uint32_t)(fence >> 32), 0xcafe,
        6u, e.event_id,                    /* TRAP with the event's id */
    };
    sdma_submit(&c, &a, ring, ctl, p, sizeof p);
    kfd_event_data ev[1] = {{.event_id = e.event_id}};
    kfd_wait_events_args w = {.events_ptr = (uint64_t)(uintptr_t)ev, .num_events = 1, .timeout = 10000};
    cr_assert_eq(kio(&c, KFD_IOC_WAIT_EVENTS, &w), 0);
    cr_assert_eq(w.wait_result, KFD_WAIT_COMPLETE, "the TRAP signalled the event");
    cr_assert_eq(*(volatile uint32_t *)(uintptr_t)fence, 0xcafe, "the FENCE before it landed");
}

/* the SDMA packets ROCm's runtime uses beside hcq's (ROCR-Runtime
 * blit_sdma.cpp: a completion signal's 64-bit decrement is an ATOMIC
 * ADD64 of -1; fills are CONST_FILL of dwords, count = bytes - 1 on SDMA
 * 4+), run in ring order before a FENCE that says they are done */
Test(amd_handlers, sdma_atomic_add64_and_const_fill)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint64_t ring = kc_gtt(&c, 4096), ctl = kc_gtt(&c, 4096), mem = kc_gtt(&c, 4096);
    kfd_create_queue_args a = sdma_queue(&c, ring, ctl);
    volatile uint64_t *sig = (volatile uint64_t *)(uintptr_t)mem;
    volatile uint32_t *fill = (volatile uint32_t *)(uintptr_t)(mem + 64);
    *sig = 1ull << 32 | 5; /* the decrement borrows across the halves */
    fill[0] = fill[25] = 0x11111111;
    uint64_t s = mem, f = mem + 64 + 4, d = mem + 1024;
    uint32_t p[] = {
        10u | 47u << 25, (uint32_t)s, (uint32_t)(s >> 32), 0xfffffffau, 0xffffffffu, 0, 0, 0, /* ATOMIC ADD64 -6 */
        11u | 2u << 30, (uint32_t)f, (uint32_t)(f >> 32), 0xdeadbeef, 24 * 4 - 1,             /* CONST_FILL 24 dwords */
        5u, (uint32_t)d, (uint32_t)(d >> 32), 1,                                               /* FENCE */
    };
    sdma_submit(&c, &a, ring, ctl, p, sizeof p);
    /* the FENCE's store releases what the engine wrote before it */
    _Atomic uint32_t *fence = (_Atomic uint32_t *)(uintptr_t)d;
    for (int i = 0; i < 10000 && !atomic_load_explicit(fence, memory_order_acquire); i++) usleep(1000);
    cr_assert_eq(atomic_load_explicit(fence, memory_order_acquire), 1, "the FENCE after them landed");
    cr_assert_eq(*sig, (1ull << 32) - 1, "ATOMIC ADD64 adds all 64 bits");
    cr_assert_eq(fill[0], 0x11111111u, "the fill starts at its address");
    for (int i = 1; i <= 24; i++) cr_assert_eq(fill[i], 0xdeadbeefu, "dword %d", i);
    cr_assert_eq(fill[25], 0x11111111u, "and ends after count + 1 bytes");
}

/* kfd_ioctl_alloc_queue_gws / pqm_set_gws: a queue of the process takes
 * the GPU's GWS (first_gws 0), a second queue of that GPU is EBUSY,
 * the holder's release takes it back, releasing what none holds is EINVAL, an
 * unknown queue is EINVAL, and destroying the holder releases it */
Test(amd_handlers, alloc_queue_gws_one_holder_per_gpu)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint32_t ids[2];
    for (int i = 0; i < 2; i++) {
        uint64_t ring = kc_gtt(&c, 4096), ctl = kc_gtt(&c, 4096);
        kfd_create_queue_args a = sdma_queue(&c, ring, ctl);
        ids[i] = a.queue_id;
    }
    const unsigned long gws = AMD_IOC(AMD_IOC_W | AMD_IOC_R, 0x1E, sizeof(kfd_alloc_queue_gws_args));
    kfd_alloc_queue_gws_args g = {.queue_id = ids[0], .num_gws = 64, .first_gws = 7};
    cr_assert_eq(kio(&c, gws, &g), 0);
    cr_assert_eq(g.first_gws, 0);
    g = (kfd_alloc_queue_gws_args){.queue_id = ids[1], .num_gws = 64};
    cr_assert_eq(kio(&c, gws, &g), -EBUSY, "one queue per GPU holds its GWS");
    g = (kfd_alloc_queue_gws_args){.queue_id = 999, .num_gws = 64};
    cr_assert_eq(kio(&c, gws, &g), -EINVAL);
    g = (kfd_alloc_queue_gws_args){.queue_id = ids[1], .num_gws = 0};
    cr_assert_eq(kio(&c, gws, &g), -EINVAL, "only the holder releases");
    g.queue_id = ids[0];
    cr_assert_eq(kio(&c, gws, &g), 0);
    cr_assert_eq(kio(&c, gws, &g), -EINVAL, "nothing left to release");
    g = (kfd_alloc_queue_gws_args){.queue_id = ids[1], .num_gws = 64};
    cr_assert_eq(kio(&c, gws, &g), 0);
    kfd_destroy_queue_args d = {.queue_id = ids[1]};
    cr_assert_eq(kio(&c, KFD_IOC_DESTROY_QUEUE, &d), 0);
    g = (kfd_alloc_queue_gws_args){.queue_id = ids[0], .num_gws = 64};
    cr_assert_eq(kio(&c, gws, &g), 0, "destroying the holder released the GWS");
}

/* kfd_ioctl_create_event: a dGPU's runtime hands over its signal page's
 * buffer once (event_page_offset = the buffer's handle; a second, or a
 * handle of no buffer, is EINVAL); a signal event's answer names its slot
 * (its id) and the page's mmap offset KFD_MMAP_TYPE_EVENTS, which libhsakmt
 * takes as "this event has a mailbox" (ROCr's event_mailbox_ptr: without
 * it ROCr's interrupt signals are never woken by the GPU) */
Test(amd_handlers, create_event_takes_the_signal_page_once_and_names_slots)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint64_t handle = 0;
    kc_alloc_h(&c, 4096 * 8, KFD_ALLOC_GTT | KFD_ALLOC_WRITABLE, true, &handle);
    kfd_create_event_args e = {.event_type = KFD_EVENT_SIGNAL, .event_page_offset = handle + 12345};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &e), -EINVAL, "a handle of no buffer");
    e = (kfd_create_event_args){.event_type = KFD_EVENT_SIGNAL, .event_page_offset = handle};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &e), 0);
    cr_assert_eq(e.event_page_offset, 2ull << 62, "KFD_MMAP_TYPE_EVENTS");
    cr_assert_eq(e.event_slot_index, e.event_id);
    kfd_create_event_args again = {.event_type = KFD_EVENT_SIGNAL, .event_page_offset = handle};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &again), -EINVAL, "the page is set once");
    kfd_create_event_args next = {.event_type = KFD_EVENT_SIGNAL};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &next), 0);
    cr_assert_eq(next.event_page_offset, 2ull << 62);
    cr_assert_eq(next.event_slot_index, next.event_id);
    kfd_create_event_args mem = {.event_type = KFD_EVENT_MEMORY};
    cr_assert_eq(kio(&c, KFD_IOC_CREATE_EVENT, &mem), 0);
    cr_assert_eq(mem.event_page_offset, 0, "no slot for a memory event");
}
