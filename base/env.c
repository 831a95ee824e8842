#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Every environment variable hcq reads is read here, once, so the list of
 * knobs is in one place (and in the README's table). Numeric variables are
 * range-checked: a value that is not a number, or lies outside what the
 * variable can mean, is refused (the default is used and the first such
 * refusal is kept for base_env_check, which hcq_device_open and hcq_compile
 * call), because a size that wraps or a typo that silently turns into 0 is
 * worse than an error. */
static base_env env;
/* HCQ_SPIN_US for threads that wait while a test reloads the environment
 * (engines read it at every idle spell; the env struct is rewritten whole) */
static _Atomic uint64_t spin_ns_now;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char env_error[512];

static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* NAME's value as an unsigned integer in [lo, hi] (decimal, or 0x hex);
 * unset or empty: def. Anything else is refused with `what` saying what the
 * variable holds. */
static uint64_t env_num(const char *name, uint64_t def, uint64_t lo, uint64_t hi, const char *what)
{
    const char *v = env_str(name);
    if (!v) return def;
    const char *p = v;
    while (isspace((unsigned char)*p)) p++;
    char *end = NULL;
    errno = 0;
    /* a negative number is a number, out of every variable's range; strtoull
     * would wrap it, so its digits are read past the sign */
    bool negative = *p == '-';
    const char *digits = negative ? p + 1 : p;
    unsigned long long x = isdigit((unsigned char)*digits) ? strtoull(digits, &end, 0) : 0;
    bool number = end && end != digits && (errno == 0 || errno == ERANGE);
    if (number)
        while (isspace((unsigned char)*end)) end++;
    number = number && !*end;
    if (number && !negative && errno == 0 && x >= lo && x <= hi) return x;
    if (!env_error[0])
        snprintf(env_error, sizeof env_error, "%s=%s is %s: it holds %s, from %llu to %llu. Fix or unset it", name, v,
                 number ? "out of range" : "not a number", what, (unsigned long long)lo, (unsigned long long)hi);
    return def;
}

/* The variables that hold one of a few words. A value outside its row is
 * refused like a bad number (the default is used, base_env_check reports
 * it) with the accepted words in the message: `HCQ_CPU_TARGET=IR` or
 * `HCQ_MOCK_SHADER=twins` would otherwise fall back to the default without a
 * word. Matching is exact (case included): the words are what the code
 * compares against. A new mode is a new word in its row (and in the
 * README's table of variables). */
#define ENV_MAX_WORDS 8
typedef struct env_words {
    const char *name;
    const char *words[ENV_MAX_WORDS];
    const char *what; /* what the variable chooses, for the message */
} env_words;

static const env_words env_word_table[] = {
    {.name = "HCQ_CPU_TARGET", .words = {"cpu", "ir"}, .what = "how the CPU device runs kernels"},
    {.name = "HCQ_MOCK_SHADER", .words = {"ir", "twin", "isa", "none"}, .what = "how the mock GPUs run kernels"},
    {.name = "HCQ_MOCK_SHADER_NV", .words = {"ir", "twin", "isa", "none"}, .what = "how the NV mock GPUs run kernels"},
    {.name = "HCQ_MOCK_SHADER_AMD", .words = {"ir", "twin", "isa", "none"}, .what = "how the AMD mock GPUs run kernels"},
    {.name = "HCQ_MOCK_CHECK", .words = {"memcheck"}, .what = "what the executors check as kernels run"},
};

static const env_words *env_words_row(const char *name)
{
    for (size_t i = 0; i < sizeof env_word_table / sizeof *env_word_table; i++)
        if (!strcmp(env_word_table[i].name, name)) return &env_word_table[i];
    return NULL;
}

/* NAME's value if it is one of its row's words; unset or empty: NULL (the
 * default); anything else is refused. */
static const char *env_word(const char *name)
{
    const char *v = env_str(name);
    const env_words *row = env_words_row(name);
    if (!v || !row) return v;
    char list[256] = "";
    for (int i = 0; i < ENV_MAX_WORDS && row->words[i]; i++) {
        if (!strcmp(v, row->words[i])) return row->words[i];
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s`%s`", i ? ", " : "", row->words[i]);
    }
    if (!env_error[0])
        snprintf(env_error, sizeof env_error, "%s=%s is not a value it takes: it chooses %s, one of %s (unset: the "
                 "default). Fix or unset it", name, v, row->what, list);
    return NULL;
}

/* HCQ_STATUS_DIR: `off`, or an absolute directory (a relative one would
 * follow each process's working directory, and `hcq top` looks in one
 * place) */
static const char *env_status_dir(void)
{
    const char *v = env_str("HCQ_STATUS_DIR");
    if (!v || !strcmp(v, "off") || v[0] == '/') return v;
    if (!env_error[0])
        snprintf(env_error, sizeof env_error, "HCQ_STATUS_DIR=%s is neither `off` nor an absolute directory: it says "
                 "where open devices publish their progress for `hcq top`. Fix or unset it", v);
    return NULL;
}

/* HCQ_MOCK_SHADER's word (env_word checked it) as the mock reads it */
static const struct {
    const char *name;
    int kind;
} mock_shaders[] = {
    {"ir", BASE_MOCK_SHADER_IR},     /* kernel IR on the interpreter */
    {"twin", BASE_MOCK_SHADER_TWIN}, /* host twins of real binaries, even without the tools */
    {"isa", BASE_MOCK_SHADER_ISA},   /* the machine code on the vendor mock's executor */
    {"none", BASE_MOCK_SHADER_NONE}, /* no kernel runs: launches complete at once (filling kernel caches) */
};

static int mock_shader_kind(const char *v)
{
    if (!v) return BASE_MOCK_SHADER_DEFAULT;
    for (size_t i = 0; i < sizeof mock_shaders / sizeof mock_shaders[0]; i++)
        if (!strcmp(v, mock_shaders[i].name)) return mock_shaders[i].kind;
    return BASE_MOCK_SHADER_DEFAULT;
}

static void env_read(void)
{
    base_env e = {0};
    env_error[0] = 0;
    e.debug = (int)env_num("HCQ_DEBUG", 0, 0, 4, "a debug level");
    e.device = env_str("HCQ_DEVICE");
    e.mock = (int)env_num("HCQ_MOCK", 0, 0, 1, "0 or 1");
    e.trace = (int)env_num("HCQ_TRACE", 0, 0, 1, "0 or 1");
    e.cache_dir = env_str("HCQ_CACHE_DIR");
    e.cache_only = (int)env_num("HCQ_CACHE_ONLY", 0, 0, 1, "0 or 1");
    e.clang = env_str("HCQ_CLANG");
    e.ptxas = env_str("HCQ_PTXAS");
    e.nvdisasm = env_str("HCQ_NVDISASM");
    /* 0 (or unset): the default; at most a day */
    uint64_t ms = env_num("HCQ_TIMEOUT_MS", 0, 0, 86400000, "milliseconds");
    e.timeout_ns = ms ? ms * 1000000ull : HCQ_DEFAULT_TIMEOUT_NS;
    uint64_t cs = env_num("HCQ_COMPILE_TIMEOUT_S", 0, 0, 86400, "seconds");
    e.compile_timeout_ns = (cs ? cs : BASE_DEFAULT_COMPILE_TIMEOUT_S) * 1000000000ull;
    e.mock_dump = env_str("HCQ_MOCK_DUMP");
    e.mock_sched = env_str("HCQ_MOCK_SCHED");
    e.mock_config = env_str("HCQ_MOCK_CONFIG");
    e.dump = env_str("HCQ_DUMP");
    e.profile = env_str("HCQ_PROFILE");
    e.cpu_threads = (int)env_num("HCQ_CPU_THREADS", 0, 0, 1024, "a thread count (0: one per core)");
    e.beam = (int)env_num("HCQ_BEAM", 0, 0, 64, "a beam width (0: no kernel plan search)");
    e.beam_budget_ms = (uint32_t)env_num("HCQ_BEAM_BUDGET_MS", 10000, 100, 3600000, "milliseconds");
    e.path = env_str("PATH");
    e.home = env_str("HOME");
    e.xdg_cache_home = env_str("XDG_CACHE_HOME");
    e.tmpdir = env_str("TMPDIR");
    e.cpu_target = env_word("HCQ_CPU_TARGET");
    e.mock_shader = env_word("HCQ_MOCK_SHADER");
    e.mock_shader_kind = mock_shader_kind(e.mock_shader);
    /* per kind: HCQ_MOCK_SHADER_NV / _AMD over HCQ_MOCK_SHADER (each
     * vendor's cheaper path differs: make test runs NV's multi-device
     * suites as twins, AMD's on the executor) */
    e.mock_shader_nv = env_word("HCQ_MOCK_SHADER_NV");
    e.mock_shader_amd = env_word("HCQ_MOCK_SHADER_AMD");
    e.mock_shader_nv_kind = e.mock_shader_nv ? mock_shader_kind(e.mock_shader_nv) : e.mock_shader_kind;
    e.mock_shader_amd_kind = e.mock_shader_amd ? mock_shader_kind(e.mock_shader_amd) : e.mock_shader_kind;
    /* memcheck: bounds of the bytes allocated, shared-memory use */
    e.mock_memcheck = env_word("HCQ_MOCK_CHECK") != NULL;
    e.alloc_cache = (int)env_num("HCQ_ALLOC_CACHE", 1, 0, 1, "0 or 1");
    /* sizes: each bounded so that no product of them wraps (1 GiB at most
     * per ring or slot, 64 slots) */
    e.kernarg_ring_kib = (uint32_t)env_num("HCQ_KERNARG_RING_KIB", 4096, 64, 1u << 20, "KiB");
    e.staging_chunk_kib = (uint32_t)env_num("HCQ_STAGING_CHUNK_KIB", 2048, 4, 1u << 20, "KiB");
    e.staging_slots = (uint32_t)env_num("HCQ_STAGING_SLOTS", 8, 2, 64, "a slot count");
    if ((uint64_t)e.staging_chunk_kib * e.staging_slots > (4ull << 20)) {
        if (!env_error[0])
            snprintf(env_error, sizeof env_error, "HCQ_STAGING_CHUNK_KIB=%u x HCQ_STAGING_SLOTS=%u is %llu MiB of "
                     "staging memory per device; at most 4096 MiB. Lower one of them", e.staging_chunk_kib,
                     e.staging_slots, (unsigned long long)e.staging_chunk_kib * e.staging_slots / 1024);
        e.staging_chunk_kib = 2048;
        e.staging_slots = 8;
    }
    /* the engines' fields must hold 2^32 values past the start */
    e.timeline_start = env_num("HCQ_TIMELINE_START", 0, 0, UINT64_MAX - (1ull << 32), "a timeline value");
    /* 0: the backend's own; backends clamp to what their rings allow */
    e.ring_shift = (uint32_t)env_num("HCQ_RING_SHIFT", 0, 0, 24, "a power of two (0: the default)");
    if (e.ring_shift && e.ring_shift < 5) {
        if (!env_error[0])
            snprintf(env_error, sizeof env_error, "HCQ_RING_SHIFT=%u is too small: rings of fewer than 2^5 dwords "
                     "cannot hold one command. Use 5 to 24, or 0 for the default", e.ring_shift);
        e.ring_shift = 0;
    }
    e.status_dir = env_status_dir();
    e.trace_json = (int)env_num("HCQ_TRACE_JSON", 0, 0, 1, "0 or 1");
    e.trace_streams = (int)env_num("HCQ_TRACE_STREAMS", 0, 0, 1, "0 or 1");
    e.spin_ns = env_num("HCQ_SPIN_US", BASE_DEFAULT_SPIN_US, 0, 100000, "microseconds (0: sleep at once)") * 1000ull;
    env = e;
    atomic_store_explicit(&spin_ns_now, e.spin_ns, memory_order_relaxed);
}

uint64_t base_env_spin_ns(void)
{
    pthread_once(&env_once, env_read);
    return atomic_load_explicit(&spin_ns_now, memory_order_relaxed);
}

const base_env *base_env_get(void)
{
    pthread_once(&env_once, env_read);
    return &env;
}

void base_env_reload(void)
{
    pthread_once(&env_once, env_read);
    env_read();
}

hcq_status base_env_check(const char *fn)
{
    base_env_get();
    if (!env_error[0]) return HCQ_OK;
    return base_err(HCQ_EINVAL, "%s: %s", fn, env_error);
}

int hcq_debug_level(void) { return base_env_get()->debug; }
