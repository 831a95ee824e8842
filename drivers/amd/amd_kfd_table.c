/* The kfd ioctl table (amd_abi.h AMD_KFD_IOCTLS), indexed by number as
 * amdkfd's amdkfd_ioctls[] is (torvalds/linux amdkfd/kfd_chardev.c). */
#include "drivers/amd/amd_abi.h"

#define ROW_(nr, name, dir, type) [nr] = {"AMDKFD_IOC_" #name, KFD_IOC(name), sizeof(type)},
#define NAME_(nr, name) [nr] = {"AMDKFD_IOC_" #name, 0, 0},
const amd_kfd_ioctl_def amd_kfd_ioctls[AMD_KFD_NR_COUNT] = {AMD_KFD_IOCTLS(ROW_) AMD_KFD_IOCTL_NAMES(NAME_)};

const amd_kfd_ioctl_def *amd_kfd_ioctl_of(unsigned long cmd)
{
    if (AMD_IOC_TYPE(cmd) != 'K' || AMD_IOC_NR(cmd) >= AMD_KFD_NR_COUNT) return NULL;
    const amd_kfd_ioctl_def *d = &amd_kfd_ioctls[AMD_IOC_NR(cmd)];
    return d->name ? d : NULL;
}
