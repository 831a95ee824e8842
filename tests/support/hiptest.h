/* Test support: HIP files of tests/corpus/hip built by clang into code
 * objects, and the mock AMD GPU opened on the ISA executor. */
#ifndef HCQ_TESTS_HIPTEST_H
#define HCQ_TESTS_HIPTEST_H

#include <stdbool.h>
#include <stddef.h>

#include "hcq/hcq.h"

/* tests/corpus/hip/<file> built for arch (wave64 on gfx11 where w64) with
 * clang -x hip -nogpuinc -nogpulib --cuda-device-only -O2; malloc'd bytes,
 * or NULL after cr_skip_test where no clang can build it. If path_out is
 * given, the object is also kept in a file there (the caller removes it). */
void *t_build_hip(const char *file, const char *arch, bool w64, size_t *size);
/* The mock (HCQ_MOCK=1, HCQ_MOCK_SHADER=isa) with one AMD GPU of model
 * arch, opened as AMD:0; _cfg adds mock config keys ("watchdog_ms=200"). */
hcq_device *t_open_amd_isa(const char *arch);
hcq_device *t_open_amd_isa_cfg(const char *arch, const char *extra);

#endif
