/* What a review against NVIDIA's own sources found (issue 11), each held
 * by the NV mock behaving as the hardware does: pushbuffer space reclaimed
 * from semaphore progress, not GP_GET. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
TestSuite(nv_ready, .init = setup, .timeout = 120);

static hcq_device *open_nv(const char *name)
{
    hcq_device *d = hcq_device_open(name);
    cr_assert_not_null(d, "opening %s: %s", name, hcq_error_message());
    return d;
}

/* ** NV 1: pushbuffer and GPFIFO reuse. The channel blocks on an acquire
 * in the first segment; the host then submits many more segments than a
 * tiny ring holds, and opens the gate from another thread. GP_GET has
 * passed the blocked segment (it moves when a segment begins) while its
 * remaining words are still to be read: reusing them on GP_GET's word
 * runs rewritten methods (the release after the acquire never comes), and
 * with USERD writeback off GP_GET never moves at all. */
static void *open_gate_later(void *gate)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hcq_signal_set(gate, 1);
    return NULL;
}

static void tiny_ring_behind_a_blocked_acquire(const char *gpget)
{
    setenv("HCQ_RING_SHIFT", "6", 1); /* 64 pushbuffer dwords, 64 GPFIFO entries */
    setenv("HCQ_TIMEOUT_MS", "4000", 1);
    base_env_reload();
    char spec[64];
    snprintf(spec, sizeof spec, "nv_gpget=%s", gpget);
    T_OK(mock_configure(spec));
    hcq_device *d = open_nv("NV:0");
    hcq_signal *gate = T_NONNULL(hcq_signal_create(d, 0)), *after = T_NONNULL(hcq_signal_create(d, 0));
    hcq_signal *count = T_NONNULL(hcq_signal_create(d, 0));
    hcq_queue *qa = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    hcq_queue *qb = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(qa, gate, HCQ_IMM(1)));
    T_OK(hcq_queue_signal(qa, after, HCQ_IMM(7)));
    T_OK(hcq_queue_signal(qb, count, HCQ_VAR(0)));
    T_OK(hcq_queue_submit(qa, NULL, 0));
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, open_gate_later, gate), 0);
    enum { N = 80 }; /* segments: more than either ring holds */
    for (uint64_t i = 1; i <= N; i++) T_OK(hcq_queue_submit(qb, &i, 1));
    pthread_join(th, NULL);
    T_OK(hcq_signal_wait(count, N, 2000000000ull));
    T_OK(hcq_signal_wait(after, 7, 2000000000ull));
    cr_assert_eq(hcq_signal_value(after), 7);
    T_OK(hcq_device_status(d));
    hcq_queue_destroy(qa);
    hcq_queue_destroy(qb);
    hcq_signal_destroy(gate);
    hcq_signal_destroy(after);
    hcq_signal_destroy(count);
    T_OK(hcq_device_close(d));
}

Test(nv_ready, pushbuffer_reuse_waits_for_progress_when_gpget_runs_ahead)
{
    tiny_ring_behind_a_blocked_acquire("eager");
}

Test(nv_ready, pushbuffer_reuse_needs_no_gpget_writeback)
{
    tiny_ring_behind_a_blocked_acquire("never");
}

/* ** NV 3: QMD V03 (clc6c0qmd.h, clc7c0qmd.h, clc9c0qmd.h) has
 * INVALIDATE_INSTRUCTION_CACHE at bit 190 and a third release semaphore,
 * RELEASE2, at bits 1664-1791; Hopper's local-memory address has 25 upper
 * bits (clcbc0.h) where Ampere's has 17 */
