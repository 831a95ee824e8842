/* Decoders of NVIDIA command streams for `hcq decode` and HCQ_DEBUG=4:
 * "nv-gpfifo" (a pushbuffer segment: method headers and their data) and
 * "nv-qmd" (a launch descriptor). They read the tables the encoders and
 * the mock use (nv_hw.h): method names and fields by class family, the QMD
 * field table by version.
 *
 * Methods print with their class's prefix, as NVIDIA's headers name them
 * (NVCBC0_SEND_PCAS_A, NVC86F_SEM_EXECUTE). Which class a subchannel holds
 * comes from the SET_OBJECT the stream binds it with; a subchannel the
 * segment does not bind is taken to hold the dump's engine class (the
 * compute class on hcq's compute subchannel 1, the copy class of the same
 * generation on subchannel 4), and its methods say "assumed". Fields are
 * split out (SEM_EXECUTE, LAUNCH_DMA, PCAS actions), address pairs joined,
 * SEND_PCAS_A printed as the QMD address. Unknown methods print as numbers;
 * a header whose data runs past the segment ends the decode with
 * HCQ_EFORMAT. The arch of a dump is the engine's class (0xcbc0, ...). */
#include "drivers/decode.h"
#include "drivers/nv/nv_abi.h"
#include "drivers/nv/nv_hw.h"

#include <stdio.h>
#include <string.h>

/* classes by family (compiler/nv_chips.c) */
static bool is_compute(uint32_t cls)
{
    const nv_family *f = nv_family_for_class(cls);
    return f && f->compute_cls == cls;
}

static bool is_copy(uint32_t cls)
{
    const nv_family *f = nv_family_for_class(cls);
    return f && f->copy_cls == cls;
}

/* the channel class of the engine class's family (whose host methods and
 * prefix the segment's words use) */
static uint32_t host_of(uint32_t cls)
{
    const nv_family *f = nv_family_for_class(cls);
    return f ? f->channel_cls : AMPERE_CHANNEL_GPFIFO_A;
}

/* the copy class of the compute class's family */
static uint32_t copy_of(uint32_t cls)
{
    const nv_family *f = nv_family_for_class(cls);
    return f && is_compute(cls) ? f->copy_cls : 0;
}

static void print_fields(FILE *out, int kind, uint32_t cls, uint32_t mthd, uint32_t v)
{
    if (mthd < NV_HOST_MTHD_LIMIT) kind = 0; /* host methods on any subchannel */
    const nv_mfield *f;
    uint32_t n = nv_method_fields(kind, mthd, &f);
    if (!n) return;
    fprintf(out, "  (");
    const char *sep = "";
    for (uint32_t i = 0; i < n; i++, f++) {
        if ((f->min_cls && cls && cls < f->min_cls) || (f->max_cls && cls > f->max_cls)) continue;
        uint32_t x = (v >> f->lo) & (f->bits >= 32 ? 0xffffffffu : (1u << f->bits) - 1);
        if (!f->values && f->bits == 1) { /* a flag */
            if (x) fprintf(out, "%s%s", sep, f->name), sep = " ";
            continue;
        }
        if (!x && (!f->values || i)) continue; /* zero: only the method's first field says it */
        if (mthd == NV_HOST_SET_OBJECT && kind == 0) {
            const char *cn = nv_class_name(x);
            fprintf(out, "%s%s", sep, cn ? cn : "an unknown class");
            sep = " ";
            continue;
        }
        /* a reduction's kind only matters when the reduction is on */
        if (!strcmp(f->name, "REDUCTION") && (v & 7) != 6 /* OPERATION_REDUCTION */) continue;
        if ((!strcmp(f->name, "SEMAPHORE_REDUCTION") && !(v & (1u << 19))) ||
            (!strcmp(f->name, "REDUCTION_OP") && !(v & 2)))
            continue;
        const char *name = NULL;
        if (f->values)
            for (uint32_t k = 0; f->values[k]; k++)
                if (k == x) name = f->values[k];
        if (name) fprintf(out, "%s%s=%s", sep, f->name, name);
        else fprintf(out, "%s%s=%u", sep, f->name, x);
        sep = " ";
    }
    uint32_t known = 0;
    n = nv_method_fields(kind, mthd, &f);
    for (uint32_t i = 0; i < n; i++)
        known |= (f[i].bits >= 32 ? 0xffffffffu : (1u << f[i].bits) - 1) << f[i].lo;
    if (v & ~known) fprintf(out, "%sunknown bits 0x%x", sep, v & ~known);
    fprintf(out, ")");
}

