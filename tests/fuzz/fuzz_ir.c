#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/ir.h"
#include <hcq/compiler.h>

static bool refuse(void *ctx, const hcq_interp_access *a, char *why, size_t n)
{
    (void)ctx;
    (void)a;
    snprintf(why, n, "fuzzing: no memory");
    return false;
}

int hcq_fuzz_ir(const uint8_t *data, size_t size)
{
    hcq_kernel *k = NULL;
    /* without the checksum, so mutations reach the field checks */
    if (ir_deserialize(data, size, false, &k)) return 0;
    char *dump = hcq_kernel_dump(k);
    free(dump);
    char *src = NULL;
    if (!hcq_render(k, "cpu", &src)) free(src);
    uint32_t n = hcq_kernel_param_count(k);
    hcq_param_info *info = calloc(n ? n : 1, sizeof *info);
    uint32_t bytes = info ? hcq_kernel_param_layout(k, info) : 0;
    uint8_t *kernargs = calloc(1, bytes + 8);
    if (info && kernargs) {
        hcq_interp_mem mem = {refuse, NULL};
        /* an mma runs on whole warps (32 or 64 work-items): such kernels get a group of 64, others 3 */
        bool mma = false;
        for (uint32_t i = 0; i < hcq_kernel_op_count(k); i++) mma |= hcq_kernel_ops(k)[i].op == HCQ_OP_MMA;
        hcq_interp_launch l = {.kernargs = kernargs, .kernarg_size = bytes, .num_groups = {2, 1, 1},
                               .local_size = {mma ? 64 : 3, 1, 1}, .mem = &mem, .op_budget = 100000};
        (void)hcq_interp_run(k, &l);
    }
    free(info);
    free(kernargs);
    hcq_kernel_destroy(k);
    return 0;
}

#ifdef HCQ_LIBFUZZER
HCQ_FUZZ_MAIN(hcq_fuzz_ir)
#endif
