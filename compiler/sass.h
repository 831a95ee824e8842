/* compiler/sass.h: NVIDIA SASS decoded once into a form the mock GPU's
 * executor runs (drivers/mock/mock_sass*.c).
 *
 * NVIDIA does not document its instruction encodings, so the decoder is
 * NVIDIA's own disassembler: nvdisasm (PyPI nvidia-cuda-nvdisasm) prints
 * the raw instruction bytes of a kernel (`nvdisasm -b SM90`), and its text
 * is parsed here ONCE into an array of sass_insn: an opcode from a table,
 * its modifiers as bits and derived fields (compare, boolean op, types in
 * order, rounding), and up to six operands (registers R/UR/P/UP/B,
 * immediates, c[bank][offset], memory references, special registers,
 * branch targets as instruction indices). The executor never sees text,
 * except each instruction's own, kept for messages.
 *
 * Decodes are cached in the kernel cache under the SHA-256 of the code
 * bytes, the SM and SASS_DECODER_VERSION, so a machine without nvdisasm
 * runs what was decoded elsewhere (`hcq compile` fills it).
 *
 * Where nvdisasm is: HCQ_NVDISASM, else `nvdisasm` on PATH, else the PyPI
 * wheel's bin/ under the usual site-packages directories (sass_tool.c). */
#ifndef HCQ_COMPILER_SASS_H
#define HCQ_COMPILER_SASS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/hcq/base.h"

/* bump when the decoded form or its parse changes: old cache entries are
 * then ignored */
#define SASS_DECODER_VERSION 9u

/* ** opcodes the executor knows; everything else decodes as SASS_OP_UNKNOWN
 * and is an illegal instruction when executed (never a silent no-op) */
#define SASS_OPCODES(_)                                                                                         \
    _(UNKNOWN) _(NOP) _(EXIT) _(BRA) _(BRX) _(JMP) _(CALL) _(RET) _(BSSY) _(BSYNC) _(BREAK) _(BMOV) _(WARPSYNC) \
    _(BAR) _(MEMBAR) _(FENCE) _(ERRBAR) _(CCTL) _(DEPBAR) _(BPT) _(YIELD) _(NANOSLEEP) _(KILL)                   \
    _(MOV) _(UMOV) _(MOV32I) _(SEL) _(USEL) _(FSEL) _(S2R) _(S2UR) _(CS2R) _(R2UR) _(R2P) _(P2R) _(UP2UR)       \
    _(LDC) _(ULDC) _(PLOP3) _(UPLOP3)                                                                           \
    _(IADD3) _(UIADD3) _(IMAD) _(UIMAD) _(IMUL) _(LEA) _(ULEA) _(LOP3) _(ULOP3) _(SHF) _(USHF) _(SHL) _(SHR)     \
    _(USHL) _(USHR) _(PRMT) _(UPRMT) _(ISETP) _(UISETP) _(IMNMX) _(UIMNMX) _(VIMNMX) _(VIMNMX3) _(VIADDMNMX) _(IABS) _(POPC) _(UPOPC)    \
    _(FLO) _(UFLO) _(BREV) _(UBREV) _(BMSK) _(UBMSK) _(SGXT) _(USGXT) _(VIADD) _(IADD) _(ISCADD) _(BFE) _(BFI)   \
    _(FADD) _(FMUL) _(FFMA) _(FMNMX) _(FSETP) _(FSET) _(FCHK) _(FRND) _(MUFU) _(FSWZADD)                         \
    _(DADD) _(DMUL) _(DFMA) _(DSETP) _(DMNMX)                                                                   \
    _(HADD2) _(HMUL2) _(HFMA2) _(HSETP2) _(HMNMX2) _(HSET2)                                                     \
    _(I2F) _(I2FP) _(F2I) _(F2IP) _(F2F) _(F2FP) _(I2I) _(I2IP)                                                 \
    _(LDG) _(STG) _(LD) _(ST) _(LDS) _(STS) _(LDL) _(STL) _(ATOMG) _(ATOM) _(ATOMS) _(RED) _(REDG)              \
    _(SHFL) _(VOTE) _(VOTEU) _(MATCH) _(REDUX) _(ELECT) _(B2R) _(HMMA) _(LDSM)

