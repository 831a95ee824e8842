/* The AMD code-object loader on real objects built by clang for gfx1100,
 * gfx90a and gfx942 (skipped, with the reason, where clang cannot), on
 * the mock targets' objects, and on malformed input; the user SGPR layout
 * from a kernel descriptor; and discovery's parsing of KFD topology
 * properties with the queue buffer sizes KFD would check. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc.h"
#include "compiler/mock_amd_code.h"
#include "drivers/amd/amd.h"
#include "hcqtest.h"

/* a kernel with buffers, a 4- and an 8-byte value, and a hidden argument
 * (the work-group size, from the implicit arguments) */
static const char kernel_src[] =
    "extern \"C\" __attribute__((global)) void scale(float *a, const float *b, unsigned n, double s) {\n"
    "  unsigned gs = *(const unsigned short *)((const char *)__builtin_amdgcn_implicitarg_ptr() + 12);\n"
    "  unsigned i = __builtin_amdgcn_workgroup_id_x() * gs + __builtin_amdgcn_workitem_id_x();\n"
    "  if (i < n) a[i] = b[i] * (float)s;\n"
    "}\n";

/* Builds kernel_src for arch with clang; NULL (after cr_skip_test) when
 * no clang can. */
static void *build(const char *arch, size_t *size)
{
    if (cc_require_clang(17, "AMDGPU code objects for gfx942") != HCQ_OK)
        cr_skip_test("%s", hcq_error_message());
    const cc_clang_info *cl;
    cr_assert_eq(cc_clang(&cl), HCQ_OK);
    char dir[4096], src[4200], out[4200], offload[64];
    T_OK(cc_make_temp_dir(dir, sizeof dir));
    snprintf(src, sizeof src, "%s/k.hip", dir);
    snprintf(out, sizeof out, "%s/k.co", dir);
    snprintf(offload, sizeof offload, "--offload-arch=%s", arch);
    FILE *f = fopen(src, "w");
    cr_assert_not_null(f);
    fputs(kernel_src, f);
    fclose(f);
    const char *argv[] = {cl->path, "-x", "hip", offload, "-nogpuinc", "-nogpulib", "--cuda-device-only",
                          "--no-gpu-bundle-output", "-O2", "-c", src, "-o", out, NULL};
    char *log = NULL;
    int code = -1;
    T_OK(cc_run(argv, &log, &code));
    if (code) {
        cc_remove_temp_dir(dir);
        cr_skip_test("%s cannot build for %s: %s", cl->label, arch, log ? log : "");
    }
    free(log);
    f = fopen(out, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc((size_t)n);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cc_remove_temp_dir(dir);
    *size = (size_t)n;
    return data;
}

typedef struct co_case {
    char arch[16];
    uint8_t mach;
    uint32_t wave;
} co_case;

ParameterizedTestParameters(amd_co, clang_objects)
{
    static co_case cases[] = {{"gfx1100", 0x41, 32}, {"gfx90a", 0x3F, 64}, {"gfx942", 0x4C, 64}};
    return cr_make_param_array(co_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(co_case *c, amd_co, clang_objects)
{
    size_t size;
    void *bin = build(c->arch, &size);
    amd_co co;
    T_OK(amd_co_parse(bin, size, NULL, &co));
    cr_assert_str_eq(co.name, "scale");
    cr_assert_eq(co.mach, c->mach, "EF_AMDGPU_MACH 0x%02x", co.mach);
    cr_assert_str_eq(amd_co_mach_name(co.mach), c->arch);
    cr_assert_eq(co.wavefront_size, c->wave);
    /* the arguments at the C ABI's offsets */
    cr_assert_eq(co.nparams, 4);
    uint32_t off[4] = {0, 8, 16, 24}, sz[4] = {8, 8, 4, 8};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(co.params[i].offset, off[i], "arg %d offset", i);
        cr_assert_eq(co.params[i].size, sz[i], "arg %d size", i);
        cr_assert_eq(co.params[i].is_buffer, i < 2, "arg %d kind", i);
    }
    /* the hidden work-group size it reads is known, and lies after the arguments */
    bool group_size = false;
    for (uint32_t i = 0; i < co.nhidden; i++)
        if (co.hidden[i].kind == AMD_HID_GROUP_SIZE_X) {
            group_size = true;
            cr_assert_geq(co.hidden[i].offset, 32);
            cr_assert_eq(co.hidden[i].size, 2);
        }
    cr_assert(group_size, "hidden_group_size_x among %u hidden arguments", co.nhidden);
    cr_assert_geq(co.kernarg_bytes, 32 + 256, "explicit arguments then the implicit ones");
    cr_assert_eq(co.kd.kernarg_size, co.kernarg_bytes);
    /* the descriptor leads to 256-byte aligned code inside the image */
    cr_assert_eq(co.entry_offset % 256, 0);
    cr_assert_lt(co.entry_offset, co.image_size);
    cr_assert(co.kd.kernel_code_properties & AMD_KCP_KERNARG_SEGMENT_PTR);
    cr_assert_eq(!!(co.kd.kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32), c->wave == 32);
    amd_sgpr_layout L;
    amd_sgpr_layout_of(co.kd.kernel_code_properties, &L);
    cr_assert_geq(L.first[AMD_SGPR_KERNARG_PTR], 0);
    cr_assert_leq(L.count, amd_fget(AMD_RSRC2_USER_SGPR, co.kd.compute_pgm_rsrc2));
    /* placed as linked: the descriptor is where the symbol said */
    uint8_t *img = malloc(co.image_size);
    amd_co_place(bin, size, img, 0x7f0000000000ull, co.image_size);
    cr_assert(!memcmp(img + co.kd_offset, &co.kd, 64));
    cr_assert(memcmp(img + co.entry_offset, CC_MOCK_AMD_MAGIC, 8), "real code, not mock code");
    free(img);
    amd_co_free(&co);
    free(bin);
}

Test(amd_co, mock_objects_load_like_real_ones)
{
    hcq_kernel *k = t_k_muladd();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "mock-gfx942", &b));
    amd_co co;
    T_OK(amd_co_parse(b->data, b->size, NULL, &co));
    cr_assert_str_eq(co.name, "muladd");
    cr_assert_eq(co.mach, 0x4C);
    hcq_param_info want[4];
    uint32_t kb = hcq_kernel_param_layout(k, want);
    cr_assert_eq(co.nparams, 4);
    cr_assert_eq(co.kernarg_bytes, kb);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(co.params[i].offset, want[i].offset);
        cr_assert_eq(co.params[i].size, want[i].size);
        cr_assert_eq(co.params[i].is_buffer, want[i].is_buffer);
    }
    uint8_t *img = calloc(1, co.image_size);
    amd_co_place(b->data, b->size, img, 0, co.image_size);
    cc_mock_amd_code h;
    memcpy(&h, img + co.entry_offset, sizeof h);
    cr_assert(!memcmp(h.magic, CC_MOCK_AMD_MAGIC, 8));
    cr_assert_eq(h.kernarg_sgpr, 0);
    cr_assert_eq(h.flags & CC_MOCK_AMD_WAVE32, 0, "gfx942 runs wave64");
    hcq_kernel *back = NULL;
    T_OK(hcq_kernel_deserialize(img + co.entry_offset + h.ir_offset, h.ir_size, &back));
    cr_assert_str_eq(hcq_kernel_name(back), "muladd");
    hcq_kernel_destroy(back);
    free(img);
    amd_co_free(&co);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(amd_co, malformed_input_is_a_clear_error)
{
    hcq_kernel *k = t_k_add1();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "mock-gfx1100", &b));
    amd_co co;
    for (size_t cut = 0; cut < b->size; cut += 97)
        cr_assert_neq(amd_co_parse(b->data, cut, NULL, &co), HCQ_OK, "truncated to %zu bytes", cut);
    hcq_binary *ir = NULL;
    T_OK(hcq_compile(k, "ir", &ir));
    T_FAILS(amd_co_parse(ir->data, ir->size, NULL, &co), HCQ_EFORMAT);
    T_MSG_HAS("not an AMDGPU code object");
    uint8_t junk[256];
    memset(junk, 0x5a, sizeof junk);
    T_FAILS(amd_co_parse(junk, sizeof junk, NULL, &co), HCQ_EFORMAT);
    hcq_binary_free(ir);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(amd_co, user_sgprs_follow_the_descriptor)
{
    amd_sgpr_layout L;
    amd_sgpr_layout_of(AMD_KCP_KERNARG_SEGMENT_PTR, &L);
    cr_assert_eq(L.first[AMD_SGPR_KERNARG_PTR], 0);
    cr_assert_eq(L.count, 2);
    amd_sgpr_layout_of(AMD_KCP_PRIVATE_SEGMENT_BUFFER | AMD_KCP_DISPATCH_PTR | AMD_KCP_KERNARG_SEGMENT_PTR |
                           AMD_KCP_PRIVATE_SEGMENT_SIZE, &L);
    cr_assert_eq(L.first[AMD_SGPR_PRIVATE_SEGMENT_BUFFER], 0);
    cr_assert_eq(L.first[AMD_SGPR_DISPATCH_PTR], 4);
    cr_assert_eq(L.first[AMD_SGPR_QUEUE_PTR], -1);
    cr_assert_eq(L.first[AMD_SGPR_KERNARG_PTR], 6);
    cr_assert_eq(L.first[AMD_SGPR_PRIVATE_SEGMENT_SIZE], 8);
    cr_assert_eq(L.count, 9);
}

