/* A hostile environment: numeric HCQ_* variables that are not numbers or
 * out of range (refused with a message, never a wrapped size), a driver
 * that answers EAGAIN forever (bounded, sleeping), a compiler that never
 * finishes (killed at HCQ_COMPILE_TIMEOUT_S), and kernel caches that are
 * full, hold FIFOs, or belong to someone else. Criterion runs each test in
 * a process of its own, so setenv stays in the test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/base.h"
#include "compiler/cc.h"
#include "drivers/sys.h"
#include "hcqtest.h"

TestSuite(hostile_env, .timeout = 120);

/* every numeric variable, with values it must refuse */
static const struct {
    const char *name, *bad[4];
} numeric[] = {
    {"HCQ_DEBUG", {"verbose", "5", "-1", "2x"}},
    {"HCQ_MOCK", {"yes", "2", "-1", "1.5"}},
    {"HCQ_TRACE", {"on", "3", NULL}},
    {"HCQ_TIMEOUT_MS", {"forever", "-5", "99999999999", "1e3"}},
    {"HCQ_COMPILE_TIMEOUT_S", {"never", "-1", "100000", NULL}},
    {"HCQ_CPU_THREADS", {"all", "-2", "100000", NULL}},
    {"HCQ_BEAM", {"wide", "-1", "65", NULL}},
    {"HCQ_BEAM_BUDGET_MS", {"long", "99", "3600001", NULL}},
    {"HCQ_ALLOC_CACHE", {"off", "2", NULL}},
    {"HCQ_CACHE_ONLY", {"yes", "2", NULL}},
    {"HCQ_KERNARG_RING_KIB", {"big", "0", "63", "4294967297"}},
    {"HCQ_STAGING_CHUNK_KIB", {"x", "0", "3", "4294967297"}},
    {"HCQ_STAGING_SLOTS", {"many", "1", "65", "-1"}},
    {"HCQ_TIMELINE_START", {"zero", "-1", "18446744073709551615", NULL}},
    {"HCQ_RING_SHIFT", {"x", "4", "25", NULL}},
};

Test(hostile_env, nonsense_in_numeric_variables_is_refused_with_a_message)
{
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
        for (int j = 0; j < 4 && numeric[i].bad[j]; j++) {
            setenv(numeric[i].name, numeric[i].bad[j], 1);
            base_env_reload();
            cr_assert_null(hcq_device_open("CPU"), "%s=%s opened a device", numeric[i].name, numeric[i].bad[j]);
            cr_assert_eq(hcq_error_status(), HCQ_EINVAL, "%s=%s: %s", numeric[i].name, numeric[i].bad[j],
                         hcq_error_message());
            T_MSG_HAS(numeric[i].name);
            T_MSG_HAS(numeric[i].bad[j]);
            hcq_binary *b = NULL;
            hcq_kernel *k = t_k_inc();
            T_FAILS(hcq_compile(k, "ir", &b), HCQ_EINVAL);
            hcq_kernel_destroy(k);
            unsetenv(numeric[i].name);
        }
    }
    base_env_reload();
    T_OK(base_env_check("test"));
}

Test(hostile_env, good_values_are_taken)
{
    setenv("HCQ_STAGING_CHUNK_KIB", " 64", 1);
    setenv("HCQ_STAGING_SLOTS", "0x10", 1);
    setenv("HCQ_TIMEOUT_MS", "0", 1); /* the default */
    setenv("HCQ_DEBUG", "", 1);       /* empty is unset */
    base_env_reload();
    T_OK(base_env_check("test"));
    const base_env *e = base_env_get();
    cr_assert_eq(e->staging_chunk_kib, 64u);
    cr_assert_eq(e->staging_slots, 16u);
    cr_assert_eq(e->timeout_ns, HCQ_DEFAULT_TIMEOUT_NS);
    cr_assert_eq(e->debug, 0);
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    cr_assert_eq(hcq_device_get_props(d)->staging_bytes, 64u * 1024 * 16);
    T_OK(hcq_device_close(d));
}

