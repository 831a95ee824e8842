/* tests/support/mma_ref.h: the host-side reference conversions the matrix
 * multiply-accumulate tests share (tests/mock/test_sass_mma.c,
 * test_amd_isa_mma.c, test_api_mma.c, tests/unit/test_ir_mma.c), written
 * from the IEEE 754 binary16 and bfloat16 formats, not from hcq's own
 * conversions (compiler/ir_float.h), so they check those too. */
#ifndef HCQ_TEST_MMA_REF_H
#define HCQ_TEST_MMA_REF_H

#include <hcq/compiler.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* the value of binary16 bits h: 1 sign, 5 exponent (bias 15), 10 fraction bits */
static inline float tref_f16_val(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
    return h & 0x8000 ? -v : v;
}

/* the value of bfloat16 bits h: the upper half of an f32 */
static inline float tref_bf16_val(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float tref_ab_val(uint16_t h, int bf16) { return bf16 ? tref_bf16_val(h) : tref_f16_val(h); }

/* f32 bits as they are */
static inline uint32_t tref_f32_raw(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* f32 to binary16 bits, rounded to nearest even (the compiler's _Float16 conversion); NaN as 0x7fff */
static inline uint16_t tref_f16_bits(float f)
{
    if (f != f) return 0x7fff;
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

/* ** an MMA kernel and its inputs (tests/unit/test_ir_mma.c on the
 * interpreter, tests/mock/test_api_mma.c on the mock GPUs)
 *
 * tref_mma_kernel(kind, ksteps, wpg): work-groups of wpg warps, one tile
 * per warp (tile = group * wpg + warp): D = A * B + C with A m x (ksteps k)
 * and B (ksteps k) x n, chaining ksteps MMAs over k through an accumulator.
 * Params: A and B (the kind's input dtype, row-major, tile after tile),
 * C and D (f32, m x n row-major). Each work-item loads its fragments from
 * the positions hcq_ir_mma_coord gives. */
static inline hcq_ir_ref tref_c32(hcq_kernel *k, int64_t v) { return hcq_ir_const_int(k, HCQ_I32, v); }
static inline hcq_ir_ref tref_add(hcq_kernel *k, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, HCQ_OP_ADD, a, b); }
static inline hcq_ir_ref tref_mul(hcq_kernel *k, hcq_ir_ref a, hcq_ir_ref b) { return hcq_ir_binary(k, HCQ_OP_MUL, a, b); }

/* buf[base + (row + row_add) * ld + col + col_add] for each fragment element e, as one vector */
static inline hcq_ir_ref tref_frag_load(hcq_kernel *k, hcq_ir_ref buf, hcq_dtype t, unsigned lanes,
                                        const hcq_ir_ref *row, const hcq_ir_ref *col, hcq_ir_ref base, unsigned ld,
                                        hcq_ir_ref row_add, hcq_ir_ref col_add)
{
    hcq_ir_ref v = hcq_ir_vsplat(k, hcq_ir_const_float(k, t, 0), lanes);
    for (unsigned e = 0; e < lanes; e++) {
        hcq_ir_ref r = row_add != HCQ_IR_NONE ? tref_add(k, row[e], row_add) : row[e];
        hcq_ir_ref c = col_add != HCQ_IR_NONE ? tref_add(k, col[e], col_add) : col[e];
        hcq_ir_ref idx = tref_add(k, base, tref_add(k, tref_mul(k, r, tref_c32(k, ld)), c));
        v = hcq_ir_vset(k, v, e, hcq_ir_load(k, buf, idx));
    }
    return v;
}

/* gate: when not HCQ_IR_NONE, the MMA sits inside if (gate) (to test the refusal of a partial warp) */
static inline hcq_kernel *tref_mma_kernel_gated(hcq_mma_kind kind, unsigned ksteps, unsigned wpg, bool gate_half)
{
    hcq_mma_info in;
    if (hcq_mma_info_get(kind, &in)) return NULL;
    unsigned kt = ksteps * in.k;
    hcq_kernel *k = hcq_kernel_create("mma_tiles");
    hcq_ir_ref pa = hcq_ir_param_buffer(k, in.ab), pb = hcq_ir_param_buffer(k, in.ab),
               pc = hcq_ir_param_buffer(k, HCQ_F32), pd = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), grp = hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0);
    hcq_ir_ref lane = hcq_ir_binary(k, HCQ_OP_MOD, lid, tref_c32(k, in.warp));
    hcq_ir_ref tile = tref_add(k, tref_mul(k, grp, tref_c32(k, wpg)), hcq_ir_binary(k, HCQ_OP_IDIV, lid, tref_c32(k, in.warp)));
    hcq_ir_ref arow[16], acol[16], brow[16], bcol[16], crow[16], ccol[16];
    for (unsigned e = 0; e < in.a_lanes; e++) hcq_ir_mma_coord(k, kind, 0, lane, e, &arow[e], &acol[e]);
    for (unsigned e = 0; e < in.b_lanes; e++) hcq_ir_mma_coord(k, kind, 1, lane, e, &brow[e], &bcol[e]);
    for (unsigned e = 0; e < in.c_lanes; e++) hcq_ir_mma_coord(k, kind, 2, lane, e, &crow[e], &ccol[e]);
    hcq_ir_ref aoff = tref_mul(k, tile, tref_c32(k, in.m * kt)), boff = tref_mul(k, tile, tref_c32(k, kt * in.n)),
               coff = tref_mul(k, tile, tref_c32(k, in.m * in.n));
    hcq_ir_ref acc = hcq_ir_define_acc(k, tref_frag_load(k, pc, HCQ_F32, in.c_lanes, crow, ccol, coff, in.n, HCQ_IR_NONE,
                                                         HCQ_IR_NONE));
    hcq_ir_ref s = hcq_ir_range(k, tref_c32(k, 0), tref_c32(k, ksteps));
    hcq_ir_ref kb = tref_mul(k, s, tref_c32(k, in.k));
    hcq_ir_ref a = tref_frag_load(k, pa, in.ab, in.a_lanes, arow, acol, aoff, kt, HCQ_IR_NONE, kb);
    hcq_ir_ref b = tref_frag_load(k, pb, in.ab, in.b_lanes, brow, bcol, boff, in.n, kb, HCQ_IR_NONE);
    hcq_ir_ref iff = HCQ_IR_NONE;
    if (gate_half) iff = hcq_ir_if(k, hcq_ir_binary(k, HCQ_OP_CMPLT, lane, tref_c32(k, in.warp / 2)));
    hcq_ir_assign(k, acc, hcq_ir_mma(k, kind, a, b, acc));
    if (gate_half) hcq_ir_endif(k, iff);
    hcq_ir_endrange(k, s);
    for (unsigned e = 0; e < in.c_lanes; e++) {
        hcq_ir_ref idx = tref_add(k, coff, tref_add(k, tref_mul(k, crow[e], tref_c32(k, in.n)), ccol[e]));
        hcq_ir_store(k, pd, idx, hcq_ir_vget(k, acc, e));
    }
    return k;
}
static inline hcq_kernel *tref_mma_kernel(hcq_mma_kind kind, unsigned ksteps, unsigned wpg)
{
    return tref_mma_kernel_gated(kind, ksteps, wpg, false);
}

/* ** inputs: random f16/bf16 of many magnitudes and both signs, subnormals
 * (and zeros) among them, so the sum's order and rounding show; C random
 * f32 */
static inline uint64_t tref_rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static inline uint16_t tref_rnd16(uint64_t *s, int bf16)
{
    uint64_t r = tref_rnd(s);
    uint16_t sign = (uint16_t)((r >> 20 & 1) << 15);
    if (r % 8 == 0) return (uint16_t)(sign | (r >> 40 & (bf16 ? 0x7f : 0x3ff))); /* a subnormal (or zero) */
    /* no product or sum overflows f32 (NaN and infinity bits are the executors' own: not compared here) */
    if (bf16) return (uint16_t)(sign | (((r >> 21) % 120 + 67) << 7) | (r >> 40 & 0x7f)); /* 2^-60 .. 2^59 */
    return (uint16_t)(sign | (((r >> 21) % 24 + 4) << 10) | (r >> 40 & 0x3ff));       /* 2^-11 .. 2^12 */
}
static inline float tref_rnd_c(uint64_t *s)
{
    return ldexpf((float)(int32_t)(tref_rnd(s) >> 40) - (float)(1 << 23), (int)(tref_rnd(s) % 40) - 30);
}

/* the reference of one element: D = C; for kk in order: D = fma(A[m][kk], B[kk][n], D) */
static inline float tref_mma_elem(const uint16_t *a, const uint16_t *b, const float *c, int bf16, unsigned n_,
                                  unsigned kt, unsigned m, unsigned n, int reverse)
{
    float d = c[m * n_ + n];
    for (unsigned i = 0; i < kt; i++) {
        unsigned kk = reverse ? kt - 1 - i : i;
        d = fmaf(tref_ab_val(a[m * kt + kk], bf16), tref_ab_val(b[kk * n_ + n], bf16), d);
    }
    return d;
}

#endif