/* a 7900 XTX's properties: tinygrad's worked example of KFD's sizing gives
 * ctl stack 0xA000, save area 0x2BEA000, debugger area 0x18000 */
Test(amd_co, topology_properties_and_queue_sizes)
{
    amd_node n;
    memset(&n, 0, sizeof n);
    amd_node_parse(&n, "simd_count 192\nsimd_per_cu 2\nmax_waves_per_simd 16\narray_count 12\n"
                       "simd_arrays_per_engine 2\nlds_size_in_kb 64\nwave_front_size 32\n"
                       "gfx_target_version 110000\ndrm_render_minor 129\nlocation_id 768\ndevice_id 29772\n");
    cr_assert_str_eq(n.arch_name, "gfx1100");
    cr_assert_not_null(n.arch);
    cr_assert_eq(n.num_xcc, 1, "absent num_xcc means one");
    cr_assert_eq(n.cu_count, 96);
    cr_assert_eq(n.se_per_xcc, 6);
    cr_assert_eq(n.render_minor, 129);
    cr_assert_eq(n.ctl_stack_size, 0xA000);
    cr_assert_eq(n.cwsr_size, 0x2BEA000);
    cr_assert_eq(n.debug_memory_size, 0x18000);
    cr_assert_eq(n.eop_size, 4096);
    /* a kernel that publishes the sizes is believed */
    memset(&n, 0, sizeof n);
    amd_node_parse(&n, "simd_count 1216\nsimd_per_cu 4\narray_count 32\nsimd_arrays_per_engine 1\nnum_xcc 8\n"
                       "gfx_target_version 90402\ncwsr_size 12345678\nctl_stack_size 20480\n");
    cr_assert_str_eq(n.arch_name, "gfx942");
    cr_assert_eq(n.cu_per_xcc, 38);
    cr_assert_eq(n.cwsr_size, 12345678);
    cr_assert_eq(n.ctl_stack_size, 20480);
    memset(&n, 0, sizeof n);
    amd_node_parse(&n, "gfx_target_version 100300\nsimd_count 80\nsimd_per_cu 2\n");
    cr_assert_str_eq(n.arch_name, "gfx1030");
    cr_assert_null(n.arch, "a GPU hcq does not drive");
}

