/* The AMD mock as a client that is not hcq sees it: a small kfd client
 * written against the kernel's interface (kfd_ioctl.h and amdkfd's
 * handlers, the HSA AQL packet formats, ROCR's amd_queue_t and
 * amd_signal_t), not against hcq's driver: it allocates with its own
 * sizes, builds its own AQL queue and packets, and checks what the real
 * driver and packet processor would do with them. Each test names the
 * source that settles the behaviour it holds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/base.h"
#include "drivers/amd/amd.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "amdclient.h"
#include "hcqtest.h"

TestSuite(amd_client, .timeout = 120);

static uint64_t gtt(kc *c, uint64_t size) { return kc_gtt(c, size); }

/* ** ALLOC_MEMORY_OF_GPU refuses only size 0 and page-aligns the rest
 * (torvalds/linux amdkfd/kfd_chardev.c kfd_ioctl_alloc_memory_of_gpu:
 * `if (args->size == 0) return -EINVAL`; amdgpu_amdkfd_gpuvm.c
 * amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu allocates PAGE_ALIGN(size)) */
Test(amd_client, alloc_refuses_only_size_0_and_page_aligns_the_rest)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint64_t va = kc_alloc(&c, 256, KFD_ALLOC_VRAM | KFD_ALLOC_PUBLIC, true);
    uint8_t *p = (uint8_t *)(uintptr_t)va;
    p[0] = 1;
    p[4095] = 2; /* the rest of the page is the buffer's */
    cr_assert_eq(p[0] + p[4095], 3);
    kfd_alloc_memory_args a = {.va_addr = va + (64ull << 20), .size = 0, .gpu_id = c.node.gpu_id,
                               .flags = KFD_ALLOC_VRAM | KFD_ALLOC_WRITABLE};
    cr_assert_eq(kio(&c, KFD_IOC_ALLOC_MEMORY, &a), -EINVAL);
    a.size = 4097; /* two pages */
    cr_assert_eq(kio(&c, KFD_IOC_ALLOC_MEMORY, &a), 0);
}

/* ** an AQL queue of the client's own (ROCR's layout: amd_queue_t in the
 * pointer page, write_dispatch_id at 0x38, read_dispatch_id at 0x80) */
typedef struct kq {
    uint64_t ring, ctl;
    uint32_t slots;
    volatile uint64_t *doorbell;
    uint64_t put;
} kq;

static void kq_create(kc *c, kq *q)
{
    const amd_node *n = &c->node;
    q->slots = 64;
    q->ring = gtt(c, q->slots * AQL_PACKET_BYTES);
    memset((void *)(uintptr_t)q->ring, 0, q->slots * AQL_PACKET_BYTES); /* header 0: not INVALID */
    q->ctl = gtt(c, 4096);
    uint8_t *ctl = (uint8_t *)(uintptr_t)q->ctl;
    uint32_t off = AMD_QUEUE_RPTR_OFF, props = AMD_QUEUE_PROP_IS_PTR64;
    memcpy(ctl + AMD_QUEUE_RPTR_BASE_OFF, &off, 4);
    memcpy(ctl + AMD_QUEUE_PROPERTIES_OFF, &props, 4);
    uint64_t eop = kc_alloc(c, n->eop_size, KFD_ALLOC_VRAM, false);
    uint64_t cwsr = kc_alloc(c, base_align_up(((uint64_t)n->cwsr_size + n->debug_memory_size) * n->num_xcc, 4096),
                             KFD_ALLOC_VRAM, false);
    kfd_create_queue_args a = {.ring_base_address = q->ring, .write_pointer_address = q->ctl + AMD_QUEUE_WPTR_OFF,
                               .read_pointer_address = q->ctl + AMD_QUEUE_RPTR_OFF,
                               .ring_size = q->slots * AQL_PACKET_BYTES, .gpu_id = n->gpu_id,
                               .queue_type = KFD_QUEUE_COMPUTE_AQL, .queue_percentage = 100, .queue_priority = 7,
                               .eop_buffer_address = eop, .eop_buffer_size = n->eop_size,
                               .ctx_save_restore_address = cwsr, .ctx_save_restore_size = n->cwsr_size,
                               .ctl_stack_size = n->ctl_stack_size};
    cr_assert_eq(kio(c, KFD_IOC_CREATE_QUEUE, &a), 0);
    int err = 0;
    uint64_t base = a.doorbell_offset & ~(uint64_t)(KFD_DOORBELL_SLICE_BYTES - 1);
    uint8_t *db = sys_mmap(NULL, KFD_DOORBELL_SLICE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, c->kfd, (off_t)base, &err);
    cr_assert_not_null(db);
    q->doorbell = (volatile uint64_t *)(db + (a.doorbell_offset - base));
    q->put = 0;
}

