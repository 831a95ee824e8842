/* drivers/nv/nv_abi.h: our own definitions of the NVIDIA kernel driver's
 * interface as the NV backend and the NV mock use it: the RM escapes of
 * nvidia.ko (/dev/nvidiactl, /dev/nvidiaN), the ioctls of nvidia-uvm.ko, the
 * allocation and control parameters we send, the class ids, RM status codes
 * and the error notifier. Layouts are those of driver 580.x; each struct
 * carries _Static_asserts on its size and key offsets, checked against the
 * 580.142 headers (numbers in ../shared/reference/nv-facts.md §1, §8).
 *
 * Where 570 and 580 differ, the size is not a sizeof here but a row of
 * nv_abi_revs (nv_rm.c): one table of per-version differences. */
#ifndef HCQ_DRIVERS_NV_ABI_H
#define HCQ_DRIVERS_NV_ABI_H

#include "compiler/nv_chips.h"

#include <stddef.h>
#include <stdint.h>

#define NV_ABI_ASSERT(type, size) _Static_assert(sizeof(type) == (size), #type " size")
#define NV_ABI_AT(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field " offset")

/* ** ioctl numbers
 * _IOWR('F', nr, size); nvidia.ko reads only the number and the size, and
 * requires the size to equal the struct's exactly.
 * (open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/include/nv-ioctl-numbers.h,
 *  nv_escape.h) */
#define NV_IOWR(nr, size) ((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | (0x46u << 8) | (uint32_t)(nr)))
#define NV_IOC_NR(req) ((uint32_t)(req) & 0xffu)
#define NV_IOC_SIZE(req) (((uint32_t)(req) >> 16) & 0x3fffu)

enum nv_escape {
    NV_ESC_RM_ALLOC_MEMORY = 0x27, /* device fd only */
    NV_ESC_RM_FREE = 0x29,
    NV_ESC_RM_CONTROL = 0x2A,
    NV_ESC_RM_ALLOC = 0x2B,
    NV_ESC_RM_MAP_MEMORY = 0x4E,
    NV_ESC_RM_MAP_MEMORY_DMA = 0x57,   /* a memory object into a virtual range (NV01_MEMORY_VIRTUAL) */
    NV_ESC_RM_UNMAP_MEMORY_DMA = 0x58,
    NV_ESC_CARD_INFO = 200,
    NV_ESC_REGISTER_FD = 201,
    NV_ESC_CHECK_VERSION_STR = 210,
};

/* ** RM escapes (open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvos.h,
 * src/nvidia/arch/nvalloc/unix/include/nv-unix-nvos-params-wrappers.h) */
typedef struct nv_rm_alloc { /* NVOS21_PARAMETERS */
    uint32_t hRoot, hObjectParent;
    uint32_t hObjectNew; /* in/out: 0 lets RM choose */
    uint32_t hClass;
    uint64_t pAllocParms;
    /* ignored by RM: serverAllocApiCopyIn copies the class's own size
     * (rmapiParamsCopyInit, from resource_list.h's RS_REQUIRED/RS_OPTIONAL) */
    uint32_t paramsSize;
    uint32_t status;
} nv_rm_alloc;
NV_ABI_ASSERT(nv_rm_alloc, 32);
NV_ABI_AT(nv_rm_alloc, pAllocParms, 16);
NV_ABI_AT(nv_rm_alloc, status, 28);

/* NVOS64_PARAMETERS: RM_ALLOC's other form (escape.c takes either size),
 * with the access rights asked for */
typedef struct nv_rm_alloc64 {
    uint32_t hRoot, hObjectParent, hObjectNew, hClass;
    uint64_t pAllocParms;
    uint64_t pRightsRequested; /* RS_ACCESS_MASK, or 0 */
    uint32_t paramsSize, flags; /* flags: NVOS64_FLAGS_FINN_SERIALIZED 1 */
    uint32_t status, _pad;
} nv_rm_alloc64;
NV_ABI_ASSERT(nv_rm_alloc64, 48);
NV_ABI_AT(nv_rm_alloc64, pRightsRequested, 24);
NV_ABI_AT(nv_rm_alloc64, status, 40);

typedef struct nv_rm_control { /* NVOS54_PARAMETERS */
    uint32_t hClient, hObject, cmd, flags;
    uint64_t params;
    uint32_t paramsSize; /* must equal the command's size exactly */
    uint32_t status;
} nv_rm_control;
NV_ABI_ASSERT(nv_rm_control, 32);
NV_ABI_AT(nv_rm_control, params, 16);
NV_ABI_AT(nv_rm_control, status, 28);

typedef struct nv_rm_free { /* NVOS00_PARAMETERS */
    uint32_t hRoot, hObjectParent, hObjectOld, status;
} nv_rm_free;
NV_ABI_ASSERT(nv_rm_free, 16);

typedef struct nv_rm_alloc_memory { /* nv_ioctl_nvos02_parameters_with_fd */
    uint32_t hRoot, hObjectParent;
    uint32_t hObjectNew; /* chosen by the client */
    uint32_t hClass, flags, _pad0;
    uint64_t pMemory, limit;
    uint32_t status, _pad1;
    int32_t fd;
    uint32_t _pad2;
} nv_rm_alloc_memory;
NV_ABI_ASSERT(nv_rm_alloc_memory, 56);
NV_ABI_AT(nv_rm_alloc_memory, pMemory, 24);
NV_ABI_AT(nv_rm_alloc_memory, limit, 32);
NV_ABI_AT(nv_rm_alloc_memory, status, 40);
NV_ABI_AT(nv_rm_alloc_memory, fd, 48);

typedef struct nv_rm_map_memory { /* nv_ioctl_nvos33_parameters_with_fd */
    uint32_t hClient, hDevice, hMemory, _pad0;
    uint64_t offset, length, pLinearAddress;
    uint32_t status, flags;
    int32_t fd; /* the fresh fd the mmap will use */
    uint32_t _pad1;
} nv_rm_map_memory;
NV_ABI_ASSERT(nv_rm_map_memory, 56);
NV_ABI_AT(nv_rm_map_memory, offset, 16);
NV_ABI_AT(nv_rm_map_memory, status, 40);
NV_ABI_AT(nv_rm_map_memory, flags, 44);
NV_ABI_AT(nv_rm_map_memory, fd, 48);

/* NVOS46_PARAMETERS, NVOS47_PARAMETERS (nvos.h): map a memory object into
 * a virtual range (hDma, an NV01_MEMORY_VIRTUAL) for the GPU, and unmap it */
typedef struct nv_rm_map_memory_dma {
    uint32_t hClient, hDevice, hDma, hMemory;
    uint64_t offset, length; /* the part of hMemory */
    uint32_t flags, flags2, kindOverride, _pad0;
    uint64_t dmaOffset; /* out: the GPU address; in with DMA_OFFSET_FIXED */
    uint32_t status, _pad1;
} nv_rm_map_memory_dma;
NV_ABI_ASSERT(nv_rm_map_memory_dma, 64);
NV_ABI_AT(nv_rm_map_memory_dma, flags, 32);
NV_ABI_AT(nv_rm_map_memory_dma, dmaOffset, 48);
NV_ABI_AT(nv_rm_map_memory_dma, status, 56);
#define NVOS46_FLAGS_ACCESS_READ_ONLY 1u          /* ACCESS 1:0 */
#define NVOS46_FLAGS_DMA_OFFSET_FIXED (1u << 15) /* dmaOffset is the address to map at */

