/* The target table and the public compile API on top of it. */
#include "compiler/cc.h"
#include "compiler/mma.h"
#include "compiler/nv_chips.h"
#include "compiler/target_amd.h"
#include "compiler/target_nv.h"

#include <stdlib.h>
#include <string.h>

/* One row per target; see target.h for how to add one. */
static const cc_target targets[] = {
    {"cpu", CC_BIN_HOST_SO, "c", cc_cpu_render, cc_cpu_compile, NULL},
    {"ir", CC_BIN_IR_ELF, "ir listing", cc_ir_render, cc_ir_compile, NULL},
};

const cc_target *cc_target_at(size_t i)
{
    if (i < BASE_ARRAY_LEN(targets)) return &targets[i];
    i -= BASE_ARRAY_LEN(targets);
    if (i < cc_nv_target_count) return &cc_nv_targets[i];
    i -= cc_nv_target_count;
    return cc_amd_target_at(i);
}

const cc_target *cc_target_find(const char *name)
{
    const cc_target *t;
    for (size_t i = 0; name && (t = cc_target_at(i)); i++)
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

bool hcq_target_known(const char *target) { return cc_target_find(target) != NULL; }

/* ** matrix multiply-accumulate kinds per target, from the arch rows
 * (nv_chips.c, amd_chips.c); the ir target runs every kind but has no
 * hardware to prefer, so it lists none */
static const hcq_mma_kind *target_mma(const cc_target *t)
{
    uint32_t sm = 0, param_base = 0;
    if (t->kind == CC_BIN_AMD_CO) return ((const amd_target_arch *)t->arch)->mma;
    if (t->kind == CC_BIN_CUBIN && cc_nv_target_abi(t->name, &sm, &param_base)) {
        const nv_family *f = nv_family_for_target(sm);
        return f ? f->mma : NULL;
    }
    return NULL;
}

unsigned hcq_target_mma_kinds(const char *target, hcq_mma_kind *out, unsigned max)
{
    const cc_target *t = cc_target_find(target);
    const hcq_mma_kind *list = t ? target_mma(t) : NULL;
    unsigned n = 0;
    for (; list && n < 4 && list[n] != HCQ_MMA_NONE; n++)
        if (out && n < max) out[n] = list[n];
    return n;
}

/* HCQ_ENOTSUP for the first MMA whose kind the target lacks */
static hcq_status check_mma(const cc_target *t, const hcq_kernel *k, const char *fn)
{
    if (t->render == cc_ir_render && t->kind == CC_BIN_IR_ELF) return HCQ_OK; /* the interpreter runs every kind */
    hcq_mma_kind have[8];
    unsigned n = hcq_target_mma_kinds(t->name, have, 8);
    for (uint32_t i = 0; i < k->nops; i++) {
        if (k->ops[i].op != HCQ_OP_MMA) continue;
        bool ok = false;
        for (unsigned j = 0; j < n; j++) ok |= have[j] == (hcq_mma_kind)k->ops[i].arg;
        if (ok) continue;
        char list[160] = "";
        size_t len = 0;
        for (unsigned j = 0; j < n && len < sizeof list; j++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "", cc_mma_kind_of(have[j])->info.name);
        return base_err(HCQ_ENOTSUP, "%s: kernel '%s' op %u (mma %s): target %s has no such matrix operation (%s%s)",
                        fn, k->name, i, cc_mma_kind_of((unsigned)k->ops[i].arg)->info.name, t->name,
                        n ? "it has: " : "it has none", list);
    }
    return HCQ_OK;
}

static hcq_status unknown(const char *fn, const char *name)
{
    char list[256] = "";
    size_t len = 0;
    const cc_target *t;
    for (size_t i = 0; (t = cc_target_at(i)) && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", t->name);
    return base_err(HCQ_EINVAL, "%s: unknown target '%s'; this build knows: %s", fn, name ? name : "(null)", list);
}

hcq_status hcq_render(const hcq_kernel *k, const char *target, char **source_out)
{
    if (!k || !source_out) return base_err(HCQ_EINVAL, "hcq_render: NULL %s", k ? "source_out" : "kernel");
    const cc_target *t = cc_target_find(target);
    if (!t) return unknown("hcq_render", target);
    if (!t->render) return base_err(HCQ_ENOTSUP, "hcq_render: target '%s' has no source form", t->name);
    hcq_status st = hcq_kernel_verify(k);
    if (st) return base_err_prefix(st, "hcq_render");
    if ((st = check_mma(t, k, "hcq_render"))) return st;
    return t->render(t, k, source_out);
}

hcq_status hcq_compile(const hcq_kernel *k, const char *target, hcq_binary **out)
{
    if (!k || !out) return base_err(HCQ_EINVAL, "hcq_compile: NULL %s", k ? "out" : "kernel");
    const cc_target *t = cc_target_find(target);
    if (!t) return unknown("hcq_compile", target);
    hcq_status st = base_env_check("hcq_compile");
    if (st) return st;
    st = hcq_kernel_verify(k);
    if (st) return base_err_prefix(st, "hcq_compile");
    if ((st = check_mma(t, k, "hcq_compile"))) return st;
    hcq_binary *b = NULL;
    if ((st = t->compile(t, k, &b))) return st;
    /* targets that carry IR (ir, mock-*) have no source to show at
     * HCQ_DEBUG=3 (cc_compile_with_clang prints the others'): their IR */
    if (hcq_debug_level() >= 3 && t->render == cc_ir_render) {
        char *ir = hcq_kernel_dump(k);
        if (ir) fprintf(stderr, "hcq[3] IR of kernel '%s' for %s:\n%s\n", k->name, t->name, ir);
        free(ir);
    }
    *out = b;
    return HCQ_OK;
}

hcq_binary *cc_binary_new(const void *data, size_t size, const char *target, const char *compiler)
{
    hcq_binary *b = base_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->data = malloc(size ? size : 1);
    if (!b->data) {
        free(b);
        base_err(HCQ_ENOMEM, "out of memory for a %zu-byte binary", size);
        return NULL;
    }
    memcpy(b->data, data, size);
    b->size = size;
    snprintf(b->target, sizeof b->target, "%s", target);
    snprintf(b->compiler, sizeof b->compiler, "%s", compiler);
    return b;
}

void hcq_binary_free(hcq_binary *b)
{
    if (!b) return;
    free(b->data);
    free(b);
}

/* ** compiling with clang, through the cache */
static void cache_key(const cc_compile_job *job, const cc_clang_info *cl, cc_cache_key *key)
{
    cc_sha256_ctx s;
    cc_key_begin(&s);
    cc_key_add_str(&s, job->target->name);
    cc_key_add_str(&s, job->source);
    cc_key_add_str(&s, cl->path);
    cc_key_add_str(&s, cl->version);
    for (const char *const *a = job->args; a && *a; a++) cc_key_add_str(&s, *a);
    cc_key_add_str(&s, "--post");
    for (const char *const *a = job->post_args; a && *a; a++) cc_key_add_str(&s, *a);
    cc_key_add_str(&s, job->extra_key);
    cc_key_end(&s, key);
}

static hcq_status write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "we");
    if (!f) return base_err(HCQ_EIO, "cannot write %s", path);
    bool ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    return ok ? HCQ_OK : base_err(HCQ_EIO, "cannot write %s (disk full?)", path);
}