#define SASS_OP_ENUM(n) SASS_OP_##n,
typedef enum sass_opcode { SASS_OPCODES(SASS_OP_ENUM) SASS_OP_COUNT } sass_opcode;
#undef SASS_OP_ENUM

/* ** modifiers: every `.NAME` after the opcode, as one bit each; the
 * decoder also derives the fields below from them */
#define SASS_MODS(_)                                                                                          \
    _(E) _(U32) _(S32) _(U64) _(S64) _(U16) _(S16) _(U8) _(S8) _(F16) _(BF16) _(F32) _(F64) _(B32) _(B64)        \
    _(M64) _(M128) _(WIDE) _(HI) _(LO) _(X) _(EX) _(SX32) _(IADD) _(SHL) _(MOV) _(LUT) _(FTZ) _(SAT) _(RN)       \
    _(RZ) _(RM) _(RP) _(TRUNC) _(FLOOR) _(CEIL) _(NTZ) _(L) _(R) _(W) _(AND) _(OR) _(XOR) _(PASS) _(ADD) _(MIN)   \
    _(MAX) _(INC) _(DEC) _(EXCH) _(CAS) _(CAST) _(SPIN) _(POPC) _(SUM) _(IDX) _(UP) _(DOWN) _(BFLY) _(ALL)        \
    _(ANY) _(EQ) _(NE) _(LT) _(LE) _(GT) _(GE) _(NUM) _(NAN) _(LTU) _(EQU) _(LEU) _(GTU) _(NEU) _(GEU) _(T)      \
    _(F) _(SYNC) _(ARV) _(RED) _(DEFER_BLOCKING) _(DIV) _(U) _(REL) _(NOINC) _(NODEC) _(ABS) _(STRONG) _(GPU)     \
    _(SYS) _(SM) _(CTA) _(CONSTANT) _(EF) _(EL) _(LU) _(EU) _(NA) _(SC) _(VC) _(CLEAR) _(PACK_AB) _(MMA)         \
    _(EX2) _(LG2) _(RCP) _(RSQ) _(SIN) _(COS) _(SQRT) _(TANH) _(RCP64H) _(RSQ64H) _(FMZ) _(BF16_V2) _(H1_H1)      \
    _(ALIGN) _(PRIVATE) _(ZD) _(INVALL) _(IVALL) _(GEN) _(LDGSTS) _(VIEW) _(ASYNC) _(S) _(B1) _(IVAL)            \
    _(D2) _(D4) _(M8) _(M4) _(M2) _(RELU) _(V2) _(NODEP) _(FMA) _(SH) _(BRX) _(CONV) _(MMIO) _(MATCH) _(NOT) _(BF) _(RESULT)    \
    _(S16x2) _(U16x2) _(16x2) _(16816) _(M88) _(MT88) _(MAT2) _(MAT4)

#define SASS_MOD_ENUM(n) SASS_M_##n,
typedef enum sass_mod { SASS_MODS(SASS_MOD_ENUM) SASS_MOD_COUNT } sass_mod;
#undef SASS_MOD_ENUM
#define SASS_MOD_WORDS ((SASS_MOD_COUNT + 63) / 64)