typedef struct nv_rm_unmap_memory_dma {
    uint32_t hClient, hDevice, hDma, hMemory;
    uint32_t flags, _pad0;
    uint64_t dmaOffset, size; /* size 0: the whole mapping */
    uint32_t status, _pad1;
} nv_rm_unmap_memory_dma;
NV_ABI_ASSERT(nv_rm_unmap_memory_dma, 48);
NV_ABI_AT(nv_rm_unmap_memory_dma, dmaOffset, 24);
NV_ABI_AT(nv_rm_unmap_memory_dma, status, 40);

/* (src/nvidia/arch/nvalloc/unix/include/nv-ioctl.h) */
typedef struct nv_card_info {
    uint8_t valid, _pad0[3];
    uint32_t pci_domain;
    uint8_t pci_bus, pci_slot, pci_function, _pad1;
    uint16_t pci_vendor_id, pci_device_id;
    uint32_t gpu_id;
    uint16_t interrupt_line, _pad2[1];
    uint64_t reg_address, reg_size, fb_address, fb_size;
    uint32_t minor_number;
    char dev_name[10];
    uint8_t _pad3[2];
} nv_card_info;
NV_ABI_ASSERT(nv_card_info, 72);
NV_ABI_AT(nv_card_info, pci_domain, 4);
NV_ABI_AT(nv_card_info, gpu_id, 16);
NV_ABI_AT(nv_card_info, reg_address, 24);
NV_ABI_AT(nv_card_info, fb_size, 48);
NV_ABI_AT(nv_card_info, minor_number, 56);
NV_ABI_AT(nv_card_info, dev_name, 60);
#define NV_CARD_INFO_MAX 64

typedef struct nv_register_fd {
    int32_t ctl_fd;
} nv_register_fd;
NV_ABI_ASSERT(nv_register_fd, 4);

#define NV_IOCTL_RM_ALLOC NV_IOWR(NV_ESC_RM_ALLOC, sizeof(nv_rm_alloc))
#define NV_IOCTL_RM_CONTROL NV_IOWR(NV_ESC_RM_CONTROL, sizeof(nv_rm_control))
#define NV_IOCTL_RM_FREE NV_IOWR(NV_ESC_RM_FREE, sizeof(nv_rm_free))
#define NV_IOCTL_RM_ALLOC_MEMORY NV_IOWR(NV_ESC_RM_ALLOC_MEMORY, sizeof(nv_rm_alloc_memory))
#define NV_IOCTL_RM_MAP_MEMORY NV_IOWR(NV_ESC_RM_MAP_MEMORY, sizeof(nv_rm_map_memory))
#define NV_IOCTL_CARD_INFO NV_IOWR(NV_ESC_CARD_INFO, sizeof(nv_card_info) * NV_CARD_INFO_MAX)
#define NV_IOCTL_REGISTER_FD NV_IOWR(NV_ESC_REGISTER_FD, sizeof(nv_register_fd))
#define NV_IOCTL_RM_MAP_MEMORY_DMA NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, sizeof(nv_rm_map_memory_dma))
#define NV_IOCTL_RM_UNMAP_MEMORY_DMA NV_IOWR(NV_ESC_RM_UNMAP_MEMORY_DMA, sizeof(nv_rm_unmap_memory_dma))
_Static_assert(NV_IOCTL_RM_ALLOC == 0xC020462Bul, "RM_ALLOC ioctl number");
_Static_assert(NV_IOCTL_CARD_INFO == 0xD20046C8ul, "CARD_INFO ioctl number");
_Static_assert(NV_IOCTL_RM_MAP_MEMORY == 0xC038464Eul, "RM_MAP_MEMORY ioctl number");

/* ** UVM (open-gpu-kernel-modules kernel-open/nvidia-uvm/uvm_ioctl.h,
 * uvm_linux_ioctl.h): the command is the plain number, the kernel copies
 * sizeof(params) both ways and reports in rmStatus. */
enum nv_uvm_cmd {
    NV_UVM_INITIALIZE = 0x30000001,
    NV_UVM_REGISTER_GPU_VASPACE = 25,
    NV_UVM_UNREGISTER_GPU_VASPACE = 26,
    NV_UVM_REGISTER_CHANNEL = 27,
    NV_UVM_UNREGISTER_CHANNEL = 28,
    NV_UVM_ENABLE_PEER_ACCESS = 29,
    NV_UVM_MAP_EXTERNAL_ALLOCATION = 33,
    NV_UVM_FREE = 34,
    NV_UVM_REGISTER_GPU = 37,
    NV_UVM_UNREGISTER_GPU = 38,
    NV_UVM_CREATE_EXTERNAL_RANGE = 73,
    NV_UVM_MM_INITIALIZE = 75,
};

typedef struct nv_uvm_initialize {
    uint64_t flags;
    uint32_t rmStatus, _pad;
} nv_uvm_initialize;
NV_ABI_ASSERT(nv_uvm_initialize, 16);

typedef struct nv_uvm_mm_initialize {
    int32_t uvmFd;
    uint32_t rmStatus;
} nv_uvm_mm_initialize;
NV_ABI_ASSERT(nv_uvm_mm_initialize, 8);

typedef struct nv_uvm_register_gpu {
    uint8_t gpu_uuid[16];
    uint8_t numaEnabled, _pad0[3];
    int32_t numaNodeId, rmCtrlFd;
    uint32_t hClient, hSmcPartRef, rmStatus;
} nv_uvm_register_gpu;
NV_ABI_ASSERT(nv_uvm_register_gpu, 40);
NV_ABI_AT(nv_uvm_register_gpu, rmCtrlFd, 24);
NV_ABI_AT(nv_uvm_register_gpu, rmStatus, 36);

typedef struct nv_uvm_unregister_gpu {
    uint8_t gpu_uuid[16];
    uint32_t rmStatus;
} nv_uvm_unregister_gpu;
NV_ABI_ASSERT(nv_uvm_unregister_gpu, 20);

typedef struct nv_uvm_register_gpu_vaspace {
    uint8_t gpuUuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient, hVaSpace, rmStatus;
} nv_uvm_register_gpu_vaspace;
NV_ABI_ASSERT(nv_uvm_register_gpu_vaspace, 32);

typedef nv_uvm_unregister_gpu nv_uvm_unregister_gpu_vaspace; /* {gpuUuid, rmStatus} */

typedef struct nv_uvm_register_channel {
    uint8_t gpuUuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient, hChannel, _pad0;
    uint64_t base, length;
    uint32_t rmStatus, _pad1;
} nv_uvm_register_channel;
NV_ABI_ASSERT(nv_uvm_register_channel, 56);
NV_ABI_AT(nv_uvm_register_channel, base, 32);
NV_ABI_AT(nv_uvm_register_channel, rmStatus, 48);

