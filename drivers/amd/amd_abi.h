/* drivers/amd/amd_abi.h: the amdkfd kernel ABI we speak, as our own
 * definitions, plus the in-memory layouts the hardware and firmware read
 * (the AMDGPU kernel descriptor, AQL packets, the queue's amd_queue_t page).
 *
 * Every struct below mirrors include/uapi/linux/kfd_ioctl.h of
 * torvalds/linux (KFD ioctl ABI 1.15) field for field; the asserts pin the
 * sizes and key offsets to the numbers in that header, so a mistake here
 * fails the build instead of corrupting a kernel call. The mock
 * (drivers/mock/mock_amd*.c) decodes the same structs. */
#ifndef HCQ_DRIVERS_AMD_ABI_H
#define HCQ_DRIVERS_AMD_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ** ioctl numbers: _IOC(dir, 'K', nr, size), as linux/ioctl.h encodes them
 * (dir in bits 30-31: 1 write, 2 read; size in bits 16-29; type in 8-15). */
#define AMD_IOC(dir, nr, size) (((unsigned long)(dir) << 30) | ((unsigned long)(size) << 16) | (0x4Bul << 8) | (nr))
#define AMD_IOC_W 1u
#define AMD_IOC_R 2u
#define AMD_IOC_WR 3u
#define AMD_IOC_NR(cmd) ((unsigned)((cmd) & 0xff))
#define AMD_IOC_SIZE(cmd) ((unsigned)(((cmd) >> 16) & 0x3fff))
#define AMD_IOC_TYPE(cmd) ((unsigned)(((cmd) >> 8) & 0xff))

/* kfd_ioctl.h: struct kfd_ioctl_get_version_args */
typedef struct hcq_kfd_get_version_args {
    uint32_t major_version; /* out */
    uint32_t minor_version; /* out */
} kfd_get_version_args;

/* struct kfd_ioctl_create_queue_args: 96 bytes from ABI 1.17, which added
 * sdma_engine_id (88 before). kfd_ioctl copies the caller's size and
 * zero-fills up to its own (kfd_chardev.c): the long form works on older
 * kernels, which ignore its tail, and 0 lets 1.17+ pick the SDMA engine. */
typedef struct hcq_kfd_create_queue_args {
    uint64_t ring_base_address;     /* in */
    uint64_t write_pointer_address; /* in */
    uint64_t read_pointer_address;  /* in */
    uint64_t doorbell_offset;       /* out */
    uint32_t ring_size;             /* in: bytes, a power of two */
    uint32_t gpu_id;                /* in */
    uint32_t queue_type;            /* in: KFD_QUEUE_* */
    uint32_t queue_percentage;      /* in: bits 0-7 percent, 8-15 PM4 target XCC */
    uint32_t queue_priority;        /* in: 0..15 */
    uint32_t queue_id;              /* out */
    uint64_t eop_buffer_address;    /* in */
    uint64_t eop_buffer_size;       /* in */
    uint64_t ctx_save_restore_address; /* in */
    uint32_t ctx_save_restore_size; /* in */
    uint32_t ctl_stack_size;        /* in */
    uint32_t sdma_engine_id;        /* in (1.17): 0 any */
    uint32_t pad;
} kfd_create_queue_args;

typedef struct hcq_kfd_destroy_queue_args {
    uint32_t queue_id; /* in */
    uint32_t pad;
} kfd_destroy_queue_args;

typedef struct hcq_kfd_create_event_args {
    uint64_t event_page_offset;  /* in: the event page's BO handle (signal events) */
    uint32_t event_trigger_data; /* out */
    uint32_t event_type;         /* in: KFD_EVENT_* */
    uint32_t auto_reset;         /* in */
    uint32_t node_id;            /* in */
    uint32_t event_id;           /* out */
    uint32_t event_slot_index;   /* out */
} kfd_create_event_args;

typedef struct hcq_kfd_destroy_event_args {
    uint32_t event_id; /* in */
    uint32_t pad;
} kfd_destroy_event_args;

typedef struct hcq_kfd_memory_exception_failure {
    uint32_t not_present; /* page not present or supervisor privilege */
    uint32_t read_only;   /* write to a read-only page */
    uint32_t no_execute;  /* execute access to a page marked NX */
    uint32_t imprecise;   /* the exact address is unknown */
} kfd_memory_exception_failure;

typedef struct hcq_kfd_memory_exception_data {
    kfd_memory_exception_failure failure;
    uint64_t va;
    uint32_t gpu_id;
    uint32_t error_type; /* 0 no RAS error, 1 SRAM ECC, 2 poison, 3 hang */
} kfd_memory_exception_data;

