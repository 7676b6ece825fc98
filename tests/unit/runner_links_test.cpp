// The runner does not link cuBLAS (issue 10, item 6): its GEMM ceilings come from the trusted cuBLAS plugin,
// over the plugin ABI. The worker is the same binary (`runner __worker`), so one file covers both. The
// libraries a binary needs are read with the project's own ELF reader (audit/elf_dynamic.hpp), as the
// grader reads a submission's; the cuBLAS plugin, which does need libcublas, shows the check can fail.
#include "audit/elf_dynamic.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kreg {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The DT_NEEDED (and filter) entries of an ELF file naming libcublas or libcublasLt.
std::vector<std::string> cublas_libraries_needed(const fs::path& path) {
    const std::string image = read_file(path);
    EXPECT_FALSE(image.empty()) << path << ": cannot be read";
    const elf::ElfDynamicReport report = elf::read_elf_dynamic(image);
    EXPECT_TRUE(report.header_ok) << path << ": not an ELF file the reader accepts";
    EXPECT_TRUE(report.segments.has_value()) << path << ": no dynamic segment";
    std::vector<std::string> cublas;
    if (!report.segments) return cublas;
    EXPECT_FALSE(report.segments->needed.empty()) << path << ": needs no library at all?";
    for (const auto& lib : report.segments->needed)
        if (lib.name.rfind("libcublas", 0) == 0) cublas.push_back(lib.tag + " " + lib.name);  // covers libcublasLt
    return cublas;
}

std::string joined(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

TEST(RunnerLinks, TheRunnerAndItsWorkerNeedNoCublasLibrary) {
    const std::vector<std::string> found = cublas_libraries_needed(KREG_RUNNER);
    EXPECT_TRUE(found.empty()) << KREG_RUNNER << " needs " << joined(found)
                               << ": the runner must not link cuBLAS (its ceilings come from the cuBLAS plugin)";
}

TEST(RunnerLinks, TheCheckSeesCublasWhereItIsLinked) {
    const fs::path plugin = fs::path(KREG_PLUGIN_DIR) / "cublas_reference.so";
    if (!fs::exists(plugin)) GTEST_SKIP() << plugin << " is not built (no CUDA toolkit)";
    const std::vector<std::string> found = cublas_libraries_needed(plugin);
    EXPECT_FALSE(found.empty()) << plugin << ": the cuBLAS plugin should need libcublas; the check reads nothing";
}

// Nothing under core/ (the libraries, the app, the SDK) includes a cuBLAS header.
TEST(RunnerLinks, NoCoreSourceIncludesCublas) {
    const std::regex include_cublas(R"(#\s*include\s*[<"]cublas)");
    std::vector<std::string> offenders;
    size_t scanned = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(KREG_SOURCE_DIR) / "core")) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() ||
            (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cu" && ext != ".cuh"))
            continue;
        ++scanned;
        if (std::regex_search(read_file(entry.path()), include_cublas)) offenders.push_back(entry.path().string());
    }
    EXPECT_GT(scanned, 50u) << "core/ sources not found under " << KREG_SOURCE_DIR;
    EXPECT_TRUE(offenders.empty()) << "includes a cuBLAS header: " << joined(offenders);
}

}  // namespace
}  // namespace kreg
