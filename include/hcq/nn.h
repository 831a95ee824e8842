/* hcq/nn.h: training on top of the tensor layer. Parameters and their
 * initialisation, optimizers with learning-rate schedules and gradient
 * clipping, batch norm and dropout, weights in safetensors files, and data
 * (IDX files read through zlib, seeded shuffled batches).
 *
 *     hcq_params *p = hcq_params_create(ctx);
 *     hcq_tensor *w = hcq_param(p, "fc.weight", HCQ_INIT_KAIMING_UNIFORM, HCQ_SHAPE(10, 784), 0, 0);
 *     hcq_tensor *b = hcq_param(p, "fc.bias", HCQ_INIT_ZEROS, HCQ_SHAPE(10), 0, 0);
 *     hcq_optim *opt = hcq_adam(p, 1e-3, 0.9, 0.999, 1e-8, 0);
 *     ...
 *     hcq_backward(hcq_cross_entropy(hcq_linear(x, w, b), y));
 *     hcq_optim_step(opt);               // updates w and b in place
 *
 * Everything runs as tensor operations: an optimizer step is one lazy
 * graph over the gradients (which are lazy over the forward), realized
 * into the parameters' own buffers with hcq_assign_all. The step count and
 * the learning rate live in device memory and the schedules are computed
 * there, so a training step captured by a JIT (hcq_jit) replays correctly
 * for any number of steps.
 *
 * Ownership: the tensors these objects make (parameters, optimizer
 * state, batches) belong to the context as usual, so make the objects
 * before the training loop's hcq_ctx_mark and the loop's releases keep
 * them. The objects themselves are freed by their destroy call (before or
 * after the context's); a freed one is HCQ_ESTATE. One thread at a time,
 * like the context. */
