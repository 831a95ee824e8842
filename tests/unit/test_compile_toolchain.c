/* The toolchain (finding clang, running it, its errors), the on-disk cache
 * (hits, corrupt entries, two processes at once), the target table and the
 * cpu module loader. Tests that touch the cache point HCQ_CACHE_DIR at a
 * fresh temp directory (Criterion runs each test in its own process). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/render_gpu.h"
#include "test_ir_util.h"
#include "proctest.h"

static char cache_dir[T_TMP_PATH];

static void fresh_cache_dir(void)
{
    t_tmpdir(cache_dir, sizeof cache_dir, "hcq-test-cache");
    setenv("HCQ_CACHE_DIR", cache_dir, 1);
    base_env_reload();
    cr_assert_str_eq(hcq_cache_dir(), cache_dir);
}

static void fresh_cache(void)
{
    tu_need_clang();
    fresh_cache_dir();
}

static void rm_cache(void)
{
    if (cache_dir[0]) cc_remove_temp_dir(cache_dir);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n > t && strcmp(s + n - t, tail) == 0;
}

/* counts entries of the cache dir: .bin files and anything else (but the
 * compiler's .probe memo, written by whichever test first finds clang) */
static void count_entries(int *bins, int *other)
{
    *bins = *other = 0;
    DIR *d = opendir(cache_dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || ends_with(e->d_name, ".probe")) continue;
        if (ends_with(e->d_name, ".bin")) (*bins)++;
        else (*other)++;
    }
    closedir(d);
}

static bool first_bin(char *path, size_t size)
{
    DIR *d = opendir(cache_dir);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
            snprintf(path, size, "%s/%s", cache_dir, e->d_name);
            found = true;
        }
    }
    if (d) closedir(d);
    return found;
}

/* A kernel no earlier run has compiled (its constant is unique), so the
 * first compile is a real clang run. out[gid] = in[gid] * 2 + tag. */
static hcq_kernel *unique_kernel(int32_t tag)
{
    hcq_kernel *k = hcq_kernel_create("tc_unique");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), in = hcq_ir_param_buffer(k, HCQ_I32), gid = tu_gid(k);
    hcq_ir_ref two = hcq_ir_const_int(k, HCQ_I32, 2), t = hcq_ir_const_int(k, HCQ_I32, tag);
    hcq_ir_store(k, out, gid, hcq_ir_mulacc(k, hcq_ir_load(k, in, gid), two, t));
    tu_verify(k);
    return k;
}

static int32_t unique_tag(void) { return (int32_t)((uint32_t)getpid() * 2654435761u ^ (uint32_t)hcq_now_ns()); }

/* compiles, loads and runs k from a binary; true when the results are right */
static bool runs_right(const hcq_binary *b, int32_t tag)
{
    cc_cpu_module m;
    if (cc_cpu_module_load(b->data, b->size, &m) != HCQ_OK) return false;
    int32_t in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = i - 20;
    uint8_t ka[16];
    uint64_t po = (uintptr_t)out, pi = (uintptr_t)in;
    memcpy(ka, &po, 8);
    memcpy(ka + 8, &pi, 8);
    hcq_cpu_dims d = {{2, 1, 1}, {32, 1, 1}};
    m.entry(ka, &d, 0, 2);
    bool ok = m.nparams == 2 && m.kernarg_size == 16 && strcmp(m.name, "tc_unique") == 0;
    for (int i = 0; i < 64; i++) ok = ok && out[i] == (int32_t)((uint32_t)in[i] * 2u + (uint32_t)tag);
    cc_cpu_module_unload(&m);
    return ok;
}