typedef struct hcq_kfd_hw_exception_data {
    uint32_t reset_type;
    uint32_t reset_cause;
    uint32_t memory_lost;
    uint32_t gpu_id;
} kfd_hw_exception_data;

/* struct kfd_event_data: one per waited event */
typedef struct hcq_kfd_event_data {
    union {
        kfd_memory_exception_data memory_exception_data; /* out */
        kfd_hw_exception_data hw_exception_data;         /* out */
        uint64_t last_event_age;                         /* signal events, in/out (1.14) */
    };
    uint64_t kfd_event_data_ext;
    uint32_t event_id; /* in */
    uint32_t pad;
} kfd_event_data;

typedef struct hcq_kfd_wait_events_args {
    uint64_t events_ptr;   /* in: kfd_event_data[num_events] */
    uint32_t num_events;   /* in */
    uint32_t wait_for_all; /* in */
    uint32_t timeout;      /* in: ms */
    uint32_t wait_result;  /* out: KFD_WAIT_* */
} kfd_wait_events_args;

typedef struct hcq_kfd_acquire_vm_args {
    uint32_t drm_fd; /* in: the render node */
    uint32_t gpu_id; /* in */
} kfd_acquire_vm_args;

typedef struct hcq_kfd_alloc_memory_args {
    uint64_t va_addr;     /* in */
    uint64_t size;        /* in */
    uint64_t handle;      /* out */
    uint64_t mmap_offset; /* in (userptr: the CPU address), out (the render node offset) */
    uint32_t gpu_id;      /* in */
    uint32_t flags;       /* in: KFD_ALLOC_* */
} kfd_alloc_memory_args;

typedef struct hcq_kfd_free_memory_args {
    uint64_t handle; /* in */
} kfd_free_memory_args;

/* map and unmap share this layout */
typedef struct hcq_kfd_map_memory_args {
    uint64_t handle;               /* in */
    uint64_t device_ids_array_ptr; /* in: uint32_t gpu_id[n_devices] */
    uint32_t n_devices;            /* in */
    uint32_t n_success;            /* in/out: devices done so far */
} kfd_map_memory_args;

typedef struct hcq_kfd_runtime_enable_args {
    uint64_t r_debug;
    uint32_t mode_mask; /* bit 0 clear *disables* the runtime (kfd_chardev.c kfd_ioctl_runtime_enable) */
    uint32_t capabilities_mask;
} kfd_runtime_enable_args;
#define KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK 1u

_Static_assert(sizeof(kfd_get_version_args) == 8, "kfd_ioctl_get_version_args");
_Static_assert(sizeof(kfd_create_queue_args) == 96, "kfd_ioctl_create_queue_args (ABI 1.17)");
_Static_assert(offsetof(kfd_create_queue_args, sdma_engine_id) == 88, "create_queue.sdma_engine_id");
#define KFD_CREATE_QUEUE_ARGS_1_15 88u /* what a kernel before 1.17 reads */
_Static_assert(offsetof(kfd_create_queue_args, ring_size) == 32, "create_queue.ring_size");
_Static_assert(offsetof(kfd_create_queue_args, queue_id) == 52, "create_queue.queue_id");
_Static_assert(offsetof(kfd_create_queue_args, eop_buffer_address) == 56, "create_queue.eop_buffer_address");
_Static_assert(offsetof(kfd_create_queue_args, ctx_save_restore_size) == 80, "create_queue.ctx_save_restore_size");
_Static_assert(sizeof(kfd_destroy_queue_args) == 8, "kfd_ioctl_destroy_queue_args");
_Static_assert(sizeof(kfd_create_event_args) == 32, "kfd_ioctl_create_event_args");
_Static_assert(offsetof(kfd_create_event_args, event_id) == 24, "create_event.event_id");
_Static_assert(sizeof(kfd_destroy_event_args) == 8, "kfd_ioctl_destroy_event_args");
_Static_assert(sizeof(kfd_memory_exception_data) == 32, "kfd_hsa_memory_exception_data");
_Static_assert(offsetof(kfd_memory_exception_data, va) == 16, "memory_exception_data.va");
_Static_assert(sizeof(kfd_event_data) == 48, "kfd_event_data");
_Static_assert(offsetof(kfd_event_data, event_id) == 40, "kfd_event_data.event_id");
_Static_assert(sizeof(kfd_wait_events_args) == 24, "kfd_ioctl_wait_events_args");
_Static_assert(sizeof(kfd_acquire_vm_args) == 8, "kfd_ioctl_acquire_vm_args");
_Static_assert(sizeof(kfd_alloc_memory_args) == 40, "kfd_ioctl_alloc_memory_of_gpu_args");
_Static_assert(offsetof(kfd_alloc_memory_args, gpu_id) == 32, "alloc_memory.gpu_id");
_Static_assert(sizeof(kfd_free_memory_args) == 8, "kfd_ioctl_free_memory_of_gpu_args");
_Static_assert(sizeof(kfd_map_memory_args) == 24, "kfd_ioctl_map_memory_to_gpu_args");
_Static_assert(sizeof(kfd_runtime_enable_args) == 16, "kfd_ioctl_runtime_enable_args");

