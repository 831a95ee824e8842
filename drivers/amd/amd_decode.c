/* PM4 and SDMA streams as text (hcq decode, HCQ_DEBUG=4), from the same
 * tables the encoders and the mock use: opcodes and fields in amd_pm4.h and
 * amd_sdma.h, register names per family in amd_regs.c (the dump's arch is
 * the gfx version). What it does not know prints as words. */
#include "drivers/amd/amd.h"
#include "drivers/amd/amd_sdma.h"
#include "drivers/decode.h"

#include <string.h>

static uint64_t u64_at(const uint32_t *p) { return (uint64_t)p[0] | ((uint64_t)p[1] << 32); }

static const char *func_name(uint32_t f)
{
    static const char *n[8] = {"always", "<", "<=", "==", "!=", ">=", ">", "?"};
    return n[f & 7];
}

/* "  (NAME=v FLAG ...)" for the fields of v that are set, and the bits no
 * field covers */
static void fields(FILE *out, amd_fields fl, uint32_t v, uint32_t skip_mask)
{
    if (!fl.f) return;
    uint32_t known = skip_mask;
    const char *sep = " (";
    for (uint32_t i = 0; i < fl.n; i++) {
        amd_field f = fl.f[i];
        known |= amd_fmask(f);
        uint32_t x = amd_fget(f, v);
        if (!x) continue;
        if (f.width == 1) fprintf(out, "%s%s", sep, f.name);
        else fprintf(out, "%s%s=%u", sep, f.name, x);
        sep = " ";
    }
    if (v & ~known) fprintf(out, "%sunknown bits 0x%x", sep, v & ~known), sep = " ";
    if (strcmp(sep, " (")) fprintf(out, ")");
}

static void event_type(FILE *out, uint32_t t)
{
    const char *n = amd_event_name(t);
    if (n) fprintf(out, "%s", n);
    else fprintf(out, "event 0x%x", t);
}