typedef struct nv_uvm_unregister_channel {
    uint8_t gpuUuid[16];
    uint32_t hClient, hChannel, rmStatus;
} nv_uvm_unregister_channel;
NV_ABI_ASSERT(nv_uvm_unregister_channel, 28);

typedef struct nv_uvm_create_external_range {
    uint64_t base, length;
    uint32_t rmStatus, _pad;
} nv_uvm_create_external_range;
NV_ABI_ASSERT(nv_uvm_create_external_range, 24);

/* (kernel-open/common/inc/nv_uvm_user_types.h) */
typedef struct nv_uvm_gpu_mapping_attributes {
    uint8_t gpuUuid[16];
    uint32_t gpuMappingType; /* 1 ReadWriteAtomic */
    uint32_t gpuCachingType, gpuFormatType, gpuElementBits, gpuCompressionType;
} nv_uvm_gpu_mapping_attributes;
NV_ABI_ASSERT(nv_uvm_gpu_mapping_attributes, 36);
#define NV_UVM_MAX_GPUS 256
#define NV_UVM_MAPPING_READ_WRITE_ATOMIC 1

typedef struct nv_uvm_map_external_allocation {
    uint64_t base, length, offset;
    nv_uvm_gpu_mapping_attributes perGpuAttributes[NV_UVM_MAX_GPUS];
    uint64_t gpuAttributesCount;
    int32_t rmCtrlFd;
    uint32_t hClient, hMemory, rmStatus;
} nv_uvm_map_external_allocation;
NV_ABI_ASSERT(nv_uvm_map_external_allocation, 9264);
NV_ABI_AT(nv_uvm_map_external_allocation, gpuAttributesCount, 9240);
NV_ABI_AT(nv_uvm_map_external_allocation, hMemory, 9256);
NV_ABI_AT(nv_uvm_map_external_allocation, rmStatus, 9260);

/* UVM_ENABLE_PEER_ACCESS_PARAMS (uvm_ioctl.h): PCIe peers between two
 * registered GPUs of the va_space; NVLink peers are enabled when the GPUs
 * register, and enabling them again answers NV_ERR_INVALID_DEVICE
 * (uvm_va_space.c uvm_api_enable_peer_access) */
typedef struct nv_uvm_enable_peer_access {
    uint8_t gpuUuidA[16], gpuUuidB[16];
    uint32_t rmStatus;
} nv_uvm_enable_peer_access;
NV_ABI_ASSERT(nv_uvm_enable_peer_access, 36);
NV_ABI_AT(nv_uvm_enable_peer_access, rmStatus, 32);

typedef struct nv_uvm_free {
    uint64_t base, length;
    uint32_t rmStatus, _pad;
} nv_uvm_free;
NV_ABI_ASSERT(nv_uvm_free, 24);

/* ** classes: enum nv_class is in compiler/nv_chips.h, beside the family
 * table that names each family's classes */

/* ** allocation parameters (nvos.h, class/cl0080.h, cl2080.h, cl83de.h,
 * alloc/alloc_channel.h) */
typedef struct nv_device_alloc { /* NV0080_ALLOC_PARAMETERS */
    uint32_t deviceId, hClientShare, hTargetClient, hTargetDevice, flags, _pad0;
    uint64_t vaSpaceSize, vaStartInternal, vaLimitInternal;
    uint32_t vaMode, _pad1;
} nv_device_alloc;
NV_ABI_ASSERT(nv_device_alloc, 56);
NV_ABI_AT(nv_device_alloc, vaMode, 48);
#define NV_DEVICE_ALLOCATION_FLAGS_VASPACE_SIZE 0x8u /* nvos.h */
#define NV_DEVICE_ALLOCATION_FLAGS_RESTRICT_RESERVED_VALIMITS 0x800u
#define NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES 2u

typedef struct nv_subdevice_alloc { /* NV2080_ALLOC_PARAMETERS */
    uint32_t subDeviceId;
} nv_subdevice_alloc;
NV_ABI_ASSERT(nv_subdevice_alloc, 4);

/* NV_VASPACE_ALLOCATION_PARAMETERS: 56 bytes from 580 (pasid added), 48 before */
typedef struct nv_vaspace_alloc {
    uint32_t index, flags;
    uint64_t vaSize, vaStartInternal, vaLimitInternal;
    uint32_t bigPageSize, _pad0;
    uint64_t vaBase;
    uint32_t pasid, _pad1; /* 580+ */
} nv_vaspace_alloc;
NV_ABI_ASSERT(nv_vaspace_alloc, 56);
NV_ABI_AT(nv_vaspace_alloc, vaSize, 8);
NV_ABI_AT(nv_vaspace_alloc, vaBase, 40);
NV_ABI_AT(nv_vaspace_alloc, pasid, 48);
#define NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED (1u << 3)
#define NV_VASPACE_FLAGS_ENABLE_PAGE_FAULTING (1u << 6)

typedef struct nv_tsg_alloc { /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS */
    uint32_t hObjectError, hObjectEccError, hVASpace, engineType;
    uint8_t bIsCallingContextVgpuPlugin, _pad[3];
} nv_tsg_alloc;
NV_ABI_ASSERT(nv_tsg_alloc, 20);
NV_ABI_AT(nv_tsg_alloc, engineType, 12);
#define NV2080_ENGINE_TYPE_GRAPHICS 1u
#define NV2080_ENGINE_TYPE_GR7 8u   /* GR1..GR7: MIG's (cl2080_notification.h) */
#define NV2080_ENGINE_TYPE_LAST 0x54u

typedef struct nv_ctxshare_alloc { /* NV_CTXSHARE_ALLOCATION_PARAMETERS */
    uint32_t hVASpace, flags, subctxId;
} nv_ctxshare_alloc;
NV_ABI_ASSERT(nv_ctxshare_alloc, 12);
#define NV_CTXSHARE_FLAGS_SUBCONTEXT_SYNC 0u
#define NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC 1u
#define NV_CTXSHARE_FLAGS_SUBCONTEXT_SPECIFIED 2u
#define NV_CTXSHARE_FLAGS_SUBCONTEXT_ASYNC_PREFER_LOWER 3u
#define NV_CTXSHARE_SUBCTXID_PREFER_LOWER_SUCCESS (1u << 31)

typedef struct nv_memory_desc { /* NV_MEMORY_DESC_PARAMS */
    uint64_t base, size;
    uint32_t addressSpace, cacheAttrib;
} nv_memory_desc;
NV_ABI_ASSERT(nv_memory_desc, 24);