/* The sizes that used to wrap: refused as a product too, and a copy
 * through the largest staging accepted moves every byte. */
Test(hostile_env, staging_sizes_that_would_wrap_are_refused)
{
    setenv("HCQ_STAGING_CHUNK_KIB", "1048576", 1);
    setenv("HCQ_STAGING_SLOTS", "64", 1);
    base_env_reload();
    cr_assert_null(hcq_device_open("CPU"));
    cr_assert_eq(hcq_error_status(), HCQ_EINVAL);
    T_MSG_HAS("HCQ_STAGING_CHUNK_KIB=1048576 x HCQ_STAGING_SLOTS=64");
    setenv("HCQ_STAGING_CHUNK_KIB", "4", 1);
    setenv("HCQ_STAGING_SLOTS", "2", 1);
    base_env_reload();
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    enum { N = 40000 };
    static uint8_t in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (uint8_t)(i * 7 + 1);
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(d, N, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, in, N));
    T_OK(hcq_buffer_copyout(out, b, 0, N));
    cr_assert(memcmp(in, out, N) == 0);
    T_OK(hcq_device_close(d));
}

/* ** a driver answering EAGAIN */
static int calls;
static int always_again(void *arg)
{
    (void)arg;
    calls++;
    return -EAGAIN;
}
static int again_then_ok(void *arg)
{
    (void)arg;
    return ++calls < 5 ? -EAGAIN : 7;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(hostile_env, eagain_forever_gives_up_at_the_timeout_without_spinning)
{
    setenv("HCQ_TIMEOUT_MS", "400", 1);
    base_env_reload();
    calls = 0;
    uint64_t t0 = hcq_now_ns();
    double c0 = cpu_seconds();
    int r = sys_retry(always_again, NULL);
    double wall = (double)(hcq_now_ns() - t0) / 1e9, cpu = cpu_seconds() - c0;
    cr_assert_eq(r, -EAGAIN);
    cr_assert_geq(wall, 0.39, "gave up after %.3f s", wall);
    cr_assert_lt(wall, 2.0, "gave up after %.3f s, not at the 400 ms timeout", wall);
    cr_assert_lt(cpu, wall / 4, "%.3f s of CPU in %.3f s: it spun", cpu, wall);
    cr_assert_lt(calls, 1000, "%d calls in %.3f s", calls, wall);
    calls = 0;
    cr_assert_eq(sys_retry(again_then_ok, NULL), 7, "a driver busy for a moment is waited for");
}

/* ** the compiler and the kernel cache */

static char dir[T_TMP_PATH];

/* a fresh private directory for the test's cache */
static void fresh_dir(void)
{
    t_tmpdir(dir, sizeof dir, "hcq-test-hostile");
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("HCQ_CACHE_DIR", cache, 1);
    base_env_reload();
}

static void rm_dir(void)
{
    if (!dir[0]) return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s 2>/dev/null; rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void need_clang(void)
{
    if (hcq_toolchain_clang(NULL, NULL) != HCQ_OK) cr_skip_test("no clang: %s", hcq_error_message());
}

/* files in d, not counting . and .. */
static int entries(const char *d)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A %s 2>/dev/null | wc -l", d);
    FILE *p = popen(cmd, "r");
    int n = -1;
    cr_assert_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* A compiler that never finishes (it answers --version, then sleeps in a
 * child of its own): killed with its child at HCQ_COMPILE_TIMEOUT_S, and
 * the error names the kernel. */
Test(hostile_env, a_stuck_compiler_is_killed_at_the_timeout, .init = fresh_dir, .fini = rm_dir)
{
    char script[400], pidfile[400];
    snprintf(script, sizeof script, "%s/clang-stuck", dir);
    snprintf(pidfile, sizeof pidfile, "%s/child.pid", dir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'clang version 22.1.0'; exit 0; fi\n"
               "sleep 600 &\necho $! > %s\nwait\n", pidfile);
    fclose(f);
    chmod(script, 0755);
    setenv("HCQ_CLANG", script, 1);
    setenv("HCQ_COMPILE_TIMEOUT_S", "1", 1);
    base_env_reload();
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    uint64_t t0 = hcq_now_ns();
    T_FAILS(hcq_compile(k, "cpu", &b), HCQ_ECOMPILE);
    double s = (double)(hcq_now_ns() - t0) / 1e9;
    hcq_kernel_destroy(k);
    cr_assert_lt(s, 10.0, "the compile returned after %.1f s", s);
    T_MSG_HAS("'inc'");
    T_MSG_HAS("HCQ_COMPILE_TIMEOUT_S=1");
    T_MSG_HAS("killed");
    /* the compiler's child went with it */
    f = fopen(pidfile, "r");
    cr_assert_not_null(f);
    int child = 0;
    cr_assert_eq(fscanf(f, "%d", &child), 1);
    fclose(f);
    bool gone = false;
    for (int i = 0; i < 50 && !gone; i++) {
        /* gone, or dead and not yet reaped (a zombie: state Z) */
        char path[64], stat[256] = "";
        snprintf(path, sizeof path, "/proc/%d/stat", child);
        FILE *sf = fopen(path, "r");
        if (sf && fgets(stat, sizeof stat, sf)) {
            const char *paren = strrchr(stat, ')');
            gone = paren && paren[1] == ' ' && paren[2] == 'Z';
        } else {
            gone = true;
        }
        if (sf) fclose(sf);
        if (!gone) base_sleep_ns(20000000);
    }
    cr_assert(gone, "the compiler's child %d still runs", child);
}

/* A fused chain of max and add, 66 links, compiles in well under the
 * timeout (the old helper's early returns made clang's time grow about 2x
 * per link), and runs bit for bit as the interpreter does, NaNs and
 * signed zeros included. */
Test(hostile_env, long_max_chains_compile_quickly_and_exactly, .init = fresh_dir, .fini = rm_dir)
{
    need_clang();
    setenv("HCQ_COMPILE_TIMEOUT_S", "120", 1);
    base_env_reload();
    hcq_kernel *k = hcq_kernel_create("max_chain");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_F32), in = hcq_ir_param_buffer(k, HCQ_F32);
    hcq_ir_ref i = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0);
    hcq_ir_ref v = hcq_ir_load(k, in, i);
    for (int l = 0; l < 66; l++) {
        v = hcq_ir_binary(k, HCQ_OP_MAX, v, hcq_ir_const_float(k, HCQ_F32, l % 3 == 0 ? -0.0 : 0.25 * l));
        v = hcq_ir_binary(k, HCQ_OP_ADD, v, hcq_ir_const_float(k, HCQ_F32, l % 2 ? -1.0 : 0.5));
    }
    hcq_ir_store(k, out, i, v);
    hcq_binary *b = NULL;
    uint64_t t0 = hcq_now_ns();
    T_OK(hcq_compile(k, "cpu", &b));
    double s = (double)(hcq_now_ns() - t0) / 1e9;
    cr_assert_lt(s, 60.0, "66 links took %.1f s to compile", s);
    hcq_binary_free(b);
    /* the result agrees with the interpreter on special values */
    hcq_device *d = hcq_device_open("CPU");
    cr_assert_not_null(d, "%s", hcq_error_message());
    hcq_program *p = hcq_program_from_kernel(d, k);
    cr_assert_not_null(p, "%s", hcq_error_message());
    enum { N = 8 };
    float host[N] = {__builtin_nanf(""), -0.0f, 0.0f, -1e30f, 1e30f, -__builtin_inff(), __builtin_inff(), 3.5f};
    float got[N], want[N];
    hcq_buffer *bi = t_buffer_from(d, host, sizeof host);
    hcq_buffer *bo = T_NONNULL(hcq_buffer_alloc(d, sizeof host, HCQ_MEM_DEVICE));
    hcq_arg a[2] = {hcq_arg_buffer(bo), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(1, N)));
    t_read(bo, got, sizeof got);
    uint8_t ka[16];
    uint64_t po = (uint64_t)(uintptr_t)want, pi = (uint64_t)(uintptr_t)host;
    memcpy(ka, &po, 8);
    memcpy(ka + 8, &pi, 8);
    hcq_interp_launch il = {.kernargs = ka, .kernarg_size = 16, .num_groups = {1, 1, 1}, .local_size = {N, 1, 1}};
    T_OK(hcq_interp_run(k, &il));
    cr_assert(memcmp(got, want, sizeof got) == 0, "compiled and interpreted results differ");
    T_OK(hcq_device_close(d));
    hcq_kernel_destroy(k);
}