/* ** operands */
enum {
    SASS_K_NONE,
    SASS_K_R,     /* reg: 0..254, 255 = RZ */
    SASS_K_UR,    /* reg: 0..62, 63 = URZ */
    SASS_K_P,     /* reg: 0..6, 7 = PT */
    SASS_K_UP,    /* reg: 0..6, 7 = UPT */
    SASS_K_B,     /* convergence barrier B0..B15 */
    SASS_K_IMM,   /* imm: integer bits, or (SASS_F_FLOAT) a double's bits as printed */
    SASS_K_CBANK, /* c[reg][imm]; reg2 / SASS_F_IDX_*: an index register */
    SASS_K_MEM,   /* [reg(.64) + UR reg2 + imm]; SASS_F_BASE_UR: reg is a UR */
    SASS_K_SR,    /* special register SASS_SR_* */
    SASS_K_PR,    /* PR: all predicates as bits (reg 0), UPR: the uniform ones (reg 1) */
    SASS_K_TARGET /* a code address (bytes); the decoder turns it into an index in imm */
};
enum {
    SASS_F_NEG = 1u << 0,   /* -x */
    SASS_F_ABS = 1u << 1,   /* |x| */
    SASS_F_NOT = 1u << 2,   /* !P, ~R */
    SASS_F_WIDE = 1u << 3,  /* R.64 in an address */
    SASS_F_FLOAT = 1u << 4, /* a decimal immediate (imm holds a double's bits) */
    SASS_F_BASE_UR = 1u << 5,
    SASS_F_IDX_R = 1u << 6,  /* c[][R+off] */
    SASS_F_IDX_UR = 1u << 7, /* c[][UR+off], or a memory operand's UR term */
};
/* halves and bytes of a register operand (sel) */
enum { SASS_SEL_NONE, SASS_SEL_H0_H0, SASS_SEL_H1_H1, SASS_SEL_H0, SASS_SEL_H1, SASS_SEL_F32, SASS_SEL_B0, SASS_SEL_B1,
       SASS_SEL_B2, SASS_SEL_B3, SASS_SEL_H1_H0, SASS_SEL_BF16_V2, SASS_SEL_X4, SASS_SEL_X8, SASS_SEL_X16 };

/* special registers (S2R / S2UR / CS2R) */
#define SASS_SRS(_)                                                                                           \
    _(SRZ) _(SR_TID_X) _(SR_TID_Y) _(SR_TID_Z) _(SR_CTAID_X) _(SR_CTAID_Y) _(SR_CTAID_Z) _(SR_TID) _(SR_LANEID)    \
    _(SR_CLOCKLO) _(SR_CLOCKHI) _(SR_GLOBALTIMERLO) _(SR_GLOBALTIMERHI) _(SR_EQMASK) _(SR_LTMASK) _(SR_LEMASK)     \
    _(SR_GTMASK) _(SR_GEMASK) _(SR_CgaCtaId) _(SR_SWINHI) _(SR_SWINLO) _(SR_VIRTID) _(SR_NCTAID_X) _(SR_NCTAID_Y) \
    _(SR_NCTAID_Z) _(SR_NTID_X) _(SR_NTID_Y) _(SR_NTID_Z) _(SR_SMID) _(SR_WARPID) _(SR_NSMID) _(SR_NWARPID)      \
    _(SR_VIRTUALSMID) _(SR_CLUSTERID_X) _(SR_CLUSTERID_Y) _(SR_CLUSTERID_Z) _(SR_CTARANK) _(SR_CLOCK)

#define SASS_SR_ENUM(n) SASS_##n,
typedef enum sass_sr { SASS_SRS(SASS_SR_ENUM) SASS_SR_COUNT } sass_sr;
#undef SASS_SR_ENUM

typedef struct sass_opnd {
    uint8_t kind, flags, sel, reg2; /* reg2: a memory or bank operand's index register (R: 255 none; UR) */
    uint32_t reg;
    uint64_t imm;
} sass_opnd;

#define SASS_MAX_OPNDS 7
typedef struct sass_insn {
    uint16_t op;            /* sass_opcode */
    uint8_t guard;          /* bits 0-2: predicate (7 = PT), 0x08: a uniform predicate, 0x10: negated */
    uint8_t nops;
    uint8_t types[3];       /* the type modifiers in order (SASS_M_U32, SASS_M_F16, ...; 0: none) */
    uint8_t ntypes;
    uint64_t mods[SASS_MOD_WORDS];
    uint32_t text;          /* the instruction's text: offset in the program's string table */
    uint32_t target;        /* BRA/BSSY/CALL/BRA.DIV: the target's instruction index */
    sass_opnd o[SASS_MAX_OPNDS];
} sass_insn;

