/* Parameter lists to and from safetensors files (the format's parser is
 * safetensors.c).
 *
 * Saving replaces the file whole (base_outfile): the new checkpoint is
 * written beside the old one, synced and renamed over it, so a full disk,
 * a kill or a crash mid-save leaves the previous checkpoint as it was.
 * Loading believes nothing in the header before checking it against the
 * file's size, reads the header and then only the ranges of the tensors
 * asked for, one at a time: memory is bounded by the largest tensor, and
 * a header that claims more than the file holds is refused before any
 * allocation it would size. */
#include "nn/nn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* the JSON header, padded so the data starts 8-byte aligned */
static hcq_status header(const hcq_params *p, char **hdr, size_t *hlen, const char *fn)
{
    FILE *m = open_memstream(hdr, hlen);
    if (!m) return base_err(HCQ_ENOMEM, "%s: out of memory", fn);
    fputs("{\"__metadata__\":{\"format\":\"pt\",\"writer\":\"hcq\"}", m);
    uint64_t off = 0;
    for (int i = 0; i < p->n; i++) {
        hcq_tensor *t = p->e[i].t;
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        uint64_t bytes = (uint64_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
        fputc(',', m);
        json_str(m, p->e[i].name);
        fprintf(m, ":{\"dtype\":\"%s\",\"shape\":[", nn_st_dtype_name(hcq_tensor_dtype(t)));
        for (int d = 0; d < nd; d++) fprintf(m, "%s%lld", d ? "," : "", (long long)shape[d]);
        fprintf(m, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + bytes));
        off += bytes;
    }
    fputc('}', m);
    while ((ftell(m) & 7) != 0) fputc(' ', m);
    if (fclose(m)) {
        free(*hdr);
        return base_err(HCQ_ENOMEM, "%s: out of memory", fn);
    }
    return HCQ_OK;
}

hcq_status hcq_params_save(const hcq_params *p, const char *path)
{
    const char *fn = "hcq_params_save";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn);
    if (!path) return base_err(HCQ_EINVAL, "%s: path is NULL", fn);
    for (int i = 0; i < p->n; i++)
        if (!nn_st_dtype_name(hcq_tensor_dtype(p->e[i].t)))
            return base_err(HCQ_EINVAL, "%s: \"%s\" is not a live tensor of a dtype safetensors files hold", fn, p->e[i].name);
    char *hdr = NULL;
    size_t hlen = 0;
    hcq_status s = header(p, &hdr, &hlen, fn);
    if (s) return s;
    base_outfile o;
    if ((s = base_outfile_open(&o, path, fn))) {
        free(hdr);
        return s;
    }
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    fwrite(len, 1, 8, o.f);
    fwrite(hdr, 1, hlen, o.f);
    free(hdr);
    for (int i = 0; i < p->n && !s && !ferror(o.f); i++) {
        hcq_tensor *t = p->e[i].t;
        size_t bytes = (size_t)hcq_tensor_numel(t) * hcq_dtype_size(hcq_tensor_dtype(t));
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf) s = base_err(HCQ_ENOMEM, "%s: %zu bytes for \"%s\"", fn, bytes, p->e[i].name);
        if (!s) s = hcq_tensor_read(t, buf, bytes);
        if (!s) fwrite(buf, 1, bytes, o.f);
        free(buf);
    }
    if (s) {
        base_outfile_abort(&o);
        return s;
    }
    return base_outfile_commit(&o, fn); /* sees any write that failed */
}

