/* Finding and running the C compiler. Tools run through posix_spawn with
 * an argv (no shell, so paths with spaces or quotes are safe), their
 * stdout+stderr captured for the error message. */
#include "compiler/cc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_MAX (1u << 20)

/* ** running tools */

/* Reads the tool's output until it closes the pipe, or until the deadline
 * (hcq_now_ns): false when the deadline passed first. */
static bool read_all(int fd, uint64_t deadline, char **output)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    bool in_time = true;
    for (;;) {
        if (buf && cap - len < 2048 && cap < OUTPUT_MAX + 4096) {
            char *n = realloc(buf, cap * 2);
            if (n) { /* else keep what we have */
                buf = n;
                cap *= 2;
            }
        }
        uint64_t now = hcq_now_ns();
        if (now >= deadline) {
            in_time = false;
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        uint64_t left_ms = (deadline - now + 999999) / 1000000;
        int pr = poll(&p, 1, (int)BASE_MIN(left_ms, 60000));
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) continue; /* the deadline is checked above */
        char sink[4096];
        bool keep = buf && cap - len > 1;
        ssize_t r = read(fd, keep ? buf + len : sink, keep ? cap - len - 1 : sizeof sink);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (keep) len += (size_t)r; /* past the cap the rest is drained and dropped */
    }
    if (buf) buf[len] = 0;
    *output = buf;
    return in_time;
}

static hcq_status run_in(const char *const *argv, char **env, char **output, int *exit_code)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return base_err(HCQ_ENODEV, "cannot run %s: pipe: %s", argv[0], strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    /* a process group of its own: a timeout kills the tool and whatever
     * it started (clang's cc1 and linker, ptxas under nvcc) */
    posix_spawnattr_t sa;
    posix_spawnattr_init(&sa);
    posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&sa, 0);
    pid_t pid;
    uint64_t limit = base_env_get()->compile_timeout_ns;
    uint64_t start = hcq_now_ns();
    int err = posix_spawn(&pid, argv[0], &fa, &sa, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&sa);
    close(pfd[1]);
    if (err) {
        close(pfd[0]);
        return base_err(HCQ_ENODEV, "cannot run %s: %s", argv[0], strerror(err));
    }
    char *out = NULL;
    bool in_time = read_all(pfd[0], start + limit, &out);
    /* before it is reaped the group id cannot name anyone else's processes */
    if (!in_time) kill(-pid, SIGKILL);
    close(pfd[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (!in_time) {
        free(out);
        return base_err(HCQ_ECOMPILE, "%s ran for %llu s without finishing and was killed (HCQ_COMPILE_TIMEOUT_S=%llu; "
                        "raise it for a kernel that needs longer)", argv[0],
                        (unsigned long long)((hcq_now_ns() - start) / 1000000000ull),
                        (unsigned long long)(limit / 1000000000ull));
    }
    if (!out) return base_err(HCQ_ENOMEM, "out of memory reading the output of %s", argv[0]);
    *exit_code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    *output = out;
    return HCQ_OK;
}

/* The environment a tool runs in: this process's, with TMPDIR set to the
 * build directory where there is one (cc_build_dir). NULL when out of
 * memory; *tmpdir_var is what to free with it. */
static char **tool_env(char **tmpdir_var)
{
    *tmpdir_var = NULL;
    const char *dir = cc_build_dir();
    if (!dir) return environ;
    size_t n = 0;
    while (environ[n]) n++;
    char **env = malloc((n + 2) * sizeof *env);
    size_t len = strlen("TMPDIR=") + strlen(dir) + 1;
    char *var = malloc(len);
    if (!env || !var) {
        free(env);
        free(var);
        return NULL;
    }
    snprintf(var, len, "TMPDIR=%s", dir);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = environ[i];
    env[k++] = var;
    env[k] = NULL;
    *tmpdir_var = var;
    return env;
}

hcq_status cc_run(const char *const *argv, char **output, int *exit_code)
{
    char *tmpdir_var;
    char **env = tool_env(&tmpdir_var);
    if (!env) return base_err(HCQ_ENOMEM, "cannot run %s: out of memory", argv[0]);
    hcq_status st = run_in(argv, env, output, exit_code);
    if (env != environ) free(env);
    free(tmpdir_var);
    return st;
}

static void join_argv(const char *const *argv, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; argv[i] && len + 1 < size; i++) {
        int n = snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
        if (n < 0) break;
        len += (size_t)n;
    }
    if (len >= size && size > 4) memcpy(buf + size - 4, "...", 4);
}

