/* Decoding SASS with nvdisasm, once per code blob (compiler/sass.h):
 * finding the tool, running it on the raw instruction bytes with a
 * timeout (cc_run), the process's table of decoded programs, and the
 * kernel cache's copy of each (serialized, keyed by the code's SHA-256,
 * the SM and SASS_DECODER_VERSION). */
#include "compiler/cc.h"
#include "compiler/elf.h"
#include "compiler/sass.h"

#include "base/base.h"

#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ** finding nvdisasm */
static pthread_once_t find_once = PTHREAD_ONCE_INIT;
static char tool_path[1024], tool_why[600];

static bool executable(const char *p) { return access(p, X_OK) == 0; }

static void find_tool(void)
{
    const base_env *e = base_env_get();
    if (e->nvdisasm) {
        if (executable(e->nvdisasm)) snprintf(tool_path, sizeof tool_path, "%s", e->nvdisasm);
        else snprintf(tool_why, sizeof tool_why, "HCQ_NVDISASM=%s is not an executable file", e->nvdisasm);
        return;
    }
    if (e->path) {
        const char *p = e->path;
        while (*p) {
            const char *c = strchr(p, ':');
            size_t n = c ? (size_t)(c - p) : strlen(p);
            char cand[1024];
            if (n && snprintf(cand, sizeof cand, "%.*s/nvdisasm", (int)n, p) < (int)sizeof cand && executable(cand)) {
                snprintf(tool_path, sizeof tool_path, "%s", cand);
                return;
            }
            p += n + (c ? 1 : 0);
        }
    }
    /* the PyPI wheel (nvidia-cuda-nvdisasm) puts it in nvidia/cu13/bin
     * (CUDA 13 wheels) or nvidia/cuda_nvdisasm/bin (CUDA 12's) of whichever
     * Python installed it */
    static const char *const where[] = {
        "/usr/local/lib/python3*/*-packages/nvidia/*/bin/nvdisasm",
        "/usr/lib/python3*/*-packages/nvidia/*/bin/nvdisasm",
        "/usr/lib/python3/dist-packages/nvidia/*/bin/nvdisasm",
        "%s/.local/lib/python3*/site-packages/nvidia/*/bin/nvdisasm",
        "%s/.pyenv/versions/*/lib/python3*/site-packages/nvidia/*/bin/nvdisasm",
        "/opt/*/lib/python3*/site-packages/nvidia/*/bin/nvdisasm",
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(where); i++) {
        char pat[1024];
        if (strstr(where[i], "%s")) {
            if (!e->home) continue;
            snprintf(pat, sizeof pat, where[i], e->home);
        } else {
            snprintf(pat, sizeof pat, "%s", where[i]);
        }
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            for (size_t k = g.gl_pathc; k-- > 0;) /* the newest version sorts last */
                if (executable(g.gl_pathv[k])) {
                    snprintf(tool_path, sizeof tool_path, "%s", g.gl_pathv[k]);
                    globfree(&g);
                    return;
                }
            globfree(&g);
        }
    }
    snprintf(tool_why, sizeof tool_why, "nvdisasm is not on PATH nor in a Python site-packages (nvidia/*/bin): "
             "`pip install nvidia-cuda-nvdisasm` or set HCQ_NVDISASM");
}

const char *sass_nvdisasm(char *why, size_t why_size)
{
    pthread_once(&find_once, find_tool);
    if (tool_path[0]) return tool_path;
    snprintf(why, why_size, "%s", tool_why);
    return NULL;
}

/* ** serialized form */
#define SER_MAGIC "HCQSASS1"
#define SER_HEADER 32u

