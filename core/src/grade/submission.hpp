// What a grading run is given: submission .so files, or one folder per student whose CMakeLists.txt
// is built against the installed kreg SDK — inside the sandbox, with a time limit, because a build
// runs the student's own CMake code.
#pragma once

#include "sandbox/sandbox.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kreg {

struct Submission {
    std::string student;         // from the file stem or folder name
    std::filesystem::path path;  // the .so, or the source folder
    bool needs_build = false;
};

// --submission FILE (repeatable) and --submissions DIR. In DIR: every *.so is a submission (and every .dll
// or .dylib: another system's build, which the audit refuses saying what it is, so the student has a row), every
// folder with a CMakeLists.txt is one to build; anything else is reported in `ignored`. Sorted by
// student; two submissions with one student id are an error (std::runtime_error naming both).
std::vector<Submission> find_submissions(const std::vector<std::filesystem::path>& files,
                                         const std::optional<std::filesystem::path>& directory,
                                         std::vector<std::string>& ignored);

struct BuildResult {
    bool ok = false;
    std::filesystem::path plugin;  // the built .so
    std::string reason;            // why not, when !ok
    std::string log_tail;          // the last lines of the build's output
    std::string first_error;       // the whole log's first compiler error (compiler_error.hpp), paths relative
    double seconds = 0;
};

// Configures and builds a copy of source_dir against the kreg package at kreg_prefix, in a scratch
// folder of its own, each step confined like a worker (its own namespaces and identity, an allow-listed
// environment, a memory cgroup where one can be made) and hardened by `runner_exe __sandboxed_exec`
// (Landlock: reads only the system, the copy and kreg_prefix, writes only the scratch folder; rlimits;
// seccomp stage 1, fork/exec allowed). Killed with everything it started when timeout_s (for both steps
// together) runs out. The log goes to build_dir/../<name>.build.log. The plugin is the one .so the build
// produced that exports the kreg entry point's name, copied into build_dir; the scratch folder is removed.
BuildResult build_submission(const std::filesystem::path& source_dir, const std::filesystem::path& build_dir,
                             const std::filesystem::path& kreg_prefix, double timeout_s, const SandboxPolicy& policy,
                             const std::string& runner_exe);

}  // namespace kreg
