// The child of the Windows sweep test: what a worker does with one plugin, in-process, with kreg's own
// loader and CPU measurement (plugin/, pipeline/). One JSON line on stdout:
//   plugin_probe list <plugin.dll>                      {"plugin":name,"kernels":[...]} or {"error":...}
//   plugin_probe run <plugin.dll> <kernel> <m> <n> <k>  the Record of one job (common/job.hpp)
// A crash or a hang here is the parent's to see: this program does nothing to survive its plugin.
#include "common/job.hpp"
#include "pipeline/job_runner.hpp"
#include "platform/fault_watch.hpp"
#include "plugin/loader.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

namespace {

using namespace kreg;

int list(const std::string& path) {
    const LoadedPlugin plugin = LoadedPlugin::load(path);
    nlohmann::json kernels = nlohmann::json::array();
    for (const kreg_kernel_info& k : plugin.kernels()) kernels.push_back(k.name);
    std::cout << nlohmann::json{{"plugin", plugin.descriptor().plugin_name}, {"kernels", kernels}}.dump() << std::endl;
    return 0;
}

int run(const std::string& path, const std::string& kernel, int64_t m, int64_t n, int64_t k) {
    const LoadedPlugin plugin = LoadedPlugin::load(path);
    const kreg_kernel_info* info = plugin.find_kernel(kernel);
    if (info == nullptr) throw std::runtime_error("plugin " + path + " has no kernel '" + kernel + "'");
    Job job;
    job.id = 1;
    job.seed = 42;
    job.kernel = kernel;
    job.plugin_path = path;
    job.shape = {m, n, k};
    job.settings.warmup = 1;
    job.settings.repeats = 3;
    LoadedKernel loaded;
    loaded.info = info;
    loaded.plugin_name = plugin.descriptor().plugin_name;
    loaded.plugin_path = path;
    char message[1024] = {};
    if (info->create(&loaded.instance, message, sizeof message) != KREG_STATUS_OK || loaded.instance == nullptr)
        throw std::runtime_error(std::string("creation failed: ") + message);
    const Record record = run_cpu_gemm_job(job, loaded);
    info->destroy(loaded.instance);
    std::cout << nlohmann::json(record).dump() << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    platform::end_process_on_unhandled_fault();
    const std::string mode = argc > 2 ? argv[1] : "";
    try {
        if (mode == "list" && argc == 3) return list(argv[2]);
        if (mode == "run" && argc == 7)
            return run(argv[2], argv[3], std::stoll(argv[4]), std::stoll(argv[5]), std::stoll(argv[6]));
    } catch (const std::exception& e) {
        std::cout << nlohmann::json{{"error", e.what()}}.dump() << std::endl;
        return 1;
    }
    std::cerr << "usage: plugin_probe list <plugin> | run <plugin> <kernel> <m> <n> <k>\n";
    return 64;
}
