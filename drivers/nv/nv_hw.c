/* The NVIDIA command formats as data: the QMD field table and the method
 * names (see nv_hw.h). Bit positions from open-gpu-doc
 * classes/compute/clc6c0qmd.h (NVC6C0_QMDV03_00) and clcbc0qmd.h
 * (NVCBC0_QMDV04_00), as collected in nv-facts §4. */
#include "drivers/nv/nv_hw.h"
#include "drivers/nv/nv_abi.h"

#include <string.h>

/* {lo, bits, count, stride, split, jump} per version; {0} = absent */
#define P(lo, bits) {(lo), (bits), 1, 0, 0, 0}
#define PI(lo, bits, count, stride) {(lo), (bits), (count), (stride), 0, 0}
#define NONE {0, 0, 0, 0, 0, 0}
/* V03's release semaphores: RELEASE0 at bit 768, RELEASE1 128 bits on,
 * RELEASE2 at 1664 (clc6c0qmd.h, clc7c0qmd.h, clc9c0qmd.h), 896 past RELEASE0 */
#define REL3(lo, bits) {(lo), (bits), 3, 128, 2, 896 - 2 * 128}

const nv_qmd_field nv_qmd_fields[NV_QMD_NFIELDS] = {
    [NV_QMD_GROUP_ID] = {"QMD_GROUP_ID", {P(128, 6), P(16, 6)}},
    [NV_QMD_TYPE] = {"QMD_TYPE", {NONE, P(23, 3)}},
    [NV_QMD_SM_GLOBAL_CACHING_ENABLE] = {"SM_GLOBAL_CACHING_ENABLE", {P(134, 1), NONE}},
    [NV_QMD_INVALIDATE_TEXTURE_HEADER_CACHE] = {"INVALIDATE_TEXTURE_HEADER_CACHE", {P(186, 1), P(602, 1)}},
    [NV_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE] = {"INVALIDATE_TEXTURE_SAMPLER_CACHE", {P(187, 1), P(603, 1)}},
    [NV_QMD_INVALIDATE_TEXTURE_DATA_CACHE] = {"INVALIDATE_TEXTURE_DATA_CACHE", {P(188, 1), P(604, 1)}},
    [NV_QMD_INVALIDATE_SHADER_DATA_CACHE] = {"INVALIDATE_SHADER_DATA_CACHE", {P(189, 1), P(605, 1)}},
    [NV_QMD_INVALIDATE_INSTRUCTION_CACHE] = {"INVALIDATE_INSTRUCTION_CACHE", {P(190, 1), P(606, 1)}},
    [NV_QMD_INVALIDATE_SHADER_CONSTANT_CACHE] = {"INVALIDATE_SHADER_CONSTANT_CACHE", {P(191, 1), P(607, 1)}},
    [NV_QMD_CWD_MEMBAR_TYPE] = {"CWD_MEMBAR_TYPE", {P(368, 2), P(1136, 2)}},
    [NV_QMD_API_VISIBLE_CALL_LIMIT] = {"API_VISIBLE_CALL_LIMIT", {P(378, 1), P(568, 1)}},
    [NV_QMD_SAMPLER_INDEX] = {"SAMPLER_INDEX", {P(382, 1), P(569, 1)}},
    [NV_QMD_GRID_WIDTH] = {"GRID_WIDTH", {P(384, 32), P(1024, 32)}},
    [NV_QMD_GRID_HEIGHT] = {"GRID_HEIGHT", {P(416, 16), P(1056, 16)}},
    [NV_QMD_GRID_DEPTH] = {"GRID_DEPTH", {P(448, 16), P(1088, 16)}},
    [NV_QMD_CTA_THREAD_DIMENSION0] = {"CTA_THREAD_DIMENSION0", {P(592, 16), P(1152, 16)}},
    [NV_QMD_CTA_THREAD_DIMENSION1] = {"CTA_THREAD_DIMENSION1", {P(608, 16), P(1168, 16)}},
    [NV_QMD_CTA_THREAD_DIMENSION2] = {"CTA_THREAD_DIMENSION2", {P(624, 16), P(1184, 16)}},
    [NV_QMD_SHARED_MEMORY_SIZE] = {"SHARED_MEMORY_SIZE", {P(544, 18), P(584, 18)}},
    [NV_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE] = {"MIN_SM_CONFIG_SHARED_MEM_SIZE", {P(562, 6), P(608, 6)}},
    [NV_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE] = {"MAX_SM_CONFIG_SHARED_MEM_SIZE", {P(569, 6), P(614, 6)}},
    [NV_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE] = {"TARGET_SM_CONFIG_SHARED_MEM_SIZE", {P(657, 6), P(620, 6)}},
    [NV_QMD_VERSION] = {"QMD_VERSION", {P(576, 4), P(576, 4)}},
    [NV_QMD_MAJOR_VERSION] = {"QMD_MAJOR_VERSION", {P(580, 4), P(580, 4)}},
    [NV_QMD_CONSTANT_BUFFER_VALID] = {"CONSTANT_BUFFER_VALID", {PI(640, 1, 8, 1), PI(416, 1, 8, 4)}},
    [NV_QMD_CONSTANT_BUFFER_INVALIDATE] = {"CONSTANT_BUFFER_INVALIDATE", {PI(1074, 1, 8, 64), PI(419, 1, 8, 4)}},
    [NV_QMD_CONSTANT_BUFFER_ADDR_LOWER] = {"CONSTANT_BUFFER_ADDR_LOWER", {PI(1024, 32, 8, 64), PI(1536, 32, 8, 64)}},
    [NV_QMD_CONSTANT_BUFFER_ADDR_UPPER] = {"CONSTANT_BUFFER_ADDR_UPPER", {PI(1056, 17, 8, 64), PI(1568, 19, 8, 64)}},
    [NV_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4] = {"CONSTANT_BUFFER_SIZE_SHIFTED4",
                                              {PI(1075, 13, 8, 64), PI(1587, 13, 8, 64)}},
    [NV_QMD_REGISTER_COUNT] = {"REGISTER_COUNT", {P(648, 9), P(1200, 9)}},
    [NV_QMD_BARRIER_COUNT] = {"BARRIER_COUNT", {P(763, 5), P(1211, 5)}},
    [NV_QMD_SHADER_LOCAL_MEMORY_LOW_SIZE] = {"SHADER_LOCAL_MEMORY_LOW_SIZE", {P(736, 24), P(512, 24)}},
    [NV_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE] = {"SHADER_LOCAL_MEMORY_HIGH_SIZE", {P(1600, 24), P(544, 24)}},
    [NV_QMD_PROGRAM_ADDRESS_LOWER] = {"PROGRAM_ADDRESS_LOWER", {P(1536, 32), P(1216, 32)}},
    [NV_QMD_PROGRAM_ADDRESS_UPPER] = {"PROGRAM_ADDRESS_UPPER", {P(1568, 17), P(1248, 25)}},
    [NV_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED] = {"PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED", {P(256, 32), P(1344, 32)}},
    [NV_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED] = {"PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED", {P(1632, 9), P(1376, 17)}},
    [NV_QMD_PROGRAM_PREFETCH_SIZE] = {"PROGRAM_PREFETCH_SIZE", {P(1641, 9), P(1393, 9)}},
    [NV_QMD_SASS_VERSION] = {"SASS_VERSION", {P(1656, 8), P(536, 8)}},
    [NV_QMD_RELEASE_ENABLE] = {"RELEASE_ENABLE", {REL3(823, 1), PI(320, 1, 3, 16)}},
    [NV_QMD_RELEASE_STRUCTURE_SIZE] = {"RELEASE_STRUCTURE_SIZE", {REL3(830, 2), PI(321, 2, 3, 16)}},
    [NV_QMD_RELEASE_MEMBAR_TYPE] = {"RELEASE_MEMBAR_TYPE", {REL3(819, 1), PI(323, 1, 3, 16)}},
    [NV_QMD_RELEASE_PAYLOAD64B] = {"RELEASE_PAYLOAD64B", {REL3(829, 1), PI(332, 1, 3, 16)}},
    [NV_QMD_RELEASE_ADDRESS_LOWER] = {"RELEASE_ADDRESS_LOWER", {REL3(768, 32), PI(640, 32, 3, 128)}},
    [NV_QMD_RELEASE_ADDRESS_UPPER] = {"RELEASE_ADDRESS_UPPER", {REL3(800, 8), PI(672, 25, 3, 128)}},
    [NV_QMD_RELEASE_PAYLOAD_LOWER] = {"RELEASE_PAYLOAD_LOWER", {REL3(832, 32), PI(704, 32, 3, 128)}},
    [NV_QMD_RELEASE_PAYLOAD_UPPER] = {"RELEASE_PAYLOAD_UPPER", {REL3(864, 32), PI(736, 32, 3, 128)}},
};