static uint64_t kq_rptr(const kq *q)
{
    return atomic_load((_Atomic uint64_t *)(uintptr_t)(q->ctl + AMD_QUEUE_RPTR_OFF));
}

/* writes a packet as ROCR does: reserve the slot (write_dispatch_id), the
 * body, the header last, then the doorbell with the packet's index */
static void kq_submit(kq *q, const void *pkt)
{
    uint64_t idx = q->put++;
    atomic_store((_Atomic uint64_t *)(uintptr_t)(q->ctl + AMD_QUEUE_WPTR_OFF), q->put);
    uint8_t *slot = (uint8_t *)(uintptr_t)(q->ring + (idx % q->slots) * AQL_PACKET_BYTES);
    memcpy(slot + 4, (const uint8_t *)pkt + 4, AQL_PACKET_BYTES - 4);
    uint32_t hdr;
    memcpy(&hdr, pkt, 4);
    atomic_store_explicit((_Atomic uint32_t *)slot, hdr, memory_order_release);
    sys_doorbell64(q->doorbell, idx);
}

/* an amd_signal_t of kind USER holding value */
static uint64_t signal_new(kc *c, int64_t value)
{
    uint64_t s = gtt(c, 4096);
    int64_t kind = 1; /* AMD_SIGNAL_KIND_USER */
    memcpy((void *)(uintptr_t)s, &kind, 8);
    atomic_store((_Atomic int64_t *)(uintptr_t)(s + AMD_SIGNAL_VALUE_OFFSET), value);
    return s;
}
static int64_t signal_get(uint64_t s) { return atomic_load((_Atomic int64_t *)(uintptr_t)(s + AMD_SIGNAL_VALUE_OFFSET)); }
static void signal_set(uint64_t s, int64_t v)
{
    atomic_store((_Atomic int64_t *)(uintptr_t)(s + AMD_SIGNAL_VALUE_OFFSET), v);
    sys_notify(s + AMD_SIGNAL_VALUE_OFFSET);
}

/* waits (bounded) for the signal to reach want; false on a hang or the bound */
static bool signal_reaches(uint64_t s, int64_t want)
{
    for (int i = 0; i < 20000; i++) {
        if (signal_get(s) == want) return true;
        char err[256];
        mock_amd_last_error(0, err, sizeof err);
        if (err[0]) return false;
        base_sleep_ns(100000);
    }
    return false;
}

static void no_error(void)
{
    char err[1024];
    mock_amd_last_error(0, err, sizeof err);
    cr_assert(!err[0], "the mock stopped the queue: %s", err);
}

static uint16_t hdr_of(uint32_t type, bool barrier)
{
    return (uint16_t)(type | (barrier ? AQL_HDR_BARRIER : 0) | AQL_SCOPE_SYSTEM << AQL_HDR_ACQUIRE_SHIFT |
                      AQL_SCOPE_SYSTEM << AQL_HDR_RELEASE_SHIFT);
}

/* ** the packet processor takes packets up to the write index the MQD
 * points at, not the doorbell's value: a fresh queue, its doorbell rung
 * with 0 before anything is written, runs nothing (ROCR amd_aql_queue.cpp
 * and the HSA spec: the doorbell carries the index of the last packet
 * written, and packets are valid only below write_dispatch_id) */