Test(nv_ready, qmd_v03_has_the_icache_bit_and_three_release_slots)
{
    uint32_t q[NV_QMD_MAX_DW] = {0};
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_INVALIDATE_INSTRUCTION_CACHE, 0, 1);
    cr_assert_eq(q[5], 1u << 30, "bit 190 is dword 5 bit 30: 0x%08x", q[5]);
    memset(q, 0, sizeof q);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_ADDRESS_LOWER, 2, 0x12345640);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_ADDRESS_UPPER, 2, 0xab);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_ENABLE, 2, 1);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_PAYLOAD64B, 2, 1);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_PAYLOAD_LOWER, 2, 0x11);
    nv_qmd_set(q, NV_QMD_V03, NV_QMD_RELEASE_PAYLOAD_UPPER, 2, 0x22);
    for (unsigned d = 0; d < NV_QMD_V03_BYTES / 4; d++) {
        /* 1664 = dword 52: address, then ENABLE 1719 (53:23), PAYLOAD64B 1725 (53:29), payload at 1728, 1760 */
        uint32_t want = d == 52 ? 0x12345640 : d == 53 ? 0xab | 1u << 23 | 1u << 29 : d == 54 ? 0x11 : d == 55 ? 0x22 : 0;
        cr_assert_eq(q[d], want, "QMD dword %u: 0x%08x, want 0x%08x", d, q[d], want);
    }
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V03, NV_QMD_RELEASE_ADDRESS_LOWER, 2), 0x12345640);
    cr_assert_eq(nv_qmd_get(q, NV_QMD_V03, NV_QMD_RELEASE_ENABLE, 1), 0);
}

Test(nv_ready, hopper_local_memory_address_has_25_upper_bits)
{
    const uint64_t va = 0x0123456780000000ull; /* bit 56 set */
    for (int hopper = 0; hopper < 2; hopper++) {
        drv_rec r;
        drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
        nv_set_local_memory(&r, va, 0x8000, hopper ? NV_LOCAL_MEMORY_UPPER_BITS_HOPPER : NV_LOCAL_MEMORY_UPPER_BITS_AMPERE);
        cr_assert_eq(r.err, HCQ_OK);
        cr_assert_eq(r.dw[1], hopper ? 0x1234567u : 0x14567u, "ADDRESS_UPPER 0x%x", r.dw[1]);
        cr_assert_eq(r.dw[2], 0x80000000u);
        drv_rec_fini(&r);
    }
}

/* a kernel storing K to out[0]: two of them differ in one constant, so
 * their programs have the same size and land at the same address in turn */
static hcq_kernel *store_k(uint32_t kv)
{
    hcq_kernel *k = hcq_kernel_create("store_k");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_store(k, out, hcq_ir_const_int(k, HCQ_I32, 0), hcq_ir_const_int(k, HCQ_U32, kv));
    return k;
}

static uint64_t code_va(hcq_program *p) { return ((const nv_prog *)p->priv)->code_va; }

/* the mock refuses to run code that changed under a cached address unless
 * the QMD invalidates the instruction cache; our QMDs do on every model */
Test(nv_ready, a_program_loaded_where_another_ran_invalidates_the_icache)
{
    const char *models[] = {"nv=A100", "nv=RTX4090", "nv=H100"};
    for (size_t m = 0; m < BASE_ARRAY_LEN(models); m++) {
        T_OK(mock_configure(models[m]));
        hcq_device *d = open_nv("NV:0");
        uint32_t zero = 0, out = 0;
        hcq_buffer *b = t_buffer_from(d, &zero, 4);
        hcq_arg a = hcq_arg_buffer(b);
        hcq_program *p1 = t_load(d, store_k(1));
        uint64_t va1 = code_va(p1);
        T_OK(hcq_launch(p1, &a, 1, hcq_dims_1d(1, 1)));
        T_OK(hcq_device_synchronize(d));
        T_OK(hcq_program_free(p1));
        hcq_program *p2 = t_load(d, store_k(2));
        cr_assert_eq(code_va(p2), va1, "%s: the second program did not reuse the first one's address", models[m]);
        T_OK(hcq_launch(p2, &a, 1, hcq_dims_1d(1, 1)));
        T_OK(hcq_device_synchronize(d));
        t_read(b, &out, 4);
        cr_assert_eq(out, 2, "%s", models[m]);
        T_OK(hcq_program_free(p2));
        T_OK(hcq_buffer_free(b));
        T_OK(hcq_device_close(d));
    }
}

/* three signals right after a launch become the QMD's three releases on
 * both QMD versions (and a fourth a host semaphore) */
