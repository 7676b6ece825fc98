// Building a submission from source where it cannot be confined (Windows): refused, with the reason
// (submission.cpp builds it on Linux, each step in its own namespaces).
#include "grade/submission.hpp"

namespace kreg {

BuildResult build_submission(const std::filesystem::path&, const std::filesystem::path&, const std::filesystem::path&,
                             double, const SandboxPolicy&, const std::string&) {
    BuildResult result;
    result.reason =
        "a submission is built from source inside Linux's confinement (namespaces, seccomp, Landlock); "
        "this runner is built for Windows: build the plugin yourself and pass the .dll";
    return result;
}

}  // namespace kreg
