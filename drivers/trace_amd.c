/* The AMD device files, for the tracer. Which files they are is known here;
 * kfd commands by name come with the AMD backend's ABI tables (until then
 * their ioctls print as numbers and raw bytes). */
#include "drivers/trace.h"

#include <string.h>

static bool is_kfd(const char *p) { return !strcmp(p, "/dev/kfd"); }
static bool is_dri(const char *p) { return !strncmp(p, "/dev/dri/", 9); }

const trace_decoder trace_kfd_decoder = {"kfd", is_kfd, NULL, NULL};
const trace_decoder trace_dri_decoder = {"dri", is_dri, NULL, NULL};