Test(nv_ready, three_signals_after_a_launch_use_all_qmd_release_slots)
{
    const char *models[] = {"nv=A100", "nv=H100"};
    for (size_t m = 0; m < BASE_ARRAY_LEN(models); m++) {
        T_OK(mock_configure(models[m]));
        hcq_device *d = open_nv("NV:0");
        uint32_t zero = 0;
        hcq_buffer *b = t_buffer_from(d, &zero, 4);
        hcq_arg a = hcq_arg_buffer(b);
        hcq_program *p = t_load(d, store_k(5));
        hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
        hcq_signal *s[4];
        T_OK(hcq_queue_exec(q, p, &a, 1, hcq_dims_1d(1, 1)));
        for (int i = 0; i < 4; i++) {
            s[i] = T_NONNULL(hcq_signal_create(d, 0));
            T_OK(hcq_queue_signal(q, s[i], HCQ_IMM(10 + (uint64_t)i)));
        }
        T_OK(hcq_queue_submit(q, NULL, 0));
        for (int i = 0; i < 4; i++) T_OK(hcq_signal_wait(s[i], 10 + (uint64_t)i, 2000000000ull));
        T_OK(hcq_queue_destroy(q));
        for (int i = 0; i < 4; i++) hcq_signal_destroy(s[i]);
        T_OK(hcq_program_free(p));
        T_OK(hcq_buffer_free(b));
        T_OK(hcq_device_close(d));
    }
}

/* ** NV 4: AMPERE_DMA_COPY_B (Ampere GA10x, Ada) and HOPPER_DMA_COPY_A
 * release 64-bit values with the copy engine itself: as two one-word
 * releases (the default, UVM's form) or one 64-bit release (the
 * alternative path, clc7b5.h's SEMAPHORE_PAYLOAD_SIZE); AMPERE_DMA_COPY_A
 * (GA100) takes the host semaphore. The value arrives whole either way. */
Test(nv_ready, copy_signals_use_the_copy_engine_where_it_has_64_bit_values)
{
    const struct {
        const char *model;
        bool ce;
    } cases[] = {{"nv=A100", false}, {"nv=RTX3090", true}, {"nv=RTX4090", true}, {"nv=H100", true}};
    for (size_t m = 0; m < BASE_ARRAY_LEN(cases); m++) {
        for (int path = NV_CE_REL32; path <= NV_CE_REL64; path++) {
            T_OK(mock_configure(cases[m].model));
            hcq_device *d = open_nv("NV:0");
            nv_of(d)->path.ce = (uint8_t)path;
            drv_rec r;
            drv_rec_init(&r, d, HCQ_QUEUE_COPY);
            T_OK(nv_rec_signal(&r, HCQ_IMM(0x1000), HCQ_IMM(0x123456789ull)));
            bool one = r.ndw == 7 && r.dw[0] == nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_SET_SEMAPHORE_A, 4) &&
                       r.dw[3] == 0x23456789u && r.dw[4] == 1 && (r.dw[6] & NV_COPY_DMA_SEMAPHORE_PAYLOAD_64);
            bool two = r.ndw == 12 && r.dw[0] == nv_mthd_header(NV_SEC_OP_INC, NV_SUBCH_COPY, NV_COPY_SET_SEMAPHORE_A, 3) &&
                       r.dw[3] == 0x23456789u && r.dw[8] == 0x1004 && r.dw[9] == 1;
            cr_assert_eq(path == NV_CE_REL64 ? one : two, cases[m].ce, "%s path %d: %u dwords, first 0x%08x",
                         cases[m].model, path, r.ndw, r.dw[0]);
            drv_rec_fini(&r);
            /* and the value arrives whole */
            hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COPY));
            hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
            T_OK(hcq_queue_signal(q, s, HCQ_IMM(0x500000007ull)));
            T_OK(hcq_queue_submit(q, NULL, 0));
            T_OK(hcq_signal_wait(s, 0x500000007ull, 2000000000ull));
            cr_assert_eq(hcq_signal_value(s), 0x500000007ull, "%s", cases[m].model);
            T_OK(hcq_queue_destroy(q));
            hcq_signal_destroy(s);
            T_OK(hcq_device_close(d));
        }
    }
}

/* ** NV 5: the Xid table (nverror.h) and the name control's union */
Test(nv_ready, xids_of_copy_engines_and_other_units)
{
    const uint32_t ce[] = {39, 40, 41, 70, 71, 72, 75, 76, 77, 85};
    for (uint32_t n = 0; n < 10; n++) {
        cr_assert_eq(nv_xid_ce(n), ce[n]);
        cr_assert_eq(nv_xid_ce_index(ce[n]), (int)n);
    }
    cr_assert_eq(nv_xid_ce(10), 126);
    cr_assert_eq(nv_xid_ce(19), 135);
    for (uint32_t x = 56; x <= 64; x++) cr_assert_eq(nv_xid_ce_index(x), -1, "Xid %u is not a copy engine's", x);
}

