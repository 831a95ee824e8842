/* Programs: the op table, memory, the text form workers read, and the C
 * form a repro prints. */
#include "tfuzz.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[TF_OP_COUNT] = {
#define TF_NAME(e, s) s,
    TF_OPS(TF_NAME)
#undef TF_NAME
};

const char *tf_op_name(int op) { return op >= 0 && op < TF_OP_COUNT ? op_names[op] : "?"; }

int tf_op_from_name(const char *s)
{
    for (int i = 0; i < TF_OP_COUNT; i++)
        if (!strcmp(op_names[i], s)) return i;
    return -1;
}

void tf_prog_free(tf_prog *p)
{
    for (int i = 0; i < p->n; i++) free(p->ins[i].data);
    free(p->ins);
    memset(p, 0, sizeof *p);
}

tf_inst *tf_prog_add(tf_prog *p)
{
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 16;
        tf_inst *ni = realloc(p->ins, (size_t)nc * sizeof *ni);
        if (!ni) return NULL;
        p->ins = ni;
        p->cap = nc;
    }
    tf_inst *in = &p->ins[p->n++];
    memset(in, 0, sizeof *in);
    for (int i = 0; i < TF_MAX_LIST; i++) in->src[i] = -1;
    return in;
}

void tf_prog_copy(tf_prog *dst, const tf_prog *src)
{
    memset(dst, 0, sizeof *dst);
    for (int i = 0; i < src->n; i++) {
        tf_inst *d = tf_prog_add(dst);
        if (!d) abort();
        *d = src->ins[i];
        if (src->ins[i].data) {
            d->data = malloc(src->ins[i].nbytes ? src->ins[i].nbytes : 1);
            if (!d->data) abort();
            memcpy(d->data, src->ins[i].data, src->ins[i].nbytes);
        }
    }
    memcpy(dst->out, src->out, sizeof dst->out);
    dst->nout = src->nout;
    dst->seed = src->seed;
}

/* ** text: "<op> dt=f32 src=0,1 iv=2,3 fv=0x1p+0 ia=1 ib=0 data=3f800000..." */
void tf_write_text(FILE *f, const tf_prog *p)
{
    for (int i = 0; i < p->n; i++) {
        const tf_inst *in = &p->ins[i];
        fprintf(f, "%s", tf_op_name(in->op));
        if (in->dt) fprintf(f, " dt=%s", hcq_dtype_name(in->dt));
        if (in->nsrc) {
            fprintf(f, " src=");
            for (int j = 0; j < in->nsrc; j++) fprintf(f, "%s%d", j ? "," : "", in->src[j]);
        }
        if (in->niv) {
            fprintf(f, " iv=");
            for (int j = 0; j < in->niv; j++) fprintf(f, "%s%" PRId64, j ? "," : "", in->iv[j]);
        }
        if (in->fv != 0 || signbit(in->fv)) {
            uint64_t u;
            memcpy(&u, &in->fv, 8);
            fprintf(f, " fv=%016" PRIx64, u);
        }
        if (in->ia) fprintf(f, " ia=%d", in->ia);
        if (in->ib) fprintf(f, " ib=%d", in->ib);
        if (in->data) {
            fprintf(f, " data=");
            for (size_t j = 0; j < in->nbytes; j++) fprintf(f, "%02x", ((const uint8_t *)in->data)[j]);
            if (!in->nbytes) fprintf(f, "-");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "out");
    for (int j = 0; j < p->nout; j++) fprintf(f, " %d", p->out[j]);
    fprintf(f, "\nend\n");
}

static int parse_ints(const char *s, int64_t *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *e;
        out[n++] = strtoll(s, &e, 10);
        if (e == s) return -1;
        s = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') return -1;
    }
    return *s ? -1 : n;
}

static hcq_dtype dtype_from_name(const char *s)
{
    for (int t = 1; t < HCQ_DTYPE_COUNT; t++)
        if (!strcmp(hcq_dtype_name((hcq_dtype)t), s)) return (hcq_dtype)t;
    return HCQ_VOID;
}