hcq_status cc_run_tool(const char *const *argv, const char *what)
{
    char *out = NULL;
    int code = 0;
    hcq_status st = cc_run(argv, &out, &code);
    if (st) return base_err_prefix(HCQ_ECOMPILE, "%s", what); /* not started, or killed at the timeout */
    if (code == 0) {
        free(out);
        return HCQ_OK;
    }
    char cmd[1024];
    join_argv(argv, cmd, sizeof cmd);
    /* The start of the output has the first (real) error; keep room for the command. */
    size_t len = strlen(out);
    if (len > 2600) memcpy(out + 2600 - 20, "\n[... output cut]\n", 19);
    st = base_err(HCQ_ECOMPILE, "%s: %s failed (exit status %d):\n%s\ncommand: %s", what, argv[0], code,
                  out[0] ? out : "(no output)\n", cmd);
    free(out);
    return st;
}

/* ** finding clang */

/* Copies src into dst[size]; false (and dst untouched) when it does not fit. */
static bool copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) return false;
    memcpy(dst, src, n + 1);
    return true;
}
typedef struct clang_found {
    hcq_status st;
    char msg[512];
    char path[PATH_MAX];
    char version[256];
    char label[64];
    bool from_memo; /* the version came from the cache's .probe entry */
    cc_clang_info info;
} clang_found;

/* Process-wide: the clang found, written once under found_once. */
static clang_found found;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

/* Takes the first line of `clang --version` output when it says "clang
 * version X.Y.Z": the found clang is then path. */
static bool take_version(const char *path, const char *out)
{
    const char *v = strstr(out, "clang version ");
    int maj = 0, min = 0, pat = 0;
    if (!v || sscanf(v + 14, "%d.%d.%d", &maj, &min, &pat) < 1) return false;
    size_t n = strcspn(out, "\n");
    snprintf(found.version, sizeof found.version, "%.*s", (int)n, out);
    copy_str(found.path, sizeof found.path, path); /* path came from a PATH_MAX buffer */
    snprintf(found.label, sizeof found.label, "clang %d.%d.%d", maj, min, pat);
    found.info = (cc_clang_info){found.path, maj, found.version, found.label};
    return true;
}

/* Adds what identifies a file's contents without reading it: where it is
 * and its inode, size, mtime and ctime. A package manager replaces a file
 * by renaming a new one over it (new inode, and the directory's mtime and
 * ctime move); an edit in place moves the file's ctime, which user space
 * cannot set back. */
static bool add_identity(cc_sha256_ctx *s, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return false;
    uint64_t id[9] = {(uint64_t)sb.st_dev,           (uint64_t)sb.st_ino,           (uint64_t)sb.st_size,
                      (uint64_t)sb.st_mtim.tv_sec,   (uint64_t)sb.st_mtim.tv_nsec,  (uint64_t)sb.st_ctim.tv_sec,
                      (uint64_t)sb.st_ctim.tv_nsec,  (uint64_t)sb.st_mode,          (uint64_t)sb.st_nlink};
    cc_key_add_str(s, path);
    cc_key_add(s, id, sizeof id);
    return true;
}

/* The key under which the kernel cache remembers what `path --version`
 * said (a ".probe" entry), so that a process whose kernels are all cached
 * starts without running the compiler (22 ms of a 25 ms start). The key is
 * the identity of the binary the path leads to, of its directory and of
 * the lib directory beside it (clang-NN is a link to
 * /usr/lib/llvm-NN/bin/clang, which loads libclang-cpp and libLLVM from
 * ../lib, and the version text lives in the library): when any of them is
 * replaced, the key changes and the compiler is asked again. So a memo
 * answers only for the very files that gave it, and the version text that
 * goes into every kernel's key (target.c) is the one the compiler gives. */
static bool memo_key(const char *path, cc_cache_key *key)
{
    char real[PATH_MAX], dir[PATH_MAX + 8];
    if (!realpath(path, real)) return false;
    cc_sha256_ctx s;
    cc_key_begin(&s);
    cc_key_add_str(&s, "clang-probe-v1");
    cc_key_add_str(&s, path);
    if (!add_identity(&s, real)) return false;
    char *slash = strrchr(real, '/');
    if (!slash) return false;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - real + 1), real);
    if (!add_identity(&s, dir)) return false;
    snprintf(dir, sizeof dir, "%.*s../lib", (int)(slash - real + 1), real);
    if (!add_identity(&s, dir)) cc_key_add_str(&s, "no ../lib");
    cc_key_end(&s, key);
    return true;
}

/* Runs `path --version` and parses "clang version X.Y.Z", or takes what it
 * said last time from the cache when the files are the same (memo_key). */
