// `runner __profile_driver --plugin FILE --kernel NAME --operation OP --KEY VALUE... [--lda L --ldb L]
// [--dtype D]`: the process `runner --profile` runs under ncu, and tests/sanitizer runs under
// compute-sanitizer. It loads one plugin (plugin/loader.hpp, as a worker does), fills the inputs with cudaMemcpy
// (a copy, not a kernel: every kernel ncu sees is the plugin's), allocates each operand exactly (rows x leading
// dimension, so any access past it is outside the allocation), calls the kernel once on its own stream through
// the entry its ABI version has (plugin/kernel_call.hpp), waits, and exits 0; any failure is one line on stderr
// and exit 1. It is not a measurement: nothing is verified or timed. The operands and the sizes come from the
// operation's row of common/operations.def: one --KEY VALUE per key of the row gives the shape (--m --n --k for
// a GEMM, --m --n for a transpose, --m --n --block where a tile edge is a key, --n for one size key); an option of a
// key the operation lacks is ignored. --lda and --ldb are the leading dimensions of the call's first and second
// operand (a GEMM's A and B, a transpose's A and its output, an in-place matrix), packed by default. The kernel runs in
// --dtype, by default the first of fp32, tf32, bf16, fp16 it declares (so a bf16-only kernel is called in bf16,
// with bf16 inputs).
#include "cuda/profile_driver.hpp"

#include "common/operation_table.hpp"
#include "plugin/kernel_call.hpp"
#include "plugin/loader.hpp"

#include <kreg/abi.h>

#include <iostream>
#include <map>
#include <optional>
#include <string>

#ifdef KREG_HAVE_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

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

// One operand of the call: its extent in the operation's row, its leading dimension and its device buffer.
struct DriverOperand {
    Extent extent;
    char role = 'a';  // the call's a, b or c
    bool output = false;
    int64_t ld = 0;
    DeviceBuffer buffer;
};

// The operands the call has, in order (a, b, c; an in-place operation's c alone), with --lda and --ldb applied to
// the first and the second; "" or why the options do not fit.
std::string lay_out(const OperationRow& row, const Shape& shape, std::map<std::string, std::string>& opt,
                    DriverOperand (&operands)[3], int& count) {
    count = 0;
    for (const auto& [extent, role] : {std::pair<Extent, char>{row.a, 'a'}, {row.b, 'b'}, {row.c, 'c'}}) {
        const bool output = role == 'c';
        if (element_count(shape, extent) == 0 || (row.in_place && !output)) continue;
        DriverOperand& o = operands[count];
        o.extent = extent;
        o.role = role;
        o.output = output;
        o.ld = row_length(shape, extent);
        const char* option = count == 0 ? "--lda" : count == 1 ? "--ldb" : nullptr;
        try {
            if (option && opt.count(option)) o.ld = std::stoll(opt[option]);
        } catch (const std::exception&) {
            return "--lda and --ldb must be integers";
        }
        if (o.ld < row_length(shape, extent)) return "leading dimensions must be >= their rows";
        ++count;
    }
    return "";
}

// The inputs filled in the kernel's dtype, the output (unless it is in place, and so an input) in fp32.
std::string allocate(const OperationRow& row, const Shape& shape, kreg_dtype dtype, DriverOperand (&operands)[3],
                     int count) {
    for (int i = 0; i < count; ++i) {
        DriverOperand& o = operands[i];
        const size_t elements = size_t(dim_value(shape, o.extent.rows)) * size_t(o.ld);
        // C is fp32 for every dtype; an in-place matrix is the input, in the dtype (fp32 for the transposes).
        if (std::string why = fill(o.buffer, elements, o.output && !row.in_place ? KREG_DTYPE_FP32 : dtype);
            !why.empty())
            return why;
    }
    return "";
}

