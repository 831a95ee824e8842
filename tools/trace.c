/* hcq trace: runs a program with libhcqtrace.so preloaded (and, with
 * --mock, libhcqmock.so behind it), collects what every process of the
 * program's tree traces over one socket, and prints it to its own stderr or
 * -o FILE, with a per-call summary at the end (-c, -C). It waits for the
 * program and then for every traced process still connected, as strace -f
 * does, and exits with the program's status. */
#include "tools/tools.h"

#include "base/base.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq trace [-o FILE] [--json] [-c | -C] [--streams] [--mock] [--poll-us N] -- PROGRAM [ARGS...]\n\n"
               "Runs PROGRAM with libhcqtrace.so preloaded, in it and in every child it forks or execs,\n"
               "and prints each open, stat/access probe, ioctl, mmap, dup and close of /dev/nvidiactl,\n"
               "/dev/nvidia-uvm, /dev/nvidiaN, /dev/kfd and /dev/dri/*: the time, pid/tid, the call by\n"
               "name (NV escapes, RM classes, controls and status, UVM, kfd, DRM and amdgpu ioctls),\n"
               "symbolic flags and errno names. Unknown requests print as numbers with their raw\n"
               "argument. It works on programs that are not hcq's, such as CUDA ones; a statically\n"
               "linked program cannot be traced this way and is said to be.\n\n"
               "  -o FILE       write the trace to FILE (default: this command's stderr, never the\n"
               "                program's)\n"
               "  --json        JSON Lines: one object per line ({\"t\", \"pid\", \"tid\", \"event\", ...})\n"
               "  -c            count calls, errors and time per call and print only that summary\n"
               "  -C            the trace and the summary\n"
               "  --streams     also capture the command streams the program submits: each NV GPFIFO\n"
               "                entry with its pushbuffer and QMDs, AMD PM4/AQL/SDMA ring contents with\n"
               "                their indirect buffers, decoded, between the ioctls\n"
               "  --mock        run PROGRAM on hcq's mock GPU (libhcqmock.so preloaded after the\n"
               "                tracer): emulated /dev/nvidia* and /dev/kfd for any program\n"
               "  --poll-us N   with --streams: read the write pointers every N us at most (200)\n\n"
               "HCQ_TRACE=1 gives the same decoding of hcq's own calls without preloading.\n");
}

/* a library beside this executable, in ../lib, or in the LIBDIR the build was configured with (installed) */
static bool find_library(const char *name, char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    const char *dir = dirname(exe);
    const char *tries[] = {"%s/%s", "%s/../lib/%s", "%s/%s"};
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
        snprintf(out, size, tries[i], i == 2 ? base_install_libdir() : dir, name); /* the configured LIBDIR last */
        if (access(out, R_OK) == 0) {
            char *real = realpath(out, NULL);
            if (real) {
                snprintf(out, size, "%s", real);
                free(real);
            }
            return true;
        }
    }
    return false;
}

/* the program's path as execvp would find it */
static bool resolve(const char *prog, char *out, size_t size)
{
    if (strchr(prog, '/')) {
        snprintf(out, size, "%s", prog);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, size, "%.*s/%s", (int)n, p, prog);
        if (access(out, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* An ELF without a program interpreter is static: no LD_PRELOAD reaches it */
static bool is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    Elf64_Ehdr eh;
    bool stat = false;
    if (read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
        eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 256) {
        stat = true;
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != (ssize_t)sizeof ph) break;
            if (ph.p_type == PT_INTERP) stat = false;
        }
    }
    close(fd);
    return stat;
}

/* ** the summary of -c */
typedef struct call_stat {
    char name[64];
    uint64_t calls, errors, ns;
} call_stat;

typedef struct summary {
    call_stat *v;
    size_t n, cap;
} summary;

static void add_record(summary *s, const char *line)
{
    /* "\x1eC\tNAME\tERRNO\tNS" */
    char name[64];
    int err = 0;
    unsigned long long ns = 0;
    if (sscanf(line, "\x1e" "C\t%63[^\t]\t%d\t%llu", name, &err, &ns) != 3) return;
    size_t i = 0;
    while (i < s->n && strcmp(s->v[i].name, name)) i++;
    if (i == s->n) {
        if (s->n == s->cap) {
            call_stat *v = realloc(s->v, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *v);
            if (!v) return;
            s->v = v;
        }
        s->v[s->n++] = (call_stat){0};
        snprintf(s->v[i].name, sizeof s->v[i].name, "%s", name);
    }
    s->v[i].calls++;
    s->v[i].errors += err != 0;
    s->v[i].ns += ns;
}

