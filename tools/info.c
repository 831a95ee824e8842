#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

static void json_str(const char *key, const char *v, int last)
{
    printf("    \"%s\": ", key);
    tool_json_str(stdout, v);
    printf("%s\n", last ? "" : ",");
}

static void print_json(const hcq_device_props *p, const hcq_telemetry *t, int last)
{
    printf("  {\n");
    json_str("id", p->id, 0);
    printf("    \"accessible\": true,\n");
    json_str("name", p->name, 0);
    json_str("kind", p->kind, 0);
    json_str("arch", p->arch, 0);
    json_str("target", p->target, 0);
    json_str("driver_version", p->driver_version, 0);
    json_str("pci_address", p->pci_address, 0);
    json_str("engines", p->engines, 0);
    printf("    \"mock\": %s,\n", p->is_mock ? "true" : "false");
    json_str("shader", p->shader, 0);
    json_str("paths", p->paths, 0);
    printf("    \"compute_units\": %u,\n", p->compute_units);
    printf("    \"memory_bytes\": %llu,\n", (unsigned long long)p->memory_bytes);
    printf("    \"memory_free_bytes\": %llu,\n", (unsigned long long)p->memory_free_bytes);
    printf("    \"clock_mhz\": %u,\n", p->clock_mhz);
    printf("    \"max_threads_per_group\": %u,\n", p->max_threads_per_group);
    printf("    \"max_block\": [%u, %u, %u],\n", p->max_block[0], p->max_block[1], p->max_block[2]);
    printf("    \"max_grid\": [%u, %u, %u],\n", p->max_grid[0], p->max_grid[1], p->max_grid[2]);
    printf("    \"max_local_bytes\": %u,\n", p->max_local_bytes);
    printf("    \"cache_bytes\": %llu,\n", (unsigned long long)p->cache_bytes);
    printf("    \"staging_bytes\": %llu,\n", (unsigned long long)p->staging_bytes);
    printf("    \"fixed_memory_bytes\": %llu%s\n", (unsigned long long)p->fixed_memory_bytes, t ? "," : "");
    if (t) {
        printf("    \"telemetry\": ");
        tool_telemetry_json(stdout, t, true);
        printf("\n");
    }
    printf("  }%s\n", last ? "" : ",");
}

#define human tool_human_bytes

static void print_text(const hcq_device_props *p, const hcq_telemetry *t)
{
    char mem[32], fixed[32], stage[32];
    human((double)p->memory_bytes, mem, sizeof mem);
    human((double)p->fixed_memory_bytes, fixed, sizeof fixed);
    human((double)p->staging_bytes, stage, sizeof stage);
    printf("%s  %s%s\n", p->id, p->name, p->is_mock ? "  [mock]" : "");
    printf("    arch            %s\n", p->arch);
    printf("    target          %s\n", p->target);
    if (p->shader[0]) printf("    kernels run as  %s\n", p->shader);
    if (p->driver_version[0]) printf("    driver          %s\n", p->driver_version);
    if (p->pci_address[0]) printf("    pci             %s\n", p->pci_address);
    printf("    compute units   %u\n", p->compute_units);
    if (p->memory_free_bytes) {
        char free_s[32];
        human((double)p->memory_free_bytes, free_s, sizeof free_s);
        printf("    memory          %s (%s free)\n", mem, free_s);
    } else {
        printf("    memory          %s\n", mem);
    }
    if (p->clock_mhz) printf("    clock           %u MHz\n", p->clock_mhz);
    if (p->engines[0]) printf("    engines         %s\n", p->engines);
    if (p->paths[0]) printf("    paths           %s\n", p->paths);
    printf("    threads/group   %u (block %u x %u x %u, grid %u x %u x %u)\n", p->max_threads_per_group,
           p->max_block[0], p->max_block[1], p->max_block[2], p->max_grid[0], p->max_grid[1], p->max_grid[2]);
    printf("    local memory    %u bytes per group\n", p->max_local_bytes);
    if (p->cache_bytes) {
        char cache[32];
        human((double)p->cache_bytes, cache, sizeof cache);
        printf("    cache           %s (last level)\n", cache);
    }
    printf("    fixed memory    %s per open device (rings, kernarg ring, signals; %s of it host staging)\n", fixed,
           stage);
    if (t) {
        printf("    telemetry (from the driver; each line names its source)\n");
        tool_telemetry_text(stdout, t, "      ");
    }
}