#define NV_MAX_SUBDEVICES 8
typedef struct nv_channel_alloc { /* NV_CHANNEL_ALLOC_PARAMS */
    uint32_t hObjectError, hObjectBuffer;
    uint64_t gpFifoOffset; /* GPU VA of the ring */
    uint32_t gpFifoEntries, flags, hContextShare, hVASpace;
    uint32_t hUserdMemory[NV_MAX_SUBDEVICES];
    uint64_t userdOffset[NV_MAX_SUBDEVICES];
    uint32_t engineType, cid, subDeviceId, hObjectEccError;
    nv_memory_desc instanceMem, userdMem, ramfcMem, mthdbufMem;
    uint32_t hPhysChannelGroup, internalFlags;
    nv_memory_desc errorNotifierMem, eccErrorNotifierMem;
    uint32_t ProcessID, SubProcessID;
    uint32_t encryptIv[3], decryptIv[3], hmacNonce[8];
    uint32_t tpcConfigID, _pad;
} nv_channel_alloc;
NV_ABI_ASSERT(nv_channel_alloc, 368);
NV_ABI_AT(nv_channel_alloc, gpFifoOffset, 8);
NV_ABI_AT(nv_channel_alloc, gpFifoEntries, 16);
NV_ABI_AT(nv_channel_alloc, hContextShare, 24);
NV_ABI_AT(nv_channel_alloc, hUserdMemory, 32);
NV_ABI_AT(nv_channel_alloc, userdOffset, 64);
NV_ABI_AT(nv_channel_alloc, engineType, 128);

typedef struct nv_memory_alloc { /* NV_MEMORY_ALLOCATION_PARAMS */
    uint32_t owner, type, flags, width, height;
    int32_t pitch;
    uint32_t attr, attr2, format, comprCovg, zcullCovg, _pad0;
    uint64_t rangeLo, rangeHi, size, alignment, offset, limit, address;
    uint32_t ctagOffset, hVASpace, internalflags, tag;
    int32_t numaNode;
    uint32_t _pad1;
} nv_memory_alloc;
NV_ABI_ASSERT(nv_memory_alloc, 128);
NV_ABI_AT(nv_memory_alloc, attr, 24);
NV_ABI_AT(nv_memory_alloc, format, 32);
NV_ABI_AT(nv_memory_alloc, size, 64);
NV_ABI_AT(nv_memory_alloc, limit, 88);
/* NVOS32 type, flags, attr and attr2 fields as tinygrad's recipe sets them
 * (nvos.h NVOS32_*; nv-facts §2 "Memory recipe") */
#define NVOS32_TYPE_IMAGE 0u
#define NVOS32_TYPE_NOTIFIER 13u
#define NVOS32_ALLOC_FLAGS_VIDMEM 0x1C101u /* MAP_NOT_REQUIRED|HANDLE_PROVIDED|ALIGNMENT_FORCE|IGNORE_BANK|PERSISTENT */
#define NVOS32_ALLOC_FLAGS_SYSMEM 0x0C101u
#define NVOS32_ATTR_PAGE_SIZE_HUGE (3u << 23)
#define NVOS32_ATTR_LOCATION_PCI (1u << 25)
#define NVOS32_ALLOC_FLAGS_USE_BEGIN_END 0x20000u
#define NVOS32_ALLOC_FLAGS_VIRTUAL 0x80000u
#define NVOS32_ATTR_PHYSICALITY_NONCONTIG (3u << 27) /* "allow non-contiguous" */
#define NVOS32_ATTR2_ZBC_PREFER_NO (1u << 0)
#define NVOS32_ATTR2_GPU_CACHEABLE_YES (1u << 2)
#define NVOS32_ATTR2_GPU_CACHEABLE_NO (2u << 2)
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB (1u << 20)
#define NV_MMU_PTE_KIND_GENERIC_MEMORY 6u
/* NVOS02 flags for OS-described host memory: non-contiguous, cached, no map */
#define NVOS02_FLAGS_OS_DESCRIPTOR 0x40001010u

/* NV_OS_DESC_MEMORY_ALLOCATION_PARAMS (nvos.h): host memory described by
 * its address, the RM_ALLOC form of RM_ALLOC_MEMORY's OS descriptor */
typedef struct nv_os_desc_alloc {
    uint32_t type, flags, attr, attr2;
    uint64_t descriptor; /* the CPU address */
    uint64_t limit;      /* size - 1 */
    uint32_t descriptorType, tag; /* NVOS32_DESCRIPTOR_TYPE_VIRTUAL_ADDRESS 0 */
} nv_os_desc_alloc;
NV_ABI_ASSERT(nv_os_desc_alloc, 40);
NV_ABI_AT(nv_os_desc_alloc, descriptor, 16);
NV_ABI_AT(nv_os_desc_alloc, descriptorType, 32);

/* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS (class/cl0070.h) */
typedef struct nv_memory_virtual_alloc {
    uint64_t offset; /* the range's start in the vaspace */
    uint64_t limit;  /* in/out: its last byte; 0 asks for the vaspace's */
    uint32_t hVASpace, _pad; /* 0: the device's default vaspace */
} nv_memory_virtual_alloc;
NV_ABI_ASSERT(nv_memory_virtual_alloc, 24);
NV_ABI_AT(nv_memory_virtual_alloc, hVASpace, 16);

typedef struct nv_debugger_alloc { /* NV83DE_ALLOC_PARAMETERS */
    uint32_t hDebuggerClient_Obsolete, hAppClient, hClass3dObject;
} nv_debugger_alloc;
NV_ABI_ASSERT(nv_debugger_alloc, 12);

/* ** controls (ctrl/ctrl0000/ctrl0000system.h, ctrl0000gpu.h, ctrl0080gpu.h, ctrl2080/ctrl2080gpu.h, gr, fb, ctrla06c.h,
 * ctrlc36f.h, ctrl83de/ctrl83dedebug.h) */
enum nv_ctrl_cmd {
    NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 = 0x13E,
    NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 = 0x205,
    NV0080_CTRL_CMD_GPU_GET_CLASSLIST = 0x800201,
    NV2080_CTRL_CMD_GPU_GET_NAME_STRING = 0x20800110,
    NV2080_CTRL_CMD_GPU_GET_GID_INFO = 0x2080014A,
    NV2080_CTRL_CMD_GR_GET_INFO = 0x20801201,
    NV2080_CTRL_CMD_GR_GET_GPC_MASK = 0x2080122A, /* ctrl2080gr.h: enabled GPCs */
    NV2080_CTRL_CMD_GR_GET_TPC_MASK = 0x2080122B, /* ctrl2080gr.h: enabled TPCs of one GPC */
    NV2080_CTRL_CMD_FB_GET_INFO = 0x20801301,
    NVA06C_CTRL_CMD_GPFIFO_SCHEDULE = 0xA06C0101,
    NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN = 0xC36F0108,
    NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO = 0x83DE0328,
    NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES = 0x83DE030C, /* what a hang report reads */
    NV2080_CTRL_CMD_PERF_BOOST = 0x2080200A,         /* ctrl2080perf.h */
    NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE = 0x2080130E, /* ctrl2080fb.h */
    /* monitoring (hcq info, hcq top): the NON_PRIVILEGED controls of the
     * subdevice that report what nvidia-smi shows; numbers from the 580.142
     * headers named at each struct below, all also present in 570 except
     * THERMAL_SYSTEM_EXECUTE_V2 (575+: src/nvidia/generated/g_subdevice_nvoc.c
     * of 570.x has no entry for it, so RM answers NV_ERR_NOT_SUPPORTED) */
    NV2080_CTRL_CMD_GPU_GET_PIDS = 0x2080018D,
    NV2080_CTRL_CMD_GPU_GET_PID_INFO = 0x2080018E,
    NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2 = 0x20800513,
    NV2080_CTRL_CMD_BUS_GET_PCI_INFO = 0x20801801,
    NV2080_CTRL_CMD_BUS_GET_INFO_V2 = 0x20801823,
    NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE = 0x20802068,
    NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2 = 0x20802096,
    NV2080_CTRL_CMD_RC_GET_ERROR_COUNT = 0x20802205,
    NV2080_CTRL_CMD_ECC_GET_VOLATILE_COUNTS = 0x20803401,
};