void nv_qmd_set(uint32_t *qmd, int ver, nv_qmd_id f, unsigned i, uint64_t v)
{
    unsigned bit, bits;
    if (!nv_qmd_where(ver, f, i, &bit, &bits)) return;
    drv_field_write((uint8_t *)qmd + bit / 8, (uint8_t)bits, (uint8_t)(bit % 8), v);
}

uint64_t nv_qmd_get(const uint32_t *qmd, int ver, nv_qmd_id f, unsigned i)
{
    unsigned bit, bits;
    if (!nv_qmd_where(ver, f, i, &bit, &bits)) return 0;
    uint64_t w = 0;
    unsigned end = bit % 8 + bits, n = end <= 8 ? 1 : end <= 16 ? 2 : end <= 32 ? 4 : 8;
    memcpy(&w, (const uint8_t *)qmd + bit / 8, n);
    w >>= bit % 8;
    return bits >= 64 ? w : w & ((1ull << bits) - 1);
}

void nv_qmd_patch(drv_rec *r, uint32_t *qmd, int ver, nv_qmd_id f, unsigned i, hcq_val v, uint8_t rshift)
{
    unsigned bit, bits;
    if (!nv_qmd_where(ver, f, i, &bit, &bits)) return;
    drv_rec_mem_field(r, (uint8_t *)qmd + bit / 8, v, (uint8_t)bits, (uint8_t)(bit % 8), rshift, 0);
}

