/* Which real targets a mock GPU runs as machine code (compiler/isa.h). */
#include "compiler/isa.h"

#include "base/base.h"
#include "compiler/sass.h"

#include <stdio.h>
#include <string.h>

/* target names, exactly, the executor that runs their machine code, and
 * whether it does so by default (HCQ_MOCK_SHADER unset): a target whose
 * executor runs hcq's own suites is the default there; the others keep
 * host twins by default until it does */
static const struct {
    const char *target;
    const char *executor;
    bool nv;          /* its decoder is nvdisasm (sass.h) */
    bool by_default;
} executors[] = {
    /* NVIDIA: SASS decoded once per code blob (sass.h), run by drivers/mock/mock_sass*.c */
    {"sm_80", "SASS executor", .nv = true, .by_default = true},
    {"sm_86", "SASS executor", .nv = true, .by_default = true},
    {"sm_89", "SASS executor", .nv = true, .by_default = true},
    {"sm_90", "SASS executor", .nv = true, .by_default = true},
    {"sm_90a", "SASS executor", .nv = true, .by_default = true},
    /* AMD: the ISA decoded once per program (amdgpu_isa.h), run by drivers/mock/mock_amd_isa*.c; hcq's own
     * suites pass on it on all three (the integer dot products were the last gap) */
    {"gfx1100", "gfx11 ISA executor", .by_default = true},
    {"gfx90a", "gfx9 ISA executor", .by_default = true},
    {"gfx942", "gfx9 ISA executor", .by_default = true},
};

static int find(const char *target)
{
    for (size_t i = 0; target && i < sizeof executors / sizeof executors[0]; i++)
        if (!strcmp(target, executors[i].target)) return (int)i;
    return -1;
}

const char *cc_isa_executor(const char *target, char *why, size_t why_size)
{
    int i = find(target);
    if (i >= 0) return executors[i].executor;
    snprintf(why, why_size, "no executor runs %s machine code yet", target ? target : "(no target)");
    return NULL;
}

int cc_mock_shader(const char *target, const char **var)
{
    const base_env *e = base_env_get();
    const char *t = target ? target : "";
    if (!strncmp(t, "mock-", 5)) t += 5;
    if (!strncmp(t, "sm_", 3) && e->mock_shader_nv) {
        if (var) *var = "HCQ_MOCK_SHADER_NV";
        return e->mock_shader_nv_kind;
    }
    if (!strncmp(t, "gfx", 3) && e->mock_shader_amd) {
        if (var) *var = "HCQ_MOCK_SHADER_AMD";
        return e->mock_shader_amd_kind;
    }
    if (var) *var = "HCQ_MOCK_SHADER";
    return e->mock_shader_kind;
}

bool cc_isa_on(const char *target, char *why, size_t why_size)
{
    const char *var;
    int ms = cc_mock_shader(target, &var);
    if (ms == BASE_MOCK_SHADER_IR || ms == BASE_MOCK_SHADER_TWIN || ms == BASE_MOCK_SHADER_NONE) {
        snprintf(why, why_size, "%s=%s", var, ms == BASE_MOCK_SHADER_IR ? "ir" : ms == BASE_MOCK_SHADER_TWIN ? "twin" : "none");
        return false;
    }
    if (!cc_isa_executor(target, why, why_size)) return false;
    if (ms == BASE_MOCK_SHADER_ISA) return true; /* a missing decoder is then the load's error, saying so */
    int i = find(target);
    if (!executors[i].by_default) {
        snprintf(why, why_size, "the %s does not run %s by default yet; HCQ_MOCK_SHADER=isa runs it",
                 executors[i].executor, target);
        return false;
    }
    char tool[400];
    if (executors[i].nv && !sass_nvdisasm(tool, sizeof tool)) {
        snprintf(why, why_size, "the %s needs nvdisasm: %s", executors[i].executor, tool);
        return false;
    }
    return true;
}