/* driverVersionBuffer, versionBuffer, driverBranch, titleBuffer, two
 * changelists: 1032 bytes; drivers without driverBranch take 776 */
#define NV_BUILD_VERSION_STRING 256
typedef struct nv_build_version {
    char driverVersionBuffer[NV_BUILD_VERSION_STRING];
    char versionBuffer[NV_BUILD_VERSION_STRING];
    char driverBranch[NV_BUILD_VERSION_STRING];
    char titleBuffer[NV_BUILD_VERSION_STRING];
    uint32_t changelistNumber, officialChangelistNumber;
} nv_build_version;
NV_ABI_ASSERT(nv_build_version, 1032);
#define NV_BUILD_VERSION_OLD_SIZE 776u

typedef struct nv_gpu_id_info_v2 {
    uint32_t gpuId, gpuFlags, deviceInstance, subDeviceInstance, sliStatus, boardId, gpuInstance;
    int32_t numaId;
} nv_gpu_id_info_v2;
NV_ABI_ASSERT(nv_gpu_id_info_v2, 32);
NV_ABI_AT(nv_gpu_id_info_v2, deviceInstance, 8);

typedef struct nv_classlist {
    uint32_t numClasses, _pad;
    uint64_t classList; /* u32[numClasses], or 0 to ask the count */
} nv_classlist;
NV_ABI_ASSERT(nv_classlist, 16);

typedef struct nv_gid_info {
    uint32_t index, flags, length;
    uint8_t data[256];
} nv_gid_info;
NV_ABI_ASSERT(nv_gid_info, 268);
#define NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY 2u

/* NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS (ctrl2080gpu.h, 570-580): the
 * string is a union of u8 ascii[64] and u16 unicode[64], so the ASCII
 * name is at most 64 bytes though the union is 128 (the 590 headers drop
 * the unicode member and the struct shrinks to 68 bytes) */
#define NV2080_GPU_MAX_NAME_STRING_LENGTH 64u
typedef struct nv_name_string {
    uint32_t gpuNameStringFlags; /* 0 ASCII */
    union {
        uint8_t ascii[NV2080_GPU_MAX_NAME_STRING_LENGTH];
        uint16_t unicode[NV2080_GPU_MAX_NAME_STRING_LENGTH];
    } gpuNameString;
} nv_name_string;
NV_ABI_ASSERT(nv_name_string, 132);
NV_ABI_AT(nv_name_string, gpuNameString, 4);
_Static_assert(sizeof(((nv_name_string *)0)->gpuNameString.ascii) == 64, "ascii[NV2080_GPU_MAX_NAME_STRING_LENGTH]");

/* NV2080_CTRL_GR_ROUTE_INFO (= NV0080_CTRL_GR_ROUTE_INFO, ctrl0080gr.h):
 * all zero routes to the device's GR engine */
typedef struct nv_gr_route_info {
    uint32_t flags, _pad;
    uint64_t route;
} nv_gr_route_info;
NV_ABI_ASSERT(nv_gr_route_info, 16);
/* NV2080_CTRL_GR_GET_GPC_MASK_PARAMS, NV2080_CTRL_GR_GET_TPC_MASK_PARAMS
 * (ctrl2080gr.h): the floorswept masks, a bit per enabled GPC, and per
 * enabled TPC of GPC gpcId */
typedef struct nv_gr_gpc_mask {
    nv_gr_route_info grRouteInfo;
    uint32_t gpcMask, _pad;
} nv_gr_gpc_mask;
NV_ABI_ASSERT(nv_gr_gpc_mask, 24);
NV_ABI_AT(nv_gr_gpc_mask, gpcMask, 16);
typedef struct nv_gr_tpc_mask {
    nv_gr_route_info grRouteInfo;
    uint32_t gpcId, tpcMask;
} nv_gr_tpc_mask;
NV_ABI_ASSERT(nv_gr_tpc_mask, 24);
NV_ABI_AT(nv_gr_tpc_mask, gpcId, 16);
NV_ABI_AT(nv_gr_tpc_mask, tpcMask, 20);

typedef struct nv_info_entry { /* NV2080_CTRL_GR_INFO, NV2080_CTRL_FB_INFO, NV2080_CTRL_BUS_INFO */
    uint32_t index, data;
} nv_info_entry;

typedef struct nv_gr_get_info {
    uint32_t grInfoListSize, _pad0;
    uint64_t grInfoList;
    uint32_t routeFlags, _pad1; /* NV2080_CTRL_GR_ROUTE_INFO */
    uint64_t route;
} nv_gr_get_info;
NV_ABI_ASSERT(nv_gr_get_info, 32);
#define NV_GR_INFO_MAX 0x3au /* NV2080_CTRL_GR_INFO_MAX_SIZE: indexes below it */
enum nv_gr_info_index { /* ctrl0080gr.h NV0080_CTRL_GR_INFO_INDEX_* */
    NV_GR_INFO_SM_VERSION = 0x0C,
    NV_GR_INFO_MAX_WARPS_PER_SM = 0x0D,
    NV_GR_INFO_LITTER_NUM_GPCS = 0x14,
    NV_GR_INFO_LITTER_NUM_TPC_PER_GPC = 0x17,
    NV_GR_INFO_LITTER_NUM_SM_PER_TPC = 0x20,
};

typedef struct nv_fb_get_info {
    uint32_t fbInfoListSize, _pad;
    uint64_t fbInfoList;
} nv_fb_get_info;
NV_ABI_ASSERT(nv_fb_get_info, 16);
#define NV_FB_INFO_MAX_LIST 0x80u /* NV2080_CTRL_FB_INFO_MAX_LIST_SIZE */
#define NV_FB_INFO_RAM_SIZE 0x07u /* KiB (ctrl2080fb.h NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE) */
#define NV_FB_INFO_HEAP_FREE 0x16u /* KiB free (ctrl2080fb.h NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE) */

typedef struct nv_work_submit_token {
    uint32_t workSubmitToken;
} nv_work_submit_token;
NV_ABI_ASSERT(nv_work_submit_token, 4);

/* NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS: bSkipEnable added in 575 (3 bytes; 2 before) */
typedef struct nv_gpfifo_schedule {
    uint8_t bEnable, bSkipSubmit, bSkipEnable;
} nv_gpfifo_schedule;
NV_ABI_ASSERT(nv_gpfifo_schedule, 3);

typedef struct nv_mmu_fault_entry {
    uint64_t faultAddress;
    uint32_t faultType, accessType;
} nv_mmu_fault_entry;
typedef struct nv_mmu_fault_info { /* NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS */
    nv_mmu_fault_entry mmuFaultInfoList[4];
    uint32_t count, _pad;
} nv_mmu_fault_info;
NV_ABI_ASSERT(nv_mmu_fault_info, 72);
NV_ABI_AT(nv_mmu_fault_info, count, 64);

/* NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS (ctrl83dedebug.h):
 * the SM error state (the exception registers RM caches) of SMs
 * startingSM.., and whether the target channel took an MMU fault */
typedef struct nv_sm_error_state { /* NV83DE_SM_ERROR_STATE_REGISTERS */
    uint32_t hwwGlobalEsr, hwwWarpEsr, hwwWarpEsrPc, hwwGlobalEsrReportMask, hwwWarpEsrReportMask, _pad;
    uint64_t hwwEsrAddr, hwwWarpEsrPc64;
    uint32_t hwwCgaEsr, hwwCgaEsrReportMask;
} nv_sm_error_state;
NV_ABI_ASSERT(nv_sm_error_state, 48);
NV_ABI_AT(nv_sm_error_state, hwwEsrAddr, 24);
#define NV83DE_MAX_SMS_PER_CALL 100u
typedef struct nv_sm_error_states {
    uint32_t hTargetChannel, numSMsToRead;
    nv_sm_error_state smErrorStateArray[NV83DE_MAX_SMS_PER_CALL];
    uint32_t mmuFaultInfo;         /* deprecated copy of mmuFault.faultInfo */
    uint8_t mmuFaultValid, _pad[3]; /* NV83DE_MMU_FAULT_INFO {NvBool valid; NvU32 faultInfo} */
    uint32_t mmuFaultFaultInfo;
    uint32_t startingSM;
} nv_sm_error_states;
NV_ABI_ASSERT(nv_sm_error_states, 4824);
NV_ABI_AT(nv_sm_error_states, mmuFaultInfo, 4808);
NV_ABI_AT(nv_sm_error_states, mmuFaultValid, 4812);
NV_ABI_AT(nv_sm_error_states, startingSM, 4820);

/* NV2080_CTRL_PERF_BOOST_PARAMS (ctrl2080perf.h) */
typedef struct nv_perf_boost {
    uint32_t flags;    /* CMD 1:0: 0 clear, 1 one level, 2 to the maximum; CUDA 4, ASYNC 5, CUDA_PRIORITY 6 */
    uint32_t duration; /* seconds, at most 3600, or 0xffffffff until cleared */
} nv_perf_boost;
NV_ABI_ASSERT(nv_perf_boost, 8);
#define NV_PERF_BOOST_CMD(f) ((f) & 3u)
#define NV_PERF_BOOST_DURATION_MAX 3600u
#define NV_PERF_BOOST_DURATION_INFINITE 0xffffffffu

/* NV2080_CTRL_FB_FLUSH_GPU_CACHE_PARAMS (ctrl2080fb.h) */
#define NV_FB_FLUSH_MAX_ADDRESSES 500u
typedef struct nv_fb_flush_gpu_cache {
    uint64_t addressArray[NV_FB_FLUSH_MAX_ADDRESSES];
    uint32_t addressArraySize, addressAlign;
    uint64_t memBlockSizeBytes;
    uint32_t flags, _pad;
} nv_fb_flush_gpu_cache;
NV_ABI_ASSERT(nv_fb_flush_gpu_cache, 4024);
NV_ABI_AT(nv_fb_flush_gpu_cache, flags, 4016);
/* flags: APERTURE 1:0 (0 video, 1 system, 2 peer), WRITE_BACK 2, INVALIDATE 3, FLUSH_MODE 4 (0 address
 * array, 1 full cache), FB_FLUSH 5 */
#define NV_FB_FLUSH_APERTURE(f) ((f) & 3u)
#define NV_FB_FLUSH_WRITE_BACK (1u << 2)
#define NV_FB_FLUSH_INVALIDATE (1u << 3)
#define NV_FB_FLUSH_FULL_CACHE (1u << 4)
#define NV_FB_FLUSH_FB (1u << 5)

/* ** monitoring controls (hcq info / hcq top). Layouts of driver 580.142,
 * identical in 570.86.15 and 575 (sizes checked by compiling both trees'
 * headers); the clock and power-draw controls nvidia-smi shows are not in
 * the open driver's interface at all (src/nvidia/generated/g_subdevice_nvoc.c
 * lists no CLK or PMGR power-monitor control), so hcq reports them as
 * unavailable rather than guess. */

/* (ctrl2080/ctrl2080thermal.h) NV2080_CTRL_THERMAL_SYSTEM_EXECUTE_V2_PARAMS:
 * a list of instructions RM executes in order; RM refuses a client whose
 * API version, revision or instruction size differ from its own. */
#define NV_THERMAL_API_VER 1u
#define NV_THERMAL_API_REV 0u
#define NV_THERMAL_FLAGS_IGNORE_FAIL 1u
#define NV_THERMAL_MAX_INSTR 32u
enum nv_thermal_opcode {
    NV_THERMAL_GET_TARGET_TYPE = 0x101,      /* {targetIndex, type} */
    NV_THERMAL_GET_SENSORS_AVAILABLE = 0x500, /* {availableSensors} */
    NV_THERMAL_GET_SENSOR_TARGET = 0x520,    /* {sensorIndex, targetIndex} */
    NV_THERMAL_GET_SENSOR_READING = 0x1500,  /* {sensorIndex, value (signed, degrees C)} */
};
enum nv_thermal_target { /* NV2080_CTRL_THERMAL_SYSTEM_TARGET_* */
    NV_THERMAL_TARGET_GPU = 1,
    NV_THERMAL_TARGET_MEMORY = 2,
    NV_THERMAL_TARGET_POWER_SUPPLY = 4,
    NV_THERMAL_TARGET_BOARD = 8,
};
typedef struct nv_thermal_instr {
    uint32_t result, executed, opcode;
    uint32_t operands[8]; /* a union; its `space` member is 8 words */
} nv_thermal_instr;
NV_ABI_ASSERT(nv_thermal_instr, 44);
NV_ABI_AT(nv_thermal_instr, operands, 12);
typedef struct nv_thermal_execute {
    uint32_t clientAPIVersion, clientAPIRevision, clientInstructionSizeOf, executeFlags;
    uint32_t successfulInstructions, instructionListSize;
    nv_thermal_instr instructionList[NV_THERMAL_MAX_INSTR];
} nv_thermal_execute;
NV_ABI_ASSERT(nv_thermal_execute, 1432);
NV_ABI_AT(nv_thermal_execute, instructionList, 24);

/* (ctrl2080/ctrl2080perf.h, ctrl2080gpumon.h) the perfmon utilization
 * samples: a ring RM fills; `tracker` is the oldest entry, the one before
 * it the newest; util is percent x 100 */
