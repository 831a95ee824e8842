/* tfuzz, the driver: generates programs from seeds, runs each on every
 * device (one worker process per device) and in the reference, compares,
 * and shrinks a disagreement to a few API calls.
 *
 *   tfuzz [--graphs N] [--seed S] [--seconds T] [--ops K] [--devices "..."]
 *         [--compiled-graphs N] [--keep-going] [--verbose]      fuzz
 *   tfuzz --replay FILE                   run one saved program (shrunk again)
 *   tfuzz --c FILE                        print a saved program as C calls
 *   tfuzz --worker DEVICE                 serve programs on stdin (internal)
 *   tfuzz --list                          the devices this process sees
 *
 * Devices are HCQ_TEST_DEVICES tokens (scripts/run-tests.sh): NAME,
 * CPU+ir, mock:NAME, mock[CFG]:NAME, and any of them with +sym (the
 * programs run through a JIT whose inputs' leading dim is a variable,
 * hcq_jit_dim: traced at two other sizes, replayed at the program's); the
 * default is what run-tests.sh picks: the devices present, CPU+ir, the
 * mock GPUs, mock[amd=gfx942], and CPU+sym. */
#include "tfuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEV 16

typedef struct worker {
    char token[64]; /* as given */
    char device[32];
    char env[4][96];
    int nenv;
    pid_t pid;
    FILE *to;
    int from_fd;
    char rbuf[1 << 16];
    size_t rpos, rlen;
    char target[32];
} worker;

typedef struct result {
    int status; /* 0 ok, 1 error, 2 skip, 3 died or timed out */
    char msg[512];
    int nout;
    struct {
        hcq_dtype dt;
        int ndim;
        int64_t shape[TF_MAX_DIMS];
        uint8_t *bytes;
        size_t n;
    } out[TF_MAX_OUT];
} result;

static int verbose;
static double timeout_s = 300;
static char self_exe[4096];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ** workers */
static bool parse_token(worker *w, const char *tok)
{
    memset(w, 0, sizeof *w);
    snprintf(w->token, sizeof w->token, "%s", tok);
    const char *name = tok;
    size_t len = strlen(tok);
    if (len > 4 && !strcmp(tok + len - 4, "+sym")) { /* the device, programs run through a JIT with a variable batch */
        char base[64];
        snprintf(base, sizeof base, "%.*s", (int)(len - 4), tok);
        if (!parse_token(w, base)) return false;
        snprintf(w->token, sizeof w->token, "%s", tok);
        snprintf(w->env[w->nenv++], sizeof w->env[0], "HCQ_TFUZZ_SYM=1");
        return true;
    }
    if (len > 3 && !strcmp(tok + len - 3, "+ir")) {
        snprintf(w->device, sizeof w->device, "%.*s", (int)(len - 3), tok);
        snprintf(w->env[w->nenv++], sizeof w->env[0], "HCQ_CPU_TARGET=ir");
        return true;
    }
    if (!strncmp(tok, "mock[", 5)) {
        const char *e = strstr(tok, "]:");
        if (!e) return false;
        snprintf(w->env[w->nenv++], sizeof w->env[0], "HCQ_MOCK=1");
        snprintf(w->env[w->nenv++], sizeof w->env[0], "HCQ_MOCK_CONFIG=%.*s", (int)(e - tok - 5), tok + 5);
        name = e + 2;
    } else if (!strncmp(tok, "mock:", 5)) {
        snprintf(w->env[w->nenv++], sizeof w->env[0], "HCQ_MOCK=1");
        name = tok + 5;
    }
    snprintf(w->device, sizeof w->device, "%s", name);
    return true;
}

/* gently (stdin closed: the worker finishes and exits, so sanitizers
 * report) or at once */
static void worker_stop(worker *w, bool now_)
{
    if (w->pid <= 0) return;
    if (w->to) fclose(w->to);
    w->to = NULL;
    int st;
    for (int i = 0; !now_ && i < 200 && waitpid(w->pid, &st, WNOHANG) == 0; i++) usleep(50000);
    if (waitpid(w->pid, &st, WNOHANG) == 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
    }
    close(w->from_fd);
    w->from_fd = -1;
    w->rpos = w->rlen = 0;
    w->pid = 0;
}

