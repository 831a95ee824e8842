/* Golden tests of the CPU device's packet builders (exact dwords), their
 * decoding (exact text), encode -> decode round trips with patched
 * variables, and decoders on garbage. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/cpu/cpu.h"
#include "drivers/decode.h"
#include "hcqtest.h"

static uint8_t aux[256] __attribute__((aligned(16)));

static hcq_status fixed_aux(drv_rec *r, uint32_t size, uint32_t align, void **cpu, uint64_t *va)
{
    (void)r;
    (void)align;
    cr_assert_leq(size, sizeof aux);
    *cpu = aux;
    *va = 0xa000;
    return HCQ_OK;
}

static char *decode(const drv_rec *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(drv_cpu_decoder.decode(0, 0x100, r->dw, r->ndw, f), HCQ_OK);
    fclose(f);
    return text;
}

Test(decode, cpu_builders_are_exact_dwords_and_text)
{
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COMPUTE);
    r.aux_alloc = fixed_aux;
    hcq_param_info params[2] = {{0, 8, 1, HCQ_F32, {0}}, {8, 4, 0, HCQ_U32, {0}}};
    cpu_prog cp = {.magic = CPU_PROG_MAGIC};
    hcq_program p = {.params = params, .priv = &cp};
    p.info.nparams = 2;
    p.info.kernarg_bytes = 16;
    T_OK(cpu_rec_wait(&r, HCQ_IMM(0x1122334455667788ull), HCQ_IMM(7)));
    T_OK(cpu_rec_signal(&r, HCQ_IMM(0x2000), HCQ_IMM(0x100000009ull)));
    T_OK(cpu_rec_timestamp(&r, HCQ_IMM(0x3000)));
    T_OK(cpu_rec_barrier(&r));
    hcq_val pv[2] = {HCQ_IMM(0xb000), HCQ_IMM(42)};
    hcq_dims d = hcq_dims_3d(4, 2, 1, 64, 1, 1);
    T_OK(cpu_rec_exec(&r, &p, pv, &d));
    T_OK(cpu_rec_copy(&r, HCQ_IMM(0x4000), HCQ_IMM(0x5000), HCQ_IMM(0x123456789ull)));
    uint64_t prog = (uint64_t)(uintptr_t)&cp;
    const uint32_t want[] = {
        0x00050001, 0x55667788, 0x11223344, 7, 0,                        /* wait */
        0x00050002, 0x2000, 0, 9, 1,                                     /* signal */
        0x00030003, 0x3000, 0,                                           /* timestamp */
        0x00010004,                                                      /* barrier */
        0x000b0005, (uint32_t)prog, (uint32_t)(prog >> 32), 0xa000, 0, 4, 2, 1, 64, 1, 1, /* exec */
        0x00070006, 0x4000, 0, 0x5000, 0, 0x23456789, 1,                 /* copy */
    };
    cr_assert_eq(r.ndw, sizeof want / 4);
    for (uint32_t i = 0; i < r.ndw; i++) cr_assert_eq(r.dw[i], want[i], "dword %u: 0x%08x != 0x%08x", i, r.dw[i], want[i]);
    uint64_t k0;
    memcpy(&k0, aux, 8);
    cr_assert_eq(k0, 0xb000, "kernarg 0");
    cr_assert_eq(*(uint32_t *)(aux + 8), 42, "kernarg 1");
    char *text = decode(&r);
    char want_text[1024];
    snprintf(want_text, sizeof want_text,
             "0x00000100  wait      signal 0x1122334455667788 >= 7\n"
             "0x00000114  signal    signal 0x2000 = 4294967305 (+ timestamp)\n"
             "0x00000128  timestamp signal 0x3000\n"
             "0x00000134  barrier\n"
             "0x00000138  exec      program 0x%llx kernargs 0xa000 grid 4x2x1 block 64x1x1\n"
             "0x00000164  copy      0x4000 <- 0x5000, 4886718345 bytes\n",
             (unsigned long long)prog);
    cr_assert_str_eq(text, want_text);
    free(text);
    drv_rec_fini(&r);
}

Test(decode, patched_variables_round_trip)
{
    drv_rec r;
    drv_rec_init(&r, NULL, HCQ_QUEUE_COPY);
    T_OK(cpu_rec_copy(&r, HCQ_VAR(0), HCQ_VAR(1), HCQ_VAR(2)));
    T_OK(cpu_rec_signal(&r, HCQ_VAR(3), HCQ_VAR(4)));
    cr_assert_eq(r.nvars, 5);
    uint64_t vars[5] = {0xdead0000beefull, 0x1234, 99, 0x7000, 0xfffffffffull};
    drv_rec_apply(&r, vars, NULL);
    char *text = decode(&r);
    cr_assert_str_eq(text, "0x00000100  copy      0xdead0000beef <- 0x1234, 99 bytes\n"
                           "0x0000011c  signal    signal 0x7000 = 68719476735 (+ timestamp)\n");
    free(text);
    /* only changed variables are rewritten, and both halves when they change */
    uint64_t last[5];
    memcpy(last, vars, sizeof vars);
    vars[4] = 5;
    drv_rec_apply(&r, vars, last);
    text = decode(&r);
    cr_assert(strstr(text, "signal 0x7000 = 5 "), "%s", text);
    free(text);
    drv_rec_fini(&r);
}

Test(decode, garbage_is_reported_not_dropped)
{
    uint32_t junk[] = {0x00030003, 0x3000, 0, 0xffff00ff, 0x11, 0x22};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(drv_cpu_decoder.decode(0, 0, junk, 6, f), HCQ_EFORMAT);
    fclose(f);
    cr_assert(strstr(text, "timestamp signal 0x3000"), "%s", text);
    cr_assert(strstr(text, "unknown header 0xffff00ff"), "%s", text);
    cr_assert(strstr(text, "word 0x00000022"), "the rest is printed as words: %s", text);
    free(text);
    cr_assert_not_null(drv_decoder_find("cpu"));
    cr_assert_null(drv_decoder_find("nope"));
}