/* ** method names, for the mock's messages and the decoder */
typedef struct mname {
    uint32_t mthd;
    const char *name;
} mname;

static const mname host_names[] = {
    {NV_HOST_SET_OBJECT, "SET_OBJECT"},         {NV_HOST_NON_STALL_INTERRUPT, "NON_STALL_INTERRUPT"},
    {NV_HOST_SEM_ADDR_LO, "SEM_ADDR_LO"},       {NV_HOST_SEM_ADDR_HI, "SEM_ADDR_HI"},
    {NV_HOST_SEM_PAYLOAD_LO, "SEM_PAYLOAD_LO"}, {NV_HOST_SEM_PAYLOAD_HI, "SEM_PAYLOAD_HI"},
    {NV_HOST_SEM_EXECUTE, "SEM_EXECUTE"},       {NV_HOST_WFI, "WFI"},
};

static const mname compute_names[] = {
    {NV_COMPUTE_WAIT_FOR_IDLE, "WAIT_FOR_IDLE"},
    {NV_COMPUTE_LINE_LENGTH_IN, "LINE_LENGTH_IN"},
    {NV_COMPUTE_LINE_COUNT, "LINE_COUNT"},
    {NV_COMPUTE_OFFSET_OUT_UPPER, "OFFSET_OUT_UPPER"},
    {NV_COMPUTE_OFFSET_OUT, "OFFSET_OUT"},
    {NV_COMPUTE_LAUNCH_DMA, "LAUNCH_DMA"},
    {NV_COMPUTE_LOAD_INLINE_DATA, "LOAD_INLINE_DATA"},
    {NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A, "SET_SHADER_SHARED_MEMORY_WINDOW_A"},
    {NV_COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B, "SET_SHADER_SHARED_MEMORY_WINDOW_B"},
    {NV_COMPUTE_SEND_PCAS_A, "SEND_PCAS_A"},
    {NV_COMPUTE_SEND_SIGNALING_PCAS2_B, "SEND_SIGNALING_PCAS2_B"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_A, "SET_SHADER_LOCAL_MEMORY_A"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_B, "SET_SHADER_LOCAL_MEMORY_B"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A, "SET_SHADER_LOCAL_MEMORY_WINDOW_A"},
    {NV_COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B, "SET_SHADER_LOCAL_MEMORY_WINDOW_B"},
    {NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "INVALIDATE_SHADER_CACHES_NO_WFI"},
};

