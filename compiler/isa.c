/* Which real targets a mock GPU runs as machine code (compiler/isa.h). */
#include "compiler/isa.h"

#include <stdio.h>
#include <string.h>

/* target names, exactly, and the executor that runs their machine code */
static const struct {
    const char *target;
    const char *executor;
} executors[] = {
    /* NVIDIA: SASS decoded once per code blob (sass.h), run by drivers/mock/mock_sass*.c */
    {"sm_80", "SASS executor"},
    {"sm_86", "SASS executor"},
    {"sm_89", "SASS executor"},
    {"sm_90", "SASS executor"},
    {"sm_90a", "SASS executor"},
    /* AMD: the ISA decoded once per program (amdgpu_isa.h), run by drivers/mock/mock_amd_isa*.c */
    {"gfx1100", "gfx11 ISA executor"},
    {"gfx90a", "gfx9 ISA executor"},
    {"gfx942", "gfx9 ISA executor"},
};

const char *cc_isa_executor(const char *target, char *why, size_t why_size)
{
    for (size_t i = 0; target && i < sizeof executors / sizeof executors[0]; i++)
        if (!strcmp(target, executors[i].target)) return executors[i].executor;
    snprintf(why, why_size, "no executor runs %s machine code yet", target ? target : "(no target)");
    return NULL;
}
