// `runner __profile_driver --plugin FILE --kernel NAME --operation OP --m M --n N --k K --block B
// [--lda L --ldb L] [--dtype D]`: the process `runner --profile` runs under ncu, and tests/sanitizer runs under
// compute-sanitizer. It loads one plugin, fills the inputs with cudaMemcpy (a copy, not a kernel: every
// kernel ncu sees is the plugin's), allocates each matrix exactly (rows x leading dimension, so any access
// past it is outside the allocation), calls the kernel once on its own stream, waits, and exits 0; any
// failure is one line on stderr and exit 1. It is not a measurement: nothing is verified or timed.
// Leading dimensions (transposes only) default to packed. A GEMM runs in --dtype, by default the first of
// fp32, tf32, bf16, fp16 the kernel declares (so a bf16-only kernel is called in bf16, with bf16 inputs).
#include "cuda/profile_driver.hpp"

#include <kreg/abi.h>

#include <iostream>
#include <map>
#include <string>

#ifdef KREG_HAVE_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <vector>
#endif

namespace kreg {

#ifndef KREG_HAVE_CUDA
int profile_driver_main(int, char**) {
    std::cerr << "runner __profile_driver: this runner was built without CUDA\n";
    return 1;
}
#else
namespace {

struct DeviceBuffer {
    void* ptr = nullptr;
    ~DeviceBuffer() { cudaFree(ptr); }
};

template <typename T>
std::string copy_to_device(DeviceBuffer& buffer, const std::vector<T>& host) {
    const size_t bytes = host.size() * sizeof(T);
    if (cudaMalloc(&buffer.ptr, std::max<size_t>(bytes, 16)) != cudaSuccess)
        return "cudaMalloc of " + std::to_string(bytes) + " bytes failed";
    if (cudaMemcpy(buffer.ptr, host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess) return "cudaMemcpy failed";
    return "";
}

// Allocates count elements of the dtype's input type (fp32 for fp32 and tf32) holding values in [-1, 1)
// (never NaN: a GEMM would otherwise take other paths).
std::string fill(DeviceBuffer& buffer, size_t count, kreg_dtype dtype = KREG_DTYPE_FP32) {
    std::vector<float> host(count);
    uint64_t state = 0x6b726567;
    for (float& x : host) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>(state >> 40) * (1.0f / 8388608.0f) - 1.0f;
    }
    if (dtype == KREG_DTYPE_BF16) {
        std::vector<__nv_bfloat16> narrow(count);
        std::transform(host.begin(), host.end(), narrow.begin(), [](float x) { return __float2bfloat16_rn(x); });
        return copy_to_device(buffer, narrow);
    }
    if (dtype == KREG_DTYPE_FP16) {
        std::vector<__half> narrow(count);
        std::transform(host.begin(), host.end(), narrow.begin(), [](float x) { return __float2half_rn(x); });
        return copy_to_device(buffer, narrow);
    }
    return copy_to_device(buffer, host);
}

// The dtype a GEMM is called in: --dtype when given (it must be one the kernel declares), else the first
// of fp32, tf32, bf16, fp16 that it declares.
std::string choose_dtype(const std::map<std::string, std::string>& opt, uint32_t declared, kreg_dtype& dtype) {
    const std::pair<const char*, kreg_dtype> order[] = {
        {"fp32", KREG_DTYPE_FP32}, {"tf32", KREG_DTYPE_TF32}, {"bf16", KREG_DTYPE_BF16}, {"fp16", KREG_DTYPE_FP16}};
    const auto wanted = opt.find("--dtype");
    for (const auto& [name, value] : order) {
        const bool declares = (declared & KREG_DTYPE_BIT(value)) != 0;
        if (wanted != opt.end() ? wanted->second == name : declares) {
            if (!declares) return "the kernel does not declare dtype " + wanted->second;
            dtype = value;
            return "";
        }
    }
    return wanted != opt.end() ? "--dtype must be fp32, tf32, bf16 or fp16, got " + wanted->second
                               : "the kernel declares no dtype this driver knows";
}

int fail(const std::string& why) {
    std::cerr << "runner __profile_driver: " << why << "\n";
    return 1;
}

}  // namespace

int profile_driver_main(int argc, char** argv) {
    std::map<std::string, std::string> opt;
    for (int i = 2; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
    for (const char* key : {"--plugin", "--kernel", "--operation", "--m", "--n", "--k", "--block"})
        if (!opt.count(key)) return fail(std::string("missing ") + key);
    int64_t m = 0, n = 0, k = 0, block = 0;
    try {
        m = std::stoll(opt["--m"]), n = std::stoll(opt["--n"]), k = std::stoll(opt["--k"]);
        block = std::stoll(opt["--block"]);
    } catch (const std::exception&) {
        return fail("--m, --n, --k and --block must be integers");
    }
    const std::string op = opt["--operation"];
    int64_t lda = op == "gemm" ? k : n, ldb = op == "gemm" ? n : m;
    try {
        if (opt.count("--lda")) lda = std::stoll(opt["--lda"]);
        if (opt.count("--ldb")) ldb = std::stoll(opt["--ldb"]);
    } catch (const std::exception&) {
        return fail("--lda and --ldb must be integers");
    }
    if (m < 1 || n < 1 || lda < (op == "gemm" ? k : n) || ldb < (op == "gemm" ? n : m))
        return fail("sizes must be >= 1 and leading dimensions >= their rows");

    void* handle = dlopen(opt["--plugin"].c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return fail(std::string("cannot load ") + opt["--plugin"] + ": " + dlerror());
    auto entry = reinterpret_cast<kreg_plugin_entry_fn>(dlsym(handle, KREG_ENTRY_POINT_NAME));
    const kreg_plugin_descriptor* d = entry != nullptr ? entry() : nullptr;
    if (d == nullptr || d->abi_major != KREG_ABI_MAJOR) return fail(opt["--plugin"] + ": no usable kreg descriptor");
    // The array's stride is the plugin's own sizeof(kreg_kernel_info) (kreg/abi.h): shorter for a 1.0 plugin.
    const kreg_kernel_info* info = nullptr;
    const size_t stride = d->kernel_count > 0 ? d->kernels[0].struct_size : 0;
    for (uint32_t i = 0; i < d->kernel_count; ++i) {
        const auto* k =
            reinterpret_cast<const kreg_kernel_info*>(reinterpret_cast<const char*>(d->kernels) + i * stride);
        if (opt["--kernel"] == k->name) info = k;
    }
    if (info == nullptr) return fail(opt["--plugin"] + " has no kernel " + opt["--kernel"]);
    const bool has_1_1_fields = info->struct_size >= sizeof(kreg_kernel_info);  // else only GEMM fields exist

    int devices = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0)
        return fail(std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return fail("cannot create a CUDA stream");
    void* instance = nullptr;
    char error[1024] = "";
    if (info->create(&instance, error, sizeof error) != KREG_STATUS_OK) return fail(std::string("create: ") + error);

    DeviceBuffer a, b, c;
    std::string why;
    kreg_status status = KREG_STATUS_OK;
    if (op == "gemm" && info->operation == KREG_OPERATION_GEMM) {
        kreg_dtype dtype = KREG_DTYPE_FP32;
        if (!(why = choose_dtype(opt, info->dtypes, dtype)).empty()) return fail(opt["--kernel"] + ": " + why);
        if ((why = fill(a, size_t(m * lda), dtype)).empty() && (why = fill(b, size_t(k * ldb), dtype)).empty())
            why = fill(c, size_t(m * n));
        if (!why.empty()) return fail(why);
        kreg_gemm_args args{};
        args.struct_size = sizeof args;
        args.m = m, args.n = n, args.k = k, args.lda = lda, args.ldb = ldb, args.ldc = n;
        args.alpha = 1.0, args.beta = 0.0;
        args.dtype = dtype;
        args.a = a.ptr, args.b = b.ptr, args.c = c.ptr, args.stream = stream;
        status = info->run_gemm(instance, &args, error, sizeof error);
    } else if (op == "transpose" && has_1_1_fields && info->operation == KREG_OPERATION_TRANSPOSE) {
        if ((why = fill(a, size_t(m * lda))).empty()) why = fill(b, size_t(n * ldb));
        if (!why.empty()) return fail(why);
        kreg_transpose_args args{};
        args.struct_size = sizeof args;
        args.m = m, args.n = n, args.lda = lda, args.ldb = ldb, args.dtype = KREG_DTYPE_FP32;
        args.a = a.ptr, args.b = b.ptr, args.stream = stream;
        status = info->run_transpose(instance, &args, error, sizeof error);
    } else if (op == "block_transpose" && has_1_1_fields && info->operation == KREG_OPERATION_BLOCK_TRANSPOSE) {
        if (!(why = fill(a, size_t(m * lda))).empty()) return fail(why);
        kreg_block_transpose_args args{};
        args.struct_size = sizeof args;
        args.m = m, args.n = n, args.lda = lda, args.block = block, args.dtype = KREG_DTYPE_FP32;
        args.a = a.ptr, args.stream = stream;
        status = info->run_block_transpose(instance, &args, error, sizeof error);
    } else {
        return fail(opt["--kernel"] + " is not a " + op + " kernel this driver can call");
    }
    if (status != KREG_STATUS_OK) return fail(std::string("the kernel failed: ") + error);
    const cudaError_t done = cudaStreamSynchronize(stream);
    if (done != cudaSuccess) return fail(std::string("the kernel failed: ") + cudaGetErrorString(done));
    info->destroy(instance);
    cudaStreamDestroy(stream);
    return 0;
}
#endif

}  // namespace kreg