Test(nv_ready, a_copy_engine_error_names_its_engine_and_xid)
{
    hcq_device *d = open_nv("NV:0");
    drv_rec r;
    drv_rec_init(&r, d, HCQ_QUEUE_COPY);
    cr_assert(nv_mthd(&r, NV_SUBCH_COPY, NV_COPY_LAUNCH_DMA, 1));
    drv_rec_dw(&r, NV_COPY_DMA_TRANSFER_TYPE(2)); /* block linear: the mock's copy engine refuses it */
    T_OK(nv_submit(d, &r));
    drv_rec_fini(&r);
    hcq_status st = HCQ_OK;
    for (int i = 0; i < 2000 && !(st = hcq_device_status(d)); i++) base_sleep_ns(1000000);
    cr_assert_eq(st, HCQ_EFAULT, "%s", hcq_error_message());
    T_MSG_HAS("ROBUST_CHANNEL_CE2_ERROR (a copy engine error) (Xid 41)");
    T_MSG_HAS("copy channel");
    T_OK(hcq_device_close(d));
}

/* the mock leaves junk past the 64-byte ASCII member, as RM may */
Test(nv_ready, the_gpu_name_is_read_from_the_64_byte_ascii_member)
{
    hcq_device *d = open_nv("NV:0");
    cr_assert_str_eq(hcq_device_get_props(d)->name, "NVIDIA H100 80GB HBM3");
    T_OK(hcq_device_close(d));
}

/* ** NV 6: a release with a timestamp needs a 16-byte aligned address
 * (dev_pbdma.ref.txt SEM_EXECUTE): refused when recorded (or submitted,
 * for a variable), and the mock's PBDMA faults on one */
Test(nv_ready, misaligned_signal_and_timestamp_addresses_are_refused)
{
    hcq_device *d = open_nv("NV:0");
    hcq_signal *s = T_NONNULL(hcq_signal_create(d, 0));
    uint64_t va = hcq_signal_va(s);
    cr_assert_eq(va & 15, 0, "signals are 16-byte slots");
    hcq_queue *q = T_NONNULL(hcq_queue_create(d, HCQ_QUEUE_COMPUTE));
    T_FAILS(hcq_queue_signal_at(q, HCQ_IMM(va + 8), HCQ_IMM(1)), HCQ_EINVAL);
    T_MSG_HAS("16-byte aligned");
    T_FAILS(hcq_queue_timestamp_at(q, HCQ_IMM(va + 4)), HCQ_EINVAL);
    T_FAILS(hcq_queue_wait_at(q, HCQ_IMM(va + 4), HCQ_IMM(1)), HCQ_EINVAL);
    T_MSG_HAS("8-byte aligned");
    cr_assert_eq(hcq_queue_command_count(q), 0, "a refused command records nothing");
    /* a variable address is checked when submitted */
    T_OK(hcq_queue_signal_at(q, HCQ_VAR(0), HCQ_IMM(3)));
    uint64_t bad = va + 8;
    T_FAILS(hcq_queue_submit(q, &bad, 1), HCQ_EINVAL);
    T_MSG_HAS("16-byte aligned");
    T_OK(hcq_queue_submit(q, &va, 1));
    T_OK(hcq_signal_wait(s, 3, 2000000000ull));
    T_OK(hcq_queue_destroy(q));

    /* the mock's host faults on a misaligned release with a timestamp */
    drv_rec r;
    drv_rec_init(&r, d, HCQ_QUEUE_COMPUTE);
    nv_sem_release(&r, HCQ_IMM(va + 8), HCQ_IMM(1), true);
    T_OK(nv_submit(d, &r));
    drv_rec_fini(&r);
    hcq_status st = HCQ_OK;
    for (int i = 0; i < 2000 && !(st = hcq_device_status(d)); i++) base_sleep_ns(1000000);
    cr_assert_eq(st, HCQ_EFAULT, "%s", hcq_error_message());
    T_MSG_HAS("ROBUST_CHANNEL_PBDMA_ERROR");
    hcq_signal_destroy(s);
    T_OK(hcq_device_close(d));
}

