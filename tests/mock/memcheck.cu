// Kernels with planted out-of-bounds accesses for memcheck's bounds check
// (tests/mock/test_memcheck.c); tests/corpus/hip/memcheck.hip is their HIP twin.
extern "C" __global__ void mc_store(int *p, int at)
{
    p[at + (int)threadIdx.x] = (int)threadIdx.x + 1;
}

extern "C" __global__ void mc_load(const int *p, int *out, int at)
{
    out[threadIdx.x] = p[at + (int)threadIdx.x];
}
