// A library built for another system (a student's Windows .dll, a macOS .dylib) is named for what it is,
// with what to build instead, wherever kreg meets it: --plugin, a plugin folder, the audit, a folder of
// submissions. Before, a .dll was "not a shared library (no ELF header)" from --plugin, passed over in
// silence in a plugin folder, and "neither a .so nor a folder" in grading, which left the student no row.
#include "audit/so_audit.hpp"
#include "common/library_format.hpp"
#include "grade/submission.hpp"
#include "plugin/discovery.hpp"
#include "plugin/loader.hpp"
#include "foreign_libraries.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace kreg {
namespace {

namespace fs = std::filesystem;

const test::ScratchRoot kScratch("kreg_foreign_library_test");

using test::macos_dylib_bytes;
using test::windows_dll_bytes;

fs::path write(const fs::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
}

std::string load_error(const fs::path& path) {
    try {
        LoadedPlugin::load(path);
    } catch (const PluginLoadError& e) {
        EXPECT_EQ(e.kind(), PluginLoadError::Kind::not_shared_library) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "loading " << path << " should have failed";
    return {};
}

TEST(LibraryFormat, TellsLinuxWindowsAndMacosLibrariesApartByTheirFirstBytes) {
    EXPECT_EQ(library_format_of(std::string_view("\x7f"
                                                 "ELF\x02\x01\x01",
                                                 7)),
              LibraryFormat::elf);
    EXPECT_EQ(library_format_of(windows_dll_bytes()), LibraryFormat::windows_pe);
    EXPECT_EQ(library_format_of("MZ"), LibraryFormat::windows_pe);  // a bare DOS header is still Windows
    EXPECT_EQ(library_format_of(macos_dylib_bytes()), LibraryFormat::macos_mach_o);
    EXPECT_EQ(library_format_of(std::string_view("\xfe\xed\xfa\xce", 4)), LibraryFormat::macos_mach_o);  // big-endian
    EXPECT_EQ(library_format_of(std::string_view("\xca\xfe\xba\xbe", 4)), LibraryFormat::macos_mach_o);  // universal
    EXPECT_EQ(library_format_of("#!/bin/sh\n"), LibraryFormat::other);
    EXPECT_EQ(library_format_of(""), LibraryFormat::other);
    EXPECT_EQ(library_format(kScratch.fresh_dir("absent") / "nothing.dll"), LibraryFormat::unreadable);
    EXPECT_TRUE(foreign_library_advice(LibraryFormat::elf).empty());
    EXPECT_TRUE(foreign_library_advice(LibraryFormat::other).empty());
    EXPECT_TRUE(has_foreign_library_suffix("x/alice.DLL"));
    EXPECT_TRUE(has_foreign_library_suffix("libk.dylib"));
    EXPECT_FALSE(has_foreign_library_suffix("k.so"));
}

TEST(ForeignLibrary, TheLoaderSaysAWindowsDllIsOneAndWhatToBuild) {
    const fs::path dir = kScratch.fresh_dir("loader");
    const std::string what = load_error(write(dir / "my_gemm.dll", windows_dll_bytes()));
    EXPECT_NE(what.find((dir / "my_gemm.dll").string() + ": a Windows library"), std::string::npos) << what;
    EXPECT_NE(what.find("build the plugin on Linux, or in WSL2, as a .so"), std::string::npos) << what;
    EXPECT_EQ(what.find("no ELF header"), std::string::npos) << what;
    // By its bytes, not its name: the same file renamed .so is still a Windows library.
    const std::string renamed = load_error(write(dir / "my_gemm.so", windows_dll_bytes()));
    EXPECT_NE(renamed.find("a Windows library"), std::string::npos) << renamed;
    const std::string mac = load_error(write(dir / "libmy_gemm.dylib", macos_dylib_bytes()));
    EXPECT_NE(mac.find("a macOS library"), std::string::npos) << mac;
    // Anything else keeps the plain message.
    const std::string text = load_error(write(dir / "notes.so", "not a library at all\n"));
    EXPECT_NE(text.find("not a shared library (no ELF header)"), std::string::npos) << text;
}

TEST(ForeignLibrary, APluginFolderNamesTheDllItDoesNotLoad) {
    const fs::path dir = kScratch.fresh_dir("folder");
    write(dir / "good.so",
          "\x7f"
          "ELF");
    write(dir / "alice.dll", windows_dll_bytes());
    write(dir / "bob.dylib", macos_dylib_bytes());
    write(dir / "empty.dll", "");
    write(dir / "README.txt", "notes");
    PluginSearch search;
    search.directories = {dir};
    std::vector<std::string> problems;
    const auto files = find_plugin_files(search, problems);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].filename(), "good.so");
    ASSERT_EQ(problems.size(), 3u) << ::testing::PrintToString(problems);  // not the README
    std::sort(problems.begin(), problems.end());
    EXPECT_NE(problems[0].find((dir / "alice.dll").string() + ": not loaded: a Windows library"), std::string::npos)
        << problems[0];
    EXPECT_NE(problems[1].find((dir / "bob.dylib").string() + ": not loaded: a macOS library"), std::string::npos)
        << problems[1];
    EXPECT_NE(problems[2].find("empty.dll: not loaded: named like another system's library"), std::string::npos)
        << problems[2];
}

TEST(ForeignLibrary, TheAuditRefusesADllSayingWhatItIs) {
    const AuditResult result = audit_shared_object_image(windows_dll_bytes(), "alice.dll", AuditPolicy{});
    EXPECT_FALSE(result.passed);
    ASSERT_EQ(result.findings.size(), 1u);
    EXPECT_NE(result.findings[0].message.find("a Windows library"), std::string::npos) << result.findings[0].message;
    EXPECT_NE(result.findings[0].message.find("as a .so"), std::string::npos) << result.findings[0].message;
}

TEST(ForeignLibrary, ASubmittedDllIsAStudentsSubmissionNotIgnored) {
    const fs::path dir = kScratch.fresh_dir("submissions");
    write(dir / "alice.dll", windows_dll_bytes());
    write(dir / "bob.so",
          "\x7f"
          "ELF");
    write(dir / "notes.txt", "x");
    std::vector<std::string> ignored;
    const auto found = find_submissions({}, dir, ignored);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].student, "alice");
    EXPECT_EQ(found[0].path, dir / "alice.dll");
    EXPECT_EQ(found[1].student, "bob");
    ASSERT_EQ(ignored.size(), 1u);
    EXPECT_NE(ignored[0].find("notes.txt"), std::string::npos) << ignored[0];
}

}  // namespace
}  // namespace kreg