hcq_status sass_serialize(const sass_prog *p, void **out, size_t *size)
{
    size_t n = SER_HEADER + (size_t)p->ninsns * sizeof(sass_insn) + p->strings_size;
    uint8_t *b = malloc(n);
    if (!b) return base_err(HCQ_ENOMEM, "serializing decoded SASS: out of memory");
    uint32_t h[6] = {SASS_DECODER_VERSION, (uint32_t)sizeof(sass_insn), p->sm, p->ninsns, p->strings_size, 0};
    memcpy(b, SER_MAGIC, 8);
    memcpy(b + 8, h, sizeof h);
    memcpy(b + SER_HEADER, p->insns, (size_t)p->ninsns * sizeof(sass_insn));
    memcpy(b + SER_HEADER + (size_t)p->ninsns * sizeof(sass_insn), p->strings, p->strings_size);
    *out = b;
    *size = n;
    return HCQ_OK;
}

hcq_status sass_deserialize(const void *data, size_t size, sass_prog **out)
{
    const uint8_t *b = data;
    uint32_t h[6];
    if (size < SER_HEADER || memcmp(b, SER_MAGIC, 8))
        return base_err(HCQ_EFORMAT, "decoded SASS: not a serialized program (magic)");
    memcpy(h, b + 8, sizeof h);
    if (h[0] != SASS_DECODER_VERSION || h[1] != sizeof(sass_insn))
        return base_err(HCQ_EFORMAT, "decoded SASS: decoder version %u (%u-byte instructions); this build reads %u "
                        "(%zu)", h[0], h[1], SASS_DECODER_VERSION, sizeof(sass_insn));
    uint64_t need = SER_HEADER + (uint64_t)h[3] * sizeof(sass_insn) + h[4];
    if (need != size || !h[4] || h[3] > (1u << 22))
        return base_err(HCQ_EFORMAT, "decoded SASS: %zu bytes where the header says %llu", size,
                        (unsigned long long)need);
    const char *strings = (const char *)b + SER_HEADER + (size_t)h[3] * sizeof(sass_insn);
    if (strings[h[4] - 1]) return base_err(HCQ_EFORMAT, "decoded SASS: the string table is not NUL-ended");
    sass_prog *p = calloc(1, sizeof *p);
    if (!p || !(p->insns = malloc(h[3] ? (size_t)h[3] * sizeof(sass_insn) : 1)) || !(p->strings = malloc(h[4]))) {
        sass_prog_free(p);
        return base_err(HCQ_ENOMEM, "decoded SASS: out of memory");
    }
    memcpy(p->insns, b + SER_HEADER, (size_t)h[3] * sizeof(sass_insn));
    memcpy(p->strings, strings, h[4]);
    p->sm = h[2];
    p->ninsns = h[3];
    p->strings_size = h[4];
    /* what the executor trusts: in range, or refused here */
    p->code = NULL;
    p->code_size = 0;
    atomic_init(&p->binary, NULL);
    p->binary_size = 0;
    p->kernel[0] = 0;
    atomic_init(&p->mock_info, NULL);
    for (uint32_t i = 0; i < p->ninsns; i++) {
        const sass_insn *in = &p->insns[i];
        bool ok = in->op < SASS_OP_COUNT && in->nops <= SASS_MAX_OPNDS && in->text < p->strings_size &&
                  in->ntypes <= 3 && (in->target < p->ninsns || in->target >= UINT32_MAX - 1);
        for (unsigned k = 0; ok && k < SASS_MAX_OPNDS; k++) ok = in->o[k].kind <= SASS_K_TARGET;
        if (!ok) {
            sass_prog_free(p);
            return base_err(HCQ_EFORMAT, "decoded SASS: instruction %u is malformed", i);
        }
    }
    *out = p;
    return HCQ_OK;
}

/* ** the process's table: decoded programs by their code bytes */
typedef struct entry {
    sass_prog *p;
    void *code;
    size_t size;
    struct entry *next;
} entry;
static entry *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static const sass_prog *table_find(const uint8_t sha[32], uint32_t sm)
{
    pthread_mutex_lock(&table_lock);
    entry *e = table;
    while (e && (e->p->sm != sm || memcmp(e->p->sha, sha, 32))) e = e->next;
    pthread_mutex_unlock(&table_lock);
    return e ? e->p : NULL;
}

