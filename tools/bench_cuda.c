/* The CUDA driver API side of `hcq bench --vs-cuda`. libcuda is loaded with
 * dlopen here and nowhere else: hcq never links or needs it. The function
 * types are the driver API's published signatures, declared by us. */
#include "tools/bench.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context, *cu_module, *cu_function, *cu_stream, *cu_graph, *cu_graph_exec;
typedef unsigned long long cu_ptr;

struct bench_cuda {
    void *lib;
    cu_device dev;
    cu_context ctx;
    cu_module mod;
    cu_function empty;
    cu_stream stream;
    cu_ptr buf;
    cu_result (*Init)(unsigned);
    cu_result (*DeviceGet)(cu_device *, int);
    cu_result (*PrimaryCtxRetain)(cu_context *, cu_device);
    cu_result (*PrimaryCtxRelease)(cu_device);
    cu_result (*CtxSetCurrent)(cu_context);
    cu_result (*CtxSynchronize)(void);
    cu_result (*ModuleLoadData)(cu_module *, const void *);
    cu_result (*ModuleUnload)(cu_module);
    cu_result (*ModuleGetFunction)(cu_function *, cu_module, const char *);
    cu_result (*LaunchKernel)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              cu_stream, void **, void **);
    cu_result (*MemAlloc)(cu_ptr *, size_t);
    cu_result (*MemFree)(cu_ptr);
    cu_result (*MemcpyHtoD)(cu_ptr, const void *, size_t);
    cu_result (*MemcpyDtoH)(void *, cu_ptr, size_t);
    cu_result (*MemcpyDtoD)(cu_ptr, cu_ptr, size_t);
    cu_result (*StreamCreate)(cu_stream *, unsigned);
    cu_result (*StreamDestroy)(cu_stream);
    cu_result (*StreamSynchronize)(cu_stream);
    cu_result (*StreamBeginCapture)(cu_stream, int);
    cu_result (*StreamEndCapture)(cu_stream, cu_graph *);
    cu_result (*GraphInstantiate)(cu_graph_exec *, cu_graph, unsigned long long);
    cu_result (*GraphLaunch)(cu_graph_exec, cu_stream);
    cu_result (*GraphDestroy)(cu_graph);
    cu_result (*GraphExecDestroy)(cu_graph_exec);
    cu_result (*GetErrorString)(cu_result, const char **);
};

/* an empty kernel in PTX, JIT-compiled by the driver for whatever GPU it is */
static const char empty_ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                                ".visible .entry empty(.param .u64 p)\n{\n\tret;\n}\n";

static bool failed(bench_ctx *b, const char *what, cu_result r)
{
    if (!r) return false;
    const char *s = NULL;
    if (b->cuda && b->cuda->GetErrorString) b->cuda->GetErrorString(r, &s);
    snprintf(b->cuda_status, sizeof b->cuda_status, "%s failed: error %d (%s)", what, r, s ? s : "?");
    b->cuda_ok = false;
    return true;
}

#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&c->field = dlsym(c->lib, name);                                                 \
        if (!c->field) {                                                                           \
            snprintf(b->cuda_status, sizeof b->cuda_status, "libcuda lacks %s", name);             \
            return;                                                                                \
        }                                                                                          \
    } while (0)

void bench_cuda_open(bench_ctx *b)
{
    bench_cuda *c = calloc(1, sizeof *c);
    if (!c) return;
    b->cuda = c;
    c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        snprintf(b->cuda_status, sizeof b->cuda_status, "not available (%s); hcq figures only", dlerror());
        return;
    }
    SYM(Init, "cuInit");
    SYM(DeviceGet, "cuDeviceGet");
    SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    SYM(CtxSetCurrent, "cuCtxSetCurrent");
    SYM(CtxSynchronize, "cuCtxSynchronize");
    SYM(ModuleLoadData, "cuModuleLoadData");
    SYM(ModuleUnload, "cuModuleUnload");
    SYM(ModuleGetFunction, "cuModuleGetFunction");
    SYM(LaunchKernel, "cuLaunchKernel");
    SYM(MemAlloc, "cuMemAlloc_v2");
    SYM(MemFree, "cuMemFree_v2");
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(MemcpyDtoD, "cuMemcpyDtoD_v2");
    SYM(StreamCreate, "cuStreamCreate");
    SYM(StreamDestroy, "cuStreamDestroy_v2");
    SYM(StreamSynchronize, "cuStreamSynchronize");
    SYM(StreamBeginCapture, "cuStreamBeginCapture_v2");
    SYM(StreamEndCapture, "cuStreamEndCapture");
    SYM(GraphInstantiate, "cuGraphInstantiateWithFlags");
    SYM(GraphLaunch, "cuGraphLaunch");
    SYM(GraphDestroy, "cuGraphDestroy");
    SYM(GraphExecDestroy, "cuGraphExecDestroy");
    SYM(GetErrorString, "cuGetErrorString");
    /* the same GPU as the hcq device when it is NV:N */
    const hcq_device_props *p = hcq_device_get_props(b->dev);
    int ordinal = !strcmp(p->kind, "NV") ? (int)p->index : 0;
    if (failed(b, "cuInit", c->Init(0)) || failed(b, "cuDeviceGet", c->DeviceGet(&c->dev, ordinal)) ||
        failed(b, "cuDevicePrimaryCtxRetain", c->PrimaryCtxRetain(&c->ctx, c->dev)) ||
        failed(b, "cuCtxSetCurrent", c->CtxSetCurrent(c->ctx)) ||
        failed(b, "cuModuleLoadData", c->ModuleLoadData(&c->mod, empty_ptx)) ||
        failed(b, "cuModuleGetFunction", c->ModuleGetFunction(&c->empty, c->mod, "empty")) ||
        failed(b, "cuStreamCreate", c->StreamCreate(&c->stream, 0)) ||
        failed(b, "cuMemAlloc", c->MemAlloc(&c->buf, 64 << 20)))
        return;
    b->cuda_ok = true;
    snprintf(b->cuda_status, sizeof b->cuda_status, "libcuda loaded, device %d; the CUDA column is the same "
             "measurement through the driver API", ordinal);
}

