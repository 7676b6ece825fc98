// A CPU kernel made of bare ABI functions (no plugin file), run through the measurement pipeline in the
// test's own process: for tests of how the pipeline treats one kind of kernel behaviour. The instance is
// an int the fake may use as its call counter (0 before the first call), so a fake can change behaviour
// after its first call.
#pragma once

#include "pipeline/job_runner.hpp"

#include <kreg/abi.h>

namespace kreg::test {

inline kreg_status fake_create(void** instance, char*, size_t) {
    *instance = new int(0);
    return KREG_STATUS_OK;
}
inline void fake_destroy(void* instance) { delete static_cast<int*>(instance); }

// job with run as its fp32 CPU kernel "fake" of plugin "fakes" (/nowhere/fakes.so), through run_cpu_gemm_job.
inline Record run_fake(decltype(kreg_kernel_info::run_gemm) run, const Job& job) {
    kreg_kernel_info info{};
    info.struct_size = sizeof info;
    info.name = "fake";
    info.description = "";
    info.backend = KREG_BACKEND_CPU;
    info.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    info.m_multiple = info.n_multiple = info.k_multiple = 1;
    info.create = &fake_create;
    info.destroy = &fake_destroy;
    info.run_gemm = run;
    void* instance = nullptr;
    fake_create(&instance, nullptr, 0);
    struct Destroy {
        void* instance;
        ~Destroy() { fake_destroy(instance); }
    } destroy{instance};
    return run_cpu_gemm_job(job, LoadedKernel{&info, instance, "fakes", "/nowhere/fakes.so"});
}

}  // namespace kreg::test
