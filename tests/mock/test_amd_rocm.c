/* AMD's own runtime (ROCm 5.2 from Debian: rocminfo, libhsa-runtime64,
 * libamdhip64, hipcc) on the preloaded mock GPU (libhcqmock.so), as an
 * independent client of the emulated amdkfd, render node and sysfs: it
 * finds the amdgpu module (libkmod), enumerates the topology, opens the
 * render node through libdrm, sets up its process (apertures, memory
 * policy, trap handler, events), and creates AQL queues. Each test skips,
 * saying why, where the packages are absent (scripts/deps.sh installs
 * them). */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hcqtest.h"
#include "proctest.h"

TestSuite(amd_rocm, .timeout = 180);

/* rocminfo lists the mock's gfx90a (an MI210: 104 CUs, 4 SIMDs each, 8
 * shader engines, wave64, 64 GiB, ISA gfx90a) beside the CPU */
Test(amd_rocm, rocminfo_lists_the_mock_gfx90a_agent)
{
    if (t_sh("command -v rocminfo >/dev/null 2>&1")) cr_skip_test("rocminfo (Debian package rocminfo) is not installed");
    const char *lib = t_mock_preload_lib();
    char dir[T_TMP_PATH];
    t_tmpdir(dir, sizeof dir, "hcq-rocminfo");
    int rc = t_sh("HCQ_MOCK_CONFIG=amd=gfx90a LD_PRELOAD=%s timeout 120 rocminfo > %s/out.txt 2>&1", lib, dir);
    char path[T_TMP_PATH + 32];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    const char *out = t_slurp(path, 1 << 17);
    cr_assert_eq(rc, 0, "rocminfo failed (%d): %s", rc, out);
    static const char *const want[] = {
        "ROCk module is loaded",   "Name:                    gfx90a", "Marketing Name:          AMD Instinct MI210",
        "Device Type:             GPU", "Compute Unit:            104", "SIMDs per CU:            4",
        "Shader Engines:          8", "Wavefront Size:          64(0x40)", "Max Waves Per CU:        32(0x20)",
        "L2:                      8192(0x2000) KB", "Max Clock Freq. (MHz):   1700", "Chip ID:                 29711(0x740f)",
        "Size:                    67108864(0x4000000) KB", "amdgcn-amd-amdhsa--gfx90a", "System Timestamp Freq.:  1000.000000MHz",
        "*** Done ***"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(out, want[i]), "rocminfo does not say `%s`: %s", want[i], out);
    t_sh("rm -rf %s", dir);
}

/* A HIP program from Debian's hipcc: devices, properties, hipMalloc,
 * hipMemcpy, a launch, hipDeviceSynchronize, the results. The runtime's
 * first copy is its own blit kernel (machine code in libhsa-runtime64),
 * dispatched with an AQL kernel-dispatch packet. The mock's ISA executor
 * runs it, by default (no host twin exists for code hcq did not build),
 * and so does the program's kernel: the test holds the results. */
static const char *hip_prog =
    "#include <hip/hip_runtime.h>\n#include <stdio.h>\n"
    "__global__ void inc(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += i; }\n"
    "#define CK(x) do { hipError_t e = (x); if (e != hipSuccess) { printf(\"%s failed: %s\\n\", #x, "
    "hipGetErrorString(e)); return 1; } } while (0)\n"
    "int main(void) {\n  setvbuf(stdout, NULL, _IONBF, 0);\n"
    "  int n = 256, h[256], *d = NULL; for (int i = 0; i < n; i++) h[i] = 1;\n"
    "  int count = 0; CK(hipGetDeviceCount(&count)); printf(\"devices %d\\n\", count);\n"
    "  hipDeviceProp_t p; CK(hipGetDeviceProperties(&p, 0));\n"
    "  printf(\"device %s, %d CUs\\n\", p.gcnArchName, p.multiProcessorCount);\n"
    "  CK(hipMalloc(&d, n * sizeof(int))); printf(\"malloc ok\\n\");\n"
    "  CK(hipMemcpy(d, h, n * sizeof(int), hipMemcpyHostToDevice)); printf(\"copy in ok\\n\");\n"
    "  hipLaunchKernelGGL(inc, dim3(n / 64), dim3(64), 0, 0, d, n); CK(hipGetLastError()); printf(\"launched\\n\");\n"
    "  CK(hipDeviceSynchronize()); printf(\"synchronized\\n\");\n"
    "  CK(hipMemcpy(h, d, n * sizeof(int), hipMemcpyDeviceToHost));\n"
    "  int bad = 0; for (int i = 0; i < n; i++) bad += h[i] != 1 + i;\n"
    "  printf(\"results %s\\n\", bad ? \"WRONG\" : \"right\"); CK(hipFree(d)); return bad != 0; }\n";

