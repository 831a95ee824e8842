/* The AMD part of the mock GPU: an emulated amdkfd with its sysfs topology
 * and the GPU behind it. Not written yet: it emulates no GPU, so under
 * HCQ_MOCK=1 there is no AMD device (the AMD issue fills this in). */
#include "drivers/mock/mock.h"

const mock_driver mock_amd_driver = {.name = "amd"};
