#include "worker/worker_command.hpp"

#include "platform/file_io.hpp"
#include "sandbox/policy_json.hpp"
#include "worker/session.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

namespace kreg {

// `runner __worker [--sandbox POLICY_JSON] [--cuda-visible-devices UUID] --nonce N`: the worker process
// (see worker/session.hpp).
int worker_main(int argc, char** argv) {
    std::optional<SandboxPolicy> sandbox;
    std::string nonce;
    for (int i = 2; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (i + 1 >= argc || (flag != "--sandbox" && flag != "--nonce" && flag != "--cuda-visible-devices")) {
            std::cerr << "kreg worker: unexpected arguments\n";
            return 2;
        }
        if (flag == "--nonce") {
            nonce = argv[i + 1];
            continue;
        }
        if (flag == "--cuda-visible-devices") {
            // A lane of runner --devices: this worker sees one GPU, as device 0, whatever a plugin does.
            // Set before anything initialises CUDA, which reads it once.
            platform::set_environment("CUDA_VISIBLE_DEVICES", argv[i + 1]);
            continue;
        }
        try {
            sandbox = nlohmann::json::parse(argv[i + 1]).get<SandboxPolicy>();
        } catch (const std::exception& e) {
            std::cerr << "kreg worker: bad --sandbox policy: " << e.what() << "\n";
            return 2;
        }
    }
    if (nonce.empty()) {
        std::cerr << "kreg worker: no --nonce\n";
        return 2;
    }
    return run_worker(3, 4, nonce, sandbox);
}

}  // namespace kreg