static inline bool sass_has(const sass_insn *i, sass_mod m)
{
    return (i->mods[m / 64] >> (m % 64)) & 1;
}

/* ** a decoded kernel */
typedef struct sass_prog {
    uint32_t sm;            /* 80, 86, 89, 90 */
    uint32_t ninsns;        /* one per 16 code bytes */
    sass_insn *insns;
    char *strings;          /* each instruction's text, NUL-ended */
    uint32_t strings_size;
    uint8_t sha[32];        /* of the code bytes */
    /* not serialized: */
    const uint8_t *code;    /* the code bytes (the table's copy) */
    size_t code_size;
    const void *_Atomic binary; /* the cubin the code was loaded from, if a loader said (sass_attach): set
                                   (release) after binary_size and kernel, so a reader that sees it sees them */
    size_t binary_size;
    char kernel[64];        /* its kernel's name there */
    void *_Atomic mock_info; /* the mock's parse of that kernel, made on first use, kept */
} sass_prog;

/* The program as nvdisasm's raw-mode text `text` says (one line per
 * instruction, "/\*0040*\/ @!P0 BRA 0x70 ;"), code of `ninsns` instructions
 * (instructions the text lacks are SASS_OP_UNKNOWN), whose bytes are
 * `code` (16 per instruction; NULL: not known, then NaN immediates, which
 * the text prints without their bits, read as the canonical NaN).
 * HCQ_EFORMAT naming the line when the text cannot be read. */
hcq_status sass_parse(const char *text, uint32_t sm, uint32_t ninsns, const void *code, sass_prog **out);
void sass_prog_free(sass_prog *p);
/* The program of the code bytes [code, code + size) for sm: from this
 * process's table, else the kernel cache, else decoded by nvdisasm (then
 * cached). HCQ_ENOTSUP when nvdisasm is missing and no cache has it,
 * saying where it was looked for and how to get it. The result is shared
 * and lives until process exit. */
hcq_status sass_decode(const void *code, size_t size, uint32_t sm, const char *kernel, const sass_prog **out);
/* For code whose length nobody says (a program that uploads its own
 * binary through the preloaded mock): decodes from `code` within `avail`
 * bytes and ends the kernel at ptxas's terminator, the first `BRA` to
 * itself at or after every branch and call target seen before it (ptxas
 * ends each function so, then pads with NOPs); *size_out gets the length. */
hcq_status sass_decode_extent(const void *code, size_t avail, uint32_t sm, const sass_prog **out, size_t *size_out);
/* Decodes every kernel of a cubin for sm (as its bytes lie in the file:
 * what a loader that relocates nothing in them uploads), into the kernel
 * cache: `hcq compile --sass` fills a cache for machines without nvdisasm. */
hcq_status sass_decode_cubin(const void *bin, size_t size, uint32_t sm, unsigned *decoded);
/* Records the cubin (copied) and the kernel of it that p's code was loaded
 * from, so the mock can check a launch against the cubin as the SM would;
 * the first loader's wins. */
hcq_status sass_attach(const sass_prog *p, const void *binary, size_t size, const char *kernel);
/* Serialized form (the cache's): round-trips exactly. */
hcq_status sass_serialize(const sass_prog *p, void **out, size_t *size);
hcq_status sass_deserialize(const void *data, size_t size, sass_prog **out);
/* nvdisasm's path, or NULL with why (where it was looked for). */
const char *sass_nvdisasm(char *why, size_t why_size);
/* The opcode's and modifier's names (for messages and tests). */
const char *sass_op_name(unsigned op);
const char *sass_mod_name(unsigned mod);

#endif