static void pm4_packet(const amd_arch *a, const uint32_t *p, uint32_t n, FILE *out)
{
    uint32_t op = PM4_HDR_OP(p[0]);
    const char *name = pm4_op_name(op);
    amd_family fam = a ? a->family : AMD_FAMILY_GFX11;
    fprintf(out, "%-16s", name ? name : "PKT3");
    if (!name) {
        fprintf(out, " opcode 0x%02x, %u body dwords", op, n - 1);
        return;
    }
    switch (op) {
    case PM4_NOP:
        if (n == 3 && p[1] == AMD_MARK_EXEC) fprintf(out, " (hcq: launch of program %u)", p[2]);
        else if (n == 2 && p[0] == AMD_CMD_BOUNDARY) fprintf(out, " (hcq: a command of %u dwords follows)", p[1]);
        else fprintf(out, " %u dwords", n - 1);
        return;
    case PM4_SET_SH_REG: {
        uint32_t pgm_lo = amd_regs[AMD_REG_PGM_LO].off[fam], pgm = 0;
        bool have_lo = false;
        for (uint32_t i = 2; i < n; i++) {
            uint32_t reg = AMD_SH_REG_BASE + p[1] + i - 2;
            const char *rn = amd_reg_name(fam, reg);
            fprintf(out, "%s %s = 0x%x", i > 2 ? "," : "", rn ? rn : "", p[i]);
            if (!rn) fprintf(out, " (register 0x%x)", reg);
            fields(out, amd_reg_fields(fam, reg), p[i], 0);
            /* COMPUTE_PGM_LO/HI: the kernel's entry >> 8, named */
            if (reg == pgm_lo) have_lo = true, pgm = p[i];
            if (reg == pgm_lo + 1 && have_lo) {
                uint64_t entry = ((uint64_t)p[i] << 32 | pgm) << 8;
                char kn[64];
                if (drv_symbol_name(entry, kn, sizeof kn)) fprintf(out, " (program 0x%llx: `%s`)", (unsigned long long)entry, kn);
                else fprintf(out, " (program 0x%llx)", (unsigned long long)entry);
            }
        }
        return;
    }
    case PM4_DISPATCH_DIRECT:
        if (n == 5) {
            fprintf(out, " groups %ux%ux%u initiator 0x%x", p[1], p[2], p[3], p[4]);
            fields(out, amd_reg_fields(fam, amd_regs[AMD_REG_DISPATCH_INITIATOR].off[fam]), p[4], 0);
        }
        return;
    case PM4_RELEASE_MEM:
        if (n == 8) {
            static const char *data[8] = {"none", "32-bit", "64-bit", "GPU clock", "system clock", "?5", "?6", "?7"};
            static const char *ints[8] = {"none", "interrupt", "interrupt after the write", "?3", "?4", "?5", "?6", "?7"};
            fprintf(out, " ");
            event_type(out, amd_fget(PM4_EVENT_TYPE, p[1]));
            fields(out, amd_release_event_fields(fam), p[1], amd_fmask(PM4_EVENT_TYPE));
            fprintf(out, ", then write %s to %s 0x%llx (value 0x%llx), interrupt: %s", data[amd_fget(PM4_REL_DATA_SEL, p[2])],
                    amd_fget(PM4_REL_DST_SEL, p[2]) ? "L2" : "memory", (unsigned long long)u64_at(p + 3),
                    (unsigned long long)u64_at(p + 5), ints[amd_fget(PM4_REL_INT_SEL, p[2])]);
        }
        return;
    case PM4_ACQUIRE_MEM: {
        uint32_t v = n == 8 ? p[7] : p[1];
        fprintf(out, " %s 0x%x", n == 8 ? "GCR_CNTL" : "CP_COHER_CNTL", v);
        fields(out, amd_acquire_cntl_fields(n == 8 ? AMD_FAMILY_GFX11 : AMD_FAMILY_GFX9), v, 0);
        return;
    }
    case PM4_WAIT_REG_MEM:
        if (n == 7 && amd_fget(PM4_WAIT_MEM_SPACE, p[1]) == PM4_SPACE_MEM)
            fprintf(out, " *0x%llx & 0x%x %s 0x%x", (unsigned long long)u64_at(p + 2), p[5],
                    func_name(amd_fget(PM4_WAIT_FUNCTION, p[1])), p[4]);
        else if (n == 7)
            fprintf(out, " write 0x%x to reg 0x%x, then reg 0x%x & 0x%x %s 0x%x (HDP flush)", p[4], p[2], p[3], p[5],
                    func_name(amd_fget(PM4_WAIT_FUNCTION, p[1])), p[4]);
        return;
    case PM4_WAIT_REG_MEM64:
        if (n == 9)
            fprintf(out, " *0x%llx & 0x%llx %s %llu", (unsigned long long)u64_at(p + 2),
                    (unsigned long long)u64_at(p + 6), func_name(amd_fget(PM4_WAIT_FUNCTION, p[1])),
                    (unsigned long long)u64_at(p + 4));
        return;
    case PM4_EVENT_WRITE:
        if (n == 2) {
            fprintf(out, " ");
            event_type(out, amd_fget(PM4_EVENT_TYPE, p[1]));
            fprintf(out, " index %u", amd_fget(PM4_EVENT_INDEX, p[1]));
        }
        return;
    case PM4_INDIRECT_BUFFER:
        if (n == 4) fprintf(out, " 0x%llx, %u dwords", (unsigned long long)u64_at(p + 1), amd_fget(PM4_IB_SIZE, p[3]));
        return;
    case PM4_PRED_EXEC:
        if (n == 2) fprintf(out, " XCCs 0x%02x: the next %u dwords", amd_fget(PM4_PRED_DEVICES, p[1]),
                            amd_fget(PM4_PRED_COUNT, p[1]));
        return;
    }
}

static hcq_status words(uint64_t va, const uint32_t *dw, uint32_t from, uint32_t ndw, FILE *out)
{
    for (uint32_t k = from; k < ndw; k++) fprintf(out, "0x%010llx: %08x  word\n", (unsigned long long)(va + 4ull * k), dw[k]);
    return HCQ_EFORMAT;
}

static hcq_status decode_pm4(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    const amd_arch *a = amd_arch_by_version(arch);
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], n = PM4_HDR_BODY(h) + 1;
        fprintf(out, "0x%010llx: %08x  ", (unsigned long long)(va + 4ull * i), h);
        if (PM4_HDR_TYPE(h) != 3 || n > ndw - i) {
            fprintf(out, PM4_HDR_TYPE(h) != 3 ? "not a type-3 header\n" : "a %u-dword packet; %u dwords remain\n", n,
                    ndw - i);
            return words(va, dw, i + 1, ndw, out);
        }
        pm4_packet(a, dw + i, n, out);
        fprintf(out, "\n");
        i += n;
    }
    return HCQ_OK;
}

