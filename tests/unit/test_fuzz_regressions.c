/* Replays every seed and every saved crash of the fuzz targets through the
 * same entry points the fuzzers call: what once crashed must stay fixed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "../fuzz/fuzz.h"

static unsigned replay_dir(const char *dir, hcq_fuzz_fn fn)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cr_assert_eq(fn(buf, len), 0, "%s", path);
        n++;
    }
    closedir(d);
    return n;
}

static void replay(const char *name, hcq_fuzz_fn fn)
{
    char seeds[256], regressions[256];
    snprintf(seeds, sizeof seeds, "tests/fuzz/seeds/%s", name);
    snprintf(regressions, sizeof regressions, "tests/fuzz/regressions/%s", name);
    unsigned n = replay_dir(seeds, fn) + replay_dir(regressions, fn);
    cr_assert_gt(n, 0, "no seeds for %s (run from the repository root)", name);
}

Test(fuzz_regressions, ir) { replay("fuzz_ir", hcq_fuzz_ir); }
Test(fuzz_regressions, elf) { replay("fuzz_elf", hcq_fuzz_elf); }
Test(fuzz_regressions, decode) { replay("fuzz_decode", hcq_fuzz_decode); }
Test(fuzz_regressions, cubin) { replay("fuzz_cubin", hcq_fuzz_cubin); }
Test(fuzz_regressions, codeobj) { replay("fuzz_codeobj", hcq_fuzz_codeobj); }
Test(fuzz_regressions, safetensors) { replay("fuzz_safetensors", hcq_fuzz_safetensors); }
