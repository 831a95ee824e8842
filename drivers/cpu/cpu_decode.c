/* The CPU device's packets as text, from the same table the engine uses. */
#include "drivers/cpu/cpu.h"
#include "drivers/decode.h"

static uint64_t u64_at(const uint32_t *p) { return (uint64_t)p[0] | ((uint64_t)p[1] << 32); }

static void packet(const uint32_t *pk, FILE *out)
{
    switch (CPU_PKT_OP(pk[0])) {
    case CPU_OP_WAIT:
        fprintf(out, "wait      signal 0x%llx >= %llu", (unsigned long long)u64_at(pk + 1),
                (unsigned long long)u64_at(pk + 3));
        break;
    case CPU_OP_SIGNAL:
        fprintf(out, "signal    signal 0x%llx = %llu (+ timestamp)", (unsigned long long)u64_at(pk + 1),
                (unsigned long long)u64_at(pk + 3));
        break;
    case CPU_OP_TIMESTAMP:
        fprintf(out, "timestamp signal 0x%llx", (unsigned long long)u64_at(pk + 1));
        break;
    case CPU_OP_BARRIER:
        fprintf(out, "barrier");
        break;
    case CPU_OP_EXEC: {
        char name[64];
        if (drv_symbol_name(u64_at(pk + 1), name, sizeof name)) fprintf(out, "exec      `%s`", name);
        else fprintf(out, "exec      program 0x%llx", (unsigned long long)u64_at(pk + 1));
        fprintf(out, " kernargs 0x%llx grid %ux%ux%u block %ux%ux%u", (unsigned long long)u64_at(pk + 3), pk[5], pk[6],
                pk[7], pk[8], pk[9], pk[10]);
        break;
    }
    case CPU_OP_COPY:
        fprintf(out, "copy      0x%llx <- 0x%llx, %llu bytes", (unsigned long long)u64_at(pk + 1),
                (unsigned long long)u64_at(pk + 3), (unsigned long long)u64_at(pk + 5));
        break;
    default:
        fprintf(out, "nop");
    }
}

static hcq_status cpu_decode(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    (void)arch;
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], op = CPU_PKT_OP(h), n = CPU_PKT_NDW(h);
        fprintf(out, "0x%08llx  ", (unsigned long long)(va + 4ull * i));
        if (op >= CPU_OP_COUNT || n != cpu_ops[op].ndw || i + n > ndw) {
            /* print the rest as words rather than guess */
            fprintf(out, "unknown header 0x%08x (op %u, %u dwords)%s\n", h, op, n,
                    i + n > ndw && op < CPU_OP_COUNT ? ": runs past the end of the stream" : "");
            for (uint32_t k = i + 1; k < ndw; k++) fprintf(out, "0x%08llx  word 0x%08x\n",
                                                         (unsigned long long)(va + 4ull * k), dw[k]);
            return HCQ_EFORMAT;
        }
        packet(dw + i, out);
        fprintf(out, "\n");
        i += n;
    }
    return HCQ_OK;
}

const drv_decoder drv_cpu_decoder = {"cpu", cpu_decode, NULL};