bool tf_read_text(FILE *f, tf_prog *p, char *err, size_t errsz)
{
    memset(p, 0, sizeof *p);
    size_t cap = 1 << 16;
    char *line = malloc(cap);
    if (!line) return snprintf(err, errsz, "out of memory"), false;
    bool ok = true;
    for (;;) {
        size_t len = 0;
        int c;
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if (len + 1 >= cap) {
                char *nl = realloc(line, cap * 2);
                if (!nl) {
                    snprintf(err, errsz, "out of memory");
                    ok = false;
                    goto done;
                }
                line = nl;
                cap *= 2;
            }
            line[len++] = (char)c;
        }
        line[len] = 0;
        if (c == EOF && !len) break;
        if (!len || line[0] == '#') continue;
        if (!strcmp(line, "end")) break;
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        if (!strcmp(tok, "out")) {
            p->nout = 0;
            while ((tok = strtok_r(NULL, " ", &save)) && p->nout < TF_MAX_OUT) p->out[p->nout++] = atoi(tok);
            continue;
        }
        int op = tf_op_from_name(tok);
        tf_inst *in = op >= 0 ? tf_prog_add(p) : NULL;
        if (!in) {
            snprintf(err, errsz, "line %d: unknown op `%s`", p->n + 1, tok);
            ok = false;
            goto done;
        }
        in->op = op;
        while ((tok = strtok_r(NULL, " ", &save))) {
            char *eq = strchr(tok, '=');
            if (!eq) continue;
            *eq = 0;
            const char *k = tok, *v = eq + 1;
            int64_t tmp[TF_MAX_IV];
            if (!strcmp(k, "dt")) in->dt = dtype_from_name(v);
            else if (!strcmp(k, "src")) {
                int n = parse_ints(v, tmp, TF_MAX_LIST);
                if (n < 0) goto bad;
                in->nsrc = n;
                for (int j = 0; j < n; j++) in->src[j] = (int)tmp[j];
            } else if (!strcmp(k, "iv")) {
                int n = parse_ints(v, in->iv, TF_MAX_IV);
                if (n < 0) goto bad;
                in->niv = n;
            } else if (!strcmp(k, "fv")) {
                uint64_t u = strtoull(v, NULL, 16);
                memcpy(&in->fv, &u, 8);
            } else if (!strcmp(k, "ia")) in->ia = atoi(v);
            else if (!strcmp(k, "ib")) in->ib = atoi(v);
            else if (!strcmp(k, "data")) {
                size_t n = !strcmp(v, "-") ? 0 : strlen(v) / 2;
                in->data = malloc(n ? n : 1);
                if (!in->data) goto bad;
                in->nbytes = n;
                for (size_t j = 0; j < n; j++) {
                    unsigned x;
                    if (sscanf(v + 2 * j, "%2x", &x) != 1) goto bad;
                    ((uint8_t *)in->data)[j] = (uint8_t)x;
                }
            }
            continue;
        bad:
            snprintf(err, errsz, "line %d: bad field `%s`", p->n, k);
            ok = false;
            goto done;
        }
        for (int j = 0; j < in->nsrc; j++)
            if (in->src[j] >= p->n - 1 || in->src[j] < -1) {
                snprintf(err, errsz, "line %d: operand %d is not an earlier value", p->n, in->src[j]);
                ok = false;
                goto done;
            }
    }
    for (int j = 0; j < p->nout; j++)
        if (p->out[j] < 0 || p->out[j] >= p->n) {
            snprintf(err, errsz, "output %d is not a value", p->out[j]);
            ok = false;
        }
done:
    free(line);
    if (!ok) tf_prog_free(p);
    return ok;
}

/* ** C */
static const char *cdt(hcq_dtype t)
{
    switch (t) {
    case HCQ_BOOL: return "HCQ_BOOL";
    case HCQ_I8: return "HCQ_I8";
    case HCQ_U8: return "HCQ_U8";
    case HCQ_I16: return "HCQ_I16";
    case HCQ_U16: return "HCQ_U16";
    case HCQ_I32: return "HCQ_I32";
    case HCQ_U32: return "HCQ_U32";
    case HCQ_F16: return "HCQ_F16";
    case HCQ_BF16: return "HCQ_BF16";
    case HCQ_F32: return "HCQ_F32";
    default: return "HCQ_VOID";
    }
}

static void c_double(FILE *f, double v)
{
    if (isnan(v)) fprintf(f, "NAN");
    else if (isinf(v)) fprintf(f, "%sINFINITY", v < 0 ? "-" : "");
    else if (v == 0) fprintf(f, "%s0.0", signbit(v) ? "-" : "");
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.1f", v);
    else fprintf(f, "%a", v);
}