static hcq_status slurp(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "re");
    if (!f) return base_err(HCQ_ECOMPILE, "the compiler reported success but wrote no %s", path);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        char *n = realloc(buf, cap * 2);
        if (!n) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = n;
        cap *= 2;
    }
    fclose(f);
    if (!buf) return base_err(HCQ_ENOMEM, "out of memory reading %s", path);
    *data = buf;
    *size = len;
    return HCQ_OK;
}

/* Runs clang in a private temp directory and reads its output. */
static hcq_status run_clang(const cc_compile_job *job, const cc_clang_info *cl, const char *what, void **data,
                            size_t *size)
{
    char dir[4096], src[4200], obj[4200];
    hcq_status st = cc_make_temp_dir(dir, sizeof dir);
    if (st) return base_err_prefix(st, "%s", what);
    snprintf(src, sizeof src, "%s/kernel%s", dir, job->source_ext);
    snprintf(obj, sizeof obj, "%s/kernel.out", dir);
    size_t n = 0, np = 0;
    while (job->args && job->args[n]) n++;
    while (job->post_args && job->post_args[np]) np++;
    const char **argv = calloc(n + np + 5, sizeof *argv);
    if (!argv) st = base_err(HCQ_ENOMEM, "%s: out of memory", what);
    if (!st) st = write_file(src, job->source, strlen(job->source));
    if (!st) {
        size_t a = 0;
        argv[a++] = cl->path;
        for (size_t i = 0; i < n; i++) argv[a++] = job->args[i];
        argv[a++] = src;
        argv[a++] = "-o";
        argv[a++] = obj;
        for (size_t i = 0; i < np; i++) argv[a++] = job->post_args[i];
        argv[a] = NULL;
        st = cc_run_tool(argv, what);
    }
    if (!st) st = slurp(obj, data, size);
    free(argv);
    cc_remove_temp_dir(dir);
    return st;
}

hcq_status cc_compile_with_clang(const cc_compile_job *job, hcq_binary **out)
{
    char what[400];
    snprintf(what, sizeof what, "compiling kernel '%s' for %s", job->kernel->name, job->target->name);
    const cc_clang_info *cl;
    hcq_status st = cc_clang(&cl);
    if (st) return base_err_prefix(st, "%s", what);
    if (hcq_debug_level() >= 3)
        fprintf(stderr, "hcq[3] source of kernel '%s' for %s:\n%s\n", job->kernel->name, job->target->name, job->source);
    cc_cache_key key;
    cache_key(job, cl, &key);
    void *data = NULL;
    size_t size = 0;
    char note[512] = "";
    bool hit = cc_cache_get(&key, &data, &size);
    uint64_t t0 = hcq_now_ns();
    if (hit) {
        BASE_LOG(1, "kernel '%s' for %s: cache hit (%s.bin in %s), built by %s", job->kernel->name, job->target->name,
                 key.hex, hcq_cache_dir(), cl->label);
    } else {
        if ((st = cc_cache_miss_allowed(job->kernel->name, job->target->name))) return st;
        if ((st = run_clang(job, cl, what, &data, &size))) return st;
        BASE_LOG(1, "kernel '%s' for %s: compiled with %s (%s) in %.3f s, cache miss", job->kernel->name,
                 job->target->name, cl->path, cl->label, (double)(hcq_now_ns() - t0) / 1e9);
        if (cc_cache_put(&key, data, size) != HCQ_OK) {
            snprintf(note, sizeof note, "%s", hcq_error_message());
            BASE_LOG(1, "kernel '%s': not cached: %s", job->kernel->name, note);
        }
    }
    hcq_binary *b = cc_binary_new(data, size, job->target->name, cl->label);
    free(data);
    if (!b) return HCQ_ENOMEM;
    b->from_cache = hit;
    snprintf(b->cache_note, sizeof b->cache_note, "%s", note);
    *out = b;
    return HCQ_OK;
}
