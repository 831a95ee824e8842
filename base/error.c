#include "base/base.h"

#include <stdlib.h>
#include <string.h>

/* The message lives per thread, like errno: a failing call on one thread
 * never overwrites what another thread is about to print. */
static _Thread_local char err_msg[4096];
static _Thread_local hcq_status err_status;

const char *hcq_error_message(void) { return err_msg[0] ? err_msg : "no error"; }
hcq_status hcq_error_status(void) { return err_status; }

void hcq_error_clear(void)
{
    err_msg[0] = 0;
    err_status = HCQ_OK;
}

const char *base_errno_name(int e)
{
    if (e < 0) e = -e;
    const char *n = strerrorname_np(e); /* glibc 2.32: "ENOENT" */
    return n ? n : "E?";
}

const char *hcq_status_name(hcq_status s)
{
    switch (s) {
    case HCQ_OK: return "HCQ_OK";
    case HCQ_EINVAL: return "HCQ_EINVAL";
    case HCQ_ENOMEM: return "HCQ_ENOMEM";
    case HCQ_ENODEV: return "HCQ_ENODEV";
    case HCQ_ENOTSUP: return "HCQ_ENOTSUP";
    case HCQ_ETIMEDOUT: return "HCQ_ETIMEDOUT";
    case HCQ_EFAULT: return "HCQ_EFAULT";
    case HCQ_ECOMPILE: return "HCQ_ECOMPILE";
    case HCQ_EIO: return "HCQ_EIO";
    case HCQ_EFORMAT: return "HCQ_EFORMAT";
    case HCQ_ELIMIT: return "HCQ_ELIMIT";
    case HCQ_ESTATE: return "HCQ_ESTATE";
    }
    return "HCQ_E?";
}

hcq_status base_verr(hcq_status s, const char *fmt, va_list ap)
{
    /* formatted aside first: callers may pass the current message
     * (hcq_error_message()) as an argument to wrap it */
    char msg[sizeof err_msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    memcpy(err_msg, msg, sizeof msg);
    err_status = s;
    BASE_LOG(1, "error %s: %s", hcq_status_name(s), err_msg);
    return s;
}

hcq_status base_err(hcq_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_verr(s, fmt, ap);
    va_end(ap);
    return s;
}

hcq_status base_err_prefix(hcq_status s, const char *fmt, ...)
{
    char prefix[512], old[sizeof err_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err_msg, sizeof old);
    /* memcpy, not snprintf: gcc -O2 rejects the possible truncation */
    size_t n = strlen(prefix), m = strnlen(old, sizeof old - 1);
    if (n > sizeof err_msg - 3) n = sizeof err_msg - 3;
    if (m > sizeof err_msg - 3 - n) m = sizeof err_msg - 3 - n;
    memcpy(err_msg, prefix, n);
    memcpy(err_msg + n, ": ", 2);
    memcpy(err_msg + n + 2, old, m);
    err_msg[n + 2 + m] = 0;
    err_status = s;
    return s;
}

void *base_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) base_err(HCQ_ENOMEM, "out of host memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *base_realloc_array(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        base_err(HCQ_ENOMEM, "array of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) base_err(HCQ_ENOMEM, "out of host memory growing an array to %zu x %zu bytes", n, size);
    return q;
}
