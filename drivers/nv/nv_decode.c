/* Decoders of NVIDIA command streams for `hcq decode` and HCQ_DEBUG=4:
 * "nv-gpfifo" (a pushbuffer segment: method headers and their data) and
 * "nv-qmd" (a launch descriptor). They read the tables the encoders and
 * the mock use (nv_hw.h): method names by class family, the QMD field
 * table by version. Unknown methods print as numbers; a header whose data
 * runs past the segment ends the decode with HCQ_EFORMAT. The arch of a
 * dump is the engine's class (0xcbc0, 0xc8b5, ...). */
#include "drivers/decode.h"
#include "drivers/nv/nv_hw.h"
#include "drivers/nv/nv_abi.h"

#include <stdio.h>

static bool is_compute(uint32_t cls)
{
    return cls == AMPERE_COMPUTE_A || cls == AMPERE_COMPUTE_B || cls == ADA_COMPUTE_A || cls == HOPPER_COMPUTE_A;
}

static void sem_execute(uint32_t v, FILE *out)
{
    static const char *ops[8] = {"ACQUIRE", "RELEASE", "ACQ_STRICT_GEQ", "ACQ_CIRC_GEQ", "ACQ_AND", "ACQ_NOR",
                                 "REDUCTION", "?"};
    fprintf(out, "  (%s%s%s%s)", ops[NV_SEM_EXECUTE_OPERATION(v)],
            v & NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT ? ", 64-bit" : ", 32-bit",
            v & NV_SEM_EXECUTE_RELEASE_WFI ? ", after idle" : "", v & NV_SEM_EXECUTE_RELEASE_TIMESTAMP ? ", timestamp" : "");
}

static hcq_status decode_gpfifo(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    static const char *secs[8] = {"?0", "INC", "?2", "NON_INC", "IMMD", "ONE_INC", "?6", "?7"};
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], op = nv_mthd_sec_op(h), count = nv_mthd_count(h), sub = nv_mthd_subch(h);
        uint32_t m = nv_mthd_addr(h);
        int kind = sub == NV_SUBCH_COPY || (!is_compute(arch) && arch) ? 2 : 1;
        fprintf(out, "0x%010llx: %08x  %s subch %u", (unsigned long long)(va + 4ull * i), h, secs[op], sub);
        if (op == NV_SEC_OP_IMMD) {
            const char *n = nv_method_name(kind, m);
            fprintf(out, " %s(0x%04x) = 0x%x\n", n ? n : "method", m, count);
            i++;
            continue;
        }
        if (op != NV_SEC_OP_INC && op != NV_SEC_OP_NON_INC && op != NV_SEC_OP_ONE_INC) {
            fprintf(out, "  (not a method header)\n");
            return HCQ_EFORMAT;
        }
        fprintf(out, ", %u words\n", count);
        if (count > ndw - i - 1) {
            fprintf(out, "  the header wants %u data words; %u remain\n", count, ndw - i - 1);
            return HCQ_EFORMAT;
        }
        for (uint32_t k = 0; k < count; k++) {
            uint32_t mk = op == NV_SEC_OP_INC ? m + 4 * k : op == NV_SEC_OP_NON_INC ? m : m + (k ? 4 : 0);
            const char *n = nv_method_name(kind, mk);
            uint32_t v = dw[i + 1 + k];
            fprintf(out, "    %-40s 0x%08x", n ? n : "", v);
            if (!n) fprintf(out, "  (method 0x%04x)", mk);
            if (mk == NV_HOST_SEM_EXECUTE) sem_execute(v, out);
            fprintf(out, "\n");
        }
        i += 1 + count;
    }
    return HCQ_OK;
}

static hcq_status decode_qmd(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    int ver = arch >= HOPPER_COMPUTE_A ? NV_QMD_V04 : NV_QMD_V03;
    uint32_t need = nv_qmd_bytes(ver) / 4;
    fprintf(out, "QMD V0%d at 0x%llx\n", ver == NV_QMD_V04 ? 4 : 3, (unsigned long long)va);
    if (ndw < need) {
        fprintf(out, "  %u dwords; a V0%d QMD has %u\n", ndw, ver == NV_QMD_V04 ? 4 : 3, need);
        return HCQ_EFORMAT;
    }
    for (int f = 0; f < NV_QMD_NFIELDS; f++) {
        const nv_qmd_pos *p = &nv_qmd_fields[f].v[ver];
        for (unsigned i = 0; i < p->count; i++) {
            uint64_t v = nv_qmd_get(dw, ver, (nv_qmd_id)f, i);
            if (!v) continue;
            if (p->count > 1) fprintf(out, "  %s(%u) = 0x%llx\n", nv_qmd_fields[f].name, i, (unsigned long long)v);
            else fprintf(out, "  %s = 0x%llx\n", nv_qmd_fields[f].name, (unsigned long long)v);
        }
    }
    return HCQ_OK;
}

const drv_decoder drv_nv_gpfifo_decoder = {"nv-gpfifo", decode_gpfifo};
const drv_decoder drv_nv_qmd_decoder = {"nv-qmd", decode_qmd};
