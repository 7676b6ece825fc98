// Static audit of a plugin .so before it is ever loaded: which libraries it needs and which symbols it
// imports, checked against a policy. The grader runs it in the parent process; it only reads the file
// (see audit/elf_dynamic.hpp for how defensively), so a malformed or malicious file gives a failed
// result with a "format" finding, never a crash or an exception.
//
// What it can and cannot catch: it sees every name the dynamic loader will bind for the object
// (DT_NEEDED and filter libraries, undefined dynamic symbols, and default-visibility definitions that
// the runner's own libraries could interpose). It cannot see code that reaches the kernel or another
// library without a dynamic symbol: an inline `syscall` instruction, function pointers found by parsing
// /proc/self/maps or the runner's memory, or cuBLAS kernels copied into the plugin's own fatbinary.
// Those are the sandbox's job (seccomp, no network, one visible GPU); this audit is the cheap first gate
// that turns the common cheats into a readable refusal before any plugin code runs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kreg {

struct AuditPolicy {
    std::vector<std::string> allowed_libraries;  // glob patterns on DT_NEEDED (and DT_AUXILIARY/DT_FILTER) names
    std::vector<std::string> denied_symbols;     // glob patterns on imported (and interposable exported) symbols
    // Imports tolerated only in a plugin that carries a static copy of libstdc++, whose own code imports
    // them (futexes, random_device). Empty by default: opt in where the toolchain links libstdc++
    // statically (the GPU image's does), and rely on the worker's seccomp filter for what a direct call
    // could do.
    std::vector<std::string> tolerated_with_static_libstdcxx;
};

// What a static copy of libstdc++ linked into a plugin imports by itself (futexes, random_device, ...):
// the only names for which the audit's message points at that copy, and what the grader's
// --allow-static-libstdcxx tolerates.
const std::vector<std::string>& static_libstdcxx_imports();

// The policy the grader applies to student plugins; each denied pattern's reason is in so_audit_policy.cpp.
AuditPolicy default_grading_policy();

struct AuditFinding {
    std::string kind;     // "library", "symbol" or "format"
    std::string item;     // the library, the symbol, or the file (format)
    std::string rule;     // the pattern that denied it, "not allowed" for a library no pattern allows, or "elf"
    std::string message;  // one sentence: "imports cublasSgemm_v2 (denied: cublas*)"
};

// An undefined dynamic symbol with its version, when the object names one ("memcpy@GLIBC_2.14").
struct AuditImport {
    std::string name;
    std::string version;          // empty when unversioned
    std::string version_library;  // the library the version belongs to; empty when unversioned
    bool weak = false;
};

struct AuditResult {
    bool passed = false;
    std::vector<std::string> needed;            // DT_NEEDED (then DT_AUXILIARY, DT_FILTER) names, file order
    std::vector<std::string> imported_symbols;  // sorted, each once
    std::vector<AuditFinding> findings;         // empty exactly when passed
    std::vector<AuditImport> imports;           // imported_symbols with versions, sorted by name
    std::vector<std::string> exported_symbols;  // default-visibility definitions (interposable), sorted
    std::vector<std::string> search_paths;      // "DT_RUNPATH: ..." / "DT_RPATH: ..." as recorded

    nlohmann::json to_json() const;
    // "passed: needs 3 libraries, imports 37 symbols" or the findings' messages joined by "; ".
    std::string summary() const;
};

// Audits the file at path. Never throws for bad input: an unreadable, special or oversized file gives a
// failed result with one format finding naming the path.
AuditResult audit_shared_object(const std::filesystem::path& path, const AuditPolicy& policy);

// The same audit of a file's bytes already in memory; display_name is used in messages.
AuditResult audit_shared_object_image(std::string_view image, const std::string& display_name,
                                      const AuditPolicy& policy);

// Largest file audit_shared_object reads (a CUDA plugin with a large fatbinary is tens of MiB).
inline constexpr std::uint64_t kMaxAuditedFileBytes = 1ull << 30;

}  // namespace kreg