static const sass_prog *table_add(sass_prog *p, const void *code, size_t size)
{
    entry *e = calloc(1, sizeof *e);
    void *c = malloc(size ? size : 1);
    if (!e || !c) {
        free(e);
        free(c);
        sass_prog_free(p);
        return NULL;
    }
    memcpy(c, code, size);
    pthread_mutex_lock(&table_lock);
    for (entry *x = table; x; x = x->next)
        if (x->p->sm == p->sm && !memcmp(x->p->sha, p->sha, 32)) { /* another thread decoded it meanwhile */
            pthread_mutex_unlock(&table_lock);
            sass_prog_free(p);
            free(e);
            free(c);
            return x->p;
        }
    p->code = c;
    p->code_size = size;
    *e = (entry){p, c, size, table};
    table = e;
    pthread_mutex_unlock(&table_lock);
    return p;
}

static void cache_key(const uint8_t sha[32], uint32_t sm, cc_cache_key *key)
{
    cc_sha256_ctx s;
    char v[32];
    cc_key_begin(&s);
    snprintf(v, sizeof v, "sass-decode v%u sm_%u", SASS_DECODER_VERSION, sm);
    cc_key_add_str(&s, v);
    cc_key_add(&s, sha, 32);
    cc_key_end(&s, key);
}

/* ** running nvdisasm on raw bytes */
static hcq_status run_tool(const void *code, size_t size, uint32_t sm, const char *kernel, char **text, int *code_out)
{
    char why[600];
    const char *tool = sass_nvdisasm(why, sizeof why);
    if (!tool)
        return base_err(HCQ_ENOTSUP, "decoding the SASS of kernel `%s` (sm_%u) for the mock's executor: %s; or fill "
                        "the kernel cache where it is (hcq compile)", kernel, sm, why);
    char dir[512], file[600], arch[16];
    hcq_status s = cc_make_temp_dir(dir, sizeof dir);
    if (s) return s;
    snprintf(file, sizeof file, "%s/code.bin", dir);
    FILE *f = fopen(file, "wb");
    bool ok = f && fwrite(code, 1, size, f) == size;
    if (f && fclose(f)) ok = false;
    if (!ok) {
        cc_remove_temp_dir(dir);
        return base_err(HCQ_EIO, "decoding the SASS of kernel `%s`: cannot write %s", kernel, file);
    }
    snprintf(arch, sizeof arch, "SM%u", sm);
    const char *argv[] = {tool, "-b", arch, file, NULL};
    s = cc_run(argv, text, code_out);
    cc_remove_temp_dir(dir);
    if (s) return base_err_prefix(s, "decoding the SASS of kernel `%s` with %s", kernel, tool);
    return HCQ_OK;
}

static hcq_status decode_text(const void *code, size_t size, uint32_t sm, const char *kernel, sass_prog **out)
{
    char *text = NULL;
    int rc = 0;
    hcq_status s = run_tool(code, size, sm, kernel, &text, &rc);
    if (s) return s;
    if (rc) {
        size_t n = strlen(text);
        if (n > 1500) strcpy(text + 1480, "\n[... cut]");
        s = base_err(HCQ_EFORMAT, "kernel `%s`: nvdisasm cannot decode its %zu bytes as sm_%u SASS (exit status %d):\n%s",
                     kernel, size, sm, rc, text);
        free(text);
        return s;
    }
    s = sass_parse(text, sm, (uint32_t)(size / 16), code, out);
    free(text);
    return s;
}