static void c_list(FILE *f, const char *macro, const int64_t *v, int n)
{
    if (!n) {
        fprintf(f, "NULL, 0");
        return;
    }
    fprintf(f, "%s(", macro);
    for (int i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", v[i]);
    fprintf(f, ")");
}

static void c_val(FILE *f, int v)
{
    if (v < 0) fprintf(f, "NULL");
    else fprintf(f, "v%d", v);
}

void tf_write_c(FILE *f, const tf_prog *p)
{
    for (int i = 0; i < p->n; i++) {
        const tf_inst *in = &p->ins[i];
        const int *s = in->src;
        fprintf(f, "    hcq_tensor *v%d = ", i);
        switch (in->op) {
        case TF_IN: {
            size_t es = hcq_dtype_size(in->dt), n = es ? in->nbytes / es : 0;
            fprintf(f, "hcq_from_data(ctx, %s, ", cdt(in->dt));
            c_list(f, "HCQ_SHAPE", in->iv, in->niv);
            /* mostly zeros (shrinking zeroes what it can): only the others, by index */
            size_t nz = 0;
            for (size_t j = 0; j < n; j++) {
                uint32_t b = 0;
                memcpy(&b, (const uint8_t *)in->data + j * es, es);
                nz += b != 0;
            }
            bool sparse = nz * 2 < n;
            fprintf(f, ", (const uint%d_t[%zu]){", es == 1 ? 8 : es == 2 ? 16 : 32, n ? n : 1);
            for (size_t j = 0, k = 0; j < n; j++) {
                uint32_t b = 0;
                memcpy(&b, (const uint8_t *)in->data + j * es, es);
                if (sparse && !b) continue;
                fprintf(f, "%s%s", k ? "," : "", k && k % 8 == 0 ? "\n        " : "");
                if (sparse) fprintf(f, "[%zu] = ", j);
                fprintf(f, "0x%x", b);
                k++;
            }
            fprintf(f, "%s})", nz || (n && !sparse) ? "" : "0");
            break;
        }
        case TF_FULL:
            fprintf(f, "hcq_full(ctx, %s, ", cdt(in->dt));
            c_list(f, "HCQ_SHAPE", in->iv, in->niv);
            fprintf(f, ", ");
            c_double(f, in->fv);
            fprintf(f, ")");
            break;
        case TF_SCALAR: fprintf(f, "hcq_scalar(ctx, "), c_double(f, in->fv), fprintf(f, ")"); break;
        case TF_ARANGE:
            fprintf(f, "hcq_arange(ctx, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ")", cdt(in->dt), in->iv[0], in->iv[1],
                    in->iv[2]);
            break;
        case TF_EYE: fprintf(f, "hcq_eye(ctx, %s, %" PRId64 ", %" PRId64 ")", cdt(in->dt), in->iv[0], in->iv[1]); break;
        case TF_CAST:
        case TF_BITCAST: fprintf(f, "hcq_%s(v%d, %s)", tf_op_name(in->op), s[0], cdt(in->dt)); break;
        case TF_ADD_S:
        case TF_SUB_S:
        case TF_MUL_S:
        case TF_DIV_S:
        case TF_POW_S:
        case TF_MAXIMUM_S:
        case TF_MINIMUM_S: fprintf(f, "hcq_%s(v%d, ", tf_op_name(in->op), s[0]), c_double(f, in->fv), fprintf(f, ")"); break;
        case TF_WHERE: fprintf(f, "hcq_where(v%d, v%d, v%d)", s[0], s[1], s[2]); break;
        case TF_SUM:
        case TF_PROD:
        case TF_MAX:
        case TF_MIN:
        case TF_MEAN:
        case TF_VAR:
        case TF_STD: {
            fprintf(f, "hcq_%s(v%d, ", tf_op_name(in->op), s[0]);
            if (!in->niv) fprintf(f, "HCQ_ALL_AXES");
            else c_list(f, "HCQ_AXES", in->iv, in->niv);
            fprintf(f, ", %s", in->ia ? "true" : "false");
            if (in->op == TF_VAR || in->op == TF_STD) fprintf(f, ", %d", in->ib);
            fprintf(f, ")");
            break;
        }
        case TF_ARGMAX:
        case TF_ARGMIN: fprintf(f, "hcq_%s(v%d, %d, %s)", tf_op_name(in->op), s[0], in->ia, in->ib ? "true" : "false"); break;
        case TF_RESHAPE:
        case TF_EXPAND:
        case TF_REPEAT:
            fprintf(f, "hcq_%s(v%d, ", tf_op_name(in->op), s[0]), c_list(f, "HCQ_SHAPE", in->iv, in->niv), fprintf(f, ")");
            break;
        case TF_PERMUTE:
        case TF_FLIP:
            fprintf(f, "hcq_%s(v%d, ", tf_op_name(in->op), s[0]), c_list(f, "HCQ_AXES", in->iv, in->niv), fprintf(f, ")");
            break;
        case TF_TRANSPOSE:
        case TF_FLATTEN: fprintf(f, "hcq_%s(v%d, %d, %d)", tf_op_name(in->op), s[0], in->ia, in->ib); break;
        case TF_PAD:
            fprintf(f, "hcq_pad(v%d, (const int64_t[]){", s[0]);
            for (int j = 0; j < in->niv; j++) fprintf(f, "%s%" PRId64, j ? ", " : "", in->iv[j]);
            fprintf(f, "}, %d, ", in->niv / 2), c_double(f, in->fv), fprintf(f, ")");
            break;
        case TF_SHRINK:
            fprintf(f, "hcq_shrink(v%d, (const int64_t[]){", s[0]);
            for (int j = 0; j < in->niv; j++) fprintf(f, "%s%" PRId64, j ? ", " : "", in->iv[j]);
            fprintf(f, "%s}, %d)", in->niv ? "" : "0", in->niv / 2);
            break;
        case TF_SLICE:
            fprintf(f, "hcq_slice(v%d, %d, %" PRId64 ", %" PRId64 ", %" PRId64 ")", s[0], in->ia, in->iv[0], in->iv[1],
                    in->iv[2]);
            break;
        case TF_CAT:
        case TF_STACK:
            fprintf(f, "hcq_%s((hcq_tensor *[]){", tf_op_name(in->op));
            for (int j = 0; j < in->nsrc; j++) fprintf(f, "%sv%d", j ? ", " : "", s[j]);
            fprintf(f, "}, %d, %d)", in->nsrc, in->ia);
            break;
        case TF_SQUEEZE:
        case TF_UNSQUEEZE:
        case TF_SOFTMAX:
        case TF_LOGSOFTMAX: fprintf(f, "hcq_%s(v%d, %d)", tf_op_name(in->op), s[0], in->ia); break;
        case TF_LINEAR: fprintf(f, "hcq_linear(v%d, v%d, ", s[0], s[1]), c_val(f, s[2]), fprintf(f, ")"); break;
        case TF_CONV2D:
            fprintf(f, "hcq_conv2d(v%d, v%d, ", s[0], s[1]), c_val(f, s[2]);
            fprintf(f, ", &(hcq_conv2d_opts){{%" PRId64 ", %" PRId64 "}, {%" PRId64 ", %" PRId64 "}, {%" PRId64 ", %" PRId64 "}, %" PRId64 "})",
                    in->iv[0], in->iv[1], in->iv[2], in->iv[3], in->iv[4], in->iv[5], in->iv[6]);
            break;
        case TF_AVGPOOL:
        case TF_MAXPOOL:
            fprintf(f, "hcq_%s(v%d, &(hcq_pool2d_opts){{%" PRId64 ", %" PRId64 "}, {%" PRId64 ", %" PRId64 "}, {%" PRId64 ", %" PRId64 "}})",
                    tf_op_name(in->op), s[0], in->iv[0], in->iv[1], in->iv[2], in->iv[3], in->iv[4], in->iv[5]);
            break;
        case TF_LAYERNORM:
            fprintf(f, "hcq_layernorm(v%d, %d, ", s[0], in->ia), c_val(f, s[1]), fprintf(f, ", "), c_val(f, s[2]);
            fprintf(f, ", "), c_double(f, in->fv), fprintf(f, ")");
            break;
        case TF_GATHER: fprintf(f, "hcq_gather(v%d, %d, v%d)", s[0], in->ia, s[1]); break;
        default:
            if (in->nsrc == 1) fprintf(f, "hcq_%s(v%d)", tf_op_name(in->op), s[0]);
            else fprintf(f, "hcq_%s(v%d, v%d)", tf_op_name(in->op), s[0], s[1]);
            break;
        }
        fprintf(f, ";\n");
    }
}