/* kfd_ioctl_get_available_memory_args (KFD 1.9+): VRAM the process can
 * still allocate on the GPU */
typedef struct hcq_kfd_available_memory_args {
    uint64_t available; /* from KFD */
    uint32_t gpu_id;    /* to KFD */
    uint32_t pad;
} kfd_available_memory_args;
_Static_assert(sizeof(kfd_available_memory_args) == 16, "kfd_ioctl_get_available_memory_args");

/* struct kfd_process_device_apertures: where the flat address space puts
 * a GPU's LDS and scratch apertures, and its GPUVM range */
typedef struct hcq_kfd_apertures {
    uint64_t lds_base, lds_limit, scratch_base, scratch_limit, gpuvm_base, gpuvm_limit;
    uint32_t gpu_id, pad;
} kfd_apertures;
_Static_assert(sizeof(kfd_apertures) == 56, "kfd_process_device_apertures");
/* kfd_ioctl_get_process_apertures_new_args: num_of_nodes 0 asks how many */
typedef struct hcq_kfd_get_apertures_new_args {
    uint64_t kfd_process_device_apertures_ptr; /* in: kfd_apertures[num_of_nodes] */
    uint32_t num_of_nodes;                     /* in: room; out: filled (or the count) */
    uint32_t pad;
} kfd_get_apertures_new_args;
_Static_assert(sizeof(kfd_get_apertures_new_args) == 16, "kfd_ioctl_get_process_apertures_new_args");

/* the runtime's setup calls (kfd_ioctl.h): cache policy of the GPU's
 * apertures, the clocks, the trap handler, scratch, XNACK, event state */
typedef struct hcq_kfd_set_memory_policy_args {
    uint64_t alternate_aperture_base, alternate_aperture_size;
    uint32_t gpu_id, default_policy, alternate_policy, pad; /* policies: KFD_CACHE_POLICY_* */
} kfd_set_memory_policy_args;
enum { KFD_CACHE_POLICY_COHERENT = 0, KFD_CACHE_POLICY_NONCOHERENT = 1 };
typedef struct hcq_kfd_get_clock_counters_args {
    uint64_t gpu_clock_counter, cpu_clock_counter, system_clock_counter, system_clock_freq; /* out */
    uint32_t gpu_id, pad;
} kfd_get_clock_counters_args;
typedef struct hcq_kfd_set_scratch_backing_va_args {
    uint64_t va_addr;
    uint32_t gpu_id, pad;
} kfd_set_scratch_backing_va_args;
typedef struct hcq_kfd_set_trap_handler_args {
    uint64_t tba_addr, tma_addr;
    uint32_t gpu_id, pad;
} kfd_set_trap_handler_args;
typedef struct hcq_kfd_set_xnack_mode_args {
    int32_t xnack_enabled; /* in: >= 0 sets; < 0 asks; out: the mode */
} kfd_set_xnack_mode_args;
/* (hcq does not use GWS; ROCm's runtime asks for it for a cooperative
 * queue) */
typedef struct hcq_kfd_alloc_queue_gws_args {
    uint32_t queue_id;  /* in */
    uint32_t num_gws;   /* in: 0 releases, else the GPU's whole GWS */
    uint32_t first_gws; /* out: 0 */
    uint32_t pad;
} kfd_alloc_queue_gws_args;
typedef struct hcq_kfd_event_id_args { /* set_event, reset_event */
    uint32_t event_id, pad;
} kfd_event_id_args;
typedef struct hcq_kfd_get_tile_config_args {
    uint64_t tile_config_ptr, macro_tile_config_ptr; /* in: uint32_t arrays */
    uint32_t num_tile_configs, num_macro_tile_configs; /* in: room; out: copied */
    uint32_t gpu_id, gb_addr_config, num_banks, num_ranks; /* out but gpu_id */
} kfd_get_tile_config_args;
_Static_assert(sizeof(kfd_get_tile_config_args) == 40, "kfd_ioctl_get_tile_config_args");
_Static_assert(sizeof(kfd_set_memory_policy_args) == 32, "kfd_ioctl_set_memory_policy_args");
_Static_assert(sizeof(kfd_get_clock_counters_args) == 40, "kfd_ioctl_get_clock_counters_args");
_Static_assert(sizeof(kfd_set_trap_handler_args) == 24, "kfd_ioctl_set_trap_handler_args");
_Static_assert(sizeof(kfd_alloc_queue_gws_args) == 16, "kfd_ioctl_alloc_queue_gws_args");