/* address pairs: the later of the two in a packet prints the address */
typedef struct pair {
    int kind;
    uint32_t hi, lo;
    const char *what;
} pair;
static const pair pairs[] = {
    {0, NV_HOST_SEM_ADDR_HI, NV_HOST_SEM_ADDR_LO, "semaphore"},
    {0, NV_HOST_SEM_PAYLOAD_HI, NV_HOST_SEM_PAYLOAD_LO, "payload"},
    {2, NV_COPY_OFFSET_IN_UPPER, NV_COPY_OFFSET_IN_LOWER, "source"},
    {2, NV_COPY_OFFSET_OUT_UPPER, NV_COPY_OFFSET_OUT_LOWER, "destination"},
    {2, NV_COPY_SET_SEMAPHORE_A, NV_COPY_SET_SEMAPHORE_B, "semaphore"},
    {2, NV_COPY_SET_SEMAPHORE_PAYLOAD_UPPER, NV_COPY_SET_SEMAPHORE_PAYLOAD, "payload"},
    {1, NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A, NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B, "shared window"},
    {1, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B, "local window"},
    {1, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A, NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B, "local memory"},
    {1, NV_COMPUTE_OFFSET_OUT_UPPER, NV_COMPUTE_OFFSET_OUT, "destination"},
};

typedef struct seen {
    uint32_t mthd[16], val[16], n;
} seen;

static void note(seen *s, uint32_t m, uint32_t v)
{
    if (s->n < 16) {
        s->mthd[s->n] = m;
        s->val[s->n++] = v;
    }
}

static bool lookup(const seen *s, uint32_t m, uint32_t *v)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->mthd[i] == m) return *v = s->val[i], true;
    return false;
}

static void print_pair(FILE *out, int kind, uint32_t m, const seen *s)
{
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const pair *p = &pairs[i];
        int pk = p->kind;
        if (m < NV_HOST_MTHD_LIMIT ? pk != 0 : pk != kind) continue;
        if (m != p->hi && m != p->lo) continue;
        uint32_t hi, lo;
        if (!lookup(s, p->hi, &hi) || !lookup(s, p->lo, &lo)) return;
        fprintf(out, "  (%s 0x%llx)", p->what, (unsigned long long)((uint64_t)hi << 32 | lo));
        return;
    }
}

