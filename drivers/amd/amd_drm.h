/* drivers/amd/amd_drm.h: the DRM core and amdgpu ioctls of a render node,
 * as our own definitions, for the tracer's decoder (drivers/trace_drm.c).
 * hcq itself makes none of these calls (its AMD backend speaks kfd and only
 * mmaps the render node), but the programs `hcq trace` watches (ROCm's
 * runtime, Mesa, libdrm) do.
 *
 * The structs mirror include/uapi/drm/drm.h and include/uapi/drm/amdgpu_drm.h
 * of torvalds/linux field for field, and the asserts pin their sizes and the
 * request numbers to those headers, so a mistake fails the build. Only the
 * fields the decoder shows are named. */
#ifndef HCQ_DRIVERS_AMD_DRM_H
#define HCQ_DRIVERS_AMD_DRM_H

#include <stddef.h>
#include <stdint.h>

/* _IOC(dir, 'd', nr, size) as linux/ioctl.h encodes it */
#define DRM_IOC(dir, nr, size) (((unsigned long)(dir) << 30) | ((unsigned long)(size) << 16) | (0x64ul << 8) | (nr))
#define DRM_IOC_W 1u
#define DRM_IOC_R 2u
#define DRM_IOC_WR 3u
#define DRM_IOC_TYPE(req) ((unsigned)(((req) >> 8) & 0xff))
#define DRM_IOC_NR(req) ((unsigned)((req) & 0xff))
#define DRM_IOC_SIZE(req) ((unsigned)(((req) >> 16) & 0x3fff))
#define DRM_COMMAND_BASE 0x40u /* driver ioctls start here */

/* ** DRM core */
typedef struct drm_version_args { /* struct drm_version */
    int32_t major, minor, patchlevel;
    uint32_t _pad;
    uint64_t name_len, name; /* size_t, char * */
    uint64_t date_len, date;
    uint64_t desc_len, desc;
} drm_version_args;
_Static_assert(sizeof(drm_version_args) == 64, "drm_version");
_Static_assert(offsetof(drm_version_args, name) == 24, "drm_version.name");

typedef struct drm_unique_args { /* struct drm_unique */
    uint64_t unique_len, unique;
} drm_unique_args;
_Static_assert(sizeof(drm_unique_args) == 16, "drm_unique");

typedef struct drm_get_cap_args { /* struct drm_get_cap, drm_set_client_cap */
    uint64_t capability, value;
} drm_get_cap_args;
_Static_assert(sizeof(drm_get_cap_args) == 16, "drm_get_cap");

typedef struct drm_gem_close_args {
    uint32_t handle, pad;
} drm_gem_close_args;
_Static_assert(sizeof(drm_gem_close_args) == 8, "drm_gem_close");

typedef struct drm_prime_handle_args {
    uint32_t handle, flags;
    int32_t fd;
} drm_prime_handle_args;
_Static_assert(sizeof(drm_prime_handle_args) == 12, "drm_prime_handle");

typedef struct drm_syncobj_create_args { /* also drm_syncobj_destroy {handle, pad} */
    uint32_t handle, flags;
} drm_syncobj_create_args;
_Static_assert(sizeof(drm_syncobj_create_args) == 8, "drm_syncobj_create");

typedef struct drm_syncobj_handle_args {
    uint32_t handle, flags;
    int32_t fd;
    uint32_t pad;
} drm_syncobj_handle_args;
_Static_assert(sizeof(drm_syncobj_handle_args) == 16, "drm_syncobj_handle");

typedef struct drm_syncobj_wait_args {
    uint64_t handles;
    int64_t timeout_nsec;
    uint32_t count_handles, flags, first_signaled, pad;
    uint64_t deadline_nsec;
} drm_syncobj_wait_args;
_Static_assert(sizeof(drm_syncobj_wait_args) == 40, "drm_syncobj_wait");