/* the HIP the renderer writes: compiled by clang for each AMD target, it
 * loads, its kernargs are the IR's layout, and the sizes it reads come
 * from the implicit arguments the backend fills */
ParameterizedTestParameters(amd_co, rendered_hip_loads)
{
    static co_case cases[] = {{"gfx1100", 0x41, 32}, {"gfx90a", 0x3F, 64}, {"gfx942", 0x4C, 64},
                              {"gfx950", 0x4F, 64},  {"gfx1201", 0x4E, 32}};
    return cr_make_param_array(co_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(co_case *c, amd_co, rendered_hip_loads)
{
    if (cc_require_clang(c->mach == 0x4F || c->mach == 0x4E ? 20 : 17, c->arch) != HCQ_OK)
        cr_skip_test("%s", hcq_error_message());
    hcq_kernel *k = t_k_mark(); /* group ids, local ids, group counts and sizes in 3-D */
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, c->arch, &b));
    amd_co co;
    T_OK(amd_co_parse(b->data, b->size, NULL, &co));
    cr_assert_str_eq(co.name, "mark");
    cr_assert_eq(co.mach, c->mach);
    cr_assert_eq(co.nparams, 1);
    cr_assert(co.params[0].is_buffer);
    cr_assert_eq(co.params[0].offset, 0);
    bool count[3] = {0}, size[3] = {0};
    for (uint32_t i = 0; i < co.nhidden; i++) {
        int kd = (int)co.hidden[i].kind;
        if (kd >= AMD_HID_BLOCK_COUNT_X && kd <= AMD_HID_BLOCK_COUNT_Z) count[kd - AMD_HID_BLOCK_COUNT_X] = true;
        if (kd >= AMD_HID_GROUP_SIZE_X && kd <= AMD_HID_GROUP_SIZE_Z) size[kd - AMD_HID_GROUP_SIZE_X] = true;
    }
    for (int d = 0; d < 3; d++) cr_assert(count[d] && size[d], "dimension %d: block count and group size", d);
    amd_co_free(&co);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(amd_co, hip_refuses_what_it_cannot_render_exactly)
{
    /* f32 sin is hcq's own routine in the text; f64 would need ocml */
    hcq_kernel *k = hcq_kernel_create("sine");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref i = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_store(k, a, i, hcq_ir_unary(k, HCQ_OP_SIN, hcq_ir_load(k, a, i)));
    char *src = NULL;
    T_OK(hcq_render(k, "gfx1100", &src));
    cr_assert_not_null(strstr(src, "hcq_sinf("));
    free(src);
    hcq_kernel_destroy(k);
    k = hcq_kernel_create("sine");
    a = hcq_ir_param_buffer(k, HCQ_F64);
    i = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_store(k, a, i, hcq_ir_unary(k, HCQ_OP_SIN, hcq_ir_load(k, a, i)));
    T_FAILS(hcq_render(k, "gfx1100", &src), HCQ_ENOTSUP);
    T_MSG_HAS("sin");
    T_MSG_HAS("mock-gfx1100");
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "mock-gfx1100", &b)); /* the mock runs it */
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}