typedef struct nv_util_engine { /* NV2080_CTRL_PERF_GPUMON_ENGINE_UTIL_SAMPLE */
    uint32_t util, vgpuScale, procId, subProcessID;
    char subProcessName[100];
    uint32_t _pad;
    uint64_t pOsPidInfo;
} nv_util_engine;
NV_ABI_ASSERT(nv_util_engine, 128);
NV_ABI_AT(nv_util_engine, pOsPidInfo, 120);
typedef struct nv_util_sample { /* NV2080_CTRL_PERF_GPUMON_PERFMON_UTIL_SAMPLE */
    uint64_t timeStamp;         /* ns */
    nv_util_engine fb, gr, nvenc, nvdec, nvjpg, nvofa;
} nv_util_sample;
NV_ABI_ASSERT(nv_util_sample, 776);
NV_ABI_AT(nv_util_sample, gr, 136);
#define NV_UTIL_SAMPLES 72u
#define NV_GPUMON_SAMPLE_TYPE_PERFMON_UTIL 2u
#define NV_GPUMON_PID_INVALID 0xffffffffu
typedef struct nv_util_samples { /* ..._GET_GPUMON_PERFMON_UTIL_SAMPLES_V2_PARAMS */
    uint8_t type, _pad0[3];
    uint32_t bufSize; /* bytes of samples[] the caller offers */
    uint32_t count, tracker;
    nv_util_sample samples[NV_UTIL_SAMPLES];
} nv_util_samples;
NV_ABI_ASSERT(nv_util_samples, 55888);
NV_ABI_AT(nv_util_samples, tracker, 12);
NV_ABI_AT(nv_util_samples, samples, 16);

typedef struct nv_current_pstate { /* NV2080_CTRL_PERF_GET_CURRENT_PSTATE_PARAMS */
    uint32_t currPstate;           /* one bit: 1 << N for PN, 0 undefined */
} nv_current_pstate;
NV_ABI_ASSERT(nv_current_pstate, 4);

/* (ctrl2080/ctrl2080gpu.h) processes with clients on the GPU, and the
 * video memory each holds */
#define NV_GET_PIDS_MAX 950u
#define NV_GET_PIDS_ID_TYPE_CLASS 0u
typedef struct nv_get_pids {
    uint32_t idType, id, pidTblCount;
    uint32_t pidTbl[NV_GET_PIDS_MAX];
} nv_get_pids;
NV_ABI_ASSERT(nv_get_pids, 3812);
NV_ABI_AT(nv_get_pids, pidTbl, 12);
#define NV_PID_INFO_MAX 200u
#define NV_PID_INFO_INDEX_VIDEO_MEMORY_USAGE 0u
typedef struct nv_pid_info { /* NV2080_CTRL_GPU_PID_INFO */
    uint32_t pid, index, result, _pad;
    uint64_t memPrivate, memSharedOwned, memSharedDuped; /* data.vidMemUsage */
    uint64_t protectedMemPrivate, protectedMemSharedOwned, protectedMemSharedDuped;
    uint32_t computeInstanceId, gpuInstanceId; /* smcSubscription */
} nv_pid_info;
NV_ABI_ASSERT(nv_pid_info, 72);
NV_ABI_AT(nv_pid_info, memPrivate, 16);
NV_ABI_AT(nv_pid_info, computeInstanceId, 64);
typedef struct nv_get_pid_info {
    uint32_t pidInfoListCount, _pad;
    nv_pid_info pidInfoList[NV_PID_INFO_MAX];
} nv_get_pid_info;
NV_ABI_ASSERT(nv_get_pid_info, 14408);
NV_ABI_AT(nv_get_pid_info, pidInfoList, 8);

/* (ctrl2080/ctrl2080bus.h) */
typedef struct nv_bus_pci_info {
    uint32_t pciDeviceId;    /* vendor in the low 16 bits, device in the high */
    uint32_t pciSubSystemId; /* subsystem vendor low, subsystem device high */
    uint32_t pciRevisionId, pciExtDeviceId;
} nv_bus_pci_info;
NV_ABI_ASSERT(nv_bus_pci_info, 16);
#define NV_BUS_INFO_MAX 0x34u
#define NV_BUS_INFO_PCIE_GPU_LINK_CTRL_STATUS 0x07u
#define NV_BUS_LINK_SPEED(v) (((v) >> 16) & 0xfu) /* 1 2.5 GT/s ... 6 64 GT/s */
#define NV_BUS_LINK_WIDTH(v) (((v) >> 20) & 0x3fu)
typedef struct nv_bus_get_info_v2 {
    uint32_t busInfoListSize;
    nv_info_entry busInfoList[NV_BUS_INFO_MAX];
} nv_bus_get_info_v2;
NV_ABI_ASSERT(nv_bus_get_info_v2, 420);
NV_ABI_AT(nv_bus_get_info_v2, busInfoList, 4);

/* (ctrl2080/ctrl2080ecc.h) errors since the driver loaded; GPUs without
 * ECC answer NV_ERR_NOT_SUPPORTED */
typedef struct nv_ecc_volatile {
    uint64_t sramCorUni, sramUncParityUni, sramUncSecDedUni, dramCorTot, dramUncTot;
} nv_ecc_volatile;
NV_ABI_ASSERT(nv_ecc_volatile, 40);

/* (ctrl2080/ctrl2080rc.h) robust-channel errors (Xids) recorded since the
 * driver loaded; only for administrators (src/nvidia/src/kernel/gpu/rc/
 * kernel_rc_ctrl.c: NV_ERR_INSUFFICIENT_PERMISSIONS otherwise). The records
 * themselves (RC_GET_ERROR_V2) are protobuf blobs hcq does not decode. */
typedef struct nv_rc_error_count {
    uint32_t errorCount;
} nv_rc_error_count;
NV_ABI_ASSERT(nv_rc_error_count, 4);

/* ** the channel error notifier: NvNotification[0] of the memory named by
 * hObjectError; RM sets info32 to the robust-channel error (the Xid) and
 * status to 0xffff (src/common/sdk/nvidia/inc/nvos.h NvNotification,
 * nverror.h ROBUST_CHANNEL_*) */
typedef struct nv_notification {
    uint32_t timestamp_ns[2];
    uint32_t info32;
    uint16_t info16;
    uint16_t status;
} nv_notification;
NV_ABI_ASSERT(nv_notification, 16);
NV_ABI_AT(nv_notification, status, 14);
enum nv_rc_error { /* the Xids hcq's channels report (nverror.h) */
    NV_RC_FIFO_IDLE_TIMEOUT = 8, /* ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT, "GPU stopped processing" (nverror.h) */
    NV_RC_GR_EXCEPTION = 13,
    NV_RC_FIFO_ERROR_MMU_ERR_FLT = 31,
    NV_RC_PBDMA_ERROR = 32,
    NV_RC_CE0_ERROR = 39, /* CE0..2: 39-41, CE3..5: 70-72, CE6..8: 75-77, CE9: 85, CE10..19: 126-135 */
    NV_RC_CE2_ERROR = 41,
};
/* The Xid of copy engine n's errors (nverror.h ROBUST_CHANNEL_CE<n>_ERROR),
 * 0 past CE19. 58-64 are other units (FB, PMU, SEC2, InfoROM). */
static inline uint32_t nv_xid_ce(uint32_t n)
{
    static const uint8_t base[] = {39, 40, 41, 70, 71, 72, 75, 76, 77, 85};
    return n < 10 ? base[n] : n < 20 ? 126 + (n - 10) : 0;
}
/* The copy engine an Xid names (its n), or -1. */
static inline int nv_xid_ce_index(uint32_t xid)
{
    for (uint32_t n = 0; n < 20; n++)
        if (nv_xid_ce(n) == xid) return (int)n;
    return -1;
}