Test(compile_toolchain, finds_the_newest_clang)
{
    const char *path;
    int major;
    tu_need_clang();
    if (getenv("HCQ_CLANG")) cr_skip_test("HCQ_CLANG is set, so no search happens");
    cr_assert_eq(hcq_toolchain_clang(&path, &major), HCQ_OK, "%s", hcq_error_message());
    cr_assert(major >= 14, "major %d", major);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strncmp(base, "clang-", 6) == 0) cr_assert_eq(atoi(base + 6), major, "%s is not version %d", path, major);
    /* no clang-NN on PATH is newer than the one picked */
    const char *p = getenv("PATH");
    char *dirs = strdup(p ? p : ""), *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        for (int v = major + 1; v < 40; v++) {
            char cand[512];
            snprintf(cand, sizeof cand, "%s/clang-%d", dir, v);
            cr_assert(access(cand, X_OK) != 0, "%s is newer than %s", cand, path);
        }
    }
    free(dirs);
    const cc_clang_info *ci;
    cr_assert_eq(cc_clang(&ci), HCQ_OK);
    cr_assert(strstr(ci->version, "clang version"), "%s", ci->version);
    cr_assert(strncmp(ci->label, "clang ", 6) == 0, "%s", ci->label);
}

/* A fake clang that counts its runs; cc_clang in a fresh child process
 * (the clang found is process-wide); the version it took, or "" */
static void fake_clang(const char *path, const char *count, const char *version)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\necho run >> %s\necho '%s (fake)'\n", count, version);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(path, 0700), 0);
}

static void version_in_child(char *out, size_t size)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t kid = fork();
    cr_assert(kid >= 0);
    if (kid == 0) {
        const cc_clang_info *ci;
        const char *v = cc_clang(&ci) == HCQ_OK ? ci->version : "";
        (void)!write(p[1], v, strlen(v));
        _exit(0);
    }
    close(p[1]);
    ssize_t n = read(p[0], out, size - 1);
    out[n > 0 ? n : 0] = 0;
    close(p[0]);
    int ws;
    cr_assert_eq(waitpid(kid, &ws, 0), kid);
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    for (int c; f && (c = fgetc(f)) != EOF;) n += c == '\n';
    if (f) fclose(f);
    return n;
}

/* A process whose kernels are all cached must not run `clang --version`
 * (22 ms of a 25 ms start): what the compiler said is remembered in the
 * cache under the identity of its files, and asked again once they change */
Test(compile_toolchain, compiler_probe_is_remembered_until_the_binary_changes, .fini = rm_cache)
{
    fresh_cache_dir(); /* nothing here looks for clang before the children do */
    char dir[T_TMP_PATH], cc[512], count[512], v[256];
    t_tmpdir(dir, sizeof dir, "hcq-test-fakecc");
    snprintf(cc, sizeof cc, "%s/clang", dir);
    /* not beside it: a new file in the compiler's directory changes its identity too */
    snprintf(count, sizeof count, "%s.runs", dir);
    t_tmp_remove_at_exit(count);
    fake_clang(cc, count, "clang version 99.1.2");
    setenv("HCQ_CLANG", cc, 1);
    base_env_reload();
    version_in_child(v, sizeof v);
    cr_assert_str_eq(v, "clang version 99.1.2 (fake)");
    cr_assert_eq(count_lines(count), 1);
    version_in_child(v, sizeof v); /* from the memo */
    cr_assert_str_eq(v, "clang version 99.1.2 (fake)");
    cr_assert_eq(count_lines(count), 1, "the compiler was run again though its files did not change");
    /* the same size and mtime, other contents: the ctime still moves */
    struct stat sb;
    cr_assert_eq(stat(cc, &sb), 0);
    usleep(20000);
    fake_clang(cc, count, "clang version 99.1.3");
    struct timespec times[2] = {sb.st_atim, sb.st_mtim};
    cr_assert_eq(utimensat(AT_FDCWD, cc, times, 0), 0);
    version_in_child(v, sizeof v);
    cr_assert_str_eq(v, "clang version 99.1.3 (fake)", "a changed compiler was answered from the memo");
    cr_assert_eq(count_lines(count), 2);
    unsetenv("HCQ_CLANG");
    base_env_reload();
    unlink(cc);
    unlink(count);
    rmdir(dir);
}

/* A tool a build runs has the build's private directory as its TMPDIR, and
 * what it keeps there goes with the directory: when the tool fails, and
 * when the compile timeout kills it mid-build. */