/* hipcc takes a while: a program is built once per source and kept */
static void build_hip(const char *prog, char *bin, size_t bin_size)
{
    if (t_sh("command -v hipcc >/dev/null 2>&1 && test -f /usr/include/hip/hip_runtime.h"))
        cr_skip_test("hipcc and the HIP headers (Debian packages hipcc, libamdhip64-dev) are not installed");
    /* the HIP runtime unpacks code objects into $TMPDIR (<program>-XXXXXX
     * directories) and leaves them: the program runs with a TMPDIR of the
     * test's, removed when the test ends */
    char rt[T_TMP_PATH];
    setenv("TMPDIR", t_tmpdir(rt, sizeof rt, "hcq-hip-rt"), 1);
    unsigned long hash = 5381;
    for (const char *c = prog; *c; c++) hash = hash * 33 + (unsigned char)*c;
    char src[PATH_MAX + 8], name[32];
    snprintf(name, sizeof name, "hcq-hip-%lx", hash);
    t_kept_path(bin, bin_size, name);
    snprintf(src, sizeof src, "%s.hip", bin);
    if (access(bin, X_OK)) {
        FILE *f = fopen(src, "w");
        cr_assert_not_null(f);
        fputs(prog, f);
        fclose(f);
        cr_assert_eq(t_sh("timeout 170 hipcc --offload-arch=gfx90a -o %s.tmp %s >/dev/null 2>&1 && mv %s.tmp %s", bin, src,
                        bin, bin),
                     0, "hipcc failed on %s", src);
    }
}

Test(amd_rocm, a_hipcc_program_runs_to_its_results)
{
    char bin[PATH_MAX];
    build_hip(hip_prog, bin, sizeof bin);
    const char *lib = t_mock_preload_lib();
    char out_path[PATH_MAX + 16], cmd[3 * PATH_MAX];
    snprintf(out_path, sizeof out_path, "%s.out", bin);
    /* no HCQ_MOCK_SHADER: machine code without a twin goes to the ISA
     * executor by default */
    snprintf(cmd, sizeof cmd, "HCQ_MOCK_CONFIG=amd=gfx90a LD_PRELOAD=%s exec timeout 60 %s > %s 2>&1",
             lib, bin, out_path);
    /* the program in a process group of its own, stopped once the mock has
     * said where it stopped (the program itself then waits for ever) */
    unlink(out_path); /* a previous run's */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (!pid) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st = 0, rc = -1;
    for (int i = 0; i < 600; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            break;
        }
        FILE *f = fopen(out_path, "r");
        char chunk[8192] = "";
        if (f) {
            chunk[fread(chunk, 1, sizeof chunk - 1, f)] = 0;
            fclose(f);
        }
        if (strstr(chunk, "holds neither mock code")) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        usleep(100000);
    }
    if (rc < 0 && waitpid(pid, &st, WNOHANG) == 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    const char *out = t_slurp(out_path, 1 << 17);
    cr_assert(strstr(out, "devices 1") && strstr(out, "device gfx90a") && strstr(out, "104 CUs"), "%s", out);
    cr_assert(strstr(out, "malloc ok"), "hipMalloc: %s", out);
    cr_assert(strstr(out, "results right"), "the program did not get its results (exit %d): %s", rc, out);
    cr_assert_eq(rc, 0, "%s", out);
}

