#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Every environment variable hcq reads is read here, once, so the list of
 * knobs is in one place (and in the README's table). */
static base_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void env_read(void)
{
    base_env e = {0};
    e.debug = env_int("HCQ_DEBUG", 0);
    e.device = env_str("HCQ_DEVICE");
    e.mock = env_int("HCQ_MOCK", 0);
    e.trace = env_int("HCQ_TRACE", 0);
    e.cache_dir = env_str("HCQ_CACHE_DIR");
    e.cache_only = env_int("HCQ_CACHE_ONLY", 0);
    e.clang = env_str("HCQ_CLANG");
    e.ptxas = env_str("HCQ_PTXAS");
    int ms = env_int("HCQ_TIMEOUT_MS", 0);
    e.timeout_ns = ms > 0 ? (uint64_t)ms * 1000000ull : HCQ_DEFAULT_TIMEOUT_NS;
    e.mock_dump = env_str("HCQ_MOCK_DUMP");
    e.mock_sched = env_str("HCQ_MOCK_SCHED");
    e.mock_config = env_str("HCQ_MOCK_CONFIG");
    e.dump = env_str("HCQ_DUMP");
    e.profile = env_str("HCQ_PROFILE");
    e.cpu_threads = env_int("HCQ_CPU_THREADS", 0);
    e.path = env_str("PATH");
    e.home = env_str("HOME");
    e.xdg_cache_home = env_str("XDG_CACHE_HOME");
    e.cpu_target = env_str("HCQ_CPU_TARGET");
    e.mock_shader = env_str("HCQ_MOCK_SHADER");
    e.alloc_cache = env_int("HCQ_ALLOC_CACHE", 1);
    e.kernarg_ring_kib = (uint32_t)env_int("HCQ_KERNARG_RING_KIB", 4096);
    e.staging_chunk_kib = (uint32_t)env_int("HCQ_STAGING_CHUNK_KIB", 2048);
    e.staging_slots = (uint32_t)env_int("HCQ_STAGING_SLOTS", 8);
    const char *ts = env_str("HCQ_TIMELINE_START");
    e.timeline_start = ts ? strtoull(ts, NULL, 0) : 0;
    e.ring_shift = (uint32_t)env_int("HCQ_RING_SHIFT", 0);
    e.status_dir = env_str("HCQ_STATUS_DIR");
    env = e;
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

int hcq_debug_level(void) { return base_env_get()->debug; }
