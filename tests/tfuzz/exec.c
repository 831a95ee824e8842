/* The worker: runs programs on one device through the public API and
 * writes back the outputs' bytes. One context lives as long as the
 * worker, so the kernel and program caches are exercised across
 * programs; each program's tensors are released afterwards. */
#include "tfuzz.h"

#include <stdlib.h>
#include <string.h>

static hcq_tensor *call(hcq_ctx *ctx, const tf_inst *in, hcq_tensor **v)
{
    const int *s = in->src;
#define V(j) (s[j] >= 0 ? v[s[j]] : NULL)
    hcq_tensor *a = in->nsrc > 0 ? V(0) : NULL, *b = in->nsrc > 1 ? V(1) : NULL, *c = in->nsrc > 2 ? V(2) : NULL;
    const int64_t *iv = in->iv;
    int axes[TF_MAX_IV];
    for (int i = 0; i < in->niv; i++) axes[i] = (int)iv[i];
    const int *ax = in->niv ? axes : NULL;
    switch (in->op) {
    case TF_IN: return hcq_from_data(ctx, in->dt, in->niv ? iv : NULL, in->niv, in->nbytes ? in->data : "");
    case TF_FULL: return hcq_full(ctx, in->dt, in->niv ? iv : NULL, in->niv, in->fv);
    case TF_SCALAR: return hcq_scalar(ctx, in->fv);
    case TF_ARANGE: return hcq_arange(ctx, in->dt, (double)iv[0], (double)iv[1], (double)iv[2]);
    case TF_EYE: return hcq_eye(ctx, in->dt, iv[0], iv[1]);
    case TF_NEG: return hcq_neg(a);
    case TF_EXP: return hcq_exp(a);
    case TF_LOG: return hcq_log(a);
    case TF_EXP2: return hcq_exp2(a);
    case TF_LOG2: return hcq_log2(a);
    case TF_SQRT: return hcq_sqrt(a);
    case TF_RSQRT: return hcq_rsqrt(a);
    case TF_RECIP: return hcq_recip(a);
    case TF_SIN: return hcq_sin(a);
    case TF_COS: return hcq_cos(a);
    case TF_ABS: return hcq_abs(a);
    case TF_SIGN: return hcq_sign(a);
    case TF_TRUNC: return hcq_trunc(a);
    case TF_RELU: return hcq_relu(a);
    case TF_SIGMOID: return hcq_sigmoid(a);
    case TF_TANH: return hcq_tanh(a);
    case TF_GELU: return hcq_gelu(a);
    case TF_SILU: return hcq_silu(a);
    case TF_NOT: return hcq_logical_not(a);
    case TF_CAST: return hcq_cast(a, in->dt);
    case TF_BITCAST: return hcq_bitcast(a, in->dt);
    case TF_ADD: return hcq_add(a, b);
    case TF_SUB: return hcq_sub(a, b);
    case TF_MUL: return hcq_mul(a, b);
    case TF_DIV: return hcq_div(a, b);
    case TF_IDIV: return hcq_idiv(a, b);
    case TF_MOD: return hcq_mod(a, b);
    case TF_POW: return hcq_pow(a, b);
    case TF_MAXIMUM: return hcq_maximum(a, b);
    case TF_MINIMUM: return hcq_minimum(a, b);
    case TF_LT: return hcq_lt(a, b);
    case TF_LE: return hcq_le(a, b);
    case TF_GT: return hcq_gt(a, b);
    case TF_GE: return hcq_ge(a, b);
    case TF_EQ: return hcq_eq(a, b);
    case TF_NE: return hcq_ne(a, b);
    case TF_AND: return hcq_logical_and(a, b);
    case TF_OR: return hcq_logical_or(a, b);
    case TF_XOR: return hcq_logical_xor(a, b);
    case TF_BNOT: return hcq_bitwise_not(a);
    case TF_SHL: return hcq_shl(a, b);
    case TF_SHR: return hcq_shr(a, b);
    case TF_ADD_S: return hcq_add_s(a, in->fv);
    case TF_SUB_S: return hcq_sub_s(a, in->fv);
    case TF_MUL_S: return hcq_mul_s(a, in->fv);
    case TF_DIV_S: return hcq_div_s(a, in->fv);
    case TF_POW_S: return hcq_pow_s(a, in->fv);
    case TF_MAXIMUM_S: return hcq_maximum_s(a, in->fv);
    case TF_MINIMUM_S: return hcq_minimum_s(a, in->fv);
    case TF_WHERE: return hcq_where(a, b, c);
    case TF_SUM: return hcq_sum(a, ax, in->niv, in->ia);
    case TF_PROD: return hcq_prod(a, ax, in->niv, in->ia);
    case TF_MAX: return hcq_max(a, ax, in->niv, in->ia);
    case TF_MIN: return hcq_min(a, ax, in->niv, in->ia);
    case TF_MEAN: return hcq_mean(a, ax, in->niv, in->ia);
    case TF_VAR: return hcq_var(a, ax, in->niv, in->ia, in->ib);
    case TF_STD: return hcq_std(a, ax, in->niv, in->ia, in->ib);
    case TF_ARGMAX: return hcq_argmax(a, in->ia, in->ib);
    case TF_ARGMIN: return hcq_argmin(a, in->ia, in->ib);
    case TF_RESHAPE: return hcq_reshape(a, in->niv ? iv : NULL, in->niv);
    case TF_PERMUTE: return hcq_permute(a, ax, in->niv);
    case TF_TRANSPOSE: return hcq_transpose(a, in->ia, in->ib);
    case TF_EXPAND: return hcq_expand(a, in->niv ? iv : NULL, in->niv);
    case TF_PAD: return hcq_pad(a, in->niv ? iv : NULL, in->niv / 2, in->fv);
    case TF_SHRINK: return hcq_shrink(a, in->niv ? iv : NULL, in->niv / 2);
    case TF_SLICE: return hcq_slice(a, in->ia, iv[0], iv[1], iv[2]);
    case TF_FLIP: return hcq_flip(a, ax, in->niv);
    case TF_CAT:
    case TF_STACK: {
        hcq_tensor *parts[TF_MAX_LIST];
        for (int j = 0; j < in->nsrc; j++) parts[j] = V(j);
        return in->op == TF_CAT ? hcq_cat(parts, in->nsrc, in->ia) : hcq_stack(parts, in->nsrc, in->ia);
    }
    case TF_REPEAT: return hcq_repeat(a, in->niv ? iv : NULL, in->niv);
    case TF_SQUEEZE: return hcq_squeeze(a, in->ia);
    case TF_UNSQUEEZE: return hcq_unsqueeze(a, in->ia);
    case TF_FLATTEN: return hcq_flatten(a, in->ia, in->ib);
    case TF_CONTIGUOUS: return hcq_contiguous(a);
    case TF_MATMUL: return hcq_matmul(a, b);
    case TF_LINEAR: return hcq_linear(a, b, c);
    case TF_CONV2D: {
        hcq_conv2d_opts o = {{(int)iv[0], (int)iv[1]}, {(int)iv[2], (int)iv[3]}, {(int)iv[4], (int)iv[5]}, (int)iv[6]};
        return hcq_conv2d(a, b, c, &o);
    }
    case TF_AVGPOOL:
    case TF_MAXPOOL: {
        hcq_pool2d_opts o = {{(int)iv[0], (int)iv[1]}, {(int)iv[2], (int)iv[3]}, {(int)iv[4], (int)iv[5]}};
        return in->op == TF_AVGPOOL ? hcq_avg_pool2d(a, &o) : hcq_max_pool2d(a, &o);
    }
    case TF_SOFTMAX: return hcq_softmax(a, in->ia);
    case TF_LOGSOFTMAX: return hcq_log_softmax(a, in->ia);
    case TF_LAYERNORM: return hcq_layernorm(a, in->ia, b, c, in->fv);
    case TF_XENT: return hcq_cross_entropy(a, b);
    case TF_EMBEDDING: return hcq_embedding(a, b);
    case TF_GATHER: return hcq_gather(a, in->ia, b);
    default: return NULL;
    }
#undef V
}

