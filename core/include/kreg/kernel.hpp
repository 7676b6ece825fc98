// kreg C++ SDK: write a kernel as a class, export a plugin with one line.
//
//   class MyGemm final : public kreg::IKernel {
//   public:
//       static kreg::KernelSpec spec() {
//           kreg::KernelSpec s;
//           s.name = "my_gemm";
//           s.description = "what this variant adds";
//           s.backend = KREG_BACKEND_CPU;
//           return s;
//       }
//       void run_gemm(const kreg_gemm_args& args) override { ... }
//   };
//   KREG_PLUGIN("my_plugin", "1.0.0", MyGemm)
//
// KREG_PLUGIN generates the extern "C" entry point and noexcept trampolines around every member:
// an exception thrown by the kernel becomes a status plus message (kreg::Error carries its own status),
// never an unwinding across the library boundary.
#pragma once

#include <kreg/abi.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kreg {

// Everything kreg needs to know about a kernel besides its code. Defaults describe the common case:
// a GEMM on fp32 that accepts any shape and only C = A*B with packed leading dimensions.
struct KernelSpec {
    const char* name = nullptr;        // required, unique across plugins
    const char* description = "";      // one line
    kreg_operation operation = KREG_OPERATION_GEMM;
    kreg_backend backend = KREG_BACKEND_CPU;
    uint32_t dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    int32_t min_compute_capability = 0; // CUDA only: major*10+minor
    int64_t m_multiple = 1, n_multiple = 1, k_multiple = 1;
    int64_t max_m = 0, max_n = 0, max_k = 0; // 0: unbounded
    uint32_t flags = 0;                 // KREG_KERNEL_HONOURS_*
    double (*model_global_bytes)(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) = nullptr;
};

// Throw this from a kernel to return a specific status; any other exception becomes
// KREG_STATUS_INTERNAL_ERROR with its what() as the message.
class Error : public std::runtime_error {
public:
    Error(kreg_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
    kreg_status status() const noexcept { return status_; }

private:
    kreg_status status_;
};

class IKernel {
public:
    virtual ~IKernel() = default;
    // Run one GEMM as described by args (see kreg_gemm_args). Throw on failure.
    virtual void run_gemm(const kreg_gemm_args& args) = 0;
    // CUDA kernels: describe the launch run_gemm would make, for the report. Return false if unknown.
    virtual bool describe_launch(const kreg_gemm_args& /*args*/, kreg_launch_info& /*info*/) { return false; }
};

namespace detail {

inline void write_message(char* buffer, size_t size, const char* message) noexcept {
    if (buffer == nullptr || size == 0) return;
    std::snprintf(buffer, size, "%s", message != nullptr ? message : "");
}

// Runs body; turns every exception into a status and a message in the caller's buffer.
template <class Body>
kreg_status guarded(char* error, size_t error_size, Body&& body) noexcept {
    try {
        body();
        return KREG_STATUS_OK;
    } catch (const Error& e) {
        write_message(error, error_size, e.what());
        return e.status();
    } catch (const std::bad_alloc&) {
        write_message(error, error_size, "out of memory (std::bad_alloc)");
        return KREG_STATUS_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        write_message(error, error_size, e.what());
        return KREG_STATUS_INTERNAL_ERROR;
    } catch (...) {
        write_message(error, error_size, "unknown exception");
        return KREG_STATUS_INTERNAL_ERROR;
    }
}

template <class T>
kreg_status create(void** instance, char* error, size_t error_size) noexcept {
    return guarded(error, error_size, [&] { *instance = static_cast<IKernel*>(new T()); });
}

template <class T>
void destroy(void* instance) noexcept {
    try {
        delete static_cast<IKernel*>(instance);
    } catch (...) {
        // A destructor that throws is already terminate() territory; never let it cross the boundary.
    }
}

template <class T>
kreg_status run_gemm(void* instance, const kreg_gemm_args* args, char* error, size_t error_size) noexcept {
    return guarded(error, error_size, [&] {
        if (instance == nullptr || args == nullptr) throw Error(KREG_STATUS_INVALID_ARGUMENT, "null instance or arguments");
        static_cast<IKernel*>(instance)->run_gemm(*args);
    });
}

template <class T>
kreg_status describe_launch(void* instance, const kreg_gemm_args* args, kreg_launch_info* info, char* error,
                            size_t error_size) noexcept {
    return guarded(error, error_size, [&] {
        if (instance == nullptr || args == nullptr || info == nullptr) throw Error(KREG_STATUS_INVALID_ARGUMENT, "null argument");
        kreg_launch_info out{};
        out.struct_size = sizeof(kreg_launch_info);
        if (!static_cast<IKernel*>(instance)->describe_launch(*args, out)) throw Error(KREG_STATUS_UNSUPPORTED, "no launch description");
        *info = out;
    });
}

template <class T>
kreg_kernel_info make_kernel_info() {
    static_assert(std::is_base_of_v<IKernel, T>, "a kreg kernel class must derive from kreg::IKernel");
    static_assert(std::is_default_constructible_v<T>, "a kreg kernel class must be default-constructible");
    static_assert(std::is_same_v<decltype(T::spec()), KernelSpec>, "a kreg kernel class needs `static kreg::KernelSpec spec()`");
    const KernelSpec s = T::spec();
    kreg_kernel_info info{};
    info.struct_size = sizeof(kreg_kernel_info);
    info.name = s.name;
    info.description = s.description;
    info.operation = s.operation;
    info.backend = s.backend;
    info.dtypes = s.dtypes;
    info.min_compute_capability = s.min_compute_capability;
    info.m_multiple = s.m_multiple;
    info.n_multiple = s.n_multiple;
    info.k_multiple = s.k_multiple;
    info.max_m = s.max_m;
    info.max_n = s.max_n;
    info.max_k = s.max_k;
    info.flags = s.flags;
    info.model_global_bytes = s.model_global_bytes;
    info.create = &create<T>;
    info.destroy = &destroy<T>;
    info.run_gemm = &run_gemm<T>;
    info.describe_launch = &describe_launch<T>;
    return info;
}

// Builds the descriptor once, on the first call of the entry point. Returns NULL (which the loader
// reports) if a spec() throws.
template <class... Kernels>
const kreg_plugin_descriptor* descriptor(const char* plugin_name, const char* plugin_version) noexcept {
    static_assert(sizeof...(Kernels) > 0, "KREG_PLUGIN needs at least one kernel class");
    try {
        static const kreg_kernel_info kernels[] = {make_kernel_info<Kernels>()...};
        static const kreg_plugin_descriptor d = {sizeof(kreg_plugin_descriptor), KREG_ABI_MAJOR, KREG_ABI_MINOR,
                                                 plugin_name, plugin_version,
                                                 static_cast<uint32_t>(sizeof...(Kernels)), kernels};
        return &d;
    } catch (...) {
        return nullptr;
    }
}

}  // namespace detail
}  // namespace kreg

// The one line a plugin adds: its name, its version, and every kernel class it provides.
#define KREG_PLUGIN(plugin_name, plugin_version, ...)                                           \
    extern "C" KREG_EXPORT const kreg_plugin_descriptor* kreg_plugin_entry(void) {              \
        return ::kreg::detail::descriptor<__VA_ARGS__>(plugin_name, plugin_version);            \
    }
