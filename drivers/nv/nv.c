/* The NVIDIA backend. Not written yet: it finds no device, so NV:N opens
 * fail with HCQ_ENODEV saying no NV device is present. */
#include "drivers/backend.h"

static uint32_t nv_count(void) { return 0; }

const drv_backend drv_nv_backend = {.kind = "NV", .count = nv_count};
