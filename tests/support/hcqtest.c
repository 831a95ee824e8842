#include "hcqtest.h"

#include "drivers/sys.h"
#include "tools/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>

const char *t_device_name(void)
{
    const char *d = getenv("HCQ_TEST_DEVICE");
    return d && *d ? d : "CPU";
}

hcq_device *t_open(void)
{
    hcq_device *dev = hcq_device_open(t_device_name());
    cr_assert_not_null(dev, "opening %s: %s", t_device_name(), hcq_error_message());
    return dev;
}

hcq_device *t_open_hw(const char *driver_file, const char *name, const char *why_absent)
{
    const hcq_sys *libc = sys_libc();
    if (libc->exists(libc->ctx, driver_file) != 0) cr_skip_test("%s", why_absent);
    sys_set(libc); /* the hardware, even under HCQ_MOCK=1 */
    hcq_device *dev = hcq_device_open(name);
    cr_assert_not_null(dev, "opening %s: %s", name, hcq_error_message());
    return dev;
}

hcq_device *t_open_second_hw(const char *kind)
{
    char names[16][16], second[24];
    uint32_t n = hcq_device_list(names, 16), k = 0;
    size_t len = strlen(kind);
    for (uint32_t i = 0; i < n && i < 16; i++) k += !strncmp(names[i], kind, len) && names[i][len] == ':';
    if (k < 2) cr_skip_test("one %s GPU here; the two-GPU case needs two", kind);
    snprintf(second, sizeof second, "%s:1", kind);
    hcq_device *d1 = hcq_device_open(second);
    if (!d1) cr_skip_test("%s: %s", second, hcq_error_message());
    return d1;
}

void t_wait_across_gpus(hcq_device *dev, hcq_device *d1)
{
    hcq_signal *tl = hcq_device_timeline(dev), *done = T_NONNULL(hcq_signal_create(d1, 0));
    T_OK(hcq_device_synchronize(dev));
    uint64_t next = hcq_device_timeline_value(dev) + 1;
    hcq_queue *q = T_NONNULL(hcq_queue_create(d1, HCQ_QUEUE_COMPUTE));
    T_OK(hcq_queue_wait(q, tl, HCQ_IMM(next)));
    T_OK(hcq_queue_signal(q, done, HCQ_IMM(1)));
    T_OK(hcq_queue_submit(q, NULL, 0));
    cr_assert_eq(hcq_signal_value(done), 0u, "the wait passed before the first GPU's timeline moved");
    uint32_t word = 7;
    hcq_buffer *b = T_NONNULL(hcq_buffer_alloc(dev, 4096, HCQ_MEM_DEVICE));
    T_OK(hcq_buffer_copyin(b, 0, &word, 4));
    T_OK(hcq_signal_wait(done, 1, 0));
    cr_assert_geq(hcq_signal_value(tl), next);
    T_OK(hcq_queue_destroy(q));
    T_OK(hcq_signal_destroy(done));
    T_OK(hcq_buffer_free(b));
}

hcq_program *t_load(hcq_device *dev, hcq_kernel *k)
{
    cr_assert_not_null(k);
    hcq_program *p = hcq_program_from_kernel(dev, k);
    cr_assert_not_null(p, "building `%s` for %s: %s", hcq_kernel_name(k), hcq_device_get_props(dev)->target,
                       hcq_error_message());
    hcq_kernel_destroy(k);
    return p;
}

/* the kernels live with the tools (tools/kernels.c), so `hcq compile`
 * fills a cache with exactly these */
hcq_kernel *t_k_add1(void) { return tk_add1(); }
hcq_kernel *t_k_vadd(void) { return tk_vadd_u32n(); }
hcq_kernel *t_k_muladd(void) { return tk_muladd(); }
hcq_kernel *t_k_inc(void) { return tk_inc(); }
hcq_kernel *t_k_mark(void) { return tk_mark(); }
hcq_kernel *t_k_copy(void) { return tk_copy_u32(); }

hcq_kernel *t_k_spin(void)
{
    hcq_kernel *k = hcq_kernel_create("spin");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_U32);
    hcq_ir_ref spin = hcq_ir_param_scalar(k, HCQ_U32);
    hcq_ir_ref acc = hcq_ir_define_acc(k, hcq_ir_const_int(k, HCQ_U32, 1));
    hcq_ir_ref r = hcq_ir_range(k, hcq_ir_const_int(k, HCQ_U32, 0), spin);
    /* acc = acc * 3 ^ r: a multiply chain, no closed form */
    hcq_ir_assign(k, acc,
                  hcq_ir_binary(k, HCQ_OP_XOR, hcq_ir_binary(k, HCQ_OP_MUL, acc, hcq_ir_const_int(k, HCQ_U32, 3)), r));
    hcq_ir_endrange(k, r);
    hcq_ir_ref g = hcq_ir_cast(k, HCQ_U32, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0));
    hcq_ir_store(k, out, g, acc);
    return k;
}

