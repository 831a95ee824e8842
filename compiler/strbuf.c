#include "compiler/strbuf.h"

#include <stdlib.h>
#include <string.h>

static bool reserve(cc_sb *b, size_t more)
{
    if (b->oom) return false;
    if (b->cap - b->len > more) return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap - b->len <= more) {
        if (ncap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        ncap *= 2;
    }
    char *q = realloc(b->p, ncap);
    if (!q) {
        b->oom = true;
        return false;
    }
    b->p = q;
    b->cap = ncap;
    return true;
}

void cc_sb_printf(cc_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cc_sb_puts(cc_sb *b, const char *s)
{
    size_t n = strlen(s);
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

char *cc_sb_take(cc_sb *b, const char *what)
{
    char *p = b->p;
    bool oom = b->oom || !reserve(b, 0);
    p = b->p;
    if (oom) {
        free(p);
        base_err(HCQ_ENOMEM, "out of host memory building %s", what);
        p = NULL;
    }
    memset(b, 0, sizeof *b);
    return p;
}

void cc_sb_free(cc_sb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