/* ** the kfd ioctls, one row each, as amdkfd's own table is
 * (kfd_chardev.c amdkfd_ioctls[], AMDKFD_IOCTL_DEF; numbers, directions
 * and argument structs from kfd_ioctl.h): the driver's commands
 * (KFD_IOC(name)), the mock's dispatch (mock_amd_kfd.c: a handler per
 * row) and the tracer's names (amd_kfd_ioctl_of) all come from this list.
 * X(nr, name, direction, argument struct) for the commands whose argument
 * hcq defines; AMD_KFD_IOCTL_NAMES(Y) (nr, name) for the others, known by
 * name only. */
#define AMD_KFD_IOCTLS(X)                                                 \
    X(0x01, GET_VERSION, R, kfd_get_version_args)                         \
    X(0x02, CREATE_QUEUE, WR, kfd_create_queue_args)                      \
    X(0x03, DESTROY_QUEUE, WR, kfd_destroy_queue_args)                    \
    X(0x04, SET_MEMORY_POLICY, W, kfd_set_memory_policy_args)             \
    X(0x05, GET_CLOCK_COUNTERS, WR, kfd_get_clock_counters_args)          \
    X(0x08, CREATE_EVENT, WR, kfd_create_event_args)                      \
    X(0x09, DESTROY_EVENT, W, kfd_destroy_event_args)                     \
    X(0x0A, SET_EVENT, W, kfd_event_id_args)                              \
    X(0x0B, RESET_EVENT, W, kfd_event_id_args)                            \
    X(0x0C, WAIT_EVENTS, WR, kfd_wait_events_args)                        \
    X(0x11, SET_SCRATCH_BACKING_VA, WR, kfd_set_scratch_backing_va_args)  \
    X(0x12, GET_TILE_CONFIG, WR, kfd_get_tile_config_args)                \
    X(0x13, SET_TRAP_HANDLER, W, kfd_set_trap_handler_args)               \
    X(0x14, GET_PROCESS_APERTURES_NEW, WR, kfd_get_apertures_new_args)    \
    X(0x15, ACQUIRE_VM, W, kfd_acquire_vm_args)                           \
    X(0x16, ALLOC_MEMORY_OF_GPU, WR, kfd_alloc_memory_args)               \
    X(0x17, FREE_MEMORY_OF_GPU, W, kfd_free_memory_args)                  \
    X(0x18, MAP_MEMORY_TO_GPU, WR, kfd_map_memory_args)                   \
    X(0x19, UNMAP_MEMORY_FROM_GPU, WR, kfd_map_memory_args)               \
    X(0x1E, ALLOC_QUEUE_GWS, WR, kfd_alloc_queue_gws_args)                \
    X(0x21, SET_XNACK_MODE, WR, kfd_set_xnack_mode_args)                  \
    X(0x23, AVAILABLE_MEMORY, WR, kfd_available_memory_args)              \
    X(0x25, RUNTIME_ENABLE, WR, kfd_runtime_enable_args)
#define AMD_KFD_IOCTL_NAMES(Y)                                            \
    Y(0x06, GET_PROCESS_APERTURES) Y(0x07, UPDATE_QUEUE)                  \
    Y(0x0D, DBG_REGISTER_DEPRECATED) Y(0x0E, DBG_UNREGISTER_DEPRECATED)   \
    Y(0x0F, DBG_ADDRESS_WATCH_DEPRECATED) Y(0x10, DBG_WAVE_CONTROL_DEPRECATED) \
    Y(0x1A, SET_CU_MASK)                                                  \
    Y(0x1B, GET_QUEUE_WAVE_STATE) Y(0x1C, GET_DMABUF_INFO)                \
    Y(0x1D, IMPORT_DMABUF) Y(0x1F, SMI_EVENTS)                            \
    Y(0x20, SVM) Y(0x22, CRIU_OP) Y(0x24, EXPORT_DMABUF) Y(0x26, DBG_TRAP)