#ifndef HCQ_NN_H
#define HCQ_NN_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ** parameters: a named list of the tensors a model trains (parameters)
 * and keeps (buffers, e.g. batch norm's running statistics), with the
 * model's mode (training or evaluation) */
typedef struct hcq_params hcq_params;
HCQ_API hcq_params *hcq_params_create(hcq_ctx *ctx);
/* Frees the list (the tensors stay the context's). NULL is fine. */
HCQ_API hcq_status hcq_params_destroy(hcq_params *p);
/* Adds t under name (unique, 1 to 127 characters): given storage of its
 * own if it has none, and marked to keep its gradient. Returns t. */
HCQ_API hcq_tensor *hcq_params_add(hcq_params *p, const char *name, hcq_tensor *t);
/* Adds state that is saved and loaded but not trained. Returns t. */
HCQ_API hcq_tensor *hcq_params_add_buffer(hcq_params *p, const char *name, hcq_tensor *t);
/* Parameters and buffers, in the order added. */
HCQ_API int hcq_params_count(const hcq_params *p);
HCQ_API hcq_tensor *hcq_params_at(const hcq_params *p, int i);
HCQ_API const char *hcq_params_name(const hcq_params *p, int i);
HCQ_API bool hcq_params_trainable(const hcq_params *p, int i);
/* The tensor added under name, or NULL (HCQ_EINVAL). */
HCQ_API hcq_tensor *hcq_params_find(const hcq_params *p, const char *name);
/* Elements of the trainable parameters. */
HCQ_API int64_t hcq_params_numel(const hcq_params *p);
/* Training mode (the default) or evaluation mode, for batch norm and dropout. */
HCQ_API void hcq_params_train(hcq_params *p, bool training);
HCQ_API bool hcq_params_training(const hcq_params *p);
/* Drops every parameter's gradient. */
HCQ_API hcq_status hcq_params_zero_grad(hcq_params *p);
/* Scales the parameters' gradients so their global L2 norm is at most
 * max_norm (by max_norm / (norm + 1e-6) where it is larger), lazily.
 * Returns the norm before clipping (a lazy 0-d f32 tensor). */
HCQ_API hcq_tensor *hcq_clip_grad_norm(hcq_params *p, double max_norm);

/* ** initialisation, from the context's generator (hcq_ctx_seed: the same
 * seed gives the same values on every device). fan_in is shape[1] times
 * the receptive field (the product of shape[2..]) and fan_out shape[0]
 * times it, as torch computes them for linear [out, in] and convolution
 * [out, in, kh, kw] weights; 1-d tensors have fan_in = fan_out = shape[0]. */
typedef enum hcq_init {
    HCQ_INIT_ZEROS,
    HCQ_INIT_ONES,
    HCQ_INIT_UNIFORM,         /* U(a, b) */
    HCQ_INIT_NORMAL,          /* mean a, standard deviation b */
    HCQ_INIT_KAIMING_UNIFORM, /* U(-c, c), c = gain * sqrt(3 / fan_in); gain a, 0 for sqrt(2) (relu) */
    HCQ_INIT_KAIMING_NORMAL,  /* standard deviation gain / sqrt(fan_in); gain a, 0 for sqrt(2) */
    HCQ_INIT_XAVIER_UNIFORM,  /* U(-c, c), c = gain * sqrt(6 / (fan_in + fan_out)); gain a, 0 for 1 */
    HCQ_INIT_XAVIER_NORMAL,   /* standard deviation gain * sqrt(2 / (fan_in + fan_out)); gain a, 0 for 1 */
} hcq_init;
/* A new realized f32 tensor of those values. */
HCQ_API hcq_tensor *hcq_init_tensor(hcq_ctx *ctx, hcq_init init, const int64_t *shape, int ndim, double a, double b);
/* The same, added to p as a parameter under name. */
HCQ_API hcq_tensor *hcq_param(hcq_params *p, const char *name, hcq_init init, const int64_t *shape, int ndim, double a,
                              double b);

/* ** optimizers. A step updates every trainable parameter of the list
 * (as it was when the optimizer was made) that has a gradient, in place,
 * and consumes the gradients (as hcq_params_zero_grad). The state
 * (momentum, moments, the step count t, the learning rate) is made with
 * the optimizer, in device memory. Weight decay: SGD and Adam add
 * weight_decay * p to the gradient; AdamW multiplies p by
 * (1 - lr * weight_decay) first. Adam's moments are bias-corrected:
 * p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps). */
typedef struct hcq_optim hcq_optim;
HCQ_API hcq_optim *hcq_sgd(hcq_params *p, double lr, double momentum, double weight_decay, bool nesterov);
HCQ_API hcq_optim *hcq_adam(hcq_params *p, double lr, double beta1, double beta2, double eps, double weight_decay);
HCQ_API hcq_optim *hcq_adamw(hcq_params *p, double lr, double beta1, double beta2, double eps, double weight_decay);
/* NULL is fine. */
HCQ_API hcq_status hcq_optim_destroy(hcq_optim *o);
HCQ_API hcq_status hcq_optim_step(hcq_optim *o);
/* The same, realizing `also` (e.g. the loss) in the same pass: they are
 * computed from the parameters' values before the step, and share the
 * forward's kernels with the backward. */
HCQ_API hcq_status hcq_optim_step_with(hcq_optim *o, hcq_tensor *const *also, int nalso);
/* The base learning rate from now on (written to device memory). */
HCQ_API hcq_status hcq_optim_set_lr(hcq_optim *o, double lr);
/* Learning-rate schedules over steps t = 1, 2, ... (the default is constant):
 * step: lr * gamma^floor((t - 1) / step_size);
 * cosine: lr_min + (lr - lr_min) * (1 + cos(pi * min(t - 1, total) / total)) / 2. */
HCQ_API hcq_status hcq_optim_schedule_step(hcq_optim *o, int64_t step_size, double gamma);
HCQ_API hcq_status hcq_optim_schedule_cosine(hcq_optim *o, int64_t total, double lr_min);
/* Clip the gradients' global norm to max_norm before every step (0: off). */
HCQ_API hcq_status hcq_optim_clip(hcq_optim *o, double max_norm);
/* The learning rate the next step will use (a lazy 0-d f32 tensor). */
HCQ_API hcq_tensor *hcq_optim_lr(hcq_optim *o);
/* Device memory of the optimizer's state. */
HCQ_API uint64_t hcq_optim_state_bytes(const hcq_optim *o);

/* ** layers with a mode */
/* Adds "<name>.weight" (ones) and "<name>.bias" (zeros) as parameters and
 * "<name>.running_mean" (zeros) and "<name>.running_var" (ones) as buffers,
 * each [channels]. */
HCQ_API hcq_status hcq_batchnorm_add(hcq_params *p, const char *name, int64_t channels);
/* Batch normalization of x [N, C, ...] over every dim but 1. Training mode:
 * with the batch's mean and biased variance, and the running statistics
 * updated in place (running = (1 - momentum) * running + momentum * batch,
 * the variance unbiased, as torch); evaluation mode: with the running ones. */
HCQ_API hcq_tensor *hcq_batchnorm(hcq_params *p, const char *name, hcq_tensor *x, double momentum, double eps);
/* Training mode: each element zeroed with probability prob, the rest
 * scaled by 1 / (1 - prob), from the context's generator (seeded by
 * hcq_ctx_seed). Evaluation mode: x. */
HCQ_API hcq_tensor *hcq_dropout(hcq_params *p, hcq_tensor *x, double prob);

/* ** safetensors files: an 8-byte little-endian header size, a JSON header
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * "__metadata__": {...}}, then the data. Every tensor of p (parameters and
 * buffers) is written under its name (dtypes F64, F32, F16, BF16, I64,
 * U64, I32, U32, I16, U16, I8, U8, BOOL: every tensor dtype).
 * The file is replaced whole: written to a temporary file beside path,
 * synced and renamed over it, so a save that fails (a full disk: HCQ_EIO)
 * or is killed leaves the previous file at path as it was. */
HCQ_API hcq_status hcq_params_save(const hcq_params *p, const char *path);
/* Overwrites every tensor of p with the file's entry of the same name
 * (same dtype and shape; entries p lacks are ignored). A malformed file
 * is HCQ_EFORMAT saying what is wrong and where; a missing entry or a
 * different shape HCQ_EINVAL. Nothing is written unless all of p matches.
 * The header is checked against the file's size before any data is read,
 * and only the ranges of p's tensors are read. */
HCQ_API hcq_status hcq_params_load(hcq_params *p, const char *path);

/* ** data */
/* An IDX file (the MNIST format: magic, dims, big-endian data) in host
 * memory, native byte order. gzip-compressed files are read through zlib.
 * Dims whose product passes 2^34 elements are HCQ_ELIMIT; a header that
 * does not match the file is HCQ_EFORMAT, found before the data is
 * allocated (plain files) or as the data runs out (gzip). */
typedef struct hcq_idx {
    uint8_t type;  /* 0x08 u8, 0x09 i8, 0x0b i16, 0x0c i32, 0x0d f32, 0x0e f64 */
    int ndim;
    int64_t shape[HCQ_MAX_DIMS];
    void *data;
    size_t size_B;
} hcq_idx;
HCQ_API hcq_status hcq_idx_read(const char *path, hcq_idx *out);
HCQ_API void hcq_idx_free(hcq_idx *x);
/* The element i of x as a double. */
HCQ_API double hcq_idx_get(const hcq_idx *x, int64_t i);
/* x's data as a new tensor of its own dtype: u8 (0x08), i8 (0x09), i16
 * (0x0b), i32 (0x0c), f32 (0x0d) or f64 (0x0e), x's shape, copied to the
 * device now (hcq_from_data). HCQ_EINVAL for a NULL or empty x, HCQ_ELIMIT
 * past the tensor layer's 2^31 elements. (Since 0.2.) */
HCQ_API hcq_tensor *hcq_idx_tensor(hcq_ctx *ctx, const hcq_idx *x);

/* Batches of a data set: x [n, ...] (any IDX type, becoming f32 times
 * scale) and y [n] (labels, becoming i32). Batch i of the current order
 * is written into two tensors the iterator owns (x [batch, ...] f32,
 * y [batch] i32), the same two every time, so a JIT replays them without
 * swapping buffers; they hold that batch until the next call.
 * hcq_batches_shuffle(b, epoch) orders the samples by a permutation of
 * (seed, epoch), the same on every machine; without it they come in file
 * order. keep_last keeps a final smaller batch (with tensors of its own). */
typedef struct hcq_batches hcq_batches;
HCQ_API hcq_batches *hcq_batches_create(hcq_ctx *ctx, const hcq_idx *x, const hcq_idx *y, int64_t batch, double scale,
                                        uint64_t seed, bool keep_last);
HCQ_API hcq_status hcq_batches_destroy(hcq_batches *b); /* NULL is fine */
HCQ_API int64_t hcq_batches_count(const hcq_batches *b);
HCQ_API hcq_status hcq_batches_shuffle(hcq_batches *b, uint64_t epoch);
HCQ_API hcq_status hcq_batches_get(hcq_batches *b, int64_t i, hcq_tensor **x, hcq_tensor **y);
/* From now on, batch i gives only its part `part` of nparts equal parts:
 * rows [part * batch / nparts, (part + 1) * batch / nparts) of the batch
 * the iterator would give whole (the same shuffled order), so nparts
 * iterators over the same data and seed, one per device (hcq_dp_part),
 * together give every batch once. batch must divide by nparts, and so
 * must a kept last batch; else HCQ_EINVAL. Call it before the training
 * loop's hcq_ctx_mark (it makes the iterator's tensors anew). (Since 0.2.) */
HCQ_API hcq_status hcq_batches_split(hcq_batches *b, int part, int nparts);

/* ** data-parallel training: a batch split over devices (and processes)
 *
 * One replica of the model per device, each in a context of its own on
 * devices of one kind, built alike (the same parameters and buffers, by
 * name, shape and dtype, and an optimizer of the same settings); the
 * replicas start from replica 0's values (copied at create, so their
 * initialisation may differ). Each device takes its part of every batch
 * (hcq_batches_split with hcq_dp_part and hcq_dp_parts) and a step is
 *
 *     for each replica i:   loss_i = loss over its part (a mean over the part's samples);
 *                           hcq_backward(loss_i); hcq_dp_grads(dp, i, &loss_i, 1);
 *     then:                 hcq_dp_reduce(dp);
 *     for each replica i:   hcq_dp_apply(dp, i);
 *
 * hcq_dp_grads moves replica i's gradients (cast to f32) and the values of
 * its float buffers (batch norm's running statistics) into one f32 vector
 * of the replica's (consuming the gradients, as an optimizer step does);
 * hcq_dp_reduce replaces every replica's vector with the mean over all
 * of them (hcq_allreduce, HCQ_REDUCE_MEAN, its fixed order, so every
 * replica gets the same bits); hcq_dp_apply sets the parameters'
 * gradients from that mean and takes the optimizer's step, and sets the
 * buffers to their mean. Since the parts are equal, the mean of the parts'
 * mean losses is the batch's, and the mean of their gradients is the
 * gradient of the batch's loss on one device: the replicas take the step
 * one device would take with the whole batch, up to the order of the
 * sums, and stay bit-equal to each other. Bound: the parts' losses and
 * gradients differ from one device's by that order alone (a few f32 ulp
 * each step); tests/mock/test_dp.c holds every step's loss to 1e-3
 * relative of a one-device run (training amplifies such differences over
 * many steps: read it as a bound for short runs). Batch norm normalizes
 * over each part, not the whole batch (as torch's DistributedDataParallel
 * without SyncBatchNorm), so a model with it trains differently than on
 * one device; its running statistics are averaged every step. Dropout
 * draws from each replica's context's generator: contexts seeded alike
 * give every part the same mask (seed them apart, hcq_ctx_seed, for
 * independent ones; the values are replica 0's whatever the seeds).
 *
 * hcq_dp_grads and hcq_dp_apply are tensor operations on replica i's
 * context and may run inside a JIT (two per replica: forward, backward
 * and hcq_dp_grads; hcq_dp_apply), with hcq_dp_reduce eager between them
 * (it waits for the devices once, at its end). Or the whole step, every
 * replica's forward, backward, hcq_dp_grads, then hcq_dp_reduce, then
 * every hcq_dp_apply, runs in one JIT over all the replicas' contexts
 * (hcq_jit_create_multi; up to 8 replicas): hcq_dp_reduce is then
 * recorded into its graph (hcq_tensors_allreduce), and a replay is the
 * step as one unit, with the eager step's bits. That needs a peer path
 * between neighbouring replicas' devices (HCQ_ENOTSUP at the capture
 * otherwise), and one process (across ranks hcq_dp_reduce goes through
 * the host and the caller's gather: HCQ_ENOTSUP inside a capture). */
typedef struct hcq_dp hcq_dp;
/* n replicas (1 to 64): replicas[i] and optims[i] (an optimizer made on
 * replicas[i]) in a context on a device of its own, all of one kind.
 * HCQ_EINVAL for replicas that differ (names, shapes, dtypes, optimizer
 * settings), two on one device, non-float buffers, no trainable
 * parameter; copies replica 0's parameters and buffers to the others. */
HCQ_API hcq_dp *hcq_dp_create(hcq_params *const *replicas, hcq_optim *const *optims, int n);
/* NULL is fine. The replicas and optimizers stay the caller's. */
HCQ_API hcq_status hcq_dp_destroy(hcq_dp *dp);
HCQ_API int hcq_dp_count(const hcq_dp *dp);
HCQ_API hcq_status hcq_dp_grads(hcq_dp *dp, int i, hcq_tensor *const *also, int nalso);
HCQ_API hcq_status hcq_dp_reduce(hcq_dp *dp);
HCQ_API hcq_status hcq_dp_apply(hcq_dp *dp, int i);

/* Across processes (MPI ranks, each driving its own devices with its own
 * hcq_dp): gather(user, mine, bytes, all) must write every rank's `bytes`
 * bytes (`mine` on that rank) to all, in rank order, on every rank, and
 * return HCQ_OK (MPI_Allgather does exactly that); libhcq links no MPI.
 * With ranks, hcq_dp_reduce reads each replica's vector to host memory,
 * gathers every rank's, and reduces the nranks * n vectors on the host in
 * the order hcq_allreduce states for nranks * n devices (device r * n + i
 * being rank r's replica i), then writes the mean to every replica: the
 * same bits one process with all those devices gets, so the same losses.
 * Collective: every rank calls it (and every hcq_dp_reduce) with the same
 * nranks and the same n and model, checked here through one gather
 * (HCQ_EINVAL naming what differs). The host vectors are f32: a
 * replica's vector crosses the PCIe bus twice per step and each rank
 * receives nranks * n of them (an all-gather, not a ring: simple and
 * deterministic, not the least traffic; docs/architecture.md). */
typedef hcq_status (*hcq_dp_gather_fn)(void *user, const void *mine, size_t bytes, void *all);
HCQ_API hcq_status hcq_dp_set_ranks(hcq_dp *dp, int rank, int nranks, hcq_dp_gather_fn gather, void *user);
/* The hook's gather (a plain copy without ranks), for the program's own
 * figures (each rank's losses): collective as above. */
HCQ_API hcq_status hcq_dp_gather(hcq_dp *dp, const void *mine, size_t bytes, void *all);
/* Replica i's part of each batch (rank * n + i) and the parts in all
 * (nranks * n), for hcq_batches_split; -1 for a bad dp or i. */
HCQ_API int hcq_dp_part(const hcq_dp *dp, int i);
HCQ_API int hcq_dp_parts(const hcq_dp *dp);

#ifdef __cplusplus
}
#endif
#endif
