#include "sandbox/sandboxed_exec.hpp"

#include "sandbox/policy_json.hpp"
#include "sandbox/sandbox.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

namespace kreg {

// `runner __sandboxed_exec --sandbox POLICY_JSON -- PROGRAM ARGS...`: a step of a submission's build
// (cmake, and through it the compilers), started confined by the grader (sandbox/confined_spawn.hpp),
// hardens itself with the policy (Landlock, rlimits, seccomp stage 1; fork and exec stay allowed) and
// becomes PROGRAM.
int sandboxed_exec_main(int argc, char** argv) {
    if (argc < 6 || std::string(argv[2]) != "--sandbox" || std::string(argv[4]) != "--") {
        std::cerr << "kreg: usage: runner __sandboxed_exec --sandbox POLICY_JSON -- PROGRAM ARGS...\n";
        return 126;
    }
    try {
        harden_before_load(nlohmann::json::parse(argv[3]).get<SandboxPolicy>());
    } catch (const std::exception& e) {
        std::cerr << "kreg: sandbox: " << e.what() << "\n";
        return 126;
    }
    ::execvp(argv[5], argv + 5);
    std::cerr << "kreg: cannot run " << argv[5] << ": " << std::strerror(errno) << "\n";
    return 127;
}

}  // namespace kreg
