#include "drivers/decode.h"

#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Decoders built in; the NV and AMD backends add theirs here. */
static const drv_decoder *const decoders[] = {&drv_cpu_decoder,     &drv_nv_gpfifo_decoder, &drv_nv_qmd_decoder,
                                              &drv_amd_pm4_decoder, &drv_amd_sdma_decoder,  &drv_amd_aql_decoder,
                                              &drv_names_decoder};

const drv_decoder *drv_decoder_find(const char *format)
{
    for (size_t i = 0; i < BASE_ARRAY_LEN(decoders); i++)
        if (!strcmp(decoders[i]->format, format)) return decoders[i];
    return NULL;
}

const drv_decoder *drv_decoder_at(size_t i) { return i < BASE_ARRAY_LEN(decoders) ? decoders[i] : NULL; }

const char *drv_decoder_formats(void)
{
    static char list[256];
    size_t off = 0;
    for (size_t i = 0; i < BASE_ARRAY_LEN(decoders) && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", decoders[i]->format);
    return list;
}

void drv_printable(char *out, size_t size, const char *src, size_t len)
{
    if (!size) return;
    size_t n = 0;
    for (size_t i = 0; i < len && src[i] && n + 1 < size; i++) {
        unsigned char c = (unsigned char)src[i];
        out[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    out[n] = 0;
}

/* ** symbols */
typedef struct sym {
    uint64_t addr, size;
    char name[64];
} sym;

#define SYM_MAX 4096
static sym syms[SYM_MAX];
static uint32_t nsyms, sym_next; /* a ring once full: the oldest goes */
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;

void drv_symbol_add(uint64_t addr, uint64_t size, const char *name)
{
    if (!name) return;
    pthread_mutex_lock(&sym_lock);
    sym *s = NULL;
    for (uint32_t i = 0; i < nsyms && !s; i++)
        if (syms[i].addr == addr) s = &syms[i]; /* a new program at a reused address */
    if (!s) {
        s = &syms[nsyms < SYM_MAX ? nsyms++ : sym_next];
        if (nsyms == SYM_MAX) sym_next = (sym_next + 1) % SYM_MAX;
    }
    s->addr = addr;
    s->size = size;
    drv_printable(s->name, sizeof s->name, name, strlen(name));
    pthread_mutex_unlock(&sym_lock);
}

void drv_symbol_remove(uint64_t addr)
{
    pthread_mutex_lock(&sym_lock);
    for (uint32_t i = 0; i < nsyms; i++)
        if (syms[i].addr == addr) syms[i].addr = syms[i].size = 0, syms[i].name[0] = 0;
    pthread_mutex_unlock(&sym_lock);
}

bool drv_symbol_name(uint64_t addr, char *out, size_t size)
{
    bool found = false;
    pthread_mutex_lock(&sym_lock);
    for (uint32_t i = 0; i < nsyms && !found; i++) {
        const sym *s = &syms[i];
        if (!s->name[0]) continue;
        if (addr == s->addr || (s->size && addr > s->addr && addr - s->addr < s->size)) {
            snprintf(out, size, "%s", s->name);
            found = true;
        }
    }
    pthread_mutex_unlock(&sym_lock);
    return found;
}

/* "hcq-names": one program per record, va its launch address, arch its code
 * size, the dwords its name (NUL-padded) */
static hcq_status decode_names(uint32_t arch, uint64_t va, const uint32_t *dw, uint32_t ndw, FILE *out)
{
    char name[64];
    drv_printable(name, sizeof name, (const char *)dw, (size_t)ndw * 4);
    if (!name[0]) {
        fprintf(out, "a program name record without a name (%u dwords)\n", ndw);
        return HCQ_EFORMAT;
    }
    drv_symbol_add(va, arch, name);
    fprintf(out, "program `%s` at 0x%llx, %u bytes\n", name, (unsigned long long)va, arch);
    return HCQ_OK;
}

const drv_decoder drv_names_decoder = {"hcq-names", decode_names, NULL};
