/* Data-parallel training across processes (issue 23 item 6): the
 * train_mlp example started by Open MPI's mpirun as two ranks on this
 * machine, each driving two mock H100s (the second rank takes NV:2 and
 * NV:3 of its own mock: examples/fashion.h), the gradients gathered
 * through MPI_Allgather and averaged in hcq_allreduce's order (nn.h,
 * hcq_dp_set_ranks), against the same example in one process on four
 * mock GPUs: the epoch's loss and accuracy lines are the same, and so are
 * the trained parameters, byte for byte (--save). A small subset (two
 * steps of 64 images) keeps it to seconds. Skipped, saying why, where
 * mpirun, the MPI build of the example or the data set is missing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctest.h"

#define DATA "/usr/share/datasets/fashion-mnist"
#define ARGS "--epochs 1 --train 128 --batch 64 --test 100 --quiet"

/* the example's "epoch 1: loss X  test accuracy Y %" (the rest is timing) */
static void epoch_line(const char *out, char *line, size_t cap, const char *what)
{
    const char *e = strstr(out, "epoch 1: loss ");
    cr_assert_not_null(e, "%s printed no epoch line:\n%s", what, out);
    const char *pct = strchr(e, '%');
    cr_assert_not_null(pct, "%s: %s", what, e);
    size_t n = (size_t)(pct - e + 1);
    cr_assert_lt(n, cap);
    memcpy(line, e, n);
    line[n] = 0;
}

Test(dp_mpi, two_ranks_train_as_one_process_on_their_four_gpus, .timeout = 600)
{
    const char *hcq = t_hcq_bin();
    if (t_sh("command -v mpirun >/dev/null 2>&1"))
        cr_skip_test("mpirun is not installed (scripts/deps.sh installs Debian's openmpi-bin and libopenmpi-dev)");
    if (access(DATA "/train-images-idx3-ubyte.gz", R_OK))
        cr_skip_test("dataset-fashion-mnist is not installed (scripts/deps.sh)");
    char ex[4096];
    snprintf(ex, sizeof ex, "%s", hcq);
    char *slash = strrchr(ex, '/');
    snprintf(slash ? slash + 1 : ex, sizeof ex - (size_t)(slash ? slash + 1 - ex : 0), "examples/train_mlp");
    cr_assert_eq(access(ex, X_OK), 0, "%s is built by make test-build", ex);
    if (t_sh("grep -q MPI_Allgather '%s'", ex))
        cr_skip_test("%s was built without MPI (no mpicc when it was built, or HCQ_NO_MPI=1)", ex);

    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-dp-mpi");
    /* as root, Open MPI wants to be told; --oversubscribe: two ranks on
     * however few cores; the timeouts end a hung rank */
    int rc = t_sh("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x4 timeout -k 10 240 mpirun -np 2 %s--oversubscribe "
                  "-x HCQ_MOCK -x HCQ_MOCK_CONFIG '%s' NV:0,NV:1 " ARGS " --save %s/mpi.safetensors >%s/mpi.out 2>&1",
                  geteuid() == 0 ? "--allow-run-as-root " : "", ex, dir, dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/mpi.out", dir);
    char *mpi = t_slurp(path, 1 << 16);
    cr_assert_eq(rc, 0, "mpirun -np 2 %s NV:0,NV:1 exited with %d:\n%s", ex, rc, mpi);
    cr_assert(strstr(mpi, "in each of 2 ranks"), "the ranks did not train together:\n%s", mpi);

    rc = t_sh("HCQ_MOCK=1 HCQ_MOCK_CONFIG=nv=H100x4 timeout -k 10 240 '%s' NV:0,NV:1,NV:2,NV:3 " ARGS
              " --save %s/one.safetensors >%s/one.out 2>&1",
              ex, dir, dir);
    snprintf(path, sizeof path, "%s/one.out", dir);
    char *one = t_slurp(path, 1 << 16);
    cr_assert_eq(rc, 0, "%s NV:0,NV:1,NV:2,NV:3 exited with %d:\n%s", ex, rc, one);

    char a[256], b[256];
    epoch_line(mpi, a, sizeof a, "mpirun");
    epoch_line(one, b, sizeof b, "one process");
    cr_assert_str_eq(a, b, "two ranks: \"%s\"; one process on four GPUs: \"%s\"", a, b);
    cr_assert_eq(t_sh("cmp -s %s/mpi.safetensors %s/one.safetensors", dir, dir), 0,
                 "the two ranks' trained parameters differ from one process's (%s)", dir);
    free(mpi);
    free(one);
    t_sh("rm -rf '%s'", dir);
}