/* ROCm's runtime decides peer access from the KFD topology's links
 * (io_links between GPUs of an xGMI hive, p2p_links between PCIe peers):
 * hipDeviceCanAccessPeer on two mock GPUs says what the mock's links are
 * (it said no for every configuration while the topology had none), a
 * peer copy and a kernel reading the other GPU's memory work where they
 * are allowed, and without a link the copy goes through host memory
 * (for which ROCm asks KFD for a cooperative queue's GWS) */
static const char *peer_prog =
    "#include <hip/hip_runtime.h>\n#include <stdio.h>\n"
    "#define CK(x) do { hipError_t e = (x); if (e != hipSuccess) { printf(\"%s failed: %s\\n\", #x, "
    "hipGetErrorString(e)); return 1; } } while (0)\n"
    "__global__ void add(int *a, const int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
    "if (i < n) a[i] += b[i]; }\n"
    "int main(void) {\n  setvbuf(stdout, NULL, _IONBF, 0);\n"
    "  int n = 1 << 16, *h = (int *)malloc(n * 4), *d0, *d1;\n  for (int i = 0; i < n; i++) h[i] = i;\n"
    "  CK(hipSetDevice(0)); CK(hipMalloc(&d0, n * 4)); CK(hipMemcpy(d0, h, n * 4, hipMemcpyHostToDevice));\n"
    "  CK(hipSetDevice(1)); CK(hipMalloc(&d1, n * 4));\n"
    "  int can = 0, back = 0; CK(hipDeviceCanAccessPeer(&can, 1, 0)); CK(hipDeviceCanAccessPeer(&back, 0, 1));\n"
    "  printf(\"peer 1->0 %d, 0->1 %d\\n\", can, back);\n"
    "  if (can) CK(hipDeviceEnablePeerAccess(0, 0));\n"
    "  CK(hipMemcpyPeer(d1, 1, d0, 0, n * 4));\n"
    "  hipLaunchKernelGGL(add, dim3(n / 256), dim3(256), 0, 0, d1, d1, n); CK(hipDeviceSynchronize());\n"
    "  if (can) { hipLaunchKernelGGL(add, dim3(n / 256), dim3(256), 0, 0, d1, d0, n); CK(hipDeviceSynchronize()); }\n"
    "  CK(hipMemcpy(h, d1, n * 4, hipMemcpyDeviceToHost));\n"
    "  int bad = 0; for (int i = 0; i < n; i++) bad += h[i] != (can ? 3 : 2) * i;\n"
    "  printf(\"results %s\\n\", bad ? \"WRONG\" : \"right\"); return bad != 0;\n}\n";