/* one line from the worker within the timeout; false if it died or hung */
static bool read_line(worker *w, char **line, size_t *cap, double deadline)
{
    size_t len = 0;
    for (;;) {
        while (w->rpos < w->rlen) {
            char c = w->rbuf[w->rpos++];
            if (len + 2 >= *cap) {
                *cap = *cap ? *cap * 2 : 4096;
                char *nl = realloc(*line, *cap);
                if (!nl) return false;
                *line = nl;
            }
            if (c == '\n') {
                (*line)[len] = 0;
                return true;
            }
            (*line)[len++] = c;
        }
        double left = deadline - now();
        if (left <= 0) return false;
        struct pollfd pf = {.fd = w->from_fd, .events = POLLIN};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        ssize_t got = read(w->from_fd, w->rbuf, sizeof w->rbuf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        w->rpos = 0;
        w->rlen = (size_t)got;
    }
}

static bool worker_start(worker *w)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) return false; /* other workers must not hold them */
    pid_t pid = fork();
    if (pid < 0) return false;
    if (!pid) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        unsetenv("HCQ_MOCK");
        unsetenv("HCQ_MOCK_CONFIG");
        unsetenv("HCQ_CPU_TARGET");
        for (int i = 0; i < w->nenv; i++) putenv(w->env[i]);
        execl(self_exe, self_exe, "--worker", w->device, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    w->pid = pid;
    w->to = fdopen(in[1], "w");
    w->from_fd = out[0];
    w->rpos = w->rlen = 0;
    char *line = NULL;
    size_t cap = 0;
    bool ok = read_line(w, &line, &cap, now() + 120);
    if (!ok || strncmp(line, "ready ", 6)) {
        fprintf(stderr, "tfuzz: worker for %s did not start: %s\n", w->token, ok ? line : "no answer");
        free(line);
        worker_stop(w, true);
        return false;
    }
    snprintf(w->target, sizeof w->target, "%s", line + 6);
    free(line);
    return true;
}

static void result_free(result *r)
{
    for (int j = 0; j < r->nout; j++) free(r->out[j].bytes);
    memset(r, 0, sizeof *r);
}

