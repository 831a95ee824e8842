/* A minimal kfd client for the AMD mock's suites, written against the
 * kernel's interface (kfd_ioctl.h, amdkfd's handlers), not hcq's driver:
 * the topology, /dev/kfd, the render node, ACQUIRE_VM, and buffers at
 * addresses the client reserves. On the mock through hcq's syscall table. */
#ifndef HCQ_TESTS_AMDCLIENT_H
#define HCQ_TESTS_AMDCLIENT_H

#include "drivers/amd/amd.h"

typedef struct kc {
    int kfd, drm;
    amd_node node;
} kc;

/* the mock configured with spec (HCQ_MOCK=1), its first GPU opened, VM acquired */
void kc_open(kc *c, const char *spec);
/* an ioctl on /dev/kfd: 0 or -errno */
int kio(kc *c, unsigned long cmd, void *arg);
/* an ioctl on the render node: 0 or -errno */
int kdrm(kc *c, unsigned long cmd, void *arg);
/* a buffer of size bytes with KFD flags (WRITABLE | EXECUTABLE added), mapped
 * for the GPU and, when cpu, for the CPU through the render node; its
 * address (and *handle when given) */
uint64_t kc_alloc_h(kc *c, uint64_t size, uint32_t flags, bool cpu, uint64_t *handle);
uint64_t kc_alloc(kc *c, uint64_t size, uint32_t flags, bool cpu);
/* uncached GTT, CPU-mapped */
uint64_t kc_gtt(kc *c, uint64_t size);

#endif
