/* The NVIDIA part of the mock GPU: an emulated nvidia.ko + nvidia-uvm.ko and
 * the GPU behind them. Not written yet: it emulates no GPU, so under
 * HCQ_MOCK=1 there is no NV device (the NV issue fills this in). */
#include "drivers/mock/mock.h"

const mock_driver mock_nv_driver = {.name = "nv"};