static int by_time(const void *a, const void *b)
{
    const call_stat *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

static void print_summary(FILE *f, summary *s, bool json)
{
    if (s->n) qsort(s->v, s->n, sizeof *s->v, by_time); /* v is NULL when nothing was called */
    uint64_t ns = 0, calls = 0, errors = 0;
    for (size_t i = 0; i < s->n; i++) ns += s->v[i].ns, calls += s->v[i].calls, errors += s->v[i].errors;
    if (json) {
        fprintf(f, "{\"event\": \"summary\", \"calls\": [");
        for (size_t i = 0; i < s->n; i++)
            fprintf(f, "%s{\"call\": \"%s\", \"calls\": %llu, \"errors\": %llu, \"seconds\": %.6f}", i ? ", " : "",
                    s->v[i].name, (unsigned long long)s->v[i].calls, (unsigned long long)s->v[i].errors,
                    (double)s->v[i].ns / 1e9);
        fprintf(f, "], \"total_calls\": %llu, \"total_errors\": %llu, \"total_seconds\": %.6f}\n",
                (unsigned long long)calls, (unsigned long long)errors, (double)ns / 1e9);
        return;
    }
    const char *rule = "------ ----------- ----------- --------- --------- --------------------------------";
    fprintf(f, "%% time     seconds  usecs/call     calls    errors call\n%s\n", rule);
    for (size_t i = 0; i < s->n; i++) {
        const call_stat *c = &s->v[i];
        char err[24] = ""; /* empty when there are none, as strace prints it */
        if (c->errors) snprintf(err, sizeof err, "%llu", (unsigned long long)c->errors);
        fprintf(f, "%6.2f %11.6f %11.0f %9llu %9s %s\n", ns ? 100.0 * (double)c->ns / (double)ns : 0.0,
                (double)c->ns / 1e9, (double)c->ns / 1e3 / (double)c->calls, (unsigned long long)c->calls, err,
                c->name);
    }
    fprintf(f, "%s\n%6.2f %11.6f %11s %9llu %9llu total\n", rule, 100.0, (double)ns / 1e9, "",
            (unsigned long long)calls, (unsigned long long)errors);
}

/* ** collecting */
#define MAX_CONN 256

typedef struct collector {
    int listen_fd;
    struct pollfd pfd[MAX_CONN + 1];
    int nconn;
    FILE *out;
    const char *out_name;
    int out_err; /* the first error writing out (errno), said at once and in the exit status */
    bool print_lines;
    summary sum;
} collector;

/* a write to the output failed (a full disk, -o /dev/full): say so once,
 * where the user sees it, and keep draining the program's lines so it is
 * never blocked on a socket nobody reads */
static void check_out(collector *c)
{
    if (c->out_err || !ferror(c->out)) return;
    c->out_err = errno ? errno : EIO;
    fprintf(stderr, "hcq trace: writing the trace to %s failed: %s; the trace is incomplete from here on\n",
            c->out_name, strerror(c->out_err));
}

static void take(collector *c, const char *msg, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t len = 0;
        while (i + len < n && msg[i + len] != '\n') len++;
        if (len && msg[i] == '\x1e') {
            char rec[256];
            snprintf(rec, sizeof rec, "%.*s", (int)(len < sizeof rec - 1 ? len : sizeof rec - 1), msg + i);
            add_record(&c->sum, rec);
        } else if (c->print_lines && !c->out_err) {
            fwrite(msg + i, 1, len, c->out);
            fputc('\n', c->out);
        }
        i += len + 1;
    }
}

