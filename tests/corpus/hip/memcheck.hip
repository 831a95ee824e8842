// Kernels with planted out-of-bounds accesses for memcheck's bounds check
// (tests/mock/test_memcheck.c); tests/mock/memcheck.cu is their CUDA twin.
// Built like corpus.hip.
#define __global__ extern "C" __attribute__((global))

static __attribute__((device)) inline int tid() { return (int)__builtin_amdgcn_workitem_id_x(); }

__global__ void mc_store(int *p, int at) { p[at + tid()] = tid() + 1; }

__global__ void mc_load(const int *p, int *out, int at) { out[tid()] = p[at + tid()]; }
