#include "audit/so_audit.hpp"

#include "audit/elf_dynamic.hpp"
#include "common/glob.hpp"
#include "common/library_format.hpp"
#include "platform/file_io.hpp"

#include <cstdint>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace kreg {
namespace {

const std::string* first_match(const std::vector<std::string>& patterns, const std::string& name) {
    for (const std::string& pattern : patterns)
        if (glob_match(pattern, name)) return &pattern;
    return nullptr;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// Names come from the file: anything but printable ASCII is shown as \xNN, so that results stay valid
// UTF-8 for JSON and cannot carry terminal escapes into a console or report. Applying it twice is harmless.
std::string printable(std::string_view raw) {
    std::string out;
    for (const char c : raw) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            out += c;
        } else {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            out += escaped;
        }
    }
    return out;
}

AuditFinding format_finding(const std::string& file, const std::string& message) {
    return {"format", printable(file), "elf", printable(message)};
}

// Names in a but not in b.
std::vector<std::string> missing_from(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::vector<std::string> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

std::string first_few(const std::vector<std::string>& names) {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < names.size() && i < 5; ++i) shown.push_back(printable(names[i]));
    return join(shown, ", ") + (names.size() > shown.size() ? ", ..." : "");
}

bool read_regular_file(const std::filesystem::path& path, std::string& bytes, std::string& error) {
    return platform::read_regular_file(path, kMaxAuditedFileBytes, bytes, error);
}

// The loader's view and the section headers' view must name the same libraries and imports: no linker makes
// them differ, so a difference is a finding.
void check_views_agree(const elf::DynamicView& loader, const elf::DynamicView& headers, const std::string& file,
                       std::vector<AuditFinding>& findings) {
    auto names = [](const std::vector<elf::NeededLibrary>& list) {
        std::vector<std::string> out;
        for (const auto& library : list) out.push_back(printable(library.name));
        return out;
    };
    if (names(loader.needed) != names(headers.needed))
        findings.push_back(format_finding(
            file, "the section headers and the dynamic segment list different libraries (" +
                      join(names(headers.needed), ", ") + " versus " + join(names(loader.needed), ", ") + ")"));
    std::set<std::string> loader_imports, header_imports;
    for (const auto& symbol : loader.imports) loader_imports.insert(symbol.name);
    for (const auto& symbol : headers.imports) header_imports.insert(symbol.name);
    const auto hidden = missing_from(loader_imports, header_imports);
    const auto extra = missing_from(header_imports, loader_imports);
    if (!hidden.empty())
        findings.push_back(format_finding(
            file, "the dynamic segment imports symbols that .dynsym does not list: " + first_few(hidden)));
    if (!extra.empty())
        findings.push_back(
            format_finding(file, ".dynsym lists imports that the dynamic segment does not: " + first_few(extra)));
}

