/* The AMD mock running real code objects (clang's HIP builds) as their host
 * twins: a dispatch whose registers disagree with the kernel descriptor is
 * refused as the hardware would fail it, naming the field (VGPR and SGPR
 * granules in COMPUTE_PGM_RSRC1, USER_SGPR and LDS_SIZE in RSRC2, the
 * wave size, scratch for a private segment); arguments come from the
 * kernarg segment at the metadata's offsets, sizes from the implicit
 * arguments; a bad access is a GPU memory fault naming the address and
 * the kernel. Skips (saying why) where clang lacks the processor. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/elf.h"
#include "compiler/twin.h"
#include "drivers/amd/amd.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(amd_twin, .timeout = 240);

static hcq_device *open_amd(const char *gfx)
{
    char why[256], cfg[32];
    if (!cc_twin_available(gfx, why, sizeof why)) cr_skip_test("no host twins for %s here: %s", gfx, why);
    setenv("HCQ_MOCK", "1", 1);
    setenv("HCQ_MOCK_SHADER", "twin", 1); /* the twins, whatever the mock's default for the target */
    base_env_reload();
    sys_set(mock_sys());
    snprintf(cfg, sizeof cfg, "amd=%s", gfx);
    T_OK(mock_configure(cfg));
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    cr_assert_str_eq(hcq_device_get_props(d)->target, gfx);
    return d;
}

static void runs_on(const char *gfx)
{
    hcq_device *d = open_amd(gfx);
    hcq_program *p = t_load(d, t_k_reverse(true));
    t_run_reverse(p->dev, p, 5, 256, true);
    t_run_reverse(p->dev, p, 3, 64, true);
    T_OK(hcq_program_free(p));
    T_OK(hcq_device_close(d));
}

/* (one model per test: the KFD process lives as long as the process) */
Test(amd_twin, code_objects_run_on_gfx1100) { runs_on("gfx1100"); }
Test(amd_twin, code_objects_run_on_gfx942) { runs_on("gfx942"); }
Test(amd_twin, code_objects_run_on_gfx90a) { runs_on("gfx90a"); }

/* 16 accumulators live across a loop: enough VGPRs for a granule above 0 */
static hcq_kernel *wide_kernel(void)
{
    hcq_kernel *k = hcq_kernel_create("reverse"); /* the name the checks below look for */
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref gid = hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0),
                                   hcq_ir_const_int(k, HCQ_I32, 16));
    hcq_ir_ref acc[16], x[16];
    for (int j = 0; j < 16; j++) {
        acc[j] = hcq_ir_define_acc(k, hcq_ir_const_float(k, HCQ_F32, j));
        x[j] = hcq_ir_load(k, in, hcq_ir_binary(k, HCQ_OP_ADD, gid, hcq_ir_const_int(k, HCQ_I32, j)));
    }
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_I32, 0), hcq_ir_const_int(k, HCQ_I32, 7));
    for (int j = 0; j < 16; j++) hcq_ir_assign(k, acc[j], hcq_ir_mulacc(k, acc[j], x[j], x[(j + 1) % 16]));
    hcq_ir_endrange(k, r);
    for (int j = 0; j < 16; j++)
        hcq_ir_store(k, out, hcq_ir_binary(k, HCQ_OP_ADD, gid, hcq_ir_const_int(k, HCQ_I32, j)), acc[j]);
    return k;
}

typedef enum { R1, R2, INIT } which_reg;

/* a launch with a register of the program poked faults; the mock says why */
static void refused(const char *gfx, hcq_kernel *k, which_reg w, amd_field f, uint32_t v, const char *want1,
                    const char *want2)
{
    /* the registers poked are those the PM4 dispatch sets (an AQL
     * kernel-dispatch packet's come from the kernel descriptor) */
    amd_paths pm4 = AMD_PATHS_PROVEN;
    pm4.dispatch_pm4 = true;
    amd_proc_set_paths(&pm4);
    hcq_device *d = open_amd(gfx);
    hcq_program *p = t_load(d, k);
    amd_prog *ap = p->priv;
    uint32_t *r = w == R1 ? &ap->rsrc1 : w == R2 ? &ap->rsrc2 : &ap->initiator;
    *r = (*r & ~amd_fmask(f)) | amd_fset(f, v);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 1 << 16, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(2, 64)));
    cr_assert_neq(hcq_device_synchronize(d), HCQ_OK);
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, want1) && strstr(why, want2) && strstr(why, "reverse"),
              "the fault should say \"%s\" and \"%s\": %s", want1, want2, why);
    T_OK(hcq_device_close(d));
}