static void reply_error(FILE *out, const char *what, int at)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", hcq_error_message());
    for (char *c = msg; *c; c++)
        if (*c == '\n') *c = ' ';
    fprintf(out, "err %s v%d %s: %s\n", hcq_status_name(hcq_error_status()), at, what, msg);
}

/* bf16 where the device has it (the tensor layer refuses it elsewhere) */
static bool uses_bf16(const tf_prog *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->ins[i].dt == HCQ_BF16) return true;
    return false;
}

/* ** variable batch (a +sym device): the program through a JIT whose
 * inputs of the leading size B have that dim declared a variable; traced
 * at B + 1 and B + 2 (rows repeated), replayed at B, so its outputs are the
 * symbolic kernels' at a size they were not traced at. A program the
 * tracing refuses (HCQ_ENOTSUP: what the variable cannot express yet;
 * HCQ_EINVAL: a fixed size in the program that does not follow B) is
 * skipped. */
#define TF_MAX_IN 64 /* a JIT's inputs at most */

typedef struct sym_run {
    const tf_prog *p;
    int nin, idx[TF_MAX_IN]; /* the inputs: instruction indexes */
} sym_run;

static hcq_status sym_fn(hcq_ctx *ctx, hcq_tensor *const *in, int nin, hcq_tensor **out, int nout, void *user)
{
    (void)nin, (void)nout;
    const sym_run *r = user;
    hcq_tensor **v = calloc((size_t)r->p->n + 1, sizeof *v);
    if (!v) return HCQ_ENOMEM;
    hcq_status s = HCQ_OK;
    for (int i = 0, k = 0; i < r->p->n && !s; i++) {
        v[i] = k < r->nin && r->idx[k] == i ? in[k++] : call(ctx, &r->p->ins[i], v);
        if (!v[i]) s = hcq_error_status() ? hcq_error_status() : HCQ_EINVAL;
    }
    for (int j = 0; j < r->p->nout && !s; j++) out[j] = v[r->p->out[j]];
    free(v);
    return s;
}