/* the tensor e of the file at fd as a new tensor of ctx */
static hcq_tensor *read_tensor(hcq_ctx *ctx, int fd, uint64_t data_at, const nn_st_entry *e, const char *path,
                               const char *fn)
{
    /* the range was checked against the file's size with the header */
    size_t bytes = (size_t)(e->end - e->begin);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return base_err(HCQ_ENOMEM, "%s: %zu bytes for \"%s\" of %s", fn, bytes, e->name, path), NULL;
    uint8_t *p = buf;
    uint64_t off = data_at + e->begin;
    size_t n = bytes;
    hcq_status s = HCQ_OK;
    while (n && !s) {
        ssize_t r = pread(fd, p, n > (1u << 30) ? 1u << 30 : n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) s = base_err(HCQ_EIO, "%s: reading %s: %s", fn, path, strerror(errno));
        else if (r == 0) s = base_err(HCQ_EFORMAT, "%s: %s ends early (it shrank while being read?)", fn, path);
        else p += r, off += (uint64_t)r, n -= (size_t)r;
    }
    hcq_tensor *t = s ? NULL : hcq_from_data(ctx, e->dtype, e->shape, e->ndim, buf);
    free(buf);
    return t;
}

/* "[2, 3]" */
static void shape_text(char *buf, size_t size, const int64_t *shape, int nd)
{
    size_t off = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < nd && off < size; d++)
        off += (size_t)snprintf(buf + off, size - off, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (off < size) snprintf(buf + off, size - off, "]");
}

hcq_status hcq_params_load(hcq_params *p, const char *path)
{
    const char *fn = "hcq_params_load";
    if (!nn_params_live(p)) return base_err(HCQ_ESTATE, "%s: not a live parameter list", fn);
    if (!path) return base_err(HCQ_EINVAL, "%s: path is NULL", fn);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return base_err(HCQ_EINVAL, "%s: cannot open %s: %s", fn, path, strerror(errno));
    nn_st_header h;
    uint64_t data_at = 0;
    hcq_status s = nn_st_read_header(fd, path, &h, &data_at);
    if (s) {
        close(fd);
        return base_err_prefix(s, "%s: %s", fn, path);
    }
    hcq_tensor **dst = base_calloc((size_t)(p->n ? p->n : 1), sizeof *dst), **val = base_calloc((size_t)(p->n ? p->n : 1), sizeof *val);
    size_t mark = hcq_ctx_mark(p->ctx);
    if (!dst || !val) s = HCQ_ENOMEM;
    /* every tensor is checked and read before any is assigned: a file that
     * does not fit changes nothing */
    for (int i = 0; i < p->n && !s; i++) {
        hcq_tensor *t = p->e[i].t;
        const nn_st_entry *e = nn_st_find(&h, p->e[i].name);
        if (!e) {
            s = base_err(HCQ_EINVAL, "%s: %s has no tensor \"%s\"", fn, path, p->e[i].name);
            break;
        }
        int64_t shape[HCQ_MAX_DIMS];
        int nd = hcq_tensor_shape(t, shape);
        if (e->dtype != hcq_tensor_dtype(t) || e->ndim != nd || memcmp(e->shape, shape, (size_t)nd * sizeof *shape)) {
            char in_file[160], in_model[160];
            shape_text(in_file, sizeof in_file, e->shape, e->ndim);
            shape_text(in_model, sizeof in_model, shape, nd);
            bool dt_differs = e->dtype != hcq_tensor_dtype(t), shape_differs = strcmp(in_file, in_model) != 0;
            s = base_err(HCQ_EINVAL, "%s: \"%s\" in %s is %s %s (%s in the file), of another %s than the model's %s %s: "
                         "load a file saved from this model", fn, e->name, path, hcq_dtype_name(e->dtype), in_file,
                         nn_st_dtype_name(e->dtype),
                         dt_differs && shape_differs ? "dtype and shape" : dt_differs ? "dtype" : "shape",
                         hcq_dtype_name(hcq_tensor_dtype(t)), in_model);
            break;
        }
        dst[i] = t;
        val[i] = read_tensor(p->ctx, fd, data_at, e, path, fn);
        if (!val[i]) s = hcq_error_status();
    }
    close(fd);
    if (!s) {
        bool prev = hcq_set_grad_enabled(false);
        s = hcq_assign_all(dst, val, p->n);
        hcq_set_grad_enabled(prev);
    }
    hcq_ctx_release(p->ctx, mark);
    free(dst);
    free(val);
    nn_st_header_free(&h);
    return s;
}