AuditResult audit_image(std::string_view image, const std::string& file, const AuditPolicy& policy) {
    AuditResult result;
    // A library built for another system is said to be one, with what to build instead.
    if (const std::string advice = foreign_library_advice(library_format_of(image)); !advice.empty()) {
        result.findings.push_back(format_finding(file, advice));
        return result;
    }
    const elf::ElfDynamicReport report = elf::read_elf_dynamic(image);
    for (const std::string& problem : report.problems) result.findings.push_back(format_finding(file, problem));

    // The loader's view is the truth; the section headers' view is read too, and any difference between
    // the two (which no linker produces) is a finding. Both views' names are checked against the policy.
    const elf::DynamicView* loader = report.segments ? &*report.segments : nullptr;
    const elf::DynamicView* headers = report.sections ? &*report.sections : nullptr;
    const elf::DynamicView* primary = loader ? loader : headers;
    std::vector<elf::NeededLibrary> needed;
    std::map<std::string, AuditImport> imports;
    std::set<std::string> exports, search_paths;
    for (const elf::DynamicView* view : {loader, headers}) {
        if (!view) continue;
        for (const elf::NeededLibrary& library : view->needed) {
            const bool seen = std::any_of(needed.begin(), needed.end(), [&](const elf::NeededLibrary& n) {
                return n.name == library.name && n.tag == library.tag;
            });
            if (!seen) needed.push_back(library);
        }
        for (const elf::ImportedSymbol& symbol : view->imports)
            imports.emplace(symbol.name, AuditImport{symbol.name, symbol.version, symbol.version_library, symbol.weak});
        exports.insert(view->interposable_exports.begin(), view->interposable_exports.end());
        search_paths.insert(view->search_paths.begin(), view->search_paths.end());
    }
    if (loader && headers) check_views_agree(*loader, *headers, file, result.findings);
    if (!primary && result.findings.empty())
        result.findings.push_back(format_finding(file, "no dynamic section could be read"));

    // Some toolchains link libstdc++ statically into every shared object; its own code then imports
    // syscall (futexes) and the like. The policy still refuses those names (the copy is the student's
    // binary and cannot be told apart from their code), but the message says where they come from.
    const bool needs_libstdcxx = std::any_of(
        needed.begin(), needed.end(), [](const elf::NeededLibrary& n) { return n.name.rfind("libstdc++.so", 0) == 0; });
    const bool carries_libstdcxx =
        !needs_libstdcxx && std::any_of(exports.begin(), exports.end(), [](const std::string& n) {
            return n.rfind("_ZGTt", 0) == 0 || n.rfind("_ZNSt", 0) == 0 || n.rfind("__cxa_", 0) == 0;
        });
    const std::string static_runtime_note =
        carries_libstdcxx
            ? "; the plugin carries a static copy of libstdc++, which may import it itself: link libstdc++ "
              "dynamically (the kreg_add_plugin default)"
            : "";

    // Policies match the raw names; results and messages carry printable ones.
    for (const elf::NeededLibrary& library : needed) {
        const std::string name = printable(library.name);
        result.needed.push_back(name);
        const std::string how = library.tag == "DT_NEEDED" ? "needs " : "loads (" + library.tag + ") ";
        if (library.name.find('/') != std::string::npos)
            result.findings.push_back(
                {"library", name, "path", how + name + " by path (a plugin may only name libraries by soname)"});
        else if (!first_match(policy.allowed_libraries, library.name))
            result.findings.push_back(
                {"library", name, "not allowed", how + name + " (not allowed: no allowed library pattern matches)"});
    }
    for (const auto& [raw, symbol] : imports) {
        const std::string name = printable(raw);
        result.imported_symbols.push_back(name);
        result.imports.push_back({name, printable(symbol.version), printable(symbol.version_library), symbol.weak});
        if (carries_libstdcxx && first_match(policy.tolerated_with_static_libstdcxx, raw)) continue;
        const auto& own_imports = static_libstdcxx_imports();
        const bool from_runtime = std::find(own_imports.begin(), own_imports.end(), raw) != own_imports.end();
        if (const std::string* rule = first_match(policy.denied_symbols, raw))
            result.findings.push_back(
                {"symbol", name, *rule,
                 "imports " + name + " (denied: " + *rule + ")" + (from_runtime ? static_runtime_note : "")});
    }
    // A default-visibility definition is looked up like an import: the loader binds the plugin's own calls
    // to an earlier definition of the same name, such as the runner's cuBLAS.
    for (const std::string& raw : exports) {
        const std::string name = printable(raw);
        result.exported_symbols.push_back(name);
        if (const std::string* rule = first_match(policy.denied_symbols, raw))
            result.findings.push_back(
                {"symbol", name, *rule,
                 "exports " + name + ", which an already loaded library can interpose (denied: " + *rule + ")"});
    }
    for (const std::string& path : search_paths) result.search_paths.push_back(printable(path));
    result.passed = result.findings.empty();
    return result;
}

AuditResult internal_failure(const std::string& file, const char* what) {
    AuditResult result;
    result.findings.push_back(format_finding(file, std::string("the audit could not finish: ") + what));
    return result;
}

}  // namespace

AuditResult audit_shared_object_image(std::string_view image, const std::string& display_name,
                                      const AuditPolicy& policy) {
    try {
        return audit_image(image, display_name, policy);
    } catch (const std::exception& e) {  // std::bad_alloc in practice: the reader throws nothing else
        return internal_failure(display_name, e.what());
    }
}

AuditResult audit_shared_object(const std::filesystem::path& path, const AuditPolicy& policy) {
    try {
        std::string bytes, error;
        if (!read_regular_file(path, bytes, error)) {
            AuditResult result;
            result.findings.push_back(format_finding(path.string(), error));
            return result;
        }
        return audit_image(bytes, path.string(), policy);
    } catch (const std::exception& e) {
        return internal_failure(path.string(), e.what());
    }
}

nlohmann::json AuditResult::to_json() const {
    nlohmann::json findings_json = nlohmann::json::array();
    for (const AuditFinding& f : findings)
        findings_json.push_back({{"kind", f.kind}, {"item", f.item}, {"rule", f.rule}, {"message", f.message}});
    nlohmann::json imports_json = nlohmann::json::array();
    for (const AuditImport& i : imports)
        imports_json.push_back(
            {{"name", i.name}, {"version", i.version}, {"version_library", i.version_library}, {"weak", i.weak}});
    return {{"passed", passed},
            {"needed", needed},
            {"imported_symbols", imported_symbols},
            {"imports", imports_json},
            {"exported_symbols", exported_symbols},
            {"search_paths", search_paths},
            {"findings", findings_json},
            {"summary", summary()}};
}

std::string AuditResult::summary() const {
    if (passed)
        return "passed: needs " + std::to_string(needed.size()) + (needed.size() == 1 ? " library" : " libraries") +
               ", imports " + std::to_string(imported_symbols.size()) + " symbols";
    if (findings.empty()) return "not audited";
    std::vector<std::string> messages;
    for (const AuditFinding& f : findings) messages.push_back(f.message);
    return join(messages, "; ");
}

}  // namespace kreg