static void untouched_doorbell(const char *spec)
{
    kc c;
    kc_open(&c, spec);
    kq q;
    kq_create(&c, &q);
    sys_doorbell64(q.doorbell, 0); /* nothing written: slot 0 holds a header of 0 */
    uint64_t done = signal_new(&c, 1);
    aql_barrier b = {.header = hdr_of(AQL_TYPE_BARRIER_AND, true), .completion_signal = done};
    kq_submit(&q, &b);
    cr_assert(signal_reaches(done, 0), "a barrier-AND without dependencies completes");
    no_error();
    cr_assert_eq(kq_rptr(&q), 1);
}
Test(amd_client, aql_queue_waits_for_the_write_index_gfx942) { untouched_doorbell("amd=gfx942"); }
Test(amd_client, aql_queue_waits_for_the_write_index_gfx90a) { untouched_doorbell("amd=gfx90a"); }

/* ** barrier-AND waits for every dependency signal to be 0, barrier-OR for
 * any (HSA Platform System Architecture spec, "Barrier-AND packet",
 * "Barrier-OR packet"); a packet's completion signal drops by one */
Test(amd_client, barrier_and_and_or_wait_for_their_dependencies)
{
    kc c;
    kc_open(&c, "amd=gfx942");
    kq q;
    kq_create(&c, &q);
    uint64_t a = signal_new(&c, 1), b = signal_new(&c, 1), done = signal_new(&c, 2);
    aql_barrier and_ = {.header = hdr_of(AQL_TYPE_BARRIER_AND, true), .dep_signal = {a, 0, b}, .completion_signal = done};
    aql_barrier or_ = {.header = hdr_of(AQL_TYPE_BARRIER_OR, false), .dep_signal = {a, b}, .completion_signal = done};
    kq_submit(&q, &or_);
    kq_submit(&q, &and_);
    signal_set(b, 0); /* the OR's second dependency */
    cr_assert(signal_reaches(done, 1), "barrier-OR completes once any dependency is 0");
    cr_assert_eq(kq_rptr(&q), 1, "barrier-AND waits for a as well");
    signal_set(a, 0);
    cr_assert(signal_reaches(done, 0));
    no_error();
}

/* a packet the packet processor cannot take stops the queue, saying why */
static void refused_packet(uint16_t header, const char *expect)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    kq q;
    kq_create(&c, &q);
    aql_barrier p = {.header = header};
    t_stderr cap = t_stderr_begin();
    kq_submit(&q, &p);
    char err[1024] = "";
    for (int i = 0; i < 20000 && !err[0]; i++) {
        mock_amd_last_error(0, err, sizeof err);
        base_sleep_ns(100000);
    }
    char text[2048];
    t_stderr_end(cap, text, sizeof text);
    cr_assert(strstr(err, expect), "%s", err);
}
Test(amd_client, a_reserved_fence_scope_stops_the_queue)
{
    refused_packet(AQL_TYPE_BARRIER_AND | AQL_SCOPE_RESERVED << AQL_HDR_ACQUIRE_SHIFT, "reserved fence scope");
}
Test(amd_client, an_agent_dispatch_packet_stops_the_queue)
{
    refused_packet(AQL_TYPE_AGENT_DISPATCH, "agent-dispatch packet on a GPU queue");
}

/* ** the HSA kernel-dispatch packet: grid in work-items, work-group size,
 * segment sizes, the kernel descriptor's address and the kernargs; the
 * packet processor programs the dispatch from them and the descriptor
 * (llvm AMDGPUUsage "Initial Kernel Execution State") */