/* input i of the program with `rows` rows (its first dim B: rows repeated) */
static hcq_tensor *sym_input(hcq_ctx *ctx, const tf_inst *in, int64_t b, int64_t rows)
{
    if (!in->niv || in->iv[0] != b) return call(ctx, in, NULL);
    int64_t shape[TF_MAX_IV];
    memcpy(shape, in->iv, (size_t)in->niv * sizeof *shape);
    shape[0] = rows;
    size_t row = b ? in->nbytes / (size_t)b : 0;
    uint8_t *d = malloc(row * (size_t)rows + 1);
    for (int64_t r = 0; r < rows; r++) memcpy(d + (size_t)r * row, (const uint8_t *)in->data + (size_t)(r % b) * row, row);
    hcq_tensor *t = hcq_from_data(ctx, in->dt, shape, in->niv, d);
    free(d);
    return t;
}

static hcq_tensor **run_sym(hcq_ctx *ctx, const tf_prog *p, FILE *out, hcq_jit **jit)
{
    static sym_run r;
    r = (sym_run){.p = p};
    int64_t b = 0;
    for (int i = 0; i < p->n; i++)
        if (p->ins[i].op == TF_IN && r.nin < TF_MAX_IN) {
            r.idx[r.nin++] = i;
            if (!b && p->ins[i].niv && p->ins[i].iv[0] >= 2) b = p->ins[i].iv[0];
        }
    if (!b || !p->nout) {
        fprintf(out, "skip no input with a batch\n");
        return NULL;
    }
    hcq_jit *j = *jit = hcq_jit_create(ctx, sym_fn, &r);
    hcq_status s = j ? HCQ_OK : hcq_error_status();
    for (int k = 0; k < r.nin && !s; k++)
        if (p->ins[r.idx[k]].niv && p->ins[r.idx[k]].iv[0] == b) s = hcq_jit_dim(j, k, 0, "batch", 1, b + 7);
    static hcq_tensor *outs[TF_MAX_OUT];
    for (int run = 0; run < 3 && !s; run++) {
        int64_t rows = run == 0 ? b + 1 : run == 1 ? b + 2 : b;
        hcq_tensor *in[TF_MAX_IN];
        for (int k = 0; k < r.nin && !s; k++)
            if (!(in[k] = sym_input(ctx, &p->ins[r.idx[k]], b, rows))) s = hcq_error_status();
        if (!s) s = hcq_jit_run(j, in, r.nin, outs, p->nout);
        if (s && run < 2 && (s == HCQ_ENOTSUP || s == HCQ_EINVAL)) {
            fprintf(out, "skip variable batch: %s\n", hcq_status_name(s));
            return NULL;
        }
    }
    if (s) {
        reply_error(out, "variable batch", p->out[0]);
        return NULL;
    }
    return outs;
}