static int hexval(int c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

static hcq_dtype dt_named(const char *s)
{
    for (int t = 1; t < HCQ_DTYPE_COUNT; t++)
        if (!strcmp(hcq_dtype_name((hcq_dtype)t), s)) return (hcq_dtype)t;
    return HCQ_VOID;
}

static void worker_run(worker *w, const tf_prog *p, result *r)
{
    memset(r, 0, sizeof *r);
    if (w->pid <= 0 && !worker_start(w)) {
        r->status = 3;
        snprintf(r->msg, sizeof r->msg, "the worker does not start");
        return;
    }
    tf_write_text(w->to, p);
    fflush(w->to);
    char *line = NULL;
    size_t cap = 0;
    double deadline = now() + timeout_s;
    for (;;) {
        if (!read_line(w, &line, &cap, deadline)) {
            r->status = 3;
            snprintf(r->msg, sizeof r->msg, "the worker %s", now() >= deadline ? "timed out" : "died (crashed?)");
            worker_stop(w, true);
            break;
        }
        if (!strcmp(line, "ok")) break;
        if (!strncmp(line, "fatal ", 6)) { /* (it could not reopen its device) */
            r->status = 3;
            snprintf(r->msg, sizeof r->msg, "the worker stopped: %s", line + 6);
            worker_stop(w, true);
            break;
        }
        if (!strncmp(line, "err ", 4) || !strncmp(line, "skip ", 5)) {
            r->status = line[0] == 'e' ? 1 : 2;
            snprintf(r->msg, sizeof r->msg, "%s", line + (line[0] == 'e' ? 4 : 5));
            break;
        }
        if (strncmp(line, "out ", 4) || r->nout == TF_MAX_OUT) continue;
        char *save = NULL, *tok = strtok_r(line + 4, " ", &save);
        int j = r->nout++;
        r->out[j].dt = dt_named(tok);
        r->out[j].ndim = atoi(strtok_r(NULL, " ", &save));
        for (int d = 0; d < r->out[j].ndim && d < TF_MAX_DIMS; d++) r->out[j].shape[d] = atoll(strtok_r(NULL, " ", &save));
        char *hex = strtok_r(NULL, " ", &save);
        size_t n = hex && strcmp(hex, "-") ? strlen(hex) / 2 : 0;
        r->out[j].bytes = malloc(n ? n : 1);
        r->out[j].n = n;
        for (size_t k = 0; k < n; k++) r->out[j].bytes[k] = (uint8_t)(hexval(hex[2 * k]) << 4 | hexval(hex[2 * k + 1]));
    }
    free(line);
}

/* ** comparing */
typedef struct verdict {
    bool fail;
    int dev;    /* the first device that disagrees */
    int kind;   /* 1 error, 2 shape or dtype, 3 value, 4 died */
    int out, value;
    int64_t elem;
    char text[1024];
} verdict;

static bool elem_ok(hcq_dtype dt, const tf_rv *r, uint32_t g)
{
    if (r->f & RV_DC) return true;
    if (dt == HCQ_BOOL) return (g != 0) == (r->v != 0);
    if (!hcq_dtype_is_float(dt)) return g == r->b; /* integers: exact bits */
    if (r->f & RV_MOVED) return g == r->b;
    double gv = tf_from_bits(dt, g);
    if (isnan(r->v)) return isnan(gv);
    if (r->e == 0) return g == r->b;
    if (gv == r->v) return true; /* infinities */
    if (isnan(gv)) return false;
    return fabs(gv - r->v) <= r->e;
}

static void describe_elem(char *s, size_t n, hcq_dtype dt, uint32_t bits)
{
    if (dt == HCQ_BOOL) snprintf(s, n, "%d", bits != 0);
    else if (!hcq_dtype_is_float(dt)) snprintf(s, n, "%.0f", tf_from_bits(dt, bits));
    else snprintf(s, n, "0x%0*x (%.9g)", dt == HCQ_F32 ? 8 : 4, bits, tf_from_bits(dt, bits));
}

/* elements checked: bit-exact, within a bound, don't care; programs a
 * device skipped (per device) */
static uint64_t n_exact, n_bound, n_dc;
static uint64_t n_by_dt[HCQ_F64 + 1]; /* elements checked per output dtype: the mix the generator gave */
static uint64_t n_skipped[MAX_DEV];

static verdict judge(const tf_prog *p, const tf_ref *ref, worker *ws, int nw, result *rs, uint64_t *elems)
{
    verdict v = {0};
    for (int d = 0; d < nw && !v.fail; d++) {
        result *r = &rs[d];
        if (r->status == 2) {
            n_skipped[d]++;
            continue;
        }
        if (r->status == 1 || r->status == 3) {
            v = (verdict){.fail = true, .dev = d, .kind = r->status == 1 ? 1 : 4, .value = p->nout ? p->out[0] : 0};
            snprintf(v.text, sizeof v.text, "%s: %s", ws[d].token, r->msg);
            if (r->status == 1 && !strncmp(r->msg, "HCQ_", 4)) { /* "STATUS vN what: msg" names the value */
                const char *vv = strstr(r->msg, " v");
                if (vv) v.value = atoi(vv + 2);
            }
            break;
        }
        for (int j = 0; j < p->nout && !v.fail; j++) {
            const tf_tensor *t = &ref->t[p->out[j]];
            bool shape_same = r->nout > j && r->out[j].dt == t->dt && r->out[j].ndim == t->ndim;
            for (int k = 0; shape_same && k < t->ndim; k++) shape_same = r->out[j].shape[k] == t->shape[k];
            if (!shape_same) {
                v = (verdict){.fail = true, .dev = d, .kind = 2, .out = j, .value = p->out[j]};
                snprintf(v.text, sizeof v.text, "%s: v%d is %s with %d dims; the reference says %s with %d dims", ws[d].token,
                         p->out[j], r->nout > j ? hcq_dtype_name(r->out[j].dt) : "missing", r->nout > j ? r->out[j].ndim : 0,
                         hcq_dtype_name(t->dt), t->ndim);
                break;
            }
            size_t es = hcq_dtype_size(t->dt);
            for (int64_t i = 0; i < t->n; i++) {
                uint32_t g = 0;
                memcpy(&g, r->out[j].bytes + i * es, es);
                if (elems) { /* counted for the summary, not while shrinking */
                    (*elems)++;
                    if ((unsigned)t->dt <= HCQ_F64) n_by_dt[t->dt]++;
                    if (t->x[i].f & RV_DC) n_dc++;
                    else if (t->x[i].e > 0) n_bound++;
                    else n_exact++;
                }
                if (elem_ok(t->dt, &t->x[i], g)) continue;
                char got[64], want[64];
                describe_elem(got, sizeof got, t->dt, g);
                describe_elem(want, sizeof want, t->dt, t->x[i].b);
                v = (verdict){.fail = true, .dev = d, .kind = 3, .out = j, .value = p->out[j], .elem = i};
                snprintf(v.text, sizeof v.text, "%s: v%d[%lld] (%s, %s) is %s; the reference says %s%s", ws[d].token,
                         p->out[j], (long long)i, tf_op_name(p->ins[p->out[j]].op), hcq_dtype_name(t->dt), got, want,
                         t->x[i].f & RV_MOVED ? " (moved bits: exact)" : t->x[i].e > 0 ? "" : " (exact)");
                if (t->x[i].e > 0 && !(t->x[i].f & RV_MOVED)) {
                    size_t l = strlen(v.text);
                    snprintf(v.text + l, sizeof v.text - l, " within %.3g", t->x[i].e);
                }
                break;
            }
        }
    }
    return v;
}

/* runs p everywhere; the verdict, and the reference's complaint if it
 * rejects p (then nothing runs) */
/* devices that compile kernels (not the interpreter or a mock) take part
 * in the first `compiled_graphs` graphs only: their compiler is what costs */
static long compiled_graphs = -1, graph_index;

static bool interpreted(const worker *w) { return !strcmp(w->target, "ir") || !strncmp(w->target, "mock-", 5); }

static verdict run_all(const tf_prog *p, worker *ws, int nw, uint64_t *elems, bool *rejected)
{
    tf_ref ref = {0};
    char why[256];
    verdict v = {0};
    *rejected = !tf_ref_run(&ref, p, why, sizeof why);
    if (*rejected) {
        if (verbose) fprintf(stderr, "tfuzz: the reference rejects the program: %s\n", why);
        tf_ref_free(&ref);
        return v;
    }
    result rs[MAX_DEV];
    for (int d = 0; d < nw; d++) {
        if (compiled_graphs >= 0 && graph_index >= compiled_graphs && !interpreted(&ws[d])) {
            memset(&rs[d], 0, sizeof rs[d]);
            rs[d].status = 2;
            continue;
        }
        worker_run(&ws[d], p, &rs[d]);
    }
    v = judge(p, &ref, ws, nw, rs, elems);
    for (int d = 0; d < nw; d++) result_free(&rs[d]);
    tf_ref_free(&ref);
    return v;
}

/* ** shrinking */
/* keeps what the outputs need, renumbered */
static void dce(tf_prog *p)
{
    bool *live = calloc((size_t)p->n + 1, 1);
    int *map = calloc((size_t)p->n + 1, sizeof *map);
    for (int j = 0; j < p->nout; j++) live[p->out[j]] = true;
    for (int i = p->n - 1; i >= 0; i--)
        if (live[i])
            for (int k = 0; k < p->ins[i].nsrc; k++)
                if (p->ins[i].src[k] >= 0) live[p->ins[i].src[k]] = true;
    int n = 0;
    for (int i = 0; i < p->n; i++) {
        if (!live[i]) {
            free(p->ins[i].data);
            continue;
        }
        map[i] = n;
        tf_inst in = p->ins[i];
        for (int k = 0; k < in.nsrc; k++)
            if (in.src[k] >= 0) in.src[k] = map[in.src[k]];
        p->ins[n++] = in;
    }
    p->n = n;
    for (int j = 0; j < p->nout; j++) p->out[j] = map[p->out[j]];
    free(live);
    free(map);
}

typedef struct shrinker {
    worker *ws;
    int nw;
    int dev, kind;
    int runs, max_runs;
    double deadline;
} shrinker;

/* does q still fail the same way (the same device, the same kind)? */
static bool still_fails(shrinker *S, const tf_prog *q, verdict *out)
{
    if (S->runs >= S->max_runs || now() > S->deadline) return false;
    S->runs++;
    bool rejected;
    verdict v = run_all(q, S->ws, S->nw, NULL, &rejected);
    if (rejected || !v.fail || v.dev != S->dev || v.kind != S->kind) return false;
    *out = v;
    return true;
}

/* value i of p as an input holding the reference's values (false when
 * some are "don't care", or i is already a leaf) */
static bool as_input(const tf_prog *p, int i, tf_prog *q)
{
    const tf_inst *in = &p->ins[i];
    if (in->op == TF_IN || in->op == TF_SCALAR) return false;
    tf_ref ref = {0};
    char why[256];
    bool ok = true;
    for (int k = 0; k <= i && ok; k++) ok = tf_ref_step(&ref, p, k, why, sizeof why);
    if (!ok) {
        tf_ref_free(&ref);
        return false;
    }
    const tf_tensor *t = &ref.t[i];
    size_t es = hcq_dtype_size(t->dt);
    uint8_t *data = malloc((size_t)(t->n ? t->n : 1) * es);
    for (int64_t k = 0; k < t->n && ok; k++) {
        if (t->x[k].f & RV_DC) ok = false;
        memcpy(data + k * es, &t->x[k].b, es);
    }
    if (t->weak) ok = false;
    if (ok) {
        tf_prog_copy(q, p);
        tf_inst *ni = &q->ins[i];
        free(ni->data);
        memset(ni, 0, sizeof *ni);
        for (int k = 0; k < TF_MAX_LIST; k++) ni->src[k] = -1;
        ni->op = TF_IN;
        ni->dt = t->dt;
        ni->niv = t->ndim;
        memcpy(ni->iv, t->shape, sizeof t->shape);
        ni->data = data;
        ni->nbytes = (size_t)t->n * es;
        data = NULL;
        dce(q);
    }
    free(data);
    tf_ref_free(&ref);
    return ok;
}

static void shrink(tf_prog *p, verdict *v, worker *ws, int nw)
{
    shrinker S = {.ws = ws, .nw = nw, .dev = v->dev, .kind = v->kind, .max_runs = 400, .deadline = now() + 120};
    tf_prog q;
    verdict nv;
    /* only the failing value */
    tf_prog_copy(&q, p);
    q.out[0] = v->value;
    q.nout = 1;
    dce(&q);
    if (still_fails(&S, &q, &nv)) {
        tf_prog_free(p);
        *p = q;
        *v = nv;
    } else tf_prog_free(&q);
    for (bool changed = true; changed;) {
        changed = false;
        /* cut: a computed value becomes an input of its reference values */
        for (int i = p->n - 1; i >= 0; i--) {
            if (i >= p->n || !as_input(p, i, &q)) continue;
            if (still_fails(&S, &q, &nv)) {
                tf_prog_free(p);
                *p = q;
                *v = nv;
                changed = true;
            } else tf_prog_free(&q);
        }
        /* simpler data: halves of an input's elements set to zero bits */
        for (int i = 0; i < p->n; i++) {
            if (p->ins[i].op != TF_IN || !p->ins[i].nbytes) continue;
            size_t es = hcq_dtype_size(p->ins[i].dt), n = p->ins[i].nbytes / es;
            for (size_t chunk = n; chunk >= 1; chunk /= 2) {
                for (size_t at = 0; at < n; at += chunk) {
                    tf_prog_copy(&q, p);
                    uint8_t *d = q.ins[i].data;
                    bool any = false;
                    for (size_t k = at; k < at + chunk && k < n; k++)
                        for (size_t b = 0; b < es; b++) any |= d[k * es + b] != 0, d[k * es + b] = 0;
                    if (any && still_fails(&S, &q, &nv)) {
                        tf_prog_free(p);
                        *p = q;
                        *v = nv;
                        changed = true;
                    } else tf_prog_free(&q);
                }
                if (chunk == 1) break;
            }
        }
        if (S.runs >= S.max_runs || now() > S.deadline) break;
    }
}

static void print_repro(FILE *f, const tf_prog *p, const verdict *v, const char *why)
{
    fprintf(f, "\n== tfuzz: %s\n   %s\n", why, v->text);
    fprintf(f, "-- repro (%d calls) as C, with hcq_ctx *ctx on that device:\n", p->n);
    tf_write_c(f, p);
    fprintf(f, "    /* then read v%d%s */\n", v->value, v->kind == 3 ? ": the element above" : "");
    fprintf(f, "-- as a program (save it to a file; tfuzz --replay FILE runs it):\n");
    tf_write_text(f, p);
    fprintf(f, "--\n");
}

/* ** devices */
static int list_devices(const char *env_mock, const char *cfg, char out[][64], int max, bool gpus)
{
    int fds[2];
    if (pipe(fds)) return 0;
    pid_t pid = fork();
    if (!pid) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        unsetenv("HCQ_MOCK");
        unsetenv("HCQ_MOCK_CONFIG");
        if (env_mock) setenv("HCQ_MOCK", env_mock, 1);
        if (cfg) setenv("HCQ_MOCK_CONFIG", cfg, 1);
        execl(self_exe, self_exe, "--list", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char name[64];
    int n = 0;
    while (n < max && fscanf(f, "%63s", name) == 1)
        if (!gpus || strcmp(name, "CPU")) snprintf(out[n++], 64, "%s", name);
    fclose(f);
    waitpid(pid, NULL, 0);
    return n;
}

static int default_devices(worker *ws)
{
    char names[MAX_DEV][64], tok[96];
    int nw = 0;
    const char *env = getenv("HCQ_TEST_DEVICES");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t && nw < MAX_DEV; t = strtok_r(NULL, " ", &save))
            if (parse_token(&ws[nw], t)) nw++;
        free(copy);
        return nw;
    }
    int n = list_devices(NULL, NULL, names, MAX_DEV, false);
    for (int i = 0; i < n && nw < MAX_DEV; i++) parse_token(&ws[nw++], names[i]);
    if (nw < MAX_DEV) parse_token(&ws[nw++], "CPU+ir");
    if (nw < MAX_DEV) parse_token(&ws[nw++], "CPU+sym");
    n = list_devices("1", NULL, names, MAX_DEV, true);
    for (int i = 0; i < n && nw < MAX_DEV; i++) {
        snprintf(tok, sizeof tok, "mock:%.40s", names[i]);
        parse_token(&ws[nw++], tok);
    }
    n = list_devices("1", "amd=gfx942", names, MAX_DEV, true);
    for (int i = 0; i < n && nw < MAX_DEV; i++)
        if (!strncmp(names[i], "AMD", 3)) {
            snprintf(tok, sizeof tok, "mock[amd=gfx942]:%.40s", names[i]);
            parse_token(&ws[nw++], tok);
        }
    return nw;
}