static const mname copy_names[] = {
    {NV_COPY_SET_SEMAPHORE_A, "SET_SEMAPHORE_A"},
    {NV_COPY_SET_SEMAPHORE_B, "SET_SEMAPHORE_B"},
    {NV_COPY_SET_SEMAPHORE_PAYLOAD, "SET_SEMAPHORE_PAYLOAD"},
    {NV_COPY_SET_SEMAPHORE_PAYLOAD_UPPER, "SET_SEMAPHORE_PAYLOAD_UPPER"},
    {NV_COPY_LAUNCH_DMA, "LAUNCH_DMA"},
    {NV_COPY_OFFSET_IN_UPPER, "OFFSET_IN_UPPER"},
    {NV_COPY_OFFSET_IN_LOWER, "OFFSET_IN_LOWER"},
    {NV_COPY_OFFSET_OUT_UPPER, "OFFSET_OUT_UPPER"},
    {NV_COPY_OFFSET_OUT_LOWER, "OFFSET_OUT_LOWER"},
    {NV_COPY_PITCH_IN, "PITCH_IN"},
    {NV_COPY_PITCH_OUT, "PITCH_OUT"},
    {NV_COPY_LINE_LENGTH_IN, "LINE_LENGTH_IN"},
    {NV_COPY_LINE_COUNT, "LINE_COUNT"},
};

const char *nv_method_name(int kind, uint32_t mthd)
{
    if (mthd < NV_HOST_MTHD_LIMIT) kind = 0;
    const mname *t = kind == 0 ? host_names : kind == 1 ? compute_names : copy_names;
    size_t n = kind == 0 ? sizeof host_names / sizeof *t
               : kind == 1 ? sizeof compute_names / sizeof *t
                           : sizeof copy_names / sizeof *t;
    for (size_t i = 0; i < n; i++)
        if (t[i].mthd == mthd) return t[i].name;
    return NULL;
}

/* ** method fields (nv_hw.h: nv_mfield) */
static const char *const sem_ops[] = {"ACQUIRE", "RELEASE", "ACQ_STRICT_GEQ", "ACQ_CIRC_GEQ", "ACQ_AND", "ACQ_NOR",
                                      "REDUCTION", NULL};
static const char *const sem_size[] = {"32BIT", "64BIT", NULL};
static const char *const sem_red[] = {"IMIN", "IMAX", "IXOR", "IAND", "IOR", "IADD", "INC", "DEC", NULL};
static const char *const ce_transfer[] = {"NONE", "PIPELINED", "NON_PIPELINED", NULL};
static const char *const ce_sem[] = {"NONE", "RELEASE_ONE_WORD_SEMAPHORE", "RELEASE_FOUR_WORD_SEMAPHORE",
                                     "RELEASE_CONDITIONAL_INTR_SEMAPHORE", NULL};
static const char *const ce_intr[] = {"NONE", "BLOCKING", "NON_BLOCKING", NULL};
static const char *const layout[] = {"BLOCKLINEAR", "PITCH", NULL};
static const char *const aperture[] = {"VIRTUAL", "PHYSICAL", NULL};
static const char *const ce_red[] = {"IMIN", "IMAX", "IXOR", "IAND", "IOR", "IADD", "INC", "DEC", "INVALIDA",
                                     "INVALIDB", "FADD", "FMIN", "FMAX", NULL};
static const char *const ce_flush[] = {"SYS", "GL", NULL};
static const char *const ce_payload[] = {"ONE_WORD", "TWO_WORD", NULL};
static const char *const ce_copy_type[] = {"DEFAULT", "SECURE", "NONPROT2NONPROT", NULL};
static const char *const cd_completion[] = {"FLUSH_DISABLE", "FLUSH_ONLY", "RELEASE_SEMAPHORE", NULL};
static const char *const cd_format[] = {"UNSIGNED_32", "SIGNED_32", NULL};
static const char *const cd_intr[] = {"NONE", "INTERRUPT", NULL};
static const char *const cd_struct[] = {"FOUR_WORDS", "ONE_WORD", NULL};
static const char *const cd_red[] = {"RED_ADD", "RED_MIN", "RED_MAX", "RED_INC", "RED_DEC", "RED_AND", "RED_OR",
                                     "RED_XOR", NULL};
