// Loading one plugin .so and checking its descriptor against the ABI. Only workers (or the runner
// under --isolation none) call this: the parent process never loads plugin code.
#pragma once

#include "plugin/kernel_meta.hpp"

#include <kreg/abi.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg {

// Every way loading can fail has its own kind and a message that names the file.
class PluginLoadError : public std::runtime_error {
public:
    enum class Kind {
        not_found,
        not_shared_library,
        dlopen_failed,
        no_entry_point,
        null_descriptor,
        abi_mismatch,
        bad_descriptor
    };
    PluginLoadError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const noexcept { return kind_; }

private:
    Kind kind_;
};

// A loaded plugin. The library member is declared first so that it is destroyed last: nothing that
// came from the library (descriptor, kernel infos, instances) may outlive it.
class LoadedPlugin {
public:
    // Loads with RTLD_NOW | RTLD_LOCAL and validates the descriptor; throws PluginLoadError.
    static LoadedPlugin load(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return path_; }
    const kreg_plugin_descriptor& descriptor() const { return *descriptor_; }
    // Kernel infos normalised to this runner's struct layout (a plugin of an older minor version has
    // shorter structs; unknown trailing fields are zero).
    const std::vector<kreg_kernel_info>& kernels() const { return kernels_; }
    const kreg_kernel_info* find_kernel(const std::string& name) const;
    // Metadata as plain data (no availability reasons; the worker adds those).
    PluginInfo info() const;

private:
    LoadedPlugin() = default;
    boost::dll::shared_library library_;
    std::filesystem::path path_;
    const kreg_plugin_descriptor* descriptor_ = nullptr;
    std::vector<kreg_kernel_info> kernels_;
};

// The kernel's metadata; its unavailable_reason is set when this runner cannot run the kernel at all (an
// operation or only dtypes it does not know). The device's reasons are the worker's to add.
KernelMeta to_kernel_meta(const kreg_kernel_info& info);
// The operation's name in common/operations.def ("gemm", ...), or "unknown operation N".
std::string operation_name(kreg_operation op);
// Why this runner cannot run the kernel whatever the machine ("" when it can).
std::string runner_cannot_run(const kreg_kernel_info& info);

}  // namespace kreg