/* a tool that keeps files in its TMPDIR, says which TMPDIR that was (in
 * <tools>/<name>.tmpdir, its pid in <name>.pid), then runs end */
static void write_tool(const char *tools, const char *name, const char *end, char *tool, size_t size)
{
    snprintf(tool, size, "%s/%s", tools, name);
    FILE *f = fopen(tool, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/sh\nmkdir -p \"$TMPDIR/own/deeper\" && echo x > \"$TMPDIR/own/deeper/f\"\necho $$ > %s.pid\n"
            "echo \"$TMPDIR\" > %s.tmp && mv %s.tmp %s.tmpdir\n%s\n",
            tool, tool, tool, tool, end);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(tool, 0700), 0);
}

/* the tool's build directory is gone, and nothing else is in tmp */
static void nothing_left(const char *tool, const char *tmp)
{
    char seen[T_TMP_PATH + 48];
    snprintf(seen, sizeof seen, "%s.tmpdir", tool);
    char *dir = t_slurp(seen, 4096);
    dir[strcspn(dir, "\n")] = 0;
    const char *name = strrchr(tool, '/') + 1;
    char want[T_TMP_PATH + 16];
    snprintf(want, sizeof want, "%s/hcq-build-", tmp);
    cr_assert(!strncmp(dir, want, strlen(want)), "%s: the tool's TMPDIR was %s, not the build's directory", name, dir);
    struct stat sb;
    cr_assert_neq(stat(dir, &sb), 0, "%s: %s is still there", name, dir);
    free(dir);
    DIR *d = opendir(tmp);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));)
        cr_assert(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "%s: %s/%s left behind", name, tmp, e->d_name);
    closedir(d);
}

static void build_leaves_nothing(const char *tools, const char *tmp, const char *name, const char *end)
{
    char tool[T_TMP_PATH + 32];
    write_tool(tools, name, end, tool, sizeof tool);
    const char *argv[] = {tool, NULL};
    void *out = NULL;
    size_t size = 0;
    hcq_status st = cc_build_in_temp("int x;\n", ".c", argv, NULL, "a test build", &out, &size);
    cr_assert_eq(st, HCQ_ECOMPILE, "%s: %s", name, hcq_error_message());
    cr_assert_null(out);
    nothing_left(tool, tmp);
}

Test(compile_toolchain, a_failed_or_killed_tool_leaves_nothing_in_tmpdir, .timeout = 60)
{
    char tools[T_TMP_PATH], tmp[T_TMP_PATH];
    t_tmpdir(tools, sizeof tools, "hcq-test-tools");
    t_tmpdir(tmp, sizeof tmp, "hcq-test-builds");
    setenv("TMPDIR", tmp, 1);
    setenv("HCQ_COMPILE_TIMEOUT_S", "1", 1);
    base_env_reload();
    build_leaves_nothing(tools, tmp, "fails", "exit 1");
    build_leaves_nothing(tools, tmp, "hangs", "exec sleep 30");
    cr_assert(strstr(hcq_error_message(), "without finishing and was killed"), "%s", hcq_error_message());
}

static void *build_thread(void *tool)
{
    const char *argv[] = {tool, NULL};
    void *out = NULL;
    size_t size = 0;
    cc_build_in_temp("int x;\n", ".c", argv, NULL, "a test build", &out, &size);
    return NULL;
}

/* a process that exits (not killed) while a thread of it builds removes
 * that build's directory */
