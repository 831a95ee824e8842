#include "hcqtest.h"

#include "drivers/sys.h"
#include "tools/kernels.h"

#include <stdlib.h>
#include <string.h>

const char *t_device_name(void)
{
    const char *d = getenv("HCQ_TEST_DEVICE");
    return d && *d ? d : "CPU";
}

hcq_device *t_open(void)
{
    hcq_device *dev = hcq_device_open(t_device_name());
    cr_assert_not_null(dev, "opening %s: %s", t_device_name(), hcq_error_message());
    return dev;
}

hcq_device *t_open_hw(const char *driver_file, const char *name, const char *why_absent)
{
    const hcq_sys *libc = sys_libc();
    if (libc->exists(libc->ctx, driver_file) != 0) cr_skip_test("%s", why_absent);
    sys_set(libc); /* the hardware, even under HCQ_MOCK=1 */
    hcq_device *dev = hcq_device_open(name);
    cr_assert_not_null(dev, "opening %s: %s", name, hcq_error_message());
    return dev;
}

hcq_program *t_load(hcq_device *dev, hcq_kernel *k)
{
    cr_assert_not_null(k);
    hcq_program *p = hcq_program_from_kernel(dev, k);
    cr_assert_not_null(p, "building `%s` for %s: %s", hcq_kernel_name(k), hcq_device_get_props(dev)->target,
                       hcq_error_message());
    hcq_kernel_destroy(k);
    return p;
}

/* the kernels live with the tools (tools/kernels.c), so `hcq compile`
 * fills a cache with exactly these */
hcq_kernel *t_k_add1(void) { return tk_add1(); }
hcq_kernel *t_k_vadd(void) { return tk_vadd_u32n(); }
hcq_kernel *t_k_muladd(void) { return tk_muladd(); }
hcq_kernel *t_k_inc(void) { return tk_inc(); }
hcq_kernel *t_k_mark(void) { return tk_mark(); }
hcq_kernel *t_k_copy(void) { return tk_copy_u32(); }

hcq_buffer *t_buffer_from(hcq_device *dev, const void *data, size_t size)
{
    hcq_buffer *b = hcq_buffer_alloc(dev, size, HCQ_MEM_DEVICE);
    cr_assert_not_null(b, "alloc %zu: %s", size, hcq_error_message());
    T_OK(hcq_buffer_copyin(b, 0, data, size));
    return b;
}

void t_read(hcq_buffer *b, void *out, size_t size) { T_OK(hcq_buffer_copyout(out, b, 0, size)); }
