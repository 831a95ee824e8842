/* tests/support: CUDA sources of the tests built into cubins by nvcc, as a
 * user outside hcq would build them; kept in the kernel cache (keyed by the
 * source and the arch) so reruns build nothing. */
#ifndef HCQ_TESTS_NVCC_BUILD_H
#define HCQ_TESTS_NVCC_BUILD_H

#include <stddef.h>

/* The cubin of `path` (relative to the source tree) for sm_<sm>, malloc'd;
 * skips the test, saying why, where nvcc is missing; fails it when nvcc
 * does. */
void *t_nvcc_cubin(const char *path, unsigned sm, size_t *size);
/* Skips the test unless the SASS executor's decoder (nvdisasm) is here. */
void t_need_nvdisasm(void);

#endif