/* ** NV 7: the SM count is the enabled TPCs (GR GET_GPC_MASK/GET_TPC_MASK)
 * times SMs per TPC, not the die's litter counts (144 on GH100) */
Test(nv_ready, the_sm_count_is_what_floorsweeping_left)
{
    const struct {
        const char *model;
        uint32_t sms;
    } m[] = {{"nv=H100", 132}, {"nv=H100PCIe", 114}, {"nv=A100", 108}, {"nv=RTX3090", 82}, {"nv=RTX4090", 128}};
    for (size_t i = 0; i < BASE_ARRAY_LEN(m); i++) {
        T_OK(mock_configure(m[i].model));
        hcq_device *d = open_nv("NV:0");
        cr_assert_eq(hcq_device_get_props(d)->compute_units, m[i].sms, "%s: %u SMs", m[i].model,
                     hcq_device_get_props(d)->compute_units);
        T_OK(hcq_device_close(d));
    }
}

/* ** NV 8: copies between GPUs run on the source's copy engine through a
 * peer mapping of the destination (UVM peer access), kernels read a
 * peer's buffer, and without a peer path both go through host memory; the
 * debug log says which path ran */
#include "mem/mem.h"

static hcq_status copy_logged(hcq_buffer *dst, hcq_buffer *src, uint64_t size, char *log, size_t log_size)
{
    setenv("HCQ_DEBUG", "1", 1);
    base_env_reload();
    t_stderr c = t_stderr_begin();
    hcq_status s = hcq_buffer_copy(dst, 0, src, 0, size);
    t_stderr_end(c, log, log_size);
    unsetenv("HCQ_DEBUG");
    base_env_reload();
    return s;
}

static void peer_case(const char *spec, bool peer)
{
    T_OK(mock_configure(spec));
    hcq_device *d0 = open_nv("NV:0"), *d1 = open_nv("NV:1");
    enum { N = 5000 };
    uint32_t host[N], out[N];
    for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 5 + 1;
    hcq_buffer *b0 = t_buffer_from(d0, host, sizeof host);
    hcq_buffer *b1 = T_NONNULL(hcq_buffer_alloc(d1, sizeof host, HCQ_MEM_DEVICE));
    char log[4096];
    T_OK(copy_logged(b1, b0, sizeof host, log, sizeof log));
    cr_assert(strstr(log, peer ? "through a peer mapping" : "through host memory"), "%s: %s", spec, log);
    cr_assert_eq(b1->mem.peers != 0, peer, "%s: the destination's peer mappings 0x%x", spec, b1->mem.peers);
    t_read(b1, out, sizeof out);
    for (int i = 0; i < N; i++) cr_assert_eq(out[i], host[i], "%s: element %d", spec, i);
    /* a kernel on NV:0 adds one to NV:1's buffer through the same mapping */
    hcq_program *p0 = t_load(d0, t_k_add1());
    hcq_arg a[2] = {hcq_arg_buffer(b1), hcq_arg_u32(N)};
    if (peer) {
        T_OK(hcq_launch(p0, a, 2, hcq_dims_1d((N + 63) / 64, 64)));
        T_OK(hcq_device_synchronize(d0));
        t_read(b1, out, sizeof out);
        for (int i = 0; i < N; i++) cr_assert_eq(out[i], host[i] + 1, "%s: element %d", spec, i);
    } else {
        T_FAILS(hcq_launch(p0, a, 2, hcq_dims_1d((N + 63) / 64, 64)), HCQ_EINVAL);
        T_MSG_HAS("no peer path");
    }
    T_OK(hcq_program_free(p0));
    T_OK(hcq_buffer_free(b0));
    T_OK(hcq_buffer_free(b1));
    T_OK(hcq_device_close(d0));
    T_OK(hcq_device_close(d1));
    cr_assert_eq(mock_nv_live_objects(), 0);
}

Test(nv_ready, gpus_copy_to_each_other_through_peer_mappings_over_pcie) { peer_case("nv=H100x2", true); }
Test(nv_ready, nvlink_peers_need_no_request) { peer_case("nv=H100x2,nv_peer=nvlink", true); }
Test(nv_ready, without_a_peer_path_copies_bounce_through_host_memory) { peer_case("nv=H100x2,nv_peer=none", false); }
