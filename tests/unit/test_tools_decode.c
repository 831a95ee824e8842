/* hcq decode as a user runs it: dumps of the mock NV GPU under HCQ_DUMP
 * carry the QMDs and the kernels' names; raw hex text; --arch checked; bad
 * input (an empty directory, /dev/zero, a truncated header, a bad hex word)
 * is a clear error in bounded memory; control bytes from a dump never reach
 * the terminal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hcqtest.h"

TestSuite(tools_decode, .timeout = 120);

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

Test(tools_decode, hcq_dump_of_the_nv_mock_has_qmds_with_kernel_names)
{
    T_SKIP_MOCK_DEMO_UNDER_TSAN();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-decode");
    char env[T_TMP_PATH + 64], args[512];
    snprintf(env, sizeof env, "HCQ_MOCK=1 HCQ_DEVICE=NV:0 HCQ_DUMP=%s", dir);
    int st;
    free(t_run_hcq(env, "demo --no-train", &st)); /* training repeats the same packets for seconds */
    cr_assert_eq(st, 0);
    snprintf(args, sizeof args, "decode %s", dir);
    char *out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%.4000s", out);
    const char *want[] = {"hcq-names on nv0", "NVCBC0_SEND_PCAS_A", "(QMD at 0x", "nv-qmd on nv0.compute",
                          "launch `E_", "NVC86F_SEM_EXECUTE", "NVC8B5_LAUNCH_DMA"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(out, want[i]), "no %s in:\n%.4000s", want[i], out);
    free(out);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(tools_decode, hex_text_with_arch_and_comments)
{
    const char *hex = "# a semaphore release on an H100's host class\n"
                      "0x1000: 20050017 0x2020 0x10 7 0 0x03100001\n";
    char dir[T_TMP_PATH], path[T_TMP_PATH + 16], args[T_TMP_PATH + 64];
    t_tmpdir(dir, sizeof dir, "hcq-decode-hex");
    snprintf(path, sizeof path, "%s/hex.txt", dir);
    write_file(path, hex, strlen(hex));
    int st;
    snprintf(args, sizeof args, "decode --nv --arch 0xcbc0 --hex %s", path);
    char *out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "NVC86F_SEM_EXECUTE") && strstr(out, "(semaphore 0x1000002020)") &&
                  strstr(out, "OPERATION=RELEASE RELEASE_WFI PAYLOAD_SIZE=64BIT"),
              "%s", out);
    free(out);
    /* a word that is not hex, an arch of no engine of the format */
    write_file(path, "20050017 zz\n", 12);
    snprintf(args, sizeof args, "decode --nv --hex %s", path);
    out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "line 1: `zz` is not a 32-bit hex word"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "decode --amd --arch 0xcbc0 --hex %s", path);
    out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "is not an engine of amd-pm4 streams") && strstr(out, "gfx1100"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "decode --hex %s", path);
    out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 2, "%s", out);
    free(out);
}

Test(tools_decode, bad_input_is_a_clear_error)
{
    int st;
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-decode-empty");
    char args[T_TMP_PATH + 64], path[T_TMP_PATH + 32];
    snprintf(args, sizeof args, "decode %s", dir);
    char *out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "no .hcqdump files in"), "%s", out);
    free(out);
    /* /dev/zero would never end: it is not a regular file */
    out = t_run_hcq(NULL, "decode --nv /dev/zero", &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "not a regular file"), "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/trunc.hcqdump", dir);
    write_file(path, "HCQD\1\0\0\0nv-gpf", 15);
    snprintf(args, sizeof args, "decode %s", path);
    out = t_run_hcq(NULL, args, &st);
    cr_assert_eq(st, 1, "%s", out);
    cr_assert(strstr(out, "a truncated dump: 15 bytes"), "%s", out);
    free(out);
    /* a header whose strings carry a terminal escape */
    unsigned char h[56 + 4] = "HCQD\1\0\0\0nv-gpfifo";
    memcpy(h + 24, "\x1b]0;owned\x07", 10);
    h[40] = 0xc0, h[41] = 0xcb; /* arch */
    h[44] = 1;                  /* one dword */
    snprintf(path, sizeof path, "%s/esc.hcqdump", dir);
    write_file(path, h, sizeof h);
    snprintf(args, sizeof args, "decode %s", path);
    out = t_run_hcq(NULL, args, &st);
    cr_assert_null(strchr(out, 0x1b), "an escape byte reached the output: %s", out);
    cr_assert_null(strchr(out, 0x07), "a bell reached the output: %s", out);
    cr_assert(strstr(out, "on ?]0;owned?"), "%s", out);
    free(out);
    out = t_run_hcq(NULL, "decode --bogus x", &st);
    cr_assert_eq(st, 2, "%s", out);
    free(out);
}
