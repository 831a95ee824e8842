/* The NVIDIA device files, for the tracer. Which files they are is known
 * here; their escapes and UVM commands by name come with the NV backend's
 * ABI tables (until then their ioctls print as numbers and raw bytes). */
#include "drivers/trace.h"

#include <ctype.h>
#include <string.h>

static bool is_ctl(const char *p) { return !strcmp(p, "/dev/nvidiactl"); }
static bool is_uvm(const char *p) { return !strncmp(p, "/dev/nvidia-uvm", 15); }
static bool is_gpu(const char *p)
{
    if (strncmp(p, "/dev/nvidia", 11) || !p[11]) return false;
    for (p += 11; *p; p++)
        if (!isdigit((unsigned char)*p)) return false;
    return true;
}

const trace_decoder trace_nvidiactl_decoder = {"nvidiactl", is_ctl, NULL, NULL};
const trace_decoder trace_nvidia_uvm_decoder = {"nvidia-uvm", is_uvm, NULL, NULL};
const trace_decoder trace_nvidia_gpu_decoder = {"nvidiaN", is_gpu, NULL, NULL};