void bench_cuda_close(bench_ctx *b)
{
    bench_cuda *c = b->cuda;
    if (!c) return;
    if (b->cuda_ok) {
        c->MemFree(c->buf);
        c->StreamDestroy(c->stream);
        c->ModuleUnload(c->mod);
        c->PrimaryCtxRelease(c->dev);
    }
    if (c->lib) dlclose(c->lib);
    free(c);
    b->cuda = NULL;
}

static cu_result launch(bench_cuda *c)
{
    void *arg = &c->buf, *params[1] = {arg};
    return c->LaunchKernel(c->empty, 1, 1, 1, 1, 1, 1, 0, c->stream, params, NULL);
}

double bench_cuda_launch_enqueue(bench_ctx *b)
{
    if (!b->cuda_ok) return 0;
    bench_cuda *c = b->cuda;
    double v[32];
    int rounds = b->quick ? 8 : 20;
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        for (int i = 0; i < 500; i++)
            if (failed(b, "cuLaunchKernel", launch(c))) return 0;
        v[r] = (double)(hcq_now_ns() - t0) / 500 / 1000.0;
        if (failed(b, "cuStreamSynchronize", c->StreamSynchronize(c->stream))) return 0;
    }
    return bench_stats(v, rounds).median;
}

double bench_cuda_launch_roundtrip(bench_ctx *b)
{
    if (!b->cuda_ok) return 0;
    bench_cuda *c = b->cuda;
    double v[32];
    int rounds = b->quick ? 8 : 20;
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        if (failed(b, "cuLaunchKernel", launch(c)) || failed(b, "cuStreamSynchronize", c->StreamSynchronize(c->stream)))
            return 0;
        v[r] = (double)(hcq_now_ns() - t0) / 1000.0;
    }
    return bench_stats(v, rounds).median;
}

double bench_cuda_graph_node(bench_ctx *b, int nodes, bool with_sync)
{
    if (!b->cuda_ok) return 0;
    bench_cuda *c = b->cuda;
    cu_graph g = NULL;
    cu_graph_exec ge = NULL;
    if (failed(b, "cuStreamBeginCapture", c->StreamBeginCapture(c->stream, 0))) return 0; /* global mode */
    for (int i = 0; i < nodes; i++) launch(c);
    if (failed(b, "cuStreamEndCapture", c->StreamEndCapture(c->stream, &g)) ||
        failed(b, "cuGraphInstantiate", c->GraphInstantiate(&ge, g, 0)))
        return 0;
    double v[32];
    int rounds = b->quick ? 8 : 20;
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        if (failed(b, "cuGraphLaunch", c->GraphLaunch(ge, c->stream))) break;
        uint64_t t1 = hcq_now_ns();
        if (failed(b, "cuStreamSynchronize", c->StreamSynchronize(c->stream))) break;
        v[r] = (double)((with_sync ? hcq_now_ns() : t1) - t0) / nodes / 1000.0;
    }
    c->GraphExecDestroy(ge);
    c->GraphDestroy(g);
    return b->cuda_ok ? bench_stats(v, rounds).median : 0;
}

double bench_cuda_copy(bench_ctx *b, int dir, uint64_t size)
{
    if (!b->cuda_ok || size > (64ull << 20)) return 0;
    bench_cuda *c = b->cuda;
    uint8_t *host = malloc(size); /* pageable, like the memory hcq copies from */
    cu_ptr other = 0;
    if (!host || (dir == 2 && failed(b, "cuMemAlloc", c->MemAlloc(&other, size)))) {
        free(host);
        return 0;
    }
    memset(host, 1, size);
    double v[16];
    int rounds = b->quick ? 3 : 7;
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = hcq_now_ns();
        cu_result e = dir == 0 ? c->MemcpyHtoD(c->buf, host, size)
                      : dir == 1 ? c->MemcpyDtoH(host, c->buf, size)
                                 : c->MemcpyDtoD(other, c->buf, size);
        if (!e) e = c->CtxSynchronize();
        if (failed(b, "cuMemcpy", e)) break;
        v[r] = (double)size / (double)(hcq_now_ns() - t0);
    }
    if (other) c->MemFree(other);
    free(host);
    return b->cuda_ok ? bench_stats(v, rounds).median : 0;
}
