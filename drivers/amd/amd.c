/* The AMD backend. Not written yet: it finds no device, so AMD:N opens
 * fail with HCQ_ENODEV saying no AMD device is present. */
#include "drivers/backend.h"

static uint32_t amd_count(void) { return 0; }

const drv_backend drv_amd_backend = {.kind = "AMD", .count = amd_count};