enum {
    DRM_NR_VERSION = 0x00,
    DRM_NR_GET_UNIQUE = 0x01,
    DRM_NR_GET_MAGIC = 0x02,
    DRM_NR_SET_VERSION = 0x07,
    DRM_NR_GEM_CLOSE = 0x09,
    DRM_NR_GEM_FLINK = 0x0a,
    DRM_NR_GEM_OPEN = 0x0b,
    DRM_NR_GET_CAP = 0x0c,
    DRM_NR_SET_CLIENT_CAP = 0x0d,
    DRM_NR_AUTH_MAGIC = 0x11,
    DRM_NR_PRIME_HANDLE_TO_FD = 0x2d,
    DRM_NR_PRIME_FD_TO_HANDLE = 0x2e,
    DRM_NR_SYNCOBJ_CREATE = 0xbf,
    DRM_NR_SYNCOBJ_DESTROY = 0xc0,
    DRM_NR_SYNCOBJ_HANDLE_TO_FD = 0xc1,
    DRM_NR_SYNCOBJ_FD_TO_HANDLE = 0xc2,
    DRM_NR_SYNCOBJ_WAIT = 0xc3,
    DRM_NR_SYNCOBJ_RESET = 0xc4,
    DRM_NR_SYNCOBJ_SIGNAL = 0xc5,
    DRM_NR_SYNCOBJ_TIMELINE_WAIT = 0xca,
    DRM_NR_SYNCOBJ_QUERY = 0xcb,
    DRM_NR_SYNCOBJ_TRANSFER = 0xcc,
    DRM_NR_SYNCOBJ_TIMELINE_SIGNAL = 0xcd,
};
#define DRM_IOCTL_VERSION_NUM DRM_IOC(DRM_IOC_WR, DRM_NR_VERSION, sizeof(drm_version_args))
_Static_assert(DRM_IOCTL_VERSION_NUM == 0xC0406400ul, "DRM_IOCTL_VERSION");
_Static_assert(DRM_IOC(DRM_IOC_WR, DRM_NR_GET_CAP, sizeof(drm_get_cap_args)) == 0xC010640Cul, "DRM_IOCTL_GET_CAP");

/* ** amdgpu (DRM_COMMAND_BASE + nr) */
enum {
    AMDGPU_NR_GEM_CREATE = 0x00,
    AMDGPU_NR_GEM_MMAP = 0x01,
    AMDGPU_NR_CTX = 0x02,
    AMDGPU_NR_BO_LIST = 0x03,
    AMDGPU_NR_CS = 0x04,
    AMDGPU_NR_INFO = 0x05,
    AMDGPU_NR_GEM_METADATA = 0x06,
    AMDGPU_NR_GEM_WAIT_IDLE = 0x07,
    AMDGPU_NR_GEM_VA = 0x08,
    AMDGPU_NR_WAIT_CS = 0x09,
    AMDGPU_NR_GEM_OP = 0x10,
    AMDGPU_NR_GEM_USERPTR = 0x11,
    AMDGPU_NR_WAIT_FENCES = 0x12,
    AMDGPU_NR_VM = 0x13,
    AMDGPU_NR_FENCE_TO_HANDLE = 0x14,
    AMDGPU_NR_SCHED = 0x15,
};

typedef union amdgpu_gem_create_args {
    struct {
        uint64_t bo_size, alignment, domains, domain_flags;
    } in;
    struct {
        uint32_t handle, pad;
    } out;
} amdgpu_gem_create_args;
_Static_assert(sizeof(amdgpu_gem_create_args) == 32, "drm_amdgpu_gem_create");
/* AMDGPU_GEM_DOMAIN_*: where a buffer may live */
enum { AMDGPU_DOMAIN_CPU = 1, AMDGPU_DOMAIN_GTT = 2, AMDGPU_DOMAIN_VRAM = 4, AMDGPU_DOMAIN_GDS = 8,
       AMDGPU_DOMAIN_GWS = 16, AMDGPU_DOMAIN_OA = 32, AMDGPU_DOMAIN_DOORBELL = 64 };

typedef union amdgpu_gem_mmap_args {
    struct {
        uint32_t handle, pad;
    } in;
    struct {
        uint64_t addr_ptr; /* the offset to mmap the render node at */
    } out;
} amdgpu_gem_mmap_args;
_Static_assert(sizeof(amdgpu_gem_mmap_args) == 8, "drm_amdgpu_gem_mmap");

