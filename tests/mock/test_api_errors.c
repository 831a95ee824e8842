/* Bad input on the device under test: each is a clear error, nothing
 * crashes, nothing leaks, and the device keeps working. */
#include "hcqtest.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

static hcq_device *dev;
static void setup(void) { dev = t_open(); }
static void teardown(void) { T_OK(hcq_device_close(dev)); }
TestSuite(api_errors, .init = setup, .fini = teardown, .timeout = 120);

Test(api_errors, unknown_device_names)
{
    cr_assert_null(hcq_device_open("TPU:0"));
    cr_assert_eq(hcq_error_status(), HCQ_ENODEV);
    T_MSG_HAS("kinds are CPU, NV and AMD");
    cr_assert_null(hcq_device_open("CPU:3"));
    cr_assert_eq(hcq_error_status(), HCQ_ENODEV);
    cr_assert_null(hcq_device_open("CPU:x"));
    cr_assert_eq(hcq_error_status(), HCQ_ENODEV);
    cr_assert_null(hcq_device_open("NV:99"));
    cr_assert_eq(hcq_error_status(), HCQ_ENODEV);
}

Test(api_errors, zero_and_impossible_allocations)
{
    cr_assert_null(hcq_buffer_alloc(dev, 0, HCQ_MEM_DEVICE));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    T_MSG_HAS("size 0");
    cr_assert_null(hcq_buffer_alloc(dev, 1ull << 62, HCQ_MEM_DEVICE));
    cr_assert_eq(hcq_error_status(), HCQ_ENOMEM);
    T_MSG_HAS("EiB"); /* names the size asked */
    cr_assert_null(hcq_buffer_alloc(dev, 64, (hcq_mem_kind)7));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 1, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_free(b));
}

Test(api_errors, double_frees_are_caught)
{
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 64, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_free(b));
    T_FAILS(hcq_buffer_free(b), HCQ_ESTATE);
    T_MSG_HAS("freed twice");
    hcq_signal *s = T_NONNULL(hcq_signal_create(dev, 0));
    T_OK(hcq_signal_destroy(s));
    T_FAILS(hcq_signal_destroy(s), HCQ_ESTATE);
    hcq_queue *q = T_NONNULL(hcq_queue_create(dev, HCQ_QUEUE_COPY));
    T_OK(hcq_queue_destroy(q));
    T_FAILS(hcq_queue_destroy(q), HCQ_ESTATE);
    hcq_program *p = t_load(dev, t_k_inc());
    T_OK(hcq_program_free(p));
    T_FAILS(hcq_program_free(p), HCQ_ESTATE);
    hcq_device *d2 = T_NONNULL(hcq_device_open(t_device_name()));
    T_OK(hcq_device_close(d2));
    T_FAILS(hcq_device_close(d2), HCQ_ESTATE);
    T_OK(hcq_buffer_free(NULL));
}

/* a minimal ELF header claiming another machine */
static void fake_elf(uint8_t *b, size_t n, uint16_t machine, uint16_t type)
{
    memset(b, 0, n);
    memcpy(b, "\x7f" "ELF", 4);
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    memcpy(b + 16, &type, 2);
    memcpy(b + 18, &machine, 2);
}

Test(api_errors, programs_for_another_target_or_garbage)
{
    uint8_t elf[256];
    fake_elf(elf, sizeof elf, 190, 2); /* a CUDA cubin, or claims to be */
    const char *target = hcq_device_get_props(dev)->target;
    if (strncmp(target, "sm_", 3)) {
        cr_assert_null(hcq_program_load(dev, elf, sizeof elf));
        cr_assert_eq(hcq_error_status(), HCQ_EFORMAT, "%s", hcq_error_message());
    }
    fake_elf(elf, sizeof elf, 224, 3); /* an AMDGPU code object */
    if (strncmp(target, "gfx", 3)) {
        cr_assert_null(hcq_program_load(dev, elf, sizeof elf));
        cr_assert_eq(hcq_error_status(), HCQ_EFORMAT, "%s", hcq_error_message());
    }
    uint8_t junk[1000];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37);
    cr_assert_null(hcq_program_load(dev, junk, sizeof junk));
    cr_assert_eq(hcq_error_status(), HCQ_EFORMAT, "%s", hcq_error_message());
    cr_assert_null(hcq_program_load(dev, junk, 0));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    /* still works */
    hcq_program *p = t_load(dev, t_k_inc());
    T_OK(hcq_program_free(p));
}

Test(api_errors, malformed_ir_names_the_op)
{
    hcq_kernel *k = hcq_kernel_create("bad");
    hcq_ir_ref a = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref i = hcq_ir_const_int(k, HCQ_I32, 0);
    hcq_ir_ref f = hcq_ir_const_float(k, HCQ_F32, 1.0);
    hcq_ir_ref src[2] = {i, f};
    hcq_ir_emit(k, HCQ_OP_ADD, HCQ_I32, 0, src, 2, 0); /* i32 + f32 */
    hcq_ir_store(k, a, i, f);
    cr_assert_null(hcq_program_from_kernel(dev, k));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL, "%s", hcq_error_message());
    T_MSG_HAS("op 3");
    hcq_kernel_destroy(k);
}

Test(api_errors, compile_errors_carry_the_compiler_output)
{
    if (strcmp(hcq_device_get_props(dev)->target, "cpu"))
        cr_skip_test("the device's target (%s) is not compiled by clang here", hcq_device_get_props(dev)->target);
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-test-cc");
    char script[T_TMP_PATH + 16];
    snprintf(script, sizeof script, "%s/clang-99", dir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'clang version 99.0.0'; exit 0; fi\n"
               "echo 'kernel.c:3:7: error: injected failure for the test' >&2\nexit 1\n");
    fclose(f);
    chmod(script, 0755);
    setenv("HCQ_CLANG", script, 1);
    setenv("HCQ_CACHE_DIR", dir, 1);
    base_env_reload();
    hcq_kernel *k = t_k_inc();
    hcq_program *p = hcq_program_from_kernel(dev, k);
    hcq_kernel_destroy(k);
    cr_assert_null(p);
    cr_assert_eq(hcq_error_status(), HCQ_ECOMPILE, "%s", hcq_error_message());
    T_MSG_HAS("injected failure for the test");
}