kreg_call call_of(const OperationRow& row, const Shape& shape, kreg_dtype dtype, DriverOperand (&operands)[3],
                  int count, void* stream) {
    kreg_call call{};
    call.struct_size = sizeof call;
    call.operation = row.abi;
    call.dtype = dtype;
    const std::vector<int64_t> sizes = key_values(row.id, shape);
    for (size_t i = 0; i < sizes.size() && i < KREG_CALL_MAX_SIZES; ++i) call.sizes[i] = sizes[i];
    call.alpha = 1.0;
    call.beta = 0.0;
    call.stream = stream;
    for (int i = 0; i < count; ++i) {
        DriverOperand& o = operands[i];
        if (o.role == 'a') call.a = o.buffer.ptr, call.lda = o.ld;
        if (o.role == 'b') call.b = o.buffer.ptr, call.ldb = o.ld;
        if (o.role == 'c') call.c = o.buffer.ptr, call.ldc = o.ld;
    }
    return call;
}

// The shape from one --KEY VALUE per key of the operation's row (--m --n --k for a GEMM, --n for an operation of one
// size); an option of a key the operation lacks is ignored. "" or why not.
std::string shape_from_options(Operation op, std::map<std::string, std::string>& opt, Shape& shape) {
    std::vector<std::string> options;
    std::string all;
    for (const ShapeKeyDef& key : operation_row(op).shape_keys()) {
        options.push_back(std::string("--") + key.name);
        all += (all.empty() ? "" : " ") + options.back();
    }
    std::vector<int64_t> values;
    for (const std::string& option : options) {
        if (!opt.count(option))
            return "missing " + option + " (a " + std::string(to_string(op)) + " takes " + all + ")";
        size_t used = 0;
        try {
            values.push_back(std::stoll(opt[option], &used));
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != opt[option].size()) return option + " must be an integer, got " + opt[option];
    }
    shape = shape_of(op, values);
    return "";
}

int profile_driver_main(int argc, char** argv) {
    std::map<std::string, std::string> opt;
    for (int i = 2; i + 1 < argc; i += 2) opt[argv[i]] = argv[i + 1];
    for (const char* key : {"--plugin", "--kernel", "--operation"})
        if (!opt.count(key)) return fail(std::string("missing ") + key);
    const std::optional<Operation> op = parse_operation(opt["--operation"]);
    if (!op) return fail("--operation must be " + operation_names() + ", got " + opt["--operation"]);
    const OperationRow& row = operation_row(*op);
    Shape shape;
    if (std::string why = shape_from_options(*op, opt, shape); !why.empty()) return fail(why);
    for (int64_t v : key_values(*op, shape))
        if (v < 1) return fail("sizes must be >= 1 and leading dimensions >= their rows");
    DriverOperand operands[3];
    int count = 0;
    if (std::string why = lay_out(row, shape, opt, operands, count); !why.empty())
        return fail(why == "leading dimensions must be >= their rows" ? "sizes must be >= 1 and " + why : why);

    std::optional<LoadedPlugin> plugin;
    try {
        plugin = LoadedPlugin::load(opt["--plugin"]);
    } catch (const std::exception& e) {
        return fail(std::string("cannot load ") + opt["--plugin"] + ": " + e.what());
    }
    const kreg_kernel_info* info = plugin->find_kernel(opt["--kernel"]);
    if (info == nullptr) return fail(opt["--plugin"] + " has no kernel " + opt["--kernel"]);
    if (info->operation != row.abi)
        return fail(opt["--kernel"] + " is not a " + row.name + " kernel this driver can call");

    int devices = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0)
        return fail(std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return fail("cannot create a CUDA stream");
    void* instance = nullptr;
    char error[1024] = "";
    if (info->create(&instance, error, sizeof error) != KREG_STATUS_OK) return fail(std::string("create: ") + error);

    kreg_dtype dtype = KREG_DTYPE_FP32;
    if (std::string why = choose_dtype(opt, info->dtypes, dtype); !why.empty())
        return fail(opt["--kernel"] + ": " + why);
    if (std::string why = allocate(row, shape, dtype, operands, count); !why.empty()) return fail(why);
    const kreg_call call = call_of(row, shape, dtype, operands, count, stream);
    if (run_kernel_call(*info, instance, call, error, sizeof error) != KREG_STATUS_OK)
        return fail(std::string("the kernel failed: ") + error);
    const cudaError_t done = cudaStreamSynchronize(stream);
    if (done != cudaSuccess) return fail(std::string("the kernel failed: ") + cudaGetErrorString(done));
    info->destroy(instance);
    cudaStreamDestroy(stream);
    return 0;
}
#endif

}  // namespace kreg
