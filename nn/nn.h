/* nn/: the training layer (include/hcq/nn.h), built on the tensor layer's
 * public API only. Internals shared by its files: params.c (parameter
 * lists, initialisation, clipping), optim.c (optimizers and schedules),
 * layers.c (batch norm, dropout), safetensors.c (the file format),
 * idx.c (IDX files through zlib), batches.c (the batch iterator), dp.c
 * (data-parallel training). */
#ifndef HCQ_NN_NN_H
#define HCQ_NN_NN_H

#include <hcq/hcq.h>
#include <hcq/nn.h>

#include "base/base.h"

/* handle-registry kinds (the tensor layer's end at 0x7e01) */
#define NN_H_PARAMS 0x7e10u
#define NN_H_OPTIM 0x7e11u
#define NN_H_BATCHES 0x7e12u
#define NN_H_DP 0x7e13u

#define NN_NAME_MAX 127

typedef struct nn_entry {
    char name[NN_NAME_MAX + 1];
    hcq_tensor *t;
    bool trainable;
} nn_entry;

struct hcq_params {
    hcq_ctx *ctx;
    nn_entry *e;
    int n, cap;
    bool eval;
};

/* the live list's entry i, or NULL with the error set */
const nn_entry *nn_params_entry(const hcq_params *p, int i, const char *fn);
bool nn_params_live(const hcq_params *p);

/* ** an optimizer's insides, for dp.c (optim.c) */
/* the parameter list it was made on; NULL for a dead one */
hcq_params *nn_optim_params(const hcq_optim *o);
/* the same kind and settings (not the learning rate, a device value) */
bool nn_optim_alike(const hcq_optim *a, const hcq_optim *b);
/* its device state (step count, learning rate, moments), in a fixed
 * order, up to cap of them; returns how many it has (out may be NULL
 * with cap 0) */
int nn_optim_state(const hcq_optim *o, hcq_tensor **out, int cap);

/* bytes per element of an IDX type byte; 0 for none (idx.c) */
int nn_idx_elem_size(uint8_t type);

/* ** safetensors (safetensors.c) */
typedef struct nn_st_entry {
    char *name; /* decoded, NUL-terminated (owned) */
    hcq_dtype dtype;
    int ndim;
    int64_t shape[HCQ_MAX_DIMS];
    uint64_t begin, end; /* data_offsets, relative to the data */
} nn_st_entry;

typedef struct nn_st_header {
    nn_st_entry *e;
    int n;
    int *by_name;       /* indices of e sorted by name (nn_st_find) */
    uint64_t data_size; /* the largest end offset */
} nn_st_header;

/* Parses a safetensors JSON header (len bytes at json, not NUL-terminated)
 * with every string, number and offset bounds-checked: HCQ_EFORMAT with
 * the position of the first thing wrong. Entries with a dtype we cannot
 * hold are HCQ_ENOTSUP. */
hcq_status nn_st_parse(const char *json, size_t len, nn_st_header *out);
void nn_st_header_free(nn_st_header *h);
/* Checks a whole file image (size, header, offsets within the data). */
hcq_status nn_st_check_file(const uint8_t *file, size_t size, nn_st_header *out);
/* The header of the safetensors file open at fd, checked against the
 * file's size before more than its first 8 bytes are read; *data_at is
 * where the data begins in the file. */
hcq_status nn_st_read_header(int fd, const char *path, nn_st_header *out, uint64_t *data_at);
/* The format's name of dt (F32, ..), or NULL for one it has no name for */
const char *nn_st_dtype_name(hcq_dtype dt);
/* The entry named name, or NULL (a binary search) */
const nn_st_entry *nn_st_find(const nn_st_header *h, const char *name);

#endif