hcq_status sass_decode(const void *code, size_t size, uint32_t sm, const char *kernel, const sass_prog **out)
{
    if (!size || size % 16 || size > (64u << 20))
        return base_err(HCQ_EFORMAT, "kernel `%s`: %zu bytes of SASS; sm_%u code is whole 16-byte instructions", kernel,
                        size, sm);
    uint8_t sha[32];
    cc_sha256_once(code, size, sha);
    const sass_prog *hit = table_find(sha, sm);
    if (hit) {
        *out = hit;
        return HCQ_OK;
    }
    cc_cache_key key;
    cache_key(sha, sm, &key);
    void *blob = NULL;
    size_t blob_size = 0;
    sass_prog *p = NULL;
    if (cc_cache_get_ext(&key, ".sass", &blob, &blob_size)) {
        if (sass_deserialize(blob, blob_size, &p) || p->sm != sm || p->ninsns != size / 16) {
            sass_prog_free(p); /* not what this key should hold: decode again */
            p = NULL;
        }
        free(blob);
    }
    if (!p) {
        hcq_status s = decode_text(code, size, sm, kernel, &p);
        if (s) return s;
        void *ser = NULL;
        size_t ser_size = 0;
        if (!sass_serialize(p, &ser, &ser_size)) cc_cache_put_ext(&key, ".sass", ser, ser_size); /* best effort */
        free(ser);
        BASE_LOG(1, "decoded the SASS of kernel `%s` (sm_%u, %u instructions) with nvdisasm", kernel, sm, p->ninsns);
    }
    memcpy(p->sha, sha, 32);
    const sass_prog *r = table_add(p, code, size);
    if (!r) return base_err(HCQ_ENOMEM, "kernel `%s`: out of memory keeping its decoded SASS", kernel);
    *out = r;
    return HCQ_OK;
}

/* the terminator rule (sass.h): the first BRA to itself at or past every
 * target seen before it; 0 if none */
static uint32_t extent_of(const sass_prog *p)
{
    uint32_t reach = 0;
    for (uint32_t i = 0; i < p->ninsns; i++) {
        const sass_insn *in = &p->insns[i];
        if (in->op == SASS_OP_UNKNOWN && !p->strings[in->text]) return 0; /* a hole in the text */
        if (in->target < p->ninsns && in->target > reach) reach = in->target;
        if (in->op == SASS_OP_BRA && in->target == i && i >= reach && in->guard == 7) return i + 1;
    }
    return 0;
}

/* ptxas's function terminator, `BRA` to itself, as it encodes it (seen in
 * every cubin of nvcc/ptxas 13 for these SMs; the scheduling-control bits
 * of the high word's top are not compared). A word that matches is only
 * a candidate: nvdisasm decodes up to it and the terminator rule decides. */
static const struct {
    uint32_t sm_major;
    uint64_t lo, hi;
} terminators[] = {
    {.sm_major = 8, .lo = 0xfffffff000007947ull, .hi = 0x000fc0000383ffffull},
    {.sm_major = 9, .lo = 0xfffffffc00fc7947ull, .hi = 0x000fc0000383ffffull},
};
#define CONTROL_BITS (~0ull << 41)