/* The cache cannot be written (its path runs through a file, which no
 * user, root included, can make a directory in; a full disk is the same to
 * new files): kernels still compile, and the binary says why it was not
 * cached. Compiling happens under TMPDIR, never in the cache directory. */
Test(hostile_env, an_unwritable_cache_only_stops_caching, .init = fresh_dir, .fini = rm_dir)
{
    need_clang();
    const char *cache = getenv("HCQ_CACHE_DIR");
    cr_assert_eq(mkdir(cache, 0700), 0);
    char tmp[300], blocked[400];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    cr_assert_eq(mkdir(tmp, 0700), 0);
    setenv("TMPDIR", tmp, 1);
    base_env_reload();
    char built[4096];
    T_OK(cc_make_temp_dir(built, sizeof built));
    cr_assert(strncmp(built, cache, strlen(cache)) != 0, "a build directory %s inside the cache %s", built, cache);
    cr_assert(strncmp(built, tmp, strlen(tmp)) == 0, "the build directory %s is not under TMPDIR", built);
    cc_remove_temp_dir(built);
    snprintf(blocked, sizeof blocked, "%s/file", dir);
    FILE *f = fopen(blocked, "w");
    cr_assert_not_null(f);
    fclose(f);
    strcat(blocked, "/cache");
    setenv("HCQ_CACHE_DIR", blocked, 1);
    base_env_reload();
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "cpu", &b));
    cr_assert(b->cache_note[0], "the binary says it was not cached");
    cr_assert(strstr(b->cache_note, blocked), "%s", b->cache_note);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    cr_assert_eq(entries(tmp), 0, "the build directory was removed");
}