/* A device present (listed, or named) that cannot be opened: listed as
 * such, with the reason and its fix, on stdout as in JSON; the exit status
 * says something is wrong (as nvidia-smi's does). */
static void print_inaccessible(const char *id, bool listed, bool json, int last)
{
    if (json) {
        printf("  {\n    \"id\": ");
        tool_json_str(stdout, id);
        printf(",\n    \"accessible\": false,\n    \"status\": \"%s\",\n    \"error\": ",
               hcq_status_name(hcq_error_status()));
        tool_json_str(stdout, hcq_error_message());
        printf("\n  }%s\n", last ? "" : ",");
    } else {
        printf("%s  %scannot be opened (%s):\n    %s\n", id, listed ? "present but " : "",
               hcq_status_name(hcq_error_status()), hcq_error_message());
    }
}

/* An absent kind whose driver refused this user (EACCES, EPERM on its
 * node): the GPU may well be there, and the fix is the user's. The reason
 * names the errno as base_errno_name writes it. */
/* The peer-access matrix of the open GPUs of each kind (two or more):
 * whether a row's engines reach a column's memory (copies on the copy
 * engine) or go through host memory, and why. Signals cross between any
 * two GPUs of a kind whatever it says (they are host memory). */
static void print_peers(hcq_device *const *d, uint32_t n, int json)
{
    int first = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (!d[i]) continue;
        const char *kind = hcq_device_get_props(d[i])->kind;
        bool seen = false; /* the header is printed once, by the kind's first device */
        for (uint32_t k = 0; k < i; k++) seen |= d[k] && !strcmp(hcq_device_get_props(d[k])->kind, kind);
        uint32_t same = 0;
        for (uint32_t k = 0; k < n; k++) same += d[k] && !strcmp(hcq_device_get_props(d[k])->kind, kind);
        if (same < 2 || strcmp(kind, "CPU") == 0) continue;
        if (!json && !seen) {
            printf("%s peer access (row reads column's memory: peer = on the copy engine, host = staged through "
                   "host memory):\n  %-8s", kind, "");
            for (uint32_t k = 0; k < n; k++)
                if (d[k] && !strcmp(hcq_device_get_props(d[k])->kind, kind))
                    printf(" %-6s", hcq_device_get_props(d[k])->id);
            printf("\n");
        }
        if (!json) printf("  %-8s", hcq_device_get_props(d[i])->id);
        for (uint32_t k = 0; k < n; k++) {
            if (!d[k] || strcmp(hcq_device_get_props(d[k])->kind, kind)) continue;
            if (k == i) {
                if (!json) printf(" %-6s", "-");
                continue;
            }
            hcq_status s = hcq_device_peer_access(d[i], d[k]);
            if (json) {
                printf("%s\n  {\"from\": \"%s\", \"to\": \"%s\", \"access\": \"%s\"", first ? "" : ",",
                       hcq_device_get_props(d[i])->id, hcq_device_get_props(d[k])->id, s ? "host" : "peer");
                if (s) {
                    printf(", \"why\": ");
                    tool_json_str(stdout, hcq_error_message());
                }
                printf("}");
                first = 0;
            } else {
                printf(" %-6s", s ? "host" : "peer");
            }
        }
        if (!json) printf("\n");
    }
}

static bool refused(const char *why) { return strstr(why, "EACCES") || strstr(why, "EPERM"); }