static int usage(void)
{
    fprintf(stderr, "usage: tfuzz [--graphs N] [--seed S] [--seconds T] [--ops K] [--devices \"TOKENS\"] [--keep-going]\n"
                    "             [--compiled-graphs N] [--timeout S] [--verbose] | --replay FILE | --c FILE | --worker DEVICE\n"
                    "             | --list\n");
    return 2;
}

int main(int argc, char **argv)
{
    long graphs = 200, ops = 8;
    uint64_t seed = 1;
    double seconds = 0;
    const char *devices = NULL, *replay = NULL;
    bool keep_going = false;
    ssize_t len = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (len <= 0) return fprintf(stderr, "tfuzz: cannot find its own executable\n"), 2;
    self_exe[len] = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--worker") && v) return tf_worker(v, stdin, stdout);
        if (!strcmp(a, "--c") && v) { /* a saved program as C calls */
            FILE *f = fopen(v, "r");
            tf_prog p;
            char err[256];
            if (!f || !tf_read_text(f, &p, err, sizeof err)) return fprintf(stderr, "tfuzz: cannot read %s\n", v), 2;
            fclose(f);
            tf_write_c(stdout, &p);
            tf_prog_free(&p);
            return 0;
        }
        if (!strcmp(a, "--list")) {
            char names[32][16];
            uint32_t n = hcq_device_list(names, 32);
            for (uint32_t k = 0; k < n && k < 32; k++) printf("%s\n", names[k]);
            return 0;
        }
        if (!strcmp(a, "--graphs") && v) graphs = atol(v), i++;
        else if (!strcmp(a, "--seed") && v) seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--seconds") && v) seconds = atof(v), i++;
        else if (!strcmp(a, "--ops") && v) ops = atol(v), i++;
        else if (!strcmp(a, "--compiled-graphs") && v) compiled_graphs = atol(v), i++;
        else if (!strcmp(a, "--devices") && v) devices = v, i++;
        else if (!strcmp(a, "--timeout") && v) timeout_s = atof(v), i++;
        else if (!strcmp(a, "--replay") && v) replay = v, i++;
        else if (!strcmp(a, "--keep-going")) keep_going = true;
        else if (!strcmp(a, "--verbose")) verbose = 1;
        else return usage();
    }
    signal(SIGPIPE, SIG_IGN);
    worker ws[MAX_DEV];
    int nw = 0;
    if (devices) {
        char *copy = strdup(devices), *save = NULL;
        for (char *t = strtok_r(copy, " ", &save); t && nw < MAX_DEV; t = strtok_r(NULL, " ", &save))
            if (parse_token(&ws[nw], t)) nw++;
        free(copy);
    } else nw = default_devices(ws);
    if (!nw) return fprintf(stderr, "tfuzz: no devices\n"), 2;
    int started = 0;
    for (int d = 0; d < nw; d++) started += worker_start(&ws[d]);
    if (started < nw) {
        for (int d = 0; d < nw; d++) worker_stop(&ws[d], true);
        return 2;
    }
    printf("tfuzz: devices:");
    for (int d = 0; d < nw; d++) printf(" %s (%s)", ws[d].token, ws[d].target);
    printf("\n");
    fflush(stdout);

    double t0 = now();
    uint64_t elems = 0;
    long run = 0, failures = 0, rejected_n = 0;
    if (replay) {
        FILE *f = fopen(replay, "r");
        tf_prog p;
        char err[256];
        if (!f || !tf_read_text(f, &p, err, sizeof err)) {
            fprintf(stderr, "tfuzz: cannot read %s: %s\n", replay, f ? err : strerror(errno));
            return 2;
        }
        fclose(f);
        bool rej;
        verdict v = run_all(&p, ws, nw, &elems, &rej);
        run = 1;
        if (rej) {
            char why[256];
            tf_ref ref = {0};
            tf_ref_run(&ref, &p, why, sizeof why);
            tf_ref_free(&ref);
            fprintf(stderr, "tfuzz: the reference rejects the program: %s\n", why);
            rejected_n = 1;
        } else if (v.fail) {
            failures++;
            shrink(&p, &v, ws, nw);
            print_repro(stdout, &p, &v, "replayed program disagrees");
        }
        tf_prog_free(&p);
    } else {
        for (long k = 0; k < graphs; k++) {
            if (seconds > 0 && now() - t0 > seconds) break;
            tf_prog p;
            uint64_t s = seed + (uint64_t)k;
            graph_index = k;
            tf_generate(s, &p, (int)ops);
            if (!p.nout) {
                tf_prog_free(&p);
                continue;
            }
            bool rej;
            verdict v = run_all(&p, ws, nw, &elems, &rej);
            run++;
            if (rej) rejected_n++;
            if (verbose) printf("seed %llu: %d calls, %s\n", (unsigned long long)s, p.n, v.fail ? "FAIL" : "ok");
            if (v.fail) {
                failures++;
                char why[96];
                snprintf(why, sizeof why, "seed %llu disagrees (--seed %llu --graphs 1 reruns it)", (unsigned long long)s,
                         (unsigned long long)s);
                if (verbose) print_repro(stdout, &p, &v, why);
                else printf("\n== tfuzz: %s\n   %s\n   shrinking...\n", why, v.text);
                fflush(stdout);
                shrink(&p, &v, ws, nw);
                print_repro(stdout, &p, &v, "shrunk");
                fflush(stdout);
            }
            tf_prog_free(&p);
            if (failures && !keep_going) break;
        }
    }
    for (int d = 0; d < nw; d++) worker_stop(&ws[d], false);
    int ninterp = 0;
    for (int d = 0; d < nw; d++) ninterp += interpreted(&ws[d]);
    printf("tfuzz: %ld graphs (seeds %llu..%llu) on %d devices", run, (unsigned long long)seed,
           (unsigned long long)(seed + (uint64_t)(run ? run - 1 : 0)), nw);
    if (compiled_graphs >= 0 && ninterp < nw && run > compiled_graphs)
        printf(" (the %d compiling kernels on the first %ld)", nw - ninterp, compiled_graphs);
    printf(", each compared with the reference: %llu elements checked (%llu bit-exact, %llu within an error bound, %llu"
           " don't care), %ld disagreements, %.1f s\n",
           (unsigned long long)elems, (unsigned long long)n_exact, (unsigned long long)n_bound, (unsigned long long)n_dc,
           failures, now() - t0);
    printf("tfuzz: elements by dtype:");
    for (int t = 0; t <= HCQ_F64; t++)
        if (n_by_dt[t]) printf(" %s %llu", hcq_dtype_name((hcq_dtype)t), (unsigned long long)n_by_dt[t]);
    printf("\n");
    for (int d = 0; d < nw; d++)
        if (n_skipped[d]) printf("tfuzz: %s skipped %llu programs (what it does not run: bf16 where missing, or what a variable batch cannot express)\n", ws[d].token, (unsigned long long)n_skipped[d]);
    if (rejected_n) printf("tfuzz: the reference rejected %ld generated programs (a generator bug)\n", rejected_n);
    return failures || rejected_n ? 1 : 0;
}