/* A FIFO where an entry belongs: a miss (compiled again), never an open
 * that blocks; the next put replaces it with the entry. */
Test(hostile_env, a_fifo_at_an_entry_is_a_miss, .init = fresh_dir, .fini = rm_dir, .timeout = 60)
{
    need_clang();
    hcq_kernel *k = t_k_inc();
    hcq_binary *b = NULL;
    T_OK(hcq_compile(k, "cpu", &b));
    hcq_binary_free(b);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd %s && for f in *.bin; do rm \"$f\" && mkfifo \"$f\"; done", getenv("HCQ_CACHE_DIR"));
    cr_assert_eq(system(cmd), 0);
    T_OK(hcq_compile(k, "cpu", &b));
    cr_assert(!b->from_cache);
    hcq_binary_free(b);
    T_OK(hcq_compile(k, "cpu", &b));
    cr_assert(b->from_cache, "the FIFO was replaced by the entry");
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

/* A cache directory others can write (or under a parent others can write
 * without the sticky bit) is refused: a valid entry planted there under
 * another kernel's key is not loaded, nothing is written, and compiling
 * still works. */
Test(hostile_env, an_untrusted_cache_is_never_used, .init = fresh_dir, .fini = rm_dir)
{
    need_clang();
    const char *cache = getenv("HCQ_CACHE_DIR");
    hcq_kernel *inc = t_k_inc(), *add1 = t_k_add1();
    hcq_binary *b = NULL;
    /* the planted entry: inc's binary under add1's key */
    T_OK(hcq_compile(inc, "cpu", &b));
    hcq_binary_free(b);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cd %s && mv *.bin ../inc.entry", cache);
    cr_assert_eq(system(cmd), 0);
    T_OK(hcq_compile(add1, "cpu", &b));
    hcq_binary_free(b);
    snprintf(cmd, sizeof cmd, "cd %s && for f in *.bin; do cp ../inc.entry \"$f\"; done", cache);
    cr_assert_eq(system(cmd), 0);
    /* trusted, the planted entry would be taken (that is what it tests) */
    T_OK(hcq_compile(add1, "cpu", &b));
    cr_assert(b->from_cache);
    hcq_binary_free(b);
    const char *why[] = {"writable by others", "writable by others without the sticky bit"};
    for (int c = 0; c < 2; c++) {
        /* a new path each time: a directory is judged when first seen */
        char moved[400];
        snprintf(moved, sizeof moved, "%s/c%d", dir, c);
        if (c == 0) {
            snprintf(cmd, sizeof cmd, "cp -a %s %s && chmod 777 %s", cache, moved, moved);
        } else {
            snprintf(cmd, sizeof cmd, "mkdir %s && chmod 777 %s && cp -a %s %s/cache", moved, moved, cache, moved);
            strcat(moved, "/cache");
        }
        cr_assert_eq(system(cmd), 0);
        setenv("HCQ_CACHE_DIR", moved, 1);
        base_env_reload();
        int before = entries(moved);
        T_OK(hcq_compile(add1, "cpu", &b));
        cr_assert(!b->from_cache, "%s: the planted entry was loaded", why[c]);
        cr_assert(strstr(b->cache_note, why[c]), "%s", b->cache_note);
        cr_assert(strstr(b->cache_note, "HCQ_CACHE_DIR"), "%s", b->cache_note);
        hcq_binary_free(b);
        cr_assert_eq(entries(moved), before, "nothing was written there");
    }
    char why_dir[512];
    cr_assert(cc_cache_dir_trusted(cache, why_dir, sizeof why_dir), "%s", why_dir);
    /* another user's directory (the /tmp/hcq-cache-$UID fallback made
     * first by someone else): only root can make one to test with */
    if (geteuid() == 0) {
        char theirs[400];
        snprintf(theirs, sizeof theirs, "%s/theirs", dir);
        snprintf(cmd, sizeof cmd, "cp -a %s %s && chown -R 65534 %s", cache, theirs, theirs);
        cr_assert_eq(system(cmd), 0);
        cr_assert(!cc_cache_dir_trusted(theirs, why_dir, sizeof why_dir));
        cr_assert(strstr(why_dir, "owned by uid 65534"), "%s", why_dir);
        setenv("HCQ_CACHE_DIR", theirs, 1);
        base_env_reload();
        T_OK(hcq_compile(add1, "cpu", &b));
        cr_assert(!b->from_cache, "another user's entry was loaded");
        hcq_binary_free(b);
    }
    cr_assert(!cc_cache_dir_trusted("/tmp", why_dir, sizeof why_dir), "/tmp is root's, not ours");
    hcq_kernel_destroy(inc);
    hcq_kernel_destroy(add1);
}

