/* NVIDIA targets (sm_80, sm_86, sm_89, sm_90, sm_90a and their mock forms):
 * not written yet, so the table is empty and hcq_compile names the targets
 * it knows. The NV backend issue adds the CUDA renderer and these rows. */
#include "compiler/target.h"

const cc_target cc_nv_targets[1];
const size_t cc_nv_target_count = 0;
