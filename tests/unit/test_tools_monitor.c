/* hcq info and hcq top as a user runs them (the mock GPUs): the telemetry
 * printed with sources and reasons, JSON carrying hcq's version and
 * revision, options checked. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcqtest.h"

TestSuite(tools_monitor, .timeout = 120);

Test(tools_monitor, info_prints_the_drivers_readings_with_their_sources)
{
    int st;
    char *out = t_run_hcq("HCQ_MOCK=1", "info NV:0 AMD:0", &st);
    cr_assert_eq(st, 0, "%s", out);
    const char *want[] = {"temperature.gpu", "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2", "hwmon temp1_input",
                          "power.draw           unavailable: no RM control", "pcie.link", "processes"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no %s in:\n%s", want[i], out);
    free(out);
}

Test(tools_monitor, info_json_is_one_object_with_the_version_and_telemetry)
{
    int st;
    char *out = t_run_hcq("HCQ_MOCK=1", "info --json NV:0", &st);
    cr_assert_eq(st, 0, "%s", out);
    char want[128];
    snprintf(want, sizeof want, "\"hcq\": {\"version\": \"%s\", \"revision\": \"", hcq_version());
    cr_assert(out[0] == '{' && strstr(out, want), "%s", out);
    cr_assert(strstr(out, "\"devices\": [") && strstr(out, "\"telemetry\": {") &&
                  strstr(out, "\"temperature.gpu\": {\"available\": true") &&
                  strstr(out, "\"power.draw\": {\"available\": false, \"why\": "),
              "%s", out);
    free(out);
}

Test(tools_monitor, options_are_checked)
{
    int st;
    char *out = t_run_hcq(NULL, "info --jsn", &st);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "unknown option `--jsn`"), "%s", out);
    free(out);
    out = t_run_hcq(NULL, "top -n zero", &st);
    cr_assert_eq(st, 2, "%s", out);
    free(out);
    out = t_run_hcq(NULL, "top -d 0", &st);
    cr_assert_eq(st, 2, "%s", out);
    free(out);
    out = t_run_hcq(NULL, "top --help", &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert(strstr(out, "usage: hcq top"), "%s", out);
    free(out);
}

Test(tools_monitor, top_refreshes_and_prints_json_lines)
{
    int st;
    char *out = t_run_hcq("HCQ_MOCK=1", "top -n 2 -d 0.1", &st);
    cr_assert_eq(st, 0, "%s", out);
    const char *first = strstr(out, "hcq top"), *second = first ? strstr(first + 1, "hcq top") : NULL;
    cr_assert(second, "two refreshes expected:\n%s", out);
    cr_assert(strstr(out, "NV:0") && strstr(out, "AMD:0") && strstr(out, "hcq processes"), "%s", out);
    free(out);
    out = t_run_hcq("HCQ_MOCK=1", "top -n 2 -d 0.1 --json AMD:0", &st);
    cr_assert_eq(st, 0, "%s", out);
    int lines = 0;
    for (char *l = out; (l = strchr(l, '\n')); l++) lines++;
    cr_assert_eq(lines, 2, "one JSON object per refresh:\n%s", out);
    cr_assert(strstr(out, "{\"hcq\": {\"version\"") && strstr(out, "\"hcq_processes\": ["), "%s", out);
    free(out);
}

Test(tools_monitor, version_names_the_revision)
{
    int st;
    char *out = t_run_hcq(NULL, "--version", &st);
    cr_assert_eq(st, 0);
    char want[64];
    snprintf(want, sizeof want, "hcq %s (revision ", hcq_version());
    cr_assert(strstr(out, want), "%s", out);
    free(out);
}
