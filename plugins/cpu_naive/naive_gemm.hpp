// The cpu_naive kernel's body, compiled by the cpu_naive plugin and by cpu_dispatch (which routes calls to it):
// one definition of the kernel, two plugins that run it.
#pragma once

#include <kreg/abi.h>

namespace kreg::cpu_naive {

// Traffic model of the triple loop (nothing reused from cache), for kreg_kernel_info::model_global_bytes.
double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype);
// C = alpha*A*B + beta*C for fp32, any shape and leading dimensions; throws kreg::Error for arguments it refuses.
void run(const kreg_gemm_args& args);

}  // namespace kreg::cpu_naive