typedef union amdgpu_ctx_args {
    struct {
        uint32_t op, flags, ctx_id;
        int32_t priority;
    } in;
    struct {
        uint32_t ctx_id, pad;
    } alloc;
    struct {
        uint64_t flags;
        uint32_t hangs, reset_status;
    } state;
} amdgpu_ctx_args;
_Static_assert(sizeof(amdgpu_ctx_args) == 16, "drm_amdgpu_ctx");

typedef union amdgpu_bo_list_args {
    struct {
        uint32_t operation, list_handle, bo_number, bo_info_size;
        uint64_t bo_info_ptr;
    } in;
    struct {
        uint32_t list_handle, pad;
    } out;
} amdgpu_bo_list_args;
_Static_assert(sizeof(amdgpu_bo_list_args) == 24, "drm_amdgpu_bo_list");

typedef union amdgpu_cs_args {
    struct {
        uint32_t ctx_id, bo_list_handle, num_chunks, flags;
        uint64_t chunks; /* u64 pointers to drm_amdgpu_cs_chunk */
    } in;
    struct {
        uint64_t handle; /* the submission's sequence number */
    } out;
} amdgpu_cs_args;
_Static_assert(sizeof(amdgpu_cs_args) == 24, "drm_amdgpu_cs");

typedef struct amdgpu_cs_chunk {
    uint32_t chunk_id, length_dw;
    uint64_t chunk_data;
} amdgpu_cs_chunk;
_Static_assert(sizeof(amdgpu_cs_chunk) == 16, "drm_amdgpu_cs_chunk");
enum { AMDGPU_CHUNK_IB = 1, AMDGPU_CHUNK_FENCE = 2, AMDGPU_CHUNK_DEPENDENCIES = 3 };

typedef struct amdgpu_cs_chunk_ib { /* AMDGPU_CHUNK_ID_IB */
    uint32_t pad, flags;
    uint64_t va_start;
    uint32_t ib_bytes, ip_type, ip_instance, ring;
} amdgpu_cs_chunk_ib;
_Static_assert(sizeof(amdgpu_cs_chunk_ib) == 32, "drm_amdgpu_cs_chunk_ib");

typedef struct amdgpu_info_args {
    uint64_t return_pointer;
    uint32_t return_size, query;
    union {
        struct {
            uint32_t id, pad;
        } mode_crtc;
        struct {
            uint32_t type, ip_instance;
        } query_hw_ip;
        struct {
            uint32_t dword_offset, count, instance, flags;
        } read_mmr_reg;
        struct {
            uint32_t fw_type, ip_instance, index, pad;
        } query_fw;
        struct {
            uint32_t type, offset;
        } vbios_info;
        struct {
            uint32_t type;
        } sensor_info;
        struct {
            uint32_t type;
        } video_cap;
    };
} amdgpu_info_args;
_Static_assert(sizeof(amdgpu_info_args) == 32, "drm_amdgpu_info");
/* AMDGPU_INFO_* queries */
enum {
    AMDGPU_INFO_ACCEL_WORKING = 0x00,
    AMDGPU_INFO_CRTC_FROM_ID = 0x01,
    AMDGPU_INFO_HW_IP_INFO = 0x02,
    AMDGPU_INFO_HW_IP_COUNT = 0x03,
    AMDGPU_INFO_TIMESTAMP = 0x05,
    AMDGPU_INFO_FW_VERSION = 0x0e,
    AMDGPU_INFO_NUM_BYTES_MOVED = 0x0f,
    AMDGPU_INFO_VRAM_USAGE = 0x10,
    AMDGPU_INFO_GTT_USAGE = 0x11,
    AMDGPU_INFO_GDS_CONFIG = 0x13,
    AMDGPU_INFO_VRAM_GTT = 0x14,
    AMDGPU_INFO_READ_MMR_REG = 0x15,
    AMDGPU_INFO_DEV_INFO = 0x16,
    AMDGPU_INFO_VIS_VRAM_USAGE = 0x17,
    AMDGPU_INFO_NUM_EVICTIONS = 0x18,
    AMDGPU_INFO_MEMORY = 0x19,
    AMDGPU_INFO_VCE_CLOCK_TABLE = 0x1a,
    AMDGPU_INFO_VBIOS = 0x1b,
    AMDGPU_INFO_NUM_HANDLES = 0x1c,
    AMDGPU_INFO_SENSOR = 0x1d,
    AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS = 0x1e,
    AMDGPU_INFO_VRAM_LOST_COUNTER = 0x1f,
    AMDGPU_INFO_RAS_ENABLED_FEATURES = 0x20,
    AMDGPU_INFO_VIDEO_CAPS = 0x21,
    AMDGPU_INFO_MAX_IBS = 0x22,
    AMDGPU_INFO_GPUVM_FAULT = 0x23,
};

