/* hcq_kernel_dump: one op per line, indented by block, operands as %N:
 *
 *   kernel 'add1': 9 ops, 2 params, 0 local bytes
 *      0: i32   %0 = special group_id.x
 *      3: f32*  %3 = param 0
 *      5: i32   %5 = range %1, %2
 *      6: f32     %6 = load %3[%5]
 *
 * Unverified kernels dump too (that is when a listing helps most); bad
 * fields print as numbers. */
#include "compiler/ir.h"
#include "compiler/ir_float.h"
#include "compiler/mma.h"
#include "compiler/strbuf.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *special_names[] = {"group_id", "local_id", "num_groups", "local_size"};

static void dump_const(cc_sb *b, const hcq_ir_op *o)
{
    hcq_dtype t = (hcq_dtype)o->dtype;
    if (t == HCQ_BOOL)
        cc_sb_printf(b, "%s", o->arg ? "true" : "false");
    else if (hcq_dtype_is_float(t))
        cc_sb_printf(b, "%.17g", ir_bits_f64(o->arg));
    else if (hcq_dtype_is_signed(t))
        cc_sb_printf(b, "%" PRId64, (int64_t)ir_const_lane(t, o->arg));
    else
        cc_sb_printf(b, "%" PRIu64, ir_const_lane(t, o->arg));
}

static void dump_operands(cc_sb *b, const hcq_ir_op *o)
{
    unsigned n = o->nsrc <= HCQ_IR_MAX_SRC ? o->nsrc : HCQ_IR_MAX_SRC;
    bool mem = o->op == HCQ_OP_LOAD || o->op == HCQ_OP_STORE;
    for (unsigned j = 0; j < n; j++) {
        if (mem && j == 1)
            cc_sb_printf(b, "[%%%u]", o->src[1]);
        else
            cc_sb_printf(b, "%s%%%u", j == 0 ? " " : j == 2 && mem ? " " : ", ", o->src[j]);
    }
    if (mem && n == 4) cc_sb_printf(b, o->op == HCQ_OP_LOAD ? " (gate, alt)" : " (gate)");
}

static void dump_op(cc_sb *b, const hcq_kernel *k, uint32_t i, unsigned depth)
{
    const hcq_ir_op *o = &k->ops[i];
    char ty[24], lanes[8] = "";
    if (ir_vec(o)) snprintf(lanes, sizeof lanes, "x%u", ir_vec(o)); /* f32x4 */
    snprintf(ty, sizeof ty, "%s%s%s", hcq_dtype_name((hcq_dtype)o->dtype), lanes, (o->flags & HCQ_IR_FLAG_PTR) ? "*" : "");
    cc_sb_printf(b, "%6u: %-6s%*s", i, o->dtype ? ty : "", (int)(2 * depth), "");
    if (ir_op_has_value(o)) cc_sb_printf(b, "%%%u = ", i);
    if (o->op < HCQ_OP_COUNT)
        cc_sb_printf(b, "%s", hcq_op_name((hcq_op)o->op));
    else
        cc_sb_printf(b, "op#%u", o->op);
    switch (o->op) {
    case HCQ_OP_SPECIAL:
        if ((o->arg & 0xff) <= 3)
            cc_sb_printf(b, " %s.%c", special_names[o->arg & 0xff], (int)('x' + (char)((o->arg >> 8) % 3)));
        else
            cc_sb_printf(b, " 0x%" PRIx64, o->arg);
        break;
    case HCQ_OP_PARAM: cc_sb_printf(b, " %" PRIu64, o->arg); break;
    case HCQ_OP_CONST: cc_sb_printf(b, " "); dump_const(b, o); break;
    case HCQ_OP_DEFINE_LOCAL: cc_sb_printf(b, " [%" PRIu64 "]", o->arg); break;
    case HCQ_OP_MMA: {
        const cc_mma_kind *m = cc_mma_kind_of((unsigned)o->arg);
        if (m) cc_sb_printf(b, " %s", m->info.name);
        else cc_sb_printf(b, " kind#%" PRIu64, o->arg);
        dump_operands(b, o);
        break;
    }
    case HCQ_OP_VGET:
    case HCQ_OP_VSET:
        dump_operands(b, o);
        cc_sb_printf(b, " lane %" PRIu64, o->arg);
        break;
    default:
        dump_operands(b, o);
        if (o->arg) cc_sb_printf(b, " arg=0x%" PRIx64, o->arg);
    }
    cc_sb_printf(b, "\n");
}

char *hcq_kernel_dump(const hcq_kernel *k)
{
    if (!k) {
        base_err(HCQ_EINVAL, "hcq_kernel_dump: kernel is NULL");
        return NULL;
    }
    cc_sb b = {0};
    cc_sb_printf(&b, "kernel '%s': %u ops, %u params, %u local bytes\n", k->name, k->nops, hcq_kernel_param_count(k),
              hcq_kernel_local_bytes(k));
    if (k->build_err) cc_sb_printf(&b, "  builder error: %s\n", k->build_msg ? k->build_msg : "?");
    unsigned depth = 0;
    for (uint32_t i = 0; i < k->nops; i++) {
        uint16_t op = k->ops[i].op;
        if ((op == HCQ_OP_ENDRANGE || op == HCQ_OP_ENDIF) && depth) depth--;
        dump_op(&b, k, i, depth);
        if (op == HCQ_OP_RANGE || op == HCQ_OP_IF) depth++;
    }
    return cc_sb_take(&b, "a kernel dump");
}