Test(amd_twin, register_granules_must_cover_the_descriptor)
{
    char why[256];
    if (!cc_twin_available("gfx1100", why, sizeof why)) cr_skip_test("no host twins for gfx1100 here: %s", why);
    hcq_kernel *k = wide_kernel();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "gfx1100", &b));
    amd_co co;
    T_OK(amd_co_parse(b->data, b->size, NULL, &co));
    cr_assert_gt(amd_fget(AMD_RSRC1_VGPRS, co.kd.compute_pgm_rsrc1), 0, "the kernel should need more than a granule");
    amd_co_free(&co);
    hcq_binary_free(b);
    refused("gfx1100", k, R1, AMD_RSRC1_VGPRS, 0, "RSRC1.VGPRS allocates 0", "its descriptor needs");
}

/* gfx9 allocates SGPRs per wave too (gfx10+ gives every wave all of them) */
Test(amd_twin, sgpr_granules_must_cover_the_descriptor_on_gfx9)
{
    char why[256];
    if (!cc_twin_available("gfx942", why, sizeof why)) cr_skip_test("no host twins for gfx942 here: %s", why);
    hcq_kernel *k = wide_kernel();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "gfx942", &b));
    amd_co co;
    T_OK(amd_co_parse(b->data, b->size, NULL, &co));
    uint32_t sk = amd_fget(AMD_RSRC1_SGPRS, co.kd.compute_pgm_rsrc1);
    amd_co_free(&co);
    hcq_binary_free(b);
    cr_assert_gt(sk, 0, "the gfx942 kernel should need more than a granule of SGPRs");
    refused("gfx942", k, R1, AMD_RSRC1_SGPRS, 0, "RSRC1.SGPRS allocates 0", "its descriptor needs");
}

Test(amd_twin, user_sgprs_must_match_the_descriptor)
{
    refused("gfx942", t_k_reverse(true), R2, AMD_RSRC2_USER_SGPR, 1, "RSRC2.USER_SGPR loads 1", "its descriptor says");
}

Test(amd_twin, lds_must_cover_the_kernel)
{
    refused("gfx1100", t_k_reverse(true), R2, AMD_RSRC2_LDS_SIZE, 1, "LDS_SIZE allocates 512 bytes", "it uses 1024");
}

Test(amd_twin, the_wave_size_must_match)
{
    refused("gfx1100", t_k_reverse(true), INIT, AMD_INIT_CS_W32_EN, 0, "CS_W32_EN is 0", "wave32");
}

Test(amd_twin, a_bad_address_is_a_memory_fault_naming_the_kernel)
{
    hcq_device *d = open_amd("gfx1100");
    hcq_program *p = t_load(d, t_k_add1());
    hcq_arg a[2] = {hcq_arg_addr(HCQ_IMM(0xdead0000ull)), hcq_arg_u32(16)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, 16)));
    T_FAILS(hcq_device_synchronize(d), HCQ_EFAULT);
    T_MSG_HAS("0xdead0000");
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "add1") && strstr(why, "0xdead0000"), "%s", why);
    T_OK(hcq_device_close(d));
}

/* A code object whose descriptor asks for a private segment (the kernel
 * itself does not touch it): the loader must set scratch up, and the mock
 * refuses the dispatch if it is not. */
static hcq_program *with_private_segment_buffer(hcq_device *d, uint32_t bytes, const char *gfx, bool srd);
static hcq_program *with_private_segment(hcq_device *d, uint32_t bytes, const char *gfx)
{
    return with_private_segment_buffer(d, bytes, gfx, false);
}
/* srd: the descriptor also asks for the scratch buffer resource in its
 * first four user SGPRs (PRIVATE_SEGMENT_BUFFER), as gfx9 code without
 * architected flat scratch does */
static hcq_program *with_private_segment_buffer(hcq_device *d, uint32_t bytes, const char *gfx, bool srd)
{
    hcq_kernel *k = t_k_reverse(true);
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, gfx, &b));
    cc_elf e;
    T_OK(cc_elf_open(&e, b->data, b->size));
    const cc_elf_symbol *s = cc_elf_find_symbol(&e, "reverse.kd");
    cr_assert_not_null(s);
    const uint8_t *kd = NULL;
    T_OK(cc_elf_symbol_data(&e, s, &kd));
    size_t off = (size_t)(kd - (const uint8_t *)b->data);
    cc_elf_close(&e);
    uint8_t *bin = b->data;
    amd_kernel_descriptor desc;
    memcpy(&desc, bin + off, sizeof desc);
    desc.private_segment_fixed_size = bytes;
    desc.compute_pgm_rsrc2 |= amd_fset(AMD_RSRC2_SCRATCH_EN, 1);
    if (srd && !(desc.kernel_code_properties & AMD_KCP_PRIVATE_SEGMENT_BUFFER)) {
        desc.kernel_code_properties |= AMD_KCP_PRIVATE_SEGMENT_BUFFER;
        uint32_t user = amd_fget(AMD_RSRC2_USER_SGPR, desc.compute_pgm_rsrc2) + 4;
        desc.compute_pgm_rsrc2 = (desc.compute_pgm_rsrc2 & ~amd_fmask(AMD_RSRC2_USER_SGPR)) |
                                 amd_fset(AMD_RSRC2_USER_SGPR, user);
        /* the SGPR granules cover four more */
        desc.compute_pgm_rsrc1 += amd_fset(AMD_RSRC1_SGPRS, 1);
    }
    memcpy(bin + off, &desc, sizeof desc);
    /* its own twin: the process registers the patched binary only */
    T_OK(cc_twin_prepare(k, gfx, b->data, b->size));
    hcq_program *p = T_NONNULL(hcq_program_load(d, b->data, b->size));
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    return p;
}

