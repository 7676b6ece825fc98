// Probe: the same launches timed by CUPTI activity records (outside ncu) and by ncu's gpu__time_duration.sum,
// to see whether the small-shape gap is a fixed per-launch offset of ncu's measurement.
#include <cupti.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
static std::vector<double> us;
static void CUPTIAPI req(uint8_t** buf, size_t* size, size_t* max) {
    *size = 1 << 22;
    *buf = (uint8_t*)aligned_alloc(8, *size);
    *max = 0;
}
static void CUPTIAPI done(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            auto* k = (CUpti_ActivityKernel9*)rec;
            us.push_back((k->end - k->start) * 1e-3);
        }
    free(buf);
}
__global__ void work(float* x, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int j = 0; j < iters; ++j) v = v * 1.0001f + 0.5f;
        x[i] = v;
    }
}
int main() {
    bool cupti = cuptiActivityRegisterCallbacks(req, done) == CUPTI_SUCCESS &&
                 cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
    int n = 1 << 24;
    float* x;
    cudaMalloc(&x, n * 4);
    cudaMemset(x, 0, n * 4);
    struct Cfg {
        int blocks, iters;
    } cfgs[] = {{1, 0}, {132, 0}, {1024, 0}, {1024, 50}, {1024, 400}, {4096, 400}, {8192, 1600}};
    const int reps = 12;
    for (auto c : cfgs)
        for (int r = 0; r < reps; ++r) {
            work<<<c.blocks, 256>>>(x, c.blocks * 256, c.iters);
            cudaDeviceSynchronize();
        }
    if (!cupti) {
        printf("no CUPTI (under a profiler): launches only\n");
        return 0;
    }
    cuptiActivityFlushAll(1);
    size_t i = 0;
    for (auto c : cfgs) {
        std::vector<double> v(us.begin() + i, us.begin() + i + reps);
        i += reps;
        std::sort(v.begin() + 2, v.end());
        printf("blocks %5d iters %5d cupti median %.3f us\n", c.blocks, c.iters, v[2 + (reps - 2) / 2]);
    }
}