Test(amd_rocm, hip_peer_access_and_copies_follow_the_mock_links)
{
    char bin[PATH_MAX];
    build_hip(peer_prog, bin, sizeof bin);
    const char *lib = t_mock_preload_lib();
    static const struct {
        const char *peer;
        int can;
    } cases[] = {{"xgmi", 1}, {"pcie", 1}, {"none", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out_path[PATH_MAX + 16];
        snprintf(out_path, sizeof out_path, "%s.%s.out", bin, cases[i].peer);
        int rc = t_sh("HCQ_MOCK_CONFIG=amd=gfx90ax2,amd_peer=%s LD_PRELOAD=%s timeout 60 %s > %s 2>&1", cases[i].peer, lib,
                      bin, out_path);
        const char *out = t_slurp(out_path, 1 << 16);
        char want[64];
        snprintf(want, sizeof want, "peer 1->0 %d, 0->1 %d", cases[i].can, cases[i].can);
        cr_assert(strstr(out, want), "amd_peer=%s: want `%s`: %s", cases[i].peer, want, out);
        cr_assert(strstr(out, "results right") && rc == 0, "amd_peer=%s (exit %d): %s", cases[i].peer, rc, out);
        unlink(out_path);
    }
}

/* What a HIP program ordinarily uses beyond a plain kernel, through ROCm's
 * runtime on the mock gfx90a: a kernel with a stack (its private segment:
 * the packet processor stops and asks the runtime for scratch through the
 * queue's queue_inactive_signal, ROCr allocates it, sets SET_SCRATCH_
 * BACKING_VA and the queue's fields, and restarts the queue), device
 * printf (hostcall: the device wakes the host's listener with s_sendmsg
 * MSG_INTERRUPT and syncs with buffer_wbinvl1_vol / buffer_invl2), events'
 * elapsed time, pinned host memory and managed memory. Each hung or
 * faulted on the mock before. */
static const char *features_prog =
    "#include <hip/hip_runtime.h>\n#include <stdio.h>\n"
    "#define CK(x) do { hipError_t e = (x); if (e != hipSuccess) { printf(\"FAIL %s: %s\\n\", #x, "
    "hipGetErrorString(e)); return 1; } } while (0)\n"
    "__global__ void stack(int *out, int n) { volatile int a[40]; for (int i = 0; i < 40; i++) a[i] = i * n;\n"
    "  out[threadIdx.x] = a[(threadIdx.x * 7) % 40]; }\n"
    "__global__ void hello(void) { if (threadIdx.x == 0) printf(\"device printf %d\\n\", (int)blockIdx.x); }\n"
    "__global__ void twice(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }\n"
    "int main(void) {\n  setvbuf(stdout, NULL, _IONBF, 0);\n"
    "  int *d, h[64]; CK(hipMalloc(&d, 256));\n"
    "  hipLaunchKernelGGL(stack, dim3(1), dim3(64), 0, 0, d, 3); CK(hipDeviceSynchronize());\n"
    "  CK(hipMemcpy(h, d, 256, hipMemcpyDeviceToHost));\n"
    "  int bad = 0; for (int i = 0; i < 64; i++) bad += h[i] != ((i * 7) % 40) * 3;\n"
    "  printf(\"stack %s\\n\", bad ? \"WRONG\" : \"right\");\n"
    "  hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0); CK(hipDeviceSynchronize());\n"
    "  int n = 1 << 16; float *f, *hp; CK(hipMalloc(&f, n * 4)); CK(hipMemsetD32((hipDeviceptr_t)f, 0x3f800000, n));\n"
    "  hipStream_t st; CK(hipStreamCreate(&st)); hipEvent_t e0, e1; CK(hipEventCreate(&e0)); CK(hipEventCreate(&e1));\n"
    "  CK(hipEventRecord(e0, st)); hipLaunchKernelGGL(twice, dim3(n / 256), dim3(256), 0, st, f, n);\n"
    "  CK(hipEventRecord(e1, st)); CK(hipStreamSynchronize(st));\n"
    "  float ms = -1; CK(hipEventElapsedTime(&ms, e0, e1)); printf(\"elapsed %s\\n\", ms >= 0 ? \"ok\" : \"bad\");\n"
    "  CK(hipHostMalloc(&hp, n * 4, 0)); CK(hipMemcpyAsync(hp, f, n * 4, hipMemcpyDeviceToHost, st));\n"
    "  CK(hipStreamSynchronize(st)); printf(\"pinned %s\\n\", hp[n - 1] == 2.0f ? \"right\" : \"WRONG\");\n"
    "  float *m; CK(hipMallocManaged(&m, 4096, hipMemAttachGlobal)); m[0] = 3;\n"
    "  hipLaunchKernelGGL(twice, dim3(1), dim3(64), 0, 0, m, 1); CK(hipDeviceSynchronize());\n"
    "  printf(\"managed %g\\n\", m[0]); printf(\"done\\n\"); return 0;\n}\n";

Test(amd_rocm, hip_stacks_printf_events_and_host_memory_run)
{
    char bin[PATH_MAX];
    build_hip(features_prog, bin, sizeof bin);
    const char *lib = t_mock_preload_lib();
    char out_path[PATH_MAX + 16];
    snprintf(out_path, sizeof out_path, "%s.out", bin);
    int rc = t_sh("HCQ_MOCK_CONFIG=amd=gfx90a LD_PRELOAD=%s timeout 90 %s > %s 2>&1", lib, bin, out_path);
    const char *out = t_slurp(out_path, 1 << 16);
    static const char *const want[] = {"stack right",   "device printf 0", "device printf 1", "elapsed ok",
                                       "pinned right",  "managed 6",       "done"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(out, want[i]), "the program does not say `%s` (exit %d): %s", want[i], rc, out);
    cr_assert_eq(rc, 0, "%s", out);
    unlink(out_path);
}
