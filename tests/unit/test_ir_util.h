/* Helpers shared by the compiler tests: kernarg packing and running a
 * kernel on the interpreter or as a cpu-target shared object. */
#ifndef HCQ_TEST_IR_UTIL_H
#define HCQ_TEST_IR_UTIL_H

#include <criterion/criterion.h>
#include <hcq/compiler.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/cpu_abi.h"
#include "compiler/ir_float.h"

typedef struct tu_args {
    uint8_t buf[1024];
    uint32_t size, n;
    hcq_param_info info[64];
} tu_args;

static inline void tu_args_init(tu_args *a, const hcq_kernel *k)
{
    memset(a, 0, sizeof *a);
    a->n = hcq_kernel_param_count(k);
    cr_assert(a->n <= 64);
    a->size = hcq_kernel_param_layout(k, a->info);
    cr_assert(a->size <= sizeof a->buf);
}

static inline void tu_arg_ptr(tu_args *a, uint32_t i, const void *p)
{
    cr_assert(i < a->n && a->info[i].is_buffer, "param %u is not a buffer", i);
    uint64_t v = (uint64_t)(uintptr_t)p;
    memcpy(a->buf + a->info[i].offset, &v, 8);
}

static inline void tu_arg_bytes(tu_args *a, uint32_t i, const void *v)
{
    cr_assert(i < a->n && !a->info[i].is_buffer, "param %u is not a scalar", i);
    memcpy(a->buf + a->info[i].offset, v, a->info[i].size);
}

typedef struct tu_dims {
    uint32_t ng[3], ls[3];
} tu_dims;

#define TU_DIMS1(g, l) ((tu_dims){{(g), 1, 1}, {(l), 1, 1}})

static inline uint64_t tu_groups(tu_dims d) { return (uint64_t)d.ng[0] * d.ng[1] * d.ng[2]; }

static inline hcq_status tu_interp_status(const hcq_kernel *k, const tu_args *a, tu_dims d)
{
    hcq_interp_launch l = {.kernargs = a->buf, .kernarg_size = a->size};
    memcpy(l.num_groups, d.ng, sizeof d.ng);
    memcpy(l.local_size, d.ls, sizeof d.ls);
    return hcq_interp_run(k, &l);
}

static inline void tu_interp(const hcq_kernel *k, const tu_args *a, tu_dims d)
{
    hcq_status st = tu_interp_status(k, a, d);
    cr_assert_eq(st, HCQ_OK, "interp: %s", hcq_error_message());
}

/* Skips the test on machines without a C compiler (the cpu target needs one). */
static inline void tu_need_clang(void)
{
    if (hcq_toolchain_clang(NULL, NULL) != HCQ_OK) cr_skip_test("no clang: %s", hcq_error_message());
}

/* Compiles for cpu and loads it; the module stays loaded until unloaded. */
static inline void tu_cpu_load(const hcq_kernel *k, cc_cpu_module *m)
{
    tu_need_clang();
    hcq_binary *b = NULL;
    hcq_status st = hcq_compile(k, "cpu", &b);
    cr_assert_eq(st, HCQ_OK, "compile: %s", hcq_error_message());
    st = cc_cpu_module_load(b->data, b->size, m);
    cr_assert_eq(st, HCQ_OK, "load: %s", hcq_error_message());
    hcq_binary_free(b);
}

static inline void tu_cpu_run(const cc_cpu_module *m, const tu_args *a, tu_dims d)
{
    hcq_cpu_dims dims;
    memcpy(dims.num_groups, d.ng, sizeof d.ng);
    memcpy(dims.local_size, d.ls, sizeof d.ls);
    m->entry(a->buf, &dims, 0, tu_groups(d));
}

static inline void tu_cpu(const hcq_kernel *k, const tu_args *a, tu_dims d)
{
    cc_cpu_module m;
    tu_cpu_load(k, &m);
    tu_cpu_run(&m, a, d);
    cc_cpu_module_unload(&m);
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t tu_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* gid = group_id.x * local_size.x + local_id.x, as i32 */
static inline hcq_ir_ref tu_gid(hcq_kernel *k)
{
    hcq_ir_ref g = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref l = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    return hcq_ir_mulacc(k, g, ls, l);
}

static inline void tu_verify(const hcq_kernel *k)
{
    hcq_status st = hcq_kernel_verify(k);
    cr_assert_eq(st, HCQ_OK, "verify: %s", hcq_error_message());
}

#endif
