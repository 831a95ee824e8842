/* linux-libc-dev's linux/kfd_ioctl.h includes <drm/drm.h>, which Debian
 * ships in libdrm-dev as <libdrm/drm.h>: this stands in for it in the test
 * build (tests/unit/test_amd_abi_headers.c). */
#if __has_include(<libdrm/drm.h>)
#include <libdrm/drm.h>
#else
#include <linux/ioctl.h>
#include <linux/types.h>
#endif