hcq_buffer *t_buffer_from(hcq_device *dev, const void *data, size_t size)
{
    hcq_buffer *b = hcq_buffer_alloc(dev, size, HCQ_MEM_DEVICE);
    cr_assert_not_null(b, "alloc %zu: %s", size, hcq_error_message());
    T_OK(hcq_buffer_copyin(b, 0, data, size));
    return b;
}

void t_read(hcq_buffer *b, void *out, size_t size) { T_OK(hcq_buffer_copyout(out, b, 0, size)); }

char *t_capture(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t cap = 1 << 16, n = 0, got;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) {
            out = realloc(out, cap *= 2);
            cr_assert_not_null(out);
        }
    }
    out[n] = 0;
    int st = pclose(p);
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return out;
}

unsigned t_count(const char *text, const char *word)
{
    unsigned c = 0;
    size_t n = strlen(word);
    for (const char *q = text; n && (q = strstr(q, word)); q += n) c++;
    return c;
}

char *t_run_hcq(const char *env, const char *args, int *status)
{
    const char *bin = getenv("HCQ_TEST_HCQ_BIN");
    if (!bin) bin = "build/hcq";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s %s %s 2>&1", T_CHILD_SAN_ENV, env ? env : "", bin, args);
    return t_capture(cmd, status);
}

t_stderr t_stderr_begin(void)
{
    fflush(stderr);
    t_stderr c = {tmpfile(), dup(2)};
    cr_assert(c.f && c.saved >= 0, "capturing stderr");
    dup2(fileno(c.f), 2);
    return c;
}

void t_stderr_end(t_stderr c, char *buf, size_t size)
{
    fflush(stderr);
    dup2(c.saved, 2);
    close(c.saved);
    rewind(c.f);
    buf[fread(buf, 1, size - 1, c.f)] = 0;
    fclose(c.f);
}

hcq_kernel *t_k_reverse(bool plus_groups)
{
    hcq_kernel *k = hcq_kernel_create("reverse");
    hcq_ir_ref out = hcq_ir_param_buffer(k, HCQ_I32), in = hcq_ir_param_buffer(k, HCQ_I32);
    hcq_ir_ref loc = hcq_ir_define_local(k, HCQ_I32, 256);
    hcq_ir_ref lid = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_ID, 0), ls = hcq_ir_special(k, HCQ_SPECIAL_LOCAL_SIZE, 0);
    hcq_ir_ref base = hcq_ir_binary(k, HCQ_OP_MUL, hcq_ir_special(k, HCQ_SPECIAL_GROUP_ID, 0), ls);
    hcq_ir_store(k, loc, lid, hcq_ir_load(k, in, hcq_ir_binary(k, HCQ_OP_ADD, base, lid)));
    hcq_ir_barrier(k);
    hcq_ir_ref rev = hcq_ir_binary(k, HCQ_OP_SUB, hcq_ir_binary(k, HCQ_OP_SUB, ls, hcq_ir_const_int(k, HCQ_I32, 1)), lid);
    hcq_ir_ref v = hcq_ir_load(k, loc, rev);
    if (plus_groups) v = hcq_ir_binary(k, HCQ_OP_ADD, v, hcq_ir_special(k, HCQ_SPECIAL_NUM_GROUPS, 0));
    hcq_ir_store(k, out, hcq_ir_binary(k, HCQ_OP_ADD, base, lid), v);
    return k;
}

void t_run_reverse(hcq_device *d, hcq_program *p, uint32_t G, uint32_t L, bool plus_groups)
{
    int32_t *host = calloc(G * L, 4), *out = calloc(G * L, 4);
    cr_assert(host && out);
    for (uint32_t i = 0; i < G * L; i++) host[i] = (int32_t)(i * 7 + 1);
    hcq_buffer *bi = t_buffer_from(d, host, G * L * 4), *bo = t_buffer_from(d, out, G * L * 4);
    hcq_arg a[2] = {hcq_arg_buffer(bo), hcq_arg_buffer(bi)};
    T_OK(hcq_launch(p, a, 2, hcq_dims_1d(G, L)));
    t_read(bo, out, G * L * 4);
    int32_t add = plus_groups ? (int32_t)G : 0;
    for (uint32_t g = 0; g < G; g++)
        for (uint32_t i = 0; i < L; i++)
            cr_assert_eq(out[g * L + i], host[g * L + L - 1 - i] + add, "[%u][%u]", g, i);
    T_OK(hcq_buffer_free(bi));
    T_OK(hcq_buffer_free(bo));
    free(host);
    free(out);
}
