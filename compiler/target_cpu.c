/* The "cpu" target: C from render_c.c, built by clang into a host shared
 * object with the CPU ABI (cpu_abi.h). */
#include "compiler/cc.h"
#include "compiler/render_c.h"

#include <stdlib.h>

/* -march=native: the object runs where it was built (the key includes the
 * host CPU). -fwrapv and -ffp-contract=off: the IR's wrap and no-fusion
 * rules. -fno-math-errno: lets sqrt be an instruction (errno is not part of
 * the IR). -w: warnings in generated code help nobody; errors still show. */
static const char *const cpu_args[] = {"-x", "c", "-std=c11", "-O3", "-march=native", "-fPIC", "-shared",
                                       "-fwrapv", "-ffp-contract=off", "-fno-math-errno",
                                       "-fvisibility=hidden", "-w", NULL};
static const char *const cpu_post_args[] = {"-lm", NULL};

hcq_status cc_cpu_render(const cc_target *t, const hcq_kernel *k, char **source_out)
{
    (void)t;
    return cc_render_c(k, source_out);
}

hcq_status cc_cpu_compile_source(const hcq_kernel *k, const char *source, hcq_binary **out)
{
    cc_compile_job job = {.target = cc_target_find("cpu"), .kernel = k, .source = source, .source_ext = ".c",
                          .args = cpu_args, .post_args = cpu_post_args, .extra_key = cc_host_cpu_id()};
    return cc_compile_with_clang(&job, out);
}

hcq_status cc_cpu_compile(const cc_target *t, const hcq_kernel *k, hcq_binary **out)
{
    char *src = NULL;
    hcq_status st = cc_cpu_render(t, k, &src);
    if (st) return st;
    st = cc_cpu_compile_source(k, src, out);
    free(src);
    return st;
}