static void kernel_dispatch(const char *spec, const char *target)
{
    kc c;
    kc_open(&c, spec);
    kq q;
    kq_create(&c, &q);
    /* the code object: mock code (IR) behind a real kernel descriptor */
    hcq_kernel *k = t_k_mark();
    hcq_binary *bin = NULL;
    T_OK(hcq_compile(k, target, &bin));
    hcq_kernel_destroy(k);
    amd_co co;
    T_OK(amd_co_parse(bin->data, bin->size, NULL, &co));
    uint64_t code = kc_alloc(&c, co.image_size, KFD_ALLOC_VRAM | KFD_ALLOC_PUBLIC, true);
    amd_co_place(bin->data, bin->size, (uint8_t *)(uintptr_t)code, code, co.image_size);
    /* grid 64 x 2 x 1 work-items in work-groups of 32: marks 128 words */
    enum { N = 128 };
    uint64_t out = kc_alloc(&c, N * 4, KFD_ALLOC_VRAM | KFD_ALLOC_PUBLIC, true);
    memset((void *)(uintptr_t)out, 0, N * 4);
    uint64_t ka = gtt(&c, 4096);
    memcpy((void *)(uintptr_t)ka, &out, 8);
    uint64_t done = signal_new(&c, 1);
    aql_dispatch d = {.header = hdr_of(AQL_TYPE_KERNEL_DISPATCH, true), .setup = 2, .workgroup_size = {32, 1, 1},
                      .grid_size = {64, 2, 1}, .group_segment_size = co.kd.group_segment_fixed_size,
                      .private_segment_size = co.kd.private_segment_fixed_size, .kernel_object = code + co.kd_offset,
                      .kernarg_address = ka, .completion_signal = done};
    kq_submit(&q, &d);
    cr_assert(signal_reaches(done, 0), "the dispatch completes");
    no_error();
    const uint32_t *o = (const uint32_t *)(uintptr_t)out;
    for (int i = 0; i < N; i++) cr_assert_eq(o[i], 1, "%s: work-item %d ran %u times", spec, i, o[i]);
    /* a grid that is not a whole number of work-groups: the shader core
     * runs whole ones only, and says so */
    d.grid_size[0] = 48;
    d.completion_signal = signal_new(&c, 1);
    t_stderr cap = t_stderr_begin();
    kq_submit(&q, &d);
    char err[1024] = "";
    for (int i = 0; i < 20000 && !err[0]; i++) {
        mock_amd_last_error(0, err, sizeof err);
        base_sleep_ns(100000);
    }
    char text[2048];
    t_stderr_end(cap, text, sizeof text);
    cr_assert(strstr(err, "partial last work-group"), "%s", err);
    amd_co_free(&co);
    hcq_binary_free(bin);
}
Test(amd_client, aql_kernel_dispatch_runs_on_gfx90a) { kernel_dispatch("amd=gfx90a", "mock-gfx90a"); }
Test(amd_client, aql_kernel_dispatch_runs_on_every_xcc_of_gfx942) { kernel_dispatch("amd=gfx942", "mock-gfx942"); }

/* ** kfd_ioctl's own handling (kfd_chardev.c): the row by number alone,
 * the kernel's direction and size (the caller's size copied), EINVAL for
 * a number it has no function for */
Test(amd_client, kfd_ioctl_copies_as_kfd_ioctl_does)
{
    kc c;
    kc_open(&c, "amd=gfx90a");
    uint32_t v[4] = {0xdead, 0xbeef, 7, 7};
    /* GET_VERSION asked with no direction and 4 bytes: the kernel's command
     * reads out, and only the caller's 4 bytes come back */
    cr_assert_eq(kio(&c, AMD_IOC(0, 0x01, 4), v), 0);
    cr_assert_eq(v[0], 1);
    cr_assert_eq(v[1], 0xbeef);
    /* a number with no function, one past the table, one known by name only */
    cr_assert_eq(kio(&c, AMD_IOC(AMD_IOC_WR, 0x3f, 8), v), -EINVAL);
    cr_assert_eq(kio(&c, AMD_IOC(AMD_IOC_WR, 0x0D, 8), v), -EINVAL);
    cr_assert_str_eq(kfd_ioctl_name(AMD_IOC(AMD_IOC_WR, 0x14, 400)), "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW");
    cr_assert_null(kfd_ioctl_name(AMD_IOC(AMD_IOC_WR, 0x40, 8)));
}