hcq_status sass_decode_extent(const void *code, size_t avail, uint32_t sm, const sass_prog **out, size_t *size_out)
{
    /* known code first: a program the loader or an earlier launch decoded */
    pthread_mutex_lock(&table_lock);
    for (entry *e = table; e; e = e->next)
        if (e->p->sm / 10 == sm / 10 && e->size <= avail && !memcmp(e->code, code, e->size)) {
            *out = e->p;
            *size_out = e->size;
            pthread_mutex_unlock(&table_lock);
            return HCQ_OK;
        }
    pthread_mutex_unlock(&table_lock);
    const uint64_t *term = NULL;
    for (size_t i = 0; i < BASE_ARRAY_LEN(terminators); i++)
        if (terminators[i].sm_major == sm / 10) term = &terminators[i].lo;
    if (!term) return base_err(HCQ_ENOTSUP, "no terminator is known for sm_%u code: its length cannot be found", sm);
    size_t words = BASE_MIN(avail, (size_t)1 << 20) / 16;
    const uint8_t *b = code;
    for (size_t w = 0; w < words; w++) {
        uint64_t lo, hi;
        memcpy(&lo, b + 16 * w, 8);
        memcpy(&hi, b + 16 * w + 8, 8);
        if (lo != term[0] || (hi & ~CONTROL_BITS) != (term[1] & ~CONTROL_BITS)) continue;
        size_t n = (w + 1) * 16;
        char *text = NULL;
        int rc = 0;
        hcq_status s = run_tool(code, n, sm, "(at the program address)", &text, &rc);
        if (s) return s;
        if (rc) {
            size_t len = strcspn(text, "\n");
            s = base_err(HCQ_EFORMAT, "the %zu bytes at the program address up to ptxas's terminator are not sm_%u "
                         "SASS: nvdisasm (exit status %d) says: %.*s", n, sm, rc, (int)BASE_MIN(len, 300), text);
            free(text);
            return s;
        }
        sass_prog *p = NULL;
        s = sass_parse(text, sm, (uint32_t)(n / 16), code, &p);
        free(text);
        if (s) return s;
        uint32_t end = extent_of(p);
        sass_prog_free(p);
        if (end) {
            *size_out = (size_t)end * 16;
            return sass_decode(code, *size_out, sm, "(at the program address)", out);
        }
        /* a branch or call reaches past this one: a function follows */
    }
    return base_err(HCQ_EFORMAT, "the sm_%u code at the program address has no end in its %zu mapped bytes (no "
                    "`BRA` to itself after its last branch target, as ptxas ends a function)", sm, words * 16);
}

hcq_status sass_attach(const sass_prog *p, const void *binary, size_t size, const char *kernel)
{
    sass_prog *m = (sass_prog *)p; /* the table's: its fields are written under the table's lock */
    pthread_mutex_lock(&table_lock);
    bool have = atomic_load(&m->binary) != NULL;
    pthread_mutex_unlock(&table_lock);
    if (have) return HCQ_OK;
    void *copy = malloc(size ? size : 1);
    if (!copy) return base_err(HCQ_ENOMEM, "kernel `%s`: out of memory keeping its cubin", kernel);
    memcpy(copy, binary, size);
    pthread_mutex_lock(&table_lock);
    if (!atomic_load(&m->binary)) {
        m->binary_size = size;
        snprintf(m->kernel, sizeof m->kernel, "%s", kernel);
        atomic_store_explicit(&m->binary, copy, memory_order_release);
        copy = NULL;
    }
    pthread_mutex_unlock(&table_lock);
    free(copy);
    return HCQ_OK;
}

hcq_status sass_decode_cubin(const void *bin, size_t size, uint32_t sm, unsigned *decoded)
{
    cc_elf e;
    if (cc_elf_open(&e, bin, size)) return base_err_prefix(HCQ_EFORMAT, "decoding a cubin's SASS: not an ELF file");
    hcq_status s = HCQ_OK;
    unsigned n = 0;
    for (uint32_t i = 1; i < e.nsymbols && !s; i++) {
        const cc_elf_symbol *y = &e.symbols[i];
        if (ELF64_ST_TYPE(y->info) != STT_FUNC || ELF64_ST_BIND(y->info) != STB_GLOBAL || !y->shndx ||
            y->shndx >= e.nsections)
            continue;
        const cc_elf_section *sec = &e.sections[y->shndx];
        if (strncmp(sec->name, ".text.", 6) || !sec->data || !sec->size) continue;
        const sass_prog *p;
        if (!(s = sass_decode(sec->data, sec->size, sm, sec->name + 6, &p))) n++;
    }
    cc_elf_close(&e);
    if (!s && !n) s = base_err(HCQ_EFORMAT, "decoding a cubin's SASS: it has no kernel (no global function in a .text section)");
    if (!s && decoded) *decoded = n;
    return s;
}
