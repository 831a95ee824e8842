/* The twins of the GPU binaries this process has loaded (twin.h): the
 * mock GPU has no SASS or AMDGPU decoder, so it finds what to run by the
 * machine code at a launch's program address, compared byte for byte with
 * the kernel code of the binaries registered here. A binary's twin comes
 * from the kernel cache, keyed by the binary's SHA-256 (so a cache filled
 * where ptxas ran serves a machine where only the cubin is at hand), or is
 * built from the kernel it was compiled from. Entries live as long as the
 * process (a loaded program's code may be launched until the end). */
#include "compiler/twin.h"

#include "compiler/elf.h"
#include "compiler/render_gpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 64
static cc_twin_entry *buckets[BUCKETS]; /* by the first CC_TWIN_PREFIX bytes of the code */
static cc_twin_entry *shorter;          /* code shorter than that */
static cc_twin_entry *by_binary;        /* every entry, for lookups by the binary's hash */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;

static unsigned bucket_of(const uint8_t *code)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < CC_TWIN_PREFIX; i++) h = (h ^ code[i]) * 1099511628211ull;
    return (unsigned)(h % BUCKETS);
}

/* ** the kernel's machine code inside a binary */
static hcq_status code_of(const void *bin, size_t size, cc_twin_entry *e)
{
    cc_elf elf;
    hcq_status st = cc_elf_open(&elf, bin, size);
    if (st) return base_err_prefix(HCQ_EFORMAT, "host twin: not a GPU binary");
    const cc_elf_section *sec = NULL;
    const uint8_t *code = NULL;
    uint64_t n = 0;
    for (uint32_t i = 1; i < elf.nsymbols && !code; i++) {
        const cc_elf_symbol *s = &elf.symbols[i];
        if (ELF64_ST_TYPE(s->info) != STT_FUNC || ELF64_ST_BIND(s->info) != STB_GLOBAL || !s->shndx ||
            s->shndx >= elf.nsections)
            continue;
        sec = &elf.sections[s->shndx];
        if (elf.machine == EM_CUDA) { /* a kernel owns its .text.<name> */
            if (strncmp(sec->name, ".text.", 6) || !sec->data) continue;
            code = sec->data;
            n = sec->size;
        } else if (elf.machine == EM_AMDGPU) {
            if (cc_elf_symbol_data(&elf, s, &code) != HCQ_OK) continue;
            n = s->size ? s->size : sec->size - (s->value - sec->addr);
        }
    }
    if (!code || !n) {
        char what[96];
        cc_elf_close(&elf);
        return base_err(HCQ_EFORMAT, "host twin: %s has no kernel code (no global function)",
                        cc_elf_describe(elf.machine, elf.type, what, sizeof what));
    }
    e->code_off = (size_t)(code - (const uint8_t *)bin);
    e->code_size = (size_t)n;
    /* words the cubin loader relocates differ in memory: not compared */
    for (uint32_t i = 1; i < elf.nsections && elf.machine == EM_CUDA; i++) {
        const cc_elf_section *rs = &elf.sections[i];
        if ((rs->type != SHT_REL && rs->type != SHT_RELA) || rs->info != sec->index || !rs->data) continue;
        size_t ent = rs->type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
        if (!e->skip && !(e->skip = calloc(1, e->code_size))) {
            cc_elf_close(&elf);
            return base_err(HCQ_ENOMEM, "host twin: out of memory");
        }
        for (uint64_t k = 0; k + ent <= rs->size; k += ent) {
            Elf64_Rel r;
            memcpy(&r, rs->data + k, sizeof r);
            for (uint64_t b = r.r_offset; b < r.r_offset + 12 && b < e->code_size; b++) e->skip[b] = 1;
        }
    }
    cc_elf_close(&elf);
    return HCQ_OK;
}

/* ** the table */
static cc_twin_entry *find_sha(const uint8_t sha[32])
{
    for (cc_twin_entry *e = by_binary; e; e = e->next_all)
        if (!memcmp(e->sha, sha, 32)) return e;
    return NULL;
}

static void entry_free(cc_twin_entry *e)
{
    if (!e) return;
    cc_twin_module_unload(&e->mod);
    free(e->binary);
    free(e->skip);
    free(e);
}

/* Registers (binary, twin) unless an entry for the binary exists. */
static hcq_status add(const uint8_t sha[32], const void *bin, size_t size, const void *so, size_t so_size,
                      const char *label)
{
    cc_twin_entry *e = calloc(1, sizeof *e);
    if (!e || !(e->binary = malloc(size))) {
        free(e);
        return base_err(HCQ_ENOMEM, "host twin: out of memory");
    }
    memcpy(e->binary, bin, size);
    e->binary_size = size;
    memcpy(e->sha, sha, 32);
    snprintf(e->label, sizeof e->label, "%s", label);
    hcq_status st = code_of(e->binary, size, e);
    if (!st && so) st = cc_twin_module_load(so, so_size, &e->mod);
    if (st) {
        entry_free(e);
        return st;
    }
    e->code = (const uint8_t *)e->binary + e->code_off;
    pthread_rwlock_wrlock(&lock);
    if (find_sha(sha)) {
        pthread_rwlock_unlock(&lock);
        entry_free(e);
        return HCQ_OK;
    }
    cc_twin_entry **head = e->code_size < CC_TWIN_PREFIX ? &shorter : &buckets[bucket_of(e->code)];
    e->next = *head;
    *head = e;
    e->next_all = by_binary;
    by_binary = e;
    pthread_rwlock_unlock(&lock);
    return HCQ_OK;
}

