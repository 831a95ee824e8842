/* compiler/ir.h: the kernel IR's internals, shared by the builder, the
 * verifier, the serializer, the interpreter and the renderers. The public
 * view (ops, builder calls, semantics) is include/hcq/compiler.h; this adds
 * the kernel struct and the small per-dtype facts every pass needs. */
#ifndef HCQ_COMPILER_IR_H
#define HCQ_COMPILER_IR_H

#include <hcq/compiler.h>

#include "base/base.h"

struct hcq_kernel {
    char *name;
    hcq_ir_op *ops;
    uint32_t nops, cap;
    /* The builder's sticky error: the first bad builder call, reported by
     * hcq_kernel_verify() and so by every consumer. */
    hcq_status build_err;
    char *build_msg;
};

/* Names are short and printable so they can be embedded in C source,
 * symbol names and messages without escaping surprises. */
#define IR_NAME_MAX 255

/* Kernels larger than this are not built by anything sane; the limit keeps
 * per-op arrays (interpreter slots, verifier tables) far from overflow. */
#define IR_MAX_OPS (1u << 22)

/* Work-group size limit shared by the interpreter and the CPU ABI (the GPUs
 * allow 1024 work-items per group). */
#define IR_MAX_GROUP_SIZE 1024u

/* Total local memory a kernel may define (per work-group). Devices have
 * their own smaller limits; this only keeps sizes in 32 bits. */
#define IR_MAX_LOCAL_BYTES (1u << 30)

/* ** dtype facts */
static inline bool ir_dt_valid(unsigned t) { return t > HCQ_VOID && t < HCQ_DTYPE_COUNT; }
unsigned ir_dt_bits(hcq_dtype t); /* value width: bool 1, i8 8, ..., f64 64 */

/* ** op classes */
typedef enum ir_class {
    IR_C_SOURCE,  /* special, param, const, define_local */
    IR_C_UNARY,
    IR_C_BINARY,
    IR_C_TERNARY, /* where, mulacc */
    IR_C_CONVERT, /* cast, bitcast */
    IR_C_MEM,     /* load, store */
    IR_C_ACC,     /* define_acc, assign */
    IR_C_CONTROL, /* range, endrange, if, endif, barrier, noop */
    IR_C_VECTOR,  /* vsplat, vget, vset */
    IR_C_MMA,     /* mma: warp-collective (compiler.h "Matrix multiply-accumulate") */
} ir_class;
ir_class ir_op_class(hcq_op op);
/* Whether the op produces a value other ops may name as an operand. */
bool ir_op_has_value(const hcq_ir_op *o);
/* Whether the op uses its arg field (others must leave it 0). */
bool ir_op_uses_arg(hcq_op op);

/* A value's vector lanes from its flags: 0 for a scalar (an unverified op
 * may say 32..128: the verifier refuses those), and as a count (1 for a
 * scalar). */
static inline unsigned ir_vec(const hcq_ir_op *o)
{
    unsigned c = (o->flags & HCQ_IR_FLAG_LANES_MASK) >> HCQ_IR_FLAG_LANES_SHIFT;
    return c ? 1u << c : 0;
}
static inline unsigned ir_lanes(const hcq_ir_op *o) { return ir_vec(o) ? ir_vec(o) : 1u; }

/* ** builder internals */
/* Appends an op without checks; HCQ_IR_NONE (and the sticky error) when the
 * kernel is full or memory runs out. */
hcq_ir_ref ir_append(hcq_kernel *k, const hcq_ir_op *o);
/* Records the sticky builder error if none is recorded yet. */
void ir_build_fail(hcq_kernel *k, const char *fmt, ...) HCQ_PRINTF(2, 3);

/* ** constants
 * A CONST's value in the canonical lane representation the interpreter uses
 * (see interp.h): ints sign- or zero-extended at the dtype's width, bool 0/1,
 * f32/f16/bf16 as float bits in the low word (rounded to the dtype), f64 as
 * double bits. */
uint64_t ir_const_lane(hcq_dtype dt, uint64_t arg);

/* ** serialization internals (fuzzers skip the checksum to reach the
 * field checks behind it) */
hcq_status ir_deserialize(const void *data, size_t size, bool check_sum, hcq_kernel **out);
/* The whole blob's size from its first IR_BLOB_HEADER bytes (HCQ_EFORMAT if
 * they are not a serialized-IR header): for readers of IR in memory, such
 * as the mock GPU's shader core. */
#define IR_BLOB_HEADER 16u
hcq_status ir_blob_size(const void *header, size_t *size_out);

/* Writes "op 7 (add)" style names into buf for messages. */
const char *ir_op_label(char *buf, size_t size, const hcq_kernel *k, hcq_ir_ref i);

#endif