#define AMD_KFD_NR_ENUM_(nr, name, dir, type) KFD_NR_##name = nr,
#define AMD_KFD_DIR_ENUM_(nr, name, dir, type) KFD_DIR_##name = AMD_IOC_##dir,
#define AMD_KFD_ARG_TYPE_(nr, name, dir, type) typedef type kfd_arg_##name;
enum { AMD_KFD_IOCTLS(AMD_KFD_NR_ENUM_) };
enum { AMD_KFD_IOCTLS(AMD_KFD_DIR_ENUM_) };
AMD_KFD_IOCTLS(AMD_KFD_ARG_TYPE_)
/* the command of row `name`: KFD_IOC(CREATE_QUEUE) */
#define KFD_IOC(name) AMD_IOC(KFD_DIR_##name, KFD_NR_##name, sizeof(kfd_arg_##name))
#define KFD_IOC_GET_VERSION KFD_IOC(GET_VERSION)
#define KFD_IOC_CREATE_QUEUE KFD_IOC(CREATE_QUEUE)
#define KFD_IOC_DESTROY_QUEUE KFD_IOC(DESTROY_QUEUE)
#define KFD_IOC_CREATE_EVENT KFD_IOC(CREATE_EVENT)
#define KFD_IOC_DESTROY_EVENT KFD_IOC(DESTROY_EVENT)
#define KFD_IOC_WAIT_EVENTS KFD_IOC(WAIT_EVENTS)
#define KFD_IOC_ACQUIRE_VM KFD_IOC(ACQUIRE_VM)
#define KFD_IOC_ALLOC_MEMORY KFD_IOC(ALLOC_MEMORY_OF_GPU)
#define KFD_IOC_FREE_MEMORY KFD_IOC(FREE_MEMORY_OF_GPU)
#define KFD_IOC_MAP_MEMORY KFD_IOC(MAP_MEMORY_TO_GPU)
#define KFD_IOC_UNMAP_MEMORY KFD_IOC(UNMAP_MEMORY_FROM_GPU)
#define KFD_IOC_RUNTIME_ENABLE KFD_IOC(RUNTIME_ENABLE)
#define KFD_IOC_AVAILABLE_MEMORY KFD_IOC(AVAILABLE_MEMORY)
_Static_assert(KFD_IOC_GET_VERSION == 0x80084B01ul, "AMDKFD_IOC_GET_VERSION");
_Static_assert(KFD_IOC_CREATE_QUEUE == 0xC0604B02ul, "AMDKFD_IOC_CREATE_QUEUE (1.17: 96 bytes; 0xC0584B02 before)");
_Static_assert(KFD_IOC_ACQUIRE_VM == 0x40084B15ul, "AMDKFD_IOC_ACQUIRE_VM");
_Static_assert(KFD_IOC_ALLOC_MEMORY == 0xC0284B16ul, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU");
_Static_assert(KFD_IOC_RUNTIME_ENABLE == 0xC0104B25ul, "AMDKFD_IOC_RUNTIME_ENABLE");
_Static_assert(KFD_IOC_AVAILABLE_MEMORY == 0xC0104B23ul, "AMDKFD_IOC_AVAILABLE_MEMORY");

/* a row of the table: indexed by number, as amdkfd_ioctls[] is */
typedef struct amd_kfd_ioctl {
    const char *name;   /* "AMDKFD_IOC_CREATE_QUEUE"; NULL: no such number */
    unsigned long cmd;  /* 0 for rows known by name only */
    uint32_t size;      /* the argument struct's size (hcq's, the newest ABI it speaks) */
} amd_kfd_ioctl_def;
#define AMD_KFD_NR_COUNT 0x27u
extern const amd_kfd_ioctl_def amd_kfd_ioctls[AMD_KFD_NR_COUNT];
/* the row of a 'K' command, by its number; NULL for another type or an
 * unknown number */
const amd_kfd_ioctl_def *amd_kfd_ioctl_of(unsigned long cmd);

/* "AMDKFD_IOC_CREATE_QUEUE", ...: the kfd_ioctl.h name of a command, or NULL */
static inline const char *kfd_ioctl_name(unsigned long cmd)
{
    const amd_kfd_ioctl_def *d = amd_kfd_ioctl_of(cmd);
    return d ? d->name : NULL;
}

/* RUNTIME_ENABLE came with the debugger API, ABI 1.13 (kfd_ioctl.h version
 * history: "1.13 - Add debugger API") */
#define KFD_VERSION_RUNTIME_ENABLE 13u

/* kfd_ioctl.h: KFD_IOC_QUEUE_TYPE_* */
enum {
    KFD_QUEUE_COMPUTE = 0, /* PM4 */
    KFD_QUEUE_SDMA = 1,
    KFD_QUEUE_COMPUTE_AQL = 2,
    KFD_QUEUE_SDMA_XGMI = 3,
};
#define KFD_MAX_QUEUE_PERCENTAGE 100u
#define KFD_MAX_QUEUE_PRIORITY 15u

/* kfd_ioctl.h: KFD_IOC_EVENT_*, KFD_IOC_WAIT_RESULT_* */
enum { KFD_EVENT_SIGNAL = 0, KFD_EVENT_HW_EXCEPTION = 3, KFD_EVENT_MEMORY = 8 };
enum { KFD_WAIT_COMPLETE = 0, KFD_WAIT_TIMEOUT = 1, KFD_WAIT_FAIL = 2 };
#define KFD_SIGNAL_EVENT_LIMIT 4096u

/* kfd_ioctl.h: KFD_IOC_ALLOC_MEM_FLAGS_* */
enum {
    KFD_ALLOC_VRAM = 1u << 0,
    KFD_ALLOC_GTT = 1u << 1,
    KFD_ALLOC_USERPTR = 1u << 2,
    KFD_ALLOC_DOORBELL = 1u << 3,
    KFD_ALLOC_MMIO_REMAP = 1u << 4,
    KFD_ALLOC_EXT_COHERENT = 1u << 24,
    KFD_ALLOC_UNCACHED = 1u << 25,
    KFD_ALLOC_COHERENT = 1u << 26,
    KFD_ALLOC_AQL_QUEUE_MEM = 1u << 27,
    KFD_ALLOC_NO_SUBSTITUTE = 1u << 28,
    KFD_ALLOC_PUBLIC = 1u << 29,
    KFD_ALLOC_EXECUTABLE = 1u << 30,
    KFD_ALLOC_WRITABLE = 1u << 31,
};
#define KFD_ALLOC_DOMAINS (KFD_ALLOC_VRAM | KFD_ALLOC_GTT | KFD_ALLOC_USERPTR | KFD_ALLOC_DOORBELL | KFD_ALLOC_MMIO_REMAP)

/* /dev/kfd mmap offsets: the type in bits 62-63, the gpu_id from bit 46
 * (amdkfd kfd_priv.h: KFD_MMAP_TYPE_SHIFT, KFD_MMAP_GPU_ID_SHIFT). The
 * doorbell offset CREATE_QUEUE returns already carries both, plus the
 * queue's byte offset inside the process's doorbell slice on SOC15. */
#define KFD_MMAP_TYPE_SHIFT 62
#define KFD_MMAP_TYPE_DOORBELL (3ull << KFD_MMAP_TYPE_SHIFT)
#define KFD_MMAP_GPU_ID_SHIFT 46
/* the per-process doorbell slice: 1024 queues x 8-byte doorbells
 * (kfd_doorbell.c: kfd_doorbell_process_slice), mapped whole */
#define KFD_DOORBELL_SLICE_BYTES 0x2000u

/* ** the AMDGPU kernel descriptor (llvm AMDGPUUsage "Kernel Descriptor",
 * llvm-project llvm/include/llvm/Support/AMDHSAKernelDescriptor.h): 64 bytes
 * at the symbol <kernel>.kd */
typedef struct amd_kernel_descriptor {
    uint32_t group_segment_fixed_size;   /* LDS bytes */
    uint32_t private_segment_fixed_size; /* scratch bytes per work-item */
    uint32_t kernarg_size;
    uint8_t reserved0[4];
    int64_t kernel_code_entry_byte_offset; /* entry = descriptor address + this */
    uint8_t reserved1[20];
    uint32_t compute_pgm_rsrc3;
    uint32_t compute_pgm_rsrc1;
    uint32_t compute_pgm_rsrc2;
    uint16_t kernel_code_properties; /* AMD_KCP_* */
    uint16_t kernarg_preload;
    uint8_t reserved2[4];
} amd_kernel_descriptor;
_Static_assert(sizeof(amd_kernel_descriptor) == 64, "kernel descriptor");
_Static_assert(offsetof(amd_kernel_descriptor, kernel_code_entry_byte_offset) == 16, "kd.entry");
_Static_assert(offsetof(amd_kernel_descriptor, compute_pgm_rsrc3) == 44, "kd.rsrc3");
_Static_assert(offsetof(amd_kernel_descriptor, kernel_code_properties) == 56, "kd.properties");

/* kernel_code_properties bits: the user SGPRs the kernel expects, in this
 * order (AMDGPUUsage "Initial Kernel Execution State") */
enum {
    AMD_KCP_PRIVATE_SEGMENT_BUFFER = 1u << 0, /* 4 SGPRs */
    AMD_KCP_DISPATCH_PTR = 1u << 1,           /* 2 */
    AMD_KCP_QUEUE_PTR = 1u << 2,              /* 2 */
    AMD_KCP_KERNARG_SEGMENT_PTR = 1u << 3,    /* 2 */
    AMD_KCP_DISPATCH_ID = 1u << 4,            /* 2 */
    AMD_KCP_FLAT_SCRATCH_INIT = 1u << 5,      /* 2 */
    AMD_KCP_PRIVATE_SEGMENT_SIZE = 1u << 6,   /* 1 */
    AMD_KCP_WAVEFRONT_SIZE32 = 1u << 10,
    AMD_KCP_USES_DYNAMIC_STACK = 1u << 11,
};

/* ** AQL packets (HSA Platform System Architecture spec, "Architected
 * Queuing Language"; ROCR hsa.h / amd_hsa_queue.h for the AMD vendor
 * format): 64 bytes each */
enum {
    AQL_TYPE_VENDOR = 0,
    AQL_TYPE_INVALID = 1,
    AQL_TYPE_KERNEL_DISPATCH = 2,
    AQL_TYPE_BARRIER_AND = 3,
    AQL_TYPE_AGENT_DISPATCH = 4, /* for agents that are not GPUs: a GPU queue rejects it */
    AQL_TYPE_BARRIER_OR = 5,
};
#define AQL_HDR_TYPE_SHIFT 0
#define AQL_HDR_BARRIER (1u << 8)
#define AQL_HDR_ACQUIRE_SHIFT 9 /* fence scope: 0 none, 1 agent, 2 system, 3 reserved */
#define AQL_HDR_RELEASE_SHIFT 11
#define AQL_SCOPE_SYSTEM 2u
#define AQL_SCOPE_RESERVED 3u

/* hsa_kernel_dispatch_packet_t (hsa.h): setup bits 0-1 are the number of
 * grid dimensions; the grid size counts work-items, not work-groups, and
 * need not be a multiple of the work-group size (the last group is
 * partial) */
typedef struct aql_dispatch {
    uint16_t header, setup;
    uint16_t workgroup_size[3];
    uint16_t reserved0;
    uint32_t grid_size[3];
    uint32_t private_segment_size; /* bytes per work-item */
    uint32_t group_segment_size;   /* LDS bytes, the descriptor's fixed size plus dynamic */
    uint64_t kernel_object;        /* the kernel descriptor's address */
    uint64_t kernarg_address;      /* 16-byte aligned */
    uint64_t reserved2;
    uint64_t completion_signal;    /* an amd_signal_t address, or 0 */
} aql_dispatch;
_Static_assert(sizeof(aql_dispatch) == 64, "hsa_kernel_dispatch_packet_t size");
_Static_assert(offsetof(aql_dispatch, grid_size) == 12, "hsa_kernel_dispatch_packet_t.grid_size_x");
_Static_assert(offsetof(aql_dispatch, private_segment_size) == 24, "hsa_kernel_dispatch_packet_t.private_segment_size");
_Static_assert(offsetof(aql_dispatch, kernel_object) == 32, "hsa_kernel_dispatch_packet_t.kernel_object");
_Static_assert(offsetof(aql_dispatch, kernarg_address) == 40, "hsa_kernel_dispatch_packet_t.kernarg_address");
_Static_assert(offsetof(aql_dispatch, completion_signal) == 56, "hsa_kernel_dispatch_packet_t.completion_signal");
#define AQL_SETUP_DIMS_MASK 3u
#define AQL_KERNARG_ALIGN 16u

/* hsa_barrier_and_packet_t / hsa_barrier_or_packet_t (hsa.h): up to five
 * dependency signals (0: none); AND completes once every one is 0, OR once
 * any is */
typedef struct aql_barrier {
    uint16_t header, reserved0;
    uint32_t reserved1;
    uint64_t dep_signal[5];
    uint64_t reserved2;
    uint64_t completion_signal;
} aql_barrier;
_Static_assert(sizeof(aql_barrier) == 64, "hsa_barrier_and_packet_t size");
_Static_assert(offsetof(aql_barrier, dep_signal) == 8, "hsa_barrier_and_packet_t.dep_signal");
_Static_assert(offsetof(aql_barrier, completion_signal) == 56, "hsa_barrier_and_packet_t.completion_signal");

/* amd_signal_t (ROCR amd_hsa_signal.h), 64 bytes: what an hsa_signal_t
 * handle points at. The packet processor decrements value when a packet
 * with the signal as its completion signal completes, and, when
 * event_mailbox_ptr is set, writes event_id there and raises the interrupt
 * that signals KFD event event_id. */
#define AMD_SIGNAL_KIND_OFF 0u
#define AMD_SIGNAL_MAILBOX_OFF 16u
#define AMD_SIGNAL_EVENT_ID_OFF 24u
#define AMD_SIGNAL_START_TS_OFF 32u
#define AMD_SIGNAL_END_TS_OFF 40u
#define AMD_SIGNAL_BYTES 64u
/* AMD vendor packet carrying a PM4 indirect buffer (ROCR amd_hsa_queue.h
 * AMD_AQL_FORMAT_PM4_IB) */
#define AQL_AMD_FORMAT_PM4_IB 1u
#define AQL_PACKET_BYTES 64u
/* dw_cnt_remain of the vendor packet: the dwords after the IB packet */
#define AQL_PM4_IB_REMAIN 10u
/* AMD vendor packet waiting for (signal.value & mask) cond value, 64-bit
 * (ROCR hsa_ext_amd.h hsa_amd_barrier_value_packet_t, AmdFormat
 * HSA_AMD_PACKET_TYPE_BARRIER_VALUE). The signal is an hsa_signal_t: the
 * address of an amd_signal_t, whose 64-bit value is at +8 (ROCR
 * amd_hsa_signal.h) */
#define AQL_AMD_FORMAT_BARRIER_VALUE 2u
#define AQL_COND_GTE 3u /* hsa_signal_condition_t HSA_SIGNAL_CONDITION_GTE (hsa.h) */
#define AMD_SIGNAL_VALUE_OFFSET 8u
typedef struct aql_barrier_value {
    uint16_t header;
    uint8_t amd_format, reserved;
    uint32_t reserved0;
    uint64_t signal;
    uint64_t value, mask;
    uint32_t cond, reserved1;
    uint64_t reserved2, reserved3;
    uint64_t completion_signal;
} aql_barrier_value;
_Static_assert(sizeof(aql_barrier_value) == AQL_PACKET_BYTES, "hsa_amd_barrier_value_packet_t size");
_Static_assert(offsetof(aql_barrier_value, signal) == 8, "hsa_amd_barrier_value_packet_t.signal");
_Static_assert(offsetof(aql_barrier_value, value) == 16, "hsa_amd_barrier_value_packet_t.value");
_Static_assert(offsetof(aql_barrier_value, mask) == 24, "hsa_amd_barrier_value_packet_t.mask");
_Static_assert(offsetof(aql_barrier_value, cond) == 32, "hsa_amd_barrier_value_packet_t.cond");
_Static_assert(offsetof(aql_barrier_value, completion_signal) == 56, "hsa_amd_barrier_value_packet_t.completion_signal");

/* ** the queue's control page: the CP's rptr and wptr slots live where
 * amd_queue_t (ROCR amd_hsa_queue.h) keeps its write and read dispatch ids,
 * so the same page layout serves PM4, SDMA and AQL queues */
#define AMD_QUEUE_WPTR_OFF 0x38u /* amd_queue_t.write_dispatch_id */
#define AMD_QUEUE_MAX_CU_ID_OFF 0x48u   /* amd_queue_t.max_cu_id: CUs - 1 */
#define AMD_QUEUE_MAX_WAVE_ID_OFF 0x4Cu /* amd_queue_t.max_wave_id: waves per SIMD x SIMDs per CU - 1, as ROCR
                                         * (amd_aql_queue.cpp) and tinygrad set it */
#define AMD_QUEUE_RPTR_OFF 0x80u /* amd_queue_t.read_dispatch_id */
#define AMD_QUEUE_RPTR_BASE_OFF 0x88u /* amd_queue_t.read_dispatch_id_field_base_byte_offset */
/* the scratch an AQL dispatch's packet processor hands kernels (ROCR
 * amd_aql_queue.cpp InitScratchSRD fills them) */
#define AMD_QUEUE_TMPRING_OFF 0x8Cu       /* compute_tmpring_size */
#define AMD_QUEUE_SCRATCH_SRD_OFF 0x90u   /* scratch_resource_descriptor[4] */
#define AMD_QUEUE_SCRATCH_BASE_OFF 0xA0u  /* scratch_backing_memory_location */
#define AMD_QUEUE_SCRATCH_BYTES_OFF 0xA8u /* scratch_backing_memory_byte_size */
#define AMD_QUEUE_SCRATCH_LANE_OFF 0xB0u  /* scratch_wave64_lane_byte_size */
#define AMD_QUEUE_PROPERTIES_OFF 0xB4u /* amd_queue_t.queue_properties */
#define AMD_QUEUE_PROP_IS_PTR64 (1u << 1)
#define AMD_QUEUE_PROP_ENABLE_PROFILING (1u << 3) /* completion signals get start_ts/end_ts */
/* the signal the packet processor sets to an error code when the queue
 * stops, 1 asking the runtime for scratch (ROCR amd_aql_queue.cpp
 * DynamicScratchHandler: it fills the scratch fields above, then stores 0
 * to restart the queue) */
#define AMD_QUEUE_INACTIVE_SIGNAL_OFF 0xC0u
#define AMD_QUEUE_ERROR_SCRATCH 1
#define AMD_QUEUE_PAGE_BYTES 0x1000u

#endif