static void binary_key(const uint8_t sha[32], cc_cache_key *key)
{
    cc_sha256_ctx s;
    cc_key_begin(&s);
    cc_key_add_str(&s, "host twin of a GPU binary v1 " CC_TWIN_HOST_ARCH);
    cc_key_add_str(&s, CC_TWIN_FLAGS);
    cc_key_add(&s, sha, 32);
    cc_key_end(&s, key);
}

static bool known(const uint8_t sha[32])
{
    pthread_rwlock_rdlock(&lock);
    bool k = find_sha(sha) != NULL;
    pthread_rwlock_unlock(&lock);
    return k;
}

/* from the cache entry keyed by the binary: "HCQTWIN1" | u32 label bytes | label | so */
static hcq_status from_cache(const uint8_t sha[32], const void *bin, size_t size, bool *found)
{
    cc_cache_key key;
    binary_key(sha, &key);
    void *data = NULL;
    size_t n = 0;
    *found = false;
    if (!cc_cache_get(&key, &data, &n)) return HCQ_OK;
    hcq_status st = HCQ_OK;
    uint32_t len = 0;
    if (n >= 12) memcpy(&len, (uint8_t *)data + 8, 4);
    if (n < 12 || memcmp(data, "HCQTWIN1", 8) || len > n - 12 || len >= 128) {
        BASE_LOG(1, "host twin: ignoring the malformed cache entry %s.bin", key.hex);
    } else {
        char label[128];
        snprintf(label, sizeof label, "%.*s", (int)len, (char *)data + 12);
        st = add(sha, bin, size, (uint8_t *)data + 12 + len, n - 12 - len, label);
        *found = st == HCQ_OK;
        if (st == HCQ_EFORMAT) { /* a twin this build cannot use: rebuilt by whoever can */
            BASE_LOG(1, "host twin: ignoring cache entry %s.bin: %s", key.hex, hcq_error_message());
            st = HCQ_OK;
        }
    }
    free(data);
    return st;
}

hcq_status cc_twin_prepare(const hcq_kernel *k, const char *target, const void *bin, size_t size)
{
    int origin = cc_twin_origin_of(target);
    if (!origin) return HCQ_OK;
    uint8_t sha[32];
    cc_sha256_once(bin, size, sha);
    if (known(sha)) return HCQ_OK;
    bool found;
    hcq_status st = from_cache(sha, bin, size, &found);
    if (st || found) return st;
    hcq_binary *so = NULL;
    if ((st = cc_twin_compile(k, origin, target, &so))) return st;
    cc_cache_key key;
    binary_key(sha, &key);
    uint32_t len = (uint32_t)strlen(so->compiler);
    uint8_t *payload = malloc(12 + len + so->size);
    if (payload) {
        memcpy(payload, "HCQTWIN1", 8);
        memcpy(payload + 8, &len, 4);
        memcpy(payload + 12, so->compiler, len);
        memcpy(payload + 12 + len, so->data, so->size);
        if (cc_cache_put(&key, payload, 12 + len + so->size) != HCQ_OK)
            BASE_LOG(1, "host twin of '%s': not cached: %s", hcq_kernel_name(k), hcq_error_message());
        free(payload);
    }
    st = add(sha, bin, size, so->data, so->size, so->compiler);
    hcq_binary_free(so);
    return st;
}

hcq_status cc_twin_attach(const void *bin, size_t size, const char *id)
{
    uint8_t sha[32];
    cc_sha256_once(bin, size, sha);
    if (known(sha)) return HCQ_OK;
    bool found;
    hcq_status st = from_cache(sha, bin, size, &found);
    if (st || found) return st;
    cc_cache_key key;
    binary_key(sha, &key);
    return base_err(HCQ_ENOTSUP, "%s: the mock GPU runs a kernel's machine code as its host twin, made when hcq "
                    "compiles the kernel (hcq_program_from_kernel, `hcq compile`); none was made for this binary and "
                    "the kernel cache (%s) has none (entry %s.bin)", id, hcq_cache_dir(), key.hex);
}

/* code at va equals e's, bytes the loader relocates aside */
static bool same_code(const cc_twin_entry *e, const uint8_t *at)
{
    if (!e->skip) return !memcmp(at, e->code, e->code_size);
    for (size_t i = 0; i < e->code_size; i++)
        if (!e->skip[i] && at[i] != e->code[i]) return false;
    return true;
}

bool cc_twin_matches(const cc_twin_entry *e, uint64_t va) { return same_code(e, (const uint8_t *)(uintptr_t)va); }

const cc_twin_entry *cc_twin_find_if(uint64_t va, cc_twin_readable_fn readable, void *ctx, cc_twin_accept_fn accept,
                                     void *actx)
{
    const uint8_t *at = (const uint8_t *)(uintptr_t)va;
    const cc_twin_entry *hit = NULL;
    pthread_rwlock_rdlock(&lock);
    if (readable(ctx, va, CC_TWIN_PREFIX))
        for (cc_twin_entry *e = buckets[bucket_of(at)]; e && !hit; e = e->next)
            if (readable(ctx, va, e->code_size) && same_code(e, at) && (!accept || accept(e, actx))) hit = e;
    for (cc_twin_entry *e = shorter; e && !hit; e = e->next)
        if (readable(ctx, va, e->code_size) && same_code(e, at) && (!accept || accept(e, actx))) hit = e;
    pthread_rwlock_unlock(&lock);
    return hit;
}

const cc_twin_entry *cc_twin_find(uint64_t va, cc_twin_readable_fn readable, void *ctx)
{
    return cc_twin_find_if(va, readable, ctx, NULL, NULL);
}

hcq_status cc_twin_register(const void *bin, size_t size)
{
    uint8_t sha[32];
    cc_sha256_once(bin, size, sha);
    if (known(sha)) return HCQ_OK;
    return add(sha, bin, size, NULL, 0, "none: the mock's executor runs the machine code");
}
