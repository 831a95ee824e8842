/* hcq's own definitions of the kernel ABI (drivers/amd/amd_abi.h for
 * amdkfd, drivers/amd/amd_drm.h for DRM and amdgpu) against the headers
 * Debian ships: linux-libc-dev's linux/kfd_ioctl.h and libdrm-dev's
 * amdgpu_drm.h. Every size and field offset is a _Static_assert, so a
 * wrong one fails this file's build; the test itself says which headers
 * it was checked against (and skips, saying so, where they are absent:
 * scripts/deps.sh installs both). Where Debian's header is older than the
 * ABI hcq speaks (KFD 1.11 there, 1.17 here), the common prefix is
 * checked and the newer fields' place after it. */
#include <criterion/criterion.h>
#include <stddef.h>

#include "drivers/amd/amd_abi.h"
#include "drivers/amd/amd_drm.h"

TestSuite(amd_abi_headers);

#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), #ours " vs " #theirs)
#define SAME_OFF(ours, f1, theirs, f2)                                                                        \
    _Static_assert(offsetof(ours, f1) == offsetof(theirs, f2) &&                                            \
                       sizeof(((ours *)0)->f1) == sizeof(((theirs *)0)->f2),                                 \
                   #ours "." #f1 " vs " #theirs "." #f2)

#if __has_include(<linux/kfd_ioctl.h>)
#define HAVE_KFD 1
#include <linux/kfd_ioctl.h> /* <drm/drm.h> is tests/support/drm/drm.h */

SAME_SIZE(kfd_get_version_args, struct kfd_ioctl_get_version_args);
SAME_OFF(kfd_get_version_args, minor_version, struct kfd_ioctl_get_version_args, minor_version);
/* create_queue: 1.17 added sdma_engine_id and pad after ctl_stack_size */
#define CQ struct kfd_ioctl_create_queue_args
SAME_OFF(kfd_create_queue_args, ring_base_address, CQ, ring_base_address);
SAME_OFF(kfd_create_queue_args, write_pointer_address, CQ, write_pointer_address);
SAME_OFF(kfd_create_queue_args, read_pointer_address, CQ, read_pointer_address);
SAME_OFF(kfd_create_queue_args, doorbell_offset, CQ, doorbell_offset);
SAME_OFF(kfd_create_queue_args, ring_size, CQ, ring_size);
SAME_OFF(kfd_create_queue_args, gpu_id, CQ, gpu_id);
SAME_OFF(kfd_create_queue_args, queue_type, CQ, queue_type);
SAME_OFF(kfd_create_queue_args, queue_percentage, CQ, queue_percentage);
SAME_OFF(kfd_create_queue_args, queue_priority, CQ, queue_priority);
SAME_OFF(kfd_create_queue_args, queue_id, CQ, queue_id);
SAME_OFF(kfd_create_queue_args, eop_buffer_address, CQ, eop_buffer_address);
SAME_OFF(kfd_create_queue_args, eop_buffer_size, CQ, eop_buffer_size);
SAME_OFF(kfd_create_queue_args, ctx_save_restore_address, CQ, ctx_save_restore_address);
SAME_OFF(kfd_create_queue_args, ctx_save_restore_size, CQ, ctx_save_restore_size);
SAME_OFF(kfd_create_queue_args, ctl_stack_size, CQ, ctl_stack_size);
#if KFD_IOCTL_MINOR_VERSION >= 17
SAME_SIZE(kfd_create_queue_args, CQ);
SAME_OFF(kfd_create_queue_args, sdma_engine_id, CQ, sdma_engine_id);
#else
_Static_assert(sizeof(CQ) == KFD_CREATE_QUEUE_ARGS_1_15, "the form before 1.17 is 88 bytes");
_Static_assert(offsetof(kfd_create_queue_args, sdma_engine_id) == sizeof(CQ), "1.17's fields follow the old form");
#endif
SAME_SIZE(kfd_destroy_queue_args, struct kfd_ioctl_destroy_queue_args);
#define CE struct kfd_ioctl_create_event_args
SAME_SIZE(kfd_create_event_args, CE);
SAME_OFF(kfd_create_event_args, event_page_offset, CE, event_page_offset);
SAME_OFF(kfd_create_event_args, event_trigger_data, CE, event_trigger_data);
SAME_OFF(kfd_create_event_args, event_type, CE, event_type);
SAME_OFF(kfd_create_event_args, auto_reset, CE, auto_reset);
SAME_OFF(kfd_create_event_args, node_id, CE, node_id);
SAME_OFF(kfd_create_event_args, event_id, CE, event_id);
SAME_OFF(kfd_create_event_args, event_slot_index, CE, event_slot_index);
SAME_SIZE(kfd_destroy_event_args, struct kfd_ioctl_destroy_event_args);
SAME_SIZE(kfd_memory_exception_failure, struct kfd_memory_exception_failure);
SAME_OFF(kfd_memory_exception_failure, imprecise, struct kfd_memory_exception_failure, imprecise);
#define ME struct kfd_hsa_memory_exception_data
SAME_SIZE(kfd_memory_exception_data, ME);
SAME_OFF(kfd_memory_exception_data, va, ME, va);
SAME_OFF(kfd_memory_exception_data, gpu_id, ME, gpu_id);
SAME_OFF(kfd_memory_exception_data, error_type, ME, ErrorType);
#define HE struct kfd_hsa_hw_exception_data
SAME_SIZE(kfd_hw_exception_data, HE);
SAME_OFF(kfd_hw_exception_data, reset_cause, HE, reset_cause);
SAME_OFF(kfd_hw_exception_data, memory_lost, HE, memory_lost);
SAME_OFF(kfd_hw_exception_data, gpu_id, HE, gpu_id);
#define ED struct kfd_event_data
SAME_SIZE(kfd_event_data, ED);
SAME_OFF(kfd_event_data, memory_exception_data, ED, memory_exception_data);
SAME_OFF(kfd_event_data, kfd_event_data_ext, ED, kfd_event_data_ext);
SAME_OFF(kfd_event_data, event_id, ED, event_id);
#define WE struct kfd_ioctl_wait_events_args
SAME_SIZE(kfd_wait_events_args, WE);
SAME_OFF(kfd_wait_events_args, events_ptr, WE, events_ptr);
SAME_OFF(kfd_wait_events_args, num_events, WE, num_events);
SAME_OFF(kfd_wait_events_args, wait_for_all, WE, wait_for_all);
SAME_OFF(kfd_wait_events_args, timeout, WE, timeout);
SAME_OFF(kfd_wait_events_args, wait_result, WE, wait_result);
SAME_SIZE(kfd_acquire_vm_args, struct kfd_ioctl_acquire_vm_args);
SAME_OFF(kfd_acquire_vm_args, gpu_id, struct kfd_ioctl_acquire_vm_args, gpu_id);
#define AM struct kfd_ioctl_alloc_memory_of_gpu_args
SAME_SIZE(kfd_alloc_memory_args, AM);
SAME_OFF(kfd_alloc_memory_args, va_addr, AM, va_addr);
SAME_OFF(kfd_alloc_memory_args, size, AM, size);
SAME_OFF(kfd_alloc_memory_args, handle, AM, handle);
SAME_OFF(kfd_alloc_memory_args, mmap_offset, AM, mmap_offset);
SAME_OFF(kfd_alloc_memory_args, gpu_id, AM, gpu_id);
SAME_OFF(kfd_alloc_memory_args, flags, AM, flags);
SAME_SIZE(kfd_free_memory_args, struct kfd_ioctl_free_memory_of_gpu_args);
#define MM struct kfd_ioctl_map_memory_to_gpu_args
SAME_SIZE(kfd_map_memory_args, MM);
SAME_OFF(kfd_map_memory_args, device_ids_array_ptr, MM, device_ids_array_ptr);
SAME_OFF(kfd_map_memory_args, n_devices, MM, n_devices);
SAME_OFF(kfd_map_memory_args, n_success, MM, n_success);
SAME_SIZE(kfd_map_memory_args, struct kfd_ioctl_unmap_memory_from_gpu_args);
SAME_SIZE(kfd_available_memory_args, struct kfd_ioctl_get_available_memory_args);
SAME_OFF(kfd_available_memory_args, gpu_id, struct kfd_ioctl_get_available_memory_args, gpu_id);
#define PA struct kfd_process_device_apertures
SAME_SIZE(kfd_apertures, PA);
SAME_OFF(kfd_apertures, scratch_base, PA, scratch_base);
SAME_OFF(kfd_apertures, gpuvm_limit, PA, gpuvm_limit);
SAME_OFF(kfd_apertures, gpu_id, PA, gpu_id);
SAME_SIZE(kfd_get_apertures_new_args, struct kfd_ioctl_get_process_apertures_new_args);
SAME_OFF(kfd_get_apertures_new_args, num_of_nodes, struct kfd_ioctl_get_process_apertures_new_args, num_of_nodes);
#define TC struct kfd_ioctl_get_tile_config_args
SAME_SIZE(kfd_get_tile_config_args, TC);
SAME_OFF(kfd_get_tile_config_args, num_macro_tile_configs, TC, num_macro_tile_configs);
SAME_OFF(kfd_get_tile_config_args, gb_addr_config, TC, gb_addr_config);
SAME_OFF(kfd_get_tile_config_args, num_ranks, TC, num_ranks);
#define MP struct kfd_ioctl_set_memory_policy_args
SAME_SIZE(kfd_set_memory_policy_args, MP);
SAME_OFF(kfd_set_memory_policy_args, gpu_id, MP, gpu_id);
SAME_OFF(kfd_set_memory_policy_args, alternate_policy, MP, alternate_policy);
#define CC struct kfd_ioctl_get_clock_counters_args
SAME_SIZE(kfd_get_clock_counters_args, CC);
SAME_OFF(kfd_get_clock_counters_args, system_clock_freq, CC, system_clock_freq);
SAME_OFF(kfd_get_clock_counters_args, gpu_id, CC, gpu_id);
SAME_SIZE(kfd_set_scratch_backing_va_args, struct kfd_ioctl_set_scratch_backing_va_args);
SAME_SIZE(kfd_set_trap_handler_args, struct kfd_ioctl_set_trap_handler_args);
SAME_OFF(kfd_set_trap_handler_args, gpu_id, struct kfd_ioctl_set_trap_handler_args, gpu_id);
SAME_SIZE(kfd_set_xnack_mode_args, struct kfd_ioctl_set_xnack_mode_args);
SAME_SIZE(kfd_event_id_args, struct kfd_ioctl_set_event_args);
SAME_SIZE(kfd_event_id_args, struct kfd_ioctl_reset_event_args);
/* the commands: the table's rows against the header's AMDKFD_IOC_* */
_Static_assert(KFD_IOC(GET_VERSION) == AMDKFD_IOC_GET_VERSION, "GET_VERSION");
_Static_assert(KFD_IOC(DESTROY_QUEUE) == AMDKFD_IOC_DESTROY_QUEUE, "DESTROY_QUEUE");
_Static_assert(KFD_IOC(CREATE_EVENT) == AMDKFD_IOC_CREATE_EVENT, "CREATE_EVENT");
_Static_assert(KFD_IOC(DESTROY_EVENT) == AMDKFD_IOC_DESTROY_EVENT, "DESTROY_EVENT");
_Static_assert(KFD_IOC(WAIT_EVENTS) == AMDKFD_IOC_WAIT_EVENTS, "WAIT_EVENTS");
_Static_assert(KFD_IOC(ACQUIRE_VM) == AMDKFD_IOC_ACQUIRE_VM, "ACQUIRE_VM");
_Static_assert(KFD_IOC(GET_PROCESS_APERTURES_NEW) == AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, "GET_PROCESS_APERTURES_NEW");
_Static_assert(KFD_IOC(ALLOC_MEMORY_OF_GPU) == AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, "ALLOC_MEMORY_OF_GPU");
_Static_assert(KFD_IOC(FREE_MEMORY_OF_GPU) == AMDKFD_IOC_FREE_MEMORY_OF_GPU, "FREE_MEMORY_OF_GPU");
_Static_assert(KFD_IOC(MAP_MEMORY_TO_GPU) == AMDKFD_IOC_MAP_MEMORY_TO_GPU, "MAP_MEMORY_TO_GPU");
_Static_assert(KFD_IOC(UNMAP_MEMORY_FROM_GPU) == AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, "UNMAP_MEMORY_FROM_GPU");
_Static_assert(KFD_IOC(AVAILABLE_MEMORY) == AMDKFD_IOC_AVAILABLE_MEMORY, "AVAILABLE_MEMORY");
_Static_assert(KFD_IOC(SET_MEMORY_POLICY) == AMDKFD_IOC_SET_MEMORY_POLICY, "SET_MEMORY_POLICY");
_Static_assert(KFD_IOC(GET_CLOCK_COUNTERS) == AMDKFD_IOC_GET_CLOCK_COUNTERS, "GET_CLOCK_COUNTERS");
_Static_assert(KFD_IOC(SET_EVENT) == AMDKFD_IOC_SET_EVENT && KFD_IOC(RESET_EVENT) == AMDKFD_IOC_RESET_EVENT, "events");
_Static_assert(KFD_IOC(SET_SCRATCH_BACKING_VA) == AMDKFD_IOC_SET_SCRATCH_BACKING_VA, "SET_SCRATCH_BACKING_VA");
_Static_assert(KFD_IOC(GET_TILE_CONFIG) == AMDKFD_IOC_GET_TILE_CONFIG, "GET_TILE_CONFIG");
_Static_assert(KFD_IOC(SET_TRAP_HANDLER) == AMDKFD_IOC_SET_TRAP_HANDLER, "SET_TRAP_HANDLER");
_Static_assert(KFD_IOC(SET_XNACK_MODE) == AMDKFD_IOC_SET_XNACK_MODE, "SET_XNACK_MODE");
#if KFD_IOCTL_MINOR_VERSION >= 17
_Static_assert(KFD_IOC(CREATE_QUEUE) == AMDKFD_IOC_CREATE_QUEUE, "CREATE_QUEUE");
#else
_Static_assert(AMD_IOC(KFD_DIR_CREATE_QUEUE, KFD_NR_CREATE_QUEUE, KFD_CREATE_QUEUE_ARGS_1_15) == AMDKFD_IOC_CREATE_QUEUE,
               "CREATE_QUEUE in the header's (pre-1.17) form");
#endif
#endif

#if __has_include(<libdrm/amdgpu_drm.h>)
#define HAVE_AMDGPU 1
#include <libdrm/amdgpu_drm.h>

SAME_SIZE(drm_version_args, struct drm_version);
SAME_OFF(drm_version_args, name_len, struct drm_version, name_len);
SAME_OFF(drm_version_args, desc, struct drm_version, desc);
SAME_SIZE(drm_get_cap_args, struct drm_get_cap);
SAME_SIZE(drm_gem_close_args, struct drm_gem_close);
SAME_SIZE(drm_prime_handle_args, struct drm_prime_handle);
SAME_OFF(drm_prime_handle_args, fd, struct drm_prime_handle, fd);
SAME_SIZE(drm_syncobj_create_args, struct drm_syncobj_create);
SAME_SIZE(drm_syncobj_handle_args, struct drm_syncobj_handle);
SAME_OFF(drm_syncobj_handle_args, fd, struct drm_syncobj_handle, fd);
SAME_SIZE(amdgpu_gem_create_args, union drm_amdgpu_gem_create);
SAME_OFF(amdgpu_gem_create_args, in.domains, union drm_amdgpu_gem_create, in.domains);
SAME_OFF(amdgpu_gem_create_args, out.handle, union drm_amdgpu_gem_create, out.handle);
SAME_SIZE(amdgpu_gem_mmap_args, union drm_amdgpu_gem_mmap);
SAME_OFF(amdgpu_gem_mmap_args, out.addr_ptr, union drm_amdgpu_gem_mmap, out.addr_ptr);
SAME_SIZE(amdgpu_ctx_args, union drm_amdgpu_ctx);
SAME_OFF(amdgpu_ctx_args, in.priority, union drm_amdgpu_ctx, in.priority);
SAME_OFF(amdgpu_ctx_args, alloc.ctx_id, union drm_amdgpu_ctx, out.alloc.ctx_id);
SAME_OFF(amdgpu_ctx_args, state.reset_status, union drm_amdgpu_ctx, out.state.reset_status);
SAME_SIZE(amdgpu_bo_list_args, union drm_amdgpu_bo_list);
SAME_OFF(amdgpu_bo_list_args, in.bo_info_ptr, union drm_amdgpu_bo_list, in.bo_info_ptr);
SAME_SIZE(amdgpu_cs_args, union drm_amdgpu_cs);
SAME_OFF(amdgpu_cs_args, in.chunks, union drm_amdgpu_cs, in.chunks);
SAME_SIZE(amdgpu_cs_chunk, struct drm_amdgpu_cs_chunk);
SAME_OFF(amdgpu_cs_chunk, chunk_data, struct drm_amdgpu_cs_chunk, chunk_data);
SAME_SIZE(amdgpu_cs_chunk_ib, struct drm_amdgpu_cs_chunk_ib);
SAME_OFF(amdgpu_cs_chunk_ib, va_start, struct drm_amdgpu_cs_chunk_ib, va_start);
SAME_OFF(amdgpu_cs_chunk_ib, ring, struct drm_amdgpu_cs_chunk_ib, ring);
SAME_SIZE(amdgpu_info_args, struct drm_amdgpu_info);
SAME_OFF(amdgpu_info_args, query, struct drm_amdgpu_info, query);
SAME_OFF(amdgpu_info_args, query_hw_ip.ip_instance, struct drm_amdgpu_info, query_hw_ip.ip_instance);
SAME_OFF(amdgpu_info_args, read_mmr_reg.flags, struct drm_amdgpu_info, read_mmr_reg.flags);
SAME_OFF(amdgpu_info_args, query_fw.index, struct drm_amdgpu_info, query_fw.index);
SAME_OFF(amdgpu_info_args, sensor_info.type, struct drm_amdgpu_info, sensor_info.type);
SAME_SIZE(amdgpu_gem_wait_idle_args, union drm_amdgpu_gem_wait_idle);
SAME_OFF(amdgpu_gem_wait_idle_args, in.timeout, union drm_amdgpu_gem_wait_idle, in.timeout);
SAME_SIZE(amdgpu_gem_va_args, struct drm_amdgpu_gem_va);
SAME_OFF(amdgpu_gem_va_args, operation, struct drm_amdgpu_gem_va, operation);
SAME_OFF(amdgpu_gem_va_args, va_address, struct drm_amdgpu_gem_va, va_address);
SAME_OFF(amdgpu_gem_va_args, map_size, struct drm_amdgpu_gem_va, map_size);
SAME_SIZE(amdgpu_gem_op_args, struct drm_amdgpu_gem_op);
SAME_SIZE(amdgpu_gem_userptr_args, struct drm_amdgpu_gem_userptr);
SAME_SIZE(amdgpu_vm_args, union drm_amdgpu_vm);
SAME_SIZE(amdgpu_sched_args, union drm_amdgpu_sched);
#define DI struct drm_amdgpu_info_device
SAME_SIZE(amdgpu_info_device, DI);
SAME_OFF(amdgpu_info_device, max_engine_clock, DI, max_engine_clock);
SAME_OFF(amdgpu_info_device, cu_bitmap, DI, cu_bitmap);
SAME_OFF(amdgpu_info_device, ids_flags, DI, ids_flags);
SAME_OFF(amdgpu_info_device, virtual_address_offset, DI, virtual_address_offset);
SAME_OFF(amdgpu_info_device, virtual_address_alignment, DI, virtual_address_alignment);
SAME_OFF(amdgpu_info_device, vram_type, DI, vram_type);
SAME_OFF(amdgpu_info_device, prim_buf_gpu_addr, DI, prim_buf_gpu_addr);
SAME_OFF(amdgpu_info_device, wave_front_size, DI, wave_front_size);
SAME_OFF(amdgpu_info_device, num_tcc_blocks, DI, num_tcc_blocks);
SAME_OFF(amdgpu_info_device, cu_ao_bitmap, DI, cu_ao_bitmap);
SAME_OFF(amdgpu_info_device, high_va_offset, DI, high_va_offset);
SAME_OFF(amdgpu_info_device, high_va_max, DI, high_va_max);
SAME_OFF(amdgpu_info_device, tcc_disabled_mask, DI, tcc_disabled_mask);
SAME_SIZE(amdgpu_info_vram_gtt, struct drm_amdgpu_info_vram_gtt);
SAME_SIZE(amdgpu_heap_info, struct drm_amdgpu_heap_info);
SAME_SIZE(amdgpu_info_memory, struct drm_amdgpu_memory_info);
SAME_OFF(amdgpu_info_memory, gtt, struct drm_amdgpu_memory_info, gtt);
SAME_SIZE(amdgpu_info_hw_ip, struct drm_amdgpu_info_hw_ip);
SAME_OFF(amdgpu_info_hw_ip, available_rings, struct drm_amdgpu_info_hw_ip, available_rings);
SAME_SIZE(amdgpu_info_firmware, struct drm_amdgpu_info_firmware);
_Static_assert(AMDGPU_FAMILY_AI == 141 && AMDGPU_VRAM_TYPE_HBM == 6, "AMDGPU_FAMILY_AI, AMDGPU_VRAM_TYPE_HBM");
_Static_assert(AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_INFO, amdgpu_info_args) == DRM_IOCTL_AMDGPU_INFO, "AMDGPU_INFO");
_Static_assert(AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_GEM_CREATE, amdgpu_gem_create_args) == DRM_IOCTL_AMDGPU_GEM_CREATE,
               "AMDGPU_GEM_CREATE");
_Static_assert(DRM_IOCTL_VERSION_NUM == DRM_IOCTL_VERSION, "DRM_IOCTL_VERSION");
#endif

Test(amd_abi_headers, layouts_match_the_debian_headers)
{
#if !defined(HAVE_KFD) || !defined(HAVE_AMDGPU)
    cr_skip_test("linux/kfd_ioctl.h (linux-libc-dev) or libdrm/amdgpu_drm.h (libdrm-dev) is not installed: the layouts "
                 "were not checked (scripts/deps.sh installs both)");
#else
    /* the checks are the _Static_asserts above: this build passed them */
    cr_assert_geq(KFD_IOCTL_MAJOR_VERSION, 1);
    cr_log_info("checked against kfd_ioctl.h %d.%d and libdrm's amdgpu_drm.h", KFD_IOCTL_MAJOR_VERSION,
                KFD_IOCTL_MINOR_VERSION);
#endif
}