typedef union amdgpu_gem_wait_idle_args {
    struct {
        uint32_t handle, flags;
        uint64_t timeout;
    } in;
    struct {
        uint32_t status, domain;
    } out;
} amdgpu_gem_wait_idle_args;
_Static_assert(sizeof(amdgpu_gem_wait_idle_args) == 16, "drm_amdgpu_gem_wait_idle");

typedef struct amdgpu_gem_va_args {
    uint32_t handle, _pad, operation, flags;
    uint64_t va_address, offset_in_bo, map_size;
} amdgpu_gem_va_args;
_Static_assert(sizeof(amdgpu_gem_va_args) == 40, "drm_amdgpu_gem_va");
enum { AMDGPU_VA_MAP = 1, AMDGPU_VA_UNMAP = 2, AMDGPU_VA_CLEAR = 3, AMDGPU_VA_REPLACE = 4 };

typedef union amdgpu_wait_cs_args {
    struct {
        uint64_t handle, timeout;
        uint32_t ip_type, ip_instance, ring, ctx_id;
    } in;
    struct {
        uint64_t status; /* 0: done; 1: still busy at the timeout */
    } out;
} amdgpu_wait_cs_args;
_Static_assert(sizeof(amdgpu_wait_cs_args) == 32, "drm_amdgpu_wait_cs");

typedef struct amdgpu_gem_op_args {
    uint32_t handle, op;
    uint64_t value;
} amdgpu_gem_op_args;
_Static_assert(sizeof(amdgpu_gem_op_args) == 16, "drm_amdgpu_gem_op");

typedef struct amdgpu_gem_userptr_args {
    uint64_t addr, size;
    uint32_t flags, handle;
} amdgpu_gem_userptr_args;
_Static_assert(sizeof(amdgpu_gem_userptr_args) == 24, "drm_amdgpu_gem_userptr");

typedef union amdgpu_wait_fences_args {
    struct {
        uint64_t fences;
        uint32_t fence_count, wait_all;
        uint64_t timeout_ns;
    } in;
    struct {
        uint32_t status, first_signaled;
    } out;
} amdgpu_wait_fences_args;
_Static_assert(sizeof(amdgpu_wait_fences_args) == 24, "drm_amdgpu_wait_fences");

typedef union amdgpu_vm_args {
    struct {
        uint32_t op, flags;
    } in;
    struct {
        uint64_t flags;
    } out;
} amdgpu_vm_args;
_Static_assert(sizeof(amdgpu_vm_args) == 8, "drm_amdgpu_vm");

typedef union amdgpu_fence_to_handle_args {
    struct {
        struct {
            uint32_t ctx_id, ip_type, ip_instance, ring;
            uint64_t seq_no;
        } fence;
        uint32_t what, pad;
    } in;
    struct {
        uint32_t handle;
    } out;
} amdgpu_fence_to_handle_args;
_Static_assert(sizeof(amdgpu_fence_to_handle_args) == 32, "drm_amdgpu_fence_to_handle");

typedef struct amdgpu_sched_args {
    uint32_t op, fd;
    int32_t priority;
    uint32_t ctx_id;
} amdgpu_sched_args;
_Static_assert(sizeof(amdgpu_sched_args) == 16, "drm_amdgpu_sched");

#define AMDGPU_IOCTL(dir, nr, type) DRM_IOC(dir, DRM_COMMAND_BASE + (nr), sizeof(type))
_Static_assert(AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_GEM_CREATE, amdgpu_gem_create_args) == 0xC0206440ul,
               "DRM_IOCTL_AMDGPU_GEM_CREATE");