/* hcq compile --cache-dir DIR that cannot be written: it says why and
 * exits non-zero (it used to print "compiled" and write nothing). */
Test(hostile_env, hcq_compile_fails_loudly_when_it_cannot_fill_the_cache, .init = fresh_dir, .fini = rm_dir,
     .timeout = 120)
{
    need_clang();
    const char *bin = getenv("HCQ_TEST_HCQ_BIN") ? getenv("HCQ_TEST_HCQ_BIN") : "build/hcq";
    char ro[300], cmd[1200], out[8192];
    /* a path through a file: no user can make it a directory */
    snprintf(ro, sizeof ro, "%s/file", dir);
    FILE *f = fopen(ro, "w");
    cr_assert_not_null(f);
    fclose(f);
    strcat(ro, "/cache");
    snprintf(cmd, sizeof cmd, "%s compile --target cpu --cache-dir %s 2>&1", bin, ro);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    cr_assert_neq(st, 0, "exit status 0: %s", out);
    cr_assert(strstr(out, "not written to the cache") && strstr(out, ro), "%s", out);
    /* and a writable one is filled */
    snprintf(cmd, sizeof cmd, "%s compile --target cpu --cache-dir %s/ok >/dev/null 2>&1", bin, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(ro, sizeof ro, "%s/ok", dir);
    cr_assert_gt(entries(ro), 0);
}
