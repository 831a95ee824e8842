/* The AMD device files, for the tracer: kfd commands by name with their
 * key fields in and out, from the AMD backend's ABI definitions
 * (drivers/amd/amd_abi.h). The render node's DRM and amdgpu ioctls are in
 * trace_drm.c. The tracer hands decoders a copy of the argument; nested
 * arrays (WAIT_EVENTS' events) are read with trace_read after the call.
 * With stream capture on, the queues KFD creates go to trace_streams.c. */
#include "drivers/trace.h"

#include "drivers/amd/amd_abi.h"

#include <string.h>

static bool is_kfd(const char *p) { return !strcmp(p, "/dev/kfd"); }

static const char *kfd_name(unsigned long request) { return kfd_ioctl_name(request); }

static void kfd_fields(trace_line *l, const trace_call *c)
{
    const void *arg = c->arg;
    unsigned long req = c->req;
    bool before = c->before, ok = !before && c->ret >= 0;
    if (!arg || AMD_IOC_TYPE(req) != 'K') return;
    switch (AMD_IOC_NR(req)) {
    case 0x01: {
        const kfd_get_version_args *a = arg;
        if (!before && ok) {
            trace_u64(l, "major", a->major_version);
            trace_u64(l, "minor", a->minor_version);
        }
        break;
    }
    case 0x02: {
        const kfd_create_queue_args *a = arg;
        if (before) {
            static const char *types[] = {"compute", "sdma", "compute_aql", "sdma_xgmi", "sdma_by_eng_id"};
            trace_str(l, "type", a->queue_type < 5 ? types[a->queue_type] : "?");
            trace_u64(l, "gpu_id", a->gpu_id);
            trace_hex(l, "ring", a->ring_base_address);
            trace_u64(l, "ring_size", a->ring_size);
            trace_hex(l, "wptr", a->write_pointer_address);
            trace_hex(l, "rptr", a->read_pointer_address);
            if (a->eop_buffer_address) {
                trace_hex(l, "eop", a->eop_buffer_address);
                trace_u64(l, "eop_size", a->eop_buffer_size);
                trace_hex(l, "ctx_save", a->ctx_save_restore_address);
                trace_hex(l, "ctx_save_size", a->ctx_save_restore_size);
                trace_hex(l, "ctl_stack_size", a->ctl_stack_size);
            }
        } else if (ok) {
            trace_u64(l, "queue_id", a->queue_id);
            trace_hex(l, "doorbell_offset", a->doorbell_offset);
            if (tracer_streams(c->t))
                trace_streams_amd_queue(tracer_streams(c->t), a->queue_id, a->queue_type, a->gpu_id,
                                        a->ring_base_address, a->ring_size, a->write_pointer_address,
                                        a->read_pointer_address);
        }
        break;
    }
    case 0x03:
        if (before) trace_u64(l, "queue_id", ((const kfd_destroy_queue_args *)arg)->queue_id);
        else if (ok && tracer_streams(c->t))
            trace_streams_amd_queue_gone(tracer_streams(c->t), ((const kfd_destroy_queue_args *)arg)->queue_id);
        break;
    case 0x08: {
        const kfd_create_event_args *a = arg;
        if (before) {
            trace_u64(l, "type", a->event_type);
            trace_u64(l, "auto_reset", a->auto_reset);
            if (a->event_page_offset) trace_hex(l, "event_page", a->event_page_offset);
        } else if (ok) {
            trace_u64(l, "event_id", a->event_id);
            trace_u64(l, "slot", a->event_slot_index);
        }
        break;
    }
    case 0x09:
        if (before) trace_u64(l, "event_id", ((const kfd_destroy_event_args *)arg)->event_id);
        break;
    case 0x0C: {
        const kfd_wait_events_args *a = arg;
        if (before) {
            trace_u64(l, "events", a->num_events);
            trace_u64(l, "all", a->wait_for_all);
            trace_u64(l, "timeout_ms", a->timeout);
        } else if (ok) {
            trace_str(l, "result", a->wait_result == KFD_WAIT_COMPLETE ? "complete"
                                   : a->wait_result == KFD_WAIT_TIMEOUT ? "timeout" : "fail");
            kfd_event_data d[8];
            uint32_t n = a->num_events < 8 ? a->num_events : 8;
            if (a->events_ptr && trace_read(d, a->events_ptr, n * sizeof d[0]))
                for (uint32_t i = 0; i < n; i++)
                    if (d[i].memory_exception_data.gpu_id) {
                        trace_hex(l, "fault_va", d[i].memory_exception_data.va);
                        trace_u64(l, "fault_gpu", d[i].memory_exception_data.gpu_id);
                    }
        }
        break;
    }
    case 0x15: {
        const kfd_acquire_vm_args *a = arg;
        if (before) {
            trace_u64(l, "drm_fd", a->drm_fd);
            trace_u64(l, "gpu_id", a->gpu_id);
        }
        break;
    }
    case 0x16: {
        const kfd_alloc_memory_args *a = arg;
        if (before) {
            trace_hex(l, "va", a->va_addr);
            trace_u64(l, "size", a->size);
            trace_u64(l, "gpu_id", a->gpu_id);
            trace_str(l, "domain", a->flags & KFD_ALLOC_VRAM ? "vram" : a->flags & KFD_ALLOC_GTT ? "gtt"
                                   : a->flags & KFD_ALLOC_USERPTR ? "userptr" : "other");
            trace_hex(l, "flags", a->flags);
        } else if (ok) {
            trace_hex(l, "handle", a->handle);
            trace_hex(l, "mmap_offset", a->mmap_offset);
        }
        break;
    }
    case 0x17:
        if (before) trace_hex(l, "handle", ((const kfd_free_memory_args *)arg)->handle);
        break;
    case 0x18:
    case 0x19: {
        const kfd_map_memory_args *a = arg;
        if (before) {
            trace_hex(l, "handle", a->handle);
            trace_u64(l, "devices", a->n_devices);
        } else if (ok) {
            trace_u64(l, "done", a->n_success);
        }
        break;
    }
    case 0x25:
        if (before) trace_hex(l, "mode", ((const kfd_runtime_enable_args *)arg)->mode_mask);
        break;
    }
}

const trace_decoder trace_kfd_decoder = {"kfd", is_kfd, kfd_name, NULL, kfd_fields};