_Static_assert(AMDGPU_IOCTL(DRM_IOC_W, AMDGPU_NR_INFO, amdgpu_info_args) == 0x40206445ul, "DRM_IOCTL_AMDGPU_INFO");
_Static_assert(AMDGPU_IOCTL(DRM_IOC_WR, AMDGPU_NR_CS, amdgpu_cs_args) == 0xC0186444ul, "DRM_IOCTL_AMDGPU_CS");

/* struct drm_amdgpu_info_device (AMDGPU_INFO_DEV_INFO): what libdrm's
 * amdgpu_device_initialize reads first. The kernel copies min(its size,
 * return_size) bytes: this is the layout of libdrm 2.4.114's header,
 * asserted against Debian's in tests/unit/test_amd_abi_headers.c. */
typedef struct amdgpu_info_device {
    uint32_t device_id, chip_rev, external_rev, pci_rev, family, num_shader_engines, num_shader_arrays_per_engine;
    uint32_t gpu_counter_freq; /* kHz */
    uint64_t max_engine_clock, max_memory_clock; /* kHz */
    uint32_t cu_active_number, cu_ao_mask, cu_bitmap[4][4];
    uint32_t enabled_rb_pipes_mask, num_rb_pipes, num_hw_gfx_contexts, _pad;
    uint64_t ids_flags, virtual_address_offset, virtual_address_max;
    uint32_t virtual_address_alignment, pte_fragment_size, gart_page_size, ce_ram_size, vram_type, vram_bit_width;
    uint32_t vce_harvest_config, gc_double_offchip_lds_buf;
    uint64_t prim_buf_gpu_addr, pos_buf_gpu_addr, cntl_sb_buf_gpu_addr, param_buf_gpu_addr;
    uint32_t prim_buf_size, pos_buf_size, cntl_sb_buf_size, param_buf_size;
    uint32_t wave_front_size, num_shader_visible_vgprs, num_cu_per_sh, num_tcc_blocks, gs_vgt_table_depth;
    uint32_t gs_prim_buffer_depth, max_gs_waves_per_vgt, _pad1, cu_ao_bitmap[4][4];
    uint64_t high_va_offset, high_va_max;
    uint32_t pa_sc_tile_steering_override;
    uint64_t tcc_disabled_mask;
} amdgpu_info_device;
_Static_assert(sizeof(amdgpu_info_device) == 368, "drm_amdgpu_info_device (libdrm 2.4.114)");
/* AMDGPU_FAMILY_*: the family field */
enum { AMDGPU_FAMILY_AI = 141, AMDGPU_FAMILY_GC_11_0_0 = 145 };
/* AMDGPU_VRAM_TYPE_* */
enum { AMDGPU_VRAM_TYPE_HBM = 6, AMDGPU_VRAM_TYPE_GDDR6 = 9 };

typedef struct amdgpu_info_vram_gtt { /* AMDGPU_INFO_VRAM_GTT */
    uint64_t vram_size, vram_cpu_accessible_size, gtt_size;
} amdgpu_info_vram_gtt;
typedef struct amdgpu_heap_info { /* struct drm_amdgpu_heap_info */
    uint64_t total_heap_size, usable_heap_size, heap_usage, max_allocation;
} amdgpu_heap_info;
typedef struct amdgpu_info_memory { /* AMDGPU_INFO_MEMORY */
    amdgpu_heap_info vram, cpu_accessible_vram, gtt;
} amdgpu_info_memory;
typedef struct amdgpu_info_hw_ip { /* AMDGPU_INFO_HW_IP_INFO */
    uint32_t hw_ip_version_major, hw_ip_version_minor;
    uint64_t capabilities_flags;
    uint32_t ib_start_alignment, ib_size_alignment, available_rings, _pad;
} amdgpu_info_hw_ip;
typedef struct amdgpu_info_firmware { /* AMDGPU_INFO_FW_VERSION */
    uint32_t ver, feature;
} amdgpu_info_firmware;

/* AMDGPU_HW_IP_*: the engine kind of a CS or a query */
enum { AMDGPU_IP_GFX = 0, AMDGPU_IP_COMPUTE = 1, AMDGPU_IP_DMA = 2 };

#endif