static void run_one(hcq_ctx *ctx, const tf_prog *p, FILE *out, bool sym)
{
    size_t mark = hcq_ctx_mark(ctx);
    hcq_tensor **v = calloc((size_t)p->n + 1, sizeof *v), *outs[TF_MAX_OUT];
    hcq_jit *jit = NULL;
    if (sym) {
        hcq_tensor **o = run_sym(ctx, p, out, &jit);
        if (!o) goto done;
        memcpy(outs, o, (size_t)p->nout * sizeof *outs);
    } else {
        for (int i = 0; i < p->n; i++) {
            v[i] = call(ctx, &p->ins[i], v);
            if (!v[i]) {
                if (hcq_error_status() == HCQ_ENOTSUP && uses_bf16(p)) fprintf(out, "skip bf16\n");
                else reply_error(out, tf_op_name(p->ins[i].op), i);
                goto done;
            }
        }
        for (int j = 0; j < p->nout; j++) outs[j] = v[p->out[j]];
    }
    if (p->nout && hcq_realize_all(outs, p->nout)) {
        reply_error(out, "realize", p->out[0]);
        goto done;
    }
    for (int j = 0; j < p->nout; j++) {
        hcq_tensor *t = outs[j];
        hcq_dtype dt = hcq_tensor_dtype(t);
        int64_t n = hcq_tensor_numel(t);
        size_t es = hcq_dtype_size(dt), size = (size_t)n * es;
        uint8_t *buf = malloc(size ? size : 1);
        if (hcq_tensor_read(t, buf, size)) {
            free(buf);
            reply_error(out, "read", p->out[j]);
            goto done;
        }
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        fprintf(out, "out %s %d", hcq_dtype_name(dt), nd);
        for (int d = 0; d < nd; d++) fprintf(out, " %lld", (long long)shape[d]);
        fprintf(out, " ");
        for (size_t k = 0; k < size; k++) fprintf(out, "%02x", buf[k]);
        fprintf(out, "%s\n", size ? "" : "-");
        free(buf);
    }
    fprintf(out, "ok\n");
done:
    fflush(out);
    free(v);
    hcq_jit_destroy(jit);
    hcq_ctx_release(ctx, mark);
}

int tf_worker(const char *device, FILE *in, FILE *out)
{
    hcq_device *dev = hcq_device_open(device);
    if (!dev) {
        fprintf(out, "fatal opening %s: %s\n", device, hcq_error_message());
        fflush(out);
        return 1;
    }
    hcq_ctx *ctx = hcq_ctx_create(dev);
    if (!ctx) {
        fprintf(out, "fatal creating a context: %s\n", hcq_error_message());
        fflush(out);
        return 1;
    }
    bool sym = getenv("HCQ_TFUZZ_SYM") && *getenv("HCQ_TFUZZ_SYM") == '1';
    fprintf(out, "ready %s%s\n", hcq_device_get_props(dev)->target, sym ? "+sym" : "");
    fflush(out);
    for (long served = 1;; served++) {
        /* A context keeps every program it built; thousands of distinct
         * kernels exhaust a mock GPU's memory (each program is a device
         * allocation of its own), so start afresh now and then. */
        if (served % 1000 == 0) {
            hcq_ctx_destroy(ctx);
            if (!(ctx = hcq_ctx_create(dev))) {
                fprintf(out, "fatal creating a context: %s\n", hcq_error_message());
                fflush(out);
                return 1;
            }
        }
        tf_prog p;
        char err[256];
        int c = fgetc(in);
        if (c == EOF) break;
        ungetc(c, in);
        if (!tf_read_text(in, &p, err, sizeof err)) {
            fprintf(out, "err HCQ_EINVAL v0 parse: %s\n", err);
            fflush(out);
            continue;
        }
        run_one(ctx, &p, out, sym);
        tf_prog_free(&p);
        /* a fault or hang is sticky: every later program (the shrinker's
         * candidates above all) would fail with this one's error, so the
         * next runs on the device opened afresh */
        if (hcq_device_status(dev) != HCQ_OK) {
            hcq_ctx_destroy(ctx);
            hcq_device_close(dev);
            if (!(dev = hcq_device_open(device)) || !(ctx = hcq_ctx_create(dev))) {
                fprintf(out, "fatal reopening %s after its fault: %s\n", device, hcq_error_message());
                fflush(out);
                if (dev) hcq_device_close(dev);
                return 1;
            }
        }
    }
    hcq_ctx_destroy(ctx);
    hcq_device_close(dev);
    return 0;
}
