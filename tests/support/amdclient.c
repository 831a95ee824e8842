#include "amdclient.h"

#include "base/base.h"
#include "drivers/mock/mock.h"
#include "drivers/sys.h"
#include "hcqtest.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int kio(kc *c, unsigned long cmd, void *arg) { return sys_ioctl(c->kfd, cmd, arg); }
int kdrm(kc *c, unsigned long cmd, void *arg) { return sys_ioctl(c->drm, cmd, arg); }

void kc_open(kc *c, const char *spec)
{
    setenv("HCQ_MOCK", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure(spec));
    memset(c, 0, sizeof *c);
    cr_assert_eq(amd_topology_read(&c->node, 1), 1);
    c->kfd = sys_open("/dev/kfd", O_RDWR);
    cr_assert_geq(c->kfd, 0);
    char path[64];
    snprintf(path, sizeof path, "/dev/dri/renderD%u", c->node.render_minor);
    c->drm = sys_open(path, O_RDWR);
    cr_assert_geq(c->drm, 0);
    kfd_acquire_vm_args av = {.drm_fd = (uint32_t)c->drm, .gpu_id = c->node.gpu_id};
    cr_assert_eq(kio(c, KFD_IOC_ACQUIRE_VM, &av), 0);
}

uint64_t kc_alloc_h(kc *c, uint64_t size, uint32_t flags, bool cpu, uint64_t *handle)
{
    int err = 0;
    uint64_t span = base_align_up(size, 4096);
    void *p = sys_mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &err);
    cr_assert_not_null(p);
    kfd_alloc_memory_args a = {.va_addr = (uint64_t)(uintptr_t)p, .size = size, .gpu_id = c->node.gpu_id,
                               .flags = flags | KFD_ALLOC_WRITABLE | KFD_ALLOC_EXECUTABLE};
    cr_assert_eq(kio(c, KFD_IOC_ALLOC_MEMORY, &a), 0, "ALLOC_MEMORY_OF_GPU of %llu bytes", (unsigned long long)size);
    if (cpu)
        cr_assert_not_null(sys_mmap(p, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, c->drm,
                                    (off_t)a.mmap_offset, &err),
                           "mmap: %s", strerror(err));
    uint32_t ids[1] = {c->node.gpu_id};
    kfd_map_memory_args m = {.handle = a.handle, .device_ids_array_ptr = (uint64_t)(uintptr_t)ids, .n_devices = 1};
    cr_assert_eq(kio(c, KFD_IOC_MAP_MEMORY, &m), 0);
    cr_assert_eq(m.n_success, 1);
    if (handle) *handle = a.handle;
    return a.va_addr;
}

uint64_t kc_alloc(kc *c, uint64_t size, uint32_t flags, bool cpu) { return kc_alloc_h(c, size, flags, cpu, NULL); }

uint64_t kc_gtt(kc *c, uint64_t size)
{
    return kc_alloc(c, size, KFD_ALLOC_GTT | KFD_ALLOC_COHERENT | KFD_ALLOC_UNCACHED, true);
}