static const char *const pcas_action[] = {"NOP",
                                          "INVALIDATE",
                                          "SCHEDULE",
                                          "INVALIDATE_COPY_SCHEDULE",
                                          "4",
                                          "5",
                                          "INCREMENT_PUT",
                                          "DECREMENT_DEPENDENCE",
                                          "PREFETCH",
                                          "PREFETCH_SCHEDULE",
                                          "INVALIDATE_PREFETCH_COPY_SCHEDULE",
                                          "INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING",
                                          NULL};

static const nv_mfield mfields[] = {
    {0, NV_HOST_SET_OBJECT, "CLASS_ID", 0, 16, NULL, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "OPERATION", 0, 3, sem_ops, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "ACQUIRE_SWITCH_TSG", 12, 1, NULL, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "RELEASE_WFI", 20, 1, NULL, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "PAYLOAD_SIZE", 24, 1, sem_size, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "RELEASE_TIMESTAMP", 25, 1, NULL, 0, 0},
    {0, NV_HOST_SEM_EXECUTE, "REDUCTION", 27, 4, sem_red, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "DST_MEMORY_LAYOUT", 0, 1, layout, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_ENABLE", 1, 1, NULL, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_FORMAT", 2, 2, cd_format, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "COMPLETION_TYPE", 4, 2, cd_completion, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "SYSMEMBAR_DISABLE", 6, 1, NULL, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "INTERRUPT_TYPE", 8, 2, cd_intr, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "SEMAPHORE_STRUCT_SIZE", 12, 1, cd_struct, 0, 0},
    {1, NV_COMPUTE_LAUNCH_DMA, "REDUCTION_OP", 13, 3, cd_red, 0, 0},
    {1, NV_COMPUTE_SEND_SIGNALING_PCAS2_B, "PCAS_ACTION", 0, 4, pcas_action, 0, 0},
    {1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "INSTRUCTION", 0, 1, NULL, 0, 0},
    {1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "GLOBAL_DATA", 4, 1, NULL, 0, 0},
    {1, NV_COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, "CONSTANT", 12, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "DATA_TRANSFER_TYPE", 0, 2, ce_transfer, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "FLUSH_ENABLE", 2, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_TYPE", 3, 2, ce_sem, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "INTERRUPT_TYPE", 5, 2, ce_intr, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SRC_MEMORY_LAYOUT", 7, 1, layout, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "DST_MEMORY_LAYOUT", 8, 1, layout, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "MULTI_LINE_ENABLE", 9, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "REMAP_ENABLE", 10, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "FORCE_RMWDISABLE", 11, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SRC_TYPE", 12, 1, aperture, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "DST_TYPE", 13, 1, aperture, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION", 14, 4, ce_red, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION_SIGN", 18, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_REDUCTION_ENABLE", 19, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "COPY_TYPE", 20, 2, ce_copy_type, HOPPER_DMA_COPY_A, 0},
    {2, NV_COPY_LAUNCH_DMA, "VPRMODE", 22, 2, NULL, 0, AMPERE_DMA_COPY_B},
    {2, NV_COPY_LAUNCH_DMA, "MEMORY_SCRUB_ENABLE", 23, 1, NULL, HOPPER_DMA_COPY_A, 0},
    {2, NV_COPY_LAUNCH_DMA, "FLUSH_TYPE", 25, 1, ce_flush, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "DISABLE_PLC", 26, 1, NULL, 0, 0},
    {2, NV_COPY_LAUNCH_DMA, "SEMAPHORE_PAYLOAD_SIZE", 27, 1, ce_payload, AMPERE_DMA_COPY_B, 0},
};

uint32_t nv_method_fields(int kind, uint32_t mthd, const nv_mfield **out)
{
    if (mthd < NV_HOST_MTHD_LIMIT) kind = 0;
    for (size_t i = 0; i < sizeof mfields / sizeof *mfields; i++) {
        if (mfields[i].kind != kind || mfields[i].mthd != mthd) continue;
        uint32_t n = 0;
        while (i + n < sizeof mfields / sizeof *mfields && mfields[i + n].kind == kind && mfields[i + n].mthd == mthd) n++;
        *out = &mfields[i];
        return n;
    }
    return 0;
}