static bool probe(const char *path)
{
    /* only with a cache that exists: finding the compiler (hcq info) makes
     * no directory (looking into the cache would); the first kernel
     * compiled does, and the next process remembers */
    cc_cache_key mk;
    bool keyed = access(hcq_cache_dir(), F_OK) == 0 && memo_key(path, &mk);
    void *memo = NULL;
    size_t memo_size = 0;
    if (keyed && cc_cache_get_ext(&mk, ".probe", &memo, &memo_size)) {
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)BASE_MIN(memo_size, sizeof line - 1), (const char *)memo);
        free(memo);
        if (take_version(path, line)) {
            found.from_memo = true;
            return true;
        }
    }
    const char *argv[] = {path, "--version", NULL};
    char *out = NULL;
    int code = 0;
    if (cc_run(argv, &out, &code) != HCQ_OK) return false;
    bool ok = code == 0 && take_version(path, out);
    if (ok && keyed &&
        cc_cache_put_ext(&mk, ".probe", found.version, strlen(found.version)) != HCQ_OK)
        BASE_LOG(1, "%s --version: not remembered in the cache: %s", path, hcq_error_message());
    free(out);
    return ok;
}

/* Finds `name` in PATH (or uses it as is when it has a slash). */
static bool which(const char *name, char *out, size_t size)
{
    if (strchr(name, '/')) return copy_str(out, size, name) && access(out, X_OK) == 0;
    const char *path = base_env_get()->path;
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (n) {
            snprintf(out, size, "%.*s/%s", (int)n, p, name);
            if (access(out, X_OK) == 0) return true;
        }
        p += n + (p[n] == ':');
    }
    return false;
}

/* The highest NN of clang-NN in PATH below `below`; 0 when none. */
static int newest_versioned(int below, char *out, size_t size)
{
    const char *path = base_env_get()->path;
    int best = 0;
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        p += n + (p[n] == ':');
        DIR *d = n ? opendir(dir) : NULL;
        for (struct dirent *e; d && (e = readdir(d));) {
            const char *s = e->d_name;
            if (strncmp(s, "clang-", 6) != 0 || !s[6] || strspn(s + 6, "0123456789") != strlen(s + 6)) continue;
            int v = atoi(s + 6);
            char full[PATH_MAX + 256];
            snprintf(full, sizeof full, "%s/%s", dir, s);
            if (v > best && v < below && access(full, X_OK) == 0 && copy_str(out, size, full)) best = v;
        }
        if (d) closedir(d);
    }
    return best;
}

static void find_clang(void)
{
    const char *env = base_env_get()->clang;
    char cand[PATH_MAX];
    if (env) {
        if (which(env, cand, sizeof cand) && probe(cand)) return;
        found.st = HCQ_ENODEV;
        snprintf(found.msg, sizeof found.msg,
                 "HCQ_CLANG=%s does not run as clang (`%s --version` failed or does not say \"clang version\"); "
                 "point it at a clang binary or unset it", env, env);
        return;
    }
    /* newest clang-NN first; fall back to older ones if a newer one is broken */
    for (int below = INT_MAX, v; (v = newest_versioned(below, cand, sizeof cand)) > 0; below = v)
        if (probe(cand)) return;
    if (which("clang", cand, sizeof cand) && probe(cand)) return;
    found.st = HCQ_ENODEV;
    snprintf(found.msg, sizeof found.msg,
             "no C compiler: no clang-NN or clang on PATH runs; install clang (apt install clang) or set HCQ_CLANG");
}

hcq_status cc_clang(const cc_clang_info **out)
{
    pthread_once(&found_once, find_clang);
    if (found.st) return base_err(found.st, "%s", found.msg);
    *out = &found.info;
    return HCQ_OK;
}

hcq_status hcq_toolchain_clang(const char **path_out, int *major_out)
{
    const cc_clang_info *c;
    hcq_status st = cc_clang(&c);
    if (st) return st;
    if (path_out) *path_out = c->path;
    if (major_out) *major_out = c->major;
    return HCQ_OK;
}

hcq_status cc_require_clang(int min_major, const char *why)
{
    const cc_clang_info *c;
    hcq_status st = cc_clang(&c);
    if (st) return base_err_prefix(st, "%s needs clang >= %d", why, min_major);
    if (c->major >= min_major) return HCQ_OK;
    return base_err(HCQ_ENOTSUP,
                    "%s needs clang >= %d, but the clang found is %s (%s); install clang-%d or newer and put it on "
                    "PATH, or point HCQ_CLANG at one", why, min_major, c->path, c->label, min_major);
}
