/* AQL packets as text ("amd-aql": `hcq decode --format amd-aql` and the
 * queues `hcq trace --streams` captures): the HSA packet types by name with
 * their fields (kernel dispatch: dims, workgroup and grid sizes, segment
 * sizes, kernel object, kernargs, completion signal; barriers with their
 * dependencies), and AMD's vendor packet that carries a PM4 indirect buffer.
 * Layouts: the HSA Platform System Architecture spec (hsa.h) and ROCR's
 * amd_hsa_queue.h, as named in amd_abi.h. 64 bytes a packet; a partial
 * packet at the end is malformed. */
#include "drivers/amd/amd.h"
#include "drivers/decode.h"

static uint64_t u64_at(const uint32_t *p) { return (uint64_t)p[0] | ((uint64_t)p[1] << 32); }

bool amd_aql_pm4_ib(const uint32_t *pkt, uint64_t *va, uint32_t *ndw)
{
    uint32_t hdr = pkt[0];
    if ((hdr & 0xff) != AQL_TYPE_VENDOR || (hdr >> 16 & 0xff) != AQL_AMD_FORMAT_PM4_IB) return false;
    if (PM4_HDR_TYPE(pkt[1]) != 3 || PM4_HDR_OP(pkt[1]) != PM4_INDIRECT_BUFFER) return false;
    *va = u64_at(pkt + 2) & ~3ull;
    *ndw = amd_fget(PM4_IB_SIZE, pkt[4]);
    return true;
}

static const char *scope(uint32_t s)
{
    static const char *n[4] = {"none", "agent", "system", "?"};
    return n[s & 3];
}

static hcq_status decode_aql(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    (void)arch;
    static const char *types[8] = {"VENDOR", "INVALID", "KERNEL_DISPATCH", "BARRIER_AND", "AGENT_DISPATCH",
                                   "BARRIER_OR", "?6", "?7"};
    uint32_t i = 0;
    for (; i + 16 <= ndw; i += 16) {
        const uint32_t *p = dw + i;
        uint32_t hdr = p[0] & 0xffff, type = hdr & 0xff;
        fprintf(out, "0x%010llx: %08x  %-16s barrier %u acquire %s release %s", (unsigned long long)(va + 4ull * i), p[0],
                type < 8 ? types[type] : "?", (hdr >> 8) & 1, scope(hdr >> 9), scope(hdr >> 11));
        uint64_t ib;
        uint32_t n;
        switch (type) {
        case AQL_TYPE_KERNEL_DISPATCH:
            fprintf(out, "\n    dims %u, workgroup %ux%ux%u, grid %ux%ux%u, private %u B, group %u B\n"
                         "    kernel object 0x%llx, kernargs 0x%llx, completion signal 0x%llx\n",
                    (p[0] >> 16) & 3, p[1] & 0xffff, p[1] >> 16, p[2] & 0xffff, p[3], p[4], p[5], p[6], p[7],
                    (unsigned long long)u64_at(p + 8), (unsigned long long)u64_at(p + 10),
                    (unsigned long long)u64_at(p + 14));
            break;
        case AQL_TYPE_BARRIER_AND:
        case 5: /* BARRIER_OR */
            fprintf(out, "\n    dependencies");
            for (int k = 0; k < 5; k++) fprintf(out, " 0x%llx", (unsigned long long)u64_at(p + 2 + 2 * k));
            fprintf(out, ", completion signal 0x%llx\n", (unsigned long long)u64_at(p + 14));
            break;
        case 4: /* AGENT_DISPATCH */
            fprintf(out, "\n    type %u, return 0x%llx, args 0x%llx 0x%llx 0x%llx 0x%llx, completion signal 0x%llx\n",
                    p[0] >> 16, (unsigned long long)u64_at(p + 2), (unsigned long long)u64_at(p + 4),
                    (unsigned long long)u64_at(p + 6), (unsigned long long)u64_at(p + 8),
                    (unsigned long long)u64_at(p + 10), (unsigned long long)u64_at(p + 14));
            break;
        case AQL_TYPE_VENDOR:
            if (amd_aql_pm4_ib(p, &ib, &n))
                fprintf(out, " AMD PM4_IB: INDIRECT_BUFFER 0x%llx, %u dwords (dw_cnt_remain %u)\n",
                        (unsigned long long)ib, n, p[5]);
            else
                fprintf(out, " AMD format %u\n", p[0] >> 16 & 0xff);
            break;
        default:
            fprintf(out, "\n");
            break;
        }
    }
    if (i < ndw) {
        fprintf(out, "0x%010llx: %u dwords, not a whole 64-byte packet\n", (unsigned long long)(va + 4ull * i), ndw - i);
        return HCQ_EFORMAT;
    }
    return HCQ_OK;
}

const drv_decoder drv_amd_aql_decoder = {"amd-aql", decode_aql};
