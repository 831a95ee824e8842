/* compiler/strbuf.h: a growable string for dumps, rendered source and
 * command lines. Running out of memory is sticky and reported once, by
 * cc_sb_take(), so builders need no error checks per append. */
#ifndef HCQ_COMPILER_STRBUF_H
#define HCQ_COMPILER_STRBUF_H

#include "base/base.h"

typedef struct cc_sb {
    char *p;
    size_t len, cap;
    bool oom;
} cc_sb;

void cc_sb_printf(cc_sb *b, const char *fmt, ...) HCQ_PRINTF(2, 3);
void cc_sb_puts(cc_sb *b, const char *s);
/* Returns the string (caller frees) or NULL with HCQ_ENOMEM recorded for
 * `what`; the buffer is empty afterwards either way. */
char *cc_sb_take(cc_sb *b, const char *what);
void cc_sb_free(cc_sb *b);

#endif