/* ** usermode page (class/clc361.h): the GPU timer and the doorbell */
#define NV_USERMODE_SIZE 0x10000u
#define NV_USERMODE_TIME_0 0x80u
#define NV_USERMODE_TIME_1 0x84u
#define NV_USERMODE_DOORBELL 0x90u /* NOTIFY_CHANNEL_PENDING: write the work-submit token */

/* ** RM status codes (kernel-open/common/inc/nvstatuscodes.h) */
enum nv_rm_status {
    NV_OK = 0x00,
    NV_ERR_GPU_UUID_NOT_FOUND = 0x12,
    NV_ERR_ILLEGAL_ACTION = 0x16,
    NV_ERR_IN_USE = 0x17,
    NV_ERR_INSERT_DUPLICATE_NAME = 0x19,
    NV_ERR_INSUFFICIENT_RESOURCES = 0x1A,
    NV_ERR_INSUFFICIENT_PERMISSIONS = 0x1B,
    NV_ERR_INVALID_ADDRESS = 0x1E,
    NV_ERR_INVALID_ARGUMENT = 0x1F,
    NV_ERR_INVALID_BASE = 0x20,
    NV_ERR_INVALID_CHANNEL = 0x21,
    NV_ERR_INVALID_CLASS = 0x22,
    NV_ERR_INVALID_CLIENT = 0x23,
    NV_ERR_INVALID_COMMAND = 0x24,
    NV_ERR_INVALID_DEVICE = 0x26,
    NV_ERR_INVALID_FLAGS = 0x29,
    NV_ERR_INVALID_LIMIT = 0x2E,
    NV_ERR_INVALID_OBJECT = 0x31,
    NV_ERR_INVALID_OBJECT_HANDLE = 0x33,
    NV_ERR_INVALID_OBJECT_NEW = 0x34,
    NV_ERR_INVALID_OBJECT_PARENT = 0x36,
    NV_ERR_INVALID_OFFSET = 0x37,
    NV_ERR_INVALID_OWNER = 0x39,
    NV_ERR_INVALID_PARAM_STRUCT = 0x3A,
    NV_ERR_INVALID_PARAMETER = 0x3B,
    NV_ERR_INVALID_STATE = 0x40,
    NV_ERR_NO_MEMORY = 0x51,
    NV_ERR_NOT_SUPPORTED = 0x56,
    NV_ERR_OBJECT_NOT_FOUND = 0x57,
    NV_ERR_OPERATING_SYSTEM = 0x59,
    NV_ERR_OTHER_DEVICE_FOUND = 0x5A,
    NV_ERR_STATE_IN_USE = 0x63,
    NV_ERR_UVM_ADDRESS_IN_USE = 0x68,
    NV_ERR_GENERIC = 0xFFFF,
    NV_WARN_NOTHING_TO_DO = 0x10006,
};

/* ** the interface as tables (nv_names.c): one row per escape, class and
 * control that hcq, the mock or the tracer knows, read by all three (the
 * driver's sizes, the mock's checks, the tracer's names and sizes). */
enum nv_esc_on { /* which device files serve an escape (escape.c NV_CTL_DEVICE_ONLY, NV_ACTUAL_DEVICE_ONLY) */
    NV_ESC_ON_CTL = 1,
    NV_ESC_ON_GPU = 2,
    NV_ESC_ON_ANY = 3,
};
typedef struct nv_escape_desc {
    uint32_t nr;
    const char *name;
    uint32_t size;      /* the argument size nvidia.ko requires exactly; 0: any nonzero multiple of unit */
    uint32_t unit;
    uint32_t size2;     /* a second size it takes (RM_ALLOC's NVOS64 form), 0: none */
    int16_t status_at2; /* the status field in that form */
    uint8_t on;         /* NV_ESC_ON_* */
    int16_t status_at;  /* offset of the RM status field; -1: none (errno only) */
} nv_escape_desc;
/* the row of escape nr, or NULL */
const nv_escape_desc *nv_escape_desc_of(uint32_t nr);

/* a class's allocation parameters as resource_list.h declares them:
 * RS_REQUIRED (a pointer must be given), RS_OPTIONAL (read when given),
 * RS_NONE; RM copies the row's size whatever paramsSize says */
enum nv_param_rule { NV_PARAMS_NONE, NV_PARAMS_OPTIONAL, NV_PARAMS_REQUIRED };
/* the parents resource_list.h allows a class (its RS_LIST of RM internal
 * classes), as bits; serverAllocResourceUnderLock refuses any other parent
 * with NV_ERR_INVALID_OBJECT_PARENT before the class's constructor runs */
enum nv_rs_parent {
    NV_RS_CLIENT = 1u << 0,        /* RmClientResource */
    NV_RS_DEVICE = 1u << 1,        /* Device */
    NV_RS_SUBDEVICE = 1u << 2,     /* Subdevice */
    NV_RS_CHANNEL_GROUP = 1u << 3, /* KernelChannelGroupApi */
    NV_RS_CHANNEL = 1u << 4,       /* KernelChannel */
};
typedef struct nv_class_desc {
    uint32_t cls;
    const char *name;
    uint8_t rule;       /* NV_PARAMS_* */
    uint32_t params;    /* bytes in 580 */
    uint32_t params_old; /* bytes before 580 where they differ (0: the same) */
    uint8_t parents;    /* NV_RS_* */
} nv_class_desc;
const nv_class_desc *nv_class_desc_of(uint32_t cls);
/* the bytes RM copies for class cls under driver major `major` (0 if none) */
uint32_t nv_class_params(uint32_t cls, uint32_t major);

typedef struct nv_ctrl_desc {
    uint32_t cmd;
    const char *name;
    uint32_t size;        /* NVOC paramSize in 580 */
    uint32_t size_old;    /* before size_since (0: the same) */
    uint32_t size_since;  /* the major where size begins */
    uint32_t since;       /* the first major that has the control at all (0: every one) */
} nv_ctrl_desc;
const nv_ctrl_desc *nv_ctrl_desc_of(uint32_t cmd);
/* the paramsSize RM requires for cmd under driver major `major`; 0 when
 * that driver has no such control or it is not in the table */
uint32_t nv_ctrl_params(uint32_t cmd, uint32_t major);

/* ** names (nv_names.c) */
/* "NV_ERR_INVALID_ARGUMENT" etc., "an unknown RM status" for the rest */
const char *nv_status_name(uint32_t status);
/* "HOPPER_COMPUTE_A", "NV2080_CTRL_CMD_GR_GET_INFO", "NV_ESC_RM_ALLOC"
 * (by escape number), "UVM_REGISTER_GPU"; NULL when unknown */
const char *nv_class_name(uint32_t cls);
const char *nv_ctrl_name(uint32_t cmd);
const char *nv_escape_name(uint32_t nr);
const char *nv_uvm_name(uint32_t cmd);
/* The size of a UVM command's argument, which nvidia-uvm copies in and out
 * whole (uvm_ioctl.h's UVM_*_PARAMS); 0 for a command we do not know. */
size_t nv_uvm_arg_size(unsigned long cmd);

#endif