static hcq_status decode_gpfifo(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    static const char *secs[8] = {"?0", "INC", "?2", "NON_INC", "IMMD", "ONE_INC", "?6", "?7"};
    uint32_t bound[8] = {0};
    uint32_t host = host_of(arch);
    for (uint32_t i = 0; i < ndw;) {
        uint32_t h = dw[i], op = nv_mthd_sec_op(h), count = nv_mthd_count(h), sub = nv_mthd_subch(h);
        uint32_t m = nv_mthd_addr(h);
        /* the subchannel's class: bound by SET_OBJECT, else assumed from the engine */
        uint32_t cls = bound[sub];
        bool assumed = !cls;
        if (!cls) cls = is_copy(arch) ? arch : sub == NV_SUBCH_COPY ? copy_of(arch) : arch;
        int kind = is_copy(cls) ? 2 : 1;
        fprintf(out, "0x%010llx: %08x  %s subch %u", (unsigned long long)(va + 4ull * i), h, secs[op], sub);
        if (m >= NV_HOST_MTHD_LIMIT && cls) fprintf(out, " (%s%s)", assumed ? "assumed " : "",
                                                    nv_class_name(cls) ? nv_class_name(cls) : "?");
        if (op == NV_SEC_OP_IMMD) {
            const char *n = nv_method_name(kind, m);
            uint32_t prefix = m < NV_HOST_MTHD_LIMIT ? host : cls;
            if (n && prefix) fprintf(out, " NV%04X_%s(0x%04x) = 0x%x", prefix, n, m, count);
            else fprintf(out, " %s(0x%04x) = 0x%x", n ? n : "method", m, count);
            print_fields(out, kind, cls, m, count);
            fprintf(out, "\n");
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
        seen s = {{0}, {0}, 0};
        for (uint32_t k = 0; k < count; k++) {
            uint32_t mk = op == NV_SEC_OP_INC ? m + 4 * k : op == NV_SEC_OP_NON_INC ? m : m + (k ? 4 : 0);
            const char *n = nv_method_name(kind, mk);
            uint32_t v = dw[i + 1 + k];
            uint32_t prefix = mk < NV_HOST_MTHD_LIMIT ? host : cls;
            char full[96];
            if (n && prefix) snprintf(full, sizeof full, "NV%04X_%s", prefix, n);
            else snprintf(full, sizeof full, "%s", n ? n : "");
            fprintf(out, "    %-44s 0x%08x", full, v);
            if (!n) fprintf(out, "  (method 0x%04x)", mk);
            note(&s, mk, v);
            if (mk == NV_HOST_SET_OBJECT) bound[sub] = v & 0xffffu;
            if (kind == 1 && mk == NV_COMPUTE_SEND_PCAS_A) fprintf(out, "  (QMD at 0x%llx)", (unsigned long long)v << 8);
            print_fields(out, kind, cls, mk, v);
            print_pair(out, kind, mk, &s);
            fprintf(out, "\n");
        }
        i += 1 + count;
    }
    return HCQ_OK;
}

static hcq_status decode_qmd(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    /* the QMD says its version (QMD_MAJOR_VERSION, at the same bits in V03
     * and V04); without the words that hold it, or another number there,
     * the class's family's */
    const nv_family *fam = nv_family_for_class(arch);
    uint32_t major = ndw > 18 ? nv_qmd_major_of(dw) : 0;
    int ver = nv_qmd_ver_of_major(major == 3 || major == 4 ? major : fam ? fam->qmd_major : 3);
    uint32_t need = nv_qmd_bytes(ver) / 4;
    fprintf(out, "QMD V0%d at 0x%llx\n", ver == NV_QMD_V04 ? 4 : 3, (unsigned long long)va);
    if (ndw < need) {
        fprintf(out, "  %u dwords; a V0%d QMD has %u\n", ndw, ver == NV_QMD_V04 ? 4 : 3, need);
        return HCQ_EFORMAT;
    }
#define G(f, i) nv_qmd_get(dw, ver, (f), (i))
    uint64_t prog = G(NV_QMD_PROGRAM_ADDRESS_LOWER, 0) | G(NV_QMD_PROGRAM_ADDRESS_UPPER, 0) << 32;
    char name[64];
    bool named = prog && drv_symbol_name(prog, name, sizeof name);
    fprintf(out, "  launch %s%s%s: grid %llux%llux%llu, block %llux%llux%llu, %llu registers, %llu bytes shared\n",
            named ? "`" : "", named ? name : "of an unknown program", named ? "`" : "",
            (unsigned long long)G(NV_QMD_GRID_WIDTH, 0), (unsigned long long)G(NV_QMD_GRID_HEIGHT, 0),
            (unsigned long long)G(NV_QMD_GRID_DEPTH, 0), (unsigned long long)G(NV_QMD_CTA_THREAD_DIMENSION0, 0),
            (unsigned long long)G(NV_QMD_CTA_THREAD_DIMENSION1, 0),
            (unsigned long long)G(NV_QMD_CTA_THREAD_DIMENSION2, 0), (unsigned long long)G(NV_QMD_REGISTER_COUNT, 0),
            (unsigned long long)G(NV_QMD_SHARED_MEMORY_SIZE, 0));
#undef G
    for (int f = 0; f < NV_QMD_NFIELDS; f++) {
        const nv_qmd_pos *p = &nv_qmd_fields[f].v[ver];
        for (unsigned i = 0; i < p->count; i++) {
            uint64_t v = nv_qmd_get(dw, ver, (nv_qmd_id)f, i);
            if (!v) continue;
            if (p->count > 1) fprintf(out, "  %s(%u) = 0x%llx", nv_qmd_fields[f].name, i, (unsigned long long)v);
            else fprintf(out, "  %s = 0x%llx", nv_qmd_fields[f].name, (unsigned long long)v);
            if (f == NV_QMD_PROGRAM_ADDRESS_LOWER && named) fprintf(out, "  (`%s`)", name);
            fprintf(out, "\n");
        }
    }
    return HCQ_OK;
}

static bool nv_arch_ok(uint32_t arch, char *why, size_t n)
{
    if (is_compute(arch) || is_copy(arch)) return true;
    snprintf(why, n, "the engine's class: 0xc6c0, 0xc7c0, 0xc9c0, 0xcbc0 (compute) or 0xc6b5, 0xc7b5, 0xc8b5 (copy)");
    return false;
}

static bool qmd_arch_ok(uint32_t arch, char *why, size_t n)
{
    if (is_compute(arch)) return true;
    snprintf(why, n, "the compute class the QMD is for: 0xc6c0, 0xc7c0, 0xc9c0 (V03) or 0xcbc0 (V04)");
    return false;
}

const drv_decoder drv_nv_gpfifo_decoder = {"nv-gpfifo", decode_gpfifo, nv_arch_ok};
const drv_decoder drv_nv_qmd_decoder = {"nv-qmd", decode_qmd, qmd_arch_ok};
