#include "plugin/loader.hpp"

#include "common/library_format.hpp"
#include "common/operation_table.hpp"
#include "plugin/kernel_call.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

namespace kreg {
namespace {

using Kind = PluginLoadError::Kind;

[[noreturn]] void fail(Kind kind, const std::filesystem::path& path, const std::string& what) {
    throw PluginLoadError(kind, path.string() + ": " + what);
}

bool valid_kernel_name(const char* name) {
    if (name == nullptr || *name == '\0') return false;
    for (const char* p = name; *p; ++p) {
        const char c = *p;
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '.';
        if (!ok) return false;
    }
    return std::strlen(name) <= 128;
}

// Copies a kernel info of the plugin's layout into this runner's layout.
kreg_kernel_info normalise(const kreg_kernel_info* raw, uint32_t stride) {
    kreg_kernel_info info{};
    std::memcpy(&info, raw, std::min<size_t>(stride, sizeof(kreg_kernel_info)));
    info.struct_size = sizeof(kreg_kernel_info);
    return info;
}

void validate_kernel(const std::filesystem::path& path, size_t index, const kreg_kernel_info& k) {
    const std::string where = "kernel #" + std::to_string(index) + (k.name ? " ('" + std::string(k.name) + "')" : "");
    if (!valid_kernel_name(k.name))
        fail(Kind::bad_descriptor, path, where + " has no valid name (letters, digits, '_', '-', '.'; at most 128)");
    if (k.description == nullptr) fail(Kind::bad_descriptor, path, where + " has a null description");
    // An operation or dtype this runner does not know is not a broken descriptor: the plugin may be newer
    // than the runner (abi.h's minor-version promise). Such a kernel is listed as unavailable with the
    // reason (runner_cannot_run) and the plugin's other kernels load.
    if (k.backend != KREG_BACKEND_CPU && k.backend != KREG_BACKEND_CUDA)
        fail(Kind::bad_descriptor, path, where + " declares unknown backend " + std::to_string(int(k.backend)));
    if (k.dtypes == 0) fail(Kind::bad_descriptor, path, where + " declares no dtype (dtypes mask 0)");
    if (k.m_multiple < 1 || k.n_multiple < 1 || k.k_multiple < 1)
        fail(Kind::bad_descriptor, path, where + " declares a shape multiple < 1");
    if (k.max_m < 0 || k.max_n < 0 || k.max_k < 0)
        fail(Kind::bad_descriptor, path, where + " declares a negative maximum");
    if (k.create == nullptr || k.destroy == nullptr)
        fail(Kind::bad_descriptor, path, where + " lacks create or destroy");
    // A run entry for the kernel's own operation is required (1.3's run, or the operation's own entry); the
    // others are never called.
    if (const std::string missing = missing_run_entry(k); !missing.empty())
        fail(Kind::bad_descriptor, path, where + " " + missing);
    const OperationRow* row = operation_row(k.operation);
    if (row != nullptr && row->param() != nullptr && (k.block_multiple < 0 || k.max_block < 0))
        fail(Kind::bad_descriptor, path, where + " declares a negative block_multiple or max_block");
}

constexpr uint32_t kKnownDtypes = (1u << 4) - 1;  // fp32, tf32, bf16, fp16

}  // namespace

LoadedPlugin LoadedPlugin::load(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail(Kind::not_found, path, "no such file");
    if (!std::filesystem::is_regular_file(path, ec)) fail(Kind::not_shared_library, path, "not a regular file");
    const LibraryFormat format = library_format(path);
    if (const std::string advice = foreign_library_advice(format); !advice.empty())
        fail(Kind::not_shared_library, path, advice);
    if (format != native_library_format())
        fail(Kind::not_shared_library, path,
             native_library_format() == LibraryFormat::elf ? "not a shared library (no ELF header)"
                                                           : "not a library (no PE header, which every .dll has)");

    LoadedPlugin plugin;
    plugin.path_ = path;
    try {
        plugin.library_.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
        fail(Kind::dlopen_failed, path, std::string("could not be loaded: ") + e.what());
    }
    if (!plugin.library_.has(KREG_ENTRY_POINT_NAME))
        fail(Kind::no_entry_point, path,
             "no entry point: the library does not export '" KREG_ENTRY_POINT_NAME
             "' (is it a kreg plugin? did it use KREG_PLUGIN(...)?)");
    const auto entry = plugin.library_.get<const kreg_plugin_descriptor*()>(KREG_ENTRY_POINT_NAME);
    const kreg_plugin_descriptor* d = entry();
    if (d == nullptr) fail(Kind::null_descriptor, path, "entry point returned no descriptor (NULL)");
    // The first three fields have been stable since version 1; read them before trusting the rest.
    if (d->abi_major != KREG_ABI_MAJOR)
        fail(Kind::abi_mismatch, path,
             "ABI major " + std::to_string(d->abi_major) + " but runner expects " + std::to_string(KREG_ABI_MAJOR) +
                 " (rebuild the plugin against this kreg SDK)");
    if (d->struct_size < offsetof(kreg_plugin_descriptor, kernels) + sizeof(void*))
        fail(Kind::bad_descriptor, path, "descriptor struct_size " + std::to_string(d->struct_size) + " is too small");
    if (d->plugin_name == nullptr || *d->plugin_name == '\0')
        fail(Kind::bad_descriptor, path, "descriptor has no plugin name");
    if (d->plugin_version == nullptr) fail(Kind::bad_descriptor, path, "descriptor has no plugin version");
    if (d->kernel_count > 0 && d->kernels == nullptr)
        fail(Kind::bad_descriptor, path,
             "descriptor declares " + std::to_string(d->kernel_count) + " kernels but no array");
    if (d->kernel_count > 4096) fail(Kind::bad_descriptor, path, "descriptor declares an absurd kernel count");
    plugin.descriptor_ = d;

    if (d->kernel_count > 0) {
        const uint32_t stride = d->kernels[0].struct_size;
        if (stride < offsetof(kreg_kernel_info, describe_launch))
            fail(Kind::bad_descriptor, path, "kernel info struct_size " + std::to_string(stride) + " is too small");
        const auto* base = reinterpret_cast<const unsigned char*>(d->kernels);
        for (uint32_t i = 0; i < d->kernel_count; ++i) {
            const kreg_kernel_info info =
                normalise(reinterpret_cast<const kreg_kernel_info*>(base + size_t(i) * stride), stride);
            validate_kernel(path, i, info);
            for (const auto& seen : plugin.kernels_)
                if (std::strcmp(seen.name, info.name) == 0)
                    fail(Kind::bad_descriptor, path,
                         "kernel name '" + std::string(info.name) + "' appears twice in the plugin");
            plugin.kernels_.push_back(info);
        }
    }
    return plugin;
}

const kreg_kernel_info* LoadedPlugin::find_kernel(const std::string& name) const {
    for (const auto& k : kernels_)
        if (name == k.name) return &k;
    return nullptr;
}

std::string operation_name(kreg_operation op) {
    if (const OperationRow* row = operation_row(op)) return row->name;
    return "unknown operation " + std::to_string(int(op));
}

std::string runner_cannot_run(const kreg_kernel_info& k) {
    if (operation_row(k.operation) == nullptr)
        return "declares operation " + std::to_string(int(k.operation)) + ", which this runner does not know (ABI " +
               std::to_string(KREG_ABI_MAJOR) + "." + std::to_string(KREG_ABI_MINOR) + " knows " +
               operation_names(", ") + ")";
    if ((k.dtypes & kKnownDtypes) == 0)
        return "declares only dtypes this runner does not know (dtypes mask " + std::to_string(k.dtypes) + ")";
    return "";
}

KernelMeta to_kernel_meta(const kreg_kernel_info& k) {
    KernelMeta m;
    // The loader validated these for plugins it loaded; kernel infos built by hand (tests) may leave them null.
    m.name = k.name != nullptr ? k.name : "";
    m.description = k.description != nullptr ? k.description : "";
    m.operation = operation_name(k.operation);
    // Dtypes this runner does not know are left out; a kernel left with none cannot run (the reason says so).
    m.unavailable_reason = runner_cannot_run(k);
    m.backend = static_cast<Backend>(k.backend);
    for (DType d : all_dtypes())
        if (k.dtypes & KREG_DTYPE_BIT(static_cast<kreg_dtype>(d))) m.dtypes.push_back(d);
    m.min_compute_capability = k.min_compute_capability;
    m.m_multiple = k.m_multiple;
    m.n_multiple = k.n_multiple;
    m.k_multiple = k.k_multiple;
    m.max_m = k.max_m;
    m.max_n = k.max_n;
    m.max_k = k.max_k;
    m.honours_alpha_beta = (k.flags & KREG_KERNEL_HONOURS_ALPHA_BETA) != 0;
    m.honours_leading_dims = (k.flags & KREG_KERNEL_HONOURS_LEADING_DIMS) != 0;
    m.has_traffic_model = k.model_global_bytes != nullptr;
    m.block_multiple = k.block_multiple > 0 ? k.block_multiple : 1;
    m.max_block = k.max_block;
    return m;
}

PluginInfo LoadedPlugin::info() const {
    PluginInfo p;
    p.path = path_.string();
    p.name = descriptor_->plugin_name;
    p.version = descriptor_->plugin_version;
    p.abi_major = descriptor_->abi_major;
    p.abi_minor = descriptor_->abi_minor;
    for (const auto& k : kernels_) p.kernels.push_back(to_kernel_meta(k));
    return p;
}

}  // namespace kreg