static hcq_status decode_sdma(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    const amd_arch *a = amd_arch_by_version(arch);
    uint32_t count_mask = a && a->sdma_count_bits < 32 ? (1u << a->sdma_count_bits) - 1 : 0x3fffffffu;
    for (uint32_t i = 0; i < ndw;) {
        const uint32_t *p = dw + i;
        uint32_t n = sdma_packet_ndw(p, ndw - i);
        const char *name = sdma_op_name(p[0]);
        fprintf(out, "0x%010llx: %08x  %-12s", (unsigned long long)(va + 4ull * i), p[0], name ? name : "?");
        if (!n) {
            fprintf(out, name ? " runs past the end of the stream\n" : " unknown packet\n");
            return words(va, dw, i + 1, ndw, out);
        }
        switch (amd_fget(SDMA_HDR_OP, p[0])) {
        case SDMA_OP_NOP:
            if (n > 1) fprintf(out, " %u dwords", n);
            break;
        case SDMA_OP_COPY:
            if (sdma_copy_is_empty(p, a ? a->sdma_count_bits : 30)) fprintf(out, " empty (size 0)");
            else fprintf(out, " 0x%llx <- 0x%llx, %u bytes", (unsigned long long)u64_at(p + 5),
                         (unsigned long long)u64_at(p + 3), (p[1] & count_mask) + 1);
            break;
        case SDMA_OP_FENCE: fprintf(out, " *0x%llx = 0x%x", (unsigned long long)u64_at(p + 1), p[3]); break;
        case SDMA_OP_TRAP: fprintf(out, " context %u", amd_fget(SDMA_TRAP_CONTEXT, p[1])); break;
        case SDMA_OP_POLL_REGMEM:
            fprintf(out, " *0x%llx & 0x%x %s 0x%x", (unsigned long long)u64_at(p + 1), p[4],
                    func_name(amd_fget(SDMA_POLL_FUNC, p[0])), p[3]);
            break;
        case SDMA_OP_TIMESTAMP: fprintf(out, " clock -> 0x%llx", (unsigned long long)u64_at(p + 1)); break;
        case SDMA_OP_ATOMIC:
            fprintf(out, " op %u%s on 0x%llx, source 0x%llx", amd_fget(SDMA_ATOMIC_OP, p[0]),
                    amd_fget(SDMA_ATOMIC_OP, p[0]) == SDMA_ATOMIC_ADD64 ? " (add64)" : "", (unsigned long long)u64_at(p + 1),
                    (unsigned long long)u64_at(p + 3));
            break;
        case SDMA_OP_CONST_FILL:
            fprintf(out, " 0x%llx, %u bytes of 0x%x", (unsigned long long)u64_at(p + 1), (p[4] & count_mask) + 1, p[3]);
            break;
        case SDMA_OP_GCR_REQ: {
            uint32_t v = amd_fget(SDMA_GCR_CNTL_LO, p[2]) | amd_fget(SDMA_GCR_CNTL_HI, p[3]) << 16;
            fprintf(out, " GCR_CNTL 0x%x", v);
            fields(out, amd_acquire_cntl_fields(AMD_FAMILY_GFX11), v, 0);
            break;
        }
        }
        fprintf(out, "\n");
        i += n;
    }
    return HCQ_OK;
}

static bool amd_arch_ok(uint32_t arch, char *why, size_t n)
{
    if (amd_arch_by_version(arch)) return true;
    char list[128], *w = why;
    size_t left = n;
    amd_chips_driven_list(list, sizeof list);
    int k = snprintf(w, left, "a gfx target hcq drives (%s), by name or gfx_target_version:", list);
    const amd_chip *c;
    for (unsigned i = 0; (c = amd_chip_at(i)) && k > 0 && (size_t)k < left; i++) {
        if (c->family == AMD_FAMILY_NONE) continue;
        w += k;
        left -= (size_t)k;
        k = snprintf(w, left, " %u", c->gfx_version);
    }
    return false;
}

const drv_decoder drv_amd_pm4_decoder = {"amd-pm4", decode_pm4, amd_arch_ok};
const drv_decoder drv_amd_sdma_decoder = {"amd-sdma", decode_sdma, amd_arch_ok};