Test(compile_toolchain, an_exit_mid_build_leaves_nothing_in_tmpdir, .timeout = 60)
{
    char tools[T_TMP_PATH], tmp[T_TMP_PATH], tool[T_TMP_PATH + 32], pidfile[T_TMP_PATH + 48];
    t_tmpdir(tools, sizeof tools, "hcq-test-tools");
    t_tmpdir(tmp, sizeof tmp, "hcq-test-builds");
    write_tool(tools, "waits", "exec sleep 60", tool, sizeof tool);
    snprintf(pidfile, sizeof pidfile, "%s.tmpdir", tool);
    pid_t kid = fork();
    cr_assert(kid >= 0);
    if (kid == 0) {
        setenv("TMPDIR", tmp, 1);
        base_env_reload();
        pthread_t th;
        if (pthread_create(&th, NULL, build_thread, tool) != 0) _exit(2);
        /* once the tool runs (it says so last), the process exits */
        for (int i = 0; i < 50 * 100 && access(pidfile, F_OK) != 0; i++) usleep(10000);
        exit(access(pidfile, F_OK) == 0 ? 0 : 3);
    }
    int ws;
    cr_assert_eq(waitpid(kid, &ws, 0), kid);
    snprintf(pidfile, sizeof pidfile, "%s.pid", tool);
    char *pid = t_slurp(pidfile, 64);
    if (atoi(pid) > 0) kill(atoi(pid), SIGKILL); /* the tool outlives the process that ran it */
    free(pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the child: status %#x (3: the tool never ran)", ws);
    nothing_left(tool, tmp);
}

Test(compile_toolchain, require_clang_says_what_needs_it)
{
    const char *path;
    int major;
    tu_need_clang();
    cr_assert_eq(hcq_toolchain_clang(&path, &major), HCQ_OK);
    cr_assert_eq(cc_require_clang(major, "anything"), HCQ_OK);
    cr_assert_eq(cc_require_clang(major + 1, "the sm_99 target"), HCQ_ENOTSUP);
    const char *m = hcq_error_message();
    char want[64];
    snprintf(want, sizeof want, "the sm_99 target needs clang >= %d", major + 1);
    cr_assert(strstr(m, want), "%s", m);
    cr_assert(strstr(m, path), "%s", m);
    cr_assert(strstr(m, "HCQ_CLANG"), "%s", m);
}

Test(compile_toolchain, compile_error_carries_clang_output, .fini = rm_cache)
{
    fresh_cache();
    hcq_kernel *k = unique_kernel(1);
    hcq_binary *b = NULL;
    hcq_status st = cc_cpu_compile_source(k, "int broken(void) { return 1 + ; }\n", &b);
    const char *m = hcq_error_message();
    cr_assert_eq(st, HCQ_ECOMPILE, "%s", m);
    cr_assert_null(b);
    cr_assert(strstr(m, "compiling kernel 'tc_unique' for cpu"), "%s", m);
    cr_assert(strstr(m, "error: expected expression"), "clang's own output missing: %s", m);
    cr_assert(strstr(m, "command: "), "%s", m);
    cr_assert(strstr(m, "-ffp-contract=off"), "command line missing: %s", m);
    int bins, other;
    count_entries(&bins, &other);
    cr_assert_eq(bins + other, 0, "a failed compile left %d files", bins + other);
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, cache_hits_on_the_second_compile, .fini = rm_cache)
{
    fresh_cache();
    int32_t tag = unique_tag();
    hcq_kernel *k = unique_kernel(tag);
    hcq_binary *a, *b;
    cr_assert_eq(hcq_compile(k, "cpu", &a), HCQ_OK, "%s", hcq_error_message());
    cr_assert(!a->from_cache);
    cr_assert_str_eq(a->target, "cpu");
    cr_assert(strncmp(a->compiler, "clang ", 6) == 0, "%s", a->compiler);
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(b->from_cache, "second compile missed the cache");
    cr_assert_eq(a->size, b->size);
    cr_assert(memcmp(a->data, b->data, a->size) == 0);
    cr_assert(runs_right(b, tag));
    int bins, other;
    count_entries(&bins, &other);
    cr_assert_eq(bins, 1);
    cr_assert_eq(other, 0, "temp files left behind");
    hcq_binary_free(a);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

/* HCQ_CACHE_ONLY=1 (the hardware kit's check): hits serve, a miss names
 * the kernel and the target instead of running a compiler */
Test(compile_toolchain, cache_only_serves_hits_and_refuses_misses, .fini = rm_cache)
{
    fresh_cache();
    hcq_kernel *k = unique_kernel(unique_tag()), *other = unique_kernel(unique_tag());
    hcq_binary *a = NULL, *b = NULL;
    cr_assert_eq(hcq_compile(k, "cpu", &a), HCQ_OK, "%s", hcq_error_message());
    setenv("HCQ_CACHE_ONLY", "1", 1);
    base_env_reload();
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(b->from_cache);
    hcq_binary *c = NULL;
    cr_assert_eq(hcq_compile(other, "cpu", &c), HCQ_ECOMPILE);
    cr_assert_null(c);
    cr_assert(strstr(hcq_error_message(), "is not in the kernel cache") && strstr(hcq_error_message(), "for cpu"),
              "%s", hcq_error_message());
    /* the portable GPU path refuses before looking for its compilers */
    cr_assert_eq(hcq_compile(other, "sm_90", &c), HCQ_ECOMPILE);
    cr_assert(strstr(hcq_error_message(), "HCQ_CACHE_ONLY=1") && strstr(hcq_error_message(), "for sm_90"), "%s",
              hcq_error_message());
    int bins, n_other;
    count_entries(&bins, &n_other);
    cr_assert_eq(bins, 1, "a refused miss wrote to the cache");
    unsetenv("HCQ_CACHE_ONLY");
    base_env_reload();
    hcq_binary_free(a);
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
    hcq_kernel_destroy(other);
}

Test(compile_toolchain, corrupt_cache_entry_is_rebuilt, .fini = rm_cache)
{
    fresh_cache();
    int32_t tag = unique_tag();
    hcq_kernel *k = unique_kernel(tag);
    hcq_binary *b;
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    hcq_binary_free(b);
    char path[512];
    cr_assert(first_bin(path, sizeof path));
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq(truncate(path, sb.st_size / 2), 0);
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(!b->from_cache, "a truncated entry was used");
    cr_assert(runs_right(b, tag));
    hcq_binary_free(b);
    /* flip one payload byte: the checksum catches it */
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0);
    uint8_t byte;
    cr_assert_eq(pread(fd, &byte, 1, 200), 1);
    byte ^= 0x40;
    cr_assert_eq(pwrite(fd, &byte, 1, 200), 1);
    close(fd);
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(!b->from_cache, "a corrupted entry was used");
    hcq_binary_free(b);
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(b->from_cache, "the rebuilt entry was not cached");
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, two_processes_compile_one_new_kernel_at_once, .fini = rm_cache)
{
    fresh_cache();
    int32_t tag = unique_tag();
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        cr_assert(kids[i] >= 0);
        if (kids[i] == 0) {
            close(go[1]);
            char c;
            (void)!read(go[0], &c, 1); /* released together when the parent closes the pipe */
            hcq_kernel *k = unique_kernel(tag);
            hcq_binary *b = NULL;
            hcq_status st = hcq_compile(k, "cpu", &b);
            if (st) fprintf(stderr, "child %d: %s\n", i, hcq_error_message());
            _exit(st == HCQ_OK && runs_right(b, tag) ? 0 : 1);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int i = 0; i < 2; i++) {
        int ws;
        cr_assert_eq(waitpid(kids[i], &ws, 0), kids[i]);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child %d failed (status 0x%x)", i, ws);
    }
    int bins, other;
    count_entries(&bins, &other);
    cr_assert_eq(bins, 1, "%d cache entries", bins);
    cr_assert_eq(other, 0, "%d temp files left behind", other);
    hcq_kernel *k = unique_kernel(tag);
    hcq_binary *b;
    cr_assert_eq(hcq_compile(k, "cpu", &b), HCQ_OK, "%s", hcq_error_message());
    cr_assert(b->from_cache, "the entry the children wrote is not valid");
    cr_assert(runs_right(b, tag));
    hcq_binary_free(b);
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, debug_levels_log_compiler_cache_and_source, .fini = rm_cache)
{
    fresh_cache();
    char log[T_TMP_PATH];
    int fd = t_tmpfile(log, sizeof log, "hcq-test-log");
    cr_assert(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("HCQ_DEBUG", "3", 1);
    base_env_reload();
    hcq_kernel *k = unique_kernel(unique_tag());
    hcq_binary *b;
    hcq_status st = hcq_compile(k, "cpu", &b);
    if (!st) hcq_binary_free(b);
    st = st ? st : hcq_compile(k, "cpu", &b);
    if (!st) hcq_binary_free(b);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    cr_assert_eq(st, HCQ_OK, "%s", hcq_error_message());
    char text[65536];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(log);
    cr_assert(n > 0);
    text[n] = 0;
    cr_assert(strstr(text, "HCQ_EXPORT void hcq_entry"), "source not printed");
    cr_assert(strstr(text, "compiled with /"), "compiler not named");
    cr_assert(strstr(text, "cache miss"), "miss not logged");
    cr_assert(strstr(text, "cache hit"), "hit not logged");
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, targets_and_rendering)
{
    cr_assert(hcq_target_known("cpu"));
    cr_assert(hcq_target_known("ir"));
    cr_assert(!hcq_target_known("sm_75")); /* pre-Ampere: no such target */
    cr_assert(!hcq_target_known(NULL));
    hcq_kernel *k = unique_kernel(3);
    hcq_binary *b = NULL;
    cr_assert_eq(hcq_compile(k, "tpu9", &b), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "unknown target 'tpu9'; this build knows: cpu, ir"), "%s",
              hcq_error_message());
    char *src = NULL;
    cr_assert_eq(hcq_render(k, "cpu", &src), HCQ_OK, "%s", hcq_error_message());
    cr_assert(strstr(src, "hcq_entry") && strstr(src, "hcq_meta") && !strstr(src, "#include"), "%s", src);
    free(src);
    cr_assert_eq(hcq_render(k, "ir", &src), HCQ_OK);
    cr_assert(strstr(src, "kernel 'tc_unique'"), "%s", src);
    free(src);
    cr_assert_eq(cc_target_at(0), cc_target_find("cpu"));
    cr_assert_eq(cc_target_find("cpu")->kind, CC_BIN_HOST_SO);
    cr_assert_eq(cc_target_at(1)->kind, CC_BIN_IR_ELF);
    /* an invalid kernel never reaches the compiler */
    hcq_kernel *bad = hcq_kernel_create("bad");
    hcq_ir_unary(bad, HCQ_OP_SQRT, 0);
    cr_assert_eq(hcq_compile(bad, "cpu", &b), HCQ_EINVAL);
    cr_assert(strstr(hcq_error_message(), "hcq_compile: kernel 'bad'"), "%s", hcq_error_message());
    hcq_kernel_destroy(bad);
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, cpu_loader_rejects_other_binaries)
{
    hcq_kernel *k = unique_kernel(4);
    hcq_binary *b;
    cr_assert_eq(hcq_compile(k, "ir", &b), HCQ_OK);
    cc_cpu_module m;
    cr_assert_eq(cc_cpu_module_load(b->data, b->size, &m), HCQ_EFORMAT);
    cr_assert(strstr(hcq_error_message(), "relocatable object with no machine"), "%s", hcq_error_message());
    hcq_binary_free(b);
    cr_assert_eq(cc_cpu_module_load("junk", 4, &m), HCQ_EFORMAT);
    hcq_kernel_destroy(k);
}

Test(compile_toolchain, run_captures_output_and_status)
{
    const char *argv[] = {"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3", NULL};
    char *out = NULL;
    int code = -1;
    cr_assert_eq(cc_run(argv, &out, &code), HCQ_OK, "%s", hcq_error_message());
    cr_assert_eq(code, 3);
    cr_assert(strstr(out, "to-out") && strstr(out, "to-err"), "%s", out);
    free(out);
    const char *none[] = {"/nonexistent/tool", NULL};
    cr_assert_eq(cc_run(none, &out, &code), HCQ_ENODEV);
    cr_assert(strstr(hcq_error_message(), "/nonexistent/tool"), "%s", hcq_error_message());
    const char *fails[] = {"/bin/sh", "-c", "echo oops >&2; exit 2", NULL};
    cr_assert_eq(cc_run_tool(fails, "testing"), HCQ_ECOMPILE);
    cr_assert(strstr(hcq_error_message(), "testing: /bin/sh failed (exit status 2):\noops"), "%s", hcq_error_message());
}