/* one round: accepts and reads what is there; returns the connections open */
static int collect(collector *c, int timeout_ms)
{
    c->pfd[0] = (struct pollfd){.fd = c->listen_fd, .events = POLLIN};
    int r = poll(c->pfd, (nfds_t)c->nconn + 1, timeout_ms);
    if (r <= 0) return c->nconn;
    if (c->pfd[0].revents & POLLIN) {
        int fd;
        while (c->nconn < MAX_CONN && (fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
            c->pfd[++c->nconn] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    static char buf[1 << 16];
    for (int i = 1; i <= c->nconn; i++) {
        if (!c->pfd[i].revents) continue;
        ssize_t n;
        while ((n = recv(c->pfd[i].fd, buf, sizeof buf, 0)) > 0) take(c, buf, (size_t)n);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            close(c->pfd[i].fd);
            c->pfd[i--] = c->pfd[c->nconn--];
        }
    }
    if (!c->out_err) fflush(c->out);
    check_out(c);
    return c->nconn;
}

int tool_trace(int argc, char **argv)
{
    const char *outfile = NULL;
    bool json = false, streams = false, mock = false, lines = true, sum = false;
    uint64_t poll_us = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (tool_is_help(a)) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            outfile = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "-c")) {
            sum = true, lines = false;
        } else if (!strcmp(a, "-C")) {
            sum = true, lines = true;
        } else if (!strcmp(a, "--streams")) {
            streams = true;
        } else if (!strcmp(a, "--mock")) {
            mock = true;
        } else if (!strcmp(a, "--poll-us") && i + 1 < argc) {
            if (!tool_parse_u64("trace", "--poll-us", argv[++i], 10, 1000000, &poll_us)) return 2;
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (a[0] == '-') {
            return tool_bad_arg("trace", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char lib[PATH_MAX], mocklib[PATH_MAX], prog[PATH_MAX];
    if (!find_library("libhcqtrace.so", lib, sizeof lib)) {
        fprintf(stderr, "hcq trace: libhcqtrace.so is not beside the hcq executable, in ../lib nor in %s (the LIBDIR "
                        "hcq was built for); build it with `make` (it is build/libhcqtrace.so), or install with the "
                        "LIBDIR you built with\n", base_install_libdir());
        return 1;
    }
    if (mock && !find_library("libhcqmock.so", mocklib, sizeof mocklib)) {
        fprintf(stderr, "hcq trace: --mock needs libhcqmock.so beside the hcq executable, in ../lib or in %s (the "
                        "LIBDIR hcq was built for); build it with `make` (it is build/libhcqmock.so)\n",
                base_install_libdir());
        return 1;
    }
    if (!resolve(argv[i], prog, sizeof prog)) {
        fprintf(stderr, "hcq trace: cannot run %s: %s\n", argv[i], strerror(errno ? errno : ENOENT));
        return 127;
    }
    if (is_static_elf(prog))
        fprintf(stderr, "hcq trace: warning: %s is statically linked: LD_PRELOAD cannot reach its calls, so nothing "
                        "it does will be traced\n", prog);
    FILE *out = stderr;
    if (outfile && !(out = fopen(outfile, "w"))) {
        fprintf(stderr, "hcq trace: cannot write %s: %s\n", outfile, strerror(errno));
        return 1;
    }

    /* the socket every traced process connects to, in a directory of ours */
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], sock[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/hcq-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "hcq trace: cannot make a directory for its socket (%s): %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(sock, sizeof sock, "%s/s", dir);
    collector c = {.out = out, .out_name = outfile ? outfile : "stderr", .print_lines = lines};
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    c.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (strlen(sock) >= sizeof sa.sun_path || c.listen_fd < 0) {
        fprintf(stderr, "hcq trace: cannot make a socket at %s (set TMPDIR to a shorter path)\n", sock);
        rmdir(dir);
        return 1;
    }
    memcpy(sa.sun_path, sock, strlen(sock) + 1); /* its length was checked above */
    if (bind(c.listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(c.listen_fd, 64) < 0) {
        fprintf(stderr, "hcq trace: cannot listen at %s: %s\n", sock, strerror(errno));
        rmdir(dir);
        return 1;
    }

    const char *old = getenv("LD_PRELOAD");
    char preload[3 * PATH_MAX], t0[32];
    snprintf(preload, sizeof preload, "%s%s%s%s%s", lib, mock ? ":" : "", mock ? mocklib : "",
             old && *old ? ":" : "", old && *old ? old : "");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(t0, sizeof t0, "%llu", (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    setenv("LD_PRELOAD", preload, 1);
    setenv("HCQ_TRACE_SOCK", sock, 1);
    setenv("HCQ_TRACE_T0", t0, 1);
    unsetenv("HCQ_TRACE_OUT");
    if (json) setenv("HCQ_TRACE_JSON", "1", 1);
    else unsetenv("HCQ_TRACE_JSON");
    if (sum) setenv("HCQ_TRACE_SUMMARY", lines ? "both" : "only", 1);
    else unsetenv("HCQ_TRACE_SUMMARY");
    if (streams) setenv("HCQ_TRACE_STREAMS", "1", 1);
    else unsetenv("HCQ_TRACE_STREAMS");
    if (poll_us) {
        char p[32];
        snprintf(p, sizeof p, "%llu", (unsigned long long)poll_us);
        setenv("HCQ_TRACE_POLL_US", p, 1);
    }

    /* Ctrl-C goes to the program; this process stays to print the end */
    struct sigaction ign = {.sa_handler = SIG_IGN}, oldint, oldquit;
    sigaction(SIGINT, &ign, &oldint);
    sigaction(SIGQUIT, &ign, &oldquit);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &oldint, NULL);
        sigaction(SIGQUIT, &oldquit, NULL);
        execv(prog, argv + i);
        fprintf(stderr, "hcq trace: cannot run %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    int status = 0, rc = 1;
    if (pid < 0) {
        fprintf(stderr, "hcq trace: fork: %s\n", strerror(errno));
    } else {
        bool exited = false;
        while (!exited) {
            collect(&c, 50);
            exited = waitpid(pid, &status, WNOHANG) == pid;
        }
        /* then every traced process still connected (children it left) */
        while (collect(&c, 100) > 0 || (collect(&c, 0), c.nconn > 0)) {}
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
        if (sum && !c.out_err) print_summary(out, &c.sum, json);
    }
    close(c.listen_fd);
    unlink(sock);
    rmdir(dir);
    free(c.sum.v);
    if (!c.out_err && fflush(out)) check_out(&c);
    if (out != stderr && fclose(out) && !c.out_err) {
        c.out_err = errno;
        fprintf(stderr, "hcq trace: writing the trace to %s failed: %s\n", outfile, strerror(errno));
    }
    /* the program's status, unless that is success and the trace is not */
    return c.out_err && !rc ? 1 : rc;
}
