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
// The base class says the operation (ABI 1.1): kreg::IKernel is a GEMM, kreg::ITransposeKernel a transpose
// (override run_transpose(const kreg_transpose_args&)), kreg::IBlockTransposeKernel an in-place block
// transpose (override run_block_transpose(const kreg_block_transpose_args&)). One plugin may mix them:
//
//   class MyTranspose final : public kreg::ITransposeKernel {
//   public:
//       static kreg::KernelSpec spec() { kreg::KernelSpec s; s.name = "my_transpose"; return s; }
//       void run_transpose(const kreg_transpose_args& args) override { ... }
//   };
//   KREG_PLUGIN("my_plugin", "1.0.0", MyGemm, MyTranspose)
//
// kreg::IOperationKernel (ABI 1.3) is any operation through the generic entry: override
// run(const kreg_call&) and name the operation in spec().operation (an operation after 1.1 has only this):
//
//   class MyKernel final : public kreg::IOperationKernel {
//   public:
//       static kreg::KernelSpec spec() { kreg::KernelSpec s; s.name = "my_kernel"; s.operation = ...; return s; }
//       void run(const kreg_call& call) override { ... call.sizes[0] ... }
//   };
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
// fp32, any shape, only C = A*B (no alpha/beta) and packed leading dimensions.
struct KernelSpec {
    const char* name = nullptr;    // required, unique across plugins
    const char* description = "";  // one line
    // The operation comes from the base class (IKernel: GEMM, ITransposeKernel, IBlockTransposeKernel).
    // Leave this as it is; a value other than GEMM that contradicts the base class makes the entry point
    // return NULL, which the loader reports, rather than export a kernel whose run entry is missing.
    // An IOperationKernel names its operation here.
    kreg_operation operation = KREG_OPERATION_GEMM;
    kreg_backend backend = KREG_BACKEND_CPU;
    uint32_t dtypes = KREG_DTYPE_BIT(KREG_DTYPE_FP32);
    int32_t min_compute_capability = 0;  // CUDA only: major*10+minor
    int64_t m_multiple = 1, n_multiple = 1, k_multiple = 1;
    int64_t max_m = 0, max_n = 0, max_k = 0;  // 0: unbounded
    uint32_t flags = 0;                       // KREG_KERNEL_HONOURS_*
    // k: K for GEMM, 0 for transpose, the call's block for block_transpose (see kreg/abi.h).
    double (*model_global_bytes)(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) = nullptr;
    // Block transpose only: the blocks the kernel accepts (multiples of block_multiple, at most
    // max_block; 0 means unbounded). M and N must be multiples of the call's block anyway.
    int64_t block_multiple = 1, max_block = 0;
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

// A GEMM kernel.
class IKernel {
public:
    virtual ~IKernel() = default;
    // Run one GEMM as described by args (see kreg_gemm_args). Throw on failure.
    virtual void run_gemm(const kreg_gemm_args& args) = 0;
    // CUDA kernels: describe the launch run_gemm would make, for the report. Return false if unknown.
    virtual bool describe_launch(const kreg_gemm_args& /*args*/, kreg_launch_info& /*info*/) { return false; }
    // Kernels that choose among variants per call (dispatch kernels, ABI 1.2): the variant run_gemm runs for
    // args, for the row's evidence; decided from args alone, as run_gemm decides. "" names nothing.
    virtual std::string describe_variant(const kreg_gemm_args& /*args*/) { return ""; }
};

// A transpose kernel (ABI 1.1): B[N x M] = A[M x N]^T, see kreg_transpose_args.
class ITransposeKernel {
public:
    virtual ~ITransposeKernel() = default;
    virtual void run_transpose(const kreg_transpose_args& args) = 0;
    virtual bool describe_launch(const kreg_transpose_args& /*args*/, kreg_launch_info& /*info*/) { return false; }
};

// An in-place block transpose kernel (ABI 1.1): every args.block x args.block tile of A transposed where
// it stands, see kreg_block_transpose_args.
class IBlockTransposeKernel {
public:
    virtual ~IBlockTransposeKernel() = default;
    virtual void run_block_transpose(const kreg_block_transpose_args& args) = 0;
    virtual bool describe_launch(const kreg_block_transpose_args& /*args*/, kreg_launch_info& /*info*/) {
        return false;
    }
};

// Any operation, through ABI 1.3's generic entry: the operation is spec().operation, the call's sizes and
// operands are laid out as kreg/abi.h says for it (kreg_call).
class IOperationKernel {
public:
    virtual ~IOperationKernel() = default;
    virtual void run(const kreg_call& call) = 0;
    virtual bool describe_launch(const kreg_call& /*call*/, kreg_launch_info& /*info*/) { return false; }
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

// Which operation a kernel class implements, from its base class.
template <class T>
constexpr int base_count() {
    return int(std::is_base_of_v<IKernel, T>) + int(std::is_base_of_v<ITransposeKernel, T>) +
           int(std::is_base_of_v<IBlockTransposeKernel, T>) + int(std::is_base_of_v<IOperationKernel, T>);
}
template <class T>
constexpr kreg_operation operation_of() {
    if constexpr (std::is_base_of_v<ITransposeKernel, T>)
        return KREG_OPERATION_TRANSPOSE;
    else if constexpr (std::is_base_of_v<IBlockTransposeKernel, T>)
        return KREG_OPERATION_BLOCK_TRANSPOSE;
    else
        return KREG_OPERATION_GEMM;
}

// Instances travel as void* holding a T*: each trampoline is instantiated for its T, so it casts back to
// exactly the type create made.
template <class T>
kreg_status create(void** instance, char* error, size_t error_size) noexcept {
    return guarded(error, error_size, [&] { *instance = static_cast<void*>(new T()); });
}

template <class T>
void destroy(void* instance) noexcept {
    try {
        delete static_cast<T*>(instance);
    } catch (...) {
        // A destructor that throws is already terminate() territory; never let it cross the boundary.
    }
}

template <class T, class Args, class Body>
kreg_status run_checked(void* instance, const Args* args, char* error, size_t error_size, Body&& body) noexcept {
    return guarded(error, error_size, [&] {
        if (instance == nullptr || args == nullptr)
            throw Error(KREG_STATUS_INVALID_ARGUMENT, "null instance or arguments");
        body(*static_cast<T*>(instance), *args);
    });
}

template <class T>
kreg_status run_gemm(void* instance, const kreg_gemm_args* args, char* error, size_t error_size) noexcept {
    return run_checked<T>(instance, args, error, error_size, [](T& k, const kreg_gemm_args& a) { k.run_gemm(a); });
}

template <class T>
kreg_status run_transpose(void* instance, const kreg_transpose_args* args, char* error, size_t error_size) noexcept {
    return run_checked<T>(instance, args, error, error_size,
                          [](T& k, const kreg_transpose_args& a) { k.run_transpose(a); });
}

template <class T>
kreg_status run_block_transpose(void* instance, const kreg_block_transpose_args* args, char* error,
                                size_t error_size) noexcept {
    return run_checked<T>(instance, args, error, error_size,
                          [](T& k, const kreg_block_transpose_args& a) { k.run_block_transpose(a); });
}

template <class T>
kreg_status run_call(void* instance, const kreg_call* call, char* error, size_t error_size) noexcept {
    return run_checked<T>(instance, call, error, error_size, [](T& k, const kreg_call& c) { k.run(c); });
}

template <class T, class Args>
kreg_status describe_launch(void* instance, const Args* args, kreg_launch_info* info, char* error,
                            size_t error_size) noexcept {
    return guarded(error, error_size, [&] {
        if (instance == nullptr || args == nullptr || info == nullptr)
            throw Error(KREG_STATUS_INVALID_ARGUMENT, "null argument");
        kreg_launch_info out{};
        out.struct_size = sizeof(kreg_launch_info);
        if (!static_cast<T*>(instance)->describe_launch(*args, out))
            throw Error(KREG_STATUS_UNSUPPORTED, "no launch description");
        *info = out;
    });
}

template <class T>
kreg_status describe_gemm_variant(void* instance, const kreg_gemm_args* args, char* buffer,
                                  size_t buffer_size) noexcept {
    return guarded(buffer, buffer_size, [&] {
        if (instance == nullptr || args == nullptr) throw Error(KREG_STATUS_INVALID_ARGUMENT, "null argument");
        const std::string variant = static_cast<T*>(instance)->describe_variant(*args);
        if (variant.empty()) throw Error(KREG_STATUS_UNSUPPORTED, "no variant to name");
        write_message(buffer, buffer_size, variant.c_str());
    });
}

// The author's traffic model behind the same noexcept guarantee as every other entry: an exception
// becomes "no model" (a negative value, which the runner ignores) instead of terminate() in the runner.
template <class T>
double model_global_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) noexcept {
    try {
        return T::spec().model_global_bytes(m, n, k, dtype);
    } catch (...) {
        return -1.0;
    }
}

template <class T>
kreg_kernel_info make_kernel_info() {
    static_assert(base_count<T>() == 1,
                  "a kreg kernel class derives from exactly one of kreg::IKernel, kreg::ITransposeKernel, "
                  "kreg::IBlockTransposeKernel, kreg::IOperationKernel");
    static_assert(std::is_default_constructible_v<T>, "a kreg kernel class must be default-constructible");
    static_assert(std::is_same_v<decltype(T::spec()), KernelSpec>,
                  "a kreg kernel class needs `static kreg::KernelSpec spec()`");
    const KernelSpec s = T::spec();
    constexpr bool generic = std::is_base_of_v<IOperationKernel, T>;
    constexpr kreg_operation base_op = operation_of<T>();
    if (!generic && s.operation != KREG_OPERATION_GEMM && s.operation != base_op)
        throw std::logic_error("KernelSpec::operation contradicts the kernel's base class");
    const kreg_operation op = generic ? s.operation : base_op;
    kreg_kernel_info info{};
    info.struct_size = sizeof(kreg_kernel_info);
    info.name = s.name;
    info.description = s.description;
    info.operation = op;
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
    info.model_global_bytes = s.model_global_bytes != nullptr ? &model_global_bytes<T> : nullptr;
    info.create = &create<T>;
    info.destroy = &destroy<T>;
    if constexpr (generic) {
        info.run = &run_call<T>;
        info.describe_call_launch = &describe_launch<T, kreg_call>;
    } else if constexpr (base_op == KREG_OPERATION_GEMM) {
        info.run_gemm = &run_gemm<T>;
        info.describe_launch = &describe_launch<T, kreg_gemm_args>;
        info.describe_gemm_variant = &describe_gemm_variant<T>;
    } else if constexpr (base_op == KREG_OPERATION_TRANSPOSE) {
        info.run_transpose = &run_transpose<T>;
        info.describe_transpose_launch = &describe_launch<T, kreg_transpose_args>;
    } else {
        info.run_block_transpose = &run_block_transpose<T>;
        info.describe_block_transpose_launch = &describe_launch<T, kreg_block_transpose_args>;
    }
    info.block_multiple = s.block_multiple;
    info.max_block = s.max_block;
    return info;
}

// Builds the descriptor once, on the first call of the entry point. Returns NULL (which the loader
// reports) if a spec() throws.
template <class... Kernels>
const kreg_plugin_descriptor* descriptor(const char* plugin_name, const char* plugin_version) noexcept {
    static_assert(sizeof...(Kernels) > 0, "KREG_PLUGIN needs at least one kernel class");
    try {
        static const kreg_kernel_info kernels[] = {make_kernel_info<Kernels>()...};
        static const kreg_plugin_descriptor d = {sizeof(kreg_plugin_descriptor),
                                                 KREG_ABI_MAJOR,
                                                 KREG_ABI_MINOR,
                                                 plugin_name,
                                                 plugin_version,
                                                 static_cast<uint32_t>(sizeof...(Kernels)),
                                                 kernels};
        return &d;
    } catch (...) {
        return nullptr;
    }
}

}  // namespace detail
}  // namespace kreg

// The one line a plugin adds: its name, its version, and every kernel class it provides.
#define KREG_PLUGIN(plugin_name, plugin_version, ...)                                \
    extern "C" KREG_EXPORT const kreg_plugin_descriptor* kreg_plugin_entry(void) {   \
        return ::kreg::detail::descriptor<__VA_ARGS__>(plugin_name, plugin_version); \
    }
