// The sandbox where there is none (Windows): Linux's namespaces, seccomp, Landlock and cgroups have no counterpart
// in this build. Every entry point that would confine refuses with that reason (why_confinement_fails says it to
// `runner grade`, which then grades nobody), and a worker here is started unconfined only.
#include "sandbox/confined_spawn.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/memory_limit.hpp"
#include "sandbox/sandbox.hpp"
#include "sandbox/sandboxed_exec.hpp"

#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>

namespace kreg {
namespace fs = std::filesystem;
namespace {

constexpr const char* kNotHere =
    "this runner is built for Windows, and the confinement of untrusted code is Linux's (namespaces, seccomp, "
    "Landlock, cgroups): grade with the Linux runner, or in WSL2 (here, runner grade runs only a student's "
    "unconfined self-check of their own .dll: docs/WINDOWS.md)";

[[noreturn]] void refuse() { throw std::runtime_error(kNotHere); }

}  // namespace

SandboxReport harden_before_load(const SandboxPolicy&) { refuse(); }

void harden_after_load(const SandboxPolicy&, SandboxReport&) { refuse(); }

int landlock_abi() { return 0; }

LandlockOutcome apply_landlock(const SandboxPolicy&) { refuse(); }

int sandboxed_exec_main(int, char**) {
    std::fprintf(stderr, "kreg: %s\n", kNotHere);
    return 3;
}

std::string why_confinement_fails(const std::string&) { return kNotHere; }

bool confinement_built() { return false; }

ConfinedProcess ConfinedProcess::start(const Confinement&, const std::function<void(platform::ProcessId)>&) {
    refuse();
}
ConfinedProcess::ConfinedProcess(ConfinedProcess&&) noexcept {}
ConfinedProcess& ConfinedProcess::operator=(ConfinedProcess&&) noexcept { return *this; }
ConfinedProcess::~ConfinedProcess() = default;
ConfinedExit ConfinedProcess::kill_and_reap() { return {}; }
ConfinedExit ConfinedProcess::wait(double) { return {}; }

std::vector<std::string> confined_environment(const std::string&, const std::vector<std::string>&) { refuse(); }

const std::vector<std::string>& worker_environment_names() {
    static const std::vector<std::string> none;
    return none;
}

const std::vector<std::string>& build_environment_names() { return worker_environment_names(); }

// Scratch folders are plain temporary folders here (nothing confines what runs in them).
std::string make_scratch_dir(const std::string& base) {
    const fs::path parent = base.empty() ? fs::temp_directory_path() : fs::path(base);
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
        const fs::path dir = parent / ("kreg-scratch-" + std::to_string(random()));
        std::error_code ec;
        if (fs::create_directory(dir, ec)) return dir.string();
    }
    throw std::runtime_error("cannot make a scratch folder in " + parent.string());
}

std::string make_scratch_subdir(const std::string& scratch, const std::string& name) {
    const fs::path dir = fs::path(scratch) / name;
    fs::create_directories(dir);
    return dir.string();
}

void remove_scratch_dir(const std::string& path) {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
}

std::optional<WorkerCgroup> WorkerCgroup::create(uint64_t, uint64_t, std::string& why_not) {
    why_not = "cgroups are Linux's";
    return std::nullopt;
}
WorkerCgroup::WorkerCgroup(WorkerCgroup&& other) noexcept : path_(std::move(other.path_)) {}
WorkerCgroup& WorkerCgroup::operator=(WorkerCgroup&& other) noexcept {
    path_ = std::move(other.path_);
    return *this;
}
WorkerCgroup::~WorkerCgroup() = default;
bool WorkerCgroup::add(platform::ProcessId, std::string& why_not) {
    why_not = "cgroups are Linux's";
    return false;
}
bool WorkerCgroup::memory_limit_hit() const { return false; }
uint64_t WorkerCgroup::peak_bytes() const { return 0; }
void WorkerCgroup::kill_all() {}

bool looks_like_memory_limit(uint64_t, long) { return false; }

std::string memory_limit_reason(uint64_t limit_bytes, uint64_t) {
    return "memory limit of " + std::to_string(limit_bytes >> 20) + " MiB exceeded";
}

std::string describe_memory_limit_hit(uint64_t, const WorkerCgroup*, long) { return ""; }

}  // namespace kreg
