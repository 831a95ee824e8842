/* AMD targets (gfx1100, gfx90a, gfx942 and their mock forms): not written
 * yet, so the table is empty. The AMD backend issue adds the HIP renderer
 * and these rows. */
#include "compiler/target.h"

const cc_target cc_amd_targets[1];
const size_t cc_amd_target_count = 0;
