/* The AMD chip table (compiler/amd_chips.h): its rows against numbers
 * written here from the sources (LLVM's EF_AMDGPU_MACH list, KFD's
 * gfx_target_version and context-save sizing), and a new chip of a family
 * hcq drives added as one row (plus the mock's model row), after which the
 * compiler targets, bring-up, the mock, the loader's machine names and the
 * messages all know it and a kernel runs on it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "compiler/amd_chips.h"
#include "drivers/amd/amd.h"
#include "drivers/mock/mock.h"
#include "drivers/mock/mock_amd.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(amd_chips, .timeout = 120);

/* llvm-project llvm/include/llvm/BinaryFormat/ELF.h EF_AMDGPU_MACH_AMDGCN_*
 * and the gfx_target_version KFD gives each */
Test(amd_chips, rows_match_llvm_and_kfd)
{
    static const struct {
        const char *name;
        uint8_t mach;
        uint32_t version;
        uint32_t cwsr;
    } want[] = {
        {"gfx908", 0x30, 90008, 0x80000},   {"gfx90a", 0x3f, 90010, 0x80000},   {"gfx942", 0x4c, 90402, 0x80000},
        {"gfx950", 0x4f, 90500, 0x80000},   {"gfx1100", 0x41, 110000, 0x60000}, {"gfx1101", 0x46, 110001, 0x60000},
        {"gfx1151", 0x4a, 110501, 0x60000}, {"gfx1200", 0x48, 120000, 0x60000}, {"gfx1201", 0x4e, 120001, 0x60000},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const amd_chip *c = amd_chip_by_name(want[i].name);
        cr_assert_not_null(c, "%s", want[i].name);
        cr_assert_eq(c->elf_mach, want[i].mach, "%s", want[i].name);
        cr_assert_eq(c->gfx_version, want[i].version, "%s", want[i].name);
        cr_assert_eq(amd_cwsr_vgpr_bytes(want[i].version), want[i].cwsr, "%s", want[i].name);
        char n[16];
        amd_arch_name_of(c->gfx_version, n, sizeof n);
        cr_assert_str_eq(n, c->name, "the name KFD's version prints as");
        cr_assert_eq(amd_chip_by_mach(want[i].mach), c);
    }
    /* a chip KFD does not list gets KFD's default */
    cr_assert_eq(amd_cwsr_vgpr_bytes(100300), 0x40000);
    char list[128];
    amd_chips_driven_list(list, sizeof list);
    cr_assert_str_eq(list, "gfx1100, gfx90a and gfx942");
}

/* KFD's context-save sizing for a 7900 XTX (96 CUs), as tinygrad's
 * hard-coded constants have it (../shared/reference/amd-facts.md §2.5:
 * ctl stack 0xA000, ctx save 0x2BEA000, debug 0x18000) */
Test(amd_chips, kfd_queue_sizes_of_a_7900xtx)
{
    amd_node n;
    memset(&n, 0, sizeof n);
    amd_node_parse(&n, "gfx_target_version 110000\nsimd_count 192\nsimd_per_cu 2\narray_count 12\n"
                       "simd_arrays_per_engine 2\nnum_xcc 1\nmax_waves_per_simd 16\n");
    cr_assert_eq(n.ctl_stack_size, 0xA000);
    cr_assert_eq(n.cwsr_size, 0x2BEA000, "0x%x", n.cwsr_size);
    cr_assert_eq(n.debug_memory_size, 0x18000);
}

/* ** a new chip of a known family: one row each */
static const amd_chip gfx1102 = {
    /* Navi 33 (RX 7600): gfx_target_version 110002, EF_AMDGPU_MACH 0x47;
     * KFD sizes its context save with the default 0x40000 bytes per CU */
    .name = "gfx1102", .gfx_version = 110002, .elf_mach = 0x47, .family = AMD_FAMILY_GFX11, .wave32 = true,
    .min_clang = 16, .lds_kib = 64, .max_xcc = 1, AMD_CHIP_GFX11_ENCODERS, .ip_gc = {11, 0, 2},
    .ip_sdma = {6, 0, 2}, .ip_nbio = {4, 3, 0}};
static const mock_amd_model rx7600 = {
    .name = "gfx1102", .device_id = 0x7480, .simd_count = 64, .simd_per_cu = 2, .max_waves_per_simd = 16,
    .array_count = 4, .simd_arrays_per_engine = 2, .num_xcc = 1, .vram_bytes = 8ull << 30, .clock_mhz = 2655,
    .sensors = {35, 70, 10, 165, 30, 2655}, .revision = 0xc0, .subsys_vendor = 0x1002, .subsys_device = 0x0e4c,
    .link_speed = "16.0 GT/s PCIe", .power_cap_w = 165, .mclk_mhz = 2250, .metrics_minor = 3, .edge_sensor = true,
    .power_average = true};

Test(amd_chips, a_new_chip_of_a_known_family_is_one_row)
{
    cr_assert(amd_chips_add(&gfx1102));
    cr_assert_not(amd_chips_add(&gfx1102), "a row is added once");
    cr_assert(mock_amd_add_model(&rx7600));
    /* everything that reads the table knows it */
    cr_assert(hcq_target_known("gfx1102") && hcq_target_known("mock-gfx1102"));
    cr_assert_str_eq(amd_co_mach_name(0x47), "gfx1102");
    cr_assert_eq(amd_arch_by_version(110002), &gfx1102);
    char list[128];
    amd_chips_driven_list(list, sizeof list);
    cr_assert(strstr(list, "gfx1102"), "%s", list);
    /* the mock emulates it, the backend drives it */
    setenv("HCQ_MOCK", "1", 1);
    base_env_reload();
    sys_set(mock_sys());
    T_OK(mock_configure("amd=gfx1102"));
    hcq_device *d = T_NONNULL(hcq_device_open("AMD:0"));
    const hcq_device_props *p = hcq_device_get_props(d);
    cr_assert_str_eq(p->arch, "gfx1102");
    cr_assert_eq(p->compute_units, 32);
    cr_assert(strstr(p->engines, "PM4 queue"), "%s", p->engines);
    hcq_program *k = t_load(d, t_k_inc());
    uint32_t v = 1, out = 0;
    hcq_buffer *b = t_buffer_from(d, &v, 4);
    hcq_arg a = hcq_arg_buffer(b);
    T_OK(hcq_launch(k, &a, 1, hcq_dims_1d(1, 1)));
    t_read(b, &out, 4);
    cr_assert_eq(out, 2);
    T_OK(hcq_program_free(k));
    T_OK(hcq_buffer_free(b));
    T_OK(hcq_device_close(d));
}