static void usage(FILE *f)
{
    fprintf(f, "usage: hcq info [--json] [--no-telemetry] [DEVICE...]\n\n"
               "Lists every device present (with HCQ_MOCK=1, the mock GPUs too), or the DEVICEs named\n"
               "(CPU, NV:0, AMD:1), opens each and prints its properties, including the fixed memory an\n"
               "open device holds, and what its driver reports without vendor libraries: UUID, PCI\n"
               "identity and link, temperatures, power, clocks, utilization, memory in use and by which\n"
               "processes, ECC and fault counts. A reading the driver refuses says \"unavailable\" and\n"
               "why; each names its source (the RM control or sysfs file). `hcq top` refreshes them.\n"
               "For a GPU kind with no device it says why: the device node, the errno or driver status,\n"
               "and the fix (a module to load, a group to join).\n"
               "A device present but not accessible (its node refuses this user, its driver fails) is\n"
               "listed with the error and the fix, and so is a kind whose driver refuses this user;\n"
               "either makes the exit status 1.\n"
               "With two or more GPUs of a kind it prints their peer-access matrix: whether each GPU's\n"
               "copy engine reaches the others' memory (peer) or copies go through host memory (host).\n"
               "--json prints one JSON object: {\"hcq\": {version, revision}, \"devices\": [{\"id\",\n"
               "\"accessible\", ...; \"status\" and \"error\" when not accessible}], \"peers\": [{\"from\",\n"
               "\"to\", \"access\": \"peer\" or \"host\", \"why\" for host}], \"absent\": [{\"kind\",\n"
               "\"why\", \"refused\"}]}.\n");
}

int tool_info(int argc, char **argv)
{
    int json = 0, telemetry = 1;
    char names[32][16];
    uint32_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--no-telemetry")) {
            telemetry = 0;
        } else if (argv[i][0] == '-') {
            return tool_bad_arg("info", argv[i]);
        } else if (n < 32) {
            snprintf(names[n++], sizeof names[0], "%s", argv[i]);
        }
    }
    /* listing what is present: also the GPU kinds with none, and why */
    const char *kinds[] = {"NV", "AMD"};
    char why[2][1024];
    bool absent[2] = {false, false};
    bool listed = !n; /* the devices present, not names the user gave */
    if (!n) {
        n = hcq_device_list(names, 32);
        if (n > 32) n = 32;
        for (int k = 0; k < 2; k++) absent[k] = hcq_device_count(kinds[k], why[k], sizeof why[k]) == 0;
    }
    hcq_telemetry *t = telemetry ? malloc(sizeof *t) : NULL;
    if (json) {
        printf("{");
        tool_json_hcq(stdout);
        printf(",\n \"devices\": [\n");
    }
    int rc = 0, ninaccessible = 0;
    hcq_device *open[32] = {0};
    for (uint32_t i = 0; i < n; i++) {
        hcq_device *d = hcq_device_open(names[i]);
        if (!d) {
            print_inaccessible(names[i], listed, json, i + 1 == n);
            ninaccessible++;
            rc = 1;
            continue;
        }
        const hcq_telemetry *tp = t && !hcq_device_telemetry(d, t) ? t : NULL;
        if (json) print_json(hcq_device_get_props(d), tp, i + 1 == n);
        else print_text(hcq_device_get_props(d), tp);
        open[i] = d; /* kept for the peer matrix */
    }
    if (json) printf("],\n \"peers\": [");
    print_peers(open, n, json);
    for (uint32_t i = 0; i < n; i++) hcq_device_close(open[i]);
    if (json) printf("],\n \"absent\": [");
    for (int k = 0, first = 1; k < 2; k++) {
        if (!absent[k]) continue;
        bool no = refused(why[k]);
        if (no) rc = 1;
        if (json) {
            printf("%s\n  {\"kind\": \"%s\", \"refused\": %s, \"why\": ", first ? "" : ",", kinds[k],
                   no ? "true" : "false");
            tool_json_str(stdout, why[k]);
            printf("}");
            first = 0;
        } else {
            printf("%s  %s: %s\n", kinds[k], no ? "refused (a GPU may be present)" : "none", why[k]);
        }
    }
    if (json) printf("]}\n");
    free(t);
    if (ninaccessible)
        fprintf(stderr, "hcq info: %d device%s %s: see %s\n", ninaccessible, ninaccessible == 1 ? "" : "s",
                listed ? "present but not accessible" : "not opened", json ? "the \"error\" in the JSON" : "above");
    return rc;
}
