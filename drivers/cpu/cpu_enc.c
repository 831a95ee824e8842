#include "drivers/cpu/cpu.h"

#include "base/base.h"

/* Encoders for the CPU engines' packets. A 64-bit operand is two dwords,
 * each a patchable 32-bit field (low: rshift 0, high: rshift 32). */

static void val64(drv_rec *r, hcq_val v)
{
    drv_rec_val32(r, v, 0);
    drv_rec_val32(r, v, 32);
}

static bool begin(drv_rec *r, uint32_t op)
{
    if (!drv_rec_reserve(r, cpu_ops[op].ndw)) return false;
    drv_rec_dw(r, CPU_PKT(op, cpu_ops[op].ndw));
    return true;
}

hcq_status cpu_rec_wait(drv_rec *r, hcq_val addr, hcq_val value)
{
    if (!begin(r, CPU_OP_WAIT)) return r->err;
    val64(r, addr);
    val64(r, value);
    return r->err;
}

hcq_status cpu_rec_signal(drv_rec *r, hcq_val addr, hcq_val value)
{
    if (!begin(r, CPU_OP_SIGNAL)) return r->err;
    val64(r, addr);
    val64(r, value);
    return r->err;
}

hcq_status cpu_rec_timestamp(drv_rec *r, hcq_val addr)
{
    if (!begin(r, CPU_OP_TIMESTAMP)) return r->err;
    val64(r, addr);
    return r->err;
}

hcq_status cpu_rec_barrier(drv_rec *r)
{
    if (!begin(r, CPU_OP_BARRIER)) return r->err;
    return r->err;
}

hcq_status cpu_rec_exec(drv_rec *r, hcq_program *p, const hcq_val *params, const hcq_dims *dims)
{
    /* the kernarg block: the program's parameters at their offsets; 8 spare
     * bytes so the block is never empty */
    void *cpu = NULL;
    uint64_t va = 0;
    hcq_status s = r->aux_alloc(r, p->info.kernarg_bytes + 8, 16, &cpu, &va);
    if (s) return s;
    r->uses_aux = true;
    drv_rec_params(r, cpu, p, params);
    if (!begin(r, CPU_OP_EXEC)) return r->err;
    val64(r, HCQ_IMM((uint64_t)(uintptr_t)p->priv));
    val64(r, HCQ_IMM(va));
    for (int i = 0; i < 3; i++) drv_rec_val32(r, dims->grid[i], 0);
    for (int i = 0; i < 3; i++) drv_rec_val32(r, dims->block[i], 0);
    return r->err;
}

hcq_status cpu_rec_copy(drv_rec *r, hcq_val dst, hcq_val src, hcq_val size)
{
    if (!begin(r, CPU_OP_COPY)) return r->err;
    val64(r, dst);
    val64(r, src);
    val64(r, size);
    return r->err;
}
