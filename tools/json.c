/* JSON helpers shared by the tools' --json outputs. */
#include "tools/tools.h"

void tool_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void tool_json_hcq(FILE *f)
{
    fprintf(f, "\"hcq\": {\"version\": ");
    tool_json_str(f, hcq_version());
    fprintf(f, ", \"revision\": ");
    tool_json_str(f, hcq_build_revision());
    fprintf(f, "}");
}