/* gfx9 code that takes the scratch buffer resource in user SGPRs gets
 * gfx9's word 3 (the mock refuses the gfx10/11 word hcq wrote on every
 * arch before: its INDEX_STRIDE of 32 shares scratch between lanes) */
Test(amd_twin, gfx90a_scratch_buffer_resource_is_gfx9s)
{
    hcq_device *d = open_amd("gfx90a");
    hcq_program *p = with_private_segment_buffer(d, 256, "gfx90a", true);
    t_run_reverse(p->dev, p, 2, 64, true);
    T_OK(hcq_device_status(d));
    T_OK(hcq_device_close(d));
}

Test(amd_twin, a_private_segment_needs_scratch_set_up)
{
    hcq_device *d = open_amd("gfx1100");
    hcq_program *p = with_private_segment(d, 256, "gfx1100");
    t_run_reverse(p->dev, p, 2, 64, true); /* the loader sets scratch up: the dispatch runs */
    amd_prog *ap = p->priv;
    ap->rsrc2 &= ~amd_fmask(AMD_RSRC2_SCRATCH_EN);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 1 << 16, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(2, 64)));
    cr_assert_neq(hcq_device_synchronize(d), HCQ_OK);
    char why[1024];
    mock_amd_last_error(0, why, sizeof why);
    cr_assert(strstr(why, "256-byte private segment") && strstr(why, "SCRATCH_EN is 0"), "%s", why);
    T_OK(hcq_device_close(d));
}

/* a kernel storing its thread index; `unused` adds a last parameter the
 * code never reads, so both versions compile to the same machine code and
 * differ only in the code object around it (the tensor fuzzer met such a
 * pair on gfx1100: the launch of one ran the other's twin) */
static hcq_kernel *k_index(bool unused)
{
    hcq_kernel *k = hcq_kernel_create("E");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref i = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0)), v = i;
    if (unused) {
        /* a load whose value the compiler drops (x & 0), so only the twin,
         * whose accesses are checked calls, still reads the parameter */
        hcq_ir_ref in = hcq_ir_param_buffer(k, HCQ_U32);
        hcq_ir_ref z = hcq_ir_binary(k, HCQ_OP_AND, hcq_ir_load(k, in, i), hcq_ir_const_int(k, HCQ_U32, 0));
        v = hcq_ir_binary(k, HCQ_OP_ADD, i, z);
    }
    hcq_ir_store(k, out, i, v);
    return k;
}

Test(amd_twin, kernels_of_the_same_code_run_their_own_twins)
{
    hcq_device *d = open_amd("gfx1100");
    /* whichever loaded first or last, each launch runs its own */
    hcq_program *narrow = t_load(d, k_index(false)), *wide = t_load(d, k_index(true));
    hcq_program *narrow2 = t_load(d, k_index(false));
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, 64 * 4, HCQ_MEM_DEVICE));
    hcq_arg one[1] = {hcq_arg_buffer(b)}, two[2] = {hcq_arg_buffer(b), hcq_arg_buffer(b)};
    for (int round = 0; round < 2; round++) {
        T_OK(hcq_launch(narrow2, one, 1, hcq_dims_1d(1, 64)));
        T_OK(hcq_launch(narrow, one, 1, hcq_dims_1d(1, 64)));
        T_OK(hcq_launch(wide, two, 2, hcq_dims_1d(1, 64)));
    }
    T_OK(hcq_device_synchronize(d));
    uint32_t got[64];
    T_OK(hcq_buffer_copyout(got, b, 0, sizeof got));
    for (uint32_t i = 0; i < 64; i++) cr_assert_eq(got[i], i);
    T_OK(hcq_program_free(wide));
    T_OK(hcq_program_free(narrow));
    T_OK(hcq_program_free(narrow2));
    T_OK(hcq_device_close(d));
}
